/* CSV backend of bl_table over bl_csv (libcsv + zlib: a .gz file is read
 * transparently). The header row names the columns; every column reads as
 * strings (table.c converts to what the caller wants), and an empty field is
 * a null. Rows come in blocks of CSV_TABLE_BLOCK so memory stays bounded by
 * the block, whatever the file's size. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/csv.h"
#include "io/table_impl.h"

#ifndef CSV_TABLE_BLOCK
#define CSV_TABLE_BLOCK 65536
#endif

typedef struct csv_state {
    bl_csv *csv;
    size_t n_columns;
    int done;
} csv_state;

static int csv_sniff(const unsigned char *head, size_t len)
{
    /* gzip: the only magic a CSV table here can have (a .csv.gz file). */
    return len >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

static void csv_close(void *state)
{
    csv_state *s = state;
    if (!s)
        return;
    bl_csv_close(s->csv);
    free(s);
}

static bl_status csv_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    csv_state *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    bl_status st = bl_csv_open(path, &s->csv, err);
    if (st != BL_OK) {
        free(s);
        return st;
    }
    int r = bl_csv_next(s->csv, err);
    if (r <= 0) {
        csv_close(s);
        return r < 0 ? err->status : bl_fail(err, BL_ERR_FORMAT, "%s:1: empty file, expected a header row", path);
    }
    size_t n = bl_csv_nfields(s->csv);
    schema->names = calloc(n, sizeof *schema->names);
    schema->types = calloc(n, sizeof *schema->types);
    if (!schema->names || !schema->types) {
        csv_close(s);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    schema->n_columns = n;
    schema->n_rows = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        schema->types[i] = BL_COL_STRING;
        if (!(schema->names[i] = strdup(bl_csv_field(s->csv, i)))) {
            csv_close(s);
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(schema->names[j], schema->names[i])) {
                st = bl_fail(err, BL_ERR_FORMAT, "%s:%llu: column '%s' appears twice (columns %zu and %zu)",
                                       path, (unsigned long long)bl_csv_line(s->csv), schema->names[i], j + 1, i + 1);
                csv_close(s);
                return st;
            }
    }
    s->n_columns = n;
    *state = s;
    return BL_OK;
}

/* Grow a column's byte buffer to hold `need` bytes. */
static int reserve(bl_column *c, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    char *d = realloc(c->data, n);
    if (!d)
        return 0;
    c->data = d;
    *cap = n;
    return 1;
}

static bl_status csv_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    csv_state *s = state;
    const char *path = bl_csv_path(s->csv);
    *rows = 0;
    if (s->done)
        return BL_OK;
    size_t *cap = calloc(n ? n : 1, sizeof *cap);
    if (!cap)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    bl_status st = BL_OK;
    for (size_t i = 0; i < n; i++) {
        out[i].type = BL_COL_STRING;
        out[i].offsets = malloc((CSV_TABLE_BLOCK + 1) * sizeof *out[i].offsets);
        if (!out[i].offsets) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
        out[i].offsets[0] = 0;
        if (!reserve(&out[i], &cap[i], 1)) { /* data is never NULL, even when every field is empty */
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            break;
        }
    }
    uint64_t r = 0;
    while (st == BL_OK && r < CSV_TABLE_BLOCK) {
        int got = bl_csv_next(s->csv, err);
        if (got < 0) {
            st = err->status;
            break;
        }
        if (got == 0) {
            s->done = 1;
            break;
        }
        if ((st = bl_csv_expect_fields(s->csv, s->n_columns, err)) != BL_OK)
            break;
        for (size_t i = 0; i < n; i++) {
            bl_column *c = &out[i];
            const char *f = bl_csv_field(s->csv, cols[i]);
            size_t len = strlen(f);
            size_t at = (size_t)c->offsets[r];
            if (!reserve(c, &cap[i], at + len + 1)) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            memcpy(c->data + at, f, len);
            c->offsets[r + 1] = (int64_t)(at + len);
            if (len == 0 && !c->valid) {
                c->valid = malloc(CSV_TABLE_BLOCK);
                if (!c->valid) {
                    st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                    break;
                }
                memset(c->valid, 1, (size_t)r);
            }
            if (c->valid)
                c->valid[r] = len != 0;
        }
        r++;
    }
    free(cap);
    for (size_t i = 0; i < n; i++)
        out[i].n = r;
    if (st == BL_OK)
        *rows = r;
    return st;
}

const bl_table_backend bl_table_csv = {"csv", BL_TABLE_CSV, csv_sniff, csv_open, csv_next, csv_close, NULL};
