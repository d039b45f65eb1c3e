/* The ODE solvers and SSA banks of include/brainlesslab/solvers.h: errors
 * that name the place, fixed-step trajectories and their exact derivatives,
 * the adaptive methods on problems with known answers, and the replicate
 * streams' ownership. The SciPy / NumPy comparisons are in
 * tests/oracles/test_solvers_scipy.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/solvers.h"

static bl_ode_builtin *builtin(const char *name, size_t n)
{
    bl_ode_builtin *b = NULL;
    bl_error e = {0};
    assert_int_equal(bl_ode_builtin_create(name, n, &b, &e), BL_OK);
    return b;
}

static bl_ode_solver *solver(const bl_ode_system *sys, const char *method, unsigned sub, double rtol, double atol)
{
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = method;
    o.substeps = sub;
    o.rtol = rtol;
    o.atol = atol;
    bl_ode_solver *s = NULL;
    bl_error e = {0};
    assert_int_equal(bl_ode_solver_create(sys, &o, &s, &e), BL_OK);
    return s;
}

static void test_bad_options(void **state)
{
    (void)state;
    bl_ode_builtin *b = builtin("vdp", 0);
    bl_ode_options o;
    bl_ode_options_default(&o);
    bl_ode_solver *s;
    bl_error e = {0};
    o.method = "rk5";
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "\"rk5\" is unknown"));
    o.method = "rk4";
    o.substeps = 0;
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "substeps"));
    o.method = "dopri5";
    o.rtol = -1;
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "rtol"));
    bl_ode_builtin_destroy(b);
    /* a dense Jacobian of 2^20 x 2^20 is refused before anything is allocated */
    b = builtin("exponential", (size_t)1 << 20);
    o.method = "cvode-bdf";
    o.rtol = 1e-6;
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_OK);
    const double t2[2] = {0, 1};
    double *y = malloc(((size_t)2 << 20) * sizeof *y);
    assert_int_equal(bl_ode_solve(s, t2, 2, bl_ode_builtin_y0(b), bl_ode_builtin_params(b), y, &e), BL_ERR_NOMEM);
    assert_non_null(strstr(e.message, "exceeds 2^28 values"));
    free(y);
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
    assert_int_equal(bl_ode_builtin_create("hier-g0-s2", 0, &b, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "hier-g0-s2"));
    assert_null(b);
}

static int nan_rhs(void *u, double t, const double *y, const double *p, double *f)
{
    f[0] = y[0] > 0 ? NAN : 0.0;
    return 0;
}

static void test_bad_start(void **state)
{
    (void)state;
    bl_ode_system sys = {1, 0, nan_rhs, NULL, NULL, NULL, NULL, NULL};
    bl_error e = {0};
    const double t[3] = {0, 1, 0.5}, y0[1] = {1.0};
    double y[3];
    const char *methods[] = {"rk4", "dopri5", "cvode-bdf", "arkode-dopri5"};
    for (size_t m = 0; m < 4; m++) {
        bl_ode_solver *s = solver(&sys, methods[m], 1, 1e-6, 1e-9);
        assert_int_equal(bl_ode_solve(s, t, 2, y0, NULL, y, &e), BL_ERR_INVALID);
        assert_non_null(strstr(e.message, "not finite"));
        assert_non_null(strstr(e.message, "state 0"));
        assert_int_equal(bl_ode_solve(s, t, 3, y0, NULL, y, &e), BL_ERR_INVALID);
        assert_non_null(strstr(e.message, "t[2]"));
        bl_ode_solver_destroy(s);
    }
}

/* RK4 on dy = -k y: y_N = y0 R(-k h)^N with R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24. */
static double rk4_r(double z)
{
    return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24;
}

static int final_sum(void *u, size_t k, double t, const double *y, double *v, double *dv)
{
    const size_t *last_n = u;
    double acc = 0.0;
    for (size_t i = 0; i < last_n[1]; i++) {
        dv[i] = k == last_n[0] ? 1.0 : 0.0;
        acc += dv[i] * y[i];
    }
    *v = acc;
    return 0;
}

