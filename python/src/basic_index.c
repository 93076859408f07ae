/* SPDX-License-Identifier: Apache-2.0 */
/* basic_index.c: NumPy's basic indexing of a materialized array as a view, without a Python frame.
 *
 *   basic_view(a, key)  a[key] for a key of Python ints, slices, None and at most one Ellipsis that NumPy
 *                       accepts (every int in bounds): a view of a's memory (a pending array is evaluated
 *                       first, as every view of it is). NotImplemented for anything else (a tracer, an
 *                       array or list, a bool, a NumPy integer, an index out of bounds, too many indices,
 *                       two Ellipses), which loom's Python layer then indexes, raising NumPy's errors.
 *   view_of(a, base, v[, dtype])
 *                       the view of a's memory that NumPy's view v of base (a's geometry) describes: the
 *                       views loom computes with NumPy (reshape, transpose, ...) read v's geometry here.
 *   permuted_view(a, axes), contiguous_view(a, shape)
 *                       a.transpose(axes) and a C-contiguous a.reshape(shape) as views (NotImplemented for
 *                       what the Python layer decides: bad axes, -1 in shape, other layouts).
 *
 * Before it, the Python layer (_indexing._getitem) built each view through NumPy: ~5 us a view where NumPy
 * takes 0.1 (a[3], M[1], a[1:50], x[:, None] on the host, 2026-12-06); this is ~0.3 us.
 */
#include "core.h"

/* One element of the key: its kind and, for an int or slice, what it selects. */
enum { KEY_INT, KEY_SLICE, KEY_NEWAXIS, KEY_ELLIPSIS };

static int key_kind(PyObject *e) {
  if (e == Py_None) return KEY_NEWAXIS;
  if (e == Py_Ellipsis) return KEY_ELLIPSIS;
  if (PySlice_Check(e)) return KEY_SLICE;
  if (PyLong_Check(e) && !PyBool_Check(e)) return KEY_INT;
  return -1;
}

/* Materializes a for a view of it (0; *devfree: its flag from before, which materializing clears but for a
 * 0-d constant); 1 for a tracer, whose views are graph nodes (NotImplemented); -1 with an exception. */
static int view_base(ModState *st, ArrayObject *a, int *devfree) {
  if (a->lazy && ((GraphObject *)a->graph)->trace) return 1;
  *devfree = a->devfree;
  return materialize(st, a) < 0 ? -1 : 0;
}

static PyObject *core_basic_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "basic_view(array, key)");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[0];
  PyObject *key = args[1];
  PyObject *const *items = &key;
  Py_ssize_t nkey = 1;
  if (PyTuple_Check(key)) {
    items = &PyTuple_GET_ITEM(key, 0);
    nkey = PyTuple_GET_SIZE(key);
  }
  int kinds[2 * LOOM_MAX_RANK + 1];
  if (nkey > 2 * LOOM_MAX_RANK) Py_RETURN_NOTIMPLEMENTED;
  int nreal = 0, nell = 0;
  for (Py_ssize_t i = 0; i < nkey; i++) {
    kinds[i] = key_kind(items[i]);
    if (kinds[i] < 0) Py_RETURN_NOTIMPLEMENTED;
    nreal += kinds[i] == KEY_INT || kinds[i] == KEY_SLICE;
    nell += kinds[i] == KEY_ELLIPSIS;
  }
  int32_t ndim = a->desc.ndim;
  if (nell > 1 || nreal > ndim) Py_RETURN_NOTIMPLEMENTED; /* NumPy's IndexError, from the Python layer */
  int devfree, r = view_base(st, a, &devfree);
  if (r) return r < 0 ? NULL : Py_NewRef(Py_NotImplemented);
  LoomArray d = a->desc; /* materialized: data and strides (in items) known */
  LoomArray out = d;
  out.ndim = 0;
  int64_t off = 0; /* in items */
  int32_t axis = 0;
  for (Py_ssize_t i = 0; i < nkey; i++) {
    int k = kinds[i];
    if (k == KEY_ELLIPSIS) { /* the axes no other element names, whole */
      for (int32_t j = 0; j < ndim - nreal; j++, axis++) {
        if (out.ndim == LOOM_MAX_RANK) Py_RETURN_NOTIMPLEMENTED;
        out.shape[out.ndim] = d.shape[axis];
        out.strides[out.ndim++] = d.strides[axis];
      }
      continue;
    }
    if (out.ndim == LOOM_MAX_RANK) Py_RETURN_NOTIMPLEMENTED;
    if (k == KEY_NEWAXIS) {
      out.shape[out.ndim] = 1;
      out.strides[out.ndim++] = 0;
      continue;
    }
    int64_t n = d.shape[axis];
    if (k == KEY_INT) {
      int overflow = 0;
      long long j = PyLong_AsLongLongAndOverflow(items[i], &overflow);
      if (overflow || (j == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
      }
      if (j < -n || j >= n) Py_RETURN_NOTIMPLEMENTED;
      off += (j < 0 ? j + n : j) * d.strides[axis];
      axis++;
      continue;
    }
    Py_ssize_t start, stop, step; /* a slice: Python's own rules (ValueError for a zero step) */
    if (PySlice_Unpack(items[i], &start, &stop, &step) < 0) return NULL;
    Py_ssize_t len = PySlice_AdjustIndices((Py_ssize_t)n, &start, &stop, step);
    if (len > 0) off += (int64_t)start * d.strides[axis];
    out.shape[out.ndim] = len;
    out.strides[out.ndim++] = d.strides[axis] * (int64_t)step;
    axis++;
  }
  for (; axis < ndim; axis++) { /* no Ellipsis and fewer indices than axes: the rest whole */
    if (out.ndim == LOOM_MAX_RANK) Py_RETURN_NOTIMPLEMENTED;
    out.shape[out.ndim] = d.shape[axis];
    out.strides[out.ndim++] = d.strides[axis];
  }
  int64_t count = 1, item = (int64_t)loom_dtype_size(d.dtype);
  for (int32_t j = 0; j < out.ndim; j++) {
    count *= out.shape[j];
    out.strides[j] *= item; /* view_in takes bytes */
  }
  /* an empty view keeps the base's first element (NumPy's offset of an empty view does not matter) */
  return (PyObject *)view_in(st, a, devfree, count ? off * item : 0, &out);
}

