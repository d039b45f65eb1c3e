/* Connectome experiments: plan -> network -> engine -> artifacts -> sealed record. */
#define _GNU_SOURCE /* qsort_r */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/analysis.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/record.h"
#include "brainlesslab/sonata.h"
#include "core/context_impl.h"
#include "core/stream.h"
#include "engine/snapshot.h"
#include "experiment/checkpoint.h"
#include "experiment/xp_impl.h"
#include "models/eq_part.h"
#include "engine/network_impl.h"
#include "mpi/mpi_job.h"
#include "core/json_check.h"

#define TOP_GROUPS 64

typedef struct group {
    char cell_type[64];
    int32_t depth;
    uint64_t neurons, responders;
    double rate_sum; /* over responders */
} group;

struct bl_experiment {
    char record_dir[4096];
    char backend[32];
    int threads;
    char plan_id[160];
    uint32_t trials;
    double duration_ms;
    uint64_t n_neurons, spikes;
    double wall_prepare, wall_run, wall_write;
    bl_propagation pooled;
    uint64_t responders;
    group *groups;
    size_t n_groups;
    int mpi_rank, mpi_ranks; /* 0, 1 unless the run is an MPI job */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The per-run working set, freed in one place. */
typedef struct run_ctx {
    bl_context *ctx; /* the caller's (or the default): MPI job, sinks */
    const bl_plan *plan;
    const bl_connectome *c;
    bl_record *rec;
    bl_stimulus *stim;
    bl_network *net;
    bl_engine *eng;
    bl_result *res;
    double *mean, *sd;
    int32_t *depth, *total;
    uint8_t *stimulated;
    const char *backend_forced; /* "mpi" when launched as an MPI job of several ranks */
    bl_xp_spikes *spikes;       /* streamed spike files and the PSTH (rank 0) */
    bl_xp_log log;              /* run.log in the record (rank 0) */
    bl_xp_ckpt *ckpt;           /* trial checkpoints (one process; checkpoint.h) */
    int resume;                 /* finishing a killed or FAILED record */
    uint32_t resumed_from;      /* the first trial this run ran */
    uint64_t snap_windows;      /* checkpoints within a trial every this many windows (0: none) */
    double snap_min_wall;       /* ... but not sooner than this many wall seconds after the trial's last */
    double wave_t0, *snap_last; /* when the wave began; [trials]: each trial's last checkpoint (0: none) */
    bl_snap_list shared;        /* an MPI job resuming: rank 0's states for the other ranks */
    int32_t *skip;              /* [trials + 1]: 1 for a trial taken from the checkpoint; [trials]: rank 0 failed */
    /* progress within trials: the result's step observer, throttled */
    uint32_t trials_done, trials_total;
    double dt_ms, t_run, last_report;
    int reporting;
} run_ctx;

/* The result's observers: spikes go to the stream (or nowhere: a run without
 * spike output keeps no events in memory), steps become progress lines at
 * most every quarter second, from whichever thread gets there first. */
static bl_status observe_spikes(void *user, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                                bl_error *err)
{
    run_ctx *x = user;
    bl_status st = x->spikes ? bl_xp_spikes_sink(x->spikes, trial, step, neurons, n, err) : BL_OK;
    /* Checkpoints within a trial keep the trial's spikes until its next one. */
    return st ? st : bl_xp_ckpt_partial_pend(x->ckpt, trial, step, neurons, n, err);
}

/* An MPI job resuming: rank 0 keeps each state its engine took, then
 * sends them all to the other ranks, whose engines take them too (every
 * rank steps its neurons of the same trial from the same step). */
static bl_status keep_shared(void *user, uint32_t trial, const void *blob, size_t len, bl_error *err)
{
    run_ctx *x = user;
    return bl_snap_list_add(&x->shared, x->net, trial, blob, len, err);
}

static bl_status share_states(run_ctx *x, bl_error *err)
{
    uint64_t n = x->shared.n;
    bl_status st = bl_mpi_job_bcast_bytes(x->ctx, &n, sizeof n, err);
    for (uint64_t k = 0; !st && k < n; k++) {
        int root = bl_mpi_job_rank(x->ctx) == 0;
        uint64_t head[2] = {root ? x->shared.v[k].trial : 0, root ? x->shared.v[k].len : 0};
        if ((st = bl_mpi_job_bcast_bytes(x->ctx, head, sizeof head, err)))
            break;
        unsigned char *b = root ? x->shared.v[k].blob : malloc(head[1] ? head[1] : 1);
        if (!b) /* this rank alone: end the job (rank 0 fails the record) */
            return bl_mpi_job_abort(x->ctx, "out of memory receiving a checkpoint", err);
        st = bl_mpi_job_bcast_bytes(x->ctx, b, head[1], err);
        if (!st && !root)
            st = bl_engine_resume_trial(x->eng, (uint32_t)head[0], b, (size_t)head[1], err);
        if (!root)
            free(b);
    }
    bl_snap_list_free(&x->shared);
    return st;
}

/* The engine's snapshot of a trial in flight, into the record (checkpoint.h). */
static bl_status save_snapshot(void *user, uint32_t trial, uint64_t step, const void *blob, size_t len,
                               bl_error *err)
{
    run_ctx *x = user;
    /* The default interval is also held to a floor of wall time: what a
     * checkpoint costs is mostly its fsyncs (about 13 ms here, whatever the
     * network), which on a fast network every simulated second would cost
     * 20%; a checkpoint after at least BL_CHECKPOINT_MIN_WALL_S costs < 0.2%.
     * Where the checkpoints fall changes no bit of the run. */
    double t = bl_xp_now(), last = x->snap_last[trial] > 0 ? x->snap_last[trial] : x->wave_t0;
    if (x->snap_min_wall > 0 && t - last < x->snap_min_wall)
        return BL_OK;
    x->snap_last[trial] = t;
    return bl_xp_ckpt_partial_save(x->ckpt, x->res, trial, step, blob, len, err);
}

static void observe_steps(void *user, uint64_t steps_done)
{
    run_ctx *x = user;
    if (!x->ctx->progress || __atomic_exchange_n(&x->reporting, 1, __ATOMIC_ACQUIRE))
        return;
    double t = bl_xp_now();
    if (t - x->last_report >= 0.25) {
        x->last_report = t;
        x->ctx->progress(x->ctx->progress_user, x->trials_done, x->trials_total,
                         (double)steps_done * x->dt_ms / 1000.0, t - x->t_run);
    }
    __atomic_store_n(&x->reporting, 0, __ATOMIC_RELEASE);
}

static void ctx_free(run_ctx *x)
{
    bl_xp_ckpt_destroy(x->ckpt);
    free(x->snap_last);
    bl_snap_list_free(&x->shared);
    free(x->skip);
    bl_xp_spikes_destroy(x->spikes);
    bl_xp_log_close(&x->log);
    bl_result_destroy(x->res);
    bl_engine_destroy(x->eng);
    bl_network_destroy(x->net);
    bl_stimulus_destroy(x->stim);
    free(x->mean);
    free(x->sd);
    free(x->depth);
    free(x->total);
    free(x->stimulated);
}

static bl_status reserve(const bl_plan *plan, const char *root, bl_record **rec, bl_error *err)
{
    char stamp[32], name[256];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    /* A new name for every run: an existing record is never reused. */
    for (int k = 1; k < 1000; k++) {
        if (k == 1)
            snprintf(name, sizeof name, "%s-%s-%.8s", bl_plan_id(plan), stamp, bl_plan_hash(plan));
        else
            snprintf(name, sizeof name, "%s-%s-%.8s-%d", bl_plan_id(plan), stamp, bl_plan_hash(plan), k);
        bl_status st = bl_record_reserve(root, name, rec, err);
        if (st != BL_ERR_EXISTS)
            return st;
    }
    return bl_fail(err, BL_ERR_EXISTS, "%s: could not find a free record name for %s", root, bl_plan_id(plan));
}

/* run --resume RECORD: the record must be this plan's (its name carries the
 * plan hash, its plan.toml is the plan file's bytes) before it is reopened;
 * the checkpoint then says which trials are done (checkpoint.c). */
static bl_status reopen(const bl_plan *plan, const char *dir, bl_record **rec, bl_error *err)
{
    char tag[16], path[4200], hex[65];
    snprintf(tag, sizeof tag, "-%.8s", bl_plan_hash(plan));
    const char *slash = strrchr(dir, '/'), *name = slash && slash[1] ? slash + 1 : dir;
    const char *at = strstr(name, tag);
    if (!at || (at[9] && at[9] != '-'))
        return bl_fail(err, BL_ERR_INVALID, "%s: not a record of this plan (hash %.8s is not in its name)", dir,
                       bl_plan_hash(plan));
    const char *plan_sha = NULL;
    for (size_t i = 0; i < bl_plan_n_inputs(plan); i++)
        if (!strcmp(bl_plan_input_at(plan, i)->role, "plan"))
            plan_sha = bl_plan_input_at(plan, i)->sha256;
    snprintf(path, sizeof path, "%s/plan.toml", dir);
    uint64_t bytes;
    bl_error none = {0};
    /* An empty plan.toml is a run killed between reserving the record and
     * writing its plan (the name's hash, checked above, says whose it is):
     * the resumed run writes the plan, as every run does. */
    if (plan_sha && !bl_sha256_file(path, hex, &bytes, &none) && bytes > 0 && strcmp(hex, plan_sha))
        return bl_fail(err, BL_ERR_INVALID, "%s: the record ran another plan file (SHA-256 %.12s, this one %.12s)",
                       path, hex, plan_sha);
    return bl_record_reopen(dir, rec, err);
}

static bl_status write_npy(bl_record *rec, const char *name, bl_dtype dt, int nd, const uint64_t *shape,
                           const void *data, bl_error *err)
{
    char path[4096];
    static const int64_t empty = 0;
    bl_status st = bl_record_path(rec, name, path, sizeof path, err);
    return st ? st : bl_npy_write(path, dt, nd, shape, data ? data : &empty, err);
}

static const char *cell_type(const bl_connectome *c, int col, uint64_t i)
{
    const char *v = col >= 0 ? bl_connectome_value(c, (size_t)col, i) : "";
    return v[0] ? v : "(unannotated)";
}

/* An MPI job's rank 0 holds every event in its result (the ranks exchange
 * them): they go through the same stream as a single process's would. */
static bl_status stream_events(run_ctx *x, uint64_t from_event, uint32_t first, uint32_t n_trials, bl_error *err)
{
    const bl_result *r = x->res;
    uint64_t n = bl_result_n_events(r), a = from_event;
    const int32_t *tr = bl_result_event_trials(r), *sp = bl_result_event_steps(r), *nr = bl_result_event_neurons(r);
    bl_status st = BL_OK;
    while (!st && a < n) {
        uint64_t b = a;
        while (b < n && tr[b] == tr[a] && sp[b] == sp[a])
            b++;
        st = bl_xp_spikes_sink(x->spikes, (uint32_t)tr[a], (uint32_t)sp[a], nr + a, (size_t)(b - a), err);
        a = b;
    }
    return st ? st : bl_xp_spikes_end_trials(x->spikes, first, n_trials, err);
}

/* probes_v.npy, probes_g.npy [trial][sample][neuron] and probes.json. */
static bl_status write_probes(run_ctx *x, bl_error *err)
{
    uint64_t every, samples;
    size_t np;
    const bl_plan_population *pop = bl_plan_probes(x->plan, &every);
    if (!pop)
        return BL_OK;
    const void *v = bl_result_probe_v(x->res, &samples, &np);
    bl_dtype dt = bl_result_state_dtype(x->res);
    uint64_t shape[3] = {bl_plan_trials(x->plan), samples, np};
    bl_status st = bl_xp_write_npy(x->rec, "probes_v.npy", dt, 3, shape, v, err);
    if (!st)
        st = bl_xp_write_npy(x->rec, "probes_g.npy", dt, 3, shape, bl_result_probe_g(x->res), err);
    if (st)
        return st;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "population", pop->name);
    cJSON *ids = cJSON_AddArrayToObject(o, "neurons");
    for (size_t k = 0; k < np; k++)
        cJSON_AddItemToArray(ids, cJSON_CreateNumber(pop->neurons[k]));
    cJSON_AddNumberToObject(o, "every_steps", (double)every);
    cJSON_AddNumberToObject(o, "samples", (double)samples);
    cJSON_AddStringToObject(o, "probes_npy", "[trial][sample][neuron] in the model's state dtype and units; sample k "
                                             "is the state after (k + 1) * every_steps steps (after that step's "
                                             "resets)");
    return bl_xp_write_json(x->rec, "probes.json", o, err);
}

