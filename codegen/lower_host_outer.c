/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_outer.c: the outer-axis strategy of host reductions, for reductions whose reduced axis is
 * outer in memory (column sums, BatchNorm statistics), and its column split along R.
 *
 * run(lo, hi): the per-o form would walk R with a run-time stride, one element per cache line. Instead
 * run() takes a block of up to cg_outer_block_cap consecutive o along the last O dim (ending early at hi or
 * at the end of that dim's row) and keeps one accumulator per o in stack arrays; each REDUCE phase
 * walks R once with an inner loop over the block (contiguous loads along o, which the loop vectorizer
 * widens), then each FINAL phase runs per o of the block. Every o folds its values in R order, so the
 * result of run() does not depend on the block split. A MAP phase walks R again for the block
 * (lower_host_outer_map.c).
 *
 * Column split (colpart / colfinish, codegen.h): run() over O ranges gives each task a few columns
 * down ALL rows, which for narrow arrays (16 or 64 columns) means parts of cache lines, a stride of a
 * whole row per step and two tasks sharing lines. The split cuts R instead: colpart is run()'s block
 * loop for ONE REDUCE phase over a range of rows (a slab, streamed row after row, every column of the
 * block at once) ending in stores of the block's accumulators to the parts array (part-major: part *
 * no + o); earlier phases' results (a variance's mean) come from the finished array. colfinish
 * combines an o's parts in order (no reassociation: the same nparts gives the same bits), folding part
 * after part across a block of columns (vector loops over o, vector_fold), and runs the FINAL phases
 * that follow. REDUCE phases fold with register accumulators where lower_host_outer_regs.c applies.
 * A MAP phase after them (x / x.sum(0), standardized columns) has a colpart of its own that maps its slab
 * with the finished REDUCE results (every task streams whole rows again: blocks of up to col_map_cap
 * columns; large outputs by non-temporal stores, lower_host_outer_map.c) and no colfinish work.
 * Loads along a small run-time stride of o take walks of their own (lower_host_outer_loads.c).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* Emits `for (j = lo; j < n; j++) body` with L->off advanced by j along the last O dim and L->bj = j. */
void cg_outer_block_loop(Lower *L, LLVMValueRef lo, LLVMValueRef n, BodyFn body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  const KernelIr *k = L->k;
  int nb = k->nbuf, lo_dim = k->nkeep - 1;
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef *outer = L->off;
  LLVMValueRef *inner = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef body_bb = cg_new_bb(L, "blk.body"), exit_bb = cg_new_bb(L, "blk.exit");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, n, ""), body_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, body_bb);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "bj");
  for (int bi = 0; bi < nb; bi++)
    inner[bi] = LLVMBuildAdd(b, outer[bi], LLVMBuildMul(b, j, L->stride[bi * k->ndim + lo_dim], ""), "");
  CgRowSave rows;
  cg_outer_col_rows(L, outer, inner, j, &rows); /* small strides along o: wide loads (lower_host_outer_loads.c) */
  L->off = inner;
  L->depth++;
  L->bj = j;
  body(L, arg);
  L->depth--;
  L->off = outer;
  cg_outer_col_rows_end(L, &rows);
  LLVMValueRef j1 = LLVMBuildAdd(b, j, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
  LLVMValueRef back = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, n, ""), body_bb, exit_bb);
  /* two vector bodies per iteration: the blocks of narrow rows (16 float32 columns) were shorter than
   * LLVM's interleaved body (4 x 8 lanes on AVX2), which left them to the scalar remainder loop; 2 keeps
   * some interleave for wide blocks (paired CPU time: 1 was ~15 % slower than 2 on 256 columns) */
  cg_host_loop_hints(L, back, 0, 2);
  LLVMBasicBlockRef from[2] = {pre, end};
  LLVMValueRef vals[2] = {lo, j1};
  LLVMAddIncoming(j, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, exit_bb);
}

static void block_loop(Lower *L, LLVMValueRef n, BodyFn body, void *arg) { cg_outer_block_loop(L, cg_i64(&L->m, 0), n, body, arg); }

LLVMValueRef cg_outer_slot(Lower *L, LLVMTypeRef et, LLVMValueRef arr) {
  return LLVMBuildGEP2(L->m.b, et, arr, &L->bj, 1, "");
}

/* Address of accumulator `item` of an accumulator array (acc_size bytes each). */
static LLVMValueRef acc_ptr(Lower *L, LLVMValueRef base, LLVMValueRef item) {
  LLVMValueRef byte = LLVMBuildMul(L->m.b, item, cg_i64(&L->m, L->col_acc_size), "");
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), base, &byte, 1, "");
}

/* Loads the accumulator at p (codegen.h's layout: the value, then at cg_acc_index_offset an argmin/argmax
 * index). */
static void load_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef *v, LLVMValueRef *vi) {
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMBuilderRef b = L->m.b;
  *v = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(&L->m, vt), p, ""));
  LLVMValueRef eight = cg_i64(&L->m, cg_acc_index_offset(vt));
  *vi = is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), p, &eight, 1, ""), "")
                              : cg_i64(&L->m, 0);
}

static void store_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef v, LLVMValueRef vi) {
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMBuilderRef b = L->m.b;
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, v), p);
  LLVMValueRef eight = cg_i64(&L->m, cg_acc_index_offset(vt));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(b, vi, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), p, &eight, 1, ""));
}

