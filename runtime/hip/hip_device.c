/* hip_device.c: the AMD device of the runtime (device.h's table for LOOM_DEVICE_HIP), the twin of
 * runtime/cuda/cuda_device.c: lazy runtime loading, devices, the per-device caching pools, copies, streams
 * and events, and AMDGPU assembly dumps. The kernel table's values are made in hip_kernels.c and
 * launched by hip_launch.c.
 *
 * Laziness. Nothing here runs until an AMD array (or loom_device_count(HIP)) is seen: then libamdhip64 is
 * opened once per context (rt_amd_get; a failure, such as "no AMD device", is remembered and reported
 * again with the same message), and a device is set up on first use (its facts, memory pool, an AMDGPU
 * target for its chip, its kernel table).
 *
 * Launch order. All work of a context on a device goes to the calling thread's current stream of that
 * device (loom_stream_use), else the device's null stream, in order; results are visible to the host after
 * loom_device_synchronize or a copy to the host (synchronous). Temporaries go back to the pool once their
 * kernels are enqueued (work on a user stream that frees pool blocks synchronizes it first: settle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_rt.h"

static RtDeviceSlot *slot_of(LoomContext *ctx) { return rt_device_slot(ctx, LOOM_DEVICE_HIP); }

/* ---- the runtime and the devices ----------------------------------------------------------------------- */
LoomStatus rt_amd_get(LoomContext *ctx, HipRt **out, Diag *d) {
  RtState *rt = ctx->rt;
  RtDeviceSlot *slot = slot_of(ctx);
  pthread_mutex_lock(&rt->device_lock);
  LoomStatus st = LOOM_OK;
  if (!slot->state && slot->fail.status == LOOM_OK) {
    HipRt *g = ctx_calloc(ctx, 1, sizeof *g);
    if (!g) {
      pthread_mutex_unlock(&rt->device_lock);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: HIP runtime state");
    }
    st = rt_hip_load(ctx, &g->hip, &slot->fail);
    if (st == LOOM_OK) {
      g->ndev = rt_hip_device_count(g->hip);
      g->devs = ctx_calloc(ctx, (size_t)(g->ndev > 0 ? g->ndev : 1), sizeof *g->devs);
      if (!g->devs) {
        rt_hip_unload(g->hip);
        st = diag_error(&slot->fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: HIP device table");
      }
    }
    if (st == LOOM_OK) slot->state = g;
    else ctx_free(ctx, g);
  }
  if (!slot->state) {
    st = slot->fail.status != LOOM_OK ? slot->fail.status : LOOM_ERR_UNSUPPORTED;
    diag_error(d, st, "%s", slot->fail.msg[0] ? slot->fail.msg : "no HIP runtime / AMD device");
  }
  *out = slot->state;
  pthread_mutex_unlock(&rt->device_lock);
  return st;
}

static LoomStatus hip_open(LoomContext *ctx, Diag *d) {
  HipRt *g = NULL;
  return rt_amd_get(ctx, &g, d);
}

static int hip_count(LoomContext *ctx) {
  HipRt *g = NULL;
  Diag d = {.status = LOOM_OK};
  return rt_amd_get(ctx, &g, &d) == LOOM_OK ? g->ndev : 0;
}

static LoomStatus pool_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  return rt_hip_mem_alloc(user, device, size, out, d);
}
static void pool_free(void *user, int device, uint64_t ptr) {
  Diag d = {.status = LOOM_OK};
  rt_hip_mem_free(user, device, ptr, &d);
}

