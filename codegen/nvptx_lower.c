/* SPDX-License-Identifier: Apache-2.0 */
/* nvptx_lower.c: the NVIDIA hooks of the shared GPU lowering (cg_gpu.h's CgGpuHooks): PTX special
 * registers for the launch indices, shfl.sync.bfly for wave shuffles (a warp of 32), bar.sync for
 * barriers, !nvvm.annotations "kernel" marking, address spaces (global 1, shared 3, the parameter block
 * by value in the generic space), libdevice's __nv_* math names, and float32 division / square root
 * sequences that avoid the driver JIT's slow-path subroutines. nvptx.c fills the tool chain hooks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/nvptx.h"

/* ---- launch indices, shuffles, barriers, kernels ---------------------------------------------------- */

/* A call of an NVVM intrinsic declared by name (the form the lowering always used). */
static LLVMValueRef nv_call(CgMath *m, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned nparams,
                            LLVMValueRef *args) {
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, name);
  LLVMTypeRef fty = LLVMFunctionType(ret, params, nparams, 0);
  if (!fn) fn = LLVMAddFunction(m->m, name, fty);
  return LLVMBuildCall2(m->b, fty, fn, args, nparams, "");
}

static LLVMValueRef nv_index(CgMath *m, CgGpuIndex which) {
  static const char *const sreg[4] = {"llvm.nvvm.read.ptx.sreg.tid.x", "llvm.nvvm.read.ptx.sreg.ntid.x",
                                      "llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.x"};
  return nv_call(m, sreg[which], LLVMInt32TypeInContext(m->c), NULL, 0, NULL);
}

static LLVMValueRef nv_shuffle_xor(CgMath *m, LLVMValueRef v, int lane_mask) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef pt[4] = {i32, i32, i32, i32};
  LLVMValueRef a[4] = {LLVMConstInt(i32, 0xffffffffu, 0), v, LLVMConstInt(i32, (unsigned)lane_mask, 0),
                       LLVMConstInt(i32, 31, 0)};
  return nv_call(m, "llvm.nvvm.shfl.sync.bfly.i32", i32, pt, 4, a);
}

static void nv_barrier(CgMath *m) { nv_call(m, "llvm.nvvm.barrier0", LLVMVoidTypeInContext(m->c), NULL, 0, NULL); }

static LLVMValueRef nv_ballot(CgMath *m, LLVMValueRef pred) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef pt[2] = {i32, LLVMInt1TypeInContext(m->c)};
  LLVMValueRef a[2] = {LLVMConstInt(i32, 0xffffffffu, 0), pred};
  return nv_call(m, "llvm.nvvm.vote.ballot.sync", i32, pt, 2, a);
}

/* match.any.sync (sm_70+, which LLVM's NVPTX target and Loom's kernels assume) */
static LLVMValueRef nv_match_any(CgMath *m, LLVMValueRef v) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef pt[2] = {i32, i32};
  LLVMValueRef a[2] = {LLVMConstInt(i32, 0xffffffffu, 0), v};
  return nv_call(m, "llvm.nvvm.match.any.sync.i32", i32, pt, 2, a);
}

static void nv_wave_sync(CgMath *m) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef a = LLVMConstInt(i32, 0xffffffffu, 0);
  nv_call(m, "llvm.nvvm.bar.warp.sync", LLVMVoidTypeInContext(m->c), &i32, 1, &a);
}

/* fence.acq_rel.gpu (LLVM 19's NVPTX back end selects no `fence` instruction). */
static void nv_fence_device(CgMath *m) {
  static const char text[] = "fence.acq_rel.gpu;", cons[] = "~{memory}";
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(m->c), NULL, 0, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, sizeof text - 1, cons, sizeof cons - 1, 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMBuildCall2(m->b, fty, fn, NULL, 0, "");
}

/* PTX needs no launch bound (the driver checks the block size at launch); fit: .maxntid max_block, so that
 * ptxas keeps the registers within what max_block threads may use. */
static void nv_mark_kernel(CgMath *m, LLVMValueRef fn, int max_block, bool fit) {
  LLVMContextRef c = m->c;
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(c, "kernel", 6),
                            LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0))};
  LLVMAddNamedMetadataOperand(m->m, "nvvm.annotations", LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, 3)));
  if (fit && max_block > 0) {
    LLVMMetadataRef nt[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(c, "maxntidx", 8),
                             LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), (unsigned long long)max_block, 0))};
    LLVMAddNamedMetadataOperand(m->m, "nvvm.annotations", LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, nt, 3)));
  }
}

