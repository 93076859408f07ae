/* SPDX-License-Identifier: Apache-2.0 */
/* api.c: the context of the public API: creation (allocator, threads, dump flags, runtime state),
 * destruction, the last error and statistics; devices, copies, streams, events and pool figures.
 *
 * Environment variables (the one list; README.md copies it):
 *   | variable          | meaning                                                                  |
 *   |-------------------|--------------------------------------------------------------------------|
 *   | LOOM_NUM_THREADS  | threads of the host pool (caller included) when options->num_threads is  |
 *   |                   | 0; a positive integer (at most 1024); otherwise all online cores         |
 *   | LOOM_DUMP         | comma-separated words: graph, kernels, llvm, time. Dumps go to stderr on |
 *   |                   | every loom_eval: the graph IR of the requested nodes (and per-pass       |
 *   |                   | graphs), the kernel schedule, each kernel's optimized LLVM IR, timings.  |
 *   |                   | Unknown words are ignored with one warning per context on stderr.       |
 *
 * Creation builds the RtState (stats lock, thread pool, host target, kernel cache) step by step and,
 * on any failure, tears down exactly what was made and returns the status. No context exists then to
 * hold the message, so it is not retrievable through loom_last_error.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/bundle_build.h"
#include "runtime/device.h"
#include "runtime/disk_cache.h"
#include "runtime/gpu/gpu_sort.h"

enum { RT_MAX_THREADS = RT_POOL_MAX_THREADS };
_Static_assert(IR_DUMP_GRAPH == 1 && IR_DUMP_KERNELS == 2 && IR_DUMP_LLVM == 4 && IR_DUMP_TIME == 8,
               "LoomConfigInfo.dump_flags (loom.h) documents these bits");

/* Parses LOOM_DUMP ("graph,kernels,llvm,time"); unknown words are collected in `unknown`. */
static uint32_t parse_dump_flags(const char *s, char *unknown, size_t cap) {
  uint32_t flags = 0;
  size_t ulen = 0;
  unknown[0] = '\0';
  while (s && *s) {
    while (*s == ',' || isspace((unsigned char)*s)) s++;
    const char *w = s;
    while (*s && *s != ',' && !isspace((unsigned char)*s)) s++;
    size_t n = (size_t)(s - w);
    if (n == 0) continue;
    if (n == 5 && strncmp(w, "graph", 5) == 0) flags |= IR_DUMP_GRAPH;
    else if (n == 7 && strncmp(w, "kernels", 7) == 0) flags |= IR_DUMP_KERNELS;
    else if (n == 4 && strncmp(w, "llvm", 4) == 0) flags |= IR_DUMP_LLVM;
    else if (n == 4 && strncmp(w, "time", 4) == 0) flags |= IR_DUMP_TIME;
    else if (ulen + n + 2 < cap) {
      if (ulen) unknown[ulen++] = ',';
      memcpy(unknown + ulen, w, n);
      ulen += n;
      unknown[ulen] = '\0';
    }
  }
  return flags;
}

