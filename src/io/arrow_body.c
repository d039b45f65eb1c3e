/* Arrow IPC message bodies: one column of one record batch, from its
 * FieldNode and Buffers, through LZ4_FRAME or ZSTD when the batch is
 * compressed. Only the buffers of the columns asked for are read, and only
 * as many bytes of each as the batch's length needs. A compressed buffer is
 * inflated into memory that grows with what it actually yields, so a length
 * prefix that claims terabytes costs nothing until the bytes exist. */
#include <errno.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "io/arrow_ipc.h"

/* The body lies inside the file (checked when the message was read). */
static bl_status read_at(const uint8_t *file, uint64_t off, size_t len, uint8_t *dst, const char *where, bl_error *err)
{
    (void)where;
    (void)err;
    memcpy(dst, file + off, len);
    return BL_OK;
}

/* Grow *buf (capacity *cap) so that at least `want` more bytes fit after `used`, up to `limit` in all. */
static int grow(uint8_t **buf, size_t *cap, size_t used, size_t limit)
{
    if (*cap >= limit || used < *cap)
        return 1;
    size_t n = *cap ? *cap * 2 : 1 << 16;
    if (n > limit || n < *cap)
        n = limit;
    uint8_t *p = realloc(*buf, n);
    if (!p)
        return 0;
    *buf = p;
    *cap = n;
    return 1;
}

/* One step of a codec: decompress from src[*pos..len) into dst[0..cap),
 * returning bytes written (*done set when the frame ended), or -1 (message in err). */
typedef struct inflater {
    int codec;
    LZ4F_dctx *lz4;
    ZSTD_DCtx *zstd;
} inflater;

static long long inflate_step(inflater *z, const uint8_t *src, size_t len, size_t *pos, uint8_t *dst, size_t cap,
                              int *done, const char *where, bl_error *err)
{
    if (z->codec == AR_CODEC_LZ4_FRAME) {
        size_t dsz = cap, ssz = len - *pos;
        size_t r = LZ4F_decompress(z->lz4, dst, &dsz, src + *pos, &ssz, NULL);
        if (LZ4F_isError(r)) {
            bl_fail(err, BL_ERR_FORMAT, "%s: LZ4 frame: %s", where, LZ4F_getErrorName(r));
            return -1;
        }
        *pos += ssz;
        *done = r == 0 || (dsz == 0 && ssz == 0);
        return (long long)dsz;
    }
    ZSTD_inBuffer in = {src, len, *pos};
    ZSTD_outBuffer o = {dst, cap, 0};
    size_t r = ZSTD_decompressStream(z->zstd, &o, &in);
    if (ZSTD_isError(r)) {
        bl_fail(err, BL_ERR_FORMAT, "%s: ZSTD: %s", where, ZSTD_getErrorName(r));
        return -1;
    }
    *done = (in.pos == *pos && o.pos == 0) || (r == 0 && in.pos == len);
    *pos = in.pos;
    return (long long)o.pos;
}

/* Inflate src into the first `needed` bytes of *out, then check (into a small
 * scratch buffer, discarded) that the frame yields exactly `declared` bytes:
 * memory grows only with bytes the frame really produces. */
static bl_status inflate(int codec, const uint8_t *src, size_t len, size_t needed, uint64_t declared, uint8_t **out,
                         const char *where, bl_error *err)
{
    const char *name = codec == AR_CODEC_LZ4_FRAME ? "LZ4 frame" : "ZSTD frame";
    inflater z = {codec, NULL, NULL};
    if (codec == AR_CODEC_LZ4_FRAME ? LZ4F_isError(LZ4F_createDecompressionContext(&z.lz4, LZ4F_VERSION))
                                    : !(z.zstd = ZSTD_createDCtx()))
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot create a %s context", where, name);
    uint8_t *dst = NULL, scratch[1 << 14];
    size_t cap = 0, used = 0, pos = 0;
    uint64_t total = 0;
    int done = 0;
    bl_status st = BL_OK;
    while (!done && used < needed) {
        if (!grow(&dst, &cap, used, needed)) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
            break;
        }
        long long k = inflate_step(&z, src, len, &pos, dst + used, cap - used, &done, where, err);
        if (k < 0) {
            st = err->status;
            break;
        }
        used += (size_t)k;
    }
    total = used;
    while (st == BL_OK && !done && total <= declared) {
        long long k = inflate_step(&z, src, len, &pos, scratch, sizeof scratch, &done, where, err);
        if (k < 0)
            st = err->status;
        else
            total += (uint64_t)k;
    }
    if (z.lz4)
        LZ4F_freeDecompressionContext(z.lz4);
    ZSTD_freeDCtx(z.zstd);
    if (st == BL_OK && used < needed)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: %s inflates to %llu bytes, %zu needed", where, name,
                     (unsigned long long)total, needed);
    else if (st == BL_OK && total != declared)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: %s inflates to %s%llu bytes, its prefix declares %llu", where, name,
                     total > declared ? "more than " : "", (unsigned long long)(total > declared ? declared : total),
                     (unsigned long long)declared);
    if (st != BL_OK) {
        free(dst);
        return st;
    }
    *out = dst;
    return BL_OK;
}