/* The finished accumulator of phase q at O point o (column split). */
static LLVMValueRef fin_ptr(Lower *L, int q, LLVMValueRef o) {
  LLVMValueRef item = LLVMBuildAdd(L->m.b, LLVMBuildMul(L->m.b, cg_i64(&L->m, q), L->colno, ""), o, "");
  return acc_ptr(L, L->colfin, item);
}

/* Sets L->acc / L->accidx of REDUCE phases [0, np) to their values at block point L->bj: from the
 * block arrays, or in a column split (L->colfin) from the finished accumulators. */
void cg_outer_load_accs(Lower *L, int np) {
  const KernelIr *k = L->k;
  for (int q = 0; q < k->nphase; q++) {
    L->acc[q] = L->accidx[q] = NULL;
    if (q >= np || k->phases[q].kind != KP_REDUCE) continue;
    if (L->colfin) {
      load_acc(L, &k->phases[q], fin_ptr(L, q, LLVMBuildAdd(L->m.b, L->bo, L->bj, "")), &L->acc[q], &L->accidx[q]);
      continue;
    }
    LoomDType vt = cg_red_value_dtype(k, &k->phases[q]);
    LLVMTypeRef mt = cg_mem_type(&L->m, vt);
    L->acc[q] = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(L->m.b, mt, cg_outer_slot(L, mt, L->accarr[q]), ""));
    if (is_arg(k->phases[q].reduce_op))
      L->accidx[q] = LLVMBuildLoad2(L->m.b, L->i64, cg_outer_slot(L, L->i64, L->idxarr[q]), "");
  }
}

static void body_block_init(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  const KPhase *ph = &L->k->phases[p];
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  LLVMValueRef id = cg_to_mem(&L->m, vt, vt, cg_red_identity(L, ph->reduce_op, vt));
  LLVMBuildStore(L->m.b, id, cg_outer_slot(L, mt, L->accarr[p]));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(L->m.b, cg_i64(&L->m, 0), cg_outer_slot(L, L->i64, L->idxarr[p]));
}

void cg_outer_body_reduce(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  cg_clear_cache(L);
  cg_outer_load_accs(L, p);
  cg_reduce_point(L, ph);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef ap = cg_outer_slot(L, mt, L->accarr[p]);
  LLVMValueRef cur = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, ap, ""));
  LLVMValueRef nv;
  if (is_arg(ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
    nv = LLVMBuildSelect(b, take, v, cur, "");
    LLVMValueRef ip = cg_outer_slot(L, L->i64, L->idxarr[p]);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, ip, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, L->lin, ci, ""), ip);
  } else {
    nv = cg_red_combine(L, ph->reduce_op, vt, cur, v);
  }
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, nv), ap);
  cg_clear_cache(L);
}

static void body_block_final(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)L->k->nbuf);
  cg_clear_cache(L);
  cg_outer_load_accs(L, p);
  cg_run_final_phase(L, &L->k->phases[p]);
}

/* ---- compensated float sums: blocks of CG_SUM_OUTER_BLOCK R points (lower_host_sum.c) ---------------- */
static int sum_slot(LoomDType vt) {
  return (vt == LOOM_FLOAT64) + 2 * dtype_is_complex(vt) + (vt == LOOM_COMPLEX128);
}

static void body_sum_init(Lower *L, void *arg) {
  const KPhase *ph = arg;
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMTypeRef t = cg_reg_type(&L->m, vt);
  LLVMValueRef zero = cg_red_identity(L, ph->reduce_op, vt);
  LLVMBuildStore(L->m.b, zero, cg_outer_slot(L, t, L->sumarr[sum_slot(vt)]));
  LLVMBuildStore(L->m.b, zero, cg_outer_slot(L, t, L->comparr[sum_slot(vt)]));
}

/* The block's accumulator at L->bj into its compensated pair, then reset (last: the pair's sum
 * replaces it, for the FINAL phases and the column split's stores). */
static void sum_fold(Lower *L, const KPhase *ph, bool last) {
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMTypeRef t = cg_reg_type(&L->m, vt), mt = cg_mem_type(&L->m, vt);
  LLVMBuilderRef b = L->m.b;
  int p = (int)(ph - L->k->phases);
  LLVMValueRef ap = cg_outer_slot(L, mt, L->accarr[p]), sp = cg_outer_slot(L, t, L->sumarr[sum_slot(vt)]), cp = cg_outer_slot(L, t, L->comparr[sum_slot(vt)]);
  LLVMValueRef s = LLVMBuildLoad2(b, t, sp, ""), c = LLVMBuildLoad2(b, t, cp, "");
  cg_sum_add_values(L, vt, &s, &c, cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, ap, "")));
  if (last) {
    LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, cg_sum_settle(L, vt, s, c)), ap);
    return;
  }
  LLVMBuildStore(b, s, sp);
  LLVMBuildStore(b, c, cp);
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, cg_red_identity(L, ph->reduce_op, vt)), ap);
}
static void body_sum_fold(Lower *L, void *arg) { sum_fold(L, arg, false); }
static void body_sum_fold_last(Lower *L, void *arg) { sum_fold(L, arg, true); }
static void body_sum_chunk(Lower *L, const void *arg, LLVMValueRef c, LLVMValueRef c1) {
  cg_outer_walk_columns(L, arg, c, c1);
  block_loop(L, L->bn, body_sum_fold, (void *)arg);
}

