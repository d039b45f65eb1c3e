/* The "ode" runner: solve the plan's system on its grid and keep the state
 * history on the grid (t.npy, y.npy, and sensitivities.npy when asked),
 * with summary.json stating the method, tolerances, accepted and rejected
 * steps, and what was retained and the memory it took. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/record.h"
#include "brainlesslab/solvers.h"
#include "experiment/solvers_run.h"
#include "experiment/xp_impl.h"
#include "plan/plan_solvers.h"

const char *bl_xp_solver_record_dir(const void *r)
{
    return ((const solver_result *)r)->dir;
}
void bl_xp_solver_print(const void *r, FILE *f)
{
    fprintf(f, "%s; record: %s\n", ((const solver_result *)r)->line, ((const solver_result *)r)->dir);
}
void bl_xp_solver_destroy(void *r)
{
    free(r);
}

static const char *const ode_artifacts[] = {"t.npy", "y.npy", "summary.json", NULL};
static const char *const ode_sens_artifacts[] = {"t.npy", "y.npy", "sensitivities.npy", "summary.json", NULL};

bl_status bl_xp_ode_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_ode *s = bl_pk_spec(plan);
    const size_t n = s->n_states, np = s->n_params, nt = s->n_times;
    solver_result *r = calloc(1, sizeof *r);
    double *y = calloc(nt * n, sizeof *y), *S = s->sensitivities ? calloc(nt * n * (np ? np : 1), sizeof *S) : NULL;
    bl_ode_builtin *b = NULL;
    bl_ode_solver *solver = NULL;
    bl_record *rec = NULL;
    bl_status st = BL_OK;
    if (!r || !y || (s->sensitivities && !S)) {
        st = bl_fail(err, BL_ERR_NOMEM, "ode: out of memory for %zu x %zu values", nt, n);
        goto out;
    }
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = s->method;
    o.substeps = (unsigned)s->substeps;
    o.rtol = s->rtol;
    o.atol = s->atol;
    o.max_steps = (uint64_t)s->max_steps;
    if ((st = bl_ode_builtin_create(s->system, (size_t)s->states, &b, err)) ||
        (st = bl_ode_solver_create(bl_ode_builtin_system(b), &o, &solver, err)))
        goto out;
    if ((st = bl_xp_reserve(plan, opt->root, &rec, err)))
        goto out;
    snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
    st = bl_xp_protect(rec, opt, 0, err);
    if (!st)
        st = bl_record_bind(rec, bl_plan_hash(plan), s->sensitivities ? ode_sens_artifacts : ode_artifacts,
                            s->sensitivities ? 4 : 3, err);
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    if (!st)
        st = s->sensitivities ? bl_ode_solve_sens(solver, s->t, nt, s->y0, s->p, y, S, err)
                              : bl_ode_solve(solver, s->t, nt, s->y0, s->p, y, err);
    bl_ode_stats so;
    bl_ode_solver_stats(solver, &so);
    if (!st) {
        const uint64_t shape_t[1] = {nt}, shape_y[2] = {nt, n}, shape_s[3] = {nt, n, np};
        st = bl_xp_write_npy(rec, "t.npy", BL_DTYPE_FLOAT64, 1, shape_t, s->t, err);
        if (!st)
            st = bl_xp_write_npy(rec, "y.npy", BL_DTYPE_FLOAT64, 2, shape_y, y, err);
        if (!st && S)
            st = bl_xp_write_npy(rec, "sensitivities.npy", BL_DTYPE_FLOAT64, 3, shape_s, S, err);
    }
    if (!st) {
        const int fixed = !strcmp(s->method, "euler") || !strcmp(s->method, "rk4");
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "system", s->system);
        cJSON_AddStringToObject(j, "method", so.method);
        cJSON_AddStringToObject(j, "mesh", fixed ? "fixed: substeps equal steps per output interval"
                                                 : "adaptive (a changed mesh is a different task)");
        if (fixed) {
            cJSON_AddNumberToObject(j, "substeps", (double)s->substeps);
        } else {
            cJSON_AddNumberToObject(j, "rtol", so.rtol);
            cJSON_AddNumberToObject(j, "atol", so.atol);
        }
        cJSON_AddNumberToObject(j, "steps_accepted", (double)so.steps_accepted);
        cJSON_AddNumberToObject(j, "steps_rejected", (double)so.steps_rejected);
        cJSON_AddNumberToObject(j, "rhs_evals", (double)so.rhs_evals);
        cJSON_AddNumberToObject(j, "jac_evals", (double)so.jac_evals);
        cJSON_AddNumberToObject(j, "nonlinear_failures", (double)so.nonlinear_failures);
        cJSON_AddNumberToObject(j, "stiffness_flags", (double)so.stiffness_flags);
        cJSON_AddNumberToObject(j, "h_last", so.h_last);
        cJSON *ret = cJSON_AddObjectToObject(j, "retained");
        const double values = (double)(nt * n) * (1.0 + (S ? (double)np : 0.0));
        cJSON_AddStringToObject(ret, "what", S ? "the state and its parameter sensitivities at every output time"
                                               : "the state at every output time (the history on the grid)");
        cJSON_AddNumberToObject(ret, "values", values);
        cJSON_AddNumberToObject(ret, "bytes", 8.0 * values);
        st = bl_xp_write_json(rec, "summary.json", j, err);
        snprintf(r->line, sizeof r->line, "ode %s %s: %zu outputs x %zu states, %" PRIu64 " steps accepted, %" PRIu64
                 " rejected", s->system, so.method, nt, n, so.steps_accepted, so.steps_rejected);
    }
    st = bl_xp_end(rec, NULL, st, err);
out:
    bl_record_destroy(rec);
    bl_ode_solver_destroy(solver);
    bl_ode_builtin_destroy(b);
    free(y);
    free(S);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
