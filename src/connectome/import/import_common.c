#include "connectome/import/import_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "core/file.h"

void bl_import_printable(char *dst, size_t size, const char *src)
{
    if (!dst || size < 4)
        return;
    if (!src)
        src = "";
    size_t limit = size - 1;
    size_t len = strlen(src);
    size_t keep = len <= limit ? len : limit - 3;
    for (size_t i = 0; i < keep; i++) {
        unsigned char ch = (unsigned char)src[i];
        dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
    }
    if (keep < len) {
        memcpy(dst + keep, "...", 3);
        keep += 3;
    }
    dst[keep] = '\0';
}

char *bl_import_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *bl_import_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a > SIZE_MAX / 2 || b > SIZE_MAX / 2)
        return NULL;
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    size_t at = a;
    /* "dir/" and "dir" give the same path, so messages stay tidy. */
    if (a == 0 || dir[a - 1] != '/')
        p[at++] = '/';
    memcpy(p + at, name, b + 1);
    return p;
}

bl_status bl_import_open_table(const char *path, const char *const *names, size_t n,
                               size_t *index, size_t *nfields, bl_csv **out, bl_error *err)
{
    *out = NULL;
    bl_csv *csv = NULL;
    bl_status st = bl_csv_open(path, &csv, err);
    if (st != BL_OK)
        return st;
    int r = bl_csv_next(csv, err);
    if (r < 0) {
        bl_csv_close(csv);
        return err ? err->status : BL_ERR_FORMAT;
    }
    if (r == 0) {
        bl_csv_close(csv);
        return bl_fail(err, BL_ERR_FORMAT, "%s:1: empty file, expected a header row", path);
    }
    for (size_t i = 0; i < n; i++) {
        st = bl_csv_column(csv, names[i], &index[i], err);
        if (st != BL_OK) {
            bl_csv_close(csv);
            return st;
        }
    }
    *nfields = bl_csv_nfields(csv);
    *out = csv;
    return BL_OK;
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

bl_status bl_import_field_text(const bl_csv *csv, size_t i, const char *column, bl_error *err)
{
    const char *s = bl_csv_field(csv, i);
    for (size_t k = 0; s[k]; k++) {
        unsigned char ch = (unsigned char)s[k];
        if (ch < 0x20 || ch == 0x7f) {
            char shown[128];
            bl_import_printable(shown, sizeof shown, s);
            return bl_fail(err, BL_ERR_FORMAT,
                           "%s:%llu, column %s: '%s' contains a control character (byte %zu)",
                           bl_csv_path(csv), (unsigned long long)bl_csv_line(csv), column, shown,
                           k + 1);
        }
    }
    return BL_OK;
}

bl_status bl_import_field_name(const bl_csv *csv, size_t i, const char *column, bl_error *err)
{
    const char *s = bl_csv_field(csv, i);
    size_t len = strlen(s);
    if (len == 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu, column %s: empty name", bl_csv_path(csv),
                       (unsigned long long)bl_csv_line(csv), column);
    if (is_blank(s[0]) || is_blank(s[len - 1])) {
        char shown[128];
        bl_import_printable(shown, sizeof shown, s);
        return bl_fail(err, BL_ERR_FORMAT, "%s:%llu, column %s: name '%s' has blanks at an end",
                       bl_csv_path(csv), (unsigned long long)bl_csv_line(csv), column, shown);
    }
    return bl_import_field_text(csv, i, column, err);
}

static int edge_cmp(const void *a, const void *b)
{
    const bl_import_edge *x = a, *y = b;
    if (x->pre != y->pre)
        return x->pre < y->pre ? -1 : 1;
    if (x->post != y->post)
        return x->post < y->post ? -1 : 1;
    /* Ties only for duplicates, which are refused; ordering them by line makes
     * the message name the earlier line first, deterministically. */
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return 0;
}

bl_status bl_import_build_csr(const char *path, bl_import_edge *edges, uint64_t n_edges,
                              uint64_t n_neurons, const int8_t *signs,
                              const char *const *external_ids, int64_t **offsets,
                              int32_t **targets, int32_t **counts, bl_error *err)
{
    *offsets = NULL;
    *targets = NULL;
    *counts = NULL;
    if (n_neurons > BL_MAX_NEURONS || n_edges > (uint64_t)INT64_MAX ||
        n_neurons + 1 > SIZE_MAX / sizeof(int64_t) || n_edges > SIZE_MAX / sizeof(int32_t))
        return bl_fail(err, BL_ERR_NOMEM, "%s: %llu neurons / %llu edges is too large", path,
                       (unsigned long long)n_neurons, (unsigned long long)n_edges);
    /* The table importers hand over edges already sorted (bl_edge_list_sort). */
    int sorted = 1;
    for (uint64_t e = 1; sorted && e < n_edges; e++)
        sorted = edge_cmp(&edges[e - 1], &edges[e]) <= 0;
    if (!sorted)
        qsort(edges, (size_t)n_edges, sizeof *edges, edge_cmp);
    for (uint64_t e = 1; e < n_edges; e++) {
        if (edges[e].pre == edges[e - 1].pre && edges[e].post == edges[e - 1].post) {
            char a[128], b[128];
            bl_import_printable(a, sizeof a, external_ids[edges[e].pre]);
            bl_import_printable(b, sizeof b, external_ids[edges[e].post]);
            return bl_fail(err, BL_ERR_INVALID,
                           "%s:%llu: duplicate edge %s -> %s (first given at line %llu)", path,
                           (unsigned long long)edges[e].line, a, b,
                           (unsigned long long)edges[e - 1].line);
        }
    }
    int64_t *off = calloc((size_t)n_neurons + 1, sizeof *off);
    /* malloc(0) may return NULL; ask for at least one element. */
    int32_t *tgt = malloc((size_t)(n_edges ? n_edges : 1) * sizeof *tgt);
    int32_t *cnt = malloc((size_t)(n_edges ? n_edges : 1) * sizeof *cnt);
    if (!off || !tgt || !cnt) {
        free(off);
        free(tgt);
        free(cnt);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory building the graph", path);
    }
    for (uint64_t e = 0; e < n_edges; e++) {
        const bl_import_edge *x = &edges[e];
        if (x->pre < 0 || (uint64_t)x->pre >= n_neurons || x->post < 0 ||
            (uint64_t)x->post >= n_neurons || x->count < 1 ||
            (signs[x->pre] != 1 && signs[x->pre] != -1)) {
            free(off);
            free(tgt);
            free(cnt);
            return bl_fail(err, BL_ERR_INTERNAL, "%s:%llu: edge out of range while building CSR",
                           path, (unsigned long long)x->line);
        }
        off[x->pre + 1]++;
        tgt[e] = x->post;
        cnt[e] = signs[x->pre] * x->count; /* |count| <= INT32_MAX, so no overflow */
    }
    for (uint64_t i = 0; i < n_neurons; i++)
        off[i + 1] += off[i];
    *offsets = off;
    *targets = tgt;
    *counts = cnt;
    return BL_OK;
}

bl_status bl_import_set_source(bl_connectome *c, const char *description,
                               const char *const *paths, const char *const *labels, size_t n,
                               bl_error *err)
{
    /* Labels are the files' own names, not the caller's path, so the manifest
     * does not depend on where the data directory was. */
    size_t size = strlen(description) + 1;
    for (size_t i = 0; i < n; i++)
        size += strlen(labels[i]) + BL_SHA256_HEX_LEN + 32; /* separator + " sha256=" */
    char *text = malloc(size);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    size_t at = 0;
    memcpy(text, description, strlen(description));
    at = strlen(description);
    for (size_t i = 0; i < n; i++) {
        /* The digest of the bytes the importer parsed (the input ledger,
         * core/file.h), never a second read: a file rewritten during the
         * import would otherwise be named by bytes that were not imported. */
        char hex[BL_SHA256_HEX_LEN + 1];
        uint64_t bytes = 0;
        int found = bl_inputs_find(paths[i], hex, &bytes);
        if (found != 1) {
            free(text);
            return found < 0 ? bl_fail(err, BL_ERR_IO, "%s: changed while being imported (read twice, with different "
                                       "bytes); import it again once it is complete", paths[i])
                             : bl_fail(err, BL_ERR_INTERNAL, "%s: an input of this import was not read in full "
                                       "through the input ledger, so it has no digest of the bytes parsed", paths[i]);
        }
        const char *sep = i == 0 ? "; inputs: " : ", ";
        size_t ls = strlen(sep), ll = strlen(labels[i]);
        memcpy(text + at, sep, ls);
        at += ls;
        memcpy(text + at, labels[i], ll);
        at += ll;
        memcpy(text + at, " sha256=", 8);
        at += 8;
        memcpy(text + at, hex, BL_SHA256_HEX_LEN);
        at += BL_SHA256_HEX_LEN;
    }
    text[at] = '\0';
    bl_status st = bl_connectome_set_info(c, "source", text, err);
    free(text);
    return st;
}

static bl_status set_infos(bl_connectome *c, const bl_sign_policy *policy, const bl_import_info *info,
                           bl_error *err)
{
    const char *policy_text = bl_sign_policy_describe(policy);
    size_t len = strlen(info->sign_key) + strlen(policy_text) + 3;
    char *signs = malloc(len);
    if (!signs)
        return bl_fail(err, BL_ERR_NOMEM, "out of memory");
    snprintf(signs, len, "%s: %s", info->sign_key, policy_text);
    const char *keys[] = {"name", "description", "citation", "licence", "sign_policy", "generator"};
    const char *values[] = {info->name, info->description, info->citation, info->licence, signs, info->generator};
    bl_status st = bl_import_set_source(c, info->source, info->paths, info->labels, info->n_files, err);
    for (size_t k = 0; st == BL_OK && k < sizeof keys / sizeof keys[0]; k++)
        st = bl_connectome_set_info(c, keys[k], values[k], err);
    free(signs);
    return st;
}

bl_status bl_import_assemble(const char *edges_path, bl_import_edge *edges, uint64_t n_edges, uint64_t n_neurons,
                             const int8_t *signs, const char *const *ids, size_t n_columns,
                             const char *const *column_names, const char **const *columns,
                             const bl_sign_policy *policy, const bl_import_info *info, bl_connectome **out,
                             bl_error *err)
{
    *out = NULL;
    int64_t *offsets = NULL;
    int32_t *targets = NULL, *counts = NULL;
    bl_connectome *c = NULL;
    bl_status st = bl_import_build_csr(edges_path, edges, n_edges, n_neurons, signs, ids, &offsets, &targets,
                                       &counts, err);
    if (st == BL_OK)
        st = bl_connectome_adopt(n_neurons, n_edges, offsets, targets, counts, &c, err); /* owns the arrays */
    if (st == BL_OK)
        st = bl_connectome_set_external_ids(c, ids, err);
    for (size_t k = 0; st == BL_OK && k < n_columns; k++)
        st = bl_connectome_add_column(c, column_names[k], columns[k], err);
    if (st == BL_OK)
        st = set_infos(c, policy, info, err);
    if (st != BL_OK) {
        bl_connectome_destroy(c);
        return st;
    }
    *out = c;
    return BL_OK;
}

bl_status bl_import_policy(bl_status (*make)(bl_sign_policy **, bl_error *), const char *overrides,
                           bl_sign_policy **out, bl_error *err)
{
    *out = NULL;
    bl_sign_policy *p = NULL;
    bl_status st = make(&p, err);
    if (st == BL_OK && overrides)
        st = bl_sign_policy_load_overrides(p, overrides, err);
    if (st != BL_OK) {
        bl_sign_policy_destroy(p);
        return st;
    }
    *out = p;
    return BL_OK;
}

bl_status bl_import_policy_rules(int default_sign, const bl_import_sign_rule *rules, size_t n, bl_sign_policy **out,
                                 bl_error *err)
{
    bl_sign_policy *p = NULL;
    bl_status st = bl_sign_policy_create(default_sign, &p, err);
    for (size_t i = 0; st == BL_OK && i < n; i++)
        st = bl_sign_policy_set(p, rules[i].key, rules[i].sign, err);
    if (st == BL_OK)
        st = bl_sign_policy_set_unknown(p, +1, err);
    if (st != BL_OK) {
        bl_sign_policy_destroy(p);
        p = NULL;
    }
    *out = p;
    return st;
}

bl_status bl_import_run_shipped(const bl_import_args *args, const char *default_dir,
                                bl_status (*make)(bl_sign_policy **, bl_error *),
                                bl_status (*import)(const char *, const bl_sign_policy *, bl_connectome **, bl_error *),
                                bl_connectome **out, bl_error *err)
{
    const char *data = bl_import_arg(args, "--data");
    bl_sign_policy *policy = NULL;
    bl_status st = bl_import_policy(make, bl_import_arg(args, "--sign-policy"), &policy, err);
    if (st == BL_OK)
        st = import(data ? data : default_dir, policy, out, err);
    bl_sign_policy_destroy(policy);
    return st;
}

bl_status bl_import_ledgered(bl_import_run_fn fn, const bl_import_args *args, bl_connectome **out, char **report,
                             bl_error *err)
{
    bl_inputs_begin();
    bl_status st = fn(args, out, report, err);
    bl_inputs_end();
    return st;
}
