/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_lower.c: the GPU loop structure of the lowering (cg_lower_gpu, cg_gpu.h), written once for every
 * GPU target against its hooks (CgGpuHooks: launch indices, wave shuffles, barriers, kernel marking,
 * address spaces). This file holds the building blocks (grid-stride loops, point offsets) and the
 * entries' construction; gpu_block_reduce.c the per-thread reduction loops, the block and group
 * reductions and partial accumulators; gpu_strategies.c the bodies of each entry kind.
 *
 * Grid-stride loops decompose their point index into offsets (index type i32 when the kernel's
 * index_bits is 32). Every entry takes one parameter, a block of 8-byte words passed by value
 * (codegen.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* ---- loops and indices ---------------------------------------------------------------------------- */

/* An index of the launch (CgGpuIndex) in the index type. */
LLVMValueRef cg_gpu_index(Lower *L, CgGpuIndex which) {
  LLVMValueRef v = L->m.gpu->index(&L->m, which);
  return L->ity == LLVMInt32TypeInContext(L->m.c) ? v : LLVMBuildZExt(L->m.b, v, L->ity, "");
}

LLVMValueRef cg_iconst_i(Lower *L, int64_t v) { return LLVMConstInt(L->ity, (unsigned long long)v, 1); }

LLVMValueRef cg_to_i64(Lower *L, LLVMValueRef v) {
  return L->ity == L->i64 ? v : LLVMBuildSExt(L->m.b, v, L->i64, "");
}

/* for (i = start; i < end; i += step) body(i)  (signed compare in the index type) */
void cg_gpu_for(Lower *L, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, IdxBody body, void *arg) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef iv = cg_entry_alloca(L, L->ity, "i");
  LLVMBuildStore(b, start, iv);
  LLVMBasicBlockRef head = cg_new_bb(L, "for.head"), bb = cg_new_bb(L, "for.body"), exit = cg_new_bb(L, "for.exit");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, end, ""), bb, exit);
  LLVMPositionBuilderAtEnd(b, bb);
  body(L, i, arg);
  LLVMBuildStore(b, LLVMBuildAdd(b, i, step, ""), iv);
  LLVMValueRef back = LLVMBuildBr(b, head);
  if (L->gpu_loops_rolled) { /* a loop of few iterations kept small (gpu_stage.c) */
    LLVMMetadataRef off = LLVMMDNodeInContext2(L->m.c, (LLVMMetadataRef[]){LLVMMDStringInContext2(L->m.c, "llvm.loop.unroll.disable", 24)}, 1);
    cg_loop_properties(L, back, &off, 1);
  }
  LLVMPositionBuilderAtEnd(b, exit);
}

/* ---- division by a shape without a division instruction --------------------------------------------- */

/* Unsigned division of 0 <= n < 2^31 by an invariant 1 <= s < 2^31 (Granlund and Montgomery's
 * round-up method): with l = ceil(log2 s) and m = floor(2^32 (2^l - s) / s) + 1 (< 2^32),
 * n / s = (mulhi(n, m) + n) >> l; the sum stays below 2^32 since mulhi(n, m) <= n. m is made once per
 * thread, in the entry's prologue; each point then costs a multiply-high, an add and a shift instead of a
 * ~20-instruction division (bn2d_stats-style reductions over several R dims divide every point's index).
 * A zero shape gets the magic of 1 (no point uses it).
 * The quotient q = floor(num / s), num = (2^l - s) 2^32 < 2^63, is a float64 division corrected by one
 * step: num (31 significant bits) and s are exact doubles and q < 2^32, so the rounded quotient's
 * truncation is q or q + 1, and num - q' s < 0 tells which. A 64-bit integer division is a ~70-instruction
 * subroutine on NVIDIA GPUs, paid by every thread: with threads of a few points (a row of 3 each: a
 * pairwise distance's) it was about a third of the kernel. LOOM_GPU_MAGIC_DIV=2: the integer division
 * (A/B timings; the same m). */
bool cg_gpu_magic_by_double(void) {
  static int v = -1;
  return cg_env_int_once(&v, "LOOM_GPU_MAGIC_DIV", 1) != 2;
}

static LLVMValueRef magic_quotient(Lower *L, LLVMValueRef num, LLVMValueRef s64) {
  LLVMBuilderRef b = L->m.b;
  if (!cg_gpu_magic_by_double()) return LLVMBuildUDiv(b, num, s64, "");
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(L->m.c);
  LLVMValueRef qd = LLVMBuildFDiv(b, LLVMBuildUIToFP(b, num, f64, ""), LLVMBuildUIToFP(b, s64, f64, ""), "");
  LLVMValueRef q = LLVMBuildFPToUI(b, qd, L->i64, "");
  LLVMValueRef r = LLVMBuildSub(b, num, LLVMBuildMul(b, q, s64, ""), "");
  LLVMValueRef over = LLVMBuildICmp(b, LLVMIntSLT, r, cg_i64(&L->m, 0), "");
  return LLVMBuildSub(b, q, LLVMBuildZExt(b, over, L->i64, ""), "");
}

