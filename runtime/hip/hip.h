/* hip.h (runtime): the AMD device backend's driver layer: the HIP runtime, loaded at run time.
 *
 * libamdhip64 is opened with dlopen ($LOOM_HIP_LIBRARY, else libamdhip64.so, .so.7, .so.6, .so.5; ROCm's
 * /opt/rocm/lib too), never linked, so one build runs everywhere; a machine without it gets
 * LOOM_ERR_UNSUPPORTED with "no HIP runtime (libamdhip64 not found: ...)", one without an AMD GPU
 * "no AMD device (hipInit: hipErrorInvalidDevice ...)" (what HIP 5.2 returns at once, without a GPU),
 * and the host backend. No HIP type appears here: device pointers are uint64_t (0 is never a valid
 * allocation), driver objects are opaque Loom handles that remember their device.
 *
 * Devices. HIP's runtime API keeps one primary context per device and a current device per thread:
 * every call that names a device makes it current on the calling thread first (hipSetDevice), so one
 * thread can drive several devices. Device facts are read through ABI-stable entry points only:
 * hipDeviceGetAttribute for attributes whose numbering is the same in HIP 5 and 6, hipDeviceGetName,
 * hipMemGetInfo, and the gcnArchName ("gfx942:sramecc+:xnack-") found in the properties record by its
 * "gfx" prefix (the record's layout differs between HIP 5's hipGetDeviceProperties and HIP 6's
 * hipGetDevicePropertiesR0600).
 *
 * Kernels. A code object is loaded with hipModuleLoadData; hipModuleLaunchKernel lays the kernel
 * arguments out itself from the code object's metadata (explicit arguments at their metadata offsets,
 * the hidden ones filled in by the runtime), so the launcher passes one pointer per explicit argument.
 *
 * Errors. Every failing call returns a LoomStatus and writes d with the call, HIP's error name and text
 * and the device: "hipMalloc on device 0 failed: hipErrorOutOfMemory (out of memory)". Out of memory
 * maps to LOOM_ERR_OUT_OF_MEMORY; other failures to LOOM_ERR_BACKEND.
 */
#ifndef LOOM_RUNTIME_HIP_H
#define LOOM_RUNTIME_HIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct RtHip RtHip;             /* the loaded runtime */
typedef struct RtHipStream RtHipStream; /* a non-blocking stream of one device */
typedef struct RtHipEvent RtHipEvent;   /* a timing event of one device */
typedef struct RtHipModule RtHipModule; /* a loaded code object of one device */

/* A kernel of a loaded module: valid as long as its module. */
typedef struct RtHipKernel {
  void *handle; /* hipFunction_t */
  int32_t device;
} RtHipKernel;

/* ---- the runtime ------------------------------------------------------------------------------------ */
/* dlopen + dlsym of the entry points, hipInit(0), hipGetDeviceCount. Errors: LOOM_ERR_UNSUPPORTED with
 * "no HIP runtime (...)" or "no AMD device (...)"; LOOM_ERR_BACKEND when the runtime lacks an entry point
 * (named). ctx gives the host allocator. */
LoomStatus rt_hip_load(LoomContext *ctx, RtHip **out, Diag *d);
void rt_hip_unload(RtHip *h); /* NULL is a no-op; the library stays mapped (HIP does not unload cleanly) */
int rt_hip_runtime_version(const RtHip *h); /* HIP_VERSION: 50221153 for 5.2 */
int rt_hip_device_count(const RtHip *h);    /* >= 1 once loaded */

typedef struct RtHipDeviceInfo {
  char name[256];
  char arch[64];                  /* gcnArchName: "gfx942:sramecc+:xnack-" */
  int32_t cu_count;               /* compute units */
  int32_t max_threads_per_block;
  int32_t max_threads_per_cu;
  int32_t wave;                   /* threads per wave of the chip (64 on gfx9, 32 on gfx10+) */
  int32_t shared_per_block;       /* LDS bytes */
  int32_t l2_bytes;
  uint64_t total_mem;             /* bytes */
} RtHipDeviceInfo;
LoomStatus rt_hip_device_info(RtHip *h, int device, RtHipDeviceInfo *out, Diag *d);

/* Makes the device current on the calling thread (its primary context). */
LoomStatus rt_hip_set_device(RtHip *h, int device, Diag *d);
LoomStatus rt_hip_device_synchronize(RtHip *h, int device, Diag *d);
LoomStatus rt_hip_mem_info(RtHip *h, int device, uint64_t *free_bytes, uint64_t *total_bytes, Diag *d);

