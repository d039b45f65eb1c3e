/* NumPy's Generator over Philox, draw for draw (src/core/np_random.h). Each
 * algorithm is restated from NumPy 1.24's documented behaviour and checked
 * against Debian's NumPy by tests/oracles/test_np_random.py; nothing here may
 * change a single bit of a draw without that test failing. */
#include "core/np_random.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/np_ziggurat.h"
#include "core/philox.h"

/* ---- SeedSequence (pool of 4 32-bit words) ---- */

#define SS_POOL 4
#define SS_INIT_A UINT32_C(0x43b0d7e5)
#define SS_MULT_A UINT32_C(0x931e8875)
#define SS_INIT_B UINT32_C(0x8b51f9dd)
#define SS_MULT_B UINT32_C(0x58f38ded)
#define SS_MIX_L UINT32_C(0xca01f9dd)
#define SS_MIX_R UINT32_C(0x4973f715)

static uint32_t ss_hashmix(uint32_t value, uint32_t *hash_const)
{
    value ^= *hash_const;
    *hash_const *= SS_MULT_A;
    value *= *hash_const;
    value ^= value >> 16;
    return value;
}

static uint32_t ss_mix(uint32_t x, uint32_t y)
{
    uint32_t r = SS_MIX_L * x - SS_MIX_R * y;
    r ^= r >> 16;
    return r;
}

void bl_np_rng_seed_bytes(bl_np_rng *g, const uint8_t *le, size_t n)
{
    /* The integer's 32-bit words, least significant first, without leading
     * zero words; the integer 0 is the single word 0. */
    while (n > 0 && le[n - 1] == 0)
        n--;
    const size_t words = n ? (n + 3) / 4 : 1;
    uint32_t pool[SS_POOL];
    uint32_t hc = SS_INIT_A;
#define SS_WORD(i)                                                                                                 \
    (((i) * 4 < n ? (uint32_t)le[(i) * 4] : 0u) | ((i) * 4 + 1 < n ? (uint32_t)le[(i) * 4 + 1] << 8 : 0u) |     \
     ((i) * 4 + 2 < n ? (uint32_t)le[(i) * 4 + 2] << 16 : 0u) |                                                    \
     ((i) * 4 + 3 < n ? (uint32_t)le[(i) * 4 + 3] << 24 : 0u))
    for (size_t i = 0; i < SS_POOL; i++)
        pool[i] = ss_hashmix(i < words ? SS_WORD(i) : 0u, &hc);
    for (size_t s = 0; s < SS_POOL; s++)
        for (size_t d = 0; d < SS_POOL; d++)
            if (s != d)
                pool[d] = ss_mix(pool[d], ss_hashmix(pool[s], &hc));
    for (size_t s = SS_POOL; s < words; s++)
        for (size_t d = 0; d < SS_POOL; d++)
            pool[d] = ss_mix(pool[d], ss_hashmix(SS_WORD(s), &hc));
#undef SS_WORD
    /* generate_state(2, uint64): four words cycling the pool, paired
     * little-endian into the two key words. */
    uint32_t st[4];
    uint32_t hb = SS_INIT_B;
    for (size_t i = 0; i < 4; i++) {
        uint32_t v = pool[i % SS_POOL];
        v ^= hb;
        hb *= SS_MULT_B;
        v *= hb;
        v ^= v >> 16;
        st[i] = v;
    }
    memset(g, 0, sizeof *g);
    g->key[0] = (uint64_t)st[0] | (uint64_t)st[1] << 32;
    g->key[1] = (uint64_t)st[2] | (uint64_t)st[3] << 32;
    g->pos = 4;
}

void bl_np_rng_seed_digest(bl_np_rng *g, const uint8_t digest[32]) { bl_np_rng_seed_bytes(g, digest, 32); }

void bl_np_rng_seed_u64(bl_np_rng *g, uint64_t seed)
{
    uint8_t le[8];
    for (int k = 0; k < 8; k++)
        le[k] = (uint8_t)(seed >> (8 * k));
    bl_np_rng_seed_bytes(g, le, 8);
}

/* ---- seed_for's canonical JSON ---- */

typedef struct jw {
    char *buf;
    size_t cap, len;
} jw;

static void jw_put(jw *w, const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++, w->len++)
        if (w->len + 1 < w->cap)
            w->buf[w->len] = s[k];
}

static void jw_str(jw *w, const char *s) { jw_put(w, s, strlen(s)); }

static void jw_u16(jw *w, unsigned v)
{
    char t[8];
    snprintf(t, sizeof t, "\\u%04x", v & 0xFFFFu); /* Python writes lowercase hex */
    jw_put(w, t, 6);
}

/* A JSON string as json.dumps(ensure_ascii=True) writes it: printable ASCII
 * but '"' and '\\' as is, the five short escapes, everything else (control
 * characters, DEL, non-ASCII) as \uXXXX, astral characters as a surrogate
 * pair. Returns -1 on invalid UTF-8 (Python could not hold such a str). */
