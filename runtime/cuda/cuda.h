/* SPDX-License-Identifier: Apache-2.0 */
/* cuda.h (runtime): the NVIDIA device backend's driver layer. The CUDA device itself is the shared GPU
 * layer (runtime/gpu/) over the driver table runtime/cuda/cuda_device.c fills from this layer's hooks
 * (cuda_driver.h); this typed API serves raw modules (cuda_raw.c), tests, benchmarks and libloomrt.
 *
 * The CUDA driver API is loaded at run time (dlopen of libcuda.so.1, never linked), so one build runs
 * on every machine and a machine without a driver gets LOOM_ERR_UNSUPPORTED with "no CUDA driver
 * (libcuda.so.1 not found: ...)" from rt_cuda_load, and the host backend. No CUDA type appears in
 * this header: device pointers are uint64_t (0 is never a valid allocation), driver objects are
 * opaque Loom handles that remember their device.
 *
 * Devices and contexts. Each device is used through its primary context. rt_cuda_device_retain()
 * must be called (once per user, reference counted) before any call that names that device or one
 * of its objects; every such call makes the device's primary context current on the calling thread
 * first, so several devices can be used from one process and one thread. rt_cuda_unload() releases
 * what is still retained.
 *
 * Threads. An RtCuda may be used from several threads at once (the driver is thread-safe; Loom's
 * own state in it is under a mutex). A stream must not be used from two threads at the same time.
 *
 * Errors. Every failing call returns a LoomStatus and writes d with the driver call that failed,
 * the driver's error name and text, and the device: "cuMemAlloc on device 0 failed:
 * CUDA_ERROR_OUT_OF_MEMORY (out of memory)". The driver's own OUT_OF_MEMORY maps to
 * LOOM_ERR_OUT_OF_MEMORY; other driver failures to LOOM_ERR_BACKEND.
 */
#ifndef LOOM_RUNTIME_CUDA_H
#define LOOM_RUNTIME_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "runtime/gpu/gpu_pool.h"

typedef struct RtCuda RtCuda;             /* the loaded driver */
typedef struct RtCuStream RtCuStream;     /* a blocking stream of one device (ordered with the legacy default stream) */
typedef struct RtCuEvent RtCuEvent;       /* a timing event of one device */
typedef struct RtCuModule RtCuModule;     /* a loaded cubin (or PTX) of one device */

/* A kernel of a loaded module: valid as long as its module. */
typedef struct RtCuKernel {
  void *handle; /* CUfunction */
  int32_t device;
} RtCuKernel;

/* ---- the driver ---------------------------------------------------------------------------------- */
/* dlopen("libcuda.so.1"), resolve the entry points, cuInit(0). Errors: LOOM_ERR_UNSUPPORTED with
 * "no CUDA driver (libcuda.so.1 not found: ...)" or "no CUDA device (...)"; LOOM_ERR_BACKEND when
 * the driver is too old (names the missing entry point). ctx gives the host allocator (may be NULL). */
LoomStatus rt_cuda_load(LoomContext *ctx, RtCuda **out, Diag *d);
/* Releases every primary context still retained, then dlclose()s the driver. NULL is a no-op. */
void rt_cuda_unload(RtCuda *cu);
int rt_cuda_driver_version(const RtCuda *cu); /* e.g. 13000 for CUDA 13.0 */
int rt_cuda_device_count(const RtCuda *cu);   /* >= 1 once loaded */

typedef struct RtCuDeviceInfo {
  char name[256];
  int32_t cc_major, cc_minor;     /* compute capability, 9.0 for the H100/H200 */
  int32_t sm_count;               /* multiprocessors */
  int32_t max_threads_per_block;
  int32_t max_threads_per_sm;
  int32_t warp_size;
  int32_t shared_per_block;       /* bytes without opt-in */
  int32_t shared_per_block_optin; /* bytes with cuFuncSetAttribute opt-in */
  int32_t l2_bytes;
  int32_t pci_bus_id;
  uint64_t total_mem;             /* bytes */
} RtCuDeviceInfo;
/* Works without retaining the device. */
LoomStatus rt_cuda_device_info(RtCuda *cu, int device, RtCuDeviceInfo *out, Diag *d);

