/* SPDX-License-Identifier: Apache-2.0 */
/* test_user_kernel.c: user kernels end to end (runtime/user_kernel.c, codegen/snippet.c) on the host.
 *
 * Approach: CuPy's user-guide examples (squared difference with concrete and generic types, the
 * reversed add with raw and _ind.size(), the L2 norm along an axis) and snippets with control flow,
 * each compared with the same computation written as loops right here; reductions on shapes that
 * take every host strategy (inner, outer, split); errors whose first line is pinned.
 * test_instantiation_cache: repeated calls with new sizes reuse the kernel object's cached
 * instantiation (no compile in loom_get_stats, one cache hit per call); new dtypes or layouts add one,
 * and more signatures than the cache holds still give right results (eviction).
 * test_loop_prep: loop_prep / after_loop (loom_elementwise_kernel_create_ex): constants computed once
 * per worker, per-worker state checked in ways that do not depend on how points are split among
 * workers, pinned region errors, and the PTX of such kernels assembled by ptxas (when installed); the
 * same runs on a CUDA device when there is one (skipped otherwise).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

static int passed, failed;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) passed++;                                    \
    else {                                                 \
      failed++;                                            \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

static LoomContext *ctx;

static LoomArray arr(void *data, LoomDType t, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = s;
    s *= shape[i];
  }
  return a;
}

static LoomArray none(void) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  return a;
}

static void first_line(char *buf, size_t n, const char *s) {
  snprintf(buf, n, "%s", s);
  char *nl = strchr(buf, '\n');
  if (nl) *nl = 0;
}

static void test_squared_diff(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create(ctx, "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)",
                                                 "squared_diff", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  float x[10], y[5];
  for (int i = 0; i < 10; i++) x[i] = (float)i;
  for (int i = 0; i < 5; i++) y[i] = (float)(2 * i) - 1.5f;
  LoomArray in[2] = {arr(x, LOOM_FLOAT32, 2, (int64_t[]){2, 5}), arr(y, LOOM_FLOAT32, 1, (int64_t[]){5})};
  LoomArray out[1] = {none()};
  st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
  CHECK(st == LOOM_OK, "call: %s", loom_last_error(ctx));
  if (!st) {
    CHECK(out[0].ndim == 2 && out[0].shape[0] == 2 && out[0].shape[1] == 5 && out[0].dtype == LOOM_FLOAT32, "shape");
    const float *z = out[0].data;
    int bad = 0;
    for (int i = 0; i < 10; i++) {
      float dd = x[i] - y[i % 5];
      bad += z[i] != dd * dd;
    }
    CHECK(bad == 0, "squared_diff: %d wrong", bad);
    loom_array_free(ctx, &out[0]);
  }
  loom_user_kernel_destroy(k);
}

static void test_squared_diff_generic(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create(ctx, "T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic",
                                                 NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  /* float64 */
  double x[10], y[10];
  for (int i = 0; i < 10; i++) x[i] = i * 0.5, y[i] = 9 - i;
  LoomArray in[2] = {arr(x, LOOM_FLOAT64, 1, (int64_t[]){10}), arr(y, LOOM_FLOAT64, 1, (int64_t[]){10})};
  LoomArray out[1] = {none()};
  st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
  CHECK(st == LOOM_OK && out[0].dtype == LOOM_FLOAT64, "call f64: %s", loom_last_error(ctx));
  if (!st) {
    int bad = 0;
    for (int i = 0; i < 10; i++) bad += ((double *)out[0].data)[i] != (x[i] - y[i]) * (x[i] - y[i]);
    CHECK(bad == 0, "generic f64: %d wrong", bad);
    loom_array_free(ctx, &out[0]);
  }
  /* int32, output given (binds T first) */
  int32_t xi[6] = {1, -2, 3, 100000, -5, 7}, yi[6] = {0, 2, -3, -100000, 5, 7}, zi[6];
  LoomArray ini[2] = {arr(xi, LOOM_INT32, 1, (int64_t[]){6}), arr(yi, LOOM_INT32, 1, (int64_t[]){6})};
  LoomArray outi[1] = {arr(zi, LOOM_INT32, 1, (int64_t[]){6})};
  st = loom_elementwise_kernel_call(k, 2, ini, 1, outi, -1);
  CHECK(st == LOOM_OK, "call i32: %s", loom_last_error(ctx));
  int bad = 0;
  for (int i = 0; i < 6; i++) {
    uint32_t dd = (uint32_t)xi[i] - (uint32_t)yi[i];
    bad += zi[i] != (int32_t)(dd * dd);
  }
  CHECK(bad == 0, "generic i32 (wrapping): %d wrong", bad);
  /* mismatched T */
  LoomArray mix[2] = {arr(x, LOOM_FLOAT64, 1, (int64_t[]){6}), arr(yi, LOOM_INT32, 1, (int64_t[]){6})};
  LoomArray o2[1] = {none()};
  st = loom_elementwise_kernel_call(k, 2, mix, 1, o2, -1);
  char line[512];
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_DTYPE &&
            !strcmp(line, "squared_diff_generic: type is mismatched: T is float64 from an earlier argument but 'y' is int32"),
        "mismatch: %d %s", st, line);
  loom_user_kernel_destroy(k);
}

