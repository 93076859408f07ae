/* test_semantics.c: silent wrong answers of issue 10, against references written here.
 *
 * - float16 inside fused kernels: every float16 result is rounded (NumPy rounds each float16 op),
 *   including explicit casts (astype(float16)) that never reach memory, overflow to inf, and
 *   float16 reductions used by further float16 math. The reference computes each op in double and
 *   rounds it to float16 with test_common.h's own converter: for + - * / of float16 operands that
 *   equals float32 computation then rounding (float32 has more than 2 * 11 + 2 bits), so the
 *   comparison is exact (0 ulp).
 * - reciprocal: NumPy 2's integer 1/x (truncated: 1, -1, else 0; Loom's 1/0 is 0) and bool -> int8.
 * - float remainder: exact fmod (NumPy's npy_divmod) for operands of very different magnitudes.
 * - cosh / sinh near their overflow limits (SLEEF's overflowed where exp does, ~0.7 short of it).
 * - the GPU code path, checked without a GPU in its PTX (loom_dump LOOM_DUMP_PTX, sm_90): float
 *   fmod goes through libdevice's exact __nv_fmod(f) (not div + truncate + multiply), and uint64 /
 *   int64 -> float64 conversions are single cvt.rn.f64.u64 / .s64 instructions (not via float32 or a
 *   signed conversion). Skipped when this LLVM has no NVPTX backend or no libdevice is found.
 */
#include "test_common.h"

static LoomArray f16_array(int64_t n, const double *v) {
  LoomArray a = tc_new1(LOOM_FLOAT16, n);
  for (int64_t i = 0; i < n; i++) tc_set_f(&a, i, v[i]);
  return a;
}

/* ((a * b) + c) / d - a, all float16, one fused kernel; values chosen to round and to overflow. */
static void test_f16_fused_ops(void) {
  enum { N = 4096 };
  static double av[N], bv[N], cv[N], dv[N];
  uint64_t rng = 12345;
  for (int i = 0; i < N; i++) {
    av[i] = tc_round_f16((tc_rand_unit(&rng) - 0.5) * 600.0);
    bv[i] = tc_round_f16((tc_rand_unit(&rng) - 0.5) * 600.0);
    cv[i] = tc_round_f16((tc_rand_unit(&rng) - 0.5) * 3000.0);
    dv[i] = tc_round_f16(0.25 + tc_rand_unit(&rng) * 3.0);
  }
  LoomArray A = f16_array(N, av), B = f16_array(N, bv), C = f16_array(N, cv), D = f16_array(N, dv);
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomNode a, b, c, d, p, q, r, y, y64;
  bool ok = CHECK_OK(loom_input(g, &A, &a)) && CHECK_OK(loom_input(g, &B, &b)) && CHECK_OK(loom_input(g, &C, &c)) &&
            CHECK_OK(loom_input(g, &D, &d)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, a, b, &p)) &&
            CHECK_OK(loom_binary(g, LOOM_OP_ADD, p, c, &q)) && CHECK_OK(loom_binary(g, LOOM_OP_TRUEDIV, q, d, &r)) &&
            CHECK_OK(loom_binary(g, LOOM_OP_SUB, r, a, &y)) && CHECK_OK(loom_cast(g, y, LOOM_FLOAT64, &y64));
  LoomArray out;
  if (ok && CHECK_OK(tc_eval1(g, y64, &out))) {
    LoomStats s;
    loom_get_stats(tc_ctx, &s);
    CHECK(s.last_eval_kernels == 1, "float16 chain: %llu kernels (want 1: the test is about fused values)",
          (unsigned long long)s.last_eval_kernels);
    int bad = 0, infs = 0;
    for (int i = 0; i < N; i++) {
      double want = tc_round_f16(tc_round_f16(tc_round_f16(tc_round_f16(av[i] * bv[i]) + cv[i]) / dv[i]) - av[i]);
      double got = tc_get_f(&out, i);
      infs += isinf(want);
      if (!(got == want || (isnan(got) && isnan(want)))) {
        if (bad++ < 5)
          fprintf(stderr, "f16 chain [%d]: a=%g b=%g c=%g d=%g: got %.17g want %.17g\n", i, av[i], bv[i], cv[i], dv[i],
                  got, want);
      }
    }
    CHECK(bad == 0 && infs > 10, "float16 chain: %d of %d wrong (%d overflow to inf)", bad, N, infs);
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  tc_free(&A);
  tc_free(&B);
  tc_free(&C);
  tc_free(&D);
}

