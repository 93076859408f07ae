/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_final_block.c: the FINAL phase of host row reductions run over blocks of O points.
 *
 * run()'s per-O walk (lower_host.c cg_host_body_o_point) folds each O point's row and then runs the FINAL
 * phase at that point: one scalar evaluation a row. When that phase computes a math function (cg_costly_values:
 * arccosh(1 + 2 |u - v|^2 / ...) over rows of 10, a log or sqrt of each row's sum) the scalar call is SLEEF's
 * widest vector variant run for one lane (math.c lanes_fn): ~50 ns a row where the rows themselves take a few.
 * Here the walk visits O points in blocks of CG_FINAL_BLOCK: for each point of the block the REDUCE phases run as
 * before and their results are stashed in arrays on the stack; then a counted loop over the block runs the FINAL
 * phase from the stash at each point, a loop the vectorizer widens (the math at full vector width, the same
 * per-lane function as the scalar call: the same bits). The folds are unchanged. LOOM_HOST_FINAL_BLOCK=0: off.
 */
#include <string.h>

#include "codegen/cg_lower.h"

enum { CG_FINAL_BLOCK = 256 };

struct CgFinalStash {
  LLVMValueRef count;        /* i64 alloca: points stashed in the current block */
  LLVMValueRef *acc, *idx;   /* nphase: [CG_FINAL_BLOCK x T] allocas of each REDUCE phase's value / index */
  LLVMTypeRef *accty;        /* nphase: the value types */
};

bool cg_host_final_block_ok(const Lower *L) {
  static int knob = -1;
  const KernelIr *k = L->k;
  if (!cg_env_int_once(&knob, "LOOM_HOST_FINAL_BLOCK", 1) || L->outer || cg_host_rows_on(L) || k->snippet ||
      k->nuser_arg || k->nkeep < 1 || k->nkeep >= k->ndim || k->nphase < 2 || cg_has_side_stores(k) ||
      cg_kernel_addresses_by_value(k))
    return false;
  for (int p = 0; p < k->nphase - 1; p++)
    if (k->phases[p].kind != KP_REDUCE) return false;
  const KPhase *fin = &k->phases[k->nphase - 1];
  if (fin->kind != KP_FINAL || fin->nstores < 1) return false;
  uint8_t small[256], *costly = k->ninstr <= (int32_t)sizeof small ? small : ctx_alloc(L->ctx, (size_t)k->ninstr);
  if (!costly) return false;
  cg_costly_values(k, costly);
  bool worth = false;
  for (int s = fin->store_begin; s < fin->store_begin + fin->nstores; s++) worth |= costly[k->stores[s].value] != 0;
  if (costly != small) ctx_free(L->ctx, costly);
  return worth;
}

/* FINAL phase at one O point of the per-O walk: its REDUCE phases' results into the stash. */
void cg_host_final_stash(Lower *L) {
  struct CgFinalStash *st = L->fstash;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef j = LLVMBuildLoad2(b, L->i64, st->count, "fs.j");
  for (int p = 0; p < k->nphase - 1; p++) {
    if (!L->acc[p]) continue;
    if (!st->acc[p]) {
      st->accty[p] = LLVMTypeOf(L->acc[p]);
      st->acc[p] = cg_entry_alloca(L, LLVMArrayType(st->accty[p], CG_FINAL_BLOCK), "fs.acc");
      if (is_arg(k->phases[p].reduce_op)) st->idx[p] = cg_entry_alloca(L, LLVMArrayType(L->i64, CG_FINAL_BLOCK), "fs.idx");
    }
    LLVMValueRef ix[2] = {cg_i64(&L->m, 0), j};
    LLVMBuildStore(b, L->acc[p], LLVMBuildInBoundsGEP2(b, LLVMArrayType(st->accty[p], CG_FINAL_BLOCK), st->acc[p], ix, 2, ""));
    if (st->idx[p] && L->accidx[p])
      LLVMBuildStore(b, L->accidx[p], LLVMBuildInBoundsGEP2(b, LLVMArrayType(L->i64, CG_FINAL_BLOCK), st->idx[p], ix, 2, ""));
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, j, cg_i64(&L->m, 1), ""), st->count);
}

