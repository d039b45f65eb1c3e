/* The reservoir workloads of `brainlesslab bench` (docs/benchmark.md,
 * "Reservoir workloads").
 *
 * A point is (node, units N, batch B) with a fixed frame count for N. Per
 * point:
 *   1. qualification, untimed: our worker (`brainlesslab reservoir bench-case
 *      ... --export DIR`) builds the node from the seed, writes the bundle and
 *      the input tape into DIR and prints its trajectory SHA-256; the NumPy
 *      oracle (`tests/oracles/reservoir_numpy.py bench DIR`) replays DIR
 *      densely and prints its own. Only when the two hashes are equal is the
 *      point timed; otherwise it is recorded as a mismatch, without a ratio;
 *   2. timing: R repetitions, each a fresh worker of ours and a fresh worker
 *      of the oracle, ours first on even repetitions and the oracle first on
 *      odd ones. Every worker's first run is its cold execution, its repeats
 *      (from a reset batch, same process) the warm ones; every run's hash must
 *      equal the qualified one, else the sample is a mismatch.
 * The oracle runs single-threaded (NumPy ufuncs; OMP/OpenBLAS/MKL threads set
 * to 1 in its environment), ours with the threads of --threads. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reservoir_sweep.h"

#define PEER_SCRIPT "tests/oracles/reservoir_numpy.py"
/* r2's node size: the dense peer's frame costs B N^2, and 2000 ticks of 128
 * slots in scalar Python tasks must stay minutes on the development machine
 * (about a minute a run: so the peer's workers make one cold run each, no
 * warm repeat; ours make 2). */
#define R2_UNITS 128

static const char full_definition[] =
    "Each point is one reservoir node of N units (the kind's default parameters, 3 inputs, 2 effectors, built "
    "from the seed) copied into B batch slots and driven F frames by a Philox 0/1 input tape "
    "(inputs[t][b][r] = 1 with probability 1/2; no noise), F fixed per N (recorded). Ours: `brainlesslab "
    "reservoir bench-case` (sparse link rows, silent sources skipped). Peer: the independent dense float64 "
    "NumPy oracle tests/oracles/reservoir_numpy.py, fed the bundle and tape our qualification worker exported. "
    "Qualified by the trajectory SHA-256 (every frame's spikes, then each slot's final thresholds, Falandays "
    "acts and dense weights, float64): bit-identical or not timed.";

static const char task_definition[] =
    "One Falandays node of N units (default parameters, built from the seed) with the receptors and effectors of "
    "the continuing task `tracking` (62 receptors, 2 effectors, default options, one node frame a tick, input "
    "gain 1) copied into B = 128 batch slots; slot k runs one trial of the task's default horizon (2000 ticks, "
    "its minimum scored window) in its own world (world seed Philox(key = seed, counter (k, 0, 201, 0)), word0 | "
    "word1 << 32), in closed loop as the evaluation runs reservoir trials: per tick encode -> node frame -> "
    "effectors -> physics and score; a slot leaves the batch when its trial is over or failed. Ours: "
    "`brainlesslab reservoir bench-case --task tracking` (sparse link rows, the C task table). Peer: the NumPy "
    "oracle tests/oracles/reservoir_numpy.py (dense batched node) with the task oracle tests/oracles/"
    "tasks_numpy.py (scalar Python per slot, `math`), fed the bundle and world seeds our qualification worker "
    "exported. Qualified by the trajectory SHA-256 (every tick's spikes of every slot, each slot's final node "
    "state, then each slot's outcome, physical state and counters): bit-identical or not timed.";

static const bl_bench_res_def res_defs[] = {
    {"r1", "reservoirs: SORN and Falandays, N x batch grid, against the NumPy oracle", full_definition,
     {"sorn", "falandays"}, 2, {64, 256, 1024}, {100, 20, 4}, 3, {1, 8, 32, 128}, 4, 3, 1, 20240611, NULL},
    {"r1-sorn", "reservoir: SORN, N x batch grid, against the NumPy oracle", full_definition,
     {"sorn", NULL}, 1, {64, 256, 1024}, {100, 20, 4}, 3, {1, 8, 32, 128}, 4, 3, 1, 20240611, NULL},
    {"r1-falandays", "reservoir: Falandays, N x batch grid, against the NumPy oracle", full_definition,
     {"falandays", NULL}, 1, {64, 256, 1024}, {100, 20, 4}, 3, {1, 8, 32, 128}, 4, 3, 1, 20240611, NULL},
    {"r2", "reservoir in closed loop: Falandays on tracking, 128 trials in one batch, against the NumPy oracle",
     task_definition, {"falandays", NULL}, 1, {R2_UNITS}, {2000}, 1, {128}, 1, 2, 0, 20240611, "tracking"},
};

