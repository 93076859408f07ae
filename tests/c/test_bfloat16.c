/* SPDX-License-Identifier: Apache-2.0 */
/* test_bfloat16.c: bfloat16 through the public API on the host, against references computed here.
 *
 * bfloat16 is a storage type computed in float32 (as ml_dtypes computes its NumPy ufuncs): a load
 * widens exactly, a store or cast rounds to nearest even once from the exact value (a float64, a
 * 64-bit integer), overflow gives inf, the float NaN gives the quiet NaN of its sign (0x7fc0 /
 * 0xffc0, as ml_dtypes), a bfloat16 NaN survives a copy bit for bit. References: tc_ld_to_bf16 (test_common.h), written from the format's definition with
 * long double arithmetic (exact for every int64 and double). Checks: casts from and to every dtype
 * bit for bit on edge values (ties, the overflow threshold, subnormals, NaN signs, 2^62 + 2^54 + 1);
 * every elementwise op on bfloat16 operands (exact ops bit for bit: the float32 result rounded;
 * functions within 1 bfloat16 ulp); reductions (accumulated in float32) against float64 loops;
 * a fused expression and strided input.
 */
#include "test_common.h"

static uint16_t bits_at(const LoomArray *a, int64_t k) { return *(uint16_t *)tc_ptr(a, k); }

/* Evaluates cast(x -> to) into a new array. */
static bool eval_cast(const LoomArray *x, LoomDType to, LoomArray *out) {
  LoomGraph *g = NULL;
  LoomNode xn, yn;
  bool ok = CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, x, &xn)) &&
            CHECK_OK(loom_cast(g, xn, to, &yn)) && CHECK_OK(tc_eval1(g, yn, out));
  if (g) loom_graph_destroy(g);
  return ok;
}

static void test_cast_in(void) {
  /* floating sources: ties, near-ties, the overflow threshold, subnormals, signed zeros, NaNs */
  const double fv[] = {0.0, -0.0, 1.0, -1.0, 1.0 + 0x1p-8, 1.0 + 0x1p-8 + 0x1p-30, 1.0 + 3 * 0x1p-8, 1.0 + 0x1p-8 - 0x1p-40,
                       3.3895313892515355e38, 3.3961e38, 3.39e38, 3.4028234663852886e38, 1e39, -1e39, 0x1p-133,
                       0x1p-134, 0x1.8p-134, 0x1p-126, 0x1.fep-127, 1e-45, 1e-300, 65504.0, 0.1, -2.7, NAN, -NAN,
                       INFINITY, -INFINITY, 123456.789, 1e-40};
  int nf = (int)(sizeof fv / sizeof fv[0]);
  const LoomDType fts[] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_FLOAT16, LOOM_COMPLEX64, LOOM_COMPLEX128};
  for (size_t ti = 0; ti < sizeof fts / sizeof fts[0]; ti++) {
    LoomDType t = fts[ti];
    LoomArray x = tc_new1(t, nf), out;
    for (int k = 0; k < nf; k++) {
      if (t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128) tc_set_c(&x, k, fv[k], 5.0);
      else tc_set_f(&x, k, fv[k]);
    }
    if (eval_cast(&x, LOOM_BFLOAT16, &out)) {
      for (int k = 0; k < nf; k++) {
        double v = tc_get_f(&x, k); /* the source's own value (its real part) */
        uint16_t want = tc_double_to_bf16(v), got = bits_at(&out, k);
        CHECK(got == want, "cast(%s %.17g -> bfloat16): 0x%04x, want 0x%04x", loom_dtype_name(t), v, got, want);
      }
      loom_array_free(tc_ctx, &out);
    }
    tc_free(&x);
  }
  /* integer sources, including values a float32 or float64 in between would round twice */
  const I128 iv[] = {0, 1, -1, 127, -128, 255, 256, 257, 32767, -32768, 65535, 2147483647, -2147483647 - 1,
                     ((I128)1 << 31) + ((I128)1 << 23) + 1, 4294967295LL, ((I128)1 << 24) + 1,
                     ((I128)1 << 62) + ((I128)1 << 54) + 1, ((I128)1 << 62) + ((I128)1 << 54),
                     -(((I128)1 << 62) + ((I128)1 << 54) + 1), INT64_MAX, INT64_MIN, (I128)UINT64_MAX,
                     ((I128)1 << 63) + ((I128)1 << 55), 1000003};
  int ni = (int)(sizeof iv / sizeof iv[0]);
  const LoomDType its[] = {LOOM_BOOL, LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_UINT16,
                           LOOM_UINT32, LOOM_UINT64};
  for (size_t ti = 0; ti < sizeof its / sizeof its[0]; ti++) {
    LoomDType t = its[ti];
    LoomArray x = tc_new1(t, ni), out;
    for (int k = 0; k < ni; k++) tc_set_i(&x, k, iv[k]); /* wrapped into t */
    if (eval_cast(&x, LOOM_BFLOAT16, &out)) {
      for (int k = 0; k < ni; k++) {
        I128 v = tc_get_i(&x, k);
        uint16_t want = tc_ld_to_bf16((long double)v), got = bits_at(&out, k);
        char b[48];
        CHECK(got == want, "cast(%s %s -> bfloat16): 0x%04x, want 0x%04x", loom_dtype_name(t), tc_i128_str(v, b), got, want);
      }
      loom_array_free(tc_ctx, &out);
    }
    tc_free(&x);
  }
}

