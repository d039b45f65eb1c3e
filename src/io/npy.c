/* .npy reader and writer (format 1.0, 2.0, 3.0; little-endian; C order).
 *
 * The header is a Python dict literal. Rather than evaluate Python, we accept
 * exactly the tiny grammar NumPy writes (and nothing wider): a dict with the
 * three keys 'descr', 'fortran_order' and 'shape', string/bool/tuple values,
 * whitespace between tokens and an optional trailing comma. Everything else
 * is rejected with a message naming the file and the byte offset, because a
 * header we half-understand is how silently wrong data gets in. */
#include "brainlesslab/npy.h"

#include "core/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Element bytes are copied straight to and from memory; every platform we
 * target is little-endian, so refuse to build rather than swap silently. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* NumPy itself refuses headers over 10000 bytes by default; a valid header
 * of ours is under 256. The cap stops a hostile length field from making us
 * allocate gigabytes before we have seen a single dict character. */
#define NPY_MAX_HEADER 65536
#define NPY_ALIGN 64
/* NumPy pads the header so that the first axis can later grow in place to 21
 * digits; we do the same so that our files are byte-identical to np.save's. */
#define NPY_GROWTH_DIGITS 21

size_t bl_dtype_size(bl_dtype dtype)
{
    switch (dtype) {
    case BL_DTYPE_BOOL:
    case BL_DTYPE_INT8:
    case BL_DTYPE_UINT8: return 1;
    case BL_DTYPE_INT32:
    case BL_DTYPE_UINT32:
    case BL_DTYPE_FLOAT32: return 4;
    case BL_DTYPE_INT64:
    case BL_DTYPE_UINT64:
    case BL_DTYPE_FLOAT64: return 8;
    }
    return 0;
}

const char *bl_dtype_descr(bl_dtype dtype)
{
    switch (dtype) {
    case BL_DTYPE_BOOL: return "|b1";
    case BL_DTYPE_INT8: return "|i1";
    case BL_DTYPE_UINT8: return "|u1";
    case BL_DTYPE_INT32: return "<i4";
    case BL_DTYPE_UINT32: return "<u4";
    case BL_DTYPE_INT64: return "<i8";
    case BL_DTYPE_UINT64: return "<u8";
    case BL_DTYPE_FLOAT32: return "<f4";
    case BL_DTYPE_FLOAT64: return "<f8";
    }
    return "invalid";
}

