/* A reference network of equation models: several populations, each with its
 * own compiled model (eqmodel.h), projections as explicit edge lists with an
 * on_pre statement block per receptor, spike sources (explicit times and
 * Poisson from the counter-based streams), current sources (a variable set
 * per step) and recording. It is the engine under pyNN.brainlesslab
 * (docs/pynn.md): the plain, single-threaded execution a PyNN script needs,
 * in Brian2's schedule so that it can be compared with pyNN.brian2.
 *
 * One time step, at t = step*dt:
 *   start       current sources whose change falls on this step:
 *               var += amplitude - previous amplitude (pyNN.brian2's rule)
 *   groups      state update of every neuron population (creation order)
 *   thresholds  threshold and reset of every neuron population; spike
 *               sources emit (array: the steps given; Poisson: counter
 *               (step, neuron, population, 0) of the stream, word 0 below
 *               floor(rate*dt*2^32), while start <= t <= stop)
 *   synapses    every projection (creation order) queues the spikes of this
 *               step at step + delay and runs the on_pre block of each edge
 *               due now, in queue order (Brian2's SpikeQueue order); then
 *               the postsynaptic side of every plastic projection (STDP)
 *   end         recording (state after the step; spikes of the step)
 * A reset runs before synaptic delivery (Brian2 runs it after): the two
 * differ only for an on_pre that writes a variable the reset writes.
 *
 * Inputs are bounded (BL_EQ_NET_MAX_*); every failure names the population,
 * projection or source and the index at fault. */
#ifndef BRAINLESSLAB_EQNET_H
#define BRAINLESSLAB_EQNET_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/eqmodel.h"
#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_EQ_NET_MAX_POPS 4096u
#define BL_EQ_NET_MAX_NEURONS (1u << 26)   /* in one population */
#define BL_EQ_NET_MAX_EDGES (1ull << 31)   /* in one projection */
#define BL_EQ_NET_MAX_DELAY 1000000u       /* steps */
#define BL_EQ_NET_MAX_RECEPTORS 16u        /* on_pre blocks per population */

typedef struct bl_eq_net bl_eq_net;

/* dt_s: the step in seconds (every model must be compiled for it); seed:
 * the Poisson sources' stream. */
BL_API bl_status bl_eq_net_create(double dt_s, uint64_t seed, bl_eq_net **out, bl_error *err);
BL_API void bl_eq_net_destroy(bl_eq_net *net);

/* A population of n neurons of model `src` (compiled here at the net's dt;
 * its on_pre is ignored: receptors carry theirs). Its id to *pop. */
BL_API bl_status bl_eq_net_add_neurons(bl_eq_net *net, const bl_eq_source *src, uint32_t n, uint32_t *pop,
                                       bl_error *err);
/* A receptor of population pop: on_pre statements ("g_e += w") compiled
 * against the population's model with `w` of dimension `w_unit` (a quantity
 * text such as "1 siemens"). Its index to *receptor. */
BL_API bl_status bl_eq_net_add_receptor(bl_eq_net *net, uint32_t pop, const char *on_pre, const char *w_unit,
                                        uint32_t *receptor, bl_error *err);
/* n sources emitting at explicit steps: neuron i's steps are
 * steps[offsets[i] .. offsets[i+1]), strictly increasing, >= 0. */
BL_API bl_status bl_eq_net_add_array_source(bl_eq_net *net, uint32_t n, const uint64_t *offsets,
                                            const int64_t *steps, uint32_t *pop, bl_error *err);
/* n Poisson sources: rate (Hz), and the window [start_s, stop_s] of each. */
BL_API bl_status bl_eq_net_add_poisson_source(bl_eq_net *net, uint32_t n, const double *rate_hz,
                                              const double *start_s, const double *stop_s, uint32_t *pop,
                                              bl_error *err);
/* Between runs: a source's spikes or Poisson parameters replaced (PyNN's
 * set() of spike_times, rate, start, duration). An array source's spikes
 * before the next step are dropped, as Brian2 drops spikes in the past. */
