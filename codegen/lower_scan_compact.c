/* SPDX-License-Identifier: Apache-2.0 */
/* lower_scan_compact.c: host stream compaction (nonzero, flatnonzero, argwhere, x[mask], compress,
 * extract) as vector code: a KP_SCAN phase whose stores are compaction scatters (and other scatters into
 * other buffers, such as the count's slot).
 *
 * The shape (_indexing.py _compact_graph / _compact_rows, joined by passes/fuse_gather.c): the scan is a
 * sum of cast(c), c a bool, and a compaction store is a scatter (SET or PUT) of a value that does not
 * read the scan at where(c, e, q) under a limit, where e is the running value plus terms that do not
 * change along R (acc - 1 + the row's first slot) and q and the limit do not change along R either (the
 * where may be widened by a cast of a signed int: the values then sign-extend). The kept points then go,
 * in order, to consecutive slots e(acc0 + 1), e(acc0 + 2), ...
 *
 * The row runs in chunks of CG_COMPACT_BLOCK points. A chunk's first loop is a plain map over its
 * points (the generic evaluator; LLVM's loop vectorizer widens it): c as a byte goes to a stack array and
 * the running value sums c. Then, where every q is outside its limit and the chunk's slots
 * e(acc0 + 1) .. e(acc0 + count) lie inside it and are consecutive (checked at run time: the cast and
 * the adds of e could wrap), each store's values are compacted: in a chunk keeping under one point in
 * CG_COMPACT_SPARSE, one by one, each evaluated at its kept point (the set bits of 64-point mask words);
 * else a second map stages every point's value in memory form, then 64 bytes at a time go through an
 * AVX-512 compress in registers (vpcompress; its
 * memory form, LLVM's llvm.masked.compressstore, is microcoded on Zen 4: ~10x slower, measured) and a
 * store masked to the kept lanes' count, at the running slot. Any other chunk runs the scan's exact
 * semantics point by point (the second map, then a guarded store at e or q). The other scatters run point
 * by point after that (running value from the staged mask, the point's offsets), exactly.
 *
 * Taken on hosts with AVX-512F (4-, 8- and 16-byte values; 16 as pairs of 8-byte lanes) and with
 * AVX-512BW and VBMI2 for 1- and 2-byte values; elsewhere, or for another scan, cg_host_scan_row's
 * serial loop runs (LOOM_HOST_COMPACT_VEC=0 forces it, for A/B timings; read once per process).
 */
#include <string.h>

#include "codegen/cg_lower.h"

#define CG_COMPACT_BLOCK 512 /* points per chunk: stack arrays of 512 bytes + 512 values per store */
#define CG_COMPACT_STORES 4  /* at most this many compaction stores (values compacted by one mask) */
#define CG_COMPACT_SPARSE 16 /* a chunk keeping under one point in this many copies them one by one */

typedef struct Compact {
  int p;
  const KPhase *ph;
  int32_t cond;                          /* the bool whose cast the scan sums */
  int ns;
  const KStore *st[CG_COMPACT_STORES];
  int32_t e[CG_COMPACT_STORES], q[CG_COMPACT_STORES]; /* where(cond, e, q): the slot of a kept / skipped point */
  int size[CG_COMPACT_STORES];           /* bytes of the store's buffer element */
  LLVMValueRef qv[CG_COMPACT_STORES], lim[CG_COMPACT_STORES]; /* q and limit at the O point (i64) */
  LLVMValueRef mbuf, vbuf[CG_COMPACT_STORES]; /* stack: c per point (i8), each store's values */
  LLVMValueRef accv, c0, fast;           /* running value; chunk's first R point; every q out of range */
  int nother;                            /* other scatter stores, run point by point (point_other) */
  const KStore *other[CG_COMPACT_STORES];
  LLVMValueRef *offs;                    /* nbuf: point_other's offsets */
} Compact;

/* ---- the plan --------------------------------------------------------------------------------------- */

/* uni[i]: instruction i has one value along the R dim (rd) at an O point. */
static void uniform_r(const KernelIr *k, int rd, uint8_t *uni) {
  for (int32_t i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    uint8_t u = 0;
    switch (in->kind) {
    case KI_CONST: case KI_PARAM: case KI_REDSIZE: case KI_NPOINTS: u = 1; break;
    case KI_LOAD: case KI_OFFSET: u = in->buf >= 0 && in->buf < k->nbuf && k->bufs[in->buf].layout[rd] == KL_ZERO; break;
    case KI_ELEM: case KI_CAST:
      u = 1;
      for (int j = 0; j < cg_instr_nsrc(in); j++) u &= uni[in->src[j]];
      break;
    default: u = 0;
    }
    uni[i] = u;
  }
}

