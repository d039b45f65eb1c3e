/* The bl-mpi case: strong scaling of the mpi backend over ranks on this
 * machine, and the bytes the ranks exchange per simulated second.
 *
 * Every rank count R of --ranks is one point, treated like any other case of
 * the benchmark: one untimed worker qualifies it against the shiu2024
 * reference backend's outputs (rank 0 writes them; spike events, counts and
 * final v, g bit for bit), then it is timed in fresh workers, each a new
 * `mpirun -np R brainlesslab simulate --backend mpi ...` launch, interleaved
 * with the other cases (after them going forward, before them reversed), in
 * every repetition. BL_MPI_STATS makes every rank write its counters (bytes
 * sent and received, windows, exchange and compute wall time, peak RSS; see
 * src/engine/engine_mpi.c), which go into each sample raw and into the
 * per-point summaries. Speedups are against R = 1 (the same launcher and
 * backend) and against bl-cpu (one process, the same threads) of the same
 * run. Without the mpi backend or mpirun the points are "unavailable" with
 * the reason. Nothing is judged here: the numbers go into the receipt. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_case.h"
#include "brainlesslab/model.h"
#include "brainlesslab/mpi.h"

static const bl_bench_case_def mpi_def = {
    BL_BENCH_MPI_CASE, "shiu2024", BL_BENCH_OURS, "mpi",
    "mpirun -np R brainlesslab simulate --backend mpi: the neurons split into R contiguous ranges (balanced by "
    "neurons + incoming edges), spikes exchanged once per 18-step window by MPI_Allgather (counts) and "
    "MPI_Allgatherv (ids); rank 0 writes the outputs and the timing report",
    0.0, "V", "float64", 0, NULL};

typedef struct rank_vecs {
    bl_bench_dvec sent, recv, exch, comp, rss; /* per simulated second (bytes, s); rss in bytes */
} rank_vecs;

typedef struct mpi_point {
    int ranks, oversubscribed;
    bl_bench_case_run cr;
    rank_vecs *rk; /* [ranks] */
    bl_bench_dvec sum_sent, sum_recv, windows, max_rss, max_exch;
} mpi_point;

struct bl_bench_mpi {
    int selected, available;
    char reason[1024];
    mpi_point *pts;
    int n;
    int timed[16], n_timed; /* qualified points */
    double sim_s_worker;    /* simulated seconds per worker (all its trials) */
};


static int usable_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}


/* ---- setup: --ranks, mpirun ------------------------------------------------ */

static int find_on_path(const char *name, char *out, size_t size)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            snprintf(out, size, "%.*s/%s", (int)len, p, name);
            if (access(out, X_OK) == 0)
                return 1;
        }
        if (!e)
            break;
        p = e + 1;
    }
    out[0] = '\0';
    return 0;
}

/* A sanitized build (BL_SANITIZED=1, or this binary compiled with ASan):
 * the ranks run with LeakSanitizer off (see make_launch). */
static int asan_build(const bl_bench_ctx *ctx)
{
#if defined(__SANITIZE_ADDRESS__)
    (void)ctx;
    return 1;
#else
    return ctx->sanitized;
#endif
}

static int is_open_mpi(const bl_bench_ctx *ctx)
{
    return strstr(ctx->mpi_version, "Open MPI") != NULL;
}

bl_status bl_bench_mpi_setup(bl_bench_ctx *ctx, bl_error *err)
{
    const bl_bench_options *o = ctx->o;
    ctx->n_ranks = 0;
    if (o->ranks) {
        for (const char *p = o->ranks; *p;) {
            char *end;
            errno = 0;
            long r = strtol(p, &end, 10);
            if (errno || end == p || r < 1 || r > 1024 || (*end && *end != ',') || ctx->n_ranks == 16 ||
                (ctx->n_ranks && r <= ctx->ranks[ctx->n_ranks - 1]))
                return bl_fail(err, BL_ERR_INVALID, "--ranks '%s': expected at most 16 ascending rank counts in "
                               "1..1024, e.g. 1,2,4", o->ranks);
            ctx->ranks[ctx->n_ranks++] = (int)r;
            if (!*end)
                break;
            p = end + 1;
            if (!*p)
                return bl_fail(err, BL_ERR_INVALID, "--ranks '%s': trailing comma", o->ranks);
        }
        if (!ctx->n_ranks)
            return bl_fail(err, BL_ERR_INVALID, "--ranks: empty list");
    } else {
        /* 1, 2, 4, ... up to the usable cores (at least 1, 2); --quick: 1, 2 */
        int top = o->quick ? 2 : usable_cpus();
        ctx->ranks[ctx->n_ranks++] = 1;
        for (int r = 2; ctx->n_ranks < 16 && (r <= top || r == 2); r *= 2)
            ctx->ranks[ctx->n_ranks++] = r;
    }
    ctx->mpi_selected = bl_bench_listed(o->cases, BL_BENCH_MPI_CASE);
    ctx->mpi_ok = 0;
    int have_mpirun = find_on_path("mpirun", ctx->mpirun, sizeof ctx->mpirun);
    if (!bl_mpi_available()) {
        (void)have_mpirun;
        snprintf(ctx->mpi_reason, sizeof ctx->mpi_reason, "this binary was built without the mpi backend (cmake "
                 "-DBL_MPI=ON, which scripts/build.sh uses unless BL_MPI=OFF)");
        return BL_OK;
    }
    if (!ctx->mpi_selected) {
        snprintf(ctx->mpi_reason, sizeof ctx->mpi_reason, "not selected by --cases");
        return BL_OK;
    }
    if (!have_mpirun) {
        snprintf(ctx->mpi_reason, sizeof ctx->mpi_reason, "mpirun not found on PATH (Debian: apt-get install "
                 "openmpi-bin)");
        return BL_OK;
    }
    char log[4300];
    snprintf(log, sizeof log, "%s/probe-mpirun.log", ctx->runs_dir);
    char *argv[] = {ctx->mpirun, "--version", NULL};
    bl_bench_proc p;
    bl_error e2 = {0};
    if (bl_bench_spawn(argv, NULL, log, 60, &p, &e2)) {
        snprintf(ctx->mpi_reason, sizeof ctx->mpi_reason, "%s", e2.message);
        return BL_OK;
    }
    char *text = NULL;
    if (!p.exited || p.exit_status != 0 || bl_bench_read_text(log, &text, &e2)) {
        char how[128];
        bl_bench_proc_describe(&p, 60, how, sizeof how);
        snprintf(ctx->mpi_reason, sizeof ctx->mpi_reason, "%s --version: %s", ctx->mpirun, how);
        free(text);
        return BL_OK;
    }
    size_t len = strcspn(text, "\n");
    snprintf(ctx->mpi_version, sizeof ctx->mpi_version, "%.*s", (int)len, text);
    free(text);
    ctx->mpi_ok = 1;
    return BL_OK;
}

