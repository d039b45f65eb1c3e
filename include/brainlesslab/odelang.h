/* ODE systems written in the model language (docs/solvers.md, "Systems in
 * the model language").
 *
 *   dx/dt = -k * x + u : 1
 *   dy/dt = x - y      : 1
 *
 * with named parameters (the run-time inputs the sensitivities, adjoint
 * gradients and Hessians are taken with respect to), a named initial state
 * and observation expressions. Time is dimensionless; the only built-in name
 * is t. The compiler gives the right-hand side, its Jacobian d f / d y, its
 * parameter Jacobian d f / d p and the second derivatives the Hessian needs,
 * all by symbolic differentiation of the expression graph (eq_diff.c),
 * lowered to instruction lists and run by the interpreter; they plug into
 * the solvers through bl_ode_system, so every method runs them.
 *
 * A handle evaluates through one register file: its callbacks are not
 * reentrant (one solve at a time per handle). */
#ifndef BRAINLESSLAB_ODELANG_H
#define BRAINLESSLAB_ODELANG_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/eqmodel.h"
#include "brainlesslab/error.h"
#include "brainlesslab/export.h"
#include "brainlesslab/solvers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_ode_lang_source {
    const char *equations; /* "dx/dt = ... : 1" lines and subexpressions "a = ... : 1" */
    size_t n_params;       /* parameters, in the order of the parameter vector */
    const char *const *param_names;
    const double *param_values; /* reference values (the default of a plan) */
    size_t n_init;              /* initial state by name; states not named start at 0 */
    const char *const *init_names;
    const double *init_values;
    size_t n_observe; /* observations: name = expression of t, states, parameters */
    const char *const *observe_names;
    const char *const *observe_exprs;
} bl_ode_lang_source;

typedef struct bl_ode_lang bl_ode_lang;

/* Every failure names the equation line and term (unknown symbol, a
 * parameter also declared as an equation, dimension mismatch, an
 * observation that is a condition). */
BL_API bl_status bl_ode_lang_compile(const bl_ode_lang_source *src, bl_ode_lang **out, bl_error *err);
BL_API void bl_ode_lang_destroy(bl_ode_lang *o);

/* Generated C (docs/solvers.md, "Generated C for ODE systems"): the RHS,
 * Jacobian, parameter-Jacobian, observation and second-derivative programs
 * written out as C, compiled by the system compiler, cached by SHA-256 and
 * loaded, as the neuron models' (bl_eq_model_codegen: same cache, flags,
 * BL_EQ_JIT=0 and BL_EQ_EXEC_* semantics). Every callback of the system then
 * runs the generated functions; the results are the interpreter's bits.
 * Without a call the interpreter runs. */
BL_API bl_status bl_ode_lang_codegen(bl_ode_lang *o, bl_eq_exec how, bl_error *err);
BL_API int bl_ode_lang_compiled(const bl_ode_lang *o);
BL_API const char *bl_ode_lang_exec_note(const bl_ode_lang *o);
/* The provenance as JSON (exec, compiler, flags, source_sha256, cache,
 * compile_ms...: what a record keeps as model_codegen). Caller frees. */
BL_API char *bl_ode_lang_codegen_json(const bl_ode_lang *o);
BL_API const char *bl_ode_lang_generated_source(const bl_ode_lang *o);

/* The system (rhs, jac, pjac, vjp_dir); its user pointer is the handle. */
BL_API const bl_ode_system *bl_ode_lang_system(const bl_ode_lang *o);
BL_API size_t bl_ode_lang_n_states(const bl_ode_lang *o);
BL_API size_t bl_ode_lang_n_params(const bl_ode_lang *o);
BL_API size_t bl_ode_lang_n_observe(const bl_ode_lang *o);
BL_API const char *bl_ode_lang_state_name(const bl_ode_lang *o, size_t i);
BL_API const char *bl_ode_lang_param_name(const bl_ode_lang *o, size_t i);
BL_API const char *bl_ode_lang_observe_name(const bl_ode_lang *o, size_t i);
/* Reference parameters (n_params) and initial state (n_states). */
BL_API const double *bl_ode_lang_params(const bl_ode_lang *o);
BL_API const double *bl_ode_lang_y0(const bl_ode_lang *o);
/* Structural nonzeros of d f / d y and d f / d p. */
BL_API size_t bl_ode_lang_jac_nnz(const bl_ode_lang *o);
BL_API size_t bl_ode_lang_pjac_nnz(const bl_ode_lang *o);

