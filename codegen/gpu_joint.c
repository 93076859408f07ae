/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_joint.c: independent reductions in one walk over memory on the GPU.
 *
 * A REDUCE phase q > 0 whose value reads no accumulator (KI_ACC) does not need the phases before it:
 * the min and the max of minmax scaling, nanmean's sum and count, a weighted mean's two sums. Each such
 * phase ("joined") is folded in phase 0's walk over R, point by point beside phase 0's value (the loads
 * shared), into accumulators of its own, so it costs no pass over memory: a column kernel that read its
 * input once per phase reads it once for all of them. Its accumulators take the same path as phase 0's:
 * GPU_UNROLL of them a thread folded in order, the block reduction (cg_gpu_block_reduce runs it after
 * phase 0's), and in the phase split (gpu_phases.c) its value rides in phase 0's partial records after
 * phase 0's own (cg_join_record_size), merged in part order by the finish and the COL block fold
 * (gpu_colfold.c); the finished value sits in phase 0's fin record, where load_earlier reads it. A joined
 * phase gets no step of its own (it leaves split_reduce). Folds are ordered the same as a phase walking
 * alone with the scalar walk, so the same launch shape gives the same bits on every run.
 *
 * Not joined: arg-reductions, complex values and phases with side stores (they keep their own walk),
 * kernels whose phase 0 gathers one-pass moments or an online max (gpu_moments.c, gpu_online_max.c),
 * user kernels. The cached row entry reads its row once anyway: it keeps a walk a phase over registers.
 * Checked on an H100 (2026-12-07: the GPU pytest of multi-phase reductions, tests/python/test_gpu_joint.py's
 * child against NumPy) and on by default since; LOOM_GPU_JOINT=0 turns it off (" joint0" in the target's
 * description). pass_fuse puts sibling reductions that may share a walk in one kernel even over long
 * columns (passes/fuse_place.c find_sibling, walk_shareable), so minmax scaling and nanmean of tall tables
 * read their input once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

bool cg_gpu_join_on(void) {
  static int on = -1; /* a benign race: every thread computes the same value */
  if (on < 0) {
    const char *s = getenv("LOOM_GPU_JOINT");
    on = !(s && s[0] == '0' && s[1] == 0);
  }
  return on == 1;
}

static int round8(int n) { return (n + 7) / 8 * 8; }

void cg_gpu_join_plan(const KernelIr *k, CgJoinPlan *plan) {
  memset(plan, 0, sizeof *plan);
  if (!cg_gpu_join_on() || !k || k->snippet || k->nkeep >= k->ndim || k->nphase < 2 || k->nphase > 32 ||
      k->phases[0].kind != KP_REDUCE)
    return;
  CgMomPlan mom;
  cg_gpu_onepass_plan(k, &mom);
  CgOnlPlan onl;
  cg_gpu_online_plan(k, &onl);
  if (mom.n || onl.phase) return;
  bool *acc_dep = calloc((size_t)(k->ninstr > 0 ? k->ninstr : 1), sizeof *acc_dep); /* reads some KI_ACC */
  if (!acc_dep) return;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    bool dep = in->kind == KI_ACC || in->kind == KI_USER || in->kind == KI_USER_OUT;
    for (int s = 0; s < 3 && !dep; s++)
      dep = in->src[s] >= 0 && in->src[s] < i && acc_dep[in->src[s]];
    acc_dep[i] = dep;
  }
  int off = round8(cg_acc_size(cg_red_value_dtype(k, &k->phases[0]), k->phases[0].reduce_op));
  for (int q = 1; q < k->nphase && plan->n < CG_JOIN_MAX; q++) {
    const KPhase *ph = &k->phases[q];
    if (ph->kind != KP_REDUCE || ph->nstores || is_arg(ph->reduce_op) || ph->value < 0 || ph->value >= k->ninstr ||
        acc_dep[ph->value])
      continue;
    LoomDType vt = cg_red_value_dtype(k, ph);
    if (dtype_is_complex(vt)) continue;
    plan->phase[plan->n] = q;
    plan->off[plan->n] = off;
    off += round8(cg_acc_size(vt, ph->reduce_op));
    plan->bits |= 1u << q;
    plan->n++;
  }
  plan->record_size = plan->n ? off : 0;
  free(acc_dep);
}

/* ---- values in records ---------------------------------------------------------------------------- */

static LLVMValueRef at_byte(Lower *L, LLVMValueRef rec, int off) {
  LLVMValueRef o = cg_i64(&L->m, off);
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), rec, &o, 1, "");
}

static const KPhase *joined(const Lower *L, int i) { return &L->k->phases[L->join.phase[i]]; }

