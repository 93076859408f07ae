/* _core.c: the CPython extension behind the `loom` package (loom._core).
 *
 * Approach. PEP 489 multi-phase init; everything lives in per-module state (ModState), no C globals.
 * Four heap types for arrays:
 *   Context  owns the LoomContext; Buffers and Graphs hold a reference, so the context outlives them
 *            even when the module is torn down first.
 *   Buffer   owns array memory: aligned_alloc'ed, allocated by loom_eval (freed with loom_array_free),
 *            a Py_buffer imported from another object, or a DLPack tensor imported from a capsule.
 *   Graph    owns a LoomGraph, the set of Buffers its inputs read (kept alive until the graph dies)
 *            and weak references to its pending arrays. A "trace" graph belongs to @loom.fuse.
 *   Array    (loom.ndarray's base) is materialized (a Buffer plus a LoomArray descriptor: a view
 *            anywhere inside it) or lazy (a Graph plus a LoomNode).
 * Two more serve @loom.fuse: FuseEntry (one traced signature: trace graph, placeholder bindings,
 * output nodes, result layout) and Fused (the base of loom.Fusion), whose tp_call is the per-call
 * fast path: signature key from the argument tuple, cache lookup, one rebind and one loom_eval.
 * Ops build nodes in the module's current graph (or in a trace graph when an operand is a tracer).
 * A materialized operand enters as loom_input; a lazy operand of an older graph is evaluated first.
 * Observation (buffer export, DLPack) and `materialize`/`eval` evaluate pending arrays, several at
 * once in one loom_eval. When the current graph passes a node bound its live pending arrays are
 * evaluated and a new graph starts. Before a write into a Buffer that the current graph reads, every
 * pending array of that graph is evaluated, so no pending value ever changes.
 * The GIL is held during loom_eval: one graph must not be used by two threads at once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

/* ---- DLPack (the subset of dlpack.h v0.8 that the legacy "dltensor" capsule uses) --------------- */
typedef struct {
  int32_t device_type; /* kDLCPU = 1 */
  int32_t device_id;
} DLDevice;
typedef struct {
  uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6 */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL = C-contiguous */
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
enum { DL_CPU = 1, DL_CUDA = 2, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BOOL = 6 };

/* The stream, event and pool API may be missing from an older libloom: weak references let the
 * extension load anyway; the wrappers below raise NotImplementedError when a symbol is absent. */
#pragma weak loom_stream_create
#pragma weak loom_stream_destroy
#pragma weak loom_stream_synchronize
#pragma weak loom_stream_use
#pragma weak loom_stream_handle
#pragma weak loom_event_create
#pragma weak loom_event_destroy
#pragma weak loom_event_record
#pragma weak loom_event_synchronize
#pragma weak loom_event_elapsed_ms
#pragma weak loom_pool_stats
#pragma weak loom_pool_free_all_blocks

/* ---- module state and objects -------------------------------------------------------------------- */
typedef struct {
  PyObject *ctx_obj;           /* Context */
  PyTypeObject *context_type, *buffer_type, *graph_type, *array_type;
  PyObject *array_cls;         /* the Python subclass loom.ndarray (set by the package), or NULL */
  PyObject *graph;             /* current Graph, or NULL */
  PyObject *axis_error;        /* numpy.exceptions.AxisError when set, else NULL (ValueError) */
  int eager;
  int32_t bound;               /* node bound of a graph */
  /* device of the operands of the op being built (set by graph_for, read by lazy_result) */
  int op_devfree;              /* 1: no operand has a device (constants only) */
  LoomDeviceKind op_kind;
  int32_t op_index;
  PyTypeObject *handle_type;
  PyTypeObject *fuse_entry_type, *fused_type; /* @loom.fuse fast path */
  PyObject *np_ndarray, *np_asarray;          /* numpy.ndarray and numpy.asarray (fuse_configure) */
  PyTypeObject *uk_type, *rawmod_type, *rawfn_type; /* user kernels and raw kernels */
  PyObject *uk_convert, *uk_stream;           /* kernel arguments -> loom arrays, stream= -> spec (uk_configure) */
} ModState;

typedef struct {
  PyObject_HEAD
  LoomContext *ctx;
} ContextObject;

enum { BUF_ALIGNED = 0, BUF_LOOM, BUF_PYBUF, BUF_DLPACK, BUF_OWNER };
typedef struct {
  PyObject_HEAD
  PyObject *ctx_obj;
  int kind;
  void *ptr;        /* BUF_ALIGNED */
  LoomArray la;     /* BUF_LOOM */
  Py_buffer view;   /* BUF_PYBUF */
  DLManagedTensor *mt; /* BUF_DLPACK */
  PyObject *owner;  /* BUF_OWNER: the object owning foreign (e.g. CUDA) memory */
} BufferObject;

typedef struct {
  PyObject_HEAD
  PyObject *ctx_obj;
  LoomGraph *g;
  PyObject *keep;    /* set of Buffers read by inputs */
  PyObject *pending; /* list of weakrefs to lazy Arrays */
  int trace;
} GraphObject;

typedef struct {
  PyObject_HEAD
  int lazy;
  LoomArray desc;            /* dtype, ndim, shape always; data and strides when materialized */
  Py_ssize_t bshape[LOOM_MAX_RANK], bstrides[LOOM_MAX_RANK]; /* for the buffer protocol */
  PyObject *buffer;          /* Buffer (materialized) */
  PyObject *graph;           /* Graph (lazy) */
  LoomNode node;
  int devfree;               /* lazy and computed from constants only: fits any device */
  PyObject *weakreflist;
} ArrayObject;

static struct PyModuleDef core_module;

static ModState *state_of_module(PyObject *m) { return (ModState *)PyModule_GetState(m); }
static ModState *state_of_type(PyTypeObject *t) {
  PyObject *m = PyType_GetModuleByDef(t, &core_module);
  return m ? state_of_module(m) : NULL;
}
static LoomContext *ctx_of(ModState *st) { return ((ContextObject *)st->ctx_obj)->ctx; }

static const char *const dtype_names[LOOM_DTYPE_COUNT] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64"};
/* Buffer-protocol formats; int64 is 'l' where long is 64-bit so NumPy sees its default int64. */
#if LONG_MAX == INT64_MAX
#define FMT_I64 "l"
#define FMT_U64 "L"
#else
#define FMT_I64 "q"
#define FMT_U64 "Q"
#endif
static const char *const dtype_formats[LOOM_DTYPE_COUNT] = {"?", "b", "h", "i", FMT_I64, "B", "H", "I", FMT_U64,
                                                            "e", "f", "d"};

/* ---- errors -------------------------------------------------------------------------------------- */
/* Raises the Python exception for a failed Loom call and returns NULL. */
static PyObject *raise_status(ModState *st, LoomStatus s) {
  const char *msg = loom_last_error(ctx_of(st));
  if (!msg || !*msg) msg = loom_status_name(s);
  PyObject *exc = PyExc_RuntimeError;
  switch (s) {
  case LOOM_ERR_SHAPE: exc = PyExc_ValueError; break;
  case LOOM_ERR_DTYPE: exc = PyExc_TypeError; break;
  case LOOM_ERR_AXIS: exc = st->axis_error ? st->axis_error : PyExc_ValueError; break;
  case LOOM_ERR_OUT_OF_MEMORY: exc = PyExc_MemoryError; break;
  case LOOM_ERR_INVALID_ARGUMENT: exc = strstr(msg, "out of bounds") ? PyExc_OverflowError : PyExc_ValueError; break;
  case LOOM_ERR_UNSUPPORTED: exc = PyExc_NotImplementedError; break;
  default: break;
  }
  PyErr_SetString(exc, msg);
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
static PyType_Spec buffer_spec = {"loom._core.Buffer", sizeof(BufferObject), 0, Py_TPFLAGS_DEFAULT, buffer_slots};

static BufferObject *buffer_new(ModState *st, int kind) {
  BufferObject *b = (BufferObject *)st->buffer_type->tp_alloc(st->buffer_type, 0);
  if (!b) return NULL;
  b->kind = kind;
  b->ctx_obj = Py_NewRef(st->ctx_obj);
  return b;
}

/* ---- Graph --------------------------------------------------------------------------------------- */
static int graph_traverse(GraphObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->keep);
  Py_VISIT(self->pending);
  Py_VISIT(Py_TYPE(self));
  return 0;
}
static int graph_clear(GraphObject *self) {
  Py_CLEAR(self->keep);
  Py_CLEAR(self->pending);
  return 0;
}
static void graph_dealloc(GraphObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->g) loom_graph_destroy(self->g); /* before the inputs it reads are released */
  graph_clear(self);
  Py_XDECREF(self->ctx_obj);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyObject *graph_node_count(GraphObject *self, PyObject *unused) {
  return PyLong_FromLong(loom_graph_node_count(self->g));
}
static PyMethodDef graph_methods[] = {
    {"node_count", (PyCFunction)graph_node_count, METH_NOARGS, "number of nodes in the graph"}, {NULL}};
static PyType_Slot graph_slots[] = {{Py_tp_dealloc, graph_dealloc},   {Py_tp_traverse, graph_traverse},
                                    {Py_tp_clear, graph_clear},       {Py_tp_methods, graph_methods},
                                    {0, NULL}};
static PyType_Spec graph_spec = {"loom._core.Graph", sizeof(GraphObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, graph_slots};

static GraphObject *graph_new(ModState *st, int trace) {
  GraphObject *gr = PyObject_GC_New(GraphObject, st->graph_type);
  if (!gr) return NULL;
  gr->ctx_obj = Py_NewRef(st->ctx_obj);
  gr->g = NULL;
  gr->trace = trace;
  gr->keep = PySet_New(NULL);
  gr->pending = PyList_New(0);
  PyObject_GC_Track(gr);
  if (!gr->keep || !gr->pending) {
    Py_DECREF(gr);
    return NULL;
  }
  LoomStatus s = loom_graph_create(ctx_of(st), &gr->g);
  if (s) {
    Py_DECREF(gr);
    return (GraphObject *)raise_status(st, s);
  }
  return gr;
}

/* ---- Array basics -------------------------------------------------------------------------------- */
static int array_traverse(ArrayObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->buffer);
  Py_VISIT(self->graph);
  Py_VISIT(Py_TYPE(self));
  return 0;
}
static int array_clear(ArrayObject *self) {
  Py_CLEAR(self->buffer);
  Py_CLEAR(self->graph);
  return 0;
}
static void array_dealloc(ArrayObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
  array_clear(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

static int is_array(ModState *st, PyObject *o) { return PyObject_TypeCheck(o, st->array_type); }

static ArrayObject *array_alloc(ModState *st) {
  PyTypeObject *t = st->array_cls ? (PyTypeObject *)st->array_cls : st->array_type;
  ArrayObject *a = (ArrayObject *)t->tp_alloc(t, 0);
  return a;
}

static void set_byte_geometry(ArrayObject *a) {
  size_t item = loom_dtype_size(a->desc.dtype);
  for (int i = 0; i < a->desc.ndim; i++) {
    a->bshape[i] = (Py_ssize_t)a->desc.shape[i];
    a->bstrides[i] = (Py_ssize_t)(a->desc.strides[i] * (int64_t)item);
  }
}

static void contiguous_strides(LoomArray *d) {
  int64_t s = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    d->strides[i] = s;
    s *= d->shape[i] > 0 ? d->shape[i] : 1;
  }
}

static int64_t numel(const LoomArray *d) {
  int64_t n = 1;
  for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
  return n;
}

/* A materialized Array on buffer b with descriptor d (steals nothing). */
static ArrayObject *array_materialized(ModState *st, PyObject *buffer, const LoomArray *d) {
  ArrayObject *a = array_alloc(st);
  if (!a) return NULL;
  a->lazy = 0;
  a->desc = *d;
  a->buffer = Py_NewRef(buffer);
  set_byte_geometry(a);
  return a;
}

/* Turns `a` into a materialized array holding the Loom-allocated result `out`. */
static int adopt_result(ModState *st, ArrayObject *a, const LoomArray *out) {
  BufferObject *b = buffer_new(st, BUF_LOOM);
  if (!b) {
    LoomArray tmp = *out;
    loom_array_free(ctx_of(st), &tmp);
    return -1;
  }
  b->la = *out;
  a->desc = *out;
  a->lazy = 0;
  a->devfree = 0;
  Py_CLEAR(a->graph);
  Py_XSETREF(a->buffer, (PyObject *)b);
  set_byte_geometry(a);
  return 0;
}

/* ---- evaluation ---------------------------------------------------------------------------------- */
static PyObject *trace_error(void) {
  PyErr_SetString(PyExc_TypeError,
                  "a value traced by @loom.fuse cannot be observed while tracing (bool(), float(), if, "
                  "printing, NumPy conversion): the traced function must not branch on array values; "
                  "use loom.where(cond, a, b) instead, or call the function without @loom.fuse");
  return NULL;
}

/* Evaluates the lazy arrays among items (a sequence of objects; non-arrays are skipped), grouped by
 * graph, one loom_eval per graph. Returns 0 or -1 with an exception. */
static int materialize_many(ModState *st, PyObject **items, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!is_array(st, items[i])) continue;
    ArrayObject *a = (ArrayObject *)items[i];
    if (!a->lazy) continue;
    GraphObject *gr = (GraphObject *)a->graph;
    if (gr->trace) {
      trace_error();
      return -1;
    }
    /* collect every lazy array of this graph among items[i..] */
    Py_ssize_t cnt = 0;
    for (Py_ssize_t j = i; j < n; j++)
      if (is_array(st, items[j]) && ((ArrayObject *)items[j])->lazy && ((ArrayObject *)items[j])->graph == (PyObject *)gr)
        cnt++; /* an upper bound: the loop below takes those on a's device */
    LoomNode *nodes = PyMem_Malloc(sizeof(LoomNode) * (size_t)cnt);
    LoomArray *outs = PyMem_Calloc((size_t)cnt, sizeof(LoomArray));
    ArrayObject **who = PyMem_Malloc(sizeof(ArrayObject *) * (size_t)cnt);
    if (!nodes || !outs || !who) {
      PyMem_Free(nodes);
      PyMem_Free(outs);
      PyMem_Free(who);
      PyErr_NoMemory();
      return -1;
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t j = i; j < n; j++) {
      if (!is_array(st, items[j])) continue;
      ArrayObject *b = (ArrayObject *)items[j];
      if (!b->lazy || b->graph != (PyObject *)gr) continue;
      if (b->desc.device != a->desc.device || b->desc.device_index != a->desc.device_index) continue;
      int dup = 0;
      for (Py_ssize_t q = 0; q < k; q++)
        if (who[q] == b) dup = 1;
      if (dup) continue;
      who[k] = b;
      nodes[k] = b->node;
      k++;
    }
    Py_INCREF(gr);
    LoomStatus s = loom_eval(gr->g, (int32_t)k, nodes, outs);
    int rc = 0;
    if (s) {
      raise_status(st, s);
      rc = -1;
    } else {
      for (Py_ssize_t q = 0; q < k; q++)
        if (adopt_result(st, who[q], &outs[q]) < 0) {
          for (Py_ssize_t r = q + 1; r < k; r++) loom_array_free(ctx_of(st), &outs[r]);
          rc = -1;
          break;
        }
    }
    Py_DECREF(gr);
    PyMem_Free(nodes);
    PyMem_Free(outs);
    PyMem_Free(who);
    if (rc) return rc;
  }
  return 0;
}

