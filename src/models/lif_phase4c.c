/* Preset phase4c's kernels and its row of the model table: the reference
 * trial (the seed's eager order, spec steps 1-7) and the partition step.
 * Both call the equations of src/models/lif_phase4c.h. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include <float.h>
#include <math.h>

#include "engine/kernel.h"
#include "models/lif_phase4c.h"
#include "models/lif_phase4c_retire.h"

static inline const bl_p4c_consts *K_of(const bl_network *net) { return (const bl_p4c_consts *)net->consts; }

static inline float weight(const bl_p4c_consts *k, const bl_net_fanout *f, int64_t e)
{
    return bl_p4c_edge_weight(k, bl_net_fanout_count(f, e));
}

/* ---- the reference trial ---- */

typedef struct ref_ws {
    uint64_t n;
    float *v, *g;
    int32_t *refractory;     /* remaining refractory steps */
    uint8_t *not_refractory;
    uint8_t *spiked;
    float *arrival;          /* the delay ring: (delay + 1) slots of [n] */
    int32_t *spikers;
} ref_ws;

static void ref_free(void *p)
{
    ref_ws *s = p;
    if (!s)
        return;
    free(s->v);
    free(s->g);
    free(s->refractory);
    free(s->not_refractory);
    free(s->spiked);
    free(s->arrival);
    free(s->spikers);
    free(s);
}

static void *ref_alloc(const bl_network *net)
{
    ref_ws *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    uint64_t n = net->n_neurons ? net->n_neurons : 1, slots = (uint64_t)net->delay_steps + 1;
    s->n = net->n_neurons;
    s->v = malloc(n * sizeof *s->v);
    s->g = malloc(n * sizeof *s->g);
    s->refractory = malloc(n * sizeof *s->refractory);
    s->not_refractory = malloc(n);
    s->spiked = malloc(n);
    s->arrival = malloc(slots * n * sizeof *s->arrival);
    s->spikers = malloc(n * sizeof *s->spikers);
    if (!(s->v && s->g && s->refractory && s->not_refractory && s->spiked && s->arrival && s->spikers)) {
        ref_free(s);
        return NULL;
    }
    return s;
}

static bl_status ref_trial(void *ws, const bl_network *net, uint32_t trial, uint64_t n_steps, bl_result *result,
                           bl_error *err)
{
    ref_ws *s = ws;
    const bl_p4c_consts *k = K_of(net);
    const uint64_t n = s->n, slots = (uint64_t)net->delay_steps + 1;
    float *v = s->v, *g = s->g;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = k->v_rest;
        g[i] = 0.0f;
        s->refractory[i] = 0;
    }
    memset(s->arrival, 0, slots * n * sizeof *s->arrival);
    size_t cursor = 0, fcursor = 0;

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
            if (bl_population_on(&net->populations[p], step))
                for (size_t a = 0; a < net->populations[p].n; a++) {
                    int32_t i = net->populations[p].neurons[a];
                    if (s->not_refractory[i] && bl_poisson_draw(net, p, trial, i, step))
                        s->spiked[i] = 1;
                }
        size_t e0, e1;
        bl_events_at(net, step, &cursor, &e0, &e1);
        for (size_t ev = e0; ev < e1; ev++) {
            int32_t i = net->events[2 * ev + 1];
            if (s->not_refractory[i])
                s->spiked[i] = 1;
        }
        /* Forced spikes (bl_stimulus_add_forced_events): the same rule. */
        bl_forced_at(net, step, &fcursor, &e0, &e1);
        for (size_t ev = e0; ev < e1; ev++) {
            int32_t i = net->forced[2 * ev + 1];
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
            const bl_net_fanout f = bl_net_fanout_of(net, (int32_t)i);
            for (int64_t e = net->offsets[i]; e < net->offsets[i + 1]; e++)
                future[net->targets[e]] += weight(k, &f, e);
        }
        bl_result_probe_arrays(result, trial, step, v, g);
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, n_spikers, err);
        if (st)
            return st;
    }
    memcpy(bl_result_v_row(result, trial), v, n * sizeof *v);
    memcpy(bl_result_g_row(result, trial), g, n * sizeof *g);
    return BL_OK;
}

static const bl_ref_kernel p4c_ref = {ref_alloc, ref_free, ref_trial};

/* ---- the partition step ---- */