static bl_status write_psth(run_ctx *x, bl_error *err)
{
    const bl_plan_population *const *pops;
    uint64_t bin_steps, bins;
    size_t np = bl_plan_psth(x->plan, &pops, &bin_steps);
    const int32_t *psth = x->spikes ? bl_xp_spikes_psth(x->spikes, &bins) : NULL;
    if (!np || !psth)
        return BL_OK;
    uint64_t shape[3] = {bl_plan_trials(x->plan), np, bins};
    bl_status st = bl_xp_write_npy(x->rec, "psth.npy", BL_DTYPE_INT32, 3, shape, psth, err);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "psth_npy", "int32 [trial][population][bin]: spikes of the population's neurons "
                                           "in bin k = steps [k*bin_steps, (k+1)*bin_steps); the last bin may be "
                                           "shorter (see last_bin_steps)");
    cJSON *names = cJSON_AddArrayToObject(o, "populations");
    cJSON *sizes = cJSON_AddArrayToObject(o, "population_sizes");
    for (size_t p = 0; p < np; p++) {
        cJSON_AddItemToArray(names, cJSON_CreateString(pops[p]->name));
        cJSON_AddItemToArray(sizes, cJSON_CreateNumber((double)pops[p]->n_neurons));
    }
    double dt = bl_plan_lif_params(x->plan)->dt_ms;
    uint64_t steps = bl_plan_steps(x->plan);
    cJSON_AddNumberToObject(o, "bin_steps", (double)bin_steps);
    cJSON_AddNumberToObject(o, "bin_ms", (double)bin_steps * dt);
    cJSON_AddNumberToObject(o, "bins", (double)bins);
    cJSON_AddNumberToObject(o, "last_bin_steps", (double)(steps - (bins - 1) * bin_steps));
    return st ? (cJSON_Delete(o), st) : bl_xp_write_json(x->rec, "psth.json", o, err);
}

