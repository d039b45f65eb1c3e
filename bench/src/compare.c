/* Qualification: a candidate's outputs against the reference backend's, in the
 * layout of `brainlesslab simulate` (spikes_trial/step/neuron.npy int32, counts.npy
 * int32 [T,N], v.npy and g.npy [T,N] in the preset's dtype). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_impl.h"
#include "brainlesslab/npy.h"

enum { F_TRIAL, F_STEP, F_NEURON, F_COUNTS, F_V, F_G, N_FILES };
static const char *const file_names[N_FILES] = {"spikes_trial.npy", "spikes_step.npy", "spikes_neuron.npy",
                                                "counts.npy", "v.npy", "g.npy"};

static bl_status read_all(const char *dir, bl_npy_array a[N_FILES], bl_error *err)
{
    memset(a, 0, N_FILES * sizeof *a);
    char path[4096];
    for (int i = 0; i < N_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, file_names[i]);
        bl_status st = i < F_V ? bl_npy_read_expect(path, BL_DTYPE_INT32, i == F_COUNTS ? 2 : 1, &a[i], err)
                               : bl_npy_read(path, &a[i], err);
        if (!st && i >= F_V && ((a[i].dtype != BL_DTYPE_FLOAT32 && a[i].dtype != BL_DTYPE_FLOAT64) ||
                                a[i].ndim != 2))
            st = bl_fail(err, BL_ERR_FORMAT, "%s: expected a 2-d float32 or float64 array", path);
        if (st) {
            for (int j = 0; j <= i; j++)
                bl_npy_free(&a[j]);
            return st;
        }
    }
    return BL_OK;
}

static void free_all(bl_npy_array a[N_FILES])
{
    for (int i = 0; i < N_FILES; i++)
        bl_npy_free(&a[i]);
}

/* memcmp that accepts empty (possibly NULL) buffers */
static int eq_bytes(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

static int same_shape(const bl_npy_array *x, const bl_npy_array *y)
{
    if (x->dtype != y->dtype || x->ndim != y->ndim)
        return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != y->shape[d])
            return 0;
    return 1;
}

bl_status bl_bench_compare_dirs(const char *ref_dir, const char *got_dir, bl_bench_cmp *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_npy_array r[N_FILES], g[N_FILES];
    bl_status st = read_all(ref_dir, r, err);
    if (st)
        return st;
    st = read_all(got_dir, g, err);
    if (st) {
        free_all(r);
        return st;
    }
    out->complete = 1;
    out->ref_spikes = r[F_NEURON].count;
    out->got_spikes = g[F_NEURON].count;
    out->spikes_equal = 1;
    for (int i = F_TRIAL; i <= F_NEURON; i++)
        if (!same_shape(&r[i], &g[i]) || !eq_bytes(r[i].data, g[i].data, r[i].count * 4))
            out->spikes_equal = 0;
    if (!out->spikes_equal) {
        const int32_t *rt = r[F_TRIAL].data, *rs = r[F_STEP].data, *rn = r[F_NEURON].data;
        const int32_t *gt = g[F_TRIAL].data, *gs = g[F_STEP].data, *gn = g[F_NEURON].data;
        uint64_t m = r[F_NEURON].count < g[F_NEURON].count ? r[F_NEURON].count : g[F_NEURON].count;
        int lens_ok = r[F_TRIAL].count == r[F_NEURON].count && r[F_STEP].count == r[F_NEURON].count &&
                      g[F_TRIAL].count == g[F_NEURON].count && g[F_STEP].count == g[F_NEURON].count;
        uint64_t i = 0;
        while (lens_ok && i < m && rt[i] == gt[i] && rs[i] == gs[i] && rn[i] == gn[i])
            i++;
        if (!lens_ok)
            snprintf(out->first_difference, sizeof out->first_difference,
                     "event arrays of unequal lengths within one output");
        else if (i < m)
            snprintf(out->first_difference, sizeof out->first_difference,
                     "event #%llu: reference (trial,step,neuron)=(%d,%d,%d), candidate (%d,%d,%d)",
                     (unsigned long long)i, rt[i], rs[i], rn[i], gt[i], gs[i], gn[i]);
        else
            snprintf(out->first_difference, sizeof out->first_difference,
                     "%llu reference events, %llu candidate events, equal up to the shorter",
                     (unsigned long long)r[F_NEURON].count, (unsigned long long)g[F_NEURON].count);
    }
    out->counts_equal = same_shape(&r[F_COUNTS], &g[F_COUNTS]) &&
                        eq_bytes(r[F_COUNTS].data, g[F_COUNTS].data, r[F_COUNTS].count * 4);
    out->state_bitwise = 1;
    out->state_max_abs = 0;
    for (int i = F_V; i <= F_G; i++) {
        if (!same_shape(&r[i], &g[i])) {
            out->state_bitwise = 0;
            out->state_max_abs = INFINITY;
            continue;
        }
        size_t es = bl_dtype_size(r[i].dtype);
        if (!eq_bytes(r[i].data, g[i].data, r[i].count * es))
            out->state_bitwise = 0;
        for (uint64_t k = 0; k < r[i].count; k++) {
            double a, b;
            if (r[i].dtype == BL_DTYPE_FLOAT32) {
                a = ((const float *)r[i].data)[k];
                b = ((const float *)g[i].data)[k];
            } else {
                a = ((const double *)r[i].data)[k];
                b = ((const double *)g[i].data)[k];
            }
            double d = fabs(a - b);
            if (d != d)
                d = INFINITY; /* NaN on either side */
            if (d > out->state_max_abs)
                out->state_max_abs = d;
        }
    }
    free_all(r);
    free_all(g);
    return BL_OK;
}

bl_status bl_bench_count_events(const char *dir, const int64_t *offsets, uint64_t n_neurons, uint64_t *spikes,
                                uint64_t *syn_events, bl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/spikes_neuron.npy", dir);
    bl_npy_array a;
    bl_status st = bl_npy_read_expect(path, BL_DTYPE_INT32, 1, &a, err);
    if (st)
        return st;
    const int32_t *n = a.data;
    uint64_t ev = 0;
    for (uint64_t i = 0; i < a.count; i++) {
        if (n[i] < 0 || (uint64_t)n[i] >= n_neurons) {
            bl_npy_free(&a);
            return bl_fail(err, BL_ERR_INVALID, "%s: index %llu: neuron %d outside 0..%llu", path,
                           (unsigned long long)i, n[i], (unsigned long long)(n_neurons - 1));
        }
        ev += (uint64_t)(offsets[n[i] + 1] - offsets[n[i]]);
    }
    *spikes = a.count;
    *syn_events = ev;
    bl_npy_free(&a);
    return BL_OK;
}
