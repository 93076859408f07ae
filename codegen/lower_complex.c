/* SPDX-License-Identifier: Apache-2.0 */
/* lower_complex.c: complex64 / complex128 ops, casts aside (math.c), for every target.
 *
 * Approach. A complex value is an LLVM literal struct {T, T} (real, imaginary); the sequences here
 * take it apart, compute on the parts with real LLVM ops and the real math functions of math.c
 * (libm + SLEEF on the host, the device library on GPUs), and put it back together; after SROA and
 * instcombine only the scalar parts remain, so host loops vectorize as for floats and the GPU gets
 * plain register code. Everything is branch-free (selects), as in math.c.
 * - Arithmetic follows NumPy's loops literally (umath/loops.c.src): + - componentwise; * as
 *   (ar br - ai bi, ar bi + ai br) with a fused multiply-add where the target has one (NumPy's SIMD
 *   loop uses muladdsub); / is NumPy's Smith division (a zero divisor divides each part by +0);
 *   comparisons are lexicographic with NumPy's NaN rule; maximum/minimum/fmax/fmin and sign (z/|z|,
 *   NumPy 2) as NumPy's loops; abs is hypot.
 * - Functions follow C99 Annex G, which NumPy gets from the C library (glibc): the special values of
 *   the standard's tables (and glibc's choice where the standard leaves a sign open) are selected
 *   over the finite formula. complex64 functions are computed in float64 and rounded once, which
 *   keeps their intermediate squares and exponentials from overflowing; complex128 ones scale where
 *   an intermediate could overflow. Finite formulas: exp, sinh, cosh, tanh (glibc's forms, with
 *   scaling for large real parts); log = (log|z| with log1p near |z| = 1, atan2); sqrt (Kahan, with
 *   scaling); asin, acos, acosh from Kahan's "Branch cuts for complex elementary functions"
 *   (square roots of 1 +- z, which keeps the branch cuts' signed zeros); atanh as
 *   (log1p(4a / ((1-a)^2 + b^2)) / 4, atan2(2b, (1-a)(1+a) - b^2) / 2); asinh, sin, cos, tan, atan
 *   through the identities of Annex G (asinh(z) = -i asin(iz), sin(z) = -i sinh(iz), ...); power
 *   is NumPy's npy_cpow (1 for a zero exponent, its zero-base rules, repeated multiplication for an
 *   integer exponent |n| < 100, else exp(b log a)); exp2, expm1, log2, log10, log1p as NumPy's
 *   funcs.inc.src (log1p with log1p of the squared modulus near 0, where NumPy loses digits).
 */
#include <math.h>
#include <string.h>

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"

typedef LLVMValueRef V;

/* The part dtype a sequence computes in (float32 or float64) and the builder. */
typedef struct Cx {
  CgMath *m;
  LoomDType t;
  LLVMTypeRef ty;
} Cx;

static Cx cx_of(CgMath *m, LoomDType part) {
  Cx c = {m, part, cg_reg_type(m, part)};
  return c;
}

#define B (c->m->b)
static V K(Cx *c, double v) { return LLVMConstReal(c->ty, v); }
static V add(Cx *c, V a, V b) { return LLVMBuildFAdd(B, a, b, ""); }
static V sub(Cx *c, V a, V b) { return LLVMBuildFSub(B, a, b, ""); }
static V mul(Cx *c, V a, V b) { return LLVMBuildFMul(B, a, b, ""); }
static V dv(Cx *c, V a, V b) { return cg_fdiv(c->m, c->t, a, b); }
/* -a as a flip of the sign bit, NaN included (Annex G's special values follow NaN signs through the
 * iz rotations; NVPTX's neg.f32/f64 need not keep a NaN's sign, so fneg is not used). */
static V neg(Cx *c, V a) {
  LLVMTypeRef ft = LLVMTypeOf(a), et = LLVMIntTypeInContext(LLVMGetTypeContext(ft), (unsigned)dtype_bits(c->t));
  V sign = LLVMConstInt(et, 1ull << (dtype_bits(c->t) - 1), 0), lanes[64];
  LLVMTypeRef it = et;
  if (LLVMGetTypeKind(ft) == LLVMVectorTypeKind) {
    unsigned nl = LLVMGetVectorSize(ft);
    for (unsigned i = 0; i < nl && i < 64; i++) lanes[i] = sign;
    sign = LLVMConstVector(lanes, nl);
    it = LLVMVectorType(et, nl);
  }
  return LLVMBuildBitCast(B, LLVMBuildXor(B, LLVMBuildBitCast(B, a, it, ""), sign, ""), ft, "");
}
static V sel(Cx *c, V cond, V a, V b) { return LLVMBuildSelect(B, cond, a, b, ""); }
static V cmp(Cx *c, LLVMRealPredicate p, V a, V b) { return LLVMBuildFCmp(B, p, a, b, ""); }
static V and_(Cx *c, V a, V b) { return LLVMBuildAnd(B, a, b, ""); }
static V or_(Cx *c, V a, V b) { return LLVMBuildOr(B, a, b, ""); }
static V not_(Cx *c, V a) { return LLVMBuildNot(B, a, ""); }
static V intr1(Cx *c, const char *n, V a) { return cg_intrinsic(c->m, n, &c->ty, 1, &a, 1); }
static V intr2(Cx *c, const char *n, V a, V b) {
  V args[2] = {a, b};
  return cg_intrinsic(c->m, n, &c->ty, 1, args, 2);
}
static V fab(Cx *c, V a) { return intr1(c, "llvm.fabs", a); }
static V csign(Cx *c, V mag, V sgn) { return intr2(c, "llvm.copysign", mag, sgn); }
static V fmuladd(Cx *c, V a, V b, V d) {
  V args[3] = {a, b, d};
  return cg_intrinsic(c->m, "llvm.fmuladd", &c->ty, 1, args, 3);
}
static V isnan_(Cx *c, V a) { return cmp(c, LLVMRealUNO, a, a); }
static V isinf_(Cx *c, V a) { return cmp(c, LLVMRealOEQ, fab(c, a), K(c, INFINITY)); }
static V isfin(Cx *c, V a) { return cmp(c, LLVMRealOLT, fab(c, a), K(c, INFINITY)); }
static V iszero(Cx *c, V a) { return cmp(c, LLVMRealOEQ, a, K(c, 0.0)); }
/* A real function through math.c (the same calls, and fixes, as the real op). */
static V fn(Cx *c, LoomOp op, V a) {
  V args[2] = {a, NULL};
  return cg_elem(c->m, op, c->t, args);
}
static V fn2(Cx *c, LoomOp op, V a, V b) {
  V args[2] = {a, b};
  return cg_elem(c->m, op, c->t, args);
}
static V sqrt_(Cx *c, V a) { return cg_fsqrt(c->m, a); }
/* An integer-valued real constant multiple of pi, 1/4 steps. */
static V pi_x(Cx *c, double k) { return K(c, k * 3.14159265358979323846); }

