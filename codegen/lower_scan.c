/* SPDX-License-Identifier: Apache-2.0 */
/* lower_scan.c: the KP_SCAN phase (ir.h: an inclusive scan along the kernel's one R dim) on the host and
 * on GPUs, over the shared evaluator (lower.c).
 *
 * Every strategy folds `value` into a running accumulator and, at each point, runs the phase's stores
 * with KI_ACC of the phase bound to the running value (L->acc[p]), so the producer of the scanned
 * values is computed in the scan's loads and its consumers in its stores.
 * - Host, rows (cg_host_scan_row): per O point, one walk over R in order; the fold is strictly
 *   sequential (no reassociation): a float cumsum gives NumPy's accumulate bits. run(lo, hi) takes O
 *   ranges, so the runtime spreads rows over the cores.
 * - Host, columns (cg_host_scan_outer; R outer in memory, O contiguous: cumsum(axis=0) of a C array):
 *   blocks of CG_OUTER_BLOCK O points keep their accumulators in a stack array; for each r in order
 *   the block's points are walked along O (contiguous, vectorizable), each folding its own column.
 * - GPU ROW (cg_gpu_scan_row): one block per O point walks R in chunks of blockDim points; a chunk is
 *   scanned by wave butterflies (every lane keeps its prefix and its group's total), the waves' totals
 *   through shared slots, then offset by the carry of earlier chunks. The values of CG_SCAN_CHUNKS
 *   chunks are read before the first of them is scanned (loads in flight; same order of adds). Float sums associate
 *   differently from NumPy's serial order (the bits depend on the block size).
 * - GPU long rows (few O points, R >= 16K) with LOOM_GPU_SCAN_LOOKBACK=0: R is cut into parts; the
 *   `part` entry folds each part (a block reduction, as split reductions do) into partials, then the
 *   `finishb` entry scans each part (one block per part and O point) starting from the fold of the
 *   partials of the parts before it (cg_gpu_scan_part: the block folds them in a fixed tree). Two reads
 *   and one write of the data. By default `finishb` is instead the single-pass decoupled look-back scan
 *   of lower_scan_lookback.c (no `part` entry; one read and one write).
 * - GPU COL (cg_gpu_scan_serial): one thread per O point folds its R serially (coalesced along O), the
 *   values of GPU_SCAN_AHEAD points read before they are folded (loads in flight; the same order).
 *   Few columns (the launcher: fewer than about 2^18 (part, column) items): R is cut into parts; the
 *   `part` entry folds each (part, column) item's range serially into partials, then `finishb`
 *   (cg_gpu_scan_col_part) scans each item's range from the fold, in part order, of the partials of the
 *   parts before it. Two reads and one write, but every SM busy: one thread a column left most idle.
 * float16 / bfloat16 scans (scan_round) round the running value after every step, as NumPy does; on
 * GPUs every combine of the tree (butterfly, wave totals, carry) rounds, so each partial is a value of
 * the dtype as in NumPy and CuPy (an overflow to inf stays inf); the order still differs from NumPy's.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* Chunks of blockDim points whose values a GPU row scan reads before scanning them (row_group): at most
 * CG_SCAN_CHUNKS_MAX, by default CG_SCAN_CHUNKS. ptxas -v (sm_90) of the row / part-scan entries,
 * registers for 1 / 4 / 8 chunks: float32 32 / 32 / 48, int8 -> int64 40 / 46 / 71, complex64 37 / 40 /
 * 64; 4 keeps float32 at 32 (8 blocks of 256 a multiprocessor: a split 1-d scan's 1024 parts in one
 * wave on 132 SMs) with 4 loads in flight per thread. */
#define CG_SCAN_CHUNKS 4
#define CG_SCAN_CHUNKS_MAX 8

/* LOOM_GPU_SCAN_CHUNKS=k (1..8; read per kernel compiled) reads k chunks ahead instead: 1 is the
 * chunk-at-a-time scan, for A/B timings (same bits; compiled kernels are cached on disk under the same
 * key, so time each setting with its own LOOM_CACHE_DIR). */
static int scan_chunks(void) {
  const char *s = getenv("LOOM_GPU_SCAN_CHUNKS");
  int k = s && *s ? atoi(s) : CG_SCAN_CHUNKS;
  return k >= 1 && k <= CG_SCAN_CHUNKS_MAX ? k : CG_SCAN_CHUNKS;
}

