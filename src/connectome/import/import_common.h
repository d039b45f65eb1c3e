/* Helpers shared by the connectome importers and the sign policy (private to
 * src/connectome). */
#ifndef BL_CONNECTOME_IMPORT_IMPORT_COMMON_H
#define BL_CONNECTOME_IMPORT_IMPORT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/error.h"
#include "brainlesslab/import.h"
#include "brainlesslab/sign_policy.h"

/* Copy src into dst (size >= 4) for quoting in a one-line message: control
 * characters become '?', and long text is cut with "..." so that a hostile
 * field can neither break the line nor fill the message. */
void bl_import_printable(char *dst, size_t size, const char *src);

/* dir + "/" + name, malloc'd; NULL on overflow or no memory. */
char *bl_import_path(const char *dir, const char *name);

/* strdup that C11 does not have. */
char *bl_import_strdup(const char *s);

/* Open a CSV file and read its header row; then find each of the n required
 * columns (index[i] for names[i]). Fails naming the file when it is empty or
 * a column is missing. On success *nfields is the header's field count. */
bl_status bl_import_open_table(const char *path, const char *const *names, size_t n,
                               size_t *index, size_t *nfields, bl_csv **out, bl_error *err);

/* Require field i of the current row to be a non-empty name without blanks
 * at either end (so that "AVAL " and "AVAL" cannot silently be two neurons). */
bl_status bl_import_field_name(const bl_csv *csv, size_t i, const char *column, bl_error *err);

/* Require field i of the current row to hold no control characters (a quoted
 * field may span lines; a neuron table value may not). Empty is fine. */
bl_status bl_import_field_text(const bl_csv *csv, size_t i, const char *column, bl_error *err);

/* One imported edge; `line` is its source line (or table row), for duplicate
 * messages. 16 bytes: tens of millions of edges are held while sorting. */
typedef struct bl_import_edge {
    int32_t pre;
    int32_t post;
    int32_t count; /* unsigned synapse count, >= 1 */
    uint32_t line;
} bl_import_edge;

/* Sort edges by (pre, post), refuse duplicate pairs (naming both source
 * lines of `path` and the two external ids), and build CSR arrays whose counts
 * carry the sign of the presynaptic neuron (signs[pre] is +1 or -1). The
 * arrays are malloc'd for bl_connectome_adopt. Edges are reordered in place. */
bl_status bl_import_build_csr(const char *path, bl_import_edge *edges, uint64_t n_edges,
                              uint64_t n_neurons, const int8_t *signs,
                              const char *const *external_ids, int64_t **offsets,
                              int32_t **targets, int32_t **counts, bl_error *err);

/* Set the `source` info: a fixed description followed by the SHA-256 of each
 * input file, so a manifest pins the exact bytes it was built from. */
/* Every importer's run goes through bl_import_ledgered: the input ledger
 * (core/file.h) is open while it reads, so bl_import_set_source names each
 * input by the digest of the bytes parsed. BL_IMPORTER_RUN(fn) defines
 * fn_ledgered, the function an importer's table row points at. */
typedef bl_status (*bl_import_run_fn)(const bl_import_args *args, bl_connectome **out, char **report, bl_error *err);
bl_status bl_import_ledgered(bl_import_run_fn fn, const bl_import_args *args, bl_connectome **out, char **report,
                             bl_error *err);
#define BL_IMPORTER_RUN(fn)                                                                                      \
    static bl_status fn##_ledgered(const bl_import_args *args, bl_connectome **out, char **report, bl_error *err) \
    {                                                                                                            \
        return bl_import_ledgered(fn, args, out, report, err);                                                  \
    }

bl_status bl_import_set_source(bl_connectome *c, const char *description,
                               const char *const *paths, const char *const *labels, size_t n,
                               bl_error *err);

/* What an importer says about its data set in the manifest. The files are
 * hashed into `source`; the sign policy is described as "<sign_key>: <policy>". */
typedef struct bl_import_info {
    const char *name, *description, *source, *citation, *licence, *generator;
    const char *sign_key;              /* what the policy reads: "transmitter", "celltype" */
    const char *const *paths, *const *labels; /* the raw files and their own names */
    size_t n_files;
} bl_import_info;

/* The end every importer shares: CSR arrays from the edges (bl_import_build_csr),
 * the connectome, its external ids, n_columns metadata columns and its info.
 * Edges are reordered in place. */
bl_status bl_import_assemble(const char *edges_path, bl_import_edge *edges, uint64_t n_edges, uint64_t n_neurons,
                             const int8_t *signs, const char *const *ids, size_t n_columns,
                             const char *const *column_names, const char **const *columns,
                             const bl_sign_policy *policy, const bl_import_info *info, bl_connectome **out,
                             bl_error *err);

/* A built-in policy (make) with an optional key,sign override file on top. */
bl_status bl_import_policy(bl_status (*make)(bl_sign_policy **, bl_error *), const char *overrides,
                           bl_sign_policy **out, bl_error *err);

/* One line of a built-in policy: a key and its sign. */
typedef struct bl_import_sign_rule {
    const char *key;
    int sign;
} bl_import_sign_rule;

/* A built-in policy from its rules: default_sign for a key not listed (0: an
 * error), +1 for a neuron with no key (unknown). *out is NULL on failure. */
bl_status bl_import_policy_rules(int default_sign, const bl_import_sign_rule *rules, size_t n, bl_sign_policy **out,
                                 bl_error *err);

/* The run of an importer of a data set shipped in data/: --data DIR (default
 * default_dir) and --sign-policy FILE over the built-in policy make. */
bl_status bl_import_run_shipped(const bl_import_args *args, const char *default_dir,
                                bl_status (*make)(bl_sign_policy **, bl_error *),
                                bl_status (*import)(const char *, const bl_sign_policy *, bl_connectome **, bl_error *),
                                bl_connectome **out, bl_error *err);

/* The rows of the importer table (src/connectome/import/importers.c). */
extern const bl_importer bl_importer_larva, bl_importer_celegans, bl_importer_flywire, bl_importer_flywire_codex,
    bl_importer_malecns, bl_importer_neuprint, bl_importer_phase4c, bl_importer_edges;

#endif
