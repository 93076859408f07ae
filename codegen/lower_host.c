/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host.c: the host loop structure of the lowering (cg_lower_host): run / partial / finish
 * entries over the shared evaluator (lower.c).
 *
 * Each entry point (run, partial, finish) is a thin wrapper that loads the buffer pointers and calls
 * an always-inline implementation taking them as `noalias` parameters; after inlining LLVM turns that
 * into scoped alias metadata, so loads and stores vectorize without run-time overlap checks. walk()
 * visits linear points [lo, hi) of a group of dims row-major: it decomposes lo once, then runs rows
 * whose innermost loop advances the last dim with a stride that is a compile-time constant for
 * KL_ONE/KL_ZERO, which the loop vectorizer widens. A reduction runs, for each O point, one walk over
 * R per REDUCE or MAP phase (a long row's squared deviations of a variance ride in phase 0's walk:
 * host_moments.c); accumulators are allocas (promoted to phis by mem2reg) and float sums use
 * `reassoc` fadds so the vectorizer keeps several partial sums. Reductions over an axis that is outer
 * in memory use the outer strategy instead (run_outer: blocks of o with stack accumulator arrays).
 * Compile time: finish() is optnone (it is cold: a few parts of one O point), and run() of a splittable
 * full reduction calls partial() rather than holding a second copy of its loop. colfinish() is
 * optimized: it combines nparts parts of every column (a column sum of 4096 x 1024 float32 combines 64
 * parts of 1024 columns: the kernel took 0.54 ms with an optnone colfinish, 0.29 optimized).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* ---- walks over points -------------------------------------------------------------------------- */

/* Loop hints on the loop whose back edge is `br`: `vf` lanes (llvm.loop.vectorize.width, a hint without
 * vectorize.enable: a loop it cannot vectorize stays scalar without a missed-transformation warning)
 * and `ic` interleaved vector bodies (llvm.loop.interleave.count); 0 leaves either to LLVM. */
void cg_host_loop_hints(Lower *L, LLVMValueRef br, int vf, int ic) {
  LLVMContextRef c = L->m.c;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
  LLVMMetadataRef ops[2];
  unsigned n = 0;
  if (vf > 0) {
    LLVMMetadataRef w[2] = {LLVMMDStringInContext2(c, "llvm.loop.vectorize.width", 25),
                            LLVMValueAsMetadata(LLVMConstInt(i32, (unsigned)vf, 0))};
    ops[n++] = LLVMMDNodeInContext2(c, w, 2);
  }
  if (ic > 0) {
    LLVMMetadataRef w[2] = {LLVMMDStringInContext2(c, "llvm.loop.interleave.count", 26),
                            LLVMValueAsMetadata(LLVMConstInt(i32, (unsigned)ic, 0))};
    ops[n++] = LLVMMDNodeInContext2(c, w, 2);
  }
  cg_loop_properties(L, br, ops, n);
}

void cg_host_force_width(Lower *L, LLVMValueRef br) { cg_host_loop_hints(L, br, L->force_vf, 0); }

/* Whether the blocks from `first` to `last` (in function order) call a function other than an LLVM
 * intrinsic: a math library call (SLEEF's scalar names, widened to its vector variants). Such a loop is
 * compute-bound in the calls, so LLVM's interleaving of 4 vector bodies gains little there, while its
 * minimum trip count (4 x the lanes: 32 float32 on AVX2) sends every shorter row (10^6 rows of 16, a
 * softmax over 16 experts) to the scalar remainder: one scalar call per element. With one vector body
 * a 16-element row is two vector iterations. */
bool cg_host_calls_library(LLVMBasicBlockRef first, LLVMBasicBlockRef last) {
  for (LLVMBasicBlockRef bb = first; bb; bb = LLVMGetNextBasicBlock(bb)) {
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsACallInst(in)) continue;
      LLVMValueRef callee = LLVMGetCalledValue(in);
      size_t n = 0;
      const char *name = callee ? LLVMGetValueName2(callee, &n) : "";
      if (n < 5 || strncmp(name, "llvm.", 5) != 0) return true;
    }
    if (bb == last) break;
  }
  return false;
}

/* The interleave count of a walk's inner loop from `first` to `last` (0: LLVM's choice). A body that
 * calls a math function: 1 (see cg_host_calls_library). A width forced by L->force_vf (float16 kernels):
 * 2. LLVM vectorizes no epilogue of a loop whose width a hint forced, so every segment's last points up
 * to lanes x interleave - 1 run scalar; with LLVM's 4 that was 63 of a 1000-point float16 row (a softmax
 * over 1000 keys spent ~40 % of its time there), with 2 it is at most 31, and long loops measured the
 * same (f16 exp, tanh, x * 2 + 1 on 2^22 points). */
int cg_host_inner_interleave(const Lower *L, LLVMBasicBlockRef first, LLVMBasicBlockRef last) {
  if (cg_host_calls_library(first, last)) return 1;
  return L->force_vf > 1 ? 2 : 0;
}