/* A pair of parts. */
typedef struct P {
  V re, im;
} P;
static P pr(V re, V im) { return (P){re, im}; }
static P psel(Cx *c, V cond, P a, P b) { return pr(sel(c, cond, a.re, b.re), sel(c, cond, a.im, b.im)); }

/* ---- arithmetic (NumPy's loops) ----------------------------------------------------------------- */

static P cmul(Cx *c, P a, P b) {
  return pr(fmuladd(c, a.re, b.re, neg(c, mul(c, a.im, b.im))), fmuladd(c, a.re, b.im, mul(c, a.im, b.re)));
}
/* Without a fused multiply-add (npy_cpow's cmul): an overflow then gives NaN as NumPy's. */
static P cmul_plain(Cx *c, P a, P b) {
  return pr(sub(c, mul(c, a.re, b.re), mul(c, a.im, b.im)), add(c, mul(c, a.re, b.im), mul(c, a.im, b.re)));
}

static P cdiv(Cx *c, P a, P b) {
  V abr = fab(c, b.re), abi = fab(c, b.im);
  /* |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi rat) */
  V rat1 = dv(c, b.im, b.re);
  V scl1 = dv(c, K(c, 1.0), add(c, b.re, mul(c, b.im, rat1)));
  P r1 = pr(mul(c, add(c, a.re, mul(c, a.im, rat1)), scl1), mul(c, sub(c, a.im, mul(c, a.re, rat1)), scl1));
  /* else: rat = br / bi, scl = 1 / (bi + br rat) */
  V rat2 = dv(c, b.re, b.im);
  V scl2 = dv(c, K(c, 1.0), add(c, b.im, mul(c, b.re, rat2)));
  P r2 = pr(mul(c, add(c, mul(c, a.re, rat2), a.im), scl2), mul(c, sub(c, mul(c, a.im, rat2), a.re), scl2));
  /* a zero divisor: each part divided by +0 (a complex inf or nan) */
  P rz = pr(dv(c, a.re, abr), dv(c, a.im, abi));
  V first = cmp(c, LLVMRealOGE, abr, abi);
  V zero = and_(c, iszero(c, abr), iszero(c, abi));
  return psel(c, first, psel(c, zero, rz, r1), r2);
}

/* NumPy's complex reciprocal loop: the quotient rule of the larger part, with no zero-divisor case
 * (1 / 0 gives inf and nan parts from the divisions themselves, as NumPy's). */
static P crecip(Cx *c, P z) {
  V r1 = dv(c, z.im, z.re), d1 = add(c, z.re, mul(c, z.im, r1));
  V r2 = dv(c, z.re, z.im), d2 = add(c, mul(c, z.re, r2), z.im);
  P p1 = pr(dv(c, K(c, 1.0), d1), neg(c, dv(c, r1, d1)));
  P p2 = pr(dv(c, r2, d2), dv(c, K(c, -1.0), d2));
  return psel(c, cmp(c, LLVMRealOLE, fab(c, z.im), fab(c, z.re)), p1, p2);
}

/* NumPy's CGT/CGE/CLT/CLE: lexicographic; a NaN imaginary part makes the first clause false. */
static V ccmp(Cx *c, LoomOp op, P a, P b) {
  V nonan = and_(c, not_(c, isnan_(c, a.im)), not_(c, isnan_(c, b.im)));
  V req = cmp(c, LLVMRealOEQ, a.re, b.re);
  switch (op) {
  case LOOM_OP_EQ: return and_(c, req, cmp(c, LLVMRealOEQ, a.im, b.im));
  case LOOM_OP_NE: return or_(c, cmp(c, LLVMRealUNE, a.re, b.re), cmp(c, LLVMRealUNE, a.im, b.im));
  case LOOM_OP_GT: return or_(c, and_(c, cmp(c, LLVMRealOGT, a.re, b.re), nonan), and_(c, req, cmp(c, LLVMRealOGT, a.im, b.im)));
  case LOOM_OP_GE: return or_(c, and_(c, cmp(c, LLVMRealOGT, a.re, b.re), nonan), and_(c, req, cmp(c, LLVMRealOGE, a.im, b.im)));
  case LOOM_OP_LT: return or_(c, and_(c, cmp(c, LLVMRealOLT, a.re, b.re), nonan), and_(c, req, cmp(c, LLVMRealOLT, a.im, b.im)));
  default: /* LE */
    return or_(c, and_(c, cmp(c, LLVMRealOLT, a.re, b.re), nonan), and_(c, req, cmp(c, LLVMRealOLE, a.im, b.im)));
  }
}

static V cisnan(Cx *c, P a) { return or_(c, isnan_(c, a.re), isnan_(c, a.im)); }

/* maximum/minimum keep a unless b wins (NaN in a propagates); fmax/fmin keep a when b has a NaN. */
static P cminmax(Cx *c, LoomOp op, P a, P b) {
  bool max = op == LOOM_OP_MAXIMUM || op == LOOM_OP_FMAX;
  V keep = ccmp(c, max ? LOOM_OP_GE : LOOM_OP_LE, a, b);
  if (op == LOOM_OP_MAXIMUM || op == LOOM_OP_MINIMUM) keep = or_(c, cisnan(c, a), keep);
  else keep = or_(c, cisnan(c, b), keep);
  return psel(c, keep, a, b);
}

static V cabs_(Cx *c, P a) { return fn2(c, LOOM_OP_HYPOT, a.re, a.im); }

/* NumPy 2's sign: z / |z|; 0 for 0; NaN for NaN; +-1 (or +-i) on one infinite part; NaN for two. */
static P csgn(Cx *c, P a) {
  V h = cabs_(c, a);
  P r = pr(dv(c, a.re, h), dv(c, a.im, h));
  V one = K(c, 1.0), z = K(c, 0.0), nan = K(c, NAN);
  V rinf = isinf_(c, a.re), iinf = isinf_(c, a.im);
  P inf_r = pr(sel(c, cmp(c, LLVMRealOGT, a.re, z), one, K(c, -1.0)), z);
  P inf_i = pr(z, sel(c, cmp(c, LLVMRealOGT, a.im, z), one, K(c, -1.0)));
  P inf = psel(c, rinf, psel(c, iinf, pr(nan, nan), inf_r), inf_i);
  r = psel(c, isinf_(c, h), inf, r);
  r = psel(c, iszero(c, h), pr(z, z), r);
  return psel(c, isnan_(c, h), pr(nan, nan), r);
}