/* Explicit casts that stay in registers: x.astype(float16).astype(float32), from f32 and f64. */
static void test_f16_casts(void) {
  static const double vals[] = {17630.0, 300.0, 65519.0, 65520.0, 1e-8, 2049.0, 2051.0, -0.1, 1.0000001,
                                0.00006103515625, 5.960464477539063e-08, 2.9802322387695312e-08,
                                2.98023223876953125e-08 * 1.0000000001, 70000.0, -1e9};
  enum { N = sizeof vals / sizeof vals[0] };
  LoomArray x32 = tc_new1(LOOM_FLOAT32, N), x64 = tc_new1(LOOM_FLOAT64, N);
  for (int i = 0; i < N; i++) {
    tc_set_f(&x32, i, vals[i]);
    tc_set_f(&x64, i, vals[i]);
  }
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomNode a32, a64, h32, h64, r32, r64, k, m, m64;
  bool ok = CHECK_OK(loom_input(g, &x32, &a32)) && CHECK_OK(loom_input(g, &x64, &a64)) &&
            CHECK_OK(loom_cast(g, a32, LOOM_FLOAT16, &h32)) && CHECK_OK(loom_cast(g, h32, LOOM_FLOAT32, &r32)) &&
            CHECK_OK(loom_cast(g, a64, LOOM_FLOAT16, &h64)) && CHECK_OK(loom_cast(g, h64, LOOM_FLOAT64, &r64)) &&
            CHECK_OK(loom_weak_float(g, 300.0, &k)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, h32, k, &m)) &&
            CHECK_OK(loom_cast(g, m, LOOM_FLOAT64, &m64));
  LoomNode roots[3] = {r32, r64, m64};
  LoomArray outs[3];
  memset(outs, 0, sizeof outs);
  if (ok && CHECK_OK(loom_eval(g, 3, roots, outs))) {
    for (int i = 0; i < N; i++) {
      double w32 = tc_round_f16((double)(float)vals[i]), w64 = tc_round_f16(vals[i]);
      double wm = tc_round_f16(w32 * 300.0);
      CHECK(tc_get_f(&outs[0], i) == w32, "float32 %.17g .astype(float16).astype(float32): got %.17g want %.17g", vals[i],
            tc_get_f(&outs[0], i), w32);
      CHECK(tc_get_f(&outs[1], i) == w64, "float64 %.17g .astype(float16).astype(float64): got %.17g want %.17g (one rounding)",
            vals[i], tc_get_f(&outs[1], i), w64);
      CHECK(tc_get_f(&outs[2], i) == wm || (isnan(wm) && isnan(tc_get_f(&outs[2], i))),
            "float16(%.17g) * 300 as float64: got %.17g want %.17g", vals[i], tc_get_f(&outs[2], i), wm);
    }
    CHECK(tc_get_f(&outs[0], 0) == 17632.0 && isinf(tc_get_f(&outs[2], 1)), "the issue's examples: 17632 and inf");
    for (int i = 0; i < 3; i++) loom_array_free(tc_ctx, &outs[i]);
  }
  loom_graph_destroy(g);
  tc_free(&x32);
  tc_free(&x64);
}

