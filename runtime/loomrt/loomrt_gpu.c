/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_gpu.c: libloomrt's GPU side, one vendor-neutral path for CUDA and HIP over the shared GPU layer's
 * driver table (runtime/gpu/gpu_driver.h; the tables are loomrt_drivers.c's, filled from the driver layers
 * libloom uses: runtime/cuda/cuda.c + cuda_code.c, runtime/hip/hip.c) and its caching pool
 * (runtime/gpu/gpu_pool.c). Nothing here knows a vendor but the choice of a kernel's code for a device.
 *
 * Launches go through the launch policy libloom uses (runtime/gpu/gpu_launch_policy.c: entries, grids,
 * blocks, split reductions by the sizes alone, so results have the same bits as libloom's), over the
 * bundle's code, whose entries are all loaded: the policy's callbacks read the code's launch facts, the
 * elementwise block size and grid of the occupancy scan below (as gpu_kernels.c's elem_config) and the
 * cached entries' thread limits.
 *
 * Code per (kernel record, device) is loaded on the first launch. NVIDIA: a cubin of the device's sm,
 * else one of a lower minor of the same major, else PTX for an sm <= the device's (the driver
 * JIT-compiles it). AMD: the code object of the device's gfx (hipModuleLoadData; HIP lays the parameter
 * block out from the code object's metadata).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/gpu/gpu_driver.h"
#include "runtime/gpu/gpu_launch_policy.h"
#include "runtime/loomrt/loomrt_internal.h"

typedef struct RtrtDev {
  bool ready;
  RtGpuDeviceInfo info;
  RtGpuPool *pool;
} RtrtDev;

struct RtrtGpu {
  const RtGpuDriver *drv;
  void *h;   /* the driver instance */
  Diag fail; /* why the driver did not load (reported on each use) */
  int ndev;
  RtrtDev *devs;
};

struct RtrtGpuCode {
  void *mod;
  void *fn[CG_NENTRY];
  uint32_t facts[RB_FACTS];
  int wave;
  int elem_block[CG_NENTRY], elem_grid[CG_NENTRY]; /* occupancy's best block, resident blocks of it */
  int cached_max_block, cachedv_max_block, partv_grid_max, finishb_max_block, main_max_block, col_part_resident;
};

enum { E_MAIN, E_VEC, E_PART, E_FINISH, E_CACHED, E_PARTV, E_CACHEDV, E_FINISHB, E_VECW, E_FLATV };
_Static_assert(CG_NENTRY == RB_GPU_NENTRY, "a bundle's code record names every entry of the GPU lowering");

static int vendor_of(LoomDeviceKind kind) { return kind == LOOM_DEVICE_CUDA ? RTRT_CUDA : kind == LOOM_DEVICE_HIP ? RTRT_HIP : -1; }

/* The driver of kind, loaded once per runtime (rt->lock held). */
static LoomStatus gpu_locked(LoomrtRuntime *rt, LoomDeviceKind kind, RtrtGpu **out, Diag *d) {
  int v = vendor_of(kind);
  if (v < 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "device kind %d is not a GPU (LOOM_DEVICE_CUDA or LOOM_DEVICE_HIP)", (int)kind);
  if (!rt->gpu[v]) {
    RtrtGpu *g = ctx_calloc(&rt->ctx, 1, sizeof *g);
    if (!g) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU state");
    g->drv = rtrt_driver(kind);
    g->fail.status = LOOM_OK;
    RtGpuJit jit;
    if (g->drv->load(&rt->ctx, &g->h, &g->ndev, &jit, &g->fail) == LOOM_OK) {
      g->devs = ctx_calloc(&rt->ctx, (size_t)(g->ndev > 0 ? g->ndev : 1), sizeof *g->devs);
      if (!g->devs) diag_error(&g->fail, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU devices");
    } else {
      g->h = NULL;
      g->ndev = 0;
    }
    rt->gpu[v] = g;
  }
  *out = rt->gpu[v];
  if (rt->gpu[v]->fail.status != LOOM_OK) return diag_error(d, rt->gpu[v]->fail.status, "%s", rt->gpu[v]->fail.msg);
  return LOOM_OK;
}

static LoomStatus pool_raw_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  RtrtGpu *g = user;
  *out = 0;
  LoomStatus st = g->drv->set_current(g->h, device, d);
  return st == LOOM_OK ? g->drv->mem_alloc(g->h, device, size, out, d) : st;
}

static void pool_raw_free(void *user, int device, uint64_t ptr) {
  RtrtGpu *g = user;
  Diag d = {.status = LOOM_OK};
  if (!ptr) return;
  g->drv->set_current(g->h, device, &d);
  g->drv->mem_free(g->h, device, ptr);
}

/* Device `device` of kind, retained with its pool and made current on the calling thread. */
static LoomStatus device_get(LoomrtRuntime *rt, LoomDeviceKind kind, int device, RtrtGpu **gout, RtrtDev **out, Diag *d) {
  pthread_mutex_lock(&rt->lock);
  RtrtGpu *g = NULL;
  LoomStatus st = gpu_locked(rt, kind, &g, d);
  if (st == LOOM_OK && (device < 0 || device >= g->ndev))
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s device %d does not exist (%d devices)", g->drv->name, device, g->ndev);
  if (st == LOOM_OK && !g->devs[device].ready) {
    RtrtDev *dv = &g->devs[device];
    st = g->drv->device_info(g->h, device, &dv->info, d);
    if (st == LOOM_OK) st = g->drv->retain(g->h, device, d);
    if (st == LOOM_OK) {
      RtDevAllocator al = {pool_raw_alloc, pool_raw_free, g};
      st = rt_gpu_pool_create(&rt->ctx, device, &al, &dv->pool, d);
      if (st != LOOM_OK) g->drv->release(g->h, device);
    }
    dv->ready = st == LOOM_OK;
  }
  pthread_mutex_unlock(&rt->lock);
  if (st == LOOM_OK) st = g->drv->set_current(g->h, device, d);
  if (st == LOOM_OK) {
    *gout = g;
    *out = &g->devs[device];
  }
  return st;
}

int32_t rtrt_gpu_device_count(LoomrtRuntime *rt, LoomDeviceKind kind) {
  pthread_mutex_lock(&rt->lock);
  RtrtGpu *g = NULL;
  Diag d = {.status = LOOM_OK};
  int32_t n = gpu_locked(rt, kind, &g, &d) == LOOM_OK ? g->ndev : 0;
  pthread_mutex_unlock(&rt->lock);
  if (d.status != LOOM_OK) ctx_report(&rt->ctx, &d); /* why there is none: loomrt_last_error */
  return n;
}

LoomStatus rtrt_gpu_stream_create(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void **out, Diag *d) {
  RtrtGpu *g;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, kind, device, &g, &dv, d);
  return st == LOOM_OK ? g->drv->stream_create(g->h, device, out, d) : st;
}

