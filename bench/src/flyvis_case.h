/* The flyvis-gradient workload of `brainlesslab bench` (flyvis_case.c). */
#ifndef BL_BENCH_FLYVIS_CASE_H
#define BL_BENCH_FLYVIS_CASE_H

#include <cjson/cJSON.h>

#include "bench_case.h"

typedef struct bl_bench_flyvis_def {
    const char *id, *title, *definition;
    int extent, steps, warm_calls; /* warm calls per worker process, after its cold one */
    double target_ratio;           /* PyTorch warm time / ours */
} bl_bench_flyvis_def;

const bl_bench_flyvis_def *bl_bench_flyvis_find(const char *id, int quick);
/* Qualify ours against the PyTorch peer (same trajectory bit for bit, same
 * gradients to 1e-11), then time both in fresh processes, alternating. */
void bl_bench_flyvis_run(bl_bench_ctx *ctx, const bl_bench_flyvis_def *d, cJSON *wj);

#endif
