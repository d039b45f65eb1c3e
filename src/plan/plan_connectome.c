/* The "connectome" operation: a connectome LIF experiment.
 *
 *     [connectome] path = "dir"            relative to the plan file
 *     [model] preset = "shiu2024"          or another row of the model table
 *     [model] file = "m.toml"              or a model file, relative to the plan
 *     [model.parameters] name = number     overrides (bl_lif_param_names)
 *     [[population]] name, selector criteria (plan_population.c)
 *     [[stimulus]] name, selector, rate_hz, start_ms = 0, stop_ms = end of trial
 *     [[silence]] name, selector
 *     [run] trials = 1, duration_ms, seed, backend = "auto", threads = 0
 *     [outputs] spikes, counts, state, propagation = true, top_responders = 20
 *
 * Everything that does not need the connectome is checked before it is
 * loaded (a FlyWire-scale load takes seconds; a typo should not). */
#include "plan/plan_impl.h"
#include "plan/plan_op.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/hash.h"
#include "core/file.h"
#include "models/eq_part.h"
#include "models/eq_edges.h"
#include "models/eq_row.h"
#include "models/model_table.h"
#include "plan/plan_cjson.h"

static const char *const top_keys[] = {"format", "format_version", "id", "operation", "description",
                                       "connectome", "model", "population", "stimulus", "silence",
                                       "run", "outputs", NULL};
static const char *const screen_top_keys[] = {"format", "format_version", "id", "operation", "description",
                                              "connectome", "model", "population", "stimulus", "silence",
                                              "run", "outputs", "screen", NULL};
static const char *const connectome_keys[] = {"path", NULL};
static const char *const model_keys[] = {"preset", "parameters", NULL};
/* A model written in the model language (docs/models.md), in place of a preset. */
static const char *const eq_model_keys[] = {"equations", "method", "threshold", "reset", "refractory", "on_pre",
                                            "on_input", "weight", "delay", "parameters", "init", "synapses",
                                            "on_pre_exc", "on_pre_inh", "on_post", "refractory_input", "per_neuron",
                                            "on_pre_by", NULL};
static const char *const run_keys[] = {"trials", "duration_ms", "seed", "backend", "threads", NULL};
static const char *const output_keys[] = {"spikes", "counts", "state", "propagation",
                                          "top_responders", "psth", "probes", NULL};
static const char *const stimulus_keys[] = {"name", "neurons", "ids", "select", "population",
                                            "rate_hz", "start_ms", "stop_ms", "mode", "rates", "baseline_hz",
                                            "modulation", "schedule", "current", "variable", "amplitude",
                                            "times_ms", "amplitudes", "start_amplitude", "stop_amplitude", "values", "unit", "every_ms",
                                            "mean", "sigma", NULL};
static const char *const silence_keys[] = {"name", "neurons", "ids", "select", "population", NULL};

/* The [model] table as the resolved plan records it (so that the plan hash
 * covers the model's text): its strings as written, numbers as numbers. */
/* A scalar (string or number) into object t, or into array t when key is NULL. */
static void eq_record_scalar(bl_cj *b, cJSON *t, const char *key, const bl_toml_node *v)
{
    const char *str;
    size_t len;
    double x;
    cJSON *item = NULL;
    if (bl_toml_get_string(v, &str, &len)) {
        if (key)
            bl_cj_str(b, t, key, str);
        else
            item = bl_cj_check(b, cJSON_CreateString(str));
    } else if (bl_toml_get_double(v, &x)) {
        if (key)
            bl_cj_num(b, t, key, x);
        else
            item = bl_cj_check(b, cJSON_CreateNumber(x));
    }
    if (item)
        cJSON_AddItemToArray(t, item);
}

static char *eq_record(const bl_toml_node *model)
{
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    for (size_t j = 0; root && j < bl_toml_table_size(model); j++) {
        size_t len;
        const char *key = bl_toml_table_key(model, j, &len), *str;
        const bl_toml_node *v = bl_toml_table_value(model, j);
        if (bl_toml_type_of(v) == BL_TOML_TABLE) {
            cJSON *t = bl_cj_obj(&b, root, key);
            for (size_t k = 0; t && k < bl_toml_table_size(v); k++) {
                const char *pk = bl_toml_table_key(v, k, &len);
                const bl_toml_node *pv = bl_toml_table_value(v, k);
                if (bl_toml_type_of(pv) != BL_TOML_TABLE) {
                    eq_record_scalar(&b, t, pk, pv);
                    continue;
                }
                /* [model.per_neuron]: name = { column = ..., unit = ... } or
                 * { normal = [mean, sd] } (values as written) */
                cJSON *e = bl_cj_obj(&b, t, pk);
                for (size_t q = 0; e && q < bl_toml_table_size(pv); q++) {
                    const char *ek = bl_toml_table_key(pv, q, &len);
                    const bl_toml_node *ev = bl_toml_table_value(pv, q);
                    if (bl_toml_type_of(ev) != BL_TOML_ARRAY) {
                        eq_record_scalar(&b, e, ek, ev);
                        continue;
                    }
                    cJSON *a = bl_cj_check(&b, cJSON_CreateArray());
                    if (!a)
                        break;
                    cJSON_AddItemToObject(e, ek, a);
                    for (size_t r = 0; r < bl_toml_array_size(ev); r++)
                        eq_record_scalar(&b, a, NULL, bl_toml_array_at(ev, r));
                }
            }
        } else if (bl_toml_get_string(v, &str, &len)) {
            bl_cj_str(&b, root, key, str);
        }
    }
    return root ? bl_cj_finish(&b, root, 0) : NULL;
}

