/* Connectome LIF model presets and their parameters (docs/connectome-lif.md).
 * Parameters are given in the units neuroscientists write (mV, ms, Hz); each
 * preset converts them exactly as its reference tool does. */
#ifndef BRAINLESSLAB_MODEL_H
#define BRAINLESSLAB_MODEL_H

#include "brainlesslab/export.h"
#include <stdint.h>

#include "brainlesslab/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A model's id: its position in the model table (src/models/model_table.c).
 * The constants name the first two rows; every row, these and any later one,
 * is found by name (bl_lif_params_preset), so adding a model adds no
 * constant here. */
typedef enum bl_preset {
    BL_PRESET_SHIU2024 = 0, /* Shiu et al. 2024, float64, Brian2 2.5.1 semantics */
    BL_PRESET_PHASE4C = 1   /* the seed runtime's eager reference, float32 */
} bl_preset;

typedef struct bl_lif_params {
    bl_preset preset;
    double dt_ms;          /* 0.1 */
    double v_rest_mv;      /* -52 (shiu2024 v_0) */
    double v_reset_mv;     /* -52 */
    double v_th_mv;        /* -45 */
    double tau_m_ms;       /* 20 (t_mbr) */
    double tau_syn_ms;     /* 5 (tau) */
    double refractory_ms;  /* 2.2 */
    double delay_ms;       /* 1.8 */
    double w_syn_mv;       /* 0.275 per synapse */
    double f_poi;          /* 250: Poisson input weight = f_poi * w_syn (shiu2024) */
    int poisson_refractory_zero; /* 1: stimulated neurons have no refractory period (shiu2024) */
    /* The compiled model of the "equations" row (eqmodel.h; NULL for the
     * presets). Borrowed: its owner (a plan) outlives every network made
     * from these parameters. */
    const struct bl_eq_model *equations;
} bl_lif_params;

/* Fill params with a preset by name ("shiu2024", "phase4c", ...); an unknown
 * name's message lists the model table's names. */
BL_API bl_status bl_lif_params_preset(const char *name, bl_lif_params *out, bl_error *err);
BL_API const char *bl_preset_name(bl_preset preset);

/* Override one parameter by its name (the field names above); the message
 * names the key and the value when either is invalid. */
BL_API bl_status bl_lif_params_set(bl_lif_params *p, const char *key, double value, bl_error *err);
/* Names of the settable parameters, NULL-terminated. */
BL_API const char *const *bl_lif_param_names(void);
BL_API double bl_lif_params_get(const bl_lif_params *p, const char *key); /* NaN if unknown */

/* The one validation of a parameter set, whoever made it (plans, the CLI,
 * Python, library callers): each parameter against the model row's table
 * (finite, its valid range, whole numbers of dt_ms steps, time constants of
 * at least one step), v_th_mv above v_reset_mv, the Poisson weight bounded,
 * then the row's own checks. The message names the parameter. */
BL_API bl_status bl_lif_params_validate(const bl_lif_params *p, bl_error *err);
BL_API int64_t bl_lif_refractory_steps(const bl_lif_params *p);
BL_API int64_t bl_lif_delay_steps(const bl_lif_params *p);
/* round(duration / dt) */
BL_API bl_status bl_lif_steps(const bl_lif_params *p, double duration_ms, uint64_t *steps, bl_error *err);

#ifdef __cplusplus
}
#endif
#endif
