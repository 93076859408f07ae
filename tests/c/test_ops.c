/* SPDX-License-Identifier: Apache-2.0 */
/* test_ops.c: every elementwise op of ops_public.def on every dtype it accepts, through the public API.
 *
 * Approach: for each (op, dtype) one graph applies the op to a 1-D array of edge values (for binary
 * ops: every pair of a smaller edge set, laid out as a cartesian product), evaluates it and compares
 * each element with a reference computed here: exact integer arithmetic in __int128 wrapped to the
 * dtype, float functions in double (libm) rounded to the result dtype. Expected result dtypes are
 * derived from NumPy 2's rules written independently here (promote_types, the smallest safe float),
 * and checked with loom_node_info; an op a dtype does not accept must fail with LOOM_ERR_DTYPE.
 * Tolerances: results that IEEE defines exactly (add, sqrt, floor, ...) must match bit for bit in
 * float32/float64 (+-0 sign included where it is defined); transcendental functions within 4 ulp in
 * float32/float64; float16 within 1 ulp of the float16-rounded double result.
 * Then: promotion of every dtype pair, NEP 50 weak scalars, casts between all dtypes, where and clip.
 */
#include "test_common.h"

typedef enum Rule {
  R_SAME, R_SAME_NUM, R_FLOAT, R_PRED, R_INT, R_PROMOTE, R_PROMOTE_NUM, R_PROMOTE_SUB,
  R_PROMOTE_FLOAT, R_TRUEDIV, R_COMPARE, R_LOGICAL, R_BITWISE, R_SHIFT, R_WHERE, R_FLOAT_REAL,
  R_PROMOTE_NUM_REAL, R_REAL, R_COMPLEX, R_RANDOM, R_NUMERIC
} Rule;

typedef struct OpDesc {
  LoomOp op;
  const char *name;
  int arity;
  Rule rule;
} OpDesc;

static const OpDesc all_ops[] = {
#define LOOM_OP(name, kind, arity, rule, doc) {LOOM_OP_##name, #name, arity, R_##rule},
#include "loom/ops_public.def"
#undef LOOM_OP
};
#define NOPS ((int)(sizeof all_ops / sizeof all_ops[0]))

/* ---- NumPy 2 dtype rules, written out independently ----------------------------------------------- */
static LoomDType signed_of_bits(int bits) {
  return bits <= 8 ? LOOM_INT8 : bits <= 16 ? LOOM_INT16 : bits <= 32 ? LOOM_INT32 : LOOM_INT64;
}
/* The smallest float that holds every value of t (NumPy's float loop for ufuncs like exp). */
static LoomDType ref_float_of(LoomDType t) {
  if (tc_is_float(t)) return t;
  if (t == LOOM_BOOL) return LOOM_FLOAT16;
  int b = tc_bits(t);
  return b == 8 ? LOOM_FLOAT16 : b == 16 ? LOOM_FLOAT32 : LOOM_FLOAT64;
}
static LoomDType ref_promote(LoomDType a, LoomDType b) {
  if (a == b) return a;
  if (a == LOOM_BOOL) return b;
  if (b == LOOM_BOOL) return a;
  if (tc_is_float(a) && tc_is_float(b)) return tc_bits(a) > tc_bits(b) ? a : b;
  if (tc_is_float(a) || tc_is_float(b)) {
    LoomDType f = tc_is_float(a) ? a : b, i = tc_is_float(a) ? b : a;
    LoomDType need = ref_float_of(i);
    return tc_bits(need) > tc_bits(f) ? need : f;
  }
  if (tc_is_signed(a) == tc_is_signed(b)) return tc_bits(a) > tc_bits(b) ? a : b;
  LoomDType s = tc_is_signed(a) ? a : b, u = tc_is_signed(a) ? b : a;
  if (tc_bits(u) < tc_bits(s)) return s;
  if (tc_bits(u) < 64) return signed_of_bits(2 * tc_bits(u));
  return LOOM_FLOAT64;
}

/* Result dtype of op on operands of dtype t (binary: both t); false if NumPy rejects it. */
static bool ref_result_dtype(const OpDesc *d, LoomDType t, LoomDType *out) {
  switch (d->rule) {
  case R_SAME: *out = t; return true;
  case R_SAME_NUM: *out = t; return t != LOOM_BOOL;
  case R_FLOAT: case R_FLOAT_REAL: *out = ref_float_of(t); return true;
  case R_REAL: *out = t; return true;
  case R_COMPLEX: return false; /* a complex result: tests/c/test_complex.c */
  case R_RANDOM: *out = LOOM_UINT64; return t == LOOM_UINT64;
  case R_PRED: case R_COMPARE: case R_LOGICAL: *out = LOOM_BOOL; return true;
  case R_INT: *out = t; return !tc_is_float(t);
  case R_PROMOTE: *out = t; return true;
  case R_PROMOTE_NUM: case R_PROMOTE_NUM_REAL: *out = t == LOOM_BOOL ? LOOM_INT8 : t; return true;
  case R_PROMOTE_SUB: *out = t; return t != LOOM_BOOL;
  case R_PROMOTE_FLOAT: *out = ref_float_of(t); return true;
  case R_TRUEDIV: *out = tc_is_float(t) ? t : LOOM_FLOAT64; return true;
  case R_BITWISE: *out = t; return !tc_is_float(t);
  case R_SHIFT: *out = t == LOOM_BOOL ? LOOM_INT8 : t; return !tc_is_float(t);
  case R_WHERE: *out = t; return true;
  case R_NUMERIC: *out = t == LOOM_BOOL ? LOOM_INT8 : t; return true; /* NumPy 2's reciprocal(bool): int8 */
  }
  return false;
}

