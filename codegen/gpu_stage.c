/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_stage.c: staged short rows, the scalar cached entry's thread-per-row mode through shared memory
 * (codegen.h: CG_GPU_STAGE, cg_gpu_stage_mask). A thread per row of 7 float32 points read its row with 7
 * loads 28 bytes apart: each warp load touched 7 lines for 128 useful bytes, and the stores likewise
 * (l1_normalize_short, 10^7 x 7 on the H100: 0.65 ms, XLA 0.24). Here the block copies its tile of rows
 * (bdim * (cache_k / nr) rows, one after another in memory) of every staged buffer it loads into shared
 * memory with coalesced loads, each thread walks its rows (cg_gpu_red_item's serial walk, its loads and
 * stores addressing the tiles; buffers not staged as they are), and the tiles of the stored buffers go
 * back with coalesced stores. The walk folds a row's points in order into one accumulator, as the
 * unstaged mode does: the same bits (a kept costly value, softmax's exp, is computed again by the map). */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

/* LOOM_GPU_STAGE_ROWS=0: no staged path is compiled (A/B timings; the launcher's flag is then ignored). */
static bool stage_off(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_STAGE_ROWS", 1) == 0;
}


static bool buf_stored(const KernelIr *k, int bi) {
  for (int s = 0; s < k->nstore; s++)
    if (k->stores[s].buf == bi) return true;
  return false;
}

uint64_t cg_gpu_stage_bufs(const Lower *L) {
  const KernelIr *k = L->k;
  if (stage_off() || k->snippet || cg_kernel_addresses_by_value(k) || k->nbuf > 64 || k->nbuf < 1) return 0;
  int sizes[64];
  for (int bi = 0; bi < k->nbuf; bi++) sizes[bi] = (int)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
  uint64_t mask = cg_gpu_stage_mask(k->bufs, sizes, k->nbuf, k->ndim, k->nkeep, L->cache_k), used = 0;
  for (int bi = 0; bi < k->nbuf; bi++)
    if ((mask >> bi & 1u) && (cg_kernel_loads(k, bi) || buf_stored(k, bi))) used |= 1ull << bi;
  return used;
}

typedef struct GpuStage {
  GpuEntry e;               /* the row walk's: a thread per O point (as a COL `main`) */
  LLVMValueRef tid, bdim;   /* the thread in its block; the block (rows a tile) */
  uint64_t in, out;         /* staged buffers copied in (loaded) and out (stored) */
  LLVMValueRef tile[64];    /* each staged buffer's tile (shared memory) */
  LLVMValueRef global[64];  /* ... and its global base */
  LLVMValueRef first, count; /* the tile's first element (row base * nr) and its elements */
  LLVMValueRef per;          /* rows a thread (cache_k / nr: the tile fills its cache_k points a thread) */
  LLVMValueRef tile_rows;    /* rows a tile: bdim * per */
  LLVMValueRef base;         /* the tile's first row */
} GpuStage;

#define STAGE_VECS 4 /* 16-byte vectors a thread copies per step (their loads issued before their stores) */

static LLVMValueRef elem_gep(Lower *L, LLVMTypeRef t, LLVMValueRef p, LLVMValueRef idx) {
  return LLVMBuildGEP2(L->m.b, t, p, &idx, 1, "");
}

static LLVMValueRef tile_ptr(Lower *L, int bi, LLVMValueRef tile, LLVMValueRef idx) {
  return elem_gep(L, cg_mem_type(&L->m, (LoomDType)L->k->bufs[bi].dtype), tile, idx);
}

/* One buffer's copy: the tile's n units (16-byte vectors of `lanes` points, or points when lanes is 1)
 * from global memory to its shared tile (copy_in) or back. */
typedef struct StageCopy {
  GpuStage *s;
  int bi;
  unsigned lanes;
  LLVMValueRef n;
  bool copy_in;
} StageCopy;

/* Units i + u * bdim (u < STAGE_VECS; points: u < 1) below n, clamped to the last (a repeated copy of
 * the same value). */
static void stage_copy_step(Lower *L, LLVMValueRef i, void *arg) {
  StageCopy *c = arg;
  GpuStage *s = c->s;
  LLVMBuilderRef b = L->m.b;
  LoomDType st = (LoomDType)L->k->bufs[c->bi].dtype;
  int units = c->lanes > 1 ? STAGE_VECS : 1;
  LLVMTypeRef t = c->lanes > 1 ? cg_vec_type(&L->m, st, c->lanes) : cg_mem_type(&L->m, st);
  unsigned align = c->lanes > 1 ? 16 : dtype_align(st);
  LLVMValueRef global = tile_ptr(L, c->bi, s->global[c->bi], s->first), last = LLVMBuildSub(b, c->n, cg_iconst_i(L, 1), "");
  LLVMValueRef ptr[2][STAGE_VECS], v[STAGE_VECS];
  for (int u = 0; u < units; u++) {
    LLVMValueRef x = u ? LLVMBuildAdd(b, i, LLVMBuildMul(b, s->bdim, cg_iconst_i(L, u), ""), "") : i;
    x = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, c->n, ""), x, last, "");
    ptr[0][u] = elem_gep(L, t, global, x);
    ptr[1][u] = elem_gep(L, t, s->tile[c->bi], x);
  }
  for (int u = 0; u < units; u++) {
    v[u] = LLVMBuildLoad2(b, t, ptr[c->copy_in ? 0 : 1][u], "");
    LLVMSetAlignment(v[u], align);
  }
  for (int u = 0; u < units; u++) LLVMSetAlignment(LLVMBuildStore(b, v[u], ptr[c->copy_in ? 1 : 0][u]), align);
}

