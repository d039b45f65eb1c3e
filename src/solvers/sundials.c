/* SUNDIALS behind one file: "cvode-bdf" (CVODES: variable-order BDF, dense
 * Newton, optional user Jacobian, forward sensitivities) and "arkode-dopri5"
 * (ARKODE ERKStep with its Dormand-Prince 7-4-5 table: an independent
 * implementation of the method of dopri5.c, with ARKODE's own error norm and
 * step controller, so only tolerance-level agreement is expected), and
 * "arkode-rk4" / "arkode-euler": ERKStep with the classic RK4 and forward
 * Euler tableaux given as Butcher tables, at a fixed step on the mesh of
 * rk4.c / euler.c (substeps equal steps per output interval, one ARK_ONE_STEP
 * call per step). They are independent implementations of the fixed-step
 * methods: ARKODE forms the stages with its own vector operations (linear
 * combinations, another summation order) and advances t by accumulation, so
 * they agree with ours to rounding, not bit for bit.
 *
 * Only CVODES is linked, not CVODE: both define CVodeCreate & co., and CVODES
 * is the superset. SUNDIALS never prints: its error handler writes into the
 * solve's message, which becomes the bl_error. Output points are CVode/ERKStep
 * NORMAL-mode returns (interpolated inside the last step). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arkode/arkode_erkstep.h>
#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "solvers/solvers_impl.h"

typedef struct sd_ctx {
    bl_ode_solver *s;
    double *p; /* a copy: CVODES's difference-quotient sensitivities perturb it */
    size_t n, np;
    double *J, *P; /* n x n, n x np scratch (row-major, ours) */
    int user_rc;
    double user_t;
    char msg[512];
} sd_ctx;

static int rhs_cb(realtype t, N_Vector y, N_Vector ydot, void *data)
{
    sd_ctx *c = data;
    int rc = c->s->sys.rhs(c->s->sys.user, t, N_VGetArrayPointer(y), c->p, N_VGetArrayPointer(ydot));
    if (rc) {
        c->user_rc = rc;
        c->user_t = t;
        return -1; /* unrecoverable: the solver stops and reports */
    }
    const double *d = N_VGetArrayPointer(ydot);
    for (size_t i = 0; i < c->n; i++)
        if (!isfinite(d[i]))
            return 1; /* recoverable: CVODE retries with a smaller step */
    return 0;
}

static int jac_cb(realtype t, N_Vector y, N_Vector fy, SUNMatrix Jm, void *data, N_Vector t1, N_Vector t2,
                  N_Vector t3)
{
    sd_ctx *c = data;
    int rc = c->s->sys.jac(c->s->sys.user, t, N_VGetArrayPointer(y), c->p, c->J);
    if (rc) {
        c->user_rc = rc;
        c->user_t = t;
        return -1;
    }
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = 0; j < c->n; j++)
            SM_ELEMENT_D(Jm, i, j) = c->J[i * c->n + j];
    return 0;
}

/* s_k' = J s_k + df/dp_k for every parameter k. */
static int sens_cb(int Ns, realtype t, N_Vector y, N_Vector ydot, N_Vector *yS, N_Vector *ySdot, void *data,
                   N_Vector t1, N_Vector t2)
{
    sd_ctx *c = data;
    const double *yy = N_VGetArrayPointer(y);
    int rc = c->s->sys.jac(c->s->sys.user, t, yy, c->p, c->J);
    if (!rc)
        rc = c->s->sys.pjac(c->s->sys.user, t, yy, c->p, c->P);
    if (rc) {
        c->user_rc = rc;
        c->user_t = t;
        return -1;
    }
    const size_t n = c->n, np = c->np;
    for (int k = 0; k < Ns; k++) {
        const double *sk = N_VGetArrayPointer(yS[k]);
        double *dk = N_VGetArrayPointer(ySdot[k]);
        for (size_t i = 0; i < n; i++) {
            double acc = c->P[i * np + (size_t)k];
            for (size_t j = 0; j < n; j++)
                acc += c->J[i * n + j] * sk[j];
            dk[i] = acc;
        }
    }
    return 0;
}

