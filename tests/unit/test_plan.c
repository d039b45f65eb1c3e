/* Unit tests for src/plan: loading and resolving connectome plans (defaults,
 * selectors by index, id and metadata query, silencing, the stimulus built),
 * the canonical JSON and its hash (stable, order-independent, exact seeds),
 * the input list, and malformed plans, each of which must fail with one line
 * naming the file, the key and the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/hash.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/stimulus.h"

#include "test_support.h"

#define N 12

static char tmpdir[256];
static char conndir[300];

/* 12 neurons in a ring; ids "1000".."1011"; cell_type A/B/C by i % 3;
 * side left for i < 6, right otherwise. */
static void make_connectome(const char *dir)
{
    int64_t *offsets = malloc((N + 1) * sizeof *offsets);
    int32_t *targets = malloc(N * sizeof *targets);
    int32_t *counts = malloc(N * sizeof *counts);
    assert_non_null(offsets);
    assert_non_null(targets);
    assert_non_null(counts);
    for (int i = 0; i <= N; i++)
        offsets[i] = i;
    for (int i = 0; i < N; i++) {
        targets[i] = (i + 1) % N;
        counts[i] = 2;
    }
    bl_connectome *c;
    bl_error err = {0};
    assert_int_equal(bl_connectome_adopt(N, N, offsets, targets, counts, &c, &err), BL_OK);
    char idbuf[N][16];
    const char *ids[N], *types[N], *sides[N];
    static const char *const abc[] = {"A", "B", "C"};
    for (int i = 0; i < N; i++) {
        snprintf(idbuf[i], sizeof idbuf[i], "%d", 1000 + i);
        ids[i] = idbuf[i];
        types[i] = abc[i % 3];
        sides[i] = i < 6 ? "left" : "right";
    }
    assert_int_equal(bl_connectome_set_external_ids(c, ids, &err), BL_OK);
    assert_int_equal(bl_connectome_add_column(c, "cell_type", types, &err), BL_OK);
    assert_int_equal(bl_connectome_add_column(c, "side", sides, &err), BL_OK);
    if (bl_connectome_save(c, dir, &err))
        fail_msg("save: %s", err.message);
    bl_connectome_destroy(c);
}


static int group_setup(void **state)
{
    (void)state;
    if (bl_test_make_tmpdir(tmpdir, sizeof tmpdir, "plan"))
        return -1;
    snprintf(conndir, sizeof conndir, "%s/conn", tmpdir);
    make_connectome(conndir);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    bl_test_remove_tmpdir(tmpdir);
    return 0;
}

