/* SPDX-License-Identifier: Apache-2.0 */
/* create.c: creating arrays (empty, on the host or a device), importing memory (the buffer
 * protocol, foreign pointers such as __cuda_array_interface__), views of materialized arrays, and
 * copies between devices.
 */
#include "core.h"

/* ---- creation, import, views ------------------------------------------------------------------------ */

/* Writes 0 into every element of the materialized array d (any device) with one tiny graph. */
static int fill_zero(ModState *st, LoomArray *d) {
  LoomGraph *g = NULL;
  LoomNode z, c, b;
  LoomStatus s = loom_graph_create(ctx_of(st), &g);
  if (!s) s = loom_weak_int(g, 0, &z);
  if (!s) s = loom_cast(g, z, d->dtype, &c);
  if (!s) s = loom_broadcast_to(g, c, d->ndim, d->shape, &b);
  if (!s) s = loom_eval(g, 1, &b, d);
  loom_graph_destroy(g);
  if (s) raise_status(st, s);
  return s ? -1 : 0;
}

#pragma weak loom_memset

/* A new C-contiguous array on d's device (shape, dtype, device set), from Loom's device pool; zero: its
 * bytes cleared by a fill enqueued on the current stream (a libloom without loom_memset: a tiny graph). */
static PyObject *device_empty(ModState *st, LoomArray *d, int zero) {
  LoomStatus s = loom_array_alloc(ctx_of(st), d);
  if (s) return raise_status(st, s);
  BufferObject *b = buffer_new(st, BUF_LOOM);
  if (!b) {
    loom_array_free(ctx_of(st), d);
    return NULL;
  }
  b->la = *d;
  if (zero && numel(d) > 0 && loom_memset) {
    s = loom_memset(ctx_of(st), d->data, d->device, d->device_index, 0, (size_t)numel(d) * loom_dtype_size(d->dtype),
                    NULL);
    if (s) {
      Py_DECREF(b);
      return raise_status(st, s);
    }
  } else if (zero && numel(d) > 0 && fill_zero(st, d) < 0) {
    Py_DECREF(b);
    return NULL;
  }
  /* loom_array_alloc gave C strides; a new empty array has NumPy's zero strides, as on the host (b->la
   * keeps loom's) */
  if (numel(d) == 0) contiguous_strides(d);
  PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, d);
  Py_DECREF(b);
  return r;
}

static PyObject *host_empty(ModState *st, LoomArray *d_in, size_t bytes, int zero);

/* empty(shape, dtype, zero): a new C-contiguous array (64-byte aligned). */
static PyObject *core_empty(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomArray d;
  memset(&d, 0, sizeof d);
  if ((nargs != 3 && nargs != 5) || parse_i64s(args[0], d.shape, &d.ndim, "shape") < 0 ||
      parse_dtype(args[1], &d.dtype) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "empty(shape, dtype, zero[, kind, index])");
    return NULL;
  }
  int zero = PyObject_IsTrue(args[2]);
  if (zero < 0) return NULL;
  if (nargs == 5 && parse_device(args[3], args[4], &d.device, &d.device_index) < 0) return NULL;
  size_t bytes = loom_dtype_size(d.dtype);
  for (int i = 0; i < d.ndim; i++) {
    if (d.shape[i] < 0) {
      PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
      return NULL;
    }
    if (d.shape[i] > 0 && bytes > (SIZE_MAX / 2) / (size_t)d.shape[i]) {
      PyErr_SetString(PyExc_MemoryError, "array is too big");
      return NULL;
    }
    bytes *= (size_t)d.shape[i];
  }
  contiguous_strides(&d);
  if (d.device != LOOM_DEVICE_HOST) return device_empty(st, &d, zero);
  return host_empty(st, &d, bytes, zero);
}

/* A new C-contiguous host array of d's shape and dtype (d: strides set; bytes: its size), 64-byte aligned;
 * zero: its bytes cleared. */