/* [model] with equations: compiled here, once (dt is the default step), and
 * run by the "equations" row of the model table. The stimulus rules of the
 * connectome engine (the Poisson-target refractory rule among them) are the
 * preset's. */
static bl_status read_eq_model(const bl_pk_ctx *ctx, const bl_toml_node *model, bl_plan *plan)
{
    bl_status st = bl_pk_check_keys(ctx, model, "model", eq_model_keys);
    if (st)
        return st;
    if (bl_lif_params_preset("equations", &plan->params, ctx->err))
        return ctx->err ? ctx->err->status : BL_ERR_INVALID;
    const char *delay = NULL;
    bl_error e = {0};
    bl_eq_model *m = NULL;
    st = bl_eq_model_from_toml(model, "model", plan->params.dt_ms * 0.001, 0, NULL, NULL, 1, &m, &delay, &e);
    double delay_s = 0;
    if (!st && !delay)
        st = bl_fail(&e, BL_ERR_INVALID, "model: a connectome model needs a delay (\"1.8 ms\", or \"%s\": "
                     "each edge's from the connectome's delays.npy)", BL_EQ_DELAY_PER_EDGE);
    /* Per-edge delays (docs/models.md "Synapses"): checked against the
     * connectome when the network is made; the engine's window is then the
     * smallest of them, and the plan's delay field holds one step. */
    int per_edge = !st && !strcmp(delay, BL_EQ_DELAY_PER_EDGE);
    if (per_edge)
        delay_s = plan->params.dt_ms * 0.001;
    else if (!st)
        st = bl_eq_model_time(m, "delay", delay, &delay_s, &e);
    if (!st)
        bl_eq_row_set_edge_delays(m, per_edge);
    if (!st)
        st = bl_eq_row_check(m, &e);
    /* The delay is a whole number of steps, at least one (the engine's
     * window), as the presets' delay_ms is. */
    double dt_ms = plan->params.dt_ms, steps = delay_s * 1000.0 / dt_ms;
    if (!st && !(steps >= 0.5 && steps < 1e7))
        st = bl_fail(&e, BL_ERR_INVALID, "model: delay \"%.60s\" must be at least one %g ms step and below "
                     "10^7 steps", delay, dt_ms);
    if (!st && fabs(steps - (double)llround(steps)) > 1e-6)
        st = bl_fail(&e, BL_ERR_INVALID, "model: delay \"%.60s\" is not a whole number of %g ms steps", delay, dt_ms);
    if (st) {
        bl_eq_model_destroy(m);
        return bl_pk_fail(ctx, e.status, model, NULL, "%s", e.message);
    }
    plan->eq = m;
    /* The engine's delay and refractory period in steps, through the LIF
     * fields the network reads (a whole number of steps each). */
    int64_t rfc = bl_eq_row_refractory_steps(m);
    plan->params.delay_ms = (double)llround(steps) * dt_ms;
    plan->params.refractory_ms = rfc > 0 ? (double)rfc * dt_ms : 0.0;
    plan->params.equations = m;
    if (!(plan->preset = bl_pk_strdup("equations")) || !(plan->eq_json = eq_record(model)))
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy the model");
    if (bl_lif_params_validate(&plan->params, &e))
        return bl_pk_fail(ctx, e.status, model, "model", "%s", e.message);
    return BL_OK;
}

/* [model] file = "path.toml": a model file (its own [model] table, the same
 * keys as a written model), relative to the plan. Read once and hashed as
 * read (the record's inputs name those bytes); its [model] table is recorded
 * in the resolved plan as an inline one is, so a plan naming the file and a
 * plan holding the same table have the same model text in their hash. */
