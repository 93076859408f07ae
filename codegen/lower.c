/* lower.c: KernelIr -> LLVM module (the host loop structure over the shared instruction evaluator).
 *
 * Shared part: eval_needed() emits the instructions a set of roots needs, in index order (the IR is
 * in dependency order, so no recursion), through math.c; loads and stores address
 * base[b] + off[b] where off is the element offset of the current point, kept by the loop code.
 * A GPU target would reuse it and replace only the loop part below (walk/emit_point).
 *
 * Host part: each entry point (run, partial, finish) is a thin wrapper that loads the buffer
 * pointers and calls an always-inline implementation taking them as `noalias` parameters; after
 * inlining LLVM turns that into scoped alias metadata, so loads and stores vectorize without run-time
 * overlap checks. walk() visits linear points [lo, hi) of a group of dims row-major: it decomposes
 * lo once, then runs rows whose innermost loop advances the last dim with a stride that is a
 * compile-time constant for KL_ONE/KL_ZERO, which the loop vectorizer widens. A reduction runs, for
 * each O point, one walk over R per REDUCE or MAP phase; accumulators are allocas (promoted to phis
 * by mem2reg) and float sums use `reassoc` fadds so the vectorizer keeps several partial sums.
 * Reductions over an axis that is outer in memory use the outer strategy instead (run_outer: blocks
 * of o with stack accumulator arrays). Compile time: finish() is optnone (it is cold), and run() of
 * a splittable full reduction calls partial() rather than holding a second copy of its loop.
 *
 * GPU part (cg_lower_gpu, codegen.h's CgGpuKernel): the same evaluator under a thread-index loop
 * structure: grid-stride loops whose point index is decomposed into offsets (index type i32 when
 * the kernel's index_bits is 32), block reductions through llvm.nvvm.shfl.sync.bfly and a small
 * shared array (every thread then combines the per-warp values in warp order, which broadcasts the
 * result and keeps the order fixed), and a vector entry that reads each contiguous buffer as one
 * 16-byte vector and evaluates the instructions once per lane.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "codegen/cg_llvm.h"
#include "codegen/cg_snippet.h"

#define CG_MAX_DEPTH 4
/* Outer strategy: O points per block (accumulators of one block live in stack arrays). */
#define CG_OUTER_BLOCK 512

typedef struct Lower {
  CgMath m;
  LoomContext *ctx;
  const KernelIr *k;
  LLVMTypeRef i64, ptr;
  LLVMValueRef fn;
  LLVMBasicBlockRef alloca_bb;
  LLVMBuilderRef ab;      /* positioned in alloca_bb */
  LLVMValueRef *shape;    /* ndim */
  LLVMValueRef *base;     /* nbuf */
  LLVMValueRef *stride;   /* nbuf * ndim */
  LLVMValueRef *levels;   /* CG_MAX_DEPTH * nbuf offsets */
  LLVMValueRef *off;      /* the current level's nbuf offsets */
  LLVMValueRef *ooff;     /* offsets at the O point (FINAL phases) */
  int depth;
  LLVMValueRef *acc, *accidx; /* nphase */
  LLVMValueRef *cache;    /* ninstr */
  uint8_t *need;          /* ninstr */
  LLVMValueRef lin;       /* linear index of the current point within the walked dims */
  LLVMValueRef rsize;
  bool final_phase;
  bool outer;                 /* run() uses the outer-axis strategy (use_outer) */
  LLVMValueRef *accarr, *idxarr; /* nphase: block accumulator arrays (outer strategy) */
  LLVMValueRef bj, bn;        /* index of the current point within the block; the block's size */
  LLVMValueRef partial_fn;    /* the exported partial entry, once built (run of a full reduction calls it) */
  LLVMTypeRef partial_ty;
  /* GPU lowering (cg_lower_gpu) */
  LLVMTypeRef ity;            /* index type: i32 or i64 (KernelIr.index_bits) */
  LLVMValueRef *vload;        /* nbuf: the current vector of each loaded buffer (vec entry), or NULL */
  unsigned lane;              /* lane read from vload */
  bool unroll_red;            /* ROW reductions: GPU_UNROLL accumulators per thread */
  CgSnippet *sn;              /* the kernel's lowered snippet functions (user kernels), or NULL */
} Lower;

#define GPU_UNROLL 8     /* independent accumulators (loads in flight) per thread in ROW reductions */
#define GPU_CACHE_K 16   /* points per thread held in registers by the cached ROW entry */
#define GPU_CACHE_BUFS 4 /* at most this many loaded buffers for the cached entry */
#define GPU_VEC_MAXBUF 8 /* vector reduction entries: at most this many buffers / stores */

static int instr_nsrc(const KInstr *in) {
  switch (in->kind) {
  case KI_ELEM:
    if (in->op == LOOM_OP_WHERE) return 3;
    return in->op <= LOOM_OP_BITWISE_NOT || in->op == LOOM_OP_RECIPROCAL ? 1 : 2;
  case KI_CAST: return 1;
  case KI_USER_OUT: return 1;
  default: return 0;
  }
}

static bool is_arg(int op) { return op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX; }

/* Structural checks codegen relies on (ir_verify_kernel does the full job). */
static LoomStatus check_kernel(const KernelIr *k, Diag *d) {
  if (k->ndim < 1 || k->ndim > LOOM_MAX_RANK || k->nkeep < 0 || k->nkeep > k->ndim)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: kernel '%s' has ndim %d, nkeep %d", k->name, k->ndim, k->nkeep);
  if (k->nbuf < 0 || k->ninstr < 0 || k->nphase < 1 || k->nstore < 0 || (k->nbuf && !k->bufs) ||
      (k->ninstr && !k->instrs) || !k->phases || (k->nstore && !k->stores))
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: kernel '%s' has missing arrays or no phase", k->name);
  for (int b = 0; b < k->nbuf; b++)
    if (k->bufs[b].dtype >= LOOM_DTYPE_COUNT)
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: buffer %d has a bad dtype", b);
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind >= KI_KIND_COUNT || in->dtype >= LOOM_DTYPE_COUNT || (in->dtype == LOOM_FLOAT16 && in->kind != KI_CAST))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d has a bad kind or dtype", i);
    for (int j = 0; j < instr_nsrc(in); j++)
      if (in->src[j] < 0 || in->src[j] >= i)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d uses %d (not an earlier one)", i, in->src[j]);
    if (in->kind == KI_ELEM && in->op >= LOOM_OP_COUNT)
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d has op %d", i, in->op);
    if (in->kind == KI_LOAD && (in->buf < 0 || in->buf >= k->nbuf))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d loads buffer %d", i, in->buf);
    if (in->kind == KI_ACC && (in->phase < 0 || in->phase >= k->nphase || k->phases[in->phase].kind != KP_REDUCE))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d reads phase %d (not a REDUCE phase)", i, in->phase);
  }
  bool red = k->nkeep < k->ndim;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind > KP_FINAL || (!red && ph->kind != KP_MAP))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: phase %d has kind %d", p, ph->kind);
    if (ph->kind == KP_REDUCE) {
      if (ph->value < 0 || ph->value >= k->ninstr ||
          (ph->reduce_op >= LOOM_REDUCE_COUNT && !(ph->reduce_op == IR_REDUCE_USER && k->snippet)) ||
          ph->acc_dtype >= LOOM_DTYPE_COUNT || ph->acc_dtype == LOOM_FLOAT16)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: reduce phase %d is malformed", p);
      if (!is_arg(ph->reduce_op) && k->instrs[ph->value].dtype != ph->acc_dtype)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: reduce phase %d folds a %s value into a %s accumulator",
                          p, loom_dtype_name(k->instrs[ph->value].dtype), loom_dtype_name(ph->acc_dtype));
    } else {
      if (ph->store_begin < 0 || ph->nstores < 0 || ph->store_begin + ph->nstores > k->nstore)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: phase %d has a bad store range", p);
      for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++)
        if (k->stores[s].buf < 0 || k->stores[s].buf >= k->nbuf || k->stores[s].value < 0 ||
            k->stores[s].value >= k->ninstr)
          return diag_error(d, LOOM_ERR_INTERNAL, "codegen: store %d is malformed", s);
    }
  }
  return LOOM_OK; /* a phase reading a later phase's accumulator is caught in emit_one */
}

/* ---- shared instruction evaluation --------------------------------------------------------------- */

static void clear_cache(Lower *L) {
  memset(L->cache, 0, sizeof(LLVMValueRef) * (size_t)L->k->ninstr);
}

static LLVMValueRef elem_ptr(Lower *L, int b, LLVMValueRef off) {
  LLVMTypeRef et = cg_mem_type(&L->m, (LoomDType)L->k->bufs[b].dtype);
  return LLVMBuildGEP2(L->m.b, et, L->base[b], &off, 1, "");
}

static unsigned dtype_align(LoomDType t) {
  size_t s = loom_dtype_size(t);
  return s ? (unsigned)s : 1;
}

/* int64 product of the kernel's dims (host: i64 shapes; GPU: the index type). */
static LLVMValueRef npoints64(Lower *L) {
  LLVMValueRef n = cg_i64(&L->m, 1);
  for (int d = 0; d < L->k->ndim; d++) {
    LLVMValueRef s = L->shape[d];
    if (LLVMTypeOf(s) != L->i64) s = LLVMBuildSExt(L->m.b, s, L->i64, "");
    n = LLVMBuildMul(L->m.b, n, s, "");
  }
  return n;
}

static LLVMValueRef emit_one(Lower *L, int i) {
  const KernelIr *k = L->k;
  const KInstr *in = &k->instrs[i];
  CgMath *m = &L->m;
  LoomDType t = (LoomDType)in->dtype;
  switch (in->kind) {
  case KI_LOAD: {
    int b = in->buf;
    LoomDType st = (LoomDType)k->bufs[b].dtype;
    if (L->vload && L->vload[b] && !L->final_phase)
      return cg_from_mem(m, st, t, LLVMBuildExtractElement(m->b, L->vload[b], LLVMConstInt(LLVMInt32TypeInContext(m->c), L->lane, 0), ""));
    LLVMValueRef p = elem_ptr(L, b, L->final_phase ? L->ooff[b] : L->off[b]);
    LLVMValueRef v = LLVMBuildLoad2(m->b, cg_mem_type(m, st), p, "");
    LLVMSetAlignment(v, dtype_align(st));
    return cg_from_mem(m, st, t, v);
  }
  case KI_CONST: return cg_const(m, t, in->value);
  case KI_ELEM: {
    LLVMValueRef args[3] = {NULL, NULL, NULL};
    int n = instr_nsrc(in);
    for (int j = 0; j < n; j++) args[j] = L->cache[in->src[j]];
    LoomDType opd = (LoomDType)k->instrs[in->src[n == 3 ? 1 : 0]].dtype;
    if (n == 3 && k->instrs[in->src[0]].dtype != LOOM_BOOL) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: where condition (instruction %d) is not bool", in->src[0]);
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    for (int j = (n == 3 ? 1 : 0); j < n; j++)
      if (k->instrs[in->src[j]].dtype != opd) {
        diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d mixes operand dtypes", i);
        return LLVMGetUndef(cg_reg_type(m, t));
      }
    LLVMValueRef v = cg_elem(m, (LoomOp)in->op, opd, args);
    if (LLVMTypeOf(v) != cg_reg_type(m, t)) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d (%s of %s) is typed %s", i,
                 loom_op_name((LoomOp)in->op), loom_dtype_name(opd), loom_dtype_name(t));
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    return v;
  }
  case KI_CAST: return cg_cast(m, (LoomDType)k->instrs[in->src[0]].dtype, t, L->cache[in->src[0]]);
  case KI_ACC: {
    int p = in->phase;
    LLVMValueRef v = is_arg(k->phases[p].reduce_op) ? L->accidx[p] : L->acc[p];
    if (!v) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d reads phase %d before it ran", i, p);
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    if (LLVMTypeOf(v) != cg_reg_type(m, t)) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d has the wrong accumulator dtype", i);
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    return v;
  }
  case KI_REDSIZE:
    return cg_cast(m, LOOM_INT64, t, L->rsize);
  case KI_USER: return cg_snippet_call(L->sn, m, i, L->cache, L->base, L->stride);
  case KI_USER_OUT: return cg_snippet_user_out(L->sn, m, i, L->cache[in->src[0]]);
  case KI_INDEX:
    if (!L->lin) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d reads the point index outside a point loop", i);
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    return cg_cast(m, LOOM_INT64, t, L->lin);
  case KI_NPOINTS: return cg_cast(m, LOOM_INT64, t, npoints64(L));
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction kind %d", in->kind);
    return LLVMGetUndef(cg_reg_type(m, t));
  }
}