/* ---- edge values ------------------------------------------------------------------------------------ */
static int add_int(I128 *v, int n, LoomDType t, I128 x) {
  if (x < tc_int_min(t) || x > tc_int_max(t)) return n;
  for (int i = 0; i < n; i++)
    if (v[i] == x) return n;
  v[n] = x;
  return n + 1;
}
static int int_edges(LoomDType t, bool small, I128 *v) {
  int n = 0, w = tc_bits(t);
  if (t == LOOM_BOOL) {
    v[0] = 0;
    v[1] = 1;
    return 2;
  }
  static const int common_small[] = {0, 1, -1, 2, -2, 3, 7, -7, 100};
  static const int common_big[] = {0, 1, -1, 2, -2, 3, -3, 5, -7, 7, 9, 16, 31, 32, 100, -100, 127, 200};
  const int *c = small ? common_small : common_big;
  int nc = small ? (int)(sizeof common_small / sizeof *c) : (int)(sizeof common_big / sizeof *c);
  for (int i = 0; i < nc; i++) n = add_int(v, n, t, c[i]);
  n = add_int(v, n, t, w - 1); /* shift counts at and past the width */
  n = add_int(v, n, t, w);
  n = add_int(v, n, t, w + 1);
  n = add_int(v, n, t, tc_int_min(t));
  n = add_int(v, n, t, tc_int_max(t));
  n = add_int(v, n, t, tc_int_max(t) - 1);
  if (tc_is_signed(t)) n = add_int(v, n, t, tc_int_min(t) + 1);
  else n = add_int(v, n, t, (I128)1 << (w - 1));
  return n;
}
static int float_edges(LoomDType t, bool small, double *v) {
  static const double big[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.0, 0.1,
                               100.0, -100.0, 1e-5, 1e10, -1e10, 1e300, 5e-324, 1e-7, 0.999,
                               -0.999, 1.5707963267948966, 65504.0, 12.0, -12.0, NAN, INFINITY,
                               -INFINITY, 0.7, 2.0, 1e-300};
  static const double few[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0, -7.0, 0.1, 100.0, 1e10,
                               NAN, INFINITY, -INFINITY};
  const double *c = small ? few : big;
  int nc = small ? (int)(sizeof few / sizeof *few) : (int)(sizeof big / sizeof *big);
  for (int i = 0; i < nc; i++) v[i] = tc_round_to(t, c[i]);
  return nc;
}

/* ---- references ----------------------------------------------------------------------------------------- */
typedef struct Ref {
  double f; /* when the result dtype is a float */
  I128 i;   /* when it is an integer or bool */
} Ref;

static double ref_sign(double x) {
  if (isnan(x)) return x;
  return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

static double ref_float_unary(LoomOp op, double x) {
  switch (op) {
  case LOOM_OP_NEG: return -x;
  case LOOM_OP_ABS: return fabs(x);
  case LOOM_OP_SIGN: return ref_sign(x);
  case LOOM_OP_EXP: return exp(x);
  case LOOM_OP_EXP2: return exp2(x);
  case LOOM_OP_EXPM1: return expm1(x);
  case LOOM_OP_LOG: return log(x);
  case LOOM_OP_LOG2: return log2(x);
  case LOOM_OP_LOG10: return log10(x);
  case LOOM_OP_LOG1P: return log1p(x);
  case LOOM_OP_SQRT: return sqrt(x);
  case LOOM_OP_RSQRT: return (double)(1.0L / sqrtl((long double)x));
  case LOOM_OP_CBRT: return cbrt(x);
  case LOOM_OP_SIN: return sin(x);
  case LOOM_OP_COS: return cos(x);
  case LOOM_OP_TAN: return tan(x);
  case LOOM_OP_ASIN: return asin(x);
  case LOOM_OP_ACOS: return acos(x);
  case LOOM_OP_ATAN: return atan(x);
  case LOOM_OP_SINH: return sinh(x);
  case LOOM_OP_COSH: return cosh(x);
  case LOOM_OP_TANH: return tanh(x);
  case LOOM_OP_ASINH: return asinh(x);
  case LOOM_OP_ACOSH: return acosh(x);
  case LOOM_OP_ATANH: return atanh(x);
  case LOOM_OP_FLOOR: return floor(x);
  case LOOM_OP_CEIL: return ceil(x);
  case LOOM_OP_TRUNC: return trunc(x);
  case LOOM_OP_RINT: return nearbyint(x);
  case LOOM_OP_RECIPROCAL: return 1.0 / x;
  case LOOM_OP_CONJ: case LOOM_OP_REAL: return x;
  case LOOM_OP_IMAG: return 0.0;
  default: return NAN;
  }
}

static bool ref_pred(LoomOp op, double x) {
  switch (op) {
  case LOOM_OP_ISNAN: return isnan(x);
  case LOOM_OP_ISINF: return isinf(x);
  case LOOM_OP_ISFINITE: return isfinite(x);
  case LOOM_OP_LOGICAL_NOT: return x == 0;
  default: return false;
  }
}

/* NumPy's float floor-divide / remainder: the remainder has the sign of b, the quotient is snapped. */
static void ref_divmod(double a, double b, double *q, double *r) {
  double m = fmod(a, b);
  if (b == 0) {
    *q = a / b;
    *r = m;
    return;
  }
  double d = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      d -= 1.0;
    }
  } else {
    m = copysign(0.0, b);
  }
  double f;
  if (d != 0) {
    f = floor(d);
    if (d - f > 0.5) f += 1.0;
  } else {
    f = copysign(0.0, a / b);
  }
  *q = f;
  *r = m;
}

