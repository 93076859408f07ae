/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_rowflat.c: reductions of short packed rows read as flat vectors (GPU), the `flatv` entry of a ROW kernel.
 *
 * A reduction over the last axis of an (N, E) array with E = 2..32 packed points a row (Poincare distances of
 * embeddings of 10, softmax over 16 router logits, the norms of (N, 3) points) gives a row too few points for a
 * block or a wave: the short-row mode ran a thread a row through a shared-memory tile (gpu_stage.c), or g lanes a
 * row with shuffles. Here rows are read as the flat run of memory they are: a thread takes a chunk of
 * C = lcm(E, V) points (V lanes a 16-byte vector), which is G = C / E whole rows and Q = C / V whole vectors of
 * every packed buffer, loads the chunk's vectors first, then runs every phase of each of its rows in order
 * from registers (E is a constant: the row's points are fixed lanes of fixed vectors, so the code is straight
 * line): REDUCE phases fold the row's points in order, MAP phases store (packed outputs collected into vectors,
 * one store a vector), FINAL phases store the row's results. Threads of a block take consecutive chunks, so a
 * warp's loads read one run of memory; U chunks a step keep about 8 vector loads in flight.
 *
 * The runtime compiles a copy of the kernel with KernelIr.row_extent = E for such a launch
 * (cg_gpu_rowflat_extent, runtime/gpu/gpu_launch.c rt_gpu_specialize); the launcher runs this entry when every
 * packed buffer's base is aligned to its vector (gpu_launch_policy.c rowflat_ok); rows past the last whole
 * chunk (fewer than G) take the same code a row a thread with scalar loads. Buffers that are not packed (a
 * per-row scale [s, 0], a per-column weight [0, 1]) are read and written a point at a time at their own
 * offsets. Where its stores would spread over more than twice the lines of coalesced ones, the usual entries
 * stay (rowflat_lanes). LOOM_GPU_ROWF=0: no such copy (A/B timings; the generic kernel as before); =2: also
 * where stores spread. */
#include <string.h>

#include "codegen/cg_lower.h"

/* LOOM_GPU_ROWF: 1 (default) as below, 0 never, 2 also where stores spread (tests, A/B timings). */
static int rowflat_knob(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_GPU_ROWF", 1);
}
static bool rowflat_on(void) { return rowflat_knob() != 0; }
int cg_gpu_rowflat_knob(void) { return rowflat_knob(); }

/* LOOM_GPU_ROWF_STAGE=1: a warp's 32 chunks go through shared memory (the staged form below; A/B timings). */
int cg_gpu_rowflat_stage_knob(void) {
  static int knob = -1;
  return cg_env_int_once(&knob, "LOOM_GPU_ROWF_STAGE", 0);
}

enum { ROWF_MAX_E = 32, ROWF_MAX_VECS = 24, ROWF_MAX_ROWS = 16, ROWF_STAGE_BLOCK = 256, ROWF_STAGE_BYTES = 32768 };


/* A buffer read / written as vectors: contiguous along the row, varying along the rows (packed at launch:
 * its row stride is E, which the specialization checks). */
static bool packed_buf(const KernelIr *k, int bi) {
  return k->bufs[bi].layout[1] == KL_ONE && k->bufs[bi].layout[0] != KL_ZERO;
}


static bool buf_map_stored(const KernelIr *k, int bi) {
  for (int p = 0; p < k->nphase; p++)
    for (int s = 0; k->phases[p].kind == KP_MAP && s < k->phases[p].nstores; s++)
      if (k->stores[k->phases[p].store_begin + s].buf == bi) return true;
  return false;
}

/* Shared bytes of the staged form (a block of ROWF_STAGE_BLOCK threads): each thread's Q vectors or G results. */
static int stage_bytes(int q, int g) { return ROWF_STAGE_BLOCK * (q * 16 > g * 8 ? q * 16 : g * 8); }

