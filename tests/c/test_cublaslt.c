/* test_cublaslt.c: matrix products on CUDA devices through cuBLASLt (runtime/cuda/cuda_blas.c); the
 * loading of cuFFT (runtime/cuda/cuda_fft.c; its transforms are tested from Python, tests/python/test_fft.py).
 *
 * --lib (ctest test_cublaslt_lib, no GPU needed): the constants cuda_blas.h passes equal the toolkit
 * headers' (checked at compile time where cublasLt.h is on the include path); cuBLASLt loads and every
 * function loom uses resolves (skipped, exit 77, when no libcublasLt is installed); a library that is
 * not cuBLASLt (LOOM_CUBLASLT=libm.so.6) is refused with a message naming the missing function.
 * Without --lib: products on CUDA device 0 against float64 references (matmul_ref.h), exit 77 without a
 * GPU: float64, float32 (TF32 off, then on), float16 and bfloat16; 1-d, 2-d, batched (strided batch)
 * and broadcast batch operands; transposed operands (op T, no copy); the fused epilogues (bias,
 * ReLU, bias + ReLU, alpha scaling, + c) as one library call; a user stream; K = 1 and one-row products.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "tests/c/matmul_ref.h"

#if defined(__has_include)
#if __has_include(<cublasLt.h>)
#include <cublasLt.h>
#define HAVE_CUBLASLT_H 1
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(LT_R_32F, CUDA_R_32F) && SAME(LT_R_64F, CUDA_R_64F) && SAME(LT_R_16F, CUDA_R_16F) && SAME(LT_R_16BF, CUDA_R_16BF),
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
static LoomArray to_device(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = LOOM_DEVICE_CUDA;
  d.device_index = 0;
  CHECK_OK(loom_array_alloc(tc_ctx, &d));
  CHECK_OK(loom_array_copy(tc_ctx, &d, h));
  return d;
}

static LoomArray to_host(const LoomArray *dv) {
  LoomArray h = tc_new(dv->dtype, dv->ndim, dv->shape);
  CHECK_OK(loom_array_copy(tc_ctx, &h, dv));
  return h;
}

static double tol_for(LoomDType t, bool tf32) { return t == LOOM_FLOAT32 && tf32 ? 2e-3 : tol_of(t); }

/* out = act(alpha * a @ b (b transposed in place when bt) + bias + c) on the GPU against the reference. */
typedef struct Case {
  const char *what;
  int and_, bnd;
  int64_t as[4], bs[4];
  bool bt, bias, relu, c;
  double alpha;
} Case;

