/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_arg.c: vector arg-reductions on the host (beside the scalar fold of lower_host.c).
 *
 * Vector arg-reductions (argmin / argmax over R points [lo, hi)). The scalar fold keeps (value, index)
 * in one dependency chain of compare, select, select per point (~13 cycles on x86), which no
 * vectorizer widens. Here the extreme VALUE and its INDEX are found apart: R is cut into blocks of
 * ARG_BLOCK points, and for each block
 *   1. a walk stores the block's values into a stack buffer (a plain map loop, which the loop
 *      vectorizer widens like any elementwise kernel: math calls, casts, strided loads); float16
 *      and bfloat16 values are stored as float32 and bools as uint8 (exact, and the same order);
 *      a plain load of one contiguous reduced row skips this copy (direct_row_buffer: steps 2 and 3
 *      read the row where it lies, the last partial vector with a masked load padded by the identity),
 *   2. the buffer's extreme value M is folded with vector max / min steps (`select(x > m, x, m)`,
 *      one instruction on x86), ARG_WIDE_VECS vectors at a time (independent chains) and then one
 *      vector at a time over the rest, padded with the identity; floats also OR an "is NaN" mask,
 *   3. when the block has a NaN, M is NaN; when M beats the running value (strictly better, or a
 *      NaN: cg_arg_better), a search finds the FIRST j with buf[j] == M (or NaN), one vector compare
 *      and a count of trailing zeros per vector of values, and (M, start + j) becomes the
 *      running pair. A search runs only when a block improves on the running value (a few times
 *      for random data), so a point costs one store, one load and a max.
 * Semantics are those of the scalar fold: the first index of the extreme (equal values, -0.0 and
 * +0.0 included, keep the earlier index: the search returns the first point equal to M), the first
 * NaN wins, and a set with no point better than the identity (all -inf for argmax) gives lo, the
 * index the running pair starts with. Once the running value is a NaN nothing can beat it, and the
 * remaining blocks are skipped. Padding (the identity) never equals an M that improved on the
 * running value, which starts at the identity. Short rows (from CG_HOST_ARG_MIN_POINTS points) take
 * the one-vector part only: a 16-point float32 row is one vector step on AVX-512 (two on AVX2), a
 * horizontal fold and one search, with no loop-carried chain through the points.
 * Vectors are as wide as the target prefers (L->host_vec_bytes: 64 bytes on AVX-512 hosts, where the
 * compare masks are k registers and a 16-lane float32 compare is one instruction), else 32 bytes.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "codegen/cg_lower.h"

enum {
  ARG_VEC_BYTES = 32, /* bytes of one vector of the tail fold and of the search, without a preferred width */
  ARG_VEC_BYTES_MAX = 64,
  ARG_WIDE_VECS = 4,  /* vectors of the main fold: independent chains (max and NaN mask: 8 of the 16
                         ymm registers; 8 vectors spilled) */
  ARG_MAX_LANES = ARG_WIDE_VECS * ARG_VEC_BYTES_MAX, /* the most lanes of the main fold (int8) */
  ARG_BLOCK = 2048    /* points per block (a multiple of the main fold's lanes); the buffer holds ARG_BLOCK values */
};

bool cg_host_arg_vectorizable(const KernelIr *k, const KPhase *ph) {
  if (!is_arg(ph->reduce_op)) return false;
  LoomDType vt = (LoomDType)k->instrs[ph->value].dtype;
  /* complex values (lexicographic order on a {re, im} pair) keep the scalar fold */
  return vt < LOOM_DTYPE_COUNT && !dtype_is_complex(vt);
}

/* The dtype the block buffer holds for values of dtype vt (same order, exact conversions). */
static LoomDType buffer_dtype(LoomDType vt) {
  if (vt == LOOM_FLOAT16 || vt == LOOM_BFLOAT16) return LOOM_FLOAT32;
  if (vt == LOOM_BOOL) return LOOM_UINT8;
  return vt;
}

