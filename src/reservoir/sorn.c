/* Node kind sorn (Lazar, Pipa & Triesch 2009): its row of the node-kind
 * table (res_kind.h). Its equations are sorn_eq.h. */
#include <stddef.h>

#include "reservoir/res_kind.h"

/* X(field, rule), as in falandays.c. */
#define SORN_PARAMS(X)                                                                                          \
    X(inhibitory_fraction, BL_RES_UNIT) X(p_ee, BL_RES_UNIT) X(p_ei, BL_RES_UNIT) X(p_ie, BL_RES_UNIT)          \
    X(p_input, BL_RES_UNIT) X(p_output, BL_RES_UNIT) X(T_E_max, BL_RES_NONNEG) X(T_I_max, BL_RES_NONNEG)       \
    X(eta_stdp, BL_RES_NONNEG) X(eta_ip, BL_RES_NONNEG) X(H_ip, BL_RES_UNIT) X(fast_inhibition, BL_RES_BOOL)   \
    X(pruning, BL_RES_BOOL) X(learn_on, BL_RES_BOOL) X(ee_row_sum, BL_RES_NONNEG) X(ei_row_sum, BL_RES_NONNEG) \
    X(ie_row_sum, BL_RES_NONNEG) X(input_row_sum, BL_RES_NONNEG)

#define DEF(f, rule) {#f, offsetof(bl_res_params, f), rule},
static const bl_res_param_def params[] = {SORN_PARAMS(DEF){NULL, 0, BL_RES_ANY}};
#undef DEF
#define NAME(f, rule) #f,
static const char *const names[] = {SORN_PARAMS(NAME) NULL};
#undef NAME

/* The published variants' thresholds and learning rate. */
static void lazar2009(bl_res_params *p)
{
    p->T_E_max = 1.0;
    p->T_I_max = 0.5;
}
static void zheng2013(bl_res_params *p) { p->eta_stdp = 0.004; }
static const bl_res_preset presets[] = {{"lazar2009", lazar2009}, {"zheng2013", zheng2013}, {NULL, NULL}};

const bl_res_kind_ops bl_res_kind_sorn = {
    .name = "sorn",
    .kind = BL_RES_SORN,
    .params = params,
    .param_names = names,
    .presets = presets,
    .preset_names = "default, lazar2009, zheng2013",
    .set_string = NULL,
    .string_hint = "",
    .input_link_p = 0,
    .construct = bl_res_construct_sorn,
    .construct_host = bl_res_host_sorn,
    .load = bl_res_load_sorn,
    .save = bl_res_save_sorn,
    .threshold_trace = "thresholds.npy",
    .unit_traces = 0,
};
