/* SPDX-License-Identifier: Apache-2.0 */
/* host_disk.c: host kernels in the kernel disk cache, so that a new process finds the kernels an earlier
 * one compiled (the GPU devices keep their binaries there too: runtime/gpu/gpu_kernels.c).
 *
 * The host JIT (codegen/host.c) leaves nothing that can be saved, so a kernel the in-memory table misses
 * is made here as a host image instead (codegen/host_object.c: the same lowering and O3 pipeline, for the
 * JIT's own CPU name, features and vector width, linked into one position-independent block) and loaded
 * by the bundles' loader (runtime/bundle_hostimg.c). The entry is that image behind a small header:
 *   u32 magic "LHD1", u32 format version, then the text offsets of run, partial, finish, colpart,
 *   colfinish (CG_HOST_NO_SYMBOL: absent), u32 col_phases, i32 acc_size; then the image blob.
 * Key: "loom <version> <build-id>", "host-image", the host target's description (LLVM version, triple,
 * CPU, feature hash, SLEEF, vector width) and ir_print_kernel_key. The disk cache checks length and
 * checksum; the image loader checks the image; every entry point is checked to lie in the text.
 *
 * Anything that fails on the way (no X86 backend, an object the image linker does not take, a full
 * disk, a corrupt entry) is not an error: *found stays false and the caller JIT-compiles as without a
 * disk cache. LOOM_HOST_DISK_CACHE=0 turns the host part off (the GPU part follows LOOM_CACHE_DIR only).
 * A request for LLVM IR text never comes here (only the JIT has it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_aot.h"
#include "runtime/bundle.h"
#include "runtime/disk_cache.h"
#include "runtime/runtime.h"

#define HD_MAGIC 0x3144484cu /* "LHD1" */
enum { HD_VERSION = 1, HD_HEADER = 9 * 4 };

typedef struct RetiredDisk {
  struct RetiredDisk *next;
  DiskCache *disk;
} RetiredDisk;

typedef struct RtHostDisk {
  pthread_mutex_t lock; /* guards the fields below but not the work done with them */
  bool enabled;         /* LOOM_HOST_DISK_CACHE */
  bool tried;           /* the disk cache was opened (maybe disabled) with settings `generation` */
  unsigned generation;
  DiskCache *disk;
  RetiredDisk *retired; /* caches replaced after loom_set_cache: kept open until the context goes */
  CgHostAot *aot;
  RtSymbolResolver *resolver;
  bool broken; /* the image compiler or the resolver could not be made: JIT only */
} RtHostDisk;

static bool disabled_by_env(void) {
  const char *env = getenv("LOOM_HOST_DISK_CACHE");
  return env && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0 || strcmp(env, "no") == 0);
}

/* The context's state, made on first use; NULL (nothing allocated) while LOOM_HOST_DISK_CACHE is off. */
static RtHostDisk *state(LoomContext *ctx) {
  RtState *rt = ctx->rt;
  RtHostDisk *s = atomic_load(&rt->host_disk);
  if (s) return s->enabled ? s : NULL;
  if (disabled_by_env()) return NULL;
  RtHostDisk *fresh = ctx_calloc(ctx, 1, sizeof *fresh);
  if (!fresh) return NULL;
  pthread_mutex_init(&fresh->lock, NULL);
  fresh->enabled = true;
  RtHostDisk *none = NULL;
  if (atomic_compare_exchange_strong(&rt->host_disk, &none, fresh)) return fresh;
  pthread_mutex_destroy(&fresh->lock);
  ctx_free(ctx, fresh);
  return none; /* another thread's */
}

