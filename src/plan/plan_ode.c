/* `operation = "ode"`: a system of ODEs, a method and an output grid.
 *
 *   [ode]
 *   system = "vdp"            # a built-in (docs/solvers.md), or "hierarchical" (groups, stages,
 *                             # coupling = "independent" | "coupled": the protocol's fixture, compiled)
 *   equations = """dx/dt = -k * x : 1"""   # or a system in the model language, with
 *   [ode.parameters] k = 0.5  # its parameters (ordered by name), [ode.init] x = 1.0 (others 0),
 *   observe = { x2 = "x**2" } # observations on the grid, and retain = "observations" | "state"
 *   states = 16               # "exponential" only: its state count
 *   method = "rk4"            # euler, rk4, dopri5, cvode-bdf, arkode-dopri5, arkode-rk4, arkode-euler
 *   substeps = 10             # fixed-step methods: steps per output interval (default 1)
 *   rtol = 1e-6               # adaptive methods (defaults 1e-6, 1e-9, 100000)
 *   atol = 1e-9
 *   max_steps = 100000
 *   params = [1.0]            # default: the system's reference parameters
 *   y0 = [2.0, 0.0]           # default: its reference initial state
 *   t = [0.0, 0.5, 1.0]       # the output grid, or t_end = 10.0 with outputs = 21
 *   sensitivities = false     # d y / d params at the grid (euler, rk4, cvode-bdf)
 *   [ode.gradient]            # d L / d params of L = sum over the output times (at = "every") or at
 *   objective = "(x - 1)**2"  # the last (at = "final") of an expression of t and the states (language
 *   weights = [1.0, 0.0]      # systems), or of weights . y; hessian = true: forward over adjoint
 *
 * The resolved plan writes every value (grid, parameters, state), so the
 * hash changes with each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/eqmodel.h"
#include "brainlesslab/solvers.h"
#include "plan/plan_cjson.h"
#include "plan/plan_solvers.h"
#include "plan/toml_bridge.h"
#include "solvers/solvers_impl.h"

#define MAX_VALUES ((size_t)1 << 22)

bl_status bl_pk_numbers(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, const char *key,
                        int required, size_t max, double **out, size_t *n)
{
    char path[256];
    bl_pk_join(path, sizeof path, where, key, strlen(key));
    const bl_toml_node *a = bl_toml_table_get(node, key);
    *out = NULL;
    *n = 0;
    if (!a)
        return required ? bl_pk_fail(ctx, BL_ERR_INVALID, node, path, "missing (a list of numbers)") : BL_OK;
    if (bl_toml_type_of(a) != BL_TOML_ARRAY || bl_toml_array_size(a) == 0 || bl_toml_array_size(a) > max) {
        char d[96];
        bl_pk_describe(a, d, sizeof d);
        return bl_pk_fail(ctx, BL_ERR_INVALID, a, path, "must be a list of 1 to %zu numbers, not %s", max, d);
    }
    const size_t m = bl_toml_array_size(a);
    double *v = malloc(m * sizeof *v);
    if (!v)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, a, path, "out of memory for %zu numbers", m);
    for (size_t i = 0; i < m; i++) {
        const bl_toml_node *e = bl_toml_array_at(a, i);
        int64_t iv;
        if (bl_toml_get_int(e, &iv))
            v[i] = (double)iv;
        else if (!bl_toml_get_double(e, &v[i]) || !isfinite(v[i])) {
            char d[96], at[280];
            bl_pk_describe(e, d, sizeof d);
            bl_pk_index(at, sizeof at, path, i);
            free(v);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, at, "must be a finite number, not %s", d);
        }
    }
    *out = v;
    *n = m;
    return BL_OK;
}

bl_status bl_pk_grid(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, double **t, size_t *n)
{
    char path[256];
    bl_status st = bl_pk_numbers(ctx, node, where, "t", 0, MAX_VALUES, t, n);
    if (st)
        return st;
    const bl_toml_node *tend = bl_toml_table_get(node, "t_end");
    if (*t) {
        if (tend || bl_toml_table_get(node, "outputs")) {
            bl_pk_join(path, sizeof path, where, "t", 1);
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, path, "give either t or t_end with outputs, not both");
        }
        for (size_t k = 1; k < *n; k++)
            if (!((*t)[k] > (*t)[k - 1])) {
                bl_pk_join(path, sizeof path, where, "t", 1);
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "t"), path,
                                  "must increase strictly (element %zu is not after element %zu)", k, k - 1);
            }
        if (*n < 2) {
            bl_pk_join(path, sizeof path, where, "t", 1);
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, path, "needs at least 2 times");
        }
        return BL_OK;
    }
    double te = 0;
    int64_t outputs = 0;
    if ((st = bl_pk_double(ctx, node, where, "t_end", 1, &te, NULL)) ||
        (st = bl_pk_int(ctx, node, where, "outputs", 1, 2, (int64_t)MAX_VALUES, &outputs, NULL)))
        return st;
    if (!(te > 0)) {
        bl_pk_join(path, sizeof path, where, "t_end", 5);
        return bl_pk_fail(ctx, BL_ERR_INVALID, tend, path, "must be > 0");
    }
    *t = malloc((size_t)outputs * sizeof **t);
    if (!*t)
        return bl_pk_fail(ctx, BL_ERR_NOMEM, node, where, "out of memory for the grid");
    for (int64_t k = 0; k < outputs; k++)
        (*t)[k] = te * (double)k / (double)(outputs - 1);
    *n = (size_t)outputs;
    return BL_OK;
}

static bl_pk_ode *spec_of(const bl_plan *plan)
{
    return bl_pk_spec(plan);
}

void bl_pk_op_free_ode(bl_plan *plan)
{
    bl_pk_ode *s = spec_of(plan);
    if (!s)
        return;
    free(s->t);
    free(s->y0);
    free(s->p);
    free(s->equations);
    for (size_t k = 0; s->param_names && k < s->n_params; k++)
        free(s->param_names[k]);
    for (size_t k = 0; s->state_names && k < s->n_states; k++)
        free(s->state_names[k]);
    for (size_t k = 0; k < s->n_observe; k++) {
        free(s->observe_names ? s->observe_names[k] : NULL);
        free(s->observe_exprs ? s->observe_exprs[k] : NULL);
    }
    free(s->param_names);
    free(s->state_names);
    free(s->observe_names);
    free(s->observe_exprs);
    free(s->objective);
    free(s->weights);
    free(s);
}

bl_status bl_pk_ode_system(const bl_pk_ode *s, bl_ode_builtin **b, bl_ode_lang **l, bl_error *err)
{
    *b = NULL;
    *l = NULL;
    if (!s->equations)
        return bl_ode_builtin_create(s->system, (size_t)s->states, b, err);
    bl_ode_lang_source src = {s->equations, s->n_params, (const char *const *)s->param_names, s->p, 0, NULL, NULL,
                              s->n_observe, (const char *const *)s->observe_names,
                              (const char *const *)s->observe_exprs};
    return bl_ode_lang_compile(&src, l, err);
}

bl_status bl_pk_ode_objective(const bl_pk_ode *s, bl_ode_lang **aux, bl_error *err)
{
    *aux = NULL;
    if (!s->equations || !s->objective)
        return bl_fail(err, BL_ERR_INVALID, "ode.gradient.objective: only for a system in the model language");
    const size_t len = strlen(s->equations) + strlen(s->objective) + 64;
    char *text = malloc(len);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "ode.gradient.objective: out of memory");
    snprintf(text, len, "%s\ndL_objective/dt = (%s) : 1\n", s->equations, s->objective);
    bl_ode_lang_source src = {text, s->n_params, (const char *const *)s->param_names, s->p, 0, NULL, NULL, 0, NULL, NULL};
    bl_ode_lang *l = NULL;
    bl_error e = {0};
    bl_status st = bl_ode_lang_compile(&src, &l, &e);
    free(text);
    if (st)
        return bl_fail(err, st, "the objective \"%.200s\": %s", s->objective, e.message);
    bl_ode_lang *plain = NULL;
    if ((st = bl_ode_lang_compile(&(bl_ode_lang_source){s->equations, s->n_params,
                                                        (const char *const *)s->param_names, s->p, 0, NULL, NULL,
                                                        0, NULL, NULL},
                                  &plain, &e))) {
        bl_ode_lang_destroy(l);
        return bl_fail(err, st, "ode.gradient.objective: %s", e.message);
    }
    /* The objective's own row of d f / d p is the difference of the nonzero
     * counts: a structural zero for every parameter, or it reads one. */
    const size_t extra = bl_ode_lang_pjac_nnz(l) - bl_ode_lang_pjac_nnz(plain);
    bl_ode_lang_destroy(plain);
    if (bl_ode_lang_n_states(l) != s->n_states + 1 || extra) {
        bl_ode_lang_destroy(l);
        return bl_fail(err, BL_ERR_INVALID,
                       "the objective \"%.200s\": %s", s->objective,
                       extra ? "reads a parameter: an objective is an expression of t and the states only"
                             : "must not name the objective's own state L_objective");
    }
    *aux = l;
    return BL_OK;
}

