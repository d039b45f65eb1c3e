/* Current injection (docs/models.md, "Current injection"): what
 * bl_stimulus_add_current refuses, the value of each kind at each step as
 * bl_eq_current_apply writes it into a network's model variable (sums,
 * windows, the neurons it leaves alone), the network's refusals (a preset, a
 * variable the model lacks), and the noise stream's draws (deterministic,
 * per neuron, standard normal in distribution). The values against Brian2:
 * tests/oracles/test_current_brian2.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/eqmodel.h"
#include "brainlesslab/stimulus.h"
#include "models/eq_current.h"

static const int32_t two[2] = {0, 1};

static bl_status add(bl_current c, bl_error *err)
{
    bl_stimulus *s = NULL;
    assert_int_equal(bl_stimulus_create(&s, NULL), BL_OK);
    bl_status st = bl_stimulus_add_current(s, two, 2, &c, err);
    if (!st)
        assert_int_equal(bl_stimulus_n_currents(s), 1);
    bl_stimulus_destroy(s);
    return st;
}

static void refusals(void **unused)
{
    (void)unused;
    bl_error e = {0};
    bl_current dc = {.kind = BL_CURRENT_DC, .variable = "I_inj", .stop_step = -1, .amplitude = 1e-9};
    assert_int_equal(add(dc, &e), BL_OK);
    bl_current c = dc;
    c.variable = NULL;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "no variable"));
    c = dc;
    c.start_step = 5;
    c.stop_step = 5;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "window"));
    c = dc;
    c.amplitude = INFINITY;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    c = dc;
    c.kind = BL_CURRENT_NOISE;
    c.sigma = -1;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    c = dc;
    c.kind = BL_CURRENT_RAMP;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "ramp"));
    double vals[2] = {1, 2};
    int64_t steps[2] = {3, 3};
    c = dc;
    c.kind = BL_CURRENT_STEP;
    c.values = vals;
    c.steps = steps;
    c.n_values = 2;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "ascending"));
    c = dc;
    c.kind = BL_CURRENT_TABLE;
    c.values = vals;
    c.n_values = 2;
    c.every_steps = 0;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    c.every_steps = 1;
    vals[1] = NAN;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    c = dc;
    c.kind = (bl_current_kind)9;
    assert_int_equal(add(c, &e), BL_ERR_INVALID);
    bl_stimulus *s = NULL;
    assert_int_equal(bl_stimulus_create(&s, NULL), BL_OK);
    const int32_t dup[2] = {1, 1};
    assert_int_equal(bl_stimulus_add_current(s, dup, 2, &dc, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "twice"));
    assert_int_equal(bl_stimulus_n_currents(s), 0);
    bl_stimulus_destroy(s);
}

/* Four neurons, no edges; a model with I_inj : amp. */
typedef struct fixture {
    bl_connectome *c;
    bl_eq_model *m;
    bl_stimulus *s;
    bl_lif_params p;
} fixture;

static void setup(fixture *f, const char *equations)
{
    memset(f, 0, sizeof *f);
    int64_t *off = calloc(5, sizeof *off);
    int32_t *tgt = malloc(sizeof *tgt), *cnt = malloc(sizeof *cnt);
    assert_int_equal(bl_connectome_adopt(4, 0, off, tgt, cnt, &f->c, NULL), BL_OK);
    bl_eq_source src = {.equations = equations, .threshold = "v > 1*volt"};
    assert_int_equal(bl_eq_model_compile(&src, 1e-4, &f->m, NULL), BL_OK);
    assert_int_equal(bl_lif_params_preset("equations", &f->p, NULL), BL_OK);
    f->p.equations = f->m;
    assert_int_equal(bl_stimulus_create(&f->s, NULL), BL_OK);
}

static void teardown(fixture *f)
{
    bl_stimulus_destroy(f->s);
    bl_eq_model_destroy(f->m);
    bl_connectome_destroy(f->c);
}