static double ref_float_binary(LoomOp op, double a, double b) {
  double q, r;
  switch (op) {
  case LOOM_OP_ADD: return a + b;
  case LOOM_OP_SUB: return a - b;
  case LOOM_OP_MUL: return a * b;
  case LOOM_OP_TRUEDIV: return a / b;
  case LOOM_OP_FLOORDIV: ref_divmod(a, b, &q, &r); return q;
  case LOOM_OP_MOD: ref_divmod(a, b, &q, &r); return r;
  case LOOM_OP_POW: return pow(a, b);
  case LOOM_OP_MAXIMUM: return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
  case LOOM_OP_MINIMUM: return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
  case LOOM_OP_FMAX: return fmax(a, b);
  case LOOM_OP_FMIN: return fmin(a, b);
  case LOOM_OP_ATAN2: return atan2(a, b);
  case LOOM_OP_HYPOT: return hypot(a, b);
  case LOOM_OP_COPYSIGN: return copysign(a, b);
  case LOOM_OP_EQ: return a == b;
  case LOOM_OP_NE: return a != b;
  case LOOM_OP_LT: return a < b;
  case LOOM_OP_LE: return a <= b;
  case LOOM_OP_GT: return a > b;
  case LOOM_OP_GE: return a >= b;
  case LOOM_OP_LOGICAL_AND: return (a != 0) && (b != 0);
  case LOOM_OP_LOGICAL_OR: return (a != 0) || (b != 0);
  case LOOM_OP_LOGICAL_XOR: return (a != 0) != (b != 0);
  default: return NAN;
  }
}

/* Integer ops in dtype c (bool included), exact then wrapped. */
static I128 ref_int_binary(LoomOp op, LoomDType c, I128 a, I128 b) {
  int w = tc_bits(c);
  switch (op) {
  case LOOM_OP_ADD: return c == LOOM_BOOL ? (a | b) : tc_wrap(c, (U128)a + (U128)b);
  case LOOM_OP_SUB: return tc_wrap(c, (U128)a - (U128)b);
  case LOOM_OP_MUL: return c == LOOM_BOOL ? (a & b) : tc_wrap(c, (U128)a * (U128)b);
  case LOOM_OP_FLOORDIV: {
    if (b == 0) return 0;
    I128 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q -= 1;
    return tc_wrap(c, (U128)q); /* MIN // -1 wraps to MIN */
  }
  case LOOM_OP_MOD: {
    if (b == 0) return 0;
    I128 r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
  case LOOM_OP_POW: {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b & 1) ? -1 : 1;
      return 0;
    }
    U128 result = 1, base = (U128)a;
    U128 e = (U128)b;
    while (e) {
      if (e & 1) result *= base;
      base *= base;
      e >>= 1;
    }
    return tc_wrap(c, result);
  }
  case LOOM_OP_MAXIMUM: case LOOM_OP_FMAX: return a > b ? a : b;
  case LOOM_OP_MINIMUM: case LOOM_OP_FMIN: return a < b ? a : b;
  case LOOM_OP_EQ: return a == b;
  case LOOM_OP_NE: return a != b;
  case LOOM_OP_LT: return a < b;
  case LOOM_OP_LE: return a <= b;
  case LOOM_OP_GT: return a > b;
  case LOOM_OP_GE: return a >= b;
  case LOOM_OP_LOGICAL_AND: return (a != 0) && (b != 0);
  case LOOM_OP_LOGICAL_OR: return (a != 0) || (b != 0);
  case LOOM_OP_LOGICAL_XOR: return (a != 0) != (b != 0);
  case LOOM_OP_BITWISE_AND: return a & b;
  case LOOM_OP_BITWISE_OR: return a | b;
  case LOOM_OP_BITWISE_XOR: return a ^ b;
  case LOOM_OP_LEFT_SHIFT:
    if (b < 0 || b >= w) return 0;
    return tc_wrap(c, (U128)a << (int)b);
  case LOOM_OP_RIGHT_SHIFT:
    if (b < 0 || b >= w) return a < 0 ? -1 : 0;
    return a < 0 ? ~((~a) >> (int)b) : a >> (int)b;
  default: return 0;
  }
}

static I128 ref_int_unary(LoomOp op, LoomDType t, I128 x) {
  switch (op) {
  case LOOM_OP_NEG: return tc_wrap(t, (U128)0 - (U128)x);
  case LOOM_OP_ABS: return x < 0 ? tc_wrap(t, (U128)0 - (U128)x) : x;
  case LOOM_OP_SIGN: return (x > 0) - (x < 0);
  case LOOM_OP_BITWISE_NOT: return t == LOOM_BOOL ? !x : tc_wrap(t, ~(U128)x);
  case LOOM_OP_ISNAN: case LOOM_OP_ISINF: return 0;
  case LOOM_OP_ISFINITE: return 1;
  case LOOM_OP_LOGICAL_NOT: return x == 0;
  case LOOM_OP_RECIPROCAL: return x == 1 ? 1 : x == -1 ? -1 : 0; /* 1 / x truncated (NumPy); 1 / 0: 0 */
  case LOOM_OP_IMAG: return 0;
  default: return x; /* floor/ceil/trunc/rint, conj, real of an integer kept as integer */
  }
}

/* An integer as the double a cast gives: one rounding, from the exact value. */
static double int_to_double(I128 v) { return (double)(long double)v; }

/* Ops whose float results IEEE defines exactly (given the operands). */
static bool op_is_exact(LoomOp op) {
  switch (op) {
  case LOOM_OP_NEG: case LOOM_OP_ABS: case LOOM_OP_SIGN: case LOOM_OP_SQRT: case LOOM_OP_FLOOR:
  case LOOM_OP_CEIL: case LOOM_OP_TRUNC: case LOOM_OP_RINT: case LOOM_OP_ADD: case LOOM_OP_SUB:
  case LOOM_OP_MUL: case LOOM_OP_TRUEDIV: case LOOM_OP_MAXIMUM: case LOOM_OP_MINIMUM:
  case LOOM_OP_FMAX: case LOOM_OP_FMIN: case LOOM_OP_COPYSIGN: case LOOM_OP_RECIPROCAL:
    return true;
  default: return false;
  }
}
/* Ops for which the sign of a zero result is defined (and checked). */
static bool op_zero_sign_defined(LoomOp op) {
  switch (op) {
  case LOOM_OP_NEG: case LOOM_OP_ABS: case LOOM_OP_FLOOR: case LOOM_OP_CEIL: case LOOM_OP_TRUNC:
  case LOOM_OP_RINT: case LOOM_OP_MUL: case LOOM_OP_COPYSIGN: case LOOM_OP_SQRT:
    return true;
  default: return false;
  }
}
static uint64_t tolerance(LoomOp op, LoomDType r) {
  if (r == LOOM_FLOAT16) return 1;
  return op_is_exact(op) ? 0 : 4;
}