static bl_status read_model_file(const bl_pk_ctx *ctx, const bl_toml_node *model, bl_plan *plan)
{
    static const char *const file_keys[] = {"file", NULL};
    const char *given;
    size_t len;
    bl_status st = bl_pk_check_keys(ctx, model, "model", file_keys);
    if (st || (st = bl_pk_string(ctx, model, "model", "file", 1, &given, NULL)))
        return st;
    const bl_toml_node *node = bl_toml_table_get(model, "file");
    if (!bl_toml_get_string(node, &given, &len))
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, "model.file", "expected a string");
    char shown[256];
    bl_pk_printable(shown, sizeof shown, given, len);
    if (!*given || strlen(given) != len)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, "model.file", "expected the path of a model file (.toml, "
                          "relative to the plan)");
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
    if (!abs)
        return bl_pk_fail(ctx, BL_ERR_IO, node, "model.file", "\"%s\": %s", shown, strerror(e));
    uint8_t *text = NULL;
    size_t n = 0;
    char sha[65];
    bl_error rerr = {0};
    bl_toml_doc *doc = NULL;
    st = bl_read_input(abs, BL_TOML_MAX_BYTES, &text, &n, sha, &rerr);
    if (!st)
        st = bl_toml_parse_text((const char *)text, n, given, &doc, &rerr);
    if (st) {
        free(text);
        free(abs);
        return bl_pk_fail(ctx, st, node, "model.file", "\"%s\": %s", shown, rerr.message);
    }
    /* Messages about the file's model name the file and its lines. */
    bl_pk_ctx fctx = {given, ctx->err};
    const bl_toml_node *fmodel = bl_toml_table_get(bl_toml_root(doc), "model");
    if (!fmodel || bl_toml_type_of(fmodel) != BL_TOML_TABLE)
        st = bl_fail(ctx->err, BL_ERR_INVALID, "%s: model.file \"%s\": no [model] table", ctx->file, shown);
    else if (!bl_toml_table_get(fmodel, "equations"))
        st = bl_fail(ctx->err, BL_ERR_INVALID, "%s: model.file \"%s\": its [model] table has no equations "
                     "(a model file writes the model; a preset is named in the plan)", ctx->file, shown);
    else
        st = read_eq_model(&fctx, fmodel, plan);
    if (!st)
        st = bl_pk_add_input(plan, "model file", abs, sha, n, ctx->err);
    bl_toml_destroy(doc);
    free(text);
    free(abs);
    return st;
}

static bl_status read_model(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *model, *params = NULL;
    const char *preset = "shiu2024";
    bl_status st = bl_pk_table(ctx, root, "", "model", 0, &model);
    if (!st && model && bl_toml_table_get(model, "file"))
        return read_model_file(ctx, model, plan);
    if (!st && model && bl_toml_table_get(model, "equations")) {
        if (bl_toml_table_get(model, "preset"))
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(model, "preset"), "model.preset",
                              "a model is either a preset or equations, not both");
        return read_eq_model(ctx, model, plan);
    }
    if (!st && model && !(st = bl_pk_check_keys(ctx, model, "model", model_keys)))
        if (!(st = bl_pk_string(ctx, model, "model", "preset", 0, &preset, NULL)))
            st = bl_pk_table(ctx, model, "model", "parameters", 0, &params);
    if (st)
        return st;
    if (bl_lif_params_preset(preset, &plan->params, NULL)) {
        char shown[128], known[256];
        bl_pk_printable(shown, sizeof shown, preset, strlen(preset));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(model, "preset"), "model.preset",
                          "unknown preset \"%s\" (known: %s)", shown, bl_model_names(known, sizeof known));
    }
    if (!(plan->preset = bl_pk_strdup(preset)))
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy the preset name");

    const char *const *names = bl_lif_param_names();
    for (size_t i = 0; i < bl_toml_table_size(params); i++) {
        size_t len;
        const char *key = bl_toml_table_key(params, i, &len);
        const bl_toml_node *v = bl_toml_table_value(params, i);
        char path[BL_PK_PATH_MAX], got[160];
        int known = 0;
        for (const char *const *n = names; *n && !known; n++)
            known = strlen(*n) == len && !memcmp(*n, key, len);
        bl_pk_join(path, sizeof path, "model.parameters", key, len);
        if (!known) {
            char list[512] = "";
            size_t o = 0;
            for (const char *const *n = names; *n && o < sizeof list; n++)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", n == names ? "" : ", ", *n);
            bl_pk_describe(v, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "unknown model parameter (given %s; known: %s)",
                              got, list);
        }
        double x;
        int b;
        /* The one switch among the parameters reads naturally as a boolean. */
        if (bl_toml_get_bool(v, &b) && !strcmp(key, "poisson_refractory_zero"))
            x = b;
        else if (bl_toml_type_of(v) == BL_TOML_BOOLEAN || !bl_toml_get_double(v, &x)) {
            bl_pk_describe(v, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, path, "expected a number, got %s", got);
        }
        bl_error e = {0};
        if (bl_lif_params_set(&plan->params, key, x, &e))
            return bl_pk_fail(ctx, e.status, v, path, "%s", e.message);
    }
    /* The model row's one rule (ranges, whole steps, relations), as for every
     * other caller of bl_lif_params_validate. */
    bl_error e = {0};
    if (bl_lif_params_validate(&plan->params, &e))
        return bl_pk_fail(ctx, e.status, params ? params : model, params ? "model.parameters" : "model",
                          "%s", e.message);
    return BL_OK;
}

