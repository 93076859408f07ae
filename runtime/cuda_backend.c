/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_backend.c: the CUDA device of the runtime: lazy driver loading, per-device pools, targets and
 * kernel caches, and the schedule runner for LOOM_DEVICE_CUDA arrays.
 *
 * Laziness. Nothing here runs until a CUDA array (or loom_device_count(CUDA)) is seen: then the
 * driver is dlopen'ed once per context (rt_gpu_get; a failure is remembered and reported again with
 * the same message), and a device is set up on first use (primary context retained, memory pool,
 * an nvptx target for its compute capability).
 *
 * Kernels. Per device, a hash table maps the kernel key (Loom's version, the target's description:
 * LLVM version, sm, block; and ir_print_kernel_key) to a loaded module. A miss looks in the disk
 * cache (runtime/disk_cache.h) for a cubin with that key; on a disk miss the kernel is compiled to PTX
 * (codegen/nvptx.c), linked into a cubin (cuLink*) and stored. The payload is a GpuMeta header (how to
 * launch: strategy, entry names, block, vector lanes, accumulator size) followed by the cubin. Loaded
 * kernels live as long as the context (no eviction), so evaluation plans may keep pointers to them.
 *
 * Cold compile. The driver's JIT (ptxas) dominates a new kernel's cost (bench/results: ~15-20 ms of
 * ~25 on the H200 for a small elementwise kernel) and grows with the code, so only the entries a
 * launch needs are compiled: an elementwise kernel's vector entry first, its scalar entry when a
 * launch with unaligned or strided arrays needs it; a reduction is only described (the launch facts
 * of its lowering) until a launch picks its entries (a group per module, a disk-cache entry per
 * group). Elementwise kernels are JIT-compiled at optimization level LOOM_CUDA_JIT_LEVEL (default
 * 1: LLVM has optimized them already; on the H200 level 1 ran the bench's 14 cold kernels within the
 * run-to-run spread of level 4 and JIT-compiled ~25% faster, while level 0 halved the bandwidth of
 * the transcendental ones: bench/results/2026-11-30-jit-levels.md); reductions keep the driver's
 * default (4).
 *
 * Launch. All work of a context on a device goes to that device's legacy default stream, in order:
 * loom_eval returns once its kernels are enqueued; results are visible to later Loom calls at once
 * (same stream) and to the host after loom_device_synchronize or a copy to the host (loom_array_copy,
 * synchronous). Temporaries and split-reduction partials are returned to the pool right after their
 * kernels are enqueued: the pool hands them out again only to work ordered after them on the stream.
 * Split reductions use a number of parts that depends on the sizes only (never on the device), so
 * a sum has the same bits run after run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "runtime/cuda.h"
#include "runtime/disk_cache.h"
#include "runtime/runtime.h"

#define GPU_BUCKETS 256
#define GPU_META_MAGIC 0x364b474du /* "MGK6": entry names by CG_ENTRY bit, vecw, tiers (older entries are rewritten) */

/* What a cubin payload of the disk cache starts with: how to launch the kernel, and which entries the
 * cubin holds (names[i] for bit i of `entries`; the other names are ""). The cubin (cubin_bytes)
 * follows; a tier-0 payload (a quick JIT, see "tiers" below) then holds the NUL-terminated PTX, so
 * that the process that loads it can compile the final code in the background. */
typedef struct GpuMeta {
  uint32_t magic, entries_all, entries;
  int32_t strategy, block, vec_lanes, vec_align, acc_size, nwords, cache_k, part_lanes, cache_lanes;
  int32_t tier;
  uint32_t cubin_bytes;
  char names[CG_NENTRY][64];
} GpuMeta;

/* Entry indexes (bit positions of CG_ENTRY_*). */
enum { E_MAIN, E_VEC, E_PART, E_FINISH, E_CACHED, E_PARTV, E_CACHEDV, E_FINISHB, E_VECW };

/* A kernel on one device. Its entries are compiled in groups, each a module of its own: a launch
 * that needs an entry not loaded yet compiles (or loads from the disk cache) the missing ones under
 * gpu_lock; `loaded` (CG_ENTRY bits) is written with release order after the handles, so a launcher
 * that sees a bit set may use that handle without the lock. */
struct RtGpuFn {
  struct RtGpuFn *next;
  uint64_t hash;
  char *key;                      /* the cache key of the kernel (a group's key adds its entries) */
  GpuMeta meta;                   /* launch facts; names of the loaded entries */
  uint32_t loaded;
  RtCuModule *modules[2 * CG_NENTRY]; /* one per group compiled, and its tier-up */
  int nmodules;
  RtCuKernel kern[CG_NENTRY];     /* by entry index (handle: atomic, a tier-up replaces it; see kern_at) */
  /* elementwise launch: best block size << 32 | resident blocks on the device (one atomic word: a
   * tier-up replaces both, after the handle; see tier_up); cfg_entry: the entry they come from */
  uint64_t elem_cfg;
  int cfg_entry;
  int elem_max_block[CG_NENTRY]; /* elementwise entries: the most threads each can launch with (atomic;
                                  * a tier-up only lowers it); the launch clamps its block to it */
  int cached_max_block;          /* the most threads the cached ROW entry can launch with (registers) */
  int cachedv_max_block;         /* the same for the vector cached entry */
  int partv_grid_max;            /* vector part entry: resident blocks of meta.block threads (SMs x occupancy) */
};

typedef struct RtGpuDev {
  bool ready;
  RtCuDeviceInfo info;
  RtCuPool *pool;
  CgTarget *target;
  RtGpuFn *fns[GPU_BUCKETS];
} RtGpuDev;

/* One thread's current stream of one device (loom_stream_use); a list under gpu_lock. */
typedef struct CurStream {
  struct CurStream *next;
  pthread_t tid;
  int device;
  RtCuStream *s;
} CurStream;

/* ---- tiers ----
 * A new elementwise kernel is JIT-compiled at level 0 first (2-5 ms less JIT on the H200's host; its
 * code can be up to 2x slower where it calls functions), loaded and used; one background thread per
 * runtime then compiles the same PTX at the final level and swaps the entries' function handles
 * (the old module stays loaded: launches in flight may use it). A tier-up waits until no kernel has
 * been compiled for TIER_IDLE_MS: the driver's JIT calls do not overlap well (run side by side, a
 * burst of new kernels compiled more slowly than without tiers on the H200). The disk cache gets the
 * tier-0 cubin with its PTX at once and the final cubin when the tier-up is done, so a process that
 * exits early leaves an entry the next one loads and tiers up in turn. rt_gpu_destroy finishes the
 * queue. */
#define TIER_IDLE_MS 50.0
typedef struct TierJob {
  struct TierJob *next;
  RtGpuFn *f;
  int device;
  GpuMeta meta; /* tier 1; the entries of the group */
  char *key;    /* the group's disk-cache key */
  char *ptx;
  int sm_count;
  char name[64];
} TierJob;

