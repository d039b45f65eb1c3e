/* Unit tests for src/reservoir: parameters, the Philox streams, construction,
 * the worked Falandays case, batches (bit-identical to single runs for any
 * thread count and active mask; inactive slots never change; reset), freeze
 * modes, bundles (round trip bit for bit; malformed bundles named precisely),
 * replay and the benchmark case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/npy.h"
#include "brainlesslab/reservoir.h"
#include "bench.h" /* bl_res_bench_case lives in the benchmark program (bench/src/) */
#include "reservoir/res_impl.h"
#include "reservoir/res_kind.h"

#include "test_support.h"

BL_TEST_TMPDIR_GROUP("reservoir")

/* ---- parameters ---- */

static void test_params(void **state)
{
    (void)state;
    bl_res_params p;
    bl_error err = {0};
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    assert_true(p.leak == 0.25 && p.lrate_wmat == 1.0 && p.lrate_targ == 0.01 && p.threshold_mult == 2.0);
    assert_true(p.targ_min == 1.0 && p.input_weight == 1.875 && p.link_p == 0.1 && !p.rectify && p.learn_on);
    assert_int_equal(bl_res_params_set(&p, "leak", 0.5, &err), BL_OK);
    assert_true(bl_res_params_get(&p, "leak") == 0.5);
    assert_int_equal(bl_res_params_set_string(&p, "axis", "dale", &err), BL_OK);
    assert_true(p.dale);
    assert_int_equal(bl_res_params_set_string(&p, "drive", "oosawa", &err), BL_OK);
    assert_true(p.oosawa);
    assert_int_equal(bl_res_params_set(&p, "nope", 1, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "nope"));
    assert_int_equal(bl_res_params_set(&p, "rectify", 0.5, &err), BL_ERR_INVALID);
    assert_int_equal(bl_res_params_set(&p, "leak", 1.5, &err), BL_OK);
    assert_int_equal(bl_res_params_validate(&p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "leak"));
    assert_true(isnan(bl_res_params_get(&p, "p_ee")));

    bl_res_params_default(BL_RES_SORN, &p);
    assert_true(p.p_ee == 10.0 / 166.0 && p.T_E_max == 0.5 && p.T_I_max == 1.0 && p.eta_stdp == 0.001 &&
                p.H_ip == 0.1 && p.pruning && !p.fast_inhibition);
    assert_true(p.ee_row_sum == 1.0 && p.ei_row_sum == 1.0 && p.ie_row_sum == 1.0 && p.input_row_sum == 1.0);
    assert_int_equal(bl_res_params_set(&p, "ie_row_sum", -0.25, &err), BL_OK);
    assert_int_equal(bl_res_params_validate(&p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "ie_row_sum"));
    assert_true(isnan(bl_res_params_get(&p, "leak")));
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    assert_true(isnan(bl_res_params_get(&p, "ee_row_sum"))); /* a SORN parameter only */
    bl_res_params_default(BL_RES_SORN, &p);
    assert_int_equal(bl_res_params_preset(BL_RES_SORN, "lazar2009", &p, &err), BL_OK);
    assert_true(p.T_E_max == 1.0 && p.T_I_max == 0.5);
    assert_int_equal(bl_res_params_preset(BL_RES_SORN, "zheng2013", &p, &err), BL_OK);
    assert_true(p.eta_stdp == 0.004);
    assert_int_equal(bl_res_params_preset(BL_RES_FALANDAYS, "lazar2009", &p, &err), BL_ERR_INVALID);
    assert_int_equal(bl_res_params_preset(BL_RES_SORN, "default", &p, &err), BL_OK);
    assert_int_equal(bl_res_params_set(&p, "leak", 0.1, &err), BL_ERR_INVALID); /* not a SORN parameter */
}

/* ---- random streams ---- */