/* The byte extent [lo, hi) of a buffer's elements (ndim, shape, strides and itemsize of a Py_buffer). */
static void buffer_extent(const Py_buffer *b, char **lo, char **hi) {
  char *l = b->buf, *h = b->buf;
  for (int i = 0; i < b->ndim; i++) {
    Py_ssize_t span = (b->shape[i] - 1) * b->strides[i];
    if (span < 0) l += span;
    else h += span;
  }
  *lo = l;
  *hi = h + b->itemsize;
}

/* view_of(a, base, v[, dtype]): the loom view of a's memory with the geometry that the NumPy array v has
 * within base, a NumPy array of a's geometry (a's memory on the host, a stand-in on a GPU): v's offset
 * from base's first element and its strides, in a's dtype or the given one. None when v does not lie within
 * base's memory (not a view of it); NotImplemented for an empty v or one without a strided buffer (the
 * Python layer decides those). What _ndarray._numpy_view read through __array_interface__ (~3 us). */
static PyObject *core_view_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if ((nargs != 3 && nargs != 4) || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "view_of(array, base, view[, dtype])");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[0];
  int devfree, vr = view_base(st, a, &devfree);
  if (vr) return vr < 0 ? NULL : Py_NewRef(Py_NotImplemented);
  LoomArray d = a->desc;
  if (nargs == 4 && parse_dtype(args[3], &d.dtype) < 0) return NULL;
  Py_buffer bb, vb;
  if (PyObject_GetBuffer(args[1], &bb, PyBUF_STRIDES) < 0) {
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (PyObject_GetBuffer(args[2], &vb, PyBUF_STRIDES) < 0) {
    PyErr_Clear();
    PyBuffer_Release(&bb);
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject *r = NULL;
  int empty = 0;
  for (int i = 0; i < vb.ndim; i++) empty |= vb.shape[i] == 0;
  for (int i = 0; i < bb.ndim; i++) empty |= bb.shape[i] == 0;
  if (empty || vb.ndim > LOOM_MAX_RANK) {
    r = Py_NewRef(Py_NotImplemented);
    goto done;
  }
  char *blo, *bhi, *vlo, *vhi;
  buffer_extent(&bb, &blo, &bhi);
  buffer_extent(&vb, &vlo, &vhi);
  if (vlo < blo || vhi > bhi) {
    r = Py_NewRef(Py_None);
    goto done;
  }
  d.ndim = vb.ndim;
  for (int i = 0; i < vb.ndim; i++) d.shape[i] = vb.shape[i];
  /* the strides from v.strides: a buffer export replaces those of unit axes with contiguous ones (NumPy's
   * buffer protocol), and a view keeps NumPy's own */
  PyObject *strides = PyObject_GetAttrString(args[2], "strides");
  int32_t ns = -1;
  int bad = !strides || parse_i64s(strides, d.strides, &ns, "strides") < 0;
  Py_XDECREF(strides);
  if (bad || ns != vb.ndim) {
    if (!bad) PyErr_SetString(PyExc_ValueError, "view_of: the view's strides and shape differ in length");
    goto done;
  }
  r = (PyObject *)view_in(st, a, devfree, (long long)((char *)vb.buf - (char *)bb.buf), &d);
done:
  PyBuffer_Release(&vb);
  PyBuffer_Release(&bb);
  return r;
}

/* permuted_view(a, axes): a.transpose(axes) (axes None: reversed) as a view; NotImplemented for a tracer
 * or axes that are not a permutation of a's (the Python layer raises NumPy's error). */
static PyObject *core_permuted_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "permuted_view(array, axes)");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[0];
  int32_t ndim = a->desc.ndim, perm[LOOM_MAX_RANK];
  if (args[1] == Py_None) {
    for (int32_t i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  } else {
    if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) != ndim) Py_RETURN_NOTIMPLEMENTED;
    int seen = 0; /* bit per axis (LOOM_MAX_RANK <= 16) */
    for (int32_t i = 0; i < ndim; i++) {
      PyObject *e = PyTuple_GET_ITEM(args[1], i);
      if (!PyLong_CheckExact(e)) Py_RETURN_NOTIMPLEMENTED;
      long v = PyLong_AsLong(e);
      if (v == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
      }
      if (v < 0) v += ndim;
      if (v < 0 || v >= ndim || (seen >> v & 1)) Py_RETURN_NOTIMPLEMENTED;
      seen |= 1 << v;
      perm[i] = (int32_t)v;
    }
  }
  int devfree, r = view_base(st, a, &devfree);
  if (r) return r < 0 ? NULL : Py_NewRef(Py_NotImplemented);
  LoomArray out = a->desc;
  int64_t item = (int64_t)loom_dtype_size(out.dtype);
  for (int32_t i = 0; i < ndim; i++) {
    out.shape[i] = a->desc.shape[perm[i]];
    out.strides[i] = a->desc.strides[perm[i]] * item;
  }
  return (PyObject *)view_in(st, a, devfree, 0, &out);
}

