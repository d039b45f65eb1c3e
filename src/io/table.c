/* bl_table: format detection, dispatch to a backend (table_<format>.c), and
 * the conversions every backend shares (a column read in its own type, then
 * converted to what the caller wants), so each backend only decodes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <unistd.h>

#include "core/file.h"
#include "io/table_impl.h"

struct bl_table {
    const bl_table_backend *be;
    void *state;
    char *path;
    bl_table_schema schema;
    uint64_t rows_done; /* rows returned by earlier batches: row numbers in messages */
};

static const bl_table_backend *const backends[] = {&bl_table_parquet, &bl_table_arrow, &bl_table_csv};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The format a name says, or AUTO when it says none. */
static bl_table_format format_by_name(const char *path)
{
    if (ends_with(path, ".csv") || ends_with(path, ".csv.gz") || ends_with(path, ".tsv") || ends_with(path, ".tsv.gz"))
        return BL_TABLE_CSV;
    if (ends_with(path, ".parquet") || ends_with(path, ".pq"))
        return BL_TABLE_PARQUET;
    if (ends_with(path, ".feather") || ends_with(path, ".arrow") || ends_with(path, ".arrows") ||
        ends_with(path, ".ipc") || ends_with(path, ".ftr"))
        return BL_TABLE_ARROW;
    return BL_TABLE_AUTO;
}

static const bl_table_backend *backend_of(bl_table_format f)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i]->format == f)
            return backends[i];
    return NULL;
}

/* Magic bytes first (a Parquet file named .csv is still Parquet), then the
 * name. gzip is CSV's only magic: CSV has none of its own, so a plain file is
 * CSV only by name. */
static bl_status detect(const char *path, bl_table_format *out, bl_error *err)
{
    /* bl_open_regular: a FIFO or a device given as a table is refused at
     * once instead of blocking here or being read without end. */
    int fd;
    bl_status st = bl_open_regular(path, &fd, NULL, err);
    if (st)
        return st;
    unsigned char head[16];
    ssize_t got;
    while ((got = read(fd, head, sizeof head)) < 0 && errno == EINTR)
        ;
    close(fd);
    size_t len = got > 0 ? (size_t)got : 0;
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i]->sniff && backends[i]->sniff(head, len)) {
            *out = backends[i]->format;
            return BL_OK;
        }
    bl_table_format byname = format_by_name(path);
    if (byname != BL_TABLE_AUTO) {
        *out = byname;
        return BL_OK;
    }
    return bl_fail(err, BL_ERR_UNSUPPORTED,
                   "%s: cannot tell the table format: no Parquet or Arrow magic bytes, and the name does "
                   "not end in .csv, .csv.gz, .parquet, .feather or .arrow",
                   path);
}

static void schema_free(bl_table_schema *s)
{
    for (size_t i = 0; s->names && i < s->n_columns; i++)
        free(s->names[i]);
    free(s->names);
    free(s->types);
    memset(s, 0, sizeof *s);
}

bl_status bl_table_open(const char *path, bl_table_format format, bl_table **out, bl_error *err)
{
    if (!out || !path)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_table_open: NULL argument");
    *out = NULL;
    bl_status st = BL_OK;
    if (format == BL_TABLE_AUTO && (st = detect(path, &format, err)) != BL_OK)
        return st;
    const bl_table_backend *be = backend_of(format);
    if (!be)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: no backend for table format %d", path, (int)format);
    bl_table *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    t->be = be;
    st = be->open(path, &t->state, &t->schema, err);
    if (st != BL_OK) {
        schema_free(&t->schema);
        free(t->path);
        free(t);
        return st;
    }
    *out = t;
    return BL_OK;
}

void bl_table_set_max_decoded(bl_table *t, uint64_t bytes)
{
    if (t && t->state && t->be->set_ceiling)
        t->be->set_ceiling(t->state, bytes ? bytes : BL_TABLE_DEFAULT_CEILING);
}

void bl_table_close(bl_table *t)
{
    if (!t)
        return;
    if (t->state)
        t->be->close(t->state);
    schema_free(&t->schema);
    free(t->path);
    free(t);
}

const char *bl_table_path(const bl_table *t) { return t ? t->path : ""; }
bl_table_format bl_table_format_of(const bl_table *t) { return t ? t->be->format : BL_TABLE_AUTO; }
size_t bl_table_n_columns(const bl_table *t) { return t ? t->schema.n_columns : 0; }
uint64_t bl_table_n_rows(const bl_table *t) { return t ? t->schema.n_rows : UINT64_MAX; }

