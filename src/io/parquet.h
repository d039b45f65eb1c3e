/* Parquet internals shared by the reader (table_parquet.c), its layers
 * (parquet_thrift.c: the Thrift compact protocol; parquet_meta.c: footer and
 * page headers; parquet_codec.c: decompression; parquet_decode.c: encodings)
 * and the writer (parquet_write.c). Not installed; the unit tests and the
 * fuzz harnesses include it to reach the layers directly.
 *
 * The layers report failures as a short reason in a caller-provided buffer
 * (pq_why); only the reader knows the file, column, row group and page, and
 * it prefixes every reason with them, so each message names all four. */
#ifndef BL_IO_PARQUET_H
#define BL_IO_PARQUET_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/table.h"

/* How far a file may expand into memory: rows, and decoded string bytes of a
 * column in one row group, at most PQ_EXPANSION per byte of the file. Legit
 * files stay far below (a run-length-encoded constant column reaches about
 * 10^4); a file claiming more is refused before anything is allocated. The
 * fuzz build lowers it so that no input can allocate beyond its limits. */
#ifndef PQ_EXPANSION
#define PQ_EXPANSION 65536u
#endif

typedef struct pq_why {
    char text[256];
} pq_why;

/* Record a reason; always returns -1 so that layers can `return pq_fail(...)`. */
int pq_fail(pq_why *why, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A name from the file made fit for a one-line message: control bytes
 * become '?', and long names are cut (with "..."). Returns buf. */
const char *pq_printable(const char *s, char *buf, size_t cap);

/* ---- Thrift compact protocol (parquet_thrift.c) ---- */
enum {
    PQ_T_STOP = 0, PQ_T_TRUE = 1, PQ_T_FALSE = 2, PQ_T_BYTE = 3, PQ_T_I16 = 4, PQ_T_I32 = 5,
    PQ_T_I64 = 6, PQ_T_DOUBLE = 7, PQ_T_BINARY = 8, PQ_T_LIST = 9, PQ_T_SET = 10, PQ_T_MAP = 11,
    PQ_T_STRUCT = 12
};
#define PQ_T_MAX_DEPTH 32

typedef struct pq_thrift {
    const uint8_t *base, *p, *end; /* base: for byte offsets in messages */
    int depth;
    pq_why *why;
} pq_thrift;

void pq_t_init(pq_thrift *t, const uint8_t *p, size_t n, pq_why *why);
size_t pq_t_offset(const pq_thrift *t);
/* Inside a struct: the next field's id and type; type PQ_T_STOP at the end.
 * *last holds the previous field id (0 at the struct's start). */
int pq_t_field(pq_thrift *t, int16_t *last, int16_t *id, int *type);
/* Read a value of the field type found (checked against the expected kind). */
int pq_t_i32(pq_thrift *t, int type, int32_t *v);
int pq_t_i64(pq_thrift *t, int type, int64_t *v);
int pq_t_bool(pq_thrift *t, int type, int *v); /* field form: the value is in the type */
int pq_t_binary(pq_thrift *t, int type, const uint8_t **p, uint32_t *n);
/* A list header: its element type and size (size bounded by the bytes left). */
int pq_t_list(pq_thrift *t, int type, int *elem, uint32_t *n);
int pq_t_struct_begin(pq_thrift *t, int type);
void pq_t_struct_end(pq_thrift *t);
/* Skip a value of the given type (nesting bounded by PQ_T_MAX_DEPTH). */
int pq_t_skip(pq_thrift *t, int type);
/* List elements: i32/i64/binary without a field header. */
int pq_t_elem_i32(pq_thrift *t, int elem, int32_t *v);

/* Writing (parquet_write.c): a growable buffer of compact-protocol bytes. */
typedef struct pq_tw {
    uint8_t *buf;
    size_t len, cap;
    int16_t last[PQ_T_MAX_DEPTH];
    int depth;
    int failed; /* an allocation failed: everything after is dropped */
} pq_tw;

void pq_tw_field(pq_tw *w, int16_t id, int type);
void pq_tw_i32(pq_tw *w, int16_t id, int32_t v);
void pq_tw_i64(pq_tw *w, int16_t id, int64_t v);
void pq_tw_binary(pq_tw *w, int16_t id, const void *p, size_t n);
void pq_tw_string(pq_tw *w, int16_t id, const char *s);
void pq_tw_list(pq_tw *w, int16_t id, int elem, uint32_t n);
void pq_tw_struct_begin(pq_tw *w, int16_t id); /* id 0: a list element */
void pq_tw_struct_end(pq_tw *w);
void pq_tw_varint(pq_tw *w, uint64_t v);
void pq_tw_elem_i32(pq_tw *w, int32_t v);
void pq_tw_elem_binary(pq_tw *w, const void *p, size_t n);
void pq_tw_free(pq_tw *w);

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

typedef struct pq_schema_el {
    char *name;                /* malloc'd, NUL-terminated */
    int32_t type;              /* -1: a group */
    int32_t repetition;        /* -1: absent (the root) */
    int32_t num_children;
    int32_t converted;         /* -1: absent */
    int32_t logical;           /* PQ_LT_* id, 0 absent */
    int32_t int_bits, int_signed; /* LogicalType INTEGER */
} pq_schema_el;

typedef struct pq_chunk_meta {
    int has_meta, has_file_path, has_dict_offset;
    int32_t type, codec;
    uint32_t encodings; /* bit e set: encoding e is listed (e < 32) */
    int64_t num_values, total_uncompressed, total_compressed;
    int64_t data_page_offset, dict_page_offset;
} pq_chunk_meta;

typedef struct pq_row_group {
    int64_t num_rows;
    uint32_t n_columns;
    pq_chunk_meta *columns;
} pq_row_group;

typedef struct pq_file_meta {
    int64_t num_rows;
    uint32_t n_schema, n_row_groups;
    pq_schema_el *schema;
    pq_row_group *row_groups;
} pq_file_meta;

int pq_parse_file_meta(const uint8_t *p, size_t n, pq_file_meta *m, pq_why *why);
void pq_file_meta_free(pq_file_meta *m);

typedef struct pq_page_header {
    int32_t type, uncompressed, compressed;
    int has_data, has_dict, has_v2;
    int32_t num_values, encoding, def_encoding, rep_encoding; /* v1 and dictionary */
    int32_t num_nulls, num_rows, def_len, rep_len, is_compressed; /* v2 (num_values, encoding shared) */
} pq_page_header;

/* Parse a page header from p[0..n); *used = its length in bytes. */
int pq_parse_page_header(const uint8_t *p, size_t n, pq_page_header *h, size_t *used, pq_why *why);

/* ---- Codecs (parquet_codec.c) ---- */
const char *pq_codec_name(int32_t codec);
const char *pq_encoding_name(int32_t encoding);
/* Largest uncompressed size a page of n compressed bytes may claim with this
 * codec before values justify more (0: codec unknown). */
uint64_t pq_codec_ratio(int32_t codec);
/* Decompress src[0..n) into exactly dn bytes of dst; anything else fails. */
int pq_decompress(int32_t codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, pq_why *why);
/* Compress for the writer: *out malloc'd. codec PQ_UNCOMPRESSED copies. */
int pq_compress(int32_t codec, const uint8_t *src, size_t n, uint8_t **out, size_t *on, pq_why *why);

/* ---- Encodings (parquet_decode.c) ---- */
typedef struct pq_str {
    const uint8_t *p;
    uint32_t n;
} pq_str;

/* The RLE / bit-packed hybrid: exactly n values of width bw (0..32) from
 * p[0..len) into out; padding values of a last bit-packed group are ignored. */
int pq_rle_decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n, pq_why *why);
/* DELTA_BINARY_PACKED: exactly n values (the header must declare at least n)
 * into out; *used = bytes consumed (for the encodings that follow it). */
