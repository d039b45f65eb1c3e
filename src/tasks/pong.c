/* pong: a 1000 x 500 court, the paddle at x = 100 (half height 65 for hits,
 * centre clamped to [50, 450]) moves 100 (e0 - e1) per tick; the ball (speed
 * 5 in x and y) bounces off y = 5 and 495 and the far wall x = 995; coming
 * back it is hit when it reaches x <= 115 within 65 of the paddle, else it
 * passes and is missed when x < 0, then served again from x = 995 at
 * y = 1 + 498 u, vy = +-5 by the next pair of drawn uniforms. 46 receptors at
 * -90, -86, ..., 90 degrees read sensory_gain when the ball's bearing from
 * (100, paddle) lies within 2 degrees. Score after warmup: hit_rate =
 * hits / (hits + misses) (0 before the first). */
#include <math.h>
#include <stdlib.h>

#include "tasks/task_ops.h"

#define DEG (180.0 / M_PI)

double bl_task_wrap(double v, double half);

static const char *const names[] = {"sensory_gain", NULL};

static void defaults(bl_task_options *o) { o->sensory_gain = 1.0; }

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    if (!(o->sensory_gain >= 0.0))
        return bl_fail(err, BL_ERR_INVALID, "pong: sensory_gain must be finite and nonnegative");
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 46;
    d->default_horizon = 7200;
    d->minimum_scored = 6000;
    d->outcome_key = "hit_rate";
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    w->n_draws = horizon + 1;
    w->draws = malloc(2 * (size_t)w->n_draws * sizeof *w->draws);
    if (!w->draws)
        return bl_fail(err, BL_ERR_NOMEM, "pong: cannot allocate %u serves", w->n_draws);
    for (size_t k = 0; k < 2 * (size_t)w->n_draws; k++)
        w->draws[k] = bl_task_rng_uniform(&r);
    w->width = 46;
    w->params[0] = o->sensory_gain;
    for (uint32_t k = 0; k < 46; k++)
        w->angles[k] = -90.0 + 4.0 * k;
    w->physical[0] = 995.0;
    w->physical[1] = 1.0 + 498.0 * w->draws[0];
    w->physical[2] = 250.0;
    w->physical[3] = -5.0;
    w->physical[4] = w->draws[1] >= 0.5 ? 5.0 : -5.0;
    return BL_OK;
}

static void encode(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs)
{
    (void)frame;
    const double dx = s->physical[0] - 100.0, dy = s->physical[1] - s->physical[2];
    const double bearing = atan2(dy, dx) * DEG;
    for (uint32_t r = 0; r < w->width; r++) {
        obs[r] = 0.0;
        if (bearing >= -90.0 && bearing <= 90.0 && fabs(bl_task_wrap(bearing - w->angles[r], 180.0)) <= 2.0)
            obs[r] = w->params[0];
    }
}

static void advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup)
{
    const uint32_t tick = s->ticks;
    double *p = s->physical;
    const double *e = s->last;
    const double paddle = fmin(450.0, fmax(50.0, p[2] + 100.0 * (e[0] - e[1])));
    double x = p[0] + p[3], y = p[1] + p[4], vx = p[3], vy = p[4];
    int past = (int)p[5], hit = 0, miss = 0;
    if (y <= 5.0) {
        y = 5.0;
        vy = fabs(vy);
    } else if (y >= 495.0) {
        y = 495.0;
        vy = -fabs(vy);
    }
    if (x >= 995.0) {
        x = 995.0;
        vx = -fabs(vx);
        past = 0;
    }
    if (vx < 0.0 && past == 0 && x <= 115.0) {
        if (fabs(y - paddle) <= 65.0) {
            x = 115.0;
            vx = fabs(vx);
            hit = 1;
        } else {
            past = 1;
        }
    }
    if (x < 0.0) {
        miss = 1;
        const uint32_t draw = (uint32_t)p[6] + 1;
        if (draw < w->n_draws) {
            x = 995.0;
            y = 1.0 + 498.0 * w->draws[2 * (size_t)draw];
            vx = -5.0;
            vy = w->draws[2 * (size_t)draw + 1] >= 0.5 ? 5.0 : -5.0;
            past = 0;
            p[6] = draw;
        } else {
            s->finite = 0; /* out of serves: cannot happen within the horizon */
        }
    }
    p[0] = x;
    p[1] = y;
    p[2] = paddle;
    p[3] = vx;
    p[4] = vy;
    p[5] = past;
    if (tick >= warmup) {
        s->hits += (uint32_t)hit;
        s->misses += (uint32_t)miss;
        if (miss)
            s->rally = 0;
        if (hit) {
            s->rally++;
            if (s->rally > s->longest_rally)
                s->longest_rally = s->rally;
        }
        const uint32_t total = s->hits + s->misses;
        s->outcome = total ? (double)s->hits / (double)total : 0.0;
        s->scored++;
    }
    s->ticks = tick + 1;
}

const bl_task_ops bl_task_pong = {
    "pong", BL_TASK_PONG, names, defaults, validate, definition, world, encode, advance, BL_TASK_CONTROLS_BASE,
};
