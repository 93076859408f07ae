/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_device.c: the shared GPU device (gpu_driver.h) over a driver table: lazy driver loading, devices,
 * the per-device caching pools, copies, streams and events. The kernel table's values are made in
 * gpu_kernels.c and launched by gpu_launch.c.
 *
 * Laziness. Nothing here runs until an array of the driver's kind (or loom_device_count) is seen: then
 * the driver is loaded once per context (rt_gpu_get; a failure is remembered and reported again with the
 * same message), and a device is set up on first use (primary context retained, memory pool, the
 * driver's target for its chip, its kernel table).
 *
 * Launch order. All work of a context on a device goes to the calling thread's current stream of that
 * device (loom_stream_use), else the device's default stream, in order: loom_eval returns once its
 * kernels are enqueued; results are visible to later Loom calls at once (same stream) and to the host
 * after loom_device_synchronize or a copy to the host (loom_array_copy, synchronous). Temporaries and
 * split-reduction partials are returned to the pool right after their kernels are enqueued and nothing
 * waits: with a driver that has fence_create and event_query the pool is stream-ordered (gpu_pool.h: a
 * block goes back to its own stream at once, to another after an event); a stream-blind pool (a driver
 * without them) hands blocks out again at once, so work on a user stream that frees pool blocks
 * synchronizes that stream first (settle). User streams are blocking (CuPy's
 * default): the default stream and a user stream wait for each other's earlier work, so arrays cross
 * between them correctly (`with s: y = f(x)`, then `y.get()` on the default stream).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_rt.h"

static RtDeviceSlot *slot_of(const RtGpuDriver *drv, LoomContext *ctx) { return rt_device_slot(ctx, drv->kind); }

/* The state if the driver is loaded already (hooks that only undo or query). */
static GpuRt *state_of(const RtGpuDriver *drv, LoomContext *ctx) {
  RtDeviceSlot *slot = slot_of(drv, ctx);
  GpuRt *g = slot ? slot->state : NULL;
  return g && g->drv == drv ? g : NULL;
}

/* ---- the pool's allocator: the driver's memory ----------------------------------------------------------- */
static LoomStatus pool_raw_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  GpuRt *g = user;
  *out = 0;
  LoomStatus st = g->drv->set_current(g->handle, device, d);
  return st == LOOM_OK ? g->drv->mem_alloc(g->handle, device, size, out, d) : st;
}

/* The destroying hooks (mem_free, stream_destroy, event_destroy, module_unload) are called even when
 * set_current fails, so that no driver object is left behind. */
static void pool_raw_free(void *user, int device, uint64_t ptr) {
  GpuRt *g = user;
  Diag d = {.status = LOOM_OK};
  if (!ptr) return;
  g->drv->set_current(g->handle, device, &d);
  g->drv->mem_free(g->handle, device, ptr);
}

/* The pool's stream hooks (gpu_pool.h "Stream order"), for a driver with fence_create and event_query. */
static void *pool_cur_stream(void *user, int device) {
  GpuStream *s = rt_gpu_cur_stream(user, device);
  return s && !s->borrowed ? s->h : NULL; /* rt_gpu_pool_orders: a borrowed stream's blocks are the default's */
}

bool rt_gpu_pool_orders(const GpuDev *dev, const GpuStream *s) {
  return dev && dev->pool && rt_gpu_pool_stream_ordered(dev->pool) && !(s && s->borrowed);
}
static LoomStatus pool_event_create(void *user, int device, void **out, Diag *d) {
  GpuRt *g = user;
  LoomStatus st = g->drv->set_current(g->handle, device, d);
  return st == LOOM_OK ? g->drv->fence_create(g->handle, device, out, d) : st;
}
static void pool_event_destroy(void *user, int device, void *event) {
  GpuRt *g = user;
  Diag d = {.status = LOOM_OK};
  g->drv->set_current(g->handle, device, &d);
  g->drv->event_destroy(g->handle, device, event);
}
static LoomStatus pool_event_record(void *user, int device, void *event, void *stream, Diag *d) {
  GpuRt *g = user;
  LoomStatus st = g->drv->set_current(g->handle, device, d);
  return st == LOOM_OK ? g->drv->event_record(g->handle, device, event, stream, d) : st;
}
static int pool_event_done(void *user, int device, void *event) {
  GpuRt *g = user;
  Diag d = {.status = LOOM_OK};
  return g->drv->set_current(g->handle, device, &d) == LOOM_OK ? g->drv->event_query(g->handle, device, event) : 0;
}
static LoomStatus pool_synchronize(void *user, int device, Diag *d) {
  GpuRt *g = user;
  LoomStatus st = g->drv->set_current(g->handle, device, d);
  return st == LOOM_OK ? g->drv->synchronize(g->handle, device, d) : st;
}

