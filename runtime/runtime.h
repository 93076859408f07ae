/* SPDX-License-Identifier: Apache-2.0 */
/* runtime.h: devices, the thread pool, the kernel cache and evaluation (loom_eval and friends).
 * The runtime includes passes/ and codegen/ (layers above it) and ir/; never Python.
 */
#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H

#include <pthread.h>

#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "passes/passes.h"

/* A fixed pool of worker threads. parallel_for runs fn(arg, task) for task in [0, ntasks) and
 * returns when all are done; the caller's thread takes part. Tasks of one call run concurrently. */
typedef struct RtPool RtPool;
LoomStatus rt_pool_create(LoomContext *ctx, int nthreads, RtPool **out, Diag *d);
void rt_pool_destroy(RtPool *p);
int rt_pool_size(const RtPool *p);
void rt_parallel_for(RtPool *p, int64_t ntasks, void (*fn)(void *arg, int64_t task), void *arg);

/* The in-memory kernel cache: signature (kernel IR text + target description) -> compiled kernel.
 * Thread-safe; a kernel is compiled once even when several threads ask for it at the same time. */
typedef struct RtCache RtCache;
LoomStatus rt_cache_create(LoomContext *ctx, CgTarget *target, RtCache **out, Diag *d);
void rt_cache_destroy(RtCache *c);
/* *hit tells whether it was found compiled. The returned kernel lives as long as the cache. */
LoomStatus rt_cache_get(RtCache *c, const KernelIr *k, bool want_llvm_ir, const CgCompiled **out,
                        bool *hit, Diag *d);
/* Like rt_cache_get, but the kernel is only pinned until rt_cache_release(c, *out): an entry that is
 * not pinned may be evicted when the cache is full (RT_CACHE_MAX_ENTRIES, least recently used first).
 * Entries returned by rt_cache_get are pinned for the life of the cache. hit may be NULL. */
#define RT_CACHE_MAX_ENTRIES 4096
LoomStatus rt_cache_acquire(RtCache *c, const KernelIr *k, bool want_llvm_ir,
                            const CgCompiled **out, bool *hit, Diag *d);
void rt_cache_release(RtCache *c, const CgCompiled *k);
/* Number of entries now held (compiled, compiling or failed-and-waited-on). */
int64_t rt_cache_size(RtCache *c);

/* A caching allocator for large host arrays (runtime/host_pool.c): freed blocks of >= 1 MiB are
 * kept (bounded by LOOM_HOST_POOL_BYTES, default 1 GiB) and reused for the same size class, so a
 * repeated evaluation does not pay page faults on fresh memory. rt_host_free must get the size given
 * to rt_host_alloc. Thread-safe. */
typedef struct RtHostPool RtHostPool;
LoomStatus rt_host_pool_create(LoomContext *ctx, RtHostPool **out, Diag *d);
void rt_host_pool_destroy(RtHostPool *p);
void rt_host_pool_trim(RtHostPool *p); /* frees every cached block */
size_t rt_host_pool_cached(RtHostPool *p);
size_t rt_host_pool_used(RtHostPool *p); /* bytes handed out (class-rounded) and not yet freed */
void *rt_host_alloc(RtHostPool *p, size_t size); /* 64-byte aligned; NULL on failure */
void rt_host_free(RtHostPool *p, void *ptr, size_t size);

/* The CUDA device (runtime/cuda_backend.c); loaded lazily on the first CUDA array. */
typedef struct RtGpu RtGpu;
typedef struct RtGpuFn RtGpuFn; /* a kernel loaded on one device; lives as long as the context */
struct RtCuPoolStats;

typedef struct RtState RtState;
struct RtState {
  RtHostPool *host_pool;
  RtPool *pool;
  RtCache *cache;
  CgTarget *host;
  pthread_mutex_t stats_lock;
  LoomStats stats;
  pthread_mutex_t gpu_lock; /* guards gpu, gpu_fail and the GPU kernel tables */
  RtGpu *gpu;               /* NULL until a CUDA array is used */
  Diag gpu_fail;            /* why loading the driver failed (reported again on each use) */
};

/* CUDA device: errors are LOOM_ERR_UNSUPPORTED "no CUDA driver ..." on machines without one. */
LoomStatus rt_gpu_get(LoomContext *ctx, RtGpu **out, Diag *d);
int rt_gpu_device_count(LoomContext *ctx); /* 0 without a driver */
void rt_gpu_destroy(LoomContext *ctx);     /* with the context */
LoomStatus rt_gpu_alloc(LoomContext *ctx, int device, size_t size, void **out, Diag *d); /* pool */
LoomStatus rt_gpu_free(LoomContext *ctx, int device, void *ptr, Diag *d);
LoomStatus rt_gpu_synchronize(LoomContext *ctx, int device, Diag *d);
LoomStatus rt_gpu_memcpy(LoomContext *ctx, LoomDeviceKind dk, int di, void *dst, LoomDeviceKind sk, int si,
                         const void *src, size_t n, Diag *d);
