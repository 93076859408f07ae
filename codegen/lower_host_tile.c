/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_tile.c: the tiled walk of elementwise host kernels whose operands disagree on the fastest
 * axis (`x.T + y`, `(a + a.T) / 2`, a permuted 3-d view beside a contiguous array).
 *
 * The row-major walk (lower_host.c) reads such an operand a row of the output at a time: one element
 * per cache line, lines a whole row apart. With power-of-two rows those lines fall into a handful of
 * cache sets (an 8 KiB stride maps every line to the same L1 set and to 8 of the L2's), so a line is
 * evicted before the next output row could use the rest of it, and every element of the transposed
 * operand costs a line from L3 or memory: 16x the bytes for float32. The tiled walk visits the full
 * rows of a range in tiles of CG_TILE x CG_TILE points: a tile reads CG_TILE lines of the transposed
 * operand, each CG_TILE elements deep, and uses each line whole while it is in cache. In a full tile
 * each transposed operand that is only loaded is first staged: its block is read a column at a time
 * (vector loads along its contiguous dim), transposed in registers by shuffles and stored to a stack
 * tile, from which the tile's rows read it contiguously; so every operand and the output are
 * contiguous along the inner loop, which the vectorizer widens without run-time stride checks (the
 * strided operand's run-time stride otherwise versions the loop and runs its scalar copy). Partial
 * tiles (the edges) stage the lanes they own with masked loads into a second stack tile (its own, so the
 * full tiles' copy stays in registers); LOOM_HOST_TILE_EDGE=0, or 1-2 byte elements without AVX-512,
 * read them in place. Tiles are visited in panels, a column of tiles at a time (panel_rows).
 *
 * Chosen at compile time (cg_host_tiled) from the layout classes: some buffer is contiguous along the
 * second-to-last dim with a run-time stride along the last (the transposed one) and some buffer is
 * contiguous along the last. Partial first and last rows of a task's range run the plain walk. Every
 * point is visited once with its own offsets and linear index, so results do not depend on the order.
 */
#include "codegen/cg_lower.h"

#define CG_TILE 16 /* rows and columns per tile: a 64-byte line of a float32 column of the transposed operand
                    * deep, 16 such lines live at once (tiles of 8-64 rows x 8-64 columns measured within
                    * 10 % of each other on AVX2 before staging) */

bool cg_host_tiled(const KernelIr *k) {
  if (k->snippet || k->nkeep != k->ndim || k->ndim < 2) return false;
  int last = k->ndim - 1;
  bool across = false, along = false;
  for (int b = 0; b < k->nbuf; b++) {
    uint8_t l1 = k->bufs[b].layout[last], l0 = k->bufs[b].layout[last - 1];
    if (l1 == KL_ANY && l0 == KL_ONE) across = true;
    if (l1 == KL_ONE) along = true;
  }
  return across && along;
}

static LLVMValueRef smin(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, y, ""), x, y, "");
}

/* A counted loop `for (v = 0; v < n; v++)`: loop_begin leaves the builder in the body (lp.v is v),
 * loop_end closes it (returns the back edge) and leaves the builder after the loop. */
typedef struct Loop {
  LLVMBasicBlockRef pre, body, exit;
  LLVMValueRef v, n;
} Loop;

static Loop loop_begin(Lower *L, LLVMValueRef n, const char *name) {
  LLVMBuilderRef b = L->m.b;
  Loop lp = {LLVMGetInsertBlock(b), cg_new_bb(L, name), cg_new_bb(L, "tile.exit"), NULL, n};
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, cg_i64(&L->m, 0), n, ""), lp.body, lp.exit);
  LLVMPositionBuilderAtEnd(b, lp.body);
  lp.v = LLVMBuildPhi(b, L->i64, name);
  return lp;
}

