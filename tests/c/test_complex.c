/* SPDX-License-Identifier: Apache-2.0 */
/* test_complex.c: complex64 and complex128 through the public API on the host, against references
 * computed here.
 *
 * References: arithmetic, comparisons, maximum/minimum/fmax/fmin, sign, reciprocal-free division,
 * exp2 / expm1 / log1p / log2 / log10 and the casts are NumPy's loop formulas written out in C below;
 * exp, log, sqrt, the trigonometric, hyperbolic and inverse functions, abs and pow use the C library's
 * <complex.h> functions, which is what NumPy calls on Linux (glibc). Every function runs on a grid of
 * special values (0, -0, +-1, 0.5, -2.5, tiny, huge, +-inf, NaN, 3, +-710 in both parts): NaN-ness,
 * infinities and the signs of zeros must match the reference exactly (C99 Annex G); finite results
 * within a few ulp of |reference|. complex64 is checked against the complex128 reference of its
 * (exactly widened) operands rounded to float32: loom computes complex64 functions in float64.
 * Then reductions (sum, prod, mean, min, max, argmin, argmax, any, all) over each axis of a strided
 * input with NaNs, NEP 50 weak complex scalars, broadcasting, 0-d and empty arrays.
 */
#include <complex.h>

#include "test_common.h"

static const double parts[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, 1e300, INFINITY, -INFINITY, NAN, 3.0, 710.0, -710.0};
#define NPARTS ((int)(sizeof parts / sizeof parts[0]))
#define NGRID (NPARTS * NPARTS)

typedef double complex C;

/* The grid of complex special values, as an array of dtype t. */
static LoomArray grid(LoomDType t) {
  LoomArray a = tc_new1(t, NGRID);
  for (int i = 0; i < NPARTS; i++)
    for (int j = 0; j < NPARTS; j++) tc_set_c(&a, i * NPARTS + j, parts[i], parts[j]);
  return a;
}

static C get_c(const LoomArray *a, int64_t k) {
  double re, im;
  tc_get_c(a, k, &re, &im);
  return CMPLX(re, im);
}

/* ---- comparing ---------------------------------------------------------------------------------- */

/* A part: NaN == NaN, infinities and zeros exact (with the sign of zero when `zsign`). */
static bool part_special_ok(double got, double want, bool zsign) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  if (want == 0) return got == 0 && (!zsign || signbit(got) == signbit(want));
  return true; /* finite nonzero: checked by the magnitude test */
}

/* got vs want: special parts exact; finite ones within `tol` times eps of the parts' dtype, relative
 * to |want| (the norm NumPy's and glibc's accuracy is stated in). */
static bool complex_ok(C got, C want, double tol, double eps, bool zsign) {
  if (!part_special_ok(creal(got), creal(want), zsign) || !part_special_ok(cimag(got), cimag(want), zsign)) return false;
  bool re_fin = isfinite(creal(want)) && creal(want) != 0, im_fin = isfinite(cimag(want)) && cimag(want) != 0;
  if (!re_fin && !im_fin) return true;
  double mag = hypot(re_fin ? creal(want) : 0, im_fin ? cimag(want) : 0);
  double dr = re_fin ? fabs(creal(got) - creal(want)) : 0, di = im_fin ? fabs(cimag(got) - cimag(want)) : 0;
  /* subnormal results carry absolute rounding errors of the smallest subnormal */
  return hypot(dr, di) <= tol * eps * mag + (eps > 1e-10 ? 3e-45 : 1e-322);
}

/* The complex128 reference rounded as a complex64 result would be. */
static C round_c64(C z) { return CMPLX((double)(float)creal(z), (double)(float)cimag(z)); }

/* ---- references: NumPy's loops written out ----------------------------------------------------- */

