/* SPDX-License-Identifier: Apache-2.0 */
/* math_int.c: integer power and shifts for every target (math.c's cg_elem calls them): wrapping
 * results, NumPy's semantics for negative exponents and out-of-range shift counts (ir.h). */
#include "codegen/cg_llvm.h"

static bool is_signed(LoomDType t) { return t >= LOOM_INT8 && t <= LOOM_INT64; }
/* A negative exponent's integer power (ir.h): 1 for base 1, +-1 for base -1 (by parity), else 0; r is the
 * power for the exponent's non-negative values. */
static LLVMValueRef int_pow_negative(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef e, LLVMValueRef eneg,
                                     LLVMValueRef r) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef zero = cg_iconst(m, t, 0), one = cg_iconst(m, t, 1);
  LLVMValueRef a1 = LLVMBuildICmp(b, LLVMIntEQ, a, one, "");
  LLVMValueRef am1 = LLVMBuildICmp(b, LLVMIntEQ, a, cg_iconst(m, t, -1), "");
  LLVMValueRef eodd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, e, one, ""), zero, "");
  LLVMValueRef pm1 = LLVMBuildSelect(b, eodd, cg_iconst(m, t, -1), one, "");
  LLVMValueRef negv = LLVMBuildSelect(b, a1, one, LLVMBuildSelect(b, am1, pm1, zero, ""), "");
  return LLVMBuildSelect(b, eneg, negv, r, "");
}

/* Integer power by squaring (wraps); negative exponents as ir.h says. 32- and 64-bit: a small loop.
 * 8- and 16-bit: one unrolled step per exponent bit, without a loop, in 32-bit registers, truncated
 * (the low bits of a product do not depend on the high ones): on the H200 the 16-bit loop gave 1 for
 * int16 32767 ** 32767 and 100 ** 100 once the driver JIT compiled it at level 1 (the tier-up compile;
 * level 0 was right). */
LLVMValueRef cg_int_pow(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef e) {
  LLVMBuilderRef b = m->b;
  if (cg_int_bits(t) < 32) {
    LoomDType w = is_signed(t) ? LOOM_INT32 : LOOM_UINT32;
    LLVMTypeRef wty = cg_reg_type(m, w);
    LLVMValueRef aw = is_signed(t) ? LLVMBuildSExt(b, a, wty, "") : LLVMBuildZExt(b, a, wty, "");
    LLVMValueRef ew = is_signed(t) ? LLVMBuildSExt(b, e, wty, "") : LLVMBuildZExt(b, e, wty, "");
    LLVMValueRef zero = cg_iconst(m, w, 0), one = cg_iconst(m, w, 1);
    LLVMValueRef eneg = LLVMBuildICmp(b, LLVMIntSLT, ew, zero, ""); /* never for unsigned (zero-extended) */
    LLVMValueRef e0 = LLVMBuildSelect(b, eneg, zero, ew, "");
    LLVMValueRef r = one, base = aw;
    for (int bit = 0; bit < cg_int_bits(t); bit++) {
      LLVMValueRef set = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, e0, cg_iconst(m, w, 1ll << bit), ""), zero, "");
      r = LLVMBuildSelect(b, set, LLVMBuildMul(b, r, base, ""), r, "");
      if (bit + 1 < cg_int_bits(t)) base = LLVMBuildMul(b, base, base, "");
    }
    r = int_pow_negative(m, w, aw, ew, eneg, r);
    return LLVMBuildTrunc(b, r, cg_reg_type(m, t), "");
  }
  LLVMTypeRef ty = cg_reg_type(m, t);
  LLVMValueRef zero = cg_iconst(m, t, 0), one = cg_iconst(m, t, 1);
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(b));
  LLVMValueRef eneg = is_signed(t) ? LLVMBuildICmp(b, LLVMIntSLT, e, zero, "")
                                   : LLVMConstInt(LLVMInt1TypeInContext(m->c), 0, 0);
  LLVMValueRef e0 = LLVMBuildSelect(b, eneg, zero, e, "");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(m->c, fn, "pow.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(m->c, fn, "pow.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->c, fn, "pow.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef r = LLVMBuildPhi(b, ty, "pow.r");
  LLVMValueRef base = LLVMBuildPhi(b, ty, "pow.b");
  LLVMValueRef ex = LLVMBuildPhi(b, ty, "pow.e");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, ex, zero, ""), done, body);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, ex, one, ""), zero, "");
  LLVMValueRef r2 = LLVMBuildSelect(b, odd, LLVMBuildMul(b, r, base, ""), r, "");
  LLVMValueRef base2 = LLVMBuildMul(b, base, base, "");
  LLVMValueRef ex2 = LLVMBuildLShr(b, ex, one, "");
  LLVMBuildBr(b, head);
  LLVMValueRef vr[2] = {one, r2}, vb[2] = {a, base2}, ve[2] = {e0, ex2};
  LLVMBasicBlockRef from[2] = {pre, body};
  LLVMAddIncoming(r, vr, from, 2);
  LLVMAddIncoming(base, vb, from, 2);
  LLVMAddIncoming(ex, ve, from, 2);
  LLVMPositionBuilderAtEnd(b, done);
  return is_signed(t) ? int_pow_negative(m, t, a, e, eneg, r) : r;
}

/* Shifts: counts >= bits (or negative) give 0, or -1 for a negative value shifted right. */
LLVMValueRef cg_int_shift(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef s, bool left) {
  LLVMBuilderRef b = m->b;
  int bits = cg_int_bits(t);
  LLVMValueRef oob = LLVMBuildICmp(b, LLVMIntUGE, s, cg_iconst(m, t, bits), ""); /* negative too */
  if (left) {
    LLVMValueRef r = LLVMBuildShl(b, a, LLVMBuildSelect(b, oob, cg_iconst(m, t, 0), s, ""), "");
    return LLVMBuildSelect(b, oob, cg_iconst(m, t, 0), r, "");
  }
  if (is_signed(t)) return LLVMBuildAShr(b, a, LLVMBuildSelect(b, oob, cg_iconst(m, t, bits - 1), s, ""), "");
  LLVMValueRef r = LLVMBuildLShr(b, a, LLVMBuildSelect(b, oob, cg_iconst(m, t, 0), s, ""), "");
  return LLVMBuildSelect(b, oob, cg_iconst(m, t, 0), r, "");
}
