/* A row of the operations table: everything the library knows about one
 * operation (`operation = "NAME"` in a plan), in one place.
 *
 * The row type lives here, in the plan layer, because loading, rendering and
 * estimating are plan work; the table itself (src/experiment/operations.c)
 * lives above, because its rows also name the runner. So the plan layer never
 * names an operation or a runner: it is handed the rows it may choose from
 * (bl_pk_load), and the plan keeps the row it chose (plan->op). Data flows
 * plan -> experiment; nothing here includes an experiment header.
 *
 * A new operation is one file (its loader, renderer and runner) plus one row
 * (docs/architecture.md, "Adding an operation"). */
#ifndef BL_PLAN_OP_H
#define BL_PLAN_OP_H

#include <stdio.h>

#include "plan/plan_impl.h"

struct bl_experiment_options; /* experiment.h: what every run is given */

/* Run options an operation may take beyond root, threads, context, sign_key,
 * guard_signals and force, which every operation takes. bl_run_plan refuses
 * an option the row does not take (bl_run_refused). */
#define BL_OP_TAKES_BACKEND 1u   /* backend */
#define BL_OP_TAKES_RESERVOIR 2u /* blocks, trials, rng, calibration */
#define BL_OP_TAKES_MPI 4u       /* runs under mpirun (several ranks) */
#define BL_OP_TAKES_RESUME 8u    /* run --resume: finishes a killed or FAILED record */
#define BL_OP_TAKES_WITHIN 16u   /* checkpoint_every_ms: checkpoints within a trial */

/* Flags. What the row's spec is, for the typed accessors of plan.h: */
#define BL_OP_SPEC_NETWORK 1u   /* the connectome family: the network fields of struct bl_plan */
#define BL_OP_SPEC_AUDIT 2u     /* plan->spec is a bl_pk_audit (plan_impl.h) */
#define BL_OP_SPEC_RESERVOIR 4u /* plan->spec is a bl_res_plan (task.h) */
#define BL_OP_SPEC_SCREEN 8u    /* plan->spec is a bl_pk_screen (plan_impl.h) */
/* What a run checks first: */
#define BL_OP_FIT_BEFORE_RUN 16u /* refuse a plan whose estimate exceeds the machine (force skips) */
/* What its records hold, for readers of records (compare): */
#define BL_OP_RECORD_SPIKES 32u     /* a connectome run's counts, spikes and final state (comparable) */
#define BL_OP_RECORD_CONDITIONS 64u /* conditions, each with counts and final state (compared as DIR@K) */

struct bl_operation {
    const char *name; /* as plans write it */
    int variant;      /* the row's own word for its loader (the reservoir family's bl_rp_operation) */
    unsigned flags;   /* BL_OP_SPEC_*, BL_OP_FIT_BEFORE_RUN, BL_OP_RECORD_* */
    unsigned takes;   /* BL_OP_TAKES_* */

    /* Plan layer. load: everything after the header keys (format,
     * format_version, id, operation, description: read by plan.c), validated
     * and resolved; it may keep its section in plan->spec. plan_dir is the
     * plan file's directory. free_spec (may be NULL) frees plan->spec. */
    bl_status (*load)(const struct bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                      const char *plan_dir, bl_plan *plan);
    void (*free_spec)(bl_plan *plan);
    /* The resolved plan as JSON: canonical (compact, full) when pretty is 0,
     * and that text's SHA-256 is the plan hash; malloc'd, NULL when out of
     * memory. Build it with the canonical builder (plan_cjson.h). */
    char *(*render)(const bl_plan *plan, int pretty, int full);
    /* Memory, disk and time of a run (NULL: the operation gives none). */
    void (*estimate)(const bl_plan *plan, bl_plan_estimate_t *out);

    /* Run layer (filled by the table's rows in src/experiment). run: reserve
     * a record under opt->root, write the artifacts, seal it through the
     * shared prologue and epilogue (bl_xp_protect, bl_xp_end: xp_impl.h);
     * *result is the row's own result. */
    bl_status (*run)(bl_plan *plan, const struct bl_experiment_options *opt, void **result, bl_error *err);
    const char *(*record_dir)(const void *result);
    void (*print)(const void *result, FILE *out);
    void (*destroy)(void *result);
    /* The artifacts a DONE record of this operation always holds (besides
     * manifest.json, checksums.sha256, DONE); NULL-terminated. */
    const char *const *artifacts;
};

/* Read, parse and load the plan at path, choosing its row among `rows`
 * (n_rows of them, looked up in order; the first of a name wins). Every
 * failure names the plan file, and an unknown operation lists the rows. */
bl_status bl_pk_load(const char *path, int part, int parts, const bl_operation *const *rows, size_t n_rows,
                     bl_plan **out, bl_error *err);

/* The rows of the connectome family and of the reservoir family (plan layer
 * only: load, render, estimate), for the table to complete. */
bl_status bl_pk_op_load_connectome(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                                   const char *plan_dir, bl_plan *plan);
bl_status bl_pk_op_load_screen(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                               const char *plan_dir, bl_plan *plan);
bl_status bl_pk_op_load_audit(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                              const char *plan_dir, bl_plan *plan);
bl_status bl_pk_op_load_reservoir(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                                  const char *plan_dir, bl_plan *plan);
void bl_pk_op_free_reservoir(bl_plan *plan);
void bl_pk_op_free_audit(bl_plan *plan);
void bl_pk_op_free_screen(bl_plan *plan);
char *bl_pk_op_render_network(const bl_plan *plan, int pretty, int full);
char *bl_pk_op_render_reservoir(const bl_plan *plan, int pretty, int full);
void bl_pk_op_estimate_reservoir(const bl_plan *plan, bl_plan_estimate_t *out);
void bl_pk_op_estimate_network(const bl_plan *plan, bl_plan_estimate_t *out);

/* The row a plan was loaded by, and its section (plan->spec), for the run
 * layer. */
const bl_operation *bl_pk_row(const bl_plan *plan);
void *bl_pk_spec(const bl_plan *plan);

/* The reservoir spec taken out of a plan (bl_res_plan_load): the plan no
 * longer owns it. NULL when the plan is not of the reservoir family. */
struct bl_res_plan *bl_pk_take_reservoir(bl_plan *plan);

#endif
