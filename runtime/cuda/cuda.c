/* SPDX-License-Identifier: Apache-2.0 */
/* cuda.c: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
 *
 * Approach: one X-macro table lists every driver entry point Loom uses with its exact versioned
 * symbol (the name cuda.h maps the plain name to: cuMemAlloc -> cuMemAlloc_v2) and its prototype.
 * The table makes the struct of function pointers and the dlsym loop. cuda.h is included for its
 * types when the compiler finds it (add $CUDA_HOME/include); then every table entry is checked at
 * compile time against cuda.h's own prototype of that symbol, so a wrong signature or a wrong _vN
 * does not build. Without cuda.h the few types and constants used are declared below, with the
 * values of CUDA 13's cuda.h (they are ABI: they never change).
 *
 * The driver layer is two files sharing cuda_driver.h: this one (loading, devices, memory, streams,
 * events, the pool's allocator) and cuda_code.c (PTX linking, modules, kernels, launches).
 *
 * Each device is used through its primary context, retained on first use (reference counted) and
 * made current on the calling thread at the start of every call that touches the device, so one
 * thread can drive several devices. Handles (stream, event, module) remember their device.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_driver.h"

/* ---- errors ----------------------------------------------------------------------------------- */
LoomStatus rt_cu_fail(RtCuda *cu, CUresult r, const char *call, int device, Diag *d) {
  const char *name = NULL, *text = NULL;
  if (cu && cu->fn.GetErrorName) cu->fn.GetErrorName(r, &name);
  if (cu && cu->fn.GetErrorString) cu->fn.GetErrorString(r, &text);
  LoomStatus st = r == CUDA_ERROR_OUT_OF_MEMORY ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND;
  if (device >= 0)
    return diag_error(d, st, "%s on device %d failed: %s (%s)", call, device,
                      name ? name : "unknown CUDA error", text ? text : "no description");
  return diag_error(d, st, "%s failed: %s (%s)", call, name ? name : "unknown CUDA error",
                    text ? text : "no description");
}


/* ---- loading ----------------------------------------------------------------------------------- */
LoomStatus rt_cuda_load(LoomContext *ctx, RtCuda **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_load: out is NULL");
  *out = NULL;
  dlerror();
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return diag_error(d, LOOM_ERR_UNSUPPORTED,
                      "no CUDA driver (libcuda.so.1 not found: %s); install the NVIDIA driver or use "
                      "the host backend",
                      why ? why : "dlopen failed");
  }
  RtCuda *cu = ctx_calloc(ctx, 1, sizeof *cu);
  if (!cu) {
    dlclose(lib);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory loading the CUDA driver (%zu bytes)",
                      sizeof(RtCuda));
  }
  cu->ctx = ctx;
  cu->lib = lib;
  /* The JIT compiles the functions of a module in parallel threads when asked (a kernel and its
   * noinline libdevice functions: ~3 ms less for a sinf kernel on the H200's host, ~1 ms more for a
   * module of one function, so rt_cuda_link_ptx asks only for modules with a .func) */
  const char *jt = getenv("LOOM_CUDA_JIT_THREADS");
  cu->jit_threads = jt && jt[0] >= '0' && jt[0] <= '9' ? atoi(jt) : 0;
  const char *missing = NULL;
