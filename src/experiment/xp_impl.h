/* What every operation's runner shares (src/experiment): reserving a fresh
 * record, filling its manifest from the plan (inputs, resolved plan, seeds, a
 * copy of the plan file), writing JSON and .npy artifacts, a run log kept in
 * the record, and sealing or failing it at the end. */
#ifndef BL_XP_IMPL_H
#define BL_XP_IMPL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/experiment.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/record.h"

/* ROOT/<plan id>-<UTC time>-<hash prefix>[-k]: a new name for every run. */
bl_status bl_xp_reserve(const bl_plan *plan, const char *root, bl_record **rec, bl_error *err);
/* The same for a record that no plan describes (compare): ROOT/<id>-<time>-<hash prefix>. */
bl_status bl_xp_reserve_named(const char *root, const char *id, const char *hash, bl_record **rec, bl_error *err);
/* Inputs (hashed), the resolved plan, the seeds section, and plan.toml: a
 * byte copy of the plan file as it was read (its hash is the "plan" input's). */
bl_status bl_xp_begin(const bl_plan *plan, bl_record *rec, bl_error *err);
/* plan.toml: a byte copy of the plan file (bl_xp_begin does it too). */
bl_status bl_xp_copy_plan(const bl_plan *plan, bl_record *rec, bl_error *err);
/* Write o (consumed) as indented JSON at name inside the record. */
bl_status bl_xp_write_json(bl_record *rec, const char *name, cJSON *o, bl_error *err);
bl_status bl_xp_write_npy(bl_record *rec, const char *name, bl_dtype dt, int nd, const uint64_t *shape,
                          const void *data, bl_error *err);
/* st == BL_OK: seal DONE; otherwise mark FAILED with err's message, adding
 * the record's name to err. Returns the final status. */
bl_status bl_xp_finish(bl_record *rec, bl_status st, bl_error *err);

/* The prologue and epilogue every runner shares, written once.
 * bl_xp_protect, right after the reservation: sign the record with
 * opt->sign_key when given, and (opt->guard_signals, one process only: an
 * MPI job has its own watchdog) seal it FAILED on SIGINT/SIGTERM/SIGHUP.
 * bl_xp_end: the log's last line ("sealing" or "failed: ...", log may be
 * NULL), the log closed (complete before the seal hashes it), then
 * bl_xp_finish. */
bl_status bl_xp_protect(bl_record *rec, const bl_experiment_options *opt, int multi, bl_error *err);
typedef struct bl_xp_log bl_xp_log;

/* The record's watchdog in an MPI job of several ranks (xp_guard.c; the
 * job's processes, not the one-process guard of bl_xp_protect): started on
 * every rank once rank 0 holds its record, so that SIGINT/SIGTERM/SIGHUP
 * (mpirun's, when the job is interrupted or a rank dies or aborts) leave a
 * FAILED record naming the signal, never a RUNNING one. Rank 0 passes its
 * record (it fails it), the other ranks NULL (they wait up to 5 s for rank 0
 * before they end). Zero-initialise it; it must outlive _end. _hold before
 * rank 0 seals or fails the record (the watchdog waits), _end after it (the
 * watchdog forgets the record); both do nothing on the other ranks. */
typedef struct bl_xp_mpi_guard {
    const bl_context *ctx;
    bl_record *rec;
    int open;
} bl_xp_mpi_guard;
bl_status bl_xp_mpi_guard_start(bl_xp_mpi_guard *g, const bl_context *ctx, bl_record *rec, bl_error *err);
void bl_xp_mpi_guard_hold(bl_xp_mpi_guard *g);
void bl_xp_mpi_guard_end(bl_xp_mpi_guard *g);

bl_status bl_xp_end(bl_record *rec, bl_xp_log *log, bl_status st, bl_error *err);
/* The row of the operations table named `name` (a record's manifest names
 * its plan's operation); NULL when no row has that name. operations.c. */
const bl_operation *bl_xp_operation(const char *name);

/* The threads of a run: the option's when given (>= 0), else the plan's;
 * 0 stays 0 (all cores: core/threads.h resolves it where threads start). */
