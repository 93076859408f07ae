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
 * Each device is used through its primary context, retained on first use (reference counted) and
 * made current on the calling thread at the start of every call that touches the device, so one
 * thread can drive several devices. Handles (stream, event, module) remember their device.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/cuda.h"

#if !defined(LOOM_NO_CUDA_H) && defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define LOOM_HAVE_CUDA_H 1
#endif
#endif

#ifndef LOOM_HAVE_CUDA_H
/* The subset of CUDA 13's cuda.h that Loom uses (values are the driver's ABI). */
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100
} CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef struct CUlinkState_st *CUlinkState;
typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
} CUdevice_attribute;
typedef enum CUfunction_attribute_enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6
} CUfunction_attribute;
typedef enum CUjit_option_enum {
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_SPLIT_COMPILE = 34 /* CUDA 12.x: threads for the JIT's optimizations (0: every CPU) */
} CUjit_option;
typedef enum CUjitInputType_enum { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1 } CUjitInputType;
enum { CU_STREAM_NON_BLOCKING = 1, CU_EVENT_DEFAULT = 0 };
#endif

/* X(field, symbol, fallback symbol or NULL, return type, parameters). The symbol is the versioned
 * name cuda.h maps the API name to; the fallback is tried when the driver lacks it (an older one). */
#define RT_CU_FUNCS(X)                                                                              \
  X(Init, cuInit, NULL, CUresult, (unsigned int))                                                   \
  X(DriverGetVersion, cuDriverGetVersion, NULL, CUresult, (int *))                                  \
  X(GetErrorName, cuGetErrorName, NULL, CUresult, (CUresult, const char **))                        \
  X(GetErrorString, cuGetErrorString, NULL, CUresult, (CUresult, const char **))                    \
  X(DeviceGetCount, cuDeviceGetCount, NULL, CUresult, (int *))                                      \
  X(DeviceGet, cuDeviceGet, NULL, CUresult, (CUdevice *, int))                                      \
  X(DeviceGetName, cuDeviceGetName, NULL, CUresult, (char *, int, CUdevice))                        \
  X(DeviceGetAttribute, cuDeviceGetAttribute, NULL, CUresult, (int *, CUdevice_attribute, CUdevice)) \
  X(DeviceTotalMem, cuDeviceTotalMem_v2, NULL, CUresult, (size_t *, CUdevice))                      \
  X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, NULL, CUresult, (CUcontext *, CUdevice))            \
  X(PrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, NULL, CUresult, (CUdevice))                    \
  X(CtxSetCurrent, cuCtxSetCurrent, NULL, CUresult, (CUcontext))                                    \
  X(CtxSynchronize, cuCtxSynchronize, NULL, CUresult, (void))                                       \
  X(MemGetInfo, cuMemGetInfo_v2, NULL, CUresult, (size_t *, size_t *))                              \
  X(MemAlloc, cuMemAlloc_v2, NULL, CUresult, (CUdeviceptr *, size_t))                               \
  X(MemFree, cuMemFree_v2, NULL, CUresult, (CUdeviceptr))                                           \
  X(MemcpyHtoD, cuMemcpyHtoD_v2, NULL, CUresult, (CUdeviceptr, const void *, size_t))               \
  X(MemcpyDtoH, cuMemcpyDtoH_v2, NULL, CUresult, (void *, CUdeviceptr, size_t))                     \
  X(MemcpyDtoD, cuMemcpyDtoD_v2, NULL, CUresult, (CUdeviceptr, CUdeviceptr, size_t))                \
  X(MemcpyPeer, cuMemcpyPeer, NULL, CUresult, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t)) \
  X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, NULL, CUresult,                                          \
    (CUdeviceptr, const void *, size_t, CUstream))                                                  \
  X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, NULL, CUresult, (void *, CUdeviceptr, size_t, CUstream)) \
  X(MemcpyDtoDAsync, cuMemcpyDtoDAsync_v2, NULL, CUresult,                                          \
    (CUdeviceptr, CUdeviceptr, size_t, CUstream))                                                   \
  X(MemsetD8, cuMemsetD8_v2, NULL, CUresult, (CUdeviceptr, unsigned char, size_t))                  \
  X(MemsetD8Async, cuMemsetD8Async, NULL, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
  X(StreamCreate, cuStreamCreate, NULL, CUresult, (CUstream *, unsigned int))                       \
  X(StreamDestroy, cuStreamDestroy_v2, NULL, CUresult, (CUstream))                                  \
  X(StreamSynchronize, cuStreamSynchronize, NULL, CUresult, (CUstream))                             \
  X(EventCreate, cuEventCreate, NULL, CUresult, (CUevent *, unsigned int))                          \
  X(EventDestroy, cuEventDestroy_v2, NULL, CUresult, (CUevent))                                     \
  X(EventRecord, cuEventRecord, NULL, CUresult, (CUevent, CUstream))                                \
  X(EventSynchronize, cuEventSynchronize, NULL, CUresult, (CUevent))                                \
  X(EventElapsedTime, cuEventElapsedTime_v2, "cuEventElapsedTime", CUresult,                       \
    (float *, CUevent, CUevent))                                                                    \
  X(LinkCreate, cuLinkCreate_v2, NULL, CUresult,                                                    \
    (unsigned int, CUjit_option *, void **, CUlinkState *))                                         \
  X(LinkAddData, cuLinkAddData_v2, NULL, CUresult,                                                  \
    (CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned int, CUjit_option *,       \
     void **))                                                                                      \
  X(LinkComplete, cuLinkComplete, NULL, CUresult, (CUlinkState, void **, size_t *))                 \
  X(LinkDestroy, cuLinkDestroy, NULL, CUresult, (CUlinkState))                                      \
  X(ModuleLoadData, cuModuleLoadData, NULL, CUresult, (CUmodule *, const void *))                   \
  X(ModuleUnload, cuModuleUnload, NULL, CUresult, (CUmodule))                                       \
  X(ModuleGetFunction, cuModuleGetFunction, NULL, CUresult, (CUfunction *, CUmodule, const char *)) \
  X(FuncGetAttribute, cuFuncGetAttribute, NULL, CUresult, (int *, CUfunction_attribute, CUfunction)) \
  X(OccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor, NULL,   \
    CUresult, (int *, CUfunction, int, size_t))                                                     \
  X(LaunchKernel, cuLaunchKernel, NULL, CUresult,                                                   \
    (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, \
     unsigned int, CUstream, void **, void **))

typedef struct RtCuFns {
#define RT_CU_FIELD(field, sym, fallback, ret, params) ret(*field) params;
  RT_CU_FUNCS(RT_CU_FIELD)
#undef RT_CU_FIELD
} RtCuFns;

#ifdef LOOM_HAVE_CUDA_H
/* cuda.h declares every symbol of the table (through its plain-name macros): the prototypes must
 * match exactly. cuda.h's constants must equal the values this file falls back to without it. */
#define RT_CU_CHECK(field, sym, fallback, ret, params)                                  \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&sym),                        \
                                              __typeof__(((RtCuFns *)0)->field)),      \
                 "prototype of " #sym " differs from cuda.h");
