/* Generated C for ODE systems (bl_ode_lang_codegen, docs/solvers.md,
 * "Generated C for ODE systems") against the interpreter on the protocol's
 * four hierarchical fixtures (g4-s2 and g16-s8, independent and coupled):
 * the same system compiled twice, one handle interpreted and one running
 * the generated functions, must give the same bits for the RHS, the
 * Jacobian, the parameter Jacobian, the second derivatives (vjp_dir) and an
 * observation at random states and parameters, and the same RK4 trajectory
 * and discrete-adjoint gradient, whose sparse vector-Jacobian products
 * (sys.vjp) give the dense products' bits. Skips without a C compiler. */
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
#include "brainlesslab/odelang.h"
#include "brainlesslab/solvers.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Du;
static double uniform(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static int sum_final(void *user, size_t k, double t, const double *y, double *value, double *dvalue_dy)
{
    const size_t *nk = user; /* {n, last output index} */
    (void)t;
    *value = 0.0;
    for (size_t i = 0; i < nk[0]; i++) {
        *value += k == nk[1] ? y[i] : 0.0;
        dvalue_dy[i] = k == nk[1] ? 1.0 : 0.0;
    }
    return 0;
}

static void same(const double *a, const double *b, size_t n, const char *what)
{
    if (memcmp(a, b, n * sizeof *a)) {
        for (size_t i = 0; i < n; i++)
            if (memcmp(&a[i], &b[i], sizeof *a))
                print_error("%s[%zu]: interpreter %.17g, generated %.17g\n", what, i, a[i], b[i]);
        fail();
    }
}

static void fixture(unsigned G, unsigned S, int coupled)
{
    bl_error err = {0};
    bl_ode_lang_source src;
    assert_int_equal(bl_ode_lang_hierarchical(G, S, coupled, &src, &err), BL_OK);
    const char *on[] = {"total"}, *oe[] = {"x_0_0 + exp(-t) * x_1_1"};
    src.n_observe = 1;
    src.observe_names = on;
    src.observe_exprs = oe;
    bl_ode_lang *a = NULL, *b = NULL;
    assert_int_equal(bl_ode_lang_compile(&src, &a, &err), BL_OK);
    assert_int_equal(bl_ode_lang_compile(&src, &b, &err), BL_OK);
    assert_int_equal(bl_ode_lang_codegen(a, BL_EQ_EXEC_INTERP, &err), BL_OK);
    if (bl_ode_lang_codegen(b, BL_EQ_EXEC_JIT, &err)) {
        print_message("skip: %s\n", err.message);
        bl_ode_lang_destroy(a), bl_ode_lang_destroy(b), bl_ode_lang_fixture_free(&src);
        skip();
    }
    assert_false(bl_ode_lang_compiled(a));
    assert_true(bl_ode_lang_compiled(b));
    const bl_ode_system *sa = bl_ode_lang_system(a), *sb = bl_ode_lang_system(b);
    const size_t n = sa->n_states, np = sa->n_params;
    double *y = malloc(n * sizeof *y), *p = malloc(np * sizeof *p), *w = malloc(n * sizeof *w),
           *dy = malloc(n * sizeof *dy), *dp = malloc(np * sizeof *dp), *fa = malloc(n * np * 2 * sizeof *fa + 64),
           *fb = malloc(n * np * 2 * sizeof *fb + 64), *ja = malloc(n * n * sizeof *ja), *jb = malloc(n * n * sizeof *jb);
    assert_non_null(y), assert_non_null(p), assert_non_null(w), assert_non_null(dy), assert_non_null(dp);
    assert_non_null(fa), assert_non_null(fb), assert_non_null(ja), assert_non_null(jb);
    for (int trial = 0; trial < 20; trial++) {
        for (size_t i = 0; i < n; i++)
            y[i] = 4 * uniform() - 2, w[i] = uniform() - 0.5, dy[i] = uniform() - 0.5;
        for (size_t k = 0; k < np; k++)
            p[k] = 2 * uniform(), dp[k] = uniform() - 0.5;
        const double t = uniform();
        sa->rhs(sa->user, t, y, p, fa), sb->rhs(sb->user, t, y, p, fb);
        same(fa, fb, n, "rhs");
        sa->jac(sa->user, t, y, p, ja), sb->jac(sb->user, t, y, p, jb);
        same(ja, jb, n * n, "jacobian");
        sa->pjac(sa->user, t, y, p, fa), sb->pjac(sb->user, t, y, p, fb);
        same(fa, fb, n * np, "parameter jacobian");
        if (sa->vjp_dir) {
            assert_non_null(sb->vjp_dir);
            sa->vjp_dir(sa->user, t, y, p, w, dy, dp, fa, fa + n);
            sb->vjp_dir(sb->user, t, y, p, w, dy, dp, fb, fb + n);
            same(fa, fb, n + np, "second derivatives");
        }
        bl_ode_lang_observe(a, t, y, p, fa), bl_ode_lang_observe(b, t, y, p, fb);
        same(fa, fb, 1, "observation");
    }
    /* A solve and its gradient: the RK4 trajectory and the adjoint. */
    enum { NT = 9 };
    double tg[NT];
    for (int k = 0; k < NT; k++)
        tg[k] = 0.25 * k;
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = "rk4";
    o.substeps = 2;
    bl_ode_solver *va = NULL, *vb = NULL;
    assert_int_equal(bl_ode_solver_create(sa, &o, &va, &err), BL_OK);
    assert_int_equal(bl_ode_solver_create(sb, &o, &vb, &err), BL_OK);
    double *ya = malloc(NT * n * sizeof *ya), *yb = malloc(NT * n * sizeof *yb);
    assert_non_null(ya), assert_non_null(yb);
    const double *y0 = bl_ode_lang_y0(a), *p0 = bl_ode_lang_params(a);
    assert_int_equal(bl_ode_solve(va, tg, NT, y0, p0, ya, &err), BL_OK);
    assert_int_equal(bl_ode_solve(vb, tg, NT, y0, p0, yb, &err), BL_OK);
    same(ya, yb, NT * n, "rk4 trajectory");
    size_t nk[2] = {n, NT - 1};
    double la = 0, lb = 0;
    assert_int_equal(bl_ode_gradient(va, tg, NT, y0, p0, sum_final, nk, &la, fa, NULL, &err), BL_OK);
    assert_int_equal(bl_ode_gradient(vb, tg, NT, y0, p0, sum_final, nk, &lb, fb, NULL, &err), BL_OK);
    same(&la, &lb, 1, "objective");
    same(fa, fb, np, "adjoint gradient");
    /* The sparse vector-Jacobian products (sys.vjp) against the dense jac
     * and pjac products the adjoint forms without them: the same bits. */
    bl_ode_system dense = *sb;
    assert_non_null(sb->vjp);
    dense.vjp = NULL;
    bl_ode_solver *vd = NULL;
    assert_int_equal(bl_ode_solver_create(&dense, &o, &vd, &err), BL_OK);
    double ld = 0;
    assert_int_equal(bl_ode_gradient(vd, tg, NT, y0, p0, sum_final, nk, &ld, fa, NULL, &err), BL_OK);
    same(&ld, &lb, 1, "objective (dense adjoint)");
    same(fa, fb, np, "adjoint gradient: dense jac/pjac vs sparse vjp");
    bl_ode_solver_destroy(vd);
    print_message("g%u-s%u %s: %zu states, %zu parameters: rhs, jacobian, parameter jacobian, second derivatives, "
                  "observation, rk4 and adjoint (sparse and dense) bit-identical (%s)\n",
                  G, S, coupled ? "coupled" : "independent", n, np, bl_ode_lang_exec_note(b));
    bl_ode_solver_destroy(va), bl_ode_solver_destroy(vb);
    free(ya), free(yb), free(y), free(p), free(w), free(dy), free(dp), free(fa), free(fb), free(ja), free(jb);
    bl_ode_lang_destroy(a), bl_ode_lang_destroy(b), bl_ode_lang_fixture_free(&src);
}

static void g4_s2_independent(void **state) { (void)state, fixture(4, 2, 0); }
static void g4_s2_coupled(void **state) { (void)state, fixture(4, 2, 1); }
static void g16_s8_independent(void **state) { (void)state, fixture(16, 8, 0); }
static void g16_s8_coupled(void **state) { (void)state, fixture(16, 8, 1); }

/* The provenance a record keeps: generated_c with the compiler and the cache. */
static void provenance(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_ode_lang_source src;
    assert_int_equal(bl_ode_lang_hierarchical(4, 2, 1, &src, &err), BL_OK);
    bl_ode_lang *o = NULL;
    assert_int_equal(bl_ode_lang_compile(&src, &o, &err), BL_OK);
    char *j = bl_ode_lang_codegen_json(o);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"exec\":\"interpreter\"")); /* no call: the interpreter */
    free(j);
    if (bl_ode_lang_codegen(o, BL_EQ_EXEC_JIT, &err) == BL_OK) {
        j = bl_ode_lang_codegen_json(o);
        assert_non_null(j);
        assert_non_null(strstr(j, "\"exec\":\"generated_c\""));
        assert_non_null(strstr(j, "\"cache_key\""));
        free(j);
        assert_non_null(strstr(bl_ode_lang_generated_source(o), "void bl_eq_ode_rhs("));
        /* the direct functions the callbacks then call (the fixture's lists read only y, p and t) */
        assert_non_null(strstr(bl_ode_lang_generated_source(o), "void bl_eq_ode_rhs_direct("));
        assert_non_null(strstr(bl_ode_lang_generated_source(o), "void bl_eq_ode_vjp_direct("));
    }
    bl_ode_lang_destroy(o);
    bl_ode_lang_fixture_free(&src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(g4_s2_independent), cmocka_unit_test(g4_s2_coupled),
        cmocka_unit_test(g16_s8_independent), cmocka_unit_test(g16_s8_coupled),
        cmocka_unit_test(provenance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
