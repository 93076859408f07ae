/* SPDX-License-Identifier: Apache-2.0 */
/* fuse.c: @loom.fuse in C: trace graphs and placeholders for tracing, FuseEntry (one traced
 * signature) and Fused (the base of loom.Fusion), whose tp_call is the per-call fast path.
 */
#include "core.h"

/* ---- @fuse support --------------------------------------------------------------------------------- */
static PyObject *core_trace_graph(PyObject *module, PyObject *unused) {
  MODSTATE;
  return (PyObject *)graph_new(st, 1);
}

/* placeholder(graph, arr, i): a tracer for argument i with arr's dtype, shape and strides. Its data
 * pointer is a distinct fake address so that no two placeholders share an input; fuse_run rebinds
 * every placeholder before each evaluation. */
static PyObject *core_placeholder(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3 || !PyObject_TypeCheck(args[0], st->graph_type) || !is_array(st, args[1])) {
    PyErr_SetString(PyExc_TypeError, "placeholder(graph, array, index)");
    return NULL;
  }
  GraphObject *gr = (GraphObject *)args[0];
  ArrayObject *a = (ArrayObject *)args[1];
  long i = PyLong_AsLong(args[2]);
  if (i == -1 && PyErr_Occurred()) return NULL;
  LoomArray d = a->desc;
  if (a->lazy) contiguous_strides(&d);
  d.data = (void *)(uintptr_t)(64 * (uintptr_t)(i + 1));
  st->op_devfree = 0;
  st->op_kind = d.device;
  st->op_index = d.device_index;
  LoomNode x;
  LoomStatus s = loom_input(gr->g, &d, &x);
  return s ? raise_status(st, s) : lazy_result(st, gr, x);
}

/* node_of(tracer) -> int */
static PyObject *core_tracer_node(PyObject *module, PyObject *arg) {
  MODSTATE;
  if (!is_array(st, arg) || !((ArrayObject *)arg)->lazy) {
    PyErr_SetString(PyExc_TypeError, "tracer_node: not a lazy array");
    return NULL;
  }
  return PyLong_FromLong(((ArrayObject *)arg)->node);
}

/* ---- @fuse per-call fast path ------------------------------------------------------------------------
 * A FuseEntry is one traced signature in C form: its trace graph, which argument feeds each
 * placeholder, the output nodes and the result layout (a constant or the next output per slot).
 * Fused (the base of loom.Fusion) is callable: it computes the call's signature key in C from the
 * argument tuple (per argument a tag and, for arrays, dtype, rank, device and shape; for exact
 * bool/int/float scalars the value, which the trace folds in as a constant), compares it with the
 * key of the previous call (memcmp), else looks it up in the dict `_cache` (bytes key), rebinds every
 * placeholder in one loom_input_rebind_many, runs ONE loom_eval for all outputs and wraps the
 * results. NumPy arguments are read in place through the buffer protocol (no wrapper objects) and
 * their results come back as NumPy arrays. Whatever C does not key (keyword arguments, tracers of an
 * enclosing trace, NumPy scalars, int/float subclasses, out-of-range ints, non-native byte order,
 * more than FUSE_MAX_ARGS arguments, no array at all) and every miss goes to the Python method
 * _miss(args, key, kwargs), which traces, stores the entry and runs it through fuse_exec. */
enum { FUSE_MAX_ARGS = 32, FUSE_MAX_NP = 8, FUSE_KEY_CAP = 1024, FUSE_STACK_OUTS = 4 };

typedef struct {
  PyObject_HEAD
  PyObject *graph;    /* the trace Graph */
  Py_ssize_t nargs;   /* argument count of the signature */
  Py_ssize_t nin, nout; /* nout: result nodes, then the nwrite written-argument nodes */
  Py_ssize_t nwrite;
  int is_tuple;
  int32_t *in_arg;    /* [nin] argument index bound to placeholder k */
  LoomNode *in_node;  /* [nin] placeholder nodes */
  LoomNode *out_node; /* [nout] output nodes */
  int32_t *write_arg; /* [nwrite] the argument that out_node[nout - nwrite + w] is written into */
  PyObject *slots;    /* tuple: None = the next output node, (value,) = a constant result */
} FuseEntryObject;

