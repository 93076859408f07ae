/* linalg.c: matrix products (lazy graph nodes) and decompositions (run at once on the device).
 *
 *   matmul(a, b)                  NumPy's a @ b as a node of the operands' graph (loom_matmul)
 *   linalg(op, flags, *arrays)    loom_linalg on materialized, column-major packed arrays (the Python
 *                                 layer arranges the layout); returns the tuple of new arrays
 *   fft(kind, rank, n_last, a)    loom_fft on a materialized C-contiguous array (the Python layer moves the
 *                                 axes last and copies); returns the new array
 *   set_allow_tf32(flag)          loom_set_allow_tf32; returns the previous setting
 *   set_linalg_error(cls)         the exception class for LOOM_ERR_LINALG (numpy.linalg.LinAlgError)
 */
#include "core.h"

static PyObject *core_matmul(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "matmul(a, b)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args, 2);
  LoomNode a, b, y;
  if (!gr || node_of(st, gr, args[0], &a) < 0 || node_of(st, gr, args[1], &b) < 0) return NULL;
  LoomStatus s = loom_matmul(gr->g, a, b, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

static PyObject *core_linalg(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  long op, flags;
  if (nargs < 3 || nargs > 4 || (op = PyLong_AsLong(args[0])) < 0 || (flags = PyLong_AsLong(args[1])) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "linalg(op, flags, a[, b])");
    return NULL;
  }
  int nin = (int)nargs - 2;
  LoomArray in[2];
  for (int i = 0; i < nin; i++) {
    if (!is_array(st, args[2 + i])) {
      PyErr_SetString(PyExc_TypeError, "linalg: arguments must be loom arrays");
      return NULL;
    }
    ArrayObject *a = (ArrayObject *)args[2 + i];
    if (a->lazy && materialize(st, a) < 0) return NULL;
    in[i] = a->desc;
  }
  int nout = op == LOOM_LINALG_LU ? 2 : op == LOOM_LINALG_SOLVE || op == LOOM_LINALG_CHOLESKY ? 1
             : op == LOOM_LINALG_SVD ? ((flags & LOOM_LINALG_VALUES_ONLY) ? 1 : 3)
                                     : ((flags & LOOM_LINALG_VALUES_ONLY) ? 1 : 2);
  LoomArray out[3];
  LoomStatus s = loom_linalg(ctx_of(st), (LoomLinalgOp)op, (int32_t)flags, nin, in, nout, out);
  if (s) {
    if (s == LOOM_ERR_LINALG && st->linalg_error) {
      PyErr_SetString(st->linalg_error, loom_last_error(ctx_of(st)));
      return NULL;
    }
    return raise_status(st, s);
  }
  PyObject *t = PyTuple_New(nout);
  if (!t) {
    for (int i = 0; i < nout; i++) loom_array_free(ctx_of(st), &out[i]);
    return NULL;
  }
  for (int i = 0; i < nout; i++) {
    PyObject *r = wrap_result(st, &out[i], 0); /* takes out[i] even when it fails */
    if (!r) {
      for (int j = i + 1; j < nout; j++) loom_array_free(ctx_of(st), &out[j]);
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, i, r);
  }
  return t;
}

static PyObject *core_fft(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  long kind, rank;
  long long n_last;
  if (nargs != 4 || (kind = PyLong_AsLong(args[0])) < 0 || (rank = PyLong_AsLong(args[1])) < 0 ||
      ((n_last = PyLong_AsLongLong(args[2])) == -1 && PyErr_Occurred()) || !is_array(st, args[3])) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "fft(kind, rank, n_last, a)");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[3];
  if (a->lazy && materialize(st, a) < 0) return NULL;
  LoomArray out;
  LoomStatus s = loom_fft(ctx_of(st), (LoomFftKind)kind, (int32_t)rank, (int64_t)n_last, &a->desc, &out);
  if (s) return raise_status(st, s);
  return wrap_result(st, &out, 0);
}

static PyObject *core_set_allow_tf32(PyObject *module, PyObject *flag) {
  MODSTATE;
  int v = PyObject_IsTrue(flag);
  if (v < 0) return NULL;
  return PyBool_FromLong(loom_set_allow_tf32(ctx_of(st), v));
}

static PyObject *core_set_linalg_error(PyObject *module, PyObject *cls) {
  MODSTATE;
  if (!PyExceptionClass_Check(cls)) {
    PyErr_SetString(PyExc_TypeError, "set_linalg_error(cls): an exception class");
    return NULL;
  }
  Py_XSETREF(st->linalg_error, Py_NewRef(cls));
  Py_RETURN_NONE;
}

PyMethodDef linalg_functions[] = {
    FASTF(matmul), FASTF(linalg), FASTF(fft),
    {"set_allow_tf32", (PyCFunction)core_set_allow_tf32, METH_O, "TF32 for float32 products; returns the old setting"},
    {"set_linalg_error", (PyCFunction)core_set_linalg_error, METH_O, "the exception class of LOOM_ERR_LINALG"},
    {NULL}};
