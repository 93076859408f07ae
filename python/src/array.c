/* SPDX-License-Identifier: Apache-2.0 */
/* array.c: the Buffer type (the memory of materialized arrays) and the Array type (loom.ndarray's
 * base): attributes, the buffer protocol, descriptors (LoomArray) and the wrapping of Loom-allocated
 * results as arrays. An Array is materialized (a Buffer plus a descriptor: a view anywhere inside it)
 * or lazy (a Graph plus a LoomNode); materializing a lazy one is eval.c's job.
 */
#include "core.h"

/* Buffer-protocol formats; int64 is 'l' where long is 64-bit so NumPy sees its default int64. */
#if LONG_MAX == INT64_MAX
#define FMT_I64 "l"
#define FMT_U64 "L"
#else
#define FMT_I64 "q"
#define FMT_U64 "Q"
#endif
/* bfloat16 has no buffer-protocol format (PEP 3118 and NumPy know none): exporting one is a
 * BufferError (numpy.asarray then falls back to ndarray.__array__, which reads a uint16 view of the
 * same memory and reinterprets it as ml_dtypes.bfloat16); the table's "H" is never handed out. */
static const char *const dtype_formats[LOOM_DTYPE_COUNT] = {"?", "b", "h", "i", FMT_I64, "B", "H", "I", FMT_U64,
                                                            "e", "f", "d", "H", "Zf", "Zd"};

/* ---- Buffer -------------------------------------------------------------------------------------- */
static void buffer_dealloc(BufferObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  switch (self->kind) {
  case BUF_ALIGNED: free(self->ptr); break;
  case BUF_LOOM:
    if (self->ctx_obj) loom_array_free(((ContextObject *)self->ctx_obj)->ctx, &self->la);
    break;
  case BUF_PYBUF:
    if (self->view.obj) PyBuffer_Release(&self->view);
    break;
  case BUF_DLPACK:
    if (self->mt && self->mt->deleter) self->mt->deleter(self->mt);
    break;
  case BUF_OWNER: Py_CLEAR(self->owner); break;
  }
  Py_XDECREF(self->ctx_obj);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot buffer_slots[] = {{Py_tp_dealloc, buffer_dealloc}, {0, NULL}};
PyType_Spec buffer_spec = {"loom._core.Buffer", sizeof(BufferObject), 0, Py_TPFLAGS_DEFAULT, buffer_slots};

BufferObject *buffer_new(ModState *st, int kind) {
  BufferObject *b = (BufferObject *)st->buffer_type->tp_alloc(st->buffer_type, 0);
  if (!b) return NULL;
  b->kind = kind;
  b->ctx_obj = Py_NewRef(st->ctx_obj);
  return b;
}

/* ---- Array basics -------------------------------------------------------------------------------- */
static int array_traverse(ArrayObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->buffer);
  Py_VISIT(self->graph);
  Py_VISIT(Py_TYPE(self));
  return 0;
}
static int array_clear(ArrayObject *self) {
  pending_unlink(self);
  Py_CLEAR(self->buffer);
  Py_CLEAR(self->graph);
  return 0;
}
/* ---- the free list of loom.ndarray objects --------------------------------------------------------
 * Every op makes an array and drops one (a 10-op expression: ten of each per call), and each was a GC
 * allocation (pymalloc, the GC list, a young-generation count that triggers collections) and its free.
 * Up to ARRAY_FREELIST_MAX dead instances of ModState.array_cls keep their memory, untracked, for the next
 * array_alloc, as CPython's own free lists do (tuples, lists). Only that class (one instance size): other
 * classes are freed at once, and the list is emptied when the class changes (configure) or the module is
 * cleared. Under the GIL. */
enum { ARRAY_FREELIST_MAX = 128 };

void array_freelist_clear(ModState *st) {
  while (st->free_arrays) {
    ArrayObject *a = st->free_arrays;
    st->free_arrays = a->pending_next;
    PyObject_GC_Del(a);
  }
  st->nfree_arrays = 0;
}