static int materialize(ModState *st, ArrayObject *a) {
  PyObject *o = (PyObject *)a;
  return a->lazy ? materialize_many(st, &o, 1) : 0;
}

/* Evaluates every live pending array of the current graph and drops the graph. */
static int flush_current(ModState *st) {
  GraphObject *gr = (GraphObject *)st->graph;
  if (!gr) return 0;
  Py_INCREF(gr);
  Py_CLEAR(st->graph);
  PyObject *live = PyList_New(0);
  int rc = live ? 0 : -1;
  for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(gr->pending); i++) {
    PyObject *obj = PyWeakref_GetObject(PyList_GET_ITEM(gr->pending, i)); /* borrowed */
    if (!obj) rc = -1;
    else if (obj != Py_None && ((ArrayObject *)obj)->lazy && ((ArrayObject *)obj)->graph == (PyObject *)gr)
      rc = PyList_Append(live, obj);
  }
  if (rc == 0) rc = materialize_many(st, PySequence_Fast_ITEMS(live), PyList_GET_SIZE(live));
  Py_XDECREF(live);
  Py_DECREF(gr);
  return rc;
}

/* The graph new nodes go into: the current one, flushed and replaced when past the bound. */
static GraphObject *current_graph(ModState *st) {
  GraphObject *gr = (GraphObject *)st->graph;
  if (gr && (loom_graph_node_count(gr->g) > st->bound || PyList_GET_SIZE(gr->pending) > 4 * (Py_ssize_t)st->bound)) {
    if (flush_current(st) < 0) return NULL;
    gr = NULL;
  }
  if (!gr) {
    gr = graph_new(st, 0);
    if (!gr) return NULL;
    st->graph = (PyObject *)gr;
  }
  return gr;
}