static RtrtGpu *gpu_of(const LoomrtStream *s) {
  int v = vendor_of(s->kind);
  return v >= 0 ? s->rt->gpu[v] : NULL;
}

void rtrt_gpu_stream_destroy(LoomrtStream *s) {
  RtrtGpu *g = gpu_of(s);
  if (!g || !g->h) return;
  Diag d = {.status = LOOM_OK};
  g->drv->set_current(g->h, s->device, &d);
  g->drv->stream_destroy(g->h, s->device, s->h);
}

LoomStatus rtrt_gpu_stream_synchronize(LoomrtStream *s, Diag *d) {
  RtrtGpu *g = gpu_of(s);
  if (!g || !g->h) return LOOM_OK;
  LoomStatus st = g->drv->set_current(g->h, s->device, d);
  return st == LOOM_OK ? g->drv->stream_synchronize(g->h, s->device, s->h, d) : st;
}

LoomStatus rtrt_gpu_alloc(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, size_t bytes, void **out, Diag *d) {
  RtrtGpu *g;
  RtrtDev *dv;
  uint64_t p = 0;
  LoomStatus st = device_get(rt, kind, device, &g, &dv, d);
  if (st == LOOM_OK) st = rt_gpu_pool_alloc(dv->pool, bytes, &p, d);
  *out = st == LOOM_OK ? (void *)(uintptr_t)p : NULL;
  return st;
}

LoomStatus rtrt_gpu_free(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *ptr, Diag *d) {
  RtrtGpu *g;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, kind, device, &g, &dv, d);
  if (st == LOOM_OK) st = g->drv->synchronize(g->h, device, d); /* the pool is stream-blind */
  return st == LOOM_OK ? rt_gpu_pool_free(dv->pool, (uint64_t)(uintptr_t)ptr, d) : st;
}