static void gpu_magic_init(Lower *L, int d) {
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(L->m.c);
  LLVMValueRef one = LLVMConstInt(i32, 1, 0);
  LLVMValueRef s = L->shape[d];
  s = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, s, one, ""), s, one, "");
  LLVMTypeRef t1 = i32;
  LLVMValueRef ctlz_args[2] = {LLVMBuildSub(b, s, one, ""), LLVMConstInt(LLVMInt1TypeInContext(L->m.c), 0, 0)};
  LLVMValueRef lz = cg_intrinsic(&L->m, "llvm.ctlz", &t1, 1, ctlz_args, 2);
  LLVMValueRef l = LLVMBuildSub(b, LLVMConstInt(i32, 32, 0), lz, "mshift");
  LLVMValueRef diff = LLVMBuildSub(b, LLVMBuildShl(b, one, l, ""), s, ""); /* 2^l - s < s */
  LLVMValueRef num = LLVMBuildShl(b, LLVMBuildZExt(b, diff, L->i64, ""), cg_i64(&L->m, 32), "");
  LLVMValueRef m = LLVMBuildAdd(b, magic_quotient(L, num, LLVMBuildZExt(b, s, L->i64, "")), cg_i64(&L->m, 1), "");
  L->gpu_magic[d] = LLVMBuildTrunc(b, m, i32, "magic");
  L->gpu_mshift[d] = l;
}

LLVMValueRef cg_gpu_divmod(Lower *L, LLVMValueRef n, int d, LLVMValueRef *rem) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef q;
  if (L->gpu_magic[d] && LLVMTypeOf(n) == LLVMTypeOf(L->gpu_magic[d])) {
    LLVMValueRef hi;
    if (L->m.gpu->mulhi_u32) {
      hi = L->m.gpu->mulhi_u32(&L->m, n, L->gpu_magic[d]);
    } else {
      LLVMValueRef wide = LLVMBuildMul(b, LLVMBuildZExt(b, n, L->i64, ""), LLVMBuildZExt(b, L->gpu_magic[d], L->i64, ""), "");
      hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, wide, cg_i64(&L->m, 32), ""), LLVMTypeOf(n), "");
    }
    q = LLVMBuildLShr(b, LLVMBuildAdd(b, hi, n, ""), L->gpu_mshift[d], "");
  } else {
    q = LLVMBuildUDiv(b, n, L->shape[d], "");
  }
  if (rem) *rem = LLVMBuildSub(b, n, LLVMBuildMul(b, q, L->shape[d], ""), "");
  return q;
}

/* out[b] = base[b] + sum over dims [d0, d1) of index(lin)[d] * stride[b][d] (lin row-major); in_range: lin is a
 * point of the launch (and base its O point's offsets), so no partial sum wraps (passes/lower.c picks 32-bit
 * indices only where every |offset| + sum (extent - 1) |stride| fits) and the arithmetic is nsw: LLVM then
 * folds a walk's constant steps into the loads' addresses instead of widening each offset. */
static void gpu_offsets(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out,
                        bool in_range) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef idx[LOOM_MAX_RANK];
  LLVMValueRef rem = lin;
  for (int d = d1 - 1; d >= d0; d--) {
    if (d > d0) {
      rem = cg_gpu_divmod(L, rem, d, &idx[d]);
    } else {
      idx[d] = rem;
    }
  }
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef v = base ? base[bi] : cg_iconst_i(L, 0);
    for (int d = d0; d < d1; d++) {
      LLVMValueRef s = L->stride[bi * k->ndim + d];
      v = in_range ? LLVMBuildNSWAdd(b, v, LLVMBuildNSWMul(b, idx[d], s, ""), "") : LLVMBuildAdd(b, v, LLVMBuildMul(b, idx[d], s, ""), "");
    }
    out[bi] = v;
  }
}

void cg_gpu_offsets(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out) {
  gpu_offsets(L, lin, d0, d1, base, out, false);
}

/* LOOM_GPU_WALK_NSW=0: the COL walks' offsets without nsw (A/B timings; " nsw0" in the target's description). */
bool cg_gpu_walk_nsw(void) {
  static int v = -1;
  return cg_env_int_once(&v, "LOOM_GPU_WALK_NSW", 1) != 0;
}

void cg_gpu_offsets_in(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out) {
  gpu_offsets(L, lin, d0, d1, base, out, L->walk_nsw);
}

/* ---- entries ------------------------------------------------------------------------------------------ */

/* Parameter p's launch word: word ndim + nbuf + nbuf * ndim + CG_GPU_EXTRA + p of the block at *args. */
static LLVMValueRef gpu_param_word(Lower *L, int p, void *args) {
  const KernelIr *k = L->k;
  LLVMValueRef ix = cg_i64(&L->m, k->ndim + k->nbuf + k->nbuf * k->ndim + CG_GPU_EXTRA + p);
  return LLVMBuildLoad2(L->m.b, L->i64, LLVMBuildGEP2(L->m.b, L->i64, *(LLVMValueRef *)args, &ix, 1, ""), "");
}

/* LOOM_GPU_MAGIC_DIV=0 compiles plain divisions (A/B timings; kernels compiled under it should not be
 * kept: LOOM_DISK_CACHE applies as usual); =2 makes the magic numbers by integer division. */
static bool gpu_magic_off(void) {
  const char *s = getenv("LOOM_GPU_MAGIC_DIV");
  return s && s[0] == '0' && s[1] == 0;
}

