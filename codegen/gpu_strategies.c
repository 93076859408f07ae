/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_strategies.c: the bodies of the GPU entries (codegen.h's CgGpuKernel), shared by every GPU target:
 * an elementwise point and a vector step (16-byte loads and stores, the expression evaluated once per
 * lane), one item of a reduction entry (ROW: a block per O point or part, COL and FINISH: a thread),
 * and one part of the vector PART entry (the cached ROW entry's O point: gpu_cached.c). gpu_lower.c
 * builds the entries around them (cg_lower_gpu).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* ---- elementwise ------------------------------------------------------------------------------------ */

void cg_gpu_elem_point(Lower *L, LLVMValueRef i, void *arg) {
  cg_gpu_offsets(L, i, 0, L->k->ndim, NULL, L->off);
  L->lin = cg_to_i64(L, i);
  cg_body_map(L, (void *)&L->k->phases[0]);
}

/* LOOM_GPU_ELEM_POINTS: points a thread reads ahead in the scalar elementwise loop (1: one at a time). */
int cg_gpu_elem_points_of(const KernelIr *k) {
  static int knob = -1;
  int n = cg_env_int_once(&knob, "LOOM_GPU_ELEM_POINTS", GPU_ELEM_POINTS_MAX);
  if (n < 1 || k->snippet) return 1; /* user code runs point by point, in order */
  if (n > GPU_ELEM_POINTS_MAX) n = GPU_ELEM_POINTS_MAX;
  for (int i = 0; i < k->ninstr; i++) { /* complex division, powers, functions: the body's own registers */
    const KInstr *in = &k->instrs[i];
    bool cplx = dtype_is_complex((LoomDType)in->dtype) ||
                (in->src[0] >= 0 && dtype_is_complex((LoomDType)k->instrs[in->src[0]].dtype));
    if (in->kind == KI_ELEM && cplx && in->op != LOOM_OP_ADD && in->op != LOOM_OP_SUB && in->op != LOOM_OP_MUL &&
        in->op != LOOM_OP_NEG && in->op != LOOM_OP_CONJ && in->op != LOOM_OP_REAL && in->op != LOOM_OP_IMAG)
      return 1; /* (complex128 division and power spilled on gfx90a at two points: tests/c/test_amdgpu.c) */
  }
  int words = 0; /* 32-bit registers a point's loaded values take */
  for (int b = 0; b < k->nbuf && b < 64; b++)
    for (int i = 0; i < k->ninstr; i++)
      if (k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == b) {
        words += (dtype_bits((LoomDType)k->bufs[b].dtype) + 31) / 32;
        break;
      }
  /* values held across the group: 24 registers at most */
  while (n > 1 && n * words > 24) n /= 2;
  return n;
}

/* Points i + j * stride (j < count, those below n) of the scalar elementwise loop: every loaded buffer's
 * value at every point is read first (a point past the end reads the last point), then each point is
 * computed and stored. The entry runs where the vector ones cannot (odd row lengths, unaligned slices,
 * rows of 3, strided views: x - b[:, None] on 20011 x 7777, x[:, 1:] - x[:, :-1]); one point at a time a
 * thread had one load per buffer in flight, the stores in between keeping ptxas from hoisting the next
 * point's loads (a load may alias them), so these kernels were latency-bound (H200 probe, 2026-12-05:
 * 45-64 % of copy bandwidth against 95-100 % for the vector entries). */
LLVMValueRef cg_gpu_load_point(Lower *L, int bi, LLVMValueRef off) {
  LoomDType st = (LoomDType)L->k->bufs[bi].dtype; /* a vector of one point: what KI_LOAD reads as lane 0 */
  LLVMValueRef ld = LLVMBuildLoad2(L->m.b, cg_vec_type(&L->m, st, 1), cg_elem_ptr(L, bi, off), "");
  LLVMSetAlignment(ld, dtype_align(st));
  return LLVMBuildFreeze(L->m.b, ld, ""); /* a use here: instcombine does not sink it to its guarded point */
}

void cg_gpu_elem_points(Lower *L, LLVMValueRef i, void *arg) {
  const CgElemPoints *p = arg;
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nb = k->nbuf < 64 ? k->nbuf : 64, cnt = p->count;
  bool loaded[64] = {false};
  for (int in = 0; in < k->ninstr; in++)
    if (k->instrs[in].kind == KI_LOAD && k->instrs[in].buf >= 0 && k->instrs[in].buf < nb) loaded[k->instrs[in].buf] = true;
  LLVMValueRef a[GPU_ELEM_POINTS_MAX], ok[GPU_ELEM_POINTS_MAX], off[GPU_ELEM_POINTS_MAX][64], v[GPU_ELEM_POINTS_MAX][64];
  LLVMValueRef left = LLVMBuildSub(b, p->n, i, ""); /* > 0: i < n; j * stride < left never overflows */
  for (int j = 0; j < cnt; j++) {
    LLVMValueRef dj = LLVMBuildMul(b, p->stride, cg_iconst_i(L, j), "");
    a[j] = LLVMBuildAdd(b, i, dj, "");
    ok[j] = j ? LLVMBuildICmp(b, LLVMIntSLT, dj, left, "") : NULL;
    LLVMValueRef c = j ? LLVMBuildSelect(b, ok[j], a[j], LLVMBuildSub(b, p->n, cg_iconst_i(L, 1), ""), "") : i;
    cg_gpu_offsets(L, c, 0, k->ndim, NULL, off[j]);
  }
  for (int j = 0; j < cnt; j++)
    for (int bi = 0; bi < nb; bi++) {
      v[j][bi] = NULL;
      if (!loaded[bi]) continue;
      v[j][bi] = cg_gpu_load_point(L, bi, off[j][bi]);
    }
  for (int j = 0; j < cnt; j++) {
    LLVMBasicBlockRef done = NULL;
    if (j) {
      LLVMBasicBlockRef then = cg_new_bb(L, "elem.point");
      done = cg_new_bb(L, "elem.next");
      LLVMBuildCondBr(b, ok[j], then, done);
      LLVMPositionBuilderAtEnd(b, then);
    }
    for (int bi = 0; bi < k->nbuf; bi++) {
      L->off[bi] = bi < nb ? off[j][bi] : NULL;
      L->vload[bi] = bi < nb ? v[j][bi] : NULL;
    }
    L->lane = 0;
    L->lin = cg_to_i64(L, a[j]);
    cg_body_map(L, (void *)&k->phases[0]);
    for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
    if (j) {
      LLVMBuildBr(b, done);
      LLVMPositionBuilderAtEnd(b, done);
    }
  }
}

/* One vector of an elementwise vector entry: its buffers' offsets and the 16-byte loads. */
typedef struct ElemVec {
  LLVMValueRef boff[64], vl[64];
  LLVMValueRef row, col; /* flatv: lane 0's point (NULL otherwise) */
  /* flatv of 3 or more dims: the offsets of the leading dims at lane 0's row and at the next row (the
   * launcher runs it only where a row holds a whole vector, so the lanes cross at most one row end) */
  LLVMValueRef roff0[64], roff1[64];
  bool nd;
} ElemVec;

/* Vector v: points [v * lanes, v * lanes + lanes), which lie in one row of the last dim (the launcher
 * runs the vector entries on n-d kernels only when the last dim is a multiple of the lanes and every
 * buffer contiguous along it starts its rows aligned: gpu_launch.c's elem_vec_ok). The row's offsets
 * are computed once per vector (one division by the last dim, none for 1-d kernels) instead of once
 * per point; a buffer contiguous along the last dim is read with one vector load, one broadcast along
 * it (stride 0) with one scalar load that every lane shares (in elemv_finish). */
/* flatv (codegen.h, flat): the vector's lanes may cross rows of a 2-d kernel; the buffers of
 * cg_gpu_flat_vec_buf (C-contiguous at run time) are read as vectors of the flat index, the others lane by
 * lane at each lane's (row, column) (elemv_finish). */
static void elemv_load(Lower *L, LLVMValueRef v, unsigned lanes, bool flat, ElemVec *ev) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nd = k->ndim, last = nd - 1;
  LLVMValueRef base = LLVMBuildMul(b, v, cg_iconst_i(L, lanes), "");
  LLVMValueRef col = base, *boff = ev->boff;
  ev->row = ev->col = NULL;
  ev->nd = flat && nd > 2;
  if (nd > 1) {
    LLVMValueRef row = cg_gpu_divmod(L, base, last, &col);
    cg_gpu_offsets(L, row, 0, last, NULL, boff);
    if (flat) {
      ev->row = row;
      ev->col = col;
    }
    if (ev->nd) { /* the next row's leading offsets: used only by lanes past the row's end (then it exists) */
      memcpy(ev->roff0, boff, sizeof(LLVMValueRef) * (size_t)(k->nbuf < 64 ? k->nbuf : 64));
      cg_gpu_offsets(L, LLVMBuildAdd(b, row, cg_iconst_i(L, 1), ""), 0, last, NULL, ev->roff1);
    }
  } else {
    for (int bi = 0; bi < k->nbuf; bi++) boff[bi] = cg_iconst_i(L, 0);
  }
  for (int bi = 0; bi < k->nbuf; bi++) {
    boff[bi] = LLVMBuildAdd(b, boff[bi], LLVMBuildMul(b, col, L->stride[bi * nd + last], ""), "");
    ev->vl[bi] = NULL;
  }
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || ev->vl[in->buf] || k->bufs[in->buf].layout[last] != KL_ONE) continue;
    if (flat && !cg_gpu_flat_vec_buf(k, in->buf)) continue;
    LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
    LLVMTypeRef vt = cg_vec_type(m, st, lanes);
    LLVMValueRef ld = LLVMBuildLoad2(b, vt, cg_elem_ptr(L, in->buf, boff[in->buf]), "");
    LLVMSetAlignment(ld, lanes * (unsigned)loom_dtype_size(st));
    /* used here (a freeze), so instcombine does not sink the load down to its first use: a second
     * vector's loads must be issued before the first vector is computed (cg_gpu_elemv_pair) */
    ev->vl[in->buf] = LLVMBuildFreeze(b, ld, "");
  }
}