/* Whether the comma-separated LLVM feature string `features` enables `f` ("+avx"). */
static bool feature_on(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; (p = strstr(p, f)) != NULL; p += n)
    if ((p == features || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return true;
  return false;
}

/* The width at which a kernel's walks are forced to vectorize: float32 lanes of the preferred vector
 * width (fn_attrs' "prefer-vector-width") when the kernel converts float16 values; without that
 * attribute (hosts where LLVM picks the width: AVX2) the float32 lanes of its 256-bit default (AVX;
 * SSE: 4) where F16C converts vectors. LLVM 19's x86 cost model prices half <-> float conversions as
 * scalar code on hosts without AVX512-FP16 and picks 4 lanes for such loops, although F16C / AVX-512F
 * convert 8 / 16 at a time (vcvtph2ps, vcvtps2ph); at 4 lanes the vector math calls are the 128-bit
 * ones too, and every float32 operation of the loop runs half-empty. 0: LLVM's choice. */
static int f16_width(const KernelIr *k, const char *const *attrs, int nattrs) {
  bool f16 = false;
  for (int b = 0; b < k->nbuf && !f16; b++) f16 = k->bufs[b].dtype == LOOM_FLOAT16;
  for (int i = 0; i < k->ninstr && !f16; i++) f16 = k->instrs[i].dtype == LOOM_FLOAT16;
  if (!f16 || k->snippet) return 0;
  const char *features = NULL;
  for (int i = 0; i < nattrs; i++) {
    if (!strcmp(attrs[2 * i], "prefer-vector-width")) {
      int bits = atoi(attrs[2 * i + 1]);
      if (bits >= 64) return bits / 32;
    }
    if (!strcmp(attrs[2 * i], "target-features")) features = attrs[2 * i + 1];
  }
  if (!features || !feature_on(features, "+f16c")) return 0; /* conversions are library calls */
  return feature_on(features, "+avx") ? 8 : 4; /* 256-bit: LLVM's own width there, AVX-512 included */
}

/* Bytes of the vectors the target prefers ("prefer-vector-width": 64 on AVX-512 hosts, host.c), 0 where
 * the attribute is absent (LLVM's choice). */
static int preferred_vector_bytes(const char *const *attrs, int nattrs) {
  for (int i = 0; i < nattrs; i++)
    if (!strcmp(attrs[2 * i], "prefer-vector-width")) {
      int bits = atoi(attrs[2 * i + 1]);
      if (bits >= 128 && bits <= 512) return bits / 8;
    }
  return 0;
}

/* Visits linear points [lo, hi) of dims [d0, d1) row-major; at each point L->off holds the offsets
 * (outer offsets plus these dims' contribution) and L->lin the linear index. With blk, each row's
 * inner loop runs in segments that end where a block of blk->points points (counted across rows) is
 * full, and blk->flush runs there (cg_lower.h: CgWalkBlocks); without it the IR is the plain walk.
 * jam >= 2 (cg_host_row_jam; not with blk): whole rows of at least jam_cols points from a row start, `jam` of
 * them left in the plane and in [lo, hi), run jammed (cg_host_jam_rows), the rest one at a time. */
static void walk(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg,
                 const CgWalkBlocks *blk, int jam, int64_t jam_cols) {
  LLVMBuilderRef b = L->m.b;
  const KernelIr *k = L->k;
  int nb = k->nbuf;
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef *outer = L->off;
  LLVMValueRef *inner = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  LLVMBasicBlockRef exit_bb = cg_new_bb(L, "walk.exit");
  LLVMBasicBlockRef init_bb = cg_new_bb(L, "walk.init");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), init_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, init_bb);
  if (d0 == d1) { /* no dims: one point */
    memcpy(inner, outer, sizeof(LLVMValueRef) * (size_t)nb);
    L->off = inner;
    L->depth++;
    L->lin = lo;
    body(L, arg);
    L->depth--;
    L->off = outer;
    LLVMBuildBr(b, exit_bb);
    LLVMPositionBuilderAtEnd(b, exit_bb);
    return;
  }
  int last = d1 - 1;
  LLVMValueRef idx[LOOM_MAX_RANK];
  LLVMValueRef rem = lo;
  for (int d = last; d >= d0; d--) {
    idx[d] = cg_entry_alloca(L, L->i64, "idx");
    if (d > d0) {
      LLVMBuildStore(b, LLVMBuildURem(b, rem, L->shape[d], ""), idx[d]);
      rem = LLVMBuildUDiv(b, rem, L->shape[d], "");
    } else {
      LLVMBuildStore(b, rem, idx[d]);
    }
  }
  LLVMValueRef pos = cg_entry_alloca(L, L->i64, "pos");
  LLVMBuildStore(b, lo, pos);
  LLVMBasicBlockRef row_bb = cg_new_bb(L, "walk.row");
  LLVMBuildBr(b, row_bb);

  LLVMPositionBuilderAtEnd(b, row_bb);
  LLVMValueRef iv[LOOM_MAX_RANK];
  for (int d = d0; d <= last; d++) iv[d] = LLVMBuildLoad2(b, L->i64, idx[d], "");
  LLVMValueRef p0 = LLVMBuildLoad2(b, L->i64, pos, "");
  LLVMValueRef start = iv[last];
  LLVMValueRef n1 = LLVMBuildSub(b, L->shape[last], start, "");
  LLVMValueRef n2 = LLVMBuildSub(b, hi, p0, "");
  LLVMValueRef n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, n1, n2, ""), n1, n2, "n");
  LLVMValueRef rowoffs[64];
  LLVMValueRef *ro = nb <= 64 ? rowoffs : NULL;
  LLVMValueRef *rowheap = NULL;
  if (!ro) {
    rowheap = ctx_calloc(L->ctx, (size_t)nb, sizeof(LLVMValueRef));
    if (!rowheap) {
      diag_error(L->m.d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for %d buffers", nb);
      return;
    }
    ro = rowheap;
  }
  for (int bi = 0; bi < nb; bi++) {
    LLVMValueRef o = outer[bi];
    for (int d = d0; d < last; d++)
      o = LLVMBuildNSWAdd(b, o, LLVMBuildNSWMul(b, iv[d], L->stride[bi * k->ndim + d], ""), "");
    ro[bi] = o;
  }
  int rd = last - 1;
  LLVMBasicBlockRef jam_end = NULL, one_bb = NULL;
  LLVMValueRef jam_row = NULL, jam_n = NULL;
  if (blk || rd < d0) jam = 0;
  if (jam) { /* whole rows iv[rd] .. iv[rd] + jam - 1 from a row start: jammed; else the single row */
    jam_n = LLVMBuildNSWMul(b, cg_i64(&L->m, jam), L->shape[last], "");
    jam_row = LLVMBuildAdd(b, iv[rd], cg_i64(&L->m, jam - 1), "");
    LLVMValueRef ok[4] = {LLVMBuildICmp(b, LLVMIntEQ, start, cg_i64(&L->m, 0), ""),
                          LLVMBuildICmp(b, LLVMIntSGE, L->shape[last], cg_i64(&L->m, jam_cols), ""),
                          LLVMBuildICmp(b, LLVMIntSLT, jam_row, L->shape[rd], ""),
                          LLVMBuildICmp(b, LLVMIntSLE, jam_n, LLVMBuildSub(b, hi, p0, ""), "")};
    LLVMBasicBlockRef jam_bb = cg_new_bb(L, "walk.jamrows");
    LLVMValueRef all = LLVMBuildAnd(b, LLVMBuildAnd(b, ok[0], ok[1], ""), LLVMBuildAnd(b, ok[2], ok[3], ""), "");
    LLVMBuildCondBr(b, all, jam_bb, one_bb = cg_new_bb(L, "walk.onerow"));
    LLVMPositionBuilderAtEnd(b, jam_bb);
    if (!(jam_end = cg_host_jam_rows(L, rd, last, jam, ro, p0, inner, outer, body, arg))) jam_end = jam_bb;
    LLVMPositionBuilderAtEnd(b, one_bb);
  }
  /* blocked: the row runs as segments [j0, jend), each at most the points left in the block; the
   * inner loop counts from 0 to the segment's length (a plain counted loop, as the unblocked one) */
  LLVMValueRef zero = LLVMConstInt(L->i64, 0, 0), j0 = zero, jend = n, jpos = NULL, cnt = NULL;
  LLVMValueRef sstart = start, sp0 = p0, slen = n;
  LLVMBasicBlockRef seg_bb = one_bb ? one_bb : row_bb;
  if (blk) {
    jpos = cg_entry_alloca(L, L->i64, "jpos");
    LLVMBuildStore(b, zero, jpos);
    seg_bb = cg_new_bb(L, "walk.seg");
    LLVMBuildBr(b, seg_bb);
    LLVMPositionBuilderAtEnd(b, seg_bb);
    j0 = LLVMBuildLoad2(b, L->i64, jpos, "j0");
    cnt = LLVMBuildLoad2(b, L->i64, blk->count, "");
    LLVMValueRef room = LLVMBuildSub(b, cg_i64(&L->m, blk->points), cnt, "");
    LLVMValueRef left = LLVMBuildSub(b, n, j0, "");
    slen = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, room, ""), left, room, "seglen");
    jend = LLVMBuildAdd(b, j0, slen, "jend");
    sstart = LLVMBuildAdd(b, start, j0, "");
    sp0 = LLVMBuildAdd(b, p0, j0, "");
  }
  LLVMBasicBlockRef inner_bb = cg_new_bb(L, "walk.inner");
  LLVMBuildBr(b, inner_bb);
  LLVMPositionBuilderAtEnd(b, inner_bb);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "j");
  /* element offsets are far from overflow (buffers < 2^62 elements): nsw lets the vectorizer see a
   * constant stride's addresses as an affine non-wrapping sequence (interleaved groups, not gathers) */
  LLVMValueRef cur = LLVMBuildNSWAdd(b, sstart, j, "");
  LLVMValueRef *saved_row[3] = {L->rowptr, L->rowrel, L->rowabs};
  static int row_ptr = -1; /* LOOM_HOST_ROW_PTR=0: one GEP of base + offset per point (A/B timings) */
  LLVMValueRef *rowv = cg_env_int_once(&row_ptr, "LOOM_HOST_ROW_PTR", 1)
                           ? ctx_calloc(L->ctx, (size_t)nb * 3, sizeof(LLVMValueRef)) : NULL;
  if (rowv) { /* the rows' pointers, once per segment (before its branch into the inner loop); a small
               * constant stride's at the segment's first point (lower_host_strided.c) */
    LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(seg_bb));
    for (int bi = 0; bi < nb; bi++) {
      LLVMValueRef o = ro[bi];
      if (cg_host_strided_from_segment(L, bi, last, blk != NULL))
        o = LLVMBuildNSWAdd(b, o, LLVMBuildNSWMul(b, sstart, L->stride[bi * k->ndim + last], ""), "");
      rowv[bi] = LLVMBuildInBoundsGEP2(b, cg_mem_type(&L->m, (LoomDType)k->bufs[bi].dtype), L->base[bi], &o, 1, "row");
    }
    LLVMPositionBuilderAtEnd(b, inner_bb);
  }
  for (int bi = 0; bi < nb; bi++) {
    LLVMValueRef rel = LLVMBuildNSWMul(b, cur, L->stride[bi * k->ndim + last], "");
    inner[bi] = LLVMBuildNSWAdd(b, ro[bi], rel, "");
    if (rowv && cg_host_strided_from_segment(L, bi, last, blk != NULL)) rel = LLVMBuildNSWMul(b, j, L->stride[bi * k->ndim + last], "");
    if (rowv) rowv[nb + bi] = rel, rowv[2 * nb + bi] = inner[bi];
  }
  if (rowv) {
    L->rowptr = rowv;
    L->rowrel = rowv + nb;
    L->rowabs = rowv + 2 * nb;
  }
  L->off = inner;
  L->depth++;
  L->lin = LLVMBuildAdd(b, sp0, j, "");
  body(L, arg);
  L->depth--;
  L->off = outer;
  L->rowptr = saved_row[0];
  L->rowrel = saved_row[1];
  L->rowabs = saved_row[2];
  ctx_free(L->ctx, rowv);
  LLVMValueRef j1 = LLVMBuildAdd(b, j, LLVMConstInt(L->i64, 1, 0), "");
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef latch_bb = cg_new_bb(L, "walk.latch");
  LLVMBasicBlockRef seg_end = blk ? cg_new_bb(L, "walk.segend") : latch_bb;
  LLVMValueRef back = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, slen, ""), inner_bb, seg_end);
  int ic = cg_host_inner_interleave(L, inner_bb, body_end);
  if (L->force_vf > 1 || ic) cg_host_loop_hints(L, back, L->force_vf > 1 ? L->force_vf : 0, ic);
  LLVMBasicBlockRef from[2] = {seg_bb, body_end};
  LLVMValueRef vals[2] = {zero, j1};
  LLVMAddIncoming(j, vals, from, 2);
  if (blk) { /* count the segment's points; a full block is flushed; the row goes on or ends */
    LLVMPositionBuilderAtEnd(b, seg_end);
    LLVMValueRef c1 = LLVMBuildAdd(b, cnt, slen, "");
    LLVMBuildStore(b, jend, jpos);
    LLVMBuildStore(b, c1, blk->count);
    LLVMBasicBlockRef flush_bb = cg_new_bb(L, "walk.flush"), next_bb = cg_new_bb(L, "walk.segnext");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, c1, cg_i64(&L->m, blk->points), ""), flush_bb, next_bb);
    LLVMPositionBuilderAtEnd(b, flush_bb);
    blk->flush(L, blk->arg);
    LLVMBuildStore(b, zero, blk->count);
    LLVMBuildBr(b, next_bb);
    LLVMPositionBuilderAtEnd(b, next_bb);
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, jend, n, ""), seg_bb, latch_bb);
  }

  if (jam_end) { /* the jammed rows join here: they advance jam rows, their last row carries */
    LLVMPositionBuilderAtEnd(b, jam_end);
    LLVMBuildBr(b, latch_bb);
    LLVMPositionBuilderAtEnd(b, latch_bb);
    LLVMValueRef nv[2] = {n, jam_n}, rv[2] = {iv[rd], jam_row};
    LLVMBasicBlockRef from[2] = {body_end, jam_end};
    LLVMAddIncoming(n = LLVMBuildPhi(b, L->i64, "rown"), nv, from, 2);
    LLVMAddIncoming(iv[rd] = LLVMBuildPhi(b, L->i64, "rowi"), rv, from, 2);
  }
  LLVMPositionBuilderAtEnd(b, latch_bb);
  LLVMValueRef p1 = LLVMBuildAdd(b, p0, n, "");
  LLVMBuildStore(b, p1, pos);
  LLVMBuildStore(b, zero, idx[last]);
  LLVMBasicBlockRef check_bb = cg_new_bb(L, "walk.check");
  for (int d = last - 1; d >= d0; d--) { /* carry */
    LLVMValueRef v = LLVMBuildAdd(b, iv[d], LLVMConstInt(L->i64, 1, 0), "");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLT, v, L->shape[d], "");
    LLVMBuildStore(b, LLVMBuildSelect(b, ok, v, zero, ""), idx[d]);
    LLVMBasicBlockRef next = cg_new_bb(L, "walk.carry");
    LLVMBuildCondBr(b, ok, check_bb, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
  LLVMBuildBr(b, check_bb);
  LLVMPositionBuilderAtEnd(b, check_bb);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, p1, hi, ""), row_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, exit_bb);
  if (rowheap) ctx_free(L->ctx, rowheap);
}

