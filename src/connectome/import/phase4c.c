/* `import phase4c`: the seed runtime's processed male CNS directory (its
 * exact_paths): gpu/csr-indptr.int64.npy, gpu/csr-indices.int32.npy and
 * gpu/csr-weights.int64.npy (the graph, one row per presynaptic neuron),
 * neuron-index/unified-metadata.parquet (one row per neuron, neuron_idx
 * 0..N-1 in order, body_id, annotation_* columns, side, neurotransmitter),
 * neuron-index/body-id-neuron-idx.parquet (body_id, neuron_idx: must agree
 * with the metadata) and gpu/csr-metadata.json (hashed into the manifest).
 * Signs as the seed's Runtime computes them: the neurotransmitter, trimmed and
 * lower-cased; empty -> unknown_sign, "unclear" -> unclear_sign, a mapped
 * name -> its sign, any other name -> an error. The policy is the fly policy
 * (unknown +1, unclear +1) unless --sign-policy gives the run's own map
 * (keys: transmitters, "unclear", and "unknown"). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "core/file.h"
#include "connectome/import/edge_read.h"

static const bl_import_option options[] = {
    {"--dir", "DIR", 1, "the processed directory (gpu/, neuron-index/)"},
    {"--sign-policy", "FILE", 0, "key,sign CSV: the run's neurotransmitter_sign map plus 'unknown' and 'unclear' rows "
                                 "(replaces the built-in fly policy; unmapped names are errors)"},
    {"--metadata", "FILE", 0, "unified metadata table instead of DIR/neuron-index/unified-metadata.parquet"},
    {"--mapping", "FILE", 0, "body id table instead of DIR/neuron-index/body-id-neuron-idx.parquet"},
    {NULL, NULL, 0, NULL},
};

static const char *const meta_cols[] = {"neuron_idx", "body_id", "annotation_superclass", "annotation_class",
                                        "annotation_subclass", "annotation_type", "annotation_instance", "side",
                                        "neurotransmitter"};
#define N_META (sizeof meta_cols / sizeof meta_cols[0])

/* csr-metadata.json: when it states the counts, they must be the arrays'. */
static bl_status check_json(const char *path, uint64_t n, uint64_t e, bl_error *err)
{
    /* Read once through core/file.h: never a FIFO, and hashed as parsed. */
    char *text = NULL;
    size_t len = 0;
    bl_status rst = bl_read_small(path, (size_t)64 << 20, &text, &len, err);
    if (rst)
        return rst;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!root)
        return bl_fail(err, BL_ERR_FORMAT, "%s: not valid JSON", path);
    static const char *const nk[] = {"neurons", "n_neurons", "num_neurons", "num_nodes"};
    static const char *const ek[] = {"edges", "n_edges", "num_edges", "nnz"};
    bl_status st = BL_OK;
    for (size_t i = 0; i < 4 && st == BL_OK; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, nk[i]);
        if (cJSON_IsNumber(v) && (uint64_t)v->valuedouble != n)
            st = bl_fail(err, BL_ERR_INVALID, "%s: %s is %.0f, the arrays hold %llu neurons", path, nk[i], v->valuedouble,
                         (unsigned long long)n);
        v = cJSON_GetObjectItemCaseSensitive(root, ek[i]);
        if (st == BL_OK && cJSON_IsNumber(v) && (uint64_t)v->valuedouble != e)
            st = bl_fail(err, BL_ERR_INVALID, "%s: %s is %.0f, the arrays hold %llu edges", path, ek[i], v->valuedouble,
                         (unsigned long long)e);
    }
    cJSON_Delete(root);
    return st;
}

