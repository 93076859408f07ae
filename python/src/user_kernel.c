/* SPDX-License-Identifier: Apache-2.0 */
/* user_kernel.c: CuPy's ElementwiseKernel and ReductionKernel on the module's context (the
 * UserKernel type, its calls and their arguments; the contract is in the section comment below).
 */
#include "core.h"

/* ---- user kernels: CuPy's ElementwiseKernel and ReductionKernel on the module's context ------------
 * A UserKernel owns one LoomUserKernel made on the module state's LoomContext (the context every loom
 * array of this module lives on), plus what a call needs and the C API does not keep: per param its
 * dtype code (>= 0), placeholder letter (-1 - letter) or UK_UNKNOWN, and the result layout flags.
 * uk_call(kernel, args, outs, size, axes, keepdims, stream) runs one call:
 *   arguments  loom arrays (pending ones evaluated first, all in one loom_eval, on the call's stream),
 *              NumPy arrays and NumPy scalars (read in place through the buffer protocol: host
 *              arrays), Python bool/int/float (a 0-d array of the param's dtype; a placeholder takes
 *              the dtype an array argument bound it to, else NumPy's default for the scalar), anything
 *              else through the converter set by uk_configure (loom.asarray: lists, CUDA Array
 *              Interface objects). On a CUDA call scalars are copied to small device arrays.
 *   outputs    given outs are written in place (pending arrays that read their memory are evaluated
 *              first); missing ones are allocated by loom on the call's device and wrapped as new
 *              arrays owning that memory (a BUF_LOOM Buffer frees it with loom_array_free).
 *   stream     None (the calling thread's current stream) or (kind, index, handle|None, restore|None):
 *              the stream is made current for the evaluation of pending inputs and the launch, then
 *              `restore` (the caller's current stream) is made current again.
 * When every array argument is NumPy the results are NumPy arrays (views of loom's buffers), else
 * loom arrays. Calls keep the GIL (as loom_eval does) unless the arrays are large; then the buffers
 * of loom arguments are referenced across the unlocked call. */
enum { UK_STACK = 12, UK_UNKNOWN = -128, UK_NO_RETURN = 1, UK_RETURN_TUPLE = 2, UK_NOGIL_ELEMS = 1 << 16 };

typedef struct {
  PyObject_HEAD
  PyObject *ctx_obj;
  LoomUserKernel *k;
  PyObject *name;
  int32_t nin, nout;
  int is_reduction;
  int flags;
  int8_t codes[2 * UK_STACK * 8]; /* per param (ins then outs); the rest UK_UNKNOWN */
  uint8_t raw[2 * UK_STACK * 8];   /* per param: declared raw (ElementwiseKernel: CuPy's size rule) */
  int size_rule;                   /* raw[] is known: the call applies CuPy's rule for size= */
} UserKernelObject;