void cg_host_walk(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg) {
  walk(L, d0, d1, lo, hi, body, arg, NULL, 0, 0);
}

void cg_host_walk_blocked(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg,
                          const CgWalkBlocks *blk) {
  cg_host_walk_blocked_first(L, d0, d1, lo, hi, body, arg, blk, blk->points);
}

void cg_host_walk_blocked_first(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg,
                                const CgWalkBlocks *blk, int64_t first) {
  LLVMBuildStore(L->m.b, cg_i64(&L->m, blk->points - first), blk->count);
  walk(L, d0, d1, lo, hi, body, arg, blk, 0, 0);
}

/* ---- per-O-point reductions --------------------------------------------------------------------- */

typedef struct RedArg {
  const KPhase *ph;
  LLVMValueRef accv, acci; /* allocas */
} RedArg;

static void body_reduce(Lower *L, void *arg) {
  RedArg *ra = arg;
  const KPhase *ph = ra->ph;
  LLVMBuilderRef b = L->m.b;
  LoomDType at = (LoomDType)ph->acc_dtype;
  cg_clear_cache(L);
  cg_reduce_point(L, ph);
  cg_host_keep_store(L, ph);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef cur = LLVMBuildLoad2(b, LLVMTypeOf(v), ra->accv, "");
  if (is_arg(ph->reduce_op)) {
    LoomDType vt = (LoomDType)L->k->instrs[ph->value].dtype;
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, v, cur, ""), ra->accv);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, ra->acci, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, L->lin, ci, ""), ra->acci);
  } else {
    LLVMBuildStore(b, cg_red_combine(L, ph->reduce_op, at, cur, v), ra->accv);
  }
  cg_clear_cache(L);
}