/* Whether instruction i is the scan's running value of phase p plus (integer) terms uniform along R. */
static bool acc_affine(const KernelIr *k, int p, const uint8_t *uni, int32_t i) {
  const KInstr *in = &k->instrs[i];
  if (!dtype_is_int((LoomDType)in->dtype)) return false;
  if (in->kind == KI_ACC) return in->phase == p;
  if (in->kind == KI_CAST) {
    LoomDType s = (LoomDType)k->instrs[in->src[0]].dtype;
    return dtype_is_int(s) && dtype_bits(s) <= dtype_bits((LoomDType)in->dtype) && acc_affine(k, p, uni, in->src[0]);
  }
  if (in->kind != KI_ELEM) return false;
  if (in->op == LOOM_OP_ADD)
    return (acc_affine(k, p, uni, in->src[0]) && uni[in->src[1]]) || (uni[in->src[0]] && acc_affine(k, p, uni, in->src[1]));
  if (in->op == LOOM_OP_SUB) return acc_affine(k, p, uni, in->src[0]) && uni[in->src[1]];
  return false;
}

/* Whether instruction i's cone reads KI_ACC of phase p. */
static bool reads_acc(const KernelIr *k, int p, int32_t i, uint8_t *seen) {
  if (seen[i]) return false;
  seen[i] = 1;
  const KInstr *in = &k->instrs[i];
  if (in->kind == KI_ACC && in->phase == p) return true;
  for (int j = 0; j < cg_instr_nsrc(in); j++)
    if (in->src[j] >= 0 && reads_acc(k, p, in->src[j], seen)) return true;
  return false;
}

/* Whether the function's target features (its "target-features" attribute) enable f ("+avx512f"). */
static bool fn_feature(Lower *L, const char *f) {
  LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex, "target-features", 15);
  if (!a) return false;
  unsigned len = 0;
  const char *s = LLVMGetStringAttributeValue(a, &len);
  size_t n = strlen(f);
  for (unsigned i = 0; s && i + n <= len; i++)
    if ((i == 0 || s[i - 1] == ',') && !memcmp(s + i, f, n) && (i + n == len || s[i + n] == ','))
      return true;
  return false;
}

static bool compact_plan(Lower *L, int p, Compact *c) {
  static int knob = -1;
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  memset(c, 0, sizeof *c);
  c->p = p;
  c->ph = ph;
  if (!cg_env_int_once(&knob, "LOOM_HOST_COMPACT_VEC", 1) || L->m.gpu || k->snippet) return false;
  if (ph->reduce_op != LOOM_REDUCE_SUM || ph->scan_round || !dtype_is_int((LoomDType)ph->acc_dtype)) return false;
  if (k->ndim - k->nkeep != 1 || ph->nstores < 1 || ph->nstores > CG_COMPACT_STORES) return false;
  const KInstr *v = &k->instrs[ph->value];
  if (v->kind != KI_CAST || k->instrs[v->src[0]].dtype != LOOM_BOOL) return false;
  c->cond = v->src[0];
  bool f = fn_feature(L, "+avx512f"), small = f && fn_feature(L, "+avx512bw") && fn_feature(L, "+avx512vbmi2");
  uint8_t *uni = ctx_calloc(L->ctx, (size_t)k->ninstr * 2, 1);
  if (!uni) return false;
  uniform_r(k, k->ndim - 1, uni);
  bool ok = !reads_acc(k, p, c->cond, uni + k->ninstr);
  for (int i = 0; ok && i < ph->nstores; i++) {
    const KStore *st = &k->stores[ph->store_begin + i];
    int s = c->ns;
    const KInstr *ix = &k->instrs[st->index];
    while (ix->kind == KI_CAST && dtype_kind((LoomDType)k->instrs[ix->src[0]].dtype) == DK_INT &&
           dtype_bits((LoomDType)k->instrs[ix->src[0]].dtype) <= dtype_bits((LoomDType)ix->dtype))
      ix = &k->instrs[ix->src[0]]; /* cast(where(c, e, q)) of a signed where: where(c, sext e, sext q) */
    int size = (int)loom_dtype_size((LoomDType)k->bufs[st->buf].dtype);
    memset(uni + k->ninstr, 0, (size_t)k->ninstr);
    bool compact = st->scatter && st->op != IR_SCATTER_ADD && ix->kind == KI_ELEM && ix->op == LOOM_OP_WHERE &&
                   ix->src[0] == c->cond && acc_affine(k, p, uni, ix->src[1]) && uni[ix->src[2]] && uni[st->limit] &&
                   !reads_acc(k, p, st->value, uni + k->ninstr) &&
                   ((size >= 4 && size <= 16 && (size & (size - 1)) == 0 && f) || ((size == 1 || size == 2) && small));
    if (!compact) { /* another scatter (the count's slot): point by point, after the chunk's map */
      ok = st->scatter && st->op != IR_SCATTER_ADD && c->nother < CG_COMPACT_STORES;
      if (ok) c->other[c->nother++] = st;
      continue;
    }
    c->st[s] = st;
    c->e[s] = ix->src[1];
    c->q[s] = ix->src[2];
    c->size[s] = size;
    c->ns++;
  }
  ctx_free(L->ctx, uni);
  /* some compaction; each buffer written by one store (the order of stores into one buffer would matter) */
  ok = ok && c->ns > 0;
  for (int i = 0; ok && i < ph->nstores; i++)
    for (int j = i + 1; ok && j < ph->nstores; j++)
      ok = k->stores[ph->store_begin + i].buf != k->stores[ph->store_begin + j].buf;
  return ok;
}

