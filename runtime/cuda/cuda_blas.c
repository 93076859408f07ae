/* cuda_blas.c: the CUDA device's vendor math library (runtime/linalg.h's RtLinalg): cuBLASLt's names,
 * enums and structs for the GPU layer's matrix products (runtime/gpu/gpu_blas.c, which has the approach),
 * loaded at run time like the driver; cuFFT (cuda_fft.c) and cuSOLVER (cuda_solver.c) keep their state
 * in its slots.
 *
 * Loading: the file named by LOOM_CUBLASLT, then libcublasLt.so.13 / .12 / .11 by soname (the loader's
 * path, or a copy already loaded by the process: loom's Python package preloads the nvidia-cublas
 * wheel's), then /usr/local/cuda/lib64 (CUDA_HOME/lib64 first). No library: every product on a CUDA
 * device is LOOM_ERR_UNSUPPORTED naming what to install. float32 may run on TF32 tensor cores
 * (CUBLAS_COMPUTE_32F_FAST_TF32) when the context allows it (loom_set_allow_tf32, LOOM_ALLOW_TF32=1, as
 * PyTorch's allow_tf32); the heuristic gets the operands' actual alignments.
 */
#include <stddef.h>

#include "runtime/cuda/cuda_blas.h"

typedef struct LtAlgo { /* cublasLtMatmulAlgo_t */
  uint64_t data[8];
} LtAlgo;
typedef struct LtHeuristic { /* cublasLtMatmulHeuristicResult_t */
  LtAlgo algo;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} LtHeuristic;
_Static_assert(sizeof(LtAlgo) <= GPU_LT_ALGO_MAX && sizeof(LtHeuristic) <= GPU_LT_HEURISTIC_MAX, "gpu_libs.h's bounds");
_Static_assert(offsetof(LtHeuristic, state) == offsetof(LtHeuristic, workspace) + sizeof(size_t),
               "the state follows the workspace (gpu_libs.h)");

const char *const rt_cublaslt_symbols[] = {
#define LT_NAME(field, suffix, args) "cublasLt" suffix,
    GPU_LT_FUNCS(LT_NAME)
#undef LT_NAME
        "cublasLtGetVersion", "?cublasLtGetStatusName", NULL};
_Static_assert(sizeof rt_cublaslt_symbols / sizeof *rt_cublaslt_symbols - 1 == sizeof(GpuLtFns) / sizeof(void *),
               "one name per GpuLtFns field");

static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", NULL};
static const char *const dirs[] = {"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", NULL};

const GpuBlasVendor rt_cuda_lt = {
    .lib = {.what = "cuBLASLt", .purpose = "matrix products on CUDA devices",
            .install = "install the CUDA toolkit's libcublas (or `pip install nvidia-cublas-cu13` / nvidia-cublas-cu12)",
            .env = "LOOM_CUBLASLT", .sonames = sonames, .dirs = dirs, .symbols = rt_cublaslt_symbols,
            .too_old = "too old: CUDA 11.4 or later needed", .version = rt_gpu_lt_version},
    .prefix = "cublasLt",
    .device = "CUDA",
    .driver = rt_cuda_gpu_driver,
    .algo_size = sizeof(LtAlgo),
    .heuristic_size = sizeof(LtHeuristic), .heuristic_workspace = offsetof(LtHeuristic, workspace),
    .r_16f = LT_R_16F, .r_16bf = LT_R_16BF, .r_32f = LT_R_32F, .r_64f = LT_R_64F, .c_32f = LT_C_32F, .c_64f = LT_C_64F,
    .compute_32f = LT_COMPUTE_32F, .compute_32f_tf32 = LT_COMPUTE_32F_FAST_TF32, .compute_64f = LT_COMPUTE_64F,
    .op_n = LT_OP_N, .op_t = LT_OP_T,
    .desc_transa = LT_DESC_TRANSA, .desc_transb = LT_DESC_TRANSB, .desc_epilogue = LT_DESC_EPILOGUE,
    .desc_bias_pointer = LT_DESC_BIAS_POINTER,
    .layout_batch_count = LT_LAYOUT_BATCH_COUNT, .layout_batch_offset = LT_LAYOUT_STRIDED_BATCH_OFFSET,
    .pref_max_workspace = LT_PREF_MAX_WORKSPACE_BYTES, .pref_min_alignment_a = LT_PREF_MIN_ALIGNMENT_A_BYTES,
    .epilogue_default = LT_EPILOGUE_DEFAULT, .epilogue_relu = LT_EPILOGUE_RELU, .epilogue_gelu = LT_EPILOGUE_GELU,
    .epilogue_bias = LT_EPILOGUE_BIAS,
    .status_alloc_failed = LT_STATUS_ALLOC_FAILED, .status_not_supported = LT_STATUS_NOT_SUPPORTED,
    .slot_close = {[GPU_LIB_FFT] = rt_cuda_fft_close, [GPU_LIB_SOLVER] = rt_cuda_solver_close},
};
_Static_assert(LT_PREF_MIN_ALIGNMENT_B_BYTES == LT_PREF_MIN_ALIGNMENT_A_BYTES + 1 &&
                   LT_PREF_MIN_ALIGNMENT_D_BYTES == LT_PREF_MIN_ALIGNMENT_A_BYTES + 3,
               "the alignment preferences are consecutive");

LoomStatus rt_cublaslt_probe(char *path, size_t size, Diag *d) { return rt_gpu_blas_probe(&rt_cuda_lt, path, size, d); }

static LoomStatus cuda_gemm(LoomContext *ctx, int index, const RtGemm *g, Diag *d) {
  return rt_gpu_gemm(ctx, &rt_cuda_lt, index, g, d);
}

static void cuda_linalg_close(LoomContext *ctx) { rt_gpu_libs_close(ctx, &rt_cuda_lt); }

const RtLinalg rt_cuda_linalg = {
    .library = "cuBLASLt (the CUDA toolkit's libcublas, or pip install nvidia-cublas-cu13)",
    .gemm = cuda_gemm,
    .decompose = rt_cuda_decompose, /* cuSOLVER (cuda_solver.c) */
    .fft = rt_cuda_fft,
    .close = cuda_linalg_close,
};