enum { F_V, F_G, F_REF, F_ARRIVAL, F_SPIKED, F_SINCE };
static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
static void part_initial(const bl_network *net, int f, void *value)
{
    float v0 = K_of(net)->v_rest, zero = 0.0f;
    if (f == F_SPIKED)
        *(uint8_t *)value = 0;
    else if (f == F_SINCE)
        memset(value, 0, sizeof(int32_t));
    else
        memcpy(value, f == F_V ? &v0 : &zero, sizeof(float));
}

static void part_settle(const bl_network *net, partition *p);
static void part_peek(const bl_network *net, partition *p, int32_t i, int64_t step, void *v, void *g);
/* A resting neuron is never refractory and has no input pending, so the
 * refractory counter and the arrival sum live in the slots only (zeroed on
 * waking); spiked (dedupes natural and forced spikes) and since (the step
 * whose update produced a retired neuron's g) in the range only. */
static const bl_part_kernel p4c_part = {
    6,
    {{4, BL_PART_BOTH}, {4, BL_PART_BOTH}, {4, BL_PART_SLOT}, {4, BL_PART_SLOT}, {1, BL_PART_RANGE},
     {4, BL_PART_RANGE}},
    part_initial, part_step, part_settle, part_peek, NULL, NULL, NULL};

/* ---- retirement (docs/retirement.md) ---- */

uint32_t bl_p4c_subnormal_step(const bl_p4c_consts *k, uint32_t units)
{
    int e;
    double f = frexp((double)k->gd, &e); /* gd = f * 2^e, f in [0.5, 1): 24 significant bits */
    uint64_t m = (uint64_t)ldexp(f, 24);
    int shift = 24 - e;
    if (shift >= 60)
        return 0;
    uint64_t prod = m * (uint64_t)units; /* units < 2^23: fits */
    uint64_t q = prod >> shift, rem = prod - (q << shift), half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return (uint32_t)q;
}

float bl_p4c_g_after(const bl_p4c_consts *k, float g, int64_t updates)
{
    for (; updates > 0 && g != 0.0f && fabsf(g) >= FLT_MIN; updates--) {
        float g1 = bl_p4c_synapse(k, g, 0.0f);
        if (bl_bits32(g1) == bl_bits32(g))
            return g;
        g = g1;
    }
    if (updates <= 0 || bl_bits32(g) == 0)
        return g;
    if (g == 0.0f) /* -0: the next update's + 0 makes it +0, and it stays */
        return 0.0f;
    uint32_t units = (uint32_t)ldexpf(fabsf(g), 149);
    for (; updates > 0 && units != 0; updates--) {
        uint32_t next = bl_p4c_subnormal_step(k, units);
        if (next == units)
            break;
        units = next;
    }
    /* fl(x + 0) keeps a nonzero x and turns a zero into +0 */
    return units ? copysignf(ldexpf((float)units, -149), g) : 0.0f;
}

/* Back to the range arrays, remembering the step whose update produced g. */
static inline void retire(partition *p, int32_t a, int64_t step)
{
    int32_t r = p->act_neuron[a] - p->lo;
    bl_part_rest(p, &p4c_part, a);
    ((int32_t *)p->rng[F_SINCE])[r] = (int32_t)step;
}

/* The slot of owned neuron i holding its state as of the end of step `upto`
 * (a resting neuron is available every step, so it missed every update). */
static inline int32_t p4c_wake(const bl_p4c_consts *k, partition *p, int32_t i, int64_t upto)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    if (a >= 0)
        return a;
    a = bl_part_wake(p, &p4c_part, i);
    float *g = &((float *)p->act[F_G])[a];
    int64_t since = ((const int32_t *)p->rng[F_SINCE])[r];
    if (bl_bits32(*g) != 0 && upto > since)
        *g = bl_p4c_g_after(k, *g, upto - since);
    return a;
}

/* A probe's v and g after `step`: a retired neuron's g is reconstructed
 * exactly as a wake would (its v does not move while it rests), and stored
 * back with since = step, as part_settle does (exact: bl_p4c_g_after of
 * n1 + n2 updates is that of n2 after n1), so that the next sample replays
 * only the updates since this one. */
