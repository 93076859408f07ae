/* SPDX-License-Identifier: Apache-2.0 */
/* raw_kernel.c: CuPy's RawModule and RawKernel (the RawModule and RawFunction types and launches;
 * the contract is in the section comment below).
 */
#include "core.h"

/* ---- raw kernels: CuPy's RawModule and RawKernel ---------------------------------------------------
 * RawModule owns a LoomRawModule on the module's context; RawFunction holds its module (functions are
 * owned by their module). raw_launch(function, grid, block, shared_mem, args, stream, ext_stream):
 * loom arrays (pending ones evaluated first, on the launch's stream) and objects with
 * __cuda_array_interface__ are LOOM_RAW_ARG_ARRAY; NumPy scalars (and 0-d arrays) are scalars of their
 * own dtype; Python bool/int/float take the parameter's type (ints range-checked; an int too big for
 * the signed type but fitting the unsigned one of that width takes the unsigned one); where the
 * parameter list is unknown (a cubin not loaded yet) they take NumPy's/CuPy's defaults (bool, int64,
 * float64); bytes are a by-value parameter's bytes (LOOM_RAW_ARG_BYTES: a struct, the parameter's size). NumPy
 * arrays are refused (raw kernels read device memory). stream is a spec as for
 * uk_call (the launch goes on the current stream after it is switched); ext_stream, when not None, is a
 * foreign CUstream: loom's device work is synchronized first, then the launch goes there. */
typedef struct {
  PyObject_HEAD
  PyObject *ctx_obj;
  LoomRawModule *m;
} RawModuleObject;
typedef struct {
  PyObject_HEAD
  PyObject *module; /* RawModule */
  LoomRawFunction *f;
} RawFunctionObject;

static void rawmod_dealloc(RawModuleObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  if (self->m) loom_raw_module_destroy(self->m);
  Py_XDECREF(self->ctx_obj);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot rawmod_slots[] = {{Py_tp_dealloc, rawmod_dealloc}, {0, NULL}};
PyType_Spec rawmod_spec = {"loom._core.RawModule", sizeof(RawModuleObject), 0, Py_TPFLAGS_DEFAULT,
                                  rawmod_slots};
static void rawfn_dealloc(RawFunctionObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(self->module);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot rawfn_slots[] = {{Py_tp_dealloc, rawfn_dealloc}, {0, NULL}};
PyType_Spec rawfn_spec = {"loom._core.RawFunction", sizeof(RawFunctionObject), 0, Py_TPFLAGS_DEFAULT,
                                 rawfn_slots};

/* raw_module(code: bytes, format: int, options: tuple of str) -> RawModule */
static PyObject *core_raw_module(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "raw_module(code: bytes, format: int, options: tuple)");
    return NULL;
  }
  long fmt = PyLong_AsLong(args[1]);
  if (fmt == -1 && PyErr_Occurred()) return NULL;
  if (fmt < LOOM_RAW_AUTO || fmt > LOOM_RAW_HSACO) {
    PyErr_Format(PyExc_ValueError, "raw_module: format %ld is not a LoomRawFormat", fmt);
    return NULL;
  }
  Py_ssize_t nopt = PyTuple_GET_SIZE(args[2]);
  const char **opts = PyMem_Malloc(sizeof(char *) * (size_t)(nopt ? nopt : 1));
  if (!opts) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < nopt; i++) {
    PyObject *o = PyTuple_GET_ITEM(args[2], i);
    if (!PyUnicode_Check(o) || !(opts[i] = PyUnicode_AsUTF8(o))) {
      PyMem_Free(opts);
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "RawModule: options must be strings");
      return NULL;
    }
  }
  LoomRawModule *m = NULL;
  LoomStatus s = loom_raw_module_create(ctx_of(st), PyBytes_AS_STRING(args[0]), (size_t)PyBytes_GET_SIZE(args[0]),
                                        (LoomRawFormat)fmt, nopt ? opts : NULL, (int32_t)nopt, &m);
  PyMem_Free(opts);
  if (s) return raise_kernel(st, s, 0);
  RawModuleObject *r = (RawModuleObject *)st->rawmod_type->tp_alloc(st->rawmod_type, 0);
  if (!r) {
    loom_raw_module_destroy(m);
    return NULL;
  }
  r->m = m;
  r->ctx_obj = Py_NewRef(st->ctx_obj);
  return (PyObject *)r;
}