static int32_t default_threads(void) {
  const char *env = getenv("LOOM_NUM_THREADS");
  if (env && *env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (end && *end == '\0' && v >= 1) return v > RT_MAX_THREADS ? RT_MAX_THREADS : (int32_t)v;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  return n > RT_MAX_THREADS ? RT_MAX_THREADS : (int32_t)n;
}

/* Empties the calling thread's last-error slot for ctx. The slot is keyed by the context's address,
 * so a new context allocated where a destroyed one lived would otherwise show its stale message.
 * (Only the calling thread's slot can be reached; a ctx_clear_last_error in ir/context.c that also
 * invalidates other threads' slots would be the complete fix.) */
static void clear_last_error(LoomContext *ctx) {
  Diag empty = {.status = LOOM_ERR_INTERNAL, .msg = ""};
  ctx_report(ctx, &empty);
}

static void rt_state_destroy(LoomContext *ctx, RtState *rt) {
  if (!rt) return;
  rt_plan_cache_destroy(ctx); /* plans pin kernels: before their devices close */
  rt_sort_destroy(ctx, rt); /* its raw modules: before their devices close */
  for (int kind = 0; kind < RT_DEVICE_KINDS; kind++) { /* libraries first: they use their device */
    const RtDevice *dev = rt_device((LoomDeviceKind)kind);
    if (dev && ctx->rt && rt->linalg[kind] && dev->linalg && dev->linalg->close) dev->linalg->close(ctx);
  }
  for (int kind = 0; kind < RT_DEVICE_KINDS; kind++) {
    const RtDevice *dev = rt_device((LoomDeviceKind)kind);
    if (dev && ctx->rt) dev->close(ctx);
  }
  pthread_mutex_destroy(&rt->device_lock);
  rt_cache_destroy(rt->cache); /* releases compiled kernels through the target: before it goes */
  rt_bundles_destroy(ctx);     /* bundled code the cache's entries pointed at */
  rt_host_disk_destroy(ctx);   /* the host images' compiler, resolver and disk cache */
  if (rt->host && rt->host->destroy) rt->host->destroy(rt->host);
  rt_pool_destroy(rt->pool);
  rt_host_pool_destroy(rt->host_pool);
  pthread_mutex_destroy(&rt->stats_lock);
  ctx_free(ctx, rt->cache_dir);
  ctx_free(ctx, rt);
}

LOOM_API LoomStatus loom_context_create_ex(const LoomContextOptions *options, LoomContext **out) {
  if (!out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  LoomAllocator alloc = *ir_default_allocator();
  int32_t nthreads = 0;
  if (options) {
    if (options->allocator) {
      if (!options->allocator->alloc || !options->allocator->free) return LOOM_ERR_INVALID_ARGUMENT;
      alloc = *options->allocator;
    }
    if (options->num_threads < 0) return LOOM_ERR_INVALID_ARGUMENT;
    nthreads = options->num_threads > RT_MAX_THREADS ? RT_MAX_THREADS : options->num_threads;
  }
  if (nthreads == 0) nthreads = default_threads();

  LoomContext *ctx = alloc.alloc(alloc.user, sizeof *ctx < 64 ? 64 : sizeof *ctx);
  if (!ctx) return LOOM_ERR_OUT_OF_MEMORY;
  memset(ctx, 0, sizeof *ctx);
  ctx->alloc = alloc;
  ctx->num_threads = nthreads;
  char unknown[256];
  ctx->dump_flags = parse_dump_flags(getenv("LOOM_DUMP"), unknown, sizeof unknown);
  if (unknown[0])
    fprintf(stderr, "loom: LOOM_DUMP: ignoring unknown word(s) '%s' (known: graph,kernels,llvm,time)\n",
            unknown);

  Diag d = {.status = LOOM_OK};
  RtState *rt = ctx_calloc(ctx, 1, sizeof *rt);
  if (!rt) {
    alloc.free(alloc.user, ctx);
    return LOOM_ERR_OUT_OF_MEMORY;
  }
  if (pthread_mutex_init(&rt->stats_lock, NULL) != 0 || pthread_mutex_init(&rt->device_lock, NULL) != 0) {
    ctx_free(ctx, rt);
    alloc.free(alloc.user, ctx);
    return LOOM_ERR_BACKEND;
  }
  ctx->rt = rt;
  for (int kind = 0; kind < RT_DEVICE_KINDS; kind++) rt->devices[kind].fail.status = LOOM_OK;
  atomic_init(&rt->gpu_jit_level, -1);
  atomic_init(&rt->cache_generation, 0);
  const char *tf32 = getenv("LOOM_ALLOW_TF32");
  rt->allow_tf32 = tf32 && tf32[0] && strcmp(tf32, "0") != 0;
  LoomStatus st = rt_host_pool_create(ctx, &rt->host_pool, &d);
  if (st == LOOM_OK) st = rt_pool_create(ctx, nthreads, &rt->pool, &d);
  if (st == LOOM_OK) st = cg_host_target_create(ctx, &rt->host, &d);
  if (st == LOOM_OK) st = rt_cache_create(ctx, rt->host, &rt->cache, &d);
  if (st != LOOM_OK) {
    ctx->rt = NULL;
    rt_state_destroy(ctx, rt);
    alloc.free(alloc.user, ctx);
    return st;
  }
  ctx->num_threads = rt_pool_size(rt->pool); /* fewer if some threads could not be created */
  clear_last_error(ctx);
  *out = ctx;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_context_create(LoomContext **out) { return loom_context_create_ex(NULL, out); }

LOOM_API void loom_context_destroy(LoomContext *ctx) {
  if (!ctx) return;
  LoomAllocator alloc = ctx->alloc;
  clear_last_error(ctx);
  rt_state_destroy(ctx, ctx->rt);
  ctx->rt = NULL;
  alloc.free(alloc.user, ctx);
}

LOOM_API void loom_stop_background_work(void) {
  for (int kind = 0; kind < RT_DEVICE_KINDS; kind++) {
    const RtDevice *dev = rt_device((LoomDeviceKind)kind);
    if (dev && dev->stop_background) dev->stop_background();
  }
}

LOOM_API const char *loom_last_error(LoomContext *ctx) {
  if (!ctx) return "loom_last_error: ctx is NULL";
  return ctx_last_error(ctx);
}

LOOM_API LoomStatus loom_get_stats(LoomContext *ctx, LoomStats *out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  if (!out || !ctx->rt) {
    Diag d = {.status = LOOM_OK};
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               out ? "loom_get_stats: the context has no runtime" : "loom_get_stats: out is NULL");
    return ctx_report(ctx, &d);
  }
  pthread_mutex_lock(&ctx->rt->stats_lock);
  *out = ctx->rt->stats;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_get_config(LoomContext *ctx, LoomConfigInfo *out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out || !ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               out ? "loom_get_config: the context has no runtime" : "loom_get_config: out is NULL");
    return ctx_report(ctx, &d);
  }
  memset(out, 0, sizeof *out);
  out->num_threads = rt_pool_size(ctx->rt->pool);
  out->dump_flags = ctx->dump_flags;
  snprintf(out->host_target, sizeof out->host_target, "%s", ctx->rt->host->describe(ctx->rt->host));
  /* the folder the GPU devices use: opened the way they open it (creating it, mode 0700) */
  DiskCache *dc = NULL;
  if (rt_disk_cache_open_configured(ctx, &dc, NULL, &d) == LOOM_OK) {
    snprintf(out->cache_dir, sizeof out->cache_dir, "%s", rt_disk_cache_dir(dc));
    out->cache_max_bytes = rt_disk_cache_max_bytes(dc);
    rt_disk_cache_close(dc);
  } else {
    snprintf(out->cache_error, sizeof out->cache_error, "%s", d.msg);
  }
  return LOOM_OK;
}

LOOM_API LoomStatus loom_set_dump(LoomContext *ctx, const char *words) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  char unknown[256];
  uint32_t flags = parse_dump_flags(words ? words : "", unknown, sizeof unknown);
  if (unknown[0]) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_set_dump: unknown word(s) '%s' (known: graph,kernels,llvm,time)", unknown);
    return ctx_report(ctx, &d);
  }
  ctx->dump_flags = flags;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_set_dump_sink(LoomContext *ctx, LoomDumpSink sink, void *user) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  if (!ctx->rt) {
    Diag d = {.status = LOOM_OK};
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_set_dump_sink: the context has no runtime");
    return ctx_report(ctx, &d);
  }
  pthread_mutex_lock(&ctx->rt->stats_lock);
  ctx->rt->dump_sink = sink;
  ctx->rt->dump_user = sink ? user : NULL;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  return LOOM_OK;
}

