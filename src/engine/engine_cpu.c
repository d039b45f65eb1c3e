/* The "cpu" backend: event-driven, multithreaded, bit-identical to the
 * reference backend for any thread count.
 *
 * Why it is exact:
 * - It calls the same inline model functions (src/models/) in the same order.
 * - It skips only neurons at the model's fixed point (shiu2024: v = v_0,
 *   g = 0; phase4c: v = v_rest, g = +0, not refractory), where one update
 *   step is the identity bit for bit, and wakes them before any input reaches
 *   them. The fixed-point property is checked numerically for the configured
 *   parameters; if it fails, no neuron is ever skipped.
 * - Partitions own disjoint, contiguous ranges of target neurons. Each
 *   delivers every spike of step s - delay, sources ascending, to the targets
 *   it owns, so each target sums its input in ascending source order: the
 *   spec's order, whatever the number of partitions.
 *
 * How it is parallel: every synaptic delay is `delay` steps, so the spikes of
 * a window of `delay` steps are first needed in the next window. Partitions
 * run a whole window independently and exchange spikes once per window
 * (shared memory here; MPI_Allgatherv in an MPI backend, which can reuse the
 * partition kernel unchanged). With more trials than threads, threads run
 * whole trials instead (one partition each), which needs no exchange at all.
 *
 * Why it is fast: neurons away from rest live in dense "active" slots
 * (structure of arrays), so the per-step update is a branch-free loop that
 * the compiler vectorises; everything else is driven by spikes. */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))

enum { FLAG_SPIKE = 1, FLAG_REST = 2, FLAG_AVAILABLE = 4 };

typedef struct i32_list {
    int32_t *v;
    uint64_t n, cap;
} i32_list;

