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

#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/error.h"
#include "brainlesslab/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_experiment_options {
    const char *root;     /* records are created under it */
    const char *backend;  /* NULL: the plan's */
    int threads;          /* < 0: the plan's */
    FILE *progress;       /* NULL: quiet; else one updating line per finished wave of trials */
    const char *sign_key; /* NULL: unsigned; else an Ed25519 private key (PEM) that signs the record */
} bl_experiment_options;

/* A neuron is a responder when its firing rate, averaged over trials,
 * reaches this many Hz. */
#define BL_RESPONDER_THRESHOLD_HZ 1.0

typedef struct bl_experiment bl_experiment;

bl_status bl_experiment_run(const bl_plan *plan, const bl_experiment_options *options,
                            bl_experiment **out, bl_error *err);
void bl_experiment_destroy(bl_experiment *x);

const char *bl_experiment_record_dir(const bl_experiment *x);
const char *bl_experiment_backend(const bl_experiment *x);
int bl_experiment_threads(const bl_experiment *x);
/* The human summary: totals and the responder table. */
void bl_experiment_print(const bl_experiment *x, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
