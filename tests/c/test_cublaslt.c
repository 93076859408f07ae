/* test_cublaslt.c: matrix products on CUDA devices through cuBLASLt (runtime/cuda/cuda_blas.c); the
 * loading of cuFFT (runtime/cuda/cuda_fft.c; its transforms are tested from Python, tests/python/test_fft.py).
 *
 * --lib (ctest test_cublaslt_lib, no GPU needed): the constants cuda_blas.h passes equal the toolkit
 * headers' (checked at compile time where cublasLt.h is on the include path); cuBLASLt loads and every
 * function loom uses resolves (skipped, exit 77, when no libcublasLt is installed); a library that is
 * not cuBLASLt (LOOM_CUBLASLT=libm.so.6) is refused with a message naming the missing function.
 * Without --lib: products on CUDA device 0 against float64 references (linalg_check.h's cases over
 * matmul_ref.h), exit 77 without a GPU: float64, float32 (TF32 off, then on), float16 and bfloat16, complex128
 * and complex64 (CUDA_C_64F / C_32F, also with a real a; lc_complex_case); 1-d, 2-d, batched (strided batch)
 * and broadcast batch operands; transposed operands (op T, no copy); the fused epilogues (bias,
 * ReLU, bias + ReLU, alpha scaling, + c) as one library call; a user stream; K = 1 and one-row products;
 * the same cases with every algorithm chosen by timing (LOOM_BLAS_AUTOTUNE=all: the heuristic's top
 * candidates run on the real library and events; runtime/gpu/gpu_blas.c), still right, and counted.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "tests/c/matmul_ref.h"
#include "tests/c/linalg_check.h"

#if defined(__has_include)
#if __has_include(<cublasLt.h>)
#include <cublasLt.h>
#define HAVE_CUBLASLT_H 1
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(LT_R_32F, CUDA_R_32F) && SAME(LT_R_64F, CUDA_R_64F) && SAME(LT_R_16F, CUDA_R_16F) && SAME(LT_R_16BF, CUDA_R_16BF) &&
                   SAME(LT_C_32F, CUDA_C_32F) && SAME(LT_C_64F, CUDA_C_64F),
               "cudaDataType values");
_Static_assert(SAME(LT_COMPUTE_32F, CUBLAS_COMPUTE_32F) && SAME(LT_COMPUTE_64F, CUBLAS_COMPUTE_64F) &&
                   SAME(LT_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_TF32),
               "cublasComputeType_t values");
_Static_assert(SAME(LT_OP_N, CUBLAS_OP_N) && SAME(LT_OP_T, CUBLAS_OP_T), "cublasOperation_t values");
_Static_assert(SAME(LT_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSA) && SAME(LT_DESC_TRANSB, CUBLASLT_MATMUL_DESC_TRANSB) &&
                   SAME(LT_DESC_EPILOGUE, CUBLASLT_MATMUL_DESC_EPILOGUE) &&
                   SAME(LT_DESC_BIAS_POINTER, CUBLASLT_MATMUL_DESC_BIAS_POINTER),
               "cublasLtMatmulDescAttributes_t values");
_Static_assert(SAME(LT_LAYOUT_BATCH_COUNT, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) &&
                   SAME(LT_LAYOUT_STRIDED_BATCH_OFFSET, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET),
               "cublasLtMatrixLayoutAttribute_t values");
_Static_assert(SAME(LT_PREF_MAX_WORKSPACE_BYTES, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) &&
                   SAME(LT_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES) &&
                   SAME(LT_PREF_MIN_ALIGNMENT_B_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES) &&
                   SAME(LT_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES) &&
                   SAME(LT_PREF_MIN_ALIGNMENT_D_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES),
               "preference values");
_Static_assert(SAME(LT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_DEFAULT) && SAME(LT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU) &&
                   SAME(LT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_BIAS) && SAME(LT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS) &&
                   SAME(LT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU) && SAME(LT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_GELU_BIAS),
               "cublasLtEpilogue_t values");
_Static_assert(SAME(LT_STATUS_ALLOC_FAILED, CUBLAS_STATUS_ALLOC_FAILED) &&
                   SAME(LT_STATUS_NOT_SUPPORTED, CUBLAS_STATUS_NOT_SUPPORTED),
               "cublasStatus_t values");
_Static_assert(sizeof(cublasLtMatmulAlgo_t) == 64 && sizeof(cublasLtMatmulHeuristicResult_t) == 96,
               "the algorithm and heuristic result sizes cuda_blas.c declares");
#endif
#endif

static int test_lib(void) {
#ifdef HAVE_CUBLASLT_H
  printf("test_cublaslt --lib: constants checked against cublasLt.h\n");
#endif
  /* a library that is not cuBLASLt is refused by name */
  setenv("LOOM_CUBLASLT", "libm.so.6", 1);
  char path[600] = "";
  Diag d = {.status = LOOM_OK};
  LoomStatus st = rt_cublaslt_probe(path, sizeof path, &d);
  CHECK(st == LOOM_ERR_UNSUPPORTED && strstr(d.msg, "libm.so.6") && strstr(d.msg, "cublasLtCreate"),
        "a library without cuBLASLt is refused: %d %s", (int)st, d.msg);
  unsetenv("LOOM_CUBLASLT");
  d = (Diag){.status = LOOM_OK};
  st = rt_cublaslt_probe(path, sizeof path, &d);
  if (st != LOOM_OK) {
    CHECK(st == LOOM_ERR_UNSUPPORTED && strstr(d.msg, "cuBLASLt") && strstr(d.msg, "LOOM_CUBLASLT"),
          "the missing library's message says what to install: %s", d.msg);
    printf("test_cublaslt --lib: no libcublasLt here (%s): skipped\n", d.msg);
    return tc_failed ? 1 : 77;
  }
  int nsym = 0;
  while (rt_cublaslt_symbols[nsym]) nsym++;
  printf("test_cublaslt --lib: %s, %d functions resolved\n", path, nsym);
  CHECK(strstr(path, "cublasLt") != NULL, "path %s", path);
  d = (Diag){.status = LOOM_OK};
  if (rt_cufft_probe(path, sizeof path, &d) == LOOM_OK) printf("test_cublaslt --lib: cuFFT %s\n", path);
  else CHECK(strstr(d.msg, "cuFFT") && strstr(d.msg, "LOOM_CUFFT"), "cuFFT's absence is explained: %s", d.msg);
  return -1;
}