/* Python's repr of a shape tuple: "()", "(3,)", "(2, 5)". */
static void format_shape(char *buf, size_t size, int ndim, const uint64_t *shape)
{
    size_t used = 0;
    int n = snprintf(buf, size, "(");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < ndim && used < size; i++) {
        n = snprintf(buf + used, size - used, "%s%llu", i ? ", " : "",
                     (unsigned long long)shape[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

/* Element count and byte size of a shape; false when either overflows. A zero
 * dimension makes the array empty whatever the others are, as in NumPy. */
static bool shape_bytes(int ndim, const uint64_t *shape, size_t itemsize, uint64_t *count,
                        uint64_t *bytes)
{
    uint64_t c = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) {
            *count = 0;
            *bytes = 0;
            return true;
        }
    for (int i = 0; i < ndim; i++) {
        if (c > UINT64_MAX / shape[i])
            return false;
        c *= shape[i];
    }
    if (itemsize && c > UINT64_MAX / itemsize)
        return false;
    *count = c;
    *bytes = c * itemsize;
    return true;
}

/* ---------------------------------------------------------------- header */

typedef struct hdr_parser {
    const char *path;
    const char *s; /* header text (not NUL-terminated) */
    size_t n;
    size_t pos;
    size_t base; /* file offset of s[0], so messages give file byte offsets */
    bl_error *err;
} hdr_parser;

typedef struct hdr_fields {
    bool have_descr, have_fortran, have_shape;
    bl_dtype dtype;
    bool fortran;
    int ndim;
    uint64_t shape[BL_NPY_MAX_DIMS];
} hdr_fields;

static bool hdr_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void hdr_skip(hdr_parser *p)
{
    while (p->pos < p->n && hdr_is_space(p->s[p->pos]))
        p->pos++;
}

/* Describe the character at the cursor for a message: 'x', 0x93 or "end of header". */
static const char *hdr_here(const hdr_parser *p, char *buf, size_t size)
{
    if (p->pos >= p->n)
        return "end of header";
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, size, "'%c'", c);
    else
        snprintf(buf, size, "byte 0x%02x", c);
    return buf;
}

static bl_status hdr_expected(hdr_parser *p, const char *what)
{
    char buf[16];
    return bl_fail(p->err, BL_ERR_FORMAT, "%s: header byte %zu: expected %s, found %s", p->path,
                   p->base + p->pos, what, hdr_here(p, buf, sizeof buf));
}

static bool hdr_accept(hdr_parser *p, char c)
{
    hdr_skip(p);
    if (p->pos < p->n && p->s[p->pos] == c) {
        p->pos++;
        return true;
    }
    return false;
}

/* A Python string literal in ' or " quotes, no escapes (no valid key or descr
 * needs one), printable ASCII only, at most size-1 characters. */
static bl_status hdr_string(hdr_parser *p, char *out, size_t size, const char *what)
{
    hdr_skip(p);
    if (p->pos >= p->n || (p->s[p->pos] != '\'' && p->s[p->pos] != '"'))
        return hdr_expected(p, what);
    char quote = p->s[p->pos];
    size_t start = p->pos++;
    size_t len = 0;
    while (p->pos < p->n && p->s[p->pos] != quote) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header byte %zu: unsupported character 0x%02x in string literal",
                           p->path, p->base + p->pos, c);
        if (len + 1 >= size)
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header byte %zu: string literal too long for %s", p->path,
                           p->base + start, what);
        out[len++] = (char)c;
        p->pos++;
    }
    if (p->pos >= p->n)
        return bl_fail(p->err, BL_ERR_FORMAT, "%s: header byte %zu: unterminated string literal",
                       p->path, p->base + start);
    p->pos++;
    out[len] = '\0';
    return BL_OK;
}

static bl_status hdr_descr(hdr_parser *p, hdr_fields *f)
{
    size_t at;
    char d[32];
    hdr_skip(p);
    at = p->base + p->pos;
    if (p->pos < p->n && (p->s[p->pos] == '[' || p->s[p->pos] == '{'))
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header key 'descr' (byte %zu): structured dtypes are not supported",
                       p->path, at);
    bl_status st = hdr_string(p, d, sizeof d, "a string for key 'descr'");
    if (st)
        return st;
    static const struct {
        const char *name; /* without the byte-order character */
        bl_dtype dtype;
    } table[] = {
        {"b1", BL_DTYPE_BOOL},   {"i1", BL_DTYPE_INT8},   {"u1", BL_DTYPE_UINT8},
        {"i4", BL_DTYPE_INT32},  {"u4", BL_DTYPE_UINT32}, {"i8", BL_DTYPE_INT64},
        {"u8", BL_DTYPE_UINT64}, {"f4", BL_DTYPE_FLOAT32}, {"f8", BL_DTYPE_FLOAT64},
    };
    char order = d[0];
    const char *name = d + (d[0] ? 1 : 0);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(name, table[i].name) != 0)
            continue;
        bl_dtype dt = table[i].dtype;
        bool one_byte = bl_dtype_size(dt) == 1;
        /* Byte order is meaningless for 1-byte types; NumPy writes '|' but
         * other writers use '<' or '='. For wider types only '<' is
         * unambiguous: '=' means the writer's native order, which we cannot know. */
        if (order == '<' || (one_byte && (order == '|' || order == '=' || order == '>'))) {
            f->dtype = dt;
            return BL_OK;
        }
        if (order == '>')
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header key 'descr' (byte %zu): big-endian dtype '%s' is not "
                           "supported; convert it with numpy: a.astype('<%s')",
                           p->path, at, d, name);
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header key 'descr' (byte %zu): dtype '%s' has an ambiguous or "
                       "invalid byte order; expected '<%s'",
                       p->path, at, d, name);
    }
    return bl_fail(p->err, BL_ERR_FORMAT,
                   "%s: header key 'descr' (byte %zu): unsupported dtype '%s' (supported: "
                   "|b1 |i1 |u1 <i4 <u4 <i8 <u8 <f4 <f8)",
                   p->path, at, d);
}

