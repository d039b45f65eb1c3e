/* The execution-baselines families of `brainlesslab bench` (ode_case.c):
 * ode-rhs, ode-rk4-grad, ssa-bank. */
#ifndef BL_BENCH_ODE_CASE_H
#define BL_BENCH_ODE_CASE_H

#include <cjson/cJSON.h>

#include "bench_case.h"

typedef struct bl_bench_ode_def {
    const char *id, *title, *definition;
    const char *cases[4]; /* the worker's --case values, NULL-ended */
    int warm_calls;       /* warm samples per worker process, after its cold call */
    int kind;             /* 0 ode-rhs, 1 ode-rk4-grad, 2 ssa-bank */
} bl_bench_ode_def;

const bl_bench_ode_def *bl_bench_ode_find(const char *id, int quick);
/* Qualify ours against the NumPy peer per case (bit-identical RHS, the
 * gradient to 1e-13, the SSA banks' means within 5 standard errors of the
 * analytic mean), then time both in fresh processes, alternating. */
void bl_bench_ode_run(bl_bench_ctx *ctx, const bl_bench_ode_def *d, cJSON *wj);

#endif
