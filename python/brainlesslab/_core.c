/* brainlesslab._core: the CPython extension over the C library.
 *
 * Thin on purpose: the Python package (the .py files beside it) owns the friendly
 * API (selectors, defaults, Record objects); this module only moves arrays
 * and handles across, without copies where the layout allows. Arrays that
 * view library memory hold a capsule that owns the library object as their
 * base, so the memory lives exactly as long as some view of it.
 *
 * The GIL is released while an engine runs. Trials run in slices of as many
 * trials as the engine runs at once; between slices the GIL is taken back and
 * pending signals are checked, so Ctrl-C stops a run with KeyboardInterrupt
 * after the slice in flight (every library object is freed). */
#define BL_PY_MAIN_FILE
#include "_core.h"

#include <stdint.h>
#include <string.h>

#include "brainlesslab/connectome.h"
#include "brainlesslab/context.h"
#include "brainlesslab/engine.h"
#include "brainlesslab/model.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/select.h"
#include "brainlesslab/stimulus.h"

PyObject *bl_py_error;

PyObject *bl_py_raise(const bl_error *err)
{
    PyObject *exc = PyObject_CallFunction(bl_py_error, "s", err->message[0] ? err->message : "failed");
    if (!exc)
        return NULL;
    PyObject *status = PyUnicode_FromString(bl_status_name(err->status));
    if (status) {
        PyObject_SetAttrString(exc, "status", status);
        Py_DECREF(status);
    }
    PyErr_SetObject(bl_py_error, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *bl_py_view(PyObject *owner, int nd, const npy_intp *shape, int typenum, const void *data,
                     int writeable)
{
    npy_intp total = 1;
    for (int i = 0; i < nd; i++)
        total *= shape[i];
    if (total == 0 || !data) /* nothing to view: an empty array of its own */
        return PyArray_ZEROS(nd, (npy_intp *)shape, typenum, 0);
    PyObject *a = PyArray_SimpleNewFromData(nd, (npy_intp *)shape, typenum, (void *)data);
    if (!a)
        return NULL;
    Py_INCREF(owner);
    if (PyArray_SetBaseObject((PyArrayObject *)a, owner) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    if (!writeable)
        PyArray_CLEARFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
    return a;
}

/* ---- connectomes ---- */

#define CONNECTOME_CAPSULE "brainlesslab.connectome"

static void connectome_capsule_free(PyObject *cap)
{
    bl_connectome_destroy(PyCapsule_GetPointer(cap, CONNECTOME_CAPSULE));
}

static int set_item(PyObject *d, const char *key, PyObject *value)
{
    if (!value)
        return -1;
    int rc = PyDict_SetItemString(d, key, value);
    Py_DECREF(value);
    return rc;
}

/* load_connectome(path) -> dict: handle (capsule), n_neurons, offsets,
 * targets, counts (read-only views), external_ids (list of str), columns
 * ({name: list of str}), info ({key: str}). */
static PyObject *py_load_connectome(PyObject *self, PyObject *args)
{
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
        return NULL;
    bl_connectome *c = NULL;
    bl_error err = {0};
    bl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bl_connectome_load(PyBytes_AS_STRING(path_obj), &c, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st)
        return bl_py_raise(&err);
    PyObject *cap = PyCapsule_New(c, CONNECTOME_CAPSULE, connectome_capsule_free);
    if (!cap) {
        bl_connectome_destroy(c);
        return NULL;
    }
    PyObject *d = PyDict_New();
    if (!d)
        goto fail;
    if (PyDict_SetItemString(d, "handle", cap) < 0)
        goto fail;
    const npy_intp n = (npy_intp)bl_connectome_n_neurons(c);
    const npy_intp n1 = n + 1;
    const npy_intp e = (npy_intp)bl_connectome_n_edges(c);
    if (set_item(d, "n_neurons", PyLong_FromLongLong((long long)n)) ||
        set_item(d, "offsets", bl_py_view(cap, 1, &n1, NPY_INT64, bl_connectome_offsets(c), 0)) ||
        set_item(d, "targets", bl_py_view(cap, 1, &e, NPY_INT32, bl_connectome_targets(c), 0)) ||
        set_item(d, "counts", bl_py_view(cap, 1, &e, NPY_INT32, bl_connectome_counts(c), 0)))
        goto fail;
    PyObject *ids = PyList_New(n);
    if (set_item(d, "external_ids", ids))
        goto fail;
    for (npy_intp i = 0; i < n; i++) {
        PyObject *s = PyUnicode_FromString(bl_connectome_external_id(c, (uint64_t)i));
        if (!s)
            goto fail;
        PyList_SET_ITEM(ids, i, s);
    }
    PyObject *cols = PyDict_New();
    if (set_item(d, "columns", cols))
        goto fail;
    for (size_t k = 0; k < bl_connectome_n_columns(c); k++) {
        PyObject *vals = PyList_New(n);
        if (!vals || PyDict_SetItemString(cols, bl_connectome_column_name(c, k), vals) < 0) {
            Py_XDECREF(vals);
            goto fail;
        }
        Py_DECREF(vals);
        for (npy_intp i = 0; i < n; i++) {
            PyObject *s = PyUnicode_FromString(bl_connectome_value(c, k, (uint64_t)i));
            if (!s)
                goto fail;
            PyList_SET_ITEM(vals, i, s);
        }
    }
    PyObject *info = PyDict_New();
    if (set_item(d, "info", info))
        goto fail;
    static const char *const keys[] = {"name", "description", "source", "citation", "licence",
                                       "sign_policy", "generator"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *v = bl_connectome_info(c, keys[k]);
        if (v && set_item(info, keys[k], PyUnicode_FromString(v)))
            goto fail;
    }
    Py_DECREF(cap);
    return d;
fail:
    Py_XDECREF(d);
    Py_DECREF(cap);
    return NULL;
}

/* save_connectome(dir, offsets, targets, counts, external_ids, columns, info):
 * a connectome directory from arrays (bl_connectome_adopt + save), for
 * connectomes built in Python. columns: {name: list of str}; info: {key: str}. */
static int strings_of(PyObject *seq_obj, Py_ssize_t n, const char *what, const char ***out, PyObject **keep)
{
    PyObject *seq = PySequence_Fast(seq_obj, what);
    if (!seq)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "%s: %zd values for %zd neurons", what, PySequence_Fast_GET_SIZE(seq), n);
        Py_DECREF(seq);
        return -1;
    }
    const char **v = PyMem_Calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(v[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) {
            PyMem_Free(v);
            Py_DECREF(seq);
            return -1;
        }
    *out = v;
    *keep = seq; /* the UTF-8 buffers live as long as the str objects it holds */
    return 0;
}

static void *copy_array(PyObject *obj, int typenum, size_t elem, npy_intp *n)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, typenum, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!a)
        return NULL;
    *n = PyArray_SIZE(a);
    void *p = malloc((size_t)(*n ? *n : 1) * elem);
    if (p)
        memcpy(p, PyArray_DATA(a), (size_t)*n * elem);
    else
        PyErr_NoMemory();
    Py_DECREF(a);
    return p;
}

