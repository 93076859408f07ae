/* host_lapack.c: the host's decompositions (linalg.h's RtLinalg.decompose) through LAPACK, loaded with
 * the host BLAS (host_blas.h).
 *
 * Matrices arrive column-major and packed (runtime/linalg_api.c arranged that), which is what LAPACK
 * takes, so each problem is: copy the input into the output (or a scratch) buffer that the routine
 * overwrites, query the workspace once per call (lwork = -1), run the routine, keep its info. The
 * routines are NumPy's own (getrf, gesv, potrf, geqrf + orgqr, gesdd, syevd; for complex matrices
 * ungqr and heevd, and gesdd / heevd take a real workspace too), so results and sign conventions are
 * NumPy's when the LAPACK is the same. Singular values and eigenvalues are real (the real dtype of the
 * input's precision). Problems run one after another; OpenBLAS runs the BLAS inside each routine on all
 * cores.
 *
 * Small real matrices (n <= SMALL_N) take another road for LU and solve: getf2's algorithm (partial
 * pivoting, the first largest magnitude, the reciprocal of the pivot) and getrs's substitutions written
 * here, with the batch spread over loom's thread pool. LAPACK's calls carry fixed costs that such sizes
 * feel (NumPy's OpenBLAS 0.3.31, one Zen 4 core: dgetrf of 8 x 8 4.7 us against 0.9 here through
 * loom_linalg, of 64 x 64 25 against 18.5; dgesv of 64 x 64 with 64 right-hand sides 80 against 47), they
 * run such sizes on one core, and a stack of them one after another (NumPy's loop is serial too).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_blas.h"

typedef void (*Getrf)(const void *m, const void *n, void *a, const void *lda, void *ipiv, void *info);
typedef void (*Gesv)(const void *n, const void *nrhs, void *a, const void *lda, void *ipiv, void *b, const void *ldb,
                     void *info);
typedef void (*Potrf)(const char *uplo, const void *n, void *a, const void *lda, void *info, size_t l1);
typedef void (*Geqrf)(const void *m, const void *n, void *a, const void *lda, void *tau, void *work,
                      const void *lwork, void *info);
typedef void (*Orgqr)(const void *m, const void *n, const void *k, void *a, const void *lda, const void *tau,
                      void *work, const void *lwork, void *info);
typedef void (*Gesdd)(const char *jobz, const void *m, const void *n, void *a, const void *lda, void *s, void *u,
                      const void *ldu, void *vt, const void *ldvt, void *work, const void *lwork, void *iwork,
                      void *info, size_t l1);
typedef void (*Cgesdd)(const char *jobz, const void *m, const void *n, void *a, const void *lda, void *s, void *u,
                       const void *ldu, void *vt, const void *ldvt, void *work, const void *lwork, void *rwork,
                       void *iwork, void *info, size_t l1);
typedef void (*Heevd)(const char *jobz, const char *uplo, const void *n, void *a, const void *lda, void *w, void *work,
                      const void *lwork, void *rwork, const void *lrwork, void *iwork, const void *liwork, void *info,
                      size_t l1, size_t l2);
typedef void (*Syevd)(const char *jobz, const char *uplo, const void *n, void *a, const void *lda, void *w, void *work,
                      const void *lwork, void *iwork, const void *liwork, void *info, size_t l1, size_t l2);

/* Scratch memory of one call, freed together. */
typedef struct Scratch {
  LoomContext *ctx;
  void *p[4];
  size_t n[4];
  int count;
} Scratch;

static void *scratch(Scratch *s, size_t bytes) {
  if (s->count == 4) return NULL;
  if (bytes == 0) bytes = 16;
  void *p = rt_host_alloc(s->ctx->rt->host_pool, bytes);
  if (!p) return NULL;
  s->p[s->count] = p;
  s->n[s->count++] = bytes;
  return p;
}

static void scratch_free(Scratch *s) {
  for (int i = 0; i < s->count; i++) rt_host_free(s->ctx->rt->host_pool, s->p[i], s->n[i]);
  s->count = 0;
}

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

/* The workspace size a routine asked for (written to work[0] by an lwork = -1 call). */
static int64_t lwork_of(bool single, const void *w) {
  double v = single ? (double)*(const float *)w : *(const double *)w;
  return v < 1 ? 1 : (int64_t)v + 1;
}

