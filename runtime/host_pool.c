/* SPDX-License-Identifier: Apache-2.0 */
/* host_pool.c: a caching allocator for large host arrays (outputs and temporaries of loom_eval).
 *
 * The first write to freshly mapped memory costs a page fault per 4 KiB page: for a 10^7-element
 * float64 output that is as long as the fused kernel itself. Blocks of at least RT_HOST_POOL_MIN (1 KiB)
 * bytes are therefore kept when freed and handed out again for the same size class, like CuPy's
 * memory pool does on the device. Classes: powers of two split in four (waste <= 25 %). The cache is
 * bounded (LOOM_HOST_POOL_BYTES, default 1 GiB; 0 disables caching) and emptied when the context
 * goes. Smaller blocks go straight to the context's allocator. Thread-safe (one mutex).
 *
 * Huge pages: a block of at least RT_HOST_HUGE_MIN bytes from the default allocator starts on a 2 MiB
 * boundary and is madvise(MADV_HUGEPAGE)'d (what NumPy does for its arrays of >= 4 MiB): with the kernel's
 * transparent huge pages in "madvise" mode (Debian's default) a 4 KiB page is a TLB miss per 4 KiB and the
 * L2 prefetchers stop at every 4 KiB boundary, so a kernel streaming a 16 MB array from DRAM on one core
 * ran at ~15 GB/s where NumPy's 2 MiB-paged one reads at ~25 GB/s. LOOM_HOST_HUGE_PAGES=0: off.
 *
 * Limit (MemoryPool.set_limit on the host, as the GPU pools have): when set, a request that would take
 * used + cached bytes past it gives the cached blocks back first and fails (NULL) when it still does
 * not fit; rt_host_pool_limit tells the caller why.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "runtime/runtime.h"

/* Blocks from 1 KiB up are cached: a loop that makes a 16 KB result each step and drops the last one freed
 * it to malloc, whose heap top then went back to the system past its trim threshold and was faulted in
 * again page by page on the next step (3 page faults and 4-7 us of an ~11 us host call of `p - lr * g` on
 * 4096 float32; smaller blocks stay in malloc's own bins). */
enum { RT_HOST_POOL_MIN_LOG2 = 10, RT_HOST_POOL_MIN = 1 << RT_HOST_POOL_MIN_LOG2 };
enum { RT_HOST_POOL_CLASSES = 4 * (64 - RT_HOST_POOL_MIN_LOG2), RT_HOST_HUGE_MIN = 4 << 20, RT_HOST_HUGE_PAGE = 2 << 20 };

typedef struct FreeBlock {
  struct FreeBlock *next;
} FreeBlock;

struct RtHostPool {
  LoomContext *ctx;
  pthread_mutex_t lock;
  size_t cached, limit, used; /* used: bytes handed out and not freed; limit: of the cache */
  size_t hard_limit;          /* the most used + cached may reach (0: none) */
  size_t nblocks;             /* cached blocks */
  FreeBlock *bins[RT_HOST_POOL_CLASSES];
};

/* The class of a size >= RT_HOST_POOL_MIN and the size of that class. */
static int size_class(size_t size, size_t *class_size) {
  int e = 63 - __builtin_clzll((unsigned long long)size); /* 2^e <= size < 2^(e+1) */
  size_t base = (size_t)1 << e, quarter = base / 4;
  size_t q = (size - base + quarter - 1) / quarter; /* 0..4 quarters above base */
  if (q == 4) {
    e++;
    q = 0;
    base <<= 1;
    quarter <<= 1;
  }
  *class_size = base + q * quarter;
  return (e - RT_HOST_POOL_MIN_LOG2) * 4 + (int)q;
}

LoomStatus rt_host_pool_create(LoomContext *ctx, RtHostPool **out, Diag *d) {
  RtHostPool *p = ctx_calloc(ctx, 1, sizeof *p);
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: host memory pool");
  p->ctx = ctx;
  p->limit = (size_t)1 << 30;
  const char *env = getenv("LOOM_HOST_POOL_BYTES");
  if (env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == 0) p->limit = (size_t)v;
  }
  pthread_mutex_init(&p->lock, NULL);
  *out = p;
  return LOOM_OK;
}

void rt_host_pool_trim(RtHostPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  for (int c = 0; c < RT_HOST_POOL_CLASSES; c++) {
    for (FreeBlock *b = p->bins[c], *next; b; b = next) {
      next = b->next;
      ctx_free(p->ctx, b);
    }
    p->bins[c] = NULL;
  }
  p->cached = 0;
  p->nblocks = 0;
  pthread_mutex_unlock(&p->lock);
}

void rt_host_pool_destroy(RtHostPool *p) {
  if (!p) return;
  rt_host_pool_trim(p);
  pthread_mutex_destroy(&p->lock);
  ctx_free(p->ctx, p);
}