static bl_status write_rates_csv(run_ctx *x, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(x->rec, "rates.csv", path, sizeof path, err);
    if (st)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    const char *head[] = {"index", "external_id", "cell_type", "depth_from_stimulus", "total_spikes",
                          "mean_rate_hz", "sd_rate_hz"};
    for (int k = 0; k < 7; k++)
        bl_csv_write_field(f, head[k], k == 6);
    int col = bl_connectome_column(x->c, "cell_type");
    uint64_t n = bl_connectome_n_neurons(x->c);
    for (uint64_t i = 0; i < n; i++) {
        char buf[5][40];
        snprintf(buf[0], 40, "%" PRIu64, i);
        snprintf(buf[1], 40, "%" PRId32, x->depth[i]);
        snprintf(buf[2], 40, "%" PRId32, x->total[i]);
        snprintf(buf[3], 40, "%.17g", x->mean[i]);
        snprintf(buf[4], 40, "%.17g", x->sd[i]);
        bl_csv_write_field(f, buf[0], 0);
        bl_csv_write_field(f, bl_connectome_external_id(x->c, i), 0);
        bl_csv_write_field(f, col >= 0 ? bl_connectome_value(x->c, (size_t)col, i) : "", 0);
        bl_csv_write_field(f, buf[1], 0);
        bl_csv_write_field(f, buf[2], 0);
        bl_csv_write_field(f, buf[3], 0);
        bl_csv_write_field(f, buf[4], 1);
    }
    int bad = ferror(f);
    if (fclose(f) || bad)
        return bl_fail(err, BL_ERR_IO, "%s: write failed", path);
    return BL_OK;
}

static cJSON *propagation_json(const bl_propagation *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "spikes", (double)p->spikes);
    cJSON_AddNumberToObject(o, "active_neurons", (double)p->active_neurons);
    cJSON_AddNumberToObject(o, "downstream_active_neurons", (double)p->downstream_active_neurons);
    cJSON_AddNumberToObject(o, "propagation_depth", p->propagation_depth);
    cJSON_AddNumberToObject(o, "descending_active_neurons", (double)p->descending_active_neurons);
    cJSON_AddNumberToObject(o, "motor_active_neurons", (double)p->motor_active_neurons);
    return o;
}

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->depth != y->depth) /* unreachable (-1) last */
        return (x->depth < 0) != (y->depth < 0) ? (x->depth < 0) - (y->depth < 0) : (x->depth > y->depth) - (x->depth < y->depth);
    if (x->responders != y->responders)
        return x->responders < y->responders ? 1 : -1;
    return strcmp(x->cell_type, y->cell_type);
}

/* Responders grouped by (cell type, depth from the stimulus). */
static bl_status build_groups(bl_experiment *xp, run_ctx *x, bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(x->c);
    int col = bl_connectome_column(x->c, "cell_type");
    for (uint64_t i = 0; i < n; i++) {
        const char *ct = cell_type(x->c, col, i);
        size_t g = 0;
        while (g < xp->n_groups && !(xp->groups[g].depth == x->depth[i] && !strncmp(xp->groups[g].cell_type, ct, 63)))
            g++;
        if (g == xp->n_groups) {
            group *grown = realloc(xp->groups, (xp->n_groups + 1) * sizeof *grown);
            if (!grown)
                return bl_fail(err, BL_ERR_NOMEM, "cannot allocate responder groups");
            xp->groups = grown;
            memset(&grown[g], 0, sizeof grown[g]);
            snprintf(grown[g].cell_type, sizeof grown[g].cell_type, "%s", ct);
            grown[g].depth = x->depth[i];
            xp->n_groups++;
        }
        xp->groups[g].neurons++;
        if (x->mean[i] >= BL_RESPONDER_THRESHOLD_HZ) {
            xp->groups[g].responders++;
            xp->groups[g].rate_sum += x->mean[i];
            xp->responders++;
        }
    }
    qsort(xp->groups, xp->n_groups, sizeof *xp->groups, cmp_group);
    return BL_OK;
}

/* qsort_r (glibc): the rates travel with the call (no file-scope state). */
static int cmp_by_rate(const void *a, const void *b, void *rates_v)
{
    const double *rates = rates_v;
    double x = rates[*(const int32_t *)a], y = rates[*(const int32_t *)b];
    if (x != y)
        return x < y ? 1 : -1;
    return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

static bl_status write_summary(bl_experiment *xp, run_ctx *x, cJSON *propagation_trials, bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(x->c);
    int col = bl_connectome_column(x->c, "cell_type");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "plan_id", bl_plan_id(x->plan));
    cJSON_AddStringToObject(o, "plan_hash", bl_plan_hash(x->plan));
    cJSON_AddStringToObject(o, "backend", xp->backend);
    cJSON_AddNumberToObject(o, "threads", xp->threads);
    cJSON_AddNumberToObject(o, "trials", xp->trials);
    cJSON_AddNumberToObject(o, "duration_ms", xp->duration_ms);
    cJSON_AddNumberToObject(o, "neurons", (double)n);
    cJSON_AddNumberToObject(o, "spikes", (double)xp->spikes);
    if (x->spikes) {
        char digest[65];
        bl_xp_spikes_digest(x->spikes, digest);
        cJSON_AddStringToObject(o, "spikes_sha256", digest);
        cJSON_AddStringToObject(o, "spikes_sha256_definition",
                                "SHA-256 over the trials in order of each trial's SHA-256 of its (step, neuron) "
                                "int32 little-endian pairs in (step, neuron) order, every spike");
    }
    cJSON_AddNumberToObject(o, "active_neurons", (double)xp->pooled.active_neurons);
    cJSON_AddNumberToObject(o, "responder_threshold_hz", BL_RESPONDER_THRESHOLD_HZ);
    cJSON_AddNumberToObject(o, "responders", (double)xp->responders);
    cJSON *wall = cJSON_AddObjectToObject(o, "wall_seconds");
    cJSON_AddNumberToObject(wall, "prepare", xp->wall_prepare);
    cJSON_AddNumberToObject(wall, "run", xp->wall_run);
    cJSON_AddNumberToObject(wall, "write", now() - xp->wall_write);
    cJSON_AddNumberToObject(o, "realtime_factor_wall_per_simulated_second",
                            xp->wall_run / (xp->trials * xp->duration_ms / 1000.0));
    int top = bl_plan_top_responders(x->plan);
    int32_t *order = malloc((n ? n : 1) * sizeof *order);
    cJSON *tops = cJSON_AddArrayToObject(o, "top_responders");
    if (order) {
        for (uint64_t i = 0; i < n; i++)
            order[i] = (int32_t)i;
        qsort_r(order, n, sizeof *order, cmp_by_rate, x->mean);
        for (uint64_t k = 0; k < n && k < (uint64_t)top && x->mean[order[k]] > 0; k++) {
            int32_t i = order[k];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "index", i);
            cJSON_AddStringToObject(e, "external_id", bl_connectome_external_id(x->c, (uint64_t)i));
            cJSON_AddStringToObject(e, "cell_type", col >= 0 ? bl_connectome_value(x->c, (size_t)col, (uint64_t)i) : "");
            cJSON_AddNumberToObject(e, "depth_from_stimulus", x->depth[i]);
            cJSON_AddNumberToObject(e, "mean_rate_hz", x->mean[i]);
            cJSON_AddNumberToObject(e, "sd_rate_hz", x->sd[i]);
            cJSON_AddItemToArray(tops, e);
        }
        free(order);
    }
    cJSON *groups = cJSON_AddArrayToObject(o, "responders_by_cell_type_and_depth");
    for (size_t g = 0; g < xp->n_groups; g++) {
        if (!xp->groups[g].responders)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "cell_type", xp->groups[g].cell_type);
        cJSON_AddNumberToObject(e, "depth_from_stimulus", xp->groups[g].depth);
        cJSON_AddNumberToObject(e, "neurons", (double)xp->groups[g].neurons);
        cJSON_AddNumberToObject(e, "responders", (double)xp->groups[g].responders);
        cJSON_AddNumberToObject(e, "mean_rate_of_responders_hz",
                                xp->groups[g].rate_sum / (double)xp->groups[g].responders);
        cJSON_AddItemToArray(groups, e);
    }
    cJSON_AddItemToObject(o, "propagation", propagation_json(&xp->pooled));
    if (propagation_trials)
        cJSON_AddItemToObject(o, "propagation_per_trial", propagation_trials);
    return bl_xp_write_json(x->rec, "summary.json", o, err);
}

