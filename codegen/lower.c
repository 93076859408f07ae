/* SPDX-License-Identifier: Apache-2.0 */
/* lower.c: the shared part of the lowering of a KernelIr to an LLVM module (cg_lower.h): the kernel
 * checks, the instruction evaluator, stores and phases at a point, per-worker regions, module set-up
 * and verification. The loop structures that visit the points live in lower_host.c (the CPU's row
 * walks) and gpu_lower.c / gpu_strategies.c (thread-index loops of GPU targets).
 *
 * The evaluator (cg_eval_needed) emits the instructions a set of roots needs, in index order (the IR
 * is in dependency order, so no recursion), through math.c; loads and stores address
 * base[b] + off[b] where off is the element offset of the current point, kept by the loop code. A
 * vector entry sets L->vload (the 16-byte vector of each loaded buffer) and L->lane instead: loads
 * then extract that lane.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>

#include "codegen/cg_lower.h"

int cg_instr_nsrc(const KInstr *in) {
  switch (in->kind) {
  case KI_ELEM: {
    const OpInfo *info = op_info((LoomOp)in->op);
    return info ? info->arity : 0;
  }
  case KI_CAST: return 1;
  case KI_USER_OUT: return 1;
  case KI_GATHER: return 1;
  default: return 0;
  }
}

/* Structural checks codegen relies on (ir_verify_kernel does the full job). */
LoomStatus cg_check_kernel(const KernelIr *k, Diag *d) {
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
    if (in->kind >= KI_KIND_COUNT || in->dtype >= LOOM_DTYPE_COUNT ||
        (dtype_compute((LoomDType)in->dtype) != in->dtype && in->kind != KI_CAST))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d has a bad kind or dtype", i);
    for (int j = 0; j < cg_instr_nsrc(in); j++)
      if (in->src[j] < 0 || in->src[j] >= i)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d uses %d (not an earlier one)", i, in->src[j]);
    if (in->kind == KI_ELEM && in->op >= LOOM_OP_COUNT)
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d has op %d", i, in->op);
    if (in->kind == KI_PARAM && (in->op >= k->nparam || dtype_is_complex((LoomDType)in->dtype)))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d is parameter %d of %d", i, in->op, k->nparam);
    if ((in->kind == KI_LOAD || in->kind == KI_OFFSET || in->kind == KI_GATHER) && (in->buf < 0 || in->buf >= k->nbuf))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d loads buffer %d", i, in->buf);
    if (in->kind == KI_ACC && (in->phase < 0 || in->phase >= k->nphase ||
                               (k->phases[in->phase].kind != KP_REDUCE && k->phases[in->phase].kind != KP_SCAN)))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: instruction %d reads phase %d (not a REDUCE phase)", i, in->phase);
  }
  bool red = k->nkeep < k->ndim;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind > KP_SCAN || (!red && ph->kind != KP_MAP) ||
        (ph->kind == KP_SCAN && (k->nphase != 1 || k->ndim - k->nkeep != 1 || ph->value < 0 || ph->value >= k->ninstr ||
                                 ph->reduce_op > LOOM_REDUCE_MAX || k->instrs[ph->value].dtype != ph->acc_dtype)))
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: phase %d has kind %d", p, ph->kind);
    if (ph->kind == KP_REDUCE) {
      if (ph->value < 0 || ph->value >= k->ninstr ||
          (ph->reduce_op >= LOOM_REDUCE_COUNT && !(ph->reduce_op == IR_REDUCE_USER && k->snippet)) ||
          ph->acc_dtype >= LOOM_DTYPE_COUNT || dtype_compute((LoomDType)ph->acc_dtype) != ph->acc_dtype)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: reduce phase %d is malformed", p);
      if (!is_arg(ph->reduce_op) && k->instrs[ph->value].dtype != ph->acc_dtype)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: reduce phase %d folds a %s value into a %s accumulator",
                          p, loom_dtype_name(k->instrs[ph->value].dtype), loom_dtype_name(ph->acc_dtype));
      for (int s = ph->store_begin; s < ph->store_begin + ph->nstores && s < k->nstore; s++)
        if (s >= 0 && k->stores[s].scatter) /* side stores (cg_reduce_point) are plain */
          return diag_error(d, LOOM_ERR_INTERNAL, "codegen: reduce phase %d has a scatter store", p);
    }
    {
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

void cg_clear_cache(Lower *L) {
  memset(L->cache, 0, sizeof(LLVMValueRef) * (size_t)L->k->ninstr);
}

LLVMTypeRef cg_vec_type(CgMath *m, LoomDType st, unsigned lanes) {
  if (dtype_is_complex(st)) return LLVMVectorType(cg_reg_type(m, dtype_real_of(st)), 2 * lanes);
  return LLVMVectorType(cg_mem_type(m, st), lanes);
}

LLVMValueRef cg_vec_get(CgMath *m, LoomDType st, LLVMValueRef vec, unsigned lane) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  if (!dtype_is_complex(st)) return LLVMBuildExtractElement(m->b, vec, LLVMConstInt(i32, lane, 0), "");
  LLVMValueRef re = LLVMBuildExtractElement(m->b, vec, LLVMConstInt(i32, 2 * lane, 0), "");
  LLVMValueRef im = LLVMBuildExtractElement(m->b, vec, LLVMConstInt(i32, 2 * lane + 1, 0), "");
  return cg_cx_make(m, st, re, im);
}

