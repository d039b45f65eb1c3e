/* Reservoir plans into sealed records (beside connectome_run.c): reserve, evaluate, write the per-trial
 * CSV, the outcome array and the summary, seal (or fail). The record
 * machinery is the connectome work's (record.h); nothing here restates it. */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/npy.h"
#include "brainlesslab/record.h"
#include "brainlesslab/task.h"
#include "plan/plan_reservoir.h"
#include "experiment/checkpoint.h"
#include "experiment/res_calibration.h"
#include "experiment/res_probe.h"
#include "experiment/res_run_impl.h"
#include "experiment/xp_impl.h"
#include "core/context_impl.h"
#include "core/json_check.h"

/* One target's line of the printed table: the target by its label (the
 * plan's id when it has none), and what it is. */
typedef struct res_row {
    char target[160], controller[32], node[32], units[16], task[32], key[32];
    double chance; /* the task's chance level; NaN for tasks without one */
    int episode;   /* an episode task (ties and chance are about rounds) */
} res_row;

struct bl_res_run {
    char record_dir[4096];
    char plan_id[160];
    uint32_t blocks, trials_per_block;
    size_t n_targets;
    res_row *rows;
    bl_res_summary *summaries;
    int threads;
    uint32_t batch;
    double wall_s;
};

/* A target's label as a reader wants it: the original plans write labels as
 * a Python dict's repr ("{'leak': 0.1}"), shown as "leak = 0.1". Other
 * labels are shown as written. Only for display; records keep the label. */
