/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix.c: the device radix sort's library kernels (gpu_radix.h), written once as LLVM IR against
 * a GPU target's lowering hooks (cg_gpu.h: launch indices, wave ballots and shuffles, barriers, kernel
 * marking, address spaces), so one generator serves NVPTX (wave 32) and AMDGPU (wave 64).
 *
 * Approach: a least-significant-digit radix sort, 8-bit digits (256 buckets: one per thread of a
 * 256-thread block in the scans, and 1 to 8 passes for 1- to 8-byte keys), one sweep kernel per pass
 * in the manner of a single-pass ("onesweep") design:
 *  1. loom_radix_histogram reads the keys once and counts the digits of every pass per row (a block
 *     over several tiles of a row gathers counts in shared memory, then adds them to the row's).
 *  2. loom_radix_pass, per pass: a tile of `tile` keys per block, taken in launch order from an atomic
 *     counter (a tile only waits for tiles taken before it, which are running: no deadlock). Each wave
 *     reads its own run of the tile (warp-striped: item j of lane l is element j * wave + l of the run,
 *     so the run is in (j, l) order); per item the lanes with the same digit find each other (one
 *     match-any where the target has it, NVPTX; else 8 ballots, one per digit bit), the highest of
 *     them adds their count to the wave's counter of that digit in shared memory, and each lane's
 *     rank among equal digits is the counter before plus its lower peers: stable within the wave. Counters are then summed over waves (in wave order: stable in the tile)
 *     and scanned over digits (tile_start). Thread d publishes the tile's count of digit d (flag 1)
 *     as soon as the waves' counts are summed; the keys (and values, read only now) are staged in
 *     shared memory in tile order (tile_start + wave prefix + rank); then thread d looks back over
 *     earlier tiles of the row adding flag-1 counts until a flag-2 (inclusive) one, and publishes its
 *     inclusive count (flag 2); flag and count share one 32-bit word, so a reader sees both or
 *     neither. The staged tile is written out block-striped, so that consecutive threads write
 *     consecutive slots of one bucket: row * n + hist_start[d] + earlier[d] + (slot - tile_start[d]),
 *     values beside their keys. No key is held in a register while the tile waits for earlier ones,
 *     and after ranking an item is one word (rank | digit << 16): 64 registers a thread, 4 blocks a
 *     multiprocessor on sm_90 (launch bounds; ptxas -v: at most 16 bytes spilled).
 *     CgRadixSpec.legacy keeps the first design for A/B (publish after the scans, look-back, then
 *     staging; values in a second round through the keys' staging memory; 91-136 registers).
 *  3. Trivial passes (one digit holds all of a row's keys: the stable pass is the identity) are skipped on
 *     the device from the histogram's counts: loom_radix_plan, loom_radix_copy (gpu_radix_plan.c).
 * Keys keep their bits; digits come from an order-preserving image computed on every load (a few
 * integer operations), so no pass transforms or restores keys.
 *
 * Roofline (H200: ~3.5 TB/s of HBM a copy reaches; 132 SMs x 4 schedulers x ~1.98 GHz = 1.05e12 warp
 * instructions/s). Bytes per key per pass: the key read and written (float32 8 B, float64 16 B, uint8
 * 2 B); argsort's int32 index adds 4 read (not on pass 0, which makes it) and 4 written (8 on the last
 * pass: the int64 output); the histogram reads every key once for all passes. 2^26 float32: 4 x 0.54 +
 * 0.27 GB = 2.4 GB, 0.69 ms; float32 argsort 68 B a key, 1.3 ms; float64 8 x 1.07 + 0.54 GB, 2.6 ms.
 * Instructions (PTX of loom_radix_pass for sm_90, the difference between 8 and 16 keys a thread): 82 a
 * key a pass for 4-byte keys alone (load, image, digit, match, two popc, counter load and store, stage,
 * the digit again at the write-out, store), 114 with argsort's index, 83 for float64; + ~240 a thread a
 * tile (scans, publishing, look-back): 15 a key at 4096-key tiles, 30 at 2048; 8 ballots instead of
 * match.any add 67. A float32 pass issues 2^26 x 97 / (32 x 1.05e12) = 0.19 ms against 0.15 ms of
 * memory: both bounds meet, so the roofline needs them overlapped. Measured (2026-12-02): 2.63 ms for
 * the sort, ~0.6 ms a pass, 3-4x either bound: the pass is latency-bound. A wave's ranking is one
 * dependent chain of `items` steps (counter load -> add -> store -> warp sync, and, ranked per item,
 * the match before it) hidden by 32 resident warps a multiprocessor, and each digit thread's look-back
 * is a chain of global loads. Occupancy (ptxas -v; test_gpu_sort --ptxas-report): the default tiles
 * take 64 registers (4 blocks x 256 threads fill the 64K register file; sort 0 bytes spilled, argsort
 * 8), 27.7 KB (sort) / 44.1 KB (argsort) of shared memory: registers, not shared memory, cap it at 32
 * warps; a bound of 3 blocks gives 80 registers (24 warps), 2 gives 115-128 (16); 24-32 keys a thread
 * at 4 blocks spill 36-152 bytes. So the levers are the chain (its length, what is on it) and the tile
 * size (the per-tile cost), not occupancy.
 * 2026-12-03, SASS (ptxas 13.0 + nvdisasm; test_gpu_sort --dump-ptx), float32, 16 keys a thread, a full
 * tile: ballots as one PTX sequence a bit (gpu_radix_rank.c: 4 SASS a bit, not 7), the 5-SASS float image,
 * full tiles written without per-item bounds or 64-bit bucket bases, and float keys' digits staged as a
 * byte beside them take a key's pass from 130 SASS to 87 (int32 117 -> 81); LOOM_GPU_RADIX_RANK=smem
 * (gpu_radix_rank.c: early counts, no chain) 82 (int32 78), 8 bytes spilled instead of 36 (argsort,
 * float64: none instead of 44 and 4).
 * Choice from this: peers first (CgRadixSpec.peers_first: every item's peers before the counters' chain)
 * for keys alone, ballots (bench/results/2026-12-02-1652-sort-sweep-h200.md); smem to be timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>

#include "codegen/amdgpu.h"
#include "codegen/gpu_radix_gen.h"

#define RADIX_DIGITS 256
#define STATUS_COUNT_MASK 0x3fffffffu
#define STATUS_AGGREGATE (1u << 30) /* the tile's own count */
#define STATUS_PREFIX (2u << 30)    /* the count of the row's tiles up to this one, inclusive */

bool cg_radix_key_ok(LoomDType t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_INT16: case LOOM_INT32: case LOOM_INT64: case LOOM_UINT8:
  case LOOM_UINT16: case LOOM_UINT32: case LOOM_UINT64: case LOOM_FLOAT16: case LOOM_BFLOAT16: case LOOM_FLOAT32:
  case LOOM_FLOAT64:
    return true;
  default:
    return false;
  }
}

/* An integer environment setting in [lo, hi], else 0 (the default). */
static int env_int(const char *name, int lo, int hi) {
  const char *e = getenv(name);
  if (!e || !*e) return 0;
  char *end;
  long v = strtol(e, &end, 10);
  return *end == '\0' && v >= lo && v <= hi ? (int)v : 0;
}

void cg_radix_tuning(CgRadixSpec *spec) {
  int kb = spec->take ? 0 : dtype_bits(spec->key) / 8, widest = kb > spec->value_bytes ? kb : spec->value_bytes;
  spec->items = env_int(widest <= 4 ? "LOOM_GPU_RADIX_ITEMS4" : "LOOM_GPU_RADIX_ITEMS8", 1, CG_RADIX_MAX_ITEMS);
  spec->blocks_per_sm = env_int("LOOM_GPU_RADIX_BLOCKS_PER_SM", 1, 8);
  spec->hist_parts = env_int("LOOM_GPU_RADIX_HIST_PARTS", 1, 8);
  /* words of LOOM_GPU_RADIX_RANK: "match" (match.any instead of ballots), "early" or "chain"; peers first by default for keys alone
   * (ptxas: the same instructions and 64 registers without spills, the matches out of the wave's
   * dependent chain; with values beside the keys it spills, so they keep the chain) */
  /* ranks by ballots unless "match" is asked for: on sm_90 the 8 ballots beat match.any on every sort
   * of the 2026-12-02 sweep (bench/results/2026-12-02-1652-sort-sweep-h200.md: f32 2^26 0.72x -> 0.77x
   * CuPy, i32 0.64x -> 0.83x, argsort 1.00x -> 1.07x, f64 0.69x -> 0.76x) */
  const char *r = getenv("LOOM_GPU_RADIX_RANK");
  spec->ballot_rank = !(r && strstr(r, "match"));
  /* peers first only for 8-byte keys alone: after the 4-instruction ballots and the 5-instruction float
   * image (session 12) the chain won every 4-byte sort of the 2026-12-03 sweep (f32 2^26 2.063 -> 1.974 ms,
   * 2^24 0.636 -> 0.566, i32 1.921 -> 1.902) and lost f64 (5.408 -> 5.597):
   * bench/results/2026-12-03-sort-sweep-h200.md */
  spec->peers_first = r && strstr(r, "early") ? true : r && strstr(r, "chain") ? false : spec->value_bytes == 0 && kb == 8;
  /* "smem": early counts and returning shared atomics (gpu_radix_rank.c); "atomic": the counters taken by
   * one returning atomic of the highest peer, not loaded and stored */
  spec->smem_rank = r && strstr(r, "smem");
  spec->atomic_rank = r && strstr(r, "atomic");
  /* LOOM_GPU_RADIX_SKIP=0: every digit pass runs, trivial or not (A/B of gpu_radix_plan.c) */
  const char *k = getenv("LOOM_GPU_RADIX_SKIP");
  spec->all_passes = k && !strcmp(k, "0");
}

/* Shared bytes of the pass kernel besides the staged tile: wave counters, bucket bases, tile starts, the
 * scan's words (each array 16-byte aligned). */
static int pass_fixed_shared(int wave) {
  return CG_RADIX_BLOCK / wave * RADIX_DIGITS * 4 + RADIX_DIGITS * 8 + RADIX_DIGITS * 4 + 64;
}

CgRadixShape cg_radix_shape(const CgRadixSpec *spec) {
  int kb = dtype_bits(spec->key) / 8, widest = kb > spec->value_bytes ? kb : spec->value_bytes;
  if (spec->take)
    return (CgRadixShape){.block = CG_RADIX_BLOCK, .items = 1, .tile = CG_RADIX_BLOCK, .passes = 0, .blocks_per_sm = 1,
                          .hist_parts = 1};
  /* 8-byte keys: 12 keys a thread under a 3-blocks-per-SM bound (f64 2^26 0.69x -> 0.82x CuPy in the
   * same sweep); other widths 16 (4 bytes) or 8 under CG_RADIX_PASS_BLOCKS_PER_SM */
  CgRadixShape s = {.block = CG_RADIX_BLOCK, .items = kb == 8 ? 12 : widest <= 4 ? 16 : 8, .passes = kb};
  if (spec->items >= 1 && spec->items <= CG_RADIX_MAX_ITEMS) s.items = spec->items;
  /* the staged tile must fit the block's static shared memory (legacy: one region of the widest) */
  int per_key = spec->legacy ? widest : kb + spec->value_bytes + (cg_radix_stages_digits(spec) ? 1 : 0);
  int fit = (CG_RADIX_SHARED_BYTES - pass_fixed_shared(spec->wave ? spec->wave : 32)) / (CG_RADIX_BLOCK * per_key);
  if (s.items > fit) s.items = fit;
  s.tile = s.block * s.items;
  s.blocks_per_sm = spec->blocks_per_sm >= 1 && spec->blocks_per_sm <= 8 ? spec->blocks_per_sm
                   : kb == 8                                             ? 3
                                                                         : CG_RADIX_PASS_BLOCKS_PER_SM;
  s.hist_parts = spec->legacy ? 1 : kb <= 4 ? 4 : 2;
  if (spec->hist_parts == 1 || spec->hist_parts == 2 || spec->hist_parts == 4 || spec->hist_parts == 8)
    s.hist_parts = spec->hist_parts;
  while (s.hist_parts > 1 && s.hist_parts * s.passes * RADIX_DIGITS * 4 > CG_RADIX_SHARED_BYTES) s.hist_parts /= 2;
  return s;
}

/* ---- block scan ----------------------------------------------------------------------------------------- */
/* The exclusive sum of v (i32) over the block's threads in thread order. wsum: a shared array of
 * nwarps words. Every thread takes part; ends with a barrier (wsum may be reused). */
LLVMValueRef cg_radix_block_scan(Gen *g, LLVMValueRef v, LLVMValueRef tid, LLVMValueRef wsum) {
  LLVMValueRef lane = LLVMBuildAnd(g->b, tid, c32(g, (unsigned)g->spec.wave - 1), "");
  LLVMValueRef warp = LLVMBuildUDiv(g->b, tid, c32(g, (unsigned)g->spec.wave), "");
  LLVMValueRef incl = v, total = v;
  for (int k = 1; k < g->spec.wave; k *= 2) { /* butterfly: total of the 2k-group, prefix within it */
    LLVMValueRef o = g->h.shuffle_xor(&g->m, total, k);
    LLVMValueRef upper = LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, lane, c32(g, (unsigned)k), ""), c32(g, 0), "");
    incl = sel(g, upper, add(g, incl, o), incl);
    total = add(g, total, o);
  }
  LLVMBasicBlockRef after = if_begin(g, eq(g, lane, c32(g, 0)));
  store(g, total, at(g, g->i32, wsum, warp), 4);
  if_end(g, after);
  g->h.barrier(&g->m);
  LLVMValueRef off = c32(g, 0);
  for (int w = 0; w < g->nwarps - 1; w++) {
    LLVMValueRef s = load(g, g->i32, at(g, g->i32, wsum, c32(g, (unsigned)w)), 4);
    off = add(g, off, sel(g, ult(g, c32(g, (unsigned)w), warp), s, c32(g, 0)));
  }
  g->h.barrier(&g->m);
  return add(g, off, LLVMBuildSub(g->b, incl, v, ""));
}

