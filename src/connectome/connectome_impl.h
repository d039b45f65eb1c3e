/* Private layout of bl_connectome, shared by the files of src/connectome/. */
#ifndef BL_CONNECTOME_IMPL_H
#define BL_CONNECTOME_IMPL_H

#include "brainlesslab/connectome.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/npy.h"

enum { BL_INFO_NAME, BL_INFO_DESCRIPTION, BL_INFO_SOURCE, BL_INFO_CITATION, BL_INFO_LICENCE,
       BL_INFO_SIGN_POLICY, BL_INFO_GENERATOR, BL_INFO_COUNT };

extern const char *const bl_connectome_info_keys[BL_INFO_COUNT];

/* The files of a connectome directory, in load order. */
enum { BL_SRC_MANIFEST, BL_SRC_OFFSETS, BL_SRC_TARGETS, BL_SRC_COUNTS, BL_SRC_NEURONS, BL_SRC_COUNT };
extern const char *const bl_src_names[BL_SRC_COUNT];

/* A file's size and SHA-256: what the manifest promises, or what was read. */
typedef struct bl_src_digest {
    uint64_t bytes;
    char sha256[BL_SHA256_HEX_LEN + 1];
} bl_src_digest;

/* A .npy file read once, front to back, hashing every byte as it is read:
 * open checks the size against WANT before reading anything, reads and parses
 * the header; read hands out elements (copied into the caller's buffer and
 * hashed from there); close requires every byte consumed and the hash equal
 * to WANT's. What was parsed is therefore exactly what the manifest vouches
 * for, even if the file is replaced or rewritten while it is read. */
typedef struct bl_npy_stream {
    int fd;
    const char *path;
    bl_sha256 *hash;
    uint64_t size, pos; /* pos: bytes of the file consumed */
    bl_npy_header header;
    unsigned char *prefix; /* the first bytes, read with the header */
    size_t prefix_len;
} bl_npy_stream;

bl_status bl_npy_stream_open(const char *path, const bl_src_digest *want, bl_dtype dtype,
                             bl_npy_stream *s, bl_error *err);
bl_status bl_npy_stream_read(bl_npy_stream *s, void *buf, uint64_t n_elements, bl_error *err);
/* Frees S whatever happens; OUT (may be NULL) gets the digest read. */
bl_status bl_npy_stream_close(bl_npy_stream *s, const bl_src_digest *want, bl_src_digest *out,
                              bl_error *err);

/* bl_csr_validate's checks made piece by piece as a directory load reads
 * targets.npy and counts.npy (connectome_check.c): bad is set at any fault,
 * and the loader then runs bl_csr_validate itself for the message naming the
 * first one. A valid graph (the usual case) is thus checked once, in the
 * reading threads, each piece while it is still in the core's cache. */
typedef struct bl_target_check {
    const int64_t *off; /* offsets.npy, already valid (bl_offsets_validate) */
    uint64_t n;         /* neurons */
    uint64_t row;       /* the row of the next element */
    int bad;
} bl_target_check;
/* Elements [first, first + count) of targets (the whole array so far):
 * each in 0..n-1, and above the previous one within its row. */
void bl_check_targets_piece(bl_target_check *tc, const int32_t *targets, uint64_t first, uint64_t count);

typedef struct bl_count_check {
    uint64_t synapses; /* the magnitudes summed so far */
    int bad;
} bl_count_check;
/* count counts: none 0 or INT32_MIN; their magnitudes summed. */
void bl_check_counts_piece(bl_count_check *cc, const int32_t *counts, uint64_t count);

struct bl_connectome {
    uint64_t n_neurons;
    uint64_t n_edges;
    uint64_t n_synapses;
    int64_t *offsets; /* [n_neurons + 1] */
    int32_t *targets; /* [n_edges] */
    int32_t *counts;  /* [n_edges], signed */

    char **ids;       /* [n_neurons], unique; point into id_arena */
    char *id_arena;
    int32_t *id_sorted; /* neuron indices ordered by id, for lookup */

    size_t n_columns;
    char **column_names;
    char ***column_values; /* [n_columns][n_neurons]; equal values share one copy in column_arenas[j] */
    char **column_arenas;

    char *info[BL_INFO_COUNT];
    int synthetic;

