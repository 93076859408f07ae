/* SPDX-License-Identifier: Apache-2.0 */
/* math_tanh.c: Loom's own float32 tanh for the host (cg_host_tanh_f32), as straight-line scalar code that
 * the loop vectorizer widens, in place of a call of SLEEF's tanhf_u35 (GELU's tanh form, Mish). The
 * method is the one XLA and Eigen describe: one odd rational minimax approximation, no exp, no branch,
 * one division:
 *
 *   tanh(x) = x P(s) / Q(s),  s = x^2,  |x| <= 9;   sign(x)  above (float32 tanh is 1 from ~9.01 up).
 *
 * P and Q are fitted here (no other project's coefficients): P(0) = Q(0) = 1, so tiny and subnormal x
 * give x P / Q = x * 1 / 1 = x exactly, and -0 gives -0; no small-|x| select is needed. The |x| > 9 select
 * also catches +-inf (x P / Q would be inf / inf) and the overflow of s; NaN fails the compare and
 * propagates through the arithmetic.
 *
 * Evaluated in float32 (s, Horner with fma, the division), P of degree 5 and Q of degree 4 (fit error
 * 1.4e-9 relative) were up to 5 ulp off near |x| = 3..6, where tanh is within a few ulp of 1 and the
 * ~9 rounded Horner steps' relative errors (each up to 2^-24) add up in ulps of a value just below 1:
 * the form's evaluation error, not the fit's; more degrees do not help (variant 2 below, kept for A/B).
 * So P and Q are evaluated in float64 (x widened; s exact; one float64 division; one rounding to
 * float32): P and Q of degree 4 each (fit error 2.2e-8 relative, ~0.36 ulp) give results within 1 ulp
 * of the correctly rounded tanh (tests/python/test_tanh_f32.py). On AVX-512 that is 8 lanes a vector in
 * place of 16, still cheaper than SLEEF's tanhf (an expm1 with its range reduction, a division,
 * selects, and a call's spills).
 *
 * The fit (reproducible with NumPy alone): the relative error of x P(s) / Q(s) against math.tanh on
 * ~3000 points of [0, 9] (sine-spaced and uniform), in u = s / 81; Loeb's iteration (P - f Q = f - 1
 * linearized, weighted by 1 / (f Q_prev), P(0) = Q(0) = 1 held fixed) with Lawson's reweighting (w <- w
 * |r|, 40 steps) for the minimax in each; 12 outer steps; coefficients then scaled back to s. Variant 2's
 * coefficients are the (5, 4) fit's rounded to float32. */
#include "cg_llvm.h"

/* c[0] + c[1] v + ... + c[n-1] v^(n-1) in dtype t, Horner's rule with fma */
static LLVMValueRef horner(CgMath *m, LoomDType t, LLVMValueRef v, const double *c, int n) {
  LLVMValueRef r = cg_fconst(m, t, c[n - 1]);
  for (int i = n - 2; i >= 0; i--) r = cg_fmuladd(m, r, v, cg_fconst(m, t, c[i]));
  return r;
}

LLVMValueRef cg_host_tanh_f32(CgMath *m, LLVMValueRef x, int variant) {
  /* degree 4 / 4 in s, float64 (variant 1) */
  static const double p44[5] = {0x1p+0, 0x1.121b2d8631830p-3, 0x1.caa33523ef752p-9, 0x1.5aaca436c9914p-16,
                                0x1.cd335d3e3a19ap-27};
  static const double q44[5] = {0x1p+0, 0x1.de62e42c7b441p-2, 0x1.a8317a2fa5b9cp-6, 0x1.591cdf1260b20p-12,
                                0x1.a313e690fe3fbp-21};
  /* degree 5 / 4 in s, float32 (variant 2) */
  static const double p54[6] = {0x1p+0, 0x1.183808p-3, 0x1.fb76p-9, 0x1.d6fa0ap-16, 0x1.08036ap-25, -0x1.b119p-37};
  static const double q54[5] = {0x1p+0, 0x1.e17158p-2, 0x1.be982p-6, 0x1.9d9936p-12, 0x1.5ac57cp-20};
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef r;
  if (variant == 2) {
    LLVMValueRef s = LLVMBuildFMul(b, x, x, "");
    LLVMValueRef num = LLVMBuildFMul(b, x, horner(m, LOOM_FLOAT32, s, p54, 6), "");
    r = LLVMBuildFDiv(b, num, horner(m, LOOM_FLOAT32, s, q54, 5), "");
  } else {
    LLVMValueRef xd = LLVMBuildFPExt(b, x, LLVMDoubleTypeInContext(m->c), "");
    LLVMValueRef s = LLVMBuildFMul(b, xd, xd, "");
    LLVMValueRef num = LLVMBuildFMul(b, xd, horner(m, LOOM_FLOAT64, s, p44, 5), "");
    r = LLVMBuildFPTrunc(b, LLVMBuildFDiv(b, num, horner(m, LOOM_FLOAT64, s, q44, 5), ""), t, "");
  }
  LLVMValueRef ax = cg_intrinsic(m, "llvm.fabs", &t, 1, &x, 1);
  LLVMValueRef cs[2] = {cg_fconst(m, LOOM_FLOAT32, 1.0), x};
  LLVMValueRef one = cg_intrinsic(m, "llvm.copysign", &t, 1, cs, 2);
  LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, ax, cg_fconst(m, LOOM_FLOAT32, 9.0), ""); /* NaN: r */
  return LLVMBuildSelect(b, big, one, r, "");
}
