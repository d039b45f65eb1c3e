/* Reservoir plans (operation "profile"), private to the library: the resolved
 * plan that src/experiment/res_evaluate.c runs, and the parser entry that plan.c
 * calls for operation "profile" (the header keys are read by plan.c). */
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

typedef struct bl_rp_target {
    char *id;
    char *label;
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
} bl_rp_target;

struct bl_res_plan {
    char *path; /* absolute */
    char plan_sha256[65];
    uint64_t plan_bytes;
    char *id, *description, *question, *version, *evidence;
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
    const char *description;
    const char *path;   /* absolute */
    const char *sha256; /* of the plan file's bytes */
    uint64_t bytes;
} bl_rp_identity;

/* Everything after the header keys; resolves, renders and hashes. */
bl_status bl_rp_parse(const bl_pk_ctx *ctx, const bl_toml_node *root, const bl_rp_identity *who,
                      bl_res_plan **out);

/* For plan.c: parse a profile plan whose header is in `plan` (id, description,
 * path, inputs[0] = the plan file). */
bl_status bl_pk_load_reservoir_plan(const bl_pk_ctx *ctx, const bl_toml_node *root, const bl_plan *plan,
                                    bl_res_plan **out);

#endif
