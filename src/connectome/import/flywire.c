/* `import flywire`: the FlyWire whole-brain connectome as Shiu et al. (2024)
 * use it in model.py: the completeness file's rows are the neurons, in
 * order (its first column, the pandas index, holds the root ids), and every
 * connectivity row is a synapse group from Presynaptic_Index to
 * Postsynaptic_Index of Connectivity synapses, signed by Excitatory (+1/-1).
 * The ids in Presynaptic_ID / Postsynaptic_ID must be the ids the index
 * columns point at; rows that disagree are an error that names them. Rows
 * with the same (pre, post) are summed, as model.py's synapses add up, and
 * counted in the report. --annotations (FlyWire Codex classification, or
 * the FlyWire annotation TSV) adds the classification columns it has
 * (read_annotations names them). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connectome/import/edge_read.h"

static const bl_import_option options[] = {
    {"--neurons", "FILE", 1, "Completeness_783.csv (or the v630 completeness file): root ids, in model order"},
    {"--connectivity", "FILE", 1, "Connectivity_783.parquet (or the v630 file; CSV and Feather are read too)"},
    {"--annotations", "FILE", 0, "Codex classification.csv.gz or Supplemental_file1_neuron_annotations.tsv: adds cell_type, side, hemilineage, super_class, ..."},
    {NULL, NULL, 0, NULL},
};

#define MAX_SHOWN 5

static bl_status read_connectivity(const char *path, const bl_ids *ids, bl_edge_list *edges, int8_t *signs,
                                   uint64_t *sign_row, uint64_t *rows_read, bl_error *err)
{
    static const char *const names[6] = {"Presynaptic_Index", "Postsynaptic_Index", "Connectivity", "Excitatory",
                                         "Presynaptic_ID",    "Postsynaptic_ID"};
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    size_t cols[6];
    const bl_col_type want[6] = {BL_COL_INT64, BL_COL_INT64, BL_COL_INT64, BL_COL_INT64, BL_COL_INT64, BL_COL_INT64};
    for (size_t i = 0; st == BL_OK && i < 6; i++)
        st = bl_table_find(t, names[i], &cols[i], err);
    bl_column c[6] = {{0}};
    uint64_t rows = 1, base = 0, bad = 0;
    char shown[MAX_SHOWN][160];
    uint64_t n = ids->n;
    while (st == BL_OK && rows) {
        st = bl_table_next(t, cols, want, 6, c, &rows, err);
        for (uint64_t k = 0; st == BL_OK && k < rows; k++) {
            uint64_t row = base + k + 1;
            for (int q = 0; q < 6; q++)
                if (c[q].valid && !c[q].valid[k]) {
                    st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: empty value", path, names[q],
                                 (unsigned long long)row);
                    break;
                }
            if (st != BL_OK)
                break;
            int64_t pi = c[0].i64[k], qi = c[1].i64[k], w = c[2].i64[k], ex = c[3].i64[k];
            if (pi < 0 || (uint64_t)pi >= n || qi < 0 || (uint64_t)qi >= n) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: column %s, row %llu: index %lld is outside 0..%llu (the neurons file has %llu rows)",
                             path, pi < 0 || (uint64_t)pi >= n ? names[0] : names[1], (unsigned long long)row,
                             (long long)(pi < 0 || (uint64_t)pi >= n ? pi : qi), (unsigned long long)n - 1,
                             (unsigned long long)n);
                break;
            }
            if (w < 1 || w > INT32_MAX) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: column Connectivity, row %llu: synapse count %lld is not in 1..%d",
                             path, (unsigned long long)row, (long long)w, INT32_MAX);
                break;
            }
            if (ex != 1 && ex != -1) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: column Excitatory, row %llu: %lld is not +1 or -1", path,
                             (unsigned long long)row, (long long)ex);
                break;
            }
            /* The ids must be what the indices point at. */
            int pre_ok = !ids->hashed[pi] && ids->key[pi] == c[4].i64[k];
            int post_ok = !ids->hashed[qi] && ids->key[qi] == c[5].i64[k];
            if (!pre_ok || !post_ok) {
                if (bad < MAX_SHOWN)
                    snprintf(shown[bad], sizeof shown[0], "row %llu: %s %lld but index %lld is %s", (unsigned long long)row,
                             pre_ok ? "Postsynaptic_ID" : "Presynaptic_ID", (long long)(pre_ok ? c[5].i64[k] : c[4].i64[k]),
                             (long long)(pre_ok ? qi : pi), ids->text[pre_ok ? qi : pi]);
                bad++;
                continue;
            }
            if (signs[pi] && signs[pi] != ex) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: column Excitatory, row %llu: neuron %s is %+lld here but %+d at row %llu",
                             path, (unsigned long long)row, ids->text[pi], (long long)ex, signs[pi],
                             (unsigned long long)sign_row[pi]);
                break;
            }
            if (!signs[pi]) {
                signs[pi] = (int8_t)ex;
                sign_row[pi] = row;
            }
            st = bl_edge_list_push(edges, (int32_t)pi, (int32_t)qi, (int32_t)w, row, err);
        }
        base += rows;
    }
    for (int q = 0; q < 6; q++)
        bl_column_clear(&c[q]);
    bl_table_close(t);
    if (st == BL_OK && bad) {
        char list[4 * 170] = "";
        for (uint64_t i = 0; i < bad && i < MAX_SHOWN; i++) {
            strncat(list, i ? "; " : "", sizeof list - strlen(list) - 1);
            strncat(list, shown[i], sizeof list - strlen(list) - 1);
        }
        st = bl_fail(err, BL_ERR_INVALID, "%s: %llu rows whose Presynaptic_ID/Postsynaptic_ID disagree with the index columns: %s%s",
                     path, (unsigned long long)bad, list, bad > MAX_SHOWN ? "; ..." : "");
    }
    *rows_read = base;
    return st;
}