/* Before writing into buffer: evaluate every pending array of the current graph if it reads it. */
static int before_write(ModState *st, PyObject *buffer) {
  GraphObject *gr = (GraphObject *)st->graph;
  if (!gr) return 0;
  int has = PySet_Contains(gr->keep, buffer);
  if (has < 0) return -1;
  return has ? flush_current(st) : 0;
}

/* ---- operands ------------------------------------------------------------------------------------ */
static const char *device_label(char *buf, size_t cap, LoomDeviceKind k, int32_t i) {
  if (k == LOOM_DEVICE_HOST) snprintf(buf, cap, "the host");
  else snprintf(buf, cap, "%s device %d", k == LOOM_DEVICE_CUDA ? "CUDA" : "HIP", (int)i);
  return buf;
}

/* The graph an op on these operands builds in: a trace graph if any operand is a tracer (all tracers
 * must share it), else the current graph. Returns a borrowed reference. */
static GraphObject *graph_for(ModState *st, PyObject *const *ops, int n) {
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

static int input_node(ModState *st, GraphObject *gr, ArrayObject *a, LoomNode *out) {
  LoomStatus s = loom_input(gr->g, &a->desc, out);
  if (s) {
    raise_status(st, s);
    return -1;
  }
  return PySet_Add(gr->keep, a->buffer);
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
static int node_of(ModState *st, GraphObject *gr, PyObject *o, LoomNode *out) {
  LoomStatus s;
  if (is_array(st, o)) {
    ArrayObject *a = (ArrayObject *)o;
    if (a->lazy && a->graph == (PyObject *)gr) {
      *out = a->node;
      return 0;
    }
    int devfree = a->devfree; /* materializing clears it */
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
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "Python integer %R out of bounds for int64", o);
      return -1;
    }
    s = loom_weak_int(gr->g, v, out);
  } else if (PyFloat_Check(o)) s = loom_weak_float(gr->g, PyFloat_AS_DOUBLE(o), out);
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

/* A new lazy array for node in gr (eager mode: evaluated at once). */
static PyObject *lazy_result(ModState *st, GraphObject *gr, LoomNode node) {
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
  contiguous_strides(&a->desc);
  set_byte_geometry(a);
  if (!gr->trace) {
    PyObject *ref = PyWeakref_NewRef((PyObject *)a, NULL);
    if (!ref || PyList_Append(gr->pending, ref) < 0) {
      Py_XDECREF(ref);
      Py_DECREF(a);
      return NULL;
    }
    Py_DECREF(ref);
    if (st->eager && !a->devfree && materialize(st, a) < 0) {
      Py_DECREF(a);
      return NULL;
    }
  }
  return (PyObject *)a;
}

static int parse_dtype(PyObject *o, LoomDType *out) {
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
static int parse_i64s(PyObject *seq, int64_t *out, int32_t *n, const char *what) {
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

#define MODSTATE ModState *st = state_of_module(module)

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
  else if (PyLong_Check(v)) {
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
    PyErr_SetString(PyExc_TypeError, "const: value must be int or float");
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
    for (int i = 0; i < n; i++) ax[i] = (int32_t)v[i];
  }
  LoomStatus s = loom_reduce_dtype(gr->g, (LoomReduceOp)op, x, n, args[2] == Py_None ? NULL : ax, keep,
                                   dt < 0 ? LOOM_DTYPE_COUNT : (LoomDType)dt, &y);
  return s ? raise_status(st, s) : lazy_result(st, gr, y);
}

/* ---- creation, import, views ------------------------------------------------------------------------ */
static int parse_device(PyObject *kind, PyObject *index, LoomDeviceKind *k, int32_t *i) {
  long kv = PyLong_AsLong(kind), iv = PyLong_AsLong(index);
  if (PyErr_Occurred()) return -1;
  if ((kv != LOOM_DEVICE_HOST && kv != LOOM_DEVICE_CUDA) || iv < 0 || iv > INT32_MAX ||
      (kv == LOOM_DEVICE_HOST && iv != 0)) {
    PyErr_Format(PyExc_ValueError, "device (%ld, %ld) is not a host (0, 0) or CUDA (1, n) device", kv, iv);
    return -1;
  }
  *k = (LoomDeviceKind)kv;
  *i = (int32_t)iv;
  return 0;
}

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

/* A new C-contiguous array on d's device (shape, dtype, device set), from Loom's device pool. */
static PyObject *device_empty(ModState *st, LoomArray *d, int zero) {
  LoomStatus s = loom_array_alloc(ctx_of(st), d);
  if (s) return raise_status(st, s);
  BufferObject *b = buffer_new(st, BUF_LOOM);
  if (!b) {
    loom_array_free(ctx_of(st), d);
    return NULL;
  }
  b->la = *d;
  if (zero && numel(d) > 0 && fill_zero(st, d) < 0) {
    Py_DECREF(b);
    return NULL;
  }
  PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, d);
  Py_DECREF(b);
  return r;
}

static int is_c_contiguous(const LoomArray *d) {
  int64_t expect = 1;
  for (int i = d->ndim - 1; i >= 0; i--) {
    if (d->shape[i] == 0) return 1;
    if (d->shape[i] != 1 && d->strides[i] != expect) return 0;
    expect *= d->shape[i];
  }
  return 1;
}

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

static int format_dtype(const char *f, size_t item, LoomDType *out) {
  if (!f) f = "B";
  if (*f == '@' || *f == '=' || *f == '<') f++;
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

/* Copies src (any strides) into a new contiguous array. */
static PyObject *tuple_i64(int n, const int64_t *v, int64_t scale);
static PyObject *copy_array(ModState *st, ArrayObject *src) {
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
    LoomArray sd = sa->desc;
    contiguous_strides(&sd); /* C-contiguous: canonical strides describe the same elements */
    LoomStatus s = loom_array_copy(ctx_of(st), &((ArrayObject *)r)->desc, &sd);
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

/* from_buffer(obj, copy): an Array over obj's buffer (zero-copy, keeps obj alive) or a copy. */
static PyObject *core_from_buffer(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "from_buffer(obj, copy)");
    return NULL;
  }
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
  if (format_dtype(b->view.format, (size_t)b->view.itemsize, &d.dtype) < 0) {
    PyErr_Format(PyExc_TypeError, "loom: unsupported buffer format '%s' (loom supports bool, int8..64, uint8..64, "
                 "float16, float32, float64 in native byte order)", b->view.format ? b->view.format : "B");
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

/* view(base, offset_bytes, shape, strides_bytes): an array on base's memory (the caller, loom's
 * Python layer, computed the geometry with NumPy, so it lies inside base's memory). */
static PyObject *core_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 4 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "view(base, offset, shape, strides)");
    return NULL;
  }
  ArrayObject *base = (ArrayObject *)args[0];
  if (materialize(st, base) < 0) return NULL;
  long long off = PyLong_AsLongLong(args[1]);
  if (off == -1 && PyErr_Occurred()) return NULL;
  LoomArray d = base->desc;
  int32_t n2;
  if (parse_i64s(args[2], d.shape, &d.ndim, "shape") < 0 || parse_i64s(args[3], d.strides, &n2, "strides") < 0)
    return NULL;
  int64_t item = (int64_t)loom_dtype_size(d.dtype);
  if (n2 != d.ndim) {
    PyErr_SetString(PyExc_ValueError, "view: shape and strides differ in length");
    return NULL;
  }
  for (int i = 0; i < d.ndim; i++) {
    if (d.strides[i] % item) {
      PyErr_SetString(PyExc_ValueError, "view: strides must be multiples of the item size");
      return NULL;
    }
    d.strides[i] /= item;
  }
  d.data = base->desc.data ? (char *)base->desc.data + off : NULL;
  return (PyObject *)array_materialized(st, base->buffer, &d);
}

