/* The Parquet writer (include/brainlesslab/table.h): one row group per
 * bl_parquet_writer_write call, v1 data pages of at most PQ_PAGE_ROWS rows,
 * PLAIN numbers and booleans, strings dictionary-encoded (a PLAIN dictionary
 * page, then RLE_DICTIONARY indices), optional columns with RLE definition
 * levels, each page compressed with zstd, snappy or nothing. Meant for our
 * own tables (spike records, test fixtures): every value is kept in memory
 * for the row group being written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/parquet.h"

#ifndef PQ_PAGE_ROWS
#define PQ_PAGE_ROWS 65536u
#endif

typedef struct chunk_info {
    int64_t data_at, dict_at; /* dict_at -1: none */
    int64_t uncompressed, compressed;
    int64_t num_values;
} chunk_info;

struct bl_parquet_writer {
    char *path;
    FILE *f;
    int32_t codec;
    size_t n;
    bl_parquet_column_spec *spec; /* names strdup'd */
    uint64_t at;                  /* bytes written */
    uint64_t rows;
    size_t n_rg, cap_rg;
    int64_t *rg_rows;
    chunk_info *chunks;           /* n_rg * n */
    char **kv;                    /* key, value, key, value, ... (strdup'd) */
    size_t n_kv;
};

/* ---- bytes ---- */

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
    int failed;
} buf;