static void readable_label(const char *label, char *out, size_t size)
{
    size_t n = strlen(label);
    if (n < 2 || label[0] != '{' || label[n - 1] != '}' || !strchr(label, ':')) {
        snprintf(out, size, "%s", label);
        return;
    }
    size_t o = 0;
    for (size_t i = 1; i + 1 < n && o + 4 < size; i++) {
        if (label[i] == '\'' || label[i] == '"')
            continue;
        if (label[i] == ':' && label[i + 1] == ' ') {
            memcpy(out + o, " =", 2);
            o += 2;
            continue;
        }
        out[o++] = label[i];
    }
    out[o] = '\0';
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A trial's seed as trials.csv shows it: bl-philox-v1 16 hex digits,
 * philox-host-v1 the Python project's 64 (its integer, most significant first). */
static void seed_text(char *buf, const bl_rng_seed *seed)
{
    if (seed->scheme == BL_RNG_PHILOX_HOST_V1)
        bl_rng_seed_hex(seed, buf);
    else
        snprintf(buf, 17, "%016" PRIx64, seed->u64);
}

static bl_status write_csv(bl_record *rec, const bl_res_plan *rp, const bl_res_evaluation *ev, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(rec, "trials.csv", path, sizeof path, err);
    if (st)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    fprintf(f, "target,block,trial,controller,task,node,units,label,delay,length,decision,tie,evidence_left,"
               "evidence_right,outcome,ties,scored,hits,misses,status,ticks,world_seed,construction_seed,drive_seed,"
               "control_seed\n");
    for (size_t i = 0; i < ev->n_trials; i++) {
        const bl_res_trial *tr = &ev->trials[i];
        const bl_rp_target *t = &rp->targets[tr->target];
        const int res = t->controller == BL_CTRL_RESERVOIR;
        const int done = tr->status == BL_TRIAL_COMPLETED;
        char w[65], c[65] = "", d[65] = "", k[65] = "", units[16] = "";
        seed_text(w, &tr->rng.world);
        if (res) {
            seed_text(c, &tr->rng.construction);
            if (t->node.kind == BL_RES_FALANDAYS && t->node.oosawa)
                seed_text(d, &tr->rng.drive);
            snprintf(units, sizeof units, "%u", t->count);
        }
        if (t->controller == BL_CTRL_REFERENCE_NULL)
            seed_text(k, &tr->rng.control);
        char dec[8] = "", tie[4] = "", out[32] = "";
        if (tr->score.decision) {
            snprintf(dec, sizeof dec, "%d", tr->score.decision);
            snprintf(tie, sizeof tie, "%d", tr->score.tie);
        }
        if (done)
            snprintf(out, sizeof out, "%.17g", tr->score.outcome);
        fprintf(f, "%s,%u,%u,%s,%s,%s,%s,%u,%u,%u,%s,%s,%.17g,%.17g,%s,%u,%u,%u,%u,%s,%u,%s,%s,%s,%s\n", t->id,
                tr->block, tr->trial, bl_controller_name(t->controller), bl_task_name(t->task.kind),
                res ? bl_res_kind_name(t->node.kind) : "", units, tr->world.label, tr->world.delay, tr->world.length,
                dec, tie, tr->score.evidence[0], tr->score.evidence[1], out, tr->score.ties, tr->score.scored,
                tr->score.hits, tr->score.misses, bl_trial_status_name(tr->status), tr->ticks, w, c, d, k);
    }
    if (ferror(f)) {
        fclose(f);
        return bl_fail(err, BL_ERR_IO, "%s: write error", path);
    }
    if (fclose(f))
        return bl_fail(err, BL_ERR_IO, "%s: write error", path);
    return BL_OK;
}

static bl_status write_outcomes(bl_record *rec, const bl_res_plan *rp, const bl_res_evaluation *ev, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(rec, "outcomes.npy", path, sizeof path, err);
    if (st)
        return st;
    double *v = malloc(ev->n_trials * sizeof *v);
    if (!v)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %zu outcomes", ev->n_trials);
    for (size_t i = 0; i < ev->n_trials; i++)
        v[i] = ev->trials[i].status == BL_TRIAL_COMPLETED ? ev->trials[i].score.outcome : NAN;
    const uint64_t shape[3] = {rp->n_targets, rp->blocks, rp->trials_per_block};
    st = bl_npy_write(path, BL_DTYPE_FLOAT64, 3, shape, v, err);
    free(v);
    return st;
}

static void add_number_or_null(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static const char *independent_unit(bl_rp_scope scope)
{
    return scope == BL_SCOPE_EVALUATION ? "world_blocks_conditional_on_fixed_wiring"
           : scope == BL_SCOPE_BLOCK    ? "independent_wiring_blocks"
                                        : "independent_randomised_blocks";
}

static bl_status write_text(bl_record *rec, const char *name, const char *text, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(rec, name, path, sizeof path, err);
    if (st)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    int bad = fprintf(f, "%s\n", text) < 0;
    bad |= fclose(f) != 0;
    return bad ? bl_fail(err, BL_ERR_IO, "%s: write error", path) : BL_OK;
}

static bl_status write_summary(bl_record *rec, const bl_res_plan *rp, const bl_res_evaluation *ev, double wall,
                               const bl_res_calibration *cal, bl_error *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "plan_id", rp->id);
    cJSON_AddStringToObject(root, "plan_hash", rp->hash);
    cJSON_AddStringToObject(root, "operation", bl_rp_operation_name(rp->operation));
    /* float32 results never stand for float64 ones: every summary says which it is */
    cJSON_AddStringToObject(root, "dtype", bl_res_dtype_name(rp->dtype));
    /* The first target's task names the key; targets of other tasks carry their own. */
    const bl_rp_target *t0 = &rp->targets[0];
    cJSON_AddStringToObject(root, "task", bl_task_name(t0->task.kind));
    cJSON_AddStringToObject(root, "key", t0->def.outcome_key);
    add_number_or_null(root, "chance", t0->def.chance);
    cJSON *e = cJSON_AddObjectToObject(root, "evaluation");
    cJSON_AddNumberToObject(e, "blocks", rp->blocks);
    cJSON_AddNumberToObject(e, "trials_per_block", rp->trials_per_block);
    cJSON_AddStringToObject(e, "construction_scope", bl_rp_scope_name(rp->scope));
    char seed[24];
    snprintf(seed, sizeof seed, "%" PRIu64, rp->root_seed);
    cJSON_AddRawToObject(e, "root_seed", seed);
    cJSON_AddStringToObject(e, "seed_partition", rp->partition);
    cJSON *targets = cJSON_AddArrayToObject(root, "targets");
    for (size_t ti = 0; ti < rp->n_targets; ti++) {
        const bl_rp_target *t = &rp->targets[ti];
        const bl_res_summary *s = &ev->summaries[ti];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(targets, o);
        cJSON_AddStringToObject(o, "id", t->id);
        cJSON_AddStringToObject(o, "label", t->label);
        cJSON_AddStringToObject(o, "controller", bl_controller_name(t->controller));
        if (t->controller == BL_CTRL_RESERVOIR) {
            cJSON_AddStringToObject(o, "node", bl_res_kind_name(t->node.kind));
            cJSON_AddNumberToObject(o, "units", t->count);
        }
        cJSON_AddStringToObject(o, "task", bl_task_name(t->task.kind));
        cJSON_AddStringToObject(o, "key", t->def.outcome_key);
        add_number_or_null(o, t->def.outcome_key, s->accuracy);
        add_number_or_null(o, "value", s->accuracy);
        const char *status;
        add_number_or_null(o, "normalised", bl_res_normalised(t, s->accuracy, cal, &status));
        cJSON_AddStringToObject(o, "normalisation_status", status);
        cJSON_AddStringToObject(o, "pairing_key", t->pairing_key);
        cJSON_AddStringToObject(o, "construction_key", t->construction_key);
        cJSON_AddStringToObject(o, "mechanism_key", t->mechanism_key);
        if (t->label[0])
            cJSON_AddStringToObject(o, "label", t->label);
        if (isfinite(s->low)) {
            cJSON *iv = cJSON_AddObjectToObject(o, "interval");
            cJSON_AddNumberToObject(iv, "level", 0.95);
            cJSON_AddNumberToObject(iv, "low", s->low);
            cJSON_AddNumberToObject(iv, "high", s->high);
            cJSON_AddStringToObject(iv, "method", "percentile bootstrap over block means");
            cJSON_AddNumberToObject(iv, "resamples", 2000);
        } else {
            cJSON_AddNullToObject(o, "interval");
        }
        cJSON *bm = cJSON_AddArrayToObject(o, "block_means");
        for (uint32_t b = 0; b < rp->blocks; b++) {
            double v = ev->block_means[ti * rp->blocks + b];
            cJSON_AddItemToArray(bm, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
        }
        cJSON_AddNumberToObject(o, "trials", (double)rp->blocks * rp->trials_per_block);
        cJSON_AddNumberToObject(o, "completed", s->completed);
        cJSON_AddNumberToObject(o, "failed", s->failed);
        cJSON_AddNumberToObject(o, "ties", s->ties);
        cJSON_AddNumberToObject(o, "independent_blocks", s->blocks);
        cJSON_AddStringToObject(o, "independent_unit", independent_unit(rp->scope));
    }
    cJSON *w = cJSON_AddObjectToObject(root, "wall_s");
    cJSON_AddNumberToObject(w, "evaluate", wall);
    cJSON_AddNumberToObject(root, "threads", ev->threads);
    cJSON_AddNumberToObject(root, "batch_size", ev->batch);
    char *text = bl_json_print(root, 1);
    cJSON_Delete(root);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "cannot render summary.json");
    bl_status st = write_text(rec, "summary.json", text, err);
    free(text);
    return st;
}

static bl_status write_calibration(bl_record *rec, const bl_res_plan *rp, const bl_res_evaluation *ev, bl_error *err)
{
    if (rp->operation != BL_OP_CALIBRATE)
        return BL_OK;
    char *text = bl_res_calibration_json(rp, ev);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "cannot render calibration.json");
    bl_status st = write_text(rec, "calibration.json", text, err);
    free(text);
    return st;
}