/* Compares element k of out with a reference; prints context on a mismatch. */
static void compare_elem(const char *what, LoomOp op, const LoomArray *out, int64_t k, Ref want,
                         const char *operands) {
  char b1[48], b2[48];
  if (tc_is_float(out->dtype)) {
    double got = tc_get_f(out, k);
    uint64_t tol = tolerance(op, out->dtype);
    bool ok = tc_close_ulp(out->dtype, got, want.f, tol);
    if (ok && want.f == 0 && got == 0 && op_zero_sign_defined(op))
      ok = signbit(got) == signbit(want.f);
    CHECK(ok, "%s [%s]: got %.17g, want %.17g (tol %" PRIu64 " ulp)", what, operands, got, want.f, tol);
  } else {
    I128 got = tc_get_i(out, k);
    CHECK(got == want.i, "%s [%s]: got %s, want %s", what, operands, tc_i128_str(got, b1),
          tc_i128_str(want.i, b2));
  }
}

static void describe_value(const LoomArray *a, int64_t k, char *buf, size_t cap) {
  if (tc_is_float(a->dtype)) snprintf(buf, cap, "%.17g", tc_get_f(a, k));
  else tc_i128_str(tc_get_i(a, k), buf);
}

/* Fills a 1-D array of dtype t with its edge values; returns it (caller frees). */
static LoomArray make_edges(LoomDType t, bool small) {
  I128 iv[64];
  double fv[64];
  int n = tc_is_float(t) ? float_edges(t, small, fv) : int_edges(t, small, iv);
  LoomArray a = tc_new1(t, n);
  for (int k = 0; k < n; k++) {
    if (tc_is_float(t)) tc_set_f(&a, k, fv[k]);
    else tc_set_i(&a, k, iv[k]);
  }
  return a;
}

/* ---- unary ---------------------------------------------------------------------------------------------- */
static void test_unary(const OpDesc *d, LoomDType t) {
  char what[96];
  snprintf(what, sizeof what, "%s(%s)", d->name, loom_dtype_name(t));
  LoomArray x = make_edges(t, false);
  int64_t n = x.shape[0];
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) {
    tc_free(&x);
    return;
  }
  LoomNode xn = -1, yn = -1;
  CHECK_OK(loom_input(g, &x, &xn));
  LoomDType r;
  bool accepted = ref_result_dtype(d, t, &r);
  LoomStatus st = loom_unary(g, d->op, xn, &yn);
  if (!accepted) {
    CHECK(st == LOOM_ERR_DTYPE, "%s: want LOOM_ERR_DTYPE, got %s", what, loom_status_name(st));
    goto done;
  }
  if (!CHECK(st == LOOM_OK, "%s: %s: %s", what, loom_status_name(st), loom_last_error(tc_ctx)))
    goto done;
  LoomDType got_t;
  int32_t nd;
  CHECK_OK(loom_node_info(g, yn, &got_t, &nd, NULL));
  bool int_rounding = (d->op == LOOM_OP_FLOOR || d->op == LOOM_OP_CEIL || d->op == LOOM_OP_TRUNC ||
                       d->op == LOOM_OP_RINT) && !tc_is_float(t);
  if (int_rounding && got_t == t) r = t; /* NumPy >= 2.? keeps integers for these: both accepted */
  if (!CHECK(got_t == r, "%s: result dtype %s, want %s", what, loom_dtype_name(got_t),
             loom_dtype_name(r)))
    goto done;
  LoomArray out;
  if (!CHECK(tc_eval1(g, yn, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx)))
    goto done;
  for (int64_t k = 0; k < n; k++) {
    Ref want = {0, 0};
    if (tc_is_float(r)) {
      double xv = tc_is_float(t) ? tc_get_f(&x, k) : int_to_double(tc_get_i(&x, k));
      xv = tc_round_to(r, xv); /* the operand converted to the compute dtype */
      want.f = tc_round_to(r, ref_float_unary(d->op, xv));
    } else if (tc_is_float(t)) {
      want.i = ref_pred(d->op, tc_get_f(&x, k));
    } else {
      want.i = ref_int_unary(d->op, t, tc_get_i(&x, k));
    }
    char operand[48];
    describe_value(&x, k, operand, sizeof operand);
    compare_elem(what, d->op, &out, k, want, operand);
  }
  loom_array_free(tc_ctx, &out);
done:
  loom_graph_destroy(g);
  tc_free(&x);
}

