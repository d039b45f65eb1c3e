/* The diagnostic ridge probe (include/brainlesslab/probe.h). The linear
 * solve is GSL's LU with partial pivoting (the method of NumPy's solve), so
 * the NumPy oracle agrees to rounding; sums run in ascending trial order. */
#include "brainlesslab/probe.h"

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/seed.h"

void bl_probe_fit_free(bl_probe_fit *f)
{
    if (!f)
        return;
    free(f->weights);
    free(f->centre);
    free(f->scale);
    free(f->predictions);
    memset(f, 0, sizeof *f);
}

void bl_probe_permutation(uint64_t seed, uint32_t domain, uint32_t *order, size_t n)
{
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)bl_stream_integer(seed, (uint32_t)i, domain, 0, (int64_t)i);
        uint32_t v = order[i];
        order[i] = order[j];
        order[j] = v;
    }
}

bl_status bl_probe_ridge(const double *x, const int *labels, size_t n, size_t f, const uint32_t *fit, size_t n_fit,
                         const uint32_t *val, size_t n_val, const double *grid, size_t n_grid, bl_probe_fit *out,
                         bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!n || !f || n_fit < 2 || !n_val || !n_grid || f > 65536)
        return bl_fail(err, BL_ERR_INVALID, "probe: needs trials, features, two fit trials and a lambda grid");
    for (size_t k = 0; k < n_fit; k++)
        if (fit[k] >= n)
            return bl_fail(err, BL_ERR_INVALID, "probe: fit index %u out of range", fit[k]);
    for (size_t k = 0; k < n_val; k++)
        if (val[k] >= n)
            return bl_fail(err, BL_ERR_INVALID, "probe: validation index %u out of range", val[k]);
    double *s = malloc(n * f * sizeof *s), *gram = malloc(f * f * sizeof *gram), *a = malloc(f * f * sizeof *a);
    double *rhs = malloc(f * sizeof *rhs), *w = malloc(f * sizeof *w), *t = malloc(n_fit * sizeof *t);
    int *pred = malloc(n * sizeof *pred);
    out->weights = malloc(f * sizeof *out->weights);
    out->centre = calloc(f, sizeof *out->centre);
    out->scale = calloc(f, sizeof *out->scale);
    out->predictions = malloc(n * sizeof *out->predictions);
    gsl_permutation *perm = gsl_permutation_alloc(f);
    bl_status st = BL_OK;
    if (!s || !gram || !a || !rhs || !w || !t || !pred || !out->weights || !out->centre || !out->scale ||
        !out->predictions || !perm) {
        st = bl_fail(err, BL_ERR_NOMEM, "probe: cannot allocate %zu x %zu", n, f);
        goto done;
    }
    out->n_features = f;
    out->n_trials = n;
    /* Standardise with the fit trials' mean and population deviation. */
    for (size_t j = 0; j < f; j++) {
        double sum = 0.0;
        for (size_t k = 0; k < n_fit; k++)
            sum += x[fit[k] * f + j];
        const double mean = sum / (double)n_fit;
        double ss = 0.0;
        for (size_t k = 0; k < n_fit; k++) {
            const double d = x[fit[k] * f + j] - mean;
            ss += d * d;
        }
        double sd = sqrt(ss / (double)n_fit);
        out->centre[j] = mean;
        out->scale[j] = sd == 0.0 ? 1.0 : sd;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < f; j++)
            s[i * f + j] = (x[i * f + j] - out->centre[j]) / out->scale[j];
    double tsum = 0.0;
    for (size_t k = 0; k < n_fit; k++) {
        t[k] = labels[fit[k]] == 1 ? 1.0 : -1.0;
        tsum += t[k];
    }
    const double intercept = tsum / (double)n_fit;
    for (size_t p = 0; p < f; p++) {
        for (size_t q = 0; q < f; q++) {
            double g = 0.0;
            for (size_t k = 0; k < n_fit; k++)
                g += s[fit[k] * f + p] * s[fit[k] * f + q];
            gram[p * f + q] = g;
        }
        double r = 0.0;
        for (size_t k = 0; k < n_fit; k++)
            r += s[fit[k] * f + p] * (t[k] - intercept);
        rhs[p] = r;
    }
    /* Ascending grid; the first lambda with the best validation accuracy wins. */
    double *sorted = malloc(n_grid * sizeof *sorted);
    if (!sorted) {
        st = bl_fail(err, BL_ERR_NOMEM, "probe: out of memory");
        goto done;
    }
    memcpy(sorted, grid, n_grid * sizeof *sorted);
    for (size_t i = 1; i < n_grid; i++)
        for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double v = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = v;
        }
    int have = 0;
    gsl_error_handler_t *old = gsl_set_error_handler_off(); /* the library never aborts */
    for (size_t g = 0; g < n_grid && !st; g++) {
        if (g && sorted[g] == sorted[g - 1])
            continue;
        if (!(sorted[g] > 0.0) || !isfinite(sorted[g])) {
            st = bl_fail(err, BL_ERR_INVALID, "probe: lambda %g must be finite and positive", sorted[g]);
            break;
        }
        memcpy(a, gram, f * f * sizeof *a);
        for (size_t p = 0; p < f; p++)
            a[p * f + p] += sorted[g];
        gsl_matrix_view av = gsl_matrix_view_array(a, f, f);
        gsl_vector_view bv = gsl_vector_view_array(rhs, f), xv = gsl_vector_view_array(w, f);
        int signum;
        if (gsl_linalg_LU_decomp(&av.matrix, perm, &signum) || gsl_linalg_LU_solve(&av.matrix, perm, &bv.vector,
                                                                                   &xv.vector)) {
            st = bl_fail(err, BL_ERR_INVALID, "probe: the ridge system with lambda %g is singular", sorted[g]);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            double z = 0.0;
            for (size_t j = 0; j < f; j++)
                z += s[i * f + j] * w[j];
            pred[i] = z + intercept >= 0.0 ? 1 : 2;
        }
        size_t right = 0;
        for (size_t k = 0; k < n_val; k++)
            right += pred[val[k]] == labels[val[k]];
        const double acc = (double)right / (double)n_val;
        if (!have || acc > out->validation_accuracy) {
            have = 1;
            out->lambda = sorted[g];
            out->intercept = intercept;
            out->validation_accuracy = acc;
            memcpy(out->weights, w, f * sizeof *w);
            memcpy(out->predictions, pred, n * sizeof *pred);
        }
    }
    gsl_set_error_handler(old);
    free(sorted);
done:
    gsl_permutation_free(perm);
    free(s);
    free(gram);
    free(a);
    free(rhs);
    free(w);
    free(t);
    free(pred);
    if (st)
        bl_probe_fit_free(out);
    return st;
}
