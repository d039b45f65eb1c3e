/* The C side of tests/oracles/test_np_random.py: reads commands on stdin,
 * one per line, and prints the draws of src/core/np_random.c, one per line
 * (integers in decimal, doubles as their 64-bit pattern in hex), so the
 * oracle compares them with NumPy's bit for bit.
 *   seed u64 N              np.random.Philox(N)
 *   seed bytes HEX          Philox(int.from_bytes(bytes.fromhex(HEX), "little"))
 *   seedfor ROOT PART STREAM [i:N | s:HEXUTF8]...   prints the digest, seeds from it
 *   json ROOT PART STREAM [keys...]                 prints the canonical JSON (hex)
 *   draw METHOD COUNT [A B] METHOD: u64 u32 random uniform integers normal choice
 *                           shuffle_i32 shuffle_u32 permutation (COUNT = array length, prints it)
 *   mixed COUNT             a fixed interleaving of every method */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/np_random.h"

static void put_double(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    printf("%016" PRIx64 "\n", b);
}

static int unhex(const char *h, uint8_t *out, size_t cap)
{
    size_t n = strlen(h);
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t k = 0; k < n / 2; k++) {
        unsigned v;
        if (sscanf(h + 2 * k, "%2x", &v) != 1)
            return -1;
        out[k] = (uint8_t)v;
    }
    return (int)(n / 2);
}

/* Keys "i:N" or "s:HEX" (the string's UTF-8 bytes in hex, so any text survives the command line). */
static size_t parse_keys(char **tok, size_t nt, bl_np_key *keys, char strs[][256])
{
    size_t n = 0;
    for (size_t k = 0; k < nt && n < 16; k++, n++) {
        if (tok[k][0] == 'i') {
            keys[n].str = NULL;
            keys[n].num = strtoll(tok[k] + 2, NULL, 10);
        } else {
            int len = unhex(tok[k] + 2, (uint8_t *)strs[n], 255);
            strs[n][len < 0 ? 0 : len] = '\0';
            keys[n].str = strs[n];
        }
    }
    return n;
}

static void draw(bl_np_rng *g, const char *m, long count, const char *sa, const char *sb)
{
    const double a = strtod(sa, NULL), b = strtod(sb, NULL);
    const int64_t ia = strtoll(sa, NULL, 10), ib = strtoll(sb, NULL, 10);
    if (!strcmp(m, "permutation")) {
        uint32_t *x = malloc((size_t)count * sizeof *x + 1);
        bl_np_permutation(g, x, (size_t)count);
        for (long k = 0; k < count; k++)
            printf("%" PRIu32 "\n", x[k]);
        free(x);
        return;
    }
    if (!strcmp(m, "shuffle_i32") || !strcmp(m, "shuffle_u32")) {
        int32_t *x = malloc((size_t)count * sizeof *x + 1);
        for (long k = 0; k < count; k++)
            x[k] = (int32_t)k;
        if (m[8] == 'i')
            bl_np_shuffle_i32(g, x, (size_t)count);
        else
            bl_np_shuffle_u32(g, (uint32_t *)x, (size_t)count);
        for (long k = 0; k < count; k++)
            printf("%d\n", x[k]);
        free(x);
        return;
    }
    for (long k = 0; k < count; k++) {
        if (!strcmp(m, "u64"))
            printf("%" PRIu64 "\n", bl_np_next_u64(g));
        else if (!strcmp(m, "u32"))
            printf("%" PRIu32 "\n", bl_np_next_u32(g));
        else if (!strcmp(m, "random"))
            put_double(bl_np_random(g));
        else if (!strcmp(m, "uniform"))
            put_double(bl_np_uniform(g, a, b));
        else if (!strcmp(m, "integers"))
            printf("%" PRId64 "\n", bl_np_integers(g, ia, ib));
        else if (!strcmp(m, "normal"))
            put_double(bl_np_standard_normal(g));
        else if (!strcmp(m, "choice"))
            printf("%" PRId64 "\n", bl_np_choice_index(g, ia));
    }
}

int main(void)
{
    bl_np_rng g;
    bl_np_rng_seed_u64(&g, 0);
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        char *tok[64];
        size_t nt = 0;
        for (char *p = strtok(line, " \n"); p && nt < 64; p = strtok(NULL, " \n"))
            tok[nt++] = p;
        if (!nt)
            continue;
        if (!strcmp(tok[0], "seed") && nt == 3 && !strcmp(tok[1], "u64")) {
            bl_np_rng_seed_u64(&g, strtoull(tok[2], NULL, 10));
        } else if (!strcmp(tok[0], "seed") && nt == 3) {
            uint8_t b[1024];
            int n = unhex(tok[2], b, sizeof b);
            bl_np_rng_seed_bytes(&g, b, n < 0 ? 0 : (size_t)n);
        } else if ((!strcmp(tok[0], "seedfor") || !strcmp(tok[0], "json")) && nt >= 4) {
            bl_np_key keys[16];
            static char strs[16][256];
            char part[256], stream[256];
            int lp = unhex(tok[2], (uint8_t *)part, 255), ls = unhex(tok[3], (uint8_t *)stream, 255);
            part[lp < 0 ? 0 : lp] = stream[ls < 0 ? 0 : ls] = '\0';
            size_t nk = parse_keys(tok + 4, nt - 4, keys, strs);
            uint64_t root = strtoull(tok[1], NULL, 10);
            if (tok[0][0] == 'j') {
                static char text[65536];
                size_t len = bl_np_seed_json(root, part, stream, keys, nk, text, sizeof text);
                if (len == (size_t)-1) {
                    printf("invalid\n");
                } else {
                    for (size_t k = 0; k < len; k++)
                        printf("%02x", (unsigned char)text[k]);
                    printf("\n");
                }
                continue;
            }
            uint8_t d[32];
            bl_error err = {0};
            if (bl_np_seed_for(root, part, stream, keys, nk, d, &err)) {
                printf("error %s\n", err.message);
                continue;
            }
            for (int k = 0; k < 32; k++)
                printf("%02x", d[k]);
            printf("\n");
            bl_np_rng_seed_digest(&g, d);
        } else if (!strcmp(tok[0], "draw") && nt >= 3) {
            draw(&g, tok[1], strtol(tok[2], NULL, 10), nt > 3 ? tok[3] : "0", nt > 4 ? tok[4] : "0");
        } else if (!strcmp(tok[0], "mixed") && nt == 2) {
            /* The buffered 32-bit half must survive 64-bit and double draws. */
            long n = strtol(tok[1], NULL, 10);
            for (long k = 0; k < n; k++) {
                printf("%" PRIu32 "\n", bl_np_next_u32(&g));
                put_double(bl_np_random(&g));
                printf("%" PRId64 "\n", bl_np_integers(&g, 1, 3));
                put_double(bl_np_standard_normal(&g));
                printf("%" PRId64 "\n", bl_np_integers(&g, -5, INT64_C(1) << 40));
                printf("%" PRIu64 "\n", bl_np_next_u64(&g));
                printf("%" PRId64 "\n", bl_np_choice_index(&g, 3));
            }
        } else {
            fprintf(stderr, "np_random_draws: cannot read the command '%s'\n", tok[0]);
            return 2;
        }
    }
    return 0;
}
