/* The benchmark program (bench/src/, not part of the library): the
 * measurement contract of docs/benchmark.md as a command. `brainlesslab bench` links it; nothing under src/
 * includes it. It uses the library only through its headers (and, for the
 * reservoir case, the reservoir's private ones).
 *
 * bl_bench_run qualifies every case of the selected workloads against the
 * reference backend, then times them in fresh worker processes (the
 * brainlesslab binary itself, or a Python peer from bench/peers/), in
 * alternating order over >= 3 process repetitions, and writes a JSON receipt:
 * raw samples per labelled phase, medians and min/max, peak RSS of each
 * worker, censored timeouts, unavailable cases with their reasons, the
 * environment, workload counts and ratios against the peers.
 *
 * The library prints nothing: progress goes to the log callback and the human
 * table is returned as a string. Timing figures are never judged here. */
#ifndef BL_BENCH_H
#define BL_BENCH_H

#include "brainlesslab/export.h"
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/reservoir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*bl_bench_log_fn)(void *user, const char *line);

typedef struct bl_bench_options {
    const char *workloads;    /* comma list of w1, w2, w3 (connectome), w1-bank (trial bank), r1, r1-sorn,
                                 r1-falandays, r2 (reservoirs vs the NumPy oracle); default "w1,w2,w3" */
    int repetitions;          /* fresh-process repetitions per case, >= 3 (default 3) */
    double timeout_s;         /* bound on every worker process (default 600) */
    const char *work_dir;     /* cached inputs and per-run files (default "bench-work") */
    const char *receipt_path; /* JSON receipt (default "bench-receipt.json") */
    int threads;              /* threads requested of every case; 0 = all usable cores */
    const char *threads_list; /* NULL, or a comma list of thread counts, ascending, each >= 1: the first
                                 is `threads` for every case; bank workloads (w1-bank) time bl-cpu at
                                 each of them in the same run */
    int background_load;      /* busy-spinning processes the bench runs beside everything (0..64) */
    int quick;                /* tiny workloads, for the receipt-format test */
    const char *cases;        /* comma list of case ids to time; NULL = all */
    const char *ranks;        /* bl-mpi rank counts, comma list ascending (NULL = 1, 2, 4, ... up to
                                 the usable cores, at least 1,2; --quick: 1,2) */
    const char *self_exe;     /* the brainlesslab binary; NULL = /proc/self/exe */
    const char *python;       /* NULL = /usr/bin/python3 */
    const char *source_dir;   /* holds bench/peers/ and data/; NULL = $BL_SOURCE_DIR,
                                 else the source tree this binary was built from */
    int keep_outputs;         /* keep every worker's output arrays under work_dir/runs */
    int argc;                 /* the command line, recorded in the receipt */
    char **argv;
    bl_bench_log_fn log;      /* progress lines (may be NULL) */
    void *log_user;
} bl_bench_options;

void bl_bench_options_default(bl_bench_options *o);

/* Run the benchmark and write the receipt. On success *table (may be NULL) is a
 * malloc'd human summary. Cases that fail, time out or are unavailable do not
 * make this fail: they are recorded in the receipt. Errors are reserved for
 * what prevents a receipt (bad options, unwritable work dir or receipt). */
bl_status bl_bench_run(const bl_bench_options *o, char **table, bl_error *err);

/* --threads LIST: 1 to BL_BENCH_MAX_THREAD_COUNTS counts in 1..4096, strictly
 * ascending, into out[]; errors name the list. */
#define BL_BENCH_MAX_THREAD_COUNTS 8
bl_status bl_bench_parse_threads(const char *text, int *out, int *n, bl_error *err);

/* Case ids known to the benchmark, NULL-terminated. */
const char *const *bl_bench_case_ids(void);

/* The reservoir half of the benchmark (res_case.c), run by the worker
 * `brainlesslab reservoir bench-case`.
 *
 * One timed reservoir case for `brainlesslab bench`: a node of n units with
 * the default parameters of its kind, built from seed (3 inputs, 2 effectors);
 * batch slots that all start from it, fed a Philox input tape
 * (inputs[t][b][r] = 1 with probability 1/2, else 0; no noise), advanced
 * `frames` frames with `threads` threads (0 = all cores). The trajectory hash
 * (SHA-256, defined in res_case.c and docs/reservoir.md) covers every frame's
 * spikes and the final state, so that the NumPy peer
 * (tests/oracles/reservoir_numpy.py bench) can prove the same bits. With
 * export_dir (created if missing), the initial bundle and the tape are written
 * there first: bundle/ and inputs.npy [T, B, 3]. `repeats` (0..64) more runs
 * from the reset batch give warm samples; every run must reproduce the hash. */
#define BL_RES_BENCH_MAX_WARM 64

typedef struct bl_res_bench_result {
    double wall_construct_s; /* construction of the node and the batch copies */
    double wall_tapes_s;     /* generating the input and noise tapes */
    double wall_run_s;       /* all frames, the first time in this process (cold) */
    double wall_warm_s[BL_RES_BENCH_MAX_WARM]; /* the same frames again, from a reset batch */
    uint32_t warm;           /* how many warm samples (the `repeats` asked for) */
    uint64_t frames, batch, units;
    uint64_t unit_updates;   /* frames * batch * units */
    uint64_t synaptic_events; /* recurrent terms summed (spiking sources x links) */
    uint64_t spikes;
    int threads;             /* used */
    char hash[65];
    double outcome_mean;     /* closed loop: the task's outcome, mean over the slots (information only) */
    uint32_t trials_failed;  /* closed loop: slots whose trial failed */
} bl_res_bench_result;

bl_status bl_res_bench_case(bl_res_kind kind, uint32_t n_units, uint32_t batch, uint32_t frames,
                            int threads, uint64_t seed, uint32_t repeats, const char *export_dir,
                            bl_res_bench_result *out, bl_error *err);

/* The closed-loop case: the same node (default parameters, built from seed)
 * with the inputs and effectors of a continuing task (tracking or pong, its
 * default options, one node frame a tick, input gain 1), batch slots each
 * running one trial of `horizon` ticks in its own world (slot k's world seed:
 * Philox(key = seed, counter (k, 0, 201, 0)), word0 | word1 << 32), as the
 * evaluation runs reservoir trials. The hash is the open-loop one (spikes of
 * every tick and slot, then each slot's final node state) followed by each
 * slot's task result: outcome and physical[8] (float64 LE), then ticks,
 * scored, hits, misses, finite (uint32 LE). export_dir gets bundle/ and
 * task.json (task, horizon, world seeds) for the NumPy peer, which runs the
 * same trials with tests/oracles/tasks_numpy.py. frames = horizon. */
bl_status bl_res_bench_task_case(bl_res_kind kind, uint32_t n_units, uint32_t batch, const char *task,
                                 uint32_t horizon, int threads, uint64_t seed, uint32_t repeats,
                                 const char *export_dir, bl_res_bench_result *out, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
