/* Explicit Euler: y_next = y + h * f(t, y). One stage; its operation order
 * (one multiply, one add per state) is what tests/oracles/test_solvers_scipy.py
 * repeats in NumPy. */
#include "solvers/solvers_impl.h"

static int euler_step(const bl_ode_system *sys, const double *p, double t, double h, const double *y,
                      double *y_next, double *Y, double *K)
{
    const size_t n = sys->n_states;
    for (size_t i = 0; i < n; i++)
        Y[i] = y[i];
    int rc = sys->rhs(sys->user, t, Y, p, K);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        y_next[i] = y[i] + h * K[i];
    return 0;
}

static const double euler_a[1] = {0.0};
static const double euler_b[1] = {1.0};
static const double euler_c[1] = {0.0};

const bl_ode_stepper bl_ode_stepper_euler = {
    .name = "euler", .order = 1, .stages = 1, .step = euler_step, .a = euler_a, .b = euler_b, .c = euler_c};