/* Emits (once per scope) the instructions that roots need, in index order. */
static void eval_needed(Lower *L, const int32_t *roots, int nroots) {
  const KernelIr *k = L->k;
  int hi = -1;
  memset(L->need, 0, (size_t)k->ninstr);
  for (int r = 0; r < nroots; r++) {
    L->need[roots[r]] = 1;
    if (roots[r] > hi) hi = roots[r];
  }
  for (int i = hi; i >= 0; i--) {
    if (!L->need[i] || L->cache[i]) continue;
    for (int j = 0; j < instr_nsrc(&k->instrs[i]); j++) L->need[k->instrs[i].src[j]] = 1;
    if (k->instrs[i].kind == KI_USER) /* its arguments (checked by cg_snippet_lower) */
      for (int j = 0; j < k->instrs[i].phase; j++)
        if (k->user_args[k->instrs[i].buf + j] >= 0) L->need[k->user_args[k->instrs[i].buf + j]] = 1;
  }
  for (int i = 0; i <= hi; i++)
    if (L->need[i] && !L->cache[i]) L->cache[i] = emit_one(L, i);
}

/* Reductions: the built-in combiner and identity, or the snippet's for IR_REDUCE_USER. */
static LLVMValueRef red_identity(Lower *L, int op, LoomDType t) {
  if (op == IR_REDUCE_USER) return cg_snippet_identity(L->sn, &L->m);
  return cg_identity(&L->m, (LoomReduceOp)op, t);
}
static LLVMValueRef red_combine(Lower *L, int op, LoomDType t, LLVMValueRef a, LLVMValueRef v) {
  if (op == IR_REDUCE_USER) return cg_snippet_combine(L->sn, &L->m, a, v);
  return cg_combine(&L->m, (LoomReduceOp)op, t, a, v);
}

static void emit_stores(Lower *L, const KPhase *ph) {
  const KernelIr *k = L->k;
  for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
    const KStore *st = &k->stores[s];
    eval_needed(L, &st->value, 1);
    LoomDType bt = (LoomDType)k->bufs[st->buf].dtype;
    LLVMValueRef v = cg_to_mem(&L->m, (LoomDType)k->instrs[st->value].dtype, bt, L->cache[st->value]);
    LLVMValueRef p = elem_ptr(L, st->buf, L->final_phase ? L->ooff[st->buf] : L->off[st->buf]);
    LLVMSetAlignment(LLVMBuildStore(L->m.b, v, p), dtype_align(bt));
  }
}

/* ---- per-worker regions (user kernels' loop_prep / after_loop) ------------------------------------- */

static LLVMValueRef entry_alloca(Lower *L, LLVMTypeRef t, const char *name);

/* Opens a worker (a host run() over a range, a GPU thread): its state block and loop_prep. */
static void worker_begin(Lower *L) {
  if (!cg_snippet_has_worker(L->sn)) return;
  LLVMValueRef state = entry_alloca(L, cg_snippet_state_type(L->sn), "worker");
  cg_snippet_worker_begin(L->sn, &L->m, state, L->base, L->stride, npoints64(L));
}

/* Closes the worker opened by worker_begin: after_loop. */
static void worker_end(Lower *L) {
  if (cg_snippet_has_worker(L->sn)) cg_snippet_worker_end(L->sn, &L->m, L->base, L->stride, npoints64(L));
}

/* ---- host loop structure --------------------------------------------------------------------------- */

static LLVMValueRef entry_alloca(Lower *L, LLVMTypeRef t, const char *name) {
  return LLVMBuildAlloca(L->ab, t, name);
}

static LLVMBasicBlockRef new_bb(Lower *L, const char *name) {
  return LLVMAppendBasicBlockInContext(L->m.c, L->fn, name);
}

typedef void (*BodyFn)(Lower *L, void *arg);

/* Visits linear points [lo, hi) of dims [d0, d1) row-major; at each point L->off holds the offsets
 * (outer offsets plus these dims' contribution) and L->lin the linear index. */
static void walk(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  const KernelIr *k = L->k;
  int nb = k->nbuf;
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef *outer = L->off;
  LLVMValueRef *inner = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  LLVMBasicBlockRef exit_bb = new_bb(L, "walk.exit");
  LLVMBasicBlockRef init_bb = new_bb(L, "walk.init");
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
    idx[d] = entry_alloca(L, L->i64, "idx");
    if (d > d0) {
      LLVMBuildStore(b, LLVMBuildURem(b, rem, L->shape[d], ""), idx[d]);
      rem = LLVMBuildUDiv(b, rem, L->shape[d], "");
    } else {
      LLVMBuildStore(b, rem, idx[d]);
    }
  }
  LLVMValueRef pos = entry_alloca(L, L->i64, "pos");
  LLVMBuildStore(b, lo, pos);
  LLVMBasicBlockRef row_bb = new_bb(L, "walk.row");
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
      o = LLVMBuildAdd(b, o, LLVMBuildMul(b, iv[d], L->stride[bi * k->ndim + d], ""), "");
    ro[bi] = o;
  }
  LLVMBasicBlockRef inner_bb = new_bb(L, "walk.inner");
  LLVMBuildBr(b, inner_bb);
  LLVMPositionBuilderAtEnd(b, inner_bb);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "j");
  LLVMValueRef cur = LLVMBuildAdd(b, start, j, "");
  for (int bi = 0; bi < nb; bi++)
    inner[bi] = LLVMBuildAdd(b, ro[bi], LLVMBuildMul(b, cur, L->stride[bi * k->ndim + last], ""), "");
  L->off = inner;
  L->depth++;
  L->lin = LLVMBuildAdd(b, p0, j, "");
  body(L, arg);
  L->depth--;
  L->off = outer;
  LLVMValueRef j1 = LLVMBuildAdd(b, j, LLVMConstInt(L->i64, 1, 0), "");
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef latch_bb = new_bb(L, "walk.latch");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, n, ""), inner_bb, latch_bb);
  LLVMValueRef zero = LLVMConstInt(L->i64, 0, 0);
  LLVMBasicBlockRef from[2] = {row_bb, body_end};
  LLVMValueRef vals[2] = {zero, j1};
  LLVMAddIncoming(j, vals, from, 2);

  LLVMPositionBuilderAtEnd(b, latch_bb);
  LLVMValueRef p1 = LLVMBuildAdd(b, p0, n, "");
  LLVMBuildStore(b, p1, pos);
  LLVMBuildStore(b, zero, idx[last]);
  LLVMBasicBlockRef check_bb = new_bb(L, "walk.check");
  for (int d = last - 1; d >= d0; d--) { /* carry */
    LLVMValueRef v = LLVMBuildAdd(b, iv[d], LLVMConstInt(L->i64, 1, 0), "");
    LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLT, v, L->shape[d], "");
    LLVMBuildStore(b, LLVMBuildSelect(b, ok, v, zero, ""), idx[d]);
    LLVMBasicBlockRef next = new_bb(L, "walk.carry");
    LLVMBuildCondBr(b, ok, check_bb, next);
    LLVMPositionBuilderAtEnd(b, next);
  }
  LLVMBuildBr(b, check_bb);
  LLVMPositionBuilderAtEnd(b, check_bb);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, p1, hi, ""), row_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, exit_bb);
  if (rowheap) ctx_free(L->ctx, rowheap);
}

typedef struct RedArg {
  const KPhase *ph;
  LLVMValueRef accv, acci; /* allocas */
} RedArg;

static void body_reduce(Lower *L, void *arg) {
  RedArg *ra = arg;
  const KPhase *ph = ra->ph;
  LLVMBuilderRef b = L->m.b;
  LoomDType at = (LoomDType)ph->acc_dtype;
  clear_cache(L);
  eval_needed(L, &ph->value, 1);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef cur = LLVMBuildLoad2(b, LLVMTypeOf(v), ra->accv, "");
  if (is_arg(ph->reduce_op)) {
    LoomDType vt = (LoomDType)L->k->instrs[ph->value].dtype;
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, v, cur, ""), ra->accv);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, ra->acci, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, L->lin, ci, ""), ra->acci);
  } else {
    LLVMBuildStore(b, red_combine(L, ph->reduce_op, at, cur, v), ra->accv);
  }
  clear_cache(L);
}

static void body_map(Lower *L, void *arg) {
  clear_cache(L);
  if (L->k->snippet && L->k->nkeep == L->k->ndim) /* user calls are roots (they may write raw arrays) */
    for (int32_t i = 0; i < L->k->ninstr; i++)
      if (L->k->instrs[i].kind == KI_USER) eval_needed(L, &i, 1);
  emit_stores(L, (const KPhase *)arg);
  clear_cache(L);
}

/* The value dtype a REDUCE phase accumulates (argmin/argmax: the compared value's). */
static LoomDType red_value_dtype(const KernelIr *k, const KPhase *ph) {
  return is_arg(ph->reduce_op) ? (LoomDType)k->instrs[ph->value].dtype : (LoomDType)ph->acc_dtype;
}

/* Runs REDUCE phase p over linear R points [lo, hi) and sets L->acc[p] / L->accidx[p]. */
static void run_reduce_phase(Lower *L, int p, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LoomDType vt = red_value_dtype(k, ph);
  RedArg ra = {ph, entry_alloca(L, cg_reg_type(&L->m, vt), "acc"), entry_alloca(L, L->i64, "acci")};
  LLVMBuildStore(L->m.b, red_identity(L, ph->reduce_op, vt), ra.accv);
  LLVMBuildStore(L->m.b, lo, ra.acci);
  walk(L, k->nkeep, k->ndim, lo, hi, body_reduce, &ra);
  L->acc[p] = LLVMBuildLoad2(L->m.b, cg_reg_type(&L->m, vt), ra.accv, "");
  L->accidx[p] = LLVMBuildLoad2(L->m.b, L->i64, ra.acci, "");
}

static void run_final_phase(Lower *L, const KPhase *ph) {
  clear_cache(L);
  L->final_phase = true;
  emit_stores(L, ph);
  L->final_phase = false;
  clear_cache(L);
}

/* Every phase at one O point (L->off holds the O offsets). */
static void body_o_point(Lower *L, void *arg) {
  const KernelIr *k = L->k;
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)k->nbuf);
  for (int p = 0; p < k->nphase; p++) {
    L->acc[p] = L->accidx[p] = NULL;
  }
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    clear_cache(L);
    if (ph->kind == KP_REDUCE) run_reduce_phase(L, p, LLVMConstInt(L->i64, 0, 0), L->rsize);
    else if (ph->kind == KP_MAP) walk(L, k->nkeep, k->ndim, LLVMConstInt(L->i64, 0, 0), L->rsize, body_map, (void *)ph);
    else run_final_phase(L, ph);
  }
  clear_cache(L);
}

/* Offsets of O point o (decomposed over dims [0, nkeep)) into L->off. */
static void set_o_offsets(Lower *L, LLVMValueRef o) {
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
      v = LLVMBuildAdd(b, v, LLVMBuildMul(b, idx[d], L->stride[bi * k->ndim + d], ""), "");
    L->off[bi] = v;
  }
}

