/* SHA-256 through OpenSSL libcrypto. Hex digests are 64 lowercase characters. */
#ifndef BRAINLESSLAB_HASH_H
#define BRAINLESSLAB_HASH_H

#include "brainlesslab/export.h"
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BL_SHA256_HEX_LEN 64

BL_API bl_status bl_sha256_file(const char *path, char hex[BL_SHA256_HEX_LEN + 1], uint64_t *bytes,
                                bl_error *err);
BL_API void bl_sha256_buffer(const void *data, size_t len, char hex[BL_SHA256_HEX_LEN + 1]);

/* Incremental hashing for streams of events. */
typedef struct bl_sha256 bl_sha256;
BL_API bl_sha256 *bl_sha256_create(void);
BL_API void bl_sha256_update(bl_sha256 *h, const void *data, size_t len);
BL_API void bl_sha256_finish(bl_sha256 *h, char hex[BL_SHA256_HEX_LEN + 1]); /* also frees h */

#ifdef __cplusplus
}
#endif
#endif
