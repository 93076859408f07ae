/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_tile.c: the tiled form of the GPU elementwise `main` entry, for kernels whose buffers run along
 * different fastest-varying dims (x.T + y, (A + A.T) / 2, a channels-last input beside a channels-first
 * output): with one thread per point in row-major order, a buffer that is contiguous along an earlier
 * dim d and strided along the last one is read one 32-byte sector per 4-byte element (~8x the bytes).
 *
 * Rule (from the layout classes alone, so it is part of the kernel's cache key): elementwise, rank >= 2,
 * no user snippet or point index, some buffer contiguous along the last dim (the row-major side), and
 * some LOADED buffer contiguous along a dim d < last and neither contiguous nor broadcast along the
 * last (the transposed side). Every loaded buffer contiguous along d and not along the last is "tiled".
 *
 * Strategy: 32 x 32 tiles of the (d, last) plane, the other dims a batch; blocks walk the tiles
 * grid-stride (any 1-d launch whose block is a multiple of 32: the launcher is unchanged). Per tile:
 * (1) the block reads each tiled buffer's tile with consecutive threads along d (coalesced) into shared
 * memory (rows padded to 33 elements: no bank conflicts for 4-byte values); barrier; (2) the block
 * walks the tile with consecutive threads along the last dim (the row-major buffers' loads and every
 * store coalesced), the tiled loads read from shared memory; barrier. Partial tiles at the edges are
 * bounds-checked. When the launch's d or last extent is below TILE_MIN (or a block has fewer than 32
 * threads) the entry takes the plain grid-stride loop instead (a branch uniform over the launch).
 * The launcher gives the entry about a block a tile (16 points a thread), launched in order, so the tiles
 * in flight are neighbours. Rows of odd length (not 128-byte aligned) put the tile rows' ends inside
 * sectors shared with the neighbouring tiles, read again from DRAM when the neighbour comes late: H100,
 * 2026-12-05 (bench/diag_transpose.py, ncu), with the grid capped at the resident blocks x.T * y of
 * 20000 x 7777 float32 read 1.51 GB for 1.245 GB of inputs (1.09 ms; 20011 x 7776, aligned rows: 0.77);
 * a block walking ~36 consecutive tiles ran 1.41 ms, groups of 2 .. 16 consecutive tiles 1.15 .. 1.36;
 * a block a tile: 20011 x 7777 1.17 -> 0.90 ms, 8192 x 8192 0.294 -> 0.271 (copy speed).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

#define TILE 32 /* tile rows along d (the load phase's lanes) */
#define TILE_MIN 8               /* below this extent along d or the last dim: the plain loop */
#define TILE_SHARED_MAX 32768    /* bytes of shared memory the tiles of one kernel may take */
#define TILE_K 4                 /* rows (columns) per thread and step: loads in flight per buffer */

/* Tile columns along the last dim (the compute phase's lanes): LOOM_GPU_TILE_W = 32 (default), 64 or 128
 * (A/B timings of odd row lengths: fewer row ends per byte; in the target's description, elem_tag). */
int cg_gpu_tile_w(void) {
  static int w = -1;
  int v = cg_env_int_once(&w, "LOOM_GPU_TILE_W", TILE);
  return v == 64 || v == 128 ? v : TILE;
}

static bool loads_buf(const KernelIr *k, int b) {
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == b) return true;
  return false;
}

