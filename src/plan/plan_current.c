/* Current injection in a [[stimulus]] table (docs/models.md, "Current
 * injection"): the fifth stimulus form, beside rate_hz, rates, baseline_hz
 * and schedule. It sets a per-neuron parameter of a model from equations:
 *
 *     current = "dc"      amplitude = "0.5 nA"
 *     current = "step"    times_ms = [0, 20, 60]  amplitudes = ["0.2 nA", "0.5 nA", "0 nA"]
 *     current = "ramp"    start_amplitude = "0 nA"  stop_amplitude = "1 nA"  (over the window)
 *     current = "table"   values = [0.1, 0.3] or "i.npy"  unit = "nA"  every_ms = 0.1
 *     current = "noise"   mean = "0 nA"  sigma = "0.2 nA"    (a draw per step)
 *     variable = "I_inj"  start_ms = 0  stop_ms = end of trial   (all kinds)
 *
 * Every amplitude is a quantity in the model's language, checked against the
 * variable's dimension; a table's numbers are multiplied by its unit's scale
 * (x * 1e-9 for nA, as Brian2 computes `values * nA`). Times are rounded to
 * whole steps as a Poisson window's are. */
#include "plan/plan_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "models/eq_row.h"

#define MAX_CURRENT_VALUES ((size_t)1 << 24)

static const char *const kinds[] = {"dc", "step", "ramp", "table", "noise"};
/* The keys each kind reads beyond current, variable, start_ms, stop_ms. */
static const char *const kind_keys[][4] = {{"amplitude"}, {"times_ms", "amplitudes"}, {"start_amplitude", "stop_amplitude"},
                                           {"values", "unit", "every_ms"}, {"mean", "sigma"}};
static const char *const all_keys[] = {"amplitude", "times_ms", "amplitudes", "start_amplitude", "stop_amplitude", "values",
                                       "unit", "every_ms", "mean", "sigma"};

/* A quantity (a string, or a number read as its shortest text) for the
 * variable, in SI, the message naming the key. */
static bl_status quantity(const bl_pk_ctx *ctx, bl_plan *plan, const bl_toml_node *v, const char *path,
                          const char *var, double *out)
{
    const char *text;
    size_t len;
    char num[64];
    double x;
    if (!v)
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, path, "required (a quantity such as \"0.5 nA\")");
    if (bl_toml_get_string(v, &text, &len)) {
        if (strlen(text) != len)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "holds a NUL byte");
    } else if (bl_toml_type_of(v) != BL_TOML_BOOLEAN && bl_toml_get_double(v, &x)) {
        bl_pk_number(num, sizeof num, x);
        text = num;
    } else {
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a quantity such as \"0.5 nA\"");
    }
    bl_error e = {0};
    if (bl_eq_model_var_quantity(plan->eq, var, path, text, out, &e))
        return bl_pk_fail(ctx, e.status, v, path, "%s", e.message);
    if (!isfinite(*out))
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "not finite");
    return BL_OK;
}

static bl_status grow(const bl_pk_ctx *ctx, bl_pk_population *pop, size_t n)
{
    pop->current_values = calloc(n ? n : 1, sizeof *pop->current_values);
    pop->current_steps = calloc(n ? n : 1, sizeof *pop->current_steps);
    if (!pop->current_values || !pop->current_steps)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate %zu current values", n);
    return BL_OK;
}

/* values = "file.npy" (float64, 1-D), relative to the plan; hashed as read. */
static bl_status read_npy(const bl_pk_ctx *ctx, bl_plan *plan, const bl_toml_node *v, const char *path,
                          bl_pk_population *pop, double scale)
{
    const char *given;
    size_t len;
    if (!bl_toml_get_string(v, &given, &len) || !*given || strlen(given) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a list of numbers or the path of a .npy file");
    size_t need = strlen(plan->path) + len + 2;
    char *full = malloc(need), shown[256];
    if (!full)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a path");
    snprintf(full, need, "%s", plan->path);
    if (given[0] == '/')
        snprintf(full, need, "%s", given);
    else
        snprintf(strrchr(full, '/') + 1, need - (size_t)(strrchr(full, '/') + 1 - full), "%s", given);
    char *abs = realpath(full, NULL);
    int e = errno;
    free(full);
    bl_pk_printable(shown, sizeof shown, given, len);
    if (!abs)
        return bl_pk_fail(ctx, BL_ERR_IO, v, path, "\"%s\": %s", shown, strerror(e));
    bl_npy_array a;
    bl_error rerr = {0};
    char sha[65];
    uint64_t bytes = 0;
    bl_status st = bl_npy_read_hashed(abs, &a, sha, &bytes, &rerr);
    if (st) {
        free(abs);
        return bl_pk_fail(ctx, st, v, path, "\"%s\": %s", shown, rerr.message);
    }
    if (a.ndim != 1 || a.dtype != BL_DTYPE_FLOAT64 || a.count < 1 || a.count > MAX_CURRENT_VALUES)
        st = bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "\"%s\": expected float64 values, shape [K], 1 <= K <= %zu",
                        shown, MAX_CURRENT_VALUES);
    if (!st)
        st = grow(ctx, pop, a.count);
    for (uint64_t k = 0; !st && k < a.count; k++) {
        double x = ((const double *)a.data)[k];
        if (!isfinite(x))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "\"%s\": value %" PRIu64 " is not finite", shown, k);
        pop->current_values[k] = x * scale;
        if (!st && !isfinite(pop->current_values[k]))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "\"%s\": value %" PRIu64 " times the unit is not finite",
                            shown, k);
    }
    if (!st) {
        pop->current.n_values = a.count;
        memcpy(pop->current_sha256, sha, sizeof sha);
        st = bl_pk_add_input(plan, "stimulus current table", abs, sha, bytes, ctx->err);
    }
    bl_npy_free(&a);
    free(abs);
    return st;
}