/* Bytes about to be decoded (an output array, an inflated buffer) come out
 * of the table's budget first: a batch length or a dictionary index array
 * can claim far more than the file holds. */
static bl_status take(const ar_body *body, uint64_t bytes, const char *where, bl_error *err)
{
    return body->budget ? bl_table_budget_take(body->budget, bytes, where, err) : BL_OK;
}

/* The first `needed` bytes of buffer i of batch b (malloc'd; NULL when needed is 0). */
static bl_status get_buffer(const ar_body *body, const ar_batch *b, size_t i, size_t needed, uint8_t **out,
                            const char *where, const char *what, bl_error *err)
{
    *out = NULL;
    if (i >= b->n_bufs)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %s buffer (#%zu) missing: the batch lists %zu buffers", where, what,
                       i, b->n_bufs);
    const uint8_t *p = b->meta->p + b->bufs_pos + 16 * i;
    int64_t off = (int64_t)fb_rd64(p), len = (int64_t)fb_rd64(p + 8);
    if (off < 0 || len < 0 || (uint64_t)off > body->len || (uint64_t)len > body->len - (uint64_t)off)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: %s buffer at body offset %lld, length %lld lies outside the body (%llu bytes)", where, what,
                       (long long)off, (long long)len, (unsigned long long)body->len);
    if (needed == 0)
        return BL_OK;
    uint64_t at = body->off + (uint64_t)off;
    if (b->codec == AR_CODEC_NONE) {
        if ((uint64_t)len < needed)
            return bl_fail(err, BL_ERR_FORMAT, "%s: %s buffer holds %lld bytes, %zu needed", where, what, (long long)len,
                           needed);
        uint8_t *dst = malloc(needed);
        if (!dst)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        bl_status st = read_at(body->file, at, needed, dst, where, err);
        if (st != BL_OK) {
            free(dst);
            return st;
        }
        *out = dst;
        return BL_OK;
    }
    /* Compressed: an int64 uncompressed length, then the frame (or, with
     * length -1, the bytes as they are). */
    if (len < 8)
        return bl_fail(err, BL_ERR_FORMAT, "%s: compressed %s buffer of %lld bytes has no length prefix", where, what,
                       (long long)len);
    uint8_t *src = malloc((size_t)len);
    if (!src)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
    bl_status st = read_at(body->file, at, (size_t)len, src, where, err);
    int64_t declared = (int64_t)fb_rd64(src);
    if (st == BL_OK && declared == -1) {
        if ((uint64_t)len - 8 < needed)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: %s buffer holds %lld bytes, %zu needed", where, what,
                         (long long)len - 8, needed);
        else if (!(*out = malloc(needed)))
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        else
            memcpy(*out, src + 8, needed);
    } else if (st == BL_OK && (declared < 0 || (uint64_t)declared < needed)) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: compressed %s buffer declares %lld bytes, %zu needed", where, what,
                     (long long)declared, needed);
    } else if (st == BL_OK && (st = take(body, needed, where, err)) == BL_OK) {
        st = inflate(b->codec, src + 8, (size_t)len - 8, needed, (uint64_t)declared, out, where, err);
    }
    free(src);
    return st;
}