const char *bl_table_column_name(const bl_table *t, size_t i)
{
    return t && i < t->schema.n_columns ? t->schema.names[i] : "";
}

bl_col_type bl_table_column_type(const bl_table *t, size_t i)
{
    return t && i < t->schema.n_columns ? t->schema.types[i] : (bl_col_type)0;
}

bl_status bl_table_find(const bl_table *t, const char *name, size_t *index, bl_error *err)
{
    for (size_t i = 0; i < t->schema.n_columns; i++)
        if (!strcmp(t->schema.names[i], name)) {
            *index = i;
            return BL_OK;
        }
    /* Name the columns the file has (as many as fit) so a typo is obvious. */
    char have[512];
    size_t at = 0;
    have[0] = '\0';
    for (size_t i = 0; i < t->schema.n_columns && at + 8 < sizeof have; i++) {
        int w = snprintf(have + at, sizeof have - at, "%s%s", i ? ", " : "", t->schema.names[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    if (at >= sizeof have)
        strcpy(have + sizeof have - 4, "...");
    return bl_fail(err, BL_ERR_FORMAT, "%s: no column '%s' (the file has: %s)", t->path, name, have);
}

const char *bl_col_type_name(bl_col_type t);
const char *bl_col_type_name(bl_col_type t)
{
    switch (t) {
    case BL_COL_BOOL: return "bool";
    case BL_COL_INT64: return "int64";
    case BL_COL_DOUBLE: return "double";
    case BL_COL_STRING: return "string";
    }
    return "unsupported";
}

/* ---- conversions ---- */

static int parse_i64(const char *s, size_t len, int64_t *v)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    size_t k = buf[0] == '-' || buf[0] == '+';
    if (!buf[k])
        return 0;
    for (size_t i = k; buf[i]; i++)
        if (buf[i] < '0' || buf[i] > '9')
            return 0;
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        return 0;
    *v = (int64_t)x;
    return 1;
}

static int parse_f64(const char *s, size_t len, double *v)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    /* Decimals only: strtod also takes hex floats, "inf" and "nan". */
    for (size_t i = 0; buf[i]; i++)
        if (!strchr("0123456789+-.eE", buf[i]))
            return 0;
    char *end;
    errno = 0;
    double x = strtod(buf, &end);
    if (*end || errno == ERANGE || !isfinite(x))
        return 0;
    *v = x;
    return 1;
}

static int parse_bool(const char *s, size_t len, int64_t *v)
{
    if ((len == 4 && !strncasecmp(s, "true", 4)) || (len == 1 && s[0] == '1')) {
        *v = 1;
        return 1;
    }
    if ((len == 5 && !strncasecmp(s, "false", 5)) || (len == 1 && s[0] == '0')) {
        *v = 0;
        return 1;
    }
    return 0;
}

static bl_status convert_fail(const bl_table *t, size_t col, uint64_t row, const char *what, bl_col_type want,
                              bl_error *err)
{
    return bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: %s does not convert to %s", t->path,
                   bl_table_column_name(t, col), (unsigned long long)(t->rows_done + row + 1), what,
                   bl_col_type_name(want));
}

