/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_moments.c: variance in one pass over memory on the GPU.
 *
 * A REDUCE phase p > 0 whose value is (h - c)^2 (a sum, float32 or float64), where h needs no
 * accumulator and c is uniform over R (constants, parameters, the R size and phase 0's result: a
 * variance's mean), equals M2 + n (mean - c)^2 with n, mean and M2 = sum (h - mean)^2 the moments of
 * h, which need no c: they are gathered in phase 0's walk, so p costs no pass of its own (np.var,
 * BatchNorm statistics, a split LayerNorm read their input once instead of twice).
 *
 * Per thread: Welford's update by blocks (the points of one unrolled step): shifted sums S1 = sum (y - s),
 * S2 = sum (y - s)^2 with s the running mean (at first the thread's first y), then mean = s + S1 / n and
 * M2 += S2 - S1^2 / n (one division per block; no cancellation: s is the mean so far), with y = h - K and K
 * h at the O point's first R point (the same for every thread and part). Means relative to K
 * keep Chan's merge exact where the data's mean is large against its spread (1e8 + N(0, 1): absolute
 * means would carry errors of ~1e-8 into every merge's delta). Across lanes, waves, parts: Chan's merge
 * of (n, mean - K, M2), always in a fixed order (lower lane / earlier wave / earlier part first), so a
 * launch shape gives the same bits on every run. The result is M2 + n ((mean - K) - (c - K))^2. NaN
 * and inf give NaN, as the two-pass form's (inf - inf)^2 does; an empty R gives 0 (the sum's identity).
 *
 * Used by the phase split (gpu_phases.c: the folded phases get no launch; their finished values sit
 * in phase 0's fin record) and by the `main` entries (gpu_strategies.c). The cached row entry keeps
 * both walks (its row is in registers: no second read). Other kernels, and LOOM_GPU_ONEPASS_VAR=0,
 * keep two passes. The plan (which phases fold) is target-neutral: moments_plan.c; the host's walk is
 * host_moments.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* LOOM_GPU_ONEPASS_VAR=0: two passes. Read once per process: the compiled entries and the launcher's
 * steps (cg_gpu_phase_split at launch time) must agree, whatever the environment does later. */
static bool onepass_off(void) {
  static int off = -1; /* a benign race: every thread computes the same value */
  if (off < 0) {
    const char *s = getenv("LOOM_GPU_ONEPASS_VAR");
    off = s && s[0] == '0' && s[1] == 0;
  }
  return off == 1;
}

const char *cg_gpu_switch_tag(void) {
  static const char *tags[4] = {"", " onepass0", " joint0", " onepass0 joint0"};
  return tags[(onepass_off() ? 1 : 0) + (cg_gpu_join_on() ? 0 : 2)];
}

void cg_gpu_onepass_plan(const KernelIr *k, CgMomPlan *plan) {
  if (onepass_off()) memset(plan, 0, sizeof *plan);
  else cg_onepass_plan(k, plan);
}

int cg_mom_index(const CgMomPlan *plan, int p) {
  for (int i = 0; i < plan->n; i++)
    if (plan->phase[i] == p) return i;
  return -1;
}

static int record_base(const KernelIr *k) {
  return cg_acc_size(cg_red_value_dtype(k, &k->phases[0]), k->phases[0].reduce_op);
}

int cg_mom_record_size(const KernelIr *k, const CgMomPlan *plan) {
  return plan->n ? record_base(k) + 8 + 16 * plan->n : 0;
}

int cg_mom_fin_offset(const KernelIr *k, int i) { return record_base(k) + 8 + 16 * i; }

/* ---- values --------------------------------------------------------------------------------------------- */

static LLVMTypeRef ftype(Lower *L, int i) { return cg_reg_type(&L->m, (LoomDType)L->mom.t[i]); }
static LLVMValueRef fconst(Lower *L, int i, double v) { return cg_fconst(&L->m, (LoomDType)L->mom.t[i], v); }

/* (n, mean, M2) = merge of a then b (Chan, Golub and LeVeque): n = na + nb, delta = mb - ma,
 * mean = ma + delta nb / n, M2 = M2a + M2b + delta^2 na nb / n; an empty side gives the other. */
static void merge_vals(Lower *L, LLVMValueRef na, const LLVMValueRef *ma, const LLVMValueRef *qa, LLVMValueRef nb,
                       const LLVMValueRef *mb, const LLVMValueRef *qb, LLVMValueRef *n, LLVMValueRef *mean,
                       LLVMValueRef *m2) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef sum = LLVMBuildAdd(b, na, nb, "");
  LLVMValueRef aempty = LLVMBuildICmp(b, LLVMIntEQ, na, cg_i64(&L->m, 0), "");
  LLVMValueRef bempty = LLVMBuildICmp(b, LLVMIntEQ, nb, cg_i64(&L->m, 0), "");
  for (int i = 0; i < L->mom.n; i++) {
    LLVMTypeRef ft = ftype(L, i);
    LLVMValueRef naf = LLVMBuildSIToFP(b, na, ft, ""), nbf = LLVMBuildSIToFP(b, nb, ft, "");
    LLVMValueRef nf = LLVMBuildSIToFP(b, sum, ft, "");
    LLVMValueRef delta = LLVMBuildFSub(b, mb[i], ma[i], "");
    LLVMValueRef f = LLVMBuildFDiv(b, nbf, nf, "");
    LLVMValueRef mm = LLVMBuildFAdd(b, ma[i], LLVMBuildFMul(b, delta, f, ""), "");
    LLVMValueRef corr = LLVMBuildFMul(b, LLVMBuildFMul(b, delta, naf, ""), LLVMBuildFMul(b, delta, f, ""), "");
    LLVMValueRef qq = LLVMBuildFAdd(b, LLVMBuildFAdd(b, qa[i], qb[i], ""), corr, "");
    mean[i] = LLVMBuildSelect(b, bempty, ma[i], LLVMBuildSelect(b, aempty, mb[i], mm, ""), "");
    m2[i] = LLVMBuildSelect(b, bempty, qa[i], LLVMBuildSelect(b, aempty, qb[i], qq, ""), "");
  }
  *n = sum;
}

void cg_gpu_mom_identity(Lower *L) {
  L->mom_n = cg_i64(&L->m, 0);
  for (int i = 0; i < L->mom.n; i++) L->mom_mean[i] = L->mom_m2[i] = fconst(L, i, 0.0);
}

void cg_gpu_mom_merge(Lower *L, LLVMValueRef nb, const LLVMValueRef *meanb, const LLVMValueRef *m2b) {
  LLVMValueRef ma[CG_MOM_MAX], qa[CG_MOM_MAX];
  memcpy(ma, L->mom_mean, sizeof ma);
  memcpy(qa, L->mom_m2, sizeof qa);
  merge_vals(L, L->mom_n, ma, qa, nb, meanb, m2b, &L->mom_n, L->mom_mean, L->mom_m2);
}

/* ---- a thread's walk ---------------------------------------------------------------------------------- */

/* K[i]: h at the O point's first R point (0 for an empty R); L->ooff set. */
static void shift_K(Lower *L, LLVMValueRef *K) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef ka[CG_MOM_MAX];
  for (int i = 0; i < L->mom.n; i++) {
    ka[i] = cg_entry_alloca(L, ftype(L, i), "mK");
    LLVMBuildStore(b, fconst(L, i, 0.0), ka[i]);
  }
  LLVMBasicBlockRef yes = cg_new_bb(L, "mom.K"), after = cg_new_bb(L, "mom.K.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, L->rsize, cg_i64(&L->m, 0), ""), yes, after);
  LLVMPositionBuilderAtEnd(b, yes);
  cg_gpu_offsets(L, cg_iconst_i(L, 0), k->nkeep, k->ndim, L->ooff, L->off);
  cg_clear_cache(L);
  cg_eval_needed(L, L->mom.h, L->mom.n);
  for (int i = 0; i < L->mom.n; i++) LLVMBuildStore(b, L->cache[L->mom.h[i]], ka[i]);
  cg_clear_cache(L);
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  for (int i = 0; i < L->mom.n; i++) K[i] = LLVMBuildLoad2(b, ftype(L, i), ka[i], "");
}

void cg_gpu_mom_begin(Lower *L, LLVMValueRef start, LLVMValueRef end) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  shift_K(L, L->mom_K);
  L->mom_cnt = cg_entry_alloca(L, L->i64, "mcnt");
  LLVMBuildStore(b, cg_i64(&L->m, 0), L->mom_cnt);
  for (int i = 0; i < L->mom.n; i++) {
    L->mom_a[i] = cg_entry_alloca(L, ftype(L, i), "ma");
    L->mom_q[i] = cg_entry_alloca(L, ftype(L, i), "mq");
    LLVMBuildStore(b, fconst(L, i, 0.0), L->mom_a[i]);
    LLVMBuildStore(b, fconst(L, i, 0.0), L->mom_q[i]);
  }
  /* the first shift: the thread's first point (it has one), relative to K */
  LLVMBasicBlockRef yes = cg_new_bb(L, "mom.shift"), after = cg_new_bb(L, "mom.shift.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, start, end, ""), yes, after);
  LLVMPositionBuilderAtEnd(b, yes);
  cg_gpu_offsets(L, start, k->nkeep, k->ndim, L->ooff, L->off);
  cg_clear_cache(L);
  cg_eval_needed(L, L->mom.h, L->mom.n);
  for (int i = 0; i < L->mom.n; i++) LLVMBuildStore(b, LLVMBuildFSub(b, L->cache[L->mom.h[i]], L->mom_K[i], ""), L->mom_a[i]);
  cg_clear_cache(L);
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
}

void cg_gpu_mom_points(Lower *L, LLVMValueRef (*hv)[CG_MOM_MAX], int npts) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef n = LLVMBuildAdd(b, LLVMBuildLoad2(b, L->i64, L->mom_cnt, ""), cg_i64(&L->m, npts), "");
  LLVMBuildStore(b, n, L->mom_cnt);
  for (int i = 0; i < L->mom.n; i++) {
    LLVMTypeRef ft = ftype(L, i);
    LLVMValueRef s = LLVMBuildLoad2(b, ft, L->mom_a[i], ""), s1 = NULL, s2 = NULL;
    for (int j = 0; j < npts; j++) { /* shifted by the running mean: no cancellation to speak of */
      LLVMValueRef d = LLVMBuildFSub(b, LLVMBuildFSub(b, hv[j][i], L->mom_K[i], ""), s, "");
      s1 = s1 ? LLVMBuildFAdd(b, s1, d, "") : d;
      LLVMValueRef dd = LLVMBuildFMul(b, d, d, "");
      s2 = s2 ? LLVMBuildFAdd(b, s2, dd, "") : dd;
    }
    /* Chan's merge of (n - npts, s, M2) with the block's (npts, s + S1 / npts, S2 - S1^2 / npts):
     * mean = s + S1 / n, M2 += S2 - S1^2 / n (one division per block) */
    LLVMValueRef r = LLVMBuildFDiv(b, fconst(L, i, 1.0), LLVMBuildSIToFP(b, n, ft, ""), "");
    LLVMValueRef s1r = LLVMBuildFMul(b, s1, r, "");
    LLVMBuildStore(b, LLVMBuildFAdd(b, s, s1r, ""), L->mom_a[i]);
    LLVMValueRef q = LLVMBuildLoad2(b, ft, L->mom_q[i], "");
    LLVMBuildStore(b, LLVMBuildFAdd(b, q, LLVMBuildFSub(b, s2, LLVMBuildFMul(b, s1, s1r, ""), ""), ""), L->mom_q[i]);
  }
}

