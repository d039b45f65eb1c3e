/* Unit tests for src/tasks and src/plan/plan_reservoir.c: seeds, the
 * delayed-cue world, observation and scoring (ties counted), the controls,
 * profile plans (resolved form, hash, malformed plans named by file, line and
 * key), evaluation (independent of threads and batch size; blocks x trials;
 * construction scopes; interventions) and runs into verified records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/experiment.h"
#include "brainlesslab/record.h"
#include "brainlesslab/task.h"
#include "plan/plan_reservoir.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("res_task")

static const char *write_plan(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s.toml", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define HEADER "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"t\"\noperation = \"profile\"\n"

static void test_seeds(void **state)
{
    (void)state;
    uint32_t dev = bl_seed_partition_word("development"), cal = bl_seed_partition_word("calibration");
    assert_true(dev != cal);
    uint64_t a = bl_seed_derive(11001, dev, BL_SEED_WORLD, 0, 0);
    assert_true(a == bl_seed_derive(11001, dev, BL_SEED_WORLD, 0, 0));
    assert_true(a != bl_seed_derive(11001, dev, BL_SEED_WORLD, 0, 1));
    assert_true(a != bl_seed_derive(11001, dev, BL_SEED_WORLD, 1, 0));
    assert_true(a != bl_seed_derive(11001, dev, BL_SEED_DRIVE, 0, 0));
    assert_true(a != bl_seed_derive(11001, cal, BL_SEED_WORLD, 0, 0));
    assert_true(a != bl_seed_derive(11002, dev, BL_SEED_WORLD, 0, 0));
}

static void test_world_and_stimulus(void **state)
{
    (void)state;
    bl_dc_options o;
    bl_dc_defaults(&o);
    assert_int_equal(bl_dc_horizon(&o), 144);
    int labels[3] = {0}, delays[129] = {0};
    for (uint32_t k = 0; k < 3000; k++) {
        bl_dc_world w;
        bl_dc_world_draw(&o, bl_seed_derive(5, 0, BL_SEED_WORLD, 0, k), &w);
        assert_true(w.label == 1 || w.label == 2);
        labels[w.label]++;
        delays[w.delay]++;
        assert_int_equal(w.length, 8 + w.delay + 8);
        assert_int_equal(w.response_start, 8 + w.delay);
    }
    assert_true(labels[1] > 1350 && labels[2] > 1350);
    assert_true(delays[8] > 900 && delays[32] > 900 && delays[128] > 900);
    bl_dc_world w = {.label = 2, .delay = 8, .length = 24, .response_start = 16, .response_end = 24};
    double u[3];
    bl_dc_stimulus(&o, &w, 0, u);
    assert_true(u[0] == 0 && u[1] == 1 && u[2] == 0);
    bl_dc_stimulus(&o, &w, 7, u);
    assert_true(u[1] == 1);
    bl_dc_stimulus(&o, &w, 8, u);
    assert_true(u[0] == 0 && u[1] == 0);
    o.cue_mode = BL_CUE_PERSISTENT;
    bl_dc_stimulus(&o, &w, 23, u);
    assert_true(u[1] == 1);
    bl_dc_stimulus(&o, &w, 24, u);
    assert_true(u[1] == 0);
    o.cue_mode = BL_CUE_HIDDEN;
    bl_dc_stimulus(&o, &w, 0, u);
    assert_true(u[0] == 0 && u[1] == 0);
    bl_error err = {0};
    o.n_delays = 2;
    o.delays[1] = o.delays[0];
    assert_int_equal(bl_dc_validate(&o, &err), BL_ERR_INVALID);
}

static void test_scoring(void **state)
{
    (void)state;
    bl_dc_world w = {.label = 2, .delay = 2, .length = 6, .response_start = 4, .response_end = 6};
    bl_dc_score s;
    bl_dc_score_init(&s);
    const double zero[2] = {0, 0}, left[2] = {1, 0}, right[2] = {0.25, 0.75}, bad[2] = {1.5, 0};
    for (uint32_t t = 0; t < 4; t++)
        assert_int_equal(bl_dc_score_tick(&s, &w, t, left), 0); /* before the window: ignored */
    assert_int_equal(bl_dc_score_tick(&s, &w, 4, right), 0);
    assert_int_equal(bl_dc_score_tick(&s, &w, 5, zero), 1);
    assert_true(s.evidence[0] == 0.25 && s.evidence[1] == 0.75);
    assert_int_equal(s.decision, 2);
    assert_int_equal(s.tie, 0);
    assert_int_equal(s.outcome, 1);
    /* a tie goes to 1 and is counted */
    bl_dc_score_init(&s);
    for (uint32_t t = 0; t < 6; t++)
        bl_dc_score_tick(&s, &w, t, zero);
    assert_true(s.done && s.decision == 1 && s.tie == 1 && s.outcome == 0);
    /* an effector outside [0, 1] fails the trial */
    bl_dc_score_init(&s);
    assert_int_equal(bl_dc_score_tick(&s, &w, 0, bad), 1);
    assert_true(s.failed && !s.done);
}

