/* Preset shiu2024: the equations of Shiu et al. 2024 as Brian2 2.5.1 evaluates
 * them (method 'linear', float64, SI units). Every backend calls these inline
 * functions; none restates them. The operation order below is Brian2's
 * generated code, so the rounding is Brian2's too. */
#ifndef BL_MODELS_LIF_SHIU2024_H
#define BL_MODELS_LIF_SHIU2024_H

#include <math.h>

#include "brainlesslab/model.h"
#include "models/bl_hd.h"

typedef struct bl_shiu_consts {
    double L2, L8, L9, L10; /* Brian2's loop-invariant constants */
    double v_th, v_rst;     /* volts */
    double w_syn;           /* volts per synapse */
    double w_poisson;       /* volts per Poisson event: f_poi * w_syn */
} bl_shiu_consts;

/* Brian2 multiplies a number by the unit's scale (mV = 0.001, ms = 0.001), so
 * -52 mV is -52 * 0.001 = -0.052000000000000005, not the literal -0.052. */
static inline bl_shiu_consts bl_shiu_consts_make(const bl_lif_params *p)
{
    const double mV = 0.001, ms = 0.001;
    double dt = p->dt_ms * ms, tau = p->tau_syn_ms * ms, t_mbr = p->tau_m_ms * ms;
    double v_0 = p->v_rest_mv * mV;
    bl_shiu_consts k;
    k.L2 = exp(-dt / tau);
    k.L10 = exp(-dt / t_mbr);
    k.L8 = v_0 - v_0 * k.L10;
    k.L9 = ((tau / (t_mbr - tau)) * (-exp(dt / t_mbr) + exp(dt / tau))) * k.L10 * k.L2;
    k.v_th = p->v_th_mv * mV;
    k.v_rst = p->v_reset_mv * mV;
    k.w_syn = p->w_syn_mv * mV;
    k.w_poisson = k.w_syn * p->f_poi;
    return k;
}

/* Step 1 for a non-refractory neuron: exact linear update from the old v, g. */
static inline BL_HD void bl_shiu_integrate(const bl_shiu_consts *k, double *v, double *g)
{
    double g0 = *g, v0 = *v;
    *g = k->L2 * g0;
    *v = k->L8 + ((k->L9 * g0) + (k->L10 * v0));
}

/* Is (v, g) inert: the next update leaves v unchanged because L9*g vanishes
 * in the rounding of (L9*g) + (L10*v) and v is a fixed point of
 * L8 + L10*v? Then every later update without input leaves v unchanged too:
 * g only shrinks in magnitude (|fl(L2*g)| <= |g|, same sign), rounding is
 * monotone, so fl(L9*g') lies between 0 and fl(L9*g) and the sum between
 * fl(0 + L10*v) and fl(L9*g + L10*v), which are equal. (Compare v bit for
 * bit where it matters: == also holds for +0 against -0.) */
static inline BL_HD int bl_shiu_inert(const bl_shiu_consts *k, double v, double g)
{
    double a = k->L10 * v;
    return ((k->L9 * g) + a) == a && k->L8 + a == v;
}

/* bl_shiu_integrate (the same operations, so the same bits), also saying
 * whether the old (v, g) was inert, from the update's own intermediate values:
 * then the new state is inert too (same v, smaller |g|). */
static inline BL_HD int bl_shiu_integrate_inert(const bl_shiu_consts *k, double *v, double *g)
{
    double g0 = *g, v0 = *v;
    double a = k->L10 * v0, s = (k->L9 * g0) + a;
    *g = k->L2 * g0;
    *v = k->L8 + s;
    return (s == a) & (*v == v0);
}

/* The decay of g alone, one update: what bl_shiu_integrate does to g. */
static inline BL_HD double bl_shiu_decay(const bl_shiu_consts *k, double g) { return k->L2 * g; }

/* Step 2: strict threshold. */
static inline BL_HD int bl_shiu_crosses(const bl_shiu_consts *k, double v) { return v > k->v_th; }

/* Step 5. */
static inline BL_HD void bl_shiu_reset(const bl_shiu_consts *k, double *v, double *g)
{
    *v = k->v_rst;
    *g = 0.0;
}

/* Weight of one edge: Brian2 computes (signed count) * w_syn in float64. */
static inline BL_HD double bl_shiu_edge_weight(const bl_shiu_consts *k, int32_t signed_count)
{
    return (double)signed_count * k->w_syn;
}

#endif
