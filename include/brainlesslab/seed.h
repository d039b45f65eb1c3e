/* Seeds and random streams of an evaluation (scheme "bl-philox-v1").
 *
 * One root seed and a seed partition ("development", "calibration", ...) name
 * every random draw of an evaluation. Each trial gets one seed per purpose
 * from Philox; a purpose owns its stream, so adding a draw to one (a new task's
 * world) never moves the draws of another (a wiring). Seeds do not depend on
 * the target: every target of a plan meets the same worlds and, for the same
 * node kind and size, the same wiring (paired comparisons by construction). */
#ifndef BRAINLESSLAB_SEED_H
#define BRAINLESSLAB_SEED_H

#include <stdint.h>

#include "brainlesslab/error.h"
#include "brainlesslab/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bl_seed_purpose {
    BL_SEED_WORLD = 1,        /* the task's random world (cue label, delay, pulses, ...) */
    BL_SEED_CONSTRUCTION = 2, /* the node's wiring and initial state */
    BL_SEED_DRIVE = 3,        /* the node's noise tape (Oosawa drive) */
    BL_SEED_CONTROL = 4,      /* the reference_null control's coins */
    BL_SEED_BOOTSTRAP = 5,    /* the summary's bootstrap (block = target index) */
    BL_SEED_INTERVENTION = 6, /* shuffle_input permutations */
    BL_SEED_PROBE = 7         /* the probe's splits and its permutation null */
} bl_seed_purpose;

/* Stands for "every block" / "every trial" in a broader construction scope. */
#define BL_SEED_ANY UINT32_C(0xFFFFFFFF)
#define BL_SEED_SCHEME "bl-philox-v1"

typedef enum bl_seed_scope {
    BL_SCOPE_EVALUATION = 0, /* one wiring for the whole evaluation */
    BL_SCOPE_BLOCK = 1,      /* one per block */
    BL_SCOPE_TRIAL = 2       /* one per trial */
} bl_seed_scope;
BL_API const char *bl_seed_scope_name(bl_seed_scope scope);

/* The first four bytes of SHA-256(partition), little-endian: disjoint seed
 * banks ("development", "calibration", ...) from one root seed. */
BL_API uint32_t bl_seed_partition_word(const char *partition);
/* Philox4x32-10, key (root lo, root hi), counter (block, trial, purpose,
 * partition word); the seed is word 0 | word 1 << 32. */
BL_API uint64_t bl_seed_derive(uint64_t root_seed, uint32_t partition_word, bl_seed_purpose purpose,
                        uint32_t block, uint32_t trial);

/* Every seed one trial uses. */
typedef struct bl_trial_seeds {
    uint64_t world, construction, drive, control, intervention;
} bl_trial_seeds;
BL_API void bl_seed_trial(uint64_t root_seed, uint32_t partition_word, bl_seed_scope scope, uint32_t block,
                   uint32_t trial, bl_trial_seeds *out);

/* A seed under either scheme. "bl-philox-v1" (this build's) carries a 64-bit
 * Philox key in u64. "philox-host-v1" (the Python BrainlessLab's) carries the
 * SHA-256 digest of its canonical JSON naming (root seed, partition, stream,
 * keys); read as a little-endian 256-bit integer it seeds NumPy's Philox
 * bit generator through SeedSequence, so a plan written for the Python project
 * draws the same worlds and wirings here (src/core/np_random.c). */
typedef enum bl_rng_scheme {
    BL_RNG_BL_PHILOX_V1 = 0,
    BL_RNG_PHILOX_HOST_V1 = 1
} bl_rng_scheme;
typedef struct bl_rng_seed {
    bl_rng_scheme scheme;
    uint64_t u64;        /* bl-philox-v1 */
    uint8_t digest[32];  /* philox-host-v1 */
} bl_rng_seed;

/* Every seed one trial uses, under either scheme (bl-philox-v1: u64 set
 * as bl_seed_trial's; philox-host-v1: digest set). */
typedef struct bl_trial_rng {
    bl_rng_seed world, construction, drive, control, intervention;
} bl_trial_rng;
#define BL_SEED_SCHEME_HOST "philox-host-v1"

/* What names a trial's seeds under philox-host-v1 beside the root seed, the
 * partition, the construction scope, the block and the trial (the Python
 * project's evaluation.py): the target's three keys, the node and task kind
 * names ("falandays", "delayed_cue"), the unit count and the port counts. */
typedef struct bl_host_trial_keys {
    const char *pairing_key, *construction_key, *mechanism_key;
    const char *node_kind, *task_kind;
    uint32_t count, n_inputs, n_effectors;
} bl_host_trial_keys;

/* The philox-host-v1 seeds of one trial (docs/reservoir.md, "Seeds"):
 *   world        seed_for(root, partition, "world", pairing_key, task, block, trial)
 *   construction seed_for(root, partition, "construction", construction_key, node, count,
 *                         n_inputs, n_effectors, scope...)   scope: (), (block), (block, trial)
 *   drive        seed_for(root, partition, "drive", mechanism_key, node, block, trial)
 *   control      seed_for(root, partition, "control", mechanism_key, task, block, trial)
 *   intervention seed_for(root, partition, "input-shuffle", mechanism_key, node, block, trial)
 * Each digest's u64 is 0. Fails only on a key that cannot be written as JSON. */
BL_API bl_status bl_seed_trial_host(uint64_t root_seed, const char *partition, bl_seed_scope scope,
                                    const bl_host_trial_keys *keys, uint32_t block, uint32_t trial,
                                    bl_trial_rng *out, bl_error *err);
/* bl_seed_trial's seeds as bl_rng_seed values (scheme bl-philox-v1). */
BL_API void bl_seed_trial_rng(uint64_t root_seed, uint32_t partition_word, bl_seed_scope scope, uint32_t block,
                              uint32_t trial, bl_trial_rng *out);
/* The Python project's text of a philox-host-v1 seed: the digest read as a
 * little-endian integer, 64 lowercase hex digits (its f"{seed:064x}"). */
BL_API void bl_rng_seed_hex(const bl_rng_seed *seed, char hex[65]);
/* 1 when two seeds are the same seed. */
BL_API int bl_rng_seed_equal(const bl_rng_seed *a, const bl_rng_seed *b);

/* Draw n of a seed's stream in domain d: uniform in [0, 1) from counter
 * (n, 0, d, 0), the top 53 bits of words 0 and 1. */
BL_API double bl_stream_uniform(uint64_t seed, uint32_t n, uint32_t domain);
/* lo + floor(u (hi - lo + 1)) for the same draw (hi >= lo, inclusive). */
BL_API int64_t bl_stream_integer(uint64_t seed, uint32_t n, uint32_t domain, int64_t lo, int64_t hi);

#ifdef __cplusplus
}
#endif
#endif
