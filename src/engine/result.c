/* Results: spike events in (trial, step, neuron) order, counts and final state. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/context.h"
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
    /* State probes (bl_result_set_probes): [trial][sample][probe] of state_dtype. */
    int32_t *probe_neurons;
    size_t n_probes;
    uint64_t probe_every, n_samples;
    void *probe_v, *probe_g;
    /* Final per-edge weights of a model with a per-edge w (eq_row.c):
     * [n_trials * n_edge_w], allocated by the first trial that writes them. */
    double *edge_w;
    uint64_t n_edge_w;
    uint8_t *edge_w_done; /* [n_trials]: which trials wrote their row */
    /* bl_result_poll_cancel: asked every poll_every steps while set. */
    const bl_context *poll_ctx;
    uint64_t poll_every;
};

void bl_result_poll_cancel(bl_result *r, const bl_context *ctx, uint64_t every)
{
    r->poll_ctx = ctx;
    r->poll_every = every ? every : 1;
}

double *bl_result_edge_w_row(bl_result *r, uint32_t trial, uint64_t n_edges, bl_error *err)
{
    if (!r->edge_w) {
        if (n_edges && r->n_trials > SIZE_MAX / sizeof(double) / n_edges) {
            bl_fail(err, BL_ERR_NOMEM, "final weights: %u trials x %llu edges is too many", r->n_trials,
                    (unsigned long long)n_edges);
            return NULL;
        }
        r->edge_w = calloc((size_t)r->n_trials * (n_edges ? n_edges : 1), sizeof *r->edge_w);
        r->edge_w_done = calloc(r->n_trials ? r->n_trials : 1, 1);
        if (!r->edge_w || !r->edge_w_done) {
            free(r->edge_w);
            free(r->edge_w_done);
            r->edge_w = NULL;
            r->edge_w_done = NULL;
            bl_fail(err, BL_ERR_NOMEM, "final weights: cannot allocate %llu edges", (unsigned long long)n_edges);
            return NULL;
        }
        r->n_edge_w = n_edges;
    }
    r->edge_w_done[trial - r->first_trial] = 1;
    return r->edge_w + (size_t)(trial - r->first_trial) * r->n_edge_w;
}

const double *bl_result_final_edge_w(const bl_result *r, uint64_t *n_edges)
{
    *n_edges = r->n_edge_w;
    /* Only when every trial wrote its row: a resumed run restores earlier
     * trials without their weights, and zeros there would be wrong data. */
    for (uint32_t t = 0; r->edge_w && t < r->n_trials; t++)
        if (!r->edge_w_done[t])
            return NULL;
    return r->edge_w;
}

bl_status bl_result_set_probes(bl_result *r, const int32_t *neurons, size_t n, uint64_t every_steps,
                               uint64_t n_steps, bl_error *err)
{
    if (every_steps == 0 || n == 0)
        return bl_fail(err, BL_ERR_INVALID, "probes: need at least one neuron and every_steps >= 1");
    for (size_t k = 0; k < n; k++)
        if (neurons[k] < 0 || (uint64_t)neurons[k] >= r->n_neurons)
            return bl_fail(err, BL_ERR_INVALID, "probe %zu: neuron %d outside 0..%llu", k, neurons[k],
                           (unsigned long long)(r->n_neurons ? r->n_neurons - 1 : 0));
    uint64_t samples = n_steps / every_steps, cells = (uint64_t)r->n_trials * samples;
    size_t sz = bl_dtype_size(r->state_dtype);
    if (samples && (cells / samples != r->n_trials || cells > (UINT64_C(1) << 40) / n / sz))
        return bl_fail(err, BL_ERR_INVALID, "probes: %u trials x %llu samples x %zu neurons is too many", r->n_trials,
                       (unsigned long long)samples, n);
    free(r->probe_neurons);
    free(r->probe_v);
    free(r->probe_g);
    r->probe_neurons = malloc(n * sizeof *r->probe_neurons);
    uint64_t values = cells * n > 0 ? cells * n : 1;
    r->probe_v = calloc(values, sz);
    r->probe_g = calloc(values, sz);
    if (!r->probe_neurons || !r->probe_v || !r->probe_g)
        return bl_fail(err, BL_ERR_NOMEM, "probes: cannot allocate %llu samples of %zu neurons",
                       (unsigned long long)cells, n);
    memcpy(r->probe_neurons, neurons, n * sizeof *neurons);
    r->n_probes = n;
    r->probe_every = every_steps;
    r->n_samples = samples;
    return BL_OK;
}

