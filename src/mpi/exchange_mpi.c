/* The spike exchange of the mpi backend (mpi_comm.h): two collectives per
 * window of `delay` steps. Rank order is neuron order, so concatenating the
 * ranks' ids keeps every step's spikers ascending (engine_mpi.c relies on it).
 * Built only with MPI (the *_mpi*.c files). */
#include <limits.h>
#include <stdint.h>

#include "mpi/mpi_comm.h"

int bl_mpi_exchange_counts(MPI_Comm comm, int size, const int *send_counts, int per, int *all_counts,
                           int *recv_counts, int *displs, uint64_t *total, int *failed, const char **why)
{
    if (MPI_Allgather(send_counts, per, MPI_INT, all_counts, per, MPI_INT, comm) != MPI_SUCCESS) {
        *why = "MPI_Allgather of spike counts failed";
        return 0;
    }
    uint64_t sum = 0;
    for (int r = 0; r < size; r++) {
        const int *c = all_counts + (size_t)r * (size_t)per;
        uint64_t n = 0;
        for (int k = 0; k < per - 1; k++)
            n += (uint64_t)c[k];
        *failed |= c[per - 1];
        displs[r] = (int)(sum > INT_MAX ? 0 : sum);
        recv_counts[r] = (int)(n > INT_MAX ? 0 : n);
        sum += n;
    }
    *total = sum;
    return 1;
}

int bl_mpi_exchange_ids(MPI_Comm comm, const int32_t *send, int n_send, int32_t *recv, const int *recv_counts,
                        const int *displs, const char **why)
{
    if (MPI_Allgatherv(send, n_send, MPI_INT32_T, recv, recv_counts, displs, MPI_INT32_T, comm) != MPI_SUCCESS) {
        *why = "MPI_Allgatherv of spike ids failed";
        return 0;
    }
    return 1;
}
