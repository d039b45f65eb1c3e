/* Connectomes: a directed graph in CSR form plus a neuron table.
 *
 * On disk a connectome is a directory (docs/connectome-format.md):
 *   offsets.npy   int64 [N+1]  row offsets, offsets[0] = 0, non-decreasing, offsets[N] = E
 *   targets.npy   int32 [E]    postsynaptic neuron of each edge, ascending and unique per row
 *   counts.npy    int32 [E]    signed synapse count (sign of the presynaptic neuron), never 0
 *   neurons.csv                index, external_id, then metadata columns (cell_type, ...)
 *   manifest.json              format, name, source, licence, counts, sign policy, and the
 *                              size and SHA-256 of every file above
 * Neurons are 0..N-1 in file order; edges of neuron i are offsets[i]..offsets[i+1]-1. */
#ifndef BRAINLESSLAB_CONNECTOME_H
#define BRAINLESSLAB_CONNECTOME_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_CONNECTOME_FORMAT "brainlesslab-connectome"
#define BL_CONNECTOME_FORMAT_VERSION 1
/* Neuron indices are int32; keep one bit of headroom. */
#define BL_MAX_NEURONS ((uint64_t)INT32_MAX)

typedef struct bl_connectome bl_connectome;

/* Check a CSR graph; `where` prefixes messages (usually the directory). Names the
 * file (offsets.npy, targets.npy, counts.npy) and the index of the first fault. */
bl_status bl_csr_validate(const char *where, uint64_t n_neurons, uint64_t n_edges,
                          const int64_t *offsets, const int32_t *targets, const int32_t *counts,
                          bl_error *err);

/* Build a connectome that takes ownership of three malloc'd arrays (freed on
 * failure too). The graph is validated. Every neuron starts with external id
 * equal to its index and no metadata columns. */
bl_status bl_connectome_adopt(uint64_t n_neurons, uint64_t n_edges, int64_t *offsets,
                              int32_t *targets, int32_t *counts, bl_connectome **out,
                              bl_error *err);
void bl_connectome_destroy(bl_connectome *c);

uint64_t bl_connectome_n_neurons(const bl_connectome *c);
uint64_t bl_connectome_n_edges(const bl_connectome *c);
uint64_t bl_connectome_n_synapses(const bl_connectome *c); /* sum of |count| */
const int64_t *bl_connectome_offsets(const bl_connectome *c);
const int32_t *bl_connectome_targets(const bl_connectome *c);
const int32_t *bl_connectome_counts(const bl_connectome *c);

/* Neuron table. External ids are strings (FlyWire root ids, CATMAID skids and
 * C. elegans names all fit); they must be unique and non-empty. */
bl_status bl_connectome_set_external_ids(bl_connectome *c, const char *const *ids, bl_error *err);
const char *bl_connectome_external_id(const bl_connectome *c, uint64_t neuron);
/* Index of an external id; BL_ERR_INVALID naming the id when absent. */
bl_status bl_connectome_find(const bl_connectome *c, const char *external_id, int32_t *neuron,
                             bl_error *err);

/* Metadata columns (strings; "" = unknown). Names are unique, not "index" or
 * "external_id", and made of [a-z0-9_]. Values are copied. */
bl_status bl_connectome_add_column(bl_connectome *c, const char *name,
                                   const char *const *values, bl_error *err);
size_t bl_connectome_n_columns(const bl_connectome *c);
const char *bl_connectome_column_name(const bl_connectome *c, size_t column);
/* Column index by name, or -1 when absent. */
int bl_connectome_column(const bl_connectome *c, const char *name);
const char *bl_connectome_value(const bl_connectome *c, size_t column, uint64_t neuron);

/* Descriptive manifest fields (copied; NULL clears). Keys: name, description,
 * source, citation, licence, sign_policy, generator. */
bl_status bl_connectome_set_info(bl_connectome *c, const char *key, const char *value,
                                 bl_error *err);
const char *bl_connectome_info(const bl_connectome *c, const char *key); /* NULL if unset */
void bl_connectome_set_synthetic(bl_connectome *c, int synthetic);
int bl_connectome_synthetic(const bl_connectome *c);

/* Write a connectome directory. The directory must not exist yet (or be empty);
 * files are written, hashed and listed in manifest.json last. */
bl_status bl_connectome_save(const bl_connectome *c, const char *dir, bl_error *err);

/* Load and fully validate a connectome directory: manifest format and version,
 * every listed file's size and SHA-256, .npy dtypes and shapes, the CSR graph,
 * and neurons.csv (index column 0..N-1 in order, unique ids, field counts). */
bl_status bl_connectome_load(const char *dir, bl_connectome **out, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
