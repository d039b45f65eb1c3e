/* brainlesslab._core, second half: records (write and verify), plans, and
 * column tables (read any bl_table format, write Parquet). */
#include "_core.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/context.h"
#include "brainlesslab/experiment.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/record.h"
#include "brainlesslab/table.h"

/* ---- RecordWriter: bl_record_reserve .. seal, for derived records ---- */

typedef struct {
    PyObject_HEAD bl_record *rec;
} record_writer;

static void rw_dealloc(record_writer *self)
{
    bl_record_destroy(self->rec); /* an unsealed record stays reserved, as a crash leaves it */
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int rw_live(record_writer *self)
{
    if (self->rec)
        return 1;
    PyErr_SetString(PyExc_ValueError, "record writer is closed (sealed or failed)");
    return 0;
}

static PyObject *rw_dir(record_writer *self, void *closure)
{
    return rw_live(self) ? PyUnicode_DecodeFSDefault(bl_record_dir(self->rec)) : NULL;
}

static PyObject *rw_path(record_writer *self, PyObject *args)
{
    const char *rel;
    if (!rw_live(self) || !PyArg_ParseTuple(args, "s", &rel))
        return NULL;
    char buf[4096];
    bl_error err = {0};
    if (bl_record_path(self->rec, rel, buf, sizeof buf, &err))
        return bl_py_raise(&err);
    return PyUnicode_DecodeFSDefault(buf);
}

static PyObject *rw_add_input(record_writer *self, PyObject *args)
{
    const char *role;
    PyObject *path;
    if (!rw_live(self) || !PyArg_ParseTuple(args, "sO&", &role, PyUnicode_FSConverter, &path))
        return NULL;
    bl_error err = {0};
    bl_status st = bl_record_add_input(self->rec, role, PyBytes_AS_STRING(path), &err);
    Py_DECREF(path);
    if (st)
        return bl_py_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *rw_set_json(record_writer *self, PyObject *args)
{
    const char *key, *text;
    if (!rw_live(self) || !PyArg_ParseTuple(args, "ss", &key, &text))
        return NULL;
    bl_error err = {0};
    if (bl_record_set_json(self->rec, key, text, &err))
        return bl_py_raise(&err);
    Py_RETURN_NONE;
}

/* seal() / fail(message): either closes the writer and returns the directory. */
static PyObject *rw_finish(record_writer *self, const char *failure)
{
    bl_error err = {0};
    bl_status st = failure ? bl_record_fail(self->rec, failure, &err) : bl_record_seal(self->rec, &err);
    if (st)
        return bl_py_raise(&err);
    PyObject *dir = PyUnicode_DecodeFSDefault(bl_record_dir(self->rec));
    bl_record_destroy(self->rec);
    self->rec = NULL;
    return dir;
}

static PyObject *rw_seal(record_writer *self, PyObject *noargs)
{
    return rw_live(self) ? rw_finish(self, NULL) : NULL;
}

static PyObject *rw_fail(record_writer *self, PyObject *args)
{
    const char *msg;
    if (!rw_live(self) || !PyArg_ParseTuple(args, "s", &msg))
        return NULL;
    return rw_finish(self, msg);
}

static PyMethodDef rw_methods[] = {
    {"path", (PyCFunction)rw_path, METH_VARARGS, "path(relname) -> absolute path inside the record"},
    {"add_input", (PyCFunction)rw_add_input, METH_VARARGS, "add_input(role, path): hash an input"},
    {"set_json", (PyCFunction)rw_set_json, METH_VARARGS, "set_json(key, json_text): a manifest section"},
    {"seal", (PyCFunction)rw_seal, METH_NOARGS, "seal() -> directory (status DONE)"},
    {"fail", (PyCFunction)rw_fail, METH_VARARGS, "fail(message) -> directory (status FAILED)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef rw_getset[] = {{"dir", (getter)rw_dir, NULL, "the record directory", NULL},
                                  {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject record_writer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "brainlesslab._core.RecordWriter",
    .tp_basicsize = sizeof(record_writer),
    .tp_dealloc = (destructor)rw_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A record being written: reserved, filled through path(), then seal() or fail().",
    .tp_methods = rw_methods,
    .tp_getset = rw_getset,
};

PyObject *bl_py_record_writer_new(PyObject *self, PyObject *args)
{
    PyObject *root;
    const char *name;
    if (!PyArg_ParseTuple(args, "O&s", PyUnicode_FSConverter, &root, &name))
        return NULL;
    bl_error err = {0};
    bl_record *rec = NULL;
    bl_status st = bl_record_reserve(PyBytes_AS_STRING(root), name, &rec, &err);
    Py_DECREF(root);
    if (st)
        return bl_py_raise(&err);
    record_writer *w = PyObject_New(record_writer, &record_writer_type);
    if (!w) {
        bl_record_destroy(rec);
        return NULL;
    }
    w->rec = rec;
    return (PyObject *)w;
}

int bl_py_record_init(PyObject *module)
{
    if (PyType_Ready(&record_writer_type) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "RecordWriter", (PyObject *)&record_writer_type);
}

/* verify(dir) -> (ok, artifacts, report_text, message): the C verifier's
 * verdict, its per-problem lines and its one-line summary. */
PyObject *bl_py_verify(PyObject *self, PyObject *args)
{
    PyObject *dir;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &dir))
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *report = open_memstream(&text, &len);
    if (!report) {
        Py_DECREF(dir);
        return PyErr_NoMemory();
    }
    bl_error err = {0};
    size_t artifacts = 0;
    bl_status st;
    Py_BEGIN_ALLOW_THREADS
    st = bl_record_verify(PyBytes_AS_STRING(dir), report, &artifacts, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(dir);
    fclose(report);
    PyObject *out = Py_BuildValue("(Onss)", st == BL_OK ? Py_True : Py_False, (Py_ssize_t)artifacts,
                                  text ? text : "", st ? err.message : "");
    free(text);
    return out;
}

/* run_plan(path, root, backend=None, threads=-1, force=False) -> record
 * directory: bl_run_plan, whatever the plan's operation. */
PyObject *bl_py_run_plan(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "root", "backend", "threads", "force", NULL};
    PyObject *path, *root;
    const char *backend = NULL;
    int threads = -1, force = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|zip", names, PyUnicode_FSConverter, &path,
                                     PyUnicode_FSConverter, &root, &backend, &threads, &force))
        return NULL;
    bl_error err = {0};
    bl_context *ctx = NULL;
    if (bl_context_create(&ctx, &err)) {
        Py_DECREF(path);
        Py_DECREF(root);
        return bl_py_raise(&err);
    }
    /* Signals (issue 26): SIGINT, SIGTERM and SIGHUP are noted and the run
     * asks for them once per delay window (_core_signal.c), so it stops
     * within about a window and the library fails its record ("cancelled
     * ...") the ordinary way, never leaving it reserved. Afterwards each is
     * answered as the session would: Ctrl-C raises KeyboardInterrupt (or the
     * session's SIGINT handler runs); SIGTERM/SIGHUP with their default
     * action end the process by that signal, the record now FAILED. */
    const int watched = BL_PY_SIGINT | BL_PY_SIGTERM | BL_PY_SIGHUP;
    bl_context_set_cancel(ctx, bl_py_signal_cancel, NULL);
    bl_plan *plan = NULL;
    bl_status st;
    char *dir = NULL;
    bl_py_signal_begin(watched);
    Py_BEGIN_ALLOW_THREADS
    st = bl_plan_load(PyBytes_AS_STRING(path), &plan, &err);
    bl_experiment_options opt = {.root = PyBytes_AS_STRING(root), .backend = backend, .threads = threads,
                                 .context = ctx, .force = force};
    bl_run *run = NULL;
    if (!st)
        st = bl_run_plan(plan, &opt, &run, &err);
    if (!st)
        dir = strdup(bl_run_record_dir(run));
    bl_run_destroy(run);
    bl_plan_destroy(plan);
    Py_END_ALLOW_THREADS
    bl_context_destroy(ctx);
    Py_DECREF(path);
    Py_DECREF(root);
    int sig = bl_py_signal_end(watched); /* a default action does not return */
    /* The session's handler for the signal: its exception (KeyboardInterrupt)
     * wins over the cancelled run's error. A signal after the last check
     * (during the seal) leaves a DONE record, and is raised all the same. */
    if (sig && PyErr_CheckSignals() < 0) {
        free(dir);
        return NULL;
    }
    if (st)
        return bl_py_raise(&err);
    if (!dir)
        return PyErr_NoMemory();
    PyObject *out = PyUnicode_DecodeFSDefault(dir);
    free(dir);
    if (out && PyErr_CheckSignals() < 0)
        Py_CLEAR(out);
    return out;
}