static bl_status hdr_fortran(hdr_parser *p, hdr_fields *f)
{
    hdr_skip(p);
    size_t at = p->pos;
    if (p->n - at >= 4 && memcmp(p->s + at, "True", 4) == 0)
        p->pos += 4;
    else if (p->n - at >= 5 && memcmp(p->s + at, "False", 5) == 0)
        p->pos += 5;
    else
        return hdr_expected(p, "True or False for key 'fortran_order'");
    /* "Falsey" is an identifier, not False. */
    if (p->pos < p->n && (p->s[p->pos] == '_' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') ||
                          ((p->s[p->pos] | 0x20) >= 'a' && (p->s[p->pos] | 0x20) <= 'z'))) {
        p->pos = at;
        return hdr_expected(p, "True or False for key 'fortran_order'");
    }
    f->fortran = p->s[at] == 'T';
    if (f->fortran)
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header key 'fortran_order' (byte %zu): Fortran-ordered arrays are "
                       "not supported; save with np.ascontiguousarray(a)",
                       p->path, p->base + at);
    return BL_OK;
}

/* A non-negative Python int literal: "0" or digits without a leading zero. */
static bl_status hdr_uint(hdr_parser *p, uint64_t *out)
{
    hdr_skip(p);
    size_t start = p->pos;
    if (p->pos < p->n && p->s[p->pos] == '-')
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header key 'shape' (byte %zu): negative dimension", p->path,
                       p->base + start);
    uint64_t v = 0;
    while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        unsigned d = (unsigned)(p->s[p->pos] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header key 'shape' (byte %zu): dimension does not fit in 64 bits",
                           p->path, p->base + start);
        v = v * 10 + d;
        p->pos++;
    }
    if (p->pos == start)
        return hdr_expected(p, "a dimension (non-negative integer) in 'shape'");
    if (p->pos - start > 1 && p->s[start] == '0')
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header key 'shape' (byte %zu): dimension has a leading zero",
                       p->path, p->base + start);
    *out = v;
    return BL_OK;
}

static bl_status hdr_shape(hdr_parser *p, hdr_fields *f)
{
    hdr_skip(p);
    size_t at = p->pos;
    if (!hdr_accept(p, '('))
        return hdr_expected(p, "a tuple such as (3,) for key 'shape'");
    f->ndim = 0;
    if (hdr_accept(p, ')'))
        return BL_OK;
    for (;;) {
        if (f->ndim == BL_NPY_MAX_DIMS)
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header key 'shape' (byte %zu): more than %d dimensions", p->path,
                           p->base + at, BL_NPY_MAX_DIMS);
        bl_status st = hdr_uint(p, &f->shape[f->ndim]);
        if (st)
            return st;
        f->ndim++;
        bool comma = hdr_accept(p, ',');
        if (hdr_accept(p, ')')) {
            /* "(3)" is the int 3 in Python, not a tuple. */
            if (f->ndim == 1 && !comma)
                return bl_fail(p->err, BL_ERR_FORMAT,
                               "%s: header key 'shape' (byte %zu): (n) is not a tuple; "
                               "a 1-d shape is written (n,)",
                               p->path, p->base + at);
            return BL_OK;
        }
        if (!comma)
            return hdr_expected(p, "',' or ')' in 'shape'");
    }
}

