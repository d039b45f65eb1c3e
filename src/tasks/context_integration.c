/* context_integration: a context cue (channel 0 or 1, for cue_ticks;
 * persistent: all episode; hidden: never) says which of two pulse streams
 * counts; stream 1 on channels 2-3, stream 2 on channels 4-5, pulses from
 * cue_ticks on; answer the majority side of the context's stream. The other
 * stream's label agrees (congruent), disagrees (conflicting) or is drawn
 * (mixed). Input width 7 (response indicator on 6). */
#include <stdlib.h>

#include "tasks/task_ops.h"

static const char *const names[] = {"cue_ticks", "pulse_count", "evidence_fraction", "pulse_ticks",
                                    "response_ticks", "context_mode", "congruency", NULL};

static void defaults(bl_task_options *o)
{
    o->cue_ticks = 8;
    o->pulse_count = 32;
    o->evidence_fraction = 0.25;
    o->pulse_ticks = 1;
    o->response_ticks = 8;
    o->context_mode = BL_CUE_TRANSIENT;
    o->congruency = BL_CONG_MIXED;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    return bl_task_check_pulses(o, "context_integration", err);
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 7;
    d->default_horizon = o->cue_ticks + o->pulse_count * o->pulse_ticks + o->response_ticks;
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
    const uint32_t c = o->cue_ticks, n = o->pulse_count, p = o->pulse_ticks, len = c + n * p + o->response_ticks;
    uint32_t *pulses = malloc(2 * (size_t)n * sizeof *pulses);
    bl_status st = pulses ? bl_task_world_alloc(w, len, 7, 1, err)
                          : bl_fail(err, BL_ERR_NOMEM, "context_integration: cannot allocate %u pulses", n);
    if (st) {
        free(pulses);
        return st;
    }
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    const int context = bl_task_rng_int(&r, 1, 2), label = bl_task_rng_int(&r, 1, 2), drawn = bl_task_rng_int(&r, 1, 2);
    const int other = o->congruency == BL_CONG_CONGRUENT ? label : o->congruency == BL_CONG_CONFLICTING ? 3 - label : drawn;
    const int labels[2] = {context == 1 ? label : other, context == 1 ? other : label};
    for (int s = 0; s < 2; s++)
        bl_task_pulses(&r, n, o->evidence_fraction, labels[s], pulses + (size_t)s * n);
    bl_task_cue(w, o->context_mode, 0, c, (uint32_t)context - 1);
    for (uint32_t s = 0; s < 2; s++)
        bl_task_mark_pulses(w, c, p, pulses + (size_t)s * n, n, 2 + 2 * s);
    free(pulses);
    bl_task_episode_window(w, c + n * p, c, (uint32_t)label);
    w->meta[0] = context;
    w->meta[1] = label == other;
    bl_task_episode_go(w, 6);
    return BL_OK;
}

const bl_task_ops bl_task_context_integration = {
    "context_integration", BL_TASK_CONTEXT_INTEGRATION, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance,
    BL_TASK_CONTROLS_BASE | (1u << BL_CTRL_CONTEXT_BLIND) | (1u << BL_CTRL_IRRELEVANT) | (1u << BL_CTRL_FIRST) |
        (1u << BL_CTRL_LAST),
};
