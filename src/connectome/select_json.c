/* The JSON form of a selector (select.h) read into a bl_selector, then
 * resolved by bl_select. This is what a binding hands over (Python's
 * Connectome.select): types are checked here with messages naming the key
 * path, the meaning is checked by bl_select. JSON numbers are doubles, so an
 * integer (a neuron index, an id, a depth) must be exact: |x| <= 2^53;
 * larger ids are given as strings. */
#include "connectome/select_impl.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_INT 9007199254740992.0 /* 2^53 */

/* Everything the parsed selector points into, freed together. */
typedef struct pool {
    void **p;
    size_t n, cap;
} pool;

static void *pool_add(pool *pl, void *p)
{
    if (!p)
        return NULL;
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? 2 * pl->cap : 16;
        void **q = realloc(pl->p, cap * sizeof *q);
        if (!q) {
            free(p);
            return NULL;
        }
        pl->p = q;
        pl->cap = cap;
    }
    return pl->p[pl->n++] = p;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    free(pl->p);
}

static void describe(const cJSON *v, char *dst, size_t size)
{
    char buf[128];
    if (cJSON_IsString(v)) {
        bl_sel_printable(buf, sizeof buf, v->valuestring, strlen(v->valuestring));
        snprintf(dst, size, "string \"%s\"", buf);
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) <= EXACT_INT)
            snprintf(dst, size, "integer %.0f", d);
        else {
            bl_sel_number(buf, sizeof buf, d);
            snprintf(dst, size, "number %s", buf);
        }
    } else if (cJSON_IsBool(v))
        snprintf(dst, size, "boolean %s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(dst, size, "null");
    else if (cJSON_IsArray(v)) {
        int n = cJSON_GetArraySize(v);
        snprintf(dst, size, "array of %d element%s", n, n == 1 ? "" : "s");
    } else
        snprintf(dst, size, "object");
}

static bl_status wrong(bl_sel_ctx *x, const char *key, long column, const char *sub, long index, const cJSON *v,
                       const char *expected)
{
    char got[160];
    describe(v, got, sizeof got);
    return bl_sel_fail(x, BL_ERR_INVALID, key, column, sub, index, "expected %s, got %s", expected, got);
}

static int get_int(const cJSON *v, int64_t *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > EXACT_INT)
        return 0;
    *out = (int64_t)v->valuedouble;
    return 1;
}

/* A string, or an integer as its decimal text (copied into the pool). */
static const char *text_of(pool *pl, const cJSON *v)
{
    int64_t i;
    char num[24];
    if (cJSON_IsString(v))
        return v->valuestring;
    if (!get_int(v, &i))
        return NULL;
    snprintf(num, sizeof num, "%" PRId64, i);
    size_t len = strlen(num) + 1;
    char *copy = pool_add(pl, malloc(len));
    return copy ? memcpy(copy, num, len) : NULL;
}

static bl_status texts(bl_sel_ctx *x, pool *pl, const cJSON *v, const char *key, long column, const char *sub,
                       int one_allowed, const char *what, const char *const **out, size_t *n)
{
    int list = cJSON_IsArray(v);
    if (!list && !one_allowed)
        return wrong(x, key, column, sub, -1, v, what);
    size_t m = list ? (size_t)cJSON_GetArraySize(v) : 1;
    const char **t = pool_add(pl, malloc((m ? m : 1) * sizeof *t));
    if (!t)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu values", m);
    size_t i = 0;
    const cJSON *e = list ? v->child : v;
    for (; i < m; i++, e = e->next) {
        if (!(t[i] = text_of(pl, e)))
            return cJSON_IsString(e) || get_int(e, &(int64_t){0})
                       ? bl_fail(x->err, BL_ERR_NOMEM, "cannot copy a value")
                       : wrong(x, key, column, sub, list ? (long)i : -1, e, "a string (or an integer id)");
    }
    *out = t;
    *n = m;
    return BL_OK;
}

static bl_status names(bl_sel_ctx *x, pool *pl, const cJSON *v, const char *key, bl_select_names *out)
{
    if (!cJSON_IsArray(v))
        return wrong(x, key, -1, NULL, -1, v, "a non-empty array of population names");
    size_t m = (size_t)cJSON_GetArraySize(v), i = 0;
    const char **t = pool_add(pl, malloc((m ? m : 1) * sizeof *t));
    if (!t)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu names", m);
    for (const cJSON *e = v->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e))
            return wrong(x, key, -1, NULL, (long)i, e, "a population name (string)");
        t[i] = e->valuestring;
    }
    out->names = t;
    out->n = m;
    return BL_OK;
}

static bl_status range_end(bl_sel_ctx *x, const cJSON *r, const char *end, long k, int *has, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, end);
    if (!v)
        return BL_OK;
    if (!cJSON_IsNumber(v)) {
        char got[160];
        describe(v, got, sizeof got);
        return bl_sel_fail(x, BL_ERR_INVALID, "select", k, NULL, -1, "%s: expected a number, got %s", end, got);
    }
    *has = 1;
    *out = v->valuedouble;
    return BL_OK;
}

