/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_phases.c: the phase split of multi-phase reductions on the GPU (codegen.h: CgGpuKernel.split_reduce).
 *
 * A kernel whose later phases depend on earlier ones (a variance: the mean, then the squared deviations
 * from it; BatchNorm statistics; x - x.mean()) runs in `main` with one block (ROW) or one thread (COL)
 * per O point. With few O points and long R that is a handful of SMs for the whole array (np.var of 2^26
 * values: one block). The split runs it as a sequence of grid-wide launches instead, one step per phase
 * in order, each over all the (part, o) items as a single-phase split reduction does:
 *   REDUCE phase p: `part` folds phase p over the part's R range into partials[part * no + o], then
 *     `finish` / `finishb` folds o's parts in order into fin[p * no + o] and runs the FINAL phases that
 *     follow p (up to the next REDUCE phase);
 *   MAP phase p: `part` runs the map over the part's R range (no partials); a COL split's MAP step runs
 *     the grid's threads as row phases of every O point instead (cg_gpu_map_flat, below).
 * The phase to run is extra word 2 and the finished accumulators' address extra word 3; `part` and
 * `finish` read earlier phases' results (KI_ACC) from fin. Every step reads the input again, so a
 * phase costs one pass over memory: the price of filling the GPU. Parts are folded in order and block
 * trees are fixed, so the same nparts and launch shape give the same bits. A COL `part` may fold a
 * block's parts in shared memory first (gpu_colfold.c: one record per O point and tile of parts; the
 * phase is then word 2's low byte). The host's column split
 * (lower_host_outer.c) follows the same contract.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

#define FINISH_AHEAD 8 /* partial records a finish thread loads before folding them (finish_phase) */

/* LOOM_GPU_FINISH_AHEAD=k (1..8): k records a step instead (1: one at a time, for A/B timings) */
static int finish_ahead(void) {
  static int v = -1;
  int k = cg_env_int_once(&v, "LOOM_GPU_FINISH_AHEAD", FINISH_AHEAD);
  return k < 1 ? 1 : k > FINISH_AHEAD ? FINISH_AHEAD : k;
}

bool cg_gpu_phase_split(const KernelIr *k, uint32_t *reduce_bits, uint32_t *map_bits) {
  uint32_t red = 0, map = 0;
  CgMomPlan plan; /* folded phases (gpu_moments.c, gpu_online_max.c) get no step: phase 0's computes them */
  cg_gpu_onepass_plan(k, &plan);
  CgOnlPlan onl;
  cg_gpu_online_plan(k, &onl);
  if (onl.phase) plan.bits |= 1u << onl.phase;
  CgJoinPlan join; /* joined phases (gpu_joint.c): folded in phase 0's walk too */
  cg_gpu_join_plan(k, &join);
  plan.bits |= join.bits;
  bool ok = k && k->nkeep < k->ndim && k->nphase >= 2 && k->nphase <= 32 && k->phases[0].kind == KP_REDUCE;
  /* [REDUCE] and [REDUCE, FINAL] have the single-phase split (gpu_lower.c) */
  if (ok && k->nphase == 2 && k->phases[1].kind == KP_FINAL) ok = false;
  for (int p = 0; ok && p < k->nphase; p++) {
    switch (k->phases[p].kind) {
    case KP_REDUCE: red |= cg_mom_folded(&plan, p) ? 0 : 1u << p; break;
    case KP_MAP: map |= 1u << p; break;
    case KP_FINAL: break;
    default: ok = false;
    }
  }
  if (reduce_bits) *reduce_bits = ok ? red : 0;
  if (map_bits) *map_bits = ok ? map : 0;
  return ok;
}

int cg_gpu_phase_acc_size(const KernelIr *k) {
  int size = 0;
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind != KP_REDUCE) continue;
    int s = cg_acc_size(cg_red_value_dtype(k, &k->phases[p]), k->phases[p].reduce_op);
    if (s > size) size = s;
  }
  CgMomPlan plan;
  cg_gpu_onepass_plan(k, &plan);
  if (cg_mom_record_size(k, &plan) > size) size = cg_mom_record_size(k, &plan);
  CgOnlPlan onl;
  cg_gpu_online_plan(k, &onl);
  if (cg_onl_record_size(k, &onl) > size) size = cg_onl_record_size(k, &onl);
  CgJoinPlan join;
  cg_gpu_join_plan(k, &join);
  if (join.record_size > size) size = join.record_size;
  return size;
}

