/* The in-memory connectome: CSR graph, neuron table, descriptive info.
 * Loading and saving directories lives in connectome_dir.c. */
#define _GNU_SOURCE /* qsort_r */
#include "connectome/connectome_impl.h"
#include "core/invariant.h"

#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bl_connectome_info_keys[BL_INFO_COUNT] = {
    "name", "description", "source", "citation", "licence", "sign_policy", "generator"};

bl_status bl_offsets_validate(const char *where, uint64_t n, uint64_t e, const int64_t *offsets, bl_error *err)
{
    if (n > BL_MAX_NEURONS)
        return bl_fail(err, BL_ERR_INVALID, "%s: %" PRIu64 " neurons exceeds the limit %" PRIu64,
                       where, n, BL_MAX_NEURONS);
    if (offsets[0] != 0)
        return bl_fail(err, BL_ERR_INVALID, "%s/offsets.npy: index 0: first offset is %" PRId64
                       ", expected 0", where, offsets[0]);
    for (uint64_t i = 0; i < n; i++) {
        if (offsets[i + 1] < offsets[i])
            return bl_fail(err, BL_ERR_INVALID,
                           "%s/offsets.npy: index %" PRIu64 ": offset %" PRId64
                           " is below the previous offset %" PRId64 " (offsets must not decrease)",
                           where, i + 1, offsets[i + 1], offsets[i]);
        if ((uint64_t)offsets[i + 1] > e)
            return bl_fail(err, BL_ERR_INVALID,
                           "%s/offsets.npy: index %" PRIu64 ": offset %" PRId64
                           " exceeds the edge count %" PRIu64, where, i + 1, offsets[i + 1], e);
    }
    if ((uint64_t)offsets[n] != e)
        return bl_fail(err, BL_ERR_INVALID,
                       "%s/offsets.npy: index %" PRIu64 ": last offset %" PRId64
                       " differs from the edge count %" PRIu64, where, n, offsets[n], e);
    return BL_OK;
}

bl_status bl_csr_validate(const char *where, uint64_t n, uint64_t e, const int64_t *offsets,
                          const int32_t *targets, const int32_t *counts, bl_error *err)
{
    bl_status st = bl_offsets_validate(where, n, e, offsets, err);
    if (st)
        return st;
    for (uint64_t i = 0; i < n; i++) {
        for (int64_t k = offsets[i]; k < offsets[i + 1]; k++) {
            int32_t t = targets[k];
            if (t < 0 || (uint64_t)t >= n)
                return bl_fail(err, BL_ERR_INVALID,
                               "%s/targets.npy: index %" PRId64 " (row %" PRIu64
                               "): target %" PRId32 " outside 0..%" PRIu64,
                               where, k, i, t, n ? n - 1 : 0);
            if (k > offsets[i] && t <= targets[k - 1])
                return bl_fail(err, BL_ERR_INVALID,
                               "%s/targets.npy: index %" PRId64 " (row %" PRIu64 "): target %" PRId32
                               " %s previous target %" PRId32 " (rows must be ascending, no duplicates)",
                               where, k, i, t, t == targets[k - 1] ? "repeats the" : "is below the",
                               targets[k - 1]);
            if (counts[k] == 0)
                return bl_fail(err, BL_ERR_INVALID,
                               "%s/counts.npy: index %" PRId64 " (edge %" PRIu64 "->%" PRId32
                               "): synapse count is 0", where, k, i, t);
            if (counts[k] == INT32_MIN)
                return bl_fail(err, BL_ERR_INVALID,
                               "%s/counts.npy: index %" PRId64 ": synapse count out of range", where, k);
        }
    }
    return BL_OK;
}