static PyObject *host_empty(ModState *st, LoomArray *d_in, size_t bytes, int zero) {
  LoomArray d = *d_in;
  /* large host arrays from the runtime's caching pool (runtime/host_pool.c: blocks kept when freed, 2 MiB
   * pages): from malloc every new array of >= 1 MiB was fresh memory, a page fault per 4 KiB on its first
   * write (concatenate of two 16 MB halves: ~30 ms against 1-2 for a kernel's pooled output) */
  if (bytes >= ((size_t)1 << 20)) {
    LoomStatus s = loom_array_alloc(ctx_of(st), &d);
    if (s) return raise_status(st, s);
    BufferObject *b = buffer_new(st, BUF_LOOM);
    if (!b) {
      loom_array_free(ctx_of(st), &d);
      return NULL;
    }
    b->la = d;
    if (zero) memset(d.data, 0, bytes);
    PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, &d);
    Py_DECREF(b);
    return r;
  }
  size_t alloc = (bytes + 63) / 64 * 64;
  if (alloc == 0) alloc = 64;
  BufferObject *b = buffer_new(st, BUF_ALIGNED);
  if (!b) return NULL;
  b->ptr = aligned_alloc(64, alloc);
  if (!b->ptr) {
    Py_DECREF(b);
    return PyErr_Format(PyExc_MemoryError, "Out of memory allocating %zu bytes", bytes);
  }
  if (zero) memset(b->ptr, 0, alloc);
  d.data = b->ptr;
  PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, &d);
  Py_DECREF(b);
  return r;
}

/* Copies src (any strides) into a new contiguous array. */

static PyObject *copy_array(ModState *st, ArrayObject *src) {
  /* a C-contiguous host source is one memcpy (a graph, a plan and a kernel launch cost ~5 us) */
  if (!src->lazy && src->desc.device == LOOM_DEVICE_HOST && src->desc.data && is_c_contiguous(&src->desc)) {
    LoomArray d = src->desc;
    size_t bytes = (size_t)numel(&d) * loom_dtype_size(d.dtype);
    contiguous_strides(&d);
    PyObject *r = host_empty(st, &d, bytes, 0);
    if (r && bytes) {
      void *dst = ((ArrayObject *)r)->desc.data;
      const void *from = src->desc.data;
      PyObject *mem = Py_XNewRef(src->buffer); /* keeps the source alive while the GIL is released */
      if (numel(&d) >= NOGIL_ELEMS) {
        Py_BEGIN_ALLOW_THREADS
        memcpy(dst, from, bytes);
        Py_END_ALLOW_THREADS
      } else {
        memcpy(dst, from, bytes);
      }
      Py_XDECREF(mem);
    }
    return r;
  }
  GraphObject *gr = graph_new(st, 0);
  if (!gr) return NULL;
  LoomNode x;
  LoomArray out;
  memset(&out, 0, sizeof out);
  PyObject *r = NULL;
  if (input_node(st, gr, src, &x) == 0) {
    LoomStatus s = loom_eval(gr->g, 1, &x, &out);
    if (s) raise_status(st, s);
    else {
      ArrayObject *a = array_alloc(st);
      if (a && adopt_result(st, a, &out) < 0) Py_CLEAR(a);
      else if (!a) loom_array_free(ctx_of(st), &out);
      r = (PyObject *)a;
    }
  }
  Py_DECREF(gr);
  return r;
}

/* to_device(x, kind, index): a C-contiguous copy of x on the device (host <-> CUDA, or within one
 * device); synchronous. A non-contiguous x is first copied contiguous on its own device. */
static PyObject *core_to_device(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomArray d;
  memset(&d, 0, sizeof d);
  if (nargs != 3 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "to_device(array, kind, index)");
    return NULL;
  }
  if (parse_device(args[1], args[2], &d.device, &d.device_index) < 0) return NULL;
  ArrayObject *x = (ArrayObject *)args[0];
  if (x->lazy && ((GraphObject *)x->graph)->trace) return trace_error();
  if (materialize(st, x) < 0) return NULL;
  PyObject *src = Py_NewRef((PyObject *)x);
  if (!is_c_contiguous(&x->desc)) {
    Py_SETREF(src, copy_array(st, x));
    if (!src) return NULL;
  }
  ArrayObject *sa = (ArrayObject *)src;
  d.dtype = sa->desc.dtype;
  d.ndim = sa->desc.ndim;
  memcpy(d.shape, sa->desc.shape, sizeof d.shape);
  contiguous_strides(&d);
  PyObject *r;
  if (d.device == LOOM_DEVICE_HOST) {
    PyObject *sh = tuple_i64(d.ndim, d.shape, 1), *dt = PyLong_FromLong(d.dtype);
    PyObject *eargs[3] = {sh, dt, Py_False};
    r = sh && dt ? core_empty(module, eargs, 3) : NULL;
    Py_XDECREF(sh);
    Py_XDECREF(dt);
  } else r = device_empty(st, &d, 0);
  if (r && numel(&d) > 0) {
    LoomArray sd = sa->desc, rd = ((ArrayObject *)r)->desc;
    contiguous_strides(&sd); /* C-contiguous: canonical strides describe the same elements */
    /* without the GIL for a GPU (the copy waits for the device) or a large copy (eval.c's rule): r is
     * ours alone, and mem keeps the source's memory alive if another thread gives sa a new buffer */
    PyObject *mem = Py_XNewRef(sa->buffer);
    LoomStatus s;
    if (d.device != LOOM_DEVICE_HOST || sd.device != LOOM_DEVICE_HOST || numel(&d) >= NOGIL_ELEMS) {
      Py_BEGIN_ALLOW_THREADS
      s = loom_array_copy(ctx_of(st), &rd, &sd);
      Py_END_ALLOW_THREADS
    } else {
      s = loom_array_copy(ctx_of(st), &rd, &sd);
    }
    Py_XDECREF(mem);
    if (s) {
      Py_CLEAR(r);
      raise_status(st, s);
    }
  }
  Py_DECREF(src);
  return r;
}

