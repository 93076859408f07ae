/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_block_reduce.c: reductions across GPU threads, for every target through its hooks (cg_gpu.h):
 * the per-thread loops that fold a range of R (cg_gpu_reduce_range), the block reduction (the target's
 * wave shuffle, butterfly in 32-bit pieces, then a small shared array: every thread combines the
 * per-wave values in wave order, which broadcasts the result and keeps the order fixed), the reduction
 * of a group of lanes (short rows), and the partial accumulators of split reductions. Split from
 * gpu_lower.c (the loops, indices and entries). */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* Wave shuffle (butterfly: the value of lane ^ lanemask) of a value of any register type, moved as
 * 32-bit pieces through the target's shuffle_xor. */
static LLVMValueRef shfl_bfly(Lower *L, LLVMValueRef v, int lanemask) {
  LLVMBuilderRef b = L->m.b;
  LLVMContextRef c = L->m.c;
  const CgGpuHooks *h = L->m.gpu;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(t) == LLVMStructTypeKind) { /* a complex value: part by part */
    LLVMValueRef r = LLVMGetUndef(t);
    for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++)
      r = LLVMBuildInsertValue(b, r, shfl_bfly(L, LLVMBuildExtractValue(b, v, i, ""), lanemask), i, "");
    return r;
  }
  unsigned bits = LLVMGetTypeKind(t) == LLVMFloatTypeKind ? 32 : LLVMGetTypeKind(t) == LLVMDoubleTypeKind ? 64 : LLVMGetIntTypeWidth(t);
  LLVMTypeRef it = LLVMIntTypeInContext(c, bits);
  LLVMValueRef x = LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
  LLVMValueRef r;
  if (bits <= 32) {
    r = h->shuffle_xor(&L->m, bits < 32 ? LLVMBuildZExt(b, x, i32, "") : x, lanemask);
    if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
  } else {
    LLVMValueRef lo = LLVMBuildTrunc(b, x, i32, "");
    LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(it, 32, 0), ""), i32, "");
    LLVMValueRef rlo = h->shuffle_xor(&L->m, lo, lanemask);
    LLVMValueRef rhi = h->shuffle_xor(&L->m, hi, lanemask);
    r = LLVMBuildOr(b, LLVMBuildZExt(b, rlo, it, ""), LLVMBuildShl(b, LLVMBuildZExt(b, rhi, it, ""), LLVMConstInt(it, 32, 0), ""), "");
  }
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

/* ---- reductions across threads ---------------------------------------------------------------------- */

/* Combines two accumulators of a REDUCE phase (a, ai) and (v, vi): for argmin/argmax the one with the
 * smaller index comes first and the later one wins only when strictly better (or a first NaN), so the
 * result is the same whichever order the pair arrives in; other ops use cg_combine (ordered == false
 * gives the reassociable form). */
void cg_gpu_combine(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef v,
                        LLVMValueRef vi, bool ordered) {
  LLVMBuilderRef b = L->m.b;
  if (is_arg(ph->reduce_op)) {
    LLVMValueRef swap = LLVMBuildICmp(b, LLVMIntSGT, *ai, vi, "");
    LLVMValueRef fv = LLVMBuildSelect(b, swap, v, *a, ""), fi = LLVMBuildSelect(b, swap, vi, *ai, "");
    LLVMValueRef sv = LLVMBuildSelect(b, swap, *a, v, ""), si = LLVMBuildSelect(b, swap, *ai, vi, "");
    LLVMValueRef empty = cg_i64(&L->m, GPU_EMPTY_INDEX);
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, fv, sv);
    take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, fi, empty, ""), "");
    take = LLVMBuildAnd(b, take, LLVMBuildICmp(b, LLVMIntNE, si, empty, ""), "");
    *a = LLVMBuildSelect(b, take, sv, fv, "");
    *ai = LLVMBuildSelect(b, take, si, fi, "");
  } else {
    LLVMValueRef r = cg_red_combine(L, ph->reduce_op, vt, *a, v);
    if (ordered) cg_clear_fmf(r);
    *a = r;
  }
}

