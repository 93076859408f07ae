/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_online_max.c: a softmax's sum of exp(h - max) in the max's own walk over memory on the GPU.
 *
 * A REDUCE sum phase p > 0 (float32 or float64, no side stores) whose value is f(h - c), with f(d) = exp(d),
 * exp(k d), exp2(d) or exp2(k d) for a constant k > 0, h phase 0's value and c phase 0's accumulator, where
 * phase 0 is the max of h (softmax, log_softmax, logsumexp written the NumPy or the torch way), equals
 * s = sum f(h - m) with m the max of h: the "online softmax" (Milakov and Gimelshein 2018) gathers (m, s) in
 * phase 0's walk, since f(h - m) f(m - m') = f(h - m'). Phase p then costs no pass over memory: a row that
 * does not fit the cached entry (long float64 rows, 50k-wide logits) is read twice, not three times.
 *
 * Per thread, by blocks (the points of one unrolled step): the block's max b first, m' = max(m, b) (NaN wins,
 * as phase 0's max), s = s f(m - m') + sum f(y - m'): one more f per block, not per point (f is the same
 * instruction chain as the kernel's, evaluated with h := y and c := m'). Across lanes, waves: the merge
 * m = max(m1, m2), s = s1 f(m1 - m) + s2 f(m2 - m), always the lower lane / earlier wave first, so a launch
 * shape gives the same bits on every run. The result is s f(m - c) (m is c: f(0) = 1).
 *
 * Infinities and NaN give what the two-pass form gives: a scale between equal maxima is 1 (not
 * f(-inf - -inf) = NaN: an empty side or a thread that saw only -inf), a -inf point adds 0 (it would add
 * NaN while the running max is still -inf); a row of -inf only (two-pass: exp(-inf - -inf) = NaN) gives NaN,
 * an empty one 0; NaN anywhere makes m NaN and s NaN; +inf gives exp(inf - inf) = NaN as two-pass does.
 *
 * Used by the `main` entries (gpu_strategies.c; cg_gpu_reduce_range and cg_gpu_block_reduce in
 * gpu_lower.c) and by the phase split (gpu_phases.c: the folded phase gets no launch; phase 0's partial
 * records carry (m, s), merged in part order by the finish and by the COL block fold, gpu_colfold.c; the
 * finished sum sits in phase 0's fin record). The cached row entry keeps both walks (its row is in
 * registers). Off unless LOOM_GPU_ONLINE_MAX=1 (" online1" in the target's description then).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* LOOM_GPU_ONLINE_MAX=1 turns the fold on; off by default: on an H100 (2026-12-06) it changed neither
 * softmax_f64 (1.675 vs 1.665 ms) nor softmax / log_softmax / logsumexp rows, so whether those kernels take
 * it at all is the next question (bench/suite/DIAGNOSIS.md). Read once per process (entries and tag). */
bool cg_gpu_online_on(void) {
  static int v = -1;
  return cg_env_int_once(&v, "LOOM_GPU_ONLINE_MAX", 0) != 0;
}

/* d = h - c with h phase 0's value and c its accumulator, both of dtype t */
static bool is_shifted(const KernelIr *k, int32_t d, int32_t h, LoomDType t) {
  if (d < 0 || d >= k->ninstr) return false;
  const KInstr *in = &k->instrs[d];
  if (in->kind != KI_ELEM || in->op != LOOM_OP_SUB || in->dtype != t || in->src[0] != h) return false;
  int32_t c = in->src[1];
  if (c < 0 || c >= d) return false;
  const KInstr *ci = &k->instrs[c];
  return ci->kind == KI_ACC && ci->phase == 0 && ci->dtype == t;
}

/* a constant k > 0, finite, of dtype t */
static bool is_pos_const(const KernelIr *k, int32_t i, LoomDType t) {
  if (i < 0 || i >= k->ninstr) return false;
  const KInstr *in = &k->instrs[i];
  return in->kind == KI_CONST && in->dtype == t && in->value.f > 0.0 && isfinite(in->value.f);
}

void cg_gpu_online_plan(const KernelIr *k, CgOnlPlan *plan) {
  memset(plan, 0, sizeof *plan);
  if (!cg_gpu_online_on() || !k || k->snippet || k->nkeep >= k->ndim || k->nphase < 2 || k->nphase > 32 ||
      k->ninstr <= 0)
    return;
  const KPhase *p0 = &k->phases[0];
  LoomDType t = (LoomDType)p0->acc_dtype;
  if (p0->kind != KP_REDUCE || p0->reduce_op != LOOM_REDUCE_MAX || (t != LOOM_FLOAT32 && t != LOOM_FLOAT64)) return;
  int32_t h = p0->value;
  if (h < 0 || h >= k->ninstr || k->instrs[h].dtype != t) return;
  CgMomPlan mom; /* one fold of phase 0's walk at a time */
  cg_gpu_onepass_plan(k, &mom);
  if (mom.n) return;
  for (int p = 1; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind != KP_REDUCE || ph->reduce_op != LOOM_REDUCE_SUM || ph->acc_dtype != t || ph->nstores) continue;
    int32_t v = ph->value;
    if (v < 0 || v >= k->ninstr) continue;
    const KInstr *f = &k->instrs[v];
    if (f->kind != KI_ELEM || (f->op != LOOM_OP_EXP && f->op != LOOM_OP_EXP2) || f->dtype != t) continue;
    int32_t u = f->src[0], d = is_shifted(k, u, h, t) ? u : -1;
    if (d < 0 && u >= 0 && u < v) { /* k (h - c) or (h - c) k */
      const KInstr *mu = &k->instrs[u];
      if (mu->kind == KI_ELEM && mu->op == LOOM_OP_MUL && mu->dtype == t) {
        if (is_shifted(k, mu->src[0], h, t) && is_pos_const(k, mu->src[1], t)) d = mu->src[0];
        else if (is_shifted(k, mu->src[1], h, t) && is_pos_const(k, mu->src[0], t)) d = mu->src[1];
      }
    }
    if (d < 0) continue;
    plan->phase = p;
    plan->h = h;
    plan->c = k->instrs[d].src[1];
    plan->v = v;
    plan->t = (uint8_t)t;
    return;
  }
}

/* ---- values --------------------------------------------------------------------------------------------- */

static LoomDType onl_t(const Lower *L) { return (LoomDType)L->onl.t; }
static LLVMTypeRef ftype(Lower *L) { return cg_reg_type(&L->m, onl_t(L)); }
static LLVMValueRef fconst(Lower *L, double v) { return cg_fconst(&L->m, onl_t(L), v); }

/* f(y - m): the kernel's own chain from h - c to the phase's value, with h := y and c := m. Clears the
 * evaluation cache (callers hold their values in registers). */
static LLVMValueRef f_of(Lower *L, LLVMValueRef y, LLVMValueRef m) {
  cg_clear_cache(L);
  L->cache[L->onl.h] = y;
  L->cache[L->onl.c] = m;
  cg_eval_needed(L, &L->onl.v, 1);
  LLVMValueRef r = L->cache[L->onl.v];
  cg_clear_cache(L);
  return r;
}

/* the running max's combine: phase 0's (NaN wins) */
static LLVMValueRef max_of(Lower *L, LLVMValueRef a, LLVMValueRef b) {
  return cg_red_combine(L, LOOM_REDUCE_MAX, onl_t(L), a, b);
}

/* The factor that moves a sum relative to x to one relative to m >= x: 1 when equal (two -inf maxima
 * too), else f(x - m) (0 for x = -inf below a finite m, NaN for a NaN m). */
static LLVMValueRef scale_of(Lower *L, LLVMValueRef x, LLVMValueRef m) {
  LLVMValueRef same = LLVMBuildFCmp(L->m.b, LLVMRealOEQ, x, m, "");
  return LLVMBuildSelect(L->m.b, same, fconst(L, 1.0), f_of(L, x, m), "");
}

/* (m, s) = merge of (ma, sa) then (mb, sb) */
static void merge_vals(Lower *L, LLVMValueRef ma, LLVMValueRef sa, LLVMValueRef mb, LLVMValueRef sb, LLVMValueRef *m,
                       LLVMValueRef *s) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef mm = max_of(L, ma, mb);
  LLVMValueRef a = LLVMBuildFMul(b, sa, scale_of(L, ma, mm), "");
  LLVMValueRef c = LLVMBuildFMul(b, sb, scale_of(L, mb, mm), "");
  *m = mm;
  *s = LLVMBuildFAdd(b, a, c, "");
}

