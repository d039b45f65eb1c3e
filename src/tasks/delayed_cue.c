/* The delayed-cue task (docs/reservoir.md, "The delayed-cue task"): its row of the task table, and the bl_dc_* functions that predate
 * the table (one trial's world, observation, scoring and controls). Input
 * width 3: the two cue channels and the response indicator. */
#include <math.h>
#include <string.h>

#include "brainlesslab/task.h"
#include "tasks/task_ops.h"

/* ---- options ---- */

static const char *const cue_modes[] = {"transient", "persistent", "hidden"};

const char *bl_cue_mode_name(bl_cue_mode mode) { return cue_modes[mode]; }

int bl_cue_mode_parse(const char *name, bl_cue_mode *out)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, cue_modes[k])) {
            *out = (bl_cue_mode)k;
            return 0;
        }
    return -1;
}

void bl_dc_defaults(bl_dc_options *o)
{
    memset(o, 0, sizeof *o);
    o->cue_ticks = 8;
    o->response_ticks = 8;
    o->n_delays = 3;
    o->delays[0] = 8;
    o->delays[1] = 32;
    o->delays[2] = 128;
    o->cue_mode = BL_CUE_TRANSIENT;
}

uint32_t bl_dc_horizon(const bl_dc_options *o)
{
    uint32_t longest = 0;
    for (uint32_t k = 0; k < o->n_delays; k++)
        if (o->delays[k] > longest)
            longest = o->delays[k];
    return o->cue_ticks + longest + o->response_ticks;
}

