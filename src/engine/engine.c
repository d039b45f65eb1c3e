/* Backend table and dispatch. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#include "core/threads.h"
#include "mpi/mpi_job.h"

/* "auto" is a row that runs nothing itself: it chooses one of the others
 * per network (bl_backend_auto_choose), and like cpu it sends a network the
 * partition kernel cannot run to the reference backend. */
static const bl_backend backend_auto = {.name = "auto", .caps = BL_BACKEND_CHOOSES | BL_BACKEND_FALLS_BACK};

/* The rows, in the order bl_backend_known lists them: "auto", then the
 * backends in the order auto's regression tries them; the mpi backend
 * exists only in builds with MPI (src/mpi/ says which). */
enum { N_BACKENDS = 4 };
static const bl_backend *backend_at(int i)
{
    const bl_backend *const all[N_BACKENDS] = {&backend_auto, &bl_backend_reference, &bl_backend_cpu,
                                               bl_backend_mpi_or_null};
    return i >= 0 && i < N_BACKENDS ? all[i] : NULL;
}

/* The row called `name` (NULL: none is; a NULL name is the reference).
 * The one place a backend's name is compared: everything else asks the
 * row's caps. */
static const bl_backend *backend_named(const char *name)
{
    if (!name)
        return &bl_backend_reference;
    for (int i = 0; i < N_BACKENDS; i++)
        if (backend_at(i) && !strcmp(backend_at(i)->name, name))
            return backend_at(i);
    return NULL;
}

/* The first row that runs trials and has every flag of `caps` (NULL: none
 * in this build). */
static const bl_backend *backend_with(unsigned caps)
{
    for (int i = 0; i < N_BACKENDS; i++)
        if (backend_at(i) && backend_at(i)->create && (backend_at(i)->caps & caps) == caps)
            return backend_at(i);
    return NULL;
}

/* The names of the rows with any flag of `caps`, as a message lists them:
 * "auto", "reference" or "cpu". */
static void names_with_any(unsigned caps, char *out, size_t size)
{
    int n = 0, total = 0;
    for (int i = 0; i < N_BACKENDS; i++)
        total += backend_at(i) && (backend_at(i)->caps & caps);
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < N_BACKENDS && o < size; i++)
        if (backend_at(i) && (backend_at(i)->caps & caps)) {
            n++;
            o += (size_t)snprintf(out + o, size - o, "%s\"%s\"", n == 1 ? "" : n == total ? " or " : ", ",
                                  backend_at(i)->name);
        }
}

struct bl_engine {
    bl_context *ctx;
    const bl_network *net;
    const bl_backend *backend;
    void *state;
    int threads;
    char auto_report[1024]; /* "auto": the regression results that chose the backend */
};

unsigned bl_backend_caps(const char *name)
{
    const bl_backend *b = backend_named(name);
    return b ? b->caps : 0;
}

const char *const *bl_engine_backends(void)
{
    /* The rows that run trials and are not job-level, in table order:
     * "mpi" is chosen by launching under mpirun (or by name), never a
     * candidate for "auto": listing it would start MPI. (A constant, not
     * built from the table at run time, which two threads could race on;
     * unit.test_engine checks that the two agree.) */
    static const char *const names[] = {"reference", "cpu", NULL};
    return names;
}

int bl_backend_known(const char *name, char *known, size_t size)
{
    if (known && size) {
        size_t o = 0;
        known[0] = 0;
        for (int i = 0; i < N_BACKENDS && o < size; i++)
            if (backend_at(i))
                o += (size_t)snprintf(known + o, size - o, "%s%s", o ? ", " : "", backend_at(i)->name);
    }
    return name && backend_named(name);
}

