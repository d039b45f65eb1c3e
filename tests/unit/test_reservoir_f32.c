/* Unit tests of the float32 numerics of src/reservoir (bl_res_state_cast):
 * the cast (values rounded to float, overflow and non-positive thresholds
 * refused with the array/index or parameter named, widening exact), float32
 * steps computing in float (not double rounded at the end), batches of
 * float32 slots bit-identical to single runs for any thread count, one dtype
 * per batch, and float32 bundles that load back as float32 bit for bit.
 * Bit equality with an independent float32 implementation is the oracle's
 * job (tests/oracles/test_reservoir_float32.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/reservoir.h"
#include "reservoir/res_impl.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("reservoir_f32")

static bl_res_state *built(bl_res_kind kind, uint32_t n, uint64_t seed, bl_res_dtype dtype)
{
    bl_res_params p;
    bl_error err = {0};
    bl_res_params_default(kind, &p);
    bl_res_state *s, *c;
    assert_int_equal(bl_res_state_construct(&p, n, 3, 2, seed, &s, &err), BL_OK);
    assert_int_equal(bl_res_state_cast(s, dtype, &c, &err), BL_OK);
    bl_res_state_destroy(s);
    return c;
}

/* Every value a state carries, widened: the recurrent weights and the views. */
static int same_state(const bl_res_state *a, const bl_res_state *b)
{
    const uint32_t n = bl_res_state_units(a), rows = bl_res_state_excitatory(a), e = bl_res_state_effectors(a);
    if (n != bl_res_state_units(b) || bl_res_state_finite(a) != bl_res_state_finite(b) ||
        bl_res_state_links(a) != bl_res_state_links(b))
        return 0;
    double *wa = malloc((size_t)rows * rows * sizeof *wa), *wb = malloc((size_t)rows * rows * sizeof *wb);
    assert_non_null(wa);
    assert_non_null(wb);
    bl_res_state_dense_weights(a, wa, NULL);
    bl_res_state_dense_weights(b, wb, NULL);
    int same = !memcmp(wa, wb, (size_t)rows * rows * sizeof *wa);
    free(wa);
    free(wb);
    for (int v = BL_RES_SPIKES; v <= BL_RES_EFFECTORS; v++) {
        const double *x = bl_res_state_view(a, (bl_res_view)v), *y = bl_res_state_view(b, (bl_res_view)v);
        size_t count = v == BL_RES_EFFECTORS ? e : n;
        if (!x || !y)
            same = same && !x && !y;
        else
            same = same && !memcmp(x, y, count * sizeof *x);
    }
    return same;
}

static void test_dtype_names(void **state)
{
    (void)state;
    bl_res_dtype d;
    assert_int_equal(bl_res_dtype_parse("float32", &d), 0);
    assert_int_equal(d, BL_RES_FLOAT32);
    assert_int_equal(bl_res_dtype_parse("float64", &d), 0);
    assert_int_equal(d, BL_RES_FLOAT64);
    assert_int_equal(bl_res_dtype_parse("float16", &d), -1);
    assert_string_equal(bl_res_dtype_name(BL_RES_FLOAT32), "float32");
    assert_string_equal(bl_res_dtype_name(BL_RES_FLOAT64), "float64");
}

/* The cast rounds every value to float; widening back is exact; a float64
 * state is never changed by it. */
static void test_cast_values(void **state)
{
    (void)state;
    bl_error err = {0};
    for (int kind = 0; kind < 2; kind++) {
        bl_res_params p;
        bl_res_params_default((bl_res_kind)kind, &p);
        bl_res_state *s, *f, *w, *f2;
        assert_int_equal(bl_res_state_construct(&p, 70, 3, 2, 5, &s, &err), BL_OK);
        assert_int_equal(bl_res_state_dtype(s), BL_RES_FLOAT64);
        assert_int_equal(bl_res_state_cast(s, BL_RES_FLOAT32, &f, &err), BL_OK);
        assert_int_equal(bl_res_state_dtype(f), BL_RES_FLOAT32);
        const uint32_t rows = bl_res_state_excitatory(s);
        double *ws = malloc((size_t)rows * rows * sizeof *ws), *wf = malloc((size_t)rows * rows * sizeof *wf);
        assert_non_null(ws);
        assert_non_null(wf);
        bl_res_state_dense_weights(s, ws, NULL);
        bl_res_state_dense_weights(f, wf, NULL);
        int rounded = 0;
        for (size_t k = 0; k < (size_t)rows * rows; k++) {
            assert_true(wf[k] == (double)(float)ws[k]);
            rounded += wf[k] != ws[k];
        }
        assert_true(rounded > 0); /* construction draws are not floats: the cast did round */
        const double *ts = bl_res_state_view(s, BL_RES_THRESHOLDS), *tf = bl_res_state_view(f, BL_RES_THRESHOLDS);
        for (uint32_t i = 0; i < bl_res_state_units(s); i++)
            assert_true(tf[i] == (double)(float)ts[i]);
        /* widening is exact and the float32 state casts back to the same float32 state */
        assert_int_equal(bl_res_state_cast(f, BL_RES_FLOAT64, &w, &err), BL_OK);
        assert_int_equal(bl_res_state_dtype(w), BL_RES_FLOAT64);
        assert_true(same_state(w, f));
        assert_int_equal(bl_res_state_cast(w, BL_RES_FLOAT32, &f2, &err), BL_OK);
        assert_true(same_state(f2, f));
        free(ws);
        free(wf);
        bl_res_state_destroy(s);
        bl_res_state_destroy(f);
        bl_res_state_destroy(w);
        bl_res_state_destroy(f2);
    }
}

