/* Importer for the Drosophila L1 larva connectome (Winding et al. 2023).
 *
 * Inputs (data/drosophila-larva-winding2023/, see PROVENANCE.md there):
 *   edges_all_compartments.csv.gz  pre_skid,post_skid,all[,aa,ad,da,dd]
 *   annotations.csv                left_id,right_id,celltype,additional_annotations,level_7_cluster
 *
 * Neuron order is ascending skid over the skids that occur in an edge: the
 * edge list was written row-major over the paper's matrix, but that order is
 * not recoverable for a neuron without outgoing edges, and a numeric order is
 * simple to state and to reproduce. (All 2,952 matrix neurons occur in at
 * least one edge, so none is lost.) */
#include "brainlesslab/import.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/csv.h"
#include "connectome/import/import_common.h"
#include "core/file.h"

#define EDGES_FILE "edges_all_compartments.csv.gz"
#define ANNOT_FILE "annotations.csv"
#define NO_PAIR "no pair"
#define NO_CLUSTER "no cluster" /* a few late-annotated pairs were not clustered */

bl_status bl_sign_policy_default_larva(bl_sign_policy **out, bl_error *err)
{
    /* docs/sign-policy.md gives the literature for each line. Everything not
     * listed (projection/feedback/descending/ascending classes of mixed or
     * unknown transmitter, modulatory MBINs, MBONs of mixed transmitters) and
     * unannotated neurons take the declared default, +1. */
    static const bl_import_sign_rule rules[] = {
        {"sensory", +1}, /* larval sensory neurons (ORNs included) are cholinergic */
        {"PN", +1},      /* uniglomerular olfactory PNs are cholinergic */
        {"KC", +1},      /* Kenyon cells are cholinergic */
        {"LN", -1},      /* antennal-lobe and other local neurons: GABA / GluCl, inhibitory */
    };
    return bl_import_policy_rules(+1, rules, sizeof rules / sizeof rules[0], out, err);
}

typedef struct raw_edge {
    int64_t pre, post; /* skids */
    int32_t count;
    uint64_t line;
} raw_edge;

typedef struct annot_ref {
    int64_t skid;
    uint64_t line;
    size_t row;   /* index into the annotation rows */
    int is_right; /* side: 0 left_id, 1 right_id */
} annot_ref;

typedef struct annot_row {
    char *celltype, *annotation, *cluster;
    uint64_t line;
} annot_row;