LoomStatus rt_gpu_pool_stats(LoomContext *ctx, int device, struct RtCuPoolStats *out, Diag *d);
/* The kernel for k on device: an elementwise kernel with a first entry loaded (the whole-vector one
 * when `npoints`, the point count of the launch to come or -1, is a multiple of its lanes); a
 * reduction described only (its entries are compiled as launches need them). */
LoomStatus rt_gpu_kernel(LoomContext *ctx, int device, const KernelIr *k, int64_t npoints, const RtGpuFn **out,
                         Diag *d);
const char *rt_gpu_fn_strategy(const RtGpuFn *f);
LoomStatus rt_gpu_pool_free_all_blocks(LoomContext *ctx, int device, Diag *d); /* synchronizes first */

/* Streams and events of the public API (cuda_backend.c). The current stream is kept per context,
 * per device and per calling thread (a table in RtGpu under gpu_lock); NULL is the device's legacy
 * default stream. rt_gpu_run_schedule launches on the current stream and rt_gpu_memcpy copies on it.
 * Work on a user stream that frees pool blocks (temporaries, split-reduction partials) synchronizes
 * that stream first: the pool does not track streams, and another stream could be handed the block. */
struct RtCuStream;
struct RtCuEvent;
LoomStatus rt_gpu_stream_create(LoomContext *ctx, int device, struct RtCuStream **out, Diag *d);
void rt_gpu_stream_destroy(LoomContext *ctx, struct RtCuStream *s); /* also unsets it everywhere */
LoomStatus rt_gpu_stream_synchronize(LoomContext *ctx, struct RtCuStream *s, Diag *d);
LoomStatus rt_gpu_stream_use(LoomContext *ctx, int device, struct RtCuStream *s, Diag *d);
struct RtCuStream *rt_gpu_current_stream(LoomContext *ctx, int device);
void *rt_cuda_stream_raw(const struct RtCuStream *s); /* the CUstream (cuda.c) */
LoomStatus rt_gpu_event_create(LoomContext *ctx, int device, struct RtCuEvent **out, Diag *d);
void rt_gpu_event_destroy(LoomContext *ctx, struct RtCuEvent *e);
/* s NULL: the calling thread's current stream of the event's device. */
LoomStatus rt_gpu_event_record(LoomContext *ctx, int device, struct RtCuEvent *e, struct RtCuStream *s, Diag *d);
LoomStatus rt_gpu_event_synchronize(LoomContext *ctx, struct RtCuEvent *e, Diag *d);
LoomStatus rt_gpu_event_elapsed(LoomContext *ctx, struct RtCuEvent *a, struct RtCuEvent *b, float *ms, Diag *d); /* "elementwise", "row", "col" */
/* Runs a schedule on CUDA device `device` (all inputs, outputs and temps there); pinned may be NULL. */
LoomStatus rt_gpu_run_schedule(LoomContext *ctx, int device, const IrGraph *g, const Schedule *s,
                               const RtGpuFn *const *pinned, void *const *out_data, int32_t nouts, Diag *d);

/* Appends the PTX of kernels k[0..n) for sm_90 to sb ("// kernel NAME (sm_90)" then the text),
 * compiled without a GPU: loom_dump and loom_user_kernel_dump (eval.c). */
LoomStatus rt_dump_ptx(LoomContext *ctx, int32_t n, const KernelIr *const *k, StrBuf *sb, Diag *d);

/* Runs a schedule on the host: allocates temps, launches each kernel (parallel over O or split
 * along R), frees temps. out_data[i] is the base pointer of output i. */
/* Whether a is C-contiguous (size-1 dims may have any stride). */
bool rt_array_c_contiguous(const LoomArray *a);

LoomStatus rt_run_schedule(LoomContext *ctx, const IrGraph *g, const Schedule *s,
                           void *const *out_data, Diag *d);
/* The same with kernels already compiled and pinned (pinned[k] for schedule kernel k; NULL entries
 * are looked up in the cache) and nouts output base pointers: user kernels' instantiation cache. */
LoomStatus rt_run_schedule_pinned(LoomContext *ctx, const IrGraph *g, const Schedule *s,
                                  const CgCompiled *const *pinned, void *const *out_data, int32_t nouts,
                                  Diag *d);

#endif /* LOOM_RUNTIME_H */
