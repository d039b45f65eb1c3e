/* The model language (src/models/lang/): the shiu2024 model written as
 * equations gives the hand-written constants and update bit for bit; units
 * are Brian2's arithmetic; every kind of bad model gets a message naming the
 * block, the line, the equation and the term; bounds hold; the methods and
 * the interpreter behave (refractoriness, reset, noise hook, on_input). */
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
#include "models/lif_shiu2024.h"

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

static uint64_t bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static int has_const(const bl_eq_model *m, double v)
{
    const char *t;
    double c;
    for (size_t k = 0; bl_eq_model_update_const(m, k, &t, &c); k++)
        if (bits(c) == bits(v))
            return 1;
    return 0;
}

/* The brief's acceptance: the compiler's constants are bl_shiu_consts_make's,
 * and one update of any state is bl_shiu_integrate's, bit for bit. */
static void shiu_constants_and_update_bitwise(void **state)
{
    (void)state;
    bl_eq_source s = shiu_source();
    bl_eq_model *m = NULL;
    bl_error err = {0};
    bl_lif_params p;
    assert_int_equal(bl_lif_params_preset("shiu2024", &p, &err), BL_OK);
    assert_int_equal(bl_eq_model_compile(&s, p.dt_ms * 0.001, &m, &err), BL_OK);
    bl_shiu_consts k = bl_shiu_consts_make(&p);
    assert_true(has_const(m, k.L2));
    assert_true(has_const(m, k.L8));
    assert_true(has_const(m, k.L9));
    assert_true(has_const(m, k.L10));
    double v;
    assert_true(bl_eq_model_param(m, "v_th", &v));
    assert_int_equal(bits(v), bits(k.v_th));
    assert_true(bl_eq_model_param(m, "v_rst", &v));
    assert_int_equal(bits(v), bits(k.v_rst));
    assert_true(bl_eq_model_param(m, "w_syn", &v));
    assert_int_equal(bits(v), bits(k.w_syn));

    enum { N = 4096 };
    bl_eq_pop *pop = NULL;
    assert_int_equal(bl_eq_pop_create(m, N, &pop, &err), BL_OK);
    double *pv = bl_eq_pop_var(pop, "v"), *pg = bl_eq_pop_var(pop, "g");
    double v0[N], g0[N];
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pv[i] = v0[i] = -0.06 + 0.0149 * (double)(x % 1000003) / 1000003.0; /* below threshold after one step */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pg[i] = g0[i] = ((double)(x % 2000003) / 1000003.0 - 1.0) * 0.002;
    }
    uint32_t spiked[N], ns;
    assert_int_equal(bl_eq_pop_step(pop, spiked, &ns, &err), BL_OK);
    for (int i = 0; i < N; i++) {
        double vv = v0[i], gg = g0[i];
        bl_shiu_integrate(&k, &vv, &gg);
        assert_int_equal(bits(pv[i]), bits(vv));
        assert_int_equal(bits(pg[i]), bits(gg));
    }
    /* on_input: v += f_poi * w_syn is the preset's Poisson weight. */
    double before = pv[0];
    assert_int_equal(bl_eq_pop_input(pop, 0, &err), BL_OK);
    assert_int_equal(bits(pv[0]), bits(before + k.w_poisson));
    /* on_pre with w: g += w. */
    before = pg[1];
    assert_int_equal(bl_eq_pop_on_pre(pop, 1, bl_shiu_edge_weight(&k, -3), &err), BL_OK);
    assert_int_equal(bits(pg[1]), bits(before + -3.0 * k.w_syn));
    bl_eq_pop_destroy(pop);
    bl_eq_model_destroy(m);
}

/* A neuron driven over threshold: spike, reset, then refractory for
 * timestep(2.2 ms) = 22 steps, during which v and g do not change. */