/* ---- emission ----------------------------------------------------------------------------------------- */

typedef void (*LoopBody)(Lower *L, LLVMValueRef i, void *arg);

/* for (i = lo; i < hi; i += step) body(i), i64 */
static void for_i64(Lower *L, LLVMValueRef lo, LLVMValueRef hi, int64_t step, LoopBody body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef iv = cg_entry_alloca(L, L->i64, "ci");
  LLVMBuildStore(b, lo, iv);
  LLVMBasicBlockRef head = cg_new_bb(L, "compact.head"), bb = cg_new_bb(L, "compact.body"), exit = cg_new_bb(L, "compact.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->i64, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, hi, ""), bb, exit);
  LLVMPositionBuilderAtEnd(b, bb);
  body(L, i, arg);
  LLVMBuildStore(b, LLVMBuildAdd(b, i, cg_i64(&L->m, step), ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
}

static LLVMValueRef to_i64(Lower *L, LLVMValueRef v) {
  return LLVMTypeOf(v) == L->i64 ? v : LLVMBuildSExt(L->m.b, v, L->i64, "");
}

/* Store s's element `idx` (int64, past the buffer's offset at the O point). */
static LLVMValueRef out_ptr(Lower *L, const KStore *st, LLVMValueRef idx) {
  return cg_elem_ptr(L, st->buf, LLVMBuildAdd(L->m.b, to_i64(L, L->off[st->buf]), idx, ""));
}

/* e of store s with the running value acc (uniform loads read at the O point's offsets). */
static LLVMValueRef slot_at(Lower *L, Compact *c, int s, LLVMValueRef acc) {
  cg_clear_cache(L);
  L->acc[c->p] = acc;
  L->accidx[c->p] = cg_i64(&L->m, 0);
  cg_eval_needed(L, &c->e[s], 1);
  LLVMValueRef e = to_i64(L, L->cache[c->e[s]]);
  cg_clear_cache(L);
  return e;
}

/* The low min(left, w) bits of a w-bit integer (left >= 0): the lanes of a group that hold points. */
static LLVMValueRef low_bits(Lower *L, LLVMValueRef left, unsigned w) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef wt = LLVMIntTypeInContext(L->m.c, w);
  LLVMValueRef sh = LLVMBuildTrunc(b, LLVMBuildAnd(b, left, cg_i64(&L->m, w - 1), ""), wt, "");
  LLVMValueRef part = LLVMBuildSub(b, LLVMBuildShl(b, LLVMConstInt(wt, 1, 0), sh, ""), LLVMConstInt(wt, 1, 0), "");
  LLVMValueRef all = LLVMBuildICmp(b, LLVMIntSGE, left, cg_i64(&L->m, w), "");
  return LLVMBuildSelect(b, all, LLVMConstAllOnes(wt), part, "");
}

static LLVMValueRef byte_ptr(Lower *L, LLVMValueRef base, LLVMValueRef off) {
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), base, &off, 1, "");
}