/* The tile's row, its first key's index in the row and its key count (i64), from tile number t (i32). */
static Tile tile_of(Gen *g, LLVMValueRef t, LLVMValueRef n, LLVMValueRef tpr) {
  Tile x;
  x.row = zext64(g, LLVMBuildUDiv(g->b, t, tpr, ""));
  x.in_row = LLVMBuildURem(g->b, t, tpr, "");
  x.start = mul(g, zext64(g, x.in_row), c64(g, (unsigned)g->sh.tile));
  LLVMValueRef left = LLVMBuildSub(g->b, n, x.start, "");
  x.valid = sel(g, ult(g, left, c64(g, (unsigned)g->sh.tile)), left, c64(g, (unsigned)g->sh.tile));
  x.valid32 = LLVMBuildTrunc(g->b, x.valid, g->i32, "");
  x.row_base = mul(g, x.row, n);
  return x;
}

/* ---- loom_radix_histogram ------------------------------------------------------------------------------- */
/* Copies of the block's histogram in the histogram kernel: 1 (legacy), else by default at most 16 KB of
 * them (8 blocks of 256 fit a multiprocessor); CgRadixSpec.hist_parts sets it. */
static int hist_parts(Gen *g) { return g->sh.hist_parts; }

/* One block per `chunk` consecutive tiles of a row (blocks_per_row = ceil(tiles_per_row / chunk)): the
 * block's counts gather in shared memory over its tiles and go to the row's histogram once, so that
 * the global atomics are P * 256 per block, not per tile (they all hit the row's few histogram lines). */
