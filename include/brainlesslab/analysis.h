/* Analyses of a run: firing rates over trials and the seed runtime's
 * propagation statistics. The shortest-path depth they read is declared in
 * connectome.h (bl_shortest_depths), beside the graph it searches. */
#ifndef BRAINLESSLAB_ANALYSIS_H
#define BRAINLESSLAB_ANALYSIS_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-neuron firing rate (Hz) over trials: mean and sample standard deviation
 * (n - 1 in the denominator; 0 for a single trial). counts is [trials][n]. */
BL_API void bl_rates(const int32_t *counts, uint32_t trials, uint64_t n, double duration_s, double *mean,
                     double *sd);

/* Neuron classes named by metadata: "descending" when cell_type (or
 * super_class / cell_class) starts with "DN" or contains "descending";
 * "motor" when it contains "motor". Case-insensitive. */
BL_API int bl_neuron_is_descending(const bl_connectome *c, uint64_t neuron);
BL_API int bl_neuron_is_motor(const bl_connectome *c, uint64_t neuron);

typedef struct bl_propagation {
    uint64_t active_neurons;            /* fired at least once */
    uint64_t downstream_active_neurons; /* active and not stimulated */
    int32_t propagation_depth;          /* deepest shortest-path depth among active neurons */
    uint64_t descending_active_neurons;
    uint64_t motor_active_neurons;
    uint64_t spikes;
} bl_propagation;

/* counts: per-neuron spike counts of one trial (or summed over trials);
 * stimulated: per-neuron flag; depth from bl_shortest_depths. */
BL_API bl_propagation bl_propagation_stats(const bl_connectome *c, const int32_t *counts,
                                           const uint8_t *stimulated, const int32_t *depth);

/* ---- contrasts between two sets of trials (compare) ----
 * Per-trial rates of one neuron on two sides. Welch's two-sample t test
 * with Cohen's d (pooled sample SD) for independent sides; the paired t test
 * with Cohen's d_z (mean difference over the SD of the differences) when
 * trial k of both sides ran on the same input draws. A neuron whose rates
 * (or, paired, whose differences) do not vary has no t statistic: it is
 * reported by its status, with t, df, p and d NaN, and left out of the
 * q-values; so is one with fewer than 2 trials on a side. */
typedef enum bl_contrast_status {
    BL_CONTRAST_TESTED,
    BL_CONTRAST_CONSTANT_EQUAL,   /* no variation, no difference (e.g. silent on both sides) */
    BL_CONTRAST_CONSTANT_DIFFERS, /* no variation, yet the means differ: a difference the t test cannot weigh */
    BL_CONTRAST_TOO_FEW_TRIALS
} bl_contrast_status;
typedef struct bl_contrast {
    double mean_a, mean_b, diff; /* diff = mean_b - mean_a */
    double cohen_d, t, df, p;
    bl_contrast_status status;
} bl_contrast;
BL_API void bl_welch(const double *a, size_t na, const double *b, size_t nb, bl_contrast *out);
BL_API void bl_paired(const double *a, const double *b, size_t n, bl_contrast *out);
/* "tested", "constant_equal", "constant_differs", "too_few_trials". */
BL_API const char *bl_contrast_status_name(bl_contrast_status s);
/* Benjamini-Hochberg adjusted p-values (q); NaN p-values are left out of the
 * count and get NaN. */
BL_API bl_status bl_bh_qvalues(const double *p, size_t n, double *q, bl_error *err);

/* ---- the audit's hierarchy (operation "audit") ----
 * Layers by directed shortest-path depth from a source population:
 *     sensory (depth 0), first_order (1), second_order (2), higher (>= 3),
 *     [central (>= 3 and outside the split population), when one is given,]
 *     unreached (no path from the source).
 * With a split population, "higher" keeps only the depth >= 3 neurons inside
 * it (the seed's higher_visual versus central_brain). */
#define BL_AUDIT_MAX_LAYERS 6

typedef struct bl_audit_hierarchy {
    int n_layers;
    const char *names[BL_AUDIT_MAX_LAYERS];
    uint64_t sizes[BL_AUDIT_MAX_LAYERS];
    /* edges[measure][sign][from][to]: measure 0 = edge count, 1 = summed
     * |synapse count|; sign 0 = excitatory (count > 0), 1 = inhibitory. */
    int64_t edges[2][2][BL_AUDIT_MAX_LAYERS][BL_AUDIT_MAX_LAYERS];
} bl_audit_hierarchy;

/* depth (n) from bl_shortest_depths over `sources`; split: per-neuron flag or
 * NULL; layer (n) receives each neuron's layer index; h the names, sizes and
 * layer-to-layer edge statistics. Whole connectomes only. */
BL_API bl_status bl_audit_layers(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                          const uint8_t *split, int32_t *depth, uint8_t *layer, bl_audit_hierarchy *h,
                          bl_error *err);

/* In- and out-degree (edges) of every neuron (n each). Whole connectomes only. */
BL_API bl_status bl_degrees(const bl_connectome *c, int32_t *in_degree, int32_t *out_degree, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