static bl_status write_probe(bl_record *rec, const bl_res_plan *rp, const bl_res_evaluation *ev, bl_error *err)
{
    if (!rp->probe || !ev->probe_x)
        return BL_OK;
    char path[4096];
    bl_status st = bl_record_path(rec, "probe_events.npy", path, sizeof path, err);
    const uint64_t shape[5] = {rp->n_targets, rp->blocks, rp->trials_per_block, 3, ev->probe_width};
    if (!st)
        st = bl_npy_write(path, BL_DTYPE_FLOAT64, 5, shape, ev->probe_x, err);
    if (st)
        return st;
    char *text = bl_res_probe_json(rp, ev);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "cannot render probe.json");
    st = write_text(rec, "probe.json", text, err);
    free(text);
    return st;
}

static bl_status seeds_section(bl_record *rec, const bl_res_plan *rp, bl_error *err)
{
    char text[2048];
    if (bl_res_plan_scheme(rp) == BL_RNG_PHILOX_HOST_V1) {
        snprintf(text, sizeof text,
                 "{\"scheme\": \"%s\", \"root_seed\": %" PRIu64 ", \"seed_partition\": \"%s\", "
                 "\"construction_scope\": \"%s\", "
                 "\"derivation\": \"the Python project's: seed_for(root_seed, seed_partition, stream, keys...) = "
                 "SHA-256 of the JSON [\\\"philox-host-v1\\\", root_seed, partition, stream, [[type, key], ...]] read as a "
                 "little-endian integer, seeding numpy.random.Generator(Philox(seed)); streams world (pairing_key, task, "
                 "block, trial), construction (construction_key, node, count, inputs, effectors, scope), drive "
                 "(mechanism_key, node, block, trial), control (mechanism_key, task, block, trial), input-shuffle "
                 "(mechanism_key, node, block, trial); docs/reservoir.md, Seeds\", "
                 "\"per_trial\": \"trials.csv (world_seed, construction_seed, drive_seed, control_seed, 64 hex digits "
                 "of the seed integer, as the Python project writes them)\"}",
                 BL_SEED_SCHEME_HOST, rp->root_seed, rp->partition, bl_rp_scope_name(rp->scope));
        return bl_record_set_json(rec, "seeds", text, err);
    }
    snprintf(text, sizeof text,
             "{\"scheme\": \"%s\", \"root_seed\": %" PRIu64 ", \"seed_partition\": \"%s\", \"partition_word\": %u, "
             "\"construction_scope\": \"%s\", "
             "\"derivation\": \"Philox4x32-10, key (root_seed lo, root_seed hi), counter (block, trial, purpose, "
             "partition_word); seed = word0 | word1 << 32; purpose 1 world, 2 construction, 3 drive, 4 control, "
             "5 bootstrap, 6 intervention; 0xffffffff stands for every block / trial of a broader construction scope\", "
             "\"per_trial\": \"trials.csv (world_seed, construction_seed, drive_seed, control_seed, 16 hex digits)\"}",
             BL_SEED_SCHEME, rp->root_seed, rp->partition, rp->partition_word, bl_rp_scope_name(rp->scope));
    return bl_record_set_json(rec, "seeds", text, err);
}

