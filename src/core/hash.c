#include "brainlesslab/hash.h"

#include "core/file.h"

#include <errno.h>
#include <unistd.h>

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bl_sha256 {
    EVP_MD_CTX *ctx;
};

static void to_hex(const unsigned char *digest, char hex[BL_SHA256_HEX_LEN + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[BL_SHA256_HEX_LEN] = '\0';
}

bl_sha256 *bl_sha256_create(void)
{
    bl_sha256 *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(h->ctx);
        free(h);
        return NULL;
    }
    return h;
}

void bl_sha256_update(bl_sha256 *h, const void *data, size_t len)
{
    if (len)
        EVP_DigestUpdate(h->ctx, data, len);
}

void bl_sha256_finish(bl_sha256 *h, char hex[BL_SHA256_HEX_LEN + 1])
{
    unsigned char digest[32];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->ctx, digest, &n);
    to_hex(digest, hex);
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

void bl_sha256_buffer(const void *data, size_t len, char hex[BL_SHA256_HEX_LEN + 1])
{
    unsigned char digest[32];
    unsigned int n = 0;
    EVP_Digest(data, len, digest, &n, EVP_sha256(), NULL);
    to_hex(digest, hex);
}

bl_status bl_sha256_file(const char *path, char hex[BL_SHA256_HEX_LEN + 1], uint64_t *bytes,
                         bl_error *err)
{
    int fd = -1;
    bl_status st = bl_open_regular(path, &fd, NULL, err); /* never a FIFO or /dev/zero */
    if (st)
        return st;
    bl_sha256 *h = bl_sha256_create();
    if (!h) {
        close(fd);
        return bl_fail(err, BL_ERR_NOMEM, "%s: cannot create a SHA-256 context", path);
    }
    static const size_t chunk = 1 << 20;
    unsigned char *buf = malloc(chunk);
    uint64_t total = 0;
    int failed = !buf;
    while (buf) {
        ssize_t n = read(fd, buf, chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            failed = n < 0;
            break;
        }
        bl_sha256_update(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    free(buf);
    close(fd);
    bl_sha256_finish(h, hex);
    if (failed)
        return bl_fail(err, BL_ERR_IO, "%s: read error while hashing", path);
    if (bytes)
        *bytes = total;
    return BL_OK;
}
