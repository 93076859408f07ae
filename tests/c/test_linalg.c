/* test_linalg.c: loom_linalg on the host (LAPACK) for complex matrices, empty problems and bad input,
 * checked against properties computed here in complex double (A v = w v, U S Vh = A, Q R = A with Q
 * unitary, A x = b) and against eigenvalues known in closed form. Real matrices: tests/python
 * (test_linalg.py, test_linalg_decomp.py, against NumPy). Skips (77) when the machine has no LAPACK.
 */
#include <complex.h>

#include "tests/c/test_common.h"

/* A column-major packed m x n matrix (batch 1) of dtype t with data from vals (row-major complex double
 * values), or zeros when vals is NULL. */
static LoomArray colmajor(LoomDType t, int64_t m, int64_t n, const double complex *vals) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = t;
  a.ndim = 2;
  a.shape[0] = m, a.shape[1] = n;
  a.strides[0] = 1, a.strides[1] = m > 0 ? m : 1;
  a.data = calloc((size_t)(m * n > 0 ? m * n : 1), loom_dtype_size(t));
  for (int64_t i = 0; vals && i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double complex v = vals[i * n + j];
      if (t == LOOM_COMPLEX64) ((float complex *)a.data)[j * m + i] = (float complex)v;
      else ((double complex *)a.data)[j * m + i] = v;
    }
  return a;
}

/* Element (i, j) of a loom_linalg result (column-major packed; vectors: j = 0). */
static double complex at(const LoomArray *a, int64_t i, int64_t j) {
  int64_t off = a->ndim == 1 ? i * a->strides[0] : i * a->strides[0] + j * a->strides[1];
  switch (a->dtype) {
  case LOOM_COMPLEX64: return ((const float complex *)a->data)[off];
  case LOOM_COMPLEX128: return ((const double complex *)a->data)[off];
  case LOOM_FLOAT32: return ((const float *)a->data)[off];
  default: return ((const double *)a->data)[off];
  }
}

static double tol(LoomDType t) { return t == LOOM_COMPLEX64 ? 1e-4 : 1e-10; }

static const double complex A32[6] = {1 + 2 * I, -1, 0.5 - I, 2, 3 * I, 1 + I}; /* 3 x 2 */

static void test_eigh(LoomDType t) {
  /* [[2, 1 - i], [1 + i, 3]]: trace 5, det 4, eigenvalues 1 and 4 */
  const double complex h[4] = {2, 1 - I, 1 + I, 3};
  LoomArray a = colmajor(t, 2, 2, h), out[2];
  if (!CHECK(loom_linalg(tc_ctx, LOOM_LINALG_EIGH, 0, 1, &a, 2, out) == LOOM_OK, "eigh %s: %s", loom_dtype_name(t),
             loom_last_error(tc_ctx))) {
    tc_free(&a);
    return;
  }
  CHECK(out[0].dtype == (t == LOOM_COMPLEX64 ? LOOM_FLOAT32 : LOOM_FLOAT64) && out[1].dtype == t,
        "eigh: eigenvalues real, eigenvectors %s", loom_dtype_name(t));
  CHECK(fabs(creal(at(&out[0], 0, 0)) - 1) < tol(t) && fabs(creal(at(&out[0], 1, 0)) - 4) < tol(t),
        "eigh: eigenvalues %g %g, want 1 4", creal(at(&out[0], 0, 0)), creal(at(&out[0], 1, 0)));
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 2; i++) { /* (A v)_i = w v_i */
      double complex av = h[i * 2] * at(&out[1], 0, k) + h[i * 2 + 1] * at(&out[1], 1, k);
      CHECK(cabs(av - at(&out[0], k, 0) * at(&out[1], i, k)) < 10 * tol(t), "eigh: A v = w v (vector %d)", k);
    }
  loom_array_free(tc_ctx, &out[0]);
  loom_array_free(tc_ctx, &out[1]);
  tc_free(&a);
}

