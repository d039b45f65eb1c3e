/* What the table-based importers (flywire, flywire-codex, malecns, neuprint,
 * phase4c, edges) share: an id map, an edge list that sorts and sums, a
 * report of what was dropped or merged, neuron metadata columns from table
 * columns, and the fly transmitter sign policy. Private to the importers. */
#ifndef BL_CONNECTOME_IMPORT_KIT_H
#define BL_CONNECTOME_IMPORT_KIT_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/table.h"
#include "connectome/import/import_common.h"

/* ---- report: one line per fact, in the order found (deterministic) ---- */
typedef struct bl_report {
    char *text;
    size_t len, cap;
} bl_report;
void bl_report_add(bl_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void bl_report_free(bl_report *r);

/* ---- int64 id -> neuron index (open addressing) ---- */
typedef struct bl_idmap bl_idmap;
bl_status bl_idmap_create(uint64_t n, bl_idmap **out, bl_error *err);
void bl_idmap_destroy(bl_idmap *m);
/* Insert key -> v; returns the value already there (key not replaced) or -1 when new. */
int32_t bl_idmap_put(bl_idmap *m, int64_t key, int32_t v);
int32_t bl_idmap_get(const bl_idmap *m, int64_t key); /* -1 when absent */

/* ---- edges ---- */
typedef struct bl_edge_list {
    bl_import_edge *e;
    uint64_t n, cap;
} bl_edge_list;
bl_status bl_edge_list_push(bl_edge_list *l, int32_t pre, int32_t post, int32_t count, uint64_t row, bl_error *err);
void bl_edge_list_free(bl_edge_list *l);
/* Sort by (pre, post, row) (a radix sort: millions of edges in a second). */
bl_status bl_edge_list_sort(bl_edge_list *l, bl_error *err);
/* Sort, then sum the counts of rows with the same (pre, post) into one edge
 * (the first row's number kept). *merged = rows folded into another. A sum
 * beyond INT32_MAX is an error naming the pair's first row of path. */
bl_status bl_edge_list_sum(bl_edge_list *l, const char *path, uint64_t *merged, bl_error *err);

/* ---- tables ---- */
/* Open path and read the named columns whole (want as in bl_table_next). */
bl_status bl_import_read(const char *path, const char *const *names, const bl_col_type *want, size_t n,
                         bl_column *out, bl_error *err);
/* Does the table at path have a column called name? (opens it; 0 on any error) */
int bl_import_has_column(const char *path, const char *name);
/* Row r of a column as text (malloc'd): strings as they are, integers in
 * decimal, doubles shortest round-trip ("%.17g"), bools true/false, nulls "". */
char *bl_import_cell(const bl_column *c, uint64_t r);
/* Copy of row r of a string column (NUL-terminated, malloc'd; "" for null). */
char *bl_import_text(const bl_column *c, uint64_t r);
/* A column name made fit for a connectome metadata column ([a-z0-9_]). */
void bl_import_column_name(const char *src, char *dst, size_t size);

/* A --min-synapses style option: a whole number in 1..INT32_MAX (NULL text: 1). */
bl_status bl_import_parse_count(const char *opt, const char *text, int64_t *out, bl_error *err);
/* Column col of the table at path as n texts ("" for nulls), malloc'd. */
bl_status bl_import_text_column(const char *path, const char *col, uint64_t n, char ***out, bl_error *err);
/* The first of the candidate column names the table at path has (NULL: none). */
const char *bl_import_pick_column(const char *path, const char *const *candidates, size_t n);

/* A neuron metadata column being built: n malloc'd strings. */
typedef struct bl_meta {
    size_t n_columns;
    char **names;
    char ***values; /* [column][neuron] */
    uint64_t n;
} bl_meta;
bl_status bl_meta_init(bl_meta *m, uint64_t n, bl_error *err);
/* Add a column (values: n entries, NULL = ""); takes ownership of the strings and the array. */
bl_status bl_meta_add(bl_meta *m, const char *name, char **values, bl_error *err);
/* A column whose every value is "" to start with. */
bl_status bl_meta_add_empty(bl_meta *m, const char *name, char ***values, bl_error *err);
void bl_meta_free(bl_meta *m);

/* The fly transmitter policy (docs/sign-policy.md): acetylcholine +1, GABA
 * -1, glutamate -1, histamine -1, dopamine / serotonin / octopamine /
 * tyramine +1 (modulatory; excitatory as in Shiu et al. 2024), under their
 * FlyWire Codex and neuPrint short names too; unknown (no prediction) +1,
 * "unclear" +1; any other name is an error. */
bl_status bl_sign_policy_default_fly(bl_sign_policy **out, bl_error *err);

/* A --sign-policy argument: "fly" is the fly policy; a file is applied over
 * fallback's policy (over an empty, all-error policy when fallback is NULL). */
bl_status bl_import_policy_arg(const char *arg, bl_status (*fallback)(bl_sign_policy **, bl_error *),
                               bl_sign_policy **out, bl_error *err);

/* Finish: CSR from the edges, external ids, metadata (plus a sign column made
 * from signs: "+1", "-1", or "" for a neuron whose sign was never needed),
 * infos; the report's lines are appended to the description. */
bl_status bl_import_finish(const char *edges_path, bl_edge_list *edges, uint64_t n, const int8_t *signs,
                           char **ids, bl_meta *meta, const bl_sign_policy *policy, bl_import_info *info,
                           const bl_report *report, bl_connectome **out, bl_error *err);

#endif