LLVMValueRef cg_vec_set(CgMath *m, LoomDType st, LLVMValueRef vec, LLVMValueRef v, unsigned lane) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  if (!dtype_is_complex(st)) return LLVMBuildInsertElement(m->b, vec, v, LLVMConstInt(i32, lane, 0), "");
  vec = LLVMBuildInsertElement(m->b, vec, cg_cx_re(m, v), LLVMConstInt(i32, 2 * lane, 0), "");
  return LLVMBuildInsertElement(m->b, vec, cg_cx_im(m, v), LLVMConstInt(i32, 2 * lane + 1, 0), "");
}

LLVMValueRef cg_elem_ptr(Lower *L, int b, LLVMValueRef off) {
  LLVMTypeRef et = cg_mem_type(&L->m, (LoomDType)L->k->bufs[b].dtype);
  return LLVMBuildGEP2(L->m.b, et, L->base[b], &off, 1, "");
}

/* Inside a host row walk the address is the row's pointer plus the point's offset along the row, both
 * inbounds (every address a kernel touches lies in its buffer) and the offset an nsw multiple of the
 * stride: LLVM's vectorizer then sees a constant stride's addresses as one non-wrapping sequence, so
 * stride 2-4 views become interleaved groups (wide loads + shuffles) instead of gathers or scalar loads
 * (one GEP of base + (row + j * stride) loses inbounds when InstCombine splits it at the loop; constant
 * strides are addressed in bytes so that the nsw survives: lower_host_strided.c). */
LLVMValueRef cg_point_ptr(Lower *L, int b) {
  if (L->final_phase) return cg_elem_ptr(L, b, L->ooff[b]);
  if (L->rowptr && L->rowptr[b] && L->off[b] == L->rowabs[b]) return cg_host_row_point_ptr(L, b);
  return cg_elem_ptr(L, b, L->off[b]);
}

/* int64 product of the kernel's dims (host: i64 shapes; GPU: the index type). */
LLVMValueRef cg_npoints64(Lower *L) {
  LLVMValueRef n = cg_i64(&L->m, 1);
  for (int d = 0; d < L->k->ndim; d++) {
    LLVMValueRef s = L->shape[d];
    if (LLVMTypeOf(s) != L->i64) s = LLVMBuildSExt(L->m.b, s, L->i64, "");
    n = LLVMBuildMul(L->m.b, n, s, "");
  }
  return n;
}

LLVMValueRef cg_param_value(Lower *L, LoomDType t, LLVMValueRef word) {
  CgMath *m = &L->m;
  if (t == LOOM_BOOL) return LLVMBuildICmp(m->b, LLVMIntNE, word, cg_i64(m, 0), "");
  if (t == LOOM_FLOAT64) return LLVMBuildBitCast(m->b, word, LLVMDoubleTypeInContext(m->c), "");
  if (dtype_is_float(t))
    return LLVMBuildBitCast(m->b, LLVMBuildTrunc(m->b, word, LLVMInt32TypeInContext(m->c), ""),
                            LLVMFloatTypeInContext(m->c), "");
  LLVMTypeRef rt = cg_reg_type(m, t);
  return rt == LLVMTypeOf(word) ? word : LLVMBuildTrunc(m->b, word, rt, "");
}