int pq_delta_decode(const uint8_t *p, size_t len, int64_t *out, size_t n, size_t *used, pq_why *why);
/* The count a DELTA_BINARY_PACKED header declares (without decoding). */
int pq_delta_count(const uint8_t *p, size_t len, uint64_t *count, pq_why *why);
/* PLAIN byte arrays: n strings pointing into p. */
int pq_plain_strings(const uint8_t *p, size_t len, pq_str *out, size_t n, pq_why *why);
/* DELTA_LENGTH_BYTE_ARRAY: n strings pointing into p. */
int pq_delta_length_strings(const uint8_t *p, size_t len, pq_str *out, size_t n, pq_why *why);
/* DELTA_BYTE_ARRAY: n strings built in *scratch (malloc'd, at most
 * max_bytes long, freed by the caller), pointing into it. */
int pq_delta_strings(const uint8_t *p, size_t len, pq_str *out, size_t n, uint64_t max_bytes,
                     uint8_t **scratch, pq_why *why);
/* Fixed-width values of a physical type into int64 (BOOLEAN, INT32 sign-
 * extended, INT64) or double (FLOAT, DOUBLE): PLAIN and BYTE_STREAM_SPLIT. */
int pq_plain_fixed(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n,
                   pq_why *why);
int pq_byte_stream_split(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n,
                         pq_why *why);

/* Width in bytes of a fixed physical type's PLAIN value (BOOLEAN: 1 bit; 0). */
size_t pq_type_width(int32_t phys);
const char *pq_type_name(int32_t phys);

#endif
