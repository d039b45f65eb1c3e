/* Tasks and evaluation for reservoirs: the delayed-cue task, its native
 * scoring and controls, seeds per (block, trial, purpose), and BrainlessLab
 * "profile" plans run into sealed records (docs/reservoir.md,
 * docs/plans-and-records.md).
 *
 * Evaluation = targets x blocks x trials. Every trial gets its seeds from the
 * plan's root seed by Philox (bl_seed_derive); they do not depend on the
 * target, so every target of a plan meets the same worlds (and, for the same
 * node kind and size, the same wiring): paired comparisons by construction. */
#ifndef BRAINLESSLAB_TASK_H
#define BRAINLESSLAB_TASK_H

#include "brainlesslab/export.h"
#include <stdint.h>
#include <stdio.h>

#include "brainlesslab/error.h"
#include "brainlesslab/reservoir.h"
#include "brainlesslab/seed.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the delayed-cue task ---- */

#define BL_DC_INPUTS 3
#define BL_DC_EFFECTORS 2
#define BL_DC_MAX_DELAYS 64
#define BL_DC_MAX_TICKS 1000000 /* cue + longest delay + response */

typedef enum bl_cue_mode {
    BL_CUE_TRANSIENT = 0,  /* the cue channel is 1 for the first cue_ticks ticks */
    BL_CUE_PERSISTENT = 1, /* ... for the whole trial */
    BL_CUE_HIDDEN = 2      /* never shown */
} bl_cue_mode;
BL_API const char *bl_cue_mode_name(bl_cue_mode mode);
BL_API int bl_cue_mode_parse(const char *name, bl_cue_mode *out); /* 0 or -1 */

typedef struct bl_dc_options {
    uint32_t cue_ticks;      /* 8 */
    uint32_t response_ticks; /* 8 */
    uint32_t n_delays;       /* 3 */
    uint32_t delays[BL_DC_MAX_DELAYS]; /* 8, 32, 128: distinct, in plan order */
    bl_cue_mode cue_mode;    /* transient */
} bl_dc_options;

BL_API void bl_dc_defaults(bl_dc_options *o);
BL_API bl_status bl_dc_validate(const bl_dc_options *o, bl_error *err);
/* The longest trial: cue_ticks + max(delays) + response_ticks. */
BL_API uint32_t bl_dc_horizon(const bl_dc_options *o);

typedef struct bl_dc_world {
    uint32_t label;          /* 1 or 2 */
    uint32_t delay;
    uint32_t length;         /* cue + delay + response */
    uint32_t response_start; /* cue + delay */
    uint32_t response_end;   /* = length */
} bl_dc_world;

/* From the world seed: label = 1 + (u0 >= 0.5), delay = delays[floor(u1 n)],
 * u0 = uniform(world, 0, 0, 1, 0), u1 = uniform(world, 0, 0, 2, 0). */
BL_API void bl_dc_world_draw(const bl_dc_options *o, uint64_t world_seed, bl_dc_world *w);
/* The observation at tick t (0-based): three channels, 0 or 1. */
BL_API void bl_dc_stimulus(const bl_dc_options *o, const bl_dc_world *w, uint32_t tick, double out[BL_DC_INPUTS]);

typedef enum bl_trial_status {
    BL_TRIAL_COMPLETED = 0,
    BL_TRIAL_FAILED = 1,    /* a non-finite or out-of-range value */
    BL_TRIAL_INCOMPLETE = 2 /* the horizon ended first (cannot happen with a valid plan) */
} bl_trial_status;
BL_API const char *bl_trial_status_name(bl_trial_status s);

/* Native scoring: evidence[e] += effector[e] over [response_start,
 * response_end); at its end decision = 2 if evidence[1] > evidence[0] else 1
 * (a tie goes to 1 and is counted); outcome = decision == label. */
typedef struct bl_dc_score {
    double evidence[2];
    uint32_t ticks; /* ticks accounted */
    int decision;   /* 0 until decided */
    int tie;
    int done;
    int outcome;    /* recall: 1 correct, 0 wrong */
    int failed;     /* an effector was non-finite or outside [0, 1] */
} bl_dc_score;

BL_API void bl_dc_score_init(bl_dc_score *s);
/* Account the effectors emitted on tick `tick` (after the node's frame for
 * that tick). Returns 1 when the trial is over (done or failed). */
BL_API int bl_dc_score_tick(bl_dc_score *s, const bl_dc_world *w, uint32_t tick,
                            const double effectors[BL_DC_EFFECTORS]);

/* Controllers: the reservoir, and controls that replace it. Which controls a
 * task defines: bl_task_controller_allowed. */