static int list_push(i32_list *l, int32_t x)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 256;
        int32_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return 0;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 1;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static inline uint64_t bits64(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline uint32_t bits32(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* One partition: the neurons [lo, hi) of one trial. Resting state lives in
 * the range arrays (index i - lo); neurons away from rest live in the active
 * slots (slot_of[i - lo] >= 0). */
typedef struct partition {
    int32_t lo, hi;
    int shiu;
    void *v, *g;            /* [hi - lo], double or float */
    int64_t *ready;         /* shiu2024: first step the neuron is not refractory */
    int32_t *slot_of;       /* [hi - lo], -1 when resting */
    uint8_t *spiked;        /* phase4c [hi - lo]: dedupes natural and forced spikes */
    size_t *pop_first, *pop_last; /* per population: its neurons inside [lo, hi) */
    int32_t *act_neuron;    /* active slots (global neuron ids) */
    void *act_v, *act_g;
    int64_t *act_ready;     /* shiu2024 */
    int32_t *act_ref;       /* phase4c: remaining refractory steps */
    float *act_arrival;     /* phase4c: this step's summed input */
    uint8_t *act_flag;
    uint64_t n_active, act_cap;
    i32_list *window;       /* spikers of each step of the current window, ascending */
    int failed;
} partition;

/* Spikes of one window, merged over partitions: step j's spikers are
 * v[start[j] .. start[j+1]). */
typedef struct spike_window {
    uint64_t *start;
    i32_list all;
} spike_window;

/* Everything one trial in flight needs. */
typedef struct runner {
    partition *parts;
    int n_parts;
    spike_window merged[2]; /* windows w-1 and w, by parity */
    i32_list out;           /* (step, neuron) pairs of the trial */
} runner;

typedef struct cpu_state {
    const bl_network *net;
    int threads;
    int skip_ok;
    runner *runners;
    int n_runners, parts_per_runner;
} cpu_state;

/* ---- partitions ---- */

static void part_free(partition *p, int64_t delay)
{
    void *blocks[] = {p->v, p->g, p->ready, p->slot_of, p->spiked, p->pop_first, p->pop_last,
                      p->act_neuron, p->act_v, p->act_g, p->act_ready, p->act_ref, p->act_arrival,
                      p->act_flag};
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++)
        free(blocks[k]);
    if (p->window)
        for (int64_t j = 0; j < delay; j++)
            free(p->window[j].v);
    free(p->window);
    memset(p, 0, sizeof *p);
}

static size_t lower_bound(const int32_t *v, size_t n, int32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int part_alloc(partition *p, const bl_network *net, int32_t lo, int32_t hi)
{
    uint64_t n = (uint64_t)(hi - lo) ? (uint64_t)(hi - lo) : 1;
    p->lo = lo;
    p->hi = hi;
    p->shiu = net->params.preset == BL_PRESET_SHIU2024;
    size_t sz = p->shiu ? sizeof(double) : sizeof(float);
    uint64_t cap = n < 4096 ? n : 4096; /* slots grow on demand: activity is sparse */
    size_t np = net->n_populations ? net->n_populations : 1;
    p->act_cap = cap;
    p->v = malloc(n * sz);
    p->g = malloc(n * sz);
    p->slot_of = malloc(n * sizeof *p->slot_of);
    p->pop_first = malloc(np * sizeof *p->pop_first);
    p->pop_last = malloc(np * sizeof *p->pop_last);
    p->act_neuron = malloc(cap * sizeof *p->act_neuron);
    p->act_v = malloc(cap * sz);
    p->act_g = malloc(cap * sz);
    p->act_flag = malloc(cap);
    p->window = calloc((size_t)net->delay_steps, sizeof *p->window);
    int ok = p->v && p->g && p->slot_of && p->pop_first && p->pop_last && p->act_neuron && p->act_v &&
             p->act_g && p->act_flag && p->window;
    if (p->shiu) {
        p->ready = malloc(n * sizeof *p->ready);
        p->act_ready = malloc(cap * sizeof *p->act_ready);
        ok = ok && p->ready && p->act_ready;
    } else {
        p->spiked = calloc(n, 1);
        p->act_ref = malloc(cap * sizeof *p->act_ref);
        p->act_arrival = malloc(cap * sizeof *p->act_arrival);
        ok = ok && p->spiked && p->act_ref && p->act_arrival;
    }
    for (size_t q = 0; ok && q < net->n_populations; q++) {
        const bl_net_population *pop = &net->populations[q];
        p->pop_first[q] = lower_bound(pop->neurons, pop->n, lo);
        p->pop_last[q] = lower_bound(pop->neurons, pop->n, hi);
    }
    return ok;
}

/* Room for one more active slot. On failure the trial is marked failed and
 * slot 0 (which always exists) absorbs writes until the window ends. */
static int grow_active(partition *p)
{
    if (p->n_active < p->act_cap)
        return 1;
    uint64_t cap = 2 * p->act_cap;
    size_t sz = p->shiu ? sizeof(double) : sizeof(float);
    int ok = 1;
#define GROW(field, size)                               \
    do {                                                \
        void *q_ = realloc(p->field, cap * (size));     \
        if (q_)                                         \
            p->field = q_;                              \
        else                                            \
            ok = 0;                                     \
    } while (0)
    GROW(act_neuron, sizeof(int32_t));
    GROW(act_v, sz);
    GROW(act_g, sz);
    GROW(act_flag, 1);
    if (p->shiu) {
        GROW(act_ready, sizeof(int64_t));
    } else {
        GROW(act_ref, sizeof(int32_t));
        GROW(act_arrival, sizeof(float));
    }
#undef GROW
    if (ok)
        p->act_cap = cap;
    else
        p->failed = 1;
    return ok;
}

/* The slot of neuron i (global id, owned by p), waking it if it rests. The
 * slot arrays may move: callers never keep pointers into them across this. */
static inline int32_t wake(partition *p, int32_t i)
{
    int32_t r = i - p->lo, a = p->slot_of[r];
    if (a >= 0)
        return a;
    if (!grow_active(p))
        return 0;
    a = (int32_t)p->n_active++;
    p->slot_of[r] = a;
    p->act_neuron[a] = i;
    if (p->shiu) {
        ((double *)p->act_v)[a] = ((double *)p->v)[r];
        ((double *)p->act_g)[a] = ((double *)p->g)[r];
        p->act_ready[a] = p->ready[r];
    } else {
        ((float *)p->act_v)[a] = ((float *)p->v)[r];
        ((float *)p->act_g)[a] = ((float *)p->g)[r];
        p->act_ref[a] = 0; /* a resting neuron is never refractory */
        p->act_arrival[a] = 0.0f;
    }
    return a;
}

/* Back to rest: state returns to the range arrays; the last slot fills the hole. */
static inline void rest(partition *p, int32_t a)
{
    int32_t r = p->act_neuron[a] - p->lo, b = (int32_t)--p->n_active;
    size_t sz = p->shiu ? sizeof(double) : sizeof(float);
    memcpy((char *)p->v + (size_t)r * sz, (char *)p->act_v + (size_t)a * sz, sz);
    memcpy((char *)p->g + (size_t)r * sz, (char *)p->act_g + (size_t)a * sz, sz);
    p->slot_of[r] = -1;
    if (a == b)
        return;
    p->act_neuron[a] = p->act_neuron[b];
    memcpy((char *)p->act_v + (size_t)a * sz, (char *)p->act_v + (size_t)b * sz, sz);
    memcpy((char *)p->act_g + (size_t)a * sz, (char *)p->act_g + (size_t)b * sz, sz);
    if (p->shiu) {
        p->act_ready[a] = p->act_ready[b];
    } else {
        p->act_ref[a] = p->act_ref[b];
        p->act_arrival[a] = p->act_arrival[b];
    }
    p->act_flag[a] = p->act_flag[b];
    p->slot_of[p->act_neuron[a] - p->lo] = a;
}

static void part_reset(partition *p, const bl_network *net, int skip_ok)
{
    uint64_t n = (uint64_t)(p->hi - p->lo);
    if (p->shiu) {
        double v0 = net->params.v_rest_mv * 0.001;
        for (uint64_t r = 0; r < n; r++) {
            ((double *)p->v)[r] = v0;
            ((double *)p->g)[r] = 0.0;
            p->ready[r] = NEVER_SPIKED;
        }
    } else {
        for (uint64_t r = 0; r < n; r++) {
            ((float *)p->v)[r] = net->p4c.v_rest;
            ((float *)p->g)[r] = 0.0f;
        }
    }
    for (uint64_t r = 0; r < n; r++)
        p->slot_of[r] = -1;
    p->n_active = 0;
    p->failed = 0;
    if (!skip_ok) /* no exact fixed point: every neuron is updated every step */
        for (int32_t i = p->lo; i < p->hi; i++)
            wake(p, i);
}

/* Final state of the active slots back into the range arrays. */
static void part_settle(partition *p)
{
    size_t sz = p->shiu ? sizeof(double) : sizeof(float);
    for (uint64_t a = 0; a < p->n_active; a++) {
        size_t r = (size_t)(p->act_neuron[a] - p->lo);
        memcpy((char *)p->v + r * sz, (char *)p->act_v + a * sz, sz);
        memcpy((char *)p->g + r * sz, (char *)p->act_g + a * sz, sz);
    }
}

static inline int poisson_event(const bl_network *net, size_t q, uint32_t trial, int32_t i, int64_t step)
{
    uint32_t word = bl_stream_word(net->seed, trial, (uint32_t)q, (uint32_t)i, (uint32_t)step);
    return (uint64_t)word < net->populations[q].threshold;
}

static inline int population_on(const bl_net_population *pop, int64_t step)
{
    return step >= pop->start_step && step < pop->stop_step && pop->threshold != 0;
}

/* The edges of source src whose targets p owns: [*e0, *e1). Rows are sorted
 * by target, so this is a binary search (skipped when p owns everything). */
static inline void owned_edges(const bl_network *net, const partition *p, int32_t src, int64_t *e0,
                               int64_t *e1)
{
    int64_t a = net->offsets[src], b = net->offsets[src + 1];
    if (p->lo == 0 && (uint64_t)p->hi == net->n_neurons) {
        *e0 = a;
        *e1 = b;
        return;
    }
    const int32_t *t = net->targets;
    *e0 = a + (int64_t)lower_bound(t + a, (size_t)(b - a), p->lo);
    *e1 = *e0 + (int64_t)lower_bound(t + *e0, (size_t)(b - *e0), p->hi);
}

/* ---- shiu2024: spec steps 1-5 for the neurons of one partition ---- */

/* Steps 1-2 over the active slots: branch-free, so it vectorises. */
__attribute__((target_clones("avx2", "default")))
static void shiu_update(const bl_shiu_consts *k, int64_t step, uint64_t n, double *restrict av,
                        double *restrict ag, const int64_t *restrict ready, uint8_t *restrict flag,
                        uint64_t v0_bits)
{
    for (uint64_t a = 0; a < n; a++) {
        int nr = step >= ready[a];
        double v = av[a], g = ag[a], v1 = v, g1 = g;
        bl_shiu_integrate(k, &v1, &g1);
        v = nr ? v1 : v;
        g = nr ? g1 : g;
        av[a] = v;
        ag[a] = g;
        flag[a] = (uint8_t)((nr & bl_shiu_crosses(k, v)) | ((bits64(v) == v0_bits) & (g == 0.0)) << 1);
    }
}

/* Brian2's not_refractory = (step - last_spike >= rfc), and a neuron that
 * spikes is not_refractory = False for the rest of its step even when
 * rfc = 0: both rules are one comparison with ready = last + max(rfc, 1). */
static void shiu_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                      const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_shiu_consts *k = &net->shiu;
    const int32_t *rfc = net->refractory_steps;
    const int64_t lo = p->lo;
    shiu_update(k, step, p->n_active, p->act_v, p->act_g, p->act_ready, p->act_flag,
                bits64(net->params.v_rest_mv * 0.001));
    spikers->n = 0;
    for (uint64_t a = p->n_active; a-- > 0;) { /* descending: removal keeps the scan valid */
        uint8_t f = p->act_flag[a];
        if (f & FLAG_SPIKE) {
            int32_t i = p->act_neuron[a];
            p->ready[i - lo] = p->act_ready[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
            p->failed |= !list_push(spikers, i);
        } else if ((f & FLAG_REST) && skip_ok) {
            rest(p, (int32_t)a);
        }
    }
    if (spikers->n > 1)
        qsort(spikers->v, spikers->n, sizeof *spikers->v, cmp_i32);
    /* 3. the spikes of step - delay, sources ascending, into owned targets
     *    that are not refractory (nor spiking now). */
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        owned_edges(net, p, arrivals[s], &e0, &e1);
        for (int64_t e = e0; e < e1; e++) {
            int32_t post = net->targets[e];
            if (step >= p->ready[post - lo]) {
                int32_t a = wake(p, post);
                ((double *)p->act_g)[a] += net->weights64[e];
            }
        }
    }
    /* 4. Poisson input, then explicit events. */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s];
            if (step >= p->ready[i - lo] && poisson_event(net, q, trial, i, step)) {
                int32_t a = wake(p, i);
                ((double *)p->act_v)[a] += k->w_poisson;
            }
        }
    }
    while (*next_event < net->n_events && net->events[2 * *next_event] < step)
        (*next_event)++;
    for (; *next_event < net->n_events && net->events[2 * *next_event] == step; (*next_event)++) {
        int32_t i = net->events[2 * *next_event + 1];
        if (i >= p->lo && i < p->hi && step >= p->ready[i - lo]) {
            int32_t a = wake(p, i);
            ((double *)p->act_v)[a] += k->w_poisson;
        }
    }
    /* 5. resets. */
    for (uint64_t s = 0; s < spikers->n; s++) {
        int32_t a = p->slot_of[spikers->v[s] - lo];
        bl_shiu_reset(k, &((double *)p->act_v)[a], &((double *)p->act_g)[a]);
    }
}

