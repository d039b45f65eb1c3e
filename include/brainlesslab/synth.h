/* Seeded synthetic connectomes with FlyWire-like statistics (defaults: 138,639
 * neurons, ~15.1M edges, heavy-tailed in- and out-degrees, synapse counts
 * 1..2,405 with mean ~3.6, 70% excitatory sources). Labelled synthetic in the
 * manifest. Every draw comes from a Philox stream named by (seed, neuron,
 * purpose, index), so the graph is a pure function of the parameters. */
#ifndef BRAINLESSLAB_SYNTH_H
#define BRAINLESSLAB_SYNTH_H

#include "brainlesslab/export.h"
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bl_synth_params {
    uint64_t n_neurons;          /* 138639 */
    double mean_out_degree;      /* 108.9: FlyWire's 15,091,983 / 138,639 */
    double out_degree_sigma;     /* lognormal sigma of out-degree: 1.0 */
    double in_weight_sigma;      /* lognormal sigma of target attractiveness: 1.0 */
    double count_alpha;          /* P(count >= k) = k^-alpha: 1.3 (mean ~3.6) */
    int32_t max_count;           /* 2405 */
    double excitatory_fraction;  /* 0.7 */
    double sensory_fraction;     /* 0.02: neurons labelled cell_type "sensory" */
    uint64_t seed;               /* 1 */
} bl_synth_params;

BL_API void bl_synth_defaults(bl_synth_params *p);
BL_API bl_status bl_synth_generate(const bl_synth_params *p, bl_connectome **out, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