int cg_gpu_tile_dim(const KernelIr *k, uint8_t *tiled) {
  if (!k || k->nkeep != k->ndim || k->ndim < 2 || k->snippet || k->nbuf <= 0 || k->nbuf > 64) return -1;
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_INDEX || k->instrs[i].kind == KI_OFFSET || k->instrs[i].kind == KI_GATHER) return -1;
  int last = k->ndim - 1, d = -1;
  bool rowmajor = false;
  for (int b = 0; b < k->nbuf; b++) rowmajor |= k->bufs[b].layout[last] == KL_ONE;
  if (!rowmajor) return -1;
  for (int b = 0; b < k->nbuf && d < 0; b++) {
    uint8_t ll = k->bufs[b].layout[last];
    if (ll == KL_ONE || ll == KL_ZERO || !loads_buf(k, b)) continue;
    for (int e = last - 1; e >= 0 && d < 0; e--)
      if (k->bufs[b].layout[e] == KL_ONE) d = e;
  }
  if (d < 0) return -1;
  size_t bytes = 0;
  int n = 0;
  for (int b = 0; b < k->nbuf; b++) {
    uint8_t ll = k->bufs[b].layout[last];
    bool t = ll != KL_ONE && ll != KL_ZERO && k->bufs[b].layout[d] == KL_ONE && loads_buf(k, b);
    size_t sz = (size_t)TILE * (size_t)(cg_gpu_tile_w() + 1) * loom_dtype_size((LoomDType)k->bufs[b].dtype);
    if (t && bytes + sz > TILE_SHARED_MAX) t = false;
    if (t) bytes += sz, n++;
    if (tiled) tiled[b] = t;
  }
  return n ? d : -1;
}

typedef struct Tile {
  GpuEntry *e;
  int d;
  const uint8_t *tiled;
  LLVMValueRef *sh;                   /* nbuf: the shared tile of each tiled buffer, else NULL */
  LLVMValueRef ntl, ntd;              /* tiles along the last dim and along d */
  LLVMValueRef base[64];              /* per buffer: offset of the current tile's (0, 0) point */
  LLVMValueRef rows, cols;            /* valid extent of the current tile along d and the last dim */
  LLVMValueRef lane, step, active;    /* load phase: tid % TILE, bdim / TILE, tid < step * TILE */
  LLVMValueRef kstep;                 /* step * TILE_K */
  int tw;                             /* tile columns (cg_gpu_tile_w) */
  LLVMValueRef lanew, stepw, activew, kstepw; /* compute phase: tid % tw, bdim / tw, tid < stepw * tw, * TILE_K */
  bool loaded[64];                    /* per buffer: some KI_LOAD reads it */
} Tile;

/* Shared index of tile point (a along d, c along the last dim). */
static LLVMValueRef sh_index(Lower *L, const Tile *t, LLVMValueRef a, LLVMValueRef c) {
  return LLVMBuildAdd(L->m.b, LLVMBuildMul(L->m.b, a, cg_iconst_i(L, t->tw + 1), ""), c, "");
}

static LLVMValueRef sh_ptr(Lower *L, Tile *t, int b, LLVMValueRef a, LLVMValueRef c) {
  LLVMTypeRef mt = cg_mem_type(&L->m, (LoomDType)L->k->bufs[b].dtype);
  LLVMValueRef ix = sh_index(L, t, a, c);
  return LLVMBuildGEP2(L->m.b, mt, t->sh[b], &ix, 1, "");
}

static LLVMValueRef tile_off(Lower *L, Tile *t, int b, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef bl = L->m.b;
  int nd = L->k->ndim;
  LLVMValueRef v = LLVMBuildAdd(bl, t->base[b], LLVMBuildMul(bl, a, L->stride[b * nd + t->d], ""), "");
  return LLVMBuildAdd(bl, v, LLVMBuildMul(bl, c, L->stride[b * nd + nd - 1], ""), "");
}

static LLVMValueRef clamp_below(Lower *L, LLVMValueRef i, LLVMValueRef n) {
  LLVMBuilderRef b = L->m.b;
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, i, n, ""), i, LLVMBuildSub(b, n, cg_iconst_i(L, 1), ""), "");
}

/* Load phase, columns c0 + k * step (k < TILE_K) of this thread's row a = lane: every tiled buffer's
 * points into shared memory, all loads issued before the stores (TILE_K loads in flight per buffer). A
 * column past the tile's edge reads and writes the last valid one again (the same value). */