static void test_rk4_exponential_and_gradients(void **state)
{
    (void)state;
    const size_t n = 16;
    bl_ode_builtin *b = builtin("exponential", n);
    const bl_ode_system *sys = bl_ode_builtin_system(b);
    const double *p = bl_ode_builtin_params(b), *y0 = bl_ode_builtin_y0(b);
    const size_t nt = 9, sub = 4; /* 32 steps over [0, 2] */
    double t[9];
    for (size_t k = 0; k < nt; k++)
        t[k] = 0.25 * (double)k;
    bl_ode_solver *s = solver(sys, "rk4", sub, 0, 0);
    double *y = calloc(nt * n, 8), *S = calloc(nt * n * n, 8), gp[16], gy[16], v;
    bl_error e = {0};
    assert_int_equal(bl_ode_solve_sens(s, t, nt, y0, p, y, S, &e), BL_OK);
    bl_ode_stats st;
    bl_ode_solver_stats(s, &st);
    assert_int_equal(st.steps_accepted, 32);
    assert_int_equal(st.rhs_evals, 128);
    const double h = 0.25 / sub, T = 2.0;
    const size_t N = 32;
    for (size_t i = 0; i < n; i++) {
        const double R = rk4_r(-p[i] * h), dR = (1 + (-p[i] * h) + pow(-p[i] * h, 2) / 2 + pow(-p[i] * h, 3) / 6);
        const double yN = y0[i] * pow(R, (double)N);
        assert_true(fabs(y[(nt - 1) * n + i] - yN) <= 1e-14 * fabs(yN));
        /* exact derivative of the discrete map: d/dk [y0 R(-kh)^N] = y0 N R^(N-1) R'(z) (-h) */
        const double dyN = y0[i] * (double)N * pow(R, (double)N - 1) * dR * -h;
        assert_true(fabs(S[((nt - 1) * n + i) * n + i] - dyN) <= 1e-13 * fabs(dyN));
        /* and the ODE's: -T y0 exp(-k T), within RK4's discretisation error */
        assert_true(fabs(dyN - -T * y0[i] * exp(-p[i] * T)) < 1e-6);
    }
    size_t ln[2] = {nt - 1, n};
    assert_int_equal(bl_ode_gradient(s, t, nt, y0, p, final_sum, ln, &v, gp, gy, &e), BL_OK);
    for (size_t i = 0; i < n; i++) {
        const double fwd = S[((nt - 1) * n + i) * n + i];
        assert_true(fabs(gp[i] - fwd) <= 1e-14 * fabs(fwd));
        const double R = rk4_r(-p[i] * h), gy_exact = pow(R, (double)N);
        assert_true(fabs(gy[i] - gy_exact) <= 1e-14);
    }
    free(y);
    free(S);
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
}

/* Adjoint against central differences on a nonlinear coupled system, both methods. */
static int quad_obj(void *u, size_t k, double t, const double *y, double *v, double *dv)
{
    const size_t n = *(const size_t *)u;
    double acc = 0.0;
    for (size_t i = 0; i < n; i++) {
        acc += 0.5 * y[i] * y[i] * (double)(k + 1);
        dv[i] = y[i] * (double)(k + 1);
    }
    *v = acc;
    return 0;
}