typedef struct ArgFill {
  const KPhase *ph;
  LoomDType vt, bt;
  LLVMValueRef buf, start; /* the block buffer and the block's first linear R point */
  LLVMTypeRef bty;
} ArgFill;

/* Walk body: buf[lin - start] = the phase's value at this point (as the buffer dtype). */
static void body_fill(Lower *L, void *arg) {
  ArgFill *f = arg;
  LLVMBuilderRef b = L->m.b;
  cg_clear_cache(L);
  cg_eval_needed(L, &f->ph->value, 1);
  LLVMValueRef v = L->cache[f->ph->value];
  if (f->bt != f->vt) v = cg_cast(&L->m, f->vt, f->bt, v);
  LLVMValueRef j = LLVMBuildSub(b, L->lin, f->start, "");
  LLVMBuildStore(b, v, LLVMBuildGEP2(b, f->bty, f->buf, &j, 1, ""));
  cg_clear_cache(L);
}

static LLVMValueRef splat(LLVMValueRef scalar, unsigned n) {
  LLVMValueRef v[ARG_MAX_LANES];
  for (unsigned i = 0; i < n; i++) v[i] = scalar;
  return LLVMConstVector(v, n);
}

static LLVMValueRef splat_dyn(LLVMBuilderRef b, LLVMValueRef scalar, unsigned n) {
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(scalar), n);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(vt));
  LLVMValueRef one = LLVMBuildInsertElement(b, LLVMGetUndef(vt), scalar, LLVMConstInt(i32, 0, 0), "");
  return LLVMBuildShuffleVector(b, one, LLVMGetUndef(vt), LLVMConstNull(LLVMVectorType(i32, n)), "");
}

/* x better than m as a plain max / min (NaNs never compare better: they are tracked apart). */
static LLVMValueRef plain_better(Lower *L, LoomReduceOp op, LoomDType t, LLVMValueRef m, LLVMValueRef x) {
  LLVMBuilderRef b = L->m.b;
  bool max = op == LOOM_REDUCE_ARGMAX;
  if (dtype_is_float(t)) return LLVMBuildFCmp(b, max ? LLVMRealOGT : LLVMRealOLT, x, m, "");
  return cg_arg_better(&L->m, op, t, m, x); /* integers: the signed / unsigned compare */
}

/* One fold step of (m, nan) with the values x. nan is an integer vector of the values' width (all
 * ones in a lane that saw a NaN): an <n x i1> accumulator is packed to bytes on x86 and spills. */
static void fold_step(Lower *L, LoomReduceOp op, LoomDType t, LLVMValueRef *m, LLVMValueRef *nan, LLVMValueRef x) {
  LLVMBuilderRef b = L->m.b;
  *m = LLVMBuildSelect(b, plain_better(L, op, t, *m, x), x, *m, "");
  if (nan) *nan = LLVMBuildOr(b, *nan, LLVMBuildSExt(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), LLVMTypeOf(*nan), ""), "");
}

/* The lanes [0, w) and [w, 2w) of v. */
static void halves(LLVMBuilderRef b, LLVMTypeRef i32, LLVMValueRef v, unsigned w, LLVMValueRef *lo, LLVMValueRef *hi) {
  LLVMValueRef lo_m[ARG_MAX_LANES], hi_m[ARG_MAX_LANES];
  for (unsigned i = 0; i < w; i++) {
    lo_m[i] = LLVMConstInt(i32, i, 0);
    hi_m[i] = LLVMConstInt(i32, i + w, 0);
  }
  *lo = LLVMBuildShuffleVector(b, v, v, LLVMConstVector(lo_m, w), "");
  *hi = LLVMBuildShuffleVector(b, v, v, LLVMConstVector(hi_m, w), "");
}