/* ---- binary ---------------------------------------------------------------------------------------------- */
static void test_binary(const OpDesc *d, LoomDType t) {
  char what[96];
  snprintf(what, sizeof what, "%s(%s, %s)", d->name, loom_dtype_name(t), loom_dtype_name(t));
  LoomArray e = make_edges(t, true);
  int64_t m = e.shape[0], n = m * m;
  LoomArray a = tc_new1(t, n), b = tc_new1(t, n);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < m; j++) {
      memcpy(tc_ptr(&a, i * m + j), tc_ptr(&e, i), loom_dtype_size(t));
      memcpy(tc_ptr(&b, i * m + j), tc_ptr(&e, j), loom_dtype_size(t));
    }
  tc_free(&e);
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) {
    tc_free(&a);
    tc_free(&b);
    return;
  }
  LoomNode an = -1, bn = -1, yn = -1;
  CHECK_OK(loom_input(g, &a, &an));
  CHECK_OK(loom_input(g, &b, &bn));
  LoomDType r;
  bool accepted = ref_result_dtype(d, t, &r);
  LoomStatus st = loom_binary(g, d->op, an, bn, &yn);
  if (!accepted) {
    CHECK(st == LOOM_ERR_DTYPE, "%s: want LOOM_ERR_DTYPE, got %s", what, loom_status_name(st));
    goto done;
  }
  if (!CHECK(st == LOOM_OK, "%s: %s: %s", what, loom_status_name(st), loom_last_error(tc_ctx)))
    goto done;
  if (!tc_check_info(g, yn, r, 1, &n, what)) goto done;
  LoomArray out;
  if (!CHECK(tc_eval1(g, yn, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx)))
    goto done;
  /* The dtype the op computes in: the float result for float rules, int8 for bool under NUM/SHIFT. */
  LoomDType c = t;
  if (tc_is_float(r)) c = r;
  else if (r == LOOM_INT8 && t == LOOM_BOOL) c = LOOM_INT8;
  for (int64_t k = 0; k < n; k++) {
    Ref want = {0, 0};
    if (tc_is_float(c)) {
      double av = tc_is_float(t) ? tc_get_f(&a, k) : int_to_double(tc_get_i(&a, k));
      double bv = tc_is_float(t) ? tc_get_f(&b, k) : int_to_double(tc_get_i(&b, k));
      av = tc_round_to(c, av);
      bv = tc_round_to(c, bv);
      double v = ref_float_binary(d->op, av, bv);
      if (tc_is_float(r)) want.f = tc_round_to(r, v);
      else want.i = v != 0;
    } else {
      want.i = ref_int_binary(d->op, c, tc_get_i(&a, k), tc_get_i(&b, k));
    }
    char operands[100], s1[48], s2[48];
    describe_value(&a, k, s1, sizeof s1);
    describe_value(&b, k, s2, sizeof s2);
    snprintf(operands, sizeof operands, "%s, %s", s1, s2);
    compare_elem(what, d->op, &out, k, want, operands);
  }
  loom_array_free(tc_ctx, &out);
done:
  loom_graph_destroy(g);
  tc_free(&a);
  tc_free(&b);
}

/* ---- where ---------------------------------------------------------------------------------------------- */
static void test_where(LoomDType t, LoomDType cond_t) {
  char what[96];
  snprintf(what, sizeof what, "where(%s, %s, %s)", loom_dtype_name(cond_t), loom_dtype_name(t),
           loom_dtype_name(t));
  LoomArray a = make_edges(t, false);
  int64_t n = a.shape[0];
  LoomArray b = tc_new1(t, n), c = tc_new1(cond_t, n);
  for (int64_t k = 0; k < n; k++) {
    memcpy(tc_ptr(&b, k), tc_ptr(&a, n - 1 - k), loom_dtype_size(t));
    if (tc_is_float(cond_t)) tc_set_f(&c, k, (k % 3 == 0) ? 0.0 : (k % 3 == 1) ? NAN : -0.5);
    else tc_set_i(&c, k, k % 2);
  }
  LoomGraph *g = NULL;
  LoomNode an, bn, cn, yn;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &a, &an)) &&
      CHECK_OK(loom_input(g, &b, &bn)) && CHECK_OK(loom_input(g, &c, &cn)) &&
      CHECK_OK(loom_where(g, cn, an, bn, &yn)) && tc_check_info(g, yn, t, 1, &n, what)) {
    LoomArray out;
    if (CHECK(tc_eval1(g, yn, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx))) {
      for (int64_t k = 0; k < n; k++) {
        bool cv = tc_is_float(cond_t) ? tc_get_f(&c, k) != 0 : tc_get_i(&c, k) != 0;
        const LoomArray *src = cv ? &a : &b;
        bool ok = memcmp(tc_ptr(&out, k), tc_ptr(src, k), loom_dtype_size(t)) == 0 ||
                  (tc_is_float(t) && isnan(tc_get_f(&out, k)) && isnan(tc_get_f(src, k)));
        CHECK(ok, "%s: element %" PRId64 " differs", what, k);
      }
      loom_array_free(tc_ctx, &out);
    }
  }
  if (g) loom_graph_destroy(g);
  tc_free(&a);
  tc_free(&b);
  tc_free(&c);
}

/* ---- casts ---------------------------------------------------------------------------------------------- */
static Ref ref_cast(LoomDType from, LoomDType to, const LoomArray *x, int64_t k) {
  Ref r = {0, 0};
  if (to == LOOM_BOOL) {
    r.i = tc_is_float(from) ? tc_get_f(x, k) != 0 : tc_get_i(x, k) != 0;
  } else if (tc_is_float(to)) {
    r.f = tc_round_to(to, tc_is_float(from) ? tc_get_f(x, k) : int_to_double(tc_get_i(x, k)));
  } else if (!tc_is_float(from)) {
    r.i = tc_wrap(to, (U128)tc_get_i(x, k));
  } else { /* float -> int saturates; NaN -> 0 */
    double v = tc_get_f(x, k);
    if (isnan(v)) r.i = 0;
    else if (!(fabs(v) < 1e38)) r.i = v > 0 ? tc_int_max(to) : tc_int_min(to);
    else {
      I128 iv = (I128)trunc(v);
      r.i = iv > tc_int_max(to) ? tc_int_max(to) : iv < tc_int_min(to) ? tc_int_min(to) : iv;
    }
  }
  return r;
}

