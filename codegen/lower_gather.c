/* SPDX-License-Identifier: Apache-2.0 */
/* lower_gather.c: data-dependent addressing in the shared lowering (every target): KI_GATHER loads and
 * scatter stores (KStore.scatter), ir.h states both.
 *
 * Both address base[b] + off[b] + computed, where off[b] is the buffer's element offset at the current
 * point as the loop code keeps it (per lane in vector entries) and the computed part is an int64
 * instruction; the sum is formed in int64 whatever the kernel's index width (a computed index may reach
 * past the 32-bit range the point offsets were sized for). A scatter store is guarded by
 * 0 <= index < limit (one unsigned compare) and branches around the store (a host scan's stores go to a stack
 * slot instead: no branch); its value, index and limit
 * are evaluated before the branch so that later stores of the phase may reuse them. ADD is an atomic
 * read-modify-write (monotonic: only the sum matters), so repeated indices all count on every target.
 */
#include "codegen/cg_lower.h"

bool cg_kernel_addresses_by_value(const KernelIr *k) {
  for (int32_t i = 0; k && i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_GATHER) return true;
  for (int32_t s = 0; k && s < k->nstore; s++)
    if (k->stores[s].scatter) return true;
  return false;
}

/* int64 element offset of buffer b at the current point plus the int64 value delta. */
static LLVMValueRef offset_plus(Lower *L, int b, LLVMValueRef delta) {
  LLVMValueRef off = L->final_phase ? L->ooff[b] : L->off[b];
  if (!off) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: buffer %d is addressed outside a point loop", b);
    return delta;
  }
  if (LLVMTypeOf(off) != L->i64) off = LLVMBuildSExt(L->m.b, off, L->i64, "");
  return LLVMBuildAdd(L->m.b, off, delta, "");
}

LLVMValueRef cg_gather_load(Lower *L, int i) {
  const KInstr *in = &L->k->instrs[i];
  CgMath *m = &L->m;
  int b = in->buf;
  LoomDType st = (LoomDType)L->k->bufs[b].dtype;
  LLVMValueRef p = cg_elem_ptr(L, b, offset_plus(L, b, L->cache[in->src[0]]));
  LLVMValueRef v = LLVMBuildLoad2(m->b, cg_mem_type(m, st), p, "gather");
  LLVMSetAlignment(v, dtype_align(st));
  return cg_from_mem(m, st, (LoomDType)in->dtype, v);
}

/* LOOM_HOST_COMPACT_BRANCHLESS=0: host scans branch around a skipped scatter store (A/B timings) */
static bool compact_branchless(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_HOST_COMPACT_BRANCHLESS", 1) != 0;
}

void cg_scatter_store(Lower *L, const KStore *s) {
  CgMath *m = &L->m;
  const KernelIr *k = L->k;
  int32_t roots[3] = {s->value, s->index, s->limit};
  cg_eval_needed(L, roots, 3);
  LoomDType bt = (LoomDType)k->bufs[s->buf].dtype;
  LLVMValueRef v = cg_to_mem(m, (LoomDType)k->instrs[s->value].dtype, bt, L->cache[s->value]);
  LLVMValueRef idx = L->cache[s->index], ok = LLVMBuildICmp(m->b, LLVMIntULT, idx, L->cache[s->limit], "in.range");
  LLVMValueRef p = cg_elem_ptr(L, s->buf, offset_plus(L, s->buf, idx));
  if (s->op != IR_SCATTER_ADD && !m->gpu && k->nphase > 0 && k->phases[0].kind == KP_SCAN && compact_branchless()) {
    /* a host scan's scatter is a compaction (nonzero, x[mask], compress: each kept point to its rank): the
     * skipped points store to a slot of the worker's stack instead of branching around the store, whose
     * direction follows the data (a mispredicted branch for every few points of a random mask) */
    LLVMValueRef sink = cg_entry_alloca(L, cg_mem_type(m, bt), "scatter.sink");
    /* sink + ((p - sink) & mask), mask = -ok passed through an empty inline asm: LLVM folds the and of a
     * sign-extended compare back into a select of the pointers, and x86's cmov conversion makes that a
     * branch again (measured: no change at 50 % kept) */
    LLVMValueRef ps = LLVMBuildPtrToInt(m->b, sink, L->i64, ""), pp = LLVMBuildPtrToInt(m->b, p, L->i64, "");
    LLVMTypeRef fty = LLVMFunctionType(L->i64, &L->i64, 1, 0);
    LLVMValueRef opaque = LLVMGetInlineAsm(fty, "", 0, "=r,0", 4, 0, 0, LLVMInlineAsmDialectATT, 0);
    LLVMValueRef mask0 = LLVMBuildSExt(m->b, ok, L->i64, "");
    LLVMValueRef mask = LLVMBuildCall2(m->b, fty, opaque, &mask0, 1, "");
    LLVMValueRef at = LLVMBuildIntToPtr(m->b, LLVMBuildAdd(m->b, ps, LLVMBuildAnd(m->b, LLVMBuildSub(m->b, pp, ps, ""), mask, ""), ""),
                                        LLVMTypeOf(p), "scatter.at");
    LLVMValueRef st = LLVMBuildStore(m->b, v, at);
    LLVMSetAlignment(st, dtype_align(bt));
    LLVMSetVolatile(st, 1); /* else the store to a slot never read is dead, and LLVM puts the branch back */
    return;
  }
  LLVMBasicBlockRef then = cg_new_bb(L, "scatter.store"), done = cg_new_bb(L, "scatter.done");
  LLVMBuildCondBr(m->b, ok, then, done);
  LLVMPositionBuilderAtEnd(m->b, then);
  if (s->op == IR_SCATTER_ADD) {
    LLVMAtomicRMWBinOp op = dtype_is_float(bt) ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd;
    LLVMValueRef r = LLVMBuildAtomicRMW(m->b, op, p, v, LLVMAtomicOrderingMonotonic, 0);
    LLVMSetAlignment(r, dtype_align(bt));
  } else {
    LLVMSetAlignment(LLVMBuildStore(m->b, v, p), dtype_align(bt));
  }
  LLVMBuildBr(m->b, done);
  LLVMPositionBuilderAtEnd(m->b, done);
}
