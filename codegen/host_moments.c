/* SPDX-License-Identifier: Apache-2.0 */
/* host_moments.c: variance in one pass over memory on the host.
 *
 * The phases moments_plan.c folds (a REDUCE phase summing (h - c)^2, c uniform over R: np.var's squared
 * deviations from the mean) get no walk of their own: phase 0's walk over an O point's R range also
 * gathers the moments (n, mean, M2) of h, and the folded phase's value is M2 + n (mean - c)^2. The same
 * math as the GPU's (gpu_moments.c): means relative to K, h at the O point's first R point (so Chan's
 * merge stays exact where the mean is large against the spread, 1e8 + N(0, 1)), Welford by blocks.
 *
 * The walk is phase 0's blocked walk (cg_host_walk_blocked, blocks of cg_sum_block_points): inside a
 * block every point adds d = (h - K) - s and d^2 to the block's shifted sums S1, S2 (reassociable adds:
 * the vector loop keeps partial sums per lane, as a plain sum does), with s the running mean relative
 * to K (at first h at the range's first point); at the block's end (the flush, beside phase 0's
 * compensated pair) mean = s + S1 / n and M2 += S2 - S1^2 / n, one division per block, M2 into a
 * compensated pair. NaN and inf give NaN (as the two-pass form's (inf - inf)^2); an empty R gives 0.
 *
 * Where it runs: the R split of inner multi-phase reductions (lower_host_outer.c): colpart of phase 0
 * stores the part's moments after phase 0's accumulator in its record (cg_mom_record_size), colfinish
 * merges the parts by Chan in part order (the same parts give the same bits) and keeps each folded
 * phase's value in phase 0's finished record (cg_mom_fin_offset); the folded phases leave col_phases, so
 * the launcher runs no colpart for them. And run() per O point (lower_host.c body_o_point) for rows the
 * R split would cut, over the same parts merged the same way (cg_host_mom_o_point); shorter rows take
 * two passes there (the second from cache).
 * Not here: the outer strategy (columns: BatchNorm statistics over axis 0), short rows of known extent
 * (lower_host_rows.c), kernels whose phase 0 is not a real float sum; they keep a pass per phase, as
 * does every kernel under LOOM_HOST_ONEPASS_VAR=0.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* LOOM_HOST_ONEPASS_VAR=0: two passes. Read once per process (the compiled code and the target's
 * description, hence the cache keys, must agree whatever the environment does later). */
static bool onepass_off(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_HOST_ONEPASS_VAR", 1) == 0;
}

const char *cg_host_switch_tag(void) { return onepass_off() ? " onepass0" : ""; }

void cg_host_onepass_plan(Lower *L) {
  const KernelIr *k = L->k;
  memset(&L->mom, 0, sizeof L->mom);
  L->mom_on = false;
  if (onepass_off() || L->outer || cg_host_rows_on(L) || k->phases[0].kind != KP_REDUCE) return;
  const KPhase *ph0 = &k->phases[0];
  LoomDType t0 = (LoomDType)ph0->acc_dtype;
  if (!cg_sum_compensated(k, ph0) || dtype_is_complex(t0)) return; /* phase 0: a real float sum */
  cg_onepass_plan(k, &L->mom);
  /* a folded phase has no side stores, and no value kept for a MAP phase (lower_host_keep.c) */
  for (int i = 0; i < L->mom.n; i++) {
    int p = L->mom.phase[i];
    if (k->phases[p].nstores || (L->hkeep_v >= 0 && L->hkeep_p == p)) {
      memset(&L->mom, 0, sizeof L->mom);
      return;
    }
  }
}

/* ---- the walk ----------------------------------------------------------------------------------------- */
static LLVMTypeRef ftype(Lower *L, int i) { return cg_reg_type(&L->m, (LoomDType)L->mom.t[i]); }
static LLVMValueRef fconst(Lower *L, int i, double v) { return cg_fconst(&L->m, (LoomDType)L->mom.t[i], v); }

