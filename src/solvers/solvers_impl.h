/* Private pieces of the ODE solvers: the fixed-step stepper table (one
 * stepper per file, one const row each, as GSL's odeiv2 step types), the
 * solver handle, and the adaptive drivers' entry points. */
#ifndef BL_SOLVERS_IMPL_H
#define BL_SOLVERS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/solvers.h"

/* An explicit Runge-Kutta stepper. step() computes the stages exactly as the
 * method is defined (its operation order is the contract the NumPy oracle
 * repeats) and leaves stage i's state in Y[i*n..] and derivative in K[i*n..],
 * so the derivative code differentiates the very values the trajectory used.
 * a (stages x stages, row-major, lower triangular), b, c: the Butcher tableau,
 * used only by the derivative code. */
typedef struct bl_ode_stepper {
    const char *name;
    unsigned order;
    unsigned stages;
    int (*step)(const bl_ode_system *sys, const double *p, double t, double h, const double *y, double *y_next,
                double *Y, double *K);
    const double *a, *b, *c;
} bl_ode_stepper;

extern const bl_ode_stepper bl_ode_stepper_euler;
extern const bl_ode_stepper bl_ode_stepper_rk4;

/* NULL when name is not a fixed-step method. */
const bl_ode_stepper *bl_ode_stepper_find(const char *name);

struct bl_ode_solver {
    bl_ode_system sys;
    bl_ode_options opt;
    char method[32];
    const bl_ode_stepper *stepper; /* fixed-step methods, else NULL */
    bl_ode_stats stats;
    bl_ode_output_fn out_fn; /* bl_ode_solve_observe: the output sink (y_out is NULL then) */
    void *out_user;
};

/* Every driver hands the state at output time t[k] over through this: into
 * row k of y_out, or to bl_ode_solve_observe's callback. Fails, naming the
 * time, when the callback stops the solve. */
bl_status bl_ode_emit(bl_ode_solver *s, double *y_out, size_t k, double t, const double *y, bl_error *err);

/* Grid and initial-state checks shared by every method: t strictly
 * increasing and finite, y0 finite, f(t0, y0, p) finite. */
bl_status bl_ode_check_start(const bl_ode_solver *s, const double *t, size_t n_times, const double *y0,
                             const double *p, bl_error *err);

/* The fixed-step driver (fixed.c) and its derivatives (fixed_sens.c, adjoint.c). */
bl_status bl_ode_fixed_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                             double *y_out, double *sens_out, bl_error *err);
bl_status bl_ode_fixed_gradient(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                                bl_ode_objective_fn g, void *g_user, double *value, double *grad_p, double *grad_y0,
                                bl_error *err);

bl_status bl_ode_fixed_hessian(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                               bl_ode_objective_fn g, bl_ode_objective_hvp_fn g_hvp, void *g_user, double *value,
                               double *grad_p, double *hess_p, bl_error *err);

/* dopri5.c */
bl_status bl_ode_dopri5_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                              double *y_out, bl_error *err);

/* sundials.c: "cvode-bdf" (sens_out may be non-NULL) and "arkode-dopri5". */
bl_status bl_ode_sundials_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                                double *y_out, double *sens_out, bl_error *err);

#endif