/* ---- phase4c: spec steps 1-7 for the neurons of one partition ---- */

__attribute__((target_clones("avx2", "default")))
static void p4c_update(const bl_p4c_consts *k, uint64_t n, float *restrict av, float *restrict ag,
                       int32_t *restrict ref, float *restrict arrival, uint8_t *restrict flag)
{
    const uint32_t rest_bits = bits32(k->v_rest);
    for (uint64_t a = 0; a < n; a++) {
        float g = bl_p4c_synapse(k, ag[a], arrival[a]);
        arrival[a] = 0.0f;
        int32_t r = ref[a];
        int avail = bl_p4c_available(&r);
        float v = bl_p4c_membrane(k, av[a], g, avail);
        ref[a] = r;
        av[a] = v;
        ag[a] = g;
        int at_rest = (r == 0) & (bits32(g) == 0) & (bits32(v) == rest_bits);
        flag[a] = (uint8_t)((avail & bl_p4c_crosses(k, v)) | at_rest << 1 | avail << 2);
    }
}

static inline void p4c_spike(partition *p, i32_list *spikers, int32_t i)
{
    if (!p->spiked[i - p->lo]) {
        p->spiked[i - p->lo] = 1;
        p->failed |= !list_push(spikers, i);
    }
}

/* The arrival slot of step s holds exactly the spikes of step s - delay, so
 * summing them here, sources ascending, is the seed's fan-out at s - delay. */
