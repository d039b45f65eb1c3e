/* Seeds of an evaluation and the counter streams drawn from them
 * (include/brainlesslab/seed.h; docs/streams.md; docs/reservoir.md, "Random
 * streams"), and the record's account of a connectome run's streams. */
#include "brainlesslab/seed.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/hash.h"
#include "core/np_random.h"
#include "core/stream.h"

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
    uint32_t out[4];
    bl_stream_block(root_seed, block, trial, (uint32_t)purpose, partition_word, out);
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

void bl_seed_trial_rng(uint64_t root, uint32_t word, bl_seed_scope scope, uint32_t block, uint32_t trial,
                       bl_trial_rng *out)
{
    bl_trial_seeds s;
    bl_seed_trial(root, word, scope, block, trial, &s);
    memset(out, 0, sizeof *out);
    bl_rng_seed *dst[5] = {&out->world, &out->construction, &out->drive, &out->control, &out->intervention};
    const uint64_t v[5] = {s.world, s.construction, s.drive, s.control, s.intervention};
    for (int k = 0; k < 5; k++) {
        dst[k]->scheme = BL_RNG_BL_PHILOX_V1;
        dst[k]->u64 = v[k];
    }
}

/* One philox-host-v1 seed: stream and keys exactly as the Python project's
 * evaluation names them (a string key, then integer keys). */
static bl_status host_seed(uint64_t root, const char *partition, const char *stream, const bl_np_key *keys,
                           size_t n_keys, bl_rng_seed *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    out->scheme = BL_RNG_PHILOX_HOST_V1;
    return bl_np_seed_for(root, partition, stream, keys, n_keys, out->digest, err);
}

bl_status bl_seed_trial_host(uint64_t root, const char *partition, bl_seed_scope scope, const bl_host_trial_keys *k,
                             uint32_t block, uint32_t trial, bl_trial_rng *out, bl_error *err)
{
    const int64_t b = block, t = trial;
    /* construction: key, node, count, inputs, effectors, then the scope's block (and trial). */
    bl_np_key c[7] = {{k->construction_key, 0}, {k->node_kind, 0}, {NULL, k->count},
                      {NULL, k->n_inputs},      {NULL, k->n_effectors}, {NULL, b}, {NULL, t}};
    const size_t nc = scope == BL_SCOPE_TRIAL ? 7 : scope == BL_SCOPE_BLOCK ? 6 : 5;
    const bl_np_key world[4] = {{k->pairing_key, 0}, {k->task_kind, 0}, {NULL, b}, {NULL, t}};
    const bl_np_key drive[4] = {{k->mechanism_key, 0}, {k->node_kind, 0}, {NULL, b}, {NULL, t}};
    const bl_np_key control[4] = {{k->mechanism_key, 0}, {k->task_kind, 0}, {NULL, b}, {NULL, t}};
    bl_status st = host_seed(root, partition, "world", world, 4, &out->world, err);
    if (!st)
        st = host_seed(root, partition, "construction", c, nc, &out->construction, err);
    if (!st)
        st = host_seed(root, partition, "drive", drive, 4, &out->drive, err);
    if (!st)
        st = host_seed(root, partition, "control", control, 4, &out->control, err);
    if (!st)
        st = host_seed(root, partition, "input-shuffle", drive, 4, &out->intervention, err);
    return st;
}

void bl_rng_seed_hex(const bl_rng_seed *seed, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    if (seed->scheme != BL_RNG_PHILOX_HOST_V1) {
        /* bl-philox-v1: the 64-bit seed, most significant digit first, zero-padded. */
        for (int k = 0; k < 64; k++)
            hex[k] = k < 48 ? '0' : digits[(seed->u64 >> (4 * (63 - k))) & 15];
        hex[64] = 0;
        return;
    }
    /* The digest is the little-endian integer: its last byte is the most significant. */
    for (int k = 0; k < 32; k++) {
        const uint8_t v = seed->digest[31 - k];
        hex[2 * k] = digits[v >> 4];
        hex[2 * k + 1] = digits[v & 15];
    }
    hex[64] = 0;
}

int bl_rng_seed_equal(const bl_rng_seed *a, const bl_rng_seed *b)
{
    if (a->scheme != b->scheme)
        return 0;
    return a->scheme == BL_RNG_PHILOX_HOST_V1 ? !memcmp(a->digest, b->digest, 32) : a->u64 == b->u64;
}

double bl_stream_uniform(uint64_t seed, uint32_t n, uint32_t domain)
{
    uint32_t w[4];
    bl_stream_block(seed, n, 0, domain, 0, w);
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

void bl_stream_connectome_seeds_json(uint64_t seed, int with_sample, char *buf, size_t size)
{
    snprintf(buf, size,
             "{\"seed\": %" PRIu64 ", \"stream\": \"philox4x32-10\", \"key\": \"(seed & 0xffffffff, seed >> 32)\", "
             "\"counter\": \"(step, neuron, population, trial)\", \"event\": \"word0 < floor(rate*dt*2^32)\"%s}",
             seed, with_sample ? ", \"sample\": \"counter (0, neuron, population ordinal, 0xffffffff); smallest word0 kept\""
                               : "");
}
