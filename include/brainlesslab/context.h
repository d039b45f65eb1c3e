/* The context: everything a library call may need that is not its own data
 * and that used to be process-wide (SUNDIALS' SUNContext is the model):
 *
 *   - the MPI job this context runs in (mpi.h): its communicator, replica
 *     groups and watchdog;
 *   - the sinks: a log callback for lines the library has to say (MPI
 *     exchange statistics, an aborting rank's reason) and a progress
 *     callback (finished waves of trials);
 *   - cancellation: a callback a run asks between waves of trials, batches
 *     of reservoir trials and screen conditions;
 *   - tunables, read once from the environment when the context is created
 *     (BL_MPI_STATS, BL_CPU_PARTITION_MIN_EDGES) and settable afterwards.
 *
 * Engines, experiments and MPI calls take a context; it must outlive them.
 * Two engines with two contexts share nothing, so two of them can live in one
 * process (a Python session, a test). Passing NULL wherever a bl_context * is
 * taken means bl_context_default(): one context per process, created on first
 * use, never destroyed; convenient for short programs, and what the CLI uses.
 *
 * A context is not itself thread-safe: configure it before use, then share it
 * read-only (engines only read it). */
#ifndef BRAINLESSLAB_CONTEXT_H
#define BRAINLESSLAB_CONTEXT_H

#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_context bl_context;

/* One line of text, without the newline. */
typedef void (*bl_log_fn)(void *user, const char *line);
/* An experiment finished trials_done of trials_total trials (collected in
 * waves); simulated_s of model time took wall_s so far. Called on MPI rank 0
 * only. done == total is the last call of a run. */
typedef void (*bl_progress_fn)(void *user, uint32_t trials_done, uint32_t trials_total, double simulated_s,
                               double wall_s);

/* A fresh context: no sinks, tunables from the environment (an unparsable
 * value is an error naming the variable). */
BL_API bl_status bl_context_create(bl_context **out, bl_error *err);
BL_API void bl_context_destroy(bl_context *ctx);
/* The process's default context (what NULL means); NULL only if it could not
 * be allocated. */
BL_API bl_context *bl_context_default(void);

BL_API void bl_context_set_log(bl_context *ctx, bl_log_fn fn, void *user);
BL_API void bl_context_set_progress(bl_context *ctx, bl_progress_fn fn, void *user);

/* Nonzero: stop. A run asks between waves of trials (connectome), batches of
 * trials (reservoir) and conditions (screen), and the engines ask inside a
 * trial once per delay window (every backend: a long trial is stopped
 * within about a window, not at its end), so the callback must be cheap
 * (a flag's load). It is called one thread at a time, possibly from a run's
 * worker threads (a screen's conditions, a trial's partitions); an MPI job
 * asks on rank 0 and ends the job. The run then fails with BL_ERR_CANCELLED
 * and its record is FAILED ("cancelled ..."). Nothing already written is lost. */
typedef int (*bl_cancel_fn)(void *user);
BL_API void bl_context_set_cancel(bl_context *ctx, bl_cancel_fn fn, void *user);
/* What the cancel callback says now (0 when none is set). */
BL_API int bl_context_cancelled(const bl_context *ctx);

/* Tunables. They never change a result, only how it is computed or reported. */
/* mpi backend: when set (BL_MPI_STATS=PREFIX), every rank writes its
 * exchange statistics to PREFIX.rankR.json when its engine is destroyed
 * (used by the benchmark's scaling case). NULL or "" = off. Copied. */
BL_API bl_status bl_context_set_mpi_stats_prefix(bl_context *ctx, const char *prefix, bl_error *err);
BL_API const char *bl_context_mpi_stats_prefix(const bl_context *ctx);
/* cpu backend: below this many edges a single trial is not split into
 * partitions (BL_CPU_PARTITION_MIN_EDGES; 0 = the built-in default). */
BL_API void bl_context_set_cpu_partition_min_edges(bl_context *ctx, uint64_t edges);
BL_API uint64_t bl_context_cpu_partition_min_edges(const bl_context *ctx);

#ifdef __cplusplus
}
#endif
#endif