static void test_cast(LoomDType from, LoomDType to) {
  char what[96];
  snprintf(what, sizeof what, "cast(%s -> %s)", loom_dtype_name(from), loom_dtype_name(to));
  LoomArray x = make_edges(from, false);
  int64_t n = x.shape[0];
  LoomGraph *g = NULL;
  LoomNode xn, yn;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn)) &&
      CHECK_OK(loom_cast(g, xn, to, &yn)) && tc_check_info(g, yn, to, 1, &n, what)) {
    LoomArray out;
    if (CHECK(tc_eval1(g, yn, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx))) {
      for (int64_t k = 0; k < n; k++) {
        Ref want = ref_cast(from, to, &x, k);
        char operand[48];
        describe_value(&x, k, operand, sizeof operand);
        if (tc_is_float(to)) {
          double got = tc_get_f(&out, k);
          /* float64 -> float16 may round through float32: allow 1 ulp there only. */
          uint64_t tol = (from == LOOM_FLOAT64 && to == LOOM_FLOAT16) ? 1 : 0;
          CHECK(tc_close_ulp(to, got, want.f, tol), "%s [%s]: got %.17g, want %.17g", what, operand,
                got, want.f);
        } else {
          char b1[48], b2[48];
          I128 got = tc_get_i(&out, k);
          CHECK(got == want.i, "%s [%s]: got %s, want %s", what, operand, tc_i128_str(got, b1),
                tc_i128_str(want.i, b2));
        }
      }
      loom_array_free(tc_ctx, &out);
    }
  }
  if (g) loom_graph_destroy(g);
  tc_free(&x);
}

/* ---- promotion of every pair (no evaluation: loom_node_info only) ------------------------------------- */
static void test_promotion_table(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray arrs[TC_NDTYPES];
  LoomNode nodes[TC_NDTYPES];
  for (int i = 0; i < TC_NDTYPES; i++) {
    arrs[i] = tc_new1(tc_all_dtypes[i], 3);
    CHECK_OK(loom_input(g, &arrs[i], &nodes[i]));
  }
  for (int i = 0; i < TC_NDTYPES; i++)
    for (int j = 0; j < TC_NDTYPES; j++) {
      LoomDType a = tc_all_dtypes[i], b = tc_all_dtypes[j], p = ref_promote(a, b);
      char what[96];
      LoomNode y;
      snprintf(what, sizeof what, "add(%s, %s)", loom_dtype_name(a), loom_dtype_name(b));
      if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, nodes[i], nodes[j], &y)))
        tc_check_info(g, y, p, 1, (const int64_t[]){3}, what);
      snprintf(what, sizeof what, "lt(%s, %s)", loom_dtype_name(a), loom_dtype_name(b));
      if (CHECK_OK(loom_binary(g, LOOM_OP_LT, nodes[i], nodes[j], &y)))
        tc_check_info(g, y, LOOM_BOOL, 1, NULL, what);
      snprintf(what, sizeof what, "truediv(%s, %s)", loom_dtype_name(a), loom_dtype_name(b));
      if (CHECK_OK(loom_binary(g, LOOM_OP_TRUEDIV, nodes[i], nodes[j], &y)))
        tc_check_info(g, y, tc_is_float(p) ? p : LOOM_FLOAT64, 1, NULL, what);
      snprintf(what, sizeof what, "subtract(%s, %s)", loom_dtype_name(a), loom_dtype_name(b));
      LoomStatus st = loom_binary(g, LOOM_OP_SUB, nodes[i], nodes[j], &y);
      if (a == LOOM_BOOL && b == LOOM_BOOL) CHECK(st == LOOM_ERR_DTYPE, "%s must fail", what);
      else if (CHECK(st == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx)))
        tc_check_info(g, y, p, 1, NULL, what);
      snprintf(what, sizeof what, "atan2(%s, %s)", loom_dtype_name(a), loom_dtype_name(b));
      if (CHECK_OK(loom_binary(g, LOOM_OP_ATAN2, nodes[i], nodes[j], &y)))
        /* NumPy: the first float loop both inputs cast to safely (int8, uint8 -> float16, not float32) */
        tc_check_info(g, y, ref_promote(ref_float_of(a), ref_float_of(b)), 1, NULL, what);
    }
  /* The named examples of NumPy 2's table. */
  struct { LoomOp op; LoomDType a, b, want; } ex[] = {
      {LOOM_OP_ADD, LOOM_INT8, LOOM_UINT8, LOOM_INT16},
      {LOOM_OP_ADD, LOOM_INT64, LOOM_UINT64, LOOM_FLOAT64},
      {LOOM_OP_TRUEDIV, LOOM_INT8, LOOM_INT8, LOOM_FLOAT64},
      {LOOM_OP_ADD, LOOM_INT16, LOOM_FLOAT16, LOOM_FLOAT32},
      {LOOM_OP_ADD, LOOM_UINT32, LOOM_INT32, LOOM_INT64},
      {LOOM_OP_MUL, LOOM_FLOAT32, LOOM_INT64, LOOM_FLOAT64},
      {LOOM_OP_EQ, LOOM_INT8, LOOM_FLOAT64, LOOM_BOOL},
  };
  for (size_t k = 0; k < sizeof ex / sizeof ex[0]; k++) {
    LoomNode y;
    char what[96];
    snprintf(what, sizeof what, "%s(%s, %s)", loom_op_name(ex[k].op), loom_dtype_name(ex[k].a),
             loom_dtype_name(ex[k].b));
    if (CHECK_OK(loom_binary(g, ex[k].op, nodes[ex[k].a], nodes[ex[k].b], &y)))
      tc_check_info(g, y, ex[k].want, 1, NULL, what);
  }
  struct { LoomDType a, want; } fl[] = {{LOOM_INT8, LOOM_FLOAT16}, {LOOM_INT16, LOOM_FLOAT32},
                                        {LOOM_INT32, LOOM_FLOAT64}, {LOOM_UINT8, LOOM_FLOAT16},
                                        {LOOM_BOOL, LOOM_FLOAT16}, {LOOM_UINT64, LOOM_FLOAT64}};
  for (size_t k = 0; k < sizeof fl / sizeof fl[0]; k++) {
    LoomNode y;
    char what[64];
    snprintf(what, sizeof what, "exp(%s)", loom_dtype_name(fl[k].a));
    if (CHECK_OK(loom_unary(g, LOOM_OP_EXP, nodes[fl[k].a], &y)))
      tc_check_info(g, y, fl[k].want, 1, NULL, what);
  }
  loom_graph_destroy(g);
  for (int i = 0; i < TC_NDTYPES; i++) tc_free(&arrs[i]);
}

