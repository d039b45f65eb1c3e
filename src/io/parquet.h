/* Parquet internals shared by the reader (table_parquet.c), its layers
 * (parquet_thrift.c: the Thrift compact protocol; parquet_meta.c: footer and
 * page headers; parquet_codec.c: decompression; parquet_decode.c: encodings)
 * and the writer (parquet_write.c). Not installed; the unit tests and the
 * fuzz harnesses include it to reach the layers directly.
 *
 * The layers report failures as a short reason in a caller-provided buffer
 * (bl_pq_why); only the reader knows the file, column, row group and page, and
 * it prefixes every reason with them, so each message names all four. */
#ifndef BL_IO_PARQUET_H
#define BL_IO_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/table.h"
#include "io/table_impl.h"

/* How far a file may expand into memory: the table budget (table.h,
 * BL_TABLE_EXPANSION and the caller's ceiling), kept in the reader. Rows cost
 * at least one byte each at open; each column chunk takes its values (8 bytes
 * a row, plus 1 for validity) before its output is allocated and its string
 * bytes as they are decoded. The fuzz harness runs with the same budget. */

typedef struct bl_pq_why {
    char text[256];
} bl_pq_why;

/* Record a reason; always returns -1 so that layers can `return bl_pq_fail(...)`. */
int bl_pq_fail(bl_pq_why *why, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A name from the file made fit for a one-line message: control bytes
 * become '?', and long names are cut (with "..."). Returns buf. */
const char *bl_pq_printable(const char *s, char *buf, size_t cap);

/* ---- Thrift compact protocol (parquet_thrift.c) ---- */
enum {
    PQ_T_STOP = 0, PQ_T_TRUE = 1, PQ_T_FALSE = 2, PQ_T_BYTE = 3, PQ_T_I16 = 4, PQ_T_I32 = 5,
    PQ_T_I64 = 6, PQ_T_DOUBLE = 7, PQ_T_BINARY = 8, PQ_T_LIST = 9, PQ_T_SET = 10, PQ_T_MAP = 11,
    PQ_T_STRUCT = 12
};
#define PQ_T_MAX_DEPTH 32

typedef struct bl_pq_thrift {
    const uint8_t *base, *p, *end; /* base: for byte offsets in messages */
    int depth;
    bl_pq_why *why;
} bl_pq_thrift;

void bl_pq_t_init(bl_pq_thrift *t, const uint8_t *p, size_t n, bl_pq_why *why);
size_t bl_pq_t_offset(const bl_pq_thrift *t);
/* Inside a struct: the next field's id and type; type PQ_T_STOP at the end.
 * *last holds the previous field id (0 at the struct's start). */
int bl_pq_t_field(bl_pq_thrift *t, int16_t *last, int16_t *id, int *type);
/* Read a value of the field type found (checked against the expected kind). */
int bl_pq_t_i32(bl_pq_thrift *t, int type, int32_t *v);
int bl_pq_t_i64(bl_pq_thrift *t, int type, int64_t *v);
int bl_pq_t_bool(bl_pq_thrift *t, int type, int *v); /* field form: the value is in the type */
int bl_pq_t_binary(bl_pq_thrift *t, int type, const uint8_t **p, uint32_t *n);
/* A list header: its element type and size (size bounded by the bytes left). */
int bl_pq_t_list(bl_pq_thrift *t, int type, int *elem, uint32_t *n);
int bl_pq_t_struct_begin(bl_pq_thrift *t, int type);
void bl_pq_t_struct_end(bl_pq_thrift *t);
/* Skip a value of the given type (nesting bounded by PQ_T_MAX_DEPTH). */
int bl_pq_t_skip(bl_pq_thrift *t, int type);
/* List elements: i32/i64/binary without a field header. */
int bl_pq_t_elem_i32(bl_pq_thrift *t, int elem, int32_t *v);

/* Writing (parquet_write.c): a growable buffer of compact-protocol bytes. */
typedef struct bl_pq_tw {
    uint8_t *buf;
    size_t len, cap;
    int16_t last[PQ_T_MAX_DEPTH];
    int depth;
    int failed; /* an allocation failed: everything after is dropped */
} bl_pq_tw;

void bl_pq_tw_field(bl_pq_tw *w, int16_t id, int type);
void bl_pq_tw_i32(bl_pq_tw *w, int16_t id, int32_t v);
void bl_pq_tw_i64(bl_pq_tw *w, int16_t id, int64_t v);
void bl_pq_tw_binary(bl_pq_tw *w, int16_t id, const void *p, size_t n);
void bl_pq_tw_string(bl_pq_tw *w, int16_t id, const char *s);
void bl_pq_tw_list(bl_pq_tw *w, int16_t id, int elem, uint32_t n);
void bl_pq_tw_struct_begin(bl_pq_tw *w, int16_t id); /* id 0: a list element */
void bl_pq_tw_struct_end(bl_pq_tw *w);
void bl_pq_tw_varint(bl_pq_tw *w, uint64_t v);
void bl_pq_tw_elem_i32(bl_pq_tw *w, int32_t v);
void bl_pq_tw_elem_binary(bl_pq_tw *w, const void *p, size_t n);
void bl_pq_tw_free(bl_pq_tw *w);

/* ---- Metadata (parquet_meta.c) ---- */
enum { PQ_BOOLEAN = 0, PQ_INT32 = 1, PQ_INT64 = 2, PQ_INT96 = 3, PQ_FLOAT = 4, PQ_DOUBLE = 5,
       PQ_BYTE_ARRAY = 6, PQ_FIXED = 7 };
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 };
enum { PQ_UNCOMPRESSED = 0, PQ_SNAPPY = 1, PQ_GZIP = 2, PQ_LZO = 3, PQ_BROTLI = 4, PQ_LZ4 = 5,
       PQ_ZSTD = 6, PQ_LZ4_RAW = 7 };
