/* The gradient of L = sum_k g(k, t_k, y_k) by the discrete adjoint of a
 * fixed-step explicit Runge-Kutta method: the exact derivative of the
 * computed trajectory. The forward sweep keeps the state at every step (the
 * only checkpoints); the reverse sweep recomputes each step's stages with the
 * stepper itself (so Y and K are the values the trajectory used) and runs, for
 * stage i = s..1,
 *   kbar_i = h b_i lambda + h sum_{j>i} a_ji Ybar_j,
 *   Ybar_i = J(Y_i)^T kbar_i,   pbar += P(Y_i)^T kbar_i,
 * then lambda += sum_i Ybar_i, and adds dg/dy at every output point. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

bl_status bl_ode_fixed_gradient(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                                bl_ode_objective_fn g, void *g_user, double *value, double *grad_p, double *grad_y0,
                                bl_error *err)
{
    const bl_ode_stepper *m = s->stepper;
    const size_t n = s->sys.n_states, np = s->sys.n_params, ns = m->stages;
    const size_t sub = s->opt.substeps;
    if (!s->sys.jac || (np && !s->sys.pjac))
        return bl_fail(err, BL_ERR_INVALID, "%s: the adjoint needs the system's jac and pjac", s->method);
    const size_t n_steps = (n_times - 1) * sub;
    /* the kept step states: at most 2^28 values (2 GiB), refused beyond rather than overcommitted */
    if (n_steps > (SIZE_MAX / sizeof(double) - 1) / n / 2 || (n_steps + 1) * n > ((size_t)1 << 28))
        return bl_fail(err, BL_ERR_NOMEM, "%s: %zu steps x %zu states is too many step states to keep for the adjoint",
                       s->method, n_steps, n);
    double *traj = malloc((n_steps + 1) * n * sizeof *traj);
    double *work = calloc(2 * ns * n + ns * n + 3 * n + n * n + n * (np ? np : 1), sizeof *work);
    if (!traj || !work) {
        free(traj);
        free(work);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu step states", s->method, n_steps + 1);
    }
    double *Y = work, *K = Y + ns * n, *Ybar = K + ns * n, *lam = Ybar + ns * n, *kbar = lam + n, *yn = kbar + n,
           *J = yn + n, *P = J + n * n;
    bl_status st = BL_OK;
    int rc = 0;
    double total = 0.0, gk = 0.0;
    memcpy(traj, y0, n * sizeof *traj);
    /* Forward: states at every step, objective at every output point. */
    for (size_t k = 0; k + 1 < n_times; k++) {
        const double h = (t[k + 1] - t[k]) / (double)sub;
        for (size_t j = 0; j < sub; j++) {
            const size_t q = k * sub + j;
            const double tj = t[k] + (double)j * h;
            if ((rc = m->step(&s->sys, p, tj, h, traj + q * n, traj + (q + 1) * n, Y, K)) != 0) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side failed (%d) in the step from t = %.17g",
                             s->method, rc, tj);
                goto done;
            }
            s->stats.rhs_evals += ns;
            s->stats.steps_accepted++;
            s->stats.h_last = h;
        }
    }
    for (size_t k = 0; k < n_times; k++) {
        if ((rc = g(g_user, k, t[k], traj + k * sub * n, &gk, kbar)) != 0) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: the objective failed (%d) at output point %zu", s->method, rc, k);
            goto done;
        }
        total += gk;
    }
    /* Reverse. */
    memset(lam, 0, n * sizeof *lam);
    if (np)
        memset(grad_p, 0, np * sizeof *grad_p);
    for (size_t k = n_times - 1;; k--) {
        if ((rc = g(g_user, k, t[k], traj + k * sub * n, &gk, kbar)) != 0) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: the objective failed (%d) at output point %zu", s->method, rc, k);
            goto done;
        }
        for (size_t i = 0; i < n; i++)
            lam[i] += kbar[i];
        if (k == 0)
            break;
        const double h = (t[k] - t[k - 1]) / (double)sub;
        for (size_t j = sub; j-- > 0;) {
            const size_t q = (k - 1) * sub + j;
            const double tj = t[k - 1] + (double)j * h;
            if ((rc = m->step(&s->sys, p, tj, h, traj + q * n, yn, Y, K)) != 0) {
                st = bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side failed (%d) in the step from t = %.17g",
                             s->method, rc, tj);
                goto done;
            }
            s->stats.rhs_evals += ns;
            for (size_t i = ns; i-- > 0;) {
                for (size_t r = 0; r < n; r++) {
                    double acc = m->b[i] * lam[r];
                    for (size_t jj = i + 1; jj < ns; jj++)
                        acc += m->a[jj * ns + i] * Ybar[jj * n + r];
                    kbar[r] = h * acc;
                }
                const double ti = tj + m->c[i] * h;
                double *Yb = Ybar + i * n;
                if (s->sys.vjp) { /* the structural nonzeros only: the same bits (solvers.h, bl_ode_vjp_fn) */
                    if ((rc = s->sys.vjp(s->sys.user, ti, Y + i * n, p, kbar, Yb, grad_p)) != 0) {
                        st = bl_fail(err, BL_ERR_INVALID, "%s: the Jacobian failed (%d) in the step from t = %.17g",
                                     s->method, rc, tj);
                        goto done;
                    }
                    s->stats.jac_evals++;
                    continue;
                }
                if ((rc = s->sys.jac(s->sys.user, ti, Y + i * n, p, J)) != 0 ||
                    (np && (rc = s->sys.pjac(s->sys.user, ti, Y + i * n, p, P)) != 0)) {
                    st = bl_fail(err, BL_ERR_INVALID, "%s: the Jacobian failed (%d) in the step from t = %.17g",
                                 s->method, rc, tj);
                    goto done;
                }
                s->stats.jac_evals++;
                memset(Yb, 0, n * sizeof *Yb);
                for (size_t r = 0; r < n; r++) {
                    const double kr = kbar[r];
                    if (kr == 0.0)
                        continue;
                    for (size_t c = 0; c < n; c++)
                        Yb[c] += J[r * n + c] * kr;
                    for (size_t c = 0; c < np; c++)
                        grad_p[c] += P[r * np + c] * kr;
                }
            }
            for (size_t i = 0; i < ns; i++)
                for (size_t r = 0; r < n; r++)
                    lam[r] += Ybar[i * n + r];
        }
    }
    for (size_t c = 0; c < np; c++)
        if (!isfinite(grad_p[c])) {
            st = bl_fail(err, BL_ERR_INVALID, "%s: the gradient of parameter %zu is not finite", s->method, c);
            goto done;
        }
    *value = total;
    if (grad_y0)
        memcpy(grad_y0, lam, n * sizeof *lam);
done:
    free(traj);
    free(work);
    return st;
}