static void test_cast_out(void) {
  /* every bfloat16 bit pattern to every dtype */
  int64_t n = 65536;
  LoomArray x = tc_new1(LOOM_BFLOAT16, n);
  for (int64_t k = 0; k < n; k++) *(uint16_t *)tc_ptr(&x, k) = (uint16_t)k;
  const LoomDType all[] = {LOOM_BOOL, LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_UINT16,
                           LOOM_UINT32, LOOM_UINT64, LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64, LOOM_COMPLEX64,
                           LOOM_COMPLEX128, LOOM_BFLOAT16};
  for (size_t ti = 0; ti < sizeof all / sizeof all[0]; ti++) {
    LoomDType t = all[ti];
    LoomArray out;
    if (!eval_cast(&x, t, &out)) continue;
    int bad = 0;
    for (int64_t k = 0; k < n; k++) {
      double v = tc_bf16_to_double((uint16_t)k);
      bool ok;
      if (t == LOOM_BOOL) ok = (tc_get_i(&out, k) != 0) == (v != 0);
      else if (t == LOOM_BFLOAT16) ok = bits_at(&out, k) == (uint16_t)k;
      else if (t == LOOM_FLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64 || t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128) {
        double got = tc_get_f(&out, k), want = t == LOOM_FLOAT16 ? tc_round_f16(v) : v; /* exact, float16 rounds */
        ok = isnan(want) ? isnan(got) : (got == want && signbit(got) == signbit(want));
        if (t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128) {
          double re, im;
          tc_get_c(&out, k, &re, &im);
          ok = ok && im == 0;
        }
      } else { /* saturating, NaN -> 0 */
        I128 want = isnan(v) ? 0 : !(fabs(v) < 1e38) ? (v > 0 ? tc_int_max(t) : tc_int_min(t)) : (I128)trunc(v);
        if (want > tc_int_max(t)) want = tc_int_max(t);
        if (want < tc_int_min(t)) want = tc_int_min(t);
        ok = tc_get_i(&out, k) == want;
      }
      if (!ok && bad++ < 3) CHECK(false, "cast(bfloat16 0x%04x -> %s)", (unsigned)k, loom_dtype_name(t));
    }
    CHECK(bad == 0, "cast(bfloat16 -> %s): %d of 65536 patterns wrong", loom_dtype_name(t), bad);
    loom_array_free(tc_ctx, &out);
  }
  tc_free(&x);
}

