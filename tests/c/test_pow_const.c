/* SPDX-License-Identifier: Apache-2.0 */
/* test_pow_const.c: powers by constant exponents (codegen/math_pow.c rewrites small integer and +-0.5
 * exponents into multiplies, square roots and divides) against a reference computed here: C's pow in
 * long double rounded to the dtype, NumPy's sqrt semantics for 0.5 (-0 -> -0, -inf -> NaN; float16: powf's), exact
 * wrapping integer powers. Inputs: every edge value of the dtype (+-0, +-inf, NaN, subnormals, the
 * largest and smallest normals, +-1) and a spread of random values; exponents 0, 1, 2, 3, 4, 5, 7, 8,
 * -1, -2, -3, -8, 0.5, -0.5, and 9, 1.5, -0.25 (not rewritten: pow itself), for float16, bfloat16,
 * float32, float64 and five integer dtypes; strong constants of the array's dtype and weak Python-like
 * scalars; the exponent broadcast along the array and the array a strided view.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_common.h"

static const double exps_f[] = {0, 1, 2, 3, 4, 5, 7, 8, -1, -2, -3, -8, 0.5, -0.5, 9, 1.5, -0.25};
static const int64_t exps_i[] = {0, 1, 2, 3, 4, 5, 7, 8, 9};

/* The reference x ** c in dtype t (x already a value of t). */
static double ref_pow(LoomDType t, double x, double c) {
  /* NumPy: power(x, 0.5) is sqrt(x) (its float32/float64 loops' fast path); its float16 loop calls powf:
   * -0 -> +0, -inf -> +inf (the operator x ** 0.5 is np.sqrt: the Python binding emits sqrt for it) */
  if (c == 0.5 && t == LOOM_FLOAT16 && (x == 0 || isinf(x))) return x == 0 ? 0.0 : INFINITY;
  if (c == 0.5) return tc_round_to(t, sqrt(x));
  return tc_round_to(t, (double)powl((long double)x, (long double)c));
}

/* ulps allowed: one rounding (exact) for 0, 1, 2, -1, 0.5; one ulp for -0.5 and float32 integer powers
 * (float32 pair products, or float64 ones for n < 0: rounded once); n/2 + 1 for float64 products; 4 where pow itself runs. */
static uint64_t ulps_for(LoomDType t, double c) {
  if (c == 0 || c == 1 || c == 2 || c == -1 || c == 0.5) return 0;
  bool rewritten = c == -0.5 || (c == floor(c) && fabs(c) <= 8 && (t != LOOM_FLOAT64 || c > 0));
  if (!rewritten) return t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 ? 1 : 4;
  if (t == LOOM_FLOAT64 && c > 2) return (uint64_t)(c / 2) + 1;
  return 1;
}

static int fill_inputs(LoomDType t, double *v) {
  int n = 0;
  double big = t == LOOM_FLOAT64 ? DBL_MAX : t == LOOM_FLOAT32 ? FLT_MAX : t == LOOM_FLOAT16 ? 65504.0 : 3.3895313892515355e38;
  double tiny = t == LOOM_FLOAT64 ? DBL_MIN : t == LOOM_FLOAT32 ? FLT_MIN : t == LOOM_FLOAT16 ? ldexp(1, -14) : ldexp(1, -126);
  double sub = t == LOOM_FLOAT64 ? ldexp(1, -1074) : t == LOOM_FLOAT32 ? ldexp(1, -149) : t == LOOM_FLOAT16 ? ldexp(1, -24) : ldexp(1, -133);
  const double edges[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, big, -big, tiny, -tiny, sub, -sub, 2, -2, 0.5,
                          3, -3, 1e-3, 10, -10};
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) v[n++] = edges[i];
  uint64_t s = 12345;
  for (int i = 0; i < 200; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(s >> 11) / 9007199254740992.0;     /* [0, 1) */
    double mag = exp2((u * 2 - 1) * (i < 100 ? 4 : 60));    /* 2^-4 .. 2^4, then wide */
    v[n++] = (i & 1 ? -1 : 1) * mag * (1 + u);
  }
  for (int i = 0; i < n; i++) v[i] = tc_round_to(t, v[i]);
  return n;
}

