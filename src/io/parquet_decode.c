/* Parquet value encodings: PLAIN, the RLE / bit-packed hybrid (levels,
 * dictionary indices, RLE booleans), DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT. Each
 * decoder produces exactly the count its caller asks for from a bounded byte
 * range, and fails (with the value index and byte offset) rather than read
 * past it; no decoder allocates on a count the data declares, except
 * DELTA_BYTE_ARRAY's string bytes, which the caller bounds. */
#include <stdlib.h>
#include <string.h>

#include "io/parquet.h"

size_t bl_pq_type_width(int32_t phys)
{
    switch (phys) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    }
    return 0;
}

const char *bl_pq_type_name(int32_t phys)
{
    static const char *names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE",
                                  "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return phys >= 0 && phys <= 7 ? names[phys] : "unknown physical type";
}

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* bw (0..64) bits LSB-first at bit pos; the caller guarantees the bits lie
 * within p[0..len). */
static uint64_t get_bits(const uint8_t *p, size_t len, uint64_t pos, int bw)
{
    if (bw == 0)
        return 0;
    size_t byte = (size_t)(pos >> 3);
    int shift = (int)(pos & 7);
    uint64_t mask = bw == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bw) - 1);
    if (byte + 8 <= len && bw + shift <= 64)
        return (load_le64(p + byte) >> shift) & mask;
    uint64_t v = 0;
    for (int got = 0; got < bw; byte++) {
        v |= (uint64_t)(p[byte] >> shift) << got;
        got += 8 - shift;
        shift = 0;
    }
    return v & mask;
}

static int read_uvarint(const uint8_t *p, size_t len, size_t *at, uint64_t *v)
{
    uint64_t x = 0;
    *v = 0; /* defined on failure too */
    for (int shift = 0; shift < 64; shift += 7) {
        if (*at >= len)
            return -1;
        uint8_t b = p[(*at)++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int bl_pq_rle_decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n, bl_pq_why *why)
{
    if (bw < 0 || bw > 32)
        return bl_pq_fail(why, "rle: bit width %d above 32", bw);
    size_t i = 0, at = 0, vbytes = ((size_t)bw + 7) / 8;
    while (i < n) {
        uint64_t h;
        size_t run_at = at;
        if (read_uvarint(p, len, &at, &h))
            return bl_pq_fail(why, "rle: data ends after %zu of %zu values (run header at byte %zu)", i, n, run_at);
        if (h & 1) {
            uint64_t groups = h >> 1;
            if (groups > ((uint64_t)1 << 40))
                return bl_pq_fail(why, "rle: bit-packed run of %llu groups at byte %zu", (unsigned long long)groups,
                               run_at);
            uint64_t count = groups * 8, bytes = groups * (uint64_t)bw;
            size_t take = count < n - i ? (size_t)count : n - i;
            /* The values taken must be present; padding after them may be cut. */
            if (((uint64_t)take * (uint64_t)bw + 7) / 8 > len - at)
                return bl_pq_fail(why, "rle: bit-packed run at byte %zu runs past the end (%zu bytes left)", run_at,
                               len - at);
            const uint8_t *q = p + at;
            size_t qlen = len - at;
            for (size_t k = 0; k < take; k++)
                out[i++] = (uint32_t)get_bits(q, qlen, (uint64_t)k * (uint64_t)bw, bw);
            at += bytes < qlen ? (size_t)bytes : qlen;
        } else {
            uint64_t run = h >> 1;
            if (vbytes > len - at)
                return bl_pq_fail(why, "rle: run value at byte %zu runs past the end", at);
            uint32_t v = 0;
            for (size_t k = 0; k < vbytes; k++)
                v |= (uint32_t)p[at + k] << (8 * k);
            if (bw < 32 && (v >> bw) != 0)
                return bl_pq_fail(why, "rle: run value %u at byte %zu is wider than %d bits", v, at, bw);
            at += vbytes;
            size_t take = run < n - i ? (size_t)run : n - i;
            for (size_t k = 0; k < take; k++)
                out[i++] = v;
        }
    }
    return 0;
}

typedef struct delta_header {
    uint64_t block, miniblocks, total, per_mini;
    int64_t first;
    size_t at;
} delta_header;

static int delta_read_header(const uint8_t *p, size_t len, delta_header *d, bl_pq_why *why)
{
    /* The header is fully defined even when reading it fails: callers see a
     * zeroed header, never bytes left over from the stack. */
    uint64_t first = 0;
    *d = (delta_header){0};
    if (read_uvarint(p, len, &d->at, &d->block) || read_uvarint(p, len, &d->at, &d->miniblocks) ||
        read_uvarint(p, len, &d->at, &d->total) || read_uvarint(p, len, &d->at, &first))
        return bl_pq_fail(why, "delta: header runs past the end (%zu bytes)", len);
    if (d->block == 0 || d->block % 128 || d->block > (1u << 20) || d->miniblocks == 0 ||
        d->block % d->miniblocks || (d->block / d->miniblocks) % 32)
        return bl_pq_fail(why, "delta: block of %llu values in %llu miniblocks is not a multiple of 128 "
                            "split in multiples of 32", (unsigned long long)d->block,
                       (unsigned long long)d->miniblocks);
    d->per_mini = d->block / d->miniblocks;
    d->first = (int64_t)(first >> 1) ^ -(int64_t)(first & 1);
    return 0;
}

int bl_pq_delta_count(const uint8_t *p, size_t len, uint64_t *count, bl_pq_why *why)
{
    delta_header d;
    if (delta_read_header(p, len, &d, why))
        return -1;
    *count = d.total;
    return 0;
}

int bl_pq_delta_decode(const uint8_t *p, size_t len, int64_t *out, size_t n, size_t *used, bl_pq_why *why)
{
    delta_header d;
    if (delta_read_header(p, len, &d, why))
        return -1;
    if (d.total != n)
        return bl_pq_fail(why, "delta: header declares %llu values where %zu are expected", (unsigned long long)d.total,
                       n);
    size_t at = d.at;
    if (n == 0) {
        *used = at;
        return 0;
    }
    uint64_t v = (uint64_t)d.first;
    out[0] = d.first;
    size_t i = 1;
    while (i < n) {
        uint64_t zz;
        size_t block_at = at;
        if (read_uvarint(p, len, &at, &zz))
            return bl_pq_fail(why, "delta: block header at byte %zu runs past the end", block_at);
        uint64_t min_delta = (uint64_t)((int64_t)(zz >> 1) ^ -(int64_t)(zz & 1));
        if (d.miniblocks > len - at)
            return bl_pq_fail(why, "delta: bit widths at byte %zu run past the end", at);
        const uint8_t *widths = p + at;
        at += d.miniblocks;
        for (uint64_t m = 0; m < d.miniblocks && i < n; m++) {
            int bw = widths[m];
            if (bw > 64)
                return bl_pq_fail(why, "delta: miniblock bit width %d above 64 at byte %zu", bw,
                               (size_t)(widths + m - p));
            uint64_t bytes = d.per_mini * (uint64_t)bw / 8;
            if (bytes > len - at)
                return bl_pq_fail(why, "delta: miniblock at byte %zu runs past the end", at);
            size_t take = d.per_mini < n - i ? (size_t)d.per_mini : n - i;
            for (size_t k = 0; k < take; k++) {
                v += min_delta + get_bits(p + at, (size_t)bytes, (uint64_t)k * (uint64_t)bw, bw);
                out[i++] = (int64_t)v;
            }
            at += (size_t)bytes;
        }
    }
    *used = at;
    return 0;
}

int bl_pq_plain_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, bl_pq_why *why)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (len - at < 4)
            return bl_pq_fail(why, "plain: length of value %zu at byte %zu runs past the end", i, at);
        uint32_t k = load_le32(p + at);
        at += 4;
        if (k > len - at)
            return bl_pq_fail(why, "plain: value %zu of %u bytes at byte %zu runs past the end", i, k, at);
        out[i].p = p + at;
        out[i].n = k;
        at += k;
    }
    return 0;
}