static void part_peek(const bl_network *net, partition *p, int32_t i, int64_t step, void *v, void *g)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    float vv, gg;
    if (a >= 0) {
        vv = ((const float *)p->act[F_V])[a];
        gg = ((const float *)p->act[F_G])[a];
    } else {
        vv = ((const float *)p->rng[F_V])[r];
        gg = ((const float *)p->rng[F_G])[r];
        int32_t *since = p->rng[F_SINCE];
        if (bl_bits32(gg) != 0 && step > since[r]) {
            gg = bl_p4c_g_after(K_of(net), gg, step - since[r]);
            ((float *)p->rng[F_G])[r] = gg;
            since[r] = (int32_t)step;
        }
    }
    memcpy(v, &vv, sizeof vv);
    memcpy(g, &gg, sizeof gg);
}

static void part_settle(const bl_network *net, partition *p)
{
    const bl_p4c_consts *k = K_of(net);
    float *g = p->rng[F_G];
    int32_t *since = p->rng[F_SINCE];
    for (int32_t r = 0; r < p->hi - p->lo; r++)
        if (p->slot_of[r] < 0 && bl_bits32(g[r]) != 0) {
            if (p->step > since[r])
                g[r] = bl_p4c_g_after(k, g[r], p->step - since[r]);
            since[r] = (int32_t)p->step;
        }
}

/* Steps 1-4 over the active slots in blocks, as shiu_update: the loop only
 * updates state and marks blocks that may hold a natural spike or a neuron
 * back at rest. After it, a slot is available exactly when its refractory
 * counter is 0 (bl_p4c_available counts down, then tests for 0). */
#define P4C_BLOCK 64
__attribute__((target_clones("avx512f", "avx2", "default")))
static int p4c_update(const bl_p4c_consts *k_in, uint64_t n, float *restrict av, float *restrict ag,
                      int32_t *restrict ref, float *restrict arrival, uint8_t *restrict block_hit)
{
    int any = 0;
    /* a local copy: the stores below cannot alias it, so its fields stay in
     * registers and the loop vectorises (it did not before) */
    const bl_p4c_consts kk = *k_in, *k = &kk;
    for (uint64_t b0 = 0; b0 < n; b0 += P4C_BLOCK) {
        uint64_t end = b0 + P4C_BLOCK < n ? b0 + P4C_BLOCK : n;
        int32_t hit = 0;
        for (uint64_t a = b0; a < end; a++) {
            float g = bl_p4c_synapse(k, ag[a], arrival[a]);
            arrival[a] = 0.0f;
            int32_t r = ref[a];
            int32_t avail = bl_p4c_available(&r);
            /* bl_p4c_membrane(k, v0, g, avail), written as a select of both
             * sides so that the loop vectorises (the same value either way) */
            float v0 = av[a], v1 = bl_p4c_membrane(k, v0, g, 1), v = avail ? v1 : k->v_reset;
            ref[a] = r;
            av[a] = v;
            ag[a] = g;
            /* inert: this step left v unchanged for this g, and would for 0 */
            int32_t inert = avail & (v == v0) & (bl_p4c_membrane(k, v, 0.0f, 1) == v);
            hit |= (avail & bl_p4c_crosses(k, v)) | inert;
        }
        block_hit[b0 / P4C_BLOCK] = hit != 0;
        any |= hit != 0;
    }
    return any;
}

static inline void p4c_spike(partition *p, i32_list *spikers, int32_t i)
{
    uint8_t *spiked = p->rng[F_SPIKED];
    if (!spiked[i - p->lo]) {
        spiked[i - p->lo] = 1;
        p->failed |= !bl_list_push(spikers, i);
    }
}

/* The arrival slot of step s holds exactly the spikes of step s - delay, so
 * summing them here, sources ascending, is the seed's fan-out at s - delay. */