static bl_status read_run(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *run;
    int64_t trials = 1, seed = 0, threads = 0;
    const char *backend = "auto";
    bl_status st = bl_pk_table(ctx, root, "", "run", 1, &run);
    if (st || (st = bl_pk_check_keys(ctx, run, "run", run_keys)) ||
        (st = bl_pk_int(ctx, run, "run", "trials", 0, 1, BL_PLAN_MAX_TRIALS, &trials, NULL)) ||
        (st = bl_pk_double(ctx, run, "run", "duration_ms", 1, &plan->duration_ms, NULL)) ||
        (st = bl_pk_int(ctx, run, "run", "seed", 1, 0, INT64_MAX, &seed, NULL)) ||
        (st = bl_pk_string(ctx, run, "run", "backend", 0, &backend, NULL)) ||
        (st = bl_pk_int(ctx, run, "run", "threads", 0, 0, BL_PLAN_MAX_THREADS, &threads, NULL)))
        return st;
    const bl_toml_node *dur = bl_toml_table_get(run, "duration_ms");
    char shown[64];
    bl_pk_number(shown, sizeof shown, plan->duration_ms);
    if (!(plan->duration_ms > 0))
        return bl_pk_fail(ctx, BL_ERR_INVALID, dur, "run.duration_ms", "%s ms must be > 0", shown);
    bl_error e = {0};
    if (bl_lif_steps(&plan->params, plan->duration_ms, &plan->steps, &e))
        return bl_pk_fail(ctx, BL_ERR_INVALID, dur, "run.duration_ms", "%s", e.message);
    /* Exact runs have a whole number of steps: a duration that rounds would
     * make the record say one thing and the engine run another. */
    double r = plan->duration_ms / plan->params.dt_ms;
    if (fabs(r - (double)plan->steps) > 1e-9 * (double)plan->steps)
        return bl_pk_fail(ctx, BL_ERR_INVALID, dur, "run.duration_ms",
                          "%s ms is not a whole number of %g ms steps", shown, plan->params.dt_ms);
    if (!bl_pk_valid_name(backend, strlen(backend))) {
        char b[128];
        bl_pk_printable(b, sizeof b, backend, strlen(backend));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(run, "backend"), "run.backend",
                          "\"%s\" is not a backend name ([A-Za-z0-9._-]+)", b);
    }
    /* A model from equations runs on every backend that steps the
     * reference kernel or falls back to it (the backend's row says:
     * reference, cpu, auto); one that steps only the partition kernel (mpi)
     * runs it where that kernel can (bl_eq_part_supports; what depends on
     * the connectome, such as its weight column, is the engine's to check).
     * Refuse what cannot run it before anything is reserved. A name no
     * backend has is refused with the list (bl_pk_sense_run). */
    const unsigned caps = bl_backend_caps(backend);
    const char *why = NULL;
    if (plan->eq && caps && !(caps & (BL_BACKEND_REF_KERNEL | BL_BACKEND_FALLS_BACK)) &&
        (!(caps & BL_BACKEND_PART_KERNEL) || !bl_eq_part_supports(plan->eq, &why)))
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(run, "backend"), "run.backend",
                          "backend \"%s\" cannot run this model from equations: %s (the reference backend "
                          "runs every model; \"cpu\" and \"auto\" fall back to it)", backend,
                          why ? why : "it steps neither the reference nor the partition kernel");
    plan->trials = (uint32_t)trials;
    plan->seed = (uint64_t)seed;
    plan->has_seed = 1;
    plan->threads = (int)threads;
    plan->backend = bl_pk_strdup(backend);
    if (!plan->backend)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy the backend name");
    return bl_pk_sense_run(ctx, run, plan);
}