LLVMValueRef cg_scan_step(Lower *L, const KPhase *ph, LLVMValueRef acc, LLVMValueRef v) {
  LoomDType at = (LoomDType)ph->acc_dtype;
  LLVMValueRef r = cg_red_combine(L, ph->reduce_op, at, acc, v);
  cg_clear_fmf(r);
  if (ph->scan_round) {
    LoomDType s = (LoomDType)ph->scan_round;
    r = cg_cast(&L->m, s, at, cg_cast(&L->m, at, s, r));
  }
  return r;
}

/* for (i = start; i < end; i += step) body(i), i64 (host loops). */
static void host_for(Lower *L, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, IdxBody body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef iv = cg_entry_alloca(L, L->i64, "si");
  LLVMBuildStore(b, start, iv);
  LLVMBasicBlockRef head = cg_new_bb(L, "scan.head"), bb = cg_new_bb(L, "scan.body"), exit = cg_new_bb(L, "scan.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->i64, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, end, ""), bb, exit);
  LLVMPositionBuilderAtEnd(b, bb);
  body(L, i, arg);
  LLVMBuildStore(b, LLVMBuildAdd(b, i, step, ""), iv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, exit);
}

typedef struct ScanArg {
  int p;
  const KPhase *ph;
  LLVMValueRef accv;     /* alloca of the running value (rows, serial) */
  LLVMValueRef accarr;   /* outer: the block's accumulators */
  LLVMValueRef ob, bn;   /* outer: the block's first O point and size */
  LLVMValueRef hi;       /* outer: the end of run()'s O range */
} ScanArg;

/* One point (offsets in L->off): acc op the value, then the stores with KI_ACC = that new running value. */
static LLVMValueRef scan_point(Lower *L, int p, LLVMValueRef acc) {
  const KPhase *ph = &L->k->phases[p];
  cg_clear_cache(L);
  cg_eval_needed(L, &ph->value, 1);
  LLVMValueRef a = cg_scan_step(L, ph, acc, L->cache[ph->value]);
  L->acc[p] = a;
  L->accidx[p] = cg_i64(&L->m, 0);
  cg_emit_stores(L, ph);
  cg_clear_cache(L);
  return a;
}

static void body_scan_row(Lower *L, void *arg) {
  ScanArg *s = arg;
  LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)s->ph->acc_dtype);
  LLVMBuildStore(L->m.b, scan_point(L, s->p, LLVMBuildLoad2(L->m.b, t, s->accv, "")), s->accv);
}

void cg_host_scan_row(Lower *L, int p) {
  if (cg_host_scan_compact(L, p)) return; /* a compaction: vector code (lower_scan_compact.c) */
  const KernelIr *k = L->k;
  ScanArg s = {.p = p, .ph = &k->phases[p]};
  LoomDType at = (LoomDType)s.ph->acc_dtype;
  s.accv = cg_entry_alloca(L, cg_reg_type(&L->m, at), "scan");
  LLVMBuildStore(L->m.b, cg_red_identity(L, s.ph->reduce_op, at), s.accv);
  cg_host_walk(L, k->nkeep, k->ndim, cg_i64(&L->m, 0), L->rsize, body_scan_row, &s);
  L->acc[p] = L->accidx[p] = NULL;
}

/* ---- host columns ----------------------------------------------------------------------------------- */

static LLVMValueRef acc_slot(Lower *L, const ScanArg *s) {
  LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)s->ph->acc_dtype);
  LLVMValueRef j = LLVMBuildSub(L->m.b, L->lin, s->ob, "");
  return LLVMBuildGEP2(L->m.b, t, s->accarr, &j, 1, "");
}

static void body_outer_init(Lower *L, void *arg) {
  ScanArg *s = arg;
  LLVMBuildStore(L->m.b, cg_red_identity(L, s->ph->reduce_op, (LoomDType)s->ph->acc_dtype), acc_slot(L, s));
}

static void body_outer_point(Lower *L, void *arg) {
  ScanArg *s = arg;
  LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)s->ph->acc_dtype);
  LLVMValueRef slot = acc_slot(L, s);
  LLVMBuildStore(L->m.b, scan_point(L, s->p, LLVMBuildLoad2(L->m.b, t, slot, "")), slot);
}

