/* One trial of a task, traced: the world, every observation and effector,
 * the physics after each tick, the decisions and the outcome. What the
 * NumPy oracle (tests/oracles/tasks_numpy.py) recomputes. */
#include <stdlib.h>
#include <string.h>

#include "tasks/task_ops.h"

void bl_task_trace_destroy(bl_task_trace *t)
{
    if (!t)
        return;
    free(t->obs);
    free(t->eff);
    free(t->physical);
    free(t->stimuli);
    free(t->starts);
    free(t->ends);
    free(t->labels);
    free(t->decisions);
    free(t->ties);
    free(t->draws);
    free(t);
}

static void *dup(const void *p, size_t bytes)
{
    void *q = malloc(bytes ? bytes : 1);
    if (q && bytes)
        memcpy(q, p, bytes);
    return q;
}

bl_status bl_task_trace_run(const bl_task_options *o, bl_controller controller, uint64_t world_seed,
                            uint64_t control_seed, uint32_t horizon, uint32_t warmup, const double *tape,
                            size_t tape_rows, bl_task_trace **out, bl_error *err)
{
    const bl_rng_seed ws = bl_task_seed_v1(world_seed);
    return bl_task_trace_run_rng(o, controller, &ws, control_seed, horizon, warmup, tape, tape_rows, out, err);
}

bl_status bl_task_trace_run_rng(const bl_task_options *o, bl_controller controller, const bl_rng_seed *world_seed,
                                uint64_t control_seed, uint32_t horizon, uint32_t warmup, const double *tape,
                                size_t tape_rows, bl_task_trace **out, bl_error *err)
{
    *out = NULL;
    bl_status st = bl_task_validate(o, err);
    if (st)
        return st;
    if (!tape && (controller == BL_CTRL_RESERVOIR || !bl_task_controller_allowed(o->kind, controller)))
        return bl_fail(err, BL_ERR_INVALID, "%s: controller %s is not a control of this task", bl_task_name(o->kind),
                       bl_controller_name(controller));
    bl_task_definition d;
    bl_task_definition_of(o, &d);
    if (!horizon)
        horizon = d.default_horizon;
    if (d.n_inputs > BL_TASK_MAX_INPUTS || horizon > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "%s: too many inputs or ticks", bl_task_name(o->kind));
    const bl_task_ops *ops = bl_task_ops_of(o->kind);
    bl_task_world w;
    memset(&w, 0, sizeof w);
    w.kind = o->kind;
    if ((st = ops->world(o, world_seed, horizon, &w, err)))
        return st;
    bl_task_state s;
    if ((st = bl_task_state_init(&w, &s, err))) {
        bl_task_world_free(&w);
        return st;
    }
    bl_task_control c;
    bl_task_control_init(&c, controller, o, control_seed);
    bl_task_trace *t = calloc(1, sizeof *t);
    const size_t F = d.neural_frames, R = d.n_inputs;
    if (t) {
        t->frames = (uint32_t)F;
        t->width = (uint32_t)R;
        t->obs = malloc((size_t)horizon * F * R * sizeof *t->obs + 1);
        t->eff = malloc((size_t)horizon * F * 2 * sizeof *t->eff + 1);
        t->physical = malloc((size_t)horizon * 8 * sizeof *t->physical + 1);
    }
    if (!t || !t->obs || !t->eff || !t->physical) {
        bl_task_trace_destroy(t);
        bl_task_state_free(&s);
        bl_task_world_free(&w);
        return bl_fail(err, BL_ERR_NOMEM, "task trace: cannot allocate %u ticks", horizon);
    }
    size_t row = 0;
    while (s.finite && !s.done && s.ticks < horizon && (!tape || row + F <= tape_rows)) {
        const uint32_t tick = s.ticks;
        for (uint32_t f = 1; f <= F; f++, row++) {
            double *obs = t->obs + row * R, *eff = t->eff + row * 2;
            ops->encode(&w, &s, f, obs);
            if (tape) {
                eff[0] = tape[2 * row];
                eff[1] = tape[2 * row + 1];
            } else {
                bl_task_control_step(&c, obs, (uint32_t)R, tick, s.round, &w, &s, eff);
            }
            bl_task_accumulate(&w, &s, eff, f);
        }
        bl_task_advance(&w, &s, warmup);
        memcpy(t->physical + (size_t)tick * 8, s.physical, sizeof s.physical);
        t->ticks = tick + 1;
    }
    t->length = w.length;
    t->n_rounds = w.n_rounds;
    t->stimuli = dup(w.stimuli, (size_t)w.length * w.width * sizeof *w.stimuli);
    t->starts = dup(w.starts, w.n_rounds * sizeof *w.starts);
    t->ends = dup(w.ends, w.n_rounds * sizeof *w.ends);
    t->labels = dup(w.labels, w.n_rounds * sizeof *w.labels);
    t->decisions = dup(s.decisions, w.n_rounds);
    t->ties = dup(s.ties, w.n_rounds);
    t->reversal = w.reversal;
    memcpy(t->start, w.physical, sizeof t->start);
    t->n_draws = w.draws ? w.n_draws : 0;
    t->draws = dup(w.draws, 2 * (size_t)t->n_draws * sizeof *w.draws);
    memcpy(t->meta, w.meta, sizeof t->meta);
    t->outcome = s.outcome;
    t->done = s.done;
    t->finite = s.finite;
    t->scored = s.scored;
    t->hits = s.hits;
    t->misses = s.misses;
    t->longest_rally = s.longest_rally;
    bl_task_state_free(&s);
    bl_task_world_free(&w);
    if (!t->stimuli || !t->starts || !t->ends || !t->labels || !t->decisions || !t->ties || !t->draws) {
        bl_task_trace_destroy(t);
        return bl_fail(err, BL_ERR_NOMEM, "task trace: out of memory");
    }
    *out = t;
    return BL_OK;
}
