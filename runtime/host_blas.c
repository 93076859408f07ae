/* host_blas.c: the host's vendor math library (linalg.h): a BLAS + LAPACK loaded at run time (search
 * order and naming schemes in host_blas.h), and the host's matrix products.
 *
 * Products: d = act(alpha a b + bias + beta c) with d row-major is computed as the column-major
 * product d^T = b^T a^T, so a row-major operand is passed untransposed ('N') and a column-major one
 * (a transposed view) as 'T': no copies. float32 and float64 call sgemm / dgemm per batch entry
 * (OpenBLAS runs each on all cores), complex64 and complex128 cgemm / zgemm (op 'T' is the plain
 * transpose, no conjugation: a transposed view's layout). A real product of a matrix with its own
 * transpose (a and b one buffer, b's strides a's swapped: X @ X.T, cov's centred rows) is ssyrk / dsyrk
 * and a mirror of the triangle it wrote, half gemm's flops (NumPy's dispatch as well: 1000^2 float64
 * 12.5 ms against gemm's 21.7 on 2 Zen 4 cores); float16 and bfloat16 are widened to float32 copies, multiplied by sgemm and
 * rounded once when stored. The epilogue (bias, c, ReLU) is one pass over the result rows on loom's
 * thread pool, in the compute dtype, NaN-propagating like NumPy's maximum.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_blas.h"

/* ---- loading ----------------------------------------------------------------------------------- */
static const char *const routine_names[RB_COUNT] = {
    [RB_SGEMM] = "sgemm",   [RB_DGEMM] = "dgemm",   [RB_CGEMM] = "cgemm",   [RB_ZGEMM] = "zgemm",
    [RB_SGEMV] = "sgemv",   [RB_DGEMV] = "dgemv",   [RB_CGEMV] = "cgemv",   [RB_ZGEMV] = "zgemv",
    [RB_SSYRK] = "ssyrk",   [RB_DSYRK] = "dsyrk",
    [RB_SGETRF] = "sgetrf", [RB_DGETRF] = "dgetrf",
    [RB_SGESV] = "sgesv",   [RB_DGESV] = "dgesv",   [RB_SPOTRF] = "spotrf", [RB_DPOTRF] = "dpotrf",
    [RB_SGEQRF] = "sgeqrf", [RB_DGEQRF] = "dgeqrf", [RB_SORGQR] = "sorgqr", [RB_DORGQR] = "dorgqr",
    [RB_SGESDD] = "sgesdd", [RB_DGESDD] = "dgesdd", [RB_SSYEVD] = "ssyevd", [RB_DSYEVD] = "dsyevd",
    [RB_CGETRF] = "cgetrf", [RB_ZGETRF] = "zgetrf", [RB_CGESV] = "cgesv",   [RB_ZGESV] = "zgesv",
    [RB_CPOTRF] = "cpotrf", [RB_ZPOTRF] = "zpotrf", [RB_CGEQRF] = "cgeqrf", [RB_ZGEQRF] = "zgeqrf",
    [RB_CUNGQR] = "cungqr", [RB_ZUNGQR] = "zungqr", [RB_CGESDD] = "cgesdd", [RB_ZGESDD] = "zgesdd",
    [RB_CHEEVD] = "cheevd", [RB_ZHEEVD] = "zheevd"};

typedef struct Scheme {
  const char *prefix, *suffix;
  bool ilp64;
} Scheme;
static const Scheme schemes[] = {{"", "_", false}, {"", "_64_", true}, {"scipy_", "_64_", true}};

static RtBlasFn find(void *lib, const Scheme *s, const char *name) {
  char sym[64];
  snprintf(sym, sizeof sym, "%s%s%s", s->prefix, name, s->suffix);
  void *p = dlsym(lib, sym);
  RtBlasFn f;
  memcpy(&f, &p, sizeof f); /* a data pointer to a function pointer, as dlsym requires */
  return p ? f : NULL;
}

