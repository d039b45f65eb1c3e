/* Reservoir parameters: defaults (the spec's), presets, access by name and
 * range checks, each kind's from its row of the node-kind table (res_kind.h:
 * names, booleans, valid ranges, presets, string spellings). Names are the
 * Python BrainlessLab config fields, so that a plan's
 * [targets.composition.node.parameters] reads the same in both. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "brainlesslab/reservoir.h"
#include "reservoir/res_kind.h"

void bl_res_params_default(bl_res_kind kind, bl_res_params *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->learn_on = 1;
    p->leak = 0.25;
    p->lrate_wmat = 1.0;
    p->lrate_targ = 0.01;
    p->threshold_mult = 2.0;
    p->targ_min = 1.0;
    p->input_weight = 1.875;
    p->link_p = 0.1;
    p->recurrent_init_scale = 1.0;
    p->weight_init_std = 1.0;
    p->inhibitory_frac = 0.25;
    p->inhibitory_fraction = 0.2;
    p->p_ee = 10.0 / 166.0;
    p->p_ei = 1.0;
    p->p_ie = 1.0;
    p->p_input = 0.05;
    p->p_output = 0.05;
    p->T_E_max = 0.5;
    p->T_I_max = 1.0;
    p->eta_stdp = 0.001;
    p->eta_ip = 0.001;
    p->H_ip = 0.1;
    p->pruning = 1;
    p->ee_row_sum = 1.0;
    p->ei_row_sum = 1.0;
    p->ie_row_sum = 1.0;
    p->input_row_sum = 1.0;
}

bl_status bl_res_params_preset(bl_res_kind kind, const char *preset, bl_res_params *out,
                               bl_error *err)
{
    bl_res_params_default(kind, out);
    const bl_res_kind_ops *k = bl_res_kind_of(kind);
    if (!strcmp(preset, "default"))
        return BL_OK;
    for (const bl_res_preset *q = k ? k->presets : NULL; q && q->name; q++)
        if (!strcmp(preset, q->name)) {
            q->apply(out);
            return BL_OK;
        }
    return bl_fail(err, BL_ERR_INVALID, "unknown %s preset \"%.64s\" (known: %s)", bl_res_kind_name(kind),
                   preset, k ? k->preset_names : "default");
}

static const bl_res_param_def no_params[] = {{NULL, 0, BL_RES_ANY}};
static const char *const no_names[] = {NULL};

static const bl_res_param_def *defs_of(bl_res_kind kind)
{
    const bl_res_kind_ops *k = bl_res_kind_of(kind);
    return k ? k->params : no_params;
}

const char *const *bl_res_param_names(bl_res_kind kind)
{
    const bl_res_kind_ops *k = bl_res_kind_of(kind);
    return k ? k->param_names : no_names;
}

static const bl_res_param_def *find(bl_res_kind kind, const char *name)
{
    for (const bl_res_param_def *d = defs_of(kind); d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

int bl_res_param_is_bool(bl_res_kind kind, const char *name)
{
    const bl_res_param_def *d = find(kind, name);
    return d && d->rule == BL_RES_BOOL;
}

static void list_names(bl_res_kind kind, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (const char *const *n = bl_res_param_names(kind); *n && o + 1 < size; n++) {
        size_t len = strlen(*n);
        if (o + len + 3 >= size)
            break;
        if (o) {
            memcpy(buf + o, ", ", 2);
            o += 2;
        }
        memcpy(buf + o, *n, len);
        o += len;
        buf[o] = '\0';
    }
}

bl_status bl_res_params_set(bl_res_params *p, const char *name, double value, bl_error *err)
{
    const bl_res_param_def *d = find(p->kind, name);
    if (!d) {
        char names[512];
        const bl_res_kind_ops *k = bl_res_kind_of(p->kind);
        list_names(p->kind, names, sizeof names);
        return bl_fail(err, BL_ERR_INVALID, "unknown %s parameter \"%.64s\" (known: %s%s)",
                       bl_res_kind_name(p->kind), name, names, k ? k->string_hint : "");
    }
    if (!isfinite(value))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: %g is not a finite number", name, value);
    char *field = (char *)p + d->offset;
    if (d->rule == BL_RES_BOOL) {
        if (value != 0.0 && value != 1.0)
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g is not a boolean (0/1, true/false)",
                           name, value);
        *(int *)field = value != 0.0;
    } else {
        *(double *)field = value;
    }
    return BL_OK;
}

bl_status bl_res_params_set_string(bl_res_params *p, const char *name, const char *value,
                                   bl_error *err)
{
    const bl_res_kind_ops *k = bl_res_kind_of(p->kind);
    int known = 0;
    bl_status st = k && k->set_string ? k->set_string(p, name, value, &known, err) : BL_OK;
    if (known)
        return st;
    if (find(p->kind, name))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: expected a %s, got the string \"%.64s\"", name,
                       bl_res_param_is_bool(p->kind, name) ? "boolean" : "number", value);
    return bl_res_params_set(p, name, 0.0, err); /* the unknown-name message */
}

bl_status bl_res_params_set_input_link_p(bl_res_params *p, const double *values, size_t n, bl_error *err)
{
    const bl_res_kind_ops *k = bl_res_kind_of(p->kind);
    if (!k || !k->input_link_p)
        return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p: a Falandays parameter");
    if (n < 1 || n > BL_RES_MAX_LINK_P)
        return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p: needs 1..%d probabilities, got %zu",
                       BL_RES_MAX_LINK_P, n);
    for (size_t q = 0; q < n; q++) {
        if (!(values[q] >= 0.0 && values[q] <= 1.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p[%zu]: %.17g is not in [0, 1]", q, values[q]);
        p->input_link_p[q] = values[q];
    }
    p->n_input_link_p = (uint32_t)n;
    return BL_OK;
}

const char *bl_res_weight_init_mode_name(int mode)
{
    static const char *const modes[] = {"excitatory", "pong_mixed", "legacy_normal"};
    return mode >= 0 && mode < 3 ? modes[mode] : "?";
}

double bl_res_params_get(const bl_res_params *p, const char *name)
{
    const bl_res_param_def *d = find(p->kind, name);
    if (!d)
        return NAN;
    const char *field = (const char *)p + d->offset;
    return d->rule == BL_RES_BOOL ? (double)*(const int *)field : *(const double *)field;
}

/* Every parameter of the kind finite, then each against its rule, in the
 * order of the kind's table. */
bl_status bl_res_params_validate(const bl_res_params *p, bl_error *err)
{
    if (!bl_res_kind_of(p->kind))
        return bl_fail(err, BL_ERR_INVALID, "node kind %d is not in the node-kind table", (int)p->kind);
    for (const bl_res_param_def *d = defs_of(p->kind); d->name; d++)
        if (d->rule != BL_RES_BOOL && !isfinite(bl_res_params_get(p, d->name)))
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: not a finite number", d->name);
    for (const bl_res_param_def *d = defs_of(p->kind); d->name; d++) {
        double v = bl_res_params_get(p, d->name);
        if (d->rule == BL_RES_UNIT && !(v >= 0.0 && v <= 1.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g is not in [0, 1]", d->name, v);
        if (d->rule == BL_RES_NONNEG && !(v >= 0.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g must be finite and >= 0", d->name, v);
        if (d->rule == BL_RES_POSITIVE && !(v > 0.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g must be > 0", d->name, v);
    }
    return BL_OK;
}