/* R point r of the block: offsets r * stride along R under the O walk. */
static void outer_r(Lower *L, LLVMValueRef r, void *arg) {
  ScanArg *s = arg;
  const KernelIr *k = L->k;
  LLVMValueRef *save = L->off;
  for (int bi = 0; bi < k->nbuf; bi++) save[bi] = LLVMBuildMul(L->m.b, r, L->stride[bi * k->ndim + k->nkeep], "");
  cg_host_walk(L, 0, k->nkeep, s->ob, LLVMBuildAdd(L->m.b, s->ob, s->bn, ""), body_outer_point, s);
}

static void outer_block(Lower *L, LLVMValueRef ob, void *arg) {
  ScanArg *s = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef hi = s->hi, left = LLVMBuildSub(b, hi, ob, ""), blk = cg_i64(&L->m, CG_OUTER_BLOCK);
  s->ob = ob;
  s->bn = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, blk, ""), left, blk, "bn");
  for (int bi = 0; bi < L->k->nbuf; bi++) L->off[bi] = cg_i64(&L->m, 0);
  cg_host_walk(L, 0, L->k->nkeep, ob, LLVMBuildAdd(b, ob, s->bn, ""), body_outer_init, s);
  host_for(L, cg_i64(&L->m, 0), L->rsize, cg_i64(&L->m, 1), outer_r, s);
}

void cg_host_scan_outer(Lower *L, LLVMValueRef lo, LLVMValueRef hi) {
  const KernelIr *k = L->k;
  ScanArg s = {.p = 0, .ph = &k->phases[0]};
  s.accarr = cg_entry_alloca(L, LLVMArrayType2(cg_reg_type(&L->m, (LoomDType)s.ph->acc_dtype), CG_OUTER_BLOCK), "scanblk");
  s.hi = hi;
  host_for(L, lo, hi, cg_i64(&L->m, CG_OUTER_BLOCK), outer_block, &s);
  L->acc[0] = L->accidx[0] = NULL;
}

/* ---- GPU ------------------------------------------------------------------------------------------------ */

static void serial_point(Lower *L, LLVMValueRef r, void *arg) {
  ScanArg *s = arg;
  const KernelIr *k = L->k;
  cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  body_scan_row(L, s);
}

/* GPU_SCAN_AHEAD points of one thread's column (all of them exist): their values first (their loads in
 * flight together), then the running value through them in order with each point's stores (the same
 * order of steps as one point at a time: the same bits). */
#define GPU_SCAN_AHEAD 4
#define GPU_SCAN_STORE_LOADS 8 /* at most this many loads of the stores' values are read ahead */

/* The loads the stores of phase ph read (a consumer's `+ y`): up to GPU_SCAN_STORE_LOADS instruction
 * indices into lds; 0 when there are more (they are then read at the store, after the earlier stores). */
static int store_loads(const KernelIr *k, const KPhase *ph, int *lds) {
  uint8_t *mark = calloc((size_t)k->ninstr + 1, 1);
  if (!mark) return 0;
  for (int s = 0; s < ph->nstores; s++) mark[k->stores[ph->store_begin + s].value] = 1;
  int n = 0;
  for (int i = k->ninstr - 1; i >= 0 && n >= 0; i--) {
    const KInstr *in = &k->instrs[i];
    if (!mark[i]) continue;
    for (int j = 0; j < cg_instr_nsrc(in); j++) mark[in->src[j]] = 1;
    if (in->kind == KI_USER) n = -1; /* (its arguments: not followed here) */
    else if (in->kind == KI_LOAD) n = n < GPU_SCAN_STORE_LOADS ? (lds[n] = i, n + 1) : -1;
  }
  free(mark);
  return n < 0 ? 0 : n;
}