enum { PQ_PLAIN = 0, PQ_PLAIN_DICTIONARY = 2, PQ_RLE = 3, PQ_BIT_PACKED = 4, PQ_DELTA_BINARY_PACKED = 5,
       PQ_DELTA_LENGTH_BYTE_ARRAY = 6, PQ_DELTA_BYTE_ARRAY = 7, PQ_RLE_DICTIONARY = 8,
       PQ_BYTE_STREAM_SPLIT = 9 };
enum { PQ_DATA_PAGE = 0, PQ_INDEX_PAGE = 1, PQ_DICTIONARY_PAGE = 2, PQ_DATA_PAGE_V2 = 3 };
/* ConvertedType values that matter here (the rest are carried as numbers). */
enum { PQ_CT_UTF8 = 0, PQ_CT_DECIMAL = 5, PQ_CT_UINT_8 = 11, PQ_CT_UINT_16 = 12, PQ_CT_UINT_32 = 13,
       PQ_CT_UINT_64 = 14, PQ_CT_INT_8 = 15, PQ_CT_INT_64 = 18 };
/* LogicalType union members that matter here (the field id in the union). */
enum { PQ_LT_NONE = 0, PQ_LT_STRING = 1, PQ_LT_DECIMAL = 5, PQ_LT_INTEGER = 10 };

typedef struct bl_pq_schema_el {
    char *name;                /* malloc'd, NUL-terminated */
    int32_t type;              /* -1: a group */
    int32_t repetition;        /* -1: absent (the root) */
    int32_t num_children;
    int32_t converted;         /* -1: absent */
    int32_t logical;           /* PQ_LT_* id, 0 absent */
    int32_t int_bits, int_signed; /* LogicalType INTEGER */
} bl_pq_schema_el;

typedef struct bl_pq_chunk_meta {
    int has_meta, has_file_path, has_dict_offset;
    int32_t type, codec;
    uint32_t encodings; /* bit e set: encoding e is listed (e < 32) */
    int64_t num_values, total_uncompressed, total_compressed;
    int64_t data_page_offset, dict_page_offset;
} bl_pq_chunk_meta;

typedef struct bl_pq_row_group {
    int64_t num_rows;
    uint32_t n_columns;
    bl_pq_chunk_meta *columns;
} bl_pq_row_group;

typedef struct bl_pq_file_meta {
    int64_t num_rows;
    uint32_t n_schema, n_row_groups;
    bl_pq_schema_el *schema;
    bl_pq_row_group *row_groups;
} bl_pq_file_meta;

int bl_pq_parse_file_meta(const uint8_t *p, size_t n, bl_pq_file_meta *m, bl_pq_why *why);
void bl_pq_file_meta_free(bl_pq_file_meta *m);

typedef struct bl_pq_page_header {
    int32_t type, uncompressed, compressed;
    int has_data, has_dict, has_v2;
    int32_t num_values, encoding, def_encoding, rep_encoding; /* v1 and dictionary */
    int32_t num_nulls, num_rows, def_len, rep_len, is_compressed; /* v2 (num_values, encoding shared) */
} bl_pq_page_header;

/* Parse a page header from p[0..n); *used = its length in bytes. */
int bl_pq_parse_page_header(const uint8_t *p, size_t n, bl_pq_page_header *h, size_t *used, bl_pq_why *why);