static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_p4c_consts *k = K_of(net);
    const int32_t lo = p->lo;
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        bl_owned_edges(net, p, arrivals[s], &e0, &e1);
        const bl_net_fanout f = bl_net_fanout_of(net, arrivals[s]);
        for (int64_t e = e0; e < e1; e++) {
            /* before this step's update: its state as of the previous step */
            int32_t a = p4c_wake(k, p, net->targets[e], step - 1);
            ((float *)p->act[F_ARRIVAL])[a] += weight(k, &f, e);
        }
    }
    /* 1-4 over the active slots; act_flag holds one mark per block here. */
    spikers->n = 0;
    if (p4c_update(k, p->n_active, p->act[F_V], p->act[F_G], p->act[F_REF], p->act[F_ARRIVAL], p->act_flag)) {
        const float *av = p->act[F_V], *ag = p->act[F_G];
        const int32_t *aref = p->act[F_REF];
        for (uint64_t b = (p->n_active + P4C_BLOCK - 1) / P4C_BLOCK; b-- > 0;) {
            if (!p->act_flag[b])
                continue;
            uint64_t end = (b + 1) * P4C_BLOCK < p->n_active ? (b + 1) * P4C_BLOCK : p->n_active;
            for (uint64_t a = end; a-- > b * P4C_BLOCK;) { /* descending: removal moves scanned slots */
                int avail = aref[a] == 0;
                if (avail && bl_p4c_crosses(k, av[a]))
                    p4c_spike(p, spikers, p->act_neuron[a]);
                else if (skip_ok && avail && !bl_p4c_crosses(k, av[a]) &&
                         bl_bits32(bl_p4c_membrane(k, av[a], ag[a], 1)) == bl_bits32(av[a]) &&
                         bl_bits32(bl_p4c_membrane(k, av[a], 0.0f, 1)) == bl_bits32(av[a]))
                    retire(p, (int32_t)a, step);
            }
        }
    }
    /* 5. forced spikes of available stimulated neurons (a resting neuron is
     *    available: its refractory counter is 0). */
    const uint8_t *spiked = p->rng[F_SPIKED];
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!bl_population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s], a = p->slot_of[i - lo];
            int avail = a < 0 || ((const int32_t *)p->act[F_REF])[a] == 0;
            if (avail && !spiked[i - lo] && bl_poisson_draw(net, q, trial, i, step))
                p4c_spike(p, spikers, i);
        }
    }
    size_t ev0, ev1;
    bl_events_at(net, step, next_event, &ev0, &ev1);
    for (size_t ev = ev0; ev < ev1; ev++) {
        int32_t i = net->events[2 * ev + 1];
        if (i < p->lo || i >= p->hi)
            continue;
        int32_t a = p->slot_of[i - lo];
        if (a < 0 || ((const int32_t *)p->act[F_REF])[a] == 0)
            p4c_spike(p, spikers, i);
    }
    bl_forced_at(net, step, &p->next_forced, &ev0, &ev1);
    for (size_t ev = ev0; ev < ev1; ev++) {
        int32_t i = net->forced[2 * ev + 1];
        if (i < p->lo || i >= p->hi)
            continue;
        int32_t a = p->slot_of[i - lo];
        if (a < 0 || ((const int32_t *)p->act[F_REF])[a] == 0)
            p4c_spike(p, spikers, i);
    }
    /* 6. resets (7, the fan-out, happens delay steps later: see above). */
    bl_sort_spikers(spikers);
    for (uint64_t s = 0; s < spikers->n; s++) {
        int32_t i = spikers->v[s], a = p4c_wake(k, p, i, step); /* after this step's update */
        ((uint8_t *)p->rng[F_SPIKED])[i - lo] = 0;
        bl_p4c_reset(k, &((float *)p->act[F_V])[a], &((int32_t *)p->act[F_REF])[a]);
    }
}

/* ---- the row ---- */

static void make_consts(const bl_lif_params *p, void *out) { *(bl_p4c_consts *)out = bl_p4c_consts_make(p); }

/* v = v_rest, g = +0, not refractory is one step's fixed point that never fires. */
static int rest_is_fixed_point(const bl_network *net)
{
    const bl_p4c_consts *k = K_of(net);
    float g = bl_p4c_synapse(k, 0.0f, 0.0f);
    float v = bl_p4c_membrane(k, k->v_rest, g, 1);
    return bl_bits32(v) == bl_bits32(k->v_rest) && bl_bits32(g) == 0 && !bl_p4c_crosses(k, k->v_rest);
}

/* The seed runtime's constants (Shiu's published values), float32; Poisson
 * targets keep their refractory period. */
const bl_model bl_model_phase4c = {
    .name = "phase4c",
    .state_dtype = BL_DTYPE_FLOAT32,
    .defaults = {.preset = BL_PRESET_PHASE4C, .dt_ms = 0.1, .v_rest_mv = -52.0, .v_reset_mv = -52.0,
                 .v_th_mv = -45.0, .tau_m_ms = 20.0, .tau_syn_ms = 5.0, .refractory_ms = 2.2, .delay_ms = 1.8,
                 .w_syn_mv = 0.275, .f_poi = 250.0, .poisson_refractory_zero = 0},
    .consts_size = sizeof(bl_p4c_consts),
    .make_consts = make_consts,
    .validate = NULL,
    .rest_is_fixed_point = rest_is_fixed_point,
    .ref = &p4c_ref,
    .part = &p4c_part,
};