static bl_status hdr_parse(hdr_parser *p, hdr_fields *f)
{
    memset(f, 0, sizeof *f);
    hdr_skip(p);
    if (p->pos >= p->n || p->s[p->pos] != '{')
        return bl_fail(p->err, BL_ERR_FORMAT,
                       "%s: header is not a dict: expected '{' at byte %zu", p->path,
                       p->base + p->pos);
    p->pos++;
    for (;;) {
        if (hdr_accept(p, '}'))
            break;
        hdr_skip(p);
        size_t key_at = p->base + p->pos;
        char key[32];
        bl_status st = hdr_string(p, key, sizeof key, "a quoted key or '}'");
        if (st)
            return st;
        if (!hdr_accept(p, ':'))
            return hdr_expected(p, "':' after a key");
        bool *have;
        if (strcmp(key, "descr") == 0) {
            have = &f->have_descr;
        } else if (strcmp(key, "fortran_order") == 0) {
            have = &f->have_fortran;
        } else if (strcmp(key, "shape") == 0) {
            have = &f->have_shape;
        } else {
            return bl_fail(p->err, BL_ERR_FORMAT,
                           "%s: header byte %zu: unexpected key '%s' (allowed: 'descr', "
                           "'fortran_order', 'shape')",
                           p->path, key_at, key);
        }
        if (*have)
            return bl_fail(p->err, BL_ERR_FORMAT, "%s: header byte %zu: key '%s' appears twice",
                           p->path, key_at, key);
        *have = true;
        if (key[0] == 'd')
            st = hdr_descr(p, f);
        else if (key[0] == 'f')
            st = hdr_fortran(p, f);
        else
            st = hdr_shape(p, f);
        if (st)
            return st;
        if (hdr_accept(p, ','))
            continue;
        if (hdr_accept(p, '}'))
            break;
        return hdr_expected(p, "',' or '}' after a value");
    }
    hdr_skip(p);
    if (p->pos != p->n)
        return hdr_expected(p, "only whitespace after the header dict");
    if (!f->have_descr || !f->have_fortran || !f->have_shape)
        return bl_fail(p->err, BL_ERR_FORMAT, "%s: header key '%s' is missing", p->path,
                       !f->have_descr ? "descr" : !f->have_fortran ? "fortran_order" : "shape");
    return BL_OK;
}

/* ---------------------------------------------------------------- reader */

static uint32_t read_le(const unsigned char *b, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

/* The preamble and header of an open file, checked against the file size; on
 * success fp is positioned at the first data byte. */
static bl_status read_header(const char *path, FILE *fp, uint64_t file_size, hdr_fields *fo,
                             uint64_t *count_out, uint64_t *bytes_out, bl_error *err)
{
    unsigned char pre[12];
    size_t have = (size_t)(file_size < sizeof pre ? file_size : sizeof pre);
    if (file_size == 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: empty file (0 bytes), not a .npy file", path);
    if (fread(pre, 1, have, fp) != have)
        return bl_fail(err, BL_ERR_IO, "%s: read error in the first %zu bytes", path, have);
    size_t cmp = have < NPY_MAGIC_LEN ? have : NPY_MAGIC_LEN;
    if (memcmp(pre, NPY_MAGIC, cmp) != 0)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: bad magic at byte 0: not a .npy file (expected \\x93NUMPY)", path);
    if (have < 10)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: file is %zu bytes, too short for a .npy preamble (at least 10)",
                       path, have);
    unsigned major = pre[6], minor = pre[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: byte 6: unsupported .npy format version %u.%u (supported: 1.0, 2.0, "
                       "3.0)",
                       path, major, minor);
    size_t len_bytes = major == 1 ? 2 : 4;
    size_t header_start = 8 + len_bytes;
    if (have < header_start)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: file is %zu bytes, too short for a version %u.0 preamble (%zu)", path,
                       have, major, header_start);
    uint64_t hlen = read_le(pre + 8, (int)len_bytes);
    if (hlen > file_size - header_start)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: byte 8: header length %llu runs past the end of the file (%llu "
                       "bytes)",
                       path, (unsigned long long)hlen, (unsigned long long)file_size);
    if (hlen > NPY_MAX_HEADER)
        return bl_fail(err, BL_ERR_FORMAT, "%s: byte 8: header length %llu exceeds the limit %d",
                       path, (unsigned long long)hlen, NPY_MAX_HEADER);
    char *text = malloc(hlen ? (size_t)hlen : 1);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %llu header bytes", path,
                       (unsigned long long)hlen);
    if (fseek(fp, (long)header_start, SEEK_SET) != 0 || fread(text, 1, hlen, fp) != hlen) {
        free(text);
        return bl_fail(err, BL_ERR_IO, "%s: read error in the header", path);
    }
    hdr_parser p = {path, text, (size_t)hlen, 0, header_start, err};
    hdr_fields f;
    bl_status st = hdr_parse(&p, &f);
    free(text);
    if (st)
        return st;

    size_t itemsize = bl_dtype_size(f.dtype);
    uint64_t count, bytes;
    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, f.ndim, f.shape);
    if (!shape_bytes(f.ndim, f.shape, itemsize, &count, &bytes))
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: header key 'shape': %s of '%s' overflows 64-bit byte count", path,
                       shape_text, bl_dtype_descr(f.dtype));
    uint64_t data_start = header_start + hlen;
    uint64_t actual = file_size - data_start;
    if (actual != bytes)
        return bl_fail(err, BL_ERR_FORMAT,
                       "%s: shape %s of '%s' needs %llu data bytes after the %llu-byte header, "
                       "but the file has %llu (%s)",
                       path, shape_text, bl_dtype_descr(f.dtype), (unsigned long long)bytes,
                       (unsigned long long)data_start, (unsigned long long)actual,
                       actual < bytes ? "truncated" : "trailing bytes");
    *fo = f;
    *count_out = count;
    *bytes_out = bytes;
    return BL_OK;
}