/* The disk cache to use now (NULL: off), reopened when loom_set_cache changed the settings. */
static DiskCache *current_disk(LoomContext *ctx, RtHostDisk *s) {
  unsigned gen = atomic_load(&ctx->rt->cache_generation);
  pthread_mutex_lock(&s->lock);
  if (!s->tried || s->generation != gen) {
    DiskCache *fresh = NULL;
    unsigned opened = gen;
    Diag dd = {.status = LOOM_OK};
    if (rt_disk_cache_open_configured(ctx, &fresh, &opened, &dd) != LOOM_OK) fresh = NULL;
    RetiredDisk *r = s->disk ? ctx_alloc(ctx, sizeof *r) : NULL;
    if (s->disk && !r) { /* keep the old one rather than close a cache another thread may be using */
      rt_disk_cache_close(fresh);
    } else {
      if (r) {
        r->disk = s->disk;
        r->next = s->retired;
        s->retired = r;
      }
      s->disk = fresh && rt_disk_cache_enabled(fresh) ? fresh : NULL;
      if (fresh && !s->disk) rt_disk_cache_close(fresh);
      s->tried = true;
      s->generation = opened;
    }
  }
  DiskCache *disk = s->disk;
  pthread_mutex_unlock(&s->lock);
  return disk;
}

/* The image compiler and the symbol resolver, made on first use; false when they cannot be. */
static bool tools(LoomContext *ctx, RtHostDisk *s, const char *isas) {
  pthread_mutex_lock(&s->lock);
  if (!s->broken && (!s->aot || !s->resolver)) {
    Diag dd = {.status = LOOM_OK};
    /* SLEEF as the JIT has it: its ISA letters are "" without SLEEF */
    if (!s->aot && cg_host_aot_create(ctx, isas[0] != 0, &s->aot, &dd) != LOOM_OK) s->broken = true;
    if (!s->broken && !s->resolver && rt_symbol_resolver_create(ctx, &s->resolver, &dd) != LOOM_OK) s->broken = true;
  }
  bool ok = !s->broken;
  pthread_mutex_unlock(&s->lock);
  return ok;
}