LoomStatus rtrt_gpu_copy(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *dst, const void *src, size_t bytes,
                         int32_t dir, Diag *d) {
  if (dir != 0 && dir != 1)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loomrt copy: kind %d (0: host to device, 1: device to host)", dir);
  RtrtGpu *g;
  RtrtDev *dv;
  LoomStatus st = device_get(rt, kind, device, &g, &dv, d);
  if (st == LOOM_OK) st = g->drv->synchronize(g->h, device, d); /* kernels on any stream first */
  if (st != LOOM_OK || bytes == 0) return st;
  if (dir == 0) return g->drv->copy_h2d(g->h, device, (uint64_t)(uintptr_t)dst, src, bytes, NULL, d);
  return g->drv->copy_d2h(g->h, device, dst, (uint64_t)(uintptr_t)src, bytes, NULL, d);
}

/* ---- code --------------------------------------------------------------------------------------------- */
/* The most threads fn can launch with, a multiple of the wave (0 on an error). */
static int max_block_of(RtrtGpu *g, int device, void *fn, int wave, Diag *d) {
  RtGpuFuncAttrs at;
  if (g->drv->func_attrs(g->h, device, fn, &at, d) != LOOM_OK) return 0;
  return (at.max_threads_per_block > 1024 ? 1024 : at.max_threads_per_block) / wave * wave;
}

/* An elementwise entry's block size (a multiple of the wave with the most resident threads per
 * multiprocessor, ties to the smaller: gpu_kernels.c's elem_config) and the resident blocks of it. */
static LoomStatus elem_config(RtrtGpu *g, int device, const RtrtDev *dv, void *fn, int wave, int *block, int *grid, Diag *d) {
  RtGpuFuncAttrs at;
  LoomStatus st = g->drv->func_attrs(g->h, device, fn, &at, d);
  if (st != LOOM_OK) return st;
  int limit = at.max_threads_per_block < dv->info.max_threads_per_block ? at.max_threads_per_block : dv->info.max_threads_per_block;
  int best = 0, best_threads = -1, best_per_sm = 1;
  for (int bs = wave; bs <= limit; bs += wave) {
    int blocks = 0;
    st = g->drv->occupancy(g->h, device, fn, bs, 0, &blocks, d);
    if (st != LOOM_OK) return st;
    if (blocks * bs > best_threads) {
      best_threads = blocks * bs;
      best = bs;
      best_per_sm = blocks;
    }
  }
  if (best == 0 || best_threads <= 0) return diag_error(d, LOOM_ERR_BACKEND, "a bundled kernel cannot run on %s device %d", g->drv->name, device);
  *block = best;
  *grid = dv->info.sm_count * (best_per_sm > 0 ? best_per_sm : 1);
  return LOOM_OK;
}

/* The bundle's code record for kernel kr on a device (-1 when none), and what GPU code it has (messages). */
static int32_t pick_code(const LoomrtBundle *b, const RtBundleKernel *kr, LoomDeviceKind kind, const RtGpuDeviceInfo *info,
                         char *have, size_t cap) {
  int32_t best = -1, score = -1;
  size_t hn = 0;
  have[0] = 0;
  int sm = info->arch_major * 10 + info->arch_minor;
  unsigned gfx = 0;
  if (kind == LOOM_DEVICE_HIP && !strncmp(info->arch, "gfx", 3)) {
    for (const char *p = info->arch + 3; *p && *p != ':'; p++) {
      int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
      if (v < 0 || gfx > 0xfff) {
        gfx = 0;
        break;
      }
      gfx = gfx * 16 + (unsigned)v;
    }
  }
  for (uint32_t i = kr->code_first; i < kr->code_first + kr->ncode; i++) {
    const RtBundleTarget *t = &b->b->targets[b->b->codes[i].target];
    bool mine = kind == LOOM_DEVICE_CUDA ? t->kind == RB_TARGET_CUDA_CUBIN || t->kind == RB_TARGET_CUDA_PTX
                                         : t->kind == RB_TARGET_AMDGPU;
    if (!mine) continue;
    hn += (size_t)snprintf(have + hn, hn < cap ? cap - hn : 0, "%s%s", hn ? ", " : "", t->name);
    int32_t sc = -1; /* NVIDIA: exact cubin > same-major older cubin > PTX it can JIT, the newest first */
    if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch == sm) sc = 3000;
    else if (t->kind == RB_TARGET_CUDA_CUBIN && (int)t->arch / 10 == sm / 10 && (int)t->arch < sm) sc = 2000 + (int)t->arch;
    else if (t->kind == RB_TARGET_CUDA_PTX && (int)t->arch <= sm) sc = 1000 + (int)t->arch;
    else if (t->kind == RB_TARGET_AMDGPU && gfx && t->arch == gfx) sc = 3000; /* AMD: the chip's own code object */
    if (sc > score) {
      score = sc;
      best = (int32_t)i;
    }
  }
  if (hn >= cap && cap > 4) memcpy(have + cap - 4, "...", 4);
  return best;
}

