/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_plan.c: the radix sort's trivial passes (gpu_radix.h: loom_radix_plan, the planned pass,
 * loom_radix_copy). When a row's keys span a small range, most 8-bit digits are the same in every key
 * (labels, class ids, indices, timestamps with a common high part, the exponent byte of floats of one
 * binade): such a pass is the identity (the sort is stable), yet reads and writes every key (and value).
 * The histogram kernel has counted every pass's digits per row before the passes run, so a tiny kernel
 * decides on the device -- the host never waits -- and writes a plan word per row and pass; each pass
 * block reads its word and returns at once on a trivial pass. Buffers are assigned from the row's last
 * non-trivial pass backwards (it writes the output, the one before it the temporary, ...), so the result
 * lands where the caller expects it without a parity copy; only a row with no non-trivial pass at all
 * needs loom_radix_copy (keys copied, values copied or argsort's index made), which otherwise returns
 * at once in every block.
 *
 * Cost when nothing is trivial: the plan kernel (rows blocks reading P x 256 counts each), the copy
 * kernel's launch (~1024 blocks returning at once), and in each pass block two summary loads that do not
 * wait on the tile counter (rows that agree) or one plan word load after it (rows that differ). */
#include "codegen/gpu_radix_gen.h"

#define RADIX_DIGITS 256

bool cg_radix_skips(const CgRadixSpec *spec) { return !spec->all_passes && !spec->legacy && !spec->take && !spec->rows; }

int64_t cg_radix_scratch_words(const CgRadixSpec *spec, int64_t rows, int64_t tiles_per_row) {
  int64_t P = cg_radix_shape(spec).passes;
  return CG_RADIX_COUNTERS + rows * P * RADIX_DIGITS + P * rows * tiles_per_row * RADIX_DIGITS +
         (cg_radix_skips(spec) ? rows * P : 0);
}

/* The first plan word (i64 scratch index), after the histograms and the passes' status words. */
static LLVMValueRef plan_base(Gen *g, LLVMValueRef rows, LLVMValueRef tpr) {
  LLVMValueRef per_pass = mul(g, mul(g, rows, zext64(g, tpr)), c64(g, RADIX_DIGITS));
  LLVMValueRef hist = mul(g, rows, c64(g, (unsigned)(g->sh.passes * RADIX_DIGITS)));
  return add(g, c64(g, CG_RADIX_COUNTERS), add(g, hist, mul(g, per_pass, c64(g, (unsigned)g->sh.passes))));
}

/* plan[row][pass] (row i64, pass i32) as a pointer into scratch. */
static LLVMValueRef plan_at(Gen *g, LLVMValueRef scratch, LLVMValueRef rows, LLVMValueRef tpr, LLVMValueRef row,
                            LLVMValueRef pass) {
  LLVMValueRef i = add(g, mul(g, row, c64(g, (unsigned)g->sh.passes)), zext64(g, pass));
  return at(g, g->i32, scratch, add(g, plan_base(g, rows, tpr), i));
}

/* *p |= v by an atomic, unless *p (read first, relaxed) has v's bits already: many rows write the same few
 * summary words, and after the first ones most find their bits there (no serialized atomics on one line). */
static void atomic_or(Gen *g, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef cur = LLVMBuildLoad2(g->b, g->i32, p, "");
  LLVMSetAlignment(cur, 4);
  LLVMSetOrdering(cur, LLVMAtomicOrderingMonotonic);
  LLVMBasicBlockRef after = if_begin(g, LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, cur, v, ""), v, ""));
  LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpOr, p, v, LLVMAtomicOrderingMonotonic, 0);
  if_end(g, after);
}

static LLVMValueRef has(Gen *g, LLVMValueRef word, unsigned bit) {
  return LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, word, c32(g, bit), ""), c32(g, 0), "");
}

/* Returns from the kernel when cond (uniform over the block) holds; the builder continues after. */
static void return_if(Gen *g, LLVMValueRef cond) {
  LLVMBasicBlockRef ret = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "trivial");
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "nontrivial");
  LLVMBuildCondBr(g->b, cond, ret, go);
  LLVMPositionBuilderAtEnd(g->b, ret);
  LLVMBuildRetVoid(g->b);
  LLVMPositionBuilderAtEnd(g->b, go);
}

/* ---- loom_radix_plan ---------------------------------------------------------------------------------------- */
/* Block r: thread d tests count[r][p][d] == n for every pass p (at most one digit can hold all n keys);
 * thread 0 then numbers the row's non-trivial passes and writes their words. */
