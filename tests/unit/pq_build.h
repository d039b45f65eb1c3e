/* Hand-built Parquet files for the reader's tests: one column "c" (and
 * optionally a second, "d"), one row group, pages whose every byte the test
 * chooses. The defaults make a valid file; each malformed case changes one
 * field. Layout: "PAR1", [dictionary page], data pages..., [pages of "d"],
 * footer (FileMetaData), u32 footer length, "PAR1". */
#ifndef BL_TEST_PQ_BUILD_H
#define BL_TEST_PQ_BUILD_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/parquet.h"

#define PQB_AUTO INT32_MIN

typedef struct pqb_page {
    int32_t type;               /* PQ_DATA_PAGE, PQ_DATA_PAGE_V2, PQ_DICTIONARY_PAGE */
    int32_t num_values, encoding;
    int32_t def_encoding;       /* v1 */
    int32_t num_nulls, def_len; /* v2: def_len bytes of body are the levels */
    int32_t uncompressed, compressed; /* PQB_AUTO: the body's length */
    const uint8_t *body;
    size_t len;
} pqb_page;

typedef struct pqb_file {
    int32_t phys, repetition, converted;
    int32_t logical;            /* 0, PQ_LT_STRING, PQ_LT_INTEGER */
    int32_t int_bits, int_signed;
    int32_t num_children;       /* of "c" (a group when > 0; its child leaf follows) */
    int32_t codec;
    int32_t chunk_type;         /* PQB_AUTO: phys */
    int64_t rows, file_rows, chunk_values; /* PQB_AUTO where INT32_MIN: rows */
    int64_t data_offset_shift;  /* added to the real data page offset */
    int64_t total_compressed;   /* PQB_AUTO: the real size */
    int n_pages;
    pqb_page pages[4];
    int second_column;          /* "d": required INT64 with d_values PLAIN values */
    int32_t d_values;
    int name_as_i32;            /* Thrift type mismatch: the column name as an i32 */
    int deep_nesting;           /* an unknown footer field of structs nested 40 deep */
    int32_t schema_list_size;   /* PQB_AUTO: the real count */
    int64_t footer_len_shift;
    const char *tail_magic, *head_magic;
    size_t truncate;            /* drop this many bytes from the end */
} pqb_file;

static inline pqb_file pqb_default(void)
{
    pqb_file f;
    memset(&f, 0, sizeof f);
    f.phys = PQ_INT64;
    f.repetition = PQ_REQUIRED;
    f.converted = -1;
    f.codec = PQ_UNCOMPRESSED;
    f.chunk_type = PQB_AUTO;
    f.rows = f.file_rows = f.chunk_values = PQB_AUTO;
    f.total_compressed = PQB_AUTO;
    f.schema_list_size = PQB_AUTO;
    f.tail_magic = f.head_magic = "PAR1";
    return f;
}

typedef struct pqb_buf {
    uint8_t data[1 << 16];
    size_t len;
} pqb_buf;