/* The routine of this dtype: sreal for float32 (float64 the next entry), cplx for complex64 (complex128 next). */
static RtBlasRoutine pick(LoomDType t, RtBlasRoutine sreal, RtBlasRoutine cplx) {
  switch (t) {
  case LOOM_FLOAT32: return sreal;
  case LOOM_FLOAT64: return (RtBlasRoutine)(sreal + 1);
  case LOOM_COMPLEX64: return cplx;
  default: return (RtBlasRoutine)(cplx + 1);
  }
}

/* ---- small real matrices ------------------------------------------------------------------------ */
enum { SMALL_N = 64 };

/* The kernels are built twice where the compiler can (GCC, clang on x86-64): for the baseline the build
 * targets and for x86-64-v3 (AVX2 + FMA), picked at load time; the updates are loops of
 * multiply-adds over contiguous rows that the compiler vectorizes. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SMALL_NO_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SMALL_NO_CLONES 1
#endif
/* not under the sanitizers: an ifunc resolver runs at relocation, before TSan's runtime is up (a segfault at
 * load: every TSan test exited 139) */
#if defined(__x86_64__) && defined(__has_attribute) && !defined(SMALL_NO_CLONES)
#if __has_attribute(target_clones)
#define SMALL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#endif
#ifndef SMALL_CLONES
#define SMALL_CLONES
#endif

/* lu_small_T: getf2 on the column-major n x n matrix a (ld n), 1-based pivots in piv; LAPACK's info (the
 * first zero pivot, 1-based; the factorization goes on). getrs_small_T: b (n x k, ld n) overwritten by
 * a^-1 b from lu_small's factors. Written once per real type. */
