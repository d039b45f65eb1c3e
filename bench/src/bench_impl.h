/* Internals of the benchmark (bench/src/): worker processes, output
 * comparison, workload inputs, statistics. */
#ifndef BL_BENCH_IMPL_H
#define BL_BENCH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "bench.h"
#include "brainlesslab/error.h"

/* ---- worker processes (proc.c) ------------------------------------------ */

typedef struct bl_bench_proc {
    int exited;          /* 1: exited normally with exit_status */
    int exit_status;
    int term_signal;     /* killed by this signal (0: none) */
    int timed_out;       /* 1: killed at the bound */
    double wall_s;       /* fork to reap, seen by the parent */
    double user_s, sys_s;
    long long peak_rss_bytes; /* wait4 ru_maxrss: the worker and its reaped children */
} bl_bench_proc;

/* fork/exec argv[0] with argv, in a new process group, stdin from /dev/null,
 * stdout+stderr to log_path; env_extra ("NAME=VALUE", NULL-terminated, may be
 * NULL) is added to the inherited environment. Killed (the whole group) at
 * timeout_s. Fails only when the process cannot be started. */
bl_status bl_bench_spawn(char *const *argv, const char *const *env_extra, const char *log_path,
                         double timeout_s, bl_bench_proc *out, bl_error *err);
/* One-line description ("exit 1", "signal 9", "timeout at 600 s"). */
void bl_bench_proc_describe(const bl_bench_proc *p, double timeout_s, char *buf, size_t size);
/* The last line of a log file that is not empty (for failure reasons). */
void bl_bench_log_tail(const char *path, char *buf, size_t size);
/* Why a worker process did not exit 0: how it ended (bl_bench_proc_describe),
 * then, unless it timed out, ": " and the tail of its log (when not empty). */
void bl_bench_worker_failure(const bl_bench_proc *p, double timeout_s, const char *log, char *buf, size_t size);

/* Background load (proc.c): k processes that spin on arithmetic (no memory
 * traffic beyond one cache line, no system calls) from start to stop, so that
 * "another process is using a core" is a stated, repeatable condition. They die
 * with the bench (PR_SET_PDEATHSIG) if it dies first. */
#define BL_BENCH_MAX_LOAD 64
typedef struct bl_bench_load {
    int n;
    int pid[BL_BENCH_MAX_LOAD];
    double t0;
} bl_bench_load;

bl_status bl_bench_load_start(bl_bench_load *l, int k, bl_error *err);
/* Kill (SIGKILL) and reap them; the JSON says how long they ran and the CPU
 * seconds each one got (so the receipt shows the load was real). */
cJSON *bl_bench_load_stop(bl_bench_load *l);

/* ---- files (util.c) ----------------------------------------------------- */

bl_status bl_bench_mkdirs(const char *path, bl_error *err);
/* Remove a file or a directory tree (no error when absent). */
bl_status bl_bench_rmtree(const char *path, bl_error *err);
int bl_bench_exists(const char *path);
/* Whole text file, malloc'd and NUL-terminated. */
bl_status bl_bench_read_text(const char *path, char **out, bl_error *err);
double bl_bench_now(void);
/* Is id in the comma-separated list? A NULL or empty list holds everything. */
int bl_bench_listed(const char *list, const char *id);
/* "2026-10-21T12:34:56Z" */
void bl_bench_utc(char *buf, size_t size);

/* ---- statistics (stats.c) ----------------------------------------------- */

/* {"samples": [...], "n": k, "median": m, "min": a, "max": b} (median etc.
 * null for no samples). */
cJSON *bl_bench_stat_json(const double *x, size_t n);
double bl_bench_median(const double *x, size_t n); /* NaN when n == 0 */

/* ---- output comparison (compare.c) --------------------------------------- */

typedef struct bl_bench_cmp {
    int complete;          /* all six files read with expected dtypes */
    int spikes_equal;      /* the three event arrays */
    int counts_equal;
    int state_bitwise;     /* v and g bit for bit */
    double state_max_abs;  /* max |a - b| over v and g (in the preset's units) */
    uint64_t ref_spikes, got_spikes;
    char first_difference[256];
} bl_bench_cmp;

/* Compare a candidate's output directory with the reference's. */
bl_status bl_bench_compare_dirs(const char *ref_dir, const char *got_dir, bl_bench_cmp *out,
                                bl_error *err);
/* Spike totals and synaptic events (sum over spikes of the source's
 * out-degree) of an output directory. */
bl_status bl_bench_count_events(const char *dir, const int64_t *offsets, uint64_t n_neurons,
                                uint64_t *spikes, uint64_t *syn_events, bl_error *err);

/* ---- workloads (workload.c) ---------------------------------------------- */

typedef enum bl_bench_graph { BL_BENCH_GRAPH_SYNTH, BL_BENCH_GRAPH_LARVA } bl_bench_graph;
typedef enum bl_bench_stim {
    BL_BENCH_STIM_TOP_SENSORY,   /* the k "sensory" neurons of largest signed out-strength */
    BL_BENCH_STIM_ALL_SENSORY,   /* every neuron whose cell_type is "sensory" */
    BL_BENCH_STIM_OLFACTORY      /* cell_type "sensory" and modality "olfactory" (larva ORNs) */
} bl_bench_stim;

typedef struct bl_bench_workload_def {
    const char *id;
    const char *title;
    const char *definition;     /* one paragraph for the receipt */
    bl_bench_graph graph;
    uint64_t synth_neurons;     /* 0: synth defaults (FlyWire scale) */
    double synth_mean_degree;   /* 0: default */
    uint64_t synth_seed;
    bl_bench_stim stim;
    int top_k;
    double rate_hz;
    double duration_ms;
    int trials;                 /* per worker process: trial 0 cold, the rest warm */
    uint64_t seed;              /* Philox key of the stimulus draws */
    int bank;                   /* 1: a trial bank (bank_case.c): trial 0 alone, then trials 1.. in one
                                   engine call, bl-cpu at each --threads count */
} bl_bench_workload_def;

/* The definitions (full or quick) of a workload id, or NULL. */
const bl_bench_workload_def *bl_bench_workload_find(const char *id, int quick);

typedef struct bl_bench_inputs {
    char graph_dir[4096];
    char graph_origin[512];     /* how the graph was obtained (no local paths) */
    uint64_t n_neurons, n_edges, n_synapses;
    int synthetic;
    char graph_name[256];
    cJSON *graph_files;         /* the manifest's file sizes and SHA-256 */
    int64_t *offsets;           /* n_neurons + 1 */
    int32_t *stim;              /* stimulated neurons, ascending */
    size_t n_stim;
    uint64_t steps;
    uint64_t n_events;          /* schedule rows */
    char events_path[4096], targets_path[4096];
    char events_sha256[65], targets_sha256[65];
} bl_bench_inputs;

/* Build or reuse the graph under work_dir/inputs (spawning self_exe synth or
 * import), select the stimulated neurons and write the event schedule and the
 * target list into run_dir. */
bl_status bl_bench_inputs_prepare(const bl_bench_workload_def *w, const char *self_exe, const char *source_dir,
                                  const char *work_dir, const char *run_dir, double timeout_s,
                                  bl_bench_inputs *in, bl_error *err);
void bl_bench_inputs_free(bl_bench_inputs *in);

#endif