#define RT_CU_RESOLVE(field, sym, fallback, ret, params)                  \
  do {                                                                    \
    void *p_ = dlsym(lib, #sym);                                          \
    const char *fb_ = fallback;                                           \
    if (!p_ && fb_) p_ = dlsym(lib, fb_);                                 \
    if (!p_ && !missing) missing = #sym;                                  \
    memcpy(&cu->fn.field, &p_, sizeof p_);                                \
  } while (0);
  RT_CU_FUNCS(RT_CU_RESOLVE)
#undef RT_CU_RESOLVE
  LoomStatus st = LOOM_OK;
  if (missing) {
    st = diag_error(d, LOOM_ERR_UNSUPPORTED,
                    "the CUDA driver is too old: libcuda.so.1 has no %s (update the NVIDIA driver)",
                    missing);
    goto fail;
  }
  CUresult r = cu->fn.Init(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    st = diag_error(d, LOOM_ERR_UNSUPPORTED,
                    "no CUDA device (the driver loaded but cuInit found no GPU; check "
                    "CUDA_VISIBLE_DEVICES and nvidia-smi)");
    goto fail;
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) { /* seen under AddressSanitizer, whose shadow gap the
                                          driver needs */
    st = diag_error(d, LOOM_ERR_BACKEND,
                    "cuInit failed: CUDA_ERROR_OUT_OF_MEMORY; under AddressSanitizer run with "
                    "ASAN_OPTIONS=protect_shadow_gap=0");
    goto fail;
  }
  if (r != CUDA_SUCCESS) {
    st = rt_cu_fail(cu, r, "cuInit", -1, d);
    goto fail;
  }
  if ((r = cu->fn.DriverGetVersion(&cu->driver_version)) != CUDA_SUCCESS) {
    st = rt_cu_fail(cu, r, "cuDriverGetVersion", -1, d);
    goto fail;
  }
  int n = 0;
  if ((r = cu->fn.DeviceGetCount(&n)) != CUDA_SUCCESS) {
    st = rt_cu_fail(cu, r, "cuDeviceGetCount", -1, d);
    goto fail;
  }
  if (n <= 0) {
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "no CUDA device (cuDeviceGetCount found none)");
    goto fail;
  }
  if (n > RT_CU_MAX_DEVICES) n = RT_CU_MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    if ((r = cu->fn.DeviceGet(&cu->devs[i].dev, i)) != CUDA_SUCCESS) {
      st = rt_cu_fail(cu, r, "cuDeviceGet", i, d);
      goto fail;
    }
  }
  cu->ndev = n;
  if (pthread_mutex_init(&cu->lock, NULL) != 0) {
    st = diag_error(d, LOOM_ERR_BACKEND, "pthread_mutex_init failed loading the CUDA driver");
    goto fail;
  }
  *out = cu;
  return LOOM_OK;
fail:
  dlclose(lib);
  ctx_free(ctx, cu);
  return st;
}

void rt_cuda_unload(RtCuda *cu) {
  if (!cu) return;
  for (int i = 0; i < cu->ndev; i++) {
    if (cu->devs[i].refs > 0) cu->fn.PrimaryCtxRelease(cu->devs[i].dev);
    cu->devs[i].refs = 0;
  }
  pthread_mutex_destroy(&cu->lock);
  dlclose(cu->lib);
  ctx_free(cu->ctx, cu);
}

int rt_cuda_driver_version(const RtCuda *cu) { return cu ? cu->driver_version : 0; }
int rt_cuda_device_count(const RtCuda *cu) { return cu ? cu->ndev : 0; }

static LoomStatus check_device(RtCuda *cu, int device, Diag *d) {
  if (!cu) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "the CUDA driver is not loaded (cu is NULL)");
  if (device < 0 || device >= cu->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "CUDA device %d does not exist (this machine has %d; use 0..%d)", device,
                      cu->ndev, cu->ndev - 1);
  return LOOM_OK;
}

LoomStatus rt_cuda_device_info(RtCuda *cu, int device, RtCuDeviceInfo *out, Diag *d) {
  LoomStatus st = check_device(cu, device, d);
  if (st != LOOM_OK) return st;
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_device_info: out is NULL");
  memset(out, 0, sizeof *out);
  CUdevice dev = cu->devs[device].dev;
  CU_CALL(cu, device, d, "cuDeviceGetName", cu->fn.DeviceGetName(out->name, (int)sizeof out->name, dev));
  out->name[sizeof out->name - 1] = '\0';
  static const struct {
    CUdevice_attribute attr;
    size_t offset;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(RtCuDeviceInfo, cc_major)},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(RtCuDeviceInfo, cc_minor)},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(RtCuDeviceInfo, sm_count)},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(RtCuDeviceInfo, max_threads_per_block)},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, offsetof(RtCuDeviceInfo, max_threads_per_sm)},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, offsetof(RtCuDeviceInfo, warp_size)},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(RtCuDeviceInfo, shared_per_block)},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       offsetof(RtCuDeviceInfo, shared_per_block_optin)},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(RtCuDeviceInfo, l2_bytes)},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, offsetof(RtCuDeviceInfo, pci_bus_id)},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    int v = 0;
    CU_CALL(cu, device, d, "cuDeviceGetAttribute", cu->fn.DeviceGetAttribute(&v, attrs[i].attr, dev));
    int32_t v32 = v;
    memcpy((char *)out + attrs[i].offset, &v32, sizeof v32);
  }
  size_t total = 0;
  CU_CALL(cu, device, d, "cuDeviceTotalMem", cu->fn.DeviceTotalMem(&total, dev));
  out->total_mem = total;
  return LOOM_OK;
}