/* Runs REDUCE phase p over linear R points [lo, hi) and sets L->acc[p] / L->accidx[p]. */
void cg_host_reduce_phase(Lower *L, int p, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LoomDType vt = cg_red_value_dtype(k, ph);
  RedArg ra = {ph, cg_entry_alloca(L, cg_reg_type(&L->m, vt), "acc"), cg_entry_alloca(L, L->i64, "acci")};
  LLVMBuildStore(L->m.b, cg_red_identity(L, ph->reduce_op, vt), ra.accv);
  LLVMBuildStore(L->m.b, lo, ra.acci);
  if (ph->nstores == 0 && cg_host_arg_vectorizable(k, ph)) { /* (side stores: the plain walk stores them) */
    /* long ranges: the vector arg-reduction (lower_host_arg.c); short ones: the scalar fold */
    LLVMBuilderRef b = L->m.b;
    LLVMBasicBlockRef vec = cg_new_bb(L, "arg.long"), sc = cg_new_bb(L, "arg.short"), join = cg_new_bb(L, "arg.join");
    LLVMValueRef len = LLVMBuildSub(b, hi, lo, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGE, len, cg_i64(&L->m, CG_HOST_ARG_MIN_POINTS), ""), vec, sc);
    LLVMPositionBuilderAtEnd(b, vec);
    cg_host_arg_reduce(L, ph, lo, hi, ra.accv, ra.acci);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, sc);
    cg_host_walk(L, k->nkeep, k->ndim, lo, hi, body_reduce, &ra);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, join);
  } else if (cg_sum_compensated(k, ph)) {
    cg_host_sum_walk(L, ph, lo, hi, ra.accv, body_reduce, &ra); /* blocked (lower_host_sum.c) */
  } else if (cg_sum_narrow(k, ph)) {
    cg_host_narrow_sum_walk(L, ph, lo, hi, ra.accv); /* int32 lanes within blocks (lower_host_sum.c) */
  } else {
    cg_host_walk(L, k->nkeep, k->ndim, lo, hi, body_reduce, &ra);
  }
  L->acc[p] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, vt), ra.accv, "");
  L->accidx[p] = LLVMBuildLoad2(L->m.b, L->i64, ra.acci, "");
}