typedef struct larva {
    const char *edges_path, *annot_path;
    raw_edge *raw;
    uint64_t n_raw;
    int64_t *skids; /* neurons, ascending */
    uint64_t n;
    annot_row *rows;
    size_t n_rows;
    annot_ref *refs;
    size_t n_refs;
    int64_t *neuron_ref; /* per neuron: index into refs, or -1 */
} larva;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_ref(const void *a, const void *b)
{
    const annot_ref *x = a, *y = b;
    if (x->skid != y->skid)
        return x->skid < y->skid ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int64_t neuron_of(const larva *L, int64_t skid)
{
    const int64_t *hit = bsearch(&skid, L->skids, (size_t)L->n, sizeof *L->skids, cmp_i64);
    return hit ? hit - L->skids : -1;
}

static bl_status grow(void **buf, size_t *cap, size_t need, size_t elem, bl_error *err,
                      const char *path)
{
    if (need <= *cap)
        return BL_OK;
    size_t c = *cap ? *cap : 1024;
    while (c < need) {
        if (c > SIZE_MAX / 2 / elem)
            return bl_fail(err, BL_ERR_NOMEM, "%s: table too large", path);
        c *= 2;
    }
    void *g = realloc(*buf, c * elem);
    if (!g)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    *buf = g;
    *cap = c;
    return BL_OK;
}

static bl_status read_edges(larva *L, bl_error *err)
{
    static const char *const cols[] = {"pre_skid", "post_skid", "all"};
    static const char *const parts[] = {"aa", "ad", "da", "dd"};
    size_t idx[3], nfields = 0;
    bl_csv *csv = NULL;
    bl_status st = bl_import_open_table(L->edges_path, cols, 3, idx, &nfields, &csv, err);
    if (st != BL_OK)
        return st;
    /* The compartment columns are optional; when all four are present they
     * must add up to `all`, which catches a column shifted or mislabelled. */
    size_t part_idx[4];
    int have_parts = 1;
    for (size_t k = 0; k < 4; k++) {
        size_t found = SIZE_MAX;
        for (size_t i = 0; i < nfields; i++)
            if (!strcmp(bl_csv_field(csv, i), parts[k]))
                found = i;
        part_idx[k] = found;
        if (found == SIZE_MAX)
            have_parts = 0;
    }
    size_t cap = 0;
    int r;
    while ((r = bl_csv_next(csv, err)) == 1) {
        if ((st = bl_csv_expect_fields(csv, nfields, err)) != BL_OK)
            goto done;
        if ((st = grow((void **)&L->raw, &cap, (size_t)L->n_raw + 1, sizeof *L->raw, err,
                       L->edges_path)) != BL_OK)
            goto done;
        raw_edge *e = &L->raw[L->n_raw];
        int64_t v = 0;
        e->line = bl_csv_line(csv);
        if ((st = bl_csv_field_i64(csv, idx[0], 0, INT64_MAX, &e->pre, err)) != BL_OK ||
            (st = bl_csv_field_i64(csv, idx[1], 0, INT64_MAX, &e->post, err)) != BL_OK ||
            (st = bl_csv_field_i64(csv, idx[2], 1, INT32_MAX, &v, err)) != BL_OK)
            goto done;
        e->count = (int32_t)v;
        if (have_parts) {
            int64_t sum = 0;
            for (size_t k = 0; k < 4; k++) {
                int64_t part = 0;
                if ((st = bl_csv_field_i64(csv, part_idx[k], 0, INT32_MAX, &part, err)) != BL_OK)
                    goto done;
                sum += part;
            }
            if (sum != v) {
                st = bl_fail(err, BL_ERR_INVALID,
                             "%s:%llu: column all is %" PRId64 " but aa+ad+da+dd = %" PRId64,
                             L->edges_path, (unsigned long long)e->line, v, sum);
                goto done;
            }
        }
        L->n_raw++;
    }
    if (r < 0)
        st = err ? err->status : BL_ERR_FORMAT;
done:
    bl_csv_close(csv);
    return st;
}

static bl_status collect_neurons(larva *L, bl_error *err)
{
    if (L->n_raw > SIZE_MAX / 2 / sizeof(int64_t))
        return bl_fail(err, BL_ERR_NOMEM, "%s: too many edges", L->edges_path);
    size_t m = (size_t)L->n_raw * 2;
    L->skids = malloc((m ? m : 1) * sizeof *L->skids);
    if (!L->skids)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", L->edges_path);
    for (uint64_t e = 0; e < L->n_raw; e++) {
        L->skids[2 * e] = L->raw[e].pre;
        L->skids[2 * e + 1] = L->raw[e].post;
    }
    qsort(L->skids, m, sizeof *L->skids, cmp_i64);
    size_t n = 0;
    for (size_t i = 0; i < m; i++)
        if (n == 0 || L->skids[n - 1] != L->skids[i])
            L->skids[n++] = L->skids[i];
    if (n > BL_MAX_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "%s: %zu neurons exceed the limit of %" PRIu64,
                       L->edges_path, n, BL_MAX_NEURONS);
    L->n = n;
    return BL_OK;
}

/* Parse a left_id / right_id cell: "no pair" or a skid. */
static bl_status parse_id(const bl_csv *csv, size_t i, int64_t *skid, int *present,
                          bl_error *err)
{
    if (!strcmp(bl_csv_field(csv, i), NO_PAIR)) {
        *present = 0;
        return BL_OK;
    }
    *present = 1;
    return bl_csv_field_i64(csv, i, 0, INT64_MAX, skid, err);
}

static bl_status read_annotations(larva *L, bl_error *err)
{
    static const char *const cols[] = {"left_id", "right_id", "celltype",
                                       "additional_annotations", "level_7_cluster"};
    size_t idx[5], nfields = 0;
    bl_csv *csv = NULL;
    bl_status st = bl_import_open_table(L->annot_path, cols, 5, idx, &nfields, &csv, err);
    if (st != BL_OK)
        return st;
    size_t row_cap = 0, ref_cap = 0;
    int r;
    while ((r = bl_csv_next(csv, err)) == 1) {
        if ((st = bl_csv_expect_fields(csv, nfields, err)) != BL_OK)
            goto done;
        uint64_t line = bl_csv_line(csv);
        int64_t id[2] = {0, 0}, cluster = 0;
        int present[2] = {0, 0};
        if ((st = parse_id(csv, idx[0], &id[0], &present[0], err)) != BL_OK ||
            (st = parse_id(csv, idx[1], &id[1], &present[1], err)) != BL_OK ||
            (st = bl_import_field_text(csv, idx[2], "celltype", err)) != BL_OK ||
            (st = bl_import_field_text(csv, idx[3], "additional_annotations", err)) != BL_OK ||
            (strcmp(bl_csv_field(csv, idx[4]), NO_CLUSTER) &&
             (st = bl_csv_field_i64(csv, idx[4], 0, INT32_MAX, &cluster, err)) != BL_OK))
            goto done;
        int clustered = strcmp(bl_csv_field(csv, idx[4]), NO_CLUSTER) != 0;
        if (!present[0] && !present[1]) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%llu: both left_id and right_id are '%s'",
                         L->annot_path, (unsigned long long)line, NO_PAIR);
            goto done;
        }
        if ((st = grow((void **)&L->rows, &row_cap, L->n_rows + 1, sizeof *L->rows, err,
                       L->annot_path)) != BL_OK ||
            (st = grow((void **)&L->refs, &ref_cap, L->n_refs + 2, sizeof *L->refs, err,
                       L->annot_path)) != BL_OK)
            goto done;
        annot_row *a = &L->rows[L->n_rows];
        char buf[24] = "";
        if (clustered)
            snprintf(buf, sizeof buf, "%" PRId64, cluster);
        a->line = line;
        a->celltype = bl_import_strdup(bl_csv_field(csv, idx[2]));
        a->annotation = bl_import_strdup(bl_csv_field(csv, idx[3]));
        a->cluster = bl_import_strdup(buf);
        L->n_rows++; /* counted now so that cleanup frees what was copied */
        if (!a->celltype || !a->annotation || !a->cluster) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", L->annot_path);
            goto done;
        }
        for (int s = 0; s < 2; s++) {
            if (!present[s])
                continue;
            annot_ref *ref = &L->refs[L->n_refs++];
            ref->skid = id[s];
            ref->line = line;
            ref->row = L->n_rows - 1;
            ref->is_right = s;
        }
    }
    if (r < 0)
        st = err ? err->status : BL_ERR_FORMAT;
