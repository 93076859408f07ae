/* SPDX-License-Identifier: Apache-2.0 */
/* ops.c: operands and op functions. An op builds one node in the graph its operands pick (a trace
 * graph if any operand is a @loom.fuse tracer, else the current graph): a materialized operand enters
 * as loom_input, a lazy operand of an older graph is evaluated first, Python scalars enter as weak
 * constants (NEP 50). The result is a new lazy array (evaluated at once in eager mode).
 */
#include "core.h"

/* ---- operands ------------------------------------------------------------------------------------ */
static const char *device_label(char *buf, size_t cap, LoomDeviceKind k, int32_t i) {
  if (k == LOOM_DEVICE_HOST) snprintf(buf, cap, "the host");
  else snprintf(buf, cap, "%s device %d", k == LOOM_DEVICE_CUDA ? "CUDA" : "HIP", (int)i);
  return buf;
}

/* The graph an op on these operands builds in: a trace graph if any operand is a tracer (all tracers
 * must share it), else the current graph. Returns a borrowed reference. */
GraphObject *graph_for(ModState *st, PyObject *const *ops, int n) {
  GraphObject *trace = NULL;
  st->op_devfree = 1;
  st->op_kind = LOOM_DEVICE_HOST;
  st->op_index = 0;
  for (int i = 0; i < n; i++) {
    if (!ops[i] || !is_array(st, ops[i])) continue;
    ArrayObject *a = (ArrayObject *)ops[i];
    if (!a->devfree) {
      if (st->op_devfree) {
        st->op_devfree = 0;
        st->op_kind = a->desc.device;
        st->op_index = a->desc.device_index;
      } else if (st->op_kind != a->desc.device || st->op_index != a->desc.device_index) {
        char b1[32], b2[32];
        PyErr_Format(PyExc_ValueError,
                     "operands are on two devices: %s and %s; move one to the other's device first "
                     "(loom.asarray(x) inside `with loom.cuda.Device(n):`, or x.get() for the host)",
                     device_label(b1, sizeof b1, st->op_kind, st->op_index),
                     device_label(b2, sizeof b2, a->desc.device, a->desc.device_index));
        return NULL;
      }
    }
    if (a->lazy && ((GraphObject *)a->graph)->trace) {
      if (trace && a->graph != (PyObject *)trace) {
        PyErr_SetString(PyExc_ValueError, "values traced by two different @loom.fuse calls cannot be combined");
        return NULL;
      }
      trace = (GraphObject *)a->graph;
    }
  }
  return trace ? trace : current_graph(st);
}

int input_node(ModState *st, GraphObject *gr, ArrayObject *a, LoomNode *out) {
  if (container_array(st, (PyObject *)a)) return refuse_container((PyObject *)a, "this operation");
  if (a->in_serial == gr->serial) { /* entered this graph before, with this descriptor and buffer */
    *out = a->in_node;
    return 0;
  }
  LoomStatus s = loom_input(gr->g, &a->desc, out);
  if (s) {
    raise_status(st, s);
    return -1;
  }
  if (PySet_Add(gr->keep, a->buffer) < 0) return -1;
  gr->kept_bytes += numel(&a->desc) * (int64_t)loom_dtype_size(a->desc.dtype);
  if (numel(&a->desc) > gr->max_in) gr->max_in = numel(&a->desc); /* eval.c: release the GIL for large work */
  a->in_serial = gr->serial;
  a->in_node = *out;
  return 0;
}

/* A 0-d constant computed in another graph (e.g. a NumPy scalar, made before a @fuse trace met it)
 * enters gr as a strong constant of its dtype, not as an input: it then fits any device. */
