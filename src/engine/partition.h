/* One partition of a trial: the neurons [lo, hi), stepped exactly as the
 * reference backend steps them. Shared by the parallel backends: the cpu
 * backend runs partitions in threads and merges their spikes in memory; an MPI
 * backend runs one per rank and merges with MPI_Allgatherv. Either way a
 * partition steps one window of `delay` steps at a time, needing only the
 * merged spikes of the previous window. */
#ifndef BL_ENGINE_PARTITION_H
#define BL_ENGINE_PARTITION_H

#include "engine/engine_impl.h"

typedef struct i32_list {
    int32_t *v;
    uint64_t n, cap;
} i32_list;

int bl_list_push(i32_list *l, int32_t x);
/* Room for n elements (capacity doubles); 0 when out of memory. */
int bl_list_reserve(i32_list *l, uint64_t n);

/* The resting state lives in range arrays (index i - lo); neurons away from
 * rest live in dense "active" slots (slot_of[i - lo] >= 0). */
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

/* Split the neurons into n_parts contiguous ranges with about equal work (one
 * unit per neuron plus one per incoming edge); bounds has n_parts + 1 entries. */
int bl_partition_split(const bl_network *net, int n_parts, int32_t *bounds);
/* Is the rest state an exact fixed point (skipping resting neurons is exact)? */
int bl_partition_rest_is_fixed_point(const bl_network *net);

int bl_partition_alloc(partition *p, const bl_network *net, int32_t lo, int32_t hi);
void bl_partition_free(partition *p, int64_t delay);
/* Start a trial: every owned neuron at rest (or all awake when !skip_ok). */
void bl_partition_reset(partition *p, const bl_network *net, int skip_ok);
/* One step: the spikes of step - delay (global ids, ascending) arrive; this
 * partition's spikers of the step are written to spikers, ascending. */
void bl_partition_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                       const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
/* End a trial: the final state of every owned neuron in p->v, p->g. */
void bl_partition_settle(partition *p);

#endif