bl_status bl_engine_create(bl_context *ctx, const bl_network *net, const char *backend, bl_engine **out,
                           bl_error *err)
{
    *out = NULL;
    if (!(ctx = bl_context_resolve(ctx)))
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate the default context");
    const bl_backend *b = backend_named(backend);
    if (!b) {
        char known[128];
        bl_backend_known(NULL, known, sizeof known);
        return bl_fail(err, BL_ERR_INVALID, "unknown backend '%s' (known: %s)", backend, known);
    }
    char report[1024] = "";
    const int is_part = bl_connectome_parts(net->connectome) > 1;
    /* A part holds only the edges into one rank's neurons: a chooser takes
     * the backend that runs parts (the mpi backend, where it is built). */
    if ((b->caps & BL_BACKEND_CHOOSES) && is_part && backend_with(BL_BACKEND_RUNS_PARTS))
        b = backend_with(BL_BACKEND_RUNS_PARTS);
    /* A model the partition kernel cannot run (no kernel, or a network using
     * what the model row's kernel lacks, such as an equation model's
     * on_post: the row's part_supports says): a backend that falls back
     * (auto, cpu) runs it on the reference backend, and the run log says
     * so; any other that does not run the reference kernel refuses it. */
    const char *why = NULL;
    int has_part = net->model->part && (!net->model->part_supports || net->model->part_supports(net, &why));
    if (!has_part && !(b->caps & BL_BACKEND_REF_KERNEL)) {
        if (!why)
            why = "it has only the reference kernel";
        /* In an MPI job of several ranks every rank runs the mpi backend (a
         * part, or replica groups): the way out is one process. */
        if (!(b->caps & BL_BACKEND_FALLS_BACK) && bl_mpi_job_ranks(ctx) > 1)
            return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s': model '%s' runs on the reference backend only "
                           "(%s), and an MPI job of %d ranks runs the mpi backend on every rank: run it as one "
                           "process, without mpirun (backend \"reference\", \"cpu\" or \"auto\")", b->name,
                           net->model->name, why, bl_mpi_job_ranks(ctx));
        if (!(b->caps & BL_BACKEND_FALLS_BACK)) {
            char can[128];
            names_with_any(BL_BACKEND_REF_KERNEL | BL_BACKEND_FALLS_BACK, can, sizeof can);
            return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s': model '%s' runs on the reference backend only "
                           "(%s; use backend %s)", b->name, net->model->name, why, can);
        }
        const bl_backend *ref = backend_with(BL_BACKEND_REF_KERNEL);
        snprintf(report, sizeof report, "[{\"backend\": \"%s\", \"why\": \"model '%s': %s: backend '%s' "
                 "runs as %s\"}]", ref->name, net->model->name, why, b->name, ref->name);
        b = ref;
    }
    /* Only a backend that runs parts, on that rank, can step a part. */
    if (is_part && !(b->caps & BL_BACKEND_RUNS_PARTS))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s' needs the whole connectome, but it was loaded as part "
                       "%d of %d (one MPI rank's share); only the mpi backend runs parts", b->name,
                       bl_connectome_part(net->connectome), bl_connectome_parts(net->connectome));
    if (b->caps & BL_BACKEND_CHOOSES) {
        const char *chosen = NULL;
        bl_status st = bl_backend_auto_choose(ctx, net, 0, &chosen, report, sizeof report, err);
        if (st)
            return st;
        if (!(b = backend_named(chosen)) || !b->create)
            return bl_fail(err, BL_ERR_INTERNAL, "auto backend: chose '%s', which is no backend of this build",
                           chosen ? chosen : "(none)");
    }
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
    if (bl_result_n_probes(result) && !(e->backend->caps & BL_BACKEND_PROBES))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "state probes are not supported by the %s backend (use cpu)",
                       e->backend->name);
    bl_result_set_n_steps(result, n_steps);
    return e->backend->run(e->state, first_trial, n_trials, n_steps, result, err);
}

int bl_engine_trials_at_once(const bl_engine *e)
{
    /* A job-level backend's replica groups each run trials at once. */
    int groups = e->backend->caps & BL_BACKEND_JOB ? bl_mpi_job_replica_groups(e->ctx) : 1;
    return (e->threads > 0 ? e->threads : 1) * groups;
}

/* ---- checkpoints within a trial (snapshot.h) ---- */

int bl_engine_can_snapshot(const bl_engine *e)
{
    return e->backend->set_snapshots && e->backend->resume_trial;
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