/* Loads kernel record ki's code for the device (b->lock held). */
static LoomStatus load_code(LoomrtBundle *b, int32_t ki, LoomDeviceKind kind, int device, RtrtGpu *g, RtrtDev *dv,
                            RtrtGpuCode **out, Diag *d) {
  LoomrtRuntime *rt = b->rt;
  int v = vendor_of(kind);
  if (!b->gpu[v]) {
    b->gpu_ndev[v] = g->ndev;
    b->gpu[v] = ctx_calloc(&rt->ctx, (size_t)b->b->nkernel * (size_t)g->ndev + 1, sizeof *b->gpu[v]);
    if (!b->gpu[v]) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU code table");
  }
  RtrtGpuCode **slot = &b->gpu[v][(size_t)ki * (size_t)b->gpu_ndev[v] + (size_t)device];
  if (*slot) {
    *out = *slot;
    return LOOM_OK;
  }
  const RtBundleKernel *kr = &b->b->kernels[ki];
  char have[200];
  int32_t best = pick_code(b, kr, kind, &dv->info, have, sizeof have);
  if (best < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "bundle %s: entry '%s' has no code for %s device %d (%s, %s): it has %s", b->what,
                      kr->name, g->drv->name, device, dv->info.name, dv->info.arch,
                      have[0] ? have
                      : kind == LOOM_DEVICE_CUDA ? "no NVIDIA code (rebuild with --target sm_XX,ptx)"
                                                 : "no AMD code (rebuild with --target gfxNNN)");
  const RtBundleCode *code = &b->b->codes[best];
  uint32_t tkind = b->b->targets[code->target].kind;
  LoomStatus st = rtrt_check_code(b, best, d);
  if (st == LOOM_OK && tkind == RB_TARGET_CUDA_PTX && code->blob[code->blob_size - 1] != 0)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: the PTX of '%s' is not NUL-terminated: corrupted", b->what, kr->name);
  RtrtGpuCode *c = st == LOOM_OK ? ctx_calloc(&rt->ctx, 1, sizeof *c) : NULL;
  if (st == LOOM_OK && !c) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: GPU code");
  if (st == LOOM_OK) st = g->drv->module_load(g->h, device, code->blob, (size_t)code->blob_size, &c->mod, d);
  if (st == LOOM_OK) {
    memcpy(c->facts, code->facts, sizeof c->facts);
    c->wave = code->facts[RB_GPU_WAVE] >= 32 && code->facts[RB_GPU_WAVE] <= 64 ? (int)code->facts[RB_GPU_WAVE] : 32;
    if (dv->info.wave > 0 && dv->info.wave != c->wave)
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: the code of '%s' was compiled for waves of %d threads; %s device %d "
                      "runs %d: corrupted or built for another chip", b->what, kr->name, c->wave, g->drv->name, device, dv->info.wave);
    for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
      if (code->facts[RB_GPU_ENTRIES] & (1u << i)) st = g->drv->module_function(g->h, device, c->mod, code->names[i], &c->fn[i], d);
  }
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++) {
    if (!(code->facts[RB_GPU_ENTRIES] & (1u << i))) continue;
    if (c->facts[RB_GPU_STRATEGY] == CG_GPU_ELEMENTWISE && (i == E_MAIN || i == E_VEC || i == E_VECW || i == E_FLATV))
      st = elem_config(g, device, dv, c->fn[i], c->wave, &c->elem_block[i], &c->elem_grid[i], d);
  }
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_CACHED)) c->cached_max_block = max_block_of(g, device, c->fn[E_CACHED], c->wave, d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_CACHEDV)) c->cachedv_max_block = max_block_of(g, device, c->fn[E_CACHEDV], c->wave, d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_FINISHB)) c->finishb_max_block = max_block_of(g, device, c->fn[E_FINISHB], c->wave, d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_MAIN) && c->facts[RB_GPU_STRATEGY] != CG_GPU_ELEMENTWISE)
    c->main_max_block = max_block_of(g, device, c->fn[E_MAIN], c->wave, d);
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_PARTV)) {
    int per_sm = 1;
    st = g->drv->occupancy(g->h, device, c->fn[E_PARTV], (int)c->facts[RB_GPU_BLOCK], 0, &per_sm, d);
    c->partv_grid_max = dv->info.sm_count * (per_sm > 0 ? per_sm : 1);
  }
  if (st == LOOM_OK && (code->facts[RB_GPU_ENTRIES] & CG_ENTRY_PART) && c->facts[RB_GPU_STRATEGY] == CG_GPU_COL) {
    int per_sm = 0; /* as libloom (gpu_kernels.c): the COL parts' blocks of 256 */
    st = g->drv->occupancy(g->h, device, c->fn[E_PART], 256, 0, &per_sm, d);
    c->col_part_resident = dv->info.sm_count * (per_sm > 0 ? per_sm : 0);
  }
  if (st == LOOM_OK && d->status != LOOM_OK) st = d->status;
  if (st != LOOM_OK) {
    if (c && c->mod) g->drv->module_unload(g->h, device, c->mod);
    ctx_free(&rt->ctx, c);
    return st;
  }
  *slot = c;
  *out = c;
  return LOOM_OK;
}