int bl_xp_threads(const bl_experiment_options *opt, int plan_threads);

/* run.log inside the record: one line per event, "elapsed_s  message", so
 * that a record tells how its run went (phases, waves, progress). */
struct bl_xp_log {
    FILE *f;
    double t0;
};
void bl_xp_log_open(bl_xp_log *log, bl_record *rec);
/* The log of an interrupted run, continued (a resumed run). */
void bl_xp_log_reopen(bl_xp_log *log, bl_record *rec);
void bl_xp_logf(bl_xp_log *log, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bl_xp_log_close(bl_xp_log *log);

double bl_xp_now(void);

/* Spikes streamed to disk during a run (spike_stream.c): one SONATA file per
 * trial, DIR/trial-NNNN.h5, population `population`, sorted by time, times in
 * ms from the trial's start; optionally only the neurons flagged in `keep`
 * (NULL: all; copied). Memory: one buffer of BUFFER spikes per trial in
 * flight. Time-binned counts (PSTH) of named populations are gathered on the
 * way: psth[trial][population][bin], bin_steps steps per bin (psth_pops may be 0). */
typedef struct bl_xp_spikes bl_xp_spikes;
typedef struct bl_xp_psth_spec {
    size_t n_pops;
    const bl_plan_population *const *pops;
    uint64_t bin_steps;
} bl_xp_psth_spec;
bl_status bl_xp_spikes_open(bl_record *rec, const char *dir, const char *population, uint32_t trials,
                            uint64_t steps, double dt_ms, uint64_t n_neurons, const uint8_t *keep,
                            const bl_xp_psth_spec *psth, int write_files, bl_xp_spikes **out, bl_error *err);
/* The sink to hand to bl_result_observe (user = the bl_xp_spikes). */
bl_status bl_xp_spikes_sink(void *user, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                            bl_error *err);
/* Trials [first, first + n) are over: flush and close their files (a trial
 * without spikes still gets its file). */
bl_status bl_xp_spikes_end_trials(bl_xp_spikes *s, uint32_t first, uint32_t n, bl_error *err);
/* The PSTH [trials][pops][bins] int32 (NULL without one) and its bin count. */
const int32_t *bl_xp_spikes_psth(const bl_xp_spikes *s, uint64_t *bins);
uint64_t bl_xp_spikes_written(const bl_xp_spikes *s);
/* Checkpoints (checkpoint.c): the PSTH cells of one trial (0 without a
 * PSTH); a finished trial's spike digest (NULL before it ends); a trial that
 * ran before the interruption, put back (its digest and PSTH row). */
size_t bl_xp_spikes_psth_row(const bl_xp_spikes *s);
const unsigned char *bl_xp_spikes_trial_digest(const bl_xp_spikes *s, uint32_t trial);
bl_status bl_xp_spikes_restore(bl_xp_spikes *s, uint32_t trial, const unsigned char digest[32],
                               const int32_t *psth_row, bl_error *err);
/* The spike digest, once every trial has ended: SHA-256 over the trials in
 * order of each trial's SHA-256 (32 bytes) of its (step, neuron) int32
 * little-endian pairs in (step, neuron) order, every spike (a subset written
 * to disk does not change it). Equal spikes, equal digest, whatever the
 * backend, threads or streaming. */
void bl_xp_spikes_digest(const bl_xp_spikes *s, char hex[65]);
void bl_xp_spikes_destroy(bl_xp_spikes *s); /* removes files still open */

/* A plan's equation model as generated C (eq_codegen_run.c): compiled (or
 * loaded from the cache) before the trials, outside the prepare and run
 * times; the log says how the model runs, and the record keeps the source
 * that ran (model/generated.c). BL_EQ_JIT=0 keeps the interpreter. Nothing
 * for a preset. */
bl_status bl_xp_eq_codegen(const bl_plan *plan, bl_record *rec, bl_xp_log *log, bl_error *err);
/* run.model_codegen: how the model ran, compiler, flags, source_sha256,
 * cache hit|miss, compile_ms, compiler_cpu_ms (nothing for a preset). */
void bl_xp_eq_codegen_json(const bl_plan *plan, cJSON *run);

#endif
