/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_arg.c: vector arg-reductions on the host (beside the scalar fold of lower_host.c).
 *
 * Vector arg-reductions (argmin / argmax over R points [lo, hi)). The scalar fold keeps (value, index)
 * in one dependency chain of compare, select, select per point (~13 cycles on x86), which no
 * vectorizer widens. Here R is cut into blocks of ARG_BLOCK points; for each block
 *   1. a walk stores the block's values into a stack buffer (a plain map loop, which the loop
 *      vectorizer widens like any elementwise kernel: math calls, casts, strided loads),
 *   2. the buffer is padded with the identity to a multiple of ARG_LANES and folded ARG_LANES points
 *      at a time into per-lane (value, block-local index) vectors: lane l keeps the first extreme of
 *      the points l, l + ARG_LANES, ... (strictly better, or a first NaN: cg_arg_better on vectors),
 *   3. the lanes are folded pairwise (halves, log2(ARG_LANES) steps): the better value wins, equal
 *      values (and two NaNs) keep the smaller index, so the block's winner is its FIRST extreme,
 *   4. the winner joins the running (value, index) like one later point (strictly better only).
 * A lane that never takes keeps (identity, ARG_NONE): it only ever ties with another such lane and
 * never beats the running value, which starts at (identity, lo), so a set with no point better than
 * the identity (all -inf for argmax) gives lo as NumPy does. NaN rules and first-index ties are those
 * of the scalar fold exactly. ARG_LANES is wider than one machine vector so that LLVM splits the
 * fold into independent chains (4 zmm chains on AVX-512 for float32).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

enum {
  ARG_LANES = 64,    /* lanes of the per-lane accumulators (a power of two) */
  ARG_BLOCK = 2048   /* points per block (a multiple of ARG_LANES); the buffer is ARG_BLOCK values */
};
#define ARG_NONE 0x7fffffff /* block-local index of a lane that took nothing */

bool cg_host_arg_vectorizable(const KernelIr *k, const KPhase *ph) {
  if (!is_arg(ph->reduce_op)) return false;
  LoomDType vt = (LoomDType)k->instrs[ph->value].dtype;
  /* complex values (lexicographic order on a {re, im} pair) keep the scalar fold */
  return vt != LOOM_BOOL && vt < LOOM_DTYPE_COUNT && vt != LOOM_FLOAT16 && !dtype_is_complex(vt);
}

typedef struct ArgFill {
  const KPhase *ph;
  LLVMValueRef buf, start; /* the block buffer and the block's first linear R point */
  LLVMTypeRef vty;
} ArgFill;

/* Walk body: buf[lin - start] = the phase's value at this point. */
static void body_fill(Lower *L, void *arg) {
  ArgFill *f = arg;
  LLVMBuilderRef b = L->m.b;
  cg_clear_cache(L);
  cg_eval_needed(L, &f->ph->value, 1);
  LLVMValueRef j = LLVMBuildSub(b, L->lin, f->start, "");
  LLVMBuildStore(b, L->cache[f->ph->value], LLVMBuildGEP2(b, f->vty, f->buf, &j, 1, ""));
  cg_clear_cache(L);
}

static LLVMValueRef splat(LLVMValueRef scalar, unsigned n) {
  LLVMValueRef v[ARG_LANES];
  for (unsigned i = 0; i < n; i++) v[i] = scalar;
  return LLVMConstVector(v, n);
}

/* Whether a and b are the same value for the first-index rule (floats: ==, or both NaN). */
static LLVMValueRef same_value(Lower *L, LoomDType vt, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef bd = L->m.b;
  if (!dtype_is_float(vt)) return LLVMBuildICmp(bd, LLVMIntEQ, a, b, "");
  LLVMValueRef eq = LLVMBuildFCmp(bd, LLVMRealOEQ, a, b, "");
  LLVMValueRef nn = LLVMBuildAnd(bd, LLVMBuildFCmp(bd, LLVMRealUNO, a, a, ""), LLVMBuildFCmp(bd, LLVMRealUNO, b, b, ""), "");
  return LLVMBuildOr(bd, eq, nn, "");
}