static const char *write_plan(const char *name, const char *text)
{
    static char path[8][512];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static const char base_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"unit-base\"\n"
    "operation = \"connectome\"\n"
    "description = \"unit test\"\n"
    "[connectome]\n"
    "path = \"conn\"\n"
    "[model.parameters]\n"
    "w_syn_mv = 0.5\n"
    "[[stimulus]]\n"
    "name = \"by-index\"\n"
    "neurons = [5, 1, 3]\n"
    "rate_hz = 150\n"
    "start_ms = 10\n"
    "stop_ms = 50.5\n"
    "[[stimulus]]\n"
    "name = \"by_id\"\n"
    "ids = [\"1007\", 1002]\n"
    "rate_hz = 20.25\n"
    "[[stimulus]]\n"
    "name = \"query\"\n"
    "select = { cell_type = [\"A\", \"B\"], side = \"right\" }\n"
    "rate_hz = 0\n"
    "[[silence]]\n"
    "name = \"quiet1\"\n"
    "neurons = [11, 4]\n"
    "[[silence]]\n"
    "name = \"quiet2\"\n"
    "select = { cell_type = \"C\" }\n"
    "[run]\n"
    "duration_ms = 100\n"
    "seed = 42\n";

static bl_plan *load_ok(const char *path)
{
    bl_plan *plan = NULL;
    bl_error err = {0};
    if (bl_plan_load(path, &plan, &err))
        fail_msg("load %s: %s", path, err.message);
    assert_non_null(plan);
    return plan;
}

static void assert_neurons(const bl_plan_population *p, const int32_t *want, size_t n)
{
    assert_int_equal(p->n_neurons, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(p->neurons[i], want[i]);
}

static void test_resolve(void **state)
{
    (void)state;
    const char *path = write_plan("base.toml", base_plan);
    bl_plan *plan = load_ok(path);

    assert_string_equal(bl_plan_id(plan), "unit-base");
    assert_string_equal(bl_plan_operation(plan), "connectome");
    assert_string_equal(bl_plan_description(plan), "unit test");
    char *real = realpath(path, NULL);
    assert_string_equal(bl_plan_path(plan), real);
    free(real);
    real = realpath(conndir, NULL);
    assert_string_equal(bl_plan_connectome_path(plan), real);
    free(real);
    assert_int_equal(bl_connectome_n_neurons(bl_plan_connectome(plan)), N);

    /* The manifest hash identifies the connectome. */
    char mpath[512], hex[BL_SHA256_HEX_LEN + 1];
    uint64_t bytes;
    snprintf(mpath, sizeof mpath, "%s/manifest.json", conndir);
    assert_int_equal(bl_sha256_file(mpath, hex, &bytes, NULL), BL_OK);
    assert_string_equal(bl_plan_connectome_sha256(plan), hex);

    /* Model: default preset with the override. */
    const bl_lif_params *p = bl_plan_lif_params(plan);
    assert_int_equal(p->preset, BL_PRESET_SHIU2024);
    assert_true(p->w_syn_mv == 0.5);
    assert_true(p->dt_ms == 0.1);

    assert_int_equal(bl_plan_n_populations(plan), 3);
    const bl_plan_population *s0 = bl_plan_population_at(plan, 0);
    assert_string_equal(s0->name, "by-index");
    assert_neurons(s0, (const int32_t[]){1, 3, 5}, 3);
    assert_true(s0->rate_hz == 150 && s0->start_ms == 10 && s0->stop_ms == 50.5);
    assert_string_equal(s0->selector, "{\"neurons\":[1,3,5]}");

    const bl_plan_population *s1 = bl_plan_population_at(plan, 1);
    assert_neurons(s1, (const int32_t[]){2, 7}, 2); /* 1002 -> 2, 1007 -> 7 */
    assert_true(s1->rate_hz == 20.25 && s1->start_ms == 0 && s1->stop_ms == 100);
    assert_string_equal(s1->selector, "{\"ids\":[\"1002\",\"1007\"]}");

    /* (A or B) and right: 6..11 with i % 3 != 2 -> 6, 7, 9, 10. */
    const bl_plan_population *s2 = bl_plan_population_at(plan, 2);
    assert_neurons(s2, (const int32_t[]){6, 7, 9, 10}, 4);
    assert_string_equal(s2->selector, "{\"select\":{\"cell_type\":[\"A\",\"B\"],\"side\":[\"right\"]}}");
    assert_null(bl_plan_population_at(plan, 3));

    /* Silence: {4, 11} and type C {2, 5, 8, 11}, union sorted and unique. */
    assert_int_equal(bl_plan_n_silences(plan), 2);
    assert_neurons(bl_plan_silence_at(plan, 0), (const int32_t[]){4, 11}, 2);
    assert_string_equal(bl_plan_silence_at(plan, 1)->name, "quiet2");
    size_t ns;
    const int32_t *sil = bl_plan_silenced(plan, &ns);
    int32_t want_sil[] = {2, 4, 5, 8, 11};
    assert_int_equal(ns, 5);
    for (size_t i = 0; i < ns; i++)
        assert_int_equal(sil[i], want_sil[i]);

    /* Defaults. */
    assert_int_equal(bl_plan_trials(plan), 1);
    assert_true(bl_plan_duration_ms(plan) == 100);
    assert_int_equal(bl_plan_steps(plan), 1000);
    assert_int_equal(bl_plan_seed(plan), 42);
    assert_string_equal(bl_plan_backend(plan), "auto");
    assert_int_equal(bl_plan_threads(plan), 0);
    assert_true(bl_plan_output_spikes(plan) && bl_plan_output_counts(plan) &&
                bl_plan_output_state(plan) && bl_plan_output_propagation(plan));
    assert_int_equal(bl_plan_top_responders(plan), 20);

    /* Inputs: the plan, then the manifest and the four data files. */
    assert_int_equal(bl_plan_n_inputs(plan), 6);
    const bl_plan_input *in0 = bl_plan_input_at(plan, 0);
    assert_string_equal(in0->role, "plan");
    assert_string_equal(in0->path, bl_plan_path(plan));
    assert_int_equal(bl_sha256_file(path, hex, &bytes, NULL), BL_OK);
    assert_string_equal(in0->sha256, hex);
    assert_int_equal(in0->bytes, bytes);
    assert_string_equal(bl_plan_input_at(plan, 1)->sha256, bl_plan_connectome_sha256(plan));
    for (size_t i = 2; i < 6; i++) {
        const bl_plan_input *in = bl_plan_input_at(plan, i);
        assert_string_equal(in->role, "connectome data");
        assert_int_equal(bl_sha256_file(in->path, hex, &bytes, NULL), BL_OK);
        assert_string_equal(in->sha256, hex);
        assert_int_equal(in->bytes, bytes);
    }
    assert_null(bl_plan_input_at(plan, 6));

    /* The stimulus: one Poisson population per [[stimulus]]. */
    bl_stimulus *stim;
    bl_error err = {0};
    assert_int_equal(bl_plan_build_stimulus(plan, &stim, &err), BL_OK);
    assert_int_equal(bl_stimulus_n_populations(stim), 3);
    bl_stimulus_destroy(stim);
    bl_plan_destroy(plan);
}

static void test_canonical_json_and_hash(void **state)
{
    (void)state;
    bl_plan *plan = load_ok(write_plan("base.toml", base_plan));
    const char *json = bl_plan_resolved_json(plan);
    char hex[BL_SHA256_HEX_LEN + 1];
    bl_sha256_buffer(json, strlen(json), hex);
    assert_string_equal(bl_plan_hash(plan), hex);
    assert_null(strchr(json, '\n'));
    assert_null(strchr(json, '\t'));

    /* Keys in a fixed order. */
    cJSON *root = cJSON_Parse(json);
    assert_non_null(root);
    static const char *const order[] = {"format", "format_version", "id", "operation", "description",
                                        "connectome", "model", "stimulus", "silence", "run",
                                        "outputs"};
    const cJSON *item = root->child;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++, item = item->next) {
        assert_non_null(item);
        assert_string_equal(item->string, order[i]);
    }
    assert_null(item);
    cJSON_Delete(root);
    assert_non_null(strstr(json, "\"dt_ms\":0.1,"));
    assert_non_null(strstr(json, "\"w_syn_mv\":0.5,"));
    assert_non_null(strstr(json, "\"neurons\":[6,7,9,10]"));

    /* The same plan, reordered and reformatted, hashes the same. */
    const char *shuffled =
        "# comments and order do not matter\n"
        "operation = \"connectome\"\n"
        "id = \"unit-base\"\n"
        "format_version = 4\n"
        "description = \"unit test\"\n"
        "format = \"brainlesslab-plan\"\n"
        "[run]\n"
        "seed = 42\n"
        "duration_ms = 100.0\n"
        "trials = 1\n"
        "backend = \"auto\"\n"
        "[outputs]\n"
        "top_responders = 20\n"
        "spikes = true\n"
        "[model]\n"
        "parameters = { w_syn_mv = 0.5 }\n"
        "preset = \"shiu2024\"\n"
        "[connectome]\n"
        "path = \"./conn\"\n"
        "[[stimulus]]\n"
        "rate_hz = 150.0\n"
        "neurons = [3, 5, 1]\n"
        "name = \"by-index\"\n"
        "stop_ms = 50.5\n"
        "start_ms = 10\n"
        "[[stimulus]]\n"
        "name = \"by_id\"\n"
        "ids = [1002, \"1007\"]\n"
        "rate_hz = 20.25\n"
        "stop_ms = 100\n"
        "[[stimulus]]\n"
        "name = \"query\"\n"
        "select = { side = [\"right\"], cell_type = [\"B\", \"A\"] }\n"
        "rate_hz = 0\n"
        "[[silence]]\n"
        "name = \"quiet1\"\n"
        "neurons = [4, 11]\n"
        "[[silence]]\n"
        "name = \"quiet2\"\n"
        "select = { cell_type = [\"C\"] }\n";
    bl_plan *again = load_ok(write_plan("shuffled.toml", shuffled));
    assert_string_equal(bl_plan_resolved_json(again), json);
    assert_string_equal(bl_plan_hash(again), bl_plan_hash(plan));
    bl_plan_destroy(again);

    /* A different seed is a different plan. */
    char *other = malloc(sizeof base_plan + 8);
    assert_non_null(other);
    strcpy(other, base_plan);
    memcpy(strstr(other, "seed = 42"), "seed = 43", 9);
    again = load_ok(write_plan("other.toml", other));
    assert_string_not_equal(bl_plan_hash(again), bl_plan_hash(plan));
    bl_plan_destroy(again);
    free(other);
    bl_plan_destroy(plan);
}

static void test_exact_integers_and_render(void **state)
{
    (void)state;
    /* 2^53 + 1 is not a double; the canonical text must still be exact. */
    char *text = malloc(sizeof base_plan + 4096);
    assert_non_null(text);
    strcpy(text, base_plan);
    strcat(text, "trials = 3\nthreads = 4\nbackend = \"reference\"\n"
                 "[model]\npreset = \"phase4c\"\n"
                 "[outputs]\nspikes = false\nstate = false\ntop_responders = 0\n");
    char *seed = strstr(text, "seed = 42");
    memmove(seed + 23, seed + 9, strlen(seed + 9) + 1);
    memcpy(seed, "seed = 9007199254740993", 23);
    bl_plan *plan = load_ok(write_plan("big.toml", text));
    free(text);
    assert_int_equal(bl_plan_seed(plan), 9007199254740993ULL);
    assert_non_null(strstr(bl_plan_resolved_json(plan), "\"seed\":9007199254740993,"));
    assert_int_equal(bl_plan_lif_params(plan)->preset, BL_PRESET_PHASE4C);
    assert_int_equal(bl_plan_trials(plan), 3);
    assert_int_equal(bl_plan_threads(plan), 4);
    assert_string_equal(bl_plan_backend(plan), "reference");
    assert_false(bl_plan_output_spikes(plan));
    assert_false(bl_plan_output_state(plan));
    assert_true(bl_plan_output_counts(plan));
    assert_int_equal(bl_plan_top_responders(plan), 0);

    char *pretty = bl_plan_render(plan, 0), *full = bl_plan_render(plan, 1);
    assert_non_null(pretty);
    assert_non_null(full);
    assert_non_null(strstr(pretty, "9007199254740993"));
    assert_non_null(strchr(pretty, '\n'));
    cJSON *a = cJSON_Parse(pretty), *b = cJSON_Parse(full), *c = cJSON_Parse(bl_plan_resolved_json(plan));
    assert_non_null(a);
    assert_non_null(b);
    /* The full rendering is the canonical plan plus the connectome's location,
     * which the hashed form leaves out so that a plan hashes the same anywhere. */
    cJSON *located = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "connectome"), "path");
    assert_true(cJSON_IsString(located));
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "connectome"), "path"));
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "connectome"), "path");
    assert_true(cJSON_Compare(b, c, 1));
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    free(pretty);
    free(full);
    bl_plan_destroy(plan);
}

