/* The flyvis application: the Drosophila optic-lobe connectome of
 * Lappalainen et al. 2024 (flyvis, MIT) tiled on its hexagonal columns, run
 * as flyvis's graded-potential rate model, with the gradient of a response
 * objective by the discrete adjoint (docs/solvers.md, "The flyvis
 * application").
 *
 *   tau_t dV_i/dt = -V_i + b_t + sum_e w_e relu(V_src(e)) + x_i(t)
 *   w_e = sign_e * n_syn_e * strength_{edge type of e}
 *
 * t is the cell type of cell i (65 types), x_i(t) a moving edge on the
 * photoreceptors (R1-R8). Explicit Euler with a fixed step dt, from V = b.
 * The sum over a cell's inputs runs in flyvis's edge order (edge type, then
 * column offset, then source cell), which a PyTorch index_add_ on the CPU
 * also follows, so the forward trajectory is bit-identical to that oracle. */
#ifndef BRAINLESSLAB_FLYVIS_H
#define BRAINLESSLAB_FLYVIS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_flyvis bl_flyvis;

/* Build the tiled connectome from a flyvis JSON connectome (the shipped
 * data/drosophila-optic-lobe-flyvis/fib25-fib19_v2.2.json): every cell type
 * on the hexagonal columns within `extent` (flyvis's default 15: 721 columns,
 * 45,669 cells), every edge type's offsets filled inside their convex hull
 * with n_syn_fill synapses (flyvis's default 1; 0 = no filling), then each
 * source cell connected to the target cell at its column plus the offset
 * when that column exists (1,513,231 edges at extent 15). */
BL_API bl_status bl_flyvis_create(const char *json_path, int extent, double n_syn_fill, bl_flyvis **out,
                                  bl_error *err);
/* The same from the file's bytes (len of them; path only names it in messages). */
BL_API bl_status bl_flyvis_create_from_json(const char *text, size_t len, const char *path, int extent,
                                            double n_syn_fill, bl_flyvis **out, bl_error *err);
BL_API void bl_flyvis_destroy(bl_flyvis *f);

BL_API size_t bl_flyvis_n_cells(const bl_flyvis *f);
BL_API size_t bl_flyvis_n_edges(const bl_flyvis *f);
BL_API size_t bl_flyvis_n_types(const bl_flyvis *f);
BL_API size_t bl_flyvis_n_edge_types(const bl_flyvis *f);
BL_API const char *bl_flyvis_type_name(const bl_flyvis *f, size_t type);
/* The type index of a name, or -1. */
BL_API int bl_flyvis_type_index(const bl_flyvis *f, const char *name);
/* Edge type k: its source and target cell types and its sign. */
BL_API void bl_flyvis_edge_type(const bl_flyvis *f, size_t k, size_t *src_type, size_t *tar_type, int *sign);
/* Cells in flyvis's order (type by type, u then v ascending): type, u, v. */
BL_API void bl_flyvis_cells(const bl_flyvis *f, int32_t *type, int32_t *u, int32_t *v);
/* Edges in flyvis's order: source and target cell, edge type, n_syn. */
BL_API void bl_flyvis_edges(const bl_flyvis *f, int64_t *src, int64_t *tar, int32_t *edge_type, double *n_syn);

/* flyvis's initial parameter values: tau = 0.05 s and b = 0.5 per cell type
 * (the mean of flyvis's random resting-potential draw), strength = 0.01 /
 * (the mean n_syn of the edge type's tiled edges). */
BL_API void bl_flyvis_default_params(const bl_flyvis *f, double *tau, double *bias, double *strength);

typedef struct bl_flyvis_options {
    double dt;            /* Euler step, s (default 0.005) */
    size_t steps;         /* K steps: V_0 .. V_K (default 100) */
    /* The moving edge: column (u, v) sits at p = u + v/2 (column spacings);
     * the photoreceptors there see edge_on while p <= edge_start +
     * edge_speed * t, else edge_off; t = k dt at the start of step k. */
    double edge_speed;    /* columns / s (default 50) */
    double edge_start;    /* default -extent */
    double edge_on, edge_off; /* default 1 and 0 */
    int objective_type;   /* J = mean over k = 1..K and the type's cells of V^2 */
} bl_flyvis_options;
BL_API void bl_flyvis_options_default(const bl_flyvis *f, bl_flyvis_options *o);

/* Run K steps. V: (K+1) x n_cells (row k = V_k), or NULL (then held
 * inside for the adjoint and freed); J: the objective. Gradients (any may be NULL: no
 * adjoint run when all three are): dJ/dtau and dJ/db per cell type, dJ/dstrength
 * per edge type, the exact derivative of the computed trajectory (discrete
 * adjoint of the Euler map). keep (n_keep cell indices, may be 0): their
 * trajectories into kept ((K+1) x n_keep). tau must be >= dt (flyvis clamps
 * tau below dt; this model refuses it instead, so its derivative is smooth). */
BL_API bl_status bl_flyvis_run(const bl_flyvis *f, const bl_flyvis_options *o, const double *tau,
                               const double *bias, const double *strength, double *V, size_t n_keep,
                               const size_t *keep, double *kept, double *J, double *g_tau, double *g_bias,
                               double *g_strength, bl_error *err);

#ifdef __cplusplus
}
#endif

#endif
