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

/* Current injection (docs/models.md, "Current injection"): a value a model
 * from equations reads in a per-neuron parameter (`I_inj : amp`), set for
 * the chosen neurons before each step's state update. Where several currents
 * set one variable of one neuron, their values add; a current is 0 outside
 * its window [start_step, stop_step) (stop_step < 0: to the end), and a
 * variable no current sets keeps its own value. Values are SI (amp for an
 * `amp` variable), in the variable's dimension. */
typedef enum bl_current_kind {
    BL_CURRENT_DC = 0, /* amplitude */
    BL_CURRENT_STEP,   /* values[k] from steps[k] (ascending) until steps[k+1] or the window's end */
    BL_CURRENT_RAMP,   /* from + (to - from) * ((s - start) / (stop - start)), s the step; needs stop */
    BL_CURRENT_TABLE,  /* values[k] over steps [start + k*every, start + (k+1)*every), 0 after */
    BL_CURRENT_NOISE   /* amplitude + sigma * z, z standard normal, one per neuron, step and trial */
} bl_current_kind;

typedef struct bl_current {
    bl_current_kind kind;
    const char *variable;          /* the model's per-neuron parameter */
    int64_t start_step, stop_step; /* the window */
    double amplitude;              /* dc: the value; noise: the mean */
    double sigma;                  /* noise: the standard deviation of each step's value */
    double from, to;               /* ramp */
    size_t n_values;               /* step, table */
    const double *values;
    const int64_t *steps;          /* step: where each value starts */
    int64_t every_steps;           /* table: steps per value (>= 1) */
} bl_current;

/* Add a current on neurons (copied, sorted, unique); its noise stream index
 * is the number of currents added before it (docs/streams.md). */
BL_API bl_status bl_stimulus_add_current(bl_stimulus *s, const int32_t *neurons, size_t n, const bl_current *c,
                                         bl_error *err);
BL_API size_t bl_stimulus_n_currents(const bl_stimulus *s);

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
