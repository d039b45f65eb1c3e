/* Preset shiu2024's kernels and its row of the model table: the reference
 * trial (Brian2's schedule, spec steps 1-5, one neuron at a time) and the
 * partition step (the same arithmetic over the active slots of a range of
 * neurons, resting neurons skipped). Both call the equations of
 * src/models/lif_shiu2024.h; neither restates them. */
#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <float.h>
#include <math.h>

#include "engine/kernel.h"
#include "models/lif_shiu2024.h"
#include "models/lif_shiu2024_retire.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))
#define PREFETCH 16 /* edges ahead */

/* The network's constants: the model's, then what the partition step derives
 * from them once (not every step). */
typedef struct shiu_net_consts {
    bl_shiu_consts k;
    int reset_fixed; /* bl_shiu_reset_is_fixed_point(&k): the update needs no refractory test */
} shiu_net_consts;

static inline const shiu_net_consts *NK_of(const bl_network *net) { return (const shiu_net_consts *)net->consts; }
static inline const bl_shiu_consts *K_of(const bl_network *net) { return &NK_of(net)->k; }

static inline double weight(const bl_shiu_consts *k, const bl_net_fanout *f, int64_t e)
{
    return bl_shiu_edge_weight(k, bl_net_fanout_count(f, e));
}

/* ---- the reference trial ---- */

typedef struct ref_ws {
    uint64_t n;
    double *v, *g;
    int64_t *last_spike;     /* step of the last spike */
    uint8_t *not_refractory;
    int32_t *ring;           /* spikers of the last delay + 1 steps, [slots][n] */
    uint64_t *ring_n;        /* number of spikers in each slot */
    int32_t *spikers;        /* this step's spikers, ascending */
} ref_ws;

static void ref_free(void *p)
{
    ref_ws *s = p;
    if (!s)
        return;
    free(s->v);
    free(s->g);
    free(s->last_spike);
    free(s->not_refractory);
    free(s->ring);
    free(s->ring_n);
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
    s->last_spike = malloc(n * sizeof *s->last_spike);
    s->not_refractory = malloc(n);
    s->ring = malloc(slots * n * sizeof *s->ring);
    s->ring_n = calloc(slots, sizeof *s->ring_n);
    s->spikers = malloc(n * sizeof *s->spikers);
    if (!(s->v && s->g && s->last_spike && s->not_refractory && s->ring && s->ring_n && s->spikers)) {
        ref_free(s);
        return NULL;
    }
    return s;
}

/* The delay ring holds each slot's spikers ascending, below n, at most n. */
#ifndef NDEBUG
static int ref_ring_sane(const ref_ws *s, uint64_t slots, bl_error *why)
{
    for (uint64_t q = 0; q < slots; q++) {
        if (s->ring_n[q] > s->n)
            return BL_BROKEN(why, "shiu2024 delay ring: slot %" PRIu64 " holds %" PRIu64 " spikers of %" PRIu64 " neurons",
                             q, s->ring_n[q], s->n);
        const int32_t *r = s->ring + q * s->n;
        for (uint64_t a = 0; a < s->ring_n[q]; a++)
            if (r[a] < 0 || (uint64_t)r[a] >= s->n || (a && r[a] <= r[a - 1]))
                return BL_BROKEN(why, "shiu2024 delay ring: slot %" PRIu64 " entry %" PRIu64 " (neuron %d) is out of "
                                 "range or not ascending", q, a, r[a]);
    }
    return 1;
}
#endif

static bl_status ref_trial(void *ws, const bl_network *net, uint32_t trial, uint64_t n_steps, bl_result *result,
                           bl_error *err)
{
    ref_ws *s = ws;
    const bl_shiu_consts *k = K_of(net);
    const uint64_t n = s->n, slots = (uint64_t)net->delay_steps + 1;
    double *v = s->v, *g = s->g;
    for (uint64_t i = 0; i < n; i++) {
        v[i] = net->params.v_rest_mv * 0.001; /* model.py: neu.v = v_0 (in volts, as Brian2 scales mV) */
        g[i] = 0.0;
        s->last_spike[i] = INT64_MIN / 2; /* Brian2: lastspike = -inf, never refractory at start */
    }
    memset(s->ring_n, 0, slots * sizeof *s->ring_n);
    size_t cursor = 0, fcursor = 0;

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
        /* 2b. forced spikes (docs/forcing.md): a neuron not refractory that did
         *     not cross threshold spikes now; otherwise the event is dropped. */
        uint64_t n_natural = n_spikers;
        for (size_t p = 0; p < net->n_populations; p++)
            if (net->populations[p].force && bl_population_on(&net->populations[p], step))
                for (size_t a = 0; a < net->populations[p].n; a++) {
                    int32_t i = net->populations[p].neurons[a];
                    if (s->not_refractory[i] && bl_poisson_draw(net, p, trial, i, step)) {
                        s->spikers[n_spikers++] = i;
                        s->not_refractory[i] = 0;
                        s->last_spike[i] = step;
                    }
                }
        size_t f0, f1;
        bl_forced_at(net, step, &fcursor, &f0, &f1);
        for (size_t ev = f0; ev < f1; ev++) {
            int32_t i = net->forced[2 * ev + 1];
            if (s->not_refractory[i]) {
                s->spikers[n_spikers++] = i;
                s->not_refractory[i] = 0;
                s->last_spike[i] = step;
            }
        }
        if (n_spikers > n_natural) /* delivery is by ascending source */
            qsort(s->spikers, n_spikers, sizeof *s->spikers, bl_cmp_i32);
        /* 3. synapses: deliver the spikes of step - delay, sources ascending,
         *    each source's edges in CSR order, only into non-refractory targets. */
        if (step >= net->delay_steps) {
            uint64_t slot = (uint64_t)(step - net->delay_steps) % slots;
            const int32_t *src = s->ring + slot * n;
            for (uint64_t a = 0; a < s->ring_n[slot]; a++) {
                const bl_net_fanout f = bl_net_fanout_of(net, src[a]);
                for (int64_t e = net->offsets[src[a]]; e < net->offsets[src[a] + 1]; e++) {
                    int32_t post = net->targets[e];
                    if (s->not_refractory[post])
                        g[post] += weight(k, &f, e);
                }
            }
        }
        /* 4. Poisson input into v (PoissonInput order 0), then explicit events. */
        for (size_t p = 0; p < net->n_populations; p++)
            if (!net->populations[p].force && bl_population_on(&net->populations[p], step))
                for (size_t a = 0; a < net->populations[p].n; a++) {
                    int32_t i = net->populations[p].neurons[a];
                    if (s->not_refractory[i] && bl_poisson_draw(net, p, trial, i, step))
                        v[i] += k->w_poisson;
                }
        size_t e0, e1;
        bl_events_at(net, step, &cursor, &e0, &e1);
        for (size_t ev = e0; ev < e1; ev++) {
            int32_t i = net->events[2 * ev + 1];
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
        BL_ASSERT_SANE(ref_ring_sane, s, slots);
        bl_result_probe_arrays(result, trial, step, v, g);
        bl_status st = bl_result_append_spikes(result, trial, (uint32_t)step, s->spikers, n_spikers, err);
        if (st)
            return st;
    }
    memcpy(bl_result_v_row(result, trial), v, n * sizeof *v);
    memcpy(bl_result_g_row(result, trial), g, n * sizeof *g);
    return BL_OK;
}

