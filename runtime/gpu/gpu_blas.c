/* gpu_blas.c: matrix products on GPU devices through the vendor's Lt BLAS (cuBLASLt, hipBLASLt), over the
 * vendor table of gpu_libs.h, and the device kind's library state (handles, algorithm cache, the further
 * libraries' slots).
 *
 * Products. The Lt APIs are column-major, loom's d is row-major: d (m x n) = a b is computed as the
 * column-major product d^T (n x m) = b^T a^T, so a row-major operand is passed untransposed (op N) and a
 * column-major one (a transposed view) as op T: no copies. The strided batch is the layouts' BATCH_COUNT
 * and STRIDED_BATCH_OFFSET (an operand's offset 0 broadcasts it). Epilogues: bias (a vector along d's
 * columns = rows of d^T: the library's BIAS), ReLU and tanh-GELU (RELU, GELU, with BIAS: RELU_BIAS,
 * GELU_BIAS), alpha, and beta c (c as the library's C). Compute types: float32 in COMPUTE_32F (TF32 tensor
 * cores only where the vendor has them and the context allows it: loom_set_allow_tf32, LOOM_ALLOW_TF32=1),
 * float16 and bfloat16 in 32F with float32 scales, float64 in 64F, complex64 in 32F and complex128 in 64F
 * with complex scales (C_32F, C_64F: alpha and beta are (re, im) pairs; complex products take no
 * epilogue, passes/calls.c). ReLU in the library is max(x, 0),
 * which maps NaN to 0 (NumPy's maximum propagates it): documented in linalg.h.
 *
 * Algorithms: the heuristic is asked with a 32 MiB workspace (Hopper's recommendation, as PyTorch's) and,
 * where the vendor takes them, the operands' actual alignments; the choice is cached per problem (shape,
 * strides, dtype, compute type, epilogue, alignment, device) in a small table of the kind; the workspace
 * comes from the device pool per call (a caching pool: no driver call).
 *
 * Selection by timing (LOOM_BLAS_AUTOTUNE; default on). The heuristic's first choice is its model's guess
 * and is often a few percent off the fastest of its own top candidates on large products. So on a
 * problem's first call, if it has at least TUNE_MIN_MACS multiply-adds, the heuristic is asked for
 * TUNE_MAX candidates and each is run on the problem's own operands, timed with the device's events
 * (interleaved rounds of back-to-back runs, the minimum per candidate, within TUNE_BUDGET_MS); a
 * candidate the library refuses at run time is skipped; the fastest is cached, but the heuristic's first
 * stays unless another is faster by more than TUNE_MARGIN (so noise does not flip the choice). Results
 * change only by the rounding of another algorithm of the same compute type (the epilogue, scales and
 * types are the problem's). It times only where that is safe: on the default stream or one of Loom's
 * own (never a borrowed one, which its owner may be capturing into a CUDA graph: there the heuristic's
 * first is used and the problem is timed on a later call that may), and only when d overlaps none of the
 * inputs (the timed runs write d; the final run then writes it once more). LOOM_BLAS_AUTOTUNE=0 turns it
 * off (the heuristic's first, as before); =all times every product whatever its size (tests).
 * On disk: a timed choice is stored in Loom's disk cache (the kernels' folder: LOOM_CACHE_DIR, ...)
 * under the problem, the library's version and the device's name, chip and multiprocessor count; a
 * later process asks the heuristic as usual and takes the stored algorithm without timing when it is
 * byte for byte one of the candidates (so a stale entry is never used: it is timed again), which also
 * keeps the choice, and so the results' rounding, the same from run to run on a machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_libs.h"
#include "runtime/disk_cache.h"
#include "runtime/gpu/gpu_rt.h" /* GpuStream.borrowed, GpuDev.info */

#define WORKSPACE_BYTES ((size_t)32 << 20)
#define MAX_DEVICES 64
#define ALGO_CACHE 64
#define TUNE_MAX 8                          /* candidates asked of the heuristic */
#define TUNE_MIN_MACS ((uint64_t)1 << 30)   /* smaller products keep the heuristic's first (m n k batch) */
#define TUNE_TARGET_MS 0.5                  /* one measurement: back-to-back runs of about this long */
#define TUNE_INNER_MAX 16                   /* ... but at most this many runs */
#define TUNE_ROUNDS 3                       /* measurements per candidate, interleaved; the minimum counts */
#define TUNE_BUDGET_MS 400.0                /* the timed runs of one problem (fewer rounds past it) */
#define TUNE_MARGIN 0.997                   /* another candidate replaces the first when faster than this x */