bl_status bl_pk_read_current(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                             bl_pk_population *pop)
{
    char path[BL_PK_PATH_MAX], shown[64];
    const char *kind, *var = "I_inj";
    bl_status st;
    if ((st = bl_pk_string(ctx, node, where, "current", 1, &kind, NULL)) ||
        (st = bl_pk_string(ctx, node, where, "variable", 0, &var, NULL)))
        return st;
    int k = 0;
    while (k < 5 && strcmp(kind, kinds[k]))
        k++;
    bl_pk_join(path, sizeof path, where, "current", 7);
    if (k == 5) {
        bl_pk_printable(shown, sizeof shown, kind, strlen(kind));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "current"), path,
                          "\"%s\" is not a current (dc, step, ramp, table, noise)", shown);
    }
    if (!plan->eq)
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(node, "current"), path,
                          "current injection needs a model from equations ([model] equations or file) that "
                          "declares the variable it sets (I_inj : amp); a preset has none");
    /* Keys of another kind are mistakes, not defaults. */
    for (size_t j = 0; j < sizeof all_keys / sizeof *all_keys; j++) {
        int mine = 0;
        for (int q = 0; q < 4 && kind_keys[k][q]; q++)
            mine |= !strcmp(kind_keys[k][q], all_keys[j]);
        if (!mine && bl_toml_table_get(node, all_keys[j])) {
            bl_pk_join(path, sizeof path, where, all_keys[j], strlen(all_keys[j]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, all_keys[j]), path,
                              "not a key of a %s current", kinds[k]);
        }
    }
    bl_pk_join(path, sizeof path, where, "variable", 8);
    /* A current sets its variable at every step: a [model.per_neuron]
     * value of it would be overwritten without a word. */
    if (bl_eq_row_per_neuron_sets(plan->eq, var))
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "variable") ? bl_toml_table_get(node, "variable")
                          : node, path, "'%.64s' is set by [model.per_neuron]; a current replaces its value at every "
                          "step (declare another variable for the current)", var);
    if (!(pop->current_variable = bl_pk_strdup(var)))
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy a name");
    /* The window, in whole steps (llround, as a Poisson window's). */
    double start = 0, stop = plan->duration_ms, dt = plan->params.dt_ms;
    if ((st = bl_pk_double(ctx, node, where, "start_ms", 0, &start, NULL)) ||
        (st = bl_pk_double(ctx, node, where, "stop_ms", 0, &stop, NULL)))
        return st;
    if (!(start >= 0 && start < plan->duration_ms && stop > start && stop <= plan->duration_ms)) {
        bl_pk_join(path, sizeof path, where, "start_ms", 8);
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, path, "the window [%g, %g) ms must lie inside the trial [0, %g) "
                          "and not be empty", start, stop, plan->duration_ms);
    }
    bl_current *c = &pop->current;
    memset(c, 0, sizeof *c);
    c->kind = (bl_current_kind)k;
    c->start_step = (int64_t)llround(start / dt);
    c->stop_step = (int64_t)llround(stop / dt);
    if (c->stop_step <= c->start_step)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, where, "the window [%g, %g) ms holds no whole %g ms step", start,
                          stop, dt);
    char kp[BL_PK_PATH_MAX];
