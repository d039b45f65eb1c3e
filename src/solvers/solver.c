/* The ODE solver handle: checks a system and options once, dispatches a solve
 * to its method (fixed.c, dopri5.c, sundials.c) and keeps the last solve's
 * statistics for the record. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/solvers_impl.h"

/* Far more states or parameters than any system we solve; keeps every
 * n * n and n * n_params product far from overflow. */
#define BL_ODE_MAX_DIM ((size_t)1 << 24)

static const char *const adaptive_methods[] = {"dopri5", "cvode-bdf", "arkode-dopri5"};
/* Fixed-step methods that are not steppers of ours: ARKODE's tables (sundials.c). */
static const char *const arkode_fixed_methods[] = {"arkode-rk4", "arkode-euler"};

int bl_ode_method_fixed_step(const char *method)
{
    if (!method)
        return 0;
    if (bl_ode_stepper_find(method))
        return 1;
    for (size_t i = 0; i < sizeof arkode_fixed_methods / sizeof arkode_fixed_methods[0]; i++)
        if (!strcmp(method, arkode_fixed_methods[i]))
            return 1;
    return 0;
}

void bl_ode_options_default(bl_ode_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->method = "rk4";
    opt->substeps = 1;
    opt->rtol = 1e-6;
    opt->atol = 1e-9;
    opt->max_steps = 100000;
}

bl_status bl_ode_solver_create(const bl_ode_system *sys, const bl_ode_options *opt, bl_ode_solver **out,
                               bl_error *err)
{
    if (!out)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_solver_create: out is NULL");
    *out = NULL;
    if (!sys || !opt)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_solver_create: system or options is NULL");
    if (!sys->rhs)
        return bl_fail(err, BL_ERR_INVALID, "ode system: rhs is NULL");
    if (sys->n_states == 0 || sys->n_states > BL_ODE_MAX_DIM)
        return bl_fail(err, BL_ERR_INVALID, "ode system: n_states %zu is not in 1..%zu", sys->n_states,
                       BL_ODE_MAX_DIM);
    if (sys->n_params > BL_ODE_MAX_DIM)
        return bl_fail(err, BL_ERR_INVALID, "ode system: n_params %zu exceeds %zu", sys->n_params, BL_ODE_MAX_DIM);
    const char *m = opt->method ? opt->method : "";
    const bl_ode_stepper *stepper = bl_ode_stepper_find(m);
    int adaptive = 0;
    for (size_t i = 0; i < sizeof adaptive_methods / sizeof adaptive_methods[0]; i++)
        adaptive |= !strcmp(m, adaptive_methods[i]);
    const int fixed = bl_ode_method_fixed_step(m);
    if (!fixed && !adaptive)
        return bl_fail(err, BL_ERR_INVALID, "ode options: method \"%s\" is unknown (euler, rk4, dopri5, cvode-bdf, "
                       "arkode-dopri5, arkode-rk4, arkode-euler)", m);
    if (fixed && opt->substeps == 0)
        return bl_fail(err, BL_ERR_INVALID, "ode options: substeps must be >= 1 for method %s", m);
    if (adaptive) {
        if (!(opt->rtol > 0 && opt->rtol < 1) || !(opt->atol > 0 && isfinite(opt->atol)))
            return bl_fail(err, BL_ERR_INVALID, "ode options: %s needs 0 < rtol < 1 and atol > 0 (got %g, %g)", m,
                           opt->rtol, opt->atol);
        if (!(opt->first_step >= 0 && isfinite(opt->first_step)) || !(opt->max_step >= 0 && isfinite(opt->max_step)))
            return bl_fail(err, BL_ERR_INVALID, "ode options: first_step and max_step must be finite and >= 0");
        if (opt->max_steps == 0)
            return bl_fail(err, BL_ERR_INVALID, "ode options: max_steps must be >= 1");
    }
    bl_ode_solver *s = calloc(1, sizeof *s);
    if (!s)
        return bl_fail(err, BL_ERR_NOMEM, "bl_ode_solver_create: out of memory");
    s->sys = *sys;
    s->opt = *opt;
    snprintf(s->method, sizeof s->method, "%s", m);
    s->opt.method = s->method;
    s->stepper = stepper;
    *out = s;
    return BL_OK;
}

void bl_ode_solver_destroy(bl_ode_solver *s)
{
    free(s);
}

