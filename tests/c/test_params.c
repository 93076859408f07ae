/* test_params.c: scalars are kernel parameters (KI_PARAM): the same expression with new scalar values
 * compiles once, and every value gives the result a loop written here gives.
 *
 * Approach: each case builds a fresh graph per value (as the lazy Python API does), evaluates it into
 * an output array and compares with a C loop in the NumPy semantics of ir/ir.h (NEP 50 weak scalars take
 * the array's dtype; integers wrap), over values that include NaN, +-inf, -0.0, denormals, overflow to
 * inf and the integer extremes. loom_get_stats' kernels_compiled counts compiles per structure. Also: the
 * kernel key names the parameter, never its value; integer divisors stay constants (passes/lower.c); the
 * split reduction entries (partial/finish) read parameters too; the GPU lowering puts parameters in the
 * parameter block (PTX, compiled without a GPU, when this LLVM has NVPTX and libdevice is found).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

static int n_passed, n_failed;
static LoomContext *ctx;

#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (cond) {                                                                   \
      n_passed++;                                                                 \
    } else {                                                                      \
      n_failed++;                                                                 \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);             \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, "\n");                                                      \
    }                                                                             \
  } while (0)

static uint64_t compiled(void) {
  LoomStats s;
  loom_get_stats(ctx, &s);
  return s.kernels_compiled;
}

static LoomArray array1(void *data, LoomDType t, int64_t n) {
  LoomArray a = {.data = data, .dtype = t, .ndim = 1, .shape = {n}, .strides = {1}};
  return a;
}

/* One of the scalar kinds of the C API. */
typedef enum { WEAK_FLOAT, WEAK_INT, WEAK_BOOL, CONST_F64, CONST_I64, CONST_U64 } ScalarKind;
typedef struct {
  ScalarKind kind;
  double f;
  int64_t i;
  uint64_t u;
  LoomDType dtype; /* CONST_* */
} Sc;

static LoomStatus scalar_node(LoomGraph *g, Sc s, LoomNode *out) {
  switch (s.kind) {
  case WEAK_FLOAT: return loom_weak_float(g, s.f, out);
  case WEAK_INT: return loom_weak_int(g, s.i, out);
  case WEAK_BOOL: return loom_weak_bool(g, (int)s.i, out);
  case CONST_F64: return loom_const_f64(g, s.f, s.dtype, out);
  case CONST_I64: return loom_const_i64(g, s.i, s.dtype, out);
  default: return loom_const_u64(g, s.u, s.dtype, out);
  }
}

/* out = x OP s (swap: s OP x) in a fresh graph. */
static LoomStatus eval_binary(LoomArray *x, LoomOp op, Sc s, bool swap, LoomArray *out) {
  LoomGraph *g = NULL;
  LoomStatus st = loom_graph_create(ctx, &g);
  LoomNode a, b, y;
  if (st == LOOM_OK) st = loom_input(g, x, &a);
  if (st == LOOM_OK) st = scalar_node(g, s, &b);
  if (st == LOOM_OK) st = swap ? loom_binary(g, op, b, a, &y) : loom_binary(g, op, a, b, &y);
  if (st == LOOM_OK) st = loom_eval(g, 1, &y, out);
  if (st != LOOM_OK) fprintf(stderr, "eval: %s\n", loom_last_error(ctx));
  loom_graph_destroy(g);
  return st;
}

static bool same_float(double got, double want, double rtol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want) || want == 0) return got == want && signbit(got) == signbit(want);
  return fabs(got - want) <= rtol * fabs(want);
}