int bl_connectome_sane(const bl_connectome *c, bl_error *why)
{
    if (!c || !c->offsets || (!c->targets && c->n_stored_edges))
        return BL_BROKEN(why, "connectome: no CSR arrays");
    if (c->parts < 1 || c->part < 0 || c->part >= c->parts)
        return BL_BROKEN(why, "connectome: part %d of %d", c->part, c->parts);
    const uint64_t n = c->n_neurons, e = c->n_stored_edges;
    if (c->offsets[0] != 0 || (uint64_t)c->offsets[n] != e)
        return BL_BROKEN(why, "connectome CSR: offsets run from %" PRId64 " to %" PRId64 ", not from 0 to the %" PRIu64
                         " stored edges", c->offsets[0], c->offsets[n], e);
    if (c->parts == 1 && e != c->n_edges)
        return BL_BROKEN(why, "connectome CSR: %" PRIu64 " stored edges of %" PRIu64 " in a whole connectome", e,
                         c->n_edges);
    int32_t lo = 0, hi = (int32_t)n; /* a part stores only the edges into its range */
    if (c->parts > 1) {
        if (!c->part_bounds || !c->in_degree)
            return BL_BROKEN(why, "connectome part %d: no part bounds or in-degrees", c->part);
        lo = c->part_bounds[c->part];
        hi = c->part_bounds[c->part + 1];
    }
    if (e && !c->counts && !(c->parts > 1 && c->counts16))
        return BL_BROKEN(why, "connectome CSR: %" PRIu64 " edges and no counts", e);
    uint64_t synapses = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (c->offsets[i + 1] < c->offsets[i])
            return BL_BROKEN(why, "connectome CSR: offsets decrease at row %" PRIu64 " (%" PRId64 " -> %" PRId64 ")", i,
                             c->offsets[i], c->offsets[i + 1]);
        for (int64_t k = c->offsets[i]; k < c->offsets[i + 1]; k++) {
            int32_t t = c->targets[k], w = c->counts ? c->counts[k] : c->counts16[k];
            if (t < lo || t >= hi)
                return BL_BROKEN(why, "connectome CSR: edge %" PRId64 " (row %" PRIu64 ") targets %d, outside [%d, %d)",
                                 k, i, t, lo, hi);
            if (k > c->offsets[i] && t <= c->targets[k - 1])
                return BL_BROKEN(why, "connectome CSR: row %" PRIu64 " targets not ascending and unique at edge %" PRId64
                                 " (%d after %d)", i, k, t, c->targets[k - 1]);
            if (w == 0 || w == INT32_MIN)
                return BL_BROKEN(why, "connectome CSR: edge %" PRId64 " (row %" PRIu64 ") has count %d", k, i, w);
            synapses += (uint64_t)(w < 0 ? -(int64_t)w : w);
        }
    }
    if (c->parts == 1 && synapses != c->n_synapses)
        return BL_BROKEN(why, "connectome CSR: the counts sum to %" PRIu64 " synapses, the header says %" PRIu64,
                         synapses, c->n_synapses);
    return 1;
}

static char *dup_str(const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = malloc(len);
    if (d)
        memcpy(d, s, len);
    return d;
}

static void free_ids(bl_connectome *c)
{
    free(c->ids);
    free(c->id_arena);
    free(c->id_sorted);
    c->ids = NULL;
    c->id_arena = NULL;
    c->id_sorted = NULL;
}

/* Strings of a neuron table live in one block per column (a FlyWire-scale
 * table is ~10^5 x columns strings; one malloc each cost more than the
 * strings). pack: every string copied, *ptrs[i] into *arena. */
static int pack_strings(const char *const *src, uint64_t n, char ***ptrs, char **arena)
{
    size_t total = 1;
    for (uint64_t i = 0; i < n; i++)
        total += strlen(src[i] ? src[i] : "") + 1;
    *ptrs = malloc((n ? n : 1) * sizeof **ptrs);
    *arena = malloc(total);
    if (!*ptrs || !*arena) {
        free(*ptrs);
        free(*arena);
        *ptrs = NULL;
        *arena = NULL;
        return 0;
    }
    size_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *v = src[i] ? src[i] : "";
        size_t len = strlen(v) + 1;
        memcpy(*arena + at, v, len);
        (*ptrs)[i] = *arena + at;
        at += len;
    }
    return 1;
}

/* intern: equal values share one copy (metadata repeats a few cell types
 * across all neurons). */
static int cmp_value_plain(const char *x, const char *y)
{
    return strcmp(x ? x : "", y ? y : "");
}

/* qsort_r (glibc): the base travels with the call, so concurrent loads in
 * one process never share a sort (no file-scope state). */
