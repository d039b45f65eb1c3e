/* The "profile" operation: a BrainlessLab reservoir evaluation
 * (format_version 4, as python/plans/delayed-cue.toml of the Python project):
 *
 *     question, version, evidence, diagnostic      (optional metadata)
 *     [evaluation] blocks, trials_per_block, horizon, warmup = 0,
 *                  construction_scope = "block", root_seed, seed_partition
 *     [numerics]   dtype = "float64" | "float32", fast_math = false, reduction = "ordered",
 *                  rng = "bl-philox-v1"
 *     [execution]  threads = 0, batch_size = 32     (do not change results)
 *     [[targets]]  id, label, controller = "reservoir"
 *       [targets.composition] count = 200, input_gain = 1.0
 *       [targets.composition.node] kind = "falandays", preset = "default",
 *                                  parameters = { name = value }
 *       [targets.composition.task] kind = "delayed_cue", options = { ... }
 *       [[targets.interventions]] tick, verb = "freeze_weights" | "freeze_plasticity"
 *
 * Messages follow plan_keys.c: FILE:LINE:COL: KEY: what is wrong (the value).
 * The resolved form is canonical JSON (keys in a fixed order, numbers as the
 * shortest round-trip text), hashed with SHA-256 like every plan. */
#include "plan/plan_reservoir.h"
#include "plan/plan_op.h"
#include "plan/plan_cjson.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/plan.h"
#include "tasks/task_ops.h"

static const char *const top_keys[] = {"format", "format_version", "id", "operation", "description", "question",
                                       "version", "evidence", "diagnostic", "evaluation", "numerics", "execution",
                                       "targets", "axes", "probe", NULL};
static const char *const probe_keys[] = {"fit_trials", "validation_trials", "evaluation_trials", "split_seed",
                                         "permutation_seed", NULL};

/* [probe]: read here, checked against the targets in plan_operations.c. */
static bl_status read_probe(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *pr;
    bl_status st = bl_pk_table(ctx, root, "", "probe", 0, &pr);
    if (st || !pr)
        return st;
    int64_t fit = 256, val = 128, ev = 256, split = 701, perm = 702;
    if ((st = bl_pk_check_keys(ctx, pr, "probe", probe_keys)) ||
        (st = bl_pk_int(ctx, pr, "probe", "fit_trials", 0, 2, 100000, &fit, NULL)) ||
        (st = bl_pk_int(ctx, pr, "probe", "validation_trials", 0, 2, 100000, &val, NULL)) ||
        (st = bl_pk_int(ctx, pr, "probe", "evaluation_trials", 0, 2, 100000, &ev, NULL)) ||
        (st = bl_pk_int(ctx, pr, "probe", "split_seed", 0, 0, INT64_MAX, &split, NULL)) ||
        (st = bl_pk_int(ctx, pr, "probe", "permutation_seed", 0, 0, INT64_MAX, &perm, NULL)))
        return st;
    rp->probe = 1;
    rp->probe_fit = (uint32_t)fit;
    rp->probe_validation = (uint32_t)val;
    rp->probe_evaluation = (uint32_t)ev;
    rp->probe_split_seed = (uint64_t)split;
    rp->probe_permutation_seed = (uint64_t)perm;
    return BL_OK;
}
static const char *const evaluation_keys[] = {"blocks", "trials_per_block", "horizon", "warmup",
                                              "construction_scope", "root_seed", "seed_partition", NULL};
static const char *const numerics_keys[] = {"dtype", "fast_math", "reduction", "rng", NULL};
static const char *const execution_keys[] = {"threads", "batch_size", NULL};
static const char *const target_keys[] = {"id", "label", "controller", "composition", "interventions",
                                          "pairing_key", "construction_key", "mechanism_key", NULL};
static const char *const operations[] = {"profile", "sweep", "ablate", "benchmark", "calibrate", NULL};

/* Names as records and summaries write them; which name selects which
 * operation is the operations table's (each reservoir row's variant). */
const char *bl_rp_operation_name(bl_rp_operation op) { return operations[op]; }
static const char *const composition_keys[] = {"count", "input_gain", "node", "task", NULL};
static const char *const node_keys[] = {"kind", "preset", "parameters", NULL};
static const char *const task_keys[] = {"kind", "options", NULL};
static const char *const intervention_keys[] = {"tick", "verb", NULL};
static const char *const evidence_states[] = {"planned", "exploratory", "tuned", "frozen", "retired", NULL};
const char *bl_rp_scope_name(bl_rp_scope scope) { return bl_seed_scope_name(scope); }

const char *bl_rp_verb_name(bl_rp_verb verb)
{
    static const char *const verbs[] = {"freeze_weights", "freeze_plasticity", "blind_input", "shuffle_input"};
    return verbs[verb];
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static bl_status nomem(const bl_pk_ctx *ctx)
{
    return bl_fail(ctx->err, BL_ERR_NOMEM, "%s: out of memory while resolving the plan", ctx->file);
}

static bl_status copy_string(const bl_pk_ctx *ctx, char **dst, const char *src)
{
    free(*dst);
    *dst = bl_pk_strdup(src);
    return *dst ? BL_OK : nomem(ctx);
}

/* A string with no control characters, 0..max bytes. */
static bl_status text_key(const bl_pk_ctx *ctx, const bl_toml_node *t, const char *where, const char *key,
                          size_t max, char **dst, const char *dflt)
{
    const char *s = dflt;
    int found = 0;
    bl_status st = bl_pk_string(ctx, t, where, key, 0, &s, &found);
    if (st)
        return st;
    char path[BL_PK_PATH_MAX];
    bl_pk_join(path, sizeof path, where, key, strlen(key));
    if (strlen(s) > max)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(t, key), path, "longer than %zu bytes", max);
    return copy_string(ctx, dst, s);
}

/* ---- [evaluation], [numerics], [execution] ---- */

