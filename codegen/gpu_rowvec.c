/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_rowvec.c: the ROW `main` entry's reduction of one O point with 16-byte loads (cg_gpu_reduce_row_vec).
 *
 * A block per row; each thread takes vectors tid, tid + bdim, ... of `lanes` points, ROW_VEC_UNROLL of them
 * per step with all their loads issued before any point is computed (a 4096-point float32 row and 256
 * threads: one step, one DRAM round trip per row, 64 bytes in flight per thread instead of the scalar
 * loop's two steps of 32). Applies when every loaded buffer is contiguous along the kernel's one R dim;
 * at run time the row must be whole vectors and every loaded buffer's row aligned to its vector, else the
 * scalar unrolled loop (cg_gpu_reduce_range) runs. Accumulator u takes vector u of every step, its points
 * in increasing order, and the accumulators are combined in order u = 0, 1, ... (cg_gpu_combine: an
 * arg-reduction keeps the first extreme by index): the same bits for the same shape and alignment.
 */
#include <stdlib.h>

#include "codegen/cg_lower.h"

typedef struct RowVecRed {
  const KPhase *ph;
  LoomDType vt;
} RowVecRed;

static bool vt_is_float(LoomDType vt) {
  return vt == LOOM_FLOAT16 || vt == LOOM_BFLOAT16 || vt == LOOM_FLOAT32 || vt == LOOM_FLOAT64;
}

/* LOOM_GPU_VEC_ROWS=0: the row `main` entry keeps scalar loads (A/B timings; read once per process). */
static bool vec_rows_off(void) {
  static int off = -1;
  if (off < 0) {
    const char *s = getenv("LOOM_GPU_VEC_ROWS");
    off = s && s[0] == '0' && s[1] == 0;
  }
  return off == 1;
}

/* Points per 16-byte load when every loaded buffer is contiguous along the kernel's one R dim (0: no). */
static int row_vec_lanes(const KernelIr *k) {
  if (k->snippet || k->ndim - k->nkeep != 1 || cg_kernel_addresses_by_value(k) || vec_rows_off()) return 0;
  int maxsize = 0;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind == KI_INDEX || in->kind == KI_OFFSET || in->kind == KI_USER) return 0;
    if (in->kind != KI_LOAD) continue;
    if (k->bufs[in->buf].layout[k->ndim - 1] != KL_ONE) return 0;
    int sz = (int)loom_dtype_size((LoomDType)k->bufs[in->buf].dtype);
    if (sz > maxsize) maxsize = sz;
  }
  return maxsize > 0 && 16 / maxsize >= 2 ? 16 / maxsize : 0;
}

#define ROW_VEC_UNROLL 4 /* vectors per thread per step: 4096 float32 points per 256 threads in one step */

/* Vector v's loads (points v * lanes ...) of every loaded buffer into vl[b]. */
static void row_vec_load(Lower *L, LLVMValueRef v, unsigned lanes, LLVMValueRef *vl, LLVMValueRef *first) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  *first = LLVMBuildMul(m->b, v, cg_iconst_i(L, lanes), "");
  cg_gpu_offsets(L, *first, k->nkeep, k->ndim, L->ooff, L->off);
  for (int bi = 0; bi < k->nbuf; bi++) vl[bi] = NULL;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || vl[in->buf]) continue;
    LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
    LLVMValueRef ld = LLVMBuildLoad2(m->b, cg_vec_type(m, st, lanes), cg_elem_ptr(L, in->buf, L->off[in->buf]), "");
    LLVMSetAlignment(ld, lanes * (unsigned)loom_dtype_size(st));
    vl[in->buf] = LLVMBuildFreeze(m->b, ld, ""); /* all the step's loads issued before any use */
  }
}

/* Whether an arg-reduction takes v over the accumulator a: strictly better, or the first NaN (cg_arg_better's
 * rule; for floats as one unordered compare and an ordered test of a: 3 instructions instead of 5). */
static LLVMValueRef row_vec_take(Lower *L, const RowVecRed *g, LLVMValueRef a, LLVMValueRef v) {
  if (!vt_is_float(g->vt)) return cg_arg_better(&L->m, (LoomReduceOp)g->ph->reduce_op, g->vt, a, v);
  LLVMBuilderRef b = L->m.b;
  /* ugt(v, a) = v > a or either NaN; with a not NaN: v > a or v NaN */
  LLVMValueRef u = LLVMBuildFCmp(b, g->ph->reduce_op == LOOM_REDUCE_ARGMAX ? LLVMRealUGT : LLVMRealULT, v, a, "");
  return LLVMBuildAnd(b, u, LLVMBuildFCmp(b, LLVMRealORD, a, a, ""), "");
}

