/* The fixed-step driver: `substeps` equal steps per output interval,
 * h = (t[k+1] - t[k]) / substeps and step j starting at t[k] + j * h (the
 * mesh the NumPy oracle builds the same way), and the forward sensitivities of
 * that computed trajectory: every stage of the method differentiated with the
 * values the step itself used (Y, K),
 *   dY_i = S + h * sum_{j<i} a_ij dK_j,  dK_i = J(Y_i) dY_i + P(Y_i),
 *   S_next = S + h * sum_i b_i dK_i,
 * which is the exact derivative of the discrete map (up to rounding). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

static bl_status step_failed(const bl_ode_solver *s, int rc, double t, bl_error *err)
{
    return bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side failed (%d) in the step from t = %.17g", s->method,
                   rc, t);
}

static bl_status check_finite(const bl_ode_solver *s, const double *y, double t, bl_error *err)
{
    for (size_t i = 0; i < s->sys.n_states; i++)
        if (!isfinite(y[i]))
            return bl_fail(err, BL_ERR_INVALID, "%s: state %zu became non-finite (%g) at t = %.17g (step too large "
                           "for the system's stability?)", s->method, i, y[i], t);
    return BL_OK;
}

/* One stage-by-stage forward sensitivity update of S (n x np) over a step. */
static int sens_step(const bl_ode_solver *s, const double *p, double t, double h, const double *Y, double *S,
                     double *dK, double *dY, double *J, double *P)
{
    const bl_ode_stepper *m = s->stepper;
    const size_t n = s->sys.n_states, np = s->sys.n_params, ns = m->stages, nnp = n * np;
    int rc;
    for (size_t i = 0; i < ns; i++) {
        for (size_t q = 0; q < nnp; q++) {
            double acc = 0.0;
            for (size_t j = 0; j < i; j++)
                acc += m->a[i * ns + j] * dK[j * nnp + q];
            dY[q] = S[q] + h * acc;
        }
        const double ti = t + m->c[i] * h;
        if ((rc = s->sys.jac(s->sys.user, ti, Y + i * n, p, J)) != 0)
            return rc;
        if ((rc = s->sys.pjac(s->sys.user, ti, Y + i * n, p, P)) != 0)
            return rc;
        double *dKi = dK + i * nnp;
        for (size_t r = 0; r < n; r++)
            for (size_t c = 0; c < np; c++) {
                double acc = P[r * np + c];
                for (size_t l = 0; l < n; l++)
                    acc += J[r * n + l] * dY[l * np + c];
                dKi[r * np + c] = acc;
            }
    }
    for (size_t q = 0; q < nnp; q++) {
        double acc = 0.0;
        for (size_t i = 0; i < ns; i++)
            acc += m->b[i] * dK[i * nnp + q];
        S[q] += h * acc;
    }
    return 0;
}

bl_status bl_ode_fixed_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                             double *y_out, double *sens_out, bl_error *err)
{
    const bl_ode_stepper *m = s->stepper;
    const size_t n = s->sys.n_states, np = s->sys.n_params, ns = m->stages;
    const unsigned sub = s->opt.substeps;
    if (sens_out && (!s->sys.jac || !s->sys.pjac))
        return bl_fail(err, BL_ERR_INVALID, "%s: forward sensitivities need the system's jac and pjac", s->method);
    const size_t nnp = n * np;
    double *work = calloc(2 * ns * n + 2 * n, sizeof *work);
    double *sw = sens_out ? calloc(ns * nnp + nnp + n * n + nnp + nnp, sizeof *sw) : NULL;
    if (!work || (sens_out && !sw)) {
        free(work);
        free(sw);
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu states", s->method, n);
    }
    double *Y = work, *K = work + ns * n, *y = K + ns * n, *yn = y + n;
    double *dK = sw, *dY = sw ? dK + ns * nnp : NULL, *J = sw ? dY + nnp : NULL, *P = sw ? J + n * n : NULL,
           *S = sw ? P + nnp : NULL;
    memcpy(y, y0, n * sizeof *y);
    if (sens_out)
        memset(sens_out, 0, nnp * sizeof *sens_out);
    bl_status st = bl_ode_emit(s, y_out, 0, t[0], y0, err);
    for (size_t k = 0; k + 1 < n_times && st == BL_OK; k++) {
        const double h = (t[k + 1] - t[k]) / (double)sub;
        for (unsigned j = 0; j < sub; j++) {
            const double tj = t[k] + (double)j * h;
            int rc = m->step(&s->sys, p, tj, h, y, yn, Y, K);
            if (rc) {
                st = step_failed(s, rc, tj, err);
                break;
            }
            s->stats.rhs_evals += ns;
            s->stats.steps_accepted++;
            if (sens_out) {
                rc = sens_step(s, p, tj, h, Y, S, dK, dY, J, P);
                if (rc) {
                    st = bl_fail(err, BL_ERR_INVALID, "%s: the Jacobian failed (%d) in the step from t = %.17g",
                                 s->method, rc, tj);
                    break;
                }
                s->stats.jac_evals += ns;
            }
            memcpy(y, yn, n * sizeof *y);
            s->stats.h_last = h;
        }
        if (st == BL_OK)
            st = check_finite(s, y, t[k + 1], err);
        if (st == BL_OK) /* a failed step leaves y_out as it was (the callback sees only states reached) */
            st = bl_ode_emit(s, y_out, k + 1, t[k + 1], y, err);
        else if (!s->out_fn)
            memcpy(y_out + (k + 1) * n, y, n * sizeof *y);
        if (sens_out)
            memcpy(sens_out + (k + 1) * nnp, S, nnp * sizeof *S);
    }
    free(work);
    free(sw);
    return st;
}
