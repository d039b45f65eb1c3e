/* brainlesslab._core, third part: EqNet, a network of equation models
 * (include/brainlesslab/eqnet.h), the engine under pyNN.brainlesslab. Arrays
 * are converted (copied) on the way in; spikes and samples are copied out;
 * var() views the population's state (writeable, alive with the network). */
#include "_core.h"

#include <stdint.h>
#include <string.h>

#include "brainlesslab/eqnet.h"

typedef struct {
    PyObject_HEAD bl_eq_net *net;
} eq_net_obj;

static void net_dealloc(eq_net_obj *self)
{
    bl_eq_net_destroy(self->net);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *net_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    double dt;
    unsigned long long seed = 0;
    static char *names[] = {"dt_s", "seed", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "d|K", names, &dt, &seed))
        return NULL;
    eq_net_obj *self = (eq_net_obj *)type->tp_alloc(type, 0);
    if (!self)
        return NULL;
    bl_error err = {0};
    if (bl_eq_net_create(dt, seed, &self->net, &err)) {
        Py_DECREF(self);
        return bl_py_raise(&err);
    }
    return (PyObject *)self;
}

/* A C-contiguous array of typenum from any sequence (new reference). */
static PyArrayObject *arr(PyObject *o, int typenum, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, typenum, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a)
        PyErr_Format(PyExc_TypeError, "EqNet: %s must be a 1-d sequence of numbers", what);
    return a;
}

/* Pairs (name, value) of strings into two arrays of borrowed UTF-8 pointers. */
static int pairs(PyObject *seq, const char ***names, const char ***values, size_t *n, const char *what)
{
    *names = *values = NULL;
    *n = 0;
    PyObject *f = PySequence_Fast(seq, what);
    if (!f)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(f);
    *names = PyMem_Calloc((size_t)len + 1, sizeof **names);
    *values = PyMem_Calloc((size_t)len + 1, sizeof **values);
    if (!*names || !*values) {
        Py_DECREF(f);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < len; k++) {
        PyObject *it = PySequence_Fast_GET_ITEM(f, k);
        if (!PyTuple_Check(it) || PyTuple_GET_SIZE(it) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(it, 0)) ||
            !PyUnicode_Check(PyTuple_GET_ITEM(it, 1))) {
            PyErr_Format(PyExc_TypeError, "EqNet: %s item %zd must be a (name, value) pair of strings", what, k);
            Py_DECREF(f);
            return -1;
        }
        /* the UTF-8 buffers live as long as the strings, which the caller's list keeps */
        (*names)[k] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 0));
        (*values)[k] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(it, 1));
        if (!(*names)[k] || !(*values)[k]) {
            Py_DECREF(f);
            return -1;
        }
    }
    *n = (size_t)len;
    Py_DECREF(f);
    return 0;
}

static PyObject *net_add_neurons(eq_net_obj *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"n", "equations", "method", "threshold", "reset", "refractory", "params", "init", NULL};
    unsigned int n;
    const char *eqs, *method = NULL, *thr = NULL, *reset = NULL, *refr = NULL;
    PyObject *params = NULL, *init = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Is|zzzzOO", names, &n, &eqs, &method, &thr, &reset, &refr, &params,
                                     &init))
        return NULL;
    bl_eq_source src = {0};
    src.equations = eqs;
    src.method = method;
    src.threshold = thr;
    src.reset = reset;
    src.refractory = refr;
    const char **pn = NULL, **pv = NULL, **in = NULL, **iv = NULL;
    PyObject *ret = NULL;
    if ((params && pairs(params, &pn, &pv, &src.n_params, "params") < 0) ||
        (init && pairs(init, &in, &iv, &src.n_init, "init") < 0))
        goto done;
    src.param_names = pn;
    src.param_values = pv;
    src.init_names = in;
    src.init_values = iv;
    bl_error err = {0};
    uint32_t pop;
    if (bl_eq_net_add_neurons(self->net, &src, n, &pop, &err))
        bl_py_raise(&err);
    else
        ret = PyLong_FromUnsignedLong(pop);
done:
    PyMem_Free(pn);
    PyMem_Free(pv);
    PyMem_Free(in);
    PyMem_Free(iv);
    return ret;
}

