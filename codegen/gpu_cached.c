/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_cached.c: one O point of the GPU's cached ROW entries (cached / cachedv): the row's points a thread
 * owns are loaded once into registers, then every phase (max, sum, map, ...) runs over them, and costly
 * values a REDUCE phase computed are kept for the later phases (Kept). gpu_lower.c builds the entries
 * around cg_gpu_cached_item; the launcher picks them for rows that fit (gpu_launch_policy.c). */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* The lanes-wide vector of buffer bi at group g's first point into the lanes of L->vload[bi] that group g
 * reads (the others undefined): a buffer only MAP phases read, loaded where its group is computed. */
static void cached_group_load(Lower *L, int bi, LLVMValueRef *rj, int g, int lanes) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LoomDType st = (LoomDType)k->bufs[bi].dtype;
  cg_gpu_offsets(L, rj[g * lanes], k->nkeep, k->ndim, L->ooff, L->off);
  LLVMValueRef ld = LLVMBuildLoad2(m->b, cg_vec_type(m, st, (unsigned)lanes), cg_elem_ptr(L, bi, L->off[bi]), "");
  LLVMSetAlignment(ld, (unsigned)lanes * (unsigned)loom_dtype_size(st));
  LLVMValueRef vec = LLVMGetUndef(cg_vec_type(m, st, (unsigned)L->cache_k));
  for (int l = 0; l < lanes; l++) vec = cg_vec_set(m, st, vec, cg_vec_get(m, st, ld, (unsigned)l), (unsigned)(g * lanes + l));
  L->vload[bi] = vec;
}

/* Buffer bi's point r (scalar) into lane j of L->vload[bi] (the others undefined): the peel's extra point
 * of a buffer only MAP phases read. */
static void cached_point_load(Lower *L, int bi, LLVMValueRef r, int j) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LoomDType st = (LoomDType)k->bufs[bi].dtype;
  cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  LLVMValueRef ld = LLVMBuildLoad2(m->b, cg_mem_type(m, st), cg_elem_ptr(L, bi, L->off[bi]), "");
  LLVMSetAlignment(ld, dtype_align(st));
  L->vload[bi] = cg_vec_set(m, st, LLVMGetUndef(cg_vec_type(m, st, (unsigned)L->cache_k)), ld, (unsigned)j);
}

/* Values kept across the phases of a cached row (registers): a costly value (cg_costly_values) that a
 * REDUCE phase computed at point j is reused by the later phases at j instead of computed again
 * (softmax's exp(x - max): the sum phase's, read by the map phase). The REDUCE phases' per-point code is
 * straight-line, so its values dominate every later phase. LOOM_GPU_ROW_KEEP=0: off (A/B timings). */
typedef struct Kept {
  const uint8_t *keep; /* ninstr: may be kept */
  LLVMValueRef *v;     /* cache_k * ninstr: the value at point j, or NULL */
  LLVMValueRef *w;     /* cache_k * ninstr: else a word (narrow_words) whose lane j % 2 is that value, or NULL */
} Kept;

static void kept_save(Lower *L, const Kept *kp, int j) {
  int n = L->k->ninstr;
  for (int i = 0; kp && i < n; i++)
    if (kp->keep[i] && L->cache[i]) kp->v[(size_t)j * n + i] = L->cache[i];
}

static void kept_restore(Lower *L, const Kept *kp, int j) {
  int n = L->k->ninstr;
  for (int i = 0; kp && i < n; i++)
    if (kp->v[(size_t)j * n + i]) L->cache[i] = kp->v[(size_t)j * n + i];
    else if (kp->w[(size_t)j * n + i]) /* unpacked here, in the phase that reads it */
      L->cache[i] = LLVMBuildExtractElement(L->m.b, kp->w[(size_t)j * n + i],
                                            LLVMConstInt(LLVMInt32TypeInContext(L->m.c), (unsigned)j % 2, 0), "");
}

