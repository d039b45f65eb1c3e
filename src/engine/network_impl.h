/* Private layout of bl_network: everything a backend needs, resolved once.
 * Backends read it and never modify it. */
#ifndef BL_NETWORK_IMPL_H
#define BL_NETWORK_IMPL_H

#include "brainlesslab/engine.h"
#include "engine/kernel_ops.h"
#include "models/model_row.h"

typedef struct bl_net_population {
    const int32_t *neurons; /* sorted, unique, < n_neurons (borrowed from the stimulus) */
    size_t n;
    uint64_t threshold;     /* Bernoulli threshold on a 32-bit word (0 = never) */
    int64_t start_step, stop_step; /* active on [start, stop) */
    int force;                     /* forced spikes, not input (bl_stimulus_set_force) */
} bl_net_population;

struct bl_network {
    const bl_connectome *connectome;
    bl_lif_params params;
    uint64_t n_neurons, n_edges;
    const int64_t *offsets;
    const int32_t *targets;
    const int32_t *counts;   /* signed synapse counts (borrowed from the connectome) */
    const int16_t *counts16; /* or these, for a connectome part that stores them narrow */
    const bl_model *model;     /* the preset's row of the model table */
    const void *consts;        /* its constants (model->make_consts), model->consts_size bytes */
    int32_t *refractory_steps; /* per neuron (0 for stimulated when poisson_refractory_zero is on) */
    int64_t delay_steps;
    uint64_t seed;
    bl_net_population *populations;
    size_t n_populations;
    const int32_t *events; /* pairs (step, neuron), sorted */
    size_t n_events;
    const int32_t *forced; /* forced spikes: pairs (step, neuron), sorted */
    size_t n_forced;
    uint8_t *silenced;     /* per neuron */
    const struct bl_current_in *currents; /* current injection (borrowed from the stimulus; */
    size_t n_currents;                    /* models from equations only: src/models/eq_current.c) */
};

/* Edge weights are computed where they are used rather than stored: the
 * preset's weight is one exact multiply of the count, and a stored copy would
 * cost 8 bytes per edge. Silencing (model.py `silence`) makes every outgoing
 * weight of the neuron 0; it still fires. */
/* One spiking source's fan-out, looked up once per spike rather than once
 * per edge: where its counts are (int16 for a connectome part that stores
 * them narrow; the weight is the same exact product of the int32 value) and
 * whether it is silenced (every count then 0). */
typedef struct bl_net_fanout {
    const int32_t *c32;
    const int16_t *c16;
    int silenced;
} bl_net_fanout;

static inline bl_net_fanout bl_net_fanout_of(const bl_network *net, int32_t src)
{
    bl_net_fanout f = {net->counts, net->counts16, net->silenced[src]};
    return f;
}

static inline int32_t bl_net_fanout_count(const bl_net_fanout *f, int64_t e)
{
    return f->silenced ? 0 : f->c16 ? (int32_t)f->c16[e] : f->c32[e];
}

/* The reference backend's cancellation point inside a trial: its kernels
 * (src/models/) append every step's spikes, so while ctx is set,
 * bl_result_append_spikes asks bl_context_cancelled after every `every`-th
 * step (a delay window) and fails with BL_ERR_CANCELLED when told to stop.
 * NULL ctx: never asks (the default). Single-threaded use only. */
void bl_result_poll_cancel(bl_result *r, const bl_context *ctx, uint64_t every);
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
/* Bytes of one trial's probe samples (v or g; 0 without probes). */
size_t bl_result_probe_trial_bytes(const bl_result *r);
/* A resumed run (src/experiment/checkpoint.c): a trial's counts, final state
 * and probe samples as an earlier run left them (n_events unchanged). */
bl_status bl_result_restore_trial(bl_result *r, uint32_t trial, const int32_t *counts, const void *v, const void *g,
                                  const void *probe_v, const void *probe_g, bl_error *err);
/* A sink is set: spikes are handed out as they are appended, so a backend
 * may append a trial's spikes in pieces during the trial (bounded memory). */
int bl_result_streams(const bl_result *r);
/* steps more steps were simulated (summed over the trials in flight);
 * thread-safe; calls the result's step observer. */
void bl_result_add_steps(bl_result *r, uint64_t steps);
/* Probes: the sample index the state after `step` goes to, or -1 (none). */
int64_t bl_result_probe_sample(const bl_result *r, int64_t step);
size_t bl_result_n_probes(const bl_result *r);
int32_t bl_result_probe_neuron(const bl_result *r, size_t k);
/* Probe k's v and g (one value each, the state dtype) at a sample. */
void bl_result_probe_store(bl_result *r, uint32_t trial, int64_t sample, size_t k, const void *v, const void *g);
/* The probed neurons ([bl_result_n_probes]), and a sample's rows of v and g
 * (a value per probe, the state dtype) to fill in place: the cpu backend
 * probes every step, so it writes there without a call per value. */
const int32_t *bl_result_probe_neurons(const bl_result *r);
void bl_result_probe_rows(bl_result *r, uint32_t trial, int64_t sample, void **v, void **g);
/* A whole-network state after `step` (the reference kernels): stores the
 * probes when the step is sampled. */
void bl_result_probe_arrays(bl_result *r, uint32_t trial, int64_t step, const void *v, const void *g);
/* A trial's row of final per-edge weights ([n_edges], a model with a per-edge
 * w: docs/models.md "Synapses"), allocated for every trial on first use; NULL
 * (err set) when it cannot be. The record writes them as final_w.npy. */
double *bl_result_edge_w_row(bl_result *r, uint32_t trial, uint64_t n_edges, bl_error *err);
/* [trials][*n_edges], or NULL unless every trial wrote its row (a resumed
 * run's restored trials did not: its record then has no final_w.npy). */
const double *bl_result_final_edge_w(const bl_result *r, uint64_t *n_edges);

#endif