/* Each buffer's tile in 16-byte vectors, then its last points (fewer than a vector) one a thread. */
static void stage_copy(Lower *L, GpuStage *s, bool copy_in) {
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  uint64_t which = copy_in ? s->in : s->out;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (!(which >> bi & 1u)) continue;
    unsigned lanes = 16u / (unsigned)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    /* vectors where the tile starts on 16 bytes (the launcher's blocks, multiples of 32 threads, make every
     * tile do so when the base does); else every point one a thread */
    LLVMValueRef at = LLVMBuildPtrToInt(b, tile_ptr(L, bi, s->global[bi], s->first), L->i64, "");
    LLVMValueRef aligned = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, at, cg_i64(&L->m, 15), ""), cg_i64(&L->m, 0), "");
    LLVMValueRef nv = LLVMBuildSelect(b, aligned, LLVMBuildUDiv(b, s->count, cg_iconst_i(L, lanes), ""), cg_iconst_i(L, 0), "");
    StageCopy vc = {.s = s, .bi = bi, .lanes = lanes, .n = nv, .copy_in = copy_in};
    cg_gpu_for(L, s->tid, nv, LLVMBuildMul(b, s->bdim, cg_iconst_i(L, STAGE_VECS), ""), stage_copy_step, &vc);
    StageCopy pc = {.s = s, .bi = bi, .lanes = 1, .n = s->count, .copy_in = copy_in};
    LLVMValueRef tail = LLVMBuildAdd(b, LLVMBuildMul(b, nv, cg_iconst_i(L, lanes), ""), s->tid, "");
    cg_gpu_for(L, tail, s->count, s->bdim, stage_copy_step, &pc);
  }
}

/* Row base + tid + i * bdim of the tile, thread tid's i-th, when it exists: walked by the thread alone
 * (cg_gpu_red_item's serial walk: each phase a loop over the row's points in the tile, one accumulator;
 * no registers a point, so this path adds little code and no registers to the entry). */