static bl_status read_outputs(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *out;
    int64_t top = 20;
    plan->out_spikes = plan->out_counts = plan->out_state = plan->out_propagation = 1;
    bl_status st = bl_pk_table(ctx, root, "", "outputs", 0, &out);
    if (st || !out)
        goto done;
    /* spikes = true | false | "POPULATION" (only that named population's spikes). */
    const bl_toml_node *spikes = bl_toml_table_get(out, "spikes");
    const char *subset;
    size_t len;
    if ((st = bl_pk_check_keys(ctx, out, "outputs", output_keys)))
        return st;
    if (spikes && bl_toml_get_string(spikes, &subset, &len))
        plan->out_spikes = 1; /* resolved once the populations are (bl_pk_resolve_outputs) */
    else if ((st = bl_pk_bool(ctx, out, "outputs", "spikes", 0, &plan->out_spikes, NULL)))
        return st;
    if ((st = bl_pk_bool(ctx, out, "outputs", "counts", 0, &plan->out_counts, NULL)) ||
        (st = bl_pk_bool(ctx, out, "outputs", "state", 0, &plan->out_state, NULL)) ||
        (st = bl_pk_bool(ctx, out, "outputs", "propagation", 0, &plan->out_propagation, NULL)) ||
        (st = bl_pk_int(ctx, out, "outputs", "top_responders", 0, 0, BL_PLAN_MAX_TOP_RESPONDERS, &top,
                        NULL)))
        return st;
    const bl_toml_node *probes = bl_toml_table_get(out, "probes");
    if (probes) {
        static const char *const probe_keys[] = {"population", "every_ms", NULL};
        const char *pname;
        double every;
        if (bl_toml_type_of(probes) != BL_TOML_TABLE)
            return bl_pk_fail(ctx, BL_ERR_INVALID, probes, "outputs.probes",
                              "expected a table { population = \"NAME\", every_ms = ... }");
        if ((st = bl_pk_check_keys(ctx, probes, "outputs.probes", probe_keys)) ||
            (st = bl_pk_string(ctx, probes, "outputs.probes", "population", 1, &pname, NULL)) ||
            (st = bl_pk_double(ctx, probes, "outputs.probes", "every_ms", 1, &every, NULL)))
            return st;
        double r = every / plan->params.dt_ms;
        if (!(r >= 1) || fabs(r - nearbyint(r)) > 1e-9 * r)
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(probes, "every_ms"), "outputs.probes.every_ms",
                              "%g ms is not a whole number (>= 1) of %g ms steps", every, plan->params.dt_ms);
        plan->probe_every_steps = (uint64_t)nearbyint(r);
        plan->probe_every_ms = every;
    }
    const bl_toml_node *psth = bl_toml_table_get(out, "psth");
    if (psth) {
        static const char *const psth_keys[] = {"populations", "bin_ms", NULL};
        if (bl_toml_type_of(psth) != BL_TOML_TABLE)
            return bl_pk_fail(ctx, BL_ERR_INVALID, psth, "outputs.psth",
                              "expected a table { populations = [...], bin_ms = ... }");
        if ((st = bl_pk_check_keys(ctx, psth, "outputs.psth", psth_keys)) ||
            (st = bl_pk_double(ctx, psth, "outputs.psth", "bin_ms", 1, &plan->psth_bin_ms, NULL)))
            return st;
        double r = plan->psth_bin_ms / plan->params.dt_ms;
        if (!(r >= 1) || fabs(r - nearbyint(r)) > 1e-9 * r)
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(psth, "bin_ms"), "outputs.psth.bin_ms",
                              "%g ms is not a whole number (>= 1) of %g ms steps", plan->psth_bin_ms,
                              plan->params.dt_ms);
        plan->psth_bin_steps = (uint64_t)nearbyint(r);
        const bl_toml_node *pops = bl_toml_table_get(psth, "populations");
        if (!pops || bl_toml_type_of(pops) != BL_TOML_ARRAY || bl_toml_array_size(pops) == 0)
            return bl_pk_fail(ctx, BL_ERR_INVALID, pops ? pops : psth, "outputs.psth.populations",
                              "expected a non-empty array of [[population]] names");
    }
done:
    plan->top_responders = (int)top;
    return st;
}

/* outputs.spikes = "NAME" and outputs.psth.populations, once the named
 * populations are resolved. */
static bl_status resolve_outputs(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    const bl_toml_node *out = bl_toml_table_get(root, "outputs");
    const bl_toml_node *spikes = bl_toml_table_get(out, "spikes");
    const char *name;
    size_t len;
    bl_status st = BL_OK;
    if (spikes && bl_toml_get_string(spikes, &name, &len)) {
        const bl_pk_population *p;
        if ((st = bl_pk_find_named(ctx, plan, spikes, "outputs.spikes", plan->n_named, &p)))
            return st;
        plan->spikes_subset = &p->view;
    }
    const bl_toml_node *probe_pop = bl_toml_table_get(bl_toml_table_get(out, "probes"), "population");
    if (probe_pop) {
        const bl_pk_population *p;
        if ((st = bl_pk_find_named(ctx, plan, probe_pop, "outputs.probes.population", plan->n_named, &p)))
            return st;
        plan->probe_pop = &p->view;
    }
    const bl_toml_node *pops = bl_toml_table_get(bl_toml_table_get(out, "psth"), "populations");
    size_t n = pops ? bl_toml_array_size(pops) : 0;
    if (!n)
        return BL_OK;
    if (!(plan->psth_pops = calloc(n, sizeof *plan->psth_pops)))
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate the PSTH populations");
    for (size_t i = 0; i < n; i++) {
        const bl_pk_population *p;
        char path[BL_PK_PATH_MAX];
        bl_pk_index(path, sizeof path, "outputs.psth.populations", i);
        if ((st = bl_pk_find_named(ctx, plan, bl_toml_array_at(pops, i), path, plan->n_named, &p)))
            return st;
        plan->psth_pops[i] = &p->view;
        plan->n_psth_pops = i + 1;
    }
    return BL_OK;
}