static bl_status read_evaluation(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *ev;
    bl_status st = bl_pk_table(ctx, root, "", "evaluation", 1, &ev);
    if (st || (st = bl_pk_check_keys(ctx, ev, "evaluation", evaluation_keys)))
        return st;
    int64_t blocks = 1, trials = 1, horizon = 0, warmup = 0, seed = 0;
    int found = 0;
    if ((st = bl_pk_int(ctx, ev, "evaluation", "blocks", 0, 1, BL_RP_MAX_BLOCKS, &blocks, NULL)) ||
        (st = bl_pk_int(ctx, ev, "evaluation", "trials_per_block", 0, 1, BL_RP_MAX_TRIALS, &trials, NULL)) ||
        (st = bl_pk_int(ctx, ev, "evaluation", "horizon", 0, 1, BL_DC_MAX_TICKS, &horizon, &found)) ||
        (st = bl_pk_int(ctx, ev, "evaluation", "warmup", 0, 0, INT64_MAX, &warmup, NULL)) ||
        (st = bl_pk_int(ctx, ev, "evaluation", "root_seed", 1, 0, INT64_MAX, &seed, NULL)))
        return st;
    if (warmup > BL_DC_MAX_TICKS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ev, "warmup"), "evaluation.warmup",
                          "%" PRId64 " is more than %d ticks", warmup, BL_DC_MAX_TICKS);
    rp->warmup = (uint32_t)warmup;
    if (blocks * trials > BL_RP_MAX_TRIALS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ev, "trials_per_block"), "evaluation",
                          "%" PRId64 " blocks x %" PRId64 " trials is more than %d trials", blocks, trials,
                          BL_RP_MAX_TRIALS);
    rp->blocks = (uint32_t)blocks;
    rp->trials_per_block = (uint32_t)trials;
    rp->horizon = found ? (uint32_t)horizon : 0;
    rp->root_seed = (uint64_t)seed;
    const char *scope = "block", *partition = "development";
    if ((st = bl_pk_string(ctx, ev, "evaluation", "construction_scope", 0, &scope, NULL)) ||
        (st = bl_pk_string(ctx, ev, "evaluation", "seed_partition", 0, &partition, NULL)))
        return st;
    char shown[160];
    if (!strcmp(scope, "evaluation"))
        rp->scope = BL_SCOPE_EVALUATION;
    else if (!strcmp(scope, "block"))
        rp->scope = BL_SCOPE_BLOCK;
    else if (!strcmp(scope, "trial"))
        rp->scope = BL_SCOPE_TRIAL;
    else {
        bl_pk_printable(shown, sizeof shown, scope, strlen(scope));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ev, "construction_scope"),
                          "evaluation.construction_scope", "\"%s\" is not evaluation, block or trial", shown);
    }
    if (!bl_pk_valid_name(partition, strlen(partition))) {
        bl_pk_printable(shown, sizeof shown, partition, strlen(partition));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(ev, "seed_partition"), "evaluation.seed_partition",
                          "\"%s\" must name a seed bank (1..%d characters of A-Z a-z 0-9 . _ -, not starting with . or -)", shown,
                          BL_PLAN_MAX_NAME);
    }
    rp->partition_word = bl_seed_partition_word(partition);
    return copy_string(ctx, &rp->partition, partition);
}

static bl_status read_numerics(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *nu;
    bl_status st = bl_pk_table(ctx, root, "", "numerics", 0, &nu);
    if (!st)
        st = copy_string(ctx, &rp->rng, BL_SEED_SCHEME);
    if (st || !nu || (st = bl_pk_check_keys(ctx, nu, "numerics", numerics_keys)))
        return st;
    const char *dtype = "float64", *reduction = "ordered", *rng = BL_SEED_SCHEME;
    int fast = 0;
    if ((st = bl_pk_string(ctx, nu, "numerics", "dtype", 0, &dtype, NULL)) ||
        (st = bl_pk_bool(ctx, nu, "numerics", "fast_math", 0, &fast, NULL)) ||
        (st = bl_pk_string(ctx, nu, "numerics", "reduction", 0, &reduction, NULL)) ||
        (st = bl_pk_string(ctx, nu, "numerics", "rng", 0, &rng, NULL)))
        return st;
    char shown[160];
    if (bl_res_dtype_parse(dtype, &rp->dtype)) {
        bl_pk_printable(shown, sizeof shown, dtype, strlen(dtype));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(nu, "dtype"), "numerics.dtype",
                          "\"%s\": reservoirs compute in \"float64\" (the contract) or \"float32\" (its own "
                          "oracle and tolerance contract, docs/reservoir.md)", shown);
    }
    if (fast)
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(nu, "fast_math"), "numerics.fast_math",
                          "true: exact runs never use fast-math");
    if (strcmp(reduction, "ordered")) {
        bl_pk_printable(shown, sizeof shown, reduction, strlen(reduction));
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(nu, "reduction"), "numerics.reduction",
                          "\"%s\": only \"ordered\" (destination-owned, ascending source order)", shown);
    }
    if (!strcmp(rng, BL_SEED_SCHEME_HOST))
        return copy_string(ctx, &rp->rng, rng); /* the Python project's NumPy seeding (src/core/np_random.c) */
    if (strcmp(rng, BL_SEED_SCHEME)) {
        bl_pk_printable(shown, sizeof shown, rng, strlen(rng));
        return bl_pk_fail(ctx, BL_ERR_UNSUPPORTED, bl_toml_table_get(nu, "rng"), "numerics.rng",
                          "\"%s\" is not a seed scheme (known: \"%s\", Philox4x32-10 counter streams; "
                          "\"philox-host-v1\", the Python project's NumPy generators)", shown, BL_SEED_SCHEME);
    }
    return BL_OK;
}

static bl_status read_execution(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *ex;
    int64_t threads = 0, batch = 32;
    bl_status st = bl_pk_table(ctx, root, "", "execution", 0, &ex);
    if (!st && ex && !(st = bl_pk_check_keys(ctx, ex, "execution", execution_keys)) &&
        !(st = bl_pk_int(ctx, ex, "execution", "threads", 0, 0, BL_PLAN_MAX_THREADS, &threads, NULL)))
        st = bl_pk_int(ctx, ex, "execution", "batch_size", 0, 1, 65536, &batch, NULL);
    rp->threads = (int)threads;
    rp->batch_size = (uint32_t)batch;
    return st;
}

/* ---- targets ---- */