/* Folds the lanes of (v, idx) (n lanes) pairwise into one (value, index): the block's first extreme. */
static void fold_lanes(Lower *L, LoomReduceOp op, LoomDType vt, LLVMValueRef *v, LLVMValueRef *idx, unsigned n) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  for (unsigned w = n / 2; w >= 1; w /= 2) {
    LLVMValueRef lo_m[ARG_LANES], hi_m[ARG_LANES];
    for (unsigned i = 0; i < w; i++) {
      lo_m[i] = LLVMConstInt(i32, i, 0);
      hi_m[i] = LLVMConstInt(i32, i + w, 0);
    }
    LLVMValueRef lm = LLVMConstVector(lo_m, w), hm = LLVMConstVector(hi_m, w);
    LLVMValueRef av = LLVMBuildShuffleVector(b, *v, *v, lm, ""), bv = LLVMBuildShuffleVector(b, *v, *v, hm, "");
    LLVMValueRef ai = LLVMBuildShuffleVector(b, *idx, *idx, lm, ""), bi = LLVMBuildShuffleVector(b, *idx, *idx, hm, "");
    LLVMValueRef take = cg_arg_better(&L->m, op, vt, av, bv);
    LLVMValueRef tie = LLVMBuildAnd(b, same_value(L, vt, av, bv), LLVMBuildICmp(b, LLVMIntSLT, bi, ai, ""), "");
    take = LLVMBuildOr(b, take, tie, "");
    *v = LLVMBuildSelect(b, take, bv, av, "");
    *idx = LLVMBuildSelect(b, take, bi, ai, "");
  }
  LLVMValueRef zero = LLVMConstInt(i32, 0, 0);
  *v = LLVMBuildExtractElement(b, *v, zero, "");
  *idx = LLVMBuildExtractElement(b, *idx, zero, "");
}

/* The vector arg-reduction of phase ph over R points [lo, hi) into accv / acci (allocas holding the
 * running value and index, initialized by the caller). */