static bl_status run_section(bl_record *rec, const bl_experiment_options *opt, const bl_res_plan *rp,
                             const bl_res_evaluation *ev, double wall, bl_error *err)
{
    cJSON *run = cJSON_CreateObject();
    cJSON_AddNumberToObject(run, "threads_requested", bl_xp_threads(opt, rp->threads));
    cJSON_AddNumberToObject(run, "threads", ev->threads);
    cJSON_AddNumberToObject(run, "batch_size", ev->batch);
    cJSON_AddNumberToObject(run, "trials", (double)ev->n_trials);
    cJSON_AddNumberToObject(run, "wall_evaluate_s", wall);
    cJSON_AddStringToObject(run, "dtype", bl_res_dtype_name(rp->dtype));
    cJSON_AddStringToObject(run, "numerics", rp->dtype == BL_RES_FLOAT32
                                                 ? "float32 (its own oracle and tolerance contract, docs/reservoir.md; "
                                                   "never evidence for float64), ordered destination-owned sums, no "
                                                   "FMA, no fast-math"
                                                 : "float64, ordered destination-owned sums, no FMA, no fast-math");
    char *text = bl_json_print(run, 0);
    cJSON_Delete(run);
    bl_status st = text ? bl_record_set_json(rec, "run", text, err) : bl_fail(err, BL_ERR_NOMEM, "run section");
    free(text);
    return st;
}