static C ref_div(C a, C b) { /* umath/loops.c.src, @TYPE@_divide */
  double ar = creal(a), ai = cimag(a), br = creal(b), bi = cimag(b);
  double abr = fabs(br), abi = fabs(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return CMPLX(ar / abr, ai / abi);
    double rat = bi / br, scl = 1.0 / (br + bi * rat);
    return CMPLX((ar + ai * rat) * scl, (ai - ar * rat) * scl);
  }
  double rat = br / bi, scl = 1.0 / (bi + br * rat);
  return CMPLX((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}
static C ref_div32(C a, C b) { /* the same in float32 arithmetic */
  float ar = (float)creal(a), ai = (float)cimag(a), br = (float)creal(b), bi = (float)cimag(b);
  float abr = fabsf(br), abi = fabsf(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return CMPLX(ar / abr, ai / abi);
    float rat = bi / br, scl = 1.0f / (br + bi * rat);
    return CMPLX((ar + ai * rat) * scl, (ai - ar * rat) * scl);
  }
  float rat = br / bi, scl = 1.0f / (bi + br * rat);
  return CMPLX((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}

/* NumPy's CGT/CGE/CLT/CLE/CEQ/CNE */
static bool ref_cmp(LoomOp op, C a, C b) {
  double xr = creal(a), xi = cimag(a), yr = creal(b), yi = cimag(b);
  bool nonan = !isnan(xi) && !isnan(yi);
  switch (op) {
  case LOOM_OP_EQ: return xr == yr && xi == yi;
  case LOOM_OP_NE: return xr != yr || xi != yi;
  case LOOM_OP_GT: return (xr > yr && nonan) || (xr == yr && xi > yi);
  case LOOM_OP_GE: return (xr > yr && nonan) || (xr == yr && xi >= yi);
  case LOOM_OP_LT: return (xr < yr && nonan) || (xr == yr && xi < yi);
  default: return (xr < yr && nonan) || (xr == yr && xi <= yi);
  }
}
static bool c_isnan(C a) { return isnan(creal(a)) || isnan(cimag(a)); }
static C ref_minmax(LoomOp op, C a, C b) {
  bool max = op == LOOM_OP_MAXIMUM || op == LOOM_OP_FMAX;
  bool ge = ref_cmp(max ? LOOM_OP_GE : LOOM_OP_LE, a, b);
  if (op == LOOM_OP_MAXIMUM || op == LOOM_OP_MINIMUM) return (c_isnan(a) || ge) ? a : b;
  return (c_isnan(b) || ge) ? a : b;
}
static C ref_sign(C z) { /* NumPy 2: z / |z| */
  double r = creal(z), i = cimag(z), h = hypot(r, i);
  if (isnan(h)) return CMPLX(NAN, NAN);
  if (isinf(h)) {
    if (isinf(r)) return isinf(i) ? CMPLX(NAN, NAN) : CMPLX(r > 0 ? 1.0 : -1.0, 0.0);
    return CMPLX(0.0, i > 0 ? 1.0 : -1.0);
  }
  if (h == 0) return CMPLX(0.0, 0.0);
  return CMPLX(r / h, i / h);
}
static C ref_exp2(C z) { return cexp(CMPLX(creal(z) * M_LN2, cimag(z) * M_LN2)); }
static C ref_expm1(C z) {
  double a = sin(cimag(z) / 2);
  return CMPLX(expm1(creal(z)) * cos(cimag(z)) - 2 * a * a, exp(creal(z)) * sin(cimag(z)));
}
static C ref_log1p(C z) { /* log(1 + z), with the squared modulus through log1p near 0 (NumPy loses digits) */
  double x = creal(z), y = cimag(z);
  double re = hypot(x, y) < 0.5 ? 0.5 * log1p(fma(y, y, x * (2 + x))) : log(hypot(x + 1, y));
  return CMPLX(re, atan2(y, x + 1));
}

/* The reference of a unary op on z (complex128 semantics). */
static C ref_unary(LoomOp op, C z) {
  switch (op) {
  case LOOM_OP_NEG: return CMPLX(-creal(z), -cimag(z));
  case LOOM_OP_CONJ: return CMPLX(creal(z), -cimag(z));
  case LOOM_OP_EXP: return cexp(z);
  case LOOM_OP_EXP2: return ref_exp2(z);
  case LOOM_OP_EXPM1: return ref_expm1(z);
  case LOOM_OP_LOG: return clog(z);
  case LOOM_OP_LOG2: { C l = clog(z); return CMPLX(creal(l) * M_LOG2E, cimag(l) * M_LOG2E); }
  case LOOM_OP_LOG10: { C l = clog(z); return CMPLX(creal(l) * M_LOG10E, cimag(l) * M_LOG10E); }
  case LOOM_OP_LOG1P: return ref_log1p(z);
  case LOOM_OP_SQRT: return csqrt(z);
  case LOOM_OP_SIN: return csin(z);
  case LOOM_OP_COS: return ccos(z);
  case LOOM_OP_TAN: return ctan(z);
  case LOOM_OP_SINH: return csinh(z);
  case LOOM_OP_COSH: return ccosh(z);
  case LOOM_OP_TANH: return ctanh(z);
  case LOOM_OP_ASIN: return casin(z);
  case LOOM_OP_ACOS: return cacos(z);
  case LOOM_OP_ATAN: return catan(z);
  case LOOM_OP_ASINH: return casinh(z);
  case LOOM_OP_ACOSH: return cacosh(z);
  case LOOM_OP_ATANH: return catanh(z);
  case LOOM_OP_SIGN: return ref_sign(z);
  case LOOM_OP_RINT: return CMPLX(nearbyint(creal(z)), nearbyint(cimag(z)));
  default: return CMPLX(NAN, NAN);
  }
}

/* ---- unary ops ---------------------------------------------------------------------------------------- */

static const LoomOp unary_ops[] = {
    LOOM_OP_NEG, LOOM_OP_CONJ, LOOM_OP_EXP, LOOM_OP_EXP2, LOOM_OP_EXPM1, LOOM_OP_LOG, LOOM_OP_LOG2,
    LOOM_OP_LOG10, LOOM_OP_LOG1P, LOOM_OP_SQRT, LOOM_OP_SIN, LOOM_OP_COS, LOOM_OP_TAN, LOOM_OP_SINH,
    LOOM_OP_COSH, LOOM_OP_TANH, LOOM_OP_ASIN, LOOM_OP_ACOS, LOOM_OP_ATAN, LOOM_OP_ASINH, LOOM_OP_ACOSH,
    LOOM_OP_ATANH, LOOM_OP_SIGN, LOOM_OP_RINT};

static void test_unary_grid(LoomDType t) {
  bool c64 = t == LOOM_COMPLEX64;
  double eps = c64 ? FLT_EPSILON : DBL_EPSILON;
  LoomArray x = grid(t);
  for (size_t oi = 0; oi < sizeof unary_ops / sizeof unary_ops[0]; oi++) {
    LoomOp op = unary_ops[oi];
    char what[80];
    snprintf(what, sizeof what, "%s(%s)", loom_op_name(op), loom_dtype_name(t));
    LoomGraph *g = NULL;
    LoomNode xn, yn;
    LoomArray out;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
    if (CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_unary(g, op, xn, &yn)) &&
        tc_check_info(g, yn, t, 1, (const int64_t[]){NGRID}, what) && CHECK_OK(tc_eval1(g, yn, &out))) {
      for (int k = 0; k < NGRID; k++) {
        C z = get_c(&x, k), want = ref_unary(op, z), got = get_c(&out, k);
        if (c64) want = round_c64(want);
        /* exp2 of complex64 scales by ln 2 in float32 first (NumPy's nc_exp2f) */
        if (c64 && op == LOOM_OP_EXP2)
          want = round_c64(cexp(CMPLX((double)((float)creal(z) * (float)M_LN2), (double)((float)cimag(z) * (float)M_LN2))));
        double tol = op == LOOM_OP_RINT || op == LOOM_OP_NEG || op == LOOM_OP_CONJ ? 0 : 8;
        CHECK(complex_ok(got, want, tol, eps, true), "%s [%g%+gj]: got %.17g%+.17gj, want %.17g%+.17gj",
              what, creal(z), cimag(z), creal(got), cimag(got), creal(want), cimag(want));
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  /* ops with real results: abs (hypot), real, imag, isnan, isinf, isfinite, logical_not */
  LoomOp rops[] = {LOOM_OP_ABS, LOOM_OP_REAL, LOOM_OP_IMAG, LOOM_OP_ISNAN, LOOM_OP_ISINF, LOOM_OP_ISFINITE,
                   LOOM_OP_LOGICAL_NOT};
  LoomDType pt = c64 ? LOOM_FLOAT32 : LOOM_FLOAT64;
  for (size_t oi = 0; oi < sizeof rops / sizeof rops[0]; oi++) {
    LoomOp op = rops[oi];
    bool pred = op >= LOOM_OP_ISNAN && op <= LOOM_OP_LOGICAL_NOT;
    char what[80];
    snprintf(what, sizeof what, "%s(%s)", loom_op_name(op), loom_dtype_name(t));
    LoomGraph *g = NULL;
    LoomNode xn, yn;
    LoomArray out;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
    if (CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_unary(g, op, xn, &yn)) &&
        tc_check_info(g, yn, pred ? LOOM_BOOL : pt, 1, NULL, what) && CHECK_OK(tc_eval1(g, yn, &out))) {
      for (int k = 0; k < NGRID; k++) {
        C z = get_c(&x, k);
        double r = creal(z), i = cimag(z);
        if (pred) {
          bool want = op == LOOM_OP_ISNAN ? (isnan(r) || isnan(i))
                      : op == LOOM_OP_ISINF ? (isinf(r) || isinf(i))
                      : op == LOOM_OP_ISFINITE ? (isfinite(r) && isfinite(i)) : !(r != 0 || i != 0);
          CHECK((tc_get_i(&out, k) != 0) == want, "%s [%g%+gj]", what, r, i);
        } else {
          double want = op == LOOM_OP_ABS ? hypot(r, i) : op == LOOM_OP_REAL ? r : i;
          if (c64) want = (double)(float)want;
          double got = tc_get_f(&out, k);
          CHECK(tc_close_ulp(pt, got, want, op == LOOM_OP_ABS ? 2 : 0), "%s [%g%+gj]: got %.17g want %.17g", what, r, i, got,
                want);
        }
      }
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&x);
}

/* Functions away from the special values: log-uniform magnitudes 1e-6..1e6 at every angle. */
static void test_unary_random(LoomDType t) {
  bool c64 = t == LOOM_COMPLEX64;
  double eps = c64 ? FLT_EPSILON : DBL_EPSILON;
  int64_t n = 4000;
  LoomArray x = tc_new1(t, n);
  uint64_t seed = 7;
  for (int64_t k = 0; k < n; k++) {
    double m = pow(10.0, -6 + 12 * tc_rand_unit(&seed)), ph = (2 * tc_rand_unit(&seed) - 1) * M_PI;
    tc_set_c(&x, k, m * cos(ph), m * sin(ph));
  }
  for (size_t oi = 0; oi < sizeof unary_ops / sizeof unary_ops[0]; oi++) {
    LoomOp op = unary_ops[oi];
    char what[80];
    snprintf(what, sizeof what, "%s(%s) random", loom_op_name(op), loom_dtype_name(t));
    LoomGraph *g = NULL;
    LoomNode xn, yn;
    LoomArray out;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
    if (CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_unary(g, op, xn, &yn)) && CHECK_OK(tc_eval1(g, yn, &out))) {
      int bad = 0;
      for (int64_t k = 0; k < n; k++) {
        C z = get_c(&x, k), want = ref_unary(op, z), got = get_c(&out, k);
        if (c64) {
          if (op == LOOM_OP_EXP2)
            want = cexp(CMPLX((double)((float)creal(z) * (float)M_LN2), (double)((float)cimag(z) * (float)M_LN2)));
          if (!(cabs(want) < 1e38 && cabs(want) > 1e-37)) continue; /* overflows / underflows float32 */
          want = round_c64(want);
        } else if (!(cabs(want) < 1e300 && cabs(want) > 1e-290)) continue;
        /* sin/cos/exp of a huge imaginary or real part are ill-conditioned: compare the well-conditioned */
        if (!complex_ok(got, want, 8, eps, false) && bad++ < 3)
          CHECK(false, "%s [%.17g%+.17gj]: got %.17g%+.17gj, want %.17g%+.17gj", what, creal(z), cimag(z), creal(got),
                cimag(got), creal(want), cimag(want));
      }
      CHECK(bad == 0, "%s: %d of %" PRId64 " beyond 8 ulp", what, bad, n);
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&x);
}

/* ---- binary ops on every pair of the grid --------------------------------------------------------------- */
static void test_binary_grid(LoomDType t) {
  bool c64 = t == LOOM_COMPLEX64;
  double eps = c64 ? FLT_EPSILON : DBL_EPSILON;
  LoomArray e = grid(t);
  int64_t n = (int64_t)NGRID * NGRID;
  LoomArray a = tc_new1(t, n), b = tc_new1(t, n);
  for (int i = 0; i < NGRID; i++)
    for (int j = 0; j < NGRID; j++) {
      memcpy(tc_ptr(&a, (int64_t)i * NGRID + j), tc_ptr(&e, i), loom_dtype_size(t));
      memcpy(tc_ptr(&b, (int64_t)i * NGRID + j), tc_ptr(&e, j), loom_dtype_size(t));
    }
  LoomOp ops[] = {LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_TRUEDIV, LOOM_OP_MAXIMUM, LOOM_OP_MINIMUM,
                  LOOM_OP_FMAX, LOOM_OP_FMIN, LOOM_OP_EQ, LOOM_OP_NE, LOOM_OP_LT, LOOM_OP_LE, LOOM_OP_GT, LOOM_OP_GE,
                  LOOM_OP_LOGICAL_AND, LOOM_OP_LOGICAL_OR, LOOM_OP_LOGICAL_XOR};
  for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
    LoomOp op = ops[oi];
    bool pred = op >= LOOM_OP_EQ && op <= LOOM_OP_LOGICAL_XOR;
    char what[80];
    snprintf(what, sizeof what, "%s(%s, %s)", loom_op_name(op), loom_dtype_name(t), loom_dtype_name(t));
    LoomGraph *g = NULL;
    LoomNode an, bn, yn;
    LoomArray out;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
    if (CHECK_OK(loom_input(g, &a, &an)) && CHECK_OK(loom_input(g, &b, &bn)) && CHECK_OK(loom_binary(g, op, an, bn, &yn)) &&
        tc_check_info(g, yn, pred ? LOOM_BOOL : t, 1, &n, what) && CHECK_OK(tc_eval1(g, yn, &out))) {
      int bad = 0;
      for (int64_t k = 0; k < n; k++) {
        C x = get_c(&a, k), y = get_c(&b, k);
        bool ok;
        C got = pred ? 0 : get_c(&out, k), want = 0;
        if (pred) {
          bool w, xt = creal(x) != 0 || cimag(x) != 0, yt = creal(y) != 0 || cimag(y) != 0;
          if (op == LOOM_OP_LOGICAL_AND) w = xt && yt;
          else if (op == LOOM_OP_LOGICAL_OR) w = xt || yt;
          else if (op == LOOM_OP_LOGICAL_XOR) w = xt != yt;
          else w = ref_cmp(op, x, y);
          ok = (tc_get_i(&out, k) != 0) == w;
        } else {
          switch (op) {
          case LOOM_OP_ADD: want = CMPLX(creal(x) + creal(y), cimag(x) + cimag(y)); break;
          case LOOM_OP_SUB: want = CMPLX(creal(x) - creal(y), cimag(x) - cimag(y)); break;
          case LOOM_OP_MUL: /* (ar br - ai bi, ar bi + ai br); loom fuses a multiply-add where the CPU has one */
            want = CMPLX(fma(creal(x), creal(y), -(cimag(x) * cimag(y))), fma(creal(x), cimag(y), cimag(x) * creal(y)));
            break;
          case LOOM_OP_TRUEDIV: want = c64 ? ref_div32(x, y) : ref_div(x, y); break;
          default: want = ref_minmax(op, x, y); break;
          }
          if (c64) want = round_c64(want);
          bool exact = op != LOOM_OP_MUL;
          ok = complex_ok(got, want, exact ? 0 : 2, eps, exact);
          /* a product without the fused multiply-add (no FMA unit): accept the plain formula too */
          if (!ok && op == LOOM_OP_MUL) {
            C plain = CMPLX(creal(x) * creal(y) - cimag(x) * cimag(y), creal(x) * cimag(y) + cimag(x) * creal(y));
            if (c64) plain = round_c64(plain);
            ok = complex_ok(got, plain, 2, eps, false);
          }
        }
        if (!ok && bad++ < 5)
          CHECK(false, "%s [(%g%+gj), (%g%+gj)]: got %.17g%+.17gj, want %.17g%+.17gj", what, creal(x), cimag(x),
                creal(y), cimag(y), creal(got), cimag(got), creal(want), cimag(want));
      }
      CHECK(bad == 0, "%s: %d mismatches of %" PRId64, what, bad, n);
      loom_array_free(tc_ctx, &out);
    }
    loom_graph_destroy(g);
  }
  tc_free(&a);
  tc_free(&b);
  tc_free(&e);
}

/* power: NumPy's npy_cpow rules on special exponents and integer powers; cpow elsewhere. */
static void test_power(LoomDType t) {
  bool c64 = t == LOOM_COMPLEX64;
  double eps = c64 ? FLT_EPSILON : DBL_EPSILON;
  const C bases[] = {CMPLX(1.5, -0.5), CMPLX(-2, 1), CMPLX(0, 0), CMPLX(0.25, 3), CMPLX(-1, 0), CMPLX(7, 0)};
  const C exps[] = {CMPLX(0, 0), CMPLX(1, 0), CMPLX(2, 0), CMPLX(3, 0), CMPLX(-2, 0), CMPLX(5, 0), CMPLX(0.5, 0),
                    CMPLX(1.5, 2), CMPLX(-0.5, -1), CMPLX(0, 1)};
  int nb = (int)(sizeof bases / sizeof bases[0]), ne = (int)(sizeof exps / sizeof exps[0]);
  int64_t n = nb * ne;
  LoomArray a = tc_new1(t, n), b = tc_new1(t, n);
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < ne; j++) {
      tc_set_c(&a, i * ne + j, creal(bases[i]), cimag(bases[i]));
      tc_set_c(&b, i * ne + j, creal(exps[j]), cimag(exps[j]));
    }
  LoomGraph *g = NULL;
  LoomNode an, bn, yn;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &a, &an)) && CHECK_OK(loom_input(g, &b, &bn)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_POW, an, bn, &yn)) && CHECK_OK(tc_eval1(g, yn, &out))) {
    for (int64_t k = 0; k < n; k++) {
      C x = get_c(&a, k), y = get_c(&b, k), got = get_c(&out, k), want;
      if (creal(y) == 0 && cimag(y) == 0) want = 1; /* x ** 0 = 1, also 0 ** 0 */
      else if (creal(x) == 0 && cimag(x) == 0) want = creal(y) > 0 ? 0 : CMPLX(NAN, NAN);
      else if (cimag(y) == 0 && creal(y) == trunc(creal(y))) { /* repeated multiplication */
        int m = (int)fabs(creal(y));
        C p = 1;
        for (int i = 0; i < m; i++) p *= x;
        want = creal(y) < 0 ? ref_div(1, p) : p;
      } else want = cpow(x, y);
      if (c64) want = round_c64(want);
      CHECK(complex_ok(got, want, 16, eps, false), "power(%s) [(%g%+gj) ** (%g%+gj)]: got %.17g%+.17gj, want %.17g%+.17gj",
            loom_dtype_name(t), creal(x), cimag(x), creal(y), cimag(y), creal(got), cimag(got), creal(want), cimag(want));
    }
    loom_array_free(tc_ctx, &out);
  }
  if (g) loom_graph_destroy(g);
  tc_free(&a);
  tc_free(&b);
}