static void array_dealloc(ArrayObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
  array_clear(self);
  ModState *st = array_state((PyObject *)self);
  /* a class with a __dict__ (tp_dictoffset: -1 for a managed one) keeps state outside the body: not kept */
  if (st && st->array_cls && tp == (PyTypeObject *)st->array_cls && tp->tp_dictoffset == 0 &&
      st->nfree_arrays < ARRAY_FREELIST_MAX) {
    self->pending_next = st->free_arrays;
    st->free_arrays = self;
    st->nfree_arrays++;
  } else {
    tp->tp_free(self);
  }
  Py_DECREF(tp);
}

/* _core.Array is the one type whose tp_dealloc is array_dealloc, and it is the solid base of every
 * subclass (its own instance layout), so it is on o's tp_base chain iff o is a loom array; its module
 * state is one read away (PyType_GetModuleState). Types that are not heap types (float, int,
 * numpy.ndarray) are never loom arrays: no walk for them. */
ModState *array_state(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (!PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE)) return NULL;
  for (; t; t = t->tp_base)
    if (t->tp_dealloc == (destructor)array_dealloc) return (ModState *)PyType_GetModuleState(t);
  return NULL;
}

/* loom's dtype containers (datetime64 / timedelta64, loom/_temporal.py) are subclasses of loom.ndarray
 * whose memory holds int64 values that _core must never compute with as int64. A subclass whose values
 * are what its dtype says (loom.fft's known-Hermitian spectra) sets _loom_plain_values = True in its own
 * class body; only subclasses pay for the look-up. */
int container_array(ModState *st, PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (t == st->array_type || !st->array_cls || t == (PyTypeObject *)st->array_cls) return 0;
  PyObject *plain = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "_loom_plain_values") : NULL; /* borrowed */
  return !(plain && plain == Py_True);
}

int refuse_container(PyObject *o, const char *what) {
  PyObject *dt = PyObject_GetAttrString(o, "dtype");
  if (!dt) return -1;
  PyErr_Format(PyExc_TypeError, "loom: %s does not support %S arrays: loom keeps datetime64 and timedelta64 "
               "values as int64 containers (creation, copies, views, indexing, comparisons and NumPy's "
               "datetime arithmetic: + - * // / abs); .view('i8') gives the int64 values to compute with",
               what, dt);
  Py_DECREF(dt);
  return -1;
}

ArrayObject *array_alloc(ModState *st) {
  PyTypeObject *t = st->array_cls ? (PyTypeObject *)st->array_cls : st->array_type;
  ArrayObject *a = st->free_arrays;
  if (a && t == (PyTypeObject *)st->array_cls) { /* PyType_GenericAlloc's work, on kept memory */
    st->free_arrays = a->pending_next;
    st->nfree_arrays--;
    memset((char *)a + sizeof(PyObject), 0, (size_t)t->tp_basicsize - sizeof(PyObject));
    PyObject_Init((PyObject *)a, t);
    PyObject_GC_Track(a);
  } else {
    a = (ArrayObject *)t->tp_alloc(t, 0);
  }
  return a;
}

/* C-contiguous strides for d's shape; all zero for an empty array (NumPy gives new empty arrays zero
 * strides). */
void contiguous_strides(LoomArray *d) {
  int64_t s = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    d->strides[i] = s;
    s *= d->shape[i];
  }
  if (s == 0)
    for (int i = 0; i < d->ndim; i++) d->strides[i] = 0;
}

int64_t numel(const LoomArray *d) {
  int64_t n = 1;
  for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
  return n;
}

/* A materialized Array on buffer b with descriptor d (steals nothing). */
ArrayObject *array_materialized(ModState *st, PyObject *buffer, const LoomArray *d) {
  ArrayObject *a = array_alloc(st);
  if (!a) return NULL;
  a->lazy = 0;
  a->desc = *d;
  a->buffer = Py_NewRef(buffer);
  return a;
}

