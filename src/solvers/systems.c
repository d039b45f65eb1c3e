/* Built-in ODE systems: the oracles' test problems (exponential decay, Van der
 * Pol, Robertson) and the execution-baselines protocol's synthetic
 * hierarchical fixtures (G groups of S local stages, independent or coupled
 * through a G x G matrix; docs/solvers.md gives the equations). Each RHS uses
 * only + - * / in a written order, so an independent NumPy evaluation in the
 * same order is bit-identical (tests/oracles/test_solvers_scipy.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

struct bl_ode_builtin {
    bl_ode_system sys;
    size_t G, S;
    int coupled;
    double *W;  /* hier: G x G coupling (zero diagonal) */
    double *p0; /* reference parameters */
    double *y0; /* reference initial state */
};

/* ---- exponential: dy_i = -p_i y_i ---- */
static int exp_rhs(void *u, double t, const double *y, const double *p, double *f)
{
    const bl_ode_builtin *b = u;
    for (size_t i = 0; i < b->sys.n_states; i++)
        f[i] = -p[i] * y[i];
    return 0;
}
static int exp_jac(void *u, double t, const double *y, const double *p, double *J)
{
    const bl_ode_builtin *b = u;
    const size_t n = b->sys.n_states;
    memset(J, 0, n * n * sizeof *J);
    for (size_t i = 0; i < n; i++)
        J[i * n + i] = -p[i];
    return 0;
}
static int exp_pjac(void *u, double t, const double *y, const double *p, double *P)
{
    const bl_ode_builtin *b = u;
    const size_t n = b->sys.n_states;
    memset(P, 0, n * n * sizeof *P);
    for (size_t i = 0; i < n; i++)
        P[i * n + i] = -y[i];
    return 0;
}

static int exp_vjp_dir(void *u, double t, const double *y, const double *p, const double *w, const double *dy,
                       const double *dp, double *oy, double *op)
{
    const bl_ode_builtin *b = u;
    for (size_t i = 0; i < b->sys.n_states; i++) {
        oy[i] = -w[i] * dp[i];
        op[i] = -w[i] * dy[i];
    }
    return 0;
}

/* ---- Van der Pol: y0' = y1, y1' = mu (1 - y0^2) y1 - y0 ---- */
static int vdp_rhs(void *u, double t, const double *y, const double *p, double *f)
{
    f[0] = y[1];
    f[1] = p[0] * (1.0 - y[0] * y[0]) * y[1] - y[0];
    return 0;
}
static int vdp_jac(void *u, double t, const double *y, const double *p, double *J)
{
    J[0] = 0.0;
    J[1] = 1.0;
    J[2] = -2.0 * p[0] * y[0] * y[1] - 1.0;
    J[3] = p[0] * (1.0 - y[0] * y[0]);
    return 0;
}
static int vdp_pjac(void *u, double t, const double *y, const double *p, double *P)
{
    P[0] = 0.0;
    P[1] = (1.0 - y[0] * y[0]) * y[1];
    return 0;
}

static int vdp_vjp_dir(void *u, double t, const double *y, const double *p, const double *w, const double *dy,
                       const double *dp, double *oy, double *op)
{
    const double mu = p[0], dmu = dp[0];
    oy[0] = w[1] * (-2.0 * (dmu * y[0] * y[1] + mu * dy[0] * y[1] + mu * y[0] * dy[1]));
    oy[1] = w[1] * (dmu * (1.0 - y[0] * y[0]) - 2.0 * mu * y[0] * dy[0]);
    op[0] = w[1] * ((1.0 - y[0] * y[0]) * dy[1] - 2.0 * y[0] * dy[0] * y[1]);
    return 0;
}

/* ---- Robertson: k1 = p0, k2 = p1, k3 = p2 ---- */
static int rob_rhs(void *u, double t, const double *y, const double *p, double *f)
{
    f[0] = -p[0] * y[0] + p[2] * y[1] * y[2];
    f[1] = p[0] * y[0] - p[1] * y[1] * y[1] - p[2] * y[1] * y[2];
    f[2] = p[1] * y[1] * y[1];
    return 0;
}
static int rob_jac(void *u, double t, const double *y, const double *p, double *J)
{
    J[0] = -p[0];
    J[1] = p[2] * y[2];
    J[2] = p[2] * y[1];
    J[3] = p[0];
    J[4] = -2.0 * p[1] * y[1] - p[2] * y[2];
    J[5] = -p[2] * y[1];
    J[6] = 0.0;
    J[7] = 2.0 * p[1] * y[1];
    J[8] = 0.0;
    return 0;
}
static int rob_pjac(void *u, double t, const double *y, const double *p, double *P)
{
    P[0] = -y[0], P[1] = 0.0, P[2] = y[1] * y[2];
    P[3] = y[0], P[4] = -y[1] * y[1], P[5] = -y[1] * y[2];
    P[6] = 0.0, P[7] = y[1] * y[1], P[8] = 0.0;
    return 0;
}

