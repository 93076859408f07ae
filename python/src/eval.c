/* SPDX-License-Identifier: Apache-2.0 */
/* eval.c: the Graph type and the evaluation of pending arrays. Ops build nodes in the module's
 * current graph; observation and `eval` evaluate pending arrays, several at once in one loom_eval per
 * graph. When the current graph passes its node bound its live pending arrays are evaluated and a new
 * graph starts. Before a write into a Buffer that the current graph reads, every pending array of that
 * graph is evaluated, so no pending value ever changes. Also the module's settings (eager mode, the
 * node bound, the array class) and in-place updates (assign, become).
 *
 * Threads. Each Python thread builds into a current graph of its own (a strong reference in its thread
 * state's dict, so it dies with the thread), always under the GIL: ops never share a graph between
 * threads. The thread a graph was made for (its owner) evaluates it with the GIL released around
 * loom_eval (compiling, host kernels, GPU launches and waits, copies), as loom.h allows loom_eval of
 * distinct graphs from several threads on one context: nothing else builds in that graph, and another
 * thread that must evaluate it meanwhile (a pending array handed to it, a flush before a write) waits,
 * with the GIL released, until the owner's evaluation has ended and its results are adopted. A thread
 * that does not own a graph evaluates it with the GIL held: its owner may be part-way through an op in
 * it (an operand being evaluated elsewhere releases the GIL in the middle of an op). Every non-trace
 * graph alive is on ModState.live, so that a write into a buffer and a flush reach every graph that may
 * hold pending arrays, whichever thread built it. The per-thread graph and the GIL-free evaluation
 * itself are eval_threads.c's.
 */
#include "core.h"

/* ---- Graph --------------------------------------------------------------------------------------- */
static int graph_traverse(GraphObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->keep);
  Py_VISIT(self->bound);
  Py_VISIT(Py_TYPE(self));
  return 0; /* the pending list is borrowed: its members hold references to the graph, not the reverse */
}
static int graph_clear(GraphObject *self) {
  Py_CLEAR(self->keep);
  Py_CLEAR(self->bound);
  return 0;
}
static void live_unlink(GraphObject *gr) {
  ModState *st = gr->st;
  if (!st) return;
  if (gr->live_prev) gr->live_prev->live_next = gr->live_next;
  else st->live = gr->live_next;
  if (gr->live_next) gr->live_next->live_prev = gr->live_prev;
  if (st->graph_cache == gr) st->graph_cache = NULL;
  gr->live_prev = gr->live_next = NULL;
  gr->st = NULL;
}

