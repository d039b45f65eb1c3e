/* The MPI job a context runs in (src/mpi/). Every function works in every
 * build: without the mpi backend (or outside mpirun) the job is one process,
 * rank 0 of 1, and the functions are cheap single-process fallbacks.
 *
 * Order of calls for a multi-rank program (the CLI's `run` and `simulate`):
 *   bl_mpi_job            join the job (initialises MPI once per process)
 *   bl_mpi_job_replicas   optional: split the ranks into replica groups
 *   load this rank's part of the connectome (bl_plan_load_part)
 *   bl_engine_create(ctx, ..., "mpi" or "auto", ...)
 * An error that not every rank shares must end the job (bl_mpi_job_abort), or
 * the other ranks would wait forever in the next collective. */
#ifndef BRAINLESSLAB_MPI_H
#define BRAINLESSLAB_MPI_H

#include "brainlesslab/context.h"
#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has the mpi backend. */
BL_API int bl_mpi_available(void);
/* 1 if this process was started by an MPI launcher (mpirun, mpiexec, srun). */
BL_API int bl_mpi_launched(void);

/* The MPI job this context is part of: when the process was started by
 * mpirun (and the build has the mpi backend) MPI is initialised and *rank,
 * *ranks are this rank and the job's size; otherwise 0 and 1. A caller that
 * knows it is one of several ranks can load only its part of the connectome
 * (bl_plan_load_part, bl_connectome_load_part). ctx NULL: the default. */
BL_API bl_status bl_mpi_job(bl_context *ctx, int *rank, int *ranks, bl_error *err);

/* Replicate banks: split the job's ranks into `replicas` groups of equal size
 * (it must divide the job's size). Each group runs its share of the trials of
 * every engine call, its ranks splitting the neurons; every rank still ends
 * with the whole result. Call after bl_mpi_job and before loading: *part of
 * *parts is the share of the connectome this rank holds (bl_plan_load_part).
 * replicas 1 (the default): ranks only split neurons. */
BL_API bl_status bl_mpi_job_replicas(bl_context *ctx, int replicas, int *part, int *parts, bl_error *err);
/* The replica groups set by bl_mpi_job_replicas (1 by default). */
BL_API int bl_mpi_job_replica_groups(const bl_context *ctx);

/* End the whole job now, every rank, for an error that not every rank
 * shares. In a job of several ranks this does not return: the message goes
 * to the context's log sink and MPI_Abort ends every process. In a job of one
 * process there is nothing to end: it returns BL_ERR_INTERNAL with the message
 * in err, and the caller decides (the CLI exits with status 1). */
BL_API bl_status bl_mpi_job_abort(bl_context *ctx, const char *message, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