/* float64 -> float16 rounds once (NumPy), also where float32 would land on a float16 midpoint. */
static void test_f16_from_f64_midpoints(void) {
  enum { N = 20000 };
  LoomArray x = tc_new1(LOOM_FLOAT64, N);
  uint64_t rng = 7;
  for (int i = 0; i < N; i++) {
    int e = (int)(tc_rand_u64(&rng) % 40) - 26;
    double m = 1024.0 + (double)(tc_rand_u64(&rng) % 1024) + 0.5; /* a midpoint's mantissa */
    double eps = ldexp(1.0, e - 40) * (double)((int)(tc_rand_u64(&rng) % 5) - 2);
    double v = ldexp(m, e - 10) + eps;
    if (i % 101 == 0) v = 65519.999 + (double)(i % 7) * 1e-4; /* below the overflow midpoint */
    tc_set_f(&x, i, tc_rand_u64(&rng) & 1 ? -v : v);
  }
  LoomGraph *g = NULL;
  LoomNode a, h, b;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &a)) &&
      CHECK_OK(loom_cast(g, a, LOOM_FLOAT16, &h)) && CHECK_OK(loom_cast(g, h, LOOM_FLOAT64, &b)) &&
      CHECK_OK(tc_eval1(g, b, &out))) {
    int bad = 0;
    for (int i = 0; i < N; i++) bad += tc_get_f(&out, i) != tc_round_f16(tc_get_f(&x, i));
    CHECK(bad == 0, "float64 -> float16 near midpoints: %d of %d not rounded once", bad, N);
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  tc_free(&x);
}

/* A float16 sum used by further float16 math is rounded first: sum = 2049 -> 2048, + 1 -> 2048. */
static void test_f16_reduction(void) {
  enum { N = 2049 };
  LoomArray x = tc_new1(LOOM_FLOAT16, N);
  for (int i = 0; i < N; i++) tc_set_f(&x, i, 1.0);
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomNode a, s, one, t, mx, t2;
  LoomArray out, out2;
  if (CHECK_OK(loom_input(g, &x, &a)) && CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, a, 0, NULL, 0, &s)) &&
      CHECK_OK(loom_weak_float(g, 1.0, &one)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, s, one, &t)) &&
      CHECK_OK(tc_eval1(g, t, &out))) {
    CHECK(tc_get_f(&out, 0) == 2048.0, "float16 sum(2049 ones) + 1: got %g, want 2048 (NumPy)", tc_get_f(&out, 0));
    loom_array_free(tc_ctx, &out);
  }
  /* max of float16 values is one of them: no rounding needed, same answer */
  if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_MAX, a, 0, NULL, 0, &mx)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, mx, one, &t2)) &&
      CHECK_OK(tc_eval1(g, t2, &out2))) {
    CHECK(tc_get_f(&out2, 0) == 2.0, "float16 max + 1: %g", tc_get_f(&out2, 0));
    loom_array_free(tc_ctx, &out2);
  }
  loom_graph_destroy(g);
  tc_free(&x);
}

/* reciprocal: NumPy 2 (ints truncate; bool gives int8); Loom's 1/0 for ints is 0. */
static void test_reciprocal(void) {
  static const int64_t iv[] = {-7, -2, -1, 0, 1, 2, 3, 100};
  LoomDType ts[4] = {LOOM_INT8, LOOM_INT32, LOOM_INT64, LOOM_UINT16};
  for (int k = 0; k < 4; k++) {
    LoomArray x = tc_new1(ts[k], 8);
    for (int i = 0; i < 8; i++) tc_set_i(&x, i, iv[i]);
    LoomGraph *g = NULL;
    LoomNode a, r;
    LoomArray out;
    if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &a)) &&
        CHECK_OK(loom_unary(g, LOOM_OP_RECIPROCAL, a, &r)) && tc_check_info(g, r, ts[k], 1, NULL, "reciprocal(int)") &&
        CHECK_OK(tc_eval1(g, r, &out))) {
      for (int i = 0; i < 8; i++) {
        I128 v = tc_get_i(&x, i), want = v == 1 ? 1 : (v == -1 && tc_is_signed(ts[k])) ? -1 : 0;
        CHECK(tc_get_i(&out, i) == want, "reciprocal(%s %lld) = %lld", loom_dtype_name(ts[k]), (long long)v,
              (long long)tc_get_i(&out, i));
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
    tc_free(&x);
  }
  LoomArray bx = tc_new1(LOOM_BOOL, 2);
  tc_set_i(&bx, 0, 1);
  LoomGraph *g = NULL;
  LoomNode a, r;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &bx, &a)) &&
      CHECK_OK(loom_unary(g, LOOM_OP_RECIPROCAL, a, &r)) && tc_check_info(g, r, LOOM_INT8, 1, NULL, "reciprocal(bool)") &&
      CHECK_OK(tc_eval1(g, r, &out))) {
    CHECK(tc_get_i(&out, 0) == 1 && tc_get_i(&out, 1) == 0, "reciprocal([True, False]) = [1, 0] (int8)");
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  tc_free(&bx);
}

