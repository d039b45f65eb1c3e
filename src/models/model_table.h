/* The model table: the built-in rows (model_table.c), then rows registered at
 * run time (tests). A model's id (bl_preset) is its position in the table. */
#ifndef BL_MODELS_MODEL_TABLE_H
#define BL_MODELS_MODEL_TABLE_H

#include "models/model_row.h"

/* The row of a preset (NULL when there is none). */
const bl_model *bl_model_of(bl_preset preset);
/* The row called name, and its id in *preset when preset is not NULL. */
const bl_model *bl_model_by_name(const char *name, bl_preset *preset);
/* Known model names, comma-separated, for messages ("known: ..."), into buf
 * (cut short at size); returns buf. */
const char *bl_model_names(char *buf, size_t size);
/* Add a row at run time (tests register a toy model this way); *preset is
 * its id for bl_lif_params. Not thread-safe: register before any network is
 * created. The row must outlive every network that uses it. */
bl_status bl_model_register(const bl_model *m, bl_preset *preset, bl_error *err);

#endif