    /* A part (connectome_part.c): the arrays hold only the edges into
     * [part_bounds[part], part_bounds[part + 1]); n_edges and n_synapses are
     * the whole graph's. A whole connectome has parts == 1 and NULL arrays. */
    uint64_t n_stored_edges;
    int part, parts;
    int32_t *part_bounds; /* [parts + 1] */
    int32_t *in_degree;   /* [n_neurons], whole graph */
    int16_t *counts16;    /* a part's counts when all fit in int16 (counts is then NULL) */

    /* What a directory load read, hashed as it was read (BL_SRC_*): the
     * record names these bytes, never a second reading of the files. */
    int has_sources;
    bl_src_digest sources[BL_SRC_COUNT];

    /* Optional float edge columns (connectome_dir.c), one value per stored
     * edge (n_stored_edges: a part keeps those of its own edges, read with
     * them by connectome_part.c), or NULL: weights.npy (any finite value,
     * |w| <= 1e12) and delays.npy (milliseconds, finite, in (0, 1e6]). */
    double *edge_weight, *edge_delay_ms;
};

/* The bounds of an edge column's values: they keep every later product
 * finite (a weight times a count of at most 2^31, a delay in steps of the
 * smallest dt) and refuse what is surely a unit mistake; NaN and infinities
 * fail the same comparisons. */
#define BL_EDGE_WEIGHT_MAX 1e12
#define BL_EDGE_DELAY_MAX_MS 1e6
static inline int bl_edge_value_ok(int delays, double x)
{
    return delays ? (x > 0 && x <= BL_EDGE_DELAY_MAX_MS) : (x >= -BL_EDGE_WEIGHT_MAX && x <= BL_EDGE_WEIGHT_MAX);
}
/* The refusal of value x of edge e (its index in the whole graph) of the
 * column file at path (delays: delays.npy, else weights.npy). */
bl_status bl_edge_value_fail(bl_error *err, const char *path, int delays, uint64_t e, double x);

/* The manifest's entries for the optional edge columns, in the order of
 * edge_weight, edge_delay_ms. */
extern const char *const bl_edge_column_files[2];

/* Read the optional edge columns a manifest lists (files."weights.npy",
 * files."delays.npy") into c, checking size, hash, dtype and values (a
 * message names the file and the first bad edge index). */
struct cJSON;
bl_status bl_connectome_read_edge_columns(bl_connectome *c, const char *dir, const char *mpath,
                                          const struct cJSON *files, bl_error *err);

/* bl_connectome_adopt for a graph the caller has just validated with
 * bl_csr_validate (the loader does, naming its files); it is not checked twice.
 * counts may be NULL only for a part, whose loader stores them as int16.
 * synapses: the sum of the counts' magnitudes when the caller has it (the
 * loaders sum while they read), NULL to sum here. default_ids 0: no external ids at all, for a loader that sets them next
 * (bl_connectome_set_external_ids) from neurons.csv: writing and sorting
 * default ids only to free them was a measurable part of every load. */
bl_status bl_connectome_adopt_validated(uint64_t n_neurons, uint64_t n_edges, int64_t *offsets,
                                        int32_t *targets, int32_t *counts, const uint64_t *synapses,
                                        int default_ids, bl_connectome **out, bl_error *err);

/* offsets.npy's part of bl_csr_validate: starts at 0, never decreases, ends at e. */
bl_status bl_offsets_validate(const char *where, uint64_t n, uint64_t e, const int64_t *offsets, bl_error *err);

/* The graph of part `part` of `parts` from a directory whose manifest gave
 * n neurons and e edges and whose files were checked against it: read
 * offsets.npy whole, stream targets.npy (validating rows, counting in-degrees)
 * to split the neurons, then stream targets.npy and counts.npy again keeping
 * the part's edges, with the edge columns the manifest lists (columns[k]
 * not NULL: weights.npy, delays.npy, each value of the whole file checked
 * and every byte hashed as read, the part's values kept in its edge order).
 * Returns a connectome without external ids (the caller sets them from
 * neurons.csv) and no metadata columns. */
bl_status bl_connectome_read_part(const char *dir, uint64_t n, uint64_t e, int part, int parts,
                                  const bl_src_digest *want, const bl_src_digest *const columns[2],
                                  bl_connectome **out, bl_error *err);

#endif