void cg_host_arg_reduce(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv,
                        LLVMValueRef acci) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomReduceOp op = (LoomReduceOp)ph->reduce_op;
  LoomDType vt = (LoomDType)k->instrs[ph->value].dtype;
  LLVMTypeRef vty = cg_reg_type(m, vt), i32 = LLVMInt32TypeInContext(m->c);
  const unsigned n = ARG_LANES;
  LLVMTypeRef vvt = LLVMVectorType(vty, n), ivt = LLVMVectorType(i32, n);
  LLVMValueRef buf = cg_entry_alloca(L, LLVMArrayType(vty, ARG_BLOCK), "argbuf");
  LLVMSetAlignment(buf, 64);
  LLVMValueRef bsv = cg_entry_alloca(L, L->i64, "argbs");
  LLVMValueRef bestv = cg_entry_alloca(L, vvt, "argv"), besti = cg_entry_alloca(L, ivt, "argi");
  LLVMValueRef jv = cg_entry_alloca(L, L->i64, "argj");
  LLVMValueRef id = cg_identity(m, op, vt);
  LLVMBuildStore(b, lo, bsv);
  LLVMBasicBlockRef head = cg_new_bb(L, "arg.block"), fill = cg_new_bb(L, "arg.fill"), done = cg_new_bb(L, "arg.done");
  LLVMBuildBr(b, head);
  /* for (bs = lo; bs < hi; bs += ARG_BLOCK) */
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef bs = LLVMBuildLoad2(b, L->i64, bsv, "bs");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, bs, hi, ""), fill, done);
  LLVMPositionBuilderAtEnd(b, fill);
  LLVMValueRef be = LLVMBuildAdd(b, bs, cg_i64(m, ARG_BLOCK), "");
  be = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, hi, be, ""), hi, be, "be");
  ArgFill f = {ph, buf, bs, vty};
  cg_host_walk(L, k->nkeep, k->ndim, bs, be, body_fill, &f);
  /* pad to a multiple of the lanes with the identity (never taken) */
  LLVMValueRef cnt = LLVMBuildSub(b, be, bs, "cnt");
  LLVMValueRef nv = LLVMBuildUDiv(b, LLVMBuildAdd(b, cnt, cg_i64(m, n - 1), ""), cg_i64(m, n), "nvec");
  LLVMValueRef padded = LLVMBuildMul(b, nv, cg_i64(m, n), "");
  LLVMBasicBlockRef pad = cg_new_bb(L, "arg.pad"), padded_bb = cg_new_bb(L, "arg.padded");
  LLVMBuildStore(b, cnt, jv);
  LLVMBuildBr(b, pad);
  LLVMPositionBuilderAtEnd(b, pad);
  LLVMValueRef pj = LLVMBuildLoad2(b, L->i64, jv, "");
  LLVMBasicBlockRef pad_body = cg_new_bb(L, "arg.pad.body");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, pj, padded, ""), pad_body, padded_bb);
  LLVMPositionBuilderAtEnd(b, pad_body);
  LLVMBuildStore(b, id, LLVMBuildGEP2(b, vty, buf, &pj, 1, ""));
  LLVMBuildStore(b, LLVMBuildAdd(b, pj, cg_i64(m, 1), ""), jv);
  LLVMBuildBr(b, pad);
  /* per-lane fold of the block's vectors */
  LLVMPositionBuilderAtEnd(b, padded_bb);
  LLVMBuildStore(b, splat(id, n), bestv);
  LLVMBuildStore(b, splat(LLVMConstInt(i32, ARG_NONE, 0), n), besti);
  LLVMBuildStore(b, cg_i64(m, 0), jv);
  LLVMValueRef steps[ARG_LANES];
  for (unsigned i = 0; i < n; i++) steps[i] = LLVMConstInt(i32, i, 0);
  LLVMValueRef step = LLVMConstVector(steps, n);
  LLVMBasicBlockRef vhead = cg_new_bb(L, "arg.vec"), vbody = cg_new_bb(L, "arg.vec.body"), vdone = cg_new_bb(L, "arg.vec.done");
  LLVMBuildBr(b, vhead);
  LLVMPositionBuilderAtEnd(b, vhead);
  LLVMValueRef j = LLVMBuildLoad2(b, L->i64, jv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j, padded, ""), vbody, vdone);
  LLVMPositionBuilderAtEnd(b, vbody);
  LLVMValueRef x = LLVMBuildLoad2(b, vvt, LLVMBuildGEP2(b, vty, buf, &j, 1, ""), "");
  LLVMSetAlignment(x, 64);
  LLVMValueRef cv = LLVMBuildLoad2(b, vvt, bestv, ""), ci = LLVMBuildLoad2(b, ivt, besti, "");
  LLVMValueRef take = cg_arg_better(m, op, vt, cv, x);
  LLVMValueRef j32 = LLVMBuildTrunc(b, j, i32, "");
  LLVMValueRef jvec = LLVMBuildShuffleVector(b, LLVMBuildInsertElement(b, LLVMGetUndef(ivt), j32, LLVMConstInt(i32, 0, 0), ""),
                                             LLVMGetUndef(ivt), LLVMConstNull(ivt), "");
  LLVMBuildStore(b, LLVMBuildSelect(b, take, x, cv, ""), bestv);
  LLVMBuildStore(b, LLVMBuildSelect(b, take, LLVMBuildAdd(b, jvec, step, ""), ci, ""), besti);
  LLVMBuildStore(b, LLVMBuildAdd(b, j, cg_i64(m, n), ""), jv);
  LLVMBuildBr(b, vhead);
  /* the block's first extreme joins the running value like one later point */
  LLVMPositionBuilderAtEnd(b, vdone);
  LLVMValueRef wv = LLVMBuildLoad2(b, vvt, bestv, ""), wi = LLVMBuildLoad2(b, ivt, besti, "");
  fold_lanes(L, op, vt, &wv, &wi, n);
  LLVMValueRef cur = LLVMBuildLoad2(b, vty, accv, ""), curi = LLVMBuildLoad2(b, L->i64, acci, "");
  LLVMValueRef won = cg_arg_better(m, op, vt, cur, wv);
  LLVMBuildStore(b, LLVMBuildSelect(b, won, wv, cur, ""), accv);
  LLVMValueRef gi = LLVMBuildAdd(b, bs, LLVMBuildZExt(b, wi, L->i64, ""), "");
  LLVMBuildStore(b, LLVMBuildSelect(b, won, gi, curi, ""), acci);
  LLVMBuildStore(b, be, bsv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
}
