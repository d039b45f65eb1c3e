/* temporal_order: two cues in turn, the label's channel first (for cue_ticks),
 * after a gap the other channel (for cue_ticks), then a terminal signal on
 * channel 2 for terminal_ticks; answer which came first. Input width 4
 * (response indicator on 3); input_mode hidden shows neither cue. */
#include "tasks/task_ops.h"

static const char *const names[] = {"cue_ticks", "gap", "terminal_ticks", "response_ticks", "input_mode", NULL};

static void defaults(bl_task_options *o)
{
    o->cue_ticks = 8;
    o->gap = 8;
    o->terminal_ticks = 8;
    o->response_ticks = 8;
    o->input_visible = 1;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    if (2ull * o->cue_ticks + o->gap + o->terminal_ticks + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "temporal_order: an episode of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 4;
    d->default_horizon = 2 * o->cue_ticks + o->gap + o->terminal_ticks + o->response_ticks;
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
    const uint32_t c = o->cue_ticks, g = o->gap, r = o->response_ticks;
    const uint32_t len = 2 * c + g + o->terminal_ticks + r;
    bl_status st = bl_task_world_alloc(w, len, 4, 1, err);
    if (st)
        return st;
    bl_task_rng rng;
    bl_task_rng_init(&rng, seed);
    const int label = bl_task_rng_int(&rng, 1, 2);
    if (o->input_visible) {
        bl_task_mark(w, 0, c, (uint32_t)label - 1, 1.0);
        bl_task_mark(w, c + g, 2 * c + g, (uint32_t)(2 - label), 1.0);
    }
    bl_task_mark(w, 2 * c + g, len - r, 2, 1.0);
    bl_task_episode_window(w, len - r, c, (uint32_t)label);
    w->meta[0] = label;
    bl_task_episode_go(w, 3);
    return BL_OK;
}

const bl_task_ops bl_task_temporal_order = {
    "temporal_order", BL_TASK_TEMPORAL_ORDER, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance,
    BL_TASK_CONTROLS_BASE | (1u << BL_CTRL_BAG) | (1u << BL_CTRL_LAST),
};