static const bl_ref_kernel shiu_ref = {ref_alloc, ref_free, ref_trial};

/* ---- retirement: exact g after any number of updates ---- */

uint64_t bl_shiu_subnormal_step(const bl_shiu_consts *k, uint64_t units)
{
    /* L2 = m * 2^-shift exactly, m a 53-bit integer: L2 * units is the
     * integer m * units scaled by 2^-shift, rounded to the nearest integer
     * (ties to even) exactly as the hardware rounds to the nearest subnormal. */
    int e;
    double f = frexp(k->L2, &e); /* L2 = f * 2^e, f in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int shift = 53 - e;
    if (shift >= 120)
        return 0;
    unsigned __int128 prod = (unsigned __int128)m * units;
    unsigned __int128 q = prod >> shift, rem = prod - (q << shift), half = (unsigned __int128)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    return (uint64_t)q;
}

double bl_shiu_g_after(const bl_shiu_consts *k, double g, int64_t updates)
{
    for (; updates > 0 && g != 0.0 && fabs(g) >= DBL_MIN; updates--) {
        double g1 = bl_shiu_decay(k, g);
        if (bl_bits64(g1) == bl_bits64(g))
            return g; /* a fixed point */
        g = g1;
    }
    if (updates <= 0 || g == 0.0)
        return g;
    /* subnormal: the same rounding on integer units of 2^-1074 */
    uint64_t units = (uint64_t)ldexp(fabs(g), 1074); /* exact: an integer below 2^52 */
    for (; updates > 0; updates--) {
        uint64_t next = bl_shiu_subnormal_step(k, units);
        if (next == units)
            break;
        units = next;
    }
    return copysign(ldexp((double)units, -1074), g);
}

double bl_shiu_absorb_limit(const bl_shiu_consts *k)
{
    double w = fabs(k->w_syn);
    if (!(w >= DBL_MIN) || isinf(w))
        return 0.0; /* no nonzero weight, or none we reason about: never absorb */
    /* a quarter ulp of w_syn: half an ulp is enough except just below a power
     * of two, where the spacing halves */
    return (nextafter(w, INFINITY) - w) * 0.25;
}

/* ---- the partition step ---- */

enum { F_V, F_G, F_READY, F_SINCE };
static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
static void part_initial(const bl_network *net, int f, void *value)
{
    double v0 = net->params.v_rest_mv * 0.001, g0 = 0.0;
    int64_t never = NEVER_SPIKED, zero = 0;
    memcpy(value, f == F_V ? (const void *)&v0 : f == F_G ? (const void *)&g0 : f == F_READY ? (const void *)&never
                                                                                     : (const void *)&zero, 8);
}

static void part_settle(const bl_network *net, partition *p);
static void part_peek(const bl_network *net, partition *p, int32_t i, int64_t step, void *v, void *g);
static void part_window(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0, int64_t s1,
                        const int32_t *const *arr, const uint64_t *n_arr, size_t *next_event);
/* ready: the first step the neuron is not refractory (kept in both places:
 * deliveries test the range copy, the update the slot copy). since: the step
 * whose update produced a retired neuron's g (range only, see retire()). */
static const bl_part_kernel shiu_part = {
    4, {{8, BL_PART_BOTH}, {8, BL_PART_BOTH}, {8, BL_PART_BOTH}, {8, BL_PART_RANGE}}, part_initial, part_step,
    part_settle, part_peek, part_window, NULL, NULL};

/* Retirement (docs/retirement.md). A slot whose state is inert leaves the
 * active set: v, g, ready go back to the range arrays, and since = step. No
 * update changes its v again; its g after step s is g_after(g, updates in
 * (since, s]), the updates being the steps >= ready. The exact rest point
 * (v_0, 0) is the special case g = 0. */