static bl_status merge_depths_mpi(int32_t *depth, uint64_t n, void *user, bl_error *err)
{
    return bl_mpi_job_allreduce_max_i32(user, depth, n, err);
}

/* Shortest-path depth of every neuron from the stimulated set (x->depth).
 * For a connectome part, collective over the MPI job. */
static bl_status compute_depths(run_ctx *x, bl_error *err)
{
    const bl_plan *plan = x->plan;
    uint64_t n = bl_connectome_n_neurons(x->c);
    size_t n_sources = 0;
    for (size_t p = 0; p < bl_plan_n_populations(plan); p++)
        n_sources += bl_plan_population_at(plan, p)->n_neurons;
    int32_t *sources = malloc((n_sources ? n_sources : 1) * sizeof *sources);
    x->depth = malloc((n ? n : 1) * sizeof *x->depth);
    if (!sources || !x->depth) {
        free(sources);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the depth search for %" PRIu64 " neurons", n);
    }
    n_sources = 0;
    for (size_t p = 0; p < bl_plan_n_populations(plan); p++) {
        const bl_plan_population *pop = bl_plan_population_at(plan, p);
        for (size_t a = 0; a < pop->n_neurons; a++)
            sources[n_sources++] = pop->neurons[a];
    }
    bl_status st;
    if (bl_connectome_parts(x->c) == 1)
        st = bl_shortest_depths(x->c, sources, n_sources, x->depth, err);
    else /* a part exists only in an MPI job (bl_plan_load_part) */
        st = bl_shortest_depths_merged(x->c, sources, n_sources, x->depth, merge_depths_mpi, x->ctx, err);
    free(sources);
    return st;
}

/* Degenerate parameters can drive the state to NaN or infinity while every
 * step "succeeds"; such a run describes nothing and must not be sealed DONE. */
static bl_status check_finite(run_ctx *x, bl_error *err)
{
    uint64_t n = bl_connectome_n_neurons(x->c) * (uint64_t)bl_result_n_trials(x->res);
    const void *vs[2] = {bl_result_final_v(x->res), bl_result_final_g(x->res)};
    const char *names[2] = {"v", "g"};
    int f32 = bl_result_state_dtype(x->res) == BL_DTYPE_FLOAT32;
    uint64_t nn = bl_connectome_n_neurons(x->c);
    for (int k = 0; k < 2; k++) {
        if (!vs[k])
            continue;
        for (uint64_t i = 0; i < n; i++) {
            double v = f32 ? (double)((const float *)vs[k])[i] : ((const double *)vs[k])[i];
            if (!isfinite(v))
                return bl_fail(err, BL_ERR_INVALID,
                               "the state turned non-finite: final %s of neuron %" PRIu64 " in trial %" PRIu64
                               " is %g (check the model parameters)",
                               names[k], nn ? i % nn : 0, nn ? i / nn : 0, v);
        }
    }
    return BL_OK;
}