/* Turns `a` into a materialized array holding the Loom-allocated result `out`. */
int adopt_result(ModState *st, ArrayObject *a, const LoomArray *out) {
  BufferObject *b = buffer_new(st, BUF_LOOM);
  if (!b) {
    LoomArray tmp = *out;
    loom_array_free(ctx_of(st), &tmp);
    return -1;
  }
  b->la = *out;
  a->desc = *out;
  a->in_serial = 0;
  if (numel(out) == 0) contiguous_strides(&a->desc); /* NumPy's zero strides (b->la keeps loom's) */
  pending_unlink(a);
  a->lazy = 0;
  a->devfree = 0;
  Py_CLEAR(a->graph);
  Py_XSETREF(a->buffer, (PyObject *)b);
  return 0;
}

int is_c_contiguous(const LoomArray *d) {
  int64_t expect = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    if (d->shape[i] == 0) return 1;
    if (d->shape[i] != 1 && d->strides[i] != expect) return 0;
    expect *= d->shape[i];
  }
  return 1;
}

int format_dtype(const char *f, size_t item, LoomDType *out) {
  if (!f) f = "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
  if (f[0] == 'Z' && (f[1] == 'f' || f[1] == 'd') && f[2] == '\0') {
    *out = f[1] == 'f' ? LOOM_COMPLEX64 : LOOM_COMPLEX128;
    return 0;
  }
  if (f[0] == '\0' || f[1] != '\0') return -1;
  switch (f[0]) {
  case '?': *out = LOOM_BOOL; return 0;
  case 'b': *out = LOOM_INT8; return 0;
  case 'B': *out = LOOM_UINT8; return 0;
  case 'e': *out = LOOM_FLOAT16; return 0;
  case 'f': *out = LOOM_FLOAT32; return 0;
  case 'd': *out = LOOM_FLOAT64; return 0;
  case 'h': case 'i': case 'l': case 'q':
    *out = item == 2 ? LOOM_INT16 : item == 4 ? LOOM_INT32 : item == 8 ? LOOM_INT64 : LOOM_DTYPE_COUNT;
    return *out == LOOM_DTYPE_COUNT ? -1 : 0;
  case 'H': case 'I': case 'L': case 'Q':
    *out = item == 2 ? LOOM_UINT16 : item == 4 ? LOOM_UINT32 : item == 8 ? LOOM_UINT64 : LOOM_DTYPE_COUNT;
    return *out == LOOM_DTYPE_COUNT ? -1 : 0;
  default: return -1;
  }
}

/* Wraps out (a loom_eval result, ownership taken) as a new Array, or a NumPy array when numpy_out. */
PyObject *wrap_result(ModState *st, LoomArray *out, int numpy_out) {
  ArrayObject *a = array_alloc(st);
  if (!a) {
    loom_array_free(ctx_of(st), out);
    return NULL;
  }
  if (adopt_result(st, a, out) < 0) {
    Py_DECREF(a);
    return NULL;
  }
  if (!numpy_out) return (PyObject *)a;
  a->export_ok = 1; /* a new result asked for as NumPy: loom's own conversion */
  PyObject *r = PyObject_CallOneArg(st->np_asarray, (PyObject *)a);
  Py_DECREF(a);
  return r;
}

PyObject *numpy_of(ModState *st, PyObject *v) {
  ArrayObject *a = (ArrayObject *)v;
  if (materialize(st, a) < 0) return NULL;
  ArrayObject *e = array_materialized(st, a->buffer, &a->desc);
  if (!e) return NULL;
  e->export_ok = 1;
  PyObject *r = PyObject_CallOneArg(st->np_asarray, (PyObject *)e);
  Py_DECREF(e);
  return r;
}