/* ---- NEP 50 weak scalars ----------------------------------------------------------------------------------- */
static void test_weak_scalars(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray f32 = tc_new1(LOOM_FLOAT32, 3), i8 = tc_new1(LOOM_INT8, 3), u8 = tc_new1(LOOM_UINT8, 3),
            i32 = tc_new1(LOOM_INT32, 3), b = tc_new1(LOOM_BOOL, 3), f16 = tc_new1(LOOM_FLOAT16, 3);
  for (int k = 0; k < 3; k++) {
    tc_set_f(&f32, k, 1.25 * k);
    tc_set_i(&i8, k, 126 + k); /* 126, 127, -128 */
    tc_set_i(&u8, k, 250 + k);
    tc_set_i(&i32, k, -3 + k);
    tc_set_i(&b, k, k & 1);
    tc_set_f(&f16, k, 0.5 * k);
  }
  LoomNode nf32, ni8, nu8, ni32, nb, nf16, w2, w1, w300, wm1, w15, wtrue, y;
  CHECK_OK(loom_input(g, &f32, &nf32));
  CHECK_OK(loom_input(g, &i8, &ni8));
  CHECK_OK(loom_input(g, &u8, &nu8));
  CHECK_OK(loom_input(g, &i32, &ni32));
  CHECK_OK(loom_input(g, &b, &nb));
  CHECK_OK(loom_input(g, &f16, &nf16));
  CHECK_OK(loom_weak_float(g, 2.0, &w2));
  CHECK_OK(loom_weak_int(g, 1, &w1));
  CHECK_OK(loom_weak_int(g, 300, &w300));
  CHECK_OK(loom_weak_int(g, -1, &wm1));
  CHECK_OK(loom_weak_float(g, 1.5, &w15));
  CHECK_OK(loom_weak_bool(g, 1, &wtrue));
  int64_t three = 3;
  LoomArray out;

  if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, nf32, w2, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT32, 1, &three, "float32 * weak 2.0") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    for (int k = 0; k < 3; k++) CHECK(tc_get_f(&out, k) == 2.5 * k, "float32 * 2.0 [%d]", k);
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, ni8, w1, &y)) &&
      tc_check_info(g, y, LOOM_INT8, 1, &three, "int8 + weak 1") && CHECK_OK(tc_eval1(g, y, &out))) {
    CHECK(tc_get_i(&out, 0) == 127 && tc_get_i(&out, 1) == -128 && tc_get_i(&out, 2) == -127,
          "int8 + 1 wraps");
    loom_array_free(tc_ctx, &out);
  }
  /* weak on the left gives the same dtype */
  if (CHECK_OK(loom_binary(g, LOOM_OP_SUB, w1, ni8, &y)))
    tc_check_info(g, y, LOOM_INT8, 1, &three, "weak 1 - int8");
  CHECK_STATUS(loom_binary(g, LOOM_OP_ADD, nu8, w300, &y), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "300") != NULL, "uint8 + 300: message names the value: %s",
        loom_last_error(tc_ctx));
  CHECK_STATUS(loom_binary(g, LOOM_OP_ADD, nu8, wm1, &y), LOOM_ERR_INVALID_ARGUMENT);
  if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, ni32, w15, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT64, 1, &three, "int32 * weak 1.5") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    for (int k = 0; k < 3; k++) CHECK(tc_get_f(&out, k) == 1.5 * (-3 + k), "int32 * 1.5 [%d]", k);
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, nb, w1, &y)))
    tc_check_info(g, y, LOOM_INT64, 1, &three, "bool + weak 1");
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, nb, w2, &y)))
    tc_check_info(g, y, LOOM_FLOAT64, 1, &three, "bool + weak 2.0");
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, ni8, wtrue, &y)))
    tc_check_info(g, y, LOOM_INT8, 1, &three, "int8 + weak True");
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, nf16, w1, &y)))
    tc_check_info(g, y, LOOM_FLOAT16, 1, &three, "float16 + weak 1");
  if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, nf16, w15, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT16, 1, &three, "float16 * weak 1.5") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    for (int k = 0; k < 3; k++) CHECK(tc_get_f(&out, k) == 0.75 * k, "float16 * 1.5 [%d]", k);
    loom_array_free(tc_ctx, &out);
  }
  /* A weak scalar alone evaluates to its kind's default dtype. */
  LoomNode w_only;
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, w1, w300, &w_only)))
    tc_check_info(g, w_only, LOOM_INT64, 0, NULL, "weak 1 + weak 300");
  loom_graph_destroy(g);
  tc_free(&f32);
  tc_free(&i8);
  tc_free(&u8);
  tc_free(&i32);
  tc_free(&b);
  tc_free(&f16);
}

