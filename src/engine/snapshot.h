/* Checkpoints within a trial (issue 26, docs/reliability.md "Durable runs").
 *
 * A backend that can (the cpu backend today) hands out, every N delay
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

#endif
