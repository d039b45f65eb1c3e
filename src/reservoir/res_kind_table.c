/* The node-kind table (res_kind.h): the rows, and names by kind. */
#include <stdio.h>
#include <string.h>

#include "reservoir/res_kind.h"

extern const bl_res_kind_ops bl_res_kind_falandays, bl_res_kind_sorn;

/* Indexed by bl_res_kind. */
static const bl_res_kind_ops *const table[] = {&bl_res_kind_falandays, &bl_res_kind_sorn};
enum { N_KINDS = sizeof table / sizeof table[0] };

const bl_res_kind_ops *bl_res_kind_of(bl_res_kind kind)
{
    return (unsigned)kind < N_KINDS ? table[kind] : NULL;
}

const char *bl_res_kind_name(bl_res_kind kind)
{
    const bl_res_kind_ops *k = bl_res_kind_of(kind);
    return k ? k->name : "unknown";
}

int bl_res_kind_parse(const char *name, bl_res_kind *out)
{
    for (int k = 0; k < N_KINDS; k++)
        if (!strcmp(name, table[k]->name)) {
            *out = table[k]->kind;
            return 0;
        }
    return -1;
}

const char *bl_res_kind_names(char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = 0;
    for (int k = 0; k < N_KINDS && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s\"%s\"", k ? " or " : "", table[k]->name);
    return buf;
}