RT_CU_FUNCS(RT_CU_CHECK)
#undef RT_CU_CHECK
_Static_assert(CUDA_ERROR_OUT_OF_MEMORY == 2 && CUDA_ERROR_NO_DEVICE == 100, "CUresult values");
_Static_assert(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == 16 &&
                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == 75 &&
                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN == 97 &&
                   CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR == 39,
               "device attribute values");
_Static_assert(CU_JIT_ERROR_LOG_BUFFER == 5 && CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == 4 &&
                   CU_JIT_INPUT_PTX == 1 && CU_FUNC_ATTRIBUTE_BINARY_VERSION == 6,
               "JIT and function attribute values");
_Static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t), "64-bit device pointers");
#endif

enum { RT_CU_MAX_DEVICES = 64 };

typedef struct RtCuDevice {
  CUdevice dev;
  CUcontext ctx; /* primary context while refs > 0 */
  int32_t refs;
} RtCuDevice;

struct RtCuda {
  LoomContext *ctx;
  void *lib;
  RtCuFns fn;
  int driver_version;
  int ndev;
  int jit_threads; /* CU_JIT_SPLIT_COMPILE value (LOOM_CUDA_JIT_THREADS); 1: not passed */
  pthread_mutex_t lock; /* guards devs[].refs and devs[].ctx */
  RtCuDevice devs[RT_CU_MAX_DEVICES];
};

struct RtCuStream {
  int32_t device;
  CUstream h;
};
struct RtCuEvent {
  int32_t device;
  CUevent h;
};
struct RtCuModule {
  int32_t device;
  CUmodule h;
};