/* The launcher's fixed arguments after "-np R" (Open MPI only). */
static const char *const open_mpi_args[] = {"--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
                                            NULL};

static cJSON *launcher_json(const bl_bench_ctx *ctx)
{
    cJSON *l = cJSON_CreateObject();
    if (ctx->mpirun[0])
        cJSON_AddStringToObject(l, "mpirun", ctx->mpirun);
    else
        cJSON_AddNullToObject(l, "mpirun");
    cJSON_AddStringToObject(l, "version", ctx->mpi_version);
    cJSON *a = cJSON_AddArrayToObject(l, "command");
    const char *head[] = {"mpirun", "-np", "R"};
    for (size_t i = 0; i < 3; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(head[i]));
    for (const char *const *x = open_mpi_args; is_open_mpi(ctx) && *x; x++)
        cJSON_AddItemToArray(a, cJSON_CreateString(*x));
    const char *tail[] = {"brainlesslab", "simulate", "--backend", "mpi", "--threads", "T", "...", "--timing",
                          "FILE", "--out", "DIR"};
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(tail[i]));
    cJSON *env = cJSON_AddArrayToObject(l, "environment");
    cJSON_AddItemToArray(env, cJSON_CreateString("BL_MPI_STATS=<worker dir>/mpi-stats"));
    if (geteuid() == 0) {
        cJSON_AddItemToArray(env, cJSON_CreateString("OMPI_ALLOW_RUN_AS_ROOT=1"));
        cJSON_AddItemToArray(env, cJSON_CreateString("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"));
    }
    if (asan_build(ctx))
        cJSON_AddItemToArray(env, cJSON_CreateString("ASAN_OPTIONS=...:detect_leaks=0"));
    cJSON_AddStringToObject(l, "binding", is_open_mpi(ctx) ? "none (--bind-to none: the OS schedules ranks, as it "
                                                             "schedules the single-process cases)"
                                                           : "the launcher's default");
    cJSON_AddStringToObject(l, "transport", is_open_mpi(ctx) ? "shared memory (btl self,vader): one machine"
                                                             : "the launcher's default");
    return l;
}

void bl_bench_mpi_environment(const bl_bench_ctx *ctx, cJSON *env)
{
    cJSON *m = cJSON_AddObjectToObject(env, "mpi");
    cJSON_AddBoolToObject(m, "backend_compiled", bl_mpi_available());
    cJSON_AddBoolToObject(m, "available", ctx->mpi_ok);
    if (!ctx->mpi_ok)
        cJSON_AddStringToObject(m, "reason", ctx->mpi_reason);
    cJSON_AddItemToObject(m, "launcher", launcher_json(ctx));
    cJSON_AddItemToObject(m, "ranks", cJSON_CreateIntArray(ctx->ranks, ctx->n_ranks));
    cJSON_AddNumberToObject(m, "threads_per_rank", ctx->threads);
    cJSON_AddNumberToObject(m, "usable_cpus", usable_cpus());
}

void bl_bench_mpi_protocol(const bl_bench_ctx *ctx, cJSON *protocol)
{
    (void)ctx;
    if (!protocol)
        return;
    cJSON_AddStringToObject(
        protocol, "mpi_scaling",
        "bl-mpi: every rank count R is one point, qualified like every case (one untimed launch; rank 0's "
        "outputs equal the shiu2024 reference's bit for bit), then timed in fresh `mpirun -np R` launches, "
        "after the other cases on forward repetitions and before them (R descending) on reversed ones. Phases "
        "are rank 0's timing report (prepare_s includes MPI_Init); process_wall_s and peak_rss_bytes are "
        "mpirun's (wait4: the largest of mpirun and its ranks); per-rank peak RSS, bytes, windows and exchange "
        "time come from BL_MPI_STATS files written by every rank. A point is oversubscribed when R x threads "
        "per rank exceeds the usable CPUs. Speedups: median at R = 1 (and of bl-cpu, one process, same "
        "threads) over median at R, per phase");
}

