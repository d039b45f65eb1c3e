/* Benchmark cases, the run context and the receipt builders (bench.c, receipt.c). */
#ifndef BL_BENCH_CASE_H
#define BL_BENCH_CASE_H

#include "bench_impl.h"

typedef enum bl_bench_kind {
    BL_BENCH_OURS,          /* brainlesslab simulate, a backend */
    BL_BENCH_BRIAN2_CPP,    /* bench/peers/brian2_shiu2024.py --target cpp_standalone */
    BL_BENCH_BRIAN2_NUMPY,  /* bench/peers/brian2_shiu2024.py --target numpy */
    BL_BENCH_TORCH          /* bench/peers/torch_phase4c.py */
} bl_bench_kind;

typedef struct bl_bench_case_def {
    const char *id;
    const char *preset;         /* shiu2024 | phase4c: its reference is the reference backend */
    bl_bench_kind kind;
    const char *backend;        /* ours only */
    const char *implementation;
    double state_tol;           /* 0: final state bit for bit */
    const char *state_units;
    const char *dtype;
    int single_thread;          /* given 1 thread whatever --threads says (see its implementation text) */
    /* Ours only: the preset's model written as equations, a shipped model
     * file (relative to the source dir) run from generated C through
     * `simulate --plan` (a plan whose [model] file names it); NULL: the
     * preset's hand-written kernel. Such a case is also compared with the
     * hand-written case of its preset and backend (docs/benchmark.md). */
    const char *model_file;
} bl_bench_case_def;

#define BL_BENCH_N_CASES 8
/* Order: shiu2024 (reference first), then phase4c (reference first, index
 * 4), then bl-cpu-eq (shiu2024 again: its reference is index 0). */
extern const bl_bench_case_def bl_bench_case_defs[BL_BENCH_N_CASES];

typedef struct bl_bench_dvec {
    double *v;
    size_t n, cap;
} bl_bench_dvec;

/* Append a sample (a sample lost to memory exhaustion stays in the receipt's
 * raw samples); free the vector. receipt.c. */
void bl_bench_dvec_push(bl_bench_dvec *d, double x);
void bl_bench_dvec_free(bl_bench_dvec *d);

typedef struct bl_bench_case_run {
    const bl_bench_case_def *def;
    int timed;                  /* selected by --cases */
    int available;
    char reason[1024];          /* why unavailable */
    char qual_status[32];       /* reference passed failed timeout error not_run unavailable */
    cJSON *qualification;
    cJSON *samples;
    bl_bench_dvec load, prepare, build, first, warm, warm_proc_median, wall, rss, live;
    /* process CPU seconds of the same trials (ours: simulate's trial_cpu_s),
     * and the generated code's compile-or-load seconds (model_file cases) */
    bl_bench_dvec first_cpu, warm_cpu, warm_cpu_proc_median, compile;
    cJSON *compile_cold;        /* model_file cases: the qualification worker's compile (empty cache) */
    int n_ok, n_timeout, n_failed, n_mismatch;
    char ref_out[4200];         /* reference cases: outputs of the qualification run */
    uint64_t ref_spikes, ref_syn_events;
    char observed_backend[64];
    int observed_threads;
    cJSON *observed_versions;
} bl_bench_case_run;

typedef struct bl_bench_ctx {
    const bl_bench_options *o;
    char self_exe[4096], python[4096], source_dir[4096], work_dir[4096], runs_dir[4200];
    int threads;                /* given to every case */
    /* --threads LIST (else {threads}): the thread counts of the bank workloads' bl-cpu points */
    int thread_list[BL_BENCH_MAX_THREAD_COUNTS];
    int n_thread_list;
    int sanitized;
    int need_brian2, need_torch;
    int python_ok;
    char python_reason[512], brian2_reason[1024], torch_reason[1024];
    cJSON *brian2_versions, *torch_versions;
    /* bl-mpi (mpi_scaling.c): mpirun, its version, the rank counts */
    int mpi_selected, mpi_ok;
    char mpirun[4096], mpi_version[256], mpi_reason[1024];
    int ranks[16], n_ranks;
    cJSON *receipt;
    char *table;
    size_t table_len, table_cap;
} bl_bench_ctx;

typedef struct bl_bench_worker {
    bl_bench_proc proc;
    int ok;                     /* exited 0 with a timing report of the expected shape */
    char reason[1024];
    cJSON *timing;
    char out_dir[4200];
    char log_path[4200];
} bl_bench_worker;