typedef enum TuneMode { TUNE_OFF, TUNE_ON, TUNE_ALL } TuneMode;

typedef struct AlgoEntry {
  uint64_t key[16];
  bool used;
  bool final; /* timed (or never to be timed: the mode, the size); false: the heuristic's first for now */
  unsigned char algo[GPU_LT_ALGO_MAX];
  size_t workspace;
} AlgoEntry;

typedef struct GpuBlas {
  RtLoadedLib lib;
  GpuLtFns fn;
  pthread_mutex_t lock; /* handles, the algorithm cache, the further libraries' slots */
  void *handle[MAX_DEVICES];
  AlgoEntry cache[ALGO_CACHE];
  int next_slot;
  TuneMode tune; /* LOOM_BLAS_AUTOTUNE, read when the state is made */
  unsigned long long tuned, tune_runs, disk_hits; /* rt_gpu_blas_tune_stats */
  DiskCache *disk; /* the timed choices' disk cache (opened on first need, under lock) */
  bool disk_tried;
  unsigned disk_generation; /* RtState.cache_generation it was opened with */
  void *slots[GPU_LIB_COUNT];
} GpuBlas;

_Static_assert(sizeof(GpuLtFns) % sizeof(void *) == 0, "GpuLtFns is a plain array of function pointers");

long long rt_gpu_lt_version(const void *fns) {
  const GpuLtFns *f = fns;
  return f->get_version ? (long long)f->get_version() : -1;
}

LoomStatus rt_gpu_blas_probe(const GpuBlasVendor *v, char *path, size_t size, Diag *d) {
  return rt_vendor_lib_probe(&v->lib, sizeof(GpuLtFns), path, size, d);
}

/* The context's library state of v's kind (made on first use; the BLAS library loaded then, successfully
 * or not). NULL: out of memory. */
static GpuBlas *libs_state(LoomContext *ctx, const GpuBlasVendor *v) {
  RtState *rt = ctx->rt;
  LoomDeviceKind kind = v->driver()->kind;
  pthread_mutex_lock(&rt->device_lock);
  GpuBlas *b = rt->linalg[kind];
  if (!b && (b = ctx_calloc(ctx, 1, sizeof *b)) != NULL) {
    pthread_mutex_init(&b->lock, NULL);
    rt_vendor_lib_load(&v->lib, &b->fn, &b->lib);
    const char *t = getenv("LOOM_BLAS_AUTOTUNE");
    b->tune = !t || !*t ? TUNE_ON
              : !strcmp(t, "0") || !strcmp(t, "off") || !strcmp(t, "false") ? TUNE_OFF
              : !strcmp(t, "all") ? TUNE_ALL
                                  : TUNE_ON;
    rt->linalg[kind] = b;
  }
  pthread_mutex_unlock(&rt->device_lock);
  return b;
}

LoomStatus rt_gpu_lib_state(LoomContext *ctx, const GpuBlasVendor *v, GpuLibSlot which, const RtVendorLib *lib,
                            size_t size, size_t fns_offset, RtLoadedLib **out, pthread_mutex_t **lock, Diag *d) {
  GpuBlas *b = libs_state(ctx, v);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the %s library state", v->device);
  pthread_mutex_lock(&b->lock);
  RtLoadedLib *s = b->slots[which];
  if (!s && (s = ctx_calloc(ctx, 1, size)) != NULL) {
    rt_vendor_lib_load(lib, (char *)s + fns_offset, s);
    b->slots[which] = s;
  }
  LoomStatus st = LOOM_OK;
  if (!s) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the %s state", lib->what);
  else if (s->fail.status != LOOM_OK) st = diag_error(d, s->fail.status, "%s", s->fail.msg);
  if (st != LOOM_OK) {
    pthread_mutex_unlock(&b->lock);
    return st;
  }
  *out = s;
  *lock = &b->lock;
  return LOOM_OK;
}

void rt_gpu_lib_state_free(LoomContext *ctx, RtLoadedLib *state) {
  rt_vendor_lib_close(state);
  ctx_free(ctx, state);
}

void rt_gpu_libs_close(LoomContext *ctx, const GpuBlasVendor *v) {
  LoomDeviceKind kind = v->driver()->kind;
  GpuBlas *b = ctx->rt->linalg[kind];
  if (!b) return;
  for (int i = 0; i < GPU_LIB_COUNT; i++)
    if (b->slots[i] && v->slot_close[i]) v->slot_close[i](ctx, b->slots[i]);
  for (int i = 0; i < MAX_DEVICES; i++)
    if (b->handle[i]) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(v->driver(), ctx, i, &dd); /* the library frees its device state in the device's context */
      b->fn.destroy(b->handle[i]);
    }
  rt_disk_cache_close(b->disk);
  rt_vendor_lib_close(&b->lib);
  pthread_mutex_destroy(&b->lock);
  ctx_free(ctx, b);
  ctx->rt->linalg[kind] = NULL;
}