#define SMALL_KERNELS(T, S, ABS, TINY)                                                                                 \
  SMALL_CLONES static int64_t lu_small_##S(int64_t n, T *a, int32_t *piv) {                                            \
    int64_t info = 0;                                                                                                  \
    for (int64_t k = 0; k < n; k++) {                                                                                  \
      T *ck = a + k * n;                                                                                               \
      int64_t p = k;                                                                                                   \
      T best = ABS(ck[k]);                                                                                             \
      for (int64_t i = k + 1; i < n; i++)                                                                              \
        if (ABS(ck[i]) > best) best = ABS(ck[i]), p = i;                                                               \
      piv[k] = (int32_t)(p + 1);                                                                                       \
      if (ck[p] != 0) {                                                                                                \
        if (p != k)                                                                                                    \
          for (int64_t j = 0; j < n; j++) {                                                                            \
            T t = a[k + j * n];                                                                                        \
            a[k + j * n] = a[p + j * n];                                                                               \
            a[p + j * n] = t;                                                                                          \
          }                                                                                                            \
        T d = ck[k];                                                                                                   \
        if (ABS(d) >= TINY) {                                                                                          \
          T r = 1 / d;                                                                                                 \
          for (int64_t i = k + 1; i < n; i++) ck[i] *= r;                                                              \
        } else {                                                                                                       \
          for (int64_t i = k + 1; i < n; i++) ck[i] /= d;                                                              \
        }                                                                                                              \
      } else if (info == 0) {                                                                                          \
        info = k + 1;                                                                                                  \
      }                                                                                                                \
      for (int64_t j = k + 1; j < n; j++) {                                                                            \
        T *restrict cj = a + j * n, f = cj[k];                                                                         \
        const T *restrict cl = ck; /* another column */                                                                \
        for (int64_t i = k + 1; i < n; i++) cj[i] -= f * cl[i];                                                        \
      }                                                                                                                \
    }                                                                                                                  \
    return info;                                                                                                       \
  }                                                                                                                    \
  /* Fewer than 4 right-hand sides are solved one column at a time (the updates run down the columns of                \
   * lu); more go through y, a row-major copy of up to SMALL_N columns, so that every update is a row of y             \
   * (the columns at once, contiguous) whatever n is. */                                                               \
  SMALL_CLONES static void getrs_small_##S(int64_t n, int64_t k, const T *lu, const int32_t *piv, T *b) {              \
    if (k < 4) {                                                                                                       \
      for (int64_t c = 0; c < k; c++) {                                                                                \
        T *restrict x = b + c * n;                                                                                     \
        for (int64_t i = 0; i < n; i++) {                                                                              \
          int64_t p = piv[i] - 1;                                                                                      \
          T t = x[i];                                                                                                  \
          x[i] = x[p];                                                                                                 \
          x[p] = t;                                                                                                    \
        }                                                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                                              \
          T xj = x[j];                                                                                                 \
          const T *restrict cj = lu + j * n;                                                                           \
          for (int64_t i = j + 1; i < n; i++) x[i] -= xj * cj[i];                                                      \
        }                                                                                                              \
        for (int64_t j = n - 1; j >= 0; j--) {                                                                         \
          const T *restrict cj = lu + j * n;                                                                           \
          T xj = x[j] /= cj[j];                                                                                        \
          for (int64_t i = 0; i < j; i++) x[i] -= xj * cj[i];                                                          \
        }                                                                                                              \
      }                                                                                                                \
      return;                                                                                                          \
    }                                                                                                                  \
    T y[SMALL_N * SMALL_N];                                                                                            \
    for (int64_t c0 = 0; c0 < k; c0 += SMALL_N) {                                                                      \
      int64_t w = k - c0 < SMALL_N ? k - c0 : SMALL_N;                                                                 \
      for (int64_t c = 0; c < w; c++)                                                                                  \
        for (int64_t i = 0; i < n; i++) y[i * w + c] = b[(c0 + c) * n + i];                                            \
      for (int64_t i = 0; i < n; i++) { /* the row interchanges, in getrf's order */                                   \
        int64_t p = piv[i] - 1;                                                                                        \
        if (p != i)                                                                                                    \
          for (int64_t c = 0; c < w; c++) {                                                                            \
            T t = y[i * w + c];                                                                                        \
            y[i * w + c] = y[p * w + c];                                                                               \
            y[p * w + c] = t;                                                                                          \
          }                                                                                                            \
      }                                                                                                                \
      for (int64_t j = 0; j < n; j++) /* L: unit lower */                                                              \
        for (int64_t i = j + 1; i < n; i++) {                                                                          \
          T l = lu[i + j * n], *restrict yi = y + i * w;                                                               \
          const T *restrict yj = y + j * w;                                                                            \
          for (int64_t c = 0; c < w; c++) yi[c] -= l * yj[c];                                                          \
        }                                                                                                              \
      for (int64_t j = n - 1; j >= 0; j--) { /* U */                                                                   \
        T d = lu[j + j * n];                                                                                           \
        for (int64_t c = 0; c < w; c++) y[j * w + c] /= d;                                                             \
        for (int64_t i = 0; i < j; i++) {                                                                              \
          T u = lu[i + j * n], *restrict yi = y + i * w;                                                               \
          const T *restrict yj = y + j * w;                                                                            \
          for (int64_t c = 0; c < w; c++) yi[c] -= u * yj[c];                                                          \
        }                                                                                                              \
      }                                                                                                                \
      for (int64_t c = 0; c < w; c++)                                                                                  \
        for (int64_t i = 0; i < n; i++) b[(c0 + c) * n + i] = y[i * w + c];                                            \
    }                                                                                                                  \
  }
SMALL_KERNELS(double, d, fabs, DBL_MIN)
SMALL_KERNELS(float, s, fabsf, FLT_MIN)
#undef SMALL_KERNELS

/* Problems [task * per, ...) of an LU or a solve of small real matrices. */
typedef struct SmallJob {
  const RtDecomp *r;
  int64_t per;
} SmallJob;

