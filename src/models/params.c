/* Presets and parameter overrides for the connectome LIF models. */
#include "brainlesslab/model.h"
#include "engine/model_table.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *bl_preset_name(bl_preset preset)
{
    const bl_model *m = bl_model_of(preset);
    return m ? m->name : "unknown";
}

/* Each preset's parameters are its row of the model table. */
bl_status bl_lif_params_preset(const char *name, bl_lif_params *p, bl_error *err)
{
    const bl_model *m;
    for (int i = 0; (m = bl_model_of((bl_preset)i)) != NULL; i++)
        if (!strcmp(m->name, name)) {
            *p = m->defaults;
            p->preset = (bl_preset)i;
            return BL_OK;
        }
    return bl_fail(err, BL_ERR_INVALID, "unknown model preset '%s' (known: %s)", name, bl_model_names());
}

typedef struct param_field {
    const char *name;
    size_t offset;
} param_field;

/* The fields once, as an X-macro, so that the table and the name list below
 * are both constant data (no lazily filled static: two threads may ask). */
#define BL_LIF_FIELDS(X)                                                                                        \
    X(dt_ms) X(v_rest_mv) X(v_reset_mv) X(v_th_mv) X(tau_m_ms) X(tau_syn_ms) X(refractory_ms) X(delay_ms)      \
    X(w_syn_mv) X(f_poi)
#define FIELD(f) {#f, offsetof(bl_lif_params, f)},
static const param_field fields[] = {BL_LIF_FIELDS(FIELD)};
#undef FIELD
enum { N_FIELDS = sizeof fields / sizeof fields[0] };

#define NAME(f) #f,
static const char *const param_names[] = {BL_LIF_FIELDS(NAME) "poisson_refractory_zero", NULL};
#undef NAME

const char *const *bl_lif_param_names(void) { return param_names; }

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
    const bl_model *m = bl_model_of(p->preset);
    if (!m)
        return bl_fail(err, BL_ERR_INVALID, "model preset %d is not in the model table", (int)p->preset);
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
    return m->validate ? m->validate(p, err) : BL_OK;
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