static void serial_chunk(Lower *L, LLVMValueRef r, void *arg) {
  ScanArg *s = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)s->ph->acc_dtype);
  LLVMValueRef v[GPU_SCAN_AHEAD], sl[GPU_SCAN_AHEAD][GPU_SCAN_STORE_LOADS];
  int lds[GPU_SCAN_STORE_LOADS], nl = store_loads(k, s->ph, lds);
  for (int j = 0; j < GPU_SCAN_AHEAD; j++) {
    cg_gpu_offsets(L, LLVMBuildAdd(b, r, cg_iconst_i(L, j), ""), k->nkeep, k->ndim, L->ooff, L->off);
    cg_clear_cache(L);
    cg_eval_needed(L, &s->ph->value, 1);
    v[j] = L->cache[s->ph->value];
    if (nl) cg_eval_needed(L, lds, nl); /* before any store of the chunk: stores may alias the inputs */
    for (int m = 0; m < nl; m++) sl[j][m] = L->cache[lds[m]];
  }
  LLVMValueRef a = LLVMBuildLoad2(b, t, s->accv, "");
  for (int j = 0; j < GPU_SCAN_AHEAD; j++) {
    cg_gpu_offsets(L, LLVMBuildAdd(b, r, cg_iconst_i(L, j), ""), k->nkeep, k->ndim, L->ooff, L->off);
    cg_clear_cache(L);
    for (int m = 0; m < nl; m++) L->cache[lds[m]] = sl[j][m];
    a = cg_scan_step(L, s->ph, a, v[j]);
    L->acc[s->p] = a;
    L->accidx[s->p] = cg_i64(&L->m, 0);
    cg_emit_stores(L, s->ph);
  }
  cg_clear_cache(L);
  LLVMBuildStore(b, a, s->accv);
}

/* Phase p of the current O point (L->ooff) over R points [rlo, rhi) by one thread, from carry (an alloca
 * of the running value before rlo): chunks of GPU_SCAN_AHEAD points, then the rest one at a time. */
static void serial_range(Lower *L, int p, LLVMValueRef carry, LLVMValueRef rlo, LLVMValueRef rhi) {
  LLVMBuilderRef b = L->m.b;
  ScanArg s = {.p = p, .ph = &L->k->phases[p], .accv = carry};
  LLVMValueRef ahead = cg_iconst_i(L, GPU_SCAN_AHEAD);
  LLVMValueRef n = LLVMBuildSub(b, rhi, rlo, "");
  LLVMValueRef cend = LLVMBuildAdd(b, rlo, LLVMBuildMul(b, LLVMBuildSDiv(b, n, ahead, ""), ahead, ""), "");
  cg_gpu_for(L, rlo, cend, ahead, serial_chunk, &s);
  cg_gpu_for(L, cend, rhi, cg_iconst_i(L, 1), serial_point, &s);
  L->acc[p] = L->accidx[p] = NULL;
}

void cg_gpu_scan_serial(Lower *L, int p, LLVMValueRef nr) {
  const KPhase *ph = &L->k->phases[p];
  LoomDType at = (LoomDType)ph->acc_dtype;
  LLVMValueRef accv = cg_entry_alloca(L, cg_reg_type(&L->m, at), "scan");
  LLVMBuildStore(L->m.b, cg_red_identity(L, ph->reduce_op, at), accv);
  serial_range(L, p, accv, cg_iconst_i(L, 0), nr);
}

/* The fold of the partials (acc_size bytes each, o-minor, no O points a part) of parts q = start,
 * start + step, ... < part for O point o into a new alloca (from the identity), in part order: each combine
 * a scan step (rounded where the phase asks: `round`) or the plain combine. Returns the alloca. */