static void test_controls(void **state)
{
    (void)state;
    bl_dc_options o;
    bl_dc_defaults(&o);
    for (int mode = 0; mode < 3; mode++) {
        o.cue_mode = (bl_cue_mode)mode;
        int correct[5] = {0}, heads = 0;
        for (uint32_t k = 0; k < 400; k++) {
            bl_dc_world w;
            bl_dc_world_draw(&o, bl_seed_derive(9, 0, BL_SEED_WORLD, 0, k), &w);
            for (int c = 1; c <= 4; c++) {
                bl_dc_control ctl;
                bl_dc_control_init(&ctl, (bl_controller)c, bl_seed_derive(9, 0, BL_SEED_CONTROL, 0, k));
                heads += c == BL_CTRL_REFERENCE_NULL && ctl.coin == 2;
                bl_dc_score s;
                bl_dc_score_init(&s);
                for (uint32_t t = 0; t < w.length; t++) {
                    double obs[3], eff[2];
                    bl_dc_stimulus(&o, &w, t, obs);
                    bl_dc_control_tick(&ctl, obs, eff);
                    if (bl_dc_score_tick(&s, &w, t, eff))
                        break;
                }
                assert_true(s.done && !s.tie);
                correct[c] += s.outcome;
            }
        }
        if (mode != BL_CUE_HIDDEN)
            assert_int_equal(correct[BL_CTRL_ORACLE], 400);
        else
            assert_int_equal(correct[BL_CTRL_ORACLE], correct[BL_CTRL_CONSTANT_LEFT]); /* sees nothing: answers 1 */
        assert_int_equal(correct[BL_CTRL_CONSTANT_LEFT] + correct[BL_CTRL_CONSTANT_RIGHT], 400);
        assert_true(correct[BL_CTRL_REFERENCE_NULL] > 150 && correct[BL_CTRL_REFERENCE_NULL] < 250);
        assert_true(heads > 150 && heads < 250);
    }
}

static const char *const GOOD =
    HEADER "question = \"q\"\n"
    "[evaluation]\nblocks = 3\ntrials_per_block = 4\nroot_seed = 77\nconstruction_scope = \"%s\"\n"
    "[execution]\nthreads = 1\nbatch_size = 5\n"
    "[[targets]]\nid = \"fal\"\n[targets.composition]\ncount = 40\n"
    "[targets.composition.node]\nkind = \"falandays\"\nparameters = { drive = \"oosawa\", membrane_noise = 0.3, "
    "noise_gain = 0.1 }\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n[targets.composition.task.options]\ndelays = [2, 5, 9]\n"
    "[[targets]]\nid = \"sorn\"\n[targets.composition]\ncount = 50\ninput_gain = 2.0\n"
    "[targets.composition.node]\nkind = \"sorn\"\nparameters = { eta_stdp = 0.01, fast_inhibition = true }\n"
    "[targets.composition.task.options]\ndelays = [2, 5, 9]\ncue_mode = \"persistent\"\n"
    "[[targets.interventions]]\ntick = 6\nverb = \"freeze_weights\"\n"
    "[[targets]]\nid = \"oracle\"\ncontroller = \"oracle\"\n[targets.composition.task.options]\ndelays = [2, 5, 9]\n"
    "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
    "[targets.composition.task.options]\ndelays = [2, 5, 9]\n";

static const char *good_plan(const char *name, const char *scope)
{
    static char text[4096];
    snprintf(text, sizeof text, GOOD, scope);
    return write_plan(name, text);
}

