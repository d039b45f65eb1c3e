/* Operation "audit": a connectome described, not simulated, into a sealed record.
 *   audit.json       per population: counts per value of every chosen column;
 *                    the hierarchy (layers, sizes, sizes per type, degree
 *                    summaries, layer-to-layer edge statistics); whole-graph degrees
 *   layers.csv       index, external_id, layer, depth, then every metadata column
 *   layer_edges.npy  int64 [2 measure][2 sign][L from][L to]: measure 0 = edges,
 *                    1 = summed |synapse count|; sign 0 = excitatory, 1 = inhibitory */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/analysis.h"
#include "brainlesslab/csv.h"
#include "brainlesslab/experiment.h"
#include "experiment/xp_impl.h"

#define PRINTED_TYPES 4

struct bl_audit {
    char record_dir[4096];
    char plan_id[160];
    int has_hierarchy;
    bl_audit_hierarchy h;
    char source[160];
    /* per layer: the most common types, for the printout */
    char top_types[BL_AUDIT_MAX_LAYERS][PRINTED_TYPES][64];
    uint64_t top_counts[BL_AUDIT_MAX_LAYERS][PRINTED_TYPES];
    size_t n_pops;
    char (*pop_names)[160];
    uint64_t *pop_sizes;
    uint64_t n_neurons, n_edges;
};

typedef struct tally {
    const char *value;
    uint64_t n;
} tally;

static int cmp_value(const void *a, const void *b)
{
    return strcmp(((const tally *)a)->value, ((const tally *)b)->value);
}

static int cmp_count(const void *a, const void *b)
{
    const tally *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->value, y->value);
}

/* Values of column `col` over neurons (or over the neurons whose layer is
 * `which`, when layer is given), counted; sorted by count then value. Returns
 * the number of distinct values in t (sized n). */
static size_t count_values(const bl_connectome *c, size_t col, const int32_t *neurons, size_t n,
                           const uint8_t *layer, int which, tally *t)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t j = neurons ? (uint64_t)neurons[i] : i;
        if (layer && layer[j] != which)
            continue;
        t[k++] = (tally){bl_connectome_value(c, col, j), 1};
    }
    qsort(t, k, sizeof *t, cmp_value);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u && !strcmp(t[u - 1].value, t[i].value))
            t[u - 1].n++;
        else
            t[u++] = t[i];
    qsort(t, u, sizeof *t, cmp_count);
    return u;
}

static cJSON *tally_json(const tally *t, size_t u)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < u; i++)
        cJSON_AddNumberToObject(o, t[i].value, (double)t[i].n);
    return o;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* min, median (lower middle for an even count: an element, never a mean),
 * mean and max of the degrees of the neurons in a layer (or all). */
static cJSON *degree_summary(const int32_t *deg, uint64_t n, const uint8_t *layer, int which, int32_t *scratch)
{
    uint64_t k = 0;
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        if (!layer || layer[i] == which) {
            scratch[k++] = deg[i];
            sum += deg[i];
        }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "neurons", (double)k);
    if (!k)
        return o;
    qsort(scratch, k, sizeof *scratch, cmp_i32);
    cJSON_AddNumberToObject(o, "min", scratch[0]);
    cJSON_AddNumberToObject(o, "median", scratch[(k - 1) / 2]);
    cJSON_AddNumberToObject(o, "mean", sum / (double)k);
    cJSON_AddNumberToObject(o, "max", scratch[k - 1]);
    cJSON_AddNumberToObject(o, "total", sum);
    return o;
}

static cJSON *matrix_json(const int64_t m[BL_AUDIT_MAX_LAYERS][BL_AUDIT_MAX_LAYERS], int L)
{
    cJSON *rows = cJSON_CreateArray();
    for (int a = 0; rows && a < L; a++) {
        cJSON *row = cJSON_CreateArray();
        for (int b = 0; row && b < L; b++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber((double)m[a][b]));
        cJSON_AddItemToArray(rows, row);
    }
    return rows;
}

