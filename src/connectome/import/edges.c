/* `import edges`: any edge list (CSV, CSV.gz, Parquet, Feather) with named
 * pre, post and weight columns, signs from a +1/-1 column or from a
 * transmitter column through a sign policy, and optionally a neuron table
 * whose other columns become metadata.
 *
 * Neurons: the neuron table's rows in order when one is given (an edge
 * naming an id it lacks is an error); otherwise every id in the edges,
 * integers ascending, then text bytewise. Rows with the same (pre, post)
 * are summed, rows of weight 0 are left out; both are counted in the report. */
#include <stdlib.h>
#include <string.h>

#include "connectome/import/edge_read.h"

static const bl_import_option options[] = {
    {"--edges", "FILE", 1, "edge list: .csv, .csv.gz, .parquet, .feather/.arrow"},
    {"--pre", "COL", 1, "presynaptic id column"},
    {"--post", "COL", 1, "postsynaptic id column"},
    {"--weight", "COL", 1, "synapse count column (whole numbers >= 0; 0 rows are left out)"},
    {"--sign", "COL", 0, "+1/-1 column of the edges (the presynaptic neuron's sign; rows must agree)"},
    {"--nt", "COL", 0, "transmitter column (in --neurons if it has it, else per edge row), signed by --sign-policy"},
    {"--sign-policy", "FILE|fly", 0,
     "with --nt: a key,sign CSV (docs/sign-policy.md), or 'fly' for the built-in fly transmitter policy"},
    {"--neurons", "FILE", 0, "neuron table: its rows are the neurons, in order; other columns become metadata"},
    {"--id", "COL", 0, "id column of --neurons (default: its first column)"},
    {"--name", "NAME", 0, "data set name for the manifest (default: edges)"},
    {NULL, NULL, 0, NULL},
};