static void test_adjoint_vs_differences(void **state)
{
    (void)state;
    const char *methods[] = {"euler", "rk4"};
    for (int mi = 0; mi < 2; mi++) {
        bl_ode_builtin *b = builtin("hier-g4-s2-coupled", 0);
        const bl_ode_system *sys = bl_ode_builtin_system(b);
        const size_t n = sys->n_states, np = sys->n_params;
        double p[12], y0[8], t[5] = {0, 0.5, 1.0, 1.5, 2.0}, gp[12], gy[8], sp[12], sy[8], v, vp, vm;
        memcpy(p, bl_ode_builtin_params(b), sizeof p);
        memcpy(y0, bl_ode_builtin_y0(b), sizeof y0);
        bl_ode_solver *s = solver(sys, methods[mi], 8, 0, 0);
        bl_error e = {0};
        assert_int_equal(bl_ode_gradient(s, t, 5, y0, p, quad_obj, (void *)&n, &v, gp, gy, &e), BL_OK);
        for (size_t j = 0; j < np; j++) {
            const double hstep = 1e-6 * fabs(p[j]), pj = p[j];
            p[j] = pj + hstep;
            assert_int_equal(bl_ode_gradient(s, t, 5, y0, p, quad_obj, (void *)&n, &vp, sp, sy, &e), BL_OK);
            p[j] = pj - hstep;
            assert_int_equal(bl_ode_gradient(s, t, 5, y0, p, quad_obj, (void *)&n, &vm, sp, sy, &e), BL_OK);
            p[j] = pj;
            const double fd = (vp - vm) / (2 * hstep);
            assert_true(fabs(fd - gp[j]) <= 1e-7 * (1 + fabs(gp[j])));
        }
        bl_ode_solver_destroy(s);
        bl_ode_builtin_destroy(b);
    }
}

static int quad_hvp(void *u, size_t k, double t, const double *y, const double *dy, double *out)
{
    const size_t n = *(const size_t *)u;
    for (size_t i = 0; i < n; i++)
        out[i] = dy[i] * (double)(k + 1);
    return 0;
}

/* Forward over adjoint: the exponential system's exact discrete Hessian
 * (diagonal: y0 h^2 [N(N-1) R^(N-2) R'^2 + N R^(N-1) R'']), then central
 * differences of the adjoint gradient on nonlinear systems. */
static void test_hessian(void **state)
{
    (void)state;
    {
        const size_t n = 4, N = 16;
        bl_ode_builtin *b = builtin("exponential", n);
        const double *p = bl_ode_builtin_params(b), *y0 = bl_ode_builtin_y0(b), t[2] = {0.0, 1.5};
        bl_ode_solver *s = solver(bl_ode_builtin_system(b), "rk4", N, 0, 0);
        double v, gp[4], H[16];
        size_t ln[2] = {1, n};
        bl_error e = {0};
        assert_int_equal(bl_ode_hessian(s, t, 2, y0, p, final_sum, NULL, ln, &v, gp, H, &e), BL_OK);
        const double h = 1.5 / N;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                const double z = -p[i] * h, R = rk4_r(z), R1 = 1 + z + z * z / 2 + z * z * z / 6, R2 = 1 + z + z * z / 2;
                const double ex = i == j ? y0[i] * h * h *
                                               ((double)(N * (N - 1)) * pow(R, (double)N - 2) * R1 * R1 +
                                                (double)N * pow(R, (double)N - 1) * R2)
                                         : 0.0;
                if (i == j)
                    assert_true(fabs(H[i * n + j] - ex) <= 1e-13 * fabs(ex));
                else
                    assert_true(H[i * n + j] == 0.0);
            }
        bl_ode_solver_destroy(s);
        bl_ode_builtin_destroy(b);
    }
    const char *systems[] = {"hier-g4-s2-coupled", "vdp"};
    for (int si = 0; si < 2; si++) {
        bl_ode_builtin *b = builtin(systems[si], 0);
        const bl_ode_system *sys = bl_ode_builtin_system(b);
        const size_t n = sys->n_states, np = sys->n_params;
        double p[12], y0[8], gp[12], gpp[12], gpm[12], H[144], v;
        const double t[4] = {0.0, 0.5, 1.0, 2.0};
        memcpy(p, bl_ode_builtin_params(b), np * sizeof *p);
        memcpy(y0, bl_ode_builtin_y0(b), n * sizeof *y0);
        bl_ode_solver *s = solver(sys, "rk4", 10, 0, 0);
        bl_error e = {0};
        assert_int_equal(bl_ode_hessian(s, t, 4, y0, p, quad_obj, quad_hvp, (void *)&n, &v, gp, H, &e), BL_OK);
        for (size_t j = 0; j < np; j++) {
            const double hj = 1e-5 * fabs(p[j]), pj = p[j];
            p[j] = pj + hj;
            assert_int_equal(bl_ode_gradient(s, t, 4, y0, p, quad_obj, (void *)&n, &v, gpp, NULL, &e), BL_OK);
            p[j] = pj - hj;
            assert_int_equal(bl_ode_gradient(s, t, 4, y0, p, quad_obj, (void *)&n, &v, gpm, NULL, &e), BL_OK);
            p[j] = pj;
            for (size_t c = 0; c < np; c++) {
                const double fd = (gpp[c] - gpm[c]) / (2 * hj);
                assert_true(fabs(fd - H[j * np + c]) <= 1e-6 * (1 + fabs(H[j * np + c])));
                assert_true(fabs(H[j * np + c] - H[c * np + j]) <= 1e-12 * (1 + fabs(H[j * np + c])));
            }
        }
        bl_ode_solver_destroy(s);
        bl_ode_builtin_destroy(b);
    }
}