static void small_task(void *arg, int64_t task) {
  const SmallJob *j = arg;
  const RtDecomp *r = j->r;
  int64_t n = r->n, k = r->k, b0 = task * j->per, b1 = imin(b0 + j->per, r->batch);
  bool single = r->dtype == LOOM_FLOAT32;
  size_t es = single ? 4 : 8;
  double scratch[SMALL_N * SMALL_N];
  int32_t ipiv[SMALL_N];
  for (int64_t b = b0; b < b1; b++) {
    const char *in = (const char *)r->in[0] + (size_t)(b * n * n) * es;
    if (r->op == RT_DECOMP_LU) {
      char *lu = (char *)r->out[0] + (size_t)(b * n * n) * es;
      int32_t *piv = (int32_t *)r->out[1] + b * n;
      memcpy(lu, in, (size_t)(n * n) * es);
      (void)(single ? lu_small_s(n, (float *)(void *)lu, piv) : lu_small_d(n, (double *)(void *)lu, piv));
      r->info[b] = 0; /* a singular matrix has det 0: not an error */
      continue;
    }
    char *x = (char *)r->out[0] + (size_t)(b * n * k) * es;
    memcpy(scratch, in, (size_t)(n * n) * es);
    memcpy(x, (const char *)r->in[1] + (size_t)(b * n * k) * es, (size_t)(n * k) * es);
    int64_t info = single ? lu_small_s(n, (float *)(void *)scratch, ipiv) : lu_small_d(n, scratch, ipiv);
    r->info[b] = info;
    if (info != 0) continue; /* gesv's: a singular matrix leaves b unsolved */
    if (single) getrs_small_s(n, k, (const float *)(const void *)scratch, ipiv, (float *)(void *)x);
    else getrs_small_d(n, k, scratch, ipiv, (double *)(void *)x);
  }
}

/* Whether r is an LU or a solve of small real matrices (small_task's). */
static bool small_problem(const RtDecomp *r) {
  return (r->op == RT_DECOMP_LU || r->op == RT_DECOMP_SOLVE) && (r->dtype == LOOM_FLOAT32 || r->dtype == LOOM_FLOAT64) &&
         r->n <= SMALL_N;
}

/* Runs small_task over the batch: tasks of about 2^15 multiply-adds (one problem each from n = 32 up). */
static void run_small(LoomContext *ctx, const RtDecomp *r) {
  int64_t n = r->n, work = n * n * (n + 3 * r->k) + 1;
  SmallJob j = {r, imax(1, (INT64_C(1) << 15) / work)};
  int64_t tasks = (r->batch + j.per - 1) / j.per;
  if (tasks == 1) small_task(&j, 0);
  else rt_parallel_for(ctx->rt->pool, tasks, small_task, &j);
}

static LoomStatus oom(Diag *d, const char *what) {
  return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: LAPACK workspace for %s", what);
}

