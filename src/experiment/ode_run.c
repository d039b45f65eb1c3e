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

/* Observations as the run goes (bl_ode_solve_observe): every method hands
 * each output time's state to the observer as the solve passes it, on the
 * mesh of the whole-grid solve (fixed-step: the same steps; dopri5: its dense
 * output read at the grid points its steps cover; SUNDIALS: the state it
 * returns at each output time), so the observations are bit for bit those
 * computed from the stored history, and no history is kept. */
typedef struct observer {
    bl_ode_lang *l;
    const bl_pk_ode *s;
    double *obs;
} observer;

static int observe_one(void *user, size_t k, double t, const double *y)
{
    observer *o = user;
    if (o->s->n_observe)
        bl_ode_lang_observe(o->l, t, y, o->s->p, o->obs + k * o->s->n_observe);
    return 0;
}

static bl_status solve_streaming(bl_ode_solver *solver, const bl_pk_ode *s, bl_ode_lang *l, double *obs,
                                 bl_ode_stats *sum, bl_error *err)
{
    observer o = {.l = l, .s = s, .obs = obs};
    bl_status st = bl_ode_solve_observe(solver, s->t, s->n_times, s->y0, s->p, observe_one, &o, err);
    bl_ode_solver_stats(solver, sum);
    return st;
}

/* The objective of [ode.gradient]: g(k, t_k, y) and dg/dy at output k.
 * weights: w . y summed as Python's solve_ode sums it (acc = 0, then
 * acc += w_i y_i in state order), with rows of zero weights at the times not
 * counted, so the plan's gradient is the C API's and Python's bit for bit.
 * objective: the compiled auxiliary system's last right-hand side and
 * Jacobian row (bl_pk_ode_objective), d2g/dy2 through its second
 * derivatives. */
typedef struct plan_objective {
    const bl_pk_ode *s;
    const double *p; /* the parameters solved with (the objective reads none of them) */
    const double *W; /* weights: n_times x n */
    bl_ode_lang *aux;
    double *ya, *f, *J, *zero_p, *out_y, *out_p, *e_n; /* work space of the aux system */
} plan_objective;

static int counted(const plan_objective *o, size_t k)
{
    return !o->s->final_only || k + 1 == o->s->n_times;
}

static int objective_g(void *u, size_t k, double t, const double *y, double *v, double *dv)
{
    const plan_objective *o = u;
    const size_t n = o->s->n_states;
    if (o->W) {
        double acc = 0.0;
        for (size_t i = 0; i < n; i++) {
            dv[i] = o->W[k * n + i];
            acc += dv[i] * y[i];
        }
        *v = acc;
        return 0;
    }
    if (!counted(o, k)) {
        *v = 0.0;
        memset(dv, 0, n * sizeof *dv);
        return 0;
    }
    const bl_ode_system *sys = bl_ode_lang_system(o->aux);
    memcpy(o->ya, y, n * sizeof *y);
    o->ya[n] = 0.0;
    int rc = sys->rhs(sys->user, t, o->ya, o->p, o->f);
    if (!rc)
        rc = sys->jac(sys->user, t, o->ya, o->p, o->J);
    if (rc)
        return rc;
    *v = o->f[n];
    memcpy(dv, o->J + n * (n + 1), n * sizeof *dv);
    return 0;
}

static int objective_hvp(void *u, size_t k, double t, const double *y, const double *dy, double *out)
{
    const plan_objective *o = u;
    const size_t n = o->s->n_states;
    if (!counted(o, k)) {
        memset(out, 0, n * sizeof *out);
        return 0;
    }
    const bl_ode_system *sys = bl_ode_lang_system(o->aux);
    memcpy(o->ya, y, n * sizeof *y);
    o->ya[n] = 0.0;
    double *dya = o->f; /* the tangent (dy, 0) */
    memcpy(dya, dy, n * sizeof *dy);
    dya[n] = 0.0;
    int rc = sys->vjp_dir(sys->user, t, o->ya, o->p, o->e_n, dya, o->zero_p, o->out_y, o->out_p);
    if (!rc)
        memcpy(out, o->out_y, n * sizeof *out);
    return rc;
}

/* value, grad_p (n_params), grad_y0 (n, fixed-step only) and hess
 * (n_params^2, when asked) of the plan's objective, for the plan's grid from
 * y0 with parameters p (the plan's in a run; Python's solve_ode may give
 * others). */
