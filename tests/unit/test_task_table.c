/* Unit tests for the task table (src/tasks/): every row is complete and
 * named; options by name; each control behaves as its definition says on
 * hand-made worlds; evaluations of every task (reservoir and controls) do not
 * depend on batch size or threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/task.h"
#include "plan/plan_reservoir.h"
#include "reservoir/res_impl.h"
#include "tasks/task_ops.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("task_table")

static void test_table(void **state)
{
    (void)state;
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        const bl_task_ops *ops = bl_task_ops_of((bl_task_kind)k);
        assert_int_equal(ops->kind, k);
        assert_non_null(ops->world);
        assert_non_null(ops->encode);
        assert_non_null(ops->advance);
        bl_task_kind back;
        assert_int_equal(bl_task_parse(ops->name, &back), 0);
        assert_int_equal(back, k);
        bl_task_options o;
        bl_task_defaults((bl_task_kind)k, &o);
        bl_error err = {0};
        assert_int_equal(bl_task_validate(&o, &err), BL_OK);
        bl_task_definition d;
        bl_task_definition_of(&o, &d);
        assert_true(d.n_inputs >= 3 && d.n_inputs <= BL_TASK_MAX_INPUTS && d.default_horizon > 0);
        assert_true(bl_task_controller_allowed((bl_task_kind)k, BL_CTRL_RESERVOIR));
        assert_true(bl_task_controller_allowed((bl_task_kind)k, BL_CTRL_REFERENCE_NULL));
        for (const char *const *n = bl_task_option_names((bl_task_kind)k); *n; n++) {
            char text[4096];
            assert_int_equal(bl_task_option_json(&o, *n, text, sizeof text), 0);
        }
    }
    assert_false(bl_task_controller_allowed(BL_TASK_DELAYED_CUE, BL_CTRL_BAG));
    assert_true(bl_task_controller_allowed(BL_TASK_TEMPORAL_ORDER, BL_CTRL_BAG));
    assert_false(bl_task_controller_allowed(BL_TASK_PONG, BL_CTRL_MEMORYLESS));
    assert_true(bl_task_controller_allowed(BL_TASK_REVERSAL_ADAPTATION, BL_CTRL_FIXED_MAPPING));
    /* options by name */
    bl_task_options o;
    bl_task_defaults(BL_TASK_RECALL_INTERFERENCE, &o);
    bl_error err = {0};
    bl_task_value v = {.type = BL_TV_STRING, .string = "opposite"};
    assert_int_equal(bl_task_set_option(&o, "distractor_mode", &v, &err), BL_OK);
    assert_int_equal(o.distractor_mode, BL_DISTRACT_OPPOSITE);
    v.string = "loud";
    assert_int_equal(bl_task_set_option(&o, "distractor_mode", &v, &err), BL_ERR_INVALID);
    bl_task_value num = {.type = BL_TV_NUMBER, .number = 8, .integer = 1};
    assert_int_equal(bl_task_set_option(&o, "gap", &num, &err), BL_ERR_INVALID); /* not this task's */
    assert_non_null(strstr(err.message, "not an option of recall_interference"));
}

/* A hand-made episode: `rows` ticks of `width` channels, one response window. */
typedef struct handmade {
    bl_task_world w;
    bl_task_state s;
} handmade;

static void make(handmade *h, bl_task_kind kind, uint32_t width, uint32_t length, const char *const *rows,
                 uint32_t start, uint32_t label)
{
    memset(h, 0, sizeof *h);
    h->w.kind = kind;
    bl_error err = {0};
    assert_int_equal(bl_task_world_alloc(&h->w, length, width, 1, &err), BL_OK);
    for (uint32_t t = 0; t < length; t++)
        for (uint32_t c = 0; c < width; c++)
            bl_task_stim(&h->w, t)[c] = rows[t][c] == '1';
    h->w.starts[0] = start;
    h->w.ends[0] = length;
    h->w.labels[0] = label;
    assert_int_equal(bl_task_state_init(&h->w, &h->s, &err), BL_OK);
}