static void gen_histogram(Gen *g) {
  LLVMTypeRef ps[6] = {g->pg, g->pg, g->i64, g->i32, g->i64, g->i32};
  begin_kernel(g, "loom_radix_histogram", ps, 6);
  if (!g->spec.legacy) launch_bounds(g, g->sh.block, 8); /* ~HIST_BLOCKS (gpu_sort.c) blocks in one wave */
  LLVMValueRef keys = LLVMGetParam(g->fn, 0), scratch = LLVMGetParam(g->fn, 1), n = LLVMGetParam(g->fn, 2);
  LLVMValueRef tpr = LLVMGetParam(g->fn, 3), desc = cg_radix_desc_of(g, LLVMGetParam(g->fn, 4));
  LLVMValueRef chunk = LLVMGetParam(g->fn, 5);
  int P = g->sh.passes, B = g->sh.block, NP = hist_parts(g), W = P * RADIX_DIGITS;
  LLVMValueRef hs = shared_array(g, "loom_radix_hist_counts", g->i32, (unsigned)(NP * W), 16);
  LLVMValueRef tid = thread_id(g);
  /* lane l counts into copy l % NP: lanes of one wave that meet on a digit (the top byte of floats
   * takes a handful of values) collide NP times less often */
  LLVMValueRef part = mul(g, LLVMBuildAnd(g->b, tid, c32(g, (unsigned)NP - 1), ""), c32(g, (unsigned)W));
  for (int k = 0; k < NP * W / B; k++)
    store(g, c32(g, 0), at(g, g->i32, hs, add(g, tid, c32(g, (unsigned)(k * B)))), 4);
  g->h.barrier(&g->m);
  /* the block's tiles: [first, last) of row `row` */
  LLVMValueRef bpr = LLVMBuildUDiv(g->b, add(g, tpr, LLVMBuildSub(g->b, chunk, c32(g, 1), "")), chunk, "");
  LLVMValueRef bid = g->h.index(&g->m, CG_GPU_BLOCK_ID);
  LLVMValueRef row = LLVMBuildUDiv(g->b, bid, bpr, "");
  LLVMValueRef first = mul(g, LLVMBuildURem(g->b, bid, bpr, ""), chunk);
  LLVMValueRef last = add(g, first, chunk);
  last = sel(g, ult(g, tpr, last), tpr, last);
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tiles");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tile");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tiles.done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef t = LLVMBuildPhi(g->b, g->i32, "t");
  LLVMBuildCondBr(g->b, ult(g, t, last), body, done);
  LLVMPositionBuilderAtEnd(g->b, body);
  Tile x = tile_of(g, add(g, mul(g, row, tpr), t), n, tpr);
  LLVMValueRef tid64 = zext64(g, tid);
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef e = add(g, tid64, c64(g, (unsigned)(j * B)));
    LLVMValueRef ok = ult(g, e, x.valid);
    LLVMValueRef p = at(g, g->kt, keys, add(g, add(g, x.row_base, x.start), sel(g, ok, e, c64(g, 0))));
    LLVMValueRef u = cg_radix_key_image(g, load(g, g->kt, p, (unsigned)g->kbits / 8), desc);
    LLVMBasicBlockRef after = if_begin(g, ok);
    for (int q = 0; q < P; q++) {
      LLVMValueRef d = cg_radix_digit(g, u, ck(g, (unsigned)(8 * q)));
      atomic_add(g, at(g, g->i32, hs, add(g, part, add(g, d, c32(g, (unsigned)(q * RADIX_DIGITS))))), c32(g, 1));
    }
    if_end(g, after);
  }
  LLVMValueRef next = add(g, t, c32(g, 1));
  LLVMBasicBlockRef tail = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef tv[2] = {first, next};
  LLVMBasicBlockRef tb[2] = {entry, tail};
  LLVMAddIncoming(t, tv, tb, 2);
  LLVMPositionBuilderAtEnd(g->b, done);
  g->h.barrier(&g->m);
  LLVMValueRef hist = add(g, c64(g, CG_RADIX_COUNTERS), mul(g, zext64(g, row), c64(g, (unsigned)(P * RADIX_DIGITS))));
  for (int k = 0; k < W / B; k++) {
    LLVMValueRef i = add(g, tid, c32(g, (unsigned)(k * B)));
    LLVMValueRef v = load(g, g->i32, at(g, g->i32, hs, i), 4);
    for (int q = 1; q < NP; q++) v = add(g, v, load(g, g->i32, at(g, g->i32, hs, add(g, i, c32(g, (unsigned)(q * W)))), 4));
    LLVMBasicBlockRef after = if_begin(g, LLVMBuildICmp(g->b, LLVMIntNE, v, c32(g, 0), ""));
    atomic_add(g, at(g, g->i32, scratch, add(g, hist, zext64(g, i))), v);
    if_end(g, after);
  }
  LLVMBuildRetVoid(g->b);
}

/* ---- loom_radix_pass ------------------------------------------------------------------------------------ */

/* Thread d's status word of the tile for the pass: scratch[base + tile * 256 + d]. */
static LLVMValueRef status_word(Gen *g, PassState *s, LLVMValueRef tile64) {
  LLVMValueRef tiles = mul(g, s->rows, zext64(g, s->tpr));
  LLVMValueRef base = add(g, c64(g, CG_RADIX_COUNTERS),
                          add(g, mul(g, s->rows, c64(g, (unsigned)(g->sh.passes * RADIX_DIGITS))),
                              mul(g, mul(g, zext64(g, s->pass), tiles), c64(g, RADIX_DIGITS))));
  return at(g, g->i32, s->scratch, add(g, base, add(g, mul(g, tile64, c64(g, RADIX_DIGITS)), zext64(g, s->tid))));
}

