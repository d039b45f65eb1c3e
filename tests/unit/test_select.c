/* bl_select and bl_select_json (include/brainlesslab/select.h) on a small
 * hand-made connectome: every selector form with its neurons and canonical
 * JSON, the seeded sample against Philox drawn here, names through the
 * lookup, and every refusal with its key path and fault parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/select.h"
#include "core/philox.h"

/* 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4, 4 -> 5, 6 -> 7 */
#define N 8
static bl_connectome *conn;

static int setup(void **state)
{
    (void)state;
    static const int64_t off[N + 1] = {0, 2, 3, 4, 5, 6, 6, 7, 7};
    static const int32_t tgt[] = {1, 2, 3, 3, 4, 5, 7};
    static const int32_t cnt[] = {1, 2, 3, 4, 5, 6, -7};
    int64_t *o = malloc(sizeof off);
    int32_t *t = malloc(sizeof tgt), *c = malloc(sizeof cnt);
    memcpy(o, off, sizeof off);
    memcpy(t, tgt, sizeof tgt);
    memcpy(c, cnt, sizeof cnt);
    bl_error err = {0};
    static const char *const ids[N] = {"100", "101", "102", "103", "104", "105", "106", "720575940379279001"};
    static const char *const type[N] = {"PN", "PN_a", "KC", "KC", "LN", "MBON", "PN", "KC"};
    static const char *const side[N] = {"left", "right", "left", "right", "left", "right", "left", ""};
    static const char *const size[N] = {"1", "2.5", "3", "", "10", "-1", "7", "0"};
    if (bl_connectome_adopt(N, 7, o, t, c, &conn, &err) || bl_connectome_set_external_ids(conn, ids, &err) ||
        bl_connectome_add_column(conn, "cell_type", type, &err) || bl_connectome_add_column(conn, "side", side, &err) ||
        bl_connectome_add_column(conn, "size", size, &err)) {
        fprintf(stderr, "setup: %s\n", err.message);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    bl_connectome_destroy(conn);
    return 0;
}

/* Named populations for the lookup: A = {0, 1}, B = {1, 2, 3}, C = {6}. */
static const int32_t pop_a[] = {0, 1}, pop_b[] = {1, 2, 3}, pop_c[] = {6};

static bl_status lookup(void *user, const char *name, bl_select_named *out, bl_error *err)
{
    (void)user;
    static const struct {
        const char *name;
        const int32_t *v;
        size_t n;
    } table[] = {{"A", pop_a, 2}, {"B", pop_b, 3}, {"C", pop_c, 1}};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(table[i].name, name)) {
            *out = (bl_select_named){table[i].name, table[i].v, table[i].n};
            return BL_OK;
        }
    return bl_fail(err, BL_ERR_INVALID, "no population \"%s\" here", name);
}

/* A lookup whose lists are not sorted and unique (refused, never merged). */
static const int32_t bad_order[] = {3, 1}, bad_range[] = {1, 8};

static bl_status bad_lookup(void *user, const char *name, bl_select_named *out, bl_error *err)
{
    (void)user;
    (void)err;
    *out = (bl_select_named){name, name[0] == 'o' ? bad_order : bad_range, 2};
    return BL_OK;
}

static const bl_select_options opts = {"P", lookup, NULL, 1, 20241002, 3, NULL};

/* Resolve `json`; expect `want` (n neurons) and the canonical form `canon`. */
static void expect_json(const char *json, const int32_t *want, size_t n, const char *canon)
{
    bl_selection *s = NULL;
    bl_error err = {0};
    bl_status st = bl_select_json(conn, json, &opts, &s, NULL, &err);
    if (st)
        fail_msg("%s: %s", json, err.message);
    if (bl_selection_size(s) != n)
        fail_msg("%s: %zu neurons, want %zu", json, bl_selection_size(s), n);
    for (size_t i = 0; i < n; i++)
        if (bl_selection_neurons(s)[i] != want[i])
            fail_msg("%s: neuron %zu is %d, want %d", json, i, bl_selection_neurons(s)[i], want[i]);
    if (canon && strcmp(bl_selection_json(s), canon))
        fail_msg("%s: canonical %s, want %s", json, bl_selection_json(s), canon);
    bl_selection_destroy(s);
}