static LoomStatus lt_error(const GpuBlasVendor *v, const GpuBlas *b, int s, const char *call, int device, Diag *d) {
  const char *name = b->fn.status_name ? b->fn.status_name(s) : NULL;
  LoomStatus st = s == v->status_alloc_failed ? LOOM_ERR_OUT_OF_MEMORY
                  : s == v->status_not_supported ? LOOM_ERR_UNSUPPORTED
                                                 : LOOM_ERR_BACKEND;
  return diag_error(d, st, "%s%s on %s device %d failed: %s%s (status %d)", v->prefix, call, v->device, device,
                    name ? name : v->lib.what, name ? "" : " error", s);
}

/* ---- products ---------------------------------------------------------------------------------------- */
/* The stored layout of an operand (rows x cols of the column-major product) and whether it is op T. */
typedef struct Operand {
  bool t;
  uint64_t rows, cols;
  int64_t ld;
} Operand;

/* x (r x c in loom's row-major view, strides rs, cs, one of them 1) as the column-major c x r matrix x^T:
 * row-major storage is x^T column-major (op N, ld rs); column-major storage is x (r x c) stored, op T. */
static Operand transposed_operand(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  if (cs == 1) return (Operand){false, (uint64_t)c, (uint64_t)r, rs > c ? rs : c};
  return (Operand){true, (uint64_t)r, (uint64_t)c, cs > r ? cs : r};
}

static int data_type(const GpuBlasVendor *v, LoomDType t) {
  switch (t) {
  case LOOM_FLOAT16: return v->r_16f;
  case LOOM_BFLOAT16: return v->r_16bf;
  case LOOM_FLOAT32: return v->r_32f;
  case LOOM_FLOAT64: return v->r_64f;
  case LOOM_COMPLEX64: return v->c_32f;
  case LOOM_COMPLEX128: return v->c_64f;
  default: return -1;
  }
}

static int epilogue_of(const GpuBlasVendor *v, const RtGemm *g) {
  int e = g->act == KACT_RELU ? v->epilogue_relu : g->act == KACT_GELU_TANH ? v->epilogue_gelu : v->epilogue_default;
  if (g->bias) e = e == v->epilogue_default ? v->epilogue_bias : e | v->epilogue_bias; /* RELU_BIAS, GELU_BIAS */
  return e;
}

static LoomStatus handle_of(LoomContext *ctx, const GpuBlasVendor *v, GpuBlas *b, int index, void **out, Diag *d) {
  if (index < 0 || index >= MAX_DEVICES)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: device %d is beyond the %d loom supports", v->lib.what, index,
                      MAX_DEVICES);
  pthread_mutex_lock(&b->lock);
  int s = 0;
  LoomStatus st = LOOM_OK;
  if (!b->handle[index] && (st = rt_gpu_make_current(v->driver(), ctx, index, d)) == LOOM_OK)
    s = b->fn.create(&b->handle[index]);
  *out = b->handle[index];
  pthread_mutex_unlock(&b->lock);
  if (st != LOOM_OK) return st;
  return s ? lt_error(v, b, s, "Create", index, d) : LOOM_OK;
}

static uint32_t align_of(const void *p) { /* the largest power of two dividing p, up to 256 (NULL: 256) */
  uint64_t a = (uint64_t)(uintptr_t)p, low = a & (~a + 1);
  return a == 0 || low >= 256 ? 256u : (uint32_t)low;
}

/* The cached algorithm of key into algo, *wsize and *final; false when there is none. */
static bool cached_algo(GpuBlas *b, const uint64_t key[16], void *algo, size_t algo_size, size_t *wsize,
                        bool *final) {
  bool found = false;
  pthread_mutex_lock(&b->lock);
  for (int i = 0; i < ALGO_CACHE && !found; i++)
    if (b->cache[i].used && memcmp(b->cache[i].key, key, sizeof b->cache[i].key) == 0) {
      memcpy(algo, b->cache[i].algo, algo_size), *wsize = b->cache[i].workspace, *final = b->cache[i].final;
      found = true;
    }
  pthread_mutex_unlock(&b->lock);
  return found;
}

/* Stores key's algorithm: over its entry if it has one (a later timing, or two threads' first calls),
 * else in the next slot (round robin). */