/* ---- exponentials and logarithms ---------------------------------------------------------------- */

/* exp(x + iy) (glibc's special values). */
static P cexp_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN);
  V e = fn(c, LOOM_OP_EXP, mul(c, x, K(c, 0.5))); /* exp(x) = e * e: no overflow below 2 * the limit */
  V cy = fn(c, LOOM_OP_COS, y), sy = fn(c, LOOM_OP_SIN, y);
  V y0 = iszero(c, y);
  P r = pr(mul(c, mul(c, e, cy), e), sel(c, y0, y, mul(c, mul(c, e, sy), e)));
  /* x finite, y not: NaN + iNaN */
  r = psel(c, isfin(c, y), r, pr(nan, nan));
  /* x = +-inf */
  V xneg = cmp(c, LLVMRealOLT, x, zero);
  V v = sel(c, xneg, zero, inf);
  P infy = psel(c, y0, pr(v, y), pr(csign(c, v, cy), csign(c, v, sy)));
  P infn = psel(c, xneg, pr(zero, csign(c, zero, y)), pr(inf, sub(c, y, y)));
  r = psel(c, isinf_(c, x), psel(c, isfin(c, y), infy, infn), r);
  /* x NaN: NaN + i0 for y = 0, else NaN + iNaN */
  return psel(c, isnan_(c, x), pr(nan, sel(c, y0, y, nan)), r);
}

/* log|x + iy|, accurate near |z| = 1 and without overflow or underflow in |z|. */
static V log_abs(Cx *c, V x, V y) {
  V ax = fab(c, x), ay = fab(c, y);
  V big = sel(c, cmp(c, LLVMRealOGT, ax, ay), ax, ay), small = sel(c, cmp(c, LLVMRealOGT, ax, ay), ay, ax);
  bool f64 = c->t == LOOM_FLOAT64;
  /* scale huge values down by 4 (exact) so that hypot cannot overflow */
  V huge = cmp(c, LLVMRealOGT, big, K(c, f64 ? 0x1p1020 : 0x1p124));
  V s = sel(c, huge, K(c, 0.25), K(c, 1.0));
  V h = fn2(c, LOOM_OP_HYPOT, mul(c, x, s), mul(c, y, s));
  V lg = sub(c, fn(c, LOOM_OP_LOG, h), sel(c, huge, K(c, -1.3862943611198906188), K(c, 0.0)));
  /* |z| near 1: log|z| = log1p((big - 1)(big + 1) + small^2) / 2 */
  V near1 = and_(c, cmp(c, LLVMRealOGE, h, K(c, 0.70710678118654752)), cmp(c, LLVMRealOLE, h, K(c, 1.4142135623730951)));
  V q = fmuladd(c, small, small, mul(c, sub(c, big, K(c, 1.0)), add(c, big, K(c, 1.0))));
  V l1 = mul(c, fn(c, LOOM_OP_LOG1P, q), K(c, 0.5));
  lg = sel(c, near1, l1, lg);
  /* hypot(inf, NaN) is inf */
  return sel(c, or_(c, isinf_(c, x), isinf_(c, y)), K(c, INFINITY), lg);
}

/* log(x + iy) (glibc): log 0 = -inf + i atan2(y, x); NaN part: +inf if the other is inf, else NaN. */
static P clog_(Cx *c, P z) {
  V re = log_abs(c, z.re, z.im), im = fn2(c, LOOM_OP_ATAN2, z.im, z.re);
  V anynan = or_(c, isnan_(c, z.re), isnan_(c, z.im));
  V anyinf = or_(c, isinf_(c, z.re), isinf_(c, z.im));
  P nanres = pr(sel(c, anyinf, K(c, INFINITY), K(c, NAN)), K(c, NAN));
  return psel(c, anynan, nanres, pr(re, im));
}

/* log1p(z) = log(1 + z): NumPy's (log hypot(x + 1, y), atan2(y, x + 1)), with log1p(2x + x^2 + y^2) / 2
 * for the real part when |z| < 1/2 (NumPy's form loses the digits of a small z there). */
static P clog1p_(Cx *c, P z) {
  V x1 = add(c, z.re, K(c, 1.0));
  V re = fn(c, LOOM_OP_LOG, fn2(c, LOOM_OP_HYPOT, x1, z.im));
  V q = fmuladd(c, z.im, z.im, mul(c, z.re, add(c, z.re, K(c, 2.0))));
  V small = cmp(c, LLVMRealOLT, fn2(c, LOOM_OP_HYPOT, z.re, z.im), K(c, 0.5));
  re = sel(c, small, mul(c, fn(c, LOOM_OP_LOG1P, q), K(c, 0.5)), re);
  return pr(re, fn2(c, LOOM_OP_ATAN2, z.im, x1));
}

/* sqrt(x + iy) (Annex G; Kahan's formula with exact power-of-two scaling at the extremes). */
static P csqrt_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN);
  bool f64 = c->t == LOOM_FLOAT64;
  V ax = fab(c, x), ay = fab(c, y);
  V mx = sel(c, cmp(c, LLVMRealOGT, ax, ay), ax, ay);
  V big = cmp(c, LLVMRealOGT, mx, K(c, f64 ? 0x1p1020 : 0x1p124));
  V tiny = cmp(c, LLVMRealOLT, mx, K(c, f64 ? 0x1p-1000 : 0x1p-120));
  V s = sel(c, big, K(c, 0.25), sel(c, tiny, K(c, f64 ? 0x1p100 : 0x1p50), K(c, 1.0)));
  V us = sel(c, big, K(c, 2.0), sel(c, tiny, K(c, f64 ? 0x1p-50 : 0x1p-25), K(c, 1.0)));
  V sx = mul(c, ax, s), sy = mul(c, ay, s);
  V t = sqrt_(c, mul(c, add(c, sx, fn2(c, LOOM_OP_HYPOT, sx, sy)), K(c, 0.5)));
  V u = dv(c, sy, add(c, t, t)); /* |y| / 2t: the other part */
  t = mul(c, t, us);
  u = mul(c, u, us);
  V xpos = cmp(c, LLVMRealOGE, x, zero);
  P r = psel(c, xpos, pr(t, csign(c, u, y)), pr(u, csign(c, t, y)));
  r = psel(c, and_(c, iszero(c, x), iszero(c, y)), pr(zero, y), r);
  /* non-finite parts, lowest priority first */
  r = psel(c, or_(c, isnan_(c, x), isnan_(c, y)), pr(nan, nan), r);
  V xinf = isinf_(c, x), ynan = isnan_(c, y);
  P xneginf = pr(sel(c, ynan, nan, zero), csign(c, inf, y));
  P xposinf = pr(inf, sel(c, ynan, nan, csign(c, zero, y)));
  r = psel(c, xinf, psel(c, cmp(c, LLVMRealOLT, x, zero), xneginf, xposinf), r);
  return psel(c, isinf_(c, y), pr(inf, y), r);
}

