/* Philox4x32-10 counter streams (Random123). The counter names the draw, so a
 * draw is the same whichever thread, rank or batch computes it. */
#ifndef BL_CORE_PHILOX_H
#define BL_CORE_PHILOX_H

#include <stdint.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#include <Random123/philox.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static inline void bl_philox4x32(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    philox4x32_ctr_t c = {{counter[0], counter[1], counter[2], counter[3]}};
    philox4x32_key_t k = {{key[0], key[1]}};
    philox4x32_ctr_t r = philox4x32_R(10, c, k);
    out[0] = r.v[0];
    out[1] = r.v[1];
    out[2] = r.v[2];
    out[3] = r.v[3];
}

/* The stimulus stream word: key (seed lo, seed hi), counter (step, neuron,
 * population, trial); word 0 decides the Bernoulli event. */
static inline uint32_t bl_philox_stimulus_word(uint64_t seed, uint32_t trial, uint32_t population,
                                               uint32_t neuron, uint32_t step)
{
    const uint32_t counter[4] = {step, neuron, population, trial};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    bl_philox4x32(counter, key, out);
    return out[0];
}

#endif
