/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_driver.h: the shared GPU device layer (runtime/gpu/) and the driver table under it.
 *
 * Everything a GPU device does that does not depend on the vendor lives in runtime/gpu/: the context's
 * state per device kind and per device ordinal (set up on first use), the caching pools (gpu_pool.h), the
 * calling thread's current stream per device, events, copies, the kernel table (entry groups compiled on
 * demand, the disk cache of binaries keyed by signature, the tiered JIT: gpu_kernels.c), launch shapes and
 * the schedule runner (gpu_launch.c). Under it, a vendor fills one RtGpuDriver: a small table of driver
 * calls over the vendor's own handles (runtime/cuda/cuda_device.c for CUDA; runtime/hip/ for HIP). Above
 * it, the vendor's RtDevice (device.h) points its generic hooks at the rt_gpu_* functions below (one line
 * each, since device.h's hooks do not receive their table) and adds what is its own: code dumps and raw
 * modules.
 *
 * The driver table's contract:
 *  - `drv` is the driver instance made by load(); every hook gets it first. Handles (streams, events,
 *    modules, functions) are the driver's own, as void *; NULL as a stream is
 *    the device's default stream. The layer remembers which device each handle belongs to and passes it
 *    back. Before it calls hooks that name a device, the layer makes that device current on the calling
 *    thread with set_current (a primary context made current, a current device set), once per series of calls
 *    (a schedule's launches follow one set_current); the other hooks do not do it again. Exceptions:
 *    device_info needs no current device, and retain makes the device current.
 *  - Every hook that can fail returns a LoomStatus and writes d with the failing driver call, the device
 *    and the driver's error name and text ("<call> on device 0 failed: <error name> (<error text>)"):
 *    the driver's error codes never leave it. The driver's out of memory is LOOM_ERR_OUT_OF_MEMORY, other
 *    failures LOOM_ERR_BACKEND; mem_alloc alone returns LOOM_ERR_OUT_OF_MEMORY WITHOUT writing d (the
 *    pool frees its cached blocks, retries once and writes its own message).
 *  - Hooks are called from any thread (the layer serializes nothing on the launch path); the same stream
 *    is never used by two threads at once.
 *  - Binaries. The device's target (target_create) compiles kernel IR into `code` of the target's binary
 *    kind (CgGpuKernel.kind: PTX text, an AMDGPU code object). link (optional) turns code into the
 *    binary module_load takes (PTX text into a cubin at a JIT optimization level); without link
 *    the code is the binary. The disk cache keeps binaries by signature whatever their kind.
 *  - JIT levels and tiers are the driver's: load() says at which level elementwise kernels end
 *    (RtGpuJit.final_level, passed back to link) and whether they are compiled at level 0 first and
 *    tiered up in the background (a driver without levels: final_level -1, tiers false).
 */
#ifndef LOOM_RUNTIME_GPU_DRIVER_H
#define LOOM_RUNTIME_GPU_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/device.h"
#include "runtime/gpu/gpu_pool.h"

/* Facts of one device (device_info). */
typedef struct RtGpuDeviceInfo {
  char name[256];
  char arch[64];                  /* the chip: "sm_90", "gfx942:sramecc+:xnack-" (messages, targets) */
  int32_t arch_major, arch_minor; /* NVIDIA: the compute capability (9, 0); AMD: the gfx number's parts */
  int32_t sm_count;               /* multiprocessors (compute units) */
  int32_t max_threads_per_block;
  int32_t max_threads_per_sm;
  int32_t wave;                   /* threads per warp (wave): 32, or 64 on AMD's gfx9 */
  int32_t shared_per_block;       /* bytes without opt-in */
  int32_t l2_bytes;
  uint64_t total_mem;             /* bytes */
} RtGpuDeviceInfo;

/* Facts of one loaded function (func_attrs). */
typedef struct RtGpuFuncAttrs {
  int32_t max_threads_per_block; /* the most it can launch with (registers limit it) */
  int32_t num_regs;              /* per thread */
} RtGpuFuncAttrs;

/* The driver's JIT policy (load). */
typedef struct RtGpuJit {
  int final_level; /* link's level for elementwise kernels (part of the disk key); -1: the driver's default */
  bool tiers;      /* elementwise kernels linked at level 0 first, final_level in the background */
} RtGpuJit;

typedef struct RtGpuDriver RtGpuDriver;
struct RtGpuDriver {
  const char *name;    /* the vendor's name in messages ("<name> device 3 does not exist") */
  LoomDeviceKind kind; /* the device kind whose context slot holds the layer's state */
  int32_t binary;      /* CgBinaryKind of the target's code */

  /* ---- the driver and its devices ------------------------------------------------------------------ */
  /* Loads the driver (dlopen, init): *drv, the device count (>= 1) and the JIT policy. No driver, a driver
   * too old or no device: LOOM_ERR_UNSUPPORTED with a message saying so (the layer remembers it for the
   * context); any other failure is tried again by the layer's next call. ctx gives the host allocator. */
  LoomStatus (*load)(LoomContext *ctx, void **drv, int *ndev, RtGpuJit *jit, Diag *d);
  void (*unload)(void *drv); /* after every device was released */
  LoomStatus (*device_info)(void *drv, int device, RtGpuDeviceInfo *out, Diag *d);
  /* The device's primary context (or the driver's equivalent), held from the device's first use to the
   * context's close; set_current makes it current on the calling thread. */
  LoomStatus (*retain)(void *drv, int device, Diag *d);
  void (*release)(void *drv, int device);
  LoomStatus (*set_current)(void *drv, int device, Diag *d);
  LoomStatus (*synchronize)(void *drv, int device, Diag *d); /* all work of the device */
  /* The codegen target for the device (its chip, its wave). */
  LoomStatus (*target_create)(LoomContext *ctx, const RtGpuDeviceInfo *info, CgTarget **out, Diag *d);

  /* ---- memory ------------------------------------------------------------------------------------------- */
  LoomStatus (*mem_alloc)(void *drv, int device, size_t size, uint64_t *out, Diag *d); /* size > 0 */
  void (*mem_free)(void *drv, int device, uint64_t ptr);
  /* n > 0 bytes; stream NULL: synchronous for the host; else ordered on the stream. */
  LoomStatus (*copy_h2d)(void *drv, int device, uint64_t dst, const void *src, size_t n, void *stream, Diag *d);
  LoomStatus (*copy_d2h)(void *drv, int device, void *dst, uint64_t src, size_t n, void *stream, Diag *d);
  LoomStatus (*copy_d2d)(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *stream, Diag *d);
  /* n > 0 bytes of value from dst, ordered like the copies (stream NULL: synchronous) */
  LoomStatus (*fill_bytes)(void *drv, int device, uint64_t dst, uint8_t value, size_t n, void *stream, Diag *d);
  /* Between two devices of the driver, ordered after earlier work of both devices' default streams. */
  LoomStatus (*copy_peer)(void *drv, int dst_device, uint64_t dst, int src_device, uint64_t src, size_t n, Diag *d);

  /* ---- streams and events (the driver's handles) ------------------------------------------------------- */
  /* A blocking stream, as CuPy's default Stream(): work on the default (legacy null) stream waits for the
   * stream's earlier work and the stream's later work waits for the default stream's, so a result made
   * inside `with s:` is read correctly after it (and s reads what the default stream made before). */
  LoomStatus (*stream_create)(void *drv, int device, void **out, Diag *d);
  void (*stream_destroy)(void *drv, int device, void *stream);             /* pending work still completes */
  LoomStatus (*stream_synchronize)(void *drv, int device, void *stream, Diag *d);
  LoomStatus (*event_create)(void *drv, int device, void **out, Diag *d);  /* a timing event */
  void (*event_destroy)(void *drv, int device, void *event);
  LoomStatus (*event_record)(void *drv, int device, void *event, void *stream, Diag *d);
  LoomStatus (*event_synchronize)(void *drv, int device, void *event, Diag *d);
  /* Milliseconds between two recorded, completed events of one device. */
  LoomStatus (*event_elapsed)(void *drv, int device, void *start, void *end, float *ms, Diag *d);
  /* Optional, both or neither (NULL: the device pools stay stream-blind and work on a user stream is
   * synchronized before its pool blocks are freed): an event for ordering only (no timing: cheaper to
   * record; destroyed and recorded with the hooks above), and whether a recorded event's work has finished
   * (1) or not yet (0; an error counts as not yet), without waiting. They make the pools stream-ordered
   * (gpu_pool.h). */
  LoomStatus (*fence_create)(void *drv, int device, void **out, Diag *d);
  int (*event_query)(void *drv, int device, void *event);

  /* ---- code ------------------------------------------------------------------------------------------------ */
  /* Optional (NULL: the target's code is the binary). code: size bytes followed by a NUL byte; level: a
   * JIT level of the driver's (RtGpuJit), -1 its default; name: messages. *binary is ctx_alloc'ed with the
   * context given to load. A code error is LOOM_ERR_BACKEND with the JIT's log in the message. */
  LoomStatus (*link)(void *drv, int device, const char *code, size_t size, const char *name, int level,
                     void **binary, size_t *binary_size, Diag *d);
  LoomStatus (*module_load)(void *drv, int device, const void *binary, size_t size, void **module, Diag *d);
  void (*module_unload)(void *drv, int device, void *module);
  LoomStatus (*module_function)(void *drv, int device, void *module, const char *name, void **fn, Diag *d);
  LoomStatus (*func_attrs)(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d);
  /* Resident blocks per multiprocessor of fn for a block size and dynamic shared memory. */
  LoomStatus (*occupancy)(void *drv, int device, void *fn, int block, size_t dynamic_shared, int *blocks_per_sm,
                          Diag *d);
  /* Launches fn: params[i] points at the value of parameter i (Loom's kernels take one: the parameter
   * block, codegen.h); grid and block are positive; stream NULL: the default stream. */
  LoomStatus (*launch)(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                       uint32_t shared_bytes, void *stream, void **params, Diag *d);
};

/* ---- the layer's RtDevice hooks (device.h has the contracts), for a vendor's RtDevice table ------------- */
LoomStatus rt_gpu_open(const RtGpuDriver *drv, LoomContext *ctx, Diag *d);
int rt_gpu_count(const RtGpuDriver *drv, LoomContext *ctx);
void rt_gpu_close(const RtGpuDriver *drv, LoomContext *ctx);
LoomStatus rt_gpu_synchronize(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d);
/* Makes device index current on the calling thread (set up on first use): for a vendor library's calls
 * outside a schedule (cuBLASLt handles, cuSOLVER, cuFFT). */
LoomStatus rt_gpu_make_current(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d);
LoomStatus rt_gpu_alloc(const RtGpuDriver *drv, LoomContext *ctx, int index, size_t size, void **out, Diag *d);
LoomStatus rt_gpu_free(const RtGpuDriver *drv, LoomContext *ctx, int index, void *ptr, size_t size, Diag *d);
LoomStatus rt_gpu_device_pool_stats(const RtGpuDriver *drv, LoomContext *ctx, int index, RtPoolStats *out, Diag *d);
LoomStatus rt_gpu_device_pool_trim(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d);
LoomStatus rt_gpu_copy(const RtGpuDriver *drv, LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                       LoomDeviceKind sk, int si, size_t n, Diag *d);
LoomStatus rt_gpu_fill_bytes(const RtGpuDriver *drv, LoomContext *ctx, void *dst, int index, uint8_t value, size_t n,
                             RtStream *rs, Diag *d);
LoomStatus rt_gpu_copy_async(const RtGpuDriver *drv, LoomContext *ctx, void *dst, LoomDeviceKind dk, int di,
                             const void *src, LoomDeviceKind sk, int si, size_t n, RtStream *s, Diag *d);
LoomStatus rt_gpu_device_pool_limit(const RtGpuDriver *drv, LoomContext *ctx, int index, bool set, uint64_t *limit,
                                    Diag *d);
LoomStatus rt_gpu_stream_create(const RtGpuDriver *drv, LoomContext *ctx, int index, RtStream **out, Diag *d);
LoomStatus rt_gpu_stream_wrap(const RtGpuDriver *drv, LoomContext *ctx, int index, void *handle, RtStream **out,
                              Diag *d);
void rt_gpu_stream_destroy(const RtGpuDriver *drv, LoomContext *ctx, RtStream *s);
LoomStatus rt_gpu_stream_synchronize(const RtGpuDriver *drv, LoomContext *ctx, RtStream *s, Diag *d);
LoomStatus rt_gpu_stream_use(const RtGpuDriver *drv, LoomContext *ctx, int index, RtStream *s, Diag *d);
RtStream *rt_gpu_current_stream(const RtGpuDriver *drv, LoomContext *ctx, int index);
void *rt_gpu_stream_handle(RtStream *s); /* needs no driver: the layer's stream holds the handle */
LoomStatus rt_gpu_event_create(const RtGpuDriver *drv, LoomContext *ctx, int index, RtEvent **out, Diag *d);
void rt_gpu_event_destroy(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *e);
LoomStatus rt_gpu_event_record(const RtGpuDriver *drv, LoomContext *ctx, int index, RtEvent *e, RtStream *s, Diag *d);
LoomStatus rt_gpu_event_synchronize(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *e, Diag *d);
LoomStatus rt_gpu_event_elapsed(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d);
LoomStatus rt_gpu_prepare(const RtGpuDriver *drv, LoomContext *ctx, int index, const KernelIr *k, int64_t npoints,
                          const RtKernel **out, Diag *d);
void rt_gpu_unpin(const RtGpuDriver *drv, LoomContext *ctx, int index, const RtKernel *k);
LoomStatus rt_gpu_run_schedule(const RtGpuDriver *drv, LoomContext *ctx, int index, const RtRun *run, Diag *d);
void rt_gpu_settle(const RtGpuDriver *drv, LoomContext *ctx, int index);
/* device.h's specialize for every GPU driver (gpu_launch.c): column walks chosen by strides (KernelIr.walk_cols). */
LoomStatus rt_gpu_specialize(LoomContext *ctx, Arena *a, Schedule *s, Diag *d);

#endif /* LOOM_RUNTIME_GPU_DRIVER_H */
