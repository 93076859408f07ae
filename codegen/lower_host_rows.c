/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_rows.c: host kernels specialized on a short last dim (KernelIr.row_extent = E).
 *
 * A kernel whose last dim has a few points known only at run time (RGB pixels: [2073600, 3]; rows of 7
 * features) otherwise walks each row with its own inner loop: loop set-up and a scalar remainder per 3
 * or 7 points, and nothing vectorizes. When the runtime sees such a launch (cg_host_row_extent: E in
 * 2 .. LOOM_HOST_SMALL_ROWS, every buffer's last-dim stride a constant c and its row stride 0, c or
 * E * c), it compiles a copy of the kernel with row_extent = E (a separate key: one kernel per extent).
 * Its code visits rows instead of points: the row body is E points unrolled, every address a constant
 * offset from the row's, so the loop over rows is a plain counted loop with constant strides, which the
 * loop vectorizer widens across rows (stride-E interleaved groups for packed rows; operands broadcast
 * along the rows, b[None, :], are loop-invariant loads it hoists into registers).
 *   - elementwise: [lo, hi) is cut into a partial first row, the whole rows, a partial last row; the
 *     partial ones take the generic walk (lower_host.c), the whole rows the row walk;
 *   - reductions of the last dim (one R dim of E points): each O point runs every phase unrolled, the
 *     REDUCE phases as straight-line folds in a fixed order, so the O loop is the vectorized one. Float
 *     sums fold in NumPy's order for a contiguous row (pairwise_sum: in order below 8 points; else 8
 *     partial sums combined as a tree, then the rest in order) without reassociation, which for E < 8 is
 *     also the order the generic walk's scalar loop used; every other fold is in order.
 * The generic code stays correct for a specialized kernel (the strides are passed as before), so the
 * outer strategy (L->outer) simply keeps it.
 */
#include <string.h>

#include "codegen/cg_lower.h"

/* LLVM's loop vectorizer forms interleaved groups of at most 8 accesses (max-interleave-group-factor):
 * longer rows would be gathers, and the generic walk already vectorizes them along the row. Except for
 * 16-bit floats: their generic walk converts each row's points one by one around a per-row loop (float16
 * log-softmax of 10^6 rows of 16, this 2-core box: 70 ms; specialized 11 ms, torch.compile 11.9); rows of
 * 9-16 such points are specialized too. Reductions of rows of 9-16 points are too (2026-12-07, this box, 4M
 * points of float32 / float64, generic -> specialized: sums 1.3-2.6x faster, max 1.5-2.2x (float32 rows of
 * 16: 0.88x), argmax 2.0-3.4x, three sums joined (Poincare distances) 1.9-4.4x, softmax 1.4-3.7x, l1
 * normalization 0.86-1.6x; the generic walk's per-row loop set-up and remainder over 9-16 points cost more
 * than the gathers: the FINAL phases' blocks and the joined sums came since the first measurement, which had
 * sums at 0.25-0.5x). Rows of 17-32 likewise (sums 1.1-1.7x, three joined sums 1.1-2.9x, argmax 1.6-2.9x, softmax
 * 1.1-2.0x, l1 normalization 1.0-1.3x) but min / max over rows of whole vectors (only_min_max). Elementwise rows of
 * 9-16 stay generic (0.8-1.45x, noise: no gain). */
enum { CG_ROWS_DEFAULT_MAX = 8, CG_ROWS_HALF_MAX = 16, CG_ROWS_LIMIT = 32, CG_ROWS_AUTO = 1 << 20 };

/* Whether every REDUCE phase of k is a min / max (not an arg-reduction): their generic walk runs along a row of
 * whole vectors with no remainder, vertical min / max then one horizontal fold, which the unrolled rows do not
 * beat (float32 max over rows of 16 / 24 / 32: 0.88x / 0.86x / 0.65x specialized). */
static bool only_min_max(const KernelIr *k) {
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_REDUCE && ph->reduce_op != LOOM_REDUCE_MIN && ph->reduce_op != LOOM_REDUCE_MAX) return false;
  }
  return true;
}