static bl_status read_node(const bl_pk_ctx *ctx, const bl_toml_node *comp, const char *where, bl_rp_target *t)
{
    char at[BL_PK_PATH_MAX], shown[160];
    bl_pk_join(at, sizeof at, where, "node", 4);
    const bl_toml_node *node, *params = NULL;
    const char *kind = "falandays", *preset = "default";
    bl_status st = bl_pk_table(ctx, comp, where, "node", 0, &node);
    if (!st && node && !(st = bl_pk_check_keys(ctx, node, at, node_keys)) &&
        !(st = bl_pk_string(ctx, node, at, "kind", 0, &kind, NULL)) &&
        !(st = bl_pk_string(ctx, node, at, "preset", 0, &preset, NULL)))
        st = bl_pk_table(ctx, node, at, "parameters", 0, &params);
    if (st)
        return st;
    bl_res_kind k;
    char key[BL_PK_PATH_MAX];
    if (bl_res_kind_parse(kind, &k)) {
        bl_pk_printable(shown, sizeof shown, kind, strlen(kind));
        bl_pk_join(key, sizeof key, at, "kind", 4);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "kind"), key,
                          "unknown node \"%s\" (known: falandays, sorn)", shown);
    }
    bl_error perr = {0};
    if (bl_res_params_preset(k, preset, &t->node, &perr)) {
        bl_pk_join(key, sizeof key, at, "preset", 6);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(node, "preset"), key, "%s", perr.message);
    }
    if ((st = copy_string(ctx, &t->preset, preset)))
        return st;
    char node_at[BL_PK_PATH_MAX];
    snprintf(node_at, sizeof node_at, "%s", at);
    bl_pk_join(at, sizeof at, node_at, "parameters", 10); /* never join into the parent's own buffer */
    for (size_t i = 0; i < bl_toml_table_size(params); i++) {
        size_t len;
        const char *name = bl_toml_table_key(params, i, &len);
        const bl_toml_node *v = bl_toml_table_value(params, i);
        bl_pk_join(key, sizeof key, at, name, len);
        const char *s;
        double x;
        int b;
        bl_status pst;
        if (strlen(name) != len)
            pst = bl_fail(&perr, BL_ERR_INVALID, "a parameter name holds a NUL character");
        else if (bl_toml_get_bool(v, &b))
            pst = !bl_res_param_is_bool(k, name) && !isnan(bl_res_params_get(&t->node, name))
                      ? bl_fail(&perr, BL_ERR_INVALID, "expected a number, got boolean %s", b ? "true" : "false")
                      : bl_res_params_set(&t->node, name, b, &perr);
        else if (bl_toml_get_string(v, &s, NULL))
            pst = bl_res_params_set_string(&t->node, name, s, &perr);
        else if (bl_toml_type_of(v) == BL_TOML_ARRAY && !strcmp(name, "input_link_p")) {
            double buf[BL_RES_MAX_LINK_P];
            size_t n = bl_toml_array_size(v);
            pst = n > BL_RES_MAX_LINK_P ? bl_fail(&perr, BL_ERR_INVALID, "at most %d probabilities", BL_RES_MAX_LINK_P)
                                        : BL_OK;
            for (size_t q = 0; !pst && q < n; q++) {
                const bl_toml_node *item = bl_toml_array_at(v, q);
                if (bl_toml_type_of(item) != BL_TOML_INTEGER && bl_toml_type_of(item) != BL_TOML_FLOAT)
                    pst = bl_fail(&perr, BL_ERR_INVALID, "input_link_p[%zu] is not a number", q);
                else
                    bl_toml_get_double(item, &buf[q]);
            }
            if (!pst)
                pst = bl_res_params_set_input_link_p(&t->node, buf, n, &perr);
        }
        else if (bl_toml_type_of(v) == BL_TOML_INTEGER || bl_toml_type_of(v) == BL_TOML_FLOAT) {
            bl_toml_get_double(v, &x);
            pst = bl_res_param_is_bool(k, name)
                      ? bl_fail(&perr, BL_ERR_INVALID, "expected a boolean (true or false), got %.17g", x)
                      : bl_res_params_set(&t->node, name, x, &perr);
        } else {
            char got[160];
            bl_pk_describe(v, got, sizeof got);
            pst = bl_fail(&perr, BL_ERR_INVALID, "expected a number, boolean or string, got %s", got);
        }
        if (pst)
            return bl_pk_fail(ctx, pst, v, key, "%s", perr.message);
    }
    if (bl_res_params_validate(&t->node, &perr))
        return bl_pk_fail(ctx, BL_ERR_INVALID, params ? params : node, at, "%s", perr.message);
    return BL_OK;
}

/* A TOML option value as the task table takes it (numbers, booleans,
 * strings, arrays of numbers and arrays of [low, high] pairs). */
static int option_value(const bl_toml_node *v, double *buf, size_t cap, bl_task_value *out)
{
    memset(out, 0, sizeof *out);
    int b;
    const char *s;
    int64_t i;
    if (bl_toml_get_bool(v, &b)) {
        out->type = BL_TV_BOOL;
        out->boolean = b;
        return 0;
    }
    if (bl_toml_get_string(v, &s, NULL)) {
        out->type = BL_TV_STRING;
        out->string = s;
        return 0;
    }
    if (bl_toml_type_of(v) == BL_TOML_INTEGER || bl_toml_type_of(v) == BL_TOML_FLOAT) {
        out->type = BL_TV_NUMBER;
        out->integer = bl_toml_get_int(v, &i) != 0;
        bl_toml_get_double(v, &out->number);
        return 0;
    }
    if (bl_toml_type_of(v) != BL_TOML_ARRAY)
        return -1;
    size_t n = bl_toml_array_size(v), used = 0, width = 1;
    for (size_t k = 0; k < n; k++) {
        const bl_toml_node *x = bl_toml_array_at(v, k);
        size_t m = bl_toml_type_of(x) == BL_TOML_ARRAY ? bl_toml_array_size(x) : 0;
        if (m) {
            if (k == 0)
                width = m;
            else if (width != m)
                return -1;
        } else if (width != 1) {
            return -1;
        }
        for (size_t j = 0; j < (m ? m : 1); j++) {
            const bl_toml_node *y = m ? bl_toml_array_at(x, j) : x;
            if (used >= cap || (bl_toml_type_of(y) != BL_TOML_INTEGER && bl_toml_type_of(y) != BL_TOML_FLOAT))
                return -1;
            bl_toml_get_double(y, &buf[used++]);
        }
    }
    out->type = BL_TV_LIST;
    out->list = buf;
    out->n = used;
    out->width = width;
    return 0;
}