static void uk_dealloc(UserKernelObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  if (self->k) loom_user_kernel_destroy(self->k);
  Py_XDECREF(self->name);
  Py_XDECREF(self->ctx_obj);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyObject *uk_tp_call(UserKernelObject *self, PyObject *args, PyObject *kwargs);
static PyType_Slot uk_slots[] = {{Py_tp_dealloc, uk_dealloc}, {Py_tp_call, uk_tp_call},
                                 {Py_tp_new, PyType_GenericNew}, {0, NULL}};
/* A base type: loom.ElementwiseKernel subclasses it, so its calls go straight to uk_tp_call. */
PyType_Spec uk_spec = {"loom._core.UserKernel", sizeof(UserKernelObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, uk_slots};

/* A str or None argument as a C string (NULL for None); -1 with an exception. A NUL byte inside the text
 * is a ValueError (the C string would end there: the rest of a snippet would be dropped silently). */
static int opt_str(PyObject *o, const char **out) {
  if (o == Py_None) {
    *out = NULL;
    return 0;
  }
  Py_ssize_t n = 0;
  *out = PyUnicode_AsUTF8AndSize(o, &n);
  if (!*out) return -1;
  if ((Py_ssize_t)strlen(*out) != n) {
    PyErr_SetString(PyExc_ValueError, "user kernel: a parameter list, snippet, name or preamble contains a NUL "
                                      "byte ('\\x00'); remove it");
    *out = NULL;
    return -1;
  }
  return 0;
}

/* Fills the per-param codes from a tuple of ints (UK_UNKNOWN where missing). */
static int uk_set_codes(UserKernelObject *k, PyObject *codes) {
  memset(k->codes, UK_UNKNOWN, sizeof k->codes);
  if (codes == Py_None) return 0;
  if (!PyTuple_Check(codes)) {
    PyErr_SetString(PyExc_TypeError, "user kernel: codes must be a tuple of ints");
    return -1;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(codes);
  if (n > (Py_ssize_t)sizeof k->codes) n = (Py_ssize_t)sizeof k->codes;
  for (Py_ssize_t i = 0; i < n; i++) {
    long v = PyLong_AsLong(PyTuple_GET_ITEM(codes, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    k->codes[i] = (int8_t)(v < -27 || v >= LOOM_DTYPE_COUNT ? UK_UNKNOWN : v);
  }
  return 0;
}

/* Fills target (a new UserKernel, or an instance of a subclass not yet made: None makes one) with h
 * (ownership taken). */
static PyObject *uk_finish_create(ModState *st, PyObject *target, LoomUserKernel *h, PyObject *name, int is_reduction,
                                  int flags, PyObject *codes) {
  UserKernelObject *k;
  if (target == Py_None) k = (UserKernelObject *)st->uk_type->tp_alloc(st->uk_type, 0);
  else k = (UserKernelObject *)Py_NewRef(target);
  if (!k) {
    loom_user_kernel_destroy(h);
    return NULL;
  }
  if (k->k) loom_user_kernel_destroy(k->k); /* __init__ called again */
  k->k = h;
  Py_XSETREF(k->ctx_obj, Py_NewRef(st->ctx_obj));
  Py_XSETREF(k->name, Py_NewRef(name));
  k->is_reduction = is_reduction;
  k->flags = flags;
  LoomStatus s = loom_user_kernel_info(h, &k->nin, &k->nout, NULL);
  if (s) {
    Py_DECREF(k);
    return raise_status(st, s);
  }
  if (uk_set_codes(k, codes) < 0) {
    Py_DECREF(k);
    return NULL;
  }
  return (PyObject *)k;
}

/* A target argument: None or a UserKernel (subclass) instance. */
static int uk_target_ok(ModState *st, PyObject *t) {
  if (t == Py_None || PyObject_TypeCheck(t, st->uk_type)) return 1;
  PyErr_SetString(PyExc_TypeError, "user kernel target must be None or a loom._core.UserKernel");
  return 0;
}

/* uk_elementwise(target, in_params, out_params, operation, name, preamble, loop_prep, after_loop,
 * reduce_dims, codes, flags) -> UserKernel (target filled, or a new one when target is None).
 * loop_prep / after_loop ("" or None: none) need loom_elementwise_kernel_create_ex (LOOM_HAVE_LOOP_PREP);
 * without it they are NotImplementedError. */
/* Fills the per-param raw flags from a tuple of bools (None: unknown, no size rule). */
static int uk_set_raw(UserKernelObject *k, PyObject *raw) {
  memset(k->raw, 0, sizeof k->raw);
  k->size_rule = 0;
  if (raw == Py_None) return 0;
  if (!PyTuple_Check(raw)) {
    PyErr_SetString(PyExc_TypeError, "user kernel: raw must be a tuple of bools");
    return -1;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(raw);
  if (n > (Py_ssize_t)sizeof k->raw) return 0; /* more params than tracked: no rule */
  for (Py_ssize_t i = 0; i < n; i++) {
    int v = PyObject_IsTrue(PyTuple_GET_ITEM(raw, i));
    if (v < 0) return -1;
    k->raw[i] = (uint8_t)v;
  }
  k->size_rule = 1;
  return 0;
}

static PyObject *core_uk_elementwise(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  const char *s[7];
  if (nargs != 12 || !uk_target_ok(st, args[0])) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "uk_elementwise(target, in_params, out_params, operation, name, preamble, "
                      "loop_prep, after_loop, reduce_dims, codes, flags, raw)");
    return NULL;
  }
  PyObject *target = args[0];
  args++;
  for (int i = 0; i < 7; i++)
    if (opt_str(args[i], &s[i]) < 0) return NULL;
  int reduce_dims = PyObject_IsTrue(args[7]);
  int flags = (int)PyLong_AsLong(args[9]);
  if (reduce_dims < 0 || (flags == -1 && PyErr_Occurred())) return NULL;
  LoomUserKernel *h = NULL;
  LoomStatus rc;
  int extra = (s[5] && *s[5]) || (s[6] && *s[6]);
  if (extra) {
#ifdef LOOM_HAVE_LOOP_PREP
    rc = loom_elementwise_kernel_create_ex(ctx_of(st), s[0], s[1], s[2], s[3], s[4], s[5] ? s[5] : "",
                                           s[6] ? s[6] : "", reduce_dims, &h);
#else
    PyErr_SetString(PyExc_NotImplementedError,
                    "this libloom cannot run ElementwiseKernel loop_prep / after_loop (no "
                    "loom_elementwise_kernel_create_ex): compute per point in `operation`, or use RawKernel");
    return NULL;
#endif
  } else {
    rc = loom_elementwise_kernel_create(ctx_of(st), s[0], s[1], s[2], s[3], s[4], reduce_dims, &h);
  }
  if (rc) return raise_kernel(st, rc, 0);
  PyObject *k = uk_finish_create(st, target, h, args[3], 0, flags, args[8]);
  if (k && uk_set_raw((UserKernelObject *)k, args[10]) < 0) Py_CLEAR(k);
  return k;
}

/* uk_reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name,
 * reduce_type, preamble, reduce_dims, codes) -> UserKernel */
static PyObject *core_uk_reduction(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  const char *s[9];
  if (nargs != 11) {
    PyErr_SetString(PyExc_TypeError, "uk_reduction(in_params, out_params, map_expr, reduce_expr, post_map_expr, "
                    "identity, name, reduce_type, preamble, reduce_dims, codes)");
    return NULL;
  }
  for (int i = 0; i < 9; i++)
    if (opt_str(args[i], &s[i]) < 0) return NULL;
  int reduce_dims = PyObject_IsTrue(args[9]);
  if (reduce_dims < 0) return NULL;
  LoomUserKernel *h = NULL;
  LoomStatus rc = loom_reduction_kernel_create(ctx_of(st), s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8],
                                               reduce_dims, &h);
  if (rc) return raise_kernel(st, rc, 0);
  return uk_finish_create(st, Py_None, h, args[6], 1, 0, args[10]);
}

/* uk_configure(converter, stream_spec): the callables that turn other argument objects into loom
 * arrays and a stream= argument into a stream spec (see uk_call). */
static PyObject *core_uk_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "uk_configure(converter, stream_spec)");
    return NULL;
  }
  Py_XSETREF(st->uk_convert, Py_NewRef(args[0]));
  Py_XSETREF(st->uk_stream, Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

/* ---- arguments of one user kernel call ---- */
enum { UKA_NONE = 0, UKA_LOOM, UKA_VIEW, UKA_PYSCALAR };
typedef struct {
  int kind;
  PyObject *obj;   /* borrowed (or a converted object held in UkArgs.conv) */
  Py_buffer view;  /* UKA_VIEW */
  int has_view;
  int np_scalar;   /* UKA_VIEW of a NumPy scalar (a scalar argument, copied to the device on CUDA) */
  int dev_alloc;   /* the descriptor is a device copy of the scalar (free after the call) */
  void *orig;      /* outputs: the data pointer given (NULL: loom allocates) */
  _Alignas(16) unsigned char val[16];
} UkArg;

typedef struct {
  Py_ssize_t n;
  int32_t nin;
  UkArg *a;
  LoomArray *d;
  PyObject *conv; /* list of converted arguments, or NULL */
  PyObject *bufs[UK_STACK]; /* Buffers referenced across a call without the GIL */
  int nbufs;
  int any_loom, any_numpy, any_lazy;
  UkArg a_stack[UK_STACK];
  LoomArray d_stack[UK_STACK];
} UkArgs;

static int ukargs_init(UkArgs *u, Py_ssize_t n, int32_t nin) {
  u->n = n;
  u->nin = nin;
  u->conv = NULL;
  u->nbufs = 0;
  u->any_loom = u->any_numpy = u->any_lazy = 0;
  if (n <= UK_STACK) {
    u->a = u->a_stack;
    u->d = u->d_stack;
  } else {
    u->a = PyMem_Malloc(sizeof(UkArg) * (size_t)n);
    u->d = PyMem_Malloc(sizeof(LoomArray) * (size_t)n);
    if (!u->a || !u->d) {
      PyMem_Free(u->a);
      PyMem_Free(u->d);
      u->a = NULL;
      u->d = NULL;
      PyErr_NoMemory();
      return -1;
    }
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    u->a[i].kind = UKA_NONE;
    u->a[i].obj = NULL;
    u->a[i].has_view = 0;
    u->a[i].np_scalar = 0;
    u->a[i].dev_alloc = 0;
  }
  memset(u->d, 0, sizeof(LoomArray) * (size_t)n);
  return 0;
}

static void ukargs_free(ModState *st, UkArgs *u) {
  if (!u->a) return;
  for (Py_ssize_t i = 0; i < u->n; i++) {
    if (u->a[i].has_view) PyBuffer_Release(&u->a[i].view);
    if (u->a[i].dev_alloc) loom_array_free(ctx_of(st), &u->d[i]);
  }
  for (int i = 0; i < u->nbufs; i++) Py_DECREF(u->bufs[i]);
  Py_XDECREF(u->conv);
  if (u->a != u->a_stack) {
    PyMem_Free(u->a);
    PyMem_Free(u->d);
  }
  u->a = NULL;
}

/* Classifies argument i (object o; None for an absent out). Outputs must be writeable. */
static int uk_classify(ModState *st, UkArgs *u, Py_ssize_t i, PyObject *o, int is_out, PyObject *name) {
  UkArg *a = &u->a[i];
  a->obj = o;
  if (o == Py_None && is_out) return 0;
  if (is_array(st, o)) {
    ArrayObject *x = (ArrayObject *)o;
    if (x->lazy && ((GraphObject *)x->graph)->trace) {
      trace_error();
      return -1;
    }
    a->kind = UKA_LOOM;
    u->any_loom = 1;
    u->any_lazy |= x->lazy;
    return 0;
  }
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) {
    if (is_out) goto bad_out;
    a->kind = UKA_PYSCALAR;
    return 0;
  }
  int is_nd = st->np_ndarray && PyObject_TypeCheck(o, (PyTypeObject *)st->np_ndarray);
  if (is_nd || (!is_out && PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyByteArray_Check(o) &&
                !PyMemoryView_Check(o))) {
    int flags = PyBUF_STRIDES | PyBUF_FORMAT | (is_out ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &a->view, flags) < 0) {
      if (is_out && PyErr_ExceptionMatches(PyExc_BufferError)) {
        PyErr_Clear();
        goto bad_out;
      }
      return -1;
    }
    a->has_view = 1;
    if (view_desc(&a->view, &u->d[i], PyUnicode_AsUTF8(name)) < 0) return -1;
    a->kind = UKA_VIEW;
    a->np_scalar = a->view.ndim == 0; /* NumPy scalars and 0-d arrays: scalars (copied to a GPU call's device) */
    if (is_nd) u->any_numpy = 1;
    return 0;
  }
  if (is_out) goto bad_out;
  if (!st->uk_convert) {
    PyErr_Format(PyExc_TypeError, "%U: unsupported argument type %.100s", name, Py_TYPE(o)->tp_name);
    return -1;
  }
  PyObject *c = PyObject_CallOneArg(st->uk_convert, o);
  if (!c) return -1;
  if (!is_array(st, c)) {
    Py_DECREF(c);
    PyErr_Format(PyExc_TypeError, "%U: unsupported argument type %.100s", name, Py_TYPE(o)->tp_name);
    return -1;
  }
  if (!u->conv && !(u->conv = PyList_New(0))) {
    Py_DECREF(c);
    return -1;
  }
  int rc = PyList_Append(u->conv, c);
  Py_DECREF(c);
  if (rc < 0) return -1;
  return uk_classify(st, u, i, c, is_out, name);
bad_out:
  PyErr_Format(PyExc_TypeError, "%U: output arguments must be loom arrays or writeable NumPy arrays, got %.100s",
               name, Py_TYPE(o)->tp_name);
  return -1;
}