/* ---- hyperbolic and trigonometric functions ------------------------------------------------------- */

/* The large-|x| threshold past which cosh and sinh overflow (e^x / 2 stays finite up to twice it). */
static V sinh_limit(Cx *c) { return K(c, c->t == LOOM_FLOAT64 ? 709.0 : 88.0); }

/* cosh(|x|) and sinh(|x|) as e * e / 2 with e = exp(|x| / 2) (no overflow below twice the limit):
 * returns cosh(x) * m1 and sinh(x) * m2 computed without intermediate overflow. */
static void chsh_scaled(Cx *c, V x, V m1, V m2, V *ch, V *sh) {
  V ax = fab(c, x);
  V large = cmp(c, LLVMRealOGT, ax, sinh_limit(c));
  V e = fn(c, LOOM_OP_EXP, mul(c, ax, K(c, 0.5)));
  V ch_big = mul(c, mul(c, mul(c, e, K(c, 0.5)), m1), e);
  V sh_big = mul(c, mul(c, mul(c, e, K(c, 0.5)), m2), e);
  sh_big = sel(c, cmp(c, LLVMRealOLT, x, K(c, 0.0)), neg(c, sh_big), sh_big);
  *ch = sel(c, large, ch_big, mul(c, fn(c, LOOM_OP_COSH, x), m1));
  *sh = sel(c, large, sh_big, mul(c, fn(c, LOOM_OP_SINH, x), m2));
}

/* cosh(x + iy) (glibc). */
static P ccosh_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN), one = K(c, 1.0);
  V cy = fn(c, LOOM_OP_COS, y), sy = fn(c, LOOM_OP_SIN, y);
  V ch, sh;
  chsh_scaled(c, x, cy, sy, &ch, &sh);
  V y0 = iszero(c, y);
  P r = pr(ch, sel(c, y0, mul(c, csign(c, one, x), y), sh)); /* sinh(x) * 0 keeps its sign, never NaN */
  /* x finite, y inf or NaN: NaN + i(x == 0 ? 0 : NaN) */
  r = psel(c, isfin(c, y), r, pr(nan, sel(c, iszero(c, x), zero, nan)));
  /* x infinite */
  P xi_fin = pr(csign(c, inf, cy), mul(c, csign(c, inf, sy), csign(c, one, x)));
  P xi_zero = pr(inf, mul(c, y, csign(c, one, x)));
  P xi_other = pr(inf, sub(c, y, y));
  P xi = psel(c, y0, xi_zero, psel(c, isfin(c, y), xi_fin, xi_other));
  r = psel(c, isinf_(c, x), xi, r);
  return psel(c, isnan_(c, x), pr(nan, sel(c, y0, y, nan)), r);
}

/* sinh(x + iy) (glibc). */
static P csinh_(Cx *c, P z) {
  V x = z.re, y = z.im, inf = K(c, INFINITY), nan = K(c, NAN);
  V cy = fn(c, LOOM_OP_COS, y), sy = fn(c, LOOM_OP_SIN, y);
  V ch, sh;
  chsh_scaled(c, x, sy, cy, &ch, &sh);
  V y0 = iszero(c, y);
  P r = pr(sh, sel(c, y0, y, ch)); /* cosh(x) * 0 = 0 with the sign of y, never NaN */
  /* x finite, y inf or NaN */
  r = psel(c, isfin(c, y), r, psel(c, iszero(c, x), pr(x, sub(c, y, y)), pr(nan, nan)));
  /* x infinite */
  V xneg = cmp(c, LLVMRealOLT, x, K(c, 0.0));
  V re_fin = csign(c, inf, cy);
  P xi_fin = pr(sel(c, xneg, neg(c, re_fin), re_fin), csign(c, inf, sy));
  P xi_zero = pr(x, y);
  P xi_other = pr(inf, sub(c, y, y));
  P xi = psel(c, y0, xi_zero, psel(c, isfin(c, y), xi_fin, xi_other));
  r = psel(c, isinf_(c, x), xi, r);
  return psel(c, isnan_(c, x), pr(nan, sel(c, y0, y, nan)), r);
}

/* tanh(x + iy) (glibc). */
static P ctanh_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), one = K(c, 1.0), nan = K(c, NAN);
  V cy = fn(c, LOOM_OP_COS, y), sy = fn(c, LOOM_OP_SIN, y);
  V ax = fab(c, x);
  V large = cmp(c, LLVMRealOGT, ax, K(c, c->t == LOOM_FLOAT64 ? 354.0 : 44.0));
  V sh = fn(c, LOOM_OP_SINH, x), ch = fn(c, LOOM_OP_COSH, x);
  V den = fmuladd(c, sh, sh, mul(c, cy, cy));
  P r = pr(dv(c, mul(c, sh, ch), den), dv(c, mul(c, sy, cy), den));
  /* large |x|: +-1 + i 4 sin y cos y e^(-2|x|) */
  P rl = pr(csign(c, one, x), mul(c, mul(c, K(c, 4.0), mul(c, sy, cy)), fn(c, LOOM_OP_EXP, mul(c, ax, K(c, -2.0)))));
  r = psel(c, large, rl, r);
  /* special values */
  V bigy = and_(c, isfin(c, y), cmp(c, LLVMRealOGT, fab(c, y), one));
  P xinf = pr(csign(c, one, x), csign(c, zero, sel(c, bigy, mul(c, sy, cy), y)));
  P other = psel(c, iszero(c, y), pr(nan, y), pr(nan, nan));
  other = psel(c, iszero(c, x), pr(x, nan), other);
  V finite = and_(c, isfin(c, x), isfin(c, y));
  return psel(c, finite, r, psel(c, isinf_(c, x), xinf, other));
}