LoomStatus rt_host_decompose(LoomContext *ctx, int index, const RtDecomp *r, Diag *d) {
  (void)index;
  RtHostBlas *h;
  LoomStatus st = rt_host_blas(ctx, &h, d);
  if (st != LOOM_OK) return st;
  LoomDType t = r->dtype;
  if (t != LOOM_FLOAT32 && t != LOOM_FLOAT64 && t != LOOM_COMPLEX64 && t != LOOM_COMPLEX128)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "linalg on the host: %s is not supported", loom_dtype_name(t));
  if (!h->ilp64 && (r->m > INT32_MAX / 4 || r->n > INT32_MAX / 4 || r->k > INT32_MAX / 4))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "linalg: dims beyond 2^29 need a 64-bit-integer LAPACK");
  bool single = t == LOOM_FLOAT32 || t == LOOM_COMPLEX64, cplx = t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128;
  size_t rs = single ? 4 : 8, es = cplx ? 2 * rs : rs, is = h->ilp64 ? 8 : 4; /* real, element, integer sizes */
  int64_t m = r->m, n = r->n, k = r->k, mn = imin(m, n);
  RtBlasInt bm, bn, bk, blda, bldb, binfo, blw, bliw, bq;
  RtBlasFn fn;
  Scratch sc = {ctx, {0}, {0}, 0};
  bool values_only = (r->flags & RT_DECOMP_VALUES_ONLY) != 0;
  if (small_problem(r)) {
    run_small(ctx, r);
    return LOOM_OK;
  }
  switch (r->op) {
  case RT_DECOMP_LU: {
    if ((st = rt_host_blas_fn(h, pick(t, RB_SGETRF, RB_CGETRF), &fn, d)) != LOOM_OK) return st;
    void *ipiv = scratch(&sc, (size_t)n * is);
    if (!ipiv) return oom(d, "getrf");
    Getrf f;
    memcpy(&f, &fn, sizeof f);
    for (int64_t b = 0; b < r->batch; b++) {
      char *lu = (char *)r->out[0] + (size_t)(b * n * n) * es;
      int32_t *piv = (int32_t *)r->out[1] + b * n;
      memcpy(lu, (const char *)r->in[0] + (size_t)(b * n * n) * es, (size_t)(n * n) * es);
      f(rt_bint(h, &bn, n), rt_bint(h, &bm, n), lu, rt_bint(h, &blda, imax(1, n)), ipiv, &binfo);
      for (int64_t i = 0; i < n; i++)
        piv[i] = h->ilp64 ? (int32_t)((int64_t *)ipiv)[i] : ((int32_t *)ipiv)[i];
      int64_t info = rt_bint_value(h, &binfo);
      r->info[b] = info > 0 ? 0 : info; /* a singular matrix has det 0: not an error */
    }
    break;
  }
  case RT_DECOMP_SOLVE: {
    if ((st = rt_host_blas_fn(h, pick(t, RB_SGESV, RB_CGESV), &fn, d)) != LOOM_OK) return st;
    void *ipiv = scratch(&sc, (size_t)n * is), *a = scratch(&sc, (size_t)(n * n) * es);
    if (!ipiv || !a) {
      scratch_free(&sc);
      return oom(d, "gesv");
    }
    Gesv f;
    memcpy(&f, &fn, sizeof f);
    for (int64_t b = 0; b < r->batch; b++) {
      char *x = (char *)r->out[0] + (size_t)(b * n * k) * es;
      memcpy(a, (const char *)r->in[0] + (size_t)(b * n * n) * es, (size_t)(n * n) * es);
      memcpy(x, (const char *)r->in[1] + (size_t)(b * n * k) * es, (size_t)(n * k) * es);
      f(rt_bint(h, &bn, n), rt_bint(h, &bk, k), a, rt_bint(h, &blda, imax(1, n)), ipiv, x,
        rt_bint(h, &bldb, imax(1, n)), &binfo);
      r->info[b] = rt_bint_value(h, &binfo);
    }
    break;
  }
  case RT_DECOMP_CHOLESKY: {
    if ((st = rt_host_blas_fn(h, pick(t, RB_SPOTRF, RB_CPOTRF), &fn, d)) != LOOM_OK) return st;
    Potrf f;
    memcpy(&f, &fn, sizeof f);
    char uplo = (r->flags & RT_DECOMP_UPPER) ? 'U' : 'L';
    for (int64_t b = 0; b < r->batch; b++) {
      char *l = (char *)r->out[0] + (size_t)(b * n * n) * es;
      memcpy(l, (const char *)r->in[0] + (size_t)(b * n * n) * es, (size_t)(n * n) * es);
      f(&uplo, rt_bint(h, &bn, n), l, rt_bint(h, &blda, imax(1, n)), &binfo, 1);
      r->info[b] = rt_bint_value(h, &binfo);
    }
    break;
  }
  case RT_DECOMP_QR: {
    RtBlasFn fq = NULL, fo = NULL;
    if ((st = rt_host_blas_fn(h, pick(t, RB_SGEQRF, RB_CGEQRF), &fq, d)) != LOOM_OK) return st;
    if (!values_only && (st = rt_host_blas_fn(h, pick(t, RB_SORGQR, RB_CUNGQR), &fo, d)) != LOOM_OK) return st;
    Geqrf f;
    Orgqr g;
    memcpy(&f, &fq, sizeof f);
    memcpy(&g, &fo, sizeof g);
    int64_t mq = (r->flags & RT_DECOMP_COMPLETE) ? m : mn;
    void *tau = scratch(&sc, (size_t)imax(1, mn) * es);
    double q1[2] = {0, 0}, q2[2] = {0, 0};
    if (!tau) return oom(d, "geqrf");
    f(rt_bint(h, &bm, m), rt_bint(h, &bn, n), NULL, rt_bint(h, &blda, imax(1, m)), tau, q1, rt_bint(h, &blw, -1), &binfo);
    int64_t lw = lwork_of(single, q1);
    if (!values_only && mq > 0) {
      g(rt_bint(h, &bm, m), rt_bint(h, &bq, mq), rt_bint(h, &bk, mn), NULL, rt_bint(h, &blda, imax(1, m)), tau, q2,
        rt_bint(h, &blw, -1), &binfo);
      lw = imax(lw, lwork_of(single, q2));
    }
    void *work = scratch(&sc, (size_t)lw * es);
    if (!work) {
      scratch_free(&sc);
      return oom(d, "geqrf");
    }
    for (int64_t b = 0; b < r->batch; b++) {
      char *ra = (char *)r->out[0] + (size_t)(b * m * n) * es;
      memcpy(ra, (const char *)r->in[0] + (size_t)(b * m * n) * es, (size_t)(m * n) * es);
      f(rt_bint(h, &bm, m), rt_bint(h, &bn, n), ra, rt_bint(h, &blda, imax(1, m)), tau, work, rt_bint(h, &blw, lw),
        &binfo);
      r->info[b] = rt_bint_value(h, &binfo);
      if (values_only || mq == 0 || r->info[b] != 0) continue;
      char *q = (char *)r->out[1] + (size_t)(b * m * mq) * es;
      memcpy(q, ra, (size_t)(m * imin(mq, n)) * es); /* the reflectors: the first min(mq, n) columns */
      if (mq > n) memset(q + (size_t)(m * n) * es, 0, (size_t)(m * (mq - n)) * es);
      g(rt_bint(h, &bm, m), rt_bint(h, &bq, mq), rt_bint(h, &bk, mn), q, rt_bint(h, &blda, imax(1, m)), tau, work,
        rt_bint(h, &blw, lw), &binfo);
      r->info[b] = rt_bint_value(h, &binfo);
    }
    break;
  }
  case RT_DECOMP_SVD: {
    if ((st = rt_host_blas_fn(h, pick(t, RB_SGESDD, RB_CGESDD), &fn, d)) != LOOM_OK) return st;
    Gesdd f;
    Cgesdd fc;
    memcpy(&f, &fn, sizeof f);
    memcpy(&fc, &fn, sizeof fc);
    bool full = (r->flags & RT_DECOMP_COMPLETE) != 0;
    char jobz = values_only ? 'N' : full ? 'A' : 'S';
    int64_t ku = full ? m : mn, kv = full ? n : mn;
    /* complex gesdd's real workspace: 7 mn for jobz 'N', else mn max(5 mn + 7, 2 max(m, n) + 2 mn + 1) */
    int64_t lrw = values_only ? 7 * mn : mn * imax(5 * mn + 7, 2 * imax(m, n) + 2 * mn + 1);
    RtBlasInt bldu, bldvt;
    void *a = scratch(&sc, (size_t)imax(1, m * n) * es), *iwork = scratch(&sc, (size_t)imax(1, 8 * mn) * is);
    void *rwork = cplx ? scratch(&sc, (size_t)imax(1, lrw) * rs) : NULL;
    double q[2] = {0, 0}, dummy[2] = {0, 0};
    if (!a || !iwork || (cplx && !rwork)) {
      scratch_free(&sc);
      return oom(d, "gesdd");
    }
    if (cplx)
      fc(&jobz, rt_bint(h, &bm, m), rt_bint(h, &bn, n), a, rt_bint(h, &blda, imax(1, m)), dummy, dummy,
         rt_bint(h, &bldu, imax(1, m)), dummy, rt_bint(h, &bldvt, imax(1, kv)), q, rt_bint(h, &blw, -1), rwork, iwork,
         &binfo, 1);
    else
      f(&jobz, rt_bint(h, &bm, m), rt_bint(h, &bn, n), a, rt_bint(h, &blda, imax(1, m)), dummy, dummy,
        rt_bint(h, &bldu, imax(1, m)), dummy, rt_bint(h, &bldvt, imax(1, kv)), q, rt_bint(h, &blw, -1), iwork, &binfo,
        1);
    int64_t lw = lwork_of(single, q);
    void *work = scratch(&sc, (size_t)lw * es);
    if (!work) {
      scratch_free(&sc);
      return oom(d, "gesdd");
    }
    for (int64_t b = 0; b < r->batch; b++) {
      memcpy(a, (const char *)r->in[0] + (size_t)(b * m * n) * es, (size_t)(m * n) * es);
      char *s = (char *)r->out[0] + (size_t)(b * mn) * rs;
      char *u = values_only ? (char *)dummy : (char *)r->out[1] + (size_t)(b * m * ku) * es;
      char *vt = values_only ? (char *)dummy : (char *)r->out[2] + (size_t)(b * kv * n) * es;
      if (cplx)
        fc(&jobz, rt_bint(h, &bm, m), rt_bint(h, &bn, n), a, rt_bint(h, &blda, imax(1, m)), s, u,
           rt_bint(h, &bldu, imax(1, m)), vt, rt_bint(h, &bldvt, imax(1, kv)), work, rt_bint(h, &blw, lw), rwork,
           iwork, &binfo, 1);
      else
        f(&jobz, rt_bint(h, &bm, m), rt_bint(h, &bn, n), a, rt_bint(h, &blda, imax(1, m)), s, u,
          rt_bint(h, &bldu, imax(1, m)), vt, rt_bint(h, &bldvt, imax(1, kv)), work, rt_bint(h, &blw, lw), iwork, &binfo,
          1);
      r->info[b] = rt_bint_value(h, &binfo);
    }
    break;
  }
  case RT_DECOMP_EIGH: {
    if ((st = rt_host_blas_fn(h, pick(t, RB_SSYEVD, RB_CHEEVD), &fn, d)) != LOOM_OK) return st;
    Syevd f;
    Heevd fh;
    memcpy(&f, &fn, sizeof f);
    memcpy(&fh, &fn, sizeof fh);
    char jobz = values_only ? 'N' : 'V', uplo = (r->flags & RT_DECOMP_UPPER) ? 'U' : 'L';
    void *a = values_only ? scratch(&sc, (size_t)imax(1, n * n) * es) : NULL;
    double q[2] = {0, 0}, qr[2] = {0, 0};
    int64_t qi[2] = {0, 0};
    if (values_only && !a) return oom(d, "syevd");
    RtBlasInt blrw;
    if (cplx)
      fh(&jobz, &uplo, rt_bint(h, &bn, n), NULL, rt_bint(h, &blda, imax(1, n)), NULL, q, rt_bint(h, &blw, -1), qr,
         rt_bint(h, &blrw, -1), qi, rt_bint(h, &bliw, -1), &binfo, 1, 1);
    else
      f(&jobz, &uplo, rt_bint(h, &bn, n), NULL, rt_bint(h, &blda, imax(1, n)), NULL, q, rt_bint(h, &blw, -1), qi,
        rt_bint(h, &bliw, -1), &binfo, 1, 1);
    int64_t lw = lwork_of(single, q), liw = imax(1, rt_bint_value(h, (const RtBlasInt *)(void *)qi));
    int64_t lrw = cplx ? lwork_of(single, qr) : 0;
    void *work = scratch(&sc, (size_t)lw * es), *iwork = scratch(&sc, (size_t)liw * is);
    void *rwork = cplx ? scratch(&sc, (size_t)lrw * rs) : NULL;
    if (!work || !iwork || (cplx && !rwork)) {
      scratch_free(&sc);
      return oom(d, "syevd");
    }
    for (int64_t b = 0; b < r->batch; b++) {
      char *v = values_only ? (char *)a : (char *)r->out[1] + (size_t)(b * n * n) * es;
      char *w = (char *)r->out[0] + (size_t)(b * n) * rs;
      memcpy(v, (const char *)r->in[0] + (size_t)(b * n * n) * es, (size_t)(n * n) * es);
      if (cplx)
        fh(&jobz, &uplo, rt_bint(h, &bn, n), v, rt_bint(h, &blda, imax(1, n)), w, work, rt_bint(h, &blw, lw), rwork,
           rt_bint(h, &blrw, lrw), iwork, rt_bint(h, &bliw, liw), &binfo, 1, 1);
      else
        f(&jobz, &uplo, rt_bint(h, &bn, n), v, rt_bint(h, &blda, imax(1, n)), w, work, rt_bint(h, &blw, lw), iwork,
          rt_bint(h, &bliw, liw), &binfo, 1, 1);
      r->info[b] = rt_bint_value(h, &binfo);
    }
    break;
  }
  default:
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: unknown decomposition %d", (int)r->op);
  }
  scratch_free(&sc);
  return LOOM_OK;
}