static void test_plan_resolves(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_plan *a, *b;
    assert_int_equal(bl_res_plan_load(good_plan("good", "block"), &a, &err), BL_OK);
    assert_int_equal(a->n_targets, 4);
    assert_int_equal(a->targets[0].horizon, 8 + 9 + 8);
    assert_true(a->targets[0].node.oosawa && a->targets[0].node.membrane_noise == 0.3);
    assert_true(a->targets[1].node.kind == BL_RES_SORN && a->targets[1].node.fast_inhibition);
    assert_int_equal(a->targets[1].n_interventions, 1);
    assert_int_equal(a->targets[2].controller, BL_CTRL_ORACLE);
    assert_int_equal(a->scope, BL_SCOPE_BLOCK);
    assert_non_null(strstr(bl_res_plan_json(a), "\"partition_word\""));
    assert_int_equal(strlen(bl_res_plan_hash(a)), 64);
    /* the same plan written differently (key order, spacing) has the same hash */
    char text[4096], other[4200];
    snprintf(text, sizeof text, GOOD, "block");
    /* [execution] moved to the end, "blocks = 3" spaced differently, a comment */
    char *ex = strstr(text, "[execution]"), *tg = strstr(text, "[[targets]]");
    char *bl = strstr(text, "blocks = 3\n");
    snprintf(other, sizeof other, "# same plan\n%.*sblocks   =   3 # three\n%.*s%s%.*s", (int)(bl - text), text,
             (int)(ex - bl - 11), bl + 11, tg, (int)(tg - ex), ex);
    assert_int_equal(bl_res_plan_load(write_plan("good2", other), &b, &err), BL_OK);
    assert_string_equal(bl_res_plan_hash(a), bl_res_plan_hash(b));
    bl_res_plan_destroy(b);
    assert_int_equal(bl_res_plan_load(good_plan("good3", "trial"), &b, &err), BL_OK);
    assert_string_not_equal(bl_res_plan_hash(a), bl_res_plan_hash(b));
    bl_res_plan_destroy(b);
    bl_res_plan_destroy(a);
}

static void expect_plan_error(const char *name, const char *body, const char *needle)
{
    char text[4096];
    snprintf(text, sizeof text, HEADER "%s", body);
    bl_error err = {0};
    bl_res_plan *p = NULL;
    const char *path = write_plan(name, text);
    assert_int_not_equal(bl_res_plan_load(path, &p, &err), BL_OK);
    assert_null(p);
    if (!strstr(err.message, needle) || !strstr(err.message, name))
        fail_msg("expected '%s' and the file name in: %s", needle, err.message);
}

#define EV "[evaluation]\nroot_seed = 1\n"
#define T1 "[[targets]]\nid = \"a\"\n"