static RawModuleObject *as_rawmod(ModState *st, PyObject *o) {
  if (!PyObject_TypeCheck(o, st->rawmod_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a loom._core.RawModule");
    return NULL;
  }
  return (RawModuleObject *)o;
}
static RawFunctionObject *as_rawfn(ModState *st, PyObject *o) {
  if (!PyObject_TypeCheck(o, st->rawfn_type)) {
    PyErr_SetString(PyExc_TypeError, "expected a loom._core.RawFunction");
    return NULL;
  }
  return (RawFunctionObject *)o;
}

/* raw_module_text(m, which): which 0 = PTX, 1 = kernel names (one per line) */
static PyObject *core_raw_module_text(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "raw_module_text(module, which)");
    return NULL;
  }
  RawModuleObject *m = as_rawmod(st, args[0]);
  long which = m ? PyLong_AsLong(args[1]) : 0;
  if (!m || (which == -1 && PyErr_Occurred())) return NULL;
  char *text = NULL;
  LoomStatus s = which == 0 ? loom_raw_module_ptx(m->m, &text) : loom_raw_module_kernels(m->m, &text);
  if (s) return raise_kernel(st, s, 0);
  PyObject *r = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
  loom_free_string(ctx_of(st), text);
  return r;
}

/* raw_get_function(m, name) -> RawFunction */
static PyObject *core_raw_get_function(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "raw_get_function(module, name: str)");
    return NULL;
  }
  RawModuleObject *m = as_rawmod(st, args[0]);
  const char *name = m ? PyUnicode_AsUTF8(args[1]) : NULL;
  if (!name) return NULL;
  LoomRawFunction *f = NULL;
  LoomStatus s = loom_raw_module_get_function(m->m, name, &f);
  if (s) return raise_kernel(st, s, 0);
  RawFunctionObject *r = (RawFunctionObject *)st->rawfn_type->tp_alloc(st->rawfn_type, 0);
  if (!r) return NULL;
  r->f = f;
  r->module = Py_NewRef(args[0]);
  return (PyObject *)r;
}

enum { RAW_MAX_PARAMS = 256 };

/* raw_params(f) -> [(kind, size)] (kinds as LoomRawParamKind) or None when unknown */
static PyObject *core_raw_params(PyObject *module, PyObject *arg) {
  MODSTATE;
  RawFunctionObject *f = as_rawfn(st, arg);
  if (!f) return NULL;
  int32_t n = 0, sizes[RAW_MAX_PARAMS];
  LoomRawParamKind kinds[RAW_MAX_PARAMS];
  LoomStatus s = loom_raw_function_params(f->f, &n, kinds, sizes, RAW_MAX_PARAMS);
  if (s) return raise_kernel(st, s, 0);
  if (n < 0) Py_RETURN_NONE;
  if (n > RAW_MAX_PARAMS) n = RAW_MAX_PARAMS;
  PyObject *l = PyList_New(n);
  for (int32_t i = 0; l && i < n; i++) {
    PyObject *t = Py_BuildValue("(ii)", (int)kinds[i], (int)sizes[i]);
    if (!t) Py_CLEAR(l);
    else PyList_SET_ITEM(l, i, t);
  }
  return l;
}

