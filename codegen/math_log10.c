/* SPDX-License-Identifier: Apache-2.0 */
/* math_log10.c: Loom's own float32 log10 for the host (cg_host_log10_f32; GPUs on request), straight-line scalar code the loop
 * vectorizer widens, in place of a call of SLEEF's log10f_u10 (SLEEF 3.5's works in double-float arithmetic:
 * loom.log10 of 2^21 floats took 1.15 ms on this project's 2-core Zen 4 against 0.48 for its logf, and
 * librosa's power_to_db, 10 log10(S), ran at 0.75x torch.compile).
 *
 *   x = 2^k m,  m in [sqrt(2)/2, sqrt(2)),   log10(x) = k log10(2) + log(1 + f) log10(e),   f = m - 1,
 *
 * k and m from x's bits (subnormals scaled by 2^23 first), f exact (Sterbenz), log(1 + f) by math_log1p.c's
 * polynomial (relative error 2^-27.8). k log10(2) in two parts, k LOG10_2_HI exact (12-bit constant, |k| <=
 * 152); the small terms folded first, the large one last. Errors: the polynomial's roundings ~0.4 ulp of
 * log(1 + f), the products and sums ~0.5 ulp each of the result where they round; every float32 in [2^-149,
 * inf) sampled on a stride (tests/python/test_log10_f32.py) lies within 1.6 ulp of log10 in float64 (SLEEF's:
 * 0.6; NumPy's own float32 log10: 2.9); powers of ten 10^0 .. 10^10 give their exponent exactly.
 * Specials by selects: +-0 -> -inf, x < 0 and -inf -> NaN, +inf -> +inf, NaN -> NaN.
 * GPUs keep the device library's (libdevice: logf times log10(e), within 2 ulp, 10^3 -> 2.9999998, as CuPy):
 * this code ran there too (LOOM_GPU_POLY_LOG10=1) and cost librosa's power_to_db 27 % (H100, 2026-12-07: 0.244
 * against 0.192 ms; two phases each take a log10 a point). LOOM_HOST_POLY_LOG10=0: SLEEF's log10f on the host.
 * float64 keeps SLEEF and the device libraries.
 */
#include <math.h>

#include "cg_llvm.h"

static LLVMValueRef fc(CgMath *m, double v) { return cg_fconst(m, LOOM_FLOAT32, v); }

LLVMValueRef cg_host_log10_f32(CgMath *m, LLVMValueRef x) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x), i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef c23 = LLVMConstInt(i32, 23, 0);
  /* subnormals: x 2^23 (exact), k 23 less */
  LLVMValueRef sub = LLVMBuildFCmp(b, LLVMRealOLT, x, fc(m, 0x1p-126), "");
  LLVMValueRef xs = LLVMBuildSelect(b, sub, LLVMBuildFMul(b, x, fc(m, 0x1p23), ""), x, "");
  LLVMValueRef bits = LLVMBuildBitCast(b, xs, i32, "");
  /* d = bits(x) - bits(sqrt(2)/2 rounded): k = d >> 23, m = x 2^-k has the bits bits(x) - (k << 23) */
  LLVMValueRef d = LLVMBuildSub(b, bits, LLVMConstInt(i32, 0x3f3504f3, 0), "");
  LLVMValueRef ki = LLVMBuildAShr(b, d, c23, "");
  LLVMValueRef mant = LLVMBuildBitCast(b, LLVMBuildSub(b, bits, LLVMBuildShl(b, ki, c23, ""), ""), t, "");
  LLVMValueRef f = LLVMBuildFSub(b, mant, fc(m, 1.0), "");
  LLVMValueRef k = LLVMBuildFSub(b, LLVMBuildSIToFP(b, ki, t, ""), LLVMBuildSelect(b, sub, fc(m, 23.0), fc(m, 0.0), ""), "");
  LLVMValueRef l = cg_host_log1pf_core(m, f);
  /* log10(2) = HI + LO, HI of 12 bits (k HI exact); log10(e) = EHI + ELO */
  const double l2hi = 0x1.344p-2, l2lo = 0.30102999566398119521 - 0x1.344p-2;
  const double ehi = (double)(float)0.43429448190325182765, elo = 0.43429448190325182765 - (double)(float)0.43429448190325182765;
  LLVMValueRef small = cg_fmuladd(m, k, fc(m, l2lo), LLVMBuildFMul(b, l, fc(m, elo), ""));
  LLVMValueRef r = cg_fmuladd(m, l, fc(m, ehi), small);
  r = cg_fmuladd(m, k, fc(m, l2hi), r);
  /* specials on the bits of x: +-0 -> -inf, negative (and -inf, negative NaN payloads) -> NaN, +inf -> +inf,
   * NaN -> NaN */
  LLVMValueRef xb = LLVMBuildBitCast(b, x, i32, "");
  LLVMValueRef zero = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildShl(b, xb, LLVMConstInt(i32, 1, 0), ""), LLVMConstInt(i32, 0, 0), "");
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntUGT, xb, LLVMConstInt(i32, 0x80000000u, 0), "");
  LLVMValueRef inf = LLVMBuildICmp(b, LLVMIntEQ, xb, LLVMConstInt(i32, 0x7f800000u, 0), "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, x, x, "");
  r = LLVMBuildSelect(b, inf, x, r, "");
  r = LLVMBuildSelect(b, LLVMBuildOr(b, neg, nan, ""), fc(m, NAN), r, "");
  return LLVMBuildSelect(b, zero, fc(m, -INFINITY), r, "");
}
