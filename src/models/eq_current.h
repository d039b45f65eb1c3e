/* Current injection into a model from equations (docs/models.md, "Current
 * injection"): the stimulus's currents (bl_stimulus_add_current) set a
 * per-neuron parameter of the model before each step's state update. */
#ifndef BL_MODELS_EQ_CURRENT_H
#define BL_MODELS_EQ_CURRENT_H

#include <stdint.h>

#include "brainlesslab/eqmodel.h"
#include "engine/network_impl.h"

struct bl_current_in;

/* Does every current set a per-neuron parameter of m (declared `x : unit`)?
 * The message names the current and the variable. */
bl_status bl_eq_current_check(const bl_eq_model *m, const struct bl_current_in *currents, size_t n_currents,
                              bl_error *err);

/* Before the update of `step` of `trial`: for every neuron a current
 * targets, its variable (state arrays of n values each, in the model's
 * order) becomes the sum of the currents' values at this step. */
void bl_eq_current_apply(const bl_network *net, const bl_eq_model *m, uint32_t trial, int64_t step, double *state,
                         uint64_t n);

/* The standard normal draw of noise current k for (trial, neuron, step):
 * Philox4x32-10 keyed by the run's seed at counter (step, neuron,
 * 0xC0000000 | k, trial), Box-Muller on two 53-bit uniforms
 * (docs/streams.md). */
double bl_eq_current_normal(uint64_t seed, uint32_t k, uint32_t trial, uint32_t neuron, uint64_t step);

#endif