/* -i f(iz) for f = sinh, tanh: sin and tan (Annex G's definitions); cos(z) = cosh(iz). */
static P rot_in(Cx *c, P z) { return pr(neg(c, z.im), z.re); } /* iz */
static P rot_out(Cx *c, P w) { return pr(w.im, neg(c, w.re)); } /* -iw */

/* ---- inverse functions ------------------------------------------------------------------------------ */

/* 1 - z as (1 - x, -y): the imaginary zero flips its sign, as the branch cuts need. */
static P one_minus(Cx *c, P z) { return pr(sub(c, K(c, 1.0), z.re), neg(c, z.im)); }
static P conj_(Cx *c, P a) { return pr(a.re, neg(c, a.im)); }
/* The parts of a * b without a fused multiply-add (the products below need none). */
static V mul_re(Cx *c, P a, P b) { return sub(c, mul(c, a.re, b.re), mul(c, a.im, b.im)); }
static V mul_im(Cx *c, P a, P b) { return add(c, mul(c, a.re, b.im), mul(c, a.im, b.re)); }

/* asin of finite z (Kahan): (atan2(x, re(sqrt(1-z) sqrt(1+z))), asinh(im(conj(sqrt(1-z)) sqrt(1+z)))). */
static P casin_finite(Cx *c, P z) {
  P s1m = csqrt_(c, one_minus(c, z)), s1p = csqrt_(c, pr(add(c, K(c, 1.0), z.re), z.im));
  V re = fn2(c, LOOM_OP_ATAN2, z.re, mul_re(c, s1m, s1p));
  V im = fn(c, LOOM_OP_ASINH, mul_im(c, conj_(c, s1m), s1p));
  return pr(re, im);
}

/* asinh(x + iy): finite from -i asin(iz); special values (Annex G) on |x|, |y|, then the signs. */
static P casinh_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN);
  P w = rot_out(c, casin_finite(c, rot_in(c, z)));
  V a = fab(c, x), b = fab(c, y);
  P s = pr(nan, nan); /* first quadrant special values */
  V ainf = isinf_(c, a), binf = isinf_(c, b), anan = isnan_(c, a), bnan = isnan_(c, b);
  s = psel(c, and_(c, anan, iszero(c, b)), pr(nan, zero), s);
  s = psel(c, binf, pr(inf, sel(c, anan, nan, pi_x(c, 0.5))), s);
  s = psel(c, ainf, pr(inf, sel(c, bnan, nan, sel(c, binf, pi_x(c, 0.25), zero))), s);
  s = pr(csign(c, s.re, x), csign(c, s.im, y));
  V finite = and_(c, isfin(c, x), isfin(c, y));
  return psel(c, finite, w, s);
}

static P casin_(Cx *c, P z) { return rot_out(c, casinh_(c, rot_in(c, z))); }

/* asin's results for a z with a NaN part, as glibc's casin gives them, decided on z itself (not on
 * -i asinh(iz), which carries the sign of a NaN through -x and, for complex64, through float64: a GPU
 * need not keep a NaN's sign in either): x == 0 gives z; an infinite part NaN + i copysign(inf, y);
 * else NaN + iNaN. w: the finite and infinite results; z in the operands' own precision. */
static P casin_nan_cases(Cx *c, P z, P w) {
  V x = z.re, y = z.im, nan = K(c, NAN);
  P s = psel(c, or_(c, isinf_(c, x), isinf_(c, y)), pr(nan, csign(c, K(c, INFINITY), y)), pr(nan, nan));
  s = psel(c, iszero(c, x), z, s);
  return psel(c, or_(c, isnan_(c, x), isnan_(c, y)), s, w);
}

/* acos(x + iy): Kahan for finite z, Annex G's table (in terms of |y|, the sign of im opposite y). */
static P cacos_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN);
  P s1m = csqrt_(c, one_minus(c, z)), s1p = csqrt_(c, pr(add(c, K(c, 1.0), x), y));
  P w = pr(mul(c, K(c, 2.0), fn2(c, LOOM_OP_ATAN2, s1m.re, s1p.re)), fn(c, LOOM_OP_ASINH, mul_im(c, conj_(c, s1p), s1m)));
  V xinf = isinf_(c, x), yinf = isinf_(c, y), xnan = isnan_(c, x), ynan = isnan_(c, y);
  V xneg = cmp(c, LLVMRealOLT, x, zero);
  P s = pr(nan, nan); /* re, |im| (im <= 0 for y >= 0) */
  s = psel(c, and_(c, iszero(c, x), ynan), pr(pi_x(c, 0.5), nan), s);
  s = psel(c, and_(c, isfin(c, x), yinf), pr(pi_x(c, 0.5), inf), s);
  s = psel(c, and_(c, xnan, yinf), pr(nan, inf), s);
  P xi = psel(c, ynan, pr(nan, inf), psel(c, yinf, pr(sel(c, xneg, pi_x(c, 0.75), pi_x(c, 0.25)), inf),
                                            pr(sel(c, xneg, pi_x(c, 1.0), zero), inf)));
  s = psel(c, xinf, xi, s);
  /* the imaginary part is -copysign(|im|, y) (a NaN y: glibc's -inf) */
  V imneg = csign(c, s.im, y);
  s.im = sel(c, ynan, neg(c, s.im), neg(c, imneg));
  s.im = sel(c, isnan_(c, s.im), nan, s.im);
  V finite = and_(c, isfin(c, x), isfin(c, y));
  return psel(c, finite, w, s);
}

/* acosh(x + iy): Kahan for finite z, Annex G's table (sign of im = sign of y). */
static P cacosh_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), inf = K(c, INFINITY), nan = K(c, NAN);
  P sm1 = csqrt_(c, pr(sub(c, x, K(c, 1.0)), y)), sp1 = csqrt_(c, pr(add(c, x, K(c, 1.0)), y));
  P w = pr(fn(c, LOOM_OP_ASINH, mul_re(c, conj_(c, sm1), sp1)), mul(c, K(c, 2.0), fn2(c, LOOM_OP_ATAN2, sm1.im, sp1.re)));
  V xinf = isinf_(c, x), yinf = isinf_(c, y), ynan = isnan_(c, y);
  V xneg = cmp(c, LLVMRealOLT, x, zero);
  P s = pr(nan, nan); /* re, |im| */
  s = psel(c, and_(c, iszero(c, x), ynan), pr(nan, pi_x(c, 0.5)), s); /* glibc's choice */
  s = psel(c, yinf, pr(inf, sel(c, isnan_(c, x), nan, pi_x(c, 0.5))), s);
  P xi = psel(c, ynan, pr(inf, nan), psel(c, yinf, pr(inf, sel(c, xneg, pi_x(c, 0.75), pi_x(c, 0.25))),
                                            pr(inf, sel(c, xneg, pi_x(c, 1.0), zero))));
  s = psel(c, xinf, xi, s);
  s.im = sel(c, ynan, s.im, csign(c, s.im, y));
  s.im = sel(c, isnan_(c, s.im), nan, s.im);
  V finite = and_(c, isfin(c, x), isfin(c, y));
  return psel(c, finite, w, s);
}

