/* SPDX-License-Identifier: Apache-2.0 */
/* host_half.c: float16 vector operations the x86 backend would take apart, widened to float32 after
 * optimization (host kernels only).
 *
 * Kernels compute float16 values in float32 (the lowering's fpext / fptrunc), but InstCombine narrows the
 * operations that give the same result in float16 (comparisons, min / max, rounding, square roots: fcmp
 * (fpext a), (fpext b) -> fcmp a, b), and the loop vectorizer then widens those to <16 x half>. Without
 * AVX512-FP16 the x86 backend scalarizes such vectors (about 200 instructions for one <16 x half> fcmp or
 * maxnum, 500 for minimum), where it promotes fadd / fmul to float32 vectors with F16C conversions. This
 * pass, run on the optimized module, rewrites each such operation on half vectors as the same operation on
 * float32 vectors between fpext and fptrunc: the same values (exact for comparisons, min / max and rounding;
 * a float32 square root rounded to float16 is correctly rounded, 24 >= 2 * 11 + 2 bits), and the backend's
 * vcvtph2ps / vcvtps2ph around float32 vector code. Measured on this 2-core Zen 4 box: float16 relu
 * (maximum(x, 0), 2^24 points) 21.8 -> 1.3 ms, clip 41.8 -> 1.4, rows-of-16 max 23 -> 3 ms.
 */
#include <string.h>

#include <llvm-c/Core.h>

#include "codegen/cg_llvm.h"

/* The intrinsics widened: element-wise ones (the result has the operands' type) and the reductions of a
 * vector to its element. */
static const char *const elementwise[] = {"llvm.maxnum", "llvm.minnum", "llvm.maximum", "llvm.minimum", "llvm.floor",
                                          "llvm.ceil", "llvm.trunc", "llvm.rint", "llvm.nearbyint", "llvm.round",
                                          "llvm.roundeven", "llvm.sqrt"};
static const char *const reductions[] = {"llvm.vector.reduce.fmax", "llvm.vector.reduce.fmin",
                                         "llvm.vector.reduce.fmaximum", "llvm.vector.reduce.fminimum"};

static bool half_vector(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMHalfTypeKind;
}

static LLVMTypeRef float_like(LLVMContextRef c, LLVMTypeRef half_vec) {
  return LLVMVectorType(LLVMFloatTypeInContext(c), LLVMGetVectorSize(half_vec));
}

/* The intrinsic ID of the call's callee among `names` (0: none). */
static unsigned intrinsic_among(LLVMValueRef call, const char *const *names, size_t n) {
  LLVMValueRef fn = LLVMGetCalledValue(call);
  if (!fn || LLVMGetValueKind(fn) != LLVMFunctionValueKind) return 0;
  unsigned id = LLVMGetIntrinsicID(fn);
  if (!id) return 0;
  for (size_t i = 0; i < n; i++)
    if (LLVMLookupIntrinsicID(names[i], strlen(names[i])) == id) return id;
  return 0;
}

static void copy_fmf(LLVMValueRef from, LLVMValueRef to) {
  if (LLVMCanValueUseFastMathFlags(from) && LLVMCanValueUseFastMathFlags(to))
    LLVMSetFastMathFlags(to, LLVMGetFastMathFlags(from));
}

/* Rewrites instruction `in` (positioned before it) when it is one of the operations above on half
 * vectors; returns whether it did (the caller erases `in`). */
static bool widen(LLVMModuleRef mod, LLVMBuilderRef b, LLVMValueRef in) {
  LLVMContextRef c = LLVMGetModuleContext(mod);
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef repl = NULL;
  if (op == LLVMFCmp) {
    LLVMValueRef a = LLVMGetOperand(in, 0), y = LLVMGetOperand(in, 1);
    if (!half_vector(LLVMTypeOf(a))) return false;
    LLVMTypeRef ft = float_like(c, LLVMTypeOf(a));
    LLVMPositionBuilderBefore(b, in);
    repl = LLVMBuildFCmp(b, LLVMGetFCmpPredicate(in), LLVMBuildFPExt(b, a, ft, ""), LLVMBuildFPExt(b, y, ft, ""), "");
  } else if (op == LLVMCall) {
    bool ew = half_vector(LLVMTypeOf(in));
    unsigned id = ew ? intrinsic_among(in, elementwise, sizeof elementwise / sizeof *elementwise) : 0;
    if (!id && LLVMGetNumArgOperands(in) == 1 && half_vector(LLVMTypeOf(LLVMGetOperand(in, 0))))
      id = intrinsic_among(in, reductions, sizeof reductions / sizeof *reductions);
    if (!id) return false;
    unsigned nargs = LLVMGetNumArgOperands(in);
    if (nargs < 1 || nargs > 2) return false;
    LLVMTypeRef ht = LLVMTypeOf(LLVMGetOperand(in, 0)), ft = float_like(c, ht);
    LLVMPositionBuilderBefore(b, in);
    LLVMValueRef args[2];
    for (unsigned i = 0; i < nargs; i++) args[i] = LLVMBuildFPExt(b, LLVMGetOperand(in, i), ft, "");
    LLVMValueRef decl = LLVMGetIntrinsicDeclaration(mod, id, &ft, 1);
    LLVMValueRef call = LLVMBuildCall2(b, LLVMIntrinsicGetType(c, id, &ft, 1), decl, args, nargs, "");
    copy_fmf(in, call);
    repl = LLVMBuildFPTrunc(b, call, LLVMTypeOf(in), "");
  } else {
    return false;
  }
  copy_fmf(in, repl);
  LLVMReplaceAllUsesWith(in, repl);
  return true;
}

void cg_host_widen_half(LLVMModuleRef mod, const char *features) {
  if (features && strstr(features, "+avx512fp16")) return; /* the backend has float16 vectors */
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in;) {
        LLVMValueRef next = LLVMGetNextInstruction(in);
        if (widen(mod, b, in)) LLVMInstructionEraseFromParent(in);
        in = next;
      }
  LLVMDisposeBuilder(b);
}