/* float32 x * s - 0.5 and x * s for many weak float s (NEP 50: s rounds to float32). */
static void test_float32_weak(void) {
  enum { N = 64 };
  float x[N], y[N];
  const float special[] = {0.0f, -0.0f, 1.0f, -1.5f, INFINITY, -INFINITY, NAN, 1e-45f, 3.0e38f, -2.5e-39f};
  for (int i = 0; i < N; i++) x[i] = i < 10 ? special[i] : (float)(i - 30) * 0.37f;
  LoomArray X = array1(x, LOOM_FLOAT32, N), Y = array1(y, LOOM_FLOAT32, N);
  double values[1000];
  int nv = 0;
  const double sv[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-45, 1e-300, 3.4e38, 1e300, -1e300, 2.0, 0.5, -1.0};
  for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++) values[nv++] = sv[i];
  for (; nv < 1000; nv++) values[nv] = (nv - 500) * 0.0137 + 1e-3; /* never exactly 1: x * 1 folds (a structure of its own) */
  uint64_t c0 = compiled();
  int bad = 0;
  for (int v = 0; v < nv; v++) {
    Sc s = {.kind = WEAK_FLOAT, .f = values[v]};
    if (eval_binary(&X, LOOM_OP_MUL, s, false, &Y) != LOOM_OK) {
      bad++;
      continue;
    }
    float sf = (float)values[v];
    for (int i = 0; i < N; i++) {
      float want = x[i] * sf;
      if (!same_float(y[i], want, 0)) {
        if (bad++ < 5) fprintf(stderr, "  %g * %g: got %g want %g\n", (double)x[i], (double)sf, (double)y[i], (double)want);
      }
    }
  }
  CHECK(bad == 0, "%d wrong results of x * s", bad);
  CHECK(compiled() - c0 == 1, "x * s over 1000 values of s compiled %llu kernels",
        (unsigned long long)(compiled() - c0));

  /* s - x (the scalar on the left), many values: one more kernel */
  c0 = compiled();
  bad = 0;
  for (int v = 0; v < nv; v++) {
    Sc s = {.kind = WEAK_FLOAT, .f = values[v]};
    if (eval_binary(&X, LOOM_OP_SUB, s, true, &Y) != LOOM_OK) {
      bad++;
      continue;
    }
    float sf = (float)values[v];
    for (int i = 0; i < N; i++)
      if (!same_float(y[i], sf - x[i], 0)) bad++;
  }
  CHECK(bad == 0, "%d wrong results of s - x", bad);
  CHECK(compiled() - c0 == 1, "s - x compiled %llu kernels", (unsigned long long)(compiled() - c0));
}

/* int8 + weak int (every int8 value) and int8 * weak int: wrap as NumPy. */
static void test_int8_weak(void) {
  enum { N = 256 };
  int8_t x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (int8_t)(i - 128);
  LoomArray X = array1(x, LOOM_INT8, N), Y = array1(y, LOOM_INT8, N);
  const LoomOp ops[] = {LOOM_OP_ADD, LOOM_OP_MUL, LOOM_OP_BITWISE_XOR, LOOM_OP_RIGHT_SHIFT};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    uint64_t c0 = compiled();
    int bad = 0;
    for (int v = -128; v <= 127; v++) {
      if (ops[o] == LOOM_OP_MUL && v == 1) continue; /* x * 1 folds to x */
      if (ops[o] == LOOM_OP_ADD && v == 0) continue; /* x + 0 folds to x */
      Sc s = {.kind = WEAK_INT, .i = v};
      if (eval_binary(&X, ops[o], s, false, &Y) != LOOM_OK) {
        bad++;
        continue;
      }
      for (int i = 0; i < N; i++) {
        int8_t want;
        switch (ops[o]) {
        case LOOM_OP_ADD: want = (int8_t)(uint8_t)((uint8_t)x[i] + (uint8_t)v); break;
        case LOOM_OP_MUL: want = (int8_t)(uint8_t)((unsigned)x[i] * (unsigned)v); break;
        case LOOM_OP_BITWISE_XOR: want = (int8_t)(x[i] ^ (int8_t)v); break;
        default: want = v < 0 || v >= 8 ? (x[i] < 0 ? -1 : 0) : (int8_t)(x[i] >> v); break;
        }
        if (y[i] != want && bad++ < 3) fprintf(stderr, "  op %d: %d, %d: got %d want %d\n", (int)ops[o], x[i], v, y[i], want);
      }
    }
    CHECK(bad == 0, "op %d: %d wrong int8 results", (int)ops[o], bad);
    /* shift amounts are baked (passes/lower.c), those outside [0, 8] folded to 8: 9 kernels at most */
    uint64_t most = ops[o] == LOOM_OP_RIGHT_SHIFT ? 9 : 1;
    CHECK(compiled() - c0 >= 1 && compiled() - c0 <= most, "op %d over every int8 scalar compiled %llu kernels (at most %llu)",
          (int)ops[o], (unsigned long long)(compiled() - c0), (unsigned long long)most);
  }
}