/* ---- accumulators in memory (codegen.h's layout: the value, then an argmin / argmax index) ------------- */

static LLVMValueRef acc_at(Lower *L, LLVMValueRef base, LLVMValueRef item, int acc_size) {
  return cg_partial_ptr(L, base, item, acc_size);
}

void cg_gpu_load_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef *v, LLVMValueRef *vi) {
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMBuilderRef b = L->m.b;
  *v = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(&L->m, vt), p, ""));
  LLVMValueRef off = cg_i64(&L->m, cg_acc_index_offset(vt));
  *vi = is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), p, &off, 1, ""), "")
                              : cg_i64(&L->m, 0);
}

void cg_gpu_store_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef v, LLVMValueRef vi) {
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMBuilderRef b = L->m.b;
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, v), p);
  LLVMValueRef off = cg_i64(&L->m, cg_acc_index_offset(vt));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(b, vi, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), p, &off, 1, ""));
}

/* fin[q * no + o] */
static LLVMValueRef fin_ptr(Lower *L, const GpuEntry *e, int q, LLVMValueRef o) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef item = LLVMBuildAdd(b, LLVMBuildMul(b, cg_iconst_i(L, q), e->no, ""), o, "");
  return acc_at(L, e->fin, item, e->acc_size);
}

/* L->acc / L->accidx of the REDUCE phases before p from fin (the others NULL); a folded phase's value
 * sits in phase 0's record (gpu_moments.c, gpu_online_max.c). */
static void load_earlier(Lower *L, const GpuEntry *e, int p, LLVMValueRef o) {
  const KernelIr *k = L->k;
  for (int q = 0; q < k->nphase; q++) {
    L->acc[q] = L->accidx[q] = NULL;
    if (q >= p || k->phases[q].kind != KP_REDUCE) continue;
    int i = L->mom.n ? cg_mom_index(&L->mom, q) : -1;
    if (cg_join_folded(&L->join, q)) { /* joined: in phase 0's record (gpu_joint.c) */
      cg_gpu_join_fin(L, fin_ptr(L, e, 0, o), q);
      continue;
    }
    if (L->onl.phase && q == L->onl.phase) {
      LLVMValueRef off = cg_i64(&L->m, cg_onl_fin_offset(k));
      LLVMValueRef ptr = LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), fin_ptr(L, e, 0, o), &off, 1, "");
      L->acc[q] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, (LoomDType)L->onl.t), ptr, "");
      L->accidx[q] = cg_i64(&L->m, 0);
      continue;
    }
    if (i < 0) {
      cg_gpu_load_acc(L, &k->phases[q], fin_ptr(L, e, q, o), &L->acc[q], &L->accidx[q]);
      continue;
    }
    LLVMValueRef off = cg_i64(&L->m, cg_mom_fin_offset(k, i));
    LLVMValueRef ptr = LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), fin_ptr(L, e, 0, o), &off, 1, "");
    L->acc[q] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, (LoomDType)L->mom.t[i]), ptr, "");
    L->accidx[q] = cg_i64(&L->m, 0);
  }
}

static bool folded(const Lower *L, int p) {
  return cg_mom_folded(&L->mom, p) || (L->onl.phase && p == L->onl.phase) || cg_join_folded(&L->join, p);
}