void cg_load_params(Lower *L, LLVMValueRef (*word)(Lower *L, int p, void *arg), void *arg) {
  for (int32_t i = 0; i < L->k->ninstr; i++) {
    const KInstr *in = &L->k->instrs[i];
    if (in->kind == KI_PARAM) L->param[in->op] = cg_param_value(L, (LoomDType)in->dtype, word(L, in->op, arg));
  }
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
      return cg_from_mem(m, st, t, cg_vec_get(m, st, L->vload[b], L->lane));
    LLVMValueRef p = cg_point_ptr(L, b);
    LLVMValueRef v = LLVMBuildLoad2(m->b, cg_mem_type(m, st), p, "");
    LLVMSetAlignment(v, dtype_align(st));
    return cg_from_mem(m, st, t, v);
  }
  case KI_CONST: return cg_const(m, t, in->value);
  case KI_PARAM: return L->param[in->op];
  case KI_ELEM: {
    LLVMValueRef args[3] = {NULL, NULL, NULL};
    int n = cg_instr_nsrc(in);
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
    m->uniform = !L->varies[i];
    m->rhs_varies = n == 2 && L->varies[in->src[1]];
    LLVMValueRef v = cg_elem(m, (LoomOp)in->op, opd, args);
    m->uniform = m->rhs_varies = false;
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
  case KI_NPOINTS: return cg_cast(m, LOOM_INT64, t, cg_npoints64(L));
  case KI_GATHER: return cg_gather_load(L, i); /* lower_gather.c */
  case KI_OFFSET: { /* an index buffer: base word = binding offset * 8 (ir.h), plus the point's offset */
    int b = in->buf;
    LLVMValueRef off = L->final_phase ? L->ooff[b] : L->off[b];
    if (!off) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction %d reads an offset outside a point loop", i);
      return LLVMGetUndef(cg_reg_type(m, t));
    }
    if (LLVMTypeOf(off) != L->i64) off = LLVMBuildSExt(m->b, off, L->i64, "");
    LLVMValueRef base = LLVMBuildAShr(m->b, LLVMBuildPtrToInt(m->b, L->base[b], L->i64, ""), cg_i64(m, 3), "");
    return cg_cast(m, LOOM_INT64, t, LLVMBuildAdd(m->b, base, off, ""));
  }
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: instruction kind %d", in->kind);
    return LLVMGetUndef(cg_reg_type(m, t));
  }
}

/* Emits (once per scope) the instructions that roots need, in index order. */
void cg_eval_needed(Lower *L, const int32_t *roots, int nroots) {
  const KernelIr *k = L->k;
  int hi = -1;
  memset(L->need, 0, (size_t)k->ninstr);
  for (int r = 0; r < nroots; r++) {
    L->need[roots[r]] = 1;
    if (roots[r] > hi) hi = roots[r];
  }
  for (int i = hi; i >= 0; i--) {
    if (!L->need[i] || L->cache[i]) continue;
    for (int j = 0; j < cg_instr_nsrc(&k->instrs[i]); j++) L->need[k->instrs[i].src[j]] = 1;
    if (k->instrs[i].kind == KI_USER) /* its arguments (checked by cg_snippet_lower) */
      for (int j = 0; j < k->instrs[i].phase; j++)
        if (k->user_args[k->instrs[i].buf + j] >= 0) L->need[k->user_args[k->instrs[i].buf + j]] = 1;
  }
  for (int i = 0; i <= hi; i++)
    if (L->need[i] && !L->cache[i]) L->cache[i] = emit_one(L, i);
}

/* Reductions: the built-in combiner and identity, or the snippet's for IR_REDUCE_USER. */
LLVMValueRef cg_red_identity(Lower *L, int op, LoomDType t) {
  if (op == IR_REDUCE_USER) return cg_snippet_identity(L->sn, &L->m);
  return cg_identity(&L->m, (LoomReduceOp)op, t);
}

LLVMValueRef cg_red_combine(Lower *L, int op, LoomDType t, LLVMValueRef a, LLVMValueRef v) {
  if (op == IR_REDUCE_USER) return cg_snippet_combine(L->sn, &L->m, a, v);
  return cg_combine(&L->m, (LoomReduceOp)op, t, a, v);
}