/* The scalar dtype a Python number takes for a parameter (kind, size); LOOM_DTYPE_COUNT: refused. */
static LoomDType raw_py_dtype(PyObject *o, int known, LoomRawParamKind kind, int32_t size) {
  int is_int = PyLong_Check(o); /* bool too */
  if (PyComplex_Check(o)) { /* cuFloatComplex / cuDoubleComplex: a struct of 8 or 16 bytes (PTX .b8 [n]) */
    if (!known || (kind == LOOM_RAW_PARAM_ANY && size == 16)) return LOOM_COMPLEX128;
    return kind == LOOM_RAW_PARAM_ANY && size == 8 ? LOOM_COMPLEX64 : LOOM_DTYPE_COUNT;
  }
  if (!known) return PyBool_Check(o) ? LOOM_BOOL : is_int ? LOOM_INT64 : LOOM_FLOAT64;
  static const LoomDType ints[9] = {LOOM_DTYPE_COUNT, LOOM_INT8, LOOM_INT16, LOOM_DTYPE_COUNT, LOOM_INT32,
                                    LOOM_DTYPE_COUNT, LOOM_DTYPE_COUNT, LOOM_DTYPE_COUNT, LOOM_INT64};
  static const LoomDType floats[9] = {LOOM_DTYPE_COUNT, LOOM_DTYPE_COUNT, LOOM_FLOAT16, LOOM_DTYPE_COUNT, LOOM_FLOAT32,
                                      LOOM_DTYPE_COUNT, LOOM_DTYPE_COUNT, LOOM_DTYPE_COUNT, LOOM_FLOAT64};
  if (size < 1 || size > 8) return LOOM_DTYPE_COUNT;
  if (is_int) {
    if (kind == LOOM_RAW_PARAM_INT || kind == LOOM_RAW_PARAM_INT_OR_POINTER || kind == LOOM_RAW_PARAM_ANY)
      return ints[size];
    if (kind == LOOM_RAW_PARAM_FLOAT) return floats[size];
    return LOOM_DTYPE_COUNT;
  }
  if (kind == LOOM_RAW_PARAM_FLOAT || kind == LOOM_RAW_PARAM_ANY) return floats[size];
  return LOOM_DTYPE_COUNT;
}

/* Reads a scalar of dtype dt at p into a LoomRawArg value. */
static void raw_value_from(LoomRawArg *r, LoomDType dt, const void *p) {
  switch (dt) {
  case LOOM_BOOL: r->value.i = *(const uint8_t *)p != 0; break;
  case LOOM_INT8: r->value.i = *(const int8_t *)p; break;
  case LOOM_INT16: r->value.i = *(const int16_t *)p; break;
  case LOOM_INT32: r->value.i = *(const int32_t *)p; break;
  case LOOM_INT64: r->value.i = *(const int64_t *)p; break;
  case LOOM_UINT8: r->value.u = *(const uint8_t *)p; break;
  case LOOM_UINT16: r->value.u = *(const uint16_t *)p; break;
  case LOOM_UINT32: r->value.u = *(const uint32_t *)p; break;
  case LOOM_UINT64: r->value.u = *(const uint64_t *)p; break;
  case LOOM_FLOAT16: r->value.f = (double)*(const _Float16 *)p; break;
  case LOOM_FLOAT32: r->value.f = *(const float *)p; break;
  case LOOM_COMPLEX64: r->value.c[0] = ((const float *)p)[0], r->value.c[1] = ((const float *)p)[1]; break;
  case LOOM_COMPLEX128: r->value.c[0] = ((const double *)p)[0], r->value.c[1] = ((const double *)p)[1]; break;
  default: r->value.f = *(const double *)p; break;
  }
}

/* grid/block: a tuple of 1..3 ints >= 1 (an int is accepted too) */
static int parse_dim3(PyObject *o, uint32_t out[3], const char *what) {
  out[0] = out[1] = out[2] = 1;
  if (PyLong_Check(o)) {
    unsigned long v = PyLong_AsUnsignedLong(o);
    if (PyErr_Occurred() || v > UINT32_MAX) goto bad;
    out[0] = (uint32_t)v;
    return 0;
  }
  PyObject *f = PySequence_Fast(o, what);
  if (!f) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  if (n < 1 || n > 3) {
    Py_DECREF(f);
    PyErr_Format(PyExc_ValueError, "%s must have 1 to 3 dimensions", what);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    unsigned long v = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(f, i));
    if (PyErr_Occurred() || v > UINT32_MAX) {
      Py_DECREF(f);
      goto bad;
    }
    out[i] = (uint32_t)v;
  }
  Py_DECREF(f);
  return 0;
bad:
  if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError, "%s must be non-negative ints below 2**32", what);
  }
  return -1;
}

