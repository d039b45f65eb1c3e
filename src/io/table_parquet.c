/* The Parquet backend of bl_table: the file is mapped, its footer parsed
 * once, and each `next` decodes one row group of the selected columns only,
 * touching nothing but their column chunks. Flat columns, required or
 * optional; nested and repeated columns, decimals, INT96 and fixed-length
 * byte arrays are listed but refused when selected.
 *
 * Bounds: every size the file declares is checked against the bytes it can
 * justify before anything is allocated (docs/formats.md, "Parquet"): chunks
 * lie inside the file, pages inside their chunk, an uncompressed size within
 * the codec's ratio or the page's values, rows and decoded string bytes
 * within PQ_EXPANSION per byte of the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/parquet.h"
#include "io/table_impl.h"

typedef struct pq_col {
    const char *name;     /* the schema element's name (owned by meta) */
    char shown[80];       /* the name as messages print it (pq_printable) */
    int32_t phys;
    int optional, is_unsigned;
    uint32_t leaf;        /* index of its chunk in each row group */
    const char *refused;  /* why it cannot be read, or NULL */
    bl_col_type out;
} pq_col;

typedef struct pq_reader {
    char *path;
    const uint8_t *map;
    size_t size;
    size_t meta_at;       /* where the footer's metadata starts */
    pq_file_meta meta;
    size_t n_cols;
    pq_col *cols;
    uint32_t leaves;
    uint32_t next_rg;
    uint64_t *rg_first_row;
} pq_reader;

/* The reader's own clear (bl_column_clear lives in the dispatch, table.c),
 * so that the backend stands alone for its tests and fuzz harness. */
static void col_free(bl_column *c)
{
    free(c->i64);
    free(c->f64);
    free(c->offsets);
    free(c->data);
    free(c->valid);
    memset(c, 0, sizeof *c);
}

static int pq_sniff(const unsigned char *head, size_t len) { return len >= 4 && !memcmp(head, "PAR1", 4); }

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void reader_free(pq_reader *r)
{
    if (!r)
        return;
    if (r->map)
        munmap((void *)(uintptr_t)r->map, r->size);
    pq_file_meta_free(&r->meta);
    free(r->cols);
    free(r->rg_first_row);
    free(r->path);
    free(r);
}

/* What a leaf column reads as, or why it cannot be read. */
static void classify(pq_col *c, const pq_schema_el *e)
{
    c->phys = e->type;
    c->optional = e->repetition == PQ_OPTIONAL;
    c->out = BL_COL_STRING;
    int decimal = e->converted == PQ_CT_DECIMAL || e->logical == PQ_LT_DECIMAL;
    if (e->repetition == PQ_REPEATED) {
        c->refused = "a repeated (list) column is not supported, only flat columns";
        return;
    }
    switch (e->type) {
    case PQ_BOOLEAN: c->out = BL_COL_BOOL; break;
    case PQ_INT32:
    case PQ_INT64:
        c->out = BL_COL_INT64;
        c->is_unsigned = (e->logical == PQ_LT_INTEGER && !e->int_signed) ||
                         (e->converted >= PQ_CT_UINT_8 && e->converted <= PQ_CT_UINT_64);
        break;
    case PQ_FLOAT:
    case PQ_DOUBLE: c->out = BL_COL_DOUBLE; break;
    case PQ_BYTE_ARRAY: c->out = BL_COL_STRING; break;
    case PQ_INT96: c->refused = "INT96 (legacy timestamp) is not supported"; return;
    case PQ_FIXED: c->refused = "FIXED_LEN_BYTE_ARRAY is not supported"; return;
    default: c->refused = "the physical type is missing or unknown"; return;
    }
    if (decimal)
        c->refused = "DECIMAL columns are not supported (their scale would be lost)";
}

/* Top-level fields of the schema tree; a group is one refused column whose
 * leaves are skipped. */