/* ---- a thread's walk ---------------------------------------------------------------------------------- */

void cg_gpu_onl_begin(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  L->onl_ma = cg_entry_alloca(L, ftype(L), "om");
  L->onl_sa = cg_entry_alloca(L, ftype(L), "os");
  LLVMBuildStore(b, fconst(L, -INFINITY), L->onl_ma);
  LLVMBuildStore(b, fconst(L, 0.0), L->onl_sa);
}

void cg_gpu_onl_points(Lower *L, const LLVMValueRef *y, int npts) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef ft = ftype(L);
  LLVMValueRef m = LLVMBuildLoad2(b, ft, L->onl_ma, ""), s = LLVMBuildLoad2(b, ft, L->onl_sa, "");
  LLVMValueRef bm = y[0];
  for (int j = 1; j < npts; j++) bm = max_of(L, bm, y[j]);
  LLVMValueRef m2 = max_of(L, m, bm);
  LLVMValueRef ninf = fconst(L, -INFINITY), zero = fconst(L, 0.0), terms = NULL;
  for (int j = 0; j < npts; j++) { /* a -inf point adds 0, whatever the max so far */
    LLVMValueRef t = f_of(L, y[j], m2);
    t = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, y[j], ninf, ""), zero, t, "");
    terms = terms ? LLVMBuildFAdd(b, terms, t, "") : t;
  }
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildFMul(b, s, scale_of(L, m, m2), ""), terms, ""), L->onl_sa);
  LLVMBuildStore(b, m2, L->onl_ma);
}