/* Points of a range's first block. Its shift is the range's first point, and the cancellation in its
 * S2 - S1^2 / n grows with (shift - its mean)^2 (an outlier first: 1e3 from a spread of 1); later blocks
 * are shifted by the running mean and add to what came before (no cancellation to speak of). A short
 * first block brings the running mean close at once: its error is ~eps k (outlier / k)^2 for the
 * next block of 2048 points, k = 16 here. */
#define CG_MOM_FIRST_BLOCK 16

typedef struct MomWalk {
  const KPhase *ph;                           /* phase 0 */
  LoomDType t0;                               /* its accumulator's dtype */
  LLVMValueRef accv, s, c;                    /* allocas: phase 0's block accumulator, compensated pair */
  LLVMValueRef s1[CG_MOM_MAX], s2[CG_MOM_MAX]; /* allocas: the block's shifted sums */
  LLVMValueRef qc[CG_MOM_MAX];                /* allocas: M2's compensation */
  LLVMValueRef count;                         /* the blocked walk's count of the block's points */
  LLVMValueRef count0;                        /* alloca: *count at the block's start */
  LLVMValueRef *dst;                          /* one-point walks: h's values go here (allocas) */
  bool minus_K;                               /* ... less K */
} MomWalk;

/* a one-point walk's body: h (less K) into w->dst */
static void body_h(Lower *L, void *arg) {
  const MomWalk *w = arg;
  cg_clear_cache(L);
  cg_eval_needed(L, L->mom.h, L->mom.n);
  for (int i = 0; i < L->mom.n; i++) {
    LLVMValueRef h = L->cache[L->mom.h[i]];
    LLVMBuildStore(L->m.b, w->minus_K ? LLVMBuildFSub(L->m.b, h, L->mom_K[i], "") : h, w->dst[i]);
  }
  cg_clear_cache(L);
}

/* h at linear R point r of the current O point (L->off) into the allocas dst (left alone unless on) */
static void h_at(Lower *L, LLVMValueRef r, LLVMValueRef on, LLVMValueRef *dst, bool minus_K) {
  LLVMBuilderRef b = L->m.b;
  MomWalk w = {.dst = dst, .minus_K = minus_K};
  LLVMValueRef hi = LLVMBuildSelect(b, on, LLVMBuildAdd(b, r, cg_i64(&L->m, 1), ""), r, "");
  cg_host_walk(L, L->k->nkeep, L->k->ndim, r, hi, body_h, &w);
}

/* L->mom_K: h at the O point's first R point (0 for an empty R). */
static void shift_K(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef ka[CG_MOM_MAX];
  for (int i = 0; i < L->mom.n; i++) {
    ka[i] = cg_entry_alloca(L, ftype(L, i), "hK");
    LLVMBuildStore(b, fconst(L, i, 0.0), ka[i]);
  }
  h_at(L, cg_i64(&L->m, 0), LLVMBuildICmp(b, LLVMIntSGT, L->rsize, cg_i64(&L->m, 0), ""), ka, false);
  for (int i = 0; i < L->mom.n; i++) L->mom_K[i] = LLVMBuildLoad2(b, ftype(L, i), ka[i], "");
}

static void body_point(Lower *L, void *arg) {
  MomWalk *w = arg;
  LLVMBuilderRef b = L->m.b;
  const KPhase *ph = w->ph;
  cg_clear_cache(L);
  cg_reduce_point(L, ph);
  cg_host_keep_store(L, ph);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef cur = LLVMBuildLoad2(b, LLVMTypeOf(v), w->accv, "");
  LLVMBuildStore(b, cg_red_combine(L, ph->reduce_op, w->t0, cur, v), w->accv);
  cg_eval_needed(L, L->mom.h, L->mom.n);
  for (int i = 0; i < L->mom.n; i++) {
    LoomDType t = (LoomDType)L->mom.t[i];
    LLVMTypeRef ft = ftype(L, i);
    LLVMValueRef s = LLVMBuildLoad2(b, ft, L->mom_a[i], ""); /* invariant within the block */
    LLVMValueRef d = LLVMBuildFSub(b, LLVMBuildFSub(b, L->cache[L->mom.h[i]], L->mom_K[i], ""), s, "");
    LLVMBuildStore(b, cg_combine(&L->m, LOOM_REDUCE_SUM, t, LLVMBuildLoad2(b, ft, w->s1[i], ""), d), w->s1[i]);
    LLVMValueRef dd = LLVMBuildFMul(b, d, d, "");
    LLVMBuildStore(b, cg_combine(&L->m, LOOM_REDUCE_SUM, t, LLVMBuildLoad2(b, ft, w->s2[i], ""), dd), w->s2[i]);
  }
  cg_clear_cache(L);
}