/* if (tid == 0) { ... } for block entries: opens the branch (returns the join block), or NULL. */
static LLVMBasicBlockRef first_thread_begin(Lower *L, const GpuEntry *e, bool blk) {
  if (!blk) return NULL;
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef t0 = cg_new_bb(L, "ph.t0"), after = cg_new_bb(L, "ph.t0.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, cg_iconst_i(L, 0), ""), t0, after);
  LLVMPositionBuilderAtEnd(b, t0);
  return after;
}

static void first_thread_end(Lower *L, LLVMBasicBlockRef after) {
  if (!after) return;
  LLVMBuildBr(L->m.b, after);
  LLVMPositionBuilderAtEnd(L->m.b, after);
}

/* ---- part: phase p over one (part, o) item --------------------------------------------------------------- */

/* rec: where the record goes (partials[item], or the thread's shared slot in the COL block fold) */
static void part_phase(Lower *L, const GpuEntry *e, int p, LLVMValueRef rec, LLVMValueRef o, LLVMValueRef rlo,
                       LLVMValueRef rhi) {
  const KernelIr *k = L->k;
  LLVMValueRef one = cg_iconst_i(L, 1);
  load_earlier(L, e, p, o);
  cg_clear_cache(L);
  LLVMValueRef start = e->row ? LLVMBuildAdd(L->m.b, rlo, e->tid, "") : rlo, step = e->row ? e->bdim : one;
  if (k->phases[p].kind == KP_MAP) {
    cg_gpu_for(L, start, rhi, step, cg_gpu_map_point, (void *)&k->phases[p]);
    cg_clear_cache(L);
    return;
  }
  cg_gpu_reduce_range(L, p, start, rhi, step); /* phase 0: with the folded phases' moments */
  if (e->row) cg_gpu_block_reduce(L, p);
  cg_clear_cache(L);
  LLVMBasicBlockRef after = first_thread_begin(L, e, e->row);
  cg_gpu_store_acc(L, &k->phases[p], rec, L->acc[p], L->accidx[p]);
  if (p == 0 && L->mom_on) cg_gpu_mom_store(L, rec);
  if (p == 0 && L->onl_on) cg_gpu_onl_store(L, rec);
  if (p == 0 && L->join_on) cg_gpu_join_store(L, rec);
  first_thread_end(L, after);
}

/* ---- finish: o's parts of phase p in order -> fin, then the FINAL phases p owns ------------------------- */

static void finish_phase(Lower *L, const GpuEntry *e, int p, LLVMValueRef o, bool blk) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  LLVMValueRef accv = cg_entry_alloca(L, vty, "pfacc"), acci = cg_entry_alloca(L, L->i64, "pfacci");
  LLVMValueRef pv = cg_entry_alloca(L, L->ity, "pfp");
  bool mom = p == 0 && L->mom_on; /* phase 0 also folds the parts' moments, in part order */
  bool onl = p == 0 && L->onl_on; /* ... or their online (max, sum) (gpu_online_max.c) */
  bool join = p == 0 && L->join_on; /* ... or the joined phases' values (gpu_joint.c) */
  LLVMValueRef mn = NULL, mm[CG_MOM_MAX], mq[CG_MOM_MAX], om = NULL, os = NULL;
  CgJoinFold jf;
  if (join) cg_gpu_join_fold_begin(L, &jf);
  if (onl) {
    LLVMTypeRef ft = cg_reg_type(&L->m, (LoomDType)L->onl.t);
    om = cg_entry_alloca(L, ft, "pfom");
    os = cg_entry_alloca(L, ft, "pfos");
    cg_gpu_onl_identity(L);
    LLVMBuildStore(b, L->onl_m, om);
    LLVMBuildStore(b, L->onl_s, os);
  }
  if (mom) {
    mn = cg_entry_alloca(L, L->i64, "pfmn");
    LLVMBuildStore(b, cg_i64(&L->m, 0), mn);
    for (int i = 0; i < L->mom.n; i++) {
      LLVMTypeRef ft = cg_reg_type(&L->m, (LoomDType)L->mom.t[i]);
      mm[i] = cg_entry_alloca(L, ft, "pfmm");
      mq[i] = cg_entry_alloca(L, ft, "pfmq");
      LLVMBuildStore(b, cg_fconst(&L->m, (LoomDType)L->mom.t[i], 0.0), mm[i]);
      LLVMBuildStore(b, cg_fconst(&L->m, (LoomDType)L->mom.t[i], 0.0), mq[i]);
    }
  }
  LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accv);
  LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), acci);
  LLVMBuildStore(b, blk ? e->tid : cg_iconst_i(L, 0), pv);
  LLVMBasicBlockRef head = cg_new_bb(L, "pf.head"), body = cg_new_bb(L, "pf.body"), done = cg_new_bb(L, "pf.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef part = LLVMBuildLoad2(b, L->ity, pv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, part, e->nparts, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  /* FINISH_AHEAD records a step, all loaded before the first is folded (the loads are in flight
   * together: one L2 latency a step, not one a record), folded in part order; a record past the last
   * part is loaded from the last one and not folded */
  int ahead = finish_ahead();
  LLVMValueRef step = blk ? e->bdim : cg_iconst_i(L, 1), lastp = LLVMBuildSub(b, e->nparts, cg_iconst_i(L, 1), "");
  LLVMValueRef v[FINISH_AHEAD], vi[FINISH_AHEAD], ok[FINISH_AHEAD], nb[FINISH_AHEAD];
  LLVMValueRef mb[FINISH_AHEAD][CG_MOM_MAX], qb[FINISH_AHEAD][CG_MOM_MAX], omb[FINISH_AHEAD], osb[FINISH_AHEAD];
  LLVMValueRef jb[FINISH_AHEAD][CG_JOIN_MAX];
  for (int j = 0; j < ahead; j++) {
    LLVMValueRef pj = LLVMBuildAdd(b, part, LLVMBuildMul(b, step, cg_iconst_i(L, j), ""), "");
    ok[j] = LLVMBuildICmp(b, LLVMIntSLT, pj, e->nparts, "");
    pj = LLVMBuildSelect(b, ok[j], pj, lastp, "");
    LLVMValueRef rec = acc_at(L, e->partials, LLVMBuildAdd(b, LLVMBuildMul(b, pj, e->no, ""), o, ""), e->acc_size);
    cg_gpu_load_acc(L, ph, rec, &v[j], &vi[j]);
    if (mom) cg_gpu_mom_load(L, rec, &nb[j], mb[j], qb[j]);
    if (onl) cg_gpu_onl_load(L, rec, &omb[j], &osb[j]);
    if (join) cg_gpu_join_load(L, rec, jb[j]);
  }
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
  if (mom) {
    L->mom_n = LLVMBuildLoad2(b, L->i64, mn, "");
    for (int i = 0; i < L->mom.n; i++) {
      L->mom_mean[i] = LLVMBuildLoad2(b, LLVMTypeOf(mb[0][i]), mm[i], "");
      L->mom_m2[i] = LLVMBuildLoad2(b, LLVMTypeOf(qb[0][i]), mq[i], "");
    }
  }
  if (onl) {
    L->onl_m = LLVMBuildLoad2(b, LLVMTypeOf(omb[0]), om, "");
    L->onl_s = LLVMBuildLoad2(b, LLVMTypeOf(osb[0]), os, "");
  }
  for (int j = 0; j < ahead; j++) {
    LLVMValueRef na = a, nai = ai;
    cg_gpu_combine(L, ph, vt, &na, &nai, v[j], vi[j], true);
    a = LLVMBuildSelect(b, ok[j], na, a, "");
    ai = LLVMBuildSelect(b, ok[j], nai, ai, "");
    if (join) cg_gpu_join_fold_add(L, &jf, jb[j], ok[j]);
    if (onl) {
      LLVMValueRef m0 = L->onl_m, s0 = L->onl_s;
      cg_gpu_onl_merge(L, omb[j], osb[j]);
      L->onl_m = LLVMBuildSelect(b, ok[j], L->onl_m, m0, "");
      L->onl_s = LLVMBuildSelect(b, ok[j], L->onl_s, s0, "");
    }
    if (!mom) continue;
    LLVMValueRef n0 = L->mom_n, m0[CG_MOM_MAX], q0[CG_MOM_MAX];
    memcpy(m0, L->mom_mean, sizeof m0);
    memcpy(q0, L->mom_m2, sizeof q0);
    cg_gpu_mom_merge(L, nb[j], mb[j], qb[j]);
    L->mom_n = LLVMBuildSelect(b, ok[j], L->mom_n, n0, "");
    for (int i = 0; i < L->mom.n; i++) {
      L->mom_mean[i] = LLVMBuildSelect(b, ok[j], L->mom_mean[i], m0[i], "");
      L->mom_m2[i] = LLVMBuildSelect(b, ok[j], L->mom_m2[i], q0[i], "");
    }
  }
  LLVMBuildStore(b, a, accv);
  LLVMBuildStore(b, ai, acci);
  if (onl) {
    LLVMBuildStore(b, L->onl_m, om);
    LLVMBuildStore(b, L->onl_s, os);
  }
  if (mom) {
    LLVMBuildStore(b, L->mom_n, mn);
    for (int i = 0; i < L->mom.n; i++) {
      LLVMBuildStore(b, L->mom_mean[i], mm[i]);
      LLVMBuildStore(b, L->mom_m2[i], mq[i]);
    }
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, part, LLVMBuildMul(b, step, cg_iconst_i(L, ahead), ""), ""), pv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  L->acc[p] = LLVMBuildLoad2(b, vty, accv, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, acci, "");
  if (mom) {
    cg_gpu_mom_take(L, mn, mm, mq);
  }
  if (join) cg_gpu_join_fold_end(L, &jf);
  if (onl) {
    L->onl_m = LLVMBuildLoad2(b, LLVMTypeOf(omb[0]), om, "");
    L->onl_s = LLVMBuildLoad2(b, LLVMTypeOf(osb[0]), os, "");
  }
  if (blk) cg_gpu_block_reduce(L, p); /* phase 0: the moments / the online (max, sum) too */
  LLVMValueRef fv = L->acc[p], fi = L->accidx[p];
  if (mom) cg_gpu_mom_results(L); /* the folded phases' values from the moments and phase 0's value */
  if (onl) cg_gpu_onl_result(L);  /* the folded sum from (max, sum) and phase 0's max */
  LLVMBasicBlockRef after = first_thread_begin(L, e, blk);
  cg_gpu_store_acc(L, ph, fin_ptr(L, e, p, o), fv, fi);
  for (int i = 0; mom && i < L->mom.n; i++) {
    LLVMValueRef off = cg_i64(&L->m, cg_mom_fin_offset(k, i));
    LLVMBuildStore(b, L->acc[L->mom.phase[i]], LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), fin_ptr(L, e, 0, o), &off, 1, ""));
  }
  if (onl) {
    LLVMValueRef off = cg_i64(&L->m, cg_onl_fin_offset(k));
    LLVMBuildStore(b, L->acc[L->onl.phase], LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), fin_ptr(L, e, 0, o), &off, 1, ""));
  }
  if (join) cg_gpu_join_store(L, fin_ptr(L, e, 0, o)); /* the joined phases' finished values */
  /* the FINAL phases whose last REDUCE phase before them is p (folded phases do not count: they
   * have no step; their values are in fin, stored above or by phase 0's step) */
  for (int f = p + 1; f < k->nphase && (k->phases[f].kind != KP_REDUCE || folded(L, f)); f++) {
    if (k->phases[f].kind != KP_FINAL) continue;
    load_earlier(L, e, f, o);
    L->acc[p] = fv;
    L->accidx[p] = fi;
    cg_run_final_phase(L, &k->phases[f]);
  }
  first_thread_end(L, after);
}

