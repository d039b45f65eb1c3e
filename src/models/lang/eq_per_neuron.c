/* Per-neuron parameters set neuron by neuron ([model.per_neuron],
 * docs/models.md "Per-neuron parameters"): a parameter declared `x : unit`
 * in the equations takes, instead of one value for every neuron, a value per
 * neuron from a column of the connectome's neurons.csv or drawn from a
 * distribution with the plan's counter-based stream.
 *
 *   [model.per_neuron]
 *   tau_m = { column = "tau_m_ms", unit = "ms" }   # value * 0.001, Brian2's `values * ms`
 *   v_th  = { normal = ["-45 mV", "1 mV"] }         # mean + sd * z
 *   b     = { uniform = ["0 nA", "0.1 nA"] }         # lo + (hi - lo) * u
 *
 * The text is read with the model (bl_eq_model_from_toml: names, units and
 * dimensions are checked by `model check` too); the values are made when a
 * connectome plan has its connectome and seed (bl_eq_row_per_neuron) and the
 * kernels start each trial from them (eq_var_start, eq_impl.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/connectome.h"
#include "core/stream.h"
#include "models/eq_row.h"
#include "models/lang/eq_impl.h"
#include "plan/toml_bridge.h"

/* The counter word of per-neuron draws (docs/streams.md): Poisson populations
 * use word 2 for their index (below 2^30), current noise 0xC0000000 | k. The
 * trial word is BL_STREAM_SAMPLE_TRIAL's 0xFFFFFFFF, which no trial reaches:
 * a drawn parameter is a property of the network, the same in every trial. */
#define PN_STREAM UINT32_C(0xD0000000)
#define PN_TRIAL UINT32_C(0xFFFFFFFF)

/* The columns of neurons.csv, for a message. */
static void column_list(const bl_connectome *c, char *list, size_t size)
{
    size_t o = 0;
    list[0] = 0;
    for (size_t j = 0; j < bl_connectome_n_columns(c) && o < size; j++)
        o += (size_t)snprintf(list + o, size - o, "%s%s", j ? ", " : "", bl_connectome_column_name(c, j));
}

/* An array item as a quantity text: a string as written, a number printed exactly. */
static bl_status item_text(const bl_toml_node *v, char *buf, size_t size, const char **text)
{
    const char *s;
    size_t len;
    int64_t iv;
    double dv;
    if (bl_toml_get_string(v, &s, &len) && strlen(s) == len) {
        *text = s;
        return BL_OK;
    }
    if (bl_toml_get_int(v, &iv))
        snprintf(buf, size, "%lld", (long long)iv);
    else if (bl_toml_type_of(v) == BL_TOML_FLOAT && bl_toml_get_double(v, &dv))
        snprintf(buf, size, "%.17g", dv);
    else
        return BL_ERR_INVALID;
    *text = buf;
    return BL_OK;
}