/* atanh(x + iy) on a = |x|, b = |y|, then the signs of x and y (atanh is odd and conj-symmetric). */
static P catanh_(Cx *c, P z) {
  V x = z.re, y = z.im, zero = K(c, 0.0), one = K(c, 1.0), nan = K(c, NAN);
  V a = fab(c, x), b = fab(c, y);
  V oma = sub(c, one, a);
  V den = fmuladd(c, oma, oma, mul(c, b, b));
  V re = mul(c, fn(c, LOOM_OP_LOG1P, dv(c, mul(c, K(c, 4.0), a), den)), K(c, 0.25));
  /* near +-1 (den tiny or underflowing): log(4a) / 4 - log(hypot(1 - a, b)) / 2 */
  V near = cmp(c, LLVMRealOLT, den, K(c, 1e-100));
  V re_near = sub(c, mul(c, fn(c, LOOM_OP_LOG, mul(c, K(c, 4.0), a)), K(c, 0.25)),
                  mul(c, fn(c, LOOM_OP_LOG, fn2(c, LOOM_OP_HYPOT, oma, b)), K(c, 0.5)));
  re = sel(c, near, re_near, re);
  V im = mul(c, fn2(c, LOOM_OP_ATAN2, add(c, b, b), sub(c, mul(c, oma, add(c, one, a)), mul(c, b, b))), K(c, 0.5));
  /* |z| large: re = a / |z|^2 (scaled), im = pi/2 */
  V h = fn2(c, LOOM_OP_HYPOT, a, b);
  V large = cmp(c, LLVMRealOGT, h, K(c, c->t == LOOM_FLOAT64 ? 0x1p500 : 0x1p60));
  re = sel(c, large, dv(c, dv(c, a, h), h), re);
  im = sel(c, large, pi_x(c, 0.5), im);
  P w = pr(re, im);
  /* special values (first quadrant) */
  V ainf = isinf_(c, a), binf = isinf_(c, b), anan = isnan_(c, a), bnan = isnan_(c, b);
  P s = pr(nan, nan);
  s = psel(c, and_(c, iszero(c, a), bnan), pr(zero, nan), s);
  s = psel(c, binf, pr(zero, pi_x(c, 0.5)), s);
  s = psel(c, ainf, pr(zero, sel(c, bnan, nan, pi_x(c, 0.5))), s);
  (void)anan;
  V finite = and_(c, isfin(c, a), isfin(c, b));
  w = psel(c, finite, w, s);
  return pr(csign(c, w.re, x), csign(c, w.im, y));
}

static P catan_(Cx *c, P z) { return rot_out(c, catanh_(c, rot_in(c, z))); }

/* ---- power (NumPy's npy_cpow) ----------------------------------------------------------------------- */

/* a * b as C99 Annex G's multiplication (GCC's __muldc3, which glibc's cpow uses for y log x): the
 * plain product, except that a NaN + iNaN result with an infinite operand or an overflowing product
 * is recomputed with the infinities boxed to +-1 and the NaNs to +-0, then scaled by inf. */
static P cmul_annexg(Cx *c, P x, P y) {
  V a = x.re, b = x.im, cc = y.re, d = y.im, zero = K(c, 0.0), one = K(c, 1.0), inf = K(c, INFINITY);
  V ac = mul(c, a, cc), bd = mul(c, b, d), ad = mul(c, a, d), bc = mul(c, b, cc);
  P r = pr(sub(c, ac, bd), add(c, ad, bc));
  V both_nan = and_(c, isnan_(c, r.re), isnan_(c, r.im));
  /* an infinite first operand */
  V inf1 = or_(c, isinf_(c, a), isinf_(c, b));
  V a1 = sel(c, inf1, csign(c, sel(c, isinf_(c, a), one, zero), a), a);
  V b1 = sel(c, inf1, csign(c, sel(c, isinf_(c, b), one, zero), b), b);
  V c1 = sel(c, and_(c, inf1, isnan_(c, cc)), csign(c, zero, cc), cc);
  V d1 = sel(c, and_(c, inf1, isnan_(c, d)), csign(c, zero, d), d);
  /* an infinite second operand */
  V inf2 = or_(c, isinf_(c, c1), isinf_(c, d1));
  V c2 = sel(c, inf2, csign(c, sel(c, isinf_(c, c1), one, zero), c1), c1);
  V d2 = sel(c, inf2, csign(c, sel(c, isinf_(c, d1), one, zero), d1), d1);
  V a2 = sel(c, and_(c, inf2, isnan_(c, a1)), csign(c, zero, a1), a1);
  V b2 = sel(c, and_(c, inf2, isnan_(c, b1)), csign(c, zero, b1), b1);
  /* an overflowing product (no infinite operand) */
  V ovf = and_(c, not_(c, or_(c, inf1, inf2)),
               or_(c, or_(c, isinf_(c, ac), isinf_(c, bd)), or_(c, isinf_(c, ad), isinf_(c, bc))));
  V a3 = sel(c, and_(c, ovf, isnan_(c, a2)), csign(c, zero, a2), a2);
  V b3 = sel(c, and_(c, ovf, isnan_(c, b2)), csign(c, zero, b2), b2);
  V c3 = sel(c, and_(c, ovf, isnan_(c, c2)), csign(c, zero, c2), c2);
  V d3 = sel(c, and_(c, ovf, isnan_(c, d2)), csign(c, zero, d2), d2);
  P rr = pr(mul(c, inf, sub(c, mul(c, a3, c3), mul(c, b3, d3))), mul(c, inf, add(c, mul(c, a3, d3), mul(c, b3, c3))));
  V recalc = and_(c, both_nan, or_(c, or_(c, inf1, inf2), ovf));
  return psel(c, recalc, rr, r);
}