/* [ode.gradient]: objective = "expression" (language systems) or weights =
 * [...] (one per state), at = "every" | "final", hessian = false. The
 * method decides how: the discrete adjoint for euler and rk4 (exact for the
 * computed trajectory), CVODES's forward sensitivities for cvode-bdf (no
 * Hessian); the adaptive explicit methods have no derivatives. */
static bl_status load_gradient(const bl_pk_ctx *ctx, const bl_toml_node *ode, bl_pk_ode *s, const bl_ode_system *sys)
{
    static const char *const keys[] = {"objective", "weights", "at", "hessian", NULL};
    const bl_toml_node *g = NULL;
    const char *objective = NULL, *at = "every";
    bl_status st;
    if ((st = bl_pk_table(ctx, ode, "ode", "gradient", 0, &g)) || !g)
        return st;
    s->gradient = 1;
    size_t nw = 0;
    if ((st = bl_pk_check_keys(ctx, g, "ode.gradient", keys)) ||
        (st = bl_pk_string(ctx, g, "ode.gradient", "objective", 0, &objective, NULL)) ||
        (st = bl_pk_numbers(ctx, g, "ode.gradient", "weights", 0, MAX_VALUES, &s->weights, &nw)) ||
        (st = bl_pk_string(ctx, g, "ode.gradient", "at", 0, &at, NULL)) ||
        (st = bl_pk_bool(ctx, g, "ode.gradient", "hessian", 0, &s->hessian, NULL)))
        return st;
    if (!objective == !s->weights)
        return bl_pk_fail(ctx, BL_ERR_INVALID, g, "ode.gradient",
                          "give either objective = \"expression\" or weights = [...], one of them");
    if (strcmp(at, "every") && strcmp(at, "final"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "at"), "ode.gradient.at",
                          "must be \"every\" (the sum over the output times) or \"final\" (the last), not \"%.40s\"",
                          at);
    s->final_only = !strcmp(at, "final");
    if (s->weights && nw != s->n_states)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "weights"), "ode.gradient.weights",
                          "system %s has %zu states, not %zu", s->system, s->n_states, nw);
    const int fixed = bl_ode_stepper_find(s->method) != NULL;
    if (!fixed && strcmp(s->method, "cvode-bdf"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, g, "ode.gradient",
                          "method %s has no derivatives (euler and rk4: the discrete adjoint; cvode-bdf: CVODES)",
                          s->method);
    snprintf(s->gradient_method, sizeof s->gradient_method, "%s",
             fixed ? "discrete adjoint" : "cvodes forward sensitivities");
    if (s->hessian && !fixed)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "hessian"), "ode.gradient.hessian",
                          "the Hessian (forward over adjoint) is for euler and rk4, not %s", s->method);
    if (s->hessian && s->n_params > 64)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "hessian"), "ode.gradient.hessian",
                          "is for small parameter counts (at most 64; system %s has %zu)", s->system, s->n_params);
    if (s->hessian && !sys->vjp_dir)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "hessian"), "ode.gradient.hessian",
                          "system %s has no second derivatives", s->system);
    if (objective) {
        if (!(s->objective = bl_pk_strdup(objective)))
            return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
        bl_ode_lang *aux = NULL;
        bl_error e = {0};
        if (bl_pk_ode_objective(s, &aux, &e))
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "objective"), "ode.gradient.objective", "%s",
                              e.message);
        const int second = bl_ode_lang_system(aux)->vjp_dir != NULL;
        bl_ode_lang_destroy(aux);
        if (s->hessian && !second)
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(g, "objective"), "ode.gradient.objective",
                              "its second derivatives outgrow the expression budget: no Hessian");
    }
    return BL_OK;
}

