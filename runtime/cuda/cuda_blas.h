/* cuda_blas.h: the CUDA device's vendor math library (runtime/linalg.h's RtLinalg): cuBLASLt, cuFFT and cuSOLVER
 * loaded at run time (cuda_blas.c, cuda_fft.c, cuda_solver.c; the shared logic is runtime/gpu/gpu_libs.h's). */
#ifndef LOOM_RUNTIME_CUDA_BLAS_H
#define LOOM_RUNTIME_CUDA_BLAS_H

#include "runtime/gpu/gpu_libs.h"

/* The values of cublasLt.h / cublas_api.h / library_types.h that cuda_blas.c passes (loom builds without
 * the toolkit's headers; tests/c/test_cublaslt.c checks them against the headers where they exist). */
enum {
  LT_R_32F = 0, LT_R_64F = 1, LT_R_16F = 2, LT_R_16BF = 14, LT_C_32F = 4, LT_C_64F = 5, /* cudaDataType */
  LT_COMPUTE_32F = 68, LT_COMPUTE_64F = 70, LT_COMPUTE_32F_FAST_TF32 = 77,          /* cublasComputeType_t */
  LT_OP_N = 0, LT_OP_T = 1,                                                         /* cublasOperation_t */
  LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4, LT_DESC_EPILOGUE = 7, LT_DESC_BIAS_POINTER = 8, /* MatmulDescAttributes */
  LT_LAYOUT_BATCH_COUNT = 5, LT_LAYOUT_STRIDED_BATCH_OFFSET = 6,                    /* MatrixLayoutAttribute */
  LT_PREF_MAX_WORKSPACE_BYTES = 1, LT_PREF_MIN_ALIGNMENT_A_BYTES = 5,               /* MatmulPreferenceAttributes: */
  LT_PREF_MIN_ALIGNMENT_B_BYTES = 6, LT_PREF_MIN_ALIGNMENT_C_BYTES = 7, LT_PREF_MIN_ALIGNMENT_D_BYTES = 8,
  LT_EPILOGUE_DEFAULT = 1, LT_EPILOGUE_RELU = 2, LT_EPILOGUE_BIAS = 4, LT_EPILOGUE_RELU_BIAS = 6,
  LT_EPILOGUE_GELU = 32, LT_EPILOGUE_GELU_BIAS = 36,                                /* cublasLtEpilogue_t */
  LT_STATUS_ALLOC_FAILED = 3, LT_STATUS_NOT_SUPPORTED = 15,                         /* cublasStatus_t */
};

/* The values of cusolver_common.h / cublas_api.h that cuda_solver.c passes (tests/c/test_cusolver.c checks
 * them against the headers where they exist). */
enum {
  SV_FILL_LOWER = 0, SV_FILL_UPPER = 1, SV_OP_N = 0,                      /* cublasFillMode_t, cublasOperation_t */
  SV_EIG_NOVECTOR = 0, SV_EIG_VECTOR = 1,                                 /* cusolverEigMode_t */
  SV_STATUS_ALLOC_FAILED = 2, SV_STATUS_INVALID_VALUE = 3, SV_STATUS_NOT_SUPPORTED = 9, /* cusolverStatus_t */
};

extern const RtLinalg rt_cuda_linalg;
/* The shared GPU layer's driver table of CUDA (cuda_device.c), for the libraries' calls into the layer
 * (current device and stream, workspace from the device pool). */
const RtGpuDriver *rt_cuda_gpu_driver(void);
/* Loads cuBLASLt as a product would and resolves every function it uses, with no device: path gets the
 * library found and its version; LOOM_ERR_UNSUPPORTED (and the message a product would give) when it is
 * missing or lacks a function. For tests and loom's configuration report. */
LoomStatus rt_cublaslt_probe(char *path, size_t size, Diag *d);
/* cuBLASLt's table for the GPU layer's libraries (runtime/gpu/gpu_libs.h), whose state holds cuFFT's and
 * cuSOLVER's in its slots. */
extern const GpuBlasVendor rt_cuda_lt;
/* cuda_fft.c: RtLinalg.fft of CUDA (cuFFT), its release with the context, and a probe like
 * rt_cublaslt_probe. */
LoomStatus rt_cuda_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d);
void rt_cuda_fft_close(LoomContext *ctx, void *state);
LoomStatus rt_cufft_probe(char *path, size_t size, Diag *d);
/* cuda_solver.c: RtLinalg.decompose of CUDA (cuSOLVER), its release, a probe like rt_cublaslt_probe, and the
 * routines it resolves in their S / D (real) forms (NULL-terminated; each also as C / Z). */
LoomStatus rt_cuda_decompose(LoomContext *ctx, int index, const RtDecomp *r, Diag *d);
void rt_cuda_solver_close(LoomContext *ctx, void *state);
LoomStatus rt_cusolver_probe(char *path, size_t size, Diag *d);
extern const char *const rt_cusolver_routines[];
/* The cuBLASLt functions loaded (NULL-terminated; "?": optional). */
extern const char *const rt_cublaslt_symbols[];

#endif /* LOOM_RUNTIME_CUDA_BLAS_H */