static bl_status plan_gradient(bl_ode_solver *solver, const bl_pk_ode *s, const double *y0, const double *p,
                               const double *y, const double *S, double *value, double *grad_p, double *grad_y0,
                               double *hess, bl_error *err)
{
    const size_t n = s->n_states, np = s->n_params, nt = s->n_times;
    plan_objective o = {s, p, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *W = NULL, *work = NULL;
    bl_status st = BL_OK;
    if (s->weights) {
        if (!(W = calloc(nt * n, sizeof *W)))
            return bl_fail(err, BL_ERR_NOMEM, "ode.gradient: out of memory for %zu x %zu weights", nt, n);
        for (size_t k = s->final_only ? nt - 1 : 0; k < nt; k++)
            memcpy(W + k * n, s->weights, n * sizeof *W);
        o.W = W;
    } else {
        if ((st = bl_pk_ode_objective(s, &o.aux, err)))
            return st;
        const size_t m = n + 1;
        if (!(work = calloc(3 * m + m * m + 2 * np + 1 + m, sizeof *work))) {
            bl_ode_lang_destroy(o.aux);
            return bl_fail(err, BL_ERR_NOMEM, "ode.gradient: out of memory for the objective");
        }
        o.ya = work;
        o.f = o.ya + m;
        o.out_y = o.f + m;
        o.J = o.out_y + m;
        o.zero_p = o.J + m * m;
        o.out_p = o.zero_p + np;
        o.e_n = o.out_p + np + 1;
        o.e_n[n] = 1.0; /* w: the objective's row */
    }
    if (S) { /* cvode-bdf: dL/dp = sum_k dg_k/dy . dy(t_k)/dp, CVODES's sensitivities */
        double *dg = malloc((n ? n : 1) * sizeof *dg);
        if (!dg)
            st = bl_fail(err, BL_ERR_NOMEM, "ode.gradient: out of memory");
        *value = 0.0;
        memset(grad_p, 0, np * sizeof *grad_p);
        for (size_t k = 0; !st && k < nt; k++) {
            double v;
            if (objective_g(&o, k, s->t[k], y + k * n, &v, dg)) {
                st = bl_fail(err, BL_ERR_INVALID, "ode.gradient: the objective failed at output %zu, t = %g", k,
                             s->t[k]);
                break;
            }
            *value += v;
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < np; j++)
                    grad_p[j] += dg[i] * S[(k * n + i) * np + j];
        }
        free(dg);
    } else {
        st = bl_ode_gradient(solver, s->t, nt, y0, p, objective_g, &o, value, grad_p, grad_y0, err);
        if (!st && hess) {
            double v2, *g2 = malloc((np ? np : 1) * sizeof *g2);
            if (!g2)
                st = bl_fail(err, BL_ERR_NOMEM, "ode.gradient: out of memory");
            else
                st = bl_ode_hessian(solver, s->t, nt, y0, p, objective_g, o.aux ? objective_hvp : NULL, &o,
                                    &v2, g2, hess, err);
            free(g2);
        }
    }
    bl_ode_lang_destroy(o.aux);
    free(W);
    free(work);
    return st;
}

bl_status bl_plan_ode_gradient(const bl_plan *plan, bl_ode_solver *solver, const double *y0, const double *p,
                               const double *y, const double *S, double *value, double *grad_p, double *grad_y0,
                               double *hess, bl_error *err)
{
    if (!plan || !solver || !y0 || !p || !value || !grad_p)
        return bl_fail(err, BL_ERR_INVALID, "bl_plan_ode_gradient: plan, solver, y0, p, value or grad_p is NULL");
    if (strcmp(bl_plan_operation(plan), "ode"))
        return bl_fail(err, BL_ERR_INVALID, "plan %s: operation \"%s\" is not \"ode\"", bl_plan_id(plan),
                       bl_plan_operation(plan));
    const bl_pk_ode *s = bl_pk_spec(plan);
    if (!s->gradient)
        return bl_fail(err, BL_ERR_INVALID, "plan %s: no [ode.gradient] section (the objective to differentiate)",
                       bl_plan_id(plan));
    if (bl_ode_method_fixed_step(s->method)) {
        y = S = NULL; /* the adjoint re-solves the trajectory */
    } else if (!y || !S) {
        return bl_fail(err, BL_ERR_INVALID, "plan %s: method %s's gradient contracts CVODES's sensitivities: give "
                       "the trajectory and its sensitivities (bl_ode_solve_sens)", bl_plan_id(plan), s->method);
    } else if (grad_y0 || hess) {
        return bl_fail(err, BL_ERR_INVALID, "plan %s: method %s gives d L / d params only (the gradient in y0 "
                       "and the Hessian are for euler and rk4)", bl_plan_id(plan), s->method);
    }
    if (hess && s->objective && !s->hessian) {
        /* The plan checked the objective's second derivatives only when it asked for the Hessian. */
        bl_ode_lang *aux = NULL;
        bl_status st = bl_pk_ode_objective(s, &aux, err);
        const int second = !st && bl_ode_lang_system(aux)->vjp_dir != NULL;
        bl_ode_lang_destroy(aux);
        if (st)
            return st;
        if (!second)
            return bl_fail(err, BL_ERR_INVALID, "plan %s: the objective's second derivatives outgrow the expression "
                           "budget: no Hessian", bl_plan_id(plan));
    }
    return plan_gradient(solver, s, y0, p, y, S, value, grad_p, grad_y0, hess, err);
}

