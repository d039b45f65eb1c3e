/* One column chunk of one row group, page by page: the dictionary page,
 * data pages v1 and v2 (definition levels, values in any supported
 * encoding, nulls spread into place), decompressed into the reader's page
 * buffer once each page's declared size is justified (docs/formats.md,
 * "Parquet"). Every message names the file, the column, the row group and
 * the byte offset of the page (or the chunk) at fault. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/invariant.h"
#include "io/parquet.h"

#define le32 bl_pq_le32

/* A decoded column as table.h promises it: the arrays of its type, string
 * offsets rising from 0 to the bytes held, validity bytes 0 or 1 with the
 * value of a null zero (or ""). */
#ifndef NDEBUG
static int column_sane(const bl_column *c, uint64_t data_len, bl_error *why)
{
    if (c->type == BL_COL_STRING) {
        if (!c->offsets || !c->data || c->offsets[0] != 0 || (uint64_t)c->offsets[c->n] != data_len)
            return BL_BROKEN(why, "decoded string column: offsets do not run from 0 to the %llu bytes held",
                             (unsigned long long)data_len);
    } else if (c->type == BL_COL_DOUBLE ? !c->f64 : !c->i64) {
        return BL_BROKEN(why, "decoded column: no value array for its type %d", (int)c->type);
    }
    for (uint64_t r = 0; r < c->n; r++) {
        int null = c->valid && !c->valid[r];
        if (c->valid && c->valid[r] > 1)
            return BL_BROKEN(why, "decoded column, row %llu: validity byte %u is not 0 or 1", (unsigned long long)r,
                             (unsigned)c->valid[r]);
        if (c->type == BL_COL_STRING &&
            (c->offsets[r + 1] < c->offsets[r] || (null && c->offsets[r + 1] != c->offsets[r])))
            return BL_BROKEN(why, "decoded string column, row %llu: offsets fall, or a null holds bytes",
                             (unsigned long long)r);
        if ((null && c->type == BL_COL_DOUBLE && c->f64[r] != 0) ||
            (null && c->type != BL_COL_DOUBLE && c->type != BL_COL_STRING && c->i64[r] != 0))
            return BL_BROKEN(why, "decoded column, row %llu: a null whose value is not zero", (unsigned long long)r);
        if (c->type == BL_COL_BOOL && (c->i64[r] < 0 || c->i64[r] > 1))
            return BL_BROKEN(why, "decoded boolean column, row %llu: value %lld", (unsigned long long)r,
                             (long long)c->i64[r]);
    }
    return 1;
}
#endif

typedef struct chunk {
    bl_pq_reader *r;
    const bl_pq_col *col;
    uint32_t rg;
    uint64_t at;           /* the page (or chunk) being read, for messages */
    int in_page;
    bl_error *err;
    bl_column *out;
    uint64_t rows, done, cap; /* cap: rows the output has room for */
    uint64_t data_len, data_cap, max_bytes;
    uint64_t nulls;
    /* the dictionary */
    int have_dict;
    uint64_t dict_n;
    int64_t *dict_i64;
    double *dict_f64;
    bl_pq_str *dict_str;
    uint8_t *dict_buf;
} chunk;