static void test_rng(void **state)
{
    (void)state;
    /* The portable logarithm agrees with libm to a couple of ulps. */
    for (int k = 1; k < 2000; k++) {
        double x = (double)k / 2000.0 * 0.999 + 1e-9 * k;
        double a = bl_res_det_log(x), b = log(x);
        assert_true(fabs(a - b) <= 4e-16 * fabs(b) + 1e-300);
    }
    assert_true(bl_res_det_log(1.0) == 0.0);
    assert_true(fabs(bl_res_det_log(0x1p-1000) - (-1000.0 * log(2.0))) < 1e-12);
    /* Normals: deterministic, mean ~0, variance ~1. */
    double sum = 0, sq = 0;
    const int n = 40000;
    for (int k = 0; k < n; k++) {
        double z = bl_res_normal(99, (uint32_t)k, 7, 3);
        assert_true(z == bl_res_normal(99, (uint32_t)k, 7, 3));
        sum += z;
        sq += z * z;
    }
    assert_true(fabs(sum / n) < 0.03);
    assert_true(fabs(sq / n - 1.0) < 0.03);
    double u = bl_res_uniform(1, 2, 3, 4, 5);
    assert_true(u >= 0.0 && u < 1.0 && u == bl_res_uniform(1, 2, 3, 4, 5));
    assert_true(u != bl_res_uniform(2, 2, 3, 4, 5));
}

/* ---- construction ---- */

static void dense_of(const bl_res_state *s, double **w, uint8_t **m)
{
    uint32_t rows = bl_res_state_excitatory(s);
    *w = malloc((size_t)rows * rows * sizeof **w);
    *m = malloc((size_t)rows * rows);
    assert_non_null(*w);
    assert_non_null(*m);
    bl_res_state_dense_weights(s, *w, *m);
}

static void test_construct(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_params p;
    bl_res_params_default(BL_RES_SORN, &p);
    bl_res_state *a, *b;
    assert_int_equal(bl_res_state_construct(&p, 200, 3, 2, 6, &a, &err), BL_OK);
    assert_int_equal(bl_res_state_construct(&p, 200, 3, 2, 6, &b, &err), BL_OK);
    assert_int_equal(bl_res_state_excitatory(a), 167);
    assert_int_equal(bl_res_state_units(a), 200);
    double *wa, *wb;
    uint8_t *ma, *mb;
    dense_of(a, &wa, &ma);
    dense_of(b, &wb, &mb);
    assert_memory_equal(wa, wb, 167 * 167 * sizeof *wa);
    for (int i = 0; i < 167; i++) {
        int links = 0;
        double total = 0;
        assert_int_equal(ma[i * 167 + i], 0); /* no self links */
        for (int j = 0; j < 167; j++) {
            links += ma[i * 167 + j];
            total += wa[i * 167 + j];
        }
        assert_true(links >= 1);
        assert_true(fabs(total - 1.0) < 1e-12);
    }
    /* Each input reaches round(0.05 * 167) = 8 E units; each pool has 8. */
    for (int q = 0; q < 3; q++) {
        int reach = 0;
        for (int i = 0; i < 167; i++)
            reach += a->w_in[i * 3 + q] != 0.0;
        assert_int_equal(reach, 8);
    }
    for (int e = 0; e < 2; e++)
        assert_true(a->out_den[e] == 8.0);
    free(wa);
    free(wb);
    free(ma);
    free(mb);
    bl_res_state_destroy(b);
    /* A different seed is a different wiring. */
    assert_int_equal(bl_res_state_construct(&p, 200, 3, 2, 7, &b, &err), BL_OK);
    assert_int_not_equal(bl_res_state_links(a), 0);
    assert_true(bl_res_state_links(a) != bl_res_state_links(b) || memcmp(a->w, b->w, a->cap * sizeof(double)));
    bl_res_state_destroy(a);
    bl_res_state_destroy(b);
    /* I/E = 1 with 5 units: round(2.5) = 2 (ties to even, as Python). */
    p.inhibitory_fraction = 1.0;
    assert_int_equal(bl_res_state_construct(&p, 5, 1, 1, 1, &a, &err), BL_OK);
    assert_int_equal(bl_res_state_excitatory(a), 2);
    bl_res_state_destroy(a);
    assert_int_equal(bl_res_state_construct(&p, 0, 1, 1, 1, &a, &err), BL_ERR_INVALID);
}

/* ---- the worked case ---- */

