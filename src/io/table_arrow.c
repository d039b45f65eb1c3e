/* Arrow backend of bl_table: Feather v2 / Arrow IPC files ("ARROW1" magic,
 * footer with the schema and the blocks of every batch) and Arrow IPC
 * streams (a schema message, then dictionary and record batch messages up to
 * an end-of-stream marker or the end of the file). One record batch per
 * `next`; only the buffers of the selected columns are read (arrow_body.c).
 * Dictionaries are kept decoded, by id, as the batches that use them need
 * them. Feather v1 ("FEA1") is a different format and is refused by name. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "io/arrow_ipc.h"
#include "io/table_impl.h"

typedef struct ar_dict {
    int64_t id;
    bl_column values;
} ar_dict;

typedef struct ar_state {
    char *path;
    const uint8_t *data; /* the whole file, read once and hashed as read (core/file.h) */
    uint64_t size;
    int is_file;
    ar_schema schema;
    uint8_t *footer;
    fb_buf footer_buf;
    size_t blocks_pos, n_blocks, next_block; /* file: the footer's recordBatches */
    uint64_t pos;                            /* stream: the next message */
    int ended;
    ar_dict *dicts;
    size_t n_dicts;
    uint64_t batch_no; /* record batches read so far, for messages */
    bl_table_budget budget; /* decoded bytes, all batches and dictionaries together */
} ar_state;

/* One message read from the file: metadata (owned) and where its body lies. */
typedef struct ar_read {
    uint8_t *meta;
    fb_buf buf;
    ar_message msg;
    ar_body body;
    uint64_t next;
    int eos;
} ar_read;

static int ar_sniff(const unsigned char *head, size_t len)
{
    static const unsigned char cont[4] = {0xff, 0xff, 0xff, 0xff};
    return (len >= 6 && !memcmp(head, "ARROW1", 6)) || (len >= 4 && !memcmp(head, "FEA1", 4)) ||
           (len >= 8 && !memcmp(head, cont, 4));
}

static bl_status pread_all(ar_state *s, uint64_t off, size_t len, uint8_t *dst, bl_error *err)
{
    if (off > s->size || len > s->size - off)
        return bl_fail(err, BL_ERR_FORMAT, "%s: byte offset %llu: %zu bytes needed, the file has %llu", s->path,
                       (unsigned long long)off, len, (unsigned long long)s->size);
    memcpy(dst, s->data + off, len);
    return BL_OK;
}

static void read_free(ar_read *r)
{
    free(r->meta);
    memset(r, 0, sizeof *r);
}