/* NumPy's remainder for floats of very different magnitudes: exact fmod, then the sign fix. */
static double ref_remainder(double a, double b) {
  double m = fmod(a, b);
  if (b == 0) return m;
  if (m != 0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = copysign(0.0, b);
  }
  return m;
}

static void test_remainder(void) {
  static const double av[] = {-9223372036854775808.0, 1e30, -3.5e20, 7.0, 0.2135, 1e-30, 123456789.0, -0.0};
  static const double bv[] = {-4.8e29, 0.7, 3.0, -1e-20, 0.001, 1e-38, 1e10, 5.0};
  enum { NA = sizeof av / sizeof av[0], NB = sizeof bv / sizeof bv[0], N = NA * NB };
  LoomDType ts[2] = {LOOM_FLOAT32, LOOM_FLOAT64};
  for (int k = 0; k < 2; k++) {
    LoomArray A = tc_new1(ts[k], N), B = tc_new1(ts[k], N);
    for (int i = 0; i < NA; i++)
      for (int j = 0; j < NB; j++) {
        tc_set_f(&A, i * NB + j, av[i]);
        tc_set_f(&B, i * NB + j, bv[j]);
      }
    LoomGraph *g = NULL;
    LoomNode a, b, r;
    LoomArray out;
    if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &A, &a)) && CHECK_OK(loom_input(g, &B, &b)) &&
        CHECK_OK(loom_binary(g, LOOM_OP_MOD, a, b, &r)) && CHECK_OK(tc_eval1(g, r, &out))) {
      for (int i = 0; i < N; i++) {
        double x = tc_get_f(&A, i), y = tc_get_f(&B, i);
        double want = tc_round_to(ts[k], ref_remainder(x, y)); /* fmod is exact: no rounding */
        CHECK(tc_get_f(&out, i) == want, "%s remainder(%.9g, %.9g) = %.9g, want %.9g", loom_dtype_name(ts[k]), x, y,
              tc_get_f(&out, i), want);
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
    tc_free(&A);
    tc_free(&B);
  }
}

/* cosh / sinh up to their own overflow limits (not exp's): found by the NumPy fuzzer. */
static void test_cosh_sinh_range(void) {
  static const double v[] = {-709.2854330592444, 709.9, 710.4, 710.5, 1.0, -700.5, 705.0, 300.0, -0.0, 20.0};
  enum { N = sizeof v / sizeof v[0] };
  LoomDType ts[2] = {LOOM_FLOAT64, LOOM_FLOAT32};
  for (int k = 0; k < 2; k++) {
    LoomArray x = tc_new1(ts[k], N);
    for (int i = 0; i < N; i++) tc_set_f(&x, i, k ? v[i] / 8.0 : v[i]); /* float32: 88.66, 88.74, 88.8 ... */
    LoomGraph *g = NULL;
    LoomNode a, c, sh;
    LoomNode roots[2];
    LoomArray outs[2];
    memset(outs, 0, sizeof outs);
    if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &a)) &&
        CHECK_OK(loom_unary(g, LOOM_OP_COSH, a, &c)) && CHECK_OK(loom_unary(g, LOOM_OP_SINH, a, &sh))) {
      roots[0] = c;
      roots[1] = sh;
      if (CHECK_OK(loom_eval(g, 2, roots, outs))) {
        for (int i = 0; i < N; i++) {
          double xi = tc_get_f(&x, i);
          double wc = tc_round_to(ts[k], cosh(xi)), ws = tc_round_to(ts[k], sinh(xi));
          CHECK(tc_close_ulp(ts[k], tc_get_f(&outs[0], i), wc, 4) && tc_close_ulp(ts[k], tc_get_f(&outs[1], i), ws, 4),
                "%s cosh/sinh(%.17g) = %.17g / %.17g, want %.17g / %.17g", loom_dtype_name(ts[k]), xi,
                tc_get_f(&outs[0], i), tc_get_f(&outs[1], i), wc, ws);
        }
        loom_array_free(tc_ctx, &outs[0]);
        loom_array_free(tc_ctx, &outs[1]);
      }
    }
    loom_graph_destroy(g);
    tc_free(&x);
  }
}