static void test_reversed_add(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create(ctx, "raw T x", "T y", "y = x[i] + x[_ind.size() - i - 1]",
                                                 "add_reverse", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  float x[1000], y[1000];
  for (int i = 0; i < 1000; i++) x[i] = (float)i * 0.25f;
  LoomArray in[1] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){1000})};
  LoomArray out[1] = {arr(y, LOOM_FLOAT32, 1, (int64_t[]){1000})};
  st = loom_elementwise_kernel_call(k, 1, in, 1, out, -1);
  CHECK(st == LOOM_OK, "call: %s", loom_last_error(ctx));
  int bad = 0;
  for (int i = 0; i < 1000; i++) bad += y[i] != x[i] + x[999 - i];
  CHECK(bad == 0, "reversed add: %d wrong", bad);
  loom_user_kernel_destroy(k);

  /* all raw: size gives the points; out-of-range reads give 0 */
  st = loom_elementwise_kernel_create(ctx, "raw float32 x", "raw float32 y", "y[i] = x[i + 1] * 2", "shift", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  memset(y, 0, sizeof y);
  LoomArray in2[1] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){10})};
  LoomArray out2[1] = {arr(y, LOOM_FLOAT32, 1, (int64_t[]){10})};
  st = loom_elementwise_kernel_call(k, 1, in2, 1, out2, 10);
  CHECK(st == LOOM_OK, "call raw: %s", loom_last_error(ctx));
  bad = 0;
  for (int i = 0; i < 10; i++) bad += y[i] != (i + 1 < 10 ? x[i + 1] * 2 : 0.0f);
  CHECK(bad == 0, "raw shift: %d wrong", bad);
  st = loom_elementwise_kernel_call(k, 1, in2, 1, out2, -1);
  char line[512];
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strcmp(line, "shift: every argument is raw: pass size (the number of points)"),
        "no size: %s", line);
  loom_user_kernel_destroy(k);

  /* a raw in and a 0-d non-raw in with size: the 0-d one broadcast over the size points; the raw out not
   * given: allocated with size points (CuPy's) */
  st = loom_elementwise_kernel_create(ctx, "raw float32 x, float32 c", "raw float32 y", "y[i] = x[i] * c + i", "scale",
                                      NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  float c = 3.0f;
  LoomArray in3[2] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){12}), arr(&c, LOOM_FLOAT32, 0, NULL)};
  LoomArray out3[1] = {none()};
  st = loom_elementwise_kernel_call(k, 2, in3, 1, out3, 12);
  CHECK(st == LOOM_OK && out3[0].data && out3[0].ndim == 1 && out3[0].shape[0] == 12, "raw out allocated: %s",
        loom_last_error(ctx));
  if (st == LOOM_OK && out3[0].data) {
    const float *r = out3[0].data;
    bad = 0;
    for (int i = 0; i < 12; i++) bad += r[i] != x[i] * 3.0f + (float)i;
    CHECK(bad == 0, "scale: %d wrong", bad);
    loom_array_free(ctx, &out3[0]);
  }
  loom_user_kernel_destroy(k);
}

/* ReductionKernel L2 norm along axis 1 of (rows, cols), and other axes. */
static void test_l2norm(int64_t rows, int64_t cols) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_reduction_kernel_create(ctx, "T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm", NULL,
                                               NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  size_t n = (size_t)(rows * cols);
  double *x = malloc(n * sizeof *x);
  for (size_t i = 0; i < n; i++) x[i] = (double)((i * 7919) % 13) - 6;
  LoomArray in[1] = {arr(x, LOOM_FLOAT64, 2, (int64_t[]){rows, cols})};
  for (int axis = -1; axis <= 1; axis++) {
    LoomArray out[1] = {none()};
    int32_t ax = axis;
    st = loom_reduction_kernel_call(k, 1, in, 1, out, axis < 0 ? 0 : 1, axis < 0 ? NULL : &ax, axis == 0);
    CHECK(st == LOOM_OK, "call axis %d: %s", axis, loom_last_error(ctx));
    if (st) continue;
    int64_t no = axis < 0 ? 1 : axis == 0 ? cols : rows;
    int bad = 0;
    for (int64_t o = 0; o < no; o++) {
      double s = 0;
      if (axis < 0) for (size_t i = 0; i < n; i++) s += x[i] * x[i];
      else if (axis == 1) for (int64_t c = 0; c < cols; c++) s += x[o * cols + c] * x[o * cols + c];
      else for (int64_t r = 0; r < rows; r++) s += x[r * cols + o] * x[r * cols + o];
      double got = ((double *)out[0].data)[o];
      if (fabs(got - sqrt(s)) > 1e-12 * (1 + sqrt(s))) bad++;
    }
    CHECK(bad == 0, "l2norm %lldx%lld axis %d: %d wrong", (long long)rows, (long long)cols, axis, bad);
    if (axis == 0) CHECK(out[0].ndim == 2 && out[0].shape[0] == 1 && out[0].shape[1] == cols, "keepdims shape");
    loom_array_free(ctx, &out[0]);
  }
  free(x);
  loom_user_kernel_destroy(k);
}

