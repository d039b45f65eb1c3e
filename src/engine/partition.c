/* The partition kernel: the exact per-neuron stepping of both presets over
 * a range of neurons, with resting neurons skipped. See partition.h and
 * engine_cpu.c for why it is exact. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine/partition.h"

#define NEVER_SPIKED (-(INT64_C(1) << 40))


int bl_list_reserve(i32_list *l, uint64_t n)
{
    if (n <= l->cap)
        return 1;
    uint64_t cap = l->cap ? l->cap : 256;
    while (cap < n)
        cap *= 2;
    int32_t *v = realloc(l->v, cap * sizeof *v);
    if (!v)
        return 0;
    l->v = v;
    l->cap = cap;
    return 1;
}

int bl_list_push(i32_list *l, int32_t x)
{
    if (l->n == l->cap && !bl_list_reserve(l, l->n + 1))
        return 0;
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


/* ---- partitions ---- */

void bl_partition_free(partition *p, int64_t delay)
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

int bl_partition_alloc(partition *p, const bl_network *net, int32_t lo, int32_t hi)
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
    p->slot_of[p->act_neuron[a] - p->lo] = a;
}

void bl_partition_reset(partition *p, const bl_network *net, int skip_ok)
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
void bl_partition_settle(partition *p)
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

/* Steps 1-2 over the active slots, in blocks of 64. The inner loop only
 * updates state and notes whether any slot of the block might have spiked or
 * come to rest, so that it vectorises; block_hit[b] marks the blocks that the
 * exact scalar scan in shiu_step must visit (usually none or one). */
