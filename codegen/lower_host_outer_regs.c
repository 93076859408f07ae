/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_outer_regs.c: register accumulators of the outer-axis strategy (lower_host_outer.c).
 *
 * The block loop of lower_host_outer.c folds one R point into every column of the block per pass:
 * per vector of values it loads and stores the columns' accumulators besides loading the values
 * (2 loads and a store, and a variance's second phase also loads the mean). Two register tilings cut
 * that, both folding every column's values in R order with the block loop's operations (a float sum
 * or product without its reassoc flag, so that nothing regroups a column's chain), so the bits are
 * those of the block loop (LOOM_HOST_OUTER_REGS=0, the A/B switch and the reference of the tests):
 *   - the row jam (kernels with one R dim): each pass of the block loop folds `rows` consecutive R
 *     points into a column's accumulator, loaded once and stored once; the rows stream along whole
 *     rows as before (a few streams);
 *   - register strips (the other kernels): a strip of a few vectors of columns keeps its
 *     accumulators in registers down strip_rows() R points.
 * Where the block is a whole row that streams (rows of 512 B to 8 KiB that follow each other in memory),
 * a run-time branch takes the plain walk instead (whole-row streams, below; LOOM_HOST_OUTER_STREAM=0: off).
 * Kernels that stream more than one input down the rows keep the block loop (register_fold). Paired
 * in-process timings (Zen 4, AVX-512, 4096 x 1024 float32, min of 31, with colfinish's vector fold on
 * both sides, load 5-7): var(axis=0) 2.1x, BatchNorm1d statistics (65536 x 64) 3.7-4x, argmax 1.3-1.4x,
 * mean over a middle axis 1.2-1.3x, int32 column sums 1.1x, float column sums 0.8-1.1x (bound by the L3's
 * bandwidth already; earlier rounds 1.05-1.15x); strips of 16 rows read rows a few lines at a time and
 * were slower than the jam on 2-input prologues and no faster on sums.
 */
#include <string.h>

#include "codegen/cg_lower.h"

/* ---- register strips ----------------------------------------------------------------------------
 * A strip holds `width` columns' accumulators (LOOM_HOST_OUTER_REGS vectors of the target's width)
 * while the walk goes down strip_rows() R points, and moves them to and from the block arrays once per
 * such chunk: they live in a small stack array that becomes registers once LLVM vectorizes the strip
 * loop (one vector body: vectorize.width x interleave.count = width), unrolls it and SROA promotes the
 * array. Columns past the last whole strip take the block loop. */
enum {
  CG_OUTER_REG_VECS = 4,   /* vectors of accumulators per strip (LOOM_HOST_OUTER_REGS; 0: the block loop) */
  CG_OUTER_REG_ROWS = 16,  /* R points per strip walk (LOOM_HOST_OUTER_REG_ROWS) */
  CG_OUTER_JAM_ROWS = 8    /* R points per pass of the row jam (LOOM_HOST_OUTER_JAM; < 2: strips) */
};

typedef struct ColWalk {
  const KPhase *ph;
  LLVMValueRef c0;         /* the strip's (or the tail's) first column within the block */
  int width, lanes;        /* columns of a strip (0: the block loop over [c0, L->bn)), lanes of a vector */
  LLVMValueRef sacc, sidx; /* strip accumulators (memory type, as the block arrays) and arg indices */
  LLVMValueRef jj;         /* the current column within the strip */
} ColWalk;

/* LOOM_HOST_OUTER_REGS: vectors per strip; 0: the block loop for every phase (no strips, no jam). */
static int regs_knob(void) {
  static int knob = -1;
  int v = cg_env_int_once(&knob, "LOOM_HOST_OUTER_REGS", CG_OUTER_REG_VECS);
  return v > 16 ? 16 : v;
}

/* Buffers the kernel loads at addresses that vary along its R dims (streams down the rows); one constant
 * along every O dim (a weight per row: u in u @ x) is a scalar per R point, not a stream of lines. */
static int r_streams(const KernelIr *k) {
  int n = 0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    bool loaded = false, varies = false, o_varies = false;
    for (int i = 0; i < k->ninstr && !loaded; i++)
      loaded = (k->instrs[i].kind == KI_LOAD || k->instrs[i].kind == KI_GATHER) && k->instrs[i].buf == bi;
    for (int d = 0; d < k->ndim && loaded; d++) {
      int64_t s;
      bool v = !ir_layout_const(k->bufs[bi].layout[d], &s) || s != 0;
      if (d < k->nkeep) o_varies |= v;
      else varies |= v;
    }
    n += varies && o_varies;
  }
  return n;
}

/* Whether phase ph folds with register accumulators: not user reductions or kernels with user code, not
 * phases with side stores (their order), not complex values (a pair's combine keeps its flags), and only
 * kernels that stream one input down the rows: with two (((x * y) ** 2).sum(0)) the jam's 8 rows make 16
 * streams, and paired timings were 0.75-0.9x of the block loop's 2 (0.6-0.85x with strips) on 2 x 16 MiB,
 * in L3 or not, while one input gained 1.05-1.15x (sums) to 2x (variances). */
static bool register_fold(const KernelIr *k, const KPhase *ph) {
  return !k->snippet && ph->reduce_op != IR_REDUCE_USER && ph->nstores == 0 && !dtype_is_complex(cg_red_value_dtype(k, ph)) &&
         r_streams(k) <= 1;
}

/* Columns per strip for phase ph (0: the block loop): LOOM_HOST_OUTER_REGS vectors of *lanes accumulators. */
static int strip_width(Lower *L, const KPhase *ph, int *lanes_out) {
  int vecs = regs_knob();
  const KernelIr *k = L->k;
  LoomDType vt = cg_red_value_dtype(k, ph);
  if (vecs <= 0 || !register_fold(k, ph)) return 0;
  size_t es = loom_dtype_size(vt);
  int vbytes = L->host_vec_bytes >= 16 ? L->host_vec_bytes : 32;
  int lanes = es ? vbytes / (int)es : 1;
  if (lanes < 1) lanes = 1;
  if (lanes * vecs > CG_OUTER_BLOCK) vecs = CG_OUTER_BLOCK / lanes;
  if (lanes_out) *lanes_out = lanes;
  return lanes * vecs;
}

/* Emits `for (jj = 0; jj < width; jj++) body` with L->bj = c0 + jj and L->off at that column. */
static void strip_loop(Lower *L, ColWalk *cw, BodyFn body, bool hints) {
  LLVMBuilderRef b = L->m.b;
  const KernelIr *k = L->k;
  int nb = k->nbuf, lo_dim = k->nkeep - 1;
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef *outer = L->off;
  LLVMValueRef *inner = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef body_bb = cg_new_bb(L, "strip.body"), exit_bb = cg_new_bb(L, "strip.exit");
  LLVMBuildBr(b, body_bb);
  LLVMPositionBuilderAtEnd(b, body_bb);
  LLVMValueRef jj = LLVMBuildPhi(b, L->i64, "sj");
  LLVMValueRef j = LLVMBuildNSWAdd(b, cw->c0, jj, "");
  for (int bi = 0; bi < nb; bi++)
    inner[bi] = LLVMBuildNSWAdd(b, outer[bi], LLVMBuildNSWMul(b, j, L->stride[bi * k->ndim + lo_dim], ""), "");
  CgRowSave rows;
  cg_outer_col_rows(L, outer, inner, j, &rows);
  L->off = inner;
  L->depth++;
  L->bj = j;
  cw->jj = jj;
  body(L, cw);
  L->depth--;
  L->off = outer;
  cg_outer_col_rows_end(L, &rows);
  LLVMValueRef j1 = LLVMBuildAdd(b, jj, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef end = LLVMGetInsertBlock(b);
  LLVMValueRef back = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, j1, cg_i64(&L->m, cw->width), ""), body_bb, exit_bb);
  /* one vector body: the strip's accumulators at constant offsets once it is unrolled */
  if (hints) cg_host_loop_hints(L, back, cw->lanes, cw->width / cw->lanes);
  LLVMBasicBlockRef from[2] = {pre, end};
  LLVMValueRef vals[2] = {cg_i64(&L->m, 0), j1};
  LLVMAddIncoming(jj, vals, from, 2);
  LLVMPositionBuilderAtEnd(b, exit_bb);
}

