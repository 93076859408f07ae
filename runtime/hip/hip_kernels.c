/* hip_kernels.c: the AMD kernel table's values (HipFn, hip_rt.h): kernels compiled for a device's chip (or
 * loaded from the disk cache) entry group by entry group, the twin of runtime/cuda/cuda_kernels.c.
 *
 * Per device, the kernel table (runtime/cache.c, never evicted: plans and user kernels keep pointers into
 * it) maps the kernel key and the target's description to a HipFn. Its disk cache key (Loom's version,
 * the target's description: LLVM version, chip, wave, code object version, block; ir_print_kernel_key;
 * the entries) finds a code object in the disk cache exactly as the CUDA device finds a cubin; on a miss
 * the kernel is compiled by the device's AMDGPU target to an executable code object (LLVM, then comgr or
 * ld.lld: no JIT at load time, so no tiers) and stored. The payload is a HipMeta header (how to launch)
 * followed by the code object.
 *
 * As on NVIDIA, only the entries a launch needs are compiled: an elementwise kernel's vector entry first
 * (the whole-vector one when the point count is a multiple of its lanes), its scalar entry when a launch
 * with unaligned or strided arrays needs it; a reduction is only described (its launch facts) until a
 * launch picks its entries. Launch limits come from the loaded code: hipFuncGetAttribute's most threads
 * per block, rounded down to the wave, and the occupancy API's resident blocks per CU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_rt.h"

/* ---- launch limits ----------------------------------------------------------------------------------- */
static int max_block_of(RtHip *h, const RtHipKernel *k, int wave, Diag *d) {
  RtHipKernelAttrs at;
  if (rt_hip_kernel_attrs(h, k, &at, d) != LOOM_OK) return 0;
  int m = at.max_threads_per_block > 1024 ? 1024 : at.max_threads_per_block;
  return m / wave * wave;
}

LoomStatus rt_amd_best_block(RtHip *h, const RtHipKernel *k, int wave, int max_block, int *block, int *per_cu, Diag *d) {
  int best = wave, best_occ = 0;
  for (int bs = wave; bs <= max_block && bs <= 1024; bs *= 2) {
    int occ = 0;
    LoomStatus st = rt_hip_occupancy(h, k, bs, &occ, d);
    if (st != LOOM_OK) return st;
    if ((int64_t)occ * bs > (int64_t)best_occ * best) best = bs, best_occ = occ;
  }
  *block = best;
  *per_cu = best_occ > 0 ? best_occ : 1;
  return LOOM_OK;
}

/* The code object's metadata (comgr) against what launch() passes: every entry of the group takes one
 * explicit argument, Loom's parameter block of m->nwords words, by value at offset 0 (hipModuleLaunchKernel
 * copies it there and fills in the hidden arguments the metadata lists). Without comgr the check is left
 * to HIP, which reads the same metadata. */
static LoomStatus check_kernargs(LoomContext *ctx, const HipMeta *m, const void *co, size_t size, Diag *d) {
  CgAmdMeta meta;
  Diag md = {.status = LOOM_OK};
  if (cg_amdgpu_read_metadata(ctx, co, size, &meta, &md) != LOOM_OK)
    return md.status == LOOM_ERR_UNSUPPORTED ? LOOM_OK : diag_error(d, LOOM_ERR_BACKEND, "a kernel's code object: %s", md.msg);
  LoomStatus st = LOOM_OK;
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++) {
    if (!(m->entries & (1u << i))) continue;
    const CgAmdKernelMeta *k = NULL;
    for (int32_t j = 0; j < meta.nkernels && !k; j++)
      if (!strcmp(meta.kernels[j].name, m->names[i])) k = &meta.kernels[j];
    int nexplicit = 0;
    for (int32_t j = 0; k && j < k->nargs; j++) nexplicit += strncmp(k->args[j].kind, "hidden_", 7) != 0;
    if (!k || nexplicit != 1 || strcmp(k->args[0].kind, "by_value") || k->args[0].offset != 0 ||
        k->args[0].size != (uint32_t)m->nwords * 8)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the code object's metadata gives kernel %s %s%d explicit "
                      "arguments (the launcher passes one block of %d bytes by value at offset 0)", m->names[i],
                      k ? "" : "no entry, ", nexplicit, m->nwords * 8);
  }
  cg_amdgpu_meta_free(ctx, &meta);
  return st;
}