static int jw_quoted(jw *w, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    jw_put(w, "\"", 1);
    while (*p) {
        unsigned c = *p;
        uint32_t cp;
        int more;
        if (c < 0x80) {
            cp = c;
            more = 0;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1F;
            more = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0F;
            more = 2;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07;
            more = 3;
        } else {
            return -1;
        }
        p++;
        for (int k = 0; k < more; k++, p++) {
            if ((*p & 0xC0) != 0x80)
                return -1;
            cp = cp << 6 | (*p & 0x3Fu);
        }
        if ((more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return -1; /* overlong, out of range, or a surrogate */
        switch (cp) {
        case '"': jw_str(w, "\\\""); continue;
        case '\\': jw_str(w, "\\\\"); continue;
        case '\b': jw_str(w, "\\b"); continue;
        case '\f': jw_str(w, "\\f"); continue;
        case '\n': jw_str(w, "\\n"); continue;
        case '\r': jw_str(w, "\\r"); continue;
        case '\t': jw_str(w, "\\t"); continue;
        default: break;
        }
        if (cp >= 0x20 && cp <= 0x7E) {
            char ch = (char)cp;
            jw_put(w, &ch, 1);
        } else if (cp < 0x10000) {
            jw_u16(w, cp);
        } else {
            const uint32_t v = cp - 0x10000;
            jw_u16(w, 0xD800 | (v >> 10));
            jw_u16(w, 0xDC00 | (v & 0x3FF));
        }
    }
    jw_put(w, "\"", 1);
    return 0;
}

size_t bl_np_seed_json(uint64_t root_seed, const char *partition, const char *stream, const bl_np_key *keys,
                       size_t n_keys, char *buf, size_t cap)
{
    jw w = {buf, buf ? cap : 0, 0};
    char num[32];
    jw_str(&w, "[\"" BL_NP_SCHEME "\",");
    snprintf(num, sizeof num, "%llu", (unsigned long long)root_seed);
    jw_str(&w, num);
    jw_put(&w, ",", 1);
    if (jw_quoted(&w, partition))
        return (size_t)-1;
    jw_put(&w, ",", 1);
    if (jw_quoted(&w, stream))
        return (size_t)-1;
    jw_str(&w, ",[");
    for (size_t k = 0; k < n_keys; k++) {
        if (k)
            jw_put(&w, ",", 1);
        if (keys[k].str) {
            jw_str(&w, "[\"str\",");
            if (jw_quoted(&w, keys[k].str))
                return (size_t)-1;
        } else {
            snprintf(num, sizeof num, "[\"int\",%lld", (long long)keys[k].num);
            jw_str(&w, num);
        }
        jw_put(&w, "]", 1);
    }
    jw_str(&w, "]]");
    if (w.cap)
        w.buf[w.len < w.cap ? w.len : w.cap - 1] = '\0';
    return w.len;
}

bl_status bl_np_seed_for(uint64_t root_seed, const char *partition, const char *stream, const bl_np_key *keys,
                         size_t n_keys, uint8_t digest[32], bl_error *err)
{
    const size_t len = bl_np_seed_json(root_seed, partition, stream, keys, n_keys, NULL, 0);
    if (len == (size_t)-1)
        return bl_fail(err, BL_ERR_INVALID, "philox-host-v1 seed (partition '%s', stream '%s'): a name or key is "
                       "not valid UTF-8", partition, stream);
    char *text = malloc(len + 1);
    if (!text)
        return bl_fail(err, BL_ERR_NOMEM, "philox-host-v1 seed: cannot allocate %zu bytes", len + 1);
    bl_np_seed_json(root_seed, partition, stream, keys, n_keys, text, len + 1);
    unsigned int out = 0;
    const int ok = EVP_Digest(text, len, digest, &out, EVP_sha256(), NULL) == 1 && out == 32;
    free(text);
    if (!ok)
        return bl_fail(err, BL_ERR_INTERNAL, "philox-host-v1 seed (stream '%s'): SHA-256 failed", stream);
    return BL_OK;
}

/* ---- the bit generator ---- */

uint64_t bl_np_next_u64(bl_np_rng *g)
{
    if (g->pos < 4)
        return g->buf[g->pos++];
    /* The 256-bit counter is incremented (with carry) before each block. */
    for (int k = 0; k < 4 && ++g->ctr[k] == 0; k++) {
    }
    philox4x64_ctr_t c = {{g->ctr[0], g->ctr[1], g->ctr[2], g->ctr[3]}};
    philox4x64_key_t key = {{g->key[0], g->key[1]}};
    philox4x64_ctr_t r = philox4x64_R(10, c, key);
    for (int k = 0; k < 4; k++)
        g->buf[k] = r.v[k];
    g->pos = 1;
    return g->buf[0];
}

uint32_t bl_np_next_u32(bl_np_rng *g)
{
    /* Low half first, the high half kept for the next call; 64-bit and
     * double draws in between do not touch the kept half. */
    if (g->has_u32) {
        g->has_u32 = 0;
        return g->u32;
    }
    const uint64_t v = bl_np_next_u64(g);
    g->has_u32 = 1;
    g->u32 = (uint32_t)(v >> 32);
    return (uint32_t)v;
}

double bl_np_random(bl_np_rng *g) { return (double)(bl_np_next_u64(g) >> 11) * 0x1p-53; }

double bl_np_uniform(bl_np_rng *g, double lo, double hi)
{
    const double range = hi - lo;
    return lo + range * bl_np_random(g);
}

/* ---- bounded integers (Lemire's method, as NumPy's Generator does it) ---- */

static void mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    const uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* A value in [0, rng] (inclusive); rng < 2^32 - 1. */
static uint32_t lemire32(bl_np_rng *g, uint32_t rng)
{
    const uint32_t excl = rng + 1;
    uint64_t m = (uint64_t)bl_np_next_u32(g) * excl;
    uint32_t left = (uint32_t)m;
    if (left < excl) {
        const uint32_t threshold = (UINT32_MAX - rng) % excl;
        while (left < threshold) {
            m = (uint64_t)bl_np_next_u32(g) * excl;
            left = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* A value in [0, rng]; 2^32 - 1 < rng < 2^64 - 1. */
static uint64_t lemire64(bl_np_rng *g, uint64_t rng)
{
    const uint64_t excl = rng + 1;
    uint64_t hi, lo;
    mul64(bl_np_next_u64(g), excl, &hi, &lo);
    if (lo < excl) {
        const uint64_t threshold = (UINT64_MAX - rng) % excl;
        while (lo < threshold)
            mul64(bl_np_next_u64(g), excl, &hi, &lo);
    }
    return hi;
}

int64_t bl_np_integers(bl_np_rng *g, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo; /* NumPy refuses low >= high; callers never ask */
    const uint64_t rng = (uint64_t)hi - 1u - (uint64_t)lo, off = (uint64_t)lo;
    uint64_t v;
    if (rng == 0)
        v = 0; /* a single value: NumPy draws nothing */
    else if (rng < UINT32_MAX)
        v = lemire32(g, (uint32_t)rng);
    else if (rng == UINT32_MAX)
        v = bl_np_next_u32(g);
    else if (rng == UINT64_MAX)
        v = bl_np_next_u64(g);
    else
        v = lemire64(g, rng);
    return (int64_t)(off + v);
}

int64_t bl_np_choice_index(bl_np_rng *g, int64_t n) { return bl_np_integers(g, 0, n); }

uint64_t bl_np_interval(bl_np_rng *g, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max, v;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= UINT32_MAX) {
        while ((v = (bl_np_next_u32(g) & mask)) > max) {
        }
    } else {
        while ((v = (bl_np_next_u64(g) & mask)) > max) {
        }
    }
    return v;
}

/* Fisher-Yates from the last element: i swaps with random_interval(i). */
void bl_np_shuffle_u32(bl_np_rng *g, uint32_t *a, size_t n)
{
    for (size_t i = n; i-- > 1;) {
        const size_t j = (size_t)bl_np_interval(g, i);
        const uint32_t t = a[j];
        a[j] = a[i];
        a[i] = t;
    }
}

/* The same swaps: only positions move, and C lets an int32_t be accessed as
 * its unsigned counterpart. */
void bl_np_shuffle_i32(bl_np_rng *g, int32_t *a, size_t n) { bl_np_shuffle_u32(g, (uint32_t *)a, n); }

void bl_np_permutation(bl_np_rng *g, uint32_t *out, size_t n)
{
    for (size_t k = 0; k < n; k++)
        out[k] = (uint32_t)k;
    bl_np_shuffle_u32(g, out, n);
}

/* ---- the normal ziggurat ---- */

double bl_np_standard_normal(bl_np_rng *g)
{
    for (;;) {
        uint64_t r = bl_np_next_u64(g);
        const int idx = (int)(r & 0xff);
        r >>= 8;
        const int sign = (int)(r & 1);
        const uint64_t rabs = (r >> 1) & UINT64_C(0x000fffffffffffff);
        double x = (double)rabs * bl_np_zig_wi[idx];
        if (sign)
            x = -x;
        if (rabs < bl_np_zig_ki[idx])
            return x;
        if (idx == 0) {
            /* The tail beyond r (Marsaglia): log1p(-u) keeps log away from 0. */
            for (;;) {
                const double xx = -BL_NP_ZIG_INV_R * log1p(-bl_np_random(g));
                const double yy = -log1p(-bl_np_random(g));
                if (yy + yy > xx * xx)
                    return ((rabs >> 8) & 1) ? -(BL_NP_ZIG_R + xx) : BL_NP_ZIG_R + xx;
            }
        }
        /* The wedge: accept under the density. */
        if ((bl_np_zig_fi[idx - 1] - bl_np_zig_fi[idx]) * bl_np_random(g) + bl_np_zig_fi[idx] < exp(-0.5 * x * x))
            return x;
    }
}