/* from_pointer(ptr, shape, strides_bytes|None, dtype, kind, index, owner): a zero-copy array over
 * foreign memory (e.g. __cuda_array_interface__) that keeps owner alive. */
static PyObject *core_from_pointer(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomArray d;
  memset(&d, 0, sizeof d);
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "from_pointer(ptr, shape, strides, dtype, kind, index, owner)");
    return NULL;
  }
  void *ptr = PyLong_AsVoidPtr(args[0]);
  if (PyErr_Occurred()) return NULL;
  if (parse_i64s(args[1], d.shape, &d.ndim, "shape") < 0 || parse_dtype(args[3], &d.dtype) < 0 ||
      parse_device(args[4], args[5], &d.device, &d.device_index) < 0)
    return NULL;
  for (int i = 0; i < d.ndim; i++)
    if (d.shape[i] < 0) {
      PyErr_SetString(PyExc_ValueError, "from_pointer: negative dimension");
      return NULL;
    }
  if (args[2] == Py_None) contiguous_strides(&d);
  else {
    int32_t n2;
    int64_t item = (int64_t)loom_dtype_size(d.dtype);
    if (parse_i64s(args[2], d.strides, &n2, "strides") < 0) return NULL;
    if (n2 != d.ndim) {
      PyErr_SetString(PyExc_ValueError, "from_pointer: shape and strides differ in length");
      return NULL;
    }
    for (int i = 0; i < d.ndim; i++) {
      if (d.strides[i] % item) {
        PyErr_SetString(PyExc_ValueError, "from_pointer: strides must be multiples of the item size");
        return NULL;
      }
      d.strides[i] /= item;
    }
  }
  d.data = ptr;
  BufferObject *b = buffer_new(st, BUF_OWNER);
  if (!b) return NULL;
  b->owner = Py_NewRef(args[6]);
  PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, &d);
  Py_DECREF(b);
  return r;
}

/* from_buffer(obj, copy[, dtype]): an Array over obj's buffer (zero-copy, keeps obj alive) or a copy.
 * dtype (a dtype code) reinterprets items of the same size: how bfloat16 data (exported by NumPy as
 * no buffer format at all) enters as its uint16 bits. */
static PyObject *core_from_buffer(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 && nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "from_buffer(obj, copy[, dtype])");
    return NULL;
  }
  LoomDType as = LOOM_DTYPE_COUNT;
  if (nargs == 3 && parse_dtype(args[2], &as) < 0) return NULL;
  int copy = PyObject_IsTrue(args[1]);
  if (copy < 0) return NULL;
  BufferObject *b = buffer_new(st, BUF_PYBUF);
  if (!b) return NULL;
  if (PyObject_GetBuffer(args[0], &b->view, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
    b->view.obj = NULL;
    Py_DECREF(b);
    return NULL;
  }
  LoomArray d;
  memset(&d, 0, sizeof d);
  if (as != LOOM_DTYPE_COUNT) {
    if (loom_dtype_size(as) != (size_t)b->view.itemsize) {
      PyErr_Format(PyExc_TypeError, "loom: a buffer of %zd-byte items cannot hold %s", b->view.itemsize,
                   loom_dtype_name(as));
      Py_DECREF(b);
      return NULL;
    }
    d.dtype = as;
  } else if (format_dtype(b->view.format, (size_t)b->view.itemsize, &d.dtype) < 0) {
    PyErr_Format(PyExc_TypeError, "loom: unsupported buffer format '%s' (loom supports bool, int8..64, uint8..64, "
                 "float16, float32, float64, complex64, complex128 in native byte order)",
                 b->view.format ? b->view.format : "B");
    Py_DECREF(b);
    return NULL;
  }
  if (b->view.ndim > LOOM_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "loom arrays have at most %d dimensions, got %d", LOOM_MAX_RANK, b->view.ndim);
    Py_DECREF(b);
    return NULL;
  }
  d.ndim = b->view.ndim;
  d.data = b->view.buf;
  for (int i = 0; i < d.ndim; i++) {
    d.shape[i] = b->view.shape[i];
    if (b->view.strides[i] % b->view.itemsize != 0) {
      PyErr_SetString(PyExc_ValueError, "loom: buffer strides must be multiples of the item size");
      Py_DECREF(b);
      return NULL;
    }
    d.strides[i] = b->view.strides[i] / b->view.itemsize;
  }
  ArrayObject *a = array_materialized(st, (PyObject *)b, &d);
  Py_DECREF(b);
  if (!a || !copy) return (PyObject *)a;
  PyObject *r = copy_array(st, a);
  Py_DECREF(a);
  return r;
}

