/* The run shape the neuron-table importers (flywire-codex, neuprint, malecns)
 * share: a neuron table, edge tables summed per (pre, post), a transmitter
 * per neuron through a sign policy, and an optional threshold on the summed
 * count. Private to the importers. */
#ifndef BL_CONNECTOME_IMPORT_COMMON_RUN_H
#define BL_CONNECTOME_IMPORT_COMMON_RUN_H

#include "connectome/import/edge_read.h"

typedef struct bl_neuron_import {
    /* neurons */
    const char *neurons_path, *id_col; /* rows in order; other columns become metadata */
    const char *nt_col;                /* transmitter column of the neuron table, or NULL (every neuron unknown) */
    const char *join_path, *join_id;   /* optional table joined by id (all its columns) */
    /* edges: each file summed into one edge per (pre, post) */
    const char *const *edge_paths;
    size_t n_edge_paths;
    const char *pre, *post, *weight;
    int drop_unknown;       /* edges naming other ids are dropped and counted (a selection), else an error */
    int64_t min_synapses;   /* pairs whose summed count is below are dropped and counted */
    const bl_sign_policy *policy;
    bl_import_info info;    /* paths and labels filled by the importer */
} bl_neuron_import;

/* ids must already hold the neurons (bl_neuron_table_read or a selection),
 * meta their columns; nt[i] their transmitters (NULL: unknown). */
bl_status bl_neuron_import_run(bl_neuron_import *p, bl_ids *ids, bl_meta *meta, char **nt, bl_connectome **out,
                               char **report_out, bl_report *report, bl_error *err);

#endif