/* The expression on each lane of a loaded vector, then its 16-byte stores. */
static void elemv_finish(Lower *L, unsigned lanes, const ElemVec *ev) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nd = k->ndim, last = nd - 1;
  const LLVMValueRef *boff = ev->boff;
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = ev->vl[bi];
  const KPhase *ph = &k->phases[0];
  LLVMValueRef sv[64];
  int ns = ph->nstores < 64 ? ph->nstores : 64;
  for (int s = 0; s < ns; s++) {
    LoomDType st = (LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype;
    sv[s] = LLVMGetUndef(cg_vec_type(m, st, lanes));
  }
  LLVMValueRef row = ev->row, col = ev->col; /* flatv: lane l's point, stepped from lane 0's */
  CgFlatHoist hoist; /* flatv of 3+ dims (rows hold a vector): values constant along a row, once per row */
  cg_gpu_flat_hoist(L, lanes, ev->nd ? ev->row : NULL, ev->col, boff, &hoist);
  for (unsigned l = 0; l < lanes; l++) {
    L->lane = l;
    LLVMValueRef dl = cg_iconst_i(L, l); /* KI_OFFSET and broadcast loads read the lane's offsets */
    LLVMValueRef wrap = NULL;            /* n-d: whether lane l lies in the next row */
    if (ev->nd && l) { /* n-d: lane l at column col + l of this row or col + l - width of the next */
      LLVMValueRef c = LLVMBuildAdd(b, ev->col, dl, "");
      wrap = LLVMBuildICmp(b, LLVMIntSGE, c, L->shape[last], "");
      c = LLVMBuildSelect(b, wrap, LLVMBuildSub(b, c, L->shape[last], ""), c, "");
      for (int bi = 0; bi < k->nbuf; bi++)
        L->off[bi] = bi < 64 ? LLVMBuildAdd(b, LLVMBuildSelect(b, wrap, ev->roff1[bi], ev->roff0[bi], ""),
                                            LLVMBuildMul(b, c, L->stride[bi * nd + last], ""), "")
                             : NULL;
    } else if (row && l) {
      col = LLVMBuildAdd(b, col, cg_iconst_i(L, 1), "");
      LLVMValueRef wrap = LLVMBuildICmp(b, LLVMIntEQ, col, L->shape[last], "");
      col = LLVMBuildSelect(b, wrap, cg_iconst_i(L, 0), col, "");
      row = LLVMBuildAdd(b, row, LLVMBuildZExt(b, wrap, LLVMTypeOf(row), ""), "");
    }
    for (int bi = 0; bi < k->nbuf && !(ev->nd && l); bi++)
      L->off[bi] = !l ? boff[bi]
                   : row ? LLVMBuildAdd(b, LLVMBuildMul(b, row, L->stride[bi * nd], ""), LLVMBuildMul(b, col, L->stride[bi * nd + last], ""), "")
                         : LLVMBuildAdd(b, boff[bi], LLVMBuildMul(b, dl, L->stride[bi * nd + last], ""), "");
    cg_clear_cache(L);
    cg_gpu_flat_hoist_lane(L, &hoist, wrap);
    if (k->snippet) /* user calls are roots, lane by lane (they may write raw arrays or worker state) */
      for (int32_t i = 0; i < k->ninstr; i++)
        if (k->instrs[i].kind == KI_USER) cg_eval_needed(L, &i, 1);
    for (int s = 0; s < ns; s++) {
      const KStore *kst = &k->stores[ph->store_begin + s];
      cg_eval_needed(L, &kst->value, 1);
      LLVMValueRef val = cg_to_mem(m, (LoomDType)k->instrs[kst->value].dtype, (LoomDType)k->bufs[kst->buf].dtype,
                                   L->cache[kst->value]);
      sv[s] = cg_vec_set(m, (LoomDType)k->bufs[kst->buf].dtype, sv[s], val, l);
    }
  }
  cg_clear_cache(L);
  for (int s = 0; s < ns; s++) {
    const KStore *kst = &k->stores[ph->store_begin + s];
    LoomDType st = (LoomDType)k->bufs[kst->buf].dtype;
    LLVMSetAlignment(LLVMBuildStore(b, sv[s], cg_elem_ptr(L, kst->buf, boff[kst->buf])),
                     lanes * (unsigned)loom_dtype_size(st));
  }
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
}

