/* Stimulus protocols of a [[stimulus]] table (docs/stimulus-protocols.md):
 *
 *     rate_hz = 150  start_ms = 0  stop_ms = end     Poisson over one window
 *     rates = [[0, 200, 20], [200, 500, 150]]        a rate table: a step
 *                                                    function over windows
 *     baseline_hz = 20                               a tonic baseline with a
 *     modulation = { start_ms, stop_ms, rate_hz }    modulation window
 *     schedule = "events.npy"                        explicit (step, neuron)
 *                                                    pairs, int32 or int64 [K, 2],
 *                                                    relative to the plan file
 *     mode = "input" | "force"                       input to the membrane (the
 *                                                    model's Poisson input) or
 *                                                    forced spikes (bl_stimulus_set_force)
 *     current = "dc" | "step" | "ramp" | "table"     current injection into a model
 *               | "noise"                            from equations (plan_current.c)
 *
 * A rate table is one Poisson population per segment, in order, each with its
 * own stream index (the index counts segments over all [[stimulus]] tables in
 * order: bl_plan_add_stimulus). A baseline with a modulation is the rate table
 * [0, start) baseline, [start, stop) modulation, [stop, end) baseline, empty
 * segments left out. */
#include "plan/plan_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"

#define MAX_SEGMENTS 100000

static bl_status check_rate(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *v, const char *path,
                            double rate)
{
    double max_rate = 1000.0 / plan->params.dt_ms;
    if (rate >= 0 && rate <= max_rate)
        return BL_OK;
    char a[64], b[64];
    bl_pk_number(a, sizeof a, rate);
    bl_pk_number(b, sizeof b, max_rate);
    return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "%s Hz is out of range 0..%s (at most one event per %g ms step)",
                      a, b, plan->params.dt_ms);
}

/* rate_hz over [start_ms, stop_ms): the original single-window form. */
static bl_status read_window(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                             const bl_plan *plan, bl_pk_population *pop)
{
    double rate, start = 0, stop = plan->duration_ms;
    char path[BL_PK_PATH_MAX], a[64], b[64], c[64];
    bl_status st;
    if ((st = bl_pk_double(ctx, node, where, "rate_hz", 1, &rate, NULL)) ||
        (st = bl_pk_double(ctx, node, where, "start_ms", 0, &start, NULL)) ||
        (st = bl_pk_double(ctx, node, where, "stop_ms", 0, &stop, NULL)))
        return st;
    bl_pk_join(path, sizeof path, where, "rate_hz", 7);
    if ((st = check_rate(ctx, plan, bl_toml_table_get(node, "rate_hz"), path, rate)))
        return st;
    bl_pk_number(a, sizeof a, start);
    bl_pk_number(b, sizeof b, stop);
    bl_pk_number(c, sizeof c, plan->duration_ms);
    if (!(start >= 0 && start < plan->duration_ms)) {
        bl_pk_join(path, sizeof path, where, "start_ms", 8);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "start_ms"), path,
                          "%s ms is outside the trial [0, %s) ms", a, c);
    }
    if (!(stop > start && stop <= plan->duration_ms)) {
        bl_pk_join(path, sizeof path, where, "stop_ms", 7);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "stop_ms"), path,
                          "%s ms must be after start_ms (%s) and at most the duration (%s ms)", b, a, c);
    }
    pop->view.rate_hz = rate;
    pop->view.start_ms = start;
    pop->view.stop_ms = stop;
    return BL_OK;
}

static bl_status add_segment(const bl_pk_ctx *ctx, bl_pk_population *pop, double start, double stop, double rate)
{
    if (!(stop > start))
        return BL_OK; /* an empty segment (a modulation at the very start, say) */
    if (pop->view.n_segments >= MAX_SEGMENTS)
        return bl_fail(ctx->err, BL_ERR_INVALID, "%s: more than %d rate segments", ctx->file, MAX_SEGMENTS);
    double *grown = realloc(pop->segments, 3 * (pop->view.n_segments + 1) * sizeof *grown);
    if (!grown)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a rate table");
    pop->segments = grown;
    double *s = grown + 3 * pop->view.n_segments++;
    s[0] = start;
    s[1] = stop;
    s[2] = rate;
    return BL_OK;
}