bl_status bl_npy_parse_header(const char *path, const void *prefix, size_t len, uint64_t file_size,
                              bl_npy_header *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (file_size == 0)
        return bl_fail(err, BL_ERR_FORMAT, "%s: empty file (0 bytes), not a .npy file", path);
    size_t need = file_size < BL_NPY_PREFIX_BYTES ? (size_t)file_size : BL_NPY_PREFIX_BYTES;
    if (len < need)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: bl_npy_parse_header given %zu of the %zu first bytes",
                       path, len, need);
    /* read_header reads through a FILE; a memory stream over the prefix lets
     * the one header parser serve both. */
    FILE *fp = fmemopen((void *)prefix, len, "rb");
    if (!fp)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot open a memory stream", path);
    hdr_fields f;
    uint64_t count = 0, bytes = 0;
    bl_status st = read_header(path, fp, file_size, &f, &count, &bytes, err);
    fclose(fp);
    if (st)
        return st;
    out->dtype = f.dtype;
    out->ndim = f.ndim;
    memcpy(out->shape, f.shape, sizeof out->shape);
    out->count = count;
    out->data_bytes = bytes;
    out->data_offset = file_size - bytes;
    return BL_OK;
}

/* Bool elements must be 0 or 1 (first is the index of p[0] in the array). */
static bl_status check_bools(const char *path, const unsigned char *b, uint64_t n, uint64_t first,
                             bl_error *err)
{
    for (uint64_t i = 0; i < n; i++)
        if (b[i] > 1)
            return bl_fail(err, BL_ERR_FORMAT, "%s: element %llu: bool byte 0x%02x is neither 0 nor 1",
                           path, (unsigned long long)(first + i), (unsigned)b[i]);
    return BL_OK;
}

static bl_status read_impl(const char *path, FILE *fp, uint64_t file_size, bl_npy_array *out,
                           bl_error *err)
{
    hdr_fields f;
    uint64_t count, bytes;
    bl_status st = read_header(path, fp, file_size, &f, &count, &bytes, err);
    if (st)
        return st;
    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, f.ndim, f.shape);
    if (bytes > SIZE_MAX - 1)
        return bl_fail(err, BL_ERR_NOMEM, "%s: %llu data bytes do not fit in memory", path,
                       (unsigned long long)bytes);
    /* Always a valid pointer, even for an empty array, so callers need no special case. */
    void *data = malloc(bytes ? (size_t)bytes : 1);
    if (!data)
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate %llu bytes for shape %s", path,
                       (unsigned long long)bytes, shape_text);
    size_t got = fread(data, 1, (size_t)bytes, fp);
    /* The size was checked with fstat, but the file may change under us. */
    if (got != bytes || fgetc(fp) != EOF) {
        free(data);
        return bl_fail(err, BL_ERR_IO, "%s: file changed size while being read (expected %llu "
                       "data bytes)", path, (unsigned long long)bytes);
    }
    if (f.dtype == BL_DTYPE_BOOL && (st = check_bools(path, data, count, 0, err))) {
        free(data);
        return st;
    }
    out->dtype = f.dtype;
    out->ndim = f.ndim;
    memcpy(out->shape, f.shape, sizeof f.shape);
    out->count = count;
    out->data = data;
    return BL_OK;
}