static void shiu_spike_reset_refractory(void **state)
{
    (void)state;
    bl_eq_source s = shiu_source();
    bl_eq_model *m = NULL;
    bl_error err = {0};
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
    bl_eq_pop *pop = NULL;
    assert_int_equal(bl_eq_pop_create(m, 1, &pop, &err), BL_OK);
    double *v = bl_eq_pop_var(pop, "v"), *g = bl_eq_pop_var(pop, "g");
    *v = -0.044;
    *g = 0.0;
    uint32_t spk[1], ns;
    assert_int_equal(bl_eq_pop_step(pop, spk, &ns, &err), BL_OK);
    assert_int_equal(ns, 1);
    double vr;
    assert_true(bl_eq_model_param(m, "v_rst", &vr));
    assert_int_equal(bits(*v), bits(vr));
    *g = 0.01; /* input arriving while refractory changes g only by the arrival */
    for (int k = 1; k <= 21; k++) {
        assert_int_equal(bl_eq_pop_step(pop, spk, &ns, &err), BL_OK);
        assert_int_equal(bits(*v), bits(vr));
        assert_int_equal(bits(*g), bits(0.01));
    }
    assert_int_equal(bl_eq_pop_step(pop, spk, &ns, &err), BL_OK); /* step 22: integrates again */
    assert_true(*g < 0.01);
    bl_eq_pop_destroy(pop);
    bl_eq_model_destroy(m);
}

/* Brian2's arithmetic: "-52 mV" is (-52)*0.001, not the literal -0.052. */
static void units_are_brian2_arithmetic(void **state)
{
    (void)state;
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    const char *values[] = {"-52 mV", "-52*mV", "0.275*mV", "5 nS", "281 pF", "1 * Mohm"};
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = "dx/dt = -x / (1*ms) : 1\n";
    s.n_params = 6;
    s.param_names = names;
    s.param_values = values;
    bl_eq_model *m = NULL;
    bl_error err = {0};
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
    double v;
    assert_true(bl_eq_model_param(m, "a", &v));
    assert_int_equal(bits(v), bits(-52 * 0.001));
    assert_int_not_equal(bits(v), bits(-0.052));
    assert_true(bl_eq_model_param(m, "b", &v));
    assert_int_equal(bits(v), bits(-52 * 0.001));
    assert_true(bl_eq_model_param(m, "c", &v));
    assert_int_equal(bits(v), bits(0.275 * 0.001));
    assert_true(bl_eq_model_param(m, "d", &v));
    assert_int_equal(bits(v), bits(5 * 1e-9));
    assert_true(bl_eq_model_param(m, "e", &v));
    assert_int_equal(bits(v), bits(281 * 1e-12));
    assert_true(bl_eq_model_param(m, "f", &v));
    assert_int_equal(bits(v), bits(1 * 1e6));
    bl_eq_model_destroy(m);
}

typedef struct bad {
    const char *equations, *threshold, *reset, *method, *pname, *pvalue;
    const char *want[3]; /* substrings the message must hold */
} bad;

