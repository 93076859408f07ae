/* hip.h (runtime): the AMD device's driver layer: the HIP runtime, loaded at run time, as the calls of
 * the shared GPU layer's driver table (runtime/gpu/gpu_driver.h has their contract).
 *
 * libamdhip64 is opened with dlopen ($LOOM_HIP_LIBRARY, else libamdhip64.so, .so.7, .so.6, .so.5; ROCm's
 * /opt/rocm/lib too), never linked, so one build runs everywhere; a machine without it gets
 * LOOM_ERR_UNSUPPORTED with "no HIP runtime (libamdhip64 not found: ...)", one without an AMD GPU
 * "no AMD device (hipInit: hipErrorInvalidDevice; HIP 5.2 found no AMD GPU)" (what HIP 5.2 returns at
 * once, without a GPU),
 * and the host backend. No HIP type appears here: device pointers are uint64_t (0 is never a valid
 * allocation); streams, events, modules and functions are HIP's own handles as void * (hipStream_t,
 * hipEvent_t, hipModule_t, hipFunction_t; a NULL stream is the device's null stream).
 *
 * Devices. HIP's runtime API keeps one primary context per device and a current device per thread:
 * rt_hip_set_device makes a device current on the calling thread (hipSetDevice); the calls below that
 * take a device act on the current one, as the driver table's contract says (the layer makes it
 * current once per series of calls), and take the device only for their messages. Device facts are
 * read through ABI-stable entry points only: hipDeviceGetAttribute for attributes whose numbering is the
 * same in HIP 5 and 6, hipDeviceGetName, hipMemGetInfo, and the gcnArchName ("gfx942:sramecc+:xnack-")
 * found in the properties record by its "gfx" prefix (the record's layout differs between HIP 5's
 * hipGetDeviceProperties and HIP 6's hipGetDevicePropertiesR0600); the wave size is the chip's.
 *
 * Kernels. A code object is loaded with hipModuleLoadData; hipModuleLaunchKernel lays the kernel
 * arguments out itself from the code object's metadata (explicit arguments at their metadata offsets,
 * the hidden ones filled in by the runtime), so the launcher passes one pointer per explicit argument.
 *
 * Errors. Every failing call returns a LoomStatus and writes d with the call, HIP's error name and text
 * and the device: "hipMalloc on device 0 failed: hipErrorOutOfMemory (out of memory)". Out of memory
 * maps to LOOM_ERR_OUT_OF_MEMORY (rt_hip_mem_alloc's without a message: the pool retries and writes
 * its own); other failures to LOOM_ERR_BACKEND.
 */
#ifndef LOOM_RUNTIME_HIP_H
#define LOOM_RUNTIME_HIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/gpu/gpu_driver.h"

typedef struct RtHip RtHip; /* the loaded runtime */

/* ---- the runtime and its devices ---------------------------------------------------------------------- */
/* dlopen + dlsym of the entry points, hipInit(0), hipGetDeviceCount. Errors: LOOM_ERR_UNSUPPORTED with
 * "no HIP runtime (...)" or "no AMD device (...)"; LOOM_ERR_BACKEND when the runtime lacks an entry point
 * (named). ctx gives the host allocator. */
LoomStatus rt_hip_load(LoomContext *ctx, RtHip **out, Diag *d);
void rt_hip_unload(RtHip *h); /* NULL is a no-op; the library stays mapped (HIP does not unload cleanly) */
int rt_hip_runtime_version(const RtHip *h); /* HIP_VERSION: 50221153 for 5.2 */
int rt_hip_device_count(const RtHip *h);    /* >= 1 once loaded */
LoomContext *rt_hip_context(const RtHip *h); /* the context given to rt_hip_load (its host allocator) */

/* The device's facts (it is made current): arch = gcnArchName, arch_major / arch_minor = the gfx
 * number's major and minor (gfx942: 9, 4; gfx1100: 11, 0), sm_count = compute units, wave = the chip's
 * (64 on gfx9, 32 on gfx10+). A chip the AMD target does not know is LOOM_ERR_UNSUPPORTED. */
LoomStatus rt_hip_device_info(RtHip *h, int device, RtGpuDeviceInfo *out, Diag *d);
/* Makes the device current on the calling thread (its primary context); out of range is
 * LOOM_ERR_INVALID_ARGUMENT. */
LoomStatus rt_hip_set_device(RtHip *h, int device, Diag *d);
LoomStatus rt_hip_device_synchronize(RtHip *h, int device, Diag *d); /* the current device */
/* Free and total memory of the device (made current). */
LoomStatus rt_hip_mem_info(RtHip *h, int device, uint64_t *free_bytes, uint64_t *total_bytes, Diag *d);