static bl_status build_columns(pq_reader *r, bl_error *err)
{
    const pq_file_meta *m = &r->meta;
    uint32_t k = (uint32_t)m->schema[0].num_children;
    if (k > m->n_schema - 1)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: the root declares %u fields, %u elements follow",
                       r->path, k, m->n_schema - 1);
    if (k && !(r->cols = calloc(k, sizeof *r->cols)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %u columns", r->path, k);
    r->n_cols = k;
    uint32_t idx = 1, leaf = 0;
    for (uint32_t f = 0; f < k; f++) {
        if (idx >= m->n_schema)
            return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: field %u of %u is missing", r->path, f, k);
        const pq_schema_el *e = &m->schema[idx++];
        pq_col *c = &r->cols[f];
        c->name = e->name;
        pq_printable(e->name, c->shown, sizeof c->shown);
        c->leaf = leaf;
        if (e->num_children > 0 || e->type < 0) {
            c->refused = "a nested (group) column is not supported, only flat columns";
            uint64_t need = (uint64_t)e->num_children;
            while (need > 0) {
                if (need > m->n_schema - idx)
                    return bl_fail(err, BL_ERR_FORMAT,
                                   "%s: column '%s': footer schema: the group declares more children than follow",
                                   r->path, c->shown);
                const pq_schema_el *g = &m->schema[idx++];
                need--;
                if (g->num_children > 0)
                    need += (uint64_t)g->num_children;
                else
                    leaf++;
            }
        } else {
            classify(c, e);
            leaf++;
        }
    }
    if (idx != m->n_schema)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: %u elements after the last field", r->path,
                       m->n_schema - idx);
    r->leaves = leaf;
    return BL_OK;
}

static bl_status pq_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    pq_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    bl_status st = BL_OK;
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        st = bl_fail(err, BL_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size < 12) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: header: %lld bytes, too short for Parquet (PAR1 + footer need 12)",
                     path, (long long)sb.st_size);
        goto fail;
    }
    r->size = (size_t)sb.st_size;
    void *map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        st = bl_fail(err, BL_ERR_IO, "%s: cannot map %zu bytes: %s", path, r->size, strerror(errno));
        goto fail;
    }
    r->map = map;
    close(fd);
    fd = -1;
    const uint8_t *tail = r->map + r->size - 4;
    if (memcmp(r->map, "PAR1", 4) != 0) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: header at byte 0: no PAR1 magic, not a Parquet file", path);
        goto fail;
    }
    if (memcmp(tail, "PARE", 4) == 0) {
        st = bl_fail(err, BL_ERR_UNSUPPORTED, "%s: footer at byte %zu: encrypted Parquet (PARE) is not supported",
                     path, r->size - 4);
        goto fail;
    }
    if (memcmp(tail, "PAR1", 4) != 0) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer at byte %zu: no PAR1 magic at the end (truncated file?)", path,
                     r->size - 4);
        goto fail;
    }
    uint32_t mlen = le32(r->map + r->size - 8);
    if (mlen > r->size - 12) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer at byte %zu: metadata length %u runs past the file start "
                     "(%zu bytes)", path, r->size - 8, mlen, r->size);
        goto fail;
    }
    r->meta_at = r->size - 8 - mlen;
    pq_why why = {{0}};
    if (pq_parse_file_meta(r->map + r->meta_at, mlen, &r->meta, &why)) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer (metadata at bytes %zu..%zu): %s", path, r->meta_at,
                     r->size - 8, why.text);
        goto fail;
    }
    if ((st = build_columns(r, err)))
        goto fail;
    uint64_t total = 0;
    if (r->meta.n_row_groups && !(r->rg_first_row = malloc(r->meta.n_row_groups * sizeof *r->rg_first_row))) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    for (uint32_t g = 0; g < r->meta.n_row_groups; g++) {
        const pq_row_group *rg = &r->meta.row_groups[g];
        if (rg->n_columns != r->leaves) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: row group %u has %u column chunks, the schema %u leaf "
                         "columns", path, g, rg->n_columns, r->leaves);
            goto fail;
        }
        r->rg_first_row[g] = total;
        total += (uint64_t)rg->num_rows;
        if (total > (uint64_t)PQ_EXPANSION * r->size) {
            st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: row group %u brings the rows to %llu, more than %u per "
                         "byte of a %zu-byte file justifies", path, g, (unsigned long long)total,
                         (unsigned)PQ_EXPANSION, r->size);
            goto fail;
        }
    }
    if (total != (uint64_t)r->meta.num_rows) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: footer: the row groups hold %llu rows, the file declares %lld", path,
                     (unsigned long long)total, (long long)r->meta.num_rows);
        goto fail;
    }
    schema->n_columns = r->n_cols;
    schema->n_rows = total;
    schema->names = calloc(r->n_cols ? r->n_cols : 1, sizeof *schema->names);
    schema->types = calloc(r->n_cols ? r->n_cols : 1, sizeof *schema->types);
    if (!schema->names || !schema->types) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto fail_schema;
    }
    for (size_t i = 0; i < r->n_cols; i++) {
        schema->types[i] = r->cols[i].out;
        if (!(schema->names[i] = strdup(r->cols[i].name))) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            goto fail_schema;
        }
    }
    *state = r;
    return BL_OK;
