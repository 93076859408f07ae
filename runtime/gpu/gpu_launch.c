/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_launch.c: launching on GPU devices: the schedule runner of the shared GPU device (device.h's
 * run_schedule) and the part of a launch that may compile.
 *
 * Each kernel's parameter block (codegen.h: shape, bases, strides, then nparts and the partials) is
 * built on the stack and passed by value (the launch's one parameter). Which entry runs with which grid
 * and block is the compiler-free policy libloomrt shares (gpu_launch_policy.c); here its callbacks read
 * this device's kernel table (GpuFn, gpu_rt.h) and compile entries not loaded yet on first need
 * (rt_gpu_need_entries). Per schedule: the device and current-stream lookups (the device lock) and one
 * set_current; per launch: one driver call (launch), no lock.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/bundle_build.h"
#include "runtime/gpu/gpu_launch_policy.h"
#include "runtime/gpu/gpu_rt.h"

/* ---- launch: the shared policy (gpu_launch_policy.c) over this device's kernel table ---------------------- */
typedef struct FnLaunch {
  LoomContext *ctx;
  GpuRt *g;
  GpuDev *dev;
  void *stream; /* the driver's; NULL: the default stream */
  bool ordered; /* the pool orders this stream's blocks (rt_gpu_pool_orders): nothing to settle */
  const GpuFn *f;
  const KernelIr *ir;
} FnLaunch;

static uint32_t fn_loaded(void *user) { return __atomic_load_n(&((FnLaunch *)user)->f->loaded, __ATOMIC_ACQUIRE); }

/* Entries not loaded yet are compiled (or read from the disk cache) now. */
static LoomStatus fn_need(void *user, uint32_t mask, Diag *d) {
  FnLaunch *x = user;
  return rt_gpu_need_entries(x->ctx, x->g, x->dev, x->f, x->ir, mask, d);
}

static int fn_limit(void *user, int what, int e) {
  const GpuFn *f = ((FnLaunch *)user)->f;
  switch (what) {
  case RT_LIM_ELEM_BLOCK: {
    /* one shape for every entry (from the first loaded), clamped to this entry's limit: entries of one
     * kernel may differ in registers (MAIN's index math, tier 0 against tier 1) */
    uint32_t block = (uint32_t)(__atomic_load_n(&f->elem_cfg, __ATOMIC_ACQUIRE) >> 32);
    int lim = __atomic_load_n(&f->elem_max_block[e], __ATOMIC_ACQUIRE);
    if (lim >= f->meta.wave && block > (uint32_t)lim) block = (uint32_t)lim;
    return (int)block;
  }
  case RT_LIM_ELEM_GRID: {
    uint32_t grid = (uint32_t)__atomic_load_n(&f->elem_cfg, __ATOMIC_ACQUIRE);
    return grid > (uint32_t)INT32_MAX ? INT32_MAX : (int)grid;
  }
  case RT_LIM_CACHED_BLOCK: return f->cached_max_block;
  case RT_LIM_CACHEDV_BLOCK: return f->cachedv_max_block;
  case RT_LIM_FINISHB_BLOCK: return f->finishb_max_block;
  case RT_LIM_MAIN_BLOCK: return f->main_max_block;
  case RT_LIM_COL_PART_RESIDENT: return f->col_part_resident;
  default: return f->partv_grid_max;
  }
}

/* Launches entry e (its handle read once: a tier-up may replace it concurrently). */
static LoomStatus fn_launch(void *user, int e, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  FnLaunch *x = user;
  void *fn = __atomic_load_n(&x->f->fn[e], __ATOMIC_ACQUIRE);
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return x->g->drv->launch(x->g->handle, x->dev->index, fn, gr, bl, 0, x->stream, params, d);
}

/* Before split-reduction partials go back to the pool: a stream-ordered pool (gpu_pool.h) orders their
 * reuse itself, nothing waits; a stream-blind one hands them out at once, so a user stream must finish
 * first (on the legacy stream the free is ordered before any later use). */
static LoomStatus fn_settle(void *user, Diag *d) {
  FnLaunch *x = user;
  if (!x->stream || x->ordered) return LOOM_OK;
  return x->g->drv->stream_synchronize(x->g->handle, x->dev->index, x->stream, d);
}

/* Launches kernel f on stream cur (NULL: the default stream); the device is current. */
static LoomStatus launch_fn(LoomContext *ctx, GpuRt *g, GpuDev *dev, const GpuStream *cur, const GpuFn *f,
                            const KernelIr *ir, uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const GpuMeta *m = &f->meta;
  FnLaunch x = {.ctx = ctx, .g = g, .dev = dev, .stream = cur ? cur->h : NULL, .ordered = rt_gpu_pool_orders(dev, cur),
                .f = f, .ir = ir};
  uint32_t red = 0, map = 0;
  if (!cg_gpu_phase_split(ir, &red, &map)) red = map = 0;
  RtGpuLauncher L = {
      .ndim = ir->ndim, .nkeep = ir->nkeep, .nbuf = ir->nbuf, .bufs = ir->bufs,
      .scan = ir->nphase == 1 && ir->phases[0].kind == KP_SCAN, .split_reduce = red, .split_map = map,
      .strategy = (uint32_t)m->strategy, .block = (uint32_t)m->block, .vec_lanes = (uint32_t)m->vec_lanes,
      .vec_align = (uint32_t)m->vec_align, .acc_size = (uint32_t)m->acc_size, .cache_k = (uint32_t)m->cache_k,
      .cache_lanes = (uint32_t)m->cache_lanes, .part_lanes = (uint32_t)m->part_lanes, .entries = m->entries_all,
      .wave = m->wave, .vecw_when_vec_loaded = false, .pool = dev->pool, .user = &x, .loaded = fn_loaded,
      .need = fn_need, .limit = fn_limit, .launch = fn_launch, .settle = fn_settle};
  return rt_gpu_launch_policy(&L, words, no, nr, d);
}

LoomStatus rt_gpu_run_schedule(const RtGpuDriver *drv, LoomContext *ctx, int device, const RtRun *run, Diag *d) {
  const IrGraph *gr = run->graph;
  const Schedule *s = run->schedule;
  const RtKernel *const *pinned = run->pinned;
  void *const *out_data = run->out_data;
  int32_t nouts = run->nouts;
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  LoomStatus st = rt_gpu_device(drv, ctx, device, &g, &dev, d);
  if (st == LOOM_OK) st = drv->set_current(g->handle, device, d);
  if (st != LOOM_OK) return st;
  GpuStream *cur = rt_gpu_cur_stream(g, device);
  void *stream = cur ? cur->h : NULL; /* NULL: the default stream */
  uint64_t *temps = NULL, launched = 0, temp_bytes = run->extra_temp_bytes;
  uint64_t *words = NULL;
  if (s->ntemp > 0) {
    temps = ctx_calloc(ctx, (size_t)s->ntemp, sizeof *temps);
    if (!temps) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: temporary table");
    for (int32_t i = 0; i < s->ntemp && st == LOOM_OK; i++) {
      size_t bytes = (size_t)s->temps[i].nelem * loom_dtype_size((LoomDType)s->temps[i].dtype);
      st = rt_gpu_pool_alloc_on(dev->pool, bytes, stream, &temps[i], d);
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
    if (ir->call) { /* a library call (runtime/linalg_call.c: the device's RtLinalg), no compiled code */
      void *bases[16]; /* a, b, out, bias, c (ir.h: KCall) */
      if (ir->nbuf > 16) {
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: call kernel %s has %d buffers", ir->name, ir->nbuf);
        break;
      }
      for (int b = 0; b < ir->nbuf; b++) {
        const SchedBinding *bd = &sk->bind[b];
        uint64_t base = 0;
        void *in = NULL;
        if (bd->kind == SB_INPUT && rt_schedule_input(gr, run->input_map, run->ninput_map, bd->index, &in)) base = (uint64_t)(uintptr_t)in;
        else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
        else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = (uint64_t)(uintptr_t)out_data[bd->index];
        else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s binds buffer %d to a missing array", ir->name, b);
        bases[b] = (void *)(uintptr_t)(base + (uint64_t)(bd->offset * (int64_t)loom_dtype_size((LoomDType)ir->bufs[b].dtype)));
      }
      if (st == LOOM_OK) st = rt_run_call(ctx, rt_device(drv->kind), device, sk, bases, d);
      continue;
    }
    const GpuFn *f = pinned ? (const GpuFn *)pinned[ki] : NULL;
    const void *acquired = NULL;
    if (!f) {
      st = rt_cache_acquire_value(dev->kernels, ir, false, no, &acquired, NULL, d);
      f = acquired;
    }
    if (st != LOOM_OK) break;
    int nd = ir->ndim, nb = ir->nbuf;
    size_t nwords = (size_t)(nd + nb + nb * nd + CG_GPU_EXTRA + ir->nparam);
    if ((int)nwords != f->meta.nwords) {
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s expects %d parameter words, not %zu", ir->name,
                      f->meta.nwords, nwords);
      rt_cache_release(dev->kernels, acquired);
      break;
    }
    uint64_t stackw[256];
    words = nwords <= 256 ? stackw : ctx_calloc(ctx, nwords, sizeof *words);
    if (!words) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel parameters");
      rt_cache_release(dev->kernels, acquired);
      break;
    }
    for (int i = 0; i < nd; i++) words[i] = (uint64_t)sk->shape[i];
    for (int b = 0; b < nb; b++) {
      const SchedBinding *bd = &sk->bind[b];
      uint64_t base = 0;
      void *in = NULL;
      if (bd->kind == SB_INPUT && rt_schedule_input(gr, run->input_map, run->ninput_map, bd->index, &in)) base = (uint64_t)(uintptr_t)in;
      else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = (uint64_t)(uintptr_t)out_data[bd->index];
      else if (bd->kind == SB_INDEX) base = 0; /* no memory: the word is offset * 8 (ir.h) */
      else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s binds buffer %d to a missing array", ir->name, b);
      words[nd + b] = base + (uint64_t)(bd->offset * (int64_t)loom_dtype_size((LoomDType)ir->bufs[b].dtype));
      for (int i = 0; i < nd; i++) words[nd + nb + b * nd + i] = (uint64_t)bd->strides[i];
    }
    for (size_t i = (size_t)(nd + nb + nb * nd); i < nwords; i++) words[i] = 0;
    for (int p = 0; p < ir->nparam; p++) words[nd + nb + nb * nd + CG_GPU_EXTRA + p] = sk->params[p]; /* codegen.h */
    if (st == LOOM_OK) st = launch_fn(ctx, g, dev, cur, f, ir, words, no, nr, d);
    rt_cache_release(dev->kernels, acquired);
    if (words != stackw) ctx_free(ctx, words);
    words = NULL;
    if (st == LOOM_OK) launched++;
  }
  if (temps) {
    Diag dd = {.status = LOOM_OK};
    if (stream && !rt_gpu_pool_orders(dev, cur)) /* a stream-blind pool or a borrowed stream (device.h: settle) */
      drv->stream_synchronize(g->handle, device, stream, &dd);
    for (int32_t i = 0; i < s->ntemp; i++)
      if (temps[i]) rt_gpu_pool_free(dev->pool, temps[i], &dd);
    ctx_free(ctx, temps);
  }
  rt_count_launches(ctx, launched, temp_bytes);
  return st;
}