/* The control's choice (1 or 2) at the last tick of the episode. */
static int final_choice(bl_task_kind kind, bl_controller ctl, uint32_t width, uint32_t length,
                        const char *const *rows)
{
    handmade h;
    make(&h, kind, width, length, rows, length - 1, 1);
    bl_task_options o;
    bl_task_defaults(kind, &o);
    bl_task_control c;
    bl_task_control_init(&c, ctl, &o, 1);
    double obs[BL_TASK_MAX_INPUTS], eff[2] = {0, 0};
    for (uint32_t t = 0; t < length; t++) {
        bl_task_episode_encode(&h.w, &h.s, 1, obs);
        bl_task_control_step(&c, obs, width, t, h.s.round, &h.w, &h.s, eff);
        bl_task_accumulate(&h.w, &h.s, eff, 1);
        bl_task_advance(&h.w, &h.s, 0);
    }
    assert_true(eff[0] + eff[1] == 1.0);
    bl_task_state_free(&h.s);
    bl_task_world_free(&h.w);
    return eff[1] == 1.0 ? 2 : 1;
}

static void test_controls_handmade(void **state)
{
    (void)state;
    /* delayed_cue: cue right, then nothing */
    const char *dc[] = {"010", "000", "000", "001"};
    assert_int_equal(final_choice(BL_TASK_DELAYED_CUE, BL_CTRL_ORACLE, 3, 4, dc), 2);
    assert_int_equal(final_choice(BL_TASK_DELAYED_CUE, BL_CTRL_LAST, 3, 4, dc), 2);
    assert_int_equal(final_choice(BL_TASK_DELAYED_CUE, BL_CTRL_MEMORYLESS, 3, 4, dc), 1); /* sees nothing now */
    assert_int_equal(final_choice(BL_TASK_DELAYED_CUE, BL_CTRL_CONSTANT_RIGHT, 3, 4, dc), 2);
    /* recall_interference: cue left, a right distractor: the oracle keeps the first, last takes the distractor */
    const char *ri[] = {"100", "000", "010", "000", "001"};
    assert_int_equal(final_choice(BL_TASK_RECALL_INTERFERENCE, BL_CTRL_ORACLE, 3, 5, ri), 1);
    assert_int_equal(final_choice(BL_TASK_RECALL_INTERFERENCE, BL_CTRL_LAST, 3, 5, ri), 2);
    /* delayed_xor: a = 1, b = 2 -> differ -> 2; memoryless sees nothing at the end -> same -> 1; last = b */
    const char *xr[] = {"10000", "00000", "00010", "00001"};
    assert_int_equal(final_choice(BL_TASK_DELAYED_XOR, BL_CTRL_ORACLE, 5, 4, xr), 2);
    assert_int_equal(final_choice(BL_TASK_DELAYED_XOR, BL_CTRL_MEMORYLESS, 5, 4, xr), 1);
    assert_int_equal(final_choice(BL_TASK_DELAYED_XOR, BL_CTRL_LAST, 5, 4, xr), 2);
    const char *xs[] = {"01000", "00000", "00010", "00001"}; /* a = 2, b = 2 -> same -> 1 */
    assert_int_equal(final_choice(BL_TASK_DELAYED_XOR, BL_CTRL_ORACLE, 5, 4, xs), 1);
    /* evidence_accumulation: L R R R: majority right; first left; last right */
    const char *ea[] = {"100", "010", "010", "010", "001"};
    assert_int_equal(final_choice(BL_TASK_EVIDENCE_ACCUMULATION, BL_CTRL_ORACLE, 3, 5, ea), 2);
    assert_int_equal(final_choice(BL_TASK_EVIDENCE_ACCUMULATION, BL_CTRL_FIRST, 3, 5, ea), 1);
    assert_int_equal(final_choice(BL_TASK_EVIDENCE_ACCUMULATION, BL_CTRL_LAST, 3, 5, ea), 2);
    /* context_integration: context 2; stream 1 says left twice, stream 2 says right twice */
    const char *ci[] = {"0100000", "0010010", "0010010", "0000001"};
    assert_int_equal(final_choice(BL_TASK_CONTEXT_INTEGRATION, BL_CTRL_ORACLE, 7, 4, ci), 2);
    assert_int_equal(final_choice(BL_TASK_CONTEXT_INTEGRATION, BL_CTRL_CONTEXT_BLIND, 7, 4, ci), 1);
    assert_int_equal(final_choice(BL_TASK_CONTEXT_INTEGRATION, BL_CTRL_IRRELEVANT, 7, 4, ci), 1);
    /* temporal_order: right first, then left, terminal: oracle 2; bag ties -> 1; last reset by the terminal */
    const char *to[] = {"0100", "1000", "0010", "0001"};
    assert_int_equal(final_choice(BL_TASK_TEMPORAL_ORDER, BL_CTRL_ORACLE, 4, 4, to), 2);
    assert_int_equal(final_choice(BL_TASK_TEMPORAL_ORDER, BL_CTRL_BAG, 4, 4, to), 1);
    assert_int_equal(final_choice(BL_TASK_TEMPORAL_ORDER, BL_CTRL_LAST, 4, 4, to), 1);
    const char *tb[] = {"0100", "0100", "1000", "0010", "0001"}; /* two rights, one left: bag says 2 */
    assert_int_equal(final_choice(BL_TASK_TEMPORAL_ORDER, BL_CTRL_BAG, 4, 5, tb), 2);
}

