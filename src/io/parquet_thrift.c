/* The Thrift compact protocol, as much of it as Parquet metadata uses: field
 * headers with id deltas, zigzag varints, binary, lists, nested structs.
 * Reading never trusts a size: a list or binary can be no longer than the
 * bytes left, nesting is bounded, and every value's type is checked against
 * the kind its reader expects (a type mismatch is a message, not a guess). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/parquet.h"

int bl_pq_fail(bl_pq_why *why, const char *fmt, ...)
{
    if (why) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why->text, sizeof why->text, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *bl_pq_printable(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s), keep = n;
    if (keep > cap - 1)
        keep = cap - 4; /* room for "..." and the NUL (cap is at least 8) */
    for (size_t i = 0; i < keep; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (keep < n) {
        memcpy(buf + keep, "...", 3);
        keep += 3;
    }
    buf[keep] = '\0';
    return buf;
}

static const char *type_name(int type)
{
    static const char *names[] = {"stop", "bool", "bool", "byte", "i16", "i32", "i64",
                                  "double", "binary", "list", "set", "map", "struct"};
    return type >= 0 && type <= 12 ? names[type] : "unknown type";
}

void bl_pq_t_init(bl_pq_thrift *t, const uint8_t *p, size_t n, bl_pq_why *why)
{
    t->base = t->p = p;
    t->end = p + n;
    t->depth = 0;
    t->why = why;
}

size_t bl_pq_t_offset(const bl_pq_thrift *t) { return (size_t)(t->p - t->base); }

static int t_varint(bl_pq_thrift *t, uint64_t *v)
{
    /* *v is defined on every path, failure included (0), so no caller reads
     * an indeterminate value whatever the optimiser makes of the -1. */
    uint64_t x = 0;
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (t->p >= t->end)
            return bl_pq_fail(t->why, "thrift: varint runs past the end at byte %zu", bl_pq_t_offset(t));
        uint8_t b = *t->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return bl_pq_fail(t->why, "thrift: varint longer than 10 bytes at byte %zu", bl_pq_t_offset(t));
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

int bl_pq_t_field(bl_pq_thrift *t, int16_t *last, int16_t *id, int *type)
{
    if (t->p >= t->end)
        return bl_pq_fail(t->why, "thrift: struct runs past the end at byte %zu", bl_pq_t_offset(t));
    uint8_t b = *t->p++;
    *type = b & 0x0f;
    if (*type == PQ_T_STOP) {
        *id = 0;
        return 0;
    }
    if (*type > PQ_T_STRUCT)
        return bl_pq_fail(t->why, "thrift: unknown field type %d at byte %zu", *type, bl_pq_t_offset(t) - 1);
    int delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last + delta);
    } else {
        uint64_t v;
        if (t_varint(t, &v))
            return -1;
        int64_t s = unzigzag(v);
        if (s < -32768 || s > 32767)
            return bl_pq_fail(t->why, "thrift: field id %lld out of range at byte %zu", (long long)s,
                           bl_pq_t_offset(t));
        *id = (int16_t)s;
    }
    *last = *id;
    return 0;
}

static int expect(bl_pq_thrift *t, int type, int want, const char *what)
{
    if (type == want)
        return 0;
    return bl_pq_fail(t->why, "thrift: %s expected, found %s at byte %zu", what, type_name(type), bl_pq_t_offset(t));
}

int bl_pq_t_i32(bl_pq_thrift *t, int type, int32_t *v)
{
    /* Writers may narrow: accept byte and i16 where an i32 is read. */
    if (type != PQ_T_I32 && type != PQ_T_I16 && type != PQ_T_BYTE)
        return expect(t, type, PQ_T_I32, "i32");
    if (type == PQ_T_BYTE) {
        if (t->p >= t->end)
            return bl_pq_fail(t->why, "thrift: byte runs past the end at byte %zu", bl_pq_t_offset(t));
        *v = (int8_t)*t->p++;
        return 0;
    }
    uint64_t u;
    if (t_varint(t, &u))
        return -1;
    int64_t s = unzigzag(u);
    if (s < INT32_MIN || s > INT32_MAX)
        return bl_pq_fail(t->why, "thrift: i32 value %lld out of range at byte %zu", (long long)s, bl_pq_t_offset(t));
    *v = (int32_t)s;
    return 0;
}

int bl_pq_t_i64(bl_pq_thrift *t, int type, int64_t *v)
{
    if (type != PQ_T_I64 && type != PQ_T_I32 && type != PQ_T_I16)
        return expect(t, type, PQ_T_I64, "i64");
    uint64_t u;
    if (t_varint(t, &u))
        return -1;
    *v = unzigzag(u);
    return 0;
}

