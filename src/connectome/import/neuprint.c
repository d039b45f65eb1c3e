/* `import neuprint`: neuPrint exports (hemibrain, MANC): a neuron table
 * (bodyId, type, instance, ...; the hemibrain release's traced-neurons.csv)
 * and either total connections (bodyId_pre, bodyId_post, weight;
 * traced-total-connections.csv) or only per-ROI connections (the same plus
 * roi; traced-roi-connections.csv), whose rows are summed per (pre, post).
 * Neurons: the neuron table's rows in order. Signs: a transmitter column when
 * the export has one (--nt, e.g. MANC's predictedNt) through the fly policy;
 * without one every neuron gets the policy's unknown sign, and the report
 * says so. */
#include <stdlib.h>
#include <string.h>

#include "connectome/import/common_run.h"

static const bl_import_option options[] = {
    {"--neurons", "FILE", 1, "neurons.csv / traced-neurons.csv (bodyId, ...): the neurons, in row order"},
    {"--connections", "FILE", 0, "total-connections.csv / traced-total-connections.csv (bodyId_pre, bodyId_post, weight)"},
    {"--roi-connections", "FILE", 0, "traced-roi-connections.csv (bodyId_pre, bodyId_post, roi, weight): summed per pair"},
    {"--id", "COL", 0, "id column of --neurons (default bodyId)"},
    {"--nt", "COL", 0, "transmitter column of --neurons (e.g. predictedNt); without it every sign is the unknown sign"},
    {"--sign-policy", "FILE", 0, "key,sign CSV over the fly transmitter policy (docs/sign-policy.md)"},
    {NULL, NULL, 0, NULL},
};

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *neurons = bl_import_arg(a, "--neurons"), *total = bl_import_arg(a, "--connections");
    const char *roi = bl_import_arg(a, "--roi-connections"), *nt_col = bl_import_arg(a, "--nt");
    const char *id = bl_import_arg(a, "--id");
    if (!total == !roi)
        return bl_fail(err, BL_ERR_INVALID, "import neuprint: give --connections FILE or --roi-connections FILE (one)");
    bl_ids ids;
    bl_meta meta = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    char **nt = NULL;
    bl_status st = bl_ids_init(&ids, 1 << 16, err);
    if (st == BL_OK)
        st = bl_import_policy_arg(bl_import_arg(a, "--sign-policy"), bl_sign_policy_default_fly, &policy, err);
    if (st == BL_OK)
        st = bl_neuron_table_read(neurons, id ? id : "bodyId", &ids, &meta, NULL, 0, err);
    if (st == BL_OK && nt_col)
        st = bl_import_text_column(neurons, nt_col, ids.n, &nt, err);
    if (st == BL_OK && !nt_col)
        bl_report_add(&report, "%s: no transmitter column given (--nt): every neuron gets the policy's unknown sign",
                      bl_import_base_name(neurons));
    if (st == BL_OK) {
        const char *conn = total ? total : roi;
        const char *paths[2] = {neurons, conn};
        const char *labels[2] = {bl_import_base_name(neurons), bl_import_base_name(conn)};
        const char *edge_paths[1] = {conn};
        char key[128];
        snprintf(key, sizeof key, "%s", nt_col ? nt_col : "transmitter (none in the export)");
        bl_neuron_import p = {
            .neurons_path = neurons, .id_col = id ? id : "bodyId", .nt_col = nt_col,
            .edge_paths = edge_paths, .n_edge_paths = 1,
            .pre = "bodyId_pre", .post = "bodyId_post", .weight = "weight",
            .min_synapses = 1, .policy = policy,
            .info = {
                .name = "neuprint",
                .description = total ? "Connectome from a neuPrint export: neurons in the neuron table's order, total "
                                       "connection weights per (pre, post)"
                                     : "Connectome from a neuPrint export: neurons in the neuron table's order, ROI "
                                       "connection weights summed per (pre, post)",
                .source = "neuPrint export (neuprint.janelia.org)",
                .citation = "Scheffer LK et al. A connectome and analysis of the adult Drosophila central brain. eLife "
                            "9:e57443 (2020), or the data set's own paper",
                .licence = "that of the exported data set (hemibrain: CC BY 4.0)",
                .generator = "brainlesslab import neuprint",
                .sign_key = key,
                .paths = paths, .labels = labels, .n_files = 2,
            },
        };
        st = bl_neuron_import_run(&p, &ids, &meta, nt, out, report_out, &report, err);
    }
    bl_neuron_import_release(nt, &ids, &meta, &report, policy);
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_neuprint = {
    "neuprint", "neuPrint exports (hemibrain traced-*, MANC): neurons + total or per-ROI connections", options, run_ledgered};
