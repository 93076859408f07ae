/* test_cusolver.c: decompositions on CUDA devices through cuSOLVER (runtime/cuda/cuda_solver.c) and the
 * vendor-library loader they share with cuBLASLt and cuFFT (runtime/vendor_lib.c).
 *
 * --lib (ctest test_cusolver_lib, no GPU needed): the loader's candidate order (the named file, sonames,
 * then "$VAR/dir" directories, skipped when VAR is unset); a file named by LOOM_CUSOLVER that is not
 * cuSOLVER (libm.so.6) is refused with a message naming it and the missing function, and the search
 * stops there; a missing library's message says what to install; the constants cuda_solver.c passes
 * equal cusolverDn.h's where the header is on the include path; cuSOLVER loads and every routine it
 * uses resolves in its four dtypes (skipped, exit 77, when no libcusolver is installed).
 * Without --lib (exit 77 without a GPU): loom_linalg on CUDA device 0, float64 and float32, one matrix
 * and a batch of 3, checked by the defining identities in float64 loops written here (solve: a x = b;
 * cholesky: l l^T = a, lower and upper; lu: p l u = a; qr: q r = a with q^T q = I; svd: u s vh = a,
 * descending s; eigh: a v = v w, ascending w), and the info errors: a singular solve and a batch with
 * one matrix that is not positive definite are LOOM_ERR_LINALG naming that matrix.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "runtime/vendor_lib.h"
#include "tests/c/linalg_check.h"

#if defined(__has_include)
#if __has_include(<cusolverDn.h>)
#include <cusolverDn.h>
#define HAVE_CUSOLVER_H 1
_Static_assert((int)SV_FILL_LOWER == (int)CUBLAS_FILL_MODE_LOWER && (int)SV_FILL_UPPER == (int)CUBLAS_FILL_MODE_UPPER &&
                   (int)SV_OP_N == (int)CUBLAS_OP_N,
               "cublasFillMode_t / cublasOperation_t values");
_Static_assert((int)SV_EIG_NOVECTOR == (int)CUSOLVER_EIG_MODE_NOVECTOR && (int)SV_EIG_VECTOR == (int)CUSOLVER_EIG_MODE_VECTOR,
               "cusolverEigMode_t values");
_Static_assert((int)SV_STATUS_ALLOC_FAILED == (int)CUSOLVER_STATUS_ALLOC_FAILED &&
                   (int)SV_STATUS_INVALID_VALUE == (int)CUSOLVER_STATUS_INVALID_VALUE &&
                   (int)SV_STATUS_NOT_SUPPORTED == (int)CUSOLVER_STATUS_NOT_SUPPORTED,
               "cusolverStatus_t values");
#endif
#endif

/* ---- the loader ------------------------------------------------------------------------------------------ */
typedef struct Names {
  char all[2048];
} Names;
static void collect(const char *name, void *arg) {
  Names *n = arg;
  size_t l = strlen(n->all);
  snprintf(n->all + l, sizeof n->all - l, "%s%s", l ? "|" : "", name);
}

static const char *refuse_all(void *lib, void *arg) {
  (void)lib;
  (void)arg;
  return "is not the library (refused by the test)";
}

