/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_colv.c: the vector PART entry of column reductions over packed short rows (GPU).
 *
 * A reduction over axis 0 of an (N, S) array with S = 2, 3 or 4 packed columns (a point cloud's centroid,
 * an image's per-channel sum over its pixels, boxes' extents) is a COL kernel of dims [S, N] whose loaded
 * buffers all have layout [1, S] (ir.h: the reduced stride is the constant S). Walked by columns, a thread
 * a column reads one word every S, and a warp's load touches a dozen rows of different parts: H100, mean
 * over axis 0 of 5e7 x 3 float32 took 0.33 ms against torch's 0.23. Here the array is read as the flat run
 * of memory it is: chunks of C = lcm(S, V) points (V lanes a 16-byte vector), each C / V whole vectors,
 * threads of a block on consecutive chunks (every warp load one run of 512 bytes). A chunk starts on a row
 * (C is a multiple of S), so its point p is column p % S of row p / S: a thread keeps S accumulators, each
 * fed the positions of its column in order, chunk after chunk. The launch's parts are balanced ranges of
 * chunks (sizes only); the rows past the last whole chunk (fewer than C / S) go to the last part, a point
 * a thread. Then each column's accumulators are reduced across the block and thread 0 writes the part's S
 * records (part * S + o, codegen.h's layout), which FINISH / FINISHB fold as they fold COL parts.
 *
 * Built (gpu_lower.c, as the kernel's `partv`) for COL kernels of 2 dims with one REDUCE phase (and a
 * FINAL) that store nothing beside it and address nothing by value; the launcher runs it when the kept
 * extent equals S and every loaded base is aligned to a vector (gpu_launch_policy.c). */
#include "codegen/cg_lower.h"

bool cg_gpu_colv_on(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_GPU_COLV", 1) != 0;
}

/* S when k qualifies (above), else 0. */
int cg_gpu_colv_stride(const KernelIr *k) {
  if (!cg_gpu_colv_on()) return 0;
  if (!k || k->call || k->snippet || k->nuser_arg || k->ndim != 2 || k->nkeep != 1 || k->nphase < 1 || k->nphase > 2)
    return 0;
  const KPhase *p0 = &k->phases[0];
  if (p0->kind != KP_REDUCE || p0->reduce_op == IR_REDUCE_USER || p0->nstores || (k->nphase == 2 && k->phases[1].kind != KP_FINAL))
    return 0;
  if (cg_kernel_addresses_by_value(k)) return 0;
  int s = 0, nloaded = 0;
  bool used[64] = {false};
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind == KI_USER || in->kind == KI_USER_OUT || in->kind == KI_OFFSET) return 0;
    if (in->kind != KI_LOAD || in->buf >= 64 || used[in->buf]) continue;
    used[in->buf] = true;
    nloaded++;
    const uint8_t *lay = k->bufs[in->buf].layout;
    int64_t c;
    if (lay[0] != KL_ONE || !ir_layout_const(lay[1], &c) || c < 2 || c > 4 || (s && c != s) ||
        dtype_is_complex((LoomDType)k->bufs[in->buf].dtype))
      return 0;
    s = (int)c;
  }
  return nloaded > 0 && nloaded <= GPU_VEC_MAXBUF ? s : 0;
}


enum { COLV_MAX_S = 4, COLV_MAX_VECS = 16 }; /* S; vectors a step (U * Q) */

typedef struct ColvTail {
  const KPhase *ph;
  LoomDType vt;
  LLVMTypeRef vty;
  LLVMValueRef *accs, *accis; /* the S accumulators' allocas */
  int s;
} ColvTail;

/* Point t of the flat run (column t % S of row t / S) into its column's accumulator. */
static void colv_tail_point(Lower *L, LLVMValueRef t, void *arg) {
  ColvTail *c = arg;
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < L->k->nbuf; bi++) L->off[bi] = t;
  cg_clear_cache(L);
  cg_reduce_point(L, c->ph);
  LLVMValueRef v = L->cache[c->ph->value];
  LLVMValueRef tc = LLVMBuildURem(b, t, cg_iconst_i(L, c->s), ""), tr = LLVMBuildUDiv(b, t, cg_iconst_i(L, c->s), "");
  for (int o = 0; o < c->s; o++) {
    LLVMValueRef mine = LLVMBuildICmp(b, LLVMIntEQ, tc, cg_iconst_i(L, o), "");
    LLVMValueRef a0 = LLVMBuildLoad2(b, c->vty, c->accs[o], ""), ai0 = LLVMBuildLoad2(b, L->i64, c->accis[o], "");
    LLVMValueRef a1 = a0, ai1 = ai0;
    cg_gpu_fold_point(L, c->ph, c->vt, &a1, &ai1, v, tr);
    LLVMBuildStore(b, LLVMBuildSelect(b, mine, a1, a0, ""), c->accs[o]);
    if (is_arg(c->ph->reduce_op)) LLVMBuildStore(b, LLVMBuildSelect(b, mine, ai1, ai0, ""), c->accis[o]);
  }
  cg_clear_cache(L);
}