/* The lanes V of the entry for rows of e points, or 0 where it does not apply (see above). */
static int rowflat_lanes(const KernelIr *k, int64_t e) {
  if (!rowflat_on() || !k || e < 2 || e > ROWF_MAX_E || k->call || k->snippet || k->nuser_arg || k->walk_cols ||
      k->ndim != 2 || k->nkeep != 1 || k->nbuf > 64 || k->nstore > 64 || cg_kernel_addresses_by_value(k))
    return 0;
  int nred = 0;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_SCAN || (ph->kind == KP_REDUCE && (ph->reduce_op == IR_REDUCE_USER || ph->nstores))) return 0;
    nred += ph->kind == KP_REDUCE;
  }
  for (int i = 0; i < k->ninstr; i++) {
    int kind = k->instrs[i].kind;
    if (kind == KI_USER || kind == KI_USER_OUT || kind == KI_OFFSET || kind == KI_INDEX || kind == KI_GATHER) return 0;
  }
  int maxsz = 0, nload = 0, nstore = 0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (dtype_is_complex((LoomDType)k->bufs[bi].dtype)) return 0;
    if (!packed_buf(k, bi)) continue;
    bool ld = cg_kernel_loads(k, bi), st = buf_map_stored(k, bi);
    nload += ld;
    nstore += st;
    int sz = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    if ((ld || st) && sz > maxsz) maxsz = sz;
  }
  if (nred == 0 || nload == 0 || maxsz < 1 || 16 / maxsz < 2) return 0;
  int v = 16 / maxsz, c = (int)e / cg_gcd((int)e, v) * v;
  if (c / (int)e > ROWF_MAX_ROWS || (nload + nstore) * (c / v) > ROWF_MAX_VECS) return 0;
  /* Adjacent threads' chunks lie C points apart, so a warp's vector load touches Q = C / V times the lines
   * a coalesced one does (the L1 serves the chunk's other vectors), its vector stores likewise Q times (not
   * cached: each a partial write of Q times the lines), and per-row results G rows apart G times. Loads bear
   * it, stores did not: H100, 2026-12-07, against the short-row mode: poincare_dist (G = 2, Q = 5 loads)
   * 0.369 -> 0.295 ms, router_log_softmax_f16 (Q = 2 stores) 0.034 -> 0.028, kmeans_argmin (G = 1) 0.028 ->
   * 0.029; but box_volume_i32 (G = 4) 0.199 -> 0.321, normalize_normals (Q = 3 stores) 0.269 -> 0.354,
   * router_softmax_short (Q = 4) 0.050 -> 0.057, l1_normalize_short (Q = 7) 0.197 -> 0.500. So stores may be
   * spread at most twice. */
  bool final_stores = false;
  for (int p = 0; p < k->nphase; p++) final_stores = final_stores || (k->phases[p].kind == KP_FINAL && k->phases[p].nstores);
  bool staged = cg_gpu_rowflat_stage_knob() == 1 && stage_bytes(c / v, c / (int)e) <= ROWF_STAGE_BYTES;
  if (rowflat_knob() != 2 && !staged && ((nstore > 0 && c / v > 2) || (final_stores && c / (int)e > 2))) return 0;
  return v;
}

int cg_gpu_rowflat_lanes(const KernelIr *k) { return k && k->row_extent ? rowflat_lanes(k, k->row_extent) : 0; }

int cg_gpu_rowflat_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind) {
  if (!k || !shape || !bind || k->ndim != 2 || shape[0] < ((int64_t)1 << 14)) return 0;
  int64_t e = shape[1];
  if (!rowflat_lanes(k, e) || !cg_row_extent_fits(k, bind, e)) return 0;
  for (int bi = 0; bi < k->nbuf; bi++)
    if (packed_buf(k, bi) && (bind[bi].strides[1] != 1 || bind[bi].strides[0] != e)) return 0;
  return (int)e;
}

/* ---- the entry ------------------------------------------------------------------------------------------ */
typedef struct RowFlat {
  const GpuEntry *e;
  int E, V, C, G, Q;
  bool packed[64];
  /* the staged form: the wave's W lanes, this thread's lane, its wave's shared region */
  int W;
  LLVMValueRef lane, region;
} RowFlat;

/* Sets L->off (and L->vload / L->lane for packed buffers when vl) for point c of the row whose offsets are
 * L->ooff; vl[j][bi]: vector j of the chunk (p0: the row's first position in it). */