/* Stores Python scalar o as dtype dt into dst; -1 with an exception (OverflowError out of range). */
int store_scalar(PyObject *o, LoomDType dt, void *dst) {
  if (dt == LOOM_BFLOAT16) {
    PyErr_Format(PyExc_NotImplementedError, "kernel arguments: %s scalars are not supported yet", dtype_names[dt]);
    return -1;
  }
  if (dt == LOOM_COMPLEX64 || dt == LOOM_COMPLEX128) { /* two parts, real first (NumPy's layout) */
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) return -1;
    if (dt == LOOM_COMPLEX128) {
      memcpy(dst, &c.real, 8);
      memcpy((char *)dst + 8, &c.imag, 8);
    } else {
      float f[2] = {(float)c.real, (float)c.imag};
      memcpy(dst, f, 8);
    }
    return 0;
  }
  if (PyComplex_Check(o)) {
    PyErr_Format(PyExc_TypeError, "kernel arguments: the complex value %R cannot be passed as %s", o, dtype_names[dt]);
    return -1;
  }
  if (dt == LOOM_FLOAT16 || dt == LOOM_FLOAT32 || dt == LOOM_FLOAT64) {
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) return -1;
    if (dt == LOOM_FLOAT64) memcpy(dst, &v, 8);
    else if (dt == LOOM_FLOAT32) {
      float f = (float)v;
      memcpy(dst, &f, 4);
    } else {
      _Float16 h = (_Float16)v;
      memcpy(dst, &h, 2);
    }
    return 0;
  }
  if (PyFloat_Check(o)) {
    double v = PyFloat_AS_DOUBLE(o);
    if (dt == LOOM_BOOL) {
      *(uint8_t *)dst = v != 0;
      return 0;
    }
    if (!(v > -9.3e18 && v < 1.8e19)) {
      PyErr_Format(PyExc_OverflowError, "%R does not fit %s", o, dtype_names[dt]);
      return -1;
    }
    PyObject *i = PyLong_FromDouble(v);
    if (!i) return -1;
    int rc = store_scalar(i, dt, dst);
    Py_DECREF(i);
    return rc;
  }
  if (dt == LOOM_BOOL) {
    int t = PyObject_IsTrue(o);
    if (t < 0) return -1;
    *(uint8_t *)dst = (uint8_t)t;
    return 0;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  unsigned long long uv = (unsigned long long)v;
  if (overflow > 0 && dt == LOOM_UINT64) {
    uv = PyLong_AsUnsignedLongLong(o);
    if (uv == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    memcpy(dst, &uv, 8);
    return 0;
  }
  static const long long lo[LOOM_DTYPE_COUNT] = {0, INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN, 0, 0, 0, 0};
  static const long long hi[LOOM_DTYPE_COUNT] = {1, INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX, UINT8_MAX,
                                                 UINT16_MAX, UINT32_MAX, INT64_MAX};
  if (overflow || v < lo[dt] || v > hi[dt]) {
    PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s", o, dtype_names[dt]);
    return -1;
  }
  switch (dt) {
  case LOOM_INT8: case LOOM_UINT8: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); break; }
  case LOOM_INT16: case LOOM_UINT16: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
  case LOOM_INT32: case LOOM_UINT32: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
  default: memcpy(dst, &uv, 8); break;
  }
  return 0;
}

