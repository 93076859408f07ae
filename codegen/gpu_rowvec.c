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

/* Folds vector vl (first point `first`) lane by lane into (*a, *ai). */
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
      LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)g->ph->reduce_op, g->vt, *a, v);
      *a = LLVMBuildSelect(b, take, v, *a, "");
      *ai = LLVMBuildSelect(b, take, cg_to_i64(L, LLVMBuildAdd(b, first, cg_iconst_i(L, l), "")), *ai, "");
    } else {
      *a = cg_red_combine(L, g->ph->reduce_op, g->vt, *a, v);
    }
  }
  cg_clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lane = 0;
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
  LLVMValueRef empty = cg_i64(m, GPU_EMPTY_INDEX);
  for (int u = 0; u < ROW_VEC_UNROLL; u++) {
    accs[u] = cg_entry_alloca(L, vty, "rva");
    accis[u] = cg_entry_alloca(L, L->i64, "rvai");
    LLVMBuildStore(b, cg_red_identity(L, g.ph->reduce_op, g.vt), accs[u]);
    LLVMValueRef i0 = empty;
    if (u == 0)
      i0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, tid, nvec, ""),
                           cg_to_i64(L, LLVMBuildMul(b, tid, cg_iconst_i(L, lanes), "")), empty, "");
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
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[u], ""), ai = LLVMBuildLoad2(b, L->i64, accis[u], "");
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
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = LLVMBuildLoad2(b, L->i64, accis[0], "");
    row_vec_fold(L, &g, vl[0], f0, (unsigned)lanes, &a, &ai);
    LLVMBuildStore(b, a, accs[0]);
    LLVMBuildStore(b, ai, accis[0]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, bdim, ""), iv);
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rexit);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = LLVMBuildLoad2(b, L->i64, accis[0], "");
  for (int u = 1; u < ROW_VEC_UNROLL; u++)
    cg_gpu_combine(L, g.ph, g.vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[u], ""),
                   arg ? LLVMBuildLoad2(b, L->i64, accis[u], "") : ai, true);
  LLVMBuildStore(b, a, resv);
  LLVMBuildStore(b, ai, resi);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  L->acc[p] = LLVMBuildLoad2(b, vty, resv, "");
  L->accidx[p] = LLVMBuildLoad2(b, L->i64, resi, "");
  return true;
}