static void values_per_step(void **unused)
{
    (void)unused;
    fixture f;
    setup(&f, "dv/dt = -v/(10*ms) : volt\nI_inj : amp");
    const int32_t n01[2] = {0, 1}, n1[1] = {1}, n2[1] = {2};
    bl_current dc = {.kind = BL_CURRENT_DC, .variable = "I_inj", .start_step = 2, .stop_step = -1, .amplitude = 1.5};
    double sv[3] = {10, 20, 30};
    int64_t ss[3] = {0, 4, 6};
    bl_current st = {.kind = BL_CURRENT_STEP, .variable = "I_inj", .stop_step = 8, .values = sv, .steps = ss,
                     .n_values = 3};
    bl_current ramp = {.kind = BL_CURRENT_RAMP, .variable = "I_inj", .start_step = 1, .stop_step = 5, .from = 1,
                       .to = 3};
    assert_int_equal(bl_stimulus_add_current(f.s, n01, 2, &dc, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n1, 1, &st, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n2, 1, &ramp, NULL), BL_OK);
    bl_network *net = NULL;
    bl_error e = {0};
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 1, &net, &e), BL_OK);
    /* state: v then I_inj, 4 neurons each; neuron 3 keeps its value */
    double state[8];
    for (int i = 0; i < 8; i++)
        state[i] = -7;
    const double want[10][4] = {
        /* n0: dc from 2; n1: dc + step (10, 20 from 4, 30 from 6, off from 8); n2: ramp over [1, 5) */
        {0, 10, 0, -7},    {0, 10, 1, -7},   {1.5, 11.5, 1.5, -7}, {1.5, 11.5, 2, -7}, {1.5, 21.5, 2.5, -7},
        {1.5, 21.5, 0, -7}, {1.5, 31.5, 0, -7}, {1.5, 31.5, 0, -7},  {1.5, 1.5, 0, -7},  {1.5, 1.5, 0, -7},
    };
    for (int64_t s = 0; s < 10; s++) {
        bl_eq_current_apply(net, f.m, 0, s, state, 4);
        for (int i = 0; i < 4; i++) {
            assert_true(state[i] == -7); /* v untouched */
            if (state[4 + i] != want[s][i])
                fail_msg("step %lld neuron %d: %g, want %g", (long long)s, i, state[4 + i], want[s][i]);
        }
    }
    bl_network_destroy(net);
    teardown(&f);
}

static void table_and_noise(void **unused)
{
    (void)unused;
    fixture f;
    setup(&f, "dv/dt = -v/(10*ms) : volt\nI_inj : amp");
    const int32_t n0[1] = {0}, n123[3] = {1, 2, 3};
    double tv[2] = {4, 5};
    bl_current tab = {.kind = BL_CURRENT_TABLE, .variable = "I_inj", .start_step = 1, .stop_step = -1, .values = tv,
                      .n_values = 2, .every_steps = 3};
    bl_current noise = {.kind = BL_CURRENT_NOISE, .variable = "I_inj", .stop_step = -1, .amplitude = 2, .sigma = 0.5};
    assert_int_equal(bl_stimulus_add_current(f.s, n0, 1, &tab, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n123, 3, &noise, NULL), BL_OK);
    bl_network *net = NULL;
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 99, &net, NULL), BL_OK);
    double state[8] = {0};
    const double want0[9] = {0, 4, 4, 4, 5, 5, 5, 0, 0};
    for (int64_t s = 0; s < 9; s++) {
        bl_eq_current_apply(net, f.m, 3, s, state, 4);
        assert_true(state[4] == want0[s]);
        for (uint32_t i = 1; i < 4; i++)
            assert_true(state[4 + i] == 2 + 0.5 * bl_eq_current_normal(99, 1, 3, i, (uint64_t)s));
    }
    bl_network_destroy(net);
    teardown(&f);
}

/* A partition applies the currents of its own neurons only
 * (bl_eq_current_apply_range, src/models/eq_part.c): the ranges of any
 * split, applied one by one, write the bits the whole-network apply writes,
 * and nothing outside their range; bl_eq_current_owned names the range's
 * targets of each current. */
static void range_equals_whole(void **unused)
{
    (void)unused;
    fixture f;
    setup(&f, "dv/dt = -v/(10*ms) : volt\nI_inj : amp\nI_two : amp");
    const int32_t n013[3] = {0, 1, 3}, n12[2] = {1, 2}, n3[1] = {3};
    bl_current dc = {.kind = BL_CURRENT_DC, .variable = "I_inj", .start_step = 1, .stop_step = -1, .amplitude = 1.5};
    bl_current noise = {.kind = BL_CURRENT_NOISE, .variable = "I_inj", .stop_step = 6, .amplitude = 2, .sigma = 0.5};
    bl_current other = {.kind = BL_CURRENT_DC, .variable = "I_two", .stop_step = -1, .amplitude = -3};
    assert_int_equal(bl_stimulus_add_current(f.s, n013, 3, &dc, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n12, 2, &noise, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n3, 1, &other, NULL), BL_OK);
    bl_network *net = NULL;
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 5, &net, NULL), BL_OK);
    const int32_t *first;
    assert_int_equal(bl_eq_current_owned(net, 0, 1, 3, &first), 1);
    assert_int_equal(first[0], 1);
    assert_int_equal(bl_eq_current_owned(net, 0, 0, 4, &first), 3);
    assert_int_equal(bl_eq_current_owned(net, 1, 3, 4, &first), 0);
    assert_int_equal(bl_eq_current_owned(net, 2, 2, 4, &first), 1);
    assert_int_equal(first[0], 3);
    const int32_t splits[4][5] = {{0, 4, -1}, {0, 2, 4, -1}, {0, 1, 2, 3, 4}, {0, 3, 4, -1}};
    for (int64_t step = 0; step < 8; step++)
        for (int sp = 0; sp < 4; sp++) {
            double whole[12], part[12];
            for (int i = 0; i < 12; i++)
                whole[i] = part[i] = -7 - i;
            bl_eq_current_apply(net, f.m, 2, step, whole, 4);
            for (int q = 0; q + 1 < 5 && splits[sp][q + 1] >= 0; q++) {
                double before[12];
                memcpy(before, part, sizeof part);
                bl_eq_current_apply_range(net, f.m, 2, step, part, 4, splits[sp][q], splits[sp][q + 1]);
                for (int k = 0; k < 3; k++) /* nothing outside [lo, hi) changes */
                    for (int i = 0; i < 4; i++)
                        if (i < splits[sp][q] || i >= splits[sp][q + 1])
                            assert_memory_equal(&part[k * 4 + i], &before[k * 4 + i], sizeof(double));
            }
            assert_memory_equal(whole, part, sizeof whole);
        }
    bl_network_destroy(net);
    teardown(&f);
}

