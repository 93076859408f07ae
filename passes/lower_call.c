/* SPDX-License-Identifier: Apache-2.0 */
/* lower_call.c: pass_lower for a call kernel (FusedKernel.is_call, passes/calls.c): a KernelIr with a
 * KCall over [B..., M, N, K] (ir.h), its operands bound where their views lie (or to their own temp when
 * fuse.c realized them), the stored node (the product or its epilogue's root) bound to its output or temp.
 *
 * Contract: requires the operand and output layouts fuse.c checked (a BLAS takes their strides);
 * reports LOOM_ERR_INTERNAL when they are not.
 */
#include <stdio.h>
#include <string.h>

#include "passes/lower_internal.h"

/* ---- library calls (IR_MATMUL, passes/calls.c): a KernelIr with a KCall over [B..., M, N, K] ------- */

/* The buffer a call reads at top, bound with strides per call dim: dims[i] is the call dim of the
 * top's axis i. Operands materialized for the call are read from their own temp. */
static LoomStatus call_buffer(Lower *l, int32_t top, bool operand, const int *dims, int32_t *out) {
  const IrNode *t = &l->g->nodes[top];
  IrView v;
  if (operand && l->p->call_operand[top]) {
    v.leaf = top;
    v.offset = 0;
    pass_contiguous_strides(t->ndim, t->shape, v.strides);
  } else if (!pass_compute_view(l->g, top, &v)) {
    return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: call operand %%%d has no strided form", top);
  }
  int64_t strides[LOOM_MAX_RANK] = {0};
  for (int i = 0; i < t->ndim; i++) strides[dims[i]] = t->shape[i] == 1 ? 0 : v.strides[i];
  const IrNode *leaf = &l->g->nodes[v.leaf];
  LoomDType dt = (LoomDType)t->dtype;
  if (leaf->kind == IR_INPUT && !(operand && l->p->call_operand[top])) return pass_lower_buffer(l, dt, false, SB_INPUT, leaf->input, v.offset, strides, out);
  if (l->temp_of[v.leaf] >= 0) return pass_lower_buffer(l, dt, false, SB_TEMP, l->temp_of[v.leaf], v.offset, strides, out);
  if (l->out_of[v.leaf] >= 0) return pass_lower_buffer(l, dt, false, SB_OUTPUT, l->out_of[v.leaf], v.offset, strides, out);
  return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: call kernel reads %%%d, which is never stored", v.leaf);
}

LoomStatus pass_lower_call(Lower *l, int32_t kidx) {
  const FusedKernel *F = &l->p->kernels[kidx];
  const IrNode *mm = &l->g->nodes[F->call];
  int nd = mm->ndim, cd = nd + 1;
  if (cd > LOOM_MAX_RANK)
    return diag_error(l->d, LOOM_ERR_UNSUPPORTED, "matmul of rank %d: at most %d dims are supported", nd,
                      LOOM_MAX_RANK - 1);
  FusedKernel space = *F; /* the call's space [B..., M, N, K], for pass_lower_buffer() */
  space.ndim = cd;
  space.nkeep = cd - 1;
  memcpy(space.shape, mm->shape, sizeof(int64_t) * (size_t)nd);
  space.shape[nd] = l->g->nodes[mm->src[0]].shape[nd - 1];
  l->K = &space;
  int a_dims[LOOM_MAX_RANK], b_dims[LOOM_MAX_RANK], o_dims[LOOM_MAX_RANK];
  for (int i = 0; i < nd - 2; i++) a_dims[i] = b_dims[i] = o_dims[i] = i;
  a_dims[nd - 2] = nd - 2, a_dims[nd - 1] = nd;     /* a: M, K */
  b_dims[nd - 2] = nd, b_dims[nd - 1] = nd - 1;     /* b: K, N */
  o_dims[nd - 2] = nd - 2, o_dims[nd - 1] = nd - 1; /* out, bias, c: M, N */
  KCall *call = arena_alloc(l->m->arena, sizeof *call);
  if (!call) return pass_lower_oom(l);
  call->op = KC_MATMUL;
  call->act = F->epi.act;
  call->alpha = F->epi.alpha;
  call->beta = F->epi.c >= 0 ? F->epi.beta : 0.0;
  call->bias = call->c = -1;
  LoomStatus st;
  if ((st = call_buffer(l, mm->src[0], true, a_dims, &call->a)) != LOOM_OK) return st;
  if ((st = call_buffer(l, mm->src[1], true, b_dims, &call->b)) != LOOM_OK) return st;
  if (F->epi.bias >= 0 && (st = call_buffer(l, F->epi.bias, false, o_dims, &call->bias)) != LOOM_OK) return st;
  if (F->epi.c >= 0 && (st = call_buffer(l, F->epi.c, false, o_dims, &call->c)) != LOOM_OK) return st;
  /* the stored node: a root's output, else its temp; C-contiguous either way (fuse.c made sure), so
   * the product's own contiguous strides describe it even when the stored node is a reshape of it */
  int32_t x = F->call_store;
  int64_t st_in[LOOM_MAX_RANK], st_k[LOOM_MAX_RANK] = {0};
  SchedBufKind kind = SB_TEMP;
  int32_t index = l->temp_of[x];
  LoomDType dt = (LoomDType)mm->dtype;
  pass_contiguous_strides(mm->ndim, mm->shape, st_in);
  for (int32_t i = 0; i < l->m->nroots; i++)
    if (l->m->roots[i] == x) {
      kind = SB_OUTPUT;
      index = i;
      break;
    }
  if (index < 0) return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: call kernel %d stores %%%d nowhere", kidx, x);
  for (int i = 0; i < nd; i++) st_k[o_dims[i]] = mm->shape[i] == 1 ? 0 : st_in[i];
  if ((st = pass_lower_buffer(l, dt, true, kind, index, 0, st_k, &call->out)) != LOOM_OK) return st;

  KernelIr *k = arena_alloc(l->m->arena, sizeof *k);
  if (!k) return pass_lower_oom(l);
  snprintf(k->name, sizeof k->name, "k%d_matmul", kidx);
  k->ndim = cd;
  k->nkeep = cd - 1;
  k->index_bits = 64;
  k->nbuf = l->nbuf;
  k->bufs = l->bufs;
  k->call = call;
  SchedKernel *sk = &l->s->kernels[kidx];
  sk->ir = k;
  memset(sk->shape, 0, sizeof sk->shape);
  memcpy(sk->shape, space.shape, (size_t)cd * sizeof *space.shape);
  sk->bind = l->bind;
  return LOOM_OK;
}

/* The KP_SCAN phase of a scan kernel (l->K->is_scan): the source's cone converted to the result dtype
 * (NumPy's accumulate casts each input to it: rounded once to a float16 / bfloat16 result), folded in
 * its compute dtype (float16 / bfloat16 partials rounded at each step: scan_round); its stores are the
 * scan itself (KI_ACC: the running value) and the maps, which read the scan at their point as KI_ACC. */
