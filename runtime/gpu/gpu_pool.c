/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_pool.c: a caching device memory pool, one per device (contract in gpu_pool.h); every GPU device of
 * the shared layer (runtime/gpu/) keeps one per device ordinal.
 *
 * Approach: a request is rounded to a size class (512 B .. 1 MiB in powers of two, then four classes
 * per doubling up to 2^48 B). Each class keeps a LIFO list of free blocks; a request pops one or asks
 * the raw allocator (RtDevAllocator) for a new block of the class size. Blocks in use live in a
 * chained hash table keyed by device address, so free() finds a block's class and rejects pointers
 * the pool never handed out. Block records are host memory from the context's allocator and are
 * recycled through a spare list. When the raw allocator reports out-of-memory, every cached block is
 * given back and the request retried once. One mutex guards everything, the raw calls included.
 *
 * Stream order (rt_gpu_pool_order_streams; contract in gpu_pool.h). Each block records its owner
 * stream. A request first takes a free block of its class that is idle or owned by its stream (LIFO, so the
 * most recently freed, likely still in cache); failing that, a block of another stream whose event has
 * completed (at most POOL_MAX_QUERIES event queries per request: no host wait, a block in flight is passed
 * over); failing that, a new block. Events are recorded at free only once the pool has seen two streams
 * (one stream needs none: its reuse is ordered by the stream itself); a block freed before that gets its
 * event when another stream first looks at it (recorded then, later than the free: still after every use).
 * Events are recycled through a spare list. Blocks whose event has completed become idle. Giving cached
 * blocks back to the device waits first (one device synchronize) when any of them may be in flight.
 *
 * Limit (CuPy's MemoryPool.set_limit): when set, a new raw block that would take total_bytes past it
 * first gives every cached block back; if it still does not fit, the request fails with
 * LOOM_ERR_OUT_OF_MEMORY naming the limit. Reusing a cached block never changes total_bytes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_pool.h"

enum {
  POOL_MIN_SHIFT = 9,     /* 512 B */
  POOL_POW2_MAX_SHIFT = 20, /* classes are powers of two up to 1 MiB */
  POOL_MAX_SHIFT = 48,    /* the largest class is 2^48 B */
  POOL_NPOW2 = POOL_POW2_MAX_SHIFT - POOL_MIN_SHIFT + 1,           /* 512 B .. 1 MiB: 12 classes */
  POOL_NCLASS = POOL_NPOW2 + (POOL_MAX_SHIFT - POOL_POW2_MAX_SHIFT) * 4,
  POOL_MAX_QUERIES = 8 /* event queries per request for blocks of other streams */
};

typedef struct PoolBlock {
  struct PoolBlock *next;
  uint64_t ptr;
  uint64_t size;      /* class size */
  uint64_t requested; /* what the caller asked for (statistics) */
  int32_t cls;
  bool idle;    /* free and known finished on the device: any stream may take it at once */
  void *stream; /* the owner stream (stream order; NULL: the default stream) */
  void *event;  /* free and not idle: recorded on the owner stream at (or after) the free; NULL: none yet */
} PoolBlock;

struct RtGpuPool {
  LoomContext *ctx;
  int device;
  RtDevAllocator raw;
  pthread_mutex_t lock;
  PoolBlock *free_list[POOL_NCLASS];
  PoolBlock **used; /* hash buckets by ptr */
  uint32_t nbuckets;
  uint64_t nused;
  PoolBlock *spare; /* recycled records */
  uint64_t limit;   /* the most total_bytes may reach (0: no limit) */
  RtGpuPoolStats stats;
  RtPoolStreamHooks hk; /* stream order (ordered) */
  bool ordered;     /* rt_gpu_pool_order_streams was called */
  bool seen_stream, multi_stream; /* a first stream seen (first_stream); a second one seen */
  void *first_stream;
  void **spare_events; /* recycled events */
  uint32_t nspare_events, cap_spare_events;
};

static int floor_log2(uint64_t x) { return 63 - __builtin_clzll(x); }

/* Class index of a (nonzero) size, or -1 if it is above the largest class. */
static int class_of(uint64_t size, uint64_t *class_size) {
  if (size > ((uint64_t)1 << POOL_MAX_SHIFT)) return -1;
  if (size <= ((uint64_t)1 << POOL_MIN_SHIFT)) {
    *class_size = (uint64_t)1 << POOL_MIN_SHIFT;
    return 0;
  }
  if (size <= ((uint64_t)1 << POOL_POW2_MAX_SHIFT)) {
    int e = floor_log2(size - 1) + 1; /* 2^(e-1) < size <= 2^e */
    *class_size = (uint64_t)1 << e;
    return e - POOL_MIN_SHIFT;
  }
  int e = floor_log2(size - 1); /* 2^e < size <= 2^(e+1), e >= 20 */
  uint64_t step = (uint64_t)1 << (e - 2);
  uint64_t q = (size + step - 1) / step; /* 5 .. 8 */
  *class_size = q * step;
  return POOL_NPOW2 + (e - POOL_POW2_MAX_SHIFT) * 4 + (int)(q - 5);
}

uint64_t rt_gpu_pool_class_size(uint64_t size) {
  uint64_t cs = 0;
  if (size == 0 || class_of(size, &cs) < 0) return 0;
  return cs;
}

static uint32_t bucket_of(const RtGpuPool *p, uint64_t ptr) {
  uint64_t h = ptr * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 32) & (p->nbuckets - 1);
}

