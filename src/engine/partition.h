/* One partition of a trial: the neurons [lo, hi), stepped exactly as the
 * reference backend steps them. Shared by the parallel backends: the cpu
 * backend runs partitions in threads and merges their spikes in memory; an MPI
 * backend runs one per rank and merges with MPI_Allgatherv. Either way a
 * partition steps one window of `delay` steps at a time, needing only the
 * merged spikes of the previous window.
 *
 * The partition is model-agnostic: its per-neuron state is the fields the
 * model's partition kernel declares (bl_part_kernel in kernel_ops.h), and
 * each step is the kernel's. */
#ifndef BL_ENGINE_PARTITION_H
#define BL_ENGINE_PARTITION_H

#include <string.h>

#include "core/invariant.h"
#include "engine/engine_impl.h"

/* When a partition steps a window at once (bl_part_kernel.window): never
 * (one step at a time), always where the model can, where the kernel judges
 * it pays by counting the window's synapses, or (the default) whichever
 * path this partition measures to be faster on this machine. Both paths
 * give the same bits (docs/retirement.md, "One pass per window"), so which
 * one runs decides only the time: on one machine measured the window path
 * was ~30% faster at w1 and w2, on another no faster at w1 and 30% slower
 * at w2, so no fixed rule serves both. */
enum { BL_WINDOW_NEVER = 0, BL_WINDOW_ALWAYS = 1, BL_WINDOW_AUTO = 2, BL_WINDOW_TUNE = 3 };

/* BL_WINDOW_TUNE: every BL_TUNE_CYCLE windows a partition times the two
 * paths on BL_TUNE_PROBE alternating windows (its thread's CPU time, so a
 * descheduled thread does not count the wait) and keeps the cheaper until
 * the next cycle. Adjacent windows carry about the same activity, so the
 * alternation compares like with like; re-probing follows a trial whose
 * activity grows or fades. At most BL_TUNE_PROBE / 2 windows of a cycle
 * (1 in 16) run the slower path. */
#define BL_TUNE_CYCLE 128u
#define BL_TUNE_PROBE 8u
typedef struct bl_window_tune {
    uint64_t windows;    /* windows run in this mode so far */
    uint64_t ns[2];      /* CPU time of this cycle's probe windows: [0] step by step, [1] at once */
    int use_window;      /* the choice until the next probe */
    uint64_t taken[2];   /* windows run each way (tests read it) */
} bl_window_tune;

typedef struct i32_list {
    int32_t *v;
    uint64_t n, cap;
} i32_list;

int bl_list_push(i32_list *l, int32_t x);
/* Room for n elements (capacity doubles); 0 when out of memory. */
int bl_list_reserve(i32_list *l, uint64_t n);

/* The resting state lives in range arrays (index i - lo); neurons away from
 * rest live in dense "active" slots (slot_of[i - lo] >= 0). Invariants
 * (bl_partition_sane): act_neuron[a] is owned and slot_of maps it back to a
 * for every a < n_active; every other owned neuron has slot_of -1; n_active
 * <= act_cap; each window list is ascending and owned. */
struct partition {
    int32_t lo, hi;
    const bl_part_kernel *k;
    void *v, *g;                     /* rng[0], rng[1]: the final state after settle */
    void *rng[BL_PART_MAX_FIELDS];   /* [hi - lo] per range field, [lanes * hi] per arrays field (NULL otherwise) */
    uint32_t lanes[BL_PART_MAX_FIELDS]; /* of each BL_PART_ARRAYS field (0 otherwise) */
    void *act[BL_PART_MAX_FIELDS];   /* [act_cap] per slot field (NULL otherwise) */
    int32_t *slot_of;       /* [hi - lo], -1 when resting */
    size_t *pop_first, *pop_last; /* per population: its neurons inside [lo, hi) */
    int32_t *act_neuron;    /* active slots (global neuron ids) */
    uint8_t *act_flag;      /* a byte per slot, for the kernel's use */
    uint64_t n_active, act_cap;
    i32_list *window;       /* spikers of each step of the current window, ascending */
    const bl_network *net;
    int64_t delay;
    int64_t step;           /* the last step run */
    int failed;
    size_t next_forced; /* cursor into net->forced (the kernel's; reset per trial) */
    /* A kernel's whole-window step (bl_part_kernel.window): when to take it
     * (BL_WINDOW_*, the engine's choice) and its scratch. */
    int window_mode;
    bl_window_tune tune;
    i32_list scratch[2];
    void *buf[3];
    size_t buf_cap[3];
};

/* Split the neurons into n_parts contiguous ranges with about equal work (one
 * unit per neuron plus one per incoming edge); bounds has n_parts + 1 entries. */
int bl_partition_split(const bl_network *net, int n_parts, int32_t *bounds);
/* Is the rest state an exact fixed point (skipping resting neurons is exact)?
 * The model's predicate. */
int bl_partition_rest_is_fixed_point(const bl_network *net);