#define EXPECT(json, canon, ...)                                                                   \
    do {                                                                                           \
        static const int32_t want_[] = {__VA_ARGS__};                                              \
        expect_json(json, want_, sizeof want_ / sizeof *want_, canon);                             \
    } while (0)

static void lists(void **state)
{
    (void)state;
    EXPECT("{\"neurons\": [5, 0, 3]}", "{\"neurons\":[0,3,5]}", 0, 3, 5);
    EXPECT("{\"ids\": [\"103\", 101, \"720575940379279001\"]}", "{\"ids\":[\"101\",\"103\",\"720575940379279001\"]}",
           1, 3, 7);
    EXPECT("{\"neurons\": [0, 1, 2, 3], \"ids\": [\"103\", \"100\"]}", "{\"neurons\":[0,1,2,3],\"ids\":[\"100\",\"103\"]}",
           0, 3);
}

static void query(void **state)
{
    (void)state;
    EXPECT("{\"select\": {\"cell_type\": \"KC\"}}", "{\"select\":{\"cell_type\":[\"KC\"]}}", 2, 3, 7);
    EXPECT("{\"select\": {\"cell_type\": \"PN*\"}}", NULL, 0, 1, 6);
    EXPECT("{\"select\": {\"cell_type\": [\"PN\", \"LN\"]}}", "{\"select\":{\"cell_type\":[\"LN\",\"PN\"]}}", 0, 4,
           6);
    EXPECT("{\"select\": {\"side\": \"left\", \"cell_type\": {\"not\": [\"P?\", \"LN\"]}}}",
           "{\"select\":{\"cell_type\":{\"not\":[\"LN\",\"P?\"]},\"side\":[\"left\"]}}", 2);
    EXPECT("{\"select\": {\"size\": {\"min\": 1, \"max\": 7}}}", "{\"select\":{\"size\":{\"min\":1,\"max\":7}}}", 0,
           1, 2, 6);
    EXPECT("{\"select\": {\"size\": {\"max\": 0.1}}}", "{\"select\":{\"size\":{\"max\":0.1}}}", 5, 7);
    EXPECT("{\"select\": {\"side\": \"\"}}", NULL, 7);
}

static void names_and_depth(void **state)
{
    (void)state;
    EXPECT("{\"population\": \"B\"}", "{\"population\":\"B\"}", 1, 2, 3);
    EXPECT("{\"from\": \"A\", \"depth\": 2}", "{\"from\":\"A\",\"depth\":{\"min\":2,\"max\":2}}", 4);
    EXPECT("{\"from\": \"A\", \"depth\": {\"min\": 1}}", "{\"from\":\"A\",\"depth\":{\"min\":1}}", 2, 3, 4, 5);
    EXPECT("{\"from\": \"A\"}", "{\"from\":\"A\",\"depth\":{\"min\":0}}", 0, 1, 2, 3, 4, 5);
    EXPECT("{\"from\": \"A\", \"depth\": {\"min\": 1, \"max\": 3}, \"select\": {\"side\": \"left\"}}",
           "{\"select\":{\"side\":[\"left\"]},\"from\":\"A\",\"depth\":{\"min\":1,\"max\":3}}", 2, 4);
    EXPECT("{\"union\": [\"C\", \"A\"]}", "{\"union\":[\"A\",\"C\"]}", 0, 1, 6);
    EXPECT("{\"intersect\": [\"B\", \"A\"]}", "{\"intersect\":[\"A\",\"B\"]}", 1);
    EXPECT("{\"union\": [\"A\", \"B\"], \"exclude\": [\"C\", \"A\"]}", "{\"union\":[\"A\",\"B\"],\"exclude\":[\"A\",\"C\"]}",
           2, 3);
    EXPECT("{\"neurons\": [1, 2], \"expect_count\": 2}", "{\"neurons\":[1,2]}", 1, 2);
}