/* acc op v of a strip: cg_red_combine's operation, but a real float sum or product without its reassoc
 * flag, so that nothing reassociates a column's R order once the strip's accumulators are registers
 * (LLVMSetFastMathFlags can add flags, not clear them). */
LLVMValueRef cg_outer_combine(Lower *L, int op, LoomDType vt, LLVMValueRef a, LLVMValueRef v) {
  if (dtype_is_float(vt) && (op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_MEAN)) return LLVMBuildFAdd(L->m.b, a, v, "");
  if (dtype_is_float(vt) && op == LOOM_REDUCE_PROD) return LLVMBuildFMul(L->m.b, a, v, "");
  return cg_red_combine(L, op, vt, a, v);
}

/* One R point of strip column jj: the block loop's fold with the strip's accumulator. */
static void body_strip_reduce(Lower *L, void *arg) {
  ColWalk *cw = arg;
  const KernelIr *k = L->k;
  const KPhase *ph = cw->ph;
  int p = (int)(ph - k->phases);
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  cg_clear_cache(L);
  cg_outer_load_accs(L, p);
  cg_reduce_point(L, ph);
  LLVMValueRef v = L->cache[ph->value];
  LLVMValueRef ap = LLVMBuildGEP2(b, mt, cw->sacc, &cw->jj, 1, "");
  LLVMValueRef cur = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, ap, ""));
  LLVMValueRef nv;
  if (is_arg(ph->reduce_op)) {
    LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
    nv = LLVMBuildSelect(b, take, v, cur, "");
    LLVMValueRef ip = LLVMBuildGEP2(b, L->i64, cw->sidx, &cw->jj, 1, "");
    LLVMValueRef ci = LLVMBuildLoad2(b, L->i64, ip, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, take, L->lin, ci, ""), ip);
  } else {
    nv = cg_outer_combine(L, ph->reduce_op, vt, cur, v);
  }
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, nv), ap);
  cg_clear_cache(L);
}