static void graph_dealloc(GraphObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  live_unlink(self);
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
PyType_Spec graph_spec = {"loom._core.Graph", sizeof(GraphObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, graph_slots};

GraphObject *graph_new(ModState *st, int trace) {
  GraphObject *gr = PyObject_GC_New(GraphObject, st->graph_type);
  if (!gr) return NULL;
  gr->ctx_obj = Py_NewRef(st->ctx_obj);
  gr->g = NULL;
  gr->trace = trace;
  gr->serial = ++st->graph_serial;
  gr->keep = PySet_New(NULL);
  gr->bound = NULL;
  gr->pending = NULL;
  gr->npending = 0;
  gr->owner = PyThread_get_thread_ident();
  gr->retired = 0;
  gr->busy = 0;
  gr->max_in = 0;
  gr->kept_bytes = 0;
  gr->live_prev = gr->live_next = NULL;
  gr->st = NULL;
  if (!trace) { /* joins the live list */
    gr->st = st;
    gr->live_next = st->live;
    if (st->live) st->live->live_prev = gr;
    st->live = gr;
  }
  PyObject_GC_Track(gr);
  if (!gr->keep) {
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

/* ---- the pending list ----------------------------------------------------------------------------
 * A graph's pending arrays form an intrusive doubly linked list (no allocation per op, unlike a list of
 * weak references, and no dead entries to skip): an array joins when it becomes lazy in a non-trace graph
 * and leaves when it is materialized, takes another value (become) or dies. Members are borrowed: each
 * holds a reference to the graph, so the graph outlives its list. */
void pending_link(ArrayObject *a) {
  GraphObject *gr = (GraphObject *)a->graph;
  if (a->linked || !a->lazy || !gr || gr->trace) return;
  a->pending_prev = NULL;
  a->pending_next = gr->pending;
  if (gr->pending) gr->pending->pending_prev = a;
  gr->pending = a;
  gr->npending++;
  a->linked = 1;
}

void pending_unlink(ArrayObject *a) {
  if (!a->linked) return;
  GraphObject *gr = (GraphObject *)a->graph;
  if (a->pending_prev) a->pending_prev->pending_next = a->pending_next;
  else gr->pending = a->pending_next;
  if (a->pending_next) a->pending_next->pending_prev = a->pending_prev;
  a->pending_prev = a->pending_next = NULL;
  gr->npending--;
  a->linked = 0;
}

/* ---- evaluation ---------------------------------------------------------------------------------- */
PyObject *trace_error(void) {
  PyErr_SetString(PyExc_TypeError,
                  "a value traced by @loom.fuse cannot be observed while tracing (bool(), float(), if, "
                  "printing, NumPy conversion): the traced function must not branch on array values; "
                  "use loom.where(cond, a, b) instead, or call the function without @loom.fuse");
  return NULL;
}

/* After an evaluation: when gr is the calling thread's current graph, more than half full or holding
 * KEPT_BYTES_RETIRE bytes of input arrays alive, and none of its arrays is still pending, the next op starts
 * a new graph. (Its keep set holds every array it read: a loop that reads a new temporary array each step,
 * `y = empty(...); y[...] = ...; (y / 255).get()`, kept ~85 of them alive until the node bound, 1 GB for
 * 12 MB images, and their pool blocks could not be handed out again: every step page-faulted new memory.) Otherwise a loop that observes each result
 * (`(x * lr - b).get()` with a new lr every step: each step adds nodes, since new values are new nodes)
 * reaches the bound in the middle of a later expression, whose flush cuts it in two (new structures, new
 * kernels). */
enum { KEPT_BYTES_RETIRE = 32 << 20 };
static void retire_if_drained(ModState *st, GraphObject *gr) {
  if (gr != thread_graph(st) || gr->npending > 0) return;
  if (loom_graph_node_count(gr->g) <= st->bound / 2 && gr->kept_bytes < KEPT_BYTES_RETIRE) return;
  gr->retired = 1;
  if (set_thread_graph(st, NULL) < 0) PyErr_Clear(); /* cannot fail for a graph in the dict; retired anyway */
}

/* Companions: a 0-d pending array of the graph, on the device evaluated, that shares a computed node with
 * the arrays asked (loom_nodes_share) is evaluated with them: a training step's loss beside its new
 * parameters. Evaluated later on its own (printed, or flushed by a synchronize()), it would compute the
 * shared part again, the step's forward matrix product included; with them it costs one small reduction.
 * At most MAX_COMPANIONS, looked for among the COMPANION_WINDOW newest pending arrays (a bounded cost per
 * evaluation, however many are pending); an evaluation that fails with companions is retried without
 * them (their errors are their own, raised when they are read). */
enum { MAX_COMPANIONS = 8, COMPANION_WINDOW = 64 };
static int companion_of(const ArrayObject *p, const ArrayObject *a) {
  return p->lazy && p->desc.ndim == 0 && !p->devfree && p->desc.device == a->desc.device &&
         p->desc.device_index == a->desc.device_index;
}
static Py_ssize_t count_companions(const GraphObject *gr, const ArrayObject *a) {
  Py_ssize_t c = 0, seen = 0;
  for (const ArrayObject *p = gr->pending; p && c < MAX_COMPANIONS && seen++ < COMPANION_WINDOW; p = p->pending_next)
    c += companion_of(p, a);
  return c;
}
static Py_ssize_t add_companions(GraphObject *gr, const ArrayObject *a, ArrayObject **who, LoomNode *nodes,
                                 Py_ssize_t k, Py_ssize_t room) {
  Py_ssize_t asked = k, seen = 0;
  for (ArrayObject *p = gr->pending; p && k < asked + room && seen++ < COMPANION_WINDOW; p = p->pending_next) {
    if (!companion_of(p, a)) continue;
    int dup = 0;
    for (Py_ssize_t q = 0; q < k && !dup; q++) dup = who[q] == p;
    int32_t share = 0;
    if (dup || loom_nodes_share(gr->g, (int32_t)asked, nodes, 1, &p->node, &share) != LOOM_OK || !share) continue;
    who[k] = p;
    nodes[k++] = p->node;
  }
  return k;
}

/* Evaluates the lazy arrays among items (a sequence of objects; non-arrays are skipped), grouped by
 * graph, one loom_eval per graph, with their companions. Returns 0 or -1 with an exception. */
enum { MANY_ON_STACK = 4 };
#define FREE_MANY()                                                                                              \
  do {                                                                                                           \
    if (nodes != nodes_s) {                                                                                      \
      PyMem_Free(nodes);                                                                                         \
      PyMem_Free(outs);                                                                                          \
      PyMem_Free(who);                                                                                           \
    }                                                                                                            \
  } while (0)
/* The passes can fold away every input of a result (`-129 >= x` of an int8 x is a constant), and loom_eval
 * then computes it on the host: found on the H200 (fuzz seeds 700402, 238140311773652252; fill and
 * setitem through folded constants), where the array then sat on the host while loom said a GPU. It
 * belongs on the device its operands were on: *o (a fresh host result of loom_eval) is copied there
 * (through a C-contiguous host copy when it is strided: a broadcast constant) and freed. */

static int onto_device(ModState *st, LoomArray *o, LoomDeviceKind kind, int32_t index) {
  LoomContext *ctx = ctx_of(st);
  int64_t n = numel(o);
  LoomArray tmp, d;
  memset(&tmp, 0, sizeof tmp);
  memset(&d, 0, sizeof d);
  d.dtype = o->dtype;
  d.ndim = o->ndim;
  memcpy(d.shape, o->shape, sizeof d.shape);
  d.device = kind;
  d.device_index = index;
  LoomStatus s = loom_array_alloc(ctx, &d);
  const LoomArray *src = o;
  if (!s && n > 0 && !is_c_contiguous(o)) {
    tmp = d;
    tmp.device = LOOM_DEVICE_HOST;
    tmp.device_index = 0;
    tmp.data = NULL;
    s = loom_array_alloc(ctx, &tmp);
    if (!s) {
      size_t item = loom_dtype_size(o->dtype);
      int64_t idx[LOOM_MAX_RANK] = {0};
      for (int64_t e = 0; e < n; e++) {
        int64_t off = 0;
        for (int k = 0; k < o->ndim; k++) off += idx[k] * o->strides[k];
        memcpy((char *)tmp.data + e * (int64_t)item, (const char *)o->data + off * (int64_t)item, item);
        for (int k = o->ndim - 1; k >= 0; k--) {
          if (++idx[k] < o->shape[k]) break;
          idx[k] = 0;
        }
      }
      src = &tmp;
    }
  }
  if (!s && n > 0) {
    LoomArray sc = *src;
    contiguous_strides(&sc); /* C-contiguous: canonical strides describe the same elements */
    s = loom_array_copy(ctx, &d, &sc);
  }
  if (tmp.data) loom_array_free(ctx, &tmp);
  if (s) {
    if (d.data) loom_array_free(ctx, &d);
    raise_status(st, s);
    return -1;
  }
  loom_array_free(ctx, o);
  *o = d;
  return 0;
}

/* Whether b still wants the value of gr's node: another thread may have given it a new value (become,
 * or an evaluation of its own) while the GIL was released. */
static int still_wanted(ArrayObject *b, GraphObject *gr, LoomNode node) {
  return b->lazy && b->graph == (PyObject *)gr && b->node == node;
}

/* The graph's node of an array just evaluated now reads the array's memory (loom_node_bind), so the
 * arrays still pending on it (built on it before it was needed: a view, a printed value, a .T of a
 * product) read it instead of computing it again. The binding is a cache: before that memory is written
 * (before_write), the node is unbound and computes its value from its sources again, whose memory is
 * unchanged (a write into them flushes the graph first), so pending arrays keep NumPy's eager values and
 * a write costs no flush. gr->bound holds the buffer (its memory stays valid) and the nodes bound to it. */
static int bind_result(ModState *st, GraphObject *gr, LoomNode node, ArrayObject *a) {
  (void)st;
  if (gr->retired || numel(&a->desc) == 0) return 0;
  if (!gr->bound && !(gr->bound = PyDict_New())) return -1;
  PyObject *nodes = PyDict_GetItemWithError(gr->bound, a->buffer); /* borrowed */
  if (!nodes) {
    if (PyErr_Occurred() || !(nodes = PyList_New(0))) return -1;
    int rc = PyDict_SetItem(gr->bound, a->buffer, nodes);
    Py_DECREF(nodes); /* the dict holds it */
    if (rc < 0) return -1;
  }
  PyObject *v = PyLong_FromLong(node);
  if (!v || PyList_Append(nodes, v) < 0) {
    Py_XDECREF(v);
    return -1;
  }
  Py_DECREF(v);
  if (loom_node_bind(gr->g, node, &a->desc) != LOOM_OK) return 0; /* not bound: computed again if needed */
  if (numel(&a->desc) > gr->max_in) gr->max_in = numel(&a->desc);
  return 0;
}

/* bind_result when a pending array of gr is built on node (only those can read the bound value; a bound
 * buffer stays alive with the graph, so a result nothing pending reads is not kept: a loop that evaluates
 * a new result each step beside an unrelated pending array must not hold every result). */
static int bind_if_read(ModState *st, GraphObject *gr, LoomNode node, ArrayObject *a) {
  enum { ON_STACK = 64 };
  LoomNode users_s[ON_STACK], *users = users_s;
  if (gr->npending > ON_STACK && !(users = PyMem_Malloc(sizeof *users * (size_t)gr->npending))) {
    PyErr_NoMemory();
    return -1;
  }
  int32_t n = 0, reads = 0;
  for (ArrayObject *p = gr->pending; p && n < gr->npending; p = p->pending_next)
    if (p->node >= node) users[n++] = p->node; /* an earlier node cannot be built on it */
  LoomStatus s = n > 0 ? loom_node_reaches(gr->g, node, n, users, &reads) : LOOM_OK;
  if (users != users_s) PyMem_Free(users);
  if (s) return 0; /* not bound: computed again if needed */
  return reads ? bind_result(st, gr, node, a) : 0;
}

/* Before buffer's memory is written: every node bound to it computes its value again (bind_result). */
static int unbind_buffer(GraphObject *gr, PyObject *buffer) {
  if (!gr->bound) return 0;
  PyObject *nodes = PyDict_GetItemWithError(gr->bound, buffer);
  if (!nodes) return PyErr_Occurred() ? -1 : 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(nodes); i++)
    (void)loom_node_unbind(gr->g, (LoomNode)PyLong_AsLong(PyList_GET_ITEM(nodes, i)));
  return PyDict_DelItem(gr->bound, buffer);
}

int materialize_many(ModState *st, PyObject **items, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!is_array(st, items[i])) continue;
    ArrayObject *a = (ArrayObject *)items[i];
    if (!a->lazy) continue;
    GraphObject *gr = (GraphObject *)a->graph;
    if (gr->trace) {
      trace_error();
      return -1;
    }
    if (is_busy(st, gr)) { /* its owner evaluates it without the GIL: wait, then look at items[i] again */
      Py_INCREF(gr);
      wait_idle(st, gr);
      Py_DECREF(gr);
      i--;
      continue;
    }
    /* collect every lazy array of this graph among items[i..] */
    Py_ssize_t cnt = 0;
    for (Py_ssize_t j = i; j < n; j++)
      if (is_array(st, items[j]) && ((ArrayObject *)items[j])->lazy && ((ArrayObject *)items[j])->graph == (PyObject *)gr)
        cnt++; /* an upper bound: the loop below takes those on a's device */
    Py_ssize_t room = count_companions(gr, a);
    cnt += room;
    /* bookkeeping on the stack for a few arrays (the common case: one), else on the heap */
    LoomNode nodes_s[MANY_ON_STACK];
    LoomArray outs_s[MANY_ON_STACK];
    ArrayObject *who_s[MANY_ON_STACK];
    LoomNode *nodes = nodes_s;
    LoomArray *outs = outs_s;
    ArrayObject **who = who_s;
    if (cnt > MANY_ON_STACK) {
      nodes = PyMem_Malloc(sizeof(LoomNode) * (size_t)cnt);
      outs = PyMem_Malloc(sizeof(LoomArray) * (size_t)cnt);
      who = PyMem_Malloc(sizeof(ArrayObject *) * (size_t)cnt);
      if (!nodes || !outs || !who) {
        PyMem_Free(nodes);
        PyMem_Free(outs);
        PyMem_Free(who);
        PyErr_NoMemory();
        return -1;
      }
    }
    memset(outs, 0, sizeof(LoomArray) * (size_t)cnt);
    Py_ssize_t k = 0;
    int64_t big = 0;
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
      if (b->devfree && b->desc.device != LOOM_DEVICE_HOST) {
        /* constant-only: no input says where it runs; it is made on its home device (lazy_result) */
        LoomArray *o = &outs[k];
        o->dtype = b->desc.dtype;
        o->ndim = b->desc.ndim;
        memcpy(o->shape, b->desc.shape, sizeof o->shape);
        o->device = b->desc.device;
        o->device_index = b->desc.device_index;
        LoomStatus as = loom_array_alloc(ctx_of(st), o);
        /* an empty one has nothing to compute, and no memory on a GPU: given to loom_eval, its NULL data
         * would ask for a new array, made on the host */
        if (!as && numel(o) == 0 && adopt_result(st, b, o) == 0) {
          memset(o, 0, sizeof *o);
          continue;
        }
        if (as || PyErr_Occurred()) {
          if (as) raise_status(st, as);
          for (Py_ssize_t q = 0; q < k; q++) loom_array_free(ctx_of(st), &outs[q]);
          FREE_MANY();
          return -1;
        }
      }
      if (numel(&b->desc) > big) big = numel(&b->desc);
      k++;
    }
    Py_ssize_t asked = k, devfree = 0;
    for (Py_ssize_t q = 0; q < k; q++) devfree |= who[q]->devfree; /* their outputs are made beforehand */
    if (room && !devfree) k = add_companions(gr, a, who, nodes, k, room);
    /* strong references across the evaluation: without the GIL, another thread may drop the last one */
    Py_INCREF(gr);
    Py_ssize_t held = k;
    for (Py_ssize_t q = 0; q < held; q++) Py_INCREF(who[q]);
    Py_ssize_t done = 0;
    int gpu = a->desc.device != LOOM_DEVICE_HOST;
    LoomStatus s = eval_graph(st, gr, k, nodes, outs, big, gpu, &done);
    if (s && k > asked) { /* again without the companions */
      for (Py_ssize_t q = 0; q < done; q++) loom_array_free(ctx_of(st), &outs[q]);
      memset(outs, 0, sizeof(LoomArray) * (size_t)k);
      k = asked;
      s = eval_graph(st, gr, k, nodes, outs, big, gpu, &done);
    }
    int rc = 0;
    if (s) {
      raise_status(st, s);
      for (Py_ssize_t q = 0; q < k; q++) /* results of finished calls, and the outputs given to loom_eval */
        if (q < done || (who[q]->devfree && who[q]->desc.device != LOOM_DEVICE_HOST)) loom_array_free(ctx_of(st), &outs[q]);
      rc = -1;
    } else {
      for (Py_ssize_t q = 0; q < k; q++) {
        if (!still_wanted(who[q], gr, nodes[q])) {
          loom_array_free(ctx_of(st), &outs[q]);
          nodes[q] = -1; /* not adopted: nothing to bind */
          continue;
        }
        int scalar_const = who[q]->devfree && who[q]->desc.ndim == 0 && outs[q].device == LOOM_DEVICE_HOST;
        int moved = !who[q]->devfree && who[q]->desc.device != LOOM_DEVICE_HOST && outs[q].device == LOOM_DEVICE_HOST;
        if (moved && onto_device(st, &outs[q], who[q]->desc.device, who[q]->desc.device_index) < 0) {
          for (Py_ssize_t r = q; r < k; r++) loom_array_free(ctx_of(st), &outs[r]);
          rc = -1;
          break;
        }
        int was_devfree = who[q]->devfree;
        if (adopt_result(st, who[q], &outs[q]) < 0) {
          for (Py_ssize_t r = q + 1; r < k; r++) loom_array_free(ctx_of(st), &outs[r]);
          rc = -1;
          break;
        }
        who[q]->devfree = scalar_const; /* a 0-d constant still fits any device (node_of: a constant) */
        if (was_devfree) nodes[q] = -1;
      }
      for (Py_ssize_t q = 0; rc == 0 && gr->npending > 0 && q < k; q++)
        if (nodes[q] >= 0 && bind_if_read(st, gr, nodes[q], who[q]) < 0) rc = -1;
    }
    if (rc == 0) retire_if_drained(st, gr);
    for (Py_ssize_t q = 0; q < held; q++) Py_DECREF(who[q]);
    Py_DECREF(gr);
    FREE_MANY();
    if (rc) return rc;
  }
  return 0;
}