/* ---- launch: the shared policy (runtime/gpu/gpu_launch_policy.c) over a bundle's loaded code ---------------- */
typedef struct Launcher {
  RtrtGpu *g;
  RtrtDev *dv;
  int device;
  void *stream;
  const RtrtGpuCode *c;
} Launcher;

static uint32_t code_loaded(void *user) { return ((Launcher *)user)->c->facts[RB_GPU_ENTRIES]; }

/* A bundle's code has every entry its lowering made (bundle_format.c checks it): nothing to load. */
static LoomStatus code_need(void *user, uint32_t mask, Diag *d) {
  const Launcher *L = user;
  if ((mask & L->c->facts[RB_GPU_ENTRIES]) != mask)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the launch asks for GPU entries %#x, the code has %#x", mask,
                      L->c->facts[RB_GPU_ENTRIES]);
  return LOOM_OK;
}

static int code_limit(void *user, int what, int e) {
  const RtrtGpuCode *c = ((Launcher *)user)->c;
  switch (what) {
  case RT_LIM_ELEM_BLOCK: return c->elem_block[e];
  case RT_LIM_ELEM_GRID: return c->elem_grid[e];
  case RT_LIM_CACHED_BLOCK: return c->cached_max_block;
  case RT_LIM_CACHEDV_BLOCK: return c->cachedv_max_block;
  case RT_LIM_FINISHB_BLOCK: return c->finishb_max_block;
  case RT_LIM_MAIN_BLOCK: return c->main_max_block;
  case RT_LIM_COL_PART_RESIDENT: return c->col_part_resident;
  default: return c->partv_grid_max;
  }
}

static LoomStatus code_launch(void *user, int e, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  const Launcher *L = user;
  uint32_t gr[3] = {grid, 1, 1}, bl[3] = {block, 1, 1};
  void *params[1] = {words};
  return L->g->drv->launch(L->g->h, L->device, L->c->fn[e], gr, bl, 0, L->stream, params, d);
}

/* the pool does not track streams: the partials go back only once the stream is done with them */
static LoomStatus code_settle(void *user, Diag *d) {
  const Launcher *L = user;
  return L->g->drv->stream_synchronize(L->g->h, L->device, L->stream, d);
}

static LoomStatus policy(Launcher *L, const RtBundleKernel *k, uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const uint32_t *f = L->c->facts;
  RtGpuLauncher pl = {
      .ndim = k->ndim, .nkeep = k->nkeep, .nbuf = k->nbuf, .bufs = k->bufs, .scan = false, /* never bundled */
      .split_reduce = f[RB_GPU_SPLIT_REDUCE], .split_map = f[RB_GPU_SPLIT_MAP], .strategy = f[RB_GPU_STRATEGY],
      .block = f[RB_GPU_BLOCK], .vec_lanes = f[RB_GPU_VEC_LANES], .vec_align = f[RB_GPU_VEC_ALIGN],
      .acc_size = f[RB_GPU_ACC_SIZE], .cache_k = f[RB_GPU_CACHE_K], .cache_lanes = f[RB_GPU_CACHE_LANES],
      .part_lanes = f[RB_GPU_PART_LANES], .entries = f[RB_GPU_ENTRIES], .wave = L->c->wave,
      .vecw_when_vec_loaded = true, .pool = L->dv->pool, .user = L, .loaded = code_loaded, .need = code_need,
      .limit = code_limit, .launch = code_launch, .settle = code_settle};
  return rt_gpu_launch_policy(&pl, words, no, nr, d);
}

