/* ODE solvers, their derivatives, and stochastic (SSA) replicate banks.
 *
 * A system is a plain C right-hand side f(t, y, p) with optional Jacobians;
 * the model-language compiler's expression graph plugs in behind the same
 * callbacks. Methods (docs/solvers.md):
 *   "euler", "rk4"      fixed steps on the output grid (`substeps` equal steps
 *                       per output interval); bit-identical to an independent
 *                       NumPy loop doing the same operations in the same order;
 *                       forward sensitivities and discrete-adjoint gradients
 *                       are the exact derivatives of the computed trajectory.
 *   "dopri5"            Dormand-Prince 5(4), SciPy RK45's step-size control and
 *                       dense output onto the grid; accepted/rejected counts.
 *   "cvode-bdf"         variable-order BDF through SUNDIALS CVODES (dense
 *                       Newton), forward sensitivities by CVODES.
 *   "arkode-dopri5"     ARKODE's explicit Dormand-Prince table: an independent
 *                       implementation of the same method as "dopri5".
 * Every function returns a bl_status and fills err with a message naming the
 * method, the time and the state or parameter index at fault. */
#ifndef BRAINLESSLAB_SOLVERS_H
#define BRAINLESSLAB_SOLVERS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dydt = f(t, y, p). Return 0 on success, nonzero to stop the solver (the
 * solver reports the time and the return value). */
typedef int (*bl_ode_rhs_fn)(void *user, double t, const double *y, const double *p, double *dydt);
/* Optional: J[i*n + j] = d f_i / d y_j (row-major n x n). */
typedef int (*bl_ode_jac_fn)(void *user, double t, const double *y, const double *p, double *jac);
/* Optional: P[i*n_params + k] = d f_i / d p_k (row-major n x n_params). */
typedef int (*bl_ode_pjac_fn)(void *user, double t, const double *y, const double *p, double *pjac);

/* Optional, for Hessians: the derivative in direction (dy, dp) of the
 * vector-Jacobian products w^T J and w^T P at (t, y, p):
 *   out_y[j] = sum_i w_i D J_ij[dy, dp],   out_p[k] = sum_i w_i D P_ik[dy, dp]
 * (second derivatives of f contracted with w; the compiler's symbolic
 * differentiation gives them). */
typedef int (*bl_ode_vjp_dir_fn)(void *user, double t, const double *y, const double *p, const double *w,
                                 const double *dy, const double *dp, double *out_y, double *out_p);

/* Optional, for the adjoint: the vector-Jacobian products with w,
 *   out_y[j] = sum_i w_i J_ij (written),   out_p[k] += sum_i w_i P_ik (added),
 * each sum over the rows i with w_i != 0 in increasing i, every term w_i J_ij
 * computed as J_ij * w_i: the dense products' operations in the dense
 * products' order, so the same bits from the structural nonzeros alone (a
 * term dropped is an exact zero, which changes no sum that starts at +0).
 * NULL: the adjoint forms the dense n x n jac and n x n_params pjac. */
typedef int (*bl_ode_vjp_fn)(void *user, double t, const double *y, const double *p, const double *w, double *out_y,
                             double *out_p);

typedef struct bl_ode_system {
    size_t n_states;
    size_t n_params;
    bl_ode_rhs_fn rhs;
    bl_ode_jac_fn jac;   /* NULL: CVODE differences it; the fixed-step derivatives need it */
    bl_ode_pjac_fn pjac; /* NULL: as jac */
    void *user;
    bl_ode_vjp_dir_fn vjp_dir; /* NULL: no Hessians */
    bl_ode_vjp_fn vjp;         /* NULL: dense jac and pjac in the adjoint */
} bl_ode_system;

typedef struct bl_ode_options {
    const char *method;  /* "euler", "rk4", "dopri5", "cvode-bdf", "arkode-dopri5", "arkode-rk4", "arkode-euler" */
    unsigned substeps;   /* fixed-step methods: equal steps per output interval, >= 1 */
    double rtol, atol;   /* adaptive methods (default 1e-6, 1e-9) */
    double first_step;   /* adaptive: 0 = automatic (SciPy's select_initial_step for dopri5) */
    double max_step;     /* adaptive: 0 = unbounded */
    uint64_t max_steps;  /* adaptive: step attempts before "step limit reached" (default 100000) */
} bl_ode_options;