static void body_strip_row(Lower *L, void *arg) { strip_loop(L, arg, body_strip_reduce, true); }

/* strip[jj] <-> the block arrays at c0 + jj (in: before a walk, out: after it). */
static void strip_copy(Lower *L, ColWalk *cw, bool in) {
  const KPhase *ph = cw->ph;
  int p = (int)(ph - L->k->phases);
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef mt = cg_mem_type(&L->m, cg_red_value_dtype(L->k, ph));
  LLVMValueRef sp = LLVMBuildGEP2(b, mt, cw->sacc, &cw->jj, 1, ""), bp = cg_outer_slot(L, mt, L->accarr[p]);
  LLVMBuildStore(b, LLVMBuildLoad2(b, mt, in ? bp : sp, ""), in ? sp : bp);
  if (!is_arg(ph->reduce_op)) return;
  sp = LLVMBuildGEP2(b, L->i64, cw->sidx, &cw->jj, 1, "");
  bp = cg_outer_slot(L, L->i64, L->idxarr[p]);
  LLVMBuildStore(b, LLVMBuildLoad2(b, L->i64, in ? bp : sp, ""), in ? sp : bp);
}
static void body_strip_in(Lower *L, void *arg) { strip_copy(L, arg, true); }
static void body_strip_out(Lower *L, void *arg) { strip_copy(L, arg, false); }

/* Walk body of a REDUCE phase: one R point for every o of the block from cw->c0 on. */
static void body_block_reduce_row(Lower *L, void *arg) {
  const ColWalk *cw = arg;
  cg_outer_block_loop(L, cw->c0, L->bn, cg_outer_body_reduce, (void *)cw->ph);
}


/* for (c = rlo; c < rhi; c += size) fn(c, min(c + size, rhi)) */
void cg_outer_for_chunks(Lower *L, LLVMValueRef rlo, LLVMValueRef rhi, int64_t size, ChunkFn fn, const void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef cpos = cg_entry_alloca(L, L->i64, "kchunk");
  LLVMBuildStore(b, rlo, cpos);
  LLVMBasicBlockRef head = cg_new_bb(L, "kchunk.head"), body = cg_new_bb(L, "kchunk.body"), done = cg_new_bb(L, "kchunk.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef c = LLVMBuildLoad2(b, L->i64, cpos, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, c, rhi, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef c1 = LLVMBuildAdd(b, c, cg_i64(&L->m, size), "");
  c1 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, c1, rhi, ""), c1, rhi, "");
  fn(L, arg, c, c1);
  LLVMBuildStore(b, c1, cpos);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
}

