/* The table importers' shared parts (kit.h). */
#include "connectome/import/kit.h"
#include "core/invariant.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- report ---- */

void bl_report_add(bl_report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    int w = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (w < 0)
        return;
    size_t len = strlen(line);
    if (r->len + len + 2 > r->cap) {
        size_t cap = (r->cap ? r->cap * 2 : 1024) + len + 2;
        char *t = realloc(r->text, cap);
        if (!t)
            return; /* the report is advisory; the import's own result does not depend on it */
        r->text = t;
        r->cap = cap;
    }
    memcpy(r->text + r->len, line, len);
    r->len += len;
    r->text[r->len++] = '\n';
    r->text[r->len] = '\0';
}

void bl_report_free(bl_report *r)
{
    free(r->text);
    memset(r, 0, sizeof *r);
}

/* ---- id map ---- */

struct bl_idmap {
    uint64_t mask;
    int64_t *keys;
    int32_t *vals;
};

static uint64_t mix(int64_t k)
{
    uint64_t z = (uint64_t)k + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bl_status bl_idmap_create(uint64_t n, bl_idmap **out, bl_error *err)
{
    uint64_t cap = 16;
    while (cap < 2 * n + 16)
        cap *= 2;
    bl_idmap *m = calloc(1, sizeof *m);
    if (m && cap <= SIZE_MAX / 8) {
        m->keys = malloc((size_t)cap * sizeof *m->keys);
        m->vals = malloc((size_t)cap * sizeof *m->vals);
    }
    if (!m || !m->keys || !m->vals) {
        bl_idmap_destroy(m);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory for an id map of %llu ids", (unsigned long long)n);
    }
    memset(m->vals, 0xff, (size_t)cap * sizeof *m->vals); /* -1: empty */
    m->mask = cap - 1;
    *out = m;
    return BL_OK;
}

void bl_idmap_destroy(bl_idmap *m)
{
    if (!m)
        return;
    free(m->keys);
    free(m->vals);
    free(m);
}

int32_t bl_idmap_put(bl_idmap *m, int64_t key, int32_t v)
{
    for (uint64_t i = mix(key) & m->mask;; i = (i + 1) & m->mask) {
        if (m->vals[i] < 0) {
            m->keys[i] = key;
            m->vals[i] = v;
            return -1;
        }
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

int32_t bl_idmap_get(const bl_idmap *m, int64_t key)
{
    for (uint64_t i = mix(key) & m->mask;; i = (i + 1) & m->mask) {
        if (m->vals[i] < 0)
            return -1;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

/* ---- edges ---- */

bl_status bl_edge_list_push(bl_edge_list *l, int32_t pre, int32_t post, int32_t count, uint64_t row, bl_error *err)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 1 << 16;
        if (cap > SIZE_MAX / sizeof *l->e)
            return bl_fail(err, BL_ERR_NOMEM, "too many edges");
        bl_import_edge *e = realloc(l->e, (size_t)cap * sizeof *e);
        if (!e)
            return bl_fail(err, BL_ERR_NOMEM, "out of memory for %llu edges", (unsigned long long)cap);
        l->e = e;
        l->cap = cap;
    }
    l->e[l->n++] = (bl_import_edge){pre, post, count, row > UINT32_MAX ? UINT32_MAX : (uint32_t)row};
    return BL_OK;
}

void bl_edge_list_free(bl_edge_list *l)
{
    free(l->e);
    memset(l, 0, sizeof *l);
}

static int by_post(const void *a, const void *b)
{
    const bl_import_edge *x = a, *y = b;
    if (x->post != y->post)
        return x->post < y->post ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

#ifndef NDEBUG
/* The order bl_edge_list_sort promises: (pre, post, row) non-decreasing. */
static int bl_edge_list_sane(const bl_edge_list *l, bl_error *why)
{
    for (uint64_t e = 1; e < l->n; e++) {
        const bl_import_edge *a = &l->e[e - 1], *b = &l->e[e];
        if (a->pre > b->pre || (a->pre == b->pre && by_post(a, b) > 0))
            return BL_BROKEN(why, "import edge list: edge %" PRIu64 " sorts before edge %" PRIu64
                             " (by pre, post, row)", e, e - 1);
    }
    return 1;
}
#endif

bl_status bl_edge_list_sort(bl_edge_list *l, bl_error *err)
{
    if (l->n < 2)
        return BL_OK;
    /* Counting sort by pre (stable: rows keep their order), then each
     * neuron's few edges by post. */
    int32_t max = 0;
    for (uint64_t e = 0; e < l->n; e++)
        if (l->e[e].pre > max)
            max = l->e[e].pre;
    uint64_t *start = calloc((size_t)max + 2, sizeof *start);
    bl_import_edge *to = malloc((size_t)l->n * sizeof *to);
    if (!start || !to) {
        free(start);
        free(to);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory sorting %llu edges", (unsigned long long)l->n);
    }
    for (uint64_t e = 0; e < l->n; e++)
        start[l->e[e].pre + 1]++;
    for (int64_t i = 0; i <= max; i++)
        start[i + 1] += start[i];
    for (uint64_t e = 0; e < l->n; e++)
        to[start[l->e[e].pre]++] = l->e[e];
    free(l->e);
    l->e = to;
    l->cap = l->n;
    /* start[i] is now the end of row i. */
    uint64_t a = 0;
    for (int64_t i = 0; i <= max; i++) {
        uint64_t b = start[i];
        size_t k = (size_t)(b - a);
        if (k > 16) {
            qsort(to + a, k, sizeof *to, by_post);
        } else {
            for (size_t x = 1; x < k; x++) { /* insertion sort: most rows are short */
                bl_import_edge v = to[a + x];
                size_t y = x;
                while (y > 0 && by_post(&to[a + y - 1], &v) > 0) {
                    to[a + y] = to[a + y - 1];
                    y--;
                }
                to[a + y] = v;
            }
        }
        a = b;
    }
    free(start);
    BL_ASSERT_SANE(bl_edge_list_sane, l);
    return BL_OK;
}

bl_status bl_edge_list_sum(bl_edge_list *l, const char *path, uint64_t *merged, bl_error *err)
{
    *merged = 0;
    bl_status st = bl_edge_list_sort(l, err);
    if (st != BL_OK || l->n == 0)
        return st;
    uint64_t w = 0;
    for (uint64_t e = 1; e < l->n; e++) {
        bl_import_edge *k = &l->e[w];
        if (l->e[e].pre == k->pre && l->e[e].post == k->post) {
            int64_t sum = (int64_t)k->count + l->e[e].count;
            if (sum > INT32_MAX)
                return bl_fail(err, BL_ERR_INVALID, "%s: row %llu: the synapse count of this pair sums past %d", path,
                               (unsigned long long)k->line, INT32_MAX);
            k->count = (int32_t)sum;
            (*merged)++;
        } else {
            l->e[++w] = l->e[e];
        }
    }
    l->n = w + 1;
    return BL_OK;
}

/* ---- tables ---- */

bl_status bl_import_read(const char *path, const char *const *names, const bl_col_type *want, size_t n,
                         bl_column *out, bl_error *err)
{
    bl_table *t = NULL;
    bl_status st = bl_table_open(path, BL_TABLE_AUTO, &t, err);
    if (st == BL_OK)
        st = bl_table_read_all(t, names, want, n, out, err);
    bl_table_close(t);
    return st;
}

int bl_import_has_column(const char *path, const char *name)
{
    bl_table *t = NULL;
    bl_error err;
    size_t i;
    int has = bl_table_open(path, BL_TABLE_AUTO, &t, &err) == BL_OK && bl_table_find(t, name, &i, &err) == BL_OK;
    bl_table_close(t);
    return has;
}

const char *bl_import_pick_column(const char *path, const char *const *candidates, size_t n)
{
    bl_table *t = NULL;
    bl_error err;
    const char *found = NULL;
    size_t i;
    if (bl_table_open(path, BL_TABLE_AUTO, &t, &err) != BL_OK)
        return NULL;
    for (size_t k = 0; k < n && !found; k++)
        if (bl_table_find(t, candidates[k], &i, &err) == BL_OK)
            found = candidates[k];
    bl_table_close(t);
    return found;
}

char *bl_import_text(const bl_column *c, uint64_t r)
{
    size_t len = (c->valid && !c->valid[r]) ? 0 : (size_t)(c->offsets[r + 1] - c->offsets[r]);
    char *s = malloc(len + 1);
    if (s) {
        if (len)
            memcpy(s, c->data + c->offsets[r], len);
        s[len] = '\0';
    }
    return s;
}

char *bl_import_cell(const bl_column *c, uint64_t r)
{
    if (c->type == BL_COL_STRING)
        return bl_import_text(c, r);
    char buf[64] = "";
    if (!(c->valid && !c->valid[r])) {
        if (c->type == BL_COL_DOUBLE)
            snprintf(buf, sizeof buf, "%.17g", c->f64[r]);
        else if (c->type == BL_COL_BOOL)
            snprintf(buf, sizeof buf, "%s", c->i64[r] ? "true" : "false");
        else
            snprintf(buf, sizeof buf, "%" PRId64, c->i64[r]);
    }
    return bl_import_strdup(buf);
}

void bl_import_column_name(const char *src, char *dst, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; src[i] && k + 1 < size; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch - 'A' + 'a');
        else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')))
            ch = '_';
        dst[k++] = (char)ch;
    }
    if (k == 0 && size > 7)
        k = (size_t)snprintf(dst, size, "column");
    dst[k] = '\0';
}

bl_status bl_meta_init(bl_meta *m, uint64_t n, bl_error *err)
{
    (void)err;
    memset(m, 0, sizeof *m);
    m->n = n;
    return BL_OK;
}

bl_status bl_meta_add(bl_meta *m, const char *name, char **values, bl_error *err)
{
    char **names = realloc(m->names, (m->n_columns + 1) * sizeof *names);
    if (names)
        m->names = names;
    char ***vals = names ? realloc(m->values, (m->n_columns + 1) * sizeof *vals) : NULL;
    char *copy = bl_import_strdup(name);
    if (!names || !vals || !copy) {
        free(copy);
        for (uint64_t i = 0; values && i < m->n; i++)
            free(values[i]);
        free(values);
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    }
    m->values = vals;
    m->names[m->n_columns] = copy;
    m->values[m->n_columns++] = values;
    return BL_OK;
}

bl_status bl_meta_add_empty(bl_meta *m, const char *name, char ***values, bl_error *err)
{
    char **v = calloc((size_t)(m->n ? m->n : 1), sizeof *v);
    if (!v)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    bl_status st = bl_meta_add(m, name, v, err);
    if (st == BL_OK)
        *values = v;
    return st;
}

void bl_meta_free(bl_meta *m)
{
    for (size_t k = 0; k < m->n_columns; k++) {
        for (uint64_t i = 0; m->values[k] && i < m->n; i++)
            free(m->values[k][i]);
        free(m->values[k]);
        free(m->names[k]);
    }
    free(m->values);
    free(m->names);
    memset(m, 0, sizeof *m);
}

const char *bl_import_base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

bl_status bl_import_column_policy(bl_sign_policy **out, bl_error *err)
{
    bl_status st = bl_sign_policy_create(0, out, err);
    if (st == BL_OK)
        st = bl_sign_policy_set(*out, "+1", +1, err);
    if (st == BL_OK)
        st = bl_sign_policy_set(*out, "-1", -1, err);
    return st;
}

bl_status bl_sign_policy_default_fly(bl_sign_policy **out, bl_error *err)
{
    static const char *const plus[] = {"acetylcholine", "ach", "dopamine", "da", "serotonin", "ser", "5ht",
                                       "octopamine", "oct", "oa", "tyramine", "tyr", "unclear"};
    static const char *const minus[] = {"gaba", "glutamate", "glut", "glu", "histamine", "his", "ha"};
    bl_sign_policy *p = NULL;
    bl_status st = bl_sign_policy_create(0, &p, err);
    for (size_t i = 0; st == BL_OK && i < sizeof plus / sizeof plus[0]; i++)
        st = bl_sign_policy_set(p, plus[i], +1, err);
    for (size_t i = 0; st == BL_OK && i < sizeof minus / sizeof minus[0]; i++)
        st = bl_sign_policy_set(p, minus[i], -1, err);
    if (st == BL_OK)
        st = bl_sign_policy_set_unknown(p, +1, err);
    if (st != BL_OK) {
        bl_sign_policy_destroy(p);
        return st;
    }
    *out = p;
    return BL_OK;
}

bl_status bl_import_finish(const char *edges_path, bl_edge_list *edges, uint64_t n, const int8_t *signs,
                           char **ids, bl_meta *meta, const bl_sign_policy *policy, bl_import_info *info,
                           const bl_report *report, bl_connectome **out, bl_error *err)
{
    *out = NULL;
    char **sign_col = NULL;
    bl_status st = bl_meta_add_empty(meta, "sign", &sign_col, err);
    for (uint64_t i = 0; st == BL_OK && i < n; i++)
        if (!(sign_col[i] = bl_import_strdup(signs[i] > 0 ? "+1" : signs[i] < 0 ? "-1" : "")))
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    const char **cols_flat = NULL;
    const char ***cols = calloc(meta->n_columns ? meta->n_columns : 1, sizeof *cols);
    if (st == BL_OK && !cols)
        st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
    /* The connectome wants "" for a missing value, never NULL. */
    for (size_t k = 0; st == BL_OK && k < meta->n_columns; k++) {
        for (uint64_t i = 0; i < n; i++)
            if (!meta->values[k][i] && !(meta->values[k][i] = bl_import_strdup("")))
                st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
        cols[k] = (const char **)meta->values[k];
    }
    /* The report goes into the description: the manifest then says what was dropped. */
    char *description = NULL;
    if (st == BL_OK) {
        size_t len = strlen(info->description) + (report && report->text ? report->len : 0) + 32;
        description = malloc(len);
        if (!description)
            st = bl_fail(err, BL_ERR_NOMEM, "out of memory");
        else if (report && report->len) {
            int w = snprintf(description, len, "%s. Import report: ", info->description);
            size_t at = w > 0 ? (size_t)w : 0;
            for (size_t i = 0; i < report->len; i++)
                description[at++] = report->text[i] == '\n' ? (i + 1 < report->len ? ';' : '\0') : report->text[i];
            description[at] = '\0';
        } else {
            snprintf(description, len, "%s", info->description);
        }
    }
    if (st == BL_OK) {
        const char *old = info->description;
        info->description = description;
        st = bl_import_assemble(edges_path, edges->e, edges->n, n, signs, (const char *const *)ids, meta->n_columns,
                                (const char *const *)meta->names, cols, policy, info, out, err);
        info->description = old;
    }
    (void)cols_flat;
    free(cols);
    free(description);
    return st;
}