/* int64 and uint64 extremes as strong constants; bool; float64 strong constants. */
static void test_extremes(void) {
  enum { N = 8 };
  int64_t xi[N] = {INT64_MIN, INT64_MAX, -1, 0, 1, 123456789012345, -987654321, 42}, yi[N];
  uint64_t xu[N] = {0, 1, UINT64_MAX, UINT64_MAX - 1, 1ull << 63, 12345, 99, 7}, yu[N];
  LoomArray XI = array1(xi, LOOM_INT64, N), YI = array1(yi, LOOM_INT64, N);
  LoomArray XU = array1(xu, LOOM_UINT64, N), YU = array1(yu, LOOM_UINT64, N);
  const int64_t si[] = {INT64_MIN, INT64_MAX, -1, 2, -3, 1ll << 40, INT64_MIN + 1};
  uint64_t c0 = compiled();
  int bad = 0;
  for (size_t v = 0; v < sizeof si / sizeof si[0]; v++) {
    Sc s = {.kind = CONST_I64, .i = si[v], .dtype = LOOM_INT64};
    if (eval_binary(&XI, LOOM_OP_SUB, s, false, &YI) != LOOM_OK) bad++;
    for (int i = 0; i < N; i++)
      if (yi[i] != (int64_t)((uint64_t)xi[i] - (uint64_t)si[v])) bad++;
  }
  CHECK(bad == 0, "%d wrong int64 results", bad);
  CHECK(compiled() - c0 == 1, "int64 - c compiled %llu kernels", (unsigned long long)(compiled() - c0));
  const uint64_t su[] = {UINT64_MAX, 1ull << 63, 3, 5, 0xdeadbeefcafef00dull};
  c0 = compiled();
  bad = 0;
  for (size_t v = 0; v < sizeof su / sizeof su[0]; v++) {
    Sc s = {.kind = CONST_U64, .u = su[v], .dtype = LOOM_UINT64};
    if (eval_binary(&XU, LOOM_OP_MUL, s, false, &YU) != LOOM_OK) bad++;
    for (int i = 0; i < N; i++)
      if (yu[i] != xu[i] * su[v]) bad++;
  }
  CHECK(bad == 0, "%d wrong uint64 results", bad);
  CHECK(compiled() - c0 == 1, "uint64 * c compiled %llu kernels", (unsigned long long)(compiled() - c0));

  double xd[N] = {0.0, -0.0, 1.5, -2.25, INFINITY, NAN, 1e-310, 1e308}, yd[N];
  LoomArray XD = array1(xd, LOOM_FLOAT64, N), YD = array1(yd, LOOM_FLOAT64, N);
  const double sd[] = {-0.0, 0.0, NAN, -INFINITY, 1e-310, 1e308, 3.25};
  c0 = compiled();
  bad = 0;
  for (size_t v = 0; v < sizeof sd / sizeof sd[0]; v++) {
    Sc s = {.kind = CONST_F64, .f = sd[v], .dtype = LOOM_FLOAT64};
    if (eval_binary(&XD, LOOM_OP_ADD, s, false, &YD) != LOOM_OK) bad++;
    for (int i = 0; i < N; i++)
      if (!same_float(yd[i], xd[i] + sd[v], 0)) bad++;
  }
  CHECK(bad == 0, "%d wrong float64 results (signed zeros, NaN, inf, denormals)", bad);
  /* x + 0.0 is not folded for floats (-0.0 + 0.0 is +0.0), so every value is one kernel */
  CHECK(compiled() - c0 == 1, "float64 + c compiled %llu kernels", (unsigned long long)(compiled() - c0));

  uint8_t xb[4] = {0, 1, 1, 0}, yb[4];
  LoomArray XB = array1(xb, LOOM_BOOL, 4), YB = array1(yb, LOOM_BOOL, 4);
  c0 = compiled();
  bad = 0;
  for (int v = 0; v < 2; v++) {
    Sc s = {.kind = WEAK_BOOL, .i = v};
    if (eval_binary(&XB, LOOM_OP_LOGICAL_XOR, s, false, &YB) != LOOM_OK) bad++;
    for (int i = 0; i < 4; i++)
      if (yb[i] != (uint8_t)((xb[i] != 0) != (v != 0))) bad++;
  }
  CHECK(bad == 0, "%d wrong bool results", bad);
  CHECK(compiled() - c0 == 1, "bool xor c compiled %llu kernels", (unsigned long long)(compiled() - c0));
}