bl_status eq_per_neuron_read(bl_eq_model *m, const bl_toml_node *t, const char *path, bl_error *err)
{
    if (!t)
        return BL_OK;
    if (bl_toml_type_of(t) != BL_TOML_TABLE)
        return bl_fail(err, BL_ERR_INVALID, "%s:%u: model.per_neuron must be a table (name = { column = ... } or "
                       "{ normal = [mean, sd] } or { uniform = [lo, hi] })", path, bl_toml_line(t));
    size_t n = bl_toml_table_size(t);
    if (n > BL_EQ_MAX_VARS)
        return bl_fail(err, BL_ERR_INVALID, "%s: model.per_neuron: more than %u entries", path, BL_EQ_MAX_VARS);
    m->pn = calloc(n ? n : 1, sizeof *m->pn);
    if (!m->pn)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", path);
    for (size_t j = 0; j < n; j++) {
        size_t klen;
        const char *key = bl_toml_table_key(t, j, &klen);
        const bl_toml_node *v = bl_toml_table_value(t, j);
        unsigned line = bl_toml_line(v);
        char what[160];
        snprintf(what, sizeof what, "%s:%u: model.per_neuron.%.64s", path, line, key ? key : "");
        if (!key || strlen(key) != klen || klen > BL_EQ_MAX_IDENT)
            return bl_fail(err, BL_ERR_INVALID, "%s: not a parameter name", what);
        int32_t y = eq_sym_find(m, key);
        if (y < 0 || m->syms[y].kind != S_PARAM_N)
            return bl_fail(err, BL_ERR_INVALID, "%s: the equations declare no per-neuron parameter '%s' (a line "
                           "'%s : unit'; a state variable starts from [model.init])", what, key, key);
        int32_t slot = m->syms[y].slot;
        if (m->has_syn && slot >= (int32_t)m->syn.first && slot < (int32_t)(m->syn.first + m->syn.n))
            return bl_fail(err, BL_ERR_INVALID, "%s: '%s' is a per-edge variable (synapses), not a per-neuron one",
                           what, key);
        if (m->pn_of[slot])
            return bl_fail(err, BL_ERR_INVALID, "%s: given twice", what);
        if (bl_toml_type_of(v) != BL_TOML_TABLE)
            return bl_fail(err, BL_ERR_INVALID, "%s: expected a table ({ column = \"NAME\", unit = \"ms\" }, "
                           "{ normal = [mean, sd] } or { uniform = [lo, hi] }), got %s", what,
                           bl_toml_type_name(bl_toml_type_of(v)));
        eq_pn *p = &m->pn[m->n_pn];
        memset(p, 0, sizeof *p);
        p->slot = slot;
        snprintf(p->name, sizeof p->name, "%s", key);
        const bl_toml_node *col = NULL, *unit = NULL, *dist = NULL;
        for (size_t k = 0; k < bl_toml_table_size(v); k++) {
            size_t len;
            const char *kk = bl_toml_table_key(v, k, &len);
            const bl_toml_node *vv = bl_toml_table_value(v, k);
            if (!strcmp(kk, "column"))
                col = vv;
            else if (!strcmp(kk, "unit"))
                unit = vv;
            else if (!strcmp(kk, "normal") || !strcmp(kk, "uniform")) {
                if (dist)
                    return bl_fail(err, BL_ERR_INVALID, "%s: give one of normal and uniform", what);
                dist = vv;
                p->kind = !strcmp(kk, "normal") ? EQ_PN_NORMAL : EQ_PN_UNIFORM;
            } else
                return bl_fail(err, BL_ERR_INVALID, "%s: unknown key '%.64s' (column, unit, normal, uniform)", what,
                               kk);
        }
        if (!!col == !!dist)
            return bl_fail(err, BL_ERR_INVALID, "%s: give either column (with unit) or a distribution (normal = "
                           "[mean, sd] or uniform = [lo, hi])", what);
        char wsub[200], buf[64];
        if (col) {
            const char *s;
            size_t len;
            if (!bl_toml_get_string(col, &s, &len) || strlen(s) != len || !len || len >= sizeof p->column)
                return bl_fail(err, BL_ERR_INVALID, "%s.column: expected the name of a neurons.csv column", what);
            memcpy(p->column, s, len + 1);
            p->kind = EQ_PN_COLUMN;
            /* The unit's value, as a quantity of the parameter's dimension:
             * a column's number times it is Brian2's `values * ms`. Without
             * a unit the parameter must be dimensionless. */
            const char *ut = "1";
            if (unit && (!bl_toml_get_string(unit, &ut, &len) || strlen(ut) != len))
                return bl_fail(err, BL_ERR_INVALID, "%s.unit: expected a unit (\"ms\", \"mV\", \"nS\")", what);
            snprintf(wsub, sizeof wsub, "%s.unit", what);
            bl_status st = bl_eq_model_var_quantity(m, key, wsub, ut, &p->a, err);
            if (st)
                return unit ? st : bl_fail(err, BL_ERR_INVALID, "%s: '%s' is in %s: give the column's unit (unit = "
                                           "\"...\")", what, key, m->var_unit[slot]);
        } else {
            if (unit)
                return bl_fail(err, BL_ERR_INVALID, "%s.unit: only a column takes a unit (a distribution's values "
                               "are quantities: \"1 mV\")", what);
            const char *nm = p->kind == EQ_PN_NORMAL ? "normal" : "uniform";
            if (bl_toml_type_of(dist) != BL_TOML_ARRAY || bl_toml_array_size(dist) != 2)
                return bl_fail(err, BL_ERR_INVALID, "%s.%s: expected two quantities, [%s]", what, nm,
                               p->kind == EQ_PN_NORMAL ? "mean, sd" : "lo, hi");
            double *out[2] = {&p->a, &p->b};
            for (size_t k = 0; k < 2; k++) {
                const char *text;
                snprintf(wsub, sizeof wsub, "%s.%s[%zu]", what, nm, k);
                if (item_text(bl_toml_array_at(dist, k), buf, sizeof buf, &text))
                    return bl_fail(err, BL_ERR_INVALID, "%s: expected a quantity (\"1 mV\") or a number", wsub);
                bl_status st = bl_eq_model_var_quantity(m, key, wsub, text, out[k], err);
                if (st)
                    return st;
                if (!isfinite(*out[k]))
                    return bl_fail(err, BL_ERR_INVALID, "%s: %g is not finite", wsub, *out[k]);
            }
            if (p->kind == EQ_PN_NORMAL && !(p->b >= 0))
                return bl_fail(err, BL_ERR_INVALID, "%s.normal: the standard deviation %g is negative", what, p->b);
            if (p->kind == EQ_PN_UNIFORM && !(p->b >= p->a))
                return bl_fail(err, BL_ERR_INVALID, "%s.uniform: hi %g is below lo %g", what, p->b, p->a);
        }
        m->pn_of[slot] = (int16_t)(++m->n_pn);
    }
    return BL_OK;
}