/* NumPy 2 results for Python scalars and clip that the NumPy fuzzer found differing (each value here
 * is NumPy 2.4's answer). */
static LoomNode u8_input(LoomGraph *g, LoomArray *a) {
  static const int64_t vals[4] = {0, 1, 2, 255};
  *a = tc_new1(LOOM_UINT8, 4);
  for (int i = 0; i < 4; i++) tc_set_i(a, i, vals[i]);
  LoomNode x = -1;
  CHECK_OK(loom_input(g, a, &x));
  return x;
}

static void expect_u8(LoomGraph *g, LoomNode y, LoomDType t, const double *want, const char *what) {
  LoomArray out;
  if (!tc_check_info(g, y, t, 1, NULL, what) || !CHECK_OK(tc_eval1(g, y, &out))) return;
  for (int i = 0; i < 4; i++)
    CHECK(tc_get_f(&out, i) == want[i], "%s [%d]: %g, want %g", what, i, tc_get_f(&out, i), want[i]);
  loom_array_free(tc_ctx, &out);
}

static void test_scalars_and_clip(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a, b;
  LoomNode x = u8_input(g, &a), k, k2, y;
  /* logical ops: a Python scalar's own truth value (no range check, no rounding) */
  if (CHECK_OK(loom_weak_int(g, 300, &k)) && CHECK_OK(loom_binary(g, LOOM_OP_LOGICAL_AND, x, k, &y)))
    expect_u8(g, y, LOOM_BOOL, (const double[]){0, 1, 1, 1}, "logical_and(u8, 300)");
  LoomArray h = tc_new1(LOOM_FLOAT16, 4);
  LoomNode hx;
  if (CHECK_OK(loom_input(g, &h, &hx)) && CHECK_OK(loom_weak_float(g, 5e-324, &k)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_LOGICAL_OR, hx, k, &y)))
    expect_u8(g, y, LOOM_BOOL, (const double[]){1, 1, 1, 1}, "logical_or(f16 zeros, 5e-324)");
  /* comparisons with Python ints past the dtype: decided by the range */
  if (CHECK_OK(loom_weak_int(g, -1, &k)) && CHECK_OK(loom_binary(g, LOOM_OP_GT, x, k, &y)))
    expect_u8(g, y, LOOM_BOOL, (const double[]){1, 1, 1, 1}, "u8 > -1");
  if (CHECK_OK(loom_weak_uint(g, UINT64_C(1) << 63, &k)) && CHECK_OK(loom_binary(g, LOOM_OP_EQ, x, k, &y)))
    expect_u8(g, y, LOOM_BOOL, (const double[]){0, 0, 0, 0}, "u8 == 2**63");
  LoomArray u64 = tc_new1(LOOM_UINT64, 4);
  tc_set_i(&u64, 3, (I128)1 << 63);
  LoomNode ux;
  if (CHECK_OK(loom_input(g, &u64, &ux)) && CHECK_OK(loom_weak_uint(g, (UINT64_C(1) << 63) + 5, &k)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, ux, k, &y)))
    expect_u8(g, y, LOOM_UINT64, (const double[]){0x1p63 + 5, 0x1p63 + 5, 0x1p63 + 5, 5},
              "u64 + (2**63 + 5)");
  CHECK(loom_binary(g, LOOM_OP_ADD, x, k, &y) == LOOM_ERR_INVALID_ARGUMENT, "u8 + 2**63+5: out of bounds");
  /* clip: NumPy 2's np.clip */
  if (CHECK_OK(loom_weak_int(g, -2, &k)) && CHECK_OK(loom_weak_int(g, 10, &k2)) && CHECK_OK(loom_clip(g, x, k, k2, &y)))
    expect_u8(g, y, LOOM_UINT8, (const double[]){0, 1, 2, 10}, "clip(u8, -2, 10)");
  if (CHECK_OK(loom_weak_float(g, 1e30, &k)) && CHECK_OK(loom_weak_int(g, 2147483647, &k2)) &&
      CHECK_OK(loom_clip(g, x, k, k2, &y)))
    expect_u8(g, y, LOOM_FLOAT64, (const double[]){1e30, 1e30, 1e30, 1e30}, "clip(u8, 1e30, 2**31-1)");
  if (CHECK_OK(loom_weak_int(g, 300, &k)))
    CHECK(loom_clip(g, x, k, -1, &y) == LOOM_ERR_INVALID_ARGUMENT, "clip(u8, 300, None): out of bounds");
  b = tc_new1(LOOM_INT8, 4);
  LoomNode i8, s16, s_f16;
  if (CHECK_OK(loom_input(g, &b, &i8)) && CHECK_OK(loom_const_i64(g, 12, LOOM_UINT16, &s16)) &&
      CHECK_OK(loom_const_f64(g, -2.431640625, LOOM_FLOAT16, &s_f16)) && CHECK_OK(loom_clip(g, i8, s16, s_f16, &y)))
    expect_u8(g, y, LOOM_FLOAT32, (const double[]){-2.431640625, -2.431640625, -2.431640625, -2.431640625},
              "clip(int8, uint16(12), float16(-2.43)): float32 (NumPy's n-ary promotion)");
  /* mean with an integer dtype: int sum, float divide, truncating cast */
  int32_t ax = 0;
  if (CHECK_OK(loom_reduce_dtype(g, LOOM_REDUCE_MEAN, x, 1, &ax, 0, LOOM_INT32, &y))) {
    LoomArray out;
    if (tc_check_info(g, y, LOOM_INT32, 0, NULL, "mean(u8, dtype=int32)") && CHECK_OK(tc_eval1(g, y, &out))) {
      CHECK(tc_get_i(&out, 0) == 64, "mean([0,1,2,255], dtype=int32) = %lld, want 64", (long long)tc_get_i(&out, 0));
      loom_array_free(tc_ctx, &out);
    }
  }
  loom_graph_destroy(g);
  tc_free(&a);
  tc_free(&b);
  tc_free(&h);
  tc_free(&u64);
}

