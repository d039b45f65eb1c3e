/* Retirement for shiu2024 (docs/retirement.md): a neuron whose state is inert
 * (bl_shiu_inert) leaves the active slots with its v (which no update will
 * change again) and the g of its last update; its exact g at any later step
 * is reconstructed from that g and the number of updates since. */
#ifndef BL_MODELS_LIF_SHIU2024_RETIRE_H
#define BL_MODELS_LIF_SHIU2024_RETIRE_H

#include <stdint.h>

#include "models/lif_shiu2024.h"

/* g after `updates` more updates without input: fl(L2 * g) applied that many
 * times, bit for bit. Stops early at a fixed point; below the normal range
 * (where x86 would take a microcode assist per multiply) it runs the same
 * rounding as an integer map on units of 2^-1074. */
double bl_shiu_g_after(const bl_shiu_consts *k, double g, int64_t updates);

/* The same in the subnormal range only, as an integer map: units k of
 * 2^-1074 (k < 2^52) after one update, round(L2 * k) ties to even. Exposed
 * for the tests, which compare it with the hardware's multiply. */
uint64_t bl_shiu_subnormal_step(const bl_shiu_consts *k, uint64_t units);

/* The smallest |g| that can still matter to an arriving nonzero weight:
 * below it, fl(g + w) == w for every weight w the preset can deliver
 * (|w| >= w_syn), so an arriving spike sets g to exactly w, as if g were 0. */
double bl_shiu_absorb_limit(const bl_shiu_consts *k);

/* Is the reset state (v_rst, +0) a one-step fixed point below threshold?
 * Then the partition update need not hold refractory slots still (they sit
 * at exactly that state): see shiu_update_body in lif_shiu2024.c. */
int bl_shiu_reset_is_fixed_point(const bl_shiu_consts *k);

#endif
