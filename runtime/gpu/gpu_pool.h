/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_pool.h: the caching device memory pool of the GPU devices (runtime/gpu/gpu_pool.c), one per device.
 *
 * Sizes are rounded to a size class: 512 B, 1 KiB, 2 KiB, ... 1 MiB (powers of two), then four classes per
 * doubling (1.25, 1.5, 1.75, 2 x 2^k: at most 25% waste) up to 2^48 B. A freed block goes to its class's
 * free list and is handed out again to the next request of that class; nothing is returned to the device
 * until rt_gpu_pool_free_all_blocks(), destroy, or an allocation that fails for lack of memory (then every
 * cached block is freed and the allocation retried once). A freed block can be handed out at once: free a
 * block only after the work that uses it has been ordered before any later use (one stream, or
 * synchronize first). Device memory comes through an RtDevAllocator (the shared GPU layer makes one from
 * its driver's mem_alloc / mem_free; tests give fake ones), so the pool knows no driver. Device pointers
 * are uint64_t; 0 is never a valid block.
 */
#ifndef LOOM_RUNTIME_GPU_POOL_H
#define LOOM_RUNTIME_GPU_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct RtDevAllocator {
  /* Returns LOOM_OK and *out != 0; LOOM_ERR_OUT_OF_MEMORY when the device has no room, WITHOUT
   * writing d (the pool retries and writes its own message); any other status with d written. */
  LoomStatus (*alloc)(void *user, int device, size_t size, uint64_t *out, Diag *d);
  void (*free)(void *user, int device, uint64_t ptr);
  void *user;
} RtDevAllocator;

typedef struct RtGpuPool RtGpuPool;
typedef struct RtGpuPoolStats {
  uint64_t used_bytes;      /* class-rounded bytes of blocks handed out and not freed */
  uint64_t cached_bytes;    /* bytes of free blocks kept for reuse */
  uint64_t cached_blocks;   /* how many free blocks are kept */
  uint64_t total_bytes;     /* used + cached: what the pool holds from the device */
  uint64_t peak_bytes;      /* the most total_bytes has been */
  uint64_t requested_bytes; /* sum of the sizes asked for by blocks now in use */
  uint64_t allocs, reuses, raw_allocs, raw_frees, oom_retries;
} RtGpuPoolStats;

/* ctx gives host memory for the bookkeeping (NULL: the default allocator). alloc is copied. */
LoomStatus rt_gpu_pool_create(LoomContext *ctx, int device, const RtDevAllocator *alloc, RtGpuPool **out, Diag *d);
/* Frees cached blocks and blocks still in use (a caller that still uses one has a bug). */
void rt_gpu_pool_destroy(RtGpuPool *p);
/* size 0 gives *out = 0 (free of 0 is a no-op). */
LoomStatus rt_gpu_pool_alloc(RtGpuPool *p, size_t size, uint64_t *out, Diag *d);
/* Returns a block to its class's free list; a pointer this pool did not hand out (or freed twice) is
 * LOOM_ERR_INVALID_ARGUMENT. */
LoomStatus rt_gpu_pool_free(RtGpuPool *p, uint64_t ptr, Diag *d);
void rt_gpu_pool_free_all_blocks(RtGpuPool *p); /* gives every cached block back to the device */
void rt_gpu_pool_stats(RtGpuPool *p, RtGpuPoolStats *out);
/* The most bytes the pool may hold from the device (used + cached; 0: no limit, the default). A request
 * that needs a new block past it frees the cached blocks, then fails with LOOM_ERR_OUT_OF_MEMORY. Lowering
 * the limit below what is held frees nothing at once: later requests fail until blocks come back. */
void rt_gpu_pool_set_limit(RtGpuPool *p, uint64_t limit);
uint64_t rt_gpu_pool_limit(RtGpuPool *p);
/* The class size a request of size bytes is rounded to (0 for 0; 0 when too large). */
uint64_t rt_gpu_pool_class_size(uint64_t size);

#endif /* LOOM_RUNTIME_GPU_POOL_H */
