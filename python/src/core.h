/* SPDX-License-Identifier: Apache-2.0 */
/* core.h: what the files of the CPython extension loom._core share (internal; hidden visibility).
 *
 * Approach. PEP 489 multi-phase init; everything lives in per-module state (ModState), no C globals.
 * Four heap types for arrays:
 *   Context  owns the LoomContext; Buffers and Graphs hold a reference, so the context outlives them
 *            even when the module is torn down first.
 *   Buffer   owns array memory: aligned_alloc'ed, allocated by loom_eval (freed with loom_array_free),
 *            a Py_buffer imported from another object, or a DLPack tensor imported from a capsule.
 *   Graph    owns a LoomGraph, the set of Buffers its inputs read (kept alive until the graph dies)
 *            and the list of its pending arrays (intrusive, eval.c). A "trace" graph belongs to @loom.fuse.
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
 * Threads (eval.c): each Python thread builds into a current graph of its own, under the GIL; an
 * evaluation by the graph's owner thread releases the GIL around loom_eval (other threads wait for a
 * graph being evaluated so), one by any other thread keeps it.
 *
 * Files (one concept each; every file registers its module functions through its <file>_functions
 * table, added by module.c's exec slot, and its heap types through the PyType_Spec it exports):
 *   module.c       module definition, per-module state lifetime, errors (Loom status -> exception),
 *                  the Context type, dtype names
 *   array.c        Buffer and Array types: attributes, buffer protocol, descriptors, result wrapping
 *   eval.c         Graph type, evaluation of pending arrays, the current graph, assign/become, settings
 *   eval_threads.c each thread's current graph, evaluation with the GIL released (busy graphs)
 *   ops.c          operands (arrays and scalars -> nodes) and the op functions (unary ... reduce)
 *   create.c       creation (empty), import (buffer, pointer), views, copies between devices
 *   fuse.c         @loom.fuse: tracing support, FuseEntry, and Fused's per-call fast path
 *   fuse_bundle.c  @loom.fuse signatures rebuilt from a loaded AOT bundle without tracing
 *   dlpack.c       DLPack export (__dlpack__) and import (capsules)
 *   device.c       devices, streams (made or borrowed), events, pool figures; the stream of one kernel call
 *   memory.c       raw device memory: blocks from the pool, byte copies, the pool's limit
 *   user_kernel.c  CuPy's ElementwiseKernel and ReductionKernel
 *   raw_kernel.c   CuPy's RawModule and RawKernel
 *   linalg.c       matrix products (graph nodes) and decompositions (loom_linalg)
 * The extension talks to libloom only through its public C API (loom/loom.h).
 */
#ifndef LOOM_PYTHON_CORE_H
#define LOOM_PYTHON_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "loom/loom.h"

