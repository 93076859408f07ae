/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_take.c: the radix sort module's grid-stride kernels (gpu_radix.h): loom_radix_zero (the
 * scratch words) and loom_radix_take<bytes> (rows gathered by a permutation), over gpu_radix_gen.h. */
#include <stdio.h>

#include "codegen/gpu_radix_gen.h"

/* ---- grid-stride kernels: loom_radix_zero, loom_radix_take<bytes> ----------------------------------------- */
/* Opens `for (i = global thread; i < n; i += threads of the grid)`: the builder in the body, *i the index;
 * close with stride_loop_end. */
typedef struct StrideLoop {
  LLVMBasicBlockRef entry, head, body, done;
  LLVMValueRef i, stride, first;
} StrideLoop;
static StrideLoop stride_loop_begin(Gen *g, LLVMValueRef n) {
  StrideLoop l;
  LLVMValueRef tid = zext64(g, thread_id(g)), bid = zext64(g, g->h.index(&g->m, CG_GPU_BLOCK_ID));
  LLVMValueRef bdim = zext64(g, g->h.index(&g->m, CG_GPU_BLOCK_DIM)), gdim = zext64(g, g->h.index(&g->m, CG_GPU_GRID_DIM));
  l.first = add(g, mul(g, bid, bdim), tid);
  l.stride = mul(g, gdim, bdim);
  l.entry = LLVMGetInsertBlock(g->b);
  l.head = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "head");
  l.body = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "body");
  l.done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "done");
  LLVMBuildBr(g->b, l.head);
  LLVMPositionBuilderAtEnd(g->b, l.head);
  l.i = LLVMBuildPhi(g->b, g->i64, "i");
  LLVMBuildCondBr(g->b, ult(g, l.i, n), l.body, l.done);
  LLVMPositionBuilderAtEnd(g->b, l.body);
  return l;
}
static void stride_loop_end(Gen *g, StrideLoop *l) {
  LLVMValueRef next = add(g, l->i, l->stride);
  LLVMBasicBlockRef last = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, l->head);
  LLVMValueRef iv[2] = {l->first, next};
  LLVMBasicBlockRef ib[2] = {l->entry, last};
  LLVMAddIncoming(l->i, iv, ib, 2);
  LLVMPositionBuilderAtEnd(g->b, l->done);
}

void cg_radix_gen_zero(Gen *g) {
  LLVMTypeRef ps[2] = {g->pg, g->i64};
  begin_kernel(g, "loom_radix_zero", ps, 2);
  StrideLoop l = stride_loop_begin(g, LLVMGetParam(g->fn, 1));
  store(g, c32(g, 0), at(g, g->i32, LLVMGetParam(g->fn, 0), l.i), 4);
  stride_loop_end(g, &l);
  LLVMBuildRetVoid(g->b);
}

/* loom_radix_take<bytes>(ptr src, ptr index, ptr dst, ptr bad, i64 m, i64 ns, i64 total): for i < total
 * (row = i / m), k = index[i] (int64; negative counts from the row's end): dst[i] = src[row * ns + k];
 * an index outside [-ns, ns) writes nothing there and sets *bad = 1. Rows gathered by a permutation
 * (payloads of a sort, the keys of a lexicographic one; take_along_axis). */
void cg_radix_gen_take(Gen *g, int bytes) {
  char name[32];
  snprintf(name, sizeof name, "loom_radix_take%d", bytes);
  LLVMTypeRef ps[7] = {g->pg, g->pg, g->pg, g->pg, g->i64, g->i64, g->i64};
  begin_kernel(g, name, ps, 7);
  LLVMValueRef src = LLVMGetParam(g->fn, 0), index = LLVMGetParam(g->fn, 1), dst = LLVMGetParam(g->fn, 2);
  LLVMValueRef bad = LLVMGetParam(g->fn, 3), m = LLVMGetParam(g->fn, 4), ns = LLVMGetParam(g->fn, 5);
  LLVMTypeRef t = LLVMIntTypeInContext(g->m.c, (unsigned)bytes * 8);
  unsigned align = (unsigned)(bytes > 8 ? 8 : bytes);
  StrideLoop l = stride_loop_begin(g, LLVMGetParam(g->fn, 6));
  LLVMValueRef row0 = mul(g, LLVMBuildUDiv(g->b, l.i, m, ""), ns);
  LLVMValueRef k = load(g, g->i64, at(g, g->i64, index, l.i), 8);
  k = sel(g, LLVMBuildICmp(g->b, LLVMIntSLT, k, c64(g, 0), ""), add(g, k, ns), k);
  LLVMBasicBlockRef in = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "in");
  LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "out");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "next");
  LLVMBuildCondBr(g->b, ult(g, k, ns), in, out);
  LLVMPositionBuilderAtEnd(g->b, in);
  store(g, load(g, t, at(g, t, src, add(g, row0, k)), align), at(g, t, dst, l.i), align);
  LLVMBuildBr(g->b, next);
  LLVMPositionBuilderAtEnd(g->b, out);
  store(g, c32(g, 1), bad, 4);
  LLVMBuildBr(g->b, next);
  LLVMPositionBuilderAtEnd(g->b, next);
  stride_loop_end(g, &l);
  LLVMBuildRetVoid(g->b);
}