static PyObject *py_save_connectome(PyObject *self, PyObject *args)
{
    PyObject *dir, *off_obj, *tgt_obj, *cnt_obj, *ids_obj, *cols, *info;
    if (!PyArg_ParseTuple(args, "O&OOOOO!O!", PyUnicode_FSConverter, &dir, &off_obj, &tgt_obj, &cnt_obj, &ids_obj,
                          &PyDict_Type, &cols, &PyDict_Type, &info))
        return NULL;
    npy_intp n1 = 0, e = 0, e2 = 0;
    int64_t *off = copy_array(off_obj, NPY_INT64, 8, &n1);
    int32_t *tgt = off ? copy_array(tgt_obj, NPY_INT32, 4, &e) : NULL;
    int32_t *cnt = tgt ? copy_array(cnt_obj, NPY_INT32, 4, &e2) : NULL;
    if (!cnt || n1 < 1 || e != e2) {
        free(off);
        free(tgt);
        free(cnt);
        Py_DECREF(dir);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "offsets need N+1 >= 1 values; targets and counts one per edge");
        return NULL;
    }
    bl_error err = {0};
    bl_connectome *c = NULL;
    const char **v = NULL;
    PyObject *out = NULL, *keep = NULL;
    if (bl_connectome_adopt((uint64_t)(n1 - 1), (uint64_t)e, off, tgt, cnt, &c, &err)) { /* frees the arrays */
        bl_py_raise(&err);
        goto done;
    }
    if (strings_of(ids_obj, n1 - 1, "external_ids", &v, &keep) < 0)
        goto done;
    if (bl_connectome_set_external_ids(c, v, &err)) {
        bl_py_raise(&err);
        goto done;
    }
    PyMem_Free(v);
    v = NULL;
    Py_CLEAR(keep);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(cols, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (!name || strings_of(value, n1 - 1, name, &v, &keep) < 0)
            goto done;
        if (bl_connectome_add_column(c, name, v, &err)) {
            bl_py_raise(&err);
            goto done;
        }
        PyMem_Free(v);
        v = NULL;
        Py_CLEAR(keep);
    }
    pos = 0;
    while (PyDict_Next(info, &pos, &key, &value)) {
        const char *k = PyUnicode_AsUTF8(key), *val = PyUnicode_AsUTF8(value);
        if (!k || !val)
            goto done;
        if (bl_connectome_set_info(c, k, val, &err)) {
            bl_py_raise(&err);
            goto done;
        }
    }
    if (bl_connectome_save(c, PyBytes_AS_STRING(dir), &err)) {
        bl_py_raise(&err);
        goto done;
    }
    out = Py_NewRef(Py_None);
