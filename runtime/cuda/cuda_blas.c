/* cuda_blas.c: the CUDA device's vendor math library (runtime/linalg.h's RtLinalg): matrix products through
 * cuBLASLt, loaded at run time like the driver.
 *
 * Loading. On first use: the file named by LOOM_CUBLASLT, then libcublasLt.so.13 / .12 / .11 by soname (the
 * loader's path, or a copy already loaded by the process: loom's Python package preloads the
 * nvidia-cublas wheel's), then /usr/local/cuda/lib64 (CUDA_HOME/lib64 first). No library: every product on
 * a CUDA device is LOOM_ERR_UNSUPPORTED naming what to install. One cuBLASLt handle per device, made with
 * the device current.
 *
 * Products. cuBLASLt is column-major, loom's d is row-major: d (m x n) = a b is computed as the
 * column-major product d^T (n x m) = b^T a^T, so a row-major operand is passed untransposed (op N) and a
 * column-major one (a transposed view) as op T: no copies. The strided batch is cuBLASLt's
 * (BATCH_COUNT, STRIDED_BATCH_OFFSET; an operand's offset 0 broadcasts it). Epilogues: bias (a vector
 * along d's columns = rows of d^T: cuBLASLt's BIAS), ReLU and tanh-GELU (RELU, GELU, with BIAS: RELU_BIAS,
 * GELU_BIAS), alpha, and beta c (c as cuBLASLt's C). Compute types: float32 in CUBLAS_COMPUTE_32F
 * (TF32 tensor cores only when the context allows it: loom_set_allow_tf32, LOOM_ALLOW_TF32=1, as PyTorch's
 * allow_tf32), float16 and bfloat16 in 32F with float32 scales, float64 in 64F. ReLU on cuBLASLt is
 * max(x, 0), which maps NaN to 0 (NumPy's maximum propagates it): documented in linalg.h.
 *
 * Algorithms: cublasLtMatmulAlgoGetHeuristic's first choice with a 32 MiB workspace (Hopper's
 * recommendation) and the operands' actual alignments, cached per problem (shape, strides, dtype, epilogue, alignment) in a small table of
 * the device; the workspace comes from the device pool per call (a caching pool: no driver call).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "runtime/gpu/gpu_driver.h"
#include "runtime/vendor_lib.h"

#define WORKSPACE_BYTES ((size_t)32 << 20)
#define MAX_DEVICES 64
#define ALGO_CACHE 64

/* ---- the library ------------------------------------------------------------------------------------ */
typedef int LtStatus;
typedef void *LtHandle, *LtDesc, *LtLayout, *LtPref;
typedef struct LtAlgo {
  uint64_t data[8];
} LtAlgo;
typedef struct LtHeuristic {
  LtAlgo algo;
  size_t workspace;
  LtStatus state;
  float waves;
  int reserved[4];
} LtHeuristic;

#define LT_FUNCS(X)                                                                                               \
  X(cublasLtCreate, LtStatus, (LtHandle *))                                                                        \
  X(cublasLtDestroy, LtStatus, (LtHandle))                                                                         \
  X(cublasLtGetVersion, size_t, (void))                                                                            \
  X(cublasLtMatmulDescCreate, LtStatus, (LtDesc *, int, int))                                                      \
  X(cublasLtMatmulDescDestroy, LtStatus, (LtDesc))                                                                 \
  X(cublasLtMatmulDescSetAttribute, LtStatus, (LtDesc, int, const void *, size_t))                                 \
  X(cublasLtMatrixLayoutCreate, LtStatus, (LtLayout *, int, uint64_t, uint64_t, int64_t))                          \
  X(cublasLtMatrixLayoutDestroy, LtStatus, (LtLayout))                                                             \
  X(cublasLtMatrixLayoutSetAttribute, LtStatus, (LtLayout, int, const void *, size_t))                             \
  X(cublasLtMatmulPreferenceCreate, LtStatus, (LtPref *))                                                          \
  X(cublasLtMatmulPreferenceDestroy, LtStatus, (LtPref))                                                           \
  X(cublasLtMatmulPreferenceSetAttribute, LtStatus, (LtPref, int, const void *, size_t))                           \
  X(cublasLtMatmulAlgoGetHeuristic, LtStatus,                                                                      \
    (LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtHeuristic *, int *))                 \
  X(cublasLtMatmul, LtStatus, (LtHandle, LtDesc, const void *, const void *, LtLayout, const void *, LtLayout,     \
                               const void *, const void *, LtLayout, void *, LtLayout, const LtAlgo *, void *,     \
                               size_t, void *))