static inline void retire(partition *p, int32_t a, int64_t step)
{
    int32_t r = p->act_neuron[a] - p->lo;
    bl_part_rest(p, &shiu_part, a);
    ((int64_t *)p->rng[F_SINCE])[r] = step;
}

/* Updates a retired neuron has missed by the end of step `step`. */
static inline int64_t missed_updates(const partition *p, int32_t r, int64_t step)
{
    int64_t since = ((const int64_t *)p->rng[F_SINCE])[r], ready = ((const int64_t *)p->rng[F_READY])[r];
    int64_t from = since > ready - 1 ? since : ready - 1;
    return step > from ? step - from : 0;
}

/* The slot of owned neuron i at step `step` (after that step's update),
 * waking it with its exact g. When a nonzero weight w is about to be added
 * and g is below the absorption limit, g + w rounds to w whatever g is, so g
 * need not be reconstructed: it is set to 0. */
static inline int32_t shiu_wake(const bl_shiu_consts *k, partition *p, int32_t i, int64_t step, double w,
                                double absorb)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    if (a >= 0)
        return a;
    a = bl_part_wake(p, &shiu_part, i);
    double *g = &((double *)p->act[F_G])[a];
    if (*g != 0.0) {
        if (w != 0.0 && fabs(*g) < absorb)
            *g = 0.0;
        else
            *g = bl_shiu_g_after(k, *g, missed_updates(p, r, step));
    }
    return a;
}

/* A probe's v and g after `step`: a retired neuron's g is reconstructed
 * exactly as a wake would (its v does not move while retired), and stored
 * back with since = step, as part_settle does. That rewrite is exact: the
 * missed updates of (since, s'] are those of (since, step] then (step, s']
 * (ready does not change while the neuron rests), and bl_shiu_g_after of a
 * sum is the composition of the two. So the next sample costs only the
 * updates since this one: probing every step stays about as cheap as the
 * reference's read, instead of replaying the whole rest at every sample. */
static void part_peek(const bl_network *net, partition *p, int32_t i, int64_t step, void *v, void *g)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    double vv, gg;
    if (a >= 0) {
        vv = ((const double *)p->act[F_V])[a];
        gg = ((const double *)p->act[F_G])[a];
    } else {
        vv = ((const double *)p->rng[F_V])[r];
        gg = ((const double *)p->rng[F_G])[r];
        if (gg != 0.0) {
            int64_t *since = p->rng[F_SINCE];
            gg = bl_shiu_g_after(K_of(net), gg, missed_updates(p, r, step));
            ((double *)p->rng[F_G])[r] = gg;
            if (step > since[r])
                since[r] = step;
        }
    }
    memcpy(v, &vv, sizeof vv);
    memcpy(g, &gg, sizeof gg);
}

/* The final g of every retired neuron (the active slots were copied back). */
static void part_settle(const bl_network *net, partition *p)
{
    const bl_shiu_consts *k = K_of(net);
    double *g = p->rng[F_G];
    int64_t *since = p->rng[F_SINCE];
    for (int32_t r = 0; r < p->hi - p->lo; r++)
        if (p->slot_of[r] < 0 && g[r] != 0.0) {
            g[r] = bl_shiu_g_after(k, g[r], missed_updates(p, r, p->step));
            since[r] = p->step; /* so that settling twice changes nothing */
        }
}

/* Steps 1-2 over the active slots, in blocks of 64. The inner loop only
 * updates state and notes whether any slot of the block might have spiked or
 * come to rest, so that it vectorises; block_hit[b] marks the blocks that the
 * exact scalar scan in part_step must visit (usually none or one).
 *
 * GATED: whether a refractory slot must be held still (step < ready). When
 * the reset state is a one-step fixed point (bl_shiu_reset_is_fixed_point,
 * as with the published parameters, where v_reset = v_rest) it need not be:
 * a refractory neuron holds exactly (v_rst, +0) from its reset until it is
 * available again, because every input on the way (synapses, Poisson,
 * events, forced spikes) is dropped while it is refractory, so updating it
 * anyway writes back the same bits; it cannot cross threshold (v_rst <=
 * v_th), and its inert mark is the one the gated loop computes from the same
 * integrated values. The ungated loop reads 16 bytes a slot instead of 24 and
 * has no blend: w1's update took ~40% less time. */