/* The walk of REDUCE phase ph over R points [rlo, rhi) for every o of the block (accumulators
 * initialized): compensated float sums walk chunks of CG_SUM_OUTER_BLOCK R points, each an unblocked
 * walk (the same row loop as a plain fold) followed by the fold of the block into the pairs; other
 * reductions walk [rlo, rhi) in one fold. */
static void block_reduce_walk(Lower *L, const KPhase *ph, LLVMValueRef rlo, LLVMValueRef rhi) {
  if (!cg_sum_compensated(L->k, ph)) {
    cg_outer_walk_columns(L, ph, rlo, rhi);
    return;
  }
  block_loop(L, L->bn, body_sum_init, (void *)ph);
  cg_outer_for_chunks(L, rlo, rhi, CG_SUM_OUTER_BLOCK, body_sum_chunk, ph);
  block_loop(L, L->bn, body_sum_fold_last, (void *)ph);
}

/* Block arrays (stack) of every REDUCE phase, of cap O points. */
static void alloc_block_arrays(Lower *L, int cap) {
  const KernelIr *k = L->k;
  memset(L->sumarr, 0, sizeof L->sumarr); /* those of an earlier entry live in another function */
  memset(L->comparr, 0, sizeof L->comparr);
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind != KP_REDUCE) continue;
    LoomDType vt = cg_red_value_dtype(k, &k->phases[p]);
    L->accarr[p] = cg_entry_alloca(L, LLVMArrayType(cg_mem_type(&L->m, vt), (unsigned)cap), "accs");
    if (is_arg(k->phases[p].reduce_op))
      L->idxarr[p] = cg_entry_alloca(L, LLVMArrayType(L->i64, (unsigned)cap), "accis");
    int s = sum_slot(vt);
    if (cg_sum_compensated(k, &k->phases[p]) && !L->sumarr[s]) {
      LLVMTypeRef at = LLVMArrayType(cg_reg_type(&L->m, vt), (unsigned)cap);
      L->sumarr[s] = cg_entry_alloca(L, at, "ksums");
      L->comparr[s] = cg_entry_alloca(L, at, "kcomps");
    }
  }
}

typedef void (*BlockFn)(Lower *L, LLVMValueRef n, void *arg);

/* for (o = lo; o < hi; o += n) { L->off at o; n = the block at o; fn(n) }: blocks of consecutive O
 * points along the last O dim, at most cap, balanced (no short tail block). */
static void for_blocks(Lower *L, LLVMValueRef lo, LLVMValueRef hi, int cap, BlockFn fn, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int last = k->nkeep - 1;
  LLVMValueRef opos = cg_entry_alloca(L, L->i64, "o");
  LLVMBasicBlockRef head = cg_new_bb(L, "outer.block"), exit_bb = cg_new_bb(L, "outer.exit");
  LLVMBuildStore(b, lo, opos);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), head, exit_bb);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef o = LLVMBuildLoad2(b, L->i64, opos, "");
  cg_host_set_o_offsets(L, o);
  LLVMValueRef col = last > 0 ? LLVMBuildURem(b, o, L->shape[last], "") : o;
  LLVMValueRef n = LLVMBuildSub(b, L->shape[last], col, "");
  LLVMValueRef left = LLVMBuildSub(b, hi, o, "");
  n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, n, ""), left, n, "");
  LLVMValueRef bm1 = cg_i64(m, cap - 1);
  LLVMValueRef nblk = LLVMBuildUDiv(b, LLVMBuildAdd(b, n, bm1, ""), cg_i64(m, cap), "");
  nblk = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, nblk, cg_i64(m, 1), ""), cg_i64(m, 1), nblk, "");
  n = LLVMBuildSDiv(b, LLVMBuildSub(b, LLVMBuildAdd(b, n, nblk, ""), cg_i64(m, 1), ""), nblk, "n");
  L->bn = n;
  L->bo = o;
  LLVMBasicBlockRef go = cg_new_bb(L, "outer.go");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, n, cg_i64(m, 0), ""), go, exit_bb); /* never loop forever */
  LLVMPositionBuilderAtEnd(b, go);
  fn(L, n, arg);
  LLVMValueRef o1 = LLVMBuildAdd(b, o, n, "");
  LLVMBuildStore(b, o1, opos);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o1, hi, ""), head, exit_bb);
  LLVMPositionBuilderAtEnd(b, exit_bb);
}

/* run(): every phase of the block. */
static void block_run(Lower *L, LLVMValueRef n, void *arg) {
  const KernelIr *k = L->k;
  for (int p = 0; p < k->nphase; p++) {
    void *ph = (void *)&k->phases[p];
    if (k->phases[p].kind == KP_REDUCE) {
      block_loop(L, n, body_block_init, ph);
      block_reduce_walk(L, &k->phases[p], cg_i64(&L->m, 0), L->rsize);
    } else if (k->phases[p].kind == KP_MAP) {
      cg_outer_map_phase(L, p, n, CG_OUTER_BLOCK, cg_i64(&L->m, 0), L->rsize);
    } else {
      block_loop(L, n, body_block_final, ph);
    }
  }
}

void cg_host_run_outer(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  alloc_block_arrays(L, cg_outer_block_cap(L->k));
  for_blocks(L, lo, hi, cg_outer_block_cap(L->k), block_run, NULL);
}