static void test_plan_errors(void **state)
{
    (void)state;
    expect_plan_error("nokeys", T1, "evaluation");
    expect_plan_error("unknown_top", EV T1 "colour = 1\n", "colour: unknown key");
    expect_plan_error("unknown_eval", "[evaluation]\nroot_seed = 1\nblock = 2\n" T1, "evaluation.block: unknown key");
    expect_plan_error("seed_type", "[evaluation]\nroot_seed = \"x\"\n" T1, "evaluation.root_seed: expected an integer");
    expect_plan_error("seed_neg", "[evaluation]\nroot_seed = -1\n" T1, "evaluation.root_seed");
    expect_plan_error("blocks0", "[evaluation]\nroot_seed = 1\nblocks = 0\n" T1, "evaluation.blocks");
    expect_plan_error("warmup", "[evaluation]\nroot_seed = 1\nwarmup = 3\n" T1, "warmup = 0");
    expect_plan_error("scope", "[evaluation]\nroot_seed = 1\nconstruction_scope = \"cohort\"\n" T1,
                      "evaluation.construction_scope");
    expect_plan_error("f16", EV "[numerics]\ndtype = \"float16\"\n" T1, "numerics.dtype");
    expect_plan_error("f32tiny", EV "[numerics]\ndtype = \"float32\"\n" T1
                      "[targets.composition.node]\nparameters = { targ_min = 1e-50 }\n", "targ_min");
    expect_plan_error("fast", EV "[numerics]\nfast_math = true\n" T1, "fast-math");
    expect_plan_error("rng", EV "[numerics]\nrng = \"mersenne\"\n" T1, "numerics.rng");
    expect_plan_error("notargets", EV, "targets");
    expect_plan_error("dupid", EV T1 T1, "repeats targets[0].id");
    expect_plan_error("badid", EV "[[targets]]\nid = \"a b\"\n", "targets[0].id");
    expect_plan_error("ctrl", EV T1 "controller = \"bag\"\n", "not a control defined for delayed_cue");
    expect_plan_error("ctrl2", EV T1 "controller = \"psychic\"\n", "targets[0].controller");
    expect_plan_error("count", EV T1 "[targets.composition]\ncount = 0\n", "targets[0].composition.count");
    expect_plan_error("gain", EV T1 "[targets.composition]\ninput_gain = -1\n", "input_gain");
    expect_plan_error("node", EV T1 "[targets.composition.node]\nkind = \"lsm\"\n", "targets[0].composition.node.kind");
    expect_plan_error("param", EV T1 "[targets.composition.node]\nparameters = { p_ee = 0.1 }\n",
                      "targets[0].composition.node.parameters.p_ee");
    expect_plan_error("parambool", EV T1 "[targets.composition.node]\nparameters = { rectify = 1 }\n",
                      "expected a boolean");
    expect_plan_error("paramrange", EV T1 "[targets.composition.node]\nparameters = { leak = 2 }\n", "leak");
    expect_plan_error("preset", EV T1 "[targets.composition.node]\nkind = \"sorn\"\npreset = \"x\"\n", "preset");
    expect_plan_error("task", EV T1 "[targets.composition.task]\nkind = \"snake\"\n", "not a task");
    expect_plan_error("taskopt", EV T1 "[targets.composition.task]\nkind = \"pong\"\noptions = { delays = [1] }\n",
                      "not an option of pong");
    expect_plan_error("riopt", EV T1 "[targets.composition.task]\nkind = \"recall_interference\"\n"
                      "options = { delay = 8 }\n", "delay >= 32");
    expect_plan_error("eaopt", EV T1 "[targets.composition.task]\nkind = \"evidence_accumulation\"\n"
                      "options = { pulse_count = 5 }\n", "pulse_count");
    expect_plan_error("raopt", EV T1 "[targets.composition.task]\nkind = \"reversal_adaptation\"\n"
                      "options = { rounds = 48, reversal_range = [32, 40] }\n", "sixteen");
    expect_plan_error("warmup_ep", "[evaluation]\nroot_seed = 1\nwarmup = 3\n" T1
                      "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n", "warmup = 0");
    expect_plan_error("mode", EV T1 "[targets.composition.task.options]\ncue_mode = \"loud\"\n", "cue_mode");
    expect_plan_error("delays", EV T1 "[targets.composition.task.options]\ndelays = [8, 8]\n", "delays[1]");
    expect_plan_error("delays0", EV T1 "[targets.composition.task.options]\ndelays = []\n", "delays");
    expect_plan_error("cue0", EV T1 "[targets.composition.task.options]\ncue_ticks = 0\n", "cue_ticks");
    expect_plan_error("horizon", "[evaluation]\nroot_seed = 1\nhorizon = 100\n" T1, "entire episode");
    expect_plan_error("verb", EV T1 "[[targets.interventions]]\ntick = 1\nverb = \"melt\"\n", "not an intervention");
    expect_plan_error("tick", EV T1 "[[targets.interventions]]\ntick = 1000\nverb = \"freeze_weights\"\n", "tick");
    expect_plan_error("ivctl", EV T1 "controller = \"oracle\"\n[[targets.interventions]]\ntick = 1\nverb = "
                      "\"freeze_weights\"\n", "act on a reservoir");
    expect_plan_error("evidence", EV T1 "evidence = \"confirmed\"\n", "evidence");
    char text[256];
    snprintf(text, sizeof text, "format = \"brainlesslab-plan\"\nformat_version = 3\nid = \"t\"\noperation = \"profile\"\n");
    bl_error err = {0};
    bl_res_plan *p;
    assert_int_equal(bl_res_plan_load(write_plan("v3", text), &p, &err), BL_ERR_UNSUPPORTED);
    assert_int_equal(bl_res_plan_load("/nonexistent.toml", &p, &err), BL_ERR_IO);
}

static void same_results(const bl_res_evaluation *a, const bl_res_evaluation *b)
{
    assert_int_equal(bl_res_evaluation_n_trials(a), bl_res_evaluation_n_trials(b));
    for (size_t i = 0; i < bl_res_evaluation_n_trials(a); i++) {
        const bl_res_trial *x = bl_res_evaluation_trial(a, i), *y = bl_res_evaluation_trial(b, i);
        assert_memory_equal(&x->score, &y->score, sizeof x->score);
        assert_memory_equal(&x->world, &y->world, sizeof x->world);
        assert_int_equal(x->status, y->status);
        assert_int_equal(x->ticks, y->ticks);
    }
    for (size_t t = 0; t < 4; t++) {
        const bl_res_summary *x = bl_res_evaluation_summary(a, t), *y = bl_res_evaluation_summary(b, t);
        assert_memory_equal(x, y, sizeof *x);
    }
}

