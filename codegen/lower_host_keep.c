/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_keep.c: a value a host row kernel computes in a REDUCE phase and again in its MAP phase is
 * stored by the REDUCE phase into the row of the MAP phase's output and read back from there.
 *
 * A row kernel walks its row once per phase (lower_host.c: body_o_point); softmax's exp(x - max) is made
 * by the sum phase and again by the map phase that divides it by the sum: two exp a point where one
 * does. The plan: the map phase q stores one output, contiguous along the kernel's one R dim; the value
 * V it reads from the phases before it (the frontier of what it shares with the REDUCE phases) is one
 * costly value (a math function or a division among its operands) that varies along the row, and the
 * output's dtype holds it exactly (the same dtype, or V is a widening of a value of that dtype: float16
 * softmax). Then the last REDUCE phase p < q that computes V also stores it into the output at the
 * point, and q reads it back (the row is in cache: one load instead of the math) and overwrites it with
 * its result. Entries take their buffers as noalias (the runtime never passes overlapping buffers), so
 * the early stores touch no input, and the values are the same SSA values q would recompute: the
 * results do not change. Only the full-row form uses it (not a split of R across tasks).
 * LOOM_HOST_ROW_KEEP=0: off (A/B timings).
 */
#include <string.h>

#include "codegen/cg_lower.h"

static bool costly_op(LoomOp op) {
  switch (op) {
  case LOOM_OP_EXP: case LOOM_OP_EXP2: case LOOM_OP_EXPM1: case LOOM_OP_LOG: case LOOM_OP_LOG2: case LOOM_OP_LOG10:
  case LOOM_OP_LOG1P: case LOOM_OP_CBRT: case LOOM_OP_SIN: case LOOM_OP_COS: case LOOM_OP_TAN: case LOOM_OP_ASIN:
  case LOOM_OP_ACOS: case LOOM_OP_ATAN: case LOOM_OP_SINH: case LOOM_OP_COSH: case LOOM_OP_TANH: case LOOM_OP_ASINH:
  case LOOM_OP_ACOSH: case LOOM_OP_ATANH: case LOOM_OP_POW: case LOOM_OP_ATAN2: case LOOM_OP_HYPOT: case LOOM_OP_ERF:
  case LOOM_OP_ERFC: return true;
  default: return false;
  }
}

/* costly[i]: instruction i is, or reads through its operands, a math function (exp, log, tanh, pow, ...). */
void cg_costly_values(const KernelIr *k, uint8_t *costly) {
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    costly[i] = in->kind == KI_ELEM && costly_op((LoomOp)in->op);
    for (int j = 0; j < cg_instr_nsrc(in); j++) costly[i] |= costly[in->src[j]];
  }
}

static void phase_needs(const KernelIr *k, const KPhase *ph, uint8_t *need) {
  memset(need, 0, (size_t)k->ninstr);
  if (ph->kind == KP_REDUCE) need[ph->value] = 1;
  else
    for (int s = 0; s < ph->nstores; s++) need[k->stores[ph->store_begin + s].value] = 1;
  for (int i = k->ninstr - 1; i >= 0; i--)
    if (need[i])
      for (int j = 0; j < cg_instr_nsrc(&k->instrs[i]); j++) need[k->instrs[i].src[j]] = 1;
}