/* ---- one workload ------------------------------------------------------------ */

bl_bench_mpi *bl_bench_mpi_begin(bl_bench_ctx *ctx, const bl_bench_workload_def *w)
{
    bl_bench_mpi *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->selected = ctx->mpi_selected;
    m->available = ctx->mpi_ok;
    snprintf(m->reason, sizeof m->reason, "%s", ctx->mpi_reason);
    if (m->available && ctx->o->quick && strcmp(w->id, "w1") != 0) {
        m->available = 0;
        snprintf(m->reason, sizeof m->reason, "skipped in --quick: bl-mpi runs on w1 only (time budget of the "
                 "receipt-format test)");
    }
    m->pts = calloc((size_t)ctx->n_ranks, sizeof *m->pts);
    if (!m->pts) {
        free(m);
        return NULL;
    }
    m->n = ctx->n_ranks;
    int cpus = usable_cpus();
    for (int i = 0; i < m->n; i++) {
        mpi_point *pt = &m->pts[i];
        pt->ranks = ctx->ranks[i];
        pt->oversubscribed = (long)pt->ranks * (long)ctx->threads > (long)cpus;
        pt->cr.def = &mpi_def;
        pt->cr.timed = m->selected;
        pt->cr.available = m->available;
        snprintf(pt->cr.reason, sizeof pt->cr.reason, "%s", m->reason);
        pt->cr.samples = cJSON_CreateArray();
        snprintf(pt->cr.qual_status, sizeof pt->cr.qual_status, "%s", m->available ? "not_run" : "unavailable");
        pt->rk = calloc((size_t)pt->ranks, sizeof *pt->rk);
        if (!pt->rk) {
            pt->cr.available = 0;
            snprintf(pt->cr.reason, sizeof pt->cr.reason, "cannot allocate the statistics of %d ranks", pt->ranks);
        }
    }
    return m;
}

int bl_bench_mpi_needs_reference(const bl_bench_mpi *m)
{
    return m && m->selected && m->available;
}

int bl_bench_mpi_n_timed(const bl_bench_mpi *m)
{
    return m ? m->n_timed : 0;
}

typedef struct launch {
    const char *argv[16];
    const char *env[6];
    char np[16], stats[4300], asan[2048];
} launch;

static void make_launch(const bl_bench_ctx *ctx, const mpi_point *pt, const char *dir, launch *L)
{
    memset(L, 0, sizeof *L);
    int a = 0, e = 0;
    snprintf(L->np, sizeof L->np, "%d", pt->ranks);
    L->argv[a++] = ctx->mpirun;
    L->argv[a++] = "-np";
    L->argv[a++] = L->np;
    for (const char *const *x = open_mpi_args; is_open_mpi(ctx) && *x; x++)
        L->argv[a++] = *x;
    L->argv[a] = NULL;
    snprintf(L->stats, sizeof L->stats, "BL_MPI_STATS=%s/mpi-stats", dir);
    L->env[e++] = L->stats;
    if (geteuid() == 0) {
        L->env[e++] = "OMPI_ALLOW_RUN_AS_ROOT=1";
        L->env[e++] = "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    }
    if (asan_build(ctx)) {
        /* LeakSanitizer's tracer crashes intermittently in Open MPI processes
         * (see tests/cli/mpi_exact.py): leaks are checked by the single-process tests. */
        const char *old = getenv("ASAN_OPTIONS");
        snprintf(L->asan, sizeof L->asan, "ASAN_OPTIONS=%s%sdetect_leaks=0", old ? old : "", old && *old ? ":" : "");
        L->env[e++] = L->asan;
    }
    L->env[e] = NULL;
}

static int stat_num(const cJSON *o, const char *key, double *x)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return 0;
    *x = v->valuedouble;
    return 1;
}

/* Every rank's BL_MPI_STATS file of a worker, normalised; NULL and why when
 * one is missing or incomplete (the message names the file and the key). */