/* ---- ops ---------------------------------------------------------------------------------------- */
typedef struct BfOp {
  LoomOp op;
  int arity;
  int exact; /* 1: the float32 result rounded, bit for bit; 0: within 1 bfloat16 ulp */
  double (*f1)(double);
  double (*f2)(double, double);
} BfOp;

static double neg_(double x) { return -x; }
static double sign_(double x) { return isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0; }
static double add_(double a, double b) { return (double)((float)a + (float)b); }
static double sub_(double a, double b) { return (double)((float)a - (float)b); }
static double mul_(double a, double b) { return (double)((float)a * (float)b); }
static double div_(double a, double b) { return (double)((float)a / (float)b); }
static double sqrtf_(double x) { return (double)sqrtf((float)x); }
static double max_(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }
static double min_(double a, double b) { return isnan(a) || isnan(b) ? NAN : a < b ? a : b; }

static const BfOp bf_ops[] = {
    {LOOM_OP_NEG, 1, 1, neg_, NULL},         {LOOM_OP_ABS, 1, 1, fabs, NULL},        {LOOM_OP_SIGN, 1, 1, sign_, NULL},
    {LOOM_OP_SQRT, 1, 1, sqrtf_, NULL},      {LOOM_OP_FLOOR, 1, 1, floor, NULL},     {LOOM_OP_RINT, 1, 1, nearbyint, NULL},
    {LOOM_OP_EXP, 1, 0, exp, NULL},          {LOOM_OP_LOG, 1, 0, log, NULL},         {LOOM_OP_SIN, 1, 0, sin, NULL},
    {LOOM_OP_TANH, 1, 0, tanh, NULL},        {LOOM_OP_ATAN, 1, 0, atan, NULL},       {LOOM_OP_EXPM1, 1, 0, expm1, NULL},
    {LOOM_OP_ADD, 2, 1, NULL, add_},         {LOOM_OP_SUB, 2, 1, NULL, sub_},        {LOOM_OP_MUL, 2, 1, NULL, mul_},
    {LOOM_OP_TRUEDIV, 2, 1, NULL, div_},     {LOOM_OP_MAXIMUM, 2, 1, NULL, max_},    {LOOM_OP_MINIMUM, 2, 1, NULL, min_},
    {LOOM_OP_ATAN2, 2, 0, NULL, atan2},      {LOOM_OP_HYPOT, 2, 0, NULL, hypot},     {LOOM_OP_POW, 2, 0, NULL, pow},
    {LOOM_OP_COPYSIGN, 2, 1, NULL, copysign},
};