static const bl_bench_res_def res_quick[] = {
    {"r1", "reservoirs (quick): SORN and Falandays, tiny grid, against the NumPy oracle", full_definition,
     {"sorn", "falandays"}, 2, {32}, {8}, 1, {1, 4}, 2, 2, 1, 20240611, NULL},
    {"r1-sorn", "reservoir (quick): SORN, tiny grid, against the NumPy oracle", full_definition,
     {"sorn", NULL}, 1, {32}, {8}, 1, {1, 4}, 2, 2, 1, 20240611, NULL},
    {"r1-falandays", "reservoir (quick): Falandays, tiny grid, against the NumPy oracle", full_definition,
     {"falandays", NULL}, 1, {32}, {8}, 1, {1, 4}, 2, 2, 1, 20240611, NULL},
    {"r2", "reservoir in closed loop (quick): Falandays on tracking, 128 trials, 8 ticks, against the NumPy oracle",
     task_definition, {"falandays", NULL}, 1, {32}, {8}, 1, {128}, 1, 1, 1, 20240611, "tracking"},
};

#define N_RES_DEFS ((int)(sizeof res_defs / sizeof res_defs[0]))

const bl_bench_res_def *bl_bench_res_find(const char *id, int quick)
{
    for (int i = 0; i < N_RES_DEFS; i++)
        if (!strcmp(res_defs[i].id, id))
            return quick ? &res_quick[i] : &res_defs[i];
    return NULL;
}

const char *bl_bench_res_ids(void) { return "r1, r1-sorn, r1-falandays, r2"; }

/* The peer's environment: one thread everywhere a BLAS or OpenMP could add some. */
static const char *const peer_env[] = {"PYTHONDONTWRITEBYTECODE=1", "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1",
                                       "MKL_NUM_THREADS=1", NULL};

/* ---- sample vectors ------------------------------------------------------ */


static double vmedian(const bl_bench_dvec *d) { return bl_bench_median(d->v, d->n); }

/* ---- one worker ------------------------------------------------------------ */

typedef struct res_worker {
    bl_bench_proc proc;
    int ok;              /* exited 0 with a report of the expected shape */
    char reason[1024];
    cJSON *report;       /* the worker's JSON line */
    char hash[65];
} res_worker;

typedef struct res_point {
    const char *node;
    uint32_t units, batch, frames;
    char dir[4200], export_dir[4300];
} res_point;

typedef struct res_case {
    const char *id;
    int ours;
    uint32_t repeat;
    cJSON *samples;
    bl_bench_dvec construct, tapes, first, warm, wall, rss;
    int n_ok, n_timeout, n_failed, n_mismatch;
    int threads_observed;
} res_case;

static void case_free(res_case *c)
{
    bl_bench_dvec_free(&c->construct);
    bl_bench_dvec_free(&c->tapes);
    bl_bench_dvec_free(&c->first);
    bl_bench_dvec_free(&c->warm);
    bl_bench_dvec_free(&c->wall);
    bl_bench_dvec_free(&c->rss);
    cJSON_Delete(c->samples);
    c->samples = NULL;
}

/* The last line of the log that starts with '{', parsed. */
static cJSON *last_json_line(const char *log, char *reason, size_t size)
{
    char *text = NULL;
    bl_error e = {0};
    if (bl_bench_read_text(log, &text, &e)) {
        snprintf(reason, size, "%s", e.message);
        return NULL;
    }
    char *found = NULL;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (line[0] == '{')
            found = line;
        line = nl ? nl + 1 : NULL;
    }
    cJSON *j = found ? cJSON_Parse(found) : NULL;
    if (!j)
        snprintf(reason, size, "%s: no JSON report line", log);
    free(text);
    return j;
}

static int num_key(const cJSON *o, const char *key, double *x)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *x = v->valuedouble;
    return 1;
}

/* Check the report's shape; on failure, the reason names the key at fault. */
static int check_report(const cJSON *r, const res_point *p, uint32_t repeat, const char *log, char *reason,
                        size_t size)
{
    const char *want_keys[] = {"units", "batch", "frames"};
    const double want[] = {p->units, p->batch, p->frames};
    double x;
    for (int k = 0; k < 3; k++) {
        if (!num_key(r, want_keys[k], &x)) {
            snprintf(reason, size, "%s: report without a number '%s'", log, want_keys[k]);
            return 0;
        }
        if (x != want[k]) {
            snprintf(reason, size, "%s: report key '%s' is %.0f, expected %.0f", log, want_keys[k], x, want[k]);
            return 0;
        }
    }
    if (!num_key(r, "wall_run_s", &x) || !(x >= 0)) {
        snprintf(reason, size, "%s: report without a non-negative number 'wall_run_s'", log);
        return 0;
    }
    const cJSON *warm = cJSON_GetObjectItemCaseSensitive(r, "wall_warm_s");
    if (!cJSON_IsArray(warm) || cJSON_GetArraySize(warm) != (int)repeat) {
        snprintf(reason, size, "%s: report key 'wall_warm_s' is not an array of %u numbers", log, repeat);
        return 0;
    }
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(r, "trajectory_sha256");
    if (!cJSON_IsString(h) || strlen(h->valuestring) != 64 || strspn(h->valuestring, "0123456789abcdef") != 64) {
        snprintf(reason, size, "%s: report key 'trajectory_sha256' is not 64 lowercase hex digits", log);
        return 0;
    }
    return 1;
}