/* A table of name = value pairs (numbers, or strings when strings is set),
 * in the bridge's order (by name). */
static bl_status named(const bl_pk_ctx *ctx, const bl_toml_node *ode, const char *key, int strings, char ***names,
                       double **values, char ***texts, size_t *n)
{
    char path[256];
    const bl_toml_node *t = bl_toml_table_get(ode, key);
    *n = 0;
    if (!t)
        return BL_OK;
    bl_pk_join(path, sizeof path, "ode", key, strlen(key));
    if (bl_toml_type_of(t) != BL_TOML_TABLE || bl_toml_table_size(t) > BL_EQ_MAX_PARAMS) {
        char d[96];
        bl_pk_describe(t, d, sizeof d);
        return bl_pk_fail(ctx, BL_ERR_INVALID, t, path, "must be a table of at most %u name = %s pairs, not %s",
                          BL_EQ_MAX_PARAMS, strings ? "\"expression\"" : "number", d);
    }
    const size_t m = bl_toml_table_size(t);
    *names = calloc(m + 1, sizeof **names);
    if (strings)
        *texts = calloc(m + 1, sizeof **texts);
    else
        *values = calloc(m + 1, sizeof **values);
    if (!*names || (strings ? !*texts : !*values))
        return bl_pk_fail(ctx, BL_ERR_NOMEM, t, path, "out of memory");
    for (size_t i = 0; i < m; i++) {
        size_t len;
        const char *k = bl_toml_table_key(t, i, &len);
        const bl_toml_node *v = bl_toml_table_value(t, i);
        char at[300];
        bl_pk_join(at, sizeof at, path, k, len);
        if (!((*names)[i] = malloc(len + 1)))
            return bl_pk_fail(ctx, BL_ERR_NOMEM, v, at, "out of memory");
        memcpy((*names)[i], k, len);
        (*names)[i][len] = '\0';
        *n = i + 1;
        int64_t iv;
        const char *sv;
        size_t sl;
        if (strings) {
            if (!bl_toml_get_string(v, &sv, &sl)) {
                char d[96];
                bl_pk_describe(v, d, sizeof d);
                return bl_pk_fail(ctx, BL_ERR_INVALID, v, at, "must be an expression (a string), not %s", d);
            }
            if (!((*texts)[i] = bl_pk_strdup(sv)))
                return bl_pk_fail(ctx, BL_ERR_NOMEM, v, at, "out of memory");
        } else if (bl_toml_get_int(v, &iv)) {
            (*values)[i] = (double)iv;
        } else if (!bl_toml_get_double(v, &(*values)[i]) || !isfinite((*values)[i])) {
            char d[96];
            bl_pk_describe(v, d, sizeof d);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, at, "must be a finite number, not %s", d);
        }
    }
    return BL_OK;
}

