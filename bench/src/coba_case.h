/* The COBA workload of `brainlesslab bench` (coba_case.c): the Vogels-Abbott
 * network as an equation model, ours against Brian2 C++ standalone. */
#ifndef BL_BENCH_COBA_CASE_H
#define BL_BENCH_COBA_CASE_H

#include <cjson/cJSON.h>

#include "bench_case.h"

typedef struct bl_bench_coba_def {
    const char *id, *title, *definition;
    double duration_ms;
    int trials;          /* per worker: trial 0 cold, the others warm */
    double target_ratio; /* Brian2's warm execution over ours (issue 23: 5) */
} bl_bench_coba_def;

const bl_bench_coba_def *bl_bench_coba_find(const char *id, int quick);
/* Make (once, cached under WORK/inputs) the network with
 * bench/peers/coba_network.py, qualify (our reference backend is the
 * reference; our cpu run byte for byte equal to it; Brian2's spike train and
 * counts equal to ours, its final v within 1e-12 V, the first divergence
 * reported), then time ours (cpu) and Brian2 in fresh processes, alternating. */
void bl_bench_coba_run(bl_bench_ctx *ctx, const bl_bench_coba_def *d, cJSON *wj);

#endif