/* ---- outer-axis strategy ----------------------------------------------------------------------------
 * For reductions whose reduced axis is outer in memory (column sums): the per-o form walks R with a
 * run-time stride, one element per cache line. Instead run() takes a block of up to CG_OUTER_BLOCK
 * consecutive o along the last O dim (ending early at hi or at the end of that dim's row) and keeps
 * one accumulator per o in stack arrays; each REDUCE phase walks R once with an inner loop over the
 * block (contiguous loads along o, which the loop vectorizer widens), then each FINAL phase runs per
 * o of the block. Every o still folds its values in R order, so the result of run() does not depend
 * on the block split. Kernels with MAP phases keep the per-o form. */

/* Whether the REDUCE phases' values load some buffer contiguously along the last O dim and none
 * contiguously along the innermost R dim (so a loop across O is the coalesced / vectorizable one).
 * With allow_map false a MAP phase rules it out. need: ninstr bytes of scratch. */
static bool reduce_reads_outer(const KernelIr *k, uint8_t *need, bool allow_map) {
  if (k->nkeep < 1 || k->nkeep >= k->ndim) return false;
  memset(need, 0, (size_t)k->ninstr);
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind == KP_MAP && !allow_map) return false;
    if (k->phases[p].kind == KP_REDUCE) need[k->phases[p].value] = 1;
  }
  bool contiguous_o = false;
  for (int i = k->ninstr - 1; i >= 0; i--) {
    const KInstr *in = &k->instrs[i];
    if (!need[i]) continue;
    for (int j = 0; j < instr_nsrc(in); j++) need[in->src[j]] = 1;
    if (in->kind == KI_USER)
      for (int j = 0; j < in->phase; j++)
        if (k->user_args[in->buf + j] >= 0) need[k->user_args[in->buf + j]] = 1;
    if (in->kind != KI_LOAD) continue;
    const uint8_t *lay = k->bufs[in->buf].layout;
    if (lay[k->ndim - 1] == KL_ONE) return false;
    if (lay[k->nkeep - 1] == KL_ONE) contiguous_o = true;
  }
  return contiguous_o;
}

/* Whether run() of k uses the outer strategy (no MAP phase allowed). */
static bool use_outer(const KernelIr *k, uint8_t *need) { return reduce_reads_outer(k, need, false); }

/* Emits `for (j = 0; j < n; j++) body` with L->off advanced by j along the last O dim and L->bj = j. */
static void block_loop(Lower *L, LLVMValueRef n, BodyFn body, void *arg) {
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
  LLVMBasicBlockRef body_bb = new_bb(L, "blk.body"), exit_bb = new_bb(L, "blk.exit");
  LLVMValueRef zero = cg_i64(&L->m, 0);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, zero, n, ""), body_bb, exit_bb);
  LLVMPositionBuilderAtEnd(b, body_bb);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "bj");
  for (int bi = 0; bi < nb; bi++)
    inner[bi] = LLVMBuildAdd(b, outer[bi], LLVMBuildMul(b, j, L->stride[bi * k->ndim + lo_dim], ""), "");
  L->off = inner;
  L->depth++;
  L->bj = j;
  body(L, arg);
  L->depth--;
  L->off = outer;
  LLVMValueRef j1 = LLVMBuildAdd(b, j, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, n, ""), body_bb, exit_bb);
  LLVMBasicBlockRef from[2] = {pre, end};
  LLVMValueRef vals[2] = {zero, j1};
  LLVMAddIncoming(j, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, exit_bb);
}

static LLVMValueRef slot(Lower *L, LLVMTypeRef et, LLVMValueRef arr) {
  return LLVMBuildGEP2(L->m.b, et, arr, &L->bj, 1, "");
}

/* Sets L->acc / L->accidx of REDUCE phases [0, np) to their values at block point L->bj. */
static void load_block_accs(Lower *L, int np) {
  const KernelIr *k = L->k;
  for (int q = 0; q < k->nphase; q++) {
    L->acc[q] = L->accidx[q] = NULL;
    if (q >= np || k->phases[q].kind != KP_REDUCE) continue;
    LoomDType vt = red_value_dtype(k, &k->phases[q]);
    LLVMTypeRef mt = cg_mem_type(&L->m, vt);
    L->acc[q] = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(L->m.b, mt, slot(L, mt, L->accarr[q]), ""));
    if (is_arg(k->phases[q].reduce_op))
      L->accidx[q] = LLVMBuildLoad2(L->m.b, L->i64, slot(L, L->i64, L->idxarr[q]), "");
  }
}

static void body_block_init(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  const KPhase *ph = &L->k->phases[p];
  LoomDType vt = red_value_dtype(L->k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  LLVMValueRef id = cg_to_mem(&L->m, vt, vt, red_identity(L, ph->reduce_op, vt));
  LLVMBuildStore(L->m.b, id, slot(L, mt, L->accarr[p]));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(L->m.b, cg_i64(&L->m, 0), slot(L, L->i64, L->idxarr[p]));
}

static void body_block_reduce(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = red_value_dtype(k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  clear_cache(L);
  load_block_accs(L, p);
  eval_needed(L, &ph->value, 1);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef ap = slot(L, mt, L->accarr[p]);
  LLVMValueRef cur = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, ap, ""));
  LLVMValueRef nv;
  if (is_arg(ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
    nv = LLVMBuildSelect(b, take, v, cur, "");
    LLVMValueRef ip = slot(L, L->i64, L->idxarr[p]);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, ip, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, L->lin, ci, ""), ip);
  } else {
    nv = red_combine(L, ph->reduce_op, vt, cur, v);
  }
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, nv), ap);
  clear_cache(L);
}

/* Walk body of a REDUCE phase: one R point for every o of the block. */
static void body_block_reduce_row(Lower *L, void *arg) { block_loop(L, L->bn, body_block_reduce, arg); }

static void body_block_final(Lower *L, void *arg) {
  int p = (int)((const KPhase *)arg - L->k->phases);
  memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)L->k->nbuf);
  clear_cache(L);
  load_block_accs(L, p);
  run_final_phase(L, &L->k->phases[p]);
}

/* run(lo, hi) of the outer strategy: blocks of consecutive O points. */
static void run_outer(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int last = k->nkeep - 1;
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind != KP_REDUCE) continue;
    LoomDType vt = red_value_dtype(k, &k->phases[p]);
    L->accarr[p] = entry_alloca(L, LLVMArrayType(cg_mem_type(m, vt), CG_OUTER_BLOCK), "accs");
    if (is_arg(k->phases[p].reduce_op))
      L->idxarr[p] = entry_alloca(L, LLVMArrayType(L->i64, CG_OUTER_BLOCK), "accis");
  }
  LLVMValueRef opos = entry_alloca(L, L->i64, "o");
  LLVMBasicBlockRef head = new_bb(L, "outer.block"), exit_bb = new_bb(L, "outer.exit");
  LLVMBuildStore(b, lo, opos);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), head, exit_bb);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef o = LLVMBuildLoad2(b, L->i64, opos, "");
  set_o_offsets(L, o);
  LLVMValueRef col = last > 0 ? LLVMBuildURem(b, o, L->shape[last], "") : o;
  LLVMValueRef n = LLVMBuildSub(b, L->shape[last], col, "");
  LLVMValueRef left = LLVMBuildSub(b, hi, o, "");
  n = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, n, ""), left, n, "");
  /* balanced blocks of at most CG_OUTER_BLOCK: n = ceil(n / ceil(n / B)), no short tail block */
  LLVMValueRef bm1 = cg_i64(m, CG_OUTER_BLOCK - 1);
  LLVMValueRef nblk = LLVMBuildUDiv(b, LLVMBuildAdd(b, n, bm1, ""), cg_i64(m, CG_OUTER_BLOCK), "");
  nblk = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, nblk, cg_i64(m, 1), ""), cg_i64(m, 1), nblk, "");
  n = LLVMBuildSDiv(b, LLVMBuildSub(b, LLVMBuildAdd(b, n, nblk, ""), cg_i64(m, 1), ""), nblk, "n");
  L->bn = n;
  LLVMBasicBlockRef go = new_bb(L, "outer.go");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSGT, n, cg_i64(m, 0), ""), go, exit_bb); /* never loop forever */
  LLVMPositionBuilderAtEnd(b, go);
  for (int p = 0; p < k->nphase; p++) {
    void *ph = (void *)&k->phases[p];
    if (k->phases[p].kind == KP_REDUCE) {
      block_loop(L, n, body_block_init, ph);
      walk(L, k->nkeep, k->ndim, cg_i64(m, 0), L->rsize, body_block_reduce_row, ph);
    } else {
      block_loop(L, n, body_block_final, ph);
    }
  }
  LLVMValueRef o1 = LLVMBuildAdd(b, o, n, "");
  LLVMBuildStore(b, o1, opos);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o1, hi, ""), head, exit_bb);
  LLVMPositionBuilderAtEnd(b, exit_bb);
}

/* ENTRY_RUN_VIA_PARTIAL: run() of a splittable full reduction (nkeep == 0): the wrapper calls the
 * partial entry over all of R into a stack accumulator and the implementation runs the FINAL phase
 * from it, so the vectorized R loop is compiled once instead of twice (same bits as one part). */
enum { ENTRY_RUN, ENTRY_PARTIAL, ENTRY_FINISH, ENTRY_RUN_VIA_PARTIAL };

static void add_enum_attr(Lower *L, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->m.c, kind, 0));
}

static void add_fn_attrs(Lower *L, LLVMValueRef fn, const char *const *attrs, int nattrs) {
  for (int i = 0; i < nattrs; i++) {
    const char *key = attrs[2 * i], *val = attrs[2 * i + 1];
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(L->m.c, key, (unsigned)strlen(key), val, (unsigned)strlen(val)));
  }
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->m.c, nounwind, 0));
}

/* Zeroes L and allocates its per-kernel arrays and builders (freed by lower_finish, also after a
 * failed allocation). Returns false when an allocation failed. */
static bool lower_init(Lower *L, LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k,
                       Diag *d) {
  memset(L, 0, sizeof *L);
  L->ctx = ctx;
  L->k = k;
  L->m.c = c;
  L->m.m = mod;
  L->m.d = d;
  L->i64 = LLVMInt64TypeInContext(c);
  L->ptr = LLVMPointerTypeInContext(c, 0);
  size_t nb = (size_t)k->nbuf + 1, ni = (size_t)k->ninstr + 1, np = (size_t)k->nphase + 1;
  L->shape = ctx_calloc(ctx, LOOM_MAX_RANK, sizeof(LLVMValueRef));
  L->base = ctx_calloc(ctx, nb, sizeof(LLVMValueRef));
  L->stride = ctx_calloc(ctx, nb * (size_t)k->ndim, sizeof(LLVMValueRef));
  L->levels = ctx_calloc(ctx, nb * CG_MAX_DEPTH, sizeof(LLVMValueRef));
  L->ooff = ctx_calloc(ctx, nb, sizeof(LLVMValueRef));
  L->acc = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->accidx = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->cache = ctx_calloc(ctx, ni, sizeof(LLVMValueRef));
  L->need = ctx_calloc(ctx, ni, 1);
  L->accarr = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->idxarr = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->vload = ctx_calloc(ctx, nb, sizeof(LLVMValueRef));
  L->m.b = LLVMCreateBuilderInContext(c);
  L->ab = LLVMCreateBuilderInContext(c);
  return L->shape && L->base && L->stride && L->levels && L->ooff && L->acc && L->accidx && L->cache &&
         L->need && L->accarr && L->idxarr && L->vload;
}

/* Frees what a lowering allocated (every array of L may be NULL) and verifies the module when st is
 * LOOM_OK; returns the resulting status. */