/* The device, set up on first use. Called with the device lock held. */
static LoomStatus device_locked(LoomContext *ctx, HipRt *g, int index, HipDev **out, Diag *d) {
  if (index < 0 || index >= g->ndev)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMD device %d does not exist (this machine has %d)", index, g->ndev);
  HipDev *dev = &g->devs[index];
  if (!dev->ready) {
    dev->index = index;
    dev->ctx = ctx;
    dev->g = g;
    LoomStatus st = rt_hip_device_info(g->hip, index, &dev->info, d);
    RtDevAllocator a = {.alloc = pool_alloc, .free = pool_free, .user = g->hip};
    if (st == LOOM_OK) st = rt_cuda_pool_create(ctx, index, &a, &dev->pool, d);
    if (st == LOOM_OK) st = cg_amdgpu_target_create(ctx, dev->info.arch, 0, &dev->target, d);
    if (st == LOOM_OK) st = rt_amd_kernels_create(dev, d);
    if (st != LOOM_OK) {
      if (dev->target) dev->target->destroy(dev->target);
      dev->target = NULL;
      rt_cuda_pool_destroy(dev->pool);
      dev->pool = NULL;
      return st;
    }
    dev->ready = true;
  }
  *out = dev;
  return LOOM_OK;
}

LoomStatus rt_amd_device(LoomContext *ctx, int index, HipRt **gout, HipDev **out, Diag *d) {
  HipRt *g = NULL;
  LoomStatus st = rt_amd_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&ctx->rt->device_lock);
  st = device_locked(ctx, g, index, out, d);
  pthread_mutex_unlock(&ctx->rt->device_lock);
  *gout = g;
  return st;
}

static void hip_close(LoomContext *ctx) {
  RtDeviceSlot *slot = slot_of(ctx);
  HipRt *g = slot ? slot->state : NULL;
  if (!g) return;
  for (int i = 0; i < g->ndev; i++) {
    HipDev *dev = &g->devs[i];
    if (!dev->ready) continue;
    Diag d = {.status = LOOM_OK};
    rt_hip_device_synchronize(g->hip, i, &d);
    rt_cache_destroy(dev->kernels); /* unloads the modules */
    rt_cuda_pool_destroy(dev->pool);
    if (dev->target) dev->target->destroy(dev->target);
  }
  for (HipCurStream *c = g->cur, *next; c; c = next) {
    next = c->next;
    ctx_free(ctx, c);
  }
  rt_disk_cache_close(g->disk);
  rt_hip_unload(g->hip);
  ctx_free(ctx, g->devs);
  ctx_free(ctx, g);
  slot->state = NULL;
}

static LoomStatus hip_synchronize(LoomContext *ctx, int device, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  return st == LOOM_OK ? rt_hip_device_synchronize(g->hip, device, d) : st;
}

/* ---- memory --------------------------------------------------------------------------------------------- */
static LoomStatus hip_alloc(LoomContext *ctx, int device, size_t size, void **out, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  uint64_t p = 0;
  if (st == LOOM_OK) st = rt_cuda_pool_alloc(dev->pool, size, &p, d);
  *out = (void *)(uintptr_t)p;
  return st;
}

static LoomStatus hip_free(LoomContext *ctx, int device, void *ptr, size_t size, Diag *d) {
  if (!ptr) return LOOM_OK;
  HipRt *g = NULL;
  HipDev *dev = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  return st == LOOM_OK ? rt_cuda_pool_free(dev->pool, (uint64_t)(uintptr_t)ptr, d) : st;
}

