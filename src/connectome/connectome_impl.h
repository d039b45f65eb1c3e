/* Private layout of bl_connectome, shared by the files of src/connectome/. */
#ifndef BL_CONNECTOME_IMPL_H
#define BL_CONNECTOME_IMPL_H

#include "brainlesslab/connectome.h"

enum { BL_INFO_NAME, BL_INFO_DESCRIPTION, BL_INFO_SOURCE, BL_INFO_CITATION, BL_INFO_LICENCE,
       BL_INFO_SIGN_POLICY, BL_INFO_GENERATOR, BL_INFO_COUNT };

extern const char *const bl_connectome_info_keys[BL_INFO_COUNT];

struct bl_connectome {
    uint64_t n_neurons;
    uint64_t n_edges;
    uint64_t n_synapses;
    int64_t *offsets; /* [n_neurons + 1] */
    int32_t *targets; /* [n_edges] */
    int32_t *counts;  /* [n_edges], signed */

    char **ids;       /* [n_neurons], unique */
    int32_t *id_sorted; /* neuron indices ordered by id, for lookup */

    size_t n_columns;
    char **column_names;
    char ***column_values; /* [n_columns][n_neurons] */

    char *info[BL_INFO_COUNT];
    int synthetic;
};

/* bl_connectome_adopt for a graph the caller has just validated with
 * bl_csr_validate (the loader does, naming its files); it is not checked twice. */
bl_status bl_connectome_adopt_validated(uint64_t n_neurons, uint64_t n_edges, int64_t *offsets,
                                        int32_t *targets, int32_t *counts, bl_connectome **out,
                                        bl_error *err);

#endif