/* Doubles the bucket array when the table is fuller than one block per bucket. On allocation
 * failure the table simply stays as it is (chains get longer; nothing is lost). */
static void maybe_grow(RtGpuPool *p) {
  if (p->nused < p->nbuckets || p->nbuckets >= (1u << 30)) return;
  uint32_t n = p->nbuckets * 2;
  PoolBlock **b = ctx_calloc(p->ctx, n, sizeof *b);
  if (!b) return;
  PoolBlock **old = p->used;
  uint32_t oldn = p->nbuckets;
  p->used = b;
  p->nbuckets = n;
  for (uint32_t i = 0; i < oldn; i++) {
    for (PoolBlock *blk = old[i], *next; blk; blk = next) {
      next = blk->next;
      uint32_t k = bucket_of(p, blk->ptr);
      blk->next = b[k];
      b[k] = blk;
    }
  }
  ctx_free(p->ctx, old);
}

LoomStatus rt_gpu_pool_create(LoomContext *ctx, int device, const RtDevAllocator *alloc,
                               RtGpuPool **out, Diag *d) {
  if (!out || !alloc || !alloc->alloc || !alloc->free)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "rt_gpu_pool_create: out and an allocator with alloc and free are required");
  *out = NULL;
  RtGpuPool *p = ctx_calloc(ctx, 1, sizeof *p);
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a device pool");
  p->ctx = ctx;
  p->device = device;
  p->raw = *alloc;
  p->nbuckets = 64;
  p->used = ctx_calloc(ctx, p->nbuckets, sizeof *p->used);
  if (!p->used) {
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a device pool");
  }
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    ctx_free(ctx, p->used);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "pthread_mutex_init failed creating a device pool");
  }
  *out = p;
  return LOOM_OK;
}

LoomStatus rt_gpu_pool_order_streams(RtGpuPool *p, const RtPoolStreamHooks *h, Diag *d) {
  if (!p || !h || !h->current_stream || !h->event_create || !h->event_destroy || !h->event_record || !h->event_done ||
      !h->synchronize)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_gpu_pool_order_streams: a pool and every stream hook are "
                                                    "required");
  pthread_mutex_lock(&p->lock);
  LoomStatus st = LOOM_OK;
  if (p->stats.allocs)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_gpu_pool_order_streams: the pool of device %d has handed out "
                    "blocks already", p->device);
  else {
    p->hk = *h;
    p->ordered = true;
  }
  pthread_mutex_unlock(&p->lock);
  return st;
}