static int64_t read_int(const uint8_t *p, int bits, int is_signed, uint64_t *raw)
{
    uint64_t u = 0;
    switch (bits) {
    case 8: u = p[0]; break;
    case 16: u = fb_rd16(p); break;
    case 32: u = fb_rd32(p); break;
    default: u = fb_rd64(p); break;
    }
    *raw = u;
    if (!is_signed)
        return (int64_t)u;
    switch (bits) {
    case 8: return (int8_t)u;
    case 16: return (int16_t)u;
    case 32: return (int32_t)u;
    default: return (int64_t)u;
    }
}

/* Decode n integers (bits, signedness) into v; unsigned values above INT64_MAX are an error. */
static bl_status decode_ints(const uint8_t *src, uint64_t n, int bits, int is_signed, const uint8_t *valid,
                             int64_t *v, const char *where, bl_error *err)
{
    size_t w = (size_t)bits / 8;
    for (uint64_t r = 0; r < n; r++) {
        uint64_t raw;
        v[r] = read_int(src + r * w, bits, is_signed, &raw);
        if (valid && !valid[r]) {
            v[r] = 0;
            continue;
        }
        if (!is_signed && bits == 64 && raw > (uint64_t)INT64_MAX)
            return bl_fail(err, BL_ERR_FORMAT, "%s, row %llu: uint64 value %llu exceeds int64", where,
                           (unsigned long long)r + 1, (unsigned long long)raw);
    }
    return BL_OK;
}

/* Strings from offsets (w = 4 or 8 bytes) and data; null rows become "". */
static bl_status decode_strings(const ar_body *body, const ar_batch *b, size_t buf, uint64_t n, int w,
                                const uint8_t *valid, bl_column *out, const char *where, bl_error *err)
{
    uint8_t *offs = NULL, *data = NULL;
    if (n == 0) { /* writers may leave an empty column's offsets out */
        out->offsets = calloc(1, sizeof *out->offsets);
        out->data = malloc(1);
        return out->offsets && out->data ? BL_OK : bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
    }
    bl_status st = get_buffer(body, b, buf + 1, (size_t)(n + 1) * (size_t)w, &offs, where, "offsets", err);
    if (st != BL_OK)
        return st;
    int64_t first = 0, last = 0, prev = 0;
    for (uint64_t r = 0; r <= n; r++) {
        int64_t o = w == 4 ? (int64_t)(int32_t)fb_rd32(offs + r * 4) : (int64_t)fb_rd64(offs + r * 8);
        if (o < 0 || (r > 0 && o < prev)) {
            free(offs);
            return bl_fail(err, BL_ERR_FORMAT, "%s, row %llu: string offset %lld is negative or decreasing", where,
                           (unsigned long long)r, (long long)o);
        }
        if (r == 0)
            first = o;
        prev = last = o;
    }
    if ((uint64_t)last > SIZE_MAX / 2) {
        free(offs);
        return bl_fail(err, BL_ERR_FORMAT, "%s: string data of %lld bytes", where, (long long)last);
    }
    st = get_buffer(body, b, buf + 2, (size_t)last, &data, where, "string data", err);
    /* Only once the body has shown it holds `last` bytes is that size trusted
     * (an unchecked offset asked for petabytes; found by fuzzing). */
    if (st == BL_OK)
        st = take(body, (uint64_t)(n + 1) * sizeof *out->offsets + (uint64_t)(last - first), where, err);
    if (st == BL_OK) {
        out->offsets = malloc((size_t)(n + 1) * sizeof *out->offsets);
        out->data = malloc((size_t)(last - first) + 1);
    }
    if (st == BL_OK && (!out->offsets || !out->data))
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
    if (st == BL_OK) {
        int64_t at = 0;
        out->offsets[0] = 0;
        for (uint64_t r = 0; r < n; r++) {
            int64_t a = w == 4 ? (int64_t)(int32_t)fb_rd32(offs + r * 4) : (int64_t)fb_rd64(offs + r * 8);
            int64_t z = w == 4 ? (int64_t)(int32_t)fb_rd32(offs + (r + 1) * 4) : (int64_t)fb_rd64(offs + (r + 1) * 8);
            if (!(valid && !valid[r]) && z > a) {
                memcpy(out->data + at, data + a, (size_t)(z - a));
                at += z - a;
            }
            out->offsets[r + 1] = at;
        }
    }
    free(offs);
    free(data);
    return st;
}