/* ---- narrow kept values as words across a block reduction -------------------------------------------
 * A float16 value a REDUCE phase keeps for a later phase (softmax's rounded exp(x - max), read again by
 * the map's division) and its float32 widening both lived through the block reduction's barrier: LLVM
 * merges the later phase's widening with the earlier one's, and folds its tests of the widened value into
 * tests of the half (softmax_f16's cached entry: 32 float32 and 32 half registers, 92 registers, 31 % of
 * the warps resident). In block mode, after the REDUCE phase's points and before its block reduction,
 * each pair of points' kept float16 / bfloat16 values becomes one 32-bit word through hooks.opaque_i32
 * (which nothing folds or merges), unpacked where a later phase reads it, and a kept widening of such a
 * value is widened again there: only the 16 words live through the barrier (block mode: 89 -> 61
 * registers by ptxas). The same values. The words alone leave ptxas at 92 registers (the short-row path
 * of the same entry: 81); with the register fit of cg_gpu_rowc_fit the block mode fits 64 registers
 * without spilling. LOOM_GPU_ROW_NARROW_WORDS=0: off, and no fit for it (A/B timings; read once per
 * process). */
bool cg_gpu_narrow_words(const Lower *L) {
  static int on = -1;
  return L->m.gpu && L->m.gpu->opaque_i32 && !L->k->snippet && cg_env_int_once(&on, "LOOM_GPU_ROW_NARROW_WORDS", 1);
}

static bool row_keep_on(void) {
  static int keep_knob = -1;
  return cg_env_int_once(&keep_knob, "LOOM_GPU_ROW_KEEP", 1) != 0;
}

/* need[i]: instruction i is read (through operands) by phase ph. */
static void phase_reads(const KernelIr *k, const KPhase *ph, uint8_t *need) {
  memset(need, 0, (size_t)k->ninstr);
  if (ph->kind == KP_REDUCE || ph->kind == KP_SCAN) need[ph->value] = 1;
  for (int s = 0; ph->kind != KP_REDUCE && s < ph->nstores; s++) need[k->stores[ph->store_begin + s].value] = 1;
  for (int i = k->ninstr - 1; i >= 0; i--)
    for (int j = 0; need[i] && j < cg_instr_nsrc(&k->instrs[i]); j++)
      if (k->instrs[i].src[j] >= 0) need[k->instrs[i].src[j]] = 1;
}

/* Whether a REDUCE phase's costly value that a later phase reads (a value Kept keeps) is a cast to a 2-byte
 * float (narrow) or a value of 8 bytes or more (!narrow). */
static bool cached_keeps(LoomContext *ctx, const KernelIr *k, bool narrow) {
  if (k->snippet || k->nphase < 2 || k->ninstr <= 0 || !row_keep_on()) return false;
  size_t n = (size_t)k->ninstr;
  uint8_t *buf = ctx_calloc(ctx, 3 * n, 1);
  if (!buf) return false;
  uint8_t *costly = buf, *np = buf + n, *nq = buf + 2 * n;
  cg_costly_values(k, costly);
  bool found = false;
  for (int p = 0; p + 1 < k->nphase && !found; p++) {
    if (k->phases[p].kind != KP_REDUCE) continue;
    phase_reads(k, &k->phases[p], np);
    for (int q = p + 1; q < k->nphase && !found; q++) {
      if (k->phases[q].kind == KP_FINAL) continue;
      phase_reads(k, &k->phases[q], nq);
      for (size_t i = 0; i < n && !found; i++)
        found = np[i] && nq[i] && costly[i] &&
                (narrow ? k->instrs[i].kind == KI_CAST &&
                              (k->instrs[i].dtype == LOOM_FLOAT16 || k->instrs[i].dtype == LOOM_BFLOAT16)
                        : loom_dtype_size((LoomDType)k->instrs[i].dtype) >= 8);
    }
  }
  ctx_free(ctx, buf);
  return found;
}

bool cg_gpu_cached_keeps_narrow(LoomContext *ctx, const KernelIr *k) { return cached_keeps(ctx, k, true); }
bool cg_gpu_cached_keeps_wide(LoomContext *ctx, const KernelIr *k) { return cached_keeps(ctx, k, false); }

/* v (a 4-byte value: a pair of 2-byte values) through opaque_i32. */
static LLVMValueRef opaque_word(Lower *L, LLVMValueRef v) {
  CgMath *m = &L->m;
  LLVMValueRef w = LLVMBuildBitCast(m->b, v, LLVMInt32TypeInContext(m->c), "");
  return LLVMBuildBitCast(m->b, m->gpu->opaque_i32(m, w), LLVMTypeOf(v), "");
}

static bool narrow_float(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMHalfTypeKind || LLVMGetTypeKind(t) == LLVMBFloatTypeKind ||
         (LLVMGetTypeKind(t) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 16);
}

/* After a REDUCE phase's points, before its block reduction: the kept narrow values as words (unpacked by
 * kept_restore in the phases that read them). */