/* Loads h from the search order; on failure h->fail says what was tried and what to install. */
static void load(RtHostBlas *h) {
  const char *env = getenv("LOOM_BLAS");
  const char *cands[] = {env && env[0] ? env : NULL, "libopenblas.so.0", "libopenblas64_.so.0", "libflexiblas.so.3",
                         "libblas.so.3"};
  char tried[700] = "";
  size_t nt = 0;
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
    if (!cands[i]) continue;
    void *lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      nt += (size_t)snprintf(tried + nt, nt < sizeof tried ? sizeof tried - nt : 0, "%s%s (not found)", nt ? ", " : "",
                             cands[i]);
      continue;
    }
    const Scheme *s = NULL;
    for (size_t j = 0; j < sizeof schemes / sizeof schemes[0] && !s; j++)
      if (find(lib, &schemes[j], "dgemm") && find(lib, &schemes[j], "sgemm")) s = &schemes[j];
    if (!s) {
      nt += (size_t)snprintf(tried + nt, nt < sizeof tried ? sizeof tried - nt : 0, "%s%s (no sgemm/dgemm)",
                             nt ? ", " : "", cands[i]);
      dlclose(lib);
      continue;
    }
    h->lib = lib;
    h->ilp64 = s->ilp64;
    snprintf(h->path, sizeof h->path, "%s", cands[i]);
    for (int r = 0; r < RB_COUNT; r++) h->fn[r] = find(lib, s, routine_names[r]);
    if (!h->fn[RB_DGETRF]) { /* LAPACK in a library of its own (reference BLAS) */
      const char *lenv = getenv("LOOM_LAPACK");
      h->lapack_lib = dlopen(lenv && lenv[0] ? lenv : "liblapack.so.3", RTLD_NOW | RTLD_LOCAL);
      for (int r = RB_SGETRF; h->lapack_lib && r < RB_COUNT; r++) h->fn[r] = find(h->lapack_lib, s, routine_names[r]);
    }
    return;
  }
  diag_error(&h->fail, LOOM_ERR_UNSUPPORTED,
             "no BLAS library for matrix products on the host (tried %s%s); install OpenBLAS (Debian: apt-get "
             "install libopenblas0-pthread) or set LOOM_BLAS to a BLAS library file (e.g. the scipy-openblas64 "
             "wheel's libscipy_openblas64_.so)",
             env && env[0] ? "LOOM_BLAS=" : "", tried);
}

LoomStatus rt_host_blas(LoomContext *ctx, RtHostBlas **out, Diag *d) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->device_lock);
  RtHostBlas *h = rt->linalg[LOOM_DEVICE_HOST];
  if (!h && (h = ctx_calloc(ctx, 1, sizeof *h)) != NULL) {
    h->fail.status = LOOM_OK;
    load(h);
    rt->linalg[LOOM_DEVICE_HOST] = h;
  }
  pthread_mutex_unlock(&rt->device_lock);
  if (!h) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the host BLAS state");
  if (h->fail.status != LOOM_OK) return diag_error(d, h->fail.status, "%s", h->fail.msg);
  *out = h;
  return LOOM_OK;
}

LoomStatus rt_host_blas_fn(const RtHostBlas *h, RtBlasRoutine r, RtBlasFn *out, Diag *d) {
  *out = h->fn[r];
  if (*out) return LOOM_OK;
  return diag_error(d, LOOM_ERR_UNSUPPORTED, "the host BLAS %s has no %s%s; install OpenBLAS (Debian: apt-get install "
                    "libopenblas0-pthread) or liblapack3, or set LOOM_BLAS / LOOM_LAPACK", h->path,
                    routine_names[r], r >= RB_SGETRF ? " (LAPACK)" : "");
}

static void host_linalg_close(LoomContext *ctx) {
  RtHostBlas *h = ctx->rt->linalg[LOOM_DEVICE_HOST];
  if (!h) return;
  if (h->lapack_lib) dlclose(h->lapack_lib);
  if (h->lib) dlclose(h->lib);
  ctx_free(ctx, h);
  ctx->rt->linalg[LOOM_DEVICE_HOST] = NULL;
}

/* ---- products ----------------------------------------------------------------------------------- */
typedef void (*GemmFn)(const char *ta, const char *tb, const void *m, const void *n, const void *k, const void *alpha,
                       const void *a, const void *lda, const void *b, const void *ldb, const void *beta, void *c,
                       const void *ldc, size_t lta, size_t ltb);

typedef void (*GemvFn)(const char *t, const void *m, const void *n, const void *alpha, const void *a, const void *lda,
                       const void *x, const void *incx, const void *beta, void *y, const void *incy, size_t lt);

/* d (row-major, ld d_rs) = alpha a b of one batch entry, in float32 (single) or float64, real or complex
 * (the scalars then (alpha, 0) and (0, 0): the element type's pair). With M = 1 (u @ M) and gv set: one
 * gemv, y[n] = op(b) u, where gemm with a 1-wide side ran single-threaded (OpenBLAS: 2048^2 float32 0.65 ms
 * against its gemv's 0.15). The column-major view is D^T = B^T A^T, as for gemm below. */