/* Ties lane 0 of each buffer's first loaded vector (first[bi]) to the same buffer's other vectors
 * (rest[g][bi], g < nrest) through a runtime zero (x |= (y | z ...) & zero): ptxas otherwise sinks a
 * load down to just before the first store that follows it (it cannot pass a store that may alias), so
 * a math-heavy first vector, or a reduction's first vector with a side store, ran with one load in
 * flight (gelu in float16: the second load issued ~180 instructions after the first). A dependence on
 * one register of a vector load waits for the whole load, so one lane suffices: 2 integer ops per
 * extra vector and buffer. */
static void tie_loads(Lower *L, LLVMValueRef *first, LLVMValueRef (*rest)[GPU_TIE_MAXBUF], int nrest, int nbuf,
                      LLVMValueRef zero) {
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < nbuf && bi < GPU_TIE_MAXBUF; bi++) {
    if (!first[bi]) continue;
    LLVMTypeRef vt = LLVMTypeOf(first[bi]);
    LLVMTypeRef et = LLVMGetElementType(vt);
    LLVMTypeKind tk = LLVMGetTypeKind(et);
    unsigned bits = tk == LLVMIntegerTypeKind                           ? LLVMGetIntTypeWidth(et)
                    : tk == LLVMHalfTypeKind || tk == LLVMBFloatTypeKind ? 16
                    : tk == LLVMFloatTypeKind                            ? 32
                                                                         : 64;
    LLVMTypeRef it = LLVMIntTypeInContext(L->m.c, bits);
    LLVMValueRef lane0 = cg_i64(&L->m, 0), any = NULL;
    for (int g = 0; g < nrest; g++) {
      if (!rest[g][bi]) continue;
      LLVMValueRef x = LLVMBuildBitCast(b, LLVMBuildExtractElement(b, rest[g][bi], lane0, ""), it, "");
      any = any ? LLVMBuildOr(b, any, x, "") : x;
    }
    if (!any) continue;
    LLVMValueRef x0 = LLVMBuildBitCast(b, LLVMBuildExtractElement(b, first[bi], lane0, ""), it, "");
    x0 = LLVMBuildOr(b, x0, LLVMBuildAnd(b, any, LLVMBuildTrunc(b, zero, it, ""), ""), "");
    first[bi] = LLVMBuildInsertElement(b, first[bi], LLVMBuildBitCast(b, x0, et, ""), lane0, "");
  }
}

/* Vectors v and v + stride (when < nvec) with both vectors' loads issued before either is computed: two
 * 16-byte loads in flight per thread and buffer (the stores that follow keep ptxas from sinking them
 * past the first vector's store: it cannot move a load past a store that may alias it; the load ties
 * keep them ahead of its math). A grid of resident threads with one load each keeps about 4 MB in flight
 * on an H200, short of its bandwidth-latency product: one-input kernels stopped at ~92 % of copy
 * bandwidth, kernels of two inputs reached 95-98 %; four vectors a thread gained nothing over two
 * (2026-12-03). A second vector past the end reads the first one again (no store). */
