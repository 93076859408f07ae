/* SPDX-License-Identifier: Apache-2.0 */
/* dlpack.c: DLPack exchange through the legacy "dltensor" capsule: export of a materialized array
 * (__dlpack__, zero-copy; the capsule holds the array) and import of a producer's capsule (zero-copy;
 * the producer's deleter runs when the loom array's Buffer dies). Devices: the host (kDLCPU), CUDA
 * (kDLCUDA) and AMD GPUs through HIP (kDLROCM, 10).
 */
#include "core.h"

/* ---- DLPack ---------------------------------------------------------------------------------------- */
#define DL_ROCM 10 /* kDLROCM: AMD GPU memory (HIP) */

/* The DLPack device type of a loom device kind (DL_CPU for the host). */
static int dl_type_of(LoomDeviceKind k) { return k == LOOM_DEVICE_CUDA ? DL_CUDA : k == LOOM_DEVICE_HIP ? DL_ROCM : DL_CPU; }
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

PyObject *array_dlpack(ArrayObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO", kwlist, &stream, &maxv, &dev, &copy)) return NULL;
  ModState *st = state_of_type(Py_TYPE(self));
  if (!st) return NULL;
  int gpu = self->desc.device != LOOM_DEVICE_HOST, dlt = dl_type_of(self->desc.device);
  if (stream != Py_None && !gpu) {
    PyErr_SetString(PyExc_ValueError, "__dlpack__: host arrays take stream=None");
    return NULL;
  }
  if (stream != Py_None && !PyLong_Check(stream)) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__: stream must be None or an int (a CUstream / hipStream_t handle, 1 or 2)");
    return NULL;
  }
  if (dev != Py_None) {
    long t = -1, i = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2) {
      t = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
      i = PyLong_AsLong(PyTuple_GET_ITEM(dev, 1));
    }
    if (t != dlt || i != (gpu ? self->desc.device_index : 0)) {
      PyErr_Clear();
      PyErr_Format(PyExc_BufferError, "__dlpack__: this array can only be exported to its own device (%d, %d)",
                   dlt, gpu ? (int)self->desc.device_index : 0);
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
  if (gpu && !(PyLong_Check(stream) && PyLong_AsLong(stream) == -1)) {
    LoomStatus ss = loom_device_synchronize(ctx_of(st), self->desc.device, self->desc.device_index);
    if (ss) return raise_status(st, ss);
  }
  DLHolder *h = PyMem_RawCalloc(1, sizeof *h);
  if (!h) return PyErr_NoMemory();
  LoomDType t = self->desc.dtype;
  static const uint8_t codes[LOOM_DTYPE_COUNT] = {DL_BOOL, DL_INT, DL_INT, DL_INT, DL_INT, DL_UINT, DL_UINT,
                                                  DL_UINT, DL_UINT, DL_FLOAT, DL_FLOAT, DL_FLOAT,
                                                  DL_BFLOAT, DL_COMPLEX, DL_COMPLEX};
  h->owner = Py_NewRef((PyObject *)self);
  h->mt.manager_ctx = h;
  h->mt.deleter = dl_deleter;
  DLTensor *dl = &h->mt.dl_tensor;
  dl->data = self->desc.data ? self->desc.data : (void *)h; /* never dereferenced when empty */
  dl->device.device_type = dlt;
  dl->device.device_id = gpu ? self->desc.device_index : 0;
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

PyObject *array_dlpack_device(ArrayObject *self, PyObject *unused) {
  if (self->desc.device != LOOM_DEVICE_HOST)
    return Py_BuildValue("(ii)", dl_type_of(self->desc.device), (int)self->desc.device_index);
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
  if (dl->device.device_type != DL_CPU && dl->device.device_type != DL_CUDA && dl->device.device_type != DL_ROCM) {
    PyErr_Format(PyExc_BufferError, "from_dlpack: DLPack device type %d is not the host (1), CUDA (2) or ROCm (10)",
                 (int)dl->device.device_type);
    return NULL;
  }
  LoomArray d;
  memset(&d, 0, sizeof d);
  if (dl->device.device_type != DL_CPU) {
    d.device = dl->device.device_type == DL_CUDA ? LOOM_DEVICE_CUDA : LOOM_DEVICE_HIP;
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
  else if (code == DL_BFLOAT && bits == 16) d.dtype = LOOM_BFLOAT16;
  else if (code == DL_COMPLEX && (bits == 64 || bits == 128)) d.dtype = bits == 64 ? LOOM_COMPLEX64 : LOOM_COMPLEX128;
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

PyMethodDef dlpack_functions[] = {
    {"from_dlpack_capsule", (PyCFunction)core_from_dlpack_capsule, METH_O, NULL},
    {NULL}};
