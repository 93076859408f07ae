/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_sum.c: accurate floating-point sums on the host (blocked, compensated accumulation).
 *
 * A float sum folded into one accumulator over n points has a worst-case error of n eps sum|x|, and
 * the `reassoc` partial sums of a vectorized loop only divide n by the lanes; NumPy's pairwise sum
 * has (about) log2(n) eps sum|x|. Host REDUCE phases that sum real or complex floats (sum, mean,
 * var/std, nansum, ...) therefore accumulate in blocks: a walk (cg_host_walk_blocked) folds at most
 * `points` values into the block's accumulator (vectorized with its lanes' partial sums, as before),
 * and at the end of each block that accumulator is added into a compensated pair (s, c) with
 * Neumaier's step and reset. The error is then about (block chain + log2(lanes) + 2) eps sum|x|
 * whatever n is, for a few instructions per block. Products, min/max, integer sums and user
 * reductions keep the plain fold (a product's rounding error does not grow with the order); integer sums
 * of bool and <= 16-bit values take 32-bit lanes within blocks (the end of this file).
 *
 * Block sizes: CG_SUM_BLOCK_VEC points when the innermost reduced dim is read with compile-time
 * strides (the row loop vectorizes: a block is 2048 / 32 = 64 values per lane chain on AVX2 with
 * the vectorizer's interleave), CG_SUM_BLOCK_SCALAR otherwise (one chain per block), and
 * CG_SUM_OUTER_BLOCK (64) rows in the outer strategy (lower_host_outer.c: one chain per column; there
 * the R range is walked in chunks of that many points, each an unblocked walk, and every column's
 * accumulator is folded into its pair after each chunk).
 */
#include "codegen/cg_lower.h"

bool cg_sum_compensated(const KernelIr *k, const KPhase *ph) {
  if (ph->kind != KP_REDUCE || (ph->reduce_op != LOOM_REDUCE_SUM && ph->reduce_op != LOOM_REDUCE_MEAN)) return false;
  LoomDType t = (LoomDType)ph->acc_dtype;
  (void)k;
  return dtype_is_float(t) || dtype_is_complex(t);
}

int64_t cg_sum_block_points(const KernelIr *k) {
  int last = k->ndim - 1;
  for (int i = 0; i < k->ninstr; i++) {
    int64_t s;
    if (k->instrs[i].kind == KI_LOAD && !ir_layout_const(k->bufs[k->instrs[i].buf].layout[last], &s))
      return CG_SUM_BLOCK_SCALAR;
  }
  return CG_SUM_BLOCK_VEC;
}

static LLVMValueRef fabs_of(Lower *L, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  const char *name = LLVMGetTypeKind(t) == LLVMDoubleTypeKind ? "llvm.fabs.f64" : "llvm.fabs.f32";
  LLVMValueRef fn = LLVMGetNamedFunction(L->m.m, name);
  LLVMTypeRef fty = LLVMFunctionType(t, &t, 1, 0);
  if (!fn) fn = LLVMAddFunction(L->m.m, name, fty);
  return LLVMBuildCall2(L->m.b, fty, fn, &x, 1, "");
}

/* Neumaier's step on real values: s + x into (s', c + the rounding error of s + x). The operations
 * carry no fast-math flags: the compensation must not be reassociated away. */
static void neumaier(Lower *L, LLVMValueRef s, LLVMValueRef c, LLVMValueRef x, LLVMValueRef *s1, LLVMValueRef *c1) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef t = LLVMBuildFAdd(b, s, x, "ks");
  LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGE, fabs_of(L, s), fabs_of(L, x), "");
  LLVMValueRef hi = LLVMBuildSelect(b, big, s, x, ""), lo = LLVMBuildSelect(b, big, x, s, "");
  LLVMValueRef err = LLVMBuildFAdd(b, LLVMBuildFSub(b, hi, t, ""), lo, "");
  *s1 = t;
  *c1 = LLVMBuildFAdd(b, c, err, "kc");
}