#define SHIU_BLOCK 64
static inline __attribute__((always_inline)) int shiu_update_body(const bl_shiu_consts *k_in, int64_t step,
                                                                  uint64_t n, double *restrict av,
                                                                  double *restrict ag,
                                                                  const int64_t *restrict ready,
                                                                  uint8_t *restrict block_hit, const int gated)
{
    int any = 0;
    const bl_shiu_consts kk = *k_in, *k = &kk; /* in registers: the stores cannot alias it */
    for (uint64_t b0 = 0; b0 < n; b0 += SHIU_BLOCK) {
        uint64_t end = b0 + SHIU_BLOCK < n ? b0 + SHIU_BLOCK : n;
        int64_t hit = 0;
        for (uint64_t a = b0; a < end; a++) {
            int64_t nr = gated ? step >= ready[a] : 1;
            double v = av[a], g = ag[a], v1 = v, g1 = g;
            int64_t inert = bl_shiu_integrate_inert(k, &v1, &g1);
            v = nr ? v1 : v;
            g = nr ? g1 : g;
            av[a] = v;
            ag[a] = g;
            hit |= (nr & (v > k->v_th)) | inert;
        }
        block_hit[b0 / SHIU_BLOCK] = hit != 0;
        any |= hit != 0;
    }
    return any;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static int shiu_update_gated(const bl_shiu_consts *k, int64_t step, uint64_t n, double *restrict av,
                             double *restrict ag, const int64_t *restrict ready, uint8_t *restrict block_hit)
{
    return shiu_update_body(k, step, n, av, ag, ready, block_hit, 1);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static int shiu_update_free(const bl_shiu_consts *k, uint64_t n, double *restrict av, double *restrict ag,
                            uint8_t *restrict block_hit)
{
    return shiu_update_body(k, 0, n, av, ag, NULL, block_hit, 0);
}

/* Is (v, +0) one update's fixed point, bit for bit, below threshold? */
static int fixed_below_threshold(const bl_shiu_consts *k, double v0)
{
    double v = v0, g = 0.0;
    bl_shiu_integrate(k, &v, &g);
    return bl_bits64(v) == bl_bits64(v0) && bl_bits64(g) == bl_bits64(0.0) && !bl_shiu_crosses(k, v0);
}

int bl_shiu_reset_is_fixed_point(const bl_shiu_consts *k) { return fixed_below_threshold(k, k->v_rst); }

/* One source's owned edges [e0, e1) into the targets that are not
 * refractory. With PF the scattered targets' state is fetched ahead: their
 * ready and slot PREFETCH edges ahead, their g (once the slot is known) half
 * as far, so that the misses overlap (w2: about 20% fewer samples in the
 * step). When a partition's state fits in cache (the larva: ~3k neurons)
 * every fetch is a hit and the prefetches are pure cost (the step took 8%
 * more CPU at w3 with them), so part_step passes PF only for partitions of
 * at least SHIU_PREFETCH_MIN_NEURONS. Prefetching changes no value. */
#define SHIU_PREFETCH_MIN_NEURONS 32768
static inline __attribute__((always_inline)) void deliver_edges(const bl_network *net, const bl_shiu_consts *k,
                                                                partition *p, int64_t step, const bl_net_fanout *f,
                                                                int64_t e0, int64_t e1, double absorb, const int pf)
{
    const int32_t *tg = net->targets;
    const int64_t lo = p->lo;
    int64_t *ready = p->rng[F_READY];
    for (int64_t e = e0; e < e1; e++) {
        if (pf && e + PREFETCH < e1) {
            int64_t q = tg[e + PREFETCH] - lo;
            __builtin_prefetch(&ready[q]);
            __builtin_prefetch(&p->slot_of[q]);
        }
        if (pf && e + PREFETCH / 2 < e1) {
            int32_t a2 = p->slot_of[tg[e + PREFETCH / 2] - lo];
            if (a2 >= 0)
                __builtin_prefetch(&((double *)p->act[F_G])[a2], 1);
        }
        int32_t post = tg[e];
        if (step >= ready[post - lo]) {
            double w = weight(k, f, e);
            int32_t a = shiu_wake(k, p, post, step, w, absorb);
            ((double *)p->act[F_G])[a] += w;
        }
    }
}

/* Brian2's not_refractory = (step - last_spike >= rfc), and a neuron that
 * spikes is not_refractory = False for the rest of its step even when
 * rfc = 0: both rules are one comparison with ready = last + max(rfc, 1). */
static void part_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_shiu_consts *k = K_of(net);
    const int32_t *rfc = net->refractory_steps;
    const int64_t lo = p->lo;
    const double absorb = bl_shiu_absorb_limit(k);
    int64_t *ready = p->rng[F_READY];
    spikers->n = 0;
    /* act_flag holds one byte per block of slots here (it has a byte per slot). */
    int hit = NK_of(net)->reset_fixed
                  ? shiu_update_free(k, p->n_active, p->act[F_V], p->act[F_G], p->act_flag)
                  : shiu_update_gated(k, step, p->n_active, p->act[F_V], p->act[F_G], p->act[F_READY], p->act_flag);
    if (hit) {
        const double *av = p->act[F_V], *ag = p->act[F_G];
        int64_t *aready = p->act[F_READY];
        /* Descending, so that a removal (the last slot fills the hole) only
         * moves a slot that was already scanned. */
        for (uint64_t b = (p->n_active + SHIU_BLOCK - 1) / SHIU_BLOCK; b-- > 0;) {
            if (!p->act_flag[b])
                continue;
            uint64_t end = (b + 1) * SHIU_BLOCK < p->n_active ? (b + 1) * SHIU_BLOCK : p->n_active;
            for (uint64_t a = end; a-- > b * SHIU_BLOCK;) {
                /* ready is unchanged by the update, so this is the update's nr */
                if (step >= aready[a] && bl_shiu_crosses(k, av[a])) {
                    int32_t i = p->act_neuron[a];
                    ready[i - lo] = aready[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
                    p->failed |= !bl_list_push(spikers, i);
                } else if (skip_ok && bl_shiu_inert(k, av[a], ag[a]) && !bl_shiu_crosses(k, av[a]) &&
                           bl_bits64(k->L8 + k->L10 * av[a]) == bl_bits64(av[a])) {
                    retire(p, (int32_t)a, step);
                }
            }
        }
    }
    /* 2b. forced spikes (docs/forcing.md), as in the reference trial. */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!net->populations[q].force || !bl_population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s];
            if (step >= ready[i - lo] && bl_poisson_draw(net, q, trial, i, step)) {
                int32_t a = shiu_wake(k, p, i, step, 0.0, absorb);
                ready[i - lo] = ((int64_t *)p->act[F_READY])[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
                p->failed |= !bl_list_push(spikers, i);
            }
        }
    }
    size_t f0, f1;
    bl_forced_at(net, step, &p->next_forced, &f0, &f1);
    for (size_t ev = f0; ev < f1; ev++) {
        int32_t i = net->forced[2 * ev + 1];
        if (i >= p->lo && i < p->hi && step >= ready[i - lo]) {
            int32_t a = shiu_wake(k, p, i, step, 0.0, absorb);
            ready[i - lo] = ((int64_t *)p->act[F_READY])[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
            p->failed |= !bl_list_push(spikers, i);
        }
    }
    bl_sort_spikers(spikers);
    /* 3. the spikes of step - delay, sources ascending, into owned targets
     *    that are not refractory (nor spiking now). */
    const int pf = p->hi - p->lo >= SHIU_PREFETCH_MIN_NEURONS;
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        bl_owned_edges(net, p, arrivals[s], &e0, &e1);
        const bl_net_fanout f = bl_net_fanout_of(net, arrivals[s]);
        if (pf)
            deliver_edges(net, k, p, step, &f, e0, e1, absorb, 1);
        else
            deliver_edges(net, k, p, step, &f, e0, e1, absorb, 0);
    }
    /* 4. Poisson input, then explicit events. */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (net->populations[q].force || !bl_population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s];
            if (step >= ready[i - lo] && bl_poisson_draw(net, q, trial, i, step)) {
                int32_t a = shiu_wake(k, p, i, step, 0.0, absorb);
                ((double *)p->act[F_V])[a] += k->w_poisson;
            }
        }
    }
    size_t ev0, ev1;
    bl_events_at(net, step, next_event, &ev0, &ev1);
    for (size_t ev = ev0; ev < ev1; ev++) {
        int32_t i = net->events[2 * ev + 1];
        if (i >= p->lo && i < p->hi && step >= ready[i - lo]) {
            int32_t a = shiu_wake(k, p, i, step, 0.0, absorb);
            ((double *)p->act[F_V])[a] += k->w_poisson;
        }
    }
    /* 5. resets. */
    for (uint64_t s = 0; s < spikers->n; s++) {
        int32_t a = p->slot_of[spikers->v[s] - lo];
        bl_shiu_reset(k, &((double *)p->act[F_V])[a], &((double *)p->act[F_G])[a]);
    }
}

