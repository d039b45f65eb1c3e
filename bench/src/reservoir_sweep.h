/* The reservoir workloads of `brainlesslab bench` (reservoir_sweep.c): the
 * SORN and Falandays nodes over a units x batch grid (r1), or in closed loop
 * with a continuing task (r2), each point qualified
 * against the independent NumPy oracle (tests/oracles/reservoir_numpy.py) by
 * its trajectory SHA-256 and then timed in fresh worker processes. */
#ifndef BL_BENCH_RESERVOIR_SWEEP_H
#define BL_BENCH_RESERVOIR_SWEEP_H

#include <stdint.h>

#include "bench_case.h"

#define BL_BENCH_RES_MAX_UNITS 4
#define BL_BENCH_RES_MAX_BATCH 6

typedef struct bl_bench_res_def {
    const char *id;
    const char *title;
    const char *definition;           /* one paragraph for the receipt */
    const char *nodes[2];             /* "sorn", "falandays" */
    int n_nodes;
    uint32_t units[BL_BENCH_RES_MAX_UNITS];
    uint32_t frames[BL_BENCH_RES_MAX_UNITS]; /* frames of a run at units[i] */
    int n_units;
    uint32_t batch[BL_BENCH_RES_MAX_BATCH];
    int n_batch;
    uint32_t ours_repeat;             /* warm runs per worker of ours (after the cold one) */
    uint32_t peer_repeat;             /* warm runs per worker of the NumPy oracle */
    uint64_t seed;                    /* node construction and input tape (closed loop: the worlds) */
    const char *task;                 /* NULL: the open-loop input tape (r1); "tracking" or "pong": the
                                         closed loop, frames = the trials' horizon in ticks (r2) */
} bl_bench_res_def;

/* The definition (full or quick) of a reservoir workload id, or NULL. */
const bl_bench_res_def *bl_bench_res_find(const char *id, int quick);
/* The known ids, for messages ("r1, r1-sorn, r1-falandays, r2"). */
const char *bl_bench_res_ids(void);
/* Qualify and time every point of the workload into wj (id, title and
 * definition are already there); append its section to the human table. */
void bl_bench_res_run(bl_bench_ctx *ctx, const bl_bench_res_def *d, cJSON *wj);

#endif