BL_API bl_status bl_eq_net_set_array_source(bl_eq_net *net, uint32_t pop, const uint64_t *offsets,
                                            const int64_t *steps, bl_error *err);
BL_API bl_status bl_eq_net_set_poisson_source(bl_eq_net *net, uint32_t pop, const double *rate_hz,
                                              const double *start_s, const double *stop_s, bl_error *err);
/* Edges from pre to (post, receptor): weight in SI units of the receptor's
 * w, delay in whole steps. The projection's index (0, 1, ...) to *proj. */
BL_API bl_status bl_eq_net_add_projection(bl_eq_net *net, uint32_t pre, uint32_t post, uint32_t receptor,
                                          size_t n_edges, const uint32_t *pre_idx, const uint32_t *post_idx,
                                          const double *weight, const uint32_t *delay_steps, size_t *proj,
                                          bl_error *err);
/* Spike-pair STDP on a projection, pyNN.brian2's STDPMechanism with
 * SpikePairRule and AdditiveWeightDependence, in Brian2's generated order
 * (traces P, M per edge, updated when an event reaches the edge):
 *   presynaptic event (after the delay), at t:
 *     M *= exp(-(t - last)/tau_minus); P *= exp(-(t - last)/tau_plus);
 *     P += A_plus; w += M*w_max; w = max(w, w_min) (as int(w >= w_min)*w +
 *     int(w < w_min)*w_min); then the receptor's on_pre with w; last = t
 *   postsynaptic spike, at t (after every presynaptic pathway of the step):
 *     the same decay; M -= A_minus; w += P*w_max; w = min(w, w_max); last = t
 * Weights, w_min and w_max are in the receptor's SI units. Set before the
 * first step. */
typedef struct bl_eq_net_stdp {
    double tau_plus_s, tau_minus_s, a_plus, a_minus, w_min, w_max;
} bl_eq_net_stdp;
BL_API bl_status bl_eq_net_set_stdp(bl_eq_net *net, size_t proj, const bl_eq_net_stdp *rule, bl_error *err);
/* Edges of projection proj (in the order added), and their current weights
 * in that order (out has room for n = the count). */
BL_API size_t bl_eq_net_n_edges(const bl_eq_net *net, size_t proj);
BL_API bl_status bl_eq_net_weights(const bl_eq_net *net, size_t proj, double *out, size_t n, bl_error *err);
/* A current source on variable `var` of neurons targets[0..n_targets) of
 * pop: at step steps[k] (strictly increasing) it becomes amps[k]. */
BL_API bl_status bl_eq_net_add_current(bl_eq_net *net, uint32_t pop, const char *var, size_t n_targets,
                                       const uint32_t *targets, size_t n_changes, const int64_t *steps,
                                       const double *amps, bl_error *err);
/* The n values of a state variable of a neuron population (read, write). */
BL_API double *bl_eq_net_var(bl_eq_net *net, uint32_t pop, const char *name);
BL_API uint32_t bl_eq_net_pop_size(const bl_eq_net *net, uint32_t pop);
/* Record a variable of pop (every step, after the step). */
BL_API bl_status bl_eq_net_record(bl_eq_net *net, uint32_t pop, const char *var, bl_error *err);
BL_API bl_status bl_eq_net_run(bl_eq_net *net, uint64_t n_steps, bl_error *err);
BL_API uint64_t bl_eq_net_steps(const bl_eq_net *net);
/* Spikes of pop since the start (or the last clear): steps and indices. */
BL_API size_t bl_eq_net_spikes(const bl_eq_net *net, uint32_t pop, const uint64_t **steps, const uint32_t **idx);
/* A recorded variable: *n_samples rows of pop_size values (row-major). */
BL_API const double *bl_eq_net_samples(const bl_eq_net *net, uint32_t pop, const char *var, size_t *n_samples);
/* Forget spikes and samples recorded so far. */
BL_API void bl_eq_net_clear_recordings(bl_eq_net *net);

#ifdef __cplusplus
}
#endif
#endif