bl_status bl_npy_read_hashed(const char *path, bl_npy_array *out, char sha256[65], uint64_t *bytes, bl_error *err)
{
    if (!out)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_read: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_read: path is NULL");
    /* Read once, hashed as read (core/file.h), then parsed from memory: the
     * digest a record gives for the array is of the bytes parsed, never of
     * a second read of a file that may have changed in between. */
    uint8_t *file = NULL;
    size_t len = 0;
    char hex[65];
    bl_status st = bl_read_input(path, UINT64_MAX, &file, &len, hex, err);
    if (st)
        return st;
    FILE *fp = len ? fmemopen(file, len, "rb") : NULL;
    if (len && !fp)
        st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot open a memory stream", path);
    else if (!len)
        st = bl_fail(err, BL_ERR_FORMAT, "%s: empty file (0 bytes), not a .npy file", path);
    else
        st = read_impl(path, fp, (uint64_t)len, out, err);
    if (fp)
        fclose(fp);
    free(file);
    if (st) {
        memset(out, 0, sizeof *out);
        return st;
    }
    if (sha256)
        memcpy(sha256, hex, 65);
    if (bytes)
        *bytes = len;
    return BL_OK;
}

bl_status bl_npy_read(const char *path, bl_npy_array *out, bl_error *err)
{
    return bl_npy_read_hashed(path, out, NULL, NULL, err);
}

bl_status bl_npy_read_expect(const char *path, bl_dtype dtype, int ndim, bl_npy_array *out,
                             bl_error *err)
{
    bl_status st = bl_npy_read(path, out, err);
    if (st)
        return st;
    if (out->dtype != dtype) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: dtype '%s' but expected '%s'", path,
                     bl_dtype_descr(out->dtype), bl_dtype_descr(dtype));
    } else if (ndim >= 0 && out->ndim != ndim) {
        char shape_text[256];
        format_shape(shape_text, sizeof shape_text, out->ndim, out->shape);
        st = bl_fail(err, BL_ERR_FORMAT, "%s: %d-d array (shape %s) but expected %d-d", path,
                     out->ndim, shape_text, ndim);
    }
    if (st)
        bl_npy_free(out);
    return st;
}

void bl_npy_free(bl_npy_array *array)
{
    if (!array)
        return;
    free(array->data);
    memset(array, 0, sizeof *array);
}

/* ---------------------------------------------------------------- streaming reader */

struct bl_npy_reader {
    FILE *fp;
    char *path;
    bl_dtype dtype;
    int ndim;
    uint64_t shape[BL_NPY_MAX_DIMS];
    uint64_t count, done;
};

bl_status bl_npy_reader_open(const char *path, bl_dtype dtype, int ndim, bl_npy_reader **out,
                             bl_error *err)
{
    *out = NULL;
    bl_npy_reader *r = calloc(1, sizeof *r);
    size_t len = strlen(path) + 1;
    if (!r || !(r->path = malloc(len))) {
        free(r);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate a reader", path);
    }
    memcpy(r->path, path, len);
    bl_status st = BL_OK;
    struct stat sb;
    hdr_fields f;
    uint64_t bytes = 0;
    int fd = -1;
    if ((st = bl_open_regular(path, &fd, NULL, err)))
        ;
    else if (!(r->fp = fdopen(fd, "rb"))) {
        close(fd);
        st = bl_fail(err, BL_ERR_NOMEM, "%s: cannot open: %s", path, strerror(errno));
    }
    else if (fstat(fileno(r->fp), &sb) != 0)
        st = bl_fail(err, BL_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = bl_fail(err, BL_ERR_IO, "%s: not a regular file", path);
    else if (!(st = read_header(path, r->fp, (uint64_t)sb.st_size, &f, &r->count, &bytes, err))) {
        char shape_text[256];
        format_shape(shape_text, sizeof shape_text, f.ndim, f.shape);
        if (f.dtype != dtype)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: dtype '%s' but expected '%s'", path,
                         bl_dtype_descr(f.dtype), bl_dtype_descr(dtype));
        else if (ndim >= 0 && f.ndim != ndim)
            st = bl_fail(err, BL_ERR_FORMAT, "%s: %d-d array (shape %s) but expected %d-d", path,
                         f.ndim, shape_text, ndim);
        r->dtype = f.dtype;
        r->ndim = f.ndim;
        memcpy(r->shape, f.shape, sizeof f.shape);
    }
    if (st) {
        bl_npy_reader_close(r);
        return st;
    }
    *out = r;
    return BL_OK;
}

