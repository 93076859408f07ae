/* SPDX-License-Identifier: Apache-2.0 */
/* cache.c: the in-memory kernel table (signature -> a kernel prepared for one device), used by every
 * device: the host's compiled functions (rt_cache_create over a CgTarget) and a GPU device's loaded
 * kernels (rt_cache_create_ops with the device's make / drop).
 *
 * Key: the text of ir_print_kernel_key (which names every dtype, layout and op, and prints the kernel
 * name as "-"), in a table made for one target description (the target's own describe(): LLVM version,
 * triple or architecture, CPU and features). Every entry of a table shares that description, so it is
 * neither printed into nor compared with each key (it was most of a key's bytes); it seeds the hash
 * instead. The key is hashed with ir_hash_bytes into a fixed table of bucket chains; a lookup compares
 * the whole key, so a hash collision is harmless. Values live in place in their entry (value_size bytes after the header), so
 * a value pointer maps back to its entry.
 *
 * Concurrency: one mutex guards the table, and one condition variable announces state changes. An
 * entry is created in state COMPILING by the first thread that misses; that thread compiles with the
 * lock released, then marks it READY or FAILED and wakes the waiters, so a kernel is compiled once
 * even when several threads ask at the same time. A FAILED entry is unlinked at once (the next request
 * compiles again: the failure may have been an out-of-memory), and its waiters all receive the same
 * message; the last one out frees it.
 *
 * Bound: at most max_entries entries (RT_CACHE_MAX_ENTRIES for the host; none for GPU devices, whose
 * loaded kernels live as long as the context). When an insertion exceeds the bound, the least
 * recently used entries that are READY and not pinned are evicted (released through ops->drop).
 * rt_cache_acquire pins an entry until rt_cache_release; rt_cache_get pins it for the cache's life
 * (its contract promises the kernel lives as long as the cache). If every entry is pinned, the cache
 * grows past the bound for a while and shrinks again on later releases.
 *
 * LLVM IR: when want_llvm_ir is asked and a READY entry has no IR text (ops->has_llvm_ir), ops->add_llvm_ir
 * adds it (the host compiles again with IR and moves the text onto the value), one thread at a time.
 *
 * Stats (ctx->rt->stats under stats_lock): cache_hits per hit here; kernels_compiled and compile_ms
 * by the ops per compilation (the target table: including IR recompilations). The target table's make
 * asks the loaded AOT bundles first (rt_bundles_find_host): a bundled kernel counts as a hit and is
 * never compiled.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/bundle_build.h"
#include "runtime/runtime.h"

#define RT_CACHE_BUCKETS 4096 /* a power of two */

typedef enum CeState { CE_COMPILING, CE_READY, CE_FAILED } CeState;

typedef struct CacheEntry {
  struct CacheEntry *chain;              /* bucket chain; also the eviction list */
  struct CacheEntry *lru_prev, *lru_next; /* most recent at the head */
  uint64_t hash;
  char *key;
  size_t keylen;
  CeState state;
  bool ir_busy;   /* a recompilation for LLVM IR text is running */
  bool permanent; /* handed out by rt_cache_get: never evicted */
  bool linked;    /* in the table and the LRU list */
  int64_t pins;   /* acquirers and waiters */
  Diag fail;      /* CE_FAILED: the compiler's message */
  _Alignas(16) unsigned char value[]; /* value_size bytes: the device's kernel */
} CacheEntry;