LoomStatus rt_cuda_device_retain(RtCuda *cu, int device, Diag *d) {
  LoomStatus st = check_device(cu, device, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&cu->lock);
  RtCuDevice *dv = &cu->devs[device];
  if (dv->refs == 0) {
    CUcontext c = NULL;
    CUresult r = cu->fn.PrimaryCtxRetain(&c, dv->dev);
    if (r != CUDA_SUCCESS) {
      pthread_mutex_unlock(&cu->lock);
      return rt_cu_fail(cu, r, "cuDevicePrimaryCtxRetain", device, d);
    }
    dv->ctx = c;
  }
  dv->refs++;
  CUcontext c = dv->ctx;
  pthread_mutex_unlock(&cu->lock);
  CU_CALL(cu, device, d, "cuCtxSetCurrent", cu->fn.CtxSetCurrent(c));
  return LOOM_OK;
}

void rt_cuda_device_release(RtCuda *cu, int device) {
  if (!cu || device < 0 || device >= cu->ndev) return;
  pthread_mutex_lock(&cu->lock);
  RtCuDevice *dv = &cu->devs[device];
  if (dv->refs > 0 && --dv->refs == 0) {
    cu->fn.PrimaryCtxRelease(dv->dev);
    dv->ctx = NULL;
  }
  pthread_mutex_unlock(&cu->lock);
}

LoomStatus rt_cuda_set_current(RtCuda *cu, int device, Diag *d) {
  LoomStatus st = check_device(cu, device, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&cu->lock);
  CUcontext c = cu->devs[device].refs > 0 ? cu->devs[device].ctx : NULL;
  pthread_mutex_unlock(&cu->lock);
  if (!c)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "CUDA device %d is not retained: call rt_cuda_device_retain(cu, %d) first",
                      device, device);
  CU_CALL(cu, device, d, "cuCtxSetCurrent", cu->fn.CtxSetCurrent(c));
  return LOOM_OK;
}


LoomStatus rt_cuda_device_synchronize(RtCuda *cu, int device, Diag *d) {
  SET_CURRENT(cu, device, d);
  CU_CALL(cu, device, d, "cuCtxSynchronize", cu->fn.CtxSynchronize());
  return LOOM_OK;
}

LoomStatus rt_cuda_mem_info(RtCuda *cu, int device, uint64_t *free_bytes, uint64_t *total_bytes,
                            Diag *d) {
  SET_CURRENT(cu, device, d);
  size_t f = 0, t = 0;
  CU_CALL(cu, device, d, "cuMemGetInfo", cu->fn.MemGetInfo(&f, &t));
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
  return LOOM_OK;
}

/* ---- memory ------------------------------------------------------------------------------------- */
LoomStatus rt_cuda_mem_alloc(RtCuda *cu, int device, size_t size, uint64_t *out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_mem_alloc: out is NULL");
  *out = 0;
  SET_CURRENT(cu, device, d);
  if (size == 0) return LOOM_OK;
  LoomStatus st = rt_cu_mem_alloc(cu, device, size, out, d);
  if (st == LOOM_ERR_OUT_OF_MEMORY)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of device memory allocating %zu bytes on device %d",
                      size, device);
  return st;
}

LoomStatus rt_cuda_mem_free(RtCuda *cu, int device, uint64_t ptr, Diag *d) {
  if (ptr == 0) return LOOM_OK;
  SET_CURRENT(cu, device, d);
  CU_CALL(cu, device, d, "cuMemFree", cu->fn.MemFree((CUdeviceptr)ptr));
  return LOOM_OK;
}

