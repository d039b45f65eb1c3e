/* Networks, engines and results.
 *
 * A network binds a connectome, model parameters, a stimulus, silencing and a
 * seed; it is immutable once created and may be shared by engines. An engine is
 * one backend ("reference", later "cpu", "mpi", ...) running trials of a
 * network; every backend produces the same spikes and final state bits as
 * "reference". Results hold spike events ordered by (trial, step, neuron),
 * per-trial spike counts and the final state of each trial. */
#ifndef BRAINLESSLAB_ENGINE_H
#define BRAINLESSLAB_ENGINE_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/context.h"
#include "brainlesslab/error.h"
#include "brainlesslab/model.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/stimulus.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_network bl_network;
typedef struct bl_engine bl_engine;
typedef struct bl_result bl_result;

/* The connectome and stimulus must outlive the network (they are borrowed). */
BL_API bl_status bl_network_create(const bl_connectome *c, const bl_lif_params *params,
                                   const bl_stimulus *stim, const int32_t *silenced, size_t n_silenced,
                                   uint64_t seed, bl_network **out, bl_error *err);
BL_API void bl_network_destroy(bl_network *net);

/* Backend by name: NULL or "reference" is the plain scalar reference; "cpu"
 * the event-driven multithreaded backend; "auto" the fastest backend that
 * passes the exact regression on this machine (see bl_backend_auto_choose).
 * ctx (context.h) holds the process-wide things the engine uses (the MPI job,
 * log sink, tunables); it must outlive the engine. NULL means the process's
 * default context (bl_context_default). */
BL_API bl_status bl_engine_create(bl_context *ctx, const bl_network *net, const char *backend,
                                  bl_engine **out, bl_error *err);
BL_API void bl_engine_destroy(bl_engine *e);
BL_API const char *bl_engine_backend(const bl_engine *e);
/* Threads for backends that use them (0 = one per core); the reference
 * backend always uses one. Results never depend on this. */
BL_API bl_status bl_engine_set_threads(bl_engine *e, int threads, bl_error *err);
BL_API int bl_engine_threads(const bl_engine *e);
/* Trials one bl_engine_run call can run at once: threads, times the replica
 * groups of an mpi job. Calls with fewer leave workers idle. */
BL_API int bl_engine_trials_at_once(const bl_engine *e);
/* For an engine created as "auto": the exact-regression results (JSON array)
 * that chose its backend; "" otherwise. */
BL_API const char *bl_engine_auto_report(const bl_engine *e);
/* "auto": run the exact regression (a small network with these parameters)
 * on every backend and choose the fastest one whose results equal the
 * reference's bit for bit. *chosen is a static backend name; report receives
 * the regression results as a JSON array. */
BL_API bl_status bl_backend_auto_choose(bl_context *ctx, const bl_network *net, int threads, const char **chosen,
                                        char *report, size_t report_size, bl_error *err);
/* Names of the compiled-in backends, NULL-terminated; the first is "reference". */
BL_API const char *const *bl_engine_backends(void);
/* What a backend does (bl_backend_caps), so that callers ask a question of
 * the backend's row instead of comparing its name. */
enum {
    BL_BACKEND_CHOOSES = 1,     /* "auto": runs none itself, chooses another per network (bl_backend_auto_choose) */
    BL_BACKEND_REF_KERNEL = 2,  /* steps the model's reference kernel: runs every model */
    BL_BACKEND_PART_KERNEL = 4, /* steps the model's partition kernel (src/engine/kernel_ops.h) */
    BL_BACKEND_FALLS_BACK = 8,  /* a network the model's partition kernel cannot run (the model row's
                                   part_supports says why) runs on the reference backend in its place;
                                   without it such a network is refused */
    BL_BACKEND_RUNS_PARTS = 16, /* steps a connectome loaded as one part of several (an MPI rank's share) */
    BL_BACKEND_PROBES = 32,     /* takes state probes (bl_result_set_probes) */
    BL_BACKEND_JOB = 64         /* a job-level backend: chosen by launching under mpirun (or by name),
                                   never an "auto" candidate; its replica groups run trials at once */
};
/* The BL_BACKEND_* flags of the backend called `name` in this build; 0 for
 * a name no backend has (NULL: "reference", as bl_engine_create reads it). */