done:
    bl_csv_close(csv);
    return st;
}

/* A skid annotated twice would have two cell types: refuse it. */
static bl_status index_annotations(larva *L, bl_error *err)
{
    if (L->n_refs > 1)
        qsort(L->refs, L->n_refs, sizeof *L->refs, cmp_ref);
    for (size_t i = 1; i < L->n_refs; i++)
        if (L->refs[i].skid == L->refs[i - 1].skid)
            return bl_fail(err, BL_ERR_INVALID,
                           "%s:%llu: skid %" PRId64 " is already annotated at line %llu",
                           L->annot_path, (unsigned long long)L->refs[i].line, L->refs[i].skid,
                           (unsigned long long)L->refs[i - 1].line);
    L->neuron_ref = malloc((size_t)(L->n ? L->n : 1) * sizeof *L->neuron_ref);
    if (!L->neuron_ref)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", L->annot_path);
    for (uint64_t i = 0; i < L->n; i++)
        L->neuron_ref[i] = -1;
    /* Annotated skids with no edge are outside the matrix: ignored. */
    for (size_t i = 0; i < L->n_refs; i++) {
        int64_t k = neuron_of(L, L->refs[i].skid);
        if (k >= 0)
            L->neuron_ref[k] = (int64_t)i;
    }
    return BL_OK;
}