uint64_t bl_npy_reader_count(const bl_npy_reader *r) { return r->count; }
const uint64_t *bl_npy_reader_shape(const bl_npy_reader *r) { return r->shape; }

bl_status bl_npy_reader_read(bl_npy_reader *r, void *buf, uint64_t n, bl_error *err)
{
    if (n > r->count - r->done)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: asked for elements %llu..%llu of %llu", r->path,
                       (unsigned long long)r->done, (unsigned long long)(r->done + n),
                       (unsigned long long)r->count);
    size_t bytes = (size_t)n * bl_dtype_size(r->dtype);
    /* The size was checked at open, but the file may change under us. */
    if (fread(buf, 1, bytes, r->fp) != bytes)
        return bl_fail(err, BL_ERR_IO, "%s: file changed size while being read (at element %llu)",
                       r->path, (unsigned long long)r->done);
    bl_status st = BL_OK;
    if (r->dtype == BL_DTYPE_BOOL)
        st = check_bools(r->path, buf, n, r->done, err);
    r->done += n;
    if (!st && r->done == r->count && fgetc(r->fp) != EOF)
        st = bl_fail(err, BL_ERR_IO, "%s: file grew while being read", r->path);
    return st;
}

void bl_npy_reader_close(bl_npy_reader *r)
{
    if (!r)
        return;
    if (r->fp)
        fclose(r->fp);
    free(r->path);
    free(r);
}

/* ---------------------------------------------------------------- writer */

struct bl_npy_writer {
    FILE *fp;
    char *path;
    bl_dtype dtype;
    uint64_t expected; /* elements declared by the shape */
    uint64_t written;
    bool failed;       /* an append failed: close must report an error */
};

static bool valid_dtype(bl_dtype dtype)
{
    return bl_dtype_size(dtype) != 0;
}

bl_status bl_npy_writer_open(const char *path, bl_dtype dtype, int ndim, const uint64_t *shape,
                             bl_npy_writer **out, bl_error *err)
{
    if (!out)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_writer_open: out is NULL");
    *out = NULL;
    if (!path)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_writer_open: path is NULL");
    if (!valid_dtype(dtype))
        return bl_fail(err, BL_ERR_INVALID, "%s: invalid dtype %d", path, (int)dtype);
    if (ndim < 0 || ndim > BL_NPY_MAX_DIMS || (ndim > 0 && !shape))
        return bl_fail(err, BL_ERR_INVALID, "%s: invalid number of dimensions %d (0..%d)", path,
                       ndim, BL_NPY_MAX_DIMS);
    uint64_t count, bytes;
    if (!shape_bytes(ndim, shape, bl_dtype_size(dtype), &count, &bytes))
        return bl_fail(err, BL_ERR_NOMEM, "%s: shape overflows a 64-bit byte count", path);

    /* The header exactly as NumPy 1.24 writes it (keys sorted, growth padding,
     * spaces to a 64-byte boundary, final newline), so that our files and
     * np.save's are byte-identical. */
    char shape_text[256];
    format_shape(shape_text, sizeof shape_text, ndim, shape);
    char header[512];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     bl_dtype_descr(dtype), shape_text);
    if (n < 0 || (size_t)n >= sizeof header - 2 * NPY_ALIGN)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: header too long", path);
    size_t len = (size_t)n;
    if (ndim > 0) {
        char first[32];
        int digits = snprintf(first, sizeof first, "%llu", (unsigned long long)shape[0]);
        for (int i = digits; i < NPY_GROWTH_DIGITS; i++)
            header[len++] = ' ';
    }
    size_t pad = NPY_ALIGN - ((10 + len + 1) % NPY_ALIGN);
    memset(header + len, ' ', pad);
    len += pad;
    header[len++] = '\n';

    bl_npy_writer *w = calloc(1, sizeof *w);
    char *path_copy = w ? strdup(path) : NULL;
    if (!w || !path_copy) {
        free(w);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate the writer", path);
    }
    w->path = path_copy;
    w->dtype = dtype;
    w->expected = count;
    w->fp = fopen(path, "wb");
    if (!w->fp) {
        bl_status st = bl_fail(err, BL_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        free(w->path);
        free(w);
        return st;
    }
    unsigned char pre[10];
    memcpy(pre, NPY_MAGIC, NPY_MAGIC_LEN);
    pre[6] = 1;
    pre[7] = 0;
    pre[8] = (unsigned char)(len & 0xff);
    pre[9] = (unsigned char)(len >> 8);
    if (fwrite(pre, 1, sizeof pre, w->fp) != sizeof pre ||
        fwrite(header, 1, len, w->fp) != len) {
        bl_status st = bl_fail(err, BL_ERR_IO, "%s: write error in the header: %s", path,
                               strerror(errno));
        fclose(w->fp);
        remove(path);
        free(w->path);
        free(w);
        return st;
    }
    *out = w;
    return BL_OK;
}

