/* Presets and parameter overrides for the connectome LIF models. */
#include "brainlesslab/model.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *bl_preset_name(bl_preset preset)
{
    return preset == BL_PRESET_PHASE4C ? "phase4c" : "shiu2024";
}

bl_status bl_lif_params_preset(const char *name, bl_lif_params *p, bl_error *err)
{
    /* Both presets share the published constants (Shiu et al. 2024, model.py);
     * they differ in precision, update order and the Poisson refractory rule. */
    bl_lif_params base = {
        .dt_ms = 0.1, .v_rest_mv = -52.0, .v_reset_mv = -52.0, .v_th_mv = -45.0,
        .tau_m_ms = 20.0, .tau_syn_ms = 5.0, .refractory_ms = 2.2, .delay_ms = 1.8,
        .w_syn_mv = 0.275, .f_poi = 250.0,
    };
    if (!strcmp(name, "shiu2024")) {
        base.preset = BL_PRESET_SHIU2024;
        base.poisson_refractory_zero = 1;
    } else if (!strcmp(name, "phase4c")) {
        base.preset = BL_PRESET_PHASE4C;
        base.poisson_refractory_zero = 0;
    } else {
        return bl_fail(err, BL_ERR_INVALID, "unknown model preset '%s' (known: shiu2024, phase4c)", name);
    }
    *p = base;
    return BL_OK;
}

typedef struct param_field {
    const char *name;
    size_t offset;
} param_field;

#define FIELD(f) {#f, offsetof(bl_lif_params, f)}
static const param_field fields[] = {
    FIELD(dt_ms), FIELD(v_rest_mv), FIELD(v_reset_mv), FIELD(v_th_mv), FIELD(tau_m_ms),
    FIELD(tau_syn_ms), FIELD(refractory_ms), FIELD(delay_ms), FIELD(w_syn_mv), FIELD(f_poi),
};
#undef FIELD
enum { N_FIELDS = sizeof fields / sizeof fields[0] };

const char *const *bl_lif_param_names(void)
{
    static const char *names[N_FIELDS + 2];
    if (!names[0]) {
        for (int i = 0; i < N_FIELDS; i++)
            names[i] = fields[i].name;
        names[N_FIELDS] = "poisson_refractory_zero";
    }
    return names;
}

bl_status bl_lif_params_set(bl_lif_params *p, const char *key, double value, bl_error *err)
{
    if (!isfinite(value))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': value %g is not finite", key, value);
    if (!strcmp(key, "poisson_refractory_zero")) {
        if (value != 0.0 && value != 1.0)
            return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g is not 0 or 1", key, value);
        p->poisson_refractory_zero = value != 0.0;
        return BL_OK;
    }
    for (int i = 0; i < N_FIELDS; i++)
        if (!strcmp(fields[i].name, key)) {
            *(double *)((char *)p + fields[i].offset) = value;
            return BL_OK;
        }
    return bl_fail(err, BL_ERR_INVALID, "unknown model parameter '%s'", key);
}

double bl_lif_params_get(const bl_lif_params *p, const char *key)
{
    if (!strcmp(key, "poisson_refractory_zero"))
        return p->poisson_refractory_zero;
    for (int i = 0; i < N_FIELDS; i++)
        if (!strcmp(fields[i].name, key))
            return *(const double *)((const char *)p + fields[i].offset);
    return NAN;
}

/* A time that must be a whole number of steps, within a relative 1e-9. */
static int whole_steps(double t_ms, double dt_ms, int64_t *steps)
{
    double r = t_ms / dt_ms;
    double n = nearbyint(r);
    if (fabs(r - n) > 1e-9 * (n > 1 ? n : 1) || n < 0 || n > 1e9)
        return 0;
    *steps = (int64_t)n;
    return 1;
}

bl_status bl_lif_params_validate(const bl_lif_params *p, bl_error *err)
{
    int64_t s;
    if (!(p->dt_ms > 0 && p->dt_ms <= 10))
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'dt_ms': %g outside (0, 10]", p->dt_ms);
    if (!(p->tau_m_ms > 0) || !(p->tau_syn_ms > 0))
        return bl_fail(err, BL_ERR_INVALID, "model parameters 'tau_m_ms' and 'tau_syn_ms' must be > 0");
    if (p->preset == BL_PRESET_SHIU2024 && p->tau_m_ms == p->tau_syn_ms)
        return bl_fail(err, BL_ERR_INVALID, "model parameters 'tau_m_ms' and 'tau_syn_ms' must differ "
                       "(shiu2024's exact linear solution divides by t_mbr - tau)");
    if (!(p->v_th_mv > p->v_reset_mv))
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'v_th_mv' (%g) must exceed 'v_reset_mv' (%g)",
                       p->v_th_mv, p->v_reset_mv);
    if (!whole_steps(p->refractory_ms, p->dt_ms, &s))
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'refractory_ms': %g is not a whole number "
                       "of %g ms steps", p->refractory_ms, p->dt_ms);
    if (!whole_steps(p->delay_ms, p->dt_ms, &s) || s < 1)
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'delay_ms': %g must be a whole number (>= 1) "
                       "of %g ms steps", p->delay_ms, p->dt_ms);
    if (s > 100000)
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'delay_ms': %g is too long", p->delay_ms);
    if (!(p->f_poi >= 0) || !(p->w_syn_mv >= 0))
        return bl_fail(err, BL_ERR_INVALID, "model parameters 'w_syn_mv' and 'f_poi' must be >= 0");
    return BL_OK;
}

int64_t bl_lif_refractory_steps(const bl_lif_params *p)
{
    int64_t s = 0;
    whole_steps(p->refractory_ms, p->dt_ms, &s);
    return s;
}

int64_t bl_lif_delay_steps(const bl_lif_params *p)
{
    int64_t s = 0;
    whole_steps(p->delay_ms, p->dt_ms, &s);
    return s;
}

bl_status bl_lif_steps(const bl_lif_params *p, double duration_ms, uint64_t *steps, bl_error *err)
{
    double n = nearbyint(duration_ms / p->dt_ms);
    if (!(duration_ms > 0) || !(n >= 1) || n > 4e9)
        return bl_fail(err, BL_ERR_INVALID, "duration %g ms is not between one step and 4e9 steps",
                       duration_ms);
    *steps = (uint64_t)n;
    return BL_OK;
}
