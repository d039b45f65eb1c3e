/* Results: spike events in (trial, step, neuron) order, counts and final state. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/network_impl.h"

struct bl_result {
    uint32_t first_trial, n_trials;
    uint64_t n_neurons, n_steps;
    bl_dtype state_dtype;
    uint64_t n_events, capacity;
    int32_t *ev_trial, *ev_step, *ev_neuron;
    int32_t *counts; /* [n_trials * n_neurons] */
    void *v, *g;     /* [n_trials * n_neurons] of state_dtype */
    /* Observers (bl_result_observe): spikes streamed out instead of kept, and
     * steps simulated so far. n_events and steps_done are updated atomically:
     * backends may append different trials from different threads at once. */
    bl_spike_sink_fn sink;
    bl_steps_fn on_steps;
    void *user;
    uint64_t steps_done;
};

void bl_result_observe(bl_result *r, bl_spike_sink_fn sink, bl_steps_fn on_steps, void *user)
{
    r->sink = sink;
    r->on_steps = on_steps;
    r->user = user;
}

int bl_result_streams(const bl_result *r) { return r->sink != NULL; }

void bl_result_add_steps(bl_result *r, uint64_t steps)
{
    uint64_t done = __atomic_add_fetch(&r->steps_done, steps, __ATOMIC_RELAXED);
    if (r->on_steps)
        r->on_steps(r->user, done);
}

bl_status bl_result_create(const bl_network *net, uint32_t first_trial, uint32_t n_trials,
                           bl_result **out, bl_error *err)
{
    *out = NULL;
    if (n_trials == 0 || (uint64_t)first_trial + n_trials > (uint64_t)INT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "trials %" PRIu32 "..+%" PRIu32 ": need 1..2^31 trials",
                       first_trial, n_trials);
    uint64_t cells = (uint64_t)n_trials * net->n_neurons;
    if (net->n_neurons && cells / net->n_neurons != n_trials)
        return bl_fail(err, BL_ERR_NOMEM, "%" PRIu32 " trials x %" PRIu64 " neurons overflows",
                       n_trials, net->n_neurons);
    bl_result *r = calloc(1, sizeof *r);
    if (!r)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a result");
    r->first_trial = first_trial;
    r->n_trials = n_trials;
    r->n_neurons = net->n_neurons;
    r->state_dtype = net->model->state_dtype;
    size_t sz = bl_dtype_size(r->state_dtype);
    r->counts = calloc(cells ? cells : 1, sizeof *r->counts);
    r->v = calloc(cells ? cells : 1, sz);
    r->g = calloc(cells ? cells : 1, sz);
    if (!r->counts || !r->v || !r->g) {
        bl_result_destroy(r);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate results for %" PRIu64 " neuron-trials", cells);
    }
    *out = r;
    return BL_OK;
}

void bl_result_destroy(bl_result *r)
{
    if (!r)
        return;
    free(r->ev_trial);
    free(r->ev_step);
    free(r->ev_neuron);
    free(r->counts);
    free(r->v);
    free(r->g);
    free(r);
}

bl_status bl_result_append_spikes(bl_result *r, uint32_t trial, uint32_t step, const int32_t *neurons,
                                  size_t n, bl_error *err)
{
    if (trial < r->first_trial || trial - r->first_trial >= r->n_trials)
        return bl_fail(err, BL_ERR_INTERNAL, "spikes for trial %" PRIu32 " outside the result", trial);
    if (r->sink) { /* streamed: counted, handed out, not kept */
        int32_t *row = bl_result_counts_row(r, trial);
        for (size_t i = 0; i < n; i++)
            row[neurons[i]]++;
        __atomic_add_fetch(&r->n_events, (uint64_t)n, __ATOMIC_RELAXED);
        return n ? r->sink(r->user, trial, step, neurons, n, err) : BL_OK;
    }
    if (r->n_events + n > r->capacity) {
        uint64_t cap = r->capacity ? r->capacity : 4096;
        while (cap < r->n_events + n)
            cap *= 2;
        int32_t *t = realloc(r->ev_trial, cap * sizeof *t);
        if (t)
            r->ev_trial = t;
        int32_t *s = realloc(r->ev_step, cap * sizeof *s);
        if (s)
            r->ev_step = s;
        int32_t *u = realloc(r->ev_neuron, cap * sizeof *u);
        if (u)
            r->ev_neuron = u;
        if (!t || !s || !u)
            return bl_fail(err, BL_ERR_NOMEM, "cannot store %" PRIu64 " spike events", r->n_events + n);
        r->capacity = cap;
    }
    int32_t *counts = bl_result_counts_row(r, trial);
    for (size_t i = 0; i < n; i++) {
        r->ev_trial[r->n_events + i] = (int32_t)trial;
        r->ev_step[r->n_events + i] = (int32_t)step;
        r->ev_neuron[r->n_events + i] = neurons[i];
        counts[neurons[i]]++;
    }
    r->n_events += n;
    return BL_OK;
}

bl_status bl_result_append_pairs(bl_result *r, uint32_t trial, const int32_t *pairs, uint64_t n_pairs,
                                 bl_error *err)
{
    int32_t batch[256];
    uint64_t a = 0;
    while (a < n_pairs) {
        int32_t step = pairs[2 * a];
        size_t nb = 0;
        bl_status st;
        for (; a < n_pairs && pairs[2 * a] == step; a++) {
            batch[nb++] = pairs[2 * a + 1];
            if (nb == sizeof batch / sizeof batch[0]) {
                if ((st = bl_result_append_spikes(r, trial, (uint32_t)step, batch, nb, err)))
                    return st;
                nb = 0;
            }
        }
        if (nb && (st = bl_result_append_spikes(r, trial, (uint32_t)step, batch, nb, err)))
            return st;
    }
    return BL_OK;
}

int32_t *bl_result_counts_row(bl_result *r, uint32_t trial)
{
    return r->counts + (uint64_t)(trial - r->first_trial) * r->n_neurons;
}

void *bl_result_v_row(bl_result *r, uint32_t trial)
{
    return (char *)r->v + (uint64_t)(trial - r->first_trial) * r->n_neurons * bl_dtype_size(r->state_dtype);
}

void *bl_result_g_row(bl_result *r, uint32_t trial)
{
    return (char *)r->g + (uint64_t)(trial - r->first_trial) * r->n_neurons * bl_dtype_size(r->state_dtype);
}

void bl_result_set_n_steps(bl_result *r, uint64_t n_steps) { r->n_steps = n_steps; }

uint32_t bl_result_first_trial(const bl_result *r) { return r->first_trial; }
uint32_t bl_result_n_trials(const bl_result *r) { return r->n_trials; }
uint64_t bl_result_n_neurons(const bl_result *r) { return r->n_neurons; }
uint64_t bl_result_n_steps(const bl_result *r) { return r->n_steps; }
uint64_t bl_result_n_events(const bl_result *r) { return __atomic_load_n(&r->n_events, __ATOMIC_RELAXED); }
const int32_t *bl_result_event_trials(const bl_result *r) { return r->ev_trial; }
const int32_t *bl_result_event_steps(const bl_result *r) { return r->ev_step; }
const int32_t *bl_result_event_neurons(const bl_result *r) { return r->ev_neuron; }
const int32_t *bl_result_counts(const bl_result *r) { return r->counts; }
bl_dtype bl_result_state_dtype(const bl_result *r) { return r->state_dtype; }
const void *bl_result_final_v(const bl_result *r) { return r->v; }
const void *bl_result_final_g(const bl_result *r) { return r->g; }