void bl_bench_logf(bl_bench_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

bl_status bl_bench_run_worker(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                              const bl_bench_case_def *c, const char *dir, bl_bench_worker *wo, bl_error *err);
void bl_bench_worker_free(bl_bench_worker *wo);
/* The same worker, our cases only, started through a launcher (argv prefix,
 * NULL-terminated, e.g. mpirun -np R) with extra environment (may be NULL). */
bl_status bl_bench_run_worker_launched(bl_bench_ctx *ctx, const bl_bench_workload_def *w,
                                       const bl_bench_inputs *in, const bl_bench_case_def *c, const char *dir,
                                       const char *const *launcher, const char *const *launcher_env,
                                       bl_bench_worker *wo, bl_error *err);
/* Our case's worker with an explicit thread count, and with bank = 1 as a
 * trial bank (`simulate --timing --bank`: trial 0 alone, trials 1.. in one
 * engine call; the report must hold bank_trials = trials - 1, bank_s and
 * bank_cpu_s). Peers are refused a bank. */
bl_status bl_bench_run_worker_bank(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                                   const bl_bench_case_def *c, const char *dir, int n_threads, int bank,
                                   bl_bench_worker *wo, bl_error *err);
/* Outputs equal the reference's (bit for bit for ours, within the tolerance for peers). */
int bl_bench_cmp_passes(const bl_bench_cmp *m, const bl_bench_case_def *c);
cJSON *bl_bench_cmp_json(const bl_bench_cmp *m, const bl_bench_case_def *c);

/* receipt.c */
/* Add a timed sample's phases to the case (timing NULL: not ok, nothing pooled). */
void bl_bench_record_sample(bl_bench_ctx *ctx, bl_bench_case_run *cr, cJSON *sample, const cJSON *timing,
                            const bl_bench_proc *proc);
/* A case's status in the receipt (not_selected, unavailable, failed_qualification,
 * qualification_timeout, qualification_error, not_run, measured, timeout,
 * failed), with why (may be "") for the ones that have a reason. */
const char *bl_bench_case_status(const bl_bench_case_run *cr, char *why, size_t size);
/* {"median": work / median, "min": work / max, "max": work / min}: a rate from
 * the seconds in d (0 where a time is not positive). */
cJSON *bl_bench_rate_json(double work, const bl_bench_dvec *d);
/* The code cache of a model_file case's workers: the directory beside the
 * worker's (dir's parent)/code-cache. The qualification run starts it empty
 * (cold compile), the timed workers find it populated (warm). */
void bl_bench_eq_cache_dir(const char *worker_dir, char *buf, size_t size);
/* A worker report's model_codegen.cache_dir under the work directory
 * becomes "<work>/..." (the receipt holds no local paths). */
void bl_bench_mask_cache_dir(const bl_bench_ctx *ctx, cJSON *report);
/* The hand-written case a model_file case is compared with (same preset and
 * backend, no model_file), or NULL. */
const bl_bench_case_run *bl_bench_hand_written(const bl_bench_case_run *runs, const bl_bench_case_run *eq);
/* Simulated seconds of the inputs' steps at the shiu2024 preset's dt (NaN if unknown). */
double bl_bench_sim_seconds(const bl_bench_inputs *in);
/* c.summary with a case's sample counts (n_samples of samples, n_ok,
 * n_timeout, n_failed, n_mismatch; censored_at_s when any timed out);
 * returns it for the caller's statistics. */
cJSON *bl_bench_summary_json(const bl_bench_ctx *ctx, cJSON *c, const cJSON *samples, int n_ok, int n_timeout,
                             int n_failed, int n_mismatch);
/* A new timed sample: its repetition, its position in the repetition's order and that order's direction. */
cJSON *bl_bench_sample_json(int rep, int position, int reversed);
/* A worker process as JSON: wall, user, sys, peak RSS, exit status or signal. */
cJSON *bl_bench_proc_json(const bl_bench_proc *proc);
/* Run `python -c code OUT.json` in a fresh process (env: NULL-terminated
 * extra variables) and parse OUT.json; NULL with reason when it cannot. */
cJSON *bl_bench_probe_python(bl_bench_ctx *ctx, const char *name, const char *code, const char *const *env,
                             char *reason, size_t rsize);
/* A timed sample's worker process: censored_at_s when it timed out, and
 * sample.process (wall, user, sys, peak RSS, exit status or signal). */
cJSON *bl_bench_process_json(const bl_bench_ctx *ctx, const bl_bench_proc *proc, cJSON *sample);
/* What every case's receipt entry c holds (observed backend and threads,
 * versions, qualification, raw samples, summary statistics of each phase);
 * returns the summary object for the caller's own additions. */
cJSON *bl_bench_case_common_json(const bl_bench_ctx *ctx, const bl_bench_case_run *cr, cJSON *c);
/* c.figures: wall per simulated second and neuron-step, synaptic-event and
 * spike rates of the first and warm executions (counts from ref's run). */
void bl_bench_case_figures_json(const bl_bench_case_run *cr, const bl_bench_case_run *ref,
                                const bl_bench_workload_def *w, const bl_bench_inputs *in, double sim_s, cJSON *c);
/* wj.inputs: the connectome, the stimulus and its schedule, duration, steps,
 * trials per worker, shapes (part of bl_bench_finish_workload). */
void bl_bench_inputs_json(const bl_bench_workload_def *w, const bl_bench_inputs *in, cJSON *wj);
/* Workload facts, per-case summaries, figures and ratios into wj. */
void bl_bench_finish_workload(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                              bl_bench_case_run *runs, cJSON *wj);
/* Append the workload's lines to the human table (in NULL: unavailable). */
void bl_bench_table_workload(bl_bench_ctx *ctx, const bl_bench_workload_def *w, const bl_bench_inputs *in,
                             const bl_bench_case_run *runs, const cJSON *wj);
void bl_bench_case_run_free(bl_bench_case_run *cr);
/* Append one formatted piece (at most 2047 characters) to the human table. */
void bl_bench_tablef(bl_bench_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* bank_case.c: a trial bank (w1-bank): the shiu2024 reference once, trials one
 * engine call each (untimed, the qualification reference), then bl-cpu at
 * each thread count of ctx->thread_list as `simulate --timing --bank`,
 * qualified bit for bit against it and timed in fresh workers, alternating
 * order; the receipt's points, speedups against the first thread count. */
void bl_bench_bank_run(bl_bench_ctx *ctx, const bl_bench_workload_def *w, cJSON *wj);

/* mpi_scaling.c: the bl-mpi case, strong scaling over ranks. Each rank count
 * R is its own point: `mpirun -np R brainlesslab simulate --backend mpi`,
 * qualified against the shiu2024 reference like every other case, timed in
 * fresh mpirun launches interleaved with the other cases, with BL_MPI_STATS
 * counters (bytes, windows, exchange time, peak RSS) of every rank. */
/* env.c: the machine and the peers. */
cJSON *bl_bench_environment_json(bl_bench_ctx *ctx);
cJSON *bl_bench_loadavg_json(void);
int bl_bench_affinity_count(void);
void bl_bench_probe_peers(bl_bench_ctx *ctx);

typedef struct bl_bench_mpi bl_bench_mpi;
#define BL_BENCH_MPI_CASE "bl-mpi"
/* Parse --ranks, probe mpirun (when bl-mpi is selected); errors: bad --ranks. */
bl_status bl_bench_mpi_setup(bl_bench_ctx *ctx, bl_error *err);
void bl_bench_mpi_environment(const bl_bench_ctx *ctx, cJSON *env);
void bl_bench_mpi_protocol(const bl_bench_ctx *ctx, cJSON *protocol);
bl_bench_mpi *bl_bench_mpi_begin(bl_bench_ctx *ctx, const bl_bench_workload_def *w);
/* Does bl-mpi need the shiu2024 reference run? */
int bl_bench_mpi_needs_reference(const bl_bench_mpi *m);
void bl_bench_mpi_qualify(bl_bench_ctx *ctx, bl_bench_mpi *m, const bl_bench_workload_def *w,
                          const bl_bench_inputs *in, const bl_bench_case_run *ref, const char *run_dir);
/* Number of qualified points (rank counts) to time; point k of them. */
int bl_bench_mpi_n_timed(const bl_bench_mpi *m);
void bl_bench_mpi_time(bl_bench_ctx *ctx, bl_bench_mpi *m, int k, const bl_bench_workload_def *w,
                       const bl_bench_inputs *in, const bl_bench_case_run *ref, const char *run_dir, int rep,
                       int position, int reversed);
/* wj.scaling and the strong-scaling block of the table (runs: for bl-cpu). */
void bl_bench_mpi_finish(bl_bench_ctx *ctx, bl_bench_mpi *m, const bl_bench_workload_def *w,
                         const bl_bench_inputs *in, const bl_bench_case_run *runs, cJSON *wj);
void bl_bench_mpi_free(bl_bench_mpi *m);

#endif