static void fuse_entry_dealloc(FuseEntryObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyMem_Free(self->in_arg);
  PyMem_Free(self->in_node);
  PyMem_Free(self->out_node);
  PyMem_Free(self->write_arg);
  Py_XDECREF(self->graph);
  Py_XDECREF(self->slots);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot fuse_entry_slots[] = {{Py_tp_dealloc, fuse_entry_dealloc}, {0, NULL}};
PyType_Spec fuse_entry_spec = {"loom._core.FuseEntry", sizeof(FuseEntryObject), 0, Py_TPFLAGS_DEFAULT,
                                      fuse_entry_slots};

/* Reads a tuple of ints (each in [lo, hi]) into a new PyMem array; 0 or -1 with an exception. */
static int int_tuple(PyObject *t, int32_t **out, long lo, long hi, const char *what) {
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  *out = PyMem_Malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
  if (!*out) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    long v = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v > hi) {
      PyErr_Format(PyExc_ValueError, "fuse_entry: %s %ld is out of range", what, v);
      return -1;
    }
    (*out)[i] = (int32_t)v;
  }
  return 0;
}

/* fuse_entry(graph, in_args, in_nodes, out_nodes, slots, is_tuple, nargs, write_args) -> FuseEntry.
 * in_args[k] is the argument that placeholder in_nodes[k] reads; slots has one item per result: None
 * (the next of out_nodes) or a 1-tuple holding a constant result. write_args (optional) names the
 * arguments the traced function updated in place (x += y, out=x, x[...] = y): the last
 * len(write_args) of out_nodes are their new values, which each run writes into those arguments'
 * memory (CuPy's fusion semantics). */
static PyObject *core_fuse_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if ((nargs != 7 && nargs != 8) || !PyObject_TypeCheck(args[0], st->graph_type) || !PyTuple_Check(args[1]) ||
      !PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) || !PyTuple_Check(args[4]) ||
      (nargs == 8 && !PyTuple_Check(args[7])) || PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
    PyErr_SetString(PyExc_TypeError,
                    "fuse_entry(graph, in_args, in_nodes, out_nodes, slots, is_tuple, nargs[, write_args])");
    return NULL;
  }
  PyObject *writes = nargs == 8 ? args[7] : NULL;
  Py_ssize_t nwrite = writes ? PyTuple_GET_SIZE(writes) : 0;
  int is_tuple = PyObject_IsTrue(args[5]);
  Py_ssize_t na = PyLong_AsSsize_t(args[6]);
  if (is_tuple < 0 || (na == -1 && PyErr_Occurred())) return NULL;
  Py_ssize_t nout = PyTuple_GET_SIZE(args[3]), nodes = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[4]); i++) {
    PyObject *s = PyTuple_GET_ITEM(args[4], i);
    if (s == Py_None) nodes++;
    else if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) != 1) {
      PyErr_SetString(PyExc_TypeError, "fuse_entry: a slot is None or a 1-tuple (constant,)");
      return NULL;
    }
  }
  if (nodes + nwrite != nout || (!is_tuple && PyTuple_GET_SIZE(args[4]) > 1)) {
    PyErr_SetString(PyExc_ValueError, "fuse_entry: slots do not match the output nodes");
    return NULL;
  }
  FuseEntryObject *e = (FuseEntryObject *)st->fuse_entry_type->tp_alloc(st->fuse_entry_type, 0);
  if (!e) return NULL;
  e->graph = Py_NewRef(args[0]);
  e->slots = Py_NewRef(args[4]);
  e->nargs = na;
  e->is_tuple = is_tuple;
  e->nin = PyTuple_GET_SIZE(args[1]);
  e->nout = nout;
  e->nwrite = nwrite;
  int32_t nn = loom_graph_node_count(((GraphObject *)args[0])->g);
  if (int_tuple(args[1], &e->in_arg, 0, (long)na - 1, "argument index") < 0 ||
      int_tuple(args[2], &e->in_node, 0, (long)nn - 1, "input node") < 0 ||
      int_tuple(args[3], &e->out_node, 0, (long)nn - 1, "output node") < 0 ||
      (writes && int_tuple(writes, &e->write_arg, 0, (long)na - 1, "written argument index") < 0)) {
    Py_DECREF(e);
    return NULL;
  }
  return (PyObject *)e;
}