static void bad_models_named_errors(void **state)
{
    (void)state;
    const bad cases[] = {
        {"dv/dt = (v_0 - v + q) / tau : volt\n", NULL, NULL, NULL, NULL, NULL,
         {"equations line 1", "unknown variable 'q'", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\ndg/dt = -g/tau + v_0 : volt\n", NULL, NULL, NULL, NULL, NULL,
         {"equations line 2", "dimension mismatch", "'-g/tau + v_0'"}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "u > v_0", NULL, NULL, NULL, NULL,
         {"threshold line 1", "unknown variable 'u'", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "v > 3", NULL, NULL, NULL, NULL,
         {"threshold", "cannot compare volt and 1", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, "v = 3*mV; g = 0", NULL, NULL, NULL,
         {"reset line 1", "unknown variable 'g'", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, "v = 3*ms", NULL, NULL, NULL,
         {"reset line 1", "dimension mismatch", "second"}},
        {"dv/dt = (v_0 - v) / zero : volt\n", NULL, NULL, NULL, "zero", "0 ms",
         {"equations line 1", "division by zero", "'(v_0 - v) / zero'"}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, NULL, "rk9", NULL, NULL, {"method", "rk9", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\ndg/dt = -g/tau : volt\n", NULL, NULL, "linear", "t2", "10 ms",
         {NULL, NULL, NULL}}, /* fine: a placeholder so that the next line is a real case */
        {"dv/dt = (v_0 - v + g) / tau : volt\ndg/dt = -g/tau : volt\n", NULL, NULL, "linear", NULL, NULL,
         {"equations line 1", "division by zero", "time constants are equal"}},
        {"dv/dt = exp(v) / tau : volt\n", NULL, NULL, NULL, NULL, NULL,
         {"equations line 1", "must be dimensionless", "exp(v)"}},
        {"dv/dt = (v_0 - v) / tau : volt\ndv/dt = -v/tau : volt\n", NULL, NULL, NULL, NULL, NULL,
         {"equations line 2", "second equation", NULL}},
        {"dv/dt = (v_0 - v / tau : volt\n", NULL, NULL, NULL, NULL, NULL, {"equations line 1", "expected ')'", NULL}},
        {"dv/dt = v_0 $ v : volt\n", NULL, NULL, NULL, NULL, NULL, {"equations line 1", "unexpected character", "$"}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, NULL, NULL, "v_1", "-52 mQ",
         {"parameter v_1", "'mQ' is neither a unit", NULL}},
        {"a = b : 1\nb = a : 1\ndv/dt = a*v/tau : volt\n", NULL, NULL, NULL, NULL, NULL,
         {"equations line", "depend on themselves", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, NULL, "exponential_euler", NULL, NULL, {NULL, NULL, NULL}},
        {"dv/dt = v*v/(tau*mV) : volt\n", NULL, NULL, "exponential_euler", NULL, NULL,
         {"equations line 1", "linear in its own variable", NULL}},
        {"dv/dt = (v_0 - v) / tau + 2*mV*xi/sqrt(tau) : volt\n", NULL, NULL, "rk4", NULL, NULL,
         {"equations line 1", "only by methods euler and heun", NULL}},
        {"dv/dt = (v_0 - v) / tau + 2*mV*xi/sqrt(tau) : volt\n", NULL, NULL, "heun", NULL, NULL, {NULL, NULL, NULL}},
        /* multiplicative noise: Brian2's support statements (eq_brian2.c) */
        {"dv/dt = (v_0 - v) / tau + v*xi/sqrt(tau) : volt\n", NULL, NULL, "heun", NULL, NULL, {NULL, NULL, NULL}},
        {"dv/dt = (v_0 - v) / tau + v*xi_1/sqrt(tau) + mV*xi_2/sqrt(tau) : volt\n", NULL, NULL, "heun", NULL, NULL,
         {"method heun", "one noise source", "use euler"}},
        {"dv/dt = (v_0 - v + g) / tau : volt\ndg/dt = -g/tau_g : volt\ntau_g : second\n", NULL, NULL, "linear",
         NULL, NULL, {"equations line 1", "per neuron", NULL}},
        {"dg/dt = -g/tau_g : volt\ntau_g : second\ndv/dt = (v_0 - v) / tau : volt\n", NULL, NULL, "linear", NULL,
         NULL, {NULL, NULL, NULL}},
        {"dv/dt = (v_r - v)/tau_m + (ie + ii + i_offset + i_inj)/c_m : volt\ndie/dt = -ie/tau_syn_e : amp\n"
         "dii/dt = -ii/tau_syn_i : amp\nv_r : volt\ntau_m : second\nc_m : farad\ni_offset : amp\ni_inj : amp\n"
         "tau_syn_e : second\ntau_syn_i : second\n",
         NULL, NULL, "linear", NULL, NULL, {"equations line 1", "not of a solved form", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", NULL, NULL, "heun", NULL, NULL, {NULL, NULL, NULL}},
        {"dv/dt = (v_0 - v + ga + gb) / tau : volt\ndga/dt = -ga/v_2 : volt\ndgb/dt = -gb/v_2 : volt\n", NULL,
         NULL, "linear", "v_2", "5 ms", {"equations line 1", "share a time constant", NULL}},
        {"dv/dt = (v_0 - v + ga + gb) / tau : volt\ndga/dt = -ga/v_2 : volt\ndgb/dt = -gb/(3*ms) : volt\n", NULL,
         NULL, "linear", "v_2", "5 ms", {"equations line 1", "must be a parameter", NULL}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *names[3] = {"v_0", "tau", cases[c].pname ? cases[c].pname : "v_2"};
        const char *values[3] = {"-52 mV", "10 ms", cases[c].pvalue ? cases[c].pvalue : "1 mV"};
        bl_eq_source s;
        memset(&s, 0, sizeof s);
        s.equations = cases[c].equations;
        s.threshold = cases[c].threshold;
        s.reset = cases[c].reset;
        s.method = cases[c].method;
        s.n_params = 3;
        s.param_names = names;
        s.param_values = values;
        bl_eq_model *m = NULL;
        bl_error err = {0};
        bl_status st = bl_eq_model_compile(&s, 1e-4, &m, &err);
        if (!cases[c].want[0]) {
            if (st)
                fail_msg("case %zu should compile: %s", c, err.message);
            bl_eq_model_destroy(m);
            continue;
        }
        if (st == BL_OK)
            fail_msg("case %zu compiled", c);
        assert_null(m);
        assert_null(strchr(err.message, '\n'));
        for (int k = 0; k < 3; k++)
            if (cases[c].want[k] && !strstr(err.message, cases[c].want[k]))
                fail_msg("case %zu: '%s' lacks '%s'", c, err.message, cases[c].want[k]);
    }
}

/* An explicit method unstable at this dt for a linear decay is warned
 * about, never refused (docs/models.md "Methods"): the rate comes from the
 * compiled graph (d f / d x), the bound is the method's (2 for euler and
 * rk2, 2.785 for rk4); linear and exponential_euler are never warned about;
 * a rate that reads a per-neuron parameter or the state is not judged. */
static void unstable_method_warned(void **state)
{
    (void)state;
    typedef struct {
        const char *equations, *method, *tau;
        const char *want[3]; /* NULL: no warning */
    } st_case;
    const st_case cases[] = {
        /* dt 0.1 ms, tau 0.04 ms: dt/tau = 2.5 */
        {"dv/dt = (v_0 - v) / tau : volt\n", "euler", "0.04 ms", {"equations line 1", "'dv/dt = (v_0 - v) / tau : volt'", "method euler is unstable"}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "rk2", "0.04 ms", {"-25000 1/s", "2.5", "beyond the 2 "}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "rk4", "0.04 ms", {NULL, NULL, NULL}}, /* 2.5 < 2.785 */
        {"dv/dt = (v_0 - v) / tau : volt\n", "rk4", "0.03 ms", {"method rk4", "beyond the 2.785", NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "euler", "10 ms", {NULL, NULL, NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "linear", "0.04 ms", {NULL, NULL, NULL}},
        {"dv/dt = (v_0 - v) / tau : volt\n", "exponential_euler", "0.04 ms", {NULL, NULL, NULL}},
        /* the second equation, through a subexpression */
        {"dv/dt = (v_0 - v) / (10*tau) : volt\nr = 1/tau : Hz\ndg/dt = -g*r : volt\n", "euler", "0.04 ms",
         {"equations line 3", "'dg/dt = -g*r : volt'", NULL}},
        /* a per-neuron time constant or a nonlinear rate is not judged */
        {"dv/dt = (v_0 - v) / tau_n : volt\ntau_n : second\n", "euler", "0.04 ms", {NULL, NULL, NULL}},
        {"dv/dt = (v_0 - v) * (v - v_0) / (tau*mV) : volt\n", "euler", "0.04 ms", {NULL, NULL, NULL}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *names[2] = {"v_0", "tau"};
        const char *values[2] = {"-52 mV", cases[c].tau};
        bl_eq_source s;
        memset(&s, 0, sizeof s);
        s.equations = cases[c].equations;
        s.method = cases[c].method;
        s.n_params = 2;
        s.param_names = names;
        s.param_values = values;
        bl_eq_model *m = NULL;
        bl_error err = {0};
        if (bl_eq_model_compile(&s, 1e-4, &m, &err))
            fail_msg("case %zu should compile (a warning is no refusal): %s", c, err.message);
        const char *w = bl_eq_model_warnings(m);
        if (!cases[c].want[0] && w)
            fail_msg("case %zu: unexpected warning '%s'", c, w);
        if (cases[c].want[0] && !w)
            fail_msg("case %zu: no warning", c);
        for (int k = 0; k < 3 && w; k++)
            if (cases[c].want[k] && !strstr(w, cases[c].want[k]))
                fail_msg("case %zu: '%s' lacks '%s'", c, w, cases[c].want[k]);
        char *d = bl_eq_model_describe(m);
        assert_non_null(d);
        assert_int_equal(w != NULL, strstr(d, "\nwarning: ") != NULL); /* model check prints it */
        free(d);
        bl_eq_model_destroy(m);
    }
}

/* Bounds: too deep, too long a name, too long a text, too many nodes. */
static void bounds_refuse(void **state)
{
    (void)state;
    static char buf[BL_EQ_MAX_TEXT + 64];
    struct {
        int kind;
        const char *want;
    } cases[] = {{0, "nested deeper"}, {1, "identifier longer"}, {2, "longer than"}, {3, "nested deeper than 1024"},
                 {4, "more than 256 state variables"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t o = 0;
        if (cases[c].kind == 0) {
            o += (size_t)sprintf(buf, "dv/dt = ");
            for (int k = 0; k < 100; k++)
                buf[o++] = '(';
            o += (size_t)sprintf(buf + o, "v");
            for (int k = 0; k < 100; k++)
                buf[o++] = ')';
            sprintf(buf + o, "/ms : 1\n");
        } else if (cases[c].kind == 1) {
            o += (size_t)sprintf(buf, "dv/dt = ");
            for (int k = 0; k < 80; k++)
                buf[o++] = 'a';
            sprintf(buf + o, "/ms : 1\n");
        } else if (cases[c].kind == 2) {
            memset(buf, ' ', BL_EQ_MAX_TEXT + 10);
            buf[BL_EQ_MAX_TEXT + 10] = '\0';
        } else if (cases[c].kind == 4) {
            /* 300 equations: once wrote past the slot arrays (the parser's count ran before any slot) */
            for (int k = 0; k < 300; k++)
                o += (size_t)sprintf(buf + o, "dv%d/dt = -v%d / ms : 1\n", k, k);
        } else {
            o += (size_t)sprintf(buf, "dv/dt = (v");
            while (o < BL_EQ_MAX_TEXT - 40)
                o += (size_t)sprintf(buf + o, "+v");
            sprintf(buf + o, ")/ms : 1\n");
        }
        bl_eq_source s;
        memset(&s, 0, sizeof s);
        s.equations = buf;
        bl_eq_model *m = NULL;
        bl_error err = {0};
        if (bl_eq_model_compile(&s, 1e-4, &m, &err) == BL_OK)
            fail_msg("bound case %zu compiled", c);
        if (!strstr(err.message, cases[c].want))
            fail_msg("bound case %zu: '%s' lacks '%s'", c, err.message, cases[c].want);
    }
}

/* euler, rk2, rk4 and exponential_euler on dx/dt = -x/tau give Brian2's
 * generated update (the code Brian2 2.5.1's numpy target runs for this
 * equation, written out). */
static void methods_textbook(void **state)
{
    (void)state;
    const char *names[] = {"tau"};
    const char *values[] = {"10 ms"};
    const char *methods[] = {"euler", "rk2", "rk4", "exponential_euler"};
    for (int k = 0; k < 4; k++) {
        bl_eq_source s;
        memset(&s, 0, sizeof s);
        s.equations = "dx/dt = -x / tau : 1\n";
        s.method = methods[k];
        s.n_params = 1;
        s.param_names = names;
        s.param_values = values;
        bl_eq_model *m = NULL;
        bl_error err = {0};
        assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
        bl_eq_pop *p = NULL;
        assert_int_equal(bl_eq_pop_create(m, 1, &p, &err), BL_OK);
        double *x = bl_eq_pop_var(p, "x");
        *x = 0.7;
        uint32_t spk[1], ns;
        assert_int_equal(bl_eq_pop_step(p, spk, &ns, &err), BL_OK);
        volatile double dt = 1e-4, tau = 10 * 0.001, x0 = 0.7, want;
        /* Brian2's generated order: L = (-dt)/tau hoisted, numbers first. */
        double L = (-dt) / tau;
        if (k == 0) {
            want = (L * x0) + x0;
        } else if (k == 1) {
            double k1 = L * x0;
            want = (L * ((0.5 * k1) + x0)) + x0;
        } else if (k == 2) {
            double k1 = L * x0, k2 = L * ((0.5 * k1) + x0), k3 = L * ((0.5 * k2) + x0), k4 = L * (k3 + x0);
            want = ((((0.16666666666666666 * k1) + (0.3333333333333333 * k2)) + (0.3333333333333333 * k3)) +
                    (0.16666666666666666 * k4)) + x0;
        } else {
            /* Brian2: A = -1/tau, no B: x*exp(-dt/tau), the exponential a loop invariant */
            want = exp((-dt) / tau) * x0;
        }
        if (bits(*x) != bits(want))
            fail_msg("%s: %.17g, want %.17g", methods[k], *x, want);
        bl_eq_pop_destroy(p);
        bl_eq_model_destroy(m);
    }
}

static double fixed_normal(void *user, uint32_t neuron, uint64_t step, uint32_t k)
{
    (void)user;
    return 0.5 + (double)neuron - (double)step + (double)k;
}

/* The noise hook: euler's x + dt*f + sqrt(dt)*(sigma*xi), with the draw from the caller. */
static void noise_hook(void **state)
{
    (void)state;
    const char *names[] = {"tau", "sigma"};
    const char *values[] = {"10 ms", "2"};
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = "dx/dt = -x / tau + sigma*xi/sqrt(tau) : 1\n";
    s.n_params = 2;
    s.param_names = names;
    s.param_values = values;
    bl_eq_model *m = NULL;
    bl_error err = {0};
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
    assert_true(bl_eq_model_uses_noise(m));
    bl_eq_pop *p = NULL;
    assert_int_equal(bl_eq_pop_create(m, 3, &p, &err), BL_OK);
    uint32_t spk[3], ns;
    assert_int_not_equal(bl_eq_pop_step(p, spk, &ns, &err), BL_OK); /* no stream set */
    assert_non_null(strstr(err.message, "noise"));
    bl_eq_pop_set_noise(p, fixed_normal, NULL);
    double *x = bl_eq_pop_var(p, "x");
    x[2] = 0.25;
    assert_int_equal(bl_eq_pop_step(p, spk, &ns, &err), BL_OK);
    volatile double dt = 1e-4, tau = 0.01, sig = 2, xi = 2.5, x0 = 0.25;
    /* Brian2: xi = dt**0.5 * randn(); ((-dt)/tau * x + sigma/sqrt(tau) * xi) + x */
    double xs = pow(dt, 0.5) * xi;
    double want = ((((-dt) / tau) * x0) + ((sig / sqrt(tau)) * xs)) + x0;
    assert_int_equal(bits(x[2]), bits(want));
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
}

/* A subexpression substituted as Brian2 does (into the parsed equation, then
 * printed and parsed again: 2*I/C with I = a*v/ohm + b*mV/ohm becomes
 * (2*a*v/ohm + 2*b*mV/ohm)/C). The expected update is the code Brian2 2.5.1's
 * numpy target generated for this model, written out:
 *   _lio_1 = 1.0/tau; _lio_2 = 1.0/C; _lio_3 = (2.0*(b*mV))/ohm; _lio_4 = (2.0*a)/ohm
 *   _v = (dt*((_lio_1*(-v)) + (_lio_2*(_lio_3 + (_lio_4*v))))) + v */
static void subexpression_in_brian2_order(void **state)
{
    (void)state;
    const char *names[] = {"C", "tau", "a", "b"};
    const char *values[] = {"200*pF", "10*ms", "0.3", "1.7"};
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = "dv/dt = 2*I/C - v/tau : volt\nI = a*v/ohm + b*mV/ohm : amp\n";
    s.n_params = 4;
    s.param_names = names;
    s.param_values = values;
    bl_eq_model *m = NULL;
    bl_error err = {0};
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
    bl_eq_pop *p = NULL;
    assert_int_equal(bl_eq_pop_create(m, 1, &p, &err), BL_OK);
    double *v = bl_eq_pop_var(p, "v");
    *v = 0.01;
    uint32_t spk[1], ns;
    assert_int_equal(bl_eq_pop_step(p, spk, &ns, &err), BL_OK);
    volatile double dt = 1e-4, tau = 10 * 0.001, C = 200 * 1e-12, a = 0.3, b = 1.7, mV = 0.001, ohm = 1.0, v0 = 0.01;
    double l1 = 1.0 / tau, l2 = 1.0 / C, l3 = (2.0 * (b * mV)) / ohm, l4 = (2.0 * a) / ohm;
    double want = (dt * ((l1 * (-v0)) + (l2 * (l3 + (l4 * v0))))) + v0;
    assert_int_equal(bits(*v), bits(want));
    assert_int_equal(bits(want), bits(4700.0099)); /* Brian2's own result */
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
}

/* Subexpressions, per-neuron parameters with table values, functions. */
/* on_pre_by through the library's source (the plan's TOML side is
 * cli.test_synapse_plan): what compiles, and each refusal's message. */
static void on_pre_by_source(void **state)
{
    (void)state;
    const char *values[17], *texts[17];
    char names[17][8];
    for (int k = 0; k < 17; k++) {
        snprintf(names[k], sizeof names[k], "T%d", k);
        values[k] = names[k];
        texts[k] = "g += w";
    }
    struct {
        const char *by, *on_pre, *exc;
        size_t n;
        const char *bad_value, *bad_text;
        const char *want; /* NULL: compiles */
    } cases[] = {
        {"nt", NULL, NULL, 3, NULL, NULL, NULL},
        {"nt", NULL, NULL, 16, NULL, NULL, NULL},
        {"nt", NULL, NULL, 17, NULL, NULL, "at most 16"},
        {"nt", "g += w", NULL, 2, NULL, NULL, "not both"},
        {"nt", NULL, "g += w", 2, NULL, NULL, "on_pre_exc"},
        {NULL, NULL, NULL, 2, NULL, NULL, "needs on_pre_by"},
        {"nt", NULL, NULL, 0, NULL, NULL, "no blocks"},
        {"", NULL, NULL, 2, NULL, NULL, "on_pre_by: expected the name"},
        {"nt", NULL, NULL, 2, "T0", NULL, "on_pre.T0: given twice"},
        {"nt", NULL, NULL, 2, "a\tb", NULL, "printable"},
        {"nt", NULL, NULL, 2, NULL, "q += w", "on_pre.T1 line 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bl_eq_source s;
        memset(&s, 0, sizeof s);
        s.method = "euler";
        s.equations = "dv/dt = (v_0 - v + g) / tau : volt\ndg/dt = -g / tau : volt\n";
        s.threshold = "v > v_0";
        s.weight = "count * mV";
        const char *pn[] = {"v_0", "tau"}, *pv[] = {"-52 mV", "10 ms"};
        s.n_params = 2;
        s.param_names = pn;
        s.param_values = pv;
        const char *v2[17], *t2[17];
        memcpy(v2, values, sizeof v2);
        memcpy(t2, texts, sizeof t2);
        if (cases[c].bad_value)
            v2[1] = cases[c].bad_value;
        if (cases[c].bad_text)
            t2[1] = cases[c].bad_text;
        s.on_pre_by = cases[c].by;
        s.on_pre = cases[c].on_pre;
        s.on_pre_exc = cases[c].exc;
        s.n_on_pre_by = cases[c].n;
        s.on_pre_by_values = v2;
        s.on_pre_by_texts = t2;
        bl_eq_model *m = NULL;
        bl_error err;
        memset(&err, 0, sizeof err);
        bl_status st = bl_eq_model_compile(&s, 1e-4, &m, &err);
        if (!cases[c].want) {
            if (st)
                fail_msg("case %zu: %s", c, err.message);
            char *d = bl_eq_model_describe(m);
            assert_non_null(d);
            assert_non_null(strstr(d, "on_pre_by: neurons.csv column 'nt'"));
            assert_non_null(strstr(d, "on_pre.T0:"));
            free(d);
            bl_eq_model_destroy(m);
        } else if (!st || !strstr(err.message, cases[c].want)) {
            fail_msg("case %zu: want '%s', got status %d: %s", c, cases[c].want, (int)st, err.message);
        }
    }
}

static void subexpressions_and_functions(void **state)
{
    (void)state;
    const char *names[] = {"E", "I", "tau"};
    const char *values[] = {"-70 mV", "2 nA", "10 ms"};
    bl_eq_source s;
    memset(&s, 0, sizeof s);
    s.equations = "dv/dt = (E - v + R*I)/tau + clip(k, 0*volt/second, 1*volt/second) : volt\n"
                  "k = abs(sin(t/ms)) * mV/ms : volt/second\n"
                  "R : ohm\n"
                  "I : amp\n";
    s.n_params = 3;
    s.param_names = names;
    s.param_values = values;
    bl_eq_model *m = NULL;
    bl_error err = {0};
    assert_int_equal(bl_eq_model_compile(&s, 1e-4, &m, &err), BL_OK);
    assert_int_equal(bl_eq_model_n_vars(m), 3);
    assert_string_equal(bl_eq_model_var_name(m, 0), "v");
    assert_string_equal(bl_eq_model_var_unit(m, 1), "ohm");
    bl_eq_pop *p = NULL;
    assert_int_equal(bl_eq_pop_create(m, 1, &p, &err), BL_OK);
    assert_int_equal(bits(bl_eq_pop_var(p, "I")[0]), bits(2 * 1e-9));
    bl_eq_pop_var(p, "R")[0] = 1e6;
    char *text = bl_eq_model_describe(m);
    assert_non_null(text);
    assert_non_null(strstr(text, "update:"));
    free(text);
    bl_eq_pop_destroy(p);
    bl_eq_model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shiu_constants_and_update_bitwise),
        cmocka_unit_test(shiu_spike_reset_refractory),
        cmocka_unit_test(units_are_brian2_arithmetic),
        cmocka_unit_test(bad_models_named_errors),
        cmocka_unit_test(unstable_method_warned),
        cmocka_unit_test(bounds_refuse),
        cmocka_unit_test(methods_textbook),
        cmocka_unit_test(noise_hook),
        cmocka_unit_test(subexpressions_and_functions),
        cmocka_unit_test(subexpression_in_brian2_order),
        cmocka_unit_test(on_pre_by_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
