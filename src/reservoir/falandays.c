/* Node kind falandays (Falandays et al. 2023): its row of the node-kind
 * table (res_kind.h). Its equations are falandays_eq.h. */
#include <string.h>

#include "reservoir/res_kind.h"

/* The parameters once: the table and the public name list are both
 * constant data. X(field, rule). */
#define FALANDAYS_PARAMS(X)                                                                                     \
    X(leak, BL_RES_UNIT) X(lrate_wmat, BL_RES_NONNEG) X(lrate_targ, BL_RES_NONNEG)                             \
    X(threshold_mult, BL_RES_POSITIVE) X(targ_min, BL_RES_POSITIVE) X(input_weight, BL_RES_NONNEG)             \
    X(link_p, BL_RES_UNIT) X(recurrent_init_scale, BL_RES_NONNEG) X(rectify, BL_RES_BOOL) X(dale, BL_RES_BOOL) \
    X(inhibitory_frac, BL_RES_UNIT) X(oosawa, BL_RES_BOOL) X(membrane_noise, BL_RES_NONNEG)                    \
    X(noise_gain, BL_RES_NONNEG) X(learn_on, BL_RES_BOOL) X(weight_init_std, BL_RES_NONNEG)                    \
    X(repair_masks, BL_RES_BOOL)

#define DEF(f, rule) {#f, offsetof(bl_res_params, f), rule},
static const bl_res_param_def params[] = {FALANDAYS_PARAMS(DEF){NULL, 0, BL_RES_ANY}};
#undef DEF
#define NAME(f, rule) #f,
static const char *const names[] = {FALANDAYS_PARAMS(NAME) NULL};
#undef NAME

static const bl_res_preset presets[] = {{NULL, NULL}};

/* axis, weight_init_mode and drive: the Python project's string spellings of
 * dale, the initial weights and oosawa. */
static bl_status set_string(bl_res_params *p, const char *name, const char *value, int *known, bl_error *err)
{
    *known = 1;
    if (!strcmp(name, "axis")) {
        if (!strcmp(value, "unsigned") || !strcmp(value, "dale")) {
            p->dale = !strcmp(value, "dale");
            return BL_OK;
        }
        return bl_fail(err, BL_ERR_INVALID, "parameter axis: \"%.64s\" is not \"unsigned\" or \"dale\"", value);
    }
    if (!strcmp(name, "weight_init_mode")) {
        for (int k = 0; k < 3; k++)
            if (!strcmp(value, bl_res_weight_init_mode_name(k))) {
                p->weight_init_mode = k;
                return BL_OK;
            }
        return bl_fail(err, BL_ERR_INVALID, "parameter weight_init_mode: \"%.64s\" is not excitatory, pong_mixed or "
                       "legacy_normal", value);
    }
    if (!strcmp(name, "drive")) {
        if (!strcmp(value, "none") || !strcmp(value, "oosawa")) {
            p->oosawa = !strcmp(value, "oosawa");
            return BL_OK;
        }
        return bl_fail(err, BL_ERR_INVALID, "parameter drive: \"%.64s\" is not \"none\" or \"oosawa\"", value);
    }
    *known = 0;
    return BL_OK;
}

const bl_res_kind_ops bl_res_kind_falandays = {
    .name = "falandays",
    .kind = BL_RES_FALANDAYS,
    .params = params,
    .param_names = names,
    .presets = presets,
    .preset_names = "default",
    .set_string = set_string,
    .string_hint = "; also axis, drive and weight_init_mode as strings",
    .input_link_p = 1,
    .construct = bl_res_construct_falandays,
    .construct_host = bl_res_host_falandays,
    .load = bl_res_load_falandays,
    .save = bl_res_save_falandays,
    .threshold_trace = "targets.npy",
    .unit_traces = 1,
};