static bl_res_state *tiny_falandays(void)
{
    bl_res_params p;
    bl_error err = {0};
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    p.leak = 0.0;
    p.lrate_targ = 0.1;
    const uint32_t len[2] = {2, 2};
    bl_res_state *s;
    assert_int_equal(bl_res_state_alloc(&p, 2, 2, 2, 2, len, &s, &err), BL_OK);
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            s->col[s->row_start[i] + j] = (uint32_t)j;
            s->w[s->row_start[i] + j] = 0.0;
        }
        s->sign[i] = 1.0;
        s->thr[i] = 1.0;
        s->w_in[i * 2 + i] = 1.0;
        s->w_out[i * 2 + i] = 1.0;
    }
    bl_res_state_finish(s);
    return s;
}

static void test_worked_case(void **state)
{
    (void)state;
    bl_res_state *s = tiny_falandays();
    bl_error err = {0};
    const double u[2] = {2.0, -3.0};
    assert_int_equal(bl_res_state_step(s, u, NULL, &err), BL_OK);
    const double *spk = bl_res_state_view(s, BL_RES_SPIKES), *acts = bl_res_state_view(s, BL_RES_ACTS);
    const double *e = bl_res_state_view(s, BL_RES_ERRORS), *t = bl_res_state_view(s, BL_RES_THRESHOLDS);
    assert_true(spk[0] == 1.0 && spk[1] == 0.0);
    assert_true(acts[0] == 0.0 && acts[1] == -3.0);
    assert_true(e[0] == -1.0 && e[1] == -4.0);
    assert_true(t[0] == 1.0 && t[1] == 1.0);
    assert_true(bl_res_state_finite(s));
    bl_res_state_destroy(s);
}

/* ---- batches ---- */

typedef struct slot_snapshot {
    double *v[5];
    double *w;
    uint8_t *m;
    int finite;
    uint64_t frames;
} slot_snapshot;

static void snap(const bl_res_state *s, slot_snapshot *o)
{
    const uint32_t n = bl_res_state_units(s), e = bl_res_state_effectors(s);
    const bl_res_view views[5] = {BL_RES_SPIKES, BL_RES_MARGINS, BL_RES_THRESHOLDS, BL_RES_ACTS, BL_RES_EFFECTORS};
    for (int k = 0; k < 5; k++) {
        const double *v = bl_res_state_view(s, views[k]);
        size_t len = views[k] == BL_RES_EFFECTORS ? e : n;
        o->v[k] = calloc(len, sizeof(double));
        if (v)
            memcpy(o->v[k], v, len * sizeof(double));
    }
    dense_of(s, &o->w, &o->m);
    o->finite = bl_res_state_finite(s);
    o->frames = bl_res_state_frames(s);
}

static void snap_equal(const bl_res_state *s, const slot_snapshot *o)
{
    slot_snapshot x;
    snap(s, &x);
    const uint32_t n = bl_res_state_units(s), e = bl_res_state_effectors(s), r = bl_res_state_excitatory(s);
    for (int k = 0; k < 5; k++)
        assert_memory_equal(x.v[k], o->v[k], (k == 4 ? e : n) * sizeof(double));
    assert_memory_equal(x.w, o->w, (size_t)r * r * sizeof(double));
    assert_memory_equal(x.m, o->m, (size_t)r * r);
    assert_int_equal(x.finite, o->finite);
    assert_int_equal(x.frames, o->frames);
    for (int k = 0; k < 5; k++)
        free(x.v[k]);
    free(x.w);
    free(x.m);
}

static void snap_free(slot_snapshot *o)
{
    for (int k = 0; k < 5; k++)
        free(o->v[k]);
    free(o->w);
    free(o->m);
}

/* B slots (different wirings, inputs, noise, active masks and interventions)
 * against B single runs, for several thread counts. */
