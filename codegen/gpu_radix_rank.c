/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_rank.c: the pass kernel's shared-memory ranking (CgRadixSpec.smem_rank, LOOM_GPU_RADIX_RANK=smem),
 * an "early counts" order of the pass (gpu_radix.c's loom_radix_pass calls it between loading the keys
 * and the look-back).
 *
 * Why. The default ranking (gpu_radix.c: wave_count) keeps one running counter per digit and wave in
 * shared memory that the highest lane of each item's peers loads, adds to and stores back, with a warp
 * sync on each side: the items of a wave are one dependent chain (a shared load's latency, ~30 cycles,
 * per item: 16 items a tile), and the slots come out as ranks within the wave that the staging turns into
 * tile slots with two more shared loads an item (the digit's tile start and the wave's prefix).
 *
 * What this does instead, per tile:
 *  1. counts: each lane adds 1 to its wave's counter of each item's digit (a non-returning shared atomic
 *     an item, red.shared.add; no chain, nothing waits on it);
 *  2. barrier; thread d sums digit d over the waves (the tile's count: published at once for the
 *     look-back, earlier than the default, which publishes after ranking), scans it over digits (the tile
 *     start) and rewrites the waves' counters into each wave's first tile slot of d: tile start + the
 *     earlier waves' counts;
 *  3. barrier; per item: its peers (ballots or match.any, as the default), the highest peer adds the
 *     peers' count to the wave's counter by one returning shared atomic and shuffles the old value to
 *     its peers; the slot is old + (peers at or below the lane) - 1, final in the tile, and the key (and
 *     value) is staged there at once. Items are independent: the atomics of consecutive items pipeline
 *     (shared-memory atomics of one wave are performed in issue order, and the shuffle's full-wave sync
 *     orders item j's atomic before item j+1's, which keeps the rank stable).
 * Instructions per key (4-byte keys, against the default): + 1 atomic and its address in step 1; - the
 * counter load, two warp syncs, a population count and the rank's packing and unpacking; - the staging's
 * two shared loads and adds; + count-leading-zeros and a shuffle. About 10 fewer an item, and no item
 * waits on the previous one. The digit of each item stays in a register from step 1 to step 3 (I more
 * live registers through the scans; the default keeps a packed word per item through its barriers).
 */
#include "codegen/gpu_radix_gen.h"

#define RADIX_DIGITS 256

/* v (i32) of lane `src` (i32, < wave) of the wave; every lane of the wave takes part. */
static LLVMValueRef shuffle_idx(Gen *g, LLVMValueRef v, LLVMValueRef src) {
  if (g->spec.amdgpu) { /* ds_bpermute: byte address of the source lane */
    LLVMValueRef a[2] = {LLVMBuildShl(g->b, src, c32(g, 2), ""), v};
    return cg_intrinsic(&g->m, "llvm.amdgcn.ds.bpermute", NULL, 0, a, 2);
  }
  LLVMValueRef a[4] = {c32(g, 0xffffffffu), v, src, c32(g, 31)};
  return cg_intrinsic(&g->m, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, a, 4);
}