/* ---- Codecs (parquet_codec.c) ---- */
const char *bl_pq_codec_name(int32_t codec);
const char *bl_pq_encoding_name(int32_t encoding);
/* Largest uncompressed size a page of n compressed bytes may claim with this
 * codec before values justify more (0: codec unknown). */
uint64_t bl_pq_codec_ratio(int32_t codec);
/* Decoder state kept across pages (a zstd context); zeroed to start. */
typedef struct bl_pq_codecs {
    void *zstd;
} bl_pq_codecs;
void bl_pq_codecs_free(bl_pq_codecs *cx);
/* Decompress src[0..n) into exactly dn bytes of dst; anything else fails.
 * cx may be NULL (a fresh state per call). */
int bl_pq_decompress(int32_t codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, bl_pq_codecs *cx,
                     bl_pq_why *why);
/* Compress for the writer: *out malloc'd. codec PQ_UNCOMPRESSED copies. */
int bl_pq_compress(int32_t codec, const uint8_t *src, size_t n, uint8_t **out, size_t *on, bl_pq_why *why);

/* ---- Encodings (parquet_decode.c) ---- */
typedef struct bl_pq_str {
    const uint8_t *p;
    uint32_t n;
} bl_pq_str;

/* The RLE / bit-packed hybrid: exactly n values of width bw (0..32) from
 * p[0..len) into out; padding values of a last bit-packed group are ignored. */
int bl_pq_rle_decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n, bl_pq_why *why);
/* DELTA_BINARY_PACKED: exactly n values (the header must declare at least n)
 * into out; *used = bytes consumed (for the encodings that follow it). */
int bl_pq_delta_decode(const uint8_t *p, size_t len, int64_t *out, size_t n, size_t *used, bl_pq_why *why);
/* The count a DELTA_BINARY_PACKED header declares (without decoding). */
int bl_pq_delta_count(const uint8_t *p, size_t len, uint64_t *count, bl_pq_why *why);
/* PLAIN byte arrays: n strings pointing into p. */
int bl_pq_plain_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, bl_pq_why *why);
/* DELTA_LENGTH_BYTE_ARRAY: n strings pointing into p. */
int bl_pq_delta_length_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, bl_pq_why *why);
/* DELTA_BYTE_ARRAY: n strings built in *scratch (malloc'd, at most
 * max_bytes long, freed by the caller), pointing into it. */
int bl_pq_delta_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, uint64_t max_bytes,
                     uint8_t **scratch, bl_pq_why *why);
/* Fixed-width values of a physical type into int64 (BOOLEAN, INT32 sign-
 * extended, INT64) or double (FLOAT, DOUBLE): PLAIN and BYTE_STREAM_SPLIT. */
int bl_pq_plain_fixed(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n,
                   bl_pq_why *why);
int bl_pq_byte_stream_split(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n,
                         bl_pq_why *why);

/* ---- The reader (table_parquet.c: open, schema, row groups;
 *      parquet_chunk.c: one column chunk's pages) ---- */
typedef struct bl_pq_col {
    const char *name;     /* the schema element's name (owned by meta) */
    char shown[80];       /* the name as messages print it (bl_pq_printable) */
    int32_t phys;
    int optional, is_unsigned;
    uint32_t leaf;        /* index of its chunk in each row group */
    const char *refused;  /* why it cannot be read, or NULL */
    bl_col_type out;
} bl_pq_col;

typedef struct bl_pq_reader {
    char *path;
    const uint8_t *map;
    size_t size;
    size_t meta_at;       /* where the footer's metadata starts */
    bl_pq_file_meta meta;
    size_t n_cols;
    bl_pq_col *cols;
    uint32_t leaves;
    uint32_t next_rg;
    uint64_t *rg_first_row;
    /* Kept across pages: the decompressed page (grown to the largest page
     * read) and the codecs' state. */
    uint8_t *page;
    size_t page_cap;
    bl_pq_codecs codecs;
    bl_table_budget budget; /* decoded bytes, all chunks of this file together */
} bl_pq_reader;

/* Decode column col of row group g into out (zeroed here); out is left
 * empty on failure. */
bl_status bl_pq_read_chunk(bl_pq_reader *r, uint32_t g, const bl_pq_col *col, bl_column *out, bl_error *err);
static inline uint32_t bl_pq_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Width in bytes of a fixed physical type's PLAIN value (BOOLEAN: 1 bit; 0). */
size_t bl_pq_type_width(int32_t phys);
const char *bl_pq_type_name(int32_t phys);

#endif