/* ---- the driver table's calls (drv is an RtHip; gpu_driver.h has the contracts) ------------------------- */
LoomStatus rt_hip_mem_alloc(void *drv, int device, size_t size, uint64_t *out, Diag *d); /* OOM: d untouched */
void rt_hip_mem_free(void *drv, int device, uint64_t ptr);
LoomStatus rt_hip_copy_h2d(void *drv, int device, uint64_t dst, const void *src, size_t n, void *stream, Diag *d);
LoomStatus rt_hip_copy_d2h(void *drv, int device, void *dst, uint64_t src, size_t n, void *stream, Diag *d);
LoomStatus rt_hip_copy_d2d(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *stream, Diag *d);
/* hipMemcpyPeer: ordered after earlier work of both devices' null streams; staged by the runtime when
 * peer access is not enabled. */
LoomStatus rt_hip_copy_peer(void *drv, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d);
LoomStatus rt_hip_memset(void *drv, int device, uint64_t dst, uint8_t value, size_t n, void *stream, Diag *d);
LoomStatus rt_hip_stream_create(void *drv, int device, void **out, Diag *d); /* blocking */
void rt_hip_stream_destroy(void *drv, int device, void *stream);
LoomStatus rt_hip_stream_synchronize(void *drv, int device, void *stream, Diag *d);
LoomStatus rt_hip_event_create(void *drv, int device, void **out, Diag *d);
void rt_hip_event_destroy(void *drv, int device, void *event);
LoomStatus rt_hip_event_record(void *drv, int device, void *event, void *stream, Diag *d);
LoomStatus rt_hip_event_synchronize(void *drv, int device, void *event, Diag *d);
LoomStatus rt_hip_event_elapsed(void *drv, int device, void *start, void *end, float *ms, Diag *d);
/* A code object (an AMDGPU ELF of at least 64 bytes) loaded on the current device. */
LoomStatus rt_hip_module_load(void *drv, int device, const void *image, size_t size, void **out, Diag *d);
void rt_hip_module_unload(void *drv, int device, void *module);
LoomStatus rt_hip_module_function(void *drv, int device, void *module, const char *name, void **fn, Diag *d);
LoomStatus rt_hip_func_attrs(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d);
LoomStatus rt_hip_occupancy(void *drv, int device, void *fn, int block, size_t dynamic_shared, int *blocks_per_cu,
                            Diag *d);
/* params[i] points at explicit argument i; stream NULL: the device's null stream. */
LoomStatus rt_hip_launch(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                         uint32_t shared_bytes, void *stream, void **params, Diag *d);

/* ---- hip_table.c: the driver table's LLVM-free entries, shared by libloom and libloomrt ------------------ */
void rt_hip_drv_unload(void *drv);
LoomStatus rt_hip_drv_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d);
LoomStatus rt_hip_drv_retain(void *drv, int device, Diag *d); /* also set_current */
void rt_hip_drv_release(void *drv, int device);
LoomStatus rt_hip_drv_synchronize(void *drv, int device, Diag *d);
/* The entries both libraries' HIP tables share (designated initializers; each adds .load and .module_load,
 * and libloom .target_create). */
#define RT_HIP_DRIVER_COMMON                                                                                      \
  .name = "AMD", .kind = LOOM_DEVICE_HIP, .binary = CG_BINARY_AMDGPU, .unload = rt_hip_drv_unload,                \
  .device_info = rt_hip_drv_device_info, .retain = rt_hip_drv_retain, .release = rt_hip_drv_release,              \
  .set_current = rt_hip_drv_retain, .synchronize = rt_hip_drv_synchronize, .mem_alloc = rt_hip_mem_alloc,         \
  .mem_free = rt_hip_mem_free, .copy_h2d = rt_hip_copy_h2d, .copy_d2h = rt_hip_copy_d2h,                          \
  .copy_d2d = rt_hip_copy_d2d, .fill_bytes = rt_hip_memset, .copy_peer = rt_hip_copy_peer,                       \
  .stream_create = rt_hip_stream_create,                                                                          \
  .stream_destroy = rt_hip_stream_destroy, .stream_synchronize = rt_hip_stream_synchronize,                       \
  .event_create = rt_hip_event_create, .event_destroy = rt_hip_event_destroy, .event_record = rt_hip_event_record, \
  .event_synchronize = rt_hip_event_synchronize, .event_elapsed = rt_hip_event_elapsed,                           \
  .module_unload = rt_hip_module_unload, .module_function = rt_hip_module_function,                               \
  .func_attrs = rt_hip_func_attrs, .occupancy = rt_hip_occupancy, .launch = rt_hip_launch

#endif /* LOOM_RUNTIME_HIP_H */