/* ---- column split ------------------------------------------------------------------------------------ */
typedef struct ColArgs {
  LLVMValueRef phase, olo, ohi, rlo, rhi, part, nparts, parts, fin, no;
} ColArgs;

static ColArgs read_col_args(Lower *L, LLVMValueRef args) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef w[10];
  for (int i = 0; i < 10; i++) {
    LLVMValueRef ix = cg_i64(&L->m, i);
    LLVMValueRef p = LLVMBuildGEP2(b, L->i64, args, &ix, 1, "");
    w[i] = LLVMBuildLoad2(b, i == 7 || i == 8 ? L->ptr : L->i64, p, "");
  }
  return (ColArgs){w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]};
}

typedef void (*ColPhaseFn)(Lower *, int, const ColArgs *);

/* Emits `if (a->phase == p) body(p)` for every REDUCE phase p, and `map(p)` for every MAP phase when map
 * is given (colpart: a MAP phase over the slab; colfinish has nothing to do for one). */
static void for_split_phase(Lower *L, LLVMValueRef phase, ColPhaseFn body, ColPhaseFn map, const ColArgs *a) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  for (int p = 0; p < k->nphase; p++) {
    bool red = k->phases[p].kind == KP_REDUCE;
    if (!red && !(map && k->phases[p].kind == KP_MAP)) continue;
    LLVMBasicBlockRef yes = cg_new_bb(L, "col.phase"), next = cg_new_bb(L, "col.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, phase, cg_i64(&L->m, p), ""), yes, next);
    LLVMPositionBuilderAtEnd(b, yes);
    (red ? body : map)(L, p, a);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
}

typedef struct ColBlock {
  int p;
  const ColArgs *a;
} ColBlock;

/* Index of O point o's accumulator of part `part` in the parts array: part-major in the column split (the
 * parts of a block of columns are contiguous for colfinish's vector fold), o-major in the R split of
 * inner reductions (one o's parts contiguous: few O points, many parts). */
static LLVMValueRef part_item(Lower *L, const ColArgs *a, LLVMValueRef o, LLVMValueRef part) {
  LLVMBuilderRef b = L->m.b;
  if (L->outer) return LLVMBuildAdd(b, LLVMBuildMul(b, part, a->no, ""), o, "");
  return LLVMBuildAdd(b, LLVMBuildMul(b, o, a->nparts, ""), part, "");
}

/* The block's accumulator of phase p at L->bj -> the parts array. */
static void body_col_store(Lower *L, void *arg) {
  const ColBlock *cb = arg;
  const KPhase *ph = &L->k->phases[cb->p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  LLVMValueRef v = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, cg_outer_slot(L, mt, L->accarr[cb->p]), ""));
  LLVMValueRef vi = is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, cg_outer_slot(L, L->i64, L->idxarr[cb->p]), "") : NULL;
  LLVMValueRef o = LLVMBuildAdd(b, L->bo, L->bj, "");
  store_acc(L, ph, acc_ptr(L, cb->a->parts, part_item(L, cb->a, o, cb->a->part)), v, vi);
}

static void block_col_part(Lower *L, LLVMValueRef n, void *arg) {
  const ColBlock *cb = arg;
  const KernelIr *k = L->k;
  void *ph = (void *)&k->phases[cb->p];
  block_loop(L, n, body_block_init, ph);
  block_reduce_walk(L, ph, cb->a->rlo, cb->a->rhi);
  block_loop(L, n, body_col_store, (void *)cb);
}

static void col_part_phase(Lower *L, int p, const ColArgs *a) {
  ColBlock cb = {p, a};
  for_blocks(L, a->olo, a->ohi, cg_outer_block_cap(L->k), block_col_part, &cb);
}

/* The block's finished REDUCE results (fin, acc_size bytes apart) into its block arrays, so that the
 * map's points load them contiguously (from fin, a gather a vector). */
static void body_fin_to_block(Lower *L, void *arg) {
  const KernelIr *k = L->k;
  int p = *(const int *)arg;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = LLVMBuildAdd(b, L->bo, L->bj, "");
  for (int q = 0; q < p; q++) {
    const KPhase *ph = &k->phases[q];
    if (ph->kind != KP_REDUCE) continue;
    LoomDType vt = cg_red_value_dtype(k, ph);
    LLVMTypeRef mt = cg_mem_type(&L->m, vt);
    LLVMValueRef v, vi;
    load_acc(L, ph, fin_ptr(L, q, o), &v, &vi);
    LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, v), cg_outer_slot(L, mt, L->accarr[q]));
    if (is_arg(ph->reduce_op)) LLVMBuildStore(b, vi, cg_outer_slot(L, L->i64, L->idxarr[q]));
  }
}

enum { CG_COL_NT_BYTES = 4096 }; /* streamed MAP outputs: bytes staged per copy (lower_host_stream.c's chunks) */

/* O points per block of colpart's MAP phase (LOOM_HOST_COL_MAP_BLOCK, default CG_OUTER_MAP_BLOCK): rows of
 * up to that many columns are mapped whole, one forward stream through the slab; blocks of CG_OUTER_BLOCK
 * cut 8009 x 3061 float32 rows into 4 KiB segments 12 KiB apart, each a new stream for the prefetchers
 * (x / x.sum(0), one thread: 20 ms against 15 for the same bytes as 24027 x 1021 rows of one block). */
