/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_check: a C program linked ONLY against libloomrt (no libloom, no LLVM: the loomrt_no_llvm test
 * checks its ELF dependencies and ldd). It opens the bundle loomc made from tests/loomrt/kernels.loom in
 * the same ctest run, runs every entry on the host and compares with references computed here in
 * float64 (or exactly, where the kernel's arithmetic is exact), including edge cases: empty spaces,
 * NaN, division by zero, float16 specials, negative strides, 64-bit indexing, split reductions. With a
 * CUDA GPU (and the bundle's sm_XX/PTX code) it runs the GPU entries too; without one that part is
 * skipped. It also times opening the bundle to the end of the first kernel.
 *   loomrt_check BUNDLE
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "loom/loomrt.h"
#include "tests/c/mock_hip.h"


static LoomrtRuntime *rt;
static LoomrtBundle *bun;
static LoomrtStream *host;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* [0, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1.0p-53;
}

static LoomStatus launch(const char *entry, LoomrtStream *s, int ndim, const int64_t *shape, int nbuf, void *const *bufs,
                         const int64_t *strides) {
  LoomStatus st = loomrt_launch(bun, entry, s, ndim, shape, nbuf, bufs, strides);
  CHECK(st == LOOM_OK, "%s: %s", entry, loomrt_last_error(rt));
  return st;
}

/* ---- float16 by hand (an implementation independent of the runtime's) ---------------------------- */
static double half_value(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}
/* nearest half to a float (ties to even), by searching the ordered positive halves */
static uint16_t half_of(float f) {
  if (isnan(f)) return 0x7e00;
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  double a = fabs((double)f);
  if (a >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;
  while (lo < hi) { /* the largest half <= a */
    uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
    if (half_value(mid) <= a) lo = mid; else hi = (uint16_t)(mid - 1);
  }
  double dlo = a - half_value(lo), dhi = lo < 0x7bff ? half_value((uint16_t)(lo + 1)) - a : INFINITY;
  uint16_t r = dhi < dlo || (dhi == dlo && (lo & 1)) ? (uint16_t)(lo + 1) : lo;
  return sign | r;
}

/* ---- the entries on the host ------------------------------------------------------------------------- */
static void check_axpb(LoomrtStream *s, int64_t n) {
  float *x = malloc((size_t)(n + 1) * 4), *y = malloc((size_t)(n + 1) * 4), *o = malloc((size_t)(n + 1) * 4);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)(urand() * 200 - 100);
    y[i] = (float)(urand() * 2 - 1);
  }
  int64_t st[3] = {1, 1, 1};
  if (launch("axpb_f32", s, 1, &n, 3, (void *[]){x, y, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      volatile float t = 2.5f * x[i];
      float r = t + y[i];
      bad += memcmp(&r, &o[i], 4) != 0;
    }
    CHECK(bad == 0, "axpb_f32 n=%lld: %lld results differ from float32 2.5*x+y", (long long)n, (long long)bad);
  }
  free(x), free(y), free(o);
}

static void check_math(LoomrtStream *s) {
  int64_t n = 300007;
  double *x = malloc((size_t)n * 8), *y = malloc((size_t)n * 8), *o = malloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) {
    x[i] = urand() * 40 - 20;
    y[i] = urand() * 20 - 10;
  }
  x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, y[3] = 0, x[4] = 0;
  int64_t st[3] = {1, 1, 1};
  if (launch("math_f64", s, 1, &n, 3, (void *[]){x, y, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double a = exp(x[i]) * sin(y[i]), b = log1p(fabs(x[i])), r = a - b;
      double tol = 4e-15 * (fabs(a) + fabs(b)) + 1e-300;
      bool ok = isnan(r) ? isnan(o[i]) : (isinf(r) ? o[i] == r : fabs(o[i] - r) <= tol);
      if (!ok && bad++ < 3) fprintf(stderr, "  math_f64[%lld]: x %g y %g got %.17g want %.17g\n", (long long)i, x[i], y[i], o[i], r);
    }
    CHECK(bad == 0, "math_f64: %lld of %lld results off the float64 reference", (long long)bad, (long long)n);
  }
  free(x), free(y), free(o);
}

static int32_t np_floordiv(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (a == INT32_MIN && b == -1) return INT32_MIN;
  int32_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int32_t np_mod(int32_t a, int32_t b) {
  if (b == 0 || b == -1) return 0;
  int32_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

static void check_intdiv(LoomrtStream *s) {
  int32_t xs[] = {7, -7, 7, -7, 0, 5, INT32_MIN, INT32_MIN, INT32_MAX, -1, 123456789, -98765};
  int32_t ys[] = {2, 2, -2, -2, 3, 0, -1, 1, -1, 0, 1000, 77};
  int64_t n = 100000;
  int32_t *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) {
    x[i] = i < 12 ? xs[i] : (int32_t)(urand() * 4e9 - 2e9);
    y[i] = i < 12 ? ys[i] : (int32_t)(urand() * 200 - 100);
  }
  int64_t st[3] = {1, 1, 1};
  if (launch("intdiv_i32", s, 1, &n, 3, (void *[]){x, y, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      int32_t r = (int32_t)((uint32_t)np_floordiv(x[i], y[i]) + (uint32_t)np_mod(x[i], y[i])); /* wraps */
      if (o[i] != r && bad++ < 3) fprintf(stderr, "  intdiv[%lld]: %d, %d -> %d, want %d\n", (long long)i, x[i], y[i], o[i], r);
    }
    CHECK(bad == 0, "intdiv_i32: %lld results differ from NumPy's // and %% (0 for division by 0)", (long long)bad);
  }
  free(x), free(y), free(o);
}

static void check_half(LoomrtStream *s) {
  int64_t n = 65536; /* every float16 bit pattern */
  uint16_t *x = malloc((size_t)n * 2), *o = malloc((size_t)n * 2);
  for (int64_t i = 0; i < n; i++) x[i] = (uint16_t)i;
  int64_t st[2] = {1, 1};
  if (launch("half_f16", s, 1, &n, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      volatile float t = (float)half_value(x[i]) * 2.0f;
      float r = t + 1.0f;
      uint16_t want = half_of(r);
      bool ok = isnan(r) ? ((o[i] & 0x7c00) == 0x7c00 && (o[i] & 1023)) : o[i] == want;
      if (!ok && bad++ < 3) fprintf(stderr, "  half[%04x]: got %04x want %04x\n", (unsigned)x[i], (unsigned)o[i], (unsigned)want);
    }
    CHECK(bad == 0, "half_f16: %lld of the 65536 float16 inputs give another x*2+1", (long long)bad);
  }
  free(x), free(o);
}

static void check_greater(LoomrtStream *s) {
  int64_t n = 70001;
  float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  bool *o = malloc((size_t)n);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)urand();
    y[i] = i % 5 ? (float)urand() : x[i];
  }
  x[7] = NAN, y[8] = NAN, x[9] = INFINITY;
  int64_t st[3] = {1, 1, 1};
  if (launch("greater_b1", s, 1, &n, 3, (void *[]){x, y, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += o[i] != (x[i] > y[i]);
    CHECK(bad == 0, "greater_b1: %lld results differ", (long long)bad);
  }
  free(x), free(y), free(o);
}

static void check_rowsum(LoomrtStream *s, int64_t m, int64_t k) {
  float *x = malloc((size_t)(m * k + 1) * 4), *o = malloc((size_t)(m + 1) * 4);
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(urand() * 2 - 1);
  int64_t shape[2] = {m, k}, st[4] = {k, 1, 1, 0};
  for (int64_t i = 0; i < m; i++) o[i] = -1;
  if (launch("rowsum_f32", s, 2, shape, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t r = 0; r < m; r++) {
      double sum = 0, mag = 0;
      for (int64_t j = 0; j < k; j++) sum += x[r * k + j], mag += fabs(x[r * k + j]);
      bad += !(fabs(o[r] - sum) <= 1e-6 * mag + 1e-30);
    }
    CHECK(bad == 0, "rowsum_f32 (%lld, %lld): %lld rows off the float64 sum", (long long)m, (long long)k, (long long)bad);
  }
  free(x), free(o);
}

static void check_colmax(LoomrtStream *s) {
  int64_t m = 517, n = 33; /* x (m, n) row-major; the kernel keeps n (columns) and reduces m */
  double *x = malloc((size_t)(m * n) * 8), *o = malloc((size_t)n * 8);
  for (int64_t i = 0; i < m * n; i++) x[i] = urand() * 1e6 - 5e5;
  x[5 * n + 3] = NAN; /* column 3 has a NaN: max propagates it */
  x[100 * n + 4] = INFINITY;
  int64_t shape[2] = {n, m}, st[4] = {1, n, 1, 0};
  if (launch("colmax_f64", s, 2, shape, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t c = 0; c < n; c++) {
      double mx = -INFINITY;
      bool nan = false;
      for (int64_t r = 0; r < m; r++) nan |= isnan(x[r * n + c]), mx = x[r * n + c] > mx ? x[r * n + c] : mx;
      bad += nan ? !isnan(o[c]) : o[c] != mx;
    }
    CHECK(bad == 0, "colmax_f64: %lld columns wrong", (long long)bad);
  }
  free(x), free(o);
}

static void check_argmax(LoomrtStream *s) {
  int64_t m = 64, k = 1000;
  float *x = malloc((size_t)(m * k) * 4);
  int64_t *o = malloc((size_t)m * 8);
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(int)(urand() * 50); /* many ties: the first wins */
  x[3 * k + 500] = NAN, x[3 * k + 700] = NAN; /* the first NaN wins */
  int64_t shape[2] = {m, k}, st[4] = {k, 1, 1, 0};
  if (launch("argmax_f32", s, 2, shape, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t r = 0; r < m; r++) {
      int64_t best = 0;
      for (int64_t j = 1; j < k && !isnan(x[r * k + best]); j++)
        if (isnan(x[r * k + j]) || x[r * k + j] > x[r * k + best]) best = j;
      bad += o[r] != best;
    }
    CHECK(bad == 0, "argmax_f32: %lld rows wrong", (long long)bad);
  }
  free(x), free(o);
}

static void check_bcast(LoomrtStream *s) {
  int64_t m = 301, n = 257;
  float *x = malloc((size_t)(m * n) * 4), *row = malloc((size_t)n * 4), *o = malloc((size_t)(m * n) * 4);
  for (int64_t i = 0; i < m * n; i++) x[i] = (float)urand();
  for (int64_t j = 0; j < n; j++) row[j] = (float)j;
  int64_t shape[2] = {m, n}, st[6] = {n, 1, 0, 1, n, 1};
  if (launch("bcast_add_f32", s, 2, shape, 3, (void *[]){x, row, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < m * n; i++) bad += o[i] != x[i] + row[i % n];
    CHECK(bad == 0, "bcast_add_f32: %lld results wrong", (long long)bad);
  }
  /* a stride the code was not compiled for is refused, with a message */
  int64_t badst[6] = {n, 1, 0, 2, n, 1};
  CHECK(loomrt_launch(bun, "bcast_add_f32", s, 2, shape, 3, (void *[]){x, row, o}, badst) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "compiled for stride 1 there"),
        "a wrong stride: %s", loomrt_last_error(rt));
  free(x), free(row), free(o);
}

static void check_strided(LoomrtStream *s) {
  int64_t n = 1001;
  double *x = malloc((size_t)(2 * n) * 8), *o = malloc((size_t)n * 8);
  for (int64_t i = 0; i < 2 * n; i++) x[i] = (double)i;
  int64_t st[2] = {2, 1};
  if (launch("strided_scale_f64", s, 1, &n, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += o[i] != 3.0 * (double)(2 * i);
    CHECK(bad == 0, "strided_scale_f64 (stride 2): %lld wrong", (long long)bad);
  }
  int64_t neg[2] = {-1, 1}; /* reversed: base at the last element */
  if (launch("strided_scale_f64", s, 1, &n, 2, (void *[]){x + n - 1, o}, neg) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += o[i] != 3.0 * (double)(n - 1 - i);
    CHECK(bad == 0, "strided_scale_f64 (stride -1): %lld wrong", (long long)bad);
  }
  free(x), free(o);
  /* 64-bit indexing: two elements 2^31 elements apart (16 GiB of address space, two pages of memory) */
  size_t span = ((size_t)1 << 34) + 4096;
  unsigned char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (area == MAP_FAILED) {
    printf("loomrt_check: 64-bit index case skipped (no 16 GiB of address space)\n");
    return;
  }
  double *far = (double *)(void *)area, out2[2] = {0, 0};
  if (mprotect(area, 4096, PROT_READ | PROT_WRITE) == 0 && mprotect(area + ((size_t)1 << 34), 4096, PROT_READ | PROT_WRITE) == 0) {
    far[0] = 1.5;
    far[(size_t)1 << 31] = -2.25;
    int64_t two = 2, wide[2] = {(int64_t)1 << 31, 1};
    if (launch("strided_scale_f64", s, 1, &two, 2, (void *[]){far, out2}, wide) == LOOM_OK)
      CHECK(out2[0] == 4.5 && out2[1] == -6.75, "64-bit indexing: got %g %g", out2[0], out2[1]);
  }
  munmap(area, span);
}

static void check_softmax(LoomrtStream *s) {
  int64_t m = 129, k = 1031;
  float *x = malloc((size_t)(m * k) * 4), *o = malloc((size_t)(m * k) * 4);
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(urand() * 60 - 30);
  int64_t shape[2] = {m, k}, st[4] = {k, 1, k, 1};
  if (launch("softmax_f32", s, 2, shape, 2, (void *[]){x, o}, st) == LOOM_OK) {
    int64_t bad = 0;
    for (int64_t r = 0; r < m; r++) {
      /* x - max is rounded to float32 in the kernel (float32 semantics): the reference does the same,
       * then works in float64 */
      float mx = -INFINITY;
      double sum = 0;
      for (int64_t j = 0; j < k; j++) mx = x[r * k + j] > mx ? x[r * k + j] : mx;
      for (int64_t j = 0; j < k; j++) {
        volatile float dx = x[r * k + j] - mx;
        sum += exp((double)dx);
      }
      for (int64_t j = 0; j < k; j++) {
        volatile float dx = x[r * k + j] - mx;
        double want = exp((double)dx) / sum;
        bad += !(fabs(o[r * k + j] - want) <= 2e-6 * want + 1e-38);
      }
    }
    CHECK(bad == 0, "softmax_f32: %lld values off", (long long)bad);
  }
  free(x), free(o);
}

static void check_mean(LoomrtStream *s, int64_t n) {
  double *x = malloc((size_t)(n + 1) * 8), o = -1;
  double sum = 0;
  for (int64_t i = 0; i < n; i++) x[i] = urand() * 10 - 3, sum += x[i];
  int64_t st[2] = {1, 0};
  if (launch("mean_f64", s, 1, &n, 2, (void *[]){x, &o}, st) == LOOM_OK) {
    if (n == 0) CHECK(isnan(o), "mean of nothing: got %g, want NaN", o);
    else CHECK(fabs(o - sum / (double)n) <= 1e-12 * fabs(sum / (double)n) + 1e-15, "mean_f64 n=%lld: %.17g vs %.17g", (long long)n, o,
               sum / (double)n);
  }
  free(x);
}

/* Kernels with scalar parameters: loomrt_launch_params, many values (NaN, -0.0, inf, integer wrap), the
 * split reduction path, and the refusals. */
static LoomStatus launch_p(const char *entry, LoomrtStream *s, int ndim, const int64_t *shape, int nbuf, void *const *bufs,
                           const int64_t *strides, int nparam, const void *const *params) {
  LoomStatus st = loomrt_launch_params(bun, entry, s, ndim, shape, nbuf, bufs, strides, nparam, params);
  CHECK(st == LOOM_OK, "%s: %s", entry, loomrt_last_error(rt));
  return st;
}

static void check_params(LoomrtStream *s) {
  LoomrtEntryInfo info;
  CHECK(loomrt_entry_info(bun, "scale_shift_f32", &info) == LOOM_OK && info.nparam == 2 &&
            info.param_dtype[0] == LOOM_FLOAT32 && info.param_dtype[1] == LOOM_FLOAT32,
        "scale_shift_f32 info: %d parameters", info.nparam);
  int64_t n = 1000003, st2[2] = {1, 1};
  float *x = malloc((size_t)n * 4), *o = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) x[i] = i % 1000 == 7 ? NAN : (float)(urand() * 200 - 100);
  x[0] = 0.0f, x[1] = -0.0f, x[2] = INFINITY;
  const float av[] = {2.0f, -0.0f, INFINITY, NAN, 1e-40f, -3.5f}, bv[] = {0.5f, -0.0f, -1.0f, 0.0f, 7.0f, NAN};
  for (int v = 0; v < 6; v++) {
    if (launch_p("scale_shift_f32", s, 1, &n, 2, (void *[]){x, o}, st2, 2, (const void *[]){&av[v], &bv[v]}) != LOOM_OK) break;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
      volatile float t = x[i] * av[v];
      float r = t + bv[v];
      bad += isnan(r) ? !isnan(o[i]) : memcmp(&r, &o[i], 4) != 0;
    }
    CHECK(bad == 0, "scale_shift_f32 a=%g b=%g: %lld results differ", (double)av[v], (double)bv[v], (long long)bad);
  }
  CHECK(loomrt_launch(bun, "scale_shift_f32", s, 1, &n, 2, (void *[]){x, o}, st2) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "loomrt_launch_params"),
        "loomrt_launch of a kernel with parameters: %s", loomrt_last_error(rt));
  CHECK(loomrt_launch_params(bun, "scale_shift_f32", s, 1, &n, 2, (void *[]){x, o}, st2, 1, (const void *[]){&av[0]}) ==
            LOOM_ERR_INVALID_ARGUMENT && strstr(loomrt_last_error(rt), "takes 2"),
        "a wrong parameter count: %s", loomrt_last_error(rt));
  CHECK(loomrt_launch_params(bun, "scale_shift_f32", s, 1, &n, 2, (void *[]){x, o}, st2, 2, (const void *[]){&av[0], NULL}) ==
            LOOM_ERR_INVALID_ARGUMENT, "a NULL parameter was accepted");
  free(x), free(o);

  int64_t m = 300001, s2[2] = {1, 0};
  int16_t *xi = malloc((size_t)m * 2);
  for (int64_t i = 0; i < m; i++) xi[i] = (int16_t)((i * 7919) % 65536 - 32768);
  const int16_t kv[] = {3, -32768, 32767, 0};
  const double sv[] = {0.25, -1.5, 1e-300, -0.0};
  for (int v = 0; v < 4; v++) {
    double out = 0, ref = 0, mag = 0;
    for (int64_t i = 0; i < m; i++) {
      double t = (double)(int16_t)(uint16_t)((uint16_t)xi[i] - (uint16_t)kv[v]) * sv[v];
      ref += t, mag += fabs(t);
    }
    if (launch_p("sumk_i16", s, 1, &m, 2, (void *[]){xi, &out}, s2, 2, (const void *[]){&kv[v], &sv[v]}) != LOOM_OK) break;
    CHECK(fabs(out - ref) <= 1e-12 * mag, "sumk_i16 k=%d s=%g: %.17g vs %.17g", kv[v], sv[v], out, ref);
  }
  free(xi);
}

static void check_errors(void) {
  float x[4] = {0}, y[4] = {0}, o[4];
  int64_t n = 4, st[3] = {1, 1, 1};
  CHECK(loomrt_launch(bun, "no_such_kernel", host, 1, &n, 3, (void *[]){x, y, o}, st) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "has no entry 'no_such_kernel'"), "unknown entry: %s", loomrt_last_error(rt));
  CHECK(loomrt_launch(bun, "axpb_f32", host, 2, (int64_t[]){2, 2}, 3, (void *[]){x, y, o}, st) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "the kernel has ndim 1 and 3 buffers"), "wrong ndim: %s", loomrt_last_error(rt));
  CHECK(loomrt_launch(bun, "axpb_f32", host, 1, &n, 3, (void *[]){x, NULL, o}, st) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "buffer 1 is NULL"), "NULL buffer: %s", loomrt_last_error(rt));
  CHECK(loomrt_launch(bun, "axpb_f32", host, 1, (int64_t[]){-3}, 3, (void *[]){x, y, o}, st) == LOOM_ERR_INVALID_ARGUMENT,
        "negative size accepted");
  int64_t zero = 0;
  CHECK(loomrt_launch(bun, "axpb_f32", host, 1, &zero, 3, (void *[]){NULL, NULL, NULL}, st) == LOOM_OK, "an empty launch failed: %s",
        loomrt_last_error(rt));
  LoomrtEntryInfo info;
  CHECK(loomrt_entry_info(bun, "rowsum_f32", &info) == LOOM_OK && info.ndim == 2 && info.nkeep == 1 && info.nbuf == 2 &&
            info.dtype[0] == LOOM_FLOAT32 && info.is_output[1] && info.index_widths == 3 && info.layout[0][1] == 2,
        "entry_info of rowsum_f32");
  LoomrtBundle *none = NULL;
  CHECK(loomrt_bundle_open(rt, "/nonexistent/x.lbun", &none) == LOOM_ERR_INVALID_ARGUMENT && !none &&
            strstr(loomrt_last_error(rt), "cannot open bundle"), "missing file: %s", loomrt_last_error(rt));
  unsigned char junk[100] = "definitely not a bundle";
  CHECK(loomrt_bundle_open_memory(rt, junk, sizeof junk, &none) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "not a loom bundle"), "junk: %s", loomrt_last_error(rt));
}

