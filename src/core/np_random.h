/* NumPy's np.random.Generator(np.random.Philox(seed)), draw for draw, in C:
 * the random streams of the Python BrainlessLab's "philox-host-v1" scheme.
 *
 * A plan written for the Python project names its worlds and wirings by
 * seed_for(root, partition, stream, *keys) = the SHA-256 of a canonical JSON
 * list, read as a little-endian 256-bit integer, handed to NumPy's Philox
 * bit generator. Reproducing those plans here means reproducing, bit for bit:
 *   - SeedSequence(int): the integer's 32-bit little-endian words mixed into a
 *     4-word pool; generate_state(2, uint64) is Philox's key;
 *   - Philox4x64-10 (Random123's philox4x64_R): the counter starts at 0 and is
 *     incremented before each block of four 64-bit outputs;
 *   - the Generator methods the original calls (random, uniform, integers,
 *     standard_normal, shuffle, choice) with NumPy 1.24's exact algorithms.
 * Verified against Debian's NumPy by tests/oracles/test_np_random.py.
 * Private to the library (docs/reservoir.md, "Random streams"). */
#ifndef BL_CORE_NP_RANDOM_H
#define BL_CORE_NP_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/error.h"

#define BL_NP_SCHEME "philox-host-v1"

typedef struct bl_np_rng {
    uint64_t key[2], ctr[4], buf[4];
    int pos;         /* next unread word of buf; 4 = empty */
    int has_u32;     /* next_uint32 holds the upper half of its last 64-bit word */
    uint32_t u32;
} bl_np_rng;

/* np.random.Philox(int.from_bytes(le[0:n], "little")): the integer's
 * SeedSequence (n may be 0: the integer 0). */
void bl_np_rng_seed_bytes(bl_np_rng *g, const uint8_t *le, size_t n);
void bl_np_rng_seed_digest(bl_np_rng *g, const uint8_t digest[32]);
void bl_np_rng_seed_u64(bl_np_rng *g, uint64_t seed);

/* A key of seed_for: a string (str != NULL, UTF-8) or an integer. */
typedef struct bl_np_key {
    const char *str;
    int64_t num;
} bl_np_key;
/* The philox-host-v1 digest: SHA-256 of
 * ["philox-host-v1",root,"partition","stream",[["int",n],["str","s"],...]]
 * exactly as Python's json.dumps(ensure_ascii=True, separators=(",", ":"))
 * writes it. Fails on a string that is not valid UTF-8. */
bl_status bl_np_seed_for(uint64_t root_seed, const char *partition, const char *stream, const bl_np_key *keys,
                         size_t n_keys, uint8_t digest[32], bl_error *err);
/* The canonical JSON itself (NUL-terminated into buf when it fits); its
 * length, or (size_t)-1 on invalid UTF-8. Exposed for the tests. */
size_t bl_np_seed_json(uint64_t root_seed, const char *partition, const char *stream, const bl_np_key *keys,
                       size_t n_keys, char *buf, size_t cap);

uint64_t bl_np_next_u64(bl_np_rng *g);
uint32_t bl_np_next_u32(bl_np_rng *g);
double bl_np_random(bl_np_rng *g);                             /* Generator.random() */
double bl_np_uniform(bl_np_rng *g, double lo, double hi);      /* Generator.uniform(lo, hi) */
int64_t bl_np_integers(bl_np_rng *g, int64_t lo, int64_t hi);  /* Generator.integers(lo, hi), hi exclusive, int64 */
double bl_np_standard_normal(bl_np_rng *g);                    /* Generator.standard_normal(): the ziggurat */
void bl_np_shuffle_i32(bl_np_rng *g, int32_t *a, size_t n);    /* Generator.shuffle of a 1-D array */
void bl_np_shuffle_u32(bl_np_rng *g, uint32_t *a, size_t n);
int64_t bl_np_choice_index(bl_np_rng *g, int64_t n);           /* the index Generator.choice(seq of n) picks */
/* Generator.permutation(n): 0 .. n-1 (np.arange), then shuffled as above. */
void bl_np_permutation(bl_np_rng *g, uint32_t *out, size_t n);
/* random_interval(max): a value in [0, max] by masked rejection (shuffle's draw). */
uint64_t bl_np_interval(bl_np_rng *g, uint64_t max);

#endif