/* Overflow and thresholds that vanish are refused, naming what is at fault. */
static void test_cast_refusals(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_params p;
    bl_res_state *s, *f = (bl_res_state *)1;
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    p.input_weight = 1e39; /* finite in double, not in float */
    assert_int_equal(bl_res_state_construct(&p, 30, 3, 2, 1, &s, &err), BL_OK);
    assert_int_equal(bl_res_state_cast(s, BL_RES_FLOAT32, &f, &err), BL_ERR_INVALID);
    assert_null(f);
    if (!strstr(err.message, "float32: w[") || !strstr(err.message, "not finite as a float"))
        fail_msg("expected the recurrent weight named: %s", err.message);
    bl_res_state_destroy(s);

    bl_res_params_default(BL_RES_FALANDAYS, &p);
    p.targ_min = 1e-50; /* > 0 in double, 0 as a float */
    assert_int_equal(bl_res_state_construct(&p, 30, 3, 2, 1, &s, &err), BL_OK);
    assert_int_equal(bl_res_state_cast(s, BL_RES_FLOAT32, &f, &err), BL_ERR_INVALID);
    if (!strstr(err.message, "targ_min"))
        fail_msg("expected targ_min named: %s", err.message);
    assert_int_equal(bl_res_params_check_dtype(&p, BL_RES_FLOAT32, &err), BL_ERR_INVALID);
    assert_int_equal(bl_res_params_check_dtype(&p, BL_RES_FLOAT64, &err), BL_OK);
    bl_res_state_destroy(s);

    bl_res_params_default(BL_RES_SORN, &p);
    p.eta_ip = 1e300;
    assert_int_equal(bl_res_params_check_dtype(&p, BL_RES_FLOAT32, &err), BL_ERR_INVALID);
    if (!strstr(err.message, "eta_ip"))
        fail_msg("expected eta_ip named: %s", err.message);
    assert_int_equal(bl_res_state_construct(&p, 30, 3, 2, 1, &s, &err), BL_OK);
    assert_int_equal(bl_res_state_cast(s, (bl_res_dtype)7, &f, &err), BL_ERR_INVALID);
    bl_res_state_destroy(s);
}

/* Float32 frames compute in float: with leak 0.1 the act is a * (1 - leak)
 * with every operand and result a float (1 - float(0.1) rounded to float),
 * not a double expression rounded at the end. */
static void test_step_in_float(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_params p;
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    p.leak = 0.1;
    p.learn_on = 0;
    p.link_p = 0.0; /* no recurrent links: a = acts (1 - leak) + W_in u */
    bl_res_state *s, *f;
    assert_int_equal(bl_res_state_construct(&p, 8, 3, 2, 3, &s, &err), BL_OK);
    float acts[8];
    for (uint32_t i = 0; i < 8; i++) {
        s->acts[i] = 1.9 * (i + 1) / 9.0 + 0.01 / 3.0; /* below theta = 2: no spikes */
        acts[i] = (float)s->acts[i];
    }
    assert_int_equal(bl_res_state_cast(s, BL_RES_FLOAT32, &f, &err), BL_OK);
    const double u[3] = {0.3, 0.7, 0.11};
    int differs = 0;
    double a64[8];
    for (uint32_t i = 0; i < 8; i++)
        a64[i] = s->acts[i];
    for (int t = 0; t < 6; t++) {
        assert_int_equal(bl_res_state_step(f, u, NULL, &err), BL_OK);
        const float one_minus = 1.0f - (float)0.1;
        const float theta = 1.0f * 2.0f;
        for (uint32_t i = 0; i < 8; i++) {
            float a = acts[i] * one_minus; /* no input links either (link_p 0): sensory = +0 */
            if (a >= theta)
                a = a - theta;
            acts[i] = a;
            assert_true(bl_res_state_view(f, BL_RES_ACTS)[i] == (double)a);
            a64[i] = a64[i] * (1.0 - 0.1);
            differs += (double)(float)a64[i] != (double)a;
        }
    }
    assert_true(differs > 0); /* float arithmetic is not double rounded at the end */
    bl_res_state_destroy(s);
    bl_res_state_destroy(f);
}