/* Runs entry e: desc[j] describes argument j (NULL for scalars; arrays already materialized), objs[j]
 * is the argument itself; readonly[j] (readonly may be NULL) marks a NumPy argument whose buffer is
 * read-only. */
static PyObject *fuse_exec_entry(ModState *st, FuseEntryObject *e, const LoomArray *const *desc,
                                 PyObject *const *objs, Py_ssize_t nargs, int numpy_out,
                                 const unsigned char *readonly) {
  if (nargs != e->nargs) {
    PyErr_Format(PyExc_TypeError, "@loom.fuse: this signature takes %zd arguments, got %zd", e->nargs, nargs);
    return NULL;
  }
  Py_ssize_t nres = e->nout - e->nwrite;
  for (Py_ssize_t w = 0; w < e->nwrite; w++) { /* arguments the function updates in place */
    int32_t j = e->write_arg[w];
    if (!desc[j]) {
      PyErr_Format(PyExc_TypeError, "@loom.fuse: argument %d must be an array for this signature", (int)j);
      return NULL;
    }
    if (readonly && readonly[j]) {
      PyErr_Format(PyExc_ValueError, "@loom.fuse: argument %d is updated in place but is read-only", (int)j);
      return NULL;
    }
    if (is_array(st, objs[j]) && before_write(st, ((ArrayObject *)objs[j])->buffer) < 0) return NULL;
  }
  GraphObject *gr = (GraphObject *)e->graph;
  const LoomArray *ins[FUSE_MAX_ARGS];
  const LoomArray **inp = e->nin <= FUSE_MAX_ARGS ? ins : PyMem_Malloc(sizeof(LoomArray *) * (size_t)e->nin);
  if (!inp) return PyErr_NoMemory();
  for (Py_ssize_t k = 0; k < e->nin; k++) {
    inp[k] = desc[e->in_arg[k]];
    if (!inp[k]) {
      if (inp != ins) PyMem_Free(inp);
      PyErr_Format(PyExc_TypeError, "@loom.fuse: argument %d must be an array for this signature", (int)e->in_arg[k]);
      return NULL;
    }
  }
  LoomStatus s = loom_input_rebind_many(gr->g, (int32_t)e->nin, e->in_node, inp);
  if (inp != ins) PyMem_Free(inp);
  if (s) return raise_status(st, s);
  LoomArray outs_stack[FUSE_STACK_OUTS];
  LoomArray *outs = outs_stack;
  if (e->nout > FUSE_STACK_OUTS) outs = PyMem_Calloc((size_t)e->nout, sizeof(LoomArray));
  else memset(outs_stack, 0, sizeof(LoomArray) * (size_t)e->nout);
  if (!outs) return PyErr_NoMemory();
  for (Py_ssize_t w = 0; w < e->nwrite; w++) outs[nres + w] = *desc[e->write_arg[w]]; /* written in place */
  PyObject *res = NULL;
  if (e->nout > 0) {
    s = loom_eval(gr->g, (int32_t)e->nout, e->out_node, outs);
    if (s) {
      raise_status(st, s);
      goto done;
    }
  }
  Py_ssize_t nslots = PyTuple_GET_SIZE(e->slots), q = 0;
  if (e->is_tuple && !(res = PyTuple_New(nslots))) goto free_rest;
  for (Py_ssize_t i = 0; i < nslots; i++) {
    PyObject *slot = PyTuple_GET_ITEM(e->slots, i), *v;
    if (slot == Py_None) v = wrap_result(st, &outs[q++], numpy_out);
    else {
      v = PyTuple_GET_ITEM(slot, 0);
      v = numpy_out && is_array(st, v) ? numpy_of(st, v) : Py_NewRef(v);
    }
    if (!v) {
      Py_CLEAR(res);
      goto free_rest;
    }
    if (e->is_tuple) PyTuple_SET_ITEM(res, i, v);
    else res = v;
  }
  if (!res) res = Py_NewRef(Py_None);
  goto done;
free_rest:
  for (; q < nres; q++) loom_array_free(ctx_of(st), &outs[q]);
done:
  if (outs != outs_stack) PyMem_Free(outs);
  return res;
}