typedef struct AlgoEntry {
  uint64_t key[16];
  bool used;
  LtAlgo algo;
  size_t workspace;
} AlgoEntry;

typedef struct CuBlas {
  void *lib;
  char path[512];
  Diag fail; /* why loading failed (reported on every use) */
#define X(name, ret, args) ret(*name) args;
  LT_FUNCS(X)
#undef X
  const char *(*status_name)(LtStatus); /* cublasLtGetStatusName, optional */
  pthread_mutex_t lock;                 /* handles and the algorithm cache */
  LtHandle handle[MAX_DEVICES];
  AlgoEntry cache[ALGO_CACHE];
  int next_slot;
  void *libs[RT_CUDA_LIB_COUNT]; /* cuda_fft.c's state (cuFFT and its plans), cuda_solver.c's; under lock */
} CuBlas;

const char *const rt_cublaslt_symbols[] = {
#define X(name, ret, args) #name,
    LT_FUNCS(X)
#undef X
        NULL};

/* Resolves cuBLASLt's functions into b (vendor_lib.h's accept). */
static const char *resolve(void *lib, void *arg) {
  CuBlas *b = arg;
  const char *missing = NULL;
  void *p;
#define X(name, ret, args)                                                                                         \
  p = dlsym(lib, #name);                                                                                           \
  if (!p && !missing) missing = #name;                                                                             \
  memcpy(&b->name, &p, sizeof p);
  LT_FUNCS(X)
#undef X
  if (missing) {
    snprintf(b->fail.msg, sizeof b->fail.msg, "has no %s (too old: CUDA 11.4 or later needed)", missing);
    return b->fail.msg;
  }
  p = dlsym(lib, "cublasLtGetStatusName");
  memcpy(&b->status_name, &p, sizeof p);
  return NULL;
}

/* Loads the library into b; on failure b->fail says what was tried and what to install. */
static void load(CuBlas *b) {
  static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", NULL};
  static const char *const dirs[] = {"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", NULL};
  RtVendorLib v = {.what = "cuBLASLt", .purpose = "matrix products on CUDA devices",
                   .install = "install the CUDA toolkit's libcublas (or `pip install nvidia-cublas-cu13` / "
                              "nvidia-cublas-cu12)",
                   .env = "LOOM_CUBLASLT", .sonames = sonames, .dirs = dirs, .accept = resolve, .arg = b};
  Diag d = {.status = LOOM_OK};
  b->lib = rt_dlopen_first(&v, b->path, sizeof b->path, &d);
  b->fail = d;
}

static const RtGpuDriver *gpu(void) { return rt_cuda_gpu_driver(); }

/* The context's CUDA library state (made on first use; cuBLASLt loaded then, successfully or not). */
static CuBlas *libs_state(LoomContext *ctx) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->device_lock);
  CuBlas *b = rt->linalg[LOOM_DEVICE_CUDA];
  if (!b && (b = ctx_calloc(ctx, 1, sizeof *b)) != NULL) {
    b->fail.status = LOOM_OK;
    pthread_mutex_init(&b->lock, NULL);
    load(b);
    rt->linalg[LOOM_DEVICE_CUDA] = b;
  }
  pthread_mutex_unlock(&rt->device_lock);
  return b;
}

/* The context's cuBLASLt, loaded on first use. */
static LoomStatus cublas_state(LoomContext *ctx, CuBlas **out, Diag *d) {
  CuBlas *b = libs_state(ctx);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the cuBLASLt state");
  if (b->fail.status != LOOM_OK) return diag_error(d, b->fail.status, "%s", b->fail.msg);
  *out = b;
  return LOOM_OK;
}

LoomStatus rt_cuda_lib_slot(LoomContext *ctx, RtCudaLib which, void ***slot, pthread_mutex_t **lock, Diag *d) {
  CuBlas *b = libs_state(ctx);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the CUDA library state");
  *slot = &b->libs[which];
  *lock = &b->lock;
  return LOOM_OK;
}

static LoomStatus lt_error(const CuBlas *b, LtStatus s, const char *call, int device, Diag *d) {
  const char *name = b->status_name ? b->status_name(s) : NULL;
  LoomStatus st = s == LT_STATUS_ALLOC_FAILED ? LOOM_ERR_OUT_OF_MEMORY
                  : s == LT_STATUS_NOT_SUPPORTED ? LOOM_ERR_UNSUPPORTED
                                                 : LOOM_ERR_BACKEND;
  return diag_error(d, st, "%s on CUDA device %d failed: %s (status %d)", call, device, name ? name : "cuBLASLt error",
                    s);
}

