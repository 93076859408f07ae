/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_jam.c: the row jam of host elementwise walks (lower_host.c walk): an operand broadcast along
 * the rows is read once per `jam` rows instead of once per row. */
#include <string.h>

#include "codegen/cg_lower.h"

/* Rows per jammed iteration of an elementwise kernel's walk (0: none) and, in *min_cols, the shortest
 * row that is jammed. walk() runs `jam` consecutive rows (along the dim above the last) in one inner loop,
 * the body once per row at the same column: an operand of stride 0 along that dim (x + b, b[None, :],
 * x + b[:, None, :]) has one address for all of them, so its load is shared (GVN; noalias keeps the rows'
 * stores apart). On the CI box (Zen 4) streaming such a vector once per row cost 10-35 % beside x *
 * s[:, None] from rows of a page up; once per 4 rows closes that (2 rows did not), while rows under a
 * page ran 1.2-1.8x slower jammed (8 streams), and so did a kernel that streams no input (outer sums
 * a[:, None] + b: 4 output streams): bench/results/2026-12-04-s18-cpu-rowbcast.md. Only where the
 * points' order is free: no user code or scatter, no buffer both loaded and stored. */
enum { CG_JAM_MIN_ROW_BYTES = 4096 };
int cg_host_row_jam(const KernelIr *k, int64_t *min_cols) {
  static int knob = -1; /* LOOM_HOST_ROW_JAM: rows per jam, 0 off (A/B) */
  int jam = cg_env_int_once(&knob, "LOOM_HOST_ROW_JAM", 4), rd = k->ndim - 2, last = k->ndim - 1;
  if (jam < 2 || jam > 16 || k->ndim < 2 || k->nkeep != k->ndim || k->snippet || k->nuser_arg) return 0;
  for (int s = 0; s < k->nstore; s++)
    if (k->stores[s].scatter) return 0;
  int64_t esize = 0, srd, sl; /* the widest shared operand's element bytes */
  bool streamed = false;      /* an input read anew in each row and column */
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind == KI_USER || in->kind == KI_USER_OUT) return 0;
    if (in->kind != KI_LOAD && in->kind != KI_GATHER) continue;
    const KBuffer *bf = &k->bufs[in->buf];
    int64_t sz = (int64_t)loom_dtype_size((LoomDType)bf->dtype);
    if (bf->is_output) return 0;
    bool zrd = ir_layout_const(bf->layout[rd], &srd) && srd == 0;
    bool zl = ir_layout_const(bf->layout[last], &sl) && sl == 0;
    if (in->kind == KI_LOAD && zrd && !zl && sz > esize) esize = sz;
    streamed |= in->kind == KI_LOAD && !zrd && !zl;
  }
  *min_cols = esize ? (CG_JAM_MIN_ROW_BYTES + esize - 1) / esize : 0;
  return esize && streamed ? jam : 0;
}

/* lower_host.c walk()'s jammed rows iv[rd] .. iv[rd] + jam - 1, whole (the caller checked they are in [lo, hi) and in
 * the plane); ro: the first row's offsets, p0: its first point's index. Returns the loop's exit block. */
LLVMBasicBlockRef cg_host_jam_rows(Lower *L, int rd, int last, int jam, LLVMValueRef *ro, LLVMValueRef p0,
                                   LLVMValueRef *inner, LLVMValueRef *outer, BodyFn body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  const KernelIr *k = L->k;
  int nb = k->nbuf;
  /* per row q, 4 * nb values: its offsets, row pointers (before the loop), in-row and point offsets */
  LLVMValueRef *rv = ctx_calloc(L->ctx, (size_t)nb * 4 * (size_t)jam, sizeof(LLVMValueRef)), *sv[3];
  if (!rv) return diag_error(L->m.d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for %d buffers", nb), NULL;
  for (int q = 0; q < jam * nb; q++) {
    LLVMValueRef *r = rv + (size_t)(q / nb) * 4 * (size_t)nb;
    int bi = q % nb;
    r[bi] = LLVMBuildNSWAdd(b, ro[bi], LLVMBuildNSWMul(b, cg_i64(&L->m, q / nb), L->stride[bi * k->ndim + rd], ""), "");
    LLVMTypeRef et = cg_mem_type(&L->m, (LoomDType)k->bufs[bi].dtype);
    r[nb + bi] = LLVMBuildInBoundsGEP2(b, et, L->base[bi], &r[bi], 1, "jrow");
  }
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b), loop = cg_new_bb(L, "walk.jam"), done = cg_new_bb(L, "walk.jamdone");
  LLVMBuildBr(b, loop);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef j = LLVMBuildPhi(b, L->i64, "jj");
  memcpy(sv, (LLVMValueRef *[3]){L->rowptr, L->rowrel, L->rowabs}, sizeof sv);
  for (int q = 0; q < jam; q++) {
    LLVMValueRef *r = rv + (size_t)q * 4 * (size_t)nb;
    for (int bi = 0; bi < nb; bi++) {
      r[2 * nb + bi] = LLVMBuildNSWMul(b, j, L->stride[bi * k->ndim + last], "");
      r[3 * nb + bi] = inner[bi] = LLVMBuildNSWAdd(b, r[bi], r[2 * nb + bi], "");
    }
    L->rowptr = r + nb, L->rowrel = r + 2 * nb, L->rowabs = r + 3 * nb, L->off = inner;
    L->lin = LLVMBuildAdd(b, LLVMBuildAdd(b, p0, LLVMBuildNSWMul(b, cg_i64(&L->m, q), L->shape[last], ""), ""), j, "");
    L->depth++;
    body(L, arg);
    L->depth--;
    L->off = outer;
  }
  L->rowptr = sv[0], L->rowrel = sv[1], L->rowabs = sv[2];
  ctx_free(L->ctx, rv);
  LLVMValueRef j1 = LLVMBuildAdd(b, j, cg_i64(&L->m, 1), ""), vals[2] = {cg_i64(&L->m, 0), j1};
  LLVMBasicBlockRef body_end = LLVMGetInsertBlock(b), from[2] = {pre, body_end};
  LLVMValueRef back = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, L->shape[last], ""), loop, done);
  int ic = cg_host_inner_interleave(L, loop, body_end); /* as walk()'s inner loop */
  if (L->force_vf > 1 || ic) cg_host_loop_hints(L, back, L->force_vf > 1 ? L->force_vf : 0, ic);
  LLVMAddIncoming(j, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, done);
  return done;
}
