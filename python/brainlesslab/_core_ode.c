/* brainlesslab._core.solve_ode: an ODE system (built-in, or in the model
 * language) solved on a grid, its observations, sensitivities and adjoint
 * gradient returned as NumPy arrays without a copy: every result lives in one
 * C block owned by a capsule, and each array is a view whose base is that
 * capsule (the block is freed when the last view goes). The GIL is released
 * during the solve. */
#include "_core.h"

#include <stdlib.h>
#include <string.h>

#include "brainlesslab/odelang.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/solvers.h"

#define ODE_CAPSULE "brainlesslab.ode_result"
/* A loaded ode plan (ode_plan's "plan"): solve_ode(plan=...) takes the
 * derivatives of its [ode.gradient] from the library (bl_plan_ode_gradient),
 * the code `brainlesslab run` records them with. */
#define PLAN_CAPSULE "brainlesslab.ode_plan"

static void block_free(PyObject *cap)
{
    free(PyCapsule_GetPointer(cap, ODE_CAPSULE));
}

static void plan_free(PyObject *cap)
{
    bl_plan_destroy(PyCapsule_GetPointer(cap, PLAN_CAPSULE));
}

/* A list of str (or None) into a C array of UTF-8 pointers borrowed from it. */
static int str_list(PyObject *o, const char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (o == Py_None)
        return 0;
    if (!PyList_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "expected a list of str");
        return -1;
    }
    *n = (size_t)PyList_GET_SIZE(o);
    *out = calloc(*n + 1, sizeof **out);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (!((*out)[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(o, (Py_ssize_t)i))))
            return -1;
    return 0;
}