static void cuda_linalg_close(LoomContext *ctx) {
  CuBlas *b = ctx->rt->linalg[LOOM_DEVICE_CUDA];
  if (!b) return;
  if (b->libs[RT_CUDA_LIB_FFT]) rt_cuda_fft_close(ctx, b->libs[RT_CUDA_LIB_FFT]);
  if (b->libs[RT_CUDA_LIB_SOLVER]) rt_cuda_solver_close(ctx, b->libs[RT_CUDA_LIB_SOLVER]);
  for (int i = 0; i < MAX_DEVICES; i++)
    if (b->handle[i]) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(gpu(), ctx, i, &dd); /* cuBLASLt frees its device state in the device's context */
      b->cublasLtDestroy(b->handle[i]);
    }
  if (b->lib) dlclose(b->lib);
  pthread_mutex_destroy(&b->lock);
  ctx_free(ctx, b);
  ctx->rt->linalg[LOOM_DEVICE_CUDA] = NULL;
}

/* ---- products ---------------------------------------------------------------------------------------- */
/* The stored layout of an operand (rows x cols of the column-major product) and its op. */
typedef struct Operand {
  int op;           /* CUBLAS_OP_N (0) or CUBLAS_OP_T (1) */
  uint64_t rows, cols;
  int64_t ld;
} Operand;

/* x (r x c in loom's row-major view, strides rs, cs, one of them 1) as the column-major c x r matrix x^T:
 * row-major storage is x^T column-major (op N, ld rs); column-major storage is x (r x c) stored, op T. */
static Operand transposed_operand(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  Operand o;
  if (cs == 1) o = (Operand){LT_OP_N, (uint64_t)c, (uint64_t)r, rs > c ? rs : c};
  else o = (Operand){LT_OP_T, (uint64_t)r, (uint64_t)c, cs > r ? cs : r};
  return o;
}

static int data_type(LoomDType t) {
  switch (t) {
  case LOOM_FLOAT16: return LT_R_16F;
  case LOOM_BFLOAT16: return LT_R_16BF;
  case LOOM_FLOAT32: return LT_R_32F;
  case LOOM_FLOAT64: return LT_R_64F;
  default: return -1;
  }
}

static int epilogue_of(const RtGemm *g) {
  int e = g->act == KACT_RELU ? LT_EPILOGUE_RELU : g->act == KACT_GELU_TANH ? LT_EPILOGUE_GELU : LT_EPILOGUE_DEFAULT;
  if (g->bias) e = e == LT_EPILOGUE_DEFAULT ? LT_EPILOGUE_BIAS : e | LT_EPILOGUE_BIAS; /* RELU_BIAS, GELU_BIAS */
  return e;
}

static LoomStatus handle_of(LoomContext *ctx, CuBlas *b, int index, LtHandle *out, Diag *d) {
  if (index < 0 || index >= MAX_DEVICES)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "cuBLASLt: device %d is beyond the %d loom supports", index, MAX_DEVICES);
  pthread_mutex_lock(&b->lock);
  LtStatus s = 0;
  LoomStatus st = LOOM_OK;
  if (!b->handle[index] && (st = rt_gpu_make_current(gpu(), ctx, index, d)) == LOOM_OK)
    s = b->cublasLtCreate(&b->handle[index]);
  *out = b->handle[index];
  pthread_mutex_unlock(&b->lock);
  if (st != LOOM_OK) return st;
  return s ? lt_error(b, s, "cublasLtCreate", index, d) : LOOM_OK;
}

static uint32_t align_of(const void *p) { /* the largest power of two dividing p, up to 256 (NULL: 256) */
  uint64_t a = (uint64_t)(uintptr_t)p, low = a & (~a + 1);
  return a == 0 || low >= 256 ? 256u : (uint32_t)low;
}