struct RtGpu {
  CurStream *cur;
  RtCuda *cu;
  int ndev;
  RtGpuDev *devs;
  DiskCache *disk;
  bool disk_tried;
  int jit_level_elementwise; /* LOOM_CUDA_JIT_LEVEL, 0 .. 4 */
  bool tiers;                /* LOOM_CUDA_JIT_TIERS (default 1) and a final level above 0 */
  bool tier_started, tier_stop, tier_abandon; /* abandon: at exit, the rest of the queue is dropped */
  pthread_t tier_thread;
  pid_t tier_pid; /* the process that started the thread (a fork's child has no such thread) */
  struct RtGpu *tier_next; /* the list of runtimes with a thread, for the exit handler */
  pthread_mutex_t tier_lock; /* guards the queue, tier_stop and last_compile_ms */
  pthread_cond_t tier_cv;
  double last_compile_ms;    /* when a compile (any kernel) last ended */
  TierJob *tier_head, *tier_tail;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Runtimes with a tier thread. A process that exits without loom_context_destroy must not leave the
 * thread inside the driver while the driver is torn down: the exit handler stops every thread after
 * its current tier-up (the queued ones are dropped; their tier-0 entries stay on disk). Exit is
 * process-wide, so this list is the one mutable global of the library (STYLE.md otherwise forbids
 * them); it is guarded by tier_list_lock and holds only runtimes not yet destroyed. */
static pthread_mutex_t tier_list_lock = PTHREAD_MUTEX_INITIALIZER;
static RtGpu *tier_list;
static pthread_once_t tier_atexit_once = PTHREAD_ONCE_INIT;
static void tier_stop_thread(RtGpu *g, bool abandon) {
  pthread_mutex_lock(&g->tier_lock);
  g->tier_stop = true;
  g->tier_abandon = abandon;
  pthread_cond_broadcast(&g->tier_cv);
  pthread_mutex_unlock(&g->tier_lock);
  pthread_join(g->tier_thread, NULL);
  g->tier_started = false;
}
static void tier_at_exit(void) {
  pthread_mutex_lock(&tier_list_lock);
  for (RtGpu *g = tier_list; g; g = g->tier_next)
    if (g->tier_started && g->tier_pid == getpid()) tier_stop_thread(g, true);
  tier_list = NULL;
  pthread_mutex_unlock(&tier_list_lock);
}
static void tier_register_atexit(void) { atexit(tier_at_exit); }

LoomStatus rt_gpu_get(LoomContext *ctx, RtGpu **out, Diag *d) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->gpu_lock);
  LoomStatus st = LOOM_OK;
  if (!rt->gpu && rt->gpu_fail.status == LOOM_OK) {
    RtGpu *g = ctx_calloc(ctx, 1, sizeof *g);
    if (!g) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA runtime state");
      pthread_mutex_unlock(&rt->gpu_lock);
      return st;
    }
    st = rt_cuda_load(ctx, &g->cu, &rt->gpu_fail);
    g->jit_level_elementwise = 1;
    const char *lv = getenv("LOOM_CUDA_JIT_LEVEL");
    if (lv && *lv) {
      if (lv[0] >= '0' && lv[0] <= '4' && !lv[1]) g->jit_level_elementwise = lv[0] - '0';
      else fprintf(stderr, "loom: warning: LOOM_CUDA_JIT_LEVEL=%s is not 0..4; using 1\n", lv);
    }
    const char *tv = getenv("LOOM_CUDA_JIT_TIERS");
    g->tiers = g->jit_level_elementwise > 0 && !(tv && !strcmp(tv, "0"));
    pthread_mutex_init(&g->tier_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the idle wait must not follow the wall clock */
    pthread_cond_init(&g->tier_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (st == LOOM_OK) {
      g->ndev = rt_cuda_device_count(g->cu);
      g->devs = ctx_calloc(ctx, (size_t)(g->ndev > 0 ? g->ndev : 1), sizeof *g->devs);
      if (!g->devs) {
        rt_cuda_unload(g->cu);
        st = diag_error(&rt->gpu_fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA device table");
      }
    }
    if (st == LOOM_OK) rt->gpu = g;
    else ctx_free(ctx, g);
  }
  if (!rt->gpu) {
    st = rt->gpu_fail.status != LOOM_OK ? rt->gpu_fail.status : LOOM_ERR_UNSUPPORTED;
    diag_error(d, st, "%s", rt->gpu_fail.msg[0] ? rt->gpu_fail.msg : "no CUDA driver/device");
  }
  *out = rt->gpu;
  pthread_mutex_unlock(&rt->gpu_lock);
  return st;
}

int rt_gpu_device_count(LoomContext *ctx) {
  RtGpu *g = NULL;
  Diag d = {.status = LOOM_OK};
  return rt_gpu_get(ctx, &g, &d) == LOOM_OK ? g->ndev : 0;
}

/* The device, set up on first use. Called with gpu_lock held. */
static LoomStatus device_locked(LoomContext *ctx, RtGpu *g, int index, RtGpuDev **out, Diag *d) {
  if (index < 0 || index >= g->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "CUDA device %d does not exist (this machine has %d)", index, g->ndev);
  RtGpuDev *dev = &g->devs[index];
  if (!dev->ready) {
    LoomStatus st = rt_cuda_device_info(g->cu, index, &dev->info, d);
    if (st == LOOM_OK) st = rt_cuda_device_retain(g->cu, index, d);
    if (st != LOOM_OK) return st;
    RtDevAllocator a = rt_cuda_device_allocator(g->cu);
    st = rt_cuda_pool_create(ctx, index, &a, &dev->pool, d);
    if (st == LOOM_OK) st = cg_nvptx_target_create(ctx, dev->info.cc_major, dev->info.cc_minor, &dev->target, d);
    if (st != LOOM_OK) {
      rt_cuda_pool_destroy(dev->pool);
      dev->pool = NULL;
      rt_cuda_device_release(g->cu, index);
      return st;
    }
    dev->ready = true;
  }
  *out = dev;
  return LOOM_OK;
}

static LoomStatus get_device(LoomContext *ctx, int index, RtGpu **gout, RtGpuDev **out, Diag *d) {
  RtGpu *g = NULL;
  LoomStatus st = rt_gpu_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&ctx->rt->gpu_lock);
  st = device_locked(ctx, g, index, out, d);
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  *gout = g;
  return st;
}

void rt_gpu_destroy(LoomContext *ctx) {
  RtGpu *g = ctx->rt ? ctx->rt->gpu : NULL;
  if (!g) return;
  pthread_mutex_lock(&tier_list_lock);
  for (RtGpu **p = &tier_list; *p; p = &(*p)->tier_next)
    if (*p == g) {
      *p = g->tier_next;
      break;
    }
  /* the queue is finished first (its tier-ups also fill the disk cache); in a fork's child there is
   * no thread to wait for */
  if (g->tier_started && g->tier_pid == getpid()) tier_stop_thread(g, false);
  pthread_mutex_unlock(&tier_list_lock);
  pthread_mutex_destroy(&g->tier_lock);
  pthread_cond_destroy(&g->tier_cv);
  for (int i = 0; i < g->ndev; i++) {
    RtGpuDev *dev = &g->devs[i];
    if (!dev->ready) continue;
    Diag d = {.status = LOOM_OK};
    rt_cuda_set_current(g->cu, i, &d);
    rt_cuda_device_synchronize(g->cu, i, &d);
    for (int b = 0; b < GPU_BUCKETS; b++)
      for (RtGpuFn *f = dev->fns[b], *next; f; f = next) {
        next = f->next;
        for (int m = 0; m < f->nmodules; m++) rt_cuda_module_unload(g->cu, f->modules[m]);
        ctx_free(ctx, f->key);
        ctx_free(ctx, f);
      }
    rt_cuda_pool_destroy(dev->pool);
    if (dev->target) dev->target->destroy(dev->target);
    rt_cuda_device_release(g->cu, i);
  }
  for (CurStream *c = g->cur, *next; c; c = next) {
    next = c->next;
    ctx_free(ctx, c);
  }
  rt_disk_cache_close(g->disk);
  rt_cuda_unload(g->cu);
  ctx_free(ctx, g->devs);
  ctx_free(ctx, g);
  ctx->rt->gpu = NULL;
}

