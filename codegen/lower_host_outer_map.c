/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_outer_map.c: MAP phases in the outer strategy of host reductions (lower_host_outer.c).
 *
 * A kernel whose REDUCE phases fold along an axis that is outer in memory and whose MAP phase then writes
 * every point (standardizing columns, (x - mean_0) / (std_0 + eps); x / x.sum(0); a softmax over axis 0)
 * ran per O point: one column at a time, every phase striding down R, one element per cache line. In the
 * outer strategy the MAP phase walks R once more for the block, an inner loop over the block's columns
 * per R point like the REDUCE walks (contiguous loads and stores along o). The MAP's per-column values
 * (instructions that read only REDUCE results, parameters and constants: a mean, std + eps) are computed
 * once per column into stack arrays before that walk and loaded per point, where the per-O form had LLVM
 * hoist them out of its R loop (the same instructions, no fast-math contraction on the host; the REDUCE
 * results are the outer strategy's: sums in R order per column, not the per-O form's vector lanes).
 * Blocks are as wide as the REDUCE-only kernels' (CG_OUTER_BLOCK): 128 columns, so that a block's rows
 * stay in L2 from the REDUCE walks to the MAP walk, was slower or even on this Zen 4 (3001 x 1777 float32
 * standardized 2.6 vs 2.0-3.6 ms, 65536 x 256 12.8 vs 11.7; its L3 streams whole rows faster).
 * LOOM_HOST_OUTER_MAP=0: such kernels keep the per-O form (A/B).
 * In the column split (colpart over a slab of rows) the blocks are whole rows of up to CG_OUTER_MAP_BLOCK
 * columns (lower_host_outer.c col_map_cap: one forward stream through the slab), and large launches stage
 * the outputs' row pieces and stream them out with non-temporal stores (body_row_streamed,
 * lower_host_stream.c). 8009 x 3061 float32 x / x.sum(0), one thread: 20 ms -> 16-18 (whole rows) -> 13.4-14.7
 * (streamed), two separate kernels 12.8-13.7 (bench/suite/DIAGNOSIS.md, session 36).
 */
#include <string.h>
#include "codegen/cg_lower.h"

enum { MAP_COL_VALUES = 8 }; /* per-column values precomputed at most (more: computed per point) */

bool cg_outer_map_ok(const KernelIr *k) {
  static int knob = -1;
  if (!cg_env_int_once(&knob, "LOOM_HOST_OUTER_MAP", 1) || k->snippet || k->nuser_arg) return false;
  bool map = false;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_SCAN) return false;
    if (ph->kind != KP_MAP) continue;
    map = true;
    for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
      const KStore *st = &k->stores[s];
      /* a store contiguous along R wants the per-O walk (its rows are the contiguous runs) */
      if (st->scatter || k->bufs[st->buf].layout[k->ndim - 1] == KL_ONE) return false;
    }
  }
  return map;
}

bool cg_outer_has_map(const KernelIr *k) {
  for (int p = 0; p < k->nphase; p++)
    if (k->phases[p].kind == KP_MAP) return true;
  return false;
}

typedef struct MapCols {
  const KPhase *ph;
  int p, n;
  int32_t val[MAP_COL_VALUES];   /* instructions precomputed per column */
  LLVMValueRef arr[MAP_COL_VALUES];
} MapCols;

/* The MAP phase's per-column values: instructions that do not vary along R, read a REDUCE result (the
 * rest is constant for the whole kernel, LLVM hoists it) and feed an instruction that varies or a store.
 * Returns false when there are more than MAP_COL_VALUES of them (then nothing is precomputed). */
static bool plan_columns(Lower *L, MapCols *mc) {
  const KernelIr *k = L->k;
  uint8_t *need = L->need, *acc = ctx_calloc(L->ctx, (size_t)k->ninstr + 1, 1);
  if (!acc) return false;
  memset(need, 0, (size_t)k->ninstr);
  for (int s = mc->ph->store_begin; s < mc->ph->store_begin + mc->ph->nstores; s++) need[k->stores[s].value] = 2;
  for (int i = k->ninstr - 1; i >= 0; i--)
    if (need[i])
      for (int j = 0; j < cg_instr_nsrc(&k->instrs[i]); j++)
        if (!need[k->instrs[i].src[j]]) need[k->instrs[i].src[j]] = 1;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    acc[i] = in->kind == KI_ACC;
    for (int j = 0; j < cg_instr_nsrc(in); j++) acc[i] |= acc[in->src[j]];
  }
  bool ok = true;
  mc->n = 0;
  for (int i = 0; i < k->ninstr && ok; i++) {
    if (!need[i] || L->varies[i] || !acc[i] || k->instrs[i].kind == KI_ACC) continue; /* (accs: block arrays) */
    bool frontier = need[i] == 2;
    for (int u = i + 1; u < k->ninstr && !frontier; u++) {
      const KInstr *in = &k->instrs[u];
      if (!need[u] || !L->varies[u]) continue;
      for (int j = 0; j < cg_instr_nsrc(in); j++) frontier |= in->src[j] == i;
    }
    if (!frontier) continue;
    if (mc->n == MAP_COL_VALUES) ok = false;
    else mc->val[mc->n++] = i;
  }
  ctx_free(L->ctx, acc);
  if (!ok) mc->n = 0;
  return ok;
}

/* One column of the block: its REDUCE results, then the per-column values into the arrays. */
static void body_columns(Lower *L, void *arg) {
  const MapCols *mc = arg;
  cg_clear_cache(L);
  cg_outer_load_accs(L, mc->p);
  cg_eval_needed(L, mc->val, mc->n);
  for (int f = 0; f < mc->n; f++) {
    LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)L->k->instrs[mc->val[f]].dtype);
    LLVMBuildStore(L->m.b, L->cache[mc->val[f]], cg_outer_slot(L, t, mc->arr[f]));
  }
  cg_clear_cache(L);
}

