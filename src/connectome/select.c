/* Neuron selection (include/brainlesslab/select.h): a selector resolved
 * against a loaded connectome, and its canonical JSON. The metadata query is
 * select_query.c, the JSON input form select_json.c; this file holds the
 * criteria, the set algebra, the sample and the rendering. The messages are
 * the ones plans have always printed (the plan layer adds FILE:LINE:COL and
 * the key path), so moving selection here changed no plan's error text. */
#include "connectome/select_impl.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stream.h"
#include "core/text.h"
#include "core/json_check.h"


struct bl_selection {
    int32_t *neurons;
    size_t n;
    char *json;
};

/* ---- faults ---- */

void bl_sel_printable(char *dst, size_t size, const char *text, size_t len)
{
    bl_text_printable(dst, size, text, len);
}

void bl_sel_number(char *dst, size_t size, double x) { bl_text_number(dst, size, x); }

bl_status bl_sel_fail(bl_sel_ctx *x, bl_status status, const char *key, long column, const char *sub, long index,
                      const char *fmt, ...)
{
    bl_select_fault f = {key, column, sub, index, "", ""};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f.message, sizeof f.message, fmt, ap);
    va_end(ap);
    size_t o = 0;
    if (key)
        o = (size_t)snprintf(f.path, sizeof f.path, "%s", key);
    if (key && column >= 0 && column < (long)x->n_column_names && o < sizeof f.path) {
        char shown[160];
        const char *name = x->column_names[column];
        bl_sel_printable(shown, sizeof shown, name, strlen(name));
        o += (size_t)snprintf(f.path + o, sizeof f.path - o, ".%s", shown);
    }
    if (sub && o < sizeof f.path)
        o += (size_t)snprintf(f.path + o, sizeof f.path - o, ".%s", sub);
    if (index >= 0 && o < sizeof f.path)
        snprintf(f.path + o, sizeof f.path - o, "[%ld]", index);
    if (x->fault)
        *x->fault = f;
    if (f.path[0])
        return bl_fail(x->err, status, "%s: %s", f.path, f.message);
    return bl_fail(x->err, status, "%s", f.message);
}

/* ---- sorted neuron sets ---- */

static int cmp_i32(const void *a, const void *b)
{
    int32_t p = *(const int32_t *)a, q = *(const int32_t *)b;
    return (p > q) - (p < q);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct nset {
    int32_t *v;
    size_t n;
    int all; /* no criterion applied yet: every neuron */
} nset;

static void intersect_with(nset *a, const int32_t *b, size_t nb)
{
    size_t i = 0, j = 0, o = 0;
    while (i < a->n && j < nb) {
        if (a->v[i] < b[j])
            i++;
        else if (a->v[i] > b[j])
            j++;
        else {
            a->v[o++] = a->v[i];
            i++;
            j++;
        }
    }
    a->n = o;
}

static void subtract(nset *a, const int32_t *b, size_t nb)
{
    size_t i = 0, j = 0, o = 0;
    while (i < a->n) {
        while (j < nb && b[j] < a->v[i])
            j++;
        if (j < nb && b[j] == a->v[i])
            i++;
        else
            a->v[o++] = a->v[i++];
    }
    a->n = o;
}

/* AND a criterion's neurons (sorted, unique) into the set. */
static bl_status apply(bl_sel_ctx *x, nset *s, const int32_t *b, size_t nb)
{
    if (s->all) {
        uint64_t nn = bl_connectome_n_neurons(x->c);
        s->v = malloc((nn ? nn : 1) * sizeof *s->v);
        if (!s->v)
            return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a selection of %" PRIu64 " neurons", nn);
        memcpy(s->v, b, nb * sizeof *b);
        s->n = nb;
        s->all = 0;
        return BL_OK;
    }
    intersect_with(s, b, nb);
    return BL_OK;
}

/* ---- explicit lists ---- */

static bl_status by_index(bl_sel_ctx *x, const bl_selector *sel, int32_t **out, size_t *count)
{
    size_t n = sel->n_neurons;
    uint64_t nn = bl_connectome_n_neurons(x->c);
    if (n == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, "neurons", -1, NULL, -1,
                           "empty selection (an empty array of neuron indices)");
    int32_t *v = malloc(n * sizeof *v);
    if (!v)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu neuron indices", n);
    for (size_t i = 0; i < n; i++) {
        int64_t k = sel->neurons[i];
        if (k < 0 || (uint64_t)k >= nn) {
            free(v);
            return bl_sel_fail(x, BL_ERR_INVALID, "neurons", -1, NULL, (long)i,
                               "neuron index %" PRId64 " is out of range 0..%" PRIu64
                               " (the connectome has %" PRIu64 " neurons)",
                               k, nn ? nn - 1 : 0, nn);
        }
        v[i] = (int32_t)k;
    }
    qsort(v, n, sizeof *v, cmp_i32);
    for (size_t i = 1; i < n; i++)
        if (v[i] == v[i - 1]) {
            int32_t twice = v[i];
            free(v);
            return bl_sel_fail(x, BL_ERR_INVALID, "neurons", -1, NULL, -1, "neuron %" PRId32 " is listed twice",
                               twice);
        }
    *out = v;
    *count = n;
    return BL_OK;
}

static bl_status by_id(bl_sel_ctx *x, const bl_selector *sel, int32_t **out, size_t *count)
{
    size_t n = sel->n_ids;
    if (n == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, "ids", -1, NULL, -1, "empty selection (an empty array of external ids)");
    int32_t *v = malloc(n * sizeof *v);
    if (!v)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu neuron ids", n);
    for (size_t i = 0; i < n; i++) {
        const char *id = sel->ids[i] ? sel->ids[i] : "";
        if (bl_connectome_find(x->c, id, &v[i], NULL)) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, id, strlen(id));
            free(v);
            return bl_sel_fail(x, BL_ERR_INVALID, "ids", -1, NULL, (long)i,
                               "unknown external id \"%s\" (no neuron of the connectome has it)", shown);
        }
    }
    qsort(v, n, sizeof *v, cmp_i32);
    for (size_t i = 1; i < n; i++)
        if (v[i] == v[i - 1]) {
            char shown[128];
            const char *s = bl_connectome_external_id(x->c, (uint64_t)v[i]);
            bl_sel_printable(shown, sizeof shown, s, strlen(s));
            free(v);
            return bl_sel_fail(x, BL_ERR_INVALID, "ids", -1, NULL, -1, "id \"%s\" is listed twice", shown);
        }
    *out = v;
    *count = n;
    return BL_OK;
}

