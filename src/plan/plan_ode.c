/* `operation = "ode"`: a system of ODEs, a method and an output grid.
 *
 *   [ode]
 *   system = "vdp"            # a built-in (docs/solvers.md); the model language's systems later
 *   states = 16               # "exponential" only: its state count
 *   method = "rk4"            # euler, rk4, dopri5, cvode-bdf, arkode-dopri5
 *   substeps = 10             # fixed-step methods: steps per output interval (default 1)
 *   rtol = 1e-6               # adaptive methods (defaults 1e-6, 1e-9, 100000)
 *   atol = 1e-9
 *   max_steps = 100000
 *   params = [1.0]            # default: the system's reference parameters
 *   y0 = [2.0, 0.0]           # default: its reference initial state
 *   t = [0.0, 0.5, 1.0]       # the output grid, or t_end = 10.0 with outputs = 21
 *   sensitivities = false     # d y / d params at the grid (euler, rk4, cvode-bdf)
 *
 * The resolved plan writes every value (grid, parameters, state), so the
 * hash changes with each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(s);
}

bl_status bl_pk_op_load_ode(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                            const char *plan_dir, bl_plan *plan)
{
    (void)op;
    (void)plan_dir;
    static const char *const top[] = {"format", "format_version", "id", "operation", "description", "ode", NULL};
    static const char *const keys[] = {"system", "states", "method", "substeps", "rtol", "atol", "max_steps",
                                       "params", "y0", "t", "t_end", "outputs", "sensitivities", NULL};
    bl_pk_ode *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory for [ode]", ctx->file);
    plan->spec = s;
    const bl_toml_node *ode = NULL;
    const char *system = NULL, *method = "rk4";
    bl_ode_options o;
    bl_ode_options_default(&o);
    s->substeps = 1;
    s->rtol = o.rtol;
    s->atol = o.atol;
    s->max_steps = (int64_t)o.max_steps;
    bl_status st;
    if ((st = bl_pk_check_keys(ctx, root, "", top)) || (st = bl_pk_table(ctx, root, "", "ode", 1, &ode)) ||
        (st = bl_pk_check_keys(ctx, ode, "ode", keys)) ||
        (st = bl_pk_string(ctx, ode, "ode", "system", 1, &system, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "states", 0, 1, 1 << 20, &s->states, NULL)) ||
        (st = bl_pk_string(ctx, ode, "ode", "method", 0, &method, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "substeps", 0, 1, 1 << 24, &s->substeps, NULL)) ||
        (st = bl_pk_double(ctx, ode, "ode", "rtol", 0, &s->rtol, NULL)) ||
        (st = bl_pk_double(ctx, ode, "ode", "atol", 0, &s->atol, NULL)) ||
        (st = bl_pk_int(ctx, ode, "ode", "max_steps", 0, 1, INT64_C(1) << 40, &s->max_steps, NULL)) ||
        (st = bl_pk_bool(ctx, ode, "ode", "sensitivities", 0, &s->sensitivities, NULL)) ||
        (st = bl_pk_grid(ctx, ode, "ode", &s->t, &s->n_times)))
        return st;
    snprintf(s->system, sizeof s->system, "%s", system);
    snprintf(s->method, sizeof s->method, "%s", method);
    if (strcmp(s->system, "exponential"))
        s->states = 0;
    else if (!s->states)
        return bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.states", "system \"exponential\" needs states (1..%d)",
                          1 << 20);
    /* The system and the options as the solver will see them. */
    bl_error e = {0};
    bl_ode_builtin *b = NULL;
    if (bl_ode_builtin_create(s->system, (size_t)s->states, &b, &e))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "system"), "ode.system", "%s", e.message);
    const bl_ode_system *sys = bl_ode_builtin_system(b);
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
            memcpy(s->p, bl_ode_builtin_params(b), s->n_params * sizeof *s->p);
    }
    if (!st && !s->y0) {
        if (!(s->y0 = malloc(s->n_states * sizeof *s->y0)))
            st = bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory", ctx->file);
        else
            memcpy(s->y0, bl_ode_builtin_y0(b), s->n_states * sizeof *s->y0);
    }
    if (!st && s->sensitivities && !(bl_ode_stepper_find(s->method) != NULL) && strcmp(s->method, "cvode-bdf"))
        st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ode, "sensitivities"), "ode.sensitivities",
                        "method %s has no sensitivities (euler, rk4, cvode-bdf)", s->method);
    if (!st && s->n_times > MAX_VALUES / s->n_states)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, ode, "ode.t", "%zu output times x %zu states is too many", s->n_times,
                        s->n_states);
    bl_ode_builtin_destroy(b);
    return st;
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
    if ((bl_ode_stepper_find(s->method) != NULL)) {
        bl_cj_int(&b, o, "substeps", s->substeps);
    } else {
        bl_cj_num(&b, o, "rtol", s->rtol);
        bl_cj_num(&b, o, "atol", s->atol);
        bl_cj_int(&b, o, "max_steps", s->max_steps);
    }
    bl_cj_bool(&b, o, "sensitivities", s->sensitivities);
    numbers(&b, o, "params", s->p, s->n_params);
    numbers(&b, o, "y0", s->y0, s->n_states);
    numbers(&b, o, "t", s->t, s->n_times);
    return bl_cj_finish(&b, root, pretty);
}

void bl_pk_op_estimate_ode(const bl_plan *plan, bl_plan_estimate_t *e)
{
    const bl_pk_ode *s = spec_of(plan);
    const double values = (double)s->n_times * (double)s->n_states * (1.0 + (s->sensitivities ? (double)s->n_params : 0));
    e->memory_bytes = 8.0 * values + 8.0 * (double)s->n_states * (double)s->n_states * 4;
    e->disk_bytes = 8.0 * values + 4096.0;
    e->seconds_one_core = 1e-8 * values * (double)(s->substeps > 0 ? s->substeps : 1);
}