static void cache_algo(GpuBlas *b, const uint64_t key[16], const void *algo, size_t algo_size, size_t wsize,
                       bool final) {
  pthread_mutex_lock(&b->lock);
  AlgoEntry *e = NULL;
  for (int i = 0; i < ALGO_CACHE && !e; i++)
    if (b->cache[i].used && memcmp(b->cache[i].key, key, sizeof b->cache[i].key) == 0) e = &b->cache[i];
  if (!e) {
    e = &b->cache[b->next_slot];
    b->next_slot = (b->next_slot + 1) % ALGO_CACHE;
  }
  memcpy(e->key, key, sizeof e->key);
  memcpy(e->algo, algo, algo_size), e->workspace = wsize, e->used = true, e->final = final;
  pthread_mutex_unlock(&b->lock);
}

void rt_gpu_blas_tune_stats(LoomContext *ctx, const GpuBlasVendor *v, unsigned long long *problems,
                            unsigned long long *runs, unsigned long long *disk_hits) {
  GpuBlas *b = ctx->rt->linalg[v->driver()->kind];
  *problems = *runs = *disk_hits = 0;
  if (!b) return;
  pthread_mutex_lock(&b->lock);
  *problems = b->tuned, *runs = b->tune_runs, *disk_hits = b->disk_hits;
  pthread_mutex_unlock(&b->lock);
}

/* ---- timed choices on disk ------------------------------------------------------------------------------ */
/* The disk-cache key of a problem's timed choice: the library, the device, the problem (key[1..16): its
 * words but the device's index). false: no device information (no disk then). */
static bool disk_key(LoomContext *ctx, const GpuBlasVendor *v, GpuBlas *b, int index, const uint64_t key[16],
                     char *out, size_t size) {
  GpuRt *g = NULL;
  GpuDev *dev = NULL;
  Diag dd = {.status = LOOM_OK};
  if (rt_gpu_device(v->driver(), ctx, index, &g, &dev, &dd) != LOOM_OK) return false;
  int n = snprintf(out, size, "loom blas algorithm 1\n%s %lld\n%s %s %d.%d x%d\n", v->prefix,
                   rt_gpu_lt_version(&b->fn), dev->info.name, dev->info.arch, dev->info.arch_major,
                   dev->info.arch_minor, dev->info.sm_count);
  for (int i = 1; i < 16 && n > 0 && (size_t)n < size; i++)
    n += snprintf(out + n, size - (size_t)n, "%llx ", (unsigned long long)key[i]);
  return n > 0 && (size_t)n < size;
}

/* The cache, (re)opened with the context's settings (first use, or loom_set_cache changed them); NULL:
 * off. Caller holds b->lock. */
static DiskCache *blas_disk(LoomContext *ctx, GpuBlas *b) {
  unsigned gen = atomic_load(&ctx->rt->cache_generation);
  if (!b->disk_tried || b->disk_generation != gen) {
    Diag dd = {.status = LOOM_OK};
    rt_disk_cache_close(b->disk);
    b->disk = NULL;
    if (rt_disk_cache_open_configured(ctx, &b->disk, &gen, &dd) != LOOM_OK) b->disk = NULL;
    b->disk_tried = true, b->disk_generation = gen;
  }
  return b->disk;
}

/* The stored choice of the problem, as an index into the heuristic's candidates res[0..n), or -1 (none
 * stored, or not one of them). */
static int disk_pick(LoomContext *ctx, const GpuBlasVendor *v, GpuBlas *b, const char *dkey,
                     const unsigned char *res, int n) {
  void *blob = NULL;
  size_t size = 0;
  bool hit = false;
  Diag dd = {.status = LOOM_OK};
  int pick = -1;
  pthread_mutex_lock(&b->lock);
  DiskCache *dc = blas_disk(ctx, b);
  if (dc && rt_disk_cache_load(dc, dkey, &blob, &size, &hit, &dd) == LOOM_OK && hit) {
    for (int i = 0; i < n && pick < 0 && size == v->algo_size; i++)
      if (memcmp(res + (size_t)i * v->heuristic_size, blob, v->algo_size) == 0) pick = i;
    rt_disk_cache_free(dc, blob);
  }
  if (pick >= 0) b->disk_hits++;
  pthread_mutex_unlock(&b->lock);
  return pick;
}