/* rates = [[start_ms, stop_ms, rate_hz], ...]: in time order, not overlapping. */
static bl_status read_table(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, const bl_plan *plan,
                            bl_pk_population *pop)
{
    if (bl_toml_type_of(v) != BL_TOML_ARRAY || bl_toml_array_size(v) == 0)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path,
                          "expected a non-empty array of [start_ms, stop_ms, rate_hz] rows");
    double last = 0;
    for (size_t i = 0; i < bl_toml_array_size(v); i++) {
        const bl_toml_node *row = bl_toml_array_at(v, i);
        char rpath[BL_PK_PATH_MAX];
        bl_pk_index(rpath, sizeof rpath, path, i);
        double x[3];
        int ok = bl_toml_type_of(row) == BL_TOML_ARRAY && bl_toml_array_size(row) == 3;
        for (size_t k = 0; ok && k < 3; k++)
            ok = bl_toml_type_of(bl_toml_array_at(row, k)) != BL_TOML_BOOLEAN &&
                 bl_toml_get_double(bl_toml_array_at(row, k), &x[k]) && isfinite(x[k]);
        if (!ok)
            return bl_pk_fail(ctx, BL_ERR_INVALID, row, rpath, "expected [start_ms, stop_ms, rate_hz] (3 numbers)");
        if (!(x[0] >= last && x[1] > x[0] && x[1] <= plan->duration_ms))
            return bl_pk_fail(ctx, BL_ERR_INVALID, row, rpath,
                              "the window [%g, %g) ms must start at or after the previous one's end (%g ms), be "
                              "non-empty and end inside the trial (%g ms)", x[0], x[1], last, plan->duration_ms);
        bl_status st = check_rate(ctx, plan, row, rpath, x[2]);
        if (st || (st = add_segment(ctx, pop, x[0], x[1], x[2])))
            return st;
        last = x[1];
    }
    return BL_OK;
}

static bl_status read_modulation(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                                 const bl_plan *plan, bl_pk_population *pop)
{
    double base, start, stop, rate;
    const bl_toml_node *mod = NULL;
    char path[BL_PK_PATH_MAX];
    static const char *const keys[] = {"start_ms", "stop_ms", "rate_hz", NULL};
    bl_status st = bl_pk_double(ctx, node, where, "baseline_hz", 1, &base, NULL);
    bl_pk_join(path, sizeof path, where, "baseline_hz", 11);
    if (st || (st = check_rate(ctx, plan, bl_toml_table_get(node, "baseline_hz"), path, base)))
        return st;
    if ((st = bl_pk_table(ctx, node, where, "modulation", 0, &mod)))
        return st;
    if (!mod)
        return add_segment(ctx, pop, 0, plan->duration_ms, base);
    bl_pk_join(path, sizeof path, where, "modulation", 10);
    stop = plan->duration_ms;
    if ((st = bl_pk_check_keys(ctx, mod, path, keys)) ||
        (st = bl_pk_double(ctx, mod, path, "start_ms", 1, &start, NULL)) ||
        (st = bl_pk_double(ctx, mod, path, "stop_ms", 0, &stop, NULL)) ||
        (st = bl_pk_double(ctx, mod, path, "rate_hz", 1, &rate, NULL)) ||
        (st = check_rate(ctx, plan, bl_toml_table_get(mod, "rate_hz"), path, rate)))
        return st;
    if (!(start >= 0 && stop > start && stop <= plan->duration_ms))
        return bl_pk_fail(ctx, BL_ERR_INVALID, mod, path, "the window [%g, %g) ms must lie inside the trial [0, %g)",
                          start, stop, plan->duration_ms);
    if ((st = add_segment(ctx, pop, 0, start, base)) || (st = add_segment(ctx, pop, start, stop, rate)))
        return st;
    return add_segment(ctx, pop, stop, plan->duration_ms, base);
}

/* schedule = "file.npy": (step, neuron) rows, read and hashed as an input. */
static bl_status read_schedule(const bl_pk_ctx *ctx, const bl_toml_node *v, const char *path, bl_plan *plan,
                               bl_pk_population *pop)
{
    const char *given;
    size_t len;
    if (!bl_toml_get_string(v, &given, &len) || !*given || strlen(given) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected the path of a .npy file (relative to the plan)");
    size_t need = strlen(plan->path) + len + 2;
    char *full = malloc(need);
    if (!full)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a path");
    if (given[0] == '/') {
        snprintf(full, need, "%s", given);
    } else {
        snprintf(full, need, "%s", plan->path);
        char *slash = strrchr(full, '/');
        snprintf(slash + 1, need - (size_t)(slash + 1 - full), "%s", given);
    }
    char *abs = realpath(full, NULL);
    int e = errno;
    free(full);
    char shown[256];
    bl_pk_printable(shown, sizeof shown, given, len);
    if (!abs)
        return bl_pk_fail(ctx, BL_ERR_IO, v, path, "\"%s\": %s", shown, strerror(e));
    bl_npy_array a;
    bl_error rerr = {0};
    /* Hashed as parsed (one read): the record names the schedule that ran. */
    char sha[65];
    uint64_t bytes = 0;
    bl_status st = bl_npy_read_hashed(abs, &a, sha, &bytes, &rerr);
    if (st) {
        free(abs);
        return bl_pk_fail(ctx, st, v, path, "\"%s\": %s", shown, rerr.message);
    }
    if (a.ndim != 2 || a.shape[1] != 2 || (a.dtype != BL_DTYPE_INT32 && a.dtype != BL_DTYPE_INT64)) {
        bl_npy_free(&a);
        free(abs);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "\"%s\": expected int32 or int64 rows (step, neuron), shape "
                          "[K, 2]", shown);
    }
    uint64_t k = a.shape[0];
    pop->schedule = malloc((k ? 2 * k : 1) * sizeof *pop->schedule);
    for (uint64_t i = 0; pop->schedule && !st && i < 2 * k; i++) {
        int64_t x = a.dtype == BL_DTYPE_INT32 ? ((const int32_t *)a.data)[i] : ((const int64_t *)a.data)[i];
        if (x < 0 || x > INT32_MAX || (i % 2 == 0 && (uint64_t)x >= plan->steps))
            st = bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "\"%s\": row %" PRIu64 ": %s %" PRId64 " is outside 0..%" PRIu64,
                            shown, i / 2, i % 2 ? "neuron" : "step", x, i % 2 ? (uint64_t)INT32_MAX : plan->steps - 1);
        else
            pop->schedule[i] = (int32_t)x;
    }
    bl_npy_free(&a);
    if (!pop->schedule && !st)
        st = bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a schedule of %" PRIu64 " rows", k);
    pop->view.n_schedule = k;
    if (!st)
        st = bl_pk_add_input(plan, "stimulus schedule", abs, sha, bytes, ctx->err);
    if (!st)
        memcpy(pop->schedule_sha256, sha, sizeof sha);
    free(abs);
    return st;
}