#undef FREE_MANY

int materialize(ModState *st, ArrayObject *a) {
  PyObject *o = (PyObject *)a;
  return a->lazy ? materialize_many(st, &o, 1) : 0;
}

/* Retires gr (the next op of its owner starts a new graph) and evaluates its live pending arrays. */
static int flush_graph(ModState *st, GraphObject *gr) {
  Py_INCREF(gr);
  gr->retired = 1;
  int rc = thread_graph(st) == gr ? set_thread_graph(st, NULL) : 0;
  /* strong references first: evaluating one array may run code that drops another */
  PyObject *live = rc == 0 ? PyList_New(0) : NULL;
  if (!live) rc = -1;
  for (ArrayObject *a = gr->pending; rc == 0 && a; a = a->pending_next) rc = PyList_Append(live, (PyObject *)a);
  if (rc == 0) rc = materialize_many(st, PySequence_Fast_ITEMS(live), PyList_GET_SIZE(live));
  Py_XDECREF(live);
  Py_DECREF(gr);
  return rc;
}

/* Flushes each graph of the live list that reads buffer (every one when buffer is NULL) and has pending
 * arrays or is some thread's current graph, and the calling thread's current graph when buffer is NULL.
 * The graphs are listed first: an evaluation may release the GIL, and other threads change the list. */
