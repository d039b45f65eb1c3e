/* The model table: the built-in rows, and rows registered at run time (tests). */
#include "models/model_table.h"

#include <stdio.h>
#include <string.h>

#include "engine/kernel_ops.h"

extern const bl_model bl_model_shiu2024; /* lif_shiu2024.c */
extern const bl_model bl_model_phase4c;  /* lif_phase4c.c */
extern const bl_model bl_model_equations; /* eq_row.c: a model written in the model language */

/* The built-in rows, in id order: a model's id is its position here (the
 * public BL_PRESET_* constants name the first two), so a new row goes last. */
static const bl_model *const builtin[] = {&bl_model_shiu2024, &bl_model_phase4c, &bl_model_equations};
enum { N_BUILTIN = sizeof builtin / sizeof builtin[0], MAX_REGISTERED = 6 };

static const bl_model *registered[MAX_REGISTERED];
static int n_registered;

static int n_models(void) { return N_BUILTIN + n_registered; }

const bl_model *bl_model_of(bl_preset preset)
{
    int i = (int)preset;
    if (i < 0 || i >= n_models())
        return NULL;
    return i < N_BUILTIN ? builtin[i] : registered[i - N_BUILTIN];
}

const bl_model *bl_model_by_name(const char *name, bl_preset *preset)
{
    const bl_model *m;
    for (int i = 0; (m = bl_model_of((bl_preset)i)) != NULL; i++)
        if (!strcmp(m->name, name)) {
            if (preset)
                *preset = (bl_preset)i;
            return m;
        }
    return NULL;
}

const char *bl_model_names(char *buf, size_t size)
{
    size_t used = 0;
    const bl_model *m;
    if (size)
        buf[0] = 0;
    for (int i = 0; (m = bl_model_of((bl_preset)i)) != NULL && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", m->name);
    return buf;
}

bl_status bl_model_register(const bl_model *m, bl_preset *preset, bl_error *err)
{
    if (!m || !m->name || !m->ref || !m->part || !m->make_consts || !m->rest_is_fixed_point ||
        m->part->n_fields < 2 || m->part->n_fields > BL_PART_MAX_FIELDS)
        return bl_fail(err, BL_ERR_INVALID, "model row '%s' is incomplete", m && m->name ? m->name : "?");
    /* Each field is range, slot, both, or arrays (kernel_ops.h: 1-4); v and
     * g are per-neuron entries (results, probes, settle), and a model's
     * state arrays need their number of lanes. */
    for (int f = 0; f < m->part->n_fields; f++) {
        unsigned w = m->part->field[f].where;
        int arrays_ok = w != BL_PART_ARRAYS || (f >= 2 && m->part->lanes);
        if (!m->part->field[f].size || !w || w > BL_PART_ARRAYS || !arrays_ok)
            return bl_fail(err, BL_ERR_INVALID, "model row '%s': partition field %d is neither range, slot nor "
                           "arrays with lanes (or v/g are not per-neuron entries)", m->name, f);
    }
    if (bl_model_by_name(m->name, NULL))
        return bl_fail(err, BL_ERR_EXISTS, "model '%s' is already in the table", m->name);
    if (n_registered == MAX_REGISTERED)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "the model table is full (%d rows registered)", MAX_REGISTERED);
    registered[n_registered] = m;
    *preset = (bl_preset)(N_BUILTIN + n_registered++);
    return BL_OK;
}