static LoomStatus lower_finish(Lower *L, LoomContext *ctx, LLVMModuleRef mod, const char *what, LoomStatus st,
                               Diag *d) {
  LLVMDisposeBuilder(L->m.b);
  LLVMDisposeBuilder(L->ab);
  void *arrays[] = {L->shape, L->base, L->stride, L->levels, L->ooff, L->acc, L->accidx, L->cache,
                    L->need, L->accarr, L->idxarr, L->vload};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) ctx_free(ctx, arrays[i]);
  cg_snippet_free(L->sn);
  if (st != LOOM_OK) return st;
  char *msg = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
    st = diag_error(d, LOOM_ERR_INTERNAL, "codegen: invalid %sLLVM IR for kernel '%s': %.600s", what, L->k->name,
                    msg ? msg : "");
  if (msg) LLVMDisposeMessage(msg);
  return st;
}

/* Builds one entry point: `name`(shape, bufs, strides, <extra i64s>, [ptr]) calling an always-inline
 * implementation that takes the buffers as noalias pointers. */
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
  int nscal = which == ENTRY_RUN || via ? 2 : 3; /* lo hi | o rlo rhi | o accs nparts */
  int nimpl = 2 + nb + nscal;
  LLVMTypeRef *pt = ctx_calloc(L->ctx, (size_t)nimpl + 8, sizeof(LLVMTypeRef));
  LLVMValueRef *av = ctx_calloc(L->ctx, (size_t)nimpl + 8, sizeof(LLVMValueRef));
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
  LLVMTypeRef void_t = LLVMVoidTypeInContext(m->c);
  char iname[96];
  snprintf(iname, sizeof iname, "%s.impl", name);
  LLVMTypeRef ity = LLVMFunctionType(void_t, pt, (unsigned)nimpl, 0);
  LLVMValueRef impl = LLVMAddFunction(m->m, iname, ity);
  LLVMSetLinkage(impl, LLVMInternalLinkage);
  add_fn_attrs(L, impl, attrs, nattrs);
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
  LLVMTypeRef wty = LLVMFunctionType(void_t, wpt, nw, 0);
  LLVMValueRef wfn = LLVMAddFunction(m->m, name, wty);
  add_fn_attrs(L, wfn, attrs, nattrs);
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
  if (via) {
    /* if (lo < hi) { partial(shape, bufs, strides, 0, 0, |R|, acc); impl(..., acc); } */
    LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(m->c, wfn, "go");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(m->c, wfn, "done");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, LLVMGetParam(wfn, 3), LLVMGetParam(wfn, 4), ""), go, done);
    LLVMPositionBuilderAtEnd(b, go);
    LLVMValueRef acc = LLVMBuildAlloca(b, LLVMArrayType(LLVMInt64TypeInContext(m->c), 2), "acc");
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
    LLVMBuildCall2(b, ity, impl, av, (unsigned)nimpl, "");
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
  for (int bi = 0; bi < nb; bi++) {
    L->base[bi] = LLVMGetParam(impl, (unsigned)(2 + bi));
    for (int d = 0; d < k->ndim; d++) {
      uint8_t lay = k->bufs[bi].layout[d];
      LLVMValueRef s;
      if (lay == KL_ONE) s = cg_i64(m, 1);
      else if (lay == KL_ZERO) s = cg_i64(m, 0);
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
  LLVMValueRef s0 = LLVMGetParam(impl, (unsigned)(2 + nb)), s1 = LLVMGetParam(impl, (unsigned)(3 + nb));
  if (via) {
    /* the accumulator partial() wrote (codegen.h's layout) -> the FINAL phase */
    const KPhase *ph = &k->phases[0];
    LoomDType vt = red_value_dtype(k, ph);
    LLVMValueRef accp = LLVMGetParam(impl, (unsigned)(4 + nb)), eight = cg_i64(m, 8);
    for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
    L->acc[0] = cg_from_mem(m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(m, vt), accp, ""));
    L->accidx[0] = is_arg(ph->reduce_op)
                       ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), accp, &eight, 1, ""), "")
                       : cg_i64(m, 0);
    set_o_offsets(L, cg_i64(m, 0));
    memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)nb);
    if (k->nphase == 2) run_final_phase(L, &k->phases[1]);
  } else if (which == ENTRY_RUN) {
    if (k->nkeep == k->ndim) {
      worker_begin(L); /* a host worker is one run() call: one task's range of points */
      walk(L, 0, k->ndim, s0, s1, body_map, (void *)&k->phases[0]);
      worker_end(L);
    }
    else if (L->outer) run_outer(L, s0, s1);
    else walk(L, 0, k->nkeep, s0, s1, body_o_point, NULL);
  } else {
    LLVMValueRef s2 = LLVMGetParam(impl, (unsigned)(4 + nb));
    set_o_offsets(L, s0);
    memcpy(L->ooff, L->off, sizeof(LLVMValueRef) * (size_t)nb);
    const KPhase *ph = &k->phases[0];
    LoomDType vt = red_value_dtype(k, ph);
    LLVMTypeRef vty = cg_reg_type(m, vt);
    LLVMTypeRef mty = cg_mem_type(m, vt);
    LLVMValueRef eight = cg_i64(m, 8);
    for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
    if (which == ENTRY_PARTIAL) {
      LLVMValueRef accp = LLVMGetParam(impl, (unsigned)(5 + nb));
      run_reduce_phase(L, 0, s1, s2);
      LLVMBuildStore(b, cg_to_mem(m, vt, vt, L->acc[0]), accp);
      if (is_arg(ph->reduce_op))
        LLVMBuildStore(b, L->accidx[0], LLVMBuildGEP2(b, LLVMInt8TypeInContext(m->c), accp, &eight, 1, ""));
    } else {
      /* finish: combine the parts in order (loop over i < nparts) */
      LLVMValueRef accs = s1, nparts = s2;
      LLVMValueRef accv = entry_alloca(L, vty, "acc"), acci = entry_alloca(L, L->i64, "acci");
      LLVMValueRef iv = entry_alloca(L, L->i64, "part");
      LLVMBuildStore(b, red_identity(L, ph->reduce_op, vt), accv);
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
      LLVMValueRef byte = LLVMBuildMul(b, i, cg_i64(m, is_arg(ph->reduce_op) ? 16 : 8), "");
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
      } else {
        /* strictly in order (no reassoc): the parts are few and the result must not depend on
         * how the combine loop is vectorized */
        LLVMValueRef v = red_combine(L, ph->reduce_op, vt, cur, pv);
        if (LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v)) LLVMSetFastMathFlags(v, 0);
        LLVMBuildStore(b, v, accv);
      }
      LLVMBuildStore(b, LLVMBuildAdd(b, i, cg_i64(m, 1), ""), iv);
      LLVMBuildBr(b, head);
      LLVMPositionBuilderAtEnd(b, done);
      L->acc[0] = LLVMBuildLoad2(b, vty, accv, "");
      L->accidx[0] = LLVMBuildLoad2(b, L->i64, acci, "");
      if (k->nphase == 2) run_final_phase(L, &k->phases[1]);
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
  LoomStatus st = check_kernel(k, d);
  if (st != LOOM_OK) return st;
  memset(names, 0, sizeof *names);
  snprintf(names->run, sizeof names->run, "%s_run", prefix);
  snprintf(names->partial, sizeof names->partial, "%s_partial", prefix);
  snprintf(names->finish, sizeof names->finish, "%s_finish", prefix);
  bool red = k->nkeep < k->ndim;
  names->has_partial = red && k->phases[0].kind == KP_REDUCE &&
                       (k->nphase == 1 || (k->nphase == 2 && k->phases[1].kind == KP_FINAL));
  if (names->has_partial) names->acc_size = is_arg(k->phases[0].reduce_op) ? 16 : 8;
  if (!red && k->nphase != 1)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: elementwise kernel '%s' has %d phases", k->name, k->nphase);

  Lower L;
  bool allocated = lower_init(&L, ctx, c, mod, k, d);
  L.m.vec = vec;
  if (!allocated) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering kernel '%s'", k->name);
  } else {
    L.outer = use_outer(k, L.need);
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
    cg_math_finish(&L.m);
    st = d->status;
  }
  return lower_finish(&L, ctx, mod, "", st, d);
}

/* ---- GPU loop structure ------------------------------------------------------------------------------ */

static LLVMValueRef gpu_sreg(Lower *L, const char *name) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  LLVMValueRef fn = LLVMGetNamedFunction(L->m.m, name);
  LLVMTypeRef fty = LLVMFunctionType(i32, NULL, 0, 0);
  if (!fn) fn = LLVMAddFunction(L->m.m, name, fty);
  LLVMValueRef v = LLVMBuildCall2(L->m.b, fty, fn, NULL, 0, "");
  return L->ity == i32 ? v : LLVMBuildZExt(L->m.b, v, L->ity, "");
}

static LLVMValueRef iconst_i(Lower *L, int64_t v) { return LLVMConstInt(L->ity, (unsigned long long)v, 1); }

static LLVMValueRef to_i64(Lower *L, LLVMValueRef v) {
  return L->ity == L->i64 ? v : LLVMBuildSExt(L->m.b, v, L->i64, "");
}

typedef void (*IdxBody)(Lower *L, LLVMValueRef i, void *arg);

/* for (i = start; i < end; i += step) body(i)  (signed compare in the index type) */
static void gpu_for(Lower *L, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, IdxBody body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef iv = entry_alloca(L, L->ity, "i");
  LLVMBuildStore(b, start, iv);
  LLVMBasicBlockRef head = new_bb(L, "for.head"), bb = new_bb(L, "for.body"), exit = new_bb(L, "for.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, end, ""), bb, exit);
  LLVMPositionBuilderAtEnd(b, bb);
  body(L, i, arg);
  LLVMBuildStore(b, LLVMBuildAdd(b, i, step, ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
}

/* out[b] = base[b] + sum over dims [d0, d1) of index(lin)[d] * stride[b][d] (lin row-major). */
static void gpu_offsets(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef idx[LOOM_MAX_RANK];
  LLVMValueRef rem = lin;
  for (int d = d1 - 1; d >= d0; d--) {
    if (d > d0) {
      idx[d] = LLVMBuildURem(b, rem, L->shape[d], "");
      rem = LLVMBuildUDiv(b, rem, L->shape[d], "");
    } else {
      idx[d] = rem;
    }
  }
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef v = base ? base[bi] : iconst_i(L, 0);
    for (int d = d0; d < d1; d++) v = LLVMBuildAdd(b, v, LLVMBuildMul(b, idx[d], L->stride[bi * k->ndim + d], ""), "");
    out[bi] = v;
  }
}

/* Warp shuffle (butterfly) of a value of any register type: moved as 32-bit pieces. */
static LLVMValueRef shfl_bfly(Lower *L, LLVMValueRef v, int lanemask) {
  LLVMBuilderRef b = L->m.b;
  LLVMContextRef c = L->m.c;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c);
  LLVMTypeRef t = LLVMTypeOf(v);
  const char *name = "llvm.nvvm.shfl.sync.bfly.i32";
  LLVMValueRef fn = LLVMGetNamedFunction(L->m.m, name);
  LLVMTypeRef pt[4] = {i32, i32, i32, i32};
  LLVMTypeRef fty = LLVMFunctionType(i32, pt, 4, 0);
  if (!fn) fn = LLVMAddFunction(L->m.m, name, fty);
  unsigned bits = LLVMGetTypeKind(t) == LLVMFloatTypeKind ? 32 : LLVMGetTypeKind(t) == LLVMDoubleTypeKind ? 64 : LLVMGetIntTypeWidth(t);
  LLVMTypeRef it = LLVMIntTypeInContext(c, bits);
  LLVMValueRef x = LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(b, v, it, "");
  LLVMValueRef r;
  if (bits <= 32) {
    LLVMValueRef a[4] = {LLVMConstInt(i32, 0xffffffffu, 0), bits < 32 ? LLVMBuildZExt(b, x, i32, "") : x,
                         LLVMConstInt(i32, (unsigned)lanemask, 0), LLVMConstInt(i32, 31, 0)};
    r = LLVMBuildCall2(b, fty, fn, a, 4, "");
    if (bits < 32) r = LLVMBuildTrunc(b, r, it, "");
  } else {
    LLVMValueRef lo = LLVMBuildTrunc(b, x, i32, "");
    LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, x, LLVMConstInt(it, 32, 0), ""), i32, "");
    LLVMValueRef a[4] = {LLVMConstInt(i32, 0xffffffffu, 0), lo, LLVMConstInt(i32, (unsigned)lanemask, 0), LLVMConstInt(i32, 31, 0)};
    LLVMValueRef rlo = LLVMBuildCall2(b, fty, fn, a, 4, "");
    a[1] = hi;
    LLVMValueRef rhi = LLVMBuildCall2(b, fty, fn, a, 4, "");
    r = LLVMBuildOr(b, LLVMBuildZExt(b, rlo, it, ""), LLVMBuildShl(b, LLVMBuildZExt(b, rhi, it, ""), LLVMConstInt(it, 32, 0), ""), "");
  }
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? r : LLVMBuildBitCast(b, r, t, "");
}