static int flush_matching(ModState *st, PyObject *buffer) {
  GraphObject *mine = thread_graph(st);
  Py_ssize_t hits = 0;
  for (GraphObject *g = st->live; g; g = g->live_next) {
    if (g->npending == 0 && g->retired) continue;
    int has = buffer ? PySet_Contains(g->keep, buffer) : (g->npending > 0 || g == mine);
    if (has < 0) return -1;
    hits += has;
  }
  if (hits == 0) return 0;
  PyObject *list = PyList_New(0);
  if (!list) return -1;
  int rc = 0;
  for (GraphObject *g = st->live; g && rc == 0; g = g->live_next) {
    if (g->npending == 0 && g->retired) continue;
    int has = buffer ? PySet_Contains(g->keep, buffer) : (g->npending > 0 || g == mine);
    rc = has < 0 ? -1 : has ? PyList_Append(list, (PyObject *)g) : 0;
  }
  for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(list); i++)
    rc = flush_graph(st, (GraphObject *)PyList_GET_ITEM(list, i));
  Py_DECREF(list);
  return rc;
}

int flush_all(ModState *st) { return flush_matching(st, NULL); }

/* The graph new nodes go into: the calling thread's current one, flushed and replaced when past the bound,
 * replaced when another thread retired it (a flush). */
