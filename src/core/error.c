#include "brainlesslab/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message is one line of text: control bytes quoted from a file or a key
 * (a newline, a tab, an escape sequence) are written as \xNN, so that no
 * input can break a message across lines or drive a terminal (issue 16,
 * finding 12; found again by fuzz_bundle in a node.json key). */
static void one_line(char *msg, size_t size)
{
    if (!strpbrk(msg, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12"
                      "\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"))
        return;
    char out[BL_ERROR_MESSAGE_MAX];
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < sizeof out; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != 0x7f) {
            out[o++] = (char)c;
        } else if (o + 5 < sizeof out) {
            snprintf(out + o, sizeof out - o, "\\x%02x", c);
            o += 4;
        } else {
            break;
        }
    }
    out[o] = '\0';
    snprintf(msg, size, "%s", out);
}

bl_status bl_fail(bl_error *err, bl_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        one_line(err->message, sizeof err->message);
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
    one_line(err->message, sizeof err->message);
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
    case BL_ERR_CANCELLED: return "cancelled";
    }
    return "unknown error";
}