/* ---- memory ---------------------------------------------------------------------------------------- */
LoomStatus rt_gpu_alloc(LoomContext *ctx, int device, size_t size, void **out, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  uint64_t p = 0;
  st = rt_cuda_set_current(g->cu, device, d);
  if (st == LOOM_OK) st = rt_cuda_pool_alloc(dev->pool, size, &p, d);
  *out = (void *)(uintptr_t)p;
  return st;
}

LoomStatus rt_gpu_free(LoomContext *ctx, int device, void *ptr, Diag *d) {
  if (!ptr) return LOOM_OK;
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  return rt_cuda_pool_free(dev->pool, (uint64_t)(uintptr_t)ptr, d);
}

LoomStatus rt_gpu_synchronize(LoomContext *ctx, int device, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(g->cu, device, d);
  return st;
}

/* Copies n bytes between any two of host / CUDA device memory (synchronous). */
LoomStatus rt_gpu_memcpy(LoomContext *ctx, LoomDeviceKind dk, int di, void *dst, LoomDeviceKind sk, int si,
                         const void *src, size_t n, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (dk == LOOM_DEVICE_HOST && sk == LOOM_DEVICE_HOST) {
    memmove(dst, src, n);
    return LOOM_OK;
  }
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  int device = dk == LOOM_DEVICE_CUDA ? di : si;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  if (st != LOOM_OK) return st;
  RtCuStream *s = rt_gpu_current_stream(ctx, device); /* NULL: the legacy default stream */
  if (dk == LOOM_DEVICE_CUDA && sk == LOOM_DEVICE_CUDA && di != si) {
    /* between two GPUs: the source's work on its current stream done first, then cuMemcpyPeer (ordered
     * with both legacy streams), then the destination's current stream waits for nothing of ours:
     * the copy is synchronous for the caller */
    RtGpuDev *sdev = NULL;
    st = get_device(ctx, si, &g, &sdev, d);
    RtCuStream *ss = st == LOOM_OK ? rt_gpu_current_stream(ctx, si) : NULL;
    if (st == LOOM_OK && ss) st = rt_cuda_stream_synchronize(g->cu, ss, d);
    if (st == LOOM_OK && s) st = rt_cuda_stream_synchronize(g->cu, s, d);
    if (st == LOOM_OK) st = rt_cuda_memcpy_peer(g->cu, di, (uint64_t)(uintptr_t)dst, si, (uint64_t)(uintptr_t)src, n, d);
    if (st == LOOM_OK) st = rt_cuda_device_synchronize(g->cu, di, d);
    return st;
  }
  if (dk == LOOM_DEVICE_CUDA && sk == LOOM_DEVICE_CUDA) {
    st = rt_cuda_memcpy_d2d(g->cu, device, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, n, s, d);
  } else if (dk == LOOM_DEVICE_CUDA) {
    st = rt_cuda_memcpy_h2d(g->cu, device, (uint64_t)(uintptr_t)dst, src, n, s, d);
  } else {
    st = rt_cuda_memcpy_d2h(g->cu, device, dst, (uint64_t)(uintptr_t)src, n, s, d);
  }
  /* synchronous for the caller: wait for the copy (and what was before it on that stream) */
  if (st == LOOM_OK && s) st = rt_cuda_stream_synchronize(g->cu, s, d);
  else if (st == LOOM_OK && dk == LOOM_DEVICE_CUDA && sk == LOOM_DEVICE_CUDA) st = rt_cuda_device_synchronize(g->cu, device, d);
  return st;
}

LoomStatus rt_gpu_pool_stats(LoomContext *ctx, int device, RtCuPoolStats *out, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) rt_cuda_pool_stats(dev->pool, out);
  return st;
}

LoomStatus rt_gpu_pool_free_all_blocks(LoomContext *ctx, int device, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  /* cached blocks may still be read by enqueued work (temporaries are returned once enqueued) */
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(g->cu, device, d);
  if (st == LOOM_OK) rt_cuda_pool_free_all_blocks(dev->pool);
  return st;
}

/* ---- streams and events ------------------------------------------------------------------------------ */
LoomStatus rt_gpu_stream_create(LoomContext *ctx, int device, RtCuStream **out, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_stream_create(g->cu, device, out, d);
  return st;
}

void rt_gpu_stream_destroy(LoomContext *ctx, RtCuStream *s) {
  RtGpu *g = ctx->rt ? ctx->rt->gpu : NULL;
  if (!g || !s) return;
  pthread_mutex_lock(&ctx->rt->gpu_lock);
  for (CurStream **pc = &g->cur; *pc;) {
    CurStream *c = *pc;
    if (c->s == s) {
      *pc = c->next;
      ctx_free(ctx, c);
    } else {
      pc = &c->next;
    }
  }
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  rt_cuda_stream_destroy(g->cu, s);
}

LoomStatus rt_gpu_stream_synchronize(LoomContext *ctx, RtCuStream *s, Diag *d) {
  RtGpu *g = NULL;
  LoomStatus st = rt_gpu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_stream_synchronize(g->cu, s, d) : st;
}

LoomStatus rt_gpu_stream_use(LoomContext *ctx, int device, RtCuStream *s, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  if (s && rt_cuda_stream_device(s) != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_use: the stream belongs to CUDA device %d, not %d",
                      rt_cuda_stream_device(s), device);
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->rt->gpu_lock);
  CurStream **pc = &g->cur;
  while (*pc && !((*pc)->device == device && pthread_equal((*pc)->tid, self))) pc = &(*pc)->next;
  if (*pc && s) {
    (*pc)->s = s;
  } else if (*pc) { /* back to the default stream */
    CurStream *c = *pc;
    *pc = c->next;
    ctx_free(ctx, c);
  } else if (s) {
    CurStream *c = ctx_calloc(ctx, 1, sizeof *c);
    if (!c) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: current stream table");
    else {
      c->tid = self;
      c->device = device;
      c->s = s;
      c->next = g->cur;
      g->cur = c;
    }
  }
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  return st;
}

RtCuStream *rt_gpu_current_stream(LoomContext *ctx, int device) {
  RtGpu *g = ctx->rt ? ctx->rt->gpu : NULL;
  if (!g) return NULL;
  pthread_t self = pthread_self();
  RtCuStream *s = NULL;
  pthread_mutex_lock(&ctx->rt->gpu_lock);
  for (CurStream *c = g->cur; c; c = c->next)
    if (c->device == device && pthread_equal(c->tid, self)) {
      s = c->s;
      break;
    }
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  return s;
}

LoomStatus rt_gpu_event_create(LoomContext *ctx, int device, RtCuEvent **out, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_event_create(g->cu, device, out, d);
  return st;
}

void rt_gpu_event_destroy(LoomContext *ctx, RtCuEvent *e) {
  RtGpu *g = ctx->rt ? ctx->rt->gpu : NULL;
  if (g && e) rt_cuda_event_destroy(g->cu, e);
}

