/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: raw device memory for loom.cuda.memory and loom.cuda.runtime (CuPy's cupy.cuda.alloc,
 * MemoryPointer, runtime.malloc / memcpy / memset): blocks of bytes from loom's caching pool of a device,
 * copies of bytes between any two places (synchronous or enqueued on a stream), the pool's limit, and the
 * exception class pool exhaustion raises (CuPy's OutOfMemoryError, set by the package).
 *
 * A block is a uint8 array of its size as loom_array_alloc makes it, so the pool's figures and limit count
 * it like any array's memory; mem_free gives it back through loom_array_free with the same descriptor.
 */
#include "core.h"

#pragma weak loom_memcpy
#pragma weak loom_pool_set_limit
#pragma weak loom_pool_get_limit
#pragma weak loom_pool_cached_blocks
#pragma weak loom_memset

static int have_memory_api(void) {
  if (loom_memcpy && loom_pool_set_limit && loom_pool_get_limit && loom_pool_cached_blocks) return 1;
  PyErr_SetString(PyExc_NotImplementedError, "this libloom has no raw memory API (loom_memcpy ...); rebuild the "
                  "package against a newer libloom");
  return 0;
}

/* The descriptor of a block of n bytes at ptr on (kind, index): what loom_array_alloc / free see. */
static void block_desc(LoomArray *a, LoomDeviceKind k, int32_t i, void *ptr, int64_t n) {
  memset(a, 0, sizeof *a);
  a->dtype = LOOM_UINT8;
  a->ndim = 1;
  a->shape[0] = n;
  a->strides[0] = 1;
  a->device = k;
  a->device_index = i;
  a->data = ptr;
}

/* mem_alloc(kind, index, nbytes) -> the block's address (an int; nbytes 0 gives 0 on a GPU) */
static PyObject *core_mem_alloc(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "mem_alloc(kind, index, nbytes)");
    return NULL;
  }
  if (parse_device(args[0], args[1], &k, &i) < 0) return NULL;
  long long n = PyLong_AsLongLong(args[2]);
  if (n == -1 && PyErr_Occurred()) return NULL;
  if (n < 0) return PyErr_Format(PyExc_ValueError, "cannot allocate %lld bytes: the size must be >= 0", n);
  LoomArray a;
  block_desc(&a, k, i, NULL, n);
  LoomStatus s = loom_array_alloc(ctx_of(st), &a);
  if (s) return raise_status(st, s);
  return PyLong_FromVoidPtr(a.data);
}

/* mem_free(kind, index, ptr, nbytes): gives a block of mem_alloc back to the pool. */
static PyObject *core_mem_free(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "mem_free(kind, index, ptr, nbytes)");
    return NULL;
  }
  if (parse_device(args[0], args[1], &k, &i) < 0) return NULL;
  void *p = PyLong_AsVoidPtr(args[2]);
  long long n = PyLong_AsLongLong(args[3]);
  if (PyErr_Occurred()) return NULL;
  LoomArray a;
  block_desc(&a, k, i, p, n);
  loom_array_free(ctx_of(st), &a);
  Py_RETURN_NONE;
}