/* The array of population tables at `key` (absent: none). */
static bl_status population_array(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *key,
                                   const bl_toml_node **out, size_t *n)
{
    const bl_toml_node *v = bl_toml_table_get(root, key);
    *out = v;
    *n = 0;
    if (!v)
        return BL_OK;
    if (bl_toml_type_of(v) != BL_TOML_ARRAY) {
        char got[160];
        bl_pk_describe(v, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "expected an array of tables ([[%s]]), got %s",
                          key, got);
    }
    *n = bl_toml_array_size(v);
    if (*n > BL_PLAN_MAX_POPULATIONS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "%zu populations is more than the limit %d", *n,
                          BL_PLAN_MAX_POPULATIONS);
    for (size_t i = 0; i < *n; i++) {
        const bl_toml_node *e = bl_toml_array_at(v, i);
        if (bl_toml_type_of(e) != BL_TOML_TABLE) {
            char path[BL_PK_PATH_MAX], got[160];
            bl_pk_index(path, sizeof path, key, i);
            bl_pk_describe(e, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, e, path, "expected a table, got %s", got);
        }
    }
    return BL_OK;
}

/* Name and (for stimuli) rate and window; the selector waits for the connectome. */
static bl_status read_population(const bl_pk_ctx *ctx, const bl_toml_node *node, const char *where,
                                 int stimulus, const bl_plan *plan, bl_pk_population *pop)
{
    const char *name;
    bl_status st = bl_pk_check_keys(ctx, node, where, stimulus ? stimulus_keys : silence_keys);
    if (st || (st = bl_pk_string(ctx, node, where, "name", 1, &name, NULL)))
        return st;
    char path[BL_PK_PATH_MAX];
    bl_pk_join(path, sizeof path, where, "name", 4);
    if (!bl_pk_valid_name(name, strlen(name))) {
        char shown[160];
        bl_pk_printable(shown, sizeof shown, name, strlen(name));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "name"), path,
                          "\"%s\" is not a valid name (1..%d characters of A-Z a-z 0-9 . _ -, not starting with . or -)", shown,
                          BL_PLAN_MAX_NAME);
    }
    if (!(pop->name = bl_pk_strdup(name)))
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot copy a population name");
    if (!stimulus)
        return BL_OK;

    return bl_pk_read_protocol(ctx, node, where, (bl_plan *)plan, pop);
}

static bl_status read_populations(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *key,
                                  int stimulus, bl_plan *plan, const bl_toml_node **arr)
{
    size_t n;
    bl_status st = population_array(ctx, root, key, arr, &n);
    if (st || n == 0)
        return st;
    bl_pk_population *pops = calloc(n, sizeof *pops);
    if (!pops)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate %zu populations", n);
    if (stimulus) {
        plan->stimuli = pops;
        plan->n_stimuli = n;
    } else {
        plan->silences = pops;
        plan->n_silences = n;
    }
    for (size_t i = 0; i < n; i++) {
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, key, i);
        if ((st = read_population(ctx, bl_toml_array_at(*arr, i), where, stimulus, plan, &pops[i])))
            return st;
    }
    return BL_OK;
}

/* Names are unique across stimuli and silences: records and reports refer to
 * populations by name. */
static bl_status unique_names(const bl_pk_ctx *ctx, const bl_plan *plan, const bl_toml_node *stim,
                              const bl_toml_node *sil)
{
    size_t total = plan->n_stimuli + plan->n_silences;
    for (size_t i = 0; i < total; i++)
        for (size_t j = 0; j < i; j++) {
            const bl_pk_population *a = j < plan->n_stimuli ? &plan->stimuli[j]
                                                            : &plan->silences[j - plan->n_stimuli];
            const bl_pk_population *b = i < plan->n_stimuli ? &plan->stimuli[i]
                                                            : &plan->silences[i - plan->n_stimuli];
            if (strcmp(a->name, b->name))
                continue;
            int b_stim = i < plan->n_stimuli, a_stim = j < plan->n_stimuli;
            size_t bi = b_stim ? i : i - plan->n_stimuli, ai = a_stim ? j : j - plan->n_stimuli;
            char path[BL_PK_PATH_MAX];
            snprintf(path, sizeof path, "%s[%zu].name", b_stim ? "stimulus" : "silence", bi);
            const bl_toml_node *node =
                bl_toml_table_get(bl_toml_array_at(b_stim ? stim : sil, bi), "name");
            return bl_pk_fail(ctx, BL_ERR_INVALID, node, path,
                              "population name \"%s\" is already used by %s[%zu]", b->name,
                              a_stim ? "stimulus" : "silence", ai);
        }
    return BL_OK;
}


