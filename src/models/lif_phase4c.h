/* Preset phase4c: the seed runtime's eager reference (float32, millivolts).
 * Constants are rounded to float32 once; each operation rounds to float32 in
 * the seed's order (no FMA: the build uses -ffp-contract=off). */
#ifndef BL_MODELS_LIF_PHASE4C_H
#define BL_MODELS_LIF_PHASE4C_H

#include <stdint.h>

#include "brainlesslab/model.h"
#include "models/bl_hd.h"

typedef struct bl_p4c_consts {
    float gd;      /* 1 - dt/tau_syn */
    float alpha;   /* dt/tau_m */
    float v_rest, v_reset, v_th;
    float w_syn;
    int32_t refractory_steps;
} bl_p4c_consts;

static inline bl_p4c_consts bl_p4c_consts_make(const bl_lif_params *p)
{
    bl_p4c_consts k;
    k.gd = (float)(1.0 - p->dt_ms / p->tau_syn_ms);
    k.alpha = (float)(p->dt_ms / p->tau_m_ms);
    k.v_rest = (float)p->v_rest_mv;
    k.v_reset = (float)p->v_reset_mv;
    k.v_th = (float)p->v_th_mv;
    k.w_syn = (float)p->w_syn_mv;
    k.refractory_steps = (int32_t)bl_lif_refractory_steps(p);
    return k;
}

/* Step 1: g = g*gd + arrival (all neurons, refractory or not). */
static inline BL_HD float bl_p4c_synapse(const bl_p4c_consts *k, float g, float arrival)
{
    float decayed = g * k->gd;
    return decayed + arrival;
}

/* Step 2: count the refractory period down; returns 1 when available. */
static inline BL_HD int bl_p4c_available(int32_t *refractory)
{
    int32_t r = *refractory > 1 ? *refractory : 1;
    *refractory = r - 1;
    return *refractory == 0;
}

/* Step 3: v + alpha*(g - (v - v_rest)) when available, else v_reset. */
static inline BL_HD float bl_p4c_membrane(const bl_p4c_consts *k, float v, float g, int available)
{
    if (!available)
        return k->v_reset;
    float leak = v - k->v_rest;
    float drive = g - leak;
    float step = k->alpha * drive;
    return v + step;
}

/* Is an available neuron at v inert for any g between 0 and g: the membrane
 * step leaves v unchanged for g and for 0? Every later g without input lies
 * between them (fl(fl(g*gd) + 0) only shrinks |g|), and the membrane step is
 * monotone in g (each rounding is), so no later step changes v. (Compare
 * bits where it matters: == also holds for +0 against -0.) */
static inline BL_HD int bl_p4c_inert(const bl_p4c_consts *k, float v, float g)
{
    return bl_p4c_membrane(k, v, g, 1) == v && bl_p4c_membrane(k, v, 0.0f, 1) == v;
}

/* Step 4: natural spike (>=, unlike shiu2024). */
static inline BL_HD int bl_p4c_crosses(const bl_p4c_consts *k, float v) { return v >= k->v_th; }

/* Step 6. */
static inline BL_HD void bl_p4c_reset(const bl_p4c_consts *k, float *v, int32_t *refractory)
{
    *v = k->v_reset;
    *refractory = k->refractory_steps;
}

/* The seed computes (float32(count) * sign) * float32(w_syn); with the sign
 * already in the count, float32(signed count) * w_syn is the same value. */
static inline BL_HD float bl_p4c_edge_weight(const bl_p4c_consts *k, int32_t signed_count)
{
    return (float)signed_count * k->w_syn;
}

#endif
