/* test_hip_libs.c: the AMD device's vendor-library bindings (runtime/hip/hip_blas.c: hipBLASLt;
 * hip_fft.c: hipFFT) end to end without an AMD GPU, against test doubles: mock_hip.c (libamdhip64, host
 * memory as device memory), mock_hipblaslt.c and mock_hipfft.c (which compute what the libraries'
 * documentation says a call computes, in float64 loops). Usage: test_hip_libs <libmock_hip.so>
 * <libmock_hipblaslt.so> <libmock_hipfft.so>.
 *
 * What it shows: loom_matmul of arrays on the AMD device becomes hipBLASLt calls whose operands, ops,
 * leading dims, strided batches and epilogues are right: 2-d, transposed b (op T, no copy), vector @ matrix,
 * batched, broadcast batch (folded into M), bias + ReLU and alpha fused into the call (no kernel), + c, in
 * float32 and float64, against NumPy's matmul computed here (linalg_check.h over matmul_ref.h); loom_fft of AMD arrays becomes
 * hipFFT plans and executions (C2C both ways, R2C, C2R whose input survives the library's scribbling) in
 * complex64 and complex128, ranks 1 and 2, batched, against a float64 DFT written here; plans and handles
 * are released with the context; a missing or wrong library is a clean LOOM_ERR_UNSUPPORTED naming it
 * and what to install. What a mock cannot show (speed, the real libraries' numerics) needs an AMD GPU
 * (scripts/amd_all.sh).
 */
#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_rt.h"
#include "tests/c/matmul_ref.h"
#include "tests/c/linalg_check.h"

static int (*blas_calls)(void), (*blas_handles)(void), (*fft_execs)(void), (*fft_plans)(void);

static LoomArray to_device(const LoomArray *h) { return lc_to_device(h, LOOM_DEVICE_HIP); }

/* ---- products ------------------------------------------------------------------------------------------ */
static const LcCase cases[] = {
    {"2-d", 2, 2, {7, 5}, {5, 6}, false, false, false, false, 1},
    {"b transposed", 2, 2, {6, 9}, {9, 4}, true, false, false, false, 1},
    {"vector @ matrix", 1, 2, {5}, {5, 3}, false, false, false, false, 1},
    {"batched", 3, 3, {3, 4, 5}, {3, 5, 2}, false, false, false, false, 1},
    {"broadcast batch", 3, 2, {2, 4, 6}, {6, 3}, false, false, false, false, 1},
    {"4-d batches, b transposed", 4, 4, {2, 3, 4, 5}, {2, 1, 5, 3}, true, false, false, false, 1},
    {"bias relu batched", 3, 2, {2, 8, 6}, {6, 5}, false, true, true, false, 1},
    {"alpha", 2, 2, {4, 6}, {6, 3}, false, false, false, false, 0.5},
    {"plus c", 2, 2, {4, 6}, {6, 3}, false, false, false, true, 1},
};

/* ---- FFTs ------------------------------------------------------------------------------------------------ */
/* The unnormalized DFT (sign -1 forward) over the last `rank` dims of x (shape[0..nd), C order), in place. */
static void ref_dft(double complex *x, int nd, const int64_t *shape, int rank, int sign) {
  int64_t total = tc_numel(nd, shape);
  for (int ax = nd - rank; ax < nd; ax++) {
    int64_t len = shape[ax], inner = 1;
    for (int i = ax + 1; i < nd; i++) inner *= shape[i];
    double complex *tmp = malloc(sizeof *tmp * (size_t)len);
    for (int64_t base = 0; base < total; base++) {
      if ((base / inner) % len != 0) continue;
      for (int64_t k = 0; k < len; k++) {
        double complex s = 0;
        for (int64_t j = 0; j < len; j++) s += x[base + j * inner] * cexp(sign * 2 * M_PI * I * (double)(j * k % len) / (double)len);
        tmp[k] = s;
      }
      for (int64_t k = 0; k < len; k++) x[base + k * inner] = tmp[k];
    }
    free(tmp);
  }
}

static double complex cget(const LoomArray *a, int64_t i) {
  if (a->dtype == LOOM_COMPLEX64) return ((const float complex *)a->data)[i];
  if (a->dtype == LOOM_COMPLEX128) return ((const double complex *)a->data)[i];
  return tc_get_f(a, i);
}

