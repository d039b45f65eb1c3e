/* The MPI job inside the library (src/mpi/): what the experiment runner and
 * the mpi backend need, with single-process fallbacks, so that no other
 * folder carries #ifdef BL_HAVE_MPI. The public half is brainlesslab/mpi.h.
 * Collectives run over the context's job communicator; in a job of one
 * process they are no-ops. */
#ifndef BL_MPI_JOB_H
#define BL_MPI_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/mpi.h"
#include "core/context_impl.h"

/* Join the job: initialise MPI (once per process) when the process was
 * launched by mpirun, or when `force` (a plan that asks for the mpi backend
 * runs as a singleton job). Idempotent per context. Without the mpi backend
 * the job is this process alone, forced or not. */
bl_status bl_mpi_job_join(bl_context *ctx, int force, bl_error *err);
int bl_mpi_job_rank(const bl_context *ctx);  /* 0 until joined */
int bl_mpi_job_ranks(const bl_context *ctx); /* 1 until joined */
/* Release what the job holds for a context (its communicator); the context
 * calls it through job.release when it is destroyed. */
void bl_mpi_job_release(bl_mpi_job_state *job);

/* Rank 0's string to every rank. */
bl_status bl_mpi_job_bcast_string(const bl_context *ctx, char *buf, size_t cap, bl_error *err);
/* Rank 0's len bytes to every rank (len the same on every rank). */
bl_status bl_mpi_job_bcast_bytes(const bl_context *ctx, void *buf, uint64_t len, bl_error *err);
/* Element-wise maximum of every rank's v[0..n), in place on every rank. */
bl_status bl_mpi_job_allreduce_max_i32(const bl_context *ctx, int32_t *v, uint64_t n, bl_error *err);

/* Rank 0 collects a result split over the ranks (gather.c): every rank
 * holds bytes [begin, end) of it in `mine`; on return rank 0's `all`
 * (all_bytes long; only rank 0's is used) holds every rank's slice at its
 * offset. Every rank of the job must call it. */
bl_status bl_mpi_job_gather_bytes(const bl_context *ctx, const void *mine, uint64_t begin, uint64_t end, void *all,
                                  uint64_t all_bytes, bl_error *err);

/* The watchdog (watchdog.c). SIGTERM / SIGINT / SIGHUP (mpirun stops the
 * survivors with SIGTERM when a rank dies or calls MPI_Abort) run
 * on_signal(arg, signo) on a dedicated thread under the watchdog lock; then
 * the signal's default action ends the process, as it would have without
 * the watchdog. The lock lets the main thread finish a record change (seal)
 * atomically; bl_mpi_watchdog_stop forgets on_signal (arg may then be freed).
 * Signals are the process's, so the watchdog is the one process-wide object
 * of src/mpi/: one per process, whatever the contexts. */
bl_status bl_mpi_watchdog_start(void (*on_signal)(void *arg, int signo), void *arg, bl_error *err);
void bl_mpi_watchdog_lock(void);
void bl_mpi_watchdog_unlock(void);
void bl_mpi_watchdog_stop(void);

#endif
