/* SPDX-License-Identifier: Apache-2.0 */
/* eval_threads.c: what lets several Python threads evaluate at once (eval.c's "Threads" contract): the
 * calling thread's current graph (a strong reference in its thread state's dict) and the evaluation of a
 * graph by its owner with the GIL released around loom_eval, the graph marked busy meanwhile.
 */
#include "core.h"

/* ---- the calling thread's current graph ----------------------------------------------------------
 * A strong reference in the thread state's dict (under graph_key, one per module state), so that it dies
 * with its thread; graph_cache remembers the last thread's one (borrowed: a graph that dies leaves the
 * cache, live_unlink). A thread that reuses a dead thread's identifier may find that thread's graph in
 * the cache while the graph lives on (its pending arrays hold it) and build on in it: harmless, as its
 * first owner is gone. */
GraphObject *thread_graph(ModState *st) {
  unsigned long me = PyThread_get_thread_ident();
  if (st->graph_cache && st->graph_cache_thread == me) return st->graph_cache;
  PyObject *d = st->graph_key ? PyThreadState_GetDict() : NULL;
  if (!d) return NULL;
  PyObject *g = PyDict_GetItemWithError(d, st->graph_key); /* borrowed; a str key raises nothing */
  if (!g) return NULL;
  st->graph_cache = (GraphObject *)g;
  st->graph_cache_thread = me;
  return (GraphObject *)g;
}

/* Makes gr (NULL: none) the calling thread's current graph; 0 or -1 with an exception. */
int set_thread_graph(ModState *st, GraphObject *gr) {
  if (!st->graph_key && !(st->graph_key = PyUnicode_FromFormat("loom._core.current_graph.%p", (void *)st))) return -1;
  PyObject *d = PyThreadState_GetDict();
  if (!d) {
    PyErr_SetString(PyExc_RuntimeError, "loom: the calling thread has no thread state dict for its current graph");
    return -1;
  }
  /* the cache first: dropping the old graph may deallocate it, which clears the cache only if it is there */
  st->graph_cache = gr;
  st->graph_cache_thread = PyThread_get_thread_ident();
  int rc = gr ? PyDict_SetItem(d, st->graph_key, (PyObject *)gr) : PyDict_DelItem(d, st->graph_key);
  if (rc < 0 && !gr && PyErr_ExceptionMatches(PyExc_KeyError)) { /* not in the dict: a dead thread's, see above */
    PyErr_Clear();
    rc = 0;
  }
  if (rc < 0) st->graph_cache = NULL;
  return rc;
}

/* ---- evaluation without the GIL --------------------------------------------------------------------
 * The owner of a graph evaluates it without the GIL when the work is worth a GIL hand-over: a GPU
 * (launches, and waits for the device), or an input or output of NOGIL_ELEMS elements or more (NumPy
 * releases it above a few hundred; a small host evaluation is a few microseconds, less than a contended
 * hand-over). While it does, gr->busy is set: a thread that must evaluate gr meanwhile waits (wait_idle)
 * with the GIL released. The runtime's guarantee this rests on: loom_eval of distinct graphs from several
 * threads at once on one context (loom.h "Threads"); its stats, caches, pools and last-error slots are
 * locked or per thread there. */
enum { EVAL_OUTS_MAX = 32 /* outputs per loom_eval call */ };

static void busy_init(ModState *st) { /* under the GIL: no two threads initialize at once */
  if (st->busy_ready) return;
  pthread_mutex_init(&st->busy_lock, NULL);
  pthread_cond_init(&st->busy_cond, NULL);
  st->busy_ready = 1;
}

/* gr->busy and st->nogil_evals are written under the GIL only (set_busy: before the GIL is released and
 * after it is taken back), and read under the GIL (is_busy) or, without it, by waiters under busy_lock.
 * So they are atomics, and the lock and broadcast are paid only when a thread waits (st->busy_waiters;
 * an uncontended evaluation took two lock pairs and a broadcast). No lost wake-up: a waiter counts itself
 * in and then reads the flag, under the lock; set_busy clears the flag and then reads the count (both
 * sequentially consistent), so either the waiter sees the flag clear or set_busy sees the waiter and
 * broadcasts under the lock, which the waiter holds until pthread_cond_wait releases it. */