static PyObject *net_add_receptor(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    const char *on_pre, *unit;
    if (!PyArg_ParseTuple(args, "Iss", &pop, &on_pre, &unit))
        return NULL;
    bl_error err = {0};
    uint32_t r;
    if (bl_eq_net_add_receptor(self->net, pop, on_pre, unit, &r, &err))
        return bl_py_raise(&err);
    return PyLong_FromUnsignedLong(r);
}

static PyObject *net_add_array_source(eq_net_obj *self, PyObject *args)
{
    PyObject *o_off, *o_steps;
    if (!PyArg_ParseTuple(args, "OO", &o_off, &o_steps))
        return NULL;
    PyArrayObject *off = arr(o_off, NPY_UINT64, "offsets"), *steps = off ? arr(o_steps, NPY_INT64, "steps") : NULL;
    PyObject *ret = NULL;
    if (!off || !steps)
        goto done;
    npy_intp n = PyArray_SIZE(off) - 1;
    const uint64_t *o = PyArray_DATA(off);
    if (n < 1 || n > (npy_intp)BL_EQ_NET_MAX_NEURONS || o[n] != (uint64_t)PyArray_SIZE(steps)) {
        PyErr_Format(PyExc_ValueError, "EqNet.add_array_source: %zd offsets for %zd steps (need n+1 >= 2, last = steps)",
                     (Py_ssize_t)PyArray_SIZE(off), (Py_ssize_t)PyArray_SIZE(steps));
        goto done;
    }
    bl_error err = {0};
    uint32_t pop;
    if (bl_eq_net_add_array_source(self->net, (uint32_t)n, o, PyArray_DATA(steps), &pop, &err))
        bl_py_raise(&err);
    else
        ret = PyLong_FromUnsignedLong(pop);
done:
    Py_XDECREF(off);
    Py_XDECREF(steps);
    return ret;
}

static PyObject *net_add_poisson_source(eq_net_obj *self, PyObject *args)
{
    PyObject *o_rate, *o_start, *o_stop;
    if (!PyArg_ParseTuple(args, "OOO", &o_rate, &o_start, &o_stop))
        return NULL;
    PyArrayObject *rate = arr(o_rate, NPY_DOUBLE, "rate"), *start = rate ? arr(o_start, NPY_DOUBLE, "start") : NULL,
                  *stop = start ? arr(o_stop, NPY_DOUBLE, "stop") : NULL;
    PyObject *ret = NULL;
    if (!rate || !start || !stop)
        goto done;
    npy_intp n = PyArray_SIZE(rate);
    if (n < 1 || n > (npy_intp)BL_EQ_NET_MAX_NEURONS || PyArray_SIZE(start) != n || PyArray_SIZE(stop) != n) {
        PyErr_SetString(PyExc_ValueError, "EqNet.add_poisson_source: rate, start and stop need the same size >= 1");
        goto done;
    }
    bl_error err = {0};
    uint32_t pop;
    if (bl_eq_net_add_poisson_source(self->net, (uint32_t)n, PyArray_DATA(rate), PyArray_DATA(start),
                                     PyArray_DATA(stop), &pop, &err))
        bl_py_raise(&err);
    else
        ret = PyLong_FromUnsignedLong(pop);
done:
    Py_XDECREF(rate);
    Py_XDECREF(start);
    Py_XDECREF(stop);
    return ret;
}

static PyObject *net_set_array_source(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    PyObject *o_off, *o_steps;
    if (!PyArg_ParseTuple(args, "IOO", &pop, &o_off, &o_steps))
        return NULL;
    PyArrayObject *off = arr(o_off, NPY_UINT64, "offsets"), *steps = off ? arr(o_steps, NPY_INT64, "steps") : NULL;
    PyObject *ret = NULL;
    if (!off || !steps)
        goto done;
    npy_intp n = PyArray_SIZE(off) - 1;
    const uint64_t *o = PyArray_DATA(off);
    if (n != (npy_intp)bl_eq_net_pop_size(self->net, pop) ||
        o[n] != (uint64_t)PyArray_SIZE(steps)) {
        PyErr_Format(PyExc_ValueError,
                     "EqNet.set_array_source: population %u: %zd offsets for %zd steps (need its size + 1, "
                     "last = steps)",
                     pop, (Py_ssize_t)PyArray_SIZE(off), (Py_ssize_t)PyArray_SIZE(steps));
        goto done;
    }
    bl_error err = {0};
    if (bl_eq_net_set_array_source(self->net, pop, o, PyArray_DATA(steps), &err))
        bl_py_raise(&err);
    else
        ret = Py_NewRef(Py_None);
done:
    Py_XDECREF(off);
    Py_XDECREF(steps);
    return ret;
}

