/* SPDX-License-Identifier: Apache-2.0 */
/* math_exp.c: Loom's own float32 exp for the host (cg_host_exp_f32), straight-line scalar code the loop
 * vectorizer widens, in place of a call of SLEEF's expf_u10. A call clobbers every vector register, so a
 * loop around it spills its accumulators and broadcasts on each iteration and keeps one vector body (a
 * softmax's sum of exp(x - max): 0.5 ns a point against 0.3 for exp alone); inline code has neither cost.
 *
 *   x = n ln2 + r,  n = rint(x log2(e)),  |r| <= ln2 / 2 (plus rounding);
 *   e^r = 1 + (r + r^2 s(r)),  s of degree 4 (total degree 6; fit error 3.1e-9 relative, ~0.05 ulp);
 *   e^x = (e^r 2^n1) 2^n2,  n1 = floor(n / 2), n2 = n - n1.
 *
 * r is x - n ln2 in two fma steps with ln2 split as hi + lo, hi having 11 trailing zero bits so that n hi
 * is exact for |n| <= 2^11; the 1 is added last, so the rounding of the polynomial's small part costs
 * little against it. Scaling in two factors keeps both in the normal range for every n the clamp allows:
 * the first product is exact, the second rounds once (overflow to inf, gradual underflow to subnormals
 * and to 0). x is clamped to [-103.98, 88.8] first (e^88.8 overflows, e^-103.98 rounds to 0, so the clamp
 * changes no result) which keeps n in [-150, 128] and the float-to-int conversion defined; NaN goes through as
 * 0 and is put back at the end. Within 1 ulp of the correctly rounded exp on every float32 tried (a
 * sweep of 72M points of [-104, 89] in an emulation, and tests/python/test_exp_f32.py through Loom);
 * ~0.8 % of the points are 1 ulp off (SLEEF's expf_u10: also <= 1 ulp).
 *
 * The fit (NumPy alone): s(r) ~ (e^r - 1 - r) / r^2 on [-ln2/2 - 1e-4, ln2/2 + 1e-4], 8000 points
 * (Chebyshev-spaced and uniform), least squares on the relative error of e^r with Lawson's reweighting
 * (60 steps), coefficients rounded to float32. */
#include "cg_llvm.h"

/* 2^k for an int32 k with k + 127 in [1, 254]: the float's exponent bits */
static LLVMValueRef pow2i(CgMath *m, LLVMValueRef k) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef bits = LLVMBuildShl(b, LLVMBuildAdd(b, k, LLVMConstInt(i32, 127, 0), ""), LLVMConstInt(i32, 23, 0), "");
  return LLVMBuildBitCast(b, bits, LLVMFloatTypeInContext(m->c), "");
}

LLVMValueRef cg_host_exp_f32(CgMath *m, LLVMValueRef x) {
  static const double s[5] = {0x1.fffffcp-2, 0x1.555492p-3, 0x1.5558f2p-5, 0x1.123ap-7, 0x1.6a23fap-10};
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x), i32 = LLVMInt32TypeInContext(m->c);
  /* x of a float16 value is fpext(h): InstCombine narrows a compare of it with a constant that float16
   * holds exactly, and `uno`, to float16 compares, which x86 without AVX512-FP16 runs lane by lane
   * (softmax_f16 2x slower). So NaN is tested on the bits and the clamp's bounds are not float16 values. */
  LLVMValueRef bits = LLVMBuildAnd(b, LLVMBuildBitCast(b, x, i32, ""), LLVMConstInt(i32, 0x7fffffff, 0), "");
  LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, bits, LLVMConstInt(i32, 0x7f800000, 0), "");
  LLVMValueRef xc = LLVMBuildSelect(b, nan, cg_fconst(m, LOOM_FLOAT32, 0.0), x, "");
  LLVMValueRef hi = cg_fconst(m, LOOM_FLOAT32, 88.8), lo = cg_fconst(m, LOOM_FLOAT32, -103.98);
  xc = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, xc, hi, ""), hi, xc, "");
  LLVMValueRef zero_out = LLVMBuildFCmp(b, LLVMRealOLT, xc, lo, ""); /* e^x rounds to 0 (below) */
  xc = LLVMBuildSelect(b, zero_out, lo, xc, "");
  LLVMValueRef scaled = LLVMBuildFMul(b, xc, cg_fconst(m, LOOM_FLOAT32, 0x1.715476p+0), "");
  LLVMValueRef n = cg_intrinsic(m, "llvm.rint", &t, 1, &scaled, 1);
  LLVMValueRef nn = LLVMBuildFNeg(b, n, "");
  LLVMValueRef r = cg_fmuladd(m, nn, cg_fconst(m, LOOM_FLOAT32, 0x1.62e4p-1), xc); /* ln2 hi: 0.693145751953125 */
  r = cg_fmuladd(m, nn, cg_fconst(m, LOOM_FLOAT32, 0x1.7f7d1cp-20), r);            /* ln2 lo */
  LLVMValueRef p = cg_fconst(m, LOOM_FLOAT32, s[4]);
  for (int i = 3; i >= 0; i--) p = cg_fmuladd(m, p, r, cg_fconst(m, LOOM_FLOAT32, s[i]));
  LLVMValueRef q = cg_fmuladd(m, LLVMBuildFMul(b, r, r, ""), p, r);
  LLVMValueRef er = LLVMBuildFAdd(b, q, cg_fconst(m, LOOM_FLOAT32, 1.0), "");
  LLVMValueRef ni = LLVMBuildFPToSI(b, n, i32, "");
  LLVMValueRef n1 = LLVMBuildAShr(b, ni, LLVMConstInt(i32, 1, 0), "");
  LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
  /* where e^x rounds to 0 (x < ln(2^-150) = -103.972...), the second factor is 0 instead of 2^n2: a product
   * of normals that underflows costs a microcode assist on x86 (Zen 4, 4.5M floats: exp over [-5000, -200]
   * 1.54 ms against 0.83 over [-80, -1]; Gaussian heatmaps are mostly such points), 0 times a normal does
   * not. Subnormal results keep the two products (their assists remain: building their bits by integer
   * rounding, rint(e^r 2^(n + 149)), cost every lane ~20 %, more than it saved on heatmaps). */
  LLVMValueRef f2 = LLVMBuildSelect(b, zero_out, cg_fconst(m, LOOM_FLOAT32, 0.0), pow2i(m, n2), "");
  LLVMValueRef res = LLVMBuildFMul(b, LLVMBuildFMul(b, er, pow2i(m, n1), ""), f2, "");
  return LLVMBuildSelect(b, nan, x, res, "");
}