/* x / c for powers of two c is x * (1/c) (passes/fold.c): the same bits, one kernel for every power of
 * two whose reciprocal is a normal float32; other divisors are a division kernel (one for every value). */
static void test_float_division(void) {
  enum { N = 12 };
  float x[N] = {0.0f, -0.0f, 1.0f, -3.0f, INFINITY, -INFINITY, NAN, 1e-45f, 3e-39f, 3.4e38f, 7.25f, -1e-38f}, y[N];
  LoomArray X = array1(x, LOOM_FLOAT32, N), Y = array1(y, LOOM_FLOAT32, N);
  uint64_t c0 = compiled();
  int bad = 0;
  for (int k = -126; k <= 126; k++) {
    if (k == 0) continue; /* x / 1 is x * 1: a structure of its own */
    Sc s = {.kind = WEAK_FLOAT, .f = ldexp(1.0, k)};
    if (eval_binary(&X, LOOM_OP_TRUEDIV, s, false, &Y) != LOOM_OK) bad++;
    float c = (float)s.f;
    for (int i = 0; i < N; i++) {
      volatile float want = x[i] / c;
      if (!(isnan(want) ? isnan(y[i]) : memcmp((const void *)&want, &y[i], 4) == 0)) bad++;
    }
  }
  CHECK(bad == 0, "%d results of x / 2^k differ from the division's bits", bad);
  /* x * s of test_float32_weak is that kernel already: no compile at all */
  CHECK(compiled() - c0 == 0, "x / 2^k for 252 values of k compiled %llu kernels", (unsigned long long)(compiled() - c0));
  c0 = compiled();
  bad = 0;
  const double dv[] = {3.0, -0.1, 1e-40 /* a power of two? no */, 0x1p-140 /* its reciprocal overflows float32 */, 0.0, -0.0, INFINITY, NAN};
  for (size_t v = 0; v < sizeof dv / sizeof dv[0]; v++) {
    Sc s = {.kind = WEAK_FLOAT, .f = dv[v]};
    if (eval_binary(&X, LOOM_OP_TRUEDIV, s, false, &Y) != LOOM_OK) bad++;
    float c = (float)dv[v];
    for (int i = 0; i < N; i++) {
      volatile float want = x[i] / c;
      if (!(isnan(want) ? isnan(y[i]) : memcmp((const void *)&want, &y[i], 4) == 0)) bad++;
    }
  }
  CHECK(bad == 0, "%d wrong divisions", bad);
  CHECK(compiled() - c0 == 1, "x / c for other divisors compiled %llu kernels", (unsigned long long)(compiled() - c0));
}

