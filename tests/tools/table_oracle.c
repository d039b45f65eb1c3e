/* Compare what bl_table reads with what an independent writer says it wrote.
 *   usage: table_oracle DIR   (DIR/oracle.json, written by tests/js/arrow_fixtures.mjs and the like)
 * oracle.json: {label, fixtures: [{path, codec, format, columns: [{name, kind,
 * type, values}]}]}; kind int (values as decimal strings), float, bool (0/1),
 * string; null for a null. Every fixture is read twice: all columns in
 * reverse order, then every other column (so column selection is exercised).
 * Prints "<label> oracle: <codec> <type>: N values equal" per codec and type,
 * and exits 1 at the first difference, naming file, column and row. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/table.h"
#include "slurp.h"

typedef struct tally {
    char key[128];
    uint64_t n;
} tally;
static tally tallies[256];
static size_t n_tallies;

static void count(const char *codec, const char *type, uint64_t n)
{
    char key[128];
    snprintf(key, sizeof key, "%s %s", codec, type);
    for (size_t i = 0; i < n_tallies; i++)
        if (!strcmp(tallies[i].key, key)) {
            tallies[i].n += n;
            return;
        }
    if (n_tallies < 256) {
        snprintf(tallies[n_tallies].key, sizeof tallies[0].key, "%s", key);
        tallies[n_tallies++].n = n;
    }
}

/* Compare row r of column c with the expected JSON value; 1 when equal. */
static int same(const bl_column *c, uint64_t r, const cJSON *want, const char *kind, char *got, size_t gotlen)
{
    int null = c->valid && !c->valid[r];
    if (null)
        snprintf(got, gotlen, "null");
    else if (c->type == BL_COL_STRING)
        snprintf(got, gotlen, "'%.*s'", (int)(c->offsets[r + 1] - c->offsets[r]), c->data + c->offsets[r]);
    else if (c->type == BL_COL_DOUBLE)
        snprintf(got, gotlen, "%.17g", c->f64[r]);
    else
        snprintf(got, gotlen, "%" PRId64, c->i64[r]);
    if (cJSON_IsNull(want))
        return null;
    if (null)
        return 0;
    if (!strcmp(kind, "int")) {
        errno = 0;
        long long v = strtoll(cJSON_GetStringValue(want), NULL, 10);
        return c->type == BL_COL_INT64 && errno == 0 && c->i64[r] == v;
    }
    if (!strcmp(kind, "bool"))
        return c->type == BL_COL_BOOL && c->i64[r] == (int64_t)cJSON_GetNumberValue(want);
    if (!strcmp(kind, "float"))
        return c->type == BL_COL_DOUBLE && c->f64[r] == cJSON_GetNumberValue(want);
    const char *s = cJSON_GetStringValue(want);
    size_t len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
    return c->type == BL_COL_STRING && s && strlen(s) == len && !memcmp(s, c->data + c->offsets[r], len);
}