static void b_put(buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void b_u32(buf *b, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    b_put(b, q, 4);
}

static void b_u64(buf *b, uint64_t v)
{
    uint8_t q[8];
    for (int i = 0; i < 8; i++)
        q[i] = (uint8_t)(v >> (8 * i));
    b_put(b, q, 8);
}

static void b_varint(buf *b, uint64_t v)
{
    uint8_t q[10];
    size_t n = 0;
    do {
        q[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            q[n] |= 0x80;
        n++;
    } while (v);
    b_put(b, q, n);
}

/* The RLE / bit-packed hybrid: runs of 8 or more equal values as RLE runs,
 * the rest bit-packed in groups of 8 (the last group padded with zeros). */
static void b_hybrid(buf *b, const uint32_t *v, size_t n, int bw)
{
    size_t vbytes = ((size_t)bw + 7) / 8;
    size_t i = 0;
    while (i < n) {
        size_t run = 1;
        while (i + run < n && v[i + run] == v[i])
            run++;
        if (run >= 8) {
            b_varint(b, (uint64_t)run << 1);
            uint8_t q[4] = {(uint8_t)v[i], (uint8_t)(v[i] >> 8), (uint8_t)(v[i] >> 16), (uint8_t)(v[i] >> 24)};
            b_put(b, q, vbytes);
            i += run;
            continue;
        }
        size_t start = i;
        for (;;) {
            i = i + 8 < n ? i + 8 : n;
            if (i >= n)
                break;
            size_t r = 1;
            while (i + r < n && r < 8 && v[i + r] == v[i])
                r++;
            if (r >= 8)
                break;
        }
        size_t count = i - start, groups = (count + 7) / 8;
        b_varint(b, (uint64_t)groups << 1 | 1);
        size_t bytes = groups * (size_t)bw;
        size_t at = b->len;
        uint8_t zero[64] = {0};
        for (size_t k = 0; k < bytes; k += sizeof zero)
            b_put(b, zero, bytes - k < sizeof zero ? bytes - k : sizeof zero);
        if (b->failed)
            return;
        uint8_t *out = b->p + at;
        for (size_t k = 0; k < count; k++) {
            uint64_t bit = (uint64_t)k * (uint64_t)bw;
            for (int j = 0; j < bw; j++, bit++)
                if (v[start + k] >> j & 1)
                    out[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        }
    }
}

/* ---- the writer ---- */

static int codec_of(const char *name, int32_t *codec)
{
    if (!name || !strcmp(name, "zstd"))
        *codec = PQ_ZSTD;
    else if (!strcmp(name, "snappy"))
        *codec = PQ_SNAPPY;
    else if (!strcmp(name, "none") || !strcmp(name, "uncompressed"))
        *codec = PQ_UNCOMPRESSED;
    else
        return -1;
    return 0;
}

static void writer_free(bl_parquet_writer *w)
{
    if (!w)
        return;
    if (w->spec)
        for (size_t i = 0; i < w->n; i++)
            free((char *)w->spec[i].name);
    free(w->spec);
    for (size_t i = 0; i < 2 * w->n_kv; i++)
        free(w->kv[i]);
    free(w->kv);
    free(w->rg_rows);
    free(w->chunks);
    free(w->path);
    free(w);
}

bl_status bl_parquet_writer_create(const char *path, const bl_parquet_column_spec *columns, size_t n,
                                   const char *codec, bl_parquet_writer **out, bl_error *err)
{
    *out = NULL;
    int32_t c;
    if (codec_of(codec, &c))
        return bl_fail(err, BL_ERR_INVALID, "%s: unknown Parquet codec '%s' (zstd, snappy or none)", path, codec);
    if (n == 0)
        return bl_fail(err, BL_ERR_INVALID, "%s: a Parquet file needs at least one column", path);
    for (size_t i = 0; i < n; i++) {
        bl_col_type t = columns[i].type;
        if (!columns[i].name || !columns[i].name[0])
            return bl_fail(err, BL_ERR_INVALID, "%s: column %zu has no name", path, i);
        if (t != BL_COL_INT64 && t != BL_COL_DOUBLE && t != BL_COL_STRING && t != BL_COL_BOOL)
            return bl_fail(err, BL_ERR_INVALID, "%s: column '%s': unknown type %d", path, columns[i].name, (int)t);
    }
    bl_parquet_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) || !(w->spec = calloc(n, sizeof *w->spec))) {
        writer_free(w);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    w->n = n;
    w->codec = c;
    for (size_t i = 0; i < n; i++) {
        w->spec[i] = columns[i];
        if (!(w->spec[i].name = strdup(columns[i].name))) {
            writer_free(w);
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        }
    }
    if (!(w->f = fopen(path, "wb"))) {
        bl_status st = bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        writer_free(w);
        return st;
    }
    if (fwrite("PAR1", 1, 4, w->f) != 4) {
        bl_parquet_writer_abort(w);
        return bl_fail(err, BL_ERR_IO, "%s: cannot write", path);
    }
    w->at = 4;
    *out = w;
    return BL_OK;
}

/* Write one page (header + compressed body) and count it into *ci. */
static bl_status write_page(bl_parquet_writer *w, const char *col, int dict, const buf *body, uint32_t values,
                            int32_t encoding, chunk_info *ci, bl_error *err)
{
    if (body->failed)
        return bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': out of memory for a page", w->path, col);
    uint8_t *z = NULL;
    size_t zn = 0;
    bl_pq_why why = {{0}};
    if (body->len > INT32_MAX)
        return bl_fail(err, BL_ERR_INVALID, "%s: column '%s': a page over 2 GiB (%zu bytes)", w->path, col,
                       body->len);
    if (bl_pq_compress(w->codec, body->p ? body->p : (const uint8_t *)"", body->len, &z, &zn, &why))
        return bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': %s", w->path, col, why.text);
    bl_pq_tw h = {0};
    bl_pq_tw_i32(&h, 1, dict ? PQ_DICTIONARY_PAGE : PQ_DATA_PAGE);
    bl_pq_tw_i32(&h, 2, (int32_t)body->len);
    bl_pq_tw_i32(&h, 3, (int32_t)zn);
    bl_pq_tw_struct_begin(&h, dict ? 7 : 5);
    bl_pq_tw_i32(&h, 1, (int32_t)values);
    bl_pq_tw_i32(&h, 2, encoding);
    if (!dict) {
        bl_pq_tw_i32(&h, 3, PQ_RLE);
        bl_pq_tw_i32(&h, 4, PQ_RLE);
    }
    bl_pq_tw_struct_end(&h);
    bl_pq_tw_struct_end(&h);
    bl_status st = BL_OK;
    if (h.failed)
        st = bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': out of memory", w->path, col);
    else if (fwrite(h.buf, 1, h.len, w->f) != h.len || (zn && fwrite(z, 1, zn, w->f) != zn))
        st = bl_fail(err, BL_ERR_IO, "%s: column '%s': cannot write a page at byte %llu", w->path, col,
                     (unsigned long long)w->at);
    if (!st) {
        if (dict)
            ci->dict_at = (int64_t)w->at;
        else if (ci->data_at < 0)
            ci->data_at = (int64_t)w->at;
        w->at += h.len + zn;
        ci->uncompressed += (int64_t)(h.len + body->len);
        ci->compressed += (int64_t)(h.len + zn);
    }
    free(z);
    bl_pq_tw_free(&h);
    return st;
}

/* Strings to dictionary indices, through an open-addressing hash table. */
static bl_status dictionary(bl_parquet_writer *w, const bl_parquet_column_spec *s, const bl_column *c,
                            uint32_t *idx, buf *dict, uint32_t *n_dict, bl_error *err)
{
    size_t cap = 16;
    while (cap < 2 * c->n)
        cap *= 2;
    uint64_t *slot = malloc(cap * sizeof *slot); /* row of the entry's first use + 1; 0 empty */
    uint32_t *slot_idx = malloc(cap * sizeof *slot_idx);
    if (!slot || !slot_idx) {
        free(slot);
        free(slot_idx);
        return bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': out of memory for the dictionary", w->path, s->name);
    }
    memset(slot, 0, cap * sizeof *slot);
    uint32_t k = 0;
    for (uint64_t r = 0; r < c->n; r++) {
        if (c->valid && !c->valid[r])
            continue;
        const char *p = c->data + c->offsets[r];
        size_t len = (size_t)(c->offsets[r + 1] - c->offsets[r]);
        uint64_t hsh = 1469598103934665603ull;
        for (size_t i = 0; i < len; i++)
            hsh = (hsh ^ (uint8_t)p[i]) * 1099511628211ull;
        size_t at = (size_t)hsh & (cap - 1);
        for (;; at = (at + 1) & (cap - 1)) {
            if (!slot[at]) {
                slot[at] = r + 1;
                slot_idx[at] = k++;
                b_u32(dict, (uint32_t)len);
                b_put(dict, p, len);
                break;
            }
            uint64_t q = slot[at] - 1;
            size_t qlen = (size_t)(c->offsets[q + 1] - c->offsets[q]);
            if (qlen == len && !memcmp(c->data + c->offsets[q], p, len))
                break;
        }
        idx[r] = slot_idx[at];
    }
    free(slot);
    free(slot_idx);
    *n_dict = k;
    return BL_OK;
}

static int bits_for(uint32_t n)
{
    int bw = 0;
    while (bw < 32 && ((uint64_t)1 << bw) < n)
        bw++;
    return bw;
}

static bl_status write_chunk(bl_parquet_writer *w, const bl_parquet_column_spec *s, const bl_column *c,
                             chunk_info *ci, bl_error *err)
{
    ci->data_at = ci->dict_at = -1;
    ci->num_values = (int64_t)c->n;
    uint32_t *idx = NULL, *lv = NULL;
    uint32_t n_dict = 0;
    buf body = {0};
    bl_status st = BL_OK;
    if (s->type == BL_COL_STRING) {
        if (!(idx = calloc(c->n ? c->n : 1, sizeof *idx)))
            return bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': out of memory", w->path, s->name);
        if ((st = dictionary(w, s, c, idx, &body, &n_dict, err)) ||
            (st = write_page(w, s->name, 1, &body, n_dict, PQ_PLAIN, ci, err)))
            goto done;
    }
    int bw = bits_for(n_dict);
    uint32_t *dense = malloc((PQ_PAGE_ROWS + 0u) * sizeof *dense);
    if (s->nullable)
        lv = malloc((PQ_PAGE_ROWS + 0u) * sizeof *lv);
    if (!dense || (s->nullable && !lv)) {
        free(dense);
        st = bl_fail(err, BL_ERR_NOMEM, "%s: column '%s': out of memory", w->path, s->name);
        goto done;
    }
    for (uint64_t r0 = 0; r0 < c->n; r0 += PQ_PAGE_ROWS) {
        uint64_t r1 = c->n - r0 < PQ_PAGE_ROWS ? c->n : r0 + PQ_PAGE_ROWS;
        body.len = 0;
        if (s->nullable) {
            for (uint64_t r = r0; r < r1; r++)
                lv[r - r0] = !c->valid || c->valid[r];
            buf levels = {0};
            b_hybrid(&levels, lv, (size_t)(r1 - r0), 1);
            b_u32(&body, (uint32_t)levels.len);
            b_put(&body, levels.p, levels.len);
            if (levels.failed)
                body.failed = 1;
            free(levels.p);
        }
        size_t nn = 0;
        if (s->type == BL_COL_STRING) {
            for (uint64_t r = r0; r < r1; r++)
                if (!c->valid || c->valid[r])
                    dense[nn++] = idx[r];
            uint8_t b = (uint8_t)bw;
            b_put(&body, &b, 1);
            b_hybrid(&body, dense, nn, bw);
        } else if (s->type == BL_COL_BOOL) {
            uint8_t acc = 0;
            for (uint64_t r = r0; r < r1; r++) {
                if (c->valid && !c->valid[r])
                    continue;
                acc |= (uint8_t)((c->i64[r] != 0) << (nn & 7));
                if ((++nn & 7) == 0) {
                    b_put(&body, &acc, 1);
                    acc = 0;
                }
            }
            if (nn & 7)
                b_put(&body, &acc, 1);
        } else {
            for (uint64_t r = r0; r < r1; r++) {
                if (c->valid && !c->valid[r])
                    continue;
                uint64_t u;
                if (s->type == BL_COL_INT64)
                    u = (uint64_t)c->i64[r];
                else
                    memcpy(&u, &c->f64[r], 8);
                b_u64(&body, u);
                nn++;
            }
        }
        int32_t enc = s->type == BL_COL_STRING ? PQ_RLE_DICTIONARY : PQ_PLAIN;
        if ((st = write_page(w, s->name, 0, &body, (uint32_t)(r1 - r0), enc, ci, err)))
            break;
    }
    free(dense);
done:
    free(idx);
    free(lv);
    free(body.p);
    return st;
}

bl_status bl_parquet_writer_write(bl_parquet_writer *w, const bl_column *columns, bl_error *err)
{
    uint64_t n = columns[0].n;
    for (size_t i = 0; i < w->n; i++) {
        const bl_column *c = &columns[i];
        const bl_parquet_column_spec *s = &w->spec[i];
        if (c->n != n)
            return bl_fail(err, BL_ERR_INVALID, "%s: column '%s' has %llu rows, column '%s' %llu", w->path, s->name,
                           (unsigned long long)c->n, w->spec[0].name, (unsigned long long)n);
        if (c->type != s->type)
            return bl_fail(err, BL_ERR_INVALID, "%s: column '%s': type %d where the spec says %d", w->path, s->name,
                           (int)c->type, (int)s->type);
        if (c->valid && !s->nullable)
            for (uint64_t r = 0; r < n; r++)
                if (!c->valid[r])
                    return bl_fail(err, BL_ERR_INVALID, "%s: column '%s' is not nullable, row %llu is null",
                                   w->path, s->name, (unsigned long long)(w->rows + r));
        if (n && ((s->type == BL_COL_STRING && (!c->offsets || !c->data)) ||
                  (s->type == BL_COL_DOUBLE && !c->f64) ||
                  ((s->type == BL_COL_INT64 || s->type == BL_COL_BOOL) && !c->i64)))
            return bl_fail(err, BL_ERR_INVALID, "%s: column '%s' has no values array", w->path, s->name);
    }
    if (n == 0)
        return BL_OK; /* no row group: an empty table is a footer without one */
    if (w->n_rg == w->cap_rg) {
        size_t cap = w->cap_rg ? 2 * w->cap_rg : 8;
        int64_t *rows = realloc(w->rg_rows, cap * sizeof *rows);
        if (rows)
            w->rg_rows = rows;
        chunk_info *ch = rows ? realloc(w->chunks, cap * w->n * sizeof *ch) : NULL;
        if (!ch)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", w->path);
        w->chunks = ch;
        w->cap_rg = cap;
    }
    chunk_info *ci = &w->chunks[w->n_rg * w->n];
    memset(ci, 0, w->n * sizeof *ci);
    for (size_t i = 0; i < w->n; i++) {
        bl_status st = write_chunk(w, &w->spec[i], &columns[i], &ci[i], err);
        if (st)
            return st;
    }
    w->rg_rows[w->n_rg++] = (int64_t)n;
    w->rows += n;
    return BL_OK;
}

static int32_t phys_of(bl_col_type t)
{
    switch (t) {
    case BL_COL_BOOL: return PQ_BOOLEAN;
    case BL_COL_INT64: return PQ_INT64;
    case BL_COL_DOUBLE: return PQ_DOUBLE;
    default: return PQ_BYTE_ARRAY;
    }
}

bl_status bl_parquet_writer_set_metadata(bl_parquet_writer *w, const char *key, const char *value, bl_error *err)
{
    if (!key || !key[0] || !value)
        return bl_fail(err, BL_ERR_INVALID, "%s: a metadata entry needs a key and a value", w->path);
    for (size_t i = 0; i < w->n_kv; i++)
        if (!strcmp(w->kv[2 * i], key))
            return bl_fail(err, BL_ERR_INVALID, "%s: metadata key '%s' given twice", w->path, key);
    char **kv = realloc(w->kv, 2 * (w->n_kv + 1) * sizeof *kv);
    if (!kv)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", w->path);
    w->kv = kv;
    if (!(kv[2 * w->n_kv] = strdup(key)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", w->path);
    if (!(kv[2 * w->n_kv + 1] = strdup(value))) {
        free(kv[2 * w->n_kv]);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", w->path);
    }
    w->n_kv++;
    return BL_OK;
}

bl_status bl_parquet_writer_finish(bl_parquet_writer *w, bl_error *err)
{
    bl_pq_tw t = {0};
    bl_pq_tw_i32(&t, 1, 1);
    bl_pq_tw_list(&t, 2, PQ_T_STRUCT, (uint32_t)(w->n + 1));
    bl_pq_tw_struct_begin(&t, 0);
    bl_pq_tw_string(&t, 4, "schema");
    bl_pq_tw_i32(&t, 5, (int32_t)w->n);
    bl_pq_tw_struct_end(&t);
    for (size_t i = 0; i < w->n; i++) {
        const bl_parquet_column_spec *s = &w->spec[i];
        bl_pq_tw_struct_begin(&t, 0);
        bl_pq_tw_i32(&t, 1, phys_of(s->type));
        bl_pq_tw_i32(&t, 3, s->nullable ? PQ_OPTIONAL : PQ_REQUIRED);
        bl_pq_tw_string(&t, 4, s->name);
        if (s->type == BL_COL_STRING) {
            bl_pq_tw_i32(&t, 6, PQ_CT_UTF8);
            bl_pq_tw_struct_begin(&t, 10);
            bl_pq_tw_struct_begin(&t, PQ_LT_STRING);
            bl_pq_tw_struct_end(&t);
            bl_pq_tw_struct_end(&t);
        }
        bl_pq_tw_struct_end(&t);
    }
    bl_pq_tw_i64(&t, 3, (int64_t)w->rows);
    bl_pq_tw_list(&t, 4, PQ_T_STRUCT, (uint32_t)w->n_rg);
    for (size_t g = 0; g < w->n_rg; g++) {
        bl_pq_tw_struct_begin(&t, 0);
        bl_pq_tw_list(&t, 1, PQ_T_STRUCT, (uint32_t)w->n);
        int64_t bytes = 0;
        for (size_t i = 0; i < w->n; i++) {
            const chunk_info *ci = &w->chunks[g * w->n + i];
            const bl_parquet_column_spec *s = &w->spec[i];
            bytes += ci->uncompressed;
            bl_pq_tw_struct_begin(&t, 0);
            bl_pq_tw_i64(&t, 2, ci->dict_at >= 0 ? ci->dict_at : ci->data_at);
            bl_pq_tw_struct_begin(&t, 3);
            bl_pq_tw_i32(&t, 1, phys_of(s->type));
            int str = s->type == BL_COL_STRING;
            bl_pq_tw_list(&t, 2, PQ_T_I32, str ? 3 : 2);
            bl_pq_tw_elem_i32(&t, PQ_PLAIN);
            bl_pq_tw_elem_i32(&t, PQ_RLE);
            if (str)
                bl_pq_tw_elem_i32(&t, PQ_RLE_DICTIONARY);
            bl_pq_tw_list(&t, 3, PQ_T_BINARY, 1);
            bl_pq_tw_elem_binary(&t, s->name, strlen(s->name));
            bl_pq_tw_i32(&t, 4, w->codec);
            bl_pq_tw_i64(&t, 5, ci->num_values);
            bl_pq_tw_i64(&t, 6, ci->uncompressed);
            bl_pq_tw_i64(&t, 7, ci->compressed);
            bl_pq_tw_i64(&t, 9, ci->data_at);
            if (ci->dict_at >= 0)
                bl_pq_tw_i64(&t, 11, ci->dict_at);
            bl_pq_tw_struct_end(&t);
            bl_pq_tw_struct_end(&t);
        }
        bl_pq_tw_i64(&t, 2, bytes);
        bl_pq_tw_i64(&t, 3, w->rg_rows[g]);
        bl_pq_tw_struct_end(&t);
    }
    /* FileMetaData.key_value_metadata (5): list<KeyValue{1: key, 2: value}>. */
    if (w->n_kv) {
        bl_pq_tw_list(&t, 5, PQ_T_STRUCT, (uint32_t)w->n_kv);
        for (size_t i = 0; i < w->n_kv; i++) {
            bl_pq_tw_struct_begin(&t, 0);
            bl_pq_tw_string(&t, 1, w->kv[2 * i]);
            bl_pq_tw_string(&t, 2, w->kv[2 * i + 1]);
            bl_pq_tw_struct_end(&t);
        }
    }
    bl_pq_tw_string(&t, 6, "BrainlessLab");
    bl_pq_tw_struct_end(&t);
    bl_status st = BL_OK;
    uint8_t len[4] = {(uint8_t)t.len, (uint8_t)(t.len >> 8), (uint8_t)(t.len >> 16), (uint8_t)(t.len >> 24)};
    if (t.failed)
        st = bl_fail(err, BL_ERR_NOMEM, "%s: footer: out of memory", w->path);
    else if (fwrite(t.buf, 1, t.len, w->f) != t.len || fwrite(len, 1, 4, w->f) != 4 ||
             fwrite("PAR1", 1, 4, w->f) != 4)
        st = bl_fail(err, BL_ERR_IO, "%s: footer at byte %llu: cannot write", w->path, (unsigned long long)w->at);
    bl_pq_tw_free(&t);
    if (fclose(w->f) != 0 && !st)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot close: %s", w->path, strerror(errno));
    w->f = NULL;
    if (st)
        unlink(w->path);
    writer_free(w);
    return st;
}

void bl_parquet_writer_abort(bl_parquet_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    unlink(w->path);
    writer_free(w);
}