static void narrow_kept(Lower *L, const Kept *kp) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  const int K = L->cache_k, n = k->ninstr;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  for (int i = 0; i < n; i++) {
    const KInstr *in = &k->instrs[i];
    /* a kept exact widening of a kept value: widened again from the (opaque) narrow value */
    if (in->kind == KI_CAST && kp->keep[in->src[0]] && (in->dtype == LOOM_FLOAT32 || in->dtype == LOOM_FLOAT64) &&
        (k->instrs[in->src[0]].dtype == LOOM_FLOAT16 || k->instrs[in->src[0]].dtype == LOOM_BFLOAT16)) {
      bool narrow_kept = true;
      for (int j = 0; j < K && narrow_kept; j++) narrow_kept = kp->v[(size_t)j * n + in->src[0]] != NULL;
      for (int j = 0; j < K && narrow_kept; j++) kp->v[(size_t)j * n + i] = NULL;
    }
  }
  for (int i = 0; i < n; i++) {
    bool all = kp->keep[i];
    for (int j = 0; j < K && all; j++) all = kp->v[(size_t)j * n + i] && narrow_float(LLVMTypeOf(kp->v[(size_t)j * n + i]));
    if (!all) continue;
    for (int j = 0; j + 1 < K; j += 2) { /* points j, j + 1 in one word (an odd K's last point stays a value) */
      size_t a = (size_t)j * n + i, c = (size_t)(j + 1) * n + i;
      LLVMTypeRef pt = LLVMVectorType(LLVMTypeOf(kp->v[a]), 2);
      LLVMValueRef pair = LLVMBuildInsertElement(m->b, LLVMGetUndef(pt), kp->v[a], LLVMConstInt(i32, 0, 0), "");
      pair = LLVMBuildInsertElement(m->b, pair, kp->v[c], LLVMConstInt(i32, 1, 0), "");
      kp->w[a] = kp->w[c] = opaque_word(L, pair);
      kp->v[a] = kp->v[c] = NULL;
    }
  }
}