static void free_larva(larva *L)
{
    free(L->raw);
    free(L->skids);
    for (size_t i = 0; i < L->n_rows; i++) {
        free(L->rows[i].celltype);
        free(L->rows[i].annotation);
        free(L->rows[i].cluster);
    }
    free(L->rows);
    free(L->refs);
    free(L->neuron_ref);
}

/* What the manifest says about this data set; paths: the two raw files. */
static bl_import_info describe(const char *const *paths)
{
    static const char *const labels[2] = {EDGES_FILE, ANNOT_FILE};
    bl_import_info info = {
        .name = BL_IMPORT_LARVA_NAME,
        .description =
            "Drosophila melanogaster first-instar larva brain connectome: directed synapse "
            "counts summed over axon/dendrite compartments (all = aa+ad+da+dd), neurons in "
            "ascending skid order, cell types from annotations.csv; the data have no "
            "transmitters, so signs come from a cell-type sign policy",
        .source =
            "Winding et al. 2023 Science, Supplementary Data S1 (mirror "
            "github.com/brain-networks/larval-drosophila-connectome at "
            "15e065f5c29f08c96ccd64ea8fe0f51510629009); edge list derived from the five "
            "connectivity matrices, see data/" BL_IMPORT_LARVA_NAME "/PROVENANCE.md",
        .citation =
            "Winding M, Pedigo BD, Barnes CL, Patsolic HG, Park Y, Kazimiers T, Fushiki A, "
            "Andrade IV, Khandelwal A, Valdes-Aleman J, Li F, Randel N, Barsotti E, Correia A, "
            "Fetter RD, Hartenstein V, Priebe CE, Vogelstein JT, Cardona A, Zlatic M. The "
            "connectome of an insect brain. Science 379(6636):eadd9330 (2023). "
            "doi:10.1126/science.add9330",
        .licence =
            "CC BY 4.0 (licence of the bioRxiv preprint 10.1101/2022.11.28.516756; attribution "
            "required; see data/" BL_IMPORT_LARVA_NAME "/PROVENANCE.md)",
        .generator = "brainlesslab import larva",
        .sign_key = "celltype",
        .paths = paths,
        .labels = labels,
        .n_files = 2,
    };
    return info;
}