/* Folds the n lanes of (m, nan) down to w lanes (w divides n, both powers of two). */
static void narrow(Lower *L, LoomReduceOp op, LoomDType t, LLVMValueRef *m, LLVMValueRef *nan, unsigned n, unsigned w) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  for (unsigned h = n / 2; h >= w; h /= 2) {
    LLVMValueRef a, c;
    halves(b, i32, *m, h, &a, &c);
    *m = a;
    fold_step(L, op, t, m, NULL, c);
    if (nan) {
      halves(b, i32, *nan, h, &a, &c);
      *nan = LLVMBuildOr(b, a, c, "");
    }
  }
}

static LLVMValueRef cttz(Lower *L, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  char name[32];
  snprintf(name, sizeof name, "llvm.cttz.i%u", LLVMGetIntTypeWidth(t));
  LLVMTypeRef ps[2] = {t, LLVMInt1TypeInContext(L->m.c)};
  LLVMTypeRef fty = LLVMFunctionType(t, ps, 2, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(L->m.m, name);
  if (!fn) fn = LLVMAddFunction(L->m.m, name, fty);
  LLVMValueRef args[2] = {x, LLVMConstInt(ps[1], 1, 0)}; /* x != 0 here */
  return LLVMBuildCall2(L->m.b, fty, fn, args, 2, "");
}

/* A counted loop j = from, from + step, ... < to (i64 values; body emitted by the caller between
 * loop_open and loop_close). */
typedef struct ArgLoop {
  LLVMValueRef jv, j;
  LLVMBasicBlockRef head, exit;
} ArgLoop;

static ArgLoop loop_open(Lower *L, LLVMValueRef from, LLVMValueRef to, const char *name) {
  LLVMBuilderRef b = L->m.b;
  ArgLoop lp = {cg_entry_alloca(L, L->i64, name), NULL, cg_new_bb(L, name), cg_new_bb(L, "arg.loop.exit")};
  LLVMBasicBlockRef body = cg_new_bb(L, "arg.loop.body");
  LLVMBuildStore(b, from, lp.jv);
  LLVMBuildBr(b, lp.head);
  LLVMPositionBuilderAtEnd(b, lp.head);
  lp.j = LLVMBuildLoad2(b, L->i64, lp.jv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lp.j, to, ""), body, lp.exit);
  LLVMPositionBuilderAtEnd(b, body);
  return lp;
}

/* Closes the loop; keep_rolled: llvm.loop.unroll.disable on its back edge. A fold loop unrolled by
 * LLVM has its NaN masks of two iterations OR-ed as <n x i1> before the widening (InstCombine), which
 * x86 then packs to bytes and back in every iteration; one iteration already holds ARG_WIDE_VECS
 * independent vectors. */
static void loop_close(Lower *L, ArgLoop *lp, int64_t step, bool keep_rolled) {
  LLVMBuilderRef b = L->m.b;
  LLVMContextRef c = L->m.c;
  LLVMBuildStore(b, LLVMBuildAdd(b, lp->j, cg_i64(&L->m, step), ""), lp->jv);
  LLVMValueRef br = LLVMBuildBr(b, lp->head);
  if (keep_rolled) {
    LLVMMetadataRef tmp = LLVMTemporaryMDNode(c, NULL, 0);
    LLVMMetadataRef off = LLVMMDStringInContext2(c, "llvm.loop.unroll.disable", 24);
    LLVMMetadataRef ops[2] = {tmp, LLVMMDNodeInContext2(c, &off, 1)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(c, ops, 2);
    LLVMMetadataReplaceAllUsesWith(tmp, id);
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c, "llvm.loop", 9), LLVMMetadataAsValue(c, id));
  }
  LLVMPositionBuilderAtEnd(b, lp->exit);
}

/* Whether the phase's values are the points of one contiguous row of a buffer, read as they are stored
 * (a load of the value dtype, one reduced dim of unit stride): then the folds and the search read that
 * row where it lies, with no copy into the block buffer, and the last partial vector with a masked load
 * whose other lanes are the identity. Returns the buffer, or -1. */