static void disk_store(LoomContext *ctx, GpuBlas *b, const char *dkey, const void *algo, size_t algo_size) {
  Diag dd = {.status = LOOM_OK};
  pthread_mutex_lock(&b->lock);
  DiskCache *dc = blas_disk(ctx, b);
  if (dc) rt_disk_cache_store(dc, dkey, algo, algo_size, &dd); /* a failed store: timed again next time */
  pthread_mutex_unlock(&b->lock);
}

/* ---- selection by timing ------------------------------------------------------------------------------- */
/* One product's call, for the timing and the final run: its descriptor, layouts, scales and operands. */
typedef struct Call {
  const GpuLtFns *f;
  void *h, *desc, *lx, *ly, *lc, *ld;
  const RtGemm *g;
  bool dbl;
  void *stream;
} Call;

static int run_call(const Call *c, const void *algo, void *work, size_t wsize) {
  const RtGemm *g = c->g;
  /* the scale type's values: a real float / double, or a complex one's (re, im) with im 0 */
  float af[2] = {(float)g->alpha, 0}, bf[2] = {g->c ? (float)g->beta : 0.0f, 0};
  double ad[2] = {g->alpha, 0}, bdv[2] = {g->c ? g->beta : 0.0, 0};
  return c->f->matmul(c->h, c->desc, c->dbl ? (const void *)ad : af, g->b, c->lx, g->a, c->ly,
                      c->dbl ? (const void *)bdv : bf, g->c ? g->c : g->d, c->lc, g->d, c->ld, algo, work, wsize,
                      c->stream);
}

/* The bytes [lo, hi) an operand of r x c elements (leading dimension ld, `batch` matrices bs apart) of
 * es-byte elements spans from p; false for a negative stride (the caller then assumes an overlap). */
static bool span(const void *p, uint64_t r, uint64_t c, int64_t ld, int64_t batch, int64_t bs, size_t es,
                 uintptr_t *lo, uintptr_t *hi) {
  if (ld < 0 || bs < 0) return false;
  *lo = (uintptr_t)p;
  *hi = *lo + ((uint64_t)(batch - 1) * (uint64_t)bs + (c - 1) * (uint64_t)ld + r) * es;
  return true;
}

static bool overlaps(uintptr_t lo, uintptr_t hi, const void *p, uint64_t r, uint64_t c, int64_t ld, int64_t batch,
                     int64_t bs, size_t es) {
  uintptr_t l2, h2;
  if (!p) return false;
  if (!span(p, r, c, ld, batch, bs, es, &l2, &h2)) return true;
  return lo < h2 && l2 < hi;
}

/* Whether d (n x m column-major, ld d_ld) shares a byte with a, b, c or the bias: the timed runs would
 * then change what the final run reads. */
static bool d_overlaps_inputs(const RtGemm *g, int64_t x_rows, int64_t x_cols, int64_t x_ld, int64_t y_rows,
                              int64_t y_cols, int64_t y_ld, int64_t d_ld, int64_t c_ld) {
  size_t es = loom_dtype_size(g->dtype);
  uintptr_t lo, hi;
  if (!span(g->d, (uint64_t)g->n, (uint64_t)g->m, d_ld, g->batch, g->d_bs, es, &lo, &hi)) return true;
  return overlaps(lo, hi, g->b, (uint64_t)x_rows, (uint64_t)x_cols, x_ld, g->batch, g->b_bs, es) ||
         overlaps(lo, hi, g->a, (uint64_t)y_rows, (uint64_t)y_cols, y_ld, g->batch, g->a_bs, es) ||
         overlaps(lo, hi, g->c, (uint64_t)g->n, (uint64_t)g->m, c_ld, g->batch, g->c_bs, es) ||
         overlaps(lo, hi, g->bias, (uint64_t)g->n, 1, g->n, 1, 0, es);
}

/* Times the usable candidates of res[0..n) (heuristic results, v->heuristic_size apart) on the call's
 * stream and returns the index of the one to keep (0, the heuristic's first, unless another is faster by
 * more than TUNE_MARGIN); -1 when nothing could be timed (no events, no workspace: the caller keeps the
 * first and may try again later). Failures of a candidate's run (the library refusing it) skip it. */