/* ---- evaluation entry points ---------------------------------------------------------------------- */
static PyObject *core_eval(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (materialize_many(st, (PyObject **)args, nargs) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *core_flush(PyObject *module, PyObject *unused) {
  MODSTATE;
  if (flush_current(st) < 0) return NULL;
  Py_RETURN_NONE;
}

/* assign(dst, src): writes src (array or Python scalar), broadcast to dst's shape and cast to its
 * dtype (NumPy's unsafe casting of setitem), into the materialized dst. Pending arrays that read
 * dst's memory are evaluated first. */
static PyObject *core_assign(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !is_array(st, args[0])) {
    PyErr_SetString(PyExc_TypeError, "assign(dst, src)");
    return NULL;
  }
  ArrayObject *dst = (ArrayObject *)args[0];
  if (dst->lazy) {
    PyErr_SetString(PyExc_RuntimeError, "assign: destination must be materialized");
    return NULL;
  }
  if (is_array(st, args[1]) && ((ArrayObject *)args[1])->lazy &&
      ((GraphObject *)((ArrayObject *)args[1])->graph)->trace)
    return trace_error();
  if (before_write(st, dst->buffer) < 0) return NULL;
  GraphObject *gr = current_graph(st);
  if (!gr) return NULL;
  Py_INCREF(gr);
  LoomNode x, c, b;
  PyObject *r = NULL;
  if (node_of(st, gr, args[1], &x) == 0) {
    LoomStatus s = loom_cast(gr->g, x, dst->desc.dtype, &c);
    if (!s) s = loom_broadcast_to(gr->g, c, dst->desc.ndim, dst->desc.shape, &b);
    /* a destination the value reads (x[::-1] = x) is handled by loom_eval (a temporary on the GPU) */
    if (!s) s = loom_eval(gr->g, 1, &b, &dst->desc);
    if (s) raise_status(st, s);
    else r = Py_NewRef(Py_None);
  }
  Py_DECREF(gr);
  return r;
}

/* become(x, y): x takes y's value (its node or buffer): in-place ops on lazy arrays. */
static PyObject *core_become(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || !is_array(st, args[0]) || !is_array(st, args[1])) {
    PyErr_SetString(PyExc_TypeError, "become(x, y)");
    return NULL;
  }
  ArrayObject *x = (ArrayObject *)args[0], *y = (ArrayObject *)args[1];
  if (x == y) Py_RETURN_NONE;
  x->lazy = y->lazy;
  x->desc = y->desc;
  x->node = y->node;
  x->devfree = y->devfree;
  Py_XSETREF(x->graph, Py_XNewRef(y->graph));
  Py_XSETREF(x->buffer, Py_XNewRef(y->buffer));
  set_byte_geometry(x);
  if (x->lazy && !((GraphObject *)x->graph)->trace) {
    PyObject *ref = PyWeakref_NewRef((PyObject *)x, NULL);
    if (!ref || PyList_Append(((GraphObject *)x->graph)->pending, ref) < 0) {
      Py_XDECREF(ref);
      return NULL;
    }
    Py_DECREF(ref);
  }
  Py_RETURN_NONE;
}

static PyObject *core_stats(PyObject *module, PyObject *unused) {
  MODSTATE;
  LoomStats s;
  LoomStatus rc = loom_get_stats(ctx_of(st), &s);
  if (rc) return raise_status(st, rc);
  return Py_BuildValue("{sKsKsKsdsKsK}", "kernels_launched", (unsigned long long)s.kernels_launched,
                       "kernels_compiled", (unsigned long long)s.kernels_compiled, "cache_hits",
                       (unsigned long long)s.cache_hits, "compile_ms", s.compile_ms, "last_eval_kernels",
                       (unsigned long long)s.last_eval_kernels, "temp_bytes_peak",
                       (unsigned long long)s.temp_bytes_peak);
}

/* context_address() -> int: the module's LoomContext * (loom.aot hands it to libloom's AOT API, loom_aot.h,
 * through ctypes). */
static PyObject *core_context_address(PyObject *module, PyObject *unused) {
  MODSTATE;
  return PyLong_FromVoidPtr(ctx_of(st));
}

static PyObject *core_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  /* configure(array_cls, axis_error) */
  MODSTATE;
  if (nargs != 2 || !PyType_Check(args[0]) || !PyType_IsSubtype((PyTypeObject *)args[0], st->array_type)) {
    PyErr_SetString(PyExc_TypeError, "configure(array_cls, axis_error)");
    return NULL;
  }
  Py_XSETREF(st->array_cls, Py_NewRef(args[0]));
  Py_XSETREF(st->axis_error, args[1] == Py_None ? NULL : Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

static PyObject *core_set_eager(PyObject *module, PyObject *arg) {
  MODSTATE;
  int old = st->eager, v = PyObject_IsTrue(arg);
  if (v < 0) return NULL;
  st->eager = v;
  if (v && flush_current(st) < 0) return NULL;
  return PyBool_FromLong(old);
}

static PyObject *core_set_graph_bound(PyObject *module, PyObject *arg) {
  MODSTATE;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  if (v < 1) {
    PyErr_SetString(PyExc_ValueError, "graph bound must be at least 1");
    return NULL;
  }
  long old = st->bound;
  st->bound = (int32_t)(v > INT32_MAX / 8 ? INT32_MAX / 8 : v);
  return PyLong_FromLong(old);
}

static PyObject *core_current_graph(PyObject *module, PyObject *unused) {
  MODSTATE;
  return Py_NewRef(st->graph ? st->graph : Py_None);
}

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
  Py_ssize_t nin, nout;
  int is_tuple;
  int32_t *in_arg;    /* [nin] argument index bound to placeholder k */
  LoomNode *in_node;  /* [nin] placeholder nodes */
  LoomNode *out_node; /* [nout] output nodes */
  PyObject *slots;    /* tuple: None = the next output node, (value,) = a constant result */
} FuseEntryObject;

