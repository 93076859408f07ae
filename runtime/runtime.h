/* SPDX-License-Identifier: Apache-2.0 */
/* runtime.h: the runtime's shared internals: the thread pool, the kernel table, the host memory pool,
 * the context's runtime state and a few helpers. Devices are reached through device.h's tables.
 * The runtime includes passes/ and codegen/ (layers above it) and ir/; never Python.
 */
#ifndef LOOM_RUNTIME_H
#define LOOM_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>

#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "ir/ir.h"
#include "passes/passes.h"

/* A fixed pool of worker threads. parallel_for runs fn(arg, task) for task in [0, ntasks) and
 * returns when all are done; the caller's thread takes part. Tasks of one call run concurrently. */
typedef struct RtPool RtPool;
#define RT_POOL_MAX_THREADS 1024 /* threads of a pool, caller included */
LoomStatus rt_pool_create(LoomContext *ctx, int nthreads, RtPool **out, Diag *d);
/* Changes the pool's size (caller included; 1..RT_POOL_MAX_THREADS), also while other threads run
 * rt_parallel_for; returns once the dropped workers have exited. */
LoomStatus rt_pool_resize(RtPool *p, int nthreads, Diag *d);
void rt_pool_destroy(RtPool *p);
int rt_pool_size(const RtPool *p);
void rt_parallel_for(RtPool *p, int64_t ntasks, void (*fn)(void *arg, int64_t task), void *arg);

/* The in-memory kernel table: signature (kernel key text + the target's description) -> a kernel
 * prepared for one device, held in place in the table's entry (value_size bytes: a CgCompiled for the
 * host, a loaded kernel for a GPU device). Thread-safe; a kernel is made once even when several threads
 * ask for it at the same time. Each device keeps one (the host: RtState.cache; a GPU device: one per
 * device ordinal), keyed by its own target's describe(). */
typedef struct RtCache RtCache;
typedef struct RtCacheOps {
  /* Fills value (value_size zeroed bytes) for k; counts kernels_compiled / compile_ms itself when it
   * compiles. npoints: the caller's hint (the point count of the launch to come, or -1). */
  LoomStatus (*make)(void *user, const KernelIr *k, bool want_llvm_ir, int64_t npoints, void *value, Diag *d);
  void (*drop)(void *user, void *value); /* frees what make made */
  /* LLVM IR text of a made value: whether it has some; add it (NULL: IR text cannot be asked for) */
  bool (*has_llvm_ir)(void *user, const void *value);
  LoomStatus (*add_llvm_ir)(void *user, const KernelIr *k, void *value, Diag *d);
} RtCacheOps;
/* desc: the key's target part; max_entries: the bound (0: none, entries live as long as the table). */
#define RT_CACHE_MAX_ENTRIES 4096
LoomStatus rt_cache_create_ops(LoomContext *ctx, const char *desc, const RtCacheOps *ops, void *user,
                               size_t value_size, int64_t max_entries, RtCache **out, Diag *d);
/* A table of CgCompiled values made by a CgTarget (the host's; tests' fake targets), bounded by
 * RT_CACHE_MAX_ENTRIES, that counts kernels_compiled and compile_ms per compilation. */
LoomStatus rt_cache_create(LoomContext *ctx, CgTarget *target, RtCache **out, Diag *d);
void rt_cache_destroy(RtCache *c);
/* The value for k, made on a miss, pinned until rt_cache_release(c, *out): an entry that is not pinned
 * may be evicted when the table is over its bound (least recently used first). *hit (may be NULL)
 * tells whether it was found made; hits count as cache_hits. */
LoomStatus rt_cache_acquire_value(RtCache *c, const KernelIr *k, bool want_llvm_ir, int64_t npoints,
                                  const void **out, bool *hit, Diag *d);
void rt_cache_release(RtCache *c, const void *value);
/* Typed forms for a target's table (values are CgCompiled). rt_cache_get pins for the table's life. */
LoomStatus rt_cache_acquire(RtCache *c, const KernelIr *k, bool want_llvm_ir, const CgCompiled **out, bool *hit,
                            Diag *d);
LoomStatus rt_cache_get(RtCache *c, const KernelIr *k, bool want_llvm_ir, const CgCompiled **out, bool *hit,
                        Diag *d);
/* Number of entries now held (made, being made or failed-and-waited-on). */
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
/* The most bytes the pool may hold (used + cached; 0: no limit): rt_host_alloc past it gives NULL. */
void rt_host_pool_set_limit(RtHostPool *p, size_t limit);
size_t rt_host_pool_limit(RtHostPool *p);
size_t rt_host_pool_cached_blocks(RtHostPool *p); /* how many blocks the cache holds */
void *rt_host_alloc(RtHostPool *p, size_t size); /* 64-byte aligned; NULL on failure */
void rt_host_free(RtHostPool *p, void *ptr, size_t size);