void cg_emit_stores(Lower *L, const KPhase *ph) {
  const KernelIr *k = L->k;
  for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
    const KStore *st = &k->stores[s];
    if (st->scatter) { /* lower_gather.c */
      cg_scatter_store(L, st);
      continue;
    }
    cg_eval_needed(L, &st->value, 1);
    LoomDType bt = (LoomDType)k->bufs[st->buf].dtype;
    LLVMValueRef v = cg_to_mem(&L->m, (LoomDType)k->instrs[st->value].dtype, bt, L->cache[st->value]);
    LLVMValueRef p = cg_point_ptr(L, st->buf);
    LLVMSetAlignment(LLVMBuildStore(L->m.b, v, p), dtype_align(bt));
  }
}

/* A REDUCE phase's value at the current point (L->cache[ph->value]), then its side stores there (ir.h):
 * every walk of a REDUCE phase calls this once per point it folds, at a valid point, with L->off set
 * for every buffer, and visits every point (no early exit). A walk that cannot is not used for a kernel
 * with side stores (cg_has_side_stores): gpu_rowvec.c, the cached ROW entry (clamped points), the
 * host's vector arg-reduction (it stops at a NaN); PARTV stores them as vectors itself (fold_vector). */
void cg_reduce_point(Lower *L, const KPhase *ph) {
  cg_eval_needed(L, &ph->value, 1);
  /* only a REDUCE phase's stores are side stores: a SCAN phase's (cg_gpu_reduce_range totals a scan's
   * tiles with it) run after the scan, reading its running value */
  if (ph->kind == KP_REDUCE && ph->nstores > 0) cg_emit_stores(L, ph);
}

bool cg_has_side_stores(const KernelIr *k) {
  for (int p = 0; p < k->nphase; p++)
    if (k->phases[p].kind == KP_REDUCE && k->phases[p].nstores > 0) return true;
  return false;
}

/* ---- per-worker regions (user kernels' loop_prep / after_loop) ------------------------------------- */

/* Opens a worker (a host run() over a range, a GPU thread): its state block and loop_prep. */
void cg_worker_begin(Lower *L) {
  if (!cg_snippet_has_worker(L->sn)) return;
  LLVMValueRef state = cg_entry_alloca(L, cg_snippet_state_type(L->sn), "worker");
  cg_snippet_worker_begin(L->sn, &L->m, state, L->base, L->stride, cg_npoints64(L));
}

/* Closes the worker opened by cg_worker_begin: after_loop. */
void cg_worker_end(Lower *L) {
  if (cg_snippet_has_worker(L->sn)) cg_snippet_worker_end(L->sn, &L->m, L->base, L->stride, cg_npoints64(L));
}

LLVMValueRef cg_entry_alloca(Lower *L, LLVMTypeRef t, const char *name) {
  return LLVMBuildAlloca(L->ab, t, name);
}

LLVMBasicBlockRef cg_new_bb(Lower *L, const char *name) {
  return LLVMAppendBasicBlockInContext(L->m.c, L->fn, name);
}

/* ---- phases at a point ------------------------------------------------------------------------------ */

void cg_body_map(Lower *L, void *arg) {
  cg_clear_cache(L);
  if (L->k->snippet && L->k->nkeep == L->k->ndim) /* user calls are roots (they may write raw arrays) */
    for (int32_t i = 0; i < L->k->ninstr; i++)
      if (L->k->instrs[i].kind == KI_USER) cg_eval_needed(L, &i, 1);
  cg_emit_stores(L, (const KPhase *)arg);
  cg_clear_cache(L);
}

/* The value dtype a REDUCE phase accumulates (argmin/argmax: the compared value's). */
LoomDType cg_red_value_dtype(const KernelIr *k, const KPhase *ph) {
  return is_arg(ph->reduce_op) ? (LoomDType)k->instrs[ph->value].dtype : (LoomDType)ph->acc_dtype;
}

void cg_run_final_phase(Lower *L, const KPhase *ph) {
  cg_clear_cache(L);
  L->final_phase = true;
  cg_emit_stores(L, ph);
  L->final_phase = false;
  cg_clear_cache(L);
}

/* Whether the REDUCE phases' values load some buffer contiguously along the last O dim and none that
 * varies along O contiguously along the innermost R dim (so a loop across O is the coalesced /
 * vectorizable one).
 * With allow_map false a MAP phase rules it out. need: ninstr bytes of scratch. */
bool cg_reduce_reads_outer(const KernelIr *k, uint8_t *need, bool allow_map) { return cg_reduce_walk(k, need, allow_map, NULL); }