/* ---- errors ----------------------------------------------------------------------------------- */
static LoomStatus cu_fail(RtCuda *cu, CUresult r, const char *call, int device, Diag *d) {
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

#define CU_CALL(cu, device, d, call_name, expr)                          \
  do {                                                                   \
    CUresult cu_r_ = (expr);                                             \
    if (cu_r_ != CUDA_SUCCESS) return cu_fail((cu), cu_r_, call_name, (device), (d)); \
  } while (0)

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
    st = diag_error(d, LOOM_ERR_BACKEND,
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
    st = cu_fail(cu, r, "cuInit", -1, d);
    goto fail;
  }
  if ((r = cu->fn.DriverGetVersion(&cu->driver_version)) != CUDA_SUCCESS) {
    st = cu_fail(cu, r, "cuDriverGetVersion", -1, d);
    goto fail;
  }
  int n = 0;
  if ((r = cu->fn.DeviceGetCount(&n)) != CUDA_SUCCESS) {
    st = cu_fail(cu, r, "cuDeviceGetCount", -1, d);
    goto fail;
  }
  if (n <= 0) {
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "no CUDA device (cuDeviceGetCount found none)");
    goto fail;
  }
  if (n > RT_CU_MAX_DEVICES) n = RT_CU_MAX_DEVICES;
  for (int i = 0; i < n; i++) {
    if ((r = cu->fn.DeviceGet(&cu->devs[i].dev, i)) != CUDA_SUCCESS) {
      st = cu_fail(cu, r, "cuDeviceGet", i, d);
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
      return cu_fail(cu, r, "cuDevicePrimaryCtxRetain", device, d);
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

#define SET_CURRENT(cu, device, d)                            \
  do {                                                        \
    LoomStatus sc_ = rt_cuda_set_current((cu), (device), (d)); \
    if (sc_ != LOOM_OK) return sc_;                           \
  } while (0)

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
  CUdeviceptr p = 0;
  CUresult r = cu->fn.MemAlloc(&p, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of device memory allocating %zu bytes on device %d",
                      size, device);
  if (r != CUDA_SUCCESS) return cu_fail(cu, r, "cuMemAlloc", device, d);
  *out = p;
  return LOOM_OK;
}

LoomStatus rt_cuda_mem_free(RtCuda *cu, int device, uint64_t ptr, Diag *d) {
  if (ptr == 0) return LOOM_OK;
  SET_CURRENT(cu, device, d);
  CU_CALL(cu, device, d, "cuMemFree", cu->fn.MemFree((CUdeviceptr)ptr));
  return LOOM_OK;
}

static LoomStatus check_stream(RtCuda *cu, int device, RtCuStream *s, Diag *d) {
  if (s && s->device != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "a stream of CUDA device %d was used for device %d: create one on device %d",
                      s->device, device, device);
  return LOOM_OK;
}

#define CHECK_COPY(cu, device, s, d)                                  \
  do {                                                                \
    LoomStatus cc_ = check_stream((cu), (device), (s), (d));          \
    if (cc_ != LOOM_OK) return cc_;                                   \
    SET_CURRENT(cu, device, d);                                       \
  } while (0)

LoomStatus rt_cuda_memcpy_h2d(RtCuda *cu, int device, uint64_t dst, const void *src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_h2d: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  if (s)
    CU_CALL(cu, device, d, "cuMemcpyHtoDAsync", cu->fn.MemcpyHtoDAsync(dst, src, n, s->h));
  else
    CU_CALL(cu, device, d, "cuMemcpyHtoD", cu->fn.MemcpyHtoD(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cuda_memcpy_d2h(RtCuda *cu, int device, void *dst, uint64_t src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_d2h: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  if (s)
    CU_CALL(cu, device, d, "cuMemcpyDtoHAsync", cu->fn.MemcpyDtoHAsync(dst, src, n, s->h));
  else
    CU_CALL(cu, device, d, "cuMemcpyDtoH", cu->fn.MemcpyDtoH(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cuda_memcpy_d2d(RtCuda *cu, int device, uint64_t dst, uint64_t src, size_t n,
                              RtCuStream *s, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_d2d: NULL pointer");
  CHECK_COPY(cu, device, s, d);
  if (s)
    CU_CALL(cu, device, d, "cuMemcpyDtoDAsync", cu->fn.MemcpyDtoDAsync(dst, src, n, s->h));
  else
    CU_CALL(cu, device, d, "cuMemcpyDtoD", cu->fn.MemcpyDtoD(dst, src, n));
  return LOOM_OK;
}

LoomStatus rt_cuda_memcpy_peer(RtCuda *cu, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n,
                               Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!src || !dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_memcpy_peer: NULL pointer");
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
  SET_CURRENT(cu, dst_device, d);
  CU_CALL(cu, dst_device, d, "cuMemcpyPeer", cu->fn.MemcpyPeer(dst, dc, src, sc, n));
  return LOOM_OK;
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
  CUresult r = cu->fn.StreamCreate(&s->h, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    ctx_free(cu->ctx, s);
    return cu_fail(cu, r, "cuStreamCreate", device, d);
  }
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
  CU_CALL(cu, s->device, d, "cuStreamSynchronize", cu->fn.StreamSynchronize(s->h));
  return LOOM_OK;
}

int rt_cuda_stream_device(const RtCuStream *s) { return s ? s->device : -1; }

/* The driver's CUstream of s (declared in runtime/runtime.h: cuda.h is shared and stays as it is). */
void *rt_cuda_stream_raw(const RtCuStream *s);
void *rt_cuda_stream_raw(const RtCuStream *s) { return s ? (void *)s->h : NULL; }

LoomStatus rt_cuda_event_create(RtCuda *cu, int device, RtCuEvent **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_create: out is NULL");
  *out = NULL;
  SET_CURRENT(cu, device, d);
  RtCuEvent *e = ctx_calloc(cu->ctx, 1, sizeof *e);
  if (!e) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a CUDA event");
  e->device = device;
  CUresult r = cu->fn.EventCreate(&e->h, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) {
    ctx_free(cu->ctx, e);
    return cu_fail(cu, r, "cuEventCreate", device, d);
  }
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
  CU_CALL(cu, e->device, d, "cuEventRecord", cu->fn.EventRecord(e->h, s ? s->h : NULL));
  return LOOM_OK;
}

LoomStatus rt_cuda_event_synchronize(RtCuda *cu, RtCuEvent *e, Diag *d) {
  if (!e) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_synchronize: event is NULL");
  SET_CURRENT(cu, e->device, d);
  CU_CALL(cu, e->device, d, "cuEventSynchronize", cu->fn.EventSynchronize(e->h));
  return LOOM_OK;
}

LoomStatus rt_cuda_event_elapsed(RtCuda *cu, RtCuEvent *start, RtCuEvent *end, float *ms, Diag *d) {
  if (!start || !end || !ms)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_event_elapsed: NULL argument");
  if (start->device != end->device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "events of devices %d and %d cannot be compared: time events of one device",
                      start->device, end->device);
  SET_CURRENT(cu, start->device, d);
  CU_CALL(cu, start->device, d, "cuEventElapsedTime", cu->fn.EventElapsedTime(ms, start->h, end->h));
  return LOOM_OK;
}

/* ---- code --------------------------------------------------------------------------------------- */
void rt_cuda_free_host(RtCuda *cu, void *p) {
  if (cu) ctx_free(cu->ctx, p);
}

enum { RT_CU_LOG_BYTES = 8192 };

LoomStatus rt_cuda_link_ptx(RtCuda *cu, int device, const char *ptx, const char *name, int opt_level,
                            void **cubin, size_t *cubin_size, Diag *d) {
  if (!ptx || !cubin || !cubin_size)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_link_ptx: NULL argument");
  *cubin = NULL;
  *cubin_size = 0;
  if (!name) name = "loom.ptx";
  SET_CURRENT(cu, device, d);
  char *errlog = ctx_calloc(cu->ctx, 1, RT_CU_LOG_BYTES);
  if (!errlog) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory linking %s", name);
  CUjit_option opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[4] = {errlog, (void *)(uintptr_t)RT_CU_LOG_BYTES};
  unsigned nopt = 2;
  if (opt_level >= 0 && opt_level <= 4) {
    opts[nopt] = CU_JIT_OPTIMIZATION_LEVEL;
    vals[nopt++] = (void *)(uintptr_t)opt_level;
  }
  /* only a module of several functions gains (one function: ~1 ms of thread start-up lost); last, so
   * that a retry can drop it */
  int threads = __atomic_load_n(&cu->jit_threads, __ATOMIC_RELAXED);
  int split = threads != 1 && strstr(ptx, ".func") != NULL;
  if (split) {
    opts[nopt] = CU_JIT_SPLIT_COMPILE;
    vals[nopt++] = (void *)(uintptr_t)threads;
  }
  CUlinkState ls = NULL;
  LoomStatus st = LOOM_OK;
  CUresult r = cu->fn.LinkCreate(nopt, opts, vals, &ls);
  if (r == CUDA_ERROR_INVALID_VALUE && split) { /* a driver before CUDA 12 has no split option */
    __atomic_store_n(&cu->jit_threads, 1, __ATOMIC_RELAXED);
    r = cu->fn.LinkCreate(nopt - 1, opts, vals, &ls);
  }
  if (r != CUDA_SUCCESS) {
    st = cu_fail(cu, r, "cuLinkCreate", device, d);
    goto done;
  }
  /* cuLinkAddData takes a non-const pointer but does not write; the size includes the NUL. */
  void *data;
  memcpy(&data, &ptx, sizeof data);
  r = cu->fn.LinkAddData(ls, CU_JIT_INPUT_PTX, data, strlen(ptx) + 1, name, 0, NULL, NULL);
  void *bin = NULL;
  size_t bin_size = 0;
  if (r == CUDA_SUCCESS) r = cu->fn.LinkComplete(ls, &bin, &bin_size);
  if (r != CUDA_SUCCESS) {
    const char *ename = NULL;
    cu->fn.GetErrorName(r, &ename);
    errlog[RT_CU_LOG_BYTES - 1] = '\0';
    st = diag_error(d, r == CUDA_ERROR_OUT_OF_MEMORY ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                    "linking PTX %s for CUDA device %d failed: %s: %s", name, device,
                    ename ? ename : "unknown CUDA error", errlog[0] ? errlog : "(no JIT log)");
    goto done;
  }
  void *copy = ctx_alloc(cu->ctx, bin_size ? bin_size : 1);
  if (!copy) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory copying a %zu-byte cubin", bin_size);
    goto done;
  }
  memcpy(copy, bin, bin_size);
  *cubin = copy;
  *cubin_size = bin_size;
done:
  if (ls) cu->fn.LinkDestroy(ls);
  ctx_free(cu->ctx, errlog);
  return st;
}

LoomStatus rt_cuda_module_load(RtCuda *cu, int device, const void *image, size_t size,
                               RtCuModule **out, Diag *d) {
  if (!image || !out || size == 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_module_load: empty or NULL image");
  *out = NULL;
  SET_CURRENT(cu, device, d);
  RtCuModule *m = ctx_calloc(cu->ctx, 1, sizeof *m);
  if (!m) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory loading a CUDA module");
  m->device = device;
  CUresult r = cu->fn.ModuleLoadData(&m->h, image);
  if (r != CUDA_SUCCESS) {
    ctx_free(cu->ctx, m);
    return cu_fail(cu, r, "cuModuleLoadData", device, d);
  }
  *out = m;
  return LOOM_OK;
}

void rt_cuda_module_unload(RtCuda *cu, RtCuModule *m) {
  if (!cu || !m) return;
  if (rt_cuda_set_current(cu, m->device, NULL) == LOOM_OK) cu->fn.ModuleUnload(m->h);
  ctx_free(cu->ctx, m);
}

LoomStatus rt_cuda_module_kernel(RtCuda *cu, RtCuModule *m, const char *name, RtCuKernel *out,
                                 Diag *d) {
  if (!m || !name || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_module_kernel: NULL argument");
  SET_CURRENT(cu, m->device, d);
  CUfunction f = NULL;
  CUresult r = cu->fn.ModuleGetFunction(&f, m->h, name);
  if (r != CUDA_SUCCESS) {
    const char *ename = NULL;
    cu->fn.GetErrorName(r, &ename);
    return diag_error(d, LOOM_ERR_BACKEND, "kernel '%s' not found in the CUDA module: %s", name,
                      ename ? ename : "unknown CUDA error");
  }
  out->handle = f;
  out->device = m->device;
  return LOOM_OK;
}

LoomStatus rt_cuda_kernel_attrs(RtCuda *cu, const RtCuKernel *k, RtCuKernelAttrs *out, Diag *d) {
  if (!k || !k->handle || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_kernel_attrs: NULL argument");
  SET_CURRENT(cu, k->device, d);
  static const struct {
    CUfunction_attribute attr;
    size_t offset;
  } attrs[] = {
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(RtCuKernelAttrs, max_threads_per_block)},
      {CU_FUNC_ATTRIBUTE_NUM_REGS, offsetof(RtCuKernelAttrs, num_regs)},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, offsetof(RtCuKernelAttrs, shared_bytes)},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, offsetof(RtCuKernelAttrs, local_bytes)},
      {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, offsetof(RtCuKernelAttrs, const_bytes)},
      {CU_FUNC_ATTRIBUTE_PTX_VERSION, offsetof(RtCuKernelAttrs, ptx_version)},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, offsetof(RtCuKernelAttrs, binary_version)},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    int v = 0;
    CU_CALL(cu, k->device, d, "cuFuncGetAttribute",
            cu->fn.FuncGetAttribute(&v, attrs[i].attr, (CUfunction)k->handle));
    int32_t v32 = v;
    memcpy((char *)out + attrs[i].offset, &v32, sizeof v32);
  }
  return LOOM_OK;
}

LoomStatus rt_cuda_occupancy(RtCuda *cu, const RtCuKernel *k, int block_size, size_t dynamic_shared,
                             int *blocks_per_sm, Diag *d) {
  if (!k || !k->handle || !blocks_per_sm)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_occupancy: NULL argument");
  if (block_size <= 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_occupancy: block size %d must be positive",
                      block_size);
  SET_CURRENT(cu, k->device, d);
  int n = 0;
  CU_CALL(cu, k->device, d, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          cu->fn.OccupancyMaxActiveBlocksPerMultiprocessor(&n, (CUfunction)k->handle, block_size,
                                                          dynamic_shared));
  *blocks_per_sm = n;
  return LOOM_OK;
}

LoomStatus rt_cuda_best_block_size(RtCuda *cu, const RtCuKernel *k, size_t dynamic_shared,
                                   int *block_size, Diag *d) {
  if (!block_size) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_best_block_size: NULL");
  RtCuKernelAttrs a;
  LoomStatus st = rt_cuda_kernel_attrs(cu, k, &a, d);
  if (st != LOOM_OK) return st;
  RtCuDeviceInfo info;
  if ((st = rt_cuda_device_info(cu, k->device, &info, d)) != LOOM_OK) return st;
  int warp = info.warp_size > 0 ? info.warp_size : 32;
  int limit = a.max_threads_per_block < info.max_threads_per_block ? a.max_threads_per_block
                                                                   : info.max_threads_per_block;
  int best = 0, best_threads = -1;
  for (int bs = warp; bs <= limit; bs += warp) {
    int blocks = 0;
    if ((st = rt_cuda_occupancy(cu, k, bs, dynamic_shared, &blocks, d)) != LOOM_OK) return st;
    if (blocks * bs > best_threads) {
      best_threads = blocks * bs;
      best = bs;
    }
  }
  if (best == 0 || best_threads <= 0)
    return diag_error(d, LOOM_ERR_BACKEND,
                      "the kernel cannot run on CUDA device %d with %zu bytes of dynamic shared memory",
                      k->device, dynamic_shared);
  *block_size = best;
  return LOOM_OK;
}

LoomStatus rt_cuda_launch(RtCuda *cu, const RtCuKernel *k, const uint32_t grid[3],
                          const uint32_t block[3], uint32_t shared_bytes, RtCuStream *s,
                          void **params, Diag *d) {
  if (!k || !k->handle || !grid || !block)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_cuda_launch: NULL argument");
  for (int i = 0; i < 3; i++)
    if (grid[i] == 0 || block[i] == 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "rt_cuda_launch: grid (%u,%u,%u) and block (%u,%u,%u) must be positive",
                        grid[0], grid[1], grid[2], block[0], block[1], block[2]);
  CHECK_COPY(cu, k->device, s, d);
  CU_CALL(cu, k->device, d, "cuLaunchKernel",
          cu->fn.LaunchKernel((CUfunction)k->handle, grid[0], grid[1], grid[2], block[0], block[1],
                              block[2], shared_bytes, s ? s->h : NULL, params, NULL));
  return LOOM_OK;
}

/* ---- the real device allocator for the pool ---------------------------------------------------- */
static LoomStatus device_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  RtCuda *cu = user;
  *out = 0;
  LoomStatus st = rt_cuda_set_current(cu, device, d);
  if (st != LOOM_OK) return st;
  CUdeviceptr p = 0;
  CUresult r = cu->fn.MemAlloc(&p, size);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) return LOOM_ERR_OUT_OF_MEMORY; /* d untouched: the pool retries */
  if (r != CUDA_SUCCESS) return cu_fail(cu, r, "cuMemAlloc", device, d);
  *out = p;
  return LOOM_OK;
}

static void device_free(void *user, int device, uint64_t ptr) {
  rt_cuda_mem_free(user, device, ptr, NULL);
}

RtDevAllocator rt_cuda_device_allocator(RtCuda *cu) {
  RtDevAllocator a = {device_alloc, device_free, cu};
  return a;
}