static void fuse_entry_dealloc(FuseEntryObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyMem_Free(self->in_arg);
  PyMem_Free(self->in_node);
  PyMem_Free(self->out_node);
  Py_XDECREF(self->graph);
  Py_XDECREF(self->slots);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot fuse_entry_slots[] = {{Py_tp_dealloc, fuse_entry_dealloc}, {0, NULL}};
static PyType_Spec fuse_entry_spec = {"loom._core.FuseEntry", sizeof(FuseEntryObject), 0, Py_TPFLAGS_DEFAULT,
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

/* fuse_entry(graph, in_args, in_nodes, out_nodes, slots, is_tuple, nargs) -> FuseEntry. in_args[k]
 * is the argument that placeholder in_nodes[k] reads; slots has one item per result: None (the next
 * of out_nodes) or a 1-tuple holding a constant result. */
static PyObject *core_fuse_entry(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 7 || !PyObject_TypeCheck(args[0], st->graph_type) || !PyTuple_Check(args[1]) ||
      !PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) || !PyTuple_Check(args[4]) ||
      PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
    PyErr_SetString(PyExc_TypeError, "fuse_entry(graph, in_args, in_nodes, out_nodes, slots, is_tuple, nargs)");
    return NULL;
  }
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
  if (nodes != nout || (!is_tuple && PyTuple_GET_SIZE(args[4]) > 1)) {
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
  int32_t nn = loom_graph_node_count(((GraphObject *)args[0])->g);
  if (int_tuple(args[1], &e->in_arg, 0, (long)na - 1, "argument index") < 0 ||
      int_tuple(args[2], &e->in_node, 0, (long)nn - 1, "input node") < 0 ||
      int_tuple(args[3], &e->out_node, 0, (long)nn - 1, "output node") < 0) {
    Py_DECREF(e);
    return NULL;
  }
  return (PyObject *)e;
}

/* Wraps out (a loom_eval result, ownership taken) as a new Array, or a NumPy array when numpy_out. */
static PyObject *wrap_result(ModState *st, LoomArray *out, int numpy_out) {
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
  PyObject *r = PyObject_CallOneArg(st->np_asarray, (PyObject *)a);
  Py_DECREF(a);
  return r;
}

/* Runs entry e: desc[j] describes argument j (NULL for scalars; arrays already materialized). */
static PyObject *fuse_exec_entry(ModState *st, FuseEntryObject *e, const LoomArray *const *desc, Py_ssize_t nargs,
                                 int numpy_out) {
  if (nargs != e->nargs) {
    PyErr_Format(PyExc_TypeError, "@loom.fuse: this signature takes %zd arguments, got %zd", e->nargs, nargs);
    return NULL;
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
      v = numpy_out && is_array(st, v) ? PyObject_CallOneArg(st->np_asarray, v) : Py_NewRef(v);
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
  for (; q < e->nout; q++) loom_array_free(ctx_of(st), &outs[q]);
done:
  if (outs != outs_stack) PyMem_Free(outs);
  return res;
}

/* fuse_exec(entry, vals, numpy_out): runs entry on vals (one per argument: a loom array, or None for a
 * scalar folded into the trace); pending arrays are evaluated first. */
static PyObject *core_fuse_exec(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3 || !PyObject_TypeCheck(args[0], st->fuse_entry_type) || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "fuse_exec(entry, vals, numpy_out)");
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
  if (!desc) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = PyTuple_GET_ITEM(vals, i);
    desc[i] = v == Py_None ? NULL : &((ArrayObject *)v)->desc;
  }
  PyObject *r = fuse_exec_entry(st, (FuseEntryObject *)args[0], desc, n, numpy_out);
  if (desc != stack) PyMem_Free(desc);
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
      if (PyObject_GetBuffer(o, v, PyBUF_STRIDES | PyBUF_FORMAT) < 0) {
        PyErr_Clear(); /* e.g. object dtype: the slow path raises the right error */
        fast = 0;
        break;
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
    res = fuse_exec_entry(st, (FuseEntryObject *)entry, desc, n, numpy_in);
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
static PyType_Spec fused_spec = {"loom._core.Fused", sizeof(FusedObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, fused_slots};

/* ---- DLPack ---------------------------------------------------------------------------------------- */
typedef struct {
  DLManagedTensor mt;
  int64_t shape[LOOM_MAX_RANK], strides[LOOM_MAX_RANK];
  PyObject *owner;
} DLHolder;

static void dl_deleter(DLManagedTensor *mt) {
  DLHolder *h = (DLHolder *)mt->manager_ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF(h->owner);
  PyGILState_Release(g);
  PyMem_RawFree(h);
}

static void dl_capsule_destructor(PyObject *cap) {
  if (!PyCapsule_IsValid(cap, "dltensor")) return; /* consumed (renamed "used_dltensor") */
  DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
  if (mt && mt->deleter) mt->deleter(mt);
}

static PyObject *array_dlpack(ArrayObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO", kwlist, &stream, &maxv, &dev, &copy)) return NULL;
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return NULL;
  int cuda = self->desc.device == LOOM_DEVICE_CUDA;
  if (stream != Py_None && !cuda) {
    PyErr_SetString(PyExc_ValueError, "__dlpack__: host arrays take stream=None");
    return NULL;
  }
  if (stream != Py_None && !PyLong_Check(stream)) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__: stream must be None or an int (a CUstream handle, 1 or 2)");
    return NULL;
  }
  if (dev != Py_None) {
    long t = -1, i = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2) {
      t = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
      i = PyLong_AsLong(PyTuple_GET_ITEM(dev, 1));
    }
    if (t != (cuda ? DL_CUDA : DL_CPU) || i != (cuda ? self->desc.device_index : 0)) {
      PyErr_Clear();
      PyErr_Format(PyExc_BufferError, "__dlpack__: this array can only be exported to its own device (%d, %d)",
                   cuda ? DL_CUDA : DL_CPU, cuda ? (int)self->desc.device_index : 0);
      return NULL;
    }
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "__dlpack__: copy=True is not supported; use x.copy().__dlpack__()");
    return NULL;
  }
  if (self->lazy && ((GraphObject *)self->graph)->trace) return trace_error();
  if (materialize(st, self) < 0) return NULL;
  /* The consumer reads on its own stream: wait for Loom's work on the device (conservative and
   * correct for any consumer stream; stream -1 means the consumer asks for no synchronization). */
  if (cuda && !(PyLong_Check(stream) && PyLong_AsLong(stream) == -1)) {
    LoomStatus ss = loom_device_synchronize(ctx_of(st), self->desc.device, self->desc.device_index);
    if (ss) return raise_status(st, ss);
  }
  DLHolder *h = PyMem_RawCalloc(1, sizeof *h);
  if (!h) return PyErr_NoMemory();
  LoomDType t = self->desc.dtype;
  static const uint8_t codes[LOOM_DTYPE_COUNT] = {DL_BOOL, DL_INT, DL_INT, DL_INT, DL_INT, DL_UINT, DL_UINT,
                                                  DL_UINT, DL_UINT, DL_FLOAT, DL_FLOAT, DL_FLOAT};
  h->owner = Py_NewRef((PyObject *)self);
  h->mt.manager_ctx = h;
  h->mt.deleter = dl_deleter;
  DLTensor *dl = &h->mt.dl_tensor;
  dl->data = self->desc.data ? self->desc.data : (void *)h; /* never dereferenced when empty */
  dl->device.device_type = cuda ? DL_CUDA : DL_CPU;
  dl->device.device_id = cuda ? self->desc.device_index : 0;
  dl->ndim = self->desc.ndim;
  dl->dtype.code = codes[t];
  dl->dtype.bits = (uint8_t)(8 * loom_dtype_size(t));
  dl->dtype.lanes = 1;
  for (int i = 0; i < self->desc.ndim; i++) {
    h->shape[i] = self->desc.shape[i];
    h->strides[i] = self->desc.strides[i];
  }
  dl->shape = h->shape;
  dl->strides = h->strides;
  dl->byte_offset = 0;
  PyObject *cap = PyCapsule_New(&h->mt, "dltensor", dl_capsule_destructor);
  if (!cap) {
    Py_DECREF(h->owner);
    PyMem_RawFree(h);
  }
  return cap;
}

static PyObject *array_dlpack_device(ArrayObject *self, PyObject *unused) {
  if (self->desc.device == LOOM_DEVICE_CUDA) return Py_BuildValue("(ii)", DL_CUDA, (int)self->desc.device_index);
  return Py_BuildValue("(ii)", DL_CPU, 0);
}