bl_status bl_import_policy_arg(const char *arg, bl_status (*fallback)(bl_sign_policy **, bl_error *),
                               bl_sign_policy **out, bl_error *err)
{
    *out = NULL;
    if (arg && !strcmp(arg, "fly"))
        return bl_sign_policy_default_fly(out, err);
    if (fallback)
        return bl_import_policy(fallback, arg, out, err);
    bl_sign_policy *p = NULL;
    bl_status st = bl_sign_policy_create(0, &p, err);
    if (st == BL_OK && arg)
        st = bl_sign_policy_load_overrides(p, arg, err);
    if (st != BL_OK) {
        bl_sign_policy_destroy(p);
        return st;
    }
    *out = p;
    return BL_OK;
}

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *edges_path = bl_import_arg(a, "--edges"), *neurons = bl_import_arg(a, "--neurons");
    const char *sign_col = bl_import_arg(a, "--sign"), *nt_col = bl_import_arg(a, "--nt");
    const char *policy_arg = bl_import_arg(a, "--sign-policy"), *id_col = bl_import_arg(a, "--id");
    const char *name = bl_import_arg(a, "--name");
    *out = NULL;
    if (!sign_col == !nt_col)
        return bl_fail(err, BL_ERR_INVALID, "import edges: give either --sign COL or --nt COL (with --sign-policy)");
    if (nt_col && !policy_arg)
        return bl_fail(err, BL_ERR_INVALID, "import edges: --nt needs --sign-policy FILE (or --sign-policy fly)");
    if (sign_col && policy_arg)
        return bl_fail(err, BL_ERR_INVALID, "import edges: --sign-policy goes with --nt, not with --sign");
    if (id_col && !neurons)
        return bl_fail(err, BL_ERR_INVALID, "import edges: --id needs --neurons");

    bl_ids ids;
    bl_meta meta = {0};
    bl_edge_list edges = {0};
    bl_edge_read r = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    int8_t *signs = NULL;
    char **keys = NULL;
    int32_t *remap = NULL;
    bl_column ntc = {0};
    int nt_in_neurons = nt_col && neurons && bl_import_has_column(neurons, nt_col);
    bl_status st = bl_ids_init(&ids, 1 << 16, err);
    if (st == BL_OK)
        st = nt_col ? bl_import_policy_arg(policy_arg, NULL, &policy, err) : bl_import_column_policy(&policy, err);
    if (st == BL_OK && neurons) {
        const char *skip[1] = {nt_col};
        st = bl_neuron_table_read(neurons, id_col, &ids, &meta, skip, nt_in_neurons ? 1 : 0, err);
        if (st == BL_OK && nt_in_neurons) {
            const char *nm[1] = {nt_col};
            const bl_col_type w[1] = {BL_COL_STRING};
            st = bl_import_read(neurons, nm, w, 1, &ntc, err);
        }
    }
    bl_edge_source src = {edges_path, bl_import_arg(a, "--pre"), bl_import_arg(a, "--post"),
                          bl_import_arg(a, "--weight"), sign_col, nt_in_neurons ? NULL : nt_col,
                          !neurons, 0, neurons};
    if (st == BL_OK)
        st = bl_edge_read_table(&src, &ids, &edges, &r, err);
    uint64_t n = ids.n;
    if (st == BL_OK && !neurons) {
        /* No neuron table: the neurons are the ids seen, in a canonical order. */
        st = bl_ids_sort(&ids, &remap, err);
        for (uint64_t e = 0; st == BL_OK && e < edges.n; e++) {
            edges.e[e].pre = remap[edges.e[e].pre];
            edges.e[e].post = remap[edges.e[e].post];
        }
        if (st == BL_OK) {
            bl_edge_read p = r;
            p.nt = calloc((size_t)(n ? n : 1), sizeof *p.nt);
            p.sign = calloc((size_t)(n ? n : 1), 1);
            p.row = calloc((size_t)(n ? n : 1), sizeof *p.row);
            if (!p.nt || !p.sign || !p.row) {
                free(p.nt), free(p.sign), free(p.row);
                st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
            } else {
                for (uint64_t i = 0; i < n; i++) {
                    p.nt[remap[i]] = r.nt[i];
                    p.sign[remap[i]] = r.sign[i];
                    p.row[remap[i]] = r.row[i];
                    r.nt[i] = NULL;
                }
                p.cap = n;
                bl_edge_read_free(&r);
                r = p;
            }
        }
        if (st == BL_OK)
            st = bl_meta_init(&meta, n, err);
    }
    uint64_t merged = 0;
    if (st == BL_OK)
        st = bl_edge_list_sum(&edges, edges_path, &merged, err);
    signs = calloc((size_t)(n ? n : 1), 1);
    if (st == BL_OK && !signs)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    /* A neuron's sign: its rows' sign, or its transmitter through the policy
     * (looked up when it has a transmitter or outgoing edges). */
    uint8_t *has_out = calloc((size_t)(n ? n : 1), 1);
    if (st == BL_OK && !has_out)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (uint64_t e = 0; st == BL_OK && e < edges.n; e++)
        has_out[edges.e[e].pre] = 1;
    if (st == BL_OK && nt_col)
        st = bl_meta_add_empty(&meta, "transmitter", &keys, err);
    for (uint64_t i = 0; st == BL_OK && i < n; i++) {
        if (sign_col) {
            signs[i] = r.sign[i];
            continue;
        }
        char *key = nt_in_neurons ? bl_import_text(&ntc, i) : bl_import_strdup(r.nt[i] ? r.nt[i] : "");
        if (!key) {
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
            break;
        }
        keys[i] = key;
        if (!key[0] && !has_out[i])
            continue;
        char where[512];
        if (nt_in_neurons)
            snprintf(where, sizeof where, "%s: column %s, row %llu", neurons, nt_col, (unsigned long long)i + 1);
        else
            snprintf(where, sizeof where, "%s: column %s, row %llu", edges_path, nt_col, (unsigned long long)r.row[i]);
        int sg = 0;
        st = bl_sign_policy_lookup(policy, key, where, &sg, err);
        signs[i] = (int8_t)sg;
    }
    free(has_out);
    if (st == BL_OK) {
        bl_report_add(&report, "%s: %llu rows read", bl_import_base_name(edges_path), (unsigned long long)r.rows);
        if (r.zero_rows)
            bl_report_add(&report, "%s: %llu rows of weight 0 left out", bl_import_base_name(edges_path),
                          (unsigned long long)r.zero_rows);
        if (merged)
            bl_report_add(&report, "%s: %llu rows summed into the edge of an earlier row with the same (pre, post)",
                          bl_import_base_name(edges_path), (unsigned long long)merged);
        const char *paths[2] = {edges_path, neurons};
        const char *labels[2] = {bl_import_base_name(edges_path), neurons ? bl_import_base_name(neurons) : NULL};
        char key_text[160];
        snprintf(key_text, sizeof key_text, "%s column %s", sign_col ? "sign" : "transmitter", sign_col ? sign_col : nt_col);
        bl_import_info info = {
            .name = name ? name : "edges",
            .description = "Connectome imported from a user-supplied edge list",
            .source = "user-supplied files",
            .citation = "(none given)",
            .licence = "(that of the input files)",
            .generator = "brainlesslab import edges",
            .sign_key = key_text,
            .paths = paths,
            .labels = labels,
            .n_files = neurons ? 2 : 1,
        };
        st = bl_import_finish(edges_path, &edges, n, signs, ids.text, &meta, policy, &info, &report, out, err);
    }
    if (st == BL_OK) {
        *report_out = report.text;
        report.text = NULL;
    }
    bl_report_free(&report);
    bl_column_clear(&ntc);
    free(remap);
    free(signs);
    bl_meta_free(&meta);
    bl_edge_list_free(&edges);
    bl_edge_read_free(&r);
    bl_ids_free(&ids);
    bl_sign_policy_destroy(policy);
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_edges = {
    "edges", "any edge list (CSV, CSV.gz, Parquet, Feather) with named columns, and an optional neuron table",
    options, run_ledgered};