/* ---- tables ---- */

#if !defined(BL_HAVE_TABLE_READER) || !defined(BL_HAVE_PARQUET_WRITER)
static PyObject *not_yet(const char *what)
{
    bl_error err = {.status = BL_ERR_UNSUPPORTED};
    snprintf(err.message, sizeof err.message, "%s is not in this build of the library yet", what);
    return bl_py_raise(&err);
}
#endif

#ifdef BL_HAVE_TABLE_READER
static PyObject *column_to_python(bl_column *c)
{
    npy_intp n = (npy_intp)c->n;
    PyObject *out = NULL;
    if (c->type == BL_COL_STRING) {
        out = PyList_New(n);
        for (npy_intp i = 0; out && i < n; i++) {
            PyObject *s = PyUnicode_DecodeUTF8(c->data + c->offsets[i], (Py_ssize_t)(c->offsets[i + 1] - c->offsets[i]),
                                               "strict");
            if (!s) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, s);
        }
        return out;
    }
    int typenum = c->type == BL_COL_DOUBLE ? NPY_FLOAT64 : NPY_INT64;
    out = PyArray_SimpleNew(1, &n, typenum);
    if (out && n)
        memcpy(PyArray_DATA((PyArrayObject *)out), c->type == BL_COL_DOUBLE ? (void *)c->f64 : (void *)c->i64,
               (size_t)n * 8);
    if (out && c->type == BL_COL_BOOL) {
        PyObject *b = PyArray_Cast((PyArrayObject *)out, NPY_BOOL);
        Py_DECREF(out);
        out = b;
    }
    return out;
}