/* The sample keeps the k neurons with the smallest Philox words (ties by
 * index), drawn with the seed as key and counter (0, neuron, stream, ~0). */
static void sample(void **state)
{
    (void)state;
    const uint64_t seed = opts.seed;
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t word[N];
    for (int i = 0; i < N; i++) {
        const uint32_t counter[4] = {0, (uint32_t)i, opts.stream, 0xFFFFFFFFu};
        uint32_t out[4];
        bl_philox4x32(counter, key, out);
        word[i] = out[0];
    }
    int32_t want[3];
    int taken[N] = {0};
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (int i = 0; i < N; i++)
            if (!taken[i] && (best < 0 || word[i] < word[best]))
                best = i;
        taken[best] = 1;
    }
    for (int i = 0, k = 0; i < N; i++)
        if (taken[i])
            want[k++] = i;
    expect_json("{\"neurons\": [0, 1, 2, 3, 4, 5, 6, 7], \"sample\": 3}", want, 3,
                "{\"neurons\":[0,1,2,3,4,5,6,7],\"sample\":3}");
}

/* The struct form: what a plan builds from TOML. */
static void struct_form(void **state)
{
    (void)state;
    const char *const vals[] = {"KC", "PN*"};
    const bl_select_column cols[] = {{"cell_type", BL_SELECT_ANY, vals, 2, 0, 0, 0, 0}};
    const char *const excl[] = {"C"};
    bl_selector sel = {0};
    sel.columns = cols;
    sel.n_columns = 1;
    sel.exclude = (bl_select_names){excl, 1};
    sel.expect_count = -1;
    bl_selection *s = NULL;
    bl_error err = {0};
    assert_int_equal(bl_select(conn, &sel, &opts, &s, NULL, &err), BL_OK);
    static const int32_t want[] = {0, 1, 2, 3, 7};
    assert_int_equal(bl_selection_size(s), 5);
    assert_memory_equal(bl_selection_neurons(s), want, sizeof want);
    assert_string_equal(bl_selection_json(s), "{\"select\":{\"cell_type\":[\"KC\",\"PN*\"]},\"exclude\":[\"C\"]}");
    bl_selection_destroy(s);
    /* A plan's TOML integer keeps 64 bits: the id as text. */
    const char *const big[] = {"720575940379279001"};
    bl_selector by_id = {0};
    by_id.ids = big;
    by_id.n_ids = 1;
    by_id.expect_count = -1;
    assert_int_equal(bl_select(conn, &by_id, NULL, &s, NULL, &err), BL_OK);
    assert_int_equal(bl_selection_neurons(s)[0], 7);
    bl_selection_destroy(s);
}

/* A refusal: status, "PATH: message" and the fault's parts. */
static void refuse(const char *json, const bl_select_options *o, bl_status status, const char *key, long column,
                   const char *sub, long index, const char *path, const char *fragment)
{
    bl_selection *s = (bl_selection *)1;
    bl_select_fault f;
    bl_error err = {0};
    bl_status st = bl_select_json(conn, json, o, &s, &f, &err);
    if (st != status)
        fail_msg("%s: status %d, want %d (%s)", json, (int)st, (int)status, err.message);
    assert_null(s);
    if ((key == NULL) != (f.key == NULL) || (key && strcmp(key, f.key)) || f.column != column || f.index != index ||
        (sub == NULL) != (f.sub == NULL) || (sub && strcmp(sub, f.sub)))
        fail_msg("%s: fault %s/%ld/%s/%ld, want %s/%ld/%s/%ld", json, f.key ? f.key : "-", f.column,
                 f.sub ? f.sub : "-", f.index, key ? key : "-", column, sub ? sub : "-", index);
    if (strcmp(f.path, path))
        fail_msg("%s: path '%s', want '%s'", json, f.path, path);
    if (!strstr(f.message, fragment) || !strstr(err.message, fragment))
        fail_msg("%s: message '%s' lacks '%s'", json, err.message, fragment);
    if (*path && strncmp(err.message, path, strlen(path)))
        fail_msg("%s: message '%s' does not start with its path '%s'", json, err.message, path);
}

