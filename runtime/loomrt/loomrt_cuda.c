/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_cuda.c: libloomrt's GPU side, a thin adapter over runtime/cuda/cuda.h (the CUDA driver layer,
 * the GPU layer's caching pool, streams and launch: runtime/cuda/cuda.c, cuda_code.c and runtime/gpu/gpu_pool.c are compiled
 * into libloom and libloomrt from the same source, nothing is copied).
 *
 * TODO(device.h): the device interface (runtime/device.h) has landed, but its CUDA device cannot be linked
 * without LLVM yet: its kernel table (runtime/gpu/gpu_kernels.c) compiles with the device's target and its launcher
 * (runtime/gpu/gpu_launch.c's launch_fn) compiles missing entries on demand. Until launch_fn is split into a
 * compiler-free policy over loaded entries (what a bundle provides) and the on-demand compile, this file
 * carries a copy of that policy for kernels whose entries are all loaded: elementwise (vec / vecw when
 * every base is aligned, grid from the occupancy API), ROW (cachedv / cached for rows that fit in
 * registers, split parts for few long rows), COL (split parts for few O points); the part counts depend
 * on the sizes only, as there, so results have the same bits as libloom's.
 *
 * Code per (kernel record, device) is loaded on the first launch: a cubin of the device's sm, else one of
 * a lower minor of the same major, else PTX for an sm <= the device's (the driver JIT-compiles it).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/cuda/cuda.h"
#include "runtime/loomrt/loomrt_internal.h"

typedef struct RtrtDev {
  bool ready;
  RtCuDeviceInfo info;
  RtGpuPool *pool;
} RtrtDev;

struct RtrtCuda {
  RtCuda *cu;
  Diag fail; /* why the driver did not load (reported on each use) */
  int ndev;
  RtrtDev *devs;
};

struct RtrtGpuCode {
  RtCuModule *mod;
  RtCuKernel kern[CG_NENTRY];
  uint32_t facts[RB_FACTS];
  int elem_block[CG_NENTRY], elem_grid[CG_NENTRY]; /* occupancy's best block, resident blocks of it */
  int cached_max_block, cachedv_max_block, partv_grid_max;
};

enum { E_MAIN, E_VEC, E_PART, E_FINISH, E_CACHED, E_PARTV, E_CACHEDV, E_FINISHB, E_VECW };

/* The driver, loaded once per runtime (rt->lock held). */
static LoomStatus cuda_locked(LoomrtRuntime *rt, RtrtCuda **out, Diag *d) {
  if (!rt->cuda) {
    RtrtCuda *c = ctx_calloc(&rt->ctx, 1, sizeof *c);
    if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA state");
    c->fail.status = LOOM_OK;
    if (rt_cuda_load(&rt->ctx, &c->cu, &c->fail) == LOOM_OK) {
      c->ndev = rt_cuda_device_count(c->cu);
      c->devs = ctx_calloc(&rt->ctx, (size_t)(c->ndev > 0 ? c->ndev : 1), sizeof *c->devs);
      if (!c->devs) diag_error(&c->fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: CUDA devices");
    }
    rt->cuda = c;
  }
  *out = rt->cuda;
  if (rt->cuda->fail.status != LOOM_OK) return diag_error(d, rt->cuda->fail.status, "%s", rt->cuda->fail.msg);
  return LOOM_OK;
}

/* Device `device` retained with its pool. */
static LoomStatus device_get(LoomrtRuntime *rt, int device, RtrtCuda **cout, RtrtDev **out, Diag *d) {
  pthread_mutex_lock(&rt->lock);
  RtrtCuda *c = NULL;
  LoomStatus st = cuda_locked(rt, &c, d);
  if (st == LOOM_OK && (device < 0 || device >= c->ndev))
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "CUDA device %d does not exist (%d devices)", device, c->ndev);
  if (st == LOOM_OK && !c->devs[device].ready) {
    RtrtDev *dv = &c->devs[device];
    st = rt_cuda_device_info(c->cu, device, &dv->info, d);
    if (st == LOOM_OK) st = rt_cuda_device_retain(c->cu, device, d);
    if (st == LOOM_OK) {
      RtDevAllocator al = rt_cuda_device_allocator(c->cu);
      st = rt_gpu_pool_create(&rt->ctx, device, &al, &dv->pool, d);
      if (st != LOOM_OK) rt_cuda_device_release(c->cu, device);
    }
    dv->ready = st == LOOM_OK;
  }
  pthread_mutex_unlock(&rt->lock);
  if (st == LOOM_OK) {
    *cout = c;
    *out = &c->devs[device];
  }
  return st;
}

int32_t rtrt_cuda_device_count(LoomrtRuntime *rt) {
  pthread_mutex_lock(&rt->lock);
  RtrtCuda *c = NULL;
  Diag d = {.status = LOOM_OK};
  int32_t n = cuda_locked(rt, &c, &d) == LOOM_OK ? c->ndev : 0;
  pthread_mutex_unlock(&rt->lock);
  if (d.status != LOOM_OK) ctx_report(&rt->ctx, &d); /* why there is none: loomrt_last_error */
  return n;
}

LoomStatus rtrt_cuda_stream_create(LoomrtRuntime *rt, int32_t device, struct RtCuStream **out, Diag *d) {
  RtrtCuda *c;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, device, &c, &dv, d);
  return st == LOOM_OK ? rt_cuda_stream_create(c->cu, device, out, d) : st;
}