/* ---- specialization (device.h's specialize) --------------------------------------------------------------- */
/* Reductions whose walk the strides pick (x[:, ::2].sum(0)) get a copy that walks by columns where the kept
 * stride is the smaller (KernelIr.walk_cols, cg_gpu_walk_cols), short rows walked a thread a row also their
 * extent as a constant (KernelIr.row_extent, cg_gpu_row_extent); other reductions of short packed rows a copy
 * with their extent whose `flatv` entry reads them as flat vectors (cg_gpu_rowflat_extent); not while AOT bundles are in play (a bundle
 * holds the generic kernels, found by their key). Plans are keyed by strides (plan_cache.c), so a plan's
 * copies hold for every launch of it. */
LoomStatus rt_gpu_specialize(LoomContext *ctx, Arena *a, Schedule *s, Diag *d) {
  if (!s || rt_bundles_active(ctx)) return LOOM_OK;
  for (int32_t i = 0; i < s->nkernel; i++) {
    SchedKernel *sk = &s->kernels[i];
    if (!sk->ir) continue;
    bool cols = cg_gpu_walk_cols(sk->ir, sk->shape, sk->bind);
    int e = cols ? cg_gpu_row_extent(sk->ir, sk->shape, sk->bind) : cg_gpu_rowflat_extent(sk->ir, sk->shape, sk->bind);
    if (!cols && !e) continue;
    KernelIr *c = rt_specialize_copy(a, sk, d);
    if (!c) return d->status;
    c->walk_cols = cols;
    c->row_extent = e;
  }
  return LOOM_OK;
}