GraphObject *current_graph(ModState *st) {
  GraphObject *gr = thread_graph(st);
  if (gr && !gr->retired && (loom_graph_node_count(gr->g) > st->bound || gr->npending > 4 * (Py_ssize_t)st->bound)) {
    if (flush_graph(st, gr) < 0) return NULL;
    gr = thread_graph(st); /* NULL, unless code run by the flush started a new one */
  }
  if (gr && gr->retired) {
    if (set_thread_graph(st, NULL) < 0) return NULL;
    gr = NULL;
  }
  if (!gr) {
    gr = graph_new(st, 0);
    if (!gr) return NULL;
    int rc = set_thread_graph(st, gr);
    Py_DECREF(gr); /* the thread's dict holds it */
    if (rc < 0) return NULL;
  }
  return gr;
}

/* Before writing into buffer: evaluate every pending array of each graph (any thread's) that reads it. */
int before_write(ModState *st, PyObject *buffer) {
  for (GraphObject *g = st->live; g && buffer; g = g->live_next)
    if (unbind_buffer(g, buffer) < 0) return -1;
  return flush_matching(st, buffer);
}

/* ---- evaluation entry points ---------------------------------------------------------------------- */
/* eval(*arrays): loom.eval itself (no Python frame per call): evaluates them, in one loom_eval per graph,
 * and returns them (the one array, else the tuple). */