void rtrt_cuda_stream_destroy(LoomrtRuntime *rt, struct RtCuStream *s) {
  if (rt->cuda && rt->cuda->cu) rt_cuda_stream_destroy(rt->cuda->cu, s);
}

LoomStatus rtrt_cuda_stream_synchronize(LoomrtRuntime *rt, struct RtCuStream *s, Diag *d) {
  return rt->cuda && rt->cuda->cu ? rt_cuda_stream_synchronize(rt->cuda->cu, s, d) : LOOM_OK;
}

void *rtrt_cuda_stream_handle(struct RtCuStream *s) { return s ? rt_cuda_stream_raw(s) : NULL; }

LoomStatus rtrt_cuda_alloc(LoomrtRuntime *rt, int32_t device, size_t bytes, void **out, Diag *d) {
  RtrtCuda *c;
  RtrtDev *dv;
  uint64_t p = 0;
  LoomStatus st = device_get(rt, device, &c, &dv, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(c->cu, device, d);
  if (st == LOOM_OK) st = rt_gpu_pool_alloc(dv->pool, bytes, &p, d);
  *out = st == LOOM_OK ? (void *)(uintptr_t)p : NULL;
  return st;
}

LoomStatus rtrt_cuda_free(LoomrtRuntime *rt, int32_t device, void *ptr, Diag *d) {
  RtrtCuda *c;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, device, &c, &dv, d);
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(c->cu, device, d); /* the pool is stream-blind */
  return st == LOOM_OK ? rt_gpu_pool_free(dv->pool, (uint64_t)(uintptr_t)ptr, d) : st;
}

LoomStatus rtrt_cuda_copy(LoomrtRuntime *rt, int32_t device, void *dst, const void *src, size_t bytes, int32_t kind, Diag *d) {
  RtrtCuda *c;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, device, &c, &dv, d);
  if (st == LOOM_OK) st = rt_cuda_device_synchronize(c->cu, device, d); /* kernels on any stream first */
  if (st != LOOM_OK) return st;
  if (kind == 0) return rt_cuda_memcpy_h2d(c->cu, device, (uint64_t)(uintptr_t)dst, src, bytes, NULL, d);
  if (kind == 1) return rt_cuda_memcpy_d2h(c->cu, device, dst, (uint64_t)(uintptr_t)src, bytes, NULL, d);
  return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loomrt_cuda_copy: kind %d (0: host to device, 1: device to host)", kind);
}