/* ---- events (stream order) -------------------------------------------------------------------------- */
static void release_event(RtGpuPool *p, void *ev) {
  if (!ev) return;
  if (p->nspare_events == p->cap_spare_events) {
    uint32_t cap = p->cap_spare_events ? p->cap_spare_events * 2 : 16;
    void **a = ctx_alloc(p->ctx, (size_t)cap * sizeof *a);
    if (!a) { /* no room to keep it: give it back */
      p->hk.event_destroy(p->raw.user, p->device, ev);
      return;
    }
    if (p->nspare_events) memcpy(a, p->spare_events, (size_t)p->nspare_events * sizeof *a);
    ctx_free(p->ctx, p->spare_events);
    p->spare_events = a;
    p->cap_spare_events = cap;
  }
  p->spare_events[p->nspare_events++] = ev;
}

/* Records an event on b's owner stream (b is free); on any failure b keeps no event (only its own stream
 * takes it until one is recorded). */
static void record_event(RtGpuPool *p, PoolBlock *b) {
  void *ev = p->nspare_events ? p->spare_events[--p->nspare_events] : NULL;
  Diag d = {.status = LOOM_OK};
  if (!ev && p->hk.event_create(p->raw.user, p->device, &ev, &d) != LOOM_OK) return;
  if (p->hk.event_record(p->raw.user, p->device, ev, b->stream, &d) != LOOM_OK) {
    release_event(p, ev);
    return;
  }
  b->event = ev;
  p->stats.events_recorded++;
}

static void make_idle(RtGpuPool *p, PoolBlock *b) {
  release_event(p, b->event);
  b->event = NULL;
  b->idle = true;
}

/* Every cached block back to the device. wait: first wait for the device when a cached block may still
 * be in flight (not when the caller has synchronized: destroy). */
static void free_cached_locked(RtGpuPool *p, bool wait) {
  bool in_flight = false;
  for (int c = 0; c < POOL_NCLASS && p->ordered && wait && !in_flight; c++)
    for (PoolBlock *b = p->free_list[c]; b && !in_flight; b = b->next) in_flight = !b->idle;
  if (in_flight) {
    Diag d = {.status = LOOM_OK};
    p->hk.synchronize(p->raw.user, p->device, &d); /* a failure leaves the driver's free to order itself */
    p->stats.device_waits++;
  }
  for (int c = 0; c < POOL_NCLASS; c++) {
    while (p->free_list[c]) {
      PoolBlock *b = p->free_list[c];
      p->free_list[c] = b->next;
      if (b->event) release_event(p, b->event);
      b->event = NULL;
      p->raw.free(p->raw.user, p->device, b->ptr);
      p->stats.raw_frees++;
      p->stats.cached_bytes -= b->size;
      p->stats.cached_blocks--;
      p->stats.total_bytes -= b->size;
      b->next = p->spare;
      p->spare = b;
    }
  }
}

void rt_gpu_pool_destroy(RtGpuPool *p) {
  if (!p) return;
  free_cached_locked(p, false);
  for (uint32_t i = 0; i < p->nspare_events; i++) p->hk.event_destroy(p->raw.user, p->device, p->spare_events[i]);
  ctx_free(p->ctx, p->spare_events);
  for (uint32_t i = 0; i < p->nbuckets; i++) {
    for (PoolBlock *b = p->used[i], *next; b; b = next) {
      next = b->next;
      p->raw.free(p->raw.user, p->device, b->ptr);
      ctx_free(p->ctx, b);
    }
  }
  for (PoolBlock *b = p->spare, *next; b; b = next) {
    next = b->next;
    ctx_free(p->ctx, b);
  }
  ctx_free(p->ctx, p->used);
  pthread_mutex_destroy(&p->lock);
  ctx_free(p->ctx, p);
}

void rt_gpu_pool_free_all_blocks(RtGpuPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  free_cached_locked(p, true);
  pthread_mutex_unlock(&p->lock);
}

static void insert_used(RtGpuPool *p, PoolBlock *b, uint64_t requested) {
  b->requested = requested;
  uint32_t k = bucket_of(p, b->ptr);
  b->next = p->used[k];
  p->used[k] = b;
  p->nused++;
  p->stats.used_bytes += b->size;
  p->stats.requested_bytes += requested;
  p->stats.allocs++;
  maybe_grow(p);
}