static void test_svd_qr_solve(LoomDType t) {
  LoomArray a = colmajor(t, 3, 2, A32), out[3];
  if (CHECK(loom_linalg(tc_ctx, LOOM_LINALG_SVD, 0, 1, &a, 3, out) == LOOM_OK, "svd: %s", loom_last_error(tc_ctx))) {
    CHECK(out[0].dtype == (t == LOOM_COMPLEX64 ? LOOM_FLOAT32 : LOOM_FLOAT64), "svd: singular values are real");
    CHECK(creal(at(&out[0], 0, 0)) >= creal(at(&out[0], 1, 0)), "svd: descending");
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) {
        double complex v = 0;
        for (int k = 0; k < 2; k++) v += at(&out[1], i, k) * at(&out[0], k, 0) * at(&out[2], k, j);
        CHECK(cabs(v - A32[i * 2 + j]) < 10 * tol(t), "svd: U S Vh = A at (%d, %d)", i, j);
      }
    for (int i = 0; i < 3; i++) loom_array_free(tc_ctx, &out[i]);
  }
  if (CHECK(loom_linalg(tc_ctx, LOOM_LINALG_QR, LOOM_LINALG_COMPLETE, 1, &a, 2, out) == LOOM_OK, "qr: %s",
            loom_last_error(tc_ctx))) {
    const LoomArray *r = &out[0], *q = &out[1];
    CHECK(q->shape[0] == 3 && q->shape[1] == 3, "qr complete: Q is 3 x 3");
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double complex qq = 0, qr = 0;
        for (int k = 0; k < 3; k++) qq += conj(at(q, k, i)) * at(q, k, j);
        CHECK(cabs(qq - (i == j)) < 10 * tol(t), "qr: Q^H Q = I at (%d, %d)", i, j);
        if (j < 2) {
          for (int k = 0; k <= j && k < 3; k++) qr += at(q, i, k) * at(r, k, j); /* R upper triangular */
          CHECK(cabs(qr - A32[i * 2 + j]) < 10 * tol(t), "qr: Q R = A at (%d, %d)", i, j);
        }
      }
    loom_array_free(tc_ctx, &out[0]);
    loom_array_free(tc_ctx, &out[1]);
  }
  const double complex sq[4] = {2 + I, 1, -1, 3 - 2 * I}, rhs[2] = {1, I};
  LoomArray in[2] = {colmajor(t, 2, 2, sq), colmajor(t, 2, 1, rhs)};
  if (CHECK(loom_linalg(tc_ctx, LOOM_LINALG_SOLVE, 0, 2, in, 1, out) == LOOM_OK, "solve: %s", loom_last_error(tc_ctx))) {
    for (int i = 0; i < 2; i++)
      CHECK(cabs(sq[i * 2] * at(&out[0], 0, 0) + sq[i * 2 + 1] * at(&out[0], 1, 0) - rhs[i]) < 10 * tol(t),
            "solve: A x = b, row %d", i);
    loom_array_free(tc_ctx, &out[0]);
  }
  const double complex sing[4] = {1, I, 1, I};
  tc_free(&in[0]);
  in[0] = colmajor(t, 2, 2, sing);
  CHECK(loom_linalg(tc_ctx, LOOM_LINALG_SOLVE, 0, 2, in, 1, out) == LOOM_ERR_LINALG &&
            strstr(loom_last_error(tc_ctx), "Singular matrix"), "solve: a singular complex matrix is LinAlgError");
  tc_free(&in[0]);
  tc_free(&in[1]);
  tc_free(&a);
}

/* An empty problem's complete Q (QR) and U, Vh (SVD) are identities, as NumPy's. */
static void test_empty_complete(void) {
  LoomArray a = colmajor(LOOM_FLOAT64, 3, 0, NULL), out[3];
  if (CHECK(loom_linalg(tc_ctx, LOOM_LINALG_QR, LOOM_LINALG_COMPLETE, 1, &a, 2, out) == LOOM_OK, "qr 3x0: %s",
            loom_last_error(tc_ctx))) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) CHECK(at(&out[1], i, j) == (i == j), "qr 3x0: Q = I at (%d, %d)", i, j);
    loom_array_free(tc_ctx, &out[0]);
    loom_array_free(tc_ctx, &out[1]);
  }
  tc_free(&a);
  a = colmajor(LOOM_COMPLEX64, 0, 2, NULL);
  if (CHECK(loom_linalg(tc_ctx, LOOM_LINALG_SVD, LOOM_LINALG_COMPLETE, 1, &a, 3, out) == LOOM_OK, "svd 0x2: %s",
            loom_last_error(tc_ctx))) {
    CHECK(out[0].shape[0] == 0 && out[1].shape[0] == 0 && out[2].shape[0] == 2 && out[2].shape[1] == 2,
          "svd 0x2: s (0), U (0 x 0), Vh (2 x 2)");
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) CHECK(at(&out[2], i, j) == (i == j), "svd 0x2: Vh = I at (%d, %d)", i, j);
    for (int i = 0; i < 3; i++) loom_array_free(tc_ctx, &out[i]);
  }
  tc_free(&a);
}

static void test_errors(void) {
  LoomArray a = colmajor(LOOM_FLOAT64, 2, 2, NULL), out[2];
  a.dtype = LOOM_INT64;
  CHECK(loom_linalg(tc_ctx, LOOM_LINALG_EIGH, 0, 1, &a, 2, out) == LOOM_ERR_DTYPE &&
            strstr(loom_last_error(tc_ctx), "complex128"), "eigh of int64: a dtype error naming what is supported");
  tc_free(&a);
}

int main(void) {
  if (!tc_init()) return 1;
  LoomArray probe = colmajor(LOOM_FLOAT64, 1, 1, NULL), out[1];
  LoomStatus st = loom_linalg(tc_ctx, LOOM_LINALG_CHOLESKY, 0, 1, &probe, 1, out);
  tc_free(&probe);
  if (st == LOOM_ERR_UNSUPPORTED) {
    printf("test_linalg: skipped: %s\n", loom_last_error(tc_ctx));
    tc_finish();
    return 77;
  }
  if (st == LOOM_OK) loom_array_free(tc_ctx, &out[0]);
  test_eigh(LOOM_COMPLEX64);
  test_eigh(LOOM_COMPLEX128);
  test_svd_qr_solve(LOOM_COMPLEX64);
  test_svd_qr_solve(LOOM_COMPLEX128);
  test_empty_complete();
  test_errors();
  return tc_finish();
}