void cg_gpu_elemv_pair(Lower *L, LLVMValueRef v, void *arg) {
  const CgElemPair *p = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef v2 = LLVMBuildAdd(b, v, p->stride, "");
  LLVMValueRef ok2 = LLVMBuildICmp(b, LLVMIntSLT, v2, p->nvec, "");
  ElemVec e1, e2;
  elemv_load(L, v, p->lanes, p->flat, &e1);
  elemv_load(L, LLVMBuildSelect(b, ok2, v2, v, ""), p->lanes, p->flat, &e2);
  if (p->zero) {
    LLVMValueRef rest[1][GPU_TIE_MAXBUF];
    int nb = L->k->nbuf < GPU_TIE_MAXBUF ? L->k->nbuf : GPU_TIE_MAXBUF;
    for (int bi = 0; bi < nb; bi++) rest[0][bi] = e2.vl[bi];
    tie_loads(L, e1.vl, rest, 1, nb, p->zero);
  }
  elemv_finish(L, p->lanes, &e1);
  LLVMBasicBlockRef then = cg_new_bb(L, "vec.second"), done = cg_new_bb(L, "vec.done");
  LLVMBuildCondBr(b, ok2, then, done);
  LLVMPositionBuilderAtEnd(b, then);
  elemv_finish(L, p->lanes, &e2);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}

static int elem_tie_knob(void) {
  static int tie = -1;
  return cg_env_int_once(&tie, "LOOM_GPU_ELEM_TIE", 1);
}

bool cg_gpu_elemv_tie(void) { return elem_tie_knob() != 0; }

/* LOOM_GPU_ROWC_FIT: 0 never, 1 always, unset (2) by this rule. */
static int rowc_fit_knob(void) {
  static int fit = -1;
  return cg_env_int_once(&fit, "LOOM_GPU_ROWC_FIT", 2);
}

/* Whether a cached-row vector entry's registers are fitted to 1024 threads a block (.maxntid on NVIDIA): where
 * it loads a buffer beside the row (weights, biases, labels: their vectors are live beside the 16 cached
 * values), H200 2026-12-04: layernorm 66 -> 64 registers, 0.173 -> 0.151 ms (4 blocks of 256 an SM instead
 * of 3), cross_entropy 0.141 -> 0.123, rmsnorm / attn_mask_softmax / cosine_sim_rows within 0.5 %; a kernel
 * that loads the row alone lost (ptxas then spends up to the cap: softmax 47 -> 64 registers, 0.1326 ->
 * 0.136 ms, std_rows 0.063 -> 0.070, softmax_f16 +8 %). */
bool cg_gpu_rowc_fit(const Lower *L) {
  const KernelIr *k = L->k;
  int knob = rowc_fit_knob();
  if (knob != 2) return knob != 0;
  /* rows of 32 points a thread whose REDUCE phase keeps a costly float16 value for a later phase (float16
   * softmax's exp): with those values as words across the block reduction (gpu_cached.c:
   * cg_gpu_narrow_words) the block mode fits 64 registers without spilling (ptxas, softmax_f16: 92 -> 64
   * registers, 5 -> 8 blocks of 128 threads an SM; without the words the fit spilled 35 local loads /
   * stores in the block mode: the +8 % above). The short-row mode of the same entry then spills (55 local
   * loads / stores; 81 registers unfitted): rows of <= 1024 float16 points of such kernels pay that */
  if (L->cache_k >= GPU_CACHE_K_MAX && cg_gpu_narrow_words(L) && cg_gpu_cached_keeps_narrow(L->ctx, k)) return true;
  /* a row of 8-byte values (128 bytes a thread: 16 float64 points, 32 registers) whose REDUCE phase keeps
   * an 8-byte costly value for a later phase (float64 softmax's exp: 32 more): unfitted, ptxas took 114
   * registers, one block of 512 threads an SM, whose phases (load, block max, block sum, store) then ran
   * one after another with nothing else in flight. H100 2026-12-06 (ncu: DRAM bytes one read and one
   * write either way), softmax_f64 20011 x 7777 1.657 -> 1.326 ms; float64 softmax of rows of 1000 / 4096 /
   * 7777 / 16000: 0.69 / 0.74 / 0.85 / 0.97 -> 0.62 / 0.63 / 0.69 / 0.87 ms. Fitted without a kept value
   * (std, l2 norm, layer norm, logsumexp of float64 rows) it lost at most lengths (layer norm 0.43 -> 0.59
   * ms at 1000), as did a float32 row alone (logsumexp_rows 0.204 -> 0.238 ms). */
  int nloaded = 0;
  int64_t cached_bytes = 0;
  bool seen[64] = {false};
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || in->buf < 0 || in->buf >= 64 || seen[in->buf]) continue;
    seen[in->buf] = true;
    nloaded++;
    cached_bytes += (int64_t)L->cache_k * loom_dtype_size((LoomDType)k->bufs[in->buf].dtype);
  }
  return nloaded >= 2 || (cached_bytes >= 128 && cg_gpu_cached_keeps_wide(L->ctx, k));
}

/* Whether an elementwise kernel's vector loads are tied (LOOM_GPU_ELEM_TIE: 0 never, 2 always, 1 (default)
 * by this rule). H200, 2026-12-03 (bench/results/2026-12-03-h200-run9-logs): ties pay where reads
 * dominate the traffic (int8 quantization, 4 bytes read a point for 1 written: +12 %) and where 8-lane
 * vectors of 2-byte values give ptxas room to sink the second load far (GELU in float16: +3.5 %), and
 * cost 4-10 % on float32 maps that write as much as they read (GELU, SiLU: there the loads already
 * issue close together, and waiting for both before the first vector's math only delays it). */
