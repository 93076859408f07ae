/* SPDX-License-Identifier: Apache-2.0 */
/* math_pow.c: powers by a constant exponent as multiplies, square roots and divides (cg_pow_const),
 * for every target (math.c's LOOM_OP_POW calls it before the pow() call it would emit otherwise).
 *
 * A constant exponent reaches codegen as an LLVM constant (the kernel IR's `const`, cast by the
 * builder's folder). Results, against NumPy 2 (whose float power itself has fast paths for 0.5 and 2):
 *   x**0 -> 1 (NaN too), x**1 -> x, x**2 -> x*x, x**-1 -> 1/x: the same bits as pow (one rounding);
 *   x**0.5 -> sqrt(x): the same bits, and NumPy's -0 -> -0, -inf -> NaN (a widened float16: powf's
 *     -0 -> +0, -inf -> +inf, as NumPy's float16 power);
 *   x**-0.5 -> |1/sqrt(x)|, 0 at -inf: pow's -0 -> +inf and -inf -> +0; within 1 ulp of pow;
 *   float32 (and float16/bfloat16, which compute in float32) x**n for 3 <= n <= CG_POW_MAX_INT:
 *     repeated squaring of float32 pairs hi + lo (fma gives each product's rounding error; ~46 bits),
 *     one rounding at the end: correctly rounded but within ~2^-22 of a tie, at the full float32
 *     vector width (NumPy's own float32 power differs from the correctly rounded result in ~10 % of
 *     random inputs by 1 ulp); on a GPU with fast float64 (cg_gpu.h's fast_f64: H100, A100, MI200/300)
 *     the products in float64 instead (x*x exact, each later product one float64 rounding) and one
 *     rounding to float32: the same correctly rounded bits but within ~2^-28 ulp of a tie, in
 *     2 conversions + n's multiplies (x**3: 4 instructions against the pairs' ~10); the host keeps
 *     the pairs (float64 halves its vector width); a widened float16 operand and n <= 4: plain multiplies (its square is
 *     exact, so the same correctly rounded bits); x**-n: the products in float64 (|x|^8 of any float32 stays inside
 *     float64's range, so 1/x^n does not flush to 0 early), one division, one rounding to float32;
 *   float64 x**n for 3 <= n <= CG_POW_MAX_INT: repeated squaring (n = 3: x*x*x), within ~n/2 ulp of
 *     pow; negative float64 exponents other than -1 keep pow (1/x^n would flush results below the
 *     normal range to 0);
 *   integers x**n for 0 <= n <= CG_POW_MAX_INT: repeated squaring with wrapping multiplies, the same
 *     bits as the loop of math.c's int_pow.
 * Anything else (other exponents, complex, a run-time exponent) returns NULL: the caller emits pow.
 */
#include <math.h>

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"

enum { CG_POW_MAX_INT = 8 };

/* x**n, n >= 1, by repeated squaring: at most 4 multiplies for n <= 8. */
static LLVMValueRef mul_chain(LLVMBuilderRef b, bool fl, LLVMValueRef x, int n) {
  LLVMValueRef r = NULL, sq = x;
  for (;;) {
    if (n & 1) r = !r ? sq : fl ? LLVMBuildFMul(b, r, sq, "pow.m") : LLVMBuildMul(b, r, sq, "pow.m");
    n >>= 1;
    if (!n) return r;
    sq = fl ? LLVMBuildFMul(b, sq, sq, "pow.sq") : LLVMBuildMul(b, sq, sq, "pow.sq");
  }
}

/* A float32 value as an unevaluated sum hi + lo (|lo| <= ulp(hi) / 2): products of pairs keep ~46
 * bits, so x**n rounded once at the end is the correctly rounded power but within ~2^-22 of a tie. */
typedef struct F32Pair {
  LLVMValueRef hi, lo;
} F32Pair;

static LLVMValueRef fma3(CgMath *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef ty = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return cg_intrinsic(m, "llvm.fma", &ty, 1, args, 3);
}