bl_status bl_pk_read_protocol(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where, bl_plan *plan,
                              bl_pk_population *pop)
{
    static const char *const forms[] = {"rate_hz", "rates", "baseline_hz", "schedule", "current"};
    int form = -1;
    char path[BL_PK_PATH_MAX];
    for (int k = 0; k < 5; k++)
        if (bl_toml_table_get(node, forms[k])) {
            if (form >= 0) {
                bl_pk_join(path, sizeof path, where, forms[k], strlen(forms[k]));
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, forms[k]), path,
                                  "a stimulus takes one of rate_hz, rates, baseline_hz, schedule or current, and '%s' is "
                                  "given too", forms[form]);
            }
            form = k;
        }
    const char *mode = "input";
    bl_status st = bl_pk_string(ctx, node, where, "mode", 0, &mode, NULL);
    if (st)
        return st;
    if (strcmp(mode, "input") && strcmp(mode, "force")) {
        char shown[64];
        bl_pk_printable(shown, sizeof shown, mode, strlen(mode));
        bl_pk_join(path, sizeof path, where, "mode", 4);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "mode"), path,
                          "\"%s\" is not a mode (input or force)", shown);
    }
    pop->view.force = !strcmp(mode, "force");
    /* Keys that belong to another form are mistakes, not defaults. */
    static const char *const window_keys[] = {"start_ms", "stop_ms"};
    for (int k = 0; form > 0 && form != 4 && k < 2; k++)
        if (bl_toml_table_get(node, window_keys[k])) {
            bl_pk_join(path, sizeof path, where, window_keys[k], strlen(window_keys[k]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, window_keys[k]), path,
                              "start_ms and stop_ms go with rate_hz (a %s has its own windows)", forms[form]);
        }
    /* A current's keys on a Poisson or schedule stimulus would be ignored. */
    static const char *const current_keys[] = {"variable", "amplitude", "times_ms", "amplitudes", "start_amplitude",
                                               "stop_amplitude", "values", "unit", "every_ms", "mean", "sigma"};
    for (size_t k = 0; form != 4 && k < sizeof current_keys / sizeof *current_keys; k++)
        if (bl_toml_table_get(node, current_keys[k])) {
            bl_pk_join(path, sizeof path, where, current_keys[k], strlen(current_keys[k]));
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, current_keys[k]), path,
                              "goes with current = \"dc\" | \"step\" | \"ramp\" | \"table\" | \"noise\"");
        }
    if (form != 2 && bl_toml_table_get(node, "modulation")) {
        bl_pk_join(path, sizeof path, where, "modulation", 10);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "modulation"), path,
                          "modulation goes with baseline_hz");
    }
    pop->view.start_ms = 0;
    pop->view.stop_ms = plan->duration_ms;
    switch (form) {
    case 1:
        bl_pk_join(path, sizeof path, where, "rates", 5);
        return read_table(ctx, bl_toml_table_get(node, "rates"), path, plan, pop);
    case 2:
        return read_modulation(ctx, node, where, plan, pop);
    case 4:
        if (pop->view.force) {
            bl_pk_join(path, sizeof path, where, "mode", 4);
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "mode"), path,
                              "a current is input to a variable; it cannot force spikes");
        }
        return bl_pk_read_current(ctx, node, where, plan, pop);
    case 3:
        bl_pk_join(path, sizeof path, where, "schedule", 8);
        return read_schedule(ctx, bl_toml_table_get(node, "schedule"), path, plan, pop);
    default: /* rate_hz (also what a table without any of them is asked for) */
        return read_window(ctx, node, where, plan, pop);
    }
}

bl_status bl_pk_check_schedule(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                               const bl_pk_population *pop)
{
    for (size_t i = 0; i < pop->view.n_schedule; i++) {
        int32_t x = pop->schedule[2 * i + 1];
        size_t lo = 0, hi = pop->view.n_neurons;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pop->neurons[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == pop->view.n_neurons || pop->neurons[lo] != x) {
            char path[BL_PK_PATH_MAX];
            bl_pk_join(path, sizeof path, where, "schedule", 8);
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "schedule"), path,
                              "row %zu: neuron %" PRId32 " is not in the stimulus's population", i, x);
        }
    }
    return BL_OK;
}