done:
    PyMem_Free(v);
    Py_XDECREF(keep);
    bl_connectome_destroy(c);
    Py_DECREF(dir);
    return out;
}

/* ---- simulation ---- */

#define RESULT_CAPSULE "brainlesslab.result"

static void result_capsule_free(PyObject *cap)
{
    bl_result_destroy(PyCapsule_GetPointer(cap, RESULT_CAPSULE));
}

/* Everything a simulate call creates, freed in one place. */
typedef struct sim_ctx {
    bl_stimulus *stim;
    bl_network *net;
    bl_engine *eng;
    bl_result *res;
    int32_t *silenced;
    bl_context *ctx; /* its cancel: a Ctrl-C noted (_core_signal.c) */
} sim_ctx;

static void sim_ctx_free(sim_ctx *s)
{
    bl_result_destroy(s->res);
    bl_engine_destroy(s->eng);
    bl_network_destroy(s->net);
    bl_stimulus_destroy(s->stim);
    PyMem_Free(s->silenced);
    bl_context_destroy(s->ctx); /* after the engine, which holds it */
}

static int apply_params(bl_lif_params *p, PyObject *params, bl_error *err)
{
    if (!params || params == Py_None)
        return 0;
    if (!PyDict_Check(params)) {
        PyErr_SetString(PyExc_TypeError, "params must be a dict {name: number}");
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(params, &pos, &key, &value)) {
        const char *k = PyUnicode_AsUTF8(key);
        if (!k)
            return -1;
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred())
            return -1;
        if (bl_lif_params_set(p, k, v, err)) {
            bl_py_raise(err);
            return -1;
        }
    }
    return 0;
}

/* Neuron indices as int32: integers only (a float array or list is refused,
 * not truncated: 1.7 is no neuron), each within int32. */
