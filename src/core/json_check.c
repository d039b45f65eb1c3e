/* Checks on parsed JSON shared by the connectome and record readers, and
 * the exact printer every writer of JSON uses. */
#include "core/json_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *bl_json_duplicate_key(const cJSON *v)
{
    for (const cJSON *a = v ? v->child : NULL; a; a = a->next) {
        if (cJSON_IsObject(v) && a->string)
            for (const cJSON *b = a->next; b; b = b->next)
                if (b->string && !strcmp(a->string, b->string))
                    return a->string;
        const char *d = bl_json_duplicate_key(a);
        if (d)
            return d;
    }
    return NULL;
}

/* A number node as the raw text cJSON would print for it, but exact. */
static int exact_numbers(cJSON *v)
{
    for (; v; v = v->next) {
        if (cJSON_IsNumber(v)) {
            char text[40];
            double d = v->valuedouble;
            if (isnan(d) || isinf(d))
                snprintf(text, sizeof text, "null");
            else {
                snprintf(text, sizeof text, "%1.15g", d);
                if (strtod(text, NULL) != d)
                    snprintf(text, sizeof text, "%1.17g", d);
            }
            char *raw = strdup(text);
            if (!raw)
                return 0;
            v->type = cJSON_Raw;
            v->valuestring = raw;
        } else if (v->child && !exact_numbers(v->child))
            return 0;
    }
    return 1;
}

char *bl_json_print(const cJSON *v, int pretty)
{
    cJSON *copy = v ? cJSON_Duplicate(v, 1) : NULL;
    char *text = NULL;
    if (copy && exact_numbers(copy))
        text = pretty ? cJSON_Print(copy) : cJSON_PrintUnformatted(copy);
    cJSON_Delete(copy);
    return text;
}
