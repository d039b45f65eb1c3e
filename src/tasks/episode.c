/* What the episode tasks share: the schedule of their worlds (cues shown,
 * held or hidden; pulse streams; the response window and its indicator), the
 * observation, the decision at the end of each response window and the
 * outcome, and the pulse streams of the two evidence tasks.
 *
 * Decision per round: evidence[e] += effector[e] over [start, end); at the
 * window's last tick decision = 2 if evidence[1] > evidence[0] else 1 (a tie
 * goes to 1 and is counted); evidence restarts from 0 for the next round.
 * Outcome: decision == label of the first round; reversal_adaptation: the
 * share of correct decisions over the 16 rounds from the reversal round. */
#include <math.h>
#include <string.h>

#include "tasks/task_ops.h"

void bl_task_episode_go(bl_task_world *w, uint32_t channel)
{
    for (uint32_t k = 0; k < w->n_rounds; k++)
        bl_task_mark(w, w->starts[k], w->ends[k], channel, 1.0);
}

void bl_task_cue(bl_task_world *w, bl_cue_mode mode, uint32_t start, uint32_t ticks, uint32_t channel)
{
    if (mode != BL_CUE_HIDDEN)
        bl_task_mark(w, start, mode == BL_CUE_PERSISTENT ? w->length : start + ticks, channel, 1.0);
}

void bl_task_mark_pulses(bl_task_world *w, uint32_t start, uint32_t ticks, const uint32_t *pulses, uint32_t n,
                         uint32_t base)
{
    for (uint32_t i = 0; i < n; i++)
        bl_task_mark(w, start + i * ticks, start + (i + 1) * ticks, base + pulses[i] - 1, 1.0);
}

void bl_task_episode_window(bl_task_world *w, uint32_t start, uint32_t cue_end, uint32_t label)
{
    w->starts[0] = start;
    w->ends[0] = w->length;
    w->cue_ends[0] = cue_end;
    w->labels[0] = label;
}

void bl_task_episode_encode(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs)
{
    (void)frame;
    memset(obs, 0, w->width * sizeof *obs);
    const uint32_t tick = s->ticks;
    if (tick >= w->length)
        return;
    memcpy(obs, bl_task_stim(w, tick), w->width * sizeof *obs);
    /* reversal_adaptation: during feedback ticks, the previous round's choice
     * (channels 4, 5) and whether it was right (6) or wrong (7). */
    if (w->kind == BL_TASK_REVERSAL_ADAPTATION && w->feedback && s->round >= 1 && obs[3] != 0.0) {
        const uint32_t prev = s->round - 1;
        const int choice = s->decisions[prev];
        const int correct = choice == (int)w->labels[prev];
        obs[4] = choice == 1;
        obs[5] = choice == 2;
        obs[6] = correct;
        obs[7] = !correct;
    }
}

void bl_task_episode_advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup)
{
    (void)warmup; /* episode tasks require warmup = 0 */
    const uint32_t tick = s->ticks;
    const double *eff = s->last;
    if (s->round < w->n_rounds) {
        const uint32_t r = s->round;
        if (tick >= w->starts[r] && tick < w->ends[r]) {
            s->evidence[0] = s->evidence[0] + eff[0];
            s->evidence[1] = s->evidence[1] + eff[1];
        }
        if (tick + 1 == w->ends[r]) {
            s->decisions[r] = s->evidence[1] > s->evidence[0] ? 2 : 1;
            s->ties[r] = s->evidence[0] == s->evidence[1];
            if (r == 0) {
                s->first_evidence[0] = s->evidence[0];
                s->first_evidence[1] = s->evidence[1];
            }
            s->evidence[0] = s->evidence[1] = 0.0;
            s->round = r + 1;
        }
    }
    if (tick + 1 >= w->length) {
        s->done = 1;
        if (w->kind == BL_TASK_REVERSAL_ADAPTATION) {
            uint32_t correct = 0;
            for (uint32_t k = 0; k < 16; k++) {
                const uint32_t r = w->reversal - 1 + k;
                correct += r < w->n_rounds && s->decisions[r] == w->labels[r];
            }
            s->outcome = (double)correct / 16.0;
        } else {
            s->outcome = s->decisions[0] == w->labels[0] ? 1.0 : 0.0;
        }
        s->scored = w->length;
    }
    s->ticks = tick + 1;
}

void bl_task_pulses(bl_task_rng *r, uint32_t n, double fraction, int label, uint32_t *out)
{
    /* Left pulses n (1 +- f) / 2 (integral by validation); the final pulse is
     * drawn first so that either side can end the stream. */
    const uint32_t left_count = (uint32_t)((double)n * (1.0 + (label == 1 ? fraction : -fraction)) / 2.0);
    const uint32_t final = (uint32_t)bl_task_rng_int(r, 1, 2);
    const uint32_t left = left_count - (final == 1);
    for (uint32_t k = 0; k + 1 < n; k++)
        out[k] = k < left ? 1 : 2;
    bl_task_rng_shuffle(r, out, n - 1);
    out[n - 1] = final;
}

bl_status bl_task_check_pulses(const bl_task_options *o, const char *task, bl_error *err)
{
    const double f = o->evidence_fraction;
    if (!(f > 0.0 && f < 1.0))
        return bl_fail(err, BL_ERR_INVALID, "%s: evidence_fraction must lie in (0, 1)", task);
    const double left = (double)o->pulse_count * (1.0 + f) / 2.0;
    if (left != floor(left) || !((double)o->pulse_count - left >= 1.0) ||
        !((double)o->pulse_count - left <= (double)o->pulse_count - 1.0))
        return bl_fail(err, BL_ERR_INVALID, "%s: pulse_count (1 + evidence_fraction) / 2 must be an integer that "
                       "leaves at least one pulse on each side", task);
    if ((uint64_t)o->pulse_count * o->pulse_ticks + o->cue_ticks + o->response_ticks > BL_DC_MAX_TICKS)
        return bl_fail(err, BL_ERR_INVALID, "%s: an episode of more than %d ticks", task, BL_DC_MAX_TICKS);
    return BL_OK;
}
