/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_kernels.c: the GPU kernel table's values (GpuFn, gpu_rt.h): kernels compiled for a device (or loaded
 * from the disk cache) entry group by entry group, and the background tier-up.
 *
 * Kernels. Per device, the kernel table (runtime/cache.c, never evicted: plans and user kernels keep
 * pointers into it) maps the kernel key and the target's description to a GpuFn. Its disk cache key
 * (Loom's version and build-id (rt_build_id), the target's description: LLVM version, chip, block; and
 * ir_print_kernel_key) finds a binary in the disk cache (runtime/disk_cache.h); on a disk miss the kernel is compiled by the device's
 * CgTarget, linked by the driver where it has a link step (PTX -> cubin) and stored. The payload is
 * a GpuMeta header (how to launch: strategy, entry names, block, wave, vector lanes, accumulator size)
 * followed by the binary, whatever its kind (a cubin, an AMDGPU code object).
 *
 * Cold compile. The driver's JIT (ptxas for PTX) dominates a new kernel's cost (bench/results: ~15-20 ms
 * of ~25 on the H200 for a small elementwise kernel) and grows with the code, so only the entries a
 * launch needs are compiled: an elementwise kernel's vector entry first, its scalar entry when a launch
 * with unaligned or strided arrays needs it; a reduction is only described (the launch facts of its
 * lowering) until a launch picks its entries (a group per module, a disk-cache entry per group).
 * Elementwise kernels are linked at the driver's final JIT level (RtGpuJit: the driver picks it and its
 * default, and says why); reductions keep the driver's default. Split reductions use a number of parts that depends on the sizes only (never on
 * the device), so a sum has the same bits run after run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/bundle_build.h"
#include "runtime/gpu/gpu_rt.h"


/* ---- tiers (gpu_rt.h's TierJob) --------------------------------------------------------------------- */
/* Runtimes with a tier thread. A process that exits without loom_context_destroy must not leave the
 * thread inside the driver while the driver is torn down: the exit handler stops every thread after
 * its current tier-up (the queued ones are dropped; their tier-0 entries stay on disk). Exit is
 * process-wide, so this list is the one mutable global of the library (STYLE.md otherwise forbids
 * them); it is guarded by tier_list_lock and holds only runtimes not yet destroyed. */
static pthread_mutex_t tier_list_lock = PTHREAD_MUTEX_INITIALIZER;
static GpuRt *tier_list;
static pthread_once_t tier_atexit_once = PTHREAD_ONCE_INIT;
static void tier_stop_thread(GpuRt *g, bool abandon) {
  pthread_mutex_lock(&g->tier_lock);
  g->tier_stop = true;
  g->tier_abandon = abandon;
  pthread_cond_broadcast(&g->tier_cv);
  pthread_mutex_unlock(&g->tier_lock);
  pthread_join(g->tier_thread, NULL);
  g->tier_started = false;
}
void rt_gpu_tiers_stop_all(void) {
  pthread_mutex_lock(&tier_list_lock);
  for (GpuRt *g = tier_list; g; g = g->tier_next)
    if (g->tier_started && g->tier_pid == getpid()) tier_stop_thread(g, true);
  tier_list = NULL;
  pthread_mutex_unlock(&tier_list_lock);
}
/* The exit handler is a fallback only: exit() runs handlers in the reverse order of registration, and a
 * driver library loaded after this one was registered (the PTX JIT, loaded by the first link: after the
 * first tier-up was queued when every kernel came from the disk cache) is torn down before it runs, under
 * a tier-up still compiling (found on the H200: a free() of a non-heap pointer inside the JIT at exit).
 * Programs stop the threads before exit: loom_context_destroy, or loom_stop_background_work (the Python
 * package calls it from an atexit handler, which runs before any C one). */
static void tier_at_exit(void) { rt_gpu_tiers_stop_all(); }
static void tier_register_atexit(void) { atexit(tier_at_exit); }