static void run_worker(bl_bench_ctx *ctx, const bl_bench_res_def *d, const res_point *p, int ours, uint32_t repeat,
                       const char *name, int export_inputs, res_worker *wo)
{
    memset(wo, 0, sizeof *wo);
    char log[4400], script[4200];
    char units[32], batch[32], frames[32], threads[32], seed[32], rep[32];
    snprintf(log, sizeof log, "%s/%s.log", p->dir, name);
    snprintf(units, sizeof units, "%u", p->units);
    snprintf(batch, sizeof batch, "%u", p->batch);
    snprintf(frames, sizeof frames, "%u", p->frames);
    snprintf(threads, sizeof threads, "%d", ctx->threads);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)d->seed);
    snprintf(rep, sizeof rep, "%u", repeat);
    snprintf(script, sizeof script, "%s/" PEER_SCRIPT, ctx->source_dir);
    char *argv[24];
    int n = 0;
    if (ours) {
        argv[n++] = ctx->self_exe;
        argv[n++] = "reservoir";
        argv[n++] = "bench-case";
        argv[n++] = "--node", argv[n++] = (char *)p->node;
        argv[n++] = "--units", argv[n++] = units;
        argv[n++] = "--batch", argv[n++] = batch;
        argv[n++] = "--frames", argv[n++] = frames;
        argv[n++] = "--threads", argv[n++] = threads;
        argv[n++] = "--seed", argv[n++] = seed;
        argv[n++] = "--repeat", argv[n++] = rep;
        if (export_inputs)
            argv[n++] = "--export", argv[n++] = (char *)p->export_dir;
        if (d->task)
            argv[n++] = "--task", argv[n++] = (char *)d->task;
    } else {
        argv[n++] = ctx->python;
        argv[n++] = script;
        argv[n++] = "bench";
        argv[n++] = (char *)p->export_dir;
        argv[n++] = "--repeat", argv[n++] = rep;
    }
    argv[n] = NULL;
    bl_error err = {0};
    if (bl_bench_spawn(argv, ours ? NULL : peer_env, log, ctx->o->timeout_s, &wo->proc, &err)) {
        snprintf(wo->reason, sizeof wo->reason, "%s", err.message);
        return;
    }
    if (!wo->proc.exited || wo->proc.exit_status != 0) {
        bl_bench_worker_failure(&wo->proc, ctx->o->timeout_s, log, wo->reason, sizeof wo->reason);
        return;
    }
    wo->report = last_json_line(log, wo->reason, sizeof wo->reason);
    if (!wo->report || !check_report(wo->report, p, repeat, log, wo->reason, sizeof wo->reason))
        return;
    snprintf(wo->hash, sizeof wo->hash, "%s",
             cJSON_GetObjectItemCaseSensitive(wo->report, "trajectory_sha256")->valuestring);
    wo->ok = 1;
}

/* ---- one timed sample --------------------------------------------------------- */

static void time_sample(bl_bench_ctx *ctx, const bl_bench_res_def *d, const res_point *p, res_case *c,
                        const char *want_hash, int rep, int position, int reversed)
{
    char name[64];
    snprintf(name, sizeof name, "rep%d-%s", rep, c->ours ? "ours" : "numpy");
    res_worker wo;
    run_worker(ctx, d, p, c->ours, c->repeat, name, 0, &wo);
    cJSON *s = bl_bench_sample_json(rep, position, reversed);
    const char *status = "ok";
    char reason[1200] = "";
    if (!wo.ok) {
        status = wo.proc.timed_out ? "timeout" : "failed";
        snprintf(reason, sizeof reason, "%s", wo.reason);
    } else {
        int match = !strcmp(wo.hash, want_hash);
        cJSON_AddStringToObject(s, "trajectory_sha256", wo.hash);
        cJSON_AddBoolToObject(s, "outputs_match_reference", match);
        if (!match) {
            status = "mismatch";
            snprintf(reason, sizeof reason, "trajectory sha256 %.16s... differs from the qualified %.16s...", wo.hash,
                     want_hash);
        }
    }
    cJSON_AddStringToObject(s, "status", status);
    if (reason[0])
        cJSON_AddStringToObject(s, "reason", reason);
    if (wo.proc.timed_out)
        cJSON_AddNumberToObject(s, "censored_at_s", ctx->o->timeout_s);
    cJSON_AddItemToObject(s, "process", bl_bench_proc_json(&wo.proc));
    if (!strcmp(status, "ok")) {
        c->n_ok++;
        cJSON *ph = cJSON_AddObjectToObject(s, "phases");
        double x = 0;
        if (num_key(wo.report, "wall_construct_s", &x)) {
            cJSON_AddNumberToObject(ph, "construct_s", x);
            bl_bench_dvec_push(&c->construct, x);
        }
        if (c->ours && num_key(wo.report, "wall_tapes_s", &x)) {
            cJSON_AddNumberToObject(ph, "tapes_s", x);
            bl_bench_dvec_push(&c->tapes, x);
        }
        num_key(wo.report, "wall_run_s", &x);
        cJSON_AddNumberToObject(ph, "first_execution_s", x);
        bl_bench_dvec_push(&c->first, x);
        cJSON *warm = cJSON_AddArrayToObject(ph, "warm_execution_s");
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(wo.report, "wall_warm_s"))
        {
            if (!cJSON_IsNumber(v))
                continue;
            cJSON_AddItemToArray(warm, cJSON_CreateNumber(v->valuedouble));
            bl_bench_dvec_push(&c->warm, v->valuedouble);
        }
        bl_bench_dvec_push(&c->wall, wo.proc.wall_s);
        bl_bench_dvec_push(&c->rss, (double)wo.proc.peak_rss_bytes);
        if (c->ours && num_key(wo.report, "threads", &x)) {
            cJSON_AddNumberToObject(s, "threads_observed", x);
            c->threads_observed = (int)x;
        }
        cJSON_AddItemToObject(s, "worker_report", cJSON_Duplicate(wo.report, 1));
    } else if (!strcmp(status, "timeout")) {
        c->n_timeout++;
    } else if (!strcmp(status, "mismatch")) {
        c->n_mismatch++;
    } else {
        c->n_failed++;
    }
    cJSON_AddItemToArray(c->samples, s);
    bl_bench_logf(ctx, "[%s] %s N=%u B=%u rep %d/%d %-5s %s%s%s", d->id, p->node, p->units, p->batch, rep + 1,
                  ctx->o->repetitions, c->ours ? "ours" : "numpy", status, reason[0] ? ": " : "", reason);
    cJSON_Delete(wo.report);
}

