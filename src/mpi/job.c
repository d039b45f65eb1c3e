/* The MPI job (mpi.h, mpi_job.h): the one file of the library that knows
 * whether it was built with MPI. Everything else calls these functions,
 * which fall back to a job of one process (rank 0 of 1) without MPI. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef BL_HAVE_MPI
#include <mpi.h>

#include "mpi/mpi_comm.h"
#endif

#include "mpi/mpi_job.h"

#ifndef BL_HAVE_MPI
/* The stepping backend of the mpi build (src/engine/engine_mpi.c); engine.c
 * lists it when it is not NULL. */
struct bl_backend;
const struct bl_backend *const bl_backend_mpi_or_null = NULL;
#endif

int bl_mpi_available(void)
{
#ifdef BL_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int bl_mpi_launched(void)
{
    /* Open MPI, PMIx (Open MPI 4+, Slurm) and PMI-1/2 launchers. Reading the
     * launcher's environment is how any MPI program learns it is one. */
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

#ifndef BL_HAVE_MPI
/* An environment variable holding an integer above `above`. */
static int env_above(const char *name, long above, char *seen, size_t cap)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x <= above)
        return 0;
    snprintf(seen, cap, "%s=%s", name, v);
    return 1;
}

/* Started as one of several processes by an MPI launcher (Open MPI's
 * mpirun, MPICH's hydra, Slurm's srun with PMI-1/2 or PMIx)? A build without
 * MPI cannot join them: each copy would run the whole plan alone and seal
 * its own record of it (issue 26). `seen` names the variable that tells. */
static int launched_as_many(char *seen, size_t cap)
{
    return env_above("OMPI_COMM_WORLD_SIZE", 1, seen, cap) || env_above("PMI_SIZE", 1, seen, cap) ||
           env_above("PMIX_SIZE", 1, seen, cap) || env_above("MPI_LOCALNRANKS", 1, seen, cap) ||
           env_above("OMPI_COMM_WORLD_RANK", 0, seen, cap) || env_above("PMIX_RANK", 0, seen, cap) ||
           env_above("PMI_RANK", 0, seen, cap) ||
           (getenv("SLURM_PROCID") && env_above("SLURM_STEP_NUM_TASKS", 1, seen, cap));
}
#endif

#ifdef BL_HAVE_MPI
static void finalize_at_exit(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Finalize();
}

/* MPI is initialised once per process (MPI_THREAD_FUNNELED: only the main
 * thread makes MPI calls), whatever the number of contexts. */
static bl_status init_once(bl_error *err)
{
    int init = 0;
    MPI_Initialized(&init);
    if (init)
        return BL_OK;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "mpi: MPI_Init_thread failed");
    atexit(finalize_at_exit);
    if (provided < MPI_THREAD_FUNNELED)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "mpi: MPI provides thread level %d, FUNNELED (%d) needed", provided,
                       MPI_THREAD_FUNNELED);
    return BL_OK;
}

MPI_Comm bl_mpi_job_comm(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c->job.comm ? *(MPI_Comm *)c->job.comm : MPI_COMM_WORLD;
}
#endif

bl_status bl_mpi_job_join(bl_context *ctx, int force, bl_error *err)
{
    ctx = bl_context_resolve(ctx);
    if (!ctx)
        return bl_fail(err, BL_ERR_NOMEM, "mpi: no context");
#ifdef BL_HAVE_MPI
    /* Joined once MPI runs for this context; until then, outside mpirun and
     * unforced, the job is this process alone. */
    if (ctx->job.comm || (!bl_mpi_launched() && !force))
        return BL_OK;
    bl_status st = init_once(err);
    if (st)
        return st;
    MPI_Comm *comm = malloc(sizeof *comm);
    if (!comm)
        return bl_fail(err, BL_ERR_NOMEM, "mpi: cannot allocate a communicator");
    if (MPI_Comm_dup(MPI_COMM_WORLD, comm) != MPI_SUCCESS) {
        free(comm);
        return bl_fail(err, BL_ERR_IO, "mpi: MPI_Comm_dup of the job's communicator failed");
    }
    ctx->job.comm = comm;
    ctx->job.release = bl_mpi_job_release;
    MPI_Comm_rank(*comm, &ctx->job.rank);
    MPI_Comm_size(*comm, &ctx->job.ranks);
#else
    /* A job of one process. Asking for the mpi backend anyway fails where
     * the backend is looked up: "unknown backend 'mpi'". Started by a
     * launcher as one of several copies, it refuses. */
    (void)force;
    char seen[160];
    if (launched_as_many(seen, sizeof seen))
        return bl_fail(err, BL_ERR_UNSUPPORTED,
                       "mpi: this build has no MPI, but an MPI launcher started it as one of several processes (%s): "
                       "each copy would run the whole plan alone and seal its own record. Build with MPI (cmake "
                       "-DBL_MPI=ON, with Debian's libopenmpi-dev installed) to run across ranks, or run one "
                       "process without mpirun/srun",
                       seen);
#endif
    return BL_OK;
}

