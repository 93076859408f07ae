/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_colfold.c: the block fold of COL split reductions' `part` entry (codegen.h: extra word 2 >> 8).
 *
 * A COL part thread folds one (part, o) item over its part's R range. Without the fold, a block of 256
 * threads holds 256 / nO parts of the same O points (nO <= 256) and every thread writes its record, so
 * the finish folds nparts records per O point: BatchNorm1d statistics over 2^20 x 64 wrote 4096 moment
 * records a column (8 MB), and its block finish (one block a column, each thread's records 2 KB apart)
 * took 17 of 92 us under Nsight Compute on the H200. With the fold (g >= 2), a block takes a tile of g
 * parts x cw = blockDim / g O points; its threads write their records into shared memory and the tile's
 * first part's threads fold the g records of their O point in part order (Chan's merge for the moments,
 * the ordered combine for the value) into ONE record, partials[pb * nO + o] for part block pb: g times
 * fewer records to store and to finish. Fixed order and tree: the same sizes and launch shape give the
 * same bits (the launcher picks g from the sizes alone: runtime/gpu/gpu_launch_policy.c). H200,
 * 2026-12-04: bn1d_stats 0.0860-0.0873 -> 0.0775-0.0793 ms (paired runs in 4 calls; 512-thread blocks,
 * g = 8: 512 records a column, whose block finish on 64 threads took 6.4 us under Nsight Compute).
 */
#include <stdio.h>

#include "codegen/cg_lower.h"

/* The block's record slots: CG_COL_FOLD_BLOCK records of acc_size bytes in shared memory. */
static LLVMValueRef fold_slots(Lower *L, int acc_size) {
  char name[40];
  snprintf(name, sizeof name, "loom.colfold.%d", acc_size);
  return cg_gpu_shared_array(L, name, LLVMInt8TypeInContext(L->m.c), (uint64_t)CG_COL_FOLD_BLOCK * (uint64_t)acc_size, 16);
}

static LLVMValueRef byte_gep(Lower *L, LLVMValueRef p, LLVMValueRef off) {
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), p, &off, 1, "");
}

