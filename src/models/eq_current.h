/* Current injection into a model from equations (docs/models.md, "Current
 * injection"): the stimulus's currents (bl_stimulus_add_current) set a
 * per-neuron parameter of the model before each step's state update. */
#ifndef BL_MODELS_EQ_CURRENT_H
#define BL_MODELS_EQ_CURRENT_H

#include <stddef.h>
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
/* The same for the neurons [lo, hi) only (a partition's), the state arrays
 * `stride` values each, indexed by neuron id: the partition kernel
 * (src/models/eq_part.c) writes the bits the reference writes for them. */
void bl_eq_current_apply_range(const bl_network *net, const bl_eq_model *m, uint32_t trial, int64_t step,
                               double *state, uint64_t stride, int32_t lo, int32_t hi);
/* Current k's neurons within [lo, hi): their number, *neurons the first
 * (ascending). */
size_t bl_eq_current_owned(const bl_network *net, size_t k, int32_t lo, int32_t hi, const int32_t **neurons);

/* The standard normal draw of noise current k for (trial, neuron, step):
 * Philox4x32-10 keyed by the run's seed at counter (step, neuron,
 * 0xC0000000 | k, trial), Box-Muller on two 53-bit uniforms
 * (docs/streams.md). */
double bl_eq_current_normal(uint64_t seed, uint32_t k, uint32_t trial, uint32_t neuron, uint64_t step);

/* The model's noise: the standard normal xi_k of (trial, neuron, step) in a
 * connectome run, Philox4x32-10 keyed by the run's seed at counter (step,
 * neuron, 0xE0000000 | k, trial), Box-Muller as above (docs/streams.md). The
 * equations scale it (euler: dt**0.5 * xi, as Brian2). */
double bl_eq_xi_normal(uint64_t seed, uint32_t k, uint32_t trial, uint32_t neuron, uint64_t step);

/* The normal stream of an eq_vm_ctx (bl_eq_normal_fn) for one trial of a
 * run: user points to a bl_eq_xi_stream. Every kernel (reference, partition,
 * generated C) draws through it, so a draw depends on (seed, trial, neuron,
 * step, k) alone. */
typedef struct bl_eq_xi_stream {
    uint64_t seed;
    uint32_t trial;
} bl_eq_xi_stream;
double bl_eq_xi_draw(void *user, uint32_t neuron, uint64_t step, uint32_t k);

#endif
