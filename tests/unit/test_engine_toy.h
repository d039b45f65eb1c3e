/* A toy model, compiled only into test_engine: the smallest complete row of
 * the model table (equations, reference kernel, partition kernel, defaults),
 * registered at run time. Its arithmetic is dyadic (halving and adding small
 * integers), so traces are exact by hand, and negative input decays through
 * the subnormals to exactly 0, so neurons return to rest.
 *
 * Per step s: (a) g += the weights of the spikes of s - delay, sources
 * ascending; (b) v = v/2 + g, g = 0; (c) v += f_poi * w_syn per event;
 * (d) spike when v >= v_th, then v = v_reset. No refractory period. */
#ifndef BL_TEST_ENGINE_TOY_H
#define BL_TEST_ENGINE_TOY_H

#include <stdlib.h>
#include <string.h>

#include "engine/kernel.h"
#include "models/bl_hd.h"

typedef struct toy_consts {
    double th, reset, w_syn, w_event;
} toy_consts;

/* the equations */
static inline BL_HD void toy_update(double *v, double *g)
{
    *v = *v * 0.5 + *g;
    *g = 0.0;
}
static inline BL_HD int toy_crosses(const toy_consts *k, double v) { return v >= k->th; }

static inline const toy_consts *toy_k(const bl_network *net) { return (const toy_consts *)net->consts; }

/* ---- reference kernel ---- */

typedef struct toy_ws {
    double *v, *g, *arrival; /* arrival: (delay + 1) slots of [n] */
    int32_t *spikers;
} toy_ws;

static void toy_ref_free(void *p)
{
    toy_ws *s = p;
    free(s->v);
    free(s->g);
    free(s->arrival);
    free(s->spikers);
    free(s);
}

static void *toy_ref_alloc(const bl_network *net)
{
    toy_ws *s = calloc(1, sizeof *s);
    uint64_t n = net->n_neurons ? net->n_neurons : 1;
    s->v = malloc(n * sizeof *s->v);
    s->g = malloc(n * sizeof *s->g);
    s->arrival = malloc(((size_t)net->delay_steps + 1) * n * sizeof *s->arrival);
    s->spikers = malloc(n * sizeof *s->spikers);
    return s;
}

static bl_status toy_ref_trial(void *ws, const bl_network *net, uint32_t trial, uint64_t n_steps, bl_result *result,
                               bl_error *err)
{
    toy_ws *s = ws;
    const toy_consts *k = toy_k(net);
    const uint64_t n = net->n_neurons, slots = (uint64_t)net->delay_steps + 1;
    for (uint64_t i = 0; i < n; i++)
        s->v[i] = s->g[i] = 0.0;
    memset(s->arrival, 0, slots * n * sizeof *s->arrival);
    size_t cursor = 0;
    for (int64_t step = 0; step < (int64_t)n_steps; step++) {
        double *arr = s->arrival + ((uint64_t)step % slots) * n;
        for (uint64_t i = 0; i < n; i++) {
            s->g[i] += arr[i];
            arr[i] = 0.0;
            toy_update(&s->v[i], &s->g[i]);
        }
        for (size_t q = 0; q < net->n_populations; q++)
            if (bl_population_on(&net->populations[q], step))
                for (size_t a = 0; a < net->populations[q].n; a++)
                    if (bl_poisson_draw(net, q, trial, net->populations[q].neurons[a], step))
                        s->v[net->populations[q].neurons[a]] += k->w_event;
        size_t e0, e1;
        bl_events_at(net, step, &cursor, &e0, &e1);
        for (size_t ev = e0; ev < e1; ev++)
            s->v[net->events[2 * ev + 1]] += k->w_event;
        uint64_t ns = 0;
        double *future = s->arrival + ((uint64_t)(step + net->delay_steps) % slots) * n;
        for (uint64_t i = 0; i < n; i++) {
            if (!toy_crosses(k, s->v[i]))
                continue;
            s->spikers[ns++] = (int32_t)i;
            s->v[i] = k->reset;
            bl_net_fanout f = bl_net_fanout_of(net, (int32_t)i);
            for (int64_t e = net->offsets[i]; e < net->offsets[i + 1]; e++)
                future[net->targets[e]] += (double)bl_net_fanout_count(&f, e) * k->w_syn;
        }
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, ns, err);
        if (st)
            return st;
    }
    memcpy(bl_result_v_row(result, trial), s->v, n * sizeof *s->v);
    memcpy(bl_result_g_row(result, trial), s->g, n * sizeof *s->g);
    return BL_OK;
}