static void store_status(Gen *g, LLVMValueRef v, LLVMValueRef p) {
  LLVMValueRef st = LLVMBuildStore(g->b, v, p);
  LLVMSetAlignment(st, 4);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
}

/* Thread d publishes the tile's count of digit d: its own count (flag 1), or for the first tile of a row
 * the inclusive count at once (flag 2: nothing before it). */
void cg_radix_publish_count(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef count) {
  LLVMValueRef first = eq(g, s->x.in_row, c32(g, 0));
  LLVMValueRef flag = sel(g, first, c32(g, STATUS_PREFIX), c32(g, STATUS_AGGREGATE));
  store_status(g, LLVMBuildOr(g->b, count, flag, ""), status_word(g, s, zext64(g, tile)));
}

/* Thread d's look-back, after publish_count: adds the counts of earlier tiles of the row until one
 * publishes its inclusive count, then publishes its own (prior + count, flag 2); returns the earlier
 * tiles' count (0 for the row's first tile, which published its inclusive count already). */
static LLVMValueRef look_back_walk(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef count) {
  LLVMValueRef first = eq(g, s->x.in_row, c32(g, 0));
  LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef init = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "lookback");
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "lookback.head");
  LLVMBasicBlockRef found = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "lookback.found");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "lookback.done");
  LLVMBuildCondBr(g->b, first, done, init);
  LLVMPositionBuilderAtEnd(g->b, init);
  LLVMValueRef k0 = LLVMBuildSub(g->b, zext64(g, tile), c64(g, 1), "");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef k = LLVMBuildPhi(g->b, g->i64, "k"), acc = LLVMBuildPhi(g->b, g->i32, "acc");
  LLVMValueRef w = LLVMBuildLoad2(g->b, g->i32, status_word(g, s, k), "");
  LLVMSetAlignment(w, 4);
  LLVMSetOrdering(w, LLVMAtomicOrderingMonotonic);
  LLVMValueRef flag = LLVMBuildLShr(g->b, w, c32(g, 30), "");
  LLVMValueRef acc2 = sel(g, eq(g, flag, c32(g, 0)), acc, add(g, acc, LLVMBuildAnd(g->b, w, c32(g, STATUS_COUNT_MASK), "")));
  LLVMValueRef k2 = sel(g, eq(g, flag, c32(g, 1)), LLVMBuildSub(g->b, k, c64(g, 1), ""), k);
  LLVMBuildCondBr(g->b, eq(g, flag, c32(g, 2)), found, head);
  LLVMValueRef kv[2] = {k0, k2}, av[2] = {c32(g, 0), acc2};
  LLVMBasicBlockRef kb[2] = {init, head};
  LLVMAddIncoming(k, kv, kb, 2);
  LLVMAddIncoming(acc, av, kb, 2);
  LLVMPositionBuilderAtEnd(g->b, found);
  store_status(g, LLVMBuildOr(g->b, add(g, acc2, count), c32(g, STATUS_PREFIX), ""), status_word(g, s, zext64(g, tile)));
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef prior = LLVMBuildPhi(g->b, g->i32, "prior");
  LLVMValueRef pv[2] = {c32(g, 0), acc2};
  LLVMBasicBlockRef pb[2] = {from, found};
  LLVMAddIncoming(prior, pv, pb, 2);
  return prior;
}

/* Loads the thread's items (warp-striped within its wave's run of the tile): keys, digits, and values
 * unless keys_only. */
static void load_items(Gen *g, PassState *s, bool keys_only) {
  int W = g->spec.wave, I = g->sh.items;
  LLVMValueRef run = mul(g, zext64(g, s->warp), c64(g, (unsigned)(I * W)));
  LLVMValueRef first = add(g, s->x.row_base, s->x.start);
  LLVMValueRef e[CG_RADIX_MAX_ITEMS], src[CG_RADIX_MAX_ITEMS];
  for (int j = 0; j < I; j++) {
    e[j] = add(g, run, add(g, zext64(g, s->lane), c64(g, (unsigned)(j * W))));
    s->ok[j] = ult(g, e[j], s->x.valid);
    src[j] = add(g, first, sel(g, s->ok[j], e[j], c64(g, 0)));
    s->key[j] = load(g, g->kt, at(g, g->kt, s->keys_in, src[j]), (unsigned)g->kbits / 8);
    s->dig[j] = sel(g, s->ok[j], cg_radix_digit(g, cg_radix_key_image(g, s->key[j], s->desc), s->shift), c32(g, 0));
  }
  if (!g->spec.value_bytes || keys_only) return;
  /* values: copied (mode 2) or the key's position in its row (mode 1: argsort's first pass) */
  LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals.copy");
  LLVMBasicBlockRef iota = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals.iota");
  LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals");
  LLVMBuildCondBr(g->b, eq(g, LLVMBuildAnd(g->b, s->mode, c32(g, 3), ""), c32(g, 2)), copy, iota);
  LLVMValueRef cv[CG_RADIX_MAX_ITEMS], iv[CG_RADIX_MAX_ITEMS];
  unsigned vb = (unsigned)g->spec.value_bytes;
  LLVMPositionBuilderAtEnd(g->b, copy);
  for (int j = 0; j < I; j++) cv[j] = load(g, g->vt, at(g, g->vt, s->vals_in, src[j]), vb);
  LLVMBuildBr(g->b, merge);
  LLVMPositionBuilderAtEnd(g->b, iota);
  for (int j = 0; j < I; j++) {
    LLVMValueRef pos = add(g, s->x.start, e[j]);
    iv[j] = vb == 8 ? pos : LLVMBuildTrunc(g->b, pos, g->vt, "");
  }
  LLVMBuildBr(g->b, merge);
  LLVMPositionBuilderAtEnd(g->b, merge);
  for (int j = 0; j < I; j++) {
    s->val[j] = LLVMBuildPhi(g->b, g->vt, "");
    LLVMValueRef v[2] = {cv[j], iv[j]};
    LLVMBasicBlockRef bb[2] = {copy, iota};
    LLVMAddIncoming(s->val[j], v, bb, 2);
  }
}

/* The item's rank from its peers: the highest peer adds their count to the wave's counter of the digit
 * (wc: the wave's 256 shared counters); rank = the counter before + lower peers. The counter makes the
 * items of a wave one dependent chain (load, add, store, warp sync per item). */