/* ---- the driver and the devices ---------------------------------------------------------------------- */
LoomStatus rt_gpu_get(const RtGpuDriver *drv, LoomContext *ctx, GpuRt **out, Diag *d) {
  RtState *rt = ctx->rt;
  RtDeviceSlot *slot = slot_of(drv, ctx);
  pthread_mutex_lock(&rt->device_lock);
  LoomStatus st = LOOM_OK;
  if (!slot->state && slot->fail.status == LOOM_OK) {
    GpuRt *g = ctx_calloc(ctx, 1, sizeof *g);
    if (!g) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %s runtime state", drv->name);
      pthread_mutex_unlock(&rt->device_lock);
      return st;
    }
    g->drv = drv;
    g->ctx = ctx;
    g->jit.final_level = -1;
    st = drv->load(ctx, &g->handle, &g->ndev, &g->jit, &slot->fail);
    if (st == LOOM_OK) {
      rt_gpu_tiers_init(g);
      g->devs = ctx_calloc(ctx, (size_t)(g->ndev > 0 ? g->ndev : 1), sizeof *g->devs);
      if (!g->devs) {
        rt_gpu_tiers_close(g);
        drv->unload(g->handle);
        st = diag_error(&slot->fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %s device table", drv->name);
      }
    }
    if (st == LOOM_OK) __atomic_store_n(&slot->state, (void *)g, __ATOMIC_RELEASE); /* read unlocked: rt_gpu_device */
    else ctx_free(ctx, g);
  }
  if (!slot->state) {
    st = slot->fail.status != LOOM_OK ? slot->fail.status : LOOM_ERR_UNSUPPORTED;
    diag_error(d, st, "%s", slot->fail.msg[0] ? slot->fail.msg : "no GPU driver/device");
    /* no driver or no device (UNSUPPORTED) is remembered: later calls answer at once; any other failure
     * (out of memory, a driver error while loading) may pass, so the next call loads again */
    if (st != LOOM_ERR_UNSUPPORTED) slot->fail = (Diag){.status = LOOM_OK};
  } else if (((GpuRt *)slot->state)->drv != drv) {
    st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the %s device's slot holds another driver's state",
                    drv->name);
    pthread_mutex_unlock(&rt->device_lock);
    *out = NULL;
    return st;
  }
  *out = slot->state;
  pthread_mutex_unlock(&rt->device_lock);
  return st;
}

LoomStatus rt_gpu_open(const RtGpuDriver *drv, LoomContext *ctx, Diag *d) {
  GpuRt *g = NULL;
  return rt_gpu_get(drv, ctx, &g, d);
}

int rt_gpu_count(const RtGpuDriver *drv, LoomContext *ctx) {
  GpuRt *g = NULL;
  Diag d = {.status = LOOM_OK};
  return rt_gpu_get(drv, ctx, &g, &d) == LOOM_OK ? g->ndev : 0;
}