typedef enum bl_controller {
    BL_CTRL_RESERVOIR = 0,
    BL_CTRL_ORACLE = 1,         /* the task's reference policy from the observations (delayed cue: the first cue) */
    BL_CTRL_CONSTANT_LEFT = 2,  /* always effector 1 */
    BL_CTRL_CONSTANT_RIGHT = 3, /* always effector 2 */
    BL_CTRL_REFERENCE_NULL = 4, /* a fair coin per round (per tick for continuing tasks) from the control seed */
    BL_CTRL_MEMORYLESS = 5,     /* answers what it sees now (delayed_xor: the XOR of what it sees now) */
    BL_CTRL_LAST = 6,           /* the last cue or pulse it saw */
    BL_CTRL_FIRST = 7,          /* the first cue or pulse it saw */
    BL_CTRL_CONTEXT_BLIND = 8,  /* context_integration: integrates stream 1 whatever the context */
    BL_CTRL_IRRELEVANT = 9,     /* context_integration: integrates the stream the context rules out */
    BL_CTRL_BAG = 10,           /* temporal_order: counts cues, ignores their order */
    BL_CTRL_FIXED_MAPPING = 11  /* reversal_adaptation: never reverses */
} bl_controller;
#define BL_CTRL_COUNT 12
BL_API const char *bl_controller_name(bl_controller c);
BL_API int bl_controller_parse(const char *name, bl_controller *out); /* 0 or -1 */

typedef struct bl_dc_control {
    bl_controller kind;
    int first; /* oracle: first cue seen (0 none) */
    int coin;  /* reference_null: 1 or 2 */
} bl_dc_control;

/* reference_null: coin = 2 if uniform(control seed, 0, 0, 1, 0) >= 0.5 else 1. */
BL_API void bl_dc_control_init(bl_dc_control *c, bl_controller kind, uint64_t control_seed);
/* One tick: observe, emit one-hot effectors of the choice. */
BL_API void bl_dc_control_tick(bl_dc_control *c, const double obs[BL_DC_INPUTS], double eff[BL_DC_EFFECTORS]);

/* ---- the task table (every task; docs/reservoir.md, "Tasks") ---- */

typedef enum bl_task_kind {
    BL_TASK_TRACKING = 0,
    BL_TASK_PONG = 1,
    BL_TASK_CARTPOLE_PLANK_EASY = 2,
    BL_TASK_DELAYED_CUE = 3,
    BL_TASK_RECALL_INTERFERENCE = 4,
    BL_TASK_DELAYED_XOR = 5,
    BL_TASK_EVIDENCE_ACCUMULATION = 6,
    BL_TASK_CONTEXT_INTEGRATION = 7,
    BL_TASK_TEMPORAL_ORDER = 8,
    BL_TASK_REVERSAL_ADAPTATION = 9
} bl_task_kind;
#define BL_TASK_COUNT 10
#define BL_TASK_MAX_OFFSETS 32

BL_API const char *bl_task_name(bl_task_kind kind);
BL_API int bl_task_parse(const char *name, bl_task_kind *out); /* 0 or -1 */

typedef enum bl_distractor_mode { BL_DISTRACT_RANDOM, BL_DISTRACT_MATCHED, BL_DISTRACT_OPPOSITE, BL_DISTRACT_ABSENT } bl_distractor_mode;
typedef enum bl_congruency { BL_CONG_MIXED, BL_CONG_CONGRUENT, BL_CONG_CONFLICTING } bl_congruency;

/* Every task's options (each task reads its own; defaults by bl_task_defaults). */
typedef struct bl_task_options {
    bl_task_kind kind;
    uint32_t cue_ticks, response_ticks;
    uint32_t n_delays, delays[BL_DC_MAX_DELAYS]; /* delayed_cue */
    bl_cue_mode cue_mode;                        /* delayed_cue, recall_interference, delayed_xor */
    uint32_t delay, distractors, distractor_ticks; /* recall_interference */
    bl_distractor_mode distractor_mode;
    uint32_t gap;                                /* delayed_xor, temporal_order */
    uint32_t pulse_count, pulse_ticks;           /* evidence_accumulation, context_integration */
    double evidence_fraction;
    int input_visible;                           /* input_mode visible (1) or hidden (0) */
    bl_cue_mode context_mode;
    bl_congruency congruency;
    uint32_t terminal_ticks;                     /* temporal_order */
    uint32_t rounds, feedback_ticks, reversal_lo, reversal_hi; /* reversal_adaptation */
    int feedback_visible;
    double stim_speed_rad, movement_amp, eye_offset_deg, sensory_gain; /* tracking (gain: pong too) */
    uint32_t n_offsets;
    double sensor_offsets_deg[BL_TASK_MAX_OFFSETS];
    int randomize_start;
    int has_theta0, has_phi0, has_direction0;
    double theta0, phi0, direction0;
    double initial_ranges[4][2];                 /* cartpole_plank_easy: x, x_dot, theta, theta_dot */
} bl_task_options;