static PyArrayObject *int_indices(PyObject *obj, const char *what)
{
    PyArrayObject *any = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!any)
        return NULL;
    if (PyArray_SIZE(any) && !PyArray_ISINTEGER(any)) {
        PyErr_Format(PyExc_TypeError, "%s must be integer indices, not %s values", what,
                     PyArray_DESCR(any)->typeobj->tp_name);
        Py_DECREF(any);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY((PyObject *)any, NPY_INT64, 1, 1,
                                                        NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(any);
    if (!a)
        return NULL;
    const int64_t *v = PyArray_DATA(a);
    for (npy_intp i = 0; i < PyArray_SIZE(a); i++)
        if (v[i] < 0 || v[i] > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s: index %lld at position %zd is not a neuron index", what,
                         (long long)v[i], (Py_ssize_t)i);
            Py_DECREF(a);
            return NULL;
        }
    PyArrayObject *out = (PyArrayObject *)PyArray_FROMANY((PyObject *)a, NPY_INT32, 1, 1,
                                                          NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(a);
    return out;
}

/* stimulus: list of (neurons int32 array, rate_hz, start_ms, stop_ms). */
static int build_stimulus(sim_ctx *s, PyObject *stimulus, bl_error *err)
{
    if (bl_stimulus_create(&s->stim, err)) {
        bl_py_raise(err);
        return -1;
    }
    PyObject *seq = PySequence_Fast(stimulus, "stimulus must be a sequence of (neurons, rate_hz, start_ms, stop_ms)");
    if (!seq)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; !rc && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *neu_obj;
        double rate, start, stop;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Oddd;stimulus entries are (neurons, rate_hz, start_ms, stop_ms)",
                              &neu_obj, &rate, &start, &stop)) {
            rc = -1;
            break;
        }
        PyArrayObject *a = int_indices(neu_obj, "stimulus neurons");
        if (!a) {
            rc = -1;
            break;
        }
        if (bl_stimulus_add_poisson(s->stim, PyArray_DATA(a), (size_t)PyArray_SIZE(a), rate, start, stop, err)) {
            bl_py_raise(err);
            rc = -1;
        }
        Py_DECREF(a);
    }
    Py_DECREF(seq);
    return rc;
}