/* (x.hi + x.lo) * (y.hi + y.lo): hi*hi exactly as a pair by one fma, the cross terms rounded (lo*lo
 * is below the pair's precision). */
static F32Pair pair_mul(CgMath *m, F32Pair x, F32Pair y) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef p = LLVMBuildFMul(b, x.hi, y.hi, "pow.p");
  LLVMValueRef e = fma3(m, x.hi, y.hi, LLVMBuildFNeg(b, p, ""));
  if (x.lo) e = fma3(m, x.lo, y.hi, e);
  if (y.lo) e = fma3(m, x.hi, y.lo, e);
  return (F32Pair){p, e};
}

/* The last product of a chain, rounded once: fma(x.hi, y.hi, cross) with cross = x.hi*y.lo + x.lo*y.hi
 * (lo*lo is below the pairs' precision). Where cross is 0 (the low parts vanish: hi*hi is the exact
 * product) or not finite (an earlier product overflowed, or x is infinite or NaN) the result is
 * x.hi*y.hi: pow's signed zeros, infinities and NaN. */
static LLVMValueRef pair_mul_round(CgMath *m, F32Pair x, F32Pair y) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef cross = NULL;
  if (x.lo && y.lo) cross = fma3(m, x.lo, y.hi, LLVMBuildFMul(b, x.hi, y.lo, ""));
  else if (x.lo) cross = LLVMBuildFMul(b, x.lo, y.hi, "");
  else if (y.lo) cross = LLVMBuildFMul(b, x.hi, y.lo, "");
  LLVMValueRef hh = LLVMBuildFMul(b, x.hi, y.hi, "pow.hh");
  if (!cross) return hh;
  LLVMTypeRef ty = LLVMTypeOf(cross);
  LLVMValueRef ac = cg_intrinsic(m, "llvm.fabs", &ty, 1, &cross, 1);
  LLVMValueRef zero = cg_fconst(m, LOOM_FLOAT32, 0.0), inf = cg_fconst(m, LOOM_FLOAT32, INFINITY);
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, ac, zero, ""), LLVMBuildFCmp(b, LLVMRealOLT, ac, inf, ""), "");
  return LLVMBuildSelect(b, ok, fma3(m, x.hi, y.hi, cross), hh, "pow.r");
}

/* float32 x**n, 2 <= n <= CG_POW_MAX_INT, by repeated squaring of float32 pairs (fma-based exact
 * products; the float64 products they replace halve the vector width and add conversions), the last
 * product rounded once (pair_mul_round). x**3: 4 multiplies and fmas, 2 compares and a select. */
static LLVMValueRef pow_f32_pair(CgMath *m, LLVMValueRef a, int n) {
  if (n == 1) return a;
  int ops = 0; /* the chain's products, the last of which rounds */
  for (int k = n, have = 0;;) {
    if (k & 1) ops += have, have = 1;
    k >>= 1;
    if (!k) break;
    ops++;
  }
  F32Pair r = {NULL, NULL}, sq = {a, NULL};
  for (int done = 0;;) {
    if (n & 1) {
      if (!r.hi) r = sq;
      else if (++done == ops) return pair_mul_round(m, r, sq);
      else r = pair_mul(m, r, sq);
    }
    n >>= 1;
    if (!n) return r.hi; /* not reached: the last product returns */
    if (++done == ops) return pair_mul_round(m, sq, sq); /* n a power of two: its last squaring */
    sq = pair_mul(m, sq, sq);
  }
}

/* LOOM_GPU_POW_F64=0: float32 integer powers by float32 pairs on fast-float64 GPUs too (A/B timings). */
static bool pow_f64_on_gpu(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_POW_F64", 1) != 0;
}

/* Whether float32 a is a float16 value widened (fpext from half): 11 significant bits and an exponent
 * well inside float32's normal range, so a*a (22 bits, >= 2^-48) is exact and x**3 = (x*x)*x, x**4 =
 * (x*x)*(x*x) are one rounding each: the correctly rounded float32 power that pow_f32_pair's pairs
 * compute, in 2 multiplies instead of ~14 instructions (float16 elementwise kernels are
 * instruction-bound on an H200: GELU's x**3). */