static LLVMValueRef fold_partials(Lower *L, LLVMValueRef partials, int acc_size, LLVMValueRef no, LLVMValueRef o,
                                  LLVMValueRef part, LLVMValueRef start, LLVMValueRef step, bool round) {
  const KPhase *ph = &L->k->phases[0];
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType at = (LoomDType)ph->acc_dtype;
  LLVMTypeRef t = cg_reg_type(m, at);
  LLVMValueRef accv = cg_entry_alloca(L, t, "pcarry"), pv = cg_entry_alloca(L, L->ity, "pp");
  LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, at), accv);
  LLVMBuildStore(b, start, pv);
  LLVMBasicBlockRef head = cg_new_bb(L, "carry.head"), body = cg_new_bb(L, "carry.body"), done = cg_new_bb(L, "carry.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef q = LLVMBuildLoad2(b, L->ity, pv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, q, part, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ptr = cg_partial_ptr(L, partials, LLVMBuildAdd(b, LLVMBuildMul(b, q, no, ""), o, ""), acc_size);
  LLVMValueRef v = cg_from_mem(m, at, at, LLVMBuildLoad2(b, cg_mem_type(m, at), ptr, ""));
  LLVMValueRef a = LLVMBuildLoad2(b, t, accv, "");
  if (round) a = cg_scan_step(L, ph, a, v);
  else {
    a = cg_red_combine(L, ph->reduce_op, at, a, v);
    cg_clear_fmf(a);
  }
  LLVMBuildStore(b, a, accv);
  LLVMBuildStore(b, LLVMBuildAdd(b, q, step, ""), pv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  return accv;
}

void cg_gpu_scan_col_part(Lower *L, LLVMValueRef item, const GpuEntry *e) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = LLVMBuildURem(b, item, e->no, ""), part = LLVMBuildUDiv(b, item, e->no, ""), rlo, rhi;
  cg_gpu_part_range(L, e, part, &rlo, &rhi);
  cg_gpu_offsets(L, o, 0, L->k->nkeep, NULL, L->ooff);
  LLVMValueRef accv = fold_partials(L, e->partials, e->acc_size, e->no, o, part, cg_iconst_i(L, 0), cg_iconst_i(L, 1), true);
  serial_range(L, 0, accv, rlo, rhi);
}

typedef struct RowScan {
  ScanArg s;
  LLVMValueRef tid, bdim, nr, carry; /* nr: the end of the R range; carry: alloca of the running value */
  LLVMValueRef slots;                /* shared: one value per wave */
  LLVMTypeRef slots_t;
  int chunks;                        /* chunks read ahead (row_group) */
} RowScan;

/* The value of R point c + tid (the identity past the end). */
static LLVMValueRef chunk_value(Lower *L, RowScan *rs, LLVMValueRef c) {
  const KernelIr *k = L->k;
  const KPhase *ph = rs->s.ph;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef r = LLVMBuildAdd(b, c, rs->tid, "");
  LLVMValueRef valid = LLVMBuildICmp(b, LLVMIntSLT, r, rs->nr, "");
  LLVMValueRef rc = LLVMBuildSelect(b, valid, r, LLVMBuildSub(b, rs->nr, cg_iconst_i(L, 1), ""), "");
  cg_gpu_offsets(L, rc, k->nkeep, k->ndim, L->ooff, L->off);
  cg_clear_cache(L);
  cg_eval_needed(L, &ph->value, 1);
  LLVMValueRef id = cg_red_identity(L, ph->reduce_op, (LoomDType)ph->acc_dtype);
  LLVMValueRef x = LLVMBuildSelect(b, valid, L->cache[ph->value], id, "");
  cg_clear_cache(L);
  return x;
}

