/* Trial checkpoints of a connectome run, kept inside its reserved record so
 * that `run --resume RECORD` can finish a killed or FAILED run without
 * running its finished trials again (docs/reliability.md, "Durable runs").
 *
 * Trials are independent (each draws from streams keyed by its index,
 * docs/streams.md), so a finished trial is all a resumed run needs: its
 * counts, final state, probe samples, PSTH row and spike digest (what the
 * end-of-run artifacts are computed from) in checkpoint/trial-NNNN.bin, and
 * its closed spike file spikes/trial-NNNN.h5. checkpoint/checkpoint.json
 * names both by SHA-256; every file is written to a temporary name, flushed
 * and renamed, so a kill leaves either the old checkpoint or the new one.
 * The directory leaves the record before it is sealed: a sealed record
 * holds exactly what an uninterrupted run's holds. */
#ifndef BL_XP_CHECKPOINT_H
#define BL_XP_CHECKPOINT_H

#include <stdint.h>

#include "brainlesslab/engine.h"
#include "brainlesslab/record.h"
#include "experiment/xp_impl.h"

typedef struct bl_xp_ckpt bl_xp_ckpt;

/* resume = 0: a fresh checkpoint (checkpoint/ is created). resume = 1: the
 * one an earlier run left is read, if any (none: every trial runs); it must
 * be of this plan, backend, thread and rank count, else BL_ERR_INVALID naming what
 * differs. spike_files: the run writes spikes/trial-NNNN.h5. */
bl_status bl_xp_ckpt_open(bl_record *rec, const char *plan_sha256, uint32_t trials, const char *backend,
                          int threads, int ranks, int spike_files, int resume, bl_xp_ckpt **out, bl_error *err);
/* Resume: every trial the checkpoint lists is read once, hashed as read and
 * compared with the checkpoint (and its spike file with its hash); a trial
 * whose files match is put back into res and spikes, any other is dropped
 * (it runs again). Then every file of the record that no kept trial owns is
 * removed (half-written spike files, artifacts of an interrupted seal),
 * except run.log, which goes on. */
bl_status bl_xp_ckpt_restore(bl_xp_ckpt *c, bl_result *res, bl_xp_spikes *spikes, bl_error *err);
int bl_xp_ckpt_has(const bl_xp_ckpt *c, uint32_t trial);
uint32_t bl_xp_ckpt_kept(const bl_xp_ckpt *c);    /* trials restored */
uint64_t bl_xp_ckpt_events(const bl_xp_ckpt *c);  /* their spikes */
uint32_t bl_xp_ckpt_dropped(const bl_xp_ckpt *c); /* listed but not matching: run again */
int bl_xp_ckpt_found(const bl_xp_ckpt *c);        /* resume found a checkpoint manifest */
/* Trials [first, first + n) have ended (their spike files closed): save them
 * and commit the manifest. */
bl_status bl_xp_ckpt_save(bl_xp_ckpt *c, const bl_result *res, const bl_xp_spikes *spikes, uint32_t first,
                          uint32_t n, bl_error *err);
/* Checkpoints within a trial (docs/reliability.md, "Durable runs"): on a
 * backend that snapshots (engine/snapshot.h), every N windows of a trial
 * in flight its spikes so far go to checkpoint/partial-NNNN.pairs (appended,
 * flushed) and the engine's state and the trial's probe samples to
 * checkpoint/partial-NNNN.bin (written atomically, hashed; it names the
 * prefix of the .pairs file by a chain hash). enable before restore, so that
 * a resume also reads them; pend is the spike sink's copy (any thread, one
 * trial each); save is the engine's snapshot callback's; apply hands each
 * resumed trial's spikes to res (through its sink, as they first came), its
 * probe samples to res and its state to eng. A trial's partial files go when
 * the trial is saved whole. */
bl_status bl_xp_ckpt_partial_enable(bl_xp_ckpt *c, bl_error *err);
bl_status bl_xp_ckpt_partial_pend(bl_xp_ckpt *c, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                                  bl_error *err);
bl_status bl_xp_ckpt_partial_save(bl_xp_ckpt *c, const bl_result *res, uint32_t trial, uint64_t step,
                                  const void *blob, size_t len, bl_error *err);
bl_status bl_xp_ckpt_partial_apply(bl_xp_ckpt *c, bl_result *res, bl_engine *eng, bl_error *err);
/* The same, and each state the engine took also to also(user, ...) (an MPI
 * job's rank 0 hands it on to the other ranks). */
bl_status bl_xp_ckpt_partial_apply_also(bl_xp_ckpt *c, bl_result *res, bl_engine *eng,
                                        bl_status (*also)(void *user, uint32_t trial, const void *blob, size_t len,
                                                          bl_error *err),
                                        void *user, bl_error *err);
uint32_t bl_xp_ckpt_partial_kept(const bl_xp_ckpt *c);    /* trials continued from within */
uint32_t bl_xp_ckpt_partial_dropped(const bl_xp_ckpt *c); /* found but not matching: from their start */
/* The first trial continued from within, and its step (trials: none). */
uint32_t bl_xp_ckpt_partial_first(const bl_xp_ckpt *c, uint64_t *step);

/* Before sealing, the checkpoint leaves the record for ROOT/.NAME.checkpoint
 * (a rename), so that a kill during the seal still finds it (a resume moves
 * it back); once the record is DONE it is discarded. */
bl_status bl_xp_ckpt_stash(bl_xp_ckpt *c, bl_error *err);
void bl_xp_ckpt_discard(bl_xp_ckpt *c);
void bl_xp_ckpt_destroy(bl_xp_ckpt *c);

/* Shared with the reservoir checkpoint (res_checkpoint.c): a file written
 * whole or not at all (tmp + fsync + rename + fsync of the directory); a
 * regular file read once, at most max bytes; a directory flushed. */
bl_status bl_xp_ckpt_write_atomic(const char *path, const void *const *parts, const size_t *lens, int n_parts,
                                   bl_error *err);
bl_status bl_xp_ckpt_read_all(const char *path, uint64_t max, char **out, uint64_t *len, bl_error *err);
bl_status bl_xp_ckpt_fsync_dir_of(const char *path, bl_error *err);

/* Reservoir operations (res_checkpoint.c): batches of trials checkpointed as
 * checkpoint/batch-FIRST.bin (the trials' records and probe cells), each
 * named with its SHA-256 by one line appended (and flushed) to
 * checkpoint/batches.log, whose first line names the plan hash and the plan
 * file's SHA-256; a torn last line is ignored. The hooks of
 * bl_res_evaluate_resumable. resume: read what an interrupted run left. */
typedef struct bl_xp_res_ckpt bl_xp_res_ckpt;
struct bl_res_resume_hooks;
bl_status bl_xp_res_ckpt_open(bl_record *rec, const char *plan_hash, const char *plan_file_sha256, int resume,
                              bl_xp_res_ckpt **out, bl_error *err);
void bl_xp_res_ckpt_hooks(bl_xp_res_ckpt *c, struct bl_res_resume_hooks *hooks);
uint64_t bl_xp_res_ckpt_kept(const bl_xp_res_ckpt *c);    /* trials restored */
uint64_t bl_xp_res_ckpt_dropped(const bl_xp_res_ckpt *c); /* batches listed but not matching */
uint64_t bl_xp_res_ckpt_first_run(const bl_xp_res_ckpt *c); /* the first trial index run (n: none) */
void bl_xp_res_ckpt_destroy(bl_xp_res_ckpt *c);

#endif