/* ---- the window path (docs/retirement.md, "One pass per window") ----
 *
 * Every synaptic delay is the window's length, so nothing a neuron does
 * inside a window reaches another neuron before the next one: all of a
 * window's inputs are known when it starts. part_window gathers them
 * (synaptic arrivals, Poisson draws, events, forced spikes) as records in
 * the per-step path's order (step by step; within a step forced spikes,
 * then synapses in source order, then inputs into v), wakes every resting
 * target at the window's start with its exact g, groups the records by
 * slot with a stable counting sort, and steps the active slots through the
 * whole window SHIU_LANES at a time, their v and g read and written once,
 * adding each step's inputs after its update in their order. A slot that
 * may spike, and every slot of a group with a forced spike, is walked on its
 * own, step by step, in the per-step path's order (window_walk). Either way each neuron sees the
 * per-step path's operations in its order, so the bits are the same.
 * Off unless BL_CPU_WINDOW asks for it: on the machines measured so far it
 * was not faster than the per-step path (docs/retirement.md). */

#define SHIU_LANES 32  /* slots stepped together: 4 AVX-512 vectors of v and of g */
#define SHIU_WIN_MAX 64 /* longest window the path takes (the engine's BL_MAX_WINDOW) */
#define SHIU_WINDOW_MIN_ACTIVE 256

enum { IN_FORCE, IN_SYN, IN_V };
typedef struct shiu_input {
    int32_t slot;
    int16_t t, kind; /* step s0 + t */
    double w;        /* what is added (IN_SYN: to g; IN_V: to v) */
} shiu_input;

/* Wake resting neuron i (r = i - lo, ready its range entry) for a window
 * starting at s0, with its exact g as of step s0 - 1 (the per-step path
 * would wake it later, at its first input: in between it is inert, so the
 * updates leave v alone and apply to g the same decay that g_after
 * replays). When that first input is a nonzero synaptic weight and g is
 * below the absorption limit, g is set to 0 instead (shiu_wake's shortcut):
 * v's updates are the same for any g between 0 and the resting g, and
 * fl(g_t + w) = w = fl(0 + w). */
static inline int32_t window_wake(const bl_shiu_consts *k, partition *p, int32_t i, int32_t r, int64_t s0,
                                  int kind, double w, double absorb)
{
    int32_t a = bl_part_wake(p, &shiu_part, i);
    double *g = &((double *)p->act[F_G])[a];
    if (*g != 0.0) {
        if (kind == IN_SYN && w != 0.0 && fabs(*g) < absorb)
            *g = 0.0;
        else
            *g = bl_shiu_g_after(k, *g, missed_updates(p, r, s0 - 1));
    }
    return a;
}

/* One record of an input to neuron i at step s0 + t. A resting target that
 * is refractory then gets none: the per-step path drops the input, and
 * nothing can have changed its ready (an earlier input would have woken it,
 * and ready only grows). An awake target's refractoriness is tested where
 * the record is applied, against its slot's ready (window_group,
 * window_walk), which a spike inside the window may raise. */