/* ---- products on the GPU --------------------------------------------------------------------------- */
static const LcCase cases[] = {
    {"2-d", 2, 2, {37, 45}, {45, 29}, false, false, false, false, 1},
    {"b transposed", 2, 2, {33, 64}, {64, 40}, true, false, false, false, 1},
    {"vector @ matrix", 1, 2, {45}, {45, 17}, false, false, false, false, 1},
    {"matrix @ vector", 2, 1, {17, 45}, {45}, false, false, false, false, 1},
    {"K = 1", 2, 2, {8, 1}, {1, 9}, false, false, false, false, 1},
    {"batched", 3, 3, {4, 19, 23}, {4, 23, 11}, false, false, false, false, 1},
    {"broadcast batch", 3, 2, {3, 16, 24}, {24, 8}, false, false, false, false, 1},
    {"broadcast b batch", 2, 3, {16, 24}, {3, 24, 8}, false, false, false, false, 1},
    {"4-d batches", 4, 4, {2, 3, 8, 12}, {2, 1, 12, 5}, true, false, false, false, 1},
    {"bias", 2, 2, {64, 48}, {48, 32}, false, true, false, false, 1},
    {"relu", 2, 2, {64, 48}, {48, 32}, false, false, true, false, 1},
    {"bias relu batched", 3, 2, {2, 64, 48}, {48, 32}, false, true, true, false, 1},
    {"alpha", 2, 2, {20, 30}, {30, 10}, false, false, false, false, 0.5},
    {"plus c", 2, 2, {20, 30}, {30, 10}, false, false, false, true, 1},
};