/* reversal_adaptation, by hand: two rounds (cue, response, feedback), both cues left, both answers right
 * (a reversed mapping). The oracle answers left, sees "wrong" in the feedback, and reverses; fixed_mapping
 * never does; the feedback channels come from the runner's decisions. */
static void test_reversal_handmade(void **state)
{
    (void)state;
    for (int policy = 0; policy < 2; policy++) {
        handmade h;
        memset(&h, 0, sizeof h);
        h.w.kind = BL_TASK_REVERSAL_ADAPTATION;
        bl_error err = {0};
        assert_int_equal(bl_task_world_alloc(&h.w, 6, 8, 2, &err), BL_OK);
        for (uint32_t r = 0; r < 2; r++) {
            bl_task_mark(&h.w, 3 * r, 3 * r + 2, 0, 1.0); /* cue left, ticks 0-1 */
            bl_task_mark(&h.w, 3 * r + 1, 3 * r + 2, 2, 1.0); /* response indicator, tick 1 */
            bl_task_mark(&h.w, 3 * r + 2, 3 * r + 3, 3, 1.0); /* feedback, tick 2 */
            h.w.starts[r] = 3 * r + 1;
            h.w.ends[r] = 3 * r + 2;
            h.w.labels[r] = 2;
        }
        h.w.feedback = 1;
        h.w.reversal = 1;
        assert_int_equal(bl_task_state_init(&h.w, &h.s, &err), BL_OK);
        bl_task_options o;
        bl_task_defaults(BL_TASK_REVERSAL_ADAPTATION, &o);
        bl_task_control c;
        bl_task_control_init(&c, policy ? BL_CTRL_FIXED_MAPPING : BL_CTRL_ORACLE, &o, 1);
        double obs[8], eff[2];
        for (uint32_t t = 0; t < 6; t++) {
            bl_task_episode_encode(&h.w, &h.s, 1, obs);
            if (t == 2) /* feedback of round 0: chose left (4), wrong (7) */
                assert_true(obs[3] == 1 && obs[4] == 1 && obs[5] == 0 && obs[6] == 0 && obs[7] == 1);
            bl_task_control_step(&c, obs, 8, t, h.s.round, &h.w, &h.s, eff);
            bl_task_accumulate(&h.w, &h.s, eff, 1);
            bl_task_advance(&h.w, &h.s, 0);
        }
        assert_int_equal(h.s.decisions[0], 1);
        assert_int_equal(h.s.decisions[1], policy ? 1 : 2);
        bl_task_state_free(&h.s);
        bl_task_world_free(&h.w);
    }
}