void cg_radix_gen_plan(Gen *g) {
  LLVMTypeRef ps[4] = {g->pg, g->i64, g->i32, g->i64};
  begin_kernel(g, "loom_radix_plan", ps, 4);
  LLVMValueRef scratch = LLVMGetParam(g->fn, 0), n = LLVMGetParam(g->fn, 1), tpr = LLVMGetParam(g->fn, 2);
  LLVMValueRef rows = LLVMGetParam(g->fn, 3);
  int P = g->sh.passes;
  LLVMValueRef flags = shared_array(g, "loom_radix_plan_trivial", g->i32, 8, 16);
  LLVMValueRef tid = thread_id(g), row = zext64(g, g->h.index(&g->m, CG_GPU_BLOCK_ID));
  LLVMBasicBlockRef after = if_begin(g, ult(g, tid, c32(g, (unsigned)P)));
  store(g, c32(g, 0), at(g, g->i32, flags, tid), 4);
  if_end(g, after);
  g->h.barrier(&g->m);
  LLVMValueRef n32 = LLVMBuildTrunc(g->b, n, g->i32, ""); /* n < 2^30 */
  LLVMValueRef hist = add(g, c64(g, CG_RADIX_COUNTERS), mul(g, row, c64(g, (unsigned)(P * RADIX_DIGITS))));
  for (int q = 0; q < P; q++) {
    LLVMValueRef i = add(g, hist, zext64(g, add(g, tid, c32(g, (unsigned)(q * RADIX_DIGITS)))));
    after = if_begin(g, eq(g, load(g, g->i32, at(g, g->i32, scratch, i), 4), n32));
    store(g, c32(g, 1), at(g, g->i32, flags, c32(g, (unsigned)q)), 4); /* one thread at most */
    if_end(g, after);
  }
  g->h.barrier(&g->m);
  after = if_begin(g, eq(g, tid, c32(g, 0)));
  LLVMValueRef trivial[8], m = c32(g, 0);
  for (int q = 0; q < P; q++) {
    trivial[q] = LLVMBuildICmp(g->b, LLVMIntNE, load(g, g->i32, at(g, g->i32, flags, c32(g, (unsigned)q)), 4), c32(g, 0), "");
    m = add(g, m, sel(g, trivial[q], c32(g, 0), c32(g, 1)));
  }
  LLVMValueRef none = eq(g, m, c32(g, 0)), k = c32(g, 0), base = plan_base(g, rows, tpr);
  for (int q = 0; q < P; q++) { /* k: non-trivial passes before q; j = m - 1 - k: after it */
    LLVMValueRef j = LLVMBuildSub(g->b, LLVMBuildSub(g->b, m, c32(g, 1), ""), k, "");
    LLVMValueRef w = LLVMBuildOr(g->b, sel(g, eq(g, k, c32(g, 0)), c32(g, CG_RADIX_PLAN_FIRST), c32(g, 0)),
                                 sel(g, eq(g, j, c32(g, 0)), c32(g, CG_RADIX_PLAN_LAST), c32(g, 0)), "");
    w = LLVMBuildOr(g->b, w, sel(g, has(g, j, 1), c32(g, CG_RADIX_PLAN_ODD), c32(g, 0)), "");
    w = sel(g, trivial[q], sel(g, none, c32(g, CG_RADIX_PLAN_TRIVIAL | CG_RADIX_PLAN_NONE), c32(g, CG_RADIX_PLAN_TRIVIAL)), w);
    k = add(g, k, sel(g, trivial[q], c32(g, 0), c32(g, 1)));
    LLVMValueRef i = add(g, base, add(g, mul(g, row, c64(g, (unsigned)P)), c64(g, (unsigned)q)));
    store(g, w, at(g, g->i32, scratch, i), 4);
    atomic_or(g, at(g, g->i32, scratch, c64(g, CG_RADIX_PLAN_OR + (unsigned)q)), LLVMBuildAnd(g->b, w, c32(g, 15), ""));
    atomic_or(g, at(g, g->i32, scratch, c64(g, CG_RADIX_PLAN_NOR + (unsigned)q)),
              LLVMBuildAnd(g->b, LLVMBuildNot(g->b, w, ""), c32(g, 15), ""));
  }
  LLVMBasicBlockRef after2 = if_begin(g, none);
  atomic_or(g, at(g, g->i32, scratch, c64(g, CG_RADIX_PLAN_COPY)), c32(g, 1));
  if_end(g, after2);
  if_end(g, after);
  LLVMBuildRetVoid(g->b);
}