/* One chunk: R points c + tid (tid < bdim), x the thread's value (chunk_value). */
static void row_chunk(Lower *L, RowScan *rs, LLVMValueRef c, LLVMValueRef x) {
  const KernelIr *k = L->k;
  const KPhase *ph = rs->s.ph;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType at = (LoomDType)ph->acc_dtype;
  LLVMTypeRef t = cg_reg_type(m, at);
  const int wave = m->gpu->wave, wave_log2 = wave == 64 ? 6 : 5;
  LLVMValueRef r = LLVMBuildAdd(b, c, rs->tid, "");
  LLVMValueRef valid = LLVMBuildICmp(b, LLVMIntSLT, r, rs->nr, "");
  /* the wave: butterfly with the lower half's total folded in front of the upper lanes' prefixes */
  LLVMValueRef lane = LLVMBuildAnd(b, rs->tid, cg_iconst_i(L, wave - 1), "");
  LLVMValueRef pre = x, tot = x;
  for (int off = 1; off < wave; off *= 2) {
    LLVMValueRef o = cg_gpu_shfl_xor(L, tot, off);
    LLVMValueRef upper = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, lane, cg_iconst_i(L, off), ""), cg_iconst_i(L, 0), "");
    LLVMValueRef lo_first = cg_scan_step(L, ph, o, tot), hi_last = cg_scan_step(L, ph, tot, o);
    LLVMValueRef pre_up = cg_scan_step(L, ph, o, pre);
    pre = LLVMBuildSelect(b, upper, pre_up, pre, "");
    tot = LLVMBuildSelect(b, upper, lo_first, hi_last, "");
  }
  /* the waves' totals through shared slots; each thread folds those of the waves before its own */
  LLVMValueRef warp = LLVMBuildLShr(b, rs->tid, cg_iconst_i(L, wave_log2), "");
  LLVMBasicBlockRef wr = cg_new_bb(L, "scan.write"), after = cg_new_bb(L, "scan.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, lane, cg_iconst_i(L, wave - 1), ""), wr, after);
  LLVMPositionBuilderAtEnd(b, wr);
  LLVMValueRef ix[2] = {cg_iconst_i(L, 0), warp};
  LLVMBuildStore(b, tot, LLVMBuildGEP2(b, rs->slots_t, rs->slots, ix, 2, ""));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
  m->gpu->barrier(m);
  LLVMValueRef nw = LLVMBuildLShr(b, rs->bdim, cg_iconst_i(L, wave_log2), "");
  LLVMValueRef before = cg_entry_alloca(L, t, "sbefore"), all = cg_entry_alloca(L, t, "sall"), wv = cg_entry_alloca(L, L->ity, "sw");
  LLVMBuildStore(b, LLVMBuildLoad2(b, t, rs->carry, ""), before);
  LLVMBuildStore(b, LLVMBuildLoad2(b, t, rs->carry, ""), all);
  LLVMBuildStore(b, cg_iconst_i(L, 0), wv);
  LLVMBasicBlockRef head = cg_new_bb(L, "scan.w"), body = cg_new_bb(L, "scan.wb"), done = cg_new_bb(L, "scan.wd");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef w = LLVMBuildLoad2(b, L->ity, wv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, w, nw, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef ixw[2] = {cg_iconst_i(L, 0), w};
  LLVMValueRef wt = LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, rs->slots_t, rs->slots, ixw, 2, ""), "");
  LLVMValueRef na = cg_scan_step(L, ph, LLVMBuildLoad2(b, t, all, ""), wt);
  LLVMBuildStore(b, na, all);
  LLVMValueRef cur = LLVMBuildLoad2(b, t, before, "");
  LLVMValueRef nb = cg_scan_step(L, ph, cur, wt);
  LLVMBuildStore(b, LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, w, warp, ""), nb, cur, ""), before);
  LLVMBuildStore(b, LLVMBuildAdd(b, w, cg_iconst_i(L, 1), ""), wv);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMValueRef v = cg_scan_step(L, ph, LLVMBuildLoad2(b, t, before, ""), pre);
  LLVMValueRef total = LLVMBuildLoad2(b, t, all, "");
  /* the stores of the valid points, at their own offsets */
  LLVMBasicBlockRef st = cg_new_bb(L, "scan.store"), next = cg_new_bb(L, "scan.next");
  LLVMBuildCondBr(b, valid, st, next);
  LLVMPositionBuilderAtEnd(b, st);
  cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
  cg_clear_cache(L);
  L->acc[rs->s.p] = v;
  L->accidx[rs->s.p] = cg_i64(m, 0);
  cg_emit_stores(L, ph);
  cg_clear_cache(L);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  LLVMBuildStore(b, total, rs->carry);
  m->gpu->barrier(m); /* the slots are free again */
}

/* if (cond) { body } with cond uniform over the block (barriers inside are fine); returns the after-block. */
static LLVMBasicBlockRef uniform_if(Lower *L, LLVMValueRef cond) {
  LLVMBasicBlockRef then = cg_new_bb(L, "scan.sub"), after = cg_new_bb(L, "scan.subdone");
  LLVMBuildCondBr(L->m.b, cond, then, after);
  LLVMPositionBuilderAtEnd(L->m.b, then);
  return after;
}

/* A group of rs->chunks chunks from c: every chunk's values are read first (that many loads per thread
 * in flight, not one: a chunk-at-a-time scan waits a memory latency per chunk), then the chunks
 * are scanned in order exactly as one at a time (the same adds in the same order: the same bits). Chunks
 * past the end (a uniform test) are skipped. */