/* The reference null: one coin per round (episode tasks), continuous steering (tracking). */
static void test_reference_null(void **state)
{
    (void)state;
    bl_task_options o;
    bl_task_defaults(BL_TASK_DELAYED_XOR, &o);
    int right = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        bl_task_trace *t = NULL;
        bl_error err = {0};
        assert_int_equal(bl_task_trace_run(&o, BL_CTRL_REFERENCE_NULL, 3, seed, 0, 0, NULL, 0, &t, &err), BL_OK);
        for (uint32_t k = 1; k < t->ticks; k++) /* the same coin all episode */
            assert_true(t->eff[2 * k] == t->eff[0] && t->eff[2 * k + 1] == t->eff[1]);
        right += t->eff[1] == 1.0;
        bl_task_trace_destroy(t);
    }
    assert_true(right > 160 && right < 240);
    bl_task_defaults(BL_TASK_TRACKING, &o);
    bl_task_trace *t = NULL;
    bl_error err = {0};
    assert_int_equal(bl_task_trace_run(&o, BL_CTRL_REFERENCE_NULL, 3, 9, 100, 0, NULL, 0, &t, &err), BL_OK);
    for (uint32_t k = 0; k < t->ticks; k++)
        assert_true(t->eff[2 * k] * t->eff[2 * k + 1] == 0.0 && t->eff[2 * k] <= 1 && t->eff[2 * k + 1] <= 1);
    bl_task_trace_destroy(t);
}

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

/* Every task under a reservoir (both kinds) and a control: batch size and
 * threads change nothing. */
static void test_evaluation_every_task(void **state)
{
    (void)state;
    static const char *const tasks[] = {"recall_interference", "delayed_xor", "evidence_accumulation",
                                        "context_integration", "temporal_order", "tracking", "pong",
                                        "cartpole_plank_easy"};
    for (size_t k = 0; k < sizeof tasks / sizeof *tasks; k++) {
        const int continuing = !strcmp(tasks[k], "tracking") || !strcmp(tasks[k], "pong");
        char text[2048];
        snprintf(text, sizeof text,
                 "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"t\"\noperation = \"profile\"\n"
                 "diagnostic = true\n[evaluation]\nroot_seed = 4\nblocks = 2\ntrials_per_block = 3\n%s"
                 "[[targets]]\nid = \"f\"\n[targets.composition]\ncount = 24\ninput_gain = 2.0\n"
                 "[targets.composition.node]\nkind = \"falandays\"\nparameters = { drive = \"oosawa\", "
                 "membrane_noise = 0.2 }\n[targets.composition.task]\nkind = \"%s\"\n"
                 "[[targets]]\nid = \"s\"\n[targets.composition]\ncount = 30\n[targets.composition.node]\n"
                 "kind = \"sorn\"\n[targets.composition.task]\nkind = \"%s\"\n"
                 "[[targets]]\nid = \"o\"\ncontroller = \"oracle\"\n[targets.composition.task]\nkind = \"%s\"\n",
                 continuing ? "horizon = 300\nwarmup = 50\n" : !strcmp(tasks[k], "cartpole_plank_easy") ?
                 "horizon = 200\n" : "", tasks[k], tasks[k], tasks[k]);
        bl_res_plan *p = NULL;
        bl_error err = {0};
        if (bl_res_plan_load(write_plan(tasks[k], text), &p, &err))
            fail_msg("%s: %s", tasks[k], err.message);
        bl_res_evaluation *a = NULL, *b = NULL;
        assert_int_equal(bl_res_evaluate(p, 1, 1, &a, &err), BL_OK);
        assert_int_equal(bl_res_evaluate(p, 2, 4, &b, &err), BL_OK);
        assert_int_equal(bl_res_evaluation_n_trials(a), 18);
        for (size_t i = 0; i < bl_res_evaluation_n_trials(a); i++) {
            const bl_res_trial *x = bl_res_evaluation_trial(a, i), *y = bl_res_evaluation_trial(b, i);
            assert_memory_equal(&x->score, &y->score, sizeof x->score);
            assert_int_equal(x->status, BL_TRIAL_COMPLETED);
        }
        bl_res_evaluation_destroy(a);
        bl_res_evaluation_destroy(b);
        bl_res_plan_destroy(p);
    }
}