static LLVMValueRef loop_end(Lower *L, Loop *lp) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef v1 = LLVMBuildAdd(b, lp->v, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
  LLVMValueRef br = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, v1, lp->n, ""), lp->body, lp->exit);
  LLVMBasicBlockRef from[2] = {lp->pre, end};
  LLVMValueRef vals[2] = {cg_i64(&L->m, 0), v1};
  LLVMAddIncoming(lp->v, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, lp->exit);
  return br;
}

/* Whether buffer bi of k is staged in full tiles: read only by KI_LOAD (KI_OFFSET / KI_GATHER use
 * its own offsets), contiguous along the second-to-last dim and not along the last, elements of 1-8
 * bytes (moved as integers of that size). */
static bool staged(const KernelIr *k, int bi) {
  int last = k->ndim - 1;
  const KBuffer *kb = &k->bufs[bi];
  if (kb->is_output || kb->layout[last - 1] != KL_ONE || kb->layout[last] == KL_ONE || kb->layout[last] == KL_ZERO)
    return false;
  size_t sz = loom_dtype_size((LoomDType)kb->dtype);
  if (sz != 1 && sz != 2 && sz != 4 && sz != 8) return false;
  for (int i = 0; i < k->ninstr; i++)
    if ((k->instrs[i].kind == KI_OFFSET || k->instrs[i].kind == KI_GATHER) && k->instrs[i].buf == bi) return false;
  return true;
}

/* Copies the CG_TILE x CG_TILE block of buffer bi whose element (r, c) sits at offset
 * base + r + c * scol (rows contiguous) into scratch, row-major (scratch[r * CG_TILE + c]): CG_TILE
 * vector loads of one column each, an in-register transpose, CG_TILE vector stores. The transpose
 * runs log2(CG_TILE) stages; the stage of bit h swaps, in each pair of vectors (i, i + h) with bit h
 * of i clear, lanes of bit h set of vector i with lanes of bit h clear of vector i + h. An element
 * (i, l) moves to (l, i) because every stage exchanges bit h of its vector and lane numbers where
 * they differ. Stages with h at least a machine register's lanes only rename registers. */