void cg_host_keep_plan(Lower *L) {
  const KernelIr *k = L->k;
  L->hkeep_v = -1;
  static int knob = -1;
  if (!cg_env_int_once(&knob, "LOOM_HOST_ROW_KEEP", 1) || k->snippet || k->nphase < 2 || k->nkeep != k->ndim - 1 ||
      !L->varies)
    return;
  int n = k->ninstr, q = -1;
  for (int p = 0; p < k->nphase; p++)
    if (k->phases[p].kind == KP_MAP) q = p;
  if (q < 1 || k->phases[q].nstores != 1) return;
  const KStore *st = &k->stores[k->phases[q].store_begin];
  int ob = st->buf, last = k->ndim - 1;
  if (st->scatter || k->bufs[ob].layout[last] != KL_ONE) return;
  for (int i = 0; i < n; i++)
    if ((k->instrs[i].kind == KI_LOAD || k->instrs[i].kind == KI_GATHER) && k->instrs[i].buf == ob) return;
  for (int p = 0; p < k->nphase; p++)
    for (int s = 0; p != q && s < k->phases[p].nstores; s++)
      if (k->stores[k->phases[p].store_begin + s].buf == ob) return;
  uint8_t *buf = ctx_calloc(L->ctx, (size_t)n * 4 + 4, 1);
  if (!buf) return;
  uint8_t *costly = buf, *done = buf + n, *need = buf + 2 * n, *needq = buf + 3 * n;
  cg_costly_values(k, costly);
  for (int p = 0; p < q; p++)
    if (k->phases[p].kind == KP_REDUCE) {
      phase_needs(k, &k->phases[p], need);
      for (int i = 0; i < n; i++) done[i] |= need[i];
    }
  phase_needs(k, &k->phases[q], needq);
  int v = -1, nfront = 0;
  for (int i = 0; i < n; i++) {
    if (!needq[i] || !done[i] || !L->varies[i]) continue;
    bool front = st->value == i;
    for (int u = i + 1; u < n && !front; u++)
      if (needq[u] && !done[u])
        for (int j = 0; j < cg_instr_nsrc(&k->instrs[u]); j++) front |= k->instrs[u].src[j] == i;
    if (!front) continue;
    nfront += costly[i];
    if (costly[i]) v = i;
  }
  int p = -1;
  if (v >= 0 && nfront == 1)
    for (int r = q - 1; r >= 0 && p < 0; r--) {
      const KPhase *ph = &k->phases[r];
      if (ph->kind != KP_REDUCE || ph->reduce_op == LOOM_REDUCE_ARGMIN || ph->reduce_op == LOOM_REDUCE_ARGMAX) continue;
      phase_needs(k, ph, need);
      if (need[v]) p = r;
    }
  /* the output holds V exactly: the same dtype, or V widens a value of the output's dtype */
  LoomDType bt = (LoomDType)k->bufs[ob].dtype;
  const KInstr *vi = v >= 0 ? &k->instrs[v] : NULL;
  bool exact = vi && ((LoomDType)vi->dtype == bt ||
                      (vi->kind == KI_CAST && (LoomDType)k->instrs[vi->src[0]].dtype == bt &&
                       (vi->dtype == LOOM_FLOAT32 || vi->dtype == LOOM_FLOAT64) &&
                       (bt == LOOM_FLOAT16 || bt == LOOM_BFLOAT16 || bt == LOOM_FLOAT32)));
  if (p >= 0 && exact) {
    L->hkeep_v = v;
    L->hkeep_p = p;
    L->hkeep_q = q;
    L->hkeep_buf = ob;
  }
  ctx_free(L->ctx, buf);
}

/* In REDUCE phase p's walk, after the point's value: V into the output at the point. */
void cg_host_keep_store(Lower *L, const KPhase *ph) {
  const KernelIr *k = L->k;
  if (!L->hkeep_on || ph != &k->phases[L->hkeep_p] || !L->cache[L->hkeep_v]) return; /* (on: hkeep_v >= 0) */
  int ob = L->hkeep_buf;
  LoomDType bt = (LoomDType)k->bufs[ob].dtype;
  LLVMValueRef v = cg_to_mem(&L->m, (LoomDType)k->instrs[L->hkeep_v].dtype, bt, L->cache[L->hkeep_v]);
  LLVMSetAlignment(LLVMBuildStore(L->m.b, v, cg_elem_ptr(L, ob, L->off[ob])), dtype_align(bt));
}

/* The MAP phase's point: V read back from the output, then its stores. */
void cg_host_keep_map(Lower *L, void *arg) {
  const KernelIr *k = L->k;
  int ob = L->hkeep_buf;
  LoomDType bt = (LoomDType)k->bufs[ob].dtype;
  cg_clear_cache(L);
  LLVMValueRef ld = LLVMBuildLoad2(L->m.b, cg_mem_type(&L->m, bt), cg_elem_ptr(L, ob, L->off[ob]), "");
  LLVMSetAlignment(ld, dtype_align(bt));
  L->cache[L->hkeep_v] = cg_from_mem(&L->m, bt, (LoomDType)k->instrs[L->hkeep_v].dtype, ld);
  cg_emit_stores(L, (const KPhase *)arg);
  cg_clear_cache(L);
}