static void test_loader(void) {
  static const char *const sonames[] = {"liba.so.2", "liba.so.1", NULL};
  static const char *const dirs[] = {"$LOOM_TEST_HOME/lib", "/opt/x/lib", NULL};
  RtVendorLib v = {.what = "TestLib", .purpose = "tests", .install = "install nothing", .env = "LOOM_TEST_LIB",
                   .sonames = sonames, .dirs = dirs};
  unsetenv("LOOM_TEST_LIB");
  unsetenv("LOOM_TEST_HOME");
  Names n = {""};
  CHECK(rt_vendor_lib_candidates(&v, collect, &n) == 4 && !strcmp(n.all, "liba.so.2|liba.so.1|/opt/x/lib/liba.so.2|"
                                                                          "/opt/x/lib/liba.so.1"),
        "candidates without the variables: %s", n.all);
  setenv("LOOM_TEST_LIB", "/my/liba.so", 1);
  setenv("LOOM_TEST_HOME", "/home/t", 1);
  n.all[0] = '\0';
  CHECK(rt_vendor_lib_candidates(&v, collect, &n) == 7 &&
            !strcmp(n.all, "/my/liba.so|liba.so.2|liba.so.1|/home/t/lib/liba.so.2|/home/t/lib/liba.so.1|"
                           "/opt/x/lib/liba.so.2|/opt/x/lib/liba.so.1"),
        "candidates with the variables: %s", n.all);
  Diag d = {.status = LOOM_OK};
  char path[256] = "?";
  CHECK(rt_dlopen_first(&v, path, sizeof path, &d) == NULL && d.status == LOOM_ERR_UNSUPPORTED &&
            strstr(d.msg, "tests need TestLib, which was not found") && strstr(d.msg, "LOOM_TEST_LIB=/my/liba.so") &&
            strstr(d.msg, "/opt/x/lib/liba.so.1") && strstr(d.msg, "install nothing") && !strcmp(path, "?"),
        "nothing found: %s", d.msg);
  /* a loadable library that accept refuses: closed, reported with the reason */
  static const char *const libm[] = {"libm.so.6", NULL};
  RtVendorLib r = {.what = "TestLib", .purpose = "tests", .env = "LOOM_TEST_LIB", .sonames = libm,
                   .accept = refuse_all};
  unsetenv("LOOM_TEST_LIB");
  d = (Diag){.status = LOOM_OK};
  CHECK(rt_dlopen_first(&r, NULL, 0, &d) == NULL && strstr(d.msg, "TestLib library libm.so.6 is not the library"),
        "refused: %s", d.msg);
  r.accept = NULL;
  d = (Diag){.status = LOOM_OK};
  CHECK(rt_dlopen_first(&r, path, sizeof path, &d) != NULL && !strcmp(path, "libm.so.6"), "found: %s %s", path, d.msg);
  unsetenv("LOOM_TEST_HOME");
}

static int test_lib(void) {
#ifdef HAVE_CUSOLVER_H
  printf("test_cusolver --lib: constants checked against cusolverDn.h\n");
#endif
  test_loader();
  setenv("LOOM_CUSOLVER", "libm.so.6", 1);
  char path[600] = "";
  Diag d = {.status = LOOM_OK};
  LoomStatus st = rt_cusolver_probe(path, sizeof path, &d);
  CHECK(st == LOOM_ERR_UNSUPPORTED && strstr(d.msg, "libm.so.6") && strstr(d.msg, "cusolverDnCreate") &&
            strstr(d.msg, "LOOM_CUSOLVER"),
        "a named library that is not cuSOLVER is refused and the search stops: %d %s", (int)st, d.msg);
  setenv("LOOM_CUSOLVER", "/nonexistent/libcusolver.so", 1);
  d = (Diag){.status = LOOM_OK};
  st = rt_cusolver_probe(path, sizeof path, &d);
  CHECK(st == LOOM_OK || strstr(d.msg, "LOOM_CUSOLVER=/nonexistent/libcusolver.so"),
        "a named file that does not open is listed and the search goes on: %s", d.msg);
  unsetenv("LOOM_CUSOLVER");
  d = (Diag){.status = LOOM_OK};
  st = rt_cusolver_probe(path, sizeof path, &d);
  if (st != LOOM_OK) {
    CHECK(st == LOOM_ERR_UNSUPPORTED && strstr(d.msg, "cuSOLVER") && strstr(d.msg, "LOOM_CUSOLVER") &&
              strstr(d.msg, "libcusolver"),
          "the missing library's message says what to install: %s", d.msg);
    printf("test_cusolver --lib: no libcusolver here (%s): skipped\n", d.msg);
    return tc_failed ? 1 : 77;
  }
  int n = 0;
  while (rt_cusolver_routines[n]) n++;
  printf("test_cusolver --lib: %s, %d routines x 4 dtypes resolved\n", path, n);
  CHECK(strstr(path, "cusolver") != NULL && n >= 14, "path %s, %d routines", path, n);
  return -1;
}

/* ---- decompositions on the GPU -------------------------------------------------------------------------- */
/* A batch of column-major r x c matrices (element (i, j) of matrix b at b r c + i + j r), in float64. */
typedef struct Mats {
  int64_t batch, r, c;
  double *v;
} Mats;

