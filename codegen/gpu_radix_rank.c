/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_rank.c: the radix kernels' per-key pieces -- the keys' order-preserving image and digits, the
 * peers of a digit in a wave -- and the pass kernel's shared-memory ranking (CgRadixSpec.smem_rank,
 * LOOM_GPU_RADIX_RANK=smem), an "early counts" order of the pass (gpu_radix.c's loom_radix_pass calls it
 * between loading the keys and the look-back).
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
 * Measured without a GPU (ptxas 13.0 -v, nvdisasm; `test_gpu_sort --dump-ptx DIR` with LOOM_GPU_RADIX_RANK
 * and LOOM_GPU_RADIX_ITEMS4 set; a key's cost = (a full tile's pass SASS at 16 keys a thread - at 8) / 8):
 * float32 82 SASS a key against the default's 87 (int32 78 / 81), a full tile 1568 SASS a thread against
 * 1696 with 8 bytes spilled instead of 36; argsort (4-byte index) 2440 / 2600 static, no spill instead of
 * 44 bytes; float64 1299 / 1452, no spill instead of 4. The digits stay packed four to a register from
 * step 1 to step 3. The cost: step 1's atomics conflict where many lanes of a wave share a digit (the top
 * byte of floats, small integers): a shared atomic serializes its lanes of one address.
 * LOOM_GPU_RADIX_RANK=atomic (CgRadixSpec.atomic_rank; cg_radix_wave_take): the default order with step 3's
 * returning atomic in place of the counter's load-add-store (no chain, no count conflicts): float32 a full
 * tile 1752 SASS with "chain" (12 bytes spilled); with peers first it spills 548 bytes (every item's work
 * overlaps), so time it as "atomic,chain".
 * Also here: the keys' order-preserving image and digits, and the peers' ballots (NVPTX), one PTX sequence a bit (4 SASS instead of LLVM's 7), used by
 * every ranking (the default's, the row sorts', this one).
 */
#include <stdio.h>

#include "codegen/gpu_radix_gen.h"

#define RADIX_DIGITS 256

/* ---- keys (gpu_radix_gen.h, gpu_radix.h) --------------------------------------------------------------- */
/* The order-preserving unsigned image of key k (bits of kt), xor desc (0 or all ones): integers with the
 * sign bit flipped; floats with the sign bit set on non-negatives and negatives negated (two's complement
 * of the bits: 2^(b-1) - |x|, so -0.0 and 0.0 meet at 2^(b-1)), and every NaN the largest image. Float32:
 * shift, one three-input logic op, subtract, NaN test and select (5 SASS on sm_90, 9 for the earlier form
 * that tested -0.0 apart); the pass computes it once a key (twice for integers), the histogram once. */
LLVMValueRef cg_radix_key_image(Gen *g, LLVMValueRef k, LLVMValueRef desc) {
  LoomDType t = g->spec.key;
  uint64_t sign = (uint64_t)1 << (g->kbits - 1);
  LLVMValueRef u = k;
  if (t == LOOM_INT8 || t == LOOM_INT16 || t == LOOM_INT32 || t == LOOM_INT64) {
    u = LLVMBuildXor(g->b, k, ck(g, sign), "");
  } else if (t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64) {
    LLVMValueRef neg = LLVMBuildAShr(g->b, k, ck(g, (unsigned)g->kbits - 1), ""); /* all ones on negatives */
    LLVMValueRef flip = LLVMBuildXor(g->b, k, LLVMBuildOr(g->b, neg, ck(g, sign), ""), "");
    u = LLVMBuildSub(g->b, flip, neg, ""); /* negatives: ~k + 1 = -k */
    LLVMValueRef nan;
    if (t == LOOM_FLOAT32 || t == LOOM_FLOAT64) { /* one unordered compare */
      LLVMTypeRef ft = t == LOOM_FLOAT32 ? LLVMFloatTypeInContext(g->m.c) : LLVMDoubleTypeInContext(g->m.c);
      LLVMValueRef x = LLVMBuildBitCast(g->b, k, ft, "");
      nan = LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, "");
    } else {
      uint64_t inf = t == LOOM_FLOAT16 ? 0x7c00u : 0x7f80u;
      nan = LLVMBuildICmp(g->b, LLVMIntUGT, LLVMBuildAnd(g->b, k, ck(g, sign - 1), ""), ck(g, inf), "");
    }
    u = sel(g, nan, LLVMConstAllOnes(g->kt), u);
  }
  return LLVMBuildXor(g->b, u, desc, "");
}

