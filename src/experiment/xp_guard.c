/* The record's watchdog in an MPI job of several ranks (xp_impl.h,
 * bl_xp_mpi_guard), shared by the runners that run under mpirun (connectome
 * jobs, SSA banks). mpirun stops every rank with SIGTERM when the job is
 * interrupted, or when a rank dies or aborts: rank 0 then marks the record
 * FAILED naming the signal, instead of leaving it RUNNING, and the other
 * ranks wait for it before they end. */
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "core/context_impl.h"
#include "experiment/xp_impl.h"
#include "mpi/mpi_job.h"

static void on_signal_rank0(void *arg, int signo)
{
    bl_xp_mpi_guard *g = arg;
    if (!g->open)
        return;
    char msg[512];
    const char *name = signo == SIGTERM ? "SIGTERM" : signo == SIGINT ? "SIGINT" : signo == SIGHUP ? "SIGHUP" : "signal";
    snprintf(msg, sizeof msg, "the MPI job was stopped by %s (%d) before the record was sealed: it was "
             "interrupted, or another rank failed, was killed or aborted (see mpirun's message)", name, signo);
    bl_error e = {0};
    if (bl_record_fail(g->rec, msg, &e))
        bl_context_log(g->ctx, "rank 0: %s; and the FAILED record could not be written (%s)", msg, e.message);
    else
        bl_context_log(g->ctx, "rank 0: %s; record %s FAILED", msg, bl_record_dir(g->rec));
    g->open = 0;
}

/* Ranks other than 0: mpirun delivers its SIGTERM to every rank, and the
 * first rank to die makes it kill the rest at once, rank 0 included, often
 * before rank 0 has written FAILED (1 of 7 records failed in the audit).
 * So the other ranks wait for rank 0 (up to 5 s) before they end. */
static void on_signal_other(void *arg, int signo)
{
    (void)arg;
    (void)signo;
    struct timespec t = {5, 0};
    while (nanosleep(&t, &t) != 0)
        ;
}

bl_status bl_xp_mpi_guard_start(bl_xp_mpi_guard *g, const bl_context *ctx, bl_record *rec, bl_error *err)
{
    g->ctx = ctx;
    g->rec = rec;
    g->open = rec != NULL;
    return rec ? bl_mpi_watchdog_start(on_signal_rank0, g, err) : bl_mpi_watchdog_start(on_signal_other, NULL, err);
}

void bl_xp_mpi_guard_hold(bl_xp_mpi_guard *g)
{
    if (g->rec)
        bl_mpi_watchdog_lock();
}

void bl_xp_mpi_guard_end(bl_xp_mpi_guard *g)
{
    if (!g->rec)
        return;
    g->open = 0;
    bl_mpi_watchdog_unlock();
    bl_mpi_watchdog_stop(); /* g may go now */
}