static inline void add_input(const bl_shiu_consts *k, partition *p, shiu_input *in, size_t *n, int32_t i,
                             int64_t s0, int t, int kind, double w, double absorb)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    if (a < 0) {
        if (s0 + t < ((const int64_t *)p->rng[F_READY])[r])
            return;
        a = window_wake(k, p, i, r, s0, kind, w, absorb);
    }
    in[*n].slot = a;
    in[*n].t = (int16_t)t;
    in[*n].kind = (int16_t)kind;
    in[*n].w = w;
    (*n)++;
}

/* Slot a through the window one step at a time, with its records (rec:
 * its group's, in the per-step order; those of other slots are skipped):
 * the per-step path's update, spike test, forced spikes, inputs and reset.
 * Its spikes go to `spikes` as (window step, neuron) pairs. Returns whether
 * it may rest at the window's end (its state is inert). */
static int window_walk(const bl_network *net, partition *p, uint64_t a, int64_t s0, int len,
                       const shiu_input *rec, size_t n_rec, i32_list *spikes, int skip_ok)
{
    const bl_shiu_consts *k = K_of(net);
    const int gated = !NK_of(net)->reset_fixed;
    double *av = p->act[F_V], *ag = p->act[F_G];
    int64_t *aready = p->act[F_READY];
    const int32_t i = p->act_neuron[a];
    double v = av[a], g = ag[a];
    int64_t rd = aready[a];
    size_t c = 0;
    for (int t = 0; t < len; t++) {
        const int64_t step = s0 + t;
        if (!gated || step >= rd)
            bl_shiu_integrate(k, &v, &g);
        int spiked = 0;
        if (step >= rd && bl_shiu_crosses(k, v)) {
            spiked = 1;
            rd = step + (net->refractory_steps[i] > 1 ? net->refractory_steps[i] : 1);
        }
        for (; c < n_rec && rec[c].t == t; c++) {
            if ((uint64_t)rec[c].slot != a || step < rd)
                continue;
            if (rec[c].kind == IN_FORCE) {
                spiked = 1;
                rd = step + (net->refractory_steps[i] > 1 ? net->refractory_steps[i] : 1);
            } else if (rec[c].kind == IN_SYN) {
                g += rec[c].w;
            } else {
                v += rec[c].w;
            }
        }
        if (spiked) {
            p->failed |= !(bl_list_push(spikes, t) && bl_list_push(spikes, i));
            bl_shiu_reset(k, &v, &g);
        }
    }
    av[a] = v;
    ag[a] = g;
    if (aready[a] != rd)
        ((int64_t *)p->rng[F_READY])[i - p->lo] = aready[a] = rd;
    return skip_ok && bl_shiu_inert(k, v, g) && !bl_shiu_crosses(k, v) &&
           bl_bits64(k->L8 + k->L10 * v) == bl_bits64(v);
}

/* SHIU_LANES slots from a0 through the window in registers. INPUTS: the
 * group's records rec[0 .. n_rec) (synaptic and v inputs only, in the
 * per-step order) are added after their step's update, one by one, so a
 * slot with two inputs in a step adds them in order. GATED as in
 * shiu_update_body. A slot that may spike keeps its state as it was (the
 * caller walks it: the spike drops that step's inputs and resets it); its
 * bit is set in the returned mask. *inert_any: some slot's last update
 * started from an inert state (it may rest). */
static inline __attribute__((always_inline)) uint64_t window_group(const bl_shiu_consts *k, int64_t s0, int len,
                                                                   uint64_t a0, double *restrict av,
                                                                   double *restrict ag,
                                                                   const int64_t *restrict ready,
                                                                   const shiu_input *restrict rec, size_t n_rec,
                                                                   int *inert_any, const int inputs, const int gated)
{
    double v[SHIU_LANES], g[SHIU_LANES];
    int64_t rd[SHIU_LANES], sp[SHIU_LANES], in[SHIU_LANES];
    for (int l = 0; l < SHIU_LANES; l++) {
        v[l] = av[l];
        g[l] = ag[l];
        rd[l] = gated || inputs ? ready[l] : 0;
        sp[l] = 0;
        in[l] = 0;
    }
    size_t c = 0;
    for (int t = 0; t < len; t++) {
        const int64_t step = s0 + t;
        for (int l = 0; l < SHIU_LANES; l++) {
            double v1 = v[l], g1 = g[l];
            int64_t inert = bl_shiu_integrate_inert(k, &v1, &g1);
            int64_t nr = gated ? step >= rd[l] : 1;
            v[l] = nr ? v1 : v[l];
            g[l] = nr ? g1 : g[l];
            sp[l] |= nr & (v[l] > k->v_th);
            in[l] = inert;
        }
        if (inputs) /* dropped while refractory; a spike (the lane is walked) does not move ready here */
            for (; c < n_rec && rec[c].t == t; c++) {
                int l = (int)((uint64_t)rec[c].slot - a0);
                if (step < rd[l])
                    continue;
                if (rec[c].kind == IN_SYN)
                    g[l] += rec[c].w;
                else
                    v[l] += rec[c].w;
            }
    }
    uint64_t spiking = 0;
    int64_t inert = 0;
    for (int l = 0; l < SHIU_LANES; l++) {
        spiking |= (uint64_t)(sp[l] != 0) << l;
        inert |= in[l];
        av[l] = sp[l] ? av[l] : v[l];
        ag[l] = sp[l] ? ag[l] : g[l];
    }
    *inert_any = inert != 0;
    return spiking;
}