/* ---- code --------------------------------------------------------------------------------------------- */
static int max_block_of(RtCuda *cu, const RtCuKernel *k, Diag *d) {
  RtCuKernelAttrs at;
  if (rt_cuda_kernel_attrs(cu, k, &at, d) != LOOM_OK) return 0;
  return (at.max_threads_per_block > 1024 ? 1024 : at.max_threads_per_block) / 32 * 32;
}

/* Loads kernel record ki's code for the device (b->lock held). */
static LoomStatus load_code(LoomrtBundle *b, int32_t ki, int device, RtrtCuda *c, RtrtDev *dv, RtrtGpuCode **out, Diag *d) {
  LoomrtRuntime *rt = b->rt;
  if (!b->gpu) {
    b->gpu_ndev = c->ndev;
    b->gpu = ctx_calloc(&rt->ctx, (size_t)b->b->nkernel * (size_t)c->ndev + 1, sizeof *b->gpu);
    if (!b->gpu) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU code table");
  }
  RtrtGpuCode **slot = &b->gpu[(size_t)ki * (size_t)b->gpu_ndev + (size_t)device];
  if (*slot) {
    *out = *slot;
    return LOOM_OK;
  }
  const RtBundleKernel *kr = &b->b->kernels[ki];
  int sm = dv->info.cc_major * 10 + dv->info.cc_minor;
  int32_t best = -1, score = -1;
  char have[200] = "";
  size_t hn = 0;
  for (uint32_t i = kr->code_first; i < kr->code_first + kr->ncode; i++) {
    const RtBundleTarget *t = &b->b->targets[b->b->codes[i].target];
    int32_t sc = -1; /* exact cubin > same-major older cubin > PTX it can JIT, the newest first */
    if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch == sm) sc = 3000;
    else if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch / 10 == sm / 10 && (int)t->arch < sm) sc = 2000 + (int)t->arch;
    else if (t->kind == RB_TARGET_CUDA_PTX && (int)t->arch <= sm) sc = 1000 + (int)t->arch;
    if (t->kind == RB_TARGET_CUDA_CUBIN || t->kind == RB_TARGET_CUDA_PTX)
      hn += (size_t)snprintf(have + hn, hn < sizeof have ? sizeof have - hn : 0, "%s%s", hn ? ", " : "", t->name);
    if (sc > score) {
      score = sc;
      best = (int32_t)i;
    }
  }
  if (best < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "bundle %s: entry '%s' has no code for GPU %d (%s, sm_%d): it has %s", b->what,
                      kr->name, device, dv->info.name, sm, hn ? have : "no GPU code (rebuild with --target sm_XX,ptx)");
  const RtBundleCode *code = &b->b->codes[best];
  LoomStatus st = rtrt_check_code(b, best, d);
  if (st == LOOM_OK && b->b->targets[code->target].kind == RB_TARGET_CUDA_PTX && code->blob[code->blob_size - 1] != 0)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: the PTX of '%s' is not NUL-terminated: corrupted", b->what, kr->name);
  RtrtGpuCode *g = st == LOOM_OK ? ctx_calloc(&rt->ctx, 1, sizeof *g) : NULL;
  if (st == LOOM_OK && !g) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU code");
  if (st == LOOM_OK) st = rt_cuda_module_load(c->cu, device, code->blob, (size_t)code->blob_size, &g->mod, d);
  if (st == LOOM_OK) {
    memcpy(g->facts, code->facts, sizeof g->facts);
    for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
      if (code->facts[RB_GPU_ENTRIES] & (1u << i)) st = rt_cuda_module_kernel(c->cu, g->mod, code->names[i], &g->kern[i], d);
  }
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++) {
    if (!(code->facts[RB_GPU_ENTRIES] & (1u << i))) continue;
    int bs = 256, per_sm = 1;
    if (g->facts[RB_GPU_STRATEGY] == CG_GPU_ELEMENTWISE && (i == E_MAIN || i == E_VEC || i == E_VECW)) {
      st = rt_cuda_best_block_size(c->cu, &g->kern[i], 0, &bs, d);
      if (st == LOOM_OK) st = rt_cuda_occupancy(c->cu, &g->kern[i], bs, 0, &per_sm, d);
      g->elem_block[i] = bs;
      g->elem_grid[i] = dv->info.sm_count * (per_sm > 0 ? per_sm : 1);
    }
  }
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_CACHED)) g->cached_max_block = max_block_of(c->cu, &g->kern[E_CACHED], d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_CACHEDV)) g->cachedv_max_block = max_block_of(c->cu, &g->kern[E_CACHEDV], d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_PARTV)) {
    int per_sm = 1;
    st = rt_cuda_occupancy(c->cu, &g->kern[E_PARTV], (int)g->facts[RB_GPU_BLOCK], 0, &per_sm, d);
    g->partv_grid_max = dv->info.sm_count * (per_sm > 0 ? per_sm : 1);
  }
  if (st == LOOM_OK && d->status != LOOM_OK) st = d->status;
  if (st != LOOM_OK) {
    if (g && g->mod) rt_cuda_module_unload(c->cu, g->mod);
    ctx_free(&rt->ctx, g);
    return st;
  }
  *slot = g;
  *out = g;
  return LOOM_OK;
}

