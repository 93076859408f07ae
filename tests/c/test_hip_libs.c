/* test_hip_libs.c: the AMD device's vendor-library bindings (runtime/hip/hip_blas.c: hipBLASLt;
 * hip_fft.c: hipFFT) end to end without an AMD GPU, against test doubles: mock_hip.c (libamdhip64, host
 * memory as device memory), mock_hipblaslt.c and mock_hipfft.c (which compute what the libraries'
 * documentation says a call computes, in float64 loops). Usage: test_hip_libs <libmock_hip.so>
 * <libmock_hipblaslt.so> <libmock_hipfft.so>.
 *
 * What it shows: loom_matmul of arrays on the AMD device becomes hipBLASLt calls whose operands, ops,
 * leading dims, strided batches and epilogues are right: 2-d, transposed b (op T, no copy), vector @ matrix,
 * batched, broadcast batch (folded into M), bias + ReLU and alpha fused into the call (no kernel), + c, in
 * float32 and float64, and complex64 / complex128 products (HIP_C_32F / C_64F with complex scales), against NumPy's matmul computed here (linalg_check.h over matmul_ref.h); loom_fft of AMD arrays becomes
 * hipFFT plans and executions (C2C both ways, R2C, C2R whose input survives the library's scribbling) in
 * complex64 and complex128, ranks 1 and 2, batched, against a float64 DFT written here; plans and handles
 * are released with the context; a missing or wrong library is a clean LOOM_ERR_UNSUPPORTED naming it
 * and what to install. The algorithm selection by timing (runtime/gpu/gpu_blas.c, shared with cuBLASLt)
 * against the mock's candidates of known virtual cost: the fastest is kept and used by later calls (one
 * heuristic query per problem), a candidate the library refuses is skipped, the heuristic's first stays
 * within the margin, a later context takes the choice from the disk cache without timing (a stale one
 * is timed again), LOOM_BLAS_AUTOTUNE=0 and small products ask for one candidate, and a borrowed stream
 * is never timed on (the problem is timed on a later call on Loom's stream). What a mock cannot show
 * (speed, the real libraries' numerics) needs an AMD GPU (scripts/amd_all.sh).
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
static int (*blas_heuristics)(void), (*blas_last_want)(void), (*blas_last_algo)(void), (*blas_algo_calls)(int);
static void (*blas_set_algos)(int, const double *), (*blas_set_salt)(int);
static void *mock_hip_lib; /* for a stream made outside Loom (hipStreamCreateWithFlags) */
static const char *mock_blas_path;

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

/* ---- algorithm selection by timing -------------------------------------------------------------------- */
/* A fresh context with LOOM_BLAS_AUTOTUNE=mode (NULL: unset) as tc_ctx; the old one in *saved. */
static bool tune_context(const char *mode, LoomContext **saved) {
  if (mode) setenv("LOOM_BLAS_AUTOTUNE", mode, 1);
  else unsetenv("LOOM_BLAS_AUTOTUNE");
  LoomContext *ctx = NULL;
  if (!CHECK(loom_context_create(&ctx) == LOOM_OK, "a context")) return false;
  *saved = tc_ctx;
  tc_ctx = ctx;
  return true;
}

static void end_context(LoomContext *saved) {
  loom_context_destroy(tc_ctx);
  tc_ctx = saved;
  unsetenv("LOOM_BLAS_AUTOTUNE");
}

/* The case on the mock's candidates ms[0..n): the candidate the final call used, the heuristic queries
 * and the candidates the last one asked for. */
static int tuned_case(const LcCase *c, int n, const double *ms, int *queries, int *want) {
  static const LcTarget amd = {LOOM_DEVICE_HIP, "the AMD device", false, NULL};
  blas_set_algos(n, ms);
  int q0 = blas_heuristics();
  lc_matmul_case(c, LOOM_FLOAT32, &amd);
  *queries = blas_heuristics() - q0;
  *want = blas_last_want();
  return blas_last_algo();
}