static void build_gpu_entry(Lower *L, int which, bool row, const char *name, int nwords, int lanes, int acc_size) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMContextRef c = m->c;
  int nb = k->nbuf, nd = k->ndim;
  LLVMTypeRef words_t = LLVMArrayType2(L->i64, (uint64_t)nwords);
  const CgGpuHooks *h = m->gpu;
  LLVMTypeRef pptr = LLVMPointerTypeInContext(c, h->as_param), gptr = LLVMPointerTypeInContext(c, h->as_global);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(c), &pptr, 1, 0);
  LLVMValueRef fn = LLVMAddFunction(m->m, name, fty);
  unsigned pass = LLVMGetEnumAttributeKindForName(h->param_attr, strlen(h->param_attr));
  LLVMAddAttributeAtIndex(fn, 1, LLVMCreateTypeAttribute(c, pass, words_t));
  unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMAddAttributeAtIndex(fn, 1, LLVMCreateEnumAttribute(c, align, 8));
  cg_add_fn_attrs(L, fn, NULL, 0);
  /* launches pick blocks of up to 1024 threads; the vector cached-row entry of a kernel that loads buffers
   * beside the row (LayerNorm's weight and bias, cross-entropy's labels) fits its registers to 1024 threads
   * (cg_gpu_rowc_fit; its scalar twin would spill) */
  h->mark_kernel(m, fn, 1024, which == GPU_CACHED && lanes > 1 && cg_gpu_rowc_fit(L));
  L->fn = fn;
  L->alloca_bb = LLVMAppendBasicBlockInContext(c, fn, "allocas");
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c, fn, "start");
  LLVMPositionBuilderAtEnd(b, start);
  LLVMValueRef args = LLVMGetParam(fn, 0);
  bool i32 = L->ity != L->i64;
#define WORD(i) LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, args, (LLVMValueRef[]){cg_i64(m, (i))}, 1, ""), "")
#define IDX(v) (i32 ? LLVMBuildTrunc(b, (v), L->ity, "") : (v))
  for (int d = 0; d < nd; d++) {
    L->shape[d] = k->row_extent && d == nd - 1 ? cg_iconst_i(L, k->row_extent) : IDX(WORD(d)); /* (cg_gpu_row_extent) */
    L->gpu_magic[d] = L->gpu_mshift[d] = NULL;
    if (i32 && !gpu_magic_off()) gpu_magic_init(L, d); /* unused ones are dead code */
  }
  for (int bi = 0; bi < nb; bi++) {
    L->base[bi] = LLVMBuildIntToPtr(b, WORD(nd + bi), gptr, "");
    for (int d = 0; d < nd; d++) {
      int64_t cs;
      L->stride[bi * nd + d] = ir_layout_const(k->bufs[bi].layout[d], &cs) ? cg_iconst_i(L, cs) : IDX(WORD(nd + nb + bi * nd + d));
    }
  }
  int extra = nd + nb + nb * nd;
  GpuEntry e = {.which = which, .row = row, .acc_size = acc_size, .lanes = lanes};
  e.no = cg_iconst_i(L, 1);
  for (int d = 0; d < k->nkeep; d++) e.no = LLVMBuildMul(b, e.no, L->shape[d], "");
  e.nr = cg_iconst_i(L, 1);
  for (int d = k->nkeep; d < nd; d++) e.nr = LLVMBuildMul(b, e.nr, L->shape[d], "");
  L->rsize = cg_to_i64(L, e.nr);
  cg_load_params(L, gpu_param_word, &args);
  e.nparts = IDX(WORD(extra));
  e.partials = LLVMBuildIntToPtr(b, WORD(extra + 1), gptr, "");
  e.phased = (which == GPU_PART || which == GPU_FINISH || which == GPU_FINISHB) && cg_gpu_phase_split(k, NULL, NULL);
  /* one-pass variance: the entries that walk R for phase 0 (or fold its parts) gather the moments */
  L->mom_on = L->mom.n > 0 && (which == GPU_MAIN || e.phased);
  /* online max: likewise (the cached row reads its row once: it keeps both walks) */
  L->onl_on = L->onl.phase > 0 && (which == GPU_MAIN || e.phased);
  /* joined phases: likewise (gpu_joint.c) */
  L->join_on = L->join.n > 0 && (which == GPU_MAIN || e.phased);
  /* arg-reductions fold the waves by a tree in wave 0 (cg_gpu_block_reduce); the cached entry keeps the
   * serial fold (its short-row mode shares the registers: the tree cost it ~30 more) */
  L->arg_tree = which != GPU_CACHED;
  /* nsw walk offsets in COL entries (a thread a column or a short row): LLVM folds the unrolled points'
   * constant steps into the loads' addresses (H100: var_mid_3d 0.240 -> 0.184 ms, rank_count 0.187 -> 0.129).
   * Not in ROW entries: their PTX barely changed, yet sum_rows_int8 ran 0.084 -> 0.138 ms (SASS unseen). */
  L->walk_nsw = !row && cg_gpu_walk_nsw();
  if (e.phased) { /* the phase: word 2 (a COL part's: its low byte, the fold above it: gpu_colfold.c) */
    e.phase = WORD(extra + 2);
    if (which == GPU_PART && !row) e.phase = LLVMBuildAnd(b, e.phase, cg_i64(m, 255), "");
    e.fin = LLVMBuildIntToPtr(b, WORD(extra + 3), gptr, "");
  }
  /* short-row mode: g lanes a row (the low 16 bits), CG_GPU_STAGE: staged (gpu_stage.c) */
  LLVMValueRef word2c = which == GPU_CACHED ? WORD(extra + 2) : NULL;
  LLVMValueRef group = word2c ? IDX(LLVMBuildAnd(b, word2c, cg_i64(m, CG_GPU_STAGE - 1), "")) : NULL;
  LLVMValueRef staged = word2c ? LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, word2c, cg_i64(m, CG_GPU_STAGE), ""), cg_i64(m, 0), "") : NULL;
  LLVMValueRef word2 = which == GPU_PART && !row ? WORD(extra + 2) : NULL; /* the COL part's fold */
  /* a COL scan of short row-major rows (walk_cols; cache_k set, gpu_stage.c): CG_GPU_STAGE in word 2 */
  uint64_t stage_scan = which == GPU_MAIN && !row && L->cache_k > 0 && k->phases[0].kind == KP_SCAN ? cg_gpu_stage_bufs(L) : 0;
  LLVMValueRef staged_scan = stage_scan ? LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, WORD(extra + 2), cg_i64(m, CG_GPU_STAGE), ""),
                                                        cg_i64(m, 0), "") : NULL;