/* Loads a code object holding the entries m->entries into a new module of f and reads their limits. */
static LoomStatus load_group(HipRt *g, HipDev *dev, HipFn *f, const HipMeta *m, const void *co, size_t size, Diag *d) {
  if (f->nmodules >= CG_NENTRY || !(m->entries & ~f->loaded))
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a kernel group adds no entries");
  if (m->wave != dev->info.wave)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a code object for waves of %d on a device with waves of %d",
                      m->wave, dev->info.wave);
  RtHipModule *mod = NULL;
  LoomStatus st = check_kernargs(dev->ctx, m, co, size, d);
  if (st == LOOM_OK) st = rt_hip_module_load(g->hip, dev->index, co, size, &mod, d);
  RtHipKernel kern[CG_NENTRY];
  memset(kern, 0, sizeof kern);
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (m->entries & (1u << i)) st = rt_hip_module_kernel(g->hip, mod, m->names[i], &kern[i], d);
  int maxb[CG_NENTRY] = {0};
  for (int i = 0; i < CG_NENTRY && st == LOOM_OK; i++)
    if (m->entries & (1u << i)) {
      maxb[i] = max_block_of(g->hip, &kern[i], m->wave, d);
      if (st == LOOM_OK && d->status != LOOM_OK) st = d->status;
      if (st == LOOM_OK && maxb[i] < m->wave)
        st = diag_error(d, LOOM_ERR_BACKEND, "kernel entry %s cannot launch a wave of %d threads", m->names[i], m->wave);
    }
  if (st != LOOM_OK) {
    if (mod) rt_hip_module_unload(g->hip, mod);
    return st;
  }
  if (!f->loaded) { /* the first group: the launch facts, unless described already (reductions) */
    if (f->meta.magic != HIP_META_MAGIC) f->meta = *m;
    f->elem_block = 256;
    f->elem_grid_max = (int64_t)dev->info.cu_count * 8;
  }
  uint32_t fresh = m->entries & ~f->loaded;
  for (int i = 0; i < CG_NENTRY; i++)
    if (fresh & (1u << i)) {
      f->kern[i] = kern[i];
      f->max_block[i] = maxb[i];
      memcpy(f->meta.names[i], m->names[i], sizeof f->meta.names[i]);
    }
  if (fresh & CG_ENTRY_PARTV) {
    int per_cu = 1;
    if (rt_hip_occupancy(g->hip, &f->kern[HE_PARTV], m->block, &per_cu, d) == LOOM_OK)
      f->partv_grid_max = dev->info.cu_count * (per_cu > 0 ? per_cu : 1);
  }
  /* elementwise: the block size and grid cap of the first entry loaded serve all */
  if (m->strategy == CG_GPU_ELEMENTWISE && !(f->loaded & (CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW))) {
    int e = (fresh & CG_ENTRY_VECW) ? HE_VECW : (fresh & CG_ENTRY_VEC) ? HE_VEC : HE_MAIN;
    int bs = 256, per_cu = 1;
    if (rt_amd_best_block(g->hip, &f->kern[e], m->wave, f->max_block[e], &bs, &per_cu, d) == LOOM_OK) {
      f->elem_block = (uint32_t)bs;
      f->elem_grid_max = (int64_t)dev->info.cu_count * per_cu;
    }
  }
  st = d->status;
  if (st != LOOM_OK) {
    rt_hip_module_unload(g->hip, mod);
    return st;
  }
  f->modules[f->nmodules++] = mod;
  __atomic_store_n(&f->loaded, f->loaded | m->entries, __ATOMIC_RELEASE);
  return LOOM_OK;
}