static void set_busy(ModState *st, GraphObject *gr, int busy) {
  busy_init(st);
  __atomic_store_n(&gr->busy, busy, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&st->nogil_evals, busy ? 1 : -1, __ATOMIC_SEQ_CST);
  if (!busy && __atomic_load_n(&st->busy_waiters, __ATOMIC_SEQ_CST) > 0) {
    pthread_mutex_lock(&st->busy_lock);
    pthread_cond_broadcast(&st->busy_cond);
    pthread_mutex_unlock(&st->busy_lock);
  }
}

int is_busy(ModState *st, GraphObject *gr) {
  (void)st;
  return __atomic_load_n(&gr->busy, __ATOMIC_SEQ_CST);
}

/* Waits, with the GIL released, until no thread evaluates gr without the GIL (the caller holds gr). */
void wait_idle(ModState *st, GraphObject *gr) {
  busy_init(st);
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&st->busy_lock);
  __atomic_add_fetch(&st->busy_waiters, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&gr->busy, __ATOMIC_SEQ_CST)) pthread_cond_wait(&st->busy_cond, &st->busy_lock);
  __atomic_sub_fetch(&st->busy_waiters, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&st->busy_lock);
  Py_END_ALLOW_THREADS
}

/* loom_eval of gr's k nodes into outs, at most EVAL_OUTS_MAX per call (thousands of pending arrays of one
 * node, a loop making `x * 2` each time, would otherwise be one kernel storing into thousands of buffers,
 * past what a GPU kernel's parameter block holds: the H200, 16 KB asked, 4 KB allowed). *done: outputs
 * of the calls that finished. Without the GIL when the calling thread owns gr, nobody else evaluates it
 * (never: see wait_idle) and the work is large (big: the largest output's elements, gpu: on a GPU); the
 * op device of the caller (ModState.op_*: the op being built when an operand is evaluated) is kept. */
LoomStatus eval_graph(ModState *st, GraphObject *gr, Py_ssize_t k, LoomNode *nodes, LoomArray *outs,
                             int64_t big, int gpu, Py_ssize_t *done) {
  int nogil = !gr->trace && !st->hold_gil && gr->owner == PyThread_get_thread_ident() &&
              (gpu || big >= NOGIL_ELEMS || gr->max_in >= NOGIL_ELEMS);
  LoomStatus s = LOOM_OK;
  *done = 0;
  if (!nogil) {
    while (*done < k && !s) {
      Py_ssize_t m = k - *done < EVAL_OUTS_MAX ? k - *done : EVAL_OUTS_MAX;
      s = loom_eval(gr->g, (int32_t)m, nodes + *done, outs + *done);
      if (!s) *done += m;
    }
    return s;
  }
  int op_devfree = st->op_devfree;
  LoomDeviceKind op_kind = st->op_kind;
  int32_t op_index = st->op_index;
  LoomGraph *g = gr->g;
  Py_ssize_t n = 0;
  set_busy(st, gr, 1);
  Py_BEGIN_ALLOW_THREADS
  while (n < k && !s) {
    Py_ssize_t m = k - n < EVAL_OUTS_MAX ? k - n : EVAL_OUTS_MAX;
    s = loom_eval(g, (int32_t)m, nodes + n, outs + n);
    if (!s) n += m;
  }
  Py_END_ALLOW_THREADS
  set_busy(st, gr, 0);
  st->op_devfree = op_devfree;
  st->op_kind = op_kind;
  st->op_index = op_index;
  *done = n;
  return s;
}

/* Waits, with the GIL released, until no evaluation runs without the GIL; meanwhile new ones keep it
 * (hold_gil). Back under the GIL, none runs without it until the caller lets the GIL go again. */
void wait_nogil_evals(ModState *st) {
  if (!st->busy_ready) return;
  st->hold_gil++;
  Py_BEGIN_ALLOW_THREADS
  pthread_mutex_lock(&st->busy_lock);
  __atomic_add_fetch(&st->busy_waiters, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&st->nogil_evals, __ATOMIC_SEQ_CST) > 0) pthread_cond_wait(&st->busy_cond, &st->busy_lock);
  __atomic_sub_fetch(&st->busy_waiters, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&st->busy_lock);
  Py_END_ALLOW_THREADS
  st->hold_gil--;
}