#define GPU_EMPTY_INDEX INT64_MAX /* accumulator index of an empty argmin/argmax part */

/* Combines two accumulators of a REDUCE phase (a, ai) and (v, vi): for argmin/argmax the one with the
 * smaller index comes first and the later one wins only when strictly better (or a first NaN), so the
 * result is the same whichever order the pair arrives in; other ops use cg_combine (ordered == false
 * gives the reassociable form). */
static void gpu_combine(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef v,
                        LLVMValueRef vi, bool ordered) {
  LLVMBuilderRef b = L->m.b;
  if (is_arg(ph->reduce_op)) {
    LLVMValueRef swap = LLVMBuildICmp(b, LLVMIntSGT, *ai, vi, "");
    LLVMValueRef fv = LLVMBuildSelect(b, swap, v, *a, ""), fi = LLVMBuildSelect(b, swap, vi, *ai, "");
    LLVMValueRef sv = LLVMBuildSelect(b, swap, *a, v, ""), si = LLVMBuildSelect(b, swap, *ai, vi, "");
    LLVMValueRef empty = cg_i64(&L->m, GPU_EMPTY_INDEX);
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, fv, sv);
    take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, fi, empty, ""), "");
    take = LLVMBuildAnd(b, take, LLVMBuildICmp(b, LLVMIntNE, si, empty, ""), "");
    *a = LLVMBuildSelect(b, take, sv, fv, "");
    *ai = LLVMBuildSelect(b, take, si, fi, "");
  } else {
    LLVMValueRef r = red_combine(L, ph->reduce_op, vt, *a, v);
    if (ordered && LLVMIsAInstruction(r) && LLVMCanValueUseFastMathFlags(r)) LLVMSetFastMathFlags(r, 0);
    *a = r;
  }
}

static void gpu_barrier(Lower *L) {
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(L->m.c), NULL, 0, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(L->m.m, "llvm.nvvm.barrier0");
  if (!fn) fn = LLVMAddFunction(L->m.m, "llvm.nvvm.barrier0", fty);
  LLVMBuildCall2(L->m.b, fty, fn, NULL, 0, "");
}

static LLVMValueRef shared_slots(Lower *L, const char *name) {
  LLVMValueRef g = LLVMGetNamedGlobal(L->m.m, name);
  if (g) return g;
  LLVMTypeRef at = LLVMArrayType2(L->i64, 32);
  g = LLVMAddGlobalInAddressSpace(L->m.m, at, name, 3);
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetInitializer(g, LLVMGetUndef(at));
  LLVMSetAlignment(g, 8);
  return g;
}

typedef struct GpuRed {
  const KPhase *ph;
  LoomDType vt;
  LLVMValueRef accv, acci; /* allocas */
  LLVMValueRef rbase;      /* ROW: the thread's first R point (its accumulator index starts there) */
} GpuRed;

/* One R point of a REDUCE phase: L->ooff holds the O offsets. */
static void gpu_reduce_point(Lower *L, LLVMValueRef r, void *arg) {
  GpuRed *g = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  clear_cache(L);
  eval_needed(L, &g->ph->value, 1);
  LLVMValueRef v = L->cache[g->ph->value];
  LLVMValueRef cur = LLVMBuildLoad2(b, LLVMTypeOf(v), g->accv, "");
  if (is_arg(g->ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)g->ph->reduce_op, g->vt, cur, v);
    LLVMBuildStore(b, LLVMBuildSelect(b, take, v, cur, ""), g->accv);
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, g->acci, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, to_i64(L, r), ci, ""), g->acci);
  } else {
    LLVMBuildStore(b, red_combine(L, g->ph->reduce_op, g->vt, cur, v), g->accv);
  }
  clear_cache(L);
}

static void gpu_map_point(Lower *L, LLVMValueRef r, void *arg) {
  const KernelIr *k = L->k;
  gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  body_map(L, arg);
}

/* Folds REDUCE phase p over R points start, start + step, ... < end into L->acc[p] / L->accidx[p]
 * (this thread's part only). */
static void gpu_reduce_range(Lower *L, int p, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  GpuRed g = {&k->phases[p], red_value_dtype(k, &k->phases[p]), NULL, NULL, NULL};
  LLVMTypeRef vty = cg_reg_type(&L->m, g.vt);
  g.accv = entry_alloca(L, vty, "acc");
  g.acci = entry_alloca(L, L->i64, "acci");
  LLVMBuildStore(b, red_identity(L, g.ph->reduce_op, g.vt), g.accv);
  LLVMValueRef nonempty = LLVMBuildICmp(b, LLVMIntSLT, start, end, "");
  LLVMBuildStore(b, LLVMBuildSelect(b, nonempty, to_i64(L, start), cg_i64(&L->m, GPU_EMPTY_INDEX), ""), g.acci);
  if (is_arg(g.ph->reduce_op) || !L->unroll_red) {
    gpu_for(L, start, end, step, gpu_reduce_point, &g);
    L->acc[p] = LLVMBuildLoad2(b, vty, g.accv, "");
    L->accidx[p] = LLVMBuildLoad2(b, L->i64, g.acci, "");
    return;
  }
  /* GPU_UNROLL independent accumulators: points i + j * step (j < GPU_UNROLL) are evaluated (their
   * loads issued) before any is combined, then the remainder goes into accumulator 0 and the others
   * are folded into it in order j = 1, 2, ... (fixed: the same bits on every run). */
  LLVMValueRef accs[GPU_UNROLL];
  accs[0] = g.accv;
  for (int j = 1; j < GPU_UNROLL; j++) {
    accs[j] = entry_alloca(L, vty, "accu");
    LLVMBuildStore(b, red_identity(L, g.ph->reduce_op, g.vt), accs[j]);
  }
  LLVMValueRef iv = entry_alloca(L, L->ity, "iu");
  LLVMBuildStore(b, start, iv);
  LLVMValueRef span = LLVMBuildMul(b, step, iconst_i(L, GPU_UNROLL - 1), "");
  LLVMValueRef limit = LLVMBuildSub(b, end, span, ""); /* i < limit: all GPU_UNROLL points exist */
  LLVMBasicBlockRef head = new_bb(L, "unr.head"), body = new_bb(L, "unr.body"), exit = new_bb(L, "unr.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  const KernelIr *kk = L->k;
  LLVMValueRef vals[GPU_UNROLL];
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef r = LLVMBuildAdd(b, i, LLVMBuildMul(b, step, iconst_i(L, j), ""), "");
    gpu_offsets(L, r, kk->nkeep, kk->ndim, L->ooff, L->off);
    clear_cache(L);
    eval_needed(L, &g.ph->value, 1);
    vals[j] = L->cache[g.ph->value];
  }
  clear_cache(L);
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef cur = LLVMBuildLoad2(b, vty, accs[j], "");
    LLVMBuildStore(b, red_combine(L, g.ph->reduce_op, g.vt, cur, vals[j]), accs[j]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, step, iconst_i(L, GPU_UNROLL), ""), ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
  gpu_for(L, LLVMBuildLoad2(b, L->ity, iv, ""), end, step, gpu_reduce_point, &g);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], "");
  LLVMValueRef ai = LLVMBuildLoad2(b, L->i64, g.acci, "");
  for (int j = 1; j < GPU_UNROLL; j++)
    gpu_combine(L, g.ph, g.vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[j], ""), ai, true);
  L->acc[p] = a;
  L->accidx[p] = ai;
}

/* Block reduction of phase p's per-thread accumulators: every thread ends with the block's. */
static void gpu_block_reduce(Lower *L, int p) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  LLVMValueRef v = L->acc[p], vi = L->accidx[p];
  for (int off = 16; off >= 1; off /= 2) {
    LLVMValueRef ov = shfl_bfly(L, v, off);
    LLVMValueRef oi = is_arg(ph->reduce_op) ? shfl_bfly(L, vi, off) : vi;
    gpu_combine(L, ph, vt, &v, &vi, ov, oi, true);
  }
  LLVMValueRef sv = shared_slots(L, "loom.red.v"), si = shared_slots(L, "loom.red.i");
  LLVMTypeRef at = LLVMArrayType2(L->i64, 32);
  LLVMValueRef tid = gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.tid.x");
  LLVMValueRef lane = LLVMBuildAnd(b, tid, iconst_i(L, 31), "");
  LLVMValueRef warp = LLVMBuildLShr(b, tid, iconst_i(L, 5), "");
  LLVMBasicBlockRef wr = new_bb(L, "red.write"), after = new_bb(L, "red.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, iconst_i(L, 0), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {iconst_i(L, 0), warp};
  LLVMBuildStore(b, v, LLVMBuildGEP2(b, at, sv, ix, 2, ""));
  if (is_arg(ph->reduce_op)) LLVMBuildStore(b, vi, LLVMBuildGEP2(b, at, si, ix, 2, ""));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  gpu_barrier(L);
  /* every thread folds the warps' values in warp order */
  LLVMValueRef nw = LLVMBuildLShr(b, gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.ntid.x"), iconst_i(L, 5), "");
  LLVMValueRef accv = entry_alloca(L, vty, "bacc"), acci = entry_alloca(L, L->i64, "bacci");
  LLVMValueRef ix0[2] = {iconst_i(L, 0), iconst_i(L, 0)};
  LLVMBuildStore(b, LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, ix0, 2, ""), ""), accv);
  LLVMBuildStore(b, is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, at, si, ix0, 2, ""), "") : cg_i64(&L->m, 0), acci);
  LLVMValueRef wv = entry_alloca(L, L->ity, "w");
  LLVMBuildStore(b, iconst_i(L, 1), wv);
  LLVMBasicBlockRef head = new_bb(L, "red.head"), body = new_bb(L, "red.body"), done = new_bb(L, "red.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef w = LLVMBuildLoad2(b, L->ity, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, w, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {iconst_i(L, 0), w};
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
  LLVMValueRef ov = LLVMBuildLoad2(b, vty, LLVMBuildGEP2(b, at, sv, ixw, 2, ""), "");
  LLVMValueRef oi = is_arg(ph->reduce_op) ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, at, si, ixw, 2, ""), "") : ai;
  gpu_combine(L, ph, vt, &a, &ai, ov, oi, true);
  LLVMBuildStore(b, a, accv);
  LLVMBuildStore(b, ai, acci);
  LLVMBuildStore(b, LLVMBuildAdd(b, w, iconst_i(L, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  L->acc[p] = LLVMBuildLoad2(b, vty, accv, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, acci, "");
  gpu_barrier(L); /* the slots are free again */
}

/* Address of partial accumulator `item` (acc_size bytes each). */
static LLVMValueRef partial_ptr(Lower *L, LLVMValueRef partials, LLVMValueRef item, int acc_size) {
  LLVMValueRef byte = LLVMBuildMul(L->m.b, to_i64(L, item), cg_i64(&L->m, acc_size), "");
  return LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), partials, &byte, 1, "");
}