/* read_table(path, names=None) -> {name: array or list of str}, in file order. */
PyObject *bl_py_read_table(PyObject *self, PyObject *args)
{
    PyObject *path, *names_obj = Py_None;
    if (!PyArg_ParseTuple(args, "O&|O", PyUnicode_FSConverter, &path, &names_obj))
        return NULL;
    bl_error err = {0};
    bl_table *t = NULL;
    bl_status st = bl_table_open(PyBytes_AS_STRING(path), BL_TABLE_AUTO, &t, &err);
    Py_DECREF(path);
    if (st)
        return bl_py_raise(&err);
    PyObject *names = names_obj == Py_None ? NULL : PySequence_Fast(names_obj, "names must be a sequence of str");
    size_t n = names ? (size_t)PySequence_Fast_GET_SIZE(names) : bl_table_n_columns(t);
    const char **cn = calloc(n ? n : 1, sizeof *cn);
    bl_column *cols = calloc(n ? n : 1, sizeof *cols);
    PyObject *out = NULL;
    if (!cn || !cols || (names_obj != Py_None && !names)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        cn[i] = names ? PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(names, (Py_ssize_t)i)) : bl_table_column_name(t, i);
        if (!cn[i])
            goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    st = bl_table_read_all(t, cn, NULL, n, cols, &err);
    Py_END_ALLOW_THREADS
    if (st) {
        bl_py_raise(&err);
        goto done;
    }
    out = PyDict_New();
    for (size_t i = 0; out && i < n; i++) {
        PyObject *v = column_to_python(&cols[i]);
        if (!v || PyDict_SetItemString(out, cn[i], v) < 0)
            Py_CLEAR(out);
        Py_XDECREF(v);
    }
done:
    for (size_t i = 0; cols && i < n; i++)
        bl_column_clear(&cols[i]);
    free(cols);
    free(cn);
    Py_XDECREF(names);
    bl_table_close(t);
    return out;
}

#else
PyObject *bl_py_read_table(PyObject *self, PyObject *args) { return not_yet("the table reader"); }
#endif

#ifdef BL_HAVE_PARQUET_WRITER
/* One column from Python: (name, kind, values) with kind "int64", "double" or
 * "string"; numbers as anything NumPy converts, strings as a sequence of str. */
