/* host_blas.h: the host's BLAS and LAPACK, loaded at run time (runtime/host_blas.c), shared by the
 * host's products (host_blas.c) and decompositions (host_lapack.c).
 *
 * Search order: the file named by LOOM_BLAS, then libopenblas.so.0 (Debian's libopenblas0-pthread),
 * libopenblas64_.so.0, libflexiblas.so.3, libblas.so.3. LAPACK routines come from the same library
 * when it has them (OpenBLAS does), else from LOOM_LAPACK or liblapack.so.3. The Fortran interface is
 * used throughout (column-major, every argument by address); the naming scheme is probed: plain
 * ("dgemm_", 32-bit integers), ILP64 ("dgemm_64_", 64-bit integers) and the scipy-openblas wheels'
 * ("scipy_dgemm_64_"), so NumPy's own OpenBLAS can be named with LOOM_BLAS.
 */
#ifndef LOOM_RUNTIME_HOST_BLAS_H
#define LOOM_RUNTIME_HOST_BLAS_H

#include "runtime/device.h"

/* Fortran routines through one pointer type: integers are passed by address as int32 or int64 (the
 * library's width), characters by address with their hidden lengths at the end. */
typedef void (*RtBlasFn)(void);

typedef enum RtBlasRoutine {
  RB_SGEMM, RB_DGEMM, RB_CGEMM, RB_ZGEMM, /* BLAS; the rest is LAPACK (from RB_SGETRF on) */
  RB_SGEMV, RB_DGEMV, RB_CGEMV, RB_ZGEMV, /* products with M = 1 or N = 1 (host_blas.c gemm_one) */
  RB_SSYRK, RB_DSYRK,                     /* a real matrix times its own transpose (host_blas.c gemm_syrk) */
  RB_SGETRF, RB_DGETRF, RB_SGESV, RB_DGESV, RB_SPOTRF, RB_DPOTRF,
  RB_SGEQRF, RB_DGEQRF, RB_SORGQR, RB_DORGQR, RB_SGESDD, RB_DGESDD, RB_SSYEVD, RB_DSYEVD,
  RB_CGETRF, RB_ZGETRF, RB_CGESV, RB_ZGESV, RB_CPOTRF, RB_ZPOTRF, /* complex: unitary Q (ungqr), Hermitian */
  RB_CGEQRF, RB_ZGEQRF, RB_CUNGQR, RB_ZUNGQR, RB_CGESDD, RB_ZGESDD, RB_CHEEVD, RB_ZHEEVD, /* eigen (heevd) */
  RB_COUNT
} RtBlasRoutine;

typedef struct RtHostBlas {
  void *lib, *lapack_lib;  /* dlopen handles (lapack_lib NULL when lib has LAPACK) */
  char path[256];          /* the BLAS found (messages, loom.linalg's config) */
  bool ilp64;              /* 64-bit integers */
  RtBlasFn fn[RB_COUNT];   /* NULL: the library lacks the routine */
  Diag fail;               /* why loading failed (reported on every use) */
} RtHostBlas;

/* The context's host BLAS, loaded on first use; an error names what to install. */
LoomStatus rt_host_blas(LoomContext *ctx, RtHostBlas **out, Diag *d);
/* The routine, or LOOM_ERR_UNSUPPORTED naming it and the library. */
LoomStatus rt_host_blas_fn(const RtHostBlas *h, RtBlasRoutine r, RtBlasFn *out, Diag *d);

/* A Fortran integer argument of the library's width. */
typedef union RtBlasInt {
  int32_t i32;
  int64_t i64;
} RtBlasInt;
static inline RtBlasInt *rt_bint(const RtHostBlas *h, RtBlasInt *slot, int64_t v) {
  if (h->ilp64) slot->i64 = v;
  else slot->i32 = (int32_t)v;
  return slot;
}
static inline int64_t rt_bint_value(const RtHostBlas *h, const RtBlasInt *v) { return h->ilp64 ? v->i64 : v->i32; }

/* runtime/host_lapack.c: RtLinalg.decompose of the host. */
LoomStatus rt_host_decompose(LoomContext *ctx, int index, const RtDecomp *r, Diag *d);

#endif /* LOOM_RUNTIME_HOST_BLAS_H */
