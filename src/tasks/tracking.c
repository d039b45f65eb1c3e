/* tracking: two eyes of receptors (eye_offset_deg +- each sensor offset)
 * watch a stimulus circling at stim_speed_rad per tick, which reverses
 * direction every 720 ticks; the body turns by movement_amp (e0 - e1) degrees
 * per tick. Receptor r reads sensory_gain, damped by exp(-delta^2 / 10)
 * beyond 4 degrees of angular error delta (wrapped to [-180, 180)). Score per
 * tick after warmup: cos(body - stimulus); track_score = their mean. */
#include <math.h>

#include "tasks/task_ops.h"

#define DEG (180.0 / M_PI)

static const char *const names[] = {"stim_speed_rad", "movement_amp", "eye_offset_deg", "sensor_offsets_deg",
                                    "sensory_gain", "randomize_start", "theta0", "phi0", "direction0", NULL};

/* Floored remainder, as the Python project's wrap: (v + h) mod 2h - h. */
double bl_task_wrap(double v, double half)
{
    const double m = 2.0 * half;
    double r = fmod(v + half, m);
    if (r != 0.0 && (r < 0.0) != (m < 0.0))
        r += m;
    return r - half;
}

static void defaults(bl_task_options *o)
{
    o->stim_speed_rad = M_PI / 180.0;
    o->movement_amp = 10.0;
    o->eye_offset_deg = 30.0;
    o->n_offsets = 31;
    for (uint32_t k = 0; k < 31; k++)
        o->sensor_offsets_deg[k] = -60.0 + 4.0 * k;
    o->sensory_gain = 1.0;
    o->randomize_start = 1;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    if (!(o->movement_amp > 0.0))
        return bl_fail(err, BL_ERR_INVALID, "tracking: movement_amp must be positive");
    if (!(o->sensory_gain >= 0.0))
        return bl_fail(err, BL_ERR_INVALID, "tracking: sensory_gain must be finite and nonnegative");
    if (o->n_offsets < 1)
        return bl_fail(err, BL_ERR_INVALID, "tracking: sensor_offsets_deg needs at least one offset");
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 2 * o->n_offsets;
    d->default_horizon = 2000;
    d->minimum_scored = 2000;
    d->outcome_key = "track_score";
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    (void)horizon;
    (void)err;
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    const int rnd = o->randomize_start;
    /* The draws happen in this order, each only when needed. */
    w->physical[0] = o->has_theta0 ? o->theta0 : rnd ? 2.0 * M_PI * bl_task_rng_uniform(&r) : M_PI / 2.0;
    w->physical[1] = o->has_phi0 ? o->phi0 : rnd ? 2.0 * M_PI * bl_task_rng_uniform(&r) : 0.0;
    w->physical[2] = o->has_direction0 ? o->direction0 : rnd ? (bl_task_rng_int(&r, 0, 1) ? 1.0 : -1.0) : 1.0;
    w->width = 2 * o->n_offsets;
    w->params[0] = o->sensory_gain;
    w->params[1] = o->stim_speed_rad;
    w->params[2] = o->movement_amp;
    for (uint32_t e = 0; e < 2; e++)
        for (uint32_t k = 0; k < o->n_offsets; k++)
            w->angles[e * o->n_offsets + k] = (e ? -o->eye_offset_deg : o->eye_offset_deg) + o->sensor_offsets_deg[k];
    return BL_OK;
}

static void encode(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs)
{
    (void)frame;
    const double phi = s->physical[1] * DEG;
    for (uint32_t r = 0; r < w->width; r++) {
        const double angle = s->physical[0] * DEG + w->angles[r];
        const double delta = bl_task_wrap(angle - phi, 180.0);
        double v = w->params[0];
        if (fabs(delta) > 4.0)
            v = v * exp(-delta * delta / 10.0);
        obs[r] = v;
    }
}

static void advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup)
{
    const uint32_t tick = s->ticks;
    const double *e = s->last;
    const double turn = w->params[2] * (e[0] - e[1]) * (M_PI / 180.0);
    s->physical[0] = bl_task_wrap(s->physical[0] + turn, M_PI);
    s->physical[1] = bl_task_wrap(s->physical[1] + s->physical[2] * w->params[1], M_PI);
    if ((tick + 1) % 720 == 0)
        s->physical[2] = -s->physical[2];
    if (tick >= warmup) {
        const double error = bl_task_wrap(s->physical[0] - s->physical[1], M_PI);
        s->total = s->total + cos(error);
        s->scored++;
        s->outcome = s->total / (double)s->scored;
    }
    s->ticks = tick + 1;
}

const bl_task_ops bl_task_tracking = {
    "tracking", BL_TASK_TRACKING, names, defaults, validate, definition, world, encode, advance, BL_TASK_CONTROLS_BASE,
};