bl_status bl_xp_ode_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err)
{
    const bl_pk_ode *s = bl_pk_spec(plan);
    const size_t n = s->n_states, np = s->n_params, nt = s->n_times, no = s->n_observe;
    const int fixed = bl_ode_method_fixed_step(s->method);
    /* Observations as the run goes (nothing else kept) for every method; a
     * gradient needs the trajectory. */
    const int streaming = s->retain_observations && !s->sensitivities && !s->gradient;
    /* cvode-bdf's gradient contracts CVODES's sensitivities: they are solved
     * (and kept in memory) whether or not the record keeps them. */
    const int want_sens = s->sensitivities || (s->gradient && !fixed);
    solver_result *r = calloc(1, sizeof *r);
    double *y = streaming ? NULL : calloc(nt * n, sizeof *y);
    double *S = want_sens ? calloc(nt * n * (np ? np : 1), sizeof *S) : NULL;
    double *obs = no ? calloc(nt * no, sizeof *obs) : NULL;
    bl_ode_builtin *b = NULL;
    bl_ode_lang *l = NULL;
    bl_ode_solver *solver = NULL;
    bl_record *rec = NULL;
    bl_status st = BL_OK;
    double *G = s->gradient ? calloc(2 * np + n + (s->hessian ? np * np : 0) + 1, sizeof *G) : NULL;
    if (!r || (!streaming && !y) || (want_sens && !S) || (no && !obs) || (s->gradient && !G)) {
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
    const char *artifacts[10];
    size_t na = 0;
    artifacts[na++] = "t.npy";
    if (!s->retain_observations)
        artifacts[na++] = "y.npy";
    if (s->sensitivities)
        artifacts[na++] = "sensitivities.npy";
    if (s->gradient) {
        artifacts[na++] = "gradient.npy";
        artifacts[na++] = "objective.json";
        if (fixed)
            artifacts[na++] = "gradient_y0.npy";
        if (s->hessian)
            artifacts[na++] = "hessian.npy";
    }
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
            st = want_sens ? bl_ode_solve_sens(solver, s->t, nt, s->y0, s->p, y, S, err)
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
        if (!st && s->sensitivities)
            st = bl_xp_write_npy(rec, "sensitivities.npy", BL_DTYPE_FLOAT64, 3, shape_s, S, err);
        if (!st && no)
            st = bl_xp_write_npy(rec, "observations.npy", BL_DTYPE_FLOAT64, 2, shape_o, obs, err);
    }
    if (!st && s->gradient) {
        /* G: grad_p, grad_y0, hess, value. After the trajectory's solve:
         * the adjoint re-solves (its forward sweep keeps every step). */
        double *gp = G, *gy = G + np, *gh = G + np + n, *value = gh + (s->hessian ? np * np : 0);
        st = plan_gradient(solver, s, s->y0, s->p, y, fixed ? NULL : S, value, gp, fixed ? gy : NULL,
                           s->hessian ? gh : NULL, err);
        const uint64_t shape_p[1] = {np}, shape_y0[1] = {n}, shape_h[2] = {np, np};
        if (!st)
            st = bl_xp_write_npy(rec, "gradient.npy", BL_DTYPE_FLOAT64, 1, shape_p, gp, err);
        if (!st && fixed)
            st = bl_xp_write_npy(rec, "gradient_y0.npy", BL_DTYPE_FLOAT64, 1, shape_y0, gy, err);
        if (!st && s->hessian)
            st = bl_xp_write_npy(rec, "hessian.npy", BL_DTYPE_FLOAT64, 2, shape_h, gh, err);
        if (!st) {
            cJSON *j = cJSON_CreateObject();
            if (s->objective) {
                cJSON_AddStringToObject(j, "objective", s->objective);
            } else {
                cJSON_AddStringToObject(j, "objective", "weights . y");
                cJSON *w = cJSON_AddArrayToObject(j, "weights");
                for (size_t i = 0; i < n; i++)
                    cJSON_AddItemToArray(w, cJSON_CreateNumber(s->weights[i]));
            }
            cJSON_AddStringToObject(j, "at", s->final_only ? "the final output time"
                                                           : "summed over every output time");
            cJSON_AddNumberToObject(j, "value", *value);
            cJSON_AddStringToObject(j, "method", s->gradient_method);
            cJSON_AddStringToObject(j, "derivative", fixed ? "the exact derivative of the computed trajectory "
                                                             "(the discrete map), not of the ODE"
                                                           : "CVODES's forward sensitivities at its tolerances");
            cJSON *pn = cJSON_AddArrayToObject(j, "param_names");
            for (size_t k = 0; k < np; k++) {
                char d[32];
                snprintf(d, sizeof d, "p%zu", k);
                cJSON_AddItemToArray(pn, cJSON_CreateString(s->param_names ? s->param_names[k] : d));
            }
            cJSON_AddStringToObject(j, "gradient", "gradient.npy: d objective / d params, in param_names' order");
            if (s->hessian)
                cJSON_AddStringToObject(j, "hessian", "hessian.npy: forward over adjoint, params x params");
            st = bl_xp_write_json(rec, "objective.json", j, err);
        }
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
        const double hist = (double)(nt * n), sens = s->sensitivities ? hist * (double)np : 0.0, ov = (double)(nt * no);
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
        const double hv = (streaming ? 0.0 : hist) + sens + ov;
        cJSON_AddStringToObject(held, "how", streaming ? "observations computed as the run goes from the state at "
                                                         "each output time: no state history held"
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
    free(G);
    free(obs);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return BL_OK;
}