static int col_map_cap(const KernelIr *k) {
  static int knob = -1;
  int cap = cg_env_int_once(&knob, "LOOM_HOST_COL_MAP_BLOCK", CG_OUTER_MAP_BLOCK), floor = cg_outer_block_cap(k);
  return cap < floor ? floor : cap > CG_OUTER_MAP_BLOCK_MAX ? CG_OUTER_MAP_BLOCK_MAX : cap;
}

static void block_col_map(Lower *L, LLVMValueRef n, void *arg) {
  const ColBlock *cb = arg;
  int p = cb->p;
  block_loop(L, n, body_fin_to_block, &p);
  LLVMValueRef fin = L->colfin;
  L->colfin = NULL; /* cg_outer_load_accs: the block arrays */
  cg_outer_map_phase(L, p, n, col_map_cap(L->k), cb->a->rlo, cb->a->rhi);
  L->colfin = fin;
}

/* colpart of a MAP phase (x / x.sum(0), standardized columns): the slab's rows for each block of columns,
 * the REDUCE results from fin (through the block arrays), the outputs stored; no parts. Where run() walks
 * all of R for a block of columns once per phase (on O ranges: pieces of rows, a row apart), each task
 * here streams its slab's whole rows as the REDUCE phases' colpart does. */
static void col_map_phase(Lower *L, int p, const ColArgs *a) {
  ColBlock cb = {p, a};
  const KernelIr *k = L->k;
  int64_t elems = 0; /* bytes of one point of every streamed output */
  for (int bi = 0; L->col_streamed && bi < k->nbuf; bi++)
    if (L->col_streamed[bi]) elems += (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
  if (!elems) {
    for_blocks(L, a->olo, a->ohi, col_map_cap(k), block_col_map, &cb);
    return;
  }
  /* streamed MAP outputs (lower_host_outer_map.c): large launches, the row segments contiguous */
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef go = cg_host_stream_worth(L, L->col_streamed, L->shape, L->stride, L->base);
  for (int bi = 0; bi < k->nbuf; bi++)
    if (L->col_streamed[bi]) go = LLVMBuildAnd(b, go, LLVMBuildICmp(b, LLVMIntEQ, L->stride[bi * k->ndim + k->nkeep - 1], cg_i64(&L->m, 1), ""), "");
  /* pieces of a row staged and copied in turn: ~CG_COL_NT_BYTES of all outputs (a power of two of >= 64 points) */
  L->col_nt_piece = 64;
  while (L->col_nt_piece * 2 * elems <= CG_COL_NT_BYTES) L->col_nt_piece *= 2;
  LLVMTypeRef at = LLVMArrayType(LLVMInt8TypeInContext(L->m.c), (unsigned)(L->col_nt_piece * elems));
  LLVMValueRef scratch = cg_entry_alloca(L, at, "nt.rows");
  LLVMSetAlignment(scratch, 64);
  L->col_nt_go = go;
  L->col_nt_scratch = cg_host_opaque_ptr(L, scratch);
  for_blocks(L, a->olo, a->ohi, col_map_cap(k), block_col_map, &cb);
  L->col_nt_go = L->col_nt_scratch = NULL;
  cg_host_sfence_if(L, go); /* the streamed lines visible before the task is reported done */
}

/* A split entry (colpart / colfinish): its arguments, then body(p) for the REDUCE phase they name (map(p)
 * for a MAP phase, when given). */
static void col_entry(Lower *L, LLVMValueRef args, ColPhaseFn body, ColPhaseFn map) {
  ColArgs a = read_col_args(L, args);
  L->colfin = a.fin;
  L->colno = a.no;
  for_split_phase(L, a.phase, body, map, &a);
  L->colfin = NULL;
}

/* L->acc / L->accidx of the REDUCE phases before p at O point o, from the finished accumulators; the
 * others NULL. */
static void load_fin_accs(Lower *L, int p, LLVMValueRef o) {
  const KernelIr *k = L->k;
  for (int q = 0; q < k->nphase; q++) {
    L->acc[q] = L->accidx[q] = NULL;
    int i = cg_mom_index(&L->mom, q);
    if (q < p && i >= 0) { /* a folded phase: in phase 0's record (host_moments.c) */
      LLVMValueRef off = cg_i64(&L->m, cg_mom_fin_offset(k, i));
      LLVMValueRef at = LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), fin_ptr(L, 0, o), &off, 1, "");
      L->acc[q] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, (LoomDType)L->mom.t[i]), at, "");
      L->accidx[q] = cg_i64(&L->m, 0);
    } else if (q < p && k->phases[q].kind == KP_REDUCE) {
      load_acc(L, &k->phases[q], fin_ptr(L, q, o), &L->acc[q], &L->accidx[q]);
    }
  }
}

void cg_host_col_part(Lower *L, LLVMValueRef args) {
  int cap = cg_outer_block_cap(L->k), map = cg_outer_has_map(L->k) ? col_map_cap(L->k) : 0;
  alloc_block_arrays(L, map > cap ? map : cap);
  col_entry(L, args, col_part_phase, col_map_phase);
}

