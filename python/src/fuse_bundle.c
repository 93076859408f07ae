/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_bundle.c: @loom.fuse calls served by a loaded AOT bundle without tracing (loom_aot.h, bundle
 * format 1.2's FUSE section), and the graph address loom.aot hands to libloom when it records them.
 *
 * fuse_bundle_graph(identity, args, arrays) is what Fusion._miss asks before it traces: it makes a trace
 * graph with one placeholder per array argument (as placeholder() does: a distinct fake address, the
 * argument's dtype, shape and strides), describes the scalar arguments (exact Python bool, int within
 * int64, float, complex; anything else: None, the caller traces), and lets libloom rebuild the bundled
 * graph for these sizes (loom_bundle_fuse_build). The result is what fuse_entry takes, or None when no
 * loaded bundle has the signature or the rebuild does not fit the call (the trace then runs and reports
 * any error as usual).
 */
#include "core.h"
#include "loom/loom_aot.h"

enum { FB_MAX_ARGS = 64, FB_MAX_OUTS = 256 };

static PyObject *int_tuple_of(const int32_t *v, int32_t n) {
  PyObject *t = PyTuple_New(n);
  for (int32_t i = 0; t && i < n; i++) {
    PyObject *x = PyLong_FromLong(v[i]);
    if (!x) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, i, x);
  }
  return t;
}

/* fuse_bundle_graph(identity: str, args: tuple, arrays: tuple) -> (graph, in_args, in_nodes, out_nodes,
 * is_tuple, write_args) or None; arrays[j] is the loom array of argument j, or None for a scalar. */
static PyObject *core_fuse_bundle_graph(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2]) ||
      PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[2])) {
    PyErr_SetString(PyExc_TypeError, "fuse_bundle_graph(identity, args, arrays)");
    return NULL;
  }
  const char *identity = PyUnicode_AsUTF8(args[0]);
  if (!identity) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
  if (n < 1 || n > FB_MAX_ARGS) Py_RETURN_NONE;
  LoomFuseArg fa[FB_MAX_ARGS];
  int32_t in_args[FB_MAX_ARGS], in_nodes[FB_MAX_ARGS], nin = 0;
  memset(fa, 0, sizeof(LoomFuseArg) * (size_t)n);
  for (Py_ssize_t j = 0; j < n; j++) { /* the arguments' kinds first: no graph for a call that cannot use one */
    PyObject *o = PyTuple_GET_ITEM(args[1], j), *arr = PyTuple_GET_ITEM(args[2], j);
    LoomFuseArg *a = &fa[j];
    if (arr != Py_None) {
      if (!is_array(st, arr)) Py_RETURN_NONE;
      a->kind = LOOM_FUSE_ARRAY;
    } else if (PyBool_Check(o)) {
      a->kind = LOOM_FUSE_BOOL, a->i = o == Py_True;
    } else if (PyLong_CheckExact(o)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        Py_RETURN_NONE;
      }
      a->kind = LOOM_FUSE_INT, a->i = v;
    } else if (PyFloat_CheckExact(o)) {
      a->kind = LOOM_FUSE_FLOAT, a->re = PyFloat_AS_DOUBLE(o);
    } else if (PyComplex_CheckExact(o)) {
      a->kind = LOOM_FUSE_COMPLEX, a->re = PyComplex_RealAsDouble(o), a->im = PyComplex_ImagAsDouble(o);
    } else {
      Py_RETURN_NONE; /* NumPy scalars, subclasses: the trace decides */
    }
  }
  for (Py_ssize_t j = 0; j < n; j++) /* is there a record? (no graph is made for a call without one) */
    if (fa[j].kind == LOOM_FUSE_ARRAY) {
      const LoomArray *d = &((ArrayObject *)PyTuple_GET_ITEM(args[2], j))->desc;
      fa[j].dtype = (int32_t)d->dtype, fa[j].ndim = d->ndim;
    }
  if (!loom_bundle_fuse_find(ctx_of(st), identity, (int32_t)n, fa)) Py_RETURN_NONE;
  GraphObject *gr = graph_new(st, 1);
  if (!gr) return NULL;
  for (Py_ssize_t j = 0; j < n; j++) {
    if (fa[j].kind != LOOM_FUSE_ARRAY) continue;
    ArrayObject *a = (ArrayObject *)PyTuple_GET_ITEM(args[2], j);
    LoomArray d = a->desc;
    if (a->lazy) contiguous_strides(&d);
    d.data = (void *)(uintptr_t)(64 * (uintptr_t)(nin + 1)); /* as placeholder(): distinct fake addresses */
    LoomNode x;
    if (loom_input(gr->g, &d, &x) != LOOM_OK) {
      Py_DECREF(gr);
      Py_RETURN_NONE;
    }
    fa[j].dtype = (int32_t)d.dtype, fa[j].ndim = d.ndim, fa[j].node = x;
    in_args[nin] = (int32_t)j, in_nodes[nin++] = x;
  }
  LoomNode outs[FB_MAX_OUTS];
  int32_t nout = 0, nwrite = 0, writes[FB_MAX_OUTS];
  int is_tuple = 0, found = 0;
  LoomStatus s = loom_bundle_fuse_build(gr->g, identity, (int32_t)n, fa, outs, FB_MAX_OUTS, &nout, &nwrite, writes,
                                        &is_tuple, &found);
  if (s != LOOM_OK || !found) {
    Py_DECREF(gr);
    Py_RETURN_NONE;
  }
  PyObject *t_in = int_tuple_of(in_args, nin), *t_nodes = int_tuple_of(in_nodes, nin);
  PyObject *t_out = int_tuple_of(outs, nout), *t_w = int_tuple_of(writes, nwrite);
  PyObject *r = NULL;
  if (t_in && t_nodes && t_out && t_w)
    r = PyTuple_Pack(6, (PyObject *)gr, t_in, t_nodes, t_out, is_tuple ? Py_True : Py_False, t_w);
  Py_XDECREF(t_in);
  Py_XDECREF(t_nodes);
  Py_XDECREF(t_out);
  Py_XDECREF(t_w);
  Py_DECREF(gr);
  return r;
}

/* graph_address(graph) -> int: the LoomGraph * of a Graph (loom.aot records traces through libloom). */
static PyObject *core_graph_address(PyObject *module, PyObject *arg) {
  MODSTATE;
  if (!PyObject_TypeCheck(arg, st->graph_type)) {
    PyErr_SetString(PyExc_TypeError, "graph_address(graph)");
    return NULL;
  }
  return PyLong_FromVoidPtr(((GraphObject *)arg)->g);
}

PyMethodDef fuse_bundle_functions[] = {
    FASTF(fuse_bundle_graph),
    {"graph_address", (PyCFunction)core_graph_address, METH_O, "the LoomGraph * of a Graph as an int"},
    {NULL}};