static bl_status cfail(chunk *c, bl_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static bl_status cfail(chunk *c, bl_status st, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return bl_fail(c->err, st, "%s: column '%s', row group %u, %s at byte %llu: %s", c->r->path, c->col->shown,
                   c->rg, c->in_page ? "page" : "column chunk", (unsigned long long)c->at, msg);
}

static void chunk_free_dict(chunk *c)
{
    free(c->dict_i64);
    free(c->dict_f64);
    free(c->dict_str);
    free(c->dict_buf);
}

/* The page's bytes after decompression: src itself when stored plain, else,
 * once the declared size is justified, the reader's page buffer or (with
 * owned, for a dictionary that must outlive the page) a fresh one. */
static bl_status page_bytes(chunk *c, int32_t codec, const uint8_t *src, size_t n, size_t dn, uint64_t values,
                            const uint8_t **buf, uint8_t **owned)
{
    if (owned)
        *owned = NULL;
    if (codec == PQ_UNCOMPRESSED) {
        if (n != dn)
            return cfail(c, BL_ERR_FORMAT, "uncompressed page of %zu bytes declares %zu", n, dn);
        *buf = src;
        return BL_OK;
    }
    uint64_t ratio = bl_pq_codec_ratio(codec);
    if (!ratio)
        return cfail(c, BL_ERR_UNSUPPORTED, "codec %s (%d) is not supported (supported: uncompressed, snappy, gzip, "
                     "zstd, brotli, lz4, lz4_raw)", bl_pq_codec_name(codec), (int)codec);
    /* Each value may justify its width plus a level and a length prefix. */
    size_t w = bl_pq_type_width(c->col->phys);
    uint64_t limit = (uint64_t)n * ratio + values * (w + 16) + 4096;
    if (dn > limit)
        return cfail(c, BL_ERR_FORMAT, "%s page of %zu bytes claims %zu bytes uncompressed, more than its %llu "
                     "values justify (at most %llu)", bl_pq_codec_name(codec), n, dn, (unsigned long long)values,
                     (unsigned long long)limit);
    uint8_t *dst;
    if (owned) {
        if (!(dst = *owned = malloc(dn ? dn : 1)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a page of %zu bytes", dn);
    } else {
        if (dn > c->r->page_cap) {
            uint8_t *p = realloc(c->r->page, dn);
            if (!p)
                return cfail(c, BL_ERR_NOMEM, "out of memory for a page of %zu bytes", dn);
            c->r->page = p;
            c->r->page_cap = dn;
        }
        dst = c->r->page;
    }
    bl_pq_why why = {{0}};
    if (bl_pq_decompress(codec, src, n, dst, dn, &c->r->codecs, &why)) {
        if (owned) {
            free(*owned);
            *owned = NULL;
        }
        return cfail(c, BL_ERR_FORMAT, "%s", why.text);
    }
    *buf = dst;
    return BL_OK;
}

static bl_status read_dictionary(chunk *c, const bl_pq_page_header *h, const uint8_t *src, int32_t codec)
{
    if (c->have_dict || c->done)
        return cfail(c, BL_ERR_FORMAT, "a second dictionary page, or one after data pages");
    if (!h->has_dict)
        return cfail(c, BL_ERR_FORMAT, "dictionary page without a dictionary page header");
    if (h->encoding != PQ_PLAIN && h->encoding != PQ_PLAIN_DICTIONARY)
        return cfail(c, BL_ERR_UNSUPPORTED, "dictionary page encoded %s (only plain is defined)",
                     bl_pq_encoding_name(h->encoding));
    const uint8_t *buf;
    uint8_t *owned;
    bl_status st = page_bytes(c, codec, src, (size_t)h->compressed, (size_t)h->uncompressed,
                              (uint64_t)h->num_values, &buf, &owned);
    if (st)
        return st;
    c->dict_buf = owned;
    size_t len = (size_t)h->uncompressed, n = (size_t)h->num_values;
    bl_pq_why why = {{0}};
    int32_t phys = c->col->phys;
    /* Sizes checked before allocating: each entry takes bytes in the page. */
    size_t min_bytes = phys == PQ_BOOLEAN ? (n + 7) / 8 : phys == PQ_BYTE_ARRAY ? n * 4 : n * bl_pq_type_width(phys);
    if (min_bytes > len)
        return cfail(c, BL_ERR_FORMAT, "dictionary of %zu values cannot fit in %zu bytes", n, len);
    int r;
    if (phys == PQ_BYTE_ARRAY) {
        if (!(c->dict_str = malloc((n ? n : 1) * sizeof *c->dict_str)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = bl_pq_plain_strings(buf, len, c->dict_str, n, &why);
    } else if (c->col->out == BL_COL_DOUBLE) {
        if (!(c->dict_f64 = malloc((n ? n : 1) * sizeof *c->dict_f64)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = bl_pq_plain_fixed(phys, buf, len, NULL, c->dict_f64, n, &why);
    } else {
        if (!(c->dict_i64 = malloc((n ? n : 1) * sizeof *c->dict_i64)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = bl_pq_plain_fixed(phys, buf, len, c->dict_i64, NULL, n, &why);
    }
    if (r)
        return cfail(c, BL_ERR_FORMAT, "dictionary: %s", why.text);
    /* Stored plain, the dictionary's strings point into the mapped file,
     * which outlives the chunk. */
    c->have_dict = 1;
    c->dict_n = n;
    return BL_OK;
}

static bl_status append_bytes(chunk *c, const uint8_t *p, uint32_t n)
{
    if (c->data_len + n > c->max_bytes) {
        char bound[160];
        return cfail(c, BL_ERR_FORMAT, "the strings would take over %llu bytes, more than is left of the %s the "
                     "file may decode to; refused as an expansion bomb", (unsigned long long)c->max_bytes,
                     bl_table_budget_explain(&c->r->budget, bound, sizeof bound));
    }
    if (c->data_len + n > c->data_cap) {
        uint64_t cap = c->data_cap ? c->data_cap : 4096;
        while (cap < c->data_len + n)
            cap *= 2;
        char *d = realloc(c->out->data, cap);
        if (!d)
            return cfail(c, BL_ERR_NOMEM, "out of memory for %llu bytes of strings", (unsigned long long)cap);
        c->out->data = d;
        c->data_cap = cap;
    }
    if (n)
        memcpy(c->out->data + c->data_len, p, n);
    c->data_len += n;
    return BL_OK;
}

/* Dictionary indices: the bit width byte, then the hybrid. */
static bl_status dict_indices(chunk *c, const uint8_t *p, size_t len, size_t nn, uint32_t **idx)
{
    if (!c->have_dict)
        return cfail(c, BL_ERR_FORMAT, "dictionary-encoded page without a dictionary page");
    if (len < 1 && nn)
        return cfail(c, BL_ERR_FORMAT, "dictionary indices: no bit width byte");
    int bw = len ? p[0] : 0;
    if (bw > 32)
        return cfail(c, BL_ERR_FORMAT, "dictionary indices: bit width %d above 32", bw);
    if (!(*idx = malloc((nn ? nn : 1) * sizeof **idx)))
        return cfail(c, BL_ERR_NOMEM, "out of memory for %zu indices", nn);
    bl_pq_why why = {{0}};
    if (nn && bl_pq_rle_decode(p + 1, len - 1, bw, *idx, nn, &why))
        return cfail(c, BL_ERR_FORMAT, "dictionary indices: %s", why.text);
    for (size_t i = 0; i < nn; i++)
        if ((*idx)[i] >= c->dict_n)
            return cfail(c, BL_ERR_FORMAT, "dictionary index %u of value %zu is out of range (dictionary of %llu "
                         "values)", (*idx)[i], i, (unsigned long long)c->dict_n);
    return BL_OK;
}

/* nn values into the dense slots out[done .. done + nn). */
static bl_status decode_fixed(chunk *c, int32_t enc, const uint8_t *p, size_t len, size_t nn)
{
    int64_t *i64 = c->out->i64 ? c->out->i64 + c->done : NULL;
    double *f64 = c->out->f64 ? c->out->f64 + c->done : NULL;
    int32_t phys = c->col->phys;
    bl_pq_why why = {{0}};
    uint32_t *idx = NULL;
    bl_status st = BL_OK;
    switch (enc) {
    case PQ_PLAIN:
        if (bl_pq_plain_fixed(phys, p, len, i64, f64, nn, &why))
            st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
        break;
    case PQ_BYTE_STREAM_SPLIT:
        if (bl_pq_byte_stream_split(phys, p, len, i64, f64, nn, &why))
            st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
        break;
    case PQ_PLAIN_DICTIONARY:
    case PQ_RLE_DICTIONARY:
        if ((st = dict_indices(c, p, len, nn, &idx)))
            break;
        for (size_t i = 0; i < nn; i++) {
            if (i64)
                i64[i] = c->dict_i64[idx[i]];
            else
                f64[i] = c->dict_f64[idx[i]];
        }
        break;
    case PQ_RLE:
        if (phys != PQ_BOOLEAN) {
            st = cfail(c, BL_ERR_UNSUPPORTED, "rle values are defined for BOOLEAN only, not %s", bl_pq_type_name(phys));
            break;
        }
        if (len < 4 || le32(p) > len - 4) {
            st = cfail(c, BL_ERR_FORMAT, "rle booleans: length prefix runs past the page");
            break;
        }
        if (!(idx = malloc((nn ? nn : 1) * sizeof *idx))) {
            st = cfail(c, BL_ERR_NOMEM, "out of memory for %zu booleans", nn);
            break;
        }
        if (bl_pq_rle_decode(p + 4, le32(p), 1, idx, nn, &why)) {
            st = cfail(c, BL_ERR_FORMAT, "rle booleans: %s", why.text);
            break;
        }
        for (size_t i = 0; i < nn; i++)
            i64[i] = idx[i];
        break;
    case PQ_DELTA_BINARY_PACKED: {
        if (phys != PQ_INT32 && phys != PQ_INT64) {
            st = cfail(c, BL_ERR_UNSUPPORTED, "delta_binary_packed is defined for INT32/INT64, not %s",
                       bl_pq_type_name(phys));
            break;
        }
        size_t used;
        if (bl_pq_delta_decode(p, len, i64, nn, &used, &why)) {
            st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
            break;
        }
        if (phys == PQ_INT32) /* 32-bit arithmetic wraps: keep the low half, signed */
            for (size_t i = 0; i < nn; i++)
                i64[i] = (int32_t)(uint32_t)(uint64_t)i64[i];
        break;
    }
    default:
        st = cfail(c, BL_ERR_UNSUPPORTED, "encoding %s (%d) is not supported for %s", bl_pq_encoding_name(enc),
                   (int)enc, bl_pq_type_name(phys));
    }
    free(idx);
    return st;
}

static bl_status decode_strings(chunk *c, int32_t enc, const uint8_t *p, size_t len, size_t nn, bl_pq_str *s,
                                uint8_t **scratch)
{
    bl_pq_why why = {{0}};
    uint32_t *idx = NULL;
    bl_status st = BL_OK;
    int r = 0;
    switch (enc) {
    case PQ_PLAIN: r = bl_pq_plain_strings(p, len, s, nn, &why); break;
    case PQ_DELTA_LENGTH_BYTE_ARRAY: r = bl_pq_delta_length_strings(p, len, s, nn, &why); break;
    case PQ_DELTA_BYTE_ARRAY:
        r = bl_pq_delta_strings(p, len, s, nn, c->max_bytes - c->data_len, scratch, &why);
        break;
    case PQ_PLAIN_DICTIONARY:
    case PQ_RLE_DICTIONARY:
        if ((st = dict_indices(c, p, len, nn, &idx)))
            break;
        for (size_t i = 0; i < nn; i++)
            s[i] = c->dict_str[idx[i]];
        break;
    default:
        st = cfail(c, BL_ERR_UNSUPPORTED, "encoding %s (%d) is not supported for BYTE_ARRAY", bl_pq_encoding_name(enc),
                   (int)enc);
    }
    if (r)
        st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
    free(idx);
    return st;
}

/* Room in the output for `want` rows (at most the row group's), doubling. */
static bl_status grow_output(chunk *c, uint64_t want)
{
    if (want <= c->cap && c->cap)
        return BL_OK;
    uint64_t cap = c->cap ? c->cap : 1;
    while (cap < want)
        cap *= 2;
    if (cap > c->rows)
        cap = c->rows ? c->rows : 1;
    bl_column *o = c->out;
    size_t k = (size_t)cap;
    void *p;
    if (c->col->out == BL_COL_DOUBLE) {
        if (!(p = realloc(o->f64, k * sizeof *o->f64)))
            goto nomem;
        o->f64 = p;
    } else if (c->col->out == BL_COL_STRING) {
        if (!(p = realloc(o->offsets, (k + 1) * sizeof *o->offsets)))
            goto nomem;
        o->offsets = p;
        if (!c->cap)
            o->offsets[0] = 0;
    } else {
        if (!(p = realloc(o->i64, k * sizeof *o->i64)))
            goto nomem;
        o->i64 = p;
    }
    if (c->col->optional) {
        if (!(p = realloc(o->valid, k)))
            goto nomem;
        o->valid = p;
    }
    c->cap = cap;
    return BL_OK;
nomem:
    return cfail(c, BL_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)cap);
}

/* A data page (v1 or v2): levels, values, then nulls spread into place. */
static bl_status read_data_page(chunk *c, const bl_pq_page_header *h, const uint8_t *src, int32_t codec)
{
    int v2 = h->type == PQ_DATA_PAGE_V2;
    if (v2 ? !h->has_v2 : !h->has_data)
        return cfail(c, BL_ERR_FORMAT, "data page without its data page header");
    uint64_t nv = (uint64_t)h->num_values;
    if (nv > c->rows - c->done)
        return cfail(c, BL_ERR_FORMAT, "page holds %llu values, the row group has %llu rows left (columns of "
                     "different lengths?)", (unsigned long long)nv, (unsigned long long)(c->rows - c->done));
    bl_status st = grow_output(c, c->done + nv);
    if (st)
        return st;
    if (v2 && h->num_rows != h->num_values)
        return cfail(c, BL_ERR_FORMAT, "v2 page of %d rows holds %d values (a flat column has one each)",
                     (int)h->num_rows, (int)h->num_values);
    size_t clen = (size_t)h->compressed, ulen = (size_t)h->uncompressed;
    const uint8_t *levels = NULL;
    size_t levels_len = 0;
    const uint8_t *body;
    if (v2) {
        /* Repetition and definition levels lie uncompressed before the values. */
        size_t lv = (size_t)h->rep_len + (size_t)h->def_len;
        if (lv > clen || lv > ulen)
            return cfail(c, BL_ERR_FORMAT, "v2 levels of %zu bytes exceed the page (%zu bytes)", lv, clen);
        if (h->rep_len)
            return cfail(c, BL_ERR_UNSUPPORTED, "repetition levels in a flat column (nested data is not supported)");
        levels = src;
        levels_len = (size_t)h->def_len;
        st = page_bytes(c, h->is_compressed ? codec : PQ_UNCOMPRESSED, src + lv, clen - lv, ulen - lv, nv, &body,
                        NULL);
        ulen -= lv;
    } else {
        st = page_bytes(c, codec, src, clen, ulen, nv, &body, NULL);
    }
    if (st)
        return st;
    size_t blen = ulen;
    uint32_t *def = NULL;
    bl_pq_str *strs = NULL;
    uint8_t *scratch = NULL;
    uint64_t nn = nv;
    bl_pq_why why = {{0}};
    if (c->col->optional) {
        if (!v2) {
            if (h->def_encoding != PQ_RLE) {
                st = cfail(c, BL_ERR_UNSUPPORTED, "definition levels encoded %s (only rle is supported)",
                           bl_pq_encoding_name(h->def_encoding));
                goto done;
            }
            if (blen < 4 || le32(body) > blen - 4) {
                st = cfail(c, BL_ERR_FORMAT, "definition levels: length prefix runs past the page");
                goto done;
            }
            levels = body + 4;
            levels_len = le32(body);
            body += 4 + levels_len;
            blen -= 4 + levels_len;
        }
        if (!(def = malloc((nv ? nv : 1) * sizeof *def))) {
            st = cfail(c, BL_ERR_NOMEM, "out of memory for %llu levels", (unsigned long long)nv);
            goto done;
        }
        if (bl_pq_rle_decode(levels, levels_len, 1, def, (size_t)nv, &why)) {
            st = cfail(c, BL_ERR_FORMAT, "definition levels: %s", why.text);
            goto done;
        }
        nn = 0;
        for (uint64_t i = 0; i < nv; i++) {
            if (def[i] > 1) {
                st = cfail(c, BL_ERR_FORMAT, "definition level %u of value %llu above the maximum 1", def[i],
                           (unsigned long long)i);
                goto done;
            }
            nn += def[i];
        }
    }
    int32_t enc = h->encoding;
    if (c->col->phys == PQ_BYTE_ARRAY) {
        if (!(strs = malloc((nn ? nn : 1) * sizeof *strs))) {
            st = cfail(c, BL_ERR_NOMEM, "out of memory for %llu strings", (unsigned long long)nn);
            goto done;
        }
        if ((st = decode_strings(c, enc, body, blen, (size_t)nn, strs, &scratch)))
            goto done;
        uint64_t k = 0;
        for (uint64_t i = 0; i < nv; i++) {
            int present = !def || def[i];
            if (present && (st = append_bytes(c, strs[k].p, strs[k].n)))
                goto done;
            k += (uint64_t)present;
            c->out->offsets[c->done + i + 1] = (int64_t)c->data_len;
        }
    } else {
        if ((st = decode_fixed(c, enc, body, blen, (size_t)nn)))
            goto done;
        if (def && nn < nv) {
            /* Spread the dense values backwards: slot j <= i always. */
            uint64_t j = nn;
            for (uint64_t i = nv; i-- > 0;) {
                uint64_t at = c->done + i;
                if (def[i]) {
                    j--;
                    if (c->out->i64)
                        c->out->i64[at] = c->out->i64[c->done + j];
                    else
                        c->out->f64[at] = c->out->f64[c->done + j];
                } else if (c->out->i64) {
                    c->out->i64[at] = 0;
                } else {
                    c->out->f64[at] = 0;
                }
            }
        }
    }
    if (def)
        for (uint64_t i = 0; i < nv; i++)
            c->out->valid[c->done + i] = (uint8_t)def[i];
    c->nulls += nv - nn;
    c->done += nv;
done:
    free(def);
    free(strs);
    free(scratch);
    return st;
}

bl_status bl_pq_read_chunk(bl_pq_reader *r, uint32_t g, const bl_pq_col *col, bl_column *out, bl_error *err)
{
    const bl_pq_row_group *rg = &r->meta.row_groups[g];
    const bl_pq_chunk_meta *m = &rg->columns[col->leaf];
    chunk c = {.r = r, .col = col, .rg = g, .err = err, .out = out, .rows = (uint64_t)rg->num_rows};
    c.at = m->has_meta ? (uint64_t)m->data_page_offset : 0;
    if (col->refused)
        return cfail(&c, BL_ERR_UNSUPPORTED, "%s", col->refused);
    if (!m->has_meta)
        return cfail(&c, BL_ERR_FORMAT, "column chunk without metadata");
    if (m->has_file_path)
        return cfail(&c, BL_ERR_UNSUPPORTED, "column chunk stored in another file");
    if (m->type != col->phys)
        return cfail(&c, BL_ERR_FORMAT, "chunk of type %s, the schema says %s", bl_pq_type_name(m->type),
                     bl_pq_type_name(col->phys));
    if ((uint64_t)m->num_values != c.rows)
        return cfail(&c, BL_ERR_FORMAT, "chunk holds %lld values, the row group %llu rows (columns of different "
                     "lengths?)", (long long)m->num_values, (unsigned long long)c.rows);
    uint64_t start = (uint64_t)m->data_page_offset;
    if (m->has_dict_offset && m->dict_page_offset > 0 && m->dict_page_offset < m->data_page_offset)
        start = (uint64_t)m->dict_page_offset;
    c.at = start;
    uint64_t len = (uint64_t)m->total_compressed;
    if (start < 4 || start > r->meta_at || len > r->meta_at - start)
        return cfail(&c, BL_ERR_FORMAT, "chunk of %llu bytes lies outside the data (bytes 4..%zu)",
                     (unsigned long long)len, r->meta_at);
    /* The values take their bytes from the budget before anything is
     * allocated (a few bytes of run-length encoding can claim 2^31 rows);
     * the strings may then use what is left, and are charged at the end. */
    uint64_t per_row = 8 + (col->optional ? 1 : 0);
    if (c.rows > bl_table_budget_left(&r->budget) / per_row) {
        char bound[160];
        return cfail(&c, BL_ERR_FORMAT, "%llu rows of %llu decoded bytes each exceed what is left of the %s the "
                     "file may decode to; refused as an expansion bomb", (unsigned long long)c.rows,
                     (unsigned long long)per_row, bl_table_budget_explain(&r->budget, bound, sizeof bound));
    }
    r->budget.used += c.rows * per_row;
    c.max_bytes = bl_table_budget_left(&r->budget);
    /* The output grows with the pages decoded (grow_output), so a footer
     * claiming rows its pages do not hold costs nothing. */
    uint64_t n = c.rows;
    memset(out, 0, sizeof *out);
    out->type = col->out;
    out->n = n;
    bl_status st = grow_output(&c, n < 4096 ? n : 4096);
    if (st) {
        bl_column_clear(out);
        return st;
    }
    uint64_t pos = start, end = start + len;
    while (c.done < c.rows) {
        c.at = pos;
        c.in_page = 1;
        if (pos >= end) {
            st = cfail(&c, BL_ERR_FORMAT, "the chunk ends after %llu of %llu values (ends at byte %llu)",
                       (unsigned long long)c.done, (unsigned long long)c.rows, (unsigned long long)end);
            break;
        }
        bl_pq_page_header h;
        size_t used;
        bl_pq_why why = {{0}};
        if (bl_pq_parse_page_header(r->map + pos, (size_t)(end - pos), &h, &used, &why)) {
            st = cfail(&c, BL_ERR_FORMAT, "page header: %s", why.text);
            break;
        }
        uint64_t data = pos + used;
        if ((uint64_t)h.compressed > end - data) {
            st = cfail(&c, BL_ERR_FORMAT, "page of %d bytes runs past the column chunk (ends at byte %llu)",
                       (int)h.compressed, (unsigned long long)end);
            break;
        }
        if (h.type == PQ_DICTIONARY_PAGE)
            st = read_dictionary(&c, &h, r->map + data, m->codec);
        else if (h.type == PQ_DATA_PAGE || h.type == PQ_DATA_PAGE_V2)
            st = read_data_page(&c, &h, r->map + data, m->codec);
        else if (h.type != PQ_INDEX_PAGE)
            st = cfail(&c, BL_ERR_FORMAT, "unknown page type %d", (int)h.type);
        if (st)
            break;
        pos = data + (uint64_t)h.compressed;
    }
    chunk_free_dict(&c);
    if (!st && col->is_unsigned) {
        c.in_page = 0;
        c.at = start;
        for (uint64_t i = 0; i < n; i++) {
            if (col->phys == PQ_INT32) {
                out->i64[i] = (uint32_t)out->i64[i];
            } else if (out->i64[i] < 0) {
                st = cfail(&c, BL_ERR_INVALID, "unsigned value %llu at row %llu is above INT64_MAX",
                           (unsigned long long)out->i64[i], (unsigned long long)(r->rg_first_row[g] + i));
                break;
            }
        }
    }
    if (!st && out->valid && c.nulls == 0) {
        free(out->valid);
        out->valid = NULL;
    }
    if (!st && col->out == BL_COL_STRING && !out->data && !(out->data = malloc(1)))
        st = cfail(&c, BL_ERR_NOMEM, "out of memory");
    if (st)
        bl_column_clear(out);
    else {
        r->budget.used += c.data_len;
        BL_ASSERT_SANE(column_sane, out, c.data_len);
    }
    return st;
}