void bl_ode_solver_stats(const bl_ode_solver *s, bl_ode_stats *out)
{
    *out = s->stats;
}

bl_status bl_ode_check_start(const bl_ode_solver *s, const double *t, size_t n_times, const double *y0,
                             const double *p, bl_error *err)
{
    const size_t n = s->sys.n_states;
    if (!t || !y0 || (s->sys.n_params && !p))
        return bl_fail(err, BL_ERR_INVALID, "%s: t, y0 or p is NULL", s->method);
    if (n_times < 2)
        return bl_fail(err, BL_ERR_INVALID, "%s: the output grid needs at least 2 times (got %zu)", s->method,
                       n_times);
    if (n_times > ((size_t)1 << 40) / n)
        return bl_fail(err, BL_ERR_NOMEM, "%s: %zu output times x %zu states is too large", s->method, n_times, n);
    for (size_t k = 0; k < n_times; k++) {
        if (!isfinite(t[k]))
            return bl_fail(err, BL_ERR_INVALID, "%s: output time %zu is not finite", s->method, k);
        if (k && !(t[k] > t[k - 1]))
            return bl_fail(err, BL_ERR_INVALID, "%s: output times must increase strictly (t[%zu] = %.17g after %.17g)",
                           s->method, k, t[k], t[k - 1]);
    }
    for (size_t i = 0; i < n; i++)
        if (!isfinite(y0[i]))
            return bl_fail(err, BL_ERR_INVALID, "%s: initial state %zu is not finite (%g)", s->method, i, y0[i]);
    for (size_t j = 0; j < s->sys.n_params; j++)
        if (!isfinite(p[j]))
            return bl_fail(err, BL_ERR_INVALID, "%s: parameter %zu is not finite (%g)", s->method, j, p[j]);
    double *f = malloc(n * sizeof *f);
    if (!f)
        return bl_fail(err, BL_ERR_NOMEM, "%s: out of memory", s->method);
    int rc = s->sys.rhs(s->sys.user, t[0], y0, p, f);
    bl_status st = BL_OK;
    if (rc)
        st = bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side failed (%d) at the initial state, t = %g", s->method,
                     rc, t[0]);
    for (size_t i = 0; st == BL_OK && i < n; i++)
        if (!isfinite(f[i]))
            st = bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side of state %zu is not finite (%g) at the initial "
                         "state, t = %g", s->method, i, f[i], t[0]);
    free(f);
    return st;
}

static void stats_reset(bl_ode_solver *s)
{
    memset(&s->stats, 0, sizeof s->stats);
    snprintf(s->stats.method, sizeof s->stats.method, "%s", s->method);
    if (!s->stepper) {
        s->stats.rtol = s->opt.rtol;
        s->stats.atol = s->opt.atol;
    }
}

/* Dense n x n Jacobians (CVODE's Newton matrix, the derivative sweeps) and
 * n x n_params sensitivity blocks are refused beyond 2^28 values (2 GiB)
 * rather than left to the allocator's overcommit. */
#define BL_ODE_MAX_BLOCK ((size_t)1 << 28)

static bl_status check_blocks(const bl_ode_solver *s, int dense_jac, int sens, bl_error *err)
{
    const size_t n = s->sys.n_states, np = s->sys.n_params;
    if (dense_jac && n > BL_ODE_MAX_BLOCK / n)
        return bl_fail(err, BL_ERR_NOMEM, "%s: a dense %zu x %zu Jacobian exceeds 2^28 values", s->method, n, n);
    if (sens && np > BL_ODE_MAX_BLOCK / n)
        return bl_fail(err, BL_ERR_NOMEM, "%s: %zu states x %zu parameters of sensitivities exceed 2^28 values",
                       s->method, n, np);
    return BL_OK;
}

bl_status bl_ode_emit(bl_ode_solver *s, double *y_out, size_t k, double t, const double *y, bl_error *err)
{
    const size_t n = s->sys.n_states;
    if (!s->out_fn) {
        memcpy(y_out + k * n, y, n * sizeof *y);
        return BL_OK;
    }
    int rc = s->out_fn(s->out_user, k, t, y);
    if (rc)
        return bl_fail(err, BL_ERR_INVALID, "%s: the output callback stopped the solve (%d) at output %zu, t = %.17g",
                       s->method, rc, k, t);
    return BL_OK;
}