static void err_cb(int code, const char *module, const char *function, char *msg, void *data)
{
    sd_ctx *c = data;
    snprintf(c->msg, sizeof c->msg, "%s %s (%d): %s", module, function, code, msg);
}

static bl_status fail_sd(sd_ctx *c, const char *what, int flag, double t, bl_error *err)
{
    if (c->user_rc)
        return bl_fail(err, BL_ERR_INVALID, "%s: the right-hand side or Jacobian failed (%d) at t = %.17g",
                       c->s->method, c->user_rc, c->user_t);
    return bl_fail(err, BL_ERR_INVALID, "%s: %s failed (%d) before t = %.17g: %s", c->s->method, what, flag, t,
                   c->msg[0] ? c->msg : "no message");
}

static bl_status cvode_solve(sd_ctx *c, SUNContext ctx, const double *t, size_t n_times, N_Vector y,
                             double *y_out, double *sens_out, bl_error *err)
{
    bl_ode_solver *s = c->s;
    const size_t n = c->n, np = c->np;
    bl_status st = BL_OK;
    SUNMatrix A = NULL;
    SUNLinearSolver LS = NULL;
    N_Vector *yS = NULL;
    void *cv = CVodeCreate(CV_BDF, ctx);
    if (!cv)
        return bl_fail(err, BL_ERR_NOMEM, "cvode-bdf: CVodeCreate failed");
    int flag = CVodeSetErrHandlerFn(cv, err_cb, c);
    if (!flag)
        flag = CVodeInit(cv, rhs_cb, t[0], y);
    if (!flag)
        flag = CVodeSetUserData(cv, c);
    if (!flag)
        flag = CVodeSStolerances(cv, s->opt.rtol, s->opt.atol);
    if (!flag)
        flag = CVodeSetMaxNumSteps(cv, (long)(s->opt.max_steps > 0x7fffffffL ? 0x7fffffffL : s->opt.max_steps));
    if (!flag && s->opt.first_step > 0)
        flag = CVodeSetInitStep(cv, s->opt.first_step);
    if (!flag && s->opt.max_step > 0)
        flag = CVodeSetMaxStep(cv, s->opt.max_step);
    if (flag) {
        st = fail_sd(c, "setup", flag, t[0], err);
        goto done;
    }
    A = SUNDenseMatrix((sunindextype)n, (sunindextype)n, ctx);
    LS = A ? SUNLinSol_Dense(y, A, ctx) : NULL;
    if (!LS) {
        st = bl_fail(err, BL_ERR_NOMEM, "cvode-bdf: no dense matrix for %zu states", n);
        goto done;
    }
    flag = CVodeSetLinearSolver(cv, LS, A);
    if (!flag && s->sys.jac)
        flag = CVodeSetJacFn(cv, jac_cb);
    if (!flag && sens_out) {
        yS = N_VCloneVectorArray((int)np, y);
        if (!yS) {
            st = bl_fail(err, BL_ERR_NOMEM, "cvode-bdf: no sensitivity vectors for %zu parameters", np);
            goto done;
        }
        for (size_t k = 0; k < np; k++)
            N_VConst(0.0, yS[k]);
        const int user_sens = s->sys.jac && s->sys.pjac;
        flag = CVodeSensInit(cv, (int)np, CV_SIMULTANEOUS, user_sens ? sens_cb : NULL, yS);
        if (!flag && !user_sens)
            flag = CVodeSetSensParams(cv, c->p, NULL, NULL);
        if (!flag)
            flag = CVodeSensEEtolerances(cv);
        if (!flag)
            flag = CVodeSetSensErrCon(cv, SUNTRUE);
    }
    if (flag) {
        st = fail_sd(c, "setup", flag, t[0], err);
        goto done;
    }
    if ((st = bl_ode_emit(s, y_out, 0, t[0], N_VGetArrayPointer(y), err)))
        goto done;
    if (sens_out)
        memset(sens_out, 0, n * np * sizeof *sens_out);
    for (size_t k = 1; k < n_times; k++) {
        realtype tret;
        flag = CVode(cv, t[k], y, &tret, CV_NORMAL);
        if (flag < 0) {
            st = fail_sd(c, "CVode", flag, t[k], err);
            goto stats;
        }
        if ((st = bl_ode_emit(s, y_out, k, t[k], N_VGetArrayPointer(y), err)))
            goto stats;
        if (sens_out) {
            flag = CVodeGetSens(cv, &tret, yS);
            if (flag < 0) {
                st = fail_sd(c, "CVodeGetSens", flag, t[k], err);
                goto stats;
            }
            for (size_t j = 0; j < np; j++) {
                const double *v = N_VGetArrayPointer(yS[j]);
                for (size_t i = 0; i < n; i++)
                    sens_out[(k * n + i) * np + j] = v[i];
            }
        }
    }
stats:;
    long nst = 0, netf = 0, nfe = 0, nje = 0, ncfn = 0;
    realtype hlast = 0;
    CVodeGetNumSteps(cv, &nst);
    CVodeGetNumErrTestFails(cv, &netf);
    CVodeGetNumRhsEvals(cv, &nfe);
    CVodeGetNumJacEvals(cv, &nje);
    CVodeGetNumNonlinSolvConvFails(cv, &ncfn);
    CVodeGetLastStep(cv, &hlast);
    s->stats.steps_accepted = (uint64_t)nst;
    s->stats.steps_rejected = (uint64_t)netf;
    s->stats.rhs_evals = (uint64_t)nfe;
    s->stats.jac_evals = (uint64_t)nje;
    s->stats.nonlinear_failures = (uint64_t)ncfn;
    s->stats.h_last = hlast;
done:
    if (yS)
        N_VDestroyVectorArray(yS, (int)np);
    CVodeFree(&cv);
    if (LS)
        SUNLinSolFree(LS);
    if (A)
        SUNMatDestroy(A);
    return st;
}

