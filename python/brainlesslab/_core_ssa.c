/* brainlesslab._core.run_ssa: a bank of SSA replicates (bl_ssa_run) returned
 * as NumPy arrays without a copy: counts (replicates x times x species,
 * int64), events (uint64) and t live in one C block owned by a capsule, each
 * array a view whose base is that capsule, as solve_ode does. The GIL is
 * released during the run. ssa_plan(path) gives a plan's resolved JSON (the
 * values `brainlesslab run` uses), checked to be an `operation = "ssa"`. */
#include "_core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/plan.h"
#include "brainlesslab/solvers.h"

#define SSA_CAPSULE "brainlesslab.ssa_result"

static void block_free(PyObject *cap)
{
    free(PyCapsule_GetPointer(cap, SSA_CAPSULE));
}

static PyArrayObject *as(PyObject *o, int type)
{
    return (PyArrayObject *)PyArray_FROMANY(o, type, 1, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
}

PyObject *bl_py_run_ssa(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"x0", "change", "order", "rate", "t", "replicates", "first", "seed", "method", "tau",
                            "max_events", "threads", NULL};
    PyObject *x0_o, *ch_o, *or_o, *rate_o, *t_o;
    unsigned long long replicates = 16, first = 0, seed = 0, max_events = 100000000ULL;
    const char *method = "direct";
    double tau = 0.0;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|KKKsdKi", names, &x0_o, &ch_o, &or_o, &rate_o, &t_o,
                                     &replicates, &first, &seed, &method, &tau, &max_events, &threads))
        return NULL;
    PyArrayObject *x0 = NULL, *ch = NULL, *ord = NULL, *rate = NULL, *ta = NULL;
    bl_ssa_model *m = NULL;
    PyObject *cap = NULL, *result = NULL;
    bl_error err = {0};
    if (!(x0 = as(x0_o, NPY_INT64)) || !(ch = as(ch_o, NPY_INT64)) || !(ord = as(or_o, NPY_INT64)) ||
        !(rate = as(rate_o, NPY_FLOAT64)) || !(ta = as(t_o, NPY_FLOAT64)))
        goto out;
    const size_t ns = (size_t)PyArray_SIZE(x0), nr = (size_t)PyArray_SIZE(rate), nt = (size_t)PyArray_SIZE(ta);
    if (!ns || !nr || (size_t)PyArray_SIZE(ch) != nr * ns || (size_t)PyArray_SIZE(ord) != nr * ns) {
        PyErr_Format(PyExc_ValueError, "x0 has %zu species and rate %zu reactions: change and order must be %zu x %zu",
                     ns, nr, nr, ns);
        goto out;
    }
    /* Bounded like a plan's bank (bl_ssa_run refuses more than 2^36 values). */
    if (replicates == 0 || replicates > ((uint64_t)1 << 32) || nt < 2 ||
        nt > ((size_t)1 << 36) / ns / (size_t)replicates) {
        PyErr_Format(PyExc_ValueError, "replicates (%llu) x times (%zu) x species (%zu): need 1.. replicates, 2.. times "
                     "and at most 2^36 values", replicates, nt, ns);
        goto out;
    }
    const bl_ssa_system sys = {ns, nr, PyArray_DATA(ch), PyArray_DATA(ord), PyArray_DATA(rate), NULL, NULL};
    if (bl_ssa_model_create(&sys, &m, &err)) {
        bl_py_raise(&err);
        goto out;
    }
    const size_t R = (size_t)replicates, nc = R * nt * ns;
    /* One block: counts (int64), events (uint64), t (float64): all 8 bytes. */
    uint64_t *block = calloc(nc + R + nt, sizeof *block);
    if (!block) {
        PyErr_NoMemory();
        goto out;
    }
    if (!(cap = PyCapsule_New(block, SSA_CAPSULE, block_free))) {
        free(block);
        goto out;
    }
    int64_t *C = (int64_t *)block;
    uint64_t *E = block + nc;
    double *T = (double *)(block + nc + R);
    memcpy(T, PyArray_DATA(ta), nt * sizeof *T);
    bl_ssa_options o;
    bl_ssa_options_default(&o);
    o.method = method;
    o.tau = tau;
    o.seed = seed;
    o.max_events = max_events;
    o.threads = threads;
    bl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bl_ssa_run(m, &o, PyArray_DATA(x0), T, nt, first, R, C, E, &err);
    Py_END_ALLOW_THREADS
    if (st) {
        bl_py_raise(&err);
        goto out;
    }
    npy_intp sc[3] = {(npy_intp)R, (npy_intp)nt, (npy_intp)ns}, se[1] = {(npy_intp)R}, st1[1] = {(npy_intp)nt};
    PyObject *c = bl_py_view(cap, 3, sc, NPY_INT64, C, 1), *e = bl_py_view(cap, 1, se, NPY_UINT64, E, 1),
             *t = bl_py_view(cap, 1, st1, NPY_FLOAT64, T, 1);
    if (c && e && t)
        result = Py_BuildValue("{s:O,s:O,s:O}", "counts", c, "events", e, "t", t);
    Py_XDECREF(c);
    Py_XDECREF(e);
    Py_XDECREF(t);
out:
    Py_XDECREF(cap);
    bl_ssa_model_destroy(m);
    Py_XDECREF(x0), Py_XDECREF(ch), Py_XDECREF(ord), Py_XDECREF(rate), Py_XDECREF(ta);
    return result;
}

PyObject *bl_py_ssa_plan(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path))
        return NULL;
    bl_plan *plan = NULL;
    bl_error err = {0};
    if (bl_plan_load(path, &plan, &err))
        return bl_py_raise(&err);
    PyObject *r = NULL;
    if (strcmp(bl_plan_operation(plan), "ssa"))
        PyErr_Format(PyExc_ValueError, "plan %s: operation \"%s\" is not \"ssa\"", path, bl_plan_operation(plan));
    else
        r = PyUnicode_FromString(bl_plan_resolved_json(plan));
    bl_plan_destroy(plan);
    return r;
}