/* ---- R split of inner multi-phase reductions (the same entries and launch arguments) ----------------
 * A reduction over inner axes with several REDUCE phases (np.var: the mean, then the squared
 * deviations) and few O points runs per O point on one task otherwise (the single-phase R split,
 * partial/finish, takes one phase only). Here colpart folds phase p over R points [rlo, rhi) of each o
 * in [olo, ohi) with the per-o walk of run() (contiguous rows, vector loads), the earlier phases'
 * results from the finished array, and stores the part's accumulator; colfinish is the column split's
 * (the parts in order, then the FINAL phases). The launcher plans these kernels as an R split
 * (CG_COL_ROWS in col_phases). A phase folded into phase 0's walk (a variance's squared deviations,
 * host_moments.c) has no colpart: phase 0's records carry its moments, its value sits in phase 0's fin. */
static void row_part_phase(Lower *L, int p, const ColArgs *a) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef ov = cg_entry_alloca(L, L->i64, "ro");
  LLVMBasicBlockRef head = cg_new_bb(L, "rp.o"), body = cg_new_bb(L, "rp.o.body"), done = cg_new_bb(L, "rp.o.done");
  LLVMBuildStore(b, a->olo, ov);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef o = LLVMBuildLoad2(b, L->i64, ov, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o, a->ohi, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  cg_host_set_o_offsets(L, o);
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)k->nbuf);
  cg_clear_cache(L);
  load_fin_accs(L, p, o);
  LLVMValueRef rec = acc_ptr(L, a->parts, part_item(L, a, o, a->part));
  if (p == 0 && L->mom.n) { /* phase 0 with the folded phases' moments after its accumulator */
    cg_host_mom_phase0(L, a->rlo, a->rhi);
    cg_gpu_mom_store(L, rec);
  } else {
    cg_host_reduce_phase(L, p, a->rlo, a->rhi);
  }
  store_acc(L, &k->phases[p], rec, L->acc[p], L->accidx[p]);
  cg_clear_cache(L);
  LLVMBuildStore(b, LLVMBuildAdd(b, o, cg_i64(&L->m, 1), ""), ov);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
}

void cg_host_row_part(Lower *L, LLVMValueRef args) { col_entry(L, args, row_part_phase, NULL); }

bool cg_host_row_splittable(const KernelIr *k) {
  if (k->snippet || k->nkeep >= k->ndim || k->nphase < 2 || k->nphase > 31) return false;
  int nred = 0;
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind != KP_REDUCE && k->phases[p].kind != KP_FINAL) return false; /* MAP / SCAN: per point */
    nred += k->phases[p].kind == KP_REDUCE;
  }
  return nred >= 2;
}

/* `for (i = lo; i < hi; i++) body(i)`; hints: a vector loop of one body per iteration. */
static void count_loop(Lower *L, LLVMValueRef lo, LLVMValueRef hi, bool hints, void (*body)(Lower *, LLVMValueRef, void *), void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), loop = cg_new_bb(L, "cf.loop"), done = cg_new_bb(L, "cf.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), loop, done);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef i = LLVMBuildPhi(b, L->i64, "ci");
  body(L, i, arg);
  LLVMValueRef i1 = LLVMBuildAdd(b, i, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
  LLVMValueRef back = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i1, hi, ""), loop, done);
  if (hints) cg_host_loop_hints(L, back, 0, 1);
  LLVMValueRef vals[2] = {lo, i1};
  LLVMBasicBlockRef from[2] = {pre, end};
  LLVMAddIncoming(i, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, done);
}

/* The running combination of a phase's parts: value, compensation (float sums), index (arg-reductions). */
typedef struct PartFold {
  const KPhase *ph;
  LoomDType vt;
  bool comp;
  const ColArgs *a;
  LLVMValueRef v, c, i;       /* colfinish per o: allocas; the vector fold: stack arrays of CG_OUTER_BLOCK */
  LLVMValueRef o0, part;      /* the vector fold: the block's first o, the part being folded */
} PartFold;

/* Part `part` of O point o into the running combination at v, c, i (pointers): a later part of an
 * arg-reduction wins only when strictly better (the first part always); float sums by Neumaier's step;
 * others strictly in order. */
static void fold_part(Lower *L, const PartFold *f, LLVMValueRef o, LLVMValueRef part, LLVMValueRef v, LLVMValueRef c,
                      LLVMValueRef i) {
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef vty = cg_reg_type(m, f->vt);
  LLVMValueRef pv, pi;
  load_acc(L, f->ph, acc_ptr(L, f->a->parts, part_item(L, f->a, o, part)), &pv, &pi);
  LLVMValueRef cur = LLVMBuildLoad2(b, vty, v, "");
  if (is_arg(f->ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(m, (LoomReduceOp)f->ph->reduce_op, f->vt, cur, pv);
    take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, part, cg_i64(m, 0), ""), "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, pv, cur, ""), v);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, pi, LLVMBuildLoad2(b, L->i64, i, ""), ""), i);
  } else if (f->comp) {
    cg_sum_add(L, f->vt, v, c, pv);
  } else { /* strictly in order: a float sum or product without reassoc (cg_outer_combine) */
    LLVMBuildStore(b, cg_outer_combine(L, f->ph->reduce_op, f->vt, cur, pv), v);
  }
}

static LLVMValueRef fold_slot(Lower *L, LLVMTypeRef t, LLVMValueRef arr, LLVMValueRef j) {
  return LLVMBuildGEP2(L->m.b, t, arr, &j, 1, "");
}