static void test_adaptive_exponential(void **state)
{
    (void)state;
    const size_t n = 4;
    bl_ode_builtin *b = builtin("exponential", n);
    const bl_ode_system *sys = bl_ode_builtin_system(b);
    const double *p = bl_ode_builtin_params(b), *y0 = bl_ode_builtin_y0(b);
    double t[11], y[44];
    for (int k = 0; k < 11; k++)
        t[k] = 0.5 * k;
    const char *methods[] = {"dopri5", "arkode-dopri5", "cvode-bdf"};
    const double tol[] = {1e-7, 1e-7, 1e-5};
    for (int m = 0; m < 3; m++) {
        bl_ode_solver *s = solver(sys, methods[m], 1, 1e-9, 1e-12);
        bl_error e = {0};
        assert_int_equal(bl_ode_solve(s, t, 11, y0, p, y, &e), BL_OK);
        double worst = 0;
        for (int k = 0; k < 11; k++)
            for (size_t i = 0; i < n; i++)
                worst = fmax(worst, fabs(y[k * n + i] - y0[i] * exp(-p[i] * t[k])));
        assert_true(worst < tol[m]);
        bl_ode_stats st;
        bl_ode_solver_stats(s, &st);
        assert_true(st.steps_accepted > 5);
        assert_string_equal(st.method, methods[m]);
        bl_ode_solver_destroy(s);
    }
    bl_ode_builtin_destroy(b);
}

/* bl_ode_solve_observe hands over the very states bl_ode_solve writes (same
 * mesh, bit for bit) for every method (ARKODE's fixed-step tables too), and a callback that stops the solve is
 * reported with the output index and time. */
typedef struct obs_copy {
    double *y;
    size_t n, calls, stop_at;
} obs_copy;

static int copy_out(void *user, size_t k, double t, const double *y)
{
    obs_copy *c = user;
    (void)t;
    if (k != c->calls)
        return 2;
    memcpy(c->y + k * c->n, y, c->n * sizeof *y);
    c->calls++;
    return k + 1 == c->stop_at ? 7 : 0;
}

