/* The context's insides, for the library's own folders (engine, mpi,
 * experiment). Callers outside src/ use the accessors of context.h. */
#ifndef BL_CONTEXT_IMPL_H
#define BL_CONTEXT_IMPL_H

#include <stdint.h>

#include "brainlesslab/context.h"

/* The MPI job as this context sees it (src/mpi/job.c fills it). */
typedef struct bl_mpi_job_state bl_mpi_job_state;
struct bl_mpi_job_state {
    int rank;     /* in the job (0 when not joined) */
    int ranks;    /* 1 when not joined or not launched */
    int replicas; /* replica groups (bl_mpi_job_replicas), 1 by default */
    void *comm;   /* the job's communicator (an MPI_Comm *, src/mpi/job.c), NULL outside MPI */
    /* Set by src/mpi/job.c when it gives the job something to release, so
     * that core/ never calls up into mpi/ (the layers stay one-way). */
    void (*release)(bl_mpi_job_state *job);
};

struct bl_context {
    bl_log_fn log;
    void *log_user;
    bl_progress_fn progress;
    void *progress_user;
    bl_cancel_fn cancel;
    void *cancel_user;
    char *mpi_stats_prefix;           /* NULL = off */
    uint64_t cpu_partition_min_edges; /* 0 = the cpu backend's default */
    uint64_t cpu_window;              /* BL_CPU_WINDOW: 0 never, 1 always, 2 auto, 3 measured (default; partition.h) */
    bl_mpi_job_state job;
};

/* ctx itself, or the process default for NULL. */
bl_context *bl_context_resolve(bl_context *ctx);
/* Send one printf-style line to the log sink (nothing when none is set). */
void bl_context_log(const bl_context *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;


#endif
