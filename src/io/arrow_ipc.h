/* Arrow IPC (Feather v2 file and stream) for the table backend: the schema
 * and message metadata (arrow_meta.c, over arrow_fb.h) and the decoding of
 * one column of one record batch from the message body (arrow_body.c).
 * The Arrow format's own names are used for its structures: Message, Schema,
 * Field, RecordBatch, FieldNode, Buffer, DictionaryBatch, BodyCompression. */
#ifndef BL_IO_ARROW_IPC_H
#define BL_IO_ARROW_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/table.h"
#include "io/arrow_fb.h"
#include "io/table_impl.h"

/* The Type union's tags we need to know (Schema.fbs). */
enum {
    AR_T_NULL = 1, AR_T_INT = 2, AR_T_FLOAT = 3, AR_T_BINARY = 4, AR_T_UTF8 = 5, AR_T_BOOL = 6,
    AR_T_DECIMAL = 7, AR_T_DATE = 8, AR_T_TIME = 9, AR_T_TIMESTAMP = 10, AR_T_INTERVAL = 11, AR_T_LIST = 12,
    AR_T_STRUCT = 13, AR_T_UNION = 14, AR_T_FIXED_BINARY = 15, AR_T_FIXED_LIST = 16, AR_T_MAP = 17,
    AR_T_DURATION = 18, AR_T_LARGE_BINARY = 19, AR_T_LARGE_UTF8 = 20, AR_T_LARGE_LIST = 21
};
/* MessageHeader union tags. */
enum { AR_MSG_SCHEMA = 1, AR_MSG_DICTIONARY = 2, AR_MSG_RECORD_BATCH = 3 };
enum { AR_CODEC_NONE = -1, AR_CODEC_LZ4_FRAME = 0, AR_CODEC_ZSTD = 1 };

/* Metadata larger than this is refused (real schemas and batch headers are
 * kilobytes; this keeps a hostile length from allocating much). */
#define AR_MAX_META ((uint32_t)64 << 20)

typedef struct ar_field {
    char *name;
    uint8_t type;           /* AR_T_* of the values (for a dictionary field: of the dictionary) */
    int bits, is_signed;    /* Int */
    int precision;          /* FloatingPoint: 0 half, 1 single, 2 double */
    int has_dict;
    int64_t dict_id;
    int idx_bits, idx_signed; /* the dictionary's index type */
    size_t node0, buf0;       /* this field's first FieldNode and Buffer in a RecordBatch */
    bl_col_type col;          /* what it reads as; 0 when it cannot be read */
    const char *why;          /* when col is 0: the type's name, for the message */
} ar_field;

typedef struct ar_schema {
    size_t n;
    ar_field *f;
    size_t n_nodes, n_buffers; /* FieldNodes and Buffers a RecordBatch of this schema has */
} ar_schema;

typedef struct ar_message {
    uint8_t kind;     /* AR_MSG_* */
    fb_table header;  /* the header table (Schema, RecordBatch or DictionaryBatch) */
    int64_t body_len;
} ar_message;

typedef struct ar_batch {
    int64_t length;
    const fb_buf *meta;
    size_t nodes_pos, n_nodes; /* FieldNode structs: length, null_count (16 bytes) */
    size_t bufs_pos, n_bufs;   /* Buffer structs: offset, length (16 bytes) */
    int codec;                 /* AR_CODEC_* */
} ar_batch;

/* Parsers: 0 on success, -1 with why filled (what and where in the metadata). */
int ar_parse_message(const fb_buf *meta, ar_message *m, char *why, size_t whylen);
int ar_parse_schema(const fb_table *schema, ar_schema *out, char *why, size_t whylen);
void ar_schema_free(ar_schema *s);
int ar_parse_batch(const fb_table *rb, ar_batch *out, char *why, size_t whylen);
/* DictionaryBatch: its id, delta flag and RecordBatch. */
int ar_parse_dictionary(const fb_table *db, int64_t *id, int *delta, ar_batch *out, char *why, size_t whylen);

/* Where a message body lies in the file. */
typedef struct ar_body {
    const uint8_t *file; /* the whole file in memory */
    uint64_t off, len;
    bl_table_budget *budget; /* the table's decoded-bytes budget: every output and inflated buffer takes from it */
} ar_body;

/* Decode top-level field f (FieldNode node, Buffers from buf) of batch b into
 * out, in f's column type; dict is the field's dictionary (its values) when
 * f->has_dict and as_dict is set (as_dict 0 decodes the values themselves, for
 * a DictionaryBatch). where names the place for messages ("file: column x,
 * batch 3"). */
bl_status ar_decode(const ar_body *body, const ar_batch *b, const ar_field *f, size_t node, size_t buf, int as_dict,
                    const bl_column *dict, const char *where, bl_column *out, bl_error *err);

#endif