LoomStatus rt_cu_check_stream(RtCuda *cu, int device, RtCuStream *s, Diag *d) {
  if (s && s->device != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "a stream of CUDA device %d was used for device %d: create one on device %d",
                      s->device, device, device);
  return LOOM_OK;
}

LoomStatus rt_cuda_memcpy_h2d(RtCuda *cu, int device, uint64_t dst, const void *src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_h2d: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  return rt_cu_copy_h2d(cu, device, dst, src, n, s ? s->h : NULL, d);
}

LoomStatus rt_cuda_memcpy_d2h(RtCuda *cu, int device, void *dst, uint64_t src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_d2h: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  return rt_cu_copy_d2h(cu, device, dst, src, n, s ? s->h : NULL, d);
}

LoomStatus rt_cuda_memcpy_d2d(RtCuda *cu, int device, uint64_t dst, uint64_t src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_d2d: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  return rt_cu_copy_d2d(cu, device, dst, src, n, s ? s->h : NULL, d);
}

LoomStatus rt_cuda_memcpy_peer(RtCuda *cu, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n,
                               Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_peer: NULL pointer");
  SET_CURRENT(cu, dst_device, d);
  return rt_cu_copy_peer(cu, dst_device, dst, src_device, src, n, d);
}

LoomStatus rt_cuda_memset(RtCuda *cu, int device, uint64_t dst, uint8_t value, size_t n,
                          RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memset: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  if (s)
    CU_CALL(cu, device, d, "cuMemsetD8Async", cu->fn.MemsetD8Async(dst, value, n, s->h));
  else
    CU_CALL(cu, device, d, "cuMemsetD8", cu->fn.MemsetD8(dst, value, n));
  return LOOM_OK;
}

/* ---- streams and events -------------------------------------------------------------------------- */
LoomStatus rt_cuda_stream_create(RtCuda *cu, int device, RtCuStream **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_stream_create: out is NULL");
  *out = NULL;
  SET_CURRENT(cu, device, d);
  RtCuStream *s = ctx_calloc(cu->ctx, 1, sizeof *s);
  if (!s) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a CUDA stream");
  s->device = device;
  void *h = NULL;
  LoomStatus st = rt_cu_stream_create(cu, device, &h, d);
  if (st != LOOM_OK) {
    ctx_free(cu->ctx, s);
    return st;
  }
  s->h = h;
  *out = s;
  return LOOM_OK;
}

void rt_cuda_stream_destroy(RtCuda *cu, RtCuStream *s) {
  if (!cu || !s) return;
  if (rt_cuda_set_current(cu, s->device, NULL) == LOOM_OK) cu->fn.StreamDestroy(s->h);
  ctx_free(cu->ctx, s);
}

LoomStatus rt_cuda_stream_synchronize(RtCuda *cu, RtCuStream *s, Diag *d) {
  if (!s) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_stream_synchronize: stream is NULL");
  SET_CURRENT(cu, s->device, d);
  return rt_cu_stream_synchronize(cu, s->device, s->h, d);
}

int rt_cuda_stream_device(const RtCuStream *s) { return s ? s->device : -1; }

void *rt_cuda_stream_raw(const RtCuStream *s) { return s ? (void *)s->h : NULL; }

LoomStatus rt_cuda_event_create(RtCuda *cu, int device, RtCuEvent **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_create: out is NULL");
  *out = NULL;
  SET_CURRENT(cu, device, d);
  RtCuEvent *e = ctx_calloc(cu->ctx, 1, sizeof *e);
  if (!e) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a CUDA event");
  e->device = device;
  void *h = NULL;
  LoomStatus st = rt_cu_event_create(cu, device, &h, d);
  if (st != LOOM_OK) {
    ctx_free(cu->ctx, e);
    return st;
  }
  e->h = h;
  *out = e;
  return LOOM_OK;
}

void rt_cuda_event_destroy(RtCuda *cu, RtCuEvent *e) {
  if (!cu || !e) return;
  if (rt_cuda_set_current(cu, e->device, NULL) == LOOM_OK) cu->fn.EventDestroy(e->h);
  ctx_free(cu->ctx, e);
}