/* The device, set up on first use. Called with the device lock held. */
static LoomStatus device_locked(LoomContext *ctx, GpuRt *g, int index, GpuDev **out, Diag *d) {
  const RtGpuDriver *drv = g->drv;
  if (index < 0 || index >= g->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s device %d does not exist (this machine has %d)", drv->name,
                      index, g->ndev);
  GpuDev *dev = &g->devs[index];
  if (!dev->ready) {
    dev->index = index;
    dev->ctx = ctx;
    dev->g = g;
    LoomStatus st = drv->device_info(g->handle, index, &dev->info, d);
    if (st == LOOM_OK) st = drv->retain(g->handle, index, d);
    if (st != LOOM_OK) return st;
    RtDevAllocator a = {pool_raw_alloc, pool_raw_free, g};
    st = rt_gpu_pool_create(ctx, index, &a, &dev->pool, d);
    if (st == LOOM_OK && drv->fence_create && drv->event_query) { /* else stream-blind: see settle */
      RtPoolStreamHooks h = {pool_cur_stream, pool_event_create, pool_event_destroy, pool_event_record, pool_event_done,
                             pool_synchronize};
      st = rt_gpu_pool_order_streams(dev->pool, &h, d);
    }
    if (st == LOOM_OK) st = drv->target_create(ctx, &dev->info, &dev->target, d);
    if (st == LOOM_OK) st = rt_gpu_kernels_create(dev, d);
    if (st != LOOM_OK) {
      if (dev->target) dev->target->destroy(dev->target);
      dev->target = NULL;
      rt_gpu_pool_destroy(dev->pool);
      dev->pool = NULL;
      drv->release(g->handle, index);
      return st;
    }
    __atomic_store_n(&dev->ready, true, __ATOMIC_RELEASE); /* read unlocked: rt_gpu_device */
  }
  *out = dev;
  return LOOM_OK;
}

LoomStatus rt_gpu_device(const RtGpuDriver *drv, LoomContext *ctx, int index, GpuRt **gout, GpuDev **out, Diag *d) {
  /* A device set up already (every call after the first: allocations, frees, each run) is found without the
   * device lock, twice per call before: the driver's state and a device's `ready` are published with release
   * stores once they are complete and never change until the context is destroyed. */
  RtDeviceSlot *slot = slot_of(drv, ctx);
  GpuRt *ready = slot ? (GpuRt *)__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) : NULL;
  if (ready && ready->drv == drv && index >= 0 && index < ready->ndev &&
      __atomic_load_n(&ready->devs[index].ready, __ATOMIC_ACQUIRE)) {
    *gout = ready;
    *out = &ready->devs[index];
    return LOOM_OK;
  }
  GpuRt *g = NULL;
  LoomStatus st = rt_gpu_get(drv, ctx, &g, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&ctx->rt->device_lock);
  st = device_locked(ctx, g, index, out, d);
  pthread_mutex_unlock(&ctx->rt->device_lock);
  *gout = g;
  return st;
}

void rt_gpu_close(const RtGpuDriver *drv, LoomContext *ctx) {
  RtDeviceSlot *slot = slot_of(drv, ctx);
  GpuRt *g = state_of(drv, ctx);
  if (!g) return;
  /* the tier-up queue is finished first (its tier-ups also fill the disk cache) */
  rt_gpu_tiers_close(g);
  for (int i = 0; i < g->ndev; i++) {
    GpuDev *dev = &g->devs[i];
    if (!dev->ready) continue;
    Diag d = {.status = LOOM_OK};
    if (drv->set_current(g->handle, i, &d) == LOOM_OK) drv->synchronize(g->handle, i, &d);
    rt_cache_destroy(dev->kernels); /* unloads the modules */
    rt_gpu_pool_destroy(dev->pool);
    if (dev->target) dev->target->destroy(dev->target);
    drv->release(g->handle, i);
  }
  for (CurStream *c = g->cur, *next; c; c = next) {
    next = c->next;
    ctx_free(ctx, c);
  }
  rt_gpu_disk_close(ctx, g);
  drv->unload(g->handle);
  ctx_free(ctx, g->devs);
  ctx_free(ctx, g);
  slot->state = NULL;
}

/* The device, set up, and made current on the calling thread. */
static LoomStatus device_current(const RtGpuDriver *drv, LoomContext *ctx, int index, GpuRt **g, GpuDev **dev,
                                 Diag *d) {
  LoomStatus st = rt_gpu_device(drv, ctx, index, g, dev, d);
  return st == LOOM_OK ? drv->set_current((*g)->handle, index, d) : st;
}

LoomStatus rt_gpu_make_current(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  return device_current(drv, ctx, index, &g, &dev, d);
}

LoomStatus rt_gpu_synchronize(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  return st == LOOM_OK ? drv->synchronize(g->handle, index, d) : st;
}