/* A user combiner that is not a sum: max with argument-free identity, int32 in, float32 reduce type. */
static void test_reduce_custom(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_reduction_kernel_create(ctx, "int32 x", "float64 y", "x < 0 ? -x : x", "max(a, b)", "y = a + 0.5",
                                               "-1", "absmax", "int32", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  int32_t x[3 * 7];
  for (int i = 0; i < 21; i++) x[i] = (i * 37) % 23 - 11;
  LoomArray in[1] = {arr(x, LOOM_INT32, 2, (int64_t[]){3, 7})};
  double y[3];
  LoomArray out[1] = {arr(y, LOOM_FLOAT64, 1, (int64_t[]){3})};
  int32_t ax = 1;
  st = loom_reduction_kernel_call(k, 1, in, 1, out, 1, &ax, 0);
  CHECK(st == LOOM_OK, "call: %s", loom_last_error(ctx));
  int bad = 0;
  for (int r = 0; r < 3; r++) {
    int m = -1;
    for (int c = 0; c < 7; c++) m = abs(x[r * 7 + c]) > m ? abs(x[r * 7 + c]) : m;
    bad += y[r] != m + 0.5;
  }
  CHECK(bad == 0, "absmax: %d wrong", bad);
  /* empty reduction: identity then post */
  LoomArray in0[1] = {arr(x, LOOM_INT32, 2, (int64_t[]){3, 0})};
  st = loom_reduction_kernel_call(k, 1, in0, 1, out, 1, &ax, 0);
  CHECK(st == LOOM_OK && y[0] == -0.5 && y[2] == -0.5, "empty: %s %g", loom_last_error(ctx), y[0]);
  loom_user_kernel_destroy(k);
}

/* Control flow: loops, break/continue, ternaries, integer / and %, helpers from the preamble. */
static void test_control_flow(void) {
  LoomUserKernel *k = NULL;
  const char *pre = "__device__ int collatz(int v) { int n = 0; while (v > 1 && n < 1000) { v = (v % 2) ? 3 * v + 1 : v / 2; n++; } return n; }";
  const char *op =
      "int s = 0;\n"
      "for (int j = 0; j < x; j++) { if (j % 3 == 0) continue; if (j > 50) break; s += j; }\n"
      "a = s;\n"
      "b = collatz(x + 1);\n"
      "if (x & 1) c = x / (x - 5); /* x == 5: 0 */\n"
      "d = (x > 10 && x / (x - 11) > 0) || x == 3 ? 1.5 : -2.0;";
  LoomStatus st = loom_elementwise_kernel_create(ctx, "int32 x", "int32 a, int32 b, int32 c, float32 d", op, "flow", pre,
                                                 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  enum { N = 64 };
  int32_t x[N], a[N], b[N], c[N];
  float dd[N];
  for (int i = 0; i < N; i++) x[i] = i, c[i] = -7;
  LoomArray in[1] = {arr(x, LOOM_INT32, 1, (int64_t[]){N})};
  LoomArray out[4] = {arr(a, LOOM_INT32, 1, (int64_t[]){N}), arr(b, LOOM_INT32, 1, (int64_t[]){N}),
                      arr(c, LOOM_INT32, 1, (int64_t[]){N}), arr(dd, LOOM_FLOAT32, 1, (int64_t[]){N})};
  st = loom_elementwise_kernel_call(k, 1, in, 4, out, -1);
  CHECK(st == LOOM_OK, "call: %s", loom_last_error(ctx));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    int s = 0;
    for (int j = 0; j < i; j++) {
      if (j % 3 == 0) continue;
      if (j > 50) break;
      s += j;
    }
    int v = i + 1, n = 0;
    while (v > 1 && n < 1000) v = (v % 2) ? 3 * v + 1 : v / 2, n++;
    int cc = (i & 1) ? (i - 5 == 0 ? 0 : i / (i - 5)) : -7; /* unwritten outputs keep their value */
    float df = ((i > 10 && (i - 11 != 0 ? i / (i - 11) : 0) > 0) || i == 3) ? 1.5f : -2.0f;
    if (a[i] != s || b[i] != n || c[i] != cc || dd[i] != df) {
      if (bad < 5) fprintf(stderr, "flow x=%d: a %d/%d b %d/%d c %d/%d d %g/%g\n", i, a[i], s, b[i], n, c[i], cc, dd[i], df);
      bad++;
    }
  }
  CHECK(bad == 0, "control flow: %d wrong", bad);
  loom_user_kernel_destroy(k);
}

/* Big enough for the parallel and split paths; results compared with serial loops. */
static void test_large(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_reduction_kernel_create(ctx, "float32 x", "float32 y", "x", "a + b", "y = a", "0", "usum", NULL,
                                               NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  int64_t n = 1 << 22;
  float *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 17);
  LoomArray in[1] = {arr(x, LOOM_FLOAT32, 1, &n)};
  float y = 0;
  LoomArray out[1] = {arr(&y, LOOM_FLOAT32, 0, NULL)};
  st = loom_reduction_kernel_call(k, 1, in, 1, out, 0, NULL, 0);
  double ref = 0;
  for (int64_t i = 0; i < n; i++) ref += x[i];
  CHECK(st == LOOM_OK && fabs(y - ref) <= 1e-5 * ref, "large sum: %s %g vs %g", loom_last_error(ctx), y, ref);
  loom_user_kernel_destroy(k);
  free(x);
}

static void test_errors(void) {
  LoomUserKernel *k = NULL;
  char line[512];
  LoomStatus st = loom_elementwise_kernel_create(ctx, "float32 x", "float32 y", "y = x + ;", "bad", NULL, 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strncmp(line, "bad:1:", 6), "syntax error: %d %s", st, line);
  CHECK(strchr(loom_last_error(ctx), '^') != NULL, "caret: %s", loom_last_error(ctx));
  st = loom_reduction_kernel_create(ctx, "T x", "T y", "x", "a + b", "y = a", NULL, "noid", NULL, NULL, 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_UNSUPPORTED &&
            !strcmp(line, "noid: loom's ReductionKernel needs an identity (the value of an empty reduction, e.g. '0')"),
        "identity: %s", line);
  st = loom_elementwise_kernel_create(ctx, "T x", "T y", "y = undefined_name * x", "undef", NULL, 1, &k);
  CHECK(st == LOOM_OK, "placeholders defer compilation");
  if (!st) {
    float x[3] = {1, 2, 3};
    LoomArray in[1] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){3})};
    LoomArray out[1] = {none()};
    st = loom_elementwise_kernel_call(k, 1, in, 1, out, -1);
    first_line(line, sizeof line, loom_last_error(ctx));
    CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strncmp(line, "undef:1:5: error:", 17), "undefined: %s", line);
    CHECK(out[0].data == NULL, "no output left allocated");
    LoomArray in2[1] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){3})};
    LoomArray bad_out[1] = {arr(x, LOOM_FLOAT32, 1, (int64_t[]){2})};
    st = loom_elementwise_kernel_call(k, 1, in2, 1, bad_out, -1);
    CHECK(st != LOOM_OK, "shape mismatch rejected");
    loom_user_kernel_destroy(k);
  }
}