static bl_status run(const bl_import_args *a, bl_connectome **out, char **report_out, bl_error *err)
{
    const char *dir = bl_import_arg(a, "--dir");
    char *p_indptr = bl_import_path(dir, "gpu/csr-indptr.int64.npy");
    char *p_indices = bl_import_path(dir, "gpu/csr-indices.int32.npy");
    char *p_weights = bl_import_path(dir, "gpu/csr-weights.int64.npy");
    char *p_json = bl_import_path(dir, "gpu/csr-metadata.json");
    char *p_meta = bl_import_arg(a, "--metadata") ? bl_import_strdup(bl_import_arg(a, "--metadata"))
                                                  : bl_import_path(dir, "neuron-index/unified-metadata.parquet");
    char *p_map = bl_import_arg(a, "--mapping") ? bl_import_strdup(bl_import_arg(a, "--mapping"))
                                                : bl_import_path(dir, "neuron-index/body-id-neuron-idx.parquet");
    bl_npy_array indptr = {0}, indices = {0}, weights = {0};
    bl_column mc[N_META] = {{0}}, map[2] = {{0}};
    bl_ids ids = {0};
    bl_meta meta = {0};
    bl_edge_list edges = {0};
    bl_report report = {0};
    bl_sign_policy *policy = NULL;
    int8_t *signs = NULL;
    bl_status st = p_indptr && p_indices && p_weights && p_json && p_meta && p_map
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "out of memory");
    if (st == BL_OK)
        st = bl_import_arg(a, "--sign-policy") /* the run's own map replaces the fly policy, as the seed's config does */
                 ? bl_import_policy_arg(bl_import_arg(a, "--sign-policy"), NULL, &policy, err)
                 : bl_sign_policy_default_fly(&policy, err);
    if (st == BL_OK)
        st = bl_npy_read_expect(p_indptr, BL_DTYPE_INT64, 1, &indptr, err);
    if (st == BL_OK)
        st = bl_npy_read_expect(p_indices, BL_DTYPE_INT32, 1, &indices, err);
    if (st == BL_OK)
        st = bl_npy_read_expect(p_weights, BL_DTYPE_INT64, 1, &weights, err);
    uint64_t n = indptr.count ? indptr.count - 1 : 0, e = indices.count;
    if (st == BL_OK && indptr.count == 0)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: empty (needs N+1 offsets)", p_indptr);
    if (st == BL_OK && weights.count != e)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: %llu weights for %llu indices in %s", p_weights,
                     (unsigned long long)weights.count, (unsigned long long)e, p_indices);
    if (st == BL_OK)
        st = check_json(p_json, n, e, err);
    const int64_t *ip = indptr.data, *wt = weights.data;
    const int32_t *ix = indices.data;
    for (uint64_t i = 0; st == BL_OK && i < n; i++)
        if (ip[i] < 0 || ip[i + 1] < ip[i] || (uint64_t)ip[i + 1] > e)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: index %llu: offsets %lld..%lld are not a non-decreasing range in 0..%llu",
                         p_indptr, (unsigned long long)i, (long long)ip[i], (long long)ip[i + 1], (unsigned long long)e);
    if (st == BL_OK && (ip[0] != 0 || (uint64_t)ip[n] != e))
        st = bl_fail(err, BL_ERR_FORMAT, "%s: offsets run %lld..%lld, expected 0..%llu", p_indptr, (long long)ip[0],
                     (long long)ip[n], (unsigned long long)e);
    /* The neuron table: one row per neuron, neuron_idx = row. */
    if (st == BL_OK) {
        bl_col_type want[N_META] = {BL_COL_INT64, 0, BL_COL_STRING, BL_COL_STRING, BL_COL_STRING, BL_COL_STRING,
                                    BL_COL_STRING, BL_COL_STRING, BL_COL_STRING};
        st = bl_import_read(p_meta, meta_cols, want, N_META, mc, err);
    }
    if (st == BL_OK && mc[0].n != n)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %llu rows, but %s has %llu neurons", p_meta, (unsigned long long)mc[0].n,
                     p_indptr, (unsigned long long)n);
    if (st == BL_OK)
        st = bl_ids_init(&ids, n, err);
    for (uint64_t i = 0; st == BL_OK && i < n; i++) {
        if ((mc[0].valid && !mc[0].valid[i]) || mc[0].i64[i] != (int64_t)i) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: column neuron_idx, row %llu: %lld, expected %llu (rows in neuron order)",
                         p_meta, (unsigned long long)i + 1, (long long)mc[0].i64[i], (unsigned long long)i);
            break;
        }
        char *id = bl_import_cell(&mc[1], i);
        int32_t j;
        int added = 0;
        if (!id || !id[0])
            st = bl_fail(err, BL_ERR_FORMAT, "%s: column body_id, row %llu: empty id", p_meta, (unsigned long long)i + 1);
        else if ((st = bl_ids_add(&ids, id, strlen(id), &j, &added, err)) == BL_OK && !added)
            st = bl_fail(err, BL_ERR_INVALID, "%s: column body_id, row %llu: body %s given twice (first at row %lld)",
                         p_meta, (unsigned long long)i + 1, id, (long long)j + 1);
        free(id);
    }
    /* The mapping must say the same. */
    if (st == BL_OK) {
        const char *names[2] = {"body_id", "neuron_idx"};
        const bl_col_type want[2] = {0, BL_COL_INT64};
        st = bl_import_read(p_map, names, want, 2, map, err);
    }
    if (st == BL_OK && map[0].n != n)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %llu rows, the metadata has %llu neurons", p_map,
                     (unsigned long long)map[0].n, (unsigned long long)n);
    for (uint64_t r = 0; st == BL_OK && r < map[0].n; r++) {
        char *id = bl_import_cell(&map[0], r);
        int32_t j = id ? bl_ids_find(&ids, id, strlen(id)) : -1;
        if (j < 0 || (map[1].valid && !map[1].valid[r]) || map[1].i64[r] != j)
            st = bl_fail(err, BL_ERR_INVALID, "%s: row %llu: body %s -> neuron_idx %lld, but the metadata has it at %lld",
                         p_map, (unsigned long long)r + 1, id ? id : "?", (long long)map[1].i64[r], (long long)j);
        free(id);
    }
    /* Metadata columns, as the seed names them. */
    if (st == BL_OK)
        st = bl_meta_init(&meta, n, err);
    for (size_t k = 2; st == BL_OK && k < N_META; k++) {
        char **v = calloc((size_t)(n ? n : 1), sizeof *v);
        for (uint64_t i = 0; v && i < n; i++)
            v[i] = bl_import_text(&mc[k], i);
        st = v ? bl_meta_add(&meta, k == N_META - 1 ? "transmitter" : meta_cols[k], v, err)
               : bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    signs = calloc((size_t)(n ? n : 1), 1);
    if (st == BL_OK && !signs)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    for (uint64_t i = 0; st == BL_OK && i < n; i++) {
        char where[512];
        snprintf(where, sizeof where, "%s: column neurotransmitter, row %llu", p_meta, (unsigned long long)i + 1);
        int sg = 0;
        st = bl_sign_policy_lookup(policy, meta.values[meta.n_columns - 1][i], where, &sg, err);
        signs[i] = (int8_t)sg;
    }
    for (uint64_t i = 0; st == BL_OK && i < n; i++)
        for (int64_t k = ip[i]; st == BL_OK && k < ip[i + 1]; k++) {
            if (ix[k] < 0 || (uint64_t)ix[k] >= n)
                st = bl_fail(err, BL_ERR_FORMAT, "%s: index %lld: neuron %d outside 0..%llu", p_indices, (long long)k, ix[k],
                             (unsigned long long)n - 1);
            else if (wt[k] < 1 || wt[k] > INT32_MAX)
                st = bl_fail(err, BL_ERR_INVALID, "%s: index %lld: synapse count %lld outside 1..%d", p_weights,
                             (long long)k, (long long)wt[k], INT32_MAX);
            else
                st = bl_edge_list_push(&edges, (int32_t)i, ix[k], (int32_t)wt[k], (uint64_t)k + 1, err);
        }
    uint64_t merged = 0;
    if (st == BL_OK)
        st = bl_edge_list_sum(&edges, p_indices, &merged, err);
    if (st == BL_OK) {
        bl_report_add(&report, "%llu neurons, %llu CSR entries read", (unsigned long long)n, (unsigned long long)e);
        if (merged)
            bl_report_add(&report, "%llu CSR entries repeat a (pre, post) pair: summed into the first",
                          (unsigned long long)merged);
        const char *paths[6] = {p_indptr, p_indices, p_weights, p_meta, p_map, p_json};
        const char *labels[6] = {"gpu/csr-indptr.int64.npy", "gpu/csr-indices.int32.npy", "gpu/csr-weights.int64.npy",
                                 "neuron-index/unified-metadata.parquet", "neuron-index/body-id-neuron-idx.parquet",
                                 "gpu/csr-metadata.json"};
        bl_import_info info = {
            .name = "malecns-phase4c",
            .description = "Drosophila melanogaster male CNS as the seed runtime (phase4c) processed it: its CSR graph "
                           "and neuron order, signs from the neurotransmitter column through the sign policy",
            .source = "the seed runtime's processed male CNS directory",
            .citation = "the FlyEM male CNS connectome release (Janelia) and the paper its release page names",
            .licence = "that of the male CNS release (FlyEM); the files are not redistributed by BrainlessLab",
            .generator = "brainlesslab import phase4c",
            .sign_key = "neurotransmitter",
            .paths = paths,
            .labels = labels,
            .n_files = 6,
        };
        st = bl_import_finish(p_indices, &edges, n, signs, ids.text, &meta, policy, &info, &report, out, err);
    }
    if (st == BL_OK) {
        *report_out = report.text;
        report.text = NULL;
    }
    bl_report_free(&report);
    for (size_t k = 0; k < N_META; k++)
        bl_column_clear(&mc[k]);
    bl_column_clear(&map[0]);
    bl_column_clear(&map[1]);
    bl_npy_free(&indptr);
    bl_npy_free(&indices);
    bl_npy_free(&weights);
    free(signs);
    bl_meta_free(&meta);
    bl_edge_list_free(&edges);
    bl_ids_free(&ids);
    bl_sign_policy_destroy(policy);
    free(p_indptr), free(p_indices), free(p_weights), free(p_json), free(p_meta), free(p_map);
    return st;
}

BL_IMPORTER_RUN(run)

const bl_importer bl_importer_phase4c = {
    "phase4c", "the seed runtime's processed male CNS directory (CSR .npy + neuron-index tables)", options, run_ledgered};