static bl_status read_task(const bl_pk_ctx *ctx, const bl_toml_node *comp, const char *where, bl_rp_target *t)
{
    char at[BL_PK_PATH_MAX], key[BL_PK_PATH_MAX], shown[160];
    bl_pk_join(at, sizeof at, where, "task", 4);
    const bl_toml_node *task, *opts = NULL;
    const char *kind = "delayed_cue";
    bl_status st = bl_pk_table(ctx, comp, where, "task", 0, &task);
    if (!st && task && !(st = bl_pk_check_keys(ctx, task, at, task_keys)) &&
        !(st = bl_pk_string(ctx, task, at, "kind", 0, &kind, NULL)))
        st = bl_pk_table(ctx, task, at, "options", 0, &opts);
    if (st)
        return st;
    bl_pk_join(key, sizeof key, at, "kind", 4);
    bl_task_kind k;
    if (bl_task_parse(kind, &k)) {
        bl_pk_printable(shown, sizeof shown, kind, strlen(kind));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(task, "kind"), key,
                          "\"%s\" is not a task (known: tracking, pong, cartpole_plank_easy, delayed_cue, "
                          "recall_interference, delayed_xor, evidence_accumulation, context_integration, "
                          "temporal_order, reversal_adaptation)", shown);
    }
    bl_task_defaults(k, &t->task);
    char task_at[BL_PK_PATH_MAX];
    snprintf(task_at, sizeof task_at, "%s", at);
    bl_pk_join(at, sizeof at, task_at, "options", 7); /* never join into the parent's own buffer */
    bl_error terr = {0};
    for (size_t i = 0; i < bl_toml_table_size(opts); i++) {
        size_t len;
        const char *name = bl_toml_table_key(opts, i, &len);
        const bl_toml_node *v = bl_toml_table_value(opts, i);
        bl_pk_join(key, sizeof key, at, name, len);
        double buf[2 * BL_DC_MAX_DELAYS];
        bl_task_value tv;
        if (strlen(name) != len)
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "an option name holds a NUL character");
        if (option_value(v, buf, sizeof buf / sizeof *buf, &tv)) {
            char got[160];
            bl_pk_describe(v, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "expected a number, boolean, string or array of numbers "
                              "or pairs, got %s", got);
        }
        if (bl_task_set_option(&t->task, name, &tv, &terr))
            return bl_pk_fail(ctx, BL_ERR_INVALID, v, key, "%s", terr.message);
    }
    if (bl_task_validate(&t->task, &terr))
        return bl_pk_fail(ctx, BL_ERR_INVALID, opts ? opts : task, at, "%s", terr.message);
    bl_task_definition_of(&t->task, &t->def);
    return BL_OK;
}

static bl_status read_interventions(const bl_pk_ctx *ctx, const bl_toml_node *tt, const char *where,
                                    bl_rp_target *t)
{
    const bl_toml_node *list = bl_toml_table_get(tt, "interventions");
    char key[BL_PK_PATH_MAX];
    bl_pk_join(key, sizeof key, where, "interventions", 13);
    if (!list)
        return BL_OK;
    size_t n = bl_toml_array_size(list);
    if (bl_toml_type_of(list) != BL_TOML_ARRAY || n > BL_RP_MAX_INTERVENTIONS) {
        char got[160];
        bl_pk_describe(list, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, list, key, "expected an array of at most %d tables, got %s",
                          BL_RP_MAX_INTERVENTIONS, got);
    }
    if (n && t->controller != BL_CTRL_RESERVOIR)
        return bl_pk_fail(ctx, BL_ERR_INVALID, list, key, "interventions act on a reservoir; this target's "
                          "controller is %s", bl_controller_name(t->controller));
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *it = bl_toml_array_at(list, i);
        char at[BL_PK_PATH_MAX], shown[160];
        bl_pk_index(at, sizeof at, key, i);
        if (bl_toml_type_of(it) != BL_TOML_TABLE) {
            char got[160];
            bl_pk_describe(it, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, it, at, "expected a table {tick, verb}, got %s", got);
        }
        int64_t tick;
        const char *verb;
        bl_status st;
        if ((st = bl_pk_check_keys(ctx, it, at, intervention_keys)) ||
            (st = bl_pk_int(ctx, it, at, "tick", 1, 1, t->horizon, &tick, NULL)) ||
            (st = bl_pk_string(ctx, it, at, "verb", 1, &verb, NULL)))
            return st;
        bl_rp_verb v;
        if (!strcmp(verb, "freeze_weights"))
            v = BL_VERB_FREEZE_WEIGHTS;
        else if (!strcmp(verb, "freeze_plasticity"))
            v = BL_VERB_FREEZE_PLASTICITY;
        else if (!strcmp(verb, "blind_input"))
            v = BL_VERB_BLIND_INPUT;
        else if (!strcmp(verb, "shuffle_input"))
            v = BL_VERB_SHUFFLE_INPUT;
        else {
            bl_pk_printable(shown, sizeof shown, verb, strlen(verb));
            char vk[BL_PK_PATH_MAX];
            bl_pk_join(vk, sizeof vk, at, "verb", 4);
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(it, "verb"), vk,
                              "\"%s\" is not an intervention (known: freeze_weights, freeze_plasticity, "
                              "blind_input, shuffle_input)", shown);
        }
        for (size_t m = 0; m < i; m++)
            if (t->interventions[m].tick == (uint32_t)tick && t->interventions[m].verb == v)
                return bl_pk_fail(ctx, BL_ERR_INVALID, it, at, "duplicates %s[%zu]", key, m);
        t->interventions[i].tick = (uint32_t)tick;
        t->interventions[i].verb = v;
        t->n_interventions = i + 1;
    }
    return BL_OK;
}

/* The composition's Python JSON (see py_head in plan_reservoir.h): the
 * written values, or the Python project's defaults where none is written. */
static void py_composition(const bl_toml_node *comp, bl_rp_target *t)
{
    const bl_toml_node *node = comp ? bl_toml_table_get(comp, "node") : NULL;
    const bl_toml_node *task = comp ? bl_toml_table_get(comp, "task") : NULL;
    char *count = bl_rp_py_json(comp ? bl_toml_table_get(comp, "count") : NULL, "200");
    char *gain = bl_rp_py_json(comp ? bl_toml_table_get(comp, "input_gain") : NULL, "1.0");
    char *nkind = bl_rp_py_json(node ? bl_toml_table_get(node, "kind") : NULL, "\"falandays\"");
    char *params = bl_rp_py_json(node ? bl_toml_table_get(node, "parameters") : NULL, "{}");
    char *tkind = bl_rp_py_json(task ? bl_toml_table_get(task, "kind") : NULL, "\"delayed_cue\"");
    char *opts = bl_rp_py_json(task ? bl_toml_table_get(task, "options") : NULL, "{}");
    if (count && gain && nkind && params && tkind && opts) {
        size_t nh = strlen(count) + strlen(gain) + strlen(nkind) + 64, nt = strlen(tkind) + strlen(opts) + 64;
        t->py_head = malloc(nh);
        t->py_tail = malloc(nt);
        if (t->py_head && t->py_tail) {
            snprintf(t->py_head, nh, "{\"count\":%s,\"input_gain\":%s,\"node\":{\"kind\":%s,\"parameters\":", count,
                     gain, nkind);
            snprintf(t->py_tail, nt, "},\"task\":{\"kind\":%s,\"options\":%s}}", tkind, opts);
            t->py_params = params;
            params = NULL;
        } else {
            free(t->py_head);
            free(t->py_tail);
            t->py_head = t->py_tail = NULL;
        }
    }
    free(count);
    free(gain);
    free(nkind);
    free(params);
    free(tkind);
    free(opts);
}