/* An option's value as a plan gives it. */
typedef enum bl_task_value_type { BL_TV_NUMBER, BL_TV_BOOL, BL_TV_STRING, BL_TV_LIST } bl_task_value_type;
typedef struct bl_task_value {
    bl_task_value_type type;
    double number;
    int integer;          /* the number was written as an integer */
    int boolean;
    const char *string;
    const double *list;   /* BL_TV_LIST: n values, rows of `width` (pairs: width 2) */
    size_t n, width;
} bl_task_value;

BL_API void bl_task_defaults(bl_task_kind kind, bl_task_options *o);
/* Set one option by name (an unknown name or a bad value: BL_ERR_INVALID). */
BL_API bl_status bl_task_set_option(bl_task_options *o, const char *name, const bl_task_value *v, bl_error *err);
BL_API bl_status bl_task_validate(const bl_task_options *o, bl_error *err);
/* The option names of a task, NULL-terminated, in canonical order. */
BL_API const char *const *bl_task_option_names(bl_task_kind kind);

typedef struct bl_task_definition {
    uint32_t n_inputs, n_effectors;
    uint32_t neural_frames;   /* node frames per world tick (cartpole_plank_easy: 24) */
    uint32_t default_horizon; /* episode tasks: the longest episode */
    uint32_t minimum_scored;  /* continuing tasks: scored ticks the horizon must leave after warmup */
    const char *outcome_key;  /* recall_accuracy, probe_accuracy, adaptation_accuracy, track_score, hit_rate, fitness */
    double upper_bound;
    double chance;            /* NaN when the task has none */
    int episode;              /* 1: ends by itself, warmup 0; 0: continuing, runs to the horizon */
    int probe;                /* the seven binary episode tasks: the horizon holds the whole episode */
} bl_task_definition;
BL_API void bl_task_definition_of(const bl_task_options *o, bl_task_definition *d);
/* 1 when the control is defined for the task (the reservoir always is). */
BL_API int bl_task_controller_allowed(bl_task_kind kind, bl_controller c);

/* ---- one trial, traced (tests, the NumPy oracle, `brainlesslab reservoir task`) ---- */

typedef struct bl_task_trace {
    uint32_t ticks, frames, width;  /* ticks run, node frames per tick, inputs */
    double *obs;                    /* [ticks * frames][width] what the controller saw */
    double *eff;                    /* [ticks * frames][2] effectors */
    double *physical;               /* [ticks][8] after each advance */
    uint32_t length;                /* episode tasks: the world's stimulus matrix */
    double *stimuli;                /* [length][width] */
    uint32_t n_rounds;
    uint32_t *starts, *ends, *labels;
    uint8_t *decisions, *ties;      /* [n_rounds] */
    uint32_t reversal;
    int meta[4];
    double outcome;
    int done, finite;
    uint32_t scored, hits, misses, longest_rally;
    double start[8];                /* the world's physical start state */
    uint32_t n_draws;               /* pong: the serve draws [n_draws][2] */
    double *draws;
} bl_task_trace;

/* Run one trial of a task without a node: effectors from the control
 * `controller` (never the reservoir), or, when tape is not NULL, from tape
 * ([tape_rows][2], one row per frame; the trial stops when it runs out). */
BL_API bl_status bl_task_trace_run(const bl_task_options *o, bl_controller controller, uint64_t world_seed,
                            uint64_t control_seed, uint32_t horizon, uint32_t warmup, const double *tape,
                            size_t tape_rows, bl_task_trace **out, bl_error *err);
/* The same with a world seed of either scheme (bl_task_trace_run passes a
 * bl-philox-v1 seed): a philox-host-v1 digest draws the Python project's world. */
BL_API bl_status bl_task_trace_run_rng(const bl_task_options *o, bl_controller controller,
                                       const bl_rng_seed *world_seed, uint64_t control_seed, uint32_t horizon,
                                       uint32_t warmup, const double *tape, size_t tape_rows, bl_task_trace **out,
                                       bl_error *err);
BL_API void bl_task_trace_destroy(bl_task_trace *t);

/* ---- profile plans ---- */

typedef struct bl_res_plan bl_res_plan;

/* Load, validate and resolve a plan with operation "profile" (the same checks
 * and messages as bl_plan_load, which calls the same parser once wired). */