/* 32 slots (one per wave of a block) of 8 bytes, or of 16 for a complex128 value (name ".16"). */
static LLVMTypeRef slots_type(Lower *L, bool wide) {
  LLVMTypeRef pair[2] = {L->i64, L->i64};
  return LLVMArrayType2(wide ? LLVMStructTypeInContext(L->m.c, pair, 2, 0) : L->i64, 32);
}

LLVMValueRef cg_gpu_shared_array(Lower *L, const char *name, LLVMTypeRef elem, uint64_t count, unsigned align) {
  LLVMValueRef g = LLVMGetNamedGlobal(L->m.m, name);
  if (g) return g;
  LLVMTypeRef at = LLVMArrayType2(elem, count);
  g = LLVMAddGlobalInAddressSpace(L->m.m, at, name, L->m.gpu->as_shared);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetInitializer(g, L->m.gpu->shared_poison ? LLVMGetPoison(at) : LLVMGetUndef(at));
  LLVMSetAlignment(g, align);
  return g;
}

static LLVMValueRef shared_slots(Lower *L, const char *name) {
  LLVMTypeRef at = slots_type(L, strstr(name, ".16") != NULL);
  return cg_gpu_shared_array(L, name, LLVMGetElementType(at), LLVMGetArrayLength2(at), 8);
}

typedef struct GpuRed {
  const KPhase *ph;
  LoomDType vt;
  LLVMValueRef accv, acci; /* allocas */
  LLVMValueRef rbase;      /* ROW: the thread's first R point (its accumulator index starts there) */
  bool mom;                /* also gather the one-pass moments (gpu_moments.c) */
  bool onl;                /* also gather the online max's (max, sum) (gpu_online_max.c) */
  CgJoinWalk *join;        /* also fold the joined phases (gpu_joint.c), into their copy 0 here */
} GpuRed;

/* One R point of a REDUCE phase: L->ooff holds the O offsets. */
static void gpu_reduce_point(Lower *L, LLVMValueRef r, void *arg) {
  GpuRed *g = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  cg_gpu_offsets_in(L, r, k->nkeep, k->ndim, L->ooff, L->off); /* r in [start, end) of a kept point's walk */
  cg_clear_cache(L);
  cg_reduce_point(L, g->ph);
  LLVMValueRef v = L->cache[g->ph->value];
  if (g->mom) {
    LLVMValueRef hv[1][CG_MOM_MAX];
    cg_eval_needed(L, L->mom.h, L->mom.n);
    for (int i = 0; i < L->mom.n; i++) hv[0][i] = L->cache[L->mom.h[i]];
    cg_gpu_mom_points(L, hv, 1);
  }
  if (g->onl) cg_gpu_onl_points(L, &v, 1);
  if (g->join) {
    LLVMValueRef jv[CG_JOIN_MAX];
    cg_gpu_join_values(L, jv);
    cg_gpu_join_walk_add(L, g->join, 0, jv);
  }
  LLVMValueRef cur = LLVMBuildLoad2(b, LLVMTypeOf(v), g->accv, "");
  if (is_arg(g->ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)g->ph->reduce_op, g->vt, cur, v);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, v, cur, ""), g->accv);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, g->acci, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, cg_to_i64(L, r), ci, ""), g->acci);
  } else {
    LLVMBuildStore(b, cg_red_combine(L, g->ph->reduce_op, g->vt, cur, v), g->accv);
  }
  cg_clear_cache(L);
}

void cg_gpu_map_point(Lower *L, LLVMValueRef r, void *arg) {
  const KernelIr *k = L->k;
  cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  cg_body_map(L, arg);
}

/* Folds REDUCE phase p over R points start, start + step, ... < end into L->acc[p] / L->accidx[p]
 * (this thread's part only). */
