/* Experiments: a resolved plan in, a sealed record out.
 *
 * bl_run_plan runs any plan, whatever its operation: the plan's row of the
 * operations table (src/experiment/operations.c) runs it with one options
 * struct, and one result type tells where the record is and prints the
 * summary. The CLI's `run` and Python's run_plan are a few lines over it.
 * The per-operation runners below stay for programs that want an
 * operation's own result (bl_experiment_backend, ...).
 *
 * bl_experiment_run reserves a new record under a root, runs every trial of
 * the plan's network on the chosen backend, writes the artifacts (SONATA
 * spikes, counts, rates, final state, summary, propagation statistics) and
 * seals the record; any failure after the reservation leaves a FAILED record
 * with whatever inventory exists. The returned summary is what a person reads
 * first: the responders grouped by cell type and shortest-path depth. */
#ifndef BRAINLESSLAB_EXPERIMENT_H
#define BRAINLESSLAB_EXPERIMENT_H

#include "brainlesslab/export.h"
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/context.h"
#include "brainlesslab/error.h"
#include "brainlesslab/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options of every run, whatever the operation. Every operation takes
 * root, threads, context, sign_key, guard_signals and force; the rest only
 * some take, and bl_run_plan refuses one given to an operation that does not
 * take it (bl_run_refused). Zero means "not given" for every optional field
 * (threads: < 0), so `{.root = DIR, .threads = -1}` runs the plan as written. */
typedef struct bl_experiment_options {
    const char *root;     /* records are created under it */
    const char *backend;  /* NULL: the plan's (connectome, screen, audit) */
    int threads;          /* < 0: the plan's; 0: all cores */
    bl_context *context;  /* the MPI job, the progress sink (called once per finished wave of trials or
                             batch of reservoir trials) and the log sink; NULL: the default context */
    const char *sign_key; /* NULL: unsigned; else an Ed25519 private key (PEM) that signs the record */
    int guard_signals;    /* 1: SIGINT, SIGTERM and SIGHUP during the run seal the record FAILED naming the
                             signal, then end the process by it (a program's choice: the CLI sets it; an
                             embedding such as Python keeps its own handlers with 0) */
    int force;            /* bl_run_plan: run a plan whose estimate exceeds this machine (bl_run_plan_fits) */
    /* Reservoir operations (profile, sweep, ablate, benchmark, calibrate): */
    uint32_t blocks, trials; /* 1..100000: run that many blocks / trials per block instead (recorded); 0: as written */
    const char *rng;         /* another seed scheme than written (recorded); NULL: as written */
    const char *calibration; /* a calibrate record: normalises the scores of its task; NULL: none */
    int batch;               /* <= 0: the plan's batch size */
    /* A record a killed run left reserved, or that was sealed FAILED: finish it
     * (connectome and reservoir plans) instead of reserving a new one. The
     * plan must be the record's (plan hash, plan file bytes); the trials its
     * checkpoint holds, verified, are not run again. NULL: a new record. */
    const char *resume;
    /* Connectome plans on a backend that can (cpu; mpi one trial at a time):
     * a checkpoint within each trial every this much simulated time (rounded
     * up to whole delay windows), so a resume continues a long trial where
     * it was; 0: the default, BL_CHECKPOINT_EVERY_MS_DEFAULT, at most one per
     * BL_CHECKPOINT_MIN_WALL_S of wall time; < 0: only after each trial. */
    double checkpoint_every_ms;
} bl_experiment_options;

/* The default interval of checkpoints within a trial, in simulated ms, and
 * (with the default only) the least wall time between two checkpoints of a
 * trial, in s (docs/reliability.md, "Durable runs": what they cost). */
#define BL_CHECKPOINT_EVERY_MS_DEFAULT 1000.0
#define BL_CHECKPOINT_MIN_WALL_S 10

/* The result of bl_run_plan: opaque, whatever the operation. */
typedef struct bl_run bl_run;