static bl_status run_and_write(bl_experiment *xp, run_ctx *x, const bl_experiment_options *opt, bl_error *err)
{
    const bl_plan *plan = x->plan;
    const bl_connectome *c = x->c;
    uint64_t n = bl_connectome_n_neurons(c), steps = bl_plan_steps(plan);
    uint32_t trials = bl_plan_trials(plan);
    double t0 = now();
    size_t n_sil = 0;
    const int32_t *sil = bl_plan_silenced(plan, &n_sil);
    const char *backend = x->backend_forced ? x->backend_forced : opt->backend ? opt->backend : bl_plan_backend(plan);
    int threads = bl_xp_threads(opt, bl_plan_threads(plan));
    bl_status st = bl_plan_build_stimulus(plan, &x->stim, err);
    if (!st)
        st = bl_network_create(c, bl_plan_lif_params(plan), x->stim, sil, n_sil, bl_plan_seed(plan), &x->net, err);
    if (!st)
        st = bl_engine_create(x->ctx, x->net, backend, &x->eng, err);
    if (!st)
        st = bl_engine_set_threads(x->eng, threads, err);
    if (!st)
        st = bl_result_create(x->net, 0, trials, &x->res, err);
    /* Spikes leave the engine as they happen, into one SONATA file per trial
     * (rank 0 of an MPI job streams them after the run, from its result). */
    const bl_plan_population *const *psth_pops;
    uint64_t bin_steps;
    size_t n_psth = bl_plan_psth(plan, &psth_pops, &bin_steps);
    uint8_t *keep = NULL;
    const bl_plan_population *subset = bl_plan_spikes_subset(plan);
    if (!st && subset && !(keep = calloc(n ? n : 1, 1)))
        st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the spike subset");
    for (size_t a = 0; keep && a < subset->n_neurons; a++)
        keep[subset->neurons[a]] = 1;
    if (!st && xp->mpi_rank == 0) { /* always: the spike digest comes from the stream */
        const char *pop = bl_connectome_info(c, "name");
        bl_xp_psth_spec spec = {n_psth, psth_pops, bin_steps};
        st = bl_xp_spikes_open(x->rec, "spikes", pop ? pop : "connectome", trials, steps,
                               bl_plan_lif_params(plan)->dt_ms, n, keep, &spec, bl_plan_output_spikes(plan),
                               &x->spikes, err);
    }
    free(keep);
    x->trials_total = trials;
    x->dt_ms = bl_plan_lif_params(plan)->dt_ms;
    if (!st && xp->mpi_ranks == 1)
        bl_result_observe(x->res, observe_spikes, observe_steps, x);
    uint64_t probe_every;
    const bl_plan_population *probed = bl_plan_probes(plan, &probe_every);
    if (!st && probed)
        st = bl_result_set_probes(x->res, probed->neurons, probed->n_neurons, probe_every, steps, err);
    if (st)
        return st;
    snprintf(xp->backend, sizeof xp->backend, "%s", bl_engine_backend(x->eng));
    xp->threads = bl_engine_threads(x->eng);
    /* Trials run in parallel, one per thread: with fewer trials than
     * threads only that many ran, and the record says what ran. */
    if (x->backend_forced == NULL && (uint32_t)xp->threads > trials && trials > 0)
        xp->threads = (int)trials;
    xp->wall_prepare = now() - t0;
    if (!st) /* after the prepare time: compilation is reported apart */
        st = bl_xp_eq_codegen(plan, x->rec, &x->log, err);
    bl_xp_logf(&x->log, "prepared: backend %s, %d thread(s), %u trial(s) x %" PRIu64 " steps%s", xp->backend,
               xp->threads, trials, steps, xp->mpi_ranks == 1 ? ", spikes streamed" : "");
    /* Another backend asked, the reference ran: it fell back, or auto chose it. */
    if (bl_plan_lif_params(plan)->equations && (bl_backend_caps(xp->backend) & BL_BACKEND_REF_KERNEL) &&
        !(bl_backend_caps(backend) & BL_BACKEND_REF_KERNEL)) {
        const char *why = NULL;
        bl_eq_part_supports(bl_plan_lif_params(plan)->equations, &why);
        bl_xp_logf(&x->log, "model from equations: interpreted on the reference backend (backend '%s' asked; %s)",
                   backend, why ? why : "the auto backend's regression chose it");
    }

    /* Every finished wave is checkpointed in the record by rank 0, so that a
     * killed run can be resumed: a resumed run first takes back the trials
     * its checkpoint holds, verified, and runs the others. Every rank of an
     * MPI job must run the same trials: rank 0 says which (a max-reduce of
     * its list, the last cell saying that it failed). */
    const int multi = xp->mpi_ranks > 1;
    /* Within trials, every N windows, where the backend can (cpu; mpi when
     * the job runs one trial at a time): the engine's state and the trial's
     * spikes so far (checkpoint.h). Every rank computes the same N. */
    double every_ms = opt->checkpoint_every_ms == 0 ? BL_CHECKPOINT_EVERY_MS_DEFAULT : opt->checkpoint_every_ms;
    double window_ms = (double)bl_lif_delay_steps(bl_plan_lif_params(plan)) * bl_plan_lif_params(plan)->dt_ms;
    if (!st && every_ms > 0 && window_ms > 0 && bl_engine_can_snapshot(x->eng) &&
        (!multi || bl_engine_trials_at_once(x->eng) == 1)) {
        double w = ceil(every_ms / window_ms);
        x->snap_windows = w < 1 ? 1 : w > 1e15 ? (uint64_t)1e15 : (uint64_t)w;
        x->snap_min_wall = opt->checkpoint_every_ms == 0 ? (double)BL_CHECKPOINT_MIN_WALL_S : 0.0;
    }
    if (!st && xp->mpi_rank == 0) {
        st = bl_xp_ckpt_open(x->rec, bl_plan_hash(plan), trials, xp->backend, xp->threads, xp->mpi_ranks,
                             bl_plan_output_spikes(plan), x->resume, &x->ckpt, err);
        if (!st && x->snap_windows) {
            st = bl_xp_ckpt_partial_enable(x->ckpt, err);
            if (!st && !(x->snap_last = calloc(trials ? trials : 1, sizeof *x->snap_last)))
                st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the checkpoint times of %u trials", trials);
        }
        if (x->snap_windows)
            bl_xp_logf(&x->log, "checkpoints: after every trial, and within a trial every %" PRIu64 " windows (%.1f ms "
                       "of simulated time)%s", x->snap_windows, (double)x->snap_windows * window_ms,
                       x->snap_min_wall > 0 ? ", at most one per 10 s of wall time (the default)" : "");
        else
            bl_xp_logf(&x->log, "checkpoints: after every trial%s", bl_engine_can_snapshot(x->eng)
                       ? (multi && every_ms > 0 ? " (an MPI job running several trials at once checkpoints at "
                                                  "trial boundaries only)" : " (within trials: off)")
                       : " (this backend checkpoints at trial boundaries only)");
        if (!st && x->resume) {
            st = bl_xp_ckpt_restore(x->ckpt, x->res, x->spikes, err);
            bl_xp_logf(&x->log, "resumed: %s; %u trial(s) taken from it, %u dropped (files not as checkpointed)",
                       bl_xp_ckpt_found(x->ckpt) ? "checkpoint found" : "no checkpoint", bl_xp_ckpt_kept(x->ckpt),
                       bl_xp_ckpt_dropped(x->ckpt));
            if (!st && x->snap_windows) {
                st = bl_xp_ckpt_partial_apply_also(x->ckpt, x->res, x->eng, multi ? keep_shared : NULL, x, err);
                uint64_t step = 0;
                uint32_t first = bl_xp_ckpt_partial_first(x->ckpt, &step);
                if (bl_xp_ckpt_partial_kept(x->ckpt))
                    bl_xp_logf(&x->log, "resumed within: %u trial(s) continue from their checkpoint (trial %u from "
                               "step %" PRIu64 "), %u dropped", bl_xp_ckpt_partial_kept(x->ckpt), first, step,
                               bl_xp_ckpt_partial_dropped(x->ckpt));
            }
        }
    }
    if (!st && x->snap_windows)
        bl_engine_set_snapshots(x->eng, x->snap_windows, save_snapshot, x);
    if (!(x->skip = calloc((size_t)trials + 1, sizeof *x->skip))) {
        bl_status nm = bl_fail(err, BL_ERR_NOMEM, "cannot list %u trials", trials);
        return st ? st : nm;
    }
    for (uint32_t t = 0; t < trials; t++)
        x->skip[t] = bl_xp_ckpt_has(x->ckpt, t);
    x->skip[trials] = st != BL_OK;
    if (multi) {
        bl_error e = {0};
        if (bl_mpi_job_allreduce_max_i32(x->ctx, x->skip, (uint64_t)trials + 1, &e) && !st)
            return bl_fail(err, e.status, "%s", e.message);
        /* Rank 0 failed: it seals the record FAILED and ends the job; the
         * others wait in one more collective, which it never joins. */
        if (x->skip[trials] && xp->mpi_rank > 0)
            for (;;)
                bl_mpi_job_allreduce_max_i32(x->ctx, x->skip, 1, &e);
        /* Trials continued from within: rank 0's states to every rank. */
        if (!st && x->snap_windows)
            st = share_states(x, err);
    }
    if (st)
        return st;
    x->resumed_from = trials;
    for (uint32_t t = 0; t < trials; t++)
        if (!x->skip[t]) {
            x->resumed_from = t;
            break;
        }
    uint64_t restored = bl_xp_ckpt_events(x->ckpt);

    /* Trials in waves of `threads`, so progress can be shown between them
     * (a resumed run: waves of the trials still missing). */
    double t1 = now();
    x->t_run = bl_xp_now();
    uint32_t wave = (uint32_t)bl_engine_trials_at_once(x->eng);
    for (uint32_t first = 0; !st && first < trials;) {
        if (x->skip[first]) {
            first++;
            continue;
        }
        uint32_t k = 0;
        while (first + k < trials && k < wave && !x->skip[first + k])
            k++;
        x->trials_done = first;
        x->wave_t0 = bl_xp_now();
        uint64_t events_before = bl_result_n_events(x->res);
        st = bl_engine_run(x->eng, first, k, steps, x->res, err);
        /* One process streams during the trials; an MPI job's rank 0 holds
         * the wave's events (the ranks exchange them) and streams them now. */
        if (!st && x->spikes && !multi)
            st = bl_xp_spikes_end_trials(x->spikes, first, k, err);
        else if (!st && x->spikes)
            st = stream_events(x, events_before, first, k, err);
        if (!st && x->ckpt)
            st = bl_xp_ckpt_save(x->ckpt, x->res, x->spikes, first, k, err);
        bl_xp_logf(&x->log, "trials %u..%u done: %" PRIu64 " spikes so far", first, first + k - 1,
                   restored + bl_result_n_events(x->res));
        if (!st && x->ctx->progress && xp->mpi_rank == 0)
            x->ctx->progress(x->ctx->progress_user, first + k, trials, (first + k) * xp->duration_ms / 1000.0,
                             now() - t1);
        /* Rank 0 asks; it then fails the record and ends the job. */
        if (!st && first + k < trials && xp->mpi_rank == 0 && bl_context_cancelled(x->ctx))
            st = bl_fail(err, BL_ERR_CANCELLED, "cancelled after %u of %u trials", first + k, trials);
        first += k;
    }
    xp->wall_run = now() - t1;
    if (st)
        return st;
    xp->spikes = restored + bl_result_n_events(x->res);
    if ((st = check_finite(x, err)))
        return st;
    /* Depths need the whole graph: with a connectome part every rank takes
     * part in the search; otherwise rank 0 has it all. */
    if (bl_connectome_parts(c) > 1 && (st = compute_depths(x, err)))
        return st;
    if (xp->mpi_rank > 0) /* an MPI job: rank 0 alone analyses and writes */
        return BL_OK;

    /* Analyses. */
    xp->wall_write = now();
    x->mean = malloc((n ? n : 1) * sizeof *x->mean);
    x->sd = malloc((n ? n : 1) * sizeof *x->sd);
    x->total = calloc(n ? n : 1, sizeof *x->total);
    x->stimulated = calloc(n ? n : 1, 1);
    if (!x->mean || !x->sd || !x->total || !x->stimulated)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate analyses for %" PRIu64 " neurons", n);
    const int32_t *counts = bl_result_counts(x->res);
    bl_rates(counts, trials, n, xp->duration_ms / 1000.0, x->mean, x->sd);
    for (uint32_t t = 0; t < trials; t++)
        for (uint64_t i = 0; i < n; i++)
            x->total[i] += counts[(uint64_t)t * n + i];
    for (size_t p = 0; p < bl_plan_n_populations(plan); p++) {
        const bl_plan_population *pop = bl_plan_population_at(plan, p);
        for (size_t a = 0; a < pop->n_neurons; a++)
            x->stimulated[pop->neurons[a]] = 1;
    }
    if (!x->depth && (st = compute_depths(x, err)))
        return st;
    xp->pooled = bl_propagation_stats(c, x->total, x->stimulated, x->depth);
    cJSON *per_trial = cJSON_CreateArray();
    for (uint32_t t = 0; t < trials; t++) {
        bl_propagation p = bl_propagation_stats(c, counts + (uint64_t)t * n, x->stimulated, x->depth);
        cJSON *e = propagation_json(&p);
        cJSON_AddNumberToObject(e, "trial", t);
        cJSON_AddItemToArray(per_trial, e);
    }
    if ((st = build_groups(xp, x, err))) {
        cJSON_Delete(per_trial);
        return st;
    }

    /* Artifacts. */
    uint64_t shape2[2] = {trials, n}, shape1 = n;
    if (!st)
        st = write_psth(x, err);
    if (!st)
        st = write_probes(x, err);
    if (!st && bl_plan_output_counts(plan)) {
        st = write_npy(x->rec, "counts.npy", BL_DTYPE_INT32, 2, shape2, counts, err);
        if (!st)
            st = write_npy(x->rec, "rates_mean_hz.npy", BL_DTYPE_FLOAT64, 1, &shape1, x->mean, err);
        if (!st)
            st = write_npy(x->rec, "rates_sd_hz.npy", BL_DTYPE_FLOAT64, 1, &shape1, x->sd, err);
        if (!st)
            st = write_rates_csv(x, err);
    }
    if (!st && bl_plan_output_state(plan)) {
        bl_dtype dt = bl_result_state_dtype(x->res);
        st = write_npy(x->rec, "final_v.npy", dt, 2, shape2, bl_result_final_v(x->res), err);
        if (!st)
            st = write_npy(x->rec, "final_g.npy", dt, 2, shape2, bl_result_final_g(x->res), err);
        /* A model with a per-edge w (docs/models.md "Synapses"): its final weights. */
        uint64_t n_ew = 0;
        const double *ew = bl_result_final_edge_w(x->res, &n_ew);
        uint64_t shape_w[2] = {trials, n_ew};
        if (!st && ew)
            st = write_npy(x->rec, "final_w.npy", BL_DTYPE_FLOAT64, 2, shape_w, ew, err);
    }
    if (!st && bl_plan_output_propagation(plan)) {
        st = write_npy(x->rec, "depth_from_stimulus.npy", BL_DTYPE_INT32, 1, &shape1, x->depth, err);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "definition",
                                "active: fired at least once; downstream: active and not stimulated; depth: "
                                "deepest directed shortest-path distance from the stimulated set among active "
                                "neurons; descending/motor: by cell_type metadata (DN*/descending, motor)");
        cJSON_AddItemToObject(o, "pooled_over_trials", propagation_json(&xp->pooled));
        cJSON_AddItemToObject(o, "per_trial", cJSON_Duplicate(per_trial, 1));
        if (!st)
            st = bl_xp_write_json(x->rec, "propagation.json", o, err);
        else
            cJSON_Delete(o);
    }
    if (!st)
        st = write_summary(xp, x, per_trial, err);
    else
        cJSON_Delete(per_trial);
    return st;
}

