/* hip_blas.c: the AMD device's vendor math library (runtime/linalg.h's RtLinalg): matrix products through
 * hipBLASLt and FFTs through hipFFT (hip_fft.c), loaded at run time like the HIP runtime; the twin of
 * runtime/cuda/cuda_blas.c, whose approach it follows.
 *
 * Loading (vendor_lib.h): the file named by LOOM_HIPBLASLT, then libhipblaslt.so.1 / .0 by soname, then
 * $ROCM_PATH/lib and /opt/rocm/lib. No library: every product on an AMD device is LOOM_ERR_UNSUPPORTED
 * naming what to install (Debian 12 packages no hipBLASLt: ROCm's own packages have it). One handle per
 * device, made with the device current.
 *
 * Products. hipBLASLt is column-major like cuBLASLt and takes the same shape of call: d (m x n, row-major)
 * is the column-major d^T = b^T a^T, a row-major operand passed untransposed and a column-major one as
 * op T (no copies); the strided batch is the layouts' BATCH_COUNT / STRIDED_BATCH_OFFSET; the epilogues
 * are hipBLASLt's BIAS, RELU, GELU (tanh), RELU_BIAS, GELU_BIAS, with alpha and beta c. float32 computes in
 * HIPBLAS_COMPUTE_32F always (AMD has no TF32: loom_set_allow_tf32 changes nothing here), float16 and
 * bfloat16 in 32F, float64 in 64F where the installed hipBLASLt has kernels for it (else "no algorithm").
 * The enum values are hipblaslt.h's and hipblas-common.h's of ROCm 6 (below; no ROCm header is needed to
 * build). Algorithms: the heuristic's first choice with a 32 MiB workspace, cached per problem; the
 * workspace comes from the device pool per call.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_libs.h"
#include "runtime/hip/hip_rt.h"
#include "runtime/vendor_lib.h"

#define WORKSPACE_BYTES ((size_t)32 << 20)
#define MAX_DEVICES 64
#define ALGO_CACHE 64

/* ---- the library ------------------------------------------------------------------------------------ */
typedef int LtStatus;
typedef void *LtHandle, *LtDesc, *LtLayout, *LtPref;
typedef struct LtAlgo { /* hipblasLtMatmulAlgo_t */
  uint8_t data[16];
  size_t max_workspace_bytes;
} LtAlgo;
typedef struct LtHeuristic { /* hipblasLtMatmulHeuristicResult_t */
  LtAlgo algo;
  size_t workspace;
  LtStatus state;
  float waves;
  int reserved[4];
} LtHeuristic;

#define LT_FUNCS(X)                                                                                               \
  X(hipblasLtCreate, LtStatus, (LtHandle *))                                                                       \
  X(hipblasLtDestroy, LtStatus, (LtHandle))                                                                        \
  X(hipblasLtMatmulDescCreate, LtStatus, (LtDesc *, int, int))                                                     \
  X(hipblasLtMatmulDescDestroy, LtStatus, (LtDesc))                                                                \
  X(hipblasLtMatmulDescSetAttribute, LtStatus, (LtDesc, int, const void *, size_t))                                \
  X(hipblasLtMatrixLayoutCreate, LtStatus, (LtLayout *, int, uint64_t, uint64_t, int64_t))                         \
  X(hipblasLtMatrixLayoutDestroy, LtStatus, (LtLayout))                                                            \
  X(hipblasLtMatrixLayoutSetAttribute, LtStatus, (LtLayout, int, const void *, size_t))                            \
  X(hipblasLtMatmulPreferenceCreate, LtStatus, (LtPref *))                                                         \
  X(hipblasLtMatmulPreferenceDestroy, LtStatus, (LtPref))                                                          \
  X(hipblasLtMatmulPreferenceSetAttribute, LtStatus, (LtPref, int, const void *, size_t))                          \
  X(hipblasLtMatmulAlgoGetHeuristic, LtStatus,                                                                     \
    (LtHandle, LtDesc, LtLayout, LtLayout, LtLayout, LtLayout, LtPref, int, LtHeuristic *, int *))                 \
  X(hipblasLtMatmul, LtStatus, (LtHandle, LtDesc, const void *, const void *, LtLayout, const void *, LtLayout,    \
                                const void *, const void *, LtLayout, void *, LtLayout, const LtAlgo *, void *,    \
                                size_t, void *))

typedef struct AlgoEntry {
  uint64_t key[16];
  bool used;
  LtAlgo algo;
  size_t workspace;
} AlgoEntry;