/* Emits `if (phase == p) body` for every phase p with bit p in bits. */
typedef void (*PhaseBody)(Lower *L, const GpuEntry *e, int p, void *arg);
static void for_phase(Lower *L, const GpuEntry *e, uint32_t bits, PhaseBody body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  for (int p = 0; p < L->k->nphase; p++) {
    if (!(bits >> p & 1u)) continue;
    LLVMBasicBlockRef yes = cg_new_bb(L, "ph.run"), next = cg_new_bb(L, "ph.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->phase, cg_i64(&L->m, p), ""), yes, next);
    LLVMPositionBuilderAtEnd(b, yes);
    body(L, e, p, arg);
    for (int q = 0; q < L->k->nphase; q++) L->acc[q] = L->accidx[q] = NULL;
    cg_clear_cache(L);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
}

typedef struct PartArgs {
  LLVMValueRef rec, o, rlo, rhi;
} PartArgs;

static void part_body(Lower *L, const GpuEntry *e, int p, void *arg) {
  const PartArgs *a = arg;
  part_phase(L, e, p, a->rec, a->o, a->rlo, a->rhi);
}

/* ---- the COL block fold (gpu_colfold.c): a tile's thread, then each REDUCE phase's fold ---------------- */

typedef struct TileArgs {
  LLVMValueRef o, part, ok;
  const CgColFold *f;
} TileArgs;

static void tile_body(Lower *L, const GpuEntry *e, int p, void *arg) {
  const TileArgs *a = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef run = cg_new_bb(L, "ph.tile"), after = cg_new_bb(L, "ph.tile.after");
  LLVMBuildCondBr(b, a->ok, run, after);
  LLVMPositionBuilderAtEnd(b, run);
  LLVMValueRef rlo, rhi;
  cg_gpu_part_range(L, e, a->part, &rlo, &rhi);
  part_phase(L, e, p, a->f->slot, a->o, rlo, rhi);
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  if (L->k->phases[p].kind == KP_REDUCE) cg_gpu_col_fold(L, e, p, a->f);
}

void cg_gpu_phase_tile(Lower *L, GpuEntry *e, LLVMValueRef o, LLVMValueRef part, LLVMValueRef ok, const CgColFold *f) {
  const KernelIr *k = L->k;
  uint32_t red = 0, map = 0;
  cg_gpu_phase_split(k, &red, &map);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  TileArgs a = {o, part, ok, f};
  for_phase(L, e, red | map, tile_body, &a);
}

static void finish_body(Lower *L, const GpuEntry *e, int p, void *arg) {
  finish_phase(L, e, p, *(LLVMValueRef *)arg, e->which == GPU_FINISHB);
}

void cg_gpu_phase_item(Lower *L, LLVMValueRef item, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  uint32_t red = 0, map = 0;
  cg_gpu_phase_split(k, &red, &map);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  if (e->which == GPU_PART) { /* item = part * nO + o; the part's R range: a balanced split */
    LLVMValueRef o = LLVMBuildURem(b, item, e->no, ""), part = LLVMBuildUDiv(b, item, e->no, "");
    LLVMValueRef rlo, rhi;
    cg_gpu_part_range(L, e, part, &rlo, &rhi);
    cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
    PartArgs a = {acc_at(L, e->partials, item, e->acc_size), o, rlo, rhi};
    for_phase(L, e, red | map, part_body, &a);
    return;
  }
  cg_gpu_offsets(L, item, 0, k->nkeep, NULL, L->ooff); /* FINISH / FINISHB: item = o */
  for_phase(L, e, red, finish_body, &item);
}

/* ---- a COL split's MAP step: the grid's threads as row phases of every O point ---------------------------
 * The (part, o) items walk nparts bands of rows far apart, one load in flight a thread; that MAP step of
 * column standardization (20011 x 7777 float32, H100) ran at 48.8 % of DRAM bandwidth, its statistics step
 * over the same items at 85 %. Walking the points in memory order with each step's O point from the last
 * (a division-free (o, r) stepper) computed the per-column values (mean, std + eps) at every point:
 * compute-bound, 912 us against 758. Row phases keep O fixed per item (the values stay out of the row
 * loop) while the grid still sweeps R in order: 633 us (59.9 % of DRAM), standardize_cols 0.966 -> 0.871 ms
 * (bench/suite/DIAGNOSIS.md, session 34). */

/* LOOM_GPU_MAP_FLAT=n: n rows a step read ahead (1..GPU_ELEM_POINTS_MAX), 0: the (part, o) items. */
int cg_gpu_map_flat_points(void) {
  static int v = -1;
  int n = cg_env_int_once(&v, "LOOM_GPU_MAP_FLAT", GPU_ELEM_POINTS_MAX);
  return n < 0 ? 0 : n > GPU_ELEM_POINTS_MAX ? GPU_ELEM_POINTS_MAX : n;
}

/* The MAP phases of a COL split that take row phases (cg_gpu_map_flat): plain stores, no user call or
 * point index, at most 64 buffers. loads (32 entries, or NULL): per phase, the buffers it loads. */
static uint32_t map_flat_bits(const KernelIr *k, uint64_t *loads) {
  uint32_t red = 0, map = 0, bits = 0;
  if (loads) memset(loads, 0, 32 * sizeof *loads);
  if (cg_gpu_map_flat_points() == 0 || !cg_gpu_phase_split(k, &red, &map) || !map || k->nbuf > 64) return 0;
  uint8_t *need = calloc((size_t)k->ninstr + 1, 1);
  if (!need) return 0;
  for (int p = 0; p < k->nphase; p++) {
    if (!(map >> p & 1u)) continue;
    const KPhase *ph = &k->phases[p];
    bool ok = true;
    uint64_t ld = 0;
    memset(need, 0, (size_t)k->ninstr);
    for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
      ok = ok && k->stores[s].scatter == 0;
      need[k->stores[s].value] = 1;
    }
    for (int i = k->ninstr - 1; ok && i >= 0; i--) {
      const KInstr *in = &k->instrs[i];
      if (!need[i]) continue;
      if (in->kind == KI_USER || in->kind == KI_USER_OUT || in->kind == KI_INDEX) ok = false;
      if (in->kind == KI_LOAD) ld |= 1ull << in->buf;
      for (int j = 0; j < cg_instr_nsrc(in); j++) need[in->src[j]] = 1;
    }
    if (!ok) continue;
    bits |= 1u << p;
    if (loads) loads[p] = ld;
  }
  free(need);
  return bits;
}

typedef struct FlatWalk {
  const GpuEntry *e;
  int p, cnt;
  uint64_t loads;
  LLVMValueRef gtid, gstride;
  LLVMValueRef phases; /* P: the row phases, max(1, gstride / nO) */
  uint64_t phase_loads[32]; /* map_flat_bits' */
} FlatWalk;

typedef struct FlatItem {
  const FlatWalk *w;
  const LLVMValueRef *ooff; /* the item's O offsets */
} FlatItem;

/* One step of an item's rows: rows r0, r0 + P, ... (cnt of them, those below nR), every row's loads issued
 * before any is computed (as cg_gpu_elem_points). */
static void flat_rows(Lower *L, LLVMValueRef r0, void *arg) {
  const FlatWalk *w = ((const FlatItem *)arg)->w;
  const LLVMValueRef *ooff = ((const FlatItem *)arg)->ooff;
  const KernelIr *k = L->k;
  const GpuEntry *e = w->e;
  LLVMBuilderRef b = L->m.b;
  int nb = k->nbuf;
  LLVMValueRef ok[GPU_ELEM_POINTS_MAX], off[GPU_ELEM_POINTS_MAX][64], v[GPU_ELEM_POINTS_MAX][64];
  LLVMValueRef last = LLVMBuildSub(b, e->nr, cg_iconst_i(L, 1), "");
  for (int j = 0; j < w->cnt; j++) {
    LLVMValueRef r = j ? LLVMBuildAdd(b, r0, LLVMBuildMul(b, w->phases, cg_iconst_i(L, j), ""), "") : r0;
    ok[j] = j ? LLVMBuildICmp(b, LLVMIntSLT, r, e->nr, "") : NULL;
    LLVMValueRef rc = j ? LLVMBuildSelect(b, ok[j], r, last, "") : r; /* a row past the end reads the last */
    cg_gpu_offsets(L, rc, k->nkeep, k->ndim, ooff, off[j]);
    for (int bi = 0; bi < nb; bi++) v[j][bi] = w->loads >> bi & 1u ? cg_gpu_load_point(L, bi, off[j][bi]) : NULL;
  }
  for (int j = 0; j < w->cnt; j++) {
    LLVMBasicBlockRef done = NULL;
    if (j) {
      LLVMBasicBlockRef then = cg_new_bb(L, "mflat.point");
      done = cg_new_bb(L, "mflat.next");
      LLVMBuildCondBr(b, ok[j], then, done);
      LLVMPositionBuilderAtEnd(b, then);
    }
    for (int bi = 0; bi < nb; bi++) {
      L->off[bi] = off[j][bi];
      L->vload[bi] = v[j][bi];
    }
    L->lane = 0;
    cg_body_map(L, (void *)&k->phases[w->p]); /* reads the item's L->acc (load_earlier) */
    for (int bi = 0; bi < nb; bi++) L->vload[bi] = NULL;
    if (j) {
      LLVMBuildBr(b, done);
      LLVMPositionBuilderAtEnd(b, done);
    }
  }
}

/* One item = j * nO + o: O point o at rows j, j + P, j + 2P, ... */
static void flat_item(Lower *L, LLVMValueRef it, void *arg) {
  const FlatWalk *w = arg;
  const KernelIr *k = L->k;
  const GpuEntry *e = w->e;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef j = LLVMBuildUDiv(b, it, e->no, ""), o = LLVMBuildSub(b, it, LLVMBuildMul(b, j, e->no, ""), "");
  LLVMValueRef ooff[64];
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, ooff);
  load_earlier(L, e, w->p, o); /* once an item: the FINAL values computed from them stay out of the row loop */
  FlatItem fi = {w, ooff};
  cg_gpu_for(L, j, e->nr, LLVMBuildMul(b, w->phases, cg_iconst_i(L, w->cnt), ""), flat_rows, &fi);
}