/* Folds vector vl (first point `first`) lane by lane into (*a, *ai); an arg-reduction's index *ai has the
 * kernel's index type (row_vec_idx). */
static void row_vec_fold(Lower *L, const RowVecRed *g, LLVMValueRef *vl, LLVMValueRef first, unsigned lanes, LLVMValueRef *a,
                         LLVMValueRef *ai) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = vl[bi];
  for (unsigned l = 0; l < lanes; l++) {
    L->lane = l;
    cg_clear_cache(L);
    cg_eval_needed(L, &g->ph->value, 1);
    LLVMValueRef v = L->cache[g->ph->value];
    if (is_arg(g->ph->reduce_op)) {
      LLVMValueRef take = row_vec_take(L, g, *a, v);
      *a = LLVMBuildSelect(b, take, v, *a, "");
      *ai = LLVMBuildSelect(b, take, LLVMBuildAdd(b, first, cg_iconst_i(L, l), ""), *ai, "");
    } else {
      *a = cg_red_combine(L, g->ph->reduce_op, g->vt, *a, v);
    }
  }
  cg_clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lane = 0;
}

/* An index accumulator in the kernel's index type as cg_gpu_combine's i64 (empty: GPU_EMPTY_INDEX). */
static LLVMValueRef wide_index(Lower *L, LLVMValueRef ai, LLVMValueRef empty) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef is_empty = LLVMBuildICmp(b, LLVMIntEQ, ai, empty, "");
  return LLVMBuildSelect(b, is_empty, cg_i64(&L->m, GPU_EMPTY_INDEX), cg_to_i64(L, ai), "");
}