static bl_status read_target(const bl_pk_ctx *ctx, const bl_toml_node *tt, const char *where, bl_rp_target *t,
                             const bl_res_plan *rp)
{
    char shown[160], key[BL_PK_PATH_MAX];
    bl_status st;
    const char *id, *controller = "reservoir";
    if ((st = bl_pk_check_keys(ctx, tt, where, target_keys)) ||
        (st = bl_pk_string(ctx, tt, where, "id", 1, &id, NULL)) ||
        (st = text_key(ctx, tt, where, "label", 1024, &t->label, "")) ||
        (st = bl_pk_string(ctx, tt, where, "controller", 0, &controller, NULL)) ||
        (st = text_key(ctx, tt, where, "pairing_key", 160, &t->pairing_key, BL_RP_DEFAULT_PAIRING)) ||
        (st = text_key(ctx, tt, where, "construction_key", 160, &t->construction_key, BL_RP_DEFAULT_CONSTRUCTION)) ||
        (st = text_key(ctx, tt, where, "mechanism_key", 160, &t->mechanism_key, BL_RP_DEFAULT_MECHANISM)))
        return st;
    {
        const char *keys[3] = {t->pairing_key, t->construction_key, t->mechanism_key};
        const char *names[3] = {"pairing_key", "construction_key", "mechanism_key"};
        const char *defaults[3] = {BL_RP_DEFAULT_PAIRING, BL_RP_DEFAULT_CONSTRUCTION, BL_RP_DEFAULT_MECHANISM};
        uint32_t *words[3] = {&t->pairing_word, &t->construction_word, &t->mechanism_word};
        for (int k = 0; k < 3; k++) {
            if (!keys[k][0]) {
                bl_pk_join(key, sizeof key, where, names[k], strlen(names[k]));
                return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(tt, names[k]), key,
                                  "must be a non-empty stable identity");
            }
            /* A non-default key moves that purpose to its own seed bank. */
            *words[k] = strcmp(keys[k], defaults[k]) ? bl_seed_partition_word(keys[k]) : 0;
        }
    }
    bl_pk_join(key, sizeof key, where, "id", 2);
    if (!bl_pk_valid_name(id, strlen(id))) {
        bl_pk_printable(shown, sizeof shown, id, strlen(id));
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(tt, "id"), key,
                          "\"%s\" is not a valid id (1..%d characters of A-Z a-z 0-9 . _ -, not starting with . or -)", shown, BL_PLAN_MAX_NAME);
    }
    for (size_t m = 0; rp->targets + m < t; m++)
        if (!strcmp(rp->targets[m].id, id))
            return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(tt, "id"), key, "\"%s\" repeats targets[%zu].id "
                              "(target ids must be unique)", id, m);
    if ((st = copy_string(ctx, &t->id, id)))
        return st;
    if (bl_controller_parse(controller, &t->controller)) {
        bl_pk_printable(shown, sizeof shown, controller, strlen(controller));
        bl_pk_join(key, sizeof key, where, "controller", 10);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(tt, "controller"), key,
                          "\"%s\" is not a controller (known: reservoir, oracle, constant_left, constant_right, "
                          "reference_null, memoryless, last, first, context_blind, irrelevant, bag, fixed_mapping)",
                          shown);
    }
    const bl_toml_node *comp;
    char at[BL_PK_PATH_MAX];
    bl_pk_join(at, sizeof at, where, "composition", 11);
    int64_t count = 200;
    double gain = 1.0;
    if ((st = bl_pk_table(ctx, tt, where, "composition", 0, &comp)))
        return st;
    if (comp && ((st = bl_pk_check_keys(ctx, comp, at, composition_keys)) ||
                 (st = bl_pk_int(ctx, comp, at, "count", 0, 1, BL_RES_MAX_UNITS, &count, NULL)) ||
                 (st = bl_pk_double(ctx, comp, at, "input_gain", 0, &gain, NULL))))
        return st;
    if (gain < 0.0) {
        bl_pk_join(key, sizeof key, at, "input_gain", 10);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(comp, "input_gain"), key, "%g must be >= 0", gain);
    }
    t->count = (uint32_t)count;
    t->input_gain = gain;
    if ((st = read_node(ctx, comp, at, t)) || (st = read_task(ctx, comp, at, t)))
        return st;
    py_composition(comp, t);
    if (!bl_task_controller_allowed(t->task.kind, t->controller)) {
        bl_pk_join(key, sizeof key, where, "controller", 10);
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(tt, "controller"), key,
                          "\"%s\" is not a control defined for %s", bl_controller_name(t->controller),
                          bl_task_name(t->task.kind));
    }
    if (t->node.n_input_link_p && t->node.n_input_link_p != t->def.n_inputs)
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, at, "node.parameters.input_link_p: %u probabilities, but %s has "
                          "%u receptors", t->node.n_input_link_p, bl_task_name(t->task.kind), t->def.n_inputs);
    if (t->def.n_inputs > BL_TASK_MAX_INPUTS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, at, "%s: %u inputs is more than %d", bl_task_name(t->task.kind),
                          t->def.n_inputs, BL_TASK_MAX_INPUTS);
    const uint32_t longest = t->def.default_horizon;
    t->warmup = rp->warmup;
    t->horizon = rp->horizon ? rp->horizon : longest;
    if (t->def.probe && t->horizon < longest)
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, "evaluation.horizon",
                          "%u is shorter than %s's longest %s episode (%u ticks): the horizon must contain the "
                          "entire episode", t->horizon, t->id, bl_task_name(t->task.kind), longest);
    if (rp->warmup && (t->def.episode || rp->warmup >= t->horizon))
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, "evaluation.warmup",
                          "%u: %s", rp->warmup, t->def.episode ? "episode tasks (and cartpole_plank_easy) require "
                          "warmup = 0" : "warmup must leave scored ticks before the horizon");
    return read_interventions(ctx, tt, where, t);
}