/* A point of the chunk's first map: c and the running value. */
static void body_stage(Lower *L, void *arg) {
  Compact *c = arg;
  LLVMBuilderRef b = L->m.b;
  cg_clear_cache(L);
  cg_eval_needed(L, &c->ph->value, 1);
  LLVMValueRef slot = LLVMBuildSub(b, L->lin, c->c0, "slot");
  LLVMTypeRef i8 = LLVMInt8TypeInContext(L->m.c);
  LLVMBuildStore(b, LLVMBuildZExt(b, L->cache[c->cond], i8, ""), byte_ptr(L, c->mbuf, slot));
  LLVMTypeRef at = cg_reg_type(&L->m, (LoomDType)c->ph->acc_dtype);
  LLVMBuildStore(b, cg_scan_step(L, c->ph, LLVMBuildLoad2(b, at, c->accv, ""), L->cache[c->ph->value]), c->accv);
  cg_clear_cache(L);
}

/* Compaction store s's value at the current point in memory form. */
static LLVMValueRef store_value(Lower *L, Compact *c, int s) {
  const KernelIr *k = L->k;
  LoomDType bt = (LoomDType)k->bufs[c->st[s]->buf].dtype;
  return cg_to_mem(&L->m, (LoomDType)k->instrs[c->st[s]->value].dtype, bt, L->cache[c->st[s]->value]);
}

/* A point of the chunk's second map (dense and exact chunks): each compaction store's value. */
static void body_values(Lower *L, void *arg) {
  Compact *c = arg;
  LLVMBuilderRef b = L->m.b;
  int32_t roots[CG_COMPACT_STORES];
  for (int s = 0; s < c->ns; s++) roots[s] = c->st[s]->value;
  cg_clear_cache(L);
  cg_eval_needed(L, roots, c->ns);
  LLVMValueRef slot = LLVMBuildSub(b, L->lin, c->c0, "slot");
  for (int s = 0; s < c->ns; s++) {
    LoomDType bt = (LoomDType)L->k->bufs[c->st[s]->buf].dtype;
    LLVMValueRef at_s = LLVMBuildGEP2(b, cg_mem_type(&L->m, bt), c->vbuf[s], &slot, 1, "");
    LLVMSetAlignment(LLVMBuildStore(b, store_value(L, c, s), at_s), dtype_align(bt));
  }
  cg_clear_cache(L);
}

/* L->off and L->lin at R point r of the O point (the one R dim: outer offset + r * stride), in c->offs;
 * *saved gets the O point's offsets back (leave_point). */
static void enter_point(Lower *L, Compact *c, LLVMValueRef r, LLVMValueRef **saved, LLVMValueRef *lin) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef *outer = L->off;
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef st = L->stride[bi * k->ndim + k->ndim - 1];
    LLVMValueRef rr = LLVMTypeOf(st) == LLVMTypeOf(r) ? r : LLVMBuildTrunc(b, r, LLVMTypeOf(st), "");
    c->offs[bi] = LLVMBuildAdd(b, outer[bi], LLVMBuildMul(b, rr, st, ""), "");
  }
  *saved = outer;
  *lin = L->lin;
  L->off = c->offs;
  L->lin = r;
  cg_clear_cache(L);
}

static void leave_point(Lower *L, LLVMValueRef *saved, LLVMValueRef lin) {
  cg_clear_cache(L);
  L->off = saved;
  L->lin = lin;
}

typedef struct Flush {
  Compact *c;
  int s;
  LLVMValueRef n, dst, pos; /* the chunk's points; store s's first slot's address; alloca: kept so far */
  LLVMValueRef acc;         /* exact: alloca of the running value */
} Flush;