/* A free block of class c that a request on `stream` may take now, unlinked; NULL if none. */
static PoolBlock *take_free(RtGpuPool *p, int c, void *stream) {
  PoolBlock **link = &p->free_list[c];
  if (!p->ordered) {
    PoolBlock *b = *link;
    if (b) *link = b->next;
    return b;
  }
  while (*link && !(*link)->idle && (*link)->stream != stream) link = &(*link)->next;
  if (!*link) { /* none idle or of this stream: one of another stream whose work on it has finished */
    int queries = 0;
    bool found = false;
    for (link = &p->free_list[c]; *link && queries < POOL_MAX_QUERIES; link = &(*link)->next) {
      PoolBlock *b = *link;
      if (!b->event) record_event(p, b); /* freed while the pool knew one stream */
      if (!b->event) continue;
      queries++;
      if (p->hk.event_done(p->raw.user, p->device, b->event) == 1) {
        p->stats.cross_stream_reuses++;
        found = true;
        break;
      }
      p->stats.passed_in_flight++;
    }
    if (!found) return NULL;
  }
  PoolBlock *b = *link;
  *link = b->next;
  release_event(p, b->event);
  b->event = NULL;
  return b;
}

static void note_stream(RtGpuPool *p, void *stream) {
  if (!p->seen_stream) {
    p->seen_stream = true;
    p->first_stream = stream;
  } else if (stream != p->first_stream) {
    p->multi_stream = true;
  }
}

LoomStatus rt_gpu_pool_alloc(RtGpuPool *p, size_t size, uint64_t *out, Diag *d) {
  /* the calling thread's current stream, asked before the pool's lock (the layer's lookup takes its own) */
  void *stream = p && p->ordered ? p->hk.current_stream(p->raw.user, p->device) : NULL;
  return rt_gpu_pool_alloc_on(p, size, stream, out, d);
}

LoomStatus rt_gpu_pool_alloc_on(RtGpuPool *p, size_t size, void *stream, uint64_t *out, Diag *d) {
  if (!p || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_gpu_pool_alloc: NULL argument");
  *out = 0;
  if (size == 0) return LOOM_OK;
  uint64_t cs = 0;
  int c = class_of(size, &cs);
  if (c < 0)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                      "cannot allocate %zu bytes on device %d: larger than any device (the pool's "
                      "largest block is 2^%d bytes)",
                      size, p->device, POOL_MAX_SHIFT);
  pthread_mutex_lock(&p->lock);
  if (p->ordered) note_stream(p, stream);
  PoolBlock *b = take_free(p, c, stream);
  if (b) { /* reuse */
    p->stats.cached_bytes -= b->size;
    p->stats.cached_blocks--;
    p->stats.reuses++;
    b->idle = false;
    b->stream = stream;
    insert_used(p, b, size);
    *out = b->ptr;
    pthread_mutex_unlock(&p->lock);
    return LOOM_OK;
  }
  /* A record first, so that a host allocation failure never strands device memory. */
  b = p->spare;
  if (b) {
    p->spare = b->next;
  } else {
    b = ctx_calloc(p->ctx, 1, sizeof *b);
    if (!b) {
      pthread_mutex_unlock(&p->lock);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                        "out of host memory for the device pool's bookkeeping (%zu bytes)",
                        sizeof *b);
    }
  }
  if (p->limit && p->stats.total_bytes + cs > p->limit) {
    free_cached_locked(p, true);
    if (p->stats.total_bytes + cs > p->limit) {
      uint64_t used = p->stats.used_bytes, limit = p->limit;
      b->next = p->spare;
      p->spare = b;
      pthread_mutex_unlock(&p->lock);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                        "out of memory allocating %zu bytes (%llu with rounding) on device %d: the memory "
                        "pool's limit is %llu bytes and %llu are in use (raise it with MemoryPool.set_limit)",
                        size, (unsigned long long)cs, p->device, (unsigned long long)limit,
                        (unsigned long long)used);
    }
  }
  uint64_t ptr = 0;
  uint64_t cached_before = p->stats.cached_bytes;
  Diag raw_d = {LOOM_OK, {0}};
  LoomStatus st = p->raw.alloc(p->raw.user, p->device, (size_t)cs, &ptr, &raw_d);
  if (st == LOOM_ERR_OUT_OF_MEMORY) {
    p->stats.oom_retries++;
    free_cached_locked(p, true);
    raw_d.status = LOOM_OK;
    st = p->raw.alloc(p->raw.user, p->device, (size_t)cs, &ptr, &raw_d);
  }
  if (st == LOOM_OK && ptr == 0) {
    st = LOOM_ERR_INTERNAL;
    diag_error(&raw_d, st, "internal error: the device allocator returned 0 for %llu bytes",
               (unsigned long long)cs);
  }
  if (st != LOOM_OK) {
    b->next = p->spare;
    p->spare = b;
    uint64_t used = p->stats.used_bytes;
    pthread_mutex_unlock(&p->lock);
    if (st == LOOM_ERR_OUT_OF_MEMORY)
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                        "out of device memory allocating %zu bytes on device %d (used %llu, cached "
                        "%llu)",
                        size, p->device, (unsigned long long)used, (unsigned long long)cached_before);
    return diag_error(d, st, "%s", raw_d.status != LOOM_OK ? raw_d.msg : "device allocation failed");
  }
  b->ptr = ptr;
  b->size = cs;
  b->cls = c;
  b->idle = false;
  b->stream = stream;
  b->event = NULL;
  p->stats.raw_allocs++;
  p->stats.total_bytes += cs;
  insert_used(p, b, size);
  if (p->stats.total_bytes > p->stats.peak_bytes) p->stats.peak_bytes = p->stats.total_bytes;
  *out = ptr;
  pthread_mutex_unlock(&p->lock);
  return LOOM_OK;
}