/* fuse_exec(entry, vals, numpy_out[, readonly]): runs entry on vals (one per argument: a loom array, or
 * None for a scalar folded into the trace); readonly: the indices of the arguments that must not be
 * written (read-only NumPy arrays); pending arrays are evaluated first. */
static PyObject *core_fuse_exec(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if ((nargs != 3 && nargs != 4) || !PyObject_TypeCheck(args[0], st->fuse_entry_type) || !PyTuple_Check(args[1]) ||
      (nargs == 4 && !PyTuple_Check(args[3]))) {
    PyErr_SetString(PyExc_TypeError, "fuse_exec(entry, vals, numpy_out[, readonly])");
    return NULL;
  }
  int numpy_out = PyObject_IsTrue(args[2]);
  if (numpy_out < 0) return NULL;
  PyObject *vals = args[1];
  Py_ssize_t n = PyTuple_GET_SIZE(vals);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = PyTuple_GET_ITEM(vals, i);
    if (v != Py_None && !is_array(st, v)) {
      PyErr_SetString(PyExc_TypeError, "fuse_exec: values must be loom arrays or None");
      return NULL;
    }
    if (v != Py_None && ((ArrayObject *)v)->lazy && ((GraphObject *)((ArrayObject *)v)->graph)->trace)
      return trace_error();
  }
  if (materialize_many(st, PySequence_Fast_ITEMS(vals), n) < 0) return NULL;
  const LoomArray *stack[FUSE_MAX_ARGS];
  const LoomArray **desc = n <= FUSE_MAX_ARGS ? stack : PyMem_Malloc(sizeof(LoomArray *) * (size_t)n);
  unsigned char *ro = PyMem_Calloc((size_t)(n ? n : 1), 1);
  PyObject *r = NULL;
  if (!desc || !ro) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = PyTuple_GET_ITEM(vals, i);
    desc[i] = v == Py_None ? NULL : &((ArrayObject *)v)->desc;
  }
  for (Py_ssize_t i = 0; nargs == 4 && i < PyTuple_GET_SIZE(args[3]); i++) {
    Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[3], i));
    if (j == -1 && PyErr_Occurred()) goto done;
    if (j >= 0 && j < n) ro[j] = 1;
  }
  r = fuse_exec_entry(st, (FuseEntryObject *)args[0], desc, PySequence_Fast_ITEMS(vals), n, numpy_out, ro);
done:
  if (desc != stack) PyMem_Free(desc);
  PyMem_Free(ro);
  return r;
}

/* fuse_configure(numpy.ndarray, numpy.asarray): what the fast path recognizes and converts with. */
static PyObject *core_fuse_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !PyType_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "fuse_configure(numpy.ndarray, numpy.asarray)");
    return NULL;
  }
  Py_XSETREF(st->np_ndarray, Py_NewRef(args[0]));
  Py_XSETREF(st->np_asarray, Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

typedef struct {
  PyObject_HEAD
  PyObject *func;       /* the traced Python function */
  PyObject *cache;      /* dict: signature key -> FuseEntry */
  PyObject *last_key;   /* bytes key of the previous fast call, or NULL */
  PyObject *last_entry; /* its FuseEntry */
} FusedObject;

static int fused_traverse(FusedObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->func);
  Py_VISIT(self->cache);
  Py_VISIT(self->last_entry);
  Py_VISIT(Py_TYPE(self));
  return 0;
}
static int fused_clear(FusedObject *self) {
  Py_CLEAR(self->func);
  Py_CLEAR(self->cache);
  Py_CLEAR(self->last_key);
  Py_CLEAR(self->last_entry);
  return 0;
}
static void fused_dealloc(FusedObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  fused_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

/* Fused(func) */
static int fused_init(FusedObject *self, PyObject *args, PyObject *kwds) {
  PyObject *func;
  if ((kwds && PyDict_GET_SIZE(kwds)) || !PyArg_ParseTuple(args, "O:Fused", &func)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "Fused(func) takes no keyword arguments");
    return -1;
  }
  if (!PyCallable_Check(func)) {
    PyErr_Format(PyExc_TypeError, "@loom.fuse needs a callable, got %.100s", Py_TYPE(func)->tp_name);
    return -1;
  }
  PyObject *cache = PyDict_New();
  if (!cache) return -1;
  Py_XSETREF(self->func, Py_NewRef(func));
  Py_XSETREF(self->cache, cache);
  Py_CLEAR(self->last_key);
  Py_CLEAR(self->last_entry);
  return 0;
}

