/* Private to src/connectome/select*.c: the state of one bl_select call. */
#ifndef BL_SELECT_IMPL_H
#define BL_SELECT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/select.h"

typedef struct cJSON cJSON;

typedef struct bl_sel_ctx {
    const bl_connectome *c;
    bl_select_options opt;
    bl_select_fault *fault; /* may be NULL */
    bl_error *err;
    const char *const *column_names; /* for key paths: select.NAME */
    size_t n_column_names;
    int64_t depth_lo, depth_hi;
} bl_sel_ctx;

/* Fail at key (NULL: the selector as a whole) / column / sub / index (see
 * bl_select_fault), with the message "PATH: message" in x->err. */
bl_status bl_sel_fail(bl_sel_ctx *x, bl_status status, const char *key, long column, const char *sub, long index,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* Text for a one-line message: control characters escaped, long text cut. */
void bl_sel_printable(char *dst, size_t size, const char *text, size_t len);
/* Shortest "%.*g" text (15 to 17 digits) that reads back as the same double. */
void bl_sel_number(char *dst, size_t size, double x);

/* The metadata query sel->columns (select_query.c): the matching neurons
 * (sorted, never empty) into *out, and "select": {...} added to json. */
bl_status bl_sel_query(bl_sel_ctx *x, const bl_selector *sel, int32_t **out, size_t *n, cJSON *json);

#endif