static void stage_tile(Lower *L, int bi, LLVMValueRef base, LLVMValueRef scol, LLVMValueRef scratch, LLVMValueRef tr,
                       LLVMValueRef tc) {
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  size_t sz = loom_dtype_size((LoomDType)L->k->bufs[bi].dtype);
  LLVMTypeRef et = LLVMIntTypeInContext(m->c, (unsigned)(8 * sz));
  LLVMTypeRef vt = LLVMVectorType(et, CG_TILE);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  unsigned align = dtype_align((LoomDType)L->k->bufs[bi].dtype);
  LLVMValueRef v[CG_TILE], rows = NULL;
  if (tr) { /* an edge tile: lanes l < tr of columns c < tc (llvm.masked.load; nothing else is touched) */
    LLVMValueRef lane[CG_TILE];
    for (int l = 0; l < CG_TILE; l++) lane[l] = cg_i64(m, l);
    LLVMValueRef splat = LLVMBuildInsertElement(b, LLVMGetUndef(LLVMVectorType(L->i64, CG_TILE)), tr, cg_i64(m, 0), "");
    splat = LLVMBuildShuffleVector(b, splat, splat, LLVMConstNull(LLVMVectorType(i32, CG_TILE)), "");
    rows = LLVMBuildICmp(b, LLVMIntSLT, LLVMConstVector(lane, CG_TILE), splat, "tile.rowmask");
  }
  for (int c = 0; c < CG_TILE; c++) {
    LLVMValueRef off = LLVMBuildAdd(b, base, LLVMBuildMul(b, cg_i64(m, c), scol, ""), "");
    LLVMValueRef p = LLVMBuildGEP2(b, et, L->base[bi], &off, 1, "");
    if (rows) {
      LLVMValueRef on = LLVMBuildICmp(b, LLVMIntSLT, cg_i64(m, c), tc, "");
      LLVMValueRef mask = LLVMBuildSelect(b, on, rows, LLVMConstNull(LLVMTypeOf(rows)), "");
      LLVMTypeRef tys[2] = {vt, LLVMTypeOf(p)};
      LLVMValueRef args[4] = {p, LLVMConstInt(i32, align, 0), mask, LLVMConstNull(vt)};
      v[c] = cg_intrinsic(m, "llvm.masked.load", tys, 2, args, 4);
      continue;
    }
    LLVMValueRef ld = LLVMBuildLoad2(b, vt, p, "tcol");
    LLVMSetAlignment(ld, align);
    v[c] = ld;
  }
  for (int h = CG_TILE / 2; h >= 1; h /= 2) {
    LLVMValueRef lo_mask[CG_TILE], hi_mask[CG_TILE];
    for (int l = 0; l < CG_TILE; l++) { /* lanes 0..T-1 of the first operand, T..2T-1 of the second */
      lo_mask[l] = LLVMConstInt(i32, (unsigned)((l & h) ? CG_TILE + l - h : l), 0);
      hi_mask[l] = LLVMConstInt(i32, (unsigned)((l & h) ? CG_TILE + l : l + h), 0);
    }
    LLVMValueRef mlo = LLVMConstVector(lo_mask, CG_TILE), mhi = LLVMConstVector(hi_mask, CG_TILE);
    for (int i = 0; i < CG_TILE; i++) {
      if (i & h) continue;
      LLVMValueRef a = v[i], c = v[i + h];
      v[i] = LLVMBuildShuffleVector(b, a, c, mlo, "");
      v[i + h] = LLVMBuildShuffleVector(b, a, c, mhi, "");
    }
  }
  for (int r = 0; r < CG_TILE; r++) {
    LLVMValueRef off = cg_i64(m, (int64_t)r * CG_TILE);
    LLVMValueRef st = LLVMBuildStore(b, v[r], LLVMBuildGEP2(b, et, scratch, &off, 1, ""));
    LLVMSetAlignment(st, (unsigned)sz);
  }
}

/* The rows [0, tr) x columns [c0, c0 + tc) of a tile; base: each buffer's offset at (row 0, column 0
 * of the plane); with scratch, buffers with scratch[bi] set are read from their transposed copies in
 * scratch[bi] (stage_tile; edge: the tile may be partial, tr or tc < CG_TILE, and is staged with masked
 * loads), contiguous along the tile's rows. */
static void tile_points(Lower *L, LLVMValueRef q, LLVMValueRef tr, LLVMValueRef c0, LLVMValueRef tc,
                        const LLVMValueRef *base, const LLVMValueRef *scratch, bool edge, BodyFn body, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nb = k->nbuf, last = k->ndim - 1, pl = last - 1;
  LLVMValueRef *outer = L->off;
  LLVMValueRef *inner = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  LLVMValueRef rowo[64], saved[64];
  if (scratch)
    for (int bi = 0; bi < nb; bi++)
      if (scratch[bi]) stage_tile(L, bi, LLVMBuildAdd(b, base[bi], LLVMBuildMul(b, c0, L->stride[bi * k->ndim + last], ""), ""),
                                  L->stride[bi * k->ndim + last], scratch[bi], edge ? tr : NULL, edge ? tc : NULL);
  Loop rt = loop_begin(L, tr, "tile.row");
  for (int bi = 0; bi < nb; bi++)
    rowo[bi] = scratch && scratch[bi] ? LLVMBuildMul(b, rt.v, cg_i64(m, CG_TILE), "")
                                      : LLVMBuildAdd(b, base[bi], LLVMBuildMul(b, rt.v, L->stride[bi * k->ndim + pl], ""), "");
  LLVMValueRef lin0 = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildAdd(b, q, rt.v, ""), L->shape[last], ""), c0, "");
  Loop jt = loop_begin(L, tc, "tile.j");
  LLVMValueRef cur = LLVMBuildAdd(b, c0, jt.v, "");
  for (int bi = 0; bi < nb; bi++) {
    saved[bi] = L->base[bi];
    if (scratch && scratch[bi]) {
      inner[bi] = LLVMBuildAdd(b, rowo[bi], jt.v, "");
      L->base[bi] = scratch[bi];
    } else {
      inner[bi] = LLVMBuildAdd(b, rowo[bi], LLVMBuildMul(b, cur, L->stride[bi * k->ndim + last], ""), "");
    }
  }
  L->off = inner;
  L->depth++;
  L->lin = LLVMBuildAdd(b, lin0, jt.v, "");
  body(L, arg);
  L->depth--;
  L->off = outer;
  for (int bi = 0; bi < nb; bi++) L->base[bi] = saved[bi];
  LLVMValueRef back = loop_end(L, &jt);
  if (L->force_vf > 1) cg_host_force_width(L, back);
  loop_end(L, &rt);
}