struct RtCache {
  LoomContext *ctx;
  RtCacheOps ops;
  void *user;
  size_t value_size;
  int64_t max_entries; /* 0: no bound */
  char *desc; /* target description, shared by every key */
  uint64_t desc_hash; /* seeds every key's hash */
  pthread_mutex_t lock;
  pthread_cond_t cv;
  CacheEntry **buckets;
  CacheEntry *lru_head, *lru_tail;
  int64_t count;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void stats_add(LoomContext *ctx, uint64_t hits, uint64_t compiled, double ms) {
  if (!ctx || !ctx->rt) return;
  pthread_mutex_lock(&ctx->rt->stats_lock);
  ctx->rt->stats.cache_hits += hits;
  ctx->rt->stats.kernels_compiled += compiled;
  ctx->rt->stats.compile_ms += ms;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
}

LoomStatus rt_cache_create_ops(LoomContext *ctx, const char *desc, const RtCacheOps *ops, void *user,
                               size_t value_size, int64_t max_entries, RtCache **out, Diag *d) {
  if (!out || !ops || !ops->make || !ops->drop || !desc)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_cache_create: NULL argument");
  *out = NULL;
  RtCache *c = ctx_calloc(ctx, 1, sizeof *c);
  if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel cache (%zu bytes)", sizeof *c);
  c->ctx = ctx;
  c->ops = *ops;
  c->user = user;
  c->value_size = value_size;
  c->max_entries = max_entries;
  size_t dl = strlen(desc);
  c->desc = ctx_alloc(ctx, dl + 1);
  c->buckets = ctx_calloc(ctx, RT_CACHE_BUCKETS, sizeof *c->buckets);
  if (!c->desc || !c->buckets) {
    ctx_free(ctx, c->desc);
    ctx_free(ctx, c->buckets);
    ctx_free(ctx, c);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel cache table (%zu bytes)",
                      (size_t)RT_CACHE_BUCKETS * sizeof(CacheEntry *));
  }
  memcpy(c->desc, desc, dl + 1);
  c->desc_hash = ir_hash_bytes(desc, dl, 0x6c6f6f6d63616368ull);
  if (pthread_mutex_init(&c->lock, NULL) != 0) {
    ctx_free(ctx, c->desc);
    ctx_free(ctx, c->buckets);
    ctx_free(ctx, c);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the kernel cache's mutex");
  }
  if (pthread_cond_init(&c->cv, NULL) != 0) {
    pthread_mutex_destroy(&c->lock);
    ctx_free(ctx, c->desc);
    ctx_free(ctx, c->buckets);
    ctx_free(ctx, c);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the kernel cache's condition variable");
  }
  *out = c;
  return LOOM_OK;
}

/* Releases what an entry owns and the entry itself. */
static void entry_free(RtCache *c, CacheEntry *e) {
  if (e->state == CE_READY) c->ops.drop(c->user, e->value);
  ctx_free(c->ctx, e->key);
  ctx_free(c->ctx, e);
}

void rt_cache_destroy(RtCache *c) {
  if (!c) return;
  CacheEntry *e = c->lru_head;
  while (e) {
    CacheEntry *next = e->lru_next;
    entry_free(c, e);
    e = next;
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->lock);
  ctx_free(c->ctx, c->buckets);
  ctx_free(c->ctx, c->desc);
  ctx_free(c->ctx, c);
}

