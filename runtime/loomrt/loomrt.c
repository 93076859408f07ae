/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt.c: libloomrt's public API (include/loom/loomrt.h): runtimes, bundles, streams and launches.
 *
 * Why a folder of its own: libloom is built from every .c file in runtime/; these files define libloomrt's public
 * symbols and must not land in libloom, while the runtime files they build on (bundle_format.c,
 * bundle_hostimg.c, host_launch.c, pool.c, cuda/cuda.c, cuda/cuda_code.c, hip/hip.c, gpu/gpu_pool.c,
 * codegen/amdgpu_chips.c) are compiled into both, so the two libraries share one copy of the source of the
 * format, the loader, the thread pool, the host dispatch, the CUDA and HIP driver layers and the GPU pool
 * (runtime/loomrt/loomrt.cmake lists them).
 *
 * A launch: check the arguments against the entry's signature (ndim, buffers, strides against the layout
 * classes the code was compiled for), pick the index width from the sizes with the rule of
 * passes/lower.c (64 bits when the point count or a buffer's element extent passes INT32_MAX), then run:
 * on the host through rt_host_launch (the same tasks and reduction parts as libloom: the same bits) with
 * the image for the best x86-64 level, mapped on first use; on a GPU (CUDA or HIP) through loomrt_gpu.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "runtime/host_launch.h"
#include "runtime/loomrt/loomrt_internal.h"

#define RTRT_MAX_THREADS 1024

static LoomStatus report(LoomrtRuntime *rt, Diag *d) { return ctx_report(&rt->ctx, d); }

static LoomStatus fail(LoomrtRuntime *rt, LoomStatus status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static LoomStatus fail(LoomrtRuntime *rt, LoomStatus status, const char *fmt, ...) {
  Diag d = {.status = status};
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d.msg, sizeof d.msg, fmt, ap);
  va_end(ap);
  return report(rt, &d);
}

/* a * b for non-negative a, b, saturating at INT64_MAX */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

LOOMRT_API const char *loomrt_version(void) { return LOOM_VERSION_STRING; }
LOOMRT_API int32_t loomrt_host_level(void) { return rt_host_cpu_level(); }

LOOMRT_API LoomStatus loomrt_create(const LoomrtOptions *options, LoomrtRuntime **out) {
  if (!out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  const LoomAllocator *al = ir_default_allocator();
  LoomrtRuntime *rt = al->alloc(al->user, sizeof *rt);
  if (!rt) return LOOM_ERR_OUT_OF_MEMORY;
  memset(rt, 0, sizeof *rt);
  rt->ctx.alloc = *al;
  int32_t n = options && options->num_threads > 0 ? options->num_threads : 0;
  const char *env = getenv("LOOM_NUM_THREADS");
  if (n == 0 && env && atoi(env) > 0) n = atoi(env);
  if (n == 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (int32_t)c : 1;
  }
  if (n > RTRT_MAX_THREADS) n = RTRT_MAX_THREADS;
  rt->ctx.num_threads = n;
  Diag d = {.status = LOOM_OK};
  if (pthread_mutex_init(&rt->lock, NULL) != 0 || rt_pool_create(&rt->ctx, n, &rt->pool, &d) != LOOM_OK) {
    al->free(al->user, rt);
    return d.status != LOOM_OK ? d.status : LOOM_ERR_BACKEND;
  }
  rt->cpu_level = rt_host_cpu_level();
  rt->host = (LoomrtStream){.rt = rt, .kind = LOOM_DEVICE_HOST, .device = -1};
  Diag empty = {.status = LOOM_ERR_INTERNAL, .msg = ""};
  ctx_report(&rt->ctx, &empty); /* a stale message of an earlier runtime at this address */
  *out = rt;
  return LOOM_OK;
}

LOOMRT_API void loomrt_destroy(LoomrtRuntime *rt) {
  if (!rt) return;
  while (rt->embedded) {
    LoomrtBundle *b = rt->embedded;
    rt->embedded = b->next_embedded;
    b->embedded_key = NULL;
    loomrt_bundle_close(b);
  }
  rtrt_gpu_destroy(rt);
  rt_symbol_resolver_free(rt->resolver);
  rt_pool_destroy(rt->pool);
  pthread_mutex_destroy(&rt->lock);
  Diag empty = {.status = LOOM_ERR_INTERNAL, .msg = ""};
  ctx_report(&rt->ctx, &empty);
  LoomAllocator al = rt->ctx.alloc;
  al.free(al.user, rt);
}

LOOMRT_API const char *loomrt_last_error(LoomrtRuntime *rt) {
  return rt ? ctx_last_error(&rt->ctx) : "loomrt_last_error: rt is NULL";
}

/* ---- bundles ---------------------------------------------------------------------------------------- */
static LoomStatus open_bytes(LoomrtRuntime *rt, const uint8_t *data, size_t size, uint8_t *owned, const char *what,
                             LoomrtBundle **out, Diag *d) {
  LoomrtBundle *b = ctx_calloc(&rt->ctx, 1, sizeof *b);
  if (!b) {
    ctx_free(&rt->ctx, owned);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle");
  }
  b->rt = rt;
  b->owned = owned;
  snprintf(b->what, sizeof b->what, "%s", what);
  pthread_mutex_init(&b->lock, NULL);
  LoomStatus st = rt_bundle_parse(&rt->ctx, data, size, b->what, &b->b, d);
  if (st == LOOM_OK) {
    b->images = ctx_calloc(&rt->ctx, (size_t)b->b->ncode + 1, sizeof *b->images);
    b->checked = ctx_calloc(&rt->ctx, (size_t)b->b->ncode + 1, 1);
    if (!b->images || !b->checked) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle %s", b->what);
  }
  if (st != LOOM_OK) {
    loomrt_bundle_close(b);
    return st;
  }
  *out = b;
  return LOOM_OK;
}

LOOMRT_API LoomStatus loomrt_bundle_open(LoomrtRuntime *rt, const char *path, LoomrtBundle **out) {
  if (!rt || !out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  Diag d = {.status = LOOM_OK};
  if (!path) return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_bundle_open: path is NULL");
  /* one read of the whole file (its size from fstat; a file that changes meanwhile fails the checks) */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    if (fd >= 0) close(fd);
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "cannot open bundle %s: %s", path, fd < 0 ? strerror(errno) : "not a regular file");
  }
  size_t n = (size_t)sb.st_size, got = 0;
  uint8_t *p = ctx_alloc(&rt->ctx, n ? n : 1);
  while (p && got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (!p) return fail(rt, LOOM_ERR_OUT_OF_MEMORY, "out of memory reading bundle %s (%zu bytes)", path, n);
  n = got;
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  LoomStatus st = open_bytes(rt, p, n, p, base, out, &d);
  return st == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API LoomStatus loomrt_bundle_open_memory(LoomrtRuntime *rt, const void *data, size_t size, LoomrtBundle **out) {
  if (!rt || !out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = open_bytes(rt, data, size, NULL, "(memory)", out, &d);
  return st == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API LoomStatus loomrt_bundle_embedded(LoomrtRuntime *rt, const LoomrtEmbedded *e, LoomrtBundle **out) {
  if (!rt || !e || !out) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  pthread_mutex_lock(&rt->lock);
  LoomrtBundle *b = rt->embedded;
  while (b && b->embedded_key != (const void *)e) b = b->next_embedded;
  LoomStatus st = LOOM_OK;
  if (!b) {
    char what[128];
    snprintf(what, sizeof what, "%s (embedded)", e->name ? e->name : "?");
    st = open_bytes(rt, e->data, e->size, NULL, what, &b, &d);
    if (st == LOOM_OK) {
      b->embedded_key = e;
      b->next_embedded = rt->embedded;
      rt->embedded = b;
    }
  }
  pthread_mutex_unlock(&rt->lock);
  *out = st == LOOM_OK ? b : NULL;
  return st == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API void loomrt_bundle_close(LoomrtBundle *b) {
  if (!b || b->embedded_key) return;
  LoomContext *ctx = &b->rt->ctx;
  rtrt_gpu_bundle_free(b);
  for (int32_t i = 0; b->images && i < b->b->ncode; i++) rt_host_image_free(b->images[i]);
  ctx_free(ctx, b->images);
  ctx_free(ctx, b->checked);
  rt_bundle_free(b->b);
  ctx_free(ctx, b->owned);
  pthread_mutex_destroy(&b->lock);
  ctx_free(ctx, b);
}

LOOMRT_API int32_t loomrt_bundle_entry_count(const LoomrtBundle *b) { return b ? b->b->nentry : 0; }

LOOMRT_API const char *loomrt_bundle_entry_name(const LoomrtBundle *b, int32_t i) {
  return b && i >= 0 && i < b->b->nentry ? b->b->entries[b->b->entry_sorted[i]].name : NULL;
}

static LoomStatus find_entry(LoomrtBundle *b, const char *entry, const RtBundleEntry **out, Diag *d) {
  *out = entry ? rt_bundle_find_entry(b->b, entry) : NULL;
  if (*out) return LOOM_OK;
  char names[300] = "";
  size_t n = 0;
  for (int32_t i = 0; i < b->b->nentry && n < sizeof names - 64; i++)
    n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", b->b->entries[b->b->entry_sorted[i]].name);
  return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s has no entry '%.80s' (it has: %s%s)", b->what,
                    entry ? entry : "(null)", names, n >= sizeof names - 64 ? ", ..." : "");
}

LOOMRT_API LoomStatus loomrt_entry_info(LoomrtBundle *b, const char *entry, LoomrtEntryInfo *out) {
  if (!b || !out) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  const RtBundleEntry *e;
  if (find_entry(b, entry, &e, &d) != LOOM_OK) return report(b->rt, &d);
  const RtBundleKernel *k = &b->b->kernels[e->kernel[0] >= 0 ? e->kernel[0] : e->kernel[1]];
  memset(out, 0, sizeof *out);
  out->ndim = k->ndim;
  out->nkeep = k->nkeep;
  out->nbuf = k->nbuf;
  out->index_widths = (e->kernel[0] >= 0 ? 1 : 0) | (e->kernel[1] >= 0 ? 2 : 0);
  out->nparam = k->nparam;
  for (int32_t p = 0; p < k->nparam && p < 64; p++) out->param_dtype[p] = (LoomDType)k->params[p].dtype;
  for (int32_t i = 0; i < k->nbuf && i < 64; i++) {
    out->dtype[i] = (LoomDType)k->bufs[i].dtype;
    out->is_output[i] = k->bufs[i].is_output;
    for (int j = 0; j < k->ndim; j++) out->layout[i][j] = k->bufs[i].layout[j];
  }
  return LOOM_OK;
}

/* ---- streams and GPU memory -------------------------------------------------------------------------- */
LOOMRT_API LoomrtStream *loomrt_host_stream(LoomrtRuntime *rt) { return rt ? &rt->host : NULL; }
LOOMRT_API LoomrtRuntime *loomrt_stream_runtime(const LoomrtStream *s) { return s ? s->rt : NULL; }
LOOMRT_API int32_t loomrt_device_count(LoomrtRuntime *rt, LoomDeviceKind kind) {
  if (!rt) return 0;
  if (kind == LOOM_DEVICE_HOST) return 1;
  return rtrt_gpu_device_count(rt, kind);
}

LOOMRT_API LoomStatus loomrt_stream_create(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, LoomrtStream **out) {
  if (!rt || !out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (kind == LOOM_DEVICE_HOST)
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_stream_create: the host has one stream, loomrt_host_stream(rt)");
  Diag d = {.status = LOOM_OK};
  LoomrtStream *s = ctx_calloc(&rt->ctx, 1, sizeof *s);
  if (!s) return fail(rt, LOOM_ERR_OUT_OF_MEMORY, "out of memory: stream");
  s->rt = rt;
  s->kind = kind;
  s->device = device;
  if (rtrt_gpu_stream_create(rt, kind, device, &s->h, &d) != LOOM_OK) {
    ctx_free(&rt->ctx, s);
    return report(rt, &d);
  }
  *out = s;
  return LOOM_OK;
}

LOOMRT_API void loomrt_stream_destroy(LoomrtStream *s) {
  if (!s || s->kind == LOOM_DEVICE_HOST) return;
  rtrt_gpu_stream_destroy(s);
  ctx_free(&s->rt->ctx, s);
}

LOOMRT_API LoomStatus loomrt_stream_synchronize(LoomrtStream *s) {
  if (!s) return LOOM_ERR_INVALID_ARGUMENT;
  if (s->kind == LOOM_DEVICE_HOST) return LOOM_OK;
  Diag d = {.status = LOOM_OK};
  return rtrt_gpu_stream_synchronize(s, &d) == LOOM_OK ? LOOM_OK : report(s->rt, &d);
}

LOOMRT_API void *loomrt_stream_handle(LoomrtStream *s) { return s && s->kind != LOOM_DEVICE_HOST ? s->h : NULL; }
LOOMRT_API LoomDeviceKind loomrt_stream_kind(const LoomrtStream *s) { return s ? s->kind : LOOM_DEVICE_HOST; }

LOOMRT_API LoomStatus loomrt_alloc(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, size_t bytes, void **out) {
  if (!rt || !out) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  return rtrt_gpu_alloc(rt, kind, device, bytes, out, &d) == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API LoomStatus loomrt_free(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *ptr) {
  if (!rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  return rtrt_gpu_free(rt, kind, device, ptr, &d) == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API LoomStatus loomrt_copy(LoomrtRuntime *rt, LoomDeviceKind kind, int32_t device, void *dst, const void *src,
                                  size_t bytes, int32_t dir) {
  if (!rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  return rtrt_gpu_copy(rt, kind, device, dst, src, bytes, dir, &d) == LOOM_OK ? LOOM_OK : report(rt, &d);
}

/* the CUDA names of the calls above (the first API had only CUDA) */
LOOMRT_API int32_t loomrt_cuda_device_count(LoomrtRuntime *rt) { return loomrt_device_count(rt, LOOM_DEVICE_CUDA); }
LOOMRT_API LoomStatus loomrt_cuda_stream_create(LoomrtRuntime *rt, int32_t device, LoomrtStream **out) {
  return loomrt_stream_create(rt, LOOM_DEVICE_CUDA, device, out);
}
LOOMRT_API LoomStatus loomrt_cuda_alloc(LoomrtRuntime *rt, int32_t device, size_t bytes, void **out) {
  return loomrt_alloc(rt, LOOM_DEVICE_CUDA, device, bytes, out);
}
LOOMRT_API LoomStatus loomrt_cuda_free(LoomrtRuntime *rt, int32_t device, void *ptr) {
  return loomrt_free(rt, LOOM_DEVICE_CUDA, device, ptr);
}
LOOMRT_API LoomStatus loomrt_cuda_copy(LoomrtRuntime *rt, int32_t device, void *dst, const void *src, size_t bytes,
                                       int32_t kind) {
  return loomrt_copy(rt, LOOM_DEVICE_CUDA, device, dst, src, bytes, kind);
}

/* ---- launching ------------------------------------------------------------------------------------------ */
LoomStatus rtrt_check_code(LoomrtBundle *b, int32_t code, Diag *d) {
  if (b->checked[code]) return LOOM_OK;
  LoomStatus st = rt_bundle_code_check(b->b, &b->b->codes[code], d);
  if (st == LOOM_OK) b->checked[code] = 1;
  return st;
}

/* The host entry points of kernel record ki for this CPU, mapping its image on first use. */
static LoomStatus host_kernel(LoomrtBundle *b, int32_t ki, CgCompiled *out, Diag *d) {
  LoomrtRuntime *rt = b->rt;
  const RtBundleKernel *kr = &b->b->kernels[ki];
  int32_t best = -1;
  uint32_t best_level = 0, have = 0;
  for (uint32_t i = kr->code_first; i < kr->code_first + kr->ncode; i++) {
    const RtBundleTarget *t = &b->b->targets[b->b->codes[i].target];
    if (t->kind != RB_TARGET_HOST_X86_64) continue;
    if (t->arch > have) have = t->arch;
    if ((int)t->arch <= rt->cpu_level && t->arch > best_level) {
      best = (int32_t)i;
      best_level = t->arch;
    }
  }
  if (best < 0) {
    if (!have)
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "bundle %s: entry '%s' has no host code (it was built for GPUs only)", b->what,
                        kr->name);
    char missing[200];
    rt_host_cpu_missing((int)have, missing, sizeof missing);
    return diag_error(d, LOOM_ERR_UNSUPPORTED,
                      "bundle %s: entry '%s' has host code for %s at best, which this CPU cannot run (missing %s); "
                      "rebuild the bundle with --target host", b->what, kr->name, rt_host_level_name((int)have),
                      rt->cpu_level ? missing : "an x86-64 CPU");
  }
  pthread_mutex_lock(&b->lock);
  LoomStatus st = LOOM_OK;
  if (!b->images[best]) {
    pthread_mutex_lock(&rt->lock);
    if (!rt->resolver) st = rt_symbol_resolver_create(&rt->ctx, &rt->resolver, d);
    pthread_mutex_unlock(&rt->lock);
    if (st == LOOM_OK) st = rtrt_check_code(b, best, d);
    if (st == LOOM_OK)
      st = rt_host_image_load(&rt->ctx, rt->resolver, b->b->codes[best].blob, (size_t)b->b->codes[best].blob_size, b->what,
                              &b->images[best], d);
  }
  pthread_mutex_unlock(&b->lock);
  if (st != LOOM_OK) return st;
  const RtBundleCode *c = &b->b->codes[best];
  const RtHostImage *im = b->images[best];
  memset(out, 0, sizeof *out);
  out->run = (CgRunFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_RUN]);
  if (c->facts[RB_HOST_PARTIAL] != RB_NO_SYMBOL) {
    out->partial = (CgPartialFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_PARTIAL]);
    out->finish = (CgFinishFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_FINISH]);
    out->acc_size = (int32_t)c->facts[RB_HOST_ACC_SIZE];
    if (!out->partial || !out->finish) out->run = NULL;
  }
  if (c->facts[RB_HOST_COL_PHASES]) {
    out->colpart = (CgColFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_COLPART]);
    out->colfinish = (CgColFn)(uintptr_t)rt_host_image_symbol(im, c->facts[RB_HOST_COLFINISH]);
    out->col_phases = c->facts[RB_HOST_COL_PHASES];
    out->acc_size = (int32_t)c->facts[RB_HOST_ACC_SIZE];
    if (!out->colpart || !out->colfinish) out->run = NULL;
  }
  if (!out->run)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: entry '%s': an entry point lies outside its code: corrupted",
                      b->what, kr->name);
  return LOOM_OK;
}

static int64_t iabs64(int64_t v) { return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v; }

/* The launch word of a parameter of dtype t whose value is at v (codegen.h: ir_param_word's encoding). */
static uint64_t param_word(LoomDType t, const void *v) {
  switch (t) {
  case LOOM_BOOL: return *(const uint8_t *)v != 0;
  case LOOM_INT8: return (uint64_t)(int64_t)*(const int8_t *)v;
  case LOOM_INT16: return (uint64_t)(int64_t)*(const int16_t *)v;
  case LOOM_INT32: return (uint64_t)(int64_t)*(const int32_t *)v;
  case LOOM_UINT8: return *(const uint8_t *)v;
  case LOOM_UINT16: return *(const uint16_t *)v;
  case LOOM_UINT32: case LOOM_FLOAT32: return *(const uint32_t *)v;
  default: return *(const uint64_t *)v; /* int64, uint64, float64: the bundle reader allows no other */
  }
}

static LoomStatus launch(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim, const int64_t *shape, int32_t nbuf,
                         void *const *bufs, const int64_t *strides, int32_t nparam, const void *const *params);

LOOMRT_API LoomStatus loomrt_launch(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim, const int64_t *shape,
                                    int32_t nbuf, void *const *bufs, const int64_t *strides) {
  return launch(b, entry, s, ndim, shape, nbuf, bufs, strides, -1, NULL);
}

LOOMRT_API LoomStatus loomrt_launch_params(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim,
                                           const int64_t *shape, int32_t nbuf, void *const *bufs, const int64_t *strides,
                                           int32_t nparam, const void *const *params) {
  return launch(b, entry, s, ndim, shape, nbuf, bufs, strides, nparam, params);
}

/* nparam -1: loomrt_launch (no parameters given). */
static LoomStatus launch(LoomrtBundle *b, const char *entry, LoomrtStream *s, int32_t ndim, const int64_t *shape, int32_t nbuf,
                         void *const *bufs, const int64_t *strides, int32_t nparam, const void *const *params) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  LoomrtRuntime *rt = b->rt;
  Diag d = {.status = LOOM_OK};
  const RtBundleEntry *e;
  if (find_entry(b, entry, &e, &d) != LOOM_OK) return report(rt, &d);
  const RtBundleKernel *k = &b->b->kernels[e->kernel[0] >= 0 ? e->kernel[0] : e->kernel[1]];
  if (!s || s->rt != rt) return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): the stream is NULL or of another runtime", e->name);
  if (ndim != k->ndim || nbuf != k->nbuf)
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): got ndim %d and %d buffers; the kernel has ndim %d and %d buffers",
                      e->name, ndim, nbuf, k->ndim, k->nbuf);
  if (!shape || !bufs || !strides)
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): shape, bufs and strides must not be NULL", e->name);
  if (nparam < 0 && k->nparam > 0)
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): the kernel takes %d scalar parameters; launch it with "
                "loomrt_launch_params", e->name, k->nparam);
  if (nparam >= 0 && (nparam != k->nparam || (nparam > 0 && !params)))
    return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch_params(%s): got %d parameters%s; the kernel takes %d", e->name,
                nparam, nparam > 0 && !params ? " and params NULL" : "", k->nparam);
  for (int32_t p = 0; p < k->nparam; p++)
    if (!params[p]) return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch_params(%s): params[%d] is NULL", e->name, p);
  int64_t no = 1, nr = 1, points = 1;
  bool overflow = false;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): size n%d is %lld", e->name, i, (long long)shape[i]);
    overflow |= __builtin_mul_overflow(points, shape[i], &points);
    if (i < k->nkeep) no = sat_mul(no, shape[i]);
    else nr = sat_mul(nr, shape[i]);
  }
  bool zero = false;
  for (int32_t i = 0; i < ndim; i++) zero |= shape[i] == 0;
  if (zero) points = 0; /* an empty space, whatever the other sizes */
  else if (overflow) return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): the sizes overflow int64", e->name);
  bool elementwise = k->nkeep == k->ndim;
  if (elementwise) no = points;
  bool empty = no == 0 || (elementwise && points == 0);
  bool wide = points > INT32_MAX;
  for (int32_t bi = 0; bi < nbuf; bi++) {
    if (!bufs[bi] && !empty)
      return fail(rt, LOOM_ERR_INVALID_ARGUMENT, "loomrt_launch(%s): buffer %d is NULL", e->name, bi);
    int64_t extent = 0;
    for (int32_t i = 0; i < ndim; i++) {
      int64_t st = strides[(size_t)bi * (size_t)ndim + (size_t)i];
      int64_t want;
      if (shape[i] > 1 && ir_layout_const(k->bufs[bi].layout[i], &want) && st != want)
        return fail(rt, LOOM_ERR_INVALID_ARGUMENT,
                          "loomrt_launch(%s): buffer %d has stride %lld along dim %d, but its code was compiled for "
                          "stride %lld there (another layout needs another signature in the bundle)", e->name, bi,
                          (long long)st, i, (long long)want);
      if (shape[i] > 0 && !__builtin_mul_overflow(shape[i] - 1, iabs64(st), &st)) extent = extent > INT64_MAX - st ? INT64_MAX : extent + st;
      else if (shape[i] > 0) extent = INT64_MAX;
    }
    if (extent > INT32_MAX) wide = true;
  }
  if (empty) return LOOM_OK;
  int32_t ki = e->kernel[wide ? 1 : 0];
  if (ki < 0 && !wide) ki = e->kernel[1];
  if (ki < 0)
    return fail(rt, LOOM_ERR_UNSUPPORTED,
                      "loomrt_launch(%s): these sizes need 64-bit indexing, and the bundle has only 32-bit code for it "
                      "(build it with loomc --index both)", e->name);
  /* the kernel's slots: the buffers, then the parameters' launch words (codegen.h) */
  void *stack_slots[128], **slots = (void **)bufs;
  if (k->nparam > 0) {
    size_t n = (size_t)nbuf + (size_t)k->nparam;
    slots = n <= 128 ? stack_slots : ctx_alloc(&rt->ctx, n * sizeof *slots);
    if (!slots) return fail(rt, LOOM_ERR_OUT_OF_MEMORY, "loomrt_launch_params(%s): out of memory", e->name);
    memcpy(slots, bufs, (size_t)nbuf * sizeof *slots);
    for (int32_t p = 0; p < k->nparam; p++) {
      uint64_t w = param_word((LoomDType)k->params[p].dtype, params[p]);
      memcpy(&slots[nbuf + p], &w, sizeof w);
    }
  }
  LoomStatus st;
  if (s->kind != LOOM_DEVICE_HOST) {
    st = rtrt_gpu_launch(b, ki, s, shape, slots, strides, no, nr, &d);
  } else {
    CgCompiled cc;
    st = host_kernel(b, ki, &cc, &d);
    if (st == LOOM_OK) st = rt_host_launch(&rt->ctx, rt->pool, &cc, elementwise, e->name, shape, slots, strides, no, nr, &d);
  }
  if (slots != bufs && slots != stack_slots) ctx_free(&rt->ctx, slots);
  return st == LOOM_OK ? LOOM_OK : report(rt, &d);
}

LOOMRT_API LoomStatus loomrt_launch_embedded(LoomrtStream *s, const LoomrtEmbedded *e, const char *entry, int32_t ndim,
                                             const int64_t *shape, int32_t nbuf, void *const *bufs, const int64_t *strides) {
  if (!s || !e) return LOOM_ERR_INVALID_ARGUMENT;
  LoomrtBundle *b = NULL;
  LoomStatus st = loomrt_bundle_embedded(s->rt, e, &b);
  return st == LOOM_OK ? loomrt_launch(b, entry, s, ndim, shape, nbuf, bufs, strides) : st;
}