static LLVMValueRef wave_count(Gen *g, LLVMValueRef ok, LLVMValueRef dig, LLVMValueRef peers, LLVMValueRef lane,
                               LLVMValueRef wc) {
  if (g->spec.atomic_rank) return cg_radix_wave_take(g, ok, dig, peers, lane, wc); /* no load-store chain */
  LLVMValueRef one = LLVMConstInt(g->mt, 1, 0);
  LLVMValueRef lane_m = LLVMBuildZExtOrBitCast(g->b, lane, g->mt, "");
  LLVMValueRef below = LLVMBuildSub(g->b, LLVMBuildShl(g->b, one, lane_m, ""), one, "");
  LLVMValueRef slot = at(g, g->i32, wc, dig);
  LLVMValueRef before = load(g, g->i32, slot, 4);
  g->h.wave_sync(&g->m);
  LLVMTypeRef mt = g->mt;
  LLVMValueRef cnt = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctpop", &mt, 1, &peers, 1), g->i32, "");
  LLVMValueRef low = LLVMBuildAnd(g->b, peers, below, "");
  LLVMValueRef lower = LLVMBuildTrunc(g->b, cg_intrinsic(&g->m, "llvm.ctpop", &mt, 1, &low, 1), g->i32, "");
  LLVMValueRef leader = LLVMBuildAnd(g->b, ok, eq(g, LLVMBuildLShr(g->b, peers, lane_m, ""), one), "");
  LLVMBasicBlockRef after = if_begin(g, leader);
  store(g, add(g, before, cnt), slot, 4);
  if_end(g, after);
  g->h.wave_sync(&g->m);
  return add(g, before, lower);
}

/* The rank of one item (digit dig, i32; ok: it is a key) among the wave's items of its digit (stable:
 * lanes in order, and items in the order the wave ranks them). Every lane of the wave takes part. */
LLVMValueRef cg_radix_wave_rank(Gen *g, LLVMValueRef ok, LLVMValueRef dig, LLVMValueRef lane, LLVMValueRef wc) {
  return wave_count(g, ok, dig, cg_radix_wave_peers(g, ok, dig), lane, wc);
}

/* Ranks item j among the wave's items of the same digit (cg_radix_wave_rank). */
static void rank_items(Gen *g, PassState *s) {
  LLVMValueRef wc = at(g, g->i32, s->wc, mul(g, s->warp, c32(g, RADIX_DIGITS)));
  LLVMValueRef peers[CG_RADIX_MAX_ITEMS];
  int I = g->sh.items;
  for (int j = 0; j < I; j++) {
    if (!s->dig[j]) /* the single-sweep order: the digit made here, from the key, when it is needed */
      s->dig[j] = sel(g, s->ok[j], cg_radix_digit(g, cg_radix_key_image(g, s->key[j], s->desc), s->shift), c32(g, 0));
    /* peers_first: every item's peers before the counter chain, so the matches overlap one another and
     * only the counters' load-add-store stays serial (I more masks live) */
    peers[j] = g->spec.peers_first ? cg_radix_wave_peers(g, s->ok[j], s->dig[j]) : NULL;
  }
  for (int j = 0; j < I; j++) {
    s->rank[j] = wave_count(g, s->ok[j], s->dig[j], peers[j] ? peers[j] : cg_radix_wave_peers(g, s->ok[j], s->dig[j]), s->lane, wc);
    if (s->packed) { /* one word per item from here on: rank (< 2^16) | digit << 16, 256 for no key */
      LLVMValueRef d = sel(g, s->ok[j], s->dig[j], c32(g, RADIX_DIGITS));
      s->rank[j] = pin(g, LLVMBuildOr(g->b, s->rank[j], LLVMBuildShl(g->b, d, c32(g, 16), ""), ""));
      s->dig[j] = s->ok[j] = NULL;
    }
  }
}

/* Stages v[j] at shared slot pos[j] (valid items), then writes slot i = j * block + tid of the tile to
 * dst[dest[j]]; the first round (keys) computes dest from the staged key's digit. widen (an i1, or NULL):
 * dst holds int64 and the 4-byte values are sign-extended (argsort's int32 index, widened by its last
 * pass). */
static void scatter(Gen *g, PassState *s, LLVMTypeRef t, unsigned bytes, LLVMValueRef *v, LLVMValueRef *pos,
                    LLVMValueRef dst, bool keys, LLVMValueRef widen) {
  for (int j = 0; j < g->sh.items; j++) {
    LLVMBasicBlockRef after = if_begin(g, s->ok[j]);
    store(g, v[j], at(g, t, s->stage, pos[j]), bytes);
    if_end(g, after);
  }
  g->h.barrier(&g->m);
  LLVMValueRef tid64 = zext64(g, s->tid);
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef i = add(g, tid64, c64(g, (unsigned)(j * g->sh.block)));
    LLVMValueRef inb = ult(g, i, s->x.valid);
    LLVMValueRef w = load(g, t, at(g, t, s->stage, sel(g, inb, i, c64(g, 0))), bytes);
    if (keys) {
      LLVMValueRef d = cg_radix_digit(g, cg_radix_key_image(g, w, s->desc), s->shift);
      s->dest[j] = add(g, load(g, g->i64, at(g, g->i64, s->sb, d), 8), i);
    }
    LLVMBasicBlockRef after = if_begin(g, inb);
    if (widen) {
      LLVMBasicBlockRef wide = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "wide");
      LLVMBasicBlockRef narrow = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "narrow");
      LLVMBuildCondBr(g->b, widen, wide, narrow);
      LLVMPositionBuilderAtEnd(g->b, wide);
      store(g, LLVMBuildSExt(g->b, w, g->i64, ""), at(g, g->i64, dst, s->dest[j]), 8);
      LLVMBuildBr(g->b, after);
      LLVMPositionBuilderAtEnd(g->b, narrow);
    }
    store(g, w, at(g, t, dst, s->dest[j]), bytes);
    if_end(g, after);
  }
}

/* Item j of the thread (warp-striped in its wave's run of the tile): its index in the tile and whether
 * it is a key (< valid). */
static LLVMValueRef item_index(Gen *g, PassState *s, int j) {
  int W = g->spec.wave, I = g->sh.items;
  return add(g, mul(g, s->warp, c32(g, (unsigned)(I * W))), add(g, s->lane, c32(g, (unsigned)(j * W))));
}

/* The single-sweep order's loads: the keys of the thread's items (tile indices in i32; rank_items makes
 * the digits). */
static void load_keys(Gen *g, PassState *s) {
  LLVMValueRef first = at(g, g->kt, cg_radix_keys_src(g, s), add(g, s->x.row_base, s->x.start));
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef e = item_index(g, s, j);
    s->ok[j] = ult(g, e, s->x.valid32);
    s->key[j] = load(g, g->kt, at(g, g->kt, first, sel(g, s->ok[j], e, c32(g, 0))), (unsigned)g->kbits / 8);
  }
}

/* The single-sweep order (not legacy): keys staged in tile order before the look-back, so that no key
 * stays in a register while the tile waits for earlier tiles; item j's slot pos = tile start of its
 * digit + its wave's prefix + its rank. Values are read here (copied or the key's position: argsort's
 * first pass) and staged in their own region, so one barrier serves keys and values. */