static void row_group(Lower *L, LLVMValueRef c, void *arg) {
  RowScan *rs = arg;
  const int K = rs->chunks;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef t = cg_reg_type(&L->m, (LoomDType)rs->s.ph->acc_dtype);
  LLVMValueRef cj[CG_SCAN_CHUNKS_MAX], xs[CG_SCAN_CHUNKS_MAX], in[CG_SCAN_CHUNKS_MAX];
  for (int j = 0; j < K; j++) {
    LLVMValueRef skip = LLVMBuildMul(b, rs->bdim, cg_iconst_i(L, j), "");
    cj[j] = LLVMBuildAdd(b, c, skip, "");
    in[j] = LLVMBuildICmp(b, LLVMIntSLT, c, LLVMBuildSub(b, rs->nr, skip, ""), ""); /* cj < nr, no overflow */
    if (j == 0) { /* the loop's test covers the first chunk */
      xs[0] = chunk_value(L, rs, cj[0]);
      continue;
    }
    xs[j] = cg_entry_alloca(L, t, "scanx");
    LLVMBasicBlockRef after = uniform_if(L, in[j]);
    LLVMBuildStore(b, chunk_value(L, rs, cj[j]), xs[j]);
    LLVMBuildBr(b, after);
    LLVMPositionBuilderAtEnd(b, after);
  }
  for (int j = 0; j < K; j++) {
    if (j == 0) {
      row_chunk(L, rs, cj[0], xs[0]);
      continue;
    }
    LLVMBasicBlockRef after = uniform_if(L, in[j]);
    row_chunk(L, rs, cj[j], LLVMBuildLoad2(b, t, xs[j], ""));
    LLVMBuildBr(b, after);
    LLVMPositionBuilderAtEnd(b, after);
  }
}

void cg_gpu_scan_row(Lower *L, int p, LLVMValueRef tid, LLVMValueRef bdim, LLVMValueRef rlo, LLVMValueRef rhi,
                     LLVMValueRef carry) {
  RowScan rs = {.s = {.p = p, .ph = &L->k->phases[p]}, .tid = tid, .bdim = bdim, .nr = rhi, .chunks = scan_chunks()};
  LoomDType at = (LoomDType)rs.s.ph->acc_dtype;
  LLVMTypeRef t = cg_reg_type(&L->m, at);
  rs.carry = cg_entry_alloca(L, t, "carry");
  LLVMBuildStore(L->m.b, carry ? carry : cg_red_identity(L, rs.s.ph->reduce_op, at), rs.carry);
  rs.slots = cg_gpu_shared_slots(L, loom_dtype_size(at) > 8 ? "loom.red.v.16" : "loom.red.v");
  rs.slots_t = LLVMGlobalGetValueType(rs.slots);
  /* every thread runs every chunk (the barriers need the whole block) */
  cg_gpu_for(L, rlo, rhi, LLVMBuildMul(L->m.b, bdim, cg_iconst_i(L, rs.chunks), ""), row_group, &rs);
  L->acc[p] = L->accidx[p] = NULL;
}

/* One item (= part * no + o) of the `finishb` entry of a split scan: the R range of the part (the
 * balanced split of the `part` entry), the carry (the partials of the parts before it for this O point,
 * each thread folding a strided subset in order, then the block's fixed tree), then the part's scan. */
void cg_gpu_scan_part(Lower *L, LLVMValueRef item, LLVMValueRef no, LLVMValueRef nr, LLVMValueRef nparts,
                      LLVMValueRef partials, int acc_size, LLVMValueRef tid, LLVMValueRef bdim) {
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[0];
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LoomDType at = (LoomDType)ph->acc_dtype;
  LLVMTypeRef t = cg_reg_type(m, at);
  LLVMValueRef o = LLVMBuildURem(b, item, no, ""), part = LLVMBuildUDiv(b, item, no, "");
  LLVMValueRef q = LLVMBuildUDiv(b, nr, nparts, ""), rem = LLVMBuildURem(b, nr, nparts, "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, rem, "");
  LLVMValueRef rlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, rem, ""), "");
  LLVMValueRef rhi = LLVMBuildAdd(b, LLVMBuildAdd(b, rlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  LLVMValueRef accv = fold_partials(L, partials, acc_size, no, o, part, tid, bdim, false);
  L->acc[0] = LLVMBuildLoad2(b, t, accv, "");
  L->accidx[0] = cg_i64(m, 0);
  cg_gpu_block_reduce(L, 0);
  LLVMValueRef carry = L->acc[0];
  cg_gpu_scan_row(L, 0, tid, bdim, rlo, rhi, carry);
}