static void p4c_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                     const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    const bl_p4c_consts *k = &net->p4c;
    const int32_t lo = p->lo;
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        owned_edges(net, p, arrivals[s], &e0, &e1);
        for (int64_t e = e0; e < e1; e++) {
            int32_t a = wake(p, net->targets[e]);
            p->act_arrival[a] += net->weights32[e];
        }
    }
    /* 1-4 over the active slots. */
    p4c_update(k, p->n_active, p->act_v, p->act_g, p->act_ref, p->act_arrival, p->act_flag);
    spikers->n = 0;
    for (uint64_t a = p->n_active; a-- > 0;) {
        uint8_t f = p->act_flag[a];
        if (f & FLAG_SPIKE)
            p4c_spike(p, spikers, p->act_neuron[a]);
        else if ((f & FLAG_REST) && skip_ok)
            rest(p, (int32_t)a);
    }
    /* 5. forced spikes of available stimulated neurons (a resting neuron is
     *    available: its refractory counter is 0). */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s], a = p->slot_of[i - lo];
            int avail = a < 0 || (p->act_flag[a] & FLAG_AVAILABLE);
            if (avail && !p->spiked[i - lo] && poisson_event(net, q, trial, i, step))
                p4c_spike(p, spikers, i);
        }
    }
    while (*next_event < net->n_events && net->events[2 * *next_event] < step)
        (*next_event)++;
    for (; *next_event < net->n_events && net->events[2 * *next_event] == step; (*next_event)++) {
        int32_t i = net->events[2 * *next_event + 1];
        if (i < p->lo || i >= p->hi)
            continue;
        int32_t a = p->slot_of[i - lo];
        if (a < 0 || (p->act_flag[a] & FLAG_AVAILABLE))
            p4c_spike(p, spikers, i);
    }
    /* 6. resets (7, the fan-out, happens delay steps later: see above). */
    if (spikers->n > 1)
        qsort(spikers->v, spikers->n, sizeof *spikers->v, cmp_i32);
    for (uint64_t s = 0; s < spikers->n; s++) {
        int32_t i = spikers->v[s], a = wake(p, i);
        p->spiked[i - lo] = 0;
        bl_p4c_reset(k, &((float *)p->act_v)[a], &p->act_ref[a]);
    }
}