static double at(const Mats *m, int64_t b, int64_t i, int64_t j) { return m->v[b * m->r * m->c + i + j * m->r]; }

static Mats mats(int64_t batch, int64_t r, int64_t c) {
  Mats m = {batch, r, c, calloc((size_t)(batch * r * c + 1), sizeof(double))};
  return m;
}

static uint64_t seed = 12345;
static double rnd(void) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
}

/* The same memory as one C-contiguous row of n elements (a packed column-major batch's bytes). */
static LoomArray flat(const LoomArray *a, int64_t n) {
  LoomArray f = *a;
  f.ndim = 1;
  f.shape[0] = n;
  f.strides[0] = 1;
  return f;
}

/* m on the device as dtype t (column-major packed; shape [batch, r, c] or [r, c] when batch 0). */
static LoomArray upload(const Mats *m, LoomDType t, bool batched) {
  LoomArray h = {.dtype = t, .device = LOOM_DEVICE_HOST};
  h.ndim = batched ? 3 : 2;
  int nb = h.ndim - 2;
  if (batched) h.shape[0] = m->batch, h.strides[0] = m->r * m->c;
  h.shape[nb] = m->r, h.shape[nb + 1] = m->c;
  h.strides[nb] = 1, h.strides[nb + 1] = m->r;
  int64_t n = m->batch * m->r * m->c;
  h.data = malloc((size_t)(n + 1) * 8);
  for (int64_t i = 0; i < n; i++) {
    if (t == LOOM_FLOAT32) ((float *)h.data)[i] = (float)m->v[i];
    else ((double *)h.data)[i] = m->v[i];
  }
  LoomArray d = h;
  d.data = NULL;
  d.device = LOOM_DEVICE_CUDA;
  d.device_index = 0;
  CHECK_OK(loom_array_alloc(tc_ctx, &d));
  memcpy(d.strides, h.strides, sizeof h.strides);
  LoomArray df = flat(&d, n), hf = flat(&h, n); /* loom_array_copy copies C-contiguous arrays: the bytes */
  CHECK_OK(loom_array_copy(tc_ctx, &df, &hf));
  free(h.data);
  return d;
}

/* A device result (column-major packed, as loom_linalg makes them) as float64 matrices r x c. */
static Mats download(const LoomArray *dv, int64_t batch, int64_t r, int64_t c) {
  LoomArray h = *dv;
  h.device = LOOM_DEVICE_HOST;
  h.device_index = 0;
  int64_t n = batch * r * c;
  h.data = malloc((size_t)(n + 1) * 8);
  LoomArray hf = flat(&h, n), df = flat(dv, n);
  CHECK_OK(loom_array_copy(tc_ctx, &hf, &df));
  Mats m = mats(batch, r, c);
  for (int64_t i = 0; i < n; i++)
    m.v[i] = dv->dtype == LOOM_FLOAT32 ? (double)((float *)h.data)[i]
             : dv->dtype == LOOM_INT32 ? (double)((int32_t *)h.data)[i]
                                       : ((double *)h.data)[i];
  free(h.data);
  return m;
}

static void release(LoomArray *a, int n) {
  for (int i = 0; i < n; i++) loom_array_free(tc_ctx, &a[i]);
}

/* max |x (rx x k) y (k x cy) - z| over the batch; xt / yt: use the transposes */
static double prod_err(const Mats *x, bool xt, const Mats *y, bool yt, const Mats *z, int64_t k) {
  double e = 0;
  for (int64_t b = 0; b < z->batch; b++)
    for (int64_t i = 0; i < z->r; i++)
      for (int64_t j = 0; j < z->c; j++) {
        double s = 0;
        for (int64_t l = 0; l < k; l++) s += (xt ? at(x, b, l, i) : at(x, b, i, l)) * (yt ? at(y, b, j, l) : at(y, b, l, j));
        e = fmax(e, fabs(s - at(z, b, i, j)));
      }
  return e;
}