static int const_node(ModState *st, GraphObject *gr, const LoomArray *d, LoomNode *out) {
  const void *p = d->data;
  LoomStatus s;
  switch (d->dtype) {
  case LOOM_BOOL: s = loom_const_u64(gr->g, *(const uint8_t *)p != 0, d->dtype, out); break;
  case LOOM_INT8: s = loom_const_i64(gr->g, *(const int8_t *)p, d->dtype, out); break;
  case LOOM_INT16: s = loom_const_i64(gr->g, *(const int16_t *)p, d->dtype, out); break;
  case LOOM_INT32: s = loom_const_i64(gr->g, *(const int32_t *)p, d->dtype, out); break;
  case LOOM_INT64: s = loom_const_i64(gr->g, *(const int64_t *)p, d->dtype, out); break;
  case LOOM_UINT8: s = loom_const_u64(gr->g, *(const uint8_t *)p, d->dtype, out); break;
  case LOOM_UINT16: s = loom_const_u64(gr->g, *(const uint16_t *)p, d->dtype, out); break;
  case LOOM_UINT32: s = loom_const_u64(gr->g, *(const uint32_t *)p, d->dtype, out); break;
  case LOOM_UINT64: s = loom_const_u64(gr->g, *(const uint64_t *)p, d->dtype, out); break;
  case LOOM_FLOAT16: s = loom_const_f64(gr->g, (double)*(const _Float16 *)p, d->dtype, out); break;
  case LOOM_FLOAT32: s = loom_const_f64(gr->g, *(const float *)p, d->dtype, out); break;
  case LOOM_BFLOAT16: { /* widening is a shift of the 16 bits */
    uint32_t w = (uint32_t)*(const uint16_t *)p << 16;
    float f;
    memcpy(&f, &w, 4);
    s = loom_const_f64(gr->g, f, d->dtype, out);
    break;
  }
  case LOOM_COMPLEX64: s = loom_const_complex(gr->g, ((const float *)p)[0], ((const float *)p)[1], d->dtype, out); break;
  case LOOM_COMPLEX128: s = loom_const_complex(gr->g, ((const double *)p)[0], ((const double *)p)[1], d->dtype, out); break;
  default: s = loom_const_f64(gr->g, *(const double *)p, d->dtype, out); break;
  }
  if (s) {
    raise_status(st, s);
    return -1;
  }
  return 0;
}

/* The node of operand o in graph gr: arrays (evaluated first when lazy in another graph) and Python
 * bool/int/float scalars (weak, NEP 50). */
int node_of(ModState *st, GraphObject *gr, PyObject *o, LoomNode *out) {
  LoomStatus s;
  if (is_array(st, o)) {
    ArrayObject *a = (ArrayObject *)o;
    if (a->lazy && a->graph == (PyObject *)gr) {
      *out = a->node;
      return 0;
    }
    int devfree = a->devfree; /* materializing clears it */
    if (a->lazy && devfree) {
      /* a constant-only array of an older graph: a 0-d one comes back as a constant (it fits any device),
       * any other is made on this op's device (its own home device when the op has none either) */
      if (a->desc.ndim == 0) {
        a->desc.device = LOOM_DEVICE_HOST;
        a->desc.device_index = 0;
      } else if (!st->op_devfree) {
        a->desc.device = st->op_kind;
        a->desc.device_index = st->op_index;
      }
    }
    if (a->lazy && materialize(st, a) < 0) return -1;
    if (devfree && a->desc.ndim == 0 && a->desc.data && a->desc.device == LOOM_DEVICE_HOST)
      return const_node(st, gr, &a->desc, out);
    return input_node(st, gr, a, out);
  }
  if (PyBool_Check(o)) s = loom_weak_bool(gr->g, o == Py_True, out);
  else if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow > 0) { /* [2**63, 2**64): a weak uint64 (NumPy 2 takes it where the dtype allows) */
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for uint64", o);
        return -1;
      }
      s = loom_weak_uint(gr->g, u, out);
    } else if (overflow) {
      PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for int64", o);
      return -1;
    } else {
      s = loom_weak_int(gr->g, v, out);
    }
  } else if (PyFloat_Check(o)) s = loom_weak_float(gr->g, PyFloat_AS_DOUBLE(o), out);
  else if (PyComplex_Check(o)) s = loom_weak_complex(gr->g, PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o), out);
  else {
    PyErr_Format(PyExc_TypeError, "loom: unsupported operand type %.100s (expected a loom array or a Python scalar)",
                 Py_TYPE(o)->tp_name);
    return -1;
  }
  if (s) {
    raise_status(st, s);
    return -1;
  }
  return 0;
}

