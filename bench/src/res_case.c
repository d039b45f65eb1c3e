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
#include "tasks/task_ops.h"

#define BENCH_INPUTS 3
#define BENCH_EFFECTORS 2

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Hash of the recorded spikes and the batch's final state, then `extra`
 * (the closed loop's task results; NULL for the open-loop case). */
static bl_status trajectory_hash(const bl_res_batch *b, bl_res_kind kind, const uint8_t *spikes, uint64_t record,
                                 const void *extra, size_t extra_len, char hex[65], uint64_t *events, bl_error *err)
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
    if (extra_len)
        bl_sha256_update(h, extra, extra_len);
    bl_sha256_finish(h, hex);
    free(dense);
    return BL_OK;
}

/* One repetition's timing and hash: the first sets the hash, every warm one
 * must reproduce it (a kernel that is not deterministic fails the case). */
static bl_status note_repetition(bl_res_bench_result *out, uint32_t rep, double secs, const char *hex,
                                 uint64_t events, bl_error *err)
{
    if (rep == 0) {
        out->wall_run_s = secs;
        memcpy(out->hash, hex, sizeof out->hash);
        out->synaptic_events = events;
        return BL_OK;
    }
    out->wall_warm_s[rep - 1] = secs;
    out->warm = rep;
    if (strcmp(hex, out->hash))
        return bl_fail(err, BL_ERR_INTERNAL, "bench case: warm run %u gave hash %.16s, the first %.16s", rep, hex,
                       out->hash);
    return BL_OK;
}

/* What every case reports once its repetitions agree. */
static void note_totals(bl_res_bench_result *out, const uint8_t *spikes, uint64_t record, double construct_s,
                        double tapes_s, uint32_t frames, uint32_t batch, uint32_t n_units, const bl_res_batch *b)
{
    for (uint64_t k = 0; k < record; k++)
        out->spikes += spikes[k];
    out->wall_construct_s = construct_s;
    out->wall_tapes_s = tapes_s;
    out->frames = frames;
    out->batch = batch;
    out->units = n_units;
    out->unit_updates = record;
    out->threads = bl_res_batch_threads(b);
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
            st = trajectory_hash(b, kind, spikes, record, NULL, 0, hex, &events, err);
        if (!st)
            st = note_repetition(out, rep, t4 - t3, hex, events, err);
    }
    if (!st) {
        note_totals(out, spikes, record, t1 - t0, t2 - t1, frames, batch, n_units, b);
    }
    free(inputs);
    free(spikes);
    bl_res_batch_destroy(b);
    bl_res_state_destroy(s);
    return st;
}

/* ---- the closed loop: a continuing task drives every slot ---- */

/* Counter domain of the slots' world seeds (bench only: no library stream uses it). */
#define BENCH_WORLD_DOMAIN 201

/* Slot k's world seed: Philox(key = seed, counter (k, 0, 201, 0)), word0 | word1 << 32. */
static uint64_t bench_world_seed(uint64_t seed, uint32_t k)
{
    uint32_t w[4];
    bl_res_philox(seed, k, 0, BENCH_WORLD_DOMAIN, 0, w);
    return (uint64_t)w[0] | ((uint64_t)w[1] << 32);
}

/* Per slot, after the node's final state: outcome and physical[8] (float64
 * LE), then ticks, scored, hits, misses, finite (uint32 LE). */
#define TASK_RESULT_BYTES (9 * 8 + 5 * 4)

static void put_f64(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    for (int k = 0; k < 8; k++)
        p[k] = (uint8_t)(u >> (8 * k));
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

static bl_status write_task_json(const char *dir, const char *task, uint32_t horizon, const uint64_t *seeds,
                                 uint32_t batch, bl_error *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/task.json", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "{\"task\": \"%s\", \"options\": {}, \"horizon\": %u, \"warmup\": 0, \"input_gain\": 1.0, "
               "\"world_seed_rule\": \"philox(key = seed, counter (slot, 0, %d, 0)): word0 | word1 << 32\", "
               "\"world_seeds\": [",
            task, horizon, BENCH_WORLD_DOMAIN);
    for (uint32_t k = 0; k < batch; k++)
        fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)seeds[k]);
    fprintf(f, "]}\n");
    if (fclose(f) != 0)
        return bl_fail(err, BL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return BL_OK;
}