/* A float64 C-contiguous copy-free view (a converted array when needed). */
static PyArrayObject *f64(PyObject *o)
{
    if (o == Py_None)
        return NULL;
    return (PyArrayObject *)PyArray_FROMANY(o, NPY_FLOAT64, 0, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
}

typedef struct wobj {
    const double *w; /* n_times x n */
    size_t n;
} wobj;

static int weighted(void *u, size_t k, double t, const double *y, double *v, double *dv)
{
    (void)t;
    const wobj *o = u;
    double acc = 0.0;
    for (size_t i = 0; i < o->n; i++) {
        dv[i] = o->w[k * o->n + i];
        acc += dv[i] * y[i];
    }
    *v = acc;
    return 0;
}

PyObject *bl_py_solve_ode(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"equations", "system", "states", "param_names", "param_values", "init_names",
                            "init_values", "observe_names", "observe_exprs", "t", "method", "substeps", "rtol",
                            "atol", "max_steps", "params", "y0", "sensitivities", "weights", "hessian", "plan", NULL};
    const char *equations = NULL, *system = NULL, *method = "rk4";
    Py_ssize_t states = 0;
    PyObject *pn_o = Py_None, *pv_o = Py_None, *in_o = Py_None, *iv_o = Py_None, *on_o = Py_None, *oe_o = Py_None;
    PyObject *t_o, *p_o = Py_None, *y0_o = Py_None, *w_o = Py_None, *plan_o = Py_None;
    unsigned int substeps = 1;
    double rtol = 1e-6, atol = 1e-9;
    unsigned long long max_steps = 100000;
    int sens = 0, hess = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "zznOOOOOOO|sIddKOOpOpO", names, &equations, &system, &states, &pn_o,
                                     &pv_o, &in_o, &iv_o, &on_o, &oe_o, &t_o, &method, &substeps, &rtol, &atol,
                                     &max_steps, &p_o, &y0_o, &sens, &w_o, &hess, &plan_o))
        return NULL;
    /* The plan's [ode.gradient], unless gradient_weights replaces it. */
    const bl_plan *plan = NULL;
    bl_ode_plan_view pv_plan;
    memset(&pv_plan, 0, sizeof pv_plan);
    if (plan_o != Py_None) {
        bl_error perr = {0};
        if (!(plan = PyCapsule_GetPointer(plan_o, PLAN_CAPSULE)))
            return NULL;
        if (bl_plan_ode(plan, &pv_plan, &perr))
            return bl_py_raise(&perr);
    }
    const int plan_grad = plan && pv_plan.gradient && w_o == Py_None;
    hess = hess || (plan_grad && pv_plan.hessian);
    if (hess && w_o == Py_None && !plan_grad) {
        PyErr_SetString(PyExc_ValueError, "hessian=True needs gradient_weights or a plan with [ode.gradient] "
                                          "(the objective)");
        return NULL;
    }
    const char **pn = NULL, **in = NULL, **on = NULL, **oe = NULL;
    size_t npn = 0, nin = 0, non = 0, noe = 0;
    PyArrayObject *pv = NULL, *iv = NULL, *ta = NULL, *pa = NULL, *ya = NULL, *wa = NULL;
    bl_ode_builtin *b = NULL;
    bl_ode_lang *l = NULL;
    bl_ode_solver *solver = NULL;
    PyObject *result = NULL, *cap = NULL;
    bl_error err = {0};
    bl_status st = BL_OK;
    if (str_list(pn_o, &pn, &npn) || str_list(in_o, &in, &nin) || str_list(on_o, &on, &non) ||
        str_list(oe_o, &oe, &noe))
        goto out;
    if ((pv_o != Py_None && !(pv = f64(pv_o))) || (iv_o != Py_None && !(iv = f64(iv_o))) || !(ta = f64(t_o)) ||
        (p_o != Py_None && !(pa = f64(p_o))) || (y0_o != Py_None && !(ya = f64(y0_o))) ||
        (w_o != Py_None && !(wa = f64(w_o))))
        goto out;
    if ((pv && (size_t)PyArray_SIZE(pv) != npn) || (iv && (size_t)PyArray_SIZE(iv) != nin) || non != noe) {
        PyErr_SetString(PyExc_ValueError, "names and values differ in length");
        goto out;
    }
    if (equations) {
        bl_ode_lang_source src = {equations, npn, pn, pv ? PyArray_DATA(pv) : NULL, nin, in,
                                  iv ? PyArray_DATA(iv) : NULL, non, on, oe};
        st = bl_ode_lang_compile(&src, &l, &err);
        /* generated C as a plan's run has it (BL_EQ_JIT=0: the interpreter; same bits) */
        if (!st)
            st = bl_ode_lang_codegen(l, BL_EQ_EXEC_AUTO, &err);
    } else if (system) {
        st = bl_ode_builtin_create(system, (size_t)states, &b, &err);
    } else {
        PyErr_SetString(PyExc_ValueError, "give equations or a built-in system");
        goto out;
    }
    if (st) {
        bl_py_raise(&err);
        goto out;
    }
    const bl_ode_system *sys = l ? bl_ode_lang_system(l) : bl_ode_builtin_system(b);
    const size_t n = sys->n_states, np = sys->n_params, nt = (size_t)PyArray_SIZE(ta);
    /* cvode-bdf's gradient contracts the sensitivities: solved whether or not they are returned */
    const int fixed = bl_ode_method_fixed_step(method), grad = wa != NULL || plan_grad;
    const int solve_sens = sens || (plan_grad && !fixed);
    if (plan_grad && nt != pv_plan.n_times) {
        PyErr_Format(PyExc_ValueError, "the plan's gradient is on its grid of %zu times, not %zu", pv_plan.n_times, nt);
        goto out;
    }
    const size_t no = l ? bl_ode_lang_n_observe(l) : 0;
    const double *p = pa ? PyArray_DATA(pa) : (l ? bl_ode_lang_params(l) : bl_ode_builtin_params(b));
    const double *y0 = ya ? PyArray_DATA(ya) : (l ? bl_ode_lang_y0(l) : bl_ode_builtin_y0(b));
    if ((pa && (size_t)PyArray_SIZE(pa) != np) || (ya && (size_t)PyArray_SIZE(ya) != n) ||
        (wa && (size_t)PyArray_SIZE(wa) != nt * n && (size_t)PyArray_SIZE(wa) != n)) {
        PyErr_Format(PyExc_ValueError, "params must have %zu values, y0 %zu, weights %zu or %zu x %zu", np, n, n, nt, n);
        goto out;
    }
    bl_ode_options o;
    bl_ode_options_default(&o);
    o.method = method;
    o.substeps = substeps;
    o.rtol = rtol;
    o.atol = atol;
    o.max_steps = max_steps;
    if (bl_ode_solver_create(sys, &o, &solver, &err)) {
        bl_py_raise(&err);
        goto out;
    }
    /* One block: t, y, observations, sensitivities, gradient (p then y0, value), weights, then the
     * Hessian and its sweep's own gradient (scratch) when asked. */
    const size_t ns = solve_sens ? nt * n * np : 0, ng = grad ? np + n + 1 : 0, nw = wa ? nt * n : 0;
    const size_t nh = hess ? np * np + np + 1 : 0;
    const size_t total = nt + nt * n + nt * no + ns + ng + nw + nh;
    double *block = calloc(total ? total : 1, sizeof *block);
    if (!block) {
        PyErr_NoMemory();
        goto out;
    }
    if (!(cap = PyCapsule_New(block, ODE_CAPSULE, block_free))) {
        free(block);
        goto out;
    }
    double *T = block, *Y = T + nt, *O = Y + nt * n, *S = O + nt * no, *G = S + ns, *W = G + ng, *H = W + nw;
    memcpy(T, PyArray_DATA(ta), nt * sizeof *T);
    if (wa) {
        if ((size_t)PyArray_SIZE(wa) == n) /* weights of the final state only */
            memcpy(W + (nt - 1) * n, PyArray_DATA(wa), n * sizeof *W);
        else
            memcpy(W, PyArray_DATA(wa), nt * n * sizeof *W);
    }
    if (l && (st = bl_ode_lang_check_finite(l, T[0], y0, p, &err))) {
        bl_py_raise(&err);
        goto out;
    }
    Py_BEGIN_ALLOW_THREADS
    st = solve_sens ? bl_ode_solve_sens(solver, T, nt, y0, p, Y, S, &err)
                    : bl_ode_solve(solver, T, nt, y0, p, Y, &err);
    for (size_t k = 0; !st && k < nt && no; k++)
        bl_ode_lang_observe(l, T[k], Y + k * n, p, O + k * no);
    if (!st && wa) {
        wobj wo = {W, n};
        st = bl_ode_gradient(solver, T, nt, y0, p, weighted, &wo, G + np + n, G, G + np, &err);
        /* w . y is linear in y: no d2g/dy2 */
        if (!st && hess)
            st = bl_ode_hessian(solver, T, nt, y0, p, weighted, NULL, &wo, H + np * np + np, H + np * np, H, &err);
    } else if (!st && plan_grad) {
        st = bl_plan_ode_gradient(plan, solver, y0, p, Y, S, G + np + n, G, fixed ? G + np : NULL, hess ? H : NULL,
                                  &err);
    }
    Py_END_ALLOW_THREADS
    if (st) {
        bl_ode_lang_explain(l, &err);
        bl_py_raise(&err);
        goto out;
    }
    bl_ode_stats so;
    bl_ode_solver_stats(solver, &so);
    result = PyDict_New();
    if (!result)
        goto out;
    npy_intp s1[1] = {(npy_intp)nt}, s2[2] = {(npy_intp)nt, (npy_intp)n}, so2[2] = {(npy_intp)nt, (npy_intp)no},
             s3[3] = {(npy_intp)nt, (npy_intp)n, (npy_intp)np}, sp[1] = {(npy_intp)np}, sy[1] = {(npy_intp)n},
             sh[2] = {(npy_intp)np, (npy_intp)np};
    struct {
        const char *key;
        int nd;
        npy_intp *shape;
        double *data;
        int want;
    } arrays[] = {{"t", 1, s1, T, 1}, {"y", 2, s2, Y, 1}, {"observations", 2, so2, O, no > 0},
                  {"sensitivities", 3, s3, S, sens}, {"gradient", 1, sp, G, grad},
                  {"gradient_y0", 1, sy, G + np, wa != NULL || (plan_grad && fixed)}, {"hessian", 2, sh, H, hess}};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
        if (!arrays[k].want)
            continue;
        PyObject *a = bl_py_view(cap, arrays[k].nd, arrays[k].shape, NPY_FLOAT64, arrays[k].data, 1);
        if (!a || PyDict_SetItemString(result, arrays[k].key, a) < 0) {
            Py_XDECREF(a);
            Py_CLEAR(result);
            goto out;
        }
        Py_DECREF(a);
    }
    PyObject *stats = Py_BuildValue("{s:s,s:K,s:K,s:K,s:K,s:d}", "method", so.method, "steps_accepted",
                                    (unsigned long long)so.steps_accepted, "steps_rejected",
                                    (unsigned long long)so.steps_rejected, "rhs_evals",
                                    (unsigned long long)so.rhs_evals, "jac_evals", (unsigned long long)so.jac_evals,
                                    "h_last", so.h_last);
    PyObject *value = grad ? PyFloat_FromDouble(G[np + n]) : Py_NewRef(Py_None);
    PyObject *sn = PyList_New((Py_ssize_t)n), *pnl = PyList_New((Py_ssize_t)np), *onl = PyList_New((Py_ssize_t)no);
    for (size_t i = 0; sn && i < n; i++) {
        char d[32];
        snprintf(d, sizeof d, "y%zu", i);
        PyList_SET_ITEM(sn, (Py_ssize_t)i, PyUnicode_FromString(l ? bl_ode_lang_state_name(l, i) : d));
    }
    for (size_t i = 0; pnl && i < np; i++) {
        char d[32];
        snprintf(d, sizeof d, "p%zu", i);
        PyList_SET_ITEM(pnl, (Py_ssize_t)i, PyUnicode_FromString(l ? bl_ode_lang_param_name(l, i) : d));
    }
    for (size_t i = 0; onl && i < no; i++)
        PyList_SET_ITEM(onl, (Py_ssize_t)i, PyUnicode_FromString(bl_ode_lang_observe_name(l, i)));
    if (!stats || !value || !sn || !pnl || !onl || PyDict_SetItemString(result, "stats", stats) < 0 ||
        PyDict_SetItemString(result, "value", value) < 0 || PyDict_SetItemString(result, "state_names", sn) < 0 ||
        PyDict_SetItemString(result, "param_names", pnl) < 0 ||
        PyDict_SetItemString(result, "observe_names", onl) < 0)
        Py_CLEAR(result);
    Py_XDECREF(stats);
    Py_XDECREF(value);
    Py_XDECREF(sn);
    Py_XDECREF(pnl);
    Py_XDECREF(onl);