/* libdevice: __nv_exp (float64), __nv_expf (float32). */
static void nv_math_name(char *buf, size_t cap, const char *base, LoomDType t) {
  snprintf(buf, cap, "%s%s%s", NV_MATH_PREFIX, base, t == LOOM_FLOAT32 ? "f" : "");
}


/* ---- float32 division and square root ------------------------------------------------------------
 * PTX's div.rn.f32 and sqrt.rn.f32 are correctly rounded, but the driver's JIT expands each into a
 * fast path plus a slow-path subroutine, and compiling that costs more than the rest of a small
 * kernel (measured with nvJitLink at -O1: div.rn.f32 +5 ms, sqrt.rn.f32 +2 ms per kernel, against a
 * ~4 ms floor). These sequences give the same, correctly rounded bits without a slow path:
 *  - a / b: in float64 (both operands exactly), a reciprocal estimate refined by two Newton steps and
 *    a residual correction, then rounded once to float32. The float64 quotient is within ~2^-52 of
 *    a/b, and a quotient of two 24-bit floats is never within 2^-49 of a float32 rounding midpoint
 *    (nor exactly on one) unless it is representable, so that rounding is the correct one, denormal
 *    results included. Zero, infinite and NaN operands (the refined quotient is NaN, or a is zero)
 *    take a * (1 / b) from the estimate, which gives IEEE's answers (x / 0 = +-inf, 0 / 0 = NaN,
 *    x / inf = +-0, signs of zero kept).
 *  - sqrt(x): in float64, two Newton steps from rsqrt.approx (within ~2^-53 of sqrt(x)), rounded once
 *    to float32. The square root of a float32 is never within 2^-50 of a float32 rounding midpoint
 *    (x = m^2 would need a 25-bit m squared to fit 24 bits; otherwise |x - m^2| >= ulp(m^2)), so that
 *    rounding is the correct one. Zero, negative, infinite and NaN inputs (the float64 result is NaN)
 *    take sqrt.approx, exact there. (A float32 Newton step with Tuckerman's rounding test is also exact
 *    but twice as long; with four lanes it JIT-compiled no faster than sqrt.rn.)
 * Both were checked against the hardware's div.rn/sqrt.rn on the H200: sqrt on all 2^32 inputs, the
 * division on 2^33 operand pairs (random bits, and pairs of nearby exponents): bench/ptx/
 * check_div_sqrt.ptx; test_gpu compares them with the host's IEEE results on every run. */
/* A call of a non-overloaded NVVM intrinsic of one argument. */
static LLVMValueRef nv_intr(CgMath *m, const char *name, LLVMValueRef a) { return cg_intrinsic(m, name, NULL, 0, &a, 1); }
static LLVMValueRef fma3(CgMath *m, LLVMValueRef a, LLVMValueRef x, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, x, c};
  return cg_intrinsic(m, "llvm.fma", &t, 1, args, 3);
}

/* The biased exponent of float32 x (its bits 23..30) lies in [66, 188]: |x| in [2^-61, 2^62). */
static LLVMValueRef exp_in_markstein_range(CgMath *m, LLVMValueRef x) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildLShr(b, LLVMBuildBitCast(b, x, i32, ""), LLVMConstInt(i32, 23, 0), ""),
                                LLVMConstInt(i32, 0xff, 0), "");
  return LLVMBuildICmp(b, LLVMIntULT, LLVMBuildSub(b, e, LLVMConstInt(i32, 66, 0), ""), LLVMConstInt(i32, 123, 0), "");
}

