/* Retirement for phase4c (docs/retirement.md): as for shiu2024, an inert
 * neuron (bl_p4c_inert) rests with its v and the g of its last update, and
 * its exact g at a later step is reconstructed from the number of updates. */
#ifndef BL_MODELS_LIF_PHASE4C_RETIRE_H
#define BL_MODELS_LIF_PHASE4C_RETIRE_H

#include <stdint.h>

#include "models/lif_phase4c.h"

/* g after `updates` updates without input: fl(fl(g*gd) + 0) applied that many
 * times, bit for bit; the float32 subnormal range runs as an integer map on
 * units of 2^-149 (no microcode assists). */
float bl_p4c_g_after(const bl_p4c_consts *k, float g, int64_t updates);
/* One such update on units of 2^-149 (units < 2^23): round(gd * units), ties
 * to even. Exposed for the tests. */
uint32_t bl_p4c_subnormal_step(const bl_p4c_consts *k, uint32_t units);

#endif