/* 64 bytes of store s's staged values: G points, W lanes of L bytes (a 16-byte value: two lanes). */
static void group_vec(Lower *L, LLVMValueRef g, void *arg) {
  Flush *f = arg;
  Compact *c = f->c;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int size = c->size[f->s], lb = size > 8 ? 8 : size, reps = size / lb, G = 64 / size, W = 64 / lb;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(m->c), i1 = LLVMInt1TypeInContext(m->c), lt = LLVMIntTypeInContext(m->c, (unsigned)lb * 8);
  LLVMTypeRef mvt = LLVMVectorType(i8, (unsigned)G), vt = LLVMVectorType(lt, (unsigned)W);
  LLVMValueRef first = LLVMBuildMul(b, g, cg_i64(m, G), ""); /* the group's first point */
  LLVMValueRef mv = LLVMBuildLoad2(b, mvt, byte_ptr(L, c->mbuf, first), "");
  LLVMSetAlignment(mv, 1);
  LLVMTypeRef gt = LLVMIntTypeInContext(m->c, (unsigned)G);
  LLVMValueRef ne = LLVMBuildBitCast(b, LLVMBuildICmp(b, LLVMIntNE, mv, LLVMConstNull(mvt), ""), gt, "");
  LLVMValueRef bits = LLVMBuildAnd(b, ne, low_bits(L, LLVMBuildSub(b, f->n, first, ""), (unsigned)G), "");
  LLVMValueRef keep = LLVMBuildBitCast(b, bits, LLVMVectorType(i1, (unsigned)G), "keep");
  LLVMValueRef kc = LLVMBuildZExt(b, cg_intrinsic(m, "llvm.ctpop", &gt, 1, &bits, 1), L->i64, "kept");
  LLVMValueRef lmask = keep;
  if (reps > 1) { /* each point's bit for each of its lanes */
    LLVMValueRef sh[64];
    for (int i = 0; i < W; i++) sh[i] = LLVMConstInt(LLVMInt32TypeInContext(m->c), (unsigned long long)(i / reps), 0);
    lmask = LLVMBuildShuffleVector(b, keep, LLVMGetUndef(LLVMTypeOf(keep)), LLVMConstVector(sh, (unsigned)W), "");
  }
  LLVMValueRef vals = LLVMBuildLoad2(b, vt, byte_ptr(L, c->vbuf[f->s], LLVMBuildMul(b, g, cg_i64(m, 64), "")), "");
  LLVMSetAlignment(vals, 64);
  LLVMValueRef cargs[3] = {vals, LLVMConstNull(vt), lmask};
  LLVMValueRef packed = cg_intrinsic(m, "llvm.x86.avx512.mask.compress", &vt, 1, cargs, 3);
  /* the first kept * reps lanes: (1 << n) - 1, all ones when n == W */
  LLVMTypeRef wt = LLVMIntTypeInContext(m->c, (unsigned)W);
  LLVMValueRef nl = LLVMBuildTrunc(b, LLVMBuildMul(b, kc, cg_i64(m, reps), ""), wt, "");
  LLVMValueRef one = LLVMConstInt(wt, 1, 0), allw = LLVMConstAllOnes(wt);
  LLVMValueRef low = LLVMBuildSub(b, LLVMBuildShl(b, one, LLVMBuildAnd(b, nl, LLVMConstInt(wt, (unsigned long long)W - 1, 0), ""), ""), one, "");
  LLVMValueRef full = LLVMBuildICmp(b, LLVMIntEQ, kc, cg_i64(m, G), "");
  LLVMValueRef smask = LLVMBuildBitCast(b, LLVMBuildSelect(b, full, allw, low, ""), LLVMVectorType(i1, (unsigned)W), "");
  LLVMValueRef pos = LLVMBuildLoad2(b, L->i64, f->pos, "");
  LLVMValueRef at = byte_ptr(L, f->dst, LLVMBuildMul(b, pos, cg_i64(m, size), ""));
  LLVMTypeRef st[2] = {vt, L->ptr};
  LLVMValueRef sargs[4] = {packed, at, LLVMConstInt(LLVMInt32TypeInContext(m->c), (unsigned long long)lb, 0), smask};
  cg_intrinsic(m, "llvm.masked.store", st, 2, sargs, 4);
  LLVMBuildStore(b, LLVMBuildAdd(b, pos, kc, ""), f->pos);
}

/* 64 points of a sparse chunk (w: the word): each kept point's value of store s copied to the next slot,
 * the kept points found by counting trailing zeros of the word's mask. */