/* from_dlpack_capsule(capsule) -> Array (zero-copy; the producer's deleter runs when it dies). */
static PyObject *core_from_dlpack_capsule(PyObject *module, PyObject *cap) {
  MODSTATE;
  if (!PyCapsule_IsValid(cap, "dltensor")) {
    PyErr_SetString(PyExc_TypeError, "from_dlpack: expected an unconsumed 'dltensor' capsule");
    return NULL;
  }
  DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
  if (!mt) return NULL;
  DLTensor *dl = &mt->dl_tensor;
  if (dl->device.device_type != DL_CPU && dl->device.device_type != DL_CUDA) {
    PyErr_Format(PyExc_BufferError, "from_dlpack: DLPack device type %d is neither the host (1) nor CUDA (2)",
                 (int)dl->device.device_type);
    return NULL;
  }
  LoomArray d;
  memset(&d, 0, sizeof d);
  if (dl->device.device_type == DL_CUDA) {
    d.device = LOOM_DEVICE_CUDA;
    d.device_index = dl->device.device_id;
  }
  int bits = dl->dtype.bits, code = dl->dtype.code;
  if (dl->dtype.lanes != 1 || dl->ndim < 0 || dl->ndim > LOOM_MAX_RANK) {
    PyErr_SetString(PyExc_BufferError, "from_dlpack: vector lanes or rank > 16 are not supported");
    return NULL;
  }
  if (code == DL_BOOL && bits == 8) d.dtype = LOOM_BOOL;
  else if (code == DL_INT && (bits == 8 || bits == 16 || bits == 32 || bits == 64))
    d.dtype = bits == 8 ? LOOM_INT8 : bits == 16 ? LOOM_INT16 : bits == 32 ? LOOM_INT32 : LOOM_INT64;
  else if (code == DL_UINT && (bits == 8 || bits == 16 || bits == 32 || bits == 64))
    d.dtype = bits == 8 ? LOOM_UINT8 : bits == 16 ? LOOM_UINT16 : bits == 32 ? LOOM_UINT32 : LOOM_UINT64;
  else if (code == DL_FLOAT && (bits == 16 || bits == 32 || bits == 64))
    d.dtype = bits == 16 ? LOOM_FLOAT16 : bits == 32 ? LOOM_FLOAT32 : LOOM_FLOAT64;
  else {
    PyErr_Format(PyExc_BufferError, "from_dlpack: DLPack dtype (code %d, %d bits) is not supported", code, bits);
    return NULL;
  }
  d.ndim = dl->ndim;
  for (int i = 0; i < d.ndim; i++) d.shape[i] = dl->shape[i];
  if (dl->strides)
    for (int i = 0; i < d.ndim; i++) d.strides[i] = dl->strides[i];
  else contiguous_strides(&d);
  d.data = (char *)dl->data + dl->byte_offset;
  BufferObject *b = buffer_new(st, BUF_DLPACK);
  if (!b) return NULL;
  if (PyCapsule_SetName(cap, "used_dltensor") < 0) {
    Py_DECREF(b);
    return NULL;
  }
  b->mt = mt;
  PyObject *r = (PyObject *)array_materialized(st, (PyObject *)b, &d);
  Py_DECREF(b);
  return r;
}

/* ---- Array type: attributes and buffer protocol ------------------------------------------------------ */
static int array_getbuffer(ArrayObject *self, Py_buffer *view, int flags) {
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return -1;
  if (self->lazy && ((GraphObject *)self->graph)->trace) {
    trace_error();
    return -1;
  }
  if (self->desc.device != LOOM_DEVICE_HOST) {
    PyErr_SetString(PyExc_TypeError, "Implicit conversion to a NumPy array is not allowed: this loom array is on a "
                    "CUDA device. Please use `.get()` (or loom.asnumpy) to copy it to the host explicitly.");
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
  view->buf = self->desc.data ? self->desc.data : (void *)self; /* never read when empty */
  view->obj = Py_NewRef((PyObject *)self);
  view->len = (Py_ssize_t)(numel(&self->desc) * (int64_t)item);
  view->readonly = 0;
  view->itemsize = (Py_ssize_t)item;
  view->format = (flags & PyBUF_FORMAT) ? (char *)dtype_formats[self->desc.dtype] : NULL;
  view->ndim = self->desc.ndim;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? self->bshape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? self->bstrides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}
static void array_releasebuffer(ArrayObject *self, Py_buffer *view) {}

static PyObject *tuple_i64(int n, const int64_t *v, int64_t scale) {
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
    {"shape", (getter)array_get_shape, NULL, "tuple of dimensions", NULL},
    {"strides", (getter)array_get_strides, NULL, "strides in bytes", NULL},
    {"ndim", (getter)array_get_ndim, NULL, "number of dimensions", NULL},
    {"size", (getter)array_get_size, NULL, "number of elements", NULL},
    {"_dtype_code", (getter)array_get_dtype_code, NULL, NULL, NULL},
    {"_dtype_name", (getter)array_get_dtype_name, NULL, NULL, NULL},
    {"_lazy", (getter)array_get_lazy, NULL, "True while the value is pending", NULL},
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
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ArrayObject, weakreflist), READONLY, NULL}, {NULL}};

static PyType_Slot array_slots[] = {
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
static PyType_Spec array_spec = {"loom._core.Array", sizeof(ArrayObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, array_slots};

/* ---- devices, streams, events, pools ------------------------------------------------------------------
 * A Handle owns one LoomStream or LoomEvent (kind 0 / 1) and a reference to the Context, so it is
 * destroyed before the context. close_handle destroys it early (a closed stream is then refused). */
typedef struct {
  PyObject_HEAD
  PyObject *ctx_obj;
  int kind; /* 0 stream, 1 event */
  void *ptr;
} HandleObject;

static void handle_release(HandleObject *h) {
  if (!h->ptr) return;
  LoomContext *ctx = ((ContextObject *)h->ctx_obj)->ctx;
  if (h->kind == 0) loom_stream_destroy(ctx, (LoomStream *)h->ptr);
  else loom_event_destroy(ctx, (LoomEvent *)h->ptr);
  h->ptr = NULL;
}
static void handle_dealloc(HandleObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  handle_release(self);
  Py_XDECREF(self->ctx_obj);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot handle_slots[] = {{Py_tp_dealloc, handle_dealloc}, {0, NULL}};
static PyType_Spec handle_spec = {"loom._core.Handle", sizeof(HandleObject), 0, Py_TPFLAGS_DEFAULT, handle_slots};

static int have_stream_api(void) {
  if (loom_stream_create && loom_stream_destroy && loom_stream_synchronize && loom_stream_use &&
      loom_stream_handle && loom_event_create && loom_event_destroy && loom_event_record &&
      loom_event_synchronize && loom_event_elapsed_ms && loom_pool_stats && loom_pool_free_all_blocks)
    return 1;
  PyErr_SetString(PyExc_NotImplementedError, "this libloom has no stream/event/pool API (loom_stream_create ...); "
                  "rebuild the package against a newer libloom");
  return 0;
}

/* The live object behind handle o of kind k, or NULL with an exception (closed or wrong type). */
static void *handle_ptr(ModState *st, PyObject *o, int k) {
  if (!PyObject_TypeCheck(o, st->handle_type) || ((HandleObject *)o)->kind != k) {
    PyErr_Format(PyExc_TypeError, "expected a loom %s handle", k ? "event" : "stream");
    return NULL;
  }
  if (!((HandleObject *)o)->ptr) {
    PyErr_Format(PyExc_ValueError, "this %s was closed; create a new one", k ? "event" : "stream");
    return NULL;
  }
  return ((HandleObject *)o)->ptr;
}

static PyObject *core_device_count(PyObject *module, PyObject *arg) {
  MODSTATE;
  long k = PyLong_AsLong(arg);
  if (k == -1 && PyErr_Occurred()) return NULL;
  int32_t n = 0;
  LoomStatus s = loom_device_count(ctx_of(st), (LoomDeviceKind)k, &n);
  if (s) return raise_status(st, s);
  return PyLong_FromLong(n);
}

/* device_synchronize(kind, index) */
static PyObject *core_device_synchronize(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "device_synchronize(kind, index)");
    return NULL;
  }
  if (parse_device(args[0], args[1], &k, &i) < 0) return NULL;
  LoomStatus s = loom_device_synchronize(ctx_of(st), k, i);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

/* stream_create(kind, index) / event_create(kind, index) -> Handle */
static PyObject *make_handle(PyObject *module, PyObject *const *args, Py_ssize_t nargs, int k) {
  MODSTATE;
  LoomDeviceKind dk;
  int32_t di;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "create(kind, index)");
    return NULL;
  }
  if (!have_stream_api() || parse_device(args[0], args[1], &dk, &di) < 0) return NULL;
  HandleObject *h = (HandleObject *)st->handle_type->tp_alloc(st->handle_type, 0);
  if (!h) return NULL;
  h->ctx_obj = Py_NewRef(st->ctx_obj);
  h->kind = k;
  LoomStatus s = k == 0 ? loom_stream_create(ctx_of(st), dk, di, (LoomStream **)&h->ptr)
                        : loom_event_create(ctx_of(st), dk, di, (LoomEvent **)&h->ptr);
  if (s) {
    h->ptr = NULL;
    Py_DECREF(h);
    return raise_status(st, s);
  }
  return (PyObject *)h;
}
static PyObject *core_stream_create(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  return make_handle(module, args, nargs, 0);
}
static PyObject *core_event_create(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  return make_handle(module, args, nargs, 1);
}