/* Resolve, load and fingerprint the connectome. */
bl_status bl_pk_load_connectome_dir(const bl_pk_ctx *ctx, const bl_toml_node *root, const char *plan_dir,
                                 bl_plan *plan)
{
    const bl_toml_node *table;
    const char *given;
    bl_status st = bl_pk_table(ctx, root, "", "connectome", 1, &table);
    if (st || (st = bl_pk_check_keys(ctx, table, "connectome", connectome_keys)) ||
        (st = bl_pk_string(ctx, table, "connectome", "path", 1, &given, NULL)))
        return st;
    const bl_toml_node *node = bl_toml_table_get(table, "path");
    char shown[256];
    bl_pk_printable(shown, sizeof shown, given, strlen(given));
    if (!*given)
        return bl_pk_fail(ctx, BL_ERR_INVALID, node, "connectome.path", "empty path");
    size_t need = strlen(plan_dir) + strlen(given) + 2;
    char *joined = malloc(need);
    if (!joined)
        return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a path");
    /* Relative paths are relative to the plan, not to the working directory,
     * so that a plan means the same thing wherever it is run from. */
    if (given[0] == '/')
        snprintf(joined, need, "%s", given);
    else
        snprintf(joined, need, "%s/%s", plan_dir, given);
    char *abs = realpath(joined, NULL);
    int e = errno;
    free(joined);
    if (!abs)
        return bl_pk_fail(ctx, BL_ERR_IO, node, "connectome.path", "\"%s\": %s", shown, strerror(e));
    plan->connectome_path = abs;

    bl_error lerr = {0};
    if (bl_connectome_load_part(abs, plan->part, plan->parts, &plan->connectome, &lerr))
        return bl_pk_fail(ctx, lerr.status, node, "connectome.path", "\"%s\" does not load: %s", shown,
                          lerr.message);

    /* The manifest pins every data file by SHA-256, and load hashed each file
     * in the same pass that read it (bl_connectome_source): the inputs listed
     * here are exactly the bytes that will be simulated, never a second
     * reading of files that may have changed since. */
    for (size_t k = 0; !st; k++) {
        const char *name = NULL;
        uint64_t bytes = 0;
        const char *sha = bl_connectome_source(plan->connectome, k, &name, &bytes);
        if (!sha)
            break;
        size_t plen = strlen(abs) + strlen(name) + 2;
        char *fpath = malloc(plen);
        if (!fpath)
            return bl_fail(ctx->err, BL_ERR_NOMEM, "cannot allocate a path");
        snprintf(fpath, plen, "%s/%s", abs, name);
        if (k == 0)
            snprintf(plan->manifest_sha256, sizeof plan->manifest_sha256, "%s", sha);
        st = bl_pk_add_input(plan, k == 0 ? "connectome manifest" : "connectome data", fpath, sha, bytes,
                             ctx->err);
        free(fpath);
    }
    return st;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static bl_status silenced_union(bl_plan *plan, bl_error *err)
{
    size_t total = 0;
    for (size_t i = 0; i < plan->n_silences; i++)
        total += plan->silences[i].view.n_neurons;
    plan->silenced = malloc((total ? total : 1) * sizeof *plan->silenced);
    if (!plan->silenced)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu silenced neurons", total);
    size_t o = 0;
    for (size_t i = 0; i < plan->n_silences; i++) {
        memcpy(plan->silenced + o, plan->silences[i].neurons,
               plan->silences[i].view.n_neurons * sizeof *plan->silenced);
        o += plan->silences[i].view.n_neurons;
    }
    qsort(plan->silenced, total, sizeof *plan->silenced, cmp_i32);
    size_t u = 0;
    for (size_t i = 0; i < total; i++)
        if (u == 0 || plan->silenced[i] != plan->silenced[u - 1])
            plan->silenced[u++] = plan->silenced[i];
    plan->n_silenced = u;
    return BL_OK;
}

static void publish(bl_pk_population *p)
{
    p->view.segments = p->segments;
    p->view.schedule = p->schedule;
    p->view.name = p->name;
    p->view.selector = p->selector;
    p->view.neurons = p->neurons;
}

/* A model from equations that reads the connectome's weights.npy,
 * delays.npy or neurons.csv columns: the columns are checked here, when the plan loads the
 * connectome (src/models/eq_edges.c), so `check` refuses what the run would
 * and a run stops before it makes a record. */
static bl_status check_eq_columns(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_plan *plan)
{
    if (!plan->eq)
        return BL_OK;
    bl_error e = {0};
    const bl_toml_node *where = bl_toml_table_get(bl_toml_table_get(root, "connectome"), "path");
    if (eq_edges_check_connectome(plan->connectome, plan->eq, &e))
        return bl_pk_fail(ctx, e.status, where, "connectome.path", "%s", e.message);
    /* [model.per_neuron]: a value per neuron from a neurons.csv column or
     * drawn with the plan's seed (src/models/lang/eq_per_neuron.c). */
    if (bl_eq_row_per_neuron(plan->eq, plan->connectome, plan->seed, &e))
        return bl_pk_fail(ctx, e.status, where, "connectome.path", "%s", e.message);
    /* on_pre_by: each source's block from its neurons.csv field (eq_per_neuron.c). */
    if (bl_eq_row_on_pre_by(plan->eq, plan->connectome, &e))
        return bl_pk_fail(ctx, e.status, where, "connectome.path", "%s", e.message);
    return BL_OK;
}

bl_status bl_pk_load_connectome_plan(const bl_pk_ctx *ctx, const bl_toml_node *root,
                                     const char *plan_dir, bl_plan *plan, int screen)
{
    const bl_toml_node *stim, *sil;
    bl_status st = bl_pk_check_keys(ctx, root, "", screen ? screen_top_keys : top_keys);
    if (st || (st = read_model(ctx, root, plan)) || (st = read_run(ctx, root, plan)) ||
        (st = read_outputs(ctx, root, plan)) || (st = bl_pk_read_named(ctx, root, plan)) ||
        (st = read_populations(ctx, root, "stimulus", 1, plan, &stim)) ||
        (st = read_populations(ctx, root, "silence", 0, plan, &sil)) ||
        (st = unique_names(ctx, plan, stim, sil)) ||
        (st = bl_pk_load_connectome_dir(ctx, root, plan_dir, plan)) || (st = check_eq_columns(ctx, root, plan)) ||
        (st = bl_pk_resolve_named(ctx, root, plan)) || (st = resolve_outputs(ctx, root, plan)))
        return st;
    /* The resolved neurons are listed in the plan, hence in the record's
     * manifest: their total is bounded so that every sealed record stays
     * within what verify reads. */
    size_t selected = 0;
    for (size_t i = 0; i < plan->n_stimuli && !st; i++) {
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "stimulus", i);
        st = bl_pk_resolve_selector(ctx, plan, bl_toml_array_at(stim, i), where,
                                    &plan->stimuli[i]);
        if (!st)
            st = bl_pk_check_schedule(ctx, bl_toml_array_at(stim, i), where, &plan->stimuli[i]);
        publish(&plan->stimuli[i]);
        if (!st && (selected += plan->stimuli[i].view.n_neurons) > BL_PLAN_MAX_SELECTED)
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(stim, i), where,
                            "the populations select %zu neurons in all, more than the %d a plan may list",
                            selected, BL_PLAN_MAX_SELECTED);
    }
    for (size_t i = 0; i < plan->n_silences && !st; i++) {
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "silence", i);
        st = bl_pk_resolve_selector(ctx, plan, bl_toml_array_at(sil, i), where,
                                    &plan->silences[i]);
        publish(&plan->silences[i]);
        if (!st && (selected += plan->silences[i].view.n_neurons) > BL_PLAN_MAX_SELECTED)
            st = bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_array_at(sil, i), where,
                            "the populations select %zu neurons in all, more than the %d a plan may list",
                            selected, BL_PLAN_MAX_SELECTED);
    }
    if (!st)
        st = silenced_union(plan, ctx->err);
    /* A screen builds its conditions' stimuli itself (screen_run.c), from
     * Poisson populations only: refuse what it would leave out. */
    for (size_t i = 0; !st && screen && i < plan->n_stimuli; i++)
        if (plan->stimuli[i].view.current) {
            char where[BL_PK_PATH_MAX];
            bl_pk_index(where, sizeof where, "stimulus", i);
            st = bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_array_at(stim, i), where,
                            "a screen cannot inject currents yet (write one connectome plan per condition)");
        }
    return st || !screen ? st : bl_pk_read_screen(ctx, root, plan);
}

/* The rows of operations "connectome" and "screen" (plan_op.h). */
bl_status bl_pk_op_load_connectome(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                                   const char *plan_dir, bl_plan *plan)
{
    (void)op;
    return bl_pk_load_connectome_plan(ctx, root, plan_dir, plan, 0);
}

bl_status bl_pk_op_load_screen(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                               const char *plan_dir, bl_plan *plan)
{
    (void)op;
    return bl_pk_load_connectome_plan(ctx, root, plan_dir, plan, 1);
}
