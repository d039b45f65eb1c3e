/* Reservoir evaluation internals shared by res_evaluate.c and the record
 * writer res_run.c (private to src/experiment). */
#ifndef BL_EXPERIMENT_RES_RUN_IMPL_H
#define BL_EXPERIMENT_RES_RUN_IMPL_H

#include <stdio.h>

#include "brainlesslab/context.h"
#include "brainlesslab/task.h"

struct bl_res_evaluation {
    size_t n_trials;
    bl_res_trial *trials; /* [targets][blocks][trials_per_block] */
    size_t n_targets;
    bl_res_summary *summaries;
    double *block_means; /* [targets][blocks] */
    uint32_t blocks;
    double *probe_x;      /* [n_trials][3 points][probe_width] emitted activity (NaN: not reached) */
    uint32_t probe_width; /* the widest reservoir target's units */
    int threads;    /* used */
    uint32_t batch; /* used */
};

/* bl_res_evaluate reporting progress to ctx's progress sink after every
 * batch (ctx may be NULL: quiet). */
bl_status bl_res_evaluate_progress(const bl_res_plan *plan, int threads, int batch, const bl_context *ctx,
                                   bl_res_evaluation **out, bl_error *err);

/* A resumable evaluation (run --resume, res_run.c). restore: before any trial
 * runs, fill the trials (and their probe cells) an interrupted run finished,
 * setting have[i] = 1 for each; they are not run again. saved: a batch of
 * reservoir trials [first, first + n) has run (before the statuses are
 * settled): checkpoint it. Trials are independent and a batch gives the
 * same trials whatever its make-up, so the missing trials may be batched
 * differently from the interrupted run. Control targets always run (cheap). */
typedef struct bl_res_resume_hooks {
    void *user;
    bl_status (*restore)(void *user, bl_res_evaluation *ev, uint8_t *have, bl_error *err);
    bl_status (*saved)(void *user, const bl_res_evaluation *ev, size_t first, size_t n, bl_error *err);
} bl_res_resume_hooks;
bl_status bl_res_evaluate_resumable(const bl_res_plan *plan, int threads, int batch, const bl_context *ctx,
                                    const bl_res_resume_hooks *hooks, bl_res_evaluation **out, bl_error *err);

#endif