/* Phase p of the cached entry's O point (cg_gpu_cached_item), the buffers it reads in L->vload. */
static void cached_phase(Lower *L, GpuEntry *e, int p, LLVMValueRef *rj, LLVMValueRef *valid, int lanes, int G,
                         uint64_t defer, const Kept *kp) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  const int K = L->cache_k, KV = lanes > 1 ? G * lanes : K; /* points j >= KV: the peel's extra point */
  const KPhase *ph = &k->phases[p];
  cg_clear_cache(L);
  if (ph->kind == KP_REDUCE) {
    LoomDType vt = cg_red_value_dtype(k, ph);
    LLVMValueRef a = cg_red_identity(L, ph->reduce_op, vt);
    LLVMValueRef ai = cg_i64(m, GPU_EMPTY_INDEX), before = a;
    /* a vector's lanes are valid together: fold them in order, then one select per vector.
     * LOOM_GPU_GROUP_FOLD=0: a select per point (A/B timings) */
    static int group_fold = -1;
    bool fold_vectors = !is_arg(ph->reduce_op) && lanes > 1 && cg_env_int_once(&group_fold, "LOOM_GPU_GROUP_FOLD", 1);
    for (int j = 0; j < K; j++) {
      L->lane = (unsigned)j;
      cg_gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
      cg_clear_cache(L);
      kept_restore(L, kp, j);
      cg_eval_needed(L, &ph->value, 1);
      kept_save(L, kp, j);
      LLVMValueRef v = L->cache[ph->value];
      if (j >= KV) { /* the extra point (before or after the thread's vectors): the index-ordered combine */
        LLVMValueRef na = a, nai = ai;
        cg_gpu_combine(L, ph, vt, &na, &nai, v, is_arg(ph->reduce_op) ? cg_to_i64(L, rj[j]) : ai, true);
        a = LLVMBuildSelect(b, valid[j], na, a, "");
        ai = LLVMBuildSelect(b, valid[j], nai, ai, "");
      } else if (fold_vectors) {
        if (j % lanes == 0) before = a;
        a = cg_red_combine(L, ph->reduce_op, vt, a, v);
        if (j % lanes == lanes - 1) a = LLVMBuildSelect(b, valid[j], a, before, "");
      } else if (is_arg(ph->reduce_op)) {
        LLVMValueRef take = cg_arg_better(m, (LoomReduceOp)ph->reduce_op, vt, a, v);
        take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, ai, cg_i64(m, GPU_EMPTY_INDEX), ""), "");
        take = LLVMBuildAnd(b, take, valid[j], "");
        a = LLVMBuildSelect(b, take, v, a, "");
        ai = LLVMBuildSelect(b, take, cg_to_i64(L, rj[j]), ai, "");
      } else {
        a = LLVMBuildSelect(b, valid[j], cg_red_combine(L, ph->reduce_op, vt, a, v), a, "");
      }
    }
    cg_clear_cache(L);
    if (p + 1 < k->nphase && kp && !e->group && cg_gpu_narrow_words(L)) narrow_kept(L, kp);
    L->acc[p] = a;
    L->accidx[p] = ai;
    if (e->group) cg_gpu_group_reduce(L, p, e->group);
    else cg_gpu_block_reduce(L, p);
  } else if (ph->kind == KP_MAP) {
    /* lanes > 1 and every store contiguous along R: one vector store per group and store */
    bool vst = lanes > 1 && ph->nstores <= GPU_VEC_MAXBUF;
    for (int s = 0; vst && s < ph->nstores; s++) vst = k->bufs[k->stores[ph->store_begin + s].buf].layout[k->ndim - 1] == KL_ONE;
    for (int g = 0; g < G; g++) {
      LLVMBasicBlockRef yes = cg_new_bb(L, "cmap"), after = cg_new_bb(L, "cmap.after");
      LLVMBuildCondBr(b, e->rowok ? LLVMBuildAnd(b, valid[g * lanes], e->rowok, "") : valid[g * lanes], yes, after);
      LLVMPositionBuilderAtEnd(b, yes);
      for (int bi = 0; bi < k->nbuf && bi < 64; bi++)
        if (defer >> bi & 1u) cached_group_load(L, bi, rj, g, lanes);
      LLVMValueRef sv[GPU_VEC_MAXBUF];
      for (int s = 0; vst && s < ph->nstores; s++) {
        LoomDType bt = (LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype;
        sv[s] = LLVMGetUndef(cg_vec_type(m, bt, (unsigned)lanes));
      }
      for (int l = 0; l < lanes; l++) {
        int j = g * lanes + l;
        L->lane = (unsigned)j;
        cg_gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
        cg_clear_cache(L);
        kept_restore(L, kp, j);
        if (!vst) {
          cg_emit_stores(L, ph);
        } else {
          for (int s = 0; s < ph->nstores; s++) {
            const KStore *kst = &k->stores[ph->store_begin + s];
            cg_eval_needed(L, &kst->value, 1);
            LLVMValueRef v = cg_to_mem(m, (LoomDType)k->instrs[kst->value].dtype, (LoomDType)k->bufs[kst->buf].dtype,
                                       L->cache[kst->value]);
            sv[s] = cg_vec_set(m, (LoomDType)k->bufs[kst->buf].dtype, sv[s], v, (unsigned)l);
          }
        }
        cg_clear_cache(L);
      }
      if (vst) {
        cg_gpu_offsets(L, rj[g * lanes], k->nkeep, k->ndim, L->ooff, L->off);
        for (int s = 0; s < ph->nstores; s++) {
          const KStore *kst = &k->stores[ph->store_begin + s];
          LoomDType bt = (LoomDType)k->bufs[kst->buf].dtype;
          LLVMSetAlignment(LLVMBuildStore(b, sv[s], cg_elem_ptr(L, kst->buf, L->off[kst->buf])),
                           (unsigned)lanes * (unsigned)loom_dtype_size(bt));
        }
      }
      for (int bi = 0; bi < k->nbuf && bi < 64; bi++)
        if (defer >> bi & 1u) L->vload[bi] = NULL;
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    }
    for (int j = KV; j < K; j++) { /* the extra point: scalar loads of the deferred buffers, scalar stores */
      LLVMBasicBlockRef yes = cg_new_bb(L, "cmap.x"), after = cg_new_bb(L, "cmap.x.after");
      LLVMBuildCondBr(b, e->rowok ? LLVMBuildAnd(b, valid[j], e->rowok, "") : valid[j], yes, after);
      LLVMPositionBuilderAtEnd(b, yes);
      for (int bi = 0; bi < k->nbuf && bi < 64; bi++)
        if (defer >> bi & 1u) cached_point_load(L, bi, rj[j], j);
      L->lane = (unsigned)j;
      cg_gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
      cg_clear_cache(L);
      kept_restore(L, kp, j);
      cg_emit_stores(L, ph);
      cg_clear_cache(L);
      for (int bi = 0; bi < k->nbuf && bi < 64; bi++)
        if (defer >> bi & 1u) L->vload[bi] = NULL;
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    }
  } else {
    LLVMBasicBlockRef t0 = cg_new_bb(L, "final"), after = cg_new_bb(L, "final.after");
    LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, e->tid, cg_iconst_i(L, 0), "");
    LLVMBuildCondBr(b, e->rowok ? LLVMBuildAnd(b, first, e->rowok, "") : first, t0, after);
    LLVMPositionBuilderAtEnd(b, t0);
    cg_run_final_phase(L, ph);
    LLVMBuildBr(b, after);
    LLVMPositionBuilderAtEnd(b, after);
  }
}