static void test_tune(void) {
  static const LcCase c1 = {"tuned 2-d", 2, 2, {9, 7}, {7, 5}, false, true, false, false, 1},
                      c2 = {"tuned b transposed", 2, 2, {6, 8}, {8, 3}, true, false, false, false, 1},
                      c3 = {"tuned bias relu", 2, 2, {5, 4}, {4, 6}, false, true, true, false, 1},
                      c4 = {"tuned alpha", 2, 2, {3, 4}, {4, 7}, false, false, false, false, 0.5};
  LoomContext *saved;
  int q, want, a;
  setenv("LOOM_HIPBLASLT", mock_blas_path, 1); /* test_missing unset it */
  if (!tune_context("all", &saved)) return;
  /* the fastest of 4 is kept: every candidate ran; a later call reuses it without asking again */
  double costs[4] = {3, 1, 2, 5};
  a = tuned_case(&c1, 4, costs, &q, &want);
  CHECK(a == 1 && q == 1 && want == 8, "the fastest candidate is used: algo %d, %d queries, %d asked", a, q, want);
  int runs[4];
  for (int i = 0; i < 4; i++) runs[i] = blas_algo_calls(i);
  CHECK(runs[0] >= 2 && runs[2] >= 2 && runs[3] >= 2 && runs[1] == runs[0] + 1,
        "each candidate was timed (first run and rounds), the pick ran once more: %d %d %d %d", runs[0], runs[1],
        runs[2], runs[3]);
  unsigned long long problems = 0, truns = 0, hits = 0;
  rt_gpu_blas_tune_stats(tc_ctx, &rt_hip_lt, &problems, &truns, &hits);
  CHECK(problems == 1 && truns == (unsigned long long)(runs[0] + runs[1] - 1 + runs[2] + runs[3]),
        "tune stats: %llu problems, %llu runs", problems, truns);
  a = tuned_case(&c1, 4, costs, &q, &want);
  CHECK(a == 1 && q == 0 && blas_algo_calls(1) == 1 && blas_algo_calls(0) == 0,
        "the signature's cache hits: algo %d, %d queries, algo 1 ran %d times", a, q, blas_algo_calls(1));
  /* a candidate the library refuses is skipped (here the heuristic's first) */
  double refused[3] = {-1, 2, 1};
  a = tuned_case(&c2, 3, refused, &q, &want);
  CHECK(a == 2 && q == 1, "a refused candidate is skipped: algo %d, %d queries", a, q);
  /* within the margin the heuristic's first stays; beyond it the faster one is taken */
  double close[2] = {1.0, 0.999}, far[2] = {1.0, 0.9};
  a = tuned_case(&c3, 2, close, &q, &want);
  CHECK(a == 0 && q == 1, "0.1%% faster is noise: algo %d", a);
  a = tuned_case(&c4, 2, far, &q, &want);
  CHECK(a == 1 && q == 1, "10%% faster is taken: algo %d", a);
  end_context(saved);

  /* another process (context): the stored choice is taken without timing when it is one of the heuristic's
   * candidates; a stale one (another library build's candidates) is timed again */
  for (int salt = 0; salt < 2; salt++) {
    if (!tune_context("all", &saved)) return;
    blas_set_salt(salt);
    a = tuned_case(&c1, 4, costs, &q, &want);
    rt_gpu_blas_tune_stats(tc_ctx, &rt_hip_lt, &problems, &truns, &hits);
    if (salt == 0)
      CHECK(a == 1 && q == 1 && hits == 1 && problems == 0 && truns == 0 && blas_algo_calls(0) == 0 &&
                blas_algo_calls(1) == 1,
            "the choice on disk: algo %d, %llu from disk, %llu timed runs", a, hits, truns);
    else
      CHECK(a == 1 && hits == 0 && problems == 1 && truns > 0, "a stale choice is timed again: algo %d, %llu from "
            "disk, %llu timed", a, hits, problems);
    end_context(saved);
  }
  blas_set_salt(0);

  /* off, and small products by default: the heuristic's first, one candidate asked for */
  const char *modes[2] = {"0", NULL};
  for (int m = 0; m < 2; m++) {
    if (!tune_context(modes[m], &saved)) return;
    a = tuned_case(&c1, 4, costs, &q, &want);
    CHECK(a == 0 && q == 1 && want == 1 && blas_algo_calls(1) == 0, "LOOM_BLAS_AUTOTUNE=%s: algo %d, %d asked",
          modes[m] ? modes[m] : "(unset), a small product", a, want);
    end_context(saved);
  }

  /* a borrowed stream (its owner may be capturing a graph) is never timed on; Loom's default stream is */
  if (!tune_context("all", &saved)) return;
  int (*stream_create)(void **, unsigned) = (int (*)(void **, unsigned))dlsym(mock_hip_lib, "hipStreamCreateWithFlags");
  int (*stream_destroy)(void *) = (int (*)(void *))dlsym(mock_hip_lib, "hipStreamDestroy");
  void *hs = NULL;
  LoomStream *ls = NULL;
  if (CHECK(stream_create && stream_destroy && stream_create(&hs, 0) == 0, "a stream made outside Loom") &&
      CHECK_OK(loom_stream_wrap(tc_ctx, LOOM_DEVICE_HIP, 0, hs, &ls)) &&
      CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_HIP, 0, ls))) {
    a = tuned_case(&c1, 4, costs, &q, &want);
    CHECK(a == 0 && want == 1, "on a borrowed stream: the heuristic's first (algo %d, %d asked)", a, want);
    CHECK_OK(loom_stream_use(tc_ctx, LOOM_DEVICE_HIP, 0, NULL));
    a = tuned_case(&c1, 4, costs, &q, &want);
    CHECK(a == 1 && q == 1 && want == 8, "timed later on the default stream: algo %d, %d queries", a, q);
  }
  if (ls) loom_stream_destroy(tc_ctx, ls);
  if (hs) stream_destroy(hs);
  end_context(saved);
  blas_set_algos(0, NULL);
  unsetenv("LOOM_HIPBLASLT");
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
  blas_heuristics = (int (*)(void))dlsym(mb, "mock_hipblaslt_heuristics");
  blas_last_want = (int (*)(void))dlsym(mb, "mock_hipblaslt_last_want");
  blas_last_algo = (int (*)(void))dlsym(mb, "mock_hipblaslt_last_algo");
  blas_algo_calls = (int (*)(int))dlsym(mb, "mock_hipblaslt_algo_calls");
  blas_set_algos = (void (*)(int, const double *))dlsym(mb, "mock_hipblaslt_set_algos");
  blas_set_salt = (void (*)(int))dlsym(mb, "mock_hipblaslt_set_salt");
  mock_hip_lib = dlopen(argv[1], RTLD_NOW);
  mock_blas_path = argv[2];
  if (!blas_calls || !blas_handles || !fft_execs || !fft_plans || !blas_heuristics || !blas_last_want ||
      !blas_last_algo || !blas_algo_calls || !blas_set_algos || !blas_set_salt || !mock_hip_lib)
    return 1;
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
  LoomDType cts[2] = {LOOM_COMPLEX128, LOOM_COMPLEX64};
  for (int ti = 0; ti < 2; ti++)
    for (size_t i = 0; i < sizeof complex_cases / sizeof complex_cases[0]; i++)
      lc_complex_case(&complex_cases[i], cts[ti], false, &amd); /* not a real a: its cast is a kernel (the mock runs none) */
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
  test_tune();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tc_finish();
}