/* The annotation columns, where the file has them: Codex's classification
 * (super_class, class, sub_class, cell_type, hemilineage, side, nt_type) or
 * Schlegel et al.'s Supplemental_file1_neuron_annotations.tsv (super_class,
 * cell_class, cell_sub_class, cell_type, ito_lee_hemilineage,
 * hartenstein_hemilineage, side, top_nt): the names plans select by. */
static bl_status read_annotations(const char *path, const bl_ids *ids, bl_meta *meta, bl_report *report, bl_error *err)
{
    static const char *const wanted[] = {"super_class", "class", "sub_class", "side", "nt_type", "cell_type",
                                         "hemibrain_type", "hemilineage", "cell_class", "cell_sub_class",
                                         "ito_lee_hemilineage", "hartenstein_hemilineage", "top_nt"};
    return bl_neuron_join(path, "root_id", wanted, sizeof wanted / sizeof *wanted, ids, meta, report, err);
}

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *neurons = bl_import_arg(a, "--neurons"), *conn = bl_import_arg(a, "--connectivity");
    const char *annot = bl_import_arg(a, "--annotations");
    *out = NULL;
    bl_ids ids;
    bl_meta meta = {0};
    bl_edge_list edges = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    int8_t *signs = NULL;
    uint64_t *sign_row = NULL, rows = 0, merged = 0;
    bl_status st = bl_ids_init(&ids, 1 << 18, err);
    if (st == BL_OK)
        st = bl_import_column_policy(&policy, err);
    if (st == BL_OK)
        st = bl_neuron_table_read(neurons, NULL, &ids, &meta, NULL, 0, err);
    uint64_t n = ids.n;
    signs = calloc((size_t)(n ? n : 1), 1);
    sign_row = calloc((size_t)(n ? n : 1), sizeof *sign_row);
    if (st == BL_OK && (!signs || !sign_row))
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    if (st == BL_OK)
        st = read_connectivity(conn, &ids, &edges, signs, sign_row, &rows, err);
    if (st == BL_OK)
        st = bl_edge_list_sum(&edges, conn, &merged, err);
    if (st == BL_OK && annot)
        st = read_annotations(annot, &ids, &meta, &report, err);
    if (st == BL_OK) {
        uint64_t silent = 0;
        for (uint64_t i = 0; i < n; i++)
            silent += !signs[i];
        bl_report_add(&report, "%s: %llu rows read", bl_import_base_name(conn), (unsigned long long)rows);
        if (merged)
            bl_report_add(&report, "%s: %llu rows summed into an earlier row with the same (pre, post), as model.py adds them",
                          bl_import_base_name(conn), (unsigned long long)merged);
        if (silent)
            bl_report_add(&report, "%llu neurons have no outgoing row: their sign is left empty", (unsigned long long)silent);
        int v783 = strstr(bl_import_base_name(neurons), "783") != NULL, v630 = strstr(bl_import_base_name(neurons), "630") != NULL;
        const char *paths[3] = {neurons, conn, annot};
        const char *labels[3] = {bl_import_base_name(neurons), bl_import_base_name(conn), annot ? bl_import_base_name(annot) : NULL};
        bl_import_info info = {
            .name = v783 ? "flywire-v783" : v630 ? "flywire-v630" : "flywire",
            .description = "Drosophila melanogaster adult whole brain (FlyWire) as Shiu et al. 2024 model it: neurons in "
                           "the completeness file's order, edges Presynaptic_Index -> Postsynaptic_Index with "
                           "Connectivity synapses signed by Excitatory (model.py)",
            .source = "FlyWire connectome files of Shiu et al. 2024 (github.com/philshiu/Drosophila_brain_model)",
            .citation = "Dorkenwald S et al. Neuronal wiring diagram of an adult brain. Nature 634:124-138 (2024); "
                        "Schlegel P et al. Nature 634:139-152 (2024); Shiu PK et al. A Drosophila computational brain "
                        "model reveals sensorimotor processing. Nature 634:210-219 (2024)",
            .licence = "FlyWire data terms (flywire.ai); the files are not redistributed by BrainlessLab",
            .generator = "brainlesslab import flywire",
            .sign_key = "Excitatory column",
            .paths = paths,
            .labels = labels,
            .n_files = annot ? 3 : 2,
        };
        st = bl_import_finish(conn, &edges, n, signs, ids.text, &meta, policy, &info, &report, out, err);
    }
    if (st == BL_OK) {
        *report_out = report.text;
        report.text = NULL;
    }
    bl_report_free(&report);
    free(signs);
    free(sign_row);
    bl_meta_free(&meta);
    bl_edge_list_free(&edges);
    bl_ids_free(&ids);
    bl_sign_policy_destroy(policy);
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_flywire = {
    "flywire", "FlyWire brain as Shiu et al. 2024 model it (Completeness_783.csv + Connectivity_783.parquet)", options,
    run_ledgered};