/* ---- table and LRU list (cache lock held) ------------------------------------------------------ */
static void lru_unlink(RtCache *c, CacheEntry *e) {
  if (e->lru_prev) e->lru_prev->lru_next = e->lru_next; else c->lru_head = e->lru_next;
  if (e->lru_next) e->lru_next->lru_prev = e->lru_prev; else c->lru_tail = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(RtCache *c, CacheEntry *e) {
  e->lru_prev = NULL;
  e->lru_next = c->lru_head;
  if (c->lru_head) c->lru_head->lru_prev = e; else c->lru_tail = e;
  c->lru_head = e;
}

static void table_unlink(RtCache *c, CacheEntry *e) {
  if (!e->linked) return;
  CacheEntry **pp = &c->buckets[e->hash & (RT_CACHE_BUCKETS - 1)];
  while (*pp && *pp != e) pp = &(*pp)->chain;
  if (*pp) *pp = e->chain;
  e->chain = NULL;
  lru_unlink(c, e);
  e->linked = false;
  c->count--;
}

static CacheEntry *table_find(RtCache *c, uint64_t h, const char *key, size_t keylen) {
  for (CacheEntry *e = c->buckets[h & (RT_CACHE_BUCKETS - 1)]; e; e = e->chain)
    if (e->hash == h && e->keylen == keylen && memcmp(e->key, key, keylen) == 0) return e;
  return NULL;
}

/* Unlinks least recently used evictable entries while the cache is over its bound; returns them as
 * a list (through `chain`) to be freed after the lock is dropped. */
static CacheEntry *evict_over_bound(RtCache *c) {
  CacheEntry *victims = NULL;
  CacheEntry *e = c->lru_tail;
  while (c->max_entries > 0 && c->count > c->max_entries && e) {
    CacheEntry *prev = e->lru_prev;
    if (e->state == CE_READY && e->pins == 0 && !e->permanent && !e->ir_busy) {
      table_unlink(c, e);
      e->chain = victims;
      victims = e;
    }
    e = prev;
  }
  return victims;
}

static void free_victims(RtCache *c, CacheEntry *v) {
  while (v) {
    CacheEntry *next = v->chain;
    entry_free(c, v);
    v = next;
  }
}

/* ---- lookup ---------------------------------------------------------------------------------------- */
static bool has_ir(RtCache *c, CacheEntry *e) { return c->ops.has_llvm_ir && c->ops.has_llvm_ir(c->user, e->value); }

/* Adds LLVM IR text to e's value (ops->add_llvm_ir). Called with the lock held and e->ir_busy set by
 * the caller; returns with the lock held and e->ir_busy cleared. */
static LoomStatus add_ir_text(RtCache *c, CacheEntry *e, const KernelIr *k, Diag *d) {
  pthread_mutex_unlock(&c->lock);
  Diag cd = {.status = LOOM_OK};
  LoomStatus st = c->ops.add_llvm_ir ? c->ops.add_llvm_ir(c->user, k, e->value, &cd)
                                     : diag_error(&cd, LOOM_ERR_INTERNAL, "internal error: this kernel table "
                                                                          "keeps no LLVM IR text");
  if (st != LOOM_OK && cd.status == LOOM_OK) diag_error(&cd, st, "compiling kernel %s failed", k->name);
  pthread_mutex_lock(&c->lock);
  e->ir_busy = false;
  pthread_cond_broadcast(&c->cv);
  if (st != LOOM_OK) return diag_error(d, cd.status, "%s", cd.msg);
  return LOOM_OK;
}

LoomStatus rt_cache_acquire_value(RtCache *c, const KernelIr *k, bool want_llvm_ir, int64_t npoints,
                                  const void **out, bool *hit, Diag *d) {
  if (out) *out = NULL;
  if (hit) *hit = false;
  if (!c || !k || !out)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_cache_acquire: NULL argument");
  LoomContext *ctx = c->ctx;

  StrBuf kb;
  sb_init(&kb, ctx);
  ir_print_kernel_key(k, &kb);
  size_t keylen = kb.len;
  char *key = sb_take(&kb);
  if (!key)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: cache key of kernel %s", k->name);
  uint64_t h = ir_hash_bytes(key, keylen, c->desc_hash);

  pthread_mutex_lock(&c->lock);
  CacheEntry *e = table_find(c, h, key, keylen);
  if (e) {
    ctx_free(ctx, key);
    e->pins++;
    lru_unlink(c, e);
    lru_push_front(c, e);
    while (e->state == CE_COMPILING) pthread_cond_wait(&c->cv, &c->lock);
    if (e->state == CE_FAILED) {
      LoomStatus st = diag_error(d, e->fail.status, "%s", e->fail.msg);
      if (--e->pins == 0 && !e->linked) entry_free(c, e);
      pthread_mutex_unlock(&c->lock);
      return st;
    }
    if (want_llvm_ir && !has_ir(c, e)) {
      while (e->ir_busy) pthread_cond_wait(&c->cv, &c->lock);
      if (!has_ir(c, e)) {
        e->ir_busy = true;
        LoomStatus st = add_ir_text(c, e, k, d);
        if (st != LOOM_OK) {
          e->pins--;
          CacheEntry *v = evict_over_bound(c);
          pthread_mutex_unlock(&c->lock);
          free_victims(c, v);
          return st;
        }
      }
    }
    pthread_mutex_unlock(&c->lock);
    stats_add(ctx, 1, 0, 0.0);
    if (hit) *hit = true;
    *out = e->value;
    return LOOM_OK;
  }

  e = ctx_calloc(ctx, 1, sizeof *e + c->value_size);
  if (!e) {
    pthread_mutex_unlock(&c->lock);
    ctx_free(ctx, key);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel cache entry (%zu bytes)",
                      sizeof *e);
  }
  e->hash = h;
  e->key = key;
  e->keylen = keylen;
  e->state = CE_COMPILING;
  e->pins = 1;
  e->linked = true;
  size_t b = h & (RT_CACHE_BUCKETS - 1);
  e->chain = c->buckets[b];
  c->buckets[b] = e;
  lru_push_front(c, e);
  c->count++;
  pthread_mutex_unlock(&c->lock);

  Diag cd = {.status = LOOM_OK};
  LoomStatus st = c->ops.make(c->user, k, want_llvm_ir, npoints, e->value, &cd);
  if (st != LOOM_OK && cd.status == LOOM_OK) diag_error(&cd, st, "compiling kernel %s failed", k->name);

  pthread_mutex_lock(&c->lock);
  if (st != LOOM_OK) {
    memset(e->value, 0, c->value_size); /* a failed make owns nothing we may free */
    e->state = CE_FAILED;
    e->fail = cd;
    table_unlink(c, e);
    pthread_cond_broadcast(&c->cv);
    LoomStatus rs = diag_error(d, cd.status, "%s", cd.msg);
    if (--e->pins == 0) entry_free(c, e);
    pthread_mutex_unlock(&c->lock);
    return rs;
  }
  e->state = CE_READY;
  pthread_cond_broadcast(&c->cv);
  CacheEntry *v = evict_over_bound(c);
  pthread_mutex_unlock(&c->lock);
  free_victims(c, v);
  *out = e->value;
  return LOOM_OK;
}

