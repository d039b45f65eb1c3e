/* delayed_xor: two cues separated by a gap; answer 1 when they match, 2 when
 * they differ. Input width 5: first cue on channels 0-1 for [0, cue_ticks),
 * second on channels 2-3 for [cue_ticks + gap, 2 cue_ticks + gap) (persistent:
 * each held from its onset to the end; hidden: neither shown), response
 * indicator on 4. */
#include "tasks/task_ops.h"

static const char *const names[] = {"cue_ticks", "gap", "response_ticks", "cue_mode", NULL};

static void defaults(bl_task_options *o)
{
    o->cue_ticks = 8;
    o->gap = 32;
    o->response_ticks = 8;
    o->cue_mode = BL_CUE_TRANSIENT;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    if (2ull * o->cue_ticks + o->gap + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "delayed_xor: an episode of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 5;
    d->default_horizon = 2 * o->cue_ticks + o->gap + o->response_ticks;
    d->minimum_scored = 1;
    d->outcome_key = "probe_accuracy";
    d->chance = 0.5;
    d->episode = 1;
    d->probe = 1;
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    (void)horizon;
    const uint32_t c = o->cue_ticks, len = 2 * c + o->gap + o->response_ticks, second = c + o->gap;
    bl_status st = bl_task_world_alloc(w, len, 5, 1, err);
    if (st)
        return st;
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    const int a = bl_task_rng_int(&r, 1, 2), b = bl_task_rng_int(&r, 1, 2);
    bl_task_cue(w, o->cue_mode, 0, c, (uint32_t)a - 1);
    bl_task_cue(w, o->cue_mode, second, c, (uint32_t)b + 1);
    bl_task_episode_window(w, 2 * c + o->gap, c, a == b ? 1 : 2);
    w->meta[0] = a;
    w->meta[1] = b;
    bl_task_episode_go(w, 4);
    return BL_OK;
}

const bl_task_ops bl_task_delayed_xor = {
    "delayed_xor", BL_TASK_DELAYED_XOR, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance, BL_TASK_CONTROLS_BASE | BL_TASK_CONTROLS_MEMORY,
};
