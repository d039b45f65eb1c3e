/* libFuzzer harness for record verification (verify.c, tree.c, sign.c): a
 * record directory cut from one input (fuzz_dir.h): manifest.json,
 * checksums.sha256, DONE, SIGNATURE, .RESERVED, FAILED and three artifacts
 * (a.bin, d/b.bin, c.txt). The first byte's low bit asks the harness to make
 * checksums.sha256 and DONE consistent with the fuzzed manifest and
 * artifacts, so that the checks behind the hashes are reached. Every verify
 * either passes or fails with a one-line message; its printed report has no
 * control byte (finding 12), and a record verified with a key it was never
 * signed with never passes. */
#include <ctype.h>

#include "brainlesslab/hash.h"
#include "brainlesslab/record.h"
#include "fuzz_common.h"
#include "fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[9] = {"manifest.json", "checksums.sha256", "DONE", "SIGNATURE", ".RESERVED",
                                     "FAILED", "a.bin", "d/b.bin", "c.txt"};

static char pub_path[160];

/* A public key that signed nothing here: verify --key must never pass. */
static const char *public_key(void)
{
    if (!pub_path[0]) {
        char priv[160];
        snprintf(priv, sizeof priv, "%s/k.key", fuzz_dir());
        snprintf(pub_path, sizeof pub_path, "%s/k.pub", fuzz_dir());
        bl_error err;
        if (bl_record_keygen(priv, pub_path, &err))
            abort();
    }
    return pub_path;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *key = public_key();
    int fix = data[0] & 1;
    fuzz_part parts[9];
    fuzz_split(data + 1, size - 1, parts, 9);
    char dir[160];
    snprintf(dir, sizeof dir, "%s/rec-x-12345678", fuzz_dir());
    fuzz_rm_tree(dir);
    char sub[200];
    snprintf(sub, sizeof sub, "%s/d", dir);
    if (mkdir(dir, 0777) != 0 || mkdir(sub, 0777) != 0)
        abort();
    for (int k = 0; k < 9; k++)
        if (parts[k].present && !(fix && (k == 1 || k == 2)))
            fuzz_put(dir, names[k], parts[k].data, parts[k].len);
    if (fix) {
        char sums[4096] = "", hex[BL_SHA256_HEX_LEN + 1];
        size_t o = 0;
        for (int k = 6; k < 9; k++)
            if (parts[k].present) {
                bl_sha256_buffer(parts[k].data, parts[k].len, hex);
                o += (size_t)snprintf(sums + o, sizeof sums - o, "%s  %s\n", hex, names[k]);
            }
        const uint8_t *m = parts[0].present ? parts[0].data : (const uint8_t *)"";
        bl_sha256_buffer(m, parts[0].len, hex);
        snprintf(sums + o, sizeof sums - o, "%s  manifest.json\n", hex);
        fuzz_put(dir, names[1], sums, strlen(sums));
        char done[200];
        snprintf(done, sizeof done, "status DONE\nfinished_utc x\nmanifest_sha256 %s\n", hex);
        fuzz_put(dir, names[2], done, strlen(done));
    }
    char report_path[200];
    snprintf(report_path, sizeof report_path, "%s/report.txt", fuzz_dir());
    FILE *report = fopen(report_path, "w+");
    if (!report)
        abort();
    bl_error err;
    size_t n = 0;
    bl_status st = bl_record_verify(dir, report, &n, &err);
    if (st && (err.status != st || strchr(err.message, '\n')))
        abort();
    rewind(report);
    int ch;
    while ((ch = fgetc(report)) != EOF)
        if (ch != '\n' && (ch < 0x20 || ch >= 0x7f)) {
            fprintf(stderr, "verify printed byte 0x%02x\n", ch);
            abort();
        }
    fclose(report);
    bl_verify_options opt = {.public_key = key};
    if (bl_record_verify_with(dir, &opt, NULL, &n, &err) == BL_OK) {
        fprintf(stderr, "a record passed verify --key with a key that signed nothing\n");
        abort();
    }
    return 0;
}
