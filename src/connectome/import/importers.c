/* The importer table: one row per source (each in its own file here), in the
 * order `brainlesslab import --list` prints them. */
#include <string.h>

#include "brainlesslab/import.h"
#include "connectome/import/import_common.h"

static const bl_importer *const table[] = {
    &bl_importer_larva,
    &bl_importer_celegans,
    &bl_importer_flywire,
    &bl_importer_flywire_codex,
    &bl_importer_malecns,
    &bl_importer_neuprint,
    &bl_importer_phase4c,
    &bl_importer_edges,
};

size_t bl_importer_count(void) { return sizeof table / sizeof table[0]; }

const bl_importer *bl_importer_at(size_t i) { return i < bl_importer_count() ? table[i] : NULL; }

const bl_importer *bl_importer_find(const char *name)
{
    for (size_t i = 0; name && i < bl_importer_count(); i++)
        if (!strcmp(table[i]->name, name))
            return table[i];
    return NULL;
}

const char *bl_import_arg(const bl_import_args *args, const char *name)
{
    for (size_t i = 0; args && i < args->n; i++)
        if (!strcmp(args->names[i], name))
            return args->values[i];
    return NULL;
}