static bl_status read_targets(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    const bl_toml_node *list = bl_toml_table_get(root, "targets");
    if (!list)
        return bl_pk_fail(ctx, BL_ERR_INVALID, NULL, "targets", "required: at least one [[targets]] table");
    size_t n = bl_toml_array_size(list);
    if (bl_toml_type_of(list) != BL_TOML_ARRAY || n < 1 || n > BL_RP_MAX_TARGETS) {
        char got[160];
        bl_pk_describe(list, got, sizeof got);
        return bl_pk_fail(ctx, BL_ERR_INVALID, list, "targets", "expected 1..%d [[targets]] tables, got %s",
                          BL_RP_MAX_TARGETS, got);
    }
    if ((uint64_t)n * rp->blocks * rp->trials_per_block > BL_RP_MAX_TRIALS)
        return bl_pk_fail(ctx, BL_ERR_INVALID, list, "targets", "%zu targets x %u blocks x %u trials is more than %d "
                          "trials", n, rp->blocks, rp->trials_per_block, BL_RP_MAX_TRIALS);
    rp->targets = calloc(n, sizeof *rp->targets);
    if (!rp->targets)
        return nomem(ctx);
    for (size_t i = 0; i < n; i++) {
        const bl_toml_node *tt = bl_toml_array_at(list, i);
        char where[BL_PK_PATH_MAX];
        bl_pk_index(where, sizeof where, "targets", i);
        rp->n_targets = i + 1; /* counted first, so that destroy frees a half-read target */
        if (bl_toml_type_of(tt) != BL_TOML_TABLE) {
            char got[160];
            bl_pk_describe(tt, got, sizeof got);
            return bl_pk_fail(ctx, BL_ERR_INVALID, tt, where, "expected a table, got %s", got);
        }
        bl_status st = read_target(ctx, tt, where, &rp->targets[i], rp);
        if (st)
            return st;
    }
    return BL_OK;
}

/* ---- canonical JSON ---- */

static void render_target(bl_cj *b, cJSON *arr, const bl_rp_target *t)
{
    cJSON *o = bl_cj_append(b, arr, NULL, cJSON_CreateObject());
    if (!o)
        return;
    bl_cj_str(b, o, "id", t->id);
    bl_cj_str(b, o, "label", t->label);
    bl_cj_str(b, o, "controller", bl_controller_name(t->controller));
    bl_cj_str(b, o, "pairing_key", t->pairing_key);
    bl_cj_str(b, o, "construction_key", t->construction_key);
    bl_cj_str(b, o, "mechanism_key", t->mechanism_key);
    bl_cj_uint(b, o, "horizon", t->horizon);
    cJSON *comp = bl_cj_obj(b, o, "composition");
    if (!comp)
        return;
    bl_cj_uint(b, comp, "count", t->count);
    bl_cj_num(b, comp, "input_gain", t->input_gain);
    cJSON *node = bl_cj_obj(b, comp, "node");
    cJSON *params = node ? (bl_cj_str(b, node, "kind", bl_res_kind_name(t->node.kind)),
                            bl_cj_str(b, node, "preset", t->preset), bl_cj_obj(b, node, "parameters"))
                         : NULL;
    for (const char *const *n = bl_res_param_names(t->node.kind); params && *n; n++) {
        double v = bl_res_params_get(&t->node, *n);
        if (bl_res_param_is_bool(t->node.kind, *n))
            bl_cj_bool(b, params, *n, v != 0.0);
        else
            bl_cj_num(b, params, *n, v);
    }
    if (params && t->node.kind == BL_RES_FALANDAYS) {
        bl_cj_str(b, params, "weight_init_mode", bl_res_weight_init_mode_name(t->node.weight_init_mode));
        if (!t->node.n_input_link_p) {
            bl_cj_null(b, params, "input_link_p");
        } else {
            cJSON *a = bl_cj_arr(b, params, "input_link_p");
            for (uint32_t k = 0; a && k < t->node.n_input_link_p; k++)
                bl_cj_append_num(b, a, t->node.input_link_p[k]);
        }
    }
    cJSON *task = bl_cj_obj(b, comp, "task");
    if (task) {
        bl_cj_str(b, task, "kind", bl_task_name(t->task.kind));
        cJSON *opt = bl_cj_obj(b, task, "options");
        for (const char *const *n = bl_task_option_names(t->task.kind); opt && *n; n++) {
            char text[4096];
            /* An option with no JSON form fails the rendering. */
            bl_cj_append(b, opt, *n, bl_task_option_json(&t->task, *n, text, sizeof text) ? NULL : cJSON_CreateRaw(text));
        }
        bl_cj_uint(b, task, "n_inputs", t->def.n_inputs);
        bl_cj_uint(b, task, "n_effectors", t->def.n_effectors);
        bl_cj_uint(b, task, "neural_frames", t->def.neural_frames);
        bl_cj_str(b, task, "outcome_key", t->def.outcome_key);
        if (isfinite(t->def.chance))
            bl_cj_num(b, task, "chance", t->def.chance);
        else
            bl_cj_null(b, task, "chance");
    }
    cJSON *iv = bl_cj_arr(b, o, "interventions");
    for (size_t k = 0; iv && k < t->n_interventions; k++) {
        cJSON *x = bl_cj_append(b, iv, NULL, cJSON_CreateObject());
        if (!x)
            break;
        bl_cj_uint(b, x, "tick", t->interventions[k].tick);
        bl_cj_str(b, x, "verb", bl_rp_verb_name(t->interventions[k].verb));
    }
}