/* run --resume RECORD: the record's name must carry this plan's hash (the
 * checkpoint's head names the plan hash and the plan file's SHA-256). */
static bl_status reopen(const bl_res_plan *rp, const char *dir, bl_record **rec, bl_error *err)
{
    char tag[16];
    snprintf(tag, sizeof tag, "-%.8s", rp->hash);
    const char *slash = strrchr(dir, '/'), *name = slash && slash[1] ? slash + 1 : dir;
    const char *at = strstr(name, tag);
    if (!at || (at[9] && at[9] != '-'))
        return bl_fail(err, BL_ERR_INVALID, "%s: not a record of this plan (hash %.8s is not in its name)", dir,
                       rp->hash);
    return bl_record_reopen(dir, rec, err);
}

/* A resumed record: every artifact is written again; only the checkpoint
 * (and the reservation) stay. */
static bl_status clean_for_resume(bl_record *rec, bl_error *err)
{
    const char *dir = bl_record_dir(rec);
    DIR *d = opendir(dir);
    if (!d)
        return bl_fail(err, BL_ERR_IO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *de;
    bl_status st = BL_OK;
    while (!st && (de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || !strcmp(nm, ".RESERVED") || !strcmp(nm, "checkpoint"))
            continue;
        char fp[4400];
        struct stat sb;
        snprintf(fp, sizeof fp, "%s/%s", dir, nm);
        if (lstat(fp, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            st = bl_fail(err, BL_ERR_INVALID, "%s: a directory no run writes; move it away and resume again", fp);
        else if (unlink(fp) != 0)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot remove: %s", fp, strerror(errno));
    }
    closedir(d);
    return st;
}

bl_status bl_res_run_plan(const bl_res_plan *rp, const bl_experiment_options *opt, bl_res_run **out, bl_error *err)
{
    *out = NULL;
    if (!opt || !opt->root)
        return bl_fail(err, BL_ERR_INVALID, "a record root is required");
    bl_res_calibration *cal = NULL;
    if (opt->calibration) {
        bl_status cst = bl_res_calibration_load(opt->calibration, &cal, err);
        if (!cst && (cst = bl_res_calibration_check(rp, cal, err)))
            bl_res_calibration_destroy(cal);
        if (cst)
            return cst;
    }
    bl_res_run *run = calloc(1, sizeof *run);
    if (run) {
        run->rows = calloc(rp->n_targets ? rp->n_targets : 1, sizeof *run->rows);
        run->summaries = calloc(rp->n_targets ? rp->n_targets : 1, sizeof *run->summaries);
    }
    if (!run || !run->rows || !run->summaries) {
        bl_res_run_destroy(run);
        bl_res_calibration_destroy(cal);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a run");
    }
    bl_record *rec = NULL;
    const int resume = opt->resume != NULL;
    bl_status st = resume ? reopen(rp, opt->resume, &rec, err) : bl_xp_reserve_named(opt->root, rp->id, rp->hash, &rec, err);
    if (st) {
        bl_res_run_destroy(run);
        bl_res_calibration_destroy(cal);
        return st;
    }
    snprintf(run->record_dir, sizeof run->record_dir, "%s", bl_record_dir(rec));
    snprintf(run->plan_id, sizeof run->plan_id, "%s", rp->id);
    bl_res_evaluation *ev = NULL;
    bl_xp_ckpt *stash = NULL; /* moves the checkpoint out for the seal */
    bl_xp_res_ckpt *ck = NULL;
    double wall = 0.0;
    /* The plan as hashed when it was parsed, never re-read (issue 16). */
    if (!(st = bl_xp_protect(rec, opt, 0, err)) &&
        !(st = strlen(rp->plan_sha256) == 64
                   ? bl_record_add_input_digest(rec, "plan", rp->path, rp->plan_sha256, rp->plan_bytes, err)
                   : bl_record_add_input(rec, "plan", rp->path, err)) &&
        !(st = bl_record_set_json(rec, "plan", rp->json, err)) && !(st = seeds_section(rec, rp, err)) &&
        !(st = bl_xp_ckpt_open(rec, rp->hash, 0, "reservoir", 0, 1, 0, resume, &stash, err)) &&
        !(st = resume ? clean_for_resume(rec, err) : BL_OK) &&
        !(st = bl_xp_res_ckpt_open(rec, rp->hash, rp->plan_sha256, resume, &ck, err))) {
        /* Every batch of trials is checkpointed in the record: a killed run
         * resumes with the batches it finished (checkpoint.h). */
        double t0 = now();
        bl_res_resume_hooks hooks;
        bl_xp_res_ckpt_hooks(ck, &hooks);
        st = bl_res_evaluate_resumable(rp, opt->threads, opt->batch, bl_context_resolve(opt->context), &hooks, &ev,
                                       err);
        wall = now() - t0;
    }
    if (!st && resume) {
        char text[512];
        uint64_t first = bl_xp_res_ckpt_first_run(ck);
        snprintf(text, sizeof text, "{\"resumed\": true, \"from_trial_index\": %" PRIu64 ", \"trials_from_checkpoint\": "
                 "%" PRIu64 ", \"batches_dropped\": %" PRIu64 ", \"definition\": \"trial index = (target * blocks + "
                 "block) * trials_per_block + trial; from_trial_index: the first reservoir trial this run ran (the "
                 "number of trials when none); the others came from the interrupted run's checkpoint, checked "
                 "against their SHA-256 (docs/reliability.md, Durable runs)\"}",
                 first == UINT64_MAX ? (uint64_t)(ev ? ev->n_trials : 0) : first, bl_xp_res_ckpt_kept(ck),
                 bl_xp_res_ckpt_dropped(ck));
        st = bl_record_set_json(rec, "resumed", text, err);
    }
    if (!st && !(st = write_csv(rec, rp, ev, err)) && !(st = write_outcomes(rec, rp, ev, err)) &&
        !(st = write_summary(rec, rp, ev, wall, cal, err)) && !(st = run_section(rec, opt, rp, ev, wall, err)) &&
        !(st = write_calibration(rec, rp, ev, err)))
        st = write_probe(rec, rp, ev, err);
    bl_xp_res_ckpt_destroy(ck); /* its log closed before the checkpoint moves */
    if (!st) /* the record holds what an uninterrupted run's holds */
        st = bl_xp_ckpt_stash(stash, err);
    st = bl_xp_end(rec, NULL, st, err); /* no run.log: the evaluation has no phases to tell */
    if (!st)
        bl_xp_ckpt_discard(stash);
    bl_xp_ckpt_destroy(stash);
    bl_record_destroy(rec);
    bl_res_calibration_destroy(cal);
    if (!st) {
        run->blocks = rp->blocks;
        run->trials_per_block = rp->trials_per_block;
        run->n_targets = rp->n_targets;
        run->threads = ev->threads;
        run->batch = ev->batch;
        run->wall_s = wall;
        for (size_t ti = 0; ti < rp->n_targets; ti++) {
            const bl_rp_target *t = &rp->targets[ti];
            res_row *r = &run->rows[ti];
            readable_label(t->label && t->label[0] ? t->label : t->id, r->target, sizeof r->target);
            snprintf(r->task, sizeof r->task, "%s", bl_task_name(t->task.kind));
            snprintf(r->key, sizeof r->key, "%s", t->def.outcome_key);
            snprintf(r->controller, sizeof r->controller, "%s", t->controller == BL_CTRL_RESERVOIR ? "reservoir"
                                                                : bl_controller_name(t->controller));
            snprintf(r->node, sizeof r->node, "%s", t->controller == BL_CTRL_RESERVOIR ? bl_res_kind_name(t->node.kind)
                                                                                       : "-");
            if (t->controller == BL_CTRL_RESERVOIR)
                snprintf(r->units, sizeof r->units, "%u", t->count);
            else
                snprintf(r->units, sizeof r->units, "-");
            r->chance = t->def.chance;
            r->episode = t->def.episode;
            run->summaries[ti] = ev->summaries[ti];
        }
    }
    bl_res_evaluation_destroy(ev);
    if (st) {
        bl_res_run_destroy(run);
        return st;
    }
    *out = run;
    return BL_OK;
}

void bl_res_run_destroy(bl_res_run *run)
{
    if (!run)
        return;
    free(run->rows);
    free(run->summaries);
    free(run);
}

const char *bl_res_run_record_dir(const bl_res_run *run) { return run->record_dir; }

enum { COLS = 9 };

/* Print one table line: text columns left-aligned, numbers right-aligned,
 * each as wide as its widest cell. */
static void print_line(FILE *out, const char *const cell[COLS], const size_t width[COLS])
{
    static const int right[COLS] = {0, 0, 0, 1, 0, 0, 0, 1, 1};
    fputs(" ", out);
    for (int k = 0; k < COLS; k++)
        fprintf(out, right[k] ? " %*s" : " %-*s", (int)width[k], cell[k]);
    fputs("\n", out);
}

void bl_res_run_print(const bl_res_run *run, FILE *out)
{
    fprintf(out, "%s: %zu target(s) x %u block(s) x %u trial(s), %d thread(s), batch %u, %.2f s\n", run->plan_id,
            run->n_targets, run->blocks, run->trials_per_block, run->threads, run->batch, run->wall_s);
    static const char *const head[COLS] = {"target", "controller", "node", "units", "task", "score",
                                           "95% interval", "ties", "failed"};
    size_t width[COLS];
    for (int k = 0; k < COLS; k++)
        width[k] = strlen(head[k]);
    char (*text)[COLS][96] = calloc(run->n_targets ? run->n_targets : 1, sizeof *text);
    if (!text)
        return;
    int episode = 0, continuing = 0;
    double chance = NAN;
    for (size_t ti = 0; ti < run->n_targets; ti++) {
        const bl_res_summary *s = &run->summaries[ti];
        const res_row *r = &run->rows[ti];
        snprintf(text[ti][0], 96, "%s", r->target);
        snprintf(text[ti][1], 96, "%s", r->controller);
        snprintf(text[ti][2], 96, "%s", r->node);
        snprintf(text[ti][3], 96, "%s", r->units);
        snprintf(text[ti][4], 96, "%s", r->task);
        if (isfinite(s->accuracy))
            snprintf(text[ti][5], 96, "%s %.3f", r->key, s->accuracy);
        else
            snprintf(text[ti][5], 96, "%s n/a", r->key);
        snprintf(text[ti][6], 96, isfinite(s->low) ? "[%.3f, %.3f]" : "n/a", s->low, s->high);
        snprintf(text[ti][7], 96, "%u", s->ties);
        snprintf(text[ti][8], 96, "%u", s->failed);
        for (int k = 0; k < COLS; k++)
            if (strlen(text[ti][k]) > width[k])
                width[k] = strlen(text[ti][k]);
        episode |= r->episode;
        continuing |= !r->episode;
        if (r->episode && isfinite(r->chance))
            chance = r->chance;
    }
    print_line(out, head, width);
    for (size_t ti = 0; ti < run->n_targets; ti++) {
        const char *cell[COLS];
        for (int k = 0; k < COLS; k++)
            cell[k] = text[ti][k];
        print_line(out, cell, width);
    }
    free(text);
    /* What the footer says holds for the tasks in the table only. */
    if (episode && isfinite(chance))
        fprintf(out, "  episode tasks: chance = %.3g, ties go to effector 1 and are counted\n", chance);
    if (continuing)
        fprintf(out, "  continuing tasks: the score is the task's own (docs/reservoir.md); ties and chance do not apply\n");
    fprintf(out, "  record: %s\n", run->record_dir);
}