LoomStatus rt_gpu_event_record(LoomContext *ctx, int device, RtCuEvent *e, RtCuStream *s, Diag *d) {
  RtGpu *g = NULL;
  LoomStatus st = rt_gpu_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  if (!s) s = rt_gpu_current_stream(ctx, device);
  return rt_cuda_event_record(g->cu, e, s, d);
}

LoomStatus rt_gpu_event_synchronize(LoomContext *ctx, RtCuEvent *e, Diag *d) {
  RtGpu *g = NULL;
  LoomStatus st = rt_gpu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_event_synchronize(g->cu, e, d) : st;
}

LoomStatus rt_gpu_event_elapsed(LoomContext *ctx, RtCuEvent *a, RtCuEvent *b, float *ms, Diag *d) {
  RtGpu *g = NULL;
  LoomStatus st = rt_gpu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_event_elapsed(g->cu, a, b, ms, d) : st;
}

/* ---- kernels ----------------------------------------------------------------------------------------- */
static int max_block_of(RtGpu *g, const RtCuKernel *k, Diag *d) {
  RtCuKernelAttrs at;
  if (rt_cuda_kernel_attrs(g->cu, k, &at, d) != LOOM_OK) return 0;
  return (at.max_threads_per_block > 1024 ? 1024 : at.max_threads_per_block) / 32 * 32;
}

/* An elementwise entry's launch shape: the occupancy API's best block size << 32 | the resident blocks
 * of that size on the device; 0 on an error. */
static uint64_t elem_config(RtGpu *g, const RtCuKernel *k, int sm_count, Diag *d) {
  int bs = 256, per_sm = 1;
  if (rt_cuda_best_block_size(g->cu, k, 0, &bs, d) != LOOM_OK || rt_cuda_occupancy(g->cu, k, bs, 0, &per_sm, d) != LOOM_OK)
    return 0;
  return (uint64_t)(uint32_t)bs << 32 | (uint32_t)(sm_count * (per_sm > 0 ? per_sm : 1));
}

/* Loads a cubin holding the entries m->entries into a new module of f and reads their launch limits. */
static LoomStatus load_group(RtGpu *g, int device, RtGpuDev *dev, RtGpuFn *f, const GpuMeta *m, const void *cubin,
                             size_t size, Diag *d) {
  if (f->nmodules >= 2 * CG_NENTRY || !(m->entries & ~f->loaded))
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a kernel group adds no entries");
  RtCuModule *mod = NULL;
  LoomStatus st = rt_cuda_module_load(g->cu, device, cubin, size, &mod, d);
  RtCuKernel kern[CG_NENTRY];
  memset(kern, 0, sizeof kern);
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (m->entries & (1u << i)) st = rt_cuda_module_kernel(g->cu, mod, m->names[i], &kern[i], d);
  if (st != LOOM_OK) {
    if (mod) rt_cuda_module_unload(g->cu, mod);
    return st;
  }
  if (!f->loaded) { /* the first group: the launch facts, unless described already (reductions) */
    if (f->meta.magic != GPU_META_MAGIC) f->meta = *m;
    f->elem_cfg = (uint64_t)256 << 32 | (uint32_t)(dev->info.sm_count * 8);
    f->cfg_entry = -1;
  }
  uint32_t fresh = m->entries & ~f->loaded;
  for (int i = 0; i < CG_NENTRY; i++)
    if (fresh & (1u << i)) {
      f->kern[i] = kern[i];
      memcpy(f->meta.names[i], m->names[i], sizeof f->meta.names[i]);
    }
  if (m->strategy == CG_GPU_ELEMENTWISE)
    for (int i = 0; i < CG_NENTRY; i++)
      if (fresh & (1u << i)) __atomic_store_n(&f->elem_max_block[i], max_block_of(g, &f->kern[i], d), __ATOMIC_RELEASE);
  if (fresh & CG_ENTRY_CACHED) f->cached_max_block = max_block_of(g, &f->kern[E_CACHED], d);
  if (fresh & CG_ENTRY_CACHEDV) f->cachedv_max_block = max_block_of(g, &f->kern[E_CACHEDV], d);
  if (fresh & CG_ENTRY_PARTV) {
    int per_sm = 1;
    if (rt_cuda_occupancy(g->cu, &f->kern[E_PARTV], m->block, 0, &per_sm, d) == LOOM_OK)
      f->partv_grid_max = dev->info.sm_count * (per_sm > 0 ? per_sm : 1);
  }
  /* elementwise: the block size and grid cap of the first entry loaded serve both */
  if (m->strategy == CG_GPU_ELEMENTWISE && !(f->loaded & (CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW))) {
    f->cfg_entry = (fresh & CG_ENTRY_VECW) ? E_VECW : (fresh & CG_ENTRY_VEC) ? E_VEC : E_MAIN;
    uint64_t cfg = elem_config(g, &f->kern[f->cfg_entry], dev->info.sm_count, d);
    if (cfg) f->elem_cfg = cfg;
  }
  st = d->status == LOOM_OK ? LOOM_OK : d->status;
  if (st != LOOM_OK) {
    rt_cuda_module_unload(g->cu, mod);
    return st;
  }
  f->modules[f->nmodules++] = mod;
  __atomic_store_n(&f->loaded, f->loaded | m->entries, __ATOMIC_RELEASE);
  return LOOM_OK;
}

static GpuMeta meta_of(const CgGpuKernel *gk) {
  GpuMeta m = {.magic = GPU_META_MAGIC, .tier = 1, .entries_all = gk->entries_all, .entries = gk->entries,
               .strategy = gk->strategy, .block = gk->block, .vec_lanes = gk->vec_lanes,
               .vec_align = gk->vec_align, .acc_size = gk->acc_size, .nwords = gk->nwords,
               .cache_k = gk->cache_k, .part_lanes = gk->part_lanes, .cache_lanes = gk->cache_lanes};
  for (int i = 0; i < CG_NENTRY; i++) memcpy(m.names[i], cg_gpu_entry_name((CgGpuKernel *)gk, i), 64);
  return m;
}

/* Stores meta + cubin (+ the PTX for a tier-0 payload) under key in the disk cache; a failure is a
 * warning (the cache is an optimization). */
static void disk_store(LoomContext *ctx, RtGpu *g, const char *key, GpuMeta m, const void *cubin, size_t cubin_size,
                       const char *ptx) {
  size_t ptx_bytes = m.tier == 0 && ptx ? strlen(ptx) + 1 : 0;
  m.cubin_bytes = (uint32_t)cubin_size;
  unsigned char *payload = ctx_alloc(ctx, sizeof m + cubin_size + ptx_bytes);
  if (!payload) return;
  memcpy(payload, &m, sizeof m);
  memcpy(payload + sizeof m, cubin, cubin_size);
  if (ptx_bytes) memcpy(payload + sizeof m + cubin_size, ptx, ptx_bytes);
  Diag dd = {.status = LOOM_OK};
  if (rt_disk_cache_store(g->disk, key, payload, sizeof m + cubin_size + ptx_bytes, &dd) != LOOM_OK)
    fprintf(stderr, "loom: warning: storing a kernel in the disk cache failed: %s\n", dd.msg);
  ctx_free(ctx, payload);
}

/* The tier-up of one job (the background thread): the final JIT level, then the entries' handles
 * swapped under gpu_lock when the new code can launch with the block size in use, then the disk. */
