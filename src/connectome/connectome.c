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

static int intern_sorted(const char *const *src, uint64_t n, char ***ptrs, char **arena)
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

/* FNV-1a: a table hash only, never stored or compared across processes. */
static uint64_t str_hash(const char *s, size_t *len)
{
    uint64_t h = 0xcbf29ce484222325u;
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    *len = (size_t)(p - (const unsigned char *)s);
    return h;
}

/* intern_strings by hashing, in one pass: a metadata column holds a few
 * distinct values in ~10^5 rows, and sorting the rows to find them cost a
 * FlyWire-scale load three sorts of 138k strings (with the id sorts below,
 * ~40 ms of CPU, 6% of a w1 process, in a profile). The arena holds each distinct value once, in first-occurrence order
 * (intern_sorted's is sorted; no reader sees the difference: only the values
 * are read). Returns -1 (nothing allocated) when the probes exceed a linear
 * budget, as crafted colliding values would make them: the caller then sorts,
 * so a hostile table costs n log n, never n^2. */
static int intern_hashed(const char *const *src, uint64_t n, char ***ptrs, char **arena)
{
    typedef struct { uint64_t hash; uint32_t first; uint32_t len; } distinct;
    *ptrs = NULL;
    *arena = NULL;
    if (n > UINT32_MAX)
        return -1;
    size_t cap = 64, nd = 0, dcap = 16, total = 1;
    uint64_t budget = 16 * n + 4096, probes = 0;
    int32_t *table = malloc(cap * sizeof *table);
    distinct *d = malloc(dcap * sizeof *d);
    uint32_t *which = malloc((n ? n : 1) * sizeof *which);
    int ok = table && d && which;
    for (size_t k = 0; ok && k < cap; k++)
        table[k] = -1;
    for (uint64_t i = 0; ok && i < n; i++) {
        const char *v = src[i] ? src[i] : "";
        size_t len;
        uint64_t h = str_hash(v, &len);
        if (len > UINT32_MAX) {
            ok = -1;
            break;
        }
        size_t k = (size_t)h & (cap - 1);
        for (; table[k] >= 0; k = (k + 1) & (cap - 1)) {
            const distinct *q = &d[table[k]];
            const char *w = src[q->first] ? src[q->first] : "";
            if (q->hash == h && q->len == len && !memcmp(w, v, len))
                break;
            if (++probes > budget) {
                ok = -1;
                break;
            }
        }
        if (ok < 0)
            break;
        int32_t id = table[k];
        if (id < 0) {
            if (nd == dcap) {
                distinct *g = realloc(d, 2 * dcap * sizeof *d);
                if (!g) {
                    ok = 0;
                    break;
                }
                d = g;
                dcap *= 2;
            }
            d[nd] = (distinct){h, (uint32_t)i, (uint32_t)len};
            id = (int32_t)nd++;
            table[k] = id;
            total += len + 1;
            if (total > UINT32_MAX) { /* arena offsets are kept in 32 bits */
                ok = -1;
                break;
            }
            if (2 * nd > cap) { /* keep the table at most half full */
                size_t ncap = 2 * cap;
                int32_t *t = malloc(ncap * sizeof *t);
                if (!t) {
                    ok = 0;
                    break;
                }
                for (size_t j = 0; j < ncap; j++)
                    t[j] = -1;
                for (size_t j = 0; j < nd; j++) {
                    size_t m = (size_t)d[j].hash & (ncap - 1);
                    while (t[m] >= 0)
                        m = (m + 1) & (ncap - 1);
                    t[m] = (int32_t)j;
                }
                free(table);
                table = t;
                cap = ncap;
            }
        }
        which[i] = (uint32_t)id;
    }
    free(table);
    if (ok == 1) {
        *ptrs = malloc((n ? n : 1) * sizeof **ptrs);
        *arena = malloc(total);
        ok = *ptrs && *arena;
    }
    if (ok == 1) {
        /* Each distinct value's place in the arena, reusing d[].first. */
        size_t at = 0;
        for (size_t j = 0; j < nd; j++) {
            const char *v = src[d[j].first] ? src[d[j].first] : "";
            memcpy(*arena + at, v, (size_t)d[j].len + 1);
            d[j].first = (uint32_t)at;
            at += (size_t)d[j].len + 1;
        }
        for (uint64_t i = 0; i < n; i++)
            (*ptrs)[i] = *arena + d[which[i]].first;
    } else {
        free(*ptrs);
        free(*arena);
        *ptrs = NULL;
        *arena = NULL;
    }
    free(d);
    free(which);
    return ok;
}