/* A device kind's slot in the context (device.h): its state, made by its open(), and why open failed. */
typedef struct RtDeviceSlot {
  void *state; /* the kind's own state; NULL until opened */
  Diag fail;   /* status LOOM_OK, or why loading the driver failed (reported again on each use) */
} RtDeviceSlot;
#define RT_DEVICE_KINDS 3 /* LOOM_DEVICE_HOST, LOOM_DEVICE_CUDA, LOOM_DEVICE_HIP */

typedef struct RtState RtState;
typedef struct RtSortKernels RtSortKernels;
typedef struct RtPlanCache RtPlanCache;
struct RtState {
  RtHostPool *host_pool;
  RtPool *pool;
  RtCache *cache; /* the host's kernels */
  CgTarget *host;
  pthread_mutex_t stats_lock;
  LoomStats stats;
  /* guards devices[] and the tables a device kind keeps in its state (loaded kernels, current
   * streams); a device may hold it while it compiles */
  pthread_mutex_t device_lock;
  RtDeviceSlot devices[RT_DEVICE_KINDS];
  struct RtBundles *bundles; /* AOT bundles loaded into the context (runtime/bundle_loom.c); NULL until used */
  /* vendor math libraries per device kind (runtime/linalg.h): made by the kind on first use under
   * device_lock, released by its RtLinalg.close; allow_tf32 is loom_set_allow_tf32's setting */
  void *linalg[RT_DEVICE_KINDS];
  int allow_tf32;
  /* the kernel disk cache's settings (loom_set_cache), under stats_lock: cache_dir NULL follows the
   * environment (LOOM_CACHE_DIR, ...), "" is off; cache_max_bytes 0 is LOOM_CACHE_MAX_BYTES or 1 GiB.
   * cache_generation counts the changes: a device holding a DiskCache of an older one reopens it. */
  char *cache_dir;
  uint64_t cache_max_bytes;
  _Atomic unsigned cache_generation;
  _Atomic int gpu_jit_level; /* loom_set_jit_level: the GPU driver JIT's level for new elementwise kernels;
                                -1: the device's default (LOOM_CUDA_JIT_LEVEL, else 1) */
  LoomDumpSink dump_sink; /* loom_set_dump_sink (stats_lock); NULL: stderr */
  void *dump_user;
  struct RtHostDisk *_Atomic host_disk; /* host kernels on disk (runtime/host_disk.c); NULL until used */
  struct RtSortKernels *sort; /* the device radix sort's kernels (runtime/gpu/gpu_sort.c); NULL until used */
  struct RtPlanCache *plan_cache; /* plans shared by structure (runtime/plan_cache.c); NULL until used */
};

/* Releases the structural plan cache's plans (runtime/plan_cache.c): with the context, before its devices close. */
void rt_plan_cache_destroy(LoomContext *ctx);

/* The GNU build-id of the loaded Loom library as hex ("" when it has none): part of every disk-cache
 * key, so that no build loads another build's kernels (runtime/build_id.c). */
const char *rt_build_id(void);

/* Host kernels in the kernel disk cache (runtime/host_disk.c). rt_host_disk_make: for a host kernel the
 * in-memory table misses, the disk's image when it holds one (*found, counted as a cache hit), else an
 * image compiled for the JIT's own CPU, stored, then loaded (*found, counted as a compilation); *found
 * false (and LOOM_OK) when the disk cache is off or the image path failed: the caller JIT-compiles.
 * rt_host_disk_drop frees what a found kernel holds (before the CgTarget's release). */
LoomStatus rt_host_disk_make(LoomContext *ctx, CgTarget *host, const KernelIr *k, CgCompiled *out, bool *found, Diag *d);
void rt_host_disk_drop(LoomContext *ctx, CgCompiled *c);
void rt_host_disk_destroy(LoomContext *ctx);

/* Writes dump text (LOOM_DUMP's output) to the context's dump sink, else stderr. */
void rt_dump_printf(LoomContext *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens the disk cache with the context's settings (loom_set_cache, else the environment); *generation
 * (may be NULL) receives the settings' generation the cache was opened with. */
struct DiskCache;
LoomStatus rt_disk_cache_open_configured(LoomContext *ctx, struct DiskCache **out, unsigned *generation, Diag *d);

/* Whether a is C-contiguous (size-1 dims may have any stride). */
bool rt_array_c_contiguous(const LoomArray *a);
/* Milliseconds of the monotonic clock. */
double rt_now_ms(void);
/* Adds to the launch statistics (kernels_launched, last_eval_kernels, temp_bytes_peak). */
void rt_count_launches(LoomContext *ctx, uint64_t launched, uint64_t temp_bytes);
/* One copy between host memory and a GPU's (LoomStats.copies_to_host / _to_device and their bytes). */
void rt_count_host_copy(LoomContext *ctx, bool to_host, size_t bytes);

/* Runs a schedule on the host (host_device.c; the host device's run_schedule): allocates temps,
 * launches each kernel (parallel over O or split along R), frees temps. out_data[i] is the base
 * pointer of output i (any number of outputs: the schedule's indices are trusted). */
LoomStatus rt_run_schedule(LoomContext *ctx, const IrGraph *g, const Schedule *s, void *const *out_data, Diag *d);

#endif /* LOOM_RUNTIME_H */