static HipMeta meta_of(const CgGpuKernel *gk) {
  HipMeta m = {.magic = HIP_META_MAGIC, .entries_all = gk->entries_all, .entries = gk->entries,
               .strategy = gk->strategy, .block = gk->block, .vec_lanes = gk->vec_lanes, .vec_align = gk->vec_align,
               .acc_size = gk->acc_size, .nwords = gk->nwords, .cache_k = gk->cache_k, .part_lanes = gk->part_lanes,
               .cache_lanes = gk->cache_lanes, .wave = gk->wave};
  for (int i = 0; i < CG_NENTRY; i++) memcpy(m.names[i], cg_gpu_entry_name((CgGpuKernel *)gk, i), 64);
  return m;
}

/* Stores meta + code object under key; a failure is a warning (the cache is an optimization). */
static void disk_store(LoomContext *ctx, HipRt *g, const char *key, HipMeta m, const void *co, size_t size) {
  m.co_bytes = (uint32_t)size;
  unsigned char *payload = ctx_alloc(ctx, sizeof m + size);
  if (!payload) return;
  memcpy(payload, &m, sizeof m);
  memcpy(payload + sizeof m, co, size);
  Diag dd = {.status = LOOM_OK};
  if (rt_disk_cache_store(g->disk, key, payload, sizeof m + size, &dd) != LOOM_OK)
    fprintf(stderr, "loom: warning: storing a kernel in the disk cache failed: %s\n", dd.msg);
  ctx_free(ctx, payload);
}

/* Adds the entries `want` (CG_ENTRY bits) to f: from the disk cache, else compiled and stored there.
 * Caller holds device_lock. */
static LoomStatus add_group(LoomContext *ctx, HipRt *g, HipDev *dev, HipFn *f, const KernelIr *k, uint32_t want, Diag *d) {
  StrBuf kb;
  sb_init(&kb, ctx);
  sb_printf(&kb, "%sentries %u\n", f->key, want);
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
    HipMeta m;
    if (hit && blob_size > sizeof m) memcpy(&m, blob, sizeof m);
    hit = hit && blob_size > sizeof m && m.magic == HIP_META_MAGIC && (m.entries & ~f->loaded) &&
          !(m.entries & ~m.entries_all) && m.co_bytes > 0 && m.co_bytes == blob_size - sizeof m &&
          m.wave == dev->info.wave;
    if (hit) {
      for (int i = 0; i < CG_NENTRY; i++) m.names[i][63] = 0;
      st = load_group(g, dev, f, &m, (const char *)blob + sizeof m, m.co_bytes, d);
      if (st == LOOM_OK) {
        pthread_mutex_lock(&ctx->rt->stats_lock);
        ctx->rt->stats.cache_hits++;
        pthread_mutex_unlock(&ctx->rt->stats_lock);
      }
    }
    if (blob) rt_disk_cache_free(g->disk, blob);
  }
  if (st == LOOM_OK && !hit) {
    double t0 = rt_now_ms();
    CgCompiled c;
    CgCompileOptions opt = {.entries = want};
    st = dev->target->compile(dev->target, k, &opt, &c, d);
    bool compiled = st == LOOM_OK;
    HipMeta m;
    memset(&m, 0, sizeof m);
    if (compiled) {
      CgGpuKernel *gk = c.gpu;
      m = meta_of(gk);
      if (ctx->dump_flags & IR_DUMP_TIME)
        fprintf(stderr, "# time amdgpu %s entries %#x: lower %.3f ocml %.3f opt %.3f code object %.3f ms (%zu bytes, "
                        "%s)\n", k->name, gk->entries, gk->phase_ms[0], gk->phase_ms[1], gk->phase_ms[2], gk->phase_ms[3],
                gk->code_size, cg_amdgpu_linker(dev->target, NULL));
      if (!(m.entries & ~f->loaded))
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s has none of the entries %#x", k->name, want);
      if (st == LOOM_OK) st = load_group(g, dev, f, &m, gk->code, gk->code_size, d);
      if (st == LOOM_OK && g->disk) disk_store(ctx, g, key, m, gk->code, gk->code_size);
      dev->target->release(dev->target, &c);
      pthread_mutex_lock(&ctx->rt->stats_lock);
      ctx->rt->stats.kernels_compiled++;
      ctx->rt->stats.compile_ms += rt_now_ms() - t0;
      pthread_mutex_unlock(&ctx->rt->stats_lock);
    }
  }
  ctx_free(ctx, key);
  return st;
}

