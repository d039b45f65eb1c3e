/* Experiments: a resolved plan in, a sealed record out.
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

typedef struct bl_experiment_options {
    const char *root;     /* records are created under it */
    const char *backend;  /* NULL: the plan's */
    int threads;          /* < 0: the plan's */
    bl_context *context;  /* the MPI job, the progress sink (called once per finished wave of trials)
                             and the log sink; NULL: the default context (context.h) */
    const char *sign_key; /* NULL: unsigned; else an Ed25519 private key (PEM) that signs the record */
    int guard_signals;    /* 1: SIGINT, SIGTERM and SIGHUP during the run seal the record FAILED naming the
                             signal, then end the process by it (a program's choice: the CLI sets it; an
                             embedding such as Python keeps its own handlers with 0) */
} bl_experiment_options;

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