/* ---- the peel: rows of any length and start in the vector entry --------------------------------------
 * A row whose length is not a multiple of the lanes, or whose start is not aligned to a vector (rows of
 * 7777 float32 points: row o starts at o * 7777 * 4 bytes), ran the scalar cached entry (4-byte loads,
 * and 72 registers instead of 48 for clip_row_norm: one block of 512 an SM). The peel runs them in the
 * vector entry: head = the points before the row's first aligned point (0 .. lanes - 1; from the address of
 * the first buffer contiguous along R), then whole aligned vectors, then the tail (< lanes points). The
 * head and tail points (at most 2 * (lanes - 1)) are one extra point each of threads 0, 1, ... of the row
 * (lane K0 of the cached vectors; a clamped scalar load, a scalar store). The launcher runs the entry so
 * only where every buffer contiguous along R has the same start phase (mod lanes) on every row, as the
 * reference buffer's, so that the same head aligns them all (gpu_launch_policy.c: vec_phase_ok), and
 * where the row holds a whole vector after any head (nr >= 2 * lanes - 1) and the threads of a row are at
 * least its extra points. Aligned rows of whole vectors (head 0, tail 0): no extra point is valid, but
 * its registers are there: entries of GPU_CACHE_K_MAX points (rows of 2-byte values, at the register cap
 * of 64: float16 softmax's spills grew from 80 to 112 bytes) have no peel. LOOM_GPU_ROWV_PEEL=0: no peel
 * (the entry as before); =2: every vector entry, those of 32 points too (A/B timings; use a fresh
 * LOOM_CACHE_DIR per setting: the launcher reads the same knob and rule). */
static int rowv_peel_ref(const KernelIr *k, int cache_k) {
  static int knob = -1;
  int v = cg_env_int_once(&knob, "LOOM_GPU_ROWV_PEEL", 1);
  if (k->snippet || v == 0 || (v == 1 && cache_k >= GPU_CACHE_K_MAX) || k->ndim - k->nkeep != 1) return -1;
  for (int bi = 0; bi < k->nbuf; bi++)
    if (k->bufs[bi].layout[k->ndim - 1] == KL_ONE) return bi;
  return -1;
}

/* The row's head (points before its first aligned point, at most nr), and the thread's extra point
 * (*rx, clamped to point 0; *vx: it exists): head points tid < head, then tail points tid - head past
 * the vectors. */
static LLVMValueRef rowv_peel(Lower *L, const GpuEntry *e, int ref, int lanes, LLVMValueRef *rx, LLVMValueRef *vx) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  cg_gpu_offsets(L, cg_iconst_i(L, 0), k->nkeep, k->ndim, L->ooff, L->off);
  LLVMValueRef addr = LLVMBuildPtrToInt(b, cg_elem_ptr(L, ref, L->off[ref]), L->i64, "");
  unsigned sz = (unsigned)loom_dtype_size((LoomDType)k->bufs[ref].dtype);
  LLVMValueRef pt = LLVMBuildUDiv(b, addr, cg_i64(m, sz), ""); /* a power of two: a shift */
  LLVMValueRef mis = LLVMBuildAnd(b, LLVMBuildSub(b, cg_i64(m, 0), pt, ""), cg_i64(m, lanes - 1), "");
  LLVMValueRef head = LLVMBuildIntCast2(b, mis, L->ity, 0, "");
  head = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, head, e->nr, ""), head, e->nr, "");
  LLVMValueRef body = LLVMBuildMul(b, LLVMBuildUDiv(b, LLVMBuildSub(b, e->nr, head, ""), cg_iconst_i(L, lanes), ""),
                                   cg_iconst_i(L, lanes), "");
  LLVMValueRef nextra = LLVMBuildSub(b, e->nr, body, "");
  *vx = LLVMBuildICmp(b, LLVMIntSLT, e->tid, nextra, "");
  LLVMValueRef x = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, e->tid, head, ""), e->tid,
                                   LLVMBuildAdd(b, e->tid, body, ""), "");
  *rx = LLVMBuildSelect(b, *vx, x, cg_iconst_i(L, 0), "");
  return head;
}