#define SHIU_BLOCK 64
__attribute__((target_clones("avx2", "default")))
static int shiu_update(const bl_shiu_consts *k, int64_t step, uint64_t n, double *restrict av,
                      double *restrict ag, const int64_t *restrict ready, double v0,
                      uint8_t *restrict block_hit)
{
    int any = 0;
    for (uint64_t b0 = 0; b0 < n; b0 += SHIU_BLOCK) {
        uint64_t end = b0 + SHIU_BLOCK < n ? b0 + SHIU_BLOCK : n;
        int64_t hit = 0;
        for (uint64_t a = b0; a < end; a++) {
            int64_t nr = step >= ready[a];
            double v = av[a], g = ag[a], v1 = v, g1 = g;
            bl_shiu_integrate(k, &v1, &g1);
            v = nr ? v1 : v;
            g = nr ? g1 : g;
            av[a] = v;
            ag[a] = g;
            hit |= (nr & (v > k->v_th)) | ((v == v0) & (g == 0.0));
        }
        block_hit[b0 / SHIU_BLOCK] = hit != 0;
        any |= hit != 0;
    }
    return any;
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
    const double v0 = net->params.v_rest_mv * 0.001;
    spikers->n = 0;
    /* act_flag holds one byte per block of slots here (it has a byte per slot). */
    if (shiu_update(k, step, p->n_active, p->act_v, p->act_g, p->act_ready, v0, p->act_flag)) {
        const double *av = p->act_v, *ag = p->act_g;
        /* Descending, so that a removal (the last slot fills the hole) only
         * moves a slot that was already scanned. */
        for (uint64_t b = (p->n_active + SHIU_BLOCK - 1) / SHIU_BLOCK; b-- > 0;) {
            if (!p->act_flag[b])
                continue;
            uint64_t end = (b + 1) * SHIU_BLOCK < p->n_active ? (b + 1) * SHIU_BLOCK : p->n_active;
            for (uint64_t a = end; a-- > b * SHIU_BLOCK;) {
                /* ready is unchanged by the update, so this is the update's nr */
                if (step >= p->act_ready[a] && bl_shiu_crosses(k, av[a])) {
                    int32_t i = p->act_neuron[a];
                    p->ready[i - lo] = p->act_ready[a] = step + (rfc[i] > 1 ? rfc[i] : 1);
                    p->failed |= !bl_list_push(spikers, i);
                } else if (skip_ok && bits64(av[a]) == bits64(v0) && ag[a] == 0.0) {
                    rest(p, (int32_t)a);
                }
            }
        }
    }
    if (spikers->n > 1)
        qsort(spikers->v, spikers->n, sizeof *spikers->v, cmp_i32);
    /* 3. the spikes of step - delay, sources ascending, into owned targets
     *    that are not refractory (nor spiking now). */
    for (uint64_t s = 0; s < n_arrivals; s++) {
        int64_t e0, e1;
        owned_edges(net, p, arrivals[s], &e0, &e1);
        const bl_net_fanout f = bl_net_fanout_of(net, arrivals[s]);
        for (int64_t e = e0; e < e1; e++) {
            int32_t post = net->targets[e];
            if (step >= p->ready[post - lo]) {
                int32_t a = wake(p, post);
                ((double *)p->act_g)[a] += bl_shiu_edge_weight(k, bl_net_fanout_count(&f, e));
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

/* Steps 1-4 over the active slots in blocks, as shiu_update: the loop only
 * updates state and marks blocks that may hold a natural spike or a neuron
 * back at rest. After it, a slot is available exactly when its refractory
 * counter is 0 (bl_p4c_available counts down, then tests for 0). */
#define P4C_BLOCK 64
__attribute__((target_clones("avx2", "default")))
static int p4c_update(const bl_p4c_consts *k, uint64_t n, float *restrict av, float *restrict ag,
                      int32_t *restrict ref, float *restrict arrival, uint8_t *restrict block_hit)
{
    int any = 0;
    for (uint64_t b0 = 0; b0 < n; b0 += P4C_BLOCK) {
        uint64_t end = b0 + P4C_BLOCK < n ? b0 + P4C_BLOCK : n;
        int32_t hit = 0;
        for (uint64_t a = b0; a < end; a++) {
            float g = bl_p4c_synapse(k, ag[a], arrival[a]);
            arrival[a] = 0.0f;
            int32_t r = ref[a];
            int avail = bl_p4c_available(&r);
            float v = bl_p4c_membrane(k, av[a], g, avail);
            ref[a] = r;
            av[a] = v;
            ag[a] = g;
            hit |= (avail & bl_p4c_crosses(k, v)) | ((r == 0) & (g == 0.0f) & (v == k->v_rest));
        }
        block_hit[b0 / P4C_BLOCK] = hit != 0;
        any |= hit != 0;
    }
    return any;
}

static inline void p4c_spike(partition *p, i32_list *spikers, int32_t i)
{
    if (!p->spiked[i - p->lo]) {
        p->spiked[i - p->lo] = 1;
        p->failed |= !bl_list_push(spikers, i);
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
        const bl_net_fanout f = bl_net_fanout_of(net, arrivals[s]);
        for (int64_t e = e0; e < e1; e++) {
            int32_t a = wake(p, net->targets[e]);
            p->act_arrival[a] += bl_p4c_edge_weight(k, bl_net_fanout_count(&f, e));
        }
    }
    /* 1-4 over the active slots; act_flag holds one mark per block here. */
    spikers->n = 0;
    if (p4c_update(k, p->n_active, p->act_v, p->act_g, p->act_ref, p->act_arrival, p->act_flag)) {
        const float *av = p->act_v, *ag = p->act_g;
        const uint32_t rest_bits = bits32(k->v_rest);
        for (uint64_t b = (p->n_active + P4C_BLOCK - 1) / P4C_BLOCK; b-- > 0;) {
            if (!p->act_flag[b])
                continue;
            uint64_t end = (b + 1) * P4C_BLOCK < p->n_active ? (b + 1) * P4C_BLOCK : p->n_active;
            for (uint64_t a = end; a-- > b * P4C_BLOCK;) { /* descending: removal moves scanned slots */
                int avail = p->act_ref[a] == 0;
                if (avail && bl_p4c_crosses(k, av[a]))
                    p4c_spike(p, spikers, p->act_neuron[a]);
                else if (skip_ok && avail && bits32(ag[a]) == 0 && bits32(av[a]) == rest_bits)
                    rest(p, (int32_t)a);
            }
        }
    }
    /* 5. forced spikes of available stimulated neurons (a resting neuron is
     *    available: its refractory counter is 0). */
    for (size_t q = 0; q < net->n_populations; q++) {
        if (!population_on(&net->populations[q], step))
            continue;
        for (size_t s = p->pop_first[q]; s < p->pop_last[q]; s++) {
            int32_t i = net->populations[q].neurons[s], a = p->slot_of[i - lo];
            int avail = a < 0 || p->act_ref[a] == 0;
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
        if (a < 0 || p->act_ref[a] == 0)
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

/* Split the neurons into n_parts contiguous ranges with about equal work:
 * one unit per neuron plus one per incoming edge. */
int bl_partition_split(const bl_network *net, int n_parts, int32_t *bounds)
{
    uint64_t n = net->n_neurons;
    int32_t *indegree_scratch = calloc(n ? n : 1, sizeof *indegree_scratch);
    if (!indegree_scratch)
        return 0;
    for (uint64_t e = 0; e < net->n_edges; e++)
        indegree_scratch[net->targets[e]]++;
    bl_split_by_work(indegree_scratch, 0, (int32_t)n, n_parts, bounds);
    free(indegree_scratch);
    return 1;
}

/* Is the rest state a fixed point of one step, bit for bit, that never fires? */
int bl_partition_rest_is_fixed_point(const bl_network *net)
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


void bl_partition_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                       const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    if (p->shiu)
        shiu_step(net, skip_ok, p, trial, step, arrivals, n_arrivals, next_event, spikers);
    else
        p4c_step(net, skip_ok, p, trial, step, arrivals, n_arrivals, next_event, spikers);
}
