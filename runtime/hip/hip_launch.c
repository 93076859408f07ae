/* hip_launch.c: launching on AMD devices: the launch shape of every entry of a kernel (HipFn, hip_rt.h) and
 * the schedule runner of the AMD device (device.h's run_schedule), the twin of runtime/cuda/cuda_launch.c.
 *
 * The choices are NVIDIA's (cuda_launch.c), with the chip's wave in place of the warp: every block that
 * runs a block reduction (ROW, cached ROW, vector part, block finish) is a multiple of the wave (64 on
 * gfx9, 32 on gfx10+), since the lowering folds one value per wave. Elementwise kernels use the occupancy
 * API's block size and a grid capped at the resident blocks (grid-stride loops), their 16-byte vector
 * entries when every base is aligned. Reductions pick a cached-row entry when a row fits in registers,
 * else split R into parts by the sizes alone (the same parts as on NVIDIA: the same bits on every run),
 * or run one block (ROW) or thread (COL) per output point. The parameter block is built on the stack and
 * passed as the kernel's one explicit argument (by value: hipModuleLaunchKernel copies it into the
 * kernarg segment at the offset the code object's metadata gives).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/hip/hip_rt.h"

static uint32_t grid_of(int64_t items, int64_t per_block, int64_t cap) {
  int64_t g = (items + per_block - 1) / per_block;
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return (uint32_t)g;
}

static LoomStatus launch(HipRt *g, RtHipStream *s, const HipFn *f, int e, uint32_t grid, uint32_t block, uint64_t *words,
                         Diag *d) {
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return rt_hip_launch(g->hip, &f->kern[e], gr, bl, 0, s, params, d);
}

/* Whether the vector entries (lanes points per load) may run (cuda_launch.c's test). */
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

static int64_t round_wave(int64_t n, int wave) {
  n = (n + wave - 1) / wave * wave;
  return n < wave ? wave : n;
}