static void tile_load_cols(Lower *L, LLVMValueRef c0, void *arg) {
  Tile *t = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef bl = L->m.b;
  LLVMValueRef c[TILE_K], v[TILE_K][64];
  for (int j = 0; j < TILE_K; j++)
    c[j] = clamp_below(L, LLVMBuildAdd(bl, c0, LLVMBuildMul(bl, t->step, cg_iconst_i(L, j), ""), ""), t->cols);
  for (int j = 0; j < TILE_K; j++)
    for (int b = 0; b < k->nbuf; b++) {
      if (!t->tiled[b]) continue;
      LoomDType st = (LoomDType)k->bufs[b].dtype;
      v[j][b] = LLVMBuildLoad2(bl, cg_mem_type(&L->m, st), cg_elem_ptr(L, b, tile_off(L, t, b, t->lane, c[j])), "");
      LLVMSetAlignment(v[j][b], dtype_align(st));
    }
  for (int j = 0; j < TILE_K; j++)
    for (int b = 0; b < k->nbuf; b++)
      if (t->tiled[b])
        LLVMSetAlignment(LLVMBuildStore(bl, v[j][b], sh_ptr(L, t, b, t->lane, c[j])),
                         dtype_align((LoomDType)k->bufs[b].dtype));
}

/* Whether buffer b is read ahead in the compute phase: loaded, contiguous along the last dim. */
static bool read_ahead(const Tile *t, const KernelIr *k, int b) {
  return t->tiled[b] || (k->bufs[b].layout[k->ndim - 1] == KL_ONE && t->loaded[b]);
}

/* Compute phase, rows a0 + k * step (k < TILE_K) of this thread's column c = lane: the tiled buffers'
 * values (shared memory) and the row-major ones' (global, coalesced) are read for every row first (a
 * row past the edge reads the last valid one), then each valid point is computed and stored. */
static void tile_point_rows(Lower *L, LLVMValueRef a0, void *arg) {
  Tile *t = arg;
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef bl = m->b;
  LLVMValueRef a[TILE_K], ac[TILE_K], v[TILE_K][64];
  for (int j = 0; j < TILE_K; j++) {
    a[j] = LLVMBuildAdd(bl, a0, LLVMBuildMul(bl, t->stepw, cg_iconst_i(L, j), ""), "");
    ac[j] = clamp_below(L, a[j], t->rows);
  }
  for (int j = 0; j < TILE_K; j++)
    for (int b = 0; b < k->nbuf; b++) {
      if (!read_ahead(t, k, b)) continue;
      LoomDType st = (LoomDType)k->bufs[b].dtype;
      LLVMValueRef p = t->tiled[b] ? sh_ptr(L, t, b, ac[j], t->lanew) : cg_elem_ptr(L, b, tile_off(L, t, b, ac[j], t->lanew));
      LLVMValueRef ld = LLVMBuildLoad2(bl, cg_mem_type(m, st), p, "");
      LLVMSetAlignment(ld, dtype_align(st));
      v[j][b] = LLVMBuildFreeze(bl, ld, ""); /* a use here: the load is not sunk to its guarded point */
    }
  for (int j = 0; j < TILE_K; j++) {
    LLVMBasicBlockRef then = cg_new_bb(L, "tile.point"), done = cg_new_bb(L, "tile.next");
    LLVMBuildCondBr(bl, LLVMBuildICmp(bl, LLVMIntSLT, a[j], t->rows, ""), then, done);
    LLVMPositionBuilderAtEnd(bl, then);
    for (int b = 0; b < k->nbuf; b++) {
      L->off[b] = tile_off(L, t, b, a[j], t->lanew);
      L->vload[b] = NULL;
      if (!read_ahead(t, k, b)) continue;
      LoomDType st = (LoomDType)k->bufs[b].dtype;
      L->vload[b] = cg_vec_set(m, st, LLVMGetUndef(cg_vec_type(m, st, 1)), v[j][b], 0); /* read as lane 0 */
    }
    L->lane = 0;
    L->lin = NULL; /* no point index in tiled kernels (cg_gpu_tile_dim) */
    cg_body_map(L, (void *)&k->phases[0]);
    for (int b = 0; b < k->nbuf; b++) L->vload[b] = NULL;
    LLVMBuildBr(bl, done);
    LLVMPositionBuilderAtEnd(bl, done);
  }
}