/* ---- casts ------------------------------------------------------------------------------------------- */
static void test_casts(void) {
  const LoomDType all[] = {LOOM_BOOL, LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_UINT16,
                           LOOM_UINT32, LOOM_UINT64, LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64, LOOM_BFLOAT16,
                           LOOM_COMPLEX64, LOOM_COMPLEX128};
  const double vals[] = {0.0, -0.0, 1.0, -3.0, 2.5, 100.0, 65504.0, 1e10, -1e10, NAN, INFINITY, -INFINITY, 0.1};
  int nv = (int)(sizeof vals / sizeof vals[0]);
  for (int ci = 0; ci < 2; ci++) {
    LoomDType ct = ci ? LOOM_COMPLEX128 : LOOM_COMPLEX64;
    for (size_t di = 0; di < sizeof all / sizeof all[0]; di++) {
      LoomDType t = all[di];
      /* complex -> t: the real part (bool: either part nonzero) */
      LoomArray x = tc_new1(ct, nv * 2);
      for (int k = 0; k < nv; k++) {
        tc_set_c(&x, 2 * k, vals[k], vals[(k + 3) % nv]);
        tc_set_c(&x, 2 * k + 1, 0.0, vals[k]);
      }
      LoomGraph *g = NULL;
      LoomNode xn, yn;
      LoomArray out;
      char what[80];
      snprintf(what, sizeof what, "cast(%s -> %s)", loom_dtype_name(ct), loom_dtype_name(t));
      if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_cast(g, xn, t, &yn)) &&
          CHECK_OK(tc_eval1(g, yn, &out))) {
        for (int64_t k = 0; k < 2 * nv; k++) {
          double re, im;
          tc_get_c(&x, k, &re, &im);
          if (t == LOOM_BOOL) CHECK((tc_get_i(&out, k) != 0) == (re != 0 || im != 0), "%s [%g%+gj]", what, re, im);
          else if (t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128) {
            double gr, gi;
            tc_get_c(&out, k, &gr, &gi);
            double wr = t == LOOM_COMPLEX64 ? (double)(float)re : re, wi = t == LOOM_COMPLEX64 ? (double)(float)im : im;
            CHECK(part_special_ok(gr, wr, true) && part_special_ok(gi, wi, true) && (isnan(wr) || gr == wr) &&
                      (isnan(wi) || gi == wi), "%s [%g%+gj]", what, re, im);
          } else if (t == LOOM_FLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64 || t == LOOM_BFLOAT16) {
            double want = t == LOOM_BFLOAT16 ? tc_round_bf16(re) : tc_round_to(t, re), got = tc_get_f(&out, k);
            /* complex64 -> float16 rounds the float32 part once; float64 parts may round through float32 */
            CHECK(tc_close_ulp(t, got, want, ct == LOOM_COMPLEX128 && t == LOOM_FLOAT16 ? 1 : 0), "%s [%g%+gj]: got %g want %g",
                  what, re, im, got, want);
          } else { /* saturating, NaN -> 0 */
            I128 want = isnan(re) ? 0 : !(fabs(re) < 1e38) ? (re > 0 ? tc_int_max(t) : tc_int_min(t)) : (I128)trunc(re);
            if (want > tc_int_max(t)) want = tc_int_max(t);
            if (want < tc_int_min(t)) want = tc_int_min(t);
            CHECK(tc_get_i(&out, k) == want, "%s [%g%+gj]", what, re, im);
          }
        }
        loom_array_free(tc_ctx, &out);
      }
      if (g) loom_graph_destroy(g);
      tc_free(&x);
      /* t -> complex: the value as the real part, imaginary part +0 */
      LoomArray y = tc_new1(t, nv);
      for (int k = 0; k < nv; k++) {
        double v = vals[k];
        if (t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128) tc_set_c(&y, k, v, -v);
        else if (tc_is_int(t)) tc_set_i(&y, k, isfinite(v) && fabs(v) < 1e9 ? (I128)v : 7);
        else tc_set_f(&y, k, v);
      }
      snprintf(what, sizeof what, "cast(%s -> %s)", loom_dtype_name(t), loom_dtype_name(ct));
      g = NULL;
      if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &y, &xn)) && CHECK_OK(loom_cast(g, xn, ct, &yn)) &&
          CHECK_OK(tc_eval1(g, yn, &out))) {
        for (int64_t k = 0; k < nv; k++) {
          double re, im, gr, gi;
          tc_get_c(&y, k, &re, &im);
          if (tc_is_int(t) || t == LOOM_BOOL) re = (double)tc_get_i(&y, k);
          tc_get_c(&out, k, &gr, &gi);
          double wr = ct == LOOM_COMPLEX64 ? (double)(float)re : re, wi = ct == LOOM_COMPLEX64 ? (double)(float)im : im;
          CHECK((isnan(wr) ? isnan(gr) : gr == wr) && (isnan(wi) ? isnan(gi) : gi == wi && signbit(gi) == signbit(wi)),
                "%s [%g%+gj]: got %g%+gj", what, re, im, gr, gi);
        }
        loom_array_free(tc_ctx, &out);
      }
      if (g) loom_graph_destroy(g);
      tc_free(&y);
    }
  }
}

