/* The import workloads of `brainlesslab bench` (import_case.c). */
#ifndef BL_BENCH_IMPORT_CASE_H
#define BL_BENCH_IMPORT_CASE_H

#include <cjson/cJSON.h>

#include "bench_case.h"

typedef struct bl_bench_import_def {
    const char *id, *title, *definition;
    const char *kind; /* "flywire" or "malecns" */
    long neurons, rows;
    double target_s, target_gb;
} bl_bench_import_def;

const bl_bench_import_def *bl_bench_import_find(const char *id, int quick);
const char *bl_bench_import_ids(void);
/* Generate the inputs (once), then import them in fresh processes, timed. */
void bl_bench_import_run(bl_bench_ctx *ctx, const bl_bench_import_def *d, cJSON *wj);

#endif
