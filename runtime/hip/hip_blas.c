/* hip_blas.c: the AMD device's vendor math library (runtime/linalg.h's RtLinalg): hipBLASLt's names, enums
 * and structs for the GPU layer's matrix products (runtime/gpu/gpu_blas.c, which has the approach; the
 * twin of runtime/cuda/cuda_blas.c), loaded at run time like the HIP runtime; hipFFT (hip_fft.c) keeps its
 * state in a slot of it.
 *
 * Loading (vendor_lib.h): the file named by LOOM_HIPBLASLT, then libhipblaslt.so.1 / .0 by soname, then
 * $ROCM_PATH/lib and /opt/rocm/lib. No library: every product on an AMD device is LOOM_ERR_UNSUPPORTED
 * naming what to install (Debian 12 packages no hipBLASLt: ROCm's own packages have it). float32
 * computes in HIPBLAS_COMPUTE_32F always (AMD has no TF32: loom_set_allow_tf32 changes nothing here);
 * float64 runs where the installed hipBLASLt has kernels for it (else "no algorithm"); so do complex64 and
 * complex128 (HIP_C_32F / HIP_C_64F in COMPUTE_32F / 64F with complex scales, as on CUDA), which
 * hipBLASLt's documented type list of ROCm 6 and 7 lacks: there a complex product is "no algorithm"
 * (LOOM_ERR_UNSUPPORTED) until a rocBLAS binding (rocblas_cgemm_strided_batched) exists. The enum values are
 * hipblaslt.h's and hipblas-common.h's of ROCm 6 (hip_libs.h; no ROCm header is needed to build).
 */
#include <stddef.h>

#include "runtime/hip/hip_libs.h"
#include "runtime/hip/hip_rt.h"

typedef struct LtAlgo { /* hipblasLtMatmulAlgo_t */
  uint8_t data[16];
  size_t max_workspace_bytes;
} LtAlgo;
typedef struct LtHeuristic { /* hipblasLtMatmulHeuristicResult_t */
  LtAlgo algo;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} LtHeuristic;
_Static_assert(sizeof(LtAlgo) <= GPU_LT_ALGO_MAX && sizeof(LtHeuristic) <= GPU_LT_HEURISTIC_MAX, "gpu_libs.h's bounds");

const char *const rt_hipblaslt_symbols[] = {
#define LT_NAME(field, suffix, args) "hipblasLt" suffix,
    GPU_LT_FUNCS(LT_NAME)
#undef LT_NAME
        NULL};

static const char *const sonames[] = {"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so", NULL};
static const char *const dirs[] = {"$ROCM_PATH/lib", "/opt/rocm/lib", NULL};

const GpuBlasVendor rt_hip_lt = {
    .lib = {.what = "hipBLASLt", .purpose = "matrix products on AMD devices", .install = "install ROCm's hipblaslt package",
            .env = "LOOM_HIPBLASLT", .sonames = sonames, .dirs = dirs, .symbols = rt_hipblaslt_symbols,
            .too_old = "ROCm 6 or later needed"},
    .prefix = "hipblasLt",
    .device = "AMD",
    .driver = rt_hip_driver,
    .algo_size = sizeof(LtAlgo),
    .heuristic_size = sizeof(LtHeuristic), .heuristic_workspace = offsetof(LtHeuristic, workspace),
    .r_16f = HL_R_16F, .r_16bf = HL_R_16BF, .r_32f = HL_R_32F, .r_64f = HL_R_64F, .c_32f = HL_C_32F, .c_64f = HL_C_64F,
    .compute_32f = HL_COMPUTE_32F, .compute_32f_tf32 = -1, .compute_64f = HL_COMPUTE_64F,
    .op_n = HL_OP_N, .op_t = HL_OP_T,
    .desc_transa = HL_DESC_TRANSA, .desc_transb = HL_DESC_TRANSB, .desc_epilogue = HL_DESC_EPILOGUE,
    .desc_bias_pointer = HL_DESC_BIAS_POINTER,
    .layout_batch_count = HL_LAYOUT_BATCH_COUNT, .layout_batch_offset = HL_LAYOUT_STRIDED_BATCH_OFFSET,
    .pref_max_workspace = HL_PREF_MAX_WORKSPACE_BYTES, .pref_min_alignment_a = -1,
    .epilogue_default = HL_EPILOGUE_DEFAULT, .epilogue_relu = HL_EPILOGUE_RELU, .epilogue_gelu = HL_EPILOGUE_GELU,
    .epilogue_bias = HL_EPILOGUE_BIAS,
    .status_alloc_failed = HL_STATUS_ALLOC_FAILED, .status_not_supported = HL_STATUS_NOT_SUPPORTED,
    .slot_close = {[GPU_LIB_FFT] = rt_hip_fft_close},
};

LoomStatus rt_hipblaslt_probe(char *path, size_t size, Diag *d) { return rt_gpu_blas_probe(&rt_hip_lt, path, size, d); }

static LoomStatus hip_gemm(LoomContext *ctx, int index, const RtGemm *g, Diag *d) {
  return rt_gpu_gemm(ctx, &rt_hip_lt, index, g, d);
}

static void hip_linalg_close(LoomContext *ctx) { rt_gpu_libs_close(ctx, &rt_hip_lt); }

const RtLinalg rt_hip_linalg = {
    .library = "hipBLASLt and hipFFT (ROCm's hipblaslt and hipfft packages)",
    .gemm = hip_gemm,
    .decompose = NULL, /* hipSOLVER: not yet (loom.linalg runs decompositions of AMD arrays on the host) */
    .fft = rt_hip_fft,
    .close = hip_linalg_close,
};