static int cmp_value(const void *a, const void *b, void *base)
{
    const char *const *values = base;
    const char *x = values[*(const int32_t *)a], *y = values[*(const int32_t *)b];
    return strcmp(x ? x : "", y ? y : "");
}

static int intern_strings(const char *const *src, uint64_t n, char ***ptrs, char **arena)
{
    int32_t *order = malloc((n ? n : 1) * sizeof *order);
    *ptrs = malloc((n ? n : 1) * sizeof **ptrs);
    if (!order || !*ptrs) {
        free(order);
        free(*ptrs);
        *ptrs = NULL;
        return 0;
    }
    for (uint64_t i = 0; i < n; i++)
        order[i] = (int32_t)i;
    qsort_r(order, n, sizeof *order, cmp_value, (void *)src);
    size_t total = 1;
    for (uint64_t k = 0; k < n; k++)
        if (k == 0 || cmp_value_plain(src[order[k]], src[order[k - 1]]))
            total += strlen(src[order[k]] ? src[order[k]] : "") + 1;
    if (!(*arena = malloc(total))) {
        free(order);
        free(*ptrs);
        *ptrs = NULL;
        return 0;
    }
    size_t at = 0;
    char *last = NULL;
    for (uint64_t k = 0; k < n; k++) {
        const char *v = src[order[k]] ? src[order[k]] : "";
        if (!last || strcmp(last, v)) {
            size_t len = strlen(v) + 1;
            memcpy(*arena + at, v, len);
            last = *arena + at;
            at += len;
        }
        (*ptrs)[order[k]] = last;
    }
    free(order);
    return 1;
}

static int cmp_id(const void *a, const void *b, void *base)
{
    char **ids = base;
    return strcmp(ids[*(const int32_t *)a], ids[*(const int32_t *)b]);
}

static bl_status index_ids(bl_connectome *c, bl_error *err)
{
    c->id_sorted = malloc((c->n_neurons ? c->n_neurons : 1) * sizeof *c->id_sorted);
    if (!c->id_sorted)
        return bl_fail(err, BL_ERR_NOMEM, "cannot index %" PRIu64 " neuron ids", c->n_neurons);
    for (uint64_t i = 0; i < c->n_neurons; i++)
        c->id_sorted[i] = (int32_t)i;
    qsort_r(c->id_sorted, c->n_neurons, sizeof *c->id_sorted, cmp_id, c->ids);
    for (uint64_t i = 1; i < c->n_neurons; i++) {
        int32_t a = c->id_sorted[i - 1], b = c->id_sorted[i];
        if (!strcmp(c->ids[a], c->ids[b]))
            return bl_fail(err, BL_ERR_INVALID,
                           "external id '%s' is used by neurons %" PRId32 " and %" PRId32
                           " (ids must be unique)", c->ids[a], a < b ? a : b, a < b ? b : a);
    }
    return BL_OK;
}

bl_status bl_connectome_adopt(uint64_t n, uint64_t e, int64_t *offsets, int32_t *targets,
                              int32_t *counts, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    bl_status st = bl_csr_validate("connectome", n, e, offsets, targets, counts, err);
    if (st) {
        free(offsets);
        free(targets);
        free(counts);
        return st;
    }
    return bl_connectome_adopt_validated(n, e, offsets, targets, counts, out, err);
}

bl_status bl_connectome_adopt_validated(uint64_t n, uint64_t e, int64_t *offsets, int32_t *targets,
                                        int32_t *counts, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    bl_connectome *c = calloc(1, sizeof *c);
    if (!c) {
        free(offsets);
        free(targets);
        free(counts);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a connectome");
    }
    c->n_neurons = n;
    c->n_edges = e;
    c->n_stored_edges = e;
    c->part = 0;
    c->parts = 1;
    c->offsets = offsets;
    c->targets = targets;
    c->counts = counts;
    for (uint64_t k = 0; counts && k < e; k++)
        c->n_synapses += (uint64_t)(counts[k] < 0 ? -(int64_t)counts[k] : counts[k]);
    /* Default external ids: the indices, written into one block. */
    c->ids = malloc((n ? n : 1) * sizeof *c->ids);
    c->id_arena = malloc((n ? n : 1) * 11 + 1);
    if (!c->ids || !c->id_arena) {
        bl_connectome_destroy(c);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate %" PRIu64 " neuron ids", n);
    }
    for (uint64_t i = 0, at = 0; i < n; i++) {
        c->ids[i] = c->id_arena + at;
        at += (size_t)snprintf(c->ids[i], 11, "%" PRIu64, i) + 1; /* i < 2^31: at most 10 digits */
    }
    if ((st = index_ids(c, err))) {
        bl_connectome_destroy(c);
        return st;
    }
    *out = c;
    return BL_OK;
}