void rt_dump_printf(LoomContext *ctx, const char *fmt, ...) {
  LoomDumpSink sink = NULL;
  void *user = NULL;
  if (ctx && ctx->rt) {
    pthread_mutex_lock(&ctx->rt->stats_lock);
    sink = ctx->rt->dump_sink;
    user = ctx->rt->dump_user;
    pthread_mutex_unlock(&ctx->rt->stats_lock);
  }
  va_list ap;
  va_start(ap, fmt);
  if (!sink) {
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    return;
  }
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof small) {
    va_end(ap2);
    sink(user, small, (size_t)n);
    return;
  }
  char *big = ctx_alloc(ctx, (size_t)n + 1);
  if (big) {
    vsnprintf(big, (size_t)n + 1, fmt, ap2);
    sink(user, big, (size_t)n);
    ctx_free(ctx, big);
  } else {
    sink(user, small, sizeof small - 1); /* out of memory: the first part */
  }
  va_end(ap2);
}

LOOM_API LoomStatus loom_set_num_threads(LoomContext *ctx, int32_t num_threads) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_set_num_threads: the context has no runtime");
    return ctx_report(ctx, &d);
  }
  if (num_threads < 0 || num_threads > RT_MAX_THREADS) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_set_num_threads: %d threads: give 1 to %d (the calling thread included), or 0 for the "
               "default (LOOM_NUM_THREADS, else all online cores)", (int)num_threads, RT_MAX_THREADS);
    return ctx_report(ctx, &d);
  }
  LoomStatus st = rt_pool_resize(ctx->rt->pool, num_threads ? num_threads : default_threads(), &d);
  __atomic_store_n(&ctx->num_threads, rt_pool_size(ctx->rt->pool), __ATOMIC_RELAXED);
  return st == LOOM_OK ? LOOM_OK : ctx_report(ctx, &d);
}

