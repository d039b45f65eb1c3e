/* Per-edge state of an equation model in a connectome run (src/models/eq_row.c):
 * delays in steps, per-edge (synaptic) variables with their last update
 * time, and the incoming edges of each neuron for on_post. docs/models.md
 * "Synapses". Reference backend only. */
#ifndef BL_MODELS_EQ_EDGES_H
#define BL_MODELS_EQ_EDGES_H

#include <stdint.h>

#include "engine/network_impl.h"
#include "models/lang/eq_impl.h"

typedef struct eq_edges {
    uint64_t n_edges;
    const bl_eq_model *m;
    int32_t *delay;        /* [E] steps, per edge (delay = "connectome"), else NULL */
    int64_t dmin, dmax;    /* smallest and largest delay in steps */
    double *val;           /* [syn.n][E] per-edge variables */
    double *lastupdate;    /* [E] seconds */
    int64_t *in_off;       /* [N + 1]: incoming edges of each neuron (on_post) */
    int64_t *in_edge;      /* [E], ascending edge index per target */
    const double *wcol;    /* the connectome's weights.npy, or NULL */
} eq_edges;

/* Build what the network needs (called once, before the first trial): the
 * delays (Brian2's rounding, (int)(delay/dt + 0.5), a tie up; a delay below
 * one step is refused naming the edge), the per-edge arrays, the incoming
 * index. A model that reads `weight` needs the connectome's weights.npy. */
bl_status eq_edges_create(const bl_network *net, const bl_eq_model *m, eq_edges **out, bl_error *err);
void eq_edges_destroy(eq_edges *x);
/* The same checks of the connectome's columns (weights.npy when read,
 * delays.npy for delay = "connectome") without building anything: the plan
 * makes them when it loads the connectome, so `check` refuses such a plan
 * and a run stops before it makes a record. */
bl_status eq_edges_check_connectome(const bl_connectome *c, const bl_eq_model *m, bl_error *err);

/* A trial's starting per-edge values: w from the weight expression of the
 * edge's count, sign and weight, the other variables from their starting
 * value, lastupdate 0 (Brian2's). r is a register file of the model. */
void eq_edges_reset(eq_edges *x, const bl_network *net, double *r);

/* The weight expression of an edge (count, sign from the signed count; the
 * weight column when there is one) in register file r. */
double eq_edges_weight(const eq_edges *x, int32_t signed_count, int64_t e, double *r);

/* Before a pathway's statements on edge e at time t (r holds the target's
 * variables): the edge's variables into r, the event-driven ones advanced
 * to t by Brian2's generated expression. After them: back, lastupdate = t. */
void eq_edges_load(const eq_edges *x, int64_t e, double t, double *r);
void eq_edges_store(eq_edges *x, int64_t e, double t, const double *r);

#endif
