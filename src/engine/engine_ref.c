/* The reference backend: the plainest loop over the model functions, one
 * neuron at a time, in the spec's order. It is not optimised; it is the truth
 * every other backend is compared with. Read it beside shared/spec/connectome-lif.md. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"

typedef struct ref_state {
    const bl_network *net;
    uint64_t n;
    void *v, *g;            /* double (shiu2024) or float (phase4c) [n] */
    int64_t *last_spike;    /* shiu2024: step of the last spike */
    int32_t *refractory;    /* phase4c: remaining refractory steps */
    uint8_t *not_refractory;
    uint8_t *spiked;
    float *arrival;         /* phase4c: (delay + 1) slots of [n] */
    int32_t *ring;          /* shiu2024: spikers of the last delay + 1 steps, [slots][n] */
    uint64_t *ring_n;       /* number of spikers in each slot */
    int32_t *spikers;       /* this step's spikers, ascending */
} ref_state;

static void ref_destroy(void *p)
{
    ref_state *s = p;
    if (!s)
        return;
    free(s->v);
    free(s->g);
    free(s->last_spike);
    free(s->refractory);
    free(s->not_refractory);
    free(s->spiked);
    free(s->arrival);
    free(s->ring);
    free(s->ring_n);
    free(s->spikers);
    free(s);
}

static bl_status ref_create(bl_context *ctx, const bl_network *net, void **out, bl_error *err)
{
    ref_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "reference backend: cannot allocate");
    uint64_t n = net->n_neurons ? net->n_neurons : 1;
    uint64_t slots = (uint64_t)net->delay_steps + 1;
    s->net = net;
    s->n = net->n_neurons;
    int shiu = net->params.preset == BL_PRESET_SHIU2024;
    size_t sz = shiu ? sizeof(double) : sizeof(float);
    s->v = malloc(n * sz);
    s->g = malloc(n * sz);
    s->not_refractory = malloc(n);
    s->spiked = malloc(n);
    s->spikers = malloc(n * sizeof *s->spikers);
    int ok = s->v && s->g && s->not_refractory && s->spiked && s->spikers;
    if (shiu) {
        s->last_spike = malloc(n * sizeof *s->last_spike);
        s->ring = malloc(slots * n * sizeof *s->ring);
        s->ring_n = calloc(slots, sizeof *s->ring_n);
        ok = ok && s->last_spike && s->ring && s->ring_n;
    } else {
        s->refractory = malloc(n * sizeof *s->refractory);
        s->arrival = malloc(slots * n * sizeof *s->arrival);
        ok = ok && s->refractory && s->arrival;
    }
    if (!ok) {
        ref_destroy(s);
        return bl_fail(err, BL_ERR_NOMEM, "reference backend: cannot allocate state for %" PRIu64
                       " neurons", net->n_neurons);
    }
    *out = s;
    return BL_OK;
}

/* Whether population p fires an event for neuron i at this step. */
static int poisson_event(const bl_network *net, size_t p, uint32_t trial, int32_t neuron, int64_t step)
{
    const bl_net_population *pop = &net->populations[p];
    if (step < pop->start_step || step >= pop->stop_step || pop->threshold == 0)
        return 0;
    uint32_t word = bl_stream_word(net->seed, trial, (uint32_t)p, (uint32_t)neuron, (uint32_t)step);
    return (uint64_t)word < pop->threshold;
}

/* ---- shiu2024: Brian2's schedule (spec steps 1-5) ---- */
static bl_status run_shiu_trial(ref_state *s, uint32_t trial, uint64_t n_steps, bl_result *result,
                                bl_error *err)
{
    const bl_network *net = s->net;
    const bl_shiu_consts *k = &net->shiu;
    const uint64_t n = s->n, slots = (uint64_t)net->delay_steps + 1;
    double *v = s->v, *g = s->g;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = net->params.v_rest_mv * 0.001; /* model.py: neu.v = v_0 (in volts, as Brian2 scales mV) */
        g[i] = 0.0;
        s->last_spike[i] = INT64_MIN / 2; /* Brian2: lastspike = -inf, never refractory at start */
    }
    memset(s->ring_n, 0, slots * sizeof *s->ring_n);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps; step++) {
        /* 1. groups: refractoriness from integer steps, then the linear update. */
        for (uint64_t i = 0; i < n; i++) {
            s->not_refractory[i] = (step - s->last_spike[i]) >= net->refractory_steps[i];
            if (s->not_refractory[i])
                bl_shiu_integrate(k, &v[i], &g[i]);
        }
        /* 2. thresholds. */
        uint64_t n_spikers = 0;
        for (uint64_t i = 0; i < n; i++)
            if (s->not_refractory[i] && bl_shiu_crosses(k, v[i])) {
                s->spikers[n_spikers++] = (int32_t)i;
                s->not_refractory[i] = 0;
                s->last_spike[i] = step;
            }
        /* 3. synapses: deliver the spikes of step - delay, sources ascending,
         *    each source's edges in CSR order, only into non-refractory targets. */
        if (step >= net->delay_steps) {
            uint64_t slot = (uint64_t)(step - net->delay_steps) % slots;
            const int32_t *src = s->ring + slot * n;
            for (uint64_t a = 0; a < s->ring_n[slot]; a++)
                for (int64_t e = net->offsets[src[a]]; e < net->offsets[src[a] + 1]; e++) {
                    int32_t post = net->targets[e];
                    if (s->not_refractory[post])
                        g[post] += bl_net_weight64(net, src[a], e);
                }
        }
        /* 4. Poisson input into v (PoissonInput order 0), then explicit events. */
        for (size_t p = 0; p < net->n_populations; p++)
            for (size_t a = 0; a < net->populations[p].n; a++) {
                int32_t i = net->populations[p].neurons[a];
                if (s->not_refractory[i] && poisson_event(net, p, trial, i, step))
                    v[i] += k->w_poisson;
            }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1];
            if (s->not_refractory[i])
                v[i] += k->w_poisson;
        }
        /* 5. resets. */
        for (uint64_t a = 0; a < n_spikers; a++)
            bl_shiu_reset(k, &v[s->spikers[a]], &g[s->spikers[a]]);
        /* Remember this step's spikers for delivery delay_steps later. */
        uint64_t slot = (uint64_t)step % slots;
        memcpy(s->ring + slot * n, s->spikers, n_spikers * sizeof *s->spikers);
        s->ring_n[slot] = n_spikers;
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, n_spikers, err);
        if (st)
            return st;
    }
    memcpy(bl_result_v_row(result, trial), v, n * sizeof *v);
    memcpy(bl_result_g_row(result, trial), g, n * sizeof *g);
    return BL_OK;
}

