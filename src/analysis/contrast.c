/* Contrasts between two sets of trials: Welch's t test, the paired t test,
 * Cohen's d and Benjamini-Hochberg q-values (the statistics of `brainlesslab
 * compare`). The t distribution is GSL's. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

#include "brainlesslab/analysis.h"

static void moments(const double *x, size_t n, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = n ? s / (double)n : NAN;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : NAN;
}

void bl_welch(const double *a, size_t na, const double *b, size_t nb, bl_contrast *out)
{
    double va, vb;
    moments(a, na, &out->mean_a, &va);
    moments(b, nb, &out->mean_b, &vb);
    out->diff = out->mean_b - out->mean_a;
    out->t = out->df = out->p = out->cohen_d = NAN;
    if (na < 2 || nb < 2) {
        out->status = BL_CONTRAST_TOO_FEW_TRIALS;
        return;
    }
    double sa = va / (double)na, sb = vb / (double)nb, se2 = sa + sb;
    double pooled = sqrt(((double)(na - 1) * va + (double)(nb - 1) * vb) / (double)(na + nb - 2));
    if (se2 == 0) {
        /* Constant on both sides: the t statistic is undefined. Equal means
         * (e.g. silent on both sides) or different ones, the neuron is
         * reported by its status, never as t = d = inf. */
        out->status = out->diff == 0 ? BL_CONTRAST_CONSTANT_EQUAL : BL_CONTRAST_CONSTANT_DIFFERS;
        return;
    }
    out->status = BL_CONTRAST_TESTED;
    out->t = out->diff / sqrt(se2);
    out->df = se2 * se2 / (sa * sa / (double)(na - 1) + sb * sb / (double)(nb - 1));
    out->p = 2.0 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
    if (out->p > 1.0)
        out->p = 1.0;
    out->cohen_d = out->diff / pooled; /* pooled > 0: se2 > 0 */
}

void bl_paired(const double *a, const double *b, size_t n, bl_contrast *out)
{
    double va, vb, mean_d = 0, var_d = 0;
    moments(a, n, &out->mean_a, &va);
    moments(b, n, &out->mean_b, &vb);
    out->diff = out->mean_b - out->mean_a;
    out->t = out->df = out->p = out->cohen_d = NAN;
    if (n < 2) {
        out->status = BL_CONTRAST_TOO_FEW_TRIALS;
        return;
    }
    /* The trial-by-trial differences: trial k of both sides ran on the same
     * input draws, so their difference removes the input's own variation. */
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += b[i] - a[i];
    mean_d = s / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (b[i] - a[i] - mean_d) * (b[i] - a[i] - mean_d);
    var_d = ss / (double)(n - 1);
    if (var_d == 0) {
        out->status = mean_d == 0 ? BL_CONTRAST_CONSTANT_EQUAL : BL_CONTRAST_CONSTANT_DIFFERS;
        return;
    }
    out->status = BL_CONTRAST_TESTED;
    double sd = sqrt(var_d);
    out->t = mean_d / (sd / sqrt((double)n));
    out->df = (double)(n - 1);
    out->p = 2.0 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
    if (out->p > 1.0)
        out->p = 1.0;
    out->cohen_d = mean_d / sd; /* Cohen's d_z */
}

const char *bl_contrast_status_name(bl_contrast_status s)
{
    switch (s) {
    case BL_CONTRAST_TESTED: return "tested";
    case BL_CONTRAST_CONSTANT_EQUAL: return "constant_equal";
    case BL_CONTRAST_CONSTANT_DIFFERS: return "constant_differs";
    case BL_CONTRAST_TOO_FEW_TRIALS: return "too_few_trials";
    }
    return "?";
}

typedef struct ranked {
    double p;
    size_t i;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

bl_status bl_bh_qvalues(const double *p, size_t n, double *q, bl_error *err)
{
    ranked *order = malloc((n ? n : 1) * sizeof *order);
    size_t m = 0;
    if (!order)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate q-values for %zu tests", n);
    for (size_t i = 0; i < n; i++) {
        q[i] = NAN;
        if (!isnan(p[i]))
            order[m++] = (ranked){p[i], i};
    }
    qsort(order, m, sizeof *order, cmp_ranked);
    double running = 1.0;
    for (size_t k = m; k-- > 0;) {
        double v = order[k].p * (double)m / (double)(k + 1);
        if (v < running)
            running = v;
        q[order[k].i] = running;
    }
    free(order);
    return BL_OK;
}
