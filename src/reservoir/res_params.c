/* Reservoir parameters: defaults (the spec's), presets, access by name and
 * range checks. Names are the Python BrainlessLab config fields, so that a
 * plan's [targets.composition.node.parameters] reads the same in both. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "brainlesslab/reservoir.h"

const char *bl_res_kind_name(bl_res_kind kind)
{
    return kind == BL_RES_SORN ? "sorn" : "falandays";
}

int bl_res_kind_parse(const char *name, bl_res_kind *out)
{
    if (!strcmp(name, "falandays"))
        *out = BL_RES_FALANDAYS;
    else if (!strcmp(name, "sorn"))
        *out = BL_RES_SORN;
    else
        return -1;
    return 0;
}

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
    if (!strcmp(preset, "default"))
        return BL_OK;
    if (kind == BL_RES_SORN && !strcmp(preset, "lazar2009")) {
        out->T_E_max = 1.0;
        out->T_I_max = 0.5;
        return BL_OK;
    }
    if (kind == BL_RES_SORN && !strcmp(preset, "zheng2013")) {
        out->eta_stdp = 0.004;
        return BL_OK;
    }
    return bl_fail(err, BL_ERR_INVALID, "unknown %s preset \"%.64s\" (known: %s)", bl_res_kind_name(kind),
                   preset, kind == BL_RES_SORN ? "default, lazar2009, zheng2013" : "default");
}

/* One table per kind: name, field offset, boolean. */
typedef struct param_def {
    const char *name;
    size_t offset;
    int is_bool;
} param_def;

#define DBL(f) {#f, offsetof(bl_res_params, f), 0}
#define BOOL(f) {#f, offsetof(bl_res_params, f), 1}

static const param_def falandays_defs[] = {
    DBL(leak), DBL(lrate_wmat), DBL(lrate_targ), DBL(threshold_mult), DBL(targ_min),
    DBL(input_weight), DBL(link_p), DBL(recurrent_init_scale), BOOL(rectify), BOOL(dale),
    DBL(inhibitory_frac), BOOL(oosawa), DBL(membrane_noise), DBL(noise_gain), BOOL(learn_on),
    DBL(weight_init_std), BOOL(repair_masks), {NULL, 0, 0}};
static const param_def sorn_defs[] = {
    DBL(inhibitory_fraction), DBL(p_ee), DBL(p_ei), DBL(p_ie), DBL(p_input), DBL(p_output),
    DBL(T_E_max), DBL(T_I_max), DBL(eta_stdp), DBL(eta_ip), DBL(H_ip), BOOL(fast_inhibition),
    BOOL(pruning), BOOL(learn_on), DBL(ee_row_sum), DBL(ei_row_sum), DBL(ie_row_sum), DBL(input_row_sum),
    {NULL, 0, 0}};

static const char *const falandays_names[] = {
    "leak", "lrate_wmat", "lrate_targ", "threshold_mult", "targ_min", "input_weight", "link_p",
    "recurrent_init_scale", "rectify", "dale", "inhibitory_frac", "oosawa", "membrane_noise",
    "noise_gain", "learn_on", "weight_init_std", "repair_masks", NULL};
static const char *const sorn_names[] = {
    "inhibitory_fraction", "p_ee", "p_ei", "p_ie", "p_input", "p_output", "T_E_max", "T_I_max",
    "eta_stdp", "eta_ip", "H_ip", "fast_inhibition", "pruning", "learn_on", "ee_row_sum", "ei_row_sum",
    "ie_row_sum", "input_row_sum", NULL};

const char *const *bl_res_param_names(bl_res_kind kind)
{
    return kind == BL_RES_SORN ? sorn_names : falandays_names;
}

static const param_def *find(bl_res_kind kind, const char *name)
{
    for (const param_def *d = kind == BL_RES_SORN ? sorn_defs : falandays_defs; d->name; d++)
        if (!strcmp(d->name, name))
            return d;
    return NULL;
}

int bl_res_param_is_bool(bl_res_kind kind, const char *name)
{
    const param_def *d = find(kind, name);
    return d && d->is_bool;
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
    const param_def *d = find(p->kind, name);
    if (!d) {
        char names[512];
        list_names(p->kind, names, sizeof names);
        return bl_fail(err, BL_ERR_INVALID, "unknown %s parameter \"%.64s\" (known: %s%s)",
                       bl_res_kind_name(p->kind), name, names,
                       p->kind == BL_RES_FALANDAYS ? "; also axis, drive and weight_init_mode as strings" : "");
    }
    if (!isfinite(value))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: %g is not a finite number", name, value);
    char *field = (char *)p + d->offset;
    if (d->is_bool) {
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
    if (p->kind == BL_RES_FALANDAYS && !strcmp(name, "axis")) {
        if (!strcmp(value, "unsigned") || !strcmp(value, "dale")) {
            p->dale = !strcmp(value, "dale");
            return BL_OK;
        }
        return bl_fail(err, BL_ERR_INVALID, "parameter axis: \"%.64s\" is not \"unsigned\" or \"dale\"", value);
    }
    if (p->kind == BL_RES_FALANDAYS && !strcmp(name, "weight_init_mode")) {
        for (int k = 0; k < 3; k++)
            if (!strcmp(value, bl_res_weight_init_mode_name(k))) {
                p->weight_init_mode = k;
                return BL_OK;
            }
        return bl_fail(err, BL_ERR_INVALID, "parameter weight_init_mode: \"%.64s\" is not excitatory, pong_mixed or "
                       "legacy_normal", value);
    }
    if (p->kind == BL_RES_FALANDAYS && !strcmp(name, "drive")) {
        if (!strcmp(value, "none") || !strcmp(value, "oosawa")) {
            p->oosawa = !strcmp(value, "oosawa");
            return BL_OK;
        }
        return bl_fail(err, BL_ERR_INVALID, "parameter drive: \"%.64s\" is not \"none\" or \"oosawa\"", value);
    }
    if (find(p->kind, name))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: expected a %s, got the string \"%.64s\"", name,
                       bl_res_param_is_bool(p->kind, name) ? "boolean" : "number", value);
    return bl_res_params_set(p, name, 0.0, err); /* the unknown-name message */
}