static void stage_items(Gen *g, PassState *s, LLVMValueRef stage_v) {
  LLVMValueRef wbase = mul(g, s->warp, c32(g, RADIX_DIGITS));
  unsigned kb = (unsigned)g->kbits / 8, vb = (unsigned)g->spec.value_bytes;
  LLVMValueRef pos[CG_RADIX_MAX_ITEMS];
  LLVMValueRef ok[CG_RADIX_MAX_ITEMS];
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef d = LLVMBuildLShr(g->b, s->rank[j], c32(g, 16), "");
    ok[j] = ult(g, d, c32(g, RADIX_DIGITS));
    d = LLVMBuildAnd(g->b, d, c32(g, RADIX_DIGITS - 1), ""); /* in bounds for no key too (not stored) */
    LLVMValueRef t0 = load(g, g->i32, at(g, g->i32, s->ts, d), 4);
    LLVMValueRef w0 = load(g, g->i32, at(g, g->i32, s->wc, add(g, wbase, d)), 4);
    pos[j] = add(g, add(g, t0, w0), LLVMBuildAnd(g->b, s->rank[j], c32(g, 0xffff), ""));
    LLVMBasicBlockRef after = if_begin(g, ok[j]);
    store(g, s->key[j], at(g, g->kt, s->stage, pos[j]), kb);
    if (s->stage_d) store(g, LLVMBuildTrunc(g->b, d, g->i8, ""), at(g, g->i8, s->stage_d, pos[j]), 1);
    if_end(g, after);
  }
  if (vb) cg_radix_stage_values(g, s, stage_v, ok, pos);
}

/* Stages the values of the thread's items at their slots pos[j] of stage_v (items with ok[j]): copied
 * from vals_in (mode 2) or the key's position in its row (mode 1: argsort's first pass). */
void cg_radix_stage_values(Gen *g, PassState *s, LLVMValueRef stage_v, LLVMValueRef *ok, LLVMValueRef *pos) {
  unsigned vb = (unsigned)g->spec.value_bytes;
  LLVMValueRef mode = LLVMBuildAnd(g->b, cg_radix_vals_mode(g, s), c32(g, 3), "");
  LLVMValueRef first = at(g, g->vt, cg_radix_vals_src(g, s), add(g, s->x.row_base, s->x.start));
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef e = item_index(g, s, j);
    LLVMBasicBlockRef after = if_begin(g, LLVMBuildAnd(g->b, ok[j], LLVMBuildICmp(g->b, LLVMIntNE, mode, c32(g, 0), ""), ""));
    LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals.copy");
    LLVMBasicBlockRef iota = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals.iota");
    LLVMBasicBlockRef put = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "vals.put");
    LLVMBuildCondBr(g->b, eq(g, mode, c32(g, 2)), copy, iota);
    LLVMPositionBuilderAtEnd(g->b, copy);
    LLVMValueRef cv = load(g, g->vt, at(g, g->vt, first, e), vb);
    LLVMBuildBr(g->b, put);
    LLVMPositionBuilderAtEnd(g->b, iota);
    LLVMValueRef ip = add(g, s->x.start, zext64(g, e));
    LLVMValueRef iv = vb == 8 ? ip : LLVMBuildTrunc(g->b, ip, g->vt, "");
    LLVMBuildBr(g->b, put);
    LLVMPositionBuilderAtEnd(g->b, put);
    LLVMValueRef v = LLVMBuildPhi(g->b, g->vt, "");
    LLVMValueRef vv[2] = {cv, iv};
    LLVMBasicBlockRef vbb[2] = {copy, iota};
    LLVMAddIncoming(v, vv, vbb, 2);
    store(g, v, at(g, g->vt, stage_v, pos[j]), vb);
    if_end(g, after);
  }
}

/* Writes slots [0, valid) of the staged tile out (after the barrier that follows the bucket bases): slot
 * i = j * block + tid goes to the row's sb[digit of its key] + i (sb: i32 offsets in the row), its value
 * (staged in stage_v) to the same place. full (uniform): every slot is a key -- no test, no branch an
 * item (the tile's bounds cost 3 control instructions an item on sm_90). */
static void write_slots(Gen *g, PassState *s, LLVMValueRef stage_v, LLVMValueRef moved, LLVMValueRef widen, bool full) {
  unsigned kb = (unsigned)g->kbits / 8, vb = (unsigned)g->spec.value_bytes;
  LLVMValueRef krow = at(g, g->kt, cg_radix_keys_dst(g, s), s->x.row_base);
  LLVMValueRef vdst = vb ? cg_radix_vals_dst(g, s) : NULL;
  LLVMValueRef vrow = vb ? at(g, g->vt, vdst, s->x.row_base) : NULL;
  LLVMValueRef wrow = widen ? at(g, g->i64, vdst, s->x.row_base) : NULL;
  for (int j = 0; j < g->sh.items; j++) {
    LLVMValueRef i = LLVMBuildNUWAdd(g->b, s->tid, c32(g, (unsigned)(j * g->sh.block)), "");
    LLVMBasicBlockRef after = full ? NULL : if_begin(g, ult(g, i, s->x.valid32));
    LLVMValueRef w = load(g, g->kt, at(g, g->kt, s->stage, i), kb);
    LLVMValueRef d = s->stage_d ? LLVMBuildZExt(g->b, load(g, g->i8, at(g, g->i8, s->stage_d, i), 1), g->i32, "")
                                : cg_radix_digit(g, cg_radix_key_image(g, w, s->desc), s->shift);
    /* < 2^30 keys a row: the offset in the row is an i32; j * block apart as a constant (an address
     * offset: one 32x32->64 multiply-add an item) */
    LLVMValueRef dest = zext64(g, add(g, load(g, g->i32, at(g, g->i32, s->sb, d), 4), s->tid));
    LLVMValueRef jb = c64(g, (unsigned)(j * g->sh.block));
    store(g, w, at(g, g->kt, at(g, g->kt, krow, dest), jb), kb);
    if (vb) {
      LLVMBasicBlockRef vdone = if_begin(g, moved);
      LLVMValueRef v = load(g, g->vt, at(g, g->vt, stage_v, i), vb);
      if (widen) {
        LLVMBasicBlockRef wide = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "wide");
        LLVMBasicBlockRef narrow = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "narrow");
        LLVMBuildCondBr(g->b, widen, wide, narrow);
        LLVMPositionBuilderAtEnd(g->b, wide);
        store(g, LLVMBuildSExt(g->b, v, g->i64, ""), at(g, g->i64, at(g, g->i64, wrow, dest), jb), 8);
        LLVMBuildBr(g->b, vdone);
        LLVMPositionBuilderAtEnd(g->b, narrow);
      }
      store(g, v, at(g, g->vt, at(g, g->vt, vrow, dest), jb), vb);
      if_end(g, vdone);
    }
    if (!full) if_end(g, after);
  }
}

/* The staged tile out: a full tile without per-item bounds, the row's last (partial) one with them. */
static void write_tile(Gen *g, PassState *s, LLVMValueRef stage_v, LLVMValueRef moved, LLVMValueRef widen) {
  LLVMBasicBlockRef fullb = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tile.full");
  LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tile.partial");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "tile.written");
  LLVMBuildCondBr(g->b, eq(g, s->x.valid32, c32(g, (unsigned)g->sh.tile)), fullb, part);
  LLVMPositionBuilderAtEnd(g->b, fullb);
  write_slots(g, s, stage_v, moved, widen, true);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, part);
  write_slots(g, s, stage_v, moved, widen, false);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
}