BL_API void bl_ode_options_default(bl_ode_options *opt);

/* 1 when method takes substeps equal steps per output interval (euler, rk4,
 * and ARKODE's tables of the same methods, arkode-euler and arkode-rk4), 0
 * for the adaptive methods and unknown names. */
BL_API int bl_ode_method_fixed_step(const char *method);

/* What a solve did: the record states method, tolerances and steps. */
typedef struct bl_ode_stats {
    char method[32];
    double rtol, atol;         /* 0 for fixed-step methods */
    uint64_t steps_accepted;   /* fixed-step: every step */
    uint64_t steps_rejected;   /* error-test failures */
    uint64_t rhs_evals;        /* calls of f made by the method (not the t0 finiteness check) */
    uint64_t jac_evals;
    uint64_t nonlinear_failures; /* cvode-bdf: Newton convergence failures */
    uint64_t stiffness_flags;  /* dopri5: steps where Hairer's test saw |h*lambda| > 3.25 */
    double h_last;             /* last step size taken */
} bl_ode_stats;

typedef struct bl_ode_solver bl_ode_solver;

/* Check the system and options (method known, sizes, tolerances) and keep a
 * copy of both; the system's user pointer must outlive the solver. */
BL_API bl_status bl_ode_solver_create(const bl_ode_system *sys, const bl_ode_options *opt, bl_ode_solver **out,
                                      bl_error *err);
BL_API void bl_ode_solver_destroy(bl_ode_solver *s);

/* Integrate from t[0] to t[n_times-1] (t strictly increasing), writing y at
 * every t[k] into y_out[k*n + i]; y_out[0..n) = y0. */
BL_API bl_status bl_ode_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                              double *y_out, bl_error *err);

/* Called with the state y at output time t[k], k = 0..n_times-1 in order; y
 * is valid only during the call. A nonzero return stops the solve. */
typedef int (*bl_ode_output_fn)(void *user, size_t k, double t, const double *y);

/* As bl_ode_solve, but instead of writing the state history, hands the state
 * at each output time to out as the solve passes it, so that observations can
 * be computed as the run goes with no history kept. The steps are those of
 * bl_ode_solve on the same grid, and the states bit for bit: the fixed-step
 * driver and the SUNDIALS methods hand over what they would have written;
 * dopri5 evaluates its dense output at the grid points each accepted step
 * covers, as before (the output grid never changes its mesh). Memory beyond
 * the method's work space: none (dopri5, fixed-step) or one state. */
BL_API bl_status bl_ode_solve_observe(bl_ode_solver *s, const double *t, size_t n_times, const double *y0,
                                      const double *p, bl_ode_output_fn out, void *user, bl_error *err);

/* As bl_ode_solve, plus the parameter sensitivities
 * sens_out[(k*n + i)*n_params + j] = d y_i(t_k) / d p_j. Fixed-step methods:
 * the exact forward derivative of the computed trajectory (needs jac, pjac);
 * cvode-bdf: CVODES simultaneous corrector (jac/pjac if given, else CVODES's
 * difference quotients). */
BL_API bl_status bl_ode_solve_sens(bl_ode_solver *s, const double *t, size_t n_times, const double *y0,
                                   const double *p, double *y_out, double *sens_out, bl_error *err);

/* A scalar objective L = sum_k g(k, t_k, y(t_k)); g returns its value and
 * dg/dy (n values) for output point k. */
typedef int (*bl_ode_objective_fn)(void *user, size_t k, double t, const double *y, double *value, double *dvalue_dy);

/* Fixed-step methods: L and its gradient by the discrete adjoint (the exact
 * derivative of the computed trajectory, reverse sweep over stored step
 * states). grad_p: n_params values; grad_y0: n values or NULL. Needs jac, pjac. */
BL_API bl_status bl_ode_gradient(bl_ode_solver *s, const double *t, size_t n_times, const double *y0,
                                 const double *p, bl_ode_objective_fn g, void *g_user, double *value, double *grad_p,
                                 double *grad_y0, bl_error *err);

/* d2g/dy2 (at output point k) applied to dy, into out (n values). */
typedef int (*bl_ode_objective_hvp_fn)(void *user, size_t k, double t, const double *y, const double *dy,
                                       double *out);

