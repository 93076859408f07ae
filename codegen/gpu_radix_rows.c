/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_rows.c: the block row sort of the radix module (gpu_radix.h: loom_radix_rows<I>): one block
 * sorts one row of n <= 256 I keys whole in shared memory, in one launch.
 *
 * Why. The tile sweep (gpu_radix.c) costs 2 + P launches and gives every row at least one tile of 2048-4096
 * keys per pass, with a look-back over the row's tiles: 1000 rows of 1000 keys run 4 x 1000 mostly idle
 * tiles. Here the row is read once into shared memory, each of the P digit passes ranks the staged keys
 * exactly as the sweep ranks a tile (warp-striped items, wave match-any or ballots, per-wave digit
 * counters summed in wave order: stable) and moves keys (and values) to their places within shared
 * memory, and the row is written once: 2 x (key + value) bytes of global traffic per key instead of
 * P x 2 x (key + value) plus the histogram's read, and no look-back.
 *
 * Trivial passes: after the row is staged, each wave ORs which digits differ from the row's first key
 * (one barrier); a pass whose digit is the same in every key is the identity and is skipped by the whole
 * block (CgRadixSpec.all_passes, LOOM_GPU_RADIX_SKIP=0, keeps every pass).
 * Per pass: zero the wave counters | barrier | load the thread's items from the staged row, rank them
 * (one word each: rank | digit << 16) | barrier | thread d: wave prefixes of digit d, the block's exclusive
 * scan of the counts (the digit's start in the row) | barrier | store each item at start + wave prefix +
 * rank | barrier (before the next pass zeroes the counters the stores read). Shared memory: the row's keys and values (256 I (key + value bytes)), the wave counters
 * (8 KB at wave 32), the digit starts (1 KB): the variants are those that fit CG_RADIX_SHARED_BYTES
 * (cg_radix_row_items). Registers: I keys, I values and I packed ranks live across the scan (ptxas -v,
 * sm_90: 80-176 registers, no spills; one to three blocks a multiprocessor).
 * Cost (prediction, bench/sort_sweep.py measures it): ~70 instructions a key a pass and the row read and
 * written once: 1000 x 1000 float32 sort 2^20 x 4 x 70 / 3.3e13 lane instructions/s = 9 us of issue +
 * 8 MB at 3.5 TB/s + a launch: 15-40 us (torch 78 us, CuPy 390 us, the tile sweep 130 us before).
 */
#include <stdio.h>

#include "codegen/gpu_radix_gen.h"

#define DIGITS 256

/* Shared bytes besides the staged row: wave counters, digit starts, the scan's words. */
static int rows_fixed_shared(int wave) { return CG_RADIX_BLOCK / wave * DIGITS * 4 + DIGITS * 4 + 64; }

int cg_radix_row_items(const CgRadixSpec *spec, int items[CG_RADIX_ROW_VARIANTS]) {
  if (spec->take) return 0;
  int per_key = dtype_bits(spec->key) / 8 + spec->value_bytes, count = 0;
  int room = CG_RADIX_SHARED_BYTES - rows_fixed_shared(spec->wave ? spec->wave : 32);
  for (int i = 1; i <= CG_RADIX_MAX_ITEMS && count < CG_RADIX_ROW_VARIANTS; i *= 2)
    if (CG_RADIX_BLOCK * i * per_key <= room) items[count++] = i;
  return count;
}

/* value (vt) of slot i (i64) of the row: copied from vals (mode 2) or the slot itself (mode 1: argsort). */
static LLVMValueRef row_value(Gen *g, LLVMValueRef mode2, LLVMValueRef vals_row, LLVMValueRef i) {
  unsigned vb = (unsigned)g->spec.value_bytes;
  LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.copy");
  LLVMBasicBlockRef iota = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.iota");
  LLVMBasicBlockRef put = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.put");
  LLVMBuildCondBr(g->b, mode2, copy, iota);
  LLVMPositionBuilderAtEnd(g->b, copy);
  LLVMValueRef cv = load(g, g->vt, at(g, g->vt, vals_row, i), vb);
  LLVMBuildBr(g->b, put);
  LLVMPositionBuilderAtEnd(g->b, iota);
  LLVMValueRef iv = vb == 8 ? i : LLVMBuildTrunc(g->b, i, g->vt, "");
  LLVMBuildBr(g->b, put);
  LLVMPositionBuilderAtEnd(g->b, put);
  LLVMValueRef v = LLVMBuildPhi(g->b, g->vt, "");
  LLVMValueRef vv[2] = {cv, iv};
  LLVMBasicBlockRef vbb[2] = {copy, iota};
  LLVMAddIncoming(v, vv, vbb, 2);
  return v;
}

/* Bit p set when digit p of the image differs between keys of the row (n32 >= 1 keys staged in sk; each
 * thread compares its own slots with the row's first key, read from kin): wave OR by shuffles, one word a
 * wave in wsum, then every thread ORs them (one barrier; wsum is free again before the first pass's scan). */
static LLVMValueRef row_varying_digits(Gen *g, LLVMValueRef sk, LLVMValueRef kin, LLVMValueRef n32, LLVMValueRef tid,
                                       LLVMValueRef lane, LLVMValueRef warp, LLVMValueRef wsum, LLVMValueRef desc, int I) {
  unsigned kb = (unsigned)g->kbits / 8;
  LLVMValueRef ref = cg_radix_key_image(g, load(g, g->kt, kin, kb), desc), diff = ck(g, 0);
  for (int j = 0; j < I; j++) { /* the thread's own slots: its stores above, seen without a barrier */
    LLVMValueRef i = add(g, tid, c32(g, (unsigned)(j * CG_RADIX_BLOCK)));
    LLVMValueRef ok = ult(g, i, n32);
    LLVMValueRef u = cg_radix_key_image(g, load(g, g->kt, at(g, g->kt, sk, sel(g, ok, i, c32(g, 0))), kb), desc);
    diff = LLVMBuildOr(g->b, diff, sel(g, ok, LLVMBuildXor(g->b, u, ref, ""), ck(g, 0)), "");
  }
  LLVMValueRef mask = c32(g, 0);
  for (int q = 0; q < (int)kb; q++) {
    LLVMValueRef byte = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, diff, ck(g, (unsigned)(8 * q)), ""), ck(g, 255), "");
    mask = LLVMBuildOr(g->b, mask, sel(g, eq(g, byte, ck(g, 0)), c32(g, 0), c32(g, 1u << q)), "");
  }
  for (int k = 1; k < g->spec.wave; k *= 2) mask = LLVMBuildOr(g->b, mask, g->h.shuffle_xor(&g->m, mask, k), "");
  LLVMBasicBlockRef after = if_begin(g, eq(g, lane, c32(g, 0)));
  store(g, mask, at(g, g->i32, wsum, warp), 4);
  if_end(g, after);
  g->h.barrier(&g->m);
  LLVMValueRef all = c32(g, 0);
  for (int w = 0; w < g->nwarps; w++) all = LLVMBuildOr(g->b, all, load(g, g->i32, at(g, g->i32, wsum, c32(g, (unsigned)w)), 4), "");
  return all;
}

