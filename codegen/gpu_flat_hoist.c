/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_flat_hoist.c: the row-invariant values of a flatv vector, evaluated once per row it touches.
 *
 * A flatv vector of a kernel of 3 or more dims (gpu_strategies.c: lanes consecutive points of the flat
 * index) lies in one row of the last dim or crosses into the next one (the launcher runs it only where a
 * row holds a whole vector; 2-d flatv runs rows of any width: not hoisted).
 * A value that does not depend on the last coordinate (its loads and offsets all have stride 0 along the
 * last dim: a keypoint's centre, a row's mean, (y - cy)^2 of a heatmap) is therefore one of two values per
 * vector, the row's and the next row's. cg_gpu_flat_hoist evaluates the kernel's frontier of such values
 * (those a varying instruction or a store reads) at lane 0's row, and at the next row only where the
 * vector crosses a row end (col + lanes > width: a branch that, for rows of hundreds of points, few warps
 * take); each lane then starts from those values (a select on whether it lies past the row end) instead
 * of loading and computing them again: keypoint_heatmaps' lanes shared 3 of their 4 loads and a
 * subtraction and a product. The bits do not change (the same operations on the same inputs).
 * Not hoisted: complex values, user kernels, gathers, KI_INDEX. LOOM_GPU_FLAT_HOIST=0: off (A/B).
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

bool cg_gpu_flat_hoist_on(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_FLAT_HOIST", 1) != 0;
}

/* Per instruction: 1 where its value is the same at every point of a row of the last dim, 2 where it
 * also reads memory or an offset (worth hoisting); 0 where it varies along the row. */
static void row_invariance(const KernelIr *k, uint8_t *inv) {
  int last = k->ndim - 1;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    switch (in->kind) {
    case KI_CONST:
    case KI_PARAM:
    case KI_NPOINTS: inv[i] = 1; break;
    case KI_LOAD:
    case KI_OFFSET: inv[i] = k->bufs[in->buf].layout[last] == KL_ZERO ? 2 : 0; break;
    case KI_ELEM:
    case KI_CAST: {
      uint8_t v = 1;
      for (int s = 0; s < cg_instr_nsrc(in) && v; s++) {
        uint8_t a = inv[in->src[s]];
        v = a == 0 ? 0 : (a > v ? a : v);
      }
      inv[i] = v;
      break;
    }
    default: inv[i] = 0; break; /* KI_INDEX, KI_GATHER, KI_ACC, user calls */
    }
  }
}

void cg_gpu_flat_hoist(Lower *L, unsigned lanes, LLVMValueRef row, LLVMValueRef col, const LLVMValueRef *boff,
                       CgFlatHoist *h) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  h->n = 0;
  if (!row || lanes < 2 || k->snippet || k->nbuf > 64 || !cg_gpu_flat_hoist_on()) return;
  uint8_t *inv = calloc((size_t)k->ninstr + 1, 1), *front = calloc((size_t)k->ninstr + 1, 1);
  if (!inv || !front) {
    free(inv);
    free(front);
    return;
  }
  row_invariance(k, inv);
  /* the frontier: memory-reading invariant values that a varying instruction or a store reads */
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (inv[i]) continue;
    for (int s = 0; s < cg_instr_nsrc(in); s++)
      if (in->kind != KI_USER && inv[in->src[s]] == 2) front[in->src[s]] = 1;
  }
  const KPhase *ph = &k->phases[0];
  for (int s = 0; s < ph->nstores; s++) {
    int32_t v = k->stores[ph->store_begin + s].value;
    if (inv[v] == 2) front[v] = 1;
  }
  for (int i = 0; i < k->ninstr && h->n < CG_FLAT_HOIST_MAX; i++)
    if (front[i] && !dtype_is_complex((LoomDType)k->instrs[i].dtype)) h->id[h->n++] = i;
  free(inv);
  free(front);
  if (!h->n) return;
  int last = k->ndim - 1;
  /* lane 0's row */
  L->lane = 0;
  for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = boff[bi];
  cg_clear_cache(L);
  cg_eval_needed(L, h->id, h->n);
  for (int j = 0; j < h->n; j++) h->v0[j] = L->cache[h->id[j]];
  /* the next row, where the vector reaches it (then it exists) */
  LLVMValueRef cross = LLVMBuildICmp(b, LLVMIntSGT, LLVMBuildAdd(b, col, cg_iconst_i(L, (int64_t)lanes), ""),
                                     L->shape[last], "");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), next_bb = cg_new_bb(L, "hoist.next"), join = cg_new_bb(L, "hoist.join");
  LLVMBuildCondBr(b, cross, next_bb, join);
  LLVMPositionBuilderAtEnd(b, next_bb);
  cg_gpu_offsets(L, LLVMBuildAdd(b, row, cg_iconst_i(L, 1), ""), 0, last, NULL, L->off); /* stride 0 along last */
  cg_clear_cache(L);
  cg_eval_needed(L, h->id, h->n);
  LLVMValueRef vn[CG_FLAT_HOIST_MAX];
  for (int j = 0; j < h->n; j++) vn[j] = L->cache[h->id[j]];
  LLVMBasicBlockRef next_end = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  for (int j = 0; j < h->n; j++) {
    h->v1[j] = LLVMBuildPhi(b, LLVMTypeOf(h->v0[j]), "");
    LLVMAddIncoming(h->v1[j], (LLVMValueRef[]){h->v0[j], vn[j]}, (LLVMBasicBlockRef[]){pre, next_end}, 2);
  }
  cg_clear_cache(L);
}

void cg_gpu_flat_hoist_lane(Lower *L, const CgFlatHoist *h, LLVMValueRef past) {
  for (int j = 0; j < h->n; j++)
    L->cache[h->id[j]] = past ? LLVMBuildSelect(L->m.b, past, h->v1[j], h->v0[j], "") : h->v0[j];
}