/* ---- hierarchical: state x[g*S + s], parameters p = [k (G*S), u (G)] ----
 *   dx[g,0] = (u[g] - k[g,0] * x[g,0]) + c[g]
 *   dx[g,s] = k[g,s-1] * x[g,s-1] - k[g,s] * x[g,s]        (s > 0)
 *   c[g]    = sum over h = 0..G-1 in order of W[g,h] * sat(x[h,S-1]), 0 if independent
 *   sat(x)  = x / (1 + x * x) */
static double sat(double x)
{
    return x / (1.0 + x * x);
}
static int hier_rhs(void *u, double t, const double *x, const double *p, double *f)
{
    const bl_ode_builtin *b = u;
    const size_t G = b->G, S = b->S;
    const double *k = p, *in = p + G * S;
    for (size_t g = 0; g < G; g++) {
        double c = 0.0;
        if (b->coupled)
            for (size_t h = 0; h < G; h++)
                c = c + b->W[g * G + h] * sat(x[h * S + S - 1]);
        const size_t o = g * S;
        f[o] = (in[g] - k[o] * x[o]) + c;
        for (size_t s = 1; s < S; s++)
            f[o + s] = k[o + s - 1] * x[o + s - 1] - k[o + s] * x[o + s];
    }
    return 0;
}
static int hier_jac(void *u, double t, const double *x, const double *p, double *J)
{
    const bl_ode_builtin *b = u;
    const size_t G = b->G, S = b->S, n = G * S;
    memset(J, 0, n * n * sizeof *J);
    for (size_t g = 0; g < G; g++) {
        const size_t o = g * S;
        J[o * n + o] = -p[o];
        for (size_t s = 1; s < S; s++) {
            J[(o + s) * n + o + s - 1] = p[o + s - 1];
            J[(o + s) * n + o + s] = -p[o + s];
        }
        if (b->coupled)
            for (size_t h = 0; h < G; h++) {
                const double xh = x[h * S + S - 1], d = 1.0 + xh * xh;
                J[o * n + h * S + S - 1] += b->W[g * G + h] * ((1.0 - xh * xh) / (d * d));
            }
    }
    return 0;
}
static int hier_pjac(void *u, double t, const double *x, const double *p, double *P)
{
    const bl_ode_builtin *b = u;
    const size_t G = b->G, S = b->S, n = G * S, np = b->sys.n_params;
    memset(P, 0, n * np * sizeof *P);
    for (size_t g = 0; g < G; g++) {
        const size_t o = g * S;
        P[o * np + o] = -x[o];
        P[o * np + G * S + g] = 1.0;
        for (size_t s = 1; s < S; s++) {
            P[(o + s) * np + o + s - 1] = x[o + s - 1];
            P[(o + s) * np + o + s] = -x[o + s];
        }
    }
    return 0;
}

/* sat''(x) = 2x (x^2 - 3) / (1 + x^2)^3 */
static int hier_vjp_dir(void *u, double t, const double *x, const double *p, const double *w, const double *dx,
                        const double *dp, double *oy, double *op)
{
    const bl_ode_builtin *b = u;
    const size_t G = b->G, S = b->S, n = G * S, np = b->sys.n_params;
    memset(oy, 0, n * sizeof *oy);
    memset(op, 0, np * sizeof *op);
    for (size_t g = 0; g < G; g++) {
        const size_t o = g * S;
        oy[o] += -w[o] * dp[o];
        op[o] += -w[o] * dx[o];
        for (size_t s = 1; s < S; s++) {
            oy[o + s - 1] += w[o + s] * dp[o + s - 1];
            oy[o + s] += -w[o + s] * dp[o + s];
            op[o + s - 1] += w[o + s] * dx[o + s - 1];
            op[o + s] += -w[o + s] * dx[o + s];
        }
    }
    if (b->coupled)
        for (size_t h = 0; h < G; h++) {
            const size_t c = h * S + S - 1;
            const double xh = x[c], d = 1.0 + xh * xh, s2 = 2.0 * xh * (xh * xh - 3.0) / (d * d * d);
            double acc = 0.0;
            for (size_t g = 0; g < G; g++)
                acc += w[g * S] * b->W[g * G + h];
            oy[c] += acc * s2 * dx[c];
        }
    return 0;
}