/* ---- summaries ----------------------------------------------------------------- */

static cJSON *per_frame_json(const bl_bench_dvec *d, uint32_t frames)
{
    double *x = malloc((d->n ? d->n : 1) * sizeof *x);
    size_t n = x ? d->n : 0;
    for (size_t i = 0; i < n; i++)
        x[i] = d->v[i] / frames;
    cJSON *j = bl_bench_stat_json(x, n);
    free(x);
    return j;
}

static const char *case_status(const res_case *c)
{
    if (c->n_ok)
        return "measured";
    if (c->n_timeout && !c->n_failed && !c->n_mismatch)
        return "timeout";
    if (c->n_mismatch && !c->n_failed && !c->n_timeout)
        return "mismatch";
    return "failed";
}

static cJSON *case_json(bl_bench_ctx *ctx, const res_point *p, res_case *c, double unit_updates, double syn_events)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "kind", c->ours ? "ours" : "peer");
    cJSON_AddStringToObject(j, "status", case_status(c));
    cJSON_AddNumberToObject(j, "threads_requested", c->ours ? ctx->threads : 1);
    if (c->ours && c->n_ok)
        cJSON_AddNumberToObject(j, "threads_observed", c->threads_observed);
    else if (c->ours)
        cJSON_AddNullToObject(j, "threads_observed");
    else
        cJSON_AddStringToObject(j, "threads_observed", "not observable (NumPy ufuncs run in one thread; BLAS/OpenMP "
                                                       "thread variables set to 1)");
    cJSON_AddNumberToObject(j, "warm_runs_per_worker", c->repeat);
    cJSON_AddItemToObject(j, "samples", cJSON_Duplicate(c->samples, 1));
    cJSON *sum = bl_bench_summary_json(ctx, j, c->samples, c->n_ok, c->n_timeout, c->n_failed, c->n_mismatch);
    cJSON_AddItemToObject(sum, "construct_s", bl_bench_stat_json(c->construct.v, c->construct.n));
    if (c->ours)
        cJSON_AddItemToObject(sum, "tapes_s", bl_bench_stat_json(c->tapes.v, c->tapes.n));
    cJSON_AddItemToObject(sum, "first_execution_s", bl_bench_stat_json(c->first.v, c->first.n));
    cJSON_AddItemToObject(sum, "warm_execution_s", bl_bench_stat_json(c->warm.v, c->warm.n));
    cJSON_AddItemToObject(sum, "first_execution_s_per_frame", per_frame_json(&c->first, p->frames));
    cJSON_AddItemToObject(sum, "warm_execution_s_per_frame", per_frame_json(&c->warm, p->frames));
    cJSON_AddItemToObject(sum, "process_wall_s", bl_bench_stat_json(c->wall.v, c->wall.n));
    cJSON_AddItemToObject(sum, "peak_rss_bytes", bl_bench_stat_json(c->rss.v, c->rss.n));
    cJSON_AddNullToObject(sum, "engine_live_bytes"); /* not reported by either worker */
    cJSON *fig = cJSON_AddObjectToObject(j, "figures");
    const bl_bench_dvec *ph[2] = {&c->first, &c->warm};
    const char *names[2] = {"first_execution", "warm_execution"};
    for (int k = 0; k < 2; k++) {
        if (!ph[k]->n)
            continue;
        cJSON *f = cJSON_AddObjectToObject(fig, names[k]);
        cJSON_AddItemToObject(f, "unit_updates_per_s", bl_bench_rate_json(unit_updates, ph[k]));
        cJSON_AddItemToObject(f, "synaptic_events_per_s", bl_bench_rate_json(syn_events, ph[k]));
        cJSON_AddItemToObject(f, "frames_per_s", bl_bench_rate_json(p->frames, ph[k]));
    }
    return j;
}

static cJSON *ratio_json(const bl_bench_dvec *ours, const bl_bench_dvec *peer)
{
    double a = vmedian(ours), b = vmedian(peer);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "ours_median_s", a);
    cJSON_AddNumberToObject(r, "numpy_median_s", b);
    cJSON_AddNumberToObject(r, "numpy_over_ours", a > 0 ? b / a : 0);
    return r;
}