/* complex products: no epilogue; batches broadcast only where one side has none (lc_complex_case) */
static const LcCase complex_cases[] = {
    {"2-d", 2, 2, {7, 5}, {5, 6}, false, false, false, false, 1},
    {"b transposed", 2, 2, {6, 9}, {9, 4}, true, false, false, false, 1},
    {"vector @ matrix", 1, 2, {5}, {5, 3}, false, false, false, false, 1},
    {"matrix @ vector", 2, 1, {3, 5}, {5}, false, false, false, false, 1},
    {"batched", 3, 3, {3, 4, 5}, {3, 5, 2}, false, false, false, false, 1},
    {"broadcast batch", 3, 2, {2, 4, 6}, {6, 3}, false, false, false, false, 1},
    {"broadcast b batch, b transposed", 2, 3, {4, 6}, {2, 6, 3}, true, false, false, false, 1},
};

static const LcTarget gpu = {LOOM_DEVICE_CUDA, "the GPU", false, NULL}, gpu_tf32 = {LOOM_DEVICE_CUDA, "the GPU", true, NULL};

static void test_stream(void) {
  LoomStream *s = NULL;
  if (!CHECK_OK(loom_stream_create(tc_ctx, LOOM_DEVICE_CUDA, 0, &s))) return;
  CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_CUDA, 0, s));
  LcCase c = {"on a user stream", 2, 2, {128, 96}, {96, 64}, false, true, true, false, 1};
  lc_matmul_case(&c, LOOM_FLOAT32, &gpu);
  CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_CUDA, 0, NULL));
  loom_stream_destroy(tc_ctx, s);
}

/* Every case's algorithm chosen by timing, in a context of its own (the mode is read with the state). */
static void test_tuned(void) {
  setenv("LOOM_BLAS_AUTOTUNE", "all", 1);
  LoomContext *ctx = NULL, *saved = tc_ctx;
  if (!CHECK(loom_context_create(&ctx) == LOOM_OK, "a context")) return;
  tc_ctx = ctx;
  LoomDType ts[3] = {LOOM_FLOAT32, LOOM_FLOAT16, LOOM_FLOAT64};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int ti = 0; ti < 3; ti++) lc_matmul_case(&cases[i], ts[ti], &gpu);
  LcCase big = {"tuned 512 x 768 x 640 bias relu", 2, 2, {512, 768}, {768, 640}, false, true, true, false, 1};
  lc_matmul_case(&big, LOOM_FLOAT16, &gpu);
  unsigned long long problems = 0, runs = 0, hits = 0;
  rt_gpu_blas_tune_stats(tc_ctx, &rt_cuda_lt, &problems, &runs, &hits);
  printf("test_cublaslt: %llu products chosen by timing (%llu timed runs), %llu from the disk cache\n", problems,
         runs, hits);
  CHECK(problems + hits > 0, "products were timed or found on disk: %llu timed, %llu from disk", problems, hits);
  tc_ctx = saved;
  loom_context_destroy(ctx);
  unsetenv("LOOM_BLAS_AUTOTUNE");
}

static void test_gpu(void) {
  LoomDType ts[4] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_FLOAT16, LOOM_BFLOAT16};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int ti = 0; ti < 4; ti++) lc_matmul_case(&cases[i], ts[ti], &gpu);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) lc_matmul_case(&cases[i], LOOM_FLOAT32, &gpu_tf32);
  LoomDType cts[2] = {LOOM_COMPLEX128, LOOM_COMPLEX64};
  for (int ti = 0; ti < 2; ti++)
    for (size_t i = 0; i < sizeof complex_cases / sizeof complex_cases[0]; i++)
      for (int real_a = 0; real_a < 2; real_a++) lc_complex_case(&complex_cases[i], cts[ti], real_a, &gpu);
  test_stream();
  test_tuned();
}

int main(int argc, char **argv) { return lc_main(argc, argv, "test_cublaslt", test_lib, LOOM_DEVICE_CUDA, test_gpu); }