static void batch_matches_singles(bl_res_params *p, uint32_t n)
{
    enum { B = 5, T = 60 };
    const uint32_t R = 3;
    bl_error err = {0};
    bl_res_state *init[B];
    for (int b = 0; b < B; b++)
        assert_int_equal(bl_res_state_construct(p, n, R, 2, 100 + (uint64_t)(b % 3), &init[b], &err), BL_OK);
    double *in = malloc((size_t)T * B * R * sizeof *in), *nz = malloc((size_t)T * B * n * sizeof *nz);
    uint8_t *act = malloc((size_t)T * B);
    assert_non_null(in);
    assert_non_null(nz);
    assert_non_null(act);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++) {
            for (uint32_t q = 0; q < R; q++)
                in[((size_t)t * B + b) * R + q] = bl_res_uniform(5, (uint32_t)t, (uint32_t)(b * R + q), 9, 0) < 0.4;
            for (uint32_t i = 0; i < n; i++)
                nz[((size_t)t * B + b) * n + i] = bl_res_normal(6, (uint32_t)t, (uint32_t)(b * n + i), 9);
            /* slot 4 is never active; slot 1 sits out frames 20..29 */
            act[t * B + b] = b != 4 && !(b == 1 && t >= 20 && t < 30);
        }
    /* singles */
    slot_snapshot expect[B];
    for (int b = 0; b < B; b++) {
        bl_res_state *s;
        assert_int_equal(bl_res_state_copy(init[b], &s, &err), BL_OK);
        for (int t = 0; t < T; t++) {
            if (b == 2 && t == 15)
                bl_res_state_freeze_weights(s);
            if (b == 3 && t == 25)
                bl_res_state_freeze_plasticity(s);
            if (act[t * B + b])
                assert_int_equal(bl_res_state_step(s, in + ((size_t)t * B + b) * R, nz + ((size_t)t * B + b) * n, &err),
                                 BL_OK);
        }
        snap(s, &expect[b]);
        bl_res_state_destroy(s);
    }
    slot_snapshot initial4;
    snap(init[4], &initial4);
    for (int threads = 1; threads <= 4; threads++) {
        bl_res_batch *bt;
        assert_int_equal(bl_res_batch_create(B, (const bl_res_state *const *)init, &bt, &err), BL_OK);
        bl_res_batch_set_threads(bt, threads);
        bl_res_batch_set_grain(bt, 1); /* really use every thread, however small the frame */
        assert_int_equal(bl_res_batch_threads(bt), threads);
        for (int t = 0; t < T; t++) {
            uint8_t sel[B] = {0};
            if (t == 15) {
                sel[2] = 1;
                bl_res_batch_freeze_weights(bt, sel);
            }
            if (t == 25) {
                memset(sel, 0, sizeof sel);
                sel[3] = 1;
                bl_res_batch_freeze_plasticity(bt, sel);
            }
            assert_int_equal(bl_res_batch_step(bt, in + (size_t)t * B * R, nz + (size_t)t * B * n, act + t * B, &err),
                             BL_OK);
        }
        for (int b = 0; b < B; b++)
            snap_equal(bl_res_batch_slot(bt, b), &expect[b]);
        snap_equal(bl_res_batch_slot(bt, 4), &initial4); /* never active: never changed */
        /* reset puts slot 0 back to its initial state */
        uint8_t sel[B] = {1, 0, 0, 0, 0};
        bl_res_batch_reset(bt, sel);
        slot_snapshot i0;
        snap(init[0], &i0);
        snap_equal(bl_res_batch_slot(bt, 0), &i0);
        snap_free(&i0);
        bl_res_batch_destroy(bt);
    }
    for (int b = 0; b < B; b++) {
        snap_free(&expect[b]);
        bl_res_state_destroy(init[b]);
    }
    snap_free(&initial4);
    free(in);
    free(nz);
    free(act);
}

static void test_batch_falandays(void **state)
{
    (void)state;
    bl_res_params p;
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    batch_matches_singles(&p, 150); /* more than two chunks of 64 units */
    p.oosawa = 1;
    p.membrane_noise = 0.3;
    p.noise_gain = 0.2;
    p.dale = 1;
    batch_matches_singles(&p, 40);
}

static void test_batch_sorn(void **state)
{
    (void)state;
    bl_res_params p;
    bl_res_params_default(BL_RES_SORN, &p);
    p.eta_stdp = 0.02;
    batch_matches_singles(&p, 180);
    p.fast_inhibition = 1;
    batch_matches_singles(&p, 90);
}

static void test_batch_mismatch(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_params p;
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    bl_res_state *a, *b;
    assert_int_equal(bl_res_state_construct(&p, 10, 3, 2, 1, &a, &err), BL_OK);
    assert_int_equal(bl_res_state_construct(&p, 11, 3, 2, 1, &b, &err), BL_OK);
    const bl_res_state *both[2] = {a, b};
    bl_res_batch *bt;
    assert_int_equal(bl_res_batch_create(2, both, &bt, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "slot 1"));
    bl_res_state_destroy(a);
    bl_res_state_destroy(b);
}