/* ---- launch policy (runtime/cuda_backend.c's launch_fn, every entry loaded) ------------------------------ */
static uint32_t grid_of(int64_t items, int64_t per_block, int64_t cap) {
  int64_t g = (items + per_block - 1) / per_block;
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return (uint32_t)g;
}

static LoomStatus go(RtCuda *cu, RtCuStream *s, const RtrtGpuCode *g, int e, uint32_t grid, uint32_t block, uint64_t *words,
                     Diag *d) {
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return rt_cuda_launch(cu, &g->kern[e], gr, bl, 0, s, params, d);
}

static uint64_t dtype_bytes(uint8_t t) {
  static const uint8_t sizes[LOOM_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8};
  return t < LOOM_DTYPE_COUNT ? sizes[t] : 0;
}

static bool vec_aligned(const RtBundleKernel *k, const uint64_t *words, int lanes) {
  int nd = k->ndim, nb = k->nbuf;
  if (lanes < 2 || nd < 1) return false;
  for (int b = 0; b < nb; b++) {
    if (k->bufs[b].layout[nd - 1] != KL_ONE) continue;
    uint64_t align = (uint64_t)lanes * dtype_bytes(k->bufs[b].dtype);
    if (align == 0 || words[nd + b] % align) return false;
    for (int dd = 0; dd < k->nkeep; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

/* gpu_launch.c's elem_vec_ok: n-d vector entries need whole vectors per row and aligned rows. */
static bool elem_vec_ok(const RtBundleKernel *k, const uint64_t *words, int lanes) {
  int nd = k->ndim, nb = k->nbuf;
  if (nd <= 1) return true;
  if ((int64_t)words[nd - 1] % lanes) return false;
  for (int b = 0; b < nb; b++) {
    if (k->bufs[b].layout[nd - 1] != KL_ONE) continue;
    for (int dd = 0; dd < nd - 1; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

static LoomStatus policy(RtCuda *cu, RtrtDev *dv, RtCuStream *s, const RtrtGpuCode *g, const RtBundleKernel *k, uint64_t *words,
                         int64_t no, int64_t nr, Diag *d) {
  const uint32_t *f = g->facts, has = f[RB_GPU_ENTRIES];
  int nd = k->ndim, nb = k->nbuf;
  uint64_t *extra = words + nd + nb + nb * nd;
  extra[0] = 1;
  extra[1] = 0;
  const int64_t cap = (int64_t)1 << 30;
  uint32_t strategy = f[RB_GPU_STRATEGY], block = f[RB_GPU_BLOCK], lanes = f[RB_GPU_VEC_LANES];
  if (strategy == CG_GPU_ELEMENTWISE) {
    bool vec = (has & CG_ENTRY_VEC) && lanes > 0;
    for (int b = 0; vec && b < nb; b++) vec = words[nd + b] % f[RB_GPU_VEC_ALIGN] == 0;
    vec = vec && elem_vec_ok(k, words, (int)lanes);
    int e = !vec ? E_MAIN : no % lanes ? E_VEC : (has & CG_ENTRY_VECW) ? E_VECW : E_VEC;
    int64_t steps = vec ? no / lanes : no;
    return go(cu, s, g, e, grid_of(steps < 1 ? 1 : steps, g->elem_block[e], g->elem_grid[e]), (uint32_t)g->elem_block[e], words, d);
  }
  int64_t ck = f[RB_GPU_CACHE_K], cl = f[RB_GPU_CACHE_LANES];
  if (strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHEDV) && ck > 0 && cl > 1 && nr > 0 && nr % cl == 0 && nr <= 1024 * ck &&
      vec_aligned(k, words, (int)cl) && nr <= (int64_t)g->cachedv_max_block * ck) {
    int64_t bs = ((nr + ck - 1) / ck + 31) / 32 * 32;
    return go(cu, s, g, E_CACHEDV, grid_of(no, 1, cap), (uint32_t)(bs < 32 ? 32 : bs), words, d);
  }
  if (strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHED) && ck > 0 && nr > 0 && nr <= 1024 * ck &&
      nr <= (int64_t)g->cached_max_block * ck) {
    int64_t bs = ((nr + ck - 1) / ck + 31) / 32 * 32;
    return go(cu, s, g, E_CACHED, grid_of(no, 1, cap), (uint32_t)(bs < 32 ? 32 : bs), words, d);
  }
  int64_t nparts = 1;
  bool partv = strategy == CG_GPU_ROW && no == 1 && (has & CG_ENTRY_PARTV) && (has & CG_ENTRY_FINISHB) && nr >= 32768 &&
               vec_aligned(k, words, (int)f[RB_GPU_PART_LANES]);
  if (partv) {
    nparts = nr / 16384;
    if (nparts > 16384) nparts = 16384;
  } else if ((has & CG_ENTRY_PART) && nr > 0) {
    if (strategy == CG_GPU_ROW && no < 512 && nr >= 8192) {
      int64_t a = (2048 + no - 1) / no, bb = (nr + 16383) / 16384;
      nparts = a < bb ? a : bb;
    } else if (strategy == CG_GPU_COL && no < 131072 && nr >= 64) {
      int64_t a = (262144 + no - 1) / no, bb = nr / 32;
      nparts = a < bb ? a : bb;
      if (nparts > 1024) nparts = 1024;
    }
  }
  if (nparts <= 1) {
    if (strategy == CG_GPU_ROW) return go(cu, s, g, E_MAIN, grid_of(no, 1, cap), block, words, d);
    return go(cu, s, g, E_MAIN, grid_of(no, 256, cap), 256, words, d);
  }
  bool finishb = (has & CG_ENTRY_FINISHB) && no <= 2048 && nparts >= 64;
  size_t bytes = (size_t)no * (size_t)nparts * (size_t)f[RB_GPU_ACC_SIZE];
  uint64_t partials = 0;
  LoomStatus st = rt_gpu_pool_alloc(dv->pool, bytes, &partials, d);
  if (st != LOOM_OK) return st;
  extra[0] = (uint64_t)nparts;
  extra[1] = partials;
  if (partv) st = go(cu, s, g, E_PARTV, grid_of(nparts, 1, g->partv_grid_max), block, words, d);
  else if (strategy == CG_GPU_ROW) st = go(cu, s, g, E_PART, grid_of(no * nparts, 1, cap), block, words, d);
  else st = go(cu, s, g, E_PART, grid_of(no * nparts, 256, cap), 256, words, d);
  if (st == LOOM_OK && finishb) st = go(cu, s, g, E_FINISHB, grid_of(no, 1, cap), block, words, d);
  else if (st == LOOM_OK) st = go(cu, s, g, E_FINISH, grid_of(no, 256, cap), 256, words, d);
  /* the pool does not track streams: the partials go back only once the stream is done with them */
  if (st == LOOM_OK) st = rt_cuda_stream_synchronize(cu, s, d);
  Diag dd = {.status = LOOM_OK};
  rt_gpu_pool_free(dv->pool, partials, &dd);
  return st;
}

LoomStatus rtrt_cuda_launch(LoomrtBundle *b, int32_t ki, LoomrtStream *s, const int64_t *shape, void *const *bufs,
                            const int64_t *strides, int64_t no, int64_t nr, Diag *d) {
  RtrtCuda *c;
  RtrtDev *dv;
  LoomStatus st = device_get(b->rt, s->device, &c, &dv, d);
  RtrtGpuCode *g = NULL;
  if (st == LOOM_OK) {
    pthread_mutex_lock(&b->lock);
    st = load_code(b, ki, s->device, c, dv, &g, d);
    pthread_mutex_unlock(&b->lock);
  }
  if (st == LOOM_OK) st = rt_cuda_set_current(c->cu, s->device, d);
  if (st != LOOM_OK) return st;
  const RtBundleKernel *k = &b->b->kernels[ki];
  int nd = k->ndim, nb = k->nbuf;
  size_t nwords = (size_t)(nd + nb + nb * nd + CG_GPU_EXTRA + k->nparam);
  uint64_t stackw[256], *words = nwords <= 256 ? stackw : ctx_calloc(&b->rt->ctx, nwords, sizeof *words);
  if (!words) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel parameters");
  for (int i = 0; i < nd; i++) words[i] = (uint64_t)shape[i];
  for (int bb = 0; bb < nb; bb++) {
    words[nd + bb] = (uint64_t)(uintptr_t)bufs[bb];
    for (int i = 0; i < nd; i++) words[nd + nb + bb * nd + i] = (uint64_t)strides[(size_t)bb * (size_t)nd + (size_t)i];
  }
  for (size_t i = (size_t)(nd + nb + nb * nd); i < nwords; i++) words[i] = 0;
  for (int p = 0; p < k->nparam; p++) words[nd + nb + nb * nd + CG_GPU_EXTRA + p] = (uint64_t)(uintptr_t)bufs[nb + p];
  st = policy(c->cu, dv, s->cs, g, k, words, no, nr, d);
  if (words != stackw) ctx_free(&b->rt->ctx, words);
  return st;
}

void rtrt_cuda_bundle_free(LoomrtBundle *b) {
  if (!b->gpu) return;
  RtCuda *cu = b->rt->cuda ? b->rt->cuda->cu : NULL;
  for (size_t i = 0; i < (size_t)b->b->nkernel * (size_t)b->gpu_ndev; i++)
    if (b->gpu[i]) {
      if (cu) rt_cuda_module_unload(cu, b->gpu[i]->mod);
      ctx_free(&b->rt->ctx, b->gpu[i]);
    }
  ctx_free(&b->rt->ctx, b->gpu);
  b->gpu = NULL;
}

void rtrt_cuda_destroy(LoomrtRuntime *rt) {
  RtrtCuda *c = rt->cuda;
  if (!c) return;
  for (int i = 0; c->devs && i < c->ndev; i++)
    if (c->devs[i].ready) {
      rt_gpu_pool_destroy(c->devs[i].pool);
      rt_cuda_device_release(c->cu, i);
    }
  if (c->cu) rt_cuda_unload(c->cu);
  ctx_free(&rt->ctx, c->devs);
  ctx_free(&rt->ctx, c);
  rt->cuda = NULL;
}