static void rowflat_point(Lower *L, const RowFlat *f, LLVMValueRef (*vl)[64], int p0, int c) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef step = LLVMBuildMul(b, cg_iconst_i(L, c), L->stride[bi * 2 + 1], "");
    L->off[bi] = LLVMBuildAdd(b, L->ooff[bi], step, "");
    L->vload[bi] = vl && f->packed[bi] ? vl[(p0 + c) / f->V][bi] : NULL;
  }
  L->lane = vl ? (unsigned)((p0 + c) % f->V) : 0;
  cg_clear_cache(L);
}

/* Every phase of one row (index `row`), its points from the chunk's vectors vl (NULL: scalar loads); packed
 * MAP stores go into sv[j][bi] (vector j of buffer bi), others are stored at their points. */
static void rowflat_row(Lower *L, const RowFlat *f, LLVMValueRef row, LLVMValueRef (*vl)[64], int p0,
                        LLVMValueRef (*sv)[64], LLVMValueRef *fin) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  for (int bi = 0; bi < k->nbuf; bi++) L->ooff[bi] = LLVMBuildMul(b, row, L->stride[bi * 2], "");
  for (int p = 0; p < k->nphase; p++) L->acc[p] = L->accidx[p] = NULL;
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_REDUCE) {
      LoomDType vt = cg_red_value_dtype(k, ph);
      LLVMValueRef a = cg_red_identity(L, ph->reduce_op, vt), ai = cg_i64(m, GPU_EMPTY_INDEX);
      for (int c = 0; c < f->E; c++) {
        rowflat_point(L, f, vl, p0, c);
        cg_eval_needed(L, &ph->value, 1);
        LLVMValueRef v = L->cache[ph->value];
        if (is_arg(ph->reduce_op) && c == 0) a = v, ai = cg_i64(m, 0); /* the first point, whatever its value */
        else cg_gpu_fold_point(L, ph, vt, &a, &ai, v, cg_iconst_i(L, c));
      }
      L->acc[p] = a;
      L->accidx[p] = ai;
    } else if (ph->kind == KP_MAP) {
      for (int c = 0; c < f->E; c++) {
        rowflat_point(L, f, vl, p0, c);
        for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
          const KStore *st = &k->stores[s];
          LoomDType bt = (LoomDType)k->bufs[st->buf].dtype;
          cg_eval_needed(L, &st->value, 1);
          LLVMValueRef v = cg_to_mem(m, (LoomDType)k->instrs[st->value].dtype, bt, L->cache[st->value]);
          if (sv && f->packed[st->buf]) {
            int j = (p0 + c) / f->V;
            sv[j][st->buf] = cg_vec_set(m, bt, sv[j][st->buf], v, (unsigned)((p0 + c) % f->V));
          } else {
            LLVMSetAlignment(LLVMBuildStore(b, v, cg_elem_ptr(L, st->buf, L->off[st->buf])), dtype_align(bt));
          }
        }
      }
    } else if (!fin) {
      cg_run_final_phase(L, ph);
    } else { /* staged: each result kept in fin[store] (stage_results stores them) */
      cg_clear_cache(L);
      L->final_phase = true;
      for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++) {
        const KStore *st = &k->stores[s];
        cg_eval_needed(L, &st->value, 1);
        fin[s] = cg_to_mem(m, (LoomDType)k->instrs[st->value].dtype, (LoomDType)k->bufs[st->buf].dtype, L->cache[st->value]);
      }
      L->final_phase = false;
    }
  }
  cg_clear_cache(L);
  for (int bi = 0; bi < k->nbuf; bi++) L->vload[bi] = NULL;
  L->lane = 0;
}

/* ---- the staged form: a wave's chunks through shared memory ----------------------------------------------
 * Lane l of a wave owns chunk ch0 + l (ch0: the wave's first), W chunks one after another: W * Q vectors of each
 * packed buffer. They are loaded coalesced (lane l: vectors l, l + W, ...), written to the wave's shared region
 * in that order, and each lane reads back its own Q (vectors l * Q + j: no bank conflicts for odd Q); packed
 * outputs go the other way, per-row results likewise (G a lane). A wave_sync between each write and read. */
static LLVMValueRef region_at(Lower *L, const RowFlat *f, LLVMTypeRef t, LLVMValueRef idx) {
  return LLVMBuildGEP2(L->m.b, t, f->region, &idx, 1, "");
}