void cg_gpu_reduce_range(Lower *L, int p, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  GpuRed g = {&k->phases[p], cg_red_value_dtype(k, &k->phases[p]), NULL, NULL, NULL, false, false, NULL};
  LLVMTypeRef vty = cg_reg_type(&L->m, g.vt);
  g.accv = cg_entry_alloca(L, vty, "acc");
  g.acci = cg_entry_alloca(L, L->i64, "acci");
  LLVMBuildStore(b, cg_red_identity(L, g.ph->reduce_op, g.vt), g.accv);
  LLVMValueRef nonempty = LLVMBuildICmp(b, LLVMIntSLT, start, end, "");
  LLVMBuildStore(b, LLVMBuildSelect(b, nonempty, cg_to_i64(L, start), cg_i64(&L->m, GPU_EMPTY_INDEX), ""), g.acci);
  bool arg = is_arg(g.ph->reduce_op);
  g.mom = L->mom_on && p == 0; /* the folded phases' moments in the same walk (gpu_moments.c) */
  if (g.mom) cg_gpu_mom_begin(L, start, end);
  g.onl = L->onl_on && p == 0; /* the folded sum's (max, sum) in the same walk (gpu_online_max.c) */
  if (g.onl) cg_gpu_onl_begin(L);
  CgJoinWalk jw; /* the joined phases' accumulators, as many copies as phase 0's (gpu_joint.c) */
  if (L->join_on && p == 0) {
    g.join = &jw;
    cg_gpu_join_walk_begin(L, &jw, L->unroll_red ? GPU_UNROLL : 1);
  }
  if (!L->unroll_red) {
    cg_gpu_for(L, start, end, step, gpu_reduce_point, &g);
    L->acc[p] = LLVMBuildLoad2(b, vty, g.accv, "");
    L->accidx[p] = LLVMBuildLoad2(b, L->i64, g.acci, "");
    if (g.mom) cg_gpu_mom_end(L);
    if (g.onl) cg_gpu_onl_end(L);
    if (g.join) cg_gpu_join_walk_end(L, &jw);
    return;
  }
  /* GPU_UNROLL independent accumulators: points i + j * step (j < GPU_UNROLL) are evaluated (their
   * loads issued) before any is combined, then the remainder goes into accumulator 0 and the others
   * are folded into it in order j = 1, 2, ... (fixed: the same bits on every run). An arg-reduction's
   * accumulator j > 0 starts at (identity, GPU_EMPTY_INDEX): it takes only strictly better points (or a
   * first NaN) and cg_gpu_combine's index order keeps the first extreme, as one accumulator would. */
  LLVMValueRef accs[GPU_UNROLL], accis[GPU_UNROLL];
  accs[0] = g.accv;
  accis[0] = g.acci;
  for (int j = 1; j < GPU_UNROLL; j++) {
    accs[j] = cg_entry_alloca(L, vty, "accu");
    LLVMBuildStore(b, cg_red_identity(L, g.ph->reduce_op, g.vt), accs[j]);
    accis[j] = NULL;
    if (arg) {
      accis[j] = cg_entry_alloca(L, L->i64, "accui");
      LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), accis[j]);
    }
  }
  LLVMValueRef iv = cg_entry_alloca(L, L->ity, "iu");
  LLVMBuildStore(b, start, iv);
  LLVMValueRef span = LLVMBuildMul(b, step, cg_iconst_i(L, GPU_UNROLL - 1), "");
  LLVMValueRef limit = LLVMBuildSub(b, end, span, ""); /* i < limit: all GPU_UNROLL points exist */
  LLVMBasicBlockRef head = cg_new_bb(L, "unr.head"), body = cg_new_bb(L, "unr.body"), exit = cg_new_bb(L, "unr.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  const KernelIr *kk = L->k;
  LLVMValueRef vals[GPU_UNROLL], rs[GPU_UNROLL], hv[GPU_UNROLL][CG_MOM_MAX], jv[GPU_UNROLL][CG_JOIN_MAX];
  L->m.no_branch = true; /* the GPU_UNROLL points' loads in one block (CgMath.no_branch) */
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef jstep = LLVMBuildMul(b, step, cg_iconst_i(L, j), "");
    LLVMValueRef r = L->walk_nsw ? LLVMBuildNSWAdd(b, i, jstep, "") : LLVMBuildAdd(b, i, jstep, ""); /* < end */
    rs[j] = r;
    cg_gpu_offsets_in(L, r, kk->nkeep, kk->ndim, L->ooff, L->off); /* (i < limit: every point exists) */
    cg_clear_cache(L);
    cg_reduce_point(L, g.ph);
    vals[j] = L->cache[g.ph->value];
    if (g.mom) {
      cg_eval_needed(L, L->mom.h, L->mom.n);
      for (int q = 0; q < L->mom.n; q++) hv[j][q] = L->cache[L->mom.h[q]];
    }
    if (g.join) cg_gpu_join_values(L, jv[j]); /* the joined phases' values at the same point */
  }
  L->m.no_branch = false;
  cg_clear_cache(L);
  if (g.mom) cg_gpu_mom_points(L, hv, GPU_UNROLL);
  if (g.onl) cg_gpu_onl_points(L, vals, GPU_UNROLL); /* vals: phase 0's values, h */
  for (int j = 0; g.join && j < GPU_UNROLL; j++) cg_gpu_join_walk_add(L, &jw, j, jv[j]);
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef cur = LLVMBuildLoad2(b, vty, accs[j], "");
    if (arg) {
      LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)g.ph->reduce_op, g.vt, cur, vals[j]);
      LLVMBuildStore(b, LLVMBuildSelect(b, take, vals[j], cur, ""), accs[j]);
      LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, accis[j], "");
      LLVMBuildStore(b, LLVMBuildSelect(b, take, cg_to_i64(L, rs[j]), ci, ""), accis[j]);
    } else {
      LLVMBuildStore(b, cg_red_combine(L, g.ph->reduce_op, g.vt, cur, vals[j]), accs[j]);
    }
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, step, cg_iconst_i(L, GPU_UNROLL), ""), ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
  cg_gpu_for(L, LLVMBuildLoad2(b, L->ity, iv, ""), end, step, gpu_reduce_point, &g);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], "");
  LLVMValueRef ai = LLVMBuildLoad2(b, L->i64, g.acci, "");
  for (int j = 1; j < GPU_UNROLL; j++)
    cg_gpu_combine(L, g.ph, g.vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[j], ""),
                   arg ? LLVMBuildLoad2(b, L->i64, accis[j], "") : ai, true);
  L->acc[p] = a;
  L->accidx[p] = ai;
  if (g.mom) cg_gpu_mom_end(L);
  if (g.onl) cg_gpu_onl_end(L);
  if (g.join) cg_gpu_join_walk_end(L, &jw);
}