/* The end of a block of *count points: phase 0's accumulator into its pair; Chan's merge of the moments
 * so far, (n, s, M2), with the block's (k, s + S1 / k, S2 - S1^2 / k): n += k, s += S1 / n,
 * M2 += S2 - S1^2 / n (one division; nothing changes for an empty block). */
static void flush(Lower *L, void *arg) {
  MomWalk *w = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef t0 = cg_reg_type(&L->m, w->t0);
  cg_sum_add(L, w->t0, w->s, w->c, LLVMBuildLoad2(b, t0, w->accv, ""));
  LLVMBuildStore(b, cg_red_identity(L, w->ph->reduce_op, w->t0), w->accv);
  LLVMValueRef pts = LLVMBuildSub(b, LLVMBuildLoad2(b, L->i64, w->count, ""), LLVMBuildLoad2(b, L->i64, w->count0, ""), "");
  LLVMValueRef n = LLVMBuildAdd(b, LLVMBuildLoad2(b, L->i64, L->mom_cnt, ""), pts, "");
  LLVMBuildStore(b, n, L->mom_cnt);
  LLVMBuildStore(b, cg_i64(&L->m, 0), w->count0); /* the walk zeroes *count after a flush */
  LLVMValueRef n1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, n, cg_i64(&L->m, 0), ""), n, cg_i64(&L->m, 1), "");
  for (int i = 0; i < L->mom.n; i++) {
    LLVMTypeRef ft = ftype(L, i);
    LLVMValueRef s1 = LLVMBuildLoad2(b, ft, w->s1[i], ""), s2 = LLVMBuildLoad2(b, ft, w->s2[i], "");
    LLVMValueRef s1r = LLVMBuildFMul(b, s1, LLVMBuildFDiv(b, fconst(L, i, 1.0), LLVMBuildSIToFP(b, n1, ft, ""), ""), "");
    LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, ft, L->mom_a[i], ""), s1r, ""), L->mom_a[i]);
    cg_sum_add(L, (LoomDType)L->mom.t[i], L->mom_q[i], w->qc[i], LLVMBuildFSub(b, s2, LLVMBuildFMul(b, s1, s1r, ""), ""));
    LLVMBuildStore(b, fconst(L, i, 0.0), w->s1[i]);
    LLVMBuildStore(b, fconst(L, i, 0.0), w->s2[i]);
  }
}