out:
    Py_XDECREF(cap);
    bl_ode_solver_destroy(solver);
    bl_ode_builtin_destroy(b);
    bl_ode_lang_destroy(l);
    free(pn), free(in), free(on), free(oe);
    Py_XDECREF(pv), Py_XDECREF(iv), Py_XDECREF(ta), Py_XDECREF(pa), Py_XDECREF(ya), Py_XDECREF(wa);
    return result;
}

static PyObject *copy_f64(const double *v, size_t n)
{
    npy_intp shape[1] = {(npy_intp)n};
    PyObject *a = PyArray_SimpleNew(1, shape, NPY_FLOAT64);
    if (a && n)
        memcpy(PyArray_DATA((PyArrayObject *)a), v, n * sizeof *v);
    return a;
}

static PyObject *str_list_of(const char *const *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *u = PyUnicode_FromString(v[i]);
        if (!u) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, u);
    }
    return l;
}

/* The resolved [ode] section of a plan, loaded and checked by the library
 * (the inputs of a solve: small, so copied). */
PyObject *bl_py_ode_plan(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    bl_plan *plan = NULL;
    bl_error err = {0};
    bl_ode_plan_view v;
    if (bl_plan_load(path, &plan, &err) || bl_plan_ode(plan, &v, &err)) {
        bl_plan_destroy(plan);
        return bl_py_raise(&err);
    }
    PyObject *pn = v.param_names ? str_list_of(v.param_names, v.n_params) : Py_NewRef(Py_None);
    PyObject *on = str_list_of(v.observe_names, v.n_observe), *oe = str_list_of(v.observe_exprs, v.n_observe);
    PyObject *t = copy_f64(v.t, v.n_times), *y0 = copy_f64(v.y0, v.n_states), *p = copy_f64(v.p, v.n_params);
    PyObject *d = NULL, *cap = PyCapsule_New(plan, PLAN_CAPSULE, plan_free);
    if (!cap)
        bl_plan_destroy(plan);
    if (cap && pn && on && oe && t && y0 && p)
        d = Py_BuildValue("{s:s,s:z,s:n,s:s,s:I,s:d,s:d,s:K,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:s,s:O,s:O,s:O}", "system",
                          v.system, "equations", v.equations, "states", (Py_ssize_t)v.states_hint, "method", v.method,
                          "substeps", v.substeps, "rtol", v.rtol, "atol", v.atol, "max_steps",
                          (unsigned long long)v.max_steps, "sensitivities", v.sensitivities ? Py_True : Py_False,
                          "retain_observations", v.retain_observations ? Py_True : Py_False, "t", t, "y0", y0,
                          "params", p, "param_names", pn, "observe_names", on, "observe_exprs", oe, "id",
                          bl_plan_id(plan), "gradient", v.gradient ? Py_True : Py_False, "hessian",
                          v.hessian ? Py_True : Py_False, "plan", cap);
    Py_XDECREF(pn), Py_XDECREF(on), Py_XDECREF(oe), Py_XDECREF(t), Py_XDECREF(y0), Py_XDECREF(p);
    Py_XDECREF(cap); /* the dict holds the plan now, or nothing does */
    return d;
}
