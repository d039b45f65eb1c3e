/* For the mpi build's own files (engine_mpi.c): the context's communicator.
 * Include only under BL_HAVE_MPI (it needs <mpi.h>). */
#ifndef BL_MPI_COMM_H
#define BL_MPI_COMM_H

#include <mpi.h>

#include "mpi/mpi_job.h"

/* The job's communicator (a duplicate of MPI_COMM_WORLD made when the
 * context joined, so that two contexts never mix their messages). Only valid
 * after bl_mpi_job_join. */
MPI_Comm bl_mpi_job_comm(const bl_context *ctx);

#endif