/* Every whole strip of the block over R points [c, c1): in, the walk, out. */
static void strips_chunk(Lower *L, const void *arg, LLVMValueRef c, LLVMValueRef c1) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  ColWalk cw = *(const ColWalk *)arg;
  LLVMValueRef whole = LLVMBuildMul(b, LLVMBuildSDiv(b, L->bn, cg_i64(&L->m, cw.width), ""), cg_i64(&L->m, cw.width), "");
  LLVMValueRef spos = cg_entry_alloca(L, L->i64, "strip");
  LLVMBuildStore(b, cg_i64(&L->m, 0), spos);
  LLVMBasicBlockRef head = cg_new_bb(L, "strips.head"), body = cg_new_bb(L, "strips.body"), done = cg_new_bb(L, "strips.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef s = LLVMBuildLoad2(b, L->i64, spos, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, s, whole, ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  cw.c0 = s;
  strip_loop(L, &cw, body_strip_in, false);
  cg_host_walk(L, k->nkeep, k->ndim, c, c1, body_strip_row, &cw);
  strip_loop(L, &cw, body_strip_out, false);
  LLVMBuildStore(b, LLVMBuildAdd(b, s, cg_i64(&L->m, cw.width), ""), spos);
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, done);
}

/* Rows per strip walk (LOOM_HOST_OUTER_REG_ROWS): the strips of a chunk read that many rows a few cache
 * lines at a time, each row a stream of its own for the prefetchers. */
static int64_t strip_rows(void) {
  static int knob = -1;
  int r = cg_env_int_once(&knob, "LOOM_HOST_OUTER_REG_ROWS", CG_OUTER_REG_ROWS);
  return r < 1 ? 1 : r;
}

/* ---- row jam: `rows` consecutive R points per pass of the block loop ----------------------------------
 * (kernels with one R dim): each column's accumulator is loaded once, folds the rows' values in order
 * and is stored once; the rows stream along whole rows as the plain walk does. */
typedef struct JamArg {
  const KPhase *ph;
  int rows;
  LLVMValueRef r; /* the first R point */
} JamArg;

/* R points per jam pass for phase ph (LOOM_HOST_OUTER_JAM, default 8: paired timings had 8 ahead of 4 and
 * 2 on column sums and variances); 0: no jam (more than one R dim, or the phase keeps the block loop). */
static int jam_rows(const KernelIr *k, const KPhase *ph) {
  static int knob = -1;
  int j = cg_env_int_once(&knob, "LOOM_HOST_OUTER_JAM", CG_OUTER_JAM_ROWS);
  if (j < 2 || regs_knob() <= 0 || k->nkeep != k->ndim - 1 || !register_fold(k, ph)) return 0;
  return j > 16 ? 16 : j;
}

static void body_jam_block(Lower *L, void *arg) {
  const JamArg *ja = arg;
  const KernelIr *k = L->k;
  const KPhase *ph = ja->ph;
  int p = (int)(ph - k->phases), nb = k->nbuf, rd = k->ndim - 1;
  LLVMBuilderRef b = L->m.b;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef mt = cg_mem_type(&L->m, vt);
  if (L->depth + 1 >= CG_MAX_DEPTH) {
    diag_error(L->m.d, LOOM_ERR_INTERNAL, "codegen: loops nested too deep");
    return;
  }
  LLVMValueRef ap = cg_outer_slot(L, mt, L->accarr[p]), ip = is_arg(ph->reduce_op) ? cg_outer_slot(L, L->i64, L->idxarr[p]) : NULL;
  LLVMValueRef cur = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, mt, ap, ""));
  LLVMValueRef ci = ip ? LLVMBuildLoad2(b, L->i64, ip, "") : NULL;
  LLVMValueRef *col = L->off, *row = L->levels + (size_t)(L->depth + 1) * (size_t)nb;
  for (int q = 0; q < ja->rows; q++) {
    LLVMValueRef r = LLVMBuildNSWAdd(b, ja->r, cg_i64(&L->m, q), "");
    for (int bi = 0; bi < nb; bi++) row[bi] = LLVMBuildNSWAdd(b, col[bi], LLVMBuildNSWMul(b, r, L->stride[bi * k->ndim + rd], ""), "");
    CgRowSave rows;
    cg_outer_col_rows_shift(L, row, r, rd, &rows);
    L->off = row;
    L->lin = r;
    cg_clear_cache(L);
    cg_outer_load_accs(L, p);
    cg_reduce_point(L, ph);
    LLVMValueRef v = L->cache[ph->value];
    if (ip) {
      LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, cur, v);
      cur = LLVMBuildSelect(b, take, v, cur, "");
      ci = LLVMBuildSelect(b, take, r, ci, "");
    } else {
      cur = cg_outer_combine(L, ph->reduce_op, vt, cur, v);
    }
    /* the block loop rounds the accumulator to its memory type after every point */
    cur = cg_from_mem(&L->m, vt, vt, cg_to_mem(&L->m, vt, vt, cur));
    L->off = col;
    cg_outer_col_rows_end(L, &rows);
  }
  cg_clear_cache(L);
  LLVMBuildStore(b, cg_to_mem(&L->m, vt, vt, cur), ap);
  if (ip) LLVMBuildStore(b, ci, ip);
}

