/* Backend table and dispatch. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_impl.h"
#ifdef BL_HAVE_MPI
#include "engine/engine_mpi.h"
#endif

static const bl_backend *const backends[] = {&bl_backend_reference, &bl_backend_cpu,
#ifdef BL_HAVE_MPI
                                             &bl_backend_mpi,
#endif
};
#ifdef BL_HAVE_MPI
#define KNOWN_BACKENDS "reference, cpu, mpi, auto"
#else
#define KNOWN_BACKENDS "reference, cpu, auto"
#endif
enum { N_BACKENDS = sizeof backends / sizeof backends[0] };

struct bl_engine {
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
    static const char *names[N_BACKENDS + 1];
    int k = 0;
    for (int i = 0; i < N_BACKENDS; i++)
        if (strcmp(backends[i]->name, "mpi"))
            names[k++] = backends[i]->name;
    names[k] = NULL;
    return names;
}

bl_status bl_engine_create(const bl_network *net, const char *backend, bl_engine **out, bl_error *err)
{
    *out = NULL;
    const char *name = backend ? backend : "reference";
    char report[1024] = "";
    if (!strcmp(name, "auto") && bl_connectome_parts(net->connectome) > 1)
        name = "mpi"; /* the only backend that runs a part (below) */
    if (!strcmp(name, "auto")) {
        bl_status st = bl_backend_auto_choose(net, 0, &name, report, sizeof report, err);
        if (st)
            return st;
    }
    const bl_backend *b = NULL;
    for (int i = 0; i < N_BACKENDS; i++)
        if (!strcmp(backends[i]->name, name))
            b = backends[i];
    if (!b)
        return bl_fail(err, BL_ERR_INVALID, "unknown backend '%s' (known: " KNOWN_BACKENDS ")", name);
    /* A part holds only the edges into one rank's neurons: only the mpi
     * backend, on that rank, can step it. */
    if (bl_connectome_parts(net->connectome) > 1 && strcmp(name, "mpi"))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "backend '%s' needs the whole connectome, but it was loaded as part "
                       "%d of %d (one MPI rank's share); only the mpi backend runs parts", name,
                       bl_connectome_part(net->connectome), bl_connectome_parts(net->connectome));
    bl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate an engine");
    e->net = net;
    e->backend = b;
    e->threads = 1;
    memcpy(e->auto_report, report, sizeof report);
    bl_status st = b->create(net, &e->state, err);
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
    /* 0 means every core, resolved here once for every backend. */
    int want = threads > 0 ? threads : omp_get_num_procs();
    e->threads = e->backend->set_threads ? e->backend->set_threads(e->state, want < 1 ? 1 : want) : 1;
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
    bl_result_set_n_steps(result, n_steps);
    return e->backend->run(e->state, first_trial, n_trials, n_steps, result, err);
}

bl_status bl_mpi_job(int *rank, int *ranks, bl_error *err)
{
    *rank = 0;
    *ranks = 1;
#ifdef BL_HAVE_MPI
    if (!bl_mpi_launched())
        return BL_OK;
    bl_status st = bl_mpi_init(err);
    if (st)
        return st;
    *rank = bl_mpi_rank();
    *ranks = bl_mpi_size();
#else
    (void)err;
#endif
    return BL_OK;
}

void bl_mpi_job_abort(const char *message)
{
#ifdef BL_HAVE_MPI
    bl_mpi_abort(message);
#else
    if (message && *message)
        fprintf(stderr, "brainlesslab: %s\n", message);
    exit(1);
#endif
}

bl_status bl_mpi_job_replicas(int replicas, int *part, int *parts, bl_error *err)
{
    *part = 0;
    *parts = 1;
#ifdef BL_HAVE_MPI
    bl_status st = bl_mpi_set_replicas(replicas, err);
    if (!st)
        bl_mpi_part(part, parts);
    return st;
#else
    return replicas == 1 ? BL_OK
                         : bl_fail(err, BL_ERR_UNSUPPORTED, "%d replica groups need the mpi backend, not in this build",
                                   replicas);
#endif
}

int bl_engine_trials_at_once(const bl_engine *e)
{
    int groups = 1;
#ifdef BL_HAVE_MPI
    if (!strcmp(e->backend->name, "mpi"))
        groups = bl_mpi_replicas();
#endif
    return (e->threads > 0 ? e->threads : 1) * groups;
}