static bl_status columns(bl_sel_ctx *x, pool *pl, const cJSON *v, bl_selector *sel)
{
    if (!cJSON_IsObject(v))
        return wrong(x, "select", -1, NULL, -1, v, "an object of metadata column: value(s)");
    size_t m = (size_t)cJSON_GetArraySize(v), k = 0;
    bl_select_column *cols = pool_add(pl, calloc(m ? m : 1, sizeof *cols));
    const char **colnames = pool_add(pl, calloc(m ? m : 1, sizeof *colnames));
    if (!cols || !colnames)
        return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate a query of %zu columns", m);
    /* Key paths name the columns from here on. */
    for (const cJSON *e = v->child; e; e = e->next, k++)
        colnames[k] = e->string ? e->string : "";
    x->column_names = colnames;
    x->n_column_names = m;
    k = 0;
    for (const cJSON *e = v->child; e; e = e->next, k++) {
        bl_select_column *c = &cols[k];
        bl_status st = BL_OK;
        c->column = colnames[k];
        if (!cJSON_IsObject(e)) {
            c->match = BL_SELECT_ANY;
            st = texts(x, pl, e, "select", (long)k, NULL, 1, "", &c->values, &c->n_values);
        } else if (cJSON_GetObjectItemCaseSensitive(e, "not")) {
            if (cJSON_GetArraySize(e) != 1)
                return bl_sel_fail(x, BL_ERR_INVALID, "select", (long)k, NULL, -1,
                                   "a negation takes only \"not\" (no other key beside it)");
            c->match = BL_SELECT_NOT;
            st = texts(x, pl, e->child, "select", (long)k, "not", 1, "", &c->values, &c->n_values);
        } else {
            for (const cJSON *r = e->child; r; r = r->next)
                if (strcmp(r->string, "min") && strcmp(r->string, "max")) {
                    char shown[128];
                    bl_sel_printable(shown, sizeof shown, r->string, strlen(r->string));
                    return bl_sel_fail(x, BL_ERR_INVALID, "select", (long)k, NULL, -1,
                                       "unknown key \"%s\" (a column takes values, {\"not\": ...} or "
                                       "{\"min\": ..., \"max\": ...})", shown);
                }
            c->match = BL_SELECT_RANGE;
            if (!(st = range_end(x, e, "min", (long)k, &c->has_min, &c->min)))
                st = range_end(x, e, "max", (long)k, &c->has_max, &c->max);
        }
        if (st)
            return st;
    }
    sel->columns = cols;
    sel->n_columns = m;
    return BL_OK;
}

static bl_status depth(bl_sel_ctx *x, const cJSON *v, bl_selector *sel)
{
    sel->has_depth = 1;
    sel->depth_max = -1;
    if (get_int(v, &sel->depth_min)) {
        sel->depth_max = sel->depth_min;
        return BL_OK;
    }
    if (!cJSON_IsObject(v))
        return wrong(x, "depth", -1, NULL, -1, v, "a depth (integer) or {\"min\": a, \"max\": b}");
    for (const cJSON *e = v->child; e; e = e->next) {
        int64_t *slot = !strcmp(e->string, "min") ? &sel->depth_min : !strcmp(e->string, "max") ? &sel->depth_max : NULL;
        if (!slot) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, e->string, strlen(e->string));
            return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1, "unknown key \"%s\" (allowed: min, max)",
                               shown);
        }
        if (!get_int(e, slot) || *slot < 0) {
            char got[160];
            describe(e, got, sizeof got);
            return bl_sel_fail(x, BL_ERR_INVALID, "depth", -1, NULL, -1, "%s: expected a depth (integer >= 0), got %s",
                               e->string, got);
        }
    }
    return BL_OK;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Before any meaning: every object's keys are unique and every number is
 * finite, at any depth. cJSON keeps a repeated key and answers lookups with
 * the first, and reads 1e999 as infinity; either way the selector would mean
 * something its canonical JSON cannot say again. Keys are sorted, not compared
 * pairwise, so an object of many keys costs n log n. Nesting is bounded by
 * cJSON's own depth limit (CJSON_NESTING_LIMIT). */
static bl_status well_formed(bl_sel_ctx *x, const char *key, const cJSON *v)
{
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble))
        return bl_sel_fail(x, BL_ERR_INVALID, key, -1, NULL, -1,
                           "a number beyond the range of a double (JSON numbers are read as doubles)");
    if (cJSON_IsObject(v) && v->child && v->child->next) {
        size_t m = (size_t)cJSON_GetArraySize(v), i = 0;
        const char **k = malloc(m * sizeof *k);
        if (!k)
            return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu keys", m);
        for (const cJSON *e = v->child; e; e = e->next)
            k[i++] = e->string ? e->string : "";
        qsort(k, m, sizeof *k, cmp_name);
        for (i = 1; i < m && strcmp(k[i - 1], k[i]); i++)
            ;
        if (i < m) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, k[i], strlen(k[i]));
            free(k);
            return bl_sel_fail(x, BL_ERR_INVALID, key, -1, NULL, -1, "the key \"%s\" is given twice", shown);
        }
        free(k);
    }
    for (const cJSON *e = (cJSON_IsObject(v) || cJSON_IsArray(v)) ? v->child : NULL; e; e = e->next) {
        bl_status st = well_formed(x, key, e);
        if (st)
            return st;
    }
    return BL_OK;
}