/* ---- the GPU code path, in its PTX ------------------------------------------------------------------ */
static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
  return n;
}

/* Whether the PTX truncates a correctly rounded quotient (NVPTX's frem lowering:
 * div.rn.fNN %q, a, b; cvt.rzi.fNN.fNN %t, %q; ...), which is not an exact fmod. */
static bool has_truncated_quotient(const char *ptx, int bits) {
  char div[32], cvt[40], regs[64][16];
  int nregs = 0;
  snprintf(div, sizeof div, "div.rn.f%d", bits);
  snprintf(cvt, sizeof cvt, "cvt.rzi.f%d.f%d", bits, bits);
  for (const char *p = ptx; (p = strstr(p, div)) != NULL && nregs < 64; p += strlen(div)) {
    const char *r = p + strlen(div);
    while (*r == ' ' || *r == '\t') r++;
    int n = 0;
    while (r[n] && r[n] != ',' && n < 15) n++;
    memcpy(regs[nregs], r, (size_t)n);
    regs[nregs++][n] = 0;
  }
  for (const char *p = ptx; (p = strstr(p, cvt)) != NULL; p += strlen(cvt)) {
    const char *c = strchr(p, ',');
    if (!c) break;
    c++;
    while (*c == ' ') c++;
    for (int i = 0; i < nregs; i++) {
      size_t n = strlen(regs[i]);
      if (strncmp(c, regs[i], n) == 0 && (c[n] == ';' || c[n] == ' ')) return true;
    }
  }
  return false;
}