static CacheEntry *entry_of(const void *value) {
  return (CacheEntry *)(void *)((char *)(uintptr_t)value - offsetof(CacheEntry, value));
}

void rt_cache_release(RtCache *c, const void *value) {
  if (!c || !value) return;
  CacheEntry *e = entry_of(value);
  pthread_mutex_lock(&c->lock);
  if (e->pins > 0) e->pins--;
  CacheEntry *v = evict_over_bound(c);
  pthread_mutex_unlock(&c->lock);
  free_victims(c, v);
}

LoomStatus rt_cache_acquire(RtCache *c, const KernelIr *k, bool want_llvm_ir, const CgCompiled **out, bool *hit,
                            Diag *d) {
  const void *v = NULL;
  LoomStatus st = rt_cache_acquire_value(c, k, want_llvm_ir, -1, &v, hit, d);
  if (out) *out = v;
  return st;
}

LoomStatus rt_cache_get(RtCache *c, const KernelIr *k, bool want_llvm_ir, const CgCompiled **out,
                        bool *hit, Diag *d) {
  LoomStatus st = rt_cache_acquire(c, k, want_llvm_ir, out, hit, d);
  if (st != LOOM_OK) return st;
  CacheEntry *e = entry_of(*out);
  pthread_mutex_lock(&c->lock);
  e->permanent = true;
  if (e->pins > 0) e->pins--;
  pthread_mutex_unlock(&c->lock);
  return LOOM_OK;
}

int64_t rt_cache_size(RtCache *c) {
  if (!c) return 0;
  pthread_mutex_lock(&c->lock);
  int64_t n = c->count;
  pthread_mutex_unlock(&c->lock);
  return n;
}