/* Options given that the plan's operation does not take (bits; 0: none). */
#define BL_RUN_REFUSED_RESERVOIR 1u /* blocks, trials, rng or calibration: reservoir plans only */
#define BL_RUN_REFUSED_BACKEND 2u   /* backend: connectome plans only */
#define BL_RUN_REFUSED_MPI 4u       /* the operation runs in one process, not under mpirun */
#define BL_RUN_REFUSED_RESUME 8u    /* resume: connectome and reservoir plans only (not screen, audit) */
#define BL_RUN_REFUSED_WITHIN 16u   /* checkpoint_every_ms: connectome plans only */
BL_API unsigned bl_run_refused(const bl_plan *plan, const bl_experiment_options *options);
/* BL_ERR_INVALID (naming the estimate) when the plan's operation checks its
 * estimate before a run, options->force is 0 and the plan exceeds this
 * machine's memory or the free disk under options->root (bl_plan_fits_machine). */
BL_API bl_status bl_run_plan_fits(const bl_plan *plan, const bl_experiment_options *options, bl_error *err);
/* Run the plan by its operation's row: refuse the options it does not take
 * (BL_ERR_INVALID, one line naming them), check the fit (bl_run_plan_fits),
 * reserve a record under options->root, write the operation's artifacts and
 * seal it (a failure after the reservation leaves a FAILED record). The plan
 * is not changed, except that reservoir options (blocks, trials, rng) are
 * applied to its reservoir plan before the run, as the record says. */
BL_API bl_status bl_run_plan(bl_plan *plan, const bl_experiment_options *options, bl_run **out, bl_error *err);
BL_API void bl_run_destroy(bl_run *run);
BL_API const char *bl_run_record_dir(const bl_run *run);
BL_API const char *bl_run_operation(const bl_run *run);
/* The human summary of the run (the operation's own), ending with the record. */
BL_API void bl_run_print(const bl_run *run, FILE *out);

/* A neuron is a responder when its firing rate, averaged over trials,
 * reaches this many Hz. */
#define BL_RESPONDER_THRESHOLD_HZ 1.0

typedef struct bl_experiment bl_experiment;

BL_API bl_status bl_experiment_run(const bl_plan *plan, const bl_experiment_options *options,
                                   bl_experiment **out, bl_error *err);
BL_API void bl_experiment_destroy(bl_experiment *x);

BL_API const char *bl_experiment_record_dir(const bl_experiment *x);
BL_API const char *bl_experiment_backend(const bl_experiment *x);
BL_API int bl_experiment_threads(const bl_experiment *x);
/* The human summary: totals and the responder table. */
BL_API void bl_experiment_print(const bl_experiment *x, FILE *out);

/* Operation "audit": populations broken down by metadata, the hierarchy from
 * a source population and its layer edge statistics, into a sealed record
 * (audit.json, layers.csv, layer_edges.npy; src/experiment/audit_run.c). */
typedef struct bl_audit bl_audit;
BL_API bl_status bl_audit_run(const bl_plan *plan, const bl_experiment_options *options, bl_audit **out,
                       bl_error *err);
BL_API void bl_audit_destroy(bl_audit *a);
BL_API const char *bl_audit_record_dir(const bl_audit *a);
BL_API void bl_audit_print(const bl_audit *a, FILE *out);

/* Operation "screen": every condition of the plan's axes on one loaded
 * connectome, conditions in parallel, into one sealed record with a condition
 * table and per-condition rates (src/experiment/screen_run.c). Each condition
 * equals the single plan that writes its change in, bit for bit. */
typedef struct bl_screen bl_screen;
BL_API bl_status bl_screen_run(const bl_plan *plan, const bl_experiment_options *options, bl_screen **out,
                        bl_error *err);
BL_API void bl_screen_destroy(bl_screen *s);
BL_API const char *bl_screen_record_dir(const bl_screen *s);
BL_API void bl_screen_print(const bl_screen *s, FILE *out);

/* Compare two records (connectome runs, or screen conditions named DIR@K):
 * the exact verdict on spikes, counts and final state, then per-neuron rate
 * differences with effect sizes and Welch's test across trials, written as a
 * sealed record of its own under root (src/experiment/compare_run.c). */
typedef struct bl_compare bl_compare;
BL_API bl_status bl_compare_records(const char *a, const char *b, const char *root, bl_compare **out, bl_error *err);
BL_API void bl_compare_destroy(bl_compare *x);
BL_API const char *bl_compare_record_dir(const bl_compare *x);
/* Spikes (when both recorded them) and counts equal. */
BL_API int bl_compare_identical(const bl_compare *x);
BL_API void bl_compare_print(const bl_compare *x, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