static PyObject *result_dict(PyObject *cap, const bl_result *r, const bl_engine *eng)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    const npy_intp ne = (npy_intp)bl_result_n_events(r);
    const npy_intp shape[2] = {(npy_intp)bl_result_n_trials(r), (npy_intp)bl_result_n_neurons(r)};
    const int sdt = bl_result_state_dtype(r) == BL_DTYPE_FLOAT32 ? NPY_FLOAT32 : NPY_FLOAT64;
    if (set_item(d, "event_trials", bl_py_view(cap, 1, &ne, NPY_INT32, bl_result_event_trials(r), 1)) ||
        set_item(d, "event_steps", bl_py_view(cap, 1, &ne, NPY_INT32, bl_result_event_steps(r), 1)) ||
        set_item(d, "event_neurons", bl_py_view(cap, 1, &ne, NPY_INT32, bl_result_event_neurons(r), 1)) ||
        set_item(d, "counts", bl_py_view(cap, 2, shape, NPY_INT32, bl_result_counts(r), 1)) ||
        set_item(d, "final_v", bl_py_view(cap, 2, shape, sdt, bl_result_final_v(r), 1)) ||
        set_item(d, "final_g", bl_py_view(cap, 2, shape, sdt, bl_result_final_g(r), 1)) ||
        set_item(d, "n_steps", PyLong_FromUnsignedLongLong(bl_result_n_steps(r))) ||
        set_item(d, "backend", PyUnicode_FromString(bl_engine_backend(eng))) ||
        set_item(d, "threads", PyLong_FromLong(bl_engine_threads(eng)))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* simulate(handle, preset, params, stimulus, silenced, trials, duration_ms,
 *          seed, backend, threads) -> dict of arrays (see result_dict). */
/* An integer argument in lo..hi: a float, a bool or a value out of range is
 * an error naming it, never a silent truncation (issue 26: seed=2**64+7 ran
 * seed 7, trials=2**32+2 ran 2 trials). */
static int whole_arg(PyObject *o, const char *name, unsigned long long lo, unsigned long long hi,
                     unsigned long long *out)
{
    if (PyBool_Check(o) || PyFloat_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %s", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    unsigned long long u = 0;
    int ok = !PyErr_Occurred();
    if (ok && overflow > 0) {
        u = PyLong_AsUnsignedLongLong(i);
        ok = !PyErr_Occurred();
        PyErr_Clear();
    } else if (ok) {
        ok = overflow == 0 && v >= 0;
        u = (unsigned long long)v;
    }
    Py_DECREF(i);
    if (!ok || u < lo || u > hi) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be an integer in %llu..%llu", name, lo, hi);
        return -1;
    }
    *out = u;
    return 0;
}

static PyObject *py_simulate(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"connectome", "preset", "params", "stimulus", "silence", "trials",
                            "duration_ms", "seed", "backend", "threads", NULL};
    PyObject *cap, *params, *stimulus, *silence_obj, *trials_obj, *seed_obj;
    const char *preset, *backend;
    unsigned long long trials_ull, seed;
    double duration_ms;
    int threads;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OsOOOOdOsi", names, &cap, &preset, &params, &stimulus,
                                     &silence_obj, &trials_obj, &duration_ms, &seed_obj, &backend, &threads))
        return NULL;
    const bl_connectome *c = PyCapsule_GetPointer(cap, CONNECTOME_CAPSULE);
    if (!c)
        return NULL;
    if (whole_arg(trials_obj, "trials", 1, UINT32_MAX, &trials_ull) < 0 ||
        whole_arg(seed_obj, "seed", 0, UINT64_MAX, &seed) < 0)
        return NULL;
    const uint32_t trials = (uint32_t)trials_ull;
    bl_error err = {0};
    bl_lif_params p;
    if (bl_lif_params_preset(preset, &p, &err))
        return bl_py_raise(&err);
    if (apply_params(&p, params, &err) < 0)
        return NULL;
    uint64_t steps;
    /* The bounds a plan holds its parameters to, not only the engine's. */
    if (bl_lif_params_validate(&p, &err) || bl_plan_check_params(&p, &err) ||
        bl_lif_steps(&p, duration_ms, &steps, &err))
        return bl_py_raise(&err);
    sim_ctx s = {0};
    PyArrayObject *sil = int_indices(silence_obj, "silenced neurons");
    if (!sil)
        return NULL;
    size_t n_sil = (size_t)PyArray_SIZE(sil);
    s.silenced = PyMem_Malloc((n_sil ? n_sil : 1) * sizeof *s.silenced);
    if (!s.silenced) {
        Py_DECREF(sil);
        return PyErr_NoMemory();
    }
    if (n_sil)
        memcpy(s.silenced, PyArray_DATA(sil), n_sil * sizeof *s.silenced);
    Py_DECREF(sil);
    if (build_stimulus(&s, stimulus, &err) < 0)
        goto fail;
    bl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bl_network_create(c, &p, s.stim, s.silenced, n_sil, (uint64_t)seed, &s.net, &err);
    if (!st && !(st = bl_context_create(&s.ctx, &err)))
        bl_context_set_cancel(s.ctx, bl_py_signal_cancel, NULL);
    if (!st)
        st = bl_engine_create(s.ctx, s.net, backend, &s.eng, &err);
    if (!st)
        st = bl_engine_set_threads(s.eng, threads, &err);
    if (!st)
        st = bl_result_create(s.net, 0, trials, &s.res, &err);
    Py_END_ALLOW_THREADS
    if (st) {
        bl_py_raise(&err);
        goto fail;
    }
    const uint32_t slice = (uint32_t)(bl_engine_trials_at_once(s.eng) > 0 ? bl_engine_trials_at_once(s.eng) : 1);
    for (uint32_t first = 0; first < trials; first += slice) {
        uint32_t k = trials - first < slice ? trials - first : slice;
        /* Ctrl-C is noted while the engine runs, which asks once per delay
         * window (issue 26: answered within a window, not at the trial's
         * end); Python's handler then raises KeyboardInterrupt here. */
        bl_py_signal_begin(BL_PY_SIGINT);
        Py_BEGIN_ALLOW_THREADS
        st = bl_engine_run(s.eng, first, k, steps, s.res, &err);
        Py_END_ALLOW_THREADS
        int sig = bl_py_signal_end(BL_PY_SIGINT);
        if ((sig || !st) && PyErr_CheckSignals() < 0) /* KeyboardInterrupt */
            goto fail;
        if (st) {
            bl_py_raise(&err);
            goto fail;
        }
    }
    PyObject *rcap = PyCapsule_New(s.res, RESULT_CAPSULE, result_capsule_free);
    if (!rcap)
        goto fail;
    s.res = NULL; /* owned by the capsule now */
    PyObject *d = result_dict(rcap, PyCapsule_GetPointer(rcap, RESULT_CAPSULE), s.eng);
    Py_DECREF(rcap);
    sim_ctx_free(&s);
    return d;