/* The dtype of Python scalar argument i: the param's own dtype; for a placeholder the dtype an array
 * argument of the same placeholder has (outputs first, then inputs, as CuPy binds); else NumPy's
 * default for the scalar (bool, int64, float64). */
static LoomDType uk_scalar_dtype(const UserKernelObject *k, const UkArgs *u, Py_ssize_t i) {
  int code = k->codes[i];
  if (code >= 0) return (LoomDType)code;
  if (code != UK_UNKNOWN) {
    for (int pass = 0; pass < 2; pass++)
      for (Py_ssize_t j = pass ? 0 : u->nin; j < (pass ? u->nin : u->n); j++)
        if (j != i && k->codes[j] == code && (u->a[j].kind == UKA_LOOM || u->a[j].kind == UKA_VIEW))
          return u->d[j].dtype;
  }
  PyObject *o = u->a[i].obj;
  return PyBool_Check(o) ? LOOM_BOOL : PyLong_Check(o) ? LOOM_INT64 : PyComplex_Check(o) ? LOOM_COMPLEX128 : LOOM_FLOAT64;
}

/* Reads the arguments: ins (nin objects) and outs (nout objects or NULL). With `run`, pending loom
 * arrays are evaluated and loom outputs prepared for writing; else (dumps) pending arrays are only
 * described. Then scalars are placed on the call's device. */