/* Every phase at one O point (L->off holds the O offsets). */
void cg_host_body_o_point(Lower *L, void *arg) {
  const KernelIr *k = L->k;
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)k->nbuf);
  if (cg_host_rows_on(L)) { /* a short last dim of known extent: the row unrolled (lower_host_rows.c) */
    cg_host_rows_o_point(L);
    return;
  }
  for (int p = 0; p < k->nphase; p++) {
    L->acc[p] = L->accidx[p] = NULL;
  }
  L->hkeep_on = L->hkeep_v >= 0; /* (lower_host_keep.c) */
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    cg_clear_cache(L);
    BodyFn map = L->hkeep_on && p == L->hkeep_q ? cg_host_keep_map : cg_body_map;
    if (p == 0 && L->mom.n) cg_host_mom_o_point(L); /* with the folded phases (host_moments.c) */
    else if (cg_mom_folded(&L->mom, p)) continue;
    else if (ph->kind == KP_REDUCE) cg_host_reduce_phase(L, p, LLVMConstInt(L->i64, 0, 0), L->rsize);
    else if (ph->kind == KP_MAP) cg_host_walk(L, k->nkeep, k->ndim, LLVMConstInt(L->i64, 0, 0), L->rsize, map, (void *)ph);
    else if (ph->kind == KP_SCAN) cg_host_scan_row(L, p);
    else if (L->fstash) cg_host_final_stash(L); /* run over the block later (lower_host_final_block.c) */
    else cg_run_final_phase(L, ph);
  }
  L->hkeep_on = false;
  cg_clear_cache(L);
}

void cg_host_set_o_offsets(Lower *L, LLVMValueRef o) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef idx[LOOM_MAX_RANK];
  LLVMValueRef rem = o;
  for (int d = k->nkeep - 1; d >= 0; d--) {
    if (d > 0) {
      idx[d] = LLVMBuildURem(b, rem, L->shape[d], "");
      rem = LLVMBuildUDiv(b, rem, L->shape[d], "");
    } else {
      idx[d] = rem;
    }
  }
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef v = LLVMConstInt(L->i64, 0, 0);
    for (int d = 0; d < k->nkeep; d++)
      v = LLVMBuildNSWAdd(b, v, LLVMBuildNSWMul(b, idx[d], L->stride[bi * k->ndim + d], ""), "");
    L->off[bi] = v;
  }
}

/* ---- entries ----------------------------------------------------------------------------------- */

/* ENTRY_RUN_VIA_PARTIAL: run() of a splittable full reduction (nkeep == 0): the wrapper calls the
 * partial entry over all of R into a stack accumulator and the implementation runs the FINAL phase
 * from it, so the vectorized R loop is compiled once instead of twice (same bits as one part). */
enum { ENTRY_RUN, ENTRY_PARTIAL, ENTRY_FINISH, ENTRY_RUN_VIA_PARTIAL, ENTRY_COLPART, ENTRY_COLFINISH };

static void add_enum_attr(Lower *L, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->m.c, kind, 0));
}

/* Parameter p's launch word inside an implementation: its i64 argument number *(int *)pbase + p. */
static LLVMValueRef impl_param_word(Lower *L, int p, void *pbase) {
  return LLVMGetParam(L->fn, (unsigned)(*(int *)pbase + p));
}

/* Builds one entry point: `name`(shape, bufs, strides, <extra i64s>, [ptr]) calling an always-inline
 * implementation that takes the buffers as noalias pointers (and the parameters, bufs[nb + p], as i64s). */