static LoomStatus cuda_gemm(LoomContext *ctx, int index, const RtGemm *g, Diag *d) {
  CuBlas *b = NULL;
  LoomStatus st = cublas_state(ctx, &b, d);
  if (st != LOOM_OK) return st;
  int dt = data_type(g->dtype);
  if (dt < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul of %s on CUDA devices is not supported", loom_dtype_name(g->dtype));
  LtHandle h = NULL;
  if ((st = handle_of(ctx, b, index, &h, d)) != LOOM_OK) return st;
  bool dbl = g->dtype == LOOM_FLOAT64;
  int compute = dbl ? LT_COMPUTE_64F : (g->dtype == LOOM_FLOAT32 && g->allow_tf32) ? LT_COMPUTE_32F_FAST_TF32 : LT_COMPUTE_32F;
  int scale = dbl ? LT_R_64F : LT_R_32F;
  /* d^T (n x m) = X (n x k) Y (k x m): X from b, Y from a */
  Operand x = transposed_operand(g->k, g->n, g->b_rs, g->b_cs), y = transposed_operand(g->m, g->k, g->a_rs, g->a_cs);
  Operand dd = {LT_OP_N, (uint64_t)g->n, (uint64_t)g->m, g->d_rs > g->n ? g->d_rs : g->n};
  Operand cc = g->c ? (Operand){LT_OP_N, (uint64_t)g->n, (uint64_t)g->m, g->c_rs > g->n ? g->c_rs : g->n} : dd;
  int epi = epilogue_of(g);
  LtDesc desc = NULL;
  LtLayout lx = NULL, ly = NULL, lc = NULL, ld = NULL;
  LtPref pref = NULL;
  void *work = NULL;
  const char *call = "cublasLtMatmulDescCreate";
  LtStatus s = b->cublasLtMatmulDescCreate(&desc, compute, scale);
  if (!s) call = "cublasLtMatmulDescSetAttribute", s = b->cublasLtMatmulDescSetAttribute(desc, LT_DESC_TRANSA, &x.op, sizeof x.op);
  if (!s) s = b->cublasLtMatmulDescSetAttribute(desc, LT_DESC_TRANSB, &y.op, sizeof y.op);
  if (!s) s = b->cublasLtMatmulDescSetAttribute(desc, LT_DESC_EPILOGUE, &epi, sizeof epi);
  if (!s && g->bias) s = b->cublasLtMatmulDescSetAttribute(desc, LT_DESC_BIAS_POINTER, &g->bias, sizeof g->bias);
  if (!s) call = "cublasLtMatrixLayoutCreate", s = b->cublasLtMatrixLayoutCreate(&lx, dt, x.rows, x.cols, x.ld);
  if (!s) s = b->cublasLtMatrixLayoutCreate(&ly, dt, y.rows, y.cols, y.ld);
  if (!s) s = b->cublasLtMatrixLayoutCreate(&lc, dt, cc.rows, cc.cols, cc.ld);
  if (!s) s = b->cublasLtMatrixLayoutCreate(&ld, dt, dd.rows, dd.cols, dd.ld);
  if (!s && g->batch > 1) {
    int32_t n = (int32_t)g->batch;
    int64_t bx = g->b_bs, by = g->a_bs, bc = g->c ? g->c_bs : g->d_bs, bd = g->d_bs;
    call = "cublasLtMatrixLayoutSetAttribute";
    LtLayout ls[4] = {lx, ly, lc, ld};
    int64_t bs[4] = {bx, by, bc, bd};
    for (int i = 0; i < 4 && !s; i++) {
      s = b->cublasLtMatrixLayoutSetAttribute(ls[i], LT_LAYOUT_BATCH_COUNT, &n, sizeof n);
      if (!s) s = b->cublasLtMatrixLayoutSetAttribute(ls[i], LT_LAYOUT_STRIDED_BATCH_OFFSET, &bs[i], sizeof bs[i]);
    }
  }
  /* the algorithm: cached per problem */
  uint64_t key[16] = {(uint64_t)index, (uint64_t)g->dtype | (uint64_t)compute << 8 | (uint64_t)epi << 16 |
                                           (uint64_t)(g->c != NULL) << 24 | (uint64_t)x.op << 25 | (uint64_t)y.op << 26,
                      (uint64_t)g->m, (uint64_t)g->n, (uint64_t)g->k, (uint64_t)g->batch, (uint64_t)x.ld,
                      (uint64_t)y.ld, (uint64_t)dd.ld, (uint64_t)cc.ld, (uint64_t)g->a_bs, (uint64_t)g->b_bs,
                      (uint64_t)g->d_bs, (uint64_t)g->c_bs,
                      (uint64_t)align_of(g->a) | (uint64_t)align_of(g->b) << 9 | (uint64_t)align_of(g->d) << 18 |
                          (uint64_t)align_of(g->c) << 27 | (uint64_t)align_of(g->bias) << 36,
                      0};
  LtAlgo algo;
  size_t wsize = 0;
  bool found = false;
  if (!s) {
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < ALGO_CACHE && !found; i++)
      if (b->cache[i].used && memcmp(b->cache[i].key, key, sizeof key) == 0) {
        algo = b->cache[i].algo, wsize = b->cache[i].workspace;
        found = true;
      }
    pthread_mutex_unlock(&b->lock);
  }
  if (!s && !found) {
    uint64_t wmax = WORKSPACE_BYTES;
    call = "cublasLtMatmulPreferenceCreate";
    s = b->cublasLtMatmulPreferenceCreate(&pref);
    if (!s) s = b->cublasLtMatmulPreferenceSetAttribute(pref, LT_PREF_MAX_WORKSPACE_BYTES, &wmax, sizeof wmax);
    /* the operands' alignment (the heuristic assumes 256 bytes otherwise): views may start anywhere */
    uint32_t al[4] = {align_of(g->b), align_of(g->a), align_of(g->c ? g->c : g->d), align_of(g->d)};
    for (int i = 0; i < 4 && !s; i++)
      s = b->cublasLtMatmulPreferenceSetAttribute(pref, LT_PREF_MIN_ALIGNMENT_A_BYTES + i, &al[i], sizeof al[i]);
    LtHeuristic res;
    int nres = 0;
    if (!s) call = "cublasLtMatmulAlgoGetHeuristic", s = b->cublasLtMatmulAlgoGetHeuristic(h, desc, lx, ly, lc, ld, pref, 1, &res, &nres);
    if (!s && nres < 1) {
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this %s product (m %lld, n %lld, k %lld, "
                      "batch %lld, epilogue %d) on CUDA device %d", loom_dtype_name(g->dtype), (long long)g->m,
                      (long long)g->n, (long long)g->k, (long long)g->batch, epi, index);
    } else if (!s) {
      algo = res.algo, wsize = res.workspace;
      found = true;
      pthread_mutex_lock(&b->lock);
      AlgoEntry *e = &b->cache[b->next_slot];
      b->next_slot = (b->next_slot + 1) % ALGO_CACHE;
      memcpy(e->key, key, sizeof key);
      e->algo = algo, e->workspace = wsize, e->used = true;
      pthread_mutex_unlock(&b->lock);
    }
  }
  RtStream *rs = rt_gpu_current_stream(gpu(), ctx, index);
  void *stream = rs ? rt_gpu_stream_handle(rs) : NULL;
  if (!s && st == LOOM_OK && wsize > 0) st = rt_gpu_alloc(gpu(), ctx, index, wsize, &work, d);
  if (!s && st == LOOM_OK) {
    float af = (float)g->alpha, bf = g->c ? (float)g->beta : 0.0f;
    double ad = g->alpha, bdv = g->c ? g->beta : 0.0;
    call = "cublasLtMatmul";
    s = b->cublasLtMatmul(h, desc, dbl ? (const void *)&ad : &af, g->b, lx, g->a, ly, dbl ? (const void *)&bdv : &bf,
                          g->c ? g->c : g->d, lc, g->d, ld, &algo, work, wsize, stream);
  }
  if (s && st == LOOM_OK) st = lt_error(b, s, call, index, d);
  if (work) {
    Diag fd = {.status = LOOM_OK};
    /* the pool is stream-blind: on a user stream the product must finish before its workspace is reused */
    if (rs) rt_gpu_stream_synchronize(gpu(), ctx, rs, &fd);
    rt_gpu_free(gpu(), ctx, index, work, wsize, &fd);
  }
  if (pref) b->cublasLtMatmulPreferenceDestroy(pref);
  if (ld) b->cublasLtMatrixLayoutDestroy(ld);
  if (lc) b->cublasLtMatrixLayoutDestroy(lc);
  if (ly) b->cublasLtMatrixLayoutDestroy(ly);
  if (lx) b->cublasLtMatrixLayoutDestroy(lx);
  if (desc) b->cublasLtMatmulDescDestroy(desc);
  return st;
}

LoomStatus rt_cublaslt_probe(char *path, size_t size, Diag *d) {
  CuBlas *b = calloc(1, sizeof *b);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  b->fail.status = LOOM_OK;
  load(b);
  LoomStatus st = b->fail.status;
  if (st != LOOM_OK) diag_error(d, st, "%s", b->fail.msg);
  else if (path) snprintf(path, size, "%s (version %zu)", b->path, b->cublasLtGetVersion());
  if (b->lib) dlclose(b->lib);
  free(b);
  return st;
}

const RtLinalg rt_cuda_linalg = {
    .library = "cuBLASLt (the CUDA toolkit's libcublas, or pip install nvidia-cublas-cu13)",
    .gemm = cuda_gemm,
    .decompose = rt_cuda_decompose, /* cuSOLVER (cuda_solver.c) */
    .fft = rt_cuda_fft,
    .close = cuda_linalg_close,
};