typedef struct HipBlas {
  void *lib;
  char path[512];
  Diag fail; /* why loading failed (reported on every use) */
#define X(name, ret, args) ret(*name) args;
  LT_FUNCS(X)
#undef X
  pthread_mutex_t lock; /* handles, the algorithm cache, the further libraries' slots */
  LtHandle handle[MAX_DEVICES];
  AlgoEntry cache[ALGO_CACHE];
  int next_slot;
  void *fft; /* hip_fft.c's state */
} HipBlas;

const char *const rt_hipblaslt_symbols[] = {
#define X(name, ret, args) #name,
    LT_FUNCS(X)
#undef X
        NULL};

static const char *resolve(void *lib, void *arg) {
  HipBlas *b = arg;
  const char *missing = NULL;
  void *p;
#define X(name, ret, args)                                                                                         \
  p = dlsym(lib, #name);                                                                                           \
  if (!p && !missing) missing = #name;                                                                             \
  memcpy(&b->name, &p, sizeof p);
  LT_FUNCS(X)
#undef X
  if (!missing) return NULL;
  snprintf(b->fail.msg, sizeof b->fail.msg, "has no %s (ROCm 6 or later needed)", missing);
  return b->fail.msg;
}

static void load(HipBlas *b) {
  static const char *const sonames[] = {"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so", NULL};
  static const char *const dirs[] = {"$ROCM_PATH/lib", "/opt/rocm/lib", NULL};
  RtVendorLib v = {.what = "hipBLASLt", .purpose = "matrix products on AMD devices",
                   .install = "install ROCm's hipblaslt package", .env = "LOOM_HIPBLASLT", .sonames = sonames,
                   .dirs = dirs, .accept = resolve, .arg = b};
  Diag d = {.status = LOOM_OK};
  b->lib = rt_dlopen_first(&v, b->path, sizeof b->path, &d);
  b->fail = d;
}

static const RtGpuDriver *gpu(void) { return rt_hip_driver(); }

static HipBlas *libs_state(LoomContext *ctx) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->device_lock);
  HipBlas *b = rt->linalg[LOOM_DEVICE_HIP];
  if (!b && (b = ctx_calloc(ctx, 1, sizeof *b)) != NULL) {
    b->fail.status = LOOM_OK;
    pthread_mutex_init(&b->lock, NULL);
    load(b);
    rt->linalg[LOOM_DEVICE_HIP] = b;
  }
  pthread_mutex_unlock(&rt->device_lock);
  return b;
}

static LoomStatus libs_ready(LoomContext *ctx, HipBlas **out, Diag *d) {
  HipBlas *b = libs_state(ctx);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the hipBLASLt state");
  if (b->fail.status != LOOM_OK) return diag_error(d, b->fail.status, "%s", b->fail.msg);
  *out = b;
  return LOOM_OK;
}

LoomStatus rt_hip_fft_slot(LoomContext *ctx, void ***slot, pthread_mutex_t **lock, Diag *d) {
  HipBlas *b = libs_state(ctx);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the AMD library state");
  *slot = &b->fft;
  *lock = &b->lock;
  return LOOM_OK;
}

static LoomStatus lt_error(const HipBlas *b, LtStatus s, const char *call, int device, Diag *d) {
  (void)b;
  LoomStatus st = s == HL_STATUS_ALLOC_FAILED ? LOOM_ERR_OUT_OF_MEMORY
                  : s == HL_STATUS_NOT_SUPPORTED ? LOOM_ERR_UNSUPPORTED
                                                 : LOOM_ERR_BACKEND;
  return diag_error(d, st, "%s on AMD device %d failed: hipblasStatus %d", call, device, s);
}

static void hip_linalg_close(LoomContext *ctx) {
  HipBlas *b = ctx->rt->linalg[LOOM_DEVICE_HIP];
  if (!b) return;
  if (b->fft) rt_hip_fft_close(ctx, b->fft);
  for (int i = 0; i < MAX_DEVICES; i++)
    if (b->handle[i]) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(gpu(), ctx, i, &dd);
      b->hipblasLtDestroy(b->handle[i]);
    }
  if (b->lib) dlclose(b->lib);
  pthread_mutex_destroy(&b->lock);
  ctx_free(ctx, b);
  ctx->rt->linalg[LOOM_DEVICE_HIP] = NULL;
}

/* ---- products ---------------------------------------------------------------------------------------- */
/* The stored layout of an operand (rows x cols of the column-major product) and its op. */
typedef struct Operand {
  int op;           /* HIPBLAS_OP_N (0) or HIPBLAS_OP_T (1) */
  uint64_t rows, cols;
  int64_t ld;
} Operand;

