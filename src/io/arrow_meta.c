/* Arrow IPC metadata: Message, Schema/Field, RecordBatch, DictionaryBatch
 * (the Arrow format's Message.fbs and Schema.fbs), read through arrow_fb.h.
 * Field numbers below are the tables' field order in those files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/arrow_ipc.h"

#define FAIL(...) (snprintf(why, whylen, __VA_ARGS__), -1)

/* Nested types only need to be skipped; a hostile schema cannot recurse deeper than this. */
#define MAX_DEPTH 32

int ar_parse_message(const fb_buf *meta, ar_message *m, char *why, size_t whylen)
{
    fb_table t;
    int16_t version = 0;
    uint8_t kind = 0;
    int64_t body = 0;
    if (fb_root(meta, &t) != 1)
        return FAIL("message metadata is not a valid flatbuffer (root table out of bounds)");
    if (fb_i16(&t, 0, &version) < 0 || fb_u8(&t, 1, &kind) < 0 || fb_i64(&t, 3, &body) < 0)
        return FAIL("message fields out of bounds");
    /* MetadataVersion V4 (3) is the first with the current layout; V5 (4) is today's. */
    if (version < 3 || version > 4)
        return FAIL("metadata version %d is not supported (V4 or V5 expected)", version + 1);
    if (body < 0)
        return FAIL("negative body length %lld", (long long)body);
    int r = fb_table_at(&t, 2, &m->header);
    if (r < 0)
        return FAIL("message header out of bounds");
    if (r == 0)
        return FAIL("message without a header");
    m->kind = kind;
    m->body_len = body;
    return 0;
}

/* FieldNodes and Buffers a field (and its children) takes in a RecordBatch. */
static int count_field(const fb_table *f, int depth, size_t *nodes, size_t *bufs, char *why, size_t whylen)
{
    uint8_t type = 0;
    fb_table dict;
    if (depth > MAX_DEPTH)
        return FAIL("fields nested deeper than %d", MAX_DEPTH);
    if (fb_u8(f, 2, &type) < 0)
        return FAIL("field type out of bounds");
    int rd = fb_table_at(f, 4, &dict);
    if (rd < 0)
        return FAIL("field dictionary out of bounds");
    *nodes += 1;
    if (rd == 1) { /* stored as indices: validity + values, no children */
        *bufs += 2;
        return 0;
    }
    int children = 0;
    switch (type) {
    case AR_T_NULL: break;
    case AR_T_INT: case AR_T_FLOAT: case AR_T_BOOL: case AR_T_DECIMAL: case AR_T_DATE: case AR_T_TIME:
    case AR_T_TIMESTAMP: case AR_T_INTERVAL: case AR_T_FIXED_BINARY: case AR_T_DURATION:
        *bufs += 2;
        break;
    case AR_T_BINARY: case AR_T_UTF8: case AR_T_LARGE_BINARY: case AR_T_LARGE_UTF8:
        *bufs += 3;
        break;
    case AR_T_LIST: case AR_T_LARGE_LIST: case AR_T_MAP:
        *bufs += 2;
        children = 1;
        break;
    case AR_T_FIXED_LIST: case AR_T_STRUCT:
        *bufs += 1;
        children = 1;
        break;
    default:
        return FAIL("type %u (union, run-end encoded or view types) is not supported", type);
    }
    if (!children)
        return 0;
    size_t pos, n;
    int r = fb_vector(f, 5, 4, &pos, &n);
    if (r < 0)
        return FAIL("field children out of bounds");
    for (size_t i = 0; r == 1 && i < n; i++) {
        fb_table c;
        if (fb_vector_table(f->b, pos, i, &c) != 1)
            return FAIL("child field %zu out of bounds", i);
        if (count_field(&c, depth + 1, nodes, bufs, why, whylen) < 0)
            return -1;
    }
    return 0;
}