static void build_entry(Lower *L, int which, const char *name, const char *const *attrs, int nattrs) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nb = k->nbuf;
  /* impl params: shape, strides, nb buffers, then the entry's scalars */
  bool via = which == ENTRY_RUN_VIA_PARTIAL;
  /* finish() runs once per output point of a split reduction: compiled without optimization
   * (optnone), which skips the optimizer and takes the fast instruction selector */
  bool cold = which == ENTRY_FINISH;
  bool col = which == ENTRY_COLPART || which == ENTRY_COLFINISH;
  int nscal = col ? 0 : which == ENTRY_RUN || via ? 2 : 3; /* lo hi | o rlo rhi | o accs nparts */
  int nimpl = 2 + nb + nscal;
  LLVMTypeRef *pt = ctx_calloc(L->ctx, (size_t)nimpl + 8 + (size_t)k->nparam, sizeof(LLVMTypeRef));
  LLVMValueRef *av = ctx_calloc(L->ctx, (size_t)nimpl + 8 + (size_t)k->nparam, sizeof(LLVMValueRef));
  if (!pt || !av) {
    ctx_free(L->ctx, pt);
    ctx_free(L->ctx, av);
    diag_error(m->d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory building '%s'", name);
    return;
  }
  for (int i = 0; i < 2 + nb; i++) pt[i] = L->ptr;
  for (int i = 0; i < nscal; i++) pt[2 + nb + i] = L->i64;
  if (which == ENTRY_PARTIAL) pt[2 + nb + 3] = L->ptr, nimpl++;  /* acc out */
  if (via) pt[2 + nb + 2] = L->ptr, nimpl++;                     /* acc in */
  if (which == ENTRY_FINISH) pt[2 + nb + 1] = L->ptr;            /* accs */
  if (col) pt[2 + nb] = L->ptr, nimpl++;                         /* the CgColSplit */
  int pbase = nimpl; /* then the kernel's parameters, one i64 launch word each (bufs[nb + p]) */
  for (int p = 0; p < k->nparam; p++) pt[nimpl++] = L->i64;
  LLVMTypeRef void_t = LLVMVoidTypeInContext(m->c);
  char iname[96];
  snprintf(iname, sizeof iname, "%s.impl", name);
  LLVMTypeRef ity = LLVMFunctionType(void_t, pt, (unsigned)nimpl, 0);
  LLVMValueRef impl = LLVMAddFunction(m->m, iname, ity);
  LLVMSetLinkage(impl, LLVMInternalLinkage);
  cg_add_fn_attrs(L, impl, attrs, nattrs);
  if (cold) {
    add_enum_attr(L, impl, "optnone");
    add_enum_attr(L, impl, "noinline");
  } else {
    add_enum_attr(L, impl, "alwaysinline");
  }
  unsigned na = LLVMGetEnumAttributeKindForName("noalias", 7);
  for (int i = 0; i < 2 + nb; i++)
    LLVMAddAttributeAtIndex(impl, (unsigned)(i + 1), LLVMCreateEnumAttribute(m->c, na, 0));

  /* the exported wrapper */
  LLVMTypeRef wpt[7] = {L->ptr, L->ptr, L->ptr, L->i64, L->i64, L->i64, L->ptr};
  unsigned nw = 5;
  if (which == ENTRY_PARTIAL) nw = 7;
  if (which == ENTRY_FINISH) { wpt[4] = L->ptr; nw = 6; }
  if (col) { wpt[3] = L->ptr; nw = 4; }
  LLVMTypeRef wty = LLVMFunctionType(void_t, wpt, nw, 0);
  LLVMValueRef wfn = LLVMAddFunction(m->m, name, wty);
  cg_add_fn_attrs(L, wfn, attrs, nattrs);
  if (cold) add_enum_attr(L, wfn, "optnone");
  if (cold || which == ENTRY_PARTIAL) add_enum_attr(L, wfn, "noinline"); /* run may call partial */
  if (which == ENTRY_PARTIAL) {
    L->partial_fn = wfn;
    L->partial_ty = wty;
  }
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->c, wfn, "entry"));
  av[0] = LLVMGetParam(wfn, 0);
  av[1] = LLVMGetParam(wfn, 2);
  LLVMValueRef bufs = LLVMGetParam(wfn, 1);
  for (int i = 0; i < nb; i++) {
    LLVMValueRef ix = cg_i64(m, i);
    av[2 + i] = LLVMBuildLoad2(b, L->ptr, LLVMBuildGEP2(b, L->ptr, bufs, &ix, 1, ""), "");
  }
  for (int i = 3; i < (int)nw; i++) av[2 + nb + i - 3] = LLVMGetParam(wfn, (unsigned)i);
  for (int p = 0; p < k->nparam; p++) {
    LLVMValueRef ix = cg_i64(m, nb + p);
    av[pbase + p] = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->ptr, bufs, &ix, 1, ""), "");
  }
  if (via) {
    /* if (lo < hi) { partial(shape, bufs, strides, 0, 0, |R|, acc); impl(..., acc); } */
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(m->c, wfn, "go");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->c, wfn, "done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, LLVMGetParam(wfn, 3), LLVMGetParam(wfn, 4), ""), go, done);
    LLVMPositionBuilderAtEnd(b, go);
    LLVMValueRef acc = LLVMBuildAlloca(b, LLVMArrayType(LLVMInt64TypeInContext(m->c), 4), "acc"); /* >= acc_size */
    LLVMValueRef rs = cg_i64(m, 1);
    for (int d = k->nkeep; d < k->ndim; d++) {
      LLVMValueRef ix = cg_i64(m, d);
      rs = LLVMBuildMul(b, rs, LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, av[0], &ix, 1, ""), ""), "");
    }
    LLVMValueRef pargs[7] = {av[0], bufs, av[1], cg_i64(m, 0), cg_i64(m, 0), rs, acc};
    LLVMBuildCall2(b, L->partial_ty, L->partial_fn, pargs, 7, "");
    av[2 + nb + 2] = acc;
    LLVMBuildCall2(b, ity, impl, av, (unsigned)nimpl, "");
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
  } else {
    bool *streamed = which == ENTRY_RUN ? ctx_calloc(L->ctx, (size_t)nb + 1, sizeof(bool)) : NULL;
    if (streamed && cg_host_stream_outputs(k, attrs, nattrs, streamed) > 0)
      cg_host_stream_call(L, streamed, ity, impl, av, nimpl); /* large outputs: lower_host_stream.c */
    else
      LLVMBuildCall2(b, ity, impl, av, (unsigned)nimpl, "");
    ctx_free(L->ctx, streamed);
  }
  LLVMBuildRetVoid(b);

  /* the implementation */
  L->fn = impl;
  L->alloca_bb = LLVMAppendBasicBlockInContext(m->c, impl, "allocas");
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(m->c, impl, "start");
  LLVMPositionBuilderAtEnd(b, start);
  LLVMValueRef shp = LLVMGetParam(impl, 0), str = LLVMGetParam(impl, 1);
  for (int d = 0; d < k->ndim; d++) {
    LLVMValueRef ix = cg_i64(m, d);
    L->shape[d] = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, shp, &ix, 1, ""), "");
  }
  if (k->row_extent) L->shape[k->ndim - 1] = cg_i64(m, k->row_extent); /* (ir.h KernelIr.row_extent) */
  cg_load_params(L, impl_param_word, &pbase);
  for (int bi = 0; bi < nb; bi++) {
    L->base[bi] = LLVMGetParam(impl, (unsigned)(2 + bi));
    for (int d = 0; d < k->ndim; d++) {
      int64_t cs;
      LLVMValueRef s;
      int64_t cl;
      if (ir_layout_const(k->bufs[bi].layout[d], &cs)) s = cg_i64(m, cs); /* a compile-time stride */
      else if (k->row_extent && d == k->ndim - 2 && ir_layout_const(k->bufs[bi].layout[d + 1], &cl))
        s = cg_i64(m, k->row_extent * cl); /* packed rows (ir.h KernelIr.row_extent) */
      else {
        LLVMValueRef ix = cg_i64(m, (int64_t)bi * k->ndim + d);
        s = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, str, &ix, 1, ""), "");
      }
      L->stride[bi * k->ndim + d] = s;
    }
  }
  LLVMValueRef rs = cg_i64(m, 1);
  for (int d = k->nkeep; d < k->ndim; d++) rs = LLVMBuildMul(b, rs, L->shape[d], "");
  L->rsize = rs;
  L->depth = 0;
  L->off = L->levels;
  for (int bi = 0; bi < nb; bi++) L->off[bi] = cg_i64(m, 0);
  LLVMValueRef s0 = col ? NULL : LLVMGetParam(impl, (unsigned)(2 + nb));
  LLVMValueRef s1 = col ? NULL : LLVMGetParam(impl, (unsigned)(3 + nb));
  if (col) {
    if (which == ENTRY_COLPART && L->outer && L->outer_by_strides >= 0) cg_host_col_query(L, LLVMGetParam(impl, (unsigned)(2 + nb)));
    else if (which == ENTRY_COLPART && L->outer) { /* its MAP phase may stream (lower_host_stream.c) */
      bool *streamed = cg_outer_has_map(k) ? ctx_calloc(L->ctx, (size_t)nb + 1, sizeof(bool)) : NULL;
      L->col_streamed = streamed && cg_host_stream_map_outputs(k, attrs, nattrs, streamed) > 0 ? streamed : NULL;
      cg_host_col_part(L, LLVMGetParam(impl, (unsigned)(2 + nb)));
      L->col_streamed = NULL;
      ctx_free(L->ctx, streamed);
    }
    else if (which == ENTRY_COLPART) cg_host_row_part(L, LLVMGetParam(impl, (unsigned)(2 + nb)));
    else cg_host_col_finish(L, LLVMGetParam(impl, (unsigned)(2 + nb)));
  } else if (via) {
    /* the accumulator partial() wrote (codegen.h's layout) -> the FINAL phase */
    const KPhase *ph = &k->phases[0];
    LoomDType vt = cg_red_value_dtype(k, ph);
    LLVMValueRef accp = LLVMGetParam(impl, (unsigned)(4 + nb)), eight = cg_i64(m, cg_acc_index_offset(vt));
    for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
    L->acc[0] = cg_from_mem(m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(m, vt), accp, ""));
    L->accidx[0] = is_arg(ph->reduce_op)
                       ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), accp, &eight, 1, ""), "")
                       : cg_i64(m, 0);
    cg_host_set_o_offsets(L, cg_i64(m, 0));
    memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)nb);
    if (k->nphase == 2) cg_run_final_phase(L, &k->phases[1]);
  } else if (which == ENTRY_RUN) {
    if (k->nkeep == k->ndim) {
      cg_worker_begin(L); /* a host worker is one run() call: one task's range of points */
      if (cg_host_rows_on(L)) cg_host_rows_map(L, s0, s1, &k->phases[0]); /* lower_host_rows.c */
      else if (cg_host_tiled(k)) cg_host_walk_tiled(L, s0, s1, cg_body_map, (void *)&k->phases[0]);
      else {
        int64_t cols = 0;
        int jam = cg_host_row_jam(k, &cols);
        walk(L, 0, k->ndim, s0, s1, cg_body_map, (void *)&k->phases[0], NULL, jam, cols);
      }
      cg_worker_end(L);
    }
    else if (L->outer && k->phases[0].kind == KP_SCAN) cg_host_scan_outer(L, s0, s1);
    else if (L->outer && L->outer_by_strides >= 0) cg_host_run_by_strides(L, s0, s1);
    else if (L->outer) cg_host_run_outer(L, s0, s1);
    else if (cg_host_final_block_ok(L)) cg_host_walk_final_blocks(L, s0, s1);
    else cg_host_walk(L, 0, k->nkeep, s0, s1, cg_host_body_o_point, NULL);
  } else {
    LLVMValueRef s2 = LLVMGetParam(impl, (unsigned)(4 + nb));
    cg_host_set_o_offsets(L, s0);
    memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)nb);
    const KPhase *ph = &k->phases[0];
    LoomDType vt = cg_red_value_dtype(k, ph);
    LLVMTypeRef vty = cg_reg_type(m, vt);
    LLVMTypeRef mty = cg_mem_type(m, vt);
    LLVMValueRef eight = cg_i64(m, cg_acc_index_offset(vt));
    for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
    if (which == ENTRY_PARTIAL) {
      LLVMValueRef accp = LLVMGetParam(impl, (unsigned)(5 + nb));
      cg_host_reduce_phase(L, 0, s1, s2);
      LLVMBuildStore(b, cg_to_mem(m, vt, vt, L->acc[0]), accp);
      if (is_arg(ph->reduce_op))
        LLVMBuildStore(b, L->accidx[0], LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), accp, &eight, 1, ""));
    } else {
      /* finish: combine the parts in order (loop over i < nparts) */
      LLVMValueRef accs = s1, nparts = s2;
      LLVMValueRef accv = cg_entry_alloca(L, vty, "acc"), acci = cg_entry_alloca(L, L->i64, "acci");
      LLVMValueRef iv = cg_entry_alloca(L, L->i64, "part");
      bool comp = cg_sum_compensated(k, ph); /* float sums: the parts into a compensated pair */
      LLVMValueRef accc = comp ? cg_entry_alloca(L, vty, "accc") : NULL;
      if (comp) LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accc);
      LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accv);
      LLVMBuildStore(b, cg_i64(m, 0), acci);
      LLVMBuildStore(b, cg_i64(m, 0), iv);
      LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(m->c, impl, "parts.head");
      LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(m->c, impl, "parts.body");
      LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->c, impl, "parts.done");
      LLVMBuildBr(b, head);
      LLVMPositionBuilderAtEnd(b, head);
      LLVMValueRef i = LLVMBuildLoad2(b, L->i64, iv, "");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, nparts, ""), body, done);
      LLVMPositionBuilderAtEnd(b, body);
      LLVMValueRef byte = LLVMBuildMul(b, i, cg_i64(m, cg_acc_size(vt, ph->reduce_op)), "");
      LLVMValueRef pp = LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), accs, &byte, 1, "");
      LLVMValueRef pv = cg_from_mem(m, vt, vt, LLVMBuildLoad2(b, mty, pp, ""));
      LLVMValueRef cur = LLVMBuildLoad2(b, vty, accv, "");
      if (is_arg(ph->reduce_op)) {
        LLVMValueRef pi = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), pp, &eight, 1, ""), "");
        LLVMValueRef take = cg_arg_better(m, (LoomReduceOp)ph->reduce_op, vt, cur, pv);
        take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, i, cg_i64(m, 0), ""), "");
        LLVMBuildStore(b, LLVMBuildSelect(b, take, pv, cur, ""), accv);
        LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, acci, "");
        LLVMBuildStore(b, LLVMBuildSelect(b, take, pi, ci, ""), acci);
      } else if (comp) {
        cg_sum_add(L, vt, accv, accc, pv);
      } else {
        /* strictly in order (no reassoc): the parts are few and the result must not depend on
         * how the combine loop is vectorized */
        LLVMValueRef v = cg_red_combine(L, ph->reduce_op, vt, cur, pv);
        cg_clear_fmf(v);
        LLVMBuildStore(b, v, accv);
      }
      LLVMBuildStore(b, LLVMBuildAdd(b, i, cg_i64(m, 1), ""), iv);
      LLVMBuildBr(b, head);
      LLVMPositionBuilderAtEnd(b, done);
      L->acc[0] = LLVMBuildLoad2(b, vty, accv, "");
      if (comp) L->acc[0] = cg_sum_settle(L, vt, L->acc[0], LLVMBuildLoad2(b, vty, accc, ""));
      L->accidx[0] = LLVMBuildLoad2(b, L->i64, acci, "");
      if (k->nphase == 2) cg_run_final_phase(L, &k->phases[1]);
    }
  }
  LLVMBuildRetVoid(b);
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBuildBr(L->ab, start);
  ctx_free(L->ctx, pt);
  ctx_free(L->ctx, av);
}