bool cg_gpu_elemv_tie_kernel(const KernelIr *k, unsigned lanes) {
  int knob = elem_tie_knob();
  if (knob != 1) return knob != 0;
  if (lanes >= 8) return true;
  bool seen[64] = {false};
  int64_t rd = 0, wr = 0;
  int last = k->ndim - 1;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || in->buf >= 64 || seen[in->buf] || k->bufs[in->buf].layout[last] != KL_ONE) continue;
    seen[in->buf] = true;
    rd += (int64_t)loom_dtype_size((LoomDType)k->bufs[in->buf].dtype);
  }
  const KPhase *ph = &k->phases[0];
  for (int s = 0; s < ph->nstores; s++) wr += (int64_t)loom_dtype_size((LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype);
  return rd >= 2 * wr;
}

/* The elementwise and PARTV knobs in the target's description (so kernels compiled under them are cached
 * apart); "" at the defaults. Made once per process. */
static char elem_tag[128];
static pthread_once_t elem_tag_once = PTHREAD_ONCE_INIT;
static int partv_side_unroll_knob(void);

static void make_elem_tag(void) {
  size_t n = 0;
  if (elem_tie_knob() != 1) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " tie%d", elem_tie_knob());
  if (partv_side_unroll_knob() != 0) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " pvu%d", partv_side_unroll_knob());
  if (rowc_fit_knob() != 2) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " rowcfit%d", rowc_fit_knob());
  if (cg_gpu_online_on()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " online1");
  if (!cg_gpu_flat_nd()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " flatnd0");
  if (!cg_gpu_flat_hoist_on()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " hoist0");
  if (!cg_gpu_magic_by_double()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " magic2");
  if (cg_gpu_poly_log10()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " log10poly");
  if (!cg_gpu_walk_nsw()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " nsw0");
  if (!cg_gpu_colv_on()) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " colv0");
  if (cg_gpu_rowflat_knob() != 1) n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " rowf%d", cg_gpu_rowflat_knob());
  if (cg_gpu_rowflat_stage_knob() != 0)
    n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " rowfs%d", cg_gpu_rowflat_stage_knob());
  if (cg_gpu_map_flat_points() != GPU_ELEM_POINTS_MAX)
    n += (size_t)snprintf(elem_tag + n, sizeof elem_tag - n, " mflat%d", cg_gpu_map_flat_points());
  if (cg_gpu_tile_w() != 32) snprintf(elem_tag + n, sizeof elem_tag - n, " tw%d", cg_gpu_tile_w());
}

const char *cg_gpu_elem_tag(void) {
  pthread_once(&elem_tag_once, make_elem_tag);
  return elem_tag;
}

/* ---- reductions ------------------------------------------------------------------------------------- */