/* ---- non-finite ---- */

static void test_nonfinite_holds(void **state)
{
    (void)state;
    bl_res_state *s = tiny_falandays();
    bl_error err = {0};
    const double bad[2] = {INFINITY, 0.0}, ok[2] = {1.0, 1.0};
    assert_int_equal(bl_res_state_step(s, bad, NULL, &err), BL_OK);
    assert_false(bl_res_state_finite(s));
    uint64_t frames = bl_res_state_frames(s);
    double acts[2];
    memcpy(acts, bl_res_state_view(s, BL_RES_ACTS), sizeof acts); /* inf and NaN (0 * inf) */
    assert_true(isinf(acts[0]) && isnan(acts[1]));
    assert_int_equal(bl_res_state_step(s, ok, NULL, &err), BL_OK);
    assert_int_equal(bl_res_state_frames(s), frames);
    assert_memory_equal(bl_res_state_view(s, BL_RES_ACTS), acts, sizeof acts);
    bl_res_state_destroy(s);
}

/* ---- bundles ---- */

static void test_bundle_round_trip(void **state)
{
    (void)state;
    bl_error err = {0};
    for (int kind = 0; kind < 2; kind++) {
        bl_res_params p;
        bl_res_params_default((bl_res_kind)kind, &p);
        p.learn_on = 1;
        bl_res_state *s, *l;
        assert_int_equal(bl_res_state_construct(&p, 50, 3, 2, 42, &s, &err), BL_OK);
        /* advance a little so that the state is not the initial one */
        for (int t = 0; t < 20; t++) {
            const double u[3] = {t % 3 == 0, t % 5 == 0, 1.0};
            assert_int_equal(bl_res_state_step(s, u, NULL, &err), BL_OK);
        }
        bl_res_state_freeze_weights(s);
        char dir[400];
        snprintf(dir, sizeof dir, "%s/bundle%d", tmpdir, kind);
        assert_int_equal(bl_res_state_save(s, dir, &err), BL_OK);
        assert_int_equal(bl_res_state_save(s, dir, &err), BL_ERR_EXISTS);
        assert_int_equal(bl_res_state_load(dir, NULL, &l, &err), BL_OK);
        assert_int_equal(bl_res_state_learning_weights(l), 0);
        assert_int_equal(bl_res_state_learning(l), 1);
        /* same future: step both and compare everything */
        for (int t = 0; t < 20; t++) {
            const double u[3] = {t % 2 == 0, 0.0, t % 7 == 0};
            assert_int_equal(bl_res_state_step(s, u, NULL, &err), BL_OK);
            assert_int_equal(bl_res_state_step(l, u, NULL, &err), BL_OK);
        }
        slot_snapshot a;
        snap(s, &a);
        snap_equal(l, &a);
        snap_free(&a);
        bl_res_state_destroy(s);
        bl_res_state_destroy(l);
    }
}

static void write_npy2(const char *dir, const char *name, uint64_t r, uint64_t c, const double *v)
{
    char path[512];
    bl_error err = {0};
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    const uint64_t shape[2] = {r, c};
    assert_int_equal(bl_npy_write(path, BL_DTYPE_FLOAT64, c ? 2 : 1, shape, v, &err), BL_OK);
}

