/* Backend table and dispatch. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "core/threads.h"
#include "mpi/mpi_job.h"

/* The backends, in the order "auto" tries them; the mpi backend exists only in
 * builds with MPI (src/mpi/ says which). */
static const bl_backend *backend_at(int i)
{
    const bl_backend *const all[] = {&bl_backend_reference, &bl_backend_cpu, bl_backend_mpi_or_null};
    return i < 3 ? all[i] : NULL;
}
enum { N_BACKENDS = 3 };

struct bl_engine {
    bl_context *ctx;
    const bl_network *net;
    const bl_backend *backend;
    void *state;
    int threads;
    char auto_report[1024]; /* "auto": the regression results that chose the backend */
};

const char *const *bl_engine_backends(void)
{
    /* "mpi" is a job-level backend (chosen by launching under mpirun, or by
     * name), never a candidate for "auto": listing it would start MPI. */
    static const char *const names[] = {"reference", "cpu", NULL};
    return names;
}

int bl_backend_known(const char *name, char *known, size_t size)
{
    const char *const *names = bl_engine_backends();
    int mpi = bl_mpi_available();
    if (known && size) {
        size_t o = (size_t)snprintf(known, size, "auto");
        for (size_t i = 0; names[i] && o < size; i++)
            o += (size_t)snprintf(known + o, size - o, ", %s", names[i]);
        if (mpi && o < size)
            snprintf(known + o, size - o, ", mpi");
    }
    if (!name)
        return 0;
    int ok = !strcmp(name, "auto") || (mpi && !strcmp(name, "mpi"));
    for (size_t i = 0; names[i] && !ok; i++)
        ok = !strcmp(names[i], name);
    return ok;
}

bl_status bl_engine_create(bl_context *ctx, const bl_network *net, const char *backend, bl_engine **out,
                           bl_error *err)
{
    *out = NULL;
    if (!(ctx = bl_context_resolve(ctx)))
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the default context");
    const char *name = backend ? backend : "reference";
    char report[1024] = "";
    if (!strcmp(name, "auto") && bl_connectome_parts(net->connectome) > 1)
        name = "mpi"; /* the only backend that runs a part (below) */
    /* A model the partition kernel cannot run (no kernel, or an equation
     * model using what the "equations" row's kernel lacks, such as on_post), or
     * injected currents (only the reference kernel applies them so far,
     * src/models/eq_current.c; a partition kernel would silently leave them
     * out): auto and cpu run it on the reference backend, and the run log
     * says so. */
    const char *why = NULL;
    int has_part = net->model->part && (!net->model->part_supports || net->model->part_supports(net, &why));
    if (has_part && net->n_currents) {
        has_part = 0;
        why = "it injects currents, which only the reference kernel applies";
    }
    if (!has_part && strcmp(name, "reference")) {
        if (!why)
            why = "it has only the reference kernel";
        /* In an MPI job of several ranks every rank runs the mpi backend (a
         * part, or replica groups): the way out is one process. */
        if (strcmp(name, "auto") && strcmp(name, "cpu") && bl_mpi_job_ranks(ctx) > 1)
            return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s': model '%s' runs on the reference backend only "
                           "(%s), and an MPI job of %d ranks runs the mpi backend on every rank: run it as one "
                           "process, without mpirun (backend \"reference\", \"cpu\" or \"auto\")", name,
                           net->model->name, why, bl_mpi_job_ranks(ctx));
        if (strcmp(name, "auto") && strcmp(name, "cpu"))
            return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s': model '%s' runs on the reference backend only "
                           "(%s; use backend \"reference\", \"cpu\" or \"auto\")", name, net->model->name, why);
        snprintf(report, sizeof report, "[{\"backend\": \"reference\", \"why\": \"model '%s': %s: backend '%s' "
                 "runs as reference\"}]", net->model->name, why, name);
        name = "reference";
    }
    if (!strcmp(name, "auto")) {
        bl_status st = bl_backend_auto_choose(ctx, net, 0, &name, report, sizeof report, err);
        if (st)
            return st;
    }
    const bl_backend *b = NULL;
    for (int i = 0; i < N_BACKENDS; i++)
        if (backend_at(i) && !strcmp(backend_at(i)->name, name))
            b = backend_at(i);
    if (!b)
        return bl_fail(err, BL_ERR_INVALID, "unknown backend '%s' (known: reference, cpu, %sauto)", name,
                       bl_mpi_available() ? "mpi, " : "");
    /* A part holds only the edges into one rank's neurons: only the mpi
     * backend, on that rank, can step it. */
    if (bl_connectome_parts(net->connectome) > 1 && strcmp(name, "mpi"))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s' needs the whole connectome, but it was loaded as part "
                       "%d of %d (one MPI rank's share); only the mpi backend runs parts", name,
                       bl_connectome_part(net->connectome), bl_connectome_parts(net->connectome));
    bl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate an engine");
    e->ctx = ctx;
    e->net = net;
    e->backend = b;
    e->threads = 1;
    memcpy(e->auto_report, report, sizeof report);
    bl_status st = b->create(ctx, net, &e->state, err);
    if (st) {
        free(e);
        return st;
    }
    *out = e;
    return BL_OK;
}