static void test_ops(void) {
  /* operands: every 16th bit pattern (finite, inf, NaN, subnormal) against a few partners */
  const double partners[] = {1.0, -2.5, 0.0, -0.0, 3.0e38, 1e-39, INFINITY, NAN, 0.1, 7.0};
  int np = (int)(sizeof partners / sizeof partners[0]);
  int64_t m = 4096, n = m * np;
  LoomArray a = tc_new1(LOOM_BFLOAT16, n), b = tc_new1(LOOM_BFLOAT16, n);
  for (int64_t i = 0; i < m; i++)
    for (int j = 0; j < np; j++) {
      *(uint16_t *)tc_ptr(&a, i * np + j) = (uint16_t)(i * 16 + 3);
      tc_set_f(&b, i * np + j, partners[j]);
    }
  for (size_t oi = 0; oi < sizeof bf_ops / sizeof bf_ops[0]; oi++) {
    const BfOp *d = &bf_ops[oi];
    LoomGraph *g = NULL;
    LoomNode an, bn, yn;
    LoomArray out;
    char what[64];
    snprintf(what, sizeof what, "%s(bfloat16)", loom_op_name(d->op));
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
    bool built = CHECK_OK(loom_input(g, &a, &an)) && CHECK_OK(loom_input(g, &b, &bn)) &&
                 CHECK_OK(d->arity == 1 ? loom_unary(g, d->op, an, &yn) : loom_binary(g, d->op, an, bn, &yn));
    if (built && tc_check_info(g, yn, LOOM_BFLOAT16, 1, &n, what) && CHECK_OK(tc_eval1(g, yn, &out))) {
      int bad = 0;
      for (int64_t k = 0; k < n; k++) {
        double x = tc_get_f(&a, k), y = tc_get_f(&b, k);
        double want = tc_round_bf16(d->arity == 1 ? d->f1(x) : d->f2(x, y)), got = tc_get_f(&out, k);
        bool ok = d->exact ? tc_close_ulp(LOOM_BFLOAT16, got, want, 0) && (want != 0 || signbit(got) == signbit(want) ||
                                                                            d->op == LOOM_OP_SIGN)
                           : tc_close_ulp(LOOM_BFLOAT16, got, want, 1);
        if (isnan(want)) ok = isnan(got); /* a quiet NaN (its payload: the operand's or the canonical one) */
        if (!ok && bad++ < 4) CHECK(false, "%s [%.9g, %.9g]: got %.9g (0x%04x), want %.9g", what, x, y, got, bits_at(&out, k), want);
      }
      CHECK(bad == 0, "%s: %d of %" PRId64 " wrong", what, bad, n);
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&a);
  tc_free(&b);
}

/* ---- reductions, fused expressions, strided input ------------------------------------------------ */
static void test_reductions_and_fusion(void) {
  int64_t R = 300, K = 17;
  LoomArray x = tc_new2(LOOM_BFLOAT16, R, K);
  uint64_t seed = 11;
  for (int64_t k = 0; k < R * K; k++) tc_set_f(&x, k, 4 * tc_rand_unit(&seed) - 2);
  for (int axis = -1; axis < 2; axis++) {
    const LoomReduceOp ops[] = {LOOM_REDUCE_SUM, LOOM_REDUCE_MEAN, LOOM_REDUCE_MAX, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_PROD};
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      LoomReduceOp op = ops[oi];
      LoomGraph *g = NULL;
      LoomNode xn, yn;
      LoomArray out;
      int32_t ax = axis;
      if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
      if (CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_reduce(g, op, xn, axis < 0 ? 0 : 1, axis < 0 ? NULL : &ax, 0, &yn)) &&
          CHECK_OK(tc_eval1(g, yn, &out))) {
        CHECK(out.dtype == (op == LOOM_REDUCE_ARGMIN ? LOOM_INT64 : LOOM_BFLOAT16), "bfloat16 %d: result dtype", (int)op);
        int64_t nout = axis < 0 ? 1 : axis == 0 ? K : R, nred = axis < 0 ? R * K : axis == 0 ? R : K;
        for (int64_t o = 0; o < nout; o++) {
          double s = 0, p = 1, mx = -INFINITY, mn = INFINITY, sabs = 0;
          int64_t amin = 0;
          for (int64_t r = 0; r < nred; r++) {
            double v = tc_get_f(&x, axis < 0 ? r : axis == 0 ? r * K + o : o * K + r);
            s += v, sabs += fabs(v), p *= v;
            if (v > mx) mx = v;
            if (v < mn) mn = v, amin = r;
          }
          double got = tc_get_f(&out, o);
          switch (op) {
          case LOOM_REDUCE_SUM: /* float32 accumulation, one bfloat16 rounding at the end */
            CHECK(fabs(got - s) <= fabs(s) * 0x1p-8 + sabs * 1e-6, "bfloat16 sum axis %d [%" PRId64 "]: %g vs %g", axis, o, got, s);
            break;
          case LOOM_REDUCE_MEAN:
            CHECK(fabs(got - s / nred) <= fabs(s / nred) * 0x1p-8 + sabs / nred * 1e-6, "bfloat16 mean axis %d", axis);
            break;
          case LOOM_REDUCE_PROD:
            CHECK(tc_close_rel(got, tc_round_bf16(p), 0x1p-7 + nred * 1e-7, 1e-30) || fabs(p) < 1e-30 || fabs(p) > 1e30,
                  "bfloat16 prod axis %d [%" PRId64 "]: %g vs %g", axis, o, got, p);
            break;
          case LOOM_REDUCE_MAX: CHECK(got == mx, "bfloat16 max axis %d", axis); break;
          default: CHECK(tc_get_i(&out, o) == amin, "bfloat16 argmin axis %d", axis); break;
          }
        }
        loom_array_free(tc_ctx, &out);
      }
      loom_graph_destroy(g);
    }
  }
  /* a fused expression on a strided (transposed) bfloat16 input with a weak float: x.T * 1.5 + 1 */
  LoomArray xt = x;
  xt.shape[0] = K, xt.shape[1] = R, xt.strides[0] = 1, xt.strides[1] = K;
  LoomGraph *g = NULL;
  LoomNode xn, w, one, y, z;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &xt, &xn)) && CHECK_OK(loom_weak_float(g, 1.5, &w)) &&
      CHECK_OK(loom_weak_int(g, 1, &one)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, xn, w, &y)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, y, one, &z)) && tc_check_info(g, z, LOOM_BFLOAT16, 2, NULL, "x.T * 1.5 + 1") &&
      CHECK_OK(tc_eval1(g, z, &out))) {
    LoomStats s;
    CHECK_OK(loom_get_stats(tc_ctx, &s));
    CHECK(s.last_eval_kernels == 1, "bfloat16 expression fuses into one kernel");
    for (int64_t i = 0; i < K; i++)
      for (int64_t j = 0; j < R; j++) {
        /* ml_dtypes rounds each ufunc's float32 result: x * 1.5 is a bfloat16 value before the + 1 */
        double v = tc_get_f(&x, j * K + i), xw = tc_round_bf16((double)((float)v * 1.5f));
        double want = tc_round_bf16((double)((float)xw + 1.0f)), got = tc_get_f(&out, i * R + j);
        CHECK(tc_close_ulp(LOOM_BFLOAT16, got, want, 0), "x.T * 1.5 + 1 [%" PRId64 ",%" PRId64 "]: %g vs %g", i, j, got, want);
      }
    loom_array_free(tc_ctx, &out);
  }
  if (g) loom_graph_destroy(g);
  /* strong constants round once from the double: loom_const_f64 and a weak float met by bfloat16 */
  LoomArray one1 = tc_new1(LOOM_BFLOAT16, 1);
  tc_set_f(&one1, 0, 0.0);
  g = NULL;
  LoomNode c, on, sum;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &one1, &on)) &&
      CHECK_OK(loom_const_f64(g, 1.0 + 0x1p-8 + 0x1p-30, LOOM_BFLOAT16, &c)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, on, c, &sum)) &&
      CHECK_OK(tc_eval1(g, sum, &out))) {
    CHECK(bits_at(&out, 0) == 0x3f81, "bfloat16 constant 1 + 2^-8 + 2^-30 rounds up once: 0x%04x", bits_at(&out, 0));
    loom_array_free(tc_ctx, &out);
  }
  if (g) loom_graph_destroy(g);
  tc_free(&one1);
  tc_free(&x);
}

int main(void) {
  /* self-check of the reference against the format's landmarks */
  CHECK(tc_double_to_bf16(1.0) == 0x3f80 && tc_double_to_bf16(-2.0) == 0xc000 && tc_double_to_bf16(3.3962e38) == 0x7f80 &&
            tc_double_to_bf16(3.39e38) == 0x7f7f && tc_double_to_bf16(0x1p-133) == 0x0001 &&
            tc_double_to_bf16(1.0 + 0x1p-8) == 0x3f80 && tc_double_to_bf16(1.0 + 3 * 0x1p-8) == 0x3f82 &&
            tc_double_to_bf16(NAN) == 0x7fc0 && tc_bf16_to_double(0x4049) == 3.140625,
        "bfloat16 reference helpers");
  if (!tc_init()) return 1;
  test_cast_in();
  test_cast_out();
  test_ops();
  test_reductions_and_fusion();
  return tc_finish();
}
