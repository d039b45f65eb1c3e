/* The benchmark: shared/spec/measurement.md as a command (docs/benchmark.md).
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
#ifndef BRAINLESSLAB_BENCH_H
#define BRAINLESSLAB_BENCH_H

#include "brainlesslab/export.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*bl_bench_log_fn)(void *user, const char *line);

typedef struct bl_bench_options {
    const char *workloads;    /* comma list of w1, w2, w3 (connectome) and r1, r1-sorn,
                                 r1-falandays (reservoirs vs the NumPy oracle); default "w1,w2,w3" */
    int repetitions;          /* fresh-process repetitions per case, >= 3 (default 3) */
    double timeout_s;         /* bound on every worker process (default 600) */
    const char *work_dir;     /* cached inputs and per-run files (default "bench-work") */
    const char *receipt_path; /* JSON receipt (default "bench-receipt.json") */
    int threads;              /* threads requested of every case; 0 = all usable cores */
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

BL_API void bl_bench_options_default(bl_bench_options *o);

/* Run the benchmark and write the receipt. On success *table (may be NULL) is a
 * malloc'd human summary. Cases that fail, time out or are unavailable do not
 * make this fail: they are recorded in the receipt. Errors are reserved for
 * what prevents a receipt (bad options, unwritable work dir or receipt). */
BL_API bl_status bl_bench_run(const bl_bench_options *o, char **table, bl_error *err);

/* Case ids known to the benchmark, NULL-terminated. */
BL_API const char *const *bl_bench_case_ids(void);

#ifdef __cplusplus
}
#endif
#endif
