/* Controls: policies that replace the node and see only what a node sees
 * (the observation vector; never labels, schedules or the hidden mapping).
 * Their definitions follow the Python project's (docs/reservoir.md,
 * "Controls"); the observation is read once per world tick, even across
 * cartpole's 24 frames, and each emits one-hot effectors of its choice.
 *
 * reference_null draws from the control seed: the coin of a round is
 * uniform(control, t, 1) >= 0.5 (side 2) at the round's first tick t; for
 * tracking and pong it steers by s = 2 u - 1 every tick, e = (max(0, s),
 * max(0, -s)); for cartpole a coin per tick. */
#include <math.h>
#include <string.h>

#include "tasks/task_ops.h"

enum { M_FIRST, M_LAST, M_SECOND, M_CONTEXT, M_MAPPING, M_FEEDBACK, M_CUE, M_COIN, M_COIN_ROUND, M_SEEN };

void bl_task_control_init(bl_task_control *c, bl_controller policy, const bl_task_options *o, uint64_t control_seed)
{
    memset(c, 0, sizeof *c);
    c->policy = policy;
    c->kind = o->kind;
    c->seed = control_seed;
    c->movement_amp = o->kind == BL_TASK_TRACKING ? o->movement_amp : 1.0;
    c->memory[M_LAST] = c->memory[M_SECOND] = c->memory[M_CONTEXT] = c->memory[M_CUE] = c->memory[M_COIN] = 1;
    c->memory[M_COIN_ROUND] = c->memory[M_SEEN] = -1;
}

static int side(double left, double right) { return right > left ? 2 : 1; }

static void one_hot(int choice, double eff[2])
{
    eff[0] = choice == 1;
    eff[1] = choice == 2;
}

static void steer(double turn, double eff[2])
{
    eff[0] = fmax(0.0, turn);
    eff[1] = fmax(0.0, -turn);
}

/* The oracles of the continuing tasks. */
static void sensory_reference(const bl_task_control *c, const double *obs, uint32_t n, const bl_task_world *w,
                              double eff[2])
{
    double best = 0.0, angle = 0.0;
    for (uint32_t r = 0; r < n; r++)
        if (obs[r] > best) {
            best = obs[r];
            angle = w->angles[r];
        }
    double turn = 0.0;
    if (best > 0.0)
        turn = c->kind == BL_TASK_TRACKING ? angle / c->movement_amp : sin(angle * (M_PI / 180.0));
    steer(fmax(-1.0, fmin(1.0, turn)), eff);
}

static void physical_reference(const bl_task_state *s, double eff[2])
{
    const double *p = s->physical;
    const double command = 80.0 * bl_task_wrap(p[2], M_PI) + 18.0 * p[3] + p[0] + 2.0 * p[1];
    steer(command < 0.0 ? 1.0 : -1.0, eff);
}

/* Watch one tick's observation: update what the policies remember. */
static void observe(bl_task_control *c, const double *in)
{
    int *m = c->memory;
    switch (c->kind) {
    case BL_TASK_DELAYED_XOR:
        if (in[0] + in[1] > 0.0)
            m[M_FIRST] = side(in[0], in[1]);
        if (in[2] + in[3] > 0.0)
            m[M_SECOND] = side(in[2], in[3]);
        m[M_LAST] = m[M_SECOND];
        break;
    case BL_TASK_CONTEXT_INTEGRATION: {
        if (in[0] + in[1] > 0.0)
            m[M_CONTEXT] = side(in[0], in[1]);
        c->counts[0] = c->counts[0] + (in[2] - in[3]);
        c->counts[1] = c->counts[1] + (in[4] - in[5]);
        int stream = c->policy == BL_CTRL_CONTEXT_BLIND ? 1
                     : c->policy == BL_CTRL_IRRELEVANT  ? 3 - m[M_CONTEXT]
                                                         : m[M_CONTEXT];
        const int off = 2 * stream; /* stream 1: channels 2-3; stream 2: 4-5 */
        if (in[off] + in[off + 1] > 0.0) {
            m[M_LAST] = side(in[off], in[off + 1]);
            if (!m[M_FIRST])
                m[M_FIRST] = m[M_LAST];
        }
        break;
    }
    case BL_TASK_REVERSAL_ADAPTATION:
        if (in[3] > 0.0) { /* feedback ticks */
            if (!m[M_FEEDBACK] && in[4] + in[5] > 0.0 && c->policy == BL_CTRL_ORACLE) {
                const int chosen = side(in[4], in[5]);
                const int right = in[6] <= in[7] ? 3 - chosen : chosen;
                m[M_MAPPING] = right != m[M_CUE];
            }
            m[M_FEEDBACK] = 1;
        } else {
            m[M_FEEDBACK] = 0;
            if (in[0] + in[1] > 0.0)
                m[M_CUE] = side(in[0], in[1]);
        }
        break;
    default:
        if (in[0] + in[1] > 0.0) {
            m[M_LAST] = side(in[0], in[1]);
            if (!m[M_FIRST])
                m[M_FIRST] = m[M_LAST];
        }
        if (c->kind == BL_TASK_EVIDENCE_ACCUMULATION)
            c->counts[0] = c->counts[0] + (in[0] - in[1]);
        else if (c->kind == BL_TASK_TEMPORAL_ORDER) {
            c->counts[0] = c->counts[0] + in[0];
            c->counts[1] = c->counts[1] + in[1];
            if (in[0] + in[1] == 0.0 && in[2] > 0.0)
                m[M_LAST] = 1; /* the terminal signal clears "last" */
        }
        break;
    }
}