static void test_solve_observe(void **state)
{
    (void)state;
    bl_ode_builtin *b = builtin("vdp", 2);
    const bl_ode_system *sys = bl_ode_builtin_system(b);
    const double *p = bl_ode_builtin_params(b), *y0 = bl_ode_builtin_y0(b);
    double t[21], y[42], ys[42];
    for (int k = 0; k < 21; k++)
        t[k] = 0.37 * k;
    const char *methods[] = {"euler", "rk4", "dopri5", "arkode-dopri5", "cvode-bdf", "arkode-rk4", "arkode-euler"};
    for (int m = 0; m < 7; m++) {
        bl_ode_solver *s = solver(sys, methods[m], 7, 1e-6, 1e-9);
        bl_error e = {0};
        assert_int_equal(bl_ode_solve(s, t, 21, y0, p, y, &e), BL_OK);
        bl_ode_stats a, c;
        bl_ode_solver_stats(s, &a);
        obs_copy oc = {.y = ys, .n = 2, .calls = 0, .stop_at = 0};
        assert_int_equal(bl_ode_solve_observe(s, t, 21, y0, p, copy_out, &oc, &e), BL_OK);
        bl_ode_solver_stats(s, &c);
        assert_int_equal(oc.calls, 21);
        assert_memory_equal(y, ys, sizeof y);
        assert_int_equal(a.steps_accepted, c.steps_accepted);
        assert_int_equal(a.steps_rejected, c.steps_rejected);
        assert_int_equal(a.rhs_evals, c.rhs_evals);
        oc.calls = 0;
        oc.stop_at = 5;
        assert_int_equal(bl_ode_solve_observe(s, t, 21, y0, p, copy_out, &oc, &e), BL_ERR_INVALID);
        assert_non_null(strstr(e.message, "output callback stopped the solve (7) at output 4"));
        assert_int_equal(oc.calls, 5);
        /* the handle is usable again for a plain solve afterwards */
        assert_int_equal(bl_ode_solve(s, t, 21, y0, p, ys, &e), BL_OK);
        assert_memory_equal(y, ys, sizeof y);
        bl_ode_solver_destroy(s);
    }
    bl_error e = {0};
    bl_ode_solver *s = solver(sys, "rk4", 1, 1e-6, 1e-9);
    assert_int_equal(bl_ode_solve_observe(s, t, 21, y0, p, NULL, NULL, &e), BL_ERR_INVALID);
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
}

static void test_stiff_explicit_is_refused(void **state)
{
    (void)state;
    bl_ode_builtin *b = builtin("vdp", 0);
    const double mu[1] = {1000.0}, y0[2] = {2.0, 0.0}, t[2] = {0.0, 3000.0};
    double y[4];
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = "dopri5";
    o.rtol = 1e-6;
    o.atol = 1e-9;
    o.max_steps = 20000;
    bl_ode_solver *s;
    bl_error e = {0};
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_OK);
    assert_int_equal(bl_ode_solve(s, t, 2, y0, mu, y, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "step limit 20000 reached"));
    assert_non_null(strstr(e.message, "looks stiff"));
    bl_ode_solver_destroy(s);
    /* BDF takes it in a few thousand steps at most */
    o.method = "cvode-bdf";
    assert_int_equal(bl_ode_solver_create(bl_ode_builtin_system(b), &o, &s, &e), BL_OK);
    assert_int_equal(bl_ode_solve(s, t, 2, y0, mu, y, &e), BL_OK);
    bl_ode_stats st;
    bl_ode_solver_stats(s, &st);
    assert_true(st.steps_accepted < 5000);
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
}

static void test_cvodes_sensitivities(void **state)
{
    (void)state;
    const size_t n = 3;
    bl_ode_builtin *b = builtin("exponential", n);
    const double *p = bl_ode_builtin_params(b), *y0 = bl_ode_builtin_y0(b);
    const double t[3] = {0, 1, 2};
    double y[9], S[27];
    bl_ode_solver *s = solver(bl_ode_builtin_system(b), "cvode-bdf", 1, 1e-10, 1e-12);
    bl_error e = {0};
    assert_int_equal(bl_ode_solve_sens(s, t, 3, y0, p, y, S, &e), BL_OK);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                const double ex = i == j ? -t[k] * y0[i] * exp(-p[i] * t[k]) : 0.0;
                assert_true(fabs(S[(k * n + i) * n + j] - ex) < 1e-6);
            }
    bl_ode_solver_destroy(s);
    bl_ode_builtin_destroy(b);
}

/* ---- SSA ---- */
static const int64_t abc_change[] = {-1, -1, 1, 1, 1, -1}, abc_order[] = {1, 1, 0, 0, 0, 1};
static const double abc_rate[] = {0.01, 0.5};