/* raw_launch(f, grid, block, shared_mem, args, stream, ext_stream) */
static PyObject *core_raw_launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 7 || !PyTuple_Check(args[4])) {
    PyErr_SetString(PyExc_TypeError, "raw_launch(function, grid, block, shared_mem, args: tuple, stream, ext_stream)");
    return NULL;
  }
  RawFunctionObject *f = as_rawfn(st, args[0]);
  if (!f) return NULL;
  uint32_t grid[3], block[3];
  if (parse_dim3(args[1], grid, "grid") < 0 || parse_dim3(args[2], block, "block") < 0) return NULL;
  unsigned long shmem = PyLong_AsUnsignedLong(args[3]);
  if (PyErr_Occurred()) return NULL;
  if (shmem > UINT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "shared_mem must be below 2**32");
    return NULL;
  }
  void *ext = NULL;
  int use_ext = args[6] != Py_None;
  if (use_ext && !(ext = PyLong_AsVoidPtr(args[6])) && PyErr_Occurred()) return NULL;
  const char *fname = loom_raw_function_name(f->f);
  PyObject *av = args[4];
  Py_ssize_t n = PyTuple_GET_SIZE(av);
  int32_t np = 0, sizes[RAW_MAX_PARAMS];
  LoomRawParamKind kinds[RAW_MAX_PARAMS];
  LoomStatus s = loom_raw_function_params(f->f, &np, kinds, sizes, RAW_MAX_PARAMS);
  if (s) return raise_kernel(st, s, 0);
  int known = np >= 0;
  if (known && n != np) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d argument%s, got %zd", fname, (int)np, np == 1 ? "" : "s", n);
    return NULL;
  }
  if (n > RAW_MAX_PARAMS) {
    PyErr_Format(PyExc_TypeError, "kernel '%s': at most %d arguments are supported", fname, RAW_MAX_PARAMS);
    return NULL;
  }
  LoomRawArg *ra = PyMem_Calloc((size_t)(n ? n : 1), sizeof(LoomRawArg));
  LoomArray *cai = PyMem_Calloc((size_t)(n ? n : 1), sizeof(LoomArray));
  PyObject *keep = PyList_New(0); /* Buffers of loom arrays, for the launch */
  PyObject *res = NULL;
  CallStream cs = {0};
  if (!ra || !cai || !keep) {
    if (!PyErr_Occurred()) PyErr_NoMemory();
    goto out;
  }
  int any_lazy = 0, any_loom_gpu = 0;
  /* foreign arrays (__cuda_array_interface__: CuPy's on NVIDIA and on ROCm) are on this machine's GPU kind:
   * AMD's on a machine with AMD GPUs and no CUDA device, else CUDA's */
  int32_t ncuda = 0, nhip = 0;
  loom_device_count(ctx_of(st), LOOM_DEVICE_CUDA, &ncuda);
  if (ncuda == 0) loom_device_count(ctx_of(st), LOOM_DEVICE_HIP, &nhip);
  LoomDeviceKind dk = ncuda == 0 && nhip > 0 ? LOOM_DEVICE_HIP : LOOM_DEVICE_CUDA;
  int32_t di = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyTuple_GET_ITEM(av, i);
    LoomRawParamKind kind = known ? kinds[i] : LOOM_RAW_PARAM_ANY;
    int32_t size = known ? sizes[i] : 0;
    if (is_array(st, o)) {
      ArrayObject *x = (ArrayObject *)o;
      if (x->lazy && ((GraphObject *)x->graph)->trace) {
        trace_error();
        goto out;
      }
      any_lazy |= x->lazy;
      ra[i].kind = LOOM_RAW_ARG_ARRAY;
      continue; /* the descriptor after evaluation */
    }
    if (PyBytes_CheckExact(o)) { /* a by-value parameter's bytes (a struct: loom._raw packs NumPy records) */
      if (PyBytes_GET_SIZE(o) == 0) {
        PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd: empty bytes (a by-value argument needs its bytes)",
                     fname, i);
        goto out;
      }
      ra[i].kind = LOOM_RAW_ARG_BYTES;
      ra[i].bytes = PyBytes_AS_STRING(o); /* args keeps it alive through the launch */
      ra[i].nbytes = (size_t)PyBytes_GET_SIZE(o);
      continue;
    }
    int is_nd = st->np_ndarray && PyObject_TypeCheck(o, (PyTypeObject *)st->np_ndarray);
    int is_num = PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o);
    if (!is_nd && !is_num && PyObject_HasAttrString(o, "__cuda_array_interface__")) {
      PyObject *d = PyObject_GetAttrString(o, "__cuda_array_interface__");
      PyObject *data = d && PyDict_Check(d) ? PyDict_GetItemString(d, "data") : NULL;
      PyObject *p0 = data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) >= 1 ? PyTuple_GET_ITEM(data, 0) : NULL;
      void *ptr = p0 && p0 != Py_None ? PyLong_AsVoidPtr(p0) : NULL;
      Py_XDECREF(d);
      if (PyErr_Occurred()) goto out;
      if (!p0) {
        PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd: a bad __cuda_array_interface__", fname, i);
        goto out;
      }
      long dev = 0;
      PyObject *devo = PyObject_GetAttrString(o, "device");
      if (!devo) PyErr_Clear();
      else {
        PyObject *id = PyObject_GetAttrString(devo, "id");
        if (!id) PyErr_Clear();
        else {
          dev = PyLong_AsLong(id);
          if (dev == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            dev = 0;
          }
          Py_DECREF(id);
        }
        Py_DECREF(devo);
      }
      cai[i].data = ptr;
      cai[i].device = dk;
      cai[i].device_index = (int32_t)dev;
      ra[i].kind = LOOM_RAW_ARG_ARRAY;
      ra[i].array = &cai[i];
      if (PyList_Append(keep, o) < 0) goto out;
      continue;
    }
    LoomDType dt = LOOM_DTYPE_COUNT;
    if (is_num) {
      dt = raw_py_dtype(o, known, kind, size);
      if (dt == LOOM_DTYPE_COUNT) {
        static const char *const what[] = {"a pointer", "an integer", "a floating-point scalar",
                                           "a pointer or 64-bit integer", "a value"};
        PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd: the parameter is %s of %d bytes, got %R", fname, i,
                     what[(int)kind <= 4 ? (int)kind : 4], (int)size, o);
        goto out;
      }
      unsigned char buf[16];
      if (dt == LOOM_COMPLEX64 || dt == LOOM_COMPLEX128) {
        Py_complex c = PyComplex_AsCComplex(o);
        if (PyErr_Occurred()) goto out;
        ra[i].value.c[0] = c.real;
        ra[i].value.c[1] = c.imag;
        ra[i].kind = LOOM_RAW_ARG_SCALAR;
        ra[i].dtype = dt;
        continue;
      }
      if (dt != LOOM_BOOL && !PyFloat_Check(o) && dt >= LOOM_INT8 && dt <= LOOM_INT64) {
        if (store_scalar(o, dt, buf) < 0) { /* too big for the signed type: the unsigned one of that width */
          if (!PyErr_ExceptionMatches(PyExc_OverflowError)) goto out;
          PyErr_Clear();
          LoomDType ut = (LoomDType)(dt + (LOOM_UINT8 - LOOM_INT8));
          if (store_scalar(o, ut, buf) < 0) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd: %R does not fit the %s parameter", fname, i, o,
                         dtype_names[dt]);
            goto out;
          }
          dt = ut;
        }
      } else if (store_scalar(o, dt, buf) < 0) {
        goto out;
      }
      raw_value_from(&ra[i], dt, buf);
    } else if (is_nd || PyObject_CheckBuffer(o)) {
      Py_buffer v;
      if (PyObject_GetBuffer(o, &v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) goto out;
      LoomArray d;
      int rc = view_desc(&v, &d, fname);
      if (rc == 0 && v.ndim != 0) {
        PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd is a NumPy array: raw kernels take loom GPU arrays "
                     "(loom.asarray(x) copies it to the device)", fname, i);
        rc = -1;
      }
      if (rc == 0) {
        dt = d.dtype;
        raw_value_from(&ra[i], dt, v.buf);
      }
      PyBuffer_Release(&v);
      if (rc < 0) goto out;
    } else {
      PyErr_Format(PyExc_TypeError, "kernel '%s' argument %zd: unsupported type %.100s", fname, i, Py_TYPE(o)->tp_name);
      goto out;
    }
    ra[i].kind = LOOM_RAW_ARG_SCALAR;
    ra[i].dtype = dt;
  }
  if (!use_ext && call_stream_begin(st, args[5], &cs) < 0) goto out;
  if (any_lazy && materialize_many(st, &PyTuple_GET_ITEM(av, 0), n) < 0) goto out;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PyTuple_GET_ITEM(av, i);
    if (!is_array(st, o)) continue;
    ArrayObject *x = (ArrayObject *)o;
    ra[i].array = &x->desc;
    if (PyList_Append(keep, x->buffer) < 0) goto out;
    if (x->desc.device != LOOM_DEVICE_HOST && !any_loom_gpu) {
      any_loom_gpu = 1;
      dk = x->desc.device;
      di = x->desc.device_index;
    }
    /* the kernel may write any array argument: pending values reading it are evaluated first */
    if (before_write(st, x->buffer) < 0) goto out;
  }
  if (use_ext) {
    if (any_loom_gpu) { /* order after loom's own work on the device */
      s = loom_device_synchronize(ctx_of(st), dk, di);
      if (s) {
        raise_status(st, s);
        goto out;
      }
    }
    s = loom_raw_function_launch_on(f->f, grid, block, (uint32_t)shmem, ext, -1, (int32_t)n, ra);
  } else {
    s = loom_raw_function_launch(f->f, grid, block, (uint32_t)shmem, NULL, (int32_t)n, ra);
  }
  if (s) {
    raise_kernel(st, s, 1);
    goto out;
  }
  res = Py_NewRef(Py_None);