void bl_engine_destroy(bl_engine *e)
{
    if (!e)
        return;
    e->backend->destroy(e->state);
    free(e);
}

const char *bl_engine_backend(const bl_engine *e) { return e->backend->name; }

bl_status bl_engine_set_threads(bl_engine *e, int threads, bl_error *err)
{
    if (threads < 0)
        return bl_fail(err, BL_ERR_INVALID, "threads %d: must be >= 0 (0 = all cores)", threads);
    /* 0 means every core (core/threads.h), resolved once for every backend. */
    int want = bl_threads_resolve(threads);
    e->threads = e->backend->set_threads ? e->backend->set_threads(e->state, want) : 1;
    return BL_OK;
}

int bl_engine_threads(const bl_engine *e) { return e->threads; }

const char *bl_engine_auto_report(const bl_engine *e) { return e->auto_report; }

bl_status bl_engine_run(bl_engine *e, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                        bl_result *result, bl_error *err)
{
    if (n_steps == 0 || n_steps > INT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "a trial needs 1..2^31-1 steps, not %llu",
                       (unsigned long long)n_steps);
    if (first_trial < bl_result_first_trial(result) ||
        (uint64_t)first_trial + n_trials > (uint64_t)bl_result_first_trial(result) + bl_result_n_trials(result))
        return bl_fail(err, BL_ERR_INVALID, "trials %u..%u are outside the result's range",
                       first_trial, first_trial + n_trials);
    if (bl_result_n_probes(result) && !strcmp(e->backend->name, "mpi"))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "state probes are not supported by the mpi backend (use cpu)");
    bl_result_set_n_steps(result, n_steps);
    return e->backend->run(e->state, first_trial, n_trials, n_steps, result, err);
}

int bl_engine_trials_at_once(const bl_engine *e)
{
    int groups = strcmp(e->backend->name, "mpi") ? 1 : bl_mpi_job_replica_groups(e->ctx);
    return (e->threads > 0 ? e->threads : 1) * groups;
}

/* ---- checkpoints within a trial (snapshot.h) ---- */

int bl_engine_can_snapshot(const bl_engine *e)
{
    return e->backend->set_snapshots && e->backend->resume_trial && !e->net->model->part_state_outside_fields;
}

void bl_engine_set_snapshots(bl_engine *e, uint64_t every_windows, bl_engine_snapshot_fn fn, void *user)
{
    if (bl_engine_can_snapshot(e))
        e->backend->set_snapshots(e->state, every_windows, fn, user);
}

bl_status bl_engine_resume_trial(bl_engine *e, uint32_t trial, const void *blob, size_t len, bl_error *err)
{
    if (!bl_engine_can_snapshot(e))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s' cannot continue a trial from a checkpoint within it",
                       e->backend->name);
    return e->backend->resume_trial(e->state, trial, blob, len, err);
}
