/* Analyses of a run: firing rates over trials, shortest-path depth from the
 * stimulus, and the seed runtime's propagation statistics. */
#ifndef BRAINLESSLAB_ANALYSIS_H
#define BRAINLESSLAB_ANALYSIS_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Directed shortest-path depth (edges) from any source; -1 when unreachable.
 * depth has n_neurons entries. */
BL_API bl_status bl_shortest_depths(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                                    int32_t *depth, bl_error *err);

/* The same depths when the connectome is split into parts, each rank of an
 * MPI job holding the edges into its own neurons (bl_connectome_load_part).
 * The search goes level by level; after each level `merge` must replace
 * depth[0..n) by the element-wise maximum over every part (MPI_Allreduce with
 * MPI_MAX), so every part ends with the whole graph's depths. Collective:
 * every part calls it. Costs one pass over the neurons per level. */
typedef bl_status (*bl_depth_merge_fn)(int32_t *depth, uint64_t n, void *user, bl_error *err);
BL_API bl_status bl_shortest_depths_merged(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                                           int32_t *depth, bl_depth_merge_fn merge, void *user, bl_error *err);

/* Per-neuron firing rate (Hz) over trials: mean and sample standard deviation
 * (n - 1 in the denominator; 0 for a single trial). counts is [trials][n]. */
BL_API void bl_rates(const int32_t *counts, uint32_t trials, uint64_t n, double duration_s, double *mean,
                     double *sd);

/* Neuron classes named by metadata: "descending" when cell_type (or
 * super_class / cell_class) starts with "DN" or contains "descending";
 * "motor" when it contains "motor". Case-insensitive. */
BL_API int bl_neuron_is_descending(const bl_connectome *c, uint64_t neuron);
BL_API int bl_neuron_is_motor(const bl_connectome *c, uint64_t neuron);

typedef struct bl_propagation {
    uint64_t active_neurons;            /* fired at least once */
    uint64_t downstream_active_neurons; /* active and not stimulated */
    int32_t propagation_depth;          /* deepest shortest-path depth among active neurons */
    uint64_t descending_active_neurons;
    uint64_t motor_active_neurons;
    uint64_t spikes;
} bl_propagation;

/* counts: per-neuron spike counts of one trial (or summed over trials);
 * stimulated: per-neuron flag; depth from bl_shortest_depths. */
BL_API bl_propagation bl_propagation_stats(const bl_connectome *c, const int32_t *counts,
                                           const uint8_t *stimulated, const int32_t *depth);

#ifdef __cplusplus
}
#endif
#endif