static PyObject *fused_clear_cache(FusedObject *self, PyObject *unused) {
  if (self->cache) PyDict_Clear(self->cache);
  Py_CLEAR(self->last_key);
  Py_CLEAR(self->last_entry);
  Py_RETURN_NONE;
}

typedef struct {
  unsigned char b[FUSE_KEY_CAP];
  size_t n;
} FuseKey;
static int key_put(FuseKey *k, const void *p, size_t n) {
  if (k->n + n > FUSE_KEY_CAP) return -1;
  memcpy(k->b + k->n, p, n);
  k->n += n;
  return 0;
}
/* tag, dtype, rank, device kind, device index, shape */
static int key_array(FuseKey *k, char tag, const LoomArray *d) {
  unsigned char h[3] = {(unsigned char)tag, (unsigned char)d->dtype, (unsigned char)d->ndim};
  int32_t dev[2] = {(int32_t)d->device, d->device_index};
  if (key_put(k, h, sizeof h) < 0 || key_put(k, dev, sizeof dev) < 0) return -1;
  return key_put(k, d->shape, sizeof(int64_t) * (size_t)d->ndim);
}

/* The Python slow path: self._miss(args, key or None, kwargs or None). */
static PyObject *fused_miss(FusedObject *self, PyObject *args, PyObject *key, PyObject *kwargs) {
  return PyObject_CallMethod((PyObject *)self, "_miss", "OOO", args, key ? key : Py_None,
                             kwargs ? kwargs : Py_None);
}