/* 53-bit uniforms in [0, 1) from words (0, 1) and (2, 3), as current noise. */
static void pn_uniforms(uint64_t seed, uint32_t k, uint32_t neuron, double *u1, double *u2)
{
    uint32_t w[4];
    bl_stream_block(seed, 0, neuron, PN_STREAM | k, PN_TRIAL, w);
    *u1 = (double)((((uint64_t)w[0] << 32) | w[1]) >> 11) * 0x1p-53;
    *u2 = (double)((((uint64_t)w[2] << 32) | w[3]) >> 11) * 0x1p-53;
}

double bl_eq_row_per_neuron_draw(const bl_eq_model *m, uint32_t k, uint64_t seed, uint32_t neuron)
{
    const eq_pn *p = &m->pn[k];
    double u1, u2;
    pn_uniforms(seed, k, neuron, &u1, &u2);
    if (p->kind == EQ_PN_UNIFORM)
        return p->a + (p->b - p->a) * u1;
    /* Box-Muller as current noise (bl_eq_current_normal): 1 - u1 is in (0, 1]. */
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
    return p->a + p->b * z;
}

bl_status bl_eq_row_per_neuron(bl_eq_model *m, const bl_connectome *c, uint64_t seed, bl_error *err)
{
    if (!m->n_pn)
        return BL_OK;
    const uint64_t n = bl_connectome_n_neurons(c);
    free(m->pn_val);
    m->pn_val = NULL;
    m->pn_n = 0;
    double *val = malloc((size_t)m->n_pn * (n ? n : 1) * sizeof *val);
    if (!val)
        return bl_fail(err, BL_ERR_NOMEM, "model.per_neuron: out of memory for %" PRIu64 " neurons", n);
    for (uint32_t k = 0; k < m->n_pn; k++) {
        const eq_pn *p = &m->pn[k];
        double *x = val + (size_t)k * n;
        if (p->kind != EQ_PN_COLUMN) {
            for (uint64_t i = 0; i < n; i++)
                x[i] = bl_eq_row_per_neuron_draw(m, k, seed, (uint32_t)i);
            continue;
        }
        int col = bl_connectome_column(c, p->column);
        if (col < 0) {
            char list[256];
            column_list(c, list, sizeof list);
            free(val);
            return bl_fail(err, BL_ERR_INVALID, "model.per_neuron.%s: neurons.csv has no column '%s' (columns: %s)",
                           p->name, p->column, *list ? list : "none");
        }
        for (uint64_t i = 0; i < n; i++) {
            const char *s = bl_connectome_value(c, (size_t)col, i), *id = bl_connectome_external_id(c, i);
            char *end = NULL;
            errno = 0;
            double y = s ? strtod(s, &end) : 0.0;
            while (end && isspace((unsigned char)*end))
                end++;
            if (!s || !*s || end == s || *end || !isfinite(y)) {
                char shown[48];
                snprintf(shown, sizeof shown, "%s", s ? s : "");
                for (char *q = shown; *q; q++)
                    if (!isprint((unsigned char)*q))
                        *q = '?';
                free(val);
                return bl_fail(err, BL_ERR_INVALID, "model.per_neuron.%s: neurons.csv column '%s', neuron %" PRIu64
                               "%s%s%s: '%s' is not a finite number", p->name, p->column, i, id ? " (id " : "",
                               id ? id : "", id ? ")" : "", shown);
            }
            /* the number times the unit: Brian2's `values * ms` */
            x[i] = y * p->a;
        }
    }
    m->pn_val = val;
    m->pn_n = n;
    return BL_OK;
}

bl_status bl_eq_row_on_pre_by(bl_eq_model *m, const bl_connectome *c, bl_error *err)
{
    if (!m->n_by)
        return BL_OK;
    const uint64_t n = bl_connectome_n_neurons(c);
    free(m->by_class);
    m->by_class = NULL;
    m->by_n = 0;
    int col = bl_connectome_column(c, m->by_column);
    if (col < 0) {
        char list[256];
        column_list(c, list, sizeof list);
        return bl_fail(err, BL_ERR_INVALID, "model.on_pre_by: neurons.csv has no column '%s' (columns: %s)",
                       m->by_column, *list ? list : "none");
    }
    uint8_t *cls = calloc(n ? n : 1, 1);
    if (!cls)
        return bl_fail(err, BL_ERR_NOMEM, "model.on_pre_by: out of memory for %" PRIu64 " neurons", n);
    for (uint64_t i = 0; i < n; i++) {
        const char *s = bl_connectome_value(c, (size_t)col, i);
        if (!s)
            continue;
        while (isspace((unsigned char)*s))
            s++;
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1]))
            len--;
        for (uint32_t k = 0; k < m->n_by; k++)
            if (strlen(m->by_value[k]) == len && !memcmp(m->by_value[k], s, len)) {
                cls[i] = (uint8_t)(k + 1);
                break;
            }
    }
    m->by_class = cls;
    m->by_n = n;
    return BL_OK;
}

int bl_eq_row_per_neuron_sets(const bl_eq_model *m, const char *var)
{
    if (!m || !var)
        return 0;
    for (uint32_t k = 0; k < m->n_pn; k++)
        if (!strcmp(m->pn[k].name, var))
            return 1;
    return 0;
}