/* Primary context of a device: retain before use, release as many times as retained. */
LoomStatus rt_cuda_device_retain(RtCuda *cu, int device, Diag *d);
void rt_cuda_device_release(RtCuda *cu, int device);
/* Makes the device's (retained) primary context current on the calling thread. */
LoomStatus rt_cuda_set_current(RtCuda *cu, int device, Diag *d);
/* Waits for all work on the device. */
LoomStatus rt_cuda_device_synchronize(RtCuda *cu, int device, Diag *d);
LoomStatus rt_cuda_mem_info(RtCuda *cu, int device, uint64_t *free_bytes, uint64_t *total_bytes,
                            Diag *d);

/* ---- raw device memory (the pool below caches it) ----------------------------------------------- */
/* size 0 gives *out = 0. The driver's OUT_OF_MEMORY returns LOOM_ERR_OUT_OF_MEMORY. */
LoomStatus rt_cuda_mem_alloc(RtCuda *cu, int device, size_t size, uint64_t *out, Diag *d);
LoomStatus rt_cuda_mem_free(RtCuda *cu, int device, uint64_t ptr, Diag *d); /* 0 is a no-op */

/* Copies. stream NULL: synchronous (the host buffer may be reused when the call returns). With a
 * stream: asynchronous and ordered on it; the host buffer must stay alive and unchanged until the
 * stream is synchronized (pageable host memory makes the driver stage it, which is still correct). */
LoomStatus rt_cuda_memcpy_h2d(RtCuda *cu, int device, uint64_t dst, const void *src, size_t n,
                              RtCuStream *stream, Diag *d);
LoomStatus rt_cuda_memcpy_d2h(RtCuda *cu, int device, void *dst, uint64_t src, size_t n,
                              RtCuStream *stream, Diag *d);
LoomStatus rt_cuda_memcpy_d2d(RtCuda *cu, int device, uint64_t dst, uint64_t src, size_t n,
                              RtCuStream *stream, Diag *d);
/* Sets n bytes to value (stream NULL: synchronous with respect to the host). */
/* Copies n bytes from device memory of src_device to device memory of dst_device (both retained):
 * cuMemcpyPeer, ordered after earlier work of both devices' legacy streams (not their other streams:
 * the caller synchronizes those). Works without peer access enabled (the driver stages it). */
LoomStatus rt_cuda_memcpy_peer(RtCuda *cu, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n,
                               Diag *d);
LoomStatus rt_cuda_memset(RtCuda *cu, int device, uint64_t dst, uint8_t value, size_t n,
                          RtCuStream *stream, Diag *d);

/* ---- streams and events ------------------------------------------------------------------------- */
LoomStatus rt_cuda_stream_create(RtCuda *cu, int device, RtCuStream **out, Diag *d);
void rt_cuda_stream_destroy(RtCuda *cu, RtCuStream *s); /* pending work still completes; NULL ok */
LoomStatus rt_cuda_stream_synchronize(RtCuda *cu, RtCuStream *s, Diag *d);
int rt_cuda_stream_device(const RtCuStream *s);
void *rt_cuda_stream_raw(const RtCuStream *s); /* the CUstream */

LoomStatus rt_cuda_event_create(RtCuda *cu, int device, RtCuEvent **out, Diag *d);
void rt_cuda_event_destroy(RtCuda *cu, RtCuEvent *e); /* NULL ok */
/* stream NULL: the device's legacy default stream. */
LoomStatus rt_cuda_event_record(RtCuda *cu, RtCuEvent *e, RtCuStream *stream, Diag *d);
LoomStatus rt_cuda_event_synchronize(RtCuda *cu, RtCuEvent *e, Diag *d);
/* Milliseconds between two recorded, completed events of one device. */
LoomStatus rt_cuda_event_elapsed(RtCuda *cu, RtCuEvent *start, RtCuEvent *end, float *ms, Diag *d);