/* An array on the memory of base (materialized): offset bytes from its first element, d's shape, dtype and
 * strides in bytes (turned into items here: each must be a multiple of the item size, and the first element
 * aligned to it). devfree: base's flag before it was materialized. */
ArrayObject *view_in(ModState *st, ArrayObject *base, int devfree, long long off, LoomArray *d) {
  int64_t item = (int64_t)loom_dtype_size(d->dtype);
  for (int i = 0; i < d->ndim; i++) {
    if (d->strides[i] % item) {
      PyErr_SetString(PyExc_ValueError, "view: strides must be multiples of the item size");
      return NULL;
    }
    d->strides[i] /= item;
  }
  d->data = base->desc.data ? (char *)base->desc.data + off : NULL;
  if (d->data && (uintptr_t)d->data % (uintptr_t)item) {
    PyErr_Format(PyExc_ValueError, "view: the data of a %s view must be aligned to %lld bytes; copy the array "
                 "first (x.copy().view(dtype))", dtype_names[d->dtype], (long long)item);
    return NULL;
  }
  ArrayObject *v = array_materialized(st, base->buffer, d);
  /* a 0-d view of a 0-d constant (a NumPy scalar's value.reshape(())) is that constant: it still fits
   * any device (node_of), as its base does */
  if (v && devfree && d->ndim == 0 && d->device == LOOM_DEVICE_HOST) v->devfree = 1;
  return v;
}

/* view(base, offset_bytes, shape, strides_bytes[, dtype]): an array on base's memory (the caller, loom's
 * Python layer, computed the geometry with NumPy, so it lies inside base's memory), of base's dtype or,
 * given, of dtype (NumPy's view(dtype): the bytes reinterpreted; the first element must be aligned to
 * its item size). */
static PyObject *core_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if ((nargs != 4 && nargs != 5) || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "view(base, offset, shape, strides[, dtype])");
    return NULL;
  }
  ArrayObject *base = (ArrayObject *)args[0];
  int devfree = base->devfree; /* materializing clears it but for a 0-d constant */
  if (materialize(st, base) < 0) return NULL;
  long long off = PyLong_AsLongLong(args[1]);
  if (off == -1 && PyErr_Occurred()) return NULL;
  LoomArray d = base->desc;
  /* dtype: a view of other items in the same memory (the real and imaginary parts of a complex
   * array: strides and offset in bytes as NumPy computes them) */
  if (nargs == 5 && parse_dtype(args[4], &d.dtype) < 0) return NULL;
  int32_t n2;
  if (parse_i64s(args[2], d.shape, &d.ndim, "shape") < 0 || parse_i64s(args[3], d.strides, &n2, "strides") < 0)
    return NULL;
  if (n2 != d.ndim) {
    PyErr_SetString(PyExc_ValueError, "view: shape and strides differ in length");
    return NULL;
  }
  return (PyObject *)view_in(st, base, devfree, off, &d);
}

/* exportable(a): a view of the host array a that the buffer protocol exports even under
 * LOOM_STRICT_CONVERSION=1 (array.c): loom's own explicit conversions (get, asnumpy) read through it. */
static PyObject *core_exportable(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 1 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "exportable(array)");
    return NULL;
  }
  ArrayObject *a = (ArrayObject *)args[0];
  if (materialize(st, a) < 0) return NULL;
  ArrayObject *v = array_materialized(st, a->buffer, &a->desc);
  if (v) v->export_ok = 1;
  return (PyObject *)v;
}

PyMethodDef create_functions[] = {
    FASTF(empty), FASTF(from_buffer), FASTF(view), FASTF(to_device), FASTF(from_pointer), FASTF(exportable),
    {NULL}};