int bl_pq_t_bool(bl_pq_thrift *t, int type, int *v)
{
    if (type != PQ_T_TRUE && type != PQ_T_FALSE)
        return expect(t, type, PQ_T_TRUE, "bool");
    *v = type == PQ_T_TRUE;
    return 0;
}

int bl_pq_t_binary(bl_pq_thrift *t, int type, const uint8_t **p, uint32_t *n)
{
    if (expect(t, type, PQ_T_BINARY, "binary"))
        return -1;
    uint64_t len;
    if (t_varint(t, &len))
        return -1;
    if (len > (uint64_t)(t->end - t->p))
        return bl_pq_fail(t->why, "thrift: binary of %llu bytes runs past the end at byte %zu",
                       (unsigned long long)len, bl_pq_t_offset(t));
    *p = t->p;
    *n = (uint32_t)len;
    t->p += len;
    return 0;
}

int bl_pq_t_list(bl_pq_thrift *t, int type, int *elem, uint32_t *n)
{
    if (type != PQ_T_SET && expect(t, type, PQ_T_LIST, "list"))
        return -1;
    if (t->p >= t->end)
        return bl_pq_fail(t->why, "thrift: list header runs past the end at byte %zu", bl_pq_t_offset(t));
    uint8_t b = *t->p++;
    uint64_t size = b >> 4;
    *elem = b & 0x0f;
    if (size == 15 && t_varint(t, &size))
        return -1;
    /* Every element takes at least one byte (bool elements one each, structs
     * their stop byte), so a size beyond the bytes left is a lie. */
    if (size > (uint64_t)(t->end - t->p))
        return bl_pq_fail(t->why, "thrift: list of %llu elements in %zu bytes at byte %zu",
                       (unsigned long long)size, (size_t)(t->end - t->p), bl_pq_t_offset(t));
    if (*elem == PQ_T_STOP || *elem > PQ_T_STRUCT)
        return bl_pq_fail(t->why, "thrift: list of unknown element type %d at byte %zu", *elem, bl_pq_t_offset(t));
    *n = (uint32_t)size;
    return 0;
}

int bl_pq_t_struct_begin(bl_pq_thrift *t, int type)
{
    if (expect(t, type, PQ_T_STRUCT, "struct"))
        return -1;
    if (++t->depth > PQ_T_MAX_DEPTH)
        return bl_pq_fail(t->why, "thrift: structs nested deeper than %d at byte %zu", PQ_T_MAX_DEPTH,
                       bl_pq_t_offset(t));
    return 0;
}

void bl_pq_t_struct_end(bl_pq_thrift *t) { t->depth--; }

int bl_pq_t_elem_i32(bl_pq_thrift *t, int elem, int32_t *v) { return bl_pq_t_i32(t, elem, v); }

int bl_pq_t_skip(bl_pq_thrift *t, int type)
{
    uint64_t u;
    switch (type) {
    case PQ_T_TRUE:
    case PQ_T_FALSE:
        return 0;
    case PQ_T_BYTE:
        if (t->p >= t->end)
            return bl_pq_fail(t->why, "thrift: byte runs past the end at byte %zu", bl_pq_t_offset(t));
        t->p++;
        return 0;
    case PQ_T_I16:
    case PQ_T_I32:
    case PQ_T_I64:
        return t_varint(t, &u);
    case PQ_T_DOUBLE:
        if (t->end - t->p < 8)
            return bl_pq_fail(t->why, "thrift: double runs past the end at byte %zu", bl_pq_t_offset(t));
        t->p += 8;
        return 0;
    case PQ_T_BINARY: {
        const uint8_t *p;
        uint32_t n;
        return bl_pq_t_binary(t, type, &p, &n);
    }
    case PQ_T_LIST:
    case PQ_T_SET: {
        int elem;
        uint32_t n;
        if (bl_pq_t_list(t, type, &elem, &n))
            return -1;
        if (++t->depth > PQ_T_MAX_DEPTH)
            return bl_pq_fail(t->why, "thrift: nesting deeper than %d at byte %zu", PQ_T_MAX_DEPTH, bl_pq_t_offset(t));
        for (uint32_t i = 0; i < n; i++) {
            /* A bool element is one byte (1 or 2), not a type nibble. */
            int r = (elem == PQ_T_TRUE || elem == PQ_T_FALSE) ? bl_pq_t_skip(t, PQ_T_BYTE) : bl_pq_t_skip(t, elem);
            if (r)
                return -1;
        }
        t->depth--;
        return 0;
    }
    case PQ_T_MAP: {
        if (t_varint(t, &u))
            return -1;
        if (u == 0)
            return 0;
        if (u > (uint64_t)(t->end - t->p))
            return bl_pq_fail(t->why, "thrift: map of %llu entries runs past the end at byte %zu",
                           (unsigned long long)u, bl_pq_t_offset(t));
        if (t->p >= t->end)
            return bl_pq_fail(t->why, "thrift: map header runs past the end at byte %zu", bl_pq_t_offset(t));
        uint8_t kv = *t->p++;
        int kt = kv >> 4, vt = kv & 0x0f;
        if (kt == PQ_T_STOP || kt > PQ_T_STRUCT || vt == PQ_T_STOP || vt > PQ_T_STRUCT)
            return bl_pq_fail(t->why, "thrift: map of unknown types at byte %zu", bl_pq_t_offset(t));
        if (++t->depth > PQ_T_MAX_DEPTH)
            return bl_pq_fail(t->why, "thrift: nesting deeper than %d at byte %zu", PQ_T_MAX_DEPTH, bl_pq_t_offset(t));
        for (uint64_t i = 0; i < u; i++) {
            int a = (kt == PQ_T_TRUE || kt == PQ_T_FALSE) ? PQ_T_BYTE : kt;
            int b = (vt == PQ_T_TRUE || vt == PQ_T_FALSE) ? PQ_T_BYTE : vt;
            if (bl_pq_t_skip(t, a) || bl_pq_t_skip(t, b))
                return -1;
        }
        t->depth--;
        return 0;
    }
    case PQ_T_STRUCT: {
        if (bl_pq_t_struct_begin(t, type))
            return -1;
        int16_t last = 0, id;
        int ft;
        for (;;) {
            if (bl_pq_t_field(t, &last, &id, &ft))
                return -1;
            if (ft == PQ_T_STOP)
                break;
            if (bl_pq_t_skip(t, ft))
                return -1;
        }
        bl_pq_t_struct_end(t);
        return 0;
    }
    default:
        return bl_pq_fail(t->why, "thrift: cannot skip a value of type %d at byte %zu", type, bl_pq_t_offset(t));
    }
}