/* Gather dictionary values by index (already checked in range) into out. */
static bl_status gather(const ar_body *body, const bl_column *dict, const int64_t *idx, uint64_t n,
                        const uint8_t *valid, bl_column *out, const char *where, bl_error *err)
{
    out->type = dict->type;
    if (dict->type == BL_COL_STRING) {
        uint64_t total = 0;
        for (uint64_t r = 0; r < n; r++)
            if (!(valid && !valid[r]) && !(dict->valid && !dict->valid[idx[r]]))
                total += (uint64_t)(dict->offsets[idx[r] + 1] - dict->offsets[idx[r]]);
        if (total > SIZE_MAX / 2)
            return bl_fail(err, BL_ERR_NOMEM, "%s: %llu bytes of strings", where, (unsigned long long)total);
        /* One long dictionary string repeated by many indices is the
         * expansion a hostile file uses: the total is charged first. */
        bl_status st = take(body, total + (uint64_t)(n + 1) * sizeof *out->offsets, where, err);
        if (st != BL_OK)
            return st;
        out->offsets = malloc((size_t)(n + 1) * sizeof *out->offsets);
        out->data = malloc((size_t)total + 1);
        if (!out->offsets || !out->data)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        int64_t at = 0;
        out->offsets[0] = 0;
        for (uint64_t r = 0; r < n; r++) {
            if (!(valid && !valid[r]) && !(dict->valid && !dict->valid[idx[r]])) {
                int64_t a = dict->offsets[idx[r]], len = dict->offsets[idx[r] + 1] - a;
                memcpy(out->data + at, dict->data + a, (size_t)len);
                at += len;
            }
            out->offsets[r + 1] = at;
        }
        return BL_OK;
    }
    if (dict->type == BL_COL_DOUBLE) {
        if (!(out->f64 = malloc((size_t)(n ? n : 1) * sizeof *out->f64)))
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        for (uint64_t r = 0; r < n; r++)
            out->f64[r] = (valid && !valid[r]) ? 0 : dict->f64[idx[r]];
        return BL_OK;
    }
    if (!(out->i64 = malloc((size_t)(n ? n : 1) * sizeof *out->i64)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
    for (uint64_t r = 0; r < n; r++)
        out->i64[r] = (valid && !valid[r]) ? 0 : dict->i64[idx[r]];
    return BL_OK;
}

bl_status ar_decode(const ar_body *body, const ar_batch *b, const ar_field *f, size_t node, size_t buf, int as_dict,
                    const bl_column *dict, const char *where, bl_column *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (node >= b->n_nodes)
        return bl_fail(err, BL_ERR_FORMAT, "%s: field node #%zu missing: the batch lists %zu", where, node, b->n_nodes);
    const uint8_t *np = b->meta->p + b->nodes_pos + 16 * node;
    int64_t len = (int64_t)fb_rd64(np), nulls = (int64_t)fb_rd64(np + 8);
    if (len != b->length)
        return bl_fail(err, BL_ERR_FORMAT, "%s: the column has %lld rows, the batch %lld", where, (long long)len,
                       (long long)b->length);
    if (nulls < 0 || nulls > len)
        return bl_fail(err, BL_ERR_FORMAT, "%s: null count %lld outside 0..%lld", where, (long long)nulls,
                       (long long)len);
    if ((uint64_t)len > SIZE_MAX / 16)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %lld rows", where, (long long)len);
    uint64_t n = (uint64_t)len;
    int dict_rows = as_dict && f->has_dict;
    /* A stream may send a record batch before the dictionary batch its
     * dictionary-encoded column needs (found by fuzzing). */
    if (dict_rows && !dict)
        return bl_fail(err, BL_ERR_FORMAT, "%s: dictionary-encoded column, but no dictionary batch came before this "
                       "record batch", where);
    bl_col_type type = dict_rows ? dict->type : f->col;
    if (!type)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: %s columns are not supported", where, f->why);
    out->type = type;
    out->n = n;
    uint8_t *bits = NULL, *vals = NULL;
    bl_status st = BL_OK;
    /* Validity: only read when the node says there are nulls. */
    if (nulls > 0) {
        st = take(body, n, where, err);
        if (st == BL_OK)
            st = get_buffer(body, b, buf, (size_t)((n + 7) / 8), &bits, where, "validity", err);
        if (st == BL_OK && !(out->valid = malloc((size_t)n)))
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        uint64_t zeros = 0;
        for (uint64_t r = 0; st == BL_OK && r < n; r++) {
            out->valid[r] = (bits[r / 8] >> (r % 8)) & 1;
            zeros += !out->valid[r];
        }
        if (st == BL_OK && zeros != (uint64_t)nulls)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: the validity bitmap has %llu nulls, the node says %lld", where,
                         (unsigned long long)zeros, (long long)nulls);
        free(bits);
    }
    /* Every type but strings decodes to 8 bytes a row (dictionary indices
     * too, before they are gathered); strings are charged by what they hold. */
    if (st == BL_OK && (dict_rows || f->type == AR_T_INT || f->type == AR_T_FLOAT || f->type == AR_T_BOOL))
        st = take(body, n * 8, where, err);
    if (st == BL_OK && dict_rows) {
        int64_t *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
        size_t w = (size_t)f->idx_bits / 8;
        if (!idx)
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
        if (st == BL_OK)
            st = get_buffer(body, b, buf + 1, (size_t)n * w, &vals, where, "dictionary index", err);
        if (st == BL_OK)
            st = decode_ints(vals, n, f->idx_bits, f->idx_signed, out->valid, idx, where, err);
        for (uint64_t r = 0; st == BL_OK && r < n; r++)
            if (!(out->valid && !out->valid[r]) && (idx[r] < 0 || (uint64_t)idx[r] >= dict->n))
                st = bl_fail(err, BL_ERR_FORMAT, "%s, row %llu: dictionary index %lld outside 0..%llu", where,
                             (unsigned long long)r + 1, (long long)idx[r], (unsigned long long)dict->n - 1);
        if (st == BL_OK)
            st = gather(body, dict, idx, n, out->valid, out, where, err);
        /* A null dictionary value makes the row null. */
        if (st == BL_OK && dict->valid)
            for (uint64_t r = 0; r < n; r++)
                if (!(out->valid && !out->valid[r]) && !dict->valid[idx[r]]) {
                    if (!out->valid && (out->valid = malloc((size_t)n)))
                        memset(out->valid, 1, (size_t)n);
                    if (!out->valid) {
                        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
                        break;
                    }
                    out->valid[r] = 0;
                }
        free(idx);
    } else if (st == BL_OK) {
        switch (f->type) {
        case AR_T_INT:
            st = get_buffer(body, b, buf + 1, (size_t)n * (size_t)(f->bits / 8), &vals, where, "values", err);
            if (st == BL_OK && !(out->i64 = malloc((size_t)(n ? n : 1) * sizeof *out->i64)))
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
            if (st == BL_OK)
                st = decode_ints(vals, n, f->bits, f->is_signed, out->valid, out->i64, where, err);
            break;
        case AR_T_FLOAT: {
            size_t w = f->precision == 1 ? 4 : 8;
            st = get_buffer(body, b, buf + 1, (size_t)n * w, &vals, where, "values", err);
            if (st == BL_OK && !(out->f64 = malloc((size_t)(n ? n : 1) * sizeof *out->f64)))
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
            for (uint64_t r = 0; st == BL_OK && r < n; r++) {
                if (w == 4) {
                    float x;
                    uint32_t u = fb_rd32(vals + r * 4);
                    memcpy(&x, &u, 4);
                    out->f64[r] = x;
                } else {
                    uint64_t u = fb_rd64(vals + r * 8);
                    memcpy(&out->f64[r], &u, 8);
                }
                if (out->valid && !out->valid[r])
                    out->f64[r] = 0;
            }
            break;
        }
        case AR_T_BOOL:
            st = get_buffer(body, b, buf + 1, (size_t)((n + 7) / 8), &vals, where, "values", err);
            if (st == BL_OK && !(out->i64 = malloc((size_t)(n ? n : 1) * sizeof *out->i64)))
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", where);
            for (uint64_t r = 0; st == BL_OK && r < n; r++)
                out->i64[r] = (out->valid && !out->valid[r]) ? 0 : (vals[r / 8] >> (r % 8)) & 1;
            break;
        case AR_T_UTF8:
        case AR_T_LARGE_UTF8:
            st = decode_strings(body, b, buf, n, f->type == AR_T_UTF8 ? 4 : 8, out->valid, out, where, err);
            break;
        default:
            st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: %s columns are not supported", where, f->why);
        }
    }
    free(vals);
    if (st != BL_OK)
        bl_column_clear(out);
    return st;
}
