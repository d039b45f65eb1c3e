/* The model-agnostic part of the partition kernel: memory, the active-slot
 * bookkeeping, trial start and end, and the invariant checker. The stepping
 * itself is the model's (src/models/lif_<model>.c). See partition.h and engine_cpu.c
 * for why it is exact. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/partition.h"

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

void bl_partition_free(partition *p, int64_t delay)
{
    for (int f = 0; f < BL_PART_MAX_FIELDS; f++) {
        free(p->rng[f]);
        free(p->act[f]);
    }
    void *blocks[] = {p->slot_of, p->pop_first, p->pop_last, p->act_neuron, p->act_flag,
                      p->scratch[0].v, p->scratch[1].v, p->buf[0], p->buf[1], p->buf[2]};
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
    const bl_part_kernel *K = net->model->part;
    uint64_t n = (uint64_t)(hi - lo) ? (uint64_t)(hi - lo) : 1;
    p->lo = lo;
    p->hi = hi;
    p->k = K;
    p->net = net;
    p->delay = net->delay_steps;
    uint64_t cap = n < 4096 ? n : 4096; /* slots grow on demand: activity is sparse */
    size_t np = net->n_populations ? net->n_populations : 1;
    p->act_cap = cap;
    int ok = 1;
    for (int f = 0; f < K->n_fields; f++) {
        if (K->field[f].where & BL_PART_RANGE)
            ok &= (p->rng[f] = calloc(n, K->field[f].size)) != NULL;
        if (K->field[f].where & BL_PART_SLOT)
            ok &= (p->act[f] = malloc(cap * K->field[f].size)) != NULL;
        if (K->field[f].where == BL_PART_ARRAYS) {
            /* indexed by neuron id: hi entries a lane (kernel_ops.h) */
            p->lanes[f] = K->lanes(net, f);
            size_t entries = (size_t)p->lanes[f] * (size_t)hi;
            ok &= (p->rng[f] = calloc(entries ? entries : 1, K->field[f].size)) != NULL;
        }
    }
    p->v = p->rng[0];
    p->g = p->rng[1];
    p->slot_of = malloc(n * sizeof *p->slot_of);
    p->pop_first = malloc(np * sizeof *p->pop_first);
    p->pop_last = malloc(np * sizeof *p->pop_last);
    p->act_neuron = malloc(cap * sizeof *p->act_neuron);
    p->act_flag = malloc(cap);
    p->window = calloc((size_t)net->delay_steps, sizeof *p->window);
    ok = ok && p->slot_of && p->pop_first && p->pop_last && p->act_neuron && p->act_flag && p->window;
    for (size_t q = 0; ok && q < net->n_populations; q++) {
        const bl_net_population *pop = &net->populations[q];
        p->pop_first[q] = lower_bound(pop->neurons, pop->n, lo);
        p->pop_last[q] = lower_bound(pop->neurons, pop->n, hi);
    }
    return ok;
}

void *bl_partition_buf(partition *p, int which, size_t bytes)
{
    if (bytes <= p->buf_cap[which])
        return p->buf[which];
    size_t cap = p->buf_cap[which] ? p->buf_cap[which] : 4096;
    while (cap < bytes)
        cap *= 2;
    void *b = realloc(p->buf[which], cap);
    if (!b) {
        p->failed = 1;
        return NULL;
    }
    p->buf[which] = b;
    p->buf_cap[which] = cap;
    return b;
}

int bl_partition_grow(partition *p)
{
    if (p->n_active < p->act_cap)
        return 1;
    const bl_part_kernel *K = p->k;
    uint64_t cap = 2 * p->act_cap;
    int ok = 1;
    for (int f = 0; f < K->n_fields; f++) {
        if (!(K->field[f].where & BL_PART_SLOT))
            continue;
        void *q = realloc(p->act[f], cap * K->field[f].size);
        if (q)
            p->act[f] = q;
        else
            ok = 0;
    }
    int32_t *an = realloc(p->act_neuron, cap * sizeof *an);
    if (an)
        p->act_neuron = an;
    uint8_t *fl = realloc(p->act_flag, cap);
    if (fl)
        p->act_flag = fl;
    ok = ok && an && fl;
    if (ok)
        p->act_cap = cap;
    else
        p->failed = 1;
    return ok;
}

