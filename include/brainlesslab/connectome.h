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

#include "brainlesslab/export.h"
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
BL_API bl_status bl_csr_validate(const char *where, uint64_t n_neurons, uint64_t n_edges,
                                 const int64_t *offsets, const int32_t *targets, const int32_t *counts,
                                 bl_error *err);

/* Build a connectome that takes ownership of three malloc'd arrays (freed on
 * failure too). The graph is validated. Every neuron starts with external id
 * equal to its index and no metadata columns. */
BL_API bl_status bl_connectome_adopt(uint64_t n_neurons, uint64_t n_edges, int64_t *offsets,
                                     int32_t *targets, int32_t *counts, bl_connectome **out,
                                     bl_error *err);
BL_API void bl_connectome_destroy(bl_connectome *c);

/* The CSR invariants, checked in full (O(edges)): offsets from 0 to the stored
 * edges, never decreasing; targets in range (a part's inside its range),
 * ascending and unique per row; counts never 0; the synapse total. 1 when
 * they hold; else 0, and why (when not NULL) names the invariant that broke
 * and where (row, edge, values). Asserted in Debug builds when a network is
 * made; tests call it. */
BL_API int bl_connectome_sane(const bl_connectome *c, bl_error *why);

BL_API uint64_t bl_connectome_n_neurons(const bl_connectome *c);
BL_API uint64_t bl_connectome_n_edges(const bl_connectome *c);
BL_API uint64_t bl_connectome_n_synapses(const bl_connectome *c); /* sum of |count| */
BL_API const int64_t *bl_connectome_offsets(const bl_connectome *c);
BL_API const int32_t *bl_connectome_targets(const bl_connectome *c);
BL_API const int32_t *bl_connectome_counts(const bl_connectome *c); /* NULL: see bl_connectome_counts16 */
/* Optional float edge columns of a connectome directory, one value per
 * stored edge in CSR order ([n_edges] for a whole connectome; a part,
 * bl_connectome_load_part, holds those of its own edges,
 * [bl_connectome_n_stored_edges], in its CSR order), or NULL when the
 * directory has none: weights.npy (a float weight per edge, read by equation
 * models as `weight`) and delays.npy (a delay per edge in milliseconds).
 * docs/connectome-format.md. */
BL_API const double *bl_connectome_edge_weights(const bl_connectome *c);
BL_API const double *bl_connectome_edge_delays_ms(const bl_connectome *c);
/* Set (copy) or, with values NULL, remove an edge column of a whole
 * connectome: name "weights" (finite, |w| <= 1e12) or "delays" (ms, in
 * (0, 1e6]); [n_edges] values in CSR order, checked (a message names the
 * first bad edge). bl_connectome_save writes them as weights.npy, delays.npy. */
BL_API bl_status bl_connectome_set_edge_column(bl_connectome *c, const char *name, const double *values, bl_error *err);

/* Neuron table. External ids are strings (FlyWire root ids, CATMAID skids and
 * C. elegans names all fit); they must be unique and non-empty. */
BL_API bl_status bl_connectome_set_external_ids(bl_connectome *c, const char *const *ids, bl_error *err);
BL_API const char *bl_connectome_external_id(const bl_connectome *c, uint64_t neuron);
/* Index of an external id; BL_ERR_INVALID naming the id when absent. */
BL_API bl_status bl_connectome_find(const bl_connectome *c, const char *external_id, int32_t *neuron,
                                    bl_error *err);

/* Metadata columns (strings; "" = unknown). Names are unique, not "index" or
 * "external_id", and made of [a-z0-9_]. Values are copied. */
BL_API bl_status bl_connectome_add_column(bl_connectome *c, const char *name,
                                          const char *const *values, bl_error *err);
BL_API size_t bl_connectome_n_columns(const bl_connectome *c);
BL_API const char *bl_connectome_column_name(const bl_connectome *c, size_t column);
/* Column index by name, or -1 when absent. */
BL_API int bl_connectome_column(const bl_connectome *c, const char *name);
BL_API const char *bl_connectome_value(const bl_connectome *c, size_t column, uint64_t neuron);

/* Descriptive manifest fields (copied; NULL clears). Keys: name, description,
 * source, citation, licence, sign_policy, generator. */
BL_API bl_status bl_connectome_set_info(bl_connectome *c, const char *key, const char *value,
                                        bl_error *err);
BL_API const char *bl_connectome_info(const bl_connectome *c, const char *key); /* NULL if unset */
BL_API void bl_connectome_set_synthetic(bl_connectome *c, int synthetic);
BL_API int bl_connectome_synthetic(const bl_connectome *c);