/* ---- memory ---------------------------------------------------------------------------------------- */
LoomStatus rt_gpu_alloc(const RtGpuDriver *drv, LoomContext *ctx, int index, size_t size, void **out, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  *out = NULL;
  uint64_t p = 0;
  /* no set_current: a block from the pool needs no driver call, and the pool's raw allocation makes the
   * device current itself (pool_raw_alloc) */
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  if (st == LOOM_OK) st = rt_gpu_pool_alloc(dev->pool, size, &p, d);
  *out = (void *)(uintptr_t)p;
  return st;
}

LoomStatus rt_gpu_free(const RtGpuDriver *drv, LoomContext *ctx, int index, void *ptr, size_t size, Diag *d) {
  if (!ptr) return LOOM_OK;
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  return st == LOOM_OK ? rt_gpu_pool_free(dev->pool, (uint64_t)(uintptr_t)ptr, d) : st;
}

LoomStatus rt_gpu_device_pool_stats(const RtGpuDriver *drv, LoomContext *ctx, int index, RtPoolStats *out, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  RtGpuPoolStats ps;
  rt_gpu_pool_stats(dev->pool, &ps);
  memset(out, 0, sizeof *out);
  out->used_bytes = ps.used_bytes;
  out->cached_bytes = ps.cached_bytes;
  out->cached_blocks = ps.cached_blocks;
  out->total_bytes = ps.total_bytes;
  out->peak_bytes = ps.peak_bytes;
  out->allocs = ps.allocs;
  out->reuses = ps.reuses;
  return LOOM_OK;
}

LoomStatus rt_gpu_device_pool_trim(const RtGpuDriver *drv, LoomContext *ctx, int index, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  /* cached blocks may still be read by enqueued work (temporaries are returned once enqueued) */
  if (st == LOOM_OK) st = drv->synchronize(g->handle, index, d);
  if (st == LOOM_OK) rt_gpu_pool_free_all_blocks(dev->pool);
  return st;
}

/* Copies n bytes between any two of host / device memory of the driver's kind (synchronous). */
LoomStatus rt_gpu_copy(const RtGpuDriver *drv, LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                       LoomDeviceKind sk, int si, size_t n, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (dk == LOOM_DEVICE_HOST && sk == LOOM_DEVICE_HOST) {
    memmove(dst, src, n);
    return LOOM_OK;
  }
  if (!dst || !src) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "copy of %zu bytes: NULL pointer", n);
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  int device = dk == drv->kind ? di : si;
  LoomStatus st = device_current(drv, ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuStream *cs = rt_gpu_cur_stream(g, device); /* NULL: the default stream */
  void *s = cs ? cs->h : NULL;
  uint64_t dp = (uint64_t)(uintptr_t)dst, sp = (uint64_t)(uintptr_t)src;
  if (dk == drv->kind && sk == drv->kind && di != si) {
    /* between two GPUs: the source's work on its current stream done first, then the peer copy (ordered
     * with both default streams), then the destination's current stream waits for nothing of ours: the
     * copy is synchronous for the caller */
    GpuDev *sdev = NULL;
    st = rt_gpu_device(drv, ctx, si, &g, &sdev, d);
    GpuStream *ss = st == LOOM_OK ? rt_gpu_cur_stream(g, si) : NULL;
    if (st == LOOM_OK && ss && (st = drv->set_current(g->handle, si, d)) == LOOM_OK)
      st = drv->stream_synchronize(g->handle, si, ss->h, d);
    if (st == LOOM_OK && s && (st = drv->set_current(g->handle, di, d)) == LOOM_OK)
      st = drv->stream_synchronize(g->handle, di, s, d);
    if (st == LOOM_OK) st = drv->set_current(g->handle, di, d);
    if (st == LOOM_OK) st = drv->copy_peer(g->handle, di, dp, si, sp, n, d);
    if (st == LOOM_OK) st = drv->synchronize(g->handle, di, d);
    return st;
  }
  if (dk == drv->kind && sk == drv->kind) st = drv->copy_d2d(g->handle, device, dp, sp, n, s, d);
  else if (dk == drv->kind) st = drv->copy_h2d(g->handle, device, dp, src, n, s, d);
  else st = drv->copy_d2h(g->handle, device, dst, sp, n, s, d);
  if (st == LOOM_OK && (dk != drv->kind || sk != drv->kind)) rt_count_host_copy(ctx, dk != drv->kind, n);
  /* synchronous for the caller: wait for the copy (and what was before it on that stream) */
  if (st == LOOM_OK && s) st = drv->stream_synchronize(g->handle, device, s, d);
  else if (st == LOOM_OK && dk == drv->kind && sk == drv->kind) st = drv->synchronize(g->handle, device, d);
  return st;
}