/* Rows per panel: the tiled walk visits a panel's tiles a column of tiles at a time (all tile rows of
 * the panel for tile column 0, then column 1, ...), so the transposed operand is read in runs of
 * `panel` contiguous elements along each of a tile's CG_TILE source rows (whole lines, in order, which
 * the hardware prefetchers follow) instead of one line per source row per tile. The other buffers
 * (contiguous along the last dim, the output included: `streams`) then touch a line or two per panel
 * row per tile column and use the rest of those lines at the next tile columns. Rows of 4 KiB or more
 * put each panel row of each stream on its own page: the panel is as tall as keeps a tile column's
 * pages, CG_TILE_PANEL_PAGES, in the L2 TLB. Zen 4 core, one thread, 2048 x 2048 x.T + y: float32
 * panels of 16 rows 5.1 ms, 64 3.4, 128-512 2.8-3.0, 1024 10 ms (2 x 1024 pages 8 KiB apart, half of
 * the TLB's sets); float64 64 rows 11.7, 128 10.5, 256 9.3 (longer runs beat the 64 KiB of lines
 * against a 32 KiB L1); a contiguous x + y 1.9 (float32), 4.8 (float64). LOOM_HOST_TILE_PANEL: 1
 * (default) = this rule, 0 = one tile row per panel (the walk before panels), N >= CG_TILE = N rows
 * (rounded down to whole tiles). */
#define CG_TILE_PANEL_PAGES 512

static int panel_rows(const KernelIr *k) {
  static int knob = -1;
  int set = cg_env_int_once(&knob, "LOOM_HOST_TILE_PANEL", 1);
  if (set != 1) return set < CG_TILE ? CG_TILE : set / CG_TILE * CG_TILE;
  int last = k->ndim - 1, streams = 0;
  for (int b = 0; b < k->nbuf; b++)
    if (k->bufs[b].layout[last] == KL_ONE) streams++;
  int rows = CG_TILE_PANEL_PAGES / (streams > 0 ? streams : 1) / CG_TILE * CG_TILE;
  return rows < CG_TILE ? CG_TILE : rows;
}