/* Copies n bytes between any two of host / AMD device memory (synchronous for the caller). */
static LoomStatus hip_copy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                           int si, size_t n, Diag *d) {
  if (n == 0) return LOOM_OK;
  if (dk == LOOM_DEVICE_HOST && sk == LOOM_DEVICE_HOST) {
    memmove(dst, src, n);
    return LOOM_OK;
  }
  if ((dk != LOOM_DEVICE_HOST && dk != LOOM_DEVICE_HIP) || (sk != LOOM_DEVICE_HOST && sk != LOOM_DEVICE_HIP))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "copies between an AMD device and another GPU kind go through the host");
  HipRt *g = NULL;
  HipDev *dev = NULL;
  int device = dk == LOOM_DEVICE_HIP ? di : si;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  RtHipStream *s = rt_amd_current_stream(ctx, device); /* NULL: the null stream */
  if (dk == LOOM_DEVICE_HIP && sk == LOOM_DEVICE_HIP && di != si) {
    /* between two GPUs: the source's current stream done first, then hipMemcpyPeer (ordered with both
     * null streams), synchronous for the caller */
    HipDev *sdev = NULL;
    st = rt_amd_device(ctx, si, &g, &sdev, d);
    RtHipStream *ss = st == LOOM_OK ? rt_amd_current_stream(ctx, si) : NULL;
    if (st == LOOM_OK && ss) st = rt_hip_stream_synchronize(g->hip, ss, d);
    if (st == LOOM_OK && s) st = rt_hip_stream_synchronize(g->hip, s, d);
    if (st == LOOM_OK) st = rt_hip_memcpy_peer(g->hip, di, (uint64_t)(uintptr_t)dst, si, (uint64_t)(uintptr_t)src, n, d);
    if (st == LOOM_OK) st = rt_hip_device_synchronize(g->hip, di, d);
    return st;
  }
  if (dk == LOOM_DEVICE_HIP && sk == LOOM_DEVICE_HIP)
    st = rt_hip_memcpy_d2d(g->hip, device, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, n, s, d);
  else if (dk == LOOM_DEVICE_HIP)
    st = rt_hip_memcpy_h2d(g->hip, device, (uint64_t)(uintptr_t)dst, src, n, s, d);
  else
    st = rt_hip_memcpy_d2h(g->hip, device, dst, (uint64_t)(uintptr_t)src, n, s, d);
  if (st == LOOM_OK && s) st = rt_hip_stream_synchronize(g->hip, s, d);
  else if (st == LOOM_OK && dk == LOOM_DEVICE_HIP && sk == LOOM_DEVICE_HIP) st = rt_hip_device_synchronize(g->hip, device, d);
  return st;
}

