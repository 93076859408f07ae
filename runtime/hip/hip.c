/* hip.c: the HIP runtime, loaded at run time with dlopen (contract in hip.h).
 *
 * Approach: one X-macro table lists every entry point Loom uses with its prototype; it makes the struct
 * of function pointers and the dlsym loop (the way runtime/cuda/cuda.c loads the CUDA driver). The few
 * HIP types and constants used are declared here with the values of HIP's headers (ABI: the same in
 * HIP 5.2 and 6.x; hipDeviceAttribute_t values are taken only from the part of the enum both share).
 * hip_runtime_api.h is not needed to build.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/hip/hip.h"

typedef int hipError_t;
enum { HIP_SUCCESS = 0, HIP_ERROR_OUT_OF_MEMORY = 2, HIP_ERROR_NO_DEVICE = 100, HIP_ERROR_INVALID_DEVICE = 101 };
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
enum { HIP_MEMCPY_H2D = 1, HIP_MEMCPY_D2H = 2, HIP_MEMCPY_D2D = 3 };
enum { HIP_STREAM_DEFAULT = 0 };
/* hipDeviceAttribute_t (the same values in HIP 5.2 and 6.x) */
enum {
  HIP_ATTR_L2_CACHE_SIZE = 19,
  HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,
  HIP_ATTR_MAX_THREADS_PER_CU = 57,
  HIP_ATTR_CU_COUNT = 63,
  HIP_ATTR_MAX_SHARED_PER_BLOCK = 74
};
/* hipFunction_attribute */
enum { HIP_FUNC_MAX_THREADS = 0, HIP_FUNC_SHARED_BYTES = 1, HIP_FUNC_LOCAL_BYTES = 3, HIP_FUNC_NUM_REGS = 4 };

/* X(field, symbol, return type, parameters) */
#define RT_HIP_FUNCS(X)                                                                                         \
  X(Init, hipInit, hipError_t, (unsigned int))                                                                   \
  X(RuntimeGetVersion, hipRuntimeGetVersion, hipError_t, (int *))                                                \
  X(GetErrorName, hipGetErrorName, const char *, (hipError_t))                                                   \
  X(GetErrorString, hipGetErrorString, const char *, (hipError_t))                                               \
  X(GetDeviceCount, hipGetDeviceCount, hipError_t, (int *))                                                      \
  X(SetDevice, hipSetDevice, hipError_t, (int))                                                                  \
  X(DeviceGetName, hipDeviceGetName, hipError_t, (char *, int, int))                                             \
  X(DeviceGetAttribute, hipDeviceGetAttribute, hipError_t, (int *, int, int))                                    \
  X(DeviceSynchronize, hipDeviceSynchronize, hipError_t, (void))                                                 \
  X(MemGetInfo, hipMemGetInfo, hipError_t, (size_t *, size_t *))                                                 \
  X(Malloc, hipMalloc, hipError_t, (void **, size_t))                                                            \
  X(Free, hipFree, hipError_t, (void *))                                                                         \
  X(Memcpy, hipMemcpy, hipError_t, (void *, const void *, size_t, int))                                          \
  X(MemcpyAsync, hipMemcpyAsync, hipError_t, (void *, const void *, size_t, int, hipStream_t))                   \
  X(MemcpyPeer, hipMemcpyPeer, hipError_t, (void *, int, const void *, int, size_t))                             \
  X(Memset, hipMemset, hipError_t, (void *, int, size_t))                                                        \
  X(MemsetAsync, hipMemsetAsync, hipError_t, (void *, int, size_t, hipStream_t))                                 \
  X(StreamCreateWithFlags, hipStreamCreateWithFlags, hipError_t, (hipStream_t *, unsigned int))                  \
  X(StreamDestroy, hipStreamDestroy, hipError_t, (hipStream_t))                                                  \
  X(StreamSynchronize, hipStreamSynchronize, hipError_t, (hipStream_t))                                          \
  X(EventCreate, hipEventCreate, hipError_t, (hipEvent_t *))                                                     \
  X(EventDestroy, hipEventDestroy, hipError_t, (hipEvent_t))                                                     \
  X(EventRecord, hipEventRecord, hipError_t, (hipEvent_t, hipStream_t))                                          \
  X(EventSynchronize, hipEventSynchronize, hipError_t, (hipEvent_t))                                             \
  X(EventElapsedTime, hipEventElapsedTime, hipError_t, (float *, hipEvent_t, hipEvent_t))                        \
  X(ModuleLoadData, hipModuleLoadData, hipError_t, (hipModule_t *, const void *))                                \
  X(ModuleUnload, hipModuleUnload, hipError_t, (hipModule_t))                                                    \
  X(ModuleGetFunction, hipModuleGetFunction, hipError_t, (hipFunction_t *, hipModule_t, const char *))           \
  X(FuncGetAttribute, hipFuncGetAttribute, hipError_t, (int *, int, hipFunction_t))                              \
  X(ModuleOccupancy, hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, hipError_t,                             \
    (int *, hipFunction_t, int, size_t))                                                                         \
  X(ModuleLaunchKernel, hipModuleLaunchKernel, hipError_t,                                                       \
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,          \
     unsigned int, hipStream_t, void **, void **))