static void test_ssa_streams(void **state)
{
    (void)state;
    bl_ssa_system sys = {3, 2, abc_change, abc_order, abc_rate, NULL, NULL};
    bl_ssa_model *m;
    bl_error e = {0};
    assert_int_equal(bl_ssa_model_create(&sys, &m, &e), BL_OK);
    const int64_t x0[3] = {100, 80, 0};
    double t[21];
    for (int k = 0; k < 21; k++)
        t[k] = 0.5 * k;
    const char *methods[] = {"direct", "tau-leap"};
    for (int mi = 0; mi < 2; mi++) {
        bl_ssa_options o;
        bl_ssa_options_default(&o);
        o.method = methods[mi];
        o.seed = 12345;
        o.tau = 0.05;
        int64_t *a = calloc(64 * 21 * 3, 8), *bb = calloc(64 * 21 * 3, 8), *c = calloc(16 * 21 * 3, 8),
                *d = calloc(8 * 21 * 3, 8);
        uint64_t ev[64];
        o.threads = 1;
        assert_int_equal(bl_ssa_run(m, &o, x0, t, 21, 0, 64, a, ev, &e), BL_OK);
        o.threads = 2;
        assert_int_equal(bl_ssa_run(m, &o, x0, t, 21, 0, 64, bb, ev, &e), BL_OK);
        assert_memory_equal(a, bb, 64 * 21 * 3 * 8);
        assert_int_equal(bl_ssa_run(m, &o, x0, t, 21, 0, 16, c, NULL, &e), BL_OK);
        assert_memory_equal(a, c, 16 * 21 * 3 * 8);
        assert_int_equal(bl_ssa_run(m, &o, x0, t, 21, 40, 8, d, NULL, &e), BL_OK); /* replicates 40..47 */
        assert_memory_equal(a + 40 * 21 * 3, d, 8 * 21 * 3 * 8);
        for (size_t r = 0; r < 64 * 21; r++) {
            assert_int_equal(a[r * 3] + a[r * 3 + 2], 100); /* A + C */
            assert_int_equal(a[r * 3 + 1] + a[r * 3 + 2], 80); /* B + C */
        }
        o.seed = 12346;
        assert_int_equal(bl_ssa_run(m, &o, x0, t, 21, 0, 16, c, NULL, &e), BL_OK);
        assert_true(memcmp(a, c, 16 * 21 * 3 * 8) != 0);
        free(a);
        free(bb);
        free(c);
        free(d);
    }
    bl_ssa_model_destroy(m);
}

static int neg_prop(void *u, double t, const int64_t *x, double *a)
{
    a[0] = 1.0;
    a[1] = x[0] > 3 ? -0.5 : 0.5 * (double)x[0];
    return 0;
}

static void test_ssa_errors(void **state)
{
    (void)state;
    const int64_t change[] = {1, -1};
    const double bad_rate[] = {1.0, -2.0};
    const int64_t order[] = {0, 1};
    bl_ssa_system sys = {1, 2, change, order, bad_rate, NULL, NULL};
    bl_ssa_model *m;
    bl_error e = {0};
    assert_int_equal(bl_ssa_model_create(&sys, &m, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "reaction 1"));
    sys.propensity = neg_prop;
    assert_int_equal(bl_ssa_model_create(&sys, &m, &e), BL_OK);
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    const int64_t x0[1] = {0};
    const double t[2] = {0, 100};
    int64_t out[8];
    assert_int_equal(bl_ssa_run(m, &o, x0, t, 2, 0, 4, out, NULL, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "replicate 0"));
    assert_non_null(strstr(e.message, "reaction 1 has propensity -0.5"));
    o.method = "gillespie2";
    assert_int_equal(bl_ssa_run(m, &o, x0, t, 2, 0, 4, out, NULL, &e), BL_ERR_INVALID);
    assert_non_null(strstr(e.message, "gillespie2"));
    bl_ssa_model_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_bad_start),
        cmocka_unit_test(test_rk4_exponential_and_gradients),
        cmocka_unit_test(test_adjoint_vs_differences),
        cmocka_unit_test(test_hessian),
        cmocka_unit_test(test_adaptive_exponential),
        cmocka_unit_test(test_solve_observe),
        cmocka_unit_test(test_stiff_explicit_is_refused),
        cmocka_unit_test(test_cvodes_sensitivities),
        cmocka_unit_test(test_ssa_streams),
        cmocka_unit_test(test_ssa_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
