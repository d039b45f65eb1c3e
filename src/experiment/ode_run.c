/* The "ode" runner: solve the plan's system on its grid and keep the state
 * history on the grid (t.npy, y.npy, and sensitivities.npy when asked), the
 * observations (observations.npy; with retain = "observations" no y.npy),
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
#include "solvers/solvers_impl.h"

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

/* Observations as the run goes: fixed-step methods without sensitivities
 * solve one output interval at a time from the state reached (the fixed-step
 * driver's steps depend only on the interval and its start, so the
 * trajectory is bit for bit the whole-grid one) and keep two states; the
 * adaptive drivers write the whole grid, so there the history is held during
 * the solve and only the observations are written. */
static bl_status solve_streaming(bl_ode_solver *solver, const bl_pk_ode *s, bl_ode_lang *l, double *obs,
                                 bl_ode_stats *sum, bl_error *err)
{
    const size_t n = s->n_states, no = s->n_observe;
    double *y2 = malloc(3 * n * sizeof *y2);
    if (!y2)
        return bl_fail(err, BL_ERR_NOMEM, "ode: out of memory for %zu states", n);
    double *cur = y2 + 2 * n;
    memcpy(cur, s->y0, n * sizeof *cur);
    bl_ode_lang_observe(l, s->t[0], cur, s->p, obs);
    bl_status st = BL_OK;
    memset(sum, 0, sizeof *sum);
    for (size_t k = 0; k + 1 < s->n_times && !st; k++) {
        st = bl_ode_solve(solver, s->t + k, 2, cur, s->p, y2, err);
        bl_ode_stats one;
        bl_ode_solver_stats(solver, &one);
        memcpy(sum->method, one.method, sizeof sum->method);
        sum->steps_accepted += one.steps_accepted;
        sum->steps_rejected += one.steps_rejected;
        sum->rhs_evals += one.rhs_evals;
        sum->jac_evals += one.jac_evals;
        sum->h_last = one.h_last;
        if (!st) {
            memcpy(cur, y2 + n, n * sizeof *cur);
            bl_ode_lang_observe(l, s->t[k + 1], cur, s->p, obs + (k + 1) * no);
        }
    }
    free(y2);
    return st;
}