static int uk_gather(ModState *st, UserKernelObject *k, UkArgs *u, PyObject *const *ins, PyObject *const *outs,
                     Py_ssize_t nouts, int run) {
  for (int32_t i = 0; i < k->nin; i++)
    if (uk_classify(st, u, i, ins[i], 0, k->name) < 0) return -1;
  for (int32_t j = 0; j < k->nout; j++)
    if (uk_classify(st, u, k->nin + j, j < nouts ? outs[j] : Py_None, 1, k->name) < 0) return -1;
  if (run && u->any_lazy) {
    PyObject *stack[UK_STACK], **items = u->n <= UK_STACK ? stack : PyMem_Malloc(sizeof(PyObject *) * (size_t)u->n);
    if (!items) {
      PyErr_NoMemory();
      return -1;
    }
    for (Py_ssize_t i = 0; i < u->n; i++) items[i] = u->a[i].kind == UKA_LOOM ? u->a[i].obj : Py_None;
    int rc = materialize_many(st, items, u->n);
    if (items != stack) PyMem_Free(items);
    if (rc < 0) return -1;
  }
  int64_t elems = 0;
  for (Py_ssize_t i = 0; i < u->n; i++) {
    if (u->a[i].kind != UKA_LOOM) continue;
    ArrayObject *x = (ArrayObject *)u->a[i].obj;
    u->d[i] = x->desc;
    if (x->lazy) u->d[i].data = NULL; /* dumps: a descriptor only */
    else {
      if (run && i >= u->nin && before_write(st, x->buffer) < 0) return -1;
      int64_t m = numel(&x->desc);
      if (m > elems) elems = m;
      if (run && u->nbufs < UK_STACK) u->bufs[u->nbufs++] = Py_NewRef(x->buffer);
    }
  }
  /* the call's device: the first argument array with data */
  LoomDeviceKind dk = LOOM_DEVICE_HOST;
  int32_t di = 0;
  for (Py_ssize_t i = 0; i < u->n; i++)
    if ((u->a[i].kind == UKA_LOOM || (u->a[i].kind == UKA_VIEW && !u->a[i].np_scalar)) && u->d[i].data) {
      dk = u->d[i].device;
      di = u->d[i].device_index;
      break;
    }
  for (Py_ssize_t i = 0; i < u->n; i++) {
    UkArg *a = &u->a[i];
    LoomArray *d = &u->d[i];
    if (a->kind == UKA_PYSCALAR) {
      memset(d, 0, sizeof *d);
      d->dtype = uk_scalar_dtype(k, u, i);
      if (store_scalar(a->obj, d->dtype, a->val) < 0) return -1;
      d->data = a->val;
    } else if (!(a->kind == UKA_VIEW && a->np_scalar)) continue;
    if (!run || dk == LOOM_DEVICE_HOST) continue;
    /* a scalar on a CUDA call: a 0-d device copy */
    LoomArray host = *d, dev = *d;
    dev.device = dk;
    dev.device_index = di;
    dev.data = NULL;
    LoomStatus s = loom_array_alloc(ctx_of(st), &dev);
    if (s) {
      raise_status(st, s);
      return -1;
    }
    s = loom_array_copy(ctx_of(st), &dev, &host);
    *d = dev;
    a->dev_alloc = 1;
    if (s) {
      raise_status(st, s);
      return -1;
    }
  }
  (void)elems;
  for (Py_ssize_t i = u->nin; i < u->n; i++) u->a[i].orig = u->d[i].data;
  return 0;
}

