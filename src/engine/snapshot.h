/* Checkpoints within a trial (issue 26, docs/reliability.md "Durable runs").
 *
 * A backend that can (cpu; mpi when its job runs one trial at a time) hands out, every N delay
 * windows of a trial, its whole state at that window boundary as one blob:
 * each neuron's state fields as the model's partition kernel lays them out
 * (range fields, and for a neuron away from rest its slot fields), the
 * spikes of the window just ended (those still to be delivered: the delay
 * ring), and the trial's spike pairs not yet handed to the result's sink.
 * The streams need no position: every draw is keyed by (seed, trial,
 * population, neuron, step) (docs/streams.md), so the step is the position.
 * The blob is per neuron, not per partition, so it does not depend on how
 * the trial was split over threads. Handed back before a run, it makes that
 * trial continue from the step it names, giving the bits an uninterrupted
 * trial gives (the observers' partial outputs, spikes streamed and probe
 * samples taken, are the caller's to put back first). Native byte order:
 * a blob is resumed by the build that wrote it. */
#ifndef BL_ENGINE_SNAPSHOT_H
#define BL_ENGINE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/engine.h"

/* Called at a window boundary of `trial`, after `step` steps (a multiple
 * of the delay, before the last window), with every spike of steps < step
 * already handed to the result. May be called from several threads at once
 * (one per trial in flight); the blob is valid during the call only. A
 * failure stops the run with that error. */
typedef bl_status (*bl_engine_snapshot_fn)(void *user, uint32_t trial, uint64_t step, const void *blob,
                                           size_t len, bl_error *err);

/* Whether this engine's backend can snapshot (0: trial boundaries only). */
int bl_engine_can_snapshot(const bl_engine *e);
/* Snapshots every `every_windows` windows (0: none). */
void bl_engine_set_snapshots(bl_engine *e, uint64_t every_windows, bl_engine_snapshot_fn fn, void *user);
/* The next run of `trial` starts from blob (copied; checked against this
 * network: neuron count, delay, layout), at the step it names. */
bl_status bl_engine_resume_trial(bl_engine *e, uint32_t trial, const void *blob, size_t len, bl_error *err);

/* ---- for the backends (snapshot.c) ----
 * The blob: this head; start[delay + 1] (uint64) and the spikers of the
 * window just ended (int32 x n_prev); every neuron's state (n_neurons x
 * record_bytes, field-major: bl_partition_save); the unflushed (step,
 * neuron) pairs (int32 x 2 x n_out). Native byte order. */
typedef struct bl_snap_head {
    char magic[8];
    uint64_t n_neurons, record_bytes, delay, step, n_prev, n_out, trial, reserved;
} bl_snap_head;

typedef struct partition partition;
typedef struct i32_list i32_list;
typedef struct bl_network bl_network;

size_t bl_snap_len(const bl_network *net, uint64_t n_prev, uint64_t n_out);
/* Where the neurons' state begins (an MPI job ORs its ranks' together). */
size_t bl_snap_records_offset(const bl_network *net, uint64_t n_prev);
/* buf (bl_snap_len bytes) after `step` steps: the partitions given write
 * their neurons, every other neuron's entries are zero. */
void bl_snap_write(unsigned char *buf, const bl_network *net, uint32_t trial, uint64_t step, const uint64_t *start,
                   const i32_list *prev, const i32_list *out, const partition *parts, int n_parts);
/* The whole blob against this network and trial, and everything the engine
 * indexes with (offsets, spikers, pairs); BL_ERR_INVALID naming what. */
bl_status bl_snap_check(const bl_network *net, uint32_t trial, const void *blob, size_t len, bl_error *err);
/* A checked blob into the last window (start, prev) and the pairs (out);
 * *records: the neurons' state, for bl_partition_load. Returns the window
 * to continue at, -1 when out of memory. */
int64_t bl_snap_restore(const bl_network *net, const unsigned char *blob, uint64_t *start, i32_list *prev,
                        i32_list *out, const unsigned char **records);
uint64_t bl_snap_step(const void *blob);

/* Blobs handed back (bl_engine_resume_trial), checked and copied, each used
 * by its trial's next run. */
typedef struct bl_snap_item {
    uint32_t trial;
    unsigned char *blob;
    size_t len;
} bl_snap_item;
typedef struct bl_snap_list {
    bl_snap_item *v;
    size_t n;
} bl_snap_list;
bl_status bl_snap_list_add(bl_snap_list *l, const bl_network *net, uint32_t trial, const void *blob, size_t len,
                           bl_error *err);
const unsigned char *bl_snap_list_find(const bl_snap_list *l, uint32_t trial);
void bl_snap_list_drop(bl_snap_list *l, uint32_t first, uint32_t n);
void bl_snap_list_free(bl_snap_list *l);

#endif