/* ---- named populations ---- */

static bl_status lookup(bl_sel_ctx *x, const char *key, long index, const char *name, bl_select_named *out)
{
    bl_error why = {0};
    bl_status st;
    *out = (bl_select_named){0};
    if (!x->opt.lookup)
        st = bl_fail(&why, BL_ERR_INVALID, "no population is named \"%s\" (no populations are defined here)",
                     name);
    else if ((st = x->opt.lookup(x->opt.lookup_user, name, out, &why)) == BL_OK && !out->name)
        out->name = name;
    /* The set algebra merges sorted lists: a lookup's word is checked, not trusted. */
    uint64_t nn = bl_connectome_n_neurons(x->c);
    if (!st && !out->neurons && out->n_neurons)
        st = bl_fail(&why, BL_ERR_INVALID, "population \"%s\" has %zu neurons and no list of them", out->name,
                     out->n_neurons);
    for (size_t i = 0; !st && i < out->n_neurons; i++) {
        int32_t v = out->neurons[i];
        if (v < 0 || (uint64_t)v >= nn || (i && v <= out->neurons[i - 1]))
            st = bl_fail(&why, BL_ERR_INVALID, "population \"%s\": neuron %" PRId32 " at position %zu is %s", out->name,
                         v, i, v < 0 || (uint64_t)v >= nn ? "out of range" : "out of order or repeated");
    }
    if (st)
        return bl_sel_fail(x, st, key, -1, NULL, index, "%s", why.message);
    return BL_OK;
}

/* The populations of a union / intersect / exclude list, checked. */
static bl_status name_list(bl_sel_ctx *x, const char *key, const bl_select_names *names, bl_select_named **out)
{
    *out = NULL;
    if (names->n == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, key, -1, NULL, -1,
                           "expected a non-empty array of population names, got an empty array");
    bl_select_named *pops = calloc(names->n, sizeof *pops);
    if (!pops)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a list of populations");
    for (size_t i = 0; i < names->n; i++) {
        bl_status st = lookup(x, key, (long)i, names->names[i] ? names->names[i] : "", &pops[i]);
        for (size_t j = 0; !st && j < i; j++)
            if (!strcmp(pops[j].name, pops[i].name))
                st = bl_sel_fail(x, BL_ERR_INVALID, key, -1, NULL, (long)i, "population \"%s\" is listed twice",
                                 pops[i].name);
        if (st) {
            free(pops);
            return st;
        }
    }
    *out = pops;
    return BL_OK;
}

/* ---- depth ---- */

