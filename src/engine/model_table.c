/* The model table: the built-in rows, and rows registered at run time (tests). */
#include "engine/model_table.h"

#include <stdio.h>
#include <string.h>

extern const bl_model bl_model_shiu2024; /* kernel_shiu2024.c */
extern const bl_model bl_model_phase4c;  /* kernel_phase4c.c */

enum { MAX_MODELS = 8 };
/* Index = bl_preset value: the built-ins keep their public enum values. */
static const bl_model *table[MAX_MODELS] = {&bl_model_shiu2024, &bl_model_phase4c};
static int n_models = 2;
static char names[256];

const bl_model *bl_model_of(bl_preset preset)
{
    return (int)preset >= 0 && (int)preset < n_models ? table[preset] : NULL;
}

const bl_model *bl_model_by_name(const char *name)
{
    for (int i = 0; i < n_models; i++)
        if (!strcmp(table[i]->name, name))
            return table[i];
    return NULL;
}

const char *bl_model_names(void)
{
    size_t used = 0;
    names[0] = 0;
    for (int i = 0; i < n_models && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", table[i]->name);
    return names;
}

bl_status bl_model_register(const bl_model *m, bl_preset *preset, bl_error *err)
{
    if (!m || !m->name || !m->ref || !m->part || !m->make_consts || !m->rest_is_fixed_point ||
        m->part->n_fields < 2 || m->part->n_fields > BL_PART_MAX_FIELDS)
        return bl_fail(err, BL_ERR_INVALID, "model row '%s' is incomplete", m && m->name ? m->name : "?");
    if (bl_model_by_name(m->name))
        return bl_fail(err, BL_ERR_EXISTS, "model '%s' is already in the table", m->name);
    if (n_models == MAX_MODELS)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "the model table is full (%d rows)", MAX_MODELS);
    table[n_models] = m;
    *preset = (bl_preset)n_models++;
    return BL_OK;
}