void bl_connectome_destroy(bl_connectome *c)
{
    if (!c)
        return;
    free(c->offsets);
    free(c->targets);
    free(c->counts);
    free(c->part_bounds);
    free(c->in_degree);
    free(c->counts16);
    free(c->edge_weight);
    free(c->edge_delay_ms);
    free_ids(c);
    for (size_t j = 0; j < c->n_columns; j++) {
        free(c->column_values[j]);
        free(c->column_arenas[j]);
        free(c->column_names[j]);
    }
    free(c->column_arenas);
    free(c->column_values);
    free(c->column_names);
    for (int k = 0; k < BL_INFO_COUNT; k++)
        free(c->info[k]);
    free(c);
}

uint64_t bl_connectome_n_neurons(const bl_connectome *c) { return c->n_neurons; }
uint64_t bl_connectome_n_edges(const bl_connectome *c) { return c->n_edges; }
uint64_t bl_connectome_n_synapses(const bl_connectome *c) { return c->n_synapses; }
const int64_t *bl_connectome_offsets(const bl_connectome *c) { return c->offsets; }
const int32_t *bl_connectome_targets(const bl_connectome *c) { return c->targets; }
const int32_t *bl_connectome_counts(const bl_connectome *c) { return c->counts; }
int bl_connectome_parts(const bl_connectome *c) { return c->parts; }
int bl_connectome_part(const bl_connectome *c) { return c->part; }
const int32_t *bl_connectome_part_bounds(const bl_connectome *c) { return c->part_bounds; }
const int32_t *bl_connectome_in_degree(const bl_connectome *c) { return c->in_degree; }
const int16_t *bl_connectome_counts16(const bl_connectome *c) { return c->counts16; }
uint64_t bl_connectome_n_stored_edges(const bl_connectome *c) { return c->n_stored_edges; }

void bl_split_by_work(const int32_t *in_degree, int32_t lo, int32_t hi, int parts, int32_t *bounds)
{
    assert(parts >= 1 && lo <= hi);
    uint64_t total = 0, acc = 0;
    for (int32_t i = lo; i < hi; i++)
        total += 1 + (uint64_t)in_degree[i];
    int q = 1;
    bounds[0] = lo;
    for (int32_t i = lo; i < hi && q < parts; i++) {
        acc += 1 + (uint64_t)in_degree[i];
        while (q < parts && acc * (uint64_t)parts >= total * (uint64_t)q)
            bounds[q++] = i + 1;
    }
    while (q <= parts)
        bounds[q++] = hi;
}

bl_status bl_connectome_set_external_ids(bl_connectome *c, const char *const *ids, bl_error *err)
{
    for (uint64_t i = 0; i < c->n_neurons; i++)
        if (!ids[i] || !ids[i][0] || strpbrk(ids[i], "\r\n"))
            return bl_fail(err, BL_ERR_INVALID, "neuron %" PRIu64 ": external id is %s", i,
                           ids[i] && ids[i][0] ? "not one line" : "empty");
    char **old = c->ids, *old_arena = c->id_arena;
    int32_t *old_sorted = c->id_sorted;
    if (!pack_strings(ids, c->n_neurons, &c->ids, &c->id_arena)) {
        c->ids = old;
        c->id_arena = old_arena;
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate neuron ids");
    }
    c->id_sorted = NULL;
    bl_status st = index_ids(c, err);
    if (st) { /* restore the previous ids */
        free_ids(c);
        c->ids = old;
        c->id_arena = old_arena;
        c->id_sorted = old_sorted;
        return st;
    }
    free(old);
    free(old_arena);
    free(old_sorted);
    return BL_OK;
}

