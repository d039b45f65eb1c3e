/* Private layout of bl_network: everything a backend needs, resolved once.
 * Backends read it and never modify it. */
#ifndef BL_NETWORK_IMPL_H
#define BL_NETWORK_IMPL_H

#include "brainlesslab/engine.h"
#include "models/lif_phase4c.h"
#include "models/lif_shiu2024.h"

typedef struct bl_net_population {
    const int32_t *neurons; /* sorted, unique, < n_neurons (borrowed from the stimulus) */
    size_t n;
    uint64_t threshold;     /* Bernoulli threshold on a 32-bit word (0 = never) */
    int64_t start_step, stop_step; /* active on [start, stop) */
} bl_net_population;

struct bl_network {
    const bl_connectome *connectome;
    bl_lif_params params;
    uint64_t n_neurons, n_edges;
    const int64_t *offsets;
    const int32_t *targets;
    const int32_t *counts;   /* signed synapse counts (borrowed from the connectome) */
    const int16_t *counts16; /* or these, for a connectome part that stores them narrow */
    bl_shiu_consts shiu;
    bl_p4c_consts p4c;
    int32_t *refractory_steps; /* shiu2024: per neuron (0 for stimulated when the rule is on) */
    int64_t delay_steps;
    uint64_t seed;
    bl_net_population *populations;
    size_t n_populations;
    const int32_t *events; /* pairs (step, neuron), sorted */
    size_t n_events;
    uint8_t *silenced;     /* per neuron */
};

/* Edge weights are computed where they are used rather than stored: the
 * preset's weight is one exact multiply of the count, and a stored copy would
 * cost 8 bytes per edge. Silencing (model.py `silence`) makes every outgoing
 * weight of the neuron 0; it still fires. */
/* The count as an int32 either way: the weight is the same exact product. */
static inline int32_t bl_net_count(const bl_network *net, int64_t e)
{
    return net->counts16 ? (int32_t)net->counts16[e] : net->counts[e];
}

static inline double bl_net_weight64(const bl_network *net, int32_t src, int64_t e)
{
    return bl_shiu_edge_weight(&net->shiu, net->silenced[src] ? 0 : bl_net_count(net, e));
}

static inline float bl_net_weight32(const bl_network *net, int32_t src, int64_t e)
{
    return bl_p4c_edge_weight(&net->p4c, net->silenced[src] ? 0 : bl_net_count(net, e));
}

/* Internal result writers used by backends. */
bl_status bl_result_append_spikes(bl_result *r, uint32_t trial, uint32_t step,
                                  const int32_t *neurons, size_t n, bl_error *err);
/* Append a trial's spikes given as (step, neuron) pairs in (step, neuron) order. */
bl_status bl_result_append_pairs(bl_result *r, uint32_t trial, const int32_t *pairs, uint64_t n_pairs,
                                 bl_error *err);
int32_t *bl_result_counts_row(bl_result *r, uint32_t trial);
void *bl_result_v_row(bl_result *r, uint32_t trial);
void *bl_result_g_row(bl_result *r, uint32_t trial);
void bl_result_set_n_steps(bl_result *r, uint64_t n_steps);

#endif