/* LOOM_GPU_CACHED_DEFER=0: map-only buffers are loaded whole before the map, as before (A/B timings). */
static bool cached_defer_off(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_CACHED_DEFER", 1) == 0;
}

/* One O point (one block) of the cached ROW entry: the thread's points r_j = tid + j * bdim
 * (j < L->cache_k; clamped to nr - 1 so that every load is valid and unconditional) of every loaded
 * buffer are read once into registers (L->vload[b] lane j; a buffer constant along R in the vector
 * entry: one scalar load for all lanes), then each phase runs over the points
 * that exist (r_j < nr) from those registers. Launched only when 0 < nr <= bdim * cache_k. */
void cg_gpu_cached_item(Lower *L, LLVMValueRef o, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  const int K0 = L->cache_k, lanes = e->lanes > 1 ? e->lanes : 1, G = K0 / lanes;
  const int peel_ref = lanes > 1 ? rowv_peel_ref(k, K0) : -1;
  const int K = K0 + (peel_ref >= 0); /* the peel's extra point: lane K0 of every cached vector */
  L->cache_k = K;
  LLVMValueRef rj[GPU_CACHE_K_MAX + 1], valid[GPU_CACHE_K_MAX + 1];
  if (lanes == 1) {
    LLVMValueRef last = LLVMBuildSub(b, e->nr, cg_iconst_i(L, 1), "");
    for (int j = 0; j < K; j++) {
      LLVMValueRef r = LLVMBuildAdd(b, e->tid, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, j), ""), "");
      valid[j] = LLVMBuildICmp(b, LLVMIntSLT, r, e->nr, "");
      rj[j] = LLVMBuildSelect(b, valid[j], r, last, "");
    }
  } else { /* vector g holds points head + (tid + g * bdim) * lanes + l; without the peel the launcher
             * ensures nr % lanes == 0 and aligned rows (head 0) */
    LLVMValueRef head = peel_ref >= 0 ? rowv_peel(L, e, peel_ref, lanes, &rj[K0], &valid[K0]) : NULL;
    LLVMValueRef nr_body = head ? LLVMBuildSub(b, e->nr, head, "") : e->nr;
    LLVMValueRef nvec = LLVMBuildUDiv(b, nr_body, cg_iconst_i(L, lanes), "");
    LLVMValueRef lastv = LLVMBuildSub(b, nvec, cg_iconst_i(L, 1), "");
    for (int g = 0; g < G; g++) {
      LLVMValueRef v = LLVMBuildAdd(b, e->tid, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, g), ""), "");
      LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLT, v, nvec, "");
      LLVMValueRef first = LLVMBuildMul(b, LLVMBuildSelect(b, ok, v, lastv, ""), cg_iconst_i(L, lanes), "");
      if (head) first = LLVMBuildAdd(b, first, head, "");
      for (int l = 0; l < lanes; l++) {
        valid[g * lanes + l] = ok;
        rj[g * lanes + l] = l ? LLVMBuildAdd(b, first, cg_iconst_i(L, l), "") : first;
      }
    }
  }
  /* the loads (lanes > 1: G vector loads per buffer), each buffer's right before the first phase that
   * reads it: phase 0's up front, and a buffer that only later phases read (LayerNorm's weight and
   * bias, cross-entropy's labels) holds no registers through the reductions before them */
  const char *lazy = getenv("LOOM_GPU_LAZY_LOADS"); /* "0": every buffer up front (A/B timings) */
  /* (a user snippet's calls are evaluated as roots wherever they are: its kernels load everything first) */
  bool eager = k->snippet || (lazy && strcmp(lazy, "0") == 0);
  uint64_t *mask = eager ? NULL : ctx_calloc(L->ctx, (size_t)(k->ninstr > 0 ? k->ninstr : 1), sizeof *mask);
  for (int i = 0; mask && i < k->ninstr; i++) { /* buffers (bit b < 64) each instruction reads */
    const KInstr *in = &k->instrs[i];
    if (in->kind == KI_LOAD && in->buf >= 0 && in->buf < 64) mask[i] |= 1ull << in->buf;
    for (int j = 0; j < 3; j++) /* an unused operand slot adds at most a needless early load */
      if (in->src[j] >= 0 && in->src[j] < i) mask[i] |= mask[in->src[j]];
  }
  uint8_t *keep = NULL;
  Kept kept = {0}, *kp = NULL;
  int nred = 0;
  for (int p = 0; p < k->nphase; p++) nred += k->phases[p].kind == KP_REDUCE;
  if (!k->snippet && nred > 0 && k->nphase > 1 && row_keep_on()) {
    keep = ctx_calloc(L->ctx, (size_t)k->ninstr + 1, 1);
    kept.v = ctx_calloc(L->ctx, (size_t)K * (size_t)k->ninstr + 1, sizeof *kept.v);
    kept.w = ctx_calloc(L->ctx, (size_t)K * (size_t)k->ninstr + 1, sizeof *kept.w);
    if (keep && kept.v && kept.w) {
      cg_costly_values(k, keep);
      kept.keep = keep;
      kp = &kept;
    } else {
      ctx_free(L->ctx, keep);
      ctx_free(L->ctx, kept.v);
      ctx_free(L->ctx, kept.w);
    }
  }
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  uint64_t loaded_bufs = 0;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    uint64_t want = ~0ull; /* no masks: everything at phase 0 */
    if (mask) {
      want = ph->kind == KP_REDUCE || ph->kind == KP_SCAN ? mask[ph->value] : 0;
      for (int s = 0; ph->kind != KP_REDUCE && s < ph->nstores; s++) want |= mask[k->stores[ph->store_begin + s].value];
    }
    /* a buffer first read by a MAP phase of the vector entry, contiguous along R, that no later phase reads:
     * loaded group by group inside the map (lanes registers each, not cache_k: LayerNorm's weight and
     * bias held 32 registers through the whole map) */
    uint64_t defer = 0;
    if (mask && lanes > 1 && ph->kind == KP_MAP && !cached_defer_off()) {
      uint64_t later = 0;
      for (int q = p + 1; q < k->nphase; q++) {
        const KPhase *pq = &k->phases[q];
        if (pq->kind == KP_REDUCE || pq->kind == KP_SCAN) later |= mask[pq->value];
        for (int s = 0; pq->kind != KP_REDUCE && s < pq->nstores; s++) later |= mask[k->stores[pq->store_begin + s].value];
      }
      for (int bi = 0; bi < k->nbuf && bi < 64; bi++)
        if ((want & ~loaded_bufs & ~later) >> bi & 1u && k->bufs[bi].layout[k->ndim - 1] == KL_ONE) defer |= 1ull << bi;
    }
    for (int bi = 0; bi < k->nbuf; bi++) {
      bool now = bi >= 64 ? p == 0 : ((want & ~loaded_bufs & ~defer) >> bi & 1u);
      if (!now || L->vload[bi]) continue;
      bool loaded = false;
      for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
      if (!loaded) continue;
      LoomDType st = (LoomDType)k->bufs[bi].dtype;
      LLVMValueRef vec = LLVMGetUndef(cg_vec_type(m, st, (unsigned)K));
      if (lanes > 1 && k->bufs[bi].layout[k->ndim - 1] == KL_ZERO) { /* constant along R: one scalar load */
        cg_gpu_offsets(L, rj[0], k->nkeep, k->ndim, L->ooff, L->off);
        LLVMValueRef ld = LLVMBuildLoad2(b, cg_mem_type(m, st), cg_elem_ptr(L, bi, L->off[bi]), "");
        LLVMSetAlignment(ld, dtype_align(st));
        for (int j = 0; j < K; j++) vec = cg_vec_set(m, st, vec, ld, (unsigned)j);
        L->vload[bi] = vec;
        continue;
      }
      for (int j = G * lanes; j < K; j++) { /* the peel's extra point: a scalar load (clamped: always valid) */
        cg_gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
        LLVMValueRef ld = LLVMBuildLoad2(b, cg_mem_type(m, st), cg_elem_ptr(L, bi, L->off[bi]), "");
        LLVMSetAlignment(ld, dtype_align(st));
        vec = cg_vec_set(m, st, vec, ld, (unsigned)j);
      }
      for (int g = 0; g < G; g++) {
        cg_gpu_offsets(L, rj[g * lanes], k->nkeep, k->ndim, L->ooff, L->off);
        LLVMTypeRef lt = lanes == 1 ? cg_mem_type(m, st) : cg_vec_type(m, st, (unsigned)lanes);
        LLVMValueRef ld = LLVMBuildLoad2(b, lt, cg_elem_ptr(L, bi, L->off[bi]), "");
        LLVMSetAlignment(ld, lanes == 1 ? dtype_align(st) : (unsigned)lanes * (unsigned)loom_dtype_size(st));
        for (int l = 0; l < lanes; l++) {
          LLVMValueRef x = lanes == 1 ? ld : cg_vec_get(m, st, ld, (unsigned)l);
          vec = cg_vec_set(m, st, vec, x, (unsigned)(g * lanes + l));
        }
      }
      L->vload[bi] = vec;
    }
    loaded_bufs |= want & ~defer;
    cached_phase(L, e, p, rj, valid, lanes, G, defer, kp);
  }
  if (kp) {
    ctx_free(L->ctx, keep);
    ctx_free(L->ctx, kept.v);
    ctx_free(L->ctx, kept.w);
  }
  if (mask) ctx_free(L->ctx, mask);
  cg_clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lane = 0;
  L->cache_k = K0;
}