/* The axes argument: None (all axes) or a tuple of ints; *naxes = -1 for None. */
static int parse_axes(PyObject *o, int32_t *axes, int32_t *naxes) {
  if (o == Py_None) {
    *naxes = -1;
    return 0;
  }
  if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) > LOOM_MAX_RANK) {
    PyErr_SetString(PyExc_TypeError, "axis must be None, an int or a tuple of at most 16 ints");
    return -1;
  }
  *naxes = (int32_t)PyTuple_GET_SIZE(o);
  for (int32_t i = 0; i < *naxes; i++) {
    long v = PyLong_AsLong(PyTuple_GET_ITEM(o, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
      PyErr_Format(PyExc_ValueError, "axis %ld is out of bounds", v);
      return -1;
    }
    axes[i] = (int32_t)v;
  }
  return 0;
}

/* Splits a call's arguments: ins = args, outs from `outs` (a tuple, or None; an elementwise kernel
 * also takes its outs at the end of args). */
static int uk_split(UserKernelObject *k, PyObject *args, PyObject *outs, PyObject *const **ins, PyObject *const **ov,
                    Py_ssize_t *nov) {
  if (!PyTuple_Check(args)) {
    PyErr_SetString(PyExc_TypeError, "user kernel: args must be a tuple");
    return -1;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  *ins = &PyTuple_GET_ITEM(args, 0);
  *ov = NULL;
  *nov = 0;
  if (outs == Py_None) {
    if (!k->is_reduction && n == (Py_ssize_t)k->nin + k->nout && k->nout > 0) {
      *ov = *ins + k->nin;
      *nov = k->nout;
      n = k->nin;
    }
  } else {
    if (!PyTuple_Check(outs) || PyTuple_GET_SIZE(outs) > k->nout) {
      PyErr_Format(PyExc_TypeError, "%U: out must be an array or a tuple of at most %d arrays", k->name, (int)k->nout);
      return -1;
    }
    *ov = &PyTuple_GET_ITEM(outs, 0);
    *nov = PyTuple_GET_SIZE(outs);
  }
  if (n != k->nin) {
    if (k->is_reduction)
      PyErr_Format(PyExc_TypeError, "Wrong number of arguments for %U: %d expected, got %zd", k->name, (int)k->nin,
                   PyTuple_GET_SIZE(args));
    else
      PyErr_Format(PyExc_TypeError, "Wrong number of arguments for %U: %d inputs (+ %d optional outputs) expected, "
                   "got %zd", k->name, (int)k->nin, (int)k->nout, PyTuple_GET_SIZE(args));
    return -1;
  }
  return 0;
}

/* One call: args[0..6] as uk_call's (args[0] is the kernel). */
static PyObject *uk_run(ModState *st, PyObject *const *args) {
  UserKernelObject *k = (UserKernelObject *)args[0];
  if (!k->k) {
    PyErr_SetString(PyExc_RuntimeError, "this user kernel was not initialized (its __init__ did not run)");
    return NULL;
  }
  PyObject *const *ins, *const *ov;
  Py_ssize_t nov;
  if (uk_split(k, args[1], args[2], &ins, &ov, &nov) < 0) return NULL;
  long long size = -1;
  if (args[3] != Py_None && (size = PyLong_AsLongLong(args[3])) == -1 && PyErr_Occurred()) return NULL;
  int32_t axes[LOOM_MAX_RANK], naxes = -1;
  int keepdims = 0;
  if (k->is_reduction) {
    if (parse_axes(args[4], axes, &naxes) < 0 || (keepdims = PyObject_IsTrue(args[5])) < 0) return NULL;
  }
  UkArgs u;
  if (ukargs_init(&u, (Py_ssize_t)k->nin + k->nout, k->nin) < 0) return NULL;
  CallStream cs;
  PyObject *res = NULL;
  if (call_stream_begin(st, args[6], &cs) < 0) goto done;
  if (uk_gather(st, k, &u, ins, ov, nov, 1) < 0) goto done;
  if (!k->is_reduction && k->size_rule) { /* CuPy's: size= only when every ndarray is raw, then required */
    int arrays = 0;
    for (Py_ssize_t i = 0; i < u.n && i < (Py_ssize_t)sizeof k->raw; i++)
      arrays += !k->raw[i] && (u.a[i].kind == UKA_LOOM || (u.a[i].kind == UKA_VIEW && !u.a[i].np_scalar));
    if (size >= 0 && arrays) {
      PyErr_SetString(PyExc_ValueError, "Specified 'size' can be used only if all of the ndarray are 'raw'.");
      goto done;
    }
    if (size < 0 && !arrays) {
      PyErr_SetString(PyExc_ValueError, "Loop size is undecided.");
      goto done;
    }
  }
  LoomStatus s;
  int64_t big = 0;
  for (Py_ssize_t i = 0; i < u.n; i++)
    if (u.a[i].kind == UKA_LOOM || u.a[i].kind == UKA_VIEW) {
      int64_t m = numel(&u.d[i]);
      if (m > big) big = m;
    }
  int nogil = big >= UK_NOGIL_ELEMS && u.nbufs < UK_STACK;
  PyThreadState *ts = nogil ? PyEval_SaveThread() : NULL;
  if (k->is_reduction)
    s = loom_reduction_kernel_call(k->k, k->nin, u.d, k->nout, u.d + k->nin, naxes < 0 ? 0 : naxes,
                                   naxes < 0 ? NULL : axes, keepdims);
  else
    s = loom_elementwise_kernel_call(k->k, k->nin, u.d, k->nout, u.d + k->nin, (int64_t)size);
  if (ts) PyEval_RestoreThread(ts);
  if (s) {
    raise_kernel(st, s, 0);
    goto done;
  }
  for (Py_ssize_t b = k->nin; b < u.n; b++) /* an empty given output loom allocated anyway: not needed */
    if (u.a[b].kind != UKA_NONE && !u.a[b].orig && u.d[b].data) {
      loom_array_free(ctx_of(st), &u.d[b]);
      u.d[b].data = NULL;
    }
  if (call_stream_end(st, &cs) < 0) goto free_outs;
  {
    int numpy_out = u.any_numpy && !u.any_loom && st->np_asarray;
    int single = k->nout == 1 && !(k->flags & UK_RETURN_TUPLE);
    PyObject *tup = single ? NULL : PyTuple_New(k->nout);
    if (!single && !tup) goto free_outs;
    int32_t j = 0;
    for (; j < k->nout; j++) {
      Py_ssize_t b = k->nin + j;
      PyObject *v = u.a[b].kind == UKA_NONE ? wrap_result(st, &u.d[b], numpy_out) : Py_NewRef(u.a[b].obj);
      if (!v) {
        j++;
        break;
      }
      if (single) res = v;
      else PyTuple_SET_ITEM(tup, j, v);
    }
    if (j < k->nout || (single && !res)) { /* a wrap failed: free the outputs not yet wrapped */
      for (; j < k->nout; j++)
        if (u.a[k->nin + j].kind == UKA_NONE) loom_array_free(ctx_of(st), &u.d[k->nin + j]);
      Py_XDECREF(tup);
      Py_CLEAR(res);
      goto done;
    }
    if (!single) res = tup;
    if (k->flags & UK_NO_RETURN) Py_SETREF(res, Py_NewRef(Py_None));
  }
  goto done;
free_outs:
  for (int32_t j = 0; j < k->nout; j++)
    if (u.a[k->nin + j].kind == UKA_NONE && u.d[k->nin + j].data) loom_array_free(ctx_of(st), &u.d[k->nin + j]);
done:
  call_stream_end(st, &cs);
  ukargs_free(st, &u);
  return res;
}

/* uk_call(kernel, args, outs, size, axes, keepdims, stream) -> the kernel's results (see above). */
static PyObject *core_uk_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 7 || !PyObject_TypeCheck(args[0], st->uk_type)) {
    PyErr_SetString(PyExc_TypeError, "uk_call(kernel, args, outs, size, axes, keepdims, stream)");
    return NULL;
  }
  return uk_run(st, args);
}

