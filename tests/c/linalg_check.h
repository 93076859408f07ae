/* linalg_check.h: what the vendor-library tests share (test_cublaslt.c, test_cusolver.c, test_hip_libs.c):
 * arrays moved to and from a device, the main of a test with a --lib part and a device part, and (when
 * matmul_ref.h is included first) the fused matmul cases: loom_matmul plus alpha, bias, c and ReLU
 * evaluated on a device and checked element by element against NumPy's matmul computed in float64
 * (matmul_ref.h), with the epilogue applied here; complex64 / complex128 cases (lc_complex_case) against a
 * double complex reference. */
#ifndef LOOM_TEST_LINALG_CHECK_H
#define LOOM_TEST_LINALG_CHECK_H

#include <complex.h>

#include "tests/c/test_common.h"

/* A copy of host array h on device 0 of kind. */
__attribute__((unused)) static LoomArray lc_to_device(const LoomArray *h, LoomDeviceKind kind) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = kind;
  d.device_index = 0;
  CHECK_OK(loom_array_alloc(tc_ctx, &d));
  CHECK_OK(loom_array_copy(tc_ctx, &d, h));
  return d;
}

/* A host copy of device array dv (tc_free it). */
__attribute__((unused)) static LoomArray lc_to_host(const LoomArray *dv) {
  LoomArray h = tc_new(dv->dtype, dv->ndim, dv->shape);
  CHECK_OK(loom_array_copy(tc_ctx, &h, dv));
  return h;
}

/* The main of a vendor-library test. "--lib": test_lib's part, which needs no device: it returns an exit
 * code to end with (77: skipped) or -1 to end with the checks' counts. Otherwise the device part:
 * skipped (77) when device kind has no device 0, else test_device runs. */
__attribute__((unused)) static int lc_main(int argc, char **argv, const char *name, int (*test_lib)(void),
                                           LoomDeviceKind kind, void (*test_device)(void)) {
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
  loom_device_count(tc_ctx, kind, &ndev);
  if (ndev == 0) {
    printf("%s: skipped (no %s driver or device)\n", name, kind == LOOM_DEVICE_HIP ? "HIP" : "CUDA");
    loom_context_destroy(tc_ctx);
    return 77;
  }
  test_device();
  return tc_finish();
}

#ifdef LOOM_TEST_MATMUL_REF_H
/* out = act(alpha * a @ b (b stored transposed when bt) + bias + c), a of rank and_ and shape as, b of
 * rank bnd and (logical) shape bs. */
typedef struct LcCase {
  const char *what;
  int and_, bnd;
  int64_t as[4], bs[4];
  bool bt, bias, relu, c;
  double alpha;
} LcCase;

/* Where the cases run: device 0 of `device` ("the GPU", "the AMD device" in messages), with TF32 allowed
 * or not; calls (optional) counts the library's products (a test double's counter). */
typedef struct LcTarget {
  LoomDeviceKind device;
  const char *where;
  bool tf32;
  int (*calls)(void);
} LcTarget;

/* These cases check the library call's operands: matrix-vector forms (a 1-d side) are a fused reduction by
 * default (frontend/matmul.c) and reach the library under LOOM_MATMUL_VECTOR_LIBRARY=1, set around each case. */
static void lc_vector_library(bool on) {
  if (on) setenv("LOOM_MATMUL_VECTOR_LIBRARY", "1", 1);
  else unsetenv("LOOM_MATMUL_VECTOR_LIBRARY");
}

/* One case in dtype t on tg: one library call, the result on the device, an epilogue without c fused into
 * the call (no kernel), every element within the dtype's rounding of the float64 reference. */
