/* lower_random.c: the counter-based generator behind loom.random, lowered once for every target.
 *
 * RANDOM_BITS(key, counter) and RANDOM_BITS_HI(key, counter) are Philox4x32-10 (Salmon, Moraes, Dror,
 * Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC'11; the generator of Random123, cuRAND and
 * JAX): the key is the two 32-bit words (lo, hi) of the uint64 `key`, the counter the four words
 * (counter lo, counter hi, 0, 0); RANDOM_BITS gives output words 0 | 1 << 32, RANDOM_BITS_HI words
 * 2 | 3 << 32 of the same block (LLVM's CSE computes the block once when a kernel needs both).
 *
 * Only integer adds, xors and 32 x 32 -> 64-bit multiplies (the high half by a shift), the same LLVM IR
 * on every target, so the host, NVIDIA and AMD produce the same bits: a multiply of two zero-extended
 * i32 is what x86 (vpmuludq), NVPTX (mul.wide.u32) and AMDGPU (v_mad_u64_u32) each have a native form of.
 */
#include "codegen/cg_llvm.h"

enum { PHILOX_ROUNDS = 10 };
static const uint32_t PHILOX_M0 = 0xD2511F53u, PHILOX_M1 = 0xCD9E8D57u; /* round multipliers */
static const uint32_t PHILOX_W0 = 0x9E3779B9u, PHILOX_W1 = 0xBB67AE85u; /* key schedule (Weyl) */

/* hi and lo 32 bits of the 64-bit product of two i32 values, through one i64 multiply. */
static void mulhilo(CgMath *m, uint32_t mult, LLVMValueRef x, LLVMValueRef *hi, LLVMValueRef *lo) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), i64 = LLVMInt64TypeInContext(m->c);
  LLVMValueRef p = LLVMBuildMul(m->b, LLVMBuildZExt(m->b, x, i64, ""), LLVMConstInt(i64, mult, 0), "");
  *lo = LLVMBuildMul(m->b, x, LLVMConstInt(i32, mult, 0), ""); /* an i32 multiply: no 64-bit one survives */
  *hi = LLVMBuildTrunc(m->b, LLVMBuildLShr(m->b, p, LLVMConstInt(i64, 32, 0), ""), i32, "");
}

LLVMValueRef cg_random_bits(CgMath *m, LLVMValueRef key, LLVMValueRef counter, bool high_words) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), i64 = LLVMInt64TypeInContext(m->c);
  LLVMValueRef sh = LLVMConstInt(i64, 32, 0);
  LLVMValueRef zero = LLVMConstInt(i32, 0, 0);
  LLVMValueRef c[4] = {LLVMBuildTrunc(b, counter, i32, ""), LLVMBuildTrunc(b, LLVMBuildLShr(b, counter, sh, ""), i32, ""),
                       zero, zero};
  LLVMValueRef k[2] = {LLVMBuildTrunc(b, key, i32, ""), LLVMBuildTrunc(b, LLVMBuildLShr(b, key, sh, ""), i32, "")};
  for (int r = 0; r < PHILOX_ROUNDS; r++) {
    if (r > 0) {
      k[0] = LLVMBuildAdd(b, k[0], LLVMConstInt(i32, PHILOX_W0, 0), "");
      k[1] = LLVMBuildAdd(b, k[1], LLVMConstInt(i32, PHILOX_W1, 0), "");
    }
    LLVMValueRef hi0, lo0, hi1, lo1;
    mulhilo(m, PHILOX_M0, c[0], &hi0, &lo0);
    mulhilo(m, PHILOX_M1, c[2], &hi1, &lo1);
    LLVMValueRef n0 = LLVMBuildXor(b, LLVMBuildXor(b, hi1, c[1], ""), k[0], "");
    LLVMValueRef n2 = LLVMBuildXor(b, LLVMBuildXor(b, hi0, c[3], ""), k[1], "");
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
  }
  LLVMValueRef w_lo = c[high_words ? 2 : 0], w_hi = c[high_words ? 3 : 1];
  return LLVMBuildOr(b, LLVMBuildZExt(b, w_lo, i64, ""), LLVMBuildShl(b, LLVMBuildZExt(b, w_hi, i64, ""), sh, ""), "");
}