#undef WORD
#undef IDX
  e.tid = cg_gpu_index(L, CG_GPU_THREAD_ID);
  e.bdim = cg_gpu_index(L, CG_GPU_BLOCK_DIM);
  LLVMValueRef bid = cg_gpu_index(L, CG_GPU_BLOCK_ID);
  LLVMValueRef nbk = cg_gpu_index(L, CG_GPU_GRID_DIM);
  LLVMValueRef gtid = LLVMBuildAdd(b, LLVMBuildMul(b, bid, e.bdim, ""), e.tid, "");
  LLVMValueRef gstride = LLVMBuildMul(b, nbk, e.bdim, "");
  L->depth = 0;
  L->off = L->levels;
  for (int bi = 0; bi < nb; bi++) L->ooff[bi] = cg_iconst_i(L, 0);
  if (which == GPU_ELEM) {
    LLVMValueRef n = LLVMBuildMul(b, e.no, e.nr, "");
    uint8_t tiled[64];
    int tdim = cg_gpu_tile_dim(k, tiled);
    cg_worker_begin(L); /* a GPU worker is one thread (it may get no point) */
    if (tdim >= 0) cg_gpu_elem_tiled(L, &e, tdim, tiled, bid, nbk, gtid, gstride); /* transposed reads */
    else {
      CgElemPoints pts = {.count = cg_gpu_elem_points_of(k), .stride = gstride, .n = n};
      if (pts.count > 1)
        cg_gpu_for(L, gtid, n, LLVMBuildMul(b, gstride, cg_iconst_i(L, pts.count), ""), cg_gpu_elem_points, &pts);
      else cg_gpu_for(L, gtid, n, gstride, cg_gpu_elem_point, NULL);
    }
    cg_worker_end(L);
  } else if (which == GPU_ELEMV || which == GPU_ELEMVW || which == GPU_ELEMF) {
    LLVMValueRef n = e.no; /* every point (all dims are O dims) */
    LLVMValueRef nvec = LLVMBuildUDiv(b, n, cg_iconst_i(L, lanes), "");
    cg_worker_begin(L); /* one worker per thread across its vectors and its tail point */
    /* extra word 1 is 0 for elementwise launches (rt_gpu_launch_policy): the load ties' runtime zero */
    CgElemPair pair = {.lanes = (unsigned)lanes, .stride = gstride, .nvec = nvec,
                       .zero = cg_gpu_elemv_tie_kernel(k, (unsigned)lanes) ? LLVMBuildPtrToInt(b, e.partials, L->i64, "") : NULL,
                       .flat = which == GPU_ELEMF};
    cg_gpu_for(L, gtid, nvec, LLVMBuildMul(b, gstride, cg_iconst_i(L, 2), ""), cg_gpu_elemv_pair, &pair);
    if (which != GPU_ELEMVW) { /* the tail: one point per thread (vecw: the launcher ensures none) */
      LLVMValueRef tail = LLVMBuildAdd(b, LLVMBuildMul(b, nvec, cg_iconst_i(L, lanes), ""), gtid, "");
      cg_gpu_for(L, tail, n, gstride, cg_gpu_elem_point, NULL);
    }
    cg_worker_end(L);
  } else if (which == GPU_CACHED) { /* block mode, short-row groups, staged tiles (gpu_cached.c) */
    cg_gpu_cached_rows(L, &e, group, staged, bid, nbk);
  } else if (which == GPU_ROWF) { /* short packed rows as flat vectors (gpu_rowflat.c) */
    cg_gpu_rowflat(L, &e, bid, nbk);
  } else if (which == GPU_PARTV) {
    cg_gpu_for(L, bid, e.nparts, nbk, k->nkeep ? cg_gpu_colv_item : cg_gpu_partv_item, &e); /* (gpu_colv.c) */
  } else {
    bool scan_part = which == GPU_FINISHB && k->phases[0].kind == KP_SCAN; /* a part of a split scan */
    LLVMValueRef count = which == GPU_PART || scan_part ? LLVMBuildMul(b, e.no, e.nparts, "") : e.no;
    if (row && which != GPU_FINISH) cg_gpu_for(L, bid, count, nbk, cg_gpu_red_item, &e);
    else if (which == GPU_PART) {
      LLVMBasicBlockRef flat = cg_gpu_map_flat(L, &e, gtid, gstride); /* MAP phases (gpu_phases.c) */
      cg_gpu_col_part(L, &e, word2, gtid, gstride, bid, nbk);           /* gpu_colfold.c */
      if (flat) {
        LLVMBuildBr(b, flat);
        LLVMPositionBuilderAtEnd(b, flat);
      }
    }
    else if (staged_scan) { /* tiles of rows through shared memory where the launcher asks (gpu_stage.c) */
      LLVMBasicBlockRef st = cg_new_bb(L, "scan.staged"), plain = cg_new_bb(L, "scan.plain"), done = cg_new_bb(L, "scan.done");
      LLVMBuildCondBr(b, staged_scan, st, plain);
      LLVMPositionBuilderAtEnd(b, st);
      cg_gpu_stage_rows(L, &e, stage_scan, bid, nbk);
      LLVMBuildBr(b, done);
      LLVMPositionBuilderAtEnd(b, plain);
      cg_gpu_for(L, gtid, count, gstride, cg_gpu_red_item, &e);
      LLVMBuildBr(b, done);
      LLVMPositionBuilderAtEnd(b, done);
    } else cg_gpu_for(L, gtid, count, gstride, cg_gpu_red_item, &e);
  }
  LLVMBuildRetVoid(b);
  L->mom_on = false;
  L->onl_on = false;
  L->join_on = false;
  LLVMPositionBuilderAtEnd(L->ab, L->alloca_bb);
  LLVMBuildBr(L->ab, start);
}