static void store_partial(Lower *L, LLVMValueRef ptr) {
  const KPhase *ph = &L->k->phases[0];
  LoomDType vt = red_value_dtype(L->k, ph);
  LLVMValueRef eight = cg_i64(&L->m, 8);
  LLVMBuildStore(L->m.b, cg_to_mem(&L->m, vt, vt, L->acc[0]), ptr);
  if (is_arg(ph->reduce_op))
    LLVMBuildStore(L->m.b, L->accidx[0], LLVMBuildGEP2(L->m.b, LLVMInt8TypeInContext(L->m.c), ptr, &eight, 1, ""));
}

enum { GPU_ELEM, GPU_ELEMV, GPU_ELEMVW, GPU_MAIN, GPU_PART, GPU_FINISH, GPU_CACHED, GPU_PARTV, GPU_FINISHB };

typedef struct GpuEntry {
  int which;
  bool row;
  int acc_size;
  int lanes; /* GPU_PARTV, GPU_CACHED: points per 16-byte vector load (0 or 1: scalar loads) */
  LLVMValueRef no, nr, nparts, partials; /* index type; partials: ptr addrspace(1) */
  LLVMValueRef tid, bdim;
} GpuEntry;

static void gpu_elem_point(Lower *L, LLVMValueRef i, void *arg) {
  gpu_offsets(L, i, 0, L->k->ndim, NULL, L->off);
  L->lin = to_i64(L, i);
  body_map(L, (void *)&L->k->phases[0]);
}

/* Vector step v: points [v * lanes, v * lanes + lanes). */
static void gpu_elemv_step(Lower *L, LLVMValueRef v, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  unsigned lanes = (unsigned)(intptr_t)arg;
  LLVMValueRef base = LLVMBuildMul(b, v, iconst_i(L, lanes), "");
  for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = base;
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || L->vload[in->buf]) continue;
    LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
    LLVMTypeRef vt = LLVMVectorType(cg_mem_type(m, st), lanes);
    LLVMValueRef ld = LLVMBuildLoad2(b, vt, elem_ptr(L, in->buf, base), "");
    LLVMSetAlignment(ld, lanes * dtype_align(st));
    L->vload[in->buf] = ld;
  }
  const KPhase *ph = &k->phases[0];
  LLVMValueRef sv[64];
  int ns = ph->nstores < 64 ? ph->nstores : 64;
  for (int s = 0; s < ns; s++) {
    LoomDType st = (LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype;
    sv[s] = LLVMGetUndef(LLVMVectorType(cg_mem_type(m, st), lanes));
  }
  for (unsigned l = 0; l < lanes; l++) {
    L->lane = l;
    clear_cache(L);
    if (k->snippet) /* user calls are roots, lane by lane (they may write raw arrays or worker state) */
      for (int32_t i = 0; i < k->ninstr; i++)
        if (k->instrs[i].kind == KI_USER) eval_needed(L, &i, 1);
    for (int s = 0; s < ns; s++) {
      const KStore *kst = &k->stores[ph->store_begin + s];
      eval_needed(L, &kst->value, 1);
      LLVMValueRef val = cg_to_mem(m, (LoomDType)k->instrs[kst->value].dtype, (LoomDType)k->bufs[kst->buf].dtype,
                                   L->cache[kst->value]);
      sv[s] = LLVMBuildInsertElement(b, sv[s], val, LLVMConstInt(LLVMInt32TypeInContext(m->c), l, 0), "");
    }
  }
  clear_cache(L);
  for (int s = 0; s < ns; s++) {
    const KStore *kst = &k->stores[ph->store_begin + s];
    LoomDType st = (LoomDType)k->bufs[kst->buf].dtype;
    LLVMSetAlignment(LLVMBuildStore(b, sv[s], elem_ptr(L, kst->buf, base)), lanes * dtype_align(st));
  }
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
}

/* One item of a reduction entry (ROW: per block; COL and FINISH: per thread). */
static void gpu_red_item(Lower *L, LLVMValueRef item, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = item, rlo = iconst_i(L, 0), rhi = e->nr;
  if (e->which == GPU_PART) { /* item = part * nO + o; part's R range: balanced split */
    o = LLVMBuildURem(b, item, e->no, "");
    LLVMValueRef part = LLVMBuildUDiv(b, item, e->no, "");
    LLVMValueRef q = LLVMBuildUDiv(b, e->nr, e->nparts, ""), r = LLVMBuildURem(b, e->nr, e->nparts, "");
    LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
    rlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
    rhi = LLVMBuildAdd(b, LLVMBuildAdd(b, rlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  }
  gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef zero = iconst_i(L, 0), one = iconst_i(L, 1);
  if (e->which == GPU_FINISH || e->which == GPU_FINISHB) { /* FINISHB: one block per O point */
    bool blk = e->which == GPU_FINISHB;
    const KPhase *ph = &k->phases[0];
    LoomDType vt = red_value_dtype(k, ph);
    LLVMTypeRef vty = cg_reg_type(&L->m, vt);
    LLVMValueRef accv = entry_alloca(L, vty, "facc"), acci = entry_alloca(L, L->i64, "facci");
    LLVMBuildStore(b, red_identity(L, ph->reduce_op, vt), accv);
    LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), acci);
    LLVMValueRef pv = entry_alloca(L, L->ity, "p");
    LLVMBuildStore(b, blk ? e->tid : zero, pv);
    LLVMBasicBlockRef head = new_bb(L, "fin.head"), body = new_bb(L, "fin.body"), done = new_bb(L, "fin.done");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef p = LLVMBuildLoad2(b, L->ity, pv, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, p, e->nparts, ""), body, done);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef ptr = partial_ptr(L, e->partials, LLVMBuildAdd(b, LLVMBuildMul(b, p, e->no, ""), o, ""), e->acc_size);
    LLVMValueRef v = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(&L->m, vt), ptr, ""));
    LLVMValueRef eight = cg_i64(&L->m, 8);
    LLVMValueRef vi = is_arg(ph->reduce_op)
                          ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), ptr, &eight, 1, ""), "")
                          : cg_i64(&L->m, 0);
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
    gpu_combine(L, ph, vt, &a, &ai, v, vi, true);
    LLVMBuildStore(b, a, accv);
    LLVMBuildStore(b, ai, acci);
    LLVMBuildStore(b, LLVMBuildAdd(b, p, blk ? e->bdim : one, ""), pv);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, done);
    L->acc[0] = LLVMBuildLoad2(b, vty, accv, "");
    L->accidx[0] = LLVMBuildLoad2(b, L->i64, acci, "");
    if (!blk) {
      if (k->nphase == 2) run_final_phase(L, &k->phases[1]);
      return;
    }
    gpu_block_reduce(L, 0);
    if (k->nphase == 2) {
      LLVMBasicBlockRef t0 = new_bb(L, "finb"), after = new_bb(L, "finb.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      run_final_phase(L, &k->phases[1]);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    }
    return;
  }
  int nphase = e->which == GPU_PART ? 1 : k->nphase;
  for (int p = 0; p < nphase; p++) {
    const KPhase *ph = &k->phases[p];
    clear_cache(L);
    if (ph->kind == KP_REDUCE) {
      if (e->row) {
        gpu_reduce_range(L, p, LLVMBuildAdd(b, rlo, e->tid, ""), rhi, e->bdim);
        gpu_block_reduce(L, p);
      } else {
        gpu_reduce_range(L, p, rlo, rhi, one);
      }
    } else if (ph->kind == KP_MAP) {
      if (e->row) gpu_for(L, e->tid, e->nr, e->bdim, gpu_map_point, (void *)ph);
      else gpu_for(L, zero, e->nr, one, gpu_map_point, (void *)ph);
    } else if (e->row) {
      LLVMBasicBlockRef t0 = new_bb(L, "final"), after = new_bb(L, "final.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      run_final_phase(L, ph);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    } else {
      run_final_phase(L, ph);
    }
  }
  clear_cache(L);
  if (e->which == GPU_PART) {
    LLVMValueRef ptr = partial_ptr(L, e->partials, item, e->acc_size);
    if (e->row) {
      LLVMBasicBlockRef t0 = new_bb(L, "part.write"), after = new_bb(L, "part.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      store_partial(L, ptr);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    } else {
      store_partial(L, ptr);
    }
  }
}

/* One O point (one block) of the cached ROW entry: the thread's points r_j = tid + j * bdim
 * (j < GPU_CACHE_K; clamped to nr - 1 so that every load is valid and unconditional) of every loaded
 * buffer are read once into registers (L->vload[b] lane j), then each phase runs over the points
 * that exist (r_j < nr) from those registers. Launched only when 0 < nr <= bdim * GPU_CACHE_K. */
static void gpu_cached_item(Lower *L, LLVMValueRef o, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  const int K = GPU_CACHE_K;
  gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  const int lanes = e->lanes > 1 ? e->lanes : 1, G = K / lanes;
  LLVMValueRef rj[GPU_CACHE_K], valid[GPU_CACHE_K];
  if (lanes == 1) {
    LLVMValueRef last = LLVMBuildSub(b, e->nr, iconst_i(L, 1), "");
    for (int j = 0; j < K; j++) {
      LLVMValueRef r = LLVMBuildAdd(b, e->tid, LLVMBuildMul(b, e->bdim, iconst_i(L, j), ""), "");
      valid[j] = LLVMBuildICmp(b, LLVMIntSLT, r, e->nr, "");
      rj[j] = LLVMBuildSelect(b, valid[j], r, last, "");
    }
  } else { /* vector g holds points (tid + g * bdim) * lanes + l; the launcher ensures nr % lanes == 0 */
    LLVMValueRef nvec = LLVMBuildUDiv(b, e->nr, iconst_i(L, lanes), "");
    LLVMValueRef lastv = LLVMBuildSub(b, nvec, iconst_i(L, 1), "");
    for (int g = 0; g < G; g++) {
      LLVMValueRef v = LLVMBuildAdd(b, e->tid, LLVMBuildMul(b, e->bdim, iconst_i(L, g), ""), "");
      LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSLT, v, nvec, "");
      LLVMValueRef first = LLVMBuildMul(b, LLVMBuildSelect(b, ok, v, lastv, ""), iconst_i(L, lanes), "");
      for (int l = 0; l < lanes; l++) {
        valid[g * lanes + l] = ok;
        rj[g * lanes + l] = l ? LLVMBuildAdd(b, first, iconst_i(L, l), "") : first;
      }
    }
  }
  /* the loads, all up front (lanes > 1: G vector loads per buffer) */
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  for (int bi = 0; bi < k->nbuf; bi++) {
    bool loaded = false;
    for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
    if (!loaded) continue;
    LoomDType st = (LoomDType)k->bufs[bi].dtype;
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(cg_mem_type(m, st), (unsigned)K));
    for (int g = 0; g < G; g++) {
      gpu_offsets(L, rj[g * lanes], k->nkeep, k->ndim, L->ooff, L->off);
      LLVMTypeRef lt = lanes == 1 ? cg_mem_type(m, st) : LLVMVectorType(cg_mem_type(m, st), (unsigned)lanes);
      LLVMValueRef ld = LLVMBuildLoad2(b, lt, elem_ptr(L, bi, L->off[bi]), "");
      LLVMSetAlignment(ld, (unsigned)lanes * dtype_align(st));
      for (int l = 0; l < lanes; l++) {
        LLVMValueRef x = lanes == 1 ? ld : LLVMBuildExtractElement(b, ld, LLVMConstInt(i32, (unsigned)l, 0), "");
        vec = LLVMBuildInsertElement(b, vec, x, LLVMConstInt(i32, (unsigned)(g * lanes + l), 0), "");
      }
    }
    L->vload[bi] = vec;
  }
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    clear_cache(L);
    if (ph->kind == KP_REDUCE) {
      LoomDType vt = red_value_dtype(k, ph);
      LLVMValueRef a = red_identity(L, ph->reduce_op, vt);
      LLVMValueRef ai = cg_i64(m, GPU_EMPTY_INDEX);
      for (int j = 0; j < K; j++) {
        L->lane = (unsigned)j;
        gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
        clear_cache(L);
        eval_needed(L, &ph->value, 1);
        LLVMValueRef v = L->cache[ph->value];
        if (is_arg(ph->reduce_op)) {
          LLVMValueRef take = cg_arg_better(m, (LoomReduceOp)ph->reduce_op, vt, a, v);
          take = LLVMBuildOr(b, take, LLVMBuildICmp(b, LLVMIntEQ, ai, cg_i64(m, GPU_EMPTY_INDEX), ""), "");
          take = LLVMBuildAnd(b, take, valid[j], "");
          a = LLVMBuildSelect(b, take, v, a, "");
          ai = LLVMBuildSelect(b, take, to_i64(L, rj[j]), ai, "");
        } else {
          a = LLVMBuildSelect(b, valid[j], red_combine(L, ph->reduce_op, vt, a, v), a, "");
        }
      }
      clear_cache(L);
      L->acc[p] = a;
      L->accidx[p] = ai;
      gpu_block_reduce(L, p);
    } else if (ph->kind == KP_MAP) {
      /* lanes > 1 and every store contiguous along R: one vector store per group and store */
      bool vst = lanes > 1 && ph->nstores <= GPU_VEC_MAXBUF;
      for (int s = 0; vst && s < ph->nstores; s++) vst = k->bufs[k->stores[ph->store_begin + s].buf].layout[k->ndim - 1] == KL_ONE;
      for (int g = 0; g < G; g++) {
        LLVMBasicBlockRef yes = new_bb(L, "cmap"), after = new_bb(L, "cmap.after");
        LLVMBuildCondBr(b, valid[g * lanes], yes, after);
        LLVMPositionBuilderAtEnd(b, yes);
        LLVMValueRef sv[GPU_VEC_MAXBUF];
        for (int s = 0; vst && s < ph->nstores; s++) {
          LoomDType bt = (LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype;
          sv[s] = LLVMGetUndef(LLVMVectorType(cg_mem_type(m, bt), (unsigned)lanes));
        }
        for (int l = 0; l < lanes; l++) {
          int j = g * lanes + l;
          L->lane = (unsigned)j;
          gpu_offsets(L, rj[j], k->nkeep, k->ndim, L->ooff, L->off);
          clear_cache(L);
          if (!vst) {
            emit_stores(L, ph);
          } else {
            for (int s = 0; s < ph->nstores; s++) {
              const KStore *kst = &k->stores[ph->store_begin + s];
              eval_needed(L, &kst->value, 1);
              LLVMValueRef v = cg_to_mem(m, (LoomDType)k->instrs[kst->value].dtype, (LoomDType)k->bufs[kst->buf].dtype,
                                         L->cache[kst->value]);
              sv[s] = LLVMBuildInsertElement(b, sv[s], v, LLVMConstInt(i32, (unsigned)l, 0), "");
            }
          }
          clear_cache(L);
        }
        if (vst) {
          gpu_offsets(L, rj[g * lanes], k->nkeep, k->ndim, L->ooff, L->off);
          for (int s = 0; s < ph->nstores; s++) {
            const KStore *kst = &k->stores[ph->store_begin + s];
            LoomDType bt = (LoomDType)k->bufs[kst->buf].dtype;
            LLVMSetAlignment(LLVMBuildStore(b, sv[s], elem_ptr(L, kst->buf, L->off[kst->buf])), (unsigned)lanes * dtype_align(bt));
          }
        }
        LLVMBuildBr(b, after);
        LLVMPositionBuilderAtEnd(b, after);
      }
    } else {
      LLVMBasicBlockRef t0 = new_bb(L, "final"), after = new_bb(L, "final.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, iconst_i(L, 0), ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      run_final_phase(L, ph);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    }
  }
  clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lane = 0;
}

/* Loads the lanes-wide vector at element offset `base` of every buffer the kernel loads into vl[b]
 * (NULL for the others). The launcher guarantees the alignment (lanes * dtype size). */
static void load_vectors(Lower *L, LLVMValueRef base, unsigned lanes, LLVMValueRef *vl) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  for (int bi = 0; bi < k->nbuf; bi++) vl[bi] = NULL;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || vl[in->buf]) continue;
    LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
    LLVMValueRef ld = LLVMBuildLoad2(m->b, LLVMVectorType(cg_mem_type(m, st), lanes), elem_ptr(L, in->buf, base), "");
    LLVMSetAlignment(ld, lanes * dtype_align(st));
    vl[in->buf] = ld;
  }
}