/* One item of a reduction entry (ROW: per block; COL and FINISH: per thread). */
void cg_gpu_red_item(Lower *L, LLVMValueRef item, void *arg) {
  GpuEntry *e = arg;
  if (e->phased) { /* a multi-phase kernel's PART / FINISH / FINISHB: one phase per launch */
    cg_gpu_phase_item(L, item, arg);
    return;
  }
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = item, rlo = cg_iconst_i(L, 0), rhi = e->nr;
  if (e->which == GPU_PART) { /* item = part * nO + o; part's R range: balanced split */
    o = LLVMBuildURem(b, item, e->no, "");
    LLVMValueRef part = LLVMBuildUDiv(b, item, e->no, "");
    LLVMValueRef q = LLVMBuildUDiv(b, e->nr, e->nparts, ""), r = LLVMBuildURem(b, e->nr, e->nparts, "");
    LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
    rlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
    rhi = LLVMBuildAdd(b, LLVMBuildAdd(b, rlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  }
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef zero = cg_iconst_i(L, 0), one = cg_iconst_i(L, 1);
  if (e->which == GPU_FINISHB && k->phases[0].kind == KP_SCAN) { /* a part of a split scan, or a look-back tile */
    if (!e->row) cg_gpu_scan_col_part(L, item, e); /* lower_scan.c */
    else if (cg_gpu_scan_lookback_on()) cg_gpu_scan_lookback(L, item, e);
    else cg_gpu_scan_part(L, item, e->no, e->nr, e->nparts, e->partials, e->acc_size, e->tid, e->bdim);
    return;
  }
  if (e->which == GPU_FINISH || e->which == GPU_FINISHB) { /* FINISHB: one block per O point */
    bool blk = e->which == GPU_FINISHB;
    const KPhase *ph = &k->phases[0];
    LoomDType vt = cg_red_value_dtype(k, ph);
    LLVMTypeRef vty = cg_reg_type(&L->m, vt);
    LLVMValueRef accv = cg_entry_alloca(L, vty, "facc"), acci = cg_entry_alloca(L, L->i64, "facci");
    LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accv);
    LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), acci);
    LLVMValueRef pv = cg_entry_alloca(L, L->ity, "p");
    LLVMBuildStore(b, blk ? e->tid : zero, pv);
    LLVMBasicBlockRef head = cg_new_bb(L, "fin.head"), body = cg_new_bb(L, "fin.body"), done = cg_new_bb(L, "fin.done");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef p = LLVMBuildLoad2(b, L->ity, pv, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, p, e->nparts, ""), body, done);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef ptr = cg_partial_ptr(L, e->partials, LLVMBuildAdd(b, LLVMBuildMul(b, p, e->no, ""), o, ""), e->acc_size);
    LLVMValueRef v = cg_from_mem(&L->m, vt, vt, LLVMBuildLoad2(b, cg_mem_type(&L->m, vt), ptr, ""));
    LLVMValueRef eight = cg_i64(&L->m, cg_acc_index_offset(vt));
    LLVMValueRef vi = is_arg(ph->reduce_op)
                          ? LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), ptr, &eight, 1, ""), "")
                          : cg_i64(&L->m, 0);
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accv, ""), ai = LLVMBuildLoad2(b, L->i64, acci, "");
    cg_gpu_combine(L, ph, vt, &a, &ai, v, vi, true);
    LLVMBuildStore(b, a, accv);
    LLVMBuildStore(b, ai, acci);
    LLVMBuildStore(b, LLVMBuildAdd(b, p, blk ? e->bdim : one, ""), pv);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, done);
    L->acc[0] = LLVMBuildLoad2(b, vty, accv, "");
    L->accidx[0] = LLVMBuildLoad2(b, L->i64, acci, "");
    if (!blk) {
      if (k->nphase == 2) cg_run_final_phase(L, &k->phases[1]);
      return;
    }
    cg_gpu_block_reduce(L, 0);
    if (k->nphase == 2) {
      LLVMBasicBlockRef t0 = cg_new_bb(L, "finb"), after = cg_new_bb(L, "finb.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      cg_run_final_phase(L, &k->phases[1]);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    }
    return;
  }
  int nphase = e->which == GPU_PART ? 1 : k->nphase;
  for (int p = 0; p < nphase; p++) {
    const KPhase *ph = &k->phases[p];
    cg_clear_cache(L);
    if (L->mom_on && cg_mom_folded(&L->mom, p)) continue; /* folded: computed after phase 0 (gpu_moments.c) */
    if (L->onl_on && p == L->onl.phase) continue;       /* folded: computed after phase 0 (gpu_online_max.c) */
    if (L->join_on && cg_join_folded(&L->join, p)) continue; /* joined: folded in phase 0's walk (gpu_joint.c) */
    bool onl0 = L->onl_on && p == 0;                     /* phase 0 gathers the online (max, sum): scalar loads */
    bool join0 = L->join_on && p == 0;                   /* ... or the joined phases: likewise */
    if (ph->kind == KP_REDUCE) {
      if (e->row) { /* main: 16-byte loads where the row allows (gpu_lower.c) */
        if (!(e->which == GPU_MAIN && !cg_has_side_stores(k) && !onl0 && !join0 &&
              cg_gpu_reduce_row_vec(L, p, e->tid, e->bdim, e->nr)))
          cg_gpu_reduce_range(L, p, LLVMBuildAdd(b, rlo, e->tid, ""), rhi, e->bdim);
        cg_gpu_block_reduce(L, p);
      } else {
        cg_gpu_reduce_range(L, p, rlo, rhi, one);
      }
      if (L->mom_on && p == 0) cg_gpu_mom_results(L);
      if (onl0) cg_gpu_onl_result(L);
    } else if (ph->kind == KP_SCAN) {
      if (e->row && e->which == GPU_PART) { /* split long rows: this part's fold (gpu_lower.c, lower_scan.c) */
        cg_gpu_reduce_range(L, p, LLVMBuildAdd(b, rlo, e->tid, ""), rhi, e->bdim);
        cg_gpu_block_reduce(L, p);
      } else if (e->which == GPU_PART) cg_gpu_reduce_range(L, p, rlo, rhi, one); /* a COL split's (part, o) fold */
      else if (e->row) cg_gpu_scan_row(L, p, e->tid, e->bdim, zero, e->nr, NULL);
      else cg_gpu_scan_serial(L, p, e->nr);
    } else if (ph->kind == KP_MAP) {
      if (e->row) cg_gpu_for(L, e->tid, e->nr, e->bdim, cg_gpu_map_point, (void *)ph);
      else cg_gpu_for(L, zero, e->nr, one, cg_gpu_map_point, (void *)ph);
    } else if (e->row) {
      LLVMBasicBlockRef t0 = cg_new_bb(L, "final"), after = cg_new_bb(L, "final.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      cg_run_final_phase(L, ph);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    } else {
      cg_run_final_phase(L, ph);
    }
  }
  cg_clear_cache(L);
  if (e->which == GPU_PART) {
    LLVMValueRef ptr = cg_partial_ptr(L, e->partials, item, e->acc_size);
    if (e->row) {
      LLVMBasicBlockRef t0 = cg_new_bb(L, "part.write"), after = cg_new_bb(L, "part.after");
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, zero, ""), t0, after);
      LLVMPositionBuilderAtEnd(b, t0);
      cg_store_partial(L, ptr);
      LLVMBuildBr(b, after);
      LLVMPositionBuilderAtEnd(b, after);
    } else {
      cg_store_partial(L, ptr);
    }
  }
}

/* ---- the vector PART entry of 1-d full reductions ---------------------------------------------------- */

/* Loads the lanes-wide vector at element offset `base` of every buffer the kernel loads into vl[b]
 * (NULL for the others). The launcher guarantees the alignment (lanes * dtype size). */
static void load_vectors(Lower *L, LLVMValueRef base, unsigned lanes, LLVMValueRef *vl) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  for (int bi = 0; bi < k->nbuf; bi++) vl[bi] = NULL;
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_LOAD || vl[in->buf]) continue;
    LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
    LLVMValueRef ld = LLVMBuildLoad2(m->b, cg_vec_type(m, st, lanes), cg_elem_ptr(L, in->buf, base), "");
    LLVMSetAlignment(ld, lanes * (unsigned)loom_dtype_size(st));
    vl[in->buf] = ld;
  }
}

/* Folds one point's value v (point pt) into (*acc, *acci): an arg-reduction takes it when strictly
 * better (or a first NaN; points arrive in increasing order per accumulator), others combine. */
void cg_gpu_fold_point(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef *acc, LLVMValueRef *acci, LLVMValueRef v,
                       LLVMValueRef pt) {
  LLVMBuilderRef b = L->m.b;
  if (!is_arg(ph->reduce_op)) {
    *acc = cg_red_combine(L, ph->reduce_op, vt, *acc, v);
    return;
  }
  LLVMValueRef take = cg_arg_better(&L->m, (LoomReduceOp)ph->reduce_op, vt, *acc, v);
  *acc = LLVMBuildSelect(b, take, v, *acc, "");
  *acci = LLVMBuildSelect(b, take, cg_to_i64(L, pt), *acci, "");
}

/* Folds the lanes points of one loaded vector (vl, first point `base`) into acc (and for an
 * arg-reduction the index *acci) in lane order. */