/* The fixed-step tableaux (rk4.c, euler.c), row-major A. */
static realtype rk4_c[4] = {0, 0.5, 0.5, 1}, rk4_b[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
static realtype rk4_a[16] = {0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 1, 0};
static realtype euler_c[1] = {0}, euler_b[1] = {1}, euler_a[1] = {0};

static bl_status arkode_solve(sd_ctx *c, SUNContext ctx, const double *t, size_t n_times, N_Vector y,
                              double *y_out, bl_error *err)
{
    bl_ode_solver *s = c->s;
    bl_status st = BL_OK;
    const int rk4 = !strcmp(s->method, "arkode-rk4"), fixed = rk4 || !strcmp(s->method, "arkode-euler");
    uint64_t fixed_steps = 0;
    ARKodeButcherTable tab = NULL;
    void *ark = ERKStepCreate(rhs_cb, t[0], y, ctx);
    if (!ark)
        return bl_fail(err, BL_ERR_NOMEM, "%s: ERKStepCreate failed", s->method);
    int flag = ERKStepSetErrHandlerFn(ark, err_cb, c);
    if (!flag)
        flag = ERKStepSetUserData(ark, c);
    if (fixed) {
        tab = rk4 ? ARKodeButcherTable_Create(4, 4, 0, rk4_c, rk4_a, rk4_b, NULL)
                  : ARKodeButcherTable_Create(1, 1, 0, euler_c, euler_a, euler_b, NULL);
        if (!tab) {
            st = bl_fail(err, BL_ERR_NOMEM, "%s: ARKodeButcherTable_Create failed", s->method);
            goto done;
        }
        if (!flag)
            flag = ERKStepSetFixedStep(ark, (t[1] - t[0]) / (double)s->opt.substeps);
        if (!flag)
            flag = ERKStepSetTable(ark, tab);
    } else {
        if (!flag)
            flag = ERKStepSStolerances(ark, s->opt.rtol, s->opt.atol);
        if (!flag)
            flag = ERKStepSetTableNum(ark, ARKODE_DORMAND_PRINCE_7_4_5);
    }
    if (!flag && !fixed)
        flag = ERKStepSetMaxNumSteps(ark, (long)(s->opt.max_steps > 0x7fffffffL ? 0x7fffffffL : s->opt.max_steps));
    if (!flag && s->opt.first_step > 0)
        flag = ERKStepSetInitStep(ark, s->opt.first_step);
    if (!flag && s->opt.max_step > 0)
        flag = ERKStepSetMaxStep(ark, s->opt.max_step);
    if (flag) {
        st = fail_sd(c, "setup", flag, t[0], err);
        goto done;
    }
    if ((st = bl_ode_emit(s, y_out, 0, t[0], N_VGetArrayPointer(y), err)))
        goto done;
    for (size_t k = 1; k < n_times; k++) {
        realtype tret;
        if (fixed) {
            /* substeps steps of h = (t[k] - t[k-1]) / substeps, each from t[k-1] + j h as in fixed.c, one
             * ONE_STEP call each after ERKStepReset. The reset also works around SUNDIALS < 6.6's ERKStep
             * treating every table with c[s-1] = 1 as first-same-as-last (llnl/sundials issue 311): RK4's
             * next first stage would otherwise be its last stage's derivative, not f(t_n+1, y_n+1). */
            const double h = (t[k] - t[k - 1]) / (double)s->opt.substeps;
            flag = ERKStepSetFixedStep(ark, h);
            for (unsigned j = 0; j < s->opt.substeps && flag >= 0; j++) {
                flag = ERKStepReset(ark, t[k - 1] + (double)j * h, y);
                if (flag >= 0)
                    flag = ERKStepEvolve(ark, t[k], y, &tret, ARK_ONE_STEP);
                fixed_steps++;
            }
        } else {
            flag = ERKStepEvolve(ark, t[k], y, &tret, ARK_NORMAL);
        }
        if (flag < 0) {
            st = fail_sd(c, "ERKStepEvolve", flag, t[k], err);
            break;
        }
        if ((st = bl_ode_emit(s, y_out, k, t[k], N_VGetArrayPointer(y), err)))
            break;
    }
    long nst = 0, netf = 0, nfe = 0;
    realtype hlast = 0;
    ERKStepGetNumSteps(ark, &nst);
    ERKStepGetNumErrTestFails(ark, &netf);
    ERKStepGetNumRhsEvals(ark, &nfe);
    ERKStepGetLastStep(ark, &hlast);
    s->stats.steps_accepted = fixed ? fixed_steps : (uint64_t)nst; /* a reset restarts ARKODE's step count */
    s->stats.steps_rejected = (uint64_t)netf;
    s->stats.rhs_evals = (uint64_t)nfe;
    s->stats.h_last = hlast;
done:
    ERKStepFree(&ark);
    if (tab)
        ARKodeButcherTable_Free(tab);
    return st;
}

bl_status bl_ode_sundials_solve(bl_ode_solver *s, const double *t, size_t n_times, const double *y0, const double *p,
                                double *y_out, double *sens_out, bl_error *err)
{
    const size_t n = s->sys.n_states, np = s->sys.n_params;
    sd_ctx c = {.s = s, .n = n, .np = np};
    c.p = calloc(np ? np : 1, sizeof *c.p);
    c.J = calloc(n * n, sizeof *c.J);
    c.P = calloc(n * (np ? np : 1), sizeof *c.P);
    SUNContext ctx = NULL;
    N_Vector y = NULL;
    bl_status st = BL_OK;
    if (!c.p || !c.J || !c.P) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: out of memory for %zu states", s->method, n);
        goto done;
    }
    if (np)
        memcpy(c.p, p, np * sizeof *c.p);
    if (SUNContext_Create(NULL, &ctx) || !(y = N_VNew_Serial((sunindextype)n, ctx))) {
        st = bl_fail(err, BL_ERR_NOMEM, "%s: SUNDIALS context or vector could not be made", s->method);
        goto done;
    }
    memcpy(N_VGetArrayPointer(y), y0, n * sizeof *y0);
    if (!strcmp(s->method, "cvode-bdf"))
        st = cvode_solve(&c, ctx, t, n_times, y, y_out, sens_out, err);
    else
        st = arkode_solve(&c, ctx, t, n_times, y, y_out, err);
done:
    if (y)
        N_VDestroy(y);
    if (ctx)
        SUNContext_Free(&ctx);
    free(c.p);
    free(c.J);
    free(c.P);
    return st;
}