static void word_sparse(Lower *L, LLVMValueRef w, void *arg) {
  Flush *f = arg;
  Compact *c = f->c;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType bt = (LoomDType)L->k->bufs[c->st[f->s]->buf].dtype;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(m->c), mt = cg_mem_type(m, bt), mvt = LLVMVectorType(i8, 64);
  LLVMValueRef first = LLVMBuildMul(b, w, cg_i64(m, 64), "");
  LLVMValueRef mv = LLVMBuildLoad2(b, mvt, byte_ptr(L, c->mbuf, first), "");
  LLVMSetAlignment(mv, 64);
  LLVMValueRef ne = LLVMBuildBitCast(b, LLVMBuildICmp(b, LLVMIntNE, mv, LLVMConstNull(mvt), ""), L->i64, "");
  LLVMValueRef bitsv = cg_entry_alloca(L, L->i64, "cbits");
  LLVMBuildStore(b, LLVMBuildAnd(b, ne, low_bits(L, LLVMBuildSub(b, f->n, first, ""), 64), ""), bitsv);
  LLVMBasicBlockRef head = cg_new_bb(L, "sparse.head"), body = cg_new_bb(L, "sparse.body"), exit = cg_new_bb(L, "sparse.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef bits = LLVMBuildLoad2(b, L->i64, bitsv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, bits, cg_i64(m, 0), ""), exit, body);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef targs[2] = {bits, LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0)};
  LLVMValueRef j = LLVMBuildAdd(b, first, cg_intrinsic(m, "llvm.cttz", &L->i64, 1, targs, 2), "");
  LLVMValueRef *outer, lin;
  enter_point(L, c, LLVMBuildAdd(b, c->c0, j, ""), &outer, &lin);
  cg_eval_needed(L, &c->st[f->s]->value, 1);
  LLVMValueRef v = store_value(L, c, f->s);
  leave_point(L, outer, lin);
  LLVMValueRef pos = LLVMBuildLoad2(b, L->i64, f->pos, "");
  LLVMSetAlignment(LLVMBuildStore(b, v, LLVMBuildGEP2(b, mt, f->dst, &pos, 1, "")), dtype_align(bt));
  LLVMBuildStore(b, LLVMBuildAdd(b, pos, cg_i64(m, 1), ""), f->pos);
  LLVMBuildStore(b, LLVMBuildAnd(b, bits, LLVMBuildSub(b, bits, cg_i64(m, 1), ""), ""), bitsv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
}

/* The scan's running value at point j of the chunk: f->acc plus the staged mask's byte at j (stored back);
 * *kept: whether j is kept. */
static LLVMValueRef point_running(Lower *L, Flush *f, LLVMValueRef j, LLVMValueRef *kept) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(L->m.c), at = cg_reg_type(&L->m, (LoomDType)f->c->ph->acc_dtype);
  *kept = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildLoad2(b, i8, byte_ptr(L, f->c->mbuf, j), ""), LLVMConstInt(i8, 0, 0), "");
  LLVMValueRef acc = LLVMBuildAdd(b, LLVMBuildLoad2(b, at, f->acc, ""), LLVMBuildZExt(b, *kept, at, ""), "");
  LLVMBuildStore(b, acc, f->acc);
  return acc;
}

/* Point j of the chunk with the scan's exact semantics: the running value, then each store at
 * where(c, e, q) when that lies below its limit. */
static void point_exact(Lower *L, LLVMValueRef j, void *arg) {
  Flush *f = arg;
  Compact *c = f->c;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef kept, acc = point_running(L, f, j, &kept);
  for (int s = 0; s < c->ns; s++) {
    LoomDType bt = (LoomDType)k->bufs[c->st[s]->buf].dtype;
    LLVMTypeRef mt = cg_mem_type(&L->m, bt);
    LLVMValueRef idx = LLVMBuildSelect(b, kept, slot_at(L, c, s, acc), c->qv[s], "");
    LLVMBasicBlockRef st = cg_new_bb(L, "compact.store"), done = cg_new_bb(L, "compact.next");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, idx, c->lim[s], ""), st, done);
    LLVMPositionBuilderAtEnd(b, st);
    LLVMValueRef v = LLVMBuildLoad2(b, mt, LLVMBuildGEP2(b, mt, c->vbuf[s], &j, 1, ""), "");
    LLVMSetAlignment(v, dtype_align(bt));
    LLVMSetAlignment(LLVMBuildStore(b, v, out_ptr(L, c->st[s], idx)), dtype_align(bt));
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
  }
}

/* Point j of the chunk for the other stores (the count's slot of _compact_graph): the running value from
 * the staged mask, the point's offsets (the one R dim: outer offset + r * stride), then each store at
 * its index when below its limit, with the scan's exact semantics. */
