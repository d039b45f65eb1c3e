/* The plan sections of the solver operations: `operation = "ode"` ([ode],
 * src/plan/plan_ode.c) and `operation = "ssa"` ([ssa], src/plan/plan_ssa.c).
 * Their rows are in src/experiment/operations.c, their runners in
 * src/experiment/ode_run.c and ssa_run.c (docs/solvers.md, "Plans"). */
#ifndef BL_PLAN_SOLVERS_H
#define BL_PLAN_SOLVERS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/odelang.h"
#include "plan/plan_op.h"

typedef struct bl_pk_ode {
    char system[64];
    int64_t states; /* "exponential" only; else the system's */
    char method[32];
    int64_t substeps, max_steps;
    double rtol, atol;
    int sensitivities;
    double *t, *y0, *p; /* resolved: the grid, the initial state, the parameters */
    size_t n_times, n_states, n_params;
    /* A system in the model language (`equations`, or system = "hierarchical"
     * generated as text); NULL equations: a built-in system. */
    char *equations;
    char **param_names, **state_names; /* n_params, n_states */
    size_t n_observe;
    char **observe_names, **observe_exprs;
    int retain_observations; /* retain = "observations": no state history in the record */
    int64_t groups, stages;  /* system = "hierarchical" */
    int coupled;
    /* [ode.gradient]: the gradient (and Hessian) of a scalar objective
     * L = sum over the chosen output times of g(t_k, y(t_k)), where g is
     * `objective` (an expression of t and the states; language systems) or
     * w . y for `weights` (n_states values). */
    int gradient, hessian, final_only; /* final_only: at = "final" (else every output time) */
    char *objective;                   /* NULL: weights */
    double *weights;                   /* n_states, or NULL */
    char gradient_method[40];          /* "discrete adjoint" or "cvodes forward sensitivities" */
} bl_pk_ode;

typedef struct bl_pk_ssa {
    char method[16];
    double tau;
    uint64_t seed;
    int64_t replicates, max_events;
    size_t n_species, n_reactions, n_times;
    char (*species)[64];
    int64_t *x0, *change, *order; /* change, order: n_reactions x n_species */
    double *rate, *t;
} bl_pk_ssa;

bl_status bl_pk_op_load_ode(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                            const char *plan_dir, bl_plan *plan);
void bl_pk_op_free_ode(bl_plan *plan);
char *bl_pk_op_render_ode(const bl_plan *plan, int pretty, int full);
void bl_pk_op_estimate_ode(const bl_plan *plan, bl_plan_estimate_t *out);

/* The plan's system: a built-in (*b) or compiled from the language (*l). */
bl_status bl_pk_ode_system(const bl_pk_ode *s, bl_ode_builtin **b, bl_ode_lang **l, bl_error *err);

/* The objective of [ode.gradient] `objective = "..."`: the plan's equations
 * with one more line `dL_objective/dt = (objective) : 1`, compiled, so that
 * the compiler's symbolic derivatives give dg/dy (the Jacobian's last row)
 * and d2g/dy2 (its second derivatives). State n_states of *aux is the
 * objective's; it must read no parameter (refused). */
bl_status bl_pk_ode_objective(const bl_pk_ode *s, bl_ode_lang **aux, bl_error *err);

bl_status bl_pk_op_load_ssa(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                            const char *plan_dir, bl_plan *plan);
void bl_pk_op_free_ssa(bl_plan *plan);
char *bl_pk_op_render_ssa(const bl_plan *plan, int pretty, int full);
void bl_pk_op_estimate_ssa(const bl_plan *plan, bl_plan_estimate_t *out);

/* A list of numbers at key (integers accepted), at most max; *out malloc'd. */
bl_status bl_pk_numbers(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, const char *key,
                        int required, size_t max, double **out, size_t *n);
/* The output grid of a section: `t = [...]` (strictly increasing) or
 * `t_end` with `outputs` (t_k = t_end k / (outputs - 1), from 0). */
bl_status bl_pk_grid(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, double **t, size_t *n);

#endif