/* ---- reductions over each axis of a strided (transposed) input ------------------------------------------- */
static const char *red_name(LoomReduceOp op) {
  static const char *const names[] = {"sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"};
  return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static void test_reductions(LoomDType t) {
  bool c64 = t == LOOM_COMPLEX64;
  double eps = c64 ? FLT_EPSILON : DBL_EPSILON;
  int64_t R = 37, K = 129;
  LoomArray base = tc_new2(t, K, R); /* the input is its transpose: shape (R, K), strides (1, R) */
  uint64_t seed = 3;
  for (int64_t k = 0; k < R * K; k++) tc_set_c(&base, k, 2 * tc_rand_unit(&seed) - 1, 2 * tc_rand_unit(&seed) - 1);
  LoomArray x = base;
  x.shape[0] = R, x.shape[1] = K, x.strides[0] = 1, x.strides[1] = R;
  const LoomReduceOp ops[] = {LOOM_REDUCE_SUM, LOOM_REDUCE_PROD, LOOM_REDUCE_MEAN, LOOM_REDUCE_MIN, LOOM_REDUCE_MAX,
                              LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ARGMAX, LOOM_REDUCE_ANY, LOOM_REDUCE_ALL};
  for (int withnan = 0; withnan < 2; withnan++) {
    if (withnan) { /* a NaN in column 5 (row 9), a zero row 0 column 6, an imaginary NaN at (11, 7) */
      tc_set_c(&x, 9 * K + 5, NAN, 0.5);
      tc_set_c(&x, 0 * K + 6, 0.0, 0.0);
      tc_set_c(&x, 11 * K + 7, 0.25, NAN);
    }
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
      LoomReduceOp op = ops[oi];
      for (int axis = -1; axis < 2; axis++) {
        char what[96];
        snprintf(what, sizeof what, "%s(%s, axis %d%s)", red_name(op), loom_dtype_name(t), axis,
                 withnan ? ", NaN" : "");
        LoomGraph *g = NULL;
        LoomNode xn, yn;
        LoomArray out;
        int32_t ax = axis;
        if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) continue;
        bool arg = op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX;
        if (CHECK_OK(loom_input(g, &x, &xn)) && CHECK_OK(loom_reduce(g, op, xn, axis < 0 ? 0 : 1, axis < 0 ? NULL : &ax, 0, &yn)) &&
            CHECK_OK(tc_eval1(g, yn, &out))) {
          int64_t nout = axis < 0 ? 1 : axis == 0 ? K : R, nred = axis < 0 ? R * K : axis == 0 ? R : K;
          for (int64_t o = 0; o < nout; o++) {
            /* the reduced elements in order (row-major over the reduced axes) */
            C acc = op == LOOM_REDUCE_PROD ? 1 : 0, best = 0;
            int64_t bi = 0;
            bool any = false, all = true, nanseen = false;
            for (int64_t r = 0; r < nred; r++) {
              int64_t i = axis < 0 ? r : axis == 0 ? r * K + o : o * K + r;
              C v = get_c(&x, i);
              if (c64 && op != LOOM_REDUCE_PROD) v = CMPLX((double)(float)creal(v), (double)(float)cimag(v));
              acc = op == LOOM_REDUCE_PROD ? acc * v : acc + v;
              any = any || creal(v) != 0 || cimag(v) != 0;
              all = all && (creal(v) != 0 || cimag(v) != 0);
              if (r == 0) best = v;
              else if (!nanseen) {
                bool better = op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_ARGMIN ? ref_cmp(LOOM_OP_LT, v, best)
                                                                                 : ref_cmp(LOOM_OP_GT, v, best);
                if (better || c_isnan(v)) best = v, bi = r;
              }
              if (c_isnan(best)) nanseen = true;
            }
            if (op == LOOM_REDUCE_MEAN) acc /= (double)nred;
            if (arg) {
              CHECK(tc_get_i(&out, o) == bi, "%s [%" PRId64 "]: got %lld want %lld", what, o, (long long)tc_get_i(&out, o),
                    (long long)bi);
            } else if (op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL) {
              CHECK((tc_get_i(&out, o) != 0) == (op == LOOM_REDUCE_ANY ? any : all), "%s [%" PRId64 "]", what, o);
            } else {
              C got = get_c(&out, o), want = op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX ? best : acc;
              bool exact = op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX;
              /* sums: error bound ~ n eps sum|x| (loose: reassociated partial sums) */
              bool ok = exact ? complex_ok(got, want, 0, eps, false)
                        : (c_isnan(want) ? c_isnan(got)
                                         : cabs(got - want) <= 4 * eps * (double)nred * (op == LOOM_REDUCE_PROD ? cabs(want) + 1e-300 : 2.0));
              CHECK(ok, "%s [%" PRId64 "]: got %.17g%+.17gj want %.17g%+.17gj", what, o, creal(got), cimag(got), creal(want),
                    cimag(want));
            }
          }
          loom_array_free(tc_ctx, &out);
        }
        loom_graph_destroy(g);
      }
    }
  }
  tc_free(&base);
}