static void gemm_one(const RtHostBlas *h, RtBlasFn fn, RtBlasFn gv, bool single, const RtGemm *g, const void *a,
                     int64_t a_rs, int64_t a_cs, const void *b, int64_t b_rs, int64_t b_cs, void *d, int64_t d_rs) {
  RtBlasInt m, n, k, lda, ldb, ldc;
  char ta = a_cs == 1 ? 'N' : 'T', tb = b_cs == 1 ? 'N' : 'T';
  float af[2] = {(float)g->alpha, 0}, zf[2] = {0, 0};
  double ad[2] = {g->alpha, 0}, zd[2] = {0, 0};
  if (gv && g->m == 1 && g->n > 1 && a_cs > 0) { /* b seen column-major: n x k (ld b_rs) or k x n (ld b_cs) */
    GemvFn v;
    memcpy(&v, &gv, sizeof v);
    RtBlasInt rows, cols, ld, incx, incy;
    bool nt = b_cs == 1;
    /* y zeroed first: beta = 0 must not read it, but some BLAS builds scale y by beta (0 * NaN is NaN) */
    memset(d, 0, (size_t)g->n * (size_t)dtype_bits(g->dtype == LOOM_FLOAT16 || g->dtype == LOOM_BFLOAT16 ? LOOM_FLOAT32
                                                                                                        : g->dtype) / 8);
    v(nt ? "N" : "T", rt_bint(h, &rows, nt ? g->n : g->k), rt_bint(h, &cols, nt ? g->k : g->n),
      single ? (const void *)af : ad, b, rt_bint(h, &ld, nt ? b_rs : b_cs), a, rt_bint(h, &incx, a_cs),
      single ? (const void *)zf : zd, d, rt_bint(h, &incy, 1), 1);
    return;
  }
  GemmFn f;
  memcpy(&f, &fn, sizeof f);
  f(&tb, &ta, rt_bint(h, &n, g->n), rt_bint(h, &m, g->m), rt_bint(h, &k, g->k), single ? (const void *)af : ad, b,
    rt_bint(h, &ldb, b_cs == 1 ? b_rs : b_cs), a, rt_bint(h, &lda, a_cs == 1 ? a_rs : a_cs),
    single ? (const void *)zf : zd, d, rt_bint(h, &ldc, d_rs), 1, 1);
}

typedef void (*SyrkFn)(const char *uplo, const char *trans, const void *n, const void *k, const void *alpha,
                       const void *a, const void *lda, const void *beta, void *c, const void *ldc, size_t lu,
                       size_t lt);

/* Whether g (one batch entry or a batch with the same offsets for a and b) is a b = a^T of one buffer that
 * syrk can take: real float32 / float64, no epilogue, m = n > 1, a BLAS-shaped a; and k >= m / 8, where
 * halving the flops pays for the mirror and syrk's diagonal blocks (one Zen 4 core, float64: m 2048, k 16:
 * syrk 16.3 ms, gemm 4.5; k 64: even; m 1024, k 128: 5.0 against 5.6; m 64, k 4096: 0.68 against 0.91). */
static bool is_syrk(const RtGemm *g, bool epi) {
  return (g->dtype == LOOM_FLOAT32 || g->dtype == LOOM_FLOAT64) && !epi && g->a == g->b && g->m == g->n &&
         g->m > 1 && 8 * g->k >= g->m && g->a_rs == g->b_cs && g->a_cs == g->b_rs && g->a_bs == g->b_bs &&
         (g->a_cs == 1 || g->a_rs == 1);
}

/* d (row-major, ld d_rs) = alpha a a^T of one batch entry: syrk writes the upper triangle of the
 * column-major view (d is symmetric, so the layouts agree), then the other triangle is copied from it in
 * 64 x 64 tiles (a transpose that stays in cache). a row-major (a_cs 1) is, column-major, the k x m
 * matrix a^T: trans 'T'; a column-major (a_rs 1) is m x k: trans 'N'. */
static void gemm_syrk(const RtHostBlas *h, RtBlasFn fn, bool single, const RtGemm *g, const void *a, void *d) {
  SyrkFn f;
  memcpy(&f, &fn, sizeof f);
  RtBlasInt n, k, lda, ldc;
  bool rows = g->a_cs == 1;
  char uplo = 'U', trans = rows ? 'T' : 'N';
  float af = (float)g->alpha, zf = 0;
  double ad = g->alpha, zd = 0;
  f(&uplo, &trans, rt_bint(h, &n, g->m), rt_bint(h, &k, g->k), single ? (const void *)&af : &ad, a,
    rt_bint(h, &lda, rows ? g->a_rs : g->a_cs), single ? (const void *)&zf : &zd, d, rt_bint(h, &ldc, g->d_rs), 1, 1);
  int64_t m = g->m, ld = g->d_rs;
  enum { T = 64 };
  for (int64_t j0 = 0; j0 < m; j0 += T) /* column-major (i, j), i < j, written; (j, i) copied from it */
    for (int64_t i0 = 0; i0 <= j0; i0 += T)
      for (int64_t j = j0; j < j0 + T && j < m; j++)
        for (int64_t i = i0; i < i0 + T && i < j; i++) {
          if (single) ((float *)d)[j + i * ld] = ((const float *)d)[i + j * ld];
          else ((double *)d)[j + i * ld] = ((const double *)d)[i + j * ld];
        }
}

