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
 * float16 and bfloat16 in 32F with float32 scales, float64 in 64F. ReLU in the library is max(x, 0),
 * which maps NaN to 0 (NumPy's maximum propagates it): documented in linalg.h.
 *
 * Algorithms: the heuristic's first choice with a 32 MiB workspace (Hopper's recommendation) and, where
 * the vendor takes them, the operands' actual alignments, cached per problem (shape, strides, dtype,
 * epilogue, alignment) in a small table of the kind; the workspace comes from the device pool per call (a
 * caching pool: no driver call).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_libs.h"

#define WORKSPACE_BYTES ((size_t)32 << 20)
#define MAX_DEVICES 64
#define ALGO_CACHE 64

typedef struct AlgoEntry {
  uint64_t key[16];
  bool used;
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

/* The cached algorithm of key into algo and *wsize; false when there is none. */
static bool cached_algo(GpuBlas *b, const uint64_t key[16], void *algo, size_t algo_size, size_t *wsize) {
  bool found = false;
  pthread_mutex_lock(&b->lock);
  for (int i = 0; i < ALGO_CACHE && !found; i++)
    if (b->cache[i].used && memcmp(b->cache[i].key, key, sizeof b->cache[i].key) == 0) {
      memcpy(algo, b->cache[i].algo, algo_size), *wsize = b->cache[i].workspace;
      found = true;
    }
  pthread_mutex_unlock(&b->lock);
  return found;
}

static void cache_algo(GpuBlas *b, const uint64_t key[16], const void *algo, size_t algo_size, size_t wsize) {
  pthread_mutex_lock(&b->lock);
  AlgoEntry *e = &b->cache[b->next_slot];
  b->next_slot = (b->next_slot + 1) % ALGO_CACHE;
  memcpy(e->key, key, sizeof e->key);
  memcpy(e->algo, algo, algo_size), e->workspace = wsize, e->used = true;
  pthread_mutex_unlock(&b->lock);
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
  bool dbl = g->dtype == LOOM_FLOAT64;
  int compute = dbl ? v->compute_64f
                : (g->dtype == LOOM_FLOAT32 && g->allow_tf32 && v->compute_32f_tf32 >= 0) ? v->compute_32f_tf32
                                                                                           : v->compute_32f;
  int scale = dbl ? v->r_64f : v->r_32f;
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
  /* the algorithm: cached per problem */
  uint64_t key[16] = {(uint64_t)index, (uint64_t)g->dtype | (uint64_t)compute << 8 | (uint64_t)epi << 16 |
                                           (uint64_t)(g->c != NULL) << 24 | (uint64_t)x.t << 25 | (uint64_t)y.t << 26,
                      (uint64_t)g->m, (uint64_t)g->n, (uint64_t)g->k, (uint64_t)g->batch, (uint64_t)x.ld,
                      (uint64_t)y.ld, (uint64_t)dd.ld, (uint64_t)cc.ld, (uint64_t)g->a_bs, (uint64_t)g->b_bs,
                      (uint64_t)g->d_bs, (uint64_t)g->c_bs,
                      (uint64_t)align_of(g->a) | (uint64_t)align_of(g->b) << 9 | (uint64_t)align_of(g->d) << 18 |
                          (uint64_t)align_of(g->c) << 27 | (uint64_t)align_of(g->bias) << 36,
                      0};
  _Alignas(16) unsigned char algo[GPU_LT_ALGO_MAX], res[GPU_LT_HEURISTIC_MAX];
  size_t wsize = 0;
  if (!s && !cached_algo(b, key, algo, v->algo_size, &wsize)) {
    uint64_t wmax = WORKSPACE_BYTES;
    call = "MatmulPreferenceCreate";
    s = f->pref_create(&pref);
    if (!s) s = f->pref_set(pref, v->pref_max_workspace, &wmax, sizeof wmax);
    /* the operands' alignment (the heuristic assumes 256 bytes otherwise): views may start anywhere */
    uint32_t al[4] = {align_of(g->b), align_of(g->a), align_of(g->c ? g->c : g->d), align_of(g->d)};
    for (int i = 0; i < 4 && !s && v->pref_min_alignment_a >= 0; i++)
      s = f->pref_set(pref, v->pref_min_alignment_a + i, &al[i], sizeof al[i]);
    int nres = 0;
    memset(res, 0, sizeof res);
    if (!s) call = "MatmulAlgoGetHeuristic", s = f->heuristic(h, desc, lx, ly, lc, ld, pref, 1, res, &nres);
    if (!s && nres < 1) {
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "%s has no algorithm for this %s product (m %lld, n %lld, k %lld, "
                      "batch %lld, epilogue %d) on %s device %d", v->lib.what, loom_dtype_name(g->dtype),
                      (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch, epi, v->device, index);
    } else if (!s) {
      memcpy(algo, res, v->algo_size);
      memcpy(&wsize, res + v->heuristic_workspace, sizeof wsize);
      cache_algo(b, key, algo, v->algo_size, wsize);
    }
  }
  const RtGpuDriver *drv = v->driver();
  RtStream *rs = rt_gpu_current_stream(drv, ctx, index);
  void *stream = rs ? rt_gpu_stream_handle(rs) : NULL;
  if (!s && st == LOOM_OK && wsize > 0) st = rt_gpu_alloc(drv, ctx, index, wsize, &work, d);
  if (!s && st == LOOM_OK) {
    float af = (float)g->alpha, bf = g->c ? (float)g->beta : 0.0f;
    double ad = g->alpha, bdv = g->c ? g->beta : 0.0;
    call = "Matmul";
    s = f->matmul(h, desc, dbl ? (const void *)&ad : &af, g->b, lx, g->a, ly, dbl ? (const void *)&bdv : &bf,
                  g->c ? g->c : g->d, lc, g->d, ld, algo, work, wsize, stream);
  }
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