bl_status bl_dc_validate(const bl_dc_options *o, bl_error *err)
{
    if (o->cue_ticks < 1 || o->response_ticks < 1)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: cue_ticks and response_ticks must be >= 1");
    if (o->n_delays < 1 || o->n_delays > BL_DC_MAX_DELAYS)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: delays needs 1..%d values", BL_DC_MAX_DELAYS);
    for (uint32_t k = 0; k < o->n_delays; k++)
        for (uint32_t m = 0; m < k; m++)
            if (o->delays[k] == o->delays[m])
                return bl_fail(err, BL_ERR_INVALID, "delayed_cue: delays[%u] = %u repeats delays[%u]", k,
                               o->delays[k], m);
    uint64_t longest = 0;
    for (uint32_t k = 0; k < o->n_delays; k++)
        if (o->delays[k] > longest)
            longest = o->delays[k];
    if ((uint64_t)o->cue_ticks + longest + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "delayed_cue: a trial of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

/* ---- worlds ---- */

void bl_dc_world_draw(const bl_dc_options *o, uint64_t world_seed, bl_dc_world *w)
{
    double u0 = bl_stream_uniform(world_seed, 0, 1);
    double u1 = bl_stream_uniform(world_seed, 0, 2);
    uint32_t k = (uint32_t)(u1 * (double)o->n_delays);
    if (k >= o->n_delays)
        k = o->n_delays - 1;
    w->label = u0 >= 0.5 ? 2 : 1;
    w->delay = o->delays[k];
    w->response_start = o->cue_ticks + w->delay;
    w->length = w->response_start + o->response_ticks;
    w->response_end = w->length;
}

void bl_dc_stimulus(const bl_dc_options *o, const bl_dc_world *w, uint32_t tick, double out[BL_DC_INPUTS])
{
    out[0] = out[1] = out[2] = 0.0;
    if (tick >= w->length)
        return;
    if (tick >= w->response_start && tick < w->response_end)
        out[2] = 1.0; /* the response indicator */
    if (o->cue_mode == BL_CUE_HIDDEN)
        return;
    if (o->cue_mode == BL_CUE_PERSISTENT || tick < o->cue_ticks)
        out[w->label - 1] = 1.0;
}

const char *bl_trial_status_name(bl_trial_status s)
{
    return s == BL_TRIAL_COMPLETED ? "completed" : s == BL_TRIAL_FAILED ? "failed" : "incomplete";
}

/* ---- scoring ---- */

void bl_dc_score_init(bl_dc_score *s) { memset(s, 0, sizeof *s); }

int bl_dc_score_tick(bl_dc_score *s, const bl_dc_world *w, uint32_t tick, const double eff[BL_DC_EFFECTORS])
{
    if (s->done || s->failed)
        return 1;
    for (int e = 0; e < BL_DC_EFFECTORS; e++)
        if (!isfinite(eff[e]) || eff[e] < 0.0 || eff[e] > 1.0) {
            s->failed = 1;
            return 1;
        }
    if (tick >= w->response_start && tick < w->response_end) {
        s->evidence[0] = s->evidence[0] + eff[0];
        s->evidence[1] = s->evidence[1] + eff[1];
    }
    s->ticks = tick + 1;
    if (tick + 1 == w->response_end) {
        s->decision = s->evidence[1] > s->evidence[0] ? 2 : 1;
        s->tie = s->evidence[0] == s->evidence[1];
    }
    if (tick + 1 >= w->length) {
        s->done = 1;
        s->outcome = s->decision == (int)w->label;
    }
    return s->done;
}

/* ---- controls ---- */

void bl_dc_control_init(bl_dc_control *c, bl_controller kind, uint64_t control_seed)
{
    c->kind = kind;
    c->first = 0;
    c->coin = bl_stream_uniform(control_seed, 0, 1) >= 0.5 ? 2 : 1;
}

void bl_dc_control_tick(bl_dc_control *c, const double obs[BL_DC_INPUTS], double eff[BL_DC_EFFECTORS])
{
    int choice = 1;
    switch (c->kind) {
    case BL_CTRL_ORACLE:
        /* It sees what a reservoir sees: the first cue shown, if any. */
        if (!c->first && obs[0] + obs[1] > 0.0)
            c->first = obs[1] > obs[0] ? 2 : 1;
        choice = c->first ? c->first : 1;
        break;
    case BL_CTRL_CONSTANT_RIGHT: choice = 2; break;
    case BL_CTRL_REFERENCE_NULL: choice = c->coin; break;
    default: choice = 1; break;
    }
    eff[0] = choice == 1 ? 1.0 : 0.0;
    eff[1] = choice == 2 ? 1.0 : 0.0;
}

/* ---- the table row ---- */

static const char *const names[] = {"cue_ticks", "delays", "response_ticks", "cue_mode", NULL};

static void to_dc(const bl_task_options *o, bl_dc_options *d)
{
    memset(d, 0, sizeof *d);
    d->cue_ticks = o->cue_ticks;
    d->response_ticks = o->response_ticks;
    d->n_delays = o->n_delays;
    memcpy(d->delays, o->delays, sizeof d->delays);
    d->cue_mode = o->cue_mode;
}

static void defaults(bl_task_options *o)
{
    bl_dc_options d;
    bl_dc_defaults(&d);
    o->cue_ticks = d.cue_ticks;
    o->response_ticks = d.response_ticks;
    o->n_delays = d.n_delays;
    memcpy(o->delays, d.delays, sizeof o->delays);
    o->cue_mode = d.cue_mode;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    bl_dc_options d;
    to_dc(o, &d);
    return bl_dc_validate(&d, err);
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    bl_dc_options x;
    to_dc(o, &x);
    d->n_inputs = BL_DC_INPUTS;
    d->default_horizon = bl_dc_horizon(&x);
    d->minimum_scored = 1;
    d->outcome_key = "recall_accuracy";
    d->chance = 0.5;
    d->episode = 1;
    d->probe = 1;
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    (void)horizon;
    bl_dc_options x;
    bl_dc_world dw;
    to_dc(o, &x);
    if (seed->scheme == BL_RNG_PHILOX_HOST_V1) {
        /* The Python project's draws: integers(1, 3) for the cue, then
         * choice(delays) (an index draw; none when there is one delay). */
        bl_task_rng r;
        bl_task_rng_init(&r, seed);
        memset(&dw, 0, sizeof dw);
        dw.label = (uint32_t)bl_task_rng_int(&r, 1, 2);
        dw.delay = x.delays[bl_task_rng_choice(&r, x.n_delays)];
        dw.response_start = x.cue_ticks + dw.delay;
        dw.length = dw.response_start + x.response_ticks;
        dw.response_end = dw.length;
    } else {
        bl_dc_world_draw(&x, seed->u64, &dw);
    }
    bl_status st = bl_task_world_alloc(w, dw.length, BL_DC_INPUTS, 1, err);
    if (st)
        return st;
    for (uint32_t t = 0; t < dw.length; t++)
        bl_dc_stimulus(&x, &dw, t, bl_task_stim(w, t));
    w->starts[0] = dw.response_start;
    w->ends[0] = dw.response_end;
    w->cue_ends[0] = o->cue_ticks;
    w->labels[0] = dw.label;
    w->meta[0] = (int)dw.label;
    w->meta[1] = (int)dw.delay;
    return BL_OK;
}

const bl_task_ops bl_task_delayed_cue = {
    "delayed_cue", BL_TASK_DELAYED_CUE, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance, BL_TASK_CONTROLS_BASE | BL_TASK_CONTROLS_MEMORY,
};