/* close_handle(h): destroys the stream or event now (pending work still completes). */
static PyObject *core_close_handle(PyObject *module, PyObject *arg) {
  MODSTATE;
  if (!PyObject_TypeCheck(arg, st->handle_type)) {
    PyErr_SetString(PyExc_TypeError, "close_handle(handle)");
    return NULL;
  }
  handle_release((HandleObject *)arg);
  Py_RETURN_NONE;
}

static PyObject *core_stream_synchronize(PyObject *module, PyObject *arg) {
  MODSTATE;
  void *p = handle_ptr(st, arg, 0);
  if (!p) return NULL;
  LoomStatus s = loom_stream_synchronize(ctx_of(st), (LoomStream *)p);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

static PyObject *core_stream_ptr(PyObject *module, PyObject *arg) {
  MODSTATE;
  void *p = handle_ptr(st, arg, 0);
  if (!p) return NULL;
  return PyLong_FromVoidPtr(loom_stream_handle((LoomStream *)p));
}

/* stream_use(kind, index, handle|None): the calling thread's current stream of that device. */
static PyObject *core_stream_use(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind dk;
  int32_t di;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "stream_use(kind, index, handle)");
    return NULL;
  }
  if (!have_stream_api() || parse_device(args[0], args[1], &dk, &di) < 0) return NULL;
  void *p = NULL;
  if (args[2] != Py_None && !(p = handle_ptr(st, args[2], 0))) return NULL;
  LoomStatus s = loom_stream_use(ctx_of(st), dk, di, (LoomStream *)p);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

/* event_record(event, stream|None) */
static PyObject *core_event_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "event_record(event, stream)");
    return NULL;
  }
  void *e = handle_ptr(st, args[0], 1), *p = NULL;
  if (!e) return NULL;
  if (args[1] != Py_None && !(p = handle_ptr(st, args[1], 0))) return NULL;
  LoomStatus s = loom_event_record(ctx_of(st), (LoomEvent *)e, (LoomStream *)p);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

static PyObject *core_event_synchronize(PyObject *module, PyObject *arg) {
  MODSTATE;
  void *e = handle_ptr(st, arg, 1);
  if (!e) return NULL;
  LoomStatus s = loom_event_synchronize(ctx_of(st), (LoomEvent *)e);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

/* event_elapsed(start, end) -> milliseconds */
static PyObject *core_event_elapsed(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "event_elapsed(start, end)");
    return NULL;
  }
  void *a = handle_ptr(st, args[0], 1), *b = a ? handle_ptr(st, args[1], 1) : NULL;
  if (!b) return NULL;
  float ms = 0;
  LoomStatus s = loom_event_elapsed_ms(ctx_of(st), (LoomEvent *)a, (LoomEvent *)b, &ms);
  return s ? raise_status(st, s) : PyFloat_FromDouble(ms);
}

/* pool_stats(kind, index) -> (used_bytes, total_bytes); pool_free_all(kind, index) */
static PyObject *core_pool_stats(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind dk;
  int32_t di;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "pool_stats(kind, index)");
    return NULL;
  }
  if (!have_stream_api() || parse_device(args[0], args[1], &dk, &di) < 0) return NULL;
  LoomPoolStats ps;
  LoomStatus s = loom_pool_stats(ctx_of(st), dk, di, &ps);
  if (s) return raise_status(st, s);
  return Py_BuildValue("(KK)", (unsigned long long)ps.used_bytes, (unsigned long long)ps.total_bytes);
}
static PyObject *core_pool_free_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind dk;
  int32_t di;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "pool_free_all(kind, index)");
    return NULL;
  }
  if (!have_stream_api() || parse_device(args[0], args[1], &dk, &di) < 0) return NULL;
  LoomStatus s = loom_pool_free_all_blocks(ctx_of(st), dk, di);
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

