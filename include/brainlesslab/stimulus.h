/* Stimulus: Poisson populations drawn from Philox counter streams, and explicit
 * event schedules (step, neuron), as docs/streams.md defines them.
 *
 * Random stream contract: Philox4x32-10 with key (seed low 32 bits, seed high
 * 32 bits) and counter (step, neuron, population, trial); population p fires
 * for a neuron at a step iff output word 0 < floor(rate * dt * 2^32). The draw
 * for (trial, population, neuron, step) never depends on backend, threads,
 * ranks or batching. */
#ifndef BRAINLESSLAB_STIMULUS_H
#define BRAINLESSLAB_STIMULUS_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_stimulus bl_stimulus;

BL_API bl_status bl_stimulus_create(bl_stimulus **out, bl_error *err);
BL_API void bl_stimulus_destroy(bl_stimulus *s);

/* Add a Poisson population (its index is the number added before it). Neuron
 * indices are copied, sorted and must be unique. The window is
 * [start_ms, stop_ms); stop_ms < 0 means "to the end of the trial". */
BL_API bl_status bl_stimulus_add_poisson(bl_stimulus *s, const int32_t *neurons, size_t n, double rate_hz,
                                         double start_ms, double stop_ms, bl_error *err);
/* Add explicit events (pairs step, neuron); each event counts, in every trial. */
BL_API bl_status bl_stimulus_add_events(bl_stimulus *s, const int32_t *step_neuron_pairs, size_t n_events,
                                        bl_error *err);
/* Forced spikes (docs/forcing.md): population `index` makes its neurons
 * spike at its Poisson times instead of giving them input. A forced spike is
 * taken at its step when the neuron is not refractory and did not cross
 * threshold in that step; it then spikes, is reset and becomes refractory
 * like any spike, and its spike is delivered like any spike. Otherwise it is
 * dropped (never buffered). Forced neurons keep the model's refractory period
 * (the shiu2024 "no refractory period for Poisson targets" rule is for
 * input). In phase4c every Poisson event is already a forced spike: force
 * changes nothing there. */
BL_API bl_status bl_stimulus_set_force(bl_stimulus *s, size_t index, int force, bl_error *err);
/* Forced spikes at explicit (step, neuron) pairs, every trial. */
BL_API bl_status bl_stimulus_add_forced_events(bl_stimulus *s, const int32_t *step_neuron_pairs, size_t n_events,
                                               bl_error *err);
/* Declare which neurons count as stimulated for the refractory rule of
 * shiu2024 (default: every neuron of every population and schedule). */
BL_API bl_status bl_stimulus_set_targets(bl_stimulus *s, const int32_t *neurons, size_t n, bl_error *err);

BL_API size_t bl_stimulus_n_populations(const bl_stimulus *s);
BL_API size_t bl_stimulus_n_events(const bl_stimulus *s);

/* Philox Bernoulli draw, exposed for tests and other tools. */
BL_API uint32_t bl_stream_word(uint64_t seed, uint32_t trial, uint32_t population, uint32_t neuron,
                               uint32_t step);
BL_API uint64_t bl_bernoulli_threshold(double rate_hz, double dt_ms);

#ifdef __cplusplus
}
#endif
#endif