static int tune_pick(LoomContext *ctx, const GpuBlasVendor *v, GpuBlas *b, int index, const Call *c, RtStream *rs,
                     const unsigned char *res, int n) {
  const RtGpuDriver *drv = v->driver();
  bool ok[TUNE_MAX];
  double best[TUNE_MAX];
  size_t wmax = 0;
  for (int i = 0; i < n; i++) {
    const unsigned char *r = res + (size_t)i * v->heuristic_size;
    size_t w;
    int state;
    memcpy(&w, r + v->heuristic_workspace, sizeof w);
    memcpy(&state, r + v->heuristic_workspace + sizeof(size_t), sizeof state);
    ok[i] = state == 0 && w <= WORKSPACE_BYTES;
    best[i] = 1e300;
    if (ok[i] && w > wmax) wmax = w;
  }
  RtEvent *e0 = NULL, *e1 = NULL;
  void *work = NULL;
  Diag dd = {.status = LOOM_OK};
  int pick = -1;
  unsigned long long runs = 0;
  if (rt_gpu_event_create(drv, ctx, index, &e0, &dd) != LOOM_OK || rt_gpu_event_create(drv, ctx, index, &e1, &dd) != LOOM_OK ||
      (wmax > 0 && rt_gpu_alloc(drv, ctx, index, wmax, &work, &dd) != LOOM_OK))
    goto done;
  /* round -1: each candidate's first run (an estimate); then `rounds` rounds of `inner` runs per candidate
   * between two events, interleaved, the minimum per run kept */
  double spent = 0, est = 1e300;
  int inner = 1, rounds = TUNE_ROUNDS;
  for (int r = -1; r < rounds; r++) {
    for (int i = 0; i < n; i++) {
      if (!ok[i]) continue;
      if (r < 0 && spent > TUNE_BUDGET_MS) { /* the first runs of a very long product: the rest untried */
        ok[i] = false;
        continue;
      }
      float ms = 0;
      const void *algo = res + (size_t)i * v->heuristic_size;
      int reps = r < 0 ? 1 : inner, s = 0;
      if (rt_gpu_event_record(drv, ctx, index, e0, rs, &dd) != LOOM_OK) goto done;
      for (int k = 0; k < reps && !s; k++) s = run_call(c, algo, work, wmax);
      runs += (unsigned long long)reps;
      if (s) { /* refused (not supported here, a resource limit): skipped; what it launched still ends */
        ok[i] = false;
        continue;
      }
      if (rt_gpu_event_record(drv, ctx, index, e1, rs, &dd) != LOOM_OK ||
          rt_gpu_event_synchronize(drv, ctx, e1, &dd) != LOOM_OK || rt_gpu_event_elapsed(drv, ctx, e0, e1, &ms, &dd) != LOOM_OK)
        goto done;
      if (r < 0) { /* the first run (loads the kernel): an estimate only */
        spent += ms;
        if (ms < est) est = ms;
      } else if ((double)ms / reps < best[i]) {
        best[i] = (double)ms / reps;
      }
    }
    if (r < 0) { /* the measurements' size from the first runs, within the budget */
      int nok = 0;
      for (int i = 0; i < n; i++) nok += ok[i];
      if (nok == 0) goto done;
      est = est > 1e-4 ? est : 1e-4;
      inner = (int)(TUNE_TARGET_MS / est + 0.999);
      inner = inner < 1 ? 1 : inner > TUNE_INNER_MAX ? TUNE_INNER_MAX : inner;
      while (rounds > 1 && (double)nok * rounds * inner * est > TUNE_BUDGET_MS) rounds--;
      if ((double)nok * inner * est > 2 * TUNE_BUDGET_MS) rounds = 0; /* too long to time: the first */
    }
  }
  int fast = -1;
  for (int i = 0; i < n; i++)
    if (ok[i] && best[i] < 1e300 && (fast < 0 || best[i] < best[fast])) fast = i;
  pick = fast < 0 || (ok[0] && best[0] < 1e300 && best[fast] >= TUNE_MARGIN * best[0]) ? 0 : fast;
done:
  if (e1) rt_gpu_event_synchronize(drv, ctx, e1, &dd); /* every timed run ended before the workspace goes */
  if (work) {
    if (rs) rt_gpu_stream_synchronize(drv, ctx, rs, &dd);
    rt_gpu_free(drv, ctx, index, work, wmax, &dd);
  }
  if (e1) rt_gpu_event_destroy(drv, ctx, e1);
  if (e0) rt_gpu_event_destroy(drv, ctx, e0);
  pthread_mutex_lock(&b->lock);
  b->tune_runs += runs;
  if (pick >= 0) b->tuned++;
  pthread_mutex_unlock(&b->lock);
  return pick;
}