/* The FINAL phase at O points o0 + j, j < n, from the stash: a counted loop. */
static void run_stashed(Lower *L, struct CgFinalStash *st, LLVMValueRef o0, LLVMValueRef n) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), body = cg_new_bb(L, "fs.body"), done = cg_new_bb(L, "fs.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, n, cg_i64(&L->m, 0), ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "fs.i");
  cg_host_set_o_offsets(L, LLVMBuildNSWAdd(b, o0, j, ""));
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)k->nbuf);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef ix[2] = {cg_i64(&L->m, 0), j};
  for (int p = 0; p < k->nphase - 1; p++) {
    if (!st->acc[p]) continue;
    LLVMTypeRef at = LLVMArrayType(st->accty[p], CG_FINAL_BLOCK);
    L->acc[p] = LLVMBuildLoad2(b, st->accty[p], LLVMBuildInBoundsGEP2(b, at, st->acc[p], ix, 2, ""), "");
    L->accidx[p] = st->idx[p] ? LLVMBuildLoad2(b, L->i64, LLVMBuildInBoundsGEP2(b, LLVMArrayType(L->i64, CG_FINAL_BLOCK),
                                                                                st->idx[p], ix, 2, ""), "")
                              : cg_i64(&L->m, 0);
  }
  cg_run_final_phase(L, &k->phases[k->nphase - 1]);
  LLVMValueRef j1 = LLVMBuildAdd(b, j, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(b);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, n, ""), body, done);
  LLVMValueRef inc[2] = {cg_i64(&L->m, 0), j1};
  LLVMBasicBlockRef from[2] = {pre, latch};
  LLVMAddIncoming(j, inc, from, 2);
  LLVMPositionBuilderAtEnd(b, done);
}

void cg_host_walk_final_blocks(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  int nb = k->nbuf;
  struct CgFinalStash st = {.count = cg_entry_alloca(L, L->i64, "fs.count")};
  st.acc = ctx_calloc(L->ctx, (size_t)k->nphase, sizeof(LLVMValueRef));
  st.idx = ctx_calloc(L->ctx, (size_t)k->nphase, sizeof(LLVMValueRef));
  st.accty = ctx_calloc(L->ctx, (size_t)k->nphase, sizeof(LLVMTypeRef));
  LLVMValueRef *saved = ctx_calloc(L->ctx, (size_t)nb + 1, sizeof(LLVMValueRef));
  if (!st.acc || !st.idx || !st.accty || !saved) {
    ctx_free(L->ctx, st.acc), ctx_free(L->ctx, st.idx), ctx_free(L->ctx, st.accty), ctx_free(L->ctx, saved);
    cg_host_walk(L, 0, k->nkeep, lo, hi, cg_host_body_o_point, NULL);
    return;
  }
  memcpy(saved, L->off, sizeof(LLVMValueRef) * (size_t)nb);
  LLVMValueRef pos = cg_entry_alloca(L, L->i64, "fs.o0");
  LLVMBuildStore(b, lo, pos);
  LLVMBasicBlockRef head = cg_new_bb(L, "fs.block"), body = cg_new_bb(L, "fs.walk"), done = cg_new_bb(L, "fs.end");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef o0 = LLVMBuildLoad2(b, L->i64, pos, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o0, hi, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef e = LLVMBuildNSWAdd(b, o0, cg_i64(&L->m, CG_FINAL_BLOCK), "");
  LLVMValueRef o1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, e, hi, ""), e, hi, "");
  LLVMBuildStore(b, cg_i64(&L->m, 0), st.count);
  L->fstash = &st;
  cg_host_walk(L, 0, k->nkeep, o0, o1, cg_host_body_o_point, NULL);
  L->fstash = NULL;
  L->depth = 0; /* the FINAL loop starts from the entry's offsets again */
  L->off = L->levels;
  memcpy(L->off, saved, sizeof(LLVMValueRef) * (size_t)nb);
  cg_clear_cache(L);
  run_stashed(L, &st, o0, LLVMBuildSub(b, o1, o0, ""));
  cg_clear_cache(L);
  L->off = L->levels;
  memcpy(L->off, saved, sizeof(LLVMValueRef) * (size_t)nb);
  LLVMBuildStore(b, o1, pos);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  ctx_free(L->ctx, st.acc), ctx_free(L->ctx, st.idx), ctx_free(L->ctx, st.accty), ctx_free(L->ctx, saved);
}
