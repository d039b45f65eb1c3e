/* The one stream design of scheme bl-philox-v1 (docs/streams.md): a stream is
 * a 64-bit seed; a draw is Philox4x32-10 with key (seed lo, seed hi) and a
 * counter of four words that names it. Every stream of this build goes
 * through bl_stream_block: a connectome trial's stimulus and forcing events,
 * a plan's population samples, an evaluation's seeds, a reservoir's wiring
 * and noise, a task's world, a synthetic connectome. What differs between
 * them is only which counter word holds what; each layout is written once,
 * below or beside its stream, and listed in docs/streams.md.
 *
 * The philox-host-v1 scheme (the Python project's NumPy generators) is the
 * other scheme a reservoir plan may name: src/core/np_random.h. */
#ifndef BL_CORE_STREAM_H
#define BL_CORE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/philox.h"

/* The key layout, once. */
static inline void bl_stream_block(uint64_t seed, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t out[4])
{
    const uint32_t counter[4] = {c0, c1, c2, c3};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    bl_philox4x32(counter, key, out);
}

/* Connectome trials: the stimulus (and forcing) draw of (trial, population,
 * neuron, step) is word 0 of counter (step, neuron, population, trial); the
 * event fires iff word 0 < floor(rate * dt * 2^32). Input and forcing read
 * the same draws. */
static inline uint32_t bl_stream_stimulus_word(uint64_t seed, uint32_t trial, uint32_t population, uint32_t neuron,
                                               uint32_t step)
{
    uint32_t out[4];
    bl_stream_block(seed, step, neuron, population, trial, out);
    return out[0];
}

/* Plan-time population samples: counter (0, neuron, ordinal of the
 * population, BL_STREAM_SAMPLE_TRIAL), keyed by the plan seed. Trials never
 * reach that word (BL_PLAN_MAX_TRIALS is far below), so no sample draw is
 * ever a stimulus draw. */
#define BL_STREAM_SAMPLE_TRIAL UINT32_C(0xFFFFFFFF)
static inline uint32_t bl_stream_sample_word(uint64_t seed, uint32_t ordinal, uint32_t neuron)
{
    uint32_t out[4];
    bl_stream_block(seed, 0, neuron, ordinal, BL_STREAM_SAMPLE_TRIAL, out);
    return out[0];
}

/* The record's "seeds" section of a connectome run, naming the layout above
 * (with_sample: also the samples' line, as plans that write a record through
 * bl_xp do). The text is part of sealed records: it never changes. */
void bl_stream_connectome_seeds_json(uint64_t seed, int with_sample, char *buf, size_t size);

#endif