/* ---- scalars, broadcasting, fusion, 0-d and empty ------------------------------------------------------------ */
static void test_scalars_and_shapes(void) {
  /* float32 array * 1j (NEP 50): complex64, values (0, x) */
  LoomArray f = tc_new2(LOOM_FLOAT32, 3, 4);
  for (int k = 0; k < 12; k++) tc_set_f(&f, k, 0.5 * k - 2);
  LoomGraph *g = NULL;
  LoomNode fn, j, y, z, w;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &f, &fn)) && CHECK_OK(loom_weak_complex(g, 0, 1, &j)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_MUL, fn, j, &y)) &&
      tc_check_info(g, y, LOOM_COMPLEX64, 2, (const int64_t[]){3, 4}, "float32 * 1j") && CHECK_OK(tc_eval1(g, y, &out))) {
    for (int k = 0; k < 12; k++) {
      double re, im;
      tc_get_c(&out, k, &re, &im);
      /* (x + 0j) * (0 + 1j) = (x*0 - 0*1, x*1 + 0*0): +-0 real part */
      CHECK(re == 0 && im == 0.5 * k - 2, "float32 * 1j [%d]: %g%+gj", k, re, im);
    }
    loom_array_free(tc_ctx, &out);
  }
  /* a fused chain with broadcasting: |exp(x * 1j)| = 1 and its real part cos(x), one kernel */
  LoomArray row = tc_new1(LOOM_FLOAT64, 4);
  for (int k = 0; k < 4; k++) tc_set_f(&row, k, 0.3 * k);
  LoomNode rn, e, a, re, both[2];
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  if (CHECK_OK(loom_input(g, &row, &rn)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, rn, j, &z)) &&
      CHECK_OK(loom_unary(g, LOOM_OP_EXP, z, &e)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, e, y, &w)) &&
      CHECK_OK(loom_unary(g, LOOM_OP_ABS, e, &a)) && CHECK_OK(loom_unary(g, LOOM_OP_REAL, w, &re))) {
    both[0] = a, both[1] = re;
    if (CHECK_OK(loom_eval(g, 1, &both[1], &outs[1]))) {
      LoomStats s;
      CHECK_OK(loom_get_stats(tc_ctx, &s));
      CHECK(s.last_eval_kernels == 1, "complex chain fuses into one kernel (%llu)", (unsigned long long)s.last_eval_kernels);
      loom_array_free(tc_ctx, &outs[1]);
    }
    if (CHECK_OK(loom_eval(g, 2, both, outs))) {
      for (int k = 0; k < 4; k++) CHECK(fabs(tc_get_f(&outs[0], k) - 1.0) < 4e-16, "|exp(ix)| [%d]", k);
      for (int k = 0; k < 12; k++) /* real(exp(i x_col) + i f) = cos(x_col) + 0 */
        CHECK(fabs(tc_get_f(&outs[1], k) - cos(0.3 * (k % 4))) < 1e-7, "real(...) [%d]: %g", k, tc_get_f(&outs[1], k));
      loom_array_free(tc_ctx, &outs[0]);
      loom_array_free(tc_ctx, &outs[1]);
    }
  }
  /* complex(re, im) from two float arrays, and where() on complex values */
  LoomNode c2, cond, wh;
  if (CHECK_OK(loom_binary(g, LOOM_OP_COMPLEX, fn, fn, &c2)) && tc_check_info(g, c2, LOOM_COMPLEX64, 2, NULL, "complex(f32, f32)") &&
      CHECK_OK(loom_binary(g, LOOM_OP_GT, fn, j, &cond)) && CHECK_OK(loom_where(g, cond, c2, y, &wh)) &&
      CHECK_OK(tc_eval1(g, wh, &out))) {
    for (int k = 0; k < 12; k++) {
      double v = 0.5 * k - 2, re2, im2;
      tc_get_c(&out, k, &re2, &im2);
      bool gt = v > 0 || (v == 0 && 0 > 1); /* (v + 0j) > (0 + 1j): lexicographic */
      CHECK(gt ? (re2 == v && im2 == v) : (re2 == 0 && im2 == v), "where(complex) [%d]: %g%+gj", k, re2, im2);
    }
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  /* 0-d and empty inputs */
  LoomArray s = tc_new(LOOM_COMPLEX128, 0, NULL), em = tc_new1(LOOM_COMPLEX64, 0);
  tc_set_c(&s, 0, 3, -4);
  g = NULL;
  LoomNode sn, en, r1, r2, r3;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &s, &sn)) && CHECK_OK(loom_input(g, &em, &en)) &&
      CHECK_OK(loom_unary(g, LOOM_OP_ABS, sn, &r1)) && CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, en, 0, NULL, 0, &r2)) &&
      CHECK_OK(loom_reduce(g, LOOM_REDUCE_PROD, en, 0, NULL, 0, &r3))) {
    LoomNode nodes[3] = {r1, r2, r3};
    LoomArray o3[3];
    memset(o3, 0, sizeof o3);
    if (CHECK_OK(loom_eval(g, 3, nodes, o3))) {
      double re, im;
      CHECK(tc_get_f(&o3[0], 0) == 5.0, "abs(3-4j) = 5");
      tc_get_c(&o3[1], 0, &re, &im);
      CHECK(re == 0 && im == 0, "sum of an empty complex64 array is 0");
      tc_get_c(&o3[2], 0, &re, &im);
      CHECK(re == 1 && im == 0, "prod of an empty complex64 array is 1");
      for (int i = 0; i < 3; i++) loom_array_free(tc_ctx, &o3[i]);
    }
  }
  loom_graph_destroy(g);
  /* bad input: an op NumPy has no complex loop for is a clean dtype error */
  g = NULL;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &s, &sn))) {
    CHECK_STATUS(loom_unary(g, LOOM_OP_FLOOR, sn, &r1), LOOM_ERR_DTYPE);
    CHECK(strstr(loom_last_error(tc_ctx), "complex") != NULL, "floor(complex) names complex: %s", loom_last_error(tc_ctx));
    CHECK_STATUS(loom_binary(g, LOOM_OP_MOD, sn, sn, &r1), LOOM_ERR_DTYPE);
    CHECK_STATUS(loom_const_complex(g, 1, 1, LOOM_INT32, &r1), LOOM_ERR_DTYPE);
  }
  loom_graph_destroy(g);
  tc_free(&f);
  tc_free(&row);
  tc_free(&s);
  tc_free(&em);
}

int main(void) {
  if (!tc_init()) return 1;
  for (int c = 0; c < 2; c++) {
    LoomDType t = c ? LOOM_COMPLEX128 : LOOM_COMPLEX64;
    test_unary_grid(t);
    test_unary_random(t);
    test_binary_grid(t);
    test_power(t);
    test_reductions(t);
  }
  test_casts();
  test_scalars_and_shapes();
  return tc_finish();
}