/* vectors[j] (j < Q, lane order: vector lane + W * j of the span) -> this lane's own (vector lane * Q + j), or back;
 * bytes: a vector's (V lanes of the buffer's dtype: 16 or fewer). */
static void stage_exchange(Lower *L, const RowFlat *f, LLVMTypeRef vt, unsigned bytes, LLVMValueRef *v, bool to_own) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef span[ROWF_MAX_VECS], own[ROWF_MAX_VECS];
  for (int j = 0; j < f->Q; j++) {
    span[j] = LLVMBuildAdd(b, f->lane, cg_iconst_i(L, (int64_t)f->W * j), "");
    own[j] = LLVMBuildAdd(b, LLVMBuildMul(b, f->lane, cg_iconst_i(L, f->Q), ""), cg_iconst_i(L, j), "");
  }
  for (int j = 0; j < f->Q; j++)
    LLVMSetAlignment(LLVMBuildStore(b, v[j], region_at(L, f, vt, to_own ? span[j] : own[j])), bytes);
  L->m.gpu->wave_sync(&L->m);
  for (int j = 0; j < f->Q; j++) {
    v[j] = LLVMBuildLoad2(b, vt, region_at(L, f, vt, to_own ? own[j] : span[j]), "");
    LLVMSetAlignment(v[j], bytes);
  }
  L->m.gpu->wave_sync(&L->m); /* the region is free for the next exchange */
}

/* The per-row results fin[r][s] of the wave's W * G rows from ch0 * G: through the region, each lane storing
 * rows lane + W * i (coalesced). */
static void stage_results(Lower *L, const RowFlat *f, LLVMValueRef ch0, LLVMValueRef (*fin)[64]) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  for (int s = 0; s < k->nstore; s++) {
    if (!fin[0][s]) continue;
    const KStore *st = &k->stores[s];
    LoomDType bt = (LoomDType)k->bufs[st->buf].dtype;
    LLVMTypeRef t = cg_mem_type(&L->m, bt);
    LLVMValueRef mine = LLVMBuildMul(b, f->lane, cg_iconst_i(L, f->G), "");
    for (int r = 0; r < f->G; r++)
      LLVMSetAlignment(LLVMBuildStore(b, fin[r][s], region_at(L, f, t, LLVMBuildAdd(b, mine, cg_iconst_i(L, r), ""))),
                       dtype_align(bt));
    L->m.gpu->wave_sync(&L->m);
    LLVMValueRef row0 = LLVMBuildNSWMul(b, ch0, cg_iconst_i(L, f->G), "");
    for (int i = 0; i < f->G; i++) {
      LLVMValueRef at = LLVMBuildAdd(b, f->lane, cg_iconst_i(L, (int64_t)f->W * i), "");
      LLVMValueRef v = LLVMBuildLoad2(b, t, region_at(L, f, t, at), "");
      LLVMSetAlignment(v, dtype_align(bt));
      LLVMValueRef off = LLVMBuildMul(b, LLVMBuildNSWAdd(b, row0, at, ""), L->stride[st->buf * 2], "");
      LLVMSetAlignment(LLVMBuildStore(b, v, cg_elem_ptr(L, st->buf, off)), dtype_align(bt));
    }
    L->m.gpu->wave_sync(&L->m);
  }
}

/* Chunks ch[0 .. nu - 1]: every packed buffer's vectors loaded, then each chunk's rows, then its vector stores.
 * staged: each ch[u] is lane + the first chunk of W consecutive ones of the wave (the staged form, above). */