static void test_gpu(LoomDType t, int64_t batch) {
  bool batched = batch > 1;
  double tol = t == LOOM_FLOAT32 ? 5e-4 : 1e-10;
  const char *tn = loom_dtype_name(t);
  int64_t n = 5, m = 7, q = 4;
  /* a well-conditioned square a, a symmetric positive definite s, a tall g */
  Mats a = mats(batch, n, n), s = mats(batch, n, n), g = mats(batch, m, q), rhs = mats(batch, n, 2);
  for (int64_t i = 0; i < batch * n * n; i++) a.v[i] = rnd();
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < n; i++) a.v[b * n * n + i + i * n] += 4;
  /* s = a a^T + I from the finished a (computed inside the loop above, a row's s read rows of a not yet
   * shifted: s was not symmetric, and cholesky / eigh, which read one triangle, failed their identities) */
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double v = 0;
        for (int64_t l = 0; l < n; l++) v += at(&a, b, i, l) * at(&a, b, j, l);
        s.v[b * n * n + i + j * n] = v + (i == j ? 1 : 0);
      }
  for (int64_t i = 0; i < batch * m * q; i++) g.v[i] = rnd();
  for (int64_t i = 0; i < batch * n * 2; i++) rhs.v[i] = rnd();
  LoomArray in[2], out[3];
  /* solve */
  in[0] = upload(&a, t, batched), in[1] = upload(&rhs, t, batched);
  if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_SOLVE, 0, 2, in, 1, out))) {
    Mats x = download(&out[0], batch, n, 2);
    CHECK(prod_err(&a, false, &x, false, &rhs, n) < tol * 20, "%s solve: a x = b", tn);
    free(x.v);
    release(out, 1);
  }
  release(in, 2);
  /* lu: rebuild a from l, u and the row swaps */
  in[0] = upload(&a, t, batched);
  if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_LU, 0, 1, in, 2, out))) {
    Mats lu = download(&out[0], batch, n, n), piv = download(&out[1], batch, n, 1), l = mats(batch, n, n),
         u = mats(batch, n, n), pa = mats(batch, n, n);
    for (int64_t b = 0; b < batch; b++) {
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          l.v[b * n * n + i + j * n] = i > j ? at(&lu, b, i, j) : i == j ? 1 : 0;
          u.v[b * n * n + i + j * n] = i <= j ? at(&lu, b, i, j) : 0;
          pa.v[b * n * n + i + j * n] = at(&a, b, i, j);
        }
      for (int64_t i = 0; i < n; i++) { /* apply the swaps to a: p a = l u */
        int64_t p = (int64_t)piv.v[b * n + i] - 1;
        CHECK(p >= i && p < n, "%s lu: pivot %lld of row %lld", tn, (long long)p, (long long)i);
        if (p < i || p >= n) continue;
        for (int64_t j = 0; j < n; j++) {
          double tmp = pa.v[b * n * n + i + j * n];
          pa.v[b * n * n + i + j * n] = pa.v[b * n * n + p + j * n];
          pa.v[b * n * n + p + j * n] = tmp;
        }
      }
    }
    CHECK(prod_err(&l, false, &u, false, &pa, n) < tol * 20, "%s lu: p a = l u", tn);
    free(lu.v), free(piv.v), free(l.v), free(u.v), free(pa.v);
    release(out, 2);
  }
  release(in, 1);
  /* cholesky, lower and upper */
  in[0] = upload(&s, t, batched);
  for (int upper = 0; upper < 2; upper++)
    if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_CHOLESKY, upper ? LOOM_LINALG_UPPER : 0, 1, in, 1, out))) {
      Mats f = download(&out[0], batch, n, n);
      for (int64_t b = 0; b < batch; b++) /* the other triangle is left as in a: zero it */
        for (int64_t i = 0; i < n; i++)
          for (int64_t j = 0; j < n; j++)
            if (upper ? i > j : i < j) f.v[b * n * n + i + j * n] = 0;
      CHECK(prod_err(&f, upper, &f, !upper, &s, n) < tol * 200, "%s cholesky (%s): l l^T = a", tn, upper ? "upper" : "lower");
      free(f.v);
      release(out, 1);
    }
  release(in, 1);
  /* qr (reduced) of the tall g */
  in[0] = upload(&g, t, batched);
  if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_QR, 0, 1, in, 2, out))) {
    Mats r = download(&out[0], batch, m, q), qq = download(&out[1], batch, m, q), rr = mats(batch, q, q),
         eye = mats(batch, q, q);
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < q; i++) {
        eye.v[b * q * q + i + i * q] = 1;
        for (int64_t j = 0; j < q; j++) rr.v[b * q * q + i + j * q] = i <= j ? at(&r, b, i, j) : 0;
      }
    CHECK(prod_err(&qq, false, &rr, false, &g, q) < tol * 20, "%s qr: q r = a", tn);
    CHECK(prod_err(&qq, true, &qq, false, &eye, m) < tol * 20, "%s qr: q^T q = I", tn);
    free(r.v), free(qq.v), free(rr.v), free(eye.v);
    release(out, 2);
  }
  /* svd (thin) of g */
  if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_SVD, 0, 1, in, 3, out))) {
    Mats sv = download(&out[0], batch, q, 1), u = download(&out[1], batch, m, q), vh = download(&out[2], batch, q, q);
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < q; i++) {
        CHECK(i == 0 || sv.v[b * q + i] <= sv.v[b * q + i - 1], "%s svd: s descending", tn);
        for (int64_t r = 0; r < m; r++) u.v[b * m * q + r + i * m] *= sv.v[b * q + i];
      }
    CHECK(prod_err(&u, false, &vh, false, &g, q) < tol * 20, "%s svd: u s vh = a", tn);
    free(sv.v), free(u.v), free(vh.v);
    release(out, 3);
  }
  release(in, 1);
  /* eigh of s, from the lower triangle */
  in[0] = upload(&s, t, batched);
  if (CHECK_OK(loom_linalg(tc_ctx, LOOM_LINALG_EIGH, 0, 1, in, 2, out))) {
    Mats w = download(&out[0], batch, n, 1), v = download(&out[1], batch, n, n), vw = mats(batch, n, n);
    for (int64_t b = 0; b < batch; b++)
      for (int64_t j = 0; j < n; j++) {
        CHECK(j == 0 || w.v[b * n + j] >= w.v[b * n + j - 1], "%s eigh: w ascending", tn);
        for (int64_t i = 0; i < n; i++) vw.v[b * n * n + i + j * n] = at(&v, b, i, j) * w.v[b * n + j];
      }
    CHECK(prod_err(&s, false, &v, false, &vw, n) < tol * 500, "%s eigh: a v = v w", tn);
    free(w.v), free(v.v), free(vw.v);
    release(out, 2);
  }
  release(in, 1);
  /* errors: a singular solve, a batch with one matrix not positive definite */
  Mats z = mats(batch, n, n);
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i = 0; i < n; i++) z.v[b * n * n + i + i * n] = (b == batch - 1 && i == 2) ? -1 : 1;
  in[0] = upload(&z, t, batched);
  CHECK_STATUS(loom_linalg(tc_ctx, LOOM_LINALG_CHOLESKY, 0, 1, in, 1, out), LOOM_ERR_LINALG);
  CHECK(strstr(loom_last_error(tc_ctx), "not positive definite") &&
            (!batched || strstr(loom_last_error(tc_ctx), "matrix 2 of the batch")),
        "%s cholesky error: %s", tn, loom_last_error(tc_ctx));
  release(in, 1);
  for (int64_t i = 0; i < batch * n * n; i++) z.v[i] = 0;
  in[0] = upload(&z, t, batched), in[1] = upload(&rhs, t, batched);
  CHECK_STATUS(loom_linalg(tc_ctx, LOOM_LINALG_SOLVE, 0, 2, in, 1, out), LOOM_ERR_LINALG);
  CHECK(strstr(loom_last_error(tc_ctx), "Singular matrix") != NULL, "%s solve error: %s", tn, loom_last_error(tc_ctx));
  release(in, 2);
  free(z.v), free(a.v), free(s.v), free(g.v), free(rhs.v);
}

static void test_device(void) {
  LoomDType ts[2] = {LOOM_FLOAT64, LOOM_FLOAT32};
  for (int i = 0; i < 2; i++) {
    test_gpu(ts[i], 1);
    test_gpu(ts[i], 3);
  }
}

int main(int argc, char **argv) { return lc_main(argc, argv, "test_cusolver", test_lib, LOOM_DEVICE_CUDA, test_device); }