/* Batches of float32 slots: bit-identical to single runs, any thread count;
 * a batch holds one dtype. */
static void test_batch_f32(void **state)
{
    (void)state;
    bl_error err = {0};
    enum { B = 4, T = 80 };
    for (int kind = 0; kind < 2; kind++) {
        const uint32_t n = kind ? 150 : 140;
        bl_res_state *init[B];
        for (int b = 0; b < B; b++)
            init[b] = built((bl_res_kind)kind, n, 20 + (uint64_t)(b % 2), BL_RES_FLOAT32);
        double *in = malloc((size_t)T * B * 3 * sizeof *in);
        assert_non_null(in);
        for (size_t k = 0; k < (size_t)T * B * 3; k++)
            in[k] = bl_res_uniform(9, (uint32_t)k, 0, 9, 0) < 0.3 ? 1.0 : 0.0;
        bl_res_state *single[B];
        for (int b = 0; b < B; b++) {
            assert_int_equal(bl_res_state_copy(init[b], &single[b], &err), BL_OK);
            for (int t = 0; t < T; t++)
                assert_int_equal(bl_res_state_step(single[b], in + ((size_t)t * B + b) * 3, NULL, &err), BL_OK);
            assert_true(bl_res_state_frames(single[b]) == T);
        }
        for (int threads = 1; threads <= 4; threads++) {
            bl_res_batch *bt;
            assert_int_equal(bl_res_batch_create(B, (const bl_res_state *const *)init, &bt, &err), BL_OK);
            bl_res_batch_set_threads(bt, threads);
            bl_res_batch_set_grain(bt, 1);
            for (int t = 0; t < T; t++)
                assert_int_equal(bl_res_batch_step(bt, in + (size_t)t * B * 3, NULL, NULL, &err), BL_OK);
            for (int b = 0; b < B; b++)
                assert_true(same_state(bl_res_batch_slot(bt, b), single[b]));
            bl_res_batch_destroy(bt);
        }
        /* one dtype per batch */
        bl_res_state *mixed[2] = {init[0], NULL};
        assert_int_equal(bl_res_state_cast(init[1], BL_RES_FLOAT64, &mixed[1], &err), BL_OK);
        bl_res_batch *bt;
        assert_int_equal(bl_res_batch_create(2, (const bl_res_state *const *)mixed, &bt, &err), BL_ERR_INVALID);
        if (!strstr(err.message, "float64") || !strstr(err.message, "float32"))
            fail_msg("expected both dtypes named: %s", err.message);
        bl_res_state_destroy(mixed[1]);
        for (int b = 0; b < B; b++) {
            bl_res_state_destroy(init[b]);
            bl_res_state_destroy(single[b]);
        }
        free(in);
    }
}

/* A float32 state saved mid-run loads back as float32 and continues bit for bit. */
static void test_bundle_f32(void **state)
{
    (void)state;
    bl_error err = {0};
    for (int kind = 0; kind < 2; kind++) {
        bl_res_state *s = built((bl_res_kind)kind, 60, 4, BL_RES_FLOAT32), *l;
        for (int t = 0; t < 25; t++) {
            const double u[3] = {t % 3 == 0, t % 4 == 0, 1.0};
            assert_int_equal(bl_res_state_step(s, u, NULL, &err), BL_OK);
        }
        char dir[600];
        snprintf(dir, sizeof dir, "%s/b%d", tmpdir, kind);
        assert_int_equal(bl_res_state_save(s, dir, &err), BL_OK);
        assert_int_equal(bl_res_state_load(dir, NULL, &l, &err), BL_OK);
        assert_int_equal(bl_res_state_dtype(l), BL_RES_FLOAT32);
        char node[700];
        snprintf(node, sizeof node, "%s/node.json", dir);
        FILE *fp = fopen(node, "r");
        assert_non_null(fp);
        char text[8192];
        size_t len = fread(text, 1, sizeof text - 1, fp);
        text[len] = '\0';
        fclose(fp);
        assert_non_null(strstr(text, "\"dtype\":\t\"float32\""));
        for (int t = 0; t < 25; t++) {
            const double u[3] = {t % 2 == 0, 0.0, t % 5 == 0};
            assert_int_equal(bl_res_state_step(s, u, NULL, &err), BL_OK);
            assert_int_equal(bl_res_state_step(l, u, NULL, &err), BL_OK);
        }
        assert_true(same_state(s, l));
        bl_res_state_destroy(s);
        bl_res_state_destroy(l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_names),  cmocka_unit_test(test_cast_values), cmocka_unit_test(test_cast_refusals),
        cmocka_unit_test(test_step_in_float), cmocka_unit_test(test_batch_f32),  cmocka_unit_test(test_bundle_f32),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
