/* cuda_solver.c: decompositions on CUDA devices through cuSOLVER's dense API, loaded at run time like
 * cuBLASLt (RtLinalg.decompose of runtime/linalg.h; loom_linalg in loom.h).
 *
 * Loading: the file named by LOOM_CUSOLVER, then libcusolver.so.12 / .11 / .13 by soname (CUDA 13 still
 * ships .so.12), then $CUDA_HOME/lib64 and /usr/local/cuda/lib64 (vendor_lib.h); none: every
 * decomposition on a CUDA device is LOOM_ERR_UNSUPPORTED naming what to install (loom.linalg then runs
 * it on the host and says why). One cusolverDn handle per device, made with the device current, bound
 * to the calling thread's loom stream before each call.
 *
 * Routines: the typed LAPACK-style ones (S, D, C, Z: getrf, getrs, potrf, geqrf, orgqr / ungqr, gesvd,
 * syevd / heevd), resolved into one table indexed by dtype. Matrices arrive column-major and packed
 * (linalg_api.c), which is what cuSOLVER takes: each call copies its whole input batch once (device to
 * device) into the buffer the routine overwrites, sizes the workspace once, runs the routine per matrix
 * on the stream (no synchronization between matrices), then reads every problem's info with one copy
 * to the host. Batched where cuSOLVER has it: Cholesky of a batch is one potrfBatched call. gesvd wants
 * rows >= columns: a wider matrix is LOOM_ERR_UNSUPPORTED here (loom.linalg passes its conjugate
 * transpose). The workspaces come from the device pool per call; the pool is stream-blind, so a call on
 * a user stream finishes before they go back (the info copy does that).
 *
 * SVD: the Jacobi gesvdj (PyTorch's default on CUDA; in the H200 run of 2026-12-02 torch's svd of a 1024^2
 * matrix took 51 / 84 ms in float32 / float64 against gesvd's 139 / 161) where the caller takes vh in any
 * layout (RT_DECOMP_ANY_VH_LAYOUT) and the dtype is real: gesvdj writes V, which read row-major is vh
 * (RtDecomp.vh_rows); a complex vh would need a conjugate pass, so complex stays on gesvd, as do
 * values-only calls and callers that need vh column-major. A batch where gesvdj does not converge (info
 * > 0 after its 100 sweeps at machine precision) is decomposed again by gesvd, whose info is then the one
 * reported. LOOM_CUSOLVER_SVD=gesvd turns gesvdj off (for A/B runs).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"

#define MAX_DEVICES 64

/* The typed routines: field, real suffix, complex suffix, prototype (cusolverDn<S|D|C|Z><suffix>). Every
 * pointer to matrix data is void *: the four variants of a routine share one prototype. */
#define SOLVER_TYPED(X)                                                                                            \
  X(getrf_size, "getrf_bufferSize", "getrf_bufferSize", (void *, int, int, void *, int, int *))                    \
  X(getrf, "getrf", "getrf", (void *, int, int, void *, int, void *, int *, int *))                               \
  X(getrs, "getrs", "getrs", (void *, int, int, int, const void *, int, const int *, void *, int, int *))         \
  X(potrf_size, "potrf_bufferSize", "potrf_bufferSize", (void *, int, int, void *, int, int *))                    \
  X(potrf, "potrf", "potrf", (void *, int, int, void *, int, void *, int, int *))                                 \
  X(potrf_batched, "potrfBatched", "potrfBatched", (void *, int, int, void **, int, int *, int))                  \
  X(geqrf_size, "geqrf_bufferSize", "geqrf_bufferSize", (void *, int, int, void *, int, int *))                    \
  X(geqrf, "geqrf", "geqrf", (void *, int, int, void *, int, void *, void *, int, int *))                         \
  X(orgqr_size, "orgqr_bufferSize", "ungqr_bufferSize", (void *, int, int, int, const void *, int, const void *, int *)) \
  X(orgqr, "orgqr", "ungqr", (void *, int, int, int, void *, int, const void *, void *, int, int *))              \
  X(gesvd_size, "gesvd_bufferSize", "gesvd_bufferSize", (void *, int, int, int *))                                \
  X(gesvd, "gesvd", "gesvd",                                                                                       \
    (void *, signed char, signed char, int, int, void *, int, void *, void *, int, void *, int, void *, int, void *, \
     int *))                                                                                                       \
  X(syevd_size, "syevd_bufferSize", "heevd_bufferSize", (void *, int, int, int, const void *, int, const void *, int *)) \
  X(syevd, "syevd", "heevd", (void *, int, int, int, void *, int, void *, void *, int, int *))                     \
  X(gesvdj_size, "gesvdj_bufferSize", "gesvdj_bufferSize",                                                         \
    (void *, int, int, int, int, const void *, int, const void *, const void *, int, const void *, int, int *, void *)) \
  X(gesvdj, "gesvdj", "gesvdj",                                                                                    \
    (void *, int, int, int, int, void *, int, void *, void *, int, void *, int, void *, int, int *, void *))

