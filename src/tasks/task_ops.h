/* The task table: one row (bl_task_ops) per task, one file per task
 * (src/tasks/<task>.c) and the table in src/tasks/task_table.c.
 *
 * A task is a world the runner drives one tick at a time:
 *   world  = what the world generator draws from the trial's world seed
 *            (episode tasks: a stimulus matrix and response windows; continuing
 *            tasks: a physical start state), built before the trial starts;
 *   state  = what changes during the trial (physics, evidence, decisions);
 *   per tick: for frame 1..neural_frames: encode -> node or control ->
 *             accumulate; then advance (physics and scoring).
 * Controls (bl_task_control) see only the observation vector, never the
 * world's labels or schedules, like a reservoir.
 *
 * The semantics are those of the Python project's task definitions
 * (github.com/btgaskin/brainless-lab, tasks/_prepare.py and _runtime.py),
 * restated in docs/reservoir.md. A world seed names its scheme: under
 * bl-philox-v1 the draws are this build's own counter streams; under
 * philox-host-v1 they are the Python project's own, NumPy's Generator over
 * Philox (src/core/np_random.h) called with the same methods in the same
 * order as its prepare(), so a Python plan's worlds come out identical.
 * Private to the library: the runner in src/experiment/ and the plan reader
 * use it. */
#ifndef BL_TASKS_TASK_OPS_H
#define BL_TASKS_TASK_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/seed.h"
#include "brainlesslab/task.h"
#include "core/np_random.h"

#define BL_TASK_MAX_INPUTS 64
#define BL_TASK_MAX_ROUNDS 100000
#define BL_TASK_WORLD_DOMAIN 1 /* the world seed's sequential stream: draw n = counter (n, 0, 1, 0) */

typedef struct bl_task_world {
    bl_task_kind kind;
    uint32_t width;     /* inputs */
    uint32_t length;    /* ticks of the episode (continuing tasks: 0, the horizon ends them) */
    double *stimuli;    /* [length][width] (episode tasks) */
    uint32_t n_rounds;
    uint32_t *starts, *ends, *cue_ends, *labels; /* [n_rounds] response windows and right answers */
    uint32_t reversal;  /* reversal_adaptation: the first reversed round (1-based) */
    int feedback;       /* reversal_adaptation: feedback channels visible */
    int initial_mapping;
    int meta[4];        /* per task: delayed_cue {cue, delay}; delayed_xor {a, b}; context {context, congruent} */
    double physical[8];
    double *draws;      /* pong: [n_draws][2] serve draws */
    uint32_t n_draws;
    double params[4];   /* tracking {gain, speed, movement_amp}; pong {gain}; cartpole limits */
    double angles[BL_TASK_MAX_INPUTS]; /* receptor angles (tracking, pong) */
} bl_task_world;

typedef struct bl_task_state {
    double physical[8];
    double votes[2], last[2], evidence[2];
    double first_evidence[2]; /* the first round's evidence when it was decided */
    uint32_t ticks, round;
    int done, finite;
    double outcome, total;
    uint32_t scored, hits, misses, rally, longest_rally;
    uint8_t *decisions, *ties; /* [n_rounds] */
} bl_task_state;

typedef struct bl_task_ops {
    const char *name;
    bl_task_kind kind;
    const char *const *option_names; /* NULL-terminated */
    void (*defaults)(bl_task_options *o);
    bl_status (*validate)(const bl_task_options *o, bl_error *err);
    void (*definition)(const bl_task_options *o, bl_task_definition *d);
    /* Draw the world (episode worlds are complete; horizon bounds pong's serves). */
    bl_status (*world)(const bl_task_options *o, const bl_rng_seed *world_seed, uint32_t horizon, bl_task_world *w,
                       bl_error *err);
    /* Observation for `frame` (1-based within the tick's neural cycle). */
    void (*encode)(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs);
    /* Physics and scoring after the tick's frames (effectors already accumulated). */
    void (*advance)(const bl_task_world *w, bl_task_state *s, uint32_t warmup);
    uint32_t controls; /* bit (1 << bl_controller) for each control defined for this task */
} bl_task_ops;

/* Control sets: every task has the base five; the memory tasks add memoryless and last. */
#define BL_TASK_CONTROLS_BASE                                                                              \
    ((1u << BL_CTRL_RESERVOIR) | (1u << BL_CTRL_ORACLE) | (1u << BL_CTRL_CONSTANT_LEFT) |                \
     (1u << BL_CTRL_CONSTANT_RIGHT) | (1u << BL_CTRL_REFERENCE_NULL))
#define BL_TASK_CONTROLS_MEMORY ((1u << BL_CTRL_MEMORYLESS) | (1u << BL_CTRL_LAST))

const bl_task_ops *bl_task_ops_of(bl_task_kind kind);
/* The resolved option as JSON text (numbers shortest round-trip is the
 * plan's job: this gives %.17g); 0, or -1 when unknown or too long. */
int bl_task_option_json(const bl_task_options *o, const char *name, char *buf, size_t cap);