void bl_task_control_step(bl_task_control *c, const double *in, uint32_t n, uint32_t tick, uint32_t round,
                          const bl_task_world *w, const bl_task_state *s, double eff[2])
{
    int *m = c->memory;
    const int continuing = c->kind <= BL_TASK_CARTPOLE_PLANK_EASY;
    if (c->policy == BL_CTRL_REFERENCE_NULL) {
        double u;
        if (c->coins) {
            const uint32_t k = continuing ? tick : round;
            u = c->coins[k < c->n_coins ? k : c->n_coins - 1];
        } else {
            u = bl_stream_uniform(c->seed, tick, 1);
        }
        if (c->kind == BL_TASK_TRACKING || c->kind == BL_TASK_PONG) {
            steer(2.0 * u - 1.0, eff);
            return;
        }
        const int when = c->kind == BL_TASK_CARTPOLE_PLANK_EASY ? (int)tick
                         : c->kind == BL_TASK_REVERSAL_ADAPTATION ? (int)round
                                                                   : 0;
        if (m[M_COIN_ROUND] != when) {
            m[M_COIN] = u >= 0.5 ? 2 : 1;
            m[M_COIN_ROUND] = when;
        }
        one_hot(m[M_COIN], eff);
        return;
    }
    if (c->policy == BL_CTRL_ORACLE && continuing) {
        if (c->kind == BL_TASK_CARTPOLE_PLANK_EASY)
            physical_reference(s, eff);
        else
            sensory_reference(c, in, n, w, eff);
        return;
    }
    if (m[M_SEEN] != (int)tick) {
        m[M_SEEN] = (int)tick;
        observe(c, in);
    }
    int choice = m[M_FIRST] > 1 ? m[M_FIRST] : 1;
    switch (c->kind) {
    case BL_TASK_DELAYED_XOR: choice = m[M_FIRST] != m[M_SECOND] ? 2 : 1; break;
    case BL_TASK_EVIDENCE_ACCUMULATION: choice = c->counts[0] < 0.0 ? 2 : 1; break;
    case BL_TASK_CONTEXT_INTEGRATION: {
        const int stream = c->policy == BL_CTRL_CONTEXT_BLIND ? 1
                           : c->policy == BL_CTRL_IRRELEVANT  ? 3 - m[M_CONTEXT]
                                                               : m[M_CONTEXT];
        choice = c->counts[stream - 1] < 0.0 ? 2 : 1;
        break;
    }
    case BL_TASK_TEMPORAL_ORDER:
        if (c->policy == BL_CTRL_BAG)
            choice = c->counts[1] > c->counts[0] ? 2 : 1;
        break;
    case BL_TASK_REVERSAL_ADAPTATION: choice = m[M_MAPPING] ? 3 - m[M_CUE] : m[M_CUE]; break;
    default: break;
    }
    switch (c->policy) {
    case BL_CTRL_CONSTANT_LEFT: choice = 1; break;
    case BL_CTRL_CONSTANT_RIGHT: choice = 2; break;
    case BL_CTRL_MEMORYLESS:
        if (c->kind == BL_TASK_DELAYED_XOR)
            choice = side(in[0], in[1]) != side(in[2], in[3]) ? 2 : 1;
        else
            choice = side(in[0], in[1]);
        break;
    case BL_CTRL_LAST: choice = m[M_LAST]; break;
    case BL_CTRL_FIRST: choice = m[M_FIRST] > 1 ? m[M_FIRST] : 1; break;
    default: break;
    }
    one_hot(choice, eff);
}
