/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_outer_loads.c: reads along a small stride in the outer strategy's column walks.
 *
 * A column walk (lower_host_outer.c, lower_host_outer_regs.c, lower_host_outer_map.c) vectorizes its inner
 * loop over the block's columns. A buffer whose stride along the last O dim is a run-time value (the kept
 * axis of x[:, ::2].mean(0): the kernel's layout keeps small constant strides on its innermost dim only,
 * and in these kernels that is R) was read by AVX-512 gathers there, a 16-lane gather per row per 16
 * columns (strided_col_mean: the colpart 1.5 ms hot on one thread where scalar loads take 0.53).
 * So the walk is emitted once more per small stride s (2, 3, 4, -1): a run-time branch takes the copy in
 * which every such buffer's stride is s, with s a constant there, and the block loops address such a
 * buffer as lower_host_strided.c addresses row walks: `gep inbounds i8, rowptr, (mul nsw j, s * size)`
 * from a pointer invariant in the loop (the block's first column of the row). LoopAccessAnalysis then
 * proves the addresses do not wrap and the vectorizer forms an interleaved group (wide contiguous loads
 * and shuffles; one member: a group with gaps and a scalar epilogue) or, for -1, reversed vector loads.
 * Other strides take the walk as before. The copies compute the same values in the same order (same bits).
 * LOOM_HOST_COL_STRIDED_LOADS=0: one walk, gathers (A/B).
 */
#include <string.h>

#include "codegen/cg_lower.h"

static const int64_t col_strides[] = {2, 3, 4, -1};

static bool loads_on(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_HOST_COL_STRIDED_LOADS", 1) != 0;
}

/* Whether buffer bi's stride along the last O dim is a run-time value and the kernel reads bi by KI_LOAD. */
static bool runtime_col_stride(const KernelIr *k, int bi) {
  if (k->nkeep < 1 || k->bufs[bi].layout[k->nkeep - 1] != KL_ANY) return false;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi) return true;
  return false;
}

/* The walk with every run-time column stride taken as the constant s (saved: nb slots). */
static void walk_with_stride(Lower *L, OuterWalkFn walk, const void *arg, int64_t s, LLVMValueRef *saved) {
  const KernelIr *k = L->k;
  int nb = k->nbuf, lo = k->nkeep - 1;
  for (int bi = 0; bi < nb; bi++) {
    saved[bi] = L->stride[bi * k->ndim + lo];
    if (runtime_col_stride(k, bi)) L->stride[bi * k->ndim + lo] = cg_i64(&L->m, s);
  }
  L->outer_col_const = true;
  walk(L, arg);
  L->outer_col_const = false;
  for (int bi = 0; bi < nb; bi++) L->stride[bi * k->ndim + lo] = saved[bi];
}

void cg_outer_by_col_stride(Lower *L, OuterWalkFn walk, const void *arg) {
  const KernelIr *k = L->k;
  int nb = k->nbuf, lo = k->nkeep - 1, n = 0;
  for (int bi = 0; bi < nb; bi++) n += runtime_col_stride(k, bi);
  /* a launch specialization (KernelIr.col_stride): none of the small strides, or the one stride it has */
  if (!loads_on() || L->outer_col_const || !n || k->col_stride == IR_COL_STRIDE_OTHER) {
    walk(L, arg);
    return;
  }
  LLVMValueRef *saved = ctx_calloc(L->ctx, (size_t)nb, sizeof(LLVMValueRef));
  if (!saved) {
    walk(L, arg);
    return;
  }
  if (k->col_stride) {
    walk_with_stride(L, walk, arg, k->col_stride, saved);
    ctx_free(L->ctx, saved);
    return;
  }
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  LLVMBasicBlockRef join = cg_new_bb(L, "cstride.join");
  for (size_t v = 0; v < sizeof col_strides / sizeof col_strides[0]; v++) {
    LLVMValueRef s = cg_i64(m, col_strides[v]), all = LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0);
    for (int bi = 0; bi < nb; bi++)
      if (runtime_col_stride(k, bi)) all = LLVMBuildAnd(b, all, LLVMBuildICmp(b, LLVMIntEQ, L->stride[bi * k->ndim + lo], s, ""), "");
    LLVMBasicBlockRef yes = cg_new_bb(L, "cstride.const"), no = cg_new_bb(L, "cstride.next");
    LLVMBuildCondBr(b, all, yes, no);
    LLVMPositionBuilderAtEnd(b, yes);
    walk_with_stride(L, walk, arg, col_strides[v], saved);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, no);
  }
  ctx_free(L->ctx, saved);
  walk(L, arg);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
}