#define SOLVER_FUNCS(X)                                                                                            \
  X(cusolverDnCreate, int, (void **))                                                                              \
  X(cusolverDnDestroy, int, (void *))                                                                              \
  X(cusolverDnSetStream, int, (void *, void *))                                                                    \
  X(cusolverDnCreateGesvdjInfo, int, (void **))                                                                    \
  X(cusolverDnDestroyGesvdjInfo, int, (void *))                                                                    \
  X(cusolverGetVersion, int, (int *))

typedef struct SolverFns {
#define X(name, ret, args) ret(*name) args;
  SOLVER_FUNCS(X)
#undef X
#define X(field, rs, cs, args) int(*field[4]) args; /* S, D, C, Z */
  SOLVER_TYPED(X)
#undef X
} SolverFns;

typedef struct CuSolver {
  RtLoadedLib lib;
  SolverFns f;
  void *handle[MAX_DEVICES];
} CuSolver;

static const char *const symbols[] = {
#define X(name, ret, args) #name,
    SOLVER_FUNCS(X)
#undef X
#define X(field, rs, cs, args) "cusolverDnS" rs, "cusolverDnD" rs, "cusolverDnC" cs, "cusolverDnZ" cs,
    SOLVER_TYPED(X)
#undef X
        NULL};
_Static_assert(sizeof symbols / sizeof *symbols - 1 == sizeof(SolverFns) / sizeof(void *), "one name per function");

/* The dtype's letter and index in the typed table: S D C Z. */
static int type_index(LoomDType t) {
  switch (t) {
  case LOOM_FLOAT32: return 0;
  case LOOM_FLOAT64: return 1;
  case LOOM_COMPLEX64: return 2;
  case LOOM_COMPLEX128: return 3;
  default: return -1;
  }
}

static long long version(const void *fns) {
  int v = 0;
  return ((const SolverFns *)fns)->cusolverGetVersion(&v) == 0 ? v : -1;
}

static const char *const sonames[] = {"libcusolver.so.12", "libcusolver.so.11", "libcusolver.so.13", NULL};
static const char *const dirs[] = {"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", NULL};
static const RtVendorLib cusolver = {
    .what = "cuSOLVER", .purpose = "decompositions on CUDA devices",
    .install = "install the CUDA toolkit's libcusolver (or `pip install nvidia-cusolver-cu12`)", .env = "LOOM_CUSOLVER",
    .sonames = sonames, .dirs = dirs, .symbols = symbols, .too_old = "CUDA 11 or later needed", .version = version};

const char *const rt_cusolver_routines[] = {
#define X(field, rs, cs, args) rs,
    SOLVER_TYPED(X)
#undef X
        NULL};

LoomStatus rt_cusolver_probe(char *path, size_t size, Diag *d) {
  return rt_vendor_lib_probe(&cusolver, sizeof(SolverFns), path, size, d);
}

void rt_cuda_solver_close(LoomContext *ctx, void *state) {
  CuSolver *s = state;
  if (!s) return;
  for (int i = 0; i < MAX_DEVICES; i++)
    if (s->handle[i]) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(rt_cuda_gpu_driver(), ctx, i, &dd); /* cuSOLVER frees its device state in that context */
      s->f.cusolverDnDestroy(s->handle[i]);
    }
  rt_gpu_lib_state_free(ctx, &s->lib);
}