static P cpow_(Cx *c, P a, P b, Cx *w) {
  V zero = K(c, 0.0), one = K(c, 1.0), nan = K(c, NAN);
  /* the general case, exp(b log a), computed in w's precision */
  P aw = a, bw = b;
  if (w->t != c->t) {
    aw = pr(LLVMBuildFPExt(B, a.re, w->ty, ""), LLVMBuildFPExt(B, a.im, w->ty, ""));
    bw = pr(LLVMBuildFPExt(B, b.re, w->ty, ""), LLVMBuildFPExt(B, b.im, w->ty, ""));
  }
  P la = clog_(w, aw);
  P g = cexp_(w, cmul_annexg(w, bw, la));
  if (w->t != c->t) g = pr(LLVMBuildFPTrunc(B, g.re, c->ty, ""), LLVMBuildFPTrunc(B, g.im, c->ty, ""));
  /* an integer exponent |n| < 100 with bi == 0: repeated multiplication (1 / that for n < 0) */
  V n = b.re;
  V isint = and_(c, and_(c, iszero(c, b.im), cmp(c, LLVMRealOEQ, fn(c, LOOM_OP_TRUNC, n), n)),
                 cmp(c, LLVMRealOLT, fab(c, n), K(c, 100.0)));
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c->m->c);
  V ni = LLVMBuildFPToSI(B, sel(c, isint, fab(c, n), zero), i32, "");
  P aa = pr(one, zero), p = a;
  for (int bit = 0; bit < 7; bit++) {
    V set = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, ni, LLVMConstInt(i32, 1u << bit, 0), ""), LLVMConstInt(i32, 0, 0), "");
    aa = psel(c, set, cmul_plain(c, aa, p), aa);
    if (bit < 6) p = cmul_plain(c, p, p);
  }
  aa = psel(c, cmp(c, LLVMRealOLT, n, zero), cdiv(c, pr(one, zero), aa), aa);
  P a2 = cmul_plain(c, a, a);
  aa = psel(c, cmp(c, LLVMRealOEQ, n, K(c, 3.0)), cmul_plain(c, a, a2), aa);
  aa = psel(c, cmp(c, LLVMRealOEQ, n, K(c, 2.0)), a2, aa);
  aa = psel(c, cmp(c, LLVMRealOEQ, n, one), a, aa);
  P r = psel(c, isint, aa, g);
  /* a == 0: 0 for br > 0, else NaN + iNaN; b == 0: 1 */
  V a0 = and_(c, iszero(c, a.re), iszero(c, a.im));
  r = psel(c, a0, psel(c, cmp(c, LLVMRealOGT, b.re, zero), pr(zero, zero), pr(nan, nan)), r);
  return psel(c, and_(c, iszero(c, b.re), iszero(c, b.im)), pr(one, zero), r);
}

/* ---- dispatch ------------------------------------------------------------------------------------------- */

static P unpack(CgMath *m, V v) { return pr(cg_cx_re(m, v), cg_cx_im(m, v)); }

/* A unary function computed in w's precision (float64 for complex64), rounded to c's. */
static P widen_call(Cx *c, Cx *w, P (*f)(Cx *, P), P z) {
  if (w->t == c->t) return f(c, z);
  P r = f(w, pr(LLVMBuildFPExt(B, z.re, w->ty, ""), LLVMBuildFPExt(B, z.im, w->ty, "")));
  return pr(LLVMBuildFPTrunc(B, r.re, c->ty, ""), LLVMBuildFPTrunc(B, r.im, c->ty, ""));
}

/* z ln 2 in the operands' own precision (NumPy's nc_exp2: for complex64 the product is rounded to
 * float32 before exp, which matters for large imaginary parts). */
static P scale_ln2(Cx *c, P z) {
  V ln2 = K(c, 0.693147180559945309417232121458176568);
  return pr(mul(c, z.re, ln2), mul(c, z.im, ln2));
}
static P cexpm1_(Cx *c, P z) {
  V s = fn(c, LOOM_OP_SIN, mul(c, z.im, K(c, 0.5)));
  V re = sub(c, mul(c, fn(c, LOOM_OP_EXPM1, z.re), fn(c, LOOM_OP_COS, z.im)), mul(c, K(c, 2.0), mul(c, s, s)));
  return pr(re, mul(c, fn(c, LOOM_OP_EXP, z.re), fn(c, LOOM_OP_SIN, z.im)));
}
static P clog_k(Cx *c, P z, double k) {
  P l = clog_(c, z);
  return pr(mul(c, l.re, K(c, k)), mul(c, l.im, K(c, k)));
}
static P clog2_(Cx *c, P z) { return clog_k(c, z, 1.442695040888963407359924681001892137); }
static P clog10_(Cx *c, P z) { return clog_k(c, z, 0.434294481903251827651128918916605082); }
static P csin_(Cx *c, P z) {
  P r = rot_out(c, csinh_(c, rot_in(c, z)));
  /* glibc's csin (the sign Annex G leaves open): x infinite or NaN and y infinite -> NaN + i inf */
  V pick = and_(c, not_(c, isfin(c, z.re)), isinf_(c, z.im));
  return psel(c, pick, pr(K(c, NAN), K(c, INFINITY)), r);
}
static P ccos_(Cx *c, P z) { return ccosh_(c, rot_in(c, z)); }
static P ctan_(Cx *c, P z) { return rot_out(c, ctanh_(c, rot_in(c, z))); }
static P crsqrt_(Cx *c, P z) { return cdiv(c, pr(K(c, 1.0), K(c, 0.0)), csqrt_(c, z)); }