/* ---- the table ----------------------------------------------------------------- */

static void fmt_g(char *buf, size_t size, double x)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3g", x);
}

static void table_point(bl_bench_ctx *ctx, const res_point *p, const char *status, const res_case *ours,
                        const res_case *peer, int identical, const char *hash)
{
    char ow[32], nw[32], oc[32], nc[32], rw[32] = "-", rc[32] = "-", ro[32] = "-", rn[32] = "-", id[96];
    double a = ours->warm.n ? vmedian(&ours->warm) / p->frames : NAN;
    double b = peer->warm.n ? vmedian(&peer->warm) / p->frames : NAN;
    double a1 = ours->first.n ? vmedian(&ours->first) / p->frames : NAN;
    double b1 = peer->first.n ? vmedian(&peer->first) / p->frames : NAN;
    fmt_g(ow, sizeof ow, a);
    fmt_g(nw, sizeof nw, b);
    fmt_g(oc, sizeof oc, a1);
    fmt_g(nc, sizeof nc, b1);
    if (identical > 0 && a > 0 && b > 0)
        snprintf(rw, sizeof rw, "%.1fx", b / a);
    if (identical > 0 && a1 > 0 && b1 > 0)
        snprintf(rc, sizeof rc, "%.1fx", b1 / a1);
    if (ours->rss.n)
        snprintf(ro, sizeof ro, "%.0f", vmedian(&ours->rss) / 1048576.0);
    if (peer->rss.n)
        snprintf(rn, sizeof rn, "%.0f", vmedian(&peer->rss) / 1048576.0);
    if (identical < 0)
        snprintf(id, sizeof id, "-");
    else
        snprintf(id, sizeof id, "%s (%.12s)", identical ? "yes" : "NO", hash);
    bl_bench_tablef(ctx, "    %-9s %5u %4u %6u %-12s %10s %10s %7s %10s %10s %7s %6s %6s  %s\n", p->node, p->units,
                    p->batch, p->frames, status, ow, nw, rw, oc, nc, rc, ro, rn, id);
}

/* ---- one point ------------------------------------------------------------------ */

static double mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return NAN;
    char line[256];
    double kb = NAN;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024.0;
}

static void qual_side_json(cJSON *q, const char *key, const res_worker *wo, const char *status, double timeout_s)
{
    cJSON *j = cJSON_AddObjectToObject(q, key);
    cJSON_AddStringToObject(j, "status", status);
    if (!wo->ok && wo->reason[0])
        cJSON_AddStringToObject(j, "reason", wo->reason);
    if (wo->proc.timed_out)
        cJSON_AddNumberToObject(j, "censored_at_s", timeout_s);
    if (wo->ok)
        cJSON_AddStringToObject(j, "trajectory_sha256", wo->hash);
    cJSON_AddItemToObject(j, "process", bl_bench_proc_json(&wo->proc));
    if (wo->report)
        cJSON_AddItemToObject(j, "worker_report", cJSON_Duplicate(wo->report, 1));
}

