/* SPDX-License-Identifier: Apache-2.0 */
/* module.c: the module loom._core: its definition and exec slot (PEP 489 multi-phase init), the
 * lifetime of the per-module state, errors (a LoomStatus becomes the matching Python exception), the
 * Context type and the dtype names. Each concept's file contributes its functions (a <file>_functions
 * table) and heap types (a PyType_Spec); core_exec adds them all to the module.
 */
#include "core.h"

const char *const dtype_names[LOOM_DTYPE_COUNT] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "complex64", "complex128"};

/* ---- errors -------------------------------------------------------------------------------------- */
/* Raises the Python exception for a failed Loom call and returns NULL. */
PyObject *raise_status(ModState *st, LoomStatus s) {
  const char *msg = loom_last_error(ctx_of(st));
  if (!msg || !*msg) msg = loom_status_name(s);
  PyObject *exc = PyExc_RuntimeError;
  switch (s) {
  case LOOM_ERR_SHAPE: exc = PyExc_ValueError; break;
  case LOOM_ERR_DTYPE: exc = PyExc_TypeError; break;
  case LOOM_ERR_AXIS: exc = st->axis_error ? st->axis_error : PyExc_ValueError; break;
  case LOOM_ERR_OUT_OF_MEMORY: exc = st->oom_error ? st->oom_error : PyExc_MemoryError; break;
  case LOOM_ERR_INVALID_ARGUMENT: exc = strstr(msg, "out of bounds") ? PyExc_OverflowError : PyExc_ValueError; break;
  case LOOM_ERR_UNSUPPORTED: exc = PyExc_NotImplementedError; break;
  default: break;
  }
  PyErr_SetString(exc, msg);
  return NULL;
}

/* Raises for a failed kernel call: LOOM_ERR_INVALID_ARGUMENT is a ValueError (TypeError when
 * invalid_is_type: raw launches), the rest as raise_status. */
PyObject *raise_kernel(ModState *st, LoomStatus s, int invalid_is_type) {
  if (s != LOOM_ERR_INVALID_ARGUMENT) return raise_status(st, s);
  const char *msg = loom_last_error(ctx_of(st));
  PyErr_SetString(invalid_is_type ? PyExc_TypeError : PyExc_ValueError, msg && *msg ? msg : loom_status_name(s));
  return NULL;
}