/* s + c where s is finite; s itself otherwise (an infinite or NaN sum makes c NaN). */
static LLVMValueRef settle(Lower *L, LLVMValueRef s, LLVMValueRef c) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef inf = LLVMConstReal(LLVMTypeOf(s), 1.0 / 0.0);
  LLVMValueRef fin = LLVMBuildFCmp(b, LLVMRealOLT, fabs_of(L, s), inf, "");
  return LLVMBuildSelect(b, fin, LLVMBuildFAdd(b, s, c, ""), s, "");
}

void cg_sum_add_values(Lower *L, LoomDType t, LLVMValueRef *s, LLVMValueRef *c, LLVMValueRef x) {
  LLVMBuilderRef b = L->m.b;
  if (!dtype_is_complex(t)) {
    neumaier(L, *s, *c, x, s, c);
    return;
  }
  LLVMValueRef so = *s, co = *c;
  for (unsigned i = 0; i < 2; i++) { /* the parts, each compensated */
    LLVMValueRef sp, cp;
    neumaier(L, LLVMBuildExtractValue(b, so, i, ""), LLVMBuildExtractValue(b, co, i, ""),
             LLVMBuildExtractValue(b, x, i, ""), &sp, &cp);
    *s = LLVMBuildInsertValue(b, *s, sp, i, "");
    *c = LLVMBuildInsertValue(b, *c, cp, i, "");
  }
}

LLVMValueRef cg_sum_settle(Lower *L, LoomDType t, LLVMValueRef s, LLVMValueRef c) {
  LLVMBuilderRef b = L->m.b;
  if (!dtype_is_complex(t)) return settle(L, s, c);
  LLVMValueRef r = s;
  for (unsigned i = 0; i < 2; i++)
    r = LLVMBuildInsertValue(b, r, settle(L, LLVMBuildExtractValue(b, s, i, ""), LLVMBuildExtractValue(b, c, i, "")), i, "");
  return r;
}

void cg_sum_add(Lower *L, LoomDType t, LLVMValueRef sp, LLVMValueRef cp, LLVMValueRef x) {
  LLVMTypeRef ty = cg_reg_type(&L->m, t);
  LLVMValueRef s = LLVMBuildLoad2(L->m.b, ty, sp, ""), c = LLVMBuildLoad2(L->m.b, ty, cp, "");
  cg_sum_add_values(L, t, &s, &c, x);
  LLVMBuildStore(L->m.b, s, sp);
  LLVMBuildStore(L->m.b, c, cp);
}

/* ---- the blocked walk of one O point's REDUCE phase ------------------------------------------------ */
typedef struct SumFlush {
  const KPhase *ph;
  LoomDType t;
  LLVMValueRef accv, s, c; /* allocas: the block's accumulator, the compensated pair */
} SumFlush;

static void flush_block(Lower *L, void *arg) {
  SumFlush *f = arg;
  LLVMTypeRef ty = cg_reg_type(&L->m, f->t);
  cg_sum_add(L, f->t, f->s, f->c, LLVMBuildLoad2(L->m.b, ty, f->accv, ""));
  LLVMBuildStore(L->m.b, cg_red_identity(L, f->ph->reduce_op, f->t), f->accv);
}

void cg_host_sum_walk(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv, BodyFn body,
                      void *arg) {
  const KernelIr *k = L->k;
  LoomDType t = cg_red_value_dtype(k, ph);
  LLVMTypeRef ty = cg_reg_type(&L->m, t);
  SumFlush f = {ph, t, accv, cg_entry_alloca(L, ty, "ksum"), cg_entry_alloca(L, ty, "kcomp")};
  LLVMValueRef zero = cg_red_identity(L, ph->reduce_op, t); /* +0 (and 0 + 0i) */
  LLVMBuildStore(L->m.b, zero, f.s);
  LLVMBuildStore(L->m.b, zero, f.c);
  CgWalkBlocks blk = {cg_sum_block_points(k), flush_block, &f, cg_entry_alloca(L, L->i64, "kcount")};
  cg_host_walk_blocked(L, k->nkeep, k->ndim, lo, hi, body, arg, &blk);
  flush_block(L, &f); /* the last, partial block */
  LLVMValueRef s = LLVMBuildLoad2(L->m.b, ty, f.s, ""), c = LLVMBuildLoad2(L->m.b, ty, f.c, "");
  LLVMBuildStore(L->m.b, cg_sum_settle(L, t, s, c), accv);
}