static void run_point(bl_bench_ctx *ctx, const bl_bench_res_def *d, res_point *p, const char *peer_unavailable,
                      cJSON *points)
{
    double t0 = bl_bench_now();
    cJSON *pj = cJSON_CreateObject();
    cJSON_AddItemToArray(points, pj);
    cJSON_AddStringToObject(pj, "node", p->node);
    cJSON_AddNumberToObject(pj, "units", p->units);
    cJSON_AddNumberToObject(pj, "batch", p->batch);
    cJSON_AddNumberToObject(pj, "frames", p->frames);
    cJSON_AddNumberToObject(pj, "seed", (double)d->seed);
    /* The oracle keeps several dense [B, N, N] float64 arrays: about 4.3 of
     * them at peak (measured: 4.4 GB at N = 1024, B = 128). */
    double need = 4.5 * 8.0 * p->batch * (double)p->units * p->units + 64.0 * 1048576.0;
    double avail = mem_available_bytes();
    cJSON_AddNumberToObject(pj, "numpy_peak_memory_estimate_bytes", need);
    res_case cs[2];
    memset(cs, 0, sizeof cs);
    cs[0].id = "bl-reservoir";
    cs[0].ours = 1;
    cs[0].repeat = d->ours_repeat;
    cs[0].samples = cJSON_CreateArray();
    cs[1].id = "numpy-oracle";
    cs[1].repeat = d->peer_repeat;
    cs[1].samples = cJSON_CreateArray();
    const char *status = NULL;
    char reason[1400] = "";
    int identical = -1;
    char hash[65] = "";
    double unit_updates = NAN, syn = NAN, spikes = NAN;
    bl_error err = {0};
    if (peer_unavailable) {
        status = "unavailable";
        snprintf(reason, sizeof reason, "%s", peer_unavailable);
    } else if (!isnan(avail) && need > 0.8 * avail) {
        status = "unavailable";
        snprintf(reason, sizeof reason, "the NumPy oracle would need about %.1f GiB (dense [B, N, N] float64 "
                 "arrays); MemAvailable is %.1f GiB", need / 1073741824.0, avail / 1073741824.0);
    } else if (bl_bench_mkdirs(p->dir, &err)) {
        status = "qualification_error";
        snprintf(reason, sizeof reason, "%s", err.message);
    }
    cJSON *q = cJSON_AddObjectToObject(pj, "qualification");
    cJSON_AddStringToObject(q, "basis", "the trajectory SHA-256 of our worker and of the NumPy oracle on the same "
                                        "exported node and input tape must be equal (bit-identical spikes of "
                                        "every frame and final state); untimed workers");
    if (!status) {
        bl_bench_logf(ctx, "[%s] %s N=%u B=%u (%u frames): qualification ...", d->id, p->node, p->units, p->batch,
                      p->frames);
        res_worker wo, wp;
        memset(&wp, 0, sizeof wp);
        run_worker(ctx, d, p, 1, 0, "qual-ours", 1, &wo);
        qual_side_json(q, "ours", &wo, wo.ok ? "ok" : wo.proc.timed_out ? "timeout" : "error", ctx->o->timeout_s);
        if (!wo.ok) {
            status = wo.proc.timed_out ? "qualification_timeout" : "qualification_error";
            snprintf(reason, sizeof reason, "ours: %s", wo.reason);
        } else {
            snprintf(hash, sizeof hash, "%s", wo.hash);
            num_key(wo.report, "unit_updates", &unit_updates);
            num_key(wo.report, "synaptic_events", &syn);
            num_key(wo.report, "spikes", &spikes);
            run_worker(ctx, d, p, 0, 0, "qual-numpy", 0, &wp);
            qual_side_json(q, "numpy", &wp, wp.ok ? "ok" : wp.proc.timed_out ? "timeout" : "error",
                           ctx->o->timeout_s);
            const cJSON *ver = wp.report ? cJSON_GetObjectItemCaseSensitive(wp.report, "numpy") : NULL;
            if (cJSON_IsString(ver))
                cJSON_AddStringToObject(pj, "numpy_version", ver->valuestring);
            if (!wp.ok) {
                status = wp.proc.timed_out ? "qualification_timeout" : "qualification_error";
                snprintf(reason, sizeof reason, "numpy oracle: %s", wp.reason);
            } else {
                identical = !strcmp(wo.hash, wp.hash);
                if (!identical) {
                    status = "mismatch";
                    snprintf(reason, sizeof reason, "trajectory sha256 differs: ours %s, numpy %s", wo.hash, wp.hash);
                }
            }
        }
        cJSON_Delete(wo.report);
        cJSON_Delete(wp.report);
        bl_bench_logf(ctx, "[%s] %s N=%u B=%u qualification: %s%s%s", d->id, p->node, p->units, p->batch,
                      status ? status : "identical", reason[0] ? ": " : "", reason);
    }
    cJSON_AddStringToObject(q, "status", !status ? "passed" : !strcmp(status, "mismatch") ? "failed" : status);
    if (identical >= 0)
        cJSON_AddBoolToObject(pj, "bit_identical", identical);
    else
        cJSON_AddNullToObject(pj, "bit_identical");
    if (hash[0])
        cJSON_AddStringToObject(pj, "trajectory_sha256", hash);
    else
        cJSON_AddNullToObject(pj, "trajectory_sha256");
    if (!status) {
        for (int rep = 0; rep < ctx->o->repetitions; rep++) {
            int reversed = rep % 2;
            for (int k = 0; k < 2; k++)
                time_sample(ctx, d, p, &cs[reversed ? 1 - k : k], hash, rep, k, reversed);
        }
        if (cs[0].n_ok && cs[1].n_ok)
            status = "measured";
        else {
            const res_case *bad = cs[0].n_ok ? &cs[1] : &cs[0];
            status = case_status(bad);
            snprintf(reason, sizeof reason, "%s: no ok sample (%s)", bad->id, status);
        }
    }
    if (!ctx->o->keep_outputs) {
        bl_error ignore = {0};
        bl_bench_rmtree(p->export_dir, &ignore);
    }
    cJSON_AddStringToObject(pj, "status", status);
    if (reason[0])
        cJSON_AddStringToObject(pj, "reason", reason);
    cJSON *counts = cJSON_AddObjectToObject(pj, "counts");
    cJSON_AddStringToObject(counts, "source", "our qualification run (one run of all frames, all slots)");
    if (!isnan(unit_updates)) {
        cJSON_AddNumberToObject(counts, "unit_updates_per_run", unit_updates);
        cJSON_AddNumberToObject(counts, "synaptic_events_per_run", syn);
        cJSON_AddNumberToObject(counts, "spikes_per_run", spikes);
    }
    cJSON *cases = cJSON_AddArrayToObject(pj, "cases");
    for (int k = 0; k < 2; k++)
        cJSON_AddItemToArray(cases, case_json(ctx, p, &cs[k], unit_updates, syn));
    cJSON *ratios = cJSON_AddObjectToObject(pj, "ratios");
    if (identical > 0) {
        const bl_bench_dvec *a[3] = {&cs[0].first, &cs[0].warm, &cs[0].wall};
        const bl_bench_dvec *b[3] = {&cs[1].first, &cs[1].warm, &cs[1].wall};
        const char *names[3] = {"first_execution_s", "warm_execution_s", "process_wall_s"};
        for (int k = 0; k < 3; k++)
            if (a[k]->n && b[k]->n)
                cJSON_AddItemToObject(ratios, names[k], ratio_json(a[k], b[k]));
    }
    cJSON_AddNumberToObject(pj, "wall_s", bl_bench_now() - t0);
    table_point(ctx, p, status, &cs[0], &cs[1], identical, hash);
    if (reason[0] && strcmp(status, "measured") != 0)
        bl_bench_tablef(ctx, "      (%.*s)\n", 150, reason);
    case_free(&cs[0]);
    case_free(&cs[1]);
}