LoomStatus rtrt_gpu_launch(LoomrtBundle *b, int32_t ki, LoomrtStream *s, const int64_t *shape, void *const *bufs,
                           const int64_t *strides, int64_t no, int64_t nr, Diag *d) {
  Launcher L = {.device = s->device, .stream = s->h};
  LoomStatus st = device_get(b->rt, s->kind, s->device, &L.g, &L.dv, d);
  RtrtGpuCode *c = NULL;
  if (st == LOOM_OK) {
    pthread_mutex_lock(&b->lock);
    st = load_code(b, ki, s->kind, s->device, L.g, L.dv, &c, d);
    pthread_mutex_unlock(&b->lock);
  }
  if (st != LOOM_OK) return st;
  L.c = c;
  const RtBundleKernel *k = &b->b->kernels[ki];
  int nd = k->ndim, nb = k->nbuf;
  size_t nwords = (size_t)(nd + nb + nb * nd + CG_GPU_EXTRA + k->nparam);
  if (c->facts[RB_GPU_NWORDS] != (uint32_t)nwords)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: the code of '%s' takes %u parameter words, its signature %zu: corrupted",
                      b->what, k->name, c->facts[RB_GPU_NWORDS], nwords);
  uint64_t stackw[256], *words = nwords <= 256 ? stackw : ctx_calloc(&b->rt->ctx, nwords, sizeof *words);
  if (!words) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel parameters");
  for (int i = 0; i < nd; i++) words[i] = (uint64_t)shape[i];
  for (int bb = 0; bb < nb; bb++) {
    words[nd + bb] = (uint64_t)(uintptr_t)bufs[bb];
    for (int i = 0; i < nd; i++) words[nd + nb + bb * nd + i] = (uint64_t)strides[(size_t)bb * (size_t)nd + (size_t)i];
  }
  for (size_t i = (size_t)(nd + nb + nb * nd); i < nwords; i++) words[i] = 0;
  for (int p = 0; p < k->nparam; p++) words[nd + nb + nb * nd + CG_GPU_EXTRA + p] = (uint64_t)(uintptr_t)bufs[nb + p];
  st = policy(&L, k, words, no, nr, d);
  if (words != stackw) ctx_free(&b->rt->ctx, words);
  return st;
}

void rtrt_gpu_bundle_free(LoomrtBundle *b) {
  for (int v = 0; v < RTRT_NVENDOR; v++) {
    if (!b->gpu[v]) continue;
    RtrtGpu *g = b->rt->gpu[v];
    for (size_t i = 0; i < (size_t)b->b->nkernel * (size_t)b->gpu_ndev[v]; i++)
      if (b->gpu[v][i]) {
        if (g && g->h) {
          Diag d = {.status = LOOM_OK};
          int device = (int)(i % (size_t)b->gpu_ndev[v]);
          g->drv->set_current(g->h, device, &d);
          g->drv->module_unload(g->h, device, b->gpu[v][i]->mod);
        }
        ctx_free(&b->rt->ctx, b->gpu[v][i]);
      }
    ctx_free(&b->rt->ctx, b->gpu[v]);
    b->gpu[v] = NULL;
  }
}

void rtrt_gpu_destroy(LoomrtRuntime *rt) {
  for (int v = 0; v < RTRT_NVENDOR; v++) {
    RtrtGpu *g = rt->gpu[v];
    if (!g) continue;
    for (int i = 0; g->devs && i < g->ndev; i++)
      if (g->devs[i].ready) {
        Diag d = {.status = LOOM_OK};
        g->drv->set_current(g->h, i, &d);
        rt_gpu_pool_destroy(g->devs[i].pool);
        g->drv->release(g->h, i);
      }
    if (g->h) g->drv->unload(g->h);
    ctx_free(&rt->ctx, g->devs);
    ctx_free(&rt->ctx, g);
    rt->gpu[v] = NULL;
  }
}