static bl_status check_depth(bl_sel_ctx *x, const bl_selector *sel)
{
    x->depth_lo = 0;
    x->depth_hi = INT32_MAX;
    if (!sel->has_depth)
        return BL_OK;
    int64_t lo = sel->depth_min, hi = sel->depth_max < 0 ? INT32_MAX : sel->depth_max;
    if (lo < 0 || lo > INT32_MAX)
        return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1, "depth %" PRId64 " is out of range 0..%d", lo,
                           INT32_MAX);
    if (hi > INT32_MAX)
        return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1, "depth %" PRId64 " is out of range 0..%d", hi,
                           INT32_MAX);
    if (lo > hi)
        return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1, "min %" PRId64 " is above max %" PRId64, lo, hi);
    x->depth_lo = lo;
    x->depth_hi = hi;
    return BL_OK;
}

static bl_status by_depth(bl_sel_ctx *x, const bl_selector *sel, nset *s, const char **src_name)
{
    bl_select_named src;
    bl_status st = lookup(x, "from", -1, sel->from, &src);
    if (st)
        return st;
    *src_name = src.name;
    if (bl_connectome_parts(x->c) > 1)
        return bl_sel_fail(x, BL_ERR_UNSUPPORTED, "from", -1, NULL, -1,
                           "a depth selector needs the whole graph, and this rank holds a part of it "
                           "(run this plan without mpirun, or select the neurons another way)");
    if ((st = check_depth(x, sel)))
        return st;
    int64_t lo = x->depth_lo, hi = x->depth_hi;
    uint64_t nn = bl_connectome_n_neurons(x->c);
    int32_t *d = malloc((nn ? nn : 1) * sizeof *d);
    int32_t *hit = malloc((nn ? nn : 1) * sizeof *hit);
    if (!d || !hit)
        st = bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a depth search of %" PRIu64 " neurons", nn);
    if (!st)
        st = bl_shortest_depths(x->c, src.neurons, src.n_neurons, d, x->err);
    size_t nh = 0;
    for (uint64_t i = 0; !st && i < nn; i++)
        if (d[i] >= 0 && d[i] >= lo && d[i] <= hi)
            hit[nh++] = (int32_t)i;
    if (!st)
        st = apply(x, s, hit, nh);
    free(d);
    free(hit);
    return st;
}

/* ---- sample ---- */

typedef struct sample_key {
    uint32_t word;
    int32_t neuron;
} sample_key;

static int cmp_sample(const void *a, const void *b)
{
    const sample_key *p = a, *q = b;
    if (p->word != q->word)
        return p->word < q->word ? -1 : 1;
    return (p->neuron > q->neuron) - (p->neuron < q->neuron);
}

static bl_status draw_sample(bl_sel_ctx *x, nset *s, size_t k)
{
    sample_key *keys = malloc((s->n ? s->n : 1) * sizeof *keys);
    if (!keys)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a sample of %zu neurons", s->n);
    for (size_t i = 0; i < s->n; i++)
        keys[i] = (sample_key){bl_stream_sample_word(x->opt.seed, x->opt.stream, (uint32_t)s->v[i]), s->v[i]};
    qsort(keys, s->n, sizeof *keys, cmp_sample);
    for (size_t i = 0; i < k; i++)
        s->v[i] = keys[i].neuron;
    free(keys);
    s->n = k;
    qsort(s->v, k, sizeof *s->v, cmp_i32);
    return BL_OK;
}

/* ---- the canonical JSON ---- */

static int add_raw_int(cJSON *o, const char *key, int64_t v)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRId64, v);
    return cJSON_AddRawToObject(o, key, text) != NULL;
}

static int add_names(cJSON *o, const char *key, const bl_select_named *pops, size_t n)
{
    const char **names = malloc((n ? n : 1) * sizeof *names);
    cJSON *arr = names ? cJSON_AddArrayToObject(o, key) : NULL;
    for (size_t i = 0; arr && i < n; i++)
        names[i] = pops[i].name;
    if (arr)
        qsort(names, n, sizeof *names, cmp_str);
    int ok = arr != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
    free(names);
    return ok;
}

/* Members in the order plans have always rendered them: neurons, ids,
 * select, population, from, depth, union, intersect, exclude, sample. */
static int render_neurons(cJSON *o, const int32_t *v, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "neurons");
    for (size_t i = 0; arr && i < n; i++)
        if (!cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i])))
            return 0;
    return arr != NULL;
}