static bl_status convert(const bl_table *t, size_t col, bl_column *c, bl_col_type want, bl_error *err)
{
    if (want == 0 || want == c->type)
        return BL_OK;
    uint64_t n = c->n;
    size_t bytes = (size_t)(n ? n : 1) * 8;
    if (c->type == BL_COL_STRING) {
        void *vals = calloc(1, bytes);
        if (!vals)
            return bl_fail(err, BL_ERR_NOMEM, "%s: column %s: out of memory", t->path, bl_table_column_name(t, col));
        for (uint64_t r = 0; r < n; r++) {
            if (c->valid && !c->valid[r])
                continue;
            const char *s = c->data + c->offsets[r];
            size_t len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
            int ok = want == BL_COL_INT64    ? parse_i64(s, len, (int64_t *)vals + r)
                     : want == BL_COL_DOUBLE ? parse_f64(s, len, (double *)vals + r)
                     : want == BL_COL_BOOL   ? parse_bool(s, len, (int64_t *)vals + r)
                                             : 0;
            if (!ok) {
                char what[96];
                size_t show = len < 40 ? len : 40;
                snprintf(what, sizeof what, "'%.*s%s'", (int)show, s, show < len ? "..." : "");
                for (char *p = what; *p; p++)
                    if ((unsigned char)*p < 0x20)
                        *p = '?';
                free(vals);
                return convert_fail(t, col, r, what, want, err);
            }
        }
        free(c->offsets);
        free(c->data);
        c->offsets = NULL;
        c->data = NULL;
        if (want == BL_COL_DOUBLE)
            c->f64 = vals;
        else
            c->i64 = vals;
        c->type = want;
        return BL_OK;
    }
    if (want == BL_COL_STRING)
        return bl_fail(err, BL_ERR_FORMAT, "%s: column %s holds %s values, not strings", t->path,
                       bl_table_column_name(t, col), bl_col_type_name(c->type));
    if ((c->type == BL_COL_INT64 || c->type == BL_COL_BOOL) && want == BL_COL_DOUBLE) {
        double *d = malloc(bytes);
        if (!d)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", t->path);
        for (uint64_t r = 0; r < n; r++) {
            int64_t v = c->i64[r];
            if (v > ((int64_t)1 << 53) || v < -((int64_t)1 << 53)) {
                free(d);
                char what[48];
                snprintf(what, sizeof what, "%lld", (long long)v);
                return convert_fail(t, col, r, what, want, err);
            }
            d[r] = (double)v;
        }
        free(c->i64);
        c->i64 = NULL;
        c->f64 = d;
        c->type = want;
        return BL_OK;
    }
    if (c->type == BL_COL_DOUBLE && (want == BL_COL_INT64 || want == BL_COL_BOOL)) {
        /* pandas writes an integer column holding a null as float64: accept
         * doubles that are whole numbers, refuse any other. */
        int64_t *v = malloc(bytes);
        if (!v)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", t->path);
        for (uint64_t r = 0; r < n; r++) {
            double x = c->f64[r];
            if (c->valid && !c->valid[r]) {
                v[r] = 0;
                continue;
            }
            if (!(x == floor(x) && fabs(x) <= 9007199254740992.0) || (want == BL_COL_BOOL && x != 0 && x != 1)) {
                free(v);
                char what[48];
                snprintf(what, sizeof what, "%.17g", x);
                return convert_fail(t, col, r, what, want, err);
            }
            v[r] = (int64_t)x;
        }
        free(c->f64);
        c->f64 = NULL;
        c->i64 = v;
        c->type = want;
        return BL_OK;
    }
    if (c->type == BL_COL_BOOL && want == BL_COL_INT64) {
        c->type = want;
        return BL_OK;
    }
    if (c->type == BL_COL_INT64 && want == BL_COL_BOOL) {
        for (uint64_t r = 0; r < n; r++)
            if (c->i64[r] != 0 && c->i64[r] != 1) {
                char what[48];
                snprintf(what, sizeof what, "%lld", (long long)c->i64[r]);
                return convert_fail(t, col, r, what, want, err);
            }
        c->type = want;
        return BL_OK;
    }
    return bl_fail(err, BL_ERR_FORMAT, "%s: column %s: cannot convert %s to %s", t->path,
                   bl_table_column_name(t, col), bl_col_type_name(c->type), bl_col_type_name(want));
}

bl_status bl_table_next(bl_table *t, const size_t *cols, const bl_col_type *want, size_t n, bl_column *out,
                        uint64_t *rows, bl_error *err)
{
    *rows = 0;
    for (size_t i = 0; i < n; i++)
        bl_column_clear(&out[i]);
    for (size_t i = 0; i < n; i++)
        if (cols[i] >= t->schema.n_columns)
            return bl_fail(err, BL_ERR_INTERNAL, "%s: column index %zu out of range (%zu columns)", t->path,
                           cols[i], t->schema.n_columns);
    uint64_t got = 0;
    bl_status st = t->be->next(t->state, cols, n, out, &got, err);
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        /* A NUL byte inside a string value is refused, as CSV refuses it:
         * every C consumer (ids, names, metadata) would cut the text short
         * there ("n7\0-left" importing as "n7"; issue 26). */
        const char *nul = got && out[i].type == BL_COL_STRING && out[i].data
                              ? memchr(out[i].data, '\0', (size_t)out[i].offsets[out[i].n])
                              : NULL;
        if (nul) {
            uint64_t r = 0;
            while (r + 1 < out[i].n && out[i].offsets[r + 1] <= nul - out[i].data)
                r++;
            st = bl_fail(err, BL_ERR_FORMAT, "%s: column %s, row %llu: the string contains a NUL byte", t->path,
                         bl_table_column_name(t, cols[i]), (unsigned long long)(t->rows_done + r));
            break;
        }
        if (got && out[i].n != got)
            st = bl_fail(err, BL_ERR_INTERNAL, "%s: column %s: %llu rows in a batch of %llu", t->path,
                         bl_table_column_name(t, cols[i]), (unsigned long long)out[i].n, (unsigned long long)got);
        else if (got)
            st = convert(t, cols[i], &out[i], want ? want[i] : (bl_col_type)0, err);
    }
    if (st != BL_OK || got == 0) {
        for (size_t i = 0; i < n; i++)
            bl_column_clear(&out[i]);
        if (st == BL_OK && got == 0)
            for (size_t i = 0; i < n; i++)
                out[i].type = want && want[i] ? want[i] : t->schema.types[cols[i]];
        return st;
    }
    t->rows_done += got;
    *rows = got;
    return BL_OK;
}

