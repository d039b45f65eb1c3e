/* cartpole_plank_easy: the classic cart-pole (gravity 9.8, cart 1.0, pole
 * 0.1, half length 0.5, force +-10, Euler step 0.02) observed through 8
 * receptors, two per state variable (negative, positive side). Each world
 * tick is 24 node frames: on frames 1, 4, ..., 22 (slot 1..8) the receptor of
 * the variable's sign fires while slot <= ceil(8 |value| / scale), scales
 * (2.4, 2.0, 0.2095, 2.0); the effectors are summed over the 24 frames and
 * push right when votes[1] > votes[0]. The episode ends when |x| > 2.4,
 * |theta| > 0.2095 or at tick 15000; fitness = ticks survived. */
#include <math.h>

#include "tasks/task_ops.h"

static const char *const names[] = {"initial_ranges", NULL};

static void defaults(bl_task_options *o)
{
    const double r[4][2] = {{-1.2, 1.2}, {-0.05, 0.05}, {-0.10475, 0.10475}, {-0.05, 0.05}};
    for (int k = 0; k < 4; k++)
        for (int m = 0; m < 2; m++)
            o->initial_ranges[k][m] = r[k][m];
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    for (int k = 0; k < 4; k++)
        if (!(o->initial_ranges[k][0] <= o->initial_ranges[k][1]))
            return bl_fail(err, BL_ERR_INVALID, "cartpole_plank_easy: initial_ranges[%d] must be an ordered pair", k);
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 8;
    d->neural_frames = 24;
    d->default_horizon = 15000;
    d->minimum_scored = 15000;
    d->outcome_key = "fitness";
    d->upper_bound = 15000.0;
    d->episode = 1; /* ends by itself; warmup 0 */
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    (void)horizon;
    (void)err;
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    for (int k = 0; k < 4; k++) {
        const double lo = o->initial_ranges[k][0], hi = o->initial_ranges[k][1];
        /* uniform(lo, hi) = lo + (hi - lo) u, drawn only for a proper range (under
         * philox-host-v1 this is exactly NumPy's Generator.uniform) */
        w->physical[k] = lo == hi ? lo : lo + (hi - lo) * bl_task_rng_uniform(&r);
    }
    w->width = 8;
    w->params[0] = 2.4;
    w->params[1] = 2.0;
    w->params[2] = 0.2095;
    w->params[3] = 2.0;
    return BL_OK;
}

static void encode(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs)
{
    const uint32_t slot = (frame - 1) % 3 == 0 ? (frame - 1) / 3 + 1 : 0;
    for (uint32_t r = 0; r < 8; r++) {
        const uint32_t k = r / 2;
        const double v = s->physical[k];
        const double c = ceil(8.0 * fabs(v) / w->params[k]);
        const uint32_t count = !(c > 0.0) ? 0 : c > 8.0 ? 8 : (uint32_t)c;
        const uint32_t sign_bin = k * 2 + (v > 0.0);
        obs[r] = slot > 0 && slot <= count && r == sign_bin ? 1.0 : 0.0;
    }
}

static void advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup)
{
    (void)w;
    (void)warmup;
    const uint32_t tick = s->ticks;
    double *p = s->physical;
    const double force = s->votes[1] > s->votes[0] ? 10.0 : -10.0;
    const double x = p[0], xd = p[1], th = p[2], td = p[3];
    const double cs = cos(th), sn = sin(th);
    const double temp = (force + 0.1 * 0.5 * td * td * sn) / 1.1;
    const double th_acc = (9.8 * sn - cs * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cs * cs / 1.1));
    const double x_acc = temp - 0.1 * 0.5 * th_acc * cs / 1.1;
    p[0] = x + 0.02 * xd;
    p[1] = xd + 0.02 * x_acc;
    p[2] = th + 0.02 * td;
    p[3] = td + 0.02 * th_acc;
    s->outcome = (double)(tick + 1);
    s->scored = tick + 1;
    if (fabs(p[0]) > 2.4 || fabs(p[2]) > 0.2095 || tick + 1 >= 15000)
        s->done = 1;
    s->ticks = tick + 1;
}

const bl_task_ops bl_task_cartpole = {
    "cartpole_plank_easy", BL_TASK_CARTPOLE_PLANK_EASY, names, defaults, validate, definition, world, encode, advance,
    BL_TASK_CONTROLS_BASE,
};