static bl_status write_layers_csv(bl_record *rec, const bl_connectome *c, const bl_audit_hierarchy *h,
                                  const int32_t *depth, const uint8_t *layer, bl_error *err)
{
    char path[4096];
    bl_status st = bl_record_path(rec, "layers.csv", path, sizeof path, err);
    if (st)
        return st;
    FILE *f = fopen(path, "w");
    if (!f)
        return bl_fail(err, BL_ERR_IO, "%s: cannot create", path);
    size_t nc = bl_connectome_n_columns(c);
    const char *head[] = {"index", "external_id", "layer", "depth"};
    for (int k = 0; k < 4; k++)
        bl_csv_write_field(f, head[k], k == 3 && nc == 0);
    for (size_t j = 0; j < nc; j++)
        bl_csv_write_field(f, bl_connectome_column_name(c, j), j + 1 == nc);
    uint64_t n = bl_connectome_n_neurons(c);
    for (uint64_t i = 0; i < n; i++) {
        char idx[24], d[16];
        snprintf(idx, sizeof idx, "%" PRIu64, i);
        snprintf(d, sizeof d, "%" PRId32, depth[i]);
        bl_csv_write_field(f, idx, 0);
        bl_csv_write_field(f, bl_connectome_external_id(c, i), 0);
        bl_csv_write_field(f, h->names[layer[i]], 0);
        bl_csv_write_field(f, d, nc == 0);
        for (size_t j = 0; j < nc; j++)
            bl_csv_write_field(f, bl_connectome_value(c, j, i), j + 1 == nc);
    }
    int bad = ferror(f);
    if (fclose(f) || bad)
        return bl_fail(err, BL_ERR_IO, "%s: write failed", path);
    return BL_OK;
}