/* Introspection: kernel IR, host LLVM IR and PTX of a call's kernel from descriptors alone. */
static void test_dump(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create(ctx, "T x, T y", "T z", "z = (x - y) * (x - y)", "sqdiff_dump", NULL,
                                                 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  LoomArray in[2] = {arr(NULL, LOOM_FLOAT32, 2, (int64_t[]){4, 5}), arr(NULL, LOOM_FLOAT32, 1, (int64_t[]){5})};
  LoomArray out[1] = {none()};
  char *text = NULL;
  st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 2, in, 1, out, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_OK && text && strstr(text, "sqdiff_dump"), "kernel IR: %s", st ? loom_last_error(ctx) : text);
  CHECK(out[0].data == NULL && out[0].ndim == 0, "dump leaves out descriptors alone");
  loom_free_string(ctx, text);
  text = NULL;
  st = loom_user_kernel_dump(k, LOOM_DUMP_LLVM, 2, in, 1, out, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_OK && text && strstr(text, "define"), "LLVM IR: %s", st ? loom_last_error(ctx) : text);
  loom_free_string(ctx, text);
  text = NULL;
  st = loom_user_kernel_dump(k, LOOM_DUMP_PTX, 2, in, 1, out, -1, 0, NULL, 0, &text);
  CHECK((st == LOOM_OK && text && strstr(text, ".entry") && strstr(text, "sm_90")) || st == LOOM_ERR_UNSUPPORTED,
        "PTX: %d %s", st, st ? loom_last_error(ctx) : text);
  loom_free_string(ctx, text);
  text = NULL;
  /* a given float64 output binds T from the outputs first: the IR then works in float64 */
  LoomArray out64[1] = {arr(NULL, LOOM_FLOAT64, 2, (int64_t[]){4, 5})};
  out64[0].data = (void *)out64; /* any non-NULL marks a given output; never read */
  LoomArray in64[2] = {arr(NULL, LOOM_FLOAT64, 2, (int64_t[]){4, 5}), arr(NULL, LOOM_FLOAT64, 1, (int64_t[]){5})};
  st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 2, in64, 1, out64, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_OK && text && strstr(text, "f64"), "float64 kernel IR: %s", st ? loom_last_error(ctx) : text);
  loom_free_string(ctx, text);
  text = NULL;
  st = loom_user_kernel_dump(k, LOOM_DUMP_GRAPH, 2, in, 1, out, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !text && strstr(loom_last_error(ctx), "LOOM_DUMP_PTX"), "bad kind: %s",
        loom_last_error(ctx));
  st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 1, in, 1, out, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !text, "wrong arity");
  LoomArray empty[2] = {arr(NULL, LOOM_FLOAT32, 1, (int64_t[]){0}), arr(NULL, LOOM_FLOAT32, 1, (int64_t[]){0})};
  st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 2, empty, 1, out, -1, 0, NULL, 0, &text);
  CHECK(st == LOOM_OK && text && strstr(text, "no kernel"), "empty: %s", st ? loom_last_error(ctx) : text);
  loom_free_string(ctx, text);
  text = NULL;
  loom_user_kernel_destroy(k);
  /* reduction: the L2 norm along axis 1 */
  st = loom_reduction_kernel_create(ctx, "T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_dump", NULL, NULL, 1,
                                    &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  LoomArray x[1] = {arr(NULL, LOOM_FLOAT32, 2, (int64_t[]){64, 128})};
  int32_t ax = 1;
  for (int kind = LOOM_DUMP_KERNELS; kind <= LOOM_DUMP_PTX; kind++) {
    LoomArray o[1] = {none()};
    st = loom_user_kernel_dump(k, (LoomDumpKind)kind, 1, x, 1, o, -1, 1, &ax, 0, &text);
    CHECK((st == LOOM_OK && text && strstr(text, "l2_dump")) || (kind == LOOM_DUMP_PTX && st == LOOM_ERR_UNSUPPORTED),
          "reduction dump kind %d: %d %s", kind, st, st ? loom_last_error(ctx) : text);
    loom_free_string(ctx, text);
    text = NULL;
  }
  int32_t bad_ax = 2;
  LoomArray o[1] = {none()};
  st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 1, x, 1, o, -1, 1, &bad_ax, 0, &text);
  CHECK(st == LOOM_ERR_AXIS && !text, "bad axis: %d", st);
  loom_user_kernel_destroy(k);
}

/* ---- loop_prep / after_loop (per-worker regions) ----------------------------------------------------- */

/* Copies host array h to a new array on device dev (the host: h itself). */
static LoomStatus to_dev(LoomDeviceKind dev, const LoomArray *h, LoomArray *out) {
  if (dev == LOOM_DEVICE_HOST) {
    *out = *h;
    return LOOM_OK;
  }
  *out = *h;
  out->data = NULL;
  out->device = dev;
  out->device_index = 0;
  LoomStatus st = loom_array_alloc(ctx, out);
  if (!st) st = loom_array_copy(ctx, out, h);
  return st;
}

/* Copies device array d back into host array h and frees d (the host: nothing). */
static LoomStatus from_dev(LoomDeviceKind dev, LoomArray *d, const LoomArray *h) {
  if (dev == LOOM_DEVICE_HOST) return LOOM_OK;
  LoomArray back = *h;
  LoomStatus st = loom_array_copy(ctx, &back, d);
  loom_array_free(ctx, d);
  return st;
}

/* loop_prep computes constants once per worker (from a raw param and _ind.size()); the operation
 * uses them per point. The result does not depend on the worker split. */
static void test_loop_prep_const(LoomDeviceKind dev, int64_t rows, int64_t cols) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create_ex(
      ctx, "float32 x, raw float32 kk", "float32 y, int64 m",
      "y = x * k + off; m = nn", "lp_const", NULL,
      "const float k = kk[0] * 2.0f; float off; off = kk[1] - 1.0f; long long nn = _ind.size() + n", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  int64_t np = rows * cols;
  float *x = malloc(sizeof(float) * (size_t)np), *y = calloc((size_t)np, sizeof(float));
  int64_t *mm = calloc((size_t)np, sizeof(int64_t));
  float kk[2] = {1.25f, 3.5f};
  for (int64_t i = 0; i < np; i++) x[i] = (float)(i % 97) - 40.0f;
  LoomArray hx = arr(x, LOOM_FLOAT32, 2, (int64_t[]){rows, cols}), hk = arr(kk, LOOM_FLOAT32, 1, (int64_t[]){2});
  LoomArray hy = arr(y, LOOM_FLOAT32, 2, (int64_t[]){rows, cols}), hm = arr(mm, LOOM_INT64, 2, (int64_t[]){rows, cols});
  LoomArray in[2], out[2];
  st = to_dev(dev, &hx, &in[0]);
  if (!st) st = to_dev(dev, &hk, &in[1]);
  if (!st) st = to_dev(dev, &hy, &out[0]);
  if (!st) st = to_dev(dev, &hm, &out[1]);
  if (!st) st = loom_elementwise_kernel_call(k, 2, in, 2, out, -1);
  CHECK(st == LOOM_OK, "lp_const call (%lldx%lld, device %d): %s", (long long)rows, (long long)cols, (int)dev,
        loom_last_error(ctx));
  if (!st && dev != LOOM_DEVICE_HOST) {
    from_dev(dev, &out[0], &hy);
    from_dev(dev, &out[1], &hm);
    loom_array_free(ctx, &in[0]);
    loom_array_free(ctx, &in[1]);
  }
  if (!st) {
    int bad = 0;
    for (int64_t i = 0; i < np; i++) bad += y[i] != x[i] * 2.5f + 2.5f || mm[i] != 2 * np;
    CHECK(bad == 0, "lp_const (%lldx%lld, device %d): %d wrong (y[0] %g want %g, m[0] %lld)", (long long)rows,
          (long long)cols, (int)dev, bad, y[0], x[0] * 2.5f + 2.5f, (long long)mm[0]);
  }
  free(x);
  free(y);
  free(mm);
  loom_user_kernel_destroy(k);
}