int64_t bl_result_probe_sample(const bl_result *r, int64_t step)
{
    if (!r->n_probes || (uint64_t)(step + 1) % r->probe_every)
        return -1;
    uint64_t k = (uint64_t)(step + 1) / r->probe_every - 1;
    return k < r->n_samples ? (int64_t)k : -1;
}

size_t bl_result_n_probes(const bl_result *r) { return r->n_probes; }
int32_t bl_result_probe_neuron(const bl_result *r, size_t k) { return r->probe_neurons[k]; }

void bl_result_probe_store(bl_result *r, uint32_t trial, int64_t sample, size_t k, const void *v, const void *g)
{
    size_t sz = bl_dtype_size(r->state_dtype);
    uint64_t at = (((uint64_t)(trial - r->first_trial) * r->n_samples + (uint64_t)sample) * r->n_probes + k) * sz;
    memcpy((char *)r->probe_v + at, v, sz);
    memcpy((char *)r->probe_g + at, g, sz);
}

const int32_t *bl_result_probe_neurons(const bl_result *r) { return r->probe_neurons; }

void bl_result_probe_rows(bl_result *r, uint32_t trial, int64_t sample, void **v, void **g)
{
    size_t sz = bl_dtype_size(r->state_dtype);
    uint64_t at = ((uint64_t)(trial - r->first_trial) * r->n_samples + (uint64_t)sample) * r->n_probes * sz;
    *v = (char *)r->probe_v + at;
    *g = (char *)r->probe_g + at;
}

void bl_result_probe_arrays(bl_result *r, uint32_t trial, int64_t step, const void *v, const void *g)
{
    int64_t sample = bl_result_probe_sample(r, step);
    size_t sz = bl_dtype_size(r->state_dtype);
    for (size_t k = 0; sample >= 0 && k < r->n_probes; k++)
        bl_result_probe_store(r, trial, sample, k, (const char *)v + (size_t)r->probe_neurons[k] * sz,
                              (const char *)g + (size_t)r->probe_neurons[k] * sz);
}

const void *bl_result_probe_v(const bl_result *r, uint64_t *n_samples, size_t *n_probes)
{
    *n_samples = r->n_samples;
    *n_probes = r->n_probes;
    return r->probe_v;
}

const void *bl_result_probe_g(const bl_result *r) { return r->probe_g; }

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
    free(r->probe_neurons);
    free(r->probe_v);
    free(r->probe_g);
    free(r->edge_w);
    free(r->edge_w_done);
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
    /* The last step of a delay window: ask whether to stop (issue 26: a
     * Ctrl-C is answered within a window, not at the trial's end). */
    if (r->poll_ctx && ((uint64_t)step + 1) % r->poll_every == 0 && bl_context_cancelled(r->poll_ctx))
        return bl_fail(err, BL_ERR_CANCELLED, "cancelled after %" PRIu64 " of %" PRIu64 " steps of trial %" PRIu32,
                       (uint64_t)step + 1, r->n_steps, trial);
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

size_t bl_result_probe_trial_bytes(const bl_result *r)
{
    return r->n_probes ? (size_t)(r->n_samples * r->n_probes * bl_dtype_size(r->state_dtype)) : 0;
}

/* A resumed run: a trial that ran before the interruption gets back what it
 * left (checkpoint.c); the trial itself is not run again. Its spikes are not
 * events of this result (n_events counts this run's). */
bl_status bl_result_restore_trial(bl_result *r, uint32_t trial, const int32_t *counts, const void *v, const void *g,
                                  const void *probe_v, const void *probe_g, bl_error *err)
{
    if (trial < r->first_trial || trial - r->first_trial >= r->n_trials)
        return bl_fail(err, BL_ERR_INTERNAL, "restored trial %" PRIu32 " outside the result", trial);
    size_t sz = bl_dtype_size(r->state_dtype), pb = bl_result_probe_trial_bytes(r);
    memcpy(bl_result_counts_row(r, trial), counts, r->n_neurons * sizeof *counts);
    memcpy(bl_result_v_row(r, trial), v, r->n_neurons * sz);
    memcpy(bl_result_g_row(r, trial), g, r->n_neurons * sz);
    if (pb) {
        memcpy((char *)r->probe_v + (size_t)(trial - r->first_trial) * pb, probe_v, pb);
        memcpy((char *)r->probe_g + (size_t)(trial - r->first_trial) * pb, probe_g, pb);
    }
    return BL_OK;
}