int cg_host_row_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  static int knob = -1; /* LOOM_HOST_SMALL_ROWS: the longest last dim specialized; 0 or 1: off (A/B) */
  int max = cg_env_int_once(&knob, "LOOM_HOST_SMALL_ROWS", CG_ROWS_AUTO);
  bool reduce = k && k->nkeep == k->ndim - 1, automatic = max == CG_ROWS_AUTO;
  if (automatic && k) { /* default: 32 for a reduction; elementwise 8, 16 for a kernel of 16-bit floats */
    max = reduce ? CG_ROWS_LIMIT : CG_ROWS_DEFAULT_MAX;
    for (int b = 0; !reduce && b < k->nbuf; b++)
      if (k->bufs[b].dtype == LOOM_FLOAT16 || k->bufs[b].dtype == LOOM_BFLOAT16) max = CG_ROWS_HALF_MAX;
  }
  if (max > CG_ROWS_LIMIT) max = CG_ROWS_LIMIT;
  if (!k || !shape || k->ndim < 2) return 0;
  int64_t e = shape[k->ndim - 1];
  if (reduce && automatic && e >= 16 && e % 8 == 0 && only_min_max(k)) return 0;
  if (e < 2 || e > max || !cg_row_extent_fits(k, bind, e)) return 0;
  bool map = k->nkeep == k->ndim;
  if (map && (k->nphase != 1 || k->phases[0].kind != KP_MAP)) return 0;
  return (int)e;
}

bool cg_host_rows_on(const Lower *L) { return L->k->row_extent >= 2 && !L->outer; }

/* The point j of the current row: L->off (and the row pointers' offsets) moved j * c along the last
 * dim from the row's first point, saved in `row` (3 * nb: off, rowrel, rowabs) by rows_save. */
typedef struct RowState {
  LLVMValueRef *off0, *rel0, *abs0; /* the row's first point (as the walk set them) */
  LLVMValueRef *abs, *rel, *rabs;   /* nb each: the current point; rabs: abs where rel is set, else NULL */
  LLVMValueRef lin0;
} RowState;

static bool rows_save(Lower *L, RowState *rs) {
  int nb = L->k->nbuf;
  rs->off0 = L->off, rs->rel0 = L->rowrel, rs->abs0 = L->rowabs, rs->lin0 = L->lin;
  rs->abs = ctx_calloc(L->ctx, (size_t)(nb > 0 ? nb : 1) * 3, sizeof(LLVMValueRef));
  rs->rel = rs->abs ? rs->abs + nb : NULL;
  rs->rabs = rs->abs ? rs->abs + 2 * nb : NULL;
  if (!rs->abs) diag_error(L->m.d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for %d buffers", nb);
  return rs->abs != NULL;
}

static void rows_at(Lower *L, RowState *rs, int j) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  int last = k->ndim - 1;
  bool rowptr = rs->rel0 && rs->abs0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef step = LLVMBuildNSWMul(b, cg_i64(&L->m, j), L->stride[bi * k->ndim + last], "");
    rs->abs[bi] = LLVMBuildNSWAdd(b, rs->off0[bi], step, "");
    /* the row pointer stands for the row's first point: only offsets that started there keep it */
    rs->rel[bi] = rowptr && rs->off0[bi] == rs->abs0[bi] ? LLVMBuildNSWAdd(b, rs->rel0[bi], step, "") : NULL;
    rs->rabs[bi] = rs->rel[bi] ? rs->abs[bi] : NULL;
  }
  L->off = rs->abs;
  if (rowptr) L->rowrel = rs->rel, L->rowabs = rs->rabs;
}

static void rows_restore(Lower *L, RowState *rs) {
  L->off = rs->off0, L->rowrel = rs->rel0, L->rowabs = rs->abs0, L->lin = rs->lin0;
  ctx_free(L->ctx, rs->abs);
}

/* ---- elementwise -------------------------------------------------------------------------------- */
/* A row of the row walk (L->lin: the row's index): the MAP phase at its E points. */
static void body_row_map(Lower *L, void *arg) {
  RowState rs;
  if (!rows_save(L, &rs)) return;
  int e = L->k->row_extent;
  LLVMValueRef first = LLVMBuildNSWMul(L->m.b, rs.lin0, cg_i64(&L->m, e), "");
  for (int j = 0; j < e; j++) {
    rows_at(L, &rs, j);
    L->lin = LLVMBuildNSWAdd(L->m.b, first, cg_i64(&L->m, j), "");
    cg_body_map(L, arg);
  }
  rows_restore(L, &rs);
}