void cg_gpu_join_store(Lower *L, LLVMValueRef rec) {
  for (int i = 0; i < L->join.n; i++) {
    int q = L->join.phase[i];
    cg_gpu_store_acc(L, joined(L, i), at_byte(L, rec, L->join.off[i]), L->acc[q], L->accidx[q]);
  }
}

void cg_gpu_join_load(Lower *L, LLVMValueRef rec, LLVMValueRef *v) {
  for (int i = 0; i < L->join.n; i++) {
    LLVMValueRef vi;
    cg_gpu_load_acc(L, joined(L, i), at_byte(L, rec, L->join.off[i]), &v[i], &vi);
  }
}

void cg_gpu_join_fin(Lower *L, LLVMValueRef rec0, int q) {
  for (int i = 0; i < L->join.n; i++) {
    if (L->join.phase[i] != q) continue;
    cg_gpu_load_acc(L, joined(L, i), at_byte(L, rec0, L->join.off[i]), &L->acc[q], &L->accidx[q]);
    return;
  }
}

/* ---- ordered folds of records (finish, COL block fold) ----------------------------------------------- */

void cg_gpu_join_fold_begin(Lower *L, CgJoinFold *f) {
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    LoomDType vt = cg_red_value_dtype(L->k, ph);
    f->a[i] = cg_entry_alloca(L, cg_reg_type(&L->m, vt), "jfacc");
    LLVMBuildStore(L->m.b, cg_red_identity(L, ph->reduce_op, vt), f->a[i]);
  }
}

void cg_gpu_join_fold_add(Lower *L, CgJoinFold *f, const LLVMValueRef *v, LLVMValueRef ok) {
  LLVMBuilderRef b = L->m.b;
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    LoomDType vt = cg_red_value_dtype(L->k, ph);
    LLVMValueRef a = LLVMBuildLoad2(b, cg_reg_type(&L->m, vt), f->a[i], ""), na = a, zi = cg_i64(&L->m, 0);
    cg_gpu_combine(L, ph, vt, &na, &zi, v[i], zi, true);
    LLVMBuildStore(b, ok ? LLVMBuildSelect(b, ok, na, a, "") : na, f->a[i]);
  }
}

void cg_gpu_join_fold_end(Lower *L, const CgJoinFold *f) {
  for (int i = 0; i < L->join.n; i++) {
    int q = L->join.phase[i];
    LoomDType vt = cg_red_value_dtype(L->k, joined(L, i));
    L->acc[q] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, vt), f->a[i], "");
    L->accidx[q] = cg_i64(&L->m, 0);
  }
}

/* ---- the walk -------------------------------------------------------------------------------------------- */

void cg_gpu_join_walk_begin(Lower *L, CgJoinWalk *w, int copies) {
  w->copies = copies;
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    LoomDType vt = cg_red_value_dtype(L->k, ph);
    for (int j = 0; j < copies; j++) {
      w->a[i][j] = cg_entry_alloca(L, cg_reg_type(&L->m, vt), "jacc");
      LLVMBuildStore(L->m.b, cg_red_identity(L, ph->reduce_op, vt), w->a[i][j]);
    }
  }
}

void cg_gpu_join_values(Lower *L, LLVMValueRef *v) {
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    cg_reduce_point(L, ph);
    v[i] = L->cache[ph->value];
  }
}

void cg_gpu_join_walk_add(Lower *L, CgJoinWalk *w, int j, const LLVMValueRef *v) {
  LLVMBuilderRef b = L->m.b;
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    LoomDType vt = cg_red_value_dtype(L->k, ph);
    LLVMValueRef cur = LLVMBuildLoad2(b, cg_reg_type(&L->m, vt), w->a[i][j], "");
    LLVMBuildStore(b, cg_red_combine(L, ph->reduce_op, vt, cur, v[i]), w->a[i][j]);
  }
}

void cg_gpu_join_walk_end(Lower *L, const CgJoinWalk *w) {
  LLVMBuilderRef b = L->m.b;
  for (int i = 0; i < L->join.n; i++) {
    const KPhase *ph = joined(L, i);
    LoomDType vt = cg_red_value_dtype(L->k, ph);
    LLVMTypeRef ty = cg_reg_type(&L->m, vt);
    LLVMValueRef a = LLVMBuildLoad2(b, ty, w->a[i][0], ""), zi = cg_i64(&L->m, 0);
    for (int j = 1; j < w->copies; j++) cg_gpu_combine(L, ph, vt, &a, &zi, LLVMBuildLoad2(b, ty, w->a[i][j], ""), zi, true);
    L->acc[ph - L->k->phases] = a;
    L->accidx[ph - L->k->phases] = zi;
  }
}