static int direct_row_buffer(const Lower *L, const KPhase *ph, LoomDType vt, LoomDType bt) {
  const KernelIr *k = L->k;
  const KInstr *in = &k->instrs[ph->value];
  if (in->kind != KI_LOAD || vt != bt || (LoomDType)k->bufs[in->buf].dtype != vt) return -1;
  if (k->ndim - k->nkeep != 1 || k->bufs[in->buf].layout[k->ndim - 1] != KL_ONE) return -1;
  if (L->final_phase || (L->vload && L->vload[in->buf])) return -1;
  /* AVX2 has masked loads of 4- and 8-byte lanes only (narrower ones become a branch per lane); the
   * 64-byte width is preferred on AVX-512 hosts, which mask every lane width in hardware (BW) */
  if (loom_dtype_size(vt) < 4 && L->host_vec_bytes != 64) return -1;
  return in->buf;
}

/* n lanes of type ety at base + j: from the block buffer (aligned, padded), or for a direct row the lanes
 * with j + lane < cnt and the identity in the others (llvm.masked.load). */
static LLVMValueRef load_lanes(Lower *L, LLVMTypeRef ety, LLVMValueRef base, LLVMValueRef j, unsigned n, unsigned align,
                               bool direct, LLVMValueRef cnt, LLVMValueRef id) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef vty = LLVMVectorType(ety, n);
  LLVMValueRef p = LLVMBuildGEP2(b, ety, base, &j, 1, "");
  if (!direct) {
    LLVMValueRef x = LLVMBuildLoad2(b, vty, p, "");
    LLVMSetAlignment(x, align);
    return x;
  }
  LLVMValueRef lanes[ARG_MAX_LANES];
  for (unsigned i = 0; i < n; i++) lanes[i] = LLVMConstInt(L->i64, i, 0);
  LLVMValueRef left = splat_dyn(b, LLVMBuildSub(b, cnt, j, ""), n);
  LLVMValueRef mask = LLVMBuildICmp(b, LLVMIntSLT, LLVMConstVector(lanes, n), left, "lanemask");
  LLVMTypeRef tys[2] = {vty, LLVMTypeOf(p)};
  unsigned iid = LLVMLookupIntrinsicID("llvm.masked.load", 16);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->m.m, iid, tys, 2);
  LLVMTypeRef fty = LLVMIntrinsicGetType(L->m.c, iid, tys, 2);
  LLVMValueRef args[4] = {p, LLVMConstInt(LLVMInt32TypeInContext(L->m.c), align, 0), mask, splat(id, n)};
  return LLVMBuildCall2(b, fty, fn, args, 4, "");
}

/* The vector arg-reduction of phase ph over R points [lo, hi) into accv / acci (allocas holding the
 * running value and index, initialized by the caller to the identity and lo). */