out:
  call_stream_end(st, &cs);
  PyMem_Free(ra);
  PyMem_Free(cai);
  Py_XDECREF(keep);
  if (res == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "raw_launch failed");
  return res;
}

/* raw_module_format(m) -> int: the LoomRawFormat the code was taken as (sniffed for LOOM_RAW_AUTO) */
static PyObject *core_raw_module_format(PyObject *module, PyObject *arg) {
  MODSTATE;
  RawModuleObject *m = as_rawmod(st, arg);
  return m ? PyLong_FromLong((long)loom_raw_module_format(m->m)) : NULL;
}

/* raw_function_handle(f, device) -> int: the driver's CUfunction of f on device (the module loaded there) */
static PyObject *core_raw_function_handle(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "raw_function_handle(function, device: int)");
    return NULL;
  }
  RawFunctionObject *f = as_rawfn(st, args[0]);
  long dev = f ? PyLong_AsLong(args[1]) : 0;
  if (!f || (dev == -1 && PyErr_Occurred())) return NULL;
  void *h = NULL;
  LoomStatus s = loom_raw_function_handle(f->f, (int32_t)dev, &h);
  if (s) return raise_kernel(st, s, 0);
  return PyLong_FromVoidPtr(h);
}

/* raw_module_global(m, name, device) -> (address, bytes) of a __device__ / __constant__ variable */
static PyObject *core_raw_module_global(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3 || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "raw_module_global(module, name: str, device: int)");
    return NULL;
  }
  RawModuleObject *m = as_rawmod(st, args[0]);
  const char *name = m ? PyUnicode_AsUTF8(args[1]) : NULL;
  long dev = name ? PyLong_AsLong(args[2]) : 0;
  if (!name || (dev == -1 && PyErr_Occurred())) return NULL;
  void *p = NULL;
  size_t n = 0;
  LoomStatus s = loom_raw_module_global(m->m, name, (int32_t)dev, &p, &n);
  if (s) return raise_kernel(st, s, 0);
  return Py_BuildValue("(Nn)", PyLong_FromVoidPtr(p), (Py_ssize_t)n);
}

PyMethodDef raw_functions[] = {
    FASTF(raw_function_handle), FASTF(raw_module_global),
    FASTF(raw_module), FASTF(raw_module_text), FASTF(raw_get_function), FASTF(raw_launch),
    {"raw_params", (PyCFunction)core_raw_params, METH_O, "[(kind, size)] of a raw function, or None"},
    {"raw_module_format", (PyCFunction)core_raw_module_format, METH_O, "the LoomRawFormat of a raw module's code"},
    {NULL}};