/* The observations at (t, y, p) into obs (n_observe values). */
BL_API void bl_ode_lang_observe(bl_ode_lang *o, double t, const double *y, const double *p, double *obs);

/* f(t, y, p) finite, else an error naming the state, its equation line and
 * the value: what a solve would refuse, said in the language's terms. */
BL_API bl_status bl_ode_lang_check_finite(bl_ode_lang *o, double t, const double *y, const double *p,
                                          bl_error *err);

/* The compiled graph's size (the protocol's "graph size"): expression nodes
 * of the model, and instructions of the RHS, Jacobian, parameter Jacobian,
 * second-derivative and observation programs. */
typedef struct bl_ode_lang_size {
    size_t nodes, rhs, jac, pjac, second, observe;
} bl_ode_lang_size;
BL_API void bl_ode_lang_sizes(const bl_ode_lang *o, bl_ode_lang_size *out);

/* A solver's message about "state N" made to name it: appends "; state N
 * is x (equations line L: 'dx/dt = ...')" to err->message when it names a
 * state of this system. */
BL_API void bl_ode_lang_explain(const bl_ode_lang *o, bl_error *err);

/* The compiled right-hand side, Jacobian and parameter Jacobian as text
 * (one fully parenthesised expression per entry): what the derivatives are.
 * Caller frees. */
BL_API char *bl_ode_lang_describe(const bl_ode_lang *o);

/* The protocol's synthetic hierarchical fixture as model-language text: G
 * groups of S local stages, independent or coupled (docs/solvers.md gives
 * the equations). States x_g_s, parameters k_g_s (G S) then u_g (G), in that
 * order, with the fixture's reference values and initial state. The strings
 * live in *src until bl_ode_lang_fixture_free. */
BL_API bl_status bl_ode_lang_hierarchical(unsigned groups, unsigned stages, int coupled, bl_ode_lang_source *src,
                                          bl_error *err);
BL_API void bl_ode_lang_fixture_free(bl_ode_lang_source *src);

/* The resolved [ode] section of a loaded plan (`operation = "ode"`), as the
 * runner sees it: what Python's solve_ode(plan=...) runs. Pointers live as
 * long as the plan. */
typedef struct bl_plan bl_plan;
typedef struct bl_ode_plan_view {
    const char *system;    /* a built-in's name, "hierarchical" or "equations" */
    const char *equations; /* the language text (generated for "hierarchical"); NULL for a built-in */
    size_t states_hint;    /* "exponential": its state count */
    const char *method;
    unsigned substeps;
    double rtol, atol;
    uint64_t max_steps;
    int sensitivities, retain_observations;
    const double *t, *y0, *p;
    size_t n_times, n_states, n_params, n_observe;
    const char *const *param_names; /* NULL for a built-in */
    const char *const *observe_names;
    const char *const *observe_exprs;
    /* [ode.gradient]: asked (then bl_plan_ode_gradient gives it), with the
     * Hessian; fixed_step: the method is euler or rk4 (d L / d y0 and the
     * Hessian exist; cvode-bdf's gradient contracts the sensitivities). */
    int gradient, hessian, fixed_step;
} bl_ode_plan_view;
BL_API bl_status bl_plan_ode(const bl_plan *plan, bl_ode_plan_view *out, bl_error *err);

/* The derivatives of a loaded ode plan's [ode.gradient] objective, as
 * `brainlesslab run` records them (gradient.npy, gradient_y0.npy,
 * hessian.npy, objective.json's value; the same code), on the plan's grid
 * from y0 with parameters p (the plan's, or others of the same sizes).
 * solver: made for the plan's system and method. euler, rk4: the discrete
 * adjoint re-solves the trajectory (y, S unused), grad_y0 (n_states) may be
 * given, hess (n_params^2) too, even when the plan does not ask for it.
 * cvode-bdf: y (n_times x n_states) and S (its sensitivities, n_times x
 * n_states x n_params, bl_ode_solve_sens) are contracted with dg/dy;
 * grad_y0 and hess must be NULL. grad_p has n_params values. */
BL_API bl_status bl_plan_ode_gradient(const bl_plan *plan, bl_ode_solver *solver, const double *y0, const double *p,
                                      const double *y, const double *S, double *value, double *grad_p,
                                      double *grad_y0, double *hess, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
