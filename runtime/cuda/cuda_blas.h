/* cuda_blas.h: the CUDA device's vendor math library (runtime/linalg.h's RtLinalg): cuBLASLt loaded at run
 * time (cuda_blas.c). */
#ifndef LOOM_RUNTIME_CUDA_BLAS_H
#define LOOM_RUNTIME_CUDA_BLAS_H

#include <pthread.h>

#include "runtime/gpu/gpu_driver.h"

/* The values of cublasLt.h / cublas_api.h / library_types.h that cuda_blas.c passes (loom builds without
 * the toolkit's headers; tests/c/test_cublaslt.c checks them against the headers where they exist). */
enum {
  LT_R_32F = 0, LT_R_64F = 1, LT_R_16F = 2, LT_R_16BF = 14,                         /* cudaDataType */
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

extern const RtLinalg rt_cuda_linalg;
/* The shared GPU layer's driver table of CUDA (cuda_device.c), for the libraries' calls into the layer
 * (current device and stream, workspace from the device pool). */
const RtGpuDriver *rt_cuda_gpu_driver(void);
/* Loads cuBLASLt as a product would and resolves every function it uses, with no device: path gets the
 * library found and its version; LOOM_ERR_UNSUPPORTED (and the message a product would give) when it is
 * missing or lacks a function. For tests and loom's configuration report. */
LoomStatus rt_cublaslt_probe(char *path, size_t size, Diag *d);
/* cuda_fft.c: RtLinalg.fft of CUDA (cuFFT), its state's slot in the CUDA library state (made on first
 * use, guarded by *lock), its release with the context, and a probe like rt_cublaslt_probe. */
LoomStatus rt_cuda_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d);
LoomStatus rt_cuda_fft_slot(LoomContext *ctx, void ***slot, pthread_mutex_t **lock, Diag *d);
void rt_cuda_fft_close(LoomContext *ctx, void *state);
LoomStatus rt_cufft_probe(char *path, size_t size, Diag *d);
/* The cuBLASLt functions loaded (NULL-terminated). */
extern const char *const rt_cublaslt_symbols[];

#endif /* LOOM_RUNTIME_CUDA_BLAS_H */