/* Per-worker state: a running count and sum. Each point gets its position within its worker
 * (cnt = 1, 2, ...); after_loop writes the worker's count and sum into raw arrays at the index of the
 * worker's first point (distinct per worker, so no two workers write one element). Checked without
 * knowing the split: the counts add up to n and the sums to sum(x), every worker's first point has
 * cnt 1 and each first point is where after_loop wrote, and positions k + 1 are never more than k. */
static void test_loop_prep_worker(LoomDeviceKind dev, int64_t n) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create_ex(
      ctx, "int64 x", "int64 cnt, raw int64 counts, raw int64 sums",
      "if (c == 0) first = i;\nc++;\ns += x;\ncnt = c;", "lp_worker", NULL,
      "long long c = 0;\nlong long s;\nlong long first = -1;",
      "if (c > 0) {\n  counts[first] = c;\n  sums[first] = s;\n}", 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  int64_t *x = malloc(sizeof(int64_t) * (size_t)n), *cnt = calloc((size_t)n, sizeof(int64_t));
  int64_t *counts = calloc((size_t)n, sizeof(int64_t)), *sums = calloc((size_t)n, sizeof(int64_t));
  int64_t *hist = calloc((size_t)n + 2, sizeof(int64_t));
  int64_t sx = 0;
  for (int64_t i = 0; i < n; i++) sx += x[i] = (i * 7919) % 1000 - 300;
  LoomArray hx = arr(x, LOOM_INT64, 1, &n), hc = arr(cnt, LOOM_INT64, 1, &n);
  LoomArray hcs = arr(counts, LOOM_INT64, 1, &n), hs = arr(sums, LOOM_INT64, 1, &n);
  LoomArray in[1], out[3];
  st = to_dev(dev, &hx, &in[0]);
  if (!st) st = to_dev(dev, &hc, &out[0]);
  if (!st) st = to_dev(dev, &hcs, &out[1]);
  if (!st) st = to_dev(dev, &hs, &out[2]);
  if (!st) st = loom_elementwise_kernel_call(k, 1, in, 3, out, -1);
  CHECK(st == LOOM_OK, "lp_worker call (n %lld, device %d): %s", (long long)n, (int)dev, loom_last_error(ctx));
  if (!st && dev != LOOM_DEVICE_HOST) {
    from_dev(dev, &out[0], &hc);
    from_dev(dev, &out[1], &hcs);
    from_dev(dev, &out[2], &hs);
    loom_array_free(ctx, &in[0]);
  }
  if (!st) {
    int64_t tc = 0, ts = 0, firsts = 0, workers = 0, bad = 0;
    for (int64_t i = 0; i < n; i++) {
      tc += counts[i];
      ts += sums[i];
      workers += counts[i] > 0;
      firsts += cnt[i] == 1;
      if (counts[i] > 0 && cnt[i] != 1) bad++;
      if (counts[i] < 0 || cnt[i] < 1 || cnt[i] > n) bad++;
      else hist[cnt[i]]++;
    }
    for (int64_t c = 2; c <= n; c++) bad += hist[c] > hist[c - 1];
    CHECK(tc == n && ts == sx && firsts == workers && workers >= 1 && bad == 0,
          "lp_worker (n %lld, device %d): counts %lld sums %lld (want %lld), %lld workers, %lld first points, %lld bad",
          (long long)n, (int)dev, (long long)tc, (long long)ts, (long long)sx, (long long)workers, (long long)firsts,
          (long long)bad);
  }
  free(x);
  free(cnt);
  free(counts);
  free(sums);
  free(hist);
  loom_user_kernel_destroy(k);
}

/* No raw param and contiguous arrays, so the GPU takes its 16-byte vector entry: a constant from
 * loop_prep (checked exactly, y = x + k) next to state that does not show in the outputs (a counter
 * per worker that after_loop updates). */
static void test_loop_prep_vec(LoomDeviceKind dev, int64_t n) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "acc += 1; y = x + k", "lp_vec",
                                                    NULL, "float k = 0.5f; int acc = 0;", "acc = acc * 2;", 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  float *x = malloc(sizeof(float) * (size_t)n), *y = calloc((size_t)n, sizeof(float));
  for (int64_t i = 0; i < n; i++) x[i] = (float)i * 0.25f;
  LoomArray hx = arr(x, LOOM_FLOAT32, 1, &n), hy = arr(y, LOOM_FLOAT32, 1, &n);
  LoomArray in[1], out[1];
  st = to_dev(dev, &hx, &in[0]);
  if (!st) st = to_dev(dev, &hy, &out[0]);
  if (!st) st = loom_elementwise_kernel_call(k, 1, in, 1, out, -1);
  CHECK(st == LOOM_OK, "lp_vec call: %s", loom_last_error(ctx));
  if (!st && dev != LOOM_DEVICE_HOST) {
    from_dev(dev, &out[0], &hy);
    loom_array_free(ctx, &in[0]);
  }
  if (!st) {
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += y[i] != x[i] + 0.5f;
    CHECK(bad == 0, "lp_vec (n %lld, device %d): %d wrong", (long long)n, (int)dev, bad);
  }
  free(x);
  free(y);
  loom_user_kernel_destroy(k);
}