LoomStatus rt_amd_need_entries(LoomContext *ctx, HipRt *g, HipDev *dev, const HipFn *cf, const KernelIr *k, uint32_t need,
                               Diag *d) {
  if (!(need & ~__atomic_load_n(&cf->loaded, __ATOMIC_ACQUIRE))) return LOOM_OK;
  HipFn *f = (HipFn *)cf; /* groups are added under device_lock; see struct HipFn */
  pthread_mutex_lock(&ctx->rt->device_lock);
  LoomStatus st = LOOM_OK;
  if (need & ~f->loaded) st = add_group(ctx, g, dev, f, k, need & ~f->loaded, d);
  pthread_mutex_unlock(&ctx->rt->device_lock);
  return st;
}

/* ---- the kernel table's values ------------------------------------------------------------------------- */
static LoomStatus fn_make(void *user, const KernelIr *k, bool want_llvm_ir, int64_t npoints, void *value, Diag *d) {
  HipDev *dev = user;
  LoomContext *ctx = dev->ctx;
  HipRt *g = dev->g;
  HipFn *f = value;
  if (want_llvm_ir) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the AMD kernel table keeps no LLVM IR");
  StrBuf kb;
  sb_init(&kb, ctx);
  sb_printf(&kb, "loom %s\n%s\n", LOOM_VERSION_STRING, dev->target->describe(dev->target));
  ir_print_kernel_key(k, &kb);
  f->key = sb_take(&kb);
  if (!f->key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
  LoomStatus st;
  if (k->nkeep == k->ndim) { /* vecw, vec, else main (see CgCompileOptions.entries) */
    int lanes = cg_gpu_vec_lanes(k);
    pthread_mutex_lock(&ctx->rt->device_lock);
    st = add_group(ctx, g, dev, f, k, lanes > 0 && npoints >= 0 && npoints % lanes == 0 ? CG_ENTRY_VECW : CG_ENTRY_VEC, d);
    pthread_mutex_unlock(&ctx->rt->device_lock);
  } else { /* a reduction: its launch facts now, each entry when a launch first needs it */
    CgCompiled c;
    CgCompileOptions opt = {.entries = 0};
    st = dev->target->compile(dev->target, k, &opt, &c, d);
    if (st == LOOM_OK) {
      f->meta = meta_of(c.gpu);
      dev->target->release(dev->target, &c);
    }
  }
  if (st != LOOM_OK) {
    for (int m = 0; m < f->nmodules; m++) rt_hip_module_unload(g->hip, f->modules[m]);
    ctx_free(ctx, f->key);
    memset(f, 0, sizeof *f);
  }
  return st;
}

static void fn_drop(void *user, void *value) {
  HipDev *dev = user;
  HipFn *f = value;
  for (int m = 0; m < f->nmodules; m++) rt_hip_module_unload(dev->g->hip, f->modules[m]);
  ctx_free(dev->ctx, f->key);
}

LoomStatus rt_amd_kernels_create(HipDev *dev, Diag *d) {
  static const RtCacheOps ops = {.make = fn_make, .drop = fn_drop};
  StrBuf sb;
  sb_init(&sb, dev->ctx);
  sb_printf(&sb, "loom %s\n%s", LOOM_VERSION_STRING, dev->target->describe(dev->target));
  char *desc = sb_take(&sb);
  if (!desc) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel table");
  LoomStatus st = rt_cache_create_ops(dev->ctx, desc, &ops, dev, sizeof(HipFn), 0, &dev->kernels, d);
  ctx_free(dev->ctx, desc);
  return st;
}
