/* Explicit replay: one state driven by explicit input and noise tapes, every
 * frame kept. This is how an external reference trajectory (the NumPy oracle,
 * an archived run) is reproduced: the same bundle, the same tapes, the same
 * per-frame values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "reservoir/res_impl.h"
#include "reservoir/res_kind.h"

void bl_res_trajectory_free(bl_res_trajectory *t)
{
    if (!t)
        return;
    free(t->spikes);
    free(t->margins);
    free(t->thresholds);
    free(t->acts);
    free(t->errors);
    free(t->effectors);
    free(t->finite);
    memset(t, 0, sizeof *t);
}

bl_status bl_res_replay(bl_res_state *s, uint64_t frames, const double *inputs, const double *noise,
                        uint64_t freeze_weights_at, uint64_t freeze_plasticity_at, bl_res_trajectory *out,
                        bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (frames < 1 || frames > UINT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "replay: %llu frames (1..%u)", (unsigned long long)frames, UINT32_MAX);
    if (!inputs)
        return bl_fail(err, BL_ERR_INVALID, "replay: no input tape");
    const size_t n = s->n, e = s->e;
    if (frames > SIZE_MAX / 8 / (n > e ? n : e))
        return bl_fail(err, BL_ERR_NOMEM, "replay: %llu frames x %zu units is too large",
                       (unsigned long long)frames, n);
    const int fal = s->p.kind == BL_RES_FALANDAYS;
    out->frames = frames;
    out->n = (uint32_t)n;
    out->e = (uint32_t)e;
    out->spikes = malloc(frames * n);
    out->margins = malloc(frames * n * sizeof(double));
    out->thresholds = malloc(frames * n * sizeof(double));
    out->effectors = malloc(frames * e * sizeof(double));
    out->finite = malloc(frames);
    if (fal) {
        out->acts = malloc(frames * n * sizeof(double));
        out->errors = malloc(frames * n * sizeof(double));
    }
    if (!out->spikes || !out->margins || !out->thresholds || !out->effectors || !out->finite ||
        (fal && (!out->acts || !out->errors))) {
        bl_res_trajectory_free(out);
        return bl_fail(err, BL_ERR_NOMEM, "replay: cannot allocate %llu frames of %zu units",
                       (unsigned long long)frames, n);
    }
    for (uint64_t t = 0; t < frames; t++) {
        if (freeze_weights_at == t + 1)
            bl_res_state_freeze_weights(s);
        if (freeze_plasticity_at == t + 1)
            bl_res_state_freeze_plasticity(s);
        bl_status st = bl_res_state_step(s, inputs + t * s->r, noise ? noise + t * n : NULL, err);
        if (st) {
            bl_res_trajectory_free(out);
            return st;
        }
        for (size_t i = 0; i < n; i++)
            out->spikes[t * n + i] = s->spikes[i] != 0.0;
        memcpy(out->margins + t * n, s->margins, n * sizeof(double));
        memcpy(out->thresholds + t * n, s->thr, n * sizeof(double));
        memcpy(out->effectors + t * e, s->effectors, e * sizeof(double));
        if (fal) {
            memcpy(out->acts + t * n, s->acts, n * sizeof(double));
            memcpy(out->errors + t * n, s->errors, n * sizeof(double));
        }
        out->finite[t] = (uint8_t)s->finite;
    }
    return BL_OK;
}

static bl_status put(const char *dir, const char *name, bl_dtype dt, uint64_t d0, uint64_t d1, const void *data,
                     bl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const uint64_t shape[2] = {d0, d1};
    return bl_npy_write(path, dt, d1 ? 2 : 1, shape, data, err);
}

bl_status bl_res_trajectory_write(const bl_res_trajectory *t, bl_res_kind kind, const char *dir, bl_error *err)
{
    const bl_res_kind_ops *k = bl_res_kind_of(kind);
    if (!k)
        return bl_fail(err, BL_ERR_INVALID, "node kind %d is not in the node-kind table", (int)kind);
    bl_status st;
    if ((st = put(dir, "spikes.npy", BL_DTYPE_UINT8, t->frames, t->n, t->spikes, err)) ||
        (st = put(dir, "margins.npy", BL_DTYPE_FLOAT64, t->frames, t->n, t->margins, err)) ||
        (st = put(dir, k->threshold_trace, BL_DTYPE_FLOAT64, t->frames, t->n, t->thresholds, err)) ||
        (st = put(dir, "effectors.npy", BL_DTYPE_FLOAT64, t->frames, t->e, t->effectors, err)) ||
        (st = put(dir, "finite.npy", BL_DTYPE_UINT8, t->frames, 0, t->finite, err)))
        return st;
    if (k->unit_traces &&
        ((st = put(dir, "acts.npy", BL_DTYPE_FLOAT64, t->frames, t->n, t->acts, err)) ||
         (st = put(dir, "errors.npy", BL_DTYPE_FLOAT64, t->frames, t->n, t->errors, err))))
        return st;
    return BL_OK;
}