/* Write a connectome directory. The directory must not exist yet (or be empty);
 * files are written, hashed and listed in manifest.json last. */
BL_API bl_status bl_connectome_save(const bl_connectome *c, const char *dir, bl_error *err);

/* Load and fully validate a connectome directory: manifest format and version,
 * every listed file's size and SHA-256, .npy dtypes and shapes, the CSR graph,
 * and neurons.csv (index column 0..N-1 in order, unique ids, field counts). */
BL_API bl_status bl_connectome_load(const char *dir, bl_connectome **out, bl_error *err);

/* ---- parts: one rank's share of a graph (MPI jobs) ----
 *
 * A job of `parts` ranks gives each rank one contiguous range of neurons,
 * balanced by work (bl_split_by_work). A rank only ever delivers spikes INTO
 * its own neurons, so it needs only the edges whose target it owns: loading a
 * part keeps every row (every presynaptic neuron) but only its targets inside
 * the part's range, still ascending. The graph's memory is then divided by the
 * number of ranks, while the neuron table stays whole. */

/* Split neurons [lo, hi) into `parts` contiguous ranges of about equal work,
 * one unit per neuron plus one per incoming edge (in_degree is indexed by
 * neuron). Deterministic: bounds[0] = lo, bounds[parts] = hi, non-decreasing. */
BL_API void bl_split_by_work(const int32_t *in_degree, int32_t lo, int32_t hi, int parts, int32_t *bounds);

/* Load part `part` (0-based) of `parts` of a connectome directory. Everything
 * bl_connectome_load checks is checked (manifest, sizes, SHA-256 of every file,
 * dtypes, shapes, the whole CSR graph, the neuron table, every value of the
 * edge columns), but targets.npy, counts.npy and the edge columns are
 * streamed in chunks so the whole graph is never in memory.
 * parts == 1 is bl_connectome_load. */
BL_API bl_status bl_connectome_load_part(const char *dir, int part, int parts, bl_connectome **out,
                                         bl_error *err);

/* The files a directory load read (manifest.json, offsets.npy, targets.npy,
 * counts.npy, neurons.csv: k = 0..4), each hashed in the same pass that read
 * it, so a record naming these digests names exactly the bytes simulated.
 * Returns the SHA-256 (64 hex digits) and sets *name and *bytes, or NULL for
 * k out of range or a connectome not loaded from a directory. */
BL_API const char *bl_connectome_source(const bl_connectome *c, size_t k, const char **name,
                                 uint64_t *bytes);

/* 1 for a whole connectome. For a part, n_edges and n_synapses above stay the
 * whole graph's; offsets/targets/counts hold the stored edges only. */
BL_API int bl_connectome_parts(const bl_connectome *c);
BL_API int bl_connectome_part(const bl_connectome *c);
/* [parts + 1] range bounds of every part (NULL for a whole connectome). */
BL_API const int32_t *bl_connectome_part_bounds(const bl_connectome *c);
/* In-degree of every neuron in the whole graph (NULL for a whole connectome,
 * whose targets give it). */
BL_API const int32_t *bl_connectome_in_degree(const bl_connectome *c);
/* A part stores its synapse counts as int16 when every one fits (halving
 * their memory): then bl_connectome_counts is NULL and this is not. NULL for
 * a whole connectome, and for a part with a count beyond int16. */
BL_API const int16_t *bl_connectome_counts16(const bl_connectome *c);
/* Edges held in memory: offsets[n_neurons] (n_edges for a whole connectome). */
BL_API uint64_t bl_connectome_n_stored_edges(const bl_connectome *c);

/* Directed shortest-path depth (edges) from any source; -1 when unreachable.
 * depth has n_neurons entries. */
BL_API bl_status bl_shortest_depths(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                                    int32_t *depth, bl_error *err);

/* The same depths when the connectome is split into parts, each rank of an
 * MPI job holding the edges into its own neurons (bl_connectome_load_part).
 * The search goes level by level; after each level `merge` must replace
 * depth[0..n) by the element-wise maximum over every part (MPI_Allreduce with
 * MPI_MAX), so every part ends with the whole graph's depths. Collective:
 * every part calls it. Costs one pass over the neurons per level. */
typedef bl_status (*bl_depth_merge_fn)(int32_t *depth, uint64_t n, void *user, bl_error *err);
BL_API bl_status bl_shortest_depths_merged(const bl_connectome *c, const int32_t *sources, size_t n_sources,
                                           int32_t *depth, bl_depth_merge_fn merge, void *user, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