static bl_status solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                       double *y_out, double *sens_out, bl_error *err)
{
    if (!s || (!y_out && !s->out_fn))
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_solve: solver or y_out is NULL");
    bl_status cb = check_blocks(s, !strcmp(s->method, "cvode-bdf") || sens_out, sens_out != NULL, err);
    if (cb)
        return cb;
    stats_reset(s);
    bl_status st = bl_ode_check_start(s, t, n_times, y0, p, err);
    if (st)
        return st;
    if (s->stepper)
        return bl_ode_fixed_solve(s, t, n_times, y0, p, y_out, sens_out, err);
    if (!strcmp(s->method, "dopri5")) {
        if (sens_out)
            return bl_fail(err, BL_ERR_UNSUPPORTED, "dopri5: sensitivities are not implemented (use rk4, euler or "
                           "cvode-bdf)");
        return bl_ode_dopri5_solve(s, t, n_times, y0, p, y_out, err);
    }
    if (sens_out && strcmp(s->method, "cvode-bdf"))
        return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: sensitivities are not implemented (use rk4, euler or cvode-bdf)",
                       s->method);
    return bl_ode_sundials_solve(s, t, n_times, y0, p, y_out, sens_out, err);
}

bl_status bl_ode_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                       double *y_out, bl_error *err)
{
    return solve(s, t, n_times, y0, p, y_out, NULL, err);
}

bl_status bl_ode_solve_observe(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                               bl_ode_output_fn out, void *user, bl_error *err)
{
    if (!s || !out)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_solve_observe: solver or output callback is NULL");
    s->out_fn = out;
    s->out_user = user;
    bl_status st = solve(s, t, n_times, y0, p, NULL, NULL, err);
    s->out_fn = NULL;
    s->out_user = NULL;
    return st;
}

bl_status bl_ode_solve_sens(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                            double *y_out, double *sens_out, bl_error *err)
{
    if (!sens_out)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_solve_sens: sens_out is NULL");
    if (s && s->sys.n_params == 0)
        return bl_fail(err, BL_ERR_INVALID, "%s: sensitivities need at least one parameter", s->method);
    return solve(s, t, n_times, y0, p, y_out, sens_out, err);
}

bl_status bl_ode_gradient(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                          bl_ode_objective_fn g, void *g_user, double *value, double *grad_p, double *grad_y0,
                          bl_error *err)
{
    if (!s || !g || !value || (s->sys.n_params && !grad_p))
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_gradient: solver, objective, value or grad_p is NULL");
    if (!s->stepper)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: the discrete adjoint is for the fixed-step methods (euler, rk4)",
                       s->method);
    bl_status cb = check_blocks(s, 1, 1, err);
    if (cb)
        return cb;
    stats_reset(s);
    bl_status st = bl_ode_check_start(s, t, n_times, y0, p, err);
    if (st)
        return st;
    return bl_ode_fixed_gradient(s, t, n_times, y0, p, g, g_user, value, grad_p, grad_y0, err);
}

bl_status bl_ode_hessian(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                         bl_ode_objective_fn g, bl_ode_objective_hvp_fn g_hvp, void *g_user, double *value,
                         double *grad_p, double *hess_p, bl_error *err)
{
    if (!s || !g || !value || !grad_p || !hess_p)
        return bl_fail(err, BL_ERR_INVALID, "bl_ode_hessian: solver, objective, value, grad_p or hess_p is NULL");
    if (!s->stepper)
        return bl_fail(err, BL_ERR_UNSUPPORTED, "%s: the Hessian is for the fixed-step methods (euler, rk4)",
                       s->method);
    if (s->sys.n_params == 0)
        return bl_fail(err, BL_ERR_INVALID, "%s: the Hessian needs at least one parameter", s->method);
    if (!s->sys.vjp_dir)
        return bl_fail(err, BL_ERR_INVALID, "%s: the Hessian needs the system's second-order callback vjp_dir",
                       s->method);
    bl_status cb = check_blocks(s, 1, 1, err);
    if (cb)
        return cb;
    stats_reset(s);
    bl_status st = bl_ode_check_start(s, t, n_times, y0, p, err);
    if (st)
        return st;
    return bl_ode_fixed_hessian(s, t, n_times, y0, p, g, g_hvp, g_user, value, grad_p, hess_p, err);
}