typedef struct RtHipFns {
#define RT_HIP_FIELD(field, sym, ret, params) ret(*field) params;
  RT_HIP_FUNCS(RT_HIP_FIELD)
#undef RT_HIP_FIELD
  /* the properties record (hipGetDevicePropertiesR0600 in HIP 6, hipGetDeviceProperties in HIP 5): read
   * only for its gcnArchName, found by content */
  hipError_t (*GetDeviceProperties)(void *, int);
} RtHipFns;

struct RtHip {
  LoomContext *ctx;
  void *lib;
  RtHipFns fn;
  int version;
  int ndev;
};

/* ---- errors --------------------------------------------------------------------------------------------- */
static LoomStatus hip_fail(RtHip *h, hipError_t r, const char *call, int device, Diag *d) {
  const char *name = h && h->fn.GetErrorName ? h->fn.GetErrorName(r) : NULL;
  const char *text = h && h->fn.GetErrorString ? h->fn.GetErrorString(r) : NULL;
  LoomStatus st = r == HIP_ERROR_OUT_OF_MEMORY ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND;
  if (device >= 0)
    return diag_error(d, st, "%s on device %d failed: %s (%s)", call, device, name ? name : "unknown HIP error",
                      text ? text : "no description");
  return diag_error(d, st, "%s failed: %s (%s)", call, name ? name : "unknown HIP error", text ? text : "no description");
}

#define HIP_CALL(h, device, d, call_name, expr)                                  \
  do {                                                                           \
    hipError_t hip_r_ = (expr);                                                  \
    if (hip_r_ != HIP_SUCCESS) return hip_fail((h), hip_r_, call_name, (device), (d)); \
  } while (0)

static LoomStatus check_device(RtHip *h, int device, Diag *d) {
  if (!h) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "HIP: runtime not loaded");
  if (device < 0 || device >= h->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMD device %d does not exist (%d device%s)", device, h->ndev,
                      h->ndev == 1 ? "" : "s");
  return LOOM_OK;
}

LoomStatus rt_hip_set_device(RtHip *h, int device, Diag *d) {
  LoomStatus st = check_device(h, device, d);
  if (st != LOOM_OK) return st;
  HIP_CALL(h, device, d, "hipSetDevice", h->fn.SetDevice(device));
  return LOOM_OK;
}

