/* evidence_accumulation: pulse_count pulses of pulse_ticks each on channel 0
 * (left) or 1 (right); the label's side has pulse_count (1 + f) / 2 of them;
 * answer the majority side. Input width 3 (response indicator on 2);
 * input_mode hidden shows no pulses (only the indicator). */
#include <stdlib.h>

#include "tasks/task_ops.h"

static const char *const names[] = {"pulse_count", "evidence_fraction", "pulse_ticks", "response_ticks",
                                    "input_mode", NULL};

static void defaults(bl_task_options *o)
{
    o->pulse_count = 32;
    o->evidence_fraction = 0.25;
    o->pulse_ticks = 1;
    o->response_ticks = 8;
    o->input_visible = 1;
}

static bl_status validate(const bl_task_options *o, bl_error *err)
{
    return bl_task_check_pulses(o, "evidence_accumulation", err);
}

static void definition(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 3;
    d->default_horizon = o->pulse_count * o->pulse_ticks + o->response_ticks;
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
    const uint32_t n = o->pulse_count, p = o->pulse_ticks, len = n * p + o->response_ticks;
    uint32_t *pulses = malloc(n * sizeof *pulses);
    bl_status st = pulses ? bl_task_world_alloc(w, len, 3, 1, err)
                          : bl_fail(err, BL_ERR_NOMEM, "evidence_accumulation: cannot allocate %u pulses", n);
    if (st) {
        free(pulses);
        return st;
    }
    bl_task_rng r;
    bl_task_rng_init(&r, seed);
    const int label = bl_task_rng_int(&r, 1, 2);
    bl_task_pulses(&r, n, o->evidence_fraction, label, pulses);
    if (o->input_visible)
        bl_task_mark_pulses(w, 0, p, pulses, n, 0);
    free(pulses);
    bl_task_episode_window(w, n * p, p, (uint32_t)label);
    w->meta[0] = label;
    bl_task_episode_go(w, 2);
    return BL_OK;
}

const bl_task_ops bl_task_evidence_accumulation = {
    "evidence_accumulation", BL_TASK_EVIDENCE_ACCUMULATION, names, defaults, validate, definition, world,
    bl_task_episode_encode, bl_task_episode_advance,
    BL_TASK_CONTROLS_BASE | (1u << BL_CTRL_FIRST) | (1u << BL_CTRL_LAST),
};