static PyObject *core_eval(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (materialize_many(st, (PyObject **)args, nargs) < 0) return NULL;
  if (nargs == 1) return Py_NewRef(args[0]);
  PyObject *t = PyTuple_New(nargs);
  for (Py_ssize_t i = 0; t && i < nargs; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(args[i]));
  return t;
}

static PyObject *core_flush(PyObject *module, PyObject *unused) {
  MODSTATE;
  if (flush_all(st) < 0) return NULL;
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
  if (container_array(st, args[0])) {
    refuse_container(args[0], "writing computed values");
    return NULL;
  }
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
    /* a destination the value reads (x[::-1] = x) is handled by loom_eval (a temporary on the GPU). An
     * empty destination has nothing to write, and on a GPU no memory: its NULL data would ask loom_eval
     * for a new array (made on the host), which replaced the destination's descriptor */
    if (!s && numel(&dst->desc) > 0) { /* into a copy of the descriptor: the GIL may be released */
      LoomArray out = dst->desc;
      PyObject *mem = Py_NewRef(dst->buffer); /* another thread may give dst a new buffer meanwhile */
      Py_ssize_t done;
      s = eval_graph(st, gr, 1, &b, &out, numel(&out), out.device != LOOM_DEVICE_HOST, &done);
      Py_DECREF(mem);
    }
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
  if (container_array(st, args[0])) {
    refuse_container(args[0], "an in-place operation");
    return NULL;
  }
  if (x == y) Py_RETURN_NONE;
  pending_unlink(x);
  x->lazy = y->lazy;
  x->desc = y->desc;
  x->in_serial = 0;
  x->node = y->node;
  x->devfree = y->devfree;
  Py_XSETREF(x->graph, Py_XNewRef(y->graph));
  Py_XSETREF(x->buffer, Py_XNewRef(y->buffer));
  pending_link(x);
  Py_RETURN_NONE;
}

static PyObject *core_stats(PyObject *module, PyObject *unused) {
  MODSTATE;
  LoomStats s;
  LoomStatus rc = loom_get_stats(ctx_of(st), &s);
  if (rc) return raise_status(st, rc);
  return Py_BuildValue("{sKsKsKsdsKsKsKsKsKsKsKsK}", "kernels_launched", (unsigned long long)s.kernels_launched,
                       "kernels_compiled", (unsigned long long)s.kernels_compiled, "cache_hits",
                       (unsigned long long)s.cache_hits, "compile_ms", s.compile_ms, "last_eval_kernels",
                       (unsigned long long)s.last_eval_kernels, "temp_bytes_peak",
                       (unsigned long long)s.temp_bytes_peak, "library_calls",
                       (unsigned long long)s.library_calls, "plans_made", (unsigned long long)s.plans_made,
                       "copies_to_host", (unsigned long long)s.copies_to_host, "bytes_to_host",
                       (unsigned long long)s.bytes_to_host, "copies_to_device", (unsigned long long)s.copies_to_device,
                       "bytes_to_device", (unsigned long long)s.bytes_to_device);
}