bool cg_is_widened_half(LLVMValueRef a) {
  LLVMValueRef src = NULL;
  if (LLVMIsAFPExtInst(a)) src = LLVMGetOperand(a, 0);
  else if (LLVMIsAConstantExpr(a) && LLVMGetConstOpcode(a) == LLVMFPExt) src = LLVMGetOperand(a, 0);
  return src && LLVMGetTypeKind(LLVMTypeOf(src)) == LLVMHalfTypeKind;
}

LLVMValueRef cg_pow_const(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef e) {
  LLVMBuilderRef b = m->b;
  if (dtype_is_int(t)) {
    if (!LLVMIsAConstantInt(e)) return NULL;
    bool sg = dtype_kind(t) == DK_INT;
    long long n = sg ? LLVMConstIntGetSExtValue(e) : (long long)LLVMConstIntGetZExtValue(e);
    if (!sg && LLVMConstIntGetZExtValue(e) > CG_POW_MAX_INT) return NULL;
    if (n < 0 || n > CG_POW_MAX_INT) return NULL;
    if (n == 0) return LLVMConstInt(LLVMTypeOf(a), 1, 0);
    return mul_chain(b, false, a, (int)n);
  }
  if (t != LOOM_FLOAT32 && t != LOOM_FLOAT64) return NULL;
  if (!LLVMIsAConstantFP(e)) return NULL;
  LLVMBool loses = 0;
  double c = LLVMConstRealGetDouble(e, &loses);
  if (c == 0.0) return cg_fconst(m, t, 1.0);
  if (c == 1.0) return a;
  if (c == 2.0) return LLVMBuildFMul(b, a, a, "pow.sq");
  if (c == -1.0) return cg_fdiv(m, t, cg_fconst(m, t, 1.0), a);
  if (c == 0.5 && cg_is_widened_half(a)) {
    /* NumPy's float16 power has no 0.5 fast path: powf's -inf -> +inf and -0 -> +0 (x ** 0.5, the
     * operator, is np.sqrt: the Python binding emits sqrt for it) */
    LLVMValueRef r = cg_fsqrt(m, a);
    LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, a, cg_fconst(m, t, -INFINITY), "");
    r = LLVMBuildSelect(b, ninf, cg_fconst(m, t, INFINITY), r, "");
    return LLVMBuildFAdd(b, r, cg_fconst(m, t, 0.0), ""); /* -0 + 0 = +0; every other value unchanged */
  }
  if (c == 0.5) return cg_fsqrt(m, a);
  if (c == -0.5) {
    LLVMTypeRef ty = LLVMTypeOf(a);
    LLVMValueRef r = cg_fdiv(m, t, cg_fconst(m, t, 1.0), cg_fsqrt(m, a));
    r = cg_intrinsic(m, "llvm.fabs", &ty, 1, &r, 1); /* -0: 1/sqrt(-0) is -inf, pow gives +inf */
    LLVMValueRef ninf = LLVMBuildFCmp(b, LLVMRealOEQ, a, cg_fconst(m, t, -INFINITY), "");
    return LLVMBuildSelect(b, ninf, cg_fconst(m, t, 0.0), r, "");
  }
  if (c != floor(c) || fabs(c) > CG_POW_MAX_INT) return NULL;
  int n = (int)fabs(c);
  if (t == LOOM_FLOAT64) return c > 0 ? mul_chain(b, true, a, n) : NULL;
  if (c > 0 && n <= 4 && cg_is_widened_half(a)) return mul_chain(b, true, a, n);
  if (c > 0 && !(m->gpu && m->gpu->fast_f64 && pow_f64_on_gpu())) return pow_f32_pair(m, a, n);
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c);
  LLVMValueRef r = mul_chain(b, true, LLVMBuildFPExt(b, a, f64, ""), n);
  if (c < 0) r = LLVMBuildFDiv(b, LLVMConstReal(f64, 1.0), r, "");
  return LLVMBuildFPTrunc(b, r, LLVMTypeOf(a), "");
}