/* ---- trials ---- */

static void runner_free(runner *r, int64_t delay)
{
    for (int q = 0; q < r->n_parts; q++)
        part_free(&r->parts[q], delay);
    free(r->parts);
    for (int k = 0; k < 2; k++) {
        free(r->merged[k].start);
        free(r->merged[k].all.v);
    }
    free(r->out.v);
    memset(r, 0, sizeof *r);
}

/* Split the neurons into n_parts contiguous ranges with about equal work:
 * one unit per neuron plus one per incoming edge. */
static void split(const bl_network *net, int n_parts, int32_t *bounds, int32_t *indegree_scratch)
{
    uint64_t n = net->n_neurons;
    memset(indegree_scratch, 0, (n ? n : 1) * sizeof *indegree_scratch);
    for (uint64_t e = 0; e < net->n_edges; e++)
        indegree_scratch[net->targets[e]]++;
    uint64_t total = n + net->n_edges, acc = 0;
    int q = 1;
    bounds[0] = 0;
    for (uint64_t i = 0; i < n && q < n_parts; i++) {
        acc += 1 + (uint64_t)indegree_scratch[i];
        while (q < n_parts && acc * (uint64_t)n_parts >= total * (uint64_t)q)
            bounds[q++] = (int32_t)(i + 1);
    }
    while (q <= n_parts)
        bounds[q++] = (int32_t)n;
}