/* Full rows [q0, q1) (rows: linear indices over dims [0, last)) in panels of tiles. */
static void tiled_rows(Lower *L, LLVMValueRef q0, LLVMValueRef q1, BodyFn body, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nb = k->nbuf, last = k->ndim - 1, pl = last - 1;
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef ncol = L->shape[last], nrow = L->shape[pl];
  LLVMValueRef *outer = L->off;
  LLVMValueRef base[64], tbase[64], scratch[64], edge_scratch[64];
  if (nb > 64) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: %d buffers in a tiled walk (at most 64)", nb);
    return;
  }
  bool any_staged = false, any_edge = false;
  static int edge_knob = -1;
  bool edges = cg_env_int_once(&edge_knob, "LOOM_HOST_TILE_EDGE", 1) != 0;
  for (int bi = 0; bi < nb; bi++) {
    scratch[bi] = edge_scratch[bi] = NULL;
    if (!staged(k, bi)) continue;
    size_t sz = loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    LLVMTypeRef at = LLVMArrayType(LLVMIntTypeInContext(m->c, (unsigned)(8 * sz)), CG_TILE * CG_TILE);
    scratch[bi] = cg_entry_alloca(L, at, "tile.stage");
    LLVMSetAlignment(scratch[bi], 64);
    any_staged = true;
    /* edge tiles staged too where masked loads of this width are instructions (AVX2 masks 4- and 8-byte
     * lanes only; narrower ones become a branch per lane: those edges read in place) */
    if (edges && (sz >= 4 || L->host_vec_bytes == 64)) { /* its own copy: the full tiles' stays in registers */
      edge_scratch[bi] = cg_entry_alloca(L, at, "tile.edge");
      LLVMSetAlignment(edge_scratch[bi], 64);
      any_edge = true;
    }
  }
  int panel = panel_rows(k);
  LLVMValueRef qv = cg_entry_alloca(L, L->i64, "tile.q");
  LLVMBuildStore(b, q0, qv);
  LLVMBasicBlockRef head = cg_new_bb(L, "tile.rows"), done = cg_new_bb(L, "tile.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, q0, q1, ""), head, done);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef q = LLVMBuildLoad2(b, L->i64, qv, "q");
  /* row q's index along each dim before the last, once per panel */
  LLVMValueRef idx[LOOM_MAX_RANK], rem = q;
  for (int d = pl; d >= 0; d--) {
    if (d > 0) {
      idx[d] = LLVMBuildURem(b, rem, L->shape[d], "");
      rem = LLVMBuildUDiv(b, rem, L->shape[d], "");
    } else {
      idx[d] = rem;
    }
  }
  /* rows of this panel: at most `panel`, within q's plane (dim pl) and the range */
  LLVMValueRef ph = smin(b, cg_i64(m, panel), LLVMBuildSub(b, nrow, idx[pl], ""));
  ph = smin(b, ph, LLVMBuildSub(b, q1, q, ""));
  for (int bi = 0; bi < nb; bi++) {
    LLVMValueRef o = outer[bi];
    for (int d = 0; d <= pl; d++) o = LLVMBuildAdd(b, o, LLVMBuildMul(b, idx[d], L->stride[bi * k->ndim + d], ""), "");
    base[bi] = o;
  }
  LLVMValueRef ntc = LLVMBuildUDiv(b, LLVMBuildAdd(b, ncol, cg_i64(m, CG_TILE - 1), ""), cg_i64(m, CG_TILE), "");
  LLVMValueRef ntr = LLVMBuildUDiv(b, LLVMBuildAdd(b, ph, cg_i64(m, CG_TILE - 1), ""), cg_i64(m, CG_TILE), "");
  Loop ct = loop_begin(L, ntc, "tile.col");
  LLVMValueRef c0 = LLVMBuildMul(b, ct.v, cg_i64(m, CG_TILE), "c0");
  LLVMValueRef tc = smin(b, cg_i64(m, CG_TILE), LLVMBuildSub(b, ncol, c0, ""));
  Loop rt = loop_begin(L, ntr, "tile.down"); /* the panel's tiles of this column, top to bottom */
  LLVMValueRef r0 = LLVMBuildMul(b, rt.v, cg_i64(m, CG_TILE), "r0");
  LLVMValueRef tr = smin(b, cg_i64(m, CG_TILE), LLVMBuildSub(b, ph, r0, ""));
  LLVMValueRef qt = LLVMBuildAdd(b, q, r0, "");
  for (int bi = 0; bi < nb; bi++) tbase[bi] = LLVMBuildAdd(b, base[bi], LLVMBuildMul(b, r0, L->stride[bi * k->ndim + pl], ""), "");
  if (any_staged) { /* full tiles read the transposed buffers from their staged copies */
    LLVMValueRef full = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, tr, cg_i64(m, CG_TILE), ""),
                                     LLVMBuildICmp(b, LLVMIntEQ, tc, cg_i64(m, CG_TILE), ""), "");
    LLVMBasicBlockRef fb = cg_new_bb(L, "tile.full"), pb = cg_new_bb(L, "tile.partial"), jb = cg_new_bb(L, "tile.next");
    LLVMBuildCondBr(b, full, fb, pb);
    LLVMPositionBuilderAtEnd(b, fb);
    tile_points(L, qt, cg_i64(m, CG_TILE), c0, cg_i64(m, CG_TILE), tbase, scratch, false, body, arg);
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, pb);
    tile_points(L, qt, tr, c0, tc, tbase, any_edge ? edge_scratch : NULL, true, body, arg);
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, jb);
  } else {
    tile_points(L, qt, tr, c0, tc, tbase, NULL, false, body, arg);
  }
  loop_end(L, &rt);
  loop_end(L, &ct);
  LLVMValueRef qn = LLVMBuildAdd(b, q, ph, "");
  LLVMBuildStore(b, qn, qv);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, qn, q1, ""), head, done);
  LLVMPositionBuilderAtEnd(b, done);
}