static void free_names(char **names, size_t n)
{
    for (size_t k = 0; names && k < n; k++)
        free(names[k]);
    free(names);
}

static char **copy_names(size_t n, const char *(*get)(const bl_ode_lang *, size_t), const bl_ode_lang *l)
{
    char **v = calloc(n + 1, sizeof *v);
    for (size_t k = 0; v && k < n; k++)
        if (!(v[k] = bl_pk_strdup(get(l, k)))) {
            free_names(v, k);
            return NULL;
        }
    return v;
}

/* system = "hierarchical" or equations = ...: compile it here (every error at
 * load time), keep its text and names, and the reference values. */
static bl_status load_lang(const bl_pk_ctx *ctx, const bl_toml_node *ode, bl_pk_ode *s, bl_ode_lang **out)
{
    bl_status st;
    bl_error e = {0};
    bl_ode_lang_source src;
    memset(&src, 0, sizeof src);
    char **pn = NULL, **in = NULL, **on = NULL, **oe = NULL;
    double *pv = NULL, *iv = NULL;
    size_t np = 0, ni = 0, no = 0;
    const char *where = "ode.equations";
    const bl_toml_node *at = bl_toml_table_get(ode, "equations");
    int generated = !strcmp(s->system, "hierarchical");
    if (generated) {
        const char *coupling = "independent";
        where = "ode.system";
        at = bl_toml_table_get(ode, "system");
        if ((st = bl_pk_int(ctx, ode, "ode", "groups", 1, 1, 64, &s->groups, NULL)) ||
            (st = bl_pk_int(ctx, ode, "ode", "stages", 1, 1, 64, &s->stages, NULL)) ||
            (st = bl_pk_string(ctx, ode, "ode", "coupling", 0, &coupling, NULL)))
            return st;
        if (strcmp(coupling, "independent") && strcmp(coupling, "coupled"))
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "coupling"), "ode.coupling",
                              "must be \"independent\" or \"coupled\", not \"%.40s\"", coupling);
        s->coupled = !strcmp(coupling, "coupled");
        if (bl_toml_table_get(ode, "equations") || bl_toml_table_get(ode, "parameters") ||
            bl_toml_table_get(ode, "init"))
            return bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.system",
                              "\"hierarchical\" generates its equations, parameters and initial state "
                              "(override them with params = [...] and y0 = [...])");
        if (bl_ode_lang_hierarchical((unsigned)s->groups, (unsigned)s->stages, s->coupled, &src, &e))
            return bl_pk_fail(ctx, BL_ERR_INVALID, at, where, "%s", e.message);
    } else {
        const char *eqs = NULL;
        if ((st = bl_pk_string(ctx, ode, "ode", "equations", 1, &eqs, NULL)) ||
            (st = named(ctx, ode, "parameters", 0, &pn, &pv, NULL, &np)) ||
            (st = named(ctx, ode, "init", 0, &in, &iv, NULL, &ni)))
            goto done;
        src = (bl_ode_lang_source){eqs, np, (const char *const *)pn, pv, ni, (const char *const *)in, iv, 0, NULL, NULL};
    }
    if ((st = named(ctx, ode, "observe", 1, &on, NULL, &oe, &no)))
        goto done;
    src.n_observe = no;
    src.observe_names = (const char *const *)on;
    src.observe_exprs = (const char *const *)oe;
    if (bl_ode_lang_compile(&src, out, &e)) {
        st = bl_pk_fail(ctx, BL_ERR_INVALID, at, where, "%s", e.message);
        goto done;
    }
    const bl_ode_lang *l = *out;
    s->n_states = bl_ode_lang_n_states(l);
    s->n_params = bl_ode_lang_n_params(l);
    s->n_observe = no;
    s->observe_names = on;
    s->observe_exprs = oe;
    on = oe = NULL;
    if (!(s->equations = bl_pk_strdup(src.equations)) ||
        !(s->param_names = copy_names(s->n_params, bl_ode_lang_param_name, l)) ||
        !(s->state_names = copy_names(s->n_states, bl_ode_lang_state_name, l)))
        st = bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
