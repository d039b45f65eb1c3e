/* Page codecs over Debian's libraries (libsnappy, zlib, libzstd, libbrotli,
 * liblz4). Every decompression writes into a buffer of exactly the size the
 * page header declares (the reader has already checked that size against
 * what the page can justify) and fails if the data would produce more or
 * fewer bytes: no codec ever grows a buffer on the data's word. */
#include <stdlib.h>
#include <string.h>

#include <brotli/decode.h>
#include <lz4.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include "io/parquet.h"

const char *bl_pq_codec_name(int32_t codec)
{
    switch (codec) {
    case PQ_UNCOMPRESSED: return "uncompressed";
    case PQ_SNAPPY: return "snappy";
    case PQ_GZIP: return "gzip";
    case PQ_LZO: return "lzo";
    case PQ_BROTLI: return "brotli";
    case PQ_LZ4: return "lz4 (hadoop)";
    case PQ_ZSTD: return "zstd";
    case PQ_LZ4_RAW: return "lz4_raw";
    }
    return "unknown";
}

const char *bl_pq_encoding_name(int32_t e)
{
    switch (e) {
    case PQ_PLAIN: return "plain";
    case PQ_PLAIN_DICTIONARY: return "plain_dictionary";
    case PQ_RLE: return "rle";
    case PQ_BIT_PACKED: return "bit_packed";
    case PQ_DELTA_BINARY_PACKED: return "delta_binary_packed";
    case PQ_DELTA_LENGTH_BYTE_ARRAY: return "delta_length_byte_array";
    case PQ_DELTA_BYTE_ARRAY: return "delta_byte_array";
    case PQ_RLE_DICTIONARY: return "rle_dictionary";
    case PQ_BYTE_STREAM_SPLIT: return "byte_stream_split";
    }
    return "unknown encoding";
}

/* The most each codec's format can expand one input byte (deflate 1032:1,
 * snappy about 21:1 with its 64-byte copies of 3-byte tags, LZ4 about 255:1);
 * zstd and brotli can exceed any useful bound, so 1032 stands for them and
 * the reader lets the page's value count justify more. */
uint64_t bl_pq_codec_ratio(int32_t codec)
{
    switch (codec) {
    case PQ_UNCOMPRESSED: return 1;
    case PQ_SNAPPY: return 32;
    case PQ_GZIP: return 1032;
    case PQ_BROTLI: return 1032;
    case PQ_ZSTD: return 1032;
    case PQ_LZ4:
    case PQ_LZ4_RAW: return 256;
    }
    return 0;
}

static int inflate_exact(const uint8_t *src, size_t n, uint8_t *dst, size_t dn, bl_pq_why *why)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 32: a gzip or a zlib header, detected. */
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return bl_pq_fail(why, "gzip: cannot start zlib");
    /* Page sizes are Thrift i32, so one call with everything suffices. */
    if (n > UINT32_MAX || dn > UINT32_MAX) {
        inflateEnd(&z);
        return bl_pq_fail(why, "gzip: page over 4 GiB");
    }
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)dn;
    int r = inflate(&z, Z_FINISH);
    size_t out_left = z.avail_out;
    inflateEnd(&z);
    if (r != Z_STREAM_END)
        return bl_pq_fail(why, "gzip: %s after %zu of %zu bytes", r == Z_DATA_ERROR ? "corrupt data"
                            : out_left == 0 ? "more data than the page declares" : "data ends early",
                       dn - out_left, dn);
    if (out_left)
        return bl_pq_fail(why, "gzip: %zu bytes where the page declares %zu", dn - out_left, dn);
    return 0;
}

/* The deprecated LZ4 codec: Hadoop's framing (big-endian decompressed and
 * compressed sizes before each LZ4 block), as parquet-mr and the Rust
 * writer produce; some writers put one bare block instead, tried second. */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dn)
{
    size_t in = 0, out = 0;
    while (in < n) {
        if (n - in < 8)
            return -1;
        uint32_t ulen = be32(src + in), clen = be32(src + in + 4);
        in += 8;
        if (clen > n - in || ulen > dn - out || clen > INT32_MAX || ulen > INT32_MAX)
            return -1;
        int r = LZ4_decompress_safe((const char *)src + in, (char *)dst + out, (int)clen, (int)ulen);
        if (r < 0 || (uint32_t)r != ulen)
            return -1;
        in += clen;
        out += ulen;
    }
    return out == dn ? 0 : -1;
}

void bl_pq_codecs_free(bl_pq_codecs *cx)
{
    if (cx && cx->zstd)
        ZSTD_freeDCtx(cx->zstd);
    if (cx)
        cx->zstd = NULL;
}

