/* cuda_device.c: the CUDA device of the runtime (device.h's table for LOOM_DEVICE_CUDA): lazy driver
 * loading, devices, the per-device caching pools, copies, streams and events, and PTX dumps. The kernel
 * table's values are made in cuda_kernels.c and launched by cuda_launch.c.
 *
 * Laziness. Nothing here runs until a CUDA array (or loom_device_count(CUDA)) is seen: then the
 * driver is dlopen'ed once per context (rt_cu_get; a failure is remembered and reported again with
 * the same message), and a device is set up on first use (primary context retained, memory pool,
 * an NVPTX target for its compute capability, its kernel table).
 *
 * Launch order. All work of a context on a device goes to the calling thread's current stream of that
 * device (loom_stream_use), else the device's legacy default stream, in order: loom_eval returns once
 * its kernels are enqueued; results are visible to later Loom calls at once (same stream) and to the
 * host after loom_device_synchronize or a copy to the host (loom_array_copy, synchronous).
 * Temporaries and split-reduction partials are returned to the pool right after their kernels are
 * enqueued: the pool hands them out again only to work ordered after them on the legacy stream; work
 * on a user stream that frees pool blocks synchronizes that stream first (settle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cuda/cuda_rt.h"


static RtDeviceSlot *slot_of(LoomContext *ctx) { return rt_device_slot(ctx, LOOM_DEVICE_CUDA); }

/* ---- the driver and the devices ---------------------------------------------------------------------- */
LoomStatus rt_cu_get(LoomContext *ctx, CuRt **out, Diag *d) {
  RtState *rt = ctx->rt;
  RtDeviceSlot *slot = slot_of(ctx);
  pthread_mutex_lock(&rt->device_lock);
  LoomStatus st = LOOM_OK;
  if (!slot->state && slot->fail.status == LOOM_OK) {
    CuRt *g = ctx_calloc(ctx, 1, sizeof *g);
    if (!g) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA runtime state");
      pthread_mutex_unlock(&rt->device_lock);
      return st;
    }
    st = rt_cuda_load(ctx, &g->cu, &slot->fail);
    rt_cu_tiers_init(g);
    if (st == LOOM_OK) {
      g->ndev = rt_cuda_device_count(g->cu);
      g->devs = ctx_calloc(ctx, (size_t)(g->ndev > 0 ? g->ndev : 1), sizeof *g->devs);
      if (!g->devs) {
        rt_cuda_unload(g->cu);
        st = diag_error(&slot->fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA device table");
      }
    }
    if (st == LOOM_OK) slot->state = g;
    else ctx_free(ctx, g);
  }
  if (!slot->state) {
    st = slot->fail.status != LOOM_OK ? slot->fail.status : LOOM_ERR_UNSUPPORTED;
    diag_error(d, st, "%s", slot->fail.msg[0] ? slot->fail.msg : "no CUDA driver/device");
  }
  *out = slot->state;
  pthread_mutex_unlock(&rt->device_lock);
  return st;
}

static LoomStatus cu_open(LoomContext *ctx, Diag *d) {
  CuRt *g = NULL;
  return rt_cu_get(ctx, &g, d);
}

static int cu_count(LoomContext *ctx) {
  CuRt *g = NULL;
  Diag d = {.status = LOOM_OK};
  return rt_cu_get(ctx, &g, &d) == LOOM_OK ? g->ndev : 0;
}