LoomStatus cg_lower_host(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k,
                         const char *prefix, const CgVecMath *vec, const char *const *fn_attrs,
                         int nattrs, CgEntryNames *names, Diag *d) {
  if (!k || !names || !prefix) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: null kernel");
  LoomStatus st = cg_check_kernel(k, d);
  if (st != LOOM_OK) return st;
  memset(names, 0, sizeof *names);
  snprintf(names->run, sizeof names->run, "%s_run", prefix);
  snprintf(names->partial, sizeof names->partial, "%s_partial", prefix);
  snprintf(names->finish, sizeof names->finish, "%s_finish", prefix);
  snprintf(names->colpart, sizeof names->colpart, "%s_colpart", prefix);
  snprintf(names->colfinish, sizeof names->colfinish, "%s_colfinish", prefix);
  bool red = k->nkeep < k->ndim;
  /* (a kernel of rows of E <= 16 points never splits R: its parts are 32768 points) */
  names->has_partial = red && !k->row_extent && k->phases[0].kind == KP_REDUCE &&
                       (k->nphase == 1 || (k->nphase == 2 && k->phases[1].kind == KP_FINAL));
  if (names->has_partial) names->acc_size = cg_acc_size(cg_red_value_dtype(k, &k->phases[0]), k->phases[0].reduce_op);
  if (!red && k->nphase != 1)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: elementwise kernel '%s' has %d phases", k->name, k->nphase);

  Lower L;
  bool allocated = cg_lower_init(&L, ctx, c, mod, k, d);
  L.m.vec = vec;
  L.force_vf = f16_width(k, fn_attrs, nattrs);
  L.host_vec_bytes = preferred_vector_bytes(fn_attrs, nattrs);
  if (!allocated) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering kernel '%s'", k->name);
  } else {
    L.outer = cg_reduce_walk(k, L.need, cg_outer_map_ok(k), &L.outer_by_strides) || k->walk_cols;
    if (!cg_host_by_strides_ok(k) || k->walk_cols) L.outer_by_strides = -1; /* walk_cols: the launch decided */
    if (L.outer_by_strides >= 0) L.outer = true; /* planned as outer; run() may take the per-O walk */
    cg_host_keep_plan(&L);
    cg_host_onepass_plan(&L); /* host_moments.c */
    cg_snippet_lower(ctx, &L.m, k, &L.sn, d);
  }
  if (st == LOOM_OK && d->status) {
    st = d->status;
  } else if (st == LOOM_OK) {
    if (names->has_partial) {
      build_entry(&L, ENTRY_PARTIAL, names->partial, fn_attrs, nattrs);
      build_entry(&L, ENTRY_FINISH, names->finish, fn_attrs, nattrs);
    }
    build_entry(&L, names->has_partial && k->nkeep == 0 ? ENTRY_RUN_VIA_PARTIAL : ENTRY_RUN, names->run,
                fn_attrs, nattrs);
    /* reductions of the outer strategy also get the column split (acc_size covers every phase) */
    static int col_map = -1; /* LOOM_HOST_COL_MAP=0: kernels with a MAP phase keep run()'s blocks (A/B) */
    /* LOOM_HOST_COL_BY_STRIDES=0: kernels that walk by strides have no column split (A/B) */
    static int col_by_strides = -1;
    bool by_strides = L.outer_by_strides >= 0;
    names->has_col = L.outer && (!by_strides || cg_env_int_once(&col_by_strides, "LOOM_HOST_COL_BY_STRIDES", 1)) &&
                     !k->snippet && k->nphase <= 30 && k->phases[0].kind != KP_SCAN && /* (bit 30: codegen.h CG_COL_BY_STRIDES) */
                     (!cg_outer_has_map(k) || cg_env_int_once(&col_map, "LOOM_HOST_COL_MAP", 1));
    if (names->has_col && by_strides) names->col_phases = CG_COL_BY_STRIDES;
    static int row_split = -1; /* LOOM_HOST_ROW_SPLIT=0: inner multi-phase reductions per O point (A/B) */
    bool rows = !L.outer && !names->has_partial && !k->row_extent && cg_host_row_splittable(k) && /* inner, multi-phase */
                cg_env_int_once(&row_split, "LOOM_HOST_ROW_SPLIT", 1);
    if (rows) names->has_col = true, names->col_phases = CG_COL_ROWS;
    if (names->has_col) {
      for (int p = 0; p < k->nphase; p++)
        if (k->phases[p].kind == KP_REDUCE && !cg_mom_folded(&L.mom, p)) { /* folded: no colpart of its own */
          names->col_phases |= 1u << p;
          int sz = cg_acc_size(cg_red_value_dtype(k, &k->phases[p]), k->phases[p].reduce_op);
          if (sz > names->acc_size) names->acc_size = sz;
        } else if (k->phases[p].kind == KP_MAP && L.outer) { /* colpart runs it over a slab (lower_host_outer.c) */
          names->col_phases |= 1u << p;
        }
      if (cg_mom_record_size(k, &L.mom) > names->acc_size) names->acc_size = cg_mom_record_size(k, &L.mom);
      L.col_acc_size = names->acc_size;
      build_entry(&L, ENTRY_COLPART, names->colpart, fn_attrs, nattrs);
      build_entry(&L, ENTRY_COLFINISH, names->colfinish, fn_attrs, nattrs);
    }
    cg_math_finish(&L.m);
    st = d->status;
  }
  return cg_lower_finish(&L, ctx, mod, "", st, d);
}