static cJSON *read_stats(const char *dir, int ranks, char *why, size_t size)
{
    static const char *const keys[] = {"rank", "ranks", "threads", "lo", "hi", "windows", "bytes_sent",
                                       "bytes_received", "spikes_local", "wall_compute_s", "wall_exchange_s",
                                       "peak_rss_kb"};
    cJSON *arr = cJSON_CreateArray();
    for (int r = 0; r < ranks; r++) {
        char path[4300];
        snprintf(path, sizeof path, "%s/mpi-stats.rank%d.json", dir, r);
        char *text = NULL;
        bl_error e = {0};
        if (bl_bench_read_text(path, &text, &e)) {
            snprintf(why, size, "no BL_MPI_STATS file of rank %d: %s", r, e.message);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON *j = cJSON_Parse(text);
        free(text);
        cJSON *o = cJSON_CreateObject();
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            double x;
            if (!stat_num(j, keys[k], &x)) {
                snprintf(why, size, "%s: %s", path, j ? "missing or non-numeric key" : "not JSON");
                if (j)
                    snprintf(why + strlen(why), size - strlen(why), " '%s'", keys[k]);
                cJSON_Delete(j);
                cJSON_Delete(o);
                cJSON_Delete(arr);
                return NULL;
            }
            if (!strcmp(keys[k], "peak_rss_kb"))
                cJSON_AddNumberToObject(o, "peak_rss_bytes", x * 1024);
            else
                cJSON_AddNumberToObject(o, keys[k], x);
        }
        double rk = -1, n = -1;
        stat_num(j, "rank", &rk);
        stat_num(j, "ranks", &n);
        cJSON_Delete(j);
        if ((int)rk != r || (int)n != ranks) {
            snprintf(why, size, "%s: rank %g of %g, expected rank %d of %d", path, rk, n, r, ranks);
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* mpirun ends its log with banners ("----", "Exit code: 1"): the rank's own
 * message is the first line naming brainlesslab or a sanitizer, or an error. */
static void failure_reason(const bl_bench_worker *wo, char *reason, size_t size)
{
    snprintf(reason, size, "%s", wo->reason);
    FILE *f = wo->proc.timed_out ? NULL : fopen(wo->log_path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "brainlesslab", 12) || strstr(line, "Sanitizer") || strstr(line, "ERROR") ||
            strstr(line, "error:")) {
            char how[128];
            bl_bench_proc_describe(&wo->proc, 0, how, sizeof how);
            snprintf(reason, size, "%s: %s", how, line);
            break;
        }
    }
    fclose(f);
}

static void discard(const bl_bench_ctx *ctx, const char *dir)
{
    if (ctx->o->keep_outputs)
        return;
    bl_error ignore = {0};
    bl_bench_rmtree(dir, &ignore);
}

void bl_bench_mpi_qualify(bl_bench_ctx *ctx, bl_bench_mpi *m, const bl_bench_workload_def *w,
                          const bl_bench_inputs *in, const bl_bench_case_run *ref, const char *run_dir)
{
    if (!m || !m->selected || !m->available)
        return;
    m->sim_s_worker = bl_bench_sim_seconds(in) * w->trials;
    for (int i = 0; i < m->n; i++) {
        mpi_point *pt = &m->pts[i];
        if (!pt->cr.available)
            continue;
        cJSON *q = pt->cr.qualification = cJSON_CreateObject();
        if (strcmp(ref->qual_status, "reference") != 0) {
            snprintf(pt->cr.qual_status, sizeof pt->cr.qual_status, "not_run");
            cJSON_AddStringToObject(q, "status", "not_run");
            cJSON_AddStringToObject(q, "reason", "the reference run of this preset failed");
            continue;
        }
        char dir[4300];
        snprintf(dir, sizeof dir, "%s/%s-r%d/qualification", run_dir, BL_BENCH_MPI_CASE, pt->ranks);
        bl_bench_logf(ctx, "[%s] qualification: %s, %d rank(s) ...", w->id, BL_BENCH_MPI_CASE, pt->ranks);
        launch L;
        make_launch(ctx, pt, dir, &L);
        bl_bench_worker wo;
        bl_error err = {0};
        bl_status st = bl_bench_run_worker_launched(ctx, w, in, &mpi_def, dir, L.argv, L.env, &wo, &err);
        cJSON_AddNumberToObject(q, "worker_wall_s", wo.proc.wall_s);
        cJSON_AddNumberToObject(q, "worker_peak_rss_bytes", (double)wo.proc.peak_rss_bytes);
        const char *status;
        char reason[1200] = "";
        cJSON *stats = NULL;
        if (st) {
            status = "error";
            snprintf(reason, sizeof reason, "%s", err.message);
        } else if (!wo.ok) {
            status = wo.proc.timed_out ? "timeout" : "error";
            failure_reason(&wo, reason, sizeof reason);
            if (wo.proc.timed_out)
                cJSON_AddNumberToObject(q, "censored_at_s", ctx->o->timeout_s);
        } else {
            bl_bench_cmp c;
            if (bl_bench_compare_dirs(ref->ref_out, wo.out_dir, &c, &err)) {
                status = "error";
                snprintf(reason, sizeof reason, "outputs of rank 0 unreadable: %s", err.message);
            } else {
                cJSON_AddItemToObject(q, "comparison", bl_bench_cmp_json(&c, &mpi_def));
                int pass = bl_bench_cmp_passes(&c, &mpi_def);
                status = pass ? "passed" : "failed";
                if (!pass)
                    snprintf(reason, sizeof reason, "%s", !c.spikes_equal ? (c.first_difference[0]
                                                                                 ? c.first_difference
                                                                                 : "spikes differ")
                                                          : !c.counts_equal ? "counts differ"
                                                                            : "final state differs");
                else if (!(stats = read_stats(dir, pt->ranks, reason, sizeof reason)))
                    status = "error";
            }
            discard(ctx, wo.out_dir);
        }
        snprintf(pt->cr.qual_status, sizeof pt->cr.qual_status, "%s", status);
        cJSON_AddStringToObject(q, "status", status);
        if (reason[0])
            cJSON_AddStringToObject(q, "reason", reason);
        cJSON_AddStringToObject(q, "basis", "rank 0's spike events, per-neuron counts and final v, g bit for bit "
                                            "equal to the shiu2024 reference backend's, and a BL_MPI_STATS file "
                                            "from every rank");
        if (stats)
            cJSON_AddItemToObject(q, "mpi_ranks", stats);
        if (wo.timing)
            cJSON_AddItemToObject(q, "worker_report", cJSON_Duplicate(wo.timing, 1));
        if (!strcmp(status, "passed") && m->n_timed < 16)
            m->timed[m->n_timed++] = i;
        bl_bench_logf(ctx, "[%s] qualification: %s, %d rank(s) %s%s%s", w->id, BL_BENCH_MPI_CASE, pt->ranks,
                      status, reason[0] ? ": " : "", reason);
        bl_bench_worker_free(&wo);
    }
}

void bl_bench_mpi_time(bl_bench_ctx *ctx, bl_bench_mpi *m, int k, const bl_bench_workload_def *w,
                       const bl_bench_inputs *in, const bl_bench_case_run *ref, const char *run_dir, int rep,
                       int position, int reversed)
{
    if (!m || k < 0 || k >= m->n_timed)
        return;
    mpi_point *pt = &m->pts[m->timed[k]];
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/%s-r%d/rep%d", run_dir, BL_BENCH_MPI_CASE, pt->ranks, rep);
    launch L;
    make_launch(ctx, pt, dir, &L);
    bl_bench_worker wo;
    bl_error err = {0};
    bl_status st = bl_bench_run_worker_launched(ctx, w, in, &mpi_def, dir, L.argv, L.env, &wo, &err);
    cJSON *s = cJSON_CreateObject();
    cJSON_AddNumberToObject(s, "repetition", rep);
    cJSON_AddNumberToObject(s, "position", position);
    cJSON_AddStringToObject(s, "order", reversed ? "reversed" : "forward");
    cJSON_AddNumberToObject(s, "ranks", pt->ranks);
    const char *status = "ok";
    char reason[1200] = "";
    cJSON *stats = NULL;
    if (st) {
        status = "failed";
        snprintf(reason, sizeof reason, "%s", err.message);
    } else if (!wo.ok) {
        status = wo.proc.timed_out ? "timeout" : "failed";
        failure_reason(&wo, reason, sizeof reason);
    } else {
        bl_bench_cmp c;
        if (bl_bench_compare_dirs(ref->ref_out, wo.out_dir, &c, &err)) {
            status = "failed";
            snprintf(reason, sizeof reason, "outputs of rank 0 unreadable: %s", err.message);
        } else {
            int match = bl_bench_cmp_passes(&c, &mpi_def);
            cJSON_AddBoolToObject(s, "outputs_match_reference", match);
            if (!match) {
                status = "mismatch";
                snprintf(reason, sizeof reason, "outputs differ from the reference: %s",
                         c.first_difference[0] ? c.first_difference : "counts or final state");
            } else if (!(stats = read_stats(dir, pt->ranks, reason, sizeof reason))) {
                status = "failed";
            }
        }
    }
    discard(ctx, wo.out_dir);
    cJSON_AddStringToObject(s, "status", status);
    if (reason[0])
        cJSON_AddStringToObject(s, "reason", reason);
    cJSON *p = bl_bench_process_json(ctx, &wo.proc, s);
    cJSON_AddStringToObject(p, "what", "mpirun and its ranks (wait4 of mpirun)");
    int ok = !strcmp(status, "ok");
    bl_bench_record_sample(ctx, &pt->cr, s, ok ? wo.timing : NULL, &wo.proc);
    if (ok && stats) {
        double sim = m->sim_s_worker > 0 ? m->sim_s_worker : NAN;
        double sum_sent = 0, sum_recv = 0, max_rss = 0, max_exch = 0, windows = 0;
        const cJSON *o;
        int r = 0;
        cJSON_ArrayForEach(o, stats)
        {
            double sent = 0, recv = 0, exch = 0, comp = 0, rss = 0;
            stat_num(o, "bytes_sent", &sent);
            stat_num(o, "bytes_received", &recv);
            stat_num(o, "wall_exchange_s", &exch);
            stat_num(o, "wall_compute_s", &comp);
            stat_num(o, "peak_rss_bytes", &rss);
            if (r == 0)
                stat_num(o, "windows", &windows);
            if (r < pt->ranks) {
                bl_bench_dvec_push(&pt->rk[r].sent, sent / sim);
                bl_bench_dvec_push(&pt->rk[r].recv, recv / sim);
                bl_bench_dvec_push(&pt->rk[r].exch, exch / sim);
                bl_bench_dvec_push(&pt->rk[r].comp, comp / sim);
                bl_bench_dvec_push(&pt->rk[r].rss, rss);
            }
            sum_sent += sent;
            sum_recv += recv;
            max_rss = rss > max_rss ? rss : max_rss;
            max_exch = exch > max_exch ? exch : max_exch;
            r++;
        }
        bl_bench_dvec_push(&pt->sum_sent, sum_sent / sim);
        bl_bench_dvec_push(&pt->sum_recv, sum_recv / sim);
        bl_bench_dvec_push(&pt->windows, windows);
        bl_bench_dvec_push(&pt->max_rss, max_rss);
        bl_bench_dvec_push(&pt->max_exch, max_exch / sim);
        cJSON *x = cJSON_AddObjectToObject(s, "exchange");
        cJSON_AddNumberToObject(x, "simulated_s", m->sim_s_worker);
        cJSON_AddNumberToObject(x, "windows", windows);
        cJSON_AddNumberToObject(x, "bytes_sent_sum_over_ranks", sum_sent);
        cJSON_AddNumberToObject(x, "bytes_received_sum_over_ranks", sum_recv);
        cJSON_AddNumberToObject(x, "peak_rss_max_over_ranks_bytes", max_rss);
        cJSON_AddNumberToObject(x, "exchange_wall_max_over_ranks_s", max_exch);
    }
    if (stats)
        cJSON_AddItemToObject(s, "mpi_ranks", stats);
    if (ok)
        pt->cr.n_ok++;
    else if (!strcmp(status, "timeout"))
        pt->cr.n_timeout++;
    else if (!strcmp(status, "mismatch"))
        pt->cr.n_mismatch++;
    else
        pt->cr.n_failed++;
    cJSON_AddItemToArray(pt->cr.samples, s);
    char label[64];
    snprintf(label, sizeof label, "%s, %d rank(s)", BL_BENCH_MPI_CASE, pt->ranks);
    bl_bench_logf(ctx, "[%s] rep %d/%d %-22s %s%s%s", w->id, rep + 1, ctx->o->repetitions, label, status,
                  reason[0] ? ": " : "", reason);
    bl_bench_worker_free(&wo);
}

/* ---- receipt and table --------------------------------------------------------- */

static const char *point_status(const bl_bench_mpi *m, const mpi_point *pt, char *why, size_t size)
{
    if (!m->selected) {
        why[0] = '\0';
        return "not_selected";
    }
    return bl_bench_case_status(&pt->cr, why, size);
}

static double med(const bl_bench_dvec *d)
{
    return bl_bench_median(d->v, d->n);
}

static cJSON *st_json(const bl_bench_dvec *d)
{
    return bl_bench_stat_json(d->v, d->n);
}

/* {phase: {a_median_s, b_median_s, speedup (= b / a), parallel_efficiency}} or null. */
static cJSON *speedups(const bl_bench_case_run *a, const bl_bench_case_run *b, const char *b_name, double ranks)
{
    if (!a->n_ok || !b || !b->n_ok)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "baseline", b_name);
    const bl_bench_dvec *pa[3] = {&a->first, &a->warm, &a->wall}, *pb[3] = {&b->first, &b->warm, &b->wall};
    const char *names[3] = {"first_execution_s", "warm_execution_s", "process_wall_s"};
    for (int k = 0; k < 3; k++) {
        if (!pa[k]->n || !pb[k]->n)
            continue;
        double ma = med(pa[k]), mb = med(pb[k]);
        cJSON *x = cJSON_AddObjectToObject(o, names[k]);
        cJSON_AddNumberToObject(x, "a_median_s", ma);
        cJSON_AddNumberToObject(x, "b_median_s", mb);
        cJSON_AddNumberToObject(x, "speedup", ma > 0 ? mb / ma : 0);
        cJSON_AddNumberToObject(x, "parallel_efficiency", ma > 0 ? mb / ma / ranks : 0);
    }
    return o;
}

