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

/* The spike exchange of one window (exchange_mpi.c), as NEST does it. Each
 * rank sends `per` ints: its spike count for every (trial, step) slot of the
 * window, the last one a failure flag. After bl_mpi_exchange_counts every rank
 * holds all_counts [size][per]; recv_counts[r] / displs[r] are where rank r's
 * ids will land (0 when they would not fit an int), *total their sum, and
 * *failed is set if any rank raised its flag. bl_mpi_exchange_ids then
 * gathers the ids. Both return 0 with *why set when MPI fails. */
int bl_mpi_exchange_counts(MPI_Comm comm, int size, const int *send_counts, int per, int *all_counts,
                           int *recv_counts, int *displs, uint64_t *total, int *failed, const char **why);
int bl_mpi_exchange_ids(MPI_Comm comm, const int32_t *send, int n_send, int32_t *recv, const int *recv_counts,
                        const int *displs, const char **why);

#endif