int bl_partition_alloc(partition *p, const bl_network *net, int32_t lo, int32_t hi);
void bl_partition_free(partition *p, int64_t delay);
/* Start a trial: every owned neuron at rest (or all awake when !skip_ok),
 * then the kernel's `start` (kernel_ops.h). */
void bl_partition_reset(partition *p, const bl_network *net, int skip_ok);
/* One step: the spikes of step - delay (global ids, ascending) arrive; this
 * partition's spikers of the step are written to spikers, ascending. */
void bl_partition_step(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                       const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
/* Steps [s0, s1) of one window (s1 - s0 <= delay): step s0 + j's arrivals
 * are all[start[j] .. start[j + 1]) (none when all is NULL), and the
 * partition's spikers of that step go to p->window[j]. Through the model's
 * whole-window kernel when it has one and p->window_mode (with
 * BL_WINDOW_TUNE, its measurement) chooses it; else one bl_partition_step at
 * a time. (The cpu backend
 * steps one at a time itself while probes sample every step.) */
void bl_partition_run_window(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0,
                             int64_t s1, const int32_t *all, const uint64_t *start, size_t *next_event);
/* End a trial: the final state of every owned neuron in p->v, p->g. */
void bl_partition_settle(partition *p);
/* The invariants above, checked in full (O(hi - lo)); 1 when they hold,
 * else 0 with why naming the one that broke (core/invariant.h). Asserted
 * (BL_ASSERT_SANE, Debug builds) once per window; tests call it directly. */
int bl_partition_sane(const partition *p, bl_error *why);

/* Checkpoints within a trial (snapshot.h): the state of every neuron of
 * the network, bl_partition_record_bytes each, laid out field-major: a byte
 * per neuron (1: in an active slot), then each range field over all
 * neurons, then each lane of each arrays field over all neurons, then each
 * slot field over all neurons (zeros when resting), in field order. save
 * writes this partition's neurons' entries; load (after
 * bl_partition_reset, whose failure it keeps) rebuilds the partition from
 * them as it was after step s0 - 1 (active neurons in ascending order:
 * which slot a neuron has changes no bit, as the cpu backend's equality
 * with the reference for any split shows); 0 when out of memory. The
 * record depends on the network (the lanes of an arrays field). */
size_t bl_partition_record_bytes(const bl_network *net);
void bl_partition_save(const partition *p, unsigned char *all);
int bl_partition_load(partition *p, const unsigned char *all, int64_t s0);

/* Scratch buffer `which` (< 3) of at least `bytes` (kept between calls;
 * NULL when out of memory, and the trial is marked failed). */
void *bl_partition_buf(partition *p, int which, size_t bytes);

/* Room for one more active slot. On failure the trial is marked failed and
 * slot 0 (which always exists) absorbs writes until the window ends. */
int bl_partition_grow(partition *p);

/* ---- for the model kernels (src/models/lif_<model>.c) ----
 * K is the kernel's own static const bl_part_kernel, so that after inlining
 * the field loops below unroll with constant sizes. */

/* The slot of neuron i (owned), waking it from rest if needed. */
static inline int32_t bl_part_wake(partition *p, const bl_part_kernel *K, int32_t i)
{
    int32_t r = i - p->lo;
    if (p->slot_of[r] >= 0)
        return p->slot_of[r];
    if (!bl_partition_grow(p))
        return 0;
    int32_t a = (int32_t)p->n_active++;
    p->act_neuron[a] = i;
    p->slot_of[r] = a;
    for (int f = 0; f < K->n_fields; f++) {
        size_t sz = K->field[f].size;
        if (!(K->field[f].where & BL_PART_SLOT))
            continue;
        if (K->field[f].where & BL_PART_RANGE)
            memcpy((char *)p->act[f] + (size_t)a * sz, (const char *)p->rng[f] + (size_t)r * sz, sz);
        else
            memset((char *)p->act[f] + (size_t)a * sz, 0, sz);
    }
    return a;
}

/* Slot a back to rest: fields kept in both places return to the range
 * arrays; the last slot fills the hole (so a scan that removes must run
 * descending). */
static inline void bl_part_rest(partition *p, const bl_part_kernel *K, int32_t a)
{
    int32_t r = p->act_neuron[a] - p->lo, b = (int32_t)--p->n_active;
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where == BL_PART_BOTH) {
            size_t sz = K->field[f].size;
            memcpy((char *)p->rng[f] + (size_t)r * sz, (const char *)p->act[f] + (size_t)a * sz, sz);
        }
    p->slot_of[r] = -1;
    if (a == b)
        return;
    p->act_neuron[a] = p->act_neuron[b];
    for (int f = 0; f < K->n_fields; f++)
        if (K->field[f].where & BL_PART_SLOT) {
            size_t sz = K->field[f].size;
            memcpy((char *)p->act[f] + (size_t)a * sz, (const char *)p->act[f] + (size_t)b * sz, sz);
        }
    p->slot_of[p->act_neuron[a] - p->lo] = a;
}

#endif