static cJSON *per_rank(const mpi_point *pt, size_t offset)
{
    cJSON *a = cJSON_CreateArray();
    for (int r = 0; pt->rk && r < pt->ranks; r++)
        cJSON_AddItemToArray(a, st_json((const bl_bench_dvec *)((const char *)&pt->rk[r] + offset)));
    return a;
}

static void table(bl_bench_ctx *ctx, const bl_bench_mpi *m, const bl_bench_case_run *cpu, double sim_s)
{
    bl_bench_tablef(ctx, "    strong scaling: %s = mpirun -np R simulate --backend mpi, %d thread(s) per rank, "
                               "shiu2024; speedup = median b / median a of the %s execution\n",
                          BL_BENCH_MPI_CASE, ctx->threads, "warm (else first)");
    if (!m->selected || !m->available) {
        bl_bench_tablef(ctx, "      %s: %s\n\n", m->selected ? "unavailable" : "not selected", m->reason);
        return;
    }
    bl_bench_tablef(ctx, "    %5s %-32s %8s %8s %7s %8s %6s %8s %9s %12s %12s %9s %9s\n", "ranks", "status",
                          "warm_s", "s/sim_s", "vs_R=1", "vs_cpu", "effic", "wall_s", "RSS/rk_MiB",
                          "sent_B/sim_s", "recv_B/sim_s", "win/sim_s", "exch/sim");
    const mpi_point *one = NULL;
    for (int i = 0; i < m->n; i++)
        if (m->pts[i].ranks == 1 && m->pts[i].cr.n_ok)
            one = &m->pts[i];
    for (int i = 0; i < m->n; i++) {
        const mpi_point *pt = &m->pts[i];
        char why[1200];
        const char *status = point_status(m, pt, why, sizeof why);
        char st[64], ws[32] = "-", rtf[32] = "-", v1[32] = "-", vc[32] = "-", eff[32] = "-", wall[32] = "-",
                     rss[32] = "-", sent[32] = "-", recv[32] = "-", win[32] = "-", exch[32] = "-";
        snprintf(st, sizeof st, "%s%s%s", status, pt->cr.n_timeout ? "+censored" : "",
                 pt->oversubscribed ? " (oversub.)" : "");
        const bl_bench_dvec *basis = pt->cr.warm.n ? &pt->cr.warm : &pt->cr.first;
        if (basis->n) {
            double a = med(basis);
            snprintf(ws, sizeof ws, "%.3g", a);
            if (sim_s > 0)
                snprintf(rtf, sizeof rtf, "%.3g", a / sim_s);
            const bl_bench_dvec *b1 = one ? (pt->cr.warm.n ? &one->cr.warm : &one->cr.first) : NULL;
            if (b1 && b1->n && a > 0) {
                snprintf(v1, sizeof v1, "%.3gx", med(b1) / a);
                snprintf(eff, sizeof eff, "%.2f", med(b1) / a / pt->ranks);
            }
            const bl_bench_dvec *bc = cpu && cpu->n_ok ? (pt->cr.warm.n ? &cpu->warm : &cpu->first) : NULL;
            if (bc && bc->n && a > 0)
                snprintf(vc, sizeof vc, "%.3gx", med(bc) / a);
        }
        if (pt->cr.wall.n)
            snprintf(wall, sizeof wall, "%.3g", med(&pt->cr.wall));
        if (pt->max_rss.n)
            snprintf(rss, sizeof rss, "%.0f", med(&pt->max_rss) / 1048576.0);
        if (pt->sum_sent.n) {
            snprintf(sent, sizeof sent, "%.4g", med(&pt->sum_sent));
            snprintf(recv, sizeof recv, "%.4g", med(&pt->sum_recv));
            snprintf(win, sizeof win, "%.4g", m->sim_s_worker > 0 ? med(&pt->windows) / m->sim_s_worker : 0);
            snprintf(exch, sizeof exch, "%.3g", med(&pt->max_exch));
        }
        bl_bench_tablef(ctx, "    %5d %-32s %8s %8s %7s %8s %6s %8s %9s %12s %12s %9s %9s\n", pt->ranks, st,
                              ws, rtf, v1, vc, eff, wall, rss, sent, recv, win, exch);
        if (why[0] && strcmp(status, "measured") != 0)
            bl_bench_tablef(ctx, "      (%.*s)\n", 150, why);
    }
    bl_bench_tablef(ctx, "      (vs_cpu: bl-cpu, one process%s; RSS/rk: largest rank's peak RSS; sent/recv: "
                               "bytes per simulated second summed over ranks; exch/sim: largest rank's exchange "
                               "wall seconds per simulated second)\n\n",
                          cpu && cpu->n_ok ? "" : ", not measured in this run");
}