static void refusals(void **state)
{
    (void)state;
    const bl_select_options *o = &opts;
    const int E = BL_ERR_INVALID;
    refuse("{}", o, E, NULL, -1, NULL, -1, "", "no selector");
    refuse("{\"neurons\": []}", o, E, "neurons", -1, NULL, -1, "neurons", "empty selection");
    refuse("{\"neurons\": [1, 8]}", o, E, "neurons", -1, NULL, 1, "neurons[1]", "out of range 0..7");
    refuse("{\"neurons\": [-1]}", o, E, "neurons", -1, NULL, 0, "neurons[0]", "-1");
    refuse("{\"neurons\": [2, 1, 2]}", o, E, "neurons", -1, NULL, -1, "neurons", "neuron 2 is listed twice");
    refuse("{\"neurons\": [1.5]}", o, E, "neurons", -1, NULL, 0, "neurons[0]", "got number 1.5");
    refuse("{\"ids\": [\"100\", \"999\"]}", o, E, "ids", -1, NULL, 1, "ids[1]", "unknown external id \"999\"");
    refuse("{\"ids\": [\"100\", 100]}", o, E, "ids", -1, NULL, -1, "ids", "id \"100\" is listed twice");
    refuse("{\"ids\": [true]}", o, E, "ids", -1, NULL, 0, "ids[0]", "got boolean true");
    refuse("{\"select\": {}}", o, E, "select", -1, NULL, -1, "select", "no metadata column given");
    refuse("{\"select\": {\"side\": \"left\", \"kind\": \"x\"}}", o, E, "select", 1, NULL, -1, "select.kind",
           "unknown metadata column (available: cell_type, side, size)");
    refuse("{\"select\": {\"side\": []}}", o, E, "select", 0, NULL, -1, "select.side", "an empty list of values");
    refuse("{\"select\": {\"side\": {\"not\": [\"a\", \"a\"]}}}", o, E, "select", 0, "not", -1, "select.side.not",
           "value \"a\" is listed twice");
    refuse("{\"select\": {\"side\": {\"min\": 1}}}", o, E, "select", 0, NULL, -1, "select.side",
           "column 'side' is not numeric (neuron 0 has \"left\")");
    refuse("{\"select\": {\"size\": {\"min\": 3, \"max\": 1}}}", o, E, "select", 0, NULL, -1, "select.size",
           "min 3 is above max 1");
    refuse("{\"select\": {\"size\": {}}}", o, E, "select", 0, NULL, -1, "select.size", "empty condition");
    refuse("{\"select\": {\"size\": {\"min\": 1, \"low\": 0}}}", o, E, "select", 0, NULL, -1, "select.size",
           "unknown key \"low\"");
    refuse("{\"select\": {\"cell_type\": \"nope\"}}", o, E, "select", -1, NULL, -1, "select",
           "no neuron matches this metadata query");
    refuse("{\"population\": \"Z\"}", o, E, "population", -1, NULL, -1, "population", "no population \"Z\" here");
    refuse("{\"depth\": 1, \"neurons\": [1]}", o, E, "depth", -1, NULL, -1, "depth", "depth needs from");
    refuse("{\"from\": \"A\", \"depth\": {\"min\": 3, \"max\": 1}}", o, E, "depth", -1, NULL, -1, "depth",
           "min 3 is above max 1");
    refuse("{\"from\": \"A\", \"depth\": 1.5}", o, E, "depth", -1, NULL, -1, "depth", "got number 1.5");
    refuse("{\"from\": \"Z\"}", o, E, "from", -1, NULL, -1, "from", "no population \"Z\" here");
    refuse("{\"union\": []}", o, E, "union", -1, NULL, -1, "union", "non-empty array of population names");
    refuse("{\"union\": [\"A\", \"Z\"]}", o, E, "union", -1, NULL, 1, "union[1]", "no population \"Z\" here");
    refuse("{\"intersect\": [\"A\", \"A\"]}", o, E, "intersect", -1, NULL, 1, "intersect[1]",
           "population \"A\" is listed twice");
    refuse("{\"exclude\": [\"A\"]}", o, E, "exclude", -1, NULL, -1, "exclude", "exclude needs something");
    refuse("{\"intersect\": [\"A\", \"C\"]}", o, E, NULL, -1, NULL, -1, "",
           "empty selection: population \"P\" has no neurons");
    refuse("{\"neurons\": [1, 2], \"sample\": 3}", o, E, "sample", -1, NULL, -1, "sample",
           "sample 3 is more than the 2 neurons selected");
    refuse("{\"neurons\": [1, 2], \"sample\": 0}", o, E, "sample", -1, NULL, -1, "sample", "out of range 1..");
    refuse("{\"neurons\": [1, 2], \"expect_count\": 3}", o, E, "expect_count", -1, NULL, -1, "expect_count",
           "population \"P\" has 2 neurons, not the 3 expected");
    refuse("{\"neurons\": [1], \"colour\": 1}", o, E, NULL, -1, NULL, -1, "", "unknown key \"colour\"");
    refuse("[1]", o, E, NULL, -1, NULL, -1, "", "expected a selector (a JSON object), got array");
    /* A repeated key or a number beyond a double at any depth: the selector
     * would mean what its canonical JSON cannot say (fuzz_select found both). */
    refuse("{\"select\": {\"size\": {\"max\": 1e444, \"min\": 5}}}", o, E, "select", -1, NULL, -1, "select",
           "a number beyond the range of a double");
    refuse("{\"select\": {\"size\": {\"max\": 2, \"max\": 5}}}", o, E, "select", -1, NULL, -1, "select",
           "the key \"max\" is given twice");
    refuse("{\"select\": {\"size\": 1, \"side\": \"left\", \"size\": 2}}", o, E, "select", -1, NULL, -1, "select",
           "the key \"size\" is given twice");
    refuse("{\"from\": \"A\", \"depth\": {\"min\": 1, \"min\": 0}}", o, E, "depth", -1, NULL, -1, "depth",
           "the key \"min\" is given twice");
    refuse("{\"neurons\": [1, -1e999]}", o, E, "neurons", -1, NULL, -1, "neurons", "beyond the range of a double");
    refuse("{\"neurons\": ", o, BL_ERR_FORMAT, NULL, -1, NULL, -1, "", "not valid JSON");
    /* No seed, no lookup: refused, not guessed. */
    const bl_select_options bare = {0};
    refuse("{\"neurons\": [1, 2], \"sample\": 1}", &bare, E, "sample", -1, NULL, -1, "sample",
           "a sample is drawn from a seed, and none is given");
    refuse("{\"population\": \"A\"}", &bare, E, "population", -1, NULL, -1, "population", "no population is named");
    const bl_select_options bad = {NULL, bad_lookup, NULL, 0, 0, 0, NULL};
    refuse("{\"union\": [\"order\"]}", &bad, E, "union", -1, NULL, 0, "union[0]",
           "neuron 1 at position 1 is out of order or repeated");
    refuse("{\"population\": \"range\"}", &bad, E, "population", -1, NULL, -1, "population",
           "neuron 8 at position 1 is out of range");
    const bl_select_options told = {NULL, NULL, NULL, 0, 0, 0, "say which seed"};
    refuse("{\"neurons\": [1, 2], \"sample\": 1}", &told, E, "sample", -1, NULL, -1, "sample", "say which seed");
    refuse("{\"neurons\": [1, 2], \"sample\": 1, \"expect_count\": 3}", &told, E, "sample", -1, NULL, -1, "sample",
           "say which seed");
    refuse("{\"neurons\": [1, 2], \"sample\": 3}", &told, E, "sample", -1, NULL, -1, "sample", "more than the 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lists),         cmocka_unit_test(query),       cmocka_unit_test(names_and_depth),
        cmocka_unit_test(sample),        cmocka_unit_test(struct_form), cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