/* a / b correctly rounded. y = RN(1/b) comes from the float64 reciprocal (the midpoint argument above
 * with a = 1) and depends on b alone, so a divisor that is the same for many points (LayerNorm's
 * sqrt(var + eps), softmax's sum, a row's norm) computes it once (LLVM hoists / merges it). Then,
 * Markstein's division step: q = RN(a y), r = a - b q (exact by fma), q' = RN(q + r y) is the
 * correctly rounded a / b when y is the correctly rounded reciprocal and nothing under- or overflows,
 * which |a|, |b| in [2^-61, 2^62) guarantee (checked on 2e8 random pairs, all-ones significands
 * included, against IEEE division: bench/ptx/markstein_check.c). Three float32 operations per point
 * instead of two conversions and five float64 ones. Any other a or b (zeros, infinities, NaN,
 * subnormals, extreme exponents) branches to the float64 quotient of before; a quotient of two
 * point-independent values (CgMath.uniform) and code that must not branch (CgMath.no_branch: the
 * unrolled reduction loop) keep the float64 quotient alone, and so does a divisor that varies per point
 * (CgMath.rhs_varies, or a load among its operands: nothing to hoist; silu's 1 + exp(-x), batchnorm's
 * sqrt(var[c] + eps)); it may take the float32 reciprocal instead: rcp.approx and one Newton step, then the same step, which is div.rn.f32's
 * own fast path as ptxas writes it (bit for bit with div.rn.f32 over 2^35 pairs in the range on the H200:
 * bench/ptx/check_div_newton.ptx): 1 MUFU and 5 float32 operations against 3 conversions, 8 float64
 * operations and a MUFU.RCP64H of the float64 quotient, when LOOM_GPU_FAST_DIV=2 (fast_div_level: not the
 * default). LOOM_GPU_FAST_DIV=0: always the float64 quotient (A/B timings). */
/* Whether v reads global memory at this point (a load among its operands, a few levels up, in the block
 * being emitted; a value made in an earlier block (a row's partials, loaded once) is not): a divisor loaded per
 * point (batchnorm's sqrt(var[c] + eps), silu's 1 + exp(-x)) is not hoisted, so Markstein's step would
 * be paid on top of the reciprocal at every point; a divisor made of a row's accumulators and constants
 * (softmax's sum, layernorm's sqrt(var + eps)) is computed once per row. */
static bool reads_memory(LLVMValueRef v, LLVMBasicBlockRef here, int depth) {
  if (!LLVMIsAInstruction(v) || LLVMIsAPHINode(v) || LLVMGetInstructionParent(v) != here) return false;
  if (LLVMIsALoadInst(v)) { /* global or generic memory: a point's data; shared: a block's reduction */
    unsigned as = LLVMGetPointerAddressSpace(LLVMTypeOf(LLVMGetOperand(v, 0)));
    return as == 0 || as == 1;
  }
  if (depth == 0) return false;
  int n = LLVMGetNumOperands(v);
  for (int i = 0; i < n && i < 4; i++)
    if (reads_memory(LLVMGetOperand(v, (unsigned)i), here, depth - 1)) return true;
  return false;
}

/* LOOM_GPU_FAST_DIV, read once: 0 the float64 quotient everywhere; 1 (default) Markstein's step from the
 * float64 reciprocal where the divisor can be hoisted, the float64 quotient where it varies per point; 2 the
 * float32 reciprocal path for a divisor that varies per point too. H200, 2026-12-04 (bench/suite/ab_knobs.sh),
 * 2 against 1: swiglu 0.213 -> 0.202 ms, but silu 0.141 -> 0.144 and batchnorm_infer_nchw 0.139 -> 0.232
 * (ptxas if-converts the later points' slow paths of a vector: their float64 instructions issue predicated
 * off at every point). A per-vector range test (one branch for all lanes) would be the way to take it. */
static int fast_div_level(void) {
  static int lv = -1;
  return cg_env_int_once(&lv, "LOOM_GPU_FAST_DIV", 1);
}

/* 1/b in float64 (b a float32 widened): the estimate r0 and r2 after two Newton steps (within ~2^-52). */
typedef struct Rcp64 {
  LLVMValueRef B, nB, r0, r2;
} Rcp64;

static Rcp64 rcp64_of(CgMath *m, LLVMValueRef bv) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c);
  LLVMValueRef one = LLVMConstReal(f64, 1.0);
  Rcp64 r;
  r.B = LLVMBuildFPExt(b, bv, f64, "");
  r.nB = LLVMBuildFNeg(b, r.B, "");
  r.r0 = nv_intr(m, "llvm.nvvm.rcp.approx.ftz.d", r.B);
  LLVMValueRef r1 = fma3(m, r.r0, fma3(m, r.nB, r.r0, one), r.r0);
  r.r2 = fma3(m, r1, fma3(m, r.nB, r1, one), r1);
  return r;
}