static void test_float(LoomDType t, bool weak) {
  double xv[256];
  int n = fill_inputs(t, xv);
  /* a strided view: every second element of a 2n array */
  int64_t n2 = 2 * (int64_t)n;
  LoomArray base = tc_new1(t, n2);
  for (int i = 0; i < n; i++) tc_set_f(&base, 2 * i, xv[i]), tc_set_f(&base, 2 * i + 1, 7.0);
  LoomArray x = base;
  x.shape[0] = n;
  x.strides[0] = base.strides[0] * 2;
  for (size_t e = 0; e < sizeof exps_f / sizeof *exps_f; e++) {
    double c = exps_f[e];
    char what[96];
    snprintf(what, sizeof what, "%s ** %g (%s)", loom_dtype_name(t), c, weak ? "weak" : "strong");
    LoomGraph *g = NULL;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) break;
    LoomNode xn, cn, yn;
    CHECK_OK(loom_input(g, &x, &xn));
    if (weak) CHECK_OK(loom_weak_float(g, c, &cn));
    else CHECK_OK(loom_const_f64(g, c, t, &cn));
    LoomArray out;
    if (CHECK_OK(loom_binary(g, LOOM_OP_POW, xn, cn, &yn)) && tc_check_info(g, yn, t, 1, (int64_t[]){n}, what) &&
        CHECK(tc_eval1(g, yn, &out) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
      uint64_t tol = ulps_for(t, c);
      for (int i = 0; i < n; i++) {
        double got = tc_get_f(&out, i), want = ref_pow(t, xv[i], c);
        bool ok = tc_close_ulp(t, got, want, tol);
        if (ok && got == 0 && want == 0) ok = signbit(got) == signbit(want);
        CHECK(ok, "%s: x = %.17g: got %.17g, want %.17g (%" PRIu64 " ulp allowed)", what, xv[i], got, want, tol);
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&base);
}

static void test_int(LoomDType t) {
  int64_t n = 40;
  LoomArray x = tc_new1(t, n);
  bool sg = t == LOOM_INT8 || t == LOOM_INT16 || t == LOOM_INT32 || t == LOOM_INT64;
  for (int64_t i = 0; i < n; i++) tc_set_i(&x, i, sg ? (I128)(i - 20) * (i % 3 ? 1 : 7919) : (I128)i * (i % 3 ? 1 : 7919));
  for (size_t e = 0; e < sizeof exps_i / sizeof *exps_i; e++) {
    char what[64];
    snprintf(what, sizeof what, "%s ** %" PRId64, loom_dtype_name(t), exps_i[e]);
    LoomGraph *g = NULL;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) break;
    LoomNode xn, cn, yn;
    CHECK_OK(loom_input(g, &x, &xn));
    CHECK_OK(loom_const_i64(g, exps_i[e], t, &cn));
    LoomArray out;
    if (CHECK_OK(loom_binary(g, LOOM_OP_POW, xn, cn, &yn)) && CHECK_OK(tc_eval1(g, yn, &out))) {
      for (int64_t i = 0; i < n; i++) {
        I128 a = tc_get_i(&x, i);
        U128 r = 1, b = (U128)a;
        for (int64_t k = 0; k < exps_i[e]; k++) r *= b;
        I128 want = tc_wrap(t, r);
        CHECK(tc_get_i(&out, i) == want, "%s: x = %s: got %s, want %s", what, tc_i128_str(a, (char[48]){0}),
              tc_i128_str(tc_get_i(&out, i), (char[48]){0}), tc_i128_str(want, (char[48]){0}));
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&x);
}

int main(void) {
  if (!tc_init()) return 1;
  const LoomDType fl[] = {LOOM_FLOAT16, LOOM_BFLOAT16, LOOM_FLOAT32, LOOM_FLOAT64};
  for (int i = 0; i < 4; i++) {
    test_float(fl[i], false);
    test_float(fl[i], true);
  }
  const LoomDType in[] = {LOOM_INT8, LOOM_UINT8, LOOM_INT32, LOOM_INT64, LOOM_UINT64};
  for (int i = 0; i < 5; i++) test_int(in[i]);
  return tc_finish();
}