/* kernel(*args, size=None, stream=None): an elementwise call straight from Python (the stream object
 * goes through the stream_spec callable of uk_configure). */
static PyObject *uk_tp_call(UserKernelObject *self, PyObject *args, PyObject *kwargs) {
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return NULL;
  PyObject *size = Py_None, *stream = Py_None;
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    while (PyDict_Next(kwargs, &pos, &key, &val)) {
      if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "size") == 0) size = val;
      else if (PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, "stream") == 0) stream = val;
      else {
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument '%S'", self->name, key);
        return NULL;
      }
    }
  }
  if (self->is_reduction) {
    PyErr_SetString(PyExc_TypeError, "a reduction kernel is called through uk_call");
    return NULL;
  }
  PyObject *spec = Py_None;
  if (stream != Py_None) {
    if (!st->uk_stream) {
      PyErr_SetString(PyExc_RuntimeError, "uk_configure was not called");
      return NULL;
    }
    if (!(spec = PyObject_CallOneArg(st->uk_stream, stream))) return NULL;
  } else Py_INCREF(spec);
  PyObject *a[7] = {(PyObject *)self, args, Py_None, size, Py_None, Py_False, spec};
  PyObject *r = uk_run(st, a);
  Py_DECREF(spec);
  return r;
}

/* uk_dump(kernel, kind, args, outs, size, axes, keepdims) -> str: the text of the kernel that call
 * would run (loom_user_kernel_dump); nothing runs, pending arrays stay pending. */