/* ---- the planned pass ----------------------------------------------------------------------------------------- */
void cg_radix_plan_early(Gen *g, PassState *s) {
  LLVMValueRef i = zext64(g, s->pass);
  s->plan_or = load(g, g->i32, at(g, g->i32, s->scratch, add(g, c64(g, CG_RADIX_PLAN_OR), i)), 4);
  LLVMValueRef nor = load(g, g->i32, at(g, g->i32, s->scratch, add(g, c64(g, CG_RADIX_PLAN_NOR), i)), 4);
  s->plan_uniform = eq(g, LLVMBuildAnd(g->b, s->plan_or, nor, ""), c32(g, 0));
  return_if(g, LLVMBuildAnd(g->b, s->plan_uniform, has(g, s->plan_or, CG_RADIX_PLAN_TRIVIAL), ""));
}

void cg_radix_plan_tile(Gen *g, PassState *s) {
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef own = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "plan.row");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "plan");
  LLVMBuildCondBr(g->b, s->plan_uniform, done, own);
  LLVMPositionBuilderAtEnd(g->b, own); /* rows differ: this row's word */
  LLVMValueRef w = load(g, g->i32, plan_at(g, s->scratch, s->rows, s->tpr, s->x.row, s->pass), 4);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  s->plan = LLVMBuildPhi(g->b, g->i32, "plan");
  LLVMValueRef vs[2] = {s->plan_or, w};
  LLVMBasicBlockRef bs[2] = {from, own};
  LLVMAddIncoming(s->plan, vs, bs, 2);
  return_if(g, has(g, s->plan, CG_RADIX_PLAN_TRIVIAL));
  s->plan_slot = shared_array(g, "loom_radix_plan_word", g->i32, 1, 4);
  /* every thread stores the same word (relaxed: no race, no branch) */
  LLVMValueRef st = LLVMBuildStore(g->b, s->plan, s->plan_slot);
  LLVMSetAlignment(st, 4);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
}

/* The row's plan word where it is used: the register until s->plan_kept, then a shared load. */
static LLVMValueRef plan_word(Gen *g, PassState *s) {
  return s->plan_kept ? load(g, g->i32, s->plan_slot, 4) : s->plan;
}

LLVMValueRef cg_radix_keys_src(Gen *g, PassState *s) {
  if (!s->plan) return s->keys_in;
  LLVMValueRef w = plan_word(g, s);
  return sel(g, has(g, w, CG_RADIX_PLAN_FIRST), s->keys_in, sel(g, has(g, w, CG_RADIX_PLAN_ODD), s->keys_out, s->keys_alt));
}

LLVMValueRef cg_radix_keys_dst(Gen *g, PassState *s) {
  if (!s->plan) return s->keys_out;
  return sel(g, has(g, plan_word(g, s), CG_RADIX_PLAN_ODD), s->keys_alt, s->keys_out);
}

/* vals_mode & 4 (argsort's int32 index widened at the end): the index moves between vals_alt0 and
 * vals_alt1 and the row's last pass writes the int64 vals_out; else between vals_out and vals_alt0. */
LLVMValueRef cg_radix_vals_src(Gen *g, PassState *s) {
  if (!s->plan) return s->vals_in;
  LLVMValueRef w = plan_word(g, s), odd = has(g, w, CG_RADIX_PLAN_ODD);
  LLVMValueRef moved = sel(g, has(g, s->mode, 4), sel(g, odd, s->vals_alt1, s->vals_alt0), sel(g, odd, s->vals_out, s->vals_alt0));
  return sel(g, has(g, w, CG_RADIX_PLAN_FIRST), s->vals_in, moved);
}

LLVMValueRef cg_radix_vals_dst(Gen *g, PassState *s) {
  if (!s->plan) return s->vals_out;
  LLVMValueRef w = plan_word(g, s), odd = has(g, w, CG_RADIX_PLAN_ODD);
  LLVMValueRef wide = sel(g, has(g, w, CG_RADIX_PLAN_LAST), s->vals_out, sel(g, odd, s->vals_alt0, s->vals_alt1));
  return sel(g, has(g, s->mode, 4), wide, sel(g, odd, s->vals_alt0, s->vals_out));
}

/* mode & 3: argsort's index (1) is made by the row's first non-trivial pass only, moved (2) after it;
 * mode & 4: widened by the row's last one only. */
LLVMValueRef cg_radix_vals_mode(Gen *g, PassState *s) {
  if (!s->plan) return s->mode;
  LLVMValueRef w = plan_word(g, s), m3 = LLVMBuildAnd(g->b, s->mode, c32(g, 3), "");
  m3 = sel(g, LLVMBuildAnd(g->b, eq(g, m3, c32(g, 1)), LLVMBuildNot(g->b, has(g, w, CG_RADIX_PLAN_FIRST), ""), ""),
           c32(g, 2), m3);
  LLVMValueRef widen = LLVMBuildAnd(g->b, has(g, s->mode, 4), has(g, w, CG_RADIX_PLAN_LAST), "");
  return LLVMBuildOr(g->b, m3, sel(g, widen, c32(g, 4), c32(g, 0)), "");
}