/* memcpy(dst, dkind, dindex, src, skind, sindex, nbytes, stream|None, async) */
static PyObject *core_memcpy(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind dk, sk;
  int32_t di, si;
  if (nargs != 9) {
    PyErr_SetString(PyExc_TypeError, "memcpy(dst, dkind, dindex, src, skind, sindex, nbytes, stream, async)");
    return NULL;
  }
  if (!have_memory_api() || parse_device(args[1], args[2], &dk, &di) < 0 || parse_device(args[4], args[5], &sk, &si) < 0)
    return NULL;
  void *dst = PyLong_AsVoidPtr(args[0]), *src = PyLong_AsVoidPtr(args[3]);
  long long n = PyLong_AsLongLong(args[6]);
  int async = PyObject_IsTrue(args[8]);
  if (PyErr_Occurred() || async < 0) return NULL;
  if (n < 0) return PyErr_Format(PyExc_ValueError, "cannot copy %lld bytes: the size must be >= 0", n);
  void *sp = NULL;
  if (args[7] != Py_None && !(sp = handle_ptr(st, args[7], 0))) return NULL;
  LoomStatus s;
  Py_BEGIN_ALLOW_THREADS
  s = loom_memcpy(ctx_of(st), dst, dk, di, src, sk, si, (size_t)n, (LoomStream *)sp, async);
  Py_END_ALLOW_THREADS
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

/* memset(dst, kind, index, value, nbytes, stream|None): value's low byte into nbytes from dst, enqueued on the
 * stream (None: the current one) as a kernel is */
static PyObject *core_memset(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 6) {
    PyErr_SetString(PyExc_TypeError, "memset(dst, kind, index, value, nbytes, stream)");
    return NULL;
  }
  if (!loom_memset) {
    PyErr_SetString(PyExc_NotImplementedError, "this libloom has no loom_memset; rebuild the package against a "
                    "newer libloom");
    return NULL;
  }
  if (parse_device(args[1], args[2], &k, &i) < 0) return NULL;
  void *dst = PyLong_AsVoidPtr(args[0]);
  long long v = PyLong_AsLongLong(args[3]), n = PyLong_AsLongLong(args[4]);
  if (PyErr_Occurred()) return NULL;
  if (n < 0) return PyErr_Format(PyExc_ValueError, "cannot fill %lld bytes: the size must be >= 0", n);
  void *sp = NULL;
  if (args[5] != Py_None && !(sp = handle_ptr(st, args[5], 0))) return NULL;
  LoomStatus s;
  Py_BEGIN_ALLOW_THREADS
  s = loom_memset(ctx_of(st), dst, k, i, (int)(v & 0xFF), (size_t)n, (LoomStream *)sp);
  Py_END_ALLOW_THREADS
  return s ? raise_status(st, s) : Py_NewRef(Py_None);
}

/* pool_limit(kind, index, limit|None) -> the limit in force (bytes; 0: none), after setting it if given */
static PyObject *core_pool_limit(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "pool_limit(kind, index, limit)");
    return NULL;
  }
  if (!have_memory_api() || parse_device(args[0], args[1], &k, &i) < 0) return NULL;
  LoomStatus s = LOOM_OK;
  if (args[2] != Py_None) {
    unsigned long long v = PyLong_AsUnsignedLongLong(args[2]);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    s = loom_pool_set_limit(ctx_of(st), k, i, (uint64_t)v);
  }
  uint64_t limit = 0;
  if (s == LOOM_OK) s = loom_pool_get_limit(ctx_of(st), k, i, &limit);
  return s ? raise_status(st, s) : PyLong_FromUnsignedLongLong(limit);
}

/* pool_cached_blocks(kind, index) -> how many free blocks the pool keeps */
static PyObject *core_pool_cached_blocks(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  MODSTATE;
  LoomDeviceKind k;
  int32_t i;
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "pool_cached_blocks(kind, index)");
    return NULL;
  }
  if (!have_memory_api() || parse_device(args[0], args[1], &k, &i) < 0) return NULL;
  uint64_t n = 0;
  LoomStatus s = loom_pool_cached_blocks(ctx_of(st), k, i, &n);
  return s ? raise_status(st, s) : PyLong_FromUnsignedLongLong(n);
}

/* set_oom_error(cls|None): the class LOOM_ERR_OUT_OF_MEMORY raises (a MemoryError subclass; None: MemoryError) */
static PyObject *core_set_oom_error(PyObject *module, PyObject *arg) {
  MODSTATE;
  if (arg != Py_None && !(PyType_Check(arg) && PyType_IsSubtype((PyTypeObject *)arg, (PyTypeObject *)PyExc_MemoryError))) {
    PyErr_SetString(PyExc_TypeError, "set_oom_error: a subclass of MemoryError (or None)");
    return NULL;
  }
  Py_XSETREF(st->oom_error, arg == Py_None ? NULL : Py_NewRef(arg));
  Py_RETURN_NONE;
}

PyMethodDef memory_functions[] = {
    FASTF(mem_alloc), FASTF(mem_free), FASTF(memcpy), FASTF(memset), FASTF(pool_limit), FASTF(pool_cached_blocks),
    {"set_oom_error", (PyCFunction)core_set_oom_error, METH_O, "the class out-of-memory errors raise"},
    {NULL}};