static LLVMValueRef nv_fdiv_f32(CgMath *m, LLVMValueRef a, LLVMValueRef bv) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c), f32 = LLVMFloatTypeInContext(m->c);
  int level = fast_div_level();
  LLVMBasicBlockRef slow = NULL, join = NULL, from = NULL;
  LLVMValueRef qfast = NULL;
  Rcp64 rc = {NULL, NULL, NULL, NULL};
  /* float16 operands widened (cg_is_widened_half): every finite nonzero pair is inside Markstein's range,
   * so no range test and no branch (below). LOOM_GPU_HALF_DIV=0: the float32 paths (A/B timings). */
  static int half_div = -1;
  bool half = cg_is_widened_half(a) && cg_is_widened_half(bv) && cg_env_int_once(&half_div, "LOOM_GPU_HALF_DIV", 1);
  if (!m->uniform && (half || !m->no_branch) && level >= 1) {
    LLVMValueRef y = NULL, y0 = NULL;
    if (!m->rhs_varies && !reads_memory(bv, LLVMGetInsertBlock(b), 8)) {
      /* a divisor computed once per row or launch (LLVM hoists it): the correctly rounded reciprocal
       * from float64 */
      rc = rcp64_of(m, bv);
      y = LLVMBuildFPTrunc(b, rc.r2, f32, "rcp");
      if (half) y0 = LLVMBuildFPTrunc(b, rc.r0, f32, "");
    } else if (level >= 2 || half) {
      /* a divisor per point: rcp.approx and one Newton step in float32, as div.rn.f32's own fast path
       * (bench/ptx/check_div_newton.ptx: bit for bit with div.rn.f32 over 2^35 pairs in this range) */
      y0 = nv_intr(m, "llvm.nvvm.rcp.approx.ftz.f", bv);
      LLVMValueRef e = fma3(m, LLVMBuildFNeg(b, bv, ""), y0, LLVMConstReal(f32, 1.0));
      y = fma3(m, y0, e, y0);
    }
    if (y) {
      LLVMValueRef q = LLVMBuildFMul(b, a, y, "");
      LLVMValueRef r = fma3(m, LLVMBuildFNeg(b, bv, ""), q, a);
      qfast = fma3(m, r, y, q);
      if (half) {
        /* the cases outside (a zero: the sign of a * y0; an infinite or NaN operand, a zero divisor: q'
         * is NaN) take a * y0, y0 the approximate reciprocal (0 for an infinite b, infinite for a zero b),
         * which is then the IEEE quotient. The float32 result is the correctly rounded quotient, so its
         * float16 rounding is too (24 >= 2 * 11 + 2: double rounding is innocuous for division). */
        LLVMValueRef special = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealUNO, qfast, qfast, ""),
                                           LLVMBuildFCmp(b, LLVMRealOEQ, a, LLVMConstReal(f32, 0.0), ""), "");
        return LLVMBuildSelect(b, special, LLVMBuildFMul(b, a, y0, ""), qfast, "");
      }
      LLVMValueRef ok = LLVMBuildAnd(b, exp_in_markstein_range(m, a), exp_in_markstein_range(m, bv), "");
      LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(b));
      from = LLVMGetInsertBlock(b);
      slow = LLVMAppendBasicBlockInContext(m->c, fn, "div.slow");
      join = LLVMAppendBasicBlockInContext(m->c, fn, "div.join");
      LLVMBuildCondBr(b, ok, join, slow);
      LLVMPositionBuilderAtEnd(b, slow);
    }
  }
  if (!rc.r2) rc = rcp64_of(m, bv);
  LLVMValueRef A = LLVMBuildFPExt(b, a, f64, "");
  LLVMValueRef q0 = LLVMBuildFMul(b, A, rc.r2, "");
  LLVMValueRef q1 = fma3(m, fma3(m, rc.nB, q0, A), rc.r2, q0);
  /* a zero, infinite or NaN b, an infinite or NaN a: q1 is NaN; a zero a: q1 may lose the sign */
  LLVMValueRef special = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealUNO, q1, q1, ""),
                                     LLVMBuildFCmp(b, LLVMRealOEQ, a, LLVMConstReal(f32, 0.0), ""), "");
  LLVMValueRef q = LLVMBuildSelect(b, special, LLVMBuildFMul(b, A, rc.r0, ""), q1, "");
  LLVMValueRef qs = LLVMBuildFPTrunc(b, q, f32, "");
  if (!join) return qs;
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  LLVMValueRef phi = LLVMBuildPhi(b, f32, "div");
  LLVMValueRef vals[2] = {qfast, qs};
  LLVMBasicBlockRef bbs[2] = {from, slow};
  LLVMAddIncoming(phi, vals, bbs, 2);
  return phi;
}