static bl_status import_larva(const char *data_dir, const bl_sign_policy *policy,
                              bl_connectome **out, bl_error *err)
{
    *out = NULL;
    larva L;
    memset(&L, 0, sizeof L);
    bl_sign_policy *own_policy = NULL;
    char *edges_path = bl_import_path(data_dir, EDGES_FILE);
    char *annot_path = bl_import_path(data_dir, ANNOT_FILE);
    bl_import_edge *edges = NULL;
    int8_t *signs = NULL;
    char **ids = NULL;
    const char **cols[7] = {NULL};
    bl_connectome *c = NULL;
    bl_status st = BL_OK;

    if (!edges_path || !annot_path) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", data_dir);
        goto done;
    }
    L.edges_path = edges_path;
    L.annot_path = annot_path;
    if (!policy) {
        if ((st = bl_sign_policy_default_larva(&own_policy, err)) != BL_OK)
            goto done;
        policy = own_policy;
    }
    if ((st = read_edges(&L, err)) != BL_OK || (st = collect_neurons(&L, err)) != BL_OK ||
        (st = read_annotations(&L, err)) != BL_OK || (st = index_annotations(&L, err)) != BL_OK)
        goto done;

    uint64_t n = L.n;
    size_t nn = (size_t)(n ? n : 1);
    signs = malloc(nn);
    ids = calloc(nn, sizeof *ids);
    for (int k = 0; k < 7; k++)
        cols[k] = calloc(nn, sizeof *cols[k]);
    edges = malloc((size_t)(L.n_raw ? L.n_raw : 1) * sizeof *edges);
    int ok = signs && ids && edges;
    for (int k = 0; k < 7; k++)
        ok = ok && cols[k];
    if (!ok) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", data_dir);
        goto done;
    }

    /* Columns: 0 cell_type, 1 annotation, 2 side, 3 cluster, 4 modality,
     * 5 transmitter, 6 sign. */
    for (uint64_t i = 0; i < n; i++) {
        char buf[24];
        snprintf(buf, sizeof buf, "%" PRId64, L.skids[i]);
        if (!(ids[i] = bl_import_strdup(buf))) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", data_dir);
            goto done;
        }
        const annot_row *row = NULL;
        const annot_ref *ref = NULL;
        if (L.neuron_ref[i] >= 0) {
            ref = &L.refs[L.neuron_ref[i]];
            row = &L.rows[ref->row];
        }
        char where[512];
        if (row)
            snprintf(where, sizeof where, "%s:%llu, column celltype", L.annot_path,
                     (unsigned long long)row->line);
        else
            snprintf(where, sizeof where, "skid %s (in %s, not annotated in %s)", buf,
                     L.edges_path, L.annot_path);
        int sign = 0;
        if ((st = bl_sign_policy_lookup(policy, row ? row->celltype : "", where, &sign, err)) !=
            BL_OK)
            goto done;
        signs[i] = (int8_t)sign;
        cols[0][i] = row ? row->celltype : "";
        cols[1][i] = row ? row->annotation : "";
        cols[2][i] = ref ? (ref->is_right ? "right" : "left") : "";
        cols[3][i] = row ? row->cluster : "";
        /* For sensory neurons the annotation is exactly the modality
         * ("olfactory", "visual", ...): a column of its own lets a plan pick
         * the ORNs with one equality test. */
        cols[4][i] = (row && !strcmp(row->celltype, "sensory")) ? row->annotation : "";
        cols[5][i] = "";
        cols[6][i] = sign > 0 ? "+1" : "-1";
    }
    for (uint64_t e = 0; e < L.n_raw; e++) {
        edges[e].pre = (int32_t)neuron_of(&L, L.raw[e].pre);
        edges[e].post = (int32_t)neuron_of(&L, L.raw[e].post);
        edges[e].count = L.raw[e].count;
        edges[e].line = L.raw[e].line;
    }
    static const char *const names[7] = {"cell_type", "annotation",  "side", "cluster",
                                          "modality",  "transmitter", "sign"};
    const char *const paths[2] = {L.edges_path, L.annot_path};
    bl_import_info info = describe(paths);
    st = bl_import_assemble(L.edges_path, edges, L.n_raw, n, signs, (const char *const *)ids, 7, names,
                            (const char **const *)cols, policy, &info, &c, err);

done:
    *out = st == BL_OK ? c : NULL;
    if (ids)
        for (uint64_t i = 0; i < L.n; i++)
            free(ids[i]);
    free(ids);
    for (int k = 0; k < 7; k++)
        free((void *)cols[k]);
    free(signs);
    free(edges);
    free_larva(&L);
    bl_sign_policy_destroy(own_policy);
    free(edges_path);
    free(annot_path);
    return st;
}

/* The public entry point: the input ledger is open while it reads, so the
 * manifest names the bytes parsed (import_common.h, bl_import_set_source). */
bl_status bl_import_larva(const char *data_dir, const bl_sign_policy *policy, bl_connectome **out, bl_error *err)
{
    bl_inputs_begin();
    bl_status st = import_larva(data_dir, policy, out, err);
    bl_inputs_end();
    return st;
}

/* ---- the importer table's row ---- */

static const bl_import_option larva_options[] = {
    {"--data", "DIR", 0, "folder holding the set's CSV files (default data/" BL_IMPORT_LARVA_NAME ", relative to the current directory)"},
    {"--sign-policy", "FILE", 0, "CSV key,sign applied over the built-in policy (keys: cell types; 'default' and 'unknown' set those signs; docs/sign-policy.md)"},
    {NULL, NULL, 0, NULL},
};

static bl_status run_larva(const bl_import_args *args, bl_connectome **out, char **report, bl_error *err)
{
    (void)report;
    return bl_import_run_shipped(args, "data/" BL_IMPORT_LARVA_NAME, bl_sign_policy_default_larva, bl_import_larva, out, err);
}

BL_IMPORTER_RUN(run_larva)

const bl_importer bl_importer_larva = {"larva", "Drosophila L1 larva, Winding et al. 2023 (shipped in data/)", larva_options, run_larva_ledgered};
