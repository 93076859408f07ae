/* SPDX-License-Identifier: Apache-2.0 */
/* math_erf.c: Loom's own float32 erf for the host (cg_host_erf_f32), as straight-line scalar code
 * (fma, selects, an inline exp) that the loop vectorizer widens to the host's full vector width. SLEEF's
 * vector erff has only a 1-ulp variant, ~9x the cost of its expf (GELU, erf form: 7.9 ms where torch
 * took 2.2 on a 2-core EPYC, 4.2M float32); this one costs ~3 expf (2.2x faster per point, 5.3 -> 2.8 ms
 * GELU, at copy bandwidth). float64 keeps SLEEF; GPUs keep their device libraries (math.c).
 * (A tanh built the same way, x + x^3 R(x^2) below 0.625 and 1 - 2 / (exp(2|x|) + 1) above, was
 * within 1 ulp where SLEEF's tanhf_u35 is within 3, but no faster: an exp, a division and both
 * branches cost what SLEEF's call does; not used. The host's tanh is now math_tanh.c's rational form.)
 *
 * erf(x), a = |x|:
 *   a < 1:       erf(x) = x + x * P(x^2), P of degree 6 (P(0) = 2/sqrt(pi) - 1; the leading 1 is kept
 *                exact, so the coefficients' float32 rounding costs < 0.06 ulp);
 *   1 <= a:      erf(x) = sign(x) (1 - exp(-a^2 + Q(u))), u = (min(a, 4) - 2.5) / 1.5, Q of degree 8
 *                fitting log(erfc(a)) + a^2 on [1, 4] within 2.7e-8 (-a*a + Q in one fma); above
 *                ~3.92 float32's erf is 1 and so is 1 - exp(...) at a = 4.
 * Within 1 ulp of the correctly rounded function on every float32 checked (tests/python/
 * test_erf_f32.py sweeps all float32 of [-8, 8] with a stride and the specials); NaN takes the
 * first branch (an unordered compare), so it propagates; erf(-0) = -0. The polynomials'
 * coefficients were fitted here by Lawson's iteratively reweighted least squares (minimax) in float64
 * against math.erf / math.erfc, then rounded to float32. */
#include "cg_llvm.h"

static LLVMValueRef fc(CgMath *m, double v) { return cg_fconst(m, LOOM_FLOAT32, v); }

/* a * b + c, fused where the target has fma (llvm.fma would be a libm call on one without): the error
 * bounds above hold either way */
/* c[0] + c[1] v + ... + c[n-1] v^(n-1), Horner's rule with fma */
static LLVMValueRef horner(CgMath *m, LLVMValueRef v, const double *c, int n) {
  LLVMValueRef r = fc(m, c[n - 1]);
  for (int i = n - 2; i >= 0; i--) r = cg_fmuladd(m, r, v, fc(m, c[i]));
  return r;
}

static LLVMValueRef fabs1(CgMath *m, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return cg_intrinsic(m, "llvm.fabs", &t, 1, &x, 1);
}

static LLVMValueRef copysign2(CgMath *m, LLVMValueRef mag, LLVMValueRef sgn) {
  LLVMTypeRef t = LLVMTypeOf(mag);
  LLVMValueRef args[2] = {mag, sgn};
  return cg_intrinsic(m, "llvm.copysign", &t, 1, args, 2);
}

/* exp(x) for x in [-87, 88] (no overflow, underflow or NaN handling: erf's argument is in [-18, -1.8]),
 * inline: n = rint(x / ln 2), r = x - n ln 2 (two-part ln 2, |r| <= ln 2 / 2), a degree-6 polynomial for
 * e^r (fitted as above: 0.32 ulp of float32 from its coefficients), scaled by 2^n through the exponent
 * bits. ~12 vector instructions where the library call of SLEEF's expf (range checks, the call's
 * register spills) cost about twice that. */
static LLVMValueRef exp_bounded(CgMath *m, LLVMValueRef x) {
  static const double e[7] = {0x1p+0, 0x1p+0, 0x1.fffffap-2, 0x1.5553fep-3, 0x1.5558bcp-5, 0x1.127406p-7, 0x1.6ab26ep-10};
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x), i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef q = LLVMBuildFMul(b, x, fc(m, 0x1.715476p+0), "");
  LLVMValueRef n = cg_intrinsic(m, "llvm.rint", &t, 1, &q, 1);
  LLVMValueRef r = cg_fmuladd(m, n, fc(m, -0x1.62e4p-1), x);
  r = cg_fmuladd(m, n, fc(m, -0x1.7f7d1cp-20), r);
  LLVMValueRef p = horner(m, r, e, 7);
  LLVMValueRef bits = LLVMBuildShl(b, LLVMBuildAdd(b, LLVMBuildFPToSI(b, n, i32, ""), LLVMConstInt(i32, 127, 0), ""),
                                   LLVMConstInt(i32, 23, 0), "");
  return LLVMBuildFMul(b, p, LLVMBuildBitCast(b, bits, t, ""), "");
}

LLVMValueRef cg_host_erf_f32(CgMath *m, LLVMValueRef x) {
  static const double p[7] = {0x1.06eba8p-3,  -0x1.81273ep-2, 0x1.ce2cf8p-4, -0x1.b7f90cp-6,
                              0x1.5405a8p-8,  -0x1.a3f6bap-11, 0x1.496968p-14};
  static const double q[9] = {-0x1.8e8b72p+0, -0x1.0edbd8p-1, 0x1.0289cap-3, -0x1.2c3728p-5, 0x1.67293ap-7,
                              -0x1.a235c6p-9, 0x1.ce8f06p-11, -0x1.dc9fe8p-13, 0x1.57f17ap-15};
  LLVMBuilderRef b = m->b;
  LLVMValueRef a = fabs1(m, x);
  LLVMValueRef s = LLVMBuildFMul(b, x, x, "");
  LLVMValueRef small = cg_fmuladd(m, x, horner(m, s, p, 7), x);
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef mm[2] = {a, fc(m, 4.0)};
  LLVMValueRef ac = cg_intrinsic(m, "llvm.minnum", &t, 1, mm, 2);
  LLVMValueRef u = cg_fmuladd(m, ac, fc(m, 1.0 / 1.5), fc(m, -2.5 / 1.5));
  LLVMValueRef ex = cg_fmuladd(m, LLVMBuildFNeg(b, ac, ""), ac, horner(m, u, q, 9));
  LLVMValueRef erfc = exp_bounded(m, ex);
  LLVMValueRef big = copysign2(m, LLVMBuildFSub(b, fc(m, 1.0), erfc, ""), x);
  LLVMValueRef lt = LLVMBuildFCmp(b, LLVMRealULT, a, fc(m, 1.0), ""); /* NaN: the first branch */
  return LLVMBuildSelect(b, lt, small, big, "");
}