/* A float32 math argument widened from float16 is converted by cvt.f32.f16 in inline assembly, which LLVM
 * cannot see through: otherwise it folds the device library's sign tests of the float32 value into tests
 * of the half's bits (tanhf's copysign: a shift, two logic operations, a compare and a select a point
 * where one LOP3 does; gelu in float16). The same conversion, so the same values. */
static LLVMValueRef nv_math_arg(CgMath *m, LLVMValueRef a) {
  if (!LLVMIsAFPExtInst(a) || !cg_is_widened_half(a)) return a; /* (a constant stays foldable) */
  LLVMValueRef h = LLVMGetOperand(a, 0);
  LLVMTypeRef i16 = LLVMInt16TypeInContext(m->c), f32 = LLVMFloatTypeInContext(m->c);
  LLVMTypeRef fty = LLVMFunctionType(f32, &i16, 1, 0);
  static const char text[] = "cvt.f32.f16 $0, $1;", cons[] = "=f,h";
  LLVMValueRef cvt = LLVMGetInlineAsm(fty, (char *)text, sizeof text - 1, (char *)cons, sizeof cons - 1, 0, 0,
                                      LLVMInlineAsmDialectATT, 0);
  LLVMValueRef bits = LLVMBuildBitCast(m->b, h, i16, "");
  return LLVMBuildCall2(m->b, fty, cvt, &bits, 1, "");
}

/* mov.b32 in inline assembly with side effects: LLVM neither folds nor merges two of them. */
static LLVMValueRef nv_opaque_i32(CgMath *m, LLVMValueRef v) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef fty = LLVMFunctionType(i32, &i32, 1, 0);
  static const char text[] = "mov.b32 $0, $1;", cons[] = "=r,r";
  LLVMValueRef mov = LLVMGetInlineAsm(fty, (char *)text, sizeof text - 1, (char *)cons, sizeof cons - 1, 1, 0,
                                      LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(m->b, fty, mov, &v, 1, "");
}

static LLVMValueRef nv_mulhi_u32(CgMath *m, LLVMValueRef a, LLVMValueRef bv) {
  LLVMValueRef args[2] = {a, bv};
  return cg_intrinsic(m, "llvm.nvvm.mulhi.ui", NULL, 0, args, 2); /* mul.hi.u32 */
}

static LLVMValueRef nv_sqrt_f32(CgMath *m, LLVMValueRef a) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c), f32 = LLVMFloatTypeInContext(m->c);
  LLVMValueRef x = LLVMBuildFPExt(b, a, f64, "");
  LLVMValueRef r = nv_intr(m, "llvm.nvvm.rsqrt.approx.ftz.d", x);
  LLVMValueRef h = LLVMBuildFMul(b, r, LLVMConstReal(f64, 0.5), "");
  LLVMValueRef y = LLVMBuildFMul(b, x, r, "");
  y = fma3(m, fma3(m, LLVMBuildFNeg(b, y, ""), y, x), h, y);
  y = fma3(m, fma3(m, LLVMBuildFNeg(b, y, ""), y, x), h, y);
  /* zero, infinite, negative or NaN x: y is NaN */
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, y, y, ""), nv_intr(m, "llvm.nvvm.sqrt.approx.f", a),
                         LLVMBuildFPTrunc(b, y, f32, ""), "");
}

static LLVMValueRef nv_frcp_approx_f32(CgMath *m, LLVMValueRef a) { return nv_intr(m, "llvm.nvvm.rcp.approx.ftz.f", a); }

/* An llvm.abs.i8/i16 call -> one inline asm block (sign-extend, abs.s32, truncate): opaque to LLVM, which
 * would fold any IR spelling back into abs.s16, and a value whose sign ptxas must extend for its users. */