static void jam_chunk(Lower *L, const void *arg, LLVMValueRef c, LLVMValueRef c1) {
  (void)c1;
  JamArg ja = *(const JamArg *)arg;
  ja.r = c;
  cg_outer_block_loop(L, cg_i64(&L->m, 0), L->bn, body_jam_block, &ja);
}

/* Rows [rlo, rhi) by passes of ja->rows rows, then the rest one row a pass. */
static void jam_walk(Lower *L, const KPhase *ph, int rows, LLVMValueRef rlo, LLVMValueRef rhi) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef n = LLVMBuildSub(b, rhi, rlo, "");
  LLVMValueRef mid = LLVMBuildAdd(b, rlo, LLVMBuildMul(b, LLVMBuildSDiv(b, n, cg_i64(&L->m, rows), ""), cg_i64(&L->m, rows), ""), "");
  JamArg ja = {ph, rows, NULL};
  cg_outer_for_chunks(L, rlo, mid, rows, jam_chunk, &ja);
  ja.rows = 1;
  cg_outer_for_chunks(L, mid, rhi, 1, jam_chunk, &ja);
}

/* ---- whole-row streams --------------------------------------------------------------------------
 * The jam and the strips read `rows` rows (16 for strips) a few vectors at a time: within a page the lines
 * are visited out of order (row 0 line 0, row 1 line 0, ..., row 0 line 1), which the prefetchers follow
 * badly for rows of 512 B to a few KiB (one thread from L3, NaN-checked float max, 1028-byte rows: 15.6
 * GB/s jammed vs 30.7 row after row), and each pass chains `rows` dependent folds per column (a float
 * max with its NaN check is 3 uops and ~4 cycles a step). When the block is a whole row and the next R
 * point's row follows it in memory (every buffer read along R: O stride 1 and innermost R stride = the
 * block's width, or O stride 0), the plain walk reads the input as one forward stream with the block's
 * accumulators in L1 and no chain within a pass. A piece of a row is no stream (int32 rows of 7 KiB cut
 * into two 3.5 KiB blocks: the plain walk 2.5x slower than the jam), hence blocks of up to
 * CG_OUTER_WIDE_BLOCK columns while the stream is on. Kept on the jam: rows under CG_OUTER_STREAM_MIN
 * bytes (a pass of the walk is too short: 64 float32 columns at 0.65-1.1x of the jam), rows past
 * LOOM_HOST_OUTER_STREAM bytes (the accumulators leave L1: equal at 8 KiB, the jam 1.3x at 16 KiB), and
 * the phases may_stream leaves out. Paired suite timings (diag_pair, 2 cores, load 3-5, 5 runs): max over the
 * middle axis of 24 x 999 x 257 float32 1.2-2.5x (mostly ~2.3x), int32 column min of 3001 x 1777 0.95-1.4x,
 * all(x > 0, axis=0) 1.25-1.5x. Same bits either way: every column folds its values in R order with the same
 * operations (test_host_axis_minmax). */
enum {
  CG_OUTER_STREAM_MIN = 512,  /* row bytes, at least */
  CG_OUTER_STREAM_MAX = 8192  /* row bytes, at most (LOOM_HOST_OUTER_STREAM; 0: never, the A/B switch,
                                 * which also keeps blocks of CG_OUTER_BLOCK) */
};