bl_status bl_res_bench_task_case(bl_res_kind kind, uint32_t n_units, uint32_t batch, const char *task_name,
                                 uint32_t horizon, int threads, uint64_t seed, uint32_t repeats,
                                 const char *export_dir, bl_res_bench_result *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_task_kind task;
    if (bl_task_parse(task_name, &task) || (task != BL_TASK_TRACKING && task != BL_TASK_PONG))
        return bl_fail(err, BL_ERR_INVALID, "bench case: task \"%.64s\" is not tracking or pong (the continuing "
                       "tasks with one node frame a tick)", task_name);
    if (repeats > BL_RES_BENCH_MAX_WARM)
        return bl_fail(err, BL_ERR_INVALID, "bench case: %u warm repeats (at most %d)", repeats, BL_RES_BENCH_MAX_WARM);
    if (batch < 1 || batch > 65536 || horizon < 1 || horizon > 10000000)
        return bl_fail(err, BL_ERR_INVALID, "bench case: batch %u (1..65536), horizon %u (1..10^7)", batch, horizon);
    const uint64_t record = (uint64_t)horizon * batch * n_units;
    if (record > ((uint64_t)1 << 32))
        return bl_fail(err, BL_ERR_INVALID, "bench case: %u ticks x %u slots x %u units of spikes to keep is too "
                       "many (at most 2^32)", horizon, batch, n_units);
    bl_task_options to;
    bl_task_defaults(task, &to);
    bl_task_definition def;
    bl_task_definition_of(&to, &def);
    const bl_task_ops *ops = bl_task_ops_of(task);
    const uint32_t R = def.n_inputs;
    bl_res_params p;
    bl_res_params_default(kind, &p);
    double t0 = now();
    bl_res_state *s = NULL;
    bl_res_batch *b = NULL;
    const bl_res_state **slots = NULL;
    bl_task_world *worlds = calloc(batch, sizeof *worlds);
    bl_task_state *states = calloc(batch, sizeof *states);
    uint64_t *wseeds = calloc(batch, sizeof *wseeds);
    uint8_t *active = calloc(batch, 1);
    uint8_t *results = calloc(batch, TASK_RESULT_BYTES);
    double *inputs = calloc((size_t)batch * R, sizeof *inputs);
    uint8_t *spikes = malloc(record ? record : 1);
    uint32_t n_worlds = 0;
    bl_status st = worlds && states && wseeds && active && results && inputs && spikes
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "bench case: cannot allocate %u slots", batch);
    if (!st)
        st = bl_res_state_construct(&p, n_units, R, def.n_effectors, seed, &s, err);
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
    /* The worlds (tracking: a start state; pong: the serves) are the "tapes". */
    for (uint32_t k = 0; !st && k < batch; k++) {
        wseeds[k] = bench_world_seed(seed, k);
        worlds[k].kind = task;
        bl_rng_seed ws;
        memset(&ws, 0, sizeof ws);
        ws.scheme = BL_RNG_BL_PHILOX_V1;
        ws.u64 = wseeds[k];
        st = ops->world(&to, &ws, horizon, &worlds[k], err);
        if (!st)
            n_worlds = k + 1;
    }
    double t2 = now();
    if (!st)
        bl_res_batch_set_threads(b, threads);
    if (!st && export_dir) {
        char path[4096];
        if (mkdir(export_dir, 0777) != 0 && errno != EEXIST)
            st = bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", export_dir, strerror(errno));
        snprintf(path, sizeof path, "%s/bundle", export_dir);
        if (!st)
            st = bl_res_state_save(s, path, err);
        if (!st)
            st = write_task_json(export_dir, task_name, horizon, wseeds, batch, err);
    }
    double outcome_sum = 0.0;
    uint32_t failed = 0;
    for (uint32_t rep = 0; !st && rep <= repeats; rep++) {
        if (rep)
            bl_res_batch_reset(b, NULL);
        for (uint32_t k = 0; k < batch; k++) {
            bl_task_state_free(&states[k]);
            if (!st)
                st = bl_task_state_init(&worlds[k], &states[k], err);
            active[k] = 1;
        }
        double t3 = now();
        const size_t per = (size_t)batch * n_units;
        /* As the evaluation runs a reservoir trial (src/experiment/res_evaluate.c):
         * encode -> step -> accumulate, then advance; a slot leaves the batch when
         * its trial is over or has failed. Every tick records every slot's spikes. */
        for (uint32_t t = 0; !st && t < horizon; t++) {
            for (uint32_t k = 0; k < batch; k++) {
                double *u = inputs + (size_t)k * R;
                if (active[k])
                    ops->encode(&worlds[k], &states[k], 1, u);
                else
                    memset(u, 0, R * sizeof *u);
            }
            st = bl_res_batch_step(b, inputs, NULL, active, err);
            for (uint32_t k = 0; !st && k < batch; k++) {
                const bl_res_state *x = bl_res_batch_slot(b, k);
                uint8_t *dst = spikes + t * per + (size_t)k * n_units;
                for (uint32_t i = 0; i < n_units; i++)
                    dst[i] = x->spikes[i] != 0.0;
                if (!active[k])
                    continue;
                if (!x->finite)
                    states[k].finite = 0;
                else
                    bl_task_accumulate(&worlds[k], &states[k], x->effectors, 1);
                bl_task_advance(&worlds[k], &states[k], 0);
                active[k] = states[k].finite && !states[k].done && states[k].ticks < horizon;
            }
        }
        double t4 = now();
        outcome_sum = 0.0;
        failed = 0;
        for (uint32_t k = 0; k < batch; k++) {
            const bl_task_state *ts = &states[k];
            uint8_t *r = results + (size_t)k * TASK_RESULT_BYTES;
            put_f64(r, ts->outcome);
            for (int q = 0; q < 8; q++)
                put_f64(r + 8 + 8 * q, ts->physical[q]);
            put_u32(r + 72, ts->ticks);
            put_u32(r + 76, ts->scored);
            put_u32(r + 80, ts->hits);
            put_u32(r + 84, ts->misses);
            put_u32(r + 88, (uint32_t)(ts->finite != 0));
            outcome_sum += ts->outcome;
            failed += !ts->finite;
        }
        char hex[65];
        uint64_t events = 0;
        if (!st)
            st = trajectory_hash(b, kind, spikes, record, results, (size_t)batch * TASK_RESULT_BYTES, hex, &events,
                                 err);
        if (!st)
            st = note_repetition(out, rep, t4 - t3, hex, events, err);
    }
    if (!st) {
        note_totals(out, spikes, record, t1 - t0, t2 - t1, horizon, batch, n_units, b);
        out->outcome_mean = outcome_sum / batch;
        out->trials_failed = failed;
    }
    for (uint32_t k = 0; k < batch && states; k++)
        bl_task_state_free(&states[k]);
    for (uint32_t k = 0; k < n_worlds; k++)
        bl_task_world_free(&worlds[k]);
    free(worlds);
    free(states);
    free(wseeds);
    free(active);
    free(results);
    free(inputs);
    free(spikes);
    bl_res_batch_destroy(b);
    bl_res_state_destroy(s);
    return st;
}