/* ---- GPU (skipped without a CUDA device) ------------------------------------------------------------- */
static void *to_dev(const void *h, size_t bytes) {
  void *d = NULL;
  if (loomrt_cuda_alloc(rt, 0, bytes ? bytes : 1, &d) != LOOM_OK) return NULL;
  if (bytes) loomrt_cuda_copy(rt, 0, d, h, bytes, 0);
  return d;
}

/* Per kernel: a fresh open of the bundle, the entry's first launch (its code checked and loaded) and the
 * stream synchronized: the time from bundle load to the first kernel finished, on 2^20-point spaces of
 * zeros (parameters 1). The driver and the context are up already (timed apart above). Prints one line
 * per entry and the largest; returns that (ms), or -1 when nothing ran. */
static double time_entries(const char *path, LoomrtStream *s, LoomDeviceKind kind) {
  static const int sizes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8}; /* LoomDType order */
  LoomrtBundle *list;
  if (loomrt_bundle_open(rt, path, &list) != LOOM_OK) return -1;
  double worst = -1, total = 0;
  int nrun = 0;
  for (int32_t i = 0; i < loomrt_bundle_entry_count(list); i++) {
    const char *name = loomrt_bundle_entry_name(list, i);
    LoomrtEntryInfo info;
    if (loomrt_entry_info(list, name, &info) != LOOM_OK || info.nbuf > 16 || info.ndim < 1 || info.ndim > 3 || info.nparam > 16)
      continue;
    int64_t shape[3] = {1 << 20, 1, 1};
    if (info.ndim == 2) shape[0] = shape[1] = 1024;
    if (info.ndim == 3) shape[0] = 64, shape[1] = shape[2] = 128;
    int64_t strides[16 * 3];
    void *bufs[16] = {0};
    uint64_t pvals[16];
    const void *params[16];
    bool ok = true, skip = false;
    for (int b = 0; b < info.nbuf && ok; b++) {
      int64_t run = 1; /* elements spanned by the dims laid out so far */
      for (int dd = info.ndim - 1; dd >= 0; dd--) {
        int lay = info.layout[b][dd]; /* KLayout: 0 any, 1 zero, 2 unit, 3 stride -1, 4..6 strides 2..4 */
        skip |= lay == 3;             /* a reversed buffer: not timed */
        /* a class fixes the stride (0, 1, 2..4) whatever the dim's place; any: past what is laid out */
        int64_t st = lay == 1 ? 0 : lay == 2 ? 1 : lay >= 4 && lay <= 6 ? lay - 2 : run;
        strides[b * info.ndim + dd] = st;
        run += (shape[dd] > 0 ? shape[dd] - 1 : 0) * st;
      }
      size_t bytes = (size_t)run * (size_t)sizes[info.dtype[b] < 12 ? info.dtype[b] : 11];
      void *zeros = calloc(1, bytes);
      ok = zeros && loomrt_alloc(rt, kind, 0, bytes, &bufs[b]) == LOOM_OK &&
           loomrt_copy(rt, kind, 0, bufs[b], zeros, bytes, 0) == LOOM_OK;
      free(zeros);
    }
    for (int p = 0; p < info.nparam; p++) {
      LoomDType t = info.param_dtype[p];
      pvals[p] = 0;
      if (t == LOOM_FLOAT32) {
        float one = 1;
        memcpy(&pvals[p], &one, 4);
      } else if (t == LOOM_FLOAT64) {
        double one = 1;
        memcpy(&pvals[p], &one, 8);
      } else {
        pvals[p] = 1; /* little-endian: 1 in the value's first bytes whatever its width */
      }
      params[p] = &pvals[p];
    }
    LoomrtBundle *b2 = NULL;
    double t0 = now_ms();
    if (skip) ok = false;
    LoomStatus st = ok ? loomrt_bundle_open(rt, path, &b2) : LOOM_ERR_OUT_OF_MEMORY;
    if (st == LOOM_OK)
      st = loomrt_launch_params(b2, name, s, info.ndim, shape, info.nbuf, bufs, strides, info.nparam, params);
    if (st == LOOM_OK) st = loomrt_stream_synchronize(s);
    double t1 = now_ms();
    double warm = -1;
    if (st == LOOM_OK) {
      double t2 = now_ms();
      st = loomrt_launch_params(b2, name, s, info.ndim, shape, info.nbuf, bufs, strides, info.nparam, params);
      if (st == LOOM_OK) st = loomrt_stream_synchronize(s);
      warm = now_ms() - t2;
    }
    CHECK(st == LOOM_OK || skip, "timing %s: %s", name, loomrt_last_error(rt));
    if (st == LOOM_OK) {
      printf("loomrt_check: GPU %-18s bundle open to first kernel finished %7.3f ms (a second launch %.3f ms)\n", name,
             t1 - t0, warm);
      if (t1 - t0 > worst) worst = t1 - t0;
      total += t1 - t0;
      nrun++;
    }
    loomrt_bundle_close(b2);
    for (int b = 0; b < info.nbuf; b++)
      if (bufs[b]) loomrt_free(rt, kind, 0, bufs[b]);
  }
  loomrt_bundle_close(list);
  if (nrun)
    printf("loomrt_check: GPU bundle open to first kernel finished, per kernel: largest %.3f ms, mean %.3f ms over %d "
           "kernels (target < 1 ms)\n", worst, total / nrun, nrun);
  return worst;
}