LOOM_API LoomStatus loom_set_jit_level(LoomContext *ctx, int32_t level) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_set_jit_level: the context has no runtime");
    return ctx_report(ctx, &d);
  }
  if (level < -1 || level > 4) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_set_jit_level: level %d: give 0 to 4 (the driver JIT's optimization level), or -1 for the "
               "default (LOOM_CUDA_JIT_LEVEL, else 1)", (int)level);
    return ctx_report(ctx, &d);
  }
  atomic_store(&ctx->rt->gpu_jit_level, level);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_get_jit_level(LoomContext *ctx, int32_t *level) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  if (!level || !ctx->rt) {
    Diag d = {.status = LOOM_OK};
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, !level ? "loom_get_jit_level: level is NULL" : "loom_get_jit_level: no runtime");
    return ctx_report(ctx, &d);
  }
  *level = atomic_load(&ctx->rt->gpu_jit_level);
  return LOOM_OK;
}

LoomStatus rt_disk_cache_open_configured(LoomContext *ctx, DiskCache **out, unsigned *generation, Diag *d) {
  RtState *rt = ctx->rt;
  char *dir = NULL;
  pthread_mutex_lock(&rt->stats_lock);
  unsigned gen = atomic_load(&rt->cache_generation);
  uint64_t max_bytes = rt->cache_max_bytes;
  if (rt->cache_dir) {
    size_t n = strlen(rt->cache_dir) + 1;
    dir = ctx_alloc(ctx, n);
    if (dir) memcpy(dir, rt->cache_dir, n);
  }
  bool set = rt->cache_dir != NULL;
  pthread_mutex_unlock(&rt->stats_lock);
  if (set && !dir) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the disk cache's folder name");
  DiskCacheOptions o = {.dir = dir, .max_bytes = max_bytes};
  LoomStatus st = rt_disk_cache_open(ctx, &o, out, d);
  ctx_free(ctx, dir);
  if (generation) *generation = gen;
  return st;
}