/* Errors in the regions name the part, the line and the column, with a caret. */
static void test_loop_prep_errors(void) {
  LoomUserKernel *k = NULL;
  char line[512];
  LoomStatus st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "y = x", "lp_err", NULL,
                                                    "long long j = i;", NULL, 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT &&
            !strcmp(line, "lp_err(loop_prep):1:15: error: 'i' (the index of the current point) is not available in "
                          "loop_prep; use it in the operation") &&
            strchr(loom_last_error(ctx), '^'),
        "i in loop_prep: %s", loom_last_error(ctx));
  st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "y = x", "lp_err", NULL, "float t;",
                                         "\n t = x;", 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strncmp(line, "lp_err(after_loop):2:6: error: parameter 'x' is not available in after_loop", 75),
        "x in after_loop: %s", loom_last_error(ctx));
  st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "y = x; k = 1", "lp_err", NULL,
                                         "const float k = 2;", NULL, 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strcmp(line, "lp_err:1:10: error: cannot assign to const variable 'k'"),
        "const state: %s", line);
  st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "y = x", "lp_err", NULL, "float k = 2",
                                         "y = 3;", 1, &k);
  first_line(line, sizeof line, loom_last_error(ctx));
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT && !strncmp(line, "lp_err(after_loop):1:1: error: parameter 'y'", 44),
        "y in after_loop: %s", line);
  /* NULL and blank regions: an ordinary kernel */
  st = loom_elementwise_kernel_create_ex(ctx, "float32 x", "float32 y", "y = x", "lp_none", NULL, " \n", "", 1, &k);
  CHECK(st == LOOM_OK, "blank regions: %s", loom_last_error(ctx));
  if (!st) loom_user_kernel_destroy(k);
}

/* The regions' kernels as PTX for sm_90 (scalar and vector entries), checked with ptxas when present. */
static void check_ptx(const char *what, const char *ptx) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  FILE *f = fopen(ptxas, "rb");
  if (!f) {
    printf("test_user_kernel: %s: ptxas not found, PTX not assembled\n", what);
    return;
  }
  fclose(f);
  char path[] = "/tmp/loom_lp_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  if (fd < 0) return;
  FILE *o = fdopen(fd, "w");
  fputs(ptx, o);
  fclose(o);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s -o /dev/null", ptxas, path);
  int rc = system(cmd);
  CHECK(rc == 0, "%s: ptxas failed (%d) on %s", what, rc, path);
  if (rc == 0) remove(path);
}

static void test_loop_prep_dump(void) {
  const char *ins[2] = {"int64 x", "float32 x"};
  const char *outs[2] = {"int64 cnt, raw int64 counts, raw int64 sums", "float32 y"};
  const char *ops[2] = {"if (c == 0) first = i; c++; s += x; cnt = c;", "acc += x; y = acc * k;"};
  const char *preps[2] = {"long long c = 0; long long s; long long first = -1;", "float acc; const float k = 2;"};
  const char *afters[2] = {"if (c > 0) { counts[first] = c; sums[first] = s; }", NULL};
  for (int t = 0; t < 2; t++) {
    LoomUserKernel *k = NULL;
    LoomStatus st = loom_elementwise_kernel_create_ex(ctx, ins[t], outs[t], ops[t], "lp_dump", NULL, preps[t],
                                                      afters[t], 1, &k);
    CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
    if (st) continue;
    LoomDType dt = t == 0 ? LOOM_INT64 : LOOM_FLOAT32;
    int64_t n = 1000;
    LoomArray in[1] = {arr(NULL, dt, 1, &n)};
    LoomArray out[3] = {none(), arr((void *)in, LOOM_INT64, 1, &n), arr((void *)in, LOOM_INT64, 1, &n)};
    char *text = NULL;
    st = loom_user_kernel_dump(k, LOOM_DUMP_KERNELS, 1, in, t == 0 ? 3 : 1, out, -1, 0, NULL, 0, &text);
    CHECK(st == LOOM_OK && text && strstr(text, "prep(") && strstr(text, "$"), "kernel IR: %s",
          st ? loom_last_error(ctx) : text);
    loom_free_string(ctx, text);
    text = NULL;
    st = loom_user_kernel_dump(k, LOOM_DUMP_LLVM, 1, in, t == 0 ? 3 : 1, out, -1, 0, NULL, 0, &text);
    CHECK(st == LOOM_OK && text && strstr(text, "define"), "LLVM IR: %s", st ? loom_last_error(ctx) : text);
    loom_free_string(ctx, text);
    text = NULL;
    st = loom_user_kernel_dump(k, LOOM_DUMP_PTX, 1, in, t == 0 ? 3 : 1, out, -1, 0, NULL, 0, &text);
    CHECK((st == LOOM_OK && text && strstr(text, ".entry")) || st == LOOM_ERR_UNSUPPORTED, "PTX: %d %s", st,
          st ? loom_last_error(ctx) : text);
    if (!st && text) {
      if (t == 1) CHECK(strstr(text, "_vec") != NULL, "the contiguous kernel has a vector entry");
      check_ptx(t == 0 ? "lp_dump (raw, scalar entry)" : "lp_dump (vector entry)", text);
    }
    loom_free_string(ctx, text);
    loom_user_kernel_destroy(k);
  }
}

static void test_loop_prep(void) {
  test_loop_prep_const(LOOM_DEVICE_HOST, 3, 5);
  test_loop_prep_const(LOOM_DEVICE_HOST, 1000, 1001);
  test_loop_prep_worker(LOOM_DEVICE_HOST, 1);
  test_loop_prep_worker(LOOM_DEVICE_HOST, 1000);
  test_loop_prep_worker(LOOM_DEVICE_HOST, 3 << 20);
  test_loop_prep_vec(LOOM_DEVICE_HOST, 100003);
  test_loop_prep_errors();
  test_loop_prep_dump();
  /* the same on a GPU, when there is one (skipped otherwise) */
  int32_t ndev = 0;
  if (loom_device_count(ctx, LOOM_DEVICE_CUDA, &ndev) != LOOM_OK || ndev == 0) {
    printf("test_user_kernel: loop_prep GPU cases skipped (no CUDA device)\n");
    return;
  }
  test_loop_prep_const(LOOM_DEVICE_CUDA, 3, 5);
  test_loop_prep_const(LOOM_DEVICE_CUDA, 1000, 1001);
  test_loop_prep_worker(LOOM_DEVICE_CUDA, 1);
  test_loop_prep_worker(LOOM_DEVICE_CUDA, 1000);
  test_loop_prep_worker(LOOM_DEVICE_CUDA, 3 << 20);
  test_loop_prep_vec(LOOM_DEVICE_CUDA, 100003);
  test_loop_prep_vec(LOOM_DEVICE_CUDA, 1 << 22);
}