done:
    if (generated)
        bl_ode_lang_fixture_free(&src);
    free_names(pn, np);
    free_names(in, ni);
    free_names(on, no);
    free_names(oe, no);
    free(pv);
    free(iv);
    return st;
}

bl_status bl_pk_op_load_ode(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                            const char *plan_dir, bl_plan *plan)
{
    (void)op;
    (void)plan_dir;
    static const char *const top[] = {"format", "format_version", "id", "operation", "description", "ode", NULL};
    static const char *const keys[] = {"system", "states", "method", "substeps", "rtol", "atol", "max_steps",
                                       "params", "y0", "t", "t_end", "outputs", "sensitivities", "equations",
                                       "parameters", "init", "observe", "retain", "groups", "stages", "coupling",
                                       "gradient", NULL};
    bl_pk_ode *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory for [ode]", ctx->file);
    plan->spec = s;
    const bl_toml_node *ode = NULL;
    const char *system = NULL, *method = "rk4", *retain = "state";
    bl_ode_options o;
    bl_ode_options_default(&o);
    s->substeps = 1;
    s->rtol = o.rtol;
    s->atol = o.atol;
    s->max_steps = (int64_t)o.max_steps;
    bl_status st;
    if ((st = bl_pk_check_keys(ctx, root, "", top)) || (st = bl_pk_table(ctx, root, "", "ode", 1, &ode)) ||
        (st = bl_pk_check_keys(ctx, ode, "ode", keys)) ||
        (st = bl_pk_string(ctx, ode, "ode", "system", !bl_toml_table_get(ode, "equations"), &system, NULL)) ||
        (st = bl_pk_string(ctx, ode, "ode", "retain", 0, &retain, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "states", 0, 1, 1 << 20, &s->states, NULL)) ||
        (st = bl_pk_string(ctx, ode, "ode", "method", 0, &method, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "substeps", 0, 1, 1 << 24, &s->substeps, NULL)) ||
        (st = bl_pk_double(ctx, ode, "ode", "rtol", 0, &s->rtol, NULL)) ||
        (st = bl_pk_double(ctx, ode, "ode", "atol", 0, &s->atol, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "max_steps", 0, 1, INT64_C(1) << 40, &s->max_steps, NULL)) ||
        (st = bl_pk_bool(ctx, ode, "ode", "sensitivities", 0, &s->sensitivities, NULL)) ||
        (st = bl_pk_grid(ctx, ode, "ode", &s->t, &s->n_times)))
        return st;
    if (system && bl_toml_table_get(ode, "equations"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.system", "give either system or equations, not both");
    snprintf(s->system, sizeof s->system, "%s", system ? system : "equations");
    snprintf(s->method, sizeof s->method, "%s", method);
    if (strcmp(retain, "state") && strcmp(retain, "observations"))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "retain"), "ode.retain",
                          "must be \"state\" (the state history and the observations) or \"observations\", not "
                          "\"%.40s\"", retain);
    s->retain_observations = !strcmp(retain, "observations");
    const int lang = !system || !strcmp(s->system, "hierarchical");
    if (!lang) {
        static const char *const only_lang[] = {"parameters", "init", "observe", "groups", "stages", "coupling", NULL};
        for (const char *const *k = only_lang; *k; k++)
            if (bl_toml_table_get(ode, *k)) {
                char path[64];
                snprintf(path, sizeof path, "ode.%s", *k);
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, *k), path,
                                  "only for a system in the model language (equations = ..., or system = "
                                  "\"hierarchical\"), not the built-in \"%s\"", s->system);
            }
    }
    if (strcmp(s->system, "exponential"))
        s->states = 0;
    else if (!s->states)
        return bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.states", "system \"exponential\" needs states (1..%d)",
                          1 << 20);
    /* The system and the options as the solver will see them. */
    bl_error e = {0};
    bl_ode_builtin *b = NULL;
    bl_ode_lang *l = NULL;
    if (lang) {
        if ((st = load_lang(ctx, ode, s, &l)))
            return st;
    } else if (bl_ode_builtin_create(s->system, (size_t)s->states, &b, &e)) {
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "system"), "ode.system", "%s", e.message);
    }
    if (s->retain_observations && !s->n_observe) {
        bl_ode_lang_destroy(l);
        bl_ode_builtin_destroy(b);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "retain"), "ode.retain",
                          "\"observations\" needs observations (observe = { name = \"expression\" })");
    }
    const bl_ode_system *sys = l ? bl_ode_lang_system(l) : bl_ode_builtin_system(b);
    s->n_states = sys->n_states;
    s->n_params = sys->n_params;
    o.method = s->method;
    o.substeps = (unsigned)s->substeps;
    o.rtol = s->rtol;
    o.atol = s->atol;
    o.max_steps = (uint64_t)s->max_steps;
    bl_ode_solver *solver = NULL;
    if (bl_ode_solver_create(sys, &o, &solver, &e)) {
        bl_ode_builtin_destroy(b);
        bl_ode_lang_destroy(l);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "method"), "ode.method", "%s", e.message);
    }
    bl_ode_solver_destroy(solver);
    size_t n;
    if (!(st = bl_pk_numbers(ctx, ode, "ode", "params", 0, MAX_VALUES, &s->p, &n)) && s->p && n != s->n_params)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "params"), "ode.params",
                        "system %s has %zu parameters, not %zu", s->system, s->n_params, n);
    if (!st && !(st = bl_pk_numbers(ctx, ode, "ode", "y0", 0, MAX_VALUES, &s->y0, &n)) && s->y0 && n != s->n_states)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "y0"), "ode.y0", "system %s has %zu states, not %zu",
                        s->system, s->n_states, n);
    if (!st && !s->p && s->n_params) {
        if (!(s->p = malloc(s->n_params * sizeof *s->p)))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
        else
            memcpy(s->p, l ? bl_ode_lang_params(l) : bl_ode_builtin_params(b), s->n_params * sizeof *s->p);
    }
    if (!st && !s->y0) {
        if (!(s->y0 = malloc(s->n_states * sizeof *s->y0)))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
        else
            memcpy(s->y0, l ? bl_ode_lang_y0(l) : bl_ode_builtin_y0(b), s->n_states * sizeof *s->y0);
    }
    if (!st && s->sensitivities && !(bl_ode_stepper_find(s->method) != NULL) && strcmp(s->method, "cvode-bdf"))
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "sensitivities"), "ode.sensitivities",
                        "method %s has no sensitivities (euler, rk4, cvode-bdf)", s->method);
    if (!st)
        st = load_gradient(ctx, ode, s, sys);
    if (!st && s->n_times > MAX_VALUES / s->n_states)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.t", "%zu output times x %zu states is too many", s->n_times,
                        s->n_states);
    bl_ode_builtin_destroy(b);
    bl_ode_lang_destroy(l);
    return st;
}