/* Read the columns idx[0..n-1] of fixture fx batch by batch and compare. */
static int check(const char *dir, const cJSON *fx, const size_t *idx, size_t n, int tallied)
{
    char path[4096];
    const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(fx, "path"));
    const char *codec = cJSON_GetStringValue(cJSON_GetObjectItem(fx, "codec"));
    const cJSON *cols = cJSON_GetObjectItem(fx, "columns");
    snprintf(path, sizeof path, "%s/%s", dir, file);
    bl_table *t;
    bl_error err;
    if (bl_table_open(path, BL_TABLE_AUTO, &t, &err) != BL_OK) {
        fprintf(stderr, "FAIL %s\n", err.message);
        return 0;
    }
    size_t *tcol = calloc(n ? n : 1, sizeof *tcol);
    bl_column *out = calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cols, (int)idx[i]);
        if (bl_table_find(t, cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), &tcol[i], &err) != BL_OK) {
            fprintf(stderr, "FAIL %s\n", err.message);
            return 0;
        }
    }
    uint64_t base = 0, rows = 0;
    int ok = 1;
    bl_status st = BL_OK;
    while (ok && (st = bl_table_next(t, tcol, NULL, n, out, &rows, &err)) == BL_OK && rows) {
        for (size_t i = 0; ok && i < n; i++) {
            const cJSON *c = cJSON_GetArrayItem(cols, (int)idx[i]);
            const cJSON *vals = cJSON_GetObjectItem(c, "values");
            const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind"));
            for (uint64_t r = 0; ok && r < rows; r++) {
                char got[256];
                const cJSON *want = cJSON_GetArrayItem(vals, (int)(base + r));
                if (!want || !same(&out[i], r, want, kind, got, sizeof got)) {
                    char *w = want ? cJSON_PrintUnformatted(want) : NULL;
                    fprintf(stderr, "FAIL %s: column %s, row %llu: read %s, expected %s\n", path,
                            cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), (unsigned long long)(base + r), got,
                            w ? w : "(no such row)");
                    free(w);
                    ok = 0;
                }
            }
            if (ok && tallied)
                count(codec, cJSON_GetStringValue(cJSON_GetObjectItem(c, "type")), rows);
        }
        base += rows;
    }
    if (ok && st != BL_OK) {
        fprintf(stderr, "FAIL %s\n", err.message);
        ok = 0;
    }
    for (size_t i = 0; ok && i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cols, (int)idx[i]);
        if ((uint64_t)cJSON_GetArraySize(cJSON_GetObjectItem(c, "values")) != base) {
            fprintf(stderr, "FAIL %s: read %llu rows, expected %d\n", path, (unsigned long long)base,
                    cJSON_GetArraySize(cJSON_GetObjectItem(c, "values")));
            ok = 0;
        }
    }
    if (ok && bl_table_n_rows(t) != UINT64_MAX && bl_table_n_rows(t) != base) {
        fprintf(stderr, "FAIL %s: the footer says %llu rows, read %llu\n", path,
                (unsigned long long)bl_table_n_rows(t), (unsigned long long)base);
        ok = 0;
    }
    for (size_t i = 0; i < n; i++)
        bl_column_clear(&out[i]);
    free(out);
    free(tcol);
    bl_table_close(t);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: table_oracle DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/oracle.json", argv[1]);
    char *text = bl_test_slurp(path, NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    if (!root) {
        fprintf(stderr, "FAIL cannot read %s\n", path);
        return 1;
    }
    const char *label = cJSON_GetStringValue(cJSON_GetObjectItem(root, "label"));
    const cJSON *fx;
    int ok = 1, files = 0;
    cJSON_ArrayForEach(fx, cJSON_GetObjectItem(root, "fixtures"))
    {
        size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(fx, "columns"));
        size_t *idx = calloc(n ? n : 1, sizeof *idx), m = 0;
        for (size_t i = 0; i < n; i++)
            idx[i] = n - 1 - i;
        ok = ok && check(argv[1], fx, idx, n, 1);
        for (size_t i = 0; i < n; i += 2)
            idx[m++] = i;
        ok = ok && check(argv[1], fx, idx, m, 0);
        free(idx);
        files++;
    }
    const cJSON *miss;
    cJSON_ArrayForEach(miss, cJSON_GetObjectItem(root, "missing_codecs"))
        printf("%s oracle: codec %s not tested (its command-line tool is missing)\n", label, cJSON_GetStringValue(miss));
    uint64_t total = 0;
    for (size_t i = 0; i < n_tallies; i++) {
        printf("%s oracle: %s: %llu values equal\n", label, tallies[i].key, (unsigned long long)tallies[i].n);
        total += tallies[i].n;
    }
    printf("%s oracle: %d files, %llu values equal in all%s\n", label, files, (unsigned long long)total,
           ok ? "" : " before the first difference");
    cJSON_Delete(root);
    free(text);
    return ok ? 0 : 1;
}