static int fill_column(PyObject *item, bl_parquet_column_spec *spec, bl_column *col, PyObject **keep)
{
    const char *kind;
    PyObject *values;
    if (!PyArg_ParseTuple(item, "ssO;columns are (name, kind, values)", &spec->name, &kind, &values))
        return -1;
    if (!strcmp(kind, "string")) {
        PyObject *seq = PySequence_Fast(values, "string column values must be a sequence of str");
        if (!seq)
            return -1;
        *keep = seq;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), total = 0;
        col->type = spec->type = BL_COL_STRING;
        col->n = (uint64_t)n;
        col->offsets = malloc(((size_t)n + 1) * sizeof *col->offsets);
        if (!col->offsets)
            return PyErr_NoMemory(), -1;
        col->offsets[0] = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t len;
            if (!PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(seq, i), &len))
                return -1;
            total += len;
            col->offsets[i + 1] = total;
        }
        col->data = malloc(total ? (size_t)total : 1);
        if (!col->data)
            return PyErr_NoMemory(), -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_ssize_t len;
            const char *s = PyUnicode_AsUTF8AndSize(PySequence_Fast_GET_ITEM(seq, i), &len);
            memcpy(col->data + col->offsets[i], s, (size_t)len);
        }
        return 0;
    }
    int typenum = !strcmp(kind, "int64") ? NPY_INT64 : !strcmp(kind, "double") ? NPY_FLOAT64 : -1;
    if (typenum < 0) {
        PyErr_Format(PyExc_ValueError, "column %s: kind must be int64, double or string, not %s", spec->name, kind);
        return -1;
    }
    PyObject *a = PyArray_FROMANY(values, typenum, 1, 1, NPY_ARRAY_IN_ARRAY);
    if (!a)
        return -1;
    *keep = a;
    col->type = spec->type = typenum == NPY_INT64 ? BL_COL_INT64 : BL_COL_DOUBLE;
    col->n = (uint64_t)PyArray_SIZE((PyArrayObject *)a);
    /* Borrowed: the writer only reads; never freed through bl_column_clear. */
    if (typenum == NPY_INT64)
        col->i64 = PyArray_DATA((PyArrayObject *)a);
    else
        col->f64 = PyArray_DATA((PyArrayObject *)a);
    return 0;
}

/* write_parquet(path, [(name, kind, values), ...], codec="zstd", nullable=False,
 * metadata=None): one row group. nullable marks every field OPTIONAL (what
 * pandas writes), metadata is a dict of str: str for the footer's key-value
 * metadata (the "pandas" schema). */
PyObject *bl_py_write_parquet(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"path", "columns", "codec", "nullable", "metadata", NULL};
    PyObject *path, *columns, *metadata = Py_None;
    const char *codec = "zstd";
    int nullable = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O|spO", kw, PyUnicode_FSConverter, &path, &columns, &codec,
                                     &nullable, &metadata))
        return NULL;
    if (metadata != Py_None && !PyDict_Check(metadata)) {
        Py_DECREF(path);
        PyErr_SetString(PyExc_TypeError, "write_parquet: metadata must be a dict of str: str");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(columns, "columns must be a sequence of (name, kind, values)");
    if (!seq) {
        Py_DECREF(path);
        return NULL;
    }
    size_t n = (size_t)PySequence_Fast_GET_SIZE(seq);
    bl_parquet_column_spec *spec = calloc(n ? n : 1, sizeof *spec);
    bl_column *cols = calloc(n ? n : 1, sizeof *cols);
    PyObject **keep = calloc(n ? n : 1, sizeof *keep);
    PyObject *out = NULL;
    if (!spec || !cols || !keep) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if (fill_column(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i), &spec[i], &cols[i], &keep[i]) < 0)
            goto done;
        spec[i].nullable = nullable;
    }
    bl_error err = {0};
    bl_parquet_writer *w = NULL;
    bl_status st = bl_parquet_writer_create(PyBytes_AS_STRING(path), spec, n, codec, &w, &err);
    Py_ssize_t at = 0;
    PyObject *key, *value;
    while (!st && metadata != Py_None && PyDict_Next(metadata, &at, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        const char *v = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
        if (!k || !v) {
            bl_parquet_writer_abort(w);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "write_parquet: metadata must be a dict of str: str");
            goto done;
        }
        if ((st = bl_parquet_writer_set_metadata(w, k, v, &err)))
            bl_parquet_writer_abort(w);
    }
    Py_BEGIN_ALLOW_THREADS
    if (!st) {
        st = bl_parquet_writer_write(w, cols, &err);
        if (st)
            bl_parquet_writer_abort(w);
        else
            st = bl_parquet_writer_finish(w, &err);
    }
    Py_END_ALLOW_THREADS
    if (st)
        bl_py_raise(&err);
    else
        out = Py_NewRef(Py_None);
done:
    for (size_t i = 0; cols && i < n; i++) {
        if (cols[i].type == BL_COL_STRING) {
            free(cols[i].offsets);
            free(cols[i].data);
        }
        if (keep)
            Py_XDECREF(keep[i]);
    }
    free(spec);
    free(cols);
    free(keep);
    Py_DECREF(seq);
    Py_DECREF(path);
    return out;
}
#else
PyObject *bl_py_write_parquet(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)kwargs;
    return not_yet("the Parquet writer");
}
#endif
