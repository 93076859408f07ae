/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_by_strides.c: host reductions whose walk the strides pick at run time (run() and the column
 * split's query), split out of lower_host.c. */
#include <string.h>

#include "codegen/cg_lower.h"

/* Reductions whose big operand strides along both the last O dim and the innermost R dim by run-time amounts
 * (cg_reduce_walk's by_strides: x[:, ::2].sum(0), x.T[::2].sum(1), x[::2, ::3].max(0)): which walk reads it
 * in memory order depends on the strides. The per-O walk strides down R one scalar at a time (a float sum
 * is a serial chain), the outer walk folds a block of O points per R point (independent accumulators,
 * vector loops): run() takes the outer walk where the operand's O stride is the smaller, else the per-O
 * walk. Their column split (colpart: the outer walk over a slab) answers the launcher's query first
 * (codegen.h CG_COL_BY_STRIDES, cg_host_col_query), so it is planned only where the strides pick the outer walk; no inner R
 * split (cg_host_row_part). Only REDUCE and FINAL phases. 4001 x 3001 float32, one Zen 4 thread:
 * x[:, ::2].sum(0) 14.3 -> 6.7 ms, x.T[::2].sum(1) 14.1 -> 6.6 (DIAGNOSIS.md, session 35).
 * LOOM_HOST_WALK_BY_STRIDES=0: the per-O walk always (A/B).
 * A JIT launch decides it before compiling instead (cg_host_walk_cols, runtime/host_device.c): where the strides
 * pick the outer walk the kernel is compiled with KernelIr.walk_cols, planned as any outer kernel (its MAP phase
 * too: x[:, ::2] / x[:, ::2].sum(0), with the column split); the run-time choice stays for the generic kernel
 * (AOT bundles, and launches whose strides pick the per-O walk). */
bool cg_host_by_strides_ok(const KernelIr *k) {
  static int knob = -1;
  if (!cg_env_int_once(&knob, "LOOM_HOST_WALK_BY_STRIDES", 1) || k->snippet || k->row_extent || k->nuser_arg) return false;
  for (int p = 0; p < k->nphase; p++)
    if (k->phases[p].kind != KP_REDUCE && k->phases[p].kind != KP_FINAL) return false;
  return true;
}

int cg_host_walk_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  static int knob = -1, at_launch = -1;
  if (!k || k->call || !cg_env_int_once(&knob, "LOOM_HOST_WALK_BY_STRIDES", 1) ||
      !cg_env_int_once(&at_launch, "LOOM_HOST_COL_SPECIALIZE", 1) || k->snippet || k->row_extent || k->nuser_arg)
    return 0;
  return cg_strides_pick_cols(k, shape, bind, cg_outer_map_ok(k));
}

static LLVMValueRef abs_i64(Lower *L, LLVMValueRef v) {
  LLVMBuilderRef b = L->m.b;
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, cg_i64(&L->m, 0), ""), LLVMBuildNeg(b, v, ""), v, "");
}

/* i1: whether the strides pick the outer walk (the deciding buffer's last O dim strides less than its
 * innermost R dim, in magnitude): run() and colpart's query (cg_host_col_query) decide alike. */
static LLVMValueRef strides_pick_outer(Lower *L) {
  const KernelIr *k = L->k;
  int bi = L->outer_by_strides, nd = k->ndim;
  LLVMValueRef so = abs_i64(L, L->stride[bi * nd + k->nkeep - 1]), sr = abs_i64(L, L->stride[bi * nd + nd - 1]);
  return LLVMBuildICmp(L->m.b, LLVMIntULT, so, sr, "");
}

void cg_host_run_by_strides(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  int nb = k->nbuf;
  LLVMBasicBlockRef outer = cg_new_bb(L, "walk.outer"), per_o = cg_new_bb(L, "walk.per_o"), done = cg_new_bb(L, "walk.done");
  LLVMBuildCondBr(b, strides_pick_outer(L), outer, per_o);
  LLVMValueRef *saved = ctx_alloc(L->ctx, sizeof(LLVMValueRef) * (size_t)(nb > 0 ? nb : 1));
  if (!saved) {
    diag_error(L->m.d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering kernel '%s'", k->name);
    return;
  }
  memcpy(saved, L->off, sizeof(LLVMValueRef) * (size_t)nb);
  LLVMPositionBuilderAtEnd(b, outer);
  cg_host_run_outer(L, lo, hi);
  LLVMBuildBr(b, done);
  L->depth = 0; /* the per-O walk starts from the entry's offsets again */
  L->off = L->levels;
  memcpy(L->off, saved, sizeof(LLVMValueRef) * (size_t)nb);
  ctx_free(L->ctx, saved);
  cg_clear_cache(L);
  LLVMPositionBuilderAtEnd(b, per_o);
  L->outer = false;
  cg_host_walk(L, 0, k->nkeep, lo, hi, cg_host_body_o_point, NULL);
  L->outer = true;
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}

/* colpart of a kernel that walks by strides (CG_COL_BY_STRIDES, codegen.h): with a->nparts == 0
 * (CgColSplit word 6) only the query, 1 or 0 into *(int64_t *)a->parts (word 7); else the column split's
 * slab (the outer walk). */
void cg_host_col_query(Lower *L, LLVMValueRef args) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef six = cg_i64(&L->m, 6), seven = cg_i64(&L->m, 7);
  LLVMValueRef nparts = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, args, &six, 1, ""), "");
  LLVMBasicBlockRef ask = cg_new_bb(L, "col.query"), part = cg_new_bb(L, "col.slab"), done = cg_new_bb(L, "col.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, nparts, cg_i64(&L->m, 0), ""), ask, part);
  LLVMPositionBuilderAtEnd(b, ask);
  LLVMValueRef out = LLVMBuildLoad2(b, L->ptr, LLVMBuildGEP2(b, L->i64, args, &seven, 1, ""), "");
  LLVMBuildStore(b, LLVMBuildZExt(b, strides_pick_outer(L), L->i64, ""), out);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, part);
  cg_host_col_part(L, args);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}