static bl_status alloc_ref(bl_ode_builtin *b, bl_error *err)
{
    b->p0 = calloc(b->sys.n_params ? b->sys.n_params : 1, sizeof *b->p0);
    b->y0 = calloc(b->sys.n_states, sizeof *b->y0);
    if (!b->p0 || !b->y0)
        return bl_fail(err, BL_ERR_NOMEM, "ode builtin: out of memory");
    return BL_OK;
}

bl_status bl_ode_builtin_create(const char *name, size_t n_hint, bl_ode_builtin **out, bl_error *err)
{
    if (!out || !name)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_builtin_create: name or out is NULL");
    *out = NULL;
    bl_ode_builtin *b = calloc(1, sizeof *b);
    if (!b)
        return bl_fail(err, BL_ERR_NOMEM, "ode builtin: out of memory");
    b->sys.user = b;
    bl_status st = BL_OK;
    unsigned G = 0, S = 0;
    char tail[16] = "";
    if (!strcmp(name, "exponential")) {
        if (n_hint == 0 || n_hint > 1u << 20) {
            st = bl_fail(err, BL_ERR_INVALID, "ode builtin exponential: n %zu is not in 1..%u", n_hint, 1u << 20);
            goto fail;
        }
        b->sys = (bl_ode_system){n_hint, n_hint, exp_rhs, exp_jac, exp_pjac, b, exp_vjp_dir, NULL};
        if ((st = alloc_ref(b, err)))
            goto fail;
        for (size_t i = 0; i < n_hint; i++) {
            b->p0[i] = 0.1 + 0.9 * (double)i / (double)(n_hint > 1 ? n_hint - 1 : 1);
            b->y0[i] = 1.0 + 0.125 * (double)(i % 8);
        }
    } else if (!strcmp(name, "vdp")) {
        b->sys = (bl_ode_system){2, 1, vdp_rhs, vdp_jac, vdp_pjac, b, vdp_vjp_dir, NULL};
        if ((st = alloc_ref(b, err)))
            goto fail;
        b->p0[0] = 1.0;
        b->y0[0] = 2.0;
    } else if (!strcmp(name, "robertson")) {
        b->sys = (bl_ode_system){3, 3, rob_rhs, rob_jac, rob_pjac, b, NULL, NULL};
        if ((st = alloc_ref(b, err)))
            goto fail;
        b->p0[0] = 0.04, b->p0[1] = 3e7, b->p0[2] = 1e4;
        b->y0[0] = 1.0;
    } else if (sscanf(name, "hier-g%u-s%u%15s", &G, &S, tail) >= 2 && G >= 1 && G <= 4096 && S >= 1 && S <= 4096 &&
               (!tail[0] || !strcmp(tail, "-coupled"))) {
        b->G = G, b->S = S, b->coupled = tail[0] != 0;
        b->sys = (bl_ode_system){(size_t)G * S, (size_t)G * S + G, hier_rhs, hier_jac, hier_pjac, b, hier_vjp_dir, NULL};
        if ((st = alloc_ref(b, err)))
            goto fail;
        b->W = calloc((size_t)G * G, sizeof *b->W);
        if (!b->W) {
            st = bl_fail(err, BL_ERR_NOMEM, "ode builtin %s: out of memory", name);
            goto fail;
        }
        for (size_t g = 0; g < G; g++)
            for (size_t h = 0; h < G; h++)
                b->W[g * G + h] = g == h ? 0.0 : (double)((int)((g * 7 + h * 3) % 5) - 2) * 0.25 / (double)G;
        for (size_t g = 0; g < G; g++) {
            for (size_t s = 0; s < S; s++) {
                b->p0[g * S + s] = 0.5 + 0.25 * (double)((g + 2 * s) % 4);
                b->y0[g * S + s] = 0.125 * (double)(s + 1);
            }
            b->p0[(size_t)G * S + g] = 1.0 + 0.5 * (double)(g % 3);
        }
    } else {
        st = bl_fail(err, BL_ERR_INVALID, "ode builtin \"%s\" is unknown (exponential, vdp, robertson, "
                     "hier-gG-sS[-coupled])", name);
        goto fail;
    }
    *out = b;
    return BL_OK;
fail:
    bl_ode_builtin_destroy(b);
    return st;
}

void bl_ode_builtin_destroy(bl_ode_builtin *b)
{
    if (!b)
        return;
    free(b->W);
    free(b->p0);
    free(b->y0);
    free(b);
}

const bl_ode_system *bl_ode_builtin_system(const bl_ode_builtin *b)
{
    return &b->sys;
}
const double *bl_ode_builtin_params(const bl_ode_builtin *b)
{
    return b->p0;
}
const double *bl_ode_builtin_y0(const bl_ode_builtin *b)
{
    return b->y0;
}
