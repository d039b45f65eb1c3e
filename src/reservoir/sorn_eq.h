/* The SORN node's equations, written once, per unit
 * (docs/reservoir.md, "SORN").
 *
 * Units 0..N_E-1 are excitatory (x), N_E..N-1 inhibitory (y); s->spikes holds
 * x then y, s->prev the previous frame's, s->thr T_E then T_I. Sums start at
 * +0.0 and run over sources in ascending order. A silent source's term w * 0
 * is +-0, which leaves such a sum unchanged: the E->E rows add it (no branch),
 * the E<->I sums skip it through lists of the units that fired, and a missing
 * link (weight 0) is never stored. The drive is evaluated as the spec writes it, left to
 * right: ((exc - inh) + input) - T. Normalisation multiplies by
 * c_e / total (one rounding for the scale, one per weight), as the Python
 * BrainlessLab kernel does.
 *
 * A template, like falandays_eq.h: res_state.c includes it once per precision
 * (BL_REAL, BL_STATE, BL_PARAMS, BL_EQ); every value and intermediate is a
 * BL_REAL. */
#ifndef BL_REAL
#error "sorn_eq.h is a template: define BL_REAL, BL_STATE, BL_PARAMS and BL_EQ first (res_state.c)"
#endif

#include <math.h>

#include "reservoir/res_impl.h"

/* Excitatory unit i: old x, old y, current inputs. */
static inline void BL_EQ(bl_sorn_integrate_e)(BL_STATE *s, uint32_t i, const double *u)
{
    BL_REAL exc = 0.0;
    uint32_t terms = 0;
    const uint64_t base = s->row_start[i];
    const uint32_t len = s->row_len[i];
    const uint32_t *col = s->col + base;
    const BL_REAL *w = s->w + base;
    for (uint32_t t = 0; t < len; t++) {
        /* a silent source adds w * 0 = +-0: the same bits as skipping it */
        BL_REAL pj = s->prev[col[t]];
        exc = exc + w[t] * pj;
        terms += pj != 0.0;
    }
    /* The previous y that were 1, ascending (listed in phase A). */
    BL_REAL inh = 0.0;
    const BL_REAL *wei = s->w_ei + (size_t)i * s->ni;
    const uint32_t *ly = s->list + s->ne;
    for (uint32_t t = 0; t < s->n_list_y; t++) {
        uint32_t k = ly[t];
        inh = inh + wei[k] * s->prev[s->ne + k];
    }
    BL_REAL drive = 0.0;
    const BL_REAL *weu = s->w_in + (size_t)i * s->r;
    for (uint32_t q = 0; q < s->r; q++)
        drive = drive + weu[q] * (BL_REAL)u[q]; /* float32: the input rounded on entry */
    BL_REAL m = ((exc - inh) + drive) - s->thr[i];
    s->margins[i] = m;
    s->spikes[i] = m >= 0.0 ? 1.0 : 0.0;
    s->kcount[i] = terms + s->n_list_y;
    s->ok[i] = (uint8_t)isfinite(m);
}

/* Inhibitory unit k (0-based among the I units) from x_src: the old x
 * (s->prev, listed in list[0..n_list_x)) or, with fast inhibition, the new x
 * (s->spikes, listed after the y list). */
static inline void BL_EQ(bl_sorn_integrate_i)(BL_STATE *s, uint32_t k, const BL_REAL *x_src,
                                              const uint32_t *listed, uint32_t n_listed)
{
    BL_REAL exc = 0.0;
    const BL_REAL *wie = s->w_ie + (size_t)k * s->ne;
    for (uint32_t t = 0; t < n_listed; t++) {
        uint32_t j = listed[t];
        exc = exc + wie[j] * x_src[j];
    }
    BL_REAL m = exc - s->thr[s->ne + k];
    s->margins[s->ne + k] = m;
    s->spikes[s->ne + k] = m >= 0.0 ? 1.0 : 0.0;
    s->kcount[s->ne + k] = n_listed;
    s->ok[s->ne + k] = (uint8_t)isfinite(m);
}

/* Plasticity of excitatory row i, after every unit has its new state:
 * STDP on the existing links, pruning, normalisation, then intrinsic plasticity. */
static inline void BL_EQ(bl_sorn_adapt)(BL_STATE *s, uint32_t i)
{
    const BL_PARAMS *p = &s->p;
    uint8_t ok = s->ok[i];
    if (s->learn_weights) {
        const BL_REAL xi = s->spikes[i], pxi = s->prev[i];
        const uint64_t base = s->row_start[i];
        const uint32_t len = s->row_len[i];
        uint32_t kept = 0;
        BL_REAL total = 0.0;
        for (uint32_t t = 0; t < len; t++) {
            uint32_t j = s->col[base + t];
            BL_REAL wv = s->w[base + t] + p->eta_stdp * ((xi * s->prev[j]) - (pxi * s->spikes[j]));
            if (!isfinite(wv))
                ok = 0;
            int keep = 1;
            if (wv <= 0.0) {
                wv = 0.0;
                keep = !p->pruning; /* removed for good: no later frame can restore it */
            }
            total = total + wv;
            if (keep) {
                s->col[base + kept] = j;
                s->w[base + kept] = wv;
                kept++;
            }
        }
        s->row_len[i] = kept;
        if (!isfinite(total))
            ok = 0;
        if (total > 0.0 && s->c_e[i] > 0.0) {
            BL_REAL scale = s->c_e[i] / total;
            if (!isfinite(scale))
                ok = 0;
            for (uint32_t t = 0; t < kept; t++)
                s->w[base + t] = s->w[base + t] * scale;
        }
    }
    if (s->learn) {
        BL_REAL te = s->thr[i] + p->eta_ip * (s->spikes[i] - p->H_ip);
        if (!isfinite(te))
            ok = 0;
        s->thr[i] = te;
    }
    s->ok[i] = ok;
}

/* Effector e: the mean of x over its pool (0 for an empty pool). */
static inline BL_REAL BL_EQ(bl_sorn_effector)(const BL_STATE *s, uint32_t e)
{
    const BL_REAL *pool = s->w_out + (size_t)e * s->ne;
    BL_REAL total = 0.0;
    for (uint32_t i = 0; i < s->ne; i++)
        if (pool[i] != 0.0 && s->spikes[i] != 0.0)
            total = total + s->spikes[i];
    return s->out_den[e] > 0.0 ? total / s->out_den[e] : total;
}