/* n copies of a value of sz bytes (typed loops: this runs for every neuron
 * at the start of every trial). */
static void fill(void *dst, const void *value, size_t sz, uint64_t n)
{
    if (sz == 8) {
        uint64_t x, *d = dst;
        memcpy(&x, value, 8);
        for (uint64_t r = 0; r < n; r++)
            d[r] = x;
    } else if (sz == 4) {
        uint32_t x, *d = dst;
        memcpy(&x, value, 4);
        for (uint64_t r = 0; r < n; r++)
            d[r] = x;
    } else if (sz == 1) {
        memset(dst, *(const unsigned char *)value, n);
    } else {
        for (uint64_t r = 0; r < n; r++)
            memcpy((char *)dst + r * sz, value, sz);
    }
}

void bl_partition_reset(partition *p, const bl_network *net, int skip_ok)
{
    const bl_part_kernel *K = p->k;
    uint64_t n = (uint64_t)(p->hi - p->lo);
    for (int f = 0; f < K->n_fields; f++) {
        if (!(K->field[f].where & BL_PART_RANGE))
            continue;
        unsigned char value[16];
        K->initial(net, f, value);
        fill(p->rng[f], value, K->field[f].size, n);
    }
    for (uint64_t r = 0; r < n; r++)
        p->slot_of[r] = -1;
    p->n_active = 0;
    p->failed = 0;
    p->next_forced = 0;
    if (!skip_ok) /* no exact fixed point: every neuron is updated every step */
        for (int32_t i = p->lo; i < p->hi; i++)
            bl_part_wake(p, K, i);
    if (K->start)
        K->start(net, p);
    BL_ASSERT_SANE(bl_partition_sane, p);
}

size_t bl_partition_record_bytes(const bl_network *net)
{
    const bl_part_kernel *K = net->model->part;
    size_t r = 1;
    for (int f = 0; f < K->n_fields; f++)
        r += (K->field[f].where & BL_PART_RANGE ? K->field[f].size : 0) +
             (K->field[f].where & BL_PART_SLOT ? K->field[f].size : 0) +
             (K->field[f].where == BL_PART_ARRAYS ? (size_t)K->lanes(net, f) * K->field[f].size : 0);
    return r;
}

/* The layout is field-major (an array over every neuron per field), so a
 * partition writes its slice of each with one copy: a neuron-major record
 * (a few bytes per field per neuron) cost 3.75% of a larva run that offered
 * a snapshot every simulated second; this costs nothing measurable. */
void bl_partition_save(const partition *p, unsigned char *all)
{
    const bl_part_kernel *K = p->k;
    const size_t N = (size_t)p->net->n_neurons, lo = (size_t)p->lo, n = (size_t)(p->hi - p->lo);
    memset(all + lo, 0, n);
    for (uint64_t a = 0; a < p->n_active; a++)
        all[p->act_neuron[a]] = 1;
    unsigned char *o = all + N;
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where & BL_PART_RANGE) {
            const size_t sz = K->field[f].size;
            memcpy(o + lo * sz, p->rng[f], n * sz);
            o += N * sz;
        }
    /* arrays fields: the owned slice of each lane (entries by neuron id) */
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where == BL_PART_ARRAYS) {
            const size_t sz = K->field[f].size, hi = (size_t)p->hi;
            for (uint32_t k = 0; k < p->lanes[f]; k++) {
                memcpy(o + lo * sz, (const char *)p->rng[f] + ((size_t)k * hi + lo) * sz, n * sz);
                o += N * sz;
            }
        }
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where & BL_PART_SLOT) {
            const size_t sz = K->field[f].size;
            memset(o + lo * sz, 0, n * sz);
            for (uint64_t a = 0; a < p->n_active; a++)
                memcpy(o + (size_t)p->act_neuron[a] * sz, (const char *)p->act[f] + a * sz, sz);
            o += N * sz;
        }
}