static PyObject *net_set_poisson_source(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    PyObject *o_rate, *o_start, *o_stop;
    if (!PyArg_ParseTuple(args, "IOOO", &pop, &o_rate, &o_start, &o_stop))
        return NULL;
    PyArrayObject *rate = arr(o_rate, NPY_DOUBLE, "rate"), *start = rate ? arr(o_start, NPY_DOUBLE, "start") : NULL,
                  *stop = start ? arr(o_stop, NPY_DOUBLE, "stop") : NULL;
    PyObject *ret = NULL;
    if (!rate || !start || !stop)
        goto done;
    npy_intp n = PyArray_SIZE(rate);
    if (n != (npy_intp)bl_eq_net_pop_size(self->net, pop) ||
        PyArray_SIZE(start) != n || PyArray_SIZE(stop) != n) {
        PyErr_Format(PyExc_ValueError,
                     "EqNet.set_poisson_source: population %u: rate, start and stop need its size", pop);
        goto done;
    }
    bl_error err = {0};
    if (bl_eq_net_set_poisson_source(self->net, pop, PyArray_DATA(rate), PyArray_DATA(start), PyArray_DATA(stop),
                                     &err))
        bl_py_raise(&err);
    else
        ret = Py_NewRef(Py_None);
done:
    Py_XDECREF(rate);
    Py_XDECREF(start);
    Py_XDECREF(stop);
    return ret;
}

static PyObject *net_add_projection(eq_net_obj *self, PyObject *args)
{
    unsigned int pre, post, rec;
    PyObject *o_i, *o_j, *o_w, *o_d;
    if (!PyArg_ParseTuple(args, "IIIOOOO", &pre, &post, &rec, &o_i, &o_j, &o_w, &o_d))
        return NULL;
    PyArrayObject *a_i = arr(o_i, NPY_UINT32, "pre"), *a_j = a_i ? arr(o_j, NPY_UINT32, "post") : NULL,
                  *a_w = a_j ? arr(o_w, NPY_DOUBLE, "weight") : NULL, *a_d = a_w ? arr(o_d, NPY_UINT32, "delay") : NULL;
    PyObject *ret = NULL;
    if (!a_d)
        goto done;
    npy_intp n = PyArray_SIZE(a_i);
    if (PyArray_SIZE(a_j) != n || PyArray_SIZE(a_w) != n || PyArray_SIZE(a_d) != n) {
        PyErr_SetString(PyExc_ValueError, "EqNet.add_projection: pre, post, weight and delay need the same size");
        goto done;
    }
    bl_error err = {0};
    size_t proj;
    if (bl_eq_net_add_projection(self->net, pre, post, rec, (size_t)n, PyArray_DATA(a_i), PyArray_DATA(a_j),
                                 PyArray_DATA(a_w), PyArray_DATA(a_d), &proj, &err))
        bl_py_raise(&err);
    else
        ret = PyLong_FromSize_t(proj);
done:
    Py_XDECREF(a_i);
    Py_XDECREF(a_j);
    Py_XDECREF(a_w);
    Py_XDECREF(a_d);
    return ret;
}