/* ---- loading -------------------------------------------------------------------------------------------- */
LoomStatus rt_hip_load(LoomContext *ctx, RtHip **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_hip_load: out is NULL");
  *out = NULL;
  const char *env = getenv("LOOM_HIP_LIBRARY");
  const char *names[] = {env && *env ? env : NULL, "libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
                         "libamdhip64.so.5", "/opt/rocm/lib/libamdhip64.so"};
  void *lib = NULL;
  char why[512] = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) {
    if (!names[i]) continue;
    dlerror();
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib && (i == 0 || !why[0])) {
      const char *e = dlerror();
      snprintf(why, sizeof why, "%s", e ? e : names[i]);
    }
    if (!lib && i == 0) break; /* $LOOM_HIP_LIBRARY names the one to use */
  }
  if (!lib)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "no HIP runtime (%s not found: %s); install ROCm (libamdhip64) or use "
                      "the host backend", env && *env ? env : "libamdhip64", why);
  RtHip *h = ctx_calloc(ctx, 1, sizeof *h);
  if (!h) {
    dlclose(lib);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory loading the HIP runtime");
  }
  h->ctx = ctx;
  h->lib = lib;
  const char *missing = NULL;
#define RT_HIP_RESOLVE(field, sym, ret, params)  \
  do {                                           \
    void *p_ = dlsym(lib, #sym);                 \
    if (!p_ && !missing) missing = #sym;         \
    memcpy(&h->fn.field, &p_, sizeof p_);        \
  } while (0);
  RT_HIP_FUNCS(RT_HIP_RESOLVE)
#undef RT_HIP_RESOLVE
  void *props = dlsym(lib, "hipGetDevicePropertiesR0600");
  if (!props) props = dlsym(lib, "hipGetDeviceProperties");
  memcpy(&h->fn.GetDeviceProperties, &props, sizeof props);
  LoomStatus st = LOOM_OK;
  if (missing) {
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "the HIP runtime is too old: it has no %s (update ROCm)", missing);
  } else {
    h->fn.RuntimeGetVersion(&h->version);
    hipError_t r = h->fn.Init(0);
    int n = 0;
    hipError_t rc = r == HIP_SUCCESS ? h->fn.GetDeviceCount(&n) : r;
    if (r == HIP_ERROR_NO_DEVICE || r == HIP_ERROR_INVALID_DEVICE || rc == HIP_ERROR_NO_DEVICE ||
        (rc == HIP_SUCCESS && n <= 0)) {
      hipError_t e = r != HIP_SUCCESS ? r : rc;
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "no AMD device (%s: %s; HIP %d.%d found no AMD GPU): use host arrays",
                      r != HIP_SUCCESS ? "hipInit" : "hipGetDeviceCount",
                      e != HIP_SUCCESS && h->fn.GetErrorName ? h->fn.GetErrorName(e) : "0 devices", h->version / 10000000,
                      h->version / 100000 % 100);
    } else if (r != HIP_SUCCESS) {
      st = hip_fail(h, r, "hipInit", -1, d);
    } else if (rc != HIP_SUCCESS) {
      st = hip_fail(h, rc, "hipGetDeviceCount", -1, d);
    } else {
      h->ndev = n;
    }
  }
  if (st != LOOM_OK) {
    rt_hip_unload(h);
    return st;
  }
  *out = h;
  return LOOM_OK;
}

void rt_hip_unload(RtHip *h) {
  if (!h) return;
  dlclose(h->lib); /* RTLD_NODELETE: the runtime stays mapped (its own threads and atexit handlers) */
  ctx_free(h->ctx, h);
}

int rt_hip_runtime_version(const RtHip *h) { return h ? h->version : 0; }
int rt_hip_device_count(const RtHip *h) { return h ? h->ndev : 0; }
LoomContext *rt_hip_context(const RtHip *h) { return h->ctx; }