static void run_case(const Case *cs, LoomDType t, bool tf32) {
  char what[160];
  snprintf(what, sizeof what, "%s %s%s", cs->what, loom_dtype_name(t), tf32 ? " tf32" : "");
  int64_t bst[4];
  memcpy(bst, cs->bs, sizeof bst);
  if (cs->bt) { /* b stored transposed: [..., n, k] */
    int64_t x = bst[cs->bnd - 1];
    bst[cs->bnd - 1] = bst[cs->bnd - 2], bst[cs->bnd - 2] = x;
  }
  LoomArray ha = tc_new(t, cs->and_, cs->as), hbs = tc_new(t, cs->bnd, bst);
  fill(&ha, false), fill(&hbs, false);
  LoomArray hb = tc_new(t, cs->bnd, cs->bs); /* b in logical layout for the reference */
  for (int64_t i = 0, nb = tc_numel(cs->bnd, cs->bs); i < nb; i++) {
    int64_t n = cs->bs[cs->bnd - 1], k = cs->bs[cs->bnd - 2];
    int64_t j = i % n, q = (i / n) % k, rest = i / (n * k);
    tc_set_f(&hb, i, cs->bt ? tc_get_f(&hbs, (rest * n + j) * k + q) : tc_get_f(&hbs, i));
  }
  Ref ref = reference(&ha, &hb, t);
  int64_t n = ref.shape[ref.nd - 1];
  LoomArray hbias = tc_new1(t, n), hc = tc_new(t, ref.nd, ref.shape);
  fill(&hbias, false), fill(&hc, false);
  LoomArray da = to_device(&ha), db = to_device(&hbs), dbias = to_device(&hbias), dc = to_device(&hc);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode na, nb, nbias, nc, p;
  loom_input(g, &da, &na), loom_input(g, &db, &nb), loom_input(g, &dbias, &nbias), loom_input(g, &dc, &nc);
  if (cs->bt) {
    int32_t perm[4] = {0, 1, 2, 3};
    perm[cs->bnd - 1] = cs->bnd - 2, perm[cs->bnd - 2] = cs->bnd - 1;
    loom_permute(g, nb, perm, &nb);
  }
  CHECK_OK(loom_matmul(g, na, nb, &p));
  LoomNode r = p;
  if (cs->alpha != 1) {
    LoomNode s;
    loom_weak_float(g, cs->alpha, &s);
    loom_binary(g, LOOM_OP_MUL, r, s, &r);
  }
  if (cs->bias) loom_binary(g, LOOM_OP_ADD, r, nbias, &r);
  if (cs->c) loom_binary(g, LOOM_OP_ADD, r, nc, &r);
  if (cs->relu) {
    LoomNode z;
    loom_weak_float(g, 0, &z);
    loom_binary(g, LOOM_OP_MAXIMUM, r, z, &r);
  }
  int old = loom_set_allow_tf32(tc_ctx, tf32);
  LoomStats s0, s1;
  loom_get_stats(tc_ctx, &s0);
  LoomArray out = {0};
  if (CHECK(loom_eval(g, 1, &r, &out) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    loom_get_stats(tc_ctx, &s1);
    CHECK(s1.library_calls > s0.library_calls, "%s: a library call", what);
    CHECK(out.device == LOOM_DEVICE_CUDA, "%s: the result stays on the GPU", what);
    if (!cs->c && (cs->bias || cs->relu || cs->alpha != 1))
      CHECK(s1.last_eval_kernels == 0, "%s: the epilogue is fused into the call (%d kernels)", what,
            (int)s1.last_eval_kernels);
    LoomArray h = to_host(&out);
    int64_t total = tc_numel(h.ndim, h.shape), bad = 0;
    for (int64_t i = 0; i < total && bad < 3; i++) {
      double want = cs->alpha * ref.val[i];
      if (cs->bias) want += tc_get_f(&hbias, i % n);
      if (cs->c) want += tc_get_f(&hc, i);
      if (cs->relu && want < 0) want = 0;
      double got = tc_get_f(&h, i), tol = tol_for(t, tf32) * (fabs(cs->alpha) * ref.mag[i] + fabs(want) + 2) * 4;
      bool ok = fabs(got - want) <= tol;
      if (!ok) bad++;
      CHECK(ok, "%s: element %lld is %.9g, want %.9g", what, (long long)i, got, want);
    }
    tc_free(&h);
    loom_array_free(tc_ctx, &out);
  }
  loom_set_allow_tf32(tc_ctx, old);
  loom_graph_destroy(g);
  loom_array_free(tc_ctx, &da), loom_array_free(tc_ctx, &db), loom_array_free(tc_ctx, &dbias), loom_array_free(tc_ctx, &dc);
  free_ref(&ref);
  tc_free(&ha), tc_free(&hb), tc_free(&hbs), tc_free(&hbias), tc_free(&hc);
}

static const Case cases[] = {
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

static void test_stream(void) {
  LoomStream *s = NULL;
  if (!CHECK_OK(loom_stream_create(tc_ctx, LOOM_DEVICE_CUDA, 0, &s))) return;
  CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_CUDA, 0, s));
  Case c = {"on a user stream", 2, 2, {128, 96}, {96, 64}, false, true, true, false, 1};
  run_case(&c, LOOM_FLOAT32, false);
  CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_CUDA, 0, NULL));
  loom_stream_destroy(tc_ctx, s);
}

int main(int argc, char **argv) {
  if (!tc_init()) return 1;
  if (argc == 2 && !strcmp(argv[1], "--lib")) {
    int rc = test_lib();
    if (rc >= 0) {
      loom_context_destroy(tc_ctx);
      return rc;
    }
    return tc_finish();
  }
  int32_t ndev = 0;
  loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev);
  if (ndev == 0) {
    printf("test_cublaslt: skipped (no CUDA driver or device)\n");
    loom_context_destroy(tc_ctx);
    return 77;
  }
  LoomDType ts[4] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_FLOAT16, LOOM_BFLOAT16};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int ti = 0; ti < 4; ti++) run_case(&cases[i], ts[ti], false);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], LOOM_FLOAT32, true);
  test_stream();
  return tc_finish();
}