bool cg_reduce_walk(const KernelIr *k, uint8_t *need, bool allow_map, int *by_strides) {
  if (by_strides) *by_strides = -1;
  int strided_o = -1; /* a load with run-time strides along the last O dim and the innermost R dim */
  if (k->nkeep < 1 || k->nkeep >= k->ndim) return false;
  memset(need, 0, (size_t)k->ninstr);
  for (int p = 0; p < k->nphase; p++) {
    if (k->phases[p].kind == KP_MAP && !allow_map) return false;
    if (k->phases[p].kind == KP_REDUCE || k->phases[p].kind == KP_SCAN) need[k->phases[p].value] = 1;
  }
  bool contiguous_o = false;
  for (int i = k->ninstr - 1; i >= 0; i--) {
    const KInstr *in = &k->instrs[i];
    if (!need[i]) continue;
    for (int j = 0; j < cg_instr_nsrc(in); j++) need[in->src[j]] = 1;
    if (in->kind == KI_USER)
      for (int j = 0; j < in->phase; j++)
        if (k->user_args[in->buf + j] >= 0) need[k->user_args[in->buf + j]] = 1;
    if (in->kind != KI_LOAD) continue;
    const uint8_t *lay = k->bufs[in->buf].layout;
    /* a buffer constant along every O dim (a weight per row, u[:, None] in (u[:, None] * x).sum(0)) is one
     * value per r for the whole block of columns: contiguous along R or not, it does not ask for the
     * per-o walk (which strides the big operand down its rows, 50x slower) */
    bool o_const = true;
    for (int o = 0; o < k->nkeep; o++) o_const = o_const && lay[o] == KL_ZERO;
    if (lay[k->ndim - 1] == KL_ONE && !o_const) return false;
    if (lay[k->nkeep - 1] == KL_ONE) contiguous_o = true;
    if (lay[k->nkeep - 1] == KL_ANY && lay[k->ndim - 1] == KL_ANY) strided_o = in->buf;
  }
  if (!contiguous_o && by_strides) *by_strides = strided_o;
  return contiguous_o;
}

bool cg_reduce_walk_scratch(const KernelIr *k, bool allow_map, int *by_strides) {
  *by_strides = -1;
  uint8_t small[256], *need = k->ninstr <= (int32_t)sizeof small ? small : malloc((size_t)k->ninstr);
  if (!need) return false; /* (launch-time queries: no specialization) */
  bool outer = cg_reduce_walk(k, need, allow_map, by_strides);
  if (need != small) free(need);
  return outer;
}

int cg_strides_pick_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind, bool allow_map) {
  if (!k || !shape || !bind || k->call || k->walk_cols || k->nkeep < 1 || k->nkeep >= k->ndim) return 0;
  int b = -1;
  if (cg_reduce_walk_scratch(k, allow_map, &b) || b < 0) return 0;
  int64_t so = bind[b].strides[k->nkeep - 1], sr = bind[b].strides[k->ndim - 1];
  if (so < 0) so = -so;
  if (sr < 0) sr = -sr;
  /* a kept dim of extent 1 has stride 0: nothing to walk across */
  return shape[k->nkeep - 1] > 1 && so < sr ? 1 : 0;
}

/* Rows too short for a group of lanes: a scan or a one-REDUCE kernel whose rows hold at most
 * LOOM_GPU_THREAD_ROW_BYTES (CG_GPU_THREAD_ROW_BYTES; 0: never) bytes of its widest buffer (and 32 points), over
 * at least 2^14 rows, walks a thread a row (the COL walk, threads across the kept dims; loads a row apart
 * across a warp hit the same lines over the row's steps; a scan's rows that lie one after another go through
 * shared memory, gpu_stage.c). H100, 2026-12-07 (ab_knobs.sh): ROW scans ran a block a row (cumprod(1 + r,
 * axis=-1) of 10M x 12 float64: 6.03 ms; a thread a row 1.99; staged 0.64, torch.compile 0.69; rows of
 * 31 int32 -> int64, 248 bytes, unstaged: 6.4 ms, hence the bytes of every buffer); a reduction only where the
 * short-row mode cannot stage its tiles (gpu_stage.c: no loaded buffer contiguous along R and whole along
 * the kept dims; ((a[:, None] - b[None]) ** 2).sum(-1) over 3 coordinates: 0.69 -> 0.31 ms), as the staged
 * and lane-group modes won elsewhere (kmeans_argmin 0.028 against 0.040, int32 prod over rows of 3 0.199
 * against 0.228). */
