/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_launch.c: launching on GPU devices: the launch shape of every entry of a kernel (GpuFn, gpu_rt.h) and
 * the schedule runner of the shared GPU device (device.h's run_schedule).
 *
 * Each kernel's parameter block (codegen.h: shape, bases, strides, then nparts and the partials) is
 * built on the stack and passed by value (the launch's one parameter). Elementwise kernels use the
 * occupancy's block size and a grid capped at the resident blocks (grid-stride loops), their 16-byte
 * vector entries when every base is aligned (the whole-vector one when the point count is a multiple of
 * the lanes). Reductions pick a cached-row entry when a row fits in registers, else split R into parts
 * by the sizes alone (the same bits on every run and every device; a multi-phase kernel one phase at a
 * time over the whole grid: codegen/gpu_phases.c) or run one block (ROW) or thread (COL) per output
 * point. Every block that runs a block reduction is a multiple of the kernel's wave
 * (32 on NVIDIA; 64 or 32 on AMD). Entries not loaded yet are compiled on first need
 * (rt_gpu_need_entries). Per schedule: the device and current-stream lookups (the device lock) and one
 * set_current; per launch: one driver call (launch), no lock.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/gpu/gpu_rt.h"

/* ---- launch --------------------------------------------------------------------------------------------- */
static uint32_t grid_of(int64_t items, int64_t per_block, int64_t cap) {
  int64_t g = (items + per_block - 1) / per_block;
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return (uint32_t)g;
}

/* Launches entry e of f (its handle read once: a tier-up may replace it concurrently). */
static LoomStatus launch(GpuRt *g, int device, void *stream, const GpuFn *f, int e, uint32_t grid, uint32_t block,
                         uint64_t *words, Diag *d) {
  void *fn = __atomic_load_n(&f->fn[e], __ATOMIC_ACQUIRE);
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return g->drv->launch(g->handle, device, fn, gr, bl, 0, stream, params, d);
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

/* Whether an elementwise kernel's vector entries may run on these words, beyond the bases' alignment:
 * for n-d kernels no vector crosses a row (the last dim a multiple of the lanes) and every buffer
 * contiguous along the last dim starts its rows aligned (its other strides multiples of the lanes).
 * loomrt_gpu.c's policy has the same test. */
static bool elem_vec_ok(const KernelIr *ir, const uint64_t *words, int lanes) {
  int nd = ir->ndim, nb = ir->nbuf;
  if (nd <= 1) return true;
  if ((int64_t)words[nd - 1] % lanes) return false;
  for (int b = 0; b < nb; b++) {
    if (ir->bufs[b].layout[nd - 1] != KL_ONE) continue;
    for (int dd = 0; dd < nd - 1; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

/* Launches kernel f on stream s (the driver's; NULL: the default stream); the device is current. A user
 * stream is synchronized before split-reduction partials go back to the pool (the pool is stream-blind). */
static LoomStatus launch_fn(LoomContext *ctx, GpuRt *g, GpuDev *dev, void *s, const GpuFn *f, const KernelIr *ir,
                            uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const GpuMeta *m = &f->meta;
  const uint32_t has = m->entries_all;
  const int wave = m->wave;
#define NEED(mask)                                                                 \
  do {                                                                             \
    LoomStatus need_st = rt_gpu_need_entries(ctx, g, dev, f, ir, (mask), d);       \
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
    vec = vec && elem_vec_ok(ir, words, m->vec_lanes);
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
    if (lim >= wave && block > (uint32_t)lim) block = (uint32_t)lim;
    return launch(g, dev->index, s, f, e, grid_of(steps, block, (int64_t)(uint32_t)cfg), block, words, d);
  }
  if (ir->nphase == 1 && ir->phases[0].kind == KP_SCAN) { /* scans (codegen/lower_scan.c) */
    int64_t np = 1; /* few long rows: about 1024 parts in all, each >= 16K points (sizes only) */
    if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_PART) && (has & CG_ENTRY_FINISHB) && no < 512 && nr >= 32768) {
      int64_t a = (1024 + no - 1) / no, b = nr / 16384;
      np = a < b ? a : b;
    }
    if (np <= 1) {
      NEED(CG_ENTRY_MAIN);
      int64_t bs = (nr + wave - 1) / wave * wave; /* short rows: a block of about their length (any multiple of the wave) */
      if (bs > m->block) bs = m->block;
      if (bs < wave) bs = wave;
      if (m->strategy == CG_GPU_ROW) return launch(g, dev->index, s, f, E_MAIN, grid_of(no, 1, cap), (uint32_t)bs, words, d);
      return launch(g, dev->index, s, f, E_MAIN, grid_of(no, 256, cap), 256, words, d);
    }
    NEED(CG_ENTRY_PART | CG_ENTRY_FINISHB);
    uint64_t partials = 0; /* each part's fold, then each part scanned from the fold of those before it */
    LoomStatus st = rt_gpu_pool_alloc(dev->pool, (size_t)no * (size_t)np * (size_t)m->acc_size, &partials, d);
    if (st != LOOM_OK) return st;
    extra[0] = (uint64_t)np;
    extra[1] = partials;
    st = launch(g, dev->index, s, f, E_PART, grid_of(no * np, 1, cap), (uint32_t)m->block, words, d);
    if (st == LOOM_OK) st = launch(g, dev->index, s, f, E_FINISHB, grid_of(no * np, 1, cap), (uint32_t)m->block, words, d);
    if (st == LOOM_OK && s) st = g->drv->stream_synchronize(g->handle, dev->index, s, d);
    Diag dd = {.status = LOOM_OK};
    rt_gpu_pool_free(dev->pool, partials, &dd);
    return st;
  }
  /* a row that fits in registers: one read of it (blockDim * cache_k >= nr; a warp for short rows) */
  /* (the threads a cached entry can launch with are known once it is loaded: registers) */
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHEDV) && m->cache_k > 0 && m->cache_lanes > 1 && nr > 0 &&
      nr % m->cache_lanes == 0 && nr <= 1024 * (int64_t)m->cache_k && vec_aligned(ir, words, m->cache_lanes)) {
    NEED(CG_ENTRY_CACHEDV);
    if (nr <= (int64_t)f->cachedv_max_block * m->cache_k) {
      int64_t bs = (nr + m->cache_k - 1) / m->cache_k;
      bs = (bs + wave - 1) / wave * wave;
      if (bs < wave) bs = wave;
      return launch(g, dev->index, s, f, E_CACHEDV, grid_of(no, 1, cap), (uint32_t)bs, words, d);
    }
  }
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHED) && m->cache_k > 0 && nr > 0 &&
      nr <= 1024 * (int64_t)m->cache_k) {
    NEED(CG_ENTRY_CACHED);
    if (nr <= (int64_t)f->cached_max_block * m->cache_k) {
      int64_t bs = (nr + m->cache_k - 1) / m->cache_k;
      bs = (bs + wave - 1) / wave * wave;
      if (bs < wave) bs = wave;
      return launch(g, dev->index, s, f, E_CACHED, grid_of(no, 1, cap), (uint32_t)bs, words, d);
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
      if (nparts > 4096) nparts = 4096; /* few columns: up to 4096 parts (the block finish folds them) */
    }
  }
  if (nparts <= 1) {
    NEED(CG_ENTRY_MAIN);
    if (m->strategy == CG_GPU_ROW) return launch(g, dev->index, s, f, E_MAIN, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
    return launch(g, dev->index, s, f, E_MAIN, grid_of(no, 256, cap), 256, words, d);
  }
  bool finishb = (has & CG_ENTRY_FINISHB) && no <= 2048 && nparts >= 64;
  NEED((partv ? CG_ENTRY_PARTV : CG_ENTRY_PART) | (finishb ? CG_ENTRY_FINISHB : CG_ENTRY_FINISH));
#undef NEED
  /* a multi-phase kernel (codegen.h: split_reduce): each phase in order over the whole grid, the
   * finished accumulators of its REDUCE phases (fin, phase-major) after the partials */
  uint32_t red = 0, map = 0;
  bool phased = cg_gpu_phase_split(ir, &red, &map);
  int64_t nfin = phased ? 32 - __builtin_clz(red) : 0;
  size_t pbytes = (size_t)no * (size_t)nparts * (size_t)m->acc_size;
  size_t bytes = pbytes + (size_t)no * (size_t)nfin * (size_t)m->acc_size;
  uint64_t partials = 0;
  LoomStatus st = rt_gpu_pool_alloc(dev->pool, bytes, &partials, d);
  if (st != LOOM_OK) return st;
  extra[0] = (uint64_t)nparts;
  extra[1] = partials;
  extra[3] = partials + pbytes;
  for (int p = 0; p < (phased ? ir->nphase : 1) && st == LOOM_OK; p++) {
    bool reduce = !phased || (red >> p & 1u);
    if (phased && !reduce && !(map >> p & 1u)) continue; /* FINAL: run by its REDUCE phase's finish */
    extra[2] = (uint64_t)p;
    if (partv) st = launch(g, dev->index, s, f, E_PARTV, grid_of(nparts, 1, f->partv_grid_max), (uint32_t)m->block, words, d);
    else if (m->strategy == CG_GPU_ROW) st = launch(g, dev->index, s, f, E_PART, grid_of(no * nparts, 1, cap), (uint32_t)m->block, words, d);
    else st = launch(g, dev->index, s, f, E_PART, grid_of(no * nparts, 256, cap), 256, words, d);
    if (!reduce) continue;
    /* few O points with many parts: one block per O point folds them (fixed order and tree) */
    if (st == LOOM_OK && finishb) st = launch(g, dev->index, s, f, E_FINISHB, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
    else if (st == LOOM_OK) st = launch(g, dev->index, s, f, E_FINISH, grid_of(no, 256, cap), 256, words, d);
  }
  /* on the legacy stream the free is ordered before any later use; a user stream must finish first */
  if (st == LOOM_OK && s) st = g->drv->stream_synchronize(g->handle, dev->index, s, d);
  Diag dd = {.status = LOOM_OK};
  rt_gpu_pool_free(dev->pool, partials, &dd);
  return st;
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
      st = rt_gpu_pool_alloc(dev->pool, bytes, &temps[i], d);
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
        if (bd->kind == SB_INPUT && bd->index >= 0 && bd->index < gr->ninputs) base = (uint64_t)(uintptr_t)gr->inputs[bd->index].data;
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
      if (bd->kind == SB_INPUT && bd->index >= 0 && bd->index < gr->ninputs) base = (uint64_t)(uintptr_t)gr->inputs[bd->index].data;
      else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = (uint64_t)(uintptr_t)out_data[bd->index];
      else if (bd->kind == SB_INDEX) base = 0; /* no memory: the word is offset * 8 (ir.h) */
      else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s binds buffer %d to a missing array", ir->name, b);
      words[nd + b] = base + (uint64_t)(bd->offset * (int64_t)loom_dtype_size((LoomDType)ir->bufs[b].dtype));
      for (int i = 0; i < nd; i++) words[nd + nb + b * nd + i] = (uint64_t)bd->strides[i];
    }
    for (size_t i = (size_t)(nd + nb + nb * nd); i < nwords; i++) words[i] = 0;
    for (int p = 0; p < ir->nparam; p++) words[nd + nb + nb * nd + CG_GPU_EXTRA + p] = sk->params[p]; /* codegen.h */
    if (st == LOOM_OK) st = launch_fn(ctx, g, dev, stream, f, ir, words, no, nr, d);
    rt_cache_release(dev->kernels, acquired);
    if (words != stackw) ctx_free(ctx, words);
    words = NULL;
    if (st == LOOM_OK) launched++;
  }
  if (temps) {
    Diag dd = {.status = LOOM_OK};
    if (stream) drv->stream_synchronize(g->handle, device, stream, &dd); /* the pool is stream-blind (device.h: settle) */
    for (int32_t i = 0; i < s->ntemp; i++)
      if (temps[i]) rt_gpu_pool_free(dev->pool, temps[i], &dd);
    ctx_free(ctx, temps);
  }
  rt_count_launches(ctx, launched, temp_bytes);
  return st;
}
