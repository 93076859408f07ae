/* SPDX-License-Identifier: Apache-2.0 */
/* device.c: devices, streams (made or borrowed), events and memory pool figures over the C API, and the
 * stream of one kernel call (call_stream_begin / call_stream_end, used by user and raw kernels).
 */
#include "core.h"

int parse_device(PyObject *kind, PyObject *index, LoomDeviceKind *k, int32_t *i) {
  long kv = PyLong_AsLong(kind), iv = PyLong_AsLong(index);
  if (PyErr_Occurred()) return -1;
  if ((kv != LOOM_DEVICE_HOST && kv != LOOM_DEVICE_CUDA && kv != LOOM_DEVICE_HIP) || iv < 0 || iv > INT32_MAX ||
      (kv == LOOM_DEVICE_HOST && iv != 0)) {
    PyErr_Format(PyExc_ValueError, "device (%ld, %ld) is not a host (0, 0), CUDA (1, n) or AMD/HIP (2, n) device", kv, iv);
    return -1;
  }
  *k = (LoomDeviceKind)kv;
  *i = (int32_t)iv;
  return 0;
}

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
PyType_Spec handle_spec = {"loom._core.Handle", sizeof(HandleObject), 0, Py_TPFLAGS_DEFAULT, handle_slots};

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
void *handle_ptr(ModState *st, PyObject *o, int k) {
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
/* stream_wrap(kind, index, handle) -> Handle: a stream over a driver stream made elsewhere (CuPy's
 * ExternalStream); closing it never destroys the handle. */
static PyObject *core_stream_wrap(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind dk;
  int32_t di;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "stream_wrap(kind, index, handle)");
    return NULL;
  }
  if (!have_stream_api() || parse_device(args[0], args[1], &dk, &di) < 0) return NULL;
  if (!loom_stream_wrap) {
    PyErr_SetString(PyExc_NotImplementedError, "this libloom cannot borrow streams (no loom_stream_wrap); rebuild "
                    "the package against a newer libloom");
    return NULL;
  }
  void *handle = PyLong_AsVoidPtr(args[2]);
  if (PyErr_Occurred()) return NULL;
  HandleObject *h = (HandleObject *)st->handle_type->tp_alloc(st->handle_type, 0);
  if (!h) return NULL;
  h->ctx_obj = Py_NewRef(st->ctx_obj);
  h->kind = 0;
  LoomStatus s = loom_stream_wrap(ctx_of(st), dk, di, handle, (LoomStream **)&h->ptr);
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

/* ---- streams for one call ---- */

/* Makes spec's stream current (spec: None or (kind, index, handle|None, restore|None)). */
int call_stream_begin(ModState *st, PyObject *spec, CallStream *cs) {
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
int call_stream_end(ModState *st, CallStream *cs) {
  if (!cs->active) return 0;
  cs->active = 0;
  LoomStatus s = loom_stream_use(ctx_of(st), cs->kind, cs->index, cs->restore);
  if (s && !PyErr_Occurred()) {
    raise_status(st, s);
    return -1;
  }
  return 0;
}

PyMethodDef device_functions[] = {
    FASTF(device_synchronize), FASTF(stream_create), FASTF(stream_wrap), FASTF(event_create), FASTF(stream_use), FASTF(event_record),
    FASTF(event_elapsed), FASTF(pool_stats), FASTF(pool_free_all),
    {"device_count", (PyCFunction)core_device_count, METH_O, "loom_device_count(kind)"},
    {"close_handle", (PyCFunction)core_close_handle, METH_O, "destroy a stream or event now"},
    {"stream_synchronize", (PyCFunction)core_stream_synchronize, METH_O, NULL},
    {"stream_ptr", (PyCFunction)core_stream_ptr, METH_O, "the CUstream of a stream"},
    {"event_synchronize", (PyCFunction)core_event_synchronize, METH_O, NULL},
    {"has_stream_api", (PyCFunction)core_has_stream_api, METH_NOARGS, NULL},
    {NULL}};