LOOM_API LoomStatus loom_set_cache(LoomContext *ctx, const char *dir, uint64_t max_bytes) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_set_cache: the context has no runtime");
    return ctx_report(ctx, &d);
  }
  /* the new settings must open (the folder made, mode 0700, the user's) before they replace the old */
  DiskCache *dc = NULL;
  DiskCacheOptions o = {.dir = dir, .max_bytes = max_bytes};
  if (rt_disk_cache_open(ctx, &o, &dc, &d) != LOOM_OK) {
    Diag e = {.status = LOOM_OK};
    diag_error(&e, d.status, "loom_set_cache: %s (the settings in effect are kept)", d.msg);
    return ctx_report(ctx, &e);
  }
  rt_disk_cache_close(dc);
  char *copy = NULL;
  if (dir) {
    size_t n = strlen(dir) + 1;
    if (!(copy = ctx_alloc(ctx, n))) {
      diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_set_cache");
      return ctx_report(ctx, &d);
    }
    memcpy(copy, dir, n);
  }
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->stats_lock);
  char *old = rt->cache_dir;
  rt->cache_dir = copy;
  rt->cache_max_bytes = max_bytes;
  atomic_fetch_add(&rt->cache_generation, 1);
  pthread_mutex_unlock(&rt->stats_lock);
  ctx_free(ctx, old);
  return LOOM_OK;
}

/* ---- devices ------------------------------------------------------------------------------------------
 * Every device call goes through the kind's table (device.h); a kind this build has no table for is
 * LOOM_ERR_UNSUPPORTED naming the kinds it has. */

/* The table of kind for fn, or NULL with d written. */
static const RtDevice *device_of(LoomDeviceKind kind, const char *fn, Diag *d) {
  const RtDevice *dev = rt_device(kind);
  if (!dev) {
    char have[64];
    diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: device kind %d is not available (this build has %s)", fn, (int)kind,
               rt_device_kinds(have, sizeof have));
  }
  return dev;
}

LOOM_API LoomStatus loom_device_count(LoomContext *ctx, LoomDeviceKind kind, int32_t *count) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!count || !ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, !count ? "loom_device_count: count is NULL" : "loom_device_count: no runtime");
    return ctx_report(ctx, &d);
  }
  const RtDevice *dev = rt_device(kind);
  if (!dev && kind != LOOM_DEVICE_HOST && kind != LOOM_DEVICE_CUDA && kind != LOOM_DEVICE_HIP) {
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_device_count: device kind %d is not a LoomDeviceKind", (int)kind);
    return ctx_report(ctx, &d);
  }
  *count = dev ? dev->count(ctx) : 0;
  return LOOM_OK;
}

bool rt_array_c_contiguous(const LoomArray *a) {
  int64_t s = 1;
  for (int i = a->ndim - 1; i >= 0; i--) {
    if (a->shape[i] != 1 && a->strides[i] != s) return false;
    s *= a->shape[i];
  }
  return true;
}

static LoomStatus check_desc(const LoomArray *a, const char *fn, const char *what, Diag *d) {
  if ((unsigned)a->dtype >= LOOM_DTYPE_COUNT)
    return diag_error(d, LOOM_ERR_DTYPE, "%s: %s has dtype %d, not a LoomDType", fn, what, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s has ndim %d (0..%d)", fn, what, a->ndim, LOOM_MAX_RANK);
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] < 0) return diag_error(d, LOOM_ERR_SHAPE, "%s: %s has a negative dimension", fn, what);
  if (!rt_device(a->device)) {
    char have[64];
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: %s is on device kind %d; this build has %s", fn, what,
                      (int)a->device, rt_device_kinds(have, sizeof have));
  }
  if (a->device == LOOM_DEVICE_HOST ? a->device_index != 0 : a->device_index < 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s has device_index %d (%s)", fn, what, (int)a->device_index,
                      a->device == LOOM_DEVICE_HOST ? "the host is device 0" : "devices are numbered from 0");
  return LOOM_OK;
}

