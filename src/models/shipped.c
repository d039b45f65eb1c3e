/* The shipped model files (models/NAME.toml), compiled into the library by
 * cmake/shipped_models.cmake, and the preset aliases: a shipped model whose
 * name is also a row of the model table (shiu2024) is what that preset
 * computes, and `[model] preset = "NAME"` runs the row's hand-written kernel
 * for it. tests/cli/test_equation_plan.sh proves the two byte-identical on
 * the larva plan; docs/models.md ("Shipped models and aliases") says why the
 * alias goes this way and not the other (recognising a model's text and
 * swapping in the hand-written kernel). */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/eqmodel.h"
#include "models/eq_row.h"
#include "models/model_table.h"
#include "plan/toml_bridge.h"
#include "shipped_models.h"

size_t bl_eq_shipped_count(void) { return sizeof bl_shipped_rows / sizeof bl_shipped_rows[0] - 1; }

const char *bl_eq_shipped_name(size_t i) { return i < bl_eq_shipped_count() ? bl_shipped_rows[i].name : NULL; }

const char *bl_eq_shipped_text(const char *name, size_t *len)
{
    for (size_t i = 0; name && i < bl_eq_shipped_count(); i++)
        if (!strcmp(bl_shipped_rows[i].name, name)) {
            if (len)
                *len = bl_shipped_rows[i].len;
            return bl_shipped_rows[i].text;
        }
    return NULL;
}

int bl_eq_shipped_is_preset(const char *name)
{
    return bl_eq_shipped_text(name, NULL) && bl_model_by_name(name, NULL) && strcmp(name, "equations");
}

bl_status bl_eq_model_load_shipped(const char *name, double dt_s, size_t n_set, const char *const *set_names,
                                   const char *const *set_values, bl_eq_model **out, bl_error *err)
{
    *out = NULL;
    size_t len;
    const char *text = bl_eq_shipped_text(name, &len);
    if (!text) {
        char known[512];
        size_t o = 0;
        known[0] = 0;
        for (size_t i = 0; i < bl_eq_shipped_count() && o < sizeof known; i++)
            o += (size_t)snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "", bl_eq_shipped_name(i));
        return bl_fail(err, BL_ERR_INVALID, "no shipped model '%.64s' (shipped: %s)", name ? name : "", known);
    }
    char label[96];
    snprintf(label, sizeof label, "models/%s.toml (shipped)", name);
    bl_toml_doc *doc = NULL;
    bl_status st = bl_toml_parse_text(text, len, label, &doc, err);
    if (st)
        return st;
    st = bl_eq_model_from_toml(bl_toml_table_get(bl_toml_root(doc), "model"), label, dt_s, n_set, set_names,
                               set_values, 0, out, NULL, err);
    bl_toml_destroy(doc);
    return st;
}