static int runner_alloc(runner *r, const bl_network *net, int n_parts)
{
    memset(r, 0, sizeof *r);
    uint64_t n = net->n_neurons;
    int32_t *bounds = malloc(((size_t)n_parts + 1) * sizeof *bounds);
    int32_t *scratch = malloc((n ? n : 1) * sizeof *scratch);
    r->parts = calloc((size_t)n_parts, sizeof *r->parts);
    r->n_parts = n_parts;
    int ok = bounds && scratch && r->parts;
    for (int k = 0; ok && k < 2; k++)
        ok = (r->merged[k].start = calloc((size_t)net->delay_steps + 1, sizeof(uint64_t))) != NULL;
    if (ok)
        split(net, n_parts, bounds, scratch);
    for (int q = 0; ok && q < n_parts; q++)
        ok = part_alloc(&r->parts[q], net, bounds[q], bounds[q + 1]);
    free(bounds);
    free(scratch);
    return ok;
}

/* Merge window w's per-partition spike lists (partition order is neuron
 * order, so concatenation keeps each step ascending) and record them. */
static int merge_window(runner *r, int64_t w, int64_t steps_in_window, int64_t delay)
{
    spike_window *m = &r->merged[w & 1];
    m->all.n = 0;
    int ok = 1;
    for (int64_t j = 0; j < steps_in_window; j++) {
        m->start[j] = m->all.n;
        for (int q = 0; q < r->n_parts; q++) {
            const i32_list *l = &r->parts[q].window[j];
            for (uint64_t s = 0; s < l->n; s++)
                ok &= list_push(&m->all, l->v[s]) & list_push(&r->out, (int32_t)(w * delay + j)) &
                      list_push(&r->out, l->v[s]);
        }
    }
    for (int64_t j = steps_in_window; j <= delay; j++)
        m->start[j] = m->all.n;
    return ok;
}

/* One partition's steps of window w. */
static void run_window(const cpu_state *s, runner *r, int q, uint32_t trial, int64_t w, int64_t n_steps,
                       size_t *next_event)
{
    const bl_network *net = s->net;
    const int64_t delay = net->delay_steps, s0 = w * delay;
    const int64_t s1 = s0 + delay < n_steps ? s0 + delay : n_steps;
    const spike_window *prev = &r->merged[(w - 1) & 1]; /* spikes of step - delay */
    partition *p = &r->parts[q];
    for (int64_t step = s0; step < s1 && !p->failed; step++) {
        const int32_t *arr = NULL;
        uint64_t n_arr = 0;
        if (w > 0) {
            int64_t j = step - s0;
            arr = prev->all.v + prev->start[j];
            n_arr = prev->start[j + 1] - prev->start[j];
        }
        if (p->shiu)
            shiu_step(net, s->skip_ok, p, trial, step, arr, n_arr, next_event, &p->window[step - s0]);
        else
            p4c_step(net, s->skip_ok, p, trial, step, arr, n_arr, next_event, &p->window[step - s0]);
    }
}