/* Every group of slots through the window: rec[gs[q] .. gs[q + 1]) are
 * group q's records. Groups that may rest go to `revisit`. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void window_groups(const bl_network *net, partition *p, int64_t s0, int len, const shiu_input *rec,
                          const uint32_t *gs, int skip_ok, i32_list *spikes, i32_list *revisit)
{
    const bl_shiu_consts kk = *K_of(net), *k = &kk; /* in registers: the stores cannot alias it */
    const int gated = !NK_of(net)->reset_fixed;
    const uint64_t n = p->n_active;
    for (uint64_t q = 0, a0 = 0; a0 < n; q++, a0 += SHIU_LANES) {
        double *av = (double *)p->act[F_V] + a0, *ag = (double *)p->act[F_G] + a0;
        const int64_t *ar = (const int64_t *)p->act[F_READY] + a0;
        const shiu_input *r = rec + gs[q];
        const size_t nr = gs[q + 1] - gs[q];
        int walk = a0 + SHIU_LANES > n, rest = 0;
        for (size_t c = 0; c < nr && !walk; c++)
            walk = r[c].kind == IN_FORCE;
        uint64_t spiking = 0;
        if (!walk && nr == 0)
            spiking = gated ? window_group(k, s0, len, a0, av, ag, ar, r, 0, &rest, 0, 1)
                            : window_group(k, s0, len, a0, av, ag, ar, r, 0, &rest, 0, 0);
        else if (!walk)
            spiking = gated ? window_group(k, s0, len, a0, av, ag, ar, r, nr, &rest, 1, 1)
                            : window_group(k, s0, len, a0, av, ag, ar, r, nr, &rest, 1, 0);
        if (walk) { /* a forced spike, or the last, partial group: every slot */
            uint64_t end = a0 + SHIU_LANES < n ? a0 + SHIU_LANES : n;
            for (uint64_t a = a0; a < end; a++)
                rest |= window_walk(net, p, a, s0, len, r, nr, spikes, skip_ok);
        }
        for (; spiking; spiking &= spiking - 1) /* the slots that may spike */
            rest |= window_walk(net, p, a0 + (uint64_t)__builtin_ctzll(spiking), s0, len, r, nr, spikes, skip_ok);
        if (rest && skip_ok)
            p->failed |= !bl_list_push(revisit, (int32_t)q);
    }
}