const char *bl_connectome_external_id(const bl_connectome *c, uint64_t neuron)
{
    assert(neuron < c->n_neurons);
    return c->ids[neuron];
}

bl_status bl_connectome_find(const bl_connectome *c, const char *id, int32_t *neuron, bl_error *err)
{
    uint64_t lo = 0, hi = c->n_neurons;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->ids[c->id_sorted[mid]], id);
        if (cmp == 0) {
            *neuron = c->id_sorted[mid];
            return BL_OK;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return bl_fail(err, BL_ERR_INVALID, "unknown neuron id '%s'", id);
}

static int valid_column_name(const char *name)
{
    if (!name[0] || !strcmp(name, "index") || !strcmp(name, "external_id"))
        return 0;
    for (const char *p = name; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

bl_status bl_connectome_add_column(bl_connectome *c, const char *name, const char *const *values,
                                   bl_error *err)
{
    if (!valid_column_name(name))
        return bl_fail(err, BL_ERR_INVALID, "metadata column '%s': names are [a-z0-9_]+ and not "
                       "'index' or 'external_id'", name);
    if (bl_connectome_column(c, name) >= 0)
        return bl_fail(err, BL_ERR_INVALID, "metadata column '%s' already exists", name);
    for (uint64_t i = 0; i < c->n_neurons; i++)
        if (values[i] && strpbrk(values[i], "\r\n"))
            return bl_fail(err, BL_ERR_INVALID, "metadata column '%s', neuron %" PRIu64 ": value spans lines",
                           name, i);
    char **names = realloc(c->column_names, (c->n_columns + 1) * sizeof *names);
    if (names)
        c->column_names = names;
    char ***vals = realloc(c->column_values, (c->n_columns + 1) * sizeof *vals);
    if (vals)
        c->column_values = vals;
    char **arenas = realloc(c->column_arenas, (c->n_columns + 1) * sizeof *arenas);
    if (arenas)
        c->column_arenas = arenas;
    char *cname = dup_str(name), **col = NULL, *arena = NULL;
    if (!names || !vals || !arenas || !cname || !intern_strings(values, c->n_neurons, &col, &arena)) {
        free(cname);
        return bl_fail(err, BL_ERR_NOMEM, "cannot allocate metadata column '%s'", name);
    }
    c->column_names[c->n_columns] = cname;
    c->column_values[c->n_columns] = col;
    c->column_arenas[c->n_columns] = arena;
    c->n_columns++;
    return BL_OK;
}

size_t bl_connectome_n_columns(const bl_connectome *c) { return c->n_columns; }
const char *bl_connectome_column_name(const bl_connectome *c, size_t column)
{
    assert(column < c->n_columns);
    return c->column_names[column];
}

int bl_connectome_column(const bl_connectome *c, const char *name)
{
    for (size_t j = 0; j < c->n_columns; j++)
        if (!strcmp(c->column_names[j], name))
            return (int)j;
    return -1;
}

const char *bl_connectome_value(const bl_connectome *c, size_t column, uint64_t neuron)
{
    assert(column < c->n_columns && neuron < c->n_neurons);
    return c->column_values[column][neuron];
}

static int info_index(const char *key)
{
    for (int k = 0; k < BL_INFO_COUNT; k++)
        if (!strcmp(bl_connectome_info_keys[k], key))
            return k;
    return -1;
}

bl_status bl_connectome_set_info(bl_connectome *c, const char *key, const char *value, bl_error *err)
{
    int k = info_index(key);
    if (k < 0)
        return bl_fail(err, BL_ERR_INVALID, "unknown connectome info key '%s'", key);
    char *v = value ? dup_str(value) : NULL;
    if (value && !v)
        return bl_fail(err, BL_ERR_NOMEM, "cannot copy connectome info '%s'", key);
    free(c->info[k]);
    c->info[k] = v;
    return BL_OK;
}

const char *bl_connectome_info(const bl_connectome *c, const char *key)
{
    int k = info_index(key);
    return k < 0 ? NULL : c->info[k];
}

void bl_connectome_set_synthetic(bl_connectome *c, int synthetic) { c->synthetic = synthetic != 0; }
int bl_connectome_synthetic(const bl_connectome *c) { return c->synthetic; }