/* Whether a new block of size bytes fits under the hard limit, after giving the cache back if needed. */
static bool fits_limit(RtHostPool *p, size_t size) {
  pthread_mutex_lock(&p->lock);
  size_t hard = p->hard_limit, held = p->used + p->cached;
  pthread_mutex_unlock(&p->lock);
  if (!hard || (size <= hard && held <= hard - size)) return true;
  rt_host_pool_trim(p);
  pthread_mutex_lock(&p->lock);
  bool ok = !p->hard_limit || (size <= p->hard_limit && p->used <= p->hard_limit - size);
  pthread_mutex_unlock(&p->lock);
  return ok;
}

/* A new block of csize bytes: 2 MiB-aligned and advised into huge pages when large and the context uses
 * the default allocator (whose free() takes aligned_alloc's blocks), else the context's allocator's. */
static void *block_alloc(RtHostPool *p, size_t csize) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  static int knob = -1;
  int on = __atomic_load_n(&knob, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *e = getenv("LOOM_HOST_HUGE_PAGES");
    on = !(e && *e && atoi(e) == 0);
    __atomic_store_n(&knob, on, __ATOMIC_RELAXED);
  }
  const LoomAllocator *def = ir_default_allocator();
  if (on && csize >= RT_HOST_HUGE_MIN && (!p->ctx || p->ctx->alloc.alloc == def->alloc)) {
    size_t rounded = (csize + RT_HOST_HUGE_PAGE - 1) & ~(size_t)(RT_HOST_HUGE_PAGE - 1); /* <= 1 MiB more */
    void *mem = aligned_alloc(RT_HOST_HUGE_PAGE, rounded);
    if (mem) (void)madvise(mem, rounded, MADV_HUGEPAGE); /* advice: failure leaves 4 KiB pages */
    return mem;
  }
#endif
  return ctx_alloc(p->ctx, csize);
}

void *rt_host_alloc(RtHostPool *p, size_t size) {
  if (size == 0) size = 1;
  if (!p) return NULL;
  if (size < RT_HOST_POOL_MIN) {
    void *q = fits_limit(p, size) ? ctx_alloc(p->ctx, size) : NULL;
    if (q) {
      pthread_mutex_lock(&p->lock);
      p->used += size;
      pthread_mutex_unlock(&p->lock);
    }
    return q;
  }
  size_t csize;
  int c = size_class(size, &csize);
  if (c >= RT_HOST_POOL_CLASSES) return NULL;
  pthread_mutex_lock(&p->lock);
  FreeBlock *b = p->bins[c];
  if (b) {
    p->bins[c] = b->next;
    p->cached -= csize;
    p->nblocks--;
    p->used += csize;
  }
  pthread_mutex_unlock(&p->lock);
  if (b) return b;
  if (!fits_limit(p, csize)) return NULL;
  void *mem = block_alloc(p, csize);
  if (!mem) { /* give the cached blocks back and try once more */
    rt_host_pool_trim(p);
    mem = block_alloc(p, csize);
  }
  if (mem) {
    pthread_mutex_lock(&p->lock);
    p->used += csize;
    pthread_mutex_unlock(&p->lock);
  }
  return mem;
}

void rt_host_free(RtHostPool *p, void *ptr, size_t size) {
  if (!ptr || !p) return;
  if (size == 0) size = 1;
  if (size < RT_HOST_POOL_MIN) {
    pthread_mutex_lock(&p->lock);
    p->used -= size <= p->used ? size : p->used;
    pthread_mutex_unlock(&p->lock);
    ctx_free(p->ctx, ptr);
    return;
  }
  size_t csize;
  int c = size_class(size, &csize);
  pthread_mutex_lock(&p->lock);
  p->used -= csize <= p->used ? csize : p->used;
  if (c < RT_HOST_POOL_CLASSES && p->cached + csize <= p->limit) {
    FreeBlock *b = ptr;
    b->next = p->bins[c];
    p->bins[c] = b;
    p->cached += csize;
    p->nblocks++;
    ptr = NULL;
  }
  pthread_mutex_unlock(&p->lock);
  if (ptr) ctx_free(p->ctx, ptr);
}

size_t rt_host_pool_cached(RtHostPool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  size_t n = p->cached;
  pthread_mutex_unlock(&p->lock);
  return n;
}

size_t rt_host_pool_used(RtHostPool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  size_t n = p->used;
  pthread_mutex_unlock(&p->lock);
  return n;
}

void rt_host_pool_set_limit(RtHostPool *p, size_t limit) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->hard_limit = limit;
  pthread_mutex_unlock(&p->lock);
}

size_t rt_host_pool_limit(RtHostPool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  size_t n = p->hard_limit;
  pthread_mutex_unlock(&p->lock);
  return n;
}

size_t rt_host_pool_cached_blocks(RtHostPool *p) {
  if (!p) return 0;
  pthread_mutex_lock(&p->lock);
  size_t n = p->nblocks;
  pthread_mutex_unlock(&p->lock);
  return n;
}