/* Element i of a buffer of dtype t, as a double (small integers only). */
static void put_num(void *p, LoomDType t, int64_t i, double v) {
  switch (t) {
  case LOOM_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
  case LOOM_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
  case LOOM_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  case LOOM_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
  case LOOM_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
  case LOOM_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
  case LOOM_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
  case LOOM_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
  case LOOM_FLOAT32: ((float *)p)[i] = (float)v; break;
  default: ((double *)p)[i] = v; break;
  }
}

static double get_num(const void *p, LoomDType t, int64_t i) {
  switch (t) {
  case LOOM_INT8: return ((const int8_t *)p)[i];
  case LOOM_INT16: return ((const int16_t *)p)[i];
  case LOOM_INT32: return ((const int32_t *)p)[i];
  case LOOM_INT64: return (double)((const int64_t *)p)[i];
  case LOOM_UINT8: return ((const uint8_t *)p)[i];
  case LOOM_UINT16: return ((const uint16_t *)p)[i];
  case LOOM_UINT32: return ((const uint32_t *)p)[i];
  case LOOM_UINT64: return (double)((const uint64_t *)p)[i];
  case LOOM_FLOAT32: return ((const float *)p)[i];
  default: return ((const double *)p)[i];
  }
}

static uint64_t compiled_now(void) {
  LoomStats s;
  loom_get_stats(ctx, &s);
  return s.kernels_compiled;
}

static uint64_t hits_now(void) {
  LoomStats s;
  loom_get_stats(ctx, &s);
  return s.cache_hits;
}

/* z = 2 * x + y on n float32 points, x with stride sx (elements), y broadcast when ybc; checked. */
static int axpy_f32(LoomUserKernel *k, int64_t n, int64_t sx, bool ybc) {
  float *x = malloc(sizeof(float) * (size_t)(n * sx + 1)), *y = malloc(sizeof(float) * (size_t)n);
  float *z = malloc(sizeof(float) * (size_t)n);
  int bad = 1;
  if (x && y && z) {
    for (int64_t i = 0; i < n * sx; i++) x[i] = (float)(i % 97) * 0.5f;
    for (int64_t i = 0; i < n; i++) y[i] = (float)(i % 13) - 6.0f;
    int64_t one = 1;
    LoomArray in[2] = {arr(x, LOOM_FLOAT32, 1, &n), ybc ? arr(y, LOOM_FLOAT32, 1, &one) : arr(y, LOOM_FLOAT32, 1, &n)};
    in[0].strides[0] = sx;
    LoomArray out[1] = {arr(z, LOOM_FLOAT32, 1, &n)};
    LoomStatus st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
    bad = st != LOOM_OK;
    for (int64_t i = 0; i < n && !bad; i++)
      if (z[i] != 2.0f * x[i * sx] + (ybc ? y[0] : y[i])) bad = 1;
    if (st) fprintf(stderr, "axpy: %s\n", loom_last_error(ctx));
  }
  free(x), free(y), free(z);
  return bad;
}

