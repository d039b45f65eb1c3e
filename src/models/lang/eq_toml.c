/* A model file: a TOML document with a [model] table (read with the plan's
 * TOML bridge, toml++), handed to bl_eq_model_compile. Unknown keys are
 * refused, so a misspelt "treshold" is not silently ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/lang/eq_impl.h"
#include "models/eq_row.h"
#include "plan/toml_bridge.h"

static const char *const text_keys[] = {"equations", "method", "threshold", "reset", "refractory",
                                        "on_pre", "on_post", "on_input", "weight", "delay", "preset",
                                        "synapses", "on_pre_exc", "on_pre_inh", "refractory_input", "on_pre_by"};

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

/* A name of at most 64 bytes ending in "_0" whose stem is a state variable. */
static int rest_stem(const bl_eq_model *m, const char *name, char *stem)
{
    size_t len = strlen(name);
    if (len < 3 || len > BL_EQ_MAX_IDENT || strcmp(name + len - 2, "_0"))
        return 0;
    memcpy(stem, name, len - 2);
    stem[len - 2] = 0;
    for (size_t v = 0; v < bl_eq_model_n_vars(m); v++)
        if (!strcmp(bl_eq_model_var_name(m, v), stem))
            return 1;
    return 0;
}

bl_status bl_eq_model_from_toml(const bl_toml_node *model, const char *path, double dt_s, size_t n_set,
                                const char *const *set_names, const char *const *set_values, int rest_init,
                                bl_eq_model **out, const char **delay, bl_error *err)
{
    *out = NULL;
    if (delay)
        *delay = NULL;
    bl_status st = BL_OK;
    bl_eq_source src;
    memset(&src, 0, sizeof src);
    const char **pn = NULL, **pv = NULL, **in = NULL, **iv = NULL;
    char **po = NULL, **io = NULL;
    size_t npo = 0, nio = 0;
    if (!model || bl_toml_type_of(model) != BL_TOML_TABLE) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: no [model] table", path);
        goto done;
    }
    const char *refractory_input = NULL;
    const char **slots[] = {&src.equations, &src.method,   &src.threshold,  &src.reset,      &src.refractory,
                            &src.on_pre,    &src.on_post,  &src.on_input,   &src.weight,     delay,
                            NULL,           &src.synapses, &src.on_pre_exc, &src.on_pre_inh, &refractory_input,
                            &src.on_pre_by};
    /* on_pre as a table, one block per value of the on_pre_by column */
    const char *by_values[EQ_MAX_BY], *by_texts[EQ_MAX_BY];
    for (size_t j = 0; j < bl_toml_table_size(model); j++) {
        size_t len;
        const char *key = bl_toml_table_key(model, j, &len);
        const bl_toml_node *v = bl_toml_table_value(model, j);
        if (!strcmp(key, "per_neuron"))
            continue; /* read after compiling (eq_per_neuron.c) */
        if (!strcmp(key, "parameters") || !strcmp(key, "init")) {
            if (bl_toml_type_of(v) != BL_TOML_TABLE) {
                st = bl_fail(err, BL_ERR_INVALID, "%s:%u: model.%s must be a table", path, bl_toml_line(v), key);
                goto done;
            }
            continue;
        }
        if (!strcmp(key, "on_pre") && bl_toml_type_of(v) == BL_TOML_TABLE) {
            size_t nb = bl_toml_table_size(v);
            if (nb > EQ_MAX_BY) {
                st = bl_fail(err, BL_ERR_INVALID, "%s:%u: model.on_pre: %zu values; on_pre_by chooses among at most %d",
                             path, bl_toml_line(v), nb, EQ_MAX_BY);
                goto done;
            }
            for (size_t q = 0; q < nb; q++) {
                size_t vl, tl;
                const char *vk = bl_toml_table_key(v, q, &vl), *tx;
                const bl_toml_node *tv = bl_toml_table_value(v, q);
                if (!vk || strlen(vk) != vl || !bl_toml_get_string(tv, &tx, &tl) || strlen(tx) != tl) {
                    st = bl_fail(err, BL_ERR_INVALID, "%s:%u: model.on_pre.%.64s must be a string of statements "
                                 "(\"ge += w\")", path, bl_toml_line(tv), vk ? vk : "");
                    goto done;
                }
                by_values[q] = vk;
                by_texts[q] = tx;
            }
            src.n_on_pre_by = nb;
            src.on_pre_by_values = by_values;
            src.on_pre_by_texts = by_texts;
            continue;
        }
        size_t k = 0;
        while (k < sizeof text_keys / sizeof text_keys[0] && strcmp(key, text_keys[k]))
            k++;
        if (k == sizeof text_keys / sizeof text_keys[0] || strlen(key) != len) {
            st = bl_fail(err, BL_ERR_INVALID,
                         "%s:%u: model: unknown key '%.64s' (equations, method, threshold, reset, refractory, "
                         "on_pre, on_pre_exc, on_pre_inh, on_post, on_input, weight, delay, synapses, "
                         "refractory_input, on_pre_by, parameters, init, per_neuron)",
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
    int deliver = 0;
    if (refractory_input && !(deliver = !strcmp(refractory_input, "deliver")) && strcmp(refractory_input, "drop")) {
        st = bl_fail(err, BL_ERR_INVALID, "%s: model.refractory_input: '%.40s' is not \"drop\" (the presets' rule) or "
                     "\"deliver\" (Brian2's Synapses)", path, refractory_input);
        goto done;
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
    if (!st && rest_init) {
        /* The rest convention of a connectome model: a state variable X that
         * [model.init] does not set starts at parameter X_0 when there is one
         * (shiu2024: v starts at v_0, as model.py sets neu.v = v_0). The
         * model is compiled again with those inits added. */
        size_t added = 0;
        char stem[BL_EQ_MAX_IDENT + 1];
        const char **in2 = realloc(in, (src.n_init + src.n_params + 1) * sizeof *in2);
        const char **iv2 = in2 ? realloc(iv, (src.n_init + src.n_params + 1) * sizeof *iv2) : NULL;
        char **own = iv2 ? calloc(src.n_params + 1, sizeof *own) : NULL;
        if (in2)
            in = in2;
        if (iv2)
            iv = iv2;
        if (!own) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        for (size_t k = 0; !st && k < src.n_params; k++) {
            if (!rest_stem(*out, pn[k], stem))
                continue;
            int given = 0;
            for (size_t j = 0; j < src.n_init && !given; j++)
                given = !strcmp(in[j], stem);
            for (size_t j = 0; j < added && !given; j++)
                given = !strcmp(own[j], stem);
            if (given)
                continue;
            if (!(own[added] = strdup(stem))) {
                st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            in[src.n_init + added] = own[added];
            iv[src.n_init + added] = pv[k];
            added++;
        }
        if (!st && added) {
            src.n_init += added;
            src.init_names = in;
            src.init_values = iv;
            bl_eq_model_destroy(*out);
            *out = NULL;
            st = bl_eq_model_compile(&src, dt_s, out, err);
        }
        for (size_t j = 0; j < added; j++)
            free(own[j]);
        free(own);
    }
    if (!st && (st = eq_per_neuron_read(*out, bl_toml_table_get(model, "per_neuron"), path, err))) {
        bl_eq_model_destroy(*out);
        *out = NULL;
        goto done; /* the message names the path already */
    }
    if (st)
        bl_fail_context(err, "%s", path);
    else
        (*out)->deliver_refractory = deliver;
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
    return st;
}

bl_status bl_eq_model_load(const char *path, double dt_s, size_t n_set, const char *const *set_names,
                           const char *const *set_values, bl_eq_model **out, bl_error *err)
{
    *out = NULL;
    bl_toml_doc *doc = NULL;
    bl_status st = bl_toml_parse_file(path, &doc, err);
    if (st)
        return st;
    st = bl_eq_model_from_toml(bl_toml_table_get(bl_toml_root(doc), "model"), path, dt_s, n_set, set_names,
                               set_values, 0, out, NULL, err);
    bl_toml_destroy(doc);
    return st;
}