/* ---- a table of CgCompiled values made by a CgTarget -------------------------------------------------- */
static LoomStatus target_make(void *user, const KernelIr *k, bool want_llvm_ir, int64_t npoints, void *value, Diag *d) {
  (void)npoints;
  CgTarget *t = user;
  CgCompiled *out = value;
  /* AOT bundles first (runtime/bundle_loom.c): a bundled host kernel is never compiled; it counts as a
   * cache hit (a request for LLVM IR text compiles: only the JIT has it) */
  bool bundled = false;
  LoomStatus st = want_llvm_ir || t->binary != CG_BINARY_HOST ? LOOM_OK : rt_bundles_find_host(t->ctx, k, out, &bundled, d);
  if (st != LOOM_OK || bundled) {
    if (bundled) stats_add(t->ctx, 1, 0, 0.0);
    return st;
  }
  /* then the kernel disk cache (runtime/host_disk.c): an image from an earlier process, or one made and
   * stored now; it counts itself in the stats */
  if (!want_llvm_ir && t->binary == CG_BINARY_HOST) {
    st = rt_host_disk_make(t->ctx, t, k, out, &bundled, d);
    if (st != LOOM_OK || bundled) return st;
  }
  CgCompileOptions opt = CG_COMPILE_DEFAULTS;
  opt.want_llvm_ir = want_llvm_ir;
  double t0 = now_ms();
  st = t->compile(t, k, &opt, out, d);
  stats_add(t->ctx, 0, 1, now_ms() - t0);
  if (st == LOOM_OK && !out->run) {
    if (t->release) t->release(t, out);
    memset(out, 0, sizeof *out);
    st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the %s target compiled kernel %s without a run function",
                    t->name ? t->name : "?", k->name);
  }
  return st;
}

/* The IR text is detached first and freed here, so it does not matter whether release frees it. */
static void target_drop(void *user, void *value) {
  CgTarget *t = user;
  CgCompiled *c = value;
  char *ir = c->llvm_ir;
  c->llvm_ir = NULL;
  rt_host_disk_drop(t->ctx, c); /* a disk image (runtime/host_disk.c): the runtime's, not the target's */
  if (t->release) t->release(t, c);
  ctx_free(t->ctx, ir);
}

static bool target_has_ir(void *user, const void *value) { return ((const CgCompiled *)value)->llvm_ir != NULL; }

/* Compiles k again with IR text and moves the text onto the value (the second compilation is released). */
static LoomStatus target_add_ir(void *user, const KernelIr *k, void *value, Diag *d) {
  CgTarget *t = user;
  CgCompiled tmp;
  memset(&tmp, 0, sizeof tmp);
  CgCompileOptions opt = CG_COMPILE_DEFAULTS;
  opt.want_llvm_ir = true;
  double t0 = now_ms();
  LoomStatus st = t->compile(t, k, &opt, &tmp, d);
  stats_add(t->ctx, 0, 1, now_ms() - t0);
  if (st != LOOM_OK) return st;
  char *text = tmp.llvm_ir;
  tmp.llvm_ir = NULL;
  if (t->release) t->release(t, &tmp);
  if (!text)
    return diag_error(d, LOOM_ERR_BACKEND, "the %s target returned no LLVM IR text although it was asked for",
                      t->name ? t->name : "?");
  ((CgCompiled *)value)->llvm_ir = text;
  return LOOM_OK;
}

LoomStatus rt_cache_create(LoomContext *ctx, CgTarget *target, RtCache **out, Diag *d) {
  if (!target) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_cache_create: NULL argument");
  const char *desc = target->describe ? target->describe(target) : NULL;
  if (!desc || !*desc)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the %s target does not describe itself",
                      target->name ? target->name : "?");
  static const RtCacheOps ops = {target_make, target_drop, target_has_ir, target_add_ir};
  return rt_cache_create_ops(ctx, desc, &ops, target, sizeof(CgCompiled), RT_CACHE_MAX_ENTRIES, out, d);
}
