/* `import flywire-codex`: the FlyWire Codex CSV exports. neurons.csv.gz
 * (root_id, nt_type, ...) gives the neurons in its row order and their
 * transmitters; classification.csv.gz (root_id, super_class, class, ...) is
 * joined by root id; connections(_no_threshold).csv.gz has one row per
 * (pre, post, neuropil), summed here per (pre, post). Signs: nt_type through
 * the fly transmitter policy (docs/sign-policy.md), overridable. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "connectome/import/common_run.h"

static const bl_import_option options[] = {
    {"--neurons", "FILE", 1, "neurons.csv.gz (root_id, nt_type, ...): the neurons, in row order"},
    {"--classification", "FILE", 0, "classification.csv.gz (root_id, super_class, class, sub_class, side, ...)"},
    {"--connections", "FILE", 1, "connections.csv.gz or connections_no_threshold.csv.gz (pre_root_id, post_root_id, neuropil, syn_count)"},
    {"--min-synapses", "N", 0, "drop (pre, post) pairs whose summed count is below N (default 1: keep all)"},
    {"--sign-policy", "FILE", 0, "key,sign CSV over the fly transmitter policy (keys: nt_type values; docs/sign-policy.md)"},
    {NULL, NULL, 0, NULL},
};

bl_status bl_import_parse_count(const char *opt, const char *text, int64_t *out, bl_error *err)
{
    char *end;
    errno = 0;
    long long v = text ? strtoll(text, &end, 10) : 1;
    if (text && (errno || *end || end == text || v < 1 || v > INT32_MAX))
        return bl_fail(err, BL_ERR_INVALID, "%s: '%s' is not a whole number in 1..%d", opt, text, INT32_MAX);
    *out = v;
    return BL_OK;
}

/* The text of column col of a neuron table, row by row (NULL entries for nulls are ""). */
bl_status bl_import_text_column(const char *path, const char *col, uint64_t n, char ***out, bl_error *err)
{
    *out = NULL;
    bl_column c = {0};
    const char *names[1] = {col};
    const bl_col_type want[1] = {BL_COL_STRING};
    bl_status st = bl_import_read(path, names, want, 1, &c, err);
    if (st == BL_OK && c.n != n)
        st = bl_fail(err, BL_ERR_INTERNAL, "%s: column %s has %llu rows, expected %llu", path, col,
                     (unsigned long long)c.n, (unsigned long long)n);
    char **v = st == BL_OK ? calloc((size_t)(n ? n : 1), sizeof *v) : NULL;
    if (st == BL_OK && !v)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; st == BL_OK && i < n; i++)
        if (!(v[i] = bl_import_text(&c, i)))
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    bl_column_clear(&c);
    if (st != BL_OK) {
        for (uint64_t i = 0; v && i < n; i++)
            free(v[i]);
        free(v);
        return st;
    }
    *out = v;
    return BL_OK;
}

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *neurons = bl_import_arg(a, "--neurons"), *cls = bl_import_arg(a, "--classification");
    const char *conn = bl_import_arg(a, "--connections");
    bl_ids ids;
    bl_meta meta = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    char **nt = NULL;
    int64_t min_syn = 1;
    bl_status st = bl_import_parse_count("--min-synapses", bl_import_arg(a, "--min-synapses"), &min_syn, err);
    if (st == BL_OK)
        st = bl_ids_init(&ids, 1 << 18, err);
    else
        memset(&ids, 0, sizeof ids);
    if (st == BL_OK)
        st = bl_import_policy_arg(bl_import_arg(a, "--sign-policy"), bl_sign_policy_default_fly, &policy, err);
    if (st == BL_OK)
        st = bl_neuron_table_read(neurons, "root_id", &ids, &meta, NULL, 0, err);
    if (st == BL_OK)
        st = bl_import_text_column(neurons, "nt_type", ids.n, &nt, err);
    if (st == BL_OK && cls)
        st = bl_neuron_join(cls, "root_id", NULL, 0, &ids, &meta, &report, err);
    if (st == BL_OK) {
        const char *paths[3] = {neurons, conn, cls};
        const char *labels[3] = {bl_import_base_name(neurons), bl_import_base_name(conn), cls ? bl_import_base_name(cls) : NULL};
        const char *edge_paths[1] = {conn};
        bl_neuron_import p = {
            .neurons_path = neurons, .id_col = "root_id", .nt_col = "nt_type",
            .edge_paths = edge_paths, .n_edge_paths = 1,
            .pre = "pre_root_id", .post = "post_root_id", .weight = "syn_count",
            .min_synapses = min_syn, .policy = policy,
            .info = {
                .name = "flywire-codex",
                .description = "Drosophila melanogaster adult whole brain (FlyWire) from the Codex exports: neurons in "
                               "neurons.csv order, synapse counts summed over neuropils per (pre, post), signs from "
                               "nt_type through the sign policy",
                .source = "FlyWire Codex downloads (codex.flywire.ai)",
                .citation = "Dorkenwald S et al. Nature 634:124-138 (2024); Schlegel P et al. Nature 634:139-152 (2024); "
                            "Eckstein N et al. (transmitter predictions) Cell 187:2574-2594 (2024)",
                .licence = "FlyWire data terms (flywire.ai); the files are not redistributed by BrainlessLab",
                .generator = "brainlesslab import flywire-codex",
                .sign_key = "nt_type",
                .paths = paths, .labels = labels, .n_files = cls ? 3 : 2,
            },
        };
        st = bl_neuron_import_run(&p, &ids, &meta, nt, out, report_out, &report, err);
    }
    bl_neuron_import_release(nt, &ids, &meta, &report, policy);
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_flywire_codex = {
    "flywire-codex", "FlyWire Codex exports (neurons, classification, connections CSV.gz)", options, run_ledgered};