static LoomStatus sv_error(int r, const char *call, int device, Diag *d) {
  LoomStatus st = r == SV_STATUS_ALLOC_FAILED ? LOOM_ERR_OUT_OF_MEMORY
                  : r == SV_STATUS_NOT_SUPPORTED ? LOOM_ERR_UNSUPPORTED
                  : r == SV_STATUS_INVALID_VALUE ? LOOM_ERR_INTERNAL
                                                 : LOOM_ERR_BACKEND;
  return diag_error(d, st, "%s on CUDA device %d failed: cusolverStatus %d", call, device, r);
}

/* ---- one call's device memory ---------------------------------------------------------------------------- */
enum { MAX_SCRATCH = 8 };
typedef struct Scratch {
  LoomContext *ctx;
  int device;
  void *p[MAX_SCRATCH];
  size_t n[MAX_SCRATCH];
  int count;
  void *jacobi; /* gesvdj's parameters (a gesvdjInfo_t), destroyed once the stream is done with the call */
} Scratch;

/* bytes of device memory for this call (freed by scratch_free); *out NULL and an error when there is none. */
static LoomStatus scratch(Scratch *s, size_t bytes, void **out, Diag *d) {
  *out = NULL;
  if (s->count == MAX_SCRATCH) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: cuSOLVER scratch table full");
  if (bytes == 0) bytes = 16;
  LoomStatus st = rt_gpu_alloc(rt_cuda_gpu_driver(), s->ctx, s->device, bytes, out, d);
  if (st != LOOM_OK) return st;
  s->p[s->count] = *out;
  s->n[s->count++] = bytes;
  return LOOM_OK;
}

static void scratch_free(Scratch *s) {
  for (int i = 0; i < s->count; i++) {
    Diag dd = {.status = LOOM_OK};
    rt_gpu_free(rt_cuda_gpu_driver(), s->ctx, s->device, s->p[i], s->n[i], &dd);
  }
  s->count = 0;
}

static LoomStatus copy_d2d(LoomContext *ctx, int device, void *dst, const void *src, size_t n, Diag *d) {
  return rt_gpu_copy(rt_cuda_gpu_driver(), ctx, dst, LOOM_DEVICE_CUDA, device, src, LOOM_DEVICE_CUDA, device, n, d);
}

/* The state, loaded on first use, and device index's handle bound to the current loom stream. Returns with
 * *lock held (the handle's stream is the caller's until it unlocks) when LOOM_OK. */
static LoomStatus solver_of(LoomContext *ctx, int index, CuSolver **out, void **handle, pthread_mutex_t **lock,
                            Diag *d) {
  if (index < 0 || index >= MAX_DEVICES)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "cuSOLVER: device %d is beyond the %d loom supports", index, MAX_DEVICES);
  RtLoadedLib *state = NULL;
  LoomStatus st = rt_gpu_lib_state(ctx, &rt_cuda_lt, GPU_LIB_SOLVER, &cusolver, sizeof(CuSolver),
                                   offsetof(CuSolver, f), &state, lock, d);
  if (st != LOOM_OK) return st;
  CuSolver *s = (CuSolver *)state;
  st = rt_gpu_make_current(rt_cuda_gpu_driver(), ctx, index, d);
  int r = 0;
  if (st == LOOM_OK && !s->handle[index] && (r = s->f.cusolverDnCreate(&s->handle[index])) != 0) {
    s->handle[index] = NULL;
    st = sv_error(r, "cusolverDnCreate", index, d);
  }
  RtStream *rs = st == LOOM_OK ? rt_gpu_current_stream(rt_cuda_gpu_driver(), ctx, index) : NULL;
  if (st == LOOM_OK && (r = s->f.cusolverDnSetStream(s->handle[index], rs ? rt_gpu_stream_handle(rs) : NULL)) != 0)
    st = sv_error(r, "cusolverDnSetStream", index, d);
  if (st != LOOM_OK) {
    pthread_mutex_unlock(*lock);
    return st;
  }
  *out = s;
  *handle = s->handle[index];
  return LOOM_OK;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }
static int imax(int a, int b) { return a > b ? a : b; }

/* Whether r is an SVD that gesvdj may take (the file's comment). */
static bool jacobi_svd(const RtDecomp *r) {
  const char *e = getenv("LOOM_CUSOLVER_SVD");
  return r->op == RT_DECOMP_SVD && (r->flags & RT_DECOMP_ANY_VH_LAYOUT) && !(r->flags & RT_DECOMP_VALUES_ONLY) &&
         r->vh_rows && (r->dtype == LOOM_FLOAT32 || r->dtype == LOOM_FLOAT64) && !(e && strcmp(e, "gesvd") == 0);
}

/* Runs r on device index; info (device, int32 [batch]) gets each problem's; jacobi: an SVD by gesvdj. */
static LoomStatus run(LoomContext *ctx, int index, CuSolver *s, void *h, const RtDecomp *r, bool jacobi, int *info,
                      Scratch *sc, Diag *d) {
  int t = type_index(r->dtype);
  bool single = t == 0 || t == 2, cplx = t >= 2;
  size_t rsz = single ? 4 : 8, es = cplx ? 2 * rsz : rsz;
  int m = (int)r->m, n = (int)r->n, k = (int)r->k, mn = m < n ? m : n, lw = 0, q;
  bool values_only = (r->flags & RT_DECOMP_VALUES_ONLY) != 0;
  int uplo = (r->flags & RT_DECOMP_UPPER) ? SV_FILL_UPPER : SV_FILL_LOWER;
  int64_t batch = r->batch;
  size_t mat = (size_t)r->m * (size_t)r->n * es; /* bytes of one input matrix */
  void *work = NULL;
  LoomStatus st = LOOM_OK;
  int e = 0;
  const char *call = "";
#define SV(name, ...) (call = "cusolverDn" #name, e = s->f.name[t](h, __VA_ARGS__))
  switch (r->op) {
  case RT_DECOMP_LU: {
    if ((st = copy_d2d(ctx, index, r->out[0], r->in[0], mat * (size_t)batch, d)) != LOOM_OK) return st;
    if (SV(getrf_size, n, n, r->out[0], imax(1, n), &lw)) break;
    if ((st = scratch(sc, (size_t)lw * es, &work, d)) != LOOM_OK) return st;
    for (int64_t b = 0; b < batch && !e; b++)
      SV(getrf, n, n, (char *)r->out[0] + (size_t)b * mat, imax(1, n), work, (int *)r->out[1] + b * n, info + b);
    break;
  }
  case RT_DECOMP_SOLVE: {
    void *a = NULL, *ipiv = NULL, *sinfo = NULL;
    size_t rhs = (size_t)n * (size_t)k * es;
    if ((st = scratch(sc, mat * (size_t)batch, &a, d)) != LOOM_OK || (st = scratch(sc, (size_t)n * 4, &ipiv, d)) != LOOM_OK ||
        (st = scratch(sc, 4, &sinfo, d)) != LOOM_OK)
      return st;
    if ((st = copy_d2d(ctx, index, a, r->in[0], mat * (size_t)batch, d)) != LOOM_OK ||
        (st = copy_d2d(ctx, index, r->out[0], r->in[1], rhs * (size_t)batch, d)) != LOOM_OK)
      return st;
    if (SV(getrf_size, n, n, a, imax(1, n), &lw)) break;
    if ((st = scratch(sc, (size_t)lw * es, &work, d)) != LOOM_OK) return st;
    /* getrs runs after a singular getrf too (it writes infinities): info of getrf is the one reported */
    for (int64_t b = 0; b < batch && !e; b++) {
      char *ab = (char *)a + (size_t)b * mat;
      if (!SV(getrf, n, n, ab, imax(1, n), work, ipiv, info + b))
        SV(getrs, SV_OP_N, n, k, ab, imax(1, n), ipiv, (char *)r->out[0] + (size_t)b * rhs, imax(1, n), sinfo);
    }
    break;
  }
  case RT_DECOMP_CHOLESKY: {
    if ((st = copy_d2d(ctx, index, r->out[0], r->in[0], mat * (size_t)batch, d)) != LOOM_OK) return st;
    if (batch > 1) { /* one potrfBatched call over an array of the matrices' device addresses */
      void **ptrs = ctx_calloc(ctx, (size_t)batch, sizeof *ptrs), *dptrs = NULL;
      if (!ptrs) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %lld matrix addresses", (long long)batch);
      for (int64_t b = 0; b < batch; b++) ptrs[b] = (char *)r->out[0] + (size_t)b * mat;
      if ((st = scratch(sc, (size_t)batch * sizeof *ptrs, &dptrs, d)) == LOOM_OK)
        st = rt_gpu_copy(rt_cuda_gpu_driver(), ctx, dptrs, LOOM_DEVICE_CUDA, index, ptrs, LOOM_DEVICE_HOST, 0,
                         (size_t)batch * sizeof *ptrs, d);
      ctx_free(ctx, ptrs);
      if (st != LOOM_OK) return st;
      if (!fits_int(batch)) return diag_error(d, LOOM_ERR_UNSUPPORTED, "cholesky: a batch beyond 2^31 matrices");
      SV(potrf_batched, uplo, n, (void **)dptrs, imax(1, n), info, (int)batch);
      break;
    }
    if (SV(potrf_size, uplo, n, r->out[0], imax(1, n), &lw)) break;
    if ((st = scratch(sc, (size_t)lw * es, &work, d)) != LOOM_OK) return st;
    SV(potrf, uplo, n, r->out[0], imax(1, n), work, lw, info);
    break;
  }
  case RT_DECOMP_QR: {
    int mq = (r->flags & RT_DECOMP_COMPLETE) ? m : mn;
    void *tau = NULL, *sinfo = NULL;
    if ((st = copy_d2d(ctx, index, r->out[0], r->in[0], mat * (size_t)batch, d)) != LOOM_OK) return st;
    if ((st = scratch(sc, (size_t)imax(1, mn) * es, &tau, d)) != LOOM_OK || (st = scratch(sc, 4, &sinfo, d)) != LOOM_OK)
      return st;
    if (SV(geqrf_size, m, n, r->out[0], imax(1, m), &lw)) break;
    bool want_q = !values_only && mq > 0;
    if (want_q && !SV(orgqr_size, m, mq, mn, r->out[1], imax(1, m), tau, &q) && q > lw) lw = q;
    if (e) break;
    if ((st = scratch(sc, (size_t)imax(1, lw) * es, &work, d)) != LOOM_OK) return st;
    size_t qmat = (size_t)m * (size_t)mq * es, ncopy = (size_t)m * (size_t)(mq < n ? mq : n) * es;
    void *zeros = NULL;
    if (want_q && mq > n) { /* Q's columns past n start as zeros (copied from a zeroed host buffer) */
      zeros = ctx_calloc(ctx, 1, qmat - (size_t)m * (size_t)n * es);
      if (!zeros) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: qr's zero columns");
    }
    for (int64_t b = 0; b < batch && !e && st == LOOM_OK; b++) {
      char *ra = (char *)r->out[0] + (size_t)b * mat;
      if (SV(geqrf, m, n, ra, imax(1, m), tau, work, lw, info + b) || !want_q) continue;
      char *qb = (char *)r->out[1] + (size_t)b * qmat;
      st = copy_d2d(ctx, index, qb, ra, ncopy, d); /* the reflectors: the first min(mq, n) columns */
      if (st == LOOM_OK && zeros)
        st = rt_gpu_copy(rt_cuda_gpu_driver(), ctx, qb + ncopy, LOOM_DEVICE_CUDA, index, zeros, LOOM_DEVICE_HOST, 0,
                         qmat - ncopy, d);
      if (st == LOOM_OK) SV(orgqr, m, mq, mn, qb, imax(1, m), tau, work, lw, sinfo);
    }
    ctx_free(ctx, zeros);
    break;
  }
  case RT_DECOMP_SVD: {
    if (m < n)
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "svd on CUDA devices: cuSOLVER's gesvd needs rows >= columns (this "
                        "matrix is %d x %d); decompose its conjugate transpose", m, n);
    bool full = (r->flags & RT_DECOMP_COMPLETE) != 0;
    signed char job = values_only ? 'N' : full ? 'A' : 'S';
    int ku = full ? m : mn, kv = full ? n : mn;
    void *a = NULL;
    if ((st = scratch(sc, mat * (size_t)batch, &a, d)) != LOOM_OK) return st;
    if ((st = copy_d2d(ctx, index, a, r->in[0], mat * (size_t)batch, d)) != LOOM_OK) return st;
    if (jacobi) { /* U (m x ku) and V (n x kv), both column-major; econ: the thin factors */
      int econ = full ? 0 : 1;
      if (!sc->jacobi && (e = s->f.cusolverDnCreateGesvdjInfo(&sc->jacobi)) != 0) {
        sc->jacobi = NULL;
        call = "cusolverDnCreateGesvdjInfo";
        break;
      }
      if (SV(gesvdj_size, SV_EIG_VECTOR, econ, m, n, a, imax(1, m), r->out[0], r->out[1], imax(1, m), r->out[2],
             imax(1, n), &lw, sc->jacobi))
        break;
      if ((st = scratch(sc, (size_t)imax(1, lw) * es, &work, d)) != LOOM_OK) return st;
      for (int64_t b = 0; b < batch && !e; b++)
        SV(gesvdj, SV_EIG_VECTOR, econ, m, n, (char *)a + (size_t)b * mat, imax(1, m),
           (char *)r->out[0] + (size_t)b * (size_t)mn * rsz, (char *)r->out[1] + (size_t)b * (size_t)m * (size_t)ku * es,
           imax(1, m), (char *)r->out[2] + (size_t)b * (size_t)kv * (size_t)n * es, imax(1, n), work, lw, info + b,
           sc->jacobi);
      if (!e) *r->vh_rows = true;
      break;
    }
    if (SV(gesvd_size, m, n, &lw)) break;
    if ((st = scratch(sc, (size_t)imax(1, lw) * es, &work, d)) != LOOM_OK) return st;
    for (int64_t b = 0; b < batch && !e; b++) {
      void *u = values_only ? NULL : (char *)r->out[1] + (size_t)b * (size_t)m * (size_t)ku * es;
      void *vt = values_only ? NULL : (char *)r->out[2] + (size_t)b * (size_t)kv * (size_t)n * es;
      SV(gesvd, job, job, m, n, (char *)a + (size_t)b * mat, imax(1, m), (char *)r->out[0] + (size_t)b * (size_t)mn * rsz,
         u, imax(1, m), vt, imax(1, kv), work, lw, NULL, info + b);
    }
    break;
  }
  case RT_DECOMP_EIGH: {
    int jobz = values_only ? SV_EIG_NOVECTOR : SV_EIG_VECTOR;
    void *v = values_only ? NULL : r->out[1];
    if (values_only && (st = scratch(sc, mat * (size_t)batch, &v, d)) != LOOM_OK) return st;
    if ((st = copy_d2d(ctx, index, v, r->in[0], mat * (size_t)batch, d)) != LOOM_OK) return st;
    if (SV(syevd_size, jobz, uplo, n, v, imax(1, n), r->out[0], &lw)) break;
    if ((st = scratch(sc, (size_t)imax(1, lw) * es, &work, d)) != LOOM_OK) return st;
    for (int64_t b = 0; b < batch && !e; b++)
      SV(syevd, jobz, uplo, n, (char *)v + (size_t)b * mat, imax(1, n), (char *)r->out[0] + (size_t)b * (size_t)n * rsz,
         work, lw, info + b);
    break;
  }
  default: return diag_error(d, LOOM_ERR_INTERNAL, "internal error: unknown decomposition %d", (int)r->op);
  }