int bl_pq_decompress(int32_t codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn, bl_pq_codecs *cx,
                     bl_pq_why *why)
{
    switch (codec) {
    case PQ_UNCOMPRESSED:
        if (n != dn)
            return bl_pq_fail(why, "uncompressed page of %zu bytes declares %zu", n, dn);
        memcpy(dst, src, n);
        return 0;
    case PQ_SNAPPY: {
        size_t len;
        if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK)
            return bl_pq_fail(why, "snappy: corrupt length header");
        if (len != dn)
            return bl_pq_fail(why, "snappy: data holds %zu bytes where the page declares %zu", len, dn);
        size_t out = dn;
        if (snappy_uncompress((const char *)src, n, (char *)dst, &out) != SNAPPY_OK || out != dn)
            return bl_pq_fail(why, "snappy: corrupt data");
        return 0;
    }
    case PQ_GZIP:
        return inflate_exact(src, n, dst, dn, why);
    case PQ_ZSTD: {
        /* One context per reader: creating one per page costs more than small pages. */
        if (cx && !cx->zstd && !(cx->zstd = ZSTD_createDCtx()))
            return bl_pq_fail(why, "zstd: out of memory for a context");
        size_t r = cx ? ZSTD_decompressDCtx(cx->zstd, dst, dn, src, n) : ZSTD_decompress(dst, dn, src, n);
        if (ZSTD_isError(r))
            return bl_pq_fail(why, "zstd: %s", ZSTD_getErrorName(r));
        if (r != dn)
            return bl_pq_fail(why, "zstd: %zu bytes where the page declares %zu", r, dn);
        return 0;
    }
    case PQ_BROTLI: {
        size_t out = dn;
        if (BrotliDecoderDecompress(n, src, &out, dst) != BROTLI_DECODER_RESULT_SUCCESS)
            return bl_pq_fail(why, "brotli: corrupt data or more than the %zu bytes the page declares", dn);
        if (out != dn)
            return bl_pq_fail(why, "brotli: %zu bytes where the page declares %zu", out, dn);
        return 0;
    }
    case PQ_LZ4:
        if (lz4_hadoop(src, n, dst, dn) == 0)
            return 0;
        /* a bare block instead */
        __attribute__((fallthrough));
    case PQ_LZ4_RAW: {
        if (n > INT32_MAX || dn > INT32_MAX)
            return bl_pq_fail(why, "lz4: page over 2 GiB");
        int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dn);
        if (r < 0)
            return bl_pq_fail(why, "lz4: corrupt data or more than the %zu bytes the page declares", dn);
        if ((size_t)r != dn)
            return bl_pq_fail(why, "lz4: %d bytes where the page declares %zu", r, dn);
        return 0;
    }
    }
    return bl_pq_fail(why, "codec %s (%d) is not supported (supported: uncompressed, snappy, gzip, zstd, "
                        "brotli, lz4, lz4_raw)", bl_pq_codec_name(codec), (int)codec);
}

int bl_pq_compress(int32_t codec, const uint8_t *src, size_t n, uint8_t **out, size_t *on, bl_pq_why *why)
{
    *out = NULL;
    if (codec == PQ_UNCOMPRESSED) {
        if (!(*out = malloc(n ? n : 1)))
            return bl_pq_fail(why, "out of memory for a page of %zu bytes", n);
        memcpy(*out, src, n);
        *on = n;
        return 0;
    }
    if (codec == PQ_SNAPPY) {
        size_t cap = snappy_max_compressed_length(n);
        if (!(*out = malloc(cap)))
            return bl_pq_fail(why, "out of memory for a page of %zu bytes", cap);
        *on = cap;
        if (snappy_compress((const char *)src, n, (char *)*out, on) != SNAPPY_OK) {
            free(*out);
            *out = NULL;
            return bl_pq_fail(why, "snappy: compression failed");
        }
        return 0;
    }
    if (codec == PQ_ZSTD) {
        size_t cap = ZSTD_compressBound(n);
        if (!(*out = malloc(cap)))
            return bl_pq_fail(why, "out of memory for a page of %zu bytes", cap);
        size_t r = ZSTD_compress(*out, cap, src, n, 3);
        if (ZSTD_isError(r)) {
            free(*out);
            *out = NULL;
            return bl_pq_fail(why, "zstd: %s", ZSTD_getErrorName(r));
        }
        *on = r;
        return 0;
    }
    return bl_pq_fail(why, "the writer does not write codec %s", bl_pq_codec_name(codec));
}