static void part_window(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0, int64_t s1,
                        const int32_t *const *arr, const uint64_t *n_arr, size_t *next_event)
{
    const int len = (int)(s1 - s0);
    /* BL_WINDOW_AUTO: the window path can pay only while most active slots
     * get no input in the window: a record costs more than a per-step
     * delivery (it is written, sorted and read again), and the pass saves
     * only the update's memory traffic. w1 (~0.15 synapses per active slot
     * a window) came out even; w2 (a runaway, ~0.9) ran ~30% slower. The
     * window's synapses, counted over whole rows, decide. */
    uint64_t edges = 0;
    for (int j = 0; j < len; j++)
        for (uint64_t s = 0; s < n_arr[j]; s++)
            edges += (uint64_t)(net->offsets[arr[j][s] + 1] - net->offsets[arr[j][s]]);
    const int auto_mode = p->window_mode == BL_WINDOW_AUTO;
    if (len > SHIU_WIN_MAX || (auto_mode && (p->n_active < SHIU_WINDOW_MIN_ACTIVE || 2 * edges > p->n_active))) {
        for (int j = 0; j < len; j++) {
            p->step = s0 + j;
            part_step(net, skip_ok, p, trial, s0 + j, arr[j], n_arr[j], next_event, &p->window[j]);
        }
        return;
    }
    const bl_shiu_consts *k = K_of(net);
    const double absorb = bl_shiu_absorb_limit(k);
    const int32_t lo = p->lo, hi = p->hi;
    /* 1. the records, in the per-step path's order (at most this many) */
    uint64_t cap = edges, ev = 0;
    for (size_t q = 0; q < net->n_populations; q++)
        cap += (uint64_t)(p->pop_last[q] - p->pop_first[q]) * (uint64_t)len;
    for (size_t c = *next_event; c < net->n_events && net->events[2 * c] < s1; c++)
        ev++;
    for (size_t c = p->next_forced; c < net->n_forced && net->forced[2 * c] < s1; c++)
        ev++;
    shiu_input *in = bl_partition_buf(p, 0, (size_t)(cap + ev + 1) * sizeof *in);
    if (!in)
        return;
    size_t n = 0;
    const int pf = hi - lo >= SHIU_PREFETCH_MIN_NEURONS;
    for (int t = 0; t < len; t++) {
        const int64_t step = s0 + t;
        for (size_t q = 0; q < net->n_populations; q++) /* 2b. forced spikes */
            if (net->populations[q].force && bl_population_on(&net->populations[q], step))
                for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
                    int32_t i = net->populations[q].neurons[s];
                    if (bl_poisson_draw(net, q, trial, i, step))
                        add_input(k, p, in, &n, i, s0, t, IN_FORCE, 0.0, absorb);
                }
        size_t f0, f1;
        bl_forced_at(net, step, &p->next_forced, &f0, &f1);
        for (size_t e = f0; e < f1; e++)
            if (net->forced[2 * e + 1] >= lo && net->forced[2 * e + 1] < hi)
                add_input(k, p, in, &n, net->forced[2 * e + 1], s0, t, IN_FORCE, 0.0, absorb);
        for (uint64_t s = 0; s < n_arr[t]; s++) { /* 3. synapses, sources ascending */
            int64_t e0, e1;
            bl_owned_edges(net, p, arr[t][s], &e0, &e1);
            const bl_net_fanout f = bl_net_fanout_of(net, arr[t][s]);
            for (int64_t e = e0; e < e1; e++) {
                if (pf && e + PREFETCH < e1) { /* as deliver_edges: the targets' ready and slot */
                    __builtin_prefetch(&((const int64_t *)p->rng[F_READY])[net->targets[e + PREFETCH] - lo]);
                    __builtin_prefetch(&p->slot_of[net->targets[e + PREFETCH] - lo]);
                }
                add_input(k, p, in, &n, net->targets[e], s0, t, IN_SYN, weight(k, &f, e), absorb);
            }
        }
        for (size_t q = 0; q < net->n_populations; q++) /* 4. Poisson input, then events */
            if (!net->populations[q].force && bl_population_on(&net->populations[q], step))
                for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
                    int32_t i = net->populations[q].neurons[s];
                    if (bl_poisson_draw(net, q, trial, i, step))
                        add_input(k, p, in, &n, i, s0, t, IN_V, k->w_poisson, absorb);
                }
        size_t e0, e1;
        bl_events_at(net, step, next_event, &e0, &e1);
        for (size_t e = e0; e < e1; e++)
            if (net->events[2 * e + 1] >= lo && net->events[2 * e + 1] < hi)
                add_input(k, p, in, &n, net->events[2 * e + 1], s0, t, IN_V, k->w_poisson, absorb);
    }
    if (p->failed) /* out of memory waking a target: the trial stops here */
        return;
    /* 2. grouped by slot (stable: each slot keeps the per-step order) */
    const uint64_t groups = (p->n_active + SHIU_LANES - 1) / SHIU_LANES;
    uint32_t *gs = bl_partition_buf(p, 2, (size_t)(groups + 2) * sizeof *gs);
    shiu_input *rec = bl_partition_buf(p, 1, (n + 1) * sizeof *rec);
    if (!gs || !rec)
        return;
    memset(gs, 0, (size_t)(groups + 2) * sizeof *gs);
    for (size_t c = 0; c < n; c++)
        gs[in[c].slot / SHIU_LANES + 1]++;
    for (uint64_t q = 0; q < groups; q++)
        gs[q + 1] += gs[q];
    for (size_t c = 0; c < n; c++) /* gs[q] moves to the end of group q ... */
        rec[gs[in[c].slot / SHIU_LANES]++] = in[c];
    for (uint64_t q = groups; q > 0; q--) /* ... so shift it back to its start */
        gs[q] = gs[q - 1];
    gs[0] = 0;
    /* 3. every slot through the window */
    i32_list *spikes = &p->scratch[0], *revisit = &p->scratch[1];
    spikes->n = revisit->n = 0;
    window_groups(net, p, s0, len, rec, gs, skip_ok, spikes, revisit);
    p->step = s1 - 1;
    /* 4. the spikes into their steps' lists, ascending */
    for (int j = 0; j < len; j++)
        p->window[j].n = 0;
    for (uint64_t s = 0; s < spikes->n; s += 2)
        p->failed |= !bl_list_push(&p->window[spikes->v[s]], spikes->v[s + 1]);
    for (int j = 0; j < len; j++)
        bl_sort_spikers(&p->window[j]);
    /* 5. inert slots rest, as of the window's last step (descending: a
     *    removal moves the last slot, already visited) */
    const double *av = p->act[F_V], *ag = p->act[F_G];
    for (uint64_t c = revisit->n; c-- > 0;) {
        uint64_t q = (uint64_t)revisit->v[c];
        uint64_t end = (q + 1) * SHIU_LANES < p->n_active ? (q + 1) * SHIU_LANES : p->n_active;
        for (uint64_t a = end; a-- > q * SHIU_LANES;)
            if (bl_shiu_inert(k, av[a], ag[a]) && !bl_shiu_crosses(k, av[a]) &&
                bl_bits64(k->L8 + k->L10 * av[a]) == bl_bits64(av[a]))
                retire(p, (int32_t)a, s1 - 1);
    }
}

/* ---- the row ---- */

static void make_consts(const bl_lif_params *p, void *out)
{
    shiu_net_consts *c = out;
    c->k = bl_shiu_consts_make(p);
    c->reset_fixed = bl_shiu_reset_is_fixed_point(&c->k);
}

static bl_status validate(const bl_lif_params *p, bl_error *err)
{
    if (p->tau_m_ms == p->tau_syn_ms)
        return bl_fail(err, BL_ERR_INVALID, "model parameters 'tau_m_ms' and 'tau_syn_ms' must differ "
                       "(shiu2024's exact linear solution divides by t_mbr - tau)");
    return BL_OK;
}

/* v = v_0, g = 0 is one step's fixed point, bit for bit, below threshold. */
static int rest_is_fixed_point(const bl_network *net)
{
    return fixed_below_threshold(K_of(net), net->params.v_rest_mv * 0.001);
}

/* Shiu et al. 2024, model.py: the published constants; every Poisson target
 * has no refractory period. */
const bl_model bl_model_shiu2024 = {
    .name = "shiu2024",
    .state_dtype = BL_DTYPE_FLOAT64,
    .defaults = {.preset = BL_PRESET_SHIU2024, .dt_ms = 0.1, .v_rest_mv = -52.0, .v_reset_mv = -52.0,
                 .v_th_mv = -45.0, .tau_m_ms = 20.0, .tau_syn_ms = 5.0, .refractory_ms = 2.2, .delay_ms = 1.8,
                 .w_syn_mv = 0.275, .f_poi = 250.0, .poisson_refractory_zero = 1},
    .consts_size = sizeof(shiu_net_consts),
    .make_consts = make_consts,
    .validate = validate,
    .rest_is_fixed_point = rest_is_fixed_point,
    .ref = &shiu_ref,
    .part = &shiu_part,
};