static LLVMValueRef fold_vector(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef acc, LLVMValueRef *acci,
                                LLVMValueRef *vl, LLVMValueRef base, unsigned lanes) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  /* side stores (ir.h): one vector store per vector each (gpu_lower.c builds PARTV only when every
   * stored buffer is contiguous, and the launcher aligned those to lanes * their size: vec_aligned) */
  LLVMValueRef sv[GPU_VEC_MAXBUF];
  int ns = ph->nstores < GPU_VEC_MAXBUF ? ph->nstores : 0;
  for (int s = 0; s < ns; s++)
    sv[s] = LLVMGetUndef(cg_vec_type(m, (LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype, lanes));
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = vl[bi];
  for (unsigned l = 0; l < lanes; l++) {
    LLVMValueRef pt = LLVMBuildAdd(b, base, cg_iconst_i(L, l), "");
    for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = pt;
    L->lin = cg_to_i64(L, pt);
    L->lane = l;
    cg_clear_cache(L);
    if (ns == 0) cg_reduce_point(L, ph); /* (more stores than GPU_VEC_MAXBUF: each at its point) */
    else cg_eval_needed(L, &ph->value, 1);
    for (int s = 0; s < ns; s++) {
      const KStore *kst = &k->stores[ph->store_begin + s];
      LoomDType bt = (LoomDType)k->bufs[kst->buf].dtype;
      cg_eval_needed(L, &kst->value, 1);
      LLVMValueRef v = cg_to_mem(m, (LoomDType)k->instrs[kst->value].dtype, bt, L->cache[kst->value]);
      sv[s] = cg_vec_set(m, bt, sv[s], v, l);
    }
    cg_gpu_fold_point(L, ph, vt, &acc, acci, L->cache[ph->value], pt);
  }
  for (int s = 0; s < ns; s++) {
    const KStore *kst = &k->stores[ph->store_begin + s];
    LoomDType bt = (LoomDType)k->bufs[kst->buf].dtype;
    LLVMSetAlignment(LLVMBuildStore(b, sv[s], cg_elem_ptr(L, kst->buf, base)), lanes * (unsigned)loom_dtype_size(bt));
  }
  cg_clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lin = NULL;
  L->lane = 0;
  return acc;
}

/* One part of the vector PART entry of a 1-d full reduction (every loaded buffer contiguous): the
 * nv = nr / lanes vectors are split into nparts balanced ranges (sizes only); part p's block walks
 * its range with GPU_UNROLL independent accumulators, each fed a whole 16-byte vector per step (all
 * GPU_UNROLL vector loads issued before the adds), the remainder into accumulator 0, and the last
 * part also takes the nr % lanes tail points (one per thread). Accumulators are folded in order
 * 0, 1, ..., then across the block: the bits depend on the sizes and block only. */
/* Vectors a PARTV thread loads per step: GPU_UNROLL, or, when the phase also stores (a side output: every
 * lane's value is kept for the store), as many as keep 32 values: 8 vectors of 8 lanes took 56 registers
 * and half the SM's threads (amp_unscale's any(~isfinite(g * s)) beside g * s, ncu 2026-12-03), 4 of 8 lanes
 * ran 0.153 ms and 8 of 4 lanes (float32 stores: gpu_lower.c narrows the vector) 0.119 against 4 of 4's 0.122
 * (H200, 2026-12-04). LOOM_GPU_PARTV_SIDE_UNROLL fixes the count (A/B timings). */
static int partv_side_unroll_knob(void) {
  static int side = -1;
  return cg_env_int_once(&side, "LOOM_GPU_PARTV_SIDE_UNROLL", 0);
}

static int partv_unroll(const KPhase *ph, unsigned lanes) {
  if (ph->nstores == 0) return GPU_UNROLL;
  int u = partv_side_unroll_knob();
  if (u <= 0) u = 32 / (int)(lanes > 0 ? lanes : 1);
  return u < 1 ? 1 : u > GPU_UNROLL ? GPU_UNROLL : u;
}