/* A descriptor of the buffer in v (host memory); -1 with an exception. */
int view_desc(const Py_buffer *v, LoomArray *d, const char *what) {
  memset(d, 0, sizeof *d);
  if (v->ndim > LOOM_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "%s: loom supports at most %d dimensions, got %d", what, LOOM_MAX_RANK, v->ndim);
    return -1;
  }
  if (v->itemsize <= 0 || format_dtype(v->format, (size_t)v->itemsize, &d->dtype) < 0 ||
      loom_dtype_size(d->dtype) != (size_t)v->itemsize) {
    PyErr_Format(PyExc_TypeError, "%s: unsupported dtype (format '%s'): loom supports bool, int8..64, uint8..64, "
                 "float16, float32, float64, complex64, complex128 (and bfloat16 through loom.asarray) in native "
                 "byte order", what, v->format ? v->format : "B");
    return -1;
  }
  d->ndim = v->ndim;
  d->data = v->buf;
  d->device = LOOM_DEVICE_HOST;
  for (int j = 0; j < v->ndim; j++) {
    d->shape[j] = v->shape ? v->shape[j] : 1;
    Py_ssize_t sb = v->strides ? v->strides[j] : v->itemsize;
    if (sb % v->itemsize) {
      PyErr_Format(PyExc_ValueError, "%s: array strides must be multiples of the item size", what);
      return -1;
    }
    d->strides[j] = sb / v->itemsize;
  }
  return 0;
}

/* ---- Array type: attributes and buffer protocol ------------------------------------------------------ */
/* LOOM_STRICT_CONVERSION=1 (read at each call, so a test can turn it off): host arrays refuse implicit
 * conversion to NumPy as GPU arrays do, so a suite run on a machine without a GPU catches what a GPU run
 * would refuse. loom's own explicit conversions (get, asnumpy) go through _core.exportable views. */
static int strict_conversion(void) {
  const char *e = getenv("LOOM_STRICT_CONVERSION");
  return e && *e && strcmp(e, "0") != 0;
}

static int array_getbuffer(ArrayObject *self, Py_buffer *view, int flags) {
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return -1;
  if (container_array(st, (PyObject *)self)) return refuse_container((PyObject *)self, "the buffer protocol");
  if (self->lazy && ((GraphObject *)self->graph)->trace) {
    trace_error();
    return -1;
  }
  if (self->desc.device != LOOM_DEVICE_HOST) {
    PyErr_SetString(PyExc_TypeError, "Implicit conversion to a NumPy array is not allowed: this loom array is on a "
                    "CUDA device. Please use `.get()` (or loom.asnumpy) to copy it to the host explicitly.");
    return -1;
  }
  if (!self->export_ok && strict_conversion()) {
    PyErr_SetString(PyExc_TypeError, "Implicit conversion to a NumPy array is not allowed (LOOM_STRICT_CONVERSION=1: "
                    "host arrays refuse it as GPU arrays do). Please use `.get()` (or loom.asnumpy) to copy it to "
                    "the host explicitly.");
    return -1;
  }
  if (self->desc.dtype == LOOM_BFLOAT16) {
    PyErr_SetString(PyExc_BufferError, "bfloat16 has no buffer-protocol format: use numpy.asarray(a) (an "
                    "ml_dtypes.bfloat16 array) or a.view(numpy.uint16) for the raw bits");
    return -1;
  }
  if (materialize(st, self) < 0) return -1;
  size_t item = loom_dtype_size(self->desc.dtype);
  int contiguous = 1;
  int64_t expect = 1;
  for (int i = self->desc.ndim - 1; i >= 0; i--) {
    if (self->desc.shape[i] != 1 && self->desc.strides[i] != expect) contiguous = 0;
    expect *= self->desc.shape[i];
  }
  if (!contiguous && (flags & PyBUF_STRIDES) != PyBUF_STRIDES) {
    PyErr_SetString(PyExc_BufferError, "loom array is not C-contiguous; request a strided buffer");
    return -1;
  }
  /* the geometry belongs to this export (view->internal, freed by releasebuffer): the array may take
   * another value (become) while a view of the old one lives */
  int nd = self->desc.ndim;
  Py_ssize_t *geo = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(2 * nd + 1));
  if (!geo) {
    PyErr_NoMemory();
    return -1;
  }
  for (int i = 0; i < nd; i++) {
    geo[i] = (Py_ssize_t)self->desc.shape[i];
    geo[nd + i] = (Py_ssize_t)(self->desc.strides[i] * (int64_t)item);
  }
  view->buf = self->desc.data ? self->desc.data : (void *)self; /* never read when empty */
  view->obj = Py_NewRef((PyObject *)self);
  view->len = (Py_ssize_t)(numel(&self->desc) * (int64_t)item);
  view->readonly = 0;
  view->itemsize = (Py_ssize_t)item;
  view->format = (flags & PyBUF_FORMAT) ? (char *)dtype_formats[self->desc.dtype] : NULL;
  view->ndim = self->desc.ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? geo : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? geo + nd : NULL;
  view->suboffsets = NULL;
  view->internal = geo;
  return 0;
}
static void array_releasebuffer(ArrayObject *self, Py_buffer *view) {
  PyMem_Free(view->internal);
  view->internal = NULL;
}

