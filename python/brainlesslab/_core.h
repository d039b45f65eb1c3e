/* Shared declarations of the extension module's C files (_core.c: module,
 * errors, connectomes, simulation; _core_record.c: records, plans, tables;
 * _core_net.c: the network of equation models). */
#ifndef BRAINLESSLAB_PY_CORE_H
#define BRAINLESSLAB_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL bl_py_ARRAY_API
#ifndef BL_PY_MAIN_FILE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "brainlesslab/error.h"

/* brainlesslab.Error: carries the library's message; .status is the
 * bl_status name ("BL_ERR_INVALID", ...). */
extern PyObject *bl_py_error;

/* Raise brainlesslab.Error from a failed call; returns NULL. */
PyObject *bl_py_raise(const bl_error *err);

/* A NumPy array viewing `data` (n elements of typenum) whose base is `owner`
 * (a new reference is taken), so the memory lives as long as any view. */
PyObject *bl_py_view(PyObject *owner, int nd, const npy_intp *shape, int typenum, const void *data,
                     int writeable);

PyObject *bl_py_record_writer_new(PyObject *self, PyObject *args);
PyObject *bl_py_verify(PyObject *self, PyObject *args);
PyObject *bl_py_run_plan(PyObject *self, PyObject *args, PyObject *kw);
PyObject *bl_py_read_table(PyObject *self, PyObject *args);
PyObject *bl_py_write_parquet(PyObject *self, PyObject *args, PyObject *kwargs);
int bl_py_record_init(PyObject *module);
PyObject *bl_py_solve_ode(PyObject *self, PyObject *args, PyObject *kw);
PyObject *bl_py_ode_plan(PyObject *self, PyObject *args);
PyObject *bl_py_run_ssa(PyObject *self, PyObject *args, PyObject *kw); /* _core_ssa.c */
PyObject *bl_py_ssa_plan(PyObject *self, PyObject *args);
int bl_py_net_init(PyObject *module); /* _core_net.c: EqNet */

/* _core_signal.c: signals during a run with the GIL released. mask: bit 0
 * SIGINT, bit 1 SIGTERM, bit 2 SIGHUP. begin notes them (chaining to the
 * handlers in place); bl_py_signal_cancel is the context's cancel callback
 * (nonzero once one came; any thread, no GIL); end restores the handlers,
 * takes a default action now (ending the process) and returns the signal
 * noted (0: none). Begin and end with the GIL held. */
enum { BL_PY_SIGINT = 1, BL_PY_SIGTERM = 2, BL_PY_SIGHUP = 4 };
void bl_py_signal_begin(int mask);
int bl_py_signal_cancel(void *unused);
int bl_py_signal_end(int mask);
const char *bl_py_signal_name(int sig);

#endif