bl_status bl_npy_writer_append(bl_npy_writer *w, const void *data, uint64_t n_elements,
                               bl_error *err)
{
    if (!w)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_writer_append: writer is NULL");
    if (w->failed)
        return bl_fail(err, BL_ERR_INVALID, "%s: append after an earlier failure", w->path);
    if (n_elements == 0)
        return BL_OK;
    if (!data) {
        w->failed = true;
        return bl_fail(err, BL_ERR_INTERNAL, "%s: append of %llu elements from NULL", w->path,
                       (unsigned long long)n_elements);
    }
    if (n_elements > w->expected - w->written) {
        w->failed = true;
        return bl_fail(err, BL_ERR_INVALID,
                       "%s: appending %llu elements after %llu exceeds the declared %llu",
                       w->path, (unsigned long long)n_elements, (unsigned long long)w->written,
                       (unsigned long long)w->expected);
    }
    size_t itemsize = bl_dtype_size(w->dtype);
    /* n_elements <= expected, whose byte size was overflow-checked at open. */
    uint64_t bytes = n_elements * itemsize;
    if (bytes > SIZE_MAX) {
        w->failed = true;
        return bl_fail(err, BL_ERR_NOMEM, "%s: append too large", w->path);
    }
    if (w->dtype == BL_DTYPE_BOOL) {
        /* Never write a file our own reader would reject. */
        const unsigned char *b = data;
        for (uint64_t i = 0; i < n_elements; i++)
            if (b[i] > 1) {
                w->failed = true;
                return bl_fail(err, BL_ERR_INVALID,
                               "%s: element %llu: bool byte 0x%02x is neither 0 nor 1", w->path,
                               (unsigned long long)(w->written + i), b[i]);
            }
    }
    if (fwrite(data, 1, (size_t)bytes, w->fp) != bytes) {
        w->failed = true;
        return bl_fail(err, BL_ERR_IO, "%s: write error after %llu elements: %s", w->path,
                       (unsigned long long)w->written, strerror(errno));
    }
    w->written += n_elements;
    return BL_OK;
}

bl_status bl_npy_writer_close(bl_npy_writer *w, bl_error *err)
{
    if (!w)
        return bl_fail(err, BL_ERR_INTERNAL, "bl_npy_writer_close: writer is NULL");
    bl_status st = BL_OK;
    if (w->failed)
        st = bl_fail(err, BL_ERR_INVALID, "%s: not written completely (an append failed)",
                     w->path);
    else if (w->written != w->expected)
        st = bl_fail(err, BL_ERR_INVALID, "%s: %llu elements appended but the shape declares %llu",
                     w->path, (unsigned long long)w->written, (unsigned long long)w->expected);
    if (fclose(w->fp) != 0 && st == BL_OK)
        st = bl_fail(err, BL_ERR_IO, "%s: write error on close: %s", w->path, strerror(errno));
    /* An incomplete file would be rejected on read anyway; removing it keeps a
     * stale half-array from being mistaken for output. */
    if (st)
        remove(w->path);
    free(w->path);
    free(w);
    return st;
}

bl_status bl_npy_write(const char *path, bl_dtype dtype, int ndim, const uint64_t *shape,
                       const void *data, bl_error *err)
{
    bl_npy_writer *w;
    bl_status st = bl_npy_writer_open(path, dtype, ndim, shape, &w, err);
    if (st)
        return st;
    st = bl_npy_writer_append(w, data, w->expected, err);
    if (st) {
        bl_error ignored;
        bl_npy_writer_close(w, &ignored);
        return st;
    }
    return bl_npy_writer_close(w, err);
}
