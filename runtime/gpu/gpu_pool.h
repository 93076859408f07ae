/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_pool.h: the caching device memory pool of the GPU devices (runtime/gpu/gpu_pool.c), one per device.
 *
 * Sizes are rounded to a size class: 512 B, 1 KiB, 2 KiB, ... 1 MiB (powers of two), then four classes per
 * doubling (1.25, 1.5, 1.75, 2 x 2^k: at most 25% waste) up to 2^48 B. A freed block goes to its class's
 * free list and is handed out again to the next request of that class; nothing is returned to the device
 * until rt_gpu_pool_free_all_blocks(), destroy, or an allocation that fails for lack of memory (then every
 * cached block is freed and the allocation retried once). Device memory comes through an RtDevAllocator
 * (the shared GPU layer makes one from its driver's mem_alloc / mem_free; tests give fake ones), so the pool
 * knows no driver. Device pointers are uint64_t; 0 is never a valid block.
 *
 * Stream order. Given stream hooks (rt_gpu_pool_order_streams), the pool is stream-ordered and nothing in it waits for the device on the way: a block belongs to the stream
 * that was the calling thread's current stream when it was handed out (its owner stream). Freed, it is
 * handed out again at once to a request on its owner stream (the new work is queued after the old), and to
 * a request on another stream only once an event recorded on the owner stream at the free (or later) has
 * completed (checked without waiting; a block still in flight is passed over and a new one made). So a free
 * may come right after the work that uses the block was enqueued on its owner stream. A caller that uses a
 * block on a stream other than its owner must order that work before the free (synchronize it, or make
 * the owner stream wait for it): the pool sees only the owner stream. Only the paths that give blocks back
 * to the device (out of memory, the limit, free_all_blocks) wait, with one device synchronize,
 * when a cached block may still be in flight. Without the stream hooks the pool is stream-blind: a
 * freed block is handed out at once to any request, and the caller orders every use of it before any
 * later use (one stream, or synchronize first).
 */
#ifndef LOOM_RUNTIME_GPU_POOL_H
#define LOOM_RUNTIME_GPU_POOL_H

#include <stdbool.h>
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

/* The stream hooks that make a pool stream-ordered (see "Stream order" above; every one required). They
 * get the allocator's user. Streams and events are the driver's handles; NULL is the default stream. */
typedef struct RtPoolStreamHooks {
  void *(*current_stream)(void *user, int device); /* the calling thread's current stream of the device */
  LoomStatus (*event_create)(void *user, int device, void **out, Diag *d); /* an ordering event (no timing) */
  void (*event_destroy)(void *user, int device, void *event);
  LoomStatus (*event_record)(void *user, int device, void *event, void *stream, Diag *d);
  int (*event_done)(void *user, int device, void *event); /* 1: the work before it has finished; 0: not yet */
  LoomStatus (*synchronize)(void *user, int device, Diag *d); /* the host waits for all work of the device */
} RtPoolStreamHooks;

typedef struct RtGpuPool RtGpuPool;
typedef struct RtGpuPoolStats {
  uint64_t used_bytes;      /* class-rounded bytes of blocks handed out and not freed */
  uint64_t cached_bytes;    /* bytes of free blocks kept for reuse */
  uint64_t cached_blocks;   /* how many free blocks are kept */
  uint64_t total_bytes;     /* used + cached: what the pool holds from the device */
  uint64_t peak_bytes;      /* the most total_bytes has been */
  uint64_t requested_bytes; /* sum of the sizes asked for by blocks now in use */
  uint64_t allocs, reuses, raw_allocs, raw_frees, oom_retries;
  /* stream order (0 when stream-blind): reuses by another stream than the owner's (its event done); free
   * blocks passed over because their event was still pending; events recorded; device synchronizes the
   * pool did itself (only when giving in-flight blocks back to the device) */
  uint64_t cross_stream_reuses, passed_in_flight, events_recorded, device_waits;
} RtGpuPoolStats;

/* ctx gives host memory for the bookkeeping (NULL: the default allocator). alloc is copied. */
LoomStatus rt_gpu_pool_create(LoomContext *ctx, int device, const RtDevAllocator *alloc, RtGpuPool **out, Diag *d);
/* Makes p stream-ordered (before its first allocation; every hook non-NULL, else LOOM_ERR_INVALID_ARGUMENT). */
LoomStatus rt_gpu_pool_order_streams(RtGpuPool *p, const RtPoolStreamHooks *hooks, Diag *d);
/* Frees cached blocks and blocks still in use (a caller that still uses one has a bug); the caller has
 * synchronized the device. */
void rt_gpu_pool_destroy(RtGpuPool *p);
/* size 0 gives *out = 0 (free of 0 is a no-op). The block's owner stream is the calling thread's current
 * stream (current_stream); rt_gpu_pool_alloc_on names it (stream-blind pools ignore it). */
LoomStatus rt_gpu_pool_alloc(RtGpuPool *p, size_t size, uint64_t *out, Diag *d);
LoomStatus rt_gpu_pool_alloc_on(RtGpuPool *p, size_t size, void *stream, uint64_t *out, Diag *d);
/* Returns a block to its class's free list (stream order: with an event on its owner stream, when other
 * streams use the pool); a pointer this pool did not hand out (or freed twice) is
 * LOOM_ERR_INVALID_ARGUMENT. Never waits for the device. */
LoomStatus rt_gpu_pool_free(RtGpuPool *p, uint64_t ptr, Diag *d);
/* Whether the pool is stream-ordered (rt_gpu_pool_order_streams): callers that free blocks used
 * on a user stream need not synchronize it first. */
bool rt_gpu_pool_stream_ordered(const RtGpuPool *p);
/* The stream is about to be destroyed and the caller has synchronized it: its free blocks are idle (any
 * stream may take them), its blocks in use now belong to the default stream. */
void rt_gpu_pool_stream_gone(RtGpuPool *p, void *stream);
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