bl_status bl_res_params_set_input_link_p(bl_res_params *p, const double *values, size_t n, bl_error *err)
{
    if (p->kind != BL_RES_FALANDAYS)
        return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p: a Falandays parameter");
    if (n < 1 || n > BL_RES_MAX_LINK_P)
        return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p: needs 1..%d probabilities, got %zu",
                       BL_RES_MAX_LINK_P, n);
    for (size_t k = 0; k < n; k++) {
        if (!(values[k] >= 0.0 && values[k] <= 1.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter input_link_p[%zu]: %.17g is not in [0, 1]", k, values[k]);
        p->input_link_p[k] = values[k];
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
    const param_def *d = find(p->kind, name);
    if (!d)
        return NAN;
    const char *field = (const char *)p + d->offset;
    return d->is_bool ? (double)*(const int *)field : *(const double *)field;
}

static bl_status in_unit(bl_error *err, const char *name, double v)
{
    if (!(v >= 0.0 && v <= 1.0))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g is not in [0, 1]", name, v);
    return BL_OK;
}

static bl_status non_negative(bl_error *err, const char *name, double v)
{
    if (!(v >= 0.0) || !isfinite(v))
        return bl_fail(err, BL_ERR_INVALID, "parameter %s: %.17g must be finite and >= 0", name, v);
    return BL_OK;
}

bl_status bl_res_params_validate(const bl_res_params *p, bl_error *err)
{
    const param_def *defs = p->kind == BL_RES_SORN ? sorn_defs : falandays_defs;
    for (const param_def *d = defs; d->name; d++)
        if (!d->is_bool && !isfinite(bl_res_params_get(p, d->name)))
            return bl_fail(err, BL_ERR_INVALID, "parameter %s: not a finite number", d->name);
    bl_status st = BL_OK;
    if (p->kind == BL_RES_FALANDAYS) {
        if ((st = in_unit(err, "leak", p->leak)) || (st = in_unit(err, "link_p", p->link_p)) ||
            (st = in_unit(err, "inhibitory_frac", p->inhibitory_frac)) ||
            (st = non_negative(err, "lrate_wmat", p->lrate_wmat)) ||
            (st = non_negative(err, "lrate_targ", p->lrate_targ)) ||
            (st = non_negative(err, "input_weight", p->input_weight)) ||
            (st = non_negative(err, "recurrent_init_scale", p->recurrent_init_scale)) ||
            (st = non_negative(err, "membrane_noise", p->membrane_noise)) ||
            (st = non_negative(err, "noise_gain", p->noise_gain)) ||
            (st = non_negative(err, "weight_init_std", p->weight_init_std)))
            return st;
        if (!(p->threshold_mult > 0.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter threshold_mult: %.17g must be > 0", p->threshold_mult);
        if (!(p->targ_min > 0.0))
            return bl_fail(err, BL_ERR_INVALID, "parameter targ_min: %.17g must be > 0", p->targ_min);
        return BL_OK;
    }
    if ((st = in_unit(err, "inhibitory_fraction", p->inhibitory_fraction)) ||
        (st = in_unit(err, "p_ee", p->p_ee)) || (st = in_unit(err, "p_ei", p->p_ei)) ||
        (st = in_unit(err, "p_ie", p->p_ie)) || (st = in_unit(err, "p_input", p->p_input)) ||
        (st = in_unit(err, "p_output", p->p_output)) || (st = in_unit(err, "H_ip", p->H_ip)) ||
        (st = non_negative(err, "T_E_max", p->T_E_max)) ||
        (st = non_negative(err, "T_I_max", p->T_I_max)) ||
        (st = non_negative(err, "eta_stdp", p->eta_stdp)) ||
        (st = non_negative(err, "eta_ip", p->eta_ip)) ||
        (st = non_negative(err, "ee_row_sum", p->ee_row_sum)) ||
        (st = non_negative(err, "ei_row_sum", p->ei_row_sum)) ||
        (st = non_negative(err, "ie_row_sum", p->ie_row_sum)) ||
        (st = non_negative(err, "input_row_sum", p->input_row_sum)))
        return st;
    return BL_OK;
}