static PyObject *core_uk_dump(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 7 || !PyObject_TypeCheck(args[0], st->uk_type)) {
    PyErr_SetString(PyExc_TypeError, "uk_dump(kernel, kind, args, outs, size, axes, keepdims)");
    return NULL;
  }
  UserKernelObject *k = (UserKernelObject *)args[0];
  long kind = PyLong_AsLong(args[1]);
  if (kind == -1 && PyErr_Occurred()) return NULL;
  PyObject *const *ins, *const *ov;
  Py_ssize_t nov;
  if (uk_split(k, args[2], args[3], &ins, &ov, &nov) < 0) return NULL;
  long long size = -1;
  if (args[4] != Py_None && (size = PyLong_AsLongLong(args[4])) == -1 && PyErr_Occurred()) return NULL;
  int32_t axes[LOOM_MAX_RANK], naxes = -1;
  int keepdims = 0;
  if (parse_axes(args[5], axes, &naxes) < 0 || (keepdims = PyObject_IsTrue(args[6])) < 0) return NULL;
  UkArgs u;
  if (ukargs_init(&u, (Py_ssize_t)k->nin + k->nout, k->nin) < 0) return NULL;
  PyObject *res = NULL;
  if (uk_gather(st, k, &u, ins, ov, nov, 0) == 0) {
    char *text = NULL;
    LoomStatus s = loom_user_kernel_dump(k->k, (LoomDumpKind)kind, k->nin, u.d, k->nout, u.d + k->nin,
                                         (int64_t)size, naxes < 0 ? 0 : naxes, naxes < 0 ? NULL : axes, keepdims,
                                         &text);
    if (s) raise_kernel(st, s, 0);
    else {
      res = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
      loom_free_string(ctx_of(st), text);
    }
  }
  ukargs_free(st, &u);
  return res;
}

PyMethodDef uk_functions[] = {
    FASTF(uk_elementwise), FASTF(uk_reduction), FASTF(uk_call), FASTF(uk_dump), FASTF(uk_configure),
    {NULL}};