/* The copy enqueued on stream rs (NULL: the current stream) without waiting for it; between two GPUs the
 * synchronous peer copy. */
LoomStatus rt_gpu_copy_async(const RtGpuDriver *drv, LoomContext *ctx, void *dst, LoomDeviceKind dk, int di,
                             const void *src, LoomDeviceKind sk, int si, size_t n, RtStream *rs, Diag *d) {
  if (n == 0) return LOOM_OK;
  if ((dk == LOOM_DEVICE_HOST && sk == LOOM_DEVICE_HOST) || (dk == drv->kind && sk == drv->kind && di != si))
    return rt_gpu_copy(drv, ctx, dst, dk, di, src, sk, si, n, d);
  if (!dst || !src) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "copy of %zu bytes: NULL pointer", n);
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  int device = dk == drv->kind ? di : si;
  LoomStatus st = device_current(drv, ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuStream *cs = rs ? (GpuStream *)rs : rt_gpu_cur_stream(g, device);
  if (cs && cs->device != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "copy on a stream of %s device %d, but the memory is on device %d",
                      drv->name, cs->device, device);
  void *s = cs ? cs->h : NULL;
  uint64_t dp = (uint64_t)(uintptr_t)dst, sp = (uint64_t)(uintptr_t)src;
  if (dk == drv->kind && sk == drv->kind) return drv->copy_d2d(g->handle, device, dp, sp, n, s, d);
  st = dk == drv->kind ? drv->copy_h2d(g->handle, device, dp, src, n, s, d) : drv->copy_d2h(g->handle, device, dst, sp, n, s, d);
  if (st == LOOM_OK) rt_count_host_copy(ctx, dk != drv->kind, n);
  return st;
}

LoomStatus rt_gpu_fill_bytes(const RtGpuDriver *drv, LoomContext *ctx, void *dst, int index, uint8_t value, size_t n,
                             RtStream *rs, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (!dst) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fill of %zu bytes: NULL pointer", n);
  if (!drv->fill_bytes) return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s memory cannot be filled here", drv->name);
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuStream *cs = rs ? (GpuStream *)rs : rt_gpu_cur_stream(g, index);
  if (cs && cs->device != index)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fill on a stream of %s device %d, but the memory is on device %d",
                      drv->name, cs->device, index);
  return drv->fill_bytes(g->handle, index, (uint64_t)(uintptr_t)dst, value, n, cs ? cs->h : NULL, d);
}

LoomStatus rt_gpu_device_pool_limit(const RtGpuDriver *drv, LoomContext *ctx, int index, bool set, uint64_t *limit,
                                    Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  if (set) rt_gpu_pool_set_limit(dev->pool, *limit);
  *limit = rt_gpu_pool_limit(dev->pool);
  return LOOM_OK;
}

/* ---- streams and events ------------------------------------------------------------------------------ */
LoomStatus rt_gpu_stream_create(const RtGpuDriver *drv, LoomContext *ctx, int index, RtStream **out, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuStream *s = ctx_calloc(ctx, 1, sizeof *s);
  if (!s) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a %s stream", drv->name);
  s->device = index;
  st = drv->stream_create(g->handle, index, &s->h, d);
  if (st != LOOM_OK) {
    ctx_free(ctx, s);
    return st;
  }
  *out = (RtStream *)s;
  return LOOM_OK;
}

LoomStatus rt_gpu_stream_wrap(const RtGpuDriver *drv, LoomContext *ctx, int index, void *handle, RtStream **out,
                              Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuStream *s = ctx_calloc(ctx, 1, sizeof *s);
  if (!s) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory wrapping a %s stream", drv->name);
  s->device = index;
  s->h = handle;
  s->borrowed = true;
  *out = (RtStream *)s;
  return LOOM_OK;
}