BL_API bl_status bl_res_plan_load(const char *path, bl_res_plan **out, bl_error *err);
BL_API void bl_res_plan_destroy(bl_res_plan *plan);
BL_API const char *bl_res_plan_id(const bl_res_plan *plan);
BL_API const char *bl_res_plan_path(const bl_res_plan *plan);
BL_API const char *bl_res_plan_json(const bl_res_plan *plan); /* canonical */
BL_API const char *bl_res_plan_hash(const bl_res_plan *plan);
/* Indented JSON (malloc'd; NULL when out of memory). */
BL_API char *bl_res_plan_render(const bl_res_plan *plan, int pretty);
/* Shorter runs of a written plan (blocks, trials: 0 keeps the plan's) and
 * the seed scheme that replaces the plan's (NULL keeps it; "bl-philox-v1"
 * or "philox-host-v1"): the resolved plan, its hash and the record say what
 * was written and what ran. */
BL_API bl_status bl_res_plan_override(bl_res_plan *plan, uint32_t blocks, uint32_t trials, const char *rng,
                                      bl_error *err);
/* 1: every scheme a plan can name runs (philox-host-v1 since issue 14);
 * kept for callers that asked. */
BL_API int bl_res_plan_runnable(const bl_res_plan *plan);
/* The seed scheme that runs: the override's, else the plan's. */
BL_API bl_rng_scheme bl_res_plan_scheme(const bl_res_plan *plan);

/* ---- evaluation ---- */

/* A trial's outcome: episode tasks decide (decision, tie of the first round;
 * reversal_adaptation: the 16 rounds from the reversal); continuing tasks
 * score every tick after warmup. */
typedef struct bl_trial_score {
    double outcome;       /* the task's outcome_key value */
    double evidence[2];   /* episode: first round's evidence */
    int decision, tie;    /* episode: first round */
    uint32_t ties;        /* ties over every round */
    uint32_t scored, hits, misses, longest_rally;
    int done, failed;
    uint32_t ticks;
} bl_trial_score;

typedef struct bl_res_trial {
    uint32_t target, block, trial;
    bl_dc_world world;    /* first round: label, delay (delayed_cue), length, response window */
    bl_trial_score score;
    bl_trial_status status;
    uint32_t ticks;
    uint64_t seed_world, seed_construction, seed_drive, seed_control, seed_intervention; /* bl-philox-v1 */
    bl_trial_rng rng; /* the seeds under the scheme that ran (bl-philox-v1: the same u64s) */
} bl_res_trial;

typedef struct bl_res_summary {
    double accuracy;     /* the outcome key: mean of the block means; NaN when a trial failed */
    double low, high;    /* 95% bootstrap interval over block means; NaN with < 2 blocks */
    uint32_t completed, failed, ties;
    uint32_t blocks;     /* blocks with every trial completed */
} bl_res_summary;

typedef struct bl_res_evaluation bl_res_evaluation;

/* Run every trial in memory. threads < 0 / batch <= 0: the plan's. Results do
 * not depend on threads or batch. */
BL_API bl_status bl_res_evaluate(const bl_res_plan *plan, int threads, int batch, bl_res_evaluation **out,
                                 bl_error *err);
BL_API void bl_res_evaluation_destroy(bl_res_evaluation *ev);
BL_API size_t bl_res_evaluation_n_trials(const bl_res_evaluation *ev);
BL_API const bl_res_trial *bl_res_evaluation_trial(const bl_res_evaluation *ev, size_t i);
BL_API const bl_res_summary *bl_res_evaluation_summary(const bl_res_evaluation *ev, size_t target);
/* Block means of a target (blocks values; NaN for a block with a failed trial). */
BL_API const double *bl_res_evaluation_block_means(const bl_res_evaluation *ev, size_t target);

/* ---- runs into records ---- */

typedef struct bl_res_run bl_res_run;
struct bl_experiment_options; /* experiment.h: the options of every run */

/* Reserve a new record under opt->root, evaluate, write trials.csv,
 * outcomes.npy, summary.json, seal. Of the options it reads root, threads
 * (< 0: the plan's), batch (<= 0: the plan's), calibration, sign_key,
 * guard_signals and context (progress: once per batch of trials, with
 * simulated_s = 0). A failure after the reservation leaves a FAILED record.
 * bl_run_plan (experiment.h) runs any plan, this one included. */
BL_API bl_status bl_res_run_plan(const bl_res_plan *plan, const struct bl_experiment_options *opt,
                                 bl_res_run **out, bl_error *err);
BL_API void bl_res_run_destroy(bl_res_run *run);
BL_API const char *bl_res_run_record_dir(const bl_res_run *run);
BL_API void bl_res_run_print(const bl_res_run *run, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