static bl_status audit_body(bl_audit *a, const bl_plan *plan, bl_record *rec, bl_xp_log *log, bl_error *err)
{
    const bl_connectome *c = bl_plan_connectome(plan);
    const bl_plan_audit *spec = bl_plan_audit_spec(plan);
    uint64_t n = bl_connectome_n_neurons(c);
    tally *t = malloc((n ? n : 1) * sizeof *t);
    int32_t *in = malloc((n ? n : 1) * sizeof *in), *out = malloc((n ? n : 1) * sizeof *out);
    int32_t *scratch = malloc((n ? n : 1) * sizeof *scratch), *depth = malloc((n ? n : 1) * sizeof *depth);
    uint8_t *layer = malloc(n ? n : 1), *split = NULL;
    a->pop_names = calloc(spec->n_populations ? spec->n_populations : 1, sizeof *a->pop_names);
    a->pop_sizes = calloc(spec->n_populations ? spec->n_populations : 1, sizeof *a->pop_sizes);
    cJSON *o = cJSON_CreateObject();
    bl_status st = t && in && out && scratch && depth && layer && a->pop_names && a->pop_sizes && o
                       ? BL_OK
                       : bl_fail(err, BL_ERR_NOMEM, "cannot allocate the audit of %" PRIu64 " neurons", n);
    if (!st)
        st = bl_degrees(c, in, out, err);
    if (st)
        goto done;

    cJSON_AddStringToObject(o, "plan_id", bl_plan_id(plan));
    cJSON_AddStringToObject(o, "plan_hash", bl_plan_hash(plan));
    cJSON *cj = cJSON_AddObjectToObject(o, "connectome");
    const char *cname = bl_connectome_info(c, "name");
    cJSON_AddStringToObject(cj, "name", cname ? cname : "");
    cJSON_AddStringToObject(cj, "manifest_sha256", bl_plan_connectome_sha256(plan));
    cJSON_AddNumberToObject(cj, "neurons", (double)n);
    cJSON_AddNumberToObject(cj, "edges", (double)bl_connectome_n_edges(c));
    cJSON_AddNumberToObject(cj, "synapses", (double)bl_connectome_n_synapses(c));
    cJSON *deg = cJSON_AddObjectToObject(o, "degrees");
    cJSON_AddItemToObject(deg, "in_degree", degree_summary(in, n, NULL, 0, scratch));
    cJSON_AddItemToObject(deg, "out_degree", degree_summary(out, n, NULL, 0, scratch));

    /* Per population: every chosen column broken down (the seed's field_breakdown). */
    cJSON *pops = cJSON_AddArrayToObject(o, "populations");
    a->n_pops = spec->n_populations;
    for (size_t p = 0; p < spec->n_populations; p++) {
        const bl_plan_population *pop = spec->populations[p];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", pop->name);
        cJSON_AddRawToObject(e, "selector", pop->selector);
        cJSON_AddNumberToObject(e, "size", (double)pop->n_neurons);
        snprintf(a->pop_names[p], sizeof a->pop_names[p], "%s", pop->name);
        a->pop_sizes[p] = pop->n_neurons;
        cJSON *br = cJSON_AddObjectToObject(e, "breakdown");
        for (size_t k = 0; k < spec->n_columns; k++) {
            int col = bl_connectome_column(c, spec->columns[k]);
            size_t u = count_values(c, (size_t)col, pop->neurons, pop->n_neurons, NULL, 0, t);
            cJSON_AddItemToObject(br, spec->columns[k], tally_json(t, u));
        }
        cJSON_AddItemToArray(pops, e);
    }
    bl_xp_logf(log, "broke down %zu population(s) by %zu column(s)", spec->n_populations, spec->n_columns);

    if (spec->source) {
        a->has_hierarchy = 1;
        snprintf(a->source, sizeof a->source, "%s", spec->source->name);
        if (spec->split) {
            if (!(split = calloc(n ? n : 1, 1))) {
                st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the split flags");
                goto done;
            }
            for (size_t i = 0; i < spec->split->n_neurons; i++)
                split[spec->split->neurons[i]] = 1;
        }
        if ((st = bl_audit_layers(c, spec->source->neurons, spec->source->n_neurons, split, depth, layer, &a->h,
                                  err)))
            goto done;
        const bl_audit_hierarchy *h = &a->h;
        int L = h->n_layers;
        cJSON *hj = cJSON_AddObjectToObject(o, "hierarchy");
        cJSON_AddStringToObject(hj, "source", spec->source->name);
        cJSON_AddStringToObject(hj, "split_higher", spec->split ? spec->split->name : "");
        cJSON_AddStringToObject(hj, "type_column", spec->type_column);
        cJSON_AddStringToObject(hj, "definition",
                                "exclusive directed shortest-path depth (edges) from the source population: "
                                "sensory = depth 0, first_order = 1, second_order = 2, higher = depth >= 3 "
                                "(inside split_higher when given; central = depth >= 3 outside it), "
                                "unreached = no path from the source");
        int col = spec->type_column[0] ? bl_connectome_column(c, spec->type_column) : -1;
        cJSON *layers = cJSON_AddArrayToObject(hj, "layers");
        for (int l = 0; l < L; l++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "name", h->names[l]);
            cJSON_AddNumberToObject(e, "layer", l);
            cJSON_AddNumberToObject(e, "size", (double)h->sizes[l]);
            if (col >= 0) {
                size_t u = count_values(c, (size_t)col, NULL, n, layer, l, t);
                cJSON_AddItemToObject(e, "by_type", tally_json(t, u));
                for (size_t k = 0; k < u && k < PRINTED_TYPES; k++) {
                    snprintf(a->top_types[l][k], sizeof a->top_types[l][k], "%s", t[k].value[0] ? t[k].value : "(empty)");
                    a->top_counts[l][k] = t[k].n;
                }
            }
            cJSON_AddItemToObject(e, "in_degree", degree_summary(in, n, layer, l, scratch));
            cJSON_AddItemToObject(e, "out_degree", degree_summary(out, n, layer, l, scratch));
            cJSON_AddItemToArray(layers, e);
        }
        cJSON *order = cJSON_AddArrayToObject(hj, "layer_order");
        for (int l = 0; l < L; l++)
            cJSON_AddItemToArray(order, cJSON_CreateString(h->names[l]));
        cJSON *edges = cJSON_AddObjectToObject(hj, "edges");
        static const char *const signs[] = {"excitatory", "inhibitory"};
        for (int s = 0; s < 2; s++) {
            cJSON *sj = cJSON_AddObjectToObject(edges, signs[s]);
            cJSON_AddItemToObject(sj, "edge_counts", matrix_json(h->edges[0][s], L));
            cJSON_AddItemToObject(sj, "synapse_sums", matrix_json(h->edges[1][s], L));
        }
        cJSON_AddStringToObject(edges, "layer_edges_npy",
                                "int64 [2 measure][2 sign][from layer][to layer]; measure 0 = edges, 1 = summed "
                                "|synapse count|; sign 0 = excitatory, 1 = inhibitory; layers in layer_order");
        bl_xp_logf(log, "hierarchy from %s: %d layers", spec->source->name, L);

        int64_t *flat = malloc(4 * (size_t)L * (size_t)L * sizeof *flat);
        if (!flat) {
            st = bl_fail(err, BL_ERR_NOMEM, "cannot allocate the layer edge table");
            goto done;
        }
        size_t k = 0;
        for (int m = 0; m < 2; m++)
            for (int s = 0; s < 2; s++)
                for (int x = 0; x < L; x++)
                    for (int y = 0; y < L; y++)
                        flat[k++] = h->edges[m][s][x][y];
        uint64_t shape[4] = {2, 2, (uint64_t)L, (uint64_t)L};
        st = bl_xp_write_npy(rec, "layer_edges.npy", BL_DTYPE_INT64, 4, shape, flat, err);
        free(flat);
        if (!st)
            st = write_layers_csv(rec, c, h, depth, layer, err);
        if (st)
            goto done;
    }
    st = bl_xp_write_json(rec, "audit.json", o, err);
    o = NULL;
    bl_xp_logf(log, "wrote audit.json%s", a->has_hierarchy ? ", layers.csv, layer_edges.npy" : "");