/* ---- memory ------------------------------------------------------------------------------------------ */
/* size 0 gives *out = 0. HIP's out of memory returns LOOM_ERR_OUT_OF_MEMORY. */
LoomStatus rt_hip_mem_alloc(RtHip *h, int device, size_t size, uint64_t *out, Diag *d);
LoomStatus rt_hip_mem_free(RtHip *h, int device, uint64_t ptr, Diag *d); /* 0 is a no-op */
/* Copies. stream NULL: synchronous. With a stream: asynchronous, ordered on it (the host buffer must
 * stay unchanged until the stream is synchronized). */
LoomStatus rt_hip_memcpy_h2d(RtHip *h, int device, uint64_t dst, const void *src, size_t n, RtHipStream *s, Diag *d);
LoomStatus rt_hip_memcpy_d2h(RtHip *h, int device, void *dst, uint64_t src, size_t n, RtHipStream *s, Diag *d);
LoomStatus rt_hip_memcpy_d2d(RtHip *h, int device, uint64_t dst, uint64_t src, size_t n, RtHipStream *s, Diag *d);
/* Between two devices (hipMemcpyPeer: ordered after earlier work of both devices' null streams;
 * staged by the runtime when peer access is not enabled). */
LoomStatus rt_hip_memcpy_peer(RtHip *h, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d);
LoomStatus rt_hip_memset(RtHip *h, int device, uint64_t dst, uint8_t value, size_t n, RtHipStream *s, Diag *d);

/* ---- streams and events ------------------------------------------------------------------------------ */
LoomStatus rt_hip_stream_create(RtHip *h, int device, RtHipStream **out, Diag *d);
void rt_hip_stream_destroy(RtHip *h, RtHipStream *s); /* NULL ok */
LoomStatus rt_hip_stream_synchronize(RtHip *h, RtHipStream *s, Diag *d);
int rt_hip_stream_device(const RtHipStream *s);
void *rt_hip_stream_raw(const RtHipStream *s); /* the hipStream_t */
LoomStatus rt_hip_event_create(RtHip *h, int device, RtHipEvent **out, Diag *d);
void rt_hip_event_destroy(RtHip *h, RtHipEvent *e); /* NULL ok */
LoomStatus rt_hip_event_record(RtHip *h, RtHipEvent *e, RtHipStream *s, Diag *d); /* s NULL: null stream */
LoomStatus rt_hip_event_synchronize(RtHip *h, RtHipEvent *e, Diag *d);
LoomStatus rt_hip_event_elapsed(RtHip *h, RtHipEvent *start, RtHipEvent *end, float *ms, Diag *d);
int rt_hip_event_device(const RtHipEvent *e);

/* ---- code objects -------------------------------------------------------------------------------------- */
LoomStatus rt_hip_module_load(RtHip *h, int device, const void *image, size_t size, RtHipModule **out, Diag *d);
void rt_hip_module_unload(RtHip *h, RtHipModule *m); /* NULL ok */
LoomStatus rt_hip_module_kernel(RtHip *h, RtHipModule *m, const char *name, RtHipKernel *out, Diag *d);
typedef struct RtHipKernelAttrs {
  int32_t max_threads_per_block; /* the most this kernel launches with */
  int32_t num_regs;              /* VGPRs per thread */
  int32_t shared_bytes;          /* static LDS */
  int32_t local_bytes;           /* scratch per thread */
} RtHipKernelAttrs;
LoomStatus rt_hip_kernel_attrs(RtHip *h, const RtHipKernel *k, RtHipKernelAttrs *out, Diag *d);
/* Resident blocks per compute unit for a block size. */
LoomStatus rt_hip_occupancy(RtHip *h, const RtHipKernel *k, int block_size, int *blocks_per_cu, Diag *d);
/* params[i] points at explicit argument i; stream NULL: the device's null stream. */
LoomStatus rt_hip_launch(RtHip *h, const RtHipKernel *k, const uint32_t grid[3], const uint32_t block[3],
                         uint32_t shared_bytes, RtHipStream *s, void **params, Diag *d);
/* The same with a stream given as the runtime's own hipStream_t (RawKernel's stream argument). */
LoomStatus rt_hip_launch_raw_stream(RtHip *h, const RtHipKernel *k, const uint32_t grid[3], const uint32_t block[3],
                                    uint32_t shared_bytes, void *stream, void **params, Diag *d);

#endif /* LOOM_RUNTIME_HIP_H */