/* ---- loom_radix_copy ------------------------------------------------------------------------------------------ */
/* Block b: tiles [first, last) of row b / blocks_per_row, elements strided by the block's threads. */
void cg_radix_gen_copy(Gen *g) {
  LLVMTypeRef ps[10] = {g->pg, g->pg, g->pg, g->pg, g->pg, g->i64, g->i32, g->i64, g->i32, g->i32};
  begin_kernel(g, "loom_radix_copy", ps, 10);
  LLVMValueRef keys_in = LLVMGetParam(g->fn, 0), keys_out = LLVMGetParam(g->fn, 1), vals_in = LLVMGetParam(g->fn, 2);
  LLVMValueRef vals_out = LLVMGetParam(g->fn, 3), scratch = LLVMGetParam(g->fn, 4), n = LLVMGetParam(g->fn, 5);
  LLVMValueRef tpr = LLVMGetParam(g->fn, 6), rows = LLVMGetParam(g->fn, 7), chunk = LLVMGetParam(g->fn, 8);
  LLVMValueRef mode = LLVMGetParam(g->fn, 9);
  return_if(g, eq(g, load(g, g->i32, at(g, g->i32, scratch, c64(g, CG_RADIX_PLAN_COPY)), 4), c32(g, 0)));
  LLVMValueRef bpr = LLVMBuildUDiv(g->b, add(g, tpr, LLVMBuildSub(g->b, chunk, c32(g, 1), "")), chunk, "");
  LLVMValueRef bid = g->h.index(&g->m, CG_GPU_BLOCK_ID);
  LLVMValueRef row = zext64(g, LLVMBuildUDiv(g->b, bid, bpr, ""));
  LLVMValueRef w = load(g, g->i32, plan_at(g, scratch, rows, tpr, row, c32(g, 0)), 4);
  return_if(g, LLVMBuildNot(g->b, has(g, w, CG_RADIX_PLAN_NONE), ""));
  LLVMValueRef tile = c64(g, (unsigned)g->sh.tile);
  LLVMValueRef first = mul(g, zext64(g, mul(g, LLVMBuildURem(g->b, bid, bpr, ""), chunk)), tile);
  LLVMValueRef last = add(g, first, mul(g, zext64(g, chunk), tile));
  last = sel(g, ult(g, n, last), n, last);
  LLVMValueRef row_base = mul(g, row, n);
  unsigned kb = (unsigned)g->kbits / 8, vb = (unsigned)g->spec.value_bytes;
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.done");
  LLVMValueRef start = add(g, first, zext64(g, thread_id(g)));
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef e = LLVMBuildPhi(g->b, g->i64, "e");
  LLVMBuildCondBr(g->b, ult(g, e, last), body, done);
  LLVMPositionBuilderAtEnd(g->b, body);
  LLVMValueRef i = add(g, row_base, e);
  store(g, load(g, g->kt, at(g, g->kt, keys_in, i), kb), at(g, g->kt, keys_out, i), kb);
  if (vb) {
    LLVMValueRef m3 = LLVMBuildAnd(g->b, mode, c32(g, 3), "");
    LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.vals");
    LLVMBasicBlockRef index = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.index");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.next");
    LLVMValueRef sw = LLVMBuildSwitch(g->b, m3, next, 2);
    LLVMAddCase(sw, c32(g, 2), copy);
    LLVMAddCase(sw, c32(g, 1), index);
    LLVMPositionBuilderAtEnd(g->b, copy);
    store(g, load(g, g->vt, at(g, g->vt, vals_in, i), vb), at(g, g->vt, vals_out, i), vb);
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, index); /* the position in the row: int64 when widened, else the values' width */
    LLVMBasicBlockRef wide = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.wide");
    LLVMBasicBlockRef narrow = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "copy.narrow");
    LLVMBuildCondBr(g->b, has(g, mode, 4), wide, narrow);
    LLVMPositionBuilderAtEnd(g->b, wide);
    store(g, e, at(g, g->i64, vals_out, i), 8);
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, narrow);
    store(g, vb == 8 ? e : LLVMBuildTrunc(g->b, e, g->vt, ""), at(g, g->vt, vals_out, i), vb);
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, next);
  }
  LLVMValueRef e2 = add(g, e, c64(g, (unsigned)g->sh.block));
  LLVMBasicBlockRef tail = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef ev[2] = {start, e2};
  LLVMBasicBlockRef eb[2] = {entry, tail};
  LLVMAddIncoming(e, ev, eb, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMBuildRetVoid(g->b);
}