static void test_evaluation(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_plan *p;
    assert_int_equal(bl_res_plan_load(good_plan("eval", "block"), &p, &err), BL_OK);
    bl_res_evaluation *a, *b, *c;
    assert_int_equal(bl_res_evaluate(p, 1, 1, &a, &err), BL_OK);
    assert_int_equal(bl_res_evaluate(p, 3, 5, &b, &err), BL_OK);
    assert_int_equal(bl_res_evaluate(p, 2, 64, &c, &err), BL_OK);
    same_results(a, b);
    same_results(a, c);
    assert_int_equal(bl_res_evaluation_n_trials(a), 4 * 3 * 4);
    for (size_t i = 0; i < bl_res_evaluation_n_trials(a); i++) {
        const bl_res_trial *t = bl_res_evaluation_trial(a, i);
        assert_int_equal(t->status, BL_TRIAL_COMPLETED);
        assert_int_equal(t->ticks, t->world.length);
        /* block scope: one wiring per block, shared by its trials */
        const bl_res_trial *first = bl_res_evaluation_trial(a, i - i % 4);
        assert_true(t->seed_construction == first->seed_construction);
        /* every target meets the same worlds */
        const bl_res_trial *same = bl_res_evaluation_trial(a, i % 12);
        assert_true(t->seed_world == same->seed_world && t->world.label == same->world.label);
    }
    const bl_res_summary *oracle = bl_res_evaluation_summary(a, 2);
    assert_true(oracle->accuracy == 1.0 && oracle->completed == 12 && oracle->failed == 0 && oracle->blocks == 3);
    assert_true(oracle->low == 1.0 && oracle->high == 1.0);
    const bl_res_summary *null = bl_res_evaluation_summary(a, 3);
    assert_true(null->accuracy >= 0.0 && null->accuracy <= 1.0 && null->low <= null->accuracy &&
                null->accuracy <= null->high);
    const double *bm = bl_res_evaluation_block_means(a, 2);
    assert_true(bm[0] == 1.0 && bm[1] == 1.0 && bm[2] == 1.0);
    bl_res_evaluation_destroy(a);
    bl_res_evaluation_destroy(b);
    bl_res_evaluation_destroy(c);
    bl_res_plan_destroy(p);
    /* trial scope: every trial its own wiring; evaluation scope: one for all */
    assert_int_equal(bl_res_plan_load(good_plan("eval2", "trial"), &p, &err), BL_OK);
    assert_int_equal(bl_res_evaluate(p, 2, 7, &a, &err), BL_OK);
    assert_true(bl_res_evaluation_trial(a, 0)->seed_construction != bl_res_evaluation_trial(a, 1)->seed_construction);
    bl_res_evaluation_destroy(a);
    bl_res_plan_destroy(p);
    assert_int_equal(bl_res_plan_load(good_plan("eval3", "evaluation"), &p, &err), BL_OK);
    assert_int_equal(bl_res_evaluate(p, 2, 7, &a, &err), BL_OK);
    assert_true(bl_res_evaluation_trial(a, 0)->seed_construction == bl_res_evaluation_trial(a, 11)->seed_construction);
    bl_res_evaluation_destroy(a);
    bl_res_plan_destroy(p);
}

static void test_run_record(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_plan *p;
    assert_int_equal(bl_res_plan_load(good_plan("rec", "block"), &p, &err), BL_OK);
    char root[400];
    snprintf(root, sizeof root, "%s/records", tmpdir);
    bl_experiment_options opt = {.root = root, .threads = 2, .batch = 3};
    bl_res_run *run;
    assert_int_equal(bl_res_run_plan(p, &opt, &run, &err), BL_OK);
    size_t artifacts = 0;
    assert_int_equal(bl_record_verify(bl_res_run_record_dir(run), NULL, &artifacts, &err), BL_OK);
    assert_int_equal(artifacts, 3); /* trials.csv, outcomes.npy, summary.json */
    char path[4400];
    snprintf(path, sizeof path, "%s/trials.csv", bl_res_run_record_dir(run));
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    assert_int_equal(lines, 1 + 4 * 3 * 4);
    FILE *out = tmpfile();
    bl_res_run_print(run, out);
    fclose(out);
    bl_res_run_destroy(run);
    bl_res_plan_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_world_and_stimulus),
        cmocka_unit_test(test_scoring),
        cmocka_unit_test(test_controls),
        cmocka_unit_test(test_plan_resolves),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_evaluation),
        cmocka_unit_test(test_run_record),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