fail:
    sim_ctx_free(&s);
    return NULL;
}

/* Preset parameters, so Python can show and check them. */
static PyObject *py_preset_params(PyObject *self, PyObject *args)
{
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    bl_error err = {0};
    bl_lif_params p;
    if (bl_lif_params_preset(name, &p, &err))
        return bl_py_raise(&err);
    PyObject *d = PyDict_New();
    for (const char *const *k = bl_lif_param_names(); d && *k; k++)
        if (set_item(d, *k, PyFloat_FromDouble(bl_lif_params_get(&p, *k)))) {
            Py_CLEAR(d);
        }
    return d;
}

static PyObject *py_backends(PyObject *self, PyObject *noargs)
{
    PyObject *l = PyList_New(0);
    for (const char *const *b = bl_engine_backends(); l && *b; b++) {
        PyObject *s = PyUnicode_FromString(*b);
        if (!s || PyList_Append(l, s) < 0) {
            Py_XDECREF(s);
            Py_CLEAR(l);
            break;
        }
        Py_DECREF(s);
    }
    return l;
}

/* ---- selection ---- */

/* The named populations a selector may refer to: {name: int32 array}. */
static bl_status lookup_named(void *user, const char *name, bl_select_named *out, bl_error *err)
{
    PyObject *named = user, *a = named ? PyDict_GetItemString(named, name) : NULL;
    if (!a || !PyArray_Check(a) || PyArray_TYPE((PyArrayObject *)a) != NPY_INT32 ||
        PyArray_NDIM((PyArrayObject *)a) != 1 || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)a)) {
        char list[512] = "";
        size_t o = 0;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (named && PyDict_Next(named, &pos, &key, &value) && o < sizeof list) {
            const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
            if (k)
                o += (size_t)snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", k);
            else
                PyErr_Clear();
        }
        return bl_fail(err, BL_ERR_INVALID, "no population is named \"%s\" (%s%s)", name,
                       o ? "defined before this one: " : "none is defined before this one", list);
    }
    out->name = name;
    out->neurons = PyArray_DATA((PyArrayObject *)a);
    out->n_neurons = (size_t)PyArray_SIZE((PyArrayObject *)a);
    return BL_OK;
}

/* select(connectome, name, selector_json, named, seed, stream) -> int32
 * array: one population resolved by bl_select_json (select.h). named:
 * {name: sorted int32 array} for the names it may use; seed: int or None
 * (a sample needs one); stream: the sample's stream (the population's
 * ordinal, as in a plan). Errors read "population 'NAME': KEY: message". */