bl_status bl_xp_ode_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_ode *s = bl_pk_spec(plan);
    const size_t n = s->n_states, np = s->n_params, nt = s->n_times, no = s->n_observe;
    const int fixed = bl_ode_stepper_find(s->method) != NULL;
    const int streaming = s->retain_observations && fixed && !s->sensitivities;
    solver_result *r = calloc(1, sizeof *r);
    double *y = streaming ? NULL : calloc(nt * n, sizeof *y);
    double *S = s->sensitivities ? calloc(nt * n * (np ? np : 1), sizeof *S) : NULL;
    double *obs = no ? calloc(nt * no, sizeof *obs) : NULL;
    bl_ode_builtin *b = NULL;
    bl_ode_lang *l = NULL;
    bl_ode_solver *solver = NULL;
    bl_record *rec = NULL;
    bl_status st = BL_OK;
    if (!r || (!streaming && !y) || (s->sensitivities && !S) || (no && !obs)) {
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
    if ((st = bl_pk_ode_system(s, &b, &l, err)) ||
        (st = bl_ode_solver_create(l ? bl_ode_lang_system(l) : bl_ode_builtin_system(b), &o, &solver, err)))
        goto out;
    /* Generated C for a language system (eq_cgen.c), compiled or loaded from
     * the cache before the solve; BL_EQ_JIT=0 keeps the interpreter. Same
     * bits either way: the record says which ran (model_codegen). */
    if (l && (st = bl_ode_lang_codegen(l, BL_EQ_EXEC_AUTO, err)))
        goto out;
    /* A language system's non-finite start is named by its equation, before any record. */
    if (l && (st = bl_ode_lang_check_finite(l, s->t[0], s->y0, s->p, err)))
        goto out;
    if ((st = bl_xp_reserve(plan, opt->root, &rec, err)))
        goto out;
    snprintf(r->dir, sizeof r->dir, "%s", bl_record_dir(rec));
    st = bl_xp_protect(rec, opt, 0, err);
    const char *artifacts[6];
    size_t na = 0;
    artifacts[na++] = "t.npy";
    if (!s->retain_observations)
        artifacts[na++] = "y.npy";
    if (S)
        artifacts[na++] = "sensitivities.npy";
    if (no)
        artifacts[na++] = "observations.npy";
    artifacts[na++] = "summary.json";
    artifacts[na] = NULL;
    if (!st)
        st = bl_record_bind(rec, bl_plan_hash(plan), artifacts, na, err);
    if (!st)
        st = bl_record_set_json(rec, "plan", bl_plan_resolved_json(plan), err);
    /* the source of what ran, beside its provenance (summary model_codegen), as connectome records keep it */
    const char *gen = l ? bl_ode_lang_generated_source(l) : NULL;
    if (!st && gen) {
        char path[4096];
        if (!(st = bl_record_path(rec, "model/generated.c", path, sizeof path, err))) {
            FILE *f = fopen(path, "w");
            int ok = f && fputs(gen, f) >= 0;
            if (f && fclose(f))
                ok = 0;
            if (!ok)
                st = bl_fail(err, BL_ERR_IO, "%s: cannot write", path);
        }
    }
    bl_ode_stats so;
    if (!st && streaming) {
        st = solve_streaming(solver, s, l, obs, &so, err);
    } else {
        if (!st)
            st = s->sensitivities ? bl_ode_solve_sens(solver, s->t, nt, s->y0, s->p, y, S, err)
                                  : bl_ode_solve(solver, s->t, nt, s->y0, s->p, y, err);
        bl_ode_solver_stats(solver, &so);
        for (size_t k = 0; !st && l && no && k < nt; k++)
            bl_ode_lang_observe(l, s->t[k], y + k * n, s->p, obs + k * no);
    }
    if (!st) {
        const uint64_t shape_t[1] = {nt}, shape_y[2] = {nt, n}, shape_s[3] = {nt, n, np}, shape_o[2] = {nt, no};
        st = bl_xp_write_npy(rec, "t.npy", BL_DTYPE_FLOAT64, 1, shape_t, s->t, err);
        if (!st && !s->retain_observations)
            st = bl_xp_write_npy(rec, "y.npy", BL_DTYPE_FLOAT64, 2, shape_y, y, err);
        if (!st && S)
            st = bl_xp_write_npy(rec, "sensitivities.npy", BL_DTYPE_FLOAT64, 3, shape_s, S, err);
        if (!st && no)
            st = bl_xp_write_npy(rec, "observations.npy", BL_DTYPE_FLOAT64, 2, shape_o, obs, err);
    }
    if (!st) {
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
        if (l) {
            cJSON_AddStringToObject(j, "derivatives", "the Jacobian and parameter Jacobian by symbolic "
                                                      "differentiation of the model language's expression graph");
            cJSON_AddNumberToObject(j, "jacobian_nonzeros", (double)bl_ode_lang_jac_nnz(l));
            cJSON_AddNumberToObject(j, "param_jacobian_nonzeros", (double)bl_ode_lang_pjac_nnz(l));
            bl_ode_lang_size gs;
            bl_ode_lang_sizes(l, &gs);
            cJSON *g = cJSON_AddObjectToObject(j, "graph");
            cJSON_AddNumberToObject(g, "nodes", (double)gs.nodes);
            cJSON_AddNumberToObject(g, "rhs_instructions", (double)gs.rhs);
            cJSON_AddNumberToObject(g, "jacobian_instructions", (double)gs.jac);
            cJSON_AddNumberToObject(g, "param_jacobian_instructions", (double)gs.pjac);
            cJSON_AddNumberToObject(g, "second_derivative_instructions", (double)gs.second);
            cJSON_AddNumberToObject(g, "observation_instructions", (double)gs.observe);
            char *cg = bl_ode_lang_codegen_json(l);
            cJSON *cgj = cg ? cJSON_Parse(cg) : NULL;
            free(cg);
            if (cgj)
                cJSON_AddItemToObject(j, "model_codegen", cgj);
        }
        if (no) {
            cJSON *names = cJSON_AddArrayToObject(j, "observations");
            for (size_t k = 0; k < no; k++)
                cJSON_AddItemToArray(names, cJSON_CreateString(s->observe_names[k]));
        }
        cJSON *ret = cJSON_AddObjectToObject(j, "retained");
        const double hist = (double)(nt * n), sens = S ? hist * (double)np : 0.0, ov = (double)(nt * no);
        const double values = (s->retain_observations ? 0.0 : hist) + sens + ov;
        char what[200];
        snprintf(what, sizeof what, "%s%s%s", s->retain_observations ? "the observations at every output time"
                                              : "the state at every output time (the history on the grid)",
                 S ? ", the parameter sensitivities of the state" : "", no && !s->retain_observations ? " and the observations" : "");
        cJSON_AddStringToObject(ret, "what", what);
        cJSON_AddStringToObject(ret, "state_history", s->retain_observations ? "not retained" : "retained");
        cJSON_AddNumberToObject(ret, "values", values);
        cJSON_AddNumberToObject(ret, "bytes", 8.0 * values);
        /* What the run held, beyond the solver's own work space. */
        cJSON *held = cJSON_AddObjectToObject(j, "held");
        const double hv = (streaming ? 3.0 * (double)n : hist) + sens + ov;
        cJSON_AddStringToObject(held, "how", streaming ? "observations computed as the run goes: one output interval "
                                                         "at a time, two states held"
                                : no ? "the state history on the grid held during the solve, observations computed "
                                       "from it" : "the state history on the grid");
        cJSON_AddNumberToObject(held, "values", hv);
        cJSON_AddNumberToObject(held, "bytes", 8.0 * hv);
        st = bl_xp_write_json(rec, "summary.json", j, err);
        snprintf(r->line, sizeof r->line, "ode %s %s: %zu outputs x %zu states%s, %" PRIu64 " steps accepted, %" PRIu64
                 " rejected", s->system, so.method, nt, n, no ? " with observations" : "", so.steps_accepted,
                 so.steps_rejected);
    }
    if (st && l)
        bl_ode_lang_explain(l, err); /* "state 3" named by its equation */
    st = bl_xp_end(rec, NULL, st, err);
out:
    bl_record_destroy(rec);
    bl_ode_solver_destroy(solver);
    bl_ode_builtin_destroy(b);
    bl_ode_lang_destroy(l);
    free(y);
    free(S);
    free(obs);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
