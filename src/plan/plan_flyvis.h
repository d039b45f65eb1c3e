/* The plan section of `operation = "flyvis"` ([flyvis], src/plan/plan_flyvis.c);
 * its row is in src/experiment/operations.c, its runner in
 * src/experiment/flyvis_run.c (docs/solvers.md, "The flyvis application"). */
#ifndef BL_PLAN_FLYVIS_H
#define BL_PLAN_FLYVIS_H

#include <stddef.h>
#include <stdint.h>

#include "plan/plan_op.h"

typedef struct bl_pk_flyvis {
    char *path;        /* the connectome JSON, absolute */
    char *json;        /* its bytes, read once and hashed as read (the run builds from these) */
    size_t json_len;
    char sha256[65];
    int64_t extent, steps;
    double n_syn_fill, dt, edge_speed, edge_start, edge_on, edge_off;
    char objective[32];
    int objective_type, gradients, keep_all;
    double *tau, *bias, *strength; /* resolved: per cell type, per edge type */
    size_t n_types, n_etypes, n_cells, n_edges;
} bl_pk_flyvis;

bl_status bl_pk_op_load_flyvis(const bl_operation *op, const bl_pk_ctx *ctx, const bl_toml_node *root,
                               const char *plan_dir, bl_plan *plan);
void bl_pk_op_free_flyvis(bl_plan *plan);
char *bl_pk_op_render_flyvis(const bl_plan *plan, int pretty, int full);
void bl_pk_op_estimate_flyvis(const bl_plan *plan, bl_plan_estimate_t *out);

#endif
