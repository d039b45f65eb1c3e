/* The stepping interface every backend implements (as Redis ae.c does for
 * epoll/kqueue): engine.c holds the table and dispatches; each backend lives in
 * its own engine_<name>.c and knows nothing of plans, records or the CLI. */
#ifndef BL_ENGINE_IMPL_H
#define BL_ENGINE_IMPL_H

#include "core/context_impl.h"
#include "engine/network_impl.h"
#include "engine/snapshot.h"

typedef struct bl_backend {
    const char *name;
    /* What it does (BL_BACKEND_* of brainlesslab/engine.h): engine.c and
     * the callers (bl_backend_caps) decide by these, never by the name. */
    unsigned caps;
    /* Prepare per-engine state (buffers sized for the network). ctx is never
     * NULL (bl_engine_create resolves the default) and outlives the state. */
    bl_status (*create)(bl_context *ctx, const bl_network *net, void **state, bl_error *err);
    /* Run trials [first, first + n) for n_steps each; append spikes in
     * (trial, step, neuron) order and write counts and final state. */
    bl_status (*run)(void *state, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                     bl_result *result, bl_error *err);
    void (*destroy)(void *state);
    /* Optional: the number of threads to use (>= 1; bl_engine_set_threads
     * resolves 0 to every core); returns the number actually used. NULL:
     * single-threaded backend. Until it is called a backend uses one thread. */
    int (*set_threads)(void *state, int threads);
    /* Optional (snapshot.h): checkpoints within a trial. NULL: the backend
     * resumes at trial boundaries only. */
    void (*set_snapshots)(void *state, uint64_t every_windows, bl_engine_snapshot_fn fn, void *user);
    bl_status (*resume_trial)(void *state, uint32_t trial, const void *blob, size_t len, bl_error *err);
} bl_backend;

extern const bl_backend bl_backend_reference;
extern const bl_backend bl_backend_cpu;
/* engine_mpi.c, built with -DBL_MPI=ON; NULL in builds without it (engine.c). */
extern const bl_backend *const bl_backend_mpi_or_null;

#endif