void cg_radix_gen_rows(Gen *g, int I) {
  char name[40], sname[56];
  snprintf(name, sizeof name, "loom_radix_rows%d", I);
  LLVMTypeRef ps[7] = {g->pg, g->pg, g->pg, g->pg, g->i64, g->i64, g->i32};
  begin_kernel(g, name, ps, 7);
  LLVMValueRef keys_in = LLVMGetParam(g->fn, 0), keys_out = LLVMGetParam(g->fn, 1);
  LLVMValueRef vals_in = LLVMGetParam(g->fn, 2), vals_out = LLVMGetParam(g->fn, 3), n = LLVMGetParam(g->fn, 4);
  LLVMValueRef desc = cg_radix_desc_of(g, LLVMGetParam(g->fn, 5)), mode = LLVMGetParam(g->fn, 6);
  int W = g->spec.wave, B = CG_RADIX_BLOCK, T = B * I, vb = g->spec.value_bytes, P = g->kbits / 8;
  unsigned kb = (unsigned)g->kbits / 8;
  snprintf(sname, sizeof sname, "%s_keys", name);
  LLVMValueRef sk = shared_array(g, sname, g->kt, (unsigned)T, 16), sv = NULL;
  if (vb) {
    snprintf(sname, sizeof sname, "%s_values", name);
    sv = shared_array(g, sname, g->vt, (unsigned)T, 16);
  }
  snprintf(sname, sizeof sname, "%s_wave_counts", name);
  LLVMValueRef wc = shared_array(g, sname, g->i32, (unsigned)(g->nwarps * DIGITS), 16);
  snprintf(sname, sizeof sname, "%s_starts", name);
  LLVMValueRef ts = shared_array(g, sname, g->i32, DIGITS, 16);
  snprintf(sname, sizeof sname, "%s_scan", name);
  LLVMValueRef wsum = shared_array(g, sname, g->i32, (unsigned)g->nwarps, 16);
  LLVMValueRef tid = thread_id(g), tid64 = zext64(g, tid);
  LLVMValueRef lane = LLVMBuildAnd(g->b, tid, c32(g, (unsigned)W - 1), "");
  LLVMValueRef warp = LLVMBuildUDiv(g->b, tid, c32(g, (unsigned)W), "");
  LLVMValueRef row_base = mul(g, zext64(g, g->h.index(&g->m, CG_GPU_BLOCK_ID)), n);
  LLVMValueRef n32 = LLVMBuildTrunc(g->b, n, g->i32, ""); /* n <= T */
  LLVMValueRef kin = at(g, g->kt, keys_in, row_base), kout = at(g, g->kt, keys_out, row_base);
  LLVMValueRef mode2 = vb ? eq(g, LLVMBuildAnd(g->b, mode, c32(g, 3), ""), c32(g, 2)) : NULL;
  LLVMValueRef moved = vb ? LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, mode, c32(g, 3), ""), c32(g, 0), "") : NULL;

  /* the row into shared memory, block-striped (consecutive threads read consecutive keys) */
  for (int j = 0; j < I; j++) {
    LLVMValueRef i = add(g, tid64, c64(g, (unsigned)(j * B)));
    LLVMBasicBlockRef after = if_begin(g, ult(g, i, n));
    store(g, load(g, g->kt, at(g, g->kt, kin, i), kb), at(g, g->kt, sk, i), kb);
    if (vb) {
      LLVMBasicBlockRef vdone = if_begin(g, moved);
      store(g, row_value(g, mode2, at(g, g->vt, vals_in, row_base), i), at(g, g->vt, sv, i), (unsigned)vb);
      if_end(g, vdone);
    }
    if_end(g, after);
  }
  LLVMValueRef varies = g->spec.all_passes ? NULL : row_varying_digits(g, sk, kin, n32, tid, lane, warp, wsum, desc, I);

  /* for pass p in 0 .. P-1 */
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.pass");
  LLVMBasicBlockRef work = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.rank");
  LLVMBasicBlockRef latch = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.done");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef p = LLVMBuildPhi(g->b, g->i32, "pass");
  /* a digit the same in every key of the row: the pass is the identity, skipped (uniform over the block) */
  LLVMValueRef bit = varies ? LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, varies, p, ""), c32(g, 1), "") : c32(g, 1);
  LLVMBuildCondBr(g->b, eq(g, bit, c32(g, 0)), latch, work);
  LLVMPositionBuilderAtEnd(g->b, work);
  LLVMValueRef shift = mul(g, p, c32(g, 8));
  shift = g->kbits >= 32 ? LLVMBuildZExtOrBitCast(g->b, shift, g->kt, "") : LLVMBuildTrunc(g->b, shift, g->kt, "");
  for (int k = 0; k < g->nwarps * DIGITS / B; k++)
    store(g, c32(g, 0), at(g, g->i32, wc, add(g, tid, c32(g, (unsigned)(k * B)))), 4);
  g->h.barrier(&g->m); /* the staged row (load or last pass) and the zeroed counters seen by all */
  LLVMValueRef key[CG_RADIX_MAX_ITEMS], val[CG_RADIX_MAX_ITEMS], packed[CG_RADIX_MAX_ITEMS];
  LLVMValueRef wcw = at(g, g->i32, wc, mul(g, warp, c32(g, DIGITS)));
  for (int j = 0; j < I; j++) { /* item j: element j W + lane of the wave's run (warp-striped: stable) */
    LLVMValueRef e = add(g, mul(g, warp, c32(g, (unsigned)(I * W))), add(g, lane, c32(g, (unsigned)(j * W))));
    LLVMValueRef ok = ult(g, e, n32);
    LLVMValueRef slot = sel(g, ok, e, c32(g, 0));
    key[j] = load(g, g->kt, at(g, g->kt, sk, slot), kb);
    val[j] = vb ? load(g, g->vt, at(g, g->vt, sv, slot), (unsigned)vb) : NULL;
    LLVMValueRef d = sel(g, ok, cg_radix_digit(g, cg_radix_key_image(g, key[j], desc), shift), c32(g, 0));
    LLVMValueRef r = cg_radix_wave_rank(g, ok, d, lane, wcw);
    d = sel(g, ok, d, c32(g, DIGITS));
    packed[j] = pin(g, LLVMBuildOr(g->b, r, LLVMBuildShl(g->b, d, c32(g, 16), ""), ""));
  }
  g->h.barrier(&g->m);
  /* thread d: the waves' prefixes of digit d (in wave order), then the digit's start in the row */
  LLVMValueRef run = c32(g, 0);
  for (int w = 0; w < g->nwarps; w++) {
    LLVMValueRef q = at(g, g->i32, wc, add(g, tid, c32(g, (unsigned)(w * DIGITS))));
    LLVMValueRef c = load(g, g->i32, q, 4);
    store(g, run, q, 4);
    run = add(g, run, c);
  }
  store(g, cg_radix_block_scan(g, run, tid, wsum), at(g, g->i32, ts, tid), 4);
  g->h.barrier(&g->m);
  for (int j = 0; j < I; j++) {
    LLVMValueRef d = LLVMBuildLShr(g->b, packed[j], c32(g, 16), "");
    LLVMValueRef ok = ult(g, d, c32(g, DIGITS));
    d = LLVMBuildAnd(g->b, d, c32(g, DIGITS - 1), "");
    LLVMValueRef pos = add(g, add(g, load(g, g->i32, at(g, g->i32, ts, d), 4), load(g, g->i32, at(g, g->i32, wcw, d), 4)),
                           LLVMBuildAnd(g->b, packed[j], c32(g, 0xffff), ""));
    LLVMBasicBlockRef after = if_begin(g, ok);
    store(g, key[j], at(g, g->kt, sk, pos), kb);
    if (vb) store(g, val[j], at(g, g->vt, sv, pos), (unsigned)vb);
    if_end(g, after);
  }
  g->h.barrier(&g->m); /* every store (and every read of the counters) done before the next pass */
  LLVMBuildBr(g->b, latch);
  LLVMPositionBuilderAtEnd(g->b, latch);
  LLVMValueRef next = add(g, p, c32(g, 1));
  LLVMBuildCondBr(g->b, ult(g, next, c32(g, (unsigned)P)), head, done);
  LLVMValueRef pv[2] = {c32(g, 0), next};
  LLVMBasicBlockRef pb[2] = {entry, latch};
  LLVMAddIncoming(p, pv, pb, 2);

  /* the sorted row out, block-striped; argsort's int32 index sign-extended into int64 (mode & 4) */
  LLVMPositionBuilderAtEnd(g->b, done);
  LLVMValueRef widen = vb == 4 ? LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, mode, c32(g, 4), ""), c32(g, 0), "")
                               : NULL;
  for (int j = 0; j < I; j++) {
    LLVMValueRef i = add(g, tid64, c64(g, (unsigned)(j * B)));
    LLVMBasicBlockRef after = if_begin(g, ult(g, i, n));
    store(g, load(g, g->kt, at(g, g->kt, sk, i), kb), at(g, g->kt, kout, i), kb);
    if (vb) {
      LLVMBasicBlockRef vdone = if_begin(g, moved);
      LLVMValueRef v = load(g, g->vt, at(g, g->vt, sv, i), (unsigned)vb);
      LLVMValueRef vrow = add(g, row_base, i);
      if (widen) {
        LLVMBasicBlockRef wide = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.wide");
        LLVMBasicBlockRef narrow = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "rows.narrow");
        LLVMBuildCondBr(g->b, widen, wide, narrow);
        LLVMPositionBuilderAtEnd(g->b, wide);
        store(g, LLVMBuildSExt(g->b, v, g->i64, ""), at(g, g->i64, vals_out, vrow), 8);
        LLVMBuildBr(g->b, vdone);
        LLVMPositionBuilderAtEnd(g->b, narrow);
      }
      store(g, v, at(g, g->vt, vals_out, vrow), (unsigned)vb);
      if_end(g, vdone);
    }
    if_end(g, after);
  }
  LLVMBuildRetVoid(g->b);
}
