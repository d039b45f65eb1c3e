/* A small FlatBuffers reader for the Arrow IPC metadata (Schema, Message,
 * Footer). Every offset read from the buffer is checked against its length
 * before anything is dereferenced, so a hostile file can make a lookup fail
 * but never read outside the bytes we hold. Integers are little-endian and
 * read with memcpy (FlatBuffers data need not be aligned in our copy).
 *
 * Return convention of the field getters: 1 present, 0 absent (the default
 * applies), -1 malformed. */
#ifndef BL_IO_ARROW_FB_H
#define BL_IO_ARROW_FB_H

#include <stddef.h>
#include <stdint.h>

typedef struct fb_buf {
    const uint8_t *p;
    size_t len;
} fb_buf;

typedef struct fb_table {
    const fb_buf *b;
    size_t pos;        /* the table's first byte */
    size_t vt;         /* its vtable */
    uint16_t vt_len;   /* vtable size in bytes */
    uint16_t tbl_len;  /* table size in bytes (inline fields must lie inside) */
} fb_table;

/* The root table (the uoffset at byte 0). */
int fb_root(const fb_buf *b, fb_table *t);

int fb_u8(const fb_table *t, int field, uint8_t *v);
int fb_i16(const fb_table *t, int field, int16_t *v);
int fb_i32(const fb_table *t, int field, int32_t *v);
int fb_i64(const fb_table *t, int field, int64_t *v);

/* A sub-table (also a union's value, whose type is a separate u8 field). */
int fb_table_at(const fb_table *t, int field, fb_table *sub);
/* A string: *s points into the buffer, not NUL-terminated; len bytes. */
int fb_string(const fb_table *t, int field, const uint8_t **s, size_t *len);
/* A vector of scalars or structs of elem bytes each: *pos is its first element. */
int fb_vector(const fb_table *t, int field, size_t elem, size_t *pos, size_t *count);
/* Element i of a vector of tables starting at pos (from fb_vector with elem 4). */
int fb_vector_table(const fb_buf *b, size_t pos, size_t i, fb_table *out);

/* Little-endian reads at a checked position. */
uint16_t fb_rd16(const uint8_t *p);
uint32_t fb_rd32(const uint8_t *p);
uint64_t fb_rd64(const uint8_t *p);

#endif