/* A whole trial on one runner; its partitions run in parallel when there are
 * several, meeting once per window to merge spikes. */
static int run_trial(const cpu_state *s, runner *r, uint32_t trial, int64_t n_steps)
{
    const int64_t delay = s->net->delay_steps, windows = (n_steps + delay - 1) / delay;
    int failed = 0;
    r->out.n = 0;
    for (int k = 0; k < 2; k++)
        memset(r->merged[k].start, 0, ((size_t)delay + 1) * sizeof(uint64_t));
#pragma omp parallel num_threads(r->n_parts) if (r->n_parts > 1)
    {
        int q = omp_get_thread_num();
        size_t next_event = 0;
        part_reset(&r->parts[q], s->net, s->skip_ok);
        for (int64_t w = 0; w < windows; w++) {
            run_window(s, r, q, trial, w, n_steps, &next_event);
#pragma omp barrier
#pragma omp single
            {
                for (int k = 0; k < r->n_parts; k++)
                    failed |= r->parts[k].failed;
                if (!failed)
                    failed |= !merge_window(r, w, (w + 1) * delay < n_steps ? delay : n_steps - w * delay, delay);
                for (int k = 0; k < r->n_parts; k++)
                    r->parts[k].failed |= failed; /* every partition stops at the same window */
            }
            if (r->parts[q].failed)
                break;
        }
        part_settle(&r->parts[q]);
    }
    return !failed;
}

/* Copy one finished trial into the result (called in trial order). */
static bl_status publish(const runner *r, const bl_network *net, uint32_t trial, bl_result *res, bl_error *err)
{
    uint64_t a = 0;
    while (a < r->out.n) {
        int32_t step = r->out.v[a], batch[256];
        size_t nb = 0;
        bl_status st;
        while (a < r->out.n && r->out.v[a] == step) {
            batch[nb++] = r->out.v[a + 1];
            a += 2;
            if (nb == 256) {
                if ((st = bl_result_append_spikes(res, trial, (uint32_t)step, batch, nb, err)))
                    return st;
                nb = 0;
            }
        }
        if (nb && (st = bl_result_append_spikes(res, trial, (uint32_t)step, batch, nb, err)))
            return st;
    }
    size_t sz = net->params.preset == BL_PRESET_SHIU2024 ? sizeof(double) : sizeof(float);
    for (int q = 0; q < r->n_parts; q++) {
        const partition *p = &r->parts[q];
        size_t n = (size_t)(p->hi - p->lo);
        memcpy((char *)bl_result_v_row(res, trial) + (size_t)p->lo * sz, p->v, n * sz);
        memcpy((char *)bl_result_g_row(res, trial) + (size_t)p->lo * sz, p->g, n * sz);
    }
    return BL_OK;
}

/* ---- the backend ---- */

static void cpu_destroy(void *v)
{
    cpu_state *s = v;
    if (!s)
        return;
    for (int k = 0; k < s->n_runners; k++)
        runner_free(&s->runners[k], s->net->delay_steps);
    free(s->runners);
    free(s);
}