static bl_status manifest_sections(bl_experiment *xp, run_ctx *x, const bl_experiment_options *opt, bl_error *err)
{
    cJSON *run = cJSON_CreateObject();
    cJSON_AddStringToObject(run, "backend_requested", opt->backend ? opt->backend : bl_plan_backend(x->plan));
    cJSON_AddStringToObject(run, "backend", xp->backend);
    const char *auto_report = x->eng ? bl_engine_auto_report(x->eng) : "";
    if (auto_report[0])
        cJSON_AddItemToObject(run, "auto_regression", cJSON_Parse(auto_report));
    cJSON_AddNumberToObject(run, "threads_requested", bl_xp_threads(opt, bl_plan_threads(x->plan)));
    cJSON_AddNumberToObject(run, "threads", xp->threads);
    if (bl_backend_caps(xp->backend) & BL_BACKEND_JOB) {
        cJSON_AddNumberToObject(run, "mpi_ranks", xp->mpi_ranks);
        cJSON_AddNumberToObject(run, "mpi_replica_groups", bl_mpi_job_replica_groups(x->ctx));
        cJSON_AddNumberToObject(run, "threads_per_rank", xp->threads);
    }
    cJSON_AddNumberToObject(run, "trials", xp->trials);
    cJSON_AddNumberToObject(run, "steps_per_trial", (double)bl_plan_steps(x->plan));
    cJSON_AddNumberToObject(run, "spikes", (double)xp->spikes);
    cJSON_AddNumberToObject(run, "wall_prepare_s", xp->wall_prepare);
    cJSON_AddNumberToObject(run, "wall_run_s", xp->wall_run);
    bl_xp_eq_codegen_json(x->plan, run);
    char *text = bl_json_print(run, 0);
    cJSON_Delete(run);
    bl_status st = text ? bl_record_set_json(x->rec, "run", text, err) : bl_fail(err, BL_ERR_NOMEM, "run section");
    free(text);
    if (st || !x->resume)
        return st;
    /* The one section an uninterrupted run's manifest lacks. */
    cJSON *r = cJSON_CreateObject();
    cJSON_AddBoolToObject(r, "resumed", 1);
    cJSON_AddNumberToObject(r, "from_trial", x->resumed_from);
    cJSON_AddBoolToObject(r, "checkpoint_found", bl_xp_ckpt_found(x->ckpt));
    cJSON_AddNumberToObject(r, "trials_from_checkpoint", bl_xp_ckpt_kept(x->ckpt));
    cJSON_AddNumberToObject(r, "trials_dropped", bl_xp_ckpt_dropped(x->ckpt));
    cJSON_AddNumberToObject(r, "trials_run", xp->trials - bl_xp_ckpt_kept(x->ckpt));
    /* Trials continued from a checkpoint within them: the first one and the
     * step it continued from (its steps before that are the earlier run's). */
    uint64_t from_step = 0;
    uint32_t within = bl_xp_ckpt_partial_kept(x->ckpt), first = bl_xp_ckpt_partial_first(x->ckpt, &from_step);
    cJSON_AddNumberToObject(r, "trials_continued_within", within);
    if (within) {
        cJSON_AddNumberToObject(r, "first_continued_trial", first);
        cJSON_AddNumberToObject(r, "from_step", (double)from_step);
    }
    cJSON_AddNumberToObject(r, "within_trial_checkpoints_dropped", bl_xp_ckpt_partial_dropped(x->ckpt));
    cJSON_AddStringToObject(r, "definition", "trials 0..from_trial-1 and every trial not run by this run were taken "
                                             "from the interrupted run's checkpoint after their files were checked "
                                             "against their SHA-256 (docs/reliability.md, Durable runs)");
    text = bl_json_print(r, 0);
    cJSON_Delete(r);
    st = text ? bl_record_set_json(x->rec, "resumed", text, err) : bl_fail(err, BL_ERR_NOMEM, "resumed section");
    free(text);
    return st;
}