/* One point of the MAP phase at R point L->lin, column L->bj. */
static void body_point(Lower *L, void *arg) {
  const MapCols *mc = arg;
  cg_clear_cache(L);
  cg_outer_load_accs(L, mc->p);
  for (int f = 0; f < mc->n; f++) {
    LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)L->k->instrs[mc->val[f]].dtype);
    L->cache[mc->val[f]] = LLVMBuildLoad2(L->m.b, t, cg_outer_slot(L, t, mc->arr[f]), "");
  }
  cg_emit_stores(L, mc->ph);
  cg_clear_cache(L);
}

static void body_row(Lower *L, void *arg) { cg_outer_block_loop(L, cg_i64(&L->m, 0), L->bn, body_point, arg); }

/* One R point of the block with its streamed outputs (L->col_streamed) staged: the row in pieces of
 * L->col_nt_piece columns, each with every such buffer's base moved so that the piece's first column lands
 * at its scratch row (a plain GEP: it lies before the scratch), the block loop over the piece as body_row,
 * then each scratch row streamed to the output (lower_host_stream.c). The row is contiguous along o
 * (colpart checks the stride). */
static void body_row_streamed(Lower *L, void *arg) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(m->c);
  LLVMValueRef *real = ctx_calloc(L->ctx, (size_t)k->nbuf * 2, sizeof(LLVMValueRef));
  if (!real) {
    body_row(L, arg);
    return;
  }
  LLVMValueRef *mine = real + k->nbuf;
  LLVMValueRef piece = cg_i64(m, L->col_nt_piece), jpos = cg_entry_alloca(L, L->i64, "nt.j");
  LLVMBasicBlockRef head = cg_new_bb(L, "nt.piece"), body = cg_new_bb(L, "nt.piece.body"), done = cg_new_bb(L, "nt.piece.done");
  LLVMBuildStore(b, cg_i64(m, 0), jpos);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef j0 = LLVMBuildLoad2(b, L->i64, jpos, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j0, L->bn, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef j1 = LLVMBuildAdd(b, j0, piece, "");
  j1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, j1, L->bn, ""), j1, L->bn, "");
  int64_t at = 0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (!L->col_streamed[bi]) continue;
    int64_t es = (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    LLVMValueRef start = cg_i64(m, at), first = LLVMBuildAdd(b, L->off[bi], j0, ""); /* (stride 1 along o) */
    LLVMValueRef back = LLVMBuildMul(b, first, cg_i64(m, -es), "");
    mine[bi] = LLVMBuildGEP2(b, i8, L->col_nt_scratch, &start, 1, "");
    real[bi] = L->base[bi];
    L->base[bi] = LLVMBuildGEP2(b, i8, mine[bi], &back, 1, "");
    at += es * L->col_nt_piece;
  }
  cg_outer_block_loop(L, j0, j1, body_point, arg);
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (!L->col_streamed[bi]) continue;
    int64_t es = (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    L->base[bi] = real[bi];
    LLVMValueRef off = LLVMBuildMul(b, LLVMBuildAdd(b, L->off[bi], j0, ""), cg_i64(m, es), "");
    LLVMValueRef len = LLVMBuildMul(b, LLVMBuildSub(b, j1, j0, ""), cg_i64(m, es), "");
    cg_host_stream_copy(L, LLVMBuildGEP2(b, i8, real[bi], &off, 1, "nt.dst"), mine[bi], len);
  }
  LLVMBuildStore(b, j1, jpos);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  ctx_free(L->ctx, real);
}

typedef struct MapWalk {
  MapCols *mc;
  LLVMValueRef rlo, rhi;
  BodyFn row;
} MapWalk;

static void map_walk(Lower *L, const void *arg) {
  const MapWalk *mw = arg;
  cg_host_walk(L, L->k->nkeep, L->k->ndim, mw->rlo, mw->rhi, mw->row, mw->mc);
}

void cg_outer_map_phase(Lower *L, int p, LLVMValueRef n, int cap, LLVMValueRef rlo, LLVMValueRef rhi) {
  const KernelIr *k = L->k;
  MapCols mc = {.ph = &k->phases[p], .p = p};
  if (plan_columns(L, &mc) && mc.n) {
    for (int f = 0; f < mc.n; f++) {
      LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)k->instrs[mc.val[f]].dtype);
      mc.arr[f] = cg_entry_alloca(L, LLVMArrayType(t, (unsigned)cap), "mapcols");
    }
    cg_outer_block_loop(L, cg_i64(&L->m, 0), n, body_columns, &mc);
  }
  MapWalk mw = {&mc, rlo, rhi, body_row}; /* once more per small stride of the loads along o (lower_host_outer_loads.c) */
  if (!L->col_nt_go) {
    cg_outer_by_col_stride(L, map_walk, &mw);
    return;
  }
  LLVMBuilderRef b = L->m.b; /* colpart with streamed outputs: the walk that stages them where they stream */
  LLVMBasicBlockRef nt = cg_new_bb(L, "map.nt"), plain = cg_new_bb(L, "map.plain"), join = cg_new_bb(L, "map.join");
  LLVMBuildCondBr(b, L->col_nt_go, nt, plain);
  LLVMPositionBuilderAtEnd(b, nt);
  mw.row = body_row_streamed;
  cg_outer_by_col_stride(L, map_walk, &mw);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, plain);
  mw.row = body_row;
  cg_outer_by_col_stride(L, map_walk, &mw);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
}
