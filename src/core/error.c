#include "brainlesslab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bl_status bl_fail(bl_error *err, bl_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

bl_status bl_fail_context(bl_error *err, const char *fmt, ...)
{
    if (!err)
        return BL_ERR_INTERNAL;
    char prefix[BL_ERROR_MESSAGE_MAX];
    char old[BL_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    snprintf(err->message, sizeof err->message, "%s: %s", prefix, old);
    return err->status;
}

void bl_error_clear(bl_error *err)
{
    if (err) {
        err->status = BL_OK;
        err->message[0] = '\0';
    }
}

const char *bl_status_name(bl_status status)
{
    switch (status) {
    case BL_OK: return "ok";
    case BL_ERR_IO: return "io error";
    case BL_ERR_FORMAT: return "format error";
    case BL_ERR_INVALID: return "invalid input";
    case BL_ERR_NOMEM: return "out of memory";
    case BL_ERR_EXISTS: return "already exists";
    case BL_ERR_UNSUPPORTED: return "unsupported";
    case BL_ERR_INTERNAL: return "internal error";
    }
    return "unknown error";
}
