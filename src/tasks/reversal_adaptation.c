/* reversal_adaptation: `rounds` rounds of cue (cue_ticks + response_ticks on
 * channel 0 or 1), response window (the last response_ticks of the cue, with
 * the indicator on channel 2) and feedback (feedback_ticks on channel 3, plus,
 * when visible, the previous choice on 4-5 and right/wrong on 6-7 from the
 * runner's decisions). The answer is the cue, or the other side when the
 * drawn initial mapping XOR (round >= the reversal round) holds; the outcome
 * is the share right over the 16 rounds from the reversal. Input width 8. */
#include "tasks/task_ops.h"

static const char *const names[] = {"rounds", "cue_ticks", "response_ticks", "feedback_ticks", "reversal_range",
                                    "feedback_mode", NULL};

static void defaults(bl_task_options *o)
{
    o->rounds = 96;
    o->cue_ticks = 8;
    o->response_ticks = 8;
    o->feedback_ticks = 8;
    o->reversal_lo = 32;
    o->reversal_hi = 64;
    o->feedback_visible = 1;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    if (o->rounds > BL_TASK_MAX_ROUNDS)
        return bl_fail(err, BL_ERR_INVALID, "reversal_adaptation: more than %d rounds", BL_TASK_MAX_ROUNDS);
    if (!(o->reversal_lo <= o->reversal_hi && (uint64_t)o->reversal_hi + 15 <= o->rounds))
        return bl_fail(err, BL_ERR_INVALID, "reversal_adaptation: reversal_range [%u, %u] must be ordered and leave "
                       "sixteen scored rounds (high <= rounds - 15)", o->reversal_lo, o->reversal_hi);
    if ((uint64_t)o->rounds * ((uint64_t)o->cue_ticks + o->response_ticks + o->feedback_ticks) > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "reversal_adaptation: an episode of more than %d ticks", BL_DC_MAX_TICKS);
    return BL_OK;
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 8;
    d->default_horizon = o->rounds * (o->cue_ticks + o->response_ticks + o->feedback_ticks);
    d->minimum_scored = 1;
    d->outcome_key = "adaptation_accuracy";
    d->chance = 0.5;
    d->episode = 1;
    d->probe = 1;
}

static bl_status world(const bl_task_options *o, const bl_rng_seed *seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err)
{
    (void)horizon;
    const uint32_t c = o->cue_ticks, r = o->response_ticks, f = o->feedback_ticks, n = o->rounds;
    const uint32_t span = c + r + f;
    bl_status st = bl_task_world_alloc(w, n * span, 8, n, err);
    if (st)
        return st;
    bl_task_rng rng;
    bl_task_rng_init(&rng, seed);
    const int mapping = bl_task_rng_int(&rng, 0, 1);
    const int reversal = bl_task_rng_int(&rng, (int)o->reversal_lo, (int)o->reversal_hi);
    for (uint32_t k = 0; k < n; k++) {
        const int cue = bl_task_rng_int(&rng, 1, 2);
        const uint32_t start = k * span;
        bl_task_mark(w, start, start + c + r, (uint32_t)cue - 1, 1.0);
        bl_task_mark(w, start + c + r, start + span, 3, 1.0);
        w->starts[k] = start + c;
        w->ends[k] = start + c + r;
        w->cue_ends[k] = start + c;
        w->labels[k] = (uint32_t)((mapping ^ ((int)k + 1 >= reversal)) ? 3 - cue : cue);
    }
    w->reversal = (uint32_t)reversal;
    w->feedback = o->feedback_visible;
    w->initial_mapping = mapping;
    w->meta[0] = reversal;
    w->meta[1] = mapping;
    bl_task_episode_go(w, 2);
    return BL_OK;
}

const bl_task_ops bl_task_reversal_adaptation = {
    "reversal_adaptation", BL_TASK_REVERSAL_ADAPTATION, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance, BL_TASK_CONTROLS_BASE | (1u << BL_CTRL_FIXED_MAPPING),
};