static int stream_knob(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_HOST_OUTER_STREAM", CG_OUTER_STREAM_MAX);
}

/* Whether phase ph may stream at all: the knob on, no user code, no gathers, no MAP phase, no REDUCE phase
 * before it (a variance's second phase reads the mean per point, which the jam hoists: the plain walk was
 * 0.3-0.9x), and a comparison fold (max, min, their args, any, all). Sums, means, products and counts keep
 * the jam: their step is one add or multiply, and streaming them measured 0.75-1.1x (column sums of 4096
 * x 1024 float32, int32 and float32 sums over 128-1024 columns). */
static bool may_stream(const KernelIr *k, const KPhase *ph) {
  int op = ph->reduce_op;
  if (stream_knob() < CG_OUTER_STREAM_MIN || k->snippet || cg_outer_has_map(k) || ph->kind != KP_REDUCE) return false;
  if (op != LOOM_REDUCE_MAX && op != LOOM_REDUCE_MIN && op != LOOM_REDUCE_ARGMAX && op != LOOM_REDUCE_ARGMIN &&
      op != LOOM_REDUCE_ANY && op != LOOM_REDUCE_ALL)
    return false;
  for (const KPhase *q = k->phases; q < ph; q++)
    if (q->kind == KP_REDUCE) return false;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_GATHER) return false;
  return true;
}

int cg_outer_block_cap(const KernelIr *k) {
  for (int p = 0; p < k->nphase; p++)
    if (may_stream(k, &k->phases[p])) return CG_OUTER_WIDE_BLOCK;
  return CG_OUTER_BLOCK;
}

/* Whether the tiled walk (jam or strips) differs from the plain walk for phase ph. */
static bool tiled_walk(Lower *L, const KPhase *ph) { return jam_rows(L->k, ph) || strip_width(L, ph, NULL) > 1; }

/* i1: the block is a whole row whose next R point's row follows it in every buffer read along R, of
 * CG_OUTER_STREAM_MIN..LOOM_HOST_OUTER_STREAM bytes (the widest of those buffers' and the accumulator's
 * elements); NULL when no launch can be (may_stream). */
static LLVMValueRef stream_rows(Lower *L, const KPhase *ph) {
  const KernelIr *k = L->k;
  int maxb = stream_knob(), last = k->nkeep - 1, rd = k->ndim - 1;
  if (!may_stream(k, ph) || last < 0 || rd <= last) return NULL;
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  LLVMValueRef zero = cg_i64(m, 0), one = cg_i64(m, 1);
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntEQ, L->bn, L->shape[last], "");
  size_t es = loom_dtype_size(cg_red_value_dtype(k, ph));
  for (int bi = 0; bi < k->nbuf; bi++) {
    bool loaded = false, varies = false;
    for (int i = 0; i < k->ninstr; i++) loaded |= k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
    for (int d = k->nkeep; d < k->ndim && loaded; d++) {
      int64_t s;
      varies |= !ir_layout_const(k->bufs[bi].layout[d], &s) || s != 0;
    }
    if (!varies) continue;
    size_t bs = loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    if (bs > es) es = bs;
    LLVMValueRef so = L->stride[bi * k->ndim + last], sr = L->stride[bi * k->ndim + rd];
    LLVMValueRef follows = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, so, one, ""), LLVMBuildICmp(b, LLVMIntEQ, sr, L->bn, ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildOr(b, follows, LLVMBuildICmp(b, LLVMIntEQ, so, zero, ""), ""), "");
  }
  LLVMValueRef bytes = LLVMBuildMul(b, L->bn, cg_i64(m, (int64_t)(es ? es : 1)), "");
  ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, bytes, cg_i64(m, CG_OUTER_STREAM_MIN), ""), "");
  return LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLE, bytes, cg_i64(m, maxb), ""), "stream");
}

/* REDUCE phase ph over R points [rlo, rhi) with the jam or register strips (whole strips of columns in
 * registers, chunk by chunk of strip_rows() R points, then the rest of the columns by the block loop),
 * or the plain walk where neither applies. */