void bl_mpi_job_release(bl_mpi_job_state *job)
{
#ifdef BL_HAVE_MPI
    if (job->comm) {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin)
            MPI_Comm_free((MPI_Comm *)job->comm);
        free(job->comm);
    }
#endif
    memset(job, 0, sizeof *job);
}

int bl_mpi_job_rank(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c ? c->job.rank : 0;
}

int bl_mpi_job_ranks(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c ? c->job.ranks : 1;
}

bl_status bl_mpi_job(bl_context *ctx, int *rank, int *ranks, bl_error *err)
{
    *rank = 0;
    *ranks = 1;
    bl_status st = bl_mpi_job_join(ctx, 0, err);
    if (!st) {
        *rank = bl_mpi_job_rank(ctx);
        *ranks = bl_mpi_job_ranks(ctx);
    }
    return st;
}

bl_status bl_mpi_job_replicas(bl_context *ctx, int replicas, int *part, int *parts, bl_error *err)
{
    *part = 0;
    *parts = 1;
    ctx = bl_context_resolve(ctx);
    if (!ctx)
        return bl_fail(err, BL_ERR_NOMEM, "mpi: no context");
    int size = ctx->job.ranks > 0 ? ctx->job.ranks : 1;
    if (!bl_mpi_available() && replicas != 1)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "%d replica groups need the mpi backend, not in this build", replicas);
    if (replicas < 1 || size % replicas)
        return bl_fail(err, BL_ERR_INVALID, "mpi: %d replica group(s) do not divide the job's %d rank(s) evenly",
                       replicas, size);
    ctx->job.replicas = replicas;
    int per_group = size / replicas;
    *parts = per_group;
    *part = ctx->job.rank % per_group;
    return BL_OK;
}

int bl_mpi_job_replica_groups(const bl_context *ctx)
{
    const bl_context *c = ctx ? ctx : bl_context_default();
    return c && c->job.replicas > 0 ? c->job.replicas : 1;
}

bl_status bl_mpi_job_abort(bl_context *ctx, const char *message, bl_error *err)
{
    ctx = bl_context_resolve(ctx);
    const char *why = message && *message ? message : "aborted";
#ifdef BL_HAVE_MPI
    if (ctx && ctx->job.comm && ctx->job.ranks > 1) {
        bl_context_log(ctx, "rank %d of %d: %s; aborting the MPI job", ctx->job.rank, ctx->job.ranks, why);
        fflush(NULL);
        /* Ends every process of the job, this one included. */
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#endif
    /* One process: there is no one else to stop; the caller decides. */
    return bl_fail(err, BL_ERR_INTERNAL, "%s", why);
}

bl_status bl_mpi_job_bcast_string(const bl_context *ctx, char *buf, size_t cap, bl_error *err)
{
    if (cap == 0 || bl_mpi_job_ranks(ctx) <= 1)
        return BL_OK;
#ifdef BL_HAVE_MPI
    if (cap > INT_MAX || MPI_Bcast(buf, (int)cap, MPI_CHAR, 0, bl_mpi_job_comm(ctx)) != MPI_SUCCESS)
        return bl_fail(err, BL_ERR_IO, "mpi: MPI_Bcast of %zu bytes failed", cap);
    buf[cap - 1] = '\0';
#else
    (void)buf;
    (void)err;
#endif
    return BL_OK;
}

bl_status bl_mpi_job_bcast_bytes(const bl_context *ctx, void *buf, uint64_t len, bl_error *err)
{
    if (bl_mpi_job_ranks(ctx) <= 1)
        return BL_OK;
#ifdef BL_HAVE_MPI
    /* In chunks: an MPI count is an int. */
    for (uint64_t a = 0; a < len; a += (uint64_t)INT_MAX) {
        int k = (int)(len - a < (uint64_t)INT_MAX ? len - a : (uint64_t)INT_MAX);
        if (MPI_Bcast((char *)buf + a, k, MPI_BYTE, 0, bl_mpi_job_comm(ctx)) != MPI_SUCCESS)
            return bl_fail(err, BL_ERR_IO, "mpi: MPI_Bcast of %d bytes failed", k);
    }
#else
    (void)buf;
    (void)len;
    (void)err;
#endif
    return BL_OK;
}

bl_status bl_mpi_job_allreduce_max_i32(const bl_context *ctx, int32_t *v, uint64_t n, bl_error *err)
{
    if (bl_mpi_job_ranks(ctx) <= 1)
        return BL_OK;
#ifdef BL_HAVE_MPI
    /* In chunks: an MPI count is an int. */
    for (uint64_t a = 0; a < n; a += (uint64_t)INT_MAX) {
        int k = (int)(n - a < (uint64_t)INT_MAX ? n - a : (uint64_t)INT_MAX);
        if (MPI_Allreduce(MPI_IN_PLACE, v + a, k, MPI_INT32_T, MPI_MAX, bl_mpi_job_comm(ctx)) != MPI_SUCCESS)
            return bl_fail(err, BL_ERR_IO, "mpi: MPI_Allreduce of %d int32 failed", k);
    }
#else
    (void)v;
    (void)n;
    (void)err;
#endif
    return BL_OK;
}