static LoomStatus hip_pool_stats(LoomContext *ctx, int device, RtPoolStats *out, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
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

static LoomStatus hip_pool_trim(LoomContext *ctx, int device, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_hip_device_synchronize(g->hip, device, d); /* enqueued work may read cached blocks */
  if (st == LOOM_OK) rt_cuda_pool_free_all_blocks(dev->pool);
  return st;
}

/* ---- streams and events --------------------------------------------------------------------------------- */
static LoomStatus hip_stream_create(LoomContext *ctx, int device, RtStream **out, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  *out = NULL;
  RtHipStream *s = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_hip_stream_create(g->hip, device, &s, d);
  *out = (RtStream *)s;
  return st;
}

static void hip_stream_destroy(LoomContext *ctx, RtStream *rs) {
  RtDeviceSlot *slot = slot_of(ctx);
  HipRt *g = slot ? slot->state : NULL;
  RtHipStream *s = (RtHipStream *)rs;
  if (!g || !s) return;
  pthread_mutex_lock(&ctx->rt->device_lock);
  for (HipCurStream **pc = &g->cur; *pc;) {
    HipCurStream *c = *pc;
    if (c->s == s) {
      *pc = c->next;
      ctx_free(ctx, c);
    } else {
      pc = &c->next;
    }
  }
  pthread_mutex_unlock(&ctx->rt->device_lock);
  rt_hip_stream_destroy(g->hip, s);
}

static LoomStatus hip_stream_synchronize(LoomContext *ctx, RtStream *s, Diag *d) {
  HipRt *g = NULL;
  LoomStatus st = rt_amd_get(ctx, &g, d);
  return st == LOOM_OK ? rt_hip_stream_synchronize(g->hip, (RtHipStream *)s, d) : st;
}

static LoomStatus hip_stream_use(LoomContext *ctx, int device, RtStream *rs, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  RtHipStream *s = (RtHipStream *)rs;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  if (s && rt_hip_stream_device(s) != device)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_use: the stream belongs to AMD device %d, not %d",
                      rt_hip_stream_device(s), device);
  pthread_t self = pthread_self();
  pthread_mutex_lock(&ctx->rt->device_lock);
  HipCurStream **pc = &g->cur;
  while (*pc && !((*pc)->device == device && pthread_equal((*pc)->tid, self))) pc = &(*pc)->next;
  if (*pc && s) {
    (*pc)->s = s;
  } else if (*pc) { /* back to the null stream */
    HipCurStream *c = *pc;
    *pc = c->next;
    ctx_free(ctx, c);
  } else if (s) {
    HipCurStream *c = ctx_calloc(ctx, 1, sizeof *c);
    if (!c) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: current stream table");
    } else {
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

RtHipStream *rt_amd_current_stream(LoomContext *ctx, int device) {
  RtDeviceSlot *slot = slot_of(ctx);
  HipRt *g = slot ? slot->state : NULL;
  if (!g) return NULL;
  pthread_t self = pthread_self();
  RtHipStream *s = NULL;
  pthread_mutex_lock(&ctx->rt->device_lock);
  for (HipCurStream *c = g->cur; c && !s; c = c->next)
    if (c->device == device && pthread_equal(c->tid, self)) s = c->s;
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return s;
}

static RtStream *hip_current_stream(LoomContext *ctx, int device) { return (RtStream *)rt_amd_current_stream(ctx, device); }
static void *hip_stream_handle(RtStream *s) { return s ? rt_hip_stream_raw((RtHipStream *)s) : NULL; }

static LoomStatus hip_event_create(LoomContext *ctx, int device, RtEvent **out, Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  *out = NULL;
  RtHipEvent *e = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = rt_hip_event_create(g->hip, device, &e, d);
  *out = (RtEvent *)e;
  return st;
}

static void hip_event_destroy(LoomContext *ctx, RtEvent *e) {
  RtDeviceSlot *slot = slot_of(ctx);
  HipRt *g = slot ? slot->state : NULL;
  if (g && e) rt_hip_event_destroy(g->hip, (RtHipEvent *)e);
}

static LoomStatus hip_event_record(LoomContext *ctx, int device, RtEvent *e, RtStream *rs, Diag *d) {
  HipRt *g = NULL;
  LoomStatus st = rt_amd_get(ctx, &g, d);
  if (st != LOOM_OK) return st;
  RtHipStream *s = rs ? (RtHipStream *)rs : rt_amd_current_stream(ctx, device);
  return rt_hip_event_record(g->hip, (RtHipEvent *)e, s, d);
}

static LoomStatus hip_event_synchronize(LoomContext *ctx, RtEvent *e, Diag *d) {
  HipRt *g = NULL;
  LoomStatus st = rt_amd_get(ctx, &g, d);
  return st == LOOM_OK ? rt_hip_event_synchronize(g->hip, (RtHipEvent *)e, d) : st;
}

static LoomStatus hip_event_elapsed(LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d) {
  HipRt *g = NULL;
  LoomStatus st = rt_amd_get(ctx, &g, d);
  return st == LOOM_OK ? rt_hip_event_elapsed(g->hip, (RtHipEvent *)a, (RtHipEvent *)b, ms, d) : st;
}

/* ---- kernels -------------------------------------------------------------------------------------------- */
/* An AMD RtKernel is the kernel table's HipFn, pinned. */
static LoomStatus hip_prepare(LoomContext *ctx, int device, const KernelIr *k, int64_t npoints, const RtKernel **out,
                              Diag *d) {
  HipRt *g = NULL;
  HipDev *dev = NULL;
  *out = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  const void *v = NULL;
  if (st == LOOM_OK) st = rt_cache_acquire_value(dev->kernels, k, false, npoints, &v, NULL, d);
  *out = v;
  return st;
}

static void hip_unpin(LoomContext *ctx, int device, const RtKernel *k) {
  RtDeviceSlot *slot = slot_of(ctx);
  HipRt *g = slot ? slot->state : NULL;
  if (g && device >= 0 && device < g->ndev && g->devs[device].ready) rt_cache_release(g->devs[device].kernels, k);
}

static void hip_settle(LoomContext *ctx, int device) {
  RtHipStream *cur = rt_amd_current_stream(ctx, device);
  RtDeviceSlot *slot = slot_of(ctx);
  Diag dd = {.status = LOOM_OK};
  if (cur && slot->state) rt_hip_stream_synchronize(((HipRt *)slot->state)->hip, cur, &dd);
}

/* The AMDGPU assembly of kernels k[0..n) for the reference chip, gfx942 (MI300; LOOM_DUMP_AMDGPU_CHIP picks
 * another), compiled here without a GPU: each code object is still linked (and kept in
 * LOOM_DUMP_AMDGPU_DIR when set). */
static LoomStatus hip_dump_code(LoomContext *ctx, int32_t n, const KernelIr *const *k, StrBuf *sb, Diag *d) {
  const char *chip = getenv("LOOM_DUMP_AMDGPU_CHIP");
  if (!chip || !*chip) chip = "gfx942";
  CgTarget *t = NULL;
  LoomStatus st = cg_amdgpu_target_create(ctx, chip, 0, &t, d);
  if (st == LOOM_OK) cg_amdgpu_target_set_dump(t, getenv("LOOM_DUMP_AMDGPU_DIR"));
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    st = t->compile(t, k[i], NULL, &cc, d);
    if (st != LOOM_OK) break;
    if (cc.gpu && (ctx->dump_flags & IR_DUMP_TIME))
      sb_printf(sb, "; time %s lower %.3f ocml %.3f opt %.3f code object %.3f ms\n", k[i]->name, cc.gpu->phase_ms[0],
                cc.gpu->phase_ms[1], cc.gpu->phase_ms[2], cc.gpu->phase_ms[3]);
    const char *why = NULL, *linker = cg_amdgpu_linker(t, &why);
    if (cc.gpu && cc.gpu->code)
      sb_printf(sb, "; kernel %s (%s, linked by %s%s%s)\n%s", k[i]->name, chip, linker, why && *why ? ": " : "",
                why ? why : "", cc.gpu->code);
    else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the AMD target gave no assembly for %s", k[i]->name);
    t->release(t, &cc);
  }
  if (t) t->destroy(t);
  return st;
}

const RtDevice rt_hip_device = {
    .name = "hip",
    .kind = LOOM_DEVICE_HIP,
    .binary = CG_BINARY_AMDGPU,
    .open = hip_open,
    .count = hip_count,
    .close = hip_close,
    .synchronize = hip_synchronize,
    .alloc = hip_alloc,
    .free = hip_free,
    .pool_stats = hip_pool_stats,
    .pool_trim = hip_pool_trim,
    .copy = hip_copy,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_synchronize = hip_stream_synchronize,
    .stream_use = hip_stream_use,
    .current_stream = hip_current_stream,
    .stream_handle = hip_stream_handle,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_synchronize = hip_event_synchronize,
    .event_elapsed = hip_event_elapsed,
    .prepare = hip_prepare,
    .unpin = hip_unpin,
    .run_schedule = rt_amd_run_schedule,
    .write_strided = NULL, /* a copy kernel */
    .settle = hip_settle,
    .dump_code = hip_dump_code,
    .raw_formats = RT_AMD_RAW_FORMATS,
    .raw_sniff = rt_amd_raw_sniff,
    .raw_create = rt_amd_raw_create,
    .raw_destroy = rt_amd_raw_destroy,
    .raw_text = rt_amd_raw_text,
    .raw_load = rt_amd_raw_load,
    .raw_launch = rt_amd_raw_launch,
};
