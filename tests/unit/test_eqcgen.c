/* Generated C (src/models/lang/eq_cgen.c) against the interpreter, block by
 * block, on adversarial register files: every block of models that use
 * every operation of the language runs on the same register file twice,
 * once through eq_vm_run and once through the generated function, and the
 * registers a caller reads (the state, the result of threshold and weight)
 * must hold the same bits. The values: zeros of both signs, infinities,
 * NaNs, subnormals, the largest doubles, small integers, and random bits.
 * Also: the range loops (bl_eq_update_soa, bl_eq_threshold_soa) against
 * the blocks neuron by neuron; the generated source is deterministic.
 * Skips without a C compiler. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "brainlesslab/eqmodel.h"
#include "models/lang/eq_impl.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* One adversarial value. */
static double value(void)
{
    uint64_t k = next64() % 24;
    switch (k) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return NAN;
    case 5: return bits(0xFFF8000000000123u); /* a negative NaN with a payload */
    case 6: return DBL_MIN / 4;               /* subnormal */
    case 7: return -DBL_TRUE_MIN;
    case 8: return DBL_MAX;
    case 9: return -DBL_MAX;
    case 10: return 1.0;
    case 11: return -1.0;
    case 12: return 2.0;
    case 13: return 0.5;
    case 14: return (double)(next64() % 7) - 3.0;
    case 15: return bits(next64()); /* any bits */
    default: return ((double)(next64() >> 11) / 9007199254740992.0 - 0.5) * ldexp(1.0, (int)(next64() % 40) - 20);
    }
}

static double normal_draw(void *user, uint32_t neuron, uint64_t step, uint32_t k)
{
    (void)user;
    return (double)((neuron * 31u + (uint32_t)step * 7u + k) % 13u) / 4.0 - 1.5;
}

/* Same bits, except that two NaNs compare equal whatever their sign and
 * payload: when two NaNs meet in one operation (say a NaN input and the
 * default NaN of inf - inf) x86 returns the first operand's, and a compiler
 * may order the operands of a commutative operation either way, in the
 * interpreter as in the generated code, so which NaN comes out is not a
 * property of the model. Every other value must match bit for bit. The
 * NaNs that differ are counted and printed. */
static unsigned long nan_payload_differences;
static int same(double a, double b)
{
    if (!memcmp(&a, &b, sizeof a))
        return 1;
    if (isnan(a) && isnan(b)) {
        nan_payload_differences++;
        return 1;
    }
    return 0;
}

static const char *const every_names[] = {"v_0", "tau", "a", "period", "pi_", "k", "v_th", "v_rst", "w_s"};
static const char *const every_values[] = {"-52 mV", "10 ms", "3 mV", "7 ms", "3.141592653589793", "0.5",
                                           "-45 mV", "-60 mV", "0.3 mV"};

static bl_eq_source every_source(const char *method)
{
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.method = method;
    s.equations =
        "dv/dt = (clip(v_0 - v, -20*mV, 20*mV) + a*abs(sin(2*pi_*t/period)) + k*int(i / 3.0)*mV) / tau "
        ": volt (unless refractory)\n"
        "du/dt = (floor(x) + ceil(x) - 2*x + tanh(x)*cos(x) + log(1 + x**2) + sqrt(1 + x**3) + abs(x)**1.5 * "
        "int(x > 0.5) + int((x < 0.2) and not (x >= 0.9))*0.1 - int(x <= 0.1 or x == 0.3)*0.2 + int(x != 0.7)*0.01 "
        "- u + exp(-x**2)) / tau : 1\n"
        "x = (v - v_0) / (10*mV) + 0.5 : 1\n";
    s.threshold = "v > v_th and u > -1 or not (x < 3)";
    s.reset = "v = v_rst; u += 0.25; u *= 0.5; u -= 0.125; u /= 1.5";
    s.refractory = "2 ms";
    s.on_pre = "v += w; u = clip(u + w/mV, -2, 2)";
    s.weight = "count * sign * w_s";
    s.on_input = "v += 2 * w_s";
    s.n_params = sizeof every_names / sizeof every_names[0];
    s.param_names = every_names;
    s.param_values = every_values;
    return s;
}

static bl_eq_model *compile_jit(const bl_eq_source *s)
{
    bl_error err = {0};
    bl_eq_model *m = NULL;
    assert_int_equal(bl_eq_model_compile(s, 1e-4, &m, &err), BL_OK);
    assert_int_equal(bl_eq_model_codegen(m, BL_EQ_EXEC_JIT, &err), BL_OK);
    assert_true(bl_eq_model_compiled(m));
    return m;
}