static const bl_ref_kernel toy_ref = {toy_ref_alloc, toy_ref_free, toy_ref_trial};

/* ---- partition kernel ---- */

static void toy_initial(const bl_network *net, int f, void *value)
{
    (void)net;
    (void)f;
    memset(value, 0, sizeof(double));
}

static void toy_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                     const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
static const bl_part_kernel toy_part = {2, {{8, BL_PART_BOTH}, {8, BL_PART_BOTH}}, toy_initial, toy_step,
                                        NULL, NULL, NULL, NULL, NULL};

static void toy_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                     const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_part_kernel *K = &toy_part;
    const toy_consts *k = toy_k(net);
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        bl_owned_edges(net, p, arrivals[s], &e0, &e1);
        bl_net_fanout f = bl_net_fanout_of(net, arrivals[s]);
        for (int64_t e = e0; e < e1; e++) {
            int32_t a = bl_part_wake(p, K, net->targets[e]);
            ((double *)p->act[1])[a] += (double)bl_net_fanout_count(&f, e) * k->w_syn;
        }
    }
    for (uint64_t a = 0; a < p->n_active; a++)
        toy_update(&((double *)p->act[0])[a], &((double *)p->act[1])[a]);
    for (size_t q = 0; q < net->n_populations; q++)
        if (bl_population_on(&net->populations[q], step))
            for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
                int32_t i = net->populations[q].neurons[s];
                if (bl_poisson_draw(net, q, trial, i, step))
                    ((double *)p->act[0])[bl_part_wake(p, K, i)] += k->w_event;
            }
    size_t ev0, ev1;
    bl_events_at(net, step, next_event, &ev0, &ev1);
    for (size_t ev = ev0; ev < ev1; ev++) {
        int32_t i = net->events[2 * ev + 1];
        if (i >= p->lo && i < p->hi)
            ((double *)p->act[0])[bl_part_wake(p, K, i)] += k->w_event;
    }
    spikers->n = 0;
    for (uint64_t a = p->n_active; a-- > 0;) {
        double *v = &((double *)p->act[0])[a];
        if (toy_crosses(k, *v)) {
            *v = k->reset;
            p->failed |= !bl_list_push(spikers, p->act_neuron[a]);
        } else if (skip_ok && *v == 0.0 && ((double *)p->act[1])[a] == 0.0) {
            bl_part_rest(p, K, (int32_t)a);
        }
    }
    bl_sort_spikers(spikers);
}

/* ---- the row ---- */

static void toy_make_consts(const bl_lif_params *p, void *out)
{
    toy_consts *k = out;
    k->th = p->v_th_mv;
    k->reset = p->v_reset_mv;
    k->w_syn = p->w_syn_mv;
    k->w_event = p->f_poi * p->w_syn_mv;
}

static int toy_rest_is_fixed_point(const bl_network *net)
{
    double v = 0.0, g = 0.0;
    toy_update(&v, &g);
    return v == 0.0 && g == 0.0 && !toy_crosses(toy_k(net), 0.0);
}

static const bl_model bl_test_toy_model = {
    .name = "toy",
    .state_dtype = BL_DTYPE_FLOAT64,
    .defaults = {.dt_ms = 0.1, .v_rest_mv = 0.0, .v_reset_mv = 0.0, .v_th_mv = 3.0, .tau_m_ms = 20.0,
                 .tau_syn_ms = 5.0, .refractory_ms = 0.0, .delay_ms = 0.2, .w_syn_mv = 1.0, .f_poi = 4.0,
                 .poisson_refractory_zero = 0},
    .consts_size = sizeof(toy_consts),
    .make_consts = toy_make_consts,
    .validate = NULL,
    .rest_is_fixed_point = toy_rest_is_fixed_point,
    .ref = &toy_ref,
    .part = &toy_part,
};

#endif