/* if (cond) body: the builder ends after it. */
static void build_if(Lower *L, LLVMValueRef cond, IdxBody body, LLVMValueRef i, void *arg) {
  LLVMBasicBlockRef then = cg_new_bb(L, "tile.then"), done = cg_new_bb(L, "tile.done");
  LLVMBuildCondBr(L->m.b, cond, then, done);
  LLVMPositionBuilderAtEnd(L->m.b, then);
  body(L, i, arg);
  LLVMBuildBr(L->m.b, done);
  LLVMPositionBuilderAtEnd(L->m.b, done);
}

static void load_loop(Lower *L, LLVMValueRef start, void *arg) {
  Tile *t = arg;
  cg_gpu_for(L, start, t->cols, t->kstep, tile_load_cols, t);
}
static void point_loop(Lower *L, LLVMValueRef start, void *arg) {
  Tile *t = arg;
  cg_gpu_for(L, start, t->rows, t->kstepw, tile_point_rows, t);
}

/* One tile (IdxBody over the tile index, uniform across the block: the barriers are reached by all). */
static void tile_item(Lower *L, LLVMValueRef tile, void *arg) {
  Tile *t = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  int nd = k->ndim, last = nd - 1, d = t->d;
  LLVMValueRef tj = LLVMBuildURem(b, tile, t->ntl, "tj");
  LLVMValueRef r = LLVMBuildUDiv(b, tile, t->ntl, "");
  LLVMValueRef ti = LLVMBuildURem(b, r, t->ntd, "ti");
  LLVMValueRef o = LLVMBuildUDiv(b, r, t->ntd, "");
  LLVMValueRef idx[LOOM_MAX_RANK];
  for (int e = last - 1; e >= 0; e--) { /* the batch index over the other dims, row-major */
    if (e == d) continue;
    bool first = true;
    for (int f = 0; f < e; f++) first &= f == d;
    if (first) {
      idx[e] = o;
    } else {
      idx[e] = LLVMBuildURem(b, o, L->shape[e], "");
      o = LLVMBuildUDiv(b, o, L->shape[e], "");
    }
  }
  LLVMValueRef i0 = LLVMBuildMul(b, ti, cg_iconst_i(L, TILE), ""), j0 = LLVMBuildMul(b, tj, cg_iconst_i(L, t->tw), "");
  for (int bi = 0; bi < k->nbuf; bi++) {
    LLVMValueRef v = LLVMBuildAdd(b, LLVMBuildMul(b, i0, L->stride[bi * nd + d], ""),
                                  LLVMBuildMul(b, j0, L->stride[bi * nd + last], ""), "");
    for (int e = 0; e < last; e++)
      if (e != d) v = LLVMBuildAdd(b, v, LLVMBuildMul(b, idx[e], L->stride[bi * nd + e], ""), "");
    t->base[bi] = v;
  }
  LLVMValueRef tl = cg_iconst_i(L, TILE), tw = cg_iconst_i(L, t->tw);
  LLVMValueRef rr = LLVMBuildSub(b, L->shape[d], i0, ""), rc = LLVMBuildSub(b, L->shape[last], j0, "");
  t->rows = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, rr, tl, ""), rr, tl, "rows");
  t->cols = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, rc, tw, ""), rc, tw, "cols");
  LLVMValueRef first = LLVMBuildUDiv(b, t->e->tid, tl, ""), firstw = LLVMBuildUDiv(b, t->e->tid, tw, "");
  /* (1) tiled buffers into shared memory: lanes along d */
  build_if(L, LLVMBuildAnd(b, t->active, LLVMBuildICmp(b, LLVMIntSLT, t->lane, t->rows, ""), ""), load_loop, first, t);
  L->m.gpu->barrier(&L->m);
  /* (2) the points: lanes along the last dim */
  build_if(L, LLVMBuildAnd(b, t->activew, LLVMBuildICmp(b, LLVMIntSLT, t->lanew, t->cols, ""), ""), point_loop, firstw, t);
  L->m.gpu->barrier(&L->m); /* the next tile overwrites the shared tiles */
}

