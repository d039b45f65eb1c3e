/* Errors: every public function returns a bl_status and, on failure, fills a
 * bl_error whose message names the file, key or index at fault. The library
 * never prints and never exits; the caller decides what to do with the message. */
#ifndef BRAINLESSLAB_ERROR_H
#define BRAINLESSLAB_ERROR_H

#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_status {
    BL_OK = 0,
    BL_ERR_IO = 1,       /* cannot open, read or write a file */
    BL_ERR_FORMAT = 2,   /* malformed input: bad header, dtype, shape, syntax */
    BL_ERR_INVALID = 3,  /* well-formed but invalid: out of range, not monotonic, unknown id */
    BL_ERR_NOMEM = 4,    /* allocation failed or a size would overflow */
    BL_ERR_EXISTS = 5,   /* refusing to overwrite */
    BL_ERR_UNSUPPORTED = 6,
    BL_ERR_INTERNAL = 7, /* a broken invariant: a bug in BrainlessLab */
    BL_ERR_CANCELLED = 8 /* the caller asked the run to stop (bl_context_set_cancel) */
} bl_status;

#define BL_ERROR_MESSAGE_MAX 1024

typedef struct bl_error {
    bl_status status;
    char message[BL_ERROR_MESSAGE_MAX];
} bl_error;

/* Record a failure (printf-style) and return its status, so that callers can
 * write `return bl_fail(err, BL_ERR_FORMAT, "%s: ...", path);`. err may be NULL. */
BL_API bl_status bl_fail(bl_error *err, bl_status status, const char *fmt, ...)
#if defined(__GNUC__)
           __attribute__((format(printf, 3, 4)))
#endif
           ;

/* Prefix an existing message with context ("while loading X: ..."). */
BL_API bl_status bl_fail_context(bl_error *err, const char *fmt, ...)
#if defined(__GNUC__)
           __attribute__((format(printf, 2, 3)))
#endif
           ;

BL_API void bl_error_clear(bl_error *err);
BL_API const char *bl_status_name(bl_status status);

#ifdef __cplusplus
}
#endif
#endif