static void lc_matmul_case(const LcCase *cs, LoomDType t, const LcTarget *tg) {
  lc_vector_library(true);
  char what[160];
  snprintf(what, sizeof what, "%s %s%s", cs->what, loom_dtype_name(t), tg->tf32 ? " tf32" : "");
  int64_t bst[4];
  memcpy(bst, cs->bs, sizeof bst);
  if (cs->bt) { /* b stored transposed: [..., n, k] */
    int64_t x = bst[cs->bnd - 1];
    bst[cs->bnd - 1] = bst[cs->bnd - 2], bst[cs->bnd - 2] = x;
  }
  LoomArray ha = tc_new(t, cs->and_, cs->as), hbs = tc_new(t, cs->bnd, bst), hb = tc_new(t, cs->bnd, cs->bs);
  fill(&ha, false), fill(&hbs, false);
  for (int64_t i = 0, nb = tc_numel(cs->bnd, cs->bs); i < nb; i++) { /* b in logical layout for the reference */
    int64_t n = cs->bs[cs->bnd - 1], k = cs->bs[cs->bnd - 2];
    int64_t j = i % n, q = (i / n) % k, rest = i / (n * k);
    tc_set_f(&hb, i, cs->bt ? tc_get_f(&hbs, (rest * n + j) * k + q) : tc_get_f(&hbs, i));
  }
  Ref ref = reference(&ha, &hb, t);
  int64_t n = ref.shape[ref.nd - 1];
  LoomArray hbias = tc_new1(t, n), hc = tc_new(t, ref.nd, ref.shape);
  fill(&hbias, false), fill(&hc, false);
  LoomArray da = lc_to_device(&ha, tg->device), db = lc_to_device(&hbs, tg->device),
            dbias = lc_to_device(&hbias, tg->device), dc = lc_to_device(&hc, tg->device);
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
  int old = loom_set_allow_tf32(tc_ctx, tg->tf32);
  LoomStats s0, s1;
  loom_get_stats(tc_ctx, &s0);
  int calls0 = tg->calls ? tg->calls() : 0;
  LoomArray out = {0};
  if (CHECK(loom_eval(g, 1, &r, &out) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    loom_get_stats(tc_ctx, &s1);
    CHECK(s1.library_calls > s0.library_calls, "%s: a library call", what);
    if (tg->calls) CHECK(tg->calls() > calls0, "%s: the library was called", what);
    CHECK(out.device == tg->device, "%s: the result stays on %s", what, tg->where);
    if (!cs->c && (cs->bias || cs->relu || cs->alpha != 1))
      CHECK(s1.last_eval_kernels == 0, "%s: the epilogue is fused into the call (%d kernels)", what,
            (int)s1.last_eval_kernels);
    LoomArray h = lc_to_host(&out);
    int64_t total = tc_numel(h.ndim, h.shape), bad = 0;
    CHECK(total == tc_numel(ref.nd, ref.shape), "%s: %lld elements", what, (long long)total);
    double tol = t == LOOM_FLOAT32 && tg->tf32 ? 2e-3 : tol_of(t);
    for (int64_t i = 0; i < total && bad < 3; i++) {
      double want = cs->alpha * ref.val[i];
      if (cs->bias) want += tc_get_f(&hbias, i % n);
      if (cs->c) want += tc_get_f(&hc, i);
      if (cs->relu && want < 0) want = 0;
      double got = tc_get_f(&h, i);
      bool ok = fabs(got - want) <= tol * (fabs(cs->alpha) * ref.mag[i] + fabs(want) + 2) * 4;
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
  lc_vector_library(false);
}

/* A complex case (complex64 or complex128; no epilogue: complex products take none, passes/calls.c) on
 * tg, plus a real operand of the other kind (float32 a times complex b promotes as in NumPy): one
 * library call, the result on the device, every element within the dtype's rounding of a double complex
 * reference computed here (b stored transposed when cs->bt: op T, the plain transpose). Values are
 * small integers plus i times others, so the reference is exact. */
static void lc_complex_case(const LcCase *cs, LoomDType t, bool real_a, const LcTarget *tg) {
  lc_vector_library(true);
  char what[160];
  snprintf(what, sizeof what, "%s %s%s", cs->what, loom_dtype_name(t), real_a ? " (float a)" : "");
  bool c64 = t == LOOM_COMPLEX64;
  LoomDType at = real_a ? (c64 ? LOOM_FLOAT32 : LOOM_FLOAT64) : t;
  int64_t bst[4];
  memcpy(bst, cs->bs, sizeof bst);
  if (cs->bt) {
    int64_t x = bst[cs->bnd - 1];
    bst[cs->bnd - 1] = bst[cs->bnd - 2], bst[cs->bnd - 2] = x;
  }
  LoomArray ha = tc_new(at, cs->and_, cs->as), hb = tc_new(t, cs->bnd, bst);
  int64_t na = tc_numel(cs->and_, cs->as), nbv = tc_numel(cs->bnd, bst);
  double complex *va = malloc(sizeof *va * (size_t)(na + 1)), *vb = malloc(sizeof *vb * (size_t)(nbv + 1));
  for (int64_t i = 0; i < na; i++) { /* element i of a, stored in its dtype */
    double re = (double)((i * 7 + 3) % 9) - 4, im = real_a ? 0 : (double)((i * 5 + 1) % 7) - 3;
    va[i] = re + I * im;
    if (real_a && c64) ((float *)ha.data)[i] = (float)re;
    else if (real_a) ((double *)ha.data)[i] = re;
    else if (c64) ((float *)ha.data)[2 * i] = (float)re, ((float *)ha.data)[2 * i + 1] = (float)im;
    else ((double *)ha.data)[2 * i] = re, ((double *)ha.data)[2 * i + 1] = im;
  }
  for (int64_t i = 0; i < nbv; i++) {
    double re = (double)((i * 3 + 2) % 7) - 3, im = (double)((i * 11 + 4) % 9) - 4;
    vb[i] = re + I * im;
    if (c64) ((float *)hb.data)[2 * i] = (float)re, ((float *)hb.data)[2 * i + 1] = (float)im;
    else ((double *)hb.data)[2 * i] = re, ((double *)hb.data)[2 * i + 1] = im;
  }
  LoomArray da = lc_to_device(&ha, tg->device), db = lc_to_device(&hb, tg->device);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode xa, xb, p;
  loom_input(g, &da, &xa), loom_input(g, &db, &xb);
  if (cs->bt) {
    int32_t perm[4] = {0, 1, 2, 3};
    perm[cs->bnd - 1] = cs->bnd - 2, perm[cs->bnd - 2] = cs->bnd - 1;
    loom_permute(g, xb, perm, &xb);
  }
  CHECK_OK(loom_matmul(g, xa, xb, &p));
  LoomStats s0, s1;
  loom_get_stats(tc_ctx, &s0);
  int calls0 = tg->calls ? tg->calls() : 0;
  LoomArray out = {0};
  if (CHECK(loom_eval(g, 1, &p, &out) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    loom_get_stats(tc_ctx, &s1);
    CHECK(s1.library_calls > s0.library_calls, "%s: a library call", what);
    if (tg->calls) CHECK(tg->calls() > calls0, "%s: the library was called", what);
    CHECK(out.device == tg->device && out.dtype == t, "%s: a %s result on %s", what, loom_dtype_name(t), tg->where);
    LoomArray h = lc_to_host(&out);
    /* the reference over the broadcast batch: a [..., M, K] (1-d: [1, K]), b [..., K, N] (1-d: [K, 1]) */
    int64_t m = cs->and_ == 1 ? 1 : cs->as[cs->and_ - 2], k = cs->as[cs->and_ - 1];
    int64_t n = cs->bnd == 1 ? 1 : cs->bs[cs->bnd - 1], total = tc_numel(h.ndim, h.shape), bad = 0;
    int64_t nba = cs->and_ > 2 ? na / (m * k) : 1, nbb = cs->bnd > 2 ? nbv / (k * n) : 1;
    double tol = c64 ? 2e-6 : 1e-14;
    for (int64_t i = 0; i < total && bad < 3; i++) {
      int64_t j = i % n, r = (i / n) % m, batch = i / (m * n);
      double complex want = 0, mag = 0;
      for (int64_t q = 0; q < k; q++) {
        double complex x = va[(batch % nba) * m * k + r * k + q];
        int64_t bi = cs->bt ? (batch % nbb) * k * n + j * k + q : (batch % nbb) * k * n + q * n + j;
        want += x * vb[bi], mag += cabs(x) * cabs(vb[bi]);
      }
      double complex got = c64 ? ((float *)h.data)[2 * i] + I * ((float *)h.data)[2 * i + 1]
                               : ((double *)h.data)[2 * i] + I * ((double *)h.data)[2 * i + 1];
      bool ok = cabs(got - want) <= tol * (creal(mag) + 1) * 4;
      if (!ok) bad++;
      CHECK(ok, "%s: element %lld is %g%+gj, want %g%+gj", what, (long long)i, creal(got), cimag(got), creal(want),
            cimag(want));
    }
    tc_free(&h);
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  loom_array_free(tc_ctx, &da), loom_array_free(tc_ctx, &db);
  free(va), free(vb);
  tc_free(&ha), tc_free(&hb);
  lc_vector_library(false);
}
#endif /* LOOM_TEST_MATMUL_REF_H */

#endif /* LOOM_TEST_LINALG_CHECK_H */