void cg_gpu_part_range(Lower *L, const GpuEntry *e, LLVMValueRef part, LLVMValueRef *rlo, LLVMValueRef *rhi) {
  LLVMBuilderRef b = L->m.b; /* a balanced split: the first nr % nparts parts get one point more */
  LLVMValueRef q = LLVMBuildUDiv(b, e->nr, e->nparts, ""), r = LLVMBuildURem(b, e->nr, e->nparts, "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
  *rlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
  *rhi = LLVMBuildAdd(b, LLVMBuildAdd(b, *rlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
}

void cg_gpu_col_fold(Lower *L, const GpuEntry *e, int p, const CgColFold *f) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  bool mom = p == 0 && L->mom_on; /* phase 0's record carries the folded phases' moments */
  LLVMValueRef accv = cg_entry_alloca(L, vty, "cfacc"), acci = cg_entry_alloca(L, L->i64, "cfacci");
  LLVMValueRef jv = cg_entry_alloca(L, L->ity, "cfj");
  bool onl = p == 0 && L->onl_on; /* ... or the online max's (max, sum) (gpu_online_max.c) */
  bool join = p == 0 && L->join_on; /* ... or the joined phases' values (gpu_joint.c) */
  CgJoinFold jf;
  LLVMValueRef mn = NULL, mm[CG_MOM_MAX], mq[CG_MOM_MAX], om = NULL, os = NULL;
  if (onl) {
    LLVMTypeRef ft = cg_reg_type(&L->m, (LoomDType)L->onl.t);
    om = cg_entry_alloca(L, ft, "cfom");
    os = cg_entry_alloca(L, ft, "cfos");
  }
  if (mom) {
    mn = cg_entry_alloca(L, L->i64, "cfmn");
    for (int i = 0; i < L->mom.n; i++) {
      LLVMTypeRef ft = cg_reg_type(&L->m, (LoomDType)L->mom.t[i]);
      mm[i] = cg_entry_alloca(L, ft, "cfmm");
      mq[i] = cg_entry_alloca(L, ft, "cfmq");
    }
  }
  L->m.gpu->barrier(&L->m); /* the tile's records are in shared memory */
  LLVMBasicBlockRef fold = cg_new_bb(L, "cf.fold"), head = cg_new_bb(L, "cf.head"), body = cg_new_bb(L, "cf.body");
  LLVMBasicBlockRef done = cg_new_bb(L, "cf.done"), after = cg_new_bb(L, "cf.after");
  LLVMBuildCondBr(b, f->folder, fold, after);
  LLVMPositionBuilderAtEnd(b, fold);
  LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accv);
  LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), acci);
  LLVMBuildStore(b, cg_iconst_i(L, 0), jv);
  if (join) cg_gpu_join_fold_begin(L, &jf);
  if (onl) {
    cg_gpu_onl_identity(L);
    LLVMBuildStore(b, L->onl_m, om);
    LLVMBuildStore(b, L->onl_s, os);
  }
  if (mom) {
    LLVMBuildStore(b, cg_i64(&L->m, 0), mn);
    for (int i = 0; i < L->mom.n; i++) {
      LLVMBuildStore(b, cg_fconst(&L->m, (LoomDType)L->mom.t[i], 0.0), mm[i]);
      LLVMBuildStore(b, cg_fconst(&L->m, (LoomDType)L->mom.t[i], 0.0), mq[i]);
    }
  }
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef j = LLVMBuildLoad2(b, L->ity, jv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j, f->nfold, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body); /* the tile's parts in order */
  LLVMValueRef rec = byte_gep(L, f->slot, LLVMBuildMul(b, cg_to_i64(L, j), f->stride, ""));
  LLVMValueRef v, vi;
  cg_gpu_load_acc(L, ph, rec, &v, &vi);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
  cg_gpu_combine(L, ph, vt, &a, &ai, v, vi, true);
  LLVMBuildStore(b, a, accv);
  LLVMBuildStore(b, ai, acci);
  if (join) {
    LLVMValueRef jb[CG_JOIN_MAX];
    cg_gpu_join_load(L, rec, jb);
    cg_gpu_join_fold_add(L, &jf, jb, NULL);
  }
  if (onl) {
    LLVMValueRef mb, sb;
    cg_gpu_onl_load(L, rec, &mb, &sb);
    L->onl_m = LLVMBuildLoad2(b, LLVMTypeOf(mb), om, "");
    L->onl_s = LLVMBuildLoad2(b, LLVMTypeOf(sb), os, "");
    cg_gpu_onl_merge(L, mb, sb);
    LLVMBuildStore(b, L->onl_m, om);
    LLVMBuildStore(b, L->onl_s, os);
  }
  if (mom) {
    LLVMValueRef nb, mb[CG_MOM_MAX], qb[CG_MOM_MAX];
    cg_gpu_mom_load(L, rec, &nb, mb, qb);
    L->mom_n = LLVMBuildLoad2(b, L->i64, mn, "");
    for (int i = 0; i < L->mom.n; i++) {
      L->mom_mean[i] = LLVMBuildLoad2(b, LLVMTypeOf(mb[i]), mm[i], "");
      L->mom_m2[i] = LLVMBuildLoad2(b, LLVMTypeOf(qb[i]), mq[i], "");
    }
    cg_gpu_mom_merge(L, nb, mb, qb);
    LLVMBuildStore(b, L->mom_n, mn);
    for (int i = 0; i < L->mom.n; i++) {
      LLVMBuildStore(b, L->mom_mean[i], mm[i]);
      LLVMBuildStore(b, L->mom_m2[i], mq[i]);
    }
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, j, cg_iconst_i(L, 1), ""), jv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  cg_gpu_store_acc(L, ph, f->dst, LLVMBuildLoad2(b, vty, accv, ""), LLVMBuildLoad2(b, L->i64, acci, ""));
  if (mom) {
    cg_gpu_mom_take(L, mn, mm, mq);
    cg_gpu_mom_store(L, f->dst);
  }
  if (join) {
    cg_gpu_join_fold_end(L, &jf);
    cg_gpu_join_store(L, f->dst);
  }
  if (onl) {
    L->onl_m = LLVMBuildLoad2(b, cg_reg_type(&L->m, (LoomDType)L->onl.t), om, "");
    L->onl_s = LLVMBuildLoad2(b, cg_reg_type(&L->m, (LoomDType)L->onl.t), os, "");
    cg_gpu_onl_store(L, f->dst);
  }
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  L->m.gpu->barrier(&L->m); /* the slots are free for the next tile */
}

/* A single-phase split's item in the fold: phase 0 over the part's R range into the slot (when ok). */
static void single_item(Lower *L, GpuEntry *e, LLVMValueRef o, LLVMValueRef part, LLVMValueRef ok, const CgColFold *f) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef run = cg_new_bb(L, "cf.item"), after = cg_new_bb(L, "cf.item.after");
  LLVMBuildCondBr(b, ok, run, after);
  LLVMPositionBuilderAtEnd(b, run);
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  cg_clear_cache(L);
  LLVMValueRef rlo, rhi;
  cg_gpu_part_range(L, e, part, &rlo, &rhi);
  cg_gpu_reduce_range(L, 0, rlo, rhi, cg_iconst_i(L, 1));
  cg_clear_cache(L);
  cg_store_partial(L, f->slot);
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  cg_gpu_col_fold(L, e, 0, f);
}

typedef struct Tiles {
  GpuEntry *e;
  LLVMValueRef g, cw, j, c, ncb, slot, stride;
} Tiles;