static void compare_blocks(bl_eq_model *m, int trials)
{
    /* the fixed blocks, then on_pre_by's (emitted only when the model has them) */
    const eq_prog *ps[7 + EQ_MAX_BY] = {&m->update, &m->threshold, &m->reset,  &m->on_pre,
                                        &m->on_post, &m->on_input, &m->weight};
    int has_result[7 + EQ_MAX_BY] = {0, 1, 0, 0, 0, 0, 1};
    const char *names[7 + EQ_MAX_BY] = {"update", "threshold", "reset", "on_pre", "on_post", "on_input", "weight"};
    size_t n_blocks = 7;
    for (uint32_t k = 0; k < m->n_by; k++) {
        ps[n_blocks] = &m->by_prog[k];
        names[n_blocks++] = m->by_name[k];
    }
    double *r1 = calloc(m->n_regs, sizeof *r1), *r2 = calloc(m->n_regs, sizeof *r2);
    assert_non_null(r1);
    assert_non_null(r2);
    eq_vm_ctx ctx = {normal_draw, NULL, 3, 17};
    for (size_t b = 0; b < n_blocks; b++) {
        assert_non_null(ps[b]->fn);
        for (int t = 0; t < trials; t++) {
            /* t, i, not_refractory, the externals and the state; the
             * constants as the callers load them; temporaries are written
             * before they are read */
            for (uint32_t k = 0; k < EQ_VBASE + m->n_vars; k++)
                r1[k] = value();
            memcpy(r1 + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
            r1[R_NR] = (double)(next64() & 1);
            r1[R_I] = (double)(next64() % 100);
            memcpy(r2, r1, m->n_regs * sizeof *r1);
            ctx.neuron = (uint32_t)(next64() % 100);
            eq_vm_run(ps[b], r1, &ctx);
            ps[b]->fn(r2, &ctx);
            for (uint32_t v = 0; v < m->n_vars; v++)
                if (!same(r1[EQ_VBASE + v], r2[EQ_VBASE + v])) {
                    fail_msg("%s: variable %u: interpreter %a, generated %a", names[b], v, r1[EQ_VBASE + v],
                             r2[EQ_VBASE + v]);
                }
            if (has_result[b] && !same(r1[ps[b]->result], r2[ps[b]->result]))
                fail_msg("%s: result: interpreter %a, generated %a", names[b], r1[ps[b]->result], r2[ps[b]->result]);
        }
    }
    free(r1);
    free(r2);
}

static int have_compiler(void)
{
    char what[512];
    if (!bl_eq_codegen_available(what, sizeof what)) {
        printf("skip: %s\n", what);
        return 0;
    }
    return 1;
}

static void every_op_blocks(void **state)
{
    (void)state;
    if (!have_compiler())
        skip();
    const char *methods[] = {"euler", "rk2", "rk4"};
    for (size_t k = 0; k < 3; k++) {
        bl_eq_source s = every_source(methods[k]);
        bl_eq_model *m = compile_jit(&s);
        compare_blocks(m, 4000);
        bl_eq_model_destroy(m);
    }
}

static const char *const shiu_names[] = {"v_0", "v_rst", "v_th", "t_mbr", "tau", "t_rfc", "w_syn", "f_poi"};
static const char *const shiu_values[] = {"-52 mV", "-52 mV", "-45 mV", "20 ms", "5 ms", "2.2 ms", "0.275 mV", "250"};

static bl_eq_source shiu_source(void)
{
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.method = "linear";
    s.equations = "dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)\n"
                  "dg/dt = -g / tau : volt (unless refractory)\n";
    s.threshold = "v > v_th";
    s.reset = "v = v_rst; g = 0*mV";
    s.refractory = "t_rfc";
    s.on_pre = "g += w";
    s.weight = "count * sign * w_syn";
    s.on_input = "v += f_poi * w_syn";
    s.n_params = 8;
    s.param_names = shiu_names;
    s.param_values = shiu_values;
    return s;
}

static void shiu_and_exp_euler_blocks(void **state)
{
    (void)state;
    if (!have_compiler())
        skip();
    bl_eq_source s = shiu_source();
    bl_eq_model *m = compile_jit(&s);
    compare_blocks(m, 20000);
    bl_eq_model_destroy(m);
    s.method = "exponential_euler";
    s.equations = "dv/dt = (v_0 - v + g) / t_mbr : volt (unless refractory)\n"
                  "dg/dt = -g / tau + exp(-v/v_th)*mV/ms*0.01 : volt\n";
    m = compile_jit(&s);
    compare_blocks(m, 20000);
    bl_eq_model_destroy(m);
    /* noise: the draw is the caller's, through the same call */
    s.method = "euler";
    s.equations = "dv/dt = (v_0 - v)/t_mbr + w_syn*xi/sqrt(t_mbr) : volt (unless refractory)\n";
    s.reset = "v = v_rst";
    s.on_pre = "v += w";
    m = compile_jit(&s);
    assert_true(bl_eq_model_uses_noise(m));
    compare_blocks(m, 20000);
    bl_eq_model_destroy(m);
    /* heun with multiplicative noise: Brian2's support statements (a
     * where() for the flagged variable, a second variable read through its
     * own x_support), and on_pre chosen by a column (on_pre_by): one
     * generated function per value */
    s.method = "heun";
    s.equations = "dv/dt = (v_0 - v + g)/t_mbr + w_syn*(g/mV)*(v - v_th)/mV*xi/sqrt(t_mbr) : volt (unless refractory)\n"
                  "dg/dt = -g/tau : volt\n";
    s.on_pre = NULL;
    const char *by_values[] = {"ACH", "GABA", "GLUT"}, *by_texts[] = {"v += w", "g -= w; v -= w/2", "g += 2*w"};
    s.on_pre_by = "transmitter";
    s.n_on_pre_by = 3;
    s.on_pre_by_values = by_values;
    s.on_pre_by_texts = by_texts;
    m = compile_jit(&s);
    assert_true(bl_eq_model_uses_noise(m));
    assert_int_equal(m->n_by, 3);
    assert_true(m->order_brian2);
    compare_blocks(m, 20000);
    bl_eq_model_destroy(m);
}

/* The range loops against the blocks run neuron by neuron. */
static void range_loops(void **state)
{
    (void)state;
    if (!have_compiler())
        skip();
    const char *methods[] = {"euler", "rk4"};
    for (size_t k = 0; k < 2; k++) {
        bl_eq_source s = every_source(methods[k]);
        bl_eq_model *m = compile_jit(&s);
        assert_non_null(m->update_soa);
        assert_non_null(m->threshold_soa);
        enum { N = 257 };
        uint32_t nv = m->n_vars;
        double *a = malloc(nv * N * sizeof *a), *b = malloc(nv * N * sizeof *b);
        double *va[BL_EQ_MAX_VARS], *vb[BL_EQ_MAX_VARS];
        uint8_t nr[N], fa[N], fb[N];
        double *r = calloc(m->n_regs, sizeof *r);
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(r);
        memcpy(r + EQ_CBASE, m->consts, m->n_consts * sizeof *m->consts);
        for (uint32_t v = 0; v < nv; v++) {
            va[v] = a + (size_t)v * N;
            vb[v] = b + (size_t)v * N;
        }
        for (int round = 0; round < 20; round++) {
            for (size_t i = 0; i < (size_t)nv * N; i++)
                a[i] = b[i] = value();
            for (int i = 0; i < N; i++)
                nr[i] = (uint8_t)(next64() & 1);
            double t = (double)round * 1e-4;
            eq_vm_ctx c1 = {normal_draw, NULL, 0, (uint64_t)round}, c2 = c1;
            /* lo > 0 and an odd length: the loop's peeled ends too */
            m->update_soa(3, N, va, nr, t, &c1);
            /* neuron by neuron through the interpreter: eq_update_range without generated code */
            eq_block_fn keep_fn = m->update.fn;
            void (*keep)(uint64_t, uint64_t, double *const *, const uint8_t *, double, const struct eq_vm_ctx *) =
                m->update_soa;
            m->update_soa = NULL;
            m->update.fn = NULL;
            eq_update_range(m, 3, N, vb, nr, t, r, &c2);
            m->update_soa = keep;
            m->update.fn = keep_fn;
            for (size_t i = 0; i < (size_t)nv * N; i++)
                if (!same(a[i], b[i]))
                    fail_msg("update range: %s: value %zu: generated %a, interpreter %a", methods[k], i, a[i], b[i]);
            m->threshold_soa(0, N, va, nr, t, fa);
            void (*keep_t)(uint64_t, uint64_t, double *const *, const uint8_t *, double, uint8_t *) = m->threshold_soa;
            eq_block_fn keep_tf = m->threshold.fn;
            m->threshold_soa = NULL;
            m->threshold.fn = NULL;
            eq_threshold_range(m, 0, N, vb, nr, t, r, &c2, fb);
            m->threshold_soa = keep_t;
            m->threshold.fn = keep_tf;
            assert_memory_equal(fa, fb, N);
        }
        free(a);
        free(b);
        free(r);
        bl_eq_model_destroy(m);
    }
}

static void source_is_deterministic(void **state)
{
    (void)state;
    bl_eq_source s = every_source("rk4");
    bl_error err = {0};
    bl_eq_model *m1 = NULL, *m2 = NULL;
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m1, &err), BL_OK);
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m2, &err), BL_OK);
    char *c1 = eq_cgen_source(m1), *c2 = eq_cgen_source(m2);
    assert_non_null(c1);
    assert_non_null(c2);
    assert_string_equal(c1, c2);
    /* the operations are spelled as eq_apply computes them */
    assert_non_null(strstr(c1, "fmin(fmax("));
    assert_non_null(strstr(c1, "trunc("));
    assert_non_null(strstr(c1, "pow("));
    assert_null(strstr(c1, "fma("));
    free(c1);
    free(c2);
    /* the interpreter asked for: no generated code, and the note says so */
    assert_int_equal(bl_eq_model_codegen(m1, BL_EQ_EXEC_INTERP, &err), BL_OK);
    assert_false(bl_eq_model_compiled(m1));
    assert_null(bl_eq_model_generated_source(m1));
    assert_string_equal(bl_eq_model_exec_note(m1), "interpreter (asked)");
    bl_eq_model_destroy(m1);
    bl_eq_model_destroy(m2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_op_blocks),
        cmocka_unit_test(shiu_and_exp_euler_blocks),
        cmocka_unit_test(range_loops),
        cmocka_unit_test(source_is_deterministic),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("values compared: every non-NaN bit for bit; NaNs whose sign or payload differed: %lu\n",
           nan_payload_differences);
    return rc;
}