bl_status bl_experiment_run(const bl_plan *plan, const bl_experiment_options *opt, bl_experiment **out,
                            bl_error *err)
{
    *out = NULL;
    bl_experiment *xp = calloc(1, sizeof *xp);
    if (!xp)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate an experiment");
    run_ctx x = {.ctx = bl_context_resolve(opt->context), .plan = plan, .c = bl_plan_connectome(plan)};
    if (!x.ctx) {
        free(xp);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the default context");
    }
    xp->trials = bl_plan_trials(plan);
    xp->duration_ms = bl_plan_duration_ms(plan);
    xp->n_neurons = bl_connectome_n_neurons(x.c);
    xp->mpi_ranks = 1;
    snprintf(xp->plan_id, sizeof xp->plan_id, "%s", bl_plan_id(plan));
    bl_status st = BL_OK;
    /* Under mpirun every rank runs this function: rank 0 reserves, writes and
     * seals the record; the others only step their neurons. An error that
     * not every rank shares ends the job (bl_mpi_job_abort), so no rank waits
     * forever; rank 0 fails the record first, or its watchdog does. */
    bl_xp_mpi_guard guard = {0};
    const char *requested = opt->backend ? opt->backend : bl_plan_backend(plan);
    int wants_mpi = requested && (bl_backend_caps(requested) & BL_BACKEND_JOB);
    if ((st = bl_mpi_job_join(x.ctx, wants_mpi, err))) {
        free(xp);
        return st;
    }
    xp->mpi_rank = bl_mpi_job_rank(x.ctx);
    xp->mpi_ranks = bl_mpi_job_ranks(x.ctx);
    if (xp->mpi_ranks > 1 || wants_mpi)
        x.backend_forced = "mpi";
    const int multi = xp->mpi_ranks > 1;
    x.resume = opt->resume != NULL;
    /* A job of several ranks runs the mpi backend on every rank, whatever the
     * plan asks: a model from equations that its partition kernel cannot run
     * (per-edge delays, per-edge variables, on_post) is refused here, the
     * same on every rank, before a record is reserved. */
    const char *why = NULL;
    if (multi && bl_plan_lif_params(plan)->equations && !bl_eq_part_supports(bl_plan_lif_params(plan)->equations, &why))
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "model from equations: %s, so it runs on the reference backend only, and "
                     "an MPI job of %d ranks runs the mpi backend on every rank: run it as one process, without "
                     "mpirun (backend \"reference\", \"cpu\" or \"auto\")", why, xp->mpi_ranks);
    /* A bad signing key is found before a record is reserved (issue 26). */
    if (xp->mpi_rank == 0 && opt->sign_key && !st)
        st = bl_record_check_sign_key(opt->sign_key, NULL, 0, err);
    if (xp->mpi_rank == 0 && !st)
        st = x.resume ? reopen(plan, opt->resume, &x.rec, err) : reserve(plan, opt->root, &x.rec, err);
    if (st) {
        if (multi) /* does not return */
            bl_mpi_job_abort(x.ctx, err->message, NULL);
        free(xp);
        return st;
    }
    if (x.rec)
        snprintf(xp->record_dir, sizeof xp->record_dir, "%s", bl_record_dir(x.rec));
    if (multi) {
        st = bl_xp_mpi_guard_start(&guard, x.ctx, xp->mpi_rank == 0 ? x.rec : NULL, err);
        if (!st)
            st = bl_mpi_job_bcast_string(x.ctx, xp->record_dir, sizeof xp->record_dir, err);
    }
    /* The plan and connectome were hashed in the pass that read them: the
     * record names those digests, never a second reading of the files. */
    for (size_t i = 0; x.rec && !st && i < bl_plan_n_inputs(plan); i++) {
        const bl_plan_input *in = bl_plan_input_at(plan, i);
        st = bl_record_add_input_digest(x.rec, in->role, in->path, in->sha256, in->bytes, err);
    }
    if (x.rec && !st) {
        /* The artifacts the plan's outputs promise: a DONE record without
         * one of them is refused at sealing (and by verify). Spikes stream
         * into one SONATA file per trial (spike_stream.c). */
        uint32_t n_trials = bl_plan_output_spikes(plan) ? bl_plan_trials(plan) : 0;
        size_t n_req = 0, cap = 7 + (size_t)n_trials;
        const char **required = calloc(cap, sizeof *required);
        char (*names)[32] = n_trials ? calloc(n_trials, sizeof *names) : NULL;
        if (!required || (n_trials && !names)) {
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory listing the promised artifacts");
        } else {
            required[n_req++] = "summary.json";
            for (uint32_t t = 0; t < n_trials; t++) {
                snprintf(names[t], sizeof names[t], "spikes/trial-%04" PRIu32 ".h5", t);
                required[n_req++] = names[t];
            }
            if (bl_plan_output_counts(plan)) {
                required[n_req++] = "counts.npy";
                required[n_req++] = "rates.csv";
            }
            if (bl_plan_output_state(plan)) {
                required[n_req++] = "final_v.npy";
                required[n_req++] = "final_g.npy";
            }
            if (bl_plan_output_propagation(plan))
                required[n_req++] = "propagation.json";
            st = bl_record_bind(x.rec, bl_plan_hash(plan), required, n_req, err);
        }
        free(required);
        free(names);
    }
    /* Signed when asked; SIGINT, SIGTERM, SIGHUP: FAILED naming the signal
     * (an MPI job of several ranks has its own watchdog on rank 0, above). */
    if (x.rec && !st)
        st = bl_xp_protect(x.rec, opt, multi, err);
    if (x.rec && !st)
        st = bl_record_set_json(x.rec, "plan", bl_plan_resolved_json(plan), err);
    if (x.rec && !st) {
        char seeds[512];
        bl_stream_connectome_seeds_json(bl_plan_seed(plan), 0, seeds, sizeof seeds);
        st = bl_record_set_json(x.rec, "seeds", seeds, err);
    }
    if (x.rec && !st)
        st = bl_xp_copy_plan(plan, x.rec, err);
    if (x.rec && !st) {
        /* A resumed run continues the log of the run it finishes. */
        (x.resume ? bl_xp_log_reopen : bl_xp_log_open)(&x.log, x.rec);
        bl_xp_logf(&x.log, "%s %s (plan %.12s)", x.resume ? "resume" : "run", bl_plan_id(plan), bl_plan_hash(plan));
    }
    if (multi && st) /* the other ranks may already wait in a collective */
        bl_mpi_job_abort(x.ctx, err->message, NULL);
    if (!st)
        st = run_and_write(xp, &x, opt, err);
    if (multi && st && xp->mpi_rank > 0)
        bl_mpi_job_abort(x.ctx, err->message, NULL);
    if (multi)
        bl_xp_mpi_guard_hold(&guard); /* the seal (or fail) below is not interrupted */
    if (x.rec && !st)
        st = manifest_sections(xp, &x, opt, err);
    if (x.rec && !st) /* the record holds what an uninterrupted run's holds */
        st = bl_xp_ckpt_stash(x.ckpt, err);
    if (x.rec) /* the log is complete before the seal hashes it */
        st = bl_xp_end(x.rec, &x.log, st, err);
    if (x.rec && !st)
        bl_xp_ckpt_discard(x.ckpt);
    if (multi && xp->mpi_rank == 0) {
        bl_xp_mpi_guard_end(&guard); /* guard lives on this stack */
        if (st)
            bl_mpi_job_abort(x.ctx, err->message, NULL);
    }
    bl_record_destroy(x.rec);
    ctx_free(&x);
    if (st) {
        bl_experiment_destroy(xp);
        return st;
    }
    *out = xp;
    return BL_OK;
}