static PyObject *net_set_stdp(eq_net_obj *self, PyObject *args)
{
    Py_ssize_t proj;
    bl_eq_net_stdp r;
    if (!PyArg_ParseTuple(args, "ndddddd", &proj, &r.tau_plus_s, &r.tau_minus_s, &r.a_plus, &r.a_minus, &r.w_min,
                          &r.w_max))
        return NULL;
    if (proj < 0) {
        PyErr_SetString(PyExc_ValueError, "EqNet.set_stdp: projection index < 0");
        return NULL;
    }
    bl_error err = {0};
    if (bl_eq_net_set_stdp(self->net, (size_t)proj, &r, &err))
        return bl_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *net_weights(eq_net_obj *self, PyObject *args)
{
    Py_ssize_t proj;
    if (!PyArg_ParseTuple(args, "n", &proj))
        return NULL;
    if (proj < 0) {
        PyErr_SetString(PyExc_ValueError, "EqNet.weights: projection index < 0");
        return NULL;
    }
    npy_intp n = (npy_intp)bl_eq_net_n_edges(self->net, (size_t)proj);
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_DOUBLE);
    if (!a)
        return NULL;
    bl_error err = {0};
    if (bl_eq_net_weights(self->net, (size_t)proj, PyArray_DATA((PyArrayObject *)a), (size_t)n, &err)) {
        Py_DECREF(a);
        return bl_py_raise(&err);
    }
    return a;
}

static PyObject *net_add_current(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    const char *var;
    PyObject *o_t, *o_s, *o_a;
    if (!PyArg_ParseTuple(args, "IsOOO", &pop, &var, &o_t, &o_s, &o_a))
        return NULL;
    PyArrayObject *t = arr(o_t, NPY_UINT32, "targets"), *s = t ? arr(o_s, NPY_INT64, "steps") : NULL,
                  *a = s ? arr(o_a, NPY_DOUBLE, "amplitudes") : NULL;
    PyObject *ret = NULL;
    if (!a)
        goto done;
    if (PyArray_SIZE(s) != PyArray_SIZE(a)) {
        PyErr_SetString(PyExc_ValueError, "EqNet.add_current: steps and amplitudes need the same size");
        goto done;
    }
    bl_error err = {0};
    if (bl_eq_net_add_current(self->net, pop, var, (size_t)PyArray_SIZE(t), PyArray_DATA(t), (size_t)PyArray_SIZE(s),
                              PyArray_DATA(s), PyArray_DATA(a), &err))
        bl_py_raise(&err);
    else
        ret = Py_NewRef(Py_None);
done:
    Py_XDECREF(t);
    Py_XDECREF(s);
    Py_XDECREF(a);
    return ret;
}

static PyObject *net_var(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    const char *name;
    if (!PyArg_ParseTuple(args, "Is", &pop, &name))
        return NULL;
    double *v = bl_eq_net_var(self->net, pop, name);
    if (!v) {
        PyErr_Format(PyExc_KeyError, "EqNet: population %u has no state variable '%s'", pop, name);
        return NULL;
    }
    npy_intp n = bl_eq_net_pop_size(self->net, pop);
    return bl_py_view((PyObject *)self, 1, &n, NPY_DOUBLE, v, 1);
}

