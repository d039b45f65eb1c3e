/* A timed reservoir case for `brainlesslab bench` (bench/src/; this is
 * the reservoir half it calls, through the reservoir's private header). The workload and
 * the trajectory hash are defined so that the NumPy peer
 * (tests/oracles/reservoir_numpy.py bench) computes the same hash from the
 * exported bundle and tapes: a timing only counts when the bits agree.
 *
 * Hash (SHA-256): for each frame, for each slot, the N spikes as bytes (0/1);
 * then for each slot the final thresholds (N float64, little-endian),
 * Falandays only the final acts (N float64), then the dense recurrent weights
 * [rows, rows] float64 (0 where there is no link). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"
#include "bench.h"
#include "reservoir/res_impl.h"

#define BENCH_INPUTS 3
#define BENCH_EFFECTORS 2

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Hash of the recorded spikes and the batch's final state. */
static bl_status trajectory_hash(const bl_res_batch *b, bl_res_kind kind, const uint8_t *spikes, uint64_t record,
                                 char hex[65], uint64_t *events, bl_error *err)
{
    const bl_res_state *s0 = bl_res_batch_slot(b, 0);
    const uint32_t rows = s0->rows, n = s0->n;
    const size_t cells = (size_t)rows * rows;
    double *dense = malloc((cells ? cells : 1) * sizeof *dense);
    bl_sha256 *h = dense ? bl_sha256_create() : NULL;
    if (!h) {
        free(dense);
        return bl_fail(err, BL_ERR_NOMEM, "bench case: cannot hash");
    }
    bl_sha256_update(h, spikes, record);
    *events = 0;
    for (size_t k = 0; k < bl_res_batch_size(b); k++) {
        const bl_res_state *x = bl_res_batch_slot(b, k);
        bl_sha256_update(h, x->thr, (size_t)n * sizeof(double));
        if (kind == BL_RES_FALANDAYS)
            bl_sha256_update(h, x->acts, (size_t)n * sizeof(double));
        bl_res_state_dense_weights(x, dense, NULL);
        bl_sha256_update(h, dense, cells * sizeof(double));
        *events += x->events;
    }
    bl_sha256_finish(h, hex);
    free(dense);
    return BL_OK;
}

bl_status bl_res_bench_case(bl_res_kind kind, uint32_t n_units, uint32_t batch, uint32_t frames, int threads,
                            uint64_t seed, uint32_t repeats, const char *export_dir, bl_res_bench_result *out,
                            bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (repeats > BL_RES_BENCH_MAX_WARM)
        return bl_fail(err, BL_ERR_INVALID, "bench case: %u warm repeats (at most %d)", repeats, BL_RES_BENCH_MAX_WARM);
    if (batch < 1 || batch > 65536 || frames < 1 || frames > 10000000)
        return bl_fail(err, BL_ERR_INVALID, "bench case: batch %u (1..65536), frames %u (1..10^7)", batch, frames);
    const uint64_t record = (uint64_t)frames * batch * n_units;
    if (record > ((uint64_t)1 << 32))
        return bl_fail(err, BL_ERR_INVALID, "bench case: %u frames x %u slots x %u units of spikes to keep is too "
                       "many (at most 2^32)", frames, batch, n_units);
    bl_res_params p;
    bl_res_params_default(kind, &p);
    double t0 = now();
    bl_res_state *s = NULL;
    bl_res_batch *b = NULL;
    double *inputs = NULL;
    uint8_t *spikes = NULL;
    bl_status st = bl_res_state_construct(&p, n_units, BENCH_INPUTS, BENCH_EFFECTORS, seed, &s, err);
    const bl_res_state **slots = NULL;
    if (!st) {
        slots = malloc(batch * sizeof *slots);
        if (!slots)
            st = bl_fail(err, BL_ERR_NOMEM, "bench case: cannot allocate %u slots", batch);
        for (uint32_t k = 0; !st && k < batch; k++)
            slots[k] = s;
    }
    if (!st)
        st = bl_res_batch_create(batch, slots, &b, err);
    free(slots);
    double t1 = now();
    if (!st) {
        bl_res_batch_set_threads(b, threads);
        inputs = malloc((size_t)frames * batch * BENCH_INPUTS * sizeof *inputs);
        spikes = malloc(record ? record : 1);
        if (!inputs || !spikes)
            st = bl_fail(err, BL_ERR_NOMEM, "bench case: cannot allocate the tapes");
    }
    /* inputs[t][b][r] = 1 with probability 1/2: counter (t, b*R + r, BENCH_IN, 0). */
    for (uint64_t t = 0; !st && t < frames; t++)
        for (uint64_t k = 0; k < (uint64_t)batch * BENCH_INPUTS; k++)
            inputs[t * batch * BENCH_INPUTS + k] =
                bl_res_uniform(seed, (uint32_t)t, (uint32_t)k, BL_RD_BENCH_IN, 0) < 0.5 ? 1.0 : 0.0;
    double t2 = now();
    if (!st && export_dir) {
        char path[4096];
        if (mkdir(export_dir, 0777) != 0 && errno != EEXIST)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", export_dir, strerror(errno));
        snprintf(path, sizeof path, "%s/bundle", export_dir);
        if (!st)
            st = bl_res_state_save(s, path, err);
        snprintf(path, sizeof path, "%s/inputs.npy", export_dir);
        const uint64_t shape[3] = {frames, batch, BENCH_INPUTS};
        if (!st)
            st = bl_npy_write(path, BL_DTYPE_FLOAT64, 3, shape, inputs, err);
    }
    for (uint32_t rep = 0; !st && rep <= repeats; rep++) {
        if (rep)
            bl_res_batch_reset(b, NULL);
        double t3 = now();
        const size_t per = (size_t)batch * n_units;
        for (uint64_t t = 0; !st && t < frames; t++) {
            st = bl_res_batch_step(b, inputs + t * batch * BENCH_INPUTS, NULL, NULL, err);
            for (uint32_t k = 0; !st && k < batch; k++) {
                const double *x = bl_res_batch_slot(b, k)->spikes;
                uint8_t *dst = spikes + t * per + (size_t)k * n_units;
                for (uint32_t i = 0; i < n_units; i++)
                    dst[i] = x[i] != 0.0;
            }
        }
        double t4 = now();
        char hex[65];
        uint64_t events = 0;
        if (!st)
            st = trajectory_hash(b, kind, spikes, record, hex, &events, err);
        if (!st && rep == 0) {
            out->wall_run_s = t4 - t3;
            memcpy(out->hash, hex, sizeof hex);
            out->synaptic_events = events;
        } else if (!st) {
            out->wall_warm_s[rep - 1] = t4 - t3;
            out->warm = rep;
            if (strcmp(hex, out->hash))
                st = bl_fail(err, BL_ERR_INTERNAL, "bench case: warm run %u gave hash %.16s, the first %.16s", rep, hex,
                             out->hash);
        }
    }
    for (uint64_t k = 0; !st && k < record; k++)
        out->spikes += spikes[k];
    if (!st) {
        out->wall_construct_s = t1 - t0;
        out->wall_tapes_s = t2 - t1;
        out->frames = frames;
        out->batch = batch;
        out->units = n_units;
        out->unit_updates = record;
        out->threads = bl_res_batch_threads(b);
    }
    free(inputs);
    free(spikes);
    bl_res_batch_destroy(b);
    bl_res_state_destroy(s);
    return st;
}
