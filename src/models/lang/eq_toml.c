/* A model file: a TOML document with a [model] table (read with the plan's
 * TOML bridge, toml++), handed to bl_eq_model_compile. Unknown keys are
 * refused, so a misspelt "treshold" is not silently ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"
#include "plan/toml_bridge.h"

static const char *const text_keys[] = {"equations", "method", "threshold", "reset", "refractory",
                                        "on_pre", "on_post", "on_input", "weight", "delay", "preset"};

/* Parameter values: strings as they are; numbers as the shortest text that
 * reads back to the same double (integers exactly). */
static bl_status table(const char *path, const bl_toml_node *t, const char *what, size_t *n, const char ***names,
                       const char ***values, char ***owned, size_t *n_owned, bl_error *err)
{
    size_t k = bl_toml_table_size(t);
    if (k > BL_EQ_MAX_PARAMS)
        return bl_fail(err, BL_ERR_INVALID, "%s: [model.%s]: more than %u entries", path, what, BL_EQ_MAX_PARAMS);
    *names = calloc(k + 1, sizeof **names);
    *values = calloc(k + 1, sizeof **values);
    *owned = calloc(k + 1, sizeof **owned);
    if (!*names || !*values || !*owned)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    for (size_t j = 0; j < k; j++) {
        size_t len;
        const char *key = bl_toml_table_key(t, j, &len);
        const bl_toml_node *v = bl_toml_table_value(t, j);
        if (!key || strlen(key) != len)
            return bl_fail(err, BL_ERR_FORMAT, "%s: [model.%s]: a key holds a NUL byte", path, what);
        const char *s;
        int64_t iv;
        double dv;
        char buf[64];
        if (bl_toml_get_string(v, &s, &len)) {
            if (strlen(s) != len)
                return bl_fail(err, BL_ERR_FORMAT, "%s: [model.%s] %s: holds a NUL byte", path, what, key);
        } else if (bl_toml_get_int(v, &iv)) {
            snprintf(buf, sizeof buf, "%lld", (long long)iv);
            s = buf;
        } else if (bl_toml_get_double(v, &dv)) {
            snprintf(buf, sizeof buf, "%.17g", dv);
            s = buf;
        } else {
            return bl_fail(err, BL_ERR_INVALID, "%s:%u: [model.%s] %s: a quantity is a string (\"-52 mV\") or a number, not %s",
                           path, bl_toml_line(v), what, key, bl_toml_type_name(bl_toml_type_of(v)));
        }
        (*owned)[(*n_owned)++] = strdup(s);
        if (!(*owned)[*n_owned - 1])
            return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        (*names)[*n] = key;
        (*values)[(*n)++] = (*owned)[*n_owned - 1];
    }
    return BL_OK;
}

bl_status bl_eq_model_load(const char *path, double dt_s, size_t n_set, const char *const *set_names,
                           const char *const *set_values, bl_eq_model **out, bl_error *err)
{
    *out = NULL;
    bl_toml_doc *doc = NULL;
    bl_status st = bl_toml_parse_file(path, &doc, err);
    if (st)
        return st;
    const bl_toml_node *model = bl_toml_table_get(bl_toml_root(doc), "model");
    bl_eq_source src;
    memset(&src, 0, sizeof src);
    const char **pn = NULL, **pv = NULL, **in = NULL, **iv = NULL;
    char **po = NULL, **io = NULL;
    size_t npo = 0, nio = 0;
    if (!model || bl_toml_type_of(model) != BL_TOML_TABLE) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: no [model] table", path);
        goto done;
    }
    const char **slots[] = {&src.equations, &src.method, &src.threshold, &src.reset, &src.refractory,
                            &src.on_pre, &src.on_post, &src.on_input, &src.weight, NULL, NULL};
    for (size_t j = 0; j < bl_toml_table_size(model); j++) {
        size_t len;
        const char *key = bl_toml_table_key(model, j, &len);
        const bl_toml_node *v = bl_toml_table_value(model, j);
        if (!strcmp(key, "parameters") || !strcmp(key, "init")) {
            if (bl_toml_type_of(v) != BL_TOML_TABLE) {
                st = bl_fail(err, BL_ERR_INVALID, "%s:%u: model.%s must be a table", path, bl_toml_line(v), key);
                goto done;
            }
            continue;
        }
        size_t k = 0;
        while (k < sizeof text_keys / sizeof text_keys[0] && strcmp(key, text_keys[k]))
            k++;
        if (k == sizeof text_keys / sizeof text_keys[0] || strlen(key) != len) {
            st = bl_fail(err, BL_ERR_INVALID,
                         "%s:%u: model: unknown key '%.64s' (equations, method, threshold, reset, refractory, "
                         "on_pre, on_post, on_input, weight, delay, parameters, init)",
                         path, bl_toml_line(v), key);
            goto done;
        }
        const char *s;
        size_t sl;
        if (!bl_toml_get_string(v, &s, &sl) || strlen(s) != sl) {
            st = bl_fail(err, BL_ERR_INVALID, "%s:%u: model.%s must be a string", path, bl_toml_line(v), key);
            goto done;
        }
        if (slots[k])
            *slots[k] = s;
    }
    const bl_toml_node *params = bl_toml_table_get(model, "parameters"), *init = bl_toml_table_get(model, "init");
    size_t np = bl_toml_table_size(params);
    if (np + n_set > BL_EQ_MAX_PARAMS) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: more than %u parameters", path, BL_EQ_MAX_PARAMS);
        goto done;
    }
    if ((st = table(path, params, "parameters", &src.n_params, &pn, &pv, &po, &npo, err)) ||
        (st = table(path, init, "init", &src.n_init, &in, &iv, &io, &nio, err)))
        goto done;
    /* --set entries come after the file's, so they win. */
    const char **pn2 = realloc(pn, (src.n_params + n_set + 1) * sizeof *pn2);
    if (pn2)
        pn = pn2;
    const char **pv2 = realloc(pv, (src.n_params + n_set + 1) * sizeof *pv2);
    if (pv2)
        pv = pv2;
    if (!pn2 || !pv2) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    for (size_t k = 0; k < n_set; k++) {
        pn[src.n_params] = set_names[k];
        pv[src.n_params++] = set_values[k];
    }
    src.param_names = pn;
    src.param_values = pv;
    src.init_names = in;
    src.init_values = iv;
    st = bl_eq_model_compile(&src, dt_s, out, err);
    if (st)
        bl_fail_context(err, "%s", path);
done:
    for (size_t k = 0; k < npo; k++)
        free(po[k]);
    for (size_t k = 0; k < nio; k++)
        free(io[k]);
    free(po);
    free(io);
    free(pn);
    free(pv);
    free(in);
    free(iv);
    bl_toml_destroy(doc);
    return st;
}