/* ---- DLPack (the subset of dlpack.h v0.8 that the legacy "dltensor" capsule uses) --------------- */
typedef struct {
  int32_t device_type; /* kDLCPU = 1 */
  int32_t device_id;
} DLDevice;
typedef struct {
  uint8_t code; /* kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6 */
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
enum { DL_CPU = 1, DL_CUDA = 2, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4, DL_COMPLEX = 5, DL_BOOL = 6 };

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
#pragma weak loom_stream_wrap

/* ---- module state and objects -------------------------------------------------------------------- */
struct GraphObject;
typedef struct {
  PyObject *ctx_obj;           /* Context */
  PyTypeObject *context_type, *buffer_type, *graph_type, *array_type;
  PyObject *array_cls;         /* the Python subclass loom.ndarray (set by the package), or NULL */
  /* The current graph is per thread (eval.c): a strong reference in the thread state's dict under
   * graph_key; graph_cache (borrowed) is graph_cache_thread's, skipping the dict on the hot path. */
  PyObject *graph_key;
  struct GraphObject *graph_cache;
  unsigned long graph_cache_thread;
  struct GraphObject *live;    /* every non-trace Graph alive (borrowed; GraphObject.live_next) */
  /* GraphObject.busy and nogil_evals are atomics written under the GIL; busy_cond (under busy_lock) is
   * signalled when one ends while busy_waiters > 0 (eval_threads.c's set_busy) */
  pthread_mutex_t busy_lock;
  pthread_cond_t busy_cond;
  int busy_ready;              /* busy_lock and busy_cond are initialized */
  int nogil_evals;             /* evaluations running without the GIL (atomic) */
  int busy_waiters;            /* threads waiting on busy_cond (atomic) */
  int hold_gil;                /* set_dump is waiting for them: new evaluations keep the GIL */
  PyObject *axis_error;        /* numpy.exceptions.AxisError when set, else NULL (ValueError) */
  PyObject *oom_error;         /* loom.cuda.memory.OutOfMemoryError when set, else NULL (MemoryError) */
  int eager;
  int32_t bound;               /* node bound of a graph */
  uint64_t graph_serial;       /* the last GraphObject.serial handed out */
  /* device of the operands of the op being built (set by graph_for, read by lazy_result) */
  int op_devfree;              /* 1: no operand has a device (constants only) */
  LoomDeviceKind op_kind;
  int32_t op_index;
  PyTypeObject *handle_type;
  PyTypeObject *fuse_entry_type, *fused_type; /* @loom.fuse fast path */
  PyObject *np_ndarray, *np_asarray;          /* numpy.ndarray and numpy.asarray (fuse_configure) */
  PyTypeObject *uk_type, *rawmod_type, *rawfn_type; /* user kernels and raw kernels */
  PyObject *uk_convert, *uk_stream;           /* kernel arguments -> loom arrays, stream= -> spec (uk_configure) */
  PyObject *linalg_error;                     /* LOOM_ERR_LINALG's class (numpy.linalg.LinAlgError), or NULL */
  PyObject *current_device;                   /* () -> (kind, index) of the calling thread's current device
                                               * (configure), or NULL: where constant-only arrays land */
  PyObject *operators;                        /* tuple of the Python operator methods the C slots fall back
                                               * to (set_operators; array.c's OPERATOR_* order), or NULL */
  struct ArrayObject *free_arrays;            /* dead array_cls instances kept for reuse (array.c), linked
                                               * by pending_next */
  int nfree_arrays;
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

struct ArrayObject;
typedef struct GraphObject {
  PyObject_HEAD
  PyObject *ctx_obj;
  LoomGraph *g;
  PyObject *keep;    /* set of Buffers read by inputs */
  PyObject *bound;   /* dict: Buffer -> list of the nodes bound to its memory (eval.c bind_result); NULL: none */
  struct ArrayObject *pending; /* the pending (lazy) Arrays of a non-trace graph: an intrusive list, borrowed
                                * (each member holds a reference to the graph; see pending_link) */
  Py_ssize_t npending;
  int trace;
  uint64_t serial;   /* unique within the module (never reused, unlike the address): ArrayObject.in_serial */
  unsigned long owner; /* the thread it was made current for: the only one that builds in it */
  int retired;       /* no longer any thread's current graph: new ops go to a new one */
  int busy;          /* its owner evaluates it without the GIL (atomic: eval_threads.c) */
  int64_t max_in;    /* elements of its largest input (input_node): whether an evaluation is worth the GIL */
  int64_t kept_bytes; /* bytes of the arrays entered as inputs (input_node): keep holds their buffers alive */
  struct GraphObject *live_prev, *live_next; /* ModState.live (non-trace graphs) */
  ModState *st;      /* its module's state (lives as long as the module, which its type holds) */
} GraphObject;

typedef struct ArrayObject {
  PyObject_HEAD
  int lazy;
  LoomArray desc;            /* dtype, ndim, shape always; data and strides when materialized */
  PyObject *buffer;          /* Buffer (materialized) */
  PyObject *graph;           /* Graph (lazy) */
  LoomNode node;
  int devfree;               /* computed from constants only: a lazy one fits any device (one of 1+ dims is
                              * made on its home device), a materialized 0-d host one is a constant */
  int export_ok;             /* made by _core.exportable: exports even under LOOM_STRICT_CONVERSION */
  PyObject *weakreflist;
  struct ArrayObject *pending_prev, *pending_next; /* in graph->pending while lazy in a non-trace graph */
  int linked;
  /* A materialized array's input node in the graph whose serial is in_serial (0: none), so that an array
   * used by several ops of one graph (`x * 2 + x`) enters it once: later uses skip loom_input (a descriptor
   * hash and probe) and the graph's set of buffers. Cleared whenever desc or buffer changes (adopt_result,
   * become). */
  uint64_t in_serial;
  LoomNode in_node;
} ArrayObject;
/* An Array (with loom.ndarray's slot and the GC header) stays within CPython's small-object allocator
 * (512 bytes): the system malloc and free it took at 648 bytes (the buffer protocol's byte geometry,
 * now made per export) were a tenth of a lazy op. */
_Static_assert(sizeof(ArrayObject) + 2 * sizeof(void *) + sizeof(PyObject *) <= 512,
               "ArrayObject outgrows pymalloc's small objects");

extern struct PyModuleDef core_module;

static inline ModState *state_of_module(PyObject *m) { return (ModState *)PyModule_GetState(m); }
static inline ModState *state_of_type(PyTypeObject *t) {
  PyObject *m = PyType_GetModuleByDef(t, &core_module);
  return m ? state_of_module(m) : NULL;
}
static inline LoomContext *ctx_of(ModState *st) { return ((ContextObject *)st->ctx_obj)->ctx; }

/* The state of the module a module-level function is called on. */
#define MODSTATE ModState *st = state_of_module(module)
/* A METH_FASTCALL entry for core_<name> in a file's <file>_functions table. */
#define FASTF(name) {#name, (PyCFunction)(void (*)(void))core_##name, METH_FASTCALL, NULL}

/* ---- module.c ---- */
extern const char *const dtype_names[LOOM_DTYPE_COUNT];
/* Raises the Python exception for a failed Loom call and returns NULL. */
PyObject *raise_status(ModState *st, LoomStatus s);
/* Raises for a failed kernel call: LOOM_ERR_INVALID_ARGUMENT is a ValueError (TypeError when
 * invalid_is_type: raw launches), the rest as raise_status. */
PyObject *raise_kernel(ModState *st, LoomStatus s, int invalid_is_type);

/* ---- array.c ---- */
extern PyType_Spec buffer_spec, array_spec;
BufferObject *buffer_new(ModState *st, int kind);
/* Whether o is a loom array (an instance of _core.Array or a subclass). Inline, with the two types every
 * op meets (loom.ndarray and _core.Array) compared first and static types (Python scalars) answered by a
 * flag: PyType_IsSubtype walks the MRO, and an op asks up to five times (a tenth of a lazy op). */
static inline int is_array(ModState *st, PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (t == (PyTypeObject *)st->array_cls || t == st->array_type) return 1;
  /* _core.Array is a heap type and so is every subclass: float, int, numpy.ndarray are never arrays */
  return PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) && PyType_IsSubtype(t, st->array_type);
}
/* The module state when o is a loom array, else NULL (no exception): the operator slots' test, without
 * PyType_GetModuleByDef's MRO walk (array.c). */
ModState *array_state(PyObject *o);
/* Whether o is a dtype container (a subclass of loom.ndarray: datetime64 / timedelta64 values kept as
 * int64, loom/_temporal.py); refuse_container raises the TypeError for one met by `what` (returns -1). */
int container_array(ModState *st, PyObject *o);
int refuse_container(PyObject *o, const char *what);
ArrayObject *array_alloc(ModState *st);
/* Frees the kept dead arrays (array.c's free list): when the array class changes and at module clear. */
void array_freelist_clear(ModState *st);
/* C-contiguous strides; all zero for an empty array, as NumPy's new arrays. */
void contiguous_strides(LoomArray *d);
int64_t numel(const LoomArray *d);
int is_c_contiguous(const LoomArray *d);
/* A materialized Array on buffer b with descriptor d (steals nothing). */
ArrayObject *array_materialized(ModState *st, PyObject *buffer, const LoomArray *d);
/* Turns `a` into a materialized array holding the Loom-allocated result `out`. */
int adopt_result(ModState *st, ArrayObject *a, const LoomArray *out);
/* Wraps out (a loom_eval result, ownership taken) as a new Array, or a NumPy array when numpy_out. */
PyObject *wrap_result(ModState *st, LoomArray *out, int numpy_out);
/* numpy.asarray of the Array v for loom's own NumPy-in, NumPy-out calls (an exporting view: see
 * LOOM_STRICT_CONVERSION in array.c). */
PyObject *numpy_of(ModState *st, PyObject *v);
PyObject *tuple_i64(int n, const int64_t *v, int64_t scale);
/* The dtype of a buffer-protocol format with that item size; -1 when loom has none. */
int format_dtype(const char *f, size_t item, LoomDType *out);
/* A descriptor of the buffer in v (host memory); -1 with an exception. */
int view_desc(const Py_buffer *v, LoomArray *d, const char *what);

/* ---- eval.c ---- */
extern PyType_Spec graph_spec;
/* a (lazy, a->graph set, not a trace graph) joins its graph's pending list; pending_unlink leaves it
 * (a no-op when not linked). Every change of a->lazy or a->graph unlinks first. */
void pending_link(ArrayObject *a);
void pending_unlink(ArrayObject *a);
extern PyMethodDef eval_functions[];
GraphObject *graph_new(ModState *st, int trace);
/* Raises the TypeError for observing a value traced by @loom.fuse; returns NULL. */
PyObject *trace_error(void);
/* Evaluates the lazy arrays among items (non-arrays skipped), one loom_eval per graph; 0 or -1. */
int materialize_many(ModState *st, PyObject **items, Py_ssize_t n);
int materialize(ModState *st, ArrayObject *a);
/* Evaluates every pending array of every thread's graphs and retires those graphs. */
int flush_all(ModState *st);
/* The graph new nodes go into: the calling thread's current one, flushed and replaced when past the bound. */
GraphObject *current_graph(ModState *st);
/* Before writing into buffer: evaluate every pending array of each graph (any thread's) that reads it. */
int before_write(ModState *st, PyObject *buffer);

/* ---- eval_threads.c ---- */
/* Work of at least NOGIL_ELEMS elements (an input or an output) is evaluated without the GIL. */
enum { NOGIL_ELEMS = 1 << 14 };
/* The calling thread's current graph (borrowed), or NULL; set_thread_graph makes gr (NULL: none) it. */
GraphObject *thread_graph(ModState *st);
int set_thread_graph(ModState *st, GraphObject *gr);
/* Whether gr's owner evaluates it without the GIL now; wait_idle waits (GIL released) until it does not. */
int is_busy(ModState *st, GraphObject *gr);
void wait_idle(ModState *st, GraphObject *gr);
/* loom_eval of gr's k nodes into outs in calls of at most 32 outputs (*done: those finished), without the
 * GIL when the caller owns gr and the work is large (big: the largest output's elements; gpu: on a GPU). */
LoomStatus eval_graph(ModState *st, GraphObject *gr, Py_ssize_t k, LoomNode *nodes, LoomArray *outs, int64_t big,
                      int gpu, Py_ssize_t *done);
/* Returns once no evaluation runs without the GIL (the caller holds it: none starts before it lets go). */
void wait_nogil_evals(ModState *st);

/* ---- ops.c ---- */
extern PyMethodDef ops_functions[];
/* The operators with C slots, in the order of ModState.operators (two methods each: forward, reflected). */
enum {
  OPERATOR_ADD, OPERATOR_SUB, OPERATOR_MUL, OPERATOR_TRUEDIV, OPERATOR_FLOORDIV, OPERATOR_MOD, OPERATOR_POW,
  OPERATOR_AND, OPERATOR_OR, OPERATOR_XOR, OPERATOR_LSHIFT, OPERATOR_RSHIFT,
  OPERATOR_LT, OPERATOR_LE, OPERATOR_GT, OPERATOR_GE, OPERATOR_EQ, OPERATOR_NE, OPERATOR_COUNT
};
/* The unary operators with C slots; their Python fallbacks follow the binary ones in ModState.operators. */
enum { UNARY_NEG, UNARY_ABS, UNARY_INVERT, UNARY_COUNT };
PyObject *array_unary_operator(int which, PyObject *x);
/* v OP w for the binary slots (either may be the loom array) and self OP other for tp_richcompare. */
PyObject *array_binary_operator(int slot, PyObject *v, PyObject *w);
PyObject *array_power_operator(PyObject *v, PyObject *w);
PyObject *array_compare_operator(PyObject *self, PyObject *other, int cmp);
/* The graph an op on these operands builds in (borrowed); sets st->op_* (the operands' device). */
GraphObject *graph_for(ModState *st, PyObject *const *ops, int n);
int input_node(ModState *st, GraphObject *gr, ArrayObject *a, LoomNode *out);
/* The node of operand o (array or Python scalar) in graph gr. */
int node_of(ModState *st, GraphObject *gr, PyObject *o, LoomNode *out);
/* A new lazy array for node in gr (eager mode: evaluated at once). */
PyObject *lazy_result(ModState *st, GraphObject *gr, LoomNode node);
int parse_dtype(PyObject *o, LoomDType *out);
/* A sequence of ints (None: LOOM_SLICE_NONE) into out[0..*n), at most LOOM_MAX_RANK. */
int parse_i64s(PyObject *seq, int64_t *out, int32_t *n, const char *what);

/* ---- create.c ---- */
extern PyMethodDef create_functions[];
/* An array on the memory of base (materialized): offset bytes from its first element, d's shape, dtype and
 * strides in bytes. devfree: base's flag before it was materialized. NULL with an exception for strides or
 * an offset the dtype's items do not divide. */
ArrayObject *view_in(ModState *st, ArrayObject *base, int devfree, long long off, LoomArray *d);

/* ---- fuse.c ---- */
extern PyType_Spec fuse_entry_spec, fused_spec;
extern PyMethodDef fuse_functions[];
extern PyMethodDef fuse_bundle_functions[]; /* fuse_bundle.c */

/* ---- basic_index.c ---- */
extern PyMethodDef basic_index_functions[];

/* ---- sort.c ---- */
extern PyMethodDef sort_functions[];

/* ---- dlpack.c ---- */
extern PyMethodDef dlpack_functions[];
PyObject *array_dlpack(ArrayObject *self, PyObject *args, PyObject *kwds);
PyObject *array_dlpack_device(ArrayObject *self, PyObject *unused);

/* ---- device.c ---- */
extern PyType_Spec handle_spec;
extern PyMethodDef device_functions[];
/* ---- memory.c ---- */
extern PyMethodDef memory_functions[];
/* (kind, index) Python ints -> a host (0, 0) or CUDA (1, n) device; -1 with a ValueError. */
int parse_device(PyObject *kind, PyObject *index, LoomDeviceKind *k, int32_t *i);
/* The live stream (k 0) or event (k 1) behind handle o, or NULL with an exception. */
void *handle_ptr(ModState *st, PyObject *o, int k);
/* The stream of one kernel call: made current by call_stream_begin, the caller's one restored by
 * call_stream_end (which keeps an exception already set). */
typedef struct {
  int active;
  LoomDeviceKind kind;
  int32_t index;
  LoomStream *restore;
} CallStream;
int call_stream_begin(ModState *st, PyObject *spec, CallStream *cs);
int call_stream_end(ModState *st, CallStream *cs);

/* ---- user_kernel.c ---- */
extern PyType_Spec uk_spec;
extern PyMethodDef uk_functions[];
/* Stores Python scalar o as dtype dt into dst; -1 with an exception (OverflowError out of range). */
int store_scalar(PyObject *o, LoomDType dt, void *dst);

/* ---- raw_kernel.c ---- */
extern PyType_Spec rawmod_spec, rawfn_spec;
extern PyMethodDef raw_functions[];

/* ---- linalg.c ---- */
extern PyMethodDef linalg_functions[];

#endif