static void test_abridged_render(void **state)
{
    (void)state;
    char text[sizeof base_plan + 64];
    strcpy(text, base_plan);
    char *sel = strstr(text, "neurons = [5, 1, 3]");
    const char *all = "neurons = [0,1,2,3,4,5,6,7,8,9,10,11]";
    memmove(sel + strlen(all), sel + 19, strlen(sel + 19) + 1);
    memcpy(sel, all, strlen(all));
    bl_plan *plan = load_ok(write_plan("many.toml", text));
    char *pretty = bl_plan_render(plan, 0);
    assert_non_null(pretty);
    assert_non_null(strstr(pretty, "first_neurons"));
    char *full = bl_plan_render(plan, 1);
    assert_null(strstr(full, "first_neurons"));
    free(pretty);
    free(full);
    bl_plan_destroy(plan);
}

/* Replace the first occurrence of `from` in the base plan by `to`. */
static void expect_error(const char *from, const char *to, const char *key, const char *value)
{
    const char *at = strstr(base_plan, from);
    if (!at)
        fail_msg("test bug: '%s' not in the base plan", from);
    size_t head = (size_t)(at - base_plan);
    char *text = malloc(sizeof base_plan + strlen(to) + 1);
    assert_non_null(text);
    memcpy(text, base_plan, head);
    strcpy(text + head, to);
    strcat(text, at + strlen(from));
    const char *path = write_plan("bad.toml", text);
    free(text);
    bl_plan *plan = (bl_plan *)1;
    bl_error err = {0};
    bl_status st = bl_plan_load(path, &plan, &err);
    if (st == BL_OK)
        fail_msg("'%s' -> '%s' was accepted", from, to);
    assert_null(plan);
    assert_int_equal(err.status, st);
    if (!strstr(err.message, "bad.toml") || !strstr(err.message, key) ||
        (value && !strstr(err.message, value)))
        fail_msg("message '%s' lacks the file, '%s' or '%s'", err.message, key, value ? value : "");
    assert_null(strchr(err.message, '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("format_version = 4", "format_version = 4\nbogus = 1", "bogus", NULL);
    expect_error("seed = 42", "seed = 42\nspeed = 1", "run.speed", NULL);
    expect_error("seed = 42", "seed = \"42\"", "run.seed", "\"42\"");
    expect_error("seed = 42", "seed = -1", "run.seed", "-1");
    expect_error("seed = 42", "seed = 1.5", "run.seed", "1.5");
    expect_error("seed = 42\n", "", "run.seed", "missing");
    expect_error("duration_ms = 100", "duration_ms = 0", "run.duration_ms", "0");
    expect_error("duration_ms = 100", "duration_ms = 100.04", "run.duration_ms", "100.04");
    expect_error("duration_ms = 100", "duration_ms = inf", "run.duration_ms", "inf");
    expect_error("duration_ms = 100", "duration_ms = 100\ntrials = 0", "run.trials", "0");
    expect_error("duration_ms = 100", "duration_ms = 100\ntrials = 100001", "run.trials", "100001");
    expect_error("duration_ms = 100", "duration_ms = 100\nthreads = -2", "run.threads", "-2");
    expect_error("duration_ms = 100", "duration_ms = 100\nbackend = \"a b\"", "run.backend", "a b");
    expect_error("[run]\nduration_ms = 100\nseed = 42\n", "", "run", "missing");
    expect_error("format = \"brainlesslab-plan\"", "format = \"other\"", "format", "other");
    expect_error("format_version = 4", "format_version = 3", "format_version", "3");
    expect_error("format_version = 4", "format_version = \"4\"", "format_version", "\"4\"");
    expect_error("id = \"unit-base\"", "id = \"has space\"", "id", "has space");
    expect_error("id = \"unit-base\"\n", "", "id", "missing");
    expect_error("operation = \"connectome\"", "operation = \"dance\"", "operation", "dance");
    expect_error("operation = \"connectome\"", "operation = \"sweep\"", "connectome", "unknown key");
    expect_error("[connectome]\npath = \"conn\"\n", "", "connectome", "missing");
    expect_error("path = \"conn\"", "path = \"missing-dir\"", "connectome.path", "missing-dir");
    expect_error("path = \"conn\"", "path = \"conn/neurons.csv\"", "connectome.path", "neurons.csv");
    expect_error("path = \"conn\"", "path = \"conn\"\nformat = 1", "connectome.format", NULL);
    expect_error("[model.parameters]", "[model]\npreset = \"brian\"\n[model.parameters]",
                 "model.preset", "brian");
    expect_error("w_syn_mv = 0.5", "w_sin_mv = 0.5", "model.parameters.w_sin_mv", NULL);
    expect_error("w_syn_mv = 0.5", "w_syn_mv = \"big\"", "model.parameters.w_syn_mv", "big");
    expect_error("w_syn_mv = 0.5", "dt_ms = true", "model.parameters.dt_ms", "true");
    expect_error("w_syn_mv = 0.5", "delay_ms = 1.85", "model.parameters", "delay_ms");
    expect_error("w_syn_mv = 0.5", "v_th_mv = -60", "model.parameters", "v_th_mv");
    expect_error("[model.parameters]", "[model.paramters]", "model.paramters", NULL);
    expect_error("rate_hz = 150", "rate_hz = -1", "stimulus[0].rate_hz", "-1");
    expect_error("rate_hz = 150", "rate_hz = 10000.5", "stimulus[0].rate_hz", "10000.5");
    expect_error("rate_hz = 150", "rate_hz = nan", "stimulus[0].rate_hz", "nan");
    expect_error("rate_hz = 150\n", "", "stimulus[0].rate_hz", "missing");
    expect_error("start_ms = 10", "start_ms = -5", "stimulus[0].start_ms", "-5");
    expect_error("stop_ms = 50.5", "stop_ms = 100.5", "stimulus[0].stop_ms", "100.5");
    expect_error("stop_ms = 50.5", "stop_ms = 10", "stimulus[0].stop_ms", "10");
    expect_error("neurons = [5, 1, 3]", "neurons = [5, 12]", "stimulus[0].neurons[1]", "12");
    expect_error("neurons = [5, 1, 3]", "neurons = [5, -1]", "stimulus[0].neurons[1]", "-1");
    expect_error("neurons = [5, 1, 3]", "neurons = [5, 1, 5]", "stimulus[0].neurons", "5");
    expect_error("neurons = [5, 1, 3]", "neurons = []", "stimulus[0].neurons", "empty");
    expect_error("neurons = [5, 1, 3]", "neurons = [1.5]", "stimulus[0].neurons[0]", "1.5");
    expect_error("neurons = [5, 1, 3]", "neurons = 5", "stimulus[0].neurons", "5");
    expect_error("neurons = [5, 1, 3]", "neurons = [1]\nids = [\"1000\"]", "stimulus[0].ids",
                 "neurons");
    expect_error("neurons = [5, 1, 3]\n", "", "stimulus[0]", "selector");
    expect_error("ids = [\"1007\", 1002]", "ids = [\"1007\", 99]", "stimulus[1].ids[1]", "99");
    expect_error("ids = [\"1007\", 1002]", "ids = [\"1007\", 1007]", "stimulus[1].ids", "1007");
    expect_error("ids = [\"1007\", 1002]", "ids = [true]", "stimulus[1].ids[0]", "true");
    expect_error("side = \"right\"", "sid = \"right\"", "stimulus[2].select.sid",
                 "cell_type, side");
    expect_error("side = \"right\"", "side = \"up\"", "stimulus[2].select", "empty selection");
    expect_error("side = \"right\"", "side = []", "stimulus[2].select.side", "empty");
    expect_error("side = \"right\"", "side = [\"right\", 1.5]", "stimulus[2].select.side[1]", "1.5");
    expect_error("select = { cell_type = \"C\" }", "select = {}", "silence[1].select", "empty");
    expect_error("select = { cell_type = \"C\" }", "select = \"C\"", "silence[1].select", "\"C\"");
    expect_error("name = \"by_id\"", "name = \"by-index\"", "stimulus[1].name", "by-index");
    expect_error("name = \"quiet1\"", "name = \"query\"", "silence[0].name", "query");
    expect_error("name = \"quiet1\"", "name = \"two words\"", "silence[0].name", "two words");
    expect_error("name = \"quiet1\"", "name = \"quiet1\"\nrate_hz = 5", "silence[0].rate_hz", NULL);
    expect_error("name = \"quiet1\"\n", "", "silence[0].name", "missing");
    expect_error("[[silence]]\nname = \"quiet1\"", "silence = 3\n[[silence]]\nname = \"quiet1\"",
                 "bad.toml:", NULL); /* a TOML redefinition: toml++ names the position */
    expect_error("[[stimulus]]\nname = \"by-index\"", "stimulus = [1]\n[[stimulus]]\nname = \"x\"",
                 "bad.toml:", NULL);
    expect_error("[[silence]]\nname = \"quiet1\"\nneurons = [11, 4]\n[[silence]]\nname = \"quiet2\"\n"
                 "select = { cell_type = \"C\" }\n",
                 "[silence]\nname = \"x\"\n", "silence", "got table");
    expect_error("seed = 42", "seed = 42\n[outputs]\ntop_responders = 10001",
                 "outputs.top_responders", "10001");
    expect_error("seed = 42", "seed = 42\n[outputs]\ncounts = \"yes\"", "outputs.counts", "yes");
    expect_error("seed = 42", "seed = 42\n[outputs]\nspike = true", "outputs.spike", NULL);
    expect_error("seed = 42", "seed = 42\n[run.extra]\nx = 1", "run.extra", NULL);
    expect_error("seed = 42", "seed = = 42", "bad.toml:", NULL);
    expect_error("id = \"unit-base\"", "id = \"unit\\nbase\"", "id", "unit\\nbase");
    expect_error("seed = 42", "seed = 42\n\"evil\\nkey\" = 1", "run.evil\\nkey", NULL);
    expect_error("seed = 42", "seed = 42\nwhen = 1979-05-27", "run.when", "date 1979-05-27");
}

static void test_missing_file(void **state)
{
    (void)state;
    bl_plan *plan = (bl_plan *)1;
    bl_error err = {0};
    assert_int_equal(bl_plan_load("/nonexistent/plan.toml", &plan, &err), BL_ERR_IO);
    assert_null(plan);
    assert_non_null(strstr(err.message, "/nonexistent/plan.toml"));
    assert_int_not_equal(bl_plan_load(tmpdir, &plan, &err), BL_OK);
    assert_null(plan);
    bl_plan_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_canonical_json_and_hash),
        cmocka_unit_test(test_exact_integers_and_render),
        cmocka_unit_test(test_abridged_render),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