/* n lengths by DELTA_BINARY_PACKED into a fresh array; each in 0..2^31. */
static int delta_lengths(const uint8_t *p, size_t len, size_t n, int64_t **lens, size_t *used, const char *what,
                         bl_pq_why *why)
{
    *lens = malloc((n ? n : 1) * sizeof **lens);
    if (!*lens)
        return bl_pq_fail(why, "out of memory for %zu %s", n, what);
    if (bl_pq_delta_decode(p, len, *lens, n, used, why))
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((*lens)[i] < 0 || (*lens)[i] > INT32_MAX)
            return bl_pq_fail(why, "delta: %s %zu is %lld", what, i, (long long)(*lens)[i]);
    return 0;
}

int bl_pq_delta_length_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, bl_pq_why *why)
{
    int64_t *lens;
    size_t at;
    if (delta_lengths(p, len, n, &lens, &at, "lengths", why)) {
        free(lens);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if ((uint64_t)lens[i] > len - at) {
            bl_pq_fail(why, "delta_length: value %zu of %lld bytes at byte %zu runs past the end", i,
                    (long long)lens[i], at);
            free(lens);
            return -1;
        }
        out[i].p = p + at;
        out[i].n = (uint32_t)lens[i];
        at += (size_t)lens[i];
    }
    free(lens);
    return 0;
}