/* The home device of a constant-only array (of one or more dimensions): the calling thread's current
 * device (configure's hook), where every new array is made, so that materializing it (a flush past the
 * graph bound, loom.eval) puts it beside the arrays it meets later; the host without a hook. A failing hook (LOOM_DEVICE naming a kind this machine lacks)
 * leaves the host: creating a real array there raises the hook's error. */
static void home_device(ModState *st, LoomDeviceKind *kind, int32_t *index) {
  *kind = LOOM_DEVICE_HOST;
  *index = 0;
  if (!st->current_device) return;
  PyObject *r = PyObject_CallNoArgs(st->current_device);
  if (r && PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2) {
    long k = PyLong_AsLong(PyTuple_GET_ITEM(r, 0)), i = PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
    if (!PyErr_Occurred() && k >= 0 && k < 32 && i >= 0 && i <= INT32_MAX && (k != LOOM_DEVICE_HOST || i == 0)) {
      *kind = (LoomDeviceKind)k;
      *index = (int32_t)i;
    }
  }
  Py_XDECREF(r);
  PyErr_Clear();
}

/* A new lazy array for node in gr (eager mode: evaluated at once). */
PyObject *lazy_result(ModState *st, GraphObject *gr, LoomNode node) {
  ArrayObject *a = array_alloc(st);
  if (!a) return NULL;
  a->lazy = 1;
  a->graph = Py_NewRef((PyObject *)gr);
  a->node = node;
  a->devfree = st->op_devfree;
  a->desc.device = st->op_devfree ? LOOM_DEVICE_HOST : st->op_kind;
  a->desc.device_index = st->op_devfree ? 0 : st->op_index;
  LoomStatus s = loom_node_info(gr->g, node, &a->desc.dtype, &a->desc.ndim, a->desc.shape);
  if (s) {
    Py_DECREF(a);
    return raise_status(st, s);
  }
  /* a constant-only array of one or more dimensions is made on its home device; a 0-d one stays a host
   * constant that fits any device (materialize_many keeps it so) */
  if (st->op_devfree && !gr->trace && a->desc.ndim > 0) home_device(st, &a->desc.device, &a->desc.device_index);
  contiguous_strides(&a->desc);
  if (!gr->trace) {
    pending_link(a);
    if (st->eager && !a->devfree && materialize(st, a) < 0) {
      Py_DECREF(a);
      return NULL;
    }
  }
  return (PyObject *)a;
}

int parse_dtype(PyObject *o, LoomDType *out) {
  long v = PyLong_AsLong(o);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v < 0 || v >= LOOM_DTYPE_COUNT) {
    PyErr_Format(PyExc_TypeError, "dtype code %ld is not a loom dtype", v);
    return -1;
  }
  *out = (LoomDType)v;
  return 0;
}

/* A sequence of ints into out[0..*n) (at most LOOM_MAX_RANK). */
int parse_i64s(PyObject *seq, int64_t *out, int32_t *n, const char *what) {
  PyObject *f = PySequence_Fast(seq, what);
  if (!f) return -1;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(f);
  if (len > LOOM_MAX_RANK) {
    Py_DECREF(f);
    PyErr_Format(PyExc_ValueError, "%s: at most %d dimensions are supported, got %zd", what, LOOM_MAX_RANK, len);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *it = PySequence_Fast_GET_ITEM(f, i);
    if (it == Py_None) out[i] = LOOM_SLICE_NONE;
    else {
      long long v = PyLong_AsLongLong(it);
      if (v == -1 && PyErr_Occurred()) {
        Py_DECREF(f);
        return -1;
      }
      out[i] = v;
    }
  }
  *n = (int32_t)len;
  Py_DECREF(f);
  return 0;
}

