/* Presets and parameters of the connectome LIF models: the shared parameter
 * table, overrides by name, and the one validation every parameter set goes
 * through (plans, `simulate`, Python, the library all call
 * bl_lif_params_validate; the network refuses what it refuses). */
#include "brainlesslab/model.h"
#include "models/model_table.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Beyond these the model is not a neuron model any more (and the float32
 * preset overflows): generous physical bounds, not tuning. */
#define MAX_ABS_MV 1000.0
#define MAX_MS 1.0e7
#define MAX_F_POI 1.0e6

/* The parameters once, as an X-macro, so that the table and the public name
 * list are both constant data (no lazily filled static: two threads may
 * ask): X(field, unit, flags, min, max, min_steps, max_steps). */
#define BL_LIF_PARAMS(X)                                                                                        \
    X(dt_ms, "ms", BL_PARAM_MIN_OPEN, 0.0, 10.0, 0, 0)                                                         \
    X(v_rest_mv, "mV", 0, -MAX_ABS_MV, MAX_ABS_MV, 0, 0)                                                       \
    X(v_reset_mv, "mV", 0, -MAX_ABS_MV, MAX_ABS_MV, 0, 0)                                                      \
    X(v_th_mv, "mV", 0, -MAX_ABS_MV, MAX_ABS_MV, 0, 0)                                                         \
    X(tau_m_ms, "ms", BL_PARAM_MIN_OPEN | BL_PARAM_TAU, 0.0, MAX_MS, 0, 0)                                     \
    X(tau_syn_ms, "ms", BL_PARAM_MIN_OPEN | BL_PARAM_TAU, 0.0, MAX_MS, 0, 0)                                   \
    X(refractory_ms, "ms", BL_PARAM_STEPS, 0.0, MAX_MS, 0, 1000000000)                                         \
    X(delay_ms, "ms", BL_PARAM_STEPS, 0.0, MAX_MS, 1, 100000)                                                  \
    X(w_syn_mv, "mV", 0, 0.0, MAX_ABS_MV, 0, 0)                                                                \
    X(f_poi, "", 0, 0.0, MAX_F_POI, 0, 0)                                                                      \
    X(poisson_refractory_zero, "", BL_PARAM_SWITCH, 0.0, 1.0, 0, 0)

#define ROW(f, unit, flags, lo, hi, slo, shi) {#f, unit, offsetof(bl_lif_params, f), flags, lo, hi, slo, shi},
const bl_model_param bl_lif_param_table[] = {BL_LIF_PARAMS(ROW){NULL, NULL, 0, 0, 0, 0, 0, 0}};
#undef ROW

#define NAME(f, unit, flags, lo, hi, slo, shi) #f,
static const char *const param_names[] = {BL_LIF_PARAMS(NAME) NULL};
#undef NAME

const char *const *bl_lif_param_names(void) { return param_names; }

const char *bl_preset_name(bl_preset preset)
{
    const bl_model *m = bl_model_of(preset);
    return m ? m->name : "unknown";
}

/* Each preset's parameters are its row of the model table. */
bl_status bl_lif_params_preset(const char *name, bl_lif_params *p, bl_error *err)
{
    bl_preset id;
    const bl_model *m = bl_model_by_name(name, &id);
    if (!m) {
        char known[256];
        return bl_fail(err, BL_ERR_INVALID, "unknown model preset '%s' (known: %s)", name,
                       bl_model_names(known, sizeof known));
    }
    *p = m->defaults;
    p->preset = id;
    return BL_OK;
}

/* The table of p's model (the shared one while the preset is unknown). */
static const bl_model_param *table_of(const bl_lif_params *p)
{
    const bl_model *m = bl_model_of(p->preset);
    return m && m->params ? m->params : bl_lif_param_table;
}

static const bl_model_param *find(const bl_lif_params *p, const char *key)
{
    for (const bl_model_param *q = table_of(p); q->name; q++)
        if (!strcmp(q->name, key))
            return q;
    return NULL;
}