static PyObject *core_has_stream_api(PyObject *module, PyObject *unused) {
  return PyBool_FromLong(loom_stream_create && loom_pool_stats);
}

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
static PyType_Spec uk_spec = {"loom._core.UserKernel", sizeof(UserKernelObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, uk_slots};

/* Raises for a failed kernel call: LOOM_ERR_INVALID_ARGUMENT is a ValueError (TypeError when
 * invalid_is_type: raw launches), the rest as raise_status. */
static PyObject *raise_kernel(ModState *st, LoomStatus s, int invalid_is_type) {
  if (s != LOOM_ERR_INVALID_ARGUMENT) return raise_status(st, s);
  const char *msg = loom_last_error(ctx_of(st));
  PyErr_SetString(invalid_is_type ? PyExc_TypeError : PyExc_ValueError, msg && *msg ? msg : loom_status_name(s));
  return NULL;
}

/* A str or None argument as a C string (NULL for None); -1 with an exception. */
static int opt_str(PyObject *o, const char **out) {
  if (o == Py_None) {
    *out = NULL;
    return 0;
  }
  *out = PyUnicode_AsUTF8(o);
  return *out ? 0 : -1;
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
static PyObject *core_uk_elementwise(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  const char *s[7];
  if (nargs != 11 || !uk_target_ok(st, args[0])) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "uk_elementwise(target, in_params, out_params, operation, name, preamble, "
                      "loop_prep, after_loop, reduce_dims, codes, flags)");
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
  return uk_finish_create(st, target, h, args[3], 0, flags, args[8]);
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

/* ---- streams for one call ---- */
typedef struct {
  int active;
  LoomDeviceKind kind;
  int32_t index;
  LoomStream *restore;
} CallStream;

/* Makes spec's stream current (spec: None or (kind, index, handle|None, restore|None)). */
static int call_stream_begin(ModState *st, PyObject *spec, CallStream *cs) {
  cs->active = 0;
  if (spec == Py_None || !loom_stream_use) return 0;
  if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 4) {
    PyErr_SetString(PyExc_TypeError, "stream spec: (kind, index, handle, restore)");
    return -1;
  }
  PyObject *h = PyTuple_GET_ITEM(spec, 2), *r = PyTuple_GET_ITEM(spec, 3);
  void *hp = NULL, *rp = NULL;
  if (parse_device(PyTuple_GET_ITEM(spec, 0), PyTuple_GET_ITEM(spec, 1), &cs->kind, &cs->index) < 0) return -1;
  if (h != Py_None && !(hp = handle_ptr(st, h, 0))) return -1;
  if (r != Py_None && !(rp = handle_ptr(st, r, 0))) return -1;
  if (hp == rp) return 0; /* already current */
  LoomStatus s = loom_stream_use(ctx_of(st), cs->kind, cs->index, (LoomStream *)hp);
  if (s) {
    raise_status(st, s);
    return -1;
  }
  cs->active = 1;
  cs->restore = (LoomStream *)rp;
  return 0;
}

/* Makes the caller's stream current again; keeps an exception already set. */
static int call_stream_end(ModState *st, CallStream *cs) {
  if (!cs->active) return 0;
  cs->active = 0;
  LoomStatus s = loom_stream_use(ctx_of(st), cs->kind, cs->index, cs->restore);
  if (s && !PyErr_Occurred()) {
    raise_status(st, s);
    return -1;
  }
  return 0;
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

/* A descriptor of the buffer in v (host memory); -1 with an exception. */
static int view_desc(const Py_buffer *v, LoomArray *d, const char *what) {
  memset(d, 0, sizeof *d);
  if (v->ndim > LOOM_MAX_RANK) {
    PyErr_Format(PyExc_ValueError, "%s: loom supports at most %d dimensions, got %d", what, LOOM_MAX_RANK, v->ndim);
    return -1;
  }
  if (v->itemsize <= 0 || format_dtype(v->format, (size_t)v->itemsize, &d->dtype) < 0 ||
      loom_dtype_size(d->dtype) != (size_t)v->itemsize) {
    PyErr_Format(PyExc_TypeError, "%s: unsupported dtype (format '%s'): loom supports bool, int8..64, uint8..64, "
                 "float16, float32, float64 in native byte order", what, v->format ? v->format : "B");
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
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o)) {
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
static int store_scalar(PyObject *o, LoomDType dt, void *dst) {
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
  return PyBool_Check(o) ? LOOM_BOOL : PyLong_Check(o) ? LOOM_INT64 : LOOM_FLOAT64;
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

/* ---- raw kernels: CuPy's RawModule and RawKernel ---------------------------------------------------
 * RawModule owns a LoomRawModule on the module's context; RawFunction holds its module (functions are
 * owned by their module). raw_launch(function, grid, block, shared_mem, args, stream, ext_stream):
 * loom arrays (pending ones evaluated first, on the launch's stream) and objects with
 * __cuda_array_interface__ are LOOM_RAW_ARG_ARRAY; NumPy scalars (and 0-d arrays) are scalars of their
 * own dtype; Python bool/int/float take the parameter's type (ints range-checked; an int too big for
 * the signed type but fitting the unsigned one of that width takes the unsigned one); where the
 * parameter list is unknown (a cubin not loaded yet) they take NumPy's/CuPy's defaults (bool, int64,
 * float64). NumPy arrays are refused (raw kernels read device memory). stream is a spec as for
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
static PyType_Spec rawmod_spec = {"loom._core.RawModule", sizeof(RawModuleObject), 0, Py_TPFLAGS_DEFAULT,
                                  rawmod_slots};
static void rawfn_dealloc(RawFunctionObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  Py_XDECREF(self->module);
  tp->tp_free(self);
  Py_DECREF(tp);
}
static PyType_Slot rawfn_slots[] = {{Py_tp_dealloc, rawfn_dealloc}, {0, NULL}};
static PyType_Spec rawfn_spec = {"loom._core.RawFunction", sizeof(RawFunctionObject), 0, Py_TPFLAGS_DEFAULT,
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
  if (fmt < LOOM_RAW_AUTO || fmt > LOOM_RAW_CUDA) {
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
  LoomDeviceKind dk = LOOM_DEVICE_CUDA;
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
    int is_nd = st->np_ndarray && PyObject_TypeCheck(o, (PyTypeObject *)st->np_ndarray);
    int is_num = PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o);
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
      cai[i].device = LOOM_DEVICE_CUDA;
      cai[i].device_index = (int32_t)dev;
      ra[i].kind = LOOM_RAW_ARG_ARRAY;
      ra[i].array = &cai[i];
      if (PyList_Append(keep, o) < 0) goto out;
      continue;
    }
    LoomDType dt;
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
    if (x->desc.device == LOOM_DEVICE_CUDA && !any_loom_gpu) {
      any_loom_gpu = 1;
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

/* ---- module ------------------------------------------------------------------------------------------ */
#define FASTF(name) {#name, (PyCFunction)(void (*)(void))core_##name, METH_FASTCALL, NULL}
static PyMethodDef core_methods[] = {
    FASTF(unary), FASTF(binary), FASTF(where), FASTF(clip), FASTF(const), FASTF(cast), FASTF(movement),
    FASTF(reduce), FASTF(empty), FASTF(from_buffer), FASTF(view), FASTF(eval), FASTF(assign), FASTF(become),
    FASTF(configure), FASTF(placeholder), FASTF(fuse_entry), FASTF(fuse_exec),
    FASTF(fuse_configure), FASTF(to_device), FASTF(from_pointer),
    FASTF(device_synchronize), FASTF(stream_create), FASTF(event_create), FASTF(stream_use), FASTF(event_record),
    FASTF(event_elapsed), FASTF(pool_stats), FASTF(pool_free_all),
    {"device_count", (PyCFunction)core_device_count, METH_O, "loom_device_count(kind)"},
    {"close_handle", (PyCFunction)core_close_handle, METH_O, "destroy a stream or event now"},
    {"stream_synchronize", (PyCFunction)core_stream_synchronize, METH_O, NULL},
    {"stream_ptr", (PyCFunction)core_stream_ptr, METH_O, "the CUstream of a stream"},
    {"event_synchronize", (PyCFunction)core_event_synchronize, METH_O, NULL},
    {"has_stream_api", (PyCFunction)core_has_stream_api, METH_NOARGS, NULL},
    {"flush", (PyCFunction)core_flush, METH_NOARGS, "evaluate every pending array"},
    {"stats", (PyCFunction)core_stats, METH_NOARGS, "kernel statistics of the context (loom_get_stats)"},
    {"context_address", (PyCFunction)core_context_address, METH_NOARGS, "the LoomContext * as an int"},
    {"set_eager", (PyCFunction)core_set_eager, METH_O, "set eager mode; returns the old setting"},
    {"set_graph_bound", (PyCFunction)core_set_graph_bound, METH_O, "set the node bound; returns the old one"},
    {"current_graph", (PyCFunction)core_current_graph, METH_NOARGS, NULL},
    {"trace_graph", (PyCFunction)core_trace_graph, METH_NOARGS, NULL},
    {"tracer_node", (PyCFunction)core_tracer_node, METH_O, NULL},
    {"from_dlpack_capsule", (PyCFunction)core_from_dlpack_capsule, METH_O, NULL},
    FASTF(uk_elementwise), FASTF(uk_reduction), FASTF(uk_call), FASTF(uk_dump),
    FASTF(uk_configure),
    FASTF(raw_module), FASTF(raw_module_text), FASTF(raw_get_function), FASTF(raw_launch),
    {"raw_params", (PyCFunction)core_raw_params, METH_O, "[(kind, size)] of a raw function, or None"},
    {NULL}};

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
  Py_VISIT(st->graph);
  Py_VISIT(st->axis_error);
  return 0;
}
static int core_clear(PyObject *m) {
  ModState *st = state_of_module(m);
  if (!st) return 0;
  Py_CLEAR(st->graph);
  Py_CLEAR(st->array_cls);
  Py_CLEAR(st->axis_error);
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
static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "loom._core",
                                         "Loom's CPython extension: lazy arrays over the Loom C API",
                                         sizeof(ModState), core_methods, core_slots, core_traverse,
                                         core_clear, core_free};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