static void rowflat_chunks(Lower *L, const RowFlat *f, const LLVMValueRef *ch, int nu, bool staged) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMValueRef vl[ROWF_MAX_VECS][64], sv[ROWF_MAX_VECS][64], first[ROWF_MAX_VECS], ch0[ROWF_MAX_VECS];
  /* vector j of chunk u (staged: of the wave's span) at point first[u] + j * step */
  const int step = staged ? f->W * f->V : f->V;
  for (int u = 0; u < nu; u++) {
    ch0[u] = staged ? LLVMBuildSub(b, ch[u], f->lane, "") : ch[u];
    first[u] = LLVMBuildNSWMul(b, ch0[u], cg_iconst_i(L, f->C), ""); /* the chunk's first point (rows packed) */
    if (staged) first[u] = LLVMBuildNSWAdd(b, first[u], LLVMBuildMul(b, f->lane, cg_iconst_i(L, f->V), ""), "");
    for (int j = 0; j < f->Q; j++)
      for (int bi = 0; bi < k->nbuf; bi++) {
        LoomDType st = (LoomDType)k->bufs[bi].dtype;
        vl[u * f->Q + j][bi] = sv[u * f->Q + j][bi] = NULL;
        if (!f->packed[bi]) continue;
        sv[u * f->Q + j][bi] = LLVMGetUndef(cg_vec_type(m, st, (unsigned)f->V));
        if (!cg_kernel_loads(k, bi)) continue;
        LLVMValueRef at = LLVMBuildNSWAdd(b, first[u], cg_iconst_i(L, (int64_t)j * step), "");
        LLVMValueRef ld = LLVMBuildLoad2(b, cg_vec_type(m, st, (unsigned)f->V), cg_elem_ptr(L, bi, at), "");
        LLVMSetAlignment(ld, (unsigned)f->V * (unsigned)loom_dtype_size(st));
        vl[u * f->Q + j][bi] = ld;
      }
  }
  for (int u = 0; staged && u < nu; u++) /* the span's vectors to their lanes */
    for (int bi = 0; bi < k->nbuf; bi++) {
      if (!f->packed[bi] || !cg_kernel_loads(k, bi)) continue;
      LLVMValueRef v[ROWF_MAX_VECS];
      for (int j = 0; j < f->Q; j++) v[j] = vl[u * f->Q + j][bi];
      unsigned bytes = (unsigned)f->V * (unsigned)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
      stage_exchange(L, f, LLVMTypeOf(v[0]), bytes, v, true);
      for (int j = 0; j < f->Q; j++) vl[u * f->Q + j][bi] = v[j];
    }
  LLVMValueRef (*fin)[64] = staged ? ctx_calloc(L->ctx, ROWF_MAX_ROWS, sizeof *fin) : NULL;
  for (int u = 0; u < nu; u++) {
    LLVMValueRef row0 = LLVMBuildNSWMul(b, ch[u], cg_iconst_i(L, f->G), "");
    if (fin) memset(fin, 0, ROWF_MAX_ROWS * sizeof *fin);
    for (int r = 0; r < f->G; r++)
      rowflat_row(L, f, LLVMBuildNSWAdd(b, row0, cg_iconst_i(L, r), ""), &vl[u * f->Q], r * f->E, &sv[u * f->Q],
                  fin ? fin[r] : NULL);
    for (int bi = 0; bi < k->nbuf; bi++) {
      if (!f->packed[bi] || !buf_map_stored(k, bi)) continue;
      LoomDType st = (LoomDType)k->bufs[bi].dtype;
      LLVMValueRef v[ROWF_MAX_VECS];
      for (int j = 0; j < f->Q; j++) v[j] = sv[u * f->Q + j][bi];
      unsigned bytes = (unsigned)f->V * (unsigned)loom_dtype_size(st);
      if (staged) stage_exchange(L, f, LLVMTypeOf(v[0]), bytes, v, false); /* back to span order */
      for (int j = 0; j < f->Q; j++) {
        LLVMValueRef at = LLVMBuildNSWAdd(b, first[u], cg_iconst_i(L, (int64_t)j * step), "");
        LLVMSetAlignment(LLVMBuildStore(b, v[j], cg_elem_ptr(L, bi, at)), bytes);
      }
    }
    if (fin) stage_results(L, f, ch0[u], fin);
  }
  if (fin) ctx_free(L->ctx, fin);
}

typedef struct RowFlatStep {
  const RowFlat *f;
  LLVMValueRef stride;    /* chunks between a thread's U chunks (the block's threads) */
  LLVMValueRef tile, tid; /* rowflat_tile: chunks a tile (stride * U), the thread in its block */
  int nu;
  bool staged;
} RowFlatStep;