LOOM_API LoomStatus loom_array_alloc(LoomContext *ctx, LoomArray *a) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!a || !ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_array_alloc: array is NULL");
    return ctx_report(ctx, &d);
  }
  if (check_desc(a, "loom_array_alloc", "array", &d) != LOOM_OK) return ctx_report(ctx, &d);
  int64_t numel = ir_numel(a->ndim, a->shape), s = 1;
  size_t bytes;
  if (numel < 0 || __builtin_mul_overflow((size_t)numel, loom_dtype_size(a->dtype), &bytes)) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_array_alloc: the array is too large");
    return ctx_report(ctx, &d);
  }
  for (int i = a->ndim - 1; i >= 0; i--) {
    a->strides[i] = s;
    s *= a->shape[i] > 1 ? a->shape[i] : 1;
  }
  void *p = NULL;
  /* a host array of no bytes has no data; a device's alloc checks the device even then */
  if (bytes > 0 || a->device != LOOM_DEVICE_HOST) {
    Diag ad = {.status = LOOM_OK};
    if (rt_device(a->device)->alloc(ctx, a->device_index, bytes, &p, &ad) != LOOM_OK) {
      if (ad.status == LOOM_ERR_OUT_OF_MEMORY)
        diag_error(&d, ad.status, "loom_array_alloc: out of memory for %zu bytes (%s)", bytes, ad.msg);
      else
        d = ad;
      return ctx_report(ctx, &d);
    }
  }
  a->data = p;
  return LOOM_OK;
}

LOOM_API void loom_array_free(LoomContext *ctx, LoomArray *array) {
  if (!array) return;
  const RtDevice *dev = rt_device(array->device);
  /* The size comes from the descriptor loom_eval or loom_array_alloc filled in (C-contiguous, so
   * numel * size): the host pool's size class. */
  int64_t numel = array->ndim >= 0 && array->ndim <= LOOM_MAX_RANK ? ir_numel(array->ndim, array->shape) : 0;
  size_t bytes = numel > 0 ? (size_t)numel * loom_dtype_size(array->dtype) : 0;
  if (ctx && ctx->rt && dev) {
    Diag d; /* no initializer: zeroing its 1 KiB message on every free of a result was a tenth of the free */
    d.status = LOOM_OK;
    d.msg[0] = '\0';
    if (array->data) dev->free(ctx, array->device_index, array->data, bytes, &d);
  } else if (array->device == LOOM_DEVICE_HOST) {
    ctx_free(ctx, array->data);
  }
  memset(array, 0, sizeof *array);
}

/* Copies between any two of host and device memory: the copy of the device kind involved (the host's
 * when both are host arrays). */
