/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_strided.c: addresses of small constant-stride reads and writes in host row walks.
 *
 * A read with a constant stride s >= 2 along the innermost loop (x[:, ::3], x[..., 0] of interleaved
 * data, the real part of complex values, a field of a small struct) is vectorized by LLVM as wide
 * contiguous loads plus shuffles (an interleaved group; for one member, a group with gaps and a scalar
 * epilogue) only if LoopAccessAnalysis proves its address sequence does not wrap (getPtrStride: the
 * pointer's AddRec has no-wrap flags, or it is an inbounds GEP whose one index is an nsw multiple of an
 * nsw AddRec of the loop). Otherwise it becomes `llvm.masked.gather` (vgatherdps: about one element a
 * cycle on Zen 4; x[:, ::3] * 2 + 1 ran 3x slower than its bytes allow) or, with +prefer-no-gather,
 * scalar loads. Groups of two members or more with no gap need no such proof, which is why RGB planes
 * and pairs were already fast. Two things defeated the proof:
 *   - an address `gep inbounds float, row, (mul nsw x, 3)` is rewritten by InstCombine to a GEP of bytes
 *     with `mul x, 12`, dropping the nsw (powers of two become `shl nsw`, which keeps it);
 *   - x = (the segment's first column) + j is an AddRec SCEV cannot always prove nsw (the blocked walk
 *     of compensated sums starts segments at run-time offsets).
 * So the address is emitted in bytes, `gep inbounds i8, row, (mul nsw x, s * size)`, which InstCombine
 * leaves alone; and in a blocked walk (compensated sums, cg_host_walk_blocked) such a buffer's row pointer
 * sits at the segment's first point and x is the inner loop's own counter j (0 .. the segment's length).
 * Unblocked walks keep the row's pointer and x = first column + j, which SCEV does prove nsw there: for
 * strides 2 and 4 their machine code is unchanged (rope_interleaved, avgpool2x2, stereo_mid_side).
 * The strides that are constants in the kernel are the layout classes 2, 3 and 4 (ir.h KLayout); LLVM
 * forms such groups up to its max-interleave-group-factor of 8. Run-time strides (class ANY: 5 and up,
 * negative ones but -1) keep LLVM's versioning on stride 1 and scalar loads otherwise: making 5..8
 * constant classes was tried and measured slower for 6-8 (x[:, ::8] 0.55 -> 0.82 ms in cache: permutes
 * of 8 vectors per output vector against 2-3 scalar loads a cycle), so it was not kept.
 * LOOM_HOST_STRIDED_BYTES=0 restores the element GEP from the row's first point (A/B timings).
 */
#include "codegen/cg_lower.h"

static bool strided_on(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_HOST_STRIDED_BYTES", 1) != 0;
}

bool cg_host_strided_from_segment(const Lower *L, int b, int last, bool blocked) {
  const KernelIr *k = L->k;
  LLVMValueRef s = L->stride[b * k->ndim + last];
  return blocked && last == k->ndim - 1 && LLVMIsAConstantInt(s) && LLVMConstIntGetSExtValue(s) >= 2 && strided_on();
}

LLVMValueRef cg_host_row_point_ptr(Lower *L, int b) {
  LLVMBuilderRef bd = L->m.b;
  LoomDType st = (LoomDType)L->k->bufs[b].dtype;
  LLVMValueRef rel = L->rowrel[b];
  /* the walk's (or the row jam's) rowrel: `mul nsw x, s`, s a constant of 2 or more */
  if (strided_on() && LLVMIsAInstruction(rel) && LLVMGetInstructionOpcode(rel) == LLVMMul && LLVMGetNSW(rel) &&
      LLVMIsAConstantInt(LLVMGetOperand(rel, 1))) {
    int64_t s = LLVMConstIntGetSExtValue(LLVMGetOperand(rel, 1));
    if (s >= 2) {
      LLVMValueRef bytes = LLVMBuildNSWMul(bd, LLVMGetOperand(rel, 0), cg_i64(&L->m, s * (int64_t)loom_dtype_size(st)), "");
      return LLVMBuildInBoundsGEP2(bd, LLVMInt8TypeInContext(L->m.c), L->rowptr[b], &bytes, 1, "");
    }
  }
  return LLVMBuildInBoundsGEP2(bd, cg_mem_type(&L->m, st), L->rowptr[b], &rel, 1, "");
}