/* ---- phase4c: the seed's eager order (spec steps 1-7) ---- */
static bl_status run_p4c_trial(ref_state *s, uint32_t trial, uint64_t n_steps, bl_result *result,
                               bl_error *err)
{
    const bl_network *net = s->net;
    const bl_p4c_consts *k = &net->p4c;
    const uint64_t n = s->n, slots = (uint64_t)net->delay_steps + 1;
    float *v = s->v, *g = s->g;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = k->v_rest;
        g[i] = 0.0f;
        s->refractory[i] = 0;
    }
    memset(s->arrival, 0, slots * n * sizeof *s->arrival);
    size_t next_event = 0;

    for (int64_t step = 0; step < (int64_t)n_steps; step++) {
        float *arrival = s->arrival + ((uint64_t)step % slots) * n;
        for (uint64_t i = 0; i < n; i++) {
            /* 1. synaptic current, all neurons. */
            g[i] = bl_p4c_synapse(k, g[i], arrival[i]);
            arrival[i] = 0.0f;
            /* 2-4. refractory countdown, membrane, natural spike. */
            s->not_refractory[i] = (uint8_t)bl_p4c_available(&s->refractory[i]);
            v[i] = bl_p4c_membrane(k, v[i], g[i], s->not_refractory[i]);
            s->spiked[i] = s->not_refractory[i] && bl_p4c_crosses(k, v[i]);
        }
        /* 5. forced spikes of available stimulated neurons. */
        for (size_t p = 0; p < net->n_populations; p++)
            for (size_t a = 0; a < net->populations[p].n; a++) {
                int32_t i = net->populations[p].neurons[a];
                if (s->not_refractory[i] && poisson_event(net, p, trial, i, step))
                    s->spiked[i] = 1;
            }
        while (next_event < net->n_events && net->events[2 * next_event] < step)
            next_event++;
        for (; next_event < net->n_events && net->events[2 * next_event] == step; next_event++) {
            int32_t i = net->events[2 * next_event + 1];
            if (s->not_refractory[i])
                s->spiked[i] = 1;
        }
        /* 6. reset spikers; 7. fan out into the slot delay_steps ahead. */
        uint64_t n_spikers = 0;
        float *future = s->arrival + ((uint64_t)(step + net->delay_steps) % slots) * n;
        for (uint64_t i = 0; i < n; i++) {
            if (!s->spiked[i])
                continue;
            s->spikers[n_spikers++] = (int32_t)i;
            bl_p4c_reset(k, &v[i], &s->refractory[i]);
            for (int64_t e = net->offsets[i]; e < net->offsets[i + 1]; e++)
                future[net->targets[e]] += bl_net_weight32(net, (int32_t)i, e);
        }
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, n_spikers, err);
        if (st)
            return st;
    }
    memcpy(bl_result_v_row(result, trial), v, n * sizeof *v);
    memcpy(bl_result_g_row(result, trial), g, n * sizeof *g);
    return BL_OK;
}

static bl_status ref_run(void *p, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                         bl_result *result, bl_error *err)
{
    ref_state *s = p;
    for (uint32_t t = first_trial; t < first_trial + n_trials; t++) {
        bl_status st = s->net->params.preset == BL_PRESET_SHIU2024
                           ? run_shiu_trial(s, t, n_steps, result, err)
                           : run_p4c_trial(s, t, n_steps, result, err);
        if (st)
            return st;
    }
    return BL_OK;
}

const bl_backend bl_backend_reference = {"reference", ref_create, ref_run, ref_destroy, NULL};