LOOM_API LoomStatus loom_array_copy(LoomContext *ctx, LoomArray *dst, const LoomArray *src) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!dst || !src || !ctx->rt) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_array_copy: dst or src is NULL");
    return ctx_report(ctx, &d);
  }
  if (check_desc(dst, "loom_array_copy", "dst", &d) != LOOM_OK || check_desc(src, "loom_array_copy", "src", &d) != LOOM_OK)
    return ctx_report(ctx, &d);
  bool same = dst->dtype == src->dtype && dst->ndim == src->ndim;
  for (int i = 0; same && i < dst->ndim; i++) same = dst->shape[i] == src->shape[i];
  if (!same) {
    diag_error(&d, LOOM_ERR_SHAPE, "loom_array_copy: dst and src must have the same dtype and shape");
    return ctx_report(ctx, &d);
  }
  if (!rt_array_c_contiguous(dst) || !rt_array_c_contiguous(src)) {
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_array_copy: both arrays must be C-contiguous (evaluate a strided "
                                          "view into a new array with loom_eval first)");
    return ctx_report(ctx, &d);
  }
  if (dst->device != LOOM_DEVICE_HOST && src->device != LOOM_DEVICE_HOST && dst->device != src->device) {
    char b1[32], b2[32];
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_array_copy: no copy from %s to %s: copy through a host array",
               rt_device_label(b1, sizeof b1, src->device, src->device_index),
               rt_device_label(b2, sizeof b2, dst->device, dst->device_index));
    return ctx_report(ctx, &d);
  }
  size_t bytes = (size_t)ir_numel(src->ndim, src->shape) * loom_dtype_size(src->dtype);
  if (bytes == 0) return LOOM_OK;
  const RtDevice *dev = rt_device(dst->device != LOOM_DEVICE_HOST ? dst->device : src->device);
  if (dev->copy(ctx, dst->data, dst->device, dst->device_index, src->data, src->device, src->device_index, bytes, &d) !=
      LOOM_OK)
    return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_device_synchronize(LoomContext *ctx, LoomDeviceKind kind, int32_t index) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (kind == LOOM_DEVICE_HOST && index != 0) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_device_synchronize: the host is device 0, not %d", (int)index);
    return ctx_report(ctx, &d);
  }
  if (kind == LOOM_DEVICE_HOST || !ctx->rt) return LOOM_OK;
  const RtDevice *dev = device_of(kind, "loom_device_synchronize", &d);
  if (!dev || dev->synchronize(ctx, index, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

/* ---- streams, events and pool figures ---------------------------------------------------------------
 * A LoomStream / LoomEvent is the device's own stream or event with the device it belongs to. Host ones
 * exist and complete at once (work on the host is done when its call returns); a host event's time is
 * the host's monotonic clock when it was recorded. The calling thread's current stream of a device is
 * what loom_eval, loom_array_copy and events use. */

struct LoomEvent {
  const RtDevice *dev;
  int32_t index;
  RtEvent *e;
  bool recorded;
};

/* Checks a device kind and index for fn: an available kind, the host's index 0 (devices check theirs
 * on use). */
const RtDevice *rt_api_device(LoomContext *ctx, LoomDeviceKind kind, int32_t index, const char *fn, Diag *d) {
  if (!ctx->rt) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: the context has no runtime", fn);
    return NULL;
  }
  const RtDevice *dev = device_of(kind, fn, d);
  if (!dev) return NULL;
  if (kind == LOOM_DEVICE_HOST && index != 0) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: the host is device 0, not %d", fn, (int)index);
    return NULL;
  }
  if (index < 0) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s device index %d is negative", fn, dev->name, (int)index);
    return NULL;
  }
  return dev;
}

LOOM_API LoomStatus loom_stream_create(LoomContext *ctx, LoomDeviceKind kind, int32_t index, LoomStream **out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_create: out is NULL");
    return ctx_report(ctx, &d);
  }
  *out = NULL;
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_stream_create", &d);
  if (!dev) return ctx_report(ctx, &d);
  LoomStream *s = ctx_calloc(ctx, 1, sizeof *s);
  if (!s) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_stream_create: out of memory");
    return ctx_report(ctx, &d);
  }
  s->dev = dev;
  s->index = index;
  if (dev->stream_create(ctx, index, &s->s, &d) != LOOM_OK) {
    ctx_free(ctx, s);
    return ctx_report(ctx, &d);
  }
  *out = s;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_stream_wrap(LoomContext *ctx, LoomDeviceKind kind, int32_t index, void *handle,
                                     LoomStream **out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_wrap: out is NULL");
    return ctx_report(ctx, &d);
  }
  *out = NULL;
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_stream_wrap", &d);
  if (dev && !dev->stream_wrap)
    diag_error(&d, LOOM_ERR_UNSUPPORTED, "loom_stream_wrap: %s streams cannot be borrowed", dev->name);
  LoomStream *s = d.status == LOOM_OK ? ctx_calloc(ctx, 1, sizeof *s) : NULL;
  if (d.status == LOOM_OK && !s) diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_stream_wrap: out of memory");
  if (d.status != LOOM_OK) return ctx_report(ctx, &d);
  s->dev = dev;
  s->index = index;
  if (dev->stream_wrap(ctx, index, handle, &s->s, &d) != LOOM_OK) {
    ctx_free(ctx, s);
    return ctx_report(ctx, &d);
  }
  *out = s;
  return LOOM_OK;
}