char *bl_res_plan_render(const bl_res_plan *rp, int pretty)
{
    bl_cj b = {1};
    cJSON *root = bl_cj_check(&b, cJSON_CreateObject());
    if (!root)
        return NULL;
    bl_cj_str(&b, root, "format", BL_PLAN_FORMAT);
    bl_cj_uint(&b, root, "format_version", BL_PLAN_FORMAT_VERSION);
    bl_cj_str(&b, root, "id", rp->id);
    bl_cj_str(&b, root, "operation", bl_rp_operation_name(rp->operation));
    bl_cj_str(&b, root, "description", rp->description);
    bl_cj_str(&b, root, "question", rp->question);
    bl_cj_str(&b, root, "version", rp->version);
    bl_cj_str(&b, root, "evidence", rp->evidence);
    bl_cj_bool(&b, root, "diagnostic", rp->diagnostic);
    cJSON *ev = bl_cj_obj(&b, root, "evaluation");
    if (ev) {
        bl_cj_uint(&b, ev, "blocks", rp->blocks);
        bl_cj_uint(&b, ev, "trials_per_block", rp->trials_per_block);
        if (rp->horizon)
            bl_cj_uint(&b, ev, "horizon", rp->horizon);
        else
            bl_cj_null(&b, ev, "horizon");
        bl_cj_uint(&b, ev, "warmup", rp->warmup);
        bl_cj_str(&b, ev, "construction_scope", bl_rp_scope_name(rp->scope));
        bl_cj_uint(&b, ev, "root_seed", rp->root_seed);
        bl_cj_str(&b, ev, "seed_partition", rp->partition);
        bl_cj_uint(&b, ev, "partition_word", rp->partition_word);
        if (rp->overridden_blocks || rp->overridden_trials) {
            cJSON *ov = bl_cj_obj(&b, ev, "as_written");
            if (ov) {
                bl_cj_uint(&b, ov, "blocks", rp->overridden_blocks ? rp->overridden_blocks : rp->blocks);
                bl_cj_uint(&b, ov, "trials_per_block", rp->overridden_trials ? rp->overridden_trials : rp->trials_per_block);
            }
        }
    }
    cJSON *nu = bl_cj_obj(&b, root, "numerics");
    if (nu) {
        bl_cj_str(&b, nu, "dtype", bl_res_dtype_name(rp->dtype));
        bl_cj_bool(&b, nu, "fast_math", 0);
        bl_cj_str(&b, nu, "reduction", "ordered");
        bl_cj_str(&b, nu, "rng", rp->rng_override ? rp->rng_override : rp->rng);
        if (rp->rng_override)
            bl_cj_str(&b, nu, "rng_as_written", rp->rng);
    }
    cJSON *ex = bl_cj_obj(&b, root, "execution");
    if (ex) {
        bl_cj_uint(&b, ex, "threads", (uint64_t)rp->threads);
        bl_cj_uint(&b, ex, "batch_size", rp->batch_size);
    }
    if (rp->probe) {
        cJSON *pr = bl_cj_obj(&b, root, "probe");
        if (pr) {
            bl_cj_uint(&b, pr, "fit_trials", rp->probe_fit);
            bl_cj_uint(&b, pr, "validation_trials", rp->probe_validation);
            bl_cj_uint(&b, pr, "evaluation_trials", rp->probe_evaluation);
            bl_cj_uint(&b, pr, "split_seed", rp->probe_split_seed);
            bl_cj_uint(&b, pr, "permutation_seed", rp->probe_permutation_seed);
            bl_cj_str(&b, pr, "points", "cue_end, delay_end, response");
            bl_cj_str(&b, pr, "lambdas", "1e-4, 1e-2, 1, 100");
        }
    }
    cJSON *targets = bl_cj_arr(&b, root, "targets");
    for (size_t i = 0; targets && i < rp->n_targets; i++)
        render_target(&b, targets, &rp->targets[i]);
    return bl_cj_finish(&b, root, pretty);
}

/* ---- entry points ---- */

static bl_status parse_body(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp)
{
    bl_status st;
    int diag = 0;
    if ((st = bl_pk_check_keys(ctx, root, "", top_keys)) ||
        (st = text_key(ctx, root, "", "question", 4096, &rp->question, "")) ||
        (st = text_key(ctx, root, "", "version", 128, &rp->version, "1")) ||
        (st = text_key(ctx, root, "", "evidence", 64, &rp->evidence, "exploratory")) ||
        (st = bl_pk_bool(ctx, root, "", "diagnostic", 0, &diag, NULL)))
        return st;
    rp->diagnostic = diag;
    if (!in_list(rp->evidence, evidence_states)) {
        char shown[160];
        bl_pk_printable(shown, sizeof shown, rp->evidence, strlen(rp->evidence));
        int promoted = !strcmp(rp->evidence, "confirmed") || !strcmp(rp->evidence, "promoted");
        return bl_pk_fail(ctx, BL_ERR_INVALID, bl_toml_table_get(root, "evidence"), "evidence",
                          "\"%s\" %s (known: planned, exploratory, tuned, frozen, retired)", shown,
                          promoted ? "cannot be conferred by a development run" : "is not an evidence state");
    }
    if ((st = read_evaluation(ctx, root, rp)) || (st = read_numerics(ctx, root, rp)) ||
        (st = read_execution(ctx, root, rp)) || (st = read_probe(ctx, root, rp)) ||
        (st = read_targets(ctx, root, rp)) ||
        (st = bl_rp_apply_operation(ctx, root, rp)))
        return st;
    for (size_t i = 0; i < rp->n_targets; i++) {
        const bl_rp_target *t = &rp->targets[i];
        if (t->controller == BL_CTRL_RESERVOIR && (st = bl_res_params_check_dtype(&t->node, rp->dtype, ctx->err)))
            return bl_fail_context(ctx->err, "%s: targets[%zu] (id \"%s\") under numerics.dtype = \"%s\"", ctx->file,
                                   i, t->id, bl_res_dtype_name(rp->dtype));
    }
    rp->json = bl_res_plan_render(rp, 0);
    if (!rp->json)
        return nomem(ctx);
    bl_sha256_buffer(rp->json, strlen(rp->json), rp->hash);
    return BL_OK;
}

bl_status bl_rp_parse(const bl_pk_ctx *ctx, const bl_toml_node *root, const bl_rp_identity *who, bl_res_plan **out)
{
    *out = NULL;
    bl_res_plan *rp = calloc(1, sizeof *rp);
    if (!rp)
        return nomem(ctx);
    bl_status st = BL_OK;
    rp->operation = who->operation;
    if ((st = copy_string(ctx, &rp->id, who->id)) ||
        (st = copy_string(ctx, &rp->description, who->description ? who->description : "")) ||
        (st = copy_string(ctx, &rp->path, who->path)))
        goto fail;
    snprintf(rp->plan_sha256, sizeof rp->plan_sha256, "%s", who->sha256);
    rp->plan_bytes = who->bytes;
    if ((st = parse_body(ctx, root, rp)))
        goto fail;
    *out = rp;
    return BL_OK;
fail:
    bl_res_plan_destroy(rp);
    return st;
}

/* The rows of the reservoir family (plan_op.h): the row's variant is the
 * bl_rp_operation; the resolved bl_res_plan is the plan's spec. */