static void check_gpu(const char *path) {
  int ndev = loomrt_cuda_device_count(rt);
  if (ndev == 0) {
    printf("loomrt_check: GPU part skipped (no CUDA device: %s)\n", loomrt_last_error(rt)[0] ? loomrt_last_error(rt) : "none");
    return;
  }
  /* time: a fresh runtime and bundle, opened and the first kernel finished */
  LoomrtRuntime *rt2;
  LoomrtBundle *b2;
  LoomrtStream *cs;
  double t0 = now_ms();
  if (loomrt_create(NULL, &rt2) != LOOM_OK) return;
  LoomStatus st = loomrt_cuda_stream_create(rt2, 0, &cs);
  double t1 = now_ms();
  int64_t n = 1 << 20;
  float *hx = malloc((size_t)n * 4), *hy = malloc((size_t)n * 4), *ho = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) hx[i] = (float)i, hy[i] = 1;
  void *dx = NULL, *dy = NULL, *dout = NULL;
  if (st == LOOM_OK) st = loomrt_cuda_alloc(rt2, 0, (size_t)n * 4, &dx);
  if (st == LOOM_OK) st = loomrt_cuda_alloc(rt2, 0, (size_t)n * 4, &dy);
  if (st == LOOM_OK) st = loomrt_cuda_alloc(rt2, 0, (size_t)n * 4, &dout);
  if (st == LOOM_OK) st = loomrt_cuda_copy(rt2, 0, dx, hx, (size_t)n * 4, 0);
  if (st == LOOM_OK) st = loomrt_cuda_copy(rt2, 0, dy, hy, (size_t)n * 4, 0);
  double t2 = now_ms();
  if (st == LOOM_OK) st = loomrt_bundle_open(rt2, path, &b2);
  int64_t s3[3] = {1, 1, 1};
  if (st == LOOM_OK) st = loomrt_launch(b2, "axpb_f32", cs, 1, &n, 3, (void *[]){dx, dy, dout}, s3);
  if (st == LOOM_OK) st = loomrt_stream_synchronize(cs);
  double t3 = now_ms();
  if (st == LOOM_ERR_UNSUPPORTED && strstr(loomrt_last_error(rt2), "no GPU code")) { /* built without ptxas/libdevice */
    printf("loomrt_check: GPU part skipped (%s)\n", loomrt_last_error(rt2));
    free(hx), free(hy), free(ho);
    loomrt_stream_destroy(cs);
    loomrt_destroy(rt2);
    return;
  }
  CHECK(st == LOOM_OK, "GPU axpb_f32: %s", loomrt_last_error(rt2));
  if (st == LOOM_OK) {
    loomrt_cuda_copy(rt2, 0, ho, dout, (size_t)n * 4, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += ho[i] != 2.5f * hx[i] + 1.0f;
    CHECK(bad == 0, "GPU axpb_f32: %lld wrong", (long long)bad);
    printf("loomrt_check: GPU: driver + context %.2f ms, bundle open to first kernel finished %.3f ms\n", t1 - t0, t3 - t2);
  }
  free(hx), free(hy), free(ho);
  loomrt_stream_destroy(cs);
  loomrt_destroy(rt2);

  /* the entries on device 0, against the same references as the host's (through host copies) */
  LoomrtStream *s;
  if (loomrt_cuda_stream_create(rt, 0, &s) != LOOM_OK) {
    CHECK(0, "GPU stream: %s", loomrt_last_error(rt));
    return;
  }
  int64_t m = 300, k = 70000;
  float *x = malloc((size_t)(m * k) * 4), *o = malloc((size_t)m * 4);
  for (int64_t i = 0; i < m * k; i++) x[i] = (float)(urand() * 2 - 1);
  void *dx2 = to_dev(x, (size_t)(m * k) * 4), *do2 = to_dev(NULL, (size_t)m * 4);
  int64_t shape[2] = {m, k}, st4[4] = {k, 1, 1, 0};
  if (dx2 && do2 && launch("rowsum_f32", s, 2, shape, 2, (void *[]){dx2, do2}, st4) == LOOM_OK) {
    loomrt_stream_synchronize(s);
    loomrt_cuda_copy(rt, 0, o, do2, (size_t)m * 4, 1);
    int64_t bad = 0;
    for (int64_t r = 0; r < m; r++) {
      double sum = 0, mag = 0;
      for (int64_t j = 0; j < k; j++) sum += x[r * k + j], mag += fabs(x[r * k + j]);
      bad += !(fabs(o[r] - sum) <= 1e-6 * mag);
    }
    CHECK(bad == 0, "GPU rowsum_f32: %lld rows off", (long long)bad);
  }
  loomrt_cuda_free(rt, 0, dx2), loomrt_cuda_free(rt, 0, do2);
  free(x), free(o);
  int64_t nm = 3000017;
  double *xm = malloc((size_t)nm * 8), om = 0, sum = 0;
  for (int64_t i = 0; i < nm; i++) xm[i] = urand(), sum += xm[i];
  void *dxm = to_dev(xm, (size_t)nm * 8), *dom = to_dev(NULL, 8);
  int64_t s2[2] = {1, 0};
  if (dxm && dom && launch("mean_f64", s, 1, &nm, 2, (void *[]){dxm, dom}, s2) == LOOM_OK) {
    loomrt_stream_synchronize(s);
    loomrt_cuda_copy(rt, 0, &om, dom, 8, 1);
    CHECK(fabs(om - sum / (double)nm) <= 1e-12, "GPU mean_f64: %.17g vs %.17g", om, sum / (double)nm);
  }
  loomrt_cuda_free(rt, 0, dxm), loomrt_cuda_free(rt, 0, dom);
  free(xm);
  int64_t np1 = 100003, u2[2] = {1, 1};
  float *xp = malloc((size_t)np1 * 4), *op = malloc((size_t)np1 * 4), a = -1.75f, b = 0.5f;
  for (int64_t i = 0; i < np1; i++) xp[i] = (float)(urand() * 2 - 1);
  void *dxp = to_dev(xp, (size_t)np1 * 4), *dop = to_dev(NULL, (size_t)np1 * 4);
  if (dxp && dop && loomrt_launch_params(bun, "scale_shift_f32", s, 1, &np1, 2, (void *[]){dxp, dop}, u2, 2,
                                         (const void *[]){&a, &b}) == LOOM_OK) {
    loomrt_stream_synchronize(s);
    loomrt_cuda_copy(rt, 0, op, dop, (size_t)np1 * 4, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < np1; i++) bad += fabsf(op[i] - (xp[i] * a + b)) > 1e-6f;
    CHECK(bad == 0, "GPU scale_shift_f32 (parameters in the parameter block): %lld wrong", (long long)bad);
  } else {
    CHECK(0, "GPU scale_shift_f32: %s", loomrt_last_error(rt));
  }
  loomrt_cuda_free(rt, 0, dxp), loomrt_cuda_free(rt, 0, dop);
  free(xp), free(op);
  time_entries(path, s, LOOM_DEVICE_CUDA);
  loomrt_stream_destroy(s);
  printf("loomrt_check: GPU entries checked on device 0\n");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: loomrt_check BUNDLE\n");
    return 2;
  }
  double t0 = now_ms();
  if (loomrt_create(NULL, &rt) != LOOM_OK) return 1;
  host = loomrt_host_stream(rt);
  double tc = now_ms();
  if (loomrt_bundle_open(rt, argv[1], &bun) != LOOM_OK) {
    fprintf(stderr, "loomrt_check: %s\n", loomrt_last_error(rt));
    return 1;
  }
  check_axpb(host, 1000);
  double t1 = now_ms();
  printf("loomrt_check: host level %d: runtime created in %.3f ms, then bundle opened to the first kernel finished "
         "in %.3f ms\n", loomrt_host_level(), tc - t0, t1 - tc);
  check_axpb(host, 0);
  check_axpb(host, 1);
  check_axpb(host, 1000003);
  check_math(host);
  check_intdiv(host);
  check_half(host);
  check_greater(host);
  check_rowsum(host, 1000, 50);
  check_rowsum(host, 3, 300001); /* few long rows: the split (partial/finish) path */
  check_rowsum(host, 5, 0);      /* empty rows: the identity */
  check_colmax(host);
  check_argmax(host);
  check_bcast(host);
  check_strided(host);
  check_softmax(host);
  check_mean(host, 1000003);
  check_mean(host, 3);
  check_mean(host, 0);
  check_params(host);
  check_errors();
  if (!getenv("LOOMRT_CHECK_NO_GPU")) check_gpu(argv[1]); /* the bundle of another test: its GPU part runs there */
  loomrt_bundle_close(bun);
  loomrt_destroy(rt);
  if (check_failed) {
    fprintf(stderr, "loomrt_check: %d failure(s)\n", check_failed);
    return 1;
  }
  printf("loomrt_check: all entries match their references\n");
  return 0;
}