/* contiguous_view(a, shape): a C-contiguous a reshaped to shape (a tuple of non-negative ints with the same
 * count of elements) as a view; NotImplemented for anything else (the Python layer decides those). */
static PyObject *core_contiguous_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "contiguous_view(array, shape)");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[0];
  if (!PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) > LOOM_MAX_RANK) Py_RETURN_NOTIMPLEMENTED;
  LoomArray out = a->desc;
  out.ndim = (int32_t)PyTuple_GET_SIZE(args[1]);
  int64_t count = 1, have = 1;
  for (int32_t i = 0; i < out.ndim; i++) {
    PyObject *e = PyTuple_GET_ITEM(args[1], i);
    if (!PyLong_CheckExact(e)) Py_RETURN_NOTIMPLEMENTED;
    long long v = PyLong_AsLongLong(e);
    if (v < 0) { /* -1 (inferred) or an error: the Python layer */
      PyErr_Clear();
      Py_RETURN_NOTIMPLEMENTED;
    }
    out.shape[i] = v;
    if (__builtin_mul_overflow(count, v, &count)) Py_RETURN_NOTIMPLEMENTED;
  }
  int same = out.ndim == a->desc.ndim;
  for (int32_t i = 0; i < a->desc.ndim; i++) {
    have *= a->desc.shape[i];
    if (same && out.shape[i] != a->desc.shape[i]) same = 0;
  }
  if (count != have || have == 0) Py_RETURN_NOTIMPLEMENTED;
  int devfree, r = view_base(st, a, &devfree);
  if (r) return r < 0 ? NULL : Py_NewRef(Py_NotImplemented);
  int64_t item = (int64_t)loom_dtype_size(out.dtype), stride = item;
  if (same) { /* NumPy keeps the strides of a reshape to the same shape (unit axes' too), any layout */
    for (int32_t i = 0; i < out.ndim; i++) out.strides[i] = a->desc.strides[i] * item;
    return (PyObject *)view_in(st, a, devfree, 0, &out);
  }
  int64_t want = 1; /* C-contiguous: unit-size axes' strides do not matter */
  for (int32_t i = a->desc.ndim - 1; i >= 0; i--) {
    if (a->desc.shape[i] != 1 && a->desc.strides[i] != want) Py_RETURN_NOTIMPLEMENTED;
    want *= a->desc.shape[i];
  }
  for (int32_t i = out.ndim - 1; i >= 0; i--) {
    out.strides[i] = stride;
    stride *= out.shape[i];
  }
  return (PyObject *)view_in(st, a, devfree, 0, &out);
}


PyMethodDef basic_index_functions[] = {FASTF(basic_view), FASTF(view_of), FASTF(permuted_view), FASTF(contiguous_view),
                                       {NULL}};