int cg_gpu_vec_lanes(const KernelIr *k) {
  /* elementwise, every buffer contiguous (KL_ONE) or broadcast (KL_ZERO) along the last dim, every
   * stored one contiguous, at most 64 buffers and stores (a user kernel that reads the point index `i`
   * needs the scalar entry's per-point index). Other dims may have any layout: a vector never
   * crosses a row (the launcher's condition for n-d kernels) */
  if (!k || k->nkeep != k->ndim || k->ndim < 1 || k->nstore > 64 || k->nbuf <= 0 || k->nbuf > 64) return 0;
  int last = k->ndim - 1;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_INDEX) return 0;
  for (int s = 0; s < k->nstore; s++)
    if (k->bufs[k->stores[s].buf].layout[last] != KL_ONE) return 0;
  int maxsize = 1;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (k->bufs[bi].layout[last] != KL_ONE && k->bufs[bi].layout[last] != KL_ZERO) return 0;
    bool index_buf = false; /* no memory (KI_OFFSET): not in the vector's width */
    for (int i = 0; i < k->ninstr && !index_buf; i++) index_buf = k->instrs[i].kind == KI_OFFSET && k->instrs[i].buf == bi;
    if (index_buf) continue;
    int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    if (sz > maxsize) maxsize = sz;
  }
  return 16 / maxsize >= 2 ? 16 / maxsize : 0;
}

/* flatv (codegen.h): buffer bi is contiguous along the last dim and broadcast along none: a vector of the
 * flat index when the launcher finds it C-contiguous (index buffers, no memory, are not). */
bool cg_gpu_flat_vec_buf(const KernelIr *k, int bi) {
  if (k->ndim < 2 || k->bufs[bi].layout[k->ndim - 1] != KL_ONE) return false;
  for (int d = 0; d < k->ndim - 1; d++)
    if (k->bufs[bi].layout[d] == KL_ZERO) return false;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_OFFSET && k->instrs[i].buf == bi) return false;
  return true;
}

/* flatv's lanes: those of `vec` for an n-d elementwise kernel whose stores are all vectors of the flat
 * index and, for 2-d kernels, that reads at least one such vector (else the scalar entry serves as well).
 * Kernels of 3 or more dims take it for the stores alone: their scalar entry divides twice a point
 * (outer-product broadcasts of odd widths: Gaussian heatmaps (K, H, W) from per-axis operands), flatv once
 * a vector. LOOM_GPU_FLAT_ND=0: 2-d kernels only (A/B timings; part of the elementwise tag). */
bool cg_gpu_flat_nd(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_FLAT_ND", 1) != 0;
}

int cg_gpu_flat_lanes(const KernelIr *k) {
  int lanes = cg_gpu_vec_lanes(k);
  if (lanes <= 0 || k->ndim < 2 || (k->ndim > 2 && !cg_gpu_flat_nd())) return 0;
  for (int s = 0; s < k->nstore; s++)
    if (!cg_gpu_flat_vec_buf(k, k->stores[s].buf)) return 0;
  if (k->ndim > 2 && k->nstore > 0) return lanes;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_LOAD && cg_gpu_flat_vec_buf(k, k->instrs[i].buf)) return lanes;
  return 0;
}