#define CG_GPU_THREAD_ROW_BYTES 128
static bool gpu_thread_rows(const KernelIr *k, const int64_t *shape) {
  static int knob = -1;
  int limit = cg_env_int_once(&knob, "LOOM_GPU_THREAD_ROW_BYTES", CG_GPU_THREAD_ROW_BYTES);
  if (limit <= 0 || k->nphase < 1) return false;
  const KPhase *p0 = &k->phases[0];
  bool scan = p0->kind == KP_SCAN && k->nphase == 1;
  bool reduce = p0->kind == KP_REDUCE && (k->nphase == 1 || (k->nphase == 2 && k->phases[1].kind == KP_FINAL));
  if (!scan && !reduce) return false;
  for (int i = 0; reduce && i < k->ninstr; i++) { /* a buffer the short-row mode would stage: keep it */
    if (k->instrs[i].kind != KI_LOAD || k->ndim - k->nkeep != 1) continue;
    const uint8_t *lay = k->bufs[k->instrs[i].buf].layout;
    bool whole = lay[k->ndim - 1] == KL_ONE;
    for (int d = 0; d < k->nkeep; d++) whole = whole && lay[d] != KL_ZERO;
    if (whole) return false;
  }
  int64_t nr = 1, no = 1;
  for (int d = 0; d < k->ndim; d++) *(d < k->nkeep ? &no : &nr) *= shape[d];
  size_t widest = 0; /* of every buffer, stored ones too (int32 cumsum writes int64) */
  for (int b = 0; b < k->nbuf; b++) {
    size_t sz = loom_dtype_size((LoomDType)k->bufs[b].dtype);
    if (sz > widest) widest = sz;
  }
  /* at most 32 points (a staged scan's tile holds 32 a thread: gpu_lower.c) */
  return widest > 0 && no >= ((int64_t)1 << 14) && nr > 0 && nr <= 32 && (int64_t)widest * nr <= limit;
}

/* Reductions of short rows walked a thread a row (gpu_thread_rows) over at most LOOM_GPU_SMALL_ROWS points
 * (default 8; 0 or 1: off) compile a copy with the row's extent as a constant (KernelIr.row_extent; the IR's
 * contract: every buffer a constant stride along the last dim, its row stride constant or E times that): the
 * walk is then straight-line code (LLVM unrolls the constant loop; no unrolled accumulators to fold), with
 * every load a constant offset from the row's first. H100, pairwise ((a[:, None] - b[None]) ** 2).sum(-1)
 * over 3 coordinates: ~80 instructions a row before, for a walk of 3 points. One copy per extent. */
bool cg_row_extent_fits(const KernelIr *k, const SchedBinding *bind, int64_t e) {
  if (!k || !bind || k->call || k->snippet || k->nuser_arg || k->row_extent || k->ndim < 2) return false;
  int last = k->ndim - 1;
  if (k->nkeep != k->ndim && k->nkeep != last) return false; /* elementwise, or a reduction of the last dim alone */
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_SCAN || (ph->kind == KP_REDUCE && ph->reduce_op == IR_REDUCE_USER)) return false;
  }
  for (int s = 0; s < k->nstore; s++)
    if (k->stores[s].scatter) return false;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_USER || k->instrs[i].kind == KI_USER_OUT) return false;
  for (int b = 0; b < k->nbuf; b++) {
    int64_t c, r;
    if (!ir_layout_const(k->bufs[b].layout[last], &c)) return false;
    if (!ir_layout_const(k->bufs[b].layout[last - 1], &r) && bind[b].strides[last - 1] != e * c) return false;
  }
  return true;
}

int cg_gpu_row_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  static int knob = -1;
  int max = cg_env_int_once(&knob, "LOOM_GPU_SMALL_ROWS", 8);
  if (max < 2 || !k || !shape || k->ndim < 2 || k->nkeep != k->ndim - 1 || k->phases[0].kind != KP_REDUCE) return 0;
  int64_t e = shape[k->ndim - 1];
  if (e < 2 || e > max || e > 32 || !cg_row_extent_fits(k, bind, e)) return 0;
  uint8_t small[256], *need = k->ninstr <= (int32_t)sizeof small ? small : NULL;
  return need && !cg_reduce_reads_outer(k, need, true) && gpu_thread_rows(k, shape) ? (int)e : 0;
}