/* Digit (i32) of an image at bit `shift` (a kt value). */
LLVMValueRef cg_radix_digit(Gen *g, LLVMValueRef u, LLVMValueRef shift) {
  LLVMValueRef v = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, u, shift, ""), ck(g, RADIX_DIGITS - 1), "");
  return LLVMBuildZExtOrBitCast(g->b, g->kbits > 32 ? LLVMBuildTrunc(g->b, v, g->i32, "") : v, g->i32, "");
}

LLVMValueRef cg_radix_desc_of(Gen *g, LLVMValueRef desc64) {
  return g->kbits == 64 ? desc64 : LLVMBuildTrunc(g->b, desc64, g->kt, "");
}

bool cg_radix_stages_digits(const CgRadixSpec *spec) {
  LoomDType t = spec->key;
  return !spec->legacy && !spec->take && !spec->rows &&
         (t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64);
}

/* ---- ranking -------------------------------------------------------------------------------------------- */

/* NVPTX: the lanes whose bit `bit` of dig (i32) equals this lane's, as one PTX sequence (bit test into a
 * predicate, the ballot of it, the ballot inverted under the predicate): 4 instructions a bit on sm_90
 * where LLVM's shift-truncate-select form assembles to 7 (the ballots are most of a key's ranking). A
 * convergent call: every lane of the wave takes part. */
static LLVMValueRef nv_bit_peers(Gen *g, LLVMValueRef dig, int bit) {
  char code[200];
  int n = snprintf(code, sizeof code,
                   "{\n.reg .pred p;\n.reg .b32 t;\nand.b32 t, $1, %u;\nsetp.ne.u32 p, t, 0;\n"
                   "vote.sync.ballot.b32 $0, p, -1;\n@!p not.b32 $0, $0;\n}",
                   1u << bit);
  static const char cons[] = "=r,r";
  LLVMTypeRef fty = LLVMFunctionType(g->i32, &g->i32, 1, 0);
  LLVMValueRef asm_ = LLVMGetInlineAsm(fty, code, (size_t)n, (char *)cons, sizeof cons - 1, 0, 0,
                                       LLVMInlineAsmDialectATT, 0);
  LLVMValueRef call = LLVMBuildCall2(g->b, fty, asm_, &dig, 1, "");
  unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10);
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(g->m.c, kind, 0));
  return call;
}

/* The wave's lanes whose item has digit dig (i32; ok: it is a key) -- the lane mask (mt) of its peers: one
 * match-any where the target has it (NVPTX, unless CgRadixSpec.ballot_rank), else 8 ballots. Every lane of
 * the wave takes part. */
LLVMValueRef cg_radix_wave_peers(Gen *g, LLVMValueRef ok, LLVMValueRef dig) {
  if (g->h.match_any && !g->spec.ballot_rank) /* one instruction; an invalid lane matches no digit (256) */
    return g->h.match_any(&g->m, sel(g, ok, dig, c32(g, RADIX_DIGITS)));
  LLVMValueRef peers = g->h.ballot(&g->m, ok);
  for (int bit = 0; bit < 8; bit++) {
    if (!g->spec.amdgpu && g->spec.wave == 32) {
      peers = LLVMBuildAnd(g->b, peers, nv_bit_peers(g, dig, bit), "");
      continue;
    }
    LLVMValueRef set = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, dig, c32(g, (unsigned)bit), ""), g->i1, "");
    LLVMValueRef v = g->h.ballot(&g->m, set);
    peers = LLVMBuildAnd(g->b, peers, sel(g, set, v, LLVMBuildNot(g->b, v, "")), "");
  }
  return peers;
}