static PyObject *net_record(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    const char *name;
    if (!PyArg_ParseTuple(args, "Is", &pop, &name))
        return NULL;
    bl_error err = {0};
    if (bl_eq_net_record(self->net, pop, name, &err))
        return bl_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *net_run(eq_net_obj *self, PyObject *args)
{
    unsigned long long n;
    if (!PyArg_ParseTuple(args, "K", &n))
        return NULL;
    bl_error err = {0};
    bl_status st;
    Py_BEGIN_ALLOW_THREADS st = bl_eq_net_run(self->net, n, &err);
    Py_END_ALLOW_THREADS if (st) return bl_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *net_spikes(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    if (!PyArg_ParseTuple(args, "I", &pop))
        return NULL;
    const uint64_t *s;
    const uint32_t *i;
    npy_intp n = (npy_intp)bl_eq_net_spikes(self->net, pop, &s, &i);
    PyObject *as = PyArray_SimpleNew(1, &n, NPY_UINT64), *ai = as ? PyArray_SimpleNew(1, &n, NPY_UINT32) : NULL;
    if (!ai) {
        Py_XDECREF(as);
        return NULL;
    }
    if (n) {
        memcpy(PyArray_DATA((PyArrayObject *)as), s, (size_t)n * sizeof *s);
        memcpy(PyArray_DATA((PyArrayObject *)ai), i, (size_t)n * sizeof *i);
    }
    return Py_BuildValue("(NN)", as, ai);
}

static PyObject *net_samples(eq_net_obj *self, PyObject *args)
{
    unsigned int pop;
    const char *name;
    if (!PyArg_ParseTuple(args, "Is", &pop, &name))
        return NULL;
    size_t ns;
    const double *d = bl_eq_net_samples(self->net, pop, name, &ns);
    if (!d && !ns) {
        npy_intp shape[2] = {0, bl_eq_net_pop_size(self->net, pop)};
        return PyArray_SimpleNew(2, shape, NPY_DOUBLE);
    }
    npy_intp shape[2] = {(npy_intp)ns, bl_eq_net_pop_size(self->net, pop)};
    PyObject *a = PyArray_SimpleNew(2, shape, NPY_DOUBLE);
    if (a && ns)
        memcpy(PyArray_DATA((PyArrayObject *)a), d, ns * (size_t)shape[1] * sizeof *d);
    return a;
}

static PyObject *net_clear(eq_net_obj *self, PyObject *noargs)
{
    (void)noargs;
    bl_eq_net_clear_recordings(self->net);
    Py_RETURN_NONE;
}

static PyObject *net_steps(eq_net_obj *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(bl_eq_net_steps(self->net));
}

static PyMethodDef net_methods[] = {
    {"add_neurons", (PyCFunction)(void (*)(void))net_add_neurons, METH_VARARGS | METH_KEYWORDS,
     "add_neurons(n, equations, method, threshold, reset, refractory, params=[(name, quantity)], init=[...]) -> pop"},
    {"add_receptor", (PyCFunction)net_add_receptor, METH_VARARGS, "add_receptor(pop, on_pre, w_unit) -> receptor"},
    {"add_array_source", (PyCFunction)net_add_array_source, METH_VARARGS,
     "add_array_source(offsets, steps) -> pop"},
    {"add_poisson_source", (PyCFunction)net_add_poisson_source, METH_VARARGS,
     "add_poisson_source(rate_hz, start_s, stop_s) -> pop"},
    {"set_array_source", (PyCFunction)net_set_array_source, METH_VARARGS,
     "set_array_source(pop, offsets, steps): replace a spike source array's spikes (those before the next step are "
     "dropped)"},
    {"set_poisson_source", (PyCFunction)net_set_poisson_source, METH_VARARGS,
     "set_poisson_source(pop, rate_hz, start_s, stop_s): replace a Poisson source's parameters"},
    {"add_projection", (PyCFunction)net_add_projection, METH_VARARGS,
     "add_projection(pre, post, receptor, pre_idx, post_idx, weight, delay_steps) -> projection index"},
    {"set_stdp", (PyCFunction)net_set_stdp, METH_VARARGS,
     "set_stdp(proj, tau_plus_s, tau_minus_s, A_plus, A_minus, w_min, w_max): spike-pair additive STDP"},
    {"weights", (PyCFunction)net_weights, METH_VARARGS, "weights(proj) -> the edges' current weights (SI)"},
    {"add_current", (PyCFunction)net_add_current, METH_VARARGS,
     "add_current(pop, var, targets, steps, amplitudes)"},
    {"var", (PyCFunction)net_var, METH_VARARGS, "var(pop, name) -> writeable view of the state"},
    {"record", (PyCFunction)net_record, METH_VARARGS, "record(pop, var)"},
    {"run", (PyCFunction)net_run, METH_VARARGS, "run(n_steps)"},
    {"spikes", (PyCFunction)net_spikes, METH_VARARGS, "spikes(pop) -> (steps, indices)"},
    {"samples", (PyCFunction)net_samples, METH_VARARGS, "samples(pop, var) -> (n_samples, n) array"},
    {"clear_recordings", (PyCFunction)net_clear, METH_NOARGS, "forget recorded spikes and samples"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef net_getset[] = {
    {"steps", (getter)net_steps, NULL, "steps run so far", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject eq_net_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "brainlesslab._core.EqNet",
    .tp_basicsize = sizeof(eq_net_obj),
    .tp_dealloc = (destructor)net_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "EqNet(dt_s, seed=0): a network of equation models (include/brainlesslab/eqnet.h).",
    .tp_methods = net_methods,
    .tp_getset = net_getset,
    .tp_new = net_new,
};

int bl_py_net_init(PyObject *module)
{
    if (PyType_Ready(&eq_net_type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "EqNet", (PyObject *)&eq_net_type);
}