void rt_gpu_tiers_init(GpuRt *g) {
  g->tiers = g->jit.tiers && g->drv->link != NULL;
  pthread_mutex_init(&g->tier_lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the idle wait must not follow the wall clock */
  pthread_cond_init(&g->tier_cv, &ca);
  pthread_condattr_destroy(&ca);
}

void rt_gpu_tiers_close(GpuRt *g) {
  pthread_mutex_lock(&tier_list_lock);
  for (GpuRt **p = &tier_list; *p; p = &(*p)->tier_next)
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
}

/* ---- kernels ----------------------------------------------------------------------------------------- */
/* The most threads fn can launch with, a multiple of the wave (0 on an error). */
static int max_block_of(GpuRt *g, int device, void *fn, int wave, Diag *d) {
  RtGpuFuncAttrs at;
  if (g->drv->func_attrs(g->handle, device, fn, &at, d) != LOOM_OK) return 0;
  return (at.max_threads_per_block > 1024 ? 1024 : at.max_threads_per_block) / wave * wave;
}

/* An elementwise entry's launch shape: the block size (a multiple of the device's wave, within the
 * function's and the device's limits) with the most resident threads per multiprocessor, ties to the
 * smaller block, << 32 | the resident blocks of that size on the device; 0 on an error. */
static uint64_t elem_config(GpuRt *g, const GpuDev *dev, void *fn, Diag *d) {
  const RtGpuDriver *drv = g->drv;
  RtGpuFuncAttrs at;
  if (drv->func_attrs(g->handle, dev->index, fn, &at, d) != LOOM_OK) return 0;
  int wave = dev->info.wave > 0 ? dev->info.wave : 32;
  int limit = at.max_threads_per_block < dev->info.max_threads_per_block ? at.max_threads_per_block
                                                                         : dev->info.max_threads_per_block;
  int best = 0, best_threads = -1, best_per_sm = 1;
  for (int bs = wave; bs <= limit; bs += wave) {
    int blocks = 0;
    if (drv->occupancy(g->handle, dev->index, fn, bs, 0, &blocks, d) != LOOM_OK) return 0;
    if (blocks * bs > best_threads) {
      best_threads = blocks * bs;
      best = bs;
      best_per_sm = blocks;
    }
  }
  if (best == 0 || best_threads <= 0) {
    diag_error(d, LOOM_ERR_BACKEND, "the kernel cannot run on %s device %d", drv->name, dev->index);
    return 0;
  }
  /* A/B knobs (timings only): LOOM_GPU_ELEM_BLOCK forces the block size (a multiple of the wave within
   * the limit), LOOM_GPU_ELEM_WAVES multiplies the grid cap (0: no cap, one pass of the grid-stride loop) */
  const char *kb = getenv("LOOM_GPU_ELEM_BLOCK"), *kw = getenv("LOOM_GPU_ELEM_WAVES");
  int fb = kb && *kb ? atoi(kb) : 0;
  if (fb >= wave && fb <= limit && fb % wave == 0) {
    int blocks = 0;
    if (drv->occupancy(g->handle, dev->index, fn, fb, 0, &blocks, d) == LOOM_OK && blocks > 0) {
      best = fb;
      best_per_sm = blocks;
    }
  }
  uint64_t grid = (uint64_t)dev->info.sm_count * (uint64_t)(best_per_sm > 0 ? best_per_sm : 1);
  if (kw && *kw) {
    int w = atoi(kw);
    grid = w <= 0 ? UINT32_MAX : grid * (uint64_t)w;
    if (grid > UINT32_MAX) grid = UINT32_MAX;
  }
  return (uint64_t)(uint32_t)best << 32 | (uint32_t)grid;
}

/* Loads a binary holding the entries m->entries into a new module of f and reads their launch limits.
 * The device is current. */
static LoomStatus load_group(GpuRt *g, GpuDev *dev, GpuFn *f, const GpuMeta *m, const void *binary, size_t size,
                             Diag *d) {
  const RtGpuDriver *drv = g->drv;
  int device = dev->index;
  if (f->nmodules >= 2 * CG_NENTRY || !(m->entries & ~f->loaded))
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a kernel group adds no entries");
  void *mod = NULL;
  LoomStatus st = drv->module_load(g->handle, device, binary, size, &mod, d);
  void *fns[CG_NENTRY];
  memset(fns, 0, sizeof fns);
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (m->entries & (1u << i)) st = drv->module_function(g->handle, device, mod, m->names[i], &fns[i], d);
  if (st != LOOM_OK) {
    if (mod) drv->module_unload(g->handle, device, mod);
    return st;
  }
  if (!f->loaded) { /* the first group: the launch facts, unless described already (reductions) */
    if (f->meta.magic != GPU_META_MAGIC) f->meta = *m;
    f->elem_cfg = (uint64_t)256 << 32 | (uint32_t)(dev->info.sm_count * 8);
    f->cfg_entry = -1;
  }
  int wave = f->meta.wave > 0 ? f->meta.wave : 32;
  uint32_t fresh = m->entries & ~f->loaded;
  for (int i = 0; i < CG_NENTRY; i++)
    if (fresh & (1u << i)) {
      f->fn[i] = fns[i];
      memcpy(f->meta.names[i], m->names[i], sizeof f->meta.names[i]);
    }
  for (int i = 0; i < CG_NENTRY; i++) /* (a ROW reduction's flatv: gpu_rowflat.c, launched as elementwise ones) */
    if (m->strategy == CG_GPU_ELEMENTWISE || i == E_FLATV)
      if (fresh & (1u << i))
        __atomic_store_n(&f->elem_max_block[i], max_block_of(g, device, f->fn[i], wave, d), __ATOMIC_RELEASE);
  if (fresh & CG_ENTRY_CACHED) f->cached_max_block = max_block_of(g, device, f->fn[E_CACHED], wave, d);
  if (fresh & CG_ENTRY_CACHEDV) f->cachedv_max_block = max_block_of(g, device, f->fn[E_CACHEDV], wave, d);
  if (fresh & CG_ENTRY_FINISHB) f->finishb_max_block = max_block_of(g, device, f->fn[E_FINISHB], wave, d);
  if ((fresh & CG_ENTRY_MAIN) && m->strategy != CG_GPU_ELEMENTWISE)
    f->main_max_block = max_block_of(g, device, f->fn[E_MAIN], wave, d);
  if (fresh & CG_ENTRY_PARTV) {
    int per_sm = 1;
    if (drv->occupancy(g->handle, device, f->fn[E_PARTV], m->block, 0, &per_sm, d) == LOOM_OK)
      f->partv_grid_max = dev->info.sm_count * (per_sm > 0 ? per_sm : 1);
  }
  if ((fresh & CG_ENTRY_PART) && m->strategy == CG_GPU_COL) { /* the COL parts' blocks of 256 (gpu_launch_policy.c) */
    int per_sm = 0;
    if (drv->occupancy(g->handle, device, f->fn[E_PART], 256, 0, &per_sm, d) == LOOM_OK && per_sm > 0)
      f->col_part_resident = dev->info.sm_count * per_sm;
  }
  /* elementwise: the block size and grid cap of the first entry loaded serve both */
  if (m->strategy == CG_GPU_ELEMENTWISE && !(f->loaded & (CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW | CG_ENTRY_FLATV))) {
    f->cfg_entry = (fresh & CG_ENTRY_VECW) ? E_VECW : (fresh & CG_ENTRY_VEC) ? E_VEC : (fresh & CG_ENTRY_FLATV) ? E_FLATV : E_MAIN;
    uint64_t cfg = elem_config(g, dev, f->fn[f->cfg_entry], d);
    if (cfg) f->elem_cfg = cfg;
  }
  st = d->status == LOOM_OK ? LOOM_OK : d->status;
  if (st != LOOM_OK) {
    drv->module_unload(g->handle, device, mod);
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
               .cache_k = gk->cache_k, .part_lanes = gk->part_lanes, .cache_lanes = gk->cache_lanes,
               .wave = gk->wave > 0 ? gk->wave : 32, .binary = gk->kind};
  for (int i = 0; i < CG_NENTRY; i++) memcpy(m.names[i], cg_gpu_entry_name((CgGpuKernel *)gk, i), 64);
  return m;
}

typedef struct RetiredDisk {
  struct RetiredDisk *next;
  DiskCache *disk;
} RetiredDisk;

/* (Re)opens g's disk cache with the context's settings (loom_set_cache changed them, or first use); the
 * cache it replaces is kept open until the state goes. Caller holds device_lock. */
static void reopen_disk(LoomContext *ctx, GpuRt *g) {
  Diag dd = {.status = LOOM_OK};
  DiskCache *fresh = NULL;
  unsigned gen = 0;
  if (rt_disk_cache_open_configured(ctx, &fresh, &gen, &dd) != LOOM_OK) {
    fprintf(stderr, "loom: warning: the kernel disk cache is off: %s\n", dd.msg);
    fresh = NULL;
  }
  DiskCache *old = g->disk;
  if (old) {
    RetiredDisk *r = ctx_alloc(ctx, sizeof *r);
    if (!r) { /* keep the old cache rather than close one the tier-up thread may be using */
      rt_disk_cache_close(fresh);
      return;
    }
    r->disk = old;
    r->next = g->disk_retired;
    g->disk_retired = r;
  }
  __atomic_store_n(&g->disk, fresh, __ATOMIC_RELEASE);
  g->disk_tried = true;
  g->disk_generation = gen;
}

void rt_gpu_disk_close(LoomContext *ctx, GpuRt *g) {
  rt_disk_cache_close(g->disk);
  g->disk = NULL;
  for (RetiredDisk *r = g->disk_retired, *next; r; r = next) {
    next = r->next;
    rt_disk_cache_close(r->disk);
    ctx_free(ctx, r);
  }
  g->disk_retired = NULL;
}

/* Stores meta + binary (+ the code for a tier-0 payload: code_size bytes and a NUL) under key in the disk
 * cache; a failure is a warning (the cache is an optimization). */
static void disk_store(LoomContext *ctx, DiskCache *disk, const char *key, GpuMeta m, const void *binary,
                       size_t binary_size, const char *code, size_t code_size) {
  size_t code_bytes = m.tier == 0 && code ? code_size + 1 : 0;
  m.binary_bytes = (uint32_t)binary_size;
  m.code_bytes = (uint32_t)code_bytes;
  unsigned char *payload = ctx_alloc(ctx, sizeof m + binary_size + code_bytes);
  if (!payload) return;
  memcpy(payload, &m, sizeof m);
  memcpy(payload + sizeof m, binary, binary_size);
  if (code_bytes) {
    memcpy(payload + sizeof m + binary_size, code, code_size);
    payload[sizeof m + binary_size + code_size] = 0;
  }
  Diag dd = {.status = LOOM_OK};
  if (rt_disk_cache_store(disk, key, payload, sizeof m + binary_size + code_bytes, &dd) != LOOM_OK)
    fprintf(stderr, "loom: warning: storing a kernel in the disk cache failed: %s\n", dd.msg);
  ctx_free(ctx, payload);
}

/* The tier-up of one job (the background thread): the final JIT level, then the entries' handles
 * swapped under device_lock when the new code can launch with the block size in use, then the disk. */
static void tier_up(LoomContext *ctx, GpuRt *g, TierJob *j) {
  const RtGpuDriver *drv = g->drv;
  GpuDev *dev = &g->devs[j->device];
  double t0 = rt_now_ms();
  Diag d = {.status = LOOM_OK};
  void *binary = NULL;
  size_t binary_size = 0;
  void *mod = NULL;
  void *fns[CG_NENTRY];
  memset(fns, 0, sizeof fns);
  int wave = j->meta.wave > 0 ? j->meta.wave : 32;
  LoomStatus st = drv->set_current(g->handle, j->device, &d);
  if (st == LOOM_OK)
    st = drv->link(g->handle, j->device, j->code, j->code_size, j->name, j->level, &binary, &binary_size, &d);
  if (st == LOOM_OK) st = drv->module_load(g->handle, j->device, binary, binary_size, &mod, &d);
  int maxb[CG_NENTRY] = {0};
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (j->meta.entries & (1u << i)) {
      st = drv->module_function(g->handle, j->device, mod, j->meta.names[i], &fns[i], &d);
      if (st == LOOM_OK) maxb[i] = max_block_of(g, j->device, fns[i], wave, &d);
      if (st == LOOM_OK && maxb[i] < wave) st = LOOM_ERR_BACKEND; /* keeps tier 0 */
    }
  bool swapped = false;
  if (st == LOOM_OK) {
    pthread_mutex_lock(&ctx->rt->device_lock);
    GpuFn *f = j->f;
    if (f->nmodules < 2 * CG_NENTRY) {
      f->modules[f->nmodules++] = mod;
      /* an entry's block limit only goes down (the lower of the two codes'): a launch that reads it
       * and the handle in either order, before or after the swap, stays within both */
      for (int i = 0; i < CG_NENTRY; i++)
        if (j->meta.entries & (1u << i)) {
          int old = __atomic_load_n(&f->elem_max_block[i], __ATOMIC_ACQUIRE);
          if (maxb[i] < old) __atomic_store_n(&f->elem_max_block[i], maxb[i], __ATOMIC_RELEASE);
          __atomic_store_n(&f->fn[i], fns[i], __ATOMIC_RELEASE);
        }
      swapped = true;
      uint64_t cfg = f->cfg_entry >= 0 && (j->meta.entries & (1u << f->cfg_entry))
                         ? elem_config(g, dev, fns[f->cfg_entry], &d) : 0;
      if (cfg) __atomic_store_n(&f->elem_cfg, cfg, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&ctx->rt->device_lock);
  }
  if (mod && !swapped) drv->module_unload(g->handle, j->device, mod);
  if (ctx->dump_flags & IR_DUMP_TIME)
    rt_dump_printf(ctx, "# time gpu %s tier-up (JIT level %d): %.3f ms, %s\n", j->name, j->level,
            rt_now_ms() - t0, swapped ? "swapped" : d.status != LOOM_OK ? d.msg : "kept tier 0");
  DiskCache *disk = __atomic_load_n(&g->disk, __ATOMIC_ACQUIRE);
  if (st == LOOM_OK && disk) disk_store(ctx, disk, j->key, j->meta, binary, binary_size, NULL, 0);
  ctx_free(ctx, binary);
}

static void tier_job_free(LoomContext *ctx, TierJob *j) {
  ctx_free(ctx, j->key);
  ctx_free(ctx, j->code);
  ctx_free(ctx, j);
}

static void *tier_main(void *arg) {
  GpuRt *g = arg;
  LoomContext *ctx = g->ctx;
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
      double wait = TIER_IDLE_MS - (rt_now_ms() - g->last_compile_ms);
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

/* Queues the tier-up of the group `m` of f (its code and disk key are copied); false when it cannot (no
 * memory, no thread: the group stays at level 0 in this process). Caller holds device_lock. */
static bool tier_enqueue(LoomContext *ctx, GpuRt *g, int device, GpuFn *f, const GpuMeta *m, const char *key,
                         const char *code, size_t code_size, const char *name, int level) {
  if (!g->tier_started) {
    pthread_once(&tier_atexit_once, tier_register_atexit);
    if (pthread_create(&g->tier_thread, NULL, tier_main, g) != 0) {
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
  size_t kl = strlen(key) + 1;
  char *kc = j ? ctx_alloc(ctx, kl) : NULL, *cc = kc ? ctx_alloc(ctx, code_size + 1) : NULL;
  if (!cc) {
    ctx_free(ctx, kc);
    ctx_free(ctx, j);
    return false;
  }
  memcpy(kc, key, kl);
  memcpy(cc, code, code_size);
  cc[code_size] = 0;
  j->f = f;
  j->level = level;
  j->device = device;
  j->meta = *m;
  j->meta.tier = 1;
  j->key = kc;
  j->code = cc;
  j->code_size = code_size;
  snprintf(j->name, sizeof j->name, "%s", name);
  pthread_mutex_lock(&g->tier_lock);
  g->last_compile_ms = rt_now_ms();
  if (g->tier_tail) g->tier_tail->next = j;
  else g->tier_head = j;
  g->tier_tail = j;
  pthread_cond_signal(&g->tier_cv);
  pthread_mutex_unlock(&g->tier_lock);
  return true;
}

/* Whether a disk-cache payload is a usable group for f: its header, its entries (some new to f), its
 * binary's kind and size, and for a tier 0 payload (tiers on) the code after the binary. */
static bool payload_usable(const GpuRt *g, const GpuFn *f, const GpuMeta *m, const char *blob, size_t size) {
  size_t rest = size - sizeof *m;
  if (m->magic != GPU_META_MAGIC || m->binary != g->drv->binary || !(m->entries & ~f->loaded) ||
      (m->entries & ~m->entries_all) || m->binary_bytes == 0 || m->binary_bytes > rest)
    return false;
  if (m->tier == 1) return m->code_bytes == 0 && m->binary_bytes == rest;
  /* tiers off: a tier-0 entry is rebuilt */
  return m->tier == 0 && g->tiers && m->code_bytes > 0 && m->code_bytes == rest - m->binary_bytes &&
         blob[size - 1] == 0;
}

/* Adds the entries `want` (CG_ENTRY bits; the first group of a kernel may ask for entries it lacks:
 * see CgCompileOptions.entries) to f: from the disk cache, else compiled, linked and stored there
 * (counted in the stats either way). An elementwise group is compiled in tiers (see TierJob). Caller
 * holds device_lock. */
static LoomStatus add_group(LoomContext *ctx, GpuRt *g, GpuDev *dev, GpuFn *f, const KernelIr *k, uint32_t want,
                            Diag *d) {
  const RtGpuDriver *drv = g->drv;
  int device = dev->index;
  StrBuf kb;
  sb_init(&kb, ctx);
  bool elementwise = k->nkeep == k->ndim;
  /* the driver JIT's level: loom_set_jit_level's where the driver has levels (final_level >= 0) */
  int set_level = atomic_load(&ctx->rt->gpu_jit_level);
  int jit_level = !elementwise ? -1 : g->jit.final_level >= 0 && set_level >= 0 ? set_level : g->jit.final_level;
  sb_printf(&kb, "%sentries %u jit %d\n", f->key, want, jit_level);
  char *key = sb_take(&kb);
  if (!key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  if (!g->disk_tried || g->disk_generation != atomic_load(&ctx->rt->cache_generation)) reopen_disk(ctx, g);
  LoomStatus st = drv->set_current(g->handle, device, d);
  bool hit = false;
  if (st == LOOM_OK && g->disk) {
    void *blob = NULL;
    size_t blob_size = 0;
    Diag dd = {.status = LOOM_OK};
    if (rt_disk_cache_load(g->disk, key, &blob, &blob_size, &hit, &dd) != LOOM_OK) hit = false;
    GpuMeta m;
    if (hit && blob_size > sizeof m) memcpy(&m, blob, sizeof m);
    hit = hit && blob_size > sizeof m && payload_usable(g, f, &m, (const char *)blob, blob_size);
    if (hit) {
      for (int i = 0; i < CG_NENTRY; i++) m.names[i][63] = 0;
      const char *binary = (const char *)blob + sizeof m;
      st = load_group(g, dev, f, &m, binary, m.binary_bytes, d);
      if (st == LOOM_OK) {
        pthread_mutex_lock(&ctx->rt->stats_lock);
        ctx->rt->stats.cache_hits++;
        pthread_mutex_unlock(&ctx->rt->stats_lock);
        /* a tier-0 entry (its process ended before the tier-up): tier up here */
        if (m.tier == 0 && g->tiers && jit_level > 0)
          tier_enqueue(ctx, g, device, f, &m, key, binary + m.binary_bytes, m.code_bytes - 1, k->name, jit_level);
      }
    }
    if (blob) rt_disk_cache_free(g->disk, blob);
  }
  if (st == LOOM_OK && !hit) {
    double t0 = rt_now_ms();
    CgCompiled c;
    CgCompileOptions opt = {.entries = want};
    st = dev->target->compile(dev->target, k, &opt, &c, d);
    void *linked = NULL; /* the driver's binary, when it links */
    const void *binary = NULL;
    size_t binary_size = 0;
    double t_llvm = rt_now_ms(), t_link = t_llvm;
    bool compiled = st == LOOM_OK;
    bool tiered = compiled && elementwise && g->tiers && jit_level > 0; /* level 0 is the first tier itself */
    GpuMeta m;
    memset(&m, 0, sizeof m);
    if (compiled) {
      CgGpuKernel *gk = c.gpu;
      m = meta_of(gk);
      if (tiered) m.tier = 0;
      if (gk->kind != drv->binary || !gk->code)
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the %s target gave no code of kind %d for %s",
                        dev->target->name, (int)drv->binary, k->name);
      else if (drv->link)
        st = drv->link(g->handle, device, gk->code, gk->code_size, k->name, tiered ? 0 : jit_level, &linked,
                       &binary_size, d);
      else
        binary_size = gk->code_size;
      binary = drv->link ? linked : gk->code;
      t_link = rt_now_ms();
      if (ctx->dump_flags & IR_DUMP_TIME)
        rt_dump_printf(ctx, "# time gpu %s entries %#x: lower %.3f libdevice %.3f opt %.3f ptx %.3f (%zu bytes) "
                        "jit %.3f ms (level %d)\n", k->name, gk->entries, gk->phase_ms[0], gk->phase_ms[1],
                gk->phase_ms[2], gk->phase_ms[3], gk->code_size, t_link - t_llvm, tiered ? 0 : jit_level);
      if (st == LOOM_OK && !(m.entries & ~f->loaded))
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s has none of the entries %#x", k->name, want);
    }
    if (st == LOOM_OK) st = load_group(g, dev, f, &m, binary, binary_size, d);
    if (st == LOOM_OK && (ctx->dump_flags & IR_DUMP_TIME))
      rt_dump_printf(ctx, "# time gpu %s load %.3f ms, total %.3f ms\n", k->name, rt_now_ms() - t_link, rt_now_ms() - t0);
    double t_store = rt_now_ms();
    /* stored before the tier-up is queued, so the final entry always lands last; without a background
     * thread (no memory, no thread) the kernel stays at level 0 here, and its entry keeps tier 0 and
     * its code, so the next process tiers it up */
    if (st == LOOM_OK && g->disk)
      disk_store(ctx, g->disk, key, m, binary, binary_size, c.gpu->code, c.gpu->code_size);
    if (st == LOOM_OK && tiered)
      tier_enqueue(ctx, g, device, f, &m, key, c.gpu->code, c.gpu->code_size, k->name, jit_level);
    if (st == LOOM_OK && g->disk && (ctx->dump_flags & IR_DUMP_TIME))
      rt_dump_printf(ctx, "# time gpu %s disk store %.3f ms\n", k->name, rt_now_ms() - t_store);
    if (compiled) dev->target->release(dev->target, &c);
    ctx_free(ctx, linked);
    if (compiled && g->tier_started) {
      pthread_mutex_lock(&g->tier_lock);
      g->last_compile_ms = rt_now_ms();
      pthread_mutex_unlock(&g->tier_lock);
    }
    if (compiled) {
      pthread_mutex_lock(&ctx->rt->stats_lock);
      ctx->rt->stats.kernels_compiled++;
      ctx->rt->stats.compile_ms += rt_now_ms() - t0;
      pthread_mutex_unlock(&ctx->rt->stats_lock);
    }
  }
  ctx_free(ctx, key);
  return st;
}

/* Makes sure the entries `need` of f are loaded (compiling them on first need). */
LoomStatus rt_gpu_need_entries(LoomContext *ctx, GpuRt *g, GpuDev *dev, const GpuFn *cf, const KernelIr *k,
                               uint32_t need, Diag *d) {
  if (!(need & ~__atomic_load_n(&cf->loaded, __ATOMIC_ACQUIRE))) return LOOM_OK;
  GpuFn *f = (GpuFn *)cf; /* groups are added under device_lock; see struct GpuFn */
  pthread_mutex_lock(&ctx->rt->device_lock);
  LoomStatus st = LOOM_OK;
  if (need & ~f->loaded) st = add_group(ctx, g, dev, f, k, need & ~f->loaded, d);
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return st;
}

/* ---- the kernel table's values ------------------------------------------------------------------------- */
/* A new GpuFn for k: an elementwise kernel with a first entry loaded (the whole-vector one when
 * `npoints`, the point count of the launch to come or -1, is a multiple of its lanes); a reduction
 * described only (its entries are compiled as launches need them). */
static LoomStatus fn_make(void *user, const KernelIr *k, bool want_llvm_ir, int64_t npoints, void *value, Diag *d) {
  GpuDev *dev = user;
  LoomContext *ctx = dev->ctx;
  GpuRt *g = dev->g;
  GpuFn *f = value;
  if (want_llvm_ir) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the GPU kernel table keeps no LLVM IR");
  StrBuf kb;
  sb_init(&kb, ctx);
  sb_printf(&kb, "loom %s %s\n%s\n", LOOM_VERSION_STRING, rt_build_id(), dev->target->describe(dev->target));
  ir_print_kernel_key(k, &kb);
  f->key = sb_take(&kb);
  if (!f->key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  /* AOT bundles first (runtime/bundle_loom.c): every entry from the bundle's binary for the device's chip
   * (a cubin or PTX for its sm; an AMD code object for its gfx), no compile */
  CgGpuKernel bgk;
  const void *bimg = NULL;
  size_t bsize = 0;
  bool bundled = false;
  LoomStatus st = LOOM_OK;
  st = rt_bundles_find_gpu(ctx, k, g->drv->binary, dev->info.arch, &bgk, &bimg, &bsize, &bundled, d);
  if (st == LOOM_OK && bundled) {
    GpuMeta bm = meta_of(&bgk);
    pthread_mutex_lock(&ctx->rt->device_lock);
    st = g->drv->set_current(g->handle, dev->index, d);
    if (st == LOOM_OK) st = load_group(g, dev, f, &bm, bimg, bsize, d);
    pthread_mutex_unlock(&ctx->rt->device_lock);
  } else if (st == LOOM_OK && k->nkeep == k->ndim) { /* vecw, vec, else main (see CgCompileOptions.entries) */
    int lanes = cg_gpu_vec_lanes(k);
    pthread_mutex_lock(&ctx->rt->device_lock); /* one compile at a time per context: simple and safe */
    st = add_group(ctx, g, dev, f, k, lanes > 0 && npoints >= 0 && npoints % lanes == 0 ? CG_ENTRY_VECW : CG_ENTRY_VEC,
                   d);
    pthread_mutex_unlock(&ctx->rt->device_lock);
  } else if (st == LOOM_OK) { /* a reduction: its launch facts now, each entry when a launch first needs it */
    CgCompiled c;
    CgCompileOptions opt = {.entries = 0};
    st = dev->target->compile(dev->target, k, &opt, &c, d);
    if (st == LOOM_OK) {
      f->meta = meta_of(c.gpu);
      dev->target->release(dev->target, &c);
    }
  }
  if (st != LOOM_OK) {
    for (int m = 0; m < f->nmodules; m++) g->drv->module_unload(g->handle, dev->index, f->modules[m]);
    ctx_free(ctx, f->key);
    memset(f, 0, sizeof *f);
  }
  return st;
}

static void fn_drop(void *user, void *value) {
  GpuDev *dev = user;
  GpuFn *f = value;
  for (int m = 0; m < f->nmodules; m++) dev->g->drv->module_unload(dev->g->handle, dev->index, f->modules[m]);
  ctx_free(dev->ctx, f->key);
}

LoomStatus rt_gpu_kernels_create(GpuDev *dev, Diag *d) {
  static const RtCacheOps ops = {.make = fn_make, .drop = fn_drop};
  StrBuf sb;
  sb_init(&sb, dev->ctx);
  sb_printf(&sb, "loom %s\n%s", LOOM_VERSION_STRING, dev->target->describe(dev->target));
  char *desc = sb_take(&sb);
  if (!desc) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel table");
  LoomStatus st = rt_cache_create_ops(dev->ctx, desc, &ops, dev, sizeof(GpuFn), 0, &dev->kernels, d);
  ctx_free(dev->ctx, desc);
  return st;
}