/* Tile t: parts pb * g + j (j < g), O points cb * cw + c (c < cw); pb = t / ncb, cb = t % ncb. A thread
 * outside the sizes computes nothing (its clamped o and part keep the addresses in range). */
static void tile_item(Lower *L, LLVMValueRef t, void *arg) {
  Tiles *T = arg;
  GpuEntry *e = T->e;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef one = cg_iconst_i(L, 1);
  LLVMValueRef pb = LLVMBuildUDiv(b, t, T->ncb, ""), cb = LLVMBuildURem(b, t, T->ncb, "");
  LLVMValueRef o = LLVMBuildAdd(b, LLVMBuildMul(b, cb, T->cw, ""), T->c, "");
  LLVMValueRef part0 = LLVMBuildMul(b, pb, T->g, ""), part = LLVMBuildAdd(b, part0, T->j, "");
  LLVMValueRef oin = LLVMBuildICmp(b, LLVMIntSLT, o, e->no, ""), pin = LLVMBuildICmp(b, LLVMIntSLT, part, e->nparts, "");
  LLVMValueRef ok = LLVMBuildAnd(b, LLVMBuildAnd(b, oin, pin, ""), LLVMBuildICmp(b, LLVMIntSLT, T->j, T->g, ""), "");
  LLVMValueRef oc = LLVMBuildSelect(b, oin, o, LLVMBuildSub(b, e->no, one, ""), "");
  LLVMValueRef pc = LLVMBuildSelect(b, pin, part, LLVMBuildSub(b, e->nparts, one, ""), "");
  LLVMValueRef left = LLVMBuildSub(b, e->nparts, part0, "");
  CgColFold f = {.slot = T->slot, .stride = T->stride};
  f.nfold = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, T->g, ""), left, T->g, "");
  f.folder = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, T->j, cg_iconst_i(L, 0), ""), oin, "");
  f.dst = cg_partial_ptr(L, e->partials, LLVMBuildAdd(b, LLVMBuildMul(b, pb, e->no, ""), oc, ""), e->acc_size);
  if (e->phased) cg_gpu_phase_tile(L, e, oc, pc, ok, &f);
  else single_item(L, e, oc, pc, ok, &f);
}

void cg_gpu_col_part(Lower *L, GpuEntry *e, LLVMValueRef word2, LLVMValueRef gtid, LLVMValueRef gstride,
                     LLVMValueRef bid, LLVMValueRef nbk) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef count = LLVMBuildMul(b, e->no, e->nparts, "");
  /* records too large for the slots, or a split scan's folds (no block fold): items as before */
  if (!cg_col_fold_ok(e->acc_size) || L->k->phases[0].kind == KP_SCAN) {
    cg_gpu_for(L, gtid, count, gstride, cg_gpu_red_item, e);
    return;
  }
  LLVMValueRef g = LLVMBuildLShr(b, word2, cg_i64(&L->m, 8), "");
  g = L->ity == L->i64 ? g : LLVMBuildTrunc(b, g, L->ity, "");
  LLVMValueRef fold = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, g, cg_iconst_i(L, 2), ""),
                                   LLVMBuildICmp(b, LLVMIntSLE, e->bdim, cg_iconst_i(L, CG_COL_FOLD_BLOCK), ""), "");
  LLVMBasicBlockRef items = cg_new_bb(L, "cf.items"), tiles = cg_new_bb(L, "cf.tiles"), done = cg_new_bb(L, "cf.end");
  LLVMBuildCondBr(b, fold, tiles, items);
  LLVMPositionBuilderAtEnd(b, items);
  cg_gpu_for(L, gtid, count, gstride, cg_gpu_red_item, e);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, tiles);
  Tiles T = {.e = e, .g = g};
  LLVMValueRef one = cg_iconst_i(L, 1);
  T.cw = LLVMBuildUDiv(b, e->bdim, g, "");
  T.j = LLVMBuildUDiv(b, e->tid, T.cw, "");
  T.c = LLVMBuildSub(b, e->tid, LLVMBuildMul(b, T.j, T.cw, ""), "");
  T.ncb = LLVMBuildUDiv(b, LLVMBuildAdd(b, e->no, LLVMBuildSub(b, T.cw, one, ""), ""), T.cw, "");
  LLVMValueRef npb = LLVMBuildUDiv(b, LLVMBuildAdd(b, e->nparts, LLVMBuildSub(b, g, one, ""), ""), g, "");
  LLVMValueRef acc = cg_i64(&L->m, e->acc_size);
  T.slot = byte_gep(L, fold_slots(L, e->acc_size), LLVMBuildMul(b, cg_to_i64(L, e->tid), acc, ""));
  T.stride = LLVMBuildMul(b, cg_to_i64(L, T.cw), acc, "");
  cg_gpu_for(L, bid, LLVMBuildMul(b, T.ncb, npb, ""), nbk, tile_item, &T);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}