/* LOOM_GPU_ARG_FOLD_SERIAL=1: arg-reductions fold the waves' values serially in every thread, as other
 * reductions do (A/B timings; read once per process). */
static bool arg_fold_serial(void) {
  static int on = -1;
  if (on < 0) {
    const char *s = getenv("LOOM_GPU_ARG_FOLD_SERIAL");
    on = s && s[0] == '1' && s[1] == 0;
  }
  return on == 1;
}

static void block_reduce_phase(Lower *L, int p);

/* Block reduction of phase p's per-thread accumulators: every thread ends with the block's (phase 0's
 * joined phases' too, gpu_joint.c). */
void cg_gpu_block_reduce(Lower *L, int p) {
  block_reduce_phase(L, p);
  for (int i = 0; L->join_on && p == 0 && i < L->join.n; i++) block_reduce_phase(L, L->join.phase[i]);
}

static void block_reduce_phase(Lower *L, int p) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  if (is_arg(ph->reduce_op) && cg_gpu_arg_block_reduce_packed(L, p)) return; /* one word a pair (gpu_rowvec.c) */
  LLVMValueRef v = L->acc[p], vi = L->accidx[p];
  const int wave = L->m.gpu->wave, wave_log2 = wave == 64 ? 6 : 5;
  for (int off = wave / 2; off >= 1; off /= 2) {
    LLVMValueRef ov = shfl_bfly(L, v, off);
    LLVMValueRef oi = is_arg(ph->reduce_op) ? shfl_bfly(L, vi, off) : vi;
    cg_gpu_combine(L, ph, vt, &v, &vi, ov, oi, true);
  }
  bool wide = loom_dtype_size(vt) > 8;
  LLVMValueRef sv = shared_slots(L, wide ? "loom.red.v.16" : "loom.red.v"), si = shared_slots(L, "loom.red.i");
  LLVMTypeRef at = slots_type(L, wide), ait = slots_type(L, false);
  LLVMValueRef tid = cg_gpu_index(L, CG_GPU_THREAD_ID);
  LLVMValueRef lane = LLVMBuildAnd(b, tid, cg_iconst_i(L, wave - 1), "");
  LLVMValueRef warp = LLVMBuildLShr(b, tid, cg_iconst_i(L, wave_log2), "");
  LLVMBasicBlockRef wr = cg_new_bb(L, "red.write"), after = cg_new_bb(L, "red.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_iconst_i(L, 0), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {cg_iconst_i(L, 0), warp};
  LLVMBuildStore(b, v, LLVMBuildGEP2(b, at, sv, ix, 2, ""));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(b, vi, LLVMBuildGEP2(b, ait, si, ix, 2, ""));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  L->m.gpu->barrier(&L->m);
  LLVMValueRef nw = LLVMBuildLShr(b, cg_gpu_index(L, CG_GPU_BLOCK_DIM), cg_iconst_i(L, wave_log2), "");
  if (is_arg(ph->reduce_op) && L->arg_tree && !arg_fold_serial()) {
    /* argmin / argmax: wave 0 folds the waves' (value, index) pairs by a butterfly and lane 0 publishes the
     * block's in slot 0 (a pair's combine is ~20 instructions: the serial fold by every thread cost ~150 per
     * thread and row, a sixth of argmax_rows' budget). The combine keeps the first extreme by index, so the
     * result does not depend on the tree. */
    LLVMValueRef one = cg_iconst_i(L, 1);
    LLVMValueRef nw1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, nw, one, ""), one, nw, "");
    LLVMBasicBlockRef w0 = cg_new_bb(L, "red.w0"), pub = cg_new_bb(L, "red.pub"), after0 = cg_new_bb(L, "red.w0.after");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, warp, cg_iconst_i(L, 0), ""), w0, after0);
    LLVMPositionBuilderAtEnd(b, w0);
    LLVMValueRef has = LLVMBuildICmp(b, LLVMIntSLT, lane, nw1, "");
    LLVMValueRef ixl[2] = {cg_iconst_i(L, 0), LLVMBuildSelect(b, has, lane, cg_iconst_i(L, 0), "")};
    LLVMValueRef wv0 = LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, ixl, 2, ""), "");
    LLVMValueRef wi0 = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, ait, si, ixl, 2, ""), "");
    LLVMValueRef fv = LLVMBuildSelect(b, has, wv0, cg_red_identity(L, ph->reduce_op, vt), "");
    LLVMValueRef fi = LLVMBuildSelect(b, has, wi0, cg_i64(&L->m, GPU_EMPTY_INDEX), "");
    for (int off = wave / 2; off >= 1; off /= 2) {
      LLVMValueRef ov = shfl_bfly(L, fv, off), oi = shfl_bfly(L, fi, off);
      cg_gpu_combine(L, ph, vt, &fv, &fi, ov, oi, true);
    }
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_iconst_i(L, 0), ""), pub, after0);
    LLVMPositionBuilderAtEnd(b, pub);
    LLVMValueRef z2[2] = {cg_iconst_i(L, 0), cg_iconst_i(L, 0)};
    LLVMBuildStore(b, fv, LLVMBuildGEP2(b, at, sv, z2, 2, ""));
    LLVMBuildStore(b, fi, LLVMBuildGEP2(b, ait, si, z2, 2, ""));
    LLVMBuildBr(b, after0);
    LLVMPositionBuilderAtEnd(b, after0);
    L->m.gpu->barrier(&L->m);
    LLVMValueRef z3[2] = {cg_iconst_i(L, 0), cg_iconst_i(L, 0)};
    L->acc[p] = LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, z3, 2, ""), "");
    L->accidx[p] = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, ait, si, z3, 2, ""), "");
    L->m.gpu->barrier(&L->m); /* the slots are free again */
    if (L->mom_on && p == 0) cg_gpu_mom_block_reduce(L);
    if (L->onl_on && p == 0) cg_gpu_onl_block_reduce(L);
    return;
  }
  /* every thread folds the warps' values in warp order */
  LLVMValueRef accv = cg_entry_alloca(L, vty, "bacc"), acci = cg_entry_alloca(L, L->i64, "bacci");
  LLVMValueRef ix0[2] = {cg_iconst_i(L, 0), cg_iconst_i(L, 0)};
  LLVMBuildStore(b, LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, ix0, 2, ""), ""), accv);
  LLVMBuildStore(b, is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, ait, si, ix0, 2, ""), "") : cg_i64(&L->m, 0), acci);
  LLVMValueRef wv = cg_entry_alloca(L, L->ity, "w");
  LLVMBuildStore(b, cg_iconst_i(L, 1), wv);
  LLVMBasicBlockRef head = cg_new_bb(L, "red.head"), body = cg_new_bb(L, "red.body"), done = cg_new_bb(L, "red.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef w = LLVMBuildLoad2(b, L->ity, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, w, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {cg_iconst_i(L, 0), w};
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
  LLVMValueRef ov = LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, ixw, 2, ""), "");
  LLVMValueRef oi = is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, ait, si, ixw, 2, ""), "") : ai;
  cg_gpu_combine(L, ph, vt, &a, &ai, ov, oi, true);
  LLVMBuildStore(b, a, accv);
  LLVMBuildStore(b, ai, acci);
  LLVMBuildStore(b, LLVMBuildAdd(b, w, cg_iconst_i(L, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  L->acc[p] = LLVMBuildLoad2(b, vty, accv, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, acci, "");
  L->m.gpu->barrier(&L->m); /* the slots are free again */
  if (L->mom_on && p == 0) cg_gpu_mom_block_reduce(L); /* the folded phases' moments ride along */
  if (L->onl_on && p == 0) cg_gpu_onl_block_reduce(L); /* and the online max's (max, sum) */
}

void cg_gpu_group_reduce(Lower *L, int p, LLVMValueRef g) {
  const KPhase *ph = &L->k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMValueRef av = cg_entry_alloca(L, cg_reg_type(&L->m, vt), "gacc"), ai = cg_entry_alloca(L, L->i64, "gacci");
  LLVMBuildStore(b, L->acc[p], av);
  LLVMBuildStore(b, L->accidx[p] ? L->accidx[p] : cg_i64(&L->m, 0), ai);
  for (int off = L->m.gpu->wave / 2; off >= 1; off /= 2) { /* a branch uniform over the wave */
    LLVMBasicBlockRef step = cg_new_bb(L, "grp.step"), next = cg_new_bb(L, "grp.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, cg_iconst_i(L, off), g, ""), step, next);
    LLVMPositionBuilderAtEnd(b, step);
    LLVMValueRef v = LLVMBuildLoad2(b, cg_reg_type(&L->m, vt), av, ""), vi = LLVMBuildLoad2(b, L->i64, ai, "");
    LLVMValueRef ov = shfl_bfly(L, v, off);
    LLVMValueRef oi = is_arg(ph->reduce_op) ? shfl_bfly(L, vi, off) : vi;
    cg_gpu_combine(L, ph, vt, &v, &vi, ov, oi, true);
    LLVMBuildStore(b, v, av);
    LLVMBuildStore(b, vi, ai);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
  L->acc[p] = LLVMBuildLoad2(b, cg_reg_type(&L->m, vt), av, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, ai, "");
}

LLVMValueRef cg_gpu_shfl_xor(Lower *L, LLVMValueRef v, int lanemask) { return shfl_bfly(L, v, lanemask); }
LLVMValueRef cg_gpu_shared_slots(Lower *L, const char *name) { return shared_slots(L, name); }

/* Address of partial accumulator `item` (acc_size bytes each). */
LLVMValueRef cg_partial_ptr(Lower *L, LLVMValueRef partials, LLVMValueRef item, int acc_size) {
  LLVMValueRef byte = LLVMBuildMul(L->m.b, cg_to_i64(L, item), cg_i64(&L->m, acc_size), "");
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), partials, &byte, 1, "");
}

void cg_store_partial(Lower *L, LLVMValueRef ptr) {
  const KPhase *ph = &L->k->phases[0];
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMValueRef eight = cg_i64(&L->m, cg_acc_index_offset(vt));
  LLVMBuildStore(L->m.b, cg_to_mem(&L->m, vt, vt, L->acc[0]), ptr);
  if (is_arg(ph->reduce_op))
    LLVMBuildStore(L->m.b, L->accidx[0], LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), ptr, &eight, 1, ""));
}