/* x (r x c in loom's row-major view, strides rs, cs, one of them 1) as the column-major c x r matrix x^T:
 * row-major storage is x^T column-major (op N, ld rs); column-major storage is x (r x c) stored, op T. */
static Operand transposed_operand(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  Operand o;
  if (cs == 1) o = (Operand){HL_OP_N, (uint64_t)c, (uint64_t)r, rs > c ? rs : c};
  else o = (Operand){HL_OP_T, (uint64_t)r, (uint64_t)c, cs > r ? cs : r};
  return o;
}

static int data_type(LoomDType t) {
  switch (t) {
  case LOOM_FLOAT16: return HL_R_16F;
  case LOOM_BFLOAT16: return HL_R_16BF;
  case LOOM_FLOAT32: return HL_R_32F;
  case LOOM_FLOAT64: return HL_R_64F;
  default: return -1;
  }
}

static int epilogue_of(const RtGemm *g) {
  int e = g->act == KACT_RELU ? HL_EPILOGUE_RELU : g->act == KACT_GELU_TANH ? HL_EPILOGUE_GELU : HL_EPILOGUE_DEFAULT;
  if (g->bias) e = e == HL_EPILOGUE_DEFAULT ? HL_EPILOGUE_BIAS : e | HL_EPILOGUE_BIAS; /* RELU_BIAS, GELU_BIAS */
  return e;
}

static LoomStatus handle_of(LoomContext *ctx, HipBlas *b, int index, LtHandle *out, Diag *d) {
  if (index < 0 || index >= MAX_DEVICES)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "hipBLASLt: device %d is beyond the %d loom supports", index, MAX_DEVICES);
  pthread_mutex_lock(&b->lock);
  LtStatus s = 0;
  LoomStatus st = LOOM_OK;
  if (!b->handle[index] && (st = rt_gpu_make_current(gpu(), ctx, index, d)) == LOOM_OK)
    s = b->hipblasLtCreate(&b->handle[index]);
  *out = b->handle[index];
  pthread_mutex_unlock(&b->lock);
  if (st != LOOM_OK) return st;
  return s ? lt_error(b, s, "hipblasLtCreate", index, d) : LOOM_OK;
}

static uint32_t align_of(const void *p) { /* the largest power of two dividing p, up to 256 (NULL: 256) */
  uint64_t a = (uint64_t)(uintptr_t)p, low = a & (~a + 1);
  return a == 0 || low >= 256 ? 256u : (uint32_t)low;
}