void cg_gpu_mom_end(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef n = LLVMBuildLoad2(b, L->i64, L->mom_cnt, "");
  LLVMValueRef empty = LLVMBuildICmp(b, LLVMIntEQ, n, cg_i64(&L->m, 0), "");
  L->mom_n = n;
  for (int i = 0; i < L->mom.n; i++) {
    LLVMTypeRef ft = ftype(L, i);
    LLVMValueRef mean = LLVMBuildLoad2(b, ft, L->mom_a[i], ""), m2 = LLVMBuildLoad2(b, ft, L->mom_q[i], "");
    /* rounding may leave a tiny negative M2: 0 (NaN stays NaN) */
    m2 = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, m2, fconst(L, i, 0.0), ""), fconst(L, i, 0.0), m2, "");
    L->mom_mean[i] = LLVMBuildSelect(b, empty, fconst(L, i, 0.0), mean, "");
    L->mom_m2[i] = LLVMBuildSelect(b, empty, fconst(L, i, 0.0), m2, "");
  }
}

/* ---- across the block ----------------------------------------------------------------------------------- */

void cg_gpu_mom_block_reduce(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  const int wave = m->gpu->wave, wave_log2 = wave == 64 ? 6 : 5;
  int nm = L->mom.n;
  LLVMValueRef tid = LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_THREAD_ID), L->i64, "");
  LLVMValueRef lane = LLVMBuildAnd(b, tid, cg_i64(m, wave - 1), "");
  /* butterfly; the lower lane's moments always come first, so both lanes of a pair get the same bits */
  for (int off = wave / 2; off >= 1; off /= 2) {
    LLVMValueRef on = cg_gpu_shfl_xor(L, L->mom_n, off), om[CG_MOM_MAX], oq[CG_MOM_MAX];
    for (int i = 0; i < nm; i++) {
      om[i] = cg_gpu_shfl_xor(L, L->mom_mean[i], off);
      oq[i] = cg_gpu_shfl_xor(L, L->mom_m2[i], off);
    }
    LLVMValueRef low = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, lane, cg_i64(m, off), ""), cg_i64(m, 0), "");
    LLVMValueRef na = LLVMBuildSelect(b, low, L->mom_n, on, ""), nb = LLVMBuildSelect(b, low, on, L->mom_n, "");
    LLVMValueRef ma[CG_MOM_MAX], qa[CG_MOM_MAX], mb[CG_MOM_MAX], qb[CG_MOM_MAX];
    for (int i = 0; i < nm; i++) {
      ma[i] = LLVMBuildSelect(b, low, L->mom_mean[i], om[i], "");
      mb[i] = LLVMBuildSelect(b, low, om[i], L->mom_mean[i], "");
      qa[i] = LLVMBuildSelect(b, low, L->mom_m2[i], oq[i], "");
      qb[i] = LLVMBuildSelect(b, low, oq[i], L->mom_m2[i], "");
    }
    merge_vals(L, na, ma, qa, nb, mb, qb, &L->mom_n, L->mom_mean, L->mom_m2);
  }
  /* one slot per wave for each value, written by lane 0; every thread folds them in wave order */
  LLVMValueRef sn = cg_gpu_shared_slots(L, "loom.mom.n"), sm[CG_MOM_MAX], sq[CG_MOM_MAX];
  for (int i = 0; i < nm; i++) {
    char name[32];
    snprintf(name, sizeof name, "loom.mom.m%d", i);
    sm[i] = cg_gpu_shared_slots(L, name);
    snprintf(name, sizeof name, "loom.mom.q%d", i);
    sq[i] = cg_gpu_shared_slots(L, name);
  }
  LLVMTypeRef at = LLVMArrayType2(L->i64, 32);
  LLVMValueRef warp = LLVMBuildLShr(b, tid, cg_i64(m, wave_log2), "");
  LLVMBasicBlockRef wr = cg_new_bb(L, "mom.write"), after = cg_new_bb(L, "mom.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i64(m, 0), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {cg_i64(m, 0), warp};
  LLVMBuildStore(b, L->mom_n, LLVMBuildGEP2(b, at, sn, ix, 2, ""));
  for (int i = 0; i < nm; i++) {
    LLVMBuildStore(b, L->mom_mean[i], LLVMBuildGEP2(b, at, sm[i], ix, 2, ""));
    LLVMBuildStore(b, L->mom_m2[i], LLVMBuildGEP2(b, at, sq[i], ix, 2, ""));
  }
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  m->gpu->barrier(m);
  LLVMValueRef nw = LLVMBuildLShr(b, LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_BLOCK_DIM), L->i64, ""),
                                  cg_i64(m, wave_log2), "");
  /* the fold over waves: allocas across the loop */
  LLVMValueRef an = cg_entry_alloca(L, L->i64, "mbn"), am[CG_MOM_MAX], aq[CG_MOM_MAX];
  LLVMValueRef ix0[2] = {cg_i64(m, 0), cg_i64(m, 0)};
  LLVMBuildStore(b, LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, at, sn, ix0, 2, ""), ""), an);
  for (int i = 0; i < nm; i++) {
    am[i] = cg_entry_alloca(L, ftype(L, i), "mbm");
    aq[i] = cg_entry_alloca(L, ftype(L, i), "mbq");
    LLVMBuildStore(b, LLVMBuildLoad2(b, ftype(L, i), LLVMBuildGEP2(b, at, sm[i], ix0, 2, ""), ""), am[i]);
    LLVMBuildStore(b, LLVMBuildLoad2(b, ftype(L, i), LLVMBuildGEP2(b, at, sq[i], ix0, 2, ""), ""), aq[i]);
  }
  LLVMValueRef wv = cg_entry_alloca(L, L->i64, "mw");
  LLVMBuildStore(b, cg_i64(m, 1), wv);
  LLVMBasicBlockRef head = cg_new_bb(L, "mom.head"), body = cg_new_bb(L, "mom.body"), done = cg_new_bb(L, "mom.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef w = LLVMBuildLoad2(b, L->i64, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, w, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {cg_i64(m, 0), w};
  L->mom_n = LLVMBuildLoad2(b, L->i64, an, "");
  LLVMValueRef nb = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, at, sn, ixw, 2, ""), "");
  LLVMValueRef mb[CG_MOM_MAX] = {0}, qb[CG_MOM_MAX] = {0};
  for (int i = 0; i < nm; i++) {
    L->mom_mean[i] = LLVMBuildLoad2(b, ftype(L, i), am[i], "");
    L->mom_m2[i] = LLVMBuildLoad2(b, ftype(L, i), aq[i], "");
    mb[i] = LLVMBuildLoad2(b, ftype(L, i), LLVMBuildGEP2(b, at, sm[i], ixw, 2, ""), "");
    qb[i] = LLVMBuildLoad2(b, ftype(L, i), LLVMBuildGEP2(b, at, sq[i], ixw, 2, ""), "");
  }
  cg_gpu_mom_merge(L, nb, mb, qb);
  LLVMBuildStore(b, L->mom_n, an);
  for (int i = 0; i < nm; i++) {
    LLVMBuildStore(b, L->mom_mean[i], am[i]);
    LLVMBuildStore(b, L->mom_m2[i], aq[i]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, w, cg_i64(m, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  L->mom_n = LLVMBuildLoad2(b, L->i64, an, "");
  for (int i = 0; i < nm; i++) {
    L->mom_mean[i] = LLVMBuildLoad2(b, ftype(L, i), am[i], "");
    L->mom_m2[i] = LLVMBuildLoad2(b, ftype(L, i), aq[i], "");
  }
  m->gpu->barrier(m); /* the slots are free again */
}

/* ---- records and results -------------------------------------------------------------------------------- */

static LLVMValueRef at_byte(Lower *L, LLVMValueRef rec, int off) {
  LLVMValueRef o = cg_i64(&L->m, off);
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), rec, &o, 1, "");
}

