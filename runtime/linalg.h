/* linalg.h: vendor math libraries behind the device interface (device.h's RtDevice.linalg).
 *
 * A device kind that has them fills one RtLinalg: the host with a BLAS + LAPACK loaded at run time
 * (runtime/host_blas.c, host_lapack.c), CUDA with cuBLASLt, cuFFT and cuSOLVER (runtime/cuda/cuda_blas.c,
 * cuda_fft.c, cuda_solver.c), AMD with hipBLASLt and hipFFT (runtime/hip/hip_blas.c, hip_fft.c); the GPU
 * kinds' products and FFTs are written once over vendor tables (runtime/gpu/gpu_libs.h). Libraries are dlopen'ed on first use, so a build links none of them and a machine
 * without one gets LOOM_ERR_UNSUPPORTED naming what to install. The library state of a kind lives in
 * RtState.linalg[kind] (created by the kind under device_lock, released by close with the context).
 *
 * Two entry points:
 * - gemm: one matrix product with its epilogue over a strided batch, the form runtime/linalg_call.c
 *   reduces a call kernel (KernelIr.call) to. Every matrix is BLAS-shaped (passes/calls.c chose its
 *   layout): element (i, j) at base + i * rs + j * cs with rs or cs equal to 1 and the other at least
 *   the matrix's extent along the unit dim (1 when that extent is 1).
 * - decompose: one LAPACK-style operation (LU, solve, Cholesky, QR, SVD, symmetric eigen) over a batch
 *   of column-major matrices (runtime/linalg_api.c checks and allocates; loom_linalg in loom.h).
 */
#ifndef LOOM_RUNTIME_LINALG_H
#define LOOM_RUNTIME_LINALG_H

#include "ir/ir.h"

/* d = act(alpha * a b + bias + beta * c), per batch entry i at offsets i * (a_bs, b_bs, ...). */
typedef struct RtGemm {
  LoomDType dtype;              /* of a, b, c, bias and d (float16 and bfloat16 compute in float32) */
  int64_t m, n, k, batch;       /* m, n, k, batch >= 1 */
  const void *a;                /* m x k */
  int64_t a_rs, a_cs, a_bs;
  const void *b;                /* k x n */
  int64_t b_rs, b_cs, b_bs;
  void *d;                      /* m x n, row-major: d_cs == 1 (fuse.c stores calls into C-contiguous memory) */
  int64_t d_rs, d_cs, d_bs;
  const void *c;                /* NULL: none; else m x n, row-major (c_cs == 1) */
  int64_t c_rs, c_cs, c_bs;
  const void *bias;             /* NULL: none; else n values, bias[j] added to column j */
  double alpha, beta;
  int act;                      /* KCallAct */
  bool allow_tf32;              /* float32 on tensor cores (cuBLASLt), the context's setting */
} RtGemm;

typedef enum RtDecompOp {
  RT_DECOMP_LU = 0,   /* in a (n x n); out lu (n x n), piv (int32 [n], 1-based): getrf; a singular matrix
                         is not an error (a zero on the diagonal) */
  RT_DECOMP_SOLVE,    /* in a (n x n), b (n x k); out x (n x k): gesv */
  RT_DECOMP_CHOLESKY, /* in a (n x n); out l (n x n): potrf of the lower triangle (RT_DECOMP_UPPER: upper);
                         the other triangle is left as in a */
  RT_DECOMP_QR,       /* in a (m x n); out r (m x n: geqrf's result, R in its upper triangle), q (m x mq,
                         mq = min(m, n) or m (RT_DECOMP_COMPLETE); absent with RT_DECOMP_VALUES_ONLY): orgqr */
  RT_DECOMP_SVD,      /* in a (m x n); out s (min(m, n)), u (m x ku), vh (kv x n): gesdd; ku = kv = min(m, n)
                         or ku = m, kv = n (RT_DECOMP_COMPLETE); u and vh absent with RT_DECOMP_VALUES_ONLY */
  RT_DECOMP_EIGH,     /* in a (n x n); out w (n), v (n x n; absent with RT_DECOMP_VALUES_ONLY): syevd of the
                         lower triangle (RT_DECOMP_UPPER: upper) */
  RT_DECOMP_COUNT
} RtDecompOp;
enum { RT_DECOMP_UPPER = 1, RT_DECOMP_COMPLETE = 2, RT_DECOMP_VALUES_ONLY = 4, RT_DECOMP_ANY_VH_LAYOUT = 8 };

/* One operation over `batch` problems. Matrices are column-major and packed: problem i's matrix j
 * starts at in[j] (or out[j]) + i * its element count; vectors likewise. Outputs are allocated by the
 * caller; inputs are not modified. info[i] (host memory, batch entries) gets LAPACK's info per problem
 * (> 0: singular, not positive definite, no convergence), which the caller turns into an error. */
typedef struct RtDecomp {
  RtDecompOp op;
  LoomDType dtype;  /* float32, float64, complex64 or complex128 (s and w: the real dtype of that precision) */
  int32_t flags;    /* RT_DECOMP_* */
  int64_t batch, m, n, k; /* k: right-hand sides (SOLVE) */
  const void *in[2];
  void *out[3];
  int64_t *info;
  bool *vh_rows; /* SVD with RT_DECOMP_ANY_VH_LAYOUT: set true by a library that wrote V, column-major
                    (n x kv), into out[2]: vh = V^T is then out[2] read row-major (real dtypes only) */
} RtDecomp;

/* Batched FFTs over the last `rank` dims of C-contiguous arrays (loom_fft in loom.h): n[0..rank) are the
 * transform's (real-side) lengths, batch the product of the other dims; out is allocated by the caller;
 * in is not modified (a library that overwrites a C2R input gets a copy) unless in_scratch (the caller's
 * LOOM_FFT_C2R_SCRATCH: the library may overwrite it). */
typedef struct RtFft {
  LoomFftKind kind;
  LoomDType dtype; /* of the complex side: complex64 or complex128 */
  int32_t rank;
  int64_t n[3], batch;
  const void *in;
  void *out;
  bool in_scratch;
} RtFft;

typedef struct RtLinalg {
  const char *library; /* what to install when missing, for messages ("libopenblas0", "cuBLASLt") */
  LoomStatus (*gemm)(LoomContext *ctx, int index, const RtGemm *g, Diag *d);
  LoomStatus (*decompose)(LoomContext *ctx, int index, const RtDecomp *r, Diag *d);
  LoomStatus (*fft)(LoomContext *ctx, int index, const RtFft *f, Diag *d); /* NULL: no FFT library */
  void (*close)(LoomContext *ctx); /* releases RtState.linalg[kind] */
} RtLinalg;

struct RtDevice;
/* runtime/linalg_call.c: runs call kernel sk (KernelIr.call) on device dev: base[b] is buffer b's first
 * element (binding offset applied). Counts library_calls. */
LoomStatus rt_run_call(LoomContext *ctx, const struct RtDevice *dev, int index, const SchedKernel *sk,
                       void *const *base, Diag *d);
/* Adds n to the library_calls statistic. */
void rt_count_library_calls(LoomContext *ctx, uint64_t n);

#endif /* LOOM_RUNTIME_LINALG_H */