done:
    cJSON_Delete(o);
    free(t);
    free(in);
    free(out);
    free(scratch);
    free(depth);
    free(layer);
    free(split);
    return st;
}

bl_status bl_audit_run(const bl_plan *plan, const bl_experiment_options *opt, bl_audit **out, bl_error *err)
{
    *out = NULL;
    if (!bl_plan_audit_spec(plan))
        return bl_fail(err, BL_ERR_INVALID, "%s: operation \"%s\" is not an audit", bl_plan_path(plan),
                       bl_plan_operation(plan));
    bl_audit *a = calloc(1, sizeof *a);
    if (!a)
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate an audit");
    snprintf(a->plan_id, sizeof a->plan_id, "%s", bl_plan_id(plan));
    a->n_neurons = bl_connectome_n_neurons(bl_plan_connectome(plan));
    a->n_edges = bl_connectome_n_edges(bl_plan_connectome(plan));
    bl_record *rec = NULL;
    bl_status st = bl_xp_reserve(plan, opt->root, &rec, err);
    if (st) {
        free(a);
        return st;
    }
    snprintf(a->record_dir, sizeof a->record_dir, "%s", bl_record_dir(rec));
    bl_xp_log log;
    bl_xp_log_open(&log, rec);
    bl_xp_logf(&log, "audit %s (plan %.12s)", bl_plan_id(plan), bl_plan_hash(plan));
    st = bl_xp_protect(rec, opt, 0, err);
    if (!st)
        st = bl_xp_begin(plan, rec, err);
    if (!st)
        st = audit_body(a, plan, rec, &log, err);
    st = bl_xp_end(rec, &log, st, err);
    bl_record_destroy(rec);
    if (st) {
        bl_audit_destroy(a);
        return st;
    }
    *out = a;
    return BL_OK;
}

void bl_audit_destroy(bl_audit *a)
{
    if (!a)
        return;
    free(a->pop_names);
    free(a->pop_sizes);
    free(a);
}

const char *bl_audit_record_dir(const bl_audit *a) { return a->record_dir; }

void bl_audit_print(const bl_audit *a, FILE *f)
{
    fprintf(f, "%s: audit of %" PRIu64 " neurons, %" PRIu64 " edges\n", a->plan_id, a->n_neurons, a->n_edges);
    for (size_t p = 0; p < a->n_pops; p++)
        fprintf(f, "  population %-24s %8" PRIu64 " neurons\n", a->pop_names[p], a->pop_sizes[p]);
    if (a->has_hierarchy) {
        fprintf(f, "\n  hierarchy from %s (shortest directed path):\n", a->source);
        fprintf(f, "  %-13s %8s  %s\n", "layer", "neurons", "most common types");
        for (int l = 0; l < a->h.n_layers; l++) {
            fprintf(f, "  %-13s %8" PRIu64 " ", a->h.names[l], a->h.sizes[l]);
            for (int k = 0; k < PRINTED_TYPES && a->top_counts[l][k]; k++)
                fprintf(f, " %s %" PRIu64 "%s", a->top_types[l][k], a->top_counts[l][k],
                        k + 1 < PRINTED_TYPES && a->top_counts[l][k + 1] ? "," : "");
            fputc('\n', f);
        }
    }
    fprintf(f, "\n  record: %s (audit.json%s)\n", a->record_dir, a->has_hierarchy ? ", layers.csv, layer_edges.npy" : "");
}