static void body_vfold_init(Lower *L, LLVMValueRef j, void *arg) {
  const PartFold *f = arg;
  LLVMTypeRef vty = cg_reg_type(&L->m, f->vt);
  LLVMValueRef id = cg_red_identity(L, f->ph->reduce_op, f->vt);
  LLVMBuildStore(L->m.b, id, fold_slot(L, vty, f->v, j));
  if (f->comp) LLVMBuildStore(L->m.b, id, fold_slot(L, vty, f->c, j));
  LLVMBuildStore(L->m.b, cg_i64(&L->m, 0), fold_slot(L, L->i64, f->i, j));
}

static void body_vfold_part(Lower *L, LLVMValueRef j, void *arg) {
  const PartFold *f = arg;
  LLVMTypeRef vty = cg_reg_type(&L->m, f->vt);
  fold_part(L, f, LLVMBuildAdd(L->m.b, f->o0, j, ""), f->part, fold_slot(L, vty, f->v, j), f->comp ? fold_slot(L, vty, f->c, j) : NULL,
            fold_slot(L, L->i64, f->i, j));
}

static void body_vfold_parts(Lower *L, LLVMValueRef part, void *arg) {
  PartFold f = *(const PartFold *)arg;
  f.part = part;
  count_loop(L, cg_i64(&L->m, 0), LLVMBuildSub(L->m.b, f.a->ohi, f.o0, ""), true, body_vfold_part, &f);
}

static void body_vfold_store(Lower *L, LLVMValueRef j, void *arg) {
  const PartFold *f = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef vty = cg_reg_type(&L->m, f->vt);
  LLVMValueRef fv = LLVMBuildLoad2(b, vty, fold_slot(L, vty, f->v, j), "");
  if (f->comp) fv = cg_sum_settle(L, f->vt, fv, LLVMBuildLoad2(b, vty, fold_slot(L, vty, f->c, j), ""));
  store_acc(L, f->ph, fin_ptr(L, (int)(f->ph - L->k->phases), LLVMBuildAdd(b, f->o0, j, "")), fv,
            LLVMBuildLoad2(b, L->i64, fold_slot(L, L->i64, f->i, j), ""));
}

/* One block of up to CG_OUTER_BLOCK O points from o0: the parts folded part after part across the block
 * (a vector loop over o), then -> fin. */
static void body_vfold_block(Lower *L, LLVMValueRef o0, void *arg) {
  PartFold f = *(const PartFold *)arg;
  LLVMBuilderRef b = L->m.b;
  ColArgs a = *f.a;
  LLVMValueRef hi = LLVMBuildAdd(b, o0, cg_i64(&L->m, CG_OUTER_BLOCK), "");
  a.ohi = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, hi, f.a->ohi, ""), hi, f.a->ohi, "");
  f.a = &a;
  f.o0 = o0;
  LLVMValueRef n = LLVMBuildSub(b, a.ohi, o0, ""), zero = cg_i64(&L->m, 0);
  count_loop(L, zero, n, true, body_vfold_init, &f);
  count_loop(L, zero, a.nparts, false, body_vfold_parts, &f);
  count_loop(L, zero, n, true, body_vfold_store, &f);
}

static void body_vfold_blocks(Lower *L, LLVMValueRef ob, void *arg) {
  body_vfold_block(L, LLVMBuildAdd(L->m.b, ((const PartFold *)arg)->a->olo, LLVMBuildMul(L->m.b, ob, cg_i64(&L->m, CG_OUTER_BLOCK), ""), ""),
                   arg);
}

/* colfinish's fold of phase p for every o in [olo, ohi) into fin: the column split's parts across a block
 * of O points at a time (vector loops over o; each o's parts still in order), which the per-o loop
 * left to a scalar chain of compensated steps per part (~17 % of a 4096 x 1024 column sum's time);
 * LOOM_HOST_COL_FINISH_VEC=0 keeps the per-o loop (A/B). */
static bool vector_fold(Lower *L, int p, const ColArgs *a) {
  static int knob = -1;
  if (!L->outer || !cg_env_int_once(&knob, "LOOM_HOST_COL_FINISH_VEC", 1)) return false;
  const KPhase *ph = &L->k->phases[p];
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  PartFold f = {ph, cg_red_value_dtype(L->k, ph), cg_sum_compensated(L->k, ph), a, NULL, NULL, NULL, NULL, NULL};
  LLVMTypeRef vty = cg_reg_type(m, f.vt);
  f.v = cg_entry_alloca(L, LLVMArrayType(vty, CG_OUTER_BLOCK), "cfv");
  f.c = f.comp ? cg_entry_alloca(L, LLVMArrayType(vty, CG_OUTER_BLOCK), "cfc") : NULL;
  f.i = cg_entry_alloca(L, LLVMArrayType(L->i64, CG_OUTER_BLOCK), "cfi");
  LLVMValueRef n = LLVMBuildSub(b, a->ohi, a->olo, "");
  LLVMValueRef nb = LLVMBuildSDiv(b, LLVMBuildAdd(b, n, cg_i64(m, CG_OUTER_BLOCK - 1), ""), cg_i64(m, CG_OUTER_BLOCK), "");
  count_loop(L, cg_i64(m, 0), nb, false, body_vfold_blocks, &f);
  return true;
}

