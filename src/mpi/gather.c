/* bl_mpi_job_gather_bytes (mpi_job.h): rank 0 collects each rank's slice of
 * one result (a replicate bank split over ranks by replicate index, ssa_run.c).
 * Point to point in rank order, in chunks of at most 2^30 bytes (an MPI count
 * is an int), so a slice of any size goes; without MPI, or in a job of one
 * process, it only moves rank 0's own slice into place. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef BL_HAVE_MPI
#include <mpi.h>

#include "mpi/mpi_comm.h"
#endif

#include "mpi/mpi_job.h"

#define CHUNK ((uint64_t)1 << 30)
#define TAG 0x55A

bl_status bl_mpi_job_gather_bytes(const bl_context *ctx, const void *mine, uint64_t begin, uint64_t end, void *all,
                                  uint64_t all_bytes, bl_error *err)
{
    const int rank = bl_mpi_job_rank(ctx), ranks = bl_mpi_job_ranks(ctx);
    if (end < begin || (rank == 0 && end > all_bytes))
        return bl_fail(err, BL_ERR_INTERNAL, "mpi: gather of bytes %llu..%llu outside the %llu of the result",
                       (unsigned long long)begin, (unsigned long long)end, (unsigned long long)all_bytes);
    if (rank == 0 && end > begin && (char *)all + begin != (const char *)mine)
        memmove((char *)all + begin, mine, (size_t)(end - begin));
    if (ranks <= 1)
        return BL_OK;
#ifdef BL_HAVE_MPI
    MPI_Comm comm = bl_mpi_job_comm(ctx);
    uint64_t range[2] = {begin, end}, *ranges = NULL;
    if (rank == 0 && !(ranges = malloc(2 * (size_t)ranks * sizeof *ranges)))
        return bl_fail(err, BL_ERR_NOMEM, "mpi: out of memory for %d ranges", ranks);
    if (MPI_Gather(range, 2, MPI_UINT64_T, ranges, 2, MPI_UINT64_T, 0, comm) != MPI_SUCCESS) {
        free(ranges);
        return bl_fail(err, BL_ERR_IO, "mpi: MPI_Gather of the slices' ranges failed");
    }
    bl_status st = BL_OK;
    if (rank == 0) {
        for (int r = 1; r < ranks && !st; r++) {
            const uint64_t b = ranges[2 * r], e = ranges[2 * r + 1];
            if (e < b || e > all_bytes) { /* a broken invariant of the caller: every rank must still be drained */
                st = bl_fail(err, BL_ERR_INTERNAL, "mpi: rank %d's slice %llu..%llu is outside the %llu bytes", r,
                             (unsigned long long)b, (unsigned long long)e, (unsigned long long)all_bytes);
                break;
            }
            for (uint64_t a = b; a < e; a += CHUNK) {
                const int n = (int)(e - a < CHUNK ? e - a : CHUNK);
                if (MPI_Recv((char *)all + a, n, MPI_BYTE, r, TAG, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                    st = bl_fail(err, BL_ERR_IO, "mpi: receiving %d bytes from rank %d failed", n, r);
                    break;
                }
            }
        }
    } else {
        for (uint64_t a = begin; a < end; a += CHUNK) {
            const int n = (int)(end - a < CHUNK ? end - a : CHUNK);
            if (MPI_Send((const char *)mine + (a - begin), n, MPI_BYTE, 0, TAG, comm) != MPI_SUCCESS) {
                st = bl_fail(err, BL_ERR_IO, "mpi: sending %d bytes to rank 0 failed", n);
                break;
            }
        }
    }
    free(ranges);
    return st;
#else
    (void)err;
    return BL_OK;
#endif
}