static void stage_row(Lower *L, LLVMValueRef i, void *arg) {
  GpuStage *s = arg;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef o = LLVMBuildAdd(b, s->base, LLVMBuildAdd(b, s->tid, LLVMBuildMul(b, i, s->bdim, ""), ""), "");
  LLVMBasicBlockRef yes = cg_new_bb(L, "stage.row"), after = cg_new_bb(L, "stage.row.after");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, o, s->e.no, ""), yes, after);
  LLVMPositionBuilderAtEnd(b, yes);
  cg_gpu_red_item(L, o, &s->e);
  LLVMBuildBr(b, after);
  LLVMPositionBuilderAtEnd(b, after);
}

/* One tile: the block's rows base .. base + per * bdim - 1 (those below no). The loop over tiles is
 * uniform over the block (its barriers). */
static void stage_tile(Lower *L, LLVMValueRef base, void *arg) {
  GpuStage *s = arg;
  const KernelIr *k = L->k;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef left = LLVMBuildSub(b, s->e.no, base, "");
  LLVMValueRef rows = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, s->tile_rows, ""), left, s->tile_rows, "");
  s->first = LLVMBuildMul(b, base, s->e.nr, "");
  s->count = LLVMBuildMul(b, rows, s->e.nr, "");
  if (s->in) stage_copy(L, s, true);
  L->m.gpu->barrier(&L->m); /* the tiles are in; the last tile's stores are out */
  LLVMValueRef saved[64];
  LLVMValueRef neg = LLVMBuildNeg(b, s->first, "");
  for (int bi = 0; bi < k->nbuf; bi++) { /* the item's offsets (o * nr + r) address the tile */
    saved[bi] = L->base[bi];
    if ((s->in | s->out) >> bi & 1u) L->base[bi] = tile_ptr(L, bi, s->tile[bi], neg);
  }
  s->base = base;
  cg_gpu_for(L, cg_iconst_i(L, 0), s->per, cg_iconst_i(L, 1), stage_row, s);
  for (int bi = 0; bi < k->nbuf; bi++) L->base[bi] = saved[bi];
  L->m.gpu->barrier(&L->m); /* every row is done with the loaded tiles and has written its stored ones */
  if (s->out) stage_copy(L, s, false);
}

void cg_gpu_stage_rows(Lower *L, const GpuEntry *e, uint64_t mask, LLVMValueRef bid, LLVMValueRef nbk) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  GpuStage s;
  memset(&s, 0, sizeof s);
  s.e = (GpuEntry){.which = GPU_MAIN, .row = false, .no = e->no, .nr = e->nr, .nparts = e->nparts,
                    .partials = e->partials, .tid = cg_iconst_i(L, 0), .bdim = cg_iconst_i(L, 1)};
  s.tid = e->tid;
  s.bdim = e->bdim;
  for (int bi = 0; bi < k->nbuf; bi++) {
    if (!(mask >> bi & 1u)) continue;
    if (cg_kernel_loads(k, bi)) s.in |= 1ull << bi;
    if (buf_stored(k, bi)) s.out |= 1ull << bi;
    char name[32];
    snprintf(name, sizeof name, "loom.stage.%d", bi);
    s.tile[bi] = cg_gpu_shared_array(L, name, cg_mem_type(m, (LoomDType)k->bufs[bi].dtype),
                                     (uint64_t)CG_STAGE_BLOCK * (uint64_t)L->cache_k, 16);
    s.global[bi] = L->base[bi];
  }
  s.per = LLVMBuildUDiv(b, cg_iconst_i(L, L->cache_k), e->nr, ""); /* (the entry runs it for 1 <= nr <= cache_k) */
  s.tile_rows = LLVMBuildMul(b, s.bdim, s.per, "");
  L->gpu_loops_rolled = true; /* rows of a few points: LLVM's unrolling of the walks only added code */
  cg_gpu_for(L, LLVMBuildMul(b, bid, s.tile_rows, ""), e->no, LLVMBuildMul(b, nbk, s.tile_rows, ""), stage_tile, &s);
  L->gpu_loops_rolled = false;
}