/* ---- integer sums of narrow values: 32-bit lanes within a block --------------------------------------
 * NumPy sums bool, int8/16 and uint8/16 into int64 (count_nonzero, (a < b).sum()): folded as widened, the
 * vector loop carries 8 int64 lanes per 512 bits, half the float32 lanes its loads fill. Within a block
 * of at most CG_SUM_BLOCK_VEC points a narrow value's partial sum fits an int32 (65535 * 2048 < 2^31), so
 * the walk folds the narrow values widened to int32 and adds each block's int32 sum, widened, into the
 * int64 accumulator at the block's end. Integer addition is exact modulo 2^64: the same bits as before. */
bool cg_sum_narrow(const KernelIr *k, const KPhase *ph) {
  static int on = -1; /* LOOM_HOST_NARROW_SUM=0: the widened fold (A/B timings) */
  if (!cg_env_int_once(&on, "LOOM_HOST_NARROW_SUM", 1)) return false;
  if (ph->kind != KP_REDUCE || ph->reduce_op != LOOM_REDUCE_SUM || ph->nstores) return false;
  if (dtype_bits((LoomDType)ph->acc_dtype) != 64 || !dtype_is_int((LoomDType)ph->acc_dtype)) return false;
  const KInstr *v = &k->instrs[ph->value];
  if (v->kind != KI_CAST || v->dtype != ph->acc_dtype) return false;
  LoomDType src = (LoomDType)k->instrs[v->src[0]].dtype;
  DKind kind = dtype_kind(src);
  return (kind == DK_BOOL || kind == DK_INT || kind == DK_UINT) && dtype_bits(src) <= 16;
}

typedef struct NarrowSum {
  const KPhase *ph;
  bool is_signed;
  LLVMValueRef acc32, acc64; /* allocas: the block's int32 sum, the phase's int64 one */
} NarrowSum;

static void body_narrow(Lower *L, void *arg) {
  NarrowSum *n = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  cg_clear_cache(L);
  cg_reduce_point(L, n->ph); /* the widening cast is left dead: its operand is what is summed */
  cg_host_keep_store(L, n->ph);
  LLVMValueRef src = L->cache[L->k->instrs[n->ph->value].src[0]];
  LLVMValueRef w = n->is_signed ? LLVMBuildSExt(b, src, i32, "") : LLVMBuildZExt(b, src, i32, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, i32, n->acc32, ""), w, ""), n->acc32);
  cg_clear_cache(L);
}

static void flush_narrow(Lower *L, void *arg) {
  NarrowSum *n = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  LLVMValueRef part = LLVMBuildLoad2(b, i32, n->acc32, "");
  part = n->is_signed ? LLVMBuildSExt(b, part, L->i64, "") : LLVMBuildZExt(b, part, L->i64, "");
  LLVMBuildStore(b, LLVMBuildAdd(b, LLVMBuildLoad2(b, L->i64, n->acc64, ""), part, ""), n->acc64);
  LLVMBuildStore(b, LLVMConstInt(i32, 0, 0), n->acc32);
}

void cg_host_narrow_sum_walk(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv) {
  const KernelIr *k = L->k;
  LoomDType src = (LoomDType)k->instrs[k->instrs[ph->value].src[0]].dtype;
  NarrowSum n = {ph, dtype_kind(src) == DK_INT, cg_entry_alloca(L, LLVMInt32TypeInContext(L->m.c), "nsum"), accv};
  LLVMBuildStore(L->m.b, LLVMConstInt(LLVMInt32TypeInContext(L->m.c), 0, 0), n.acc32);
  CgWalkBlocks blk = {CG_SUM_BLOCK_VEC, flush_narrow, &n, cg_entry_alloca(L, L->i64, "ncount")};
  cg_host_walk_blocked(L, k->nkeep, k->ndim, lo, hi, body_narrow, &n, &blk);
  flush_narrow(L, &n); /* the last, partial block */
}