static PyObject *py_select(PyObject *self, PyObject *args)
{
    PyObject *cap, *named, *seed_obj;
    const char *name, *json;
    unsigned long stream;
    (void)self;
    if (!PyArg_ParseTuple(args, "OssO!Ok", &cap, &name, &json, &PyDict_Type, &named, &seed_obj, &stream))
        return NULL;
    const bl_connectome *c = PyCapsule_GetPointer(cap, CONNECTOME_CAPSULE);
    if (!c)
        return NULL;
    bl_select_options opt = {name, lookup_named, named, seed_obj != Py_None, 0, (uint32_t)stream,
                             "a sample is drawn from a seed, and none is given (select(..., seed=N))"};
    if (opt.has_seed) {
        opt.seed = PyLong_AsUnsignedLongLong(seed_obj);
        if (PyErr_Occurred())
            return NULL;
    }
    if (stream > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "stream must fit 32 bits");
        return NULL;
    }
    bl_selection *sel = NULL;
    bl_error err = {0};
    bl_status st = bl_select_json(c, json, &opt, &sel, NULL, &err);
    if (PyErr_Occurred()) {
        bl_selection_destroy(sel);
        return NULL;
    }
    if (st) {
        bl_error named_err = {st, ""};
        snprintf(named_err.message, sizeof named_err.message, "population '%s': %s", name, err.message);
        return bl_py_raise(&named_err);
    }
    npy_intp n = (npy_intp)bl_selection_size(sel);
    PyObject *a = PyArray_SimpleNew(1, &n, NPY_INT32);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), bl_selection_neurons(sel), (size_t)n * sizeof(int32_t));
    bl_selection_destroy(sel);
    return a;
}

static PyMethodDef methods[] = {
    {"load_connectome", py_load_connectome, METH_VARARGS, "load_connectome(path) -> dict"},
    {"simulate", (PyCFunction)(void (*)(void))py_simulate, METH_VARARGS | METH_KEYWORDS,
     "simulate(connectome, preset, params, stimulus, silence, trials, duration_ms, seed, backend, threads)"},
    {"save_connectome", py_save_connectome, METH_VARARGS,
     "save_connectome(dir, offsets, targets, counts, external_ids, columns, info)"},
    {"preset_params", py_preset_params, METH_VARARGS, "preset_params(name) -> dict"},
    {"backends", py_backends, METH_NOARGS, "compiled-in backends"},
    {"verify", bl_py_verify, METH_VARARGS, "verify(record_dir) -> (ok, artifacts, report)"},
    {"run_plan", (PyCFunction)(void (*)(void))bl_py_run_plan, METH_VARARGS | METH_KEYWORDS,
     "run_plan(path, root, backend=None, threads=-1) -> record directory"},
    {"select", py_select, METH_VARARGS, "select(connectome, name, selector_json, named, seed, stream) -> neurons"},
    {"read_table", bl_py_read_table, METH_VARARGS, "read_table(path, names) -> dict of columns"},
    {"write_parquet", (PyCFunction)(void (*)(void))bl_py_write_parquet, METH_VARARGS | METH_KEYWORDS,
     "write_parquet(path, columns, codec='zstd', nullable=False, metadata=None)"},
    {"record_writer", bl_py_record_writer_new, METH_VARARGS, "record_writer(root, name) -> RecordWriter"},
    {"solve_ode", (PyCFunction)(void (*)(void))bl_py_solve_ode, METH_VARARGS | METH_KEYWORDS,
     "solve_ode(equations, system, states, param_names, param_values, init_names, init_values, observe_names, "
     "observe_exprs, t, ...) -> dict of arrays (see brainlesslab.solve_ode)"},
    {"ode_plan", bl_py_ode_plan, METH_VARARGS, "ode_plan(path) -> the resolved [ode] section of a plan"},
    {"run_ssa", (PyCFunction)(void (*)(void))bl_py_run_ssa, METH_VARARGS | METH_KEYWORDS,
     "run_ssa(x0, change, order, rate, t, replicates, first, seed, method, tau, max_events, threads) -> dict"},
    {"ssa_plan", bl_py_ssa_plan, METH_VARARGS, "ssa_plan(path) -> the resolved JSON of an ssa plan"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "brainlesslab._core",
                                    "C extension over libbrainlesslab (see brainlesslab/__init__.py)", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    bl_py_error = PyErr_NewExceptionWithDoc("brainlesslab.Error",
                                            "A BrainlessLab library error; str() is the library's message, "
                                            ".status its bl_status name.",
                                            PyExc_RuntimeError, NULL);
    if (!bl_py_error || PyModule_AddObjectRef(m, "Error", bl_py_error) < 0 || bl_py_record_init(m) < 0 ||
        bl_py_net_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