static void write_text(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_load_error(const char *dir, const char *needle)
{
    bl_error err = {0};
    bl_res_state *s = NULL;
    assert_int_not_equal(bl_res_state_load(dir, NULL, &s, &err), BL_OK);
    assert_null(s);
    if (!strstr(err.message, needle))
        fail_msg("expected '%s' in: %s", needle, err.message);
}

static void test_bundle_errors(void **state)
{
    (void)state;
    char dir[400];
    snprintf(dir, sizeof dir, "%s/bad", tmpdir);
    mkdir(dir, 0777);
    expect_load_error(dir, "no node.json");
    write_text(dir, "node.json", "{\"kind\": \"falandays\", \"parameters\": {\"leak\": 0.5}}");
    expect_load_error(dir, "w.npy: missing");
    const double w[4] = {0, 1, 0, 0}, eye[4] = {1, 0, 0, 1};
    write_npy2(dir, "w", 2, 2, w);
    write_npy2(dir, "w_in", 2, 2, eye);
    write_npy2(dir, "w_out", 2, 2, eye);
    bl_error err = {0};
    bl_res_state *s;
    assert_int_equal(bl_res_state_load(dir, NULL, &s, &err), BL_OK);
    assert_true(bl_res_state_params(s)->leak == 0.5);
    assert_int_equal(bl_res_state_links(s), 1);
    bl_res_state_destroy(s);
    /* a weight off the link mask */
    const double mask[4] = {0, 0, 1, 0};
    write_npy2(dir, "mask", 2, 2, mask);
    expect_load_error(dir, "w.npy: [0, 1] = 1 but mask.npy has no link there");
    write_npy2(dir, "mask", 2, 2, eye + 0);
    expect_load_error(dir, "w.npy: [0, 1]");
    const double mask_ok[4] = {1, 1, 0, 0};
    write_npy2(dir, "mask", 2, 2, mask_ok);
    /* spikes must be binary, shapes must match */
    const double spikes[2] = {0, 0.5};
    write_npy2(dir, "spikes", 2, 0, spikes);
    expect_load_error(dir, "spikes.npy: [1] = 0.5 is not 0 or 1");
    const double spikes3[3] = {0, 0, 0};
    write_npy2(dir, "spikes", 3, 0, spikes3);
    expect_load_error(dir, "spikes.npy: shape (3,), expected (2,)");
    write_npy2(dir, "spikes", 2, 0, spikes3);
    const double signs[2] = {1, -1};
    write_npy2(dir, "signs", 2, 0, signs);
    expect_load_error(dir, "unsigned");
    write_text(dir, "node.json", "{\"kind\": \"falandays\", \"parameters\": {\"axis\": \"dale\"}}");
    assert_int_equal(bl_res_state_load(dir, NULL, &s, &err), BL_OK);
    bl_res_state_destroy(s);
    const double nan2[2] = {NAN, 1};
    write_npy2(dir, "targets", 2, 0, nan2);
    expect_load_error(dir, "targets.npy: [0] is not finite");
    write_text(dir, "node.json", "{\"kind\": \"falandays\", \"colour\": 1}");
    expect_load_error(dir, "unknown key \"colour\"");
    write_text(dir, "node.json", "{\"kind\": \"falandays\", \"parameters\": {\"p_ee\": 1}}");
    expect_load_error(dir, "p_ee");
    write_text(dir, "node.json", "{\"kind\": \"hopfield\"}");
    expect_load_error(dir, "kind");
    expect_load_error("/nonexistent/bundle", "not a bundle directory");
}

/* ---- replay ---- */

static void test_replay(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_res_params p;
    bl_res_params_default(BL_RES_SORN, &p);
    bl_res_state *a, *b;
    assert_int_equal(bl_res_state_construct(&p, 60, 2, 2, 3, &a, &err), BL_OK);
    assert_int_equal(bl_res_state_copy(a, &b, &err), BL_OK);
    enum { T = 30 };
    double in[T * 2];
    for (int k = 0; k < T * 2; k++)
        in[k] = (k * 7) % 3 == 0;
    bl_res_trajectory tr;
    assert_int_equal(bl_res_replay(a, T, in, NULL, 10, 0, &tr, &err), BL_OK);
    assert_null(tr.acts);
    for (int t = 0; t < T; t++) {
        if (t == 9)
            bl_res_state_freeze_weights(b);
        assert_int_equal(bl_res_state_step(b, in + t * 2, NULL, &err), BL_OK);
        for (int i = 0; i < 60; i++)
            assert_int_equal(tr.spikes[t * 60 + i], bl_res_state_view(b, BL_RES_SPIKES)[i] != 0.0);
        assert_memory_equal(tr.margins + t * 60, bl_res_state_view(b, BL_RES_MARGINS), 60 * sizeof(double));
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/traj", tmpdir);
    mkdir(dir, 0777);
    assert_int_equal(bl_res_trajectory_write(&tr, BL_RES_SORN, dir, &err), BL_OK);
    bl_npy_array arr;
    char path[512];
    snprintf(path, sizeof path, "%s/thresholds.npy", dir);
    assert_int_equal(bl_npy_read_expect(path, BL_DTYPE_FLOAT64, 2, &arr, &err), BL_OK);
    assert_int_equal(arr.shape[0], T);
    assert_int_equal(arr.shape[1], 60);
    bl_npy_free(&arr);
    bl_res_trajectory_free(&tr);
    assert_int_equal(bl_res_replay(a, 0, in, NULL, 0, 0, &tr, &err), BL_ERR_INVALID);
    bl_res_state_destroy(a);
    bl_res_state_destroy(b);
}

/* ---- bench case ---- */

static void test_bench_case(void **state)
{
    (void)state;
    bl_error err = {0};
    for (int kind = 0; kind < 2; kind++) {
        bl_res_bench_result r1, r2;
        assert_int_equal(bl_res_bench_case((bl_res_kind)kind, 70, 3, 12, 1, 9, 2, NULL, &r1, &err), BL_OK);
        assert_int_equal(bl_res_bench_case((bl_res_kind)kind, 70, 3, 12, 3, 9, 0, NULL, &r2, &err), BL_OK);
        assert_int_equal(r1.warm, 2);
        assert_string_equal(r1.hash, r2.hash); /* same bits for any thread count */
        assert_int_equal(r1.unit_updates, 70 * 3 * 12);
        assert_true(r1.spikes > 0);
        assert_int_equal(strlen(r1.hash), 64);
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/bench", tmpdir);
    bl_res_bench_result r;
    assert_int_equal(bl_res_bench_case(BL_RES_FALANDAYS, 20, 2, 5, 1, 1, 0, dir, &r, &err), BL_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/bundle/node.json", dir);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/inputs.npy", dir);
    assert_int_equal(access(path, R_OK), 0);
}

/* The node-kind table: every kind is one row, its names and rules one table,
 * and what messages list comes from the rows. */
static void test_kind_table(void **state)
{
    (void)state;
    char names[128];
    assert_string_equal(bl_res_kind_names(names, sizeof names), "\"falandays\" or \"sorn\"");
    for (int kind = BL_RES_FALANDAYS; kind <= BL_RES_SORN; kind++) {
        const bl_res_kind_ops *k = bl_res_kind_of((bl_res_kind)kind);
        assert_non_null(k);
        assert_int_equal(k->kind, kind);
        bl_res_kind parsed;
        assert_int_equal(bl_res_kind_parse(k->name, &parsed), 0);
        assert_int_equal(parsed, kind);
        size_t n = 0;
        for (; k->param_names[n]; n++)
            assert_string_equal(k->param_names[n], k->params[n].name);
        assert_null(k->params[n].name);
        assert_non_null(k->construct);
        assert_non_null(k->construct_host);
        assert_non_null(k->load);
        assert_non_null(k->save);
    }
    assert_null(bl_res_kind_of((bl_res_kind)7));
    bl_res_params p;
    bl_error err = {0};
    assert_int_equal(bl_res_params_preset(BL_RES_SORN, "nope", &p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "default, lazar2009, zheng2013"));
    assert_int_equal(bl_res_params_preset(BL_RES_SORN, "lazar2009", &p, &err), BL_OK);
    assert_true(p.T_E_max == 1.0 && p.T_I_max == 0.5);
    bl_res_params_default(BL_RES_FALANDAYS, &p);
    p.targ_min = 0.0;
    assert_int_equal(bl_res_params_validate(&p, &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "targ_min"));
    assert_int_equal(bl_res_params_set_string(&p, "drive", "oosawa", &err), BL_OK);
    assert_true(p.oosawa == 1);
    bl_res_params_default(BL_RES_SORN, &p);
    assert_int_equal(bl_res_params_set_string(&p, "drive", "oosawa", &err), BL_ERR_INVALID);
    assert_non_null(strstr(err.message, "unknown sorn parameter"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_kind_table),
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_construct),
        cmocka_unit_test(test_worked_case),
        cmocka_unit_test(test_batch_falandays),
        cmocka_unit_test(test_batch_sorn),
        cmocka_unit_test(test_batch_mismatch),
        cmocka_unit_test(test_nonfinite_holds),
        cmocka_unit_test(test_bundle_round_trip),
        cmocka_unit_test(test_bundle_errors),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_bench_case),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