LoomStatus rt_gpu_pool_free(RtGpuPool *p, uint64_t ptr, Diag *d) {
  if (!p) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_gpu_pool_free: pool is NULL");
  if (ptr == 0) return LOOM_OK;
  pthread_mutex_lock(&p->lock);
  PoolBlock **link = &p->used[bucket_of(p, ptr)];
  while (*link && (*link)->ptr != ptr) link = &(*link)->next;
  PoolBlock *b = *link;
  if (!b) {
    pthread_mutex_unlock(&p->lock);
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "device pointer 0x%llx was not allocated by the pool of device %d, or was "
                      "already freed",
                      (unsigned long long)ptr, p->device);
  }
  *link = b->next;
  p->nused--;
  p->stats.used_bytes -= b->size;
  p->stats.requested_bytes -= b->requested;
  p->stats.cached_bytes += b->size;
  p->stats.cached_blocks++;
  b->idle = false;
  b->event = NULL;
  /* another stream may take it once this event is done; one stream alone needs none (see the top) */
  if (p->ordered && p->multi_stream) record_event(p, b);
  b->next = p->free_list[b->cls];
  p->free_list[b->cls] = b;
  pthread_mutex_unlock(&p->lock);
  return LOOM_OK;
}

bool rt_gpu_pool_stream_ordered(const RtGpuPool *p) { return p && p->ordered; }

void rt_gpu_pool_stream_gone(RtGpuPool *p, void *stream) {
  if (!p || !p->ordered || !stream) return;
  pthread_mutex_lock(&p->lock);
  for (int c = 0; c < POOL_NCLASS; c++)
    for (PoolBlock *b = p->free_list[c]; b; b = b->next)
      if (b->stream == stream) {
        make_idle(p, b);
        b->stream = NULL;
      }
  for (uint32_t i = 0; i < p->nbuckets; i++)
    for (PoolBlock *b = p->used[i]; b; b = b->next)
      if (b->stream == stream) b->stream = NULL;
  if (p->first_stream == stream) p->first_stream = NULL;
  pthread_mutex_unlock(&p->lock);
}

void rt_gpu_pool_stats(RtGpuPool *p, RtGpuPoolStats *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  *out = p->stats;
  pthread_mutex_unlock(&p->lock);
}

void rt_gpu_pool_set_limit(RtGpuPool *p, uint64_t limit) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->limit = limit;
  pthread_mutex_unlock(&p->lock);
}

uint64_t rt_gpu_pool_limit(RtGpuPool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  uint64_t limit = p->limit;
  pthread_mutex_unlock(&p->lock);
  return limit;
}