PyObject *tuple_i64(int n, const int64_t *v, int64_t scale) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i] * scale);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

static PyObject *array_get_shape(ArrayObject *self, void *c) { return tuple_i64(self->desc.ndim, self->desc.shape, 1); }
/* a.shape = s: NumPy's in-place reshape, in Python (loom._ndarray._set_shape: the same elements under the
 * new shape, AttributeError where that needs a copy). */
static int array_set_shape(ArrayObject *self, PyObject *value, void *c) {
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "Cannot delete array shape");
    return -1;
  }
  PyObject *mod = PyImport_ImportModule("loom._ndarray");
  if (!mod) return -1;
  PyObject *r = PyObject_CallMethod(mod, "_set_shape", "OO", (PyObject *)self, value);
  Py_DECREF(mod);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}
static PyObject *array_get_strides(ArrayObject *self, void *c) {
  return tuple_i64(self->desc.ndim, self->desc.strides, (int64_t)loom_dtype_size(self->desc.dtype));
}
static PyObject *array_get_ndim(ArrayObject *self, void *c) { return PyLong_FromLong(self->desc.ndim); }
static PyObject *array_get_size(ArrayObject *self, void *c) { return PyLong_FromLongLong(numel(&self->desc)); }
static PyObject *array_get_dtype_code(ArrayObject *self, void *c) { return PyLong_FromLong(self->desc.dtype); }
static PyObject *array_get_dtype_name(ArrayObject *self, void *c) {
  return PyUnicode_FromString(dtype_names[self->desc.dtype]);
}
static PyObject *array_get_lazy(ArrayObject *self, void *c) { return PyBool_FromLong(self->lazy); }
/* (graph serial, node) while pending, else None: the value's identity (serials are never reused), which an
 * in-place write changes (become gives a new node; a materialized array has none). loom.fft checks with
 * it that a spectrum it knows to be Hermitian is still the value it made. */
static PyObject *array_get_node(ArrayObject *self, void *c) {
  if (!self->lazy) Py_RETURN_NONE;
  return Py_BuildValue("(Ki)", (unsigned long long)((GraphObject *)self->graph)->serial, (int)self->node);
}
static PyObject *array_get_device(ArrayObject *self, void *c) {
  return Py_BuildValue("(ii)", (int)self->desc.device, (int)self->desc.device_index);
}
static PyObject *array_get_tracer(ArrayObject *self, void *c) {
  return PyBool_FromLong(self->lazy && ((GraphObject *)self->graph)->trace);
}
static PyObject *array_get_ptr(ArrayObject *self, void *c) {
  return PyLong_FromVoidPtr(self->lazy ? NULL : self->desc.data);
}
static PyObject *array_get_base_ptr(ArrayObject *self, void *c) {
  /* identity of the memory this array lies in (None when lazy) */
  if (self->lazy) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(self->buffer);
}

static PyGetSetDef array_getset[] = {
    {"shape", (getter)array_get_shape, (setter)array_set_shape, "tuple of dimensions", NULL},
    {"strides", (getter)array_get_strides, NULL, "strides in bytes", NULL},
    {"ndim", (getter)array_get_ndim, NULL, "number of dimensions", NULL},
    {"size", (getter)array_get_size, NULL, "number of elements", NULL},
    {"_dtype_code", (getter)array_get_dtype_code, NULL, NULL, NULL},
    {"_dtype_name", (getter)array_get_dtype_name, NULL, NULL, NULL},
    {"_lazy", (getter)array_get_lazy, NULL, "True while the value is pending", NULL},
    {"_node", (getter)array_get_node, NULL, "(graph serial, node) while pending, else None", NULL},
    {"_device", (getter)array_get_device, NULL, "(kind, index): 0 host, 1 CUDA", NULL},
    {"_tracer", (getter)array_get_tracer, NULL, "True for a value traced by @loom.fuse", NULL},
    {"_ptr", (getter)array_get_ptr, NULL, NULL, NULL},
    {"_mem_id", (getter)array_get_base_ptr, NULL, NULL, NULL},
    {NULL}};

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "DLPack capsule (host, zero-copy)"},
    {"__dlpack_device__", (PyCFunction)array_dlpack_device, METH_NOARGS, "(kDLCPU, 0)"},
    {NULL}};