static double value_of(const bl_lif_params *p, const bl_model_param *q)
{
    const char *at = (const char *)p + q->offset;
    return q->flags & BL_PARAM_SWITCH ? (double)*(const int *)at : *(const double *)at;
}

bl_status bl_lif_params_set(bl_lif_params *p, const char *key, double value, bl_error *err)
{
    const bl_model_param *q = find(p, key);
    if (!q)
        return bl_fail(err, BL_ERR_INVALID, "unknown model parameter '%s'", key);
    if (!isfinite(value))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': value %g is not finite", key, value);
    char *at = (char *)p + q->offset;
    if (q->flags & BL_PARAM_SWITCH) {
        if (value != 0.0 && value != 1.0)
            return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g is not 0 or 1", key, value);
        *(int *)at = value != 0.0;
    } else
        *(double *)at = value;
    return BL_OK;
}

double bl_lif_params_get(const bl_lif_params *p, const char *key)
{
    const bl_model_param *q = find(p, key);
    return q ? value_of(p, q) : NAN;
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

/* One parameter against its row of the table (dt_ms, first in every table,
 * is checked before anything measured in steps of it). */
static bl_status check_param(const bl_lif_params *p, const bl_model_param *q, bl_error *err)
{
    double x = value_of(p, q);
    const char *u = q->unit, *sp = *u ? " " : "";
    if (q->flags & BL_PARAM_SWITCH)
        return x == 0.0 || x == 1.0 ? BL_OK
                                    : bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g is not 0 or 1",
                                              q->name, x);
    int low = q->flags & BL_PARAM_MIN_OPEN ? !(x > q->min) : !(x >= q->min);
    if (!isfinite(x) || low || !(x <= q->max))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g%s%s is outside %c%g, %g]%s%s", q->name, x,
                       sp, u, q->flags & BL_PARAM_MIN_OPEN ? '(' : '[', q->min, q->max, sp, u);
    if ((q->flags & BL_PARAM_TAU) && !(x >= p->dt_ms))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g ms must be at least one step (dt_ms = %g)",
                       q->name, x, p->dt_ms);
    int64_t s = 0;
    if ((q->flags & BL_PARAM_STEPS) && !whole_steps(x, p->dt_ms, &s))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g ms is not a whole number of %g ms steps",
                       q->name, x, p->dt_ms);
    if ((q->flags & BL_PARAM_STEPS) && (s < q->min_steps || s > q->max_steps))
        return bl_fail(err, BL_ERR_INVALID, "model parameter '%s': %g ms is %lld steps of %g ms, not %lld to %lld",
                       q->name, x, (long long)s, p->dt_ms, (long long)q->min_steps, (long long)q->max_steps);
    return BL_OK;
}

bl_status bl_lif_params_validate(const bl_lif_params *p, bl_error *err)
{
    const bl_model *m = bl_model_of(p->preset);
    if (!m) {
        char known[256];
        return bl_fail(err, BL_ERR_INVALID, "model preset %d is not in the model table (known: %s)", (int)p->preset,
                       bl_model_names(known, sizeof known));
    }
    for (const bl_model_param *q = table_of(p); q->name; q++) {
        bl_status st = check_param(p, q, err);
        if (st)
            return st;
    }
    /* Relations between parameters, shared by every LIF model. A rest above
     * threshold is allowed: a tonically firing neuron is a model (the
     * backends then step every neuron, bl_model.rest_is_fixed_point). */
    if (!(p->v_th_mv > p->v_reset_mv))
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'v_th_mv' (%g) must exceed 'v_reset_mv' (%g)",
                       p->v_th_mv, p->v_reset_mv);
    if (!(p->f_poi * p->w_syn_mv <= 100.0 * MAX_ABS_MV))
        return bl_fail(err, BL_ERR_INVALID, "model parameter 'f_poi': %g (Poisson input weight f_poi * w_syn_mv "
                       "= %g mV) is beyond %g mV", p->f_poi, p->f_poi * p->w_syn_mv, 100.0 * MAX_ABS_MV);
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