void bl_experiment_destroy(bl_experiment *xp)
{
    if (!xp)
        return;
    free(xp->groups);
    free(xp);
}

const char *bl_experiment_record_dir(const bl_experiment *xp) { return xp->record_dir; }
const char *bl_experiment_backend(const bl_experiment *xp) { return xp->backend; }
int bl_experiment_threads(const bl_experiment *xp) { return xp->threads; }

void bl_experiment_print(const bl_experiment *xp, FILE *out)
{
    if (xp->mpi_rank > 0) /* an MPI job: rank 0 speaks for it */
        return;
    double sim = xp->trials * xp->duration_ms / 1000.0;
    if (xp->mpi_ranks > 1)
        fprintf(out, "%s: %u trial(s) x %.0f ms, %s backend, %d rank(s) x %d thread(s)\n", xp->plan_id, xp->trials,
                xp->duration_ms, xp->backend, xp->mpi_ranks, xp->threads);
    else
        fprintf(out, "%s: %u trial(s) x %.0f ms, %s backend, %d thread(s)\n", xp->plan_id, xp->trials,
                xp->duration_ms, xp->backend, xp->threads);
    fprintf(out, "  %" PRIu64 " spikes, %" PRIu64 " active neurons, %" PRIu64 " responders (>= %.0f Hz mean over "
            "trials); deepest active neuron at depth %d\n", xp->spikes, xp->pooled.active_neurons, xp->responders,
            BL_RESPONDER_THRESHOLD_HZ, xp->pooled.propagation_depth);
    fprintf(out, "  simulated %.1f s in %.2f s wall (%.1fx real time)\n\n", sim, xp->wall_run,
            xp->wall_run > 0 ? sim / xp->wall_run : 0.0);
    fprintf(out, "  %-5s  %-22s  %10s  %7s  %15s\n", "depth", "cell type", "responders", "neurons", "mean rate (Hz)");
    size_t shown = 0, hidden = 0;
    for (size_t g = 0; g < xp->n_groups; g++) {
        const group *gr = &xp->groups[g];
        if (!gr->responders)
            continue;
        if (shown == TOP_GROUPS) {
            hidden++;
            continue;
        }
        char depth[16], ct[sizeof gr->cell_type];
        snprintf(depth, sizeof depth, gr->depth < 0 ? "-" : "%d", gr->depth);
        /* Cell types come from imported metadata: no control byte (an ESC
         * sequence) reaches the terminal (issue 26). */
        for (size_t k = 0; k < sizeof ct; k++) {
            unsigned char ch = (unsigned char)gr->cell_type[k];
            ct[k] = (ch && (ch < 0x20 || ch == 0x7f)) ? '?' : (char)ch;
        }
        fprintf(out, "  %-5s  %-22.22s  %10" PRIu64 "  %7" PRIu64 "  %15.1f\n", depth, ct, gr->responders,
                gr->neurons, gr->rate_sum / (double)gr->responders);
        shown++;
    }
    if (hidden)
        fprintf(out, "  ... %zu more groups in summary.json\n", hidden);
    fprintf(out, "\n  depth = shortest directed path (edges) from the stimulated neurons; record: %s\n", xp->record_dir);
}