#undef SV
  if (st == LOOM_OK && e) st = sv_error(e, call, index, d);
  return st;
}

LoomStatus rt_cuda_decompose(LoomContext *ctx, int index, const RtDecomp *r, Diag *d) {
  if (type_index(r->dtype) < 0)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "linalg on CUDA devices: %s is not supported", loom_dtype_name(r->dtype));
  if (!fits_int(r->m) || !fits_int(r->n) || !fits_int(r->k) || !fits_int(r->m * r->n))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "linalg on CUDA devices: matrices beyond 2^31 elements (%lld x %lld) "
                      "need cuSOLVER's 64-bit API, which loom does not use yet", (long long)r->m, (long long)r->n);
  CuSolver *s = NULL;
  void *h = NULL;
  pthread_mutex_t *lock = NULL;
  LoomStatus st = solver_of(ctx, index, &s, &h, &lock, d);
  if (st != LOOM_OK) return st;
  Scratch sc = {ctx, index, {0}, {0}, 0, NULL};
  void *info = NULL;
  st = scratch(&sc, (size_t)r->batch * sizeof(int), &info, d);
  int *host = st == LOOM_OK ? ctx_calloc(ctx, (size_t)r->batch, sizeof(int)) : NULL;
  if (st == LOOM_OK && !host) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %lld infos", (long long)r->batch);
  /* info starts at 0: a routine that writes no info for a problem (none does) cannot leave garbage */
  if (st == LOOM_OK)
    st = rt_gpu_copy(rt_cuda_gpu_driver(), ctx, info, LOOM_DEVICE_CUDA, index, host, LOOM_DEVICE_HOST, 0,
                     (size_t)r->batch * sizeof(int), d);
  bool jacobi = jacobi_svd(r);
  if (st == LOOM_OK) st = run(ctx, index, s, h, r, jacobi, info, &sc, d);
  /* one copy back (synchronous on the stream: the routines have finished, the scratch may go back) */
  Diag cd = {.status = LOOM_OK};
  LoomStatus cst = host ? rt_gpu_copy(rt_cuda_gpu_driver(), ctx, host, LOOM_DEVICE_HOST, 0, info, LOOM_DEVICE_CUDA,
                                      index, (size_t)r->batch * sizeof(int), &cd)
                        : LOOM_OK;
  bool unconverged = false;
  for (int64_t b = 0; jacobi && st == LOOM_OK && cst == LOOM_OK && b < r->batch; b++) unconverged |= host[b] != 0;
  if (unconverged) { /* gesvdj missed its tolerance somewhere: the whole batch again by gesvd */
    *r->vh_rows = false;
    memset(host, 0, (size_t)r->batch * sizeof(int));
    st = rt_gpu_copy(rt_cuda_gpu_driver(), ctx, info, LOOM_DEVICE_CUDA, index, host, LOOM_DEVICE_HOST, 0,
                     (size_t)r->batch * sizeof(int), d);
    if (st == LOOM_OK) st = run(ctx, index, s, h, r, false, info, &sc, d);
    cd = (Diag){.status = LOOM_OK};
    cst = rt_gpu_copy(rt_cuda_gpu_driver(), ctx, host, LOOM_DEVICE_HOST, 0, info, LOOM_DEVICE_CUDA, index,
                      (size_t)r->batch * sizeof(int), &cd);
  }
  if (st == LOOM_OK && cst != LOOM_OK) st = diag_error(d, cst, "%s", cd.msg);
  for (int64_t b = 0; st == LOOM_OK && b < r->batch; b++)
    r->info[b] = r->op == RT_DECOMP_LU && host[b] > 0 ? 0 : host[b]; /* a singular LU has det 0: not an error */
  if (cst != LOOM_OK) { /* the stream may still be running the routines: the scratch cannot go back safely */
    Diag sd = {.status = LOOM_OK};
    rt_gpu_synchronize(rt_cuda_gpu_driver(), ctx, index, &sd);
  }
  scratch_free(&sc);
  if (sc.jacobi) s->f.cusolverDnDestroyGesvdjInfo(sc.jacobi);
  pthread_mutex_unlock(lock);
  ctx_free(ctx, host);
  return st;
}
