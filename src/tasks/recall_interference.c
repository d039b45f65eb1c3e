/* recall_interference: the delayed cue with distractor cues in the delay.
 * Input width 3 (two cue channels, response indicator). The cue is shown
 * for cue_ticks; `distractors` distractor cues of distractor_ticks each start
 * at cue_ticks + i (delay - distractor_ticks) / (distractors + 1) (integer
 * division, i = 1..distractors) and replace the cue channels while shown:
 * a random side (drawn per distractor), the cue's side (matched), the other
 * side (opposite) or none (absent). Answer: the cue. */
#include "tasks/task_ops.h"

static const char *const names[] = {"cue_ticks", "delay", "response_ticks", "distractors", "distractor_ticks",
                                    "cue_mode", "distractor_mode", NULL};

static void defaults(bl_task_options *o)
{
    o->cue_ticks = 8;
    o->delay = 32;
    o->response_ticks = 8;
    o->distractors = 1;
    o->distractor_ticks = 4;
    o->cue_mode = BL_CUE_TRANSIENT;
    o->distractor_mode = BL_DISTRACT_RANDOM;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    const uint64_t k = o->distractors, d = o->delay, w = o->distractor_ticks;
    if (k && (d < 32 || k * w + k + 1 > d))
        return bl_fail(err, BL_ERR_INVALID, "recall_interference: distractors need delay >= 32 and blank ticks "
                       "between cues (distractors x (distractor_ticks + 1) + 1 <= delay)");
    if ((uint64_t)o->cue_ticks + d + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "recall_interference: an episode of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 3;
    d->default_horizon = o->cue_ticks + o->delay + o->response_ticks;
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
    const uint32_t c = o->cue_ticks, len = c + o->delay + o->response_ticks;
    bl_status st = bl_task_world_alloc(w, len, 3, 1, err);
    if (st)
        return st;
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    const int cue = bl_task_rng_int(&r, 1, 2);
    bl_task_cue(w, o->cue_mode, 0, c, (uint32_t)cue - 1);
    const uint32_t k = o->distractors, dw = o->distractor_ticks;
    for (uint32_t i = 1; i <= k; i++) {
        /* Drawn for every distractor, whatever the mode; nothing else is drawn in
         * between, so under philox-host-v1 these are integers(1, 3, distractors). */
        const int drawn = bl_task_rng_int(&r, 1, 2);
        const uint32_t start = c + i * (o->delay - dw) / (k + 1);
        if (o->distractor_mode == BL_DISTRACT_ABSENT)
            continue;
        const int label = o->distractor_mode == BL_DISTRACT_MATCHED    ? cue
                          : o->distractor_mode == BL_DISTRACT_OPPOSITE ? 3 - cue
                                                                        : drawn;
        bl_task_mark(w, start, start + dw, 0, 0.0);
        bl_task_mark(w, start, start + dw, 1, 0.0);
        bl_task_mark(w, start, start + dw, (uint32_t)label - 1, 1.0);
    }
    bl_task_episode_window(w, c + o->delay, c, (uint32_t)cue);
    w->meta[0] = cue;
    bl_task_episode_go(w, 2);
    return BL_OK;
}

const bl_task_ops bl_task_recall_interference = {
    "recall_interference", BL_TASK_RECALL_INTERFERENCE, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance, BL_TASK_CONTROLS_BASE | BL_TASK_CONTROLS_MEMORY,
};