static char *key_of(LoomContext *ctx, CgTarget *host, const KernelIr *k) {
  StrBuf kb;
  sb_init(&kb, ctx);
  sb_printf(&kb, "loom %s %s\nhost-image %d\n%s\n", LOOM_VERSION_STRING, rt_build_id(), HD_VERSION,
            host->describe(host));
  ir_print_kernel_key(k, &kb);
  return sb_take(&kb);
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Maps an entry's image and points out's entries into it; false (nothing held) when it is unusable. */
static bool adopt(LoomContext *ctx, RtHostDisk *s, const uint8_t *entry, size_t size, const char *name, CgCompiled *out) {
  if (size <= HD_HEADER || rb_get32(entry) != HD_MAGIC || rb_get32(entry + 4) != HD_VERSION) return false;
  uint32_t f[7];
  for (int i = 0; i < 7; i++) f[i] = rb_get32(entry + 8 + 4 * i);
  RtHostImage *im = NULL;
  Diag dd = {.status = LOOM_OK};
  if (rt_host_image_load(ctx, s->resolver, entry + HD_HEADER, size - HD_HEADER, name, &im, &dd) != LOOM_OK) return false;
  CgCompiled c;
  memset(&c, 0, sizeof c);
  c.kind = CG_BINARY_HOST;
  c.image = im;
  c.run = (CgRunFn)(uintptr_t)rt_host_image_symbol(im, f[0]);
  bool ok = c.run != NULL;
  if (f[1] != CG_HOST_NO_SYMBOL) {
    c.partial = (CgPartialFn)(uintptr_t)rt_host_image_symbol(im, f[1]);
    c.finish = (CgFinishFn)(uintptr_t)rt_host_image_symbol(im, f[2]);
    ok = ok && c.partial && c.finish;
  }
  if (f[5]) {
    c.colpart = (CgColFn)(uintptr_t)rt_host_image_symbol(im, f[3]);
    c.colfinish = (CgColFn)(uintptr_t)rt_host_image_symbol(im, f[4]);
    c.col_phases = f[5];
    ok = ok && c.colpart && c.colfinish;
  }
  c.acc_size = (int32_t)f[6];
  ok = ok && c.acc_size >= 0 && c.acc_size <= (1 << 20);
  if (!ok) {
    rt_host_image_free(im);
    return false;
  }
  *out = c;
  return true;
}

static void stats_add(LoomContext *ctx, bool hit, double compile_ms) {
  pthread_mutex_lock(&ctx->rt->stats_lock);
  if (hit) ctx->rt->stats.cache_hits++;
  else {
    ctx->rt->stats.kernels_compiled++;
    ctx->rt->stats.compile_ms += compile_ms;
  }
  pthread_mutex_unlock(&ctx->rt->stats_lock);
}

LoomStatus rt_host_disk_make(LoomContext *ctx, CgTarget *host, const KernelIr *k, CgCompiled *out, bool *found, Diag *d) {
  (void)d;
  *found = false;
  RtHostDisk *s = state(ctx);
  CgHostCpu cpu;
  if (!s || !cg_host_target_cpu(host, &cpu)) return LOOM_OK;
  DiskCache *disk = current_disk(ctx, s);
  if (!disk || !tools(ctx, s, cpu.isas)) return LOOM_OK;
  char *key = key_of(ctx, host, k);
  if (!key) return LOOM_OK;
  double t0 = rt_now_ms();
  void *blob = NULL;
  size_t size = 0;
  bool hit = false;
  Diag dd = {.status = LOOM_OK};
  if (rt_disk_cache_load(disk, key, &blob, &size, &hit, &dd) != LOOM_OK) hit = false;
  if (hit) {
    *found = adopt(ctx, s, blob, size, k->name, out);
    rt_disk_cache_free(disk, blob);
    if (*found) {
      stats_add(ctx, true, 0.0);
      if (ctx->dump_flags & IR_DUMP_TIME)
        rt_dump_printf(ctx, "# time host %s disk load %.3f ms\n", k->name, rt_now_ms() - t0);
      ctx_free(ctx, key);
      return LOOM_OK;
    }
  }
  CgHostImage im;
  if (cg_host_aot_compile_cpu(s->aot, k, &cpu, &im, &dd) == LOOM_OK) {
    uint8_t *entry = ctx_alloc(ctx, HD_HEADER + im.size);
    if (entry) {
      uint32_t f[9] = {HD_MAGIC, HD_VERSION, im.run, im.partial, im.finish,
                       im.col_phases ? im.colpart : CG_HOST_NO_SYMBOL, im.col_phases ? im.colfinish : CG_HOST_NO_SYMBOL,
                       im.col_phases, (uint32_t)im.acc_size};
      for (int i = 0; i < 9; i++) put32(entry + 4 * i, f[i]);
      memcpy(entry + HD_HEADER, im.bytes, im.size);
      *found = adopt(ctx, s, entry, HD_HEADER + im.size, k->name, out);
      /* stored only when it loaded here: an entry is usable or not written */
      if (*found && rt_disk_cache_store(disk, key, entry, HD_HEADER + im.size, &dd) != LOOM_OK)
        fprintf(stderr, "loom: warning: storing a host kernel in the disk cache failed: %s\n", dd.msg);
      ctx_free(ctx, entry);
    }
    if (*found) {
      stats_add(ctx, false, rt_now_ms() - t0);
      if (ctx->dump_flags & IR_DUMP_TIME)
        rt_dump_printf(ctx, "# time host %s image compile %.3f ms, total %.3f ms\n", k->name, im.ms, rt_now_ms() - t0);
    }
    cg_host_image_release(ctx, &im);
  }
  ctx_free(ctx, key);
  return LOOM_OK;
}

void rt_host_disk_drop(LoomContext *ctx, CgCompiled *c) {
  (void)ctx;
  if (c && c->image) {
    rt_host_image_free(c->image);
    c->image = NULL;
  }
}

void rt_host_disk_destroy(LoomContext *ctx) {
  RtHostDisk *s = ctx && ctx->rt ? atomic_load(&ctx->rt->host_disk) : NULL;
  if (!s) return;
  rt_disk_cache_close(s->disk);
  for (RetiredDisk *r = s->retired, *next; r; r = next) {
    next = r->next;
    rt_disk_cache_close(r->disk);
    ctx_free(ctx, r);
  }
  if (s->aot) cg_host_aot_destroy(s->aot);
  if (s->resolver) rt_symbol_resolver_free(s->resolver);
  pthread_mutex_destroy(&s->lock);
  ctx_free(ctx, s);
  atomic_store(&ctx->rt->host_disk, NULL);
}