static void test_instantiation_cache(void) {
  LoomUserKernel *k = NULL;
  LoomStatus st = loom_elementwise_kernel_create(ctx, "T x, T y", "T z", "z = x * 2 + y", "axpy_cache", NULL, 1, &k);
  CHECK(st == LOOM_OK, "create: %s", loom_last_error(ctx));
  if (st) return;
  uint64_t c0 = compiled_now();
  CHECK(!axpy_f32(k, 1000, 1, false), "first call");
  uint64_t c1 = compiled_now(), h1 = hits_now();
  CHECK(c1 == c0 + 1, "first call compiles once (%llu)", (unsigned long long)(c1 - c0));
  int64_t sizes[5] = {2, 7, 1000, 5000, 100000}; /* 100000: parallel ranges (size 1 is another layout) */
  for (int i = 0; i < 5; i++) CHECK(!axpy_f32(k, sizes[i], 1, false), "contiguous n=%lld", (long long)sizes[i]);
  CHECK(compiled_now() == c1, "new sizes compiled %llu kernels", (unsigned long long)(compiled_now() - c1));
  CHECK(hits_now() == h1 + 5, "new sizes: %llu hits", (unsigned long long)(hits_now() - h1));
  /* a strided x and a broadcast y are new layouts: one compile each, then reused */
  CHECK(!axpy_f32(k, 300, 3, false), "strided");
  CHECK(!axpy_f32(k, 300, 1, true), "broadcast");
  uint64_t c2 = compiled_now();
  CHECK(c2 == c1 + 2, "two new layouts compiled %llu", (unsigned long long)(c2 - c1));
  for (int i = 0; i < 5; i++) {
    CHECK(!axpy_f32(k, sizes[i], 2, false), "strided n=%lld", (long long)sizes[i]);
    CHECK(!axpy_f32(k, sizes[i] + 1, 1, true), "broadcast n=%lld", (long long)sizes[i] + 1);
  }
  CHECK(compiled_now() == c2, "strided/broadcast reuse compiled %llu", (unsigned long long)(compiled_now() - c2));
  /* 2-D contiguous collapses to the 1-D signature: no compile */
  {
    float x[24], y[24], z[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i, y[i] = (float)(24 - i);
    int64_t sh[2] = {4, 6};
    LoomArray in[2] = {arr(x, LOOM_FLOAT32, 2, sh), arr(y, LOOM_FLOAT32, 2, sh)};
    LoomArray out[1] = {arr(z, LOOM_FLOAT32, 2, sh)};
    st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
    int bad = st != LOOM_OK;
    for (int i = 0; i < 24 && !bad; i++) bad = z[i] != 2.0f * x[i] + y[i];
    CHECK(!bad && compiled_now() == c2, "2-D contiguous: %d, compiled %llu", st,
          (unsigned long long)(compiled_now() - c2));
  }
  /* more signatures than the cache holds (dtypes x layouts), twice: right results every time */
  LoomDType dts[10] = {LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64, LOOM_UINT8,
                       LOOM_UINT16, LOOM_UINT32, LOOM_UINT64, LOOM_FLOAT32, LOOM_FLOAT64};
  for (int round = 0; round < 2; round++)
    for (int t = 0; t < 10; t++)
      for (int strided = 0; strided < 2; strided++) {
        int64_t n = 50 + round * 11 + t, sx = strided ? 2 : 1;
        unsigned char xb[160 * 8], yb[80 * 8], zb[80 * 8];
        for (int64_t i = 0; i < n * sx; i++) put_num(xb, dts[t], i, (double)(i % 9));
        for (int64_t i = 0; i < n; i++) put_num(yb, dts[t], i, (double)(i % 5));
        LoomArray in[2] = {arr(xb, dts[t], 1, &n), arr(yb, dts[t], 1, &n)};
        in[0].strides[0] = sx;
        LoomArray out[1] = {arr(zb, dts[t], 1, &n)};
        st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
        int bad = st != LOOM_OK;
        for (int64_t i = 0; i < n && !bad; i++) bad = get_num(zb, dts[t], i) != 2.0 * (double)((i * sx) % 9) + (double)(i % 5);
        CHECK(!bad, "round %d dtype %s strided %d: %d %s", round, loom_dtype_name(dts[t]), strided, st,
              st ? loom_last_error(ctx) : "wrong values");
      }
  /* errors are unchanged after caching: a wrong out shape */
  {
    float x[4] = {1, 2, 3, 4}, z[3];
    int64_t n4 = 4, n3 = 3;
    LoomArray in[2] = {arr(x, LOOM_FLOAT32, 1, &n4), arr(x, LOOM_FLOAT32, 1, &n4)};
    LoomArray out[1] = {arr(z, LOOM_FLOAT32, 1, &n3)};
    st = loom_elementwise_kernel_call(k, 2, in, 1, out, -1);
    CHECK(st == LOOM_ERR_SHAPE && strstr(loom_last_error(ctx), "'z' of shape (3,) does not broadcast"), "wrong out shape: %d %s",
          st, loom_last_error(ctx));
  }
  loom_user_kernel_destroy(k);

  /* reductions: row L2 norms for several sizes compile once; keepdims reuses; axis 0 is a new kernel */
  st = loom_reduction_kernel_create(ctx, "T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2_cache", NULL, NULL, 1,
                                    &k);
  CHECK(st == LOOM_OK, "create reduction: %s", loom_last_error(ctx));
  if (st) return;
  uint64_t r0 = compiled_now();
  int64_t shapes[4][2] = {{3, 4}, {10, 7}, {64, 200}, {5, 70000}};
  for (int axis = 1; axis >= 0; axis--)
    for (int keep = 0; keep < 2; keep++)
      for (int i = 0; i < 4; i++) {
        int64_t rows = shapes[i][0], cols = shapes[i][1], on = axis == 1 ? rows : cols;
        float *x = malloc(sizeof(float) * (size_t)(rows * cols)), *y = malloc(sizeof(float) * (size_t)on);
        if (!x || !y) {
          free(x), free(y);
          CHECK(0, "malloc");
          continue;
        }
        for (int64_t j = 0; j < rows * cols; j++) x[j] = (float)(j % 11) * 0.25f;
        int64_t sh[2] = {rows, cols}, osh[2] = {axis == 1 ? rows : 1, axis == 1 ? 1 : cols};
        LoomArray in[1] = {arr(x, LOOM_FLOAT32, 2, sh)};
        LoomArray out[1] = {keep ? arr(y, LOOM_FLOAT32, 2, osh) : arr(y, LOOM_FLOAT32, 1, &on)};
        int32_t ax = axis;
        st = loom_reduction_kernel_call(k, 1, in, 1, out, 1, &ax, keep);
        int bad = st != LOOM_OK;
        for (int64_t o = 0; o < on && !bad; o++) {
          double acc = 0;
          for (int64_t r = 0; r < (axis == 1 ? cols : rows); r++) {
            float v = axis == 1 ? x[o * cols + r] : x[r * cols + o];
            acc += (double)v * v;
          }
          bad = fabs(y[o] - sqrt(acc)) > 1e-4 * (1 + sqrt(acc));
        }
        CHECK(!bad, "l2 axis %d keep %d %lldx%lld: %d %s", axis, keep, (long long)rows, (long long)cols, st,
              st ? loom_last_error(ctx) : "wrong values");
        free(x), free(y);
      }
  /* rows: an inner reduction of 1 kept dim; cols: outer. {5, 70000} axis 0 splits R for nothing (R = 5). At
   * most one kernel per (axis, strategy-independent layout): the sizes and keepdims add none. */
  uint64_t r1 = compiled_now();
  CHECK(r1 - r0 <= 4, "reductions compiled %llu kernels for 16 calls", (unsigned long long)(r1 - r0));
  int64_t sh[2] = {64, 200};
  float *x = calloc(64 * 200, sizeof(float)), y[64];
  LoomArray in[1] = {arr(x, LOOM_FLOAT32, 2, sh)};
  int64_t on = 64;
  LoomArray out[1] = {arr(y, LOOM_FLOAT32, 1, &on)};
  int32_t ax = 1;
  for (int i = 0; i < 10 && x; i++) st = loom_reduction_kernel_call(k, 1, in, 1, out, 1, &ax, 0);
  CHECK(x && compiled_now() == r1, "repeated reduction compiled %llu", (unsigned long long)(compiled_now() - r1));
  free(x);
  loom_user_kernel_destroy(k);
}

int main(void) {
  /* compile counts are this process's: kernels from an earlier run's disk cache would read as 0 compiles */
  setenv("LOOM_HOST_DISK_CACHE", "0", 1);
  if (loom_context_create(&ctx) != LOOM_OK) return 1;
  if (loom_set_cache(ctx, "", 0) != LOOM_OK) return 1;
  test_squared_diff();
  test_squared_diff_generic();
  test_reversed_add();
  test_l2norm(3, 4);
  test_l2norm(1000, 3);
  test_l2norm(3, 100000);
  test_l2norm(700, 900);
  test_reduce_custom();
  test_control_flow();
  test_large();
  test_errors();
  test_dump();
  test_instantiation_cache();
  test_loop_prep();
  loom_context_destroy(ctx);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