static void rowflat_step(Lower *L, LLVMValueRef c, void *arg) {
  const RowFlatStep *s = arg;
  LLVMValueRef ch[ROWF_MAX_VECS];
  for (int u = 0; u < s->nu; u++)
    ch[u] = u ? LLVMBuildNSWAdd(L->m.b, c, LLVMBuildNSWMul(L->m.b, s->stride, cg_iconst_i(L, u), ""), "") : c;
  rowflat_chunks(L, s->f, ch, s->nu, s->staged);
}

/* Tile ti's chunks of this thread: ti * tile + tid + u * stride (u < nu). */
static void rowflat_tile(Lower *L, LLVMValueRef ti, void *arg) {
  const RowFlatStep *s = arg;
  rowflat_step(L, LLVMBuildNSWAdd(L->m.b, LLVMBuildNSWMul(L->m.b, ti, s->tile, ""), s->tid, ""), arg);
}

static void rowflat_tail_row(Lower *L, LLVMValueRef row, void *arg) { rowflat_row(L, arg, row, NULL, 0, NULL, NULL); }

void cg_gpu_rowflat(Lower *L, const GpuEntry *e, LLVMValueRef bid, LLVMValueRef nbk) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  RowFlat f = {.e = e, .E = k->row_extent, .V = e->lanes};
  f.C = f.E / cg_gcd(f.E, f.V) * f.V, f.G = f.C / f.E, f.Q = f.C / f.V;
  int nvec = 0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    f.packed[bi] = packed_buf(k, bi);
    nvec += f.packed[bi] && cg_kernel_loads(k, bi);
  }
  int per = f.Q * (nvec > 0 ? nvec : 1), U = per >= 8 ? 1 : (8 + per - 1) / per;
  while (U > 1 && U * f.Q > ROWF_MAX_VECS) U--;
  LLVMValueRef nchunk = LLVMBuildUDiv(b, e->no, cg_iconst_i(L, f.G), "");
  /* tiles of bdim * U chunks, a block's (chunk tid + u * bdim of its tile); then the rest a chunk a thread */
  LLVMValueRef tile = LLVMBuildMul(b, e->bdim, cg_iconst_i(L, U), "");
  LLVMValueRef ntile = LLVMBuildUDiv(b, nchunk, tile, "");
  /* staged (LOOM_GPU_ROWF_STAGE=1, blocks of at most ROWF_STAGE_BLOCK threads, whole waves: the launcher's) */
  bool staged = cg_gpu_rowflat_stage_knob() == 1 && stage_bytes(f.Q, f.G) <= ROWF_STAGE_BYTES;
  if (staged) {
    f.W = L->m.gpu->wave;
    f.lane = LLVMBuildURem(b, e->tid, cg_iconst_i(L, f.W), "");
    int wbytes = f.W * (f.Q * 16 > f.G * 8 ? f.Q * 16 : f.G * 8);
    LLVMValueRef all = cg_gpu_shared_array(L, "loom.rowf", LLVMInt8TypeInContext(L->m.c),
                                           (uint64_t)stage_bytes(f.Q, f.G), 16);
    LLVMValueRef at = LLVMBuildMul(b, LLVMBuildUDiv(b, e->tid, cg_iconst_i(L, f.W), ""), cg_iconst_i(L, wbytes), "");
    f.region = LLVMBuildGEP2(b, LLVMInt8TypeInContext(L->m.c), all, &at, 1, "");
  }
  RowFlatStep whole = {.f = &f, .stride = e->bdim, .tile = tile, .tid = e->tid, .nu = U, .staged = staged};
  RowFlatStep one = {.f = &f, .stride = e->bdim, .nu = 1};
  cg_gpu_for(L, bid, ntile, nbk, rowflat_tile, &whole);
  LLVMValueRef gtid = LLVMBuildAdd(b, LLVMBuildMul(b, bid, e->bdim, ""), e->tid, "");
  LLVMValueRef gstride = LLVMBuildMul(b, nbk, e->bdim, "");
  cg_gpu_for(L, LLVMBuildAdd(b, LLVMBuildMul(b, ntile, tile, ""), gtid, ""), nchunk, gstride, rowflat_step, &one);
  /* rows past the last whole chunk: a row a thread, scalar loads */
  cg_gpu_for(L, LLVMBuildAdd(b, LLVMBuildMul(b, nchunk, cg_iconst_i(L, f.G), ""), gtid, ""), e->no, gstride,
             rowflat_tail_row, &f);
}