static int intern_strings(const char *const *src, uint64_t n, char ***ptrs, char **arena)
{
    int r = intern_hashed(src, n, ptrs, arena);
    return r < 0 ? intern_sorted(src, n, ptrs, arena) : r;
}

/* Ties of the radix key below: the same 8 bytes after the common prefix,
 * so the strings are compared from there; equal strings by index, which is
 * the order a stable sort of the indices gives. */
typedef struct id_key {
    uint64_t key;
    int32_t idx;
} id_key;

typedef struct id_tie_ctx {
    char **ids;
    size_t from;
} id_tie_ctx;

static int cmp_id_tail(const void *a, const void *b, void *base)
{
    const id_tie_ctx *t = base;
    int32_t x = ((const id_key *)a)->idx, y = ((const id_key *)b)->idx;
    int r = strcmp(t->ids[x] + t->from, t->ids[y] + t->from);
    return r ? r : (x > y) - (x < y);
}

/* id_sorted: the neuron indices in strcmp order of their ids (equal ids by
 * index). An LSD radix sort on the 8 bytes that follow the prefix every id
 * shares (FlyWire's root ids share their first ten digits), big-endian and
 * zero-padded, so that the key order is strcmp's; only ids still tied after
 * those bytes are compared as strings, where qsort_r compared every pair it
 * met with strcmp through a callback (see intern_hashed for the cost). Needs
 * 2 x 16 bytes per neuron while it runs; NULL when out of memory. */
static int32_t *sorted_ids(char **ids, uint64_t n)
{
    int32_t *out = malloc((n ? n : 1) * sizeof *out);
    id_key *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    size_t (*count)[256] = calloc(8, sizeof *count);
    if (!out || !a || !b || !count) {
        free(out);
        free(a);
        free(b);
        free(count);
        return NULL;
    }
    size_t lcp = n ? strlen(ids[0]) : 0;
    for (uint64_t i = 1; i < n && lcp; i++) {
        size_t j = 0;
        while (j < lcp && ids[i][j] == ids[0][j])
            j++;
        lcp = j;
    }
    for (uint64_t i = 0; i < n; i++) {
        const unsigned char *s = (const unsigned char *)ids[i] + lcp;
        uint64_t key = 0;
        int ended = 0;
        for (int j = 0; j < 8; j++) {
            unsigned char ch = ended ? 0 : s[j];
            ended = ended || !ch;
            key = key << 8 | ch;
            count[7 - j][ch]++;
        }
        a[i].key = key;
        a[i].idx = (int32_t)i;
    }
    /* Least significant byte first; a byte the same in every key is skipped. */
    for (int pass = 0; pass < 8; pass++) {
        size_t *c = count[pass], sum = 0;
        int trivial = 0;
        for (int v = 0; v < 256; v++)
            trivial |= c[v] == n;
        if (trivial)
            continue;
        for (int v = 0; v < 256; v++) {
            size_t t = c[v];
            c[v] = sum;
            sum += t;
        }
        for (uint64_t i = 0; i < n; i++)
            b[c[(a[i].key >> (8 * pass)) & 0xff]++] = a[i];
        id_key *t = a;
        a = b;
        b = t;
    }
    /* Runs of one key: the ids are equal if they ended inside the key, else
     * they are compared from the byte after it. */
    id_tie_ctx tie = {ids, lcp + 8};
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i > 1 && (a[i].key & 0xff) != 0)
            qsort_r(a + i, j - i, sizeof *a, cmp_id_tail, &tie);
        i = j;
    }
    for (uint64_t i = 0; i < n; i++)
        out[i] = a[i].idx;
    free(a);
    free(b);
    free(count);
    return out;
}

static bl_status index_ids(bl_connectome *c, bl_error *err)
{
    c->id_sorted = sorted_ids(c->ids, c->n_neurons);
    if (!c->id_sorted)
        return bl_fail(err, BL_ERR_NOMEM, "cannot index %" PRIu64 " neuron ids", c->n_neurons);
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
    return bl_connectome_adopt_validated(n, e, offsets, targets, counts, NULL, 1, out, err);
}

bl_status bl_connectome_adopt_validated(uint64_t n, uint64_t e, int64_t *offsets, int32_t *targets,
                                        int32_t *counts, const uint64_t *synapses, int default_ids,
                                        bl_connectome **out, bl_error *err)
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
    if (synapses)
        c->n_synapses = *synapses;
    for (uint64_t k = 0; !synapses && counts && k < e; k++)
        c->n_synapses += (uint64_t)(counts[k] < 0 ? -(int64_t)counts[k] : counts[k]);
    if (!default_ids) {
        *out = c;
        return BL_OK;
    }
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