void rt_gpu_stream_destroy(const RtGpuDriver *drv, LoomContext *ctx, RtStream *rs) {
  GpuRt *g = state_of(drv, ctx);
  GpuStream *s = (GpuStream *)rs;
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
  Diag d = {.status = LOOM_OK};
  GpuDev *dev = s->device >= 0 && s->device < g->ndev && __atomic_load_n(&g->devs[s->device].ready, __ATOMIC_ACQUIRE)
                    ? &g->devs[s->device] : NULL;
  drv->set_current(g->handle, s->device, &d);
  if (dev && rt_gpu_pool_orders(dev, s)) {
    /* the pool's blocks of this stream: idle once it is done, so a later stream with the same handle
     * never reuses one early (if neither wait works, they keep their events and stream). A borrowed
     * stream owns no block, and its handle may already be gone: it is not touched. */
    if (drv->stream_synchronize(g->handle, s->device, s->h, &d) == LOOM_OK ||
        drv->synchronize(g->handle, s->device, &d) == LOOM_OK)
      rt_gpu_pool_stream_gone(dev->pool, s->h);
  }
  if (!s->borrowed) drv->stream_destroy(g->handle, s->device, s->h);
  ctx_free(ctx, s);
}

LoomStatus rt_gpu_stream_synchronize(const RtGpuDriver *drv, LoomContext *ctx, RtStream *rs, Diag *d) {
  GpuStream *s = (GpuStream *)rs;
  if (!s) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "stream synchronize: the stream is NULL");
  GpuRt *g = NULL;
  LoomStatus st = rt_gpu_get(drv, ctx, &g, d);
  if (st == LOOM_OK) st = drv->set_current(g->handle, s->device, d);
  return st == LOOM_OK ? drv->stream_synchronize(g->handle, s->device, s->h, d) : st;
}

LoomStatus rt_gpu_stream_use(const RtGpuDriver *drv, LoomContext *ctx, int index, RtStream *rs, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  GpuStream *s = (GpuStream *)rs;
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  if (s && s->device != index)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_use: the stream belongs to %s device %d, not %d",
                      drv->name, s->device, index);
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->rt->device_lock);
  CurStream **pc = &g->cur;
  while (*pc && !((*pc)->device == index && pthread_equal((*pc)->tid, self))) pc = &(*pc)->next;
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
      c->device = index;
      c->s = s;
      c->next = g->cur;
      g->cur = c;
    }
  }
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return st;
}

GpuStream *rt_gpu_cur_stream(GpuRt *g, int device) {
  if (!g) return NULL;
  pthread_t self = pthread_self();
  GpuStream *s = NULL;
  pthread_mutex_lock(&g->ctx->rt->device_lock);
  for (CurStream *c = g->cur; c; c = c->next)
    if (c->device == device && pthread_equal(c->tid, self)) {
      s = c->s;
      break;
    }
  pthread_mutex_unlock(&g->ctx->rt->device_lock);
  return s;
}

RtStream *rt_gpu_current_stream(const RtGpuDriver *drv, LoomContext *ctx, int index) {
  return (RtStream *)rt_gpu_cur_stream(state_of(drv, ctx), index);
}

void *rt_gpu_stream_handle(RtStream *s) { return s ? ((GpuStream *)s)->h : NULL; }

LoomStatus rt_gpu_event_create(const RtGpuDriver *drv, LoomContext *ctx, int index, RtEvent **out, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = device_current(drv, ctx, index, &g, &dev, d);
  if (st != LOOM_OK) return st;
  GpuEvent *e = ctx_calloc(ctx, 1, sizeof *e);
  if (!e) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory creating a %s event", drv->name);
  e->device = index;
  st = drv->event_create(g->handle, index, &e->h, d);
  if (st != LOOM_OK) {
    ctx_free(ctx, e);
    return st;
  }
  *out = (RtEvent *)e;
  return LOOM_OK;
}

