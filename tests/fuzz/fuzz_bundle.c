/* libFuzzer harness for reservoir bundles (res_bundle.c): node.json and the
 * .npy arrays of a Falandays or SORN bundle cut from one input (fuzz_dir.h).
 * A bundle loads or fails with a one-line message naming the bundle; one that
 * loads saves and loads back. */
#include <stdint.h>

#include "brainlesslab/reservoir.h"
#include "fuzz_common.h"
#include "fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_FILES 19
static const char *const names[N_FILES] = {
    "node.json", "w.npy",    "mask.npy",    "signs.npy", "w_in.npy", "w_out.npy", "acts.npy",
    "targets.npy", "spikes.npy", "w_ee.npy", "mask_ee.npy", "c_e.npy",  "w_ei.npy",  "w_ie.npy",
    "w_eu.npy",  "t_e.npy",  "t_i.npy",     "x.npy",     "y.npy"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_part parts[N_FILES];
    fuzz_split(data, size, parts, N_FILES);
    char dir[160], back[200];
    snprintf(dir, sizeof dir, "%s/b", fuzz_dir());
    snprintf(back, sizeof back, "%s/saved", fuzz_dir());
    fuzz_rm_tree(dir);
    fuzz_rm_tree(back);
    if (mkdir(dir, 0777) != 0)
        abort();
    for (int k = 0; k < N_FILES; k++)
        if (parts[k].present)
            fuzz_put(dir, names[k], parts[k].data, parts[k].len);
    bl_res_state *s = NULL, *again = NULL;
    bl_error err;
    bl_status st = bl_res_state_load(dir, NULL, &s, &err);
    if (st) {
        fuzz_check_error(&err, st, dir);
        return 0;
    }
    if (bl_res_state_save(s, back, &err) || bl_res_state_load(back, NULL, &again, &err)) {
        fprintf(stderr, "a loaded bundle does not save and load back: %s\n", err.message);
        abort();
    }
    if (bl_res_state_units(s) != bl_res_state_units(again))
        abort();
    bl_res_state_destroy(again);
    bl_res_state_destroy(s);
    return 0;
}