/* The device, set up on first use. Called with the device lock held. */
static LoomStatus device_locked(LoomContext *ctx, CuRt *g, int index, CuDev **out, Diag *d) {
  if (index < 0 || index >= g->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "CUDA device %d does not exist (this machine has %d)", index, g->ndev);
  CuDev *dev = &g->devs[index];
  if (!dev->ready) {
    dev->index = index;
    dev->ctx = ctx;
    dev->g = g;
    LoomStatus st = rt_cuda_device_info(g->cu, index, &dev->info, d);
    if (st == LOOM_OK) st = rt_cuda_device_retain(g->cu, index, d);
    if (st != LOOM_OK) return st;
    RtDevAllocator a = rt_cuda_device_allocator(g->cu);
    st = rt_cuda_pool_create(ctx, index, &a, &dev->pool, d);
    if (st == LOOM_OK) st = cg_nvptx_target_create(ctx, dev->info.cc_major, dev->info.cc_minor, &dev->target, d);
    if (st == LOOM_OK) st = rt_cu_kernels_create(dev, d);
    if (st != LOOM_OK) {
      if (dev->target) dev->target->destroy(dev->target);
      dev->target = NULL;
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

LoomStatus rt_cu_device(LoomContext *ctx, int index, CuRt **gout, CuDev **out, Diag *d) {
  CuRt *g = NULL;
  LoomStatus st = rt_cu_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&ctx->rt->device_lock);
  st = device_locked(ctx, g, index, out, d);
  pthread_mutex_unlock(&ctx->rt->device_lock);
  *gout = g;
  return st;
}

static void cu_close(LoomContext *ctx) {
  RtDeviceSlot *slot = slot_of(ctx);
  CuRt *g = slot ? slot->state : NULL;
  if (!g) return;
  /* the tier-up queue is finished first (its tier-ups also fill the disk cache) */
  rt_cu_tiers_close(g);
  for (int i = 0; i < g->ndev; i++) {
    CuDev *dev = &g->devs[i];
    if (!dev->ready) continue;
    Diag d = {.status = LOOM_OK};
    rt_cuda_set_current(g->cu, i, &d);
    rt_cuda_device_synchronize(g->cu, i, &d);
    rt_cache_destroy(dev->kernels); /* unloads the modules */
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
  slot->state = NULL;
}

static LoomStatus cu_synchronize(LoomContext *ctx, int device, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(g->cu, device, d);
  return st;
}

/* ---- memory ---------------------------------------------------------------------------------------- */
static LoomStatus cu_alloc(LoomContext *ctx, int device, size_t size, void **out, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  uint64_t p = 0;
  st = rt_cuda_set_current(g->cu, device, d);
  if (st == LOOM_OK) st = rt_cuda_pool_alloc(dev->pool, size, &p, d);
  *out = (void *)(uintptr_t)p;
  return st;
}

static LoomStatus cu_free(LoomContext *ctx, int device, void *ptr, size_t size, Diag *d) {
  if (!ptr) return LOOM_OK;
  CuRt *g = NULL;
  CuDev *dev = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  return rt_cuda_pool_free(dev->pool, (uint64_t)(uintptr_t)ptr, d);
}

/* Copies n bytes between any two of host / CUDA device memory (synchronous). */
static LoomStatus cu_copy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                          int si, size_t n, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (dk == LOOM_DEVICE_HOST && sk == LOOM_DEVICE_HOST) {
    memmove(dst, src, n);
    return LOOM_OK;
  }
  CuRt *g = NULL;
  CuDev *dev = NULL;
  int device = dk == LOOM_DEVICE_CUDA ? di : si;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  if (st != LOOM_OK) return st;
  RtCuStream *s = rt_cu_current_stream(ctx, device); /* NULL: the legacy default stream */
  if (dk == LOOM_DEVICE_CUDA && sk == LOOM_DEVICE_CUDA && di != si) {
    /* between two GPUs: the source's work on its current stream done first, then cuMemcpyPeer (ordered
     * with both legacy streams), then the destination's current stream waits for nothing of ours:
     * the copy is synchronous for the caller */
    CuDev *sdev = NULL;
    st = rt_cu_device(ctx, si, &g, &sdev, d);
    RtCuStream *ss = st == LOOM_OK ? rt_cu_current_stream(ctx, si) : NULL;
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

static LoomStatus cu_pool_stats(LoomContext *ctx, int device, RtPoolStats *out, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  RtCuPoolStats ps;
  rt_cuda_pool_stats(dev->pool, &ps);
  memset(out, 0, sizeof *out);
  out->used_bytes = ps.used_bytes;
  out->cached_bytes = ps.cached_bytes;
  out->total_bytes = ps.total_bytes;
  out->peak_bytes = ps.peak_bytes;
  out->allocs = ps.allocs;
  out->reuses = ps.reuses;
  return LOOM_OK;
}

static LoomStatus cu_pool_trim(LoomContext *ctx, int device, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(g->cu, device, d);
  /* cached blocks may still be read by enqueued work (temporaries are returned once enqueued) */
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(g->cu, device, d);
  if (st == LOOM_OK) rt_cuda_pool_free_all_blocks(dev->pool);
  return st;
}

/* ---- streams and events ------------------------------------------------------------------------------ */
/* A device's RtStream is the driver layer's RtCuStream, an RtEvent its RtCuEvent. */
static LoomStatus cu_stream_create(LoomContext *ctx, int device, RtStream **out, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  RtCuStream *s = NULL;
  if (st == LOOM_OK) st = rt_cuda_stream_create(g->cu, device, &s, d);
  *out = (RtStream *)s;
  return st;
}

static void cu_stream_destroy(LoomContext *ctx, RtStream *rs) {
  RtDeviceSlot *slot = slot_of(ctx);
  CuRt *g = slot ? slot->state : NULL;
  RtCuStream *s = (RtCuStream *)rs;
  if (!g || !s) return;
  pthread_mutex_lock(&ctx->rt->device_lock);
  for (CurStream **pc = &g->cur; *pc;) {
    CurStream *c = *pc;
    if (c->s == s) {
      *pc = c->next;
      ctx_free(ctx, c);
    } else {
      pc = &c->next;
    }
  }
  pthread_mutex_unlock(&ctx->rt->device_lock);
  rt_cuda_stream_destroy(g->cu, s);
}

static LoomStatus cu_stream_synchronize(LoomContext *ctx, RtStream *s, Diag *d) {
  CuRt *g = NULL;
  LoomStatus st = rt_cu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_stream_synchronize(g->cu, (RtCuStream *)s, d) : st;
}

static LoomStatus cu_stream_use(LoomContext *ctx, int device, RtStream *rs, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  RtCuStream *s = (RtCuStream *)rs;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  if (s && rt_cuda_stream_device(s) != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_use: the stream belongs to CUDA device %d, not %d",
                      rt_cuda_stream_device(s), device);
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->rt->device_lock);
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
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return st;
}

RtCuStream *rt_cu_current_stream(LoomContext *ctx, int device) {
  RtDeviceSlot *slot = slot_of(ctx);
  CuRt *g = slot ? slot->state : NULL;
  if (!g) return NULL;
  pthread_t self = pthread_self();
  RtCuStream *s = NULL;
  pthread_mutex_lock(&ctx->rt->device_lock);
  for (CurStream *c = g->cur; c; c = c->next)
    if (c->device == device && pthread_equal(c->tid, self)) {
      s = c->s;
      break;
    }
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return s;
}

static RtStream *cu_current_stream(LoomContext *ctx, int device) { return (RtStream *)rt_cu_current_stream(ctx, device); }

static void *cu_stream_handle(RtStream *s) { return s ? rt_cuda_stream_raw((RtCuStream *)s) : NULL; }

static LoomStatus cu_event_create(LoomContext *ctx, int device, RtEvent **out, Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  *out = NULL;
  RtCuEvent *e = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_cuda_event_create(g->cu, device, &e, d);
  *out = (RtEvent *)e;
  return st;
}

static void cu_event_destroy(LoomContext *ctx, RtEvent *e) {
  RtDeviceSlot *slot = slot_of(ctx);
  CuRt *g = slot ? slot->state : NULL;
  if (g && e) rt_cuda_event_destroy(g->cu, (RtCuEvent *)e);
}

static LoomStatus cu_event_record(LoomContext *ctx, int device, RtEvent *e, RtStream *rs, Diag *d) {
  CuRt *g = NULL;
  LoomStatus st = rt_cu_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  RtCuStream *s = rs ? (RtCuStream *)rs : rt_cu_current_stream(ctx, device);
  return rt_cuda_event_record(g->cu, (RtCuEvent *)e, s, d);
}

static LoomStatus cu_event_synchronize(LoomContext *ctx, RtEvent *e, Diag *d) {
  CuRt *g = NULL;
  LoomStatus st = rt_cu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_event_synchronize(g->cu, (RtCuEvent *)e, d) : st;
}

static LoomStatus cu_event_elapsed(LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d) {
  CuRt *g = NULL;
  LoomStatus st = rt_cu_get(ctx, &g, d);
  return st == LOOM_OK ? rt_cuda_event_elapsed(g->cu, (RtCuEvent *)a, (RtCuEvent *)b, ms, d) : st;
}

/* ---- kernels -------------------------------------------------------------------------------------------- */
/* A CUDA RtKernel is the kernel table's CuFn (loaded entries and launch facts), pinned. */
static LoomStatus cu_prepare(LoomContext *ctx, int device, const KernelIr *k, int64_t npoints, const RtKernel **out,
                             Diag *d) {
  CuRt *g = NULL;
  CuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_cu_device(ctx, device, &g, &dev, d);
  const void *v = NULL;
  if (st == LOOM_OK) st = rt_cache_acquire_value(dev->kernels, k, false, npoints, &v, NULL, d);
  *out = v;
  return st;
}

static void cu_unpin(LoomContext *ctx, int device, const RtKernel *k) {
  RtDeviceSlot *slot = slot_of(ctx);
  CuRt *g = slot ? slot->state : NULL;
  if (g && device >= 0 && device < g->ndev && g->devs[device].ready) rt_cache_release(g->devs[device].kernels, k);
}

/* Work on a user stream may still read pool blocks being freed: finish it first. */
static void cu_settle(LoomContext *ctx, int device) {
  RtCuStream *cur = rt_cu_current_stream(ctx, device);
  RtDeviceSlot *slot = slot_of(ctx);
  Diag dd = {.status = LOOM_OK};
  if (cur && slot->state) rt_cuda_stream_synchronize(((CuRt *)slot->state)->cu, cur, &dd);
}

/* The PTX of kernels k[0..n) for sm_90 (the H200's), compiled here: no GPU is needed. */
static LoomStatus cu_dump_code(LoomContext *ctx, int32_t n, const KernelIr *const *k, StrBuf *sb, Diag *d) {
  CgTarget *t = NULL;
  LoomStatus st = cg_nvptx_target_create(ctx, 9, 0, &t, d);
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    st = t->compile(t, k[i], NULL, &cc, d);
    if (st != LOOM_OK) break;
    if (cc.gpu && (ctx->dump_flags & IR_DUMP_TIME))
      sb_printf(sb, "// time %s lower %.3f libdevice %.3f opt %.3f ptx %.3f ms\n", k[i]->name, cc.gpu->phase_ms[0],
                cc.gpu->phase_ms[1], cc.gpu->phase_ms[2], cc.gpu->phase_ms[3]);
    if (cc.gpu && cc.gpu->code) sb_printf(sb, "// kernel %s (sm_90)\n%s", k[i]->name, cc.gpu->code);
    else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the NVIDIA target gave no PTX for %s", k[i]->name);
    t->release(t, &cc);
  }
  if (t) t->destroy(t);
  return st;
}

const RtDevice rt_cuda_device = {
    .name = "cuda",
    .kind = LOOM_DEVICE_CUDA,
    .binary = CG_BINARY_PTX,
    .open = cu_open,
    .count = cu_count,
    .close = cu_close,
    .synchronize = cu_synchronize,
    .alloc = cu_alloc,
    .free = cu_free,
    .pool_stats = cu_pool_stats,
    .pool_trim = cu_pool_trim,
    .copy = cu_copy,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_synchronize = cu_stream_synchronize,
    .stream_use = cu_stream_use,
    .current_stream = cu_current_stream,
    .stream_handle = cu_stream_handle,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_synchronize = cu_event_synchronize,
    .event_elapsed = cu_event_elapsed,
    .prepare = cu_prepare,
    .unpin = cu_unpin,
    .run_schedule = rt_cu_run_schedule,
    .write_strided = NULL, /* a copy kernel */
    .settle = cu_settle,
    .dump_code = cu_dump_code,
    .raw_formats = RT_CU_RAW_FORMATS,
    .raw_sniff = rt_cu_raw_sniff,
    .raw_create = rt_cu_raw_create,
    .raw_destroy = rt_cu_raw_destroy,
    .raw_text = rt_cu_raw_text,
    .raw_load = rt_cu_raw_load,
    .raw_launch = rt_cu_raw_launch,
};