static void walk_tiled(Lower *L, const KPhase *ph, LLVMValueRef rlo, LLVMValueRef rhi) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  CgMath *m = &L->m;
  int jam = jam_rows(k, ph);
  if (jam) {
    jam_walk(L, ph, jam, rlo, rhi);
    return;
  }
  int lanes = 1, w = strip_width(L, ph, &lanes);
  ColWalk cw = {ph, cg_i64(m, 0), w, lanes, NULL, NULL, NULL};
  if (w > 1) {
    LoomDType vt = cg_red_value_dtype(k, ph);
    cw.sacc = cg_entry_alloca(L, LLVMArrayType(cg_mem_type(m, vt), (unsigned)w), "saccs");
    if (is_arg(ph->reduce_op)) cw.sidx = cg_entry_alloca(L, LLVMArrayType(L->i64, (unsigned)w), "saccis");
    cg_outer_for_chunks(L, rlo, rhi, strip_rows(), strips_chunk, &cw);
    cw.c0 = LLVMBuildMul(b, LLVMBuildSDiv(b, L->bn, cg_i64(m, w), ""), cg_i64(m, w), "");
    cw.width = 0;
  }
  cg_host_walk(L, k->nkeep, k->ndim, rlo, rhi, body_block_reduce_row, &cw);
}

/* Whether a REDUCE phase comes before ph (a variance's squared deviations read the mean per point, which
 * the jam hoists). */
static bool later_phase(const KernelIr *k, const KPhase *ph) {
  for (const KPhase *q = k->phases; q < ph; q++)
    if (q->kind == KP_REDUCE) return true;
  return false;
}

/* REDUCE phase ph over R points [rlo, rhi) for every o of the block (accumulators in the block arrays):
 * the plain walk where the block's rows stream (stream_rows), else walk_tiled. In a copy of the walk for
 * one small stride of the loads along o (lower_host_outer_loads.c) the plain walk unless a REDUCE phase
 * comes before ph: the deinterleaving shuffles cost what the jam saves (hot, 2003 x 1531 float32 one thread:
 * x[:, ::2].mean(0) 0.19-0.21 ms either way, max and x[:, ::3].sum(0) too; x[:, ::2].var(0) 0.45 with the
 * jam on its second phase, 0.9 without) and the copies compile faster (mean 340 -> 235-255 ms). */
static void walk_columns(Lower *L, const KPhase *ph, LLVMValueRef rlo, LLVMValueRef rhi) {
  if (L->outer_col_const && !later_phase(L->k, ph)) { /* (lower_host_outer_loads.c) */
    ColWalk cw = {ph, cg_i64(&L->m, 0), 0, 1, NULL, NULL, NULL};
    cg_host_walk(L, L->k->nkeep, L->k->ndim, rlo, rhi, body_block_reduce_row, &cw);
    return;
  }
  LLVMValueRef stream = tiled_walk(L, ph) ? stream_rows(L, ph) : NULL;
  if (!stream) {
    walk_tiled(L, ph, rlo, rhi);
    return;
  }
  LLVMBuilderRef b = L->m.b;
  LLVMBasicBlockRef plain = cg_new_bb(L, "stream.rows"), tiled = cg_new_bb(L, "stream.tiled"), join = cg_new_bb(L, "stream.join");
  LLVMBuildCondBr(b, stream, plain, tiled);
  LLVMPositionBuilderAtEnd(b, plain);
  ColWalk cw = {ph, cg_i64(&L->m, 0), 0, 1, NULL, NULL, NULL};
  cg_host_walk(L, L->k->nkeep, L->k->ndim, rlo, rhi, body_block_reduce_row, &cw);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, tiled);
  walk_tiled(L, ph, rlo, rhi);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
}

typedef struct ColRange {
  const KPhase *ph;
  LLVMValueRef rlo, rhi;
} ColRange;

static void walk_range(Lower *L, const void *arg) {
  const ColRange *cr = arg;
  walk_columns(L, cr->ph, cr->rlo, cr->rhi);
}

/* walk_columns, once more per small stride of the loads along o (lower_host_outer_loads.c). */
void cg_outer_walk_columns(Lower *L, const KPhase *ph, LLVMValueRef rlo, LLVMValueRef rhi) {
  ColRange cr = {ph, rlo, rhi};
  cg_outer_by_col_stride(L, walk_range, &cr);
}