/* MAP phase p with the grid's threads as P = max(1, gstride / nO) row phases of every O point: item
 * j * nO + o (grid-stride over the nO * P items) maps O point o at rows j, j + P, ... So the grid as a
 * whole walks R in order, a band of P rows at a time (the (part, o) items walk nparts bands far apart),
 * and each item loads the earlier phases' results once. */
static void flat_phase(Lower *L, const GpuEntry *e, int p, const FlatWalk *w0) {
  LLVMBuilderRef b = L->m.b;
  FlatWalk w = *w0;
  w.p = p;
  w.loads = w.phase_loads[p];
  LLVMValueRef one = cg_iconst_i(L, 1), ph = LLVMBuildUDiv(b, w.gstride, e->no, "");
  w.phases = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, ph, one, ""), one, ph, "");
  cg_gpu_for(L, w.gtid, LLVMBuildMul(b, e->no, w.phases, ""), w.gstride, flat_item, &w);
}

LLVMBasicBlockRef cg_gpu_map_flat(Lower *L, GpuEntry *e, LLVMValueRef gtid, LLVMValueRef gstride) {
  if (e->row || !e->phased || e->which != GPU_PART) return NULL;
  FlatWalk w = {.e = e, .cnt = cg_gpu_map_flat_points(), .gtid = gtid, .gstride = gstride};
  uint32_t bits = map_flat_bits(L->k, w.phase_loads);
  if (!bits) return NULL;
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef done = cg_new_bb(L, "mflat.done");
  for (int p = 0; p < L->k->nphase; p++) { /* if (phase == p) { walk; goto done; } */
    if (!(bits >> p & 1u)) continue;
    LLVMBasicBlockRef yes = cg_new_bb(L, "mflat.run"), next = cg_new_bb(L, "mflat.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->phase, cg_i64(&L->m, p), ""), yes, next);
    LLVMPositionBuilderAtEnd(b, yes);
    for (int q = 0; q < L->k->nphase; q++) L->acc[q] = L->accidx[q] = NULL;
    cg_clear_cache(L);
    flat_phase(L, e, p, &w);
    for (int q = 0; q < L->k->nphase; q++) L->acc[q] = L->accidx[q] = NULL;
    cg_clear_cache(L);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, next);
  }
  return done;
}

uint32_t cg_gpu_map_flat_bits(const KernelIr *k) { return map_flat_bits(k, NULL); }
