/* Text for messages and canonical JSON (text.h): one copy for the plan
 * reader and the selector, so a value is shown the same way by both. */
#include "core/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bl_text_printable(char *dst, size_t size, const char *text, size_t len)
{
    /* Leave room for an escape and the "..." of a cut (as plans print values). */
    size_t o = 0;
    if (size < 8) {
        if (size)
            dst[0] = '\0';
        return;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)text[i];
        char esc[8];
        if (ch == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (ch == '\t')
            snprintf(esc, sizeof esc, "\\t");
        else if (ch < 0x20 || ch == 0x7f)
            snprintf(esc, sizeof esc, "\\x%02x", ch);
        else {
            esc[0] = (char)ch;
            esc[1] = '\0';
        }
        size_t n = strlen(esc);
        if (o + n + 4 >= size) {
            memcpy(dst + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(dst + o, esc, n);
        o += n;
    }
    dst[o] = '\0';
}

void bl_text_number(char *dst, size_t size, double x)
{
    /* Shortest text that reads back as the same double (0.1 shows as 0.1):
     * the canonical JSON of a range must not depend on printf's default. */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(dst, size, "%.*g", digits, x);
        if (strtod(dst, NULL) == x)
            return;
    }
}
