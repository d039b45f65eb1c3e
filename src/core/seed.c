/* Seeds of an evaluation and the counter streams drawn from them
 * (include/brainlesslab/seed.h; docs/reservoir.md, "Random streams"). */
#include "brainlesslab/seed.h"

#include <string.h>

#include "brainlesslab/hash.h"
#include "core/philox.h"

const char *bl_seed_scope_name(bl_seed_scope scope)
{
    return scope == BL_SCOPE_EVALUATION ? "evaluation" : scope == BL_SCOPE_BLOCK ? "block" : "trial";
}

uint32_t bl_seed_partition_word(const char *partition)
{
    char hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(partition, strlen(partition), hex);
    uint32_t w = 0;
    for (int byte = 3; byte >= 0; byte--) { /* bytes 0..3 of the digest, little-endian */
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = hex[2 * byte + k];
            v = v * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
        }
        w = (w << 8) | v;
    }
    return w;
}

uint64_t bl_seed_derive(uint64_t root_seed, uint32_t partition_word, bl_seed_purpose purpose, uint32_t block,
                        uint32_t trial)
{
    const uint32_t counter[4] = {block, trial, (uint32_t)purpose, partition_word};
    const uint32_t key[2] = {(uint32_t)root_seed, (uint32_t)(root_seed >> 32)};
    uint32_t out[4];
    bl_philox4x32(counter, key, out);
    return (uint64_t)out[0] | ((uint64_t)out[1] << 32);
}

void bl_seed_trial(uint64_t root, uint32_t word, bl_seed_scope scope, uint32_t block, uint32_t trial,
                   bl_trial_seeds *out)
{
    const uint32_t cb = scope == BL_SCOPE_EVALUATION ? BL_SEED_ANY : block;
    const uint32_t ct = scope == BL_SCOPE_TRIAL ? trial : BL_SEED_ANY;
    out->world = bl_seed_derive(root, word, BL_SEED_WORLD, block, trial);
    out->construction = bl_seed_derive(root, word, BL_SEED_CONSTRUCTION, cb, ct);
    out->drive = bl_seed_derive(root, word, BL_SEED_DRIVE, block, trial);
    out->control = bl_seed_derive(root, word, BL_SEED_CONTROL, block, trial);
    out->intervention = bl_seed_derive(root, word, BL_SEED_INTERVENTION, block, trial);
}

double bl_stream_uniform(uint64_t seed, uint32_t n, uint32_t domain)
{
    const uint32_t counter[4] = {n, 0, domain, 0};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t w[4];
    bl_philox4x32(counter, key, w);
    /* (w0 << 32 | w1) >> 11: the same 53 bits as the reservoir's uniforms. */
    return (double)((((uint64_t)w[0] << 32) | w[1]) >> 11) * 0x1p-53;
}

int64_t bl_stream_integer(uint64_t seed, uint32_t n, uint32_t domain, int64_t lo, int64_t hi)
{
    const double span = (double)(hi - lo + 1);
    int64_t k = (int64_t)(bl_stream_uniform(seed, n, domain) * span);
    if (k > hi - lo)
        k = hi - lo;
    return lo + k;
}