/* colfinish of phase p: per o, the parts in order -> fin (or vector_fold first), then the FINAL phases that
 * follow p. */
static void col_finish_phase(Lower *L, int p, const ColArgs *a) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(m, vt);
  /* the FINAL phases after p up to the next REDUCE phase (those before the first REDUCE phase with it) */
  int finals[64], nf = 0, first_red = 0;
  while (first_red < k->nphase && k->phases[first_red].kind != KP_REDUCE) first_red++;
  for (int f = 0; f < k->nphase && nf < 64; f++) {
    if (k->phases[f].kind != KP_FINAL) continue;
    int owner = first_red; /* the last REDUCE phase before f with a colpart, else the first one */
    for (int q = 0; q < f; q++)
      if (k->phases[q].kind == KP_REDUCE && !cg_mom_folded(&L->mom, q)) owner = q;
    if (owner == p) finals[nf++] = f;
  }
  bool folded = vector_fold(L, p, a);
  if (folded && !nf) return;
  LLVMValueRef ov = cg_entry_alloca(L, L->i64, "co"), iv = cg_entry_alloca(L, L->i64, "cpart");
  LLVMValueRef accv = cg_entry_alloca(L, vty, "cacc"), acci = cg_entry_alloca(L, L->i64, "cacci");
  bool comp = cg_sum_compensated(k, ph); /* float sums: the parts into a compensated pair */
  LLVMValueRef accc = comp ? cg_entry_alloca(L, vty, "caccc") : NULL;
  PartFold pf = {ph, vt, comp, a, accv, accc, acci, NULL, NULL};
  LLVMBasicBlockRef ohead = cg_new_bb(L, "cf.o"), obody = cg_new_bb(L, "cf.o.body"), odone = cg_new_bb(L, "cf.o.done");
  LLVMBuildStore(b, a->olo, ov);
  LLVMBuildBr(b, ohead);
  LLVMPositionBuilderAtEnd(b, ohead);
  LLVMValueRef o = LLVMBuildLoad2(b, L->i64, ov, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o, a->ohi, ""), obody, odone);
  LLVMPositionBuilderAtEnd(b, obody);
  LLVMValueRef fv, fi;
  if (folded) {
    load_acc(L, ph, fin_ptr(L, p, o), &fv, &fi);
  } else {
    LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accv);
    if (comp) LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accc);
    LLVMBuildStore(b, cg_i64(m, 0), acci);
    LLVMBuildStore(b, cg_i64(m, 0), iv);
    LLVMBasicBlockRef phead = cg_new_bb(L, "cf.part"), pbody = cg_new_bb(L, "cf.part.body"), pdone = cg_new_bb(L, "cf.part.done");
    LLVMBuildBr(b, phead);
    LLVMPositionBuilderAtEnd(b, phead);
    LLVMValueRef i = LLVMBuildLoad2(b, L->i64, iv, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, a->nparts, ""), pbody, pdone);
    LLVMPositionBuilderAtEnd(b, pbody);
    fold_part(L, &pf, o, i, accv, accc, acci);
    LLVMBuildStore(b, LLVMBuildAdd(b, i, cg_i64(m, 1), ""), iv);
    LLVMBuildBr(b, phead);
    LLVMPositionBuilderAtEnd(b, pdone);
    fv = LLVMBuildLoad2(b, vty, accv, "");
    fi = LLVMBuildLoad2(b, L->i64, acci, "");
    if (comp) fv = cg_sum_settle(L, vt, fv, LLVMBuildLoad2(b, vty, accc, ""));
    store_acc(L, ph, fin_ptr(L, p, o), fv, fi);
  }
  bool mom = p == 0 && L->mom.n && !L->outer;
  if (nf || mom) {
    cg_host_set_o_offsets(L, o);
    memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)k->nbuf);
  }
  LLVMValueRef fres[CG_MOM_MAX];
  if (mom) { /* the folded phases: the parts' moments merged in order, their values -> phase 0's record */
    LLVMValueRef first = acc_ptr(L, a->parts, part_item(L, a, o, cg_i64(m, 0)));
    cg_host_mom_merge_parts(L, first, a->nparts, L->col_acc_size);
    cg_clear_cache(L);
    load_fin_accs(L, p, o);
    L->acc[p] = fv;
    L->accidx[p] = fi;
    cg_host_mom_results(L, true);
    for (int i = 0; i < L->mom.n; i++) {
      fres[i] = L->acc[L->mom.phase[i]];
      LLVMValueRef off = cg_i64(m, cg_mom_fin_offset(k, i));
      LLVMBuildStore(b, fres[i], LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), fin_ptr(L, p, o), &off, 1, ""));
    }
  }
  for (int fi_ = 0; fi_ < nf; fi_++) {
    cg_clear_cache(L);
    load_fin_accs(L, p, o);
    L->acc[p] = fv;
    L->accidx[p] = fi;
    for (int i = 0; mom && i < L->mom.n; i++) L->acc[L->mom.phase[i]] = fres[i];
    cg_run_final_phase(L, &k->phases[finals[fi_]]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, o, cg_i64(m, 1), ""), ov);
  LLVMBuildBr(b, ohead);
  LLVMPositionBuilderAtEnd(b, odone);
}

void cg_host_col_finish(Lower *L, LLVMValueRef args) { col_entry(L, args, col_finish_phase, NULL); }