fail_schema:
    if (schema->names)
        for (size_t i = 0; i < r->n_cols; i++)
            free(schema->names[i]);
    free(schema->names);
    free(schema->types);
    schema->names = NULL;
    schema->types = NULL;
fail:
    if (fd >= 0)
        close(fd);
    reader_free(r);
    return st;
}

static void pq_close(void *state) { reader_free(state); }

/* ---- one column chunk ---- */

typedef struct chunk {
    const pq_reader *r;
    const pq_col *col;
    uint32_t rg;
    uint64_t at;           /* the page (or chunk) being read, for messages */
    int in_page;
    bl_error *err;
    bl_column *out;
    uint64_t rows, done;
    uint64_t data_len, data_cap, max_bytes;
    uint64_t nulls;
    /* the dictionary */
    int have_dict;
    uint64_t dict_n;
    int64_t *dict_i64;
    double *dict_f64;
    pq_str *dict_str;
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

/* The page's bytes after decompression: src itself when stored plain, else a
 * fresh buffer (*owned) of the declared size, once that size is justified. */
static bl_status page_bytes(chunk *c, int32_t codec, const uint8_t *src, size_t n, size_t dn, uint64_t values,
                            const uint8_t **buf, uint8_t **owned)
{
    *owned = NULL;
    if (codec == PQ_UNCOMPRESSED) {
        if (n != dn)
            return cfail(c, BL_ERR_FORMAT, "uncompressed page of %zu bytes declares %zu", n, dn);
        *buf = src;
        return BL_OK;
    }
    uint64_t ratio = pq_codec_ratio(codec);
    if (!ratio)
        return cfail(c, BL_ERR_UNSUPPORTED, "codec %s (%d) is not supported (supported: uncompressed, snappy, gzip, "
                     "zstd, brotli, lz4, lz4_raw)", pq_codec_name(codec), (int)codec);
    /* Each value may justify its width plus a level and a length prefix. */
    size_t w = pq_type_width(c->col->phys);
    uint64_t limit = (uint64_t)n * ratio + values * (w + 16) + 4096;
    if (dn > limit)
        return cfail(c, BL_ERR_FORMAT, "%s page of %zu bytes claims %zu bytes uncompressed, more than its %llu "
                     "values justify (at most %llu)", pq_codec_name(codec), n, dn, (unsigned long long)values,
                     (unsigned long long)limit);
    if (!(*owned = malloc(dn ? dn : 1)))
        return cfail(c, BL_ERR_NOMEM, "out of memory for a page of %zu bytes", dn);
    pq_why why = {{0}};
    if (pq_decompress(codec, src, n, *owned, dn, &why)) {
        free(*owned);
        *owned = NULL;
        return cfail(c, BL_ERR_FORMAT, "%s", why.text);
    }
    *buf = *owned;
    return BL_OK;
}

static bl_status read_dictionary(chunk *c, const pq_page_header *h, const uint8_t *src, int32_t codec)
{
    if (c->have_dict || c->done)
        return cfail(c, BL_ERR_FORMAT, "a second dictionary page, or one after data pages");
    if (!h->has_dict)
        return cfail(c, BL_ERR_FORMAT, "dictionary page without a dictionary page header");
    if (h->encoding != PQ_PLAIN && h->encoding != PQ_PLAIN_DICTIONARY)
        return cfail(c, BL_ERR_UNSUPPORTED, "dictionary page encoded %s (only plain is defined)",
                     pq_encoding_name(h->encoding));
    const uint8_t *buf;
    uint8_t *owned;
    bl_status st = page_bytes(c, codec, src, (size_t)h->compressed, (size_t)h->uncompressed,
                              (uint64_t)h->num_values, &buf, &owned);
    if (st)
        return st;
    c->dict_buf = owned;
    size_t len = (size_t)h->uncompressed, n = (size_t)h->num_values;
    pq_why why = {{0}};
    int32_t phys = c->col->phys;
    /* Sizes checked before allocating: each entry takes bytes in the page. */
    size_t min_bytes = phys == PQ_BOOLEAN ? (n + 7) / 8 : phys == PQ_BYTE_ARRAY ? n * 4 : n * pq_type_width(phys);
    if (min_bytes > len)
        return cfail(c, BL_ERR_FORMAT, "dictionary of %zu values cannot fit in %zu bytes", n, len);
    int r;
    if (phys == PQ_BYTE_ARRAY) {
        if (!(c->dict_str = malloc((n ? n : 1) * sizeof *c->dict_str)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = pq_plain_strings(buf, len, c->dict_str, n, &why);
    } else if (c->col->out == BL_COL_DOUBLE) {
        if (!(c->dict_f64 = malloc((n ? n : 1) * sizeof *c->dict_f64)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = pq_plain_fixed(phys, buf, len, NULL, c->dict_f64, n, &why);
    } else {
        if (!(c->dict_i64 = malloc((n ? n : 1) * sizeof *c->dict_i64)))
            return cfail(c, BL_ERR_NOMEM, "out of memory for a dictionary of %zu values", n);
        r = pq_plain_fixed(phys, buf, len, c->dict_i64, NULL, n, &why);
    }
    if (r)
        return cfail(c, BL_ERR_FORMAT, "dictionary: %s", why.text);
    if (!owned && phys == PQ_BYTE_ARRAY) {
        /* Strings point into the mapped file, which outlives the chunk. */
    }
    c->have_dict = 1;
    c->dict_n = n;
    return BL_OK;
}

static bl_status append_bytes(chunk *c, const uint8_t *p, uint32_t n)
{
    if (c->data_len + n > c->max_bytes)
        return cfail(c, BL_ERR_FORMAT, "the strings would take over %llu bytes, more than the file justifies",
                     (unsigned long long)c->max_bytes);
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
    pq_why why = {{0}};
    if (nn && pq_rle_decode(p + 1, len - 1, bw, *idx, nn, &why))
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
    pq_why why = {{0}};
    uint32_t *idx = NULL;
    bl_status st = BL_OK;
    switch (enc) {
    case PQ_PLAIN:
        if (pq_plain_fixed(phys, p, len, i64, f64, nn, &why))
            st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
        break;
    case PQ_BYTE_STREAM_SPLIT:
        if (pq_byte_stream_split(phys, p, len, i64, f64, nn, &why))
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
            st = cfail(c, BL_ERR_UNSUPPORTED, "rle values are defined for BOOLEAN only, not %s", pq_type_name(phys));
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
        if (pq_rle_decode(p + 4, le32(p), 1, idx, nn, &why)) {
            st = cfail(c, BL_ERR_FORMAT, "rle booleans: %s", why.text);
            break;
        }
        for (size_t i = 0; i < nn; i++)
            i64[i] = idx[i];
        break;
    case PQ_DELTA_BINARY_PACKED: {
        if (phys != PQ_INT32 && phys != PQ_INT64) {
            st = cfail(c, BL_ERR_UNSUPPORTED, "delta_binary_packed is defined for INT32/INT64, not %s",
                       pq_type_name(phys));
            break;
        }
        size_t used;
        if (pq_delta_decode(p, len, i64, nn, &used, &why)) {
            st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
            break;
        }
        if (phys == PQ_INT32) /* 32-bit arithmetic wraps: keep the low half, signed */
            for (size_t i = 0; i < nn; i++)
                i64[i] = (int32_t)(uint32_t)(uint64_t)i64[i];
        break;
    }
    default:
        st = cfail(c, BL_ERR_UNSUPPORTED, "encoding %s (%d) is not supported for %s", pq_encoding_name(enc),
                   (int)enc, pq_type_name(phys));
    }
    free(idx);
    return st;
}

static bl_status decode_strings(chunk *c, int32_t enc, const uint8_t *p, size_t len, size_t nn, pq_str *s,
                                uint8_t **scratch)
{
    pq_why why = {{0}};
    uint32_t *idx = NULL;
    bl_status st = BL_OK;
    int r = 0;
    switch (enc) {
    case PQ_PLAIN: r = pq_plain_strings(p, len, s, nn, &why); break;
    case PQ_DELTA_LENGTH_BYTE_ARRAY: r = pq_delta_length_strings(p, len, s, nn, &why); break;
    case PQ_DELTA_BYTE_ARRAY:
        r = pq_delta_strings(p, len, s, nn, c->max_bytes - c->data_len, scratch, &why);
        break;
    case PQ_PLAIN_DICTIONARY:
    case PQ_RLE_DICTIONARY:
        if ((st = dict_indices(c, p, len, nn, &idx)))
            break;
        for (size_t i = 0; i < nn; i++)
            s[i] = c->dict_str[idx[i]];
        break;
    default:
        st = cfail(c, BL_ERR_UNSUPPORTED, "encoding %s (%d) is not supported for BYTE_ARRAY", pq_encoding_name(enc),
                   (int)enc);
    }
    if (r)
        st = cfail(c, BL_ERR_FORMAT, "%s", why.text);
    free(idx);
    return st;
}

/* A data page (v1 or v2): levels, values, then nulls spread into place. */
static bl_status read_data_page(chunk *c, const pq_page_header *h, const uint8_t *src, int32_t codec)
{
    int v2 = h->type == PQ_DATA_PAGE_V2;
    if (v2 ? !h->has_v2 : !h->has_data)
        return cfail(c, BL_ERR_FORMAT, "data page without its data page header");
    uint64_t nv = (uint64_t)h->num_values;
    if (nv > c->rows - c->done)
        return cfail(c, BL_ERR_FORMAT, "page holds %llu values, the row group has %llu rows left (columns of "
                     "different lengths?)", (unsigned long long)nv, (unsigned long long)(c->rows - c->done));
    if (v2 && h->num_rows != h->num_values)
        return cfail(c, BL_ERR_FORMAT, "v2 page of %d rows holds %d values (a flat column has one each)",
                     (int)h->num_rows, (int)h->num_values);
    size_t clen = (size_t)h->compressed, ulen = (size_t)h->uncompressed;
    const uint8_t *levels = NULL;
    size_t levels_len = 0;
    const uint8_t *body;
    uint8_t *owned = NULL;
    bl_status st;
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
                        &owned);
        ulen -= lv;
    } else {
        st = page_bytes(c, codec, src, clen, ulen, nv, &body, &owned);
    }
    if (st)
        return st;
    size_t blen = ulen;
    uint32_t *def = NULL;
    pq_str *strs = NULL;
    uint8_t *scratch = NULL;
    uint64_t nn = nv;
    pq_why why = {{0}};
    if (c->col->optional) {
        if (!v2) {
            if (h->def_encoding != PQ_RLE) {
                st = cfail(c, BL_ERR_UNSUPPORTED, "definition levels encoded %s (only rle is supported)",
                           pq_encoding_name(h->def_encoding));
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
        if (pq_rle_decode(levels, levels_len, 1, def, (size_t)nv, &why)) {
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
    free(owned);
    free(def);
    free(strs);
    free(scratch);
    return st;
}

static bl_status read_chunk(const pq_reader *r, uint32_t g, const pq_col *col, bl_column *out, bl_error *err)
{
    const pq_row_group *rg = &r->meta.row_groups[g];
    const pq_chunk_meta *m = &rg->columns[col->leaf];
    chunk c = {.r = r, .col = col, .rg = g, .err = err, .out = out, .rows = (uint64_t)rg->num_rows};
    c.max_bytes = (uint64_t)PQ_EXPANSION * r->size;
    c.at = m->has_meta ? (uint64_t)m->data_page_offset : 0;
    if (col->refused)
        return cfail(&c, BL_ERR_UNSUPPORTED, "%s", col->refused);
    if (!m->has_meta)
        return cfail(&c, BL_ERR_FORMAT, "column chunk without metadata");
    if (m->has_file_path)
        return cfail(&c, BL_ERR_UNSUPPORTED, "column chunk stored in another file");
    if (m->type != col->phys)
        return cfail(&c, BL_ERR_FORMAT, "chunk of type %s, the schema says %s", pq_type_name(m->type),
                     pq_type_name(col->phys));
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
    /* The output, bounded by the row count checked at open. */
    uint64_t n = c.rows;
    memset(out, 0, sizeof *out);
    out->type = col->out;
    out->n = n;
    size_t cells = (size_t)(n ? n : 1);
    int ok = 1;
    if (col->out == BL_COL_DOUBLE)
        ok = (out->f64 = malloc(cells * sizeof *out->f64)) != NULL;
    else if (col->out == BL_COL_STRING)
        ok = (out->offsets = calloc(cells + 1, sizeof *out->offsets)) != NULL;
    else
        ok = (out->i64 = malloc(cells * sizeof *out->i64)) != NULL;
    if (ok && col->optional)
        ok = (out->valid = malloc(cells)) != NULL;
    if (!ok)
        return cfail(&c, BL_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)n);
    bl_status st = BL_OK;
    uint64_t pos = start, end = start + len;
    while (c.done < c.rows) {
        c.at = pos;
        c.in_page = 1;
        if (pos >= end) {
            st = cfail(&c, BL_ERR_FORMAT, "the chunk ends after %llu of %llu values (ends at byte %llu)",
                       (unsigned long long)c.done, (unsigned long long)c.rows, (unsigned long long)end);
            break;
        }
        pq_page_header h;
        size_t used;
        pq_why why = {{0}};
        if (pq_parse_page_header(r->map + pos, (size_t)(end - pos), &h, &used, &why)) {
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
        col_free(out);
    return st;
}

static bl_status pq_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    pq_reader *r = state;
    *rows = 0;
    for (size_t i = 0; i < n; i++)
        if (cols[i] >= r->n_cols)
            return bl_fail(err, BL_ERR_INVALID, "%s: column index %zu out of range (%zu columns)", r->path, cols[i],
                           r->n_cols);
    /* An empty row group is no batch: 0 rows would read as the end. */
    while (r->next_rg < r->meta.n_row_groups && r->meta.row_groups[r->next_rg].num_rows == 0)
        r->next_rg++;
    if (r->next_rg >= r->meta.n_row_groups)
        return BL_OK;
    uint32_t g = r->next_rg;
    for (size_t i = 0; i < n; i++) {
        bl_status st = read_chunk(r, g, &r->cols[cols[i]], &out[i], err);
        if (st) {
            for (size_t j = 0; j < i; j++)
                col_free(&out[j]);
            return st;
        }
    }
    r->next_rg++;
    *rows = (uint64_t)r->meta.row_groups[g].num_rows;
    return BL_OK;
}

const bl_table_backend bl_table_parquet = {"parquet", BL_TABLE_PARQUET, pq_sniff, pq_open, pq_next, pq_close};