static void tier_up(LoomContext *ctx, RtGpu *g, TierJob *j) {
  double t0 = now_ms();
  Diag d = {.status = LOOM_OK};
  void *cubin = NULL;
  size_t cubin_size = 0;
  RtCuModule *mod = NULL;
  RtCuKernel kern[CG_NENTRY];
  memset(kern, 0, sizeof kern);
  LoomStatus st = rt_cuda_link_ptx(g->cu, j->device, j->ptx, j->name, g->jit_level_elementwise, &cubin, &cubin_size, &d);
  if (st == LOOM_OK) st = rt_cuda_module_load(g->cu, j->device, cubin, cubin_size, &mod, &d);
  int maxb[CG_NENTRY] = {0};
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (j->meta.entries & (1u << i)) {
      st = rt_cuda_module_kernel(g->cu, mod, j->meta.names[i], &kern[i], &d);
      if (st == LOOM_OK) maxb[i] = max_block_of(g, &kern[i], &d);
      if (st == LOOM_OK && maxb[i] < 32) st = LOOM_ERR_BACKEND; /* keeps tier 0 */
    }
  bool swapped = false;
  if (st == LOOM_OK) {
    pthread_mutex_lock(&ctx->rt->gpu_lock);
    RtGpuFn *f = j->f;
    if (f->nmodules < 2 * CG_NENTRY) {
      f->modules[f->nmodules++] = mod;
      /* an entry's block limit only goes down (the lower of the two codes'): a launch that reads it
       * and the handle in either order, before or after the swap, stays within both */
      for (int i = 0; i < CG_NENTRY; i++)
        if (j->meta.entries & (1u << i)) {
          int old = __atomic_load_n(&f->elem_max_block[i], __ATOMIC_ACQUIRE);
          if (maxb[i] < old) __atomic_store_n(&f->elem_max_block[i], maxb[i], __ATOMIC_RELEASE);
          __atomic_store_n(&f->kern[i].handle, kern[i].handle, __ATOMIC_RELEASE);
        }
      swapped = true;
      uint64_t cfg = f->cfg_entry >= 0 && (j->meta.entries & (1u << f->cfg_entry))
                         ? elem_config(g, &kern[f->cfg_entry], j->sm_count, &d) : 0;
      if (cfg) __atomic_store_n(&f->elem_cfg, cfg, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->rt->gpu_lock);
  }
  if (mod && !swapped) rt_cuda_module_unload(g->cu, mod);
  if (ctx->dump_flags & IR_DUMP_TIME)
    fprintf(stderr, "# time gpu %s tier-up (JIT level %d): %.3f ms, %s\n", j->name, g->jit_level_elementwise,
            now_ms() - t0, swapped ? "swapped" : d.status != LOOM_OK ? d.msg : "kept tier 0");
  if (st == LOOM_OK && g->disk) disk_store(ctx, g, j->key, j->meta, cubin, cubin_size, NULL);
  if (cubin) rt_cuda_free_host(g->cu, cubin);
}

static void tier_job_free(LoomContext *ctx, TierJob *j) {
  ctx_free(ctx, j->key);
  ctx_free(ctx, j->ptx);
  ctx_free(ctx, j);
}

static void *tier_main(void *arg) {
  LoomContext *ctx = arg;
  RtGpu *g = ctx->rt->gpu;
  for (;;) {
    pthread_mutex_lock(&g->tier_lock);
    while (!g->tier_head && !g->tier_stop) pthread_cond_wait(&g->tier_cv, &g->tier_lock);
    TierJob *j = g->tier_head;
    if (j) {
      g->tier_head = j->next;
      if (!g->tier_head) g->tier_tail = NULL;
    }
    bool abandon = g->tier_abandon;
    pthread_mutex_unlock(&g->tier_lock);
    if (j && abandon) { /* the process is exiting: the disk keeps the tier-0 entries */
      tier_job_free(ctx, j);
      continue;
    }
    if (!j) return NULL; /* stopped, queue empty */
    for (;;) { /* wait for a pause in compiling (not when stopping: the queue is finished then) */
      pthread_mutex_lock(&g->tier_lock);
      double wait = TIER_IDLE_MS - (now_ms() - g->last_compile_ms);
      if (g->tier_stop || wait <= 0) {
        pthread_mutex_unlock(&g->tier_lock);
        break;
      }
      struct timespec until;
      clock_gettime(CLOCK_MONOTONIC, &until);
      long ns = until.tv_nsec + (long)(wait * 1e6) + 100000;
      until.tv_sec += ns / 1000000000L;
      until.tv_nsec = ns % 1000000000L;
      pthread_cond_timedwait(&g->tier_cv, &g->tier_lock, &until);
      pthread_mutex_unlock(&g->tier_lock);
    }
    tier_up(ctx, g, j);
    tier_job_free(ctx, j);
  }
}

/* Queues the tier-up of the group `m` of f (its PTX and disk key are copied); false when it cannot
 * (no memory, no thread: the group stays at level 0 in this process). Caller holds gpu_lock. */
static bool tier_enqueue(LoomContext *ctx, RtGpu *g, int device, RtGpuFn *f, const GpuMeta *m, const char *key,
                         const char *ptx, const char *name) {
  if (!g->tier_started) {
    pthread_once(&tier_atexit_once, tier_register_atexit);
    if (pthread_create(&g->tier_thread, NULL, tier_main, ctx) != 0) {
      g->tiers = false;
      return false;
    }
    g->tier_started = true;
    g->tier_pid = getpid();
    pthread_mutex_lock(&tier_list_lock);
    g->tier_next = tier_list;
    tier_list = g;
    pthread_mutex_unlock(&tier_list_lock);
  }
  TierJob *j = ctx_calloc(ctx, 1, sizeof *j);
  size_t kl = strlen(key) + 1, pl = strlen(ptx) + 1;
  char *kc = j ? ctx_alloc(ctx, kl) : NULL, *pc = kc ? ctx_alloc(ctx, pl) : NULL;
  if (!pc) {
    ctx_free(ctx, kc);
    ctx_free(ctx, j);
    return false;
  }
  memcpy(kc, key, kl);
  memcpy(pc, ptx, pl);
  j->f = f;
  j->device = device;
  j->sm_count = g->devs[device].info.sm_count;
  j->meta = *m;
  j->meta.tier = 1;
  j->key = kc;
  j->ptx = pc;
  snprintf(j->name, sizeof j->name, "%s", name);
  pthread_mutex_lock(&g->tier_lock);
  g->last_compile_ms = now_ms();
  if (g->tier_tail) g->tier_tail->next = j;
  else g->tier_head = j;
  g->tier_tail = j;
  pthread_cond_signal(&g->tier_cv);
  pthread_mutex_unlock(&g->tier_lock);
  return true;
}

/* Adds the entries `want` (CG_ENTRY bits; the first group of a kernel may ask for entries it lacks:
 * see CgCompileOptions.entries) to f: from the disk cache, else compiled, linked and stored there
 * (counted in the stats either way). An elementwise group is compiled in tiers (see TierJob). Caller
 * holds gpu_lock. */
static LoomStatus add_group(LoomContext *ctx, RtGpu *g, int device, RtGpuDev *dev, RtGpuFn *f, const KernelIr *k,
                            uint32_t want, Diag *d) {
  StrBuf kb;
  sb_init(&kb, ctx);
  bool elementwise = k->nkeep == k->ndim;
  int jit_level = elementwise ? g->jit_level_elementwise : -1;
  sb_printf(&kb, "%sentries %u jit %d\n", f->key, want, jit_level);
  char *key = sb_take(&kb);
  if (!key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  if (!g->disk_tried) {
    g->disk_tried = true;
    Diag dd = {.status = LOOM_OK};
    if (rt_disk_cache_open(ctx, NULL, &g->disk, &dd) != LOOM_OK) {
      fprintf(stderr, "loom: warning: the kernel disk cache is off: %s\n", dd.msg);
      g->disk = NULL;
    }
  }
  LoomStatus st = LOOM_OK;
  bool hit = false;
  if (g->disk) {
    void *blob = NULL;
    size_t blob_size = 0;
    Diag dd = {.status = LOOM_OK};
    if (rt_disk_cache_load(g->disk, key, &blob, &blob_size, &hit, &dd) != LOOM_OK) hit = false;
    GpuMeta m;
    if (hit && blob_size > sizeof m) memcpy(&m, blob, sizeof m);
    hit = hit && blob_size > sizeof m && m.magic == GPU_META_MAGIC && (m.entries & ~f->loaded) &&
          !(m.entries & ~m.entries_all) && m.cubin_bytes > 0 && m.cubin_bytes <= blob_size - sizeof m &&
          (m.tier == 1 || (m.tier == 0 && g->tiers && blob_size > sizeof m + m.cubin_bytes &&
                           ((const char *)blob)[blob_size - 1] == 0)); /* tiers off: a tier-0 entry is rebuilt */
    if (hit) {
      for (int i = 0; i < CG_NENTRY; i++) m.names[i][63] = 0;
      const char *cubin = (const char *)blob + sizeof m;
      st = load_group(g, device, dev, f, &m, cubin, m.cubin_bytes, d);
      if (st == LOOM_OK) {
        pthread_mutex_lock(&ctx->rt->stats_lock);
        ctx->rt->stats.cache_hits++;
        pthread_mutex_unlock(&ctx->rt->stats_lock);
        /* a tier-0 entry (its process ended before the tier-up): tier up here */
        if (m.tier == 0 && g->tiers) tier_enqueue(ctx, g, device, f, &m, key, cubin + m.cubin_bytes, k->name);
      }
    }
    if (blob) rt_disk_cache_free(g->disk, blob);
  }
  if (st == LOOM_OK && !hit) {
    double t0 = now_ms();
    CgCompiled c;
    CgCompileOptions opt = {.entries = want};
    st = dev->target->compile(dev->target, k, &opt, &c, d);
    void *cubin = NULL;
    size_t cubin_size = 0;
    double t_llvm = now_ms(), t_link = t_llvm;
    bool compiled = st == LOOM_OK;
    bool tiered = compiled && elementwise && g->tiers;
    GpuMeta m;
    memset(&m, 0, sizeof m);
    if (compiled) {
      CgGpuKernel *gk = c.gpu;
      m = meta_of(gk);
      if (tiered) m.tier = 0;
      st = rt_cuda_link_ptx(g->cu, device, gk->code, k->name, tiered ? 0 : jit_level, &cubin, &cubin_size, d);
      t_link = now_ms();
      if (ctx->dump_flags & IR_DUMP_TIME)
        fprintf(stderr, "# time gpu %s entries %#x: lower %.3f libdevice %.3f opt %.3f ptx %.3f (%zu bytes) "
                        "jit %.3f ms (level %d)\n", k->name, gk->entries, gk->phase_ms[0], gk->phase_ms[1],
                gk->phase_ms[2], gk->phase_ms[3], gk->code_size, t_link - t_llvm, tiered ? 0 : jit_level);
      if (st == LOOM_OK && !(m.entries & ~f->loaded))
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s has none of the entries %#x", k->name, want);
    }
    if (st == LOOM_OK) st = load_group(g, device, dev, f, &m, cubin, cubin_size, d);
    if (st == LOOM_OK && (ctx->dump_flags & IR_DUMP_TIME))
      fprintf(stderr, "# time gpu %s load %.3f ms, total %.3f ms\n", k->name, now_ms() - t_link, now_ms() - t0);
    double t_store = now_ms();
    /* stored before the tier-up is queued, so the final entry always lands last; without a background
     * thread (no memory, no thread) the kernel stays at level 0 here, and its entry keeps tier 0 and
     * its PTX, so the next process tiers it up */
    if (st == LOOM_OK && g->disk) disk_store(ctx, g, key, m, cubin, cubin_size, compiled ? c.gpu->code : NULL);
    if (st == LOOM_OK && tiered) tier_enqueue(ctx, g, device, f, &m, key, c.gpu->code, k->name);
    if (st == LOOM_OK && g->disk && (ctx->dump_flags & IR_DUMP_TIME))
      fprintf(stderr, "# time gpu %s disk store %.3f ms\n", k->name, now_ms() - t_store);
    if (compiled) dev->target->release(dev->target, &c);
    if (cubin) rt_cuda_free_host(g->cu, cubin);
    if (compiled && g->tier_started) {
      pthread_mutex_lock(&g->tier_lock);
      g->last_compile_ms = now_ms();
      pthread_mutex_unlock(&g->tier_lock);
    }
    if (compiled) {
      pthread_mutex_lock(&ctx->rt->stats_lock);
      ctx->rt->stats.kernels_compiled++;
      ctx->rt->stats.compile_ms += now_ms() - t0;
      pthread_mutex_unlock(&ctx->rt->stats_lock);
    }
  }
  ctx_free(ctx, key);
  return st;
}

/* Makes sure the entries `need` of f are loaded (compiling them on first need). */
static LoomStatus need_entries(LoomContext *ctx, RtGpu *g, int device, RtGpuDev *dev, const RtGpuFn *cf,
                               const KernelIr *k, uint32_t need, Diag *d) {
  if (!(need & ~__atomic_load_n(&cf->loaded, __ATOMIC_ACQUIRE))) return LOOM_OK;
  RtGpuFn *f = (RtGpuFn *)cf; /* groups are added under gpu_lock; see struct RtGpuFn */
  pthread_mutex_lock(&ctx->rt->gpu_lock);
  LoomStatus st = LOOM_OK;
  if (need & ~f->loaded) st = add_group(ctx, g, device, dev, f, k, need & ~f->loaded, d);
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  return st;
}

LoomStatus rt_gpu_kernel(LoomContext *ctx, int device, const KernelIr *k, int64_t npoints, const RtGpuFn **out,
                         Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  StrBuf kb;
  sb_init(&kb, ctx);
  sb_printf(&kb, "loom %s\n%s\n", LOOM_VERSION_STRING, dev->target->describe(dev->target));
  ir_print_kernel_key(k, &kb);
  char *key = sb_take(&kb);
  if (!key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  uint64_t h = ir_hash_bytes(key, strlen(key), 0x9e3779b97f4a7c15ull);
  RtGpuFn **bucket = &dev->fns[h % GPU_BUCKETS];
  pthread_mutex_lock(&ctx->rt->gpu_lock); /* one compile at a time per context: simple and safe */
  for (RtGpuFn *f = *bucket; f; f = f->next)
    if (f->hash == h && !strcmp(f->key, key)) {
      pthread_mutex_unlock(&ctx->rt->gpu_lock);
      ctx_free(ctx, key);
      *out = f;
      pthread_mutex_lock(&ctx->rt->stats_lock);
      ctx->rt->stats.cache_hits++;
      pthread_mutex_unlock(&ctx->rt->stats_lock);
      return LOOM_OK;
    }
  RtGpuFn *f = ctx_calloc(ctx, 1, sizeof *f);
  if (!f) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel entry");
  } else {
    f->key = key;
    f->hash = h;
    if (k->nkeep == k->ndim) { /* vecw, vec, else main (see CgCompileOptions.entries) */
      int lanes = cg_gpu_vec_lanes(k);
      st = add_group(ctx, g, device, dev, f, k, lanes > 0 && npoints >= 0 && npoints % lanes == 0 ? CG_ENTRY_VECW : CG_ENTRY_VEC, d);
    } else { /* a reduction: its launch facts now, each entry when a launch first needs it */
      CgCompiled c;
      CgCompileOptions opt = {.entries = 0};
      st = dev->target->compile(dev->target, k, &opt, &c, d);
      if (st == LOOM_OK) {
        f->meta = meta_of(c.gpu);
        dev->target->release(dev->target, &c);
      }
    }
  }
  if (st != LOOM_OK) {
    pthread_mutex_unlock(&ctx->rt->gpu_lock);
    if (f)
      for (int m = 0; m < f->nmodules; m++) rt_cuda_module_unload(g->cu, f->modules[m]);
    ctx_free(ctx, f);
    ctx_free(ctx, key);
    return st;
  }
  f->next = *bucket;
  *bucket = f;
  pthread_mutex_unlock(&ctx->rt->gpu_lock);
  *out = f;
  return LOOM_OK;
}

/* ---- launch --------------------------------------------------------------------------------------------- */
static uint32_t grid_of(int64_t items, int64_t per_block, int64_t cap) {
  int64_t g = (items + per_block - 1) / per_block;
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return (uint32_t)g;
}

/* Launches entry e of f (its handle read once: a tier-up may replace it concurrently). */
static LoomStatus launch(RtGpu *g, RtCuStream *s, const RtGpuFn *f, int e, uint32_t grid, uint32_t block,
                         uint64_t *words, Diag *d) {
  RtCuKernel k = {.handle = __atomic_load_n(&f->kern[e].handle, __ATOMIC_ACQUIRE), .device = f->kern[e].device};
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return rt_cuda_launch(g->cu, &k, gr, bl, 0, s, params, d);
}

/* Whether the vector entries (lanes points per load) may run: every buffer contiguous along the last
 * dim has a base that is a multiple of lanes * its dtype size and O strides that are multiples of
 * lanes (so every row starts aligned). */
static bool vec_aligned(const KernelIr *ir, const uint64_t *words, int lanes) {
  int nd = ir->ndim, nb = ir->nbuf;
  if (lanes < 2 || nd < 1) return false;
  for (int b = 0; b < nb; b++) {
    if (ir->bufs[b].layout[nd - 1] != KL_ONE) continue;
    uint64_t align = (uint64_t)lanes * loom_dtype_size((LoomDType)ir->bufs[b].dtype);
    if (align == 0 || words[nd + b] % align) return false;
    for (int dd = 0; dd < ir->nkeep; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

/* Launches kernel f on stream s. *sync_needed is set when a pool block was freed while work on a
 * user stream may still read it (the caller synchronizes that stream before returning). */
static LoomStatus launch_fn(LoomContext *ctx, RtGpu *g, int device, RtGpuDev *dev, RtCuStream *s, const RtGpuFn *f,
                            const KernelIr *ir, uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const GpuMeta *m = &f->meta;
  const uint32_t has = m->entries_all;
#define NEED(mask)                                                                 \
  do {                                                                             \
    LoomStatus need_st = need_entries(ctx, g, device, dev, f, ir, (mask), d);      \
    if (need_st != LOOM_OK) return need_st;                                        \
  } while (0)
  int nd = ir->ndim, nb = ir->nbuf;
  uint64_t *extra = words + nd + nb + nb * nd;
  extra[0] = 1;
  extra[1] = 0;
  const int64_t cap = (int64_t)1 << 30;
  if (m->strategy == CG_GPU_ELEMENTWISE) {
    bool vec = (has & CG_ENTRY_VEC) && m->vec_lanes > 0;
    for (int b = 0; vec && b < nb; b++) vec = words[nd + b] % (uint64_t)m->vec_align == 0;
    /* whole vectors: vecw, or vec when that is loaded already; else vec (it has the tail loop) */
    int e = !vec ? E_MAIN : no % m->vec_lanes ? E_VEC
                          : (has & CG_ENTRY_VECW) && !(__atomic_load_n(&f->loaded, __ATOMIC_ACQUIRE) & CG_ENTRY_VEC) ? E_VECW
                                                                                                                    : E_VEC;
    int64_t steps = vec ? no / m->vec_lanes : no;
    if (steps < 1) steps = 1;
    NEED(1u << e);
    /* one shape for every entry (from the first loaded), clamped to this entry's limit: entries of
     * one kernel may differ in registers (MAIN's index math, tier 0 against tier 1) */
    uint64_t cfg = __atomic_load_n(&f->elem_cfg, __ATOMIC_ACQUIRE);
    uint32_t block = (uint32_t)(cfg >> 32);
    int lim = __atomic_load_n(&f->elem_max_block[e], __ATOMIC_ACQUIRE);
    if (lim >= 32 && block > (uint32_t)lim) block = (uint32_t)lim;
    return launch(g, s, f, e, grid_of(steps, block, (int64_t)(uint32_t)cfg), block, words, d);
  }
  /* a row that fits in registers: one read of it (blockDim * cache_k >= nr; a warp for short rows) */
  /* (the threads a cached entry can launch with are known once it is loaded: registers) */
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHEDV) && m->cache_k > 0 && m->cache_lanes > 1 && nr > 0 &&
      nr % m->cache_lanes == 0 && nr <= 1024 * (int64_t)m->cache_k && vec_aligned(ir, words, m->cache_lanes)) {
    NEED(CG_ENTRY_CACHEDV);
    if (nr <= (int64_t)f->cachedv_max_block * m->cache_k) {
      int64_t bs = (nr + m->cache_k - 1) / m->cache_k;
      bs = (bs + 31) / 32 * 32;
      if (bs < 32) bs = 32;
      return launch(g, s, f, E_CACHEDV, grid_of(no, 1, cap), (uint32_t)bs, words, d);
    }
  }
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHED) && m->cache_k > 0 && nr > 0 &&
      nr <= 1024 * (int64_t)m->cache_k) {
    NEED(CG_ENTRY_CACHED);
    if (nr <= (int64_t)f->cached_max_block * m->cache_k) {
      int64_t bs = (nr + m->cache_k - 1) / m->cache_k;
      bs = (bs + 31) / 32 * 32;
      if (bs < 32) bs = 32;
      return launch(g, s, f, E_CACHED, grid_of(no, 1, cap), (uint32_t)bs, words, d);
    }
  }
  int64_t nparts = 1;
  /* 1-d full reduction with aligned contiguous loads: the vector part entry on a persistent grid.
   * Parts of 16K points (at most 16384 parts, sizes only: deterministic), many per resident block
   * so that the last round of parts leaves few SM slots idle; the block finish folds them. */
  bool partv = m->strategy == CG_GPU_ROW && no == 1 && (has & CG_ENTRY_PARTV) && (has & CG_ENTRY_FINISHB) &&
               nr >= 32768 && vec_aligned(ir, words, m->part_lanes);
  if (partv) {
    nparts = nr / 16384;
    if (nparts > 16384) nparts = 16384;
  } else if ((has & CG_ENTRY_PART) && nr > 0) {
    if (m->strategy == CG_GPU_ROW && no < 512 && nr >= 8192) {
      /* about 4 blocks per SM-slot's worth of work in total, each part >= 16K points (8 loads in
       * flight per thread); depends on the sizes only, so the bits do not change between runs */
      int64_t a = (2048 + no - 1) / no, b = (nr + 16383) / 16384;
      nparts = a < b ? a : b;
    } else if (m->strategy == CG_GPU_COL && no < 131072 && nr >= 64) {
      int64_t a = (262144 + no - 1) / no, b = nr / 32;
      nparts = a < b ? a : b;
      if (nparts > 1024) nparts = 1024;
    }
  }
  if (nparts <= 1) {
    NEED(CG_ENTRY_MAIN);
    if (m->strategy == CG_GPU_ROW) return launch(g, s, f, E_MAIN, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
    return launch(g, s, f, E_MAIN, grid_of(no, 256, cap), 256, words, d);
  }
  bool finishb = (has & CG_ENTRY_FINISHB) && no <= 2048 && nparts >= 64;
  NEED((partv ? CG_ENTRY_PARTV : CG_ENTRY_PART) | (finishb ? CG_ENTRY_FINISHB : CG_ENTRY_FINISH));
#undef NEED
  size_t bytes = (size_t)no * (size_t)nparts * (size_t)m->acc_size;
  uint64_t partials = 0;
  LoomStatus st = rt_cuda_pool_alloc(dev->pool, bytes, &partials, d);
  if (st != LOOM_OK) return st;
  extra[0] = (uint64_t)nparts;
  extra[1] = partials;
  if (partv) st = launch(g, s, f, E_PARTV, grid_of(nparts, 1, f->partv_grid_max), (uint32_t)m->block, words, d);
  else if (m->strategy == CG_GPU_ROW) st = launch(g, s, f, E_PART, grid_of(no * nparts, 1, cap), (uint32_t)m->block, words, d);
  else st = launch(g, s, f, E_PART, grid_of(no * nparts, 256, cap), 256, words, d);
  /* few O points with many parts: one block per O point folds them (fixed order and tree) */
  if (st == LOOM_OK && finishb) st = launch(g, s, f, E_FINISHB, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
  else if (st == LOOM_OK) st = launch(g, s, f, E_FINISH, grid_of(no, 256, cap), 256, words, d);
  /* on the legacy stream the free is ordered before any later use; a user stream must finish first */
  if (st == LOOM_OK && s) st = rt_cuda_stream_synchronize(g->cu, s, d);
  Diag dd = {.status = LOOM_OK};
  rt_cuda_pool_free(dev->pool, partials, &dd);
  return st;
}

LoomStatus rt_gpu_run_schedule(LoomContext *ctx, int device, const IrGraph *gr, const Schedule *s,
                               const RtGpuFn *const *pinned, void *const *out_data, int32_t nouts, Diag *d) {
  RtGpu *g = NULL;
  RtGpuDev *dev = NULL;
  LoomStatus st = get_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  if (st != LOOM_OK) return st;
  RtCuStream *stream = rt_gpu_current_stream(ctx, device); /* NULL: the legacy default stream */
  uint64_t *temps = NULL, launched = 0, temp_bytes = 0;
  uint64_t *words = NULL;
  if (s->ntemp > 0) {
    temps = ctx_calloc(ctx, (size_t)s->ntemp, sizeof *temps);
    if (!temps) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: temporary table");
    for (int32_t i = 0; i < s->ntemp && st == LOOM_OK; i++) {
      size_t bytes = (size_t)s->temps[i].nelem * loom_dtype_size((LoomDType)s->temps[i].dtype);
      st = rt_cuda_pool_alloc(dev->pool, bytes, &temps[i], d);
      temp_bytes += bytes;
    }
  }
  for (int32_t ki = 0; ki < s->nkernel && st == LOOM_OK; ki++) {
    const SchedKernel *sk = &s->kernels[ki];
    const KernelIr *ir = sk->ir;
    int64_t no = 1, nr = 1;
    for (int32_t i = 0; i < ir->ndim; i++) {
      if (i < ir->nkeep) no *= sk->shape[i];
      else nr *= sk->shape[i];
    }
    if (no == 0 || (ir->nkeep == ir->ndim && nr == 0)) continue;
    if (ir->nkeep == ir->ndim) no *= nr;
    const RtGpuFn *f = pinned ? pinned[ki] : NULL;
    if (!f) st = rt_gpu_kernel(ctx, device, ir, no, &f, d);
    if (st != LOOM_OK) break;
    int nd = ir->ndim, nb = ir->nbuf;
    size_t nwords = (size_t)(nd + nb + nb * nd + CG_GPU_EXTRA);
    if ((int)nwords != f->meta.nwords) {
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s expects %d parameter words, not %zu", ir->name,
                      f->meta.nwords, nwords);
      break;
    }
    uint64_t stackw[256];
    words = nwords <= 256 ? stackw : ctx_calloc(ctx, nwords, sizeof *words);
    if (!words) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel parameters");
      break;
    }
    for (int i = 0; i < nd; i++) words[i] = (uint64_t)sk->shape[i];
    for (int b = 0; b < nb; b++) {
      const SchedBinding *bd = &sk->bind[b];
      uint64_t base = 0;
      if (bd->kind == SB_INPUT && bd->index >= 0 && bd->index < gr->ninputs) base = (uint64_t)(uintptr_t)gr->inputs[bd->index].data;
      else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = (uint64_t)(uintptr_t)out_data[bd->index];
      else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s binds buffer %d to a missing array", ir->name, b);
      words[nd + b] = base + (uint64_t)(bd->offset * (int64_t)loom_dtype_size((LoomDType)ir->bufs[b].dtype));
      for (int i = 0; i < nd; i++) words[nd + nb + b * nd + i] = (uint64_t)bd->strides[i];
    }
    for (size_t i = (size_t)(nd + nb + nb * nd); i < nwords; i++) words[i] = 0;
    if (st == LOOM_OK) st = launch_fn(ctx, g, device, dev, stream, f, ir, words, no, nr, d);
    if (words != stackw) ctx_free(ctx, words);
    words = NULL;
    if (st == LOOM_OK) launched++;
  }
  if (temps) {
    Diag dd = {.status = LOOM_OK};
    if (stream) rt_cuda_stream_synchronize(g->cu, stream, &dd); /* see runtime.h: the pool is stream-blind */
    for (int32_t i = 0; i < s->ntemp; i++)
      if (temps[i]) rt_cuda_pool_free(dev->pool, temps[i], &dd);
    ctx_free(ctx, temps);
  }
  pthread_mutex_lock(&ctx->rt->stats_lock);
  ctx->rt->stats.kernels_launched += launched;
  ctx->rt->stats.last_eval_kernels = launched;
  if (temp_bytes > ctx->rt->stats.temp_bytes_peak) ctx->rt->stats.temp_bytes_peak = temp_bytes;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  return st;
}

const char *rt_gpu_fn_strategy(const RtGpuFn *f) {
  static const char *const names[3] = {"elementwise", "row", "col"};
  return f && f->meta.strategy >= 0 && f->meta.strategy < 3 ? names[f->meta.strategy] : "?";
}