static void test_fft(LoomDType ct, int rank) {
  bool dbl = ct == LOOM_COMPLEX128;
  LoomDType rt = dbl ? LOOM_FLOAT64 : LOOM_FLOAT32;
  double tol = dbl ? 1e-9 : 2e-4;
  int64_t shape[3] = {3, 4, 6}; /* a batch of 3 (rank 2) or 12 (rank 1) transforms */
  int nd = 3;
  int64_t total = tc_numel(nd, shape);
  char what[80];
  snprintf(what, sizeof what, "fft %s rank %d", loom_dtype_name(ct), rank);
  /* C2C both ways */
  LoomArray hx = tc_new(ct, nd, shape);
  double complex *want = malloc(sizeof *want * (size_t)total);
  for (int64_t i = 0; i < total; i++) {
    double complex v = urand() + I * urand();
    if (dbl) ((double complex *)hx.data)[i] = v;
    else ((float complex *)hx.data)[i] = (float complex)v;
    want[i] = cget(&hx, i);
  }
  LoomArray dx = to_device(&hx), dy = {0};
  for (int inverse = 0; inverse < 2; inverse++) {
    double complex *w = malloc(sizeof *w * (size_t)total);
    memcpy(w, want, sizeof *w * (size_t)total);
    ref_dft(w, nd, shape, rank, inverse ? 1 : -1);
    int e0 = fft_execs();
    if (CHECK(loom_fft(tc_ctx, inverse ? LOOM_FFT_C2C_INVERSE : LOOM_FFT_C2C_FORWARD, rank, 0, &dx, &dy) == LOOM_OK,
              "%s c2c: %s", what, loom_last_error(tc_ctx))) {
      CHECK(fft_execs() == e0 + 1 && dy.device == LOOM_DEVICE_HIP, "%s c2c: one hipFFT execution on the device", what);
      LoomArray hy = lc_to_host(&dy);
      double err = 0;
      for (int64_t i = 0; i < total; i++) err = fmax(err, cabs(cget(&hy, i) - w[i]));
      CHECK(err < tol * 20, "%s c2c %s: max error %g", what, inverse ? "inverse" : "forward", err);
      tc_free(&hy);
      loom_array_free(tc_ctx, &dy);
    }
    free(w);
  }
  /* R2C, then C2R of its result back (n * the input, unnormalized) with the input left intact */
  LoomArray hr = tc_new(rt, nd, shape);
  for (int64_t i = 0; i < total; i++) tc_set_f(&hr, i, urand());
  double complex *full = malloc(sizeof *full * (size_t)total);
  for (int64_t i = 0; i < total; i++) full[i] = tc_get_f(&hr, i);
  ref_dft(full, nd, shape, rank, -1);
  LoomArray dr = to_device(&hr), dh = {0}, dback = {0};
  if (CHECK(loom_fft(tc_ctx, LOOM_FFT_R2C, rank, 0, &dr, &dh) == LOOM_OK, "%s r2c: %s", what, loom_last_error(tc_ctx))) {
    LoomArray hh = lc_to_host(&dh);
    int64_t half = shape[2] / 2 + 1;
    double err = 0;
    for (int64_t i = 0; i < total; i++)
      if (i % shape[2] < half) err = fmax(err, cabs(cget(&hh, i / shape[2] * half + i % shape[2]) - full[i]));
    CHECK(hh.shape[2] == half && err < tol * 20, "%s r2c: max error %g", what, err);
    if (CHECK(loom_fft(tc_ctx, LOOM_FFT_C2R, rank, shape[2], &dh, &dback) == LOOM_OK, "%s c2r: %s", what,
              loom_last_error(tc_ctx))) {
      LoomArray hb = lc_to_host(&dback);
      double scale = rank == 1 ? (double)shape[2] : (double)(shape[1] * shape[2]), e2 = 0;
      for (int64_t i = 0; i < total; i++) e2 = fmax(e2, fabs(tc_get_f(&hb, i) - scale * tc_get_f(&hr, i)));
      CHECK(e2 < tol * 20 * scale, "%s c2r: max error %g", what, e2);
      LoomArray again = lc_to_host(&dh); /* the library scribbled over its input: loom's copy, not dh */
      int64_t changed = 0;
      for (int64_t i = 0; i < tc_numel(hh.ndim, hh.shape); i++) changed += !(cget(&again, i) == cget(&hh, i)); /* NaN too */
      CHECK(changed == 0, "%s c2r: the input is not modified (%lld values changed)", what, (long long)changed);
      tc_free(&again), tc_free(&hb);
      loom_array_free(tc_ctx, &dback);
    }
    tc_free(&hh);
    loom_array_free(tc_ctx, &dh);
  }
  loom_array_free(tc_ctx, &dr), loom_array_free(tc_ctx, &dx);
  tc_free(&hr), tc_free(&hx);
  free(full), free(want);
}