/* The encapsulated message at off: [0xFFFFFFFF] int32 length, flatbuffer, body. */
static bl_status read_message(ar_state *s, uint64_t off, ar_read *r, bl_error *err)
{
    memset(r, 0, sizeof *r);
    uint8_t w[4];
    if (!s->is_file && off == s->size) {
        r->eos = 1; /* a stream may simply end */
        return BL_OK;
    }
    bl_status st = pread_all(s, off, 4, w, err);
    if (st != BL_OK)
        return st;
    uint32_t len = fb_rd32(w);
    uint64_t prefix = 4;
    if (len == 0xFFFFFFFFu) {
        if ((st = pread_all(s, off + 4, 4, w, err)) != BL_OK)
            return st;
        len = fb_rd32(w);
        prefix = 8;
    }
    if (len == 0) {
        r->eos = 1;
        return BL_OK;
    }
    if (len > AR_MAX_META || len > s->size - off - prefix)
        return bl_fail(err, BL_ERR_FORMAT, "%s: byte offset %llu: message metadata of %u bytes runs past the file (%llu bytes)",
                       s->path, (unsigned long long)off, len, (unsigned long long)s->size);
    if (!(r->meta = malloc(len)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", s->path);
    if ((st = pread_all(s, off + prefix, len, r->meta, err)) != BL_OK) {
        read_free(r);
        return st;
    }
    r->buf.p = r->meta;
    r->buf.len = len;
    char why[256];
    if (ar_parse_message(&r->buf, &r->msg, why, sizeof why) < 0) {
        read_free(r);
        return bl_fail(err, BL_ERR_FORMAT, "%s: message at byte offset %llu: %s", s->path, (unsigned long long)off, why);
    }
    r->body.file = s->data;
    r->body.budget = &s->budget;
    r->body.off = off + prefix + len;
    r->body.len = (uint64_t)r->msg.body_len;
    if (r->body.len > s->size - r->body.off) {
        read_free(r);
        return bl_fail(err, BL_ERR_FORMAT, "%s: message at byte offset %llu: body of %llu bytes runs past the file",
                       s->path, (unsigned long long)off, (unsigned long long)r->body.len);
    }
    r->next = r->body.off + r->body.len;
    return BL_OK;
}

static ar_dict *find_dict(ar_state *s, int64_t id)
{
    for (size_t i = 0; i < s->n_dicts; i++)
        if (s->dicts[i].id == id)
            return &s->dicts[i];
    return NULL;
}

/* Append b's values to a (a dictionary delta). */
static bl_status dict_append(ar_dict *d, bl_column *b, const char *path, bl_error *err)
{
    bl_column *a = &d->values;
    uint64_t n = a->n + b->n;
    if (a->valid || b->valid) {
        uint8_t *v = realloc(a->valid, (size_t)(n ? n : 1));
        if (!v)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        if (!a->valid)
            memset(v, 1, (size_t)a->n);
        if (b->valid)
            memcpy(v + a->n, b->valid, (size_t)b->n);
        else
            memset(v + a->n, 1, (size_t)b->n);
        a->valid = v;
    }
    if (a->type == BL_COL_STRING) {
        int64_t base = a->offsets[a->n];
        int64_t *o = realloc(a->offsets, (size_t)(n + 1) * sizeof *o);
        char *dd = o ? realloc(a->data, (size_t)(base + b->offsets[b->n]) + 1) : NULL;
        if (o)
            a->offsets = o;
        if (!dd)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        a->data = dd;
        memcpy(dd + base, b->data, (size_t)b->offsets[b->n]);
        for (uint64_t r = 1; r <= b->n; r++)
            o[a->n + r] = base + b->offsets[r];
    } else if (a->type == BL_COL_DOUBLE) {
        double *x = realloc(a->f64, (size_t)(n ? n : 1) * sizeof *x);
        if (!x)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        memcpy(x + a->n, b->f64, (size_t)b->n * sizeof *x);
        a->f64 = x;
    } else {
        int64_t *x = realloc(a->i64, (size_t)(n ? n : 1) * sizeof *x);
        if (!x)
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        memcpy(x + a->n, b->i64, (size_t)b->n * sizeof *x);
        a->i64 = x;
    }
    a->n = n;
    return BL_OK;
}

/* A DictionaryBatch: decode its values with the type of the field that uses its id. */
static bl_status apply_dictionary(ar_state *s, ar_read *r, uint64_t off, bl_error *err)
{
    int64_t id;
    int delta;
    ar_batch b;
    char why[256];
    if (ar_parse_dictionary(&r->msg.header, &id, &delta, &b, why, sizeof why) < 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: dictionary batch at byte offset %llu: %s", s->path,
                       (unsigned long long)off, why);
    const ar_field *f = NULL;
    for (size_t i = 0; i < s->schema.n && !f; i++)
        if (s->schema.f[i].has_dict && s->schema.f[i].dict_id == id)
            f = &s->schema.f[i];
    if (!f)
        return bl_fail(err, BL_ERR_FORMAT, "%s: dictionary batch at byte offset %llu: id %lld is no column's dictionary",
                       s->path, (unsigned long long)off, (long long)id);
    if (!f->col)
        return BL_OK; /* a dictionary of a type we cannot read: only an error if the column is asked for */
    char where[512];
    snprintf(where, sizeof where, "%s: column %s, dictionary %lld", s->path, f->name, (long long)id);
    bl_column v;
    bl_status st = ar_decode(&r->body, &b, f, 0, 0, 0, NULL, where, &v, err);
    if (st != BL_OK)
        return st;
    ar_dict *d = find_dict(s, id);
    if (d && delta) {
        st = dict_append(d, &v, s->path, err);
        bl_column_clear(&v);
        return st;
    }
    if (!d) {
        ar_dict *g = realloc(s->dicts, (s->n_dicts + 1) * sizeof *g);
        if (!g) {
            bl_column_clear(&v);
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", s->path);
        }
        s->dicts = g;
        d = &g[s->n_dicts++];
        d->id = id;
        memset(&d->values, 0, sizeof d->values);
    }
    bl_column_clear(&d->values); /* a non-delta dictionary replaces the one before */
    d->values = v;
    return BL_OK;
}

static void ar_close(void *state)
{
    ar_state *s = state;
    if (!s)
        return;
    free((void *)(uintptr_t)s->data);
    for (size_t i = 0; i < s->n_dicts; i++)
        bl_column_clear(&s->dicts[i].values);
    free(s->dicts);
    ar_schema_free(&s->schema);
    free(s->footer);
    free(s->path);
    free(s);
}

/* Block i of a footer vector (24 bytes: offset, metaDataLength, padding, bodyLength). */
static uint64_t block_offset(const ar_state *s, size_t pos, size_t i)
{
    return fb_rd64(s->footer_buf.p + pos + 24 * i);
}

static bl_status open_file(ar_state *s, bl_error *err)
{
    uint8_t tail[10];
    bl_status st;
    if (s->size < 18)
        return bl_fail(err, BL_ERR_FORMAT, "%s: %llu bytes is too short for an Arrow file", s->path,
                       (unsigned long long)s->size);
    if ((st = pread_all(s, s->size - 10, 10, tail, err)) != BL_OK)
        return st;
    if (memcmp(tail + 4, "ARROW1", 6))
        return bl_fail(err, BL_ERR_FORMAT, "%s: no ARROW1 magic at the end: a truncated Arrow file?", s->path);
    uint32_t flen = fb_rd32(tail);
    if (flen == 0 || flen > AR_MAX_META || flen > s->size - 18)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer length %u does not fit the file (%llu bytes)", s->path, flen,
                       (unsigned long long)s->size);
    if (!(s->footer = malloc(flen)))
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", s->path);
    uint64_t foff = s->size - 10 - flen;
    if ((st = pread_all(s, foff, flen, s->footer, err)) != BL_OK)
        return st;
    s->footer_buf.p = s->footer;
    s->footer_buf.len = flen;
    fb_table root, schema;
    size_t dpos = 0, nd = 0;
    char why[256];
    int r1, r2, r3;
    if (fb_root(&s->footer_buf, &root) != 1 || (r1 = fb_table_at(&root, 1, &schema)) < 0 ||
        (r2 = fb_vector(&root, 2, 24, &dpos, &nd)) < 0 || (r3 = fb_vector(&root, 3, 24, &s->blocks_pos, &s->n_blocks)) < 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer at byte offset %llu is not a valid flatbuffer", s->path,
                       (unsigned long long)foff);
    if (r1 == 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer without a schema", s->path);
    if (r2 == 0)
        nd = 0;
    if (r3 == 0)
        s->n_blocks = 0;
    if (ar_parse_schema(&schema, &s->schema, why, sizeof why) < 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: footer schema: %s", s->path, why);
    for (size_t i = 0; i < nd; i++) {
        ar_read r;
        uint64_t off = block_offset(s, dpos, i);
        if ((st = read_message(s, off, &r, err)) != BL_OK)
            return st;
        if (r.eos || r.msg.kind != AR_MSG_DICTIONARY) {
            read_free(&r);
            return bl_fail(err, BL_ERR_FORMAT, "%s: footer dictionary block %zu (byte offset %llu) is not a dictionary batch",
                           s->path, i, (unsigned long long)off);
        }
        st = apply_dictionary(s, &r, off, err);
        read_free(&r);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

static bl_status open_stream(ar_state *s, bl_error *err)
{
    ar_read r;
    bl_status st = read_message(s, 0, &r, err);
    if (st != BL_OK)
        return st;
    char why[256];
    if (r.eos || r.msg.kind != AR_MSG_SCHEMA) {
        read_free(&r);
        return bl_fail(err, BL_ERR_FORMAT, "%s: byte offset 0: an Arrow stream must begin with a schema message", s->path);
    }
    if (ar_parse_schema(&r.msg.header, &s->schema, why, sizeof why) < 0) {
        read_free(&r);
        return bl_fail(err, BL_ERR_FORMAT, "%s: schema message: %s", s->path, why);
    }
    s->pos = r.next;
    read_free(&r);
    return BL_OK;
}

static bl_status ar_open(const char *path, void **state, bl_table_schema *schema, bl_error *err)
{
    ar_state *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    }
    uint8_t *data = NULL;
    size_t size = 0;
    bl_status rst = bl_read_input(path, UINT64_MAX, &data, &size, NULL, err);
    if (rst != BL_OK) {
        ar_close(s);
        return rst;
    }
    s->data = data;
    s->size = size;
    bl_table_budget_init(&s->budget, s->size);
    uint8_t head[8] = {0};
    size_t hn = s->size < 8 ? (size_t)s->size : 8;
    bl_status st = pread_all(s, 0, hn, head, err);
    if (st == BL_OK && hn >= 4 && !memcmp(head, "FEA1", 4))
        st = bl_fail(err, BL_ERR_UNSUPPORTED,
                     "%s: this is a Feather v1 file (FEA1), an older format that is not supported: rewrite it as "
                     "Feather v2 (pyarrow.feather.write_feather(table, path, version=2))",
                     path);
    if (st == BL_OK) {
        s->is_file = hn >= 6 && !memcmp(head, "ARROW1", 6);
        st = s->is_file ? open_file(s, err) : open_stream(s, err);
    }
    uint64_t rows = s->is_file ? 0 : UINT64_MAX;
    for (size_t i = 0; st == BL_OK && s->is_file && i < s->n_blocks; i++) {
        ar_read r;
        uint64_t off = block_offset(s, s->blocks_pos, i);
        ar_batch b;
        char why[256];
        if ((st = read_message(s, off, &r, err)) != BL_OK)
            break;
        if (r.eos || r.msg.kind != AR_MSG_RECORD_BATCH)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: footer record batch block %zu (byte offset %llu) is not a record batch",
                         path, i, (unsigned long long)off);
        else if (ar_parse_batch(&r.msg.header, &b, why, sizeof why) < 0)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: batch %zu at byte offset %llu: %s", path, i + 1,
                         (unsigned long long)off, why);
        else
            rows += (uint64_t)b.length;
        read_free(&r);
    }
    if (st == BL_OK) {
        schema->n_columns = s->schema.n;
        schema->names = calloc(s->schema.n ? s->schema.n : 1, sizeof *schema->names);
        schema->types = calloc(s->schema.n ? s->schema.n : 1, sizeof *schema->types);
        schema->n_rows = rows;
        if (!schema->names || !schema->types)
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        for (size_t i = 0; st == BL_OK && i < s->schema.n; i++) {
            schema->types[i] = s->schema.f[i].col;
            if (!(schema->names[i] = strdup(s->schema.f[i].name)))
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        }
    }
    if (st != BL_OK) {
        ar_close(s);
        return st;
    }
    *state = s;
    return BL_OK;
}

/* Decode the selected columns of one record batch message. */
static bl_status read_batch(ar_state *s, ar_read *r, uint64_t off, const size_t *cols, size_t n, bl_column *out,
                            uint64_t *rows, bl_error *err)
{
    ar_batch b;
    char why[256];
    s->batch_no++;
    if (ar_parse_batch(&r->msg.header, &b, why, sizeof why) < 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: batch %llu at byte offset %llu: %s", s->path,
                       (unsigned long long)s->batch_no, (unsigned long long)off, why);
    if (b.n_nodes < s->schema.n_nodes || b.n_bufs < s->schema.n_buffers)
        return bl_fail(err, BL_ERR_FORMAT, "%s: batch %llu at byte offset %llu: %zu field nodes and %zu buffers, the schema needs %zu and %zu",
                       s->path, (unsigned long long)s->batch_no, (unsigned long long)off, b.n_nodes, b.n_bufs,
                       s->schema.n_nodes, s->schema.n_buffers);
    if (b.length == 0)
        return BL_OK; /* nothing to decode (writers may even leave an empty batch's dictionaries out) */
    for (size_t i = 0; i < n; i++) {
        const ar_field *f = &s->schema.f[cols[i]];
        char where[512];
        snprintf(where, sizeof where, "%s: column %s, batch %llu", s->path, f->name, (unsigned long long)s->batch_no);
        const ar_dict *d = NULL;
        if (f->has_dict && f->col && !(d = find_dict(s, f->dict_id)))
            return bl_fail(err, BL_ERR_FORMAT, "%s: dictionary %lld was never given", where, (long long)f->dict_id);
        bl_status st = ar_decode(&r->body, &b, f, f->node0, f->buf0, 1, d ? &d->values : NULL, where, &out[i], err);
        if (st != BL_OK)
            return st;
    }
    *rows = (uint64_t)b.length;
    return BL_OK;
}

static bl_status ar_next(void *state, const size_t *cols, size_t n, bl_column *out, uint64_t *rows, bl_error *err)
{
    ar_state *s = state;
    *rows = 0;
    while (!s->ended) {
        ar_read r;
        uint64_t off;
        bl_status st;
        if (s->is_file) {
            if (s->next_block >= s->n_blocks) {
                s->ended = 1;
                break;
            }
            off = block_offset(s, s->blocks_pos, s->next_block++);
        } else {
            off = s->pos;
        }
        if ((st = read_message(s, off, &r, err)) != BL_OK)
            return st;
        if (r.eos) {
            s->ended = 1;
            break;
        }
        s->pos = r.next;
        if (r.msg.kind == AR_MSG_DICTIONARY && !s->is_file)
            st = apply_dictionary(s, &r, off, err);
        else if (r.msg.kind == AR_MSG_RECORD_BATCH)
            st = read_batch(s, &r, off, cols, n, out, rows, err);
        else
            st = bl_fail(err, BL_ERR_FORMAT, "%s: byte offset %llu: unexpected message type %u", s->path,
                         (unsigned long long)off, r.msg.kind);
        read_free(&r);
        if (st != BL_OK)
            return st;
        if (*rows)
            return BL_OK;
        for (size_t i = 0; i < n; i++) /* an empty batch: keep reading */
            bl_column_clear(&out[i]);
    }
    return BL_OK;
}

static void ar_set_ceiling(void *state, uint64_t bytes) { ((ar_state *)state)->budget.ceiling = bytes; }

const bl_table_backend bl_table_arrow = {"arrow", BL_TABLE_ARROW, ar_sniff, ar_open, ar_next, ar_close, ar_set_ceiling};
