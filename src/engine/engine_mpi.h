/* The MPI side of BrainlessLab (built only with -DBL_MPI=ON, BL_HAVE_MPI):
 * lazy MPI initialisation, the job's rank and size, and the rank-0 watchdog
 * that turns a killed job (mpirun's SIGTERM after another rank died or
 * aborted) into a FAILED record instead of a hang or a half-written one. */
#ifndef BL_ENGINE_MPI_H
#define BL_ENGINE_MPI_H

#include "brainlesslab/error.h"

/* Initialise MPI once (MPI_THREAD_FUNNELED; MPI_Finalize registered with
 * atexit). Without mpirun the process is a job of one rank (singleton). */
bl_status bl_mpi_init(bl_error *err);
/* Was this process started by an MPI launcher (mpirun / mpiexec)? */
int bl_mpi_launched(void);
int bl_mpi_rank(void); /* 0 before bl_mpi_init */
int bl_mpi_size(void); /* 1 before bl_mpi_init */
/* End the whole job now (every rank): after an error that not every rank
 * shares, so that no rank waits forever in a collective. */
_Noreturn void bl_mpi_abort(const char *message);
/* Rank 0's string to every rank. */
bl_status bl_mpi_bcast_string(char *buf, size_t cap, bl_error *err);

/* Replicate banks: split the job's ranks into `replicas` groups (it must
 * divide the job's size); each group runs a share of every engine call's
 * trials, its ranks splitting the neurons. Set before the engine is created
 * and before loading: this rank loads part bl_mpi_part of the connectome. */
bl_status bl_mpi_set_replicas(int replicas, bl_error *err);
int bl_mpi_replicas(void);
/* This rank's place in its group: the part of the connectome it holds. */
void bl_mpi_part(int *part, int *parts);

/* Element-wise maximum of every rank's v[0..n), in place on every rank. */
bl_status bl_mpi_allreduce_max_i32(int32_t *v, uint64_t n, bl_error *err);

/* SIGTERM / SIGINT / SIGHUP (mpirun kills the survivors with SIGTERM when a
 * rank dies or calls MPI_Abort) run on_signal(arg, signo) on a dedicated
 * thread, under the watchdog lock, and then the process exits with status 1.
 * The lock lets the main thread finish a record change (seal) atomically. */
bl_status bl_mpi_watchdog_start(void (*on_signal)(void *arg, int signo), void *arg, bl_error *err);
void bl_mpi_watchdog_lock(void);
void bl_mpi_watchdog_unlock(void);

#endif