BL_API unsigned bl_backend_caps(const char *name);
/* 1 when `name` is a backend a run can ask for in this build: "auto", one of
 * bl_engine_backends(), or "mpi" when the mpi backend is built in. `known`
 * (may be NULL) receives the list, "auto, reference, cpu[, mpi]", for the
 * message that refuses a name. Plans, `run --backend` and bl_run_plan refuse
 * an unknown name before anything is reserved. */
BL_API int bl_backend_known(const char *name, char *known, size_t size);

/* Run trials first_trial .. first_trial+n_trials-1 for n_steps each, appending
 * to result (created for the same network and trial range). */
BL_API bl_status bl_engine_run(bl_engine *e, uint32_t first_trial, uint32_t n_trials, uint64_t n_steps,
                               bl_result *result, bl_error *err);

BL_API bl_status bl_result_create(const bl_network *net, uint32_t first_trial, uint32_t n_trials,
                                  bl_result **out, bl_error *err);
BL_API void bl_result_destroy(bl_result *r);
/* Observers of a run into this result, set before bl_engine_run:
 *   sink      spikes as they happen: the result then keeps no events (the
 *             event arrays stay empty, bl_result_n_events counts them);
 *             counts and final state are kept as always. Called with one
 *             step's spikers of one trial, ascending, steps in order within a
 *             trial; calls for different trials may come from different
 *             threads at once, calls for one trial never overlap. A failure
 *             stops the run with its status.
 *   on_steps  steps simulated so far in this result, summed over the trials
 *             in flight (monotone; from any thread; may be called often).
 * Either may be NULL. Results never depend on them. */
typedef bl_status (*bl_spike_sink_fn)(void *user, uint32_t trial, uint32_t step, const int32_t *neurons, size_t n,
                                      bl_error *err);
typedef void (*bl_steps_fn)(void *user, uint64_t steps_done);
BL_API void bl_result_observe(bl_result *r, bl_spike_sink_fn sink, bl_steps_fn on_steps, void *user);
/* State probes: v and g of these neurons after every `every_steps` steps
 * (after steps every-1, 2*every-1, ...: the state after k*every steps), of a
 * run of n_steps steps; [trial][sample][probe] in the state dtype. Set before
 * bl_engine_run; the reference and cpu backends fill them (mpi refuses). */
BL_API bl_status bl_result_set_probes(bl_result *r, const int32_t *neurons, size_t n, uint64_t every_steps,
                                      uint64_t n_steps, bl_error *err);
BL_API const void *bl_result_probe_v(const bl_result *r, uint64_t *n_samples, size_t *n_probes);
BL_API const void *bl_result_probe_g(const bl_result *r);
BL_API uint32_t bl_result_first_trial(const bl_result *r);
BL_API uint32_t bl_result_n_trials(const bl_result *r);
BL_API uint64_t bl_result_n_neurons(const bl_result *r);
BL_API uint64_t bl_result_n_steps(const bl_result *r);
BL_API uint64_t bl_result_n_events(const bl_result *r);
/* Event arrays (n_events each): trial, step, neuron. */
BL_API const int32_t *bl_result_event_trials(const bl_result *r);
BL_API const int32_t *bl_result_event_steps(const bl_result *r);
BL_API const int32_t *bl_result_event_neurons(const bl_result *r);
/* [n_trials * n_neurons], row per trial. */
BL_API const int32_t *bl_result_counts(const bl_result *r);
/* Final state [n_trials * n_neurons] in the preset's dtype (float64 volts for
 * shiu2024, float32 millivolts for phase4c). */
BL_API bl_dtype bl_result_state_dtype(const bl_result *r);
BL_API const void *bl_result_final_v(const bl_result *r);
BL_API const void *bl_result_final_g(const bl_result *r);

#ifdef __cplusplus
}
#endif
#endif