static void network_refusals(void **unused)
{
    (void)unused;
    fixture f;
    setup(&f, "dv/dt = -v/(10*ms) : volt\nI_inj : amp");
    const int32_t n0[1] = {0}, n9[1] = {9};
    bl_current dc = {.kind = BL_CURRENT_DC, .variable = "I_ext", .stop_step = -1, .amplitude = 1};
    bl_network *net = NULL;
    bl_error e = {0};
    assert_int_equal(bl_stimulus_add_current(f.s, n0, 1, &dc, NULL), BL_OK);
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 1, &net, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "'I_ext'"));
    bl_stimulus_destroy(f.s);
    /* v is a state variable, not a parameter the stimulus may set */
    assert_int_equal(bl_stimulus_create(&f.s, NULL), BL_OK);
    dc.variable = "v";
    assert_int_equal(bl_stimulus_add_current(f.s, n0, 1, &dc, NULL), BL_OK);
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 1, &net, &e), BL_ERR_INVALID);
    bl_stimulus_destroy(f.s);
    /* a neuron outside the connectome */
    assert_int_equal(bl_stimulus_create(&f.s, NULL), BL_OK);
    dc.variable = "I_inj";
    assert_int_equal(bl_stimulus_add_current(f.s, n9, 1, &dc, NULL), BL_OK);
    assert_int_equal(bl_network_create(f.c, &f.p, f.s, NULL, 0, 1, &net, &e), BL_ERR_INVALID);
    /* a preset has no variable to set */
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, NULL), BL_OK);
    bl_stimulus_destroy(f.s);
    assert_int_equal(bl_stimulus_create(&f.s, NULL), BL_OK);
    assert_int_equal(bl_stimulus_add_current(f.s, n0, 1, &dc, NULL), BL_OK);
    assert_int_equal(bl_network_create(f.c, &p, f.s, NULL, 0, 1, &net, &e), BL_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.message, "shiu2024"));
    assert_null(net);
    teardown(&f);
}

static void noise_draws(void **unused)
{
    (void)unused;
    /* Deterministic, and another draw for every counter word. */
    assert_true(bl_eq_current_normal(5, 0, 0, 1, 2) == bl_eq_current_normal(5, 0, 0, 1, 2));
    double z = bl_eq_current_normal(5, 0, 0, 1, 2);
    assert_true(z != bl_eq_current_normal(6, 0, 0, 1, 2));
    assert_true(z != bl_eq_current_normal(5, 1, 0, 1, 2));
    assert_true(z != bl_eq_current_normal(5, 0, 1, 1, 2));
    assert_true(z != bl_eq_current_normal(5, 0, 0, 2, 2));
    assert_true(z != bl_eq_current_normal(5, 0, 0, 1, 3));
    /* Standard normal in distribution: 200,000 draws, mean and variance
     * within 5 standard errors, and the tails (|z| > 3: 0.27%) present. */
    const int n = 200000;
    double sum = 0, sq = 0;
    int tails = 0;
    for (int k = 0; k < n; k++) {
        double x = bl_eq_current_normal(42, 0, (uint32_t)(k % 7), (uint32_t)(k / 7), (uint64_t)k);
        assert_true(isfinite(x));
        sum += x;
        sq += x * x;
        tails += fabs(x) > 3;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    assert_true(fabs(mean) < 5 / sqrt(n));
    assert_true(fabs(var - 1) < 5 * sqrt(2.0 / n));
    assert_true(tails > 0.0027 * n * 0.7 && tails < 0.0027 * n * 1.3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusals),
        cmocka_unit_test(values_per_step),
        cmocka_unit_test(table_and_noise),
        cmocka_unit_test(range_equals_whole),
        cmocka_unit_test(network_refusals),
        cmocka_unit_test(noise_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