/* gcnArchName: the first "gfx" + lowercase letters / digits (and its ":feature+" suffix) in the record. */
static void find_arch(const unsigned char *rec, size_t n, char *out, size_t cap) {
  out[0] = 0;
  for (size_t i = 0; i + 4 < n; i++) {
    if (memcmp(rec + i, "gfx", 3) || !((rec[i + 3] >= '0' && rec[i + 3] <= '9'))) continue;
    size_t k = 0;
    while (i + k < n && k + 1 < cap && rec[i + k] > ' ' && rec[i + k] < 127) {
      out[k] = (char)rec[i + k];
      k++;
    }
    out[k] = 0;
    return;
  }
}

LoomStatus rt_hip_device_info(RtHip *h, int device, RtGpuDeviceInfo *out, Diag *d) {
  LoomStatus st = rt_hip_set_device(h, device, d);
  if (st != LOOM_OK) return st;
  memset(out, 0, sizeof *out);
  HIP_CALL(h, device, d, "hipDeviceGetName", h->fn.DeviceGetName(out->name, (int)sizeof out->name - 1, device));
  int v = 0;
#define ATTR(attr, field)                                                                           \
  HIP_CALL(h, device, d, "hipDeviceGetAttribute", h->fn.DeviceGetAttribute(&v, attr, device)); \
  out->field = v;
  ATTR(HIP_ATTR_CU_COUNT, sm_count)
  ATTR(HIP_ATTR_MAX_THREADS_PER_BLOCK, max_threads_per_block)
  ATTR(HIP_ATTR_MAX_THREADS_PER_CU, max_threads_per_sm)
  ATTR(HIP_ATTR_MAX_SHARED_PER_BLOCK, shared_per_block)
  ATTR(HIP_ATTR_L2_CACHE_SIZE, l2_bytes)
#undef ATTR
  size_t fr = 0, total = 0;
  HIP_CALL(h, device, d, "hipMemGetInfo", h->fn.MemGetInfo(&fr, &total));
  out->total_mem = total;
  if (h->fn.GetDeviceProperties) {
    size_t n = 16384; /* larger than either layout of the record */
    unsigned char *rec = ctx_calloc(h->ctx, 1, n);
    if (!rec) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory reading AMD device %d", device);
    hipError_t r = h->fn.GetDeviceProperties(rec, device);
    if (r == HIP_SUCCESS) find_arch(rec, n, out->arch, sizeof out->arch);
    ctx_free(h->ctx, rec);
    if (r != HIP_SUCCESS) return hip_fail(h, r, "hipGetDeviceProperties", device, d);
  }
  CgAmdChip chip;
  if (!out->arch[0] || !cg_amdgpu_chip(out->arch, &chip))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "AMD device %d (%s) is a %s, which Loom cannot compile for (it knows %s)",
                      device, out->name, out->arch[0] ? out->arch : "chip of unknown architecture",
                      cg_amdgpu_chip_names());
  out->wave = chip.wave;
  out->arch_major = chip.isa_version / 1000;
  out->arch_minor = chip.isa_version / 100 % 10;
  return LOOM_OK;
}

LoomStatus rt_hip_device_synchronize(RtHip *h, int device, Diag *d) {
  HIP_CALL(h, device, d, "hipDeviceSynchronize", h->fn.DeviceSynchronize());
  return LOOM_OK;
}

LoomStatus rt_hip_mem_info(RtHip *h, int device, uint64_t *free_bytes, uint64_t *total_bytes, Diag *d) {
  LoomStatus st = rt_hip_set_device(h, device, d);
  if (st != LOOM_OK) return st;
  size_t f = 0, t = 0;
  HIP_CALL(h, device, d, "hipMemGetInfo", h->fn.MemGetInfo(&f, &t));
  *free_bytes = f;
  *total_bytes = t;
  return LOOM_OK;
}

/* ---- memory (the current device) ---------------------------------------------------------------------- */
LoomStatus rt_hip_mem_alloc(void *drv, int device, size_t size, uint64_t *out, Diag *d) {
  RtHip *h = drv;
  *out = 0;
  if (size == 0) return LOOM_OK;
  void *p = NULL;
  hipError_t r = h->fn.Malloc(&p, size);
  if (r == HIP_ERROR_OUT_OF_MEMORY) return LOOM_ERR_OUT_OF_MEMORY; /* the pool retries and writes its message */
  if (r != HIP_SUCCESS) return hip_fail(h, r, "hipMalloc", device, d);
  *out = (uint64_t)(uintptr_t)p;
  return LOOM_OK;
}