/* Integer divisors stay constants (a multiply instead of a division per element): one kernel per
 * divisor, results as NumPy's floor division (x // 0 = 0). */
static void test_int_divisor_baked(void) {
  enum { N = 9 };
  int32_t x[N] = {-7, -6, -1, 0, 1, 6, 7, INT32_MIN, INT32_MAX}, y[N];
  LoomArray X = array1(x, LOOM_INT32, N), Y = array1(y, LOOM_INT32, N);
  const int32_t dv[] = {3, -3, 0, -1};
  uint64_t c0 = compiled();
  int bad = 0;
  for (size_t v = 0; v < sizeof dv / sizeof dv[0]; v++) {
    Sc s = {.kind = WEAK_INT, .i = dv[v]};
    if (eval_binary(&X, LOOM_OP_FLOORDIV, s, false, &Y) != LOOM_OK) bad++;
    for (int i = 0; i < N; i++) {
      int64_t want;
      if (dv[v] == 0) want = 0;
      else if (x[i] == INT32_MIN && dv[v] == -1) want = INT32_MIN;
      else {
        int64_t q = (int64_t)x[i] / dv[v];
        if ((int64_t)x[i] % dv[v] != 0 && ((x[i] < 0) != (dv[v] < 0))) q--;
        want = q;
      }
      if (y[i] != want) bad++;
    }
  }
  CHECK(bad == 0, "%d wrong floor divisions", bad);
  CHECK(compiled() - c0 == 4, "four divisors compiled %llu kernels (constants: one each)",
        (unsigned long long)(compiled() - c0));
}

/* sum(x * s): a full reduction large enough to be split into parts (partial + finish entries), and a
 * row reduction; many values of s, one kernel each. */
static void test_reductions(void) {
  enum { R = 300000 };
  double *x = malloc(sizeof(double) * R);
  if (!x) return;
  for (int i = 0; i < R; i++) x[i] = (i % 7) - 3.0;
  double ref = 0;
  for (int i = 0; i < R; i++) ref += x[i];
  LoomArray X = array1(x, LOOM_FLOAT64, R);
  uint64_t c0 = compiled();
  int bad = 0;
  for (int v = 0; v < 40; v++) {
    double s = 0.25 * v - 3.0 + (v == 16 ? 0.5 : 0); /* 1.0 would fold */
    LoomGraph *g = NULL;
    LoomNode a, b, m, r;
    double out = 0;
    LoomArray O = {.data = &out, .dtype = LOOM_FLOAT64, .ndim = 0};
    LoomStatus st = loom_graph_create(ctx, &g);
    if (st == LOOM_OK) st = loom_input(g, &X, &a);
    if (st == LOOM_OK) st = loom_weak_float(g, s, &b);
    if (st == LOOM_OK) st = loom_binary(g, LOOM_OP_MUL, a, b, &m);
    if (st == LOOM_OK) st = loom_reduce(g, LOOM_REDUCE_SUM, m, 0, NULL, 0, &r);
    if (st == LOOM_OK) st = loom_eval(g, 1, &r, &O);
    loom_graph_destroy(g);
    double sum_ref = 0;
    for (int i = 0; i < R; i++) sum_ref += x[i] * s;
    if (st != LOOM_OK || fabs(out - sum_ref) > 1e-9 * (fabs(sum_ref) + R)) {
      if (bad++ < 3) fprintf(stderr, "  sum(x * %g) = %g, want %g (%s)\n", s, out, sum_ref, loom_last_error(ctx));
    }
  }
  (void)ref;
  CHECK(bad == 0, "%d wrong sums", bad);
  CHECK(compiled() - c0 == 1, "sum(x * s) over 40 values compiled %llu kernels", (unsigned long long)(compiled() - c0));

  /* rows: (x * s + t).max(axis=1) over a 600 x 500 view of x */
  LoomArray X2 = {.data = x, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {600, 500}, .strides = {500, 1}};
  double out[600];
  LoomArray O = {.data = out, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {600}, .strides = {1}};
  c0 = compiled();
  bad = 0;
  for (int v = 0; v < 20; v++) {
    double s = v - 10.5, t = v * 0.125;
    LoomGraph *g = NULL;
    LoomNode a, b, c, m, p, r;
    int32_t axis = 1;
    LoomStatus st = loom_graph_create(ctx, &g);
    if (st == LOOM_OK) st = loom_input(g, &X2, &a);
    if (st == LOOM_OK) st = loom_weak_float(g, s, &b);
    if (st == LOOM_OK) st = loom_weak_float(g, t, &c);
    if (st == LOOM_OK) st = loom_binary(g, LOOM_OP_MUL, a, b, &m);
    if (st == LOOM_OK) st = loom_binary(g, LOOM_OP_ADD, m, c, &p);
    if (st == LOOM_OK) st = loom_reduce(g, LOOM_REDUCE_MAX, p, 1, &axis, 0, &r);
    if (st == LOOM_OK) st = loom_eval(g, 1, &r, &O);
    loom_graph_destroy(g);
    for (int i = 0; i < 600 && st == LOOM_OK; i++) {
      double want = -INFINITY;
      for (int j = 0; j < 500; j++) want = fmax(want, x[i * 500 + j] * s + t);
      if (out[i] != want) bad++;
    }
    if (st != LOOM_OK) bad++;
  }
  CHECK(bad == 0, "%d wrong row maxima", bad);
  /* v = 0 makes t == 0.0: x*s + 0.0 is not folded for floats, so still one structure */
  CHECK(compiled() - c0 == 1, "row max of x * s + t compiled %llu kernels", (unsigned long long)(compiled() - c0));
  free(x);
}