static PyObject *fused_call(FusedObject *self, PyObject *args, PyObject *kwargs) {
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if ((kwargs && PyDict_GET_SIZE(kwargs)) || n > FUSE_MAX_ARGS || !self->cache || !st->np_ndarray)
    return fused_miss(self, args, NULL, kwargs);
  FuseKey key;
  key.n = 0;
  Py_buffer views[FUSE_MAX_NP];
  LoomArray npdesc[FUSE_MAX_NP];
  const LoomArray *desc[FUSE_MAX_ARGS];
  int nviews = 0, numpy_in = 0, any_array = 0, any_lazy = 0, fast = 1;
  unsigned char readonly[FUSE_MAX_ARGS] = {0}; /* NumPy argument i is read-only */
  PyObject *res = NULL;
  for (Py_ssize_t i = 0; fast && i < n; i++) {
    PyObject *o = PyTuple_GET_ITEM(args, i);
    desc[i] = NULL;
    if (is_array(st, o)) {
      ArrayObject *a = (ArrayObject *)o;
      if (a->lazy && ((GraphObject *)a->graph)->trace) fast = 0; /* inside another trace: inline */
      else if (key_array(&key, 'A', &a->desc) < 0) fast = 0;
      desc[i] = &a->desc;
      any_lazy |= a->lazy;
      any_array = 1;
    } else if (PyObject_TypeCheck(o, (PyTypeObject *)st->np_ndarray)) {
      if (nviews == FUSE_MAX_NP) {
        fast = 0;
        break;
      }
      Py_buffer *v = &views[nviews];
      if (PyObject_GetBuffer(o, v, PyBUF_STRIDES | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyErr_Clear(); /* read-only: fine unless the function updates it in place (fuse_exec_entry) */
        if (PyObject_GetBuffer(o, v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
          PyErr_Clear(); /* e.g. object dtype: the slow path raises the right error */
          fast = 0;
          break;
        }
        readonly[i] = 1;
      }
      nviews++;
      LoomArray *d = &npdesc[nviews - 1];
      d->data = v->buf;
      d->device = LOOM_DEVICE_HOST;
      d->device_index = 0;
      d->ndim = v->ndim;
      if (v->ndim > LOOM_MAX_RANK || v->itemsize <= 0 || format_dtype(v->format, (size_t)v->itemsize, &d->dtype) < 0 ||
          loom_dtype_size(d->dtype) != (size_t)v->itemsize) {
        fast = 0;
        break;
      }
      for (int j = 0; j < v->ndim; j++) {
        d->shape[j] = v->shape[j];
        if (v->strides[j] % v->itemsize) fast = 0;
        d->strides[j] = v->strides[j] / v->itemsize;
      }
      if (fast && key_array(&key, 'N', d) < 0) fast = 0;
      desc[i] = d;
      numpy_in = any_array = 1;
    } else if (PyFloat_CheckExact(o)) {
      double x = PyFloat_AS_DOUBLE(o);
      if (key_put(&key, "f", 1) < 0 || key_put(&key, &x, sizeof x) < 0) fast = 0;
    } else if (PyBool_Check(o)) {
      unsigned char t[2] = {'b', o == Py_True};
      if (key_put(&key, t, 2) < 0) fast = 0;
    } else if (PyLong_CheckExact(o)) {
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        fast = 0;
      } else if (key_put(&key, "i", 1) < 0 || key_put(&key, &x, sizeof x) < 0) fast = 0;
    } else fast = 0; /* NumPy scalars, subclasses, unsupported types: the Python path decides */
  }
  if (!fast || !any_array) {
    for (int v = 0; v < nviews; v++) PyBuffer_Release(&views[v]);
    return fused_miss(self, args, NULL, NULL);
  }
  PyObject *entry;
  if (self->last_key && (size_t)PyBytes_GET_SIZE(self->last_key) == key.n &&
      memcmp(PyBytes_AS_STRING(self->last_key), key.b, key.n) == 0) {
    entry = Py_NewRef(self->last_entry);
  } else {
    PyObject *kb = PyBytes_FromStringAndSize((const char *)key.b, (Py_ssize_t)key.n);
    if (!kb) goto out;
    entry = PyDict_GetItemWithError(self->cache, kb); /* borrowed */
    if (!entry) {
      if (PyErr_Occurred()) {
        Py_DECREF(kb);
        goto out;
      }
      for (int v = 0; v < nviews; v++) PyBuffer_Release(&views[v]);
      nviews = 0;
      res = fused_miss(self, args, kb, NULL);
      Py_DECREF(kb);
      return res;
    }
    if (!PyObject_TypeCheck(entry, st->fuse_entry_type)) {
      Py_DECREF(kb);
      PyErr_SetString(PyExc_TypeError, "@loom.fuse: the signature cache holds a value that is not a FuseEntry");
      goto out;
    }
    Py_INCREF(entry);
    Py_XSETREF(self->last_key, kb);
    Py_XSETREF(self->last_entry, Py_NewRef(entry));
  }
  if (!any_lazy || materialize_many(st, PySequence_Fast_ITEMS(args), n) == 0)
    res = fuse_exec_entry(st, (FuseEntryObject *)entry, desc, PySequence_Fast_ITEMS(args), n, numpy_in, readonly);
  Py_DECREF(entry);
out:
  for (int v = 0; v < nviews; v++) PyBuffer_Release(&views[v]);
  return res;
}

static PyMethodDef fused_methods[] = {
    {"clear_cache", (PyCFunction)fused_clear_cache, METH_NOARGS, "forget every traced signature"}, {NULL}};
static PyMemberDef fused_members[] = {
    {"func", T_OBJECT, offsetof(FusedObject, func), READONLY, "the traced function"},
    {"_cache", T_OBJECT, offsetof(FusedObject, cache), READONLY, "signature key -> FuseEntry"},
    {NULL}};
static PyType_Slot fused_slots[] = {{Py_tp_dealloc, fused_dealloc}, {Py_tp_traverse, fused_traverse},
                                    {Py_tp_clear, fused_clear},     {Py_tp_init, fused_init},
                                    {Py_tp_call, fused_call},       {Py_tp_methods, fused_methods},
                                    {Py_tp_members, fused_members}, {Py_tp_new, PyType_GenericNew},
                                    {0, NULL}};
PyType_Spec fused_spec = {"loom._core.Fused", sizeof(FusedObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, fused_slots};

PyMethodDef fuse_functions[] = {
    FASTF(placeholder), FASTF(fuse_entry), FASTF(fuse_exec), FASTF(fuse_configure),
    {"trace_graph", (PyCFunction)core_trace_graph, METH_NOARGS, NULL},
    {"tracer_node", (PyCFunction)core_tracer_node, METH_O, NULL},
    {NULL}};
