/* Edge tables and neuron tables for the table importers (edge_read.c). */
#ifndef BL_CONNECTOME_IMPORT_EDGE_READ_H
#define BL_CONNECTOME_IMPORT_EDGE_READ_H

#include "connectome/import/ids.h"

typedef struct bl_edge_source {
    const char *path;
    const char *pre, *post, *weight; /* column names */
    const char *sign;                /* optional: a per-row +1/-1 column (of the presynaptic neuron) */
    const char *nt;                  /* optional: a per-row transmitter column (of the presynaptic neuron) */
    int add_unknown;                 /* ids not yet known become neurons (no neuron table) */
    int drop_unknown;                /* rows naming an unknown id are dropped and counted (else an error) */
    const char *neurons_path;        /* for messages: where the known ids came from */
} bl_edge_source;

/* What reading found, per neuron (grown with the ids) and in all. */
typedef struct bl_edge_read {
    uint64_t cap;
    char **nt;     /* [neuron] transmitter from the rows (NULL: no row) */
    int8_t *sign;  /* [neuron] sign from the rows (0: no row) */
    uint64_t *row; /* [neuron] first row that set it */
    uint64_t rows, zero_rows, dropped_rows, dropped_synapses;
} bl_edge_read;

/* Read every row of s into edges (unsorted; row numbers 1-based). Weights
 * are whole synapse counts >= 0 (0: the row is counted in zero_rows and
 * left out); ids must be known unless add_unknown or drop_unknown. */
bl_status bl_edge_read_table(const bl_edge_source *s, bl_ids *ids, bl_edge_list *edges, bl_edge_read *r,
                             bl_error *err);
void bl_edge_read_free(bl_edge_read *r);

/* A neuron table: ids from id_col (NULL: the first column) in row order,
 * unique and non-empty, added to ids (which must be empty); every other
 * readable column but those in skip becomes metadata. */
bl_status bl_neuron_table_read(const char *path, const char *id_col, bl_ids *ids, bl_meta *meta,
                               const char *const *skip, size_t n_skip, bl_error *err);

/* Join a table of per-neuron facts by id (id_col): the columns in wanted
 * that the file has (all its readable columns but the id when n_wanted is
 * 0) become metadata columns (text; "" for neurons without a row). Rows of
 * ids that are not neurons are counted in the report and ignored; an id given
 * twice is an error naming both rows. */
bl_status bl_neuron_join(const char *path, const char *id_col, const char *const *wanted, size_t n_wanted,
                         const bl_ids *ids, bl_meta *meta, bl_report *report, bl_error *err);

#endif