int bl_pq_delta_strings(const uint8_t *p, size_t len, bl_pq_str *out, size_t n, uint64_t max_bytes,
                     uint8_t **scratch, bl_pq_why *why)
{
    int64_t *prefix = NULL;
    bl_pq_str *suffix = NULL;
    size_t at;
    int r = -1;
    *scratch = NULL;
    if (delta_lengths(p, len, n, &prefix, &at, "prefix lengths", why))
        goto done;
    if (!(suffix = malloc((n ? n : 1) * sizeof *suffix))) {
        bl_pq_fail(why, "out of memory for %zu suffixes", n);
        goto done;
    }
    if (bl_pq_delta_length_strings(p + at, len - at, suffix, n, why))
        goto done;
    /* Sizes first, so that the bytes are allocated once and only as many as
     * the prefixes and suffixes justify. */
    uint64_t total = 0, prev = 0;
    for (size_t i = 0; i < n; i++) {
        if ((uint64_t)prefix[i] > prev) {
            bl_pq_fail(why, "delta_byte_array: value %zu shares %lld bytes with a previous value of %llu", i,
                    (long long)prefix[i], (unsigned long long)prev);
            goto done;
        }
        prev = (uint64_t)prefix[i] + suffix[i].n;
        if (prev > UINT32_MAX) {
            bl_pq_fail(why, "delta_byte_array: value %zu longer than 4 GiB", i);
            goto done;
        }
        total += prev;
        if (total > max_bytes) {
            bl_pq_fail(why, "delta_byte_array: values would take over %llu bytes, more than the file justifies",
                    (unsigned long long)max_bytes);
            goto done;
        }
    }
    if (!(*scratch = malloc(total ? total : 1))) {
        bl_pq_fail(why, "out of memory for %llu bytes of values", (unsigned long long)total);
        goto done;
    }
    uint8_t *w = *scratch;
    const uint8_t *last = NULL;
    for (size_t i = 0; i < n; i++) {
        out[i].p = w;
        out[i].n = (uint32_t)prefix[i] + suffix[i].n;
        if (prefix[i])
            memcpy(w, last, (size_t)prefix[i]);
        if (suffix[i].n)
            memcpy(w + prefix[i], suffix[i].p, suffix[i].n);
        last = w;
        w += out[i].n;
    }
    r = 0;
done:
    free(prefix);
    free(suffix);
    return r;
}

/* Value i of a fixed-width column from its w little-endian bytes at q
 * (INT32, INT64, FLOAT or DOUBLE): plain and byte_stream_split share it. */
static inline void put_fixed(int32_t phys, const uint8_t *q, int64_t *i64, double *f64, size_t i)
{
    switch (phys) {
    case PQ_INT32: i64[i] = (int32_t)load_le32(q); break;
    case PQ_INT64: i64[i] = (int64_t)load_le64(q); break;
    case PQ_FLOAT: {
        uint32_t u = load_le32(q);
        float f;
        memcpy(&f, &u, 4);
        f64[i] = f;
        break;
    }
    default: {
        uint64_t u = load_le64(q);
        memcpy(&f64[i], &u, 8);
    }
    }
}

int bl_pq_plain_fixed(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n, bl_pq_why *why)
{
    if (phys == PQ_BOOLEAN) {
        if ((n + 7) / 8 > len)
            return bl_pq_fail(why, "plain: %zu booleans need %zu bytes, the page holds %zu", n, (n + 7) / 8, len);
        for (size_t i = 0; i < n; i++)
            i64[i] = (p[i >> 3] >> (i & 7)) & 1;
        return 0;
    }
    size_t w = bl_pq_type_width(phys);
    if (w != 4 && w != 8)
        return bl_pq_fail(why, "plain: physical type %s not readable", bl_pq_type_name(phys));
    if (n > len / w)
        return bl_pq_fail(why, "plain: %zu values of %zu bytes need more than the %zu bytes the page holds", n, w, len);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* The common case (INT64 and DOUBLE columns) is the stored bytes. */
    if (phys == PQ_INT64 || phys == PQ_DOUBLE) {
        if (n)
            memcpy(phys == PQ_INT64 ? (void *)i64 : (void *)f64, p, n * 8);
        return 0;
    }
#endif
    for (size_t i = 0; i < n; i++) {
        const uint8_t *q = p + i * w;
        put_fixed(phys, q, i64, f64, i);
    }
    return 0;
}

int bl_pq_byte_stream_split(int32_t phys, const uint8_t *p, size_t len, int64_t *i64, double *f64, size_t n,
                         bl_pq_why *why)
{
    size_t w = bl_pq_type_width(phys);
    if (w != 4 && w != 8)
        return bl_pq_fail(why, "byte_stream_split: physical type %s not readable", bl_pq_type_name(phys));
    if (n > len / w)
        return bl_pq_fail(why, "byte_stream_split: %zu values of %zu bytes need more than the %zu bytes the page holds",
                       n, w, len);
    /* The page holds exactly n * w bytes: stream k is byte k of every value. */
    if (len != n * w)
        return bl_pq_fail(why, "byte_stream_split: %zu bytes for %zu values of %zu bytes", len, n, w);
    for (size_t i = 0; i < n; i++) {
        uint8_t b[8];
        for (size_t k = 0; k < w; k++)
            b[k] = p[k * n + i];
        put_fixed(phys, b, i64, f64, i);
    }
    return 0;
}