void cg_host_walk_tiled(Lower *L, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMValueRef ncol = L->shape[k->ndim - 1];
  LLVMValueRef zero = cg_i64(m, 0), one = cg_i64(m, 1);
  /* full rows [q0, q1): q0 = ceil(lo / ncol), q1 = floor(hi / ncol) (ncol > 0 when lo < hi) */
  LLVMBasicBlockRef go = cg_new_bb(L, "tile.go"), out = cg_new_bb(L, "tile.out");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), go, out);
  LLVMPositionBuilderAtEnd(b, go);
  LLVMValueRef q0 = LLVMBuildUDiv(b, LLVMBuildSub(b, LLVMBuildAdd(b, lo, ncol, ""), one, ""), ncol, "q0");
  LLVMValueRef q1 = LLVMBuildUDiv(b, hi, ncol, "q1");
  LLVMValueRef full = LLVMBuildICmp(b, LLVMIntSLT, q0, q1, "");
  /* the partial rows: [lo, min(hi, q0 * ncol)) and [q1 * ncol, hi) when there are full rows between,
   * else all of [lo, hi) and nothing: two segments of one plain walk */
  LLVMValueRef e0 = smin(b, hi, LLVMBuildMul(b, q0, ncol, ""));
  LLVMValueRef s1 = LLVMBuildSelect(b, full, LLVMBuildMul(b, q1, ncol, ""), hi, "");
  s1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, s1, e0, ""), e0, s1, "");
  LLVMValueRef sv = cg_entry_alloca(L, L->i64, "tile.seg");
  LLVMBuildStore(b, zero, sv);
  LLVMBasicBlockRef seg = cg_new_bb(L, "tile.part"), segdone = cg_new_bb(L, "tile.partdone");
  LLVMBuildBr(b, seg);
  LLVMPositionBuilderAtEnd(b, seg);
  LLVMValueRef si = LLVMBuildLoad2(b, L->i64, sv, "");
  LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, si, zero, "");
  LLVMValueRef a = LLVMBuildSelect(b, first, lo, s1, ""), z = LLVMBuildSelect(b, first, e0, hi, "");
  cg_host_walk(L, 0, k->ndim, a, z, body, arg);
  LLVMValueRef si1 = LLVMBuildAdd(b, si, one, "");
  LLVMBuildStore(b, si1, sv);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, si1, cg_i64(m, 2), ""), seg, segdone);
  LLVMPositionBuilderAtEnd(b, segdone);
  tiled_rows(L, q0, q1, body, arg);
  LLVMBuildBr(b, out);
  LLVMPositionBuilderAtEnd(b, out);
}