/* Folds the lanes points of one loaded vector (vl, first point `base`) into acc in lane order. */
static LLVMValueRef fold_vector(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef acc, LLVMValueRef *vl,
                                LLVMValueRef base, unsigned lanes) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = vl[bi];
  for (unsigned l = 0; l < lanes; l++) {
    LLVMValueRef pt = LLVMBuildAdd(b, base, iconst_i(L, l), "");
    for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = pt;
    L->lin = to_i64(L, pt);
    L->lane = l;
    clear_cache(L);
    eval_needed(L, &ph->value, 1);
    acc = red_combine(L, ph->reduce_op, vt, acc, L->cache[ph->value]);
  }
  clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lin = NULL;
  L->lane = 0;
  return acc;
}

/* One part of the vector PART entry of a 1-d full reduction (every loaded buffer contiguous): the
 * nv = nr / lanes vectors are split into nparts balanced ranges (sizes only); part p's block walks
 * its range with GPU_UNROLL independent accumulators, each fed a whole 16-byte vector per step (all
 * GPU_UNROLL vector loads issued before the adds), the remainder into accumulator 0, and the last
 * part also takes the nr % lanes tail points (one per thread). Accumulators are folded in order
 * 0, 1, ..., then across the block: the bits depend on the sizes and block only. */
static void gpu_partv_item(Lower *L, LLVMValueRef part, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[0];
  LLVMBuilderRef b = L->m.b;
  unsigned lanes = (unsigned)e->lanes;
  LoomDType vt = red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  for (int bi = 0; bi < k->nbuf; bi++) L->ooff[bi] = iconst_i(L, 0);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef nvec = LLVMBuildUDiv(b, e->nr, iconst_i(L, lanes), "");
  LLVMValueRef q = LLVMBuildUDiv(b, nvec, e->nparts, ""), r = LLVMBuildURem(b, nvec, e->nparts, "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
  LLVMValueRef vlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
  LLVMValueRef vhi = LLVMBuildAdd(b, LLVMBuildAdd(b, vlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  LLVMValueRef accs[GPU_UNROLL];
  for (int j = 0; j < GPU_UNROLL; j++) {
    accs[j] = entry_alloca(L, vty, "vacc");
    LLVMBuildStore(b, red_identity(L, ph->reduce_op, vt), accs[j]);
  }
  LLVMValueRef iv = entry_alloca(L, L->ity, "vi");
  LLVMBuildStore(b, LLVMBuildAdd(b, vlo, e->tid, ""), iv);
  LLVMValueRef limit = LLVMBuildSub(b, vhi, LLVMBuildMul(b, e->bdim, iconst_i(L, GPU_UNROLL - 1), ""), "");
  LLVMValueRef vl[GPU_UNROLL][GPU_VEC_MAXBUF];
  /* main loop: GPU_UNROLL vectors per thread per step */
  LLVMBasicBlockRef head = new_bb(L, "pv.head"), body = new_bb(L, "pv.body"), exit = new_bb(L, "pv.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef vbase[GPU_UNROLL];
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef v = LLVMBuildAdd(b, i, LLVMBuildMul(b, e->bdim, iconst_i(L, j), ""), "");
    vbase[j] = LLVMBuildMul(b, v, iconst_i(L, lanes), "");
    load_vectors(L, vbase[j], lanes, vl[j]);
  }
  for (int j = 0; j < GPU_UNROLL; j++) {
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[j], "");
    LLVMBuildStore(b, fold_vector(L, ph, vt, a, vl[j], vbase[j], lanes), accs[j]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, e->bdim, iconst_i(L, GPU_UNROLL), ""), ""), iv);
  LLVMBuildBr(b, head);
  /* remainder: one vector per step into accumulator 0 */
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBasicBlockRef rhead = new_bb(L, "pv.rhead"), rbody = new_bb(L, "pv.rbody"), rexit = new_bb(L, "pv.rexit");
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rhead);
  i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, vhi, ""), rbody, rexit);
  LLVMPositionBuilderAtEnd(b, rbody);
  LLVMValueRef base = LLVMBuildMul(b, i, iconst_i(L, lanes), "");
  load_vectors(L, base, lanes, vl[0]);
  LLVMBuildStore(b, fold_vector(L, ph, vt, LLVMBuildLoad2(b, vty, accs[0], ""), vl[0], base, lanes), accs[0]);
  LLVMBuildStore(b, LLVMBuildAdd(b, i, e->bdim, ""), iv);
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rexit);
  /* the tail points (nr % lanes < lanes <= blockDim): the last part, one per thread */
  LLVMValueRef t = LLVMBuildAdd(b, LLVMBuildMul(b, nvec, iconst_i(L, lanes), ""), e->tid, "");
  LLVMValueRef last = LLVMBuildICmp(b, LLVMIntEQ, part, LLVMBuildSub(b, e->nparts, iconst_i(L, 1), ""), "");
  LLVMValueRef take = LLVMBuildAnd(b, last, LLVMBuildICmp(b, LLVMIntSLT, t, e->nr, ""), "");
  LLVMBasicBlockRef tyes = new_bb(L, "pv.tail"), tafter = new_bb(L, "pv.tail.after");
  LLVMBuildCondBr(b, take, tyes, tafter);
  LLVMPositionBuilderAtEnd(b, tyes);
  for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = t;
  L->lin = to_i64(L, t);
  clear_cache(L);
  eval_needed(L, &ph->value, 1);
  LLVMBuildStore(b, red_combine(L, ph->reduce_op, vt, LLVMBuildLoad2(b, vty, accs[0], ""), L->cache[ph->value]), accs[0]);
  clear_cache(L);
  L->lin = NULL;
  LLVMBuildBr(b, tafter);
  LLVMPositionBuilderAtEnd(b, tafter);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = cg_i64(&L->m, 0);
  for (int j = 1; j < GPU_UNROLL; j++) gpu_combine(L, ph, vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[j], ""), ai, true);
  L->acc[0] = a;
  L->accidx[0] = ai;
  gpu_block_reduce(L, 0);
  LLVMBasicBlockRef t0 = new_bb(L, "pv.write"), after = new_bb(L, "pv.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, iconst_i(L, 0), ""), t0, after);
  LLVMPositionBuilderAtEnd(b, t0);
  store_partial(L, partial_ptr(L, e->partials, part, e->acc_size));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
}

static void mark_kernel(Lower *L, LLVMValueRef fn) {
  LLVMContextRef c = L->m.c;
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(fn), LLVMMDStringInContext2(c, "kernel", 6),
                            LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0))};
  LLVMAddNamedMetadataOperand(L->m.m, "nvvm.annotations", LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, 3)));
}