/* ---- the workload ---------------------------------------------------------------- */

static cJSON *inputs_json(const bl_bench_ctx *ctx, const bl_bench_res_def *d)
{
    cJSON *in = cJSON_CreateObject();
    cJSON *nodes = cJSON_AddArrayToObject(in, "nodes");
    for (int i = 0; i < d->n_nodes; i++)
        cJSON_AddItemToArray(nodes, cJSON_CreateString(d->nodes[i]));
    cJSON *u = cJSON_AddArrayToObject(in, "units");
    cJSON *f = cJSON_AddObjectToObject(in, "frames_by_units");
    for (int i = 0; i < d->n_units; i++) {
        char key[32];
        snprintf(key, sizeof key, "%u", d->units[i]);
        cJSON_AddItemToArray(u, cJSON_CreateNumber(d->units[i]));
        cJSON_AddNumberToObject(f, key, d->frames[i]);
    }
    cJSON *b = cJSON_AddArrayToObject(in, "batch");
    for (int i = 0; i < d->n_batch; i++)
        cJSON_AddItemToArray(b, cJSON_CreateNumber(d->batch[i]));
    cJSON_AddNumberToObject(in, "seed", (double)d->seed);
    cJSON_AddStringToObject(in, "parameters", "the defaults of each node kind (docs/reservoir.md)");
    if (d->task) {
        cJSON_AddStringToObject(in, "task", d->task);
        cJSON_AddStringToObject(in, "loop", "closed: the task's observations drive the node, its effectors the task");
        cJSON_AddNumberToObject(in, "horizon_ticks", d->frames[0]);
        cJSON_AddNumberToObject(in, "neural_frames_per_tick", 1);
        cJSON_AddNumberToObject(in, "inputs_per_slot", 62);
        cJSON_AddNumberToObject(in, "effectors", 2);
        cJSON_AddStringToObject(in, "task_options", "the task's defaults; warmup 0; input gain 1");
        cJSON_AddStringToObject(in, "worlds", "slot k: world seed = Philox(key = seed, counter (k, 0, 201, 0)), "
                                              "word0 | word1 << 32; no noise tape");
    } else {
        cJSON_AddNumberToObject(in, "inputs_per_slot", 3);
        cJSON_AddNumberToObject(in, "effectors", 2);
        cJSON_AddStringToObject(in, "input_tape", "Philox: inputs[t][b][r] = 1 if uniform(seed, t, b*3 + r, "
                                                  "BENCH_IN) < 1/2 else 0; no noise tape");
    }
    cJSON_AddStringToObject(in, "dtype", "float64 (state, weights), uint8 spikes");
    cJSON_AddNumberToObject(in, "threads_ours", ctx->threads);
    cJSON_AddNumberToObject(in, "threads_numpy", 1);
    cJSON_AddNumberToObject(in, "warm_runs_per_worker_ours", d->ours_repeat);
    cJSON_AddNumberToObject(in, "warm_runs_per_worker_numpy", d->peer_repeat);
    return in;
}

static cJSON *case_definitions_json(const bl_bench_res_def *d)
{
    cJSON *a = cJSON_CreateArray();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", "bl-reservoir");
    cJSON_AddStringToObject(o, "kind", "ours");
    cJSON_AddStringToObject(o, "implementation",
                            d->task ? "brainlesslab reservoir bench-case --task TASK --threads N "
                                      "(bl_res_bench_task_case: sparse link rows, silent sources skipped, batch "
                                      "slots threaded; the C task table encodes, scores and advances each slot)"
                                    : "brainlesslab reservoir bench-case --threads N (bl_res_bench_case: "
                                      "sparse link rows, silent sources skipped, batch slots threaded)");
    cJSON_AddStringToObject(o, "dtype", "float64");
    cJSON_AddItemToArray(a, o);
    o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", "numpy-oracle");
    cJSON_AddStringToObject(o, "kind", "peer");
    cJSON_AddStringToObject(o, "implementation",
                            d->task ? PEER_SCRIPT " bench EXPORT_DIR --repeat K: the independent dense batched NumPy "
                                      "oracle, written from the spec alone (ordered serial sums, one thread), in "
                                      "closed loop with tests/oracles/tasks_numpy.py (the task oracle, written "
                                      "from the task definitions; scalar Python per slot)"
                                    : PEER_SCRIPT " bench EXPORT_DIR --repeat K: the independent dense "
                                      "batched NumPy oracle, written from the spec alone; ordered "
                                      "serial sums, one thread");
    cJSON_AddStringToObject(o, "dtype", "float64");
    cJSON *env = cJSON_AddObjectToObject(o, "environment");
    for (const char *const *e = peer_env; *e; e++) {
        const char *eq = strchr(*e, '=');
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        cJSON_AddStringToObject(env, key, eq + 1);
    }
    cJSON_AddItemToArray(a, o);
    return a;
}