void cg_gpu_partv_item(Lower *L, LLVMValueRef part, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[0];
  LLVMBuilderRef b = L->m.b;
  unsigned lanes = (unsigned)e->lanes;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  for (int bi = 0; bi < k->nbuf; bi++) L->ooff[bi] = cg_iconst_i(L, 0);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef nvec = LLVMBuildUDiv(b, e->nr, cg_iconst_i(L, lanes), "");
  LLVMValueRef q = LLVMBuildUDiv(b, nvec, e->nparts, ""), r = LLVMBuildURem(b, nvec, e->nparts, "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
  LLVMValueRef vlo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
  LLVMValueRef vhi = LLVMBuildAdd(b, LLVMBuildAdd(b, vlo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  /* arg-reductions: accumulator 0 starts at the part's first point (an all-identity part gives it),
   * the others empty (cg_gpu_combine's rule); an empty part stays empty */
  bool isarg = is_arg(ph->reduce_op);
  LLVMValueRef accs[GPU_UNROLL], accis[GPU_UNROLL];
  const int unroll = partv_unroll(ph, lanes);
  LLVMValueRef empty = cg_i64(&L->m, GPU_EMPTY_INDEX);
  for (int j = 0; j < unroll; j++) {
    accs[j] = cg_entry_alloca(L, vty, "vacc");
    LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accs[j]);
    accis[j] = cg_entry_alloca(L, L->i64, "vacci");
    LLVMValueRef i0 = empty;
    if (j == 0) {
      LLVMValueRef first = cg_to_i64(L, LLVMBuildMul(b, vlo, cg_iconst_i(L, lanes), ""));
      i0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, vlo, vhi, ""), first, empty, "");
      if (isarg) { /* the last part's tail points (below) may be its only points */
        LLVMValueRef lastp = LLVMBuildICmp(b, LLVMIntEQ, part, LLVMBuildSub(b, e->nparts, cg_iconst_i(L, 1), ""), "");
        LLVMValueRef tail0 = LLVMBuildMul(b, nvec, cg_iconst_i(L, lanes), "");
        LLVMValueRef has_tail = LLVMBuildAnd(b, lastp, LLVMBuildICmp(b, LLVMIntSLT, tail0, e->nr, ""), "");
        i0 = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, i0, empty, ""),
                             LLVMBuildSelect(b, has_tail, cg_to_i64(L, tail0), empty, ""), i0, "");
      }
    }
    LLVMBuildStore(b, i0, accis[j]);
  }
  LLVMValueRef iv = cg_entry_alloca(L, L->ity, "vi");
  LLVMBuildStore(b, LLVMBuildAdd(b, vlo, e->tid, ""), iv);
  LLVMValueRef limit = LLVMBuildSub(b, vhi, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, unroll - 1), ""), "");
  LLVMValueRef vl[GPU_UNROLL][GPU_VEC_MAXBUF];
  /* main loop: `unroll` vectors per thread per step */
  LLVMBasicBlockRef head = cg_new_bb(L, "pv.head"), body = cg_new_bb(L, "pv.body"), exit = cg_new_bb(L, "pv.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef vbase[GPU_UNROLL];
  for (int j = 0; j < unroll; j++) {
    LLVMValueRef v = LLVMBuildAdd(b, i, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, j), ""), "");
    vbase[j] = LLVMBuildMul(b, v, cg_iconst_i(L, lanes), "");
    load_vectors(L, vbase[j], lanes, vl[j]);
  }
  /* side stores (amp_unscale's scaled copy) would let ptxas sink loads 1.. past vector 0's fold */
  if (ph->nstores > 0 && cg_gpu_elemv_tie()) {
    LLVMValueRef zero = LLVMBuildLShr(b, LLVMBuildPtrToInt(b, e->partials, L->i64, ""), cg_i64(&L->m, 63), "");
    tie_loads(L, vl[0], &vl[1], unroll - 1, k->nbuf, zero); /* device addresses < 2^63: 0 */
  }
  for (int j = 0; j < unroll; j++) {
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[j], ""), ai = LLVMBuildLoad2(b, L->i64, accis[j], "");
    LLVMBuildStore(b, fold_vector(L, ph, vt, a, &ai, vl[j], vbase[j], lanes), accs[j]);
    if (isarg) LLVMBuildStore(b, ai, accis[j]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, unroll), ""), ""), iv);
  LLVMBuildBr(b, head);
  /* remainder: one vector per step into accumulator 0 */
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBasicBlockRef rhead = cg_new_bb(L, "pv.rhead"), rbody = cg_new_bb(L, "pv.rbody"), rexit = cg_new_bb(L, "pv.rexit");
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rhead);
  i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, vhi, ""), rbody, rexit);
  LLVMPositionBuilderAtEnd(b, rbody);
  LLVMValueRef base = LLVMBuildMul(b, i, cg_iconst_i(L, lanes), "");
  load_vectors(L, base, lanes, vl[0]);
  {
    LLVMValueRef ai = LLVMBuildLoad2(b, L->i64, accis[0], "");
    LLVMBuildStore(b, fold_vector(L, ph, vt, LLVMBuildLoad2(b, vty, accs[0], ""), &ai, vl[0], base, lanes), accs[0]);
    if (isarg) LLVMBuildStore(b, ai, accis[0]);
  }
  LLVMBuildStore(b, LLVMBuildAdd(b, i, e->bdim, ""), iv);
  LLVMBuildBr(b, rhead);
  LLVMPositionBuilderAtEnd(b, rexit);
  /* the tail points (nr % lanes < lanes <= blockDim): the last part, one per thread */
  LLVMValueRef t = LLVMBuildAdd(b, LLVMBuildMul(b, nvec, cg_iconst_i(L, lanes), ""), e->tid, "");
  LLVMValueRef last = LLVMBuildICmp(b, LLVMIntEQ, part, LLVMBuildSub(b, e->nparts, cg_iconst_i(L, 1), ""), "");
  LLVMValueRef take = LLVMBuildAnd(b, last, LLVMBuildICmp(b, LLVMIntSLT, t, e->nr, ""), "");
  LLVMBasicBlockRef tyes = cg_new_bb(L, "pv.tail"), tafter = cg_new_bb(L, "pv.tail.after");
  LLVMBuildCondBr(b, take, tyes, tafter);
  LLVMPositionBuilderAtEnd(b, tyes);
  for (int bi = 0; bi < k->nbuf; bi++) L->off[bi] = t;
  L->lin = cg_to_i64(L, t);
  cg_clear_cache(L);
  cg_reduce_point(L, ph);
  {
    LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = LLVMBuildLoad2(b, L->i64, accis[0], "");
    cg_gpu_fold_point(L, ph, vt, &a, &ai, L->cache[ph->value], t);
    LLVMBuildStore(b, a, accs[0]);
    if (isarg) LLVMBuildStore(b, ai, accis[0]);
  }
  cg_clear_cache(L);
  L->lin = NULL;
  LLVMBuildBr(b, tafter);
  LLVMPositionBuilderAtEnd(b, tafter);
  LLVMValueRef a = LLVMBuildLoad2(b, vty, accs[0], ""), ai = LLVMBuildLoad2(b, L->i64, accis[0], "");
  for (int j = 1; j < unroll; j++)
    cg_gpu_combine(L, ph, vt, &a, &ai, LLVMBuildLoad2(b, vty, accs[j], ""), isarg ? LLVMBuildLoad2(b, L->i64, accis[j], "") : ai, true);
  L->acc[0] = a;
  L->accidx[0] = ai;
  cg_gpu_block_reduce(L, 0);
  LLVMBasicBlockRef t0 = cg_new_bb(L, "pv.write"), after = cg_new_bb(L, "pv.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, cg_iconst_i(L, 0), ""), t0, after);
  LLVMPositionBuilderAtEnd(b, t0);
  cg_store_partial(L, cg_partial_ptr(L, e->partials, part, e->acc_size));
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
}