/* config_info() -> dict: loom_get_config's facts (threads, dump bits, host target, cache folder). */
static PyObject *core_config_info(PyObject *module, PyObject *unused) {
  MODSTATE;
  LoomConfigInfo c;
  LoomStatus rc = loom_get_config(ctx_of(st), &c);
  if (rc) return raise_status(st, rc);
  return Py_BuildValue("{sisIsKssssss}", "num_threads", (int)c.num_threads, "dump_flags", (unsigned)c.dump_flags,
                       "cache_max_bytes", (unsigned long long)c.cache_max_bytes, "host_target", c.host_target,
                       "cache_dir", c.cache_dir, "cache_error", c.cache_error);
}

/* set_dump(words: str): loom_set_dump (LOOM_DUMP's words) from the next evaluation on. */
static PyObject *core_set_dump(PyObject *module, PyObject *arg) {
  MODSTATE;
  const char *words = PyUnicode_AsUTF8(arg);
  if (!words) return NULL;
  wait_nogil_evals(st); /* the runtime reads the dump bits in every evaluation without a lock */
  LoomStatus rc = loom_set_dump(ctx_of(st), words);
  if (rc) return raise_status(st, rc);
  Py_RETURN_NONE;
}

/* set_num_threads(n: int): loom_set_num_threads (0: the default). The GIL is released while dropped
 * workers finish their tasks. */
static PyObject *core_set_num_threads(PyObject *module, PyObject *arg) {
  MODSTATE;
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0 || n > INT32_MAX) n = -1; /* loom_set_num_threads says what the range is */
  LoomStatus rc;
  Py_BEGIN_ALLOW_THREADS
  rc = loom_set_num_threads(ctx_of(st), (int32_t)n);
  Py_END_ALLOW_THREADS
  if (rc) return raise_status(st, rc);
  Py_RETURN_NONE;
}

/* jit_level(level: int | None) -> int: the GPU JIT level setting before the call (-1: the default);
 * sets it when level is an int (loom_set_jit_level), only reads it for None. */
static PyObject *core_jit_level(PyObject *module, PyObject *arg) {
  MODSTATE;
  int32_t old = -1;
  LoomStatus rc = loom_get_jit_level(ctx_of(st), &old);
  if (rc) return raise_status(st, rc);
  if (arg != Py_None) {
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (v < INT32_MIN || v > INT32_MAX) v = 99; /* out of range: loom_set_jit_level says which */
    rc = loom_set_jit_level(ctx_of(st), (int32_t)v);
    if (rc) return raise_status(st, rc);
  }
  return PyLong_FromLong(old);
}

/* set_cache(dir: str | None, max_bytes: int): loom_set_cache (None: the environment's folder; "": off;
 * 0: the default bound). */
static PyObject *core_set_cache(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 2 || (args[0] != Py_None && !PyUnicode_Check(args[0])) || !PyLong_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "set_cache(dir: str | None, max_bytes: int)");
    return NULL;
  }
  const char *dir = args[0] == Py_None ? NULL : PyUnicode_AsUTF8(args[0]);
  if (args[0] != Py_None && !dir) return NULL;
  unsigned long long max_bytes = PyLong_AsUnsignedLongLong(args[1]);
  if (max_bytes == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  LoomStatus rc = loom_set_cache(ctx_of(st), dir, (uint64_t)max_bytes);
  if (rc) return raise_status(st, rc);
  Py_RETURN_NONE;
}

/* dump(arrays, kind[, ptx_arch, amdgpu_chip]) -> str: loom_dump_for of pending arrays' nodes (one array or a
 * tuple of arrays of one graph: one evaluation computing them all; kind: LoomDumpKind: 0 graph IR, 1 kernel IR,
 * 2 LLVM IR, 3 PTX, 4 AMDGPU assembly, 5 compile times; the archs str or None for loom_dump's); nothing is run. */