/* Whether the oracle can run at all: its script and NumPy (NULL when it can). */
static const char *probe_peer(bl_bench_ctx *ctx, char *reason, size_t size, cJSON *wj)
{
    char script[4200];
    snprintf(script, sizeof script, "%s/" PEER_SCRIPT, ctx->source_dir);
    if (!ctx->python_ok) {
        snprintf(reason, size, "%s", ctx->python_reason);
        return reason;
    }
    if (!bl_bench_exists(script)) {
        snprintf(reason, size, "peer script missing: %s under the source dir", PEER_SCRIPT);
        return reason;
    }
    cJSON *v = bl_bench_probe_python(ctx, "numpy",
                                     "import sys, json, numpy\n"
                                     "json.dump({'python': sys.version.split()[0], 'numpy': numpy.__version__}, "
                                     "open(sys.argv[1], 'w'))\n",
                                     peer_env, reason, size);
    if (!v) {
        size_t len = strlen(reason);
        snprintf(reason + len, size - len, " (Debian: apt-get install python3-numpy)");
        return reason;
    }
    cJSON_AddItemToObject(wj, "peer_versions", v);
    return NULL;
}

void bl_bench_res_run(bl_bench_ctx *ctx, const bl_bench_res_def *d, cJSON *wj)
{
    double t0 = bl_bench_now();
    char run_dir[4300];
    snprintf(run_dir, sizeof run_dir, "%s/%s", ctx->runs_dir, d->id);
    cJSON_AddStringToObject(wj, "kind", "reservoir");
    bl_error err = {0};
    if (bl_bench_mkdirs(run_dir, &err)) {
        cJSON_AddStringToObject(wj, "status", "unavailable");
        cJSON_AddStringToObject(wj, "reason", err.message);
        bl_bench_tablef(ctx, "%s: unavailable: %s\n\n", d->id, err.message);
        return;
    }
    cJSON_AddItemToObject(wj, "inputs", inputs_json(ctx, d));
    cJSON_AddItemToObject(wj, "case_definitions", case_definitions_json(d));
    cJSON_AddStringToObject(wj, "order", "per point: qualification (ours, then the oracle), then per repetition "
                                         "ours then the oracle on even repetitions, the oracle then ours on odd "
                                         "ones; each worker a fresh process");
    cJSON_AddStringToObject(wj, "phases", "construct_s: the node and its batch copies (ours) / the batch arrays "
                                          "from the bundle (oracle); tapes_s: our input tape; first_execution_s: "
                                          "the worker's first run of all frames (cold); warm_execution_s: its "
                                          "further runs from a reset batch in the same process; process_wall_s: "
                                          "fork to reap (includes interpreter start, imports, bundle reads, "
                                          "hashing)");
    cJSON_AddStringToObject(wj, "figures_note", "frames are abstract steps: no simulated-seconds figure; "
                                                "unit_updates = frames x batch x units; synaptic_events = recurrent "
                                                "terms summed by ours (spiking sources x links), the same task for "
                                                "the oracle, which sums every dense term");
    char reason[1200];
    const char *peer_unavailable = probe_peer(ctx, reason, sizeof reason, wj);
    if (peer_unavailable)
        bl_bench_logf(ctx, "[%s] NumPy oracle unavailable: %s", d->id, peer_unavailable);
    bl_bench_tablef(ctx, "%s: %s\n    ours %d thread(s), the NumPy oracle 1 thread (OMP/OPENBLAS/MKL_NUM_THREADS=1); "
                    "%d repetitions;\n    medians in s/frame (warm: repeats in the worker; cold: its first run), ratio = numpy / ours, "
                    "peak RSS in MiB\n",
                    d->id, d->title, ctx->threads, ctx->o->repetitions);
    bl_bench_tablef(ctx, "    %-9s %5s %4s %6s %-12s %10s %10s %7s %10s %10s %7s %6s %6s  %s\n", "node", "N", "B",
                    "frames", "status", "ours_warm", "numpy_warm", "ratio", "ours_cold", "numpy_cold", "ratio",
                    "rss", "np_rss", "bit-identical (sha256)");
    cJSON *points = cJSON_AddArrayToObject(wj, "points");
    for (int n = 0; n < d->n_nodes; n++)
        for (int u = 0; u < d->n_units; u++)
            for (int b = 0; b < d->n_batch; b++) {
                res_point p;
                memset(&p, 0, sizeof p);
                p.node = d->nodes[n];
                p.units = d->units[u];
                p.frames = d->frames[u];
                p.batch = d->batch[b];
                snprintf(p.dir, sizeof p.dir, "%s/%s-N%u-B%u", run_dir, p.node, p.units, p.batch);
                snprintf(p.export_dir, sizeof p.export_dir, "%s/export", p.dir);
                run_point(ctx, d, &p, peer_unavailable, points);
            }
    bl_bench_tablef(ctx, "\n");
    cJSON_AddStringToObject(wj, "status", "completed");
    cJSON_AddNumberToObject(wj, "wall_s", bl_bench_now() - t0);
}