/* ROW or COL for a reduction: COL when the REDUCE values read some buffer contiguously along the
 * last O dim and none contiguously along the innermost R dim (the host's use_outer test, MAP phases
 * allowed: a thread then walks R serially for them too), or when the launch's strides asked for it
 * (KernelIr.walk_cols). */
static bool gpu_use_col(const KernelIr *k, uint8_t *need) { return cg_reduce_reads_outer(k, need, true) || k->walk_cols; }

/* A COL thread's walk down its column (`main`, a one-phase split's `part`) folds GPU_UNROLL rows at once,
 * their loads in flight, as the phase split's parts do (H100, session 38: any_cols_bool 0.275 -> 0.068 ms,
 * var_mid_3d 0.47 -> 0.24; no guard slower); LOOM_GPU_COL_UNROLL=0: a row at a time. Read per kernel
 * compiled: time each setting with its own LOOM_CACHE_DIR (A/B timings). */
static bool col_unroll_knob(void) {
  const char *s = getenv("LOOM_GPU_COL_UNROLL");
  return !(s && strcmp(s, "0") == 0);
}

/* Unrolling pays only where some load moves along the reduced dims (a virtual reduced dim of extent 1,
 * every load KL_ZERO there, would fold the unrolled copies into extra loads of one address). */
static bool col_unroll(const KernelIr *k) {
  if (!col_unroll_knob()) return false;
  for (int i = 0; i < k->ninstr; i++) {
    if (k->instrs[i].kind != KI_LOAD) continue;
    for (int d = k->nkeep; d < k->ndim; d++)
      if (k->bufs[k->instrs[i].buf].layout[d] != KL_ZERO) return true;
  }
  return false;
}

