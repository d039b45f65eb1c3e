/* libFuzzer harness for plans: the TOML bridge (toml_bridge.cpp: toml++ and
 * the node view) and the key layer (plan.c, plan_keys.c, plan_connectome.c,
 * plan_select.c, plan_sense.c, plan_json.c) over a small fixed connectome
 * ("conn" next to the plan: 6 neurons with ids n0..n5 and a cell_type column
 * a/b). Every input is parsed as text, then loaded as a plan file; a plan
 * that loads is rendered and estimated; failures give one line naming the
 * plan file; and loading the same bytes twice gives the same hash. */
#include <stdint.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/plan.h"
#include "fuzz_common.h"
#include "fuzz_dir.h"
#include "plan/toml_bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_connectome(const char *dir)
{
    int64_t *off = malloc(7 * sizeof *off);
    int32_t *tgt = malloc(8 * sizeof *tgt), *cnt = malloc(8 * sizeof *cnt);
    const int64_t o[7] = {0, 2, 3, 5, 6, 7, 8};
    const int32_t t[8] = {1, 2, 3, 0, 4, 5, 0, 1}, k[8] = {1, 2, -1, 3, 1, 1, -2, 4};
    memcpy(off, o, sizeof o);
    memcpy(tgt, t, sizeof t);
    memcpy(cnt, k, sizeof k);
    bl_connectome *c = NULL;
    bl_error err;
    const char *ids[6] = {"n0", "n1", "n2", "n3", "n4", "n5"};
    const char *types[6] = {"a", "b", "a", "b", "a", "sensory"};
    if (bl_connectome_adopt(6, 8, off, tgt, cnt, &c, &err) || bl_connectome_set_external_ids(c, ids, &err) ||
        bl_connectome_add_column(c, "cell_type", types, &err) || bl_connectome_save(c, dir, &err)) {
        fprintf(stderr, "fuzz_plan: cannot make the test connectome: %s\n", err.message);
        abort();
    }
    bl_connectome_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char plan_path[200];
    if (!plan_path[0]) {
        char conn[200];
        snprintf(conn, sizeof conn, "%s/conn", fuzz_dir());
        make_connectome(conn);
        snprintf(plan_path, sizeof plan_path, "%s/plan.toml", fuzz_dir());
    }
    bl_error err;
    bl_toml_doc *doc = NULL;
    bl_status st = bl_toml_parse_text((const char *)data, size, "fuzz.toml", &doc, &err);
    if (st)
        fuzz_check_error(&err, st, "fuzz.toml");
    bl_toml_destroy(doc);

    fuzz_write(plan_path, data, size);
    bl_plan *plan = NULL;
    st = bl_plan_load(plan_path, &plan, &err);
    if (st) {
        fuzz_check_error(&err, st, "plan.toml");
        return 0;
    }
    char *text = bl_plan_render(plan, 0);
    if (!text)
        abort();
    free(text);
    if (bl_plan_connectome(plan)) {
        bl_plan_estimate_t e;
        bl_plan_estimate(plan, &e);
        if (!(e.memory_bytes >= 0) || !(e.disk_bytes >= 0))
            abort();
    }
    bl_plan *again = NULL;
    if (bl_plan_load(plan_path, &again, &err) || strcmp(bl_plan_hash(plan), bl_plan_hash(again)))
        abort();
    bl_plan_destroy(again);
    bl_plan_destroy(plan);
    return 0;
}
