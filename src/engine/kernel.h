/* What every model's kernels share: stimulus draws, event cursors, the owned
 * edges of a spike, and bit comparisons. Model-agnostic; included by
 * the model kernels (src/models/lif_<model>.c) only. */
#ifndef BL_ENGINE_KERNEL_H
#define BL_ENGINE_KERNEL_H

#include <stdlib.h>
#include <string.h>

#include "engine/partition.h"

static inline uint64_t bl_bits64(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline uint32_t bl_bits32(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline int bl_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static inline void bl_sort_spikers(i32_list *l)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, bl_cmp_i32);
}

static inline int bl_population_on(const bl_net_population *pop, int64_t step)
{
    return step >= pop->start_step && step < pop->stop_step && pop->threshold != 0;
}

/* Does population q fire for neuron i at this step (the population is on)? */
static inline int bl_poisson_draw(const bl_network *net, size_t q, uint32_t trial, int32_t i, int64_t step)
{
    uint32_t word = bl_stream_word(net->seed, trial, (uint32_t)q, (uint32_t)i, (uint32_t)step);
    return (uint64_t)word < net->populations[q].threshold;
}

/* The explicit events of this step: [*first, *last) of net->events, with the
 * cursor advanced past earlier steps. */
static inline void bl_events_at(const bl_network *net, int64_t step, size_t *cursor, size_t *first, size_t *last)
{
    while (*cursor < net->n_events && net->events[2 * *cursor] < step)
        (*cursor)++;
    *first = *cursor;
    while (*cursor < net->n_events && net->events[2 * *cursor] == step)
        (*cursor)++;
    *last = *cursor;
}

/* The forced spikes of this step: [*first, *last) of net->forced, with the
 * cursor advanced past earlier steps. */
static inline void bl_forced_at(const bl_network *net, int64_t step, size_t *cursor, size_t *first, size_t *last)
{
    while (*cursor < net->n_forced && net->forced[2 * *cursor] < step)
        (*cursor)++;
    *first = *cursor;
    while (*cursor < net->n_forced && net->forced[2 * *cursor] == step)
        (*cursor)++;
    *last = *cursor;
}

static inline size_t bl_lower_bound_i32(const int32_t *v, size_t n, int32_t x)
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

/* The edges of source src whose targets p owns: [*e0, *e1). Rows are sorted
 * by target, so this is a binary search (skipped when p owns everything). */
static inline void bl_owned_edges(const bl_network *net, const partition *p, int32_t src, int64_t *e0, int64_t *e1)
{
    int64_t a = net->offsets[src], b = net->offsets[src + 1];
    if (p->lo == 0 && (uint64_t)p->hi == net->n_neurons) {
        *e0 = a;
        *e1 = b;
        return;
    }
    const int32_t *t = net->targets;
    *e0 = a + (int64_t)bl_lower_bound_i32(t + a, (size_t)(b - a), p->lo);
    *e1 = *e0 + (int64_t)bl_lower_bound_i32(t + *e0, (size_t)(b - *e0), p->hi);
}

#endif