LOOM_API void loom_stream_destroy(LoomContext *ctx, LoomStream *s) {
  if (!ctx || !s) return;
  if (s->s) s->dev->stream_destroy(ctx, s->s);
  ctx_free(ctx, s);
}

LOOM_API LoomStatus loom_stream_synchronize(LoomContext *ctx, LoomStream *s) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!s) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_synchronize: stream is NULL");
    return ctx_report(ctx, &d);
  }
  if (s->s && s->dev->stream_synchronize(ctx, s->s, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_stream_use(LoomContext *ctx, LoomDeviceKind kind, int32_t index, LoomStream *s) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_stream_use", &d);
  if (!dev) return ctx_report(ctx, &d);
  if (s && (s->dev != dev || s->index != index)) {
    char b1[32], b2[32];
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_stream_use: the stream belongs to device %s, not %s",
               rt_device_label(b1, sizeof b1, s->dev->kind, s->index), rt_device_label(b2, sizeof b2, kind, index));
    return ctx_report(ctx, &d);
  }
  if (dev->stream_use(ctx, index, s ? s->s : NULL, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API void *loom_stream_handle(LoomStream *s) { return s && s->s ? s->dev->stream_handle(s->s) : NULL; }

LOOM_API LoomStatus loom_event_create(LoomContext *ctx, LoomDeviceKind kind, int32_t index, LoomEvent **out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!out) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_create: out is NULL");
    return ctx_report(ctx, &d);
  }
  *out = NULL;
  const RtDevice *dev = rt_api_device(ctx, kind, index, "loom_event_create", &d);
  if (!dev) return ctx_report(ctx, &d);
  LoomEvent *e = ctx_calloc(ctx, 1, sizeof *e);
  if (!e) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "loom_event_create: out of memory");
    return ctx_report(ctx, &d);
  }
  e->dev = dev;
  e->index = index;
  if (dev->event_create(ctx, index, &e->e, &d) != LOOM_OK) {
    ctx_free(ctx, e);
    return ctx_report(ctx, &d);
  }
  *out = e;
  return LOOM_OK;
}

LOOM_API void loom_event_destroy(LoomContext *ctx, LoomEvent *e) {
  if (!ctx || !e) return;
  if (e->e) e->dev->event_destroy(ctx, e->e);
  ctx_free(ctx, e);
}

LOOM_API LoomStatus loom_event_record(LoomContext *ctx, LoomEvent *e, LoomStream *s) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!e) diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_record: event is NULL");
  else if (s && (s->dev != e->dev || s->index != e->index))
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_record: the stream and the event belong to different "
                                               "devices: create both on one device");
  if (d.status != LOOM_OK) return ctx_report(ctx, &d);
  if (e->dev->event_record(ctx, e->index, e->e, s ? s->s : NULL, &d) != LOOM_OK) return ctx_report(ctx, &d);
  e->recorded = true;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_event_synchronize(LoomContext *ctx, LoomEvent *e) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!e) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_synchronize: event is NULL");
    return ctx_report(ctx, &d);
  }
  if (e->dev->event_synchronize(ctx, e->e, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}

LOOM_API LoomStatus loom_event_elapsed_ms(LoomContext *ctx, LoomEvent *start, LoomEvent *end, float *ms) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!start || !end || !ms)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_elapsed_ms: start, end and ms must not be NULL");
  else if (start->dev != end->dev || start->index != end->index)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_elapsed_ms: the events belong to different devices");
  else if (!start->recorded || !end->recorded)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_event_elapsed_ms: record both events (loom_event_record) first");
  if (d.status != LOOM_OK) return ctx_report(ctx, &d);
  if (start->dev->event_elapsed(ctx, start->e, end->e, ms, &d) != LOOM_OK) return ctx_report(ctx, &d);
  return LOOM_OK;
}