void rt_gpu_event_destroy(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *re) {
  GpuRt *g = state_of(drv, ctx);
  GpuEvent *e = (GpuEvent *)re;
  if (!g || !e) return;
  Diag d = {.status = LOOM_OK};
  drv->set_current(g->handle, e->device, &d);
  drv->event_destroy(g->handle, e->device, e->h);
  ctx_free(ctx, e);
}

LoomStatus rt_gpu_event_record(const RtGpuDriver *drv, LoomContext *ctx, int index, RtEvent *re, RtStream *rs,
                               Diag *d) {
  GpuEvent *e = (GpuEvent *)re;
  if (!e) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "event record: the event is NULL");
  GpuRt *g = NULL;
  LoomStatus st = rt_gpu_get(drv, ctx, &g, d);
  if (st != LOOM_OK) return st;
  GpuStream *s = rs ? (GpuStream *)rs : rt_gpu_cur_stream(g, index);
  if (s && s->device != e->device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "a stream of %s device %d was used for device %d: create one on device %d", drv->name,
                      s->device, e->device, e->device);
  st = drv->set_current(g->handle, e->device, d);
  return st == LOOM_OK ? drv->event_record(g->handle, e->device, e->h, s ? s->h : NULL, d) : st;
}

LoomStatus rt_gpu_event_synchronize(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *re, Diag *d) {
  GpuEvent *e = (GpuEvent *)re;
  if (!e) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "event synchronize: the event is NULL");
  GpuRt *g = NULL;
  LoomStatus st = rt_gpu_get(drv, ctx, &g, d);
  if (st == LOOM_OK) st = drv->set_current(g->handle, e->device, d);
  return st == LOOM_OK ? drv->event_synchronize(g->handle, e->device, e->h, d) : st;
}

LoomStatus rt_gpu_event_elapsed(const RtGpuDriver *drv, LoomContext *ctx, RtEvent *ra, RtEvent *rb, float *ms,
                                Diag *d) {
  GpuEvent *a = (GpuEvent *)ra, *b = (GpuEvent *)rb;
  if (!a || !b || !ms) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "event elapsed: NULL argument");
  if (a->device != b->device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "events of devices %d and %d cannot be compared: time events of one device", a->device,
                      b->device);
  GpuRt *g = NULL;
  LoomStatus st = rt_gpu_get(drv, ctx, &g, d);
  if (st == LOOM_OK) st = drv->set_current(g->handle, a->device, d);
  return st == LOOM_OK ? drv->event_elapsed(g->handle, a->device, a->h, b->h, ms, d) : st;
}

/* ---- kernels -------------------------------------------------------------------------------------------- */
/* A GPU RtKernel is the kernel table's GpuFn (loaded entries and launch facts), pinned. */
LoomStatus rt_gpu_prepare(const RtGpuDriver *drv, LoomContext *ctx, int index, const KernelIr *k, int64_t npoints,
                          const RtKernel **out, Diag *d) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_gpu_device(drv, ctx, index, &g, &dev, d);
  const void *v = NULL;
  if (st == LOOM_OK) st = rt_cache_acquire_value(dev->kernels, k, false, npoints, &v, NULL, d);
  *out = v;
  return st;
}

void rt_gpu_unpin(const RtGpuDriver *drv, LoomContext *ctx, int index, const RtKernel *k) {
  GpuRt *g = state_of(drv, ctx);
  if (g && index >= 0 && index < g->ndev && g->devs[index].ready) rt_cache_release(g->devs[index].kernels, k);
}

/* Work on a user stream may still read pool blocks being freed: with a stream-blind pool, finish it first
 * (a stream-ordered pool needs nothing: a block goes to another stream only after its event). */
void rt_gpu_settle(const RtGpuDriver *drv, LoomContext *ctx, int index) {
  GpuRt *g = state_of(drv, ctx);
  if (!g || index < 0 || index >= g->ndev) return;
  GpuStream *cur = rt_gpu_cur_stream(g, index);
  if (g->devs[index].ready && rt_gpu_pool_orders(&g->devs[index], cur)) return;
  Diag d = {.status = LOOM_OK};
  if (cur && drv->set_current(g->handle, index, &d) == LOOM_OK)
    drv->stream_synchronize(g->handle, index, cur->h, &d);
}