LoomStatus rt_gpu_gemm(LoomContext *ctx, const GpuBlasVendor *v, int index, const RtGemm *g, Diag *d) {
  GpuBlas *b = libs_state(ctx, v);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the %s state", v->lib.what);
  if (b->lib.fail.status != LOOM_OK) return diag_error(d, b->lib.fail.status, "%s", b->lib.fail.msg);
  int dt = data_type(v, g->dtype);
  if (dt < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul of %s on %s devices is not supported", loom_dtype_name(g->dtype),
                      v->device);
  void *h = NULL;
  LoomStatus st = handle_of(ctx, v, b, index, &h, d);
  if (st != LOOM_OK) return st;
  const GpuLtFns *f = &b->fn;
  bool dbl = g->dtype == LOOM_FLOAT64 || g->dtype == LOOM_COMPLEX128;
  bool cplx = g->dtype == LOOM_COMPLEX64 || g->dtype == LOOM_COMPLEX128;
  if (cplx && (g->bias || g->act != KACT_NONE)) /* passes/calls.c fuses no epilogue into complex products */
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a %s matmul with an epilogue", loom_dtype_name(g->dtype));
  int compute = dbl ? v->compute_64f
                : (g->dtype == LOOM_FLOAT32 && g->allow_tf32 && v->compute_32f_tf32 >= 0) ? v->compute_32f_tf32
                                                                                           : v->compute_32f;
  int scale = cplx ? dt : dbl ? v->r_64f : v->r_32f;
  /* d^T (n x m) = X (n x k) Y (k x m): X from b, Y from a */
  Operand x = transposed_operand(g->k, g->n, g->b_rs, g->b_cs), y = transposed_operand(g->m, g->k, g->a_rs, g->a_cs);
  Operand dd = {false, (uint64_t)g->n, (uint64_t)g->m, g->d_rs > g->n ? g->d_rs : g->n};
  Operand cc = g->c ? (Operand){false, (uint64_t)g->n, (uint64_t)g->m, g->c_rs > g->n ? g->c_rs : g->n} : dd;
  int epi = epilogue_of(v, g), xop = x.t ? v->op_t : v->op_n, yop = y.t ? v->op_t : v->op_n;
  void *desc = NULL, *lx = NULL, *ly = NULL, *lc = NULL, *ld = NULL, *pref = NULL, *work = NULL;
  const char *call = "MatmulDescCreate";
  int s = f->desc_create(&desc, compute, scale);
  if (!s) call = "MatmulDescSetAttribute", s = f->desc_set(desc, v->desc_transa, &xop, sizeof xop);
  if (!s) s = f->desc_set(desc, v->desc_transb, &yop, sizeof yop);
  if (!s) s = f->desc_set(desc, v->desc_epilogue, &epi, sizeof epi);
  if (!s && g->bias) s = f->desc_set(desc, v->desc_bias_pointer, &g->bias, sizeof g->bias);
  if (!s) call = "MatrixLayoutCreate", s = f->layout_create(&lx, dt, x.rows, x.cols, x.ld);
  if (!s) s = f->layout_create(&ly, dt, y.rows, y.cols, y.ld);
  if (!s) s = f->layout_create(&lc, dt, cc.rows, cc.cols, cc.ld);
  if (!s) s = f->layout_create(&ld, dt, dd.rows, dd.cols, dd.ld);
  if (!s && g->batch > 1) {
    int32_t n = (int32_t)g->batch;
    call = "MatrixLayoutSetAttribute";
    void *ls[4] = {lx, ly, lc, ld};
    int64_t bs[4] = {g->b_bs, g->a_bs, g->c ? g->c_bs : g->d_bs, g->d_bs};
    for (int i = 0; i < 4 && !s; i++) {
      s = f->layout_set(ls[i], v->layout_batch_count, &n, sizeof n);
      if (!s) s = f->layout_set(ls[i], v->layout_batch_offset, &bs[i], sizeof bs[i]);
    }
  }
  const RtGpuDriver *drv = v->driver();
  RtStream *rs = rt_gpu_current_stream(drv, ctx, index);
  Call cl = {f, h, desc, lx, ly, lc, ld, g, dbl, rs ? rt_gpu_stream_handle(rs) : NULL};
  /* the algorithm: cached per problem */
  uint64_t key[16] = {(uint64_t)index, (uint64_t)g->dtype | (uint64_t)compute << 8 | (uint64_t)epi << 16 |
                                           (uint64_t)(g->c != NULL) << 24 | (uint64_t)x.t << 25 | (uint64_t)y.t << 26,
                      (uint64_t)g->m, (uint64_t)g->n, (uint64_t)g->k, (uint64_t)g->batch, (uint64_t)x.ld,
                      (uint64_t)y.ld, (uint64_t)dd.ld, (uint64_t)cc.ld, (uint64_t)g->a_bs, (uint64_t)g->b_bs,
                      (uint64_t)g->d_bs, (uint64_t)g->c_bs,
                      (uint64_t)align_of(g->a) | (uint64_t)align_of(g->b) << 9 | (uint64_t)align_of(g->d) << 18 |
                          (uint64_t)align_of(g->c) << 27 | (uint64_t)align_of(g->bias) << 36,
                      0};
  _Alignas(16) unsigned char algo[GPU_LT_ALGO_MAX], res[TUNE_MAX * GPU_LT_HEURISTIC_MAX];
  size_t wsize = 0;
  bool final = false, have = !s && cached_algo(b, key, algo, v->algo_size, &wsize, &final);
  /* timing: wanted for this problem (the mode, its size), and safe now (the stream, d apart from inputs) */
  uint64_t macs = (uint64_t)g->m * (uint64_t)g->n * (uint64_t)g->k * (uint64_t)g->batch;
  bool wanted = b->tune == TUNE_ALL || (b->tune == TUNE_ON && macs >= TUNE_MIN_MACS);
  bool may_time = wanted && (!rs || !((GpuStream *)rs)->borrowed) &&
                  !d_overlaps_inputs(g, (int64_t)x.rows, (int64_t)x.cols, x.ld, (int64_t)y.rows, (int64_t)y.cols, y.ld,
                                     dd.ld, cc.ld);
  if (!s && (!have || (!final && may_time))) {
    uint64_t wmax = WORKSPACE_BYTES;
    call = "MatmulPreferenceCreate";
    s = f->pref_create(&pref);
    if (!s) s = f->pref_set(pref, v->pref_max_workspace, &wmax, sizeof wmax);
    /* the operands' alignment (the heuristic assumes 256 bytes otherwise): views may start anywhere */
    uint32_t al[4] = {align_of(g->b), align_of(g->a), align_of(g->c ? g->c : g->d), align_of(g->d)};
    for (int i = 0; i < 4 && !s && v->pref_min_alignment_a >= 0; i++)
      s = f->pref_set(pref, v->pref_min_alignment_a + i, &al[i], sizeof al[i]);
    int nres = 0, want = may_time ? TUNE_MAX : 1;
    memset(res, 0, sizeof res);
    if (!s) call = "MatmulAlgoGetHeuristic", s = f->heuristic(h, desc, lx, ly, lc, ld, pref, want, res, &nres);
    if (!s && nres < 1) {
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "%s has no algorithm for this %s product (m %lld, n %lld, k %lld, "
                      "batch %lld, epilogue %d) on %s device %d", v->lib.what, loom_dtype_name(g->dtype),
                      (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch, epi, v->device, index);
    } else if (!s) {
      nres = nres > want ? want : nres;
      char dkey[1024];
      bool on_disk = may_time && nres > 1 && disk_key(ctx, v, b, index, key, dkey, sizeof dkey);
      int pick = nres <= 1 ? 0 : on_disk ? disk_pick(ctx, v, b, dkey, res, nres) : -1;
      if (pick < 0 && nres > 1) {
        pick = tune_pick(ctx, v, b, index, &cl, rs, res, nres);
        if (pick >= 0 && on_disk) disk_store(ctx, b, dkey, res + (size_t)pick * v->heuristic_size, v->algo_size);
      }
      const unsigned char *r = res + (size_t)(pick < 0 ? 0 : pick) * v->heuristic_size;
      memcpy(algo, r, v->algo_size);
      memcpy(&wsize, r + v->heuristic_workspace, sizeof wsize);
      /* final: timed, a single candidate, or never to be timed; else timed on a later call that may */
      cache_algo(b, key, algo, v->algo_size, wsize, pick >= 0 && (may_time || !wanted));
    }
  }
  if (!s && st == LOOM_OK && wsize > 0) st = rt_gpu_alloc(drv, ctx, index, wsize, &work, d);
  if (!s && st == LOOM_OK) call = "Matmul", s = run_call(&cl, algo, work, wsize);
  if (s && st == LOOM_OK) st = lt_error(v, b, s, call, index, d);
  if (work) {
    Diag fd = {.status = LOOM_OK};
    /* the pool is stream-blind: on a user stream the product must finish before its workspace is reused */
    if (rs) rt_gpu_stream_synchronize(drv, ctx, rs, &fd);
    rt_gpu_free(drv, ctx, index, work, wsize, &fd);
  }
  if (pref) f->pref_destroy(pref);
  if (ld) f->layout_destroy(ld);
  if (lc) f->layout_destroy(lc);
  if (ly) f->layout_destroy(ly);
  if (lx) f->layout_destroy(lx);
  if (desc) f->desc_destroy(desc);
  return st;
}