static inline void pqb_put(pqb_buf *b, const void *p, size_t n)
{
    if (b->len + n <= sizeof b->data) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

static inline void pqb_page_out(pqb_buf *b, const pqb_page *pg)
{
    bl_pq_tw h = {0};
    bl_pq_tw_i32(&h, 1, pg->type);
    bl_pq_tw_i32(&h, 2, pg->uncompressed == PQB_AUTO ? (int32_t)pg->len : pg->uncompressed);
    bl_pq_tw_i32(&h, 3, pg->compressed == PQB_AUTO ? (int32_t)pg->len : pg->compressed);
    if (pg->type == PQ_DICTIONARY_PAGE) {
        bl_pq_tw_struct_begin(&h, 7);
        bl_pq_tw_i32(&h, 1, pg->num_values);
        bl_pq_tw_i32(&h, 2, pg->encoding);
    } else if (pg->type == PQ_DATA_PAGE_V2) {
        bl_pq_tw_struct_begin(&h, 8);
        bl_pq_tw_i32(&h, 1, pg->num_values);
        bl_pq_tw_i32(&h, 2, pg->num_nulls);
        bl_pq_tw_i32(&h, 3, pg->num_values);
        bl_pq_tw_i32(&h, 4, pg->encoding);
        bl_pq_tw_i32(&h, 5, pg->def_len);
        bl_pq_tw_i32(&h, 6, 0);
    } else {
        bl_pq_tw_struct_begin(&h, pg->type == PQ_DATA_PAGE ? 5 : 6);
        bl_pq_tw_i32(&h, 1, pg->num_values);
        bl_pq_tw_i32(&h, 2, pg->encoding);
        bl_pq_tw_i32(&h, 3, pg->def_encoding);
        bl_pq_tw_i32(&h, 4, PQ_RLE);
    }
    bl_pq_tw_struct_end(&h);
    bl_pq_tw_struct_end(&h);
    pqb_put(b, h.buf, h.len);
    pqb_put(b, pg->body, pg->len);
    bl_pq_tw_free(&h);
}

static inline void pqb_chunk_meta(bl_pq_tw *t, int32_t type, const char *name, int32_t codec, int64_t values,
                                  int64_t size, int64_t data_at, int64_t dict_at)
{
    bl_pq_tw_struct_begin(t, 0);
    bl_pq_tw_i64(t, 2, data_at);
    bl_pq_tw_struct_begin(t, 3);
    bl_pq_tw_i32(t, 1, type);
    bl_pq_tw_list(t, 2, PQ_T_I32, 1);
    bl_pq_tw_elem_i32(t, PQ_PLAIN);
    bl_pq_tw_list(t, 3, PQ_T_BINARY, 1);
    bl_pq_tw_elem_binary(t, name, strlen(name));
    bl_pq_tw_i32(t, 4, codec);
    bl_pq_tw_i64(t, 5, values);
    bl_pq_tw_i64(t, 6, size);
    bl_pq_tw_i64(t, 7, size);
    bl_pq_tw_i64(t, 9, data_at);
    if (dict_at >= 0)
        bl_pq_tw_i64(t, 11, dict_at);
    bl_pq_tw_struct_end(t);
    bl_pq_tw_struct_end(t);
}

/* The file's bytes into *b. */
static inline void pqb_build(const pqb_file *f, pqb_buf *b)
{
    b->len = 0;
    pqb_put(b, f->head_magic, 4);
    int64_t start = (int64_t)b->len, dict_at = -1, data_at = -1;
    for (int i = 0; i < f->n_pages; i++) {
        if (f->pages[i].type == PQ_DICTIONARY_PAGE)
            dict_at = (int64_t)b->len;
        else if (data_at < 0)
            data_at = (int64_t)b->len;
        pqb_page_out(b, &f->pages[i]);
    }
    if (data_at < 0)
        data_at = (int64_t)b->len;
    int64_t size = (int64_t)b->len - start;
    int64_t rows = f->rows == PQB_AUTO ? (f->n_pages ? f->pages[f->n_pages - 1].num_values : 0) : f->rows;
    int64_t d_at = (int64_t)b->len, d_size = 0;
    if (f->second_column) {
        uint8_t body[8 * 64] = {0};
        pqb_page pg = {PQ_DATA_PAGE, f->d_values, PQ_PLAIN, PQ_RLE, 0, 0, PQB_AUTO, PQB_AUTO, body,
                       (size_t)f->d_values * 8};
        pqb_page_out(b, &pg);
        d_size = (int64_t)b->len - d_at;
    }
    bl_pq_tw t = {0};
    bl_pq_tw_i32(&t, 1, 1);
    int n_fields = 1 + (f->second_column != 0);
    int n_schema = 1 + n_fields + (f->num_children > 0);
    bl_pq_tw_list(&t, 2, PQ_T_STRUCT,
                  f->schema_list_size == PQB_AUTO ? (uint32_t)n_schema : (uint32_t)f->schema_list_size);
    bl_pq_tw_struct_begin(&t, 0);
    bl_pq_tw_string(&t, 4, "schema");
    bl_pq_tw_i32(&t, 5, n_fields);
    bl_pq_tw_struct_end(&t);
    bl_pq_tw_struct_begin(&t, 0);
    if (f->num_children == 0)
        bl_pq_tw_i32(&t, 1, f->phys);
    bl_pq_tw_i32(&t, 3, f->repetition);
    if (f->name_as_i32)
        bl_pq_tw_i32(&t, 4, 99);
    else
        bl_pq_tw_string(&t, 4, "c");
    if (f->num_children)
        bl_pq_tw_i32(&t, 5, f->num_children);
    if (f->converted >= 0)
        bl_pq_tw_i32(&t, 6, f->converted);
    if (f->logical) {
        bl_pq_tw_struct_begin(&t, 10);
        bl_pq_tw_struct_begin(&t, (int16_t)f->logical);
        if (f->logical == PQ_LT_INTEGER) {
            bl_pq_tw_field(&t, 1, PQ_T_BYTE);
            bl_pq_tw_varint(&t, (uint64_t)f->int_bits); /* a byte: one raw byte below 128 */
            bl_pq_tw_field(&t, 2, f->int_signed ? PQ_T_TRUE : PQ_T_FALSE);
        }
        bl_pq_tw_struct_end(&t);
        bl_pq_tw_struct_end(&t);
    }
    bl_pq_tw_struct_end(&t);
    if (f->num_children) {
        bl_pq_tw_struct_begin(&t, 0);
        bl_pq_tw_i32(&t, 1, f->phys);
        bl_pq_tw_i32(&t, 3, PQ_REQUIRED);
        bl_pq_tw_string(&t, 4, "leaf");
        bl_pq_tw_struct_end(&t);
    }
    if (f->second_column) {
        bl_pq_tw_struct_begin(&t, 0);
        bl_pq_tw_i32(&t, 1, PQ_INT64);
        bl_pq_tw_i32(&t, 3, PQ_REQUIRED);
        bl_pq_tw_string(&t, 4, "d");
        bl_pq_tw_struct_end(&t);
    }
    bl_pq_tw_i64(&t, 3, f->file_rows == PQB_AUTO ? rows : f->file_rows);
    bl_pq_tw_list(&t, 4, PQ_T_STRUCT, 1);
    bl_pq_tw_struct_begin(&t, 0);
    bl_pq_tw_list(&t, 1, PQ_T_STRUCT, (uint32_t)n_fields);
    pqb_chunk_meta(&t, f->chunk_type == PQB_AUTO ? f->phys : f->chunk_type, "c", f->codec,
                   f->chunk_values == PQB_AUTO ? rows : f->chunk_values,
                   f->total_compressed == PQB_AUTO ? size : f->total_compressed, data_at + f->data_offset_shift,
                   dict_at);
    if (f->second_column)
        pqb_chunk_meta(&t, PQ_INT64, "d", PQ_UNCOMPRESSED, rows, d_size, d_at, -1);
    bl_pq_tw_i64(&t, 3, rows);
    bl_pq_tw_struct_end(&t);
    if (f->deep_nesting) {
        /* Raw bytes (bl_pq_tw refuses such depth): field 20 as a struct in the
         * long form (0x0c, zigzag 20 = 40), then 39 structs as field 1 (0x1c),
         * then 40 stop bytes. */
        bl_pq_tw_varint(&t, 0x0c);
        bl_pq_tw_varint(&t, 40);
        for (int i = 0; i < 39; i++)
            bl_pq_tw_varint(&t, 0x1c);
        for (int i = 0; i < 40; i++)
            bl_pq_tw_varint(&t, 0);
    }
    bl_pq_tw_struct_end(&t);
    pqb_put(b, t.buf, t.len);
    int64_t flen = (int64_t)t.len + f->footer_len_shift;
    uint8_t l[4] = {(uint8_t)flen, (uint8_t)(flen >> 8), (uint8_t)(flen >> 16), (uint8_t)(flen >> 24)};
    pqb_put(b, l, 4);
    pqb_put(b, f->tail_magic, 4);
    b->len -= f->truncate < b->len ? f->truncate : b->len;
    bl_pq_tw_free(&t);
}

static inline int pqb_write(const char *path, const pqb_file *f)
{
    static pqb_buf b;
    pqb_build(f, &b);
    FILE *o = fopen(path, "wb");
    if (!o)
        return -1;
    size_t w = fwrite(b.data, 1, b.len, o);
    return fclose(o) == 0 && w == b.len ? 0 : -1;
}

#endif