static int render_ids(const bl_connectome *c, cJSON *o, const int32_t *v, size_t n)
{
    const char **ids = malloc((n ? n : 1) * sizeof *ids);
    cJSON *arr = ids ? cJSON_AddArrayToObject(o, "ids") : NULL;
    int ok = arr != NULL;
    if (ok) {
        for (size_t i = 0; i < n; i++)
            ids[i] = bl_connectome_external_id(c, (uint64_t)v[i]);
        qsort(ids, n, sizeof *ids, cmp_str);
    }
    for (size_t i = 0; ok && i < n; i++)
        ok = cJSON_AddItemToArray(arr, cJSON_CreateString(ids[i]));
    free(ids);
    return ok;
}

static int render_depth(cJSON *o, const char *from, int64_t lo, int64_t hi)
{
    cJSON *dj;
    if (!cJSON_AddStringToObject(o, "from", from) || !(dj = cJSON_AddObjectToObject(o, "depth")) ||
        !add_raw_int(dj, "min", lo))
        return 0;
    return hi >= INT32_MAX || add_raw_int(dj, "max", hi);
}

/* ---- the selector ---- */

static bl_status nomem_render(bl_sel_ctx *x)
{
    return bl_fail(x->err, BL_ERR_NOMEM, "cannot render a selector");
}

static bl_status resolve(bl_sel_ctx *x, const bl_selector *sel, nset *s, cJSON *json)
{
    bl_status st = BL_OK;
    int criteria = 0;
    const char *name = x->opt.name ? x->opt.name : "selection";

    /* Explicit lists and the metadata query. */
    if (sel->neurons) {
        int32_t *v = NULL;
        size_t n = 0;
        if ((st = by_index(x, sel, &v, &n)) || (st = apply(x, s, v, n)) ||
            (!render_neurons(json, v, n) && (st = nomem_render(x)))) {
            free(v);
            return st;
        }
        free(v);
        criteria++;
    }
    if (sel->ids) {
        int32_t *v = NULL;
        size_t n = 0;
        if ((st = by_id(x, sel, &v, &n)) || (st = apply(x, s, v, n)) ||
            (!render_ids(x->c, json, v, n) && (st = nomem_render(x)))) {
            free(v);
            return st;
        }
        free(v);
        criteria++;
    }
    if (sel->columns) {
        int32_t *v = NULL;
        size_t n = 0;
        if ((st = bl_sel_query(x, sel, &v, &n, json)) || (st = apply(x, s, v, n))) {
            free(v);
            return st;
        }
        free(v);
        criteria++;
    }
    if (sel->population) {
        bl_select_named p;
        if ((st = lookup(x, "population", -1, sel->population, &p)) || (st = apply(x, s, p.neurons, p.n_neurons)))
            return st;
        if (!cJSON_AddStringToObject(json, "population", p.name))
            return nomem_render(x);
        criteria++;
    }

    /* Depth from another population. */
    if (sel->has_depth && !sel->from)
        return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1,
                           "depth needs from = \"POPULATION\" (depth from what?)");
    if (sel->from) {
        const char *src = NULL;
        if ((st = by_depth(x, sel, s, &src)))
            return st;
        if (!render_depth(json, src, x->depth_lo, x->depth_hi))
            return nomem_render(x);
        criteria++;
    }

    /* Set algebra over named populations. */
    const struct {
        const char *key;
        const bl_select_names *names;
    } algebra[3] = {{"union", &sel->union_of}, {"intersect", &sel->intersect_of}, {"exclude", &sel->exclude}};
    for (int k = 0; k < 3; k++) {
        if (!algebra[k].names->names)
            continue;
        bl_select_named *pops = NULL;
        size_t np = algebra[k].names->n;
        if ((st = name_list(x, algebra[k].key, algebra[k].names, &pops)))
            return st;
        if (k == 0) { /* union: merge, then AND into the set */
            size_t total = 0, o = 0, w = 0;
            for (size_t i = 0; i < np; i++)
                total += pops[i].n_neurons;
            int32_t *u = malloc((total ? total : 1) * sizeof *u);
            if (!u)
                st = bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a union of %zu neurons", total);
            for (size_t i = 0; !st && i < np; i++) {
                memcpy(u + o, pops[i].neurons, pops[i].n_neurons * sizeof *u);
                o += pops[i].n_neurons;
            }
            if (!st) {
                qsort(u, o, sizeof *u, cmp_i32);
                for (size_t i = 0; i < o; i++)
                    if (w == 0 || u[i] != u[w - 1])
                        u[w++] = u[i];
                st = apply(x, s, u, w);
            }
            free(u);
        } else if (k == 1) {
            for (size_t i = 0; !st && i < np; i++)
                st = apply(x, s, pops[i].neurons, pops[i].n_neurons);
        } else if (!criteria) {
            st = bl_sel_fail(x, BL_ERR_INVALID, "exclude", -1, NULL, -1,
                             "exclude needs something to exclude from (a selector, from, union or intersect)");
        } else {
            for (size_t i = 0; i < np; i++)
                subtract(s, pops[i].neurons, pops[i].n_neurons);
        }
        if (!st && k < 2)
            criteria++;
        if (!st && !add_names(json, algebra[k].key, pops, np))
            st = nomem_render(x);
        free(pops);
        if (st)
            return st;
    }
    if (!criteria)
        return bl_sel_fail(x, BL_ERR_INVALID, NULL, -1, NULL, -1,
                           "no selector: give neurons, ids, select, from (+ depth), union or intersect");
    if (s->n == 0)
        return bl_sel_fail(x, BL_ERR_INVALID, NULL, -1, NULL, -1, "empty selection: population \"%s\" has no neurons",
                           name);

    /* Subsample. */
    if (sel->has_sample) {
        int64_t k = sel->sample;
        if (k < 1 || k > INT32_MAX)
            return bl_sel_fail(x, BL_ERR_INVALID, "sample", -1, NULL, -1, "sample %" PRId64 " is out of range 1..%d",
                               k, INT32_MAX);
        if ((uint64_t)k > s->n)
            return bl_sel_fail(x, BL_ERR_INVALID, "sample", -1, NULL, -1,
                               "sample %" PRId64 " is more than the %zu neurons selected", k, s->n);
        if (!x->opt.has_seed)
            return bl_sel_fail(x, BL_ERR_INVALID, "sample", -1, NULL, -1, "%s",
                               x->opt.no_seed ? x->opt.no_seed : "a sample is drawn from a seed, and none is given");
        if ((st = draw_sample(x, s, (size_t)k)))
            return st;
        if (!add_raw_int(json, "sample", k))
            return nomem_render(x);
    }
    if (sel->expect_count >= 0 && (uint64_t)sel->expect_count != s->n)
        return bl_sel_fail(x, BL_ERR_INVALID, "expect_count", -1, NULL, -1,
                           "population \"%s\" has %zu neurons, not the %" PRId64 " expected", name, s->n,
                           sel->expect_count);
    return BL_OK;
}

