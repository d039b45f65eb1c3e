/* Dormand-Prince 5(4) with SciPy RK45's control (scipy/integrate/_ivp/rk.py,
 * SciPy 1.10): the same tableau, error estimate (E), RMS error norm with
 * scale = atol + max(|y|, |y_new|) * rtol, factor = min(10, 0.9 err^-1/5)
 * after an accepted step (min(1, .) after a rejection in the same step),
 * max(0.2, 0.9 err^-1/5) after a rejection, the same first-step rule
 * (select_initial_step) and the same minimum step (10 ulps of t). Output
 * points are read from the same 4th-order dense output (its P matrix) of the
 * step that covers them, as solve_ivp(t_eval=...) does. So the accepted and
 * rejected counts match SciPy's and the values agree to rounding (SciPy sums
 * the stages with BLAS dot products, in another order). Under
 * bl_ode_solve_observe the same values go to the callback instead of y_out:
 * the grid only decides where the dense output is read, never the mesh.
 *
 * Stiffness: Hairer's test (DOPRI5, `hlamb`): |h lambda| estimated from the
 * last two stage derivatives; a stiff system shows many such steps before the
 * step limit, and the error says so. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

#define NS 6
static const double C[NS] = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1};
static const double A[NS][5] = {{0, 0, 0, 0, 0},
                                {1.0 / 5, 0, 0, 0, 0},
                                {3.0 / 40, 9.0 / 40, 0, 0, 0},
                                {44.0 / 45, -56.0 / 15, 32.0 / 9, 0, 0},
                                {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729, 0},
                                {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656}};
static const double B[NS] = {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84};
static const double E[NS + 1] = {-71.0 / 57600, 0, 71.0 / 16695, -71.0 / 1920, 17253.0 / 339200, -22.0 / 525,
                                 1.0 / 40};
static const double P[NS + 1][4] = {
    {1, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608, -12715105075.0 / 11282082432},
    {0, 0, 0, 0},
    {0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933, 87487479700.0 / 32700410799},
    {0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304, -10690763975.0 / 1880347072},
    {0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408, 701980252875.0 / 199316789632},
    {0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
    {0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423}};

#define SAFETY 0.9
#define MIN_FACTOR 0.2
#define MAX_FACTOR 10.0
#define STIFF_HLAMB 3.25

static double rms(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s) / sqrt((double)n);
}

typedef struct dp_ctx {
    bl_ode_solver *s;
    const double *p;
    size_t n;
    int rc;
    double rc_t;
} dp_ctx;

static int f(dp_ctx *c, double t, const double *y, double *out)
{
    c->s->stats.rhs_evals++;
    int rc = c->s->sys.rhs(c->s->sys.user, t, y, c->p, out);
    if (rc) {
        c->rc = rc;
        c->rc_t = t;
    }
    return rc;
}

/* select_initial_step of SciPy (order = error estimator order = 4). */
static int initial_step(dp_ctx *c, double t0, const double *y0, const double *f0, double rtol, double atol,
                        double *tmp, double *tmp2, double *h_out)
{
    const size_t n = c->n;
    for (size_t i = 0; i < n; i++)
        tmp[i] = y0[i] / (atol + fabs(y0[i]) * rtol);
    const double d0 = rms(tmp, n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = f0[i] / (atol + fabs(y0[i]) * rtol);
    const double d1 = rms(tmp, n);
    const double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    for (size_t i = 0; i < n; i++)
        tmp[i] = y0[i] + h0 * f0[i];
    if (f(c, t0 + h0, tmp, tmp2))
        return -1;
    for (size_t i = 0; i < n; i++)
        tmp[i] = (tmp2[i] - f0[i]) / (atol + fabs(y0[i]) * rtol);
    const double d2 = rms(tmp, n) / h0;
    double h1;
    if (d1 <= 1e-15 && d2 <= 1e-15)
        h1 = fmax(1e-6, h0 * 1e-3);
    else
        h1 = pow(0.01 / fmax(d1, d2), 1.0 / 5.0);
    *h_out = fmin(100 * h0, h1);
    return 0;
}

bl_status bl_ode_dopri5_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                              double *y_out, bl_error *err)
{
    const size_t n = s->sys.n_states;
    const double rtol = s->opt.rtol, atol = s->opt.atol;
    const double t_end = t[n_times - 1];
    const double max_step = s->opt.max_step > 0 ? s->opt.max_step : INFINITY;
    dp_ctx c = {.s = s, .p = p, .n = n};
    /* K[0..6] stage derivatives, y, y_new, ysti (stage-6 state), tmp, tmp2, Q (n x 4). */
    double *w = calloc((size_t)(NS + 1) * n + 5 * n + 4 * n, sizeof *w);
    if (!w)
        return bl_fail(err, BL_ERR_NOMEM, "dopri5: out of memory for %zu states", n);
    double *K = w, *y = K + (NS + 1) * n, *yn = y + n, *ysti = yn + n, *tmp = ysti + n, *tmp2 = tmp + n,
           *Q = tmp2 + n;
    bl_status st = BL_OK;
    memcpy(y, y0, n * sizeof *y);
    if ((st = bl_ode_emit(s, y_out, 0, t[0], y0, err)))
        goto done;
    double tc = t[0], h_abs;
    if (f(&c, tc, y, K))
        goto rhs_failed;
    if (s->opt.first_step > 0)
        h_abs = s->opt.first_step;
    else if (initial_step(&c, tc, y, K, rtol, atol, tmp, tmp2, &h_abs))
        goto rhs_failed;
    size_t next_out = 1;
    uint64_t attempts = 0;
    while (next_out < n_times) {
        const double min_step = 10 * fabs(nextafter(tc, INFINITY) - tc);
        if (h_abs > max_step)
            h_abs = max_step;
        else if (h_abs < min_step)
            h_abs = min_step;
        int accepted = 0, rejected = 0;
        double h = 0, t_new = 0;
        while (!accepted) {
            if (h_abs < min_step) {
                st = bl_fail(err, BL_ERR_INVALID, "dopri5: the step size collapsed to %g (below the minimum %g) at t "
                             "= %.17g of [%g, %g] after %llu accepted and %llu rejected steps (Hairer's stiffness test "
                             "positive %llu times)", h_abs, min_step, tc, t[0], t_end,
                             (unsigned long long)s->stats.steps_accepted, (unsigned long long)s->stats.steps_rejected,
                             (unsigned long long)s->stats.stiffness_flags);
                goto done;
            }
            if (attempts >= s->opt.max_steps) {
                st = bl_fail(err, BL_ERR_INVALID, "dopri5: step limit %llu reached at t = %.17g of [%g, %g] (%llu "
                             "accepted, %llu rejected, last step %g; Hairer's stiffness test positive on %llu steps%s)",
                             (unsigned long long)s->opt.max_steps, tc, t[0], t_end,
                             (unsigned long long)s->stats.steps_accepted, (unsigned long long)s->stats.steps_rejected,
                             h_abs, (unsigned long long)s->stats.stiffness_flags,
                             s->stats.stiffness_flags > 15 ? ": the system looks stiff, use cvode-bdf" : "");
                goto done;
            }
            attempts++;
            h = h_abs;
            t_new = tc + h;
            if (t_new - t_end > 0)
                t_new = t_end;
            h = t_new - tc;
            h_abs = fabs(h);
            /* rk_step */
            for (int si = 1; si < NS; si++) {
                for (size_t i = 0; i < n; i++) {
                    double dy = 0.0;
                    for (int j = 0; j < si; j++)
                        dy += K[j * n + i] * A[si][j];
                    tmp[i] = y[i] + dy * h;
                }
                if (si == NS - 1)
                    memcpy(ysti, tmp, n * sizeof *tmp);
                if (f(&c, tc + C[si] * h, tmp, K + si * n))
                    goto rhs_failed;
            }
            for (size_t i = 0; i < n; i++) {
                double acc = 0.0;
                for (int j = 0; j < NS; j++)
                    acc += K[j * n + i] * B[j];
                yn[i] = y[i] + h * acc;
            }
            if (f(&c, tc + h, yn, K + NS * n))
                goto rhs_failed;
            /* error norm */
            double e2 = 0.0;
            int finite = 1;
            for (size_t i = 0; i < n; i++) {
                double e = 0.0;
                for (int j = 0; j <= NS; j++)
                    e += K[j * n + i] * E[j];
                e = e * h / (atol + fmax(fabs(y[i]), fabs(yn[i])) * rtol);
                e2 += e * e;
                finite &= isfinite(yn[i]);
            }
            double error_norm = sqrt(e2) / sqrt((double)n);
            if (!finite || isnan(error_norm))
                error_norm = INFINITY;
            if (error_norm < 1) {
                double factor = error_norm == 0 ? MAX_FACTOR : fmin(MAX_FACTOR, SAFETY * pow(error_norm, -0.2));
                if (rejected)
                    factor = fmin(1.0, factor);
                h_abs *= factor;
                accepted = 1;
            } else {
                h_abs *= fmax(MIN_FACTOR, SAFETY * pow(error_norm, -0.2));
                rejected = 1;
                s->stats.steps_rejected++;
            }
        }
        s->stats.steps_accepted++;
        s->stats.h_last = h;
        /* Hairer's stiffness test on the accepted step. */
        double num = 0.0, den = 0.0;
        for (size_t i = 0; i < n; i++) {
            const double dk = K[NS * n + i] - K[(NS - 1) * n + i], dyv = yn[i] - ysti[i];
            num += dk * dk;
            den += dyv * dyv;
        }
        if (den > 0 && fabs(h) * sqrt(num / den) > STIFF_HLAMB)
            s->stats.stiffness_flags++;
        /* dense output of this step onto the grid points it covers (t_eval <= t_new) */
        if (next_out < n_times && t[next_out] <= t_new) {
            for (size_t i = 0; i < n; i++)
                for (int q = 0; q < 4; q++) {
                    double acc = 0.0;
                    for (int j = 0; j <= NS; j++)
                        acc += K[j * n + i] * P[j][q];
                    Q[i * 4 + q] = acc;
                }
            while (next_out < n_times && t[next_out] <= t_new) {
                const double x = (t[next_out] - tc) / h;
                const double pw[4] = {x, x * x, x * x * x, x * x * x * x};
                /* Streaming (bl_ode_solve_observe): into tmp, free until the next step's stages. */
                double *out = s->out_fn ? tmp : y_out + next_out * n;
                for (size_t i = 0; i < n; i++) {
                    double acc = 0.0;
                    for (int q = 0; q < 4; q++)
                        acc += Q[i * 4 + q] * pw[q];
                    out[i] = h * acc + y[i];
                }
                if (s->out_fn && (st = bl_ode_emit(s, NULL, next_out, t[next_out], out, err)))
                    goto done;
                next_out++;
            }
        }
        memcpy(y, yn, n * sizeof *y);
        memcpy(K, K + NS * n, n * sizeof *K); /* FSAL */
        tc = t_new;
        if (tc >= t_end)
            break;
    }
    goto done;
rhs_failed:
    st = bl_fail(err, BL_ERR_INVALID, "dopri5: the right-hand side failed (%d) at t = %.17g", c.rc, c.rc_t);
done:
    free(w);
    return st;
}