void rt_hip_mem_free(void *drv, int device, uint64_t ptr) {
  RtHip *h = drv;
  (void)device;
  if (ptr) h->fn.Free((void *)(uintptr_t)ptr);
}

static LoomStatus copy(RtHip *h, int device, void *dst, const void *src, size_t n, int kind, void *stream,
                       const char *what, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (stream) HIP_CALL(h, device, d, what, h->fn.MemcpyAsync(dst, src, n, kind, (hipStream_t)stream));
  else HIP_CALL(h, device, d, what, h->fn.Memcpy(dst, src, n, kind));
  return LOOM_OK;
}

LoomStatus rt_hip_copy_h2d(void *drv, int device, uint64_t dst, const void *src, size_t n, void *stream, Diag *d) {
  return copy(drv, device, (void *)(uintptr_t)dst, src, n, HIP_MEMCPY_H2D, stream, "hipMemcpy (host to device)", d);
}
LoomStatus rt_hip_copy_d2h(void *drv, int device, void *dst, uint64_t src, size_t n, void *stream, Diag *d) {
  return copy(drv, device, dst, (const void *)(uintptr_t)src, n, HIP_MEMCPY_D2H, stream, "hipMemcpy (device to host)",
              d);
}
LoomStatus rt_hip_copy_d2d(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *stream, Diag *d) {
  return copy(drv, device, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, HIP_MEMCPY_D2D, stream,
              "hipMemcpy (device to device)", d);
}

LoomStatus rt_hip_copy_peer(void *drv, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d) {
  RtHip *h = drv;
  if (n == 0) return LOOM_OK;
  LoomStatus st = check_device(h, src_device, d);
  if (st == LOOM_OK) st = check_device(h, dst_device, d);
  if (st != LOOM_OK) return st;
  HIP_CALL(h, dst_device, d, "hipMemcpyPeer",
           h->fn.MemcpyPeer((void *)(uintptr_t)dst, dst_device, (const void *)(uintptr_t)src, src_device, n));
  return LOOM_OK;
}

LoomStatus rt_hip_memset(void *drv, int device, uint64_t dst, uint8_t value, size_t n, void *stream, Diag *d) {
  RtHip *h = drv;
  if (n == 0) return LOOM_OK;
  if (stream) HIP_CALL(h, device, d, "hipMemsetAsync", h->fn.MemsetAsync((void *)(uintptr_t)dst, value, n, stream));
  else HIP_CALL(h, device, d, "hipMemset", h->fn.Memset((void *)(uintptr_t)dst, value, n));
  return LOOM_OK;
}

/* ---- streams and events (the current device) ------------------------------------------------------------ */
LoomStatus rt_hip_stream_create(void *drv, int device, void **out, Diag *d) {
  RtHip *h = drv;
  hipStream_t s = NULL;
  *out = NULL;
  HIP_CALL(h, device, d, "hipStreamCreateWithFlags", h->fn.StreamCreateWithFlags(&s, HIP_STREAM_DEFAULT));
  *out = s;
  return LOOM_OK;
}

void rt_hip_stream_destroy(void *drv, int device, void *stream) {
  RtHip *h = drv;
  (void)device;
  if (stream) h->fn.StreamDestroy(stream);
}

LoomStatus rt_hip_stream_synchronize(void *drv, int device, void *stream, Diag *d) {
  RtHip *h = drv;
  HIP_CALL(h, device, d, "hipStreamSynchronize", h->fn.StreamSynchronize(stream));
  return LOOM_OK;
}

