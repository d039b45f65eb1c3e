/* Classic Runge-Kutta 4. The operation order is the contract (the NumPy
 * oracle repeats it, -ffp-contract=off keeps it):
 *   hh = h * 0.5, h6 = h / 6
 *   k1 = f(t, y)
 *   k2 = f(t + hh, y + hh * k1)
 *   k3 = f(t + hh, y + hh * k2)
 *   k4 = f(t + h,  y + h * k3)
 *   y_next = y + h6 * (((k1 + 2 * k2) + 2 * k3) + k4)        per state */
#include "solvers/solvers_impl.h"

static int rk4_step(const bl_ode_system *sys, const double *p, double t, double h, const double *y, double *y_next,
                    double *Y, double *K)
{
    const size_t n = sys->n_states;
    const double hh = h * 0.5, h6 = h / 6.0;
    double *Y1 = Y, *Y2 = Y + n, *Y3 = Y + 2 * n, *Y4 = Y + 3 * n;
    double *k1 = K, *k2 = K + n, *k3 = K + 2 * n, *k4 = K + 3 * n;
    int rc;
    for (size_t i = 0; i < n; i++)
        Y1[i] = y[i];
    if ((rc = sys->rhs(sys->user, t, Y1, p, k1)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        Y2[i] = y[i] + hh * k1[i];
    if ((rc = sys->rhs(sys->user, t + hh, Y2, p, k2)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        Y3[i] = y[i] + hh * k2[i];
    if ((rc = sys->rhs(sys->user, t + hh, Y3, p, k3)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        Y4[i] = y[i] + h * k3[i];
    if ((rc = sys->rhs(sys->user, t + h, Y4, p, k4)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++)
        y_next[i] = y[i] + h6 * (((k1[i] + 2.0 * k2[i]) + 2.0 * k3[i]) + k4[i]);
    return 0;
}

/* The tableau, for the derivative code (forward sensitivities, adjoint). */
static const double rk4_a[16] = {0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1.0, 0};
static const double rk4_b[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
static const double rk4_c[4] = {0, 0.5, 0.5, 1.0};

const bl_ode_stepper bl_ode_stepper_rk4 = {
    .name = "rk4", .order = 4, .stages = 4, .step = rk4_step, .a = rk4_a, .b = rk4_b, .c = rk4_c};