static void fence_abs_call(LLVMContextRef c, LLVMValueRef call) {
  LLVMTypeRef t = LLVMTypeOf(call), i16 = LLVMInt16TypeInContext(c);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderBefore(b, call);
  LLVMValueRef x = LLVMGetOperand(call, 0);
  if (t != i16) x = LLVMBuildSExt(b, x, i16, "");
  static const char code[] = "{ .reg .s32 %t; cvt.s32.s16 %t, $1; abs.s32 %t, %t; cvt.u16.u32 $0, %t; }";
  static const char cons[] = "=h,h";
  LLVMTypeRef ft = LLVMFunctionType(i16, &i16, 1, 0);
  LLVMValueRef asmv = LLVMGetInlineAsm(ft, (char *)code, sizeof code - 1, (char *)cons, sizeof cons - 1, 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
  LLVMValueRef r = LLVMBuildCall2(b, ft, asmv, &x, 1, "");
  if (t != i16) r = LLVMBuildTrunc(b, r, t, "");
  LLVMReplaceAllUsesWith(call, r);
  LLVMInstructionEraseFromParent(call);
  LLVMDisposeBuilder(b);
}

void cg_nvptx_fence_narrow_abs(LLVMModuleRef mod) {
  LLVMContextRef c = LLVMGetModuleContext(mod);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;) {
        LLVMValueRef next = LLVMGetNextInstruction(i);
        LLVMValueRef callee = LLVMIsACallInst(i) ? LLVMGetCalledValue(i) : NULL;
        size_t n = 0;
        const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &n) : "";
        if ((n == 12 && strcmp(name, "llvm.abs.i16") == 0) || (n == 11 && strcmp(name, "llvm.abs.i8") == 0))
          fence_abs_call(c, i);
        i = next;
      }
}

bool cg_nvptx_fdiv_ieee(void) {
  const char *e = getenv("LOOM_NV_FDIV");
  return e && strcmp(e, "ieee") == 0;
}

void cg_nvptx_lower_hooks(CgGpuHooks *h) {
  h->wave = 32;
  h->as_global = 1;
  h->as_shared = 3;
  h->as_param = 0;
  h->as_private = 0;
  h->param_attr = "byval";
  h->shared_poison = false;
  h->index = nv_index;
  h->shuffle_xor = nv_shuffle_xor;
  h->barrier = nv_barrier;
  h->mark_kernel = nv_mark_kernel;
  h->ballot = nv_ballot;
  h->wave_sync = nv_wave_sync;
  h->fence_device = nv_fence_device;
  h->match_any = nv_match_any;
  h->math_name = nv_math_name;
  h->fdiv_f32 = cg_nvptx_fdiv_ieee() ? NULL : nv_fdiv_f32;
  h->math_arg = nv_math_arg;
  h->fsqrt_f32 = nv_sqrt_f32;
  h->frcp_approx_f32 = nv_frcp_approx_f32;
  h->mulhi_u32 = nv_mulhi_u32;
  h->opaque_i32 = nv_opaque_i32;
}

/* llvm.copysign.f32(mag, sign) -> (bits(mag) & 0x7fffffff) | (bits(sign) & 0x80000000), one LOP3 in SASS.
 * LLVM 19's NVPTX backend expands the intrinsic into a sign-bit test and a select of -|mag| and |mag|
 * (shr, and, setp, selp: SHF + ISETP + FSEL after ptxas), three instructions where one does: libdevice's
 * tanhf ends in a copysign, and float16 elementwise kernels are issue-bound on the H200 (gelu_f16: 86 % of
 * issue slots, ~34 instructions a point). Same bits for every input, NaNs included. Runs after the
 * optimization pipeline, so nothing folds the bit operations back. LOOM_GPU_COPYSIGN_BITS=0: off. */
void cg_nvptx_copysign_bits(LLVMModuleRef mod) {
  static int on = -1;
  if (!cg_env_int_once(&on, "LOOM_GPU_COPYSIGN_BITS", 1)) return;
  LLVMValueRef fn = LLVMGetNamedFunction(mod, "llvm.copysign.f32");
  if (!fn) return;
  LLVMContextRef c = LLVMGetModuleContext(mod);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c), f32 = LLVMFloatTypeInContext(c);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  for (LLVMUseRef u = LLVMGetFirstUse(fn); u;) {
    LLVMValueRef call = LLVMGetUser(u);
    u = LLVMGetNextUse(u);
    if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != fn) continue;
    LLVMPositionBuilderBefore(b, call);
    LLVMValueRef mag = LLVMBuildBitCast(b, LLVMGetOperand(call, 0), i32, "");
    LLVMValueRef sgn = LLVMBuildBitCast(b, LLVMGetOperand(call, 1), i32, "");
    mag = LLVMBuildAnd(b, mag, LLVMConstInt(i32, 0x7fffffffu, 0), "");
    sgn = LLVMBuildAnd(b, sgn, LLVMConstInt(i32, 0x80000000u, 0), "");
    LLVMValueRef r = LLVMBuildBitCast(b, LLVMBuildOr(b, mag, sgn, ""), f32, "");
    LLVMReplaceAllUsesWith(call, r);
    LLVMInstructionEraseFromParent(call);
  }
  LLVMDisposeBuilder(b);
}