LoomStatus rt_cuda_event_record(RtCuda *cu, RtCuEvent *e, RtCuStream *s, Diag *d) {
  if (!e) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_record: event is NULL");
  CHECK_COPY(cu, e->device, s, d);
  return rt_cu_event_record(cu, e->device, e->h, s ? s->h : NULL, d);
}

LoomStatus rt_cuda_event_synchronize(RtCuda *cu, RtCuEvent *e, Diag *d) {
  if (!e) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_synchronize: event is NULL");
  SET_CURRENT(cu, e->device, d);
  return rt_cu_event_synchronize(cu, e->device, e->h, d);
}

LoomStatus rt_cuda_event_elapsed(RtCuda *cu, RtCuEvent *start, RtCuEvent *end, float *ms, Diag *d) {
  if (!start || !end || !ms)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_elapsed: NULL argument");
  if (start->device != end->device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "events of devices %d and %d cannot be compared: time events of one device",
                      start->device, end->device);
  SET_CURRENT(cu, start->device, d);
  return rt_cu_event_elapsed(cu, start->device, start->h, end->h, ms, d);
}

/* ---- the driver table's hooks (RtGpuDriver, runtime/gpu/gpu_driver.h): raw handles, device current ---- */
LoomStatus rt_cu_mem_alloc(void *drv, int device, size_t size, uint64_t *out, Diag *d) {
  RtCuda *cu = drv;
  CUdeviceptr p = 0;
  CUresult r = cu->fn.MemAlloc(&p, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return LOOM_ERR_OUT_OF_MEMORY; /* d untouched: the pool retries */
  if (r != CUDA_SUCCESS) return rt_cu_fail(cu, r, "cuMemAlloc", device, d);
  *out = p;
  return LOOM_OK;
}

void rt_cu_mem_free(void *drv, int device, uint64_t ptr) {
  RtCuda *cu = drv;
  cu->fn.MemFree((CUdeviceptr)ptr);
}

LoomStatus rt_cu_copy_h2d(void *drv, int device, uint64_t dst, const void *src, size_t n, void *stream, Diag *d) {
  RtCuda *cu = drv;
  if (stream)
    CU_CALL(cu, device, d, "cuMemcpyHtoDAsync", cu->fn.MemcpyHtoDAsync(dst, src, n, (CUstream)stream));
  else
    CU_CALL(cu, device, d, "cuMemcpyHtoD", cu->fn.MemcpyHtoD(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cu_copy_d2h(void *drv, int device, void *dst, uint64_t src, size_t n, void *stream, Diag *d) {
  RtCuda *cu = drv;
  if (stream)
    CU_CALL(cu, device, d, "cuMemcpyDtoHAsync", cu->fn.MemcpyDtoHAsync(dst, src, n, (CUstream)stream));
  else
    CU_CALL(cu, device, d, "cuMemcpyDtoH", cu->fn.MemcpyDtoH(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cu_copy_d2d(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *stream, Diag *d) {
  RtCuda *cu = drv;
  if (stream)
    CU_CALL(cu, device, d, "cuMemcpyDtoDAsync", cu->fn.MemcpyDtoDAsync(dst, src, n, (CUstream)stream));
  else
    CU_CALL(cu, device, d, "cuMemcpyDtoD", cu->fn.MemcpyDtoD(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cu_fill_bytes(void *drv, int device, uint64_t dst, uint8_t value, size_t n, void *stream, Diag *d) {
  RtCuda *cu = drv;
  if (stream)
    CU_CALL(cu, device, d, "cuMemsetD8Async", cu->fn.MemsetD8Async(dst, value, n, (CUstream)stream));
  else
    CU_CALL(cu, device, d, "cuMemsetD8", cu->fn.MemsetD8(dst, value, n));
  return LOOM_OK;
}

/* cuMemcpyPeer names both primary contexts (both retained). */
LoomStatus rt_cu_copy_peer(void *drv, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d) {
  RtCuda *cu = drv;
  LoomStatus st = check_device(cu, dst_device, d);
  if (st == LOOM_OK) st = check_device(cu, src_device, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&cu->lock);
  CUcontext dc = cu->devs[dst_device].refs > 0 ? cu->devs[dst_device].ctx : NULL;
  CUcontext sc = cu->devs[src_device].refs > 0 ? cu->devs[src_device].ctx : NULL;
  pthread_mutex_unlock(&cu->lock);
  if (!dc || !sc)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_peer: CUDA device %d is not retained",
                      dc ? src_device : dst_device);
  CU_CALL(cu, dst_device, d, "cuMemcpyPeer", cu->fn.MemcpyPeer(dst, dc, src, sc, n));
  return LOOM_OK;
}

LoomStatus rt_cu_stream_create(void *drv, int device, void **out, Diag *d) {
  RtCuda *cu = drv;
  CUstream h = NULL;
  CU_CALL(cu, device, d, "cuStreamCreate", cu->fn.StreamCreate(&h, CU_STREAM_DEFAULT));
  *out = h;
  return LOOM_OK;
}

void rt_cu_stream_destroy(void *drv, int device, void *stream) {
  RtCuda *cu = drv;
  cu->fn.StreamDestroy((CUstream)stream);
}

LoomStatus rt_cu_stream_synchronize(void *drv, int device, void *stream, Diag *d) {
  RtCuda *cu = drv;
  CU_CALL(cu, device, d, "cuStreamSynchronize", cu->fn.StreamSynchronize((CUstream)stream));
  return LOOM_OK;
}

LoomStatus rt_cu_event_create(void *drv, int device, void **out, Diag *d) {
  RtCuda *cu = drv;
  CUevent h = NULL;
  CU_CALL(cu, device, d, "cuEventCreate", cu->fn.EventCreate(&h, CU_EVENT_DEFAULT));
  *out = h;
  return LOOM_OK;
}

void rt_cu_event_destroy(void *drv, int device, void *event) {
  RtCuda *cu = drv;
  cu->fn.EventDestroy((CUevent)event);
}

LoomStatus rt_cu_event_record(void *drv, int device, void *event, void *stream, Diag *d) {
  RtCuda *cu = drv;
  CU_CALL(cu, device, d, "cuEventRecord", cu->fn.EventRecord((CUevent)event, (CUstream)stream));
  return LOOM_OK;
}

LoomStatus rt_cu_event_synchronize(void *drv, int device, void *event, Diag *d) {
  RtCuda *cu = drv;
  CU_CALL(cu, device, d, "cuEventSynchronize", cu->fn.EventSynchronize((CUevent)event));
  return LOOM_OK;
}

/* The pools' ordering events (gpu_pool.h "Stream order"): no timing, so a record is cheaper. */
LoomStatus rt_cu_fence_create(void *drv, int device, void **out, Diag *d) {
  RtCuda *cu = drv;
  CUevent h = NULL;
  CU_CALL(cu, device, d, "cuEventCreate", cu->fn.EventCreate(&h, CU_EVENT_DISABLE_TIMING));
  *out = h;
  return LOOM_OK;
}

/* 1: finished; 0: CUDA_ERROR_NOT_READY, or any error (the pool then makes a new block: never wrong). */
int rt_cu_event_query(void *drv, int device, void *event) {
  RtCuda *cu = drv;
  (void)device;
  return cu->fn.EventQuery((CUevent)event) == CUDA_SUCCESS ? 1 : 0;
}

LoomStatus rt_cu_event_elapsed(void *drv, int device, void *start, void *end, float *ms, Diag *d) {
  RtCuda *cu = drv;
  CU_CALL(cu, device, d, "cuEventElapsedTime", cu->fn.EventElapsedTime(ms, (CUevent)start, (CUevent)end));
  return LOOM_OK;
}

/* ---- the real device allocator for a pool (gpu_pool.h) outside the shared GPU layer (tests, libloomrt) ---- */
static LoomStatus device_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  RtCuda *cu = user;
  *out = 0;
  LoomStatus st = rt_cuda_set_current(cu, device, d);
  return st == LOOM_OK ? rt_cu_mem_alloc(cu, device, size, out, d) : st;
}

static void device_free(void *user, int device, uint64_t ptr) {
  rt_cuda_mem_free(user, device, ptr, NULL);
}

RtDevAllocator rt_cuda_device_allocator(RtCuda *cu) {
  RtDevAllocator a = {device_alloc, device_free, cu};
  return a;
}