/* Append src to dst (same type); dst may be empty. */
static bl_status append(bl_column *dst, const bl_column *src, const char *path, bl_error *err)
{
    uint64_t n = dst->n + src->n;
    if (n > (uint64_t)(SIZE_MAX / 16))
        return bl_fail(err, BL_ERR_NOMEM, "%s: too many rows", path);
    if (src->valid || dst->valid) {
        uint8_t *v = realloc(dst->valid, (size_t)(n ? n : 1));
        if (!v)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        if (!dst->valid)
            memset(v, 1, (size_t)dst->n);
        if (src->valid)
            memcpy(v + dst->n, src->valid, (size_t)src->n);
        else
            memset(v + dst->n, 1, (size_t)src->n);
        dst->valid = v;
    }
    if (src->type == BL_COL_STRING) {
        int64_t base = dst->offsets ? dst->offsets[dst->n] : 0;
        int64_t add = src->offsets[src->n] - src->offsets[0];
        int64_t *o = realloc(dst->offsets, (size_t)(n + 1) * sizeof *o);
        if (!o)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        dst->offsets = o;
        if (dst->n == 0)
            o[0] = 0;
        for (uint64_t r = 0; r < src->n; r++)
            o[dst->n + r + 1] = base + (src->offsets[r + 1] - src->offsets[0]);
        char *d = realloc(dst->data, (size_t)(base + add ? base + add : 1));
        if (!d)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        if (add)
            memcpy(d + base, src->data + src->offsets[0], (size_t)add);
        dst->data = d;
    } else if (src->type == BL_COL_DOUBLE) {
        double *d = realloc(dst->f64, (size_t)(n ? n : 1) * sizeof *d);
        if (!d)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        memcpy(d + dst->n, src->f64, (size_t)src->n * sizeof *d);
        dst->f64 = d;
    } else {
        int64_t *d = realloc(dst->i64, (size_t)(n ? n : 1) * sizeof *d);
        if (!d)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        memcpy(d + dst->n, src->i64, (size_t)src->n * sizeof *d);
        dst->i64 = d;
    }
    dst->n = n;
    dst->type = src->type;
    return BL_OK;
}

bl_status bl_table_read_all(bl_table *t, const char *const *names, const bl_col_type *want, size_t n,
                            bl_column *out, bl_error *err)
{
    size_t *cols = calloc(n ? n : 1, sizeof *cols);
    bl_column *batch = calloc(n ? n : 1, sizeof *batch);
    bl_status st = cols && batch ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", t->path);
    for (size_t i = 0; i < n; i++)
        bl_column_clear(&out[i]);
    for (size_t i = 0; st == BL_OK && i < n; i++)
        st = bl_table_find(t, names[i], &cols[i], err);
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        out[i].type = want && want[i] ? want[i] : t->schema.types[cols[i]];
        if (out[i].type == BL_COL_STRING) {
            out[i].offsets = calloc(1, sizeof *out[i].offsets);
            if (!out[i].offsets)
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", t->path);
        }
    }
    uint64_t rows = 1;
    while (st == BL_OK && rows) {
        st = bl_table_next(t, cols, want, n, batch, &rows, err);
        for (size_t i = 0; st == BL_OK && rows && i < n; i++)
            st = append(&out[i], &batch[i], t->path, err);
    }
    for (size_t i = 0; batch && i < n; i++)
        bl_column_clear(&batch[i]);
    free(batch);
    free(cols);
    if (st != BL_OK)
        for (size_t i = 0; i < n; i++)
            bl_column_clear(&out[i]);
    return st;
}