void cg_gpu_onl_end(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  L->onl_m = LLVMBuildLoad2(b, ftype(L), L->onl_ma, "");
  L->onl_s = LLVMBuildLoad2(b, ftype(L), L->onl_sa, "");
}

/* ---- across the block ----------------------------------------------------------------------------------- */

void cg_gpu_onl_block_reduce(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  const int wave = m->gpu->wave, wave_log2 = wave == 64 ? 6 : wave == 32 ? 5 : 0;
  LLVMTypeRef ft = ftype(L);
  LLVMValueRef tid = LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_THREAD_ID), L->i64, "");
  LLVMValueRef lane = LLVMBuildAnd(b, tid, cg_i64(m, wave - 1), "");
  /* butterfly; the lower lane's pair always comes first, so both lanes of a pair get the same bits */
  for (int off = wave / 2; off >= 1; off /= 2) {
    LLVMValueRef om = cg_gpu_shfl_xor(L, L->onl_m, off), os = cg_gpu_shfl_xor(L, L->onl_s, off);
    LLVMValueRef low = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, lane, cg_i64(m, off), ""), cg_i64(m, 0), "");
    LLVMValueRef ma = LLVMBuildSelect(b, low, L->onl_m, om, ""), mb = LLVMBuildSelect(b, low, om, L->onl_m, "");
    LLVMValueRef sa = LLVMBuildSelect(b, low, L->onl_s, os, ""), sb = LLVMBuildSelect(b, low, os, L->onl_s, "");
    merge_vals(L, ma, sa, mb, sb, &L->onl_m, &L->onl_s);
  }
  /* one slot per wave for each value, written by lane 0; every thread folds them in wave order */
  LLVMValueRef sm = cg_gpu_shared_slots(L, "loom.onl.m"), ss = cg_gpu_shared_slots(L, "loom.onl.s");
  LLVMTypeRef at = LLVMArrayType2(L->i64, 32);
  LLVMValueRef warp = LLVMBuildLShr(b, tid, cg_i64(m, wave_log2), "");
  LLVMBasicBlockRef wr = cg_new_bb(L, "onl.write"), after = cg_new_bb(L, "onl.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i64(m, 0), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {cg_i64(m, 0), warp};
  LLVMBuildStore(b, L->onl_m, LLVMBuildGEP2(b, at, sm, ix, 2, ""));
  LLVMBuildStore(b, L->onl_s, LLVMBuildGEP2(b, at, ss, ix, 2, ""));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  m->gpu->barrier(m);
  LLVMValueRef nw = LLVMBuildLShr(b, LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_BLOCK_DIM), L->i64, ""),
                                  cg_i64(m, wave_log2), "");
  /* the fold over waves: allocas across the loop */
  LLVMValueRef am = cg_entry_alloca(L, ft, "obm"), as = cg_entry_alloca(L, ft, "obs");
  LLVMValueRef ix0[2] = {cg_i64(m, 0), cg_i64(m, 0)};
  LLVMBuildStore(b, LLVMBuildLoad2(b, ft, LLVMBuildGEP2(b, at, sm, ix0, 2, ""), ""), am);
  LLVMBuildStore(b, LLVMBuildLoad2(b, ft, LLVMBuildGEP2(b, at, ss, ix0, 2, ""), ""), as);
  LLVMValueRef wv = cg_entry_alloca(L, L->i64, "ow");
  LLVMBuildStore(b, cg_i64(m, 1), wv);
  LLVMBasicBlockRef head = cg_new_bb(L, "onl.head"), body = cg_new_bb(L, "onl.body"), done = cg_new_bb(L, "onl.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef w = LLVMBuildLoad2(b, L->i64, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, w, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {cg_i64(m, 0), w};
  LLVMValueRef mb = LLVMBuildLoad2(b, ft, LLVMBuildGEP2(b, at, sm, ixw, 2, ""), "");
  LLVMValueRef sb = LLVMBuildLoad2(b, ft, LLVMBuildGEP2(b, at, ss, ixw, 2, ""), "");
  LLVMValueRef mo, so;
  merge_vals(L, LLVMBuildLoad2(b, ft, am, ""), LLVMBuildLoad2(b, ft, as, ""), mb, sb, &mo, &so);
  LLVMBuildStore(b, mo, am);
  LLVMBuildStore(b, so, as);
  LLVMBuildStore(b, LLVMBuildAdd(b, w, cg_i64(m, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  L->onl_m = LLVMBuildLoad2(b, ft, am, "");
  L->onl_s = LLVMBuildLoad2(b, ft, as, "");
  m->gpu->barrier(m); /* the slots are free again */
}

/* ---- the result ----------------------------------------------------------------------------------------- */

void cg_gpu_onl_result(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef c = L->acc[0];
  LLVMValueRef v = LLVMBuildFMul(b, L->onl_s, scale_of(L, L->onl_m, c), "");
  /* a non-empty row of -inf only: two-pass sums exp(-inf - -inf) = NaN */
  LLVMValueRef allninf = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOEQ, L->onl_m, fconst(L, -INFINITY), ""),
                                      LLVMBuildICmp(b, LLVMIntSGT, L->rsize, cg_i64(&L->m, 0), ""), "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, L->onl_m, L->onl_m, ""); /* NaN in the row, whatever f(NaN) is */
  L->acc[L->onl.phase] = LLVMBuildSelect(b, LLVMBuildOr(b, allninf, nan, ""), fconst(L, NAN), v, "");
  L->accidx[L->onl.phase] = cg_i64(&L->m, 0);
}

/* ---- records (the phase split: gpu_phases.c, gpu_colfold.c) ------------------------------------------- */

static int record_base(const KernelIr *k) {
  return cg_acc_size(cg_red_value_dtype(k, &k->phases[0]), k->phases[0].reduce_op);
}

int cg_onl_record_size(const KernelIr *k, const CgOnlPlan *plan) { return plan->phase ? record_base(k) + 24 : 0; }
int cg_onl_fin_offset(const KernelIr *k) { return record_base(k) + 16; }

static LLVMValueRef at_byte(Lower *L, LLVMValueRef rec, int off) {
  LLVMValueRef o = cg_i64(&L->m, off);
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), rec, &o, 1, "");
}

void cg_gpu_onl_store(Lower *L, LLVMValueRef rec) {
  int base = record_base(L->k);
  LLVMBuildStore(L->m.b, L->onl_m, at_byte(L, rec, base));
  LLVMBuildStore(L->m.b, L->onl_s, at_byte(L, rec, base + 8));
}

void cg_gpu_onl_load(Lower *L, LLVMValueRef rec, LLVMValueRef *m, LLVMValueRef *s) {
  int base = record_base(L->k);
  *m = LLVMBuildLoad2(L->m.b, ftype(L), at_byte(L, rec, base), "");
  *s = LLVMBuildLoad2(L->m.b, ftype(L), at_byte(L, rec, base + 8), "");
}

void cg_gpu_onl_identity(Lower *L) {
  L->onl_m = fconst(L, -INFINITY);
  L->onl_s = fconst(L, 0.0);
}

void cg_gpu_onl_merge(Lower *L, LLVMValueRef mb, LLVMValueRef sb) {
  merge_vals(L, L->onl_m, L->onl_s, mb, sb, &L->onl_m, &L->onl_s);
}