/* ---- code: PTX -> cubin -> module -> kernel -> launch ------------------------------------------- */
/* Links PTX text (NUL-terminated; name is used in messages) into a cubin for the device's
 * architecture with cuLinkCreate/cuLinkAddData/cuLinkComplete. *cubin is ctx_alloc'd (free with
 * ctx_free(ctx given to rt_cuda_load)) so that the caller can keep it in the disk cache. A PTX error
 * returns LOOM_ERR_BACKEND with the JIT's error log in the message. opt_level 0..4 is the JIT's
 * (ptxas's) optimization level (CU_JIT_OPTIMIZATION_LEVEL); -1 leaves the driver's default (4). A
 * module with several functions is compiled on several threads (CU_JIT_SPLIT_COMPILE; the number is
 * LOOM_CUDA_JIT_THREADS, default 0: every CPU; 1 turns it off). */
LoomStatus rt_cuda_link_ptx(RtCuda *cu, int device, const char *ptx, const char *name, int opt_level,
                            void **cubin, size_t *cubin_size, Diag *d);
/* Loads a cubin (or PTX, which the driver then JIT-compiles) into the device's primary context. */
LoomStatus rt_cuda_module_load(RtCuda *cu, int device, const void *image, size_t size,
                               RtCuModule **out, Diag *d);
void rt_cuda_module_unload(RtCuda *cu, RtCuModule *m); /* NULL ok */
LoomStatus rt_cuda_module_kernel(RtCuda *cu, RtCuModule *m, const char *name, RtCuKernel *out,
                                 Diag *d);
/* The host pointer to the cubin buffer frees with this allocator. */
void rt_cuda_free_host(RtCuda *cu, void *p);

typedef struct RtCuKernelAttrs {
  int32_t max_threads_per_block; /* the most this kernel can launch with (registers limit it) */
  int32_t num_regs;              /* per thread */
  int32_t shared_bytes;          /* static shared memory */
  int32_t local_bytes;           /* per thread (spills) */
  int32_t const_bytes;
  int32_t ptx_version;           /* major*10+minor */
  int32_t binary_version;        /* major*10+minor */
} RtCuKernelAttrs;
LoomStatus rt_cuda_kernel_attrs(RtCuda *cu, const RtCuKernel *k, RtCuKernelAttrs *out, Diag *d);
/* Resident blocks per multiprocessor for a block size and dynamic shared memory. */
LoomStatus rt_cuda_occupancy(RtCuda *cu, const RtCuKernel *k, int block_size,
                             size_t dynamic_shared, int *blocks_per_sm, Diag *d);
/* The block size (a multiple of the warp size, <= the kernel's limit) with the most resident
 * threads per multiprocessor, ties to the smaller block; computed from rt_cuda_occupancy. */
LoomStatus rt_cuda_best_block_size(RtCuda *cu, const RtCuKernel *k, size_t dynamic_shared,
                                   int *block_size, Diag *d);
/* params[i] points at the value of kernel parameter i (cuLaunchKernel's kernelParams).
 * stream NULL: the device's legacy default stream. */
LoomStatus rt_cuda_launch(RtCuda *cu, const RtCuKernel *k, const uint32_t grid[3],
                          const uint32_t block[3], uint32_t shared_bytes, RtCuStream *stream,
                          void **params, Diag *d);

/* ---- memory for a caching pool (runtime/gpu/gpu_pool.h) of one's own (tests, libloomrt) --------- */
/* The real allocator (cuMemAlloc/cuMemFree through cu); the device must be retained. */
RtDevAllocator rt_cuda_device_allocator(RtCuda *cu);

#endif /* LOOM_RUNTIME_CUDA_H */