bool cg_gpu_reduce_row_vec(Lower *L, int p, LLVMValueRef tid, LLVMValueRef bdim, LLVMValueRef nr) {
  const KernelIr *k = L->k;
  int lanes = row_vec_lanes(k);
  if (!lanes || (L->mom_on && p == 0) || k->nbuf > 64) return false;
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  RowVecRed g = {&k->phases[p], cg_red_value_dtype(k, &k->phases[p])};
  bool arg = is_arg(g.ph->reduce_op);
  LLVMTypeRef vty = cg_reg_type(m, g.vt);
  LLVMValueRef resv = cg_entry_alloca(L, vty, "rvres"), resi = cg_entry_alloca(L, L->i64, "rvresi");
  /* at run time: whole vectors (nr % lanes == 0) and every loaded buffer's row aligned to its vector */
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, nr, cg_iconst_i(L, lanes), ""), cg_iconst_i(L, 0), "");
  cg_gpu_offsets(L, cg_iconst_i(L, 0), k->nkeep, k->ndim, L->ooff, L->off);
  for (int bi = 0; bi < k->nbuf; bi++) {
    bool loaded = false;
    for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
    if (!loaded) continue;
    unsigned vb = (unsigned)lanes * (unsigned)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    LLVMValueRef addr = LLVMBuildPtrToInt(b, cg_elem_ptr(L, bi, L->off[bi]), L->i64, "");
    LLVMValueRef mis = LLVMBuildAnd(b, addr, cg_i64(m, vb - 1), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, mis, cg_i64(m, 0), ""), "");
  }
  LLVMBasicBlockRef vbb = cg_new_bb(L, "rv.vec"), sbb = cg_new_bb(L, "rv.scalar"), join = cg_new_bb(L, "rv.join");
  LLVMBuildCondBr(b, ok, vbb, sbb);
  /* scalar: the unrolled loop as before */
  LLVMPositionBuilderAtEnd(b, sbb);
  cg_gpu_reduce_range(L, p, tid, nr, bdim);
  LLVMBuildStore(b, L->acc[p], resv);
  LLVMBuildStore(b, L->accidx[p], resi);
  LLVMBuildBr(b, join);
  /* vector: ROW_VEC_UNROLL independent accumulators, accumulator u fed vector u of each step (its points
   * in increasing order: an arg-reduction keeps the first extreme, cg_gpu_combine's index order across
   * them); accumulator 0 starts at the thread's first point (an all-identity row still gets an index) */
  LLVMPositionBuilderAtEnd(b, vbb);
  LLVMValueRef nvec = LLVMBuildUDiv(b, nr, cg_iconst_i(L, lanes), "");
  LLVMValueRef accs[ROW_VEC_UNROLL], accis[ROW_VEC_UNROLL];
  /* indices in the kernel's index type (no widening per point); empty: its largest value, never an index
   * of a row (nr fits the type), widened to GPU_EMPTY_INDEX at the end */
  LLVMValueRef empty = LLVMConstAllOnes(L->ity);
  empty = LLVMBuildLShr(b, empty, cg_iconst_i(L, 1), "");
  for (int u = 0; u < ROW_VEC_UNROLL; u++) {
    accs[u] = cg_entry_alloca(L, vty, "rva");
    accis[u] = cg_entry_alloca(L, L->ity, "rvai");
    LLVMBuildStore(b, cg_red_identity(L, g.ph->reduce_op, g.vt), accs[u]);
    LLVMValueRef i0 = empty;
    if (u == 0)
      i0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, tid, nvec, ""),
                           LLVMBuildMul(b, tid, cg_iconst_i(L, lanes), ""), empty, "");
    LLVMBuildStore(b, i0, accis[u]);
  }
  LLVMValueRef iv = cg_entry_alloca(L, L->ity, "rvi");
  LLVMBuildStore(b, tid, iv);
  LLVMValueRef limit = LLVMBuildSub(b, nvec, LLVMBuildMul(b, bdim, cg_iconst_i(L, ROW_VEC_UNROLL - 1), ""), "");
  LLVMBasicBlockRef head = cg_new_bb(L, "rv.head"), body = cg_new_bb(L, "rv.body"), exit = cg_new_bb(L, "rv.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef vl[ROW_VEC_UNROLL][64], first[ROW_VEC_UNROLL];
  for (int u = 0; u < ROW_VEC_UNROLL; u++)
    row_vec_load(L, LLVMBuildAdd(b, i, LLVMBuildMul(b, bdim, cg_iconst_i(L, u), ""), ""), (unsigned)lanes, vl[u], &first[u]);
  for (int u = 0; u < ROW_VEC_UNROLL; u++) {
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[u], ""), ai = LLVMBuildLoad2(b, L->ity, accis[u], "");
    row_vec_fold(L, &g, vl[u], first[u], (unsigned)lanes, &a, &ai);
    LLVMBuildStore(b, a, accs[u]);
    LLVMBuildStore(b, ai, accis[u]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, bdim, cg_iconst_i(L, ROW_VEC_UNROLL), ""), ""), iv);
  LLVMBuildBr(b, head);
  /* the remaining vectors, one per step, into accumulator 0 */
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBasicBlockRef rhead = cg_new_bb(L, "rv.rhead"), rbody = cg_new_bb(L, "rv.rbody"), rexit = cg_new_bb(L, "rv.rexit");
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rhead);
  i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, nvec, ""), rbody, rexit);
  LLVMPositionBuilderAtEnd(b, rbody);
  {
    LLVMValueRef f0;
    row_vec_load(L, i, (unsigned)lanes, vl[0], &f0);
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = LLVMBuildLoad2(b, L->ity, accis[0], "");
    row_vec_fold(L, &g, vl[0], f0, (unsigned)lanes, &a, &ai);
    LLVMBuildStore(b, a, accs[0]);
    LLVMBuildStore(b, ai, accis[0]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, bdim, ""), iv);
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rexit);
  LLVMValueRef ai = wide_index(L, LLVMBuildLoad2(b, L->ity, accis[0], ""), empty);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], "");
  for (int u = 1; u < ROW_VEC_UNROLL; u++)
    cg_gpu_combine(L, g.ph, g.vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[u], ""),
                   arg ? wide_index(L, LLVMBuildLoad2(b, L->ity, accis[u], ""), empty) : ai, true);
  LLVMBuildStore(b, a, resv);
  LLVMBuildStore(b, ai, resi);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  L->acc[p] = LLVMBuildLoad2(b, vty, resv, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, resi, "");
  return true;
}

/* ---- packed (key, index) block reductions of arg-reductions ----------------------------------------------
 *
 * An argmin / argmax accumulator whose value has at most 32 bits (float32, float16 and bfloat16 in their
 * float32 registers, integers of 8 to 32 bits) and whose index fits in 32 bits (index_bits == 32) is one
 * 64-bit word across threads: key << 32 | (2^32 - 1 - index), where the key orders values as the
 * reduction prefers them (larger key: better; every NaN the largest key, -0.0 the key of +0.0, as an
 * ordered compare sees them). The combine of two accumulators is then an unsigned max: the better value,
 * of equal values the smaller index, a first NaN kept: what cg_gpu_combine gives, in 2 shuffles and a
 * 64-bit max per butterfly step instead of 3 shuffles and ~20 instructions, and the waves' words fold by
 * the same max in every thread (one barrier round, no tree in wave 0). The word 0 is an empty
 * accumulator (no index): every real one has a nonzero low half. max is associative and commutative,
 * so the result does not depend on the fold's order. LOOM_GPU_ARG_PACKED=0: the (value, index) pairs as
 * before (A/B timings; read once per process, use a fresh LOOM_CACHE_DIR per setting). */

