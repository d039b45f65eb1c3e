/* The diagnostic ridge probe (docs/reservoir.md, "Probe"): a linear readout of
 * a node's emitted activity fitted offline to say whether a label is
 * decodable. It never controls a task; its accuracy is not a task outcome.
 *
 * Fit on the fit trials: centre and scale each feature (population standard
 * deviation; 1 where it is 0), targets +1 (label 1) / -1 (label 2), intercept =
 * their mean, weights = (S'S + lambda I)^-1 S'(t - intercept) (LU solve, GSL);
 * predict 1 where S w + intercept >= 0, else 2. lambda: the first of the grid
 * (ascending) with the best validation accuracy. */
#ifndef BRAINLESSLAB_PROBE_H
#define BRAINLESSLAB_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_probe_fit {
    double lambda;
    double intercept;
    double validation_accuracy;
    size_t n_features, n_trials;
    double *weights, *centre, *scale; /* [n_features] */
    int *predictions;                 /* [n_trials]: 1 or 2 for every trial */
} bl_probe_fit;

/* X [n][f] row-major, labels [n] (1 or 2); fit / validation: trial indices. */
BL_API bl_status bl_probe_ridge(const double *x, const int *labels, size_t n, size_t f, const uint32_t *fit,
                                size_t n_fit, const uint32_t *validation, size_t n_validation, const double *grid,
                                size_t n_grid, bl_probe_fit *out, bl_error *err);
BL_API void bl_probe_fit_free(bl_probe_fit *fit);
/* A permutation of 0..n-1 from a seed: Fisher-Yates from the end, swap i
 * with floor(uniform(seed, i, 0, domain, 0) (i + 1)). */
BL_API void bl_probe_permutation(uint64_t seed, uint32_t domain, uint32_t *order, size_t n);

#ifdef __cplusplus
}
#endif
#endif