LLVMValueRef cg_complex_elem(CgMath *m, LoomOp op, LoomDType t, const LLVMValueRef *args) {
  if (op == LOOM_OP_WHERE) return LLVMBuildSelect(m->b, args[0], args[1], args[2], "");
  LoomDType pt = dtype_real_of(t);
  Cx cc = cx_of(m, pt), wc = cx_of(m, LOOM_FLOAT64), *c = &cc;
  P a = unpack(m, args[0]), b = a;
  if (op_info(op) && op_info(op)->arity == 2) b = unpack(m, args[1]);
  P (*f)(Cx *, P) = NULL;
  switch (op) {
  case LOOM_OP_NEG: return cg_cx_make(m, t, neg(c, a.re), neg(c, a.im));
  case LOOM_OP_CONJ: return cg_cx_make(m, t, a.re, neg(c, a.im));
  case LOOM_OP_REAL: return a.re;
  case LOOM_OP_IMAG: return a.im;
  case LOOM_OP_ABS: return cabs_(c, a);
  case LOOM_OP_ISNAN: return cisnan(c, a);
  case LOOM_OP_ISINF: return or_(c, isinf_(c, a.re), isinf_(c, a.im));
  case LOOM_OP_ISFINITE: return and_(c, isfin(c, a.re), isfin(c, a.im));
  case LOOM_OP_ADD: return cg_cx_make(m, t, add(c, a.re, b.re), add(c, a.im, b.im));
  case LOOM_OP_SUB: return cg_cx_make(m, t, sub(c, a.re, b.re), sub(c, a.im, b.im));
  case LOOM_OP_MUL: {
    P r = cmul(c, a, b);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_TRUEDIV: {
    P r = cdiv(c, a, b);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_RECIPROCAL: {
    P r = crecip(c, a);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_POW: {
    P r = cpow_(c, a, b, &wc);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_EQ: case LOOM_OP_NE: case LOOM_OP_LT: case LOOM_OP_LE: case LOOM_OP_GT: case LOOM_OP_GE:
    return ccmp(c, op, a, b);
  case LOOM_OP_MAXIMUM: case LOOM_OP_MINIMUM: case LOOM_OP_FMAX: case LOOM_OP_FMIN: {
    P r = cminmax(c, op, a, b);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_SIGN: {
    P r = csgn(c, a);
    return cg_cx_make(m, t, r.re, r.im);
  }
  case LOOM_OP_RINT:
    return cg_cx_make(m, t, intr1(c, "llvm.roundeven", a.re), intr1(c, "llvm.roundeven", a.im));
  case LOOM_OP_EXP: f = cexp_; break;
  case LOOM_OP_EXP2: f = cexp_, a = scale_ln2(c, a); break;
  case LOOM_OP_EXPM1: f = cexpm1_; break;
  case LOOM_OP_LOG: f = clog_; break;
  case LOOM_OP_LOG2: f = clog2_; break;
  case LOOM_OP_LOG10: f = clog10_; break;
  case LOOM_OP_LOG1P: f = clog1p_; break;
  case LOOM_OP_SQRT: f = csqrt_; break;
  case LOOM_OP_RSQRT: f = crsqrt_; break;
  case LOOM_OP_SIN: f = csin_; break;
  case LOOM_OP_COS: f = ccos_; break;
  case LOOM_OP_TAN: f = ctan_; break;
  case LOOM_OP_SINH: f = csinh_; break;
  case LOOM_OP_COSH: f = ccosh_; break;
  case LOOM_OP_TANH: f = ctanh_; break;
  case LOOM_OP_ASIN: f = casin_; break;
  case LOOM_OP_ACOS: f = cacos_; break;
  case LOOM_OP_ATAN: f = catan_; break;
  case LOOM_OP_ASINH: f = casinh_; break;
  case LOOM_OP_ACOSH: f = cacosh_; break;
  case LOOM_OP_ATANH: f = catanh_; break;
  default: break;
  }
  if (f) {
    P r = widen_call(c, &wc, f, a);
    if (op == LOOM_OP_ASIN) r = casin_nan_cases(c, a, r);
    return cg_cx_make(m, t, r.re, r.im);
  }
  diag_error(m->d, LOOM_ERR_DTYPE, "codegen: %s is not defined for dtype %s", loom_op_name(op) ? loom_op_name(op) : "?",
             loom_dtype_name(t));
  return LLVMGetUndef(cg_reg_type(m, t));
}

/* ---- reductions ---------------------------------------------------------------------------------------------- */

LLVMValueRef cg_complex_identity(CgMath *m, LoomReduceOp op, LoomDType t) {
  LoomDType pt = dtype_real_of(t);
  double re = 0.0, im = 0.0;
  switch (op) {
  case LOOM_REDUCE_SUM: case LOOM_REDUCE_MEAN: break;
  case LOOM_REDUCE_PROD: re = 1.0; break;
  case LOOM_REDUCE_MIN: case LOOM_REDUCE_ARGMIN: re = im = INFINITY; break;
  case LOOM_REDUCE_MAX: case LOOM_REDUCE_ARGMAX: re = im = -INFINITY; break;
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: reduce op %d has no complex identity", (int)op);
    break;
  }
  LLVMValueRef f[2] = {cg_fconst(m, pt, re), cg_fconst(m, pt, im)};
  return LLVMConstStructInContext(m->c, f, 2, 0);
}

LLVMValueRef cg_complex_combine(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef acc, LLVMValueRef v) {
  Cx cc = cx_of(m, dtype_real_of(t)), *c = &cc;
  P a = unpack(m, acc), b = unpack(m, v), r;
  switch (op) {
  case LOOM_REDUCE_SUM: case LOOM_REDUCE_MEAN: {
    V re = add(c, a.re, b.re), im = add(c, a.im, b.im);
    LLVMSetFastMathFlags(re, LLVMFastMathAllowReassoc);
    LLVMSetFastMathFlags(im, LLVMFastMathAllowReassoc);
    r = pr(re, im);
    break;
  }
  case LOOM_REDUCE_PROD: r = cmul(c, a, b); break;
  case LOOM_REDUCE_MIN: r = cminmax(c, LOOM_OP_MINIMUM, a, b); break;
  case LOOM_REDUCE_MAX: r = cminmax(c, LOOM_OP_MAXIMUM, a, b); break;
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: reduce op %d has no complex combiner", (int)op);
    return acc;
  }
  return cg_cx_make(m, t, r.re, r.im);
}

LLVMValueRef cg_complex_arg_better(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef cur, LLVMValueRef v) {
  Cx cc = cx_of(m, dtype_real_of(t)), *c = &cc;
  P a = unpack(m, cur), b = unpack(m, v);
  V strict = ccmp(c, op == LOOM_REDUCE_ARGMAX ? LOOM_OP_GT : LOOM_OP_LT, b, a);
  return and_(c, or_(c, strict, cisnan(c, b)), not_(c, cisnan(c, a)));
}

/* Clears fast-math flags of v, or of the parts a complex value was built from (ordered folds). */
void cg_clear_fmf(LLVMValueRef v) {
  for (int depth = 0; v && depth < 2 && LLVMIsAInsertValueInst(v); depth++) {
    LLVMValueRef part = LLVMGetOperand(v, 1);
    if (LLVMIsAInstruction(part) && LLVMCanValueUseFastMathFlags(part)) LLVMSetFastMathFlags(part, 0);
    v = LLVMGetOperand(v, 0);
  }
  if (v && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v)) LLVMSetFastMathFlags(v, 0);
}