LoomStatus rt_hip_event_create(void *drv, int device, void **out, Diag *d) {
  RtHip *h = drv;
  hipEvent_t e = NULL;
  *out = NULL;
  HIP_CALL(h, device, d, "hipEventCreate", h->fn.EventCreate(&e));
  *out = e;
  return LOOM_OK;
}

void rt_hip_event_destroy(void *drv, int device, void *event) {
  RtHip *h = drv;
  (void)device;
  if (event) h->fn.EventDestroy(event);
}

LoomStatus rt_hip_event_record(void *drv, int device, void *event, void *stream, Diag *d) {
  RtHip *h = drv;
  HIP_CALL(h, device, d, "hipEventRecord", h->fn.EventRecord(event, stream));
  return LOOM_OK;
}

LoomStatus rt_hip_event_synchronize(void *drv, int device, void *event, Diag *d) {
  RtHip *h = drv;
  HIP_CALL(h, device, d, "hipEventSynchronize", h->fn.EventSynchronize(event));
  return LOOM_OK;
}

LoomStatus rt_hip_event_elapsed(void *drv, int device, void *start, void *end, float *ms, Diag *d) {
  RtHip *h = drv;
  HIP_CALL(h, device, d, "hipEventElapsedTime", h->fn.EventElapsedTime(ms, start, end));
  return LOOM_OK;
}

/* ---- code objects (the current device) ------------------------------------------------------------------ */
LoomStatus rt_hip_module_load(void *drv, int device, const void *image, size_t size, void **out, Diag *d) {
  RtHip *h = drv;
  *out = NULL;
  if (!image || size < 64) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "HIP: empty code object");
  hipModule_t m = NULL;
  HIP_CALL(h, device, d, "hipModuleLoadData", h->fn.ModuleLoadData(&m, image));
  *out = m;
  return LOOM_OK;
}

void rt_hip_module_unload(void *drv, int device, void *module) {
  RtHip *h = drv;
  (void)device;
  if (module) h->fn.ModuleUnload(module);
}

LoomStatus rt_hip_module_function(void *drv, int device, void *module, const char *name, void **fn, Diag *d) {
  RtHip *h = drv;
  hipFunction_t f = NULL;
  hipError_t r = h->fn.ModuleGetFunction(&f, module, name);
  if (r != HIP_SUCCESS) {
    const char *ename = h->fn.GetErrorName ? h->fn.GetErrorName(r) : NULL;
    return diag_error(d, LOOM_ERR_BACKEND, "kernel '%s' not found in the code object on AMD device %d: %s", name, device,
                      ename ? ename : "unknown HIP error");
  }
  *fn = f;
  return LOOM_OK;
}

LoomStatus rt_hip_func_attrs(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d) {
  RtHip *h = drv;
  int v = 0;
  HIP_CALL(h, device, d, "hipFuncGetAttribute", h->fn.FuncGetAttribute(&v, HIP_FUNC_MAX_THREADS, fn));
  out->max_threads_per_block = v;
  HIP_CALL(h, device, d, "hipFuncGetAttribute", h->fn.FuncGetAttribute(&v, HIP_FUNC_NUM_REGS, fn));
  out->num_regs = v;
  return LOOM_OK;
}

LoomStatus rt_hip_occupancy(void *drv, int device, void *fn, int block, size_t dynamic_shared, int *blocks_per_cu,
                            Diag *d) {
  RtHip *h = drv;
  int n = 0;
  HIP_CALL(h, device, d, "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
           h->fn.ModuleOccupancy(&n, fn, block, dynamic_shared));
  *blocks_per_cu = n;
  return LOOM_OK;
}

LoomStatus rt_hip_launch(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                         uint32_t shared_bytes, void *stream, void **params, Diag *d) {
  RtHip *h = drv;
  HIP_CALL(h, device, d, "hipModuleLaunchKernel",
           h->fn.ModuleLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                    (hipStream_t)stream, params, NULL));
  return LOOM_OK;
}