/* Falandays construction options: weight_init_mode, weight_init_std, repair_masks, input_link_p. */
static void test_construction_options(void **state)
{
    (void)state;
    bl_res_params p;
    bl_error err = {0};
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    assert_int_equal(bl_res_params_set_string(&p, "weight_init_mode", "pong_mixed", &err), BL_OK);
    bl_res_state *s = NULL;
    assert_int_equal(bl_res_state_construct(&p, 200, 3, 2, 11, &s, &err), BL_OK);
    size_t neg = 0, links = 0;
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint64_t k = s->row_start[i]; k < s->row_start[i] + s->row_len[i]; k++, links++)
            neg += s->w[k] < -0.5; /* inhibitory links: -1 + 0.1 N */
    assert_true(links > 3000 && neg > links / 6 && neg < links / 3);
    bl_res_state_destroy(s);
    assert_int_equal(bl_res_params_set_string(&p, "weight_init_mode", "legacy_normal", &err), BL_OK);
    assert_int_equal(bl_res_params_set(&p, "weight_init_std", 0.0, &err), BL_OK);
    assert_int_equal(bl_res_state_construct(&p, 50, 3, 2, 11, &s, &err), BL_OK);
    for (uint32_t i = 0; i < s->rows; i++)
        for (uint64_t k = s->row_start[i]; k < s->row_start[i] + s->row_len[i]; k++)
            assert_true(s->w[k] == 0.0);
    bl_res_state_destroy(s);
    assert_int_equal(bl_res_params_set_string(&p, "weight_init_mode", "loud", &err), BL_ERR_INVALID);
    /* repair: sparse links leave units and pools empty unless repaired */
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    assert_int_equal(bl_res_params_set(&p, "link_p", 0.01, &err), BL_OK);
    assert_int_equal(bl_res_params_set(&p, "repair_masks", 1, &err), BL_OK);
    assert_int_equal(bl_res_state_construct(&p, 40, 3, 4, 5, &s, &err), BL_OK);
    for (uint32_t i = 0; i < s->n; i++) {
        int linked = s->row_len[i] > 0;
        for (uint32_t q = 0; q < 3; q++)
            linked |= s->w_in[i * 3 + q] != 0.0;
        assert_true(linked);
    }
    for (uint32_t e = 0; e < 4; e++) {
        double pool = 0.0;
        for (uint32_t i = 0; i < s->n; i++)
            pool += s->w_out[e * s->n + i];
        assert_true(pool >= 1.0);
    }
    bl_res_state_destroy(s);
    /* input_link_p: receptor 0 always, receptor 1 never, receptor 2 with link_p */
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    const double lp[3] = {1.0, 0.0, 0.5};
    assert_int_equal(bl_res_params_set_input_link_p(&p, lp, 3, &err), BL_OK);
    assert_int_equal(bl_res_state_construct(&p, 100, 3, 2, 5, &s, &err), BL_OK);
    size_t third = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        assert_true(s->w_in[i * 3] == p.input_weight && s->w_in[i * 3 + 1] == 0.0);
        third += s->w_in[i * 3 + 2] != 0.0;
    }
    assert_true(third > 30 && third < 70);
    bl_res_state_destroy(s);
    assert_int_equal(bl_res_state_construct(&p, 100, 4, 2, 5, &s, &err), BL_ERR_INVALID); /* 3 for 4 receptors */
    const double bad[1] = {1.5};
    assert_int_equal(bl_res_params_set_input_link_p(&p, bad, 1, &err), BL_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_controls_handmade),
        cmocka_unit_test(test_reversal_handmade),
        cmocka_unit_test(test_reference_null),
        cmocka_unit_test(test_evaluation_every_task),
        cmocka_unit_test(test_construction_options),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