/* World helpers shared by the task files. */
bl_status bl_task_world_alloc(bl_task_world *w, uint32_t length, uint32_t width, uint32_t rounds, bl_error *err);
void bl_task_world_free(bl_task_world *w);
static inline double *bl_task_stim(const bl_task_world *w, uint32_t tick) { return w->stimuli + (size_t)tick * w->width; }
/* Mark [start, end) on channel c. */
void bl_task_mark(bl_task_world *w, uint32_t start, uint32_t end, uint32_t c, double v);
/* The world stream of either scheme. bl-philox-v1: draw n is the counter
 * stream's (n, 0, 1, 0). philox-host-v1: each call is one NumPy Generator call
 * (named below), the calls the Python project's prepare() makes. */
typedef struct bl_task_rng {
    uint64_t seed; /* bl-philox-v1 */
    uint32_t n;
    int host;      /* philox-host-v1: draws come from np */
    bl_np_rng np;
} bl_task_rng;
void bl_task_rng_init(bl_task_rng *r, const bl_rng_seed *seed);
/* A bl-philox-v1 seed (what the callers that hold a u64 pass). */
static inline bl_rng_seed bl_task_seed_v1(uint64_t seed)
{
    bl_rng_seed s = {BL_RNG_BL_PHILOX_V1, seed, {0}};
    return s;
}
double bl_task_rng_uniform(bl_task_rng *r);          /* host: random() */
int bl_task_rng_int(bl_task_rng *r, int lo, int hi); /* inclusive; host: integers(lo, hi + 1), no draw if lo == hi */
void bl_task_rng_shuffle(bl_task_rng *r, uint32_t *a, uint32_t n); /* host: shuffle(a) */
uint32_t bl_task_rng_choice(bl_task_rng *r, uint32_t n); /* host: the index choice(seq of n) picks */

/* The response indicator: channel set to 1 over every response window. */
void bl_task_episode_go(bl_task_world *w, uint32_t channel);
/* A cue on channel from tick start: for `ticks` ticks (transient), to the end
 * of the episode (persistent), or not at all (hidden). */
void bl_task_cue(bl_task_world *w, bl_cue_mode mode, uint32_t start, uint32_t ticks, uint32_t channel);
/* A pulse stream from tick start, `ticks` ticks a pulse: pulse i (1 or 2) on
 * channel base + pulses[i] - 1. */
void bl_task_mark_pulses(bl_task_world *w, uint32_t start, uint32_t ticks, const uint32_t *pulses, uint32_t n,
                         uint32_t base);
/* The one response window of a single-round episode: from start to the end of
 * the episode, the cue over by cue_end, label the right answer. */
void bl_task_episode_window(bl_task_world *w, uint32_t start, uint32_t cue_end, uint32_t label);
/* Episode tasks share encode and advance (the reversal task adds feedback). */
void bl_task_episode_encode(const bl_task_world *w, const bl_task_state *s, uint32_t frame, double *obs);
void bl_task_episode_advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup);
/* The pulse stream of evidence_accumulation and context_integration:
 * n pulses, the last drawn first (1 or 2), the rest shuffled so that label's
 * side has n (1 + f) / 2 pulses; out[n]. */
void bl_task_pulses(bl_task_rng *r, uint32_t n, double fraction, int label, uint32_t *out);
/* Shared validation of cue/pulse options. */
bl_status bl_task_check_pulses(const bl_task_options *o, const char *task, bl_error *err);

/* ---- one trial's state ---- */

bl_status bl_task_state_init(const bl_task_world *w, bl_task_state *s, bl_error *err);
void bl_task_state_free(bl_task_state *s);
/* The effectors of frame `frame` (1-based): an effector outside [0, 1] or
 * non-finite fails the trial; cartpole sums them (votes), others keep the last. */
void bl_task_accumulate(const bl_task_world *w, bl_task_state *s, const double eff[2], uint32_t frame);
/* After the tick's frames: physics and scoring (when the trial still runs). */
void bl_task_advance(const bl_task_world *w, bl_task_state *s, uint32_t warmup);
double bl_task_wrap(double v, double half);

/* ---- controls: they see the observation vector only ---- */

typedef struct bl_task_control {
    bl_controller policy;
    bl_task_kind kind;
    int memory[10];   /* first, last, second, context, mapping, feedback seen, cue, coin, coin round, tick seen */
    double counts[2];
    uint64_t seed;    /* reference_null: the control seed */
    /* reference_null under philox-host-v1 (set by the runner, owned by it):
     * the k-th uniform of the control seed's generator is the coin of round k
     * (episode tasks) or the draw of tick k (continuing tasks); NULL: seed. */
    const double *coins;
    uint32_t n_coins;
    double movement_amp; /* tracking's oracle */
} bl_task_control;

void bl_task_control_init(bl_task_control *c, bl_controller policy, const bl_task_options *o, uint64_t control_seed);
/* One frame: the observation `obs` (n values) on world tick `tick`, the
 * current round, the world's receptor angles and (cartpole's oracle) the
 * physical state the receptors encode; writes two effectors. */
void bl_task_control_step(bl_task_control *c, const double *obs, uint32_t n, uint32_t tick, uint32_t round,
                          const bl_task_world *w, const bl_task_state *s, double eff[2]);

#endif