/* The epilogue over rows [r0, r1) of one batch entry: y = act(x + bias + beta c), x read from src
 * (row stride src_rs, in the compute dtype) and y written to dst (row stride d_rs, in g->dtype). */
typedef struct Epilogue {
  const RtGemm *g;
  const void *src;
  int64_t src_rs;
  void *dst;
  const void *c;
  int64_t rows_per_task;
} Epilogue;

static float bf16_to_float(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static uint16_t float_to_bf16(float f) { /* round to nearest even; NaN stays a (quiet) NaN */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static double load_at(LoomDType t, const void *p, int64_t i) {
  switch (t) {
  case LOOM_FLOAT16: return (double)((const _Float16 *)p)[i];
  case LOOM_BFLOAT16: return (double)bf16_to_float(((const uint16_t *)p)[i]);
  case LOOM_FLOAT32: return (double)((const float *)p)[i];
  default: return ((const double *)p)[i];
  }
}

static void epilogue_rows(void *arg, int64_t task) {
  const Epilogue *e = arg;
  const RtGemm *g = e->g;
  int64_t r0 = task * e->rows_per_task, r1 = r0 + e->rows_per_task < g->m ? r0 + e->rows_per_task : g->m;
  LoomDType cd = g->dtype == LOOM_FLOAT64 ? LOOM_FLOAT64 : LOOM_FLOAT32; /* the compute dtype */
  for (int64_t i = r0; i < r1; i++)
    for (int64_t j = 0; j < g->n; j++) {
      double v = load_at(cd, e->src, i * e->src_rs + j);
      if (cd == LOOM_FLOAT32) {
        float x = (float)v;
        if (g->bias) x += (float)load_at(g->dtype, g->bias, j);
        if (e->c) x += (float)g->beta * (float)load_at(g->dtype, e->c, i * g->c_rs + j);
        if (g->act == KACT_RELU && !(x >= 0 || isnan(x))) x = 0;
        if (g->act == KACT_GELU_TANH) x = 0.5f * x * (1 + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
        if (g->dtype == LOOM_FLOAT16) ((_Float16 *)e->dst)[i * g->d_rs + j] = (_Float16)x;
        else if (g->dtype == LOOM_BFLOAT16) ((uint16_t *)e->dst)[i * g->d_rs + j] = float_to_bf16(x);
        else ((float *)e->dst)[i * g->d_rs + j] = x;
      } else {
        if (g->bias) v += load_at(g->dtype, g->bias, j);
        if (e->c) v += g->beta * load_at(g->dtype, e->c, i * g->c_rs + j);
        if (g->act == KACT_RELU && !(v >= 0 || isnan(v))) v = 0;
        if (g->act == KACT_GELU_TANH) v = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        ((double *)e->dst)[i * g->d_rs + j] = v;
      }
    }
}

static void run_epilogue(LoomContext *ctx, Epilogue *e) {
  int64_t per = (1 << 16) / (e->g->n > 0 ? e->g->n : 1);
  e->rows_per_task = per < 1 ? 1 : per;
  rt_parallel_for(ctx->rt->pool, (e->g->m + e->rows_per_task - 1) / e->rows_per_task, epilogue_rows, e);
}

/* float16 or bfloat16 operand x (r x c, strides rs, cs) widened into a row-major float32 copy. */
static void widen(LoomDType t, const void *x, int64_t r, int64_t c, int64_t rs, int64_t cs, float *out) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < c; j++) out[i * c + j] = (float)load_at(t, x, i * rs + j * cs);
}

static LoomStatus host_gemm(LoomContext *ctx, int index, const RtGemm *g, Diag *d) {
  RtHostBlas *h;
  LoomStatus st = rt_host_blas(ctx, &h, d);
  if (st != LOOM_OK) return st;
  bool cplx = g->dtype == LOOM_COMPLEX64 || g->dtype == LOOM_COMPLEX128;
  if (g->dtype != LOOM_FLOAT16 && g->dtype != LOOM_BFLOAT16 && g->dtype != LOOM_FLOAT32 && g->dtype != LOOM_FLOAT64 &&
      !cplx)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul of %s on the host is not supported", loom_dtype_name(g->dtype));
  if (!h->ilp64 && (g->m > INT32_MAX || g->n > INT32_MAX || g->k > INT32_MAX || g->a_rs > INT32_MAX ||
                    g->a_cs > INT32_MAX || g->b_rs > INT32_MAX || g->b_cs > INT32_MAX || g->d_rs > INT32_MAX))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul: dims beyond 2^31 need a 64-bit-integer BLAS (%s has 32-bit "
                      "integers; set LOOM_BLAS to an ILP64 build such as libopenblas64_.so.0)", h->path);
  if (cplx && (g->bias || g->c || g->act != KACT_NONE)) /* passes/calls.c fuses no epilogue into complex products */
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: a %s matmul with an epilogue", loom_dtype_name(g->dtype));
  bool single = g->dtype != LOOM_FLOAT64 && g->dtype != LOOM_COMPLEX128;
  RtBlasRoutine routine = g->dtype == LOOM_COMPLEX64    ? RB_CGEMM
                          : g->dtype == LOOM_COMPLEX128 ? RB_ZGEMM
                          : single                      ? RB_SGEMM
                                                        : RB_DGEMM;
  RtBlasFn fn, gv = h->fn[routine - RB_SGEMM + RB_SGEMV]; /* NULL (no gemv in the library): gemm */
  if ((st = rt_host_blas_fn(h, routine, &fn, d)) != LOOM_OK) return st;
  bool half = g->dtype == LOOM_FLOAT16 || g->dtype == LOOM_BFLOAT16, epi = g->bias || g->c || g->act != KACT_NONE;
  RtBlasFn syrk = is_syrk(g, epi) ? h->fn[g->dtype == LOOM_FLOAT32 ? RB_SSYRK : RB_DSYRK] : NULL; /* NULL: gemm */
  size_t isz = (size_t)dtype_bits(g->dtype) / 8;
  float *wa = NULL, *wb = NULL, *wd = NULL;
  size_t na = 0, nb = 0, nd = 0;
  if (half) {
    na = (size_t)(g->m * g->k) * sizeof(float), nb = (size_t)(g->k * g->n) * sizeof(float);
    nd = (size_t)(g->m * g->n) * sizeof(float);
    wa = rt_host_alloc(ctx->rt->host_pool, na);
    wb = rt_host_alloc(ctx->rt->host_pool, nb);
    wd = rt_host_alloc(ctx->rt->host_pool, nd);
    if (!wa || !wb || !wd) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: float32 copies for a %s matmul (%zu bytes)",
                      loom_dtype_name(g->dtype), na + nb + nd);
      goto done;
    }
  }
  for (int64_t bi = 0; bi < g->batch; bi++) {
    const char *a = (const char *)g->a + (size_t)(bi * g->a_bs) * isz, *b = (const char *)g->b + (size_t)(bi * g->b_bs) * isz;
    char *dd = (char *)g->d + (size_t)(bi * g->d_bs) * isz;
    Epilogue e = {g, dd, g->d_rs, dd, g->c ? (const char *)g->c + (size_t)(bi * g->c_bs) * isz : NULL, 0};
    if (half) {
      widen(g->dtype, a, g->m, g->k, g->a_rs, g->a_cs, wa);
      widen(g->dtype, b, g->k, g->n, g->b_rs, g->b_cs, wb);
      gemm_one(h, fn, gv, true, g, wa, g->k, 1, wb, g->n, 1, wd, g->n);
      e.src = wd;
      e.src_rs = g->n;
      run_epilogue(ctx, &e); /* rounds to float16 even without an epilogue */
    } else if (syrk) {
      gemm_syrk(h, syrk, single, g, a, dd);
    } else {
      gemm_one(h, fn, gv, single, g, a, g->a_rs, g->a_cs, b, g->b_rs, g->b_cs, dd, g->d_rs);
      if (epi) run_epilogue(ctx, &e);
    }
  }
done:
  if (wa) rt_host_free(ctx->rt->host_pool, wa, na);
  if (wb) rt_host_free(ctx->rt->host_pool, wb, nb);
  if (wd) rt_host_free(ctx->rt->host_pool, wd, nd);
  return st;
}

const RtLinalg rt_host_linalg = {
    .library = "a BLAS (OpenBLAS: apt-get install libopenblas0-pthread)",
    .gemm = host_gemm,
    .decompose = rt_host_decompose,
    .close = host_linalg_close,
};
