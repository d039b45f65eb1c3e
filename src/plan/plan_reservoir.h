/* Reservoir plans (operations profile, sweep, ablate, benchmark, calibrate),
 * private to the library: the resolved plan that src/experiment/res_evaluate.c
 * runs, and the parser its rows of the operations table call (the header keys
 * are read by plan.c; plan_op.h). */
#ifndef BL_PLAN_PLAN_RESERVOIR_H
#define BL_PLAN_PLAN_RESERVOIR_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/reservoir.h"
#include "brainlesslab/task.h"
#include "plan/plan_impl.h"

#define BL_RP_MAX_BLOCKS 100000
#define BL_RP_MAX_TRIALS 10000000 /* targets x blocks x trials */
#define BL_RP_MAX_TARGETS 1000
#define BL_RP_MAX_INTERVENTIONS 64

typedef bl_seed_scope bl_rp_scope;

typedef enum bl_rp_verb {
    BL_VERB_FREEZE_WEIGHTS = 0,
    BL_VERB_FREEZE_PLASTICITY = 1,
    BL_VERB_BLIND_INPUT = 2,  /* from this tick on the node sees zeros */
    BL_VERB_SHUFFLE_INPUT = 3 /* from this tick on the node sees the channels permuted (one permutation per trial) */
} bl_rp_verb;

typedef struct bl_rp_intervention {
    uint32_t tick; /* 1-based: applied before the node's frame for tick - 1 (0-based) */
    bl_rp_verb verb;
} bl_rp_intervention;

typedef enum bl_rp_operation {
    BL_OP_PROFILE = 0,   /* targets as written */
    BL_OP_SWEEP = 1,     /* targets as written, or a base target times [axes] */
    BL_OP_ABLATE = 2,    /* a baseline and its interventions */
    BL_OP_BENCHMARK = 3, /* the four-task battery: tracking, pong, cartpole_plank_easy, delayed_cue */
    BL_OP_CALIBRATE = 4  /* the reference null on the calibration seed bank */
} bl_rp_operation;
const char *bl_rp_operation_name(bl_rp_operation op);

#define BL_RP_DEFAULT_PAIRING "paired-worlds"
#define BL_RP_DEFAULT_CONSTRUCTION "paired-construction"
#define BL_RP_DEFAULT_MECHANISM "paired-mechanism"

typedef struct bl_rp_target {
    char *id;
    char *label;
    /* Paired comparisons: targets with the same key share that purpose's
     * seeds (pairing: worlds and controls; construction: wirings;
     * mechanism: drive noise and intervention draws). */
    char *pairing_key, *construction_key, *mechanism_key;
    uint32_t pairing_word, construction_word, mechanism_word; /* XORed into the partition word; 0 for the defaults */
    bl_controller controller;
    uint32_t count;
    double input_gain;
    char *preset;
    bl_res_params node;
    bl_task_options task;
    bl_task_definition def;
    uint32_t horizon; /* resolved: the plan's or the task's longest trial */
    uint32_t warmup;  /* the plan's (continuing tasks) */
    bl_rp_intervention interventions[BL_RP_MAX_INTERVENTIONS];
    size_t n_interventions;
    /* The composition as the Python project serialises it (json.dumps,
     * sort_keys, compact): head + parameters + tail. Names the target's
     * philox-host-v1 bootstrap stream; NULL when a written value has no JSON
     * form (that bootstrap then draws as bl-philox-v1). */
    char *py_head, *py_params, *py_tail;
} bl_rp_target;

struct bl_res_plan {
    char *path; /* absolute */
    char plan_sha256[65];
    uint64_t plan_bytes;
    char *id, *description, *question, *version, *evidence;
    bl_rp_operation operation;
    char *rng;          /* as the plan names it: bl-philox-v1 or philox-host-v1 (the Python project's) */
    char *rng_override; /* set by bl_res_plan_override: the scheme that ran instead */
    bl_res_dtype dtype; /* [numerics] dtype: every node of the plan computes in it */
    uint32_t overridden_blocks, overridden_trials; /* 0: as written */
    /* [probe]: the diagnostic ridge probe on emitted activity (docs/reservoir.md) */
    int probe;
    uint32_t probe_fit, probe_validation, probe_evaluation; /* whole trials per block: 256, 128, 256 */
    uint64_t probe_split_seed, probe_permutation_seed;       /* 701, 702 */
    int diagnostic;
    uint32_t blocks, trials_per_block;
    uint32_t horizon; /* as given; 0 when the plan gives none */
    uint32_t warmup;  /* continuing tasks: ticks before scoring starts */
    bl_rp_scope scope;
    uint64_t root_seed;
    char *partition;
    uint32_t partition_word;
    int threads;
    uint32_t batch_size;
    bl_rp_target *targets;
    size_t n_targets;
    char *json;
    char hash[65];
};

const char *bl_rp_scope_name(bl_rp_scope scope);
const char *bl_rp_verb_name(bl_rp_verb verb);

/* Who the plan is: the header already read by plan.c and the plan file. */
typedef struct bl_rp_identity {
    const char *id;
    bl_rp_operation operation; /* the row's variant */
    const char *description;
    const char *path;   /* absolute */
    const char *sha256; /* of the plan file's bytes */
    uint64_t bytes;
} bl_rp_identity;

/* Everything after the header keys; resolves, renders and hashes. */
bl_status bl_rp_parse(const bl_pk_ctx *ctx, const bl_toml_node *root, const bl_rp_identity *who,
                      bl_res_plan **out);

/* Python's json.dumps(value, sort_keys=True, separators=(",", ":")) of a
 * written TOML value (`absent` when v is NULL), and of a string; malloc'd,
 * NULL when out of memory or the value has no JSON form (plan_operations.c). */
char *bl_rp_py_json(const bl_toml_node *v, const char *absent);
char *bl_rp_py_string(const char *s);

/* After the targets: [axes] expansion and the operation's rules (plan_operations.c). */
bl_status bl_rp_apply_operation(const bl_pk_ctx *ctx, const bl_toml_node *root, bl_res_plan *rp);

#endif