/* ---- the entry's rows ------------------------------------------------------------------------------------ */
/* The short-row mode: the block's rows base, base + 1, ... (one per group of g lanes); a row past the last
 * is computed on the last row's points (every lane takes part in the shuffles) without stores. The loop
 * is uniform over the block. */
typedef struct GpuGroupRows {
  GpuEntry e;
  LLVMValueRef row_in_block;
} GpuGroupRows;

static void group_rows(Lower *L, LLVMValueRef base, void *arg) {
  GpuGroupRows *gr = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = LLVMBuildAdd(b, base, gr->row_in_block, "");
  gr->e.rowok = LLVMBuildICmp(b, LLVMIntSLT, o, gr->e.no, "");
  o = LLVMBuildSelect(b, gr->e.rowok, o, LLVMBuildSub(b, gr->e.no, cg_iconst_i(L, 1), ""), "");
  cg_gpu_cached_item(L, o, &gr->e);
}

void cg_gpu_cached_rows(Lower *L, const GpuEntry *e, LLVMValueRef group, LLVMValueRef staged, LLVMValueRef bid,
                        LLVMValueRef nbk) {
  LLVMBuilderRef b = L->m.b;
  GpuEntry be = *e;
  LLVMBasicBlockRef blk = cg_new_bb(L, "rows.block"), sub = cg_new_bb(L, "rows.group"), done = cg_new_bb(L, "rows.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, group, cg_iconst_i(L, 0), ""), blk, sub);
  LLVMPositionBuilderAtEnd(b, blk); /* block mode (g == 0): a block per O point */
  cg_gpu_for(L, bid, e->no, nbk, cg_gpu_cached_item, &be);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, sub);
  uint64_t stage = e->lanes <= 1 ? cg_gpu_stage_bufs(L) : 0;
  if (stage) { /* thread-per-row tiles through shared memory, where the launcher asks and they fit */
    LLVMBasicBlockRef st = cg_new_bb(L, "rows.staged"), plain = cg_new_bb(L, "rows.plain");
    LLVMValueRef fits = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, group, cg_iconst_i(L, 1), ""),
                                     LLVMBuildICmp(b, LLVMIntULE, e->bdim, cg_iconst_i(L, CG_STAGE_BLOCK), ""), "");
    fits = LLVMBuildAnd(b, fits, LLVMBuildICmp(b, LLVMIntSLE, e->nr, cg_iconst_i(L, L->cache_k), ""), "");
    LLVMBuildCondBr(b, LLVMBuildAnd(b, staged, fits, ""), st, plain);
    LLVMPositionBuilderAtEnd(b, st);
    cg_gpu_stage_rows(L, e, stage, bid, nbk);
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, plain);
  }
  GpuGroupRows gr = {.e = *e, .row_in_block = LLVMBuildUDiv(b, e->tid, group, "")}; /* a group of g lanes a row */
  gr.e.group = group;
  gr.e.tid = LLVMBuildURem(b, e->tid, group, "");
  gr.e.bdim = group;
  LLVMValueRef rpb = LLVMBuildUDiv(b, e->bdim, group, ""); /* rows per block */
  cg_gpu_for(L, LLVMBuildMul(b, bid, rpb, ""), e->no, LLVMBuildMul(b, nbk, rpb, ""), group_rows, &gr);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}