void cg_radix_smem_rank(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef hcount, LLVMValueRef stage_v,
                        LLVMValueRef *run, LLVMValueRef *tstart, LLVMValueRef *rstart) {
  int I = g->sh.items, W = g->spec.wave;
  unsigned kb = (unsigned)g->kbits / 8;
  LLVMValueRef wc = at(g, g->i32, s->wc, mul(g, s->warp, c32(g, RADIX_DIGITS))); /* the wave's counters */
  LLVMValueRef dig[CG_RADIX_MAX_ITEMS], pos[CG_RADIX_MAX_ITEMS], packed[CG_RADIX_MAX_ITEMS / 4];

  /* 1. the wave's digit counts (an item that is no key adds 0); the digits kept four to a register
   * through the scans (16 live registers instead of 4 spill at 64) */
  for (int j = 0; j < I; j++) {
    LLVMValueRef d = cg_radix_digit(g, cg_radix_key_image(g, s->key[j], s->desc), s->shift);
    atomic_add(g, at(g, g->i32, wc, d), LLVMBuildZExt(g->b, s->ok[j], g->i32, ""));
    LLVMValueRef sh = LLVMBuildShl(g->b, d, c32(g, (unsigned)(8 * (j % 4))), "");
    packed[j / 4] = j % 4 ? LLVMBuildOr(g->b, packed[j / 4], sh, "") : sh;
  }
  g->h.barrier(&g->m);

  /* 2. thread d: the tile's count of d (published), its tile start and the row's start of d; each wave's
   * counter of d becomes that wave's first slot of d in the tile */
  LLVMValueRef cnt[CG_RADIX_BLOCK / 32], total = c32(g, 0);
  for (int w = 0; w < g->nwarps; w++) {
    cnt[w] = load(g, g->i32, at(g, g->i32, s->wc, add(g, s->tid, c32(g, (unsigned)(w * RADIX_DIGITS)))), 4);
    total = add(g, total, cnt[w]);
  }
  cg_radix_publish_count(g, s, tile, total);
  *run = total;
  *tstart = cg_radix_block_scan(g, total, s->tid, s->wsum);
  *rstart = cg_radix_block_scan(g, hcount, s->tid, s->wsum);
  LLVMValueRef first = *tstart;
  for (int w = 0; w < g->nwarps; w++) {
    store(g, first, at(g, g->i32, s->wc, add(g, s->tid, c32(g, (unsigned)(w * RADIX_DIGITS)))), 4);
    first = add(g, first, cnt[w]);
  }
  g->h.barrier(&g->m);

  /* 3. each item's tile slot: the highest peer takes the peers' slots from the wave's counter */
  LLVMTypeRef mt = g->mt;
  LLVMValueRef le = LLVMBuildSub(g->b, LLVMBuildShl(g->b, LLVMConstInt(mt, 2, 0), LLVMBuildZExtOrBitCast(g->b, s->lane, mt, ""), ""),
                                 LLVMConstInt(mt, 1, 0), ""); /* lanes at or below this one */
  for (int j = 0; j < I; j++) {
    dig[j] = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, pin(g, packed[j / 4]), c32(g, (unsigned)(8 * (j % 4))), ""),
                          c32(g, RADIX_DIGITS - 1), "");
    LLVMValueRef peers = cg_radix_wave_peers(g, s->ok[j], dig[j]);
    LLVMValueRef low = LLVMBuildAnd(g->b, peers, le, "");
    LLVMValueRef n = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctpop", &mt, 1, &low, 1), g->i32, "");
    LLVMValueRef za[2] = {peers, LLVMConstInt(g->i1, 0, 0)};
    LLVMValueRef lz = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctlz", &mt, 1, za, 2), g->i32, "");
    LLVMValueRef top = LLVMBuildAnd(g->b, LLVMBuildSub(g->b, c32(g, (unsigned)W - 1), lz, ""), c32(g, (unsigned)W - 1), "");
    LLVMValueRef leader = LLVMBuildAnd(g->b, s->ok[j], eq(g, top, s->lane), "");
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef after = if_begin(g, leader);
    LLVMValueRef got = atomic_add(g, at(g, g->i32, wc, dig[j]), n); /* n: all the peers, on the highest */
    LLVMBasicBlockRef took = LLVMGetInsertBlock(g->b);
    if_end(g, after);
    LLVMValueRef old = LLVMBuildPhi(g->b, g->i32, "");
    LLVMValueRef ov[2] = {c32(g, 0), got};
    LLVMBasicBlockRef ob[2] = {from, took};
    LLVMAddIncoming(old, ov, ob, 2);
    pos[j] = LLVMBuildSub(g->b, add(g, shuffle_idx(g, old, top), n), c32(g, 1), "");
    LLVMBasicBlockRef staged = if_begin(g, s->ok[j]);
    store(g, s->key[j], at(g, g->kt, s->stage, pos[j]), kb);
    if_end(g, staged);
  }
  if (g->spec.value_bytes) cg_radix_stage_values(g, s, stage_v, s->ok, pos);
}