void cg_host_mom_phase0(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  const KPhase *ph = &k->phases[0];
  MomWalk w = {.ph = ph, .t0 = cg_red_value_dtype(k, ph)};
  LLVMTypeRef t0 = cg_reg_type(&L->m, w.t0);
  LLVMValueRef id = cg_red_identity(L, ph->reduce_op, w.t0);
  w.accv = cg_entry_alloca(L, t0, "macc");
  w.s = cg_entry_alloca(L, t0, "msum");
  w.c = cg_entry_alloca(L, t0, "mcomp");
  w.count = cg_entry_alloca(L, L->i64, "mblk");
  LLVMBuildStore(b, id, w.accv);
  LLVMBuildStore(b, id, w.s);
  LLVMBuildStore(b, id, w.c);
  L->mom_cnt = cg_entry_alloca(L, L->i64, "mcnt");
  LLVMBuildStore(b, cg_i64(&L->m, 0), L->mom_cnt);
  shift_K(L);
  for (int i = 0; i < L->mom.n; i++) {
    LLVMValueRef z = fconst(L, i, 0.0);
    L->mom_a[i] = cg_entry_alloca(L, ftype(L, i), "ms");
    L->mom_q[i] = cg_entry_alloca(L, ftype(L, i), "mq");
    w.qc[i] = cg_entry_alloca(L, ftype(L, i), "mqc");
    w.s1[i] = cg_entry_alloca(L, ftype(L, i), "ms1");
    w.s2[i] = cg_entry_alloca(L, ftype(L, i), "ms2");
    LLVMBuildStore(b, z, L->mom_a[i]);
    LLVMBuildStore(b, z, L->mom_q[i]);
    LLVMBuildStore(b, z, w.qc[i]);
    LLVMBuildStore(b, z, w.s1[i]);
    LLVMBuildStore(b, z, w.s2[i]);
  }
  /* the first shift: the range's first point, relative to K */
  h_at(L, lo, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), L->mom_a, true);
  CgWalkBlocks blk = {cg_sum_block_points(k), flush, &w, w.count};
  int64_t first = blk.points < CG_MOM_FIRST_BLOCK ? blk.points : CG_MOM_FIRST_BLOCK;
  w.count0 = cg_entry_alloca(L, L->i64, "mblk0");
  LLVMBuildStore(b, cg_i64(&L->m, blk.points - first), w.count0);
  cg_host_walk_blocked_first(L, k->nkeep, k->ndim, lo, hi, body_point, &w, &blk, first);
  flush(L, &w); /* the last, partial block */
  L->acc[0] = cg_sum_settle(L, w.t0, LLVMBuildLoad2(b, t0, w.s, ""), LLVMBuildLoad2(b, t0, w.c, ""));
  L->accidx[0] = cg_i64(&L->m, 0);
  for (int i = 0; i < L->mom.n; i++) { /* M2's pair settled, then (n, mean, M2) values */
    LoomDType t = (LoomDType)L->mom.t[i];
    LLVMValueRef q = LLVMBuildLoad2(b, ftype(L, i), L->mom_q[i], ""), qc = LLVMBuildLoad2(b, ftype(L, i), w.qc[i], "");
    LLVMBuildStore(b, cg_sum_settle(L, t, q, qc), L->mom_q[i]);
  }
  cg_gpu_mom_end(L);
}

/* ---- parts and results -------------------------------------------------------------------------------- */
/* Stack slots of the running moments of parts folded in part order (count *an, per moment mean am[i] and
 * M2 aq[i]), zeroed at the builder's position. */
static void mom_slots(Lower *L, LLVMValueRef *an, LLVMValueRef *am, LLVMValueRef *aq) {
  LLVMBuilderRef b = L->m.b;
  *an = cg_entry_alloca(L, L->i64, "mn");
  LLVMBuildStore(b, cg_i64(&L->m, 0), *an);
  for (int i = 0; i < L->mom.n; i++) {
    am[i] = cg_entry_alloca(L, ftype(L, i), "mm");
    aq[i] = cg_entry_alloca(L, ftype(L, i), "mq");
    LLVMBuildStore(b, fconst(L, i, 0.0), am[i]);
    LLVMBuildStore(b, fconst(L, i, 0.0), aq[i]);
  }
}

/* The slots' moments merged with a later part's (nb, mb, qb) by Chan's merge (the slots' first), stored
 * back into the slots. */
static void mom_fold(Lower *L, LLVMValueRef an, LLVMValueRef *am, LLVMValueRef *aq, LLVMValueRef nb, LLVMValueRef *mb,
                     LLVMValueRef *qb) {
  LLVMBuilderRef b = L->m.b;
  cg_gpu_mom_take(L, an, am, aq);
  cg_gpu_mom_merge(L, nb, mb, qb);
  LLVMBuildStore(b, L->mom_n, an);
  for (int i = 0; i < L->mom.n; i++) {
    LLVMBuildStore(b, L->mom_mean[i], am[i]);
    LLVMBuildStore(b, L->mom_m2[i], aq[i]);
  }
}

