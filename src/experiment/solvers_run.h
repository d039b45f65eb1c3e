/* The runners of the solver operations (rows "ode" and "ssa" of
 * operations.c): each reserves a record, writes its arrays and summary and
 * seals it (docs/solvers.md, "Plans"). */
#ifndef BL_EXPERIMENT_SOLVERS_RUN_H
#define BL_EXPERIMENT_SOLVERS_RUN_H

#include <stdio.h>

#include "brainlesslab/experiment.h"
#include "brainlesslab/plan.h"

bl_status bl_xp_ode_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err);
bl_status bl_xp_ssa_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err);
/* The flyvis application (src/experiment/flyvis_run.c): the same result type. */
bl_status bl_xp_flyvis_run(bl_plan *plan, const bl_experiment_options *opt, void **out, bl_error *err);
/* Both results: the record directory and one printed line. */
typedef struct solver_result {
    char dir[4096];
    char line[512];
} solver_result;
const char *bl_xp_solver_record_dir(const void *result);
void bl_xp_solver_print(const void *result, FILE *out);
void bl_xp_solver_destroy(void *result);

#endif