/* Fixed-step methods: L, its gradient and its Hessian with respect to the
 * parameters (hess_p: n_params x n_params, row-major) by forward over adjoint:
 * one tangent sweep and one differentiated adjoint sweep per parameter, so
 * for small parameter counts. g_hvp NULL: g is linear in y. Needs jac, pjac
 * and vjp_dir. */
BL_API bl_status bl_ode_hessian(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                                bl_ode_objective_fn g, bl_ode_objective_hvp_fn g_hvp, void *g_user, double *value,
                                double *grad_p, double *hess_p, bl_error *err);

/* The statistics of the last solve. */
BL_API void bl_ode_solver_stats(const bl_ode_solver *s, bl_ode_stats *out);

/* Built-in systems (the oracles' and the protocol's fixtures):
 *   "exponential"  dy_i/dt = -p_i y_i            (n states, n params; n given)
 *   "vdp"          Van der Pol, p = {mu}         (2 states)
 *   "robertson"    Robertson's kinetics, p = {k1, k2, k3} (3 states)
 *   "hier"         G groups of S local stages (docs/solvers.md), independent
 *                  or coupled through a G x G matrix: name "hier-g4-s2",
 *                  "hier-g16-s8-coupled", ... ; n and params fixed by the name.
 * n_hint: the state count for "exponential" (ignored otherwise). The system's
 * user data is owned by the handle: free with bl_ode_builtin_destroy. */
typedef struct bl_ode_builtin bl_ode_builtin;
BL_API bl_status bl_ode_builtin_create(const char *name, size_t n_hint, bl_ode_builtin **out, bl_error *err);
BL_API void bl_ode_builtin_destroy(bl_ode_builtin *b);
BL_API const bl_ode_system *bl_ode_builtin_system(const bl_ode_builtin *b);
/* The fixture's reference parameters (n_params values) and initial state. */
BL_API const double *bl_ode_builtin_params(const bl_ode_builtin *b);
BL_API const double *bl_ode_builtin_y0(const bl_ode_builtin *b);

/* ---- Stochastic simulation (SSA) ----------------------------------------
 * Reactions change integer species counts by their stoichiometry. Propensities
 * are mass action (rate * prod_s C(x_s, order_s)) or a callback. */
typedef int (*bl_ssa_propensity_fn)(void *user, double t, const int64_t *x, double *a);

typedef struct bl_ssa_system {
    size_t n_species;
    size_t n_reactions;
    const int64_t *change;      /* n_reactions x n_species: the count change when a reaction fires */
    const int64_t *order;       /* mass action: n_reactions x n_species reactant orders (0..3) */
    const double *rate;         /* mass action: n_reactions rate constants (>= 0) */
    bl_ssa_propensity_fn propensity; /* non-NULL: used instead of mass action; called from several
                                        threads at once (one replicate each), so it must be reentrant */
    void *user;
} bl_ssa_system;

typedef struct bl_ssa_options {
    const char *method;  /* "direct" (Gillespie, exact) or "tau-leap" (approximate) */
    double tau;          /* tau-leap: the leap (> 0) */
    uint64_t seed;       /* the bank's stream (docs/streams.md, "SSA replicates") */
    uint64_t max_events; /* per replicate: events (direct) or leaps before "event limit"; default 10^8 */
    int threads;         /* 0 = every core */
} bl_ssa_options;

BL_API void bl_ssa_options_default(bl_ssa_options *opt);

typedef struct bl_ssa_model bl_ssa_model;
BL_API bl_status bl_ssa_model_create(const bl_ssa_system *sys, bl_ssa_model **out, bl_error *err);
BL_API void bl_ssa_model_destroy(bl_ssa_model *m);

/* Replicates first_replicate .. first_replicate+n_replicates-1 from x0 at
 * t[0] to t[n_times-1]; out[(r*n_times + k)*n_species + s] = count of s at
 * t[k] in replicate r (relative to first). Replicate r's draws depend only on
 * (seed, first_replicate + r): a replicate is the same in every bank size and
 * thread count. events: n_replicates counts (events or leaps), may be NULL. */
BL_API bl_status bl_ssa_run(const bl_ssa_model *m, const bl_ssa_options *opt, const int64_t *x0, const double *t,
                            size_t n_times, uint64_t first_replicate, size_t n_replicates, int64_t *out,
                            uint64_t *events, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
