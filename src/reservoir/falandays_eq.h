/* The Falandays node's equations, written once, per block of units
 * (docs/reservoir.md, "Falandays").
 *
 * Every expression is evaluated in the order written, in BL_REAL, without
 * contraction (-ffp-contract=off); sums start at +0.0 and run over sources in
 * ascending order. Where the spec leaves an operation order open, these follow
 * the Python BrainlessLab kernels: the weight step is (e / k) * eta_w and the
 * Oosawa term is xi * (membrane_noise + noise_gain * max(0, theta - a)).
 *
 * The recurrent sum walks the sources that spiked on the previous frame
 * (s->list, ascending) through the blocked source index (res_impl.h): each
 * destination of the block receives its terms in ascending source order,
 * exactly the spec's sum over all j (a silent source's term w * (0 * sign) is
 * +-0, which leaves a sum started at +0.0 unchanged). Learning changes the same
 * links (each once, so their order is immaterial).
 *
 * A template: res_state.c includes it once per precision with BL_REAL (double
 * or float: every value and intermediate), BL_STATE (bl_res_state or
 * bl_res_k32), BL_PARAMS (bl_res_params or bl_res_params32) and BL_EQ(name)
 * (the function's name in that precision). Literals that enter arithmetic are
 * (BL_REAL) so that float32 never computes an intermediate in double. */
#ifndef BL_REAL
#error "falandays_eq.h is a template: define BL_REAL, BL_STATE, BL_PARAMS and BL_EQ first (res_state.c)"
#endif

#include <math.h>

#include "reservoir/res_impl.h"

/* Integrate the units of block b from the previous frame's spikes (s->prev),
 * inputs u [R] and noise xi [N] (NULL: zeros). Writes acts, spikes, margins,
 * errors and k (the links from spiking sources). */
static inline void BL_EQ(bl_fal_integrate_block)(BL_STATE *s, uint32_t b, const double *u, const double *xi)
{
    const BL_PARAMS *p = &s->p;
    const uint32_t lo = b * BL_RES_BLOCK, hi = lo + BL_RES_BLOCK < s->n ? lo + BL_RES_BLOCK : s->n;
    BL_REAL rec[BL_RES_BLOCK];
    uint32_t kc[BL_RES_BLOCK];
    for (uint32_t i = 0; i < hi - lo; i++) {
        rec[i] = 0.0;
        kc[i] = 0;
    }
    const uint32_t *cp = s->cptr + (size_t)b * (s->n + 1);
    for (uint32_t t = 0; t < s->n_list_x; t++) {
        const uint32_t j = s->list[t];
        const BL_REAL sj = s->prev[j] * s->sign[j];
        for (uint32_t e = cp[j]; e < cp[j + 1]; e++) {
            const uint32_t i = s->cdst[e] - lo;
            rec[i] = rec[i] + s->w[s->cpos[e]] * sj;
            kc[i]++;
        }
    }
    for (uint32_t i = lo; i < hi; i++) {
        const BL_REAL *win = s->w_in + (size_t)i * s->r;
        BL_REAL sensory = 0.0;
        for (uint32_t q = 0; q < s->r; q++)
            sensory = sensory + win[q] * (BL_REAL)u[q]; /* float32: the input rounded on entry */
        BL_REAL a = s->acts[i] * ((BL_REAL)1 - p->leak);
        a = a + sensory;
        a = a + rec[i - lo];
        /* theta uses the targets from before this frame's adaptation. */
        BL_REAL theta = s->thr[i] * p->threshold_mult;
        if (p->oosawa) {
            BL_REAL gap = theta - a;
            if (!(gap > 0.0))
                gap = 0.0;
            BL_REAL sigma = p->membrane_noise + p->noise_gain * gap;
            a = a + (xi ? (BL_REAL)xi[i] : (BL_REAL)0) * sigma;
        }
        uint8_t ok = isfinite(a) && isfinite(theta);
        if (p->rectify && a < 0.0)
            a = 0.0;
        BL_REAL margin = a - theta;
        BL_REAL spike = 0.0;
        if (a >= theta) {
            spike = 1.0;
            a = a - theta; /* reset by subtraction */
        }
        BL_REAL e = a - s->thr[i]; /* the error after the subtraction, against the old target */
        ok = ok && isfinite(margin) && isfinite(e);
        s->acts[i] = a;
        s->spikes[i] = spike;
        s->margins[i] = margin;
        s->errors[i] = e;
        s->kcount[i] = kc[i - lo];
        s->ok[i] = ok;
    }
}

/* Learning of block b, after every unit has integrated: the links from the
 * sources that spiked on the previous frame, W[i,j] -= (e_i / k_i) eta_w
 * (Dale: times sign[j], then clipped at 0), then the targets. */
static inline void BL_EQ(bl_fal_learn_block)(BL_STATE *s, uint32_t b)
{
    if (!s->learn)
        return;
    const BL_PARAMS *p = &s->p;
    const uint32_t lo = b * BL_RES_BLOCK, hi = lo + BL_RES_BLOCK < s->n ? lo + BL_RES_BLOCK : s->n;
    if (s->learn_weights) {
        BL_REAL delta[BL_RES_BLOCK];
        for (uint32_t i = lo; i < hi; i++) /* k > 0 wherever a link below is visited (k < 2^24: exact in float) */
            delta[i - lo] = s->kcount[i] ? s->errors[i] / (BL_REAL)s->kcount[i] * p->lrate_wmat : (BL_REAL)0;
        const uint32_t *cp = s->cptr + (size_t)b * (s->n + 1);
        for (uint32_t t = 0; t < s->n_list_x; t++) {
            const uint32_t j = s->list[t];
            const int flip = p->dale && s->sign[j] < 0.0; /* an inhibitory source's link grows */
            for (uint32_t e = cp[j]; e < cp[j + 1]; e++) {
                const uint32_t i = s->cdst[e];
                const BL_REAL change = flip ? -delta[i - lo] : delta[i - lo];
                BL_REAL wv = s->w[s->cpos[e]] - change;
                if (!isfinite(wv))
                    s->ok[i] = 0;
                if (p->dale && wv < 0.0)
                    wv = 0.0;
                s->w[s->cpos[e]] = wv;
            }
        }
        /* The Dale variant also clears weights off the link mask; rows hold only
         * links (a bundle may not put weight off the mask), so there are none. */
    }
    for (uint32_t i = lo; i < hi; i++) {
        BL_REAL target = s->thr[i] + s->errors[i] * p->lrate_targ;
        if (!isfinite(target))
            s->ok[i] = 0;
        s->thr[i] = target < p->targ_min ? p->targ_min : target;
    }
}

/* Effector e = sum_i spikes[i] out[e,i] / sum_i out[e,i] (0 when the pool is
 * empty); a silent unit adds +0 (out >= 0). */
static inline BL_REAL BL_EQ(bl_fal_effector)(const BL_STATE *s, uint32_t e)
{
    const BL_REAL *out = s->w_out + (size_t)e * s->n;
    BL_REAL total = 0.0;
    for (uint32_t i = 0; i < s->n; i++)
        total = total + s->spikes[i] * out[i];
    return s->out_den[e] > 0.0 ? total / s->out_den[e] : (BL_REAL)0;
}