static LoomStatus launch_fn(LoomContext *ctx, HipRt *g, HipDev *dev, RtHipStream *s, const HipFn *f, const KernelIr *ir,
                            uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const HipMeta *m = &f->meta;
  const uint32_t has = m->entries_all;
  const int wave = m->wave;
#define NEED(mask)                                                               \
  do {                                                                           \
    LoomStatus need_st = rt_amd_need_entries(ctx, g, dev, f, ir, (mask), d);     \
    if (need_st != LOOM_OK) return need_st;                                      \
  } while (0)
  int nd = ir->ndim, nb = ir->nbuf;
  uint64_t *extra = words + nd + nb + nb * nd;
  extra[0] = 1;
  extra[1] = 0;
  const int64_t cap = (int64_t)1 << 30;
  if (m->strategy == CG_GPU_ELEMENTWISE) {
    bool vec = (has & CG_ENTRY_VEC) && m->vec_lanes > 0;
    for (int b = 0; vec && b < nb; b++) vec = words[nd + b] % (uint64_t)m->vec_align == 0;
    int e = !vec ? HE_MAIN : no % m->vec_lanes ? HE_VEC
                           : (has & CG_ENTRY_VECW) && !(__atomic_load_n(&f->loaded, __ATOMIC_ACQUIRE) & CG_ENTRY_VEC) ? HE_VECW
                                                                                                                    : HE_VEC;
    int64_t steps = vec ? no / m->vec_lanes : no;
    if (steps < 1) steps = 1;
    NEED(1u << e);
    uint32_t block = f->elem_block;
    if (f->max_block[e] >= wave && block > (uint32_t)f->max_block[e]) block = (uint32_t)f->max_block[e];
    return launch(g, s, f, e, grid_of(steps, block, f->elem_grid_max), block, words, d);
  }
  /* a row that fits in registers: one read of it (blockDim * cache_k >= nr; a wave for short rows) */
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHEDV) && m->cache_k > 0 && m->cache_lanes > 1 && nr > 0 &&
      nr % m->cache_lanes == 0 && nr <= 1024 * (int64_t)m->cache_k && vec_aligned(ir, words, m->cache_lanes)) {
    NEED(CG_ENTRY_CACHEDV);
    int64_t bs = round_wave((nr + m->cache_k - 1) / m->cache_k, wave);
    if (bs <= f->max_block[HE_CACHEDV]) return launch(g, s, f, HE_CACHEDV, grid_of(no, 1, cap), (uint32_t)bs, words, d);
  }
  if (m->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHED) && m->cache_k > 0 && nr > 0 && nr <= 1024 * (int64_t)m->cache_k) {
    NEED(CG_ENTRY_CACHED);
    int64_t bs = round_wave((nr + m->cache_k - 1) / m->cache_k, wave);
    if (bs <= f->max_block[HE_CACHED]) return launch(g, s, f, HE_CACHED, grid_of(no, 1, cap), (uint32_t)bs, words, d);
  }
  int64_t nparts = 1;
  bool partv = m->strategy == CG_GPU_ROW && no == 1 && (has & CG_ENTRY_PARTV) && (has & CG_ENTRY_FINISHB) &&
               nr >= 32768 && vec_aligned(ir, words, m->part_lanes);
  if (partv) { /* parts of 16K points, at most 16384 (sizes only: deterministic) */
    nparts = nr / 16384;
    if (nparts > 16384) nparts = 16384;
  } else if ((has & CG_ENTRY_PART) && nr > 0) {
    if (m->strategy == CG_GPU_ROW && no < 512 && nr >= 8192) {
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
    if (m->strategy == CG_GPU_ROW) return launch(g, s, f, HE_MAIN, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
    return launch(g, s, f, HE_MAIN, grid_of(no, 256, cap), 256, words, d);
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
  if (partv) st = launch(g, s, f, HE_PARTV, grid_of(nparts, 1, f->partv_grid_max > 0 ? f->partv_grid_max : cap),
                         (uint32_t)m->block, words, d);
  else if (m->strategy == CG_GPU_ROW) st = launch(g, s, f, HE_PART, grid_of(no * nparts, 1, cap), (uint32_t)m->block, words, d);
  else st = launch(g, s, f, HE_PART, grid_of(no * nparts, 256, cap), 256, words, d);
  if (st == LOOM_OK && finishb) st = launch(g, s, f, HE_FINISHB, grid_of(no, 1, cap), (uint32_t)m->block, words, d);
  else if (st == LOOM_OK) st = launch(g, s, f, HE_FINISH, grid_of(no, 256, cap), 256, words, d);
  /* on the null stream the free is ordered before any later use; a user stream must finish first */
  if (st == LOOM_OK && s) st = rt_hip_stream_synchronize(g->hip, s, d);
  Diag dd = {.status = LOOM_OK};
  rt_cuda_pool_free(dev->pool, partials, &dd);
  return st;
}

LoomStatus rt_amd_run_schedule(LoomContext *ctx, int device, const RtRun *run, Diag *d) {
  const IrGraph *gr = run->graph;
  const Schedule *s = run->schedule;
  HipRt *g = NULL;
  HipDev *dev = NULL;
  LoomStatus st = rt_amd_device(ctx, device, &g, &dev, d);
  if (st != LOOM_OK) return st;
  RtHipStream *stream = rt_amd_current_stream(ctx, device); /* NULL: the null stream */
  uint64_t *temps = NULL, launched = 0, temp_bytes = run->extra_temp_bytes;
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
    const HipFn *f = run->pinned ? (const HipFn *)run->pinned[ki] : NULL;
    const void *acquired = NULL;
    if (!f) {
      st = rt_cache_acquire_value(dev->kernels, ir, false, no, &acquired, NULL, d);
      f = acquired;
    }
    if (st != LOOM_OK) break;
    int nd = ir->ndim, nb = ir->nbuf;
    size_t nwords = (size_t)(nd + nb + nb * nd + CG_GPU_EXTRA);
    uint64_t stackw[256], *words = nwords <= 256 ? stackw : ctx_calloc(ctx, nwords, sizeof *words);
    if ((int)nwords != f->meta.nwords)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s expects %d parameter words, not %zu", ir->name,
                      f->meta.nwords, nwords);
    else if (!words)
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel parameters");
    for (int i = 0; st == LOOM_OK && i < nd; i++) words[i] = (uint64_t)sk->shape[i];
    for (int b = 0; st == LOOM_OK && b < nb; b++) {
      const SchedBinding *bd = &sk->bind[b];
      uint64_t base = 0;
      if (bd->kind == SB_INPUT && bd->index >= 0 && bd->index < gr->ninputs) base = (uint64_t)(uintptr_t)gr->inputs[bd->index].data;
      else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < run->nouts) base = (uint64_t)(uintptr_t)run->out_data[bd->index];
      else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s binds buffer %d to a missing array", ir->name, b);
      words[nd + b] = base + (uint64_t)(bd->offset * (int64_t)loom_dtype_size((LoomDType)ir->bufs[b].dtype));
      for (int i = 0; i < nd; i++) words[nd + nb + b * nd + i] = (uint64_t)bd->strides[i];
    }
    for (size_t i = (size_t)(nd + nb + nb * nd); st == LOOM_OK && i < nwords; i++) words[i] = 0;
    if (st == LOOM_OK) st = launch_fn(ctx, g, dev, stream, f, ir, words, no, nr, d);
    rt_cache_release(dev->kernels, acquired);
    if (words && words != stackw) ctx_free(ctx, words);
    if (st == LOOM_OK) launched++;
  }
  if (temps) {
    Diag dd = {.status = LOOM_OK};
    if (stream) rt_hip_stream_synchronize(g->hip, stream, &dd); /* the pool is stream-blind (device.h: settle) */
    for (int32_t i = 0; i < s->ntemp; i++)
      if (temps[i]) rt_cuda_pool_free(dev->pool, temps[i], &dd);
    ctx_free(ctx, temps);
  }
  rt_count_launches(ctx, launched, temp_bytes);
  return st;
}
