/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_driver.h: private interface of the CUDA driver layer's files (cuda.c: loading, devices, memory,
 * streams, events; cuda_code.c: PTX linking, modules, kernels, occupancy, launches): the driver's types,
 * the table of entry points, the handles' structs and the hooks cuda_device.c puts in the shared GPU
 * layer's driver table. See cuda.c's top comment. */
#ifndef LOOM_RUNTIME_CUDA_DRIVER_H
#define LOOM_RUNTIME_CUDA_DRIVER_H

#include <pthread.h>

#include "runtime/cuda/cuda.h"
#include "runtime/gpu/gpu_driver.h"

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
enum { CU_STREAM_DEFAULT = 0, CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 };
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
  X(EventQuery, cuEventQuery, NULL, CUresult, (CUevent))                                            \
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

/* A failed driver call as a LoomStatus with the call, the device and the driver's error name and text. */
LoomStatus rt_cu_fail(RtCuda *cu, CUresult r, const char *call, int device, Diag *d);
/* A stream of another device is LOOM_ERR_INVALID_ARGUMENT. */
LoomStatus rt_cu_check_stream(RtCuda *cu, int device, RtCuStream *s, Diag *d);

/* ---- the driver table's hooks (RtGpuDriver, runtime/gpu/gpu_driver.h has the contract): raw handles
 * (CUstream, CUevent, CUmodule, CUfunction as void *), drv an RtCuda, the device made current by the
 * caller. cuda.c: memory, copies, streams, events; cuda_code.c: link, modules, functions, launches. The
 * typed rt_cuda_* functions of cuda.h check their arguments, make the device current and call these. */
LoomStatus rt_cu_mem_alloc(void *drv, int device, size_t size, uint64_t *out, Diag *d); /* OOM: d untouched */
void rt_cu_mem_free(void *drv, int device, uint64_t ptr);
LoomStatus rt_cu_copy_h2d(void *drv, int device, uint64_t dst, const void *src, size_t n, void *stream, Diag *d);
LoomStatus rt_cu_copy_d2h(void *drv, int device, void *dst, uint64_t src, size_t n, void *stream, Diag *d);
LoomStatus rt_cu_copy_d2d(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *stream, Diag *d);
LoomStatus rt_cu_fill_bytes(void *drv, int device, uint64_t dst, uint8_t value, size_t n, void *stream, Diag *d);
LoomStatus rt_cu_copy_peer(void *drv, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d);
LoomStatus rt_cu_stream_create(void *drv, int device, void **out, Diag *d);
void rt_cu_stream_destroy(void *drv, int device, void *stream);
LoomStatus rt_cu_stream_synchronize(void *drv, int device, void *stream, Diag *d);
LoomStatus rt_cu_event_create(void *drv, int device, void **out, Diag *d);
void rt_cu_event_destroy(void *drv, int device, void *event);
LoomStatus rt_cu_event_record(void *drv, int device, void *event, void *stream, Diag *d);
LoomStatus rt_cu_event_synchronize(void *drv, int device, void *event, Diag *d);
LoomStatus rt_cu_event_elapsed(void *drv, int device, void *start, void *end, float *ms, Diag *d);
LoomStatus rt_cu_fence_create(void *drv, int device, void **out, Diag *d);
int rt_cu_event_query(void *drv, int device, void *event);
LoomStatus rt_cu_link(void *drv, int device, const char *ptx, size_t size, const char *name, int opt_level,
                      void **cubin, size_t *cubin_size, Diag *d);
LoomStatus rt_cu_module_load(void *drv, int device, const void *image, size_t size, void **out, Diag *d);
void rt_cu_module_unload(void *drv, int device, void *module);
LoomStatus rt_cu_module_function(void *drv, int device, void *module, const char *name, void **fn, Diag *d);
LoomStatus rt_cu_func_attrs(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d);
LoomStatus rt_cu_occupancy(void *drv, int device, void *fn, int block, size_t dynamic_shared, int *blocks_per_sm,
                           Diag *d);
LoomStatus rt_cu_launch(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                        uint32_t shared_bytes, void *stream, void **params, Diag *d);

#define CU_CALL(cu, device, d, call_name, expr)                                        \
  do {                                                                                 \
    CUresult cu_r_ = (expr);                                                           \
    if (cu_r_ != CUDA_SUCCESS) return rt_cu_fail((cu), cu_r_, call_name, (device), (d)); \
  } while (0)

#define SET_CURRENT(cu, device, d)                             \
  do {                                                         \
    LoomStatus sc_ = rt_cuda_set_current((cu), (device), (d)); \
    if (sc_ != LOOM_OK) return sc_;                            \
  } while (0)

#define CHECK_COPY(cu, device, s, d)                             \
  do {                                                           \
    LoomStatus cc_ = rt_cu_check_stream((cu), (device), (s), (d)); \
    if (cc_ != LOOM_OK) return cc_;                              \
    SET_CURRENT(cu, device, d);                                  \
  } while (0)

/* ---- cuda_table.c: the driver table's LLVM-free entries, shared by libloom and libloomrt ------------------ */
void rt_cuda_drv_unload(void *drv);
LoomStatus rt_cuda_drv_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d);
LoomStatus rt_cuda_drv_retain(void *drv, int device, Diag *d);
void rt_cuda_drv_release(void *drv, int device);
LoomStatus rt_cuda_drv_set_current(void *drv, int device, Diag *d);
LoomStatus rt_cuda_drv_synchronize(void *drv, int device, Diag *d);
/* The entries both libraries' CUDA tables share (designated initializers; each adds .load, and libloom
 * .target_create and .link). */
#define RT_CUDA_DRIVER_COMMON                                                                                     \
  .name = "CUDA", .kind = LOOM_DEVICE_CUDA, .binary = CG_BINARY_PTX, .unload = rt_cuda_drv_unload,                \
  .device_info = rt_cuda_drv_device_info, .retain = rt_cuda_drv_retain, .release = rt_cuda_drv_release,           \
  .set_current = rt_cuda_drv_set_current, .synchronize = rt_cuda_drv_synchronize, .mem_alloc = rt_cu_mem_alloc,   \
  .mem_free = rt_cu_mem_free, .copy_h2d = rt_cu_copy_h2d, .copy_d2h = rt_cu_copy_d2h, .copy_d2d = rt_cu_copy_d2d, \
  .fill_bytes = rt_cu_fill_bytes, .copy_peer = rt_cu_copy_peer, .stream_create = rt_cu_stream_create,            \
  .stream_destroy = rt_cu_stream_destroy,                                                                         \
  .stream_synchronize = rt_cu_stream_synchronize, .event_create = rt_cu_event_create,                             \
  .event_destroy = rt_cu_event_destroy, .event_record = rt_cu_event_record,                                       \
  .event_synchronize = rt_cu_event_synchronize, .event_elapsed = rt_cu_event_elapsed,                             \
  .fence_create = rt_cu_fence_create, .event_query = rt_cu_event_query,                                           \
  .module_load = rt_cu_module_load, .module_unload = rt_cu_module_unload,                                         \
  .module_function = rt_cu_module_function, .func_attrs = rt_cu_func_attrs, .occupancy = rt_cu_occupancy,         \
  .launch = rt_cu_launch

#endif /* LOOM_RUNTIME_CUDA_DRIVER_H */