static void build_gpu_entry(Lower *L, int which, bool row, const char *name, int nwords, int lanes, int acc_size) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMContextRef c = m->c;
  int nb = k->nbuf, nd = k->ndim;
  LLVMTypeRef words_t = LLVMArrayType2(L->i64, (uint64_t)nwords);
  LLVMTypeRef ptr0 = LLVMPointerTypeInContext(c, 0), gptr = LLVMPointerTypeInContext(c, 1);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c), &ptr0, 1, 0);
  LLVMValueRef fn = LLVMAddFunction(m->m, name, fty);
  unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
  LLVMAddAttributeAtIndex(fn, 1, LLVMCreateTypeAttribute(c, byval, words_t));
  unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMAddAttributeAtIndex(fn, 1, LLVMCreateEnumAttribute(c, align, 8));
  add_fn_attrs(L, fn, NULL, 0);
  mark_kernel(L, fn);
  L->fn = fn;
  L->alloca_bb = LLVMAppendBasicBlockInContext(c, fn, "allocas");
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c, fn, "start");
  LLVMPositionBuilderAtEnd(b, start);
  LLVMValueRef args = LLVMGetParam(fn, 0);
  bool i32 = L->ity != L->i64;
#define WORD(i) LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, args, (LLVMValueRef[]){cg_i64(m, (i))}, 1, ""), "")
#define IDX(v) (i32 ? LLVMBuildTrunc(b, (v), L->ity, "") : (v))
  for (int d = 0; d < nd; d++) L->shape[d] = IDX(WORD(d));
  for (int bi = 0; bi < nb; bi++) {
    L->base[bi] = LLVMBuildIntToPtr(b, WORD(nd + bi), gptr, "");
    for (int d = 0; d < nd; d++) {
      uint8_t lay = k->bufs[bi].layout[d];
      L->stride[bi * nd + d] = lay == KL_ONE ? iconst_i(L, 1) : lay == KL_ZERO ? iconst_i(L, 0) : IDX(WORD(nd + nb + bi * nd + d));
    }
  }
  int extra = nd + nb + nb * nd;
  GpuEntry e = {.which = which, .row = row, .acc_size = acc_size, .lanes = lanes};
  e.no = iconst_i(L, 1);
  for (int d = 0; d < k->nkeep; d++) e.no = LLVMBuildMul(b, e.no, L->shape[d], "");
  e.nr = iconst_i(L, 1);
  for (int d = k->nkeep; d < nd; d++) e.nr = LLVMBuildMul(b, e.nr, L->shape[d], "");
  L->rsize = to_i64(L, e.nr);
  e.nparts = IDX(WORD(extra));
  e.partials = LLVMBuildIntToPtr(b, WORD(extra + 1), gptr, "");
#undef WORD
#undef IDX
  e.tid = gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.tid.x");
  e.bdim = gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.ntid.x");
  LLVMValueRef bid = gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.ctaid.x");
  LLVMValueRef nbk = gpu_sreg(L, "llvm.nvvm.read.ptx.sreg.nctaid.x");
  LLVMValueRef gtid = LLVMBuildAdd(b, LLVMBuildMul(b, bid, e.bdim, ""), e.tid, "");
  LLVMValueRef gstride = LLVMBuildMul(b, nbk, e.bdim, "");
  L->depth = 0;
  L->off = L->levels;
  for (int bi = 0; bi < nb; bi++) L->ooff[bi] = iconst_i(L, 0);
  if (which == GPU_ELEM) {
    LLVMValueRef n = LLVMBuildMul(b, e.no, e.nr, "");
    worker_begin(L); /* a GPU worker is one thread (it may get no point) */
    gpu_for(L, gtid, n, gstride, gpu_elem_point, NULL);
    worker_end(L);
  } else if (which == GPU_ELEMV || which == GPU_ELEMVW) {
    LLVMValueRef n = L->shape[0];
    LLVMValueRef nvec = LLVMBuildUDiv(b, n, iconst_i(L, lanes), "");
    worker_begin(L); /* one worker per thread across its vectors and its tail point */
    gpu_for(L, gtid, nvec, gstride, gpu_elemv_step, (void *)(intptr_t)lanes);
    if (which == GPU_ELEMV) { /* the tail: one point per thread (vecw: the launcher ensures none) */
      LLVMValueRef tail = LLVMBuildAdd(b, LLVMBuildMul(b, nvec, iconst_i(L, lanes), ""), gtid, "");
      gpu_for(L, tail, n, gstride, gpu_elem_point, NULL);
    }
    worker_end(L);
  } else if (which == GPU_CACHED) {
    gpu_for(L, bid, e.no, nbk, gpu_cached_item, &e);
  } else if (which == GPU_PARTV) {
    gpu_for(L, bid, e.nparts, nbk, gpu_partv_item, &e);
  } else {
    LLVMValueRef count = which == GPU_PART ? LLVMBuildMul(b, e.no, e.nparts, "") : e.no;
    if (row && which != GPU_FINISH) gpu_for(L, bid, count, nbk, gpu_red_item, &e);
    else gpu_for(L, gtid, count, gstride, gpu_red_item, &e);
  }
  LLVMBuildRetVoid(b);
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBuildBr(L->ab, start);
}

int cg_gpu_vec_lanes(const KernelIr *k) {
  /* 1-d, every buffer contiguous, at most 64 stores (a user kernel that reads the point index `i`
   * needs the scalar entry's per-point index) */
  if (!k || k->nkeep != k->ndim || k->ndim != 1 || k->nstore > 64 || k->nbuf <= 0) return 0;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_INDEX) return 0;
  int maxsize = 1;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (k->bufs[bi].layout[0] != KL_ONE) return 0;
    int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    if (sz > maxsize) maxsize = sz;
  }
  return 16 / maxsize >= 2 ? 16 / maxsize : 0;
}

/* ROW or COL for a reduction: COL when the REDUCE values read some buffer contiguously along the
 * last O dim and none contiguously along the innermost R dim (the host's use_outer test, MAP phases
 * allowed: a thread then walks R serially for them too). */
static bool gpu_use_col(const KernelIr *k, uint8_t *need) { return reduce_reads_outer(k, need, true); }

LoomStatus cg_lower_gpu(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k,
                        const char *prefix, int block, CgGpuKernel *out, Diag *d) {
  if (!k || !out || !prefix) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: null kernel");
  LoomStatus st = check_kernel(k, d);
  if (st != LOOM_OK) return st;
  if (block < 32 || block > 1024 || block % 32)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: GPU block size %d is not a multiple of 32 in [32, 1024]", block);
  memset(out, 0, sizeof *out);
  bool red = k->nkeep < k->ndim;
  if (!red && k->nphase != 1)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: elementwise kernel '%s' has %d phases", k->name, k->nphase);
  Lower L;
  bool allocated = lower_init(&L, ctx, c, mod, k, d);
  L.m.libdevice = true;
  L.ity = k->index_bits == 32 ? LLVMInt32TypeInContext(c) : L.i64;
  int nwords = k->ndim + k->nbuf + k->nbuf * k->ndim + CG_GPU_EXTRA;
  out->nwords = nwords;
  out->block = block;
  if (!allocated) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering kernel '%s'", k->name);
  } else if (cg_snippet_lower(ctx, &L.m, k, &L.sn, d) != LOOM_OK) {
    st = d->status;
  } else if (!red) {
    out->strategy = CG_GPU_ELEMENTWISE;
    snprintf(out->main, sizeof out->main, "%s_elem", prefix);
    build_gpu_entry(&L, GPU_ELEM, false, out->main, nwords, 0, 0);
    int lanes = cg_gpu_vec_lanes(k);
    if (lanes > 0) {
      out->vec_lanes = lanes;
      out->vec_align = 0;
      for (int bi = 0; bi < k->nbuf; bi++) {
        int a = lanes * (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
        if (a > out->vec_align) out->vec_align = a;
      }
      snprintf(out->vec, sizeof out->vec, "%s_vec", prefix);
      build_gpu_entry(&L, GPU_ELEMV, false, out->vec, nwords, lanes, 0);
      snprintf(out->vecw, sizeof out->vecw, "%s_vecw", prefix);
      build_gpu_entry(&L, GPU_ELEMVW, false, out->vecw, nwords, lanes, 0);
    }
  } else {
    bool col = gpu_use_col(k, L.need);
    out->strategy = col ? CG_GPU_COL : CG_GPU_ROW;
    bool split = k->phases[0].kind == KP_REDUCE && (k->nphase == 1 || (k->nphase == 2 && k->phases[1].kind == KP_FINAL));
    out->acc_size = split ? (is_arg(k->phases[0].reduce_op) ? 16 : 8) : 0;
    snprintf(out->main, sizeof out->main, "%s_%s", prefix, col ? "col" : "row");
    L.unroll_red = !col;
    build_gpu_entry(&L, GPU_MAIN, !col, out->main, nwords, 0, 0);
    if (split) {
      snprintf(out->part, sizeof out->part, "%s_part", prefix);
      snprintf(out->finish, sizeof out->finish, "%s_finish", prefix);
      build_gpu_entry(&L, GPU_PART, !col, out->part, nwords, 0, out->acc_size);
      L.unroll_red = false;
      build_gpu_entry(&L, GPU_FINISH, false, out->finish, nwords, 0, out->acc_size);
      snprintf(out->finishb, sizeof out->finishb, "%s_finishb", prefix);
      build_gpu_entry(&L, GPU_FINISHB, true, out->finishb, nwords, 0, out->acc_size);
    }
    L.unroll_red = false;
    /* the cached ROW entry: worth it when R is walked more than once (several REDUCE/MAP phases)
     * and few buffers are loaded (GPU_CACHE_K registers each) */
    int walks = 0, nloaded = 0;
    for (int p = 0; p < k->nphase; p++) walks += k->phases[p].kind == KP_REDUCE || k->phases[p].kind == KP_MAP;
    for (int bi = 0; bi < k->nbuf; bi++) {
      bool loaded = false;
      for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
      nloaded += loaded;
    }
    /* vector entries need every loaded buffer contiguous along the (last) R dim: lanes points of
     * the widest loaded dtype per 16-byte load */
    int vlanes = 0;
    if (!k->snippet && nloaded > 0 && k->nbuf <= GPU_VEC_MAXBUF) {
      int maxsize = 1;
      bool contig = true;
      for (int bi = 0; bi < k->nbuf; bi++) {
        bool loaded = false;
        for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
        if (!loaded) continue;
        contig = contig && k->bufs[bi].layout[k->ndim - 1] == KL_ONE;
        int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
        if (sz > maxsize) maxsize = sz;
      }
      if (contig && 16 / maxsize >= 2) vlanes = 16 / maxsize;
    }
    if (split && vlanes && k->nkeep == 0 && k->ndim == 1 && !is_arg(k->phases[0].reduce_op)) {
      out->part_lanes = vlanes;
      snprintf(out->partv, sizeof out->partv, "%s_partv", prefix);
      build_gpu_entry(&L, GPU_PARTV, true, out->partv, nwords, vlanes, out->acc_size);
    }
    if (!col && walks >= 2 && nloaded <= GPU_CACHE_BUFS) {
      out->cache_k = GPU_CACHE_K;
      snprintf(out->cached, sizeof out->cached, "%s_rowc", prefix);
      build_gpu_entry(&L, GPU_CACHED, true, out->cached, nwords, 0, 0);
      if (vlanes && k->ndim - k->nkeep == 1 && GPU_CACHE_K % vlanes == 0) {
        out->cache_lanes = vlanes;
        snprintf(out->cachedv, sizeof out->cachedv, "%s_rowcv", prefix);
        build_gpu_entry(&L, GPU_CACHED, true, out->cachedv, nwords, vlanes, 0);
      }
    }
  }
  if (st == LOOM_OK) st = d->status;
  return lower_finish(&L, ctx, mod, "GPU ", st, d);
}