static const char *type_name(uint8_t t)
{
    static const char *const names[] = {"none", "null", "int", "floating point", "binary", "utf8", "bool", "decimal",
                                        "date", "time", "timestamp", "interval", "list", "struct", "union",
                                        "fixed-size binary", "fixed-size list", "map", "duration", "large binary",
                                        "large utf8", "large list"};
    return t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* An Int type table: bitWidth and is_signed. */
static int int_type(const fb_table *t, int *bits, int *is_signed)
{
    int32_t b = 0;
    uint8_t s = 0;
    if (fb_i32(t, 0, &b) < 0 || fb_u8(t, 1, &s) < 0)
        return -1;
    *bits = b;
    *is_signed = s != 0;
    return 0;
}

/* What a top-level field reads as (col), from its value type. */
static int classify(const fb_table *f, ar_field *out, char *why, size_t whylen)
{
    fb_table type, dict;
    int rt = fb_table_at(f, 3, &type);
    int rd = fb_table_at(f, 4, &dict);
    if (rt < 0 || rd < 0)
        return FAIL("field %s: type or dictionary out of bounds", out->name);
    out->why = type_name(out->type);
    if (rd == 1) {
        fb_table it;
        out->has_dict = 1;
        out->idx_bits = 32;
        out->idx_signed = 1;
        if (fb_i64(&dict, 0, &out->dict_id) < 0)
            return FAIL("field %s: dictionary id out of bounds", out->name);
        int ri = fb_table_at(&dict, 1, &it);
        if (ri < 0 || (ri == 1 && int_type(&it, &out->idx_bits, &out->idx_signed) < 0))
            return FAIL("field %s: dictionary index type out of bounds", out->name);
        if (out->idx_bits != 8 && out->idx_bits != 16 && out->idx_bits != 32 && out->idx_bits != 64)
            return FAIL("field %s: dictionary index width %d", out->name, out->idx_bits);
    }
    switch (out->type) {
    case AR_T_INT:
        if (rt != 1 || int_type(&type, &out->bits, &out->is_signed) < 0)
            return FAIL("field %s: Int type missing or out of bounds", out->name);
        if (out->bits != 8 && out->bits != 16 && out->bits != 32 && out->bits != 64)
            return FAIL("field %s: integer width %d is not 8, 16, 32 or 64", out->name, out->bits);
        out->col = BL_COL_INT64;
        break;
    case AR_T_FLOAT: {
        int16_t p = 0;
        if (rt != 1 || fb_i16(&type, 0, &p) < 0)
            return FAIL("field %s: FloatingPoint type missing or out of bounds", out->name);
        out->precision = p;
        if (p == 1 || p == 2)
            out->col = BL_COL_DOUBLE;
        else
            out->why = "half-precision float";
        break;
    }
    case AR_T_BOOL: out->col = BL_COL_BOOL; break;
    case AR_T_UTF8: case AR_T_LARGE_UTF8: out->col = BL_COL_STRING; break;
    default: break;
    }
    return 0;
}

int ar_parse_schema(const fb_table *schema, ar_schema *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    int16_t endian = 0;
    size_t pos, n;
    if (fb_i16(schema, 0, &endian) < 0)
        return FAIL("schema endianness out of bounds");
    if (endian != 0)
        return FAIL("big-endian data is not supported");
    int r = fb_vector(schema, 1, 4, &pos, &n);
    if (r < 0)
        return FAIL("schema fields out of bounds");
    if (r == 0)
        n = 0;
    out->f = calloc(n ? n : 1, sizeof *out->f);
    if (!out->f)
        return FAIL("out of memory for %zu fields", n);
    for (size_t i = 0; i < n; i++) {
        fb_table f;
        ar_field *a = &out->f[i];
        const uint8_t *name = NULL;
        size_t len = 0;
        if (fb_vector_table(schema->b, pos, i, &f) != 1 || fb_string(&f, 0, &name, &len) < 0 ||
            fb_u8(&f, 2, &a->type) < 0) {
            ar_schema_free(out);
            return FAIL("field %zu out of bounds", i);
        }
        a->name = malloc(len + 1);
        if (!a->name) {
            ar_schema_free(out);
            return FAIL("out of memory");
        }
        if (len)
            memcpy(a->name, name, len);
        a->name[len] = '\0';
        out->n = i + 1;
        for (size_t k = 0; k < len; k++)
            if (name[k] < 0x20 || name[k] == 0x7f)
                a->name[k] = '?'; /* names go into one-line messages */
        a->node0 = out->n_nodes;
        a->buf0 = out->n_buffers;
        if (count_field(&f, 0, &out->n_nodes, &out->n_buffers, why, whylen) < 0 || classify(&f, a, why, whylen) < 0) {
            ar_schema_free(out);
            return -1;
        }
    }
    return 0;
}

void ar_schema_free(ar_schema *s)
{
    for (size_t i = 0; s->f && i < s->n; i++)
        free(s->f[i].name);
    free(s->f);
    memset(s, 0, sizeof *s);
}

int ar_parse_batch(const fb_table *rb, ar_batch *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->meta = rb->b;
    out->codec = AR_CODEC_NONE;
    if (fb_i64(rb, 0, &out->length) < 0 || out->length < 0)
        return FAIL("record batch length missing, negative or out of bounds");
    int r1 = fb_vector(rb, 1, 16, &out->nodes_pos, &out->n_nodes);
    int r2 = fb_vector(rb, 2, 16, &out->bufs_pos, &out->n_bufs);
    if (r1 < 0 || r2 < 0)
        return FAIL("record batch nodes or buffers out of bounds");
    if (r1 == 0)
        out->n_nodes = 0;
    if (r2 == 0)
        out->n_bufs = 0;
    fb_table comp;
    int rc = fb_table_at(rb, 3, &comp);
    if (rc < 0)
        return FAIL("record batch compression out of bounds");
    if (rc == 1) {
        uint8_t codec = 0, method = 0;
        if (fb_u8(&comp, 0, &codec) < 0 || fb_u8(&comp, 1, &method) < 0)
            return FAIL("body compression fields out of bounds");
        if (codec > 1)
            return FAIL("compression codec %u is not LZ4_FRAME or ZSTD", codec);
        if (method != 0)
            return FAIL("body compression method %u is not BUFFER", method);
        out->codec = codec;
    }
    return 0;
}

int ar_parse_dictionary(const fb_table *db, int64_t *id, int *delta, ar_batch *out, char *why, size_t whylen)
{
    fb_table rb;
    uint8_t d = 0;
    *id = 0;
    if (fb_i64(db, 0, id) < 0 || fb_u8(db, 2, &d) < 0)
        return FAIL("dictionary batch fields out of bounds");
    int r = fb_table_at(db, 1, &rb);
    if (r != 1)
        return FAIL("dictionary batch %lld without a record batch", (long long)*id);
    *delta = d != 0;
    return ar_parse_batch(&rb, out, why, whylen);
}
