/* The Hessian of L = sum_k g(k, t_k, y_k) with respect to the parameters by
 * forward over adjoint: for each parameter direction e_j, the tangent of the
 * trajectory (S = dy/dp_j, stage by stage as fixed.c) and the tangent of the
 * discrete adjoint sweep of adjoint.c,
 *   kbar'_i = h (b_i lambda' + sum_{l>i} a_li Ybar'_l)
 *   Ybar'_i = J(Y_i)^T kbar'_i + D(J^T kbar_i)[dY_i, e_j]
 *   pbar'  += P(Y_i)^T kbar'_i + D(P^T kbar_i)[dY_i, e_j]
 *   lambda' += sum_i Ybar'_i, and d2g/dy2 S_k at output points,
 * so row j of the Hessian is pbar'. The second derivatives of f come from the
 * system's vjp_dir callback. Exact derivative of the computed trajectory, as
 * the gradient; cost: one tangent and one reverse sweep per parameter. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

bl_status bl_ode_fixed_hessian(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                               bl_ode_objective_fn g, bl_ode_objective_hvp_fn g_hvp, void *g_user, double *value,
                               double *grad_p, double *hess_p, bl_error *err)
{
    bl_status st = bl_ode_fixed_gradient(s, t, n_times, y0, p, g, g_user, value, grad_p, NULL, err);
    if (st)
        return st;
    const bl_ode_stepper *m = s->stepper;
    const bl_ode_system *sys = &s->sys;
    const size_t n = sys->n_states, np = sys->n_params, ns = m->stages, sub = s->opt.substeps;
    const size_t n_steps = (n_times - 1) * sub;
    if (np > 4096)
        return bl_fail(err, BL_ERR_INVALID, "%s: a Hessian of %zu parameters is too large for forward over adjoint",
                       s->method, np);
    double *traj = malloc((n_steps + 1) * n * sizeof *traj);
    double *tang = malloc((n_steps + 1) * n * sizeof *tang);
    double *w = calloc(6 * ns * n + 7 * n + n * n + n * np + 3 * np, sizeof *w);
    if (!traj || !tang || !w) {
        free(traj);
        free(tang);
        free(w);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu step states", s->method, n_steps + 1);
    }
    double *Y = w, *K = Y + ns * n, *dY = K + ns * n, *dK = dY + ns * n, *Yb = dK + ns * n, *Ybd = Yb + ns * n;
    double *lam = Ybd + ns * n, *lamd = lam + n, *kb = lamd + n, *kbd = kb + n, *yn = kbd + n, *gy = yn + n,
           *outy = gy + n;
    double *J = outy + n, *P = J + n * n, *ej = P + n * np, *pbd = ej + np, *outp = pbd + np;
    int rc = 0;
    double gk;
    const char *what = "right-hand side";
    memcpy(traj, y0, n * sizeof *traj);
    for (size_t q = 0; q < n_steps; q++) {
        const size_t k = q / sub;
        const double h = (t[k + 1] - t[k]) / (double)sub, tj = t[k] + (double)(q % sub) * h;
        if ((rc = m->step(sys, p, tj, h, traj + q * n, traj + (q + 1) * n, Y, K)) != 0)
            goto failed;
    }
/* Stage tangents of step q (from S = tang[q]) in direction ej: dY, dK. */
#define STAGE_TANGENTS(q, tj, h)                                                                                       \
    for (size_t i = 0; i < ns; i++) {                                                                                  \
        for (size_t r = 0; r < n; r++) {                                                                               \
            double acc = 0.0;                                                                                          \
            for (size_t l = 0; l < i; l++)                                                                             \
                acc += m->a[i * ns + l] * dK[l * n + r];                                                               \
            dY[i * n + r] = tang[(q)*n + r] + (h) * acc;                                                               \
        }                                                                                                              \
        const double ti = (tj) + m->c[i] * (h);                                                                        \
        what = "Jacobian";                                                                                             \
        if ((rc = sys->jac(sys->user, ti, Y + i * n, p, J)) != 0 || (rc = sys->pjac(sys->user, ti, Y + i * n, p, P))) \
            goto failed;                                                                                               \
        for (size_t r = 0; r < n; r++) {                                                                               \
            double acc = P[r * np + j];                                                                                \
            for (size_t l = 0; l < n; l++)                                                                             \
                acc += J[r * n + l] * dY[i * n + l];                                                                   \
            dK[i * n + r] = acc;                                                                                       \
        }                                                                                                              \
    }
    for (size_t j = 0; j < np; j++) {
        memset(ej, 0, np * sizeof *ej);
        ej[j] = 1.0;
        memset(tang, 0, n * sizeof *tang);
        for (size_t q = 0; q < n_steps; q++) {
            const size_t k = q / sub;
            const double h = (t[k + 1] - t[k]) / (double)sub, tj = t[k] + (double)(q % sub) * h;
            what = "right-hand side";
            if ((rc = m->step(sys, p, tj, h, traj + q * n, yn, Y, K)) != 0)
                goto failed;
            STAGE_TANGENTS(q, tj, h)
            for (size_t r = 0; r < n; r++) {
                double acc = 0.0;
                for (size_t i = 0; i < ns; i++)
                    acc += m->b[i] * dK[i * n + r];
                tang[(q + 1) * n + r] = tang[q * n + r] + h * acc;
            }
        }
        memset(lam, 0, n * sizeof *lam);
        memset(lamd, 0, n * sizeof *lamd);
        memset(pbd, 0, np * sizeof *pbd);
        for (size_t k = n_times - 1;; k--) {
            const double *yk = traj + k * sub * n, *Sk = tang + k * sub * n;
            what = "objective";
            if ((rc = g(g_user, k, t[k], yk, &gk, gy)) != 0)
                goto failed;
            for (size_t r = 0; r < n; r++)
                lam[r] += gy[r];
            if (g_hvp) {
                if ((rc = g_hvp(g_user, k, t[k], yk, Sk, gy)) != 0)
                    goto failed;
                for (size_t r = 0; r < n; r++)
                    lamd[r] += gy[r];
            }
            if (k == 0)
                break;
            const double h = (t[k] - t[k - 1]) / (double)sub;
            for (size_t jj = sub; jj-- > 0;) {
                const size_t q = (k - 1) * sub + jj;
                const double tj = t[k - 1] + (double)jj * h;
                what = "right-hand side";
                if ((rc = m->step(sys, p, tj, h, traj + q * n, yn, Y, K)) != 0)
                    goto failed;
                STAGE_TANGENTS(q, tj, h)
                for (size_t i = ns; i-- > 0;) {
                    for (size_t r = 0; r < n; r++) {
                        double a1 = m->b[i] * lam[r], a2 = m->b[i] * lamd[r];
                        for (size_t l = i + 1; l < ns; l++) {
                            a1 += m->a[l * ns + i] * Yb[l * n + r];
                            a2 += m->a[l * ns + i] * Ybd[l * n + r];
                        }
                        kb[r] = h * a1;
                        kbd[r] = h * a2;
                    }
                    const double ti = tj + m->c[i] * h;
                    what = "Jacobian";
                    if ((rc = sys->jac(sys->user, ti, Y + i * n, p, J)) != 0 ||
                        (rc = sys->pjac(sys->user, ti, Y + i * n, p, P)) != 0)
                        goto failed;
                    what = "second-order callback";
                    if ((rc = sys->vjp_dir(sys->user, ti, Y + i * n, p, kb, dY + i * n, ej, outy, outp)) != 0)
                        goto failed;
                    for (size_t c = 0; c < n; c++) {
                        Yb[i * n + c] = 0.0;
                        Ybd[i * n + c] = outy[c];
                    }
                    for (size_t c = 0; c < np; c++)
                        pbd[c] += outp[c];
                    for (size_t r = 0; r < n; r++) {
                        const double a1 = kb[r], a2 = kbd[r];
                        for (size_t c = 0; c < n; c++) {
                            Yb[i * n + c] += J[r * n + c] * a1;
                            Ybd[i * n + c] += J[r * n + c] * a2;
                        }
                        if (a2 != 0.0)
                            for (size_t c = 0; c < np; c++)
                                pbd[c] += P[r * np + c] * a2;
                    }
                }
                for (size_t i = 0; i < ns; i++)
                    for (size_t r = 0; r < n; r++) {
                        lam[r] += Yb[i * n + r];
                        lamd[r] += Ybd[i * n + r];
                    }
            }
        }
        for (size_t c = 0; c < np; c++) {
            if (!isfinite(pbd[c])) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: Hessian entry (%zu, %zu) is not finite", s->method, j, c);
                goto done;
            }
            hess_p[j * np + c] = pbd[c];
        }
    }
#undef STAGE_TANGENTS
    goto done;
failed:
    st = bl_fail(err, BL_ERR_INVALID, "%s: the %s failed (%d) in the Hessian sweeps", s->method, what, rc);
done:
    free(traj);
    free(tang);
    free(w);
    return st;
}