static void gen_pass(Gen *g) {
  /* planned (gpu_radix_plan.c): keys_alt after keys_out, vals_alt0 and vals_alt1 after vals_out */
  bool planned = cg_radix_skips(&g->spec);
  LLVMTypeRef ps[14] = {g->pg, g->pg, g->pg, g->pg, g->pg, g->pg, g->pg, g->pg, g->i64, g->i32, g->i64, g->i32, g->i64, g->i32};
  unsigned np = planned ? 14 : 11;
  begin_kernel(g, "loom_radix_pass", planned ? ps : ps + 3, np);
  PassState s;
  memset(&s, 0, sizeof s);
  LLVMValueRef *pv[14] = {&s.keys_in, &s.keys_out, &s.keys_alt, &s.vals_in, &s.vals_out, &s.vals_alt0, &s.vals_alt1,
                          &s.scratch, &s.n, &s.tpr, &s.rows, &s.pass, &s.desc, &s.mode};
  LLVMValueRef **pl = pv;
  LLVMValueRef *pv11[11] = {&s.keys_in, &s.keys_out, &s.vals_in, &s.vals_out, &s.scratch, &s.n, &s.tpr, &s.rows,
                            &s.pass, &s.desc, &s.mode};
  if (!planned) pl = pv11;
  for (unsigned i = 0; i < np; i++) *pl[i] = LLVMGetParam(g->fn, i);
  s.desc = cg_radix_desc_of(g, s.desc);
  s.shift = LLVMBuildZExtOrBitCast(g->b, mul(g, s.pass, c32(g, 8)), g->i32, "");
  s.shift = g->kbits >= 32 ? LLVMBuildZExtOrBitCast(g->b, s.shift, g->kt, "") : LLVMBuildTrunc(g->b, s.shift, g->kt, "");
  bool legacy = g->spec.legacy;
  if (!legacy) launch_bounds(g, g->sh.block, g->sh.blocks_per_sm);
  int B = g->sh.block, I = g->sh.items, kb = g->kbits / 8, vb = g->spec.value_bytes;
  int widest = kb > vb ? kb : vb;
  /* legacy: one staging region for keys, then values; else keys and values side by side */
  s.stage = shared_array(g, "loom_radix_stage", g->i8, (unsigned)(g->sh.tile * (legacy ? widest : kb)), 16);
  LLVMValueRef stage_v = !legacy && vb ? shared_array(g, "loom_radix_stage_values", g->i8, (unsigned)(g->sh.tile * vb), 16)
                                       : NULL;
  /* float keys: each slot's digit staged beside its key (a byte), not made again from the key (5 SASS) */
  s.stage_d = cg_radix_stages_digits(&g->spec) ? shared_array(g, "loom_radix_stage_digits", g->i8, (unsigned)g->sh.tile, 16)
                                               : NULL;
  s.wc = shared_array(g, "loom_radix_wave_counts", g->i32, (unsigned)(g->nwarps * RADIX_DIGITS), 16);
  s.sb = shared_array(g, "loom_radix_bucket_base", g->i64, RADIX_DIGITS, 16);
  s.ts = shared_array(g, "loom_radix_tile_start", g->i32, RADIX_DIGITS, 16);
  s.wsum = shared_array(g, "loom_radix_scan", g->i32, (unsigned)g->nwarps + 1, 16);
  s.tid = thread_id(g);
  s.lane = LLVMBuildAnd(g->b, s.tid, c32(g, (unsigned)g->spec.wave - 1), "");
  s.warp = LLVMBuildUDiv(g->b, s.tid, c32(g, (unsigned)g->spec.wave), "");

  if (planned) cg_radix_plan_early(g, &s); /* a pass trivial for every row: return before taking a tile */
  /* the tile: next in launch order; the wave counters zeroed meanwhile */
  LLVMValueRef slot = at(g, g->i32, s.wsum, c32(g, (unsigned)g->nwarps));
  LLVMBasicBlockRef after = if_begin(g, eq(g, s.tid, c32(g, 0)));
  store(g, atomic_add(g, at(g, g->i32, s.scratch, zext64(g, s.pass)), c32(g, 1)), slot, 4);
  if_end(g, after);
  for (int k = 0; k < g->nwarps * RADIX_DIGITS / B; k++)
    store(g, c32(g, 0), at(g, g->i32, s.wc, add(g, s.tid, c32(g, (unsigned)(k * B)))), 4);
  g->h.barrier(&g->m);
  LLVMValueRef tile = load(g, g->i32, slot, 4);
  s.x = tile_of(g, tile, s.n, s.tpr);
  if (planned) cg_radix_plan_tile(g, &s); /* the row's plan word: return on a trivial pass */
  /* thread d's count of digit d in the row (the histogram), read early: its latency hides under the loads */
  LLVMValueRef hist = add(g, c64(g, CG_RADIX_COUNTERS),
                          add(g, mul(g, s.x.row, c64(g, (unsigned)(g->sh.passes * RADIX_DIGITS))),
                              add(g, mul(g, zext64(g, s.pass), c64(g, RADIX_DIGITS)), zext64(g, s.tid))));
  LLVMValueRef hcount = load(g, g->i32, at(g, g->i32, s.scratch, hist), 4);
  if (legacy) load_items(g, &s, false);
  else load_keys(g, &s);
  s.plan_kept = true; /* the plan word from shared memory from here on (gpu_radix_plan.c) */
  bool smem = g->spec.smem_rank && !legacy;
  LLVMValueRef run = c32(g, 0), tstart, rstart;
  if (smem) { /* counts, publishing, scans, ranks and staging in one (gpu_radix_rank.c) */
    cg_radix_smem_rank(g, &s, tile, hcount, stage_v, &run, &tstart, &rstart);
  } else {
    s.packed = !legacy;
    rank_items(g, &s);
    g->h.barrier(&g->m);
    /* thread d: wave prefixes and the tile's count of digit d (published at once unless legacy), its
     * tile start, the row's start of d, the earlier tiles' count of d (look-back): the bucket base of d */
    for (int w = 0; w < g->nwarps; w++) {
      LLVMValueRef p = at(g, g->i32, s.wc, add(g, s.tid, c32(g, (unsigned)(w * RADIX_DIGITS))));
      LLVMValueRef c = load(g, g->i32, p, 4);
      store(g, run, p, 4);
      run = add(g, run, c);
    }
    if (!legacy) cg_radix_publish_count(g, &s, tile, run);
    tstart = cg_radix_block_scan(g, run, s.tid, s.wsum);
    store(g, tstart, at(g, g->i32, s.ts, s.tid), 4);
    rstart = cg_radix_block_scan(g, hcount, s.tid, s.wsum); /* its barriers publish ts too */
  }
  LLVMValueRef moved = vb ? LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, s.mode, c32(g, 3), ""), c32(g, 0), "") : NULL;
  if (legacy) cg_radix_publish_count(g, &s, tile, run);
  else if (!smem) stage_items(g, &s, stage_v);
  LLVMValueRef prior = look_back_walk(g, &s, tile, run);
  if (legacy) {
    LLVMValueRef base = LLVMBuildSub(g->b, add(g, add(g, s.x.row_base, zext64(g, rstart)), zext64(g, prior)),
                                     zext64(g, tstart), "");
    store(g, base, at(g, g->i64, s.sb, s.tid), 8);
  } else { /* in the row: rstart + prior >= tstart (the row has at least the tile's keys of smaller digits) */
    store(g, LLVMBuildSub(g->b, add(g, rstart, prior), tstart, ""), at(g, g->i32, s.sb, s.tid), 4);
  }
  g->h.barrier(&g->m);
  /* made here, where it is used (the planned pass reads it from its plan word) */
  LLVMValueRef widen = vb == 4 ? LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, cg_radix_vals_mode(g, &s), c32(g, 4), ""),
                                               c32(g, 0), "")
                               : NULL;
  if (!legacy) {
    write_tile(g, &s, stage_v, moved, widen);
    LLVMBuildRetVoid(g->b);
    return;
  }

  /* legacy: slots in tile order, then keys (and values) out, in two rounds through one region */
  LLVMValueRef pos[CG_RADIX_MAX_ITEMS];
  LLVMValueRef wbase = mul(g, s.warp, c32(g, RADIX_DIGITS));
  for (int j = 0; j < I; j++) {
    LLVMValueRef t0 = load(g, g->i32, at(g, g->i32, s.ts, s.dig[j]), 4);
    LLVMValueRef w0 = load(g, g->i32, at(g, g->i32, s.wc, add(g, wbase, s.dig[j])), 4);
    pos[j] = zext64(g, add(g, add(g, t0, w0), s.rank[j]));
  }
  scatter(g, &s, g->kt, (unsigned)kb, s.key, pos, s.keys_out, true, NULL);
  if (vb) {
    after = if_begin(g, moved); /* uniform */
    g->h.barrier(&g->m);
    scatter(g, &s, g->vt, (unsigned)vb, s.val, pos, s.vals_out, false, widen);
    if_end(g, after);
  }
  LLVMBuildRetVoid(g->b);
}

