/* SPDX-License-Identifier: Apache-2.0 */
/* math_log1p.c: Loom's own float32 log1p for the host (cg_host_log1p_f32), as straight-line scalar code
 * (integer bit operations, fma, selects; no call, no branch, no table) that the loop vectorizer widens to
 * the host's full float32 width, in place of a call of SLEEF's log1pf_u10 (softplus log1p(exp(x)), Mish,
 * binary cross-entropy with logits) at ~1/3 of its cost: loom.log1p of 2^22 floats, loads and stores
 * included, took 1.57 ms of CPU on one thread of a Zen 4 against 4.3 (NumPy's SVML log1pf: 1.96).
 * float64 keeps SLEEF; GPUs keep their device libraries (math.c).
 *
 *   1 + x = 2^k m,  m in [sqrt(2)/2, sqrt(2)),   log1p(x) = k ln 2 + log(1 + f),   f = m - 1.
 *
 * k comes from the exponent bits of u = 1 + x rounded (its rounding only moves m past the interval's ends
 * by half an ulp; the fit covers that). The reduction needs no compensation term ((x - ((1 + x) - 1)) /
 * (1 + x) in the usual float32 method, a division): f = x 2^-k + (2^-k - 1) is exactly a float32 for every
 * k <= 24 (k = 0: x itself, no 1 + x - 1 cancellation; k != 0: x 2^-k's last bit is >= 2^-24 and f in
 * [-0.293, 0.415) starts at or below 2^-2, so f fits in 24 bits, and 2^-k - 1 does too), so one fma
 * forms it exactly; for k > 24 (x > 1.2e7) its rounding (2^-25) is far below the result's ulp. The fma
 * is llvm.fma (not fmuladd): the exactness needs the single rounding. 2^-k is taken as (x / 4) 2^(2-k)
 * so that the scale stays a normal float32 up to k = 129 (the largest floats and inf); x / 4 is exact
 * outside the tiny-x select below. Then, in float32,
 *
 *   log(1 + f) = f + f^2 Q(f),   Q of degree 8 (float32 coefficients: relative error 4.2e-9, 2^-27.8),
 *
 * and k ln 2 added in two parts (k LN2_HI exact). Errors: f exact; f^2 Q's roundings add <= ~0.4 ulp,
 * the final sums 0.5; at k = 1, m near sqrt(2)/2 (ln 2 + log m, the sum halves) ~1 ulp. Every float32
 * was checked (2026-12-04) against np.log1p in float64 rounded to float32: at most 1 ulp apart on all of
 * [-1, inf] (13.1 million of 3.2 billion, 0.41 %, are 1 ulp off; e.g. x = 8.42937e-08, 4e-8 ulp from a
 * tie), NaN for every NaN and every x < -1; float16 results are bit for bit those of SLEEF's path.
 * tests/python/test_log1p_f32.py sweeps a stride of them.
 *
 * Variant 2 (A/B only: LOOM_HOST_POLY_LOG1P=2) does the same in float64 (x widened, f = x s + (s - 1)
 * exact, Q of degree 8 in float64, one rounding to float32): no more accurate where it counts and twice
 * the cost, as float64 halves the lanes of the loop the vectorizer builds around it (a fused exp, ...).
 *
 * Specials by selects on x: x < -1 (and -inf) -> NaN, x = -1 -> -inf, x = +inf -> +inf, |x| < 2^-25 ->
 * x (log1p(x) = x - x^2/2 + ... rounds to x there: -0 stays -0, subnormals exact); NaN propagates through
 * the arithmetic. The largest floats give log(x) without overflow (k <= 128, m - 1 formed by the fma).
 *
 * Q's coefficients were fitted here (no other project's): Lawson's iteratively reweighted least squares
 * (60 steps) for the minimax relative error of f + f^2 Q(f) against np.log1p in float64 on ~8000 points
 * of [sqrt(2)/2 - 1, sqrt(2) - 1] (Chebyshev-spaced and uniform); for float32 the coefficients were then
 * rounded one at a time, lowest first, the others refitted after each. */
#include <math.h>

#include "cg_llvm.h"

static LLVMValueRef dc(CgMath *m, double v) { return cg_fconst(m, LOOM_FLOAT64, v); }
static LLVMValueRef fc(CgMath *m, double v) { return cg_fconst(m, LOOM_FLOAT32, v); }

/* x < -1 -> NaN, x = -1 -> -inf, x = +inf -> +inf, |x| < 2^-25 -> x (log1p(x) = x - x^2/2 + ... rounds to x:
 * covers -0 and the subnormals) */
static LLVMValueRef specials(CgMath *m, LLVMValueRef x, LLVMValueRef r) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef ax = cg_intrinsic(m, "llvm.fabs", &t, 1, &x, 1);
  r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, ax, fc(m, 0x1p-25), ""), x, r, "");
  /* the other tests on the bits: x of a float16 value is fpext(h), and InstCombine narrows a compare with a
   * constant float16 holds exactly (inf, -1) to a float16 compare, which x86 without AVX512-FP16 runs lane
   * by lane (float16 log1p ~16 scalar compares a vector); x < -1 is bits >u -1's (-inf, negative NaNs too) */
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef bits = LLVMBuildBitCast(b, x, i32, "");
  LLVMValueRef is_inf = LLVMBuildICmp(b, LLVMIntEQ, bits, LLVMConstInt(i32, 0x7f800000u, 0), "");
  LLVMValueRef is_m1 = LLVMBuildICmp(b, LLVMIntEQ, bits, LLVMConstInt(i32, 0xbf800000u, 0), "");
  LLVMValueRef below = LLVMBuildICmp(b, LLVMIntUGT, bits, LLVMConstInt(i32, 0xbf800000u, 0), "");
  r = LLVMBuildSelect(b, is_inf, x, r, "");
  r = LLVMBuildSelect(b, is_m1, fc(m, -INFINITY), r, "");
  return LLVMBuildSelect(b, below, fc(m, NAN), r, "");
}

