/* What the engine asks of a model's kernels: the reference trial and the
 * partition step, with the layout of the per-neuron state the partition
 * holds for it. A model's row (src/models/model_row.h) points at one of each;
 * the engine calls them through the row and never names a model. */
#ifndef BL_ENGINE_KERNEL_OPS_H
#define BL_ENGINE_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/engine.h"

typedef struct partition partition;
typedef struct i32_list i32_list;

/* The reference kernel: the plainest loop over the model's equations. */
typedef struct bl_ref_kernel {
    /* Per-engine working memory for one trial at a time (NULL: out of memory). */
    void *(*alloc)(const bl_network *net);
    void (*free)(void *ws);
    /* One trial from the initial state: spikes appended to result in step
     * order, final state written to the result's rows. */
    bl_status (*trial)(void *ws, const bl_network *net, uint32_t trial, uint64_t n_steps, bl_result *result,
                       bl_error *err);
} bl_ref_kernel;

/* Per-neuron state of a partition, field by field. Fields 0 and 1 are v and g
 * (the final state); the model adds its own (refractory clocks, input slots).
 * A field lives in the range arrays (one entry per owned neuron), in the
 * active slots (one per neuron away from rest), or in both; when a neuron
 * wakes, a slot field is copied from its range twin or zeroed, and when it
 * rests, fields kept in both are copied back.
 *
 * A field may instead be a model's state arrays (BL_PART_ARRAYS, never with
 * the other two): `lanes(net, f)` arrays of `size`-byte entries, each
 * indexed by the global neuron id over [0, hi) (lane k of neuron i at
 * rng[f] + (k * hi + i) * size; the entries below lo exist and are unused),
 * so that a kernel's loops over [lo, hi) address them as the reference
 * kernel's whole-network arrays. The number of lanes is the network's (an
 * equation model's variables); waking and resting leave them alone (every
 * owned neuron's entries are always current), `start` gives their initial
 * values, and a snapshot saves and restores them with the other fields: a
 * kernel keeps no state of a neuron outside its fields. */
enum { BL_PART_RANGE = 1, BL_PART_SLOT = 2, BL_PART_BOTH = 3, BL_PART_ARRAYS = 4, BL_PART_MAX_FIELDS = 6 };
typedef struct bl_part_field {
    uint8_t size;  /* bytes per entry */
    uint8_t where; /* BL_PART_RANGE | BL_PART_SLOT, or BL_PART_ARRAYS */
} bl_part_field;

typedef struct bl_part_kernel {
    int n_fields;
    bl_part_field field[BL_PART_MAX_FIELDS];
    /* The value of range field f for a neuron at the initial state. */
    void (*initial)(const bl_network *net, int f, void *value);
    /* One step of partition p (see bl_partition_step). */
    void (*step)(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t step,
                 const int32_t *arrivals, uint64_t n_arrivals, size_t *next_event, i32_list *spikers);
    /* Optional: complete the final state in the range arrays at the end of a
     * trial (after the active slots were copied back), e.g. the exact g of
     * neurons that left the active set before it (p->step is the last step). */
    void (*settle)(const bl_network *net, partition *p);
    /* Optional: owned neuron i's v and g after `step` (state probes), for a
     * model whose range copy of a resting neuron may lag (NULL: the slot when
     * awake, else the range). It may bring that range copy up to `step`
     * (an exact rewrite, as settle does), so that probing every sample costs
     * the updates since the last sample, not since the neuron rested. */
    void (*peek)(const bl_network *net, partition *p, int32_t i, int64_t step, void *v, void *g);
    /* Optional: the steps [s0, s1) of one window at once (s1 - s0 <= delay),
     * with the same result as `step` called for each: step s0 + j's arrivals
     * are arr[j][0 .. n_arr[j]), and the partition's spikers of that step go
     * to p->window[j], ascending. NULL: the engine calls `step` per step. */
    void (*window)(const bl_network *net, int skip_ok, partition *p, uint32_t trial, int64_t s0, int64_t s1,
                   const int32_t *const *arr, const uint64_t *n_arr, size_t *next_event);
    /* Required with a BL_PART_ARRAYS field: its number of lanes (>= 1) for
     * this network. */
    uint32_t (*lanes)(const bl_network *net, int f);
    /* Optional: prepare a trial, after the range fields took their initial
     * values (bl_partition_reset): the BL_PART_ARRAYS fields' initial
     * values, the kernel's scratch (tables, constants), neurons to wake. A
     * trial continued from a snapshot then has its fields loaded over these
     * and starts at a later step, so the scratch must hold nothing that the
     * steps before change. Out of memory: p->failed = 1. */
    void (*start)(const bl_network *net, partition *p);
} bl_part_kernel;

#endif