void cg_host_mom_merge_parts(Lower *L, LLVMValueRef first, LLVMValueRef nparts, int rec_size) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef an, am[CG_MOM_MAX], aq[CG_MOM_MAX];
  LLVMValueRef iv = cg_entry_alloca(L, L->i64, "pi");
  LLVMBuildStore(b, cg_i64(&L->m, 0), iv);
  mom_slots(L, &an, am, aq);
  LLVMBasicBlockRef head = cg_new_bb(L, "mp.head"), body = cg_new_bb(L, "mp.body"), done = cg_new_bb(L, "mp.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef part = LLVMBuildLoad2(b, L->i64, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, part, nparts, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef byte = LLVMBuildMul(b, part, cg_i64(&L->m, rec_size), "");
  LLVMValueRef rec = LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), first, &byte, 1, "");
  LLVMValueRef nb, mb[CG_MOM_MAX], qb[CG_MOM_MAX];
  cg_gpu_mom_load(L, rec, &nb, mb, qb);
  mom_fold(L, an, am, aq, nb, mb, qb); /* earlier parts first */
  LLVMBuildStore(b, LLVMBuildAdd(b, part, cg_i64(&L->m, 1), ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  cg_gpu_mom_take(L, an, am, aq);
}

void cg_host_mom_results(Lower *L, bool need_K) {
  LLVMBuilderRef b = L->m.b;
  if (need_K) shift_K(L);
  LLVMValueRef empty = LLVMBuildICmp(b, LLVMIntEQ, L->mom_n, cg_i64(&L->m, 0), "");
  for (int i = 0; i < L->mom.n; i++) {
    int p = L->mom.phase[i];
    cg_clear_cache(L);
    cg_eval_needed(L, &L->mom.c[i], 1);
    LLVMValueRef c = L->cache[L->mom.c[i]];
    cg_clear_cache(L);
    /* (mean - K) - (c - K): both differences of values close together when c is a mean */
    LLVMValueRef dm = LLVMBuildFSub(b, L->mom_mean[i], LLVMBuildFSub(b, c, L->mom_K[i], ""), "");
    LLVMValueRef nf = LLVMBuildSIToFP(b, L->mom_n, ftype(L, i), "");
    LLVMValueRef v = LLVMBuildFAdd(b, L->mom_m2[i], LLVMBuildFMul(b, nf, LLVMBuildFMul(b, dm, dm, ""), ""), "");
    L->acc[p] = LLVMBuildSelect(b, empty, fconst(L, i, 0.0), v, "");
    L->accidx[p] = cg_i64(&L->m, 0);
  }
}

/* run() of a row that the R split would cut (the launcher's plan, runtime/host_launch.c: P =
 * min(RT_RED_MAX_PARTS, ceil(nr / RT_RED_PART_POINTS)) parts, split_range's ranges; P > 1) takes one pass
 * over the same parts, merged as colfinish merges them, so whichever strategy the thread count picks
 * gives the same bits. Shorter rows take two passes: the second reads the row from cache, where the
 * moments' extra operations per point cost more than the read saved (std of 4096 rows of 1024 float32,
 * warm: 0.50 ms one pass, 0.44 two). */
#define CG_MOM_PART_POINTS 32768 /* RT_RED_PART_POINTS */
#define CG_MOM_MAX_PARTS 256     /* RT_RED_MAX_PARTS */

/* The parts of [0, rsize) one after the other: phase 0's settled part sums into a compensated pair, the
 * moments by Chan's merge in part order (colfinish's fold, lower_host_outer.c, and merge_parts above). */
static void o_point_parts(Lower *L) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  LoomDType t0 = cg_red_value_dtype(k, &k->phases[0]);
  LLVMTypeRef ty0 = cg_reg_type(m, t0);
  LLVMValueRef rs = L->rsize;
  LLVMValueRef np = LLVMBuildSDiv(b, LLVMBuildAdd(b, rs, cg_i64(m, CG_MOM_PART_POINTS - 1), ""), cg_i64(m, CG_MOM_PART_POINTS), "");
  np = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, np, cg_i64(m, CG_MOM_MAX_PARTS), ""), cg_i64(m, CG_MOM_MAX_PARTS), np, "");
  LLVMValueRef q = LLVMBuildSDiv(b, rs, np, ""), r = LLVMBuildSRem(b, rs, np, "");
  LLVMValueRef sv = cg_entry_alloca(L, ty0, "ops"), sc = cg_entry_alloca(L, ty0, "opc"), iv = cg_entry_alloca(L, L->i64, "opart");
  LLVMValueRef an, am[CG_MOM_MAX], aq[CG_MOM_MAX];
  LLVMValueRef id = cg_red_identity(L, k->phases[0].reduce_op, t0);
  LLVMBuildStore(b, id, sv);
  LLVMBuildStore(b, id, sc);
  LLVMBuildStore(b, cg_i64(m, 0), iv);
  mom_slots(L, &an, am, aq);
  LLVMBasicBlockRef head = cg_new_bb(L, "op.head"), body = cg_new_bb(L, "op.body"), done = cg_new_bb(L, "op.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef part = LLVMBuildLoad2(b, L->i64, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, part, np, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  /* split_range: lo = q part + min(part, r), hi = lo + q + (part < r) */
  LLVMValueRef below = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
  LLVMValueRef lo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, below, part, r, ""), "");
  LLVMValueRef hi = LLVMBuildAdd(b, LLVMBuildAdd(b, lo, q, ""), LLVMBuildZExt(b, below, L->i64, ""), "");
  cg_host_mom_phase0(L, lo, hi);
  cg_sum_add(L, t0, sv, sc, L->acc[0]);
  LLVMValueRef nb = L->mom_n, mb[CG_MOM_MAX], qb[CG_MOM_MAX];
  memcpy(mb, L->mom_mean, sizeof mb);
  memcpy(qb, L->mom_m2, sizeof qb);
  mom_fold(L, an, am, aq, nb, mb, qb);
  LLVMBuildStore(b, LLVMBuildAdd(b, part, cg_i64(m, 1), ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  cg_gpu_mom_take(L, an, am, aq);
  L->acc[0] = cg_sum_settle(L, t0, LLVMBuildLoad2(b, ty0, sv, ""), LLVMBuildLoad2(b, ty0, sc, ""));
  L->accidx[0] = cg_i64(m, 0);
}

void cg_host_mom_o_point(Lower *L) {
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef one = cg_new_bb(L, "mom.one"), two = cg_new_bb(L, "mom.two"), join = cg_new_bb(L, "mom.join");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, L->rsize, cg_i64(&L->m, CG_MOM_PART_POINTS), ""), one, two);
  LLVMPositionBuilderAtEnd(b, one);
  o_point_parts(L);
  cg_host_mom_results(L, true);
  LLVMValueRef v1[2 * (CG_MOM_MAX + 1)];
  v1[0] = L->acc[0], v1[1] = L->accidx[0];
  for (int i = 0; i < L->mom.n; i++) v1[2 + 2 * i] = L->acc[L->mom.phase[i]], v1[3 + 2 * i] = L->accidx[L->mom.phase[i]];
  LLVMBasicBlockRef end1 = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, two); /* phase 0, then each folded phase (it reads phase 0's result only) */
  cg_clear_cache(L);
  cg_host_reduce_phase(L, 0, cg_i64(&L->m, 0), L->rsize);
  for (int i = 0; i < L->mom.n; i++) {
    cg_clear_cache(L);
    cg_host_reduce_phase(L, L->mom.phase[i], cg_i64(&L->m, 0), L->rsize);
  }
  cg_clear_cache(L);
  LLVMValueRef v2[2 * (CG_MOM_MAX + 1)];
  v2[0] = L->acc[0], v2[1] = L->accidx[0];
  for (int i = 0; i < L->mom.n; i++) v2[2 + 2 * i] = L->acc[L->mom.phase[i]], v2[3 + 2 * i] = L->accidx[L->mom.phase[i]];
  LLVMBasicBlockRef end2 = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  LLVMBasicBlockRef from[2] = {end1, end2};
  for (int j = 0; j < 2 + 2 * L->mom.n; j++) {
    LLVMValueRef in[2] = {v1[j], v2[j]};
    LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(v1[j]), "");
    LLVMAddIncoming(phi, in, from, 2);
    int p = j < 2 ? 0 : L->mom.phase[(j - 2) / 2];
    if (j % 2 == 0) L->acc[p] = phi;
    else L->accidx[p] = phi;
  }
}