void cg_gpu_mom_store(Lower *L, LLVMValueRef rec) {
  LLVMBuilderRef b = L->m.b;
  int base = record_base(L->k);
  LLVMBuildStore(b, L->mom_n, at_byte(L, rec, base));
  for (int i = 0; i < L->mom.n; i++) {
    LLVMBuildStore(b, L->mom_mean[i], at_byte(L, rec, base + 8 + 16 * i));
    LLVMBuildStore(b, L->mom_m2[i], at_byte(L, rec, base + 16 + 16 * i));
  }
}

void cg_gpu_mom_load(Lower *L, LLVMValueRef rec, LLVMValueRef *n, LLVMValueRef *mean, LLVMValueRef *m2) {
  LLVMBuilderRef b = L->m.b;
  int base = record_base(L->k);
  *n = LLVMBuildLoad2(b, L->i64, at_byte(L, rec, base), "");
  for (int i = 0; i < L->mom.n; i++) {
    mean[i] = LLVMBuildLoad2(b, ftype(L, i), at_byte(L, rec, base + 8 + 16 * i), "");
    m2[i] = LLVMBuildLoad2(b, ftype(L, i), at_byte(L, rec, base + 16 + 16 * i), "");
  }
}

void cg_gpu_mom_results(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef empty = LLVMBuildICmp(b, LLVMIntEQ, L->mom_n, cg_i64(&L->m, 0), "");
  LLVMValueRef K[CG_MOM_MAX];
  shift_K(L, K);
  for (int i = 0; i < L->mom.n; i++) {
    int p = L->mom.phase[i];
    cg_clear_cache(L);
    cg_eval_needed(L, &L->mom.c[i], 1);
    LLVMValueRef c = L->cache[L->mom.c[i]];
    cg_clear_cache(L);
    /* (mean - K) - (c - K): both differences of values close together when c is a mean */
    LLVMValueRef dm = LLVMBuildFSub(b, L->mom_mean[i], LLVMBuildFSub(b, c, K[i], ""), "");
    LLVMValueRef nf = LLVMBuildSIToFP(b, L->mom_n, ftype(L, i), "");
    LLVMValueRef v = LLVMBuildFAdd(b, L->mom_m2[i], LLVMBuildFMul(b, nf, LLVMBuildFMul(b, dm, dm, ""), ""), "");
    L->acc[p] = LLVMBuildSelect(b, empty, fconst(L, i, 0.0), v, "");
    L->accidx[p] = cg_i64(&L->m, 0);
  }
}

void cg_gpu_mom_take(Lower *L, LLVMValueRef n, const LLVMValueRef *mean, const LLVMValueRef *m2) {
  LLVMBuilderRef b = L->m.b;
  L->mom_n = LLVMBuildLoad2(b, L->i64, n, "");
  for (int i = 0; i < L->mom.n; i++) {
    LLVMTypeRef ft = cg_reg_type(&L->m, (LoomDType)L->mom.t[i]);
    L->mom_mean[i] = LLVMBuildLoad2(b, ft, mean[i], "");
    L->mom_m2[i] = LLVMBuildLoad2(b, ft, m2[i], "");
  }
}
