/* Checks on parsed JSON shared by the connectome and record readers. */
#include "core/json_check.h"

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