bl_status bl_pk_op_load_reservoir(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                                  const char *plan_dir, bl_plan *plan)
{
    (void)plan_dir;
    const bl_plan_input *in = bl_plan_input_at(plan, 0);
    bl_rp_identity who = {plan->id, (bl_rp_operation)op->variant, plan->description, plan->path,
                          in ? in->sha256 : "", in ? in->bytes : 0};
    bl_res_plan *rp = NULL;
    bl_status st = bl_rp_parse(ctx, root, &who, &rp);
    plan->spec = rp;
    return st;
}

void bl_pk_op_free_reservoir(bl_plan *plan)
{
    bl_res_plan_destroy(plan->spec);
    plan->spec = NULL;
}

/* What a reservoir evaluation will take, as written (--blocks/--trials are
 * applied when it runs): every trial keeps a row of results until the record
 * is written (trials.csv, outcomes.npy, the summaries: ~512 bytes, ~300 of
 * them on disk), each batch slot a node (weights, units^2 doubles, and its
 * state); the probe keeps every trial's emitted activity at three points.
 * Time: a frame costs about units^2 multiply-adds (the recurrent weights,
 * ~1 ns each on one core) plus ~100 ns of task and bookkeeping. */
void bl_pk_op_estimate_reservoir(const bl_plan *plan, bl_plan_estimate_t *e)
{
    memset(e, 0, sizeof *e);
    const bl_res_plan *rp = plan->spec;
    if (!rp)
        return;
    double rows = 0, frames_cost = 0, biggest = 0, probe = 0;
    for (size_t i = 0; i < rp->n_targets; i++) {
        const bl_rp_target *t = &rp->targets[i];
        double trials = (double)rp->blocks * (double)rp->trials_per_block, units = (double)t->count;
        double frames = (double)t->horizon * (t->def.neural_frames ? (double)t->def.neural_frames : 1.0);
        rows += trials;
        frames_cost += trials * frames * (units * units * 1e-9 + 1e-7);
        if (units > biggest)
            biggest = units;
        if (rp->probe)
            probe += trials * 3.0 * units * 8.0;
    }
    double batch = rp->batch_size ? (double)rp->batch_size : 32.0;
    e->spikes = 0;
    e->memory_bytes = rows * 512.0 + batch * (biggest * biggest * 8.0 * 2.0 + biggest * 64.0) + probe +
                      (double)strlen(rp->json ? rp->json : "") * 2.0;
    e->disk_bytes = 4096.0 + rows * 308.0 + probe + (double)strlen(rp->json ? rp->json : "") * 1.2;
    e->seconds_one_core = frames_cost;
}

char *bl_pk_op_render_reservoir(const bl_plan *plan, int pretty, int full)
{
    (void)full;
    return bl_res_plan_render(plan->spec, pretty);
}

bl_res_plan *bl_pk_take_reservoir(bl_plan *plan)
{
    if (!(plan->op->flags & BL_OP_SPEC_RESERVOIR))
        return NULL;
    bl_res_plan *rp = plan->spec;
    plan->spec = NULL;
    return rp;
}

void bl_res_plan_destroy(bl_res_plan *rp)
{
    if (!rp)
        return;
    for (size_t i = 0; rp->targets && i < rp->n_targets; i++) {
        free(rp->targets[i].id);
        free(rp->targets[i].label);
        free(rp->targets[i].preset);
        free(rp->targets[i].pairing_key);
        free(rp->targets[i].construction_key);
        free(rp->targets[i].mechanism_key);
        free(rp->targets[i].py_head);
        free(rp->targets[i].py_params);
        free(rp->targets[i].py_tail);
    }
    free(rp->targets);
    free(rp->path);
    free(rp->id);
    free(rp->description);
    free(rp->question);
    free(rp->version);
    free(rp->evidence);
    free(rp->partition);
    free(rp->rng);
    free(rp->rng_override);
    free(rp->json);
    free(rp);
}

const char *bl_res_plan_id(const bl_res_plan *rp) { return rp->id; }
const char *bl_res_plan_path(const bl_res_plan *rp) { return rp->path; }
const char *bl_res_plan_json(const bl_res_plan *rp) { return rp->json; }
const char *bl_res_plan_hash(const bl_res_plan *rp) { return rp->hash; }


bl_status bl_res_plan_override(bl_res_plan *rp, uint32_t blocks, uint32_t trials, const char *rng, bl_error *err)
{
    if (rng && strcmp(rng, BL_SEED_SCHEME) && strcmp(rng, BL_SEED_SCHEME_HOST))
        return bl_fail(err, BL_ERR_INVALID, "--rng %s: not a seed scheme (known: %s, %s)", rng, BL_SEED_SCHEME,
                       BL_SEED_SCHEME_HOST);
    const uint64_t nb = blocks ? blocks : rp->blocks, nt = trials ? trials : rp->trials_per_block;
    if (nb > BL_RP_MAX_BLOCKS || nb * nt * rp->n_targets > BL_RP_MAX_TRIALS)
        return bl_fail(err, BL_ERR_INVALID, "%s: %" PRIu64 " blocks x %" PRIu64 " trials is too many", rp->id, nb, nt);
    if (blocks && blocks != rp->blocks) {
        if (!rp->overridden_blocks)
            rp->overridden_blocks = rp->blocks;
        rp->blocks = blocks;
    }
    if (trials && trials != rp->trials_per_block) {
        if (!rp->overridden_trials)
            rp->overridden_trials = rp->trials_per_block;
        rp->trials_per_block = trials;
    }
    if (rng && strcmp(rp->rng, rng)) {
        free(rp->rng_override);
        rp->rng_override = bl_pk_strdup(rng);
        if (!rp->rng_override)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    char *json = bl_res_plan_render(rp, 0);
    if (!json)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory while rendering %s", rp->id);
    free(rp->json);
    rp->json = json;
    bl_sha256_buffer(rp->json, strlen(rp->json), rp->hash);
    return BL_OK;
}

int bl_res_plan_runnable(const bl_res_plan *rp)
{
    (void)rp;
    return 1;
}

bl_rng_scheme bl_res_plan_scheme(const bl_res_plan *rp)
{
    const char *rng = rp->rng_override ? rp->rng_override : rp->rng;
    return !strcmp(rng, BL_SEED_SCHEME_HOST) ? BL_RNG_PHILOX_HOST_V1 : BL_RNG_BL_PHILOX_V1;
}