static LoomStatus hip_gemm(LoomContext *ctx, int index, const RtGemm *g, Diag *d) {
  HipBlas *b = NULL;
  LoomStatus st = libs_ready(ctx, &b, d);
  if (st != LOOM_OK) return st;
  int dt = data_type(g->dtype);
  if (dt < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul of %s on AMD devices is not supported", loom_dtype_name(g->dtype));
  LtHandle h = NULL;
  if ((st = handle_of(ctx, b, index, &h, d)) != LOOM_OK) return st;
  bool dbl = g->dtype == LOOM_FLOAT64;
  int compute = dbl ? HL_COMPUTE_64F : HL_COMPUTE_32F; /* no TF32 on AMD: allow_tf32 changes nothing */
  int scale = dbl ? HL_R_64F : HL_R_32F;
  /* d^T (n x m) = X (n x k) Y (k x m): X from b, Y from a */
  Operand x = transposed_operand(g->k, g->n, g->b_rs, g->b_cs), y = transposed_operand(g->m, g->k, g->a_rs, g->a_cs);
  Operand dd = {HL_OP_N, (uint64_t)g->n, (uint64_t)g->m, g->d_rs > g->n ? g->d_rs : g->n};
  Operand cc = g->c ? (Operand){HL_OP_N, (uint64_t)g->n, (uint64_t)g->m, g->c_rs > g->n ? g->c_rs : g->n} : dd;
  int epi = epilogue_of(g);
  LtDesc desc = NULL;
  LtLayout lx = NULL, ly = NULL, lc = NULL, ld = NULL;
  LtPref pref = NULL;
  void *work = NULL;
  const char *call = "hipblasLtMatmulDescCreate";
  LtStatus s = b->hipblasLtMatmulDescCreate(&desc, compute, scale);
  if (!s) call = "hipblasLtMatmulDescSetAttribute", s = b->hipblasLtMatmulDescSetAttribute(desc, HL_DESC_TRANSA, &x.op, sizeof x.op);
  if (!s) s = b->hipblasLtMatmulDescSetAttribute(desc, HL_DESC_TRANSB, &y.op, sizeof y.op);
  if (!s) s = b->hipblasLtMatmulDescSetAttribute(desc, HL_DESC_EPILOGUE, &epi, sizeof epi);
  if (!s && g->bias) s = b->hipblasLtMatmulDescSetAttribute(desc, HL_DESC_BIAS_POINTER, &g->bias, sizeof g->bias);
  if (!s) call = "hipblasLtMatrixLayoutCreate", s = b->hipblasLtMatrixLayoutCreate(&lx, dt, x.rows, x.cols, x.ld);
  if (!s) s = b->hipblasLtMatrixLayoutCreate(&ly, dt, y.rows, y.cols, y.ld);
  if (!s) s = b->hipblasLtMatrixLayoutCreate(&lc, dt, cc.rows, cc.cols, cc.ld);
  if (!s) s = b->hipblasLtMatrixLayoutCreate(&ld, dt, dd.rows, dd.cols, dd.ld);
  if (!s && g->batch > 1) {
    int32_t n = (int32_t)g->batch;
    int64_t bx = g->b_bs, by = g->a_bs, bc = g->c ? g->c_bs : g->d_bs, bd = g->d_bs;
    call = "hipblasLtMatrixLayoutSetAttribute";
    LtLayout ls[4] = {lx, ly, lc, ld};
    int64_t bs[4] = {bx, by, bc, bd};
    for (int i = 0; i < 4 && !s; i++) {
      s = b->hipblasLtMatrixLayoutSetAttribute(ls[i], HL_LAYOUT_BATCH_COUNT, &n, sizeof n);
      if (!s) s = b->hipblasLtMatrixLayoutSetAttribute(ls[i], HL_LAYOUT_STRIDED_BATCH_OFFSET, &bs[i], sizeof bs[i]);
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
    call = "hipblasLtMatmulPreferenceCreate";
    s = b->hipblasLtMatmulPreferenceCreate(&pref);
    if (!s) s = b->hipblasLtMatmulPreferenceSetAttribute(pref, HL_PREF_MAX_WORKSPACE_BYTES, &wmax, sizeof wmax);
    LtHeuristic res;
    int nres = 0;
    if (!s) call = "hipblasLtMatmulAlgoGetHeuristic", s = b->hipblasLtMatmulAlgoGetHeuristic(h, desc, lx, ly, lc, ld, pref, 1, &res, &nres);
    if (!s && nres < 1) {
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "hipBLASLt has no algorithm for this %s product (m %lld, n %lld, k %lld, "
                      "batch %lld, epilogue %d) on AMD device %d", loom_dtype_name(g->dtype), (long long)g->m,
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
    call = "hipblasLtMatmul";
    s = b->hipblasLtMatmul(h, desc, dbl ? (const void *)&ad : &af, g->b, lx, g->a, ly, dbl ? (const void *)&bdv : &bf,
                          g->c ? g->c : g->d, lc, g->d, ld, &algo, work, wsize, stream);
  }
  if (s && st == LOOM_OK) st = lt_error(b, s, call, index, d);
  if (work) {
    Diag fd = {.status = LOOM_OK};
    /* the pool is stream-blind: on a user stream the product must finish before its workspace is reused */
    if (rs) rt_gpu_stream_synchronize(gpu(), ctx, rs, &fd);
    rt_gpu_free(gpu(), ctx, index, work, wsize, &fd);
  }
  if (pref) b->hipblasLtMatmulPreferenceDestroy(pref);
  if (ld) b->hipblasLtMatrixLayoutDestroy(ld);
  if (lc) b->hipblasLtMatrixLayoutDestroy(lc);
  if (ly) b->hipblasLtMatrixLayoutDestroy(ly);
  if (lx) b->hipblasLtMatrixLayoutDestroy(lx);
  if (desc) b->hipblasLtMatmulDescDestroy(desc);
  return st;
}

LoomStatus rt_hipblaslt_probe(char *path, size_t size, Diag *d) {
  HipBlas *b = calloc(1, sizeof *b);
  if (!b) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  b->fail.status = LOOM_OK;
  load(b);
  LoomStatus st = b->fail.status;
  if (st != LOOM_OK) diag_error(d, st, "%s", b->fail.msg);
  else if (path) snprintf(path, size, "%s", b->path);
  if (b->lib) dlclose(b->lib);
  free(b);
  return st;
}

const RtLinalg rt_hip_linalg = {
    .library = "hipBLASLt and hipFFT (ROCm's hipblaslt and hipfft packages)",
    .gemm = hip_gemm,
    .decompose = NULL, /* hipSOLVER: not yet (loom.linalg runs decompositions of AMD arrays on the host) */
    .fft = rt_hip_fft,
    .close = hip_linalg_close,
};