void cg_host_rows_map(Lower *L, LLVMValueRef lo, LLVMValueRef hi, const KPhase *ph) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  int last = k->ndim - 1;
  LLVMValueRef e = cg_i64(&L->m, k->row_extent);
  /* whole rows [mid_lo, mid_hi) / E; the partial rows [lo, mid_lo) and [mid_hi, hi) (either may be empty) */
  LLVMValueRef up = LLVMBuildNSWMul(b, LLVMBuildUDiv(b, LLVMBuildAdd(b, lo, cg_i64(&L->m, k->row_extent - 1), ""), e, ""), e, "");
  LLVMValueRef mid_lo = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, up, hi, ""), up, hi, "rows.lo");
  LLVMValueRef down = LLVMBuildNSWMul(b, LLVMBuildUDiv(b, hi, e, ""), e, "");
  LLVMValueRef mid_hi = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, down, mid_lo, ""), down, mid_lo, "rows.hi");
  cg_host_walk(L, 0, last, LLVMBuildUDiv(b, mid_lo, e, ""), LLVMBuildUDiv(b, mid_hi, e, ""), body_row_map, (void *)ph);
  /* the two partial rows: one generic walk in a loop of two trips */
  LLVMValueRef seg = cg_entry_alloca(L, L->i64, "rows.seg");
  LLVMBuildStore(b, cg_i64(&L->m, 0), seg);
  LLVMBasicBlockRef loop = cg_new_bb(L, "rows.part"), done = cg_new_bb(L, "rows.done");
  LLVMBuildBr(b, loop);
  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef s = LLVMBuildLoad2(b, L->i64, seg, "");
  LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, s, cg_i64(&L->m, 0), "");
  cg_host_walk(L, 0, k->ndim, LLVMBuildSelect(b, first, lo, mid_hi, ""), LLVMBuildSelect(b, first, mid_lo, hi, ""),
               cg_body_map, (void *)ph);
  LLVMValueRef s1 = LLVMBuildAdd(b, s, cg_i64(&L->m, 1), "");
  LLVMBuildStore(b, s1, seg);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, s1, cg_i64(&L->m, 2), ""), loop, done);
  LLVMPositionBuilderAtEnd(b, done);
}

/* ---- reductions of the last dim ------------------------------------------------------------------ */
/* REDUCE phase p over the row's E points, unrolled: sets L->acc[p] / L->accidx[p]. */
static void row_reduce(Lower *L, RowState *rs, int p) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[p];
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  int e = k->row_extent, op = ph->reduce_op;
  LLVMValueRef v[CG_ROWS_LIMIT];
  for (int j = 0; j < e; j++) { /* each point's value (and the phase's side stores there) */
    rows_at(L, rs, j);
    L->lin = cg_i64(&L->m, j);
    cg_clear_cache(L);
    cg_reduce_point(L, ph);
    v[j] = L->cache[ph->value];
  }
  L->off = rs->off0, L->rowrel = rs->rel0, L->rowabs = rs->abs0;
  cg_clear_cache(L);
  LLVMValueRef acc = cg_red_identity(L, op, vt), idx = cg_i64(&L->m, 0);
  if (is_arg(op)) {
    for (int j = 0; j < e; j++) {
      LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)op, vt, acc, v[j]);
      acc = LLVMBuildSelect(b, take, v[j], acc, "");
      idx = LLVMBuildSelect(b, take, cg_i64(&L->m, j), idx, "");
    }
  } else if (cg_sum_compensated(k, ph) && e >= 8) { /* NumPy's pairwise_sum of 8 .. 128 points */
    LLVMValueRef r[8];
    for (int j = 0; j < 8; j++) r[j] = v[j];
    int whole = e - e % 8;
    for (int i = 8; i < whole; i += 8)
      for (int j = 0; j < 8; j++) r[j] = cg_outer_combine(L, op, vt, r[j], v[i + j]);
    LLVMValueRef t[4];
    for (int j = 0; j < 4; j++) t[j] = cg_outer_combine(L, op, vt, r[2 * j], r[2 * j + 1]);
    LLVMValueRef s = cg_outer_combine(L, op, vt, cg_outer_combine(L, op, vt, t[0], t[1]),
                                      cg_outer_combine(L, op, vt, t[2], t[3]));
    for (int i = whole; i < e; i++) s = cg_outer_combine(L, op, vt, s, v[i]);
    acc = cg_outer_combine(L, op, vt, acc, s); /* identity + s: a sum of negative zeros is +0, as the walk's */
  } else {
    for (int j = 0; j < e; j++) acc = cg_outer_combine(L, op, vt, acc, v[j]);
  }
  L->acc[p] = acc;
  L->accidx[p] = idx;
}

void cg_host_rows_o_point(Lower *L) {
  const KernelIr *k = L->k;
  RowState rs;
  if (!rows_save(L, &rs)) return;
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_REDUCE) {
      row_reduce(L, &rs, p);
    } else if (ph->kind == KP_MAP) {
      for (int j = 0; j < k->row_extent; j++) {
        rows_at(L, &rs, j);
        L->lin = cg_i64(&L->m, j);
        cg_body_map(L, (void *)ph);
      }
      L->off = rs.off0, L->rowrel = rs.rel0, L->rowabs = rs.abs0;
    } else {
      cg_clear_cache(L);
      cg_run_final_phase(L, ph);
    }
  }
  cg_clear_cache(L);
  rows_restore(L, &rs);
}