static void strings(bl_cj *b, cJSON *o, const char *key, char *const *v, size_t n)
{
    cJSON *a = bl_cj_arr(b, o, key);
    for (size_t i = 0; i < n; i++)
        bl_cj_append_str(b, a, v[i]);
}

static void numbers(bl_cj *b, cJSON *o, const char *key, const double *v, size_t n)
{
    cJSON *a = bl_cj_arr(b, o, key);
    for (size_t i = 0; i < n; i++)
        bl_cj_append_num(b, a, v[i]);
}

char *bl_pk_op_render_ode(const bl_plan *plan, int pretty, int full)
{
    (void)full;
    const bl_pk_ode *s = spec_of(plan);
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_int(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", bl_plan_id(plan));
    bl_cj_str(&b, root, "operation", bl_plan_operation(plan));
    cJSON *o = bl_cj_obj(&b, root, "ode");
    bl_cj_str(&b, o, "system", s->system);
    bl_cj_int(&b, o, "states", (int64_t)s->n_states);
    bl_cj_int(&b, o, "params_count", (int64_t)s->n_params);
    bl_cj_str(&b, o, "method", s->method);
    if (bl_ode_method_fixed_step(s->method)) {
        bl_cj_int(&b, o, "substeps", s->substeps);
    } else {
        bl_cj_num(&b, o, "rtol", s->rtol);
        bl_cj_num(&b, o, "atol", s->atol);
        bl_cj_int(&b, o, "max_steps", s->max_steps);
    }
    bl_cj_bool(&b, o, "sensitivities", s->sensitivities);
    if (s->equations) {
        /* A language system: its text and names; built-in plans render as before. */
        if (!strcmp(s->system, "hierarchical")) {
            bl_cj_int(&b, o, "groups", s->groups);
            bl_cj_int(&b, o, "stages", s->stages);
            bl_cj_str(&b, o, "coupling", s->coupled ? "coupled" : "independent");
        }
        bl_cj_str(&b, o, "equations", s->equations);
        strings(&b, o, "param_names", s->param_names, s->n_params);
        strings(&b, o, "state_names", s->state_names, s->n_states);
    }
    if (s->n_observe) {
        cJSON *ob = bl_cj_obj(&b, o, "observe");
        for (size_t k = 0; k < s->n_observe; k++)
            bl_cj_str(&b, ob, s->observe_names[k], s->observe_exprs[k]);
        bl_cj_str(&b, o, "retain", s->retain_observations ? "observations" : "state");
    }
    if (s->gradient) { /* only when asked: plans without it hash as before */
        cJSON *g = bl_cj_obj(&b, o, "gradient");
        if (s->objective)
            bl_cj_str(&b, g, "objective", s->objective);
        else
            numbers(&b, g, "weights", s->weights, s->n_states);
        bl_cj_str(&b, g, "at", s->final_only ? "final" : "every");
        bl_cj_bool(&b, g, "hessian", s->hessian);
        bl_cj_str(&b, g, "method", s->gradient_method);
    }
    numbers(&b, o, "params", s->p, s->n_params);
    numbers(&b, o, "y0", s->y0, s->n_states);
    numbers(&b, o, "t", s->t, s->n_times);
    return bl_cj_finish(&b, root, pretty);
}

void bl_pk_op_estimate_ode(const bl_plan *plan, bl_plan_estimate_t *e)
{
    const bl_pk_ode *s = spec_of(plan);
    const double values = (double)s->n_times * (double)s->n_states * (1.0 + (s->sensitivities ? (double)s->n_params : 0)) +
                          (double)s->n_times * (double)s->n_observe;
    e->memory_bytes = 8.0 * values + 8.0 * (double)s->n_states * (double)s->n_states * 4;
    if (s->gradient) { /* the adjoint keeps the state at every step; cvode-bdf the sensitivities */
        const double steps = (double)(s->n_times - 1) * (double)(s->substeps > 0 ? s->substeps : 1) + 1.0;
        e->memory_bytes += 8.0 * (double)s->n_states * (bl_ode_stepper_find(s->method) ? steps : (double)s->n_times *
                                                                                                 (double)s->n_params);
        e->disk_bytes += 8.0 * (double)(s->n_params + s->n_states) * (1.0 + (s->hessian ? (double)s->n_params : 0));
    }
    e->disk_bytes = 8.0 * values + 4096.0;
    e->seconds_one_core = 1e-8 * values * (double)(s->substeps > 0 ? s->substeps : 1);
}

bl_status bl_plan_ode(const bl_plan *plan, bl_ode_plan_view *out, bl_error *err)
{
    if (!plan || !out)
        return bl_fail(err, BL_ERR_INVALID, "bl_plan_ode: plan or out is NULL");
    if (strcmp(bl_plan_operation(plan), "ode"))
        return bl_fail(err, BL_ERR_INVALID, "plan %s: operation \"%s\" is not \"ode\"", bl_plan_id(plan),
                       bl_plan_operation(plan));
    const bl_pk_ode *s = spec_of(plan);
    *out = (bl_ode_plan_view){s->system, s->equations, (size_t)s->states, s->method, (unsigned)s->substeps, s->rtol,
                              s->atol, (uint64_t)s->max_steps, s->sensitivities, s->retain_observations, s->t,
                              s->y0, s->p, s->n_times, s->n_states, s->n_params, s->n_observe,
                              (const char *const *)s->param_names, (const char *const *)s->observe_names,
                              (const char *const *)s->observe_exprs, s->gradient, s->hessian,
                              bl_ode_method_fixed_step(s->method)};
    return BL_OK;
}