static void point_other(Lower *L, LLVMValueRef j, void *arg) {
  Flush *f = arg;
  Compact *c = f->c;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef kept, acc = point_running(L, f, j, &kept);
  LLVMValueRef *outer, lin;
  enter_point(L, c, LLVMBuildAdd(b, c->c0, j, "r"), &outer, &lin);
  L->acc[c->p] = acc;
  L->accidx[c->p] = cg_i64(&L->m, 0);
  int32_t roots[3 * CG_COMPACT_STORES];
  for (int s = 0; s < c->nother; s++)
    roots[3 * s] = c->other[s]->value, roots[3 * s + 1] = c->other[s]->index, roots[3 * s + 2] = c->other[s]->limit;
  cg_eval_needed(L, roots, 3 * c->nother);
  for (int s = 0; s < c->nother; s++) {
    const KStore *so = c->other[s];
    LoomDType bt = (LoomDType)k->bufs[so->buf].dtype;
    LLVMValueRef v = cg_to_mem(&L->m, (LoomDType)k->instrs[so->value].dtype, bt, L->cache[so->value]);
    LLVMValueRef idx = to_i64(L, L->cache[so->index]);
    LLVMBasicBlockRef stb = cg_new_bb(L, "compact.ostore"), done = cg_new_bb(L, "compact.onext");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, idx, to_i64(L, L->cache[so->limit]), ""), stb, done);
    LLVMPositionBuilderAtEnd(b, stb);
    LLVMSetAlignment(LLVMBuildStore(b, v, out_ptr(L, so, idx)), dtype_align(bt)); /* scatter: strides 0 */
    LLVMBuildBr(b, done);
    LLVMPositionBuilderAtEnd(b, done);
  }
  leave_point(L, outer, lin);
}

/* One chunk: R points [c0, c0 + min(CG_COMPACT_BLOCK, rsize - c0)). */
static void chunk(Lower *L, LLVMValueRef c0, void *arg) {
  Compact *c = arg;
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef at = cg_reg_type(m, (LoomDType)c->ph->acc_dtype);
  LLVMValueRef left = LLVMBuildSub(b, L->rsize, c0, ""), blk = cg_i64(m, CG_COMPACT_BLOCK);
  LLVMValueRef n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, blk, ""), left, blk, "n");
  LLVMValueRef acc0 = LLVMBuildLoad2(b, at, c->accv, "acc0");
  c->c0 = c0;
  cg_host_walk(L, k->nkeep, k->ndim, c0, LLVMBuildAdd(b, c0, n, ""), body_stage, c);
  LLVMValueRef acc1 = LLVMBuildLoad2(b, at, c->accv, "acc1");
  LLVMValueRef cnt = LLVMBuildSub(b, acc1, acc0, "");
  LLVMBasicBlockRef check = cg_new_bb(L, "compact.check"), vec = cg_new_bb(L, "compact.vec"),
                    exact = cg_new_bb(L, "compact.exact"), done = cg_new_bb(L, "compact.done");
  LLVMValueRef none = LLVMBuildICmp(b, LLVMIntEQ, cnt, LLVMConstInt(at, 0, 0), "");
  /* every q out of range: nothing to store without kept points; else the exact loop */
  LLVMBasicBlockRef fast = cg_new_bb(L, "compact.fast");
  LLVMBuildCondBr(b, c->fast, fast, exact);
  LLVMPositionBuilderAtEnd(b, fast);
  LLVMBuildCondBr(b, none, done, check);
  LLVMPositionBuilderAtEnd(b, check);
  LLVMValueRef first[CG_COMPACT_STORES], ok = LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0);
  LLVMValueRef span = LLVMBuildSub(b, to_i64(L, cnt), cg_i64(m, 1), "");
  LLVMValueRef one = LLVMConstInt(at, 1, 0);
  for (int s = 0; s < c->ns; s++) { /* slots e(acc0 + 1) .. e(acc1): inside [0, limit), consecutive */
    first[s] = slot_at(L, c, s, LLVMBuildAdd(b, acc0, one, ""));
    LLVMValueRef last = slot_at(L, c, s, acc1);
    LLVMValueRef o = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, first[s], cg_i64(m, 0), ""),
                                  LLVMBuildICmp(b, LLVMIntSLT, last, c->lim[s], ""), "");
    o = LLVMBuildAnd(b, o, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildSub(b, last, first[s], ""), span, ""), "");
    ok = LLVMBuildAnd(b, ok, o, "");
  }
  LLVMBuildCondBr(b, ok, vec, exact);
  LLVMPositionBuilderAtEnd(b, vec);
  /* under one point in CG_COMPACT_SPARSE kept: the kept points one by one (a word of mask bits at a
   * time); else 64-byte groups through the compress */
  LLVMBasicBlockRef sparse = cg_new_bb(L, "compact.sparse"), dense = cg_new_bb(L, "compact.dense");
  LLVMValueRef few = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildMul(b, to_i64(L, cnt), cg_i64(m, CG_COMPACT_SPARSE), ""), n, "");
  LLVMBuildCondBr(b, few, sparse, dense);
  for (int dn = 0; dn < 2; dn++) {
    LLVMPositionBuilderAtEnd(b, dn ? dense : sparse);
    if (dn) cg_host_walk(L, k->nkeep, k->ndim, c0, LLVMBuildAdd(b, c0, n, ""), body_values, c); /* (sparse: at kept points) */
    for (int s = 0; s < c->ns; s++) {
      int G = dn ? 64 / c->size[s] : 64;
      Flush f = {.c = c, .s = s, .n = n, .dst = out_ptr(L, c->st[s], first[s]), .pos = cg_entry_alloca(L, L->i64, "cpos")};
      LLVMBuildStore(b, cg_i64(m, 0), f.pos);
      LLVMValueRef ng = LLVMBuildUDiv(b, LLVMBuildAdd(b, n, cg_i64(m, G - 1), ""), cg_i64(m, G), "");
      for_i64(L, cg_i64(m, 0), ng, 1, dn ? group_vec : word_sparse, &f);
    }
    LLVMBuildBr(b, done);
  }
  LLVMPositionBuilderAtEnd(b, exact);
  cg_host_walk(L, k->nkeep, k->ndim, c0, LLVMBuildAdd(b, c0, n, ""), body_values, c);
  Flush f = {.c = c, .n = n, .acc = cg_entry_alloca(L, at, "cacc")};
  LLVMBuildStore(b, acc0, f.acc);
  for_i64(L, cg_i64(m, 0), n, 1, point_exact, &f);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
  if (c->nother) {
    Flush fo = {.c = c, .n = n, .acc = cg_entry_alloca(L, at, "oacc")};
    LLVMBuildStore(b, acc0, fo.acc);
    for_i64(L, cg_i64(m, 0), n, 1, point_other, &fo);
  }
}