int cg_gpu_walk_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  static int knob = -1;
  if (!k || !shape || k->call || k->walk_cols || k->nkeep < 1 || k->nkeep >= k->ndim) return 0;
  uint8_t small[256], *need = k->ninstr <= (int32_t)sizeof small ? small : NULL;
  if (need && !cg_reduce_reads_outer(k, need, true) && gpu_thread_rows(k, shape)) return 1;
  if (!cg_env_int_once(&knob, "LOOM_GPU_WALK_BY_STRIDES", 1)) return 0;
  return cg_strides_pick_cols(k, shape, bind, true);
}

/* ---- functions and modules -------------------------------------------------------------------------- */

void cg_add_fn_attrs(Lower *L, LLVMValueRef fn, const char *const *attrs, int nattrs) {
  for (int i = 0; i < nattrs; i++) {
    const char *key = attrs[2 * i], *val = attrs[2 * i + 1];
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(L->m.c, key, (unsigned)strlen(key), val, (unsigned)strlen(val)));
  }
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->m.c, nounwind, 0));
}

/* Zeroes L and allocates its per-kernel arrays and builders (freed by cg_lower_finish, also after a
 * failed allocation). Returns false when an allocation failed. */
bool cg_lower_init(Lower *L, LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k,
                       Diag *d) {
  memset(L, 0, sizeof *L);
  L->hkeep_v = -1;
  L->outer_by_strides = -1;
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
  L->varies = ctx_calloc(ctx, ni, 1);
  for (int32_t i = 0; L->varies && i < k->ninstr; i++) { /* constants, parameters, REDUCE results, sizes: not */
    const KInstr *in = &k->instrs[i];
    uint8_t v = !(in->kind == KI_CONST || in->kind == KI_PARAM || in->kind == KI_REDSIZE || in->kind == KI_NPOINTS ||
                  in->kind == KI_ELEM || in->kind == KI_CAST ||
                  (in->kind == KI_ACC && in->phase < k->nphase && k->phases[in->phase].kind == KP_REDUCE));
    for (int j = 0; j < cg_instr_nsrc(in); j++) v |= L->varies[in->src[j]];
    L->varies[i] = v;
  }
  L->accarr = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->idxarr = ctx_calloc(ctx, np, sizeof(LLVMValueRef));
  L->vload = ctx_calloc(ctx, nb, sizeof(LLVMValueRef));
  L->param = ctx_calloc(ctx, (size_t)(k->nparam > 0 ? k->nparam : 0) + 1, sizeof(LLVMValueRef));
  L->m.b = LLVMCreateBuilderInContext(c);
  L->ab = LLVMCreateBuilderInContext(c);
  return L->shape && L->base && L->stride && L->levels && L->ooff && L->acc && L->accidx && L->cache &&
         L->need && L->varies && L->accarr && L->idxarr && L->vload && L->param;
}

/* Frees what a lowering allocated (every array of L may be NULL) and verifies the module when st is
 * LOOM_OK; returns the resulting status. */
LoomStatus cg_lower_finish(Lower *L, LoomContext *ctx, LLVMModuleRef mod, const char *what, LoomStatus st,
                               Diag *d) {
  LLVMDisposeBuilder(L->m.b);
  LLVMDisposeBuilder(L->ab);
  void *arrays[] = {L->shape, L->base, L->stride, L->levels, L->ooff, L->acc, L->accidx, L->cache,
                    L->need, L->varies, L->accarr, L->idxarr, L->vload, L->param};
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

void cg_loop_properties(Lower *L, LLVMValueRef br, const LLVMMetadataRef *props, unsigned n) {
  LLVMContextRef c = L->m.c;
  LLVMMetadataRef ops[8];
  ops[0] = LLVMTemporaryMDNode(c, NULL, 0);
  for (unsigned i = 0; i < n && i < 7; i++) ops[i + 1] = props[i];
  LLVMMetadataRef id = LLVMMDNodeInContext2(c, ops, 1 + (n < 7 ? n : 7));
  LLVMMetadataReplaceAllUsesWith(ops[0], id);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(c, "llvm.loop", 9), LLVMMetadataAsValue(c, id));
}