/* ---- op functions -------------------------------------------------------------------------------- */
static PyObject *core_unary(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  int op;
  if (nargs != 2 || (op = (int)PyLong_AsLong(args[0])) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "unary(op, x)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args + 1, 1);
  LoomNode x, y;
  if (!gr || node_of(st, gr, args[1], &x) < 0) return NULL;
  LoomStatus s = loom_unary(gr->g, (LoomOp)op, x, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

static PyObject *core_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  int op;
  if (nargs != 3 || (op = (int)PyLong_AsLong(args[0])) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "binary(op, a, b)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args + 1, 2);
  LoomNode a, b, y;
  if (!gr || node_of(st, gr, args[1], &a) < 0 || node_of(st, gr, args[2], &b) < 0) return NULL;
  LoomStatus s = loom_binary(gr->g, (LoomOp)op, a, b, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

static PyObject *core_where(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "where(cond, a, b)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args, 3);
  LoomNode c, a, b, y;
  if (!gr || node_of(st, gr, args[0], &c) < 0 || node_of(st, gr, args[1], &a) < 0 || node_of(st, gr, args[2], &b) < 0)
    return NULL;
  LoomStatus s = loom_where(gr->g, c, a, b, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

static PyObject *core_clip(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "clip(x, lo, hi)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args, 3);
  LoomNode x, lo = -1, hi = -1, y;
  if (!gr || node_of(st, gr, args[0], &x) < 0) return NULL;
  if (args[1] != Py_None && node_of(st, gr, args[1], &lo) < 0) return NULL;
  if (args[2] != Py_None && node_of(st, gr, args[2], &hi) < 0) return NULL;
  LoomStatus s = loom_clip(gr->g, x, lo, hi, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* iota(shape): an int64 array holding its own row-major linear indices, computed by the kernels that
 * read it (no memory; loom_iota). Fits any device, like a constant. */
static PyObject *core_iota(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  int64_t shape[LOOM_MAX_RANK];
  int32_t nd = 0;
  if (nargs != 1 && nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "iota(shape[, like])");
    return NULL;
  }
  if (parse_i64s(args[0], shape, &nd, "iota: shape") < 0) return NULL;
  /* like (an array): built in the graph and on the device an op on `like` would be (a @loom.fuse trace's
   * own graph for a tracer, so the iota is computed in the traced kernels, not a constant input) */
  int like = nargs == 2 && args[1] != Py_None;
  GraphObject *gr = like ? graph_for(st, &args[1], 1) : current_graph(st);
  if (!gr) return NULL;
  if (!like) st->op_devfree = 1;
  LoomNode y;
  LoomStatus s = loom_iota(gr->g, nd, shape, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* const(value, dtype): a strong 0-d constant (NumPy scalars). */
static PyObject *core_const(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDType t;
  if (nargs != 2 || parse_dtype(args[1], &t) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "const(value, dtype)");
    return NULL;
  }
  GraphObject *gr = current_graph(st);
  if (!gr) return NULL;
  st->op_devfree = 1;
  LoomNode y;
  LoomStatus s;
  PyObject *v = args[0];
  if (PyFloat_Check(v)) s = loom_const_f64(gr->g, PyFloat_AS_DOUBLE(v), t, &y);
  else if (PyComplex_Check(v)) {
    double re = PyComplex_RealAsDouble(v), im = PyComplex_ImagAsDouble(v);
    s = loom_const_complex(gr->g, re, im, t, &y); /* a real dtype is a TypeError naming it */
  } else if (PyLong_Check(v)) {
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(v);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
      s = loom_const_u64(gr->g, u, t, &y);
    } else if (overflow < 0) {
      PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for %s", v, dtype_names[t]);
      return NULL;
    } else s = loom_const_i64(gr->g, i, t, &y);
  } else {
    PyErr_SetString(PyExc_TypeError, "const: value must be int, float or complex");
    return NULL;
  }
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

static PyObject *core_cast(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDType t;
  if (nargs != 2 || parse_dtype(args[1], &t) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "cast(x, dtype)");
    return NULL;
  }
  GraphObject *gr = graph_for(st, args, 1);
  LoomNode x, y;
  if (!gr || node_of(st, gr, args[0], &x) < 0) return NULL;
  LoomStatus s = loom_cast(gr->g, x, t, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* movement(kind, x, a, b, c): kind 0 reshape(shape) 1 permute(perm|None) 2 broadcast_to(shape)
 * 3 slice(starts, stops, steps) 4 expand_dims(axis) 5 squeeze(axes|None). Lazy results (a copy's
 * value, never a view): the Python layer makes views of materialized arrays itself. */
static PyObject *core_movement(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "movement(kind, x, a, b, c)");
    return NULL;
  }
  long kind = PyLong_AsLong(args[0]);
  if (kind == -1 && PyErr_Occurred()) return NULL;
  GraphObject *gr = graph_for(st, args + 1, 1);
  LoomNode x, y;
  if (!gr || node_of(st, gr, args[1], &x) < 0) return NULL;
  int64_t v1[LOOM_MAX_RANK], v2[LOOM_MAX_RANK], v3[LOOM_MAX_RANK];
  int32_t n1 = 0, n2 = 0, n3 = 0, ax[LOOM_MAX_RANK];
  LoomStatus s;
  switch (kind) {
  case 0:
  case 2:
    if (parse_i64s(args[2], v1, &n1, "shape") < 0) return NULL;
    s = kind == 0 ? loom_reshape(gr->g, x, n1, v1, &y) : loom_broadcast_to(gr->g, x, n1, v1, &y);
    break;
  case 1:
    if (args[2] == Py_None) s = loom_permute(gr->g, x, NULL, &y);
    else {
      if (parse_i64s(args[2], v1, &n1, "axes") < 0) return NULL;
      LoomDType dt;
      int32_t nd;
      if ((s = loom_node_info(gr->g, x, &dt, &nd, NULL))) return raise_status(st, s);
      if (n1 != nd) {
        PyErr_SetString(PyExc_ValueError, "axes don't match array");
        return NULL;
      }
      for (int i = 0; i < n1; i++) ax[i] = (int32_t)v1[i];
      s = loom_permute(gr->g, x, ax, &y);
    }
    break;
  case 3:
    if (parse_i64s(args[2], v1, &n1, "start") < 0 || parse_i64s(args[3], v2, &n2, "stop") < 0 ||
        parse_i64s(args[4], v3, &n3, "step") < 0)
      return NULL;
    for (int i = 0; i < n3; i++)
      if (v3[i] == LOOM_SLICE_NONE) v3[i] = 1;
    s = loom_slice(gr->g, x, v1, v2, v3, &y);
    break;
  case 4: {
    long a = PyLong_AsLong(args[2]);
    if (a == -1 && PyErr_Occurred()) return NULL;
    s = loom_expand_dims(gr->g, x, (int32_t)a, &y);
    break;
  }
  case 5:
    if (args[2] == Py_None) s = loom_squeeze(gr->g, x, 0, NULL, &y);
    else {
      if (parse_i64s(args[2], v1, &n1, "axis") < 0) return NULL;
      for (int i = 0; i < n1; i++) ax[i] = (int32_t)v1[i];
      s = loom_squeeze(gr->g, x, n1, ax, &y);
    }
    break;
  default: PyErr_SetString(PyExc_ValueError, "movement: unknown kind"); return NULL;
  }
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* reduce(op, x, axes|None, keepdims, dtype|-1) */
static PyObject *core_reduce(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "reduce(op, x, axes, keepdims, dtype)");
    return NULL;
  }
  long op = PyLong_AsLong(args[0]), dt = PyLong_AsLong(args[4]);
  int keep = PyObject_IsTrue(args[3]);
  if (PyErr_Occurred() || keep < 0) return NULL;
  GraphObject *gr = graph_for(st, args + 1, 1);
  LoomNode x, y;
  if (!gr || node_of(st, gr, args[1], &x) < 0) return NULL;
  int64_t v[LOOM_MAX_RANK];
  int32_t n = 0, ax[LOOM_MAX_RANK];
  if (args[2] != Py_None) {
    if (parse_i64s(args[2], v, &n, "axis") < 0) return NULL;
    /* an axis beyond int32 is out of bounds for any rank: INT32_MAX makes the C API say so (a plain cast
     * would wrap 2**32 to axis 0) */
    for (int i = 0; i < n; i++) ax[i] = v[i] < INT32_MIN || v[i] > INT32_MAX ? INT32_MAX : (int32_t)v[i];
  }
  LoomStatus s = loom_reduce_dtype(gr->g, (LoomReduceOp)op, x, n, args[2] == Py_None ? NULL : ax, keep,
                                   dt < 0 ? LOOM_DTYPE_COUNT : (LoomDType)dt, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* scan(op, x, axis, dtype|-1): loom_scan (cumsum, cumprod, ...) */
static PyObject *core_scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "scan(op, x, axis, dtype)");
    return NULL;
  }
  long op = PyLong_AsLong(args[0]), axis = PyLong_AsLong(args[2]), dt = PyLong_AsLong(args[3]);
  if (PyErr_Occurred()) return NULL;
  GraphObject *gr = graph_for(st, args + 1, 1);
  LoomNode x, y;
  if (!gr || node_of(st, gr, args[1], &x) < 0) return NULL;
  if (axis < INT32_MIN || axis > INT32_MAX) axis = INT32_MAX;
  LoomStatus s = loom_scan(gr->g, (LoomReduceOp)op, x, (int32_t)axis, dt < 0 ? LOOM_DTYPE_COUNT : (LoomDType)dt, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* gather(data, idx, axis, mode): loom_gather (take, take_along_axis, integer-array indexing) */
static PyObject *core_gather(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "gather(data, idx, axis, mode)");
    return NULL;
  }
  long axis = PyLong_AsLong(args[2]), mode = PyLong_AsLong(args[3]);
  if (PyErr_Occurred()) return NULL;
  GraphObject *gr = graph_for(st, args, 2);
  LoomNode x, i, y;
  if (!gr || node_of(st, gr, args[0], &x) < 0 || node_of(st, gr, args[1], &i) < 0) return NULL;
  if (axis < INT32_MIN || axis > INT32_MAX) axis = INT32_MAX;
  LoomStatus s = loom_gather(gr->g, x, i, (int32_t)axis, (int32_t)mode, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* scatter(base, idx, values, op): loom_scatter (indexed assignment, put, place, add.at) */
static PyObject *core_scatter(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "scatter(base, idx, values, op)");
    return NULL;
  }
  long op = PyLong_AsLong(args[3]);
  if (PyErr_Occurred()) return NULL;
  GraphObject *gr = graph_for(st, args, 3);
  LoomNode b, i, v, y;
  if (!gr || node_of(st, gr, args[0], &b) < 0 || node_of(st, gr, args[1], &i) < 0 || node_of(st, gr, args[2], &v) < 0)
    return NULL;
  LoomStatus s = loom_scatter(gr->g, b, i, v, (int32_t)op, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* ---- operators: the C slots of loom arrays ----------------------------------------------------------
 * `a + b`, `2.0 * a`, `a < b` ... reach these slots with no Python frame. The operands that need no
 * Python-level conversion are taken at once: loom arrays, and Python bool / float / complex / int (weak,
 * NEP 50) where _ndarray._python_int would leave them as they are (an int in int64's range; as a float
 * for true division by or of an integer or bool array). Anything else (NumPy arrays and scalars, lists,
 * big ints, objects overriding __array_ufunc__, None in ==) goes to the operator's Python method, given
 * by set_operators, which returns NotImplemented where Python should ask the other operand. */
static const LoomOp operator_ops[OPERATOR_COUNT] = {
    LOOM_OP_ADD,         LOOM_OP_SUB,        LOOM_OP_MUL,         LOOM_OP_TRUEDIV,    LOOM_OP_FLOORDIV,
    LOOM_OP_MOD,         LOOM_OP_POW,        LOOM_OP_BITWISE_AND, LOOM_OP_BITWISE_OR, LOOM_OP_BITWISE_XOR,
    LOOM_OP_LEFT_SHIFT,  LOOM_OP_RIGHT_SHIFT, LOOM_OP_LT,         LOOM_OP_LE,         LOOM_OP_GT,
    LOOM_OP_GE,          LOOM_OP_EQ,         LOOM_OP_NE};

/* 1: scalar operand o of op beside loom array arr is a weak constant the fast path takes, its node in *out;
 * 0: not one (the Python method decides); -1: error. */
static int fast_scalar(ModState *st, GraphObject *gr, PyObject *o, LoomOp op, const ArrayObject *arr, LoomNode *out) {
  LoomStatus s;
  if (PyBool_Check(o)) s = loom_weak_bool(gr->g, o == Py_True, out);
  else if (PyFloat_CheckExact(o)) s = loom_weak_float(gr->g, PyFloat_AS_DOUBLE(o), out);
  else if (PyComplex_CheckExact(o)) s = loom_weak_complex(gr->g, PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o), out);
  else if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow) return 0; /* past int64: _python_int's rules */
    LoomDType t = arr->desc.dtype;
    int integral = t == LOOM_BOOL || (t >= LOOM_INT8 && t <= LOOM_UINT64);
    /* NumPy's integer true division divides by the int as a float64 */
    s = op == LOOM_OP_TRUEDIV && integral ? loom_weak_float(gr->g, (double)v, out) : loom_weak_int(gr->g, v, out);
  } else return 0;
  if (s) {
    raise_status(st, s);
    return -1;
  }
  return 1;
}

/* Whether operand o takes the fast path: a loom array, or a scalar fast_scalar takes (an int only within
 * int64's range: past it, _python_int's rules in Python). */
static int fast_kind(ModState *st, PyObject *o) {
  if (PyLong_CheckExact(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) PyErr_Clear(); /* the slow path reports it */
    return !overflow;
  }
  return PyBool_Check(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o) || is_array(st, o);
}

/* self OP other (reflected: other OP self), self a loom array. */
static PyObject *operator_call(ModState *st, int slot, PyObject *self, PyObject *other, int reflected) {
  if (!fast_kind(st, other)) {
    if (!st->operators) Py_RETURN_NOTIMPLEMENTED;
    PyObject *m = PyTuple_GET_ITEM(st->operators, 2 * slot + reflected);
    if (m == Py_None) Py_RETURN_NOTIMPLEMENTED;
    PyObject *args[2] = {self, other};
    return PyObject_Vectorcall(m, args, 2, NULL);
  }
  LoomOp op = operator_ops[slot];
  PyObject *ops[2] = {self, other};
  GraphObject *gr = graph_for(st, ops, 2);
  if (!gr) return NULL;
  LoomNode a, b, y;
  if (node_of(st, gr, self, &a) < 0) return NULL;
  if (is_array(st, other)) {
    if (node_of(st, gr, other, &b) < 0) return NULL;
  } else {
    int r = fast_scalar(st, gr, other, op, (ArrayObject *)self, &b);
    if (r < 0) return NULL;
    if (r == 0) Py_RETURN_NOTIMPLEMENTED; /* fast_kind let it through: cannot happen */
  }
  LoomStatus s = reflected ? loom_binary(gr->g, op, b, a, &y) : loom_binary(gr->g, op, a, b, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* The binary slot: v OP w where v or w is a loom array (Python calls one slot for both when they share
 * it, so the reflected case is tried here, as CPython's own slots do for Python methods). */
PyObject *array_binary_operator(int slot, PyObject *v, PyObject *w) {
  ModState *st = array_state(v);
  if (!st) {
    st = array_state(w);
    if (!st) Py_RETURN_NOTIMPLEMENTED;
    return operator_call(st, slot, w, v, 1);
  }
  PyObject *r = operator_call(st, slot, v, w, 0);
  if (r != Py_NotImplemented || Py_TYPE(w) == Py_TYPE(v) || !array_state(w)) return r;
  Py_DECREF(r);
  return operator_call(st, slot, w, v, 1);
}

/* a ** b. NumPy's `a ** 2` is np.square(a) (a fast path of ndarray.__pow__), so a bool array gives int8
 * where np.power(a, 2) gives int64; bool ** True has the same values (0, 1) through power's int8 loop. */
PyObject *array_power_operator(PyObject *v, PyObject *w) {
  /* a ** 0.5 of a float array is np.sqrt(a) (the same fast path): float16's power computes powf, whose
   * -inf ** 0.5 is +inf and -0.0 ** 0.5 is +0.0, where sqrt gives NaN and -0.0 */
  if (PyFloat_Check(w) && PyFloat_AS_DOUBLE(w) == 0.5 && array_state(v) &&
      ((ArrayObject *)v)->desc.dtype == LOOM_FLOAT16) {
    ModState *st = array_state(v);
    GraphObject *gr = graph_for(st, &v, 1);
    LoomNode n, y;
    if (!gr || node_of(st, gr, v, &n) < 0) return NULL;
    LoomStatus s = loom_unary(gr->g, LOOM_OP_SQRT, n, &y);
    return s ? raise_status(st, s) : lazy_result(st, gr, y);
  }
  if (PyLong_CheckExact(w) && array_state(v) && ((ArrayObject *)v)->desc.dtype == LOOM_BOOL) {
    int overflow = 0;
    long long e = PyLong_AsLongLongAndOverflow(w, &overflow);
    if (e == -1 && PyErr_Occurred()) return NULL;
    if (e == 2 && !overflow) return array_binary_operator(OPERATOR_POW, v, Py_True);
  }
  return array_binary_operator(OPERATOR_POW, v, w);
}

PyObject *array_compare_operator(PyObject *self, PyObject *other, int cmp) {
  static const int slots[6] = {[Py_LT] = OPERATOR_LT, [Py_LE] = OPERATOR_LE, [Py_EQ] = OPERATOR_EQ,
                               [Py_NE] = OPERATOR_NE, [Py_GT] = OPERATOR_GT, [Py_GE] = OPERATOR_GE};
  ModState *st = array_state(self);
  if (!st || cmp < 0 || cmp > 5) Py_RETURN_NOTIMPLEMENTED;
  return operator_call(st, slots[cmp], self, other, 0);
}

/* -x, abs(x), ~x: the node at once, except for a materialized Fortran-ordered array of 2+ dimensions, whose
 * result the ufunc (order="K") makes Fortran-ordered too: the Python method then. */
PyObject *array_unary_operator(int which, PyObject *x) {
  static const LoomOp ops[UNARY_COUNT] = {LOOM_OP_NEG, LOOM_OP_ABS, LOOM_OP_BITWISE_NOT};
  ModState *st = array_state(x);
  if (!st) Py_RETURN_NOTIMPLEMENTED;
  ArrayObject *a = (ArrayObject *)x;
  if (!a->lazy && a->desc.ndim > 1 && !is_c_contiguous(&a->desc)) {
    if (!st->operators) Py_RETURN_NOTIMPLEMENTED;
    return PyObject_CallOneArg(PyTuple_GET_ITEM(st->operators, 2 * OPERATOR_COUNT + which), x);
  }
  GraphObject *gr = graph_for(st, &x, 1);
  LoomNode n, y;
  if (!gr || node_of(st, gr, x, &n) < 0) return NULL;
  LoomStatus s = loom_unary(gr->g, ops[which], n, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* set_operators(methods): the Python methods the slots fall back to: forward and reflected per binary
 * operator in OPERATOR_* order (None where there is none), then one per unary operator (UNARY_*). */
static PyObject *core_set_operators(PyObject *module, PyObject *arg) {
  MODSTATE;
  if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) != 2 * OPERATOR_COUNT + UNARY_COUNT) {
    PyErr_Format(PyExc_TypeError, "set_operators: a tuple of %d methods", 2 * OPERATOR_COUNT + UNARY_COUNT);
    return NULL;
  }
  Py_XSETREF(st->operators, Py_NewRef(arg));
  Py_RETURN_NONE;
}

PyMethodDef ops_functions[] = {
    {"set_operators", (PyCFunction)core_set_operators, METH_O, "the operators' Python fallbacks"},
    FASTF(unary), FASTF(binary), FASTF(where), FASTF(clip), FASTF(const), FASTF(iota), FASTF(cast), FASTF(movement),
    FASTF(reduce), FASTF(scan), FASTF(gather), FASTF(scatter),
    {NULL}};