static const char *const json_keys[] = {"neurons", "ids", "select", "population", "from", "depth", "union",
                                        "intersect", "exclude", "sample", "expect_count", NULL};

static bl_status parse(bl_sel_ctx *x, pool *pl, const cJSON *root, bl_selector *sel)
{
    bl_status st = BL_OK;
    if (!cJSON_IsObject(root))
        return wrong(x, NULL, -1, NULL, -1, root, "a selector (a JSON object)");
    for (const cJSON *e = root->child; e; e = e->next) {
        size_t k = 0;
        while (json_keys[k] && strcmp(json_keys[k], e->string))
            k++;
        if (!json_keys[k]) {
            char shown[128];
            bl_sel_printable(shown, sizeof shown, e->string, strlen(e->string));
            return bl_sel_fail(x, BL_ERR_INVALID, NULL, -1, NULL, -1,
                               "unknown key \"%s\" (allowed: neurons, ids, select, population, from, depth, union, "
                               "intersect, exclude, sample, expect_count)", shown);
        }
        for (const cJSON *d = root->child; d != e; d = d->next)
            if (!strcmp(d->string, e->string))
                return bl_sel_fail(x, BL_ERR_INVALID, json_keys[k], -1, NULL, -1, "given twice");
        if ((st = well_formed(x, json_keys[k], e)))
            return st;
    }
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "neurons"))) {
        if (!cJSON_IsArray(v))
            return wrong(x, "neurons", -1, NULL, -1, v, "an array of neuron indices");
        size_t m = (size_t)cJSON_GetArraySize(v), i = 0;
        int64_t *n = pool_add(pl, malloc((m ? m : 1) * sizeof *n));
        if (!n)
            return bl_fail(x->err, BL_ERR_NOMEM, "cannot allocate %zu neuron indices", m);
        for (const cJSON *e = v->child; e; e = e->next, i++)
            if (!get_int(e, &n[i]))
                return wrong(x, "neurons", -1, NULL, (long)i, e, "a neuron index (integer)");
        sel->neurons = n;
        sel->n_neurons = m;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "ids")) &&
        (st = texts(x, pl, v, "ids", -1, NULL, 0, "an array of external ids", &sel->ids, &sel->n_ids)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "select")) && (st = columns(x, pl, v, sel)))
        return st;
    static const char *const strings[] = {"population", "from"};
    const char **slots[] = {&sel->population, &sel->from};
    for (int k = 0; k < 2; k++)
        if ((v = cJSON_GetObjectItemCaseSensitive(root, strings[k]))) {
            if (!cJSON_IsString(v))
                return wrong(x, strings[k], -1, NULL, -1, v, "a population name (string)");
            *slots[k] = v->valuestring;
        }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "depth")) && (st = depth(x, v, sel)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "union")) && (st = names(x, pl, v, "union", &sel->union_of)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "intersect")) &&
        (st = names(x, pl, v, "intersect", &sel->intersect_of)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "exclude")) && (st = names(x, pl, v, "exclude", &sel->exclude)))
        return st;
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "sample"))) {
        if (!get_int(v, &sel->sample))
            return wrong(x, "sample", -1, NULL, -1, v, "a sample size (integer)");
        sel->has_sample = 1;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(root, "expect_count")) &&
        (!get_int(v, &sel->expect_count) || sel->expect_count < 0))
        return wrong(x, "expect_count", -1, NULL, -1, v, "a neuron count (integer >= 0)");
    return BL_OK;
}

bl_status bl_select_json(const bl_connectome *c, const char *json, const bl_select_options *opt,
                         bl_selection **out, bl_select_fault *fault, bl_error *err)
{
    *out = NULL;
    if (fault)
        *fault = (bl_select_fault){NULL, -1, NULL, -1, "", ""};
    bl_sel_ctx x = {c, opt ? *opt : (bl_select_options){0}, fault, err, NULL, 0, 0, 0};
    cJSON *root = json ? cJSON_Parse(json) : NULL;
    if (!root)
        return bl_sel_fail(&x, BL_ERR_FORMAT, NULL, -1, NULL, -1, "the selector is not valid JSON%s",
                           json ? "" : " (NULL)");
    pool pl = {0};
    bl_selector sel = {0};
    sel.expect_count = -1;
    bl_status st = parse(&x, &pl, root, &sel);
    if (!st)
        st = bl_select(c, &sel, opt, out, fault, err);
    pool_free(&pl);
    cJSON_Delete(root);
    return st;
}
