/* libFuzzer harness for the connectome directory loader (connectome_dir.c,
 * connectome_part.c, connectome_stream.c): manifest.json, offsets.npy,
 * targets.npy, counts.npy and neurons.csv cut from one input (fuzz_dir.h).
 * The first input byte's low bit asks the harness to write the true sizes
 * and SHA-256s of the data files into the manifest (when it parses), since
 * the fuzzer cannot forge a hash: that lets it reach the .npy, CSR and neuron
 * table validation behind the hash check. Whole and part loads must agree:
 * both succeed or both fail; failures give a one-line message. */
#include <cjson/cJSON.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/hash.h"
#include "fuzz_common.h"
#include "fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[5] = {"manifest.json", "offsets.npy", "targets.npy", "counts.npy",
                                     "neurons.csv"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int fix = data[0] & 1;
    fuzz_part parts[5];
    fuzz_split(data + 1, size - 1, parts, 5);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/c", fuzz_dir());
    fuzz_rm_tree(dir);
    if (mkdir(dir, 0777) != 0)
        abort();
    for (int k = 1; k < 5; k++)
        if (parts[k].present)
            fuzz_put(dir, names[k], parts[k].data, parts[k].len);
    char *mtext = NULL;
    if (fix && parts[0].present) {
        cJSON *m = cJSON_ParseWithLength((const char *)parts[0].data, parts[0].len);
        cJSON *files = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "files") : NULL;
        if (cJSON_IsObject(files))
            for (int k = 1; k < 5; k++) {
                if (!parts[k].present)
                    continue;
                char hex[BL_SHA256_HEX_LEN + 1];
                bl_sha256_buffer(parts[k].data, parts[k].len, hex);
                cJSON_DeleteItemFromObjectCaseSensitive(files, names[k]);
                cJSON *e = cJSON_AddObjectToObject(files, names[k]);
                cJSON_AddNumberToObject(e, "bytes", (double)parts[k].len);
                cJSON_AddStringToObject(e, "sha256", hex);
            }
        mtext = m ? cJSON_PrintUnformatted(m) : NULL;
        cJSON_Delete(m);
    }
    if (mtext)
        fuzz_put(dir, names[0], mtext, strlen(mtext));
    else if (parts[0].present)
        fuzz_put(dir, names[0], parts[0].data, parts[0].len);
    free(mtext);

    bl_connectome *c = NULL, *p = NULL;
    bl_error err, perr;
    bl_status st = bl_connectome_load(dir, &c, &err);
    bl_status pst = bl_connectome_load_part(dir, 1, 2, &p, &perr);
    if (st)
        fuzz_check_error(&err, st, dir);
    if (pst)
        fuzz_check_error(&perr, pst, dir);
    if ((st == BL_OK) != (pst == BL_OK)) {
        fprintf(stderr, "whole load %d (%s) but part load %d (%s)\n", st, st ? err.message : "",
                pst, pst ? perr.message : "");
        abort();
    }
    if (c) {
        /* Every digest names what was read. */
        for (size_t k = 0; k < 5; k++) {
            const char *name;
            uint64_t bytes;
            if (!bl_connectome_source(c, k, &name, &bytes))
                abort();
        }
        if (bl_connectome_n_neurons(c) != bl_connectome_n_neurons(p))
            abort();
    }
    bl_connectome_destroy(c);
    bl_connectome_destroy(p);
    return 0;
}