/* v (i32) of lane `src` (i32, < wave) of the wave; every lane of the wave takes part. */
static LLVMValueRef shuffle_idx(Gen *g, LLVMValueRef v, LLVMValueRef src) {
  if (g->spec.amdgpu) { /* ds_bpermute: byte address of the source lane */
    LLVMValueRef a[2] = {LLVMBuildShl(g->b, src, c32(g, 2), ""), v};
    return cg_intrinsic(&g->m, "llvm.amdgcn.ds.bpermute", NULL, 0, a, 2);
  }
  LLVMValueRef a[4] = {c32(g, 0xffffffffu), v, src, c32(g, 31)};
  return cg_intrinsic(&g->m, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, a, 4);
}

/* The peers' slots taken from the wave's counter of their digit (wc: the wave's 256 counters) by one
 * returning atomic of the highest peer, shuffled to the others: the item's rank among the wave's items of
 * its digit, as gpu_radix.c's wave_count gives it, with no load-add-store chain from item to item. */
LLVMValueRef cg_radix_wave_take(Gen *g, LLVMValueRef ok, LLVMValueRef dig, LLVMValueRef peers, LLVMValueRef lane,
                                LLVMValueRef wc) {
  LLVMTypeRef mt = g->mt;
  unsigned W = (unsigned)g->spec.wave;
  LLVMValueRef le = LLVMBuildSub(g->b, LLVMBuildShl(g->b, LLVMConstInt(mt, 2, 0), LLVMBuildZExtOrBitCast(g->b, lane, mt, ""), ""),
                                 LLVMConstInt(mt, 1, 0), ""); /* lanes at or below this one */
  LLVMValueRef low = LLVMBuildAnd(g->b, peers, le, "");
  LLVMValueRef n = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctpop", &mt, 1, &low, 1), g->i32, "");
  LLVMValueRef za[2] = {peers, LLVMConstInt(g->i1, 0, 0)};
  LLVMValueRef lz = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctlz", &mt, 1, za, 2), g->i32, "");
  LLVMValueRef top = LLVMBuildAnd(g->b, LLVMBuildSub(g->b, c32(g, W - 1), lz, ""), c32(g, W - 1), "");
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef after = if_begin(g, LLVMBuildAnd(g->b, ok, eq(g, top, lane), ""));
  LLVMValueRef got = atomic_add(g, at(g, g->i32, wc, dig), n); /* n: all the peers, on the highest */
  LLVMBasicBlockRef took = LLVMGetInsertBlock(g->b);
  if_end(g, after);
  LLVMValueRef old = LLVMBuildPhi(g->b, g->i32, "");
  LLVMValueRef ov[2] = {c32(g, 0), got};
  LLVMBasicBlockRef ob[2] = {from, took};
  LLVMAddIncoming(old, ov, ob, 2);
  return LLVMBuildSub(g->b, add(g, shuffle_idx(g, old, top), n), c32(g, 1), "");
}

void cg_radix_smem_rank(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef hcount, LLVMValueRef stage_v,
                        LLVMValueRef *run, LLVMValueRef *tstart, LLVMValueRef *rstart) {
  int I = g->sh.items;
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
  for (int j = 0; j < I; j++) {
    dig[j] = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, pin(g, packed[j / 4]), c32(g, (unsigned)(8 * (j % 4))), ""),
                          c32(g, RADIX_DIGITS - 1), "");
    pos[j] = cg_radix_wave_take(g, s->ok[j], dig[j], cg_radix_wave_peers(g, s->ok[j], dig[j]), s->lane, wc);
    LLVMBasicBlockRef staged = if_begin(g, s->ok[j]);
    store(g, s->key[j], at(g, g->kt, s->stage, pos[j]), kb);
    if (s->stage_d) store(g, LLVMBuildTrunc(g->b, dig[j], g->i8, ""), at(g, g->i8, s->stage_d, pos[j]), 1);
    if_end(g, staged);
  }
  if (g->spec.value_bytes) cg_radix_stage_values(g, s, stage_v, s->ok, pos);
}