/* ---- clip and strong constants -------------------------------------------------------------------------- */
static void test_clip_and_consts(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  double xs[] = {-5, -1, 0, 0.5, 2, 7, NAN};
  int64_t n = 7;
  LoomArray x = tc_new1(LOOM_FLOAT64, n), xi = tc_new1(LOOM_INT32, n);
  for (int k = 0; k < n; k++) {
    tc_set_f(&x, k, xs[k]);
    tc_set_i(&xi, k, k < 6 ? (I128)xs[k] : 100);
  }
  LoomNode xn, xin, lo, hi, y, yi, yl;
  CHECK_OK(loom_input(g, &x, &xn));
  CHECK_OK(loom_input(g, &xi, &xin));
  CHECK_OK(loom_const_f64(g, -1.0, LOOM_FLOAT64, &lo));
  CHECK_OK(loom_const_f64(g, 2.0, LOOM_FLOAT64, &hi));
  LoomNode loi, hii;
  CHECK_OK(loom_const_i64(g, -1, LOOM_INT32, &loi));
  CHECK_OK(loom_const_i64(g, 2, LOOM_INT32, &hii));
  LoomArray out;
  if (CHECK_OK(loom_clip(g, xn, lo, hi, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
    for (int k = 0; k < n; k++) {
      double want = isnan(xs[k]) ? NAN : xs[k] < -1 ? -1 : xs[k] > 2 ? 2 : xs[k];
      CHECK(tc_close_ulp(LOOM_FLOAT64, tc_get_f(&out, k), want, 0), "clip f64 [%d]: got %g want %g", k,
            tc_get_f(&out, k), want);
    }
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_clip(g, xin, loi, hii, &yi)) &&
      tc_check_info(g, yi, LOOM_INT32, 1, &n, "clip int32") && CHECK_OK(tc_eval1(g, yi, &out))) {
    for (int k = 0; k < n; k++) {
      I128 v = tc_get_i(&xi, k), want = v < -1 ? -1 : v > 2 ? 2 : v;
      CHECK(tc_get_i(&out, k) == want, "clip int32 [%d]", k);
    }
    loom_array_free(tc_ctx, &out);
  }
  /* lo only (hi = none) */
  if (CHECK_OK(loom_clip(g, xin, loi, -1, &yl)) && CHECK_OK(tc_eval1(g, yl, &out))) {
    for (int k = 0; k < n; k++) {
      I128 v = tc_get_i(&xi, k), want = v < -1 ? -1 : v;
      CHECK(tc_get_i(&out, k) == want, "clip lo only [%d]", k);
    }
    loom_array_free(tc_ctx, &out);
  }
  /* strong constants promote as arrays: int8 array + int32 const -> int32 */
  LoomArray a8 = tc_new1(LOOM_INT8, 2);
  tc_set_i(&a8, 0, 100);
  tc_set_i(&a8, 1, -100);
  LoomNode a8n, c32, s;
  CHECK_OK(loom_input(g, &a8, &a8n));
  CHECK_OK(loom_const_i64(g, 100, LOOM_INT32, &c32));
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, a8n, c32, &s)) &&
      tc_check_info(g, s, LOOM_INT32, 1, (const int64_t[]){2}, "int8 + int32 const") &&
      CHECK_OK(tc_eval1(g, s, &out))) {
    CHECK(tc_get_i(&out, 0) == 200 && tc_get_i(&out, 1) == 0, "int8 + int32 const values");
    loom_array_free(tc_ctx, &out);
  }
  LoomNode bad;
  CHECK_STATUS(loom_const_i64(g, 300, LOOM_INT8, &bad), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_const_u64(g, UINT64_MAX, LOOM_INT64, &bad), LOOM_ERR_INVALID_ARGUMENT);
  loom_graph_destroy(g);
  tc_free(&x);
  tc_free(&xi);
  tc_free(&a8);
}

/* ---- float16 rounding of stores -------------------------------------------------------------------------- */
static void test_float16_rounding(void) {
  /* float32 values halfway between float16 neighbours round to even; overflow gives inf. */
  float vals[] = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65504.0f, 65519.0f, 65520.0f, 1e-8f,
                  5.9604645e-8f, 2.98023224e-8f, -2049.0f, 0.1f};
  int64_t n = (int64_t)(sizeof vals / sizeof vals[0]);
  LoomArray x = tc_new1(LOOM_FLOAT32, n);
  for (int64_t k = 0; k < n; k++) tc_set_f(&x, k, vals[k]);
  LoomGraph *g = NULL;
  LoomNode xn, y;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn)) &&
      CHECK_OK(loom_cast(g, xn, LOOM_FLOAT16, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
    for (int64_t k = 0; k < n; k++) {
      uint16_t got = *(uint16_t *)tc_ptr(&out, k), want = tc_double_to_f16(vals[k]);
      CHECK(got == want, "float32 %.9g -> float16: bits 0x%04x, want 0x%04x", vals[k], got, want);
    }
    loom_array_free(tc_ctx, &out);
  }
  if (g) loom_graph_destroy(g);
  tc_free(&x);
}

int main(void) {
  /* Self-check of the float16 helpers this test relies on. */
  CHECK(tc_double_to_f16(1.0) == 0x3c00 && tc_double_to_f16(65504.0) == 0x7bff &&
            tc_double_to_f16(65520.0) == 0x7c00 && tc_double_to_f16(ldexp(1.0, -24)) == 0x0001 &&
            tc_double_to_f16(1.0 + ldexp(1.0, -11)) == 0x3c00 &&
            tc_double_to_f16(1.0 + 3 * ldexp(1.0, -11)) == 0x3c02 &&
            tc_f16_to_double(0x3555) == 0.333251953125,
        "float16 helpers");
  if (!tc_init()) return 1;
  test_promotion_table();
  test_weak_scalars();
  test_clip_and_consts();
  test_float16_rounding();
  for (int i = 0; i < NOPS; i++) {
    const OpDesc *d = &all_ops[i];
    for (int j = 0; j < TC_NDTYPES; j++) {
      LoomDType t = tc_all_dtypes[j];
      if (d->rule == R_COMPLEX) continue; /* complex results: tests/c/test_complex.c */
      if (d->rule == R_RANDOM) continue;  /* the generator: tests/c/test_random.c */
      if (d->arity == 1) test_unary(d, t);
      else if (d->arity == 2) test_binary(d, t);
      else {
        test_where(t, LOOM_BOOL);
        if (t == LOOM_INT32) test_where(t, LOOM_FLOAT64);
      }
    }
  }
  for (int i = 0; i < TC_NDTYPES; i++)
    for (int j = 0; j < TC_NDTYPES; j++) test_cast(tc_all_dtypes[i], tc_all_dtypes[j]);
  return tc_finish();
}