LoomStatus cg_lower_gpu(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k, const char *prefix,
                        const CgGpuHooks *h, int block, CgGpuKernel *out, Diag *d) {
  if (!k || !out || !prefix || !h) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: null kernel");
  LoomStatus st = cg_check_kernel(k, d);
  if (st != LOOM_OK) return st;
  if (block < h->wave || block > 1024 || block % h->wave)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: GPU block size %d is not a multiple of %d in [%d, 1024]",
                      block, h->wave, h->wave);
  memset(out, 0, sizeof *out);
  bool red = k->nkeep < k->ndim;
  if (!red && k->nphase != 1)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: elementwise kernel '%s' has %d phases", k->name, k->nphase);
  Lower L;
  bool allocated = cg_lower_init(&L, ctx, c, mod, k, d);
  L.m.gpu = h;
  L.ity = k->index_bits == 32 ? LLVMInt32TypeInContext(c) : L.i64;
  cg_gpu_onepass_plan(k, &L.mom); /* gpu_moments.c; no plan: every phase walks R itself */
  cg_gpu_online_plan(k, &L.onl);   /* gpu_online_max.c: a softmax's sum in its max's walk */
  cg_gpu_join_plan(k, &L.join);    /* gpu_joint.c: independent reductions in phase 0's walk */
  int nwords = k->ndim + k->nbuf + k->nbuf * k->ndim + CG_GPU_EXTRA + k->nparam;
  out->nwords = nwords;
  out->block = block;
  out->wave = h->wave;
  if (!allocated) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering kernel '%s'", k->name);
  } else if (cg_snippet_lower(ctx, &L.m, k, &L.sn, d) != LOOM_OK) {
    st = d->status;
  } else if (!red) {
    out->strategy = CG_GPU_ELEMENTWISE;
    snprintf(out->main, sizeof out->main, "%s_elem", prefix);
    build_gpu_entry(&L, GPU_ELEM, false, out->main, nwords, 0, 0);
    int lanes = cg_gpu_vec_lanes(k);
    if (lanes > 0) {
      out->vec_lanes = lanes;
      out->vec_align = 0;
      for (int bi = 0; bi < k->nbuf; bi++) {
        bool index_buf = false; /* an index buffer's word is its offset * 8: aligned when the offset is */
        for (int i = 0; i < k->ninstr && !index_buf; i++) index_buf = k->instrs[i].kind == KI_OFFSET && k->instrs[i].buf == bi;
        int a = lanes * (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype) / (index_buf ? 8 : 1);
        if (a > out->vec_align) out->vec_align = a;
      }
      snprintf(out->vec, sizeof out->vec, "%s_vec", prefix);
      build_gpu_entry(&L, GPU_ELEMV, false, out->vec, nwords, lanes, 0);
      snprintf(out->vecw, sizeof out->vecw, "%s_vecw", prefix);
      build_gpu_entry(&L, GPU_ELEMVW, false, out->vecw, nwords, lanes, 0);
      if (cg_gpu_flat_lanes(k) == lanes) {
        snprintf(out->flatv, sizeof out->flatv, "%s_flatv", prefix);
        build_gpu_entry(&L, GPU_ELEMF, false, out->flatv, nwords, lanes, 0);
      }
    }
  } else {
    bool col = gpu_use_col(k, L.need);
    out->strategy = col ? CG_GPU_COL : CG_GPU_ROW;
    bool split = k->phases[0].kind == KP_REDUCE && (k->nphase == 1 || (k->nphase == 2 && k->phases[1].kind == KP_FINAL));
    /* long rows, or few columns: part folds, then part scans (lower_scan.c) */
    bool scan_split = k->phases[0].kind == KP_SCAN;
    bool phase_split = cg_gpu_phase_split(k, &out->split_reduce, &out->split_map); /* gpu_phases.c */
    out->acc_size = split || scan_split ? cg_acc_size(cg_red_value_dtype(k, &k->phases[0]), k->phases[0].reduce_op) : 0;
    if (phase_split) out->acc_size = cg_gpu_phase_acc_size(k);
    snprintf(out->main, sizeof out->main, "%s_%s", prefix, col ? "col" : "row");
    /* (a constant short row, cg_gpu_row_extent: LLVM unrolls its walk whole, no accumulators to fold) */
    L.unroll_red = (!col || col_unroll(k)) && !k->row_extent;
    /* a scan walked a thread a row (walk_cols over short rows: cg_gpu_walk_cols) whose buffers lie row after
     * row: `main` can also stage tiles of cache_k points a thread through shared memory (gpu_stage.c),
     * so that its loads and stores are coalesced; out->cache_k tells the launcher (scan()) */
    if (col && k->walk_cols && scan_split && k->nphase == 1) {
      int widest = 1; /* tiles of 128 bytes a thread of the widest buffer: rows of up to 16 float64, 32 float32 */
      for (int bi = 0; bi < k->nbuf; bi++) {
        int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
        if (sz > widest) widest = sz;
      }
      int ck = 128 / widest;
      L.cache_k = ck < GPU_CACHE_K ? GPU_CACHE_K : ck > GPU_CACHE_K_MAX ? GPU_CACHE_K_MAX : ck;
      if (!cg_gpu_stage_bufs(&L)) L.cache_k = GPU_CACHE_K;
      if (!cg_gpu_stage_bufs(&L)) L.cache_k = 0;
      out->cache_k = L.cache_k;
    }
    build_gpu_entry(&L, GPU_MAIN, !col, out->main, nwords, 0, 0);
    L.cache_k = 0;
    if (scan_split) {
      snprintf(out->part, sizeof out->part, "%s_part", prefix);
      L.unroll_red = true; /* COL: a thread's column, GPU_UNROLL loads in flight */
      build_gpu_entry(&L, GPU_PART, !col, out->part, nwords, 0, out->acc_size);
      L.unroll_red = false;
      snprintf(out->finishb, sizeof out->finishb, "%s_scanp", prefix);
      build_gpu_entry(&L, GPU_FINISHB, !col, out->finishb, nwords, 0, out->acc_size);
    }
    if (split || phase_split) {
      L.unroll_red = !col || phase_split || col_unroll(k); /* phase split: COL parts too (few columns: 8 loads in flight) */
      snprintf(out->part, sizeof out->part, "%s_part", prefix);
      snprintf(out->finish, sizeof out->finish, "%s_finish", prefix);
      build_gpu_entry(&L, GPU_PART, !col, out->part, nwords, 0, out->acc_size);
      L.unroll_red = false;
      build_gpu_entry(&L, GPU_FINISH, false, out->finish, nwords, 0, out->acc_size);
      snprintf(out->finishb, sizeof out->finishb, "%s_finishb", prefix);
      build_gpu_entry(&L, GPU_FINISHB, true, out->finishb, nwords, 0, out->acc_size);
    }
    L.unroll_red = false;
    /* the cached ROW entry: worth it when R is walked more than once (several REDUCE/MAP phases)
     * and few buffers are loaded (cache_k registers each) */
    int walks = 0, nloaded = 0, maxsz = 1; /* maxsz: the widest loaded dtype's bytes */
    for (int p = 0; p < k->nphase; p++) walks += k->phases[p].kind == KP_REDUCE || k->phases[p].kind == KP_MAP;
    for (int bi = 0; bi < k->nbuf; bi++) {
      bool loaded = false;
      for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
      nloaded += loaded;
      int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
      if (loaded && sz > maxsz) maxsz = sz;
    }
    /* vector entries need every loaded buffer contiguous along the (last) R dim: lanes points of
     * the widest loaded dtype per 16-byte load */
    /* cvlanes, the cached vector entry's: buffers constant along R (KL_ZERO: cross-entropy's labels, a
     * per-row scale) are loaded once per row as a scalar (gpu_strategies.c), so they neither stop it nor
     * narrow its vectors. LOOM_GPU_VEC_ROW_SCALARS=0: they stop it, as before (A/B timings). */
    const char *rs_env = getenv("LOOM_GPU_VEC_ROW_SCALARS");
    bool row_scalars = !(rs_env && strcmp(rs_env, "0") == 0);
    int vlanes = 0, cvlanes = 0;
    if (!k->snippet && nloaded > 0 && k->nbuf <= GPU_VEC_MAXBUF) {
      int maxsize = 1, cmaxsize = 1, ncontig = 0;
      bool contig = true, ccontig = true;
      for (int bi = 0; bi < k->nbuf; bi++) {
        bool loaded = false;
        for (int i = 0; i < k->ninstr && !loaded; i++) loaded = k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi;
        if (!loaded) continue;
        uint8_t lay = k->bufs[bi].layout[k->ndim - 1];
        contig = contig && lay == KL_ONE;
        ccontig = ccontig && (lay == KL_ONE || (row_scalars && lay == KL_ZERO));
        int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
        if (sz > maxsize) maxsize = sz;
        if (lay == KL_ONE && sz > cmaxsize) cmaxsize = sz;
        ncontig += lay == KL_ONE;
      }
      if (contig && 16 / maxsize >= 2) vlanes = 16 / maxsize;
      if (ccontig && ncontig > 0 && 16 / cmaxsize >= 2) cvlanes = 16 / cmaxsize;
    }
    bool stores_contig = true; /* side stores (fold_vector): contiguous, as the loads */
    for (int s = 0; s < k->phases[0].nstores && k->phases[0].kind == KP_REDUCE; s++)
      stores_contig = stores_contig && k->bufs[k->stores[k->phases[0].store_begin + s].buf].layout[k->ndim - 1] == KL_ONE;
    /* side stores wider than the loads (amp_unscale: float16 in, float32 out) narrow the vector to their
     * 16 bytes: 8 lanes would store 32 bytes a thread as two 16-byte halves a warp instruction apart, each
     * instruction writing half of every 32-byte sector it touches (twice the L2 store transactions).
     * LOOM_GPU_PARTV_STORE_LANES=0: the loads' width (A/B timings). */
    int pvlanes = vlanes;
    static int store_lanes = -1;
    if (cg_env_int_once(&store_lanes, "LOOM_GPU_PARTV_STORE_LANES", 1) != 0)
      for (int s = 0; s < k->phases[0].nstores && k->phases[0].kind == KP_REDUCE; s++) {
        int sz = (int)loom_dtype_size((LoomDType)k->bufs[k->stores[k->phases[0].store_begin + s].buf].dtype);
        if (sz > 0 && 16 / sz < pvlanes) pvlanes = 16 / sz;
      }
    if (split && pvlanes >= 2 && stores_contig && k->nkeep == 0 && k->ndim == 1 &&
        !cg_kernel_addresses_by_value(k)) { /* PARTV's offsets are the point index */
      out->part_lanes = pvlanes;
      snprintf(out->partv, sizeof out->partv, "%s_partv", prefix);
      build_gpu_entry(&L, GPU_PARTV, true, out->partv, nwords, pvlanes, out->acc_size);
    }
    /* a COL reduction over packed rows of 2-4 columns: the vector part over the flat memory (gpu_colv.c) */
    if (split && col && maxsz <= 8 && cg_gpu_colv_stride(k) > 0) {
      out->part_lanes = 16 / maxsz;
      snprintf(out->partv, sizeof out->partv, "%s_partv", prefix);
      build_gpu_entry(&L, GPU_PARTV, false, out->partv, nwords, 16 / maxsz, out->acc_size);
    }
    /* walks >= 2: the launcher's block mode for rows up to blockDim * cache_k; every ROW reduction:
     * its short-row mode (rows of at most wave * cache_k points) */
    if (!col && walks >= 1 && nloaded <= GPU_CACHE_BUFS && !cg_has_side_stores(k)) { /* (cg_reduce_point) */
      /* 64 bytes of each loaded buffer a thread: rows of 2-byte values (float16 softmax) hold 32 points,
       * half the threads a row, so twice the rows are in flight per SM and each block reduction is paid
       * over twice the points (H200: softmax_f16 0.1155 -> 0.1048 ms; registers 52 -> 92). Kernels that
       * load one or two buffers; LOOM_GPU_CACHE_BYTES: the bytes (16 points at least, 32 at most) */
      static int cache_bytes = -1;
      int cb = cg_env_int_once(&cache_bytes, "LOOM_GPU_CACHE_BYTES", 64);
      int ck = nloaded <= 2 ? cb / maxsz : GPU_CACHE_K; /* (more buffers: their registers add up) */
      L.cache_k = ck < GPU_CACHE_K ? GPU_CACHE_K : ck > GPU_CACHE_K_MAX ? GPU_CACHE_K_MAX : ck;
      out->cache_k = L.cache_k;
      snprintf(out->cached, sizeof out->cached, "%s_rowc", prefix);
      build_gpu_entry(&L, GPU_CACHED, true, out->cached, nwords, 0, 0);
      if (cvlanes && k->ndim - k->nkeep == 1 && L.cache_k % cvlanes == 0) {
        out->cache_lanes = cvlanes;
        snprintf(out->cachedv, sizeof out->cachedv, "%s_rowcv", prefix);
        build_gpu_entry(&L, GPU_CACHED, true, out->cachedv, nwords, cvlanes, 0);
      }
    }
    /* short packed rows specialized on their extent: chunks of whole rows as flat vectors (gpu_rowflat.c) */
    int rflanes = col ? 0 : cg_gpu_rowflat_lanes(k);
    if (rflanes > 0) {
      int ck = L.cache_k;
      L.cache_k = 0;
      snprintf(out->flatv, sizeof out->flatv, "%s_rowf", prefix);
      build_gpu_entry(&L, GPU_ROWF, true, out->flatv, nwords, rflanes, 0);
      L.cache_k = ck;
    }
  }
  if (st == LOOM_OK) st = d->status;
  return cg_lower_finish(&L, ctx, mod, "GPU ", st, d);
}