static PyMemberDef array_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ArrayObject, weakreflist), READONLY, NULL},
    {"_export_ok", T_INT, offsetof(ArrayObject, export_ok), READONLY,
     "1: a view made for loom's own conversion to NumPy (exports under LOOM_STRICT_CONVERSION)"},
    {NULL}};

/* The binary operators and comparisons (ops.c: a C fast path, else the Python method). */
#define BINARY_SLOT(fn, slot)                                                                                    \
  static PyObject *fn(PyObject *v, PyObject *w) { return array_binary_operator(slot, v, w); }
BINARY_SLOT(array_nb_add, OPERATOR_ADD)
BINARY_SLOT(array_nb_subtract, OPERATOR_SUB)
BINARY_SLOT(array_nb_multiply, OPERATOR_MUL)
BINARY_SLOT(array_nb_true_divide, OPERATOR_TRUEDIV)
BINARY_SLOT(array_nb_floor_divide, OPERATOR_FLOORDIV)
BINARY_SLOT(array_nb_remainder, OPERATOR_MOD)
BINARY_SLOT(array_nb_and, OPERATOR_AND)
BINARY_SLOT(array_nb_or, OPERATOR_OR)
BINARY_SLOT(array_nb_xor, OPERATOR_XOR)
BINARY_SLOT(array_nb_lshift, OPERATOR_LSHIFT)
BINARY_SLOT(array_nb_rshift, OPERATOR_RSHIFT)
#undef BINARY_SLOT
static PyObject *array_nb_power(PyObject *v, PyObject *w, PyObject *z) {
  if (z != Py_None) Py_RETURN_NOTIMPLEMENTED; /* pow(a, b, mod): NumPy has none either (a TypeError) */
  return array_power_operator(v, w);
}

static PyObject *array_nb_negative(PyObject *x) { return array_unary_operator(UNARY_NEG, x); }
static PyObject *array_nb_absolute(PyObject *x) { return array_unary_operator(UNARY_ABS, x); }
static PyObject *array_nb_invert(PyObject *x) { return array_unary_operator(UNARY_INVERT, x); }

static PyType_Slot array_slots[] = {
    {Py_nb_negative, array_nb_negative},
    {Py_nb_absolute, array_nb_absolute},
    {Py_nb_invert, array_nb_invert},
    {Py_nb_add, array_nb_add},
    {Py_nb_subtract, array_nb_subtract},
    {Py_nb_multiply, array_nb_multiply},
    {Py_nb_true_divide, array_nb_true_divide},
    {Py_nb_floor_divide, array_nb_floor_divide},
    {Py_nb_remainder, array_nb_remainder},
    {Py_nb_power, array_nb_power},
    {Py_nb_and, array_nb_and},
    {Py_nb_or, array_nb_or},
    {Py_nb_xor, array_nb_xor},
    {Py_nb_lshift, array_nb_lshift},
    {Py_nb_rshift, array_nb_rshift},
    {Py_tp_richcompare, array_compare_operator},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_members, array_members},
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_traverse, array_traverse},
    {Py_tp_clear, array_clear},
    {Py_tp_getset, array_getset},
    {Py_tp_methods, array_methods},
    {Py_bf_getbuffer, array_getbuffer},
    {Py_bf_releasebuffer, array_releasebuffer},
    {Py_tp_doc, "loom array base type: materialized (a buffer) or pending (a graph node)"},
    {0, NULL}};
PyType_Spec array_spec = {"loom._core.Array", sizeof(ArrayObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, array_slots};