#define KEY(name) (bl_pk_join(kp, sizeof kp, where, name, strlen(name)), kp)
    switch (c->kind) {
    case BL_CURRENT_DC:
        st = quantity(ctx, plan, bl_toml_table_get(node, "amplitude"), KEY("amplitude"), var, &c->amplitude);
        break;
    case BL_CURRENT_NOISE:
        if (!(st = quantity(ctx, plan, bl_toml_table_get(node, "mean"), KEY("mean"), var, &c->amplitude)) &&
            !(st = quantity(ctx, plan, bl_toml_table_get(node, "sigma"), KEY("sigma"), var, &c->sigma)) &&
            !(c->sigma >= 0))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "sigma"), KEY("sigma"), "must be >= 0");
        break;
    case BL_CURRENT_RAMP:
        if (!(st = quantity(ctx, plan, bl_toml_table_get(node, "start_amplitude"), KEY("start_amplitude"), var, &c->from)))
            st = quantity(ctx, plan, bl_toml_table_get(node, "stop_amplitude"), KEY("stop_amplitude"), var, &c->to);
        break;
    case BL_CURRENT_STEP: {
        const bl_toml_node *t = bl_toml_table_get(node, "times_ms"), *a = bl_toml_table_get(node, "amplitudes");
        size_t n = bl_toml_array_size(t);
        if (bl_toml_type_of(t) != BL_TOML_ARRAY || bl_toml_type_of(a) != BL_TOML_ARRAY || !n ||
            n != bl_toml_array_size(a) || n > MAX_CURRENT_VALUES) {
            st = bl_pk_fail(ctx, BL_ERR_INVALID, t ? t : node, KEY("times_ms"),
                            "a step current needs times_ms = [...] and amplitudes = [...] of the same length (>= 1)");
            break;
        }
        if ((st = grow(ctx, pop, n)))
            break;
        for (size_t j = 0; !st && j < n; j++) {
            char ip[BL_PK_PATH_MAX];
            double ms;
            bl_pk_index(ip, sizeof ip, KEY("times_ms"), j);
            const bl_toml_node *tj = bl_toml_array_at(t, j);
            if (bl_toml_type_of(tj) == BL_TOML_BOOLEAN || !bl_toml_get_double(tj, &ms) || !(ms >= start && ms < stop))
                st = bl_pk_fail(ctx, BL_ERR_INVALID, tj, ip, "expected a time in ms inside the window [%g, %g)", start,
                                stop);
            else if ((pop->current_steps[j] = (int64_t)llround(ms / dt)),
                     j && pop->current_steps[j] <= pop->current_steps[j - 1])
                st = bl_pk_fail(ctx, BL_ERR_INVALID, tj, ip, "times must rise by at least one %g ms step", dt);
            bl_pk_index(ip, sizeof ip, KEY("amplitudes"), j);
            if (!st)
                st = quantity(ctx, plan, bl_toml_array_at(a, j), ip, var, &pop->current_values[j]);
        }
        c->n_values = n;
        break;
    }
    case BL_CURRENT_TABLE: {
        const char *unit;
        double every = dt, scale = 0;
        if ((st = bl_pk_string(ctx, node, where, "unit", 1, &unit, NULL)) ||
            (st = quantity(ctx, plan, bl_toml_table_get(node, "unit"), KEY("unit"), var, &scale)) ||
            (st = bl_pk_double(ctx, node, where, "every_ms", 0, &every, NULL)))
            break;
        double r = every / dt;
        c->every_steps = (int64_t)llround(r);
        if (!(r >= 1 && r < 1e12) || fabs(r - (double)c->every_steps) > 1e-9 * r) {
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "every_ms"), KEY("every_ms"),
                            "%g ms is not a whole number (>= 1) of %g ms steps", every, dt);
            break;
        }
        const bl_toml_node *v = bl_toml_table_get(node, "values");
        if (bl_toml_type_of(v) != BL_TOML_ARRAY) {
            st = v ? read_npy(ctx, plan, v, KEY("values"), pop, scale)
                   : bl_pk_fail(ctx, BL_ERR_INVALID, node, KEY("values"), "required (numbers, or a .npy file)");
            break;
        }
        size_t n = bl_toml_array_size(v);
        if (!n || n > MAX_CURRENT_VALUES) {
            st = bl_pk_fail(ctx, BL_ERR_INVALID, v, KEY("values"), "1 to %zu numbers", MAX_CURRENT_VALUES);
            break;
        }
        if ((st = grow(ctx, pop, n)))
            break;
        for (size_t j = 0; !st && j < n; j++) {
            double x = 0;
            const bl_toml_node *vj = bl_toml_array_at(v, j);
            if (bl_toml_type_of(vj) == BL_TOML_BOOLEAN || !bl_toml_get_double(vj, &x) || !isfinite(x)) {
                char ip[BL_PK_PATH_MAX];
                bl_pk_index(ip, sizeof ip, KEY("values"), j);
                st = bl_pk_fail(ctx, BL_ERR_INVALID, vj, ip, "expected a number (in %s)", unit);
            }
            pop->current_values[j] = x * scale;
            if (!st && !isfinite(pop->current_values[j])) {
                char ip[BL_PK_PATH_MAX];
                bl_pk_index(ip, sizeof ip, KEY("values"), j);
                st = bl_pk_fail(ctx, BL_ERR_INVALID, vj, ip, "%g %s is not a finite value", x, unit);
            }
        }
        c->n_values = n;
        break;
    }
    }
#undef KEY
    if (st)
        return st;
    c->variable = pop->current_variable;
    c->values = pop->current_values;
    c->steps = pop->current_steps;
    pop->view.current = c;
    return BL_OK;
}