int bl_partition_load(partition *p, const unsigned char *all, int64_t s0)
{
    const bl_part_kernel *K = p->k;
    const size_t N = (size_t)p->net->n_neurons, lo = (size_t)p->lo, n = (size_t)(p->hi - p->lo);
    p->n_active = 0;
    /* p->failed is bl_partition_reset's: a kernel whose `start` ran out of
     * memory stays failed. */
    p->step = s0 - 1;
    /* The forced-spike cursor where an uninterrupted trial has it: past
     * every forced spike before step s0. */
    p->next_forced = 0;
    while (p->next_forced < p->net->n_forced && p->net->forced[2 * p->next_forced] < s0)
        p->next_forced++;
    const unsigned char *o = all + N;
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where & BL_PART_RANGE) {
            const size_t sz = K->field[f].size;
            memcpy(p->rng[f], o + lo * sz, n * sz);
            o += N * sz;
        }
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where == BL_PART_ARRAYS) {
            const size_t sz = K->field[f].size, hi = (size_t)p->hi;
            for (uint32_t k = 0; k < p->lanes[f]; k++) {
                memcpy((char *)p->rng[f] + ((size_t)k * hi + lo) * sz, o + lo * sz, n * sz);
                o += N * sz;
            }
        }
    const unsigned char *slots = o;
    for (size_t r = 0; r < n; r++)
        p->slot_of[r] = -1;
    for (size_t r = 0; r < n; r++) {
        if (!all[lo + r])
            continue;
        if (!bl_partition_grow(p))
            return 0;
        int32_t a = (int32_t)p->n_active++;
        p->act_neuron[a] = (int32_t)(lo + r);
        p->slot_of[r] = a;
        p->act_flag[a] = 0;
        const unsigned char *q = slots;
        for (int f = 0; f < K->n_fields; f++)
            if (K->field[f].where & BL_PART_SLOT) {
                const size_t sz = K->field[f].size;
                memcpy((char *)p->act[f] + (size_t)a * sz, q + (lo + r) * sz, sz);
                q += N * sz;
            }
    }
    BL_ASSERT_SANE(bl_partition_sane, p);
    return 1;
}

/* Final state of the active slots back into the range arrays. */
void bl_partition_settle(partition *p)
{
    const bl_part_kernel *K = p->k;
    for (uint64_t a = 0; a < p->n_active; a++) {
        size_t r = (size_t)(p->act_neuron[a] - p->lo);
        for (int f = 0; f < 2; f++) {
            size_t sz = K->field[f].size;
            memcpy((char *)p->rng[f] + r * sz, (const char *)p->act[f] + a * sz, sz);
        }
    }
    if (K->settle)
        K->settle(p->net, p);
}

int bl_partition_sane(const partition *p, bl_error *why)
{
    if (p->hi < p->lo)
        return BL_BROKEN(why, "partition: range [%d, %d) runs backwards", p->lo, p->hi);
    if (p->n_active > p->act_cap)
        return BL_BROKEN(why, "partition [%d, %d): %" PRIu64 " active slots exceed the capacity %" PRIu64, p->lo,
                         p->hi, (uint64_t)p->n_active, (uint64_t)p->act_cap);
    if (!p->k || p->v != p->rng[0] || p->g != p->rng[1])
        return BL_BROKEN(why, "partition [%d, %d): no kernel, or v/g are not range fields 0 and 1", p->lo, p->hi);
    uint64_t n = (uint64_t)(p->hi - p->lo), resting = 0;
    for (uint64_t a = 0; a < p->n_active; a++) {
        int32_t i = p->act_neuron[a];
        if (i < p->lo || i >= p->hi)
            return BL_BROKEN(why, "partition [%d, %d): active slot %" PRIu64 " holds neuron %d, outside the range",
                             p->lo, p->hi, a, i);
        if (p->slot_of[i - p->lo] != (int32_t)a)
            return BL_BROKEN(why, "partition [%d, %d): active slot %" PRIu64 " holds neuron %d, whose slot_of is %d",
                             p->lo, p->hi, a, i, p->slot_of[i - p->lo]);
    }
    for (uint64_t r = 0; r < n; r++) {
        int32_t a = p->slot_of[r];
        if (a < 0)
            resting += a == -1;
        else if ((uint64_t)a >= p->n_active || p->act_neuron[a] != p->lo + (int32_t)r)
            return BL_BROKEN(why, "partition [%d, %d): neuron %d maps to slot %d, which does not hold it (%" PRIu64
                             " active)", p->lo, p->hi, p->lo + (int32_t)r, a, (uint64_t)p->n_active);
    }
    if (resting + p->n_active != n)
        return BL_BROKEN(why, "partition [%d, %d): %" PRIu64 " resting + %" PRIu64 " active != %" PRIu64 " neurons",
                         p->lo, p->hi, resting, (uint64_t)p->n_active, n);
    for (int64_t j = 0; p->window && j < p->delay; j++) {
        const i32_list *l = &p->window[j];
        if (l->n > l->cap)
            return BL_BROKEN(why, "partition [%d, %d): spike window %" PRId64 " holds %" PRIu64 " > capacity %" PRIu64,
                             p->lo, p->hi, j, (uint64_t)l->n, (uint64_t)l->cap);
        for (uint64_t s = 0; s < l->n; s++)
            if (l->v[s] < p->lo || l->v[s] >= p->hi || (s && l->v[s] <= l->v[s - 1]))
                return BL_BROKEN(why, "partition [%d, %d): spike window %" PRId64 " entry %" PRIu64 " (neuron %d) is "
                                 "outside the range or not ascending", p->lo, p->hi, j, s, l->v[s]);
    }
    return 1;
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

int bl_partition_rest_is_fixed_point(const bl_network *net) { return net->model->rest_is_fixed_point(net); }

void bl_partition_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                       const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers)
{
    p->step = step;
    p->k->step(net, skip_ok, p, trial, step, arrivals, n_arrivals, next_event, spikers);
}