bl_status bl_select(const bl_connectome *c, const bl_selector *sel, const bl_select_options *opt,
                    bl_selection **out, bl_select_fault *fault, bl_error *err)
{
    *out = NULL;
    if (fault)
        *fault = (bl_select_fault){NULL, -1, NULL, -1, "", ""};
    if (!c || !sel)
        return bl_fail(err, BL_ERR_INVALID, "bl_select: %s is NULL", c ? "the selector" : "the connectome");
    bl_sel_ctx x = {c, opt ? *opt : (bl_select_options){0}, fault, err, NULL, 0, 0, 0};
    /* The column names, for key paths ("select.side"). */
    const char **names = NULL;
    if (sel->columns && sel->n_columns) {
        names = malloc(sel->n_columns * sizeof *names);
        if (!names)
            return bl_fail(err, BL_ERR_NOMEM, "cannot allocate a query of %zu columns", sel->n_columns);
        for (size_t k = 0; k < sel->n_columns; k++)
            names[k] = sel->columns[k].column ? sel->columns[k].column : "";
        x.column_names = names;
        x.n_column_names = sel->n_columns;
    }
    nset s = {NULL, 0, 1};
    bl_selection *r = calloc(1, sizeof *r);
    cJSON *json = cJSON_CreateObject();
    bl_status st = r && json ? resolve(&x, sel, &s, json) : bl_fail(err, BL_ERR_NOMEM, "cannot allocate a selection");
    if (!st && !(r->json = bl_json_print(json, 0)))
        st = nomem_render(&x);
    cJSON_Delete(json);
    free(names);
    if (st) {
        free(s.v);
        free(r);
        return st;
    }
    r->neurons = s.v;
    r->n = s.n;
    *out = r;
    return BL_OK;
}

size_t bl_selection_size(const bl_selection *s)
{
    return s ? s->n : 0;
}

const int32_t *bl_selection_neurons(const bl_selection *s)
{
    return s ? s->neurons : NULL;
}

const char *bl_selection_json(const bl_selection *s)
{
    return s ? s->json : NULL;
}

void bl_selection_destroy(bl_selection *s)
{
    if (!s)
        return;
    free(s->neurons);
    cJSON_free(s->json);
    free(s);
}