/* ---- the module ------------------------------------------------------------------------------------------ */
static LoomStatus build(LoomContext *ctx, const CgRadixSpec *spec, LLVMContextRef c, LLVMModuleRef *out, Diag *d) {
  (void)ctx;
  if (!spec->take && !cg_radix_key_ok(spec->key))
    return diag_error(d, LOOM_ERR_DTYPE, "radix sort: keys of dtype %s cannot be radix-sorted",
                      loom_dtype_name(spec->key) ? loom_dtype_name(spec->key) : "?");
  if (spec->value_bytes != 0 && spec->value_bytes != 4 && spec->value_bytes != 8)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "radix sort: values of %d bytes (0, 4 or 8)", spec->value_bytes);
  if (spec->wave != 32 && spec->wave != 64)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "radix sort: a wave of %d threads (32 or 64)", spec->wave);
  Gen g;
  memset(&g, 0, sizeof g);
  g.spec = *spec;
  g.sh = cg_radix_shape(spec);
  if (spec->amdgpu) cg_amdgpu_lower_hooks(&g.h, spec->wave);
  else cg_nvptx_lower_hooks(&g.h);
  if (g.h.wave != spec->wave || !g.h.ballot || !g.h.wave_sync)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "radix sort: the target's wave is %d, not %d", g.h.wave, spec->wave);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("loom_radix", c);
  LLVMSetTarget(mod, spec->amdgpu ? AMDGPU_TRIPLE : NVPTX_TRIPLE);
  g.b = LLVMCreateBuilderInContext(c);
  g.m = (CgMath){.c = c, .m = mod, .b = g.b, .gpu = &g.h, .d = d};
  g.i1 = LLVMInt1TypeInContext(c);
  g.i8 = LLVMInt8TypeInContext(c);
  g.i32 = LLVMInt32TypeInContext(c);
  g.i64 = LLVMInt64TypeInContext(c);
  g.kbits = spec->take ? 32 : dtype_bits(spec->key);
  g.kt = LLVMIntTypeInContext(c, (unsigned)g.kbits);
  g.vt = LLVMIntTypeInContext(c, (unsigned)(spec->value_bytes ? spec->value_bytes * 8 : 32));
  g.mt = LLVMIntTypeInContext(c, (unsigned)spec->wave);
  g.pg = LLVMPointerTypeInContext(c, g.h.as_global);
  g.ps = LLVMPointerTypeInContext(c, g.h.as_shared);
  g.nwarps = g.sh.block / spec->wave;
  if (!spec->rows) cg_radix_gen_zero(&g);
  if (spec->take) {
    for (int bytes = 1; bytes <= 16; bytes *= 2) cg_radix_gen_take(&g, bytes);
  } else if (spec->rows) {
    int items[CG_RADIX_ROW_VARIANTS], nv = cg_radix_row_items(spec, items);
    for (int i = 0; i < nv; i++) cg_radix_gen_rows(&g, items[i]);
  } else {
    gen_histogram(&g);
    gen_pass(&g);
    if (cg_radix_skips(spec)) { /* gpu_radix_plan.c */
      cg_radix_gen_plan(&g);
      cg_radix_gen_copy(&g);
    }
  }
  LLVMDisposeBuilder(g.b);
  if (d->status != LOOM_OK) {
    LLVMDisposeModule(mod);
    return d->status;
  }
  *out = mod;
  return LOOM_OK;
}

LoomStatus cg_radix_module(LoomContext *ctx, const CgRadixSpec *spec, void **bitcode, size_t *size, Diag *d) {
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  LoomStatus st = build(ctx, spec, c, &mod, d);
  if (st == LOOM_OK) {
    LLVMMemoryBufferRef mb = LLVMWriteBitcodeToMemoryBuffer(mod);
    size_t n = mb ? LLVMGetBufferSize(mb) : 0;
    char *p = n ? ctx_alloc(ctx, n) : NULL;
    if (p) {
      memcpy(p, LLVMGetBufferStart(mb), n);
      *bitcode = p;
      *size = n;
    } else {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "radix sort: out of memory for the kernels' bitcode");
    }
    if (mb) LLVMDisposeMemoryBuffer(mb);
    LLVMDisposeModule(mod);
  }
  LLVMContextDispose(c);
  return st;
}

LoomStatus cg_radix_module_text(LoomContext *ctx, const CgRadixSpec *spec, char **text, Diag *d) {
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  LoomStatus st = build(ctx, spec, c, &mod, d);
  if (st == LOOM_OK) {
    char *s = LLVMPrintModuleToString(mod);
    size_t n = strlen(s);
    *text = ctx_alloc(ctx, n + 1);
    if (*text) memcpy(*text, s, n + 1);
    else st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "radix sort: out of memory for the kernels' text");
    LLVMDisposeMessage(s);
    LLVMDisposeModule(mod);
  }
  LLVMContextDispose(c);
  return st;
}