void bl_bench_mpi_finish(bl_bench_ctx *ctx, bl_bench_mpi *m, const bl_bench_workload_def *w,
                         const bl_bench_inputs *in, const bl_bench_case_run *runs, cJSON *wj)
{
    if (!m) {
        cJSON *sc = cJSON_AddObjectToObject(wj, "scaling");
        cJSON_AddStringToObject(sc, "case", BL_BENCH_MPI_CASE);
        cJSON_AddStringToObject(sc, "status", "failed");
        cJSON_AddStringToObject(sc, "reason", "cannot allocate the scaling state");
        return;
    }
    const bl_bench_case_run *ref = &runs[0], *cpu = NULL;
    for (int i = 0; i < BL_BENCH_N_CASES; i++)
        if (!strcmp(runs[i].def->id, "bl-cpu"))
            cpu = &runs[i];
    double sim_s = bl_bench_sim_seconds(in);
    cJSON *sc = cJSON_AddObjectToObject(wj, "scaling");
    cJSON_AddStringToObject(sc, "case", BL_BENCH_MPI_CASE);
    cJSON_AddStringToObject(sc, "kind", "strong scaling over MPI ranks on this machine (same workload, more ranks)");
    cJSON_AddStringToObject(sc, "status", !m->selected ? "not_selected" : !m->available ? "unavailable" : "completed");
    if (!m->selected || !m->available)
        cJSON_AddStringToObject(sc, "reason", m->reason);
    cJSON_AddStringToObject(sc, "preset", mpi_def.preset);
    cJSON_AddStringToObject(sc, "implementation", mpi_def.implementation);
    cJSON_AddStringToObject(sc, "dtype", mpi_def.dtype);
    cJSON_AddNumberToObject(sc, "threads_per_rank", ctx->threads);
    cJSON_AddNumberToObject(sc, "usable_cpus", usable_cpus());
    cJSON_AddItemToObject(sc, "launcher", launcher_json(ctx));
    cJSON_AddStringToObject(sc, "baseline_single_process", "bl-cpu");
    char why[1200] = "";
    cJSON_AddStringToObject(sc, "baseline_status", cpu && cpu->n_ok ? "measured" : "not measured in this run");
    cJSON_AddNumberToObject(sc, "simulated_s_per_worker", sim_s * w->trials);
    cJSON_AddStringToObject(sc, "bytes_counted",
                            "per window and rank: the spike counts of MPI_Allgather (4 (B*18 + 1) bytes sent, R "
                            "times that received) and the spike ids of MPI_Allgatherv (4 per own spike sent, 4 per "
                            "spike of all ranks received), over every trial of the worker (cold and warm); the "
                            "final-state all-gather after each trial (16 n bytes for shiu2024) and the bank "
                            "agreement MPI_Allreduce are not counted. Per simulated second = counter / "
                            "simulated_s_per_worker");
    cJSON_AddStringToObject(sc, "memory",
                            "peak_rss_per_rank_bytes: each rank's getrusage ru_maxrss at engine teardown (after "
                            "rank 0 wrote the outputs); summary.peak_rss_bytes: wait4 of mpirun, the largest of "
                            "mpirun and any one rank");
    cJSON *pts = cJSON_AddArrayToObject(sc, "points");
    const mpi_point *one = NULL;
    for (int i = 0; i < m->n; i++)
        if (m->pts[i].ranks == 1)
            one = &m->pts[i];
    for (int i = 0; i < m->n; i++) {
        const mpi_point *pt = &m->pts[i];
        const bl_bench_case_run *cr = &pt->cr;
        cJSON *p = cJSON_CreateObject();
        cJSON_AddItemToArray(pts, p);
        cJSON_AddNumberToObject(p, "ranks", pt->ranks);
        cJSON_AddStringToObject(p, "id", BL_BENCH_MPI_CASE);
        cJSON_AddNumberToObject(p, "threads_per_rank", ctx->threads);
        cJSON_AddBoolToObject(p, "oversubscribed", pt->oversubscribed);
        const char *status = point_status(m, pt, why, sizeof why);
        cJSON_AddStringToObject(p, "status", status);
        if (why[0])
            cJSON_AddStringToObject(p, "reason", why);
        cJSON *sum = bl_bench_case_common_json(ctx, cr, p);
        cJSON_AddItemToObject(sum, "peak_rss_max_over_ranks_bytes", st_json(&pt->max_rss));
        cJSON_AddItemToObject(sum, "peak_rss_per_rank_bytes", per_rank(pt, offsetof(rank_vecs, rss)));

        cJSON *x = cJSON_AddObjectToObject(p, "exchange");
        cJSON *bs = cJSON_AddObjectToObject(x, "bytes_sent_per_simulated_s");
        cJSON_AddItemToObject(bs, "sum_over_ranks", st_json(&pt->sum_sent));
        cJSON_AddItemToObject(bs, "per_rank", per_rank(pt, offsetof(rank_vecs, sent)));
        cJSON *br = cJSON_AddObjectToObject(x, "bytes_received_per_simulated_s");
        cJSON_AddItemToObject(br, "sum_over_ranks", st_json(&pt->sum_recv));
        cJSON_AddItemToObject(br, "per_rank", per_rank(pt, offsetof(rank_vecs, recv)));
        cJSON_AddItemToObject(x, "windows_per_worker", st_json(&pt->windows));
        if (pt->windows.n && m->sim_s_worker > 0)
            cJSON_AddNumberToObject(x, "windows_per_simulated_s", med(&pt->windows) / m->sim_s_worker);
        else
            cJSON_AddNullToObject(x, "windows_per_simulated_s");
        cJSON *ex = cJSON_AddObjectToObject(x, "exchange_wall_s_per_simulated_s");
        cJSON_AddItemToObject(ex, "max_over_ranks", st_json(&pt->max_exch));
        cJSON_AddItemToObject(ex, "per_rank", per_rank(pt, offsetof(rank_vecs, exch)));
        cJSON_AddStringToObject(ex, "note", "time inside the two collectives, including waiting for the slowest "
                                            "rank (load imbalance, descheduling), not only transfer");
        cJSON_AddItemToObject(x, "compute_wall_s_per_simulated_s_per_rank", per_rank(pt, offsetof(rank_vecs, comp)));

        cJSON *sp = cJSON_AddObjectToObject(p, "speedup");
        cJSON_AddItemToObject(sp, "vs_1_rank", one && one != pt ? speedups(cr, &one->cr, "bl-mpi, 1 rank", pt->ranks)
                                               : cJSON_CreateNull());
        cJSON_AddItemToObject(sp, "vs_bl_cpu", speedups(cr, cpu, "bl-cpu, one process", pt->ranks));

        bl_bench_case_figures_json(cr, ref, w, in, sim_s, p);
    }
    table(ctx, m, cpu, sim_s);
}

void bl_bench_mpi_free(bl_bench_mpi *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++) {
        mpi_point *pt = &m->pts[i];
        bl_bench_case_run_free(&pt->cr);
        for (int r = 0; pt->rk && r < pt->ranks; r++) {
            bl_bench_dvec_free(&pt->rk[r].sent);
            bl_bench_dvec_free(&pt->rk[r].recv);
            bl_bench_dvec_free(&pt->rk[r].exch);
            bl_bench_dvec_free(&pt->rk[r].comp);
            bl_bench_dvec_free(&pt->rk[r].rss);
        }
        free(pt->rk);
        bl_bench_dvec_free(&pt->sum_sent);
        bl_bench_dvec_free(&pt->sum_recv);
        bl_bench_dvec_free(&pt->windows);
        bl_bench_dvec_free(&pt->max_rss);
        bl_bench_dvec_free(&pt->max_exch);
    }
    free(m->pts);
    free(m);
}