/* ---- writing ---- */

static void tw_bytes(bl_pq_tw *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *b = realloc(w->buf, cap);
        if (!b) {
            w->failed = 1;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

void bl_pq_tw_varint(bl_pq_tw *w, uint64_t v)
{
    uint8_t b[10];
    size_t n = 0;
    do {
        b[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            b[n] |= 0x80;
        n++;
    } while (v);
    tw_bytes(w, b, n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

void bl_pq_tw_field(bl_pq_tw *w, int16_t id, int type)
{
    int16_t *last = &w->last[w->depth];
    int delta = id - *last;
    if (delta > 0 && delta <= 15) {
        uint8_t b = (uint8_t)(delta << 4 | type);
        tw_bytes(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)type;
        tw_bytes(w, &b, 1);
        bl_pq_tw_varint(w, zigzag(id));
    }
    *last = id;
}

void bl_pq_tw_i32(bl_pq_tw *w, int16_t id, int32_t v)
{
    bl_pq_tw_field(w, id, PQ_T_I32);
    bl_pq_tw_varint(w, zigzag(v));
}

void bl_pq_tw_i64(bl_pq_tw *w, int16_t id, int64_t v)
{
    bl_pq_tw_field(w, id, PQ_T_I64);
    bl_pq_tw_varint(w, zigzag(v));
}

void bl_pq_tw_binary(bl_pq_tw *w, int16_t id, const void *p, size_t n)
{
    bl_pq_tw_field(w, id, PQ_T_BINARY);
    bl_pq_tw_elem_binary(w, p, n);
}

void bl_pq_tw_string(bl_pq_tw *w, int16_t id, const char *s) { bl_pq_tw_binary(w, id, s, strlen(s)); }

void bl_pq_tw_list(bl_pq_tw *w, int16_t id, int elem, uint32_t n)
{
    bl_pq_tw_field(w, id, PQ_T_LIST);
    if (n < 15) {
        uint8_t b = (uint8_t)(n << 4 | (uint32_t)elem);
        tw_bytes(w, &b, 1);
    } else {
        uint8_t b = (uint8_t)(0xf0 | elem);
        tw_bytes(w, &b, 1);
        bl_pq_tw_varint(w, n);
    }
}

void bl_pq_tw_struct_begin(bl_pq_tw *w, int16_t id)
{
    if (id)
        bl_pq_tw_field(w, id, PQ_T_STRUCT);
    if (w->depth + 1 >= PQ_T_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    w->last[++w->depth] = 0;
}

void bl_pq_tw_struct_end(bl_pq_tw *w)
{
    uint8_t stop = 0;
    tw_bytes(w, &stop, 1);
    if (w->depth > 0)
        w->depth--;
}

void bl_pq_tw_elem_i32(bl_pq_tw *w, int32_t v) { bl_pq_tw_varint(w, zigzag(v)); }

void bl_pq_tw_elem_binary(bl_pq_tw *w, const void *p, size_t n)
{
    bl_pq_tw_varint(w, n);
    tw_bytes(w, p, n);
}

void bl_pq_tw_free(bl_pq_tw *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}
