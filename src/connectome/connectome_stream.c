/* bl_npy_stream: a connectome's .npy files read once and hashed as read
 * (connectome_impl.h). Reading straight into the caller's array and hashing
 * that array is one copy of every byte, the same as mapping the file and
 * copying out of the map, but a file truncated under us gives a short read
 * (an error message) where a mapping would give SIGBUS. */
#include "connectome/connectome_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"

const char *const bl_src_names[BL_SRC_COUNT] = {"manifest.json", "offsets.npy", "targets.npy",
                                                "counts.npy", "neurons.csv"};

static void stream_free(bl_npy_stream *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    if (s->hash) {
        char sink[BL_SHA256_HEX_LEN + 1];
        bl_sha256_finish(s->hash, sink);
        s->hash = NULL;
    }
    free(s->prefix);
    s->prefix = NULL;
}

bl_status bl_npy_stream_open(const char *path, const bl_src_digest *want, bl_dtype dtype,
                             bl_npy_stream *s, bl_error *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->path = path;
    bl_status st = bl_open_regular(path, &s->fd, &s->size, err);
    if (st)
        return st;
    if (want && s->size != want->bytes) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: size %" PRIu64 " bytes, manifest says %" PRIu64, path,
                     s->size, want->bytes);
        stream_free(s);
        return st;
    }
    s->prefix_len = s->size < BL_NPY_PREFIX_BYTES ? (size_t)s->size : BL_NPY_PREFIX_BYTES;
    s->prefix = malloc(s->prefix_len ? s->prefix_len : 1);
    s->hash = bl_sha256_create();
    if (!s->prefix || !s->hash) {
        stream_free(s);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot allocate a reader", path);
    }
    if (bl_read_full(s->fd, s->prefix, s->prefix_len) != 0) {
        st = bl_fail(err, BL_ERR_IO, "%s: %s in the first %zu bytes", path,
                     errno ? strerror(errno) : "file shrank while being read", s->prefix_len);
        stream_free(s);
        return st;
    }
    bl_sha256_update(s->hash, s->prefix, s->prefix_len);
    if ((st = bl_npy_parse_header(path, s->prefix, s->prefix_len, s->size, &s->header, err))) {
        stream_free(s);
        return st;
    }
    if (s->header.dtype != dtype || s->header.ndim != 1) {
        st = bl_fail(err, BL_ERR_FORMAT, "%s: %d-d '%s' array, expected 1-d '%s'", path,
                     s->header.ndim, bl_dtype_descr(s->header.dtype), bl_dtype_descr(dtype));
        stream_free(s);
        return st;
    }
    s->pos = s->header.data_offset;
    return BL_OK;
}

bl_status bl_npy_stream_read(bl_npy_stream *s, void *buf, uint64_t n, bl_error *err)
{
    size_t item = bl_dtype_size(s->header.dtype);
    uint64_t bytes = n * item;
    if (n > s->header.count || bytes > s->size - s->pos)
        return bl_fail(err, BL_ERR_INTERNAL, "%s: read past the end of the array", s->path);
    unsigned char *out = buf;
    /* First whatever of the request the prefix already holds (hashed with it). */
    if (s->pos < s->prefix_len) {
        uint64_t have = s->prefix_len - s->pos;
        size_t k = (size_t)(have < bytes ? have : bytes);
        memcpy(out, s->prefix + s->pos, k);
        out += k;
        bytes -= k;
        s->pos += k;
    }
    if (bytes) {
        if (bl_read_full(s->fd, out, (size_t)bytes) != 0)
            return bl_fail(err, BL_ERR_IO, "%s: %s at byte %" PRIu64, s->path,
                           errno ? strerror(errno) : "file shrank while being read", s->pos);
        /* Hashed from the destination: the digest covers the very bytes used. */
        bl_sha256_update(s->hash, out, (size_t)bytes);
        s->pos += bytes;
    }
    return BL_OK;
}

bl_status bl_npy_stream_close(bl_npy_stream *s, const bl_src_digest *want, bl_src_digest *out,
                              bl_error *err)
{
    bl_status st = BL_OK;
    if (s->pos != s->size) {
        st = bl_fail(err, BL_ERR_INTERNAL, "%s: %" PRIu64 " of %" PRIu64 " bytes read", s->path,
                     s->pos, s->size);
        stream_free(s);
        return st;
    }
    bl_src_digest got = {s->size, ""};
    bl_sha256_finish(s->hash, got.sha256);
    s->hash = NULL;
    stream_free(s);
    if (want && strcmp(got.sha256, want->sha256))
        return bl_fail(err, BL_ERR_INVALID, "%s: SHA-256 %s differs from the manifest's %s", s->path,
                       got.sha256, want->sha256);
    if (out)
        *out = got;
    return BL_OK;
}