int cg_host_col_stride(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  if (!k || !shape || !bind || k->call || k->col_stride || k->nkeep < 1 || k->nkeep >= k->ndim || !loads_on()) return 0;
  static int knob = -1;
  if (!cg_env_int_once(&knob, "LOOM_HOST_COL_SPECIALIZE", 1)) return 0;
  int lo = k->nkeep - 1;
  int64_t s = 0;
  bool same = true;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (!runtime_col_stride(k, bi)) continue;
    if (s && bind[bi].strides[lo] != s) same = false;
    s = bind[bi].strides[lo];
  }
  if (!s) return 0; /* no column walk reads along a run-time stride */
  int by = -1; /* only kernels that walk columns have the copies (as cg_lower_host plans): one key for the rest */
  bool outer = cg_reduce_walk_scratch(k, cg_outer_map_ok(k), &by);
  if (!outer && (by < 0 || (!cg_host_by_strides_ok(k) && !cg_host_walk_cols(k, shape, bind)))) return 0;
  for (size_t v = 0; same && v < sizeof col_strides / sizeof col_strides[0]; v++)
    if (s == col_strides[v]) return (int)s;
  return IR_COL_STRIDE_OTHER;
}

/* Whether buffer bi's stride along the last O dim is a constant that the walks read as a group. */
static bool const_col_stride(const Lower *L, int bi, int64_t *s) {
  LLVMValueRef v = L->stride[bi * L->k->ndim + L->k->nkeep - 1];
  if (!L->outer_col_const || !LLVMIsAConstantInt(v)) return false;
  *s = LLVMConstIntGetSExtValue(v);
  return *s == -1 || (*s >= 2 && *s <= 4);
}

bool cg_outer_col_rows(Lower *L, const LLVMValueRef *outer, const LLVMValueRef *inner, LLVMValueRef j, CgRowSave *save) {
  const KernelIr *k = L->k;
  int nb = k->nbuf;
  int64_t s;
  save->ptr = L->rowptr, save->rel = L->rowrel, save->abs = L->rowabs, save->mine = NULL;
  bool any = false;
  for (int bi = 0; bi < nb && !any; bi++) any = const_col_stride(L, bi, &s);
  if (!any || !(save->mine = ctx_calloc(L->ctx, (size_t)nb * 3, sizeof(LLVMValueRef)))) return false;
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < nb; bi++) {
    if (!const_col_stride(L, bi, &s)) continue;
    LLVMTypeRef et = cg_mem_type(&L->m, (LoomDType)k->bufs[bi].dtype);
    save->mine[bi] = LLVMBuildInBoundsGEP2(b, et, L->base[bi], (LLVMValueRef *)&outer[bi], 1, "colrow");
    save->mine[nb + bi] = LLVMBuildNSWMul(b, j, cg_i64(&L->m, s), "");
    save->mine[2 * nb + bi] = inner[bi];
  }
  L->rowptr = save->mine, L->rowrel = save->mine + nb, L->rowabs = save->mine + 2 * nb;
  return true;
}

bool cg_outer_col_rows_shift(Lower *L, const LLVMValueRef *row, LLVMValueRef r, int d, CgRowSave *save) {
  const KernelIr *k = L->k;
  int nb = k->nbuf;
  LLVMValueRef *from = L->rowptr, *rel = L->rowrel;
  save->ptr = L->rowptr, save->rel = L->rowrel, save->abs = L->rowabs, save->mine = NULL;
  if (!from || !L->outer_col_const || !(save->mine = ctx_calloc(L->ctx, (size_t)nb * 3, sizeof(LLVMValueRef)))) return false;
  for (int bi = 0; bi < nb; bi++) {
    if (!from[bi] || L->rowabs[bi] != L->off[bi]) continue;
    LLVMTypeRef et = cg_mem_type(&L->m, (LoomDType)k->bufs[bi].dtype);
    LLVMValueRef shift = LLVMBuildNSWMul(L->m.b, r, L->stride[bi * k->ndim + d], "");
    save->mine[bi] = LLVMBuildInBoundsGEP2(L->m.b, et, from[bi], &shift, 1, "colrow");
    save->mine[nb + bi] = rel[bi];
    save->mine[2 * nb + bi] = row[bi];
  }
  L->rowptr = save->mine, L->rowrel = save->mine + nb, L->rowabs = save->mine + 2 * nb;
  return true;
}

void cg_outer_col_rows_end(Lower *L, CgRowSave *save) {
  L->rowptr = save->ptr, L->rowrel = save->rel, L->rowabs = save->abs;
  ctx_free(L->ctx, save->mine);
  save->mine = NULL;
}