void cg_gpu_elem_tiled(Lower *L, GpuEntry *e, int d, const uint8_t *tiled, LLVMValueRef bid, LLVMValueRef nbk,
                       LLVMValueRef gtid, LLVMValueRef gstride) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nd = k->ndim, last = nd - 1;
  LLVMValueRef sh[64];
  for (int bi = 0; bi < k->nbuf; bi++) {
    sh[bi] = NULL;
    if (!tiled[bi]) continue;
    char name[32];
    snprintf(name, sizeof name, "loom.tile.%d", bi);
    sh[bi] = cg_gpu_shared_array(L, name, cg_mem_type(m, (LoomDType)k->bufs[bi].dtype), TILE * (cg_gpu_tile_w() + 1), 16);
  }
  LLVMValueRef tmin = cg_iconst_i(L, TILE_MIN);
  LLVMValueRef big = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSGE, L->shape[d], tmin, ""),
                                  LLVMBuildICmp(b, LLVMIntSGE, L->shape[last], tmin, ""), "");
  /* blocks of fewer than tw threads would step 0 (blocks of 32 or 64 threads and tiles of 64 or 128
   * columns take the plain loop) */
  big = LLVMBuildAnd(b, big, LLVMBuildICmp(b, LLVMIntUGE, e->bdim, cg_iconst_i(L, cg_gpu_tile_w()), ""), "");
  LLVMBasicBlockRef tiles = cg_new_bb(L, "tile.grid"), plain = cg_new_bb(L, "tile.plain"), done = cg_new_bb(L, "tile.end");
  LLVMBuildCondBr(b, big, tiles, plain);
  LLVMPositionBuilderAtEnd(b, tiles);
  Tile t = {.e = e, .d = d, .tiled = tiled, .sh = sh, .tw = cg_gpu_tile_w()};
  LLVMValueRef tl = cg_iconst_i(L, TILE), tm1 = cg_iconst_i(L, TILE - 1), twv = cg_iconst_i(L, t.tw);
  t.ntl = LLVMBuildUDiv(b, LLVMBuildAdd(b, L->shape[last], cg_iconst_i(L, t.tw - 1), ""), twv, "ntl");
  t.ntd = LLVMBuildUDiv(b, LLVMBuildAdd(b, L->shape[d], tm1, ""), tl, "ntd");
  LLVMValueRef ntiles = LLVMBuildMul(b, t.ntl, t.ntd, "");
  for (int dd = 0; dd < last; dd++)
    if (dd != d) ntiles = LLVMBuildMul(b, ntiles, L->shape[dd], "");
  t.lane = LLVMBuildURem(b, e->tid, tl, "lane");
  t.step = LLVMBuildUDiv(b, e->bdim, tl, "step");
  t.active = LLVMBuildICmp(b, LLVMIntULT, e->tid, LLVMBuildMul(b, t.step, tl, ""), "");
  t.kstep = LLVMBuildMul(b, t.step, cg_iconst_i(L, TILE_K), "");
  t.lanew = LLVMBuildURem(b, e->tid, twv, "lanew");
  t.stepw = LLVMBuildUDiv(b, e->bdim, twv, "stepw");
  t.activew = LLVMBuildICmp(b, LLVMIntULT, e->tid, LLVMBuildMul(b, t.stepw, twv, ""), "");
  t.kstepw = LLVMBuildMul(b, t.stepw, cg_iconst_i(L, TILE_K), "");
  for (int bi = 0; bi < k->nbuf; bi++) t.loaded[bi] = loads_buf(k, bi);
  cg_gpu_for(L, bid, ntiles, nbk, tile_item, &t);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, plain);
  cg_gpu_for(L, gtid, LLVMBuildMul(b, e->no, e->nr, ""), gstride, cg_gpu_elem_point, NULL);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}