enum { DUMP_MAX_ARRAYS = 64 };
static PyObject *core_dump(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  static const char usage[] = "dump(array | tuple of arrays, kind[, ptx_arch: str | None, amdgpu_chip: str | None])";
  if ((nargs != 2 && nargs != 4) || !(is_array(st, args[0]) || PyTuple_Check(args[0])) || !PyLong_Check(args[1]) ||
      (nargs == 4 && ((args[2] != Py_None && !PyUnicode_Check(args[2])) ||
                      (args[3] != Py_None && !PyUnicode_Check(args[3]))))) {
    PyErr_SetString(PyExc_TypeError, usage);
    return NULL;
  }
  PyObject *const *items = &args[0];
  Py_ssize_t n = 1;
  if (PyTuple_Check(args[0])) {
    items = &PyTuple_GET_ITEM(args[0], 0);
    n = PyTuple_GET_SIZE(args[0]);
    if (n < 1 || n > DUMP_MAX_ARRAYS) {
      PyErr_Format(PyExc_ValueError, "dump: give 1 to %d arrays, not %zd", DUMP_MAX_ARRAYS, n);
      return NULL;
    }
  }
  LoomNode nodes[DUMP_MAX_ARRAYS];
  PyObject *graph = NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!is_array(st, items[i])) {
      PyErr_SetString(PyExc_TypeError, usage);
      return NULL;
    }
    ArrayObject *a = (ArrayObject *)items[i];
    if (!a->lazy) {
      PyErr_SetString(PyExc_ValueError, "dump: the array is not pending (it has been computed): inspect an "
                                        "expression before observing it");
      return NULL;
    }
    if (graph && a->graph != graph) {
      PyErr_SetString(PyExc_ValueError, "dump: the arrays belong to different graphs (pending expressions that "
                                        "were built apart, or on different devices): inspect them one at a time");
      return NULL;
    }
    graph = a->graph;
    nodes[i] = a->node;
  }
  long kind = PyLong_AsLong(args[1]);
  if (kind == -1 && PyErr_Occurred()) return NULL;
  LoomDumpTargets targets = {NULL, NULL};
  if (nargs == 4) {
    if (args[2] != Py_None && !(targets.ptx_arch = PyUnicode_AsUTF8(args[2]))) return NULL;
    if (args[3] != Py_None && !(targets.amdgpu_chip = PyUnicode_AsUTF8(args[3]))) return NULL;
  }
  char *text = NULL;
  LoomStatus rc = loom_dump_for(((GraphObject *)graph)->g, (LoomDumpKind)kind, &targets, (int32_t)n, nodes, &text);
  if (rc) return raise_status(st, rc);
  PyObject *r = PyUnicode_FromString(text);
  loom_free_string(ctx_of(st), text);
  return r;
}

/* context_address() -> int: the module's LoomContext * (loom.aot hands it to libloom's AOT API, loom_aot.h,
 * through ctypes). */
static PyObject *core_context_address(PyObject *module, PyObject *unused) {
  MODSTATE;
  return PyLong_FromVoidPtr(ctx_of(st));
}

static PyObject *core_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  /* configure(array_cls, axis_error[, current_device]) */
  MODSTATE;
  if ((nargs != 2 && nargs != 3) || !PyType_Check(args[0]) ||
      !PyType_IsSubtype((PyTypeObject *)args[0], st->array_type) ||
      (nargs == 3 && args[2] != Py_None && !PyCallable_Check(args[2]))) {
    PyErr_SetString(PyExc_TypeError, "configure(array_cls, axis_error[, current_device])");
    return NULL;
  }
  if (args[0] != st->array_cls) array_freelist_clear(st); /* kept arrays have the old class's size */
  Py_XSETREF(st->array_cls, Py_NewRef(args[0]));
  Py_XSETREF(st->axis_error, args[1] == Py_None ? NULL : Py_NewRef(args[1]));
  if (nargs == 3) Py_XSETREF(st->current_device, args[2] == Py_None ? NULL : Py_NewRef(args[2]));
  Py_RETURN_NONE;
}

static PyObject *core_set_eager(PyObject *module, PyObject *arg) {
  MODSTATE;
  int old = st->eager, v = PyObject_IsTrue(arg);
  if (v < 0) return NULL;
  st->eager = v;
  if (v && flush_all(st) < 0) return NULL;
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
  GraphObject *gr = thread_graph(st);
  return Py_NewRef(gr ? (PyObject *)gr : Py_None);
}

PyMethodDef eval_functions[] = {
    {"eval", (PyCFunction)(void (*)(void))core_eval, METH_FASTCALL,
     "eval(*arrays)\n--\n\nComputes several pending arrays in ONE evaluation, so that they fuse; returns them "
     "(the array, or a tuple of several)."},
    FASTF(assign), FASTF(become), FASTF(configure),
    {"flush", (PyCFunction)core_flush, METH_NOARGS, "evaluate every pending array"},
    {"stats", (PyCFunction)core_stats, METH_NOARGS, "kernel statistics of the context (loom_get_stats)"},
    {"config_info", (PyCFunction)core_config_info, METH_NOARGS, "the context's settings (loom_get_config)"},
    {"set_dump", (PyCFunction)core_set_dump, METH_O, "set the dumps (LOOM_DUMP's words)"},
    {"set_num_threads", (PyCFunction)core_set_num_threads, METH_O, "resize the host thread pool"},
    FASTF(set_cache),
    {"jit_level", (PyCFunction)core_jit_level, METH_O, "read (None) or set the GPU JIT level; returns the old one"},
    FASTF(dump),
    {"context_address", (PyCFunction)core_context_address, METH_NOARGS, "the LoomContext * as an int"},
    {"set_eager", (PyCFunction)core_set_eager, METH_O, "set eager mode; returns the old setting"},
    {"set_graph_bound", (PyCFunction)core_set_graph_bound, METH_O, "set the node bound; returns the old one"},
    {"current_graph", (PyCFunction)core_current_graph, METH_NOARGS, NULL},
    {NULL}};