bool cg_host_scan_compact(Lower *L, int p) {
  Compact c;
  if (!compact_plan(L, p, &c)) return false;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType at = (LoomDType)c.ph->acc_dtype;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(m->c);
  c.offs = ctx_calloc(L->ctx, (size_t)L->k->nbuf + 1, sizeof(LLVMValueRef));
  if (!c.offs) return false;
  c.accv = cg_entry_alloca(L, cg_reg_type(m, at), "cscan");
  LLVMBuildStore(b, cg_red_identity(L, c.ph->reduce_op, at), c.accv);
  c.mbuf = cg_entry_alloca(L, LLVMArrayType2(i8, CG_COMPACT_BLOCK + 64), "cmask");
  LLVMSetAlignment(c.mbuf, 64);
  /* q and the limits at the O point; the fast path needs every q outside its limit */
  int32_t roots[2 * CG_COMPACT_STORES];
  for (int s = 0; s < c.ns; s++) roots[2 * s] = c.q[s], roots[2 * s + 1] = c.st[s]->limit;
  cg_clear_cache(L);
  cg_eval_needed(L, roots, 2 * c.ns);
  c.fast = LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0);
  for (int s = 0; s < c.ns; s++) {
    c.qv[s] = to_i64(L, L->cache[c.q[s]]);
    c.lim[s] = to_i64(L, L->cache[c.st[s]->limit]);
    c.fast = LLVMBuildAnd(b, c.fast, LLVMBuildICmp(b, LLVMIntUGE, c.qv[s], c.lim[s], ""), "");
    c.vbuf[s] = cg_entry_alloca(L, LLVMArrayType2(i8, (uint64_t)CG_COMPACT_BLOCK * (uint64_t)c.size[s] + 64), "cvals");
    LLVMSetAlignment(c.vbuf[s], 64);
  }
  cg_clear_cache(L);
  for_i64(L, cg_i64(m, 0), L->rsize, CG_COMPACT_BLOCK, chunk, &c);
  ctx_free(L->ctx, c.offs);
  L->acc[p] = L->accidx[p] = NULL;
  return true;
}