void cg_host_arg_reduce(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv,
                        LLVMValueRef acci) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomReduceOp op = (LoomReduceOp)ph->reduce_op;
  LoomDType vt = (LoomDType)k->instrs[ph->value].dtype, bt = buffer_dtype(vt);
  bool fl = dtype_is_float(bt);
  LLVMTypeRef vty = cg_reg_type(m, vt), bty = cg_reg_type(m, bt);
  LLVMTypeRef nty = LLVMIntTypeInContext(m->c, 8 * (unsigned)loom_dtype_size(bt)); /* the NaN lanes' type */
  const unsigned vbytes = L->host_vec_bytes >= 16 && L->host_vec_bytes <= ARG_VEC_BYTES_MAX ? (unsigned)L->host_vec_bytes : ARG_VEC_BYTES;
  const unsigned nv = vbytes / (unsigned)loom_dtype_size(bt), nw = ARG_WIDE_VECS * nv;
  LLVMTypeRef wty = LLVMVectorType(bty, nw), vvty = LLVMVectorType(bty, nv);
  int drow = direct_row_buffer(L, ph, vt, bt);
  bool direct = drow >= 0;
  LLVMValueRef buf = NULL;
  if (!direct) {
    buf = cg_entry_alloca(L, LLVMArrayType(bty, ARG_BLOCK), "argbuf");
    LLVMSetAlignment(buf, 64); /* ARG_BLOCK is a multiple of nw: every vector load is aligned */
  }
  const unsigned wide_align = direct ? (unsigned)loom_dtype_size(bt) : 64, vec_align = direct ? (unsigned)loom_dtype_size(bt) : vbytes;
  LLVMValueRef mw = cg_entry_alloca(L, wty, "argmw"), nanw = fl ? cg_entry_alloca(L, LLVMVectorType(nty, nw), "argnw") : NULL;
  LLVMValueRef mv = cg_entry_alloca(L, vvty, "argmv"), nanv = fl ? cg_entry_alloca(L, LLVMVectorType(nty, nv), "argnv") : NULL;
  LLVMValueRef id = cg_identity(m, op, bt);
  LLVMBasicBlockRef done = cg_new_bb(L, "arg.done");

  /* for (bs = lo; bs < hi; bs += ARG_BLOCK), left early once the running value is a NaN */
  ArgLoop blk = loop_open(L, lo, hi, "arg.block");
  LLVMValueRef bs = blk.j;
  if (fl) {
    LLVMBasicBlockRef go = cg_new_bb(L, "arg.go");
    LLVMValueRef cur = LLVMBuildLoad2(b, vty, accv, "");
    LLVMBuildCondBr(b, LLVMBuildFCmp(b, LLVMRealUNO, cur, cur, ""), done, go);
    LLVMPositionBuilderAtEnd(b, go);
  }
  LLVMValueRef be = LLVMBuildAdd(b, bs, cg_i64(m, ARG_BLOCK), "");
  be = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, hi, be, ""), hi, be, "be");
  if (direct) { /* the block's points where they lie: src[0 .. cnt) */
    buf = cg_elem_ptr(L, drow, LLVMBuildAdd(b, L->off[drow], bs, ""));
  } else {
    ArgFill f = {ph, vt, bt, buf, bs, bty};
    cg_host_walk(L, k->nkeep, k->ndim, bs, be, body_fill, &f);
  }
  LLVMValueRef cnt = LLVMBuildSub(b, be, bs, "cnt");
  LLVMValueRef nwide = LLVMBuildAnd(b, cnt, cg_i64(m, -(int64_t)nw), "nwide");
  LLVMValueRef padded = LLVMBuildAnd(b, LLVMBuildAdd(b, cnt, cg_i64(m, nv - 1), ""), cg_i64(m, -(int64_t)nv), "padded");

  /* 2a. the wide fold over [0, nwide) */
  LLVMBuildStore(b, splat(id, nw), mw);
  if (fl) LLVMBuildStore(b, LLVMConstNull(LLVMVectorType(nty, nw)), nanw);
  ArgLoop wl = loop_open(L, cg_i64(m, 0), nwide, "arg.wide");
  {
    LLVMValueRef x = LLVMBuildLoad2(b, wty, LLVMBuildGEP2(b, bty, buf, &wl.j, 1, ""), "");
    LLVMSetAlignment(x, wide_align);
    LLVMValueRef acc = LLVMBuildLoad2(b, wty, mw, ""), nan = fl ? LLVMBuildLoad2(b, LLVMVectorType(nty, nw), nanw, "") : NULL;
    fold_step(L, op, bt, &acc, fl ? &nan : NULL, x);
    LLVMBuildStore(b, acc, mw);
    if (fl) LLVMBuildStore(b, nan, nanw);
  }
  loop_close(L, &wl, nw, true);
  /* pad [cnt, padded) with the identity (never taken), then 2b. the narrow fold over [nwide, padded) */
  if (!direct) { /* (a direct row's last vector is a masked load instead) */
    ArgLoop pl = loop_open(L, cnt, padded, "arg.pad");
    LLVMBuildStore(b, id, LLVMBuildGEP2(b, bty, buf, &pl.j, 1, ""));
    loop_close(L, &pl, 1, false);
  }
  {
    LLVMValueRef acc = LLVMBuildLoad2(b, wty, mw, ""), nan = fl ? LLVMBuildLoad2(b, LLVMVectorType(nty, nw), nanw, "") : NULL;
    narrow(L, op, bt, &acc, fl ? &nan : NULL, nw, nv);
    LLVMBuildStore(b, acc, mv);
    if (fl) LLVMBuildStore(b, nan, nanv);
  }
  ArgLoop nl = loop_open(L, nwide, padded, "arg.narrow");
  {
    LLVMValueRef x = load_lanes(L, bty, buf, nl.j, nv, vec_align, direct, cnt, id);
    LLVMValueRef acc = LLVMBuildLoad2(b, vvty, mv, ""), nan = fl ? LLVMBuildLoad2(b, LLVMVectorType(nty, nv), nanv, "") : NULL;
    fold_step(L, op, bt, &acc, fl ? &nan : NULL, x);
    LLVMBuildStore(b, acc, mv);
    if (fl) LLVMBuildStore(b, nan, nanv);
  }
  loop_close(L, &nl, nv, true);

  /* 3. the block's extreme M (a NaN when the block has one) against the running value */
  LLVMValueRef acc = LLVMBuildLoad2(b, vvty, mv, ""), nan = fl ? LLVMBuildLoad2(b, LLVMVectorType(nty, nv), nanv, "") : NULL;
  narrow(L, op, bt, &acc, fl ? &nan : NULL, nv, 1);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef bm = LLVMBuildExtractElement(b, acc, LLVMConstInt(i32, 0, 0), "blockm");
  if (fl) {
    LLVMValueRef any = LLVMBuildExtractElement(b, nan, LLVMConstInt(i32, 0, 0), "");
    any = LLVMBuildICmp(b, LLVMIntNE, any, LLVMConstNull(nty), "anynan");
    bm = LLVMBuildSelect(b, any, LLVMConstReal(bty, 0.0 / 0.0), bm, "");
  }
  LLVMValueRef cur = LLVMBuildLoad2(b, vty, accv, "");
  LLVMValueRef mval = bt != vt ? cg_cast(m, bt, vt, bm) : bm;
  LLVMBasicBlockRef search = cg_new_bb(L, "arg.search"), next = cg_new_bb(L, "arg.next");
  LLVMBuildCondBr(b, cg_arg_better(m, op, vt, cur, mval), search, next);
  /* the first j with buf[j] == M (or a NaN, when M is one) */
  LLVMPositionBuilderAtEnd(b, search);
  LLVMValueRef msplat = splat_dyn(b, bm, nv);
  ArgLoop sl = loop_open(L, cg_i64(m, 0), padded, "arg.find");
  {
    LLVMValueRef x = load_lanes(L, bty, buf, sl.j, nv, vec_align, direct, cnt, id);
    LLVMValueRef eq;
    if (fl) {
      LLVMValueRef mnan = LLVMBuildFCmp(b, LLVMRealUNO, bm, bm, "");
      eq = LLVMBuildSelect(b, mnan, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), LLVMBuildFCmp(b, LLVMRealOEQ, x, msplat, ""), "");
    } else {
      eq = LLVMBuildICmp(b, LLVMIntEQ, x, msplat, "");
    }
    LLVMValueRef bits = LLVMBuildBitCast(b, eq, LLVMIntTypeInContext(m->c, nv), "");
    LLVMBasicBlockRef found = cg_new_bb(L, "arg.found"), more = cg_new_bb(L, "arg.more");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), ""), found, more);
    LLVMPositionBuilderAtEnd(b, found);
    LLVMValueRef at = LLVMBuildAdd(b, sl.j, LLVMBuildZExt(b, cttz(L, bits), L->i64, ""), "");
    LLVMBuildStore(b, mval, accv);
    LLVMBuildStore(b, LLVMBuildAdd(b, bs, at, ""), acci);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, more);
  }
  loop_close(L, &sl, nv, false);
  LLVMBuildBr(b, next); /* not reached: M is one of the block's values */
  LLVMPositionBuilderAtEnd(b, next);
  loop_close(L, &blk, ARG_BLOCK, false);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}