static bool arg_packed_off(void) {
  static int off = -1;
  if (off < 0) {
    const char *s = getenv("LOOM_GPU_ARG_PACKED");
    off = s && s[0] == '0' && s[1] == 0;
  }
  return off == 1;
}

/* Bits of the packed key's value (0: the accumulator does not pack). */
static unsigned packed_bits(const Lower *L, LoomDType vt) {
  if (L->k->index_bits != 32 || arg_packed_off()) return 0;
  switch (vt) {
  case LOOM_FLOAT16: case LOOM_BFLOAT16: case LOOM_FLOAT32: case LOOM_INT32: case LOOM_UINT32: return 32;
  case LOOM_INT16: case LOOM_UINT16: return 16;
  case LOOM_INT8: case LOOM_UINT8: return 8;
  default: return 0;
  }
}

static bool vt_float(LoomDType vt) { return vt == LOOM_FLOAT16 || vt == LOOM_BFLOAT16 || vt == LOOM_FLOAT32; }
static bool vt_signed(LoomDType vt) { return vt == LOOM_INT8 || vt == LOOM_INT16 || vt == LOOM_INT32; }

/* The i32 key of v: order-preserving bits (a float's sign-magnitude made two's-complement-like and offset,
 * a signed integer's sign bit flipped), complemented for argmin; NaN: all ones. */
static LLVMValueRef arg_key(Lower *L, LoomReduceOp op, LoomDType vt, unsigned w, LLVMValueRef v) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c), iw = LLVMIntTypeInContext(L->m.c, w);
  LLVMValueRef sign = LLVMConstInt(iw, 1ull << (w - 1), 0), ord;
  if (vt_float(vt)) {
    /* -0.0 + 0.0 is +0.0 (round to nearest), every other value unchanged: both zeros one key */
    LLVMValueRef z = LLVMBuildFAdd(b, v, LLVMConstReal(LLVMTypeOf(v), 0.0), "");
    LLVMValueRef u = LLVMBuildBitCast(b, z, iw, "");
    LLVMValueRef mask = LLVMBuildOr(b, LLVMBuildAShr(b, u, LLVMConstInt(iw, w - 1, 0), ""), sign, "");
    ord = LLVMBuildXor(b, u, mask, "");
  } else {
    ord = vt_signed(vt) ? LLVMBuildXor(b, v, sign, "") : v;
  }
  if (op == LOOM_REDUCE_ARGMIN) ord = LLVMBuildNot(b, ord, "");
  LLVMValueRef key = w < 32 ? LLVMBuildZExt(b, ord, i32, "") : ord;
  if (vt_float(vt))
    key = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), LLVMConstAllOnes(i32), key, "");
  return key;
}

/* The value of key (arg_key's inverse but for NaN payloads and the sign of zero). */
static LLVMValueRef arg_unkey(Lower *L, LoomReduceOp op, LoomDType vt, unsigned w, LLVMValueRef key) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef iw = LLVMIntTypeInContext(L->m.c, w);
  LLVMValueRef ord = w < 32 ? LLVMBuildTrunc(b, key, iw, "") : key;
  if (op == LOOM_REDUCE_ARGMIN) ord = LLVMBuildNot(b, ord, "");
  LLVMValueRef sign = LLVMConstInt(iw, 1ull << (w - 1), 0);
  if (!vt_float(vt)) return vt_signed(vt) ? LLVMBuildXor(b, ord, sign, "") : ord;
  /* a set top bit was a positive float (flip the sign bit back), a clear one a negative (complement) */
  LLVMValueRef pos = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, ord, sign, ""), LLVMConstInt(iw, 0, 0), "");
  LLVMValueRef u = LLVMBuildSelect(b, pos, LLVMBuildXor(b, ord, sign, ""), LLVMBuildNot(b, ord, ""), "");
  return LLVMBuildBitCast(b, u, cg_reg_type(&L->m, vt), "");
}

static LLVMValueRef umax64(LLVMBuilderRef b, LLVMValueRef x, LLVMValueRef y) {
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, x, y, ""), x, y, "");
}

