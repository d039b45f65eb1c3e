/* The partition kernel of the "equations" row (src/models/eq_part.c): what
 * eq_row.c and the plan reader need of it. Private to the library. */
#ifndef BL_MODELS_EQ_PART_H
#define BL_MODELS_EQ_PART_H

#include <stdint.h>

#include "brainlesslab/engine.h"
#include "engine/kernel_ops.h"

struct bl_eq_model;

/* The kernel itself (the row's .part). */
extern const bl_part_kernel bl_eq_part_kernel;

/* Can the partition kernel run this model (cpu and mpi backends)? 1, or 0
 * with *why (when not NULL) saying what it lacks ("its cpu/mpi kernel does
 * not run on_post yet"): such a model runs on the reference backend only.
 * A model-language feature the kernel does not implement must be refused
 * here, so that it falls back instead of running wrong. */
int bl_eq_part_supports(const struct bl_eq_model *m, const char **why);
/* The same for a model on a network: also 0 when the weight expression reads
 * the connectome's `weight` column and the connectome has none (the
 * reference backend then names the missing weights.npy). Injected currents
 * of every kind run on the partition kernel (eq_current.c): a kind it could
 * not apply would be refused here, never left out. */
int bl_eq_part_supports_net(const bl_network *net, const struct bl_eq_model *m, const char **why);

/* May a neuron of this model retire (docs/retirement.md, "Retirement for
 * equation models")? 0 when its update or threshold reads t or draws noise,
 * or when BL_EQ_RETIRE=0 is set in the environment (a test switch: every
 * neuron is then stepped every step). */
int bl_eq_part_may_retire(const struct bl_eq_model *m);

/* Neuron-steps skipped by retirement since the process started (every
 * partition of every trial, summed): tests read it to see that retirement
 * happened at all. */
uint64_t bl_eq_part_skipped(void);

#endif