/* Is the rest state a fixed point of one step, bit for bit, that never fires? */
static int rest_is_fixed_point(const bl_network *net)
{
    if (net->params.preset == BL_PRESET_SHIU2024) {
        double v0 = net->params.v_rest_mv * 0.001, v = v0, g = 0.0;
        bl_shiu_integrate(&net->shiu, &v, &g);
        return bits64(v) == bits64(v0) && g == 0.0 && !bl_shiu_crosses(&net->shiu, v0);
    }
    const bl_p4c_consts *k = &net->p4c;
    float g = bl_p4c_synapse(k, 0.0f, 0.0f);
    float v = bl_p4c_membrane(k, k->v_rest, g, 1);
    return bits32(v) == bits32(k->v_rest) && bits32(g) == 0 && !bl_p4c_crosses(k, k->v_rest);
}

static int cpu_set_threads(void *v, int threads)
{
    cpu_state *s = v;
    int t = threads > 0 ? threads : omp_get_num_procs();
    s->threads = t < 1 ? 1 : t;
    return s->threads;
}

static bl_status cpu_create(const bl_network *net, void **out, bl_error *err)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate");
    s->net = net;
    s->skip_ok = rest_is_fixed_point(net);
    cpu_set_threads(s, 0);
    *out = s;
    return BL_OK;
}

static bl_status ensure_runners(cpu_state *s, int n_runners, int parts, bl_error *err)
{
    if (s->n_runners == n_runners && s->parts_per_runner == parts)
        return BL_OK;
    for (int k = 0; k < s->n_runners; k++)
        runner_free(&s->runners[k], s->net->delay_steps);
    free(s->runners);
    s->n_runners = 0;
    s->runners = calloc((size_t)n_runners, sizeof *s->runners);
    if (!s->runners)
        return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate %d runners", n_runners);
    for (int k = 0; k < n_runners; k++) {
        s->n_runners = k + 1;
        if (!runner_alloc(&s->runners[k], s->net, parts))
            return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate state for %" PRIu64 " neurons",
                           s->net->n_neurons);
    }
    s->parts_per_runner = parts;
    return BL_OK;
}

static bl_status cpu_run(void *v, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                         bl_result *result, bl_error *err)
{
    cpu_state *s = v;
    /* Whole trials per thread when there are enough trials (no exchange at
     * all); otherwise each trial is split into `threads` partitions. */
    int trial_parallel = (uint32_t)s->threads <= n_trials || s->threads == 1;
    int n_runners = trial_parallel ? (s->threads < (int)n_trials ? s->threads : (int)n_trials) : 1;
    int parts = trial_parallel ? 1 : s->threads;
    if ((uint64_t)parts > s->net->n_neurons)
        parts = s->net->n_neurons ? (int)s->net->n_neurons : 1;
    bl_status st = ensure_runners(s, n_runners, parts, err);
    /* Trials go in waves of n_runners; each wave is published in trial order. */
    for (uint32_t wave = 0; !st && wave < n_trials; wave += (uint32_t)n_runners) {
        int in_wave = (int)(n_trials - wave < (uint32_t)n_runners ? n_trials - wave : (uint32_t)n_runners);
        int ok[64] = {0}, *okp = ok;
        int *heap_ok = in_wave > 64 ? calloc((size_t)in_wave, sizeof *heap_ok) : NULL;
        if (in_wave > 64 && !(okp = heap_ok))
            return bl_fail(err, BL_ERR_NOMEM, "cpu backend: cannot allocate");
#pragma omp parallel for num_threads(in_wave) schedule(static, 1) if (in_wave > 1)
        for (int t = 0; t < in_wave; t++)
            okp[t] = run_trial(s, &s->runners[t], first_trial + wave + (uint32_t)t, (int64_t)n_steps);
        for (int t = 0; !st && t < in_wave; t++)
            st = okp[t] ? publish(&s->runners[t], s->net, first_trial + wave + (uint32_t)t, result, err)
                        : bl_fail(err, BL_ERR_NOMEM, "cpu backend: out of memory in trial %" PRIu32,
                                  first_trial + wave + (uint32_t)t);
        free(heap_ok);
    }
    return st;
}

const bl_backend bl_backend_cpu = {"cpu", cpu_create, cpu_run, cpu_destroy, cpu_set_threads};