/* The longest window handed to a model's whole-window kernel (its stack
 * arrays of arrivals; the published delay is 18 steps). */
#define BL_MAX_WINDOW 64

/* Thread CPU time in ns (0 when the clock is unavailable: then both paths
 * measure 0 and the step-by-step one is kept). */
static uint64_t thread_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void steps_of_window(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0, int64_t s1,
                            const int32_t *all, const uint64_t *start, size_t *next_event)
{
    for (int64_t step = s0; step < s1 && !p->failed; step++) {
        int64_t j = step - s0;
        const int32_t *arr = all ? all + start[j] : NULL;
        uint64_t n_arr = all ? start[j + 1] - start[j] : 0;
        bl_partition_step(net, skip_ok, p, trial, step, arr, n_arr, next_event, &p->window[j]);
    }
}

static void window_at_once(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0, int64_t s1,
                           const int32_t *all, const uint64_t *start, size_t *next_event)
{
    const int32_t *arr[BL_MAX_WINDOW];
    uint64_t n_arr[BL_MAX_WINDOW];
    for (int64_t j = 0; j < s1 - s0; j++) {
        arr[j] = all ? all + start[j] : NULL;
        n_arr[j] = all ? start[j + 1] - start[j] : 0;
    }
    p->k->window(net, skip_ok, p, trial, s0, s1, arr, n_arr, next_event);
}

void bl_partition_run_window(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0,
                             int64_t s1, const int32_t *all, const uint64_t *start, size_t *next_event)
{
    if (!p->k->window || p->window_mode == BL_WINDOW_NEVER || s1 - s0 > BL_MAX_WINDOW) {
        steps_of_window(net, skip_ok, p, trial, s0, s1, all, start, next_event);
        return;
    }
    if (p->window_mode != BL_WINDOW_TUNE) {
        window_at_once(net, skip_ok, p, trial, s0, s1, all, start, next_event);
        return;
    }
    bl_window_tune *t = &p->tune;
    const uint64_t pos = t->windows++ % BL_TUNE_CYCLE;
    const int probing = pos < BL_TUNE_PROBE, way = probing ? (int)(pos & 1) : t->use_window;
    const uint64_t t0 = probing ? thread_ns() : 0;
    if (way)
        window_at_once(net, skip_ok, p, trial, s0, s1, all, start, next_event);
    else
        steps_of_window(net, skip_ok, p, trial, s0, s1, all, start, next_event);
    t->taken[way]++;
    if (probing) {
        t->ns[way] += thread_ns() - t0;
        if (pos == BL_TUNE_PROBE - 1) {
            t->use_window = t->ns[1] < t->ns[0];
            t->ns[0] = t->ns[1] = 0;
        }
    }
}