static char *ptx_of(LoomDType in_t, LoomDType out_t, LoomOp op) {
  LoomGraph *g = NULL;
  char *text = NULL;
  int64_t sh[1] = {1000};
  LoomArray A = {.data = (void *)64, .dtype = in_t, .ndim = 1, .shape = {1000}, .strides = {1}};
  LoomArray B = A;
  B.data = (void *)128;
  (void)sh;
  LoomNode a, b, y = -1;
  if (loom_graph_create(tc_ctx, &g) != LOOM_OK) return NULL;
  if (loom_input(g, &A, &a) == LOOM_OK && loom_input(g, &B, &b) == LOOM_OK) {
    if (op == LOOM_OP_COUNT) loom_cast(g, a, out_t, &y);
    else loom_binary(g, op, a, b, &y);
  }
  if (y >= 0 && loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text) != LOOM_OK) text = NULL;
  loom_graph_destroy(g);
  return text;
}

static void test_gpu_ptx(void) {
  char *probe = ptx_of(LOOM_UINT64, LOOM_FLOAT64, LOOM_OP_COUNT);
  if (!probe) {
    printf("PTX checks skipped: %s\n", loom_last_error(tc_ctx));
    return;
  }
  /* uint64 / int64 -> float64: one correctly rounded conversion per value, never through float32 */
  CHECK(count_of(probe, "cvt.rn.f64.u64") > 0 && count_of(probe, ".f32.u64") == 0 && count_of(probe, "cvt.rn.f64.s64") == 0,
        "uint64 -> float64 PTX converts with cvt.rn.f64.u64 only");
  loom_free_string(tc_ctx, probe);
  char *s = ptx_of(LOOM_INT64, LOOM_FLOAT64, LOOM_OP_COUNT);
  CHECK(s && count_of(s, "cvt.rn.f64.s64") > 0 && count_of(s, ".f32.s64") == 0, "int64 -> float64 PTX: cvt.rn.f64.s64");
  loom_free_string(tc_ctx, s);
  /* float remainder: libdevice's exact fmod (its fast path, then an exact reduction loop), not
   * NVPTX's frem lowering a - trunc(a / b) * b, whose div.rn + cvt.rzi sequence this would show */
  for (int k = 0; k < 2; k++) {
    LoomDType t = k ? LOOM_FLOAT64 : LOOM_FLOAT32;
    s = ptx_of(t, t, LOOM_OP_MOD);
    /* called, or inlined (codegen/nvptx.c's budget): float32's fast path shows fma.rz; float64's exact
     * reduction is integer work with no float division at all, where frem's lowering needs a div.rn */
    CHECK(s && !has_truncated_quotient(s, k ? 64 : 32) &&
              (strstr(s, "fma.rz") || strstr(s, "__nv_fmod") || !strstr(s, k ? "div.rn.f64" : "div.rn.f32")),
          "%s remainder PTX: libdevice's exact fmod, not a truncated correctly rounded quotient", loom_dtype_name(t));
    loom_free_string(tc_ctx, s);
  }
}

int main(void) {
  if (!tc_init()) return 1;
  test_f16_fused_ops();
  test_f16_casts();
  test_f16_from_f64_midpoints();
  test_f16_reduction();
  test_reciprocal();
  test_remainder();
  test_cosh_sinh_range();
  test_scalars_and_clip();
  test_gpu_ptx();
  return tc_finish();
}