/* ---- missing libraries ---------------------------------------------------------------------------------- */
static void test_missing(void) {
  setenv("LOOM_HIPBLASLT", "libm.so.6", 1);
  setenv("LOOM_HIPFFT", "/nonexistent/libhipfft.so", 1);
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) return;
  LoomContext *saved = tc_ctx;
  tc_ctx = ctx;
  int64_t s2[2] = {2, 2};
  LoomArray h = tc_new(LOOM_FLOAT32, 2, s2), hc = tc_new(LOOM_COMPLEX64, 2, s2);
  memset(h.data, 0, 16), memset(hc.data, 0, 32);
  LoomArray d = to_device(&h), dc = to_device(&hc), out = {0};
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode a, p;
  loom_input(g, &d, &a);
  loom_matmul(g, a, a, &p);
  CHECK(loom_eval(g, 1, &p, &out) == LOOM_ERR_UNSUPPORTED && strstr(loom_last_error(ctx), "hipBLASLt library libm.so.6 "
                                                                                          "has no hipblasLtCreate"),
        "a named library that is not hipBLASLt: %s", loom_last_error(ctx));
  loom_graph_destroy(g);
  CHECK(loom_fft(ctx, LOOM_FFT_C2C_FORWARD, 1, 0, &dc, &out) == LOOM_ERR_UNSUPPORTED &&
            strstr(loom_last_error(ctx), "FFTs on AMD devices need hipFFT") &&
            strstr(loom_last_error(ctx), "LOOM_HIPFFT=/nonexistent/libhipfft.so") && strstr(loom_last_error(ctx), "hipfft package"),
        "no hipFFT: %s", loom_last_error(ctx));
  loom_array_free(ctx, &d), loom_array_free(ctx, &dc);
  tc_free(&h), tc_free(&hc);
  tc_ctx = saved;
  loom_context_destroy(ctx);
  unsetenv("LOOM_HIPBLASLT");
  unsetenv("LOOM_HIPFFT");
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s <libmock_hip.so> <libmock_hipblaslt.so> <libmock_hipfft.so>\n", argv[0]);
    return 2;
  }
  void *mb = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL), *mf = dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL);
  if (!mb || !mf) {
    fprintf(stderr, "cannot load the mocks: %s\n", dlerror());
    return 1;
  }
  blas_calls = (int (*)(void))dlsym(mb, "mock_hipblaslt_calls");
  blas_handles = (int (*)(void))dlsym(mb, "mock_hipblaslt_live_handles");
  fft_execs = (int (*)(void))dlsym(mf, "mock_hipfft_execs");
  fft_plans = (int (*)(void))dlsym(mf, "mock_hipfft_live_plans");
  if (!blas_calls || !blas_handles || !fft_execs || !fft_plans) return 1;
  setenv("LOOM_HIP_LIBRARY", argv[1], 1);
  setenv("MOCK_HIP_DEVICES", "1", 1);
  setenv("LOOM_HIPBLASLT", argv[2], 1);
  setenv("LOOM_HIPFFT", argv[3], 1);
  char dir[] = "/tmp/loom_hip_libs_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  if (!tc_init()) return 1;
  int32_t n = 0;
  CHECK(loom_device_count(tc_ctx, LOOM_DEVICE_HIP, &n) == LOOM_OK && n == 1, "mock device: %d", n);
  LoomDType ts[2] = {LOOM_FLOAT64, LOOM_FLOAT32};
  LcTarget amd = {LOOM_DEVICE_HIP, "the AMD device", false, blas_calls};
  for (int ti = 0; ti < 2; ti++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) lc_matmul_case(&cases[i], ts[ti], &amd);
  for (int rank = 1; rank <= 2; rank++) {
    test_fft(LOOM_COMPLEX128, rank);
    test_fft(LOOM_COMPLEX64, rank);
  }
  CHECK(blas_handles() == 1 && fft_plans() > 0, "handles %d, plans %d while the context lives", blas_handles(), fft_plans());
  loom_context_destroy(tc_ctx);
  tc_ctx = NULL;
  CHECK(blas_handles() == 0 && fft_plans() == 0, "released with the context: handles %d, plans %d", blas_handles(),
        fft_plans());
  if (!tc_init()) return 1;
  test_missing();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tc_finish();
}
