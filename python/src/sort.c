/* SPDX-License-Identifier: Apache-2.0 */
/* sort.c: the device radix sort (loom_sort, loom_take_rows), run at once on materialized arrays.
 *
 *   radix_sort(keys, values, flags)  loom_sort of a C-contiguous GPU array's rows (the Python layer moves
 *                                    the axis last and copies); values None or an array of the keys'
 *                                    shape; returns (sorted keys, sorted values or indices, or None)
 *   take_rows(src, index)            loom_take_rows: src's rows gathered by int64 indices
 */
#include "core.h"

static int sort_operand(ModState *st, PyObject *o, const char *what, LoomArray *out) {
  if (!is_array(st, o)) {
    PyErr_Format(PyExc_TypeError, "radix_sort: %s must be a loom array", what);
    return -1;
  }
  ArrayObject *a = (ArrayObject *)o;
  if (a->lazy && materialize(st, a) < 0) return -1;
  *out = a->desc;
  return 0;
}

static PyObject *core_radix_sort(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  long flags;
  if (nargs != 3 || ((flags = PyLong_AsLong(args[2])) == -1 && PyErr_Occurred())) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "radix_sort(keys, values, flags)");
    return NULL;
  }
  LoomArray keys, values;
  int has_values = args[1] != Py_None;
  if (sort_operand(st, args[0], "keys", &keys) < 0 || (has_values && sort_operand(st, args[1], "values", &values) < 0))
    return NULL;
  int want_values = has_values || (flags & LOOM_SORT_INDEX);
  LoomArray sk, sv;
  LoomStatus s = loom_sort(ctx_of(st), &keys, has_values ? &values : NULL, (int32_t)flags, &sk, want_values ? &sv : NULL);
  if (s) return raise_status(st, s);
  PyObject *k = wrap_result(st, &sk, 0); /* takes sk even when it fails */
  if (!k) {
    if (want_values) loom_array_free(ctx_of(st), &sv);
    return NULL;
  }
  PyObject *v = want_values ? wrap_result(st, &sv, 0) : Py_NewRef(Py_None);
  if (!v) {
    Py_DECREF(k);
    return NULL;
  }
  PyObject *t = PyTuple_Pack(2, k, v);
  Py_DECREF(k);
  Py_DECREF(v);
  return t;
}

static PyObject *core_take_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "take_rows(src, index)");
    return NULL;
  }
  LoomArray src, index, out;
  if (sort_operand(st, args[0], "src", &src) < 0 || sort_operand(st, args[1], "index", &index) < 0) return NULL;
  LoomStatus s = loom_take_rows(ctx_of(st), &src, &index, &out);
  if (s) return raise_status(st, s);
  return wrap_result(st, &out, 0);
}

PyMethodDef sort_functions[] = {FASTF(radix_sort), FASTF(take_rows), {NULL}};