bool cg_gpu_arg_block_reduce_packed(Lower *L, int p) {
  const KPhase *ph = &L->k->phases[p];
  LoomDType vt = cg_red_value_dtype(L->k, ph);
  unsigned w = is_arg(ph->reduce_op) && L->arg_tree ? packed_bits(L, vt) : 0;
  if (!w || LLVMTypeOf(L->acc[p]) != cg_reg_type(&L->m, vt)) return false;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomReduceOp op = (LoomReduceOp)ph->reduce_op;
  LLVMTypeRef i64 = L->i64, i32 = LLVMInt32TypeInContext(m->c);
  const int wave = m->gpu->wave, wave_log2 = wave == 64 ? 6 : 5;
  /* pack: (key << 32) | ~index, 0 for an empty accumulator */
  LLVMValueRef vi = L->accidx[p];
  LLVMValueRef low = LLVMBuildZExt(b, LLVMBuildNot(b, LLVMBuildTrunc(b, vi, i32, ""), ""), i64, "");
  LLVMValueRef hi = LLVMBuildShl(b, LLVMBuildZExt(b, arg_key(L, op, vt, w, L->acc[p]), i64, ""), cg_i64(m, 32), "");
  LLVMValueRef pk = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, vi, cg_i64(m, GPU_EMPTY_INDEX), ""), cg_i64(m, 0),
                                    LLVMBuildOr(b, hi, low, ""), "");
  for (int off = wave / 2; off >= 1; off /= 2) pk = umax64(b, pk, cg_gpu_shfl_xor(L, pk, off));
  /* one slot per wave, written by its lane 0; every thread folds them */
  LLVMValueRef slots = cg_gpu_shared_slots(L, "loom.red.i");
  LLVMTypeRef at = LLVMArrayType2(i64, 32);
  LLVMValueRef tid = LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_THREAD_ID), i64, "");
  LLVMValueRef lane = LLVMBuildAnd(b, tid, cg_i64(m, wave - 1), "");
  LLVMBasicBlockRef wr = cg_new_bb(L, "apk.write"), after = cg_new_bb(L, "apk.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_i64(m, 0), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {cg_i64(m, 0), LLVMBuildLShr(b, tid, cg_i64(m, wave_log2), "")};
  LLVMBuildStore(b, pk, LLVMBuildGEP2(b, at, slots, ix, 2, ""));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  m->gpu->barrier(m);
  LLVMValueRef nw = LLVMBuildLShr(b, LLVMBuildZExt(b, m->gpu->index(m, CG_GPU_BLOCK_DIM), i64, ""), cg_i64(m, wave_log2), "");
  LLVMValueRef accp = cg_entry_alloca(L, i64, "apk"), wv = cg_entry_alloca(L, i64, "apkw");
  LLVMValueRef ix0[2] = {cg_i64(m, 0), cg_i64(m, 0)}; /* wave 0's, then waves 1 .. nw - 1 (a block of < 1 wave: 0's) */
  LLVMBuildStore(b, LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, at, slots, ix0, 2, ""), ""), accp);
  LLVMBuildStore(b, cg_i64(m, 1), wv);
  LLVMBasicBlockRef head = cg_new_bb(L, "apk.head"), body = cg_new_bb(L, "apk.body"), done = cg_new_bb(L, "apk.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef wi = LLVMBuildLoad2(b, i64, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, wi, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {cg_i64(m, 0), wi};
  LLVMValueRef s = LLVMBuildLoad2(b, i64, LLVMBuildGEP2(b, at, slots, ixw, 2, ""), "");
  LLVMBuildStore(b, umax64(b, LLVMBuildLoad2(b, i64, accp, ""), s), accp);
  LLVMBuildStore(b, LLVMBuildAdd(b, wi, cg_i64(m, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  pk = LLVMBuildLoad2(b, i64, accp, "");
  m->gpu->barrier(m); /* the slots are free again */
  /* unpack: an empty word gives (identity, GPU_EMPTY_INDEX) */
  LLVMValueRef empty = LLVMBuildICmp(b, LLVMIntEQ, pk, cg_i64(m, 0), "");
  LLVMValueRef idx = LLVMBuildZExt(b, LLVMBuildNot(b, LLVMBuildTrunc(b, pk, i32, ""), ""), i64, "");
  LLVMValueRef val = arg_unkey(L, op, vt, w, LLVMBuildTrunc(b, LLVMBuildLShr(b, pk, cg_i64(m, 32), ""), i32, ""));
  L->acc[p] = LLVMBuildSelect(b, empty, cg_red_identity(L, ph->reduce_op, vt), val, "");
  L->accidx[p] = LLVMBuildSelect(b, empty, cg_i64(m, GPU_EMPTY_INDEX), idx, "");
  if (L->mom_on && p == 0) cg_gpu_mom_block_reduce(L); /* the folded phases' moments ride along */
  return true;
}
