/* Text for one-line messages and canonical JSON, shared by the plan reader
 * and the selector (private to src/). */
#ifndef BL_CORE_TEXT_H
#define BL_CORE_TEXT_H

#include <stddef.h>

/* Copy len bytes of text for a message: control characters escaped (\n, \t,
 * \xNN), long text cut with "..."; always NUL-terminated (size >= 8). */
void bl_text_printable(char *dst, size_t size, const char *text, size_t len);
/* Shortest "%.*g" (15 to 17 digits) that reads back as the same double, so
 * that 0.1 shows as 0.1 in messages and canonical JSON. */
void bl_text_number(char *dst, size_t size, double x);

#endif