void cg_gpu_colv_item(Lower *L, LLVMValueRef part, void *arg) {
  GpuEntry *e = arg;
  const KernelIr *k = L->k;
  const KPhase *ph = &k->phases[0];
  LLVMBuilderRef b = L->m.b;
  const int S = cg_gpu_colv_stride(k), V = e->lanes, C = S / cg_gcd(S, V) * V, Q = C / V, G = C / S;
  /* chunks a thread a step: 8 vector loads in flight at least */
  const int U = Q >= 8 ? 1 : (8 + Q - 1) / Q;
  LoomDType vt = cg_red_value_dtype(k, ph);
  LLVMTypeRef vty = cg_reg_type(&L->m, vt);
  bool isarg = is_arg(ph->reduce_op);
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  LLVMValueRef accs[COLV_MAX_S], accis[COLV_MAX_S];
  for (int o = 0; o < S; o++) {
    accs[o] = cg_entry_alloca(L, vty, "cvacc");
    LLVMBuildStore(b, cg_red_identity(L, ph->reduce_op, vt), accs[o]);
    accis[o] = cg_entry_alloca(L, L->i64, "cvacci");
    LLVMBuildStore(b, cg_i64(&L->m, GPU_EMPTY_INDEX), accis[o]);
  }
  /* the part's chunks [clo, chi): balanced over the launch's parts */
  LLVMValueRef nchunk = LLVMBuildUDiv(b, e->nr, cg_iconst_i(L, G), "");
  LLVMValueRef q = LLVMBuildUDiv(b, nchunk, e->nparts, ""), r = LLVMBuildURem(b, nchunk, e->nparts, "");
  LLVMValueRef lt = LLVMBuildICmp(b, LLVMIntSLT, part, r, "");
  LLVMValueRef clo = LLVMBuildAdd(b, LLVMBuildMul(b, q, part, ""), LLVMBuildSelect(b, lt, part, r, ""), "");
  LLVMValueRef chi = LLVMBuildAdd(b, LLVMBuildAdd(b, clo, q, ""), LLVMBuildZExt(b, lt, L->ity, ""), "");
  /* one step: chunks i, i + bdim, ... (u < nu); every vector loaded before any point is folded */
  LLVMValueRef iv = cg_entry_alloca(L, L->ity, "cvi");
  LLVMBuildStore(b, LLVMBuildAdd(b, clo, e->tid, ""), iv);
  for (int pass = 0; pass < 2; pass++) { /* pass 0: U chunks a step; pass 1: the rest, one a step */
    int nu = pass == 0 ? U : 1;
    LLVMValueRef limit = pass == 0 ? LLVMBuildSub(b, chi, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, U - 1), ""), "") : chi;
    LLVMBasicBlockRef head = cg_new_bb(L, "cv.head"), body = cg_new_bb(L, "cv.body"), exit = cg_new_bb(L, "cv.exit");
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, head);
    LLVMValueRef i = LLVMBuildLoad2(b, L->ity, iv, "");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, limit, ""), body, exit);
    LLVMPositionBuilderAtEnd(b, body);
    LLVMValueRef vls[COLV_MAX_VECS][GPU_VEC_MAXBUF]; /* nu * Q <= 16: (U, Q) = (8, 1), (3, 3), (1, 12) */
    LLVMValueRef cbase[8];
    for (int u = 0; u < nu; u++) {
      LLVMValueRef c = LLVMBuildNSWAdd(b, i, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, u), ""), ""); /* < chi */
      cbase[u] = LLVMBuildNSWMul(b, c, cg_iconst_i(L, C), "");
      for (int j = 0; j < Q; j++) {
        LLVMValueRef vb = LLVMBuildNSWAdd(b, cbase[u], cg_iconst_i(L, j * V), "");
        for (int bi = 0; bi < k->nbuf; bi++) vls[u * Q + j][bi] = NULL;
        for (int x = 0; x < k->ninstr; x++) {
          const KInstr *in = &k->instrs[x];
          if (in->kind != KI_LOAD || vls[u * Q + j][in->buf]) continue;
          LoomDType st = (LoomDType)k->bufs[in->buf].dtype;
          LLVMValueRef ld = LLVMBuildLoad2(b, cg_vec_type(&L->m, st, (unsigned)V), cg_elem_ptr(L, in->buf, vb), "");
          LLVMSetAlignment(ld, (unsigned)V * (unsigned)loom_dtype_size(st));
          vls[u * Q + j][in->buf] = ld;
        }
      }
    }
    LLVMValueRef a[COLV_MAX_S], ai[COLV_MAX_S];
    for (int o = 0; o < S; o++) {
      a[o] = LLVMBuildLoad2(b, vty, accs[o], "");
      ai[o] = isarg ? LLVMBuildLoad2(b, L->i64, accis[o], "") : NULL;
    }
    for (int u = 0; u < nu; u++) {
      LLVMValueRef row0 = LLVMBuildNSWMul(b, LLVMBuildNSWAdd(b, i, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, u), ""), ""),
                                          cg_iconst_i(L, G), "");
      for (int p = 0; p < C; p++) {
        int j = p / V, o = p % S;
        for (int bi = 0; bi < k->nbuf; bi++) {
          L->vload[bi] = vls[u * Q + j][bi];
          L->off[bi] = LLVMBuildNSWAdd(b, cbase[u], cg_iconst_i(L, p), "");
        }
        L->lane = (unsigned)(p % V);
        cg_clear_cache(L);
        cg_reduce_point(L, ph);
        cg_gpu_fold_point(L, ph, vt, &a[o], &ai[o], L->cache[ph->value],
                 isarg ? LLVMBuildNSWAdd(b, row0, cg_iconst_i(L, p / S), "") : NULL);
      }
    }
    cg_clear_cache(L);
    for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
    L->lane = 0;
    for (int o = 0; o < S; o++) {
      LLVMBuildStore(b, a[o], accs[o]);
      if (isarg) LLVMBuildStore(b, ai[o], accis[o]);
    }
    LLVMBuildStore(b, LLVMBuildAdd(b, i, LLVMBuildMul(b, e->bdim, cg_iconst_i(L, nu), ""), ""), iv);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
  }
  /* the rows past the last whole chunk (fewer than G): the last part, a point a thread (bdim apart) */
  ColvTail tail = {.ph = ph, .vt = vt, .vty = vty, .accs = accs, .accis = accis, .s = S};
  LLVMValueRef first = LLVMBuildAdd(b, LLVMBuildMul(b, nchunk, cg_iconst_i(L, C), ""), e->tid, "");
  LLVMValueRef npts = LLVMBuildMul(b, e->nr, cg_iconst_i(L, S), "");
  LLVMValueRef last = LLVMBuildICmp(b, LLVMIntEQ, part, LLVMBuildSub(b, e->nparts, cg_iconst_i(L, 1), ""), "");
  cg_gpu_for(L, first, LLVMBuildSelect(b, last, npts, cg_iconst_i(L, 0), ""), e->bdim, colv_tail_point, &tail);
  /* each column across the block; thread 0 writes the part's S records */
  for (int o = 0; o < S; o++) {
    L->acc[0] = LLVMBuildLoad2(b, vty, accs[o], "");
    L->accidx[0] = LLVMBuildLoad2(b, L->i64, accis[o], "");
    cg_gpu_block_reduce(L, 0);
    LLVMBasicBlockRef w = cg_new_bb(L, "cv.write"), after = cg_new_bb(L, "cv.after");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, e->tid, cg_iconst_i(L, 0), ""), w, after);
    LLVMPositionBuilderAtEnd(b, w);
    LLVMValueRef rec = LLVMBuildAdd(b, LLVMBuildMul(b, part, cg_iconst_i(L, S), ""), cg_iconst_i(L, o), "");
    cg_store_partial(L, cg_partial_ptr(L, e->partials, rec, e->acc_size));
    LLVMBuildBr(b, after);
    LLVMPositionBuilderAtEnd(b, after);
  }
}