LLVMValueRef cg_host_log1pf_core(CgMath *m, LLVMValueRef f) {
  static const double q[9] = {-0x1.fffff8p-2, 0x1.55555p-2,   -0x1.000434p-2, 0x1.99a40cp-3, -0x1.54256p-3,
                              0x1.226f9p-3,   -0x1.0f4442p-3, 0x1.085562p-3,  -0x1.38123ap-4};
  LLVMValueRef p = fc(m, q[8]);
  for (int i = 7; i >= 0; i--) p = cg_fmuladd(m, p, f, fc(m, q[i]));
  return cg_fmuladd(m, LLVMBuildFMul(m->b, f, f, ""), p, f);
}

/* variant 1: every step in float32 */
static LLVMValueRef log1p_f32(CgMath *m, LLVMValueRef x) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef t = LLVMTypeOf(x), i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef u = LLVMBuildFAdd(b, x, fc(m, 1.0), "");
  /* d = bits(u) - bits(sqrt(2)/2 rounded): k = d >> 23; s4 = 2^(2-k) has the bits (129 << 23) - (k << 23),
   * normal for every k of a float32 (-24 ... 129) */
  LLVMValueRef d = LLVMBuildSub(b, LLVMBuildBitCast(b, u, i32, ""), LLVMConstInt(i32, 0x3f3504f3, 0), "");
  LLVMValueRef k = LLVMBuildSIToFP(b, LLVMBuildAShr(b, d, LLVMConstInt(i32, 23, 0), ""), t, "");
  LLVMValueRef kbits = LLVMBuildAnd(b, d, LLVMConstInt(i32, 0xff800000u, 0), "");
  LLVMValueRef s4 = LLVMBuildBitCast(b, LLVMBuildSub(b, LLVMConstInt(i32, 0x40800000, 0), kbits, ""), t, "");
  /* f = (x / 4) 2^(2-k) + (2^-k - 1), the second term and the sum exact (one fused rounding of an exact value) */
  LLVMValueRef sm1 = cg_fmuladd(m, s4, fc(m, 0.25), fc(m, -1.0));
  LLVMValueRef fa[3] = {LLVMBuildFMul(b, x, fc(m, 0.25), ""), s4, sm1};
  LLVMValueRef f = cg_intrinsic(m, "llvm.fma", &t, 1, fa, 3);
  LLVMValueRef l = cg_host_log1pf_core(m, f);
  /* k ln 2 in two parts: k * LN2_HI exact (8 bits each) */
  LLVMValueRef r = cg_fmuladd(m, k, fc(m, 0x1.62e43p-1), cg_fmuladd(m, k, fc(m, -0x1.05c61p-29), l));
  return specials(m, x, r);
}

/* variant 2: the reduction and polynomial in float64 */
static LLVMValueRef log1p_f64(CgMath *m, LLVMValueRef x) {
  static const double q[9] = {-0x1.fffff828d7d5fp-2, 0x1.5555501739b52p-2, -0x1.00042772f86b3p-2,
                              0x1.99a4003675440p-3,  -0x1.54274cf354d96p-3, 0x1.2270adff418d3p-3,
                              -0x1.0f375f5100f5fp-3, 0x1.084da66354001p-3,  -0x1.383cb419e2ba1p-4};
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c), i64 = LLVMInt64TypeInContext(m->c);
  LLVMValueRef xd = LLVMBuildFPExt(b, x, f64, "");
  LLVMValueRef u = LLVMBuildFAdd(b, xd, dc(m, 1.0), "");
  /* d = bits(u) - bits(sqrt(2)/2): k = d >> 52; s = 2^-k has the bits (1023 << 52) - (k << 52) */
  LLVMValueRef d = LLVMBuildSub(b, LLVMBuildBitCast(b, u, i64, ""), cg_i64(m, 0x3fe6a09e667f3bcdLL), "");
  LLVMValueRef k = LLVMBuildSIToFP(b, LLVMBuildAShr(b, d, cg_i64(m, 52), ""), f64, "");
  LLVMValueRef kbits = LLVMBuildAnd(b, d, cg_i64(m, (int64_t)0xfff0000000000000ULL), "");
  LLVMValueRef s = LLVMBuildBitCast(b, LLVMBuildSub(b, cg_i64(m, 0x3ff0000000000000LL), kbits, ""), f64, "");
  LLVMValueRef f = cg_fmuladd(m, xd, s, LLVMBuildFSub(b, s, dc(m, 1.0), ""));
  LLVMValueRef p = dc(m, q[8]);
  for (int i = 7; i >= 0; i--) p = cg_fmuladd(m, p, f, dc(m, q[i]));
  LLVMValueRef l = cg_fmuladd(m, LLVMBuildFMul(b, f, f, ""), p, f);
  LLVMValueRef r = LLVMBuildFPTrunc(b, cg_fmuladd(m, k, dc(m, 0x1.62e42fefa39efp-1), l), LLVMTypeOf(x), "");
  return specials(m, x, r);
}

LLVMValueRef cg_host_log1p_f32(CgMath *m, LLVMValueRef x, int variant) {
  return variant == 2 ? log1p_f64(m, x) : log1p_f32(m, x);
}