/* The kernel text names the parameter and its dtype, never the value; the GPU lowering carries it in
 * the parameter block. */
static void test_dumps(void) {
  float x[4] = {1, 2, 3, 4};
  LoomArray X = array1(x, LOOM_FLOAT32, 4);
  LoomGraph *g = NULL;
  LoomNode a, b, y;
  if (loom_graph_create(ctx, &g) != LOOM_OK) return;
  loom_input(g, &X, &a);
  loom_weak_float(g, 0.123456789, &b);
  loom_binary(g, LOOM_OP_ADD, a, b, &y);
  char *text = NULL;
  LoomStatus st = loom_dump(g, LOOM_DUMP_KERNELS, 1, &y, &text);
  CHECK(st == LOOM_OK && text && strstr(text, "param f32 0") && strstr(text, "param0=0.123456791"),
        "kernel dump: %s", text ? text : loom_last_error(ctx));
  CHECK(text && !strstr(text, "const f32"), "the value is not a constant of the kernel: %s", text ? text : "");
  loom_free_string(ctx, text);
  text = NULL;
  st = loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text);
  if (st == LOOM_ERR_UNSUPPORTED) {
    printf("PTX part skipped: %s\n", loom_last_error(ctx));
  } else {
    /* 1 dim + 2 buffers + 2 strides + 4 extra words + 1 parameter = 10 words of 8 bytes */
    CHECK(st == LOOM_OK && text && strstr(text, "_param_0[80]"), "PTX parameter block: %.400s",
          text ? text : loom_last_error(ctx));
  }
  loom_free_string(ctx, text);
  loom_graph_destroy(g);
}

int main(void) {
  if (loom_context_create(&ctx) != LOOM_OK) {
    fprintf(stderr, "cannot create a context\n");
    return 1;
  }
  test_float32_weak();
  test_int8_weak();
  test_extremes();
  test_int_divisor_baked();
  test_float_division();
  test_reductions();
  test_dumps();
  loom_context_destroy(ctx);
  printf("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}