/* ---- Context ------------------------------------------------------------------------------------- */
static void context_dealloc(ContextObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  if (self->ctx) loom_context_destroy(self->ctx);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot context_slots[] = {{Py_tp_dealloc, context_dealloc}, {0, NULL}};
static PyType_Spec context_spec = {"loom._core.Context", sizeof(ContextObject), 0, Py_TPFLAGS_DEFAULT,
                                   context_slots};

/* ---- module ------------------------------------------------------------------------------------------ */
/* _stop_background(): loom_stop_background_work, from the package's atexit handler (Python's handlers run
 * before any C one, so the driver's libraries are still whole while a running GPU tier-up finishes). */
static PyObject *core_stop_background(PyObject *m, PyObject *noargs) {
  (void)m;
  (void)noargs;
  Py_BEGIN_ALLOW_THREADS
  loom_stop_background_work();
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
}
static PyMethodDef module_functions[] = {
    {"_stop_background", core_stop_background, METH_NOARGS, "Stops loom's background threads (process exit)."},
    {NULL, NULL, 0, NULL}};

static PyMethodDef *const function_tables[] = {module_functions, eval_functions, ops_functions, create_functions, fuse_functions,
                                               dlpack_functions, device_functions, uk_functions, raw_functions,
                                               linalg_functions, fuse_bundle_functions, memory_functions, sort_functions,
                                               basic_index_functions};

static int core_exec(PyObject *m) {
  ModState *st = state_of_module(m);
  st->bound = 256;
  st->context_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &context_spec, NULL);
  st->buffer_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &buffer_spec, NULL);
  st->graph_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &graph_spec, NULL);
  st->array_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &array_spec, NULL);
  st->handle_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &handle_spec, NULL);
  st->fuse_entry_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &fuse_entry_spec, NULL);
  st->fused_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &fused_spec, NULL);
  st->uk_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &uk_spec, NULL);
  st->rawmod_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &rawmod_spec, NULL);
  st->rawfn_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &rawfn_spec, NULL);
  if (!st->context_type || !st->buffer_type || !st->graph_type || !st->array_type || !st->handle_type ||
      !st->fuse_entry_type || !st->fused_type || !st->uk_type || !st->rawmod_type || !st->rawfn_type)
    return -1;
  for (size_t i = 0; i < sizeof function_tables / sizeof function_tables[0]; i++)
    if (PyModule_AddFunctions(m, function_tables[i]) < 0) return -1;
  ContextObject *c = PyObject_New(ContextObject, st->context_type);
  if (!c) return -1;
  c->ctx = NULL;
  st->ctx_obj = (PyObject *)c;
  LoomStatus s = loom_context_create(&c->ctx);
  if (s) {
    PyErr_Format(PyExc_RuntimeError, "loom: cannot create a context (%s)", loom_status_name(s));
    return -1;
  }
  if (PyModule_AddObjectRef(m, "Array", (PyObject *)st->array_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Graph", (PyObject *)st->graph_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "Fused", (PyObject *)st->fused_type) < 0) return -1;
  if (PyModule_AddObjectRef(m, "UserKernel", (PyObject *)st->uk_type) < 0) return -1;
  PyObject *names = PyTuple_New(LOOM_DTYPE_COUNT);
  if (!names) return -1;
  for (int i = 0; i < LOOM_DTYPE_COUNT; i++) PyTuple_SET_ITEM(names, i, PyUnicode_FromString(dtype_names[i]));
  int rc = PyModule_AddObjectRef(m, "dtype_names", names);
  Py_DECREF(names);
  if (rc < 0) return -1;
  PyObject *ops = PyDict_New();
  if (!ops) return -1;
  for (int i = 0; i < LOOM_OP_COUNT; i++) {
    PyObject *v = PyLong_FromLong(i);
    if (!v || PyDict_SetItemString(ops, loom_op_name((LoomOp)i), v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(ops);
      return -1;
    }
    Py_DECREF(v);
  }
  rc = PyModule_AddObjectRef(m, "ops", ops);
  Py_DECREF(ops);
  if (rc < 0) return -1;
  if (PyModule_AddStringConstant(m, "version", LOOM_VERSION_STRING) < 0) return -1;
  return 0;
}

static int core_traverse(PyObject *m, visitproc visit, void *arg) {
  ModState *st = state_of_module(m);
  if (!st) return 0;
  Py_VISIT(st->ctx_obj);
  Py_VISIT(st->context_type);
  Py_VISIT(st->buffer_type);
  Py_VISIT(st->graph_type);
  Py_VISIT(st->array_type);
  Py_VISIT(st->handle_type);
  Py_VISIT(st->fuse_entry_type);
  Py_VISIT(st->fused_type);
  Py_VISIT(st->uk_type);
  Py_VISIT(st->rawmod_type);
  Py_VISIT(st->rawfn_type);
  Py_VISIT(st->uk_convert);
  Py_VISIT(st->uk_stream);
  Py_VISIT(st->np_ndarray);
  Py_VISIT(st->np_asarray);
  Py_VISIT(st->array_cls);
  Py_VISIT(st->graph_key);
  Py_VISIT(st->axis_error);
  Py_VISIT(st->oom_error);
  Py_VISIT(st->linalg_error);
  Py_VISIT(st->current_device);
  Py_VISIT(st->operators);
  return 0;
}
static int core_clear(PyObject *m) {
  ModState *st = state_of_module(m);
  if (!st) return 0;
  Py_CLEAR(st->graph_key);
  array_freelist_clear(st);
  Py_CLEAR(st->array_cls);
  Py_CLEAR(st->axis_error);
  Py_CLEAR(st->oom_error);
  Py_CLEAR(st->linalg_error);
  Py_CLEAR(st->current_device);
  Py_CLEAR(st->operators);
  Py_CLEAR(st->ctx_obj);
  Py_CLEAR(st->array_type);
  Py_CLEAR(st->handle_type);
  Py_CLEAR(st->fuse_entry_type);
  Py_CLEAR(st->fused_type);
  Py_CLEAR(st->uk_type);
  Py_CLEAR(st->rawmod_type);
  Py_CLEAR(st->rawfn_type);
  Py_CLEAR(st->uk_convert);
  Py_CLEAR(st->uk_stream);
  Py_CLEAR(st->np_ndarray);
  Py_CLEAR(st->np_asarray);
  Py_CLEAR(st->graph_type);
  Py_CLEAR(st->buffer_type);
  Py_CLEAR(st->context_type);
  return 0;
}
static void core_free(void *m) { core_clear((PyObject *)m); }

static PyModuleDef_Slot core_slots[] = {{Py_mod_exec, core_exec}, {0, NULL}};
struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "loom._core",
                                  "Loom's CPython extension: lazy arrays over the Loom C API",
                                  sizeof(ModState), NULL, core_slots, core_traverse,
                                  core_clear, core_free};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
