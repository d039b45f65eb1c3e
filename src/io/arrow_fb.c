/* FlatBuffers reading with a bounds check on every offset (arrow_fb.h). */
#include "io/arrow_fb.h"

#include <string.h>

uint16_t fb_rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

uint32_t fb_rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t fb_rd64(const uint8_t *p)
{
    return (uint64_t)fb_rd32(p) | (uint64_t)fb_rd32(p + 4) << 32;
}

/* A table at pos: its soffset to the vtable, and the vtable's two sizes. */
static int table_at(const fb_buf *b, size_t pos, fb_table *t)
{
    if (pos > b->len || b->len - pos < 4)
        return -1;
    int32_t so = (int32_t)fb_rd32(b->p + pos);
    int64_t vt = (int64_t)pos - (int64_t)so;
    if (vt < 0 || (uint64_t)vt > b->len || b->len - (size_t)vt < 4)
        return -1;
    uint16_t vt_len = fb_rd16(b->p + vt), tbl_len = fb_rd16(b->p + vt + 2);
    if (vt_len < 4 || (vt_len & 1) || (size_t)vt_len > b->len - (size_t)vt || tbl_len < 4 ||
        (size_t)tbl_len > b->len - pos)
        return -1;
    t->b = b;
    t->pos = pos;
    t->vt = (size_t)vt;
    t->vt_len = vt_len;
    t->tbl_len = tbl_len;
    return 1;
}

int fb_root(const fb_buf *b, fb_table *t)
{
    if (!b->p || b->len < 4)
        return -1;
    return table_at(b, fb_rd32(b->p), t);
}

/* Position of an inline field of `size` bytes, checked to lie in the table. */
static int field_pos(const fb_table *t, int field, size_t size, size_t *pos)
{
    size_t slot = 4 + 2 * (size_t)field;
    if (field < 0 || slot + 2 > t->vt_len)
        return 0;
    uint16_t off = fb_rd16(t->b->p + t->vt + slot);
    if (off == 0)
        return 0;
    if (off < 4 || (size_t)off + size > t->tbl_len)
        return -1;
    *pos = t->pos + off;
    return 1;
}

#define SCALAR(fn, type, size, rd)                                                                                   \
    int fn(const fb_table *t, int field, type *v)                                                                    \
    {                                                                                                                \
        size_t pos;                                                                                                  \
        int r = field_pos(t, field, size, &pos);                                                                     \
        if (r == 1)                                                                                                  \
            *v = (type)rd(t->b->p + pos);                                                                            \
        return r;                                                                                                    \
    }
#define RD8(p) (*(p))
SCALAR(fb_u8, uint8_t, 1, RD8)
SCALAR(fb_i16, int16_t, 2, fb_rd16)
SCALAR(fb_i32, int32_t, 4, fb_rd32)
SCALAR(fb_i64, int64_t, 8, fb_rd64)

/* Follow the uoffset stored at pos. */
static int follow(const fb_buf *b, size_t pos, size_t *target)
{
    if (pos > b->len || b->len - pos < 4)
        return -1;
    uint64_t to = (uint64_t)pos + fb_rd32(b->p + pos);
    if (to >= b->len)
        return -1;
    *target = (size_t)to;
    return 1;
}

int fb_table_at(const fb_table *t, int field, fb_table *sub)
{
    size_t pos, to;
    int r = field_pos(t, field, 4, &pos);
    if (r != 1)
        return r;
    if (follow(t->b, pos, &to) != 1)
        return -1;
    return table_at(t->b, to, sub);
}

int fb_vector(const fb_table *t, int field, size_t elem, size_t *pos, size_t *count)
{
    size_t at, to;
    int r = field_pos(t, field, 4, &at);
    if (r != 1)
        return r;
    if (follow(t->b, at, &to) != 1 || t->b->len - to < 4)
        return -1;
    uint64_t n = fb_rd32(t->b->p + to);
    size_t room = t->b->len - to - 4;
    if (elem && n > room / elem)
        return -1;
    *pos = to + 4;
    *count = (size_t)n;
    return 1;
}

int fb_string(const fb_table *t, int field, const uint8_t **s, size_t *len)
{
    size_t pos, n;
    int r = fb_vector(t, field, 1, &pos, &n);
    if (r != 1)
        return r;
    *s = t->b->p + pos;
    *len = n;
    return 1;
}

int fb_vector_table(const fb_buf *b, size_t pos, size_t i, fb_table *out)
{
    size_t to;
    if (i > (SIZE_MAX - pos) / 4 || follow(b, pos + 4 * i, &to) != 1)
        return -1;
    return table_at(b, to, out);
}
