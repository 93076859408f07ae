/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_launch_policy.c: the GPU launch policy (gpu_launch_policy.h), for libloom and libloomrt alike.
 *
 * Elementwise kernels use the occupancy's block size, their 16-byte vector entries when every base is
 * aligned (the whole-vector one when the point count is a multiple of the lanes) on a grid that gives each
 * thread ELEM_THREAD_POINTS points, the scalar entry likewise (the grid capped at the resident blocks near
 * 2^31 points, where a 32-bit index could wrap). Reductions pick a cached-row entry when a row fits
 * in registers, else split R into parts by the sizes alone (the same bits on every run and every
 * device; a multi-phase kernel one phase at a time over the whole grid: codegen/gpu_phases.c) or run one
 * block (ROW) or thread (COL) per output point. Scans run one block per row, or for few long rows
 * either parts (two entries) or the single-pass look-back entry (codegen.h).
 * Every block that runs a block reduction is a multiple of the kernel's wave (32 on NVIDIA; 64 or 32 on
 * AMD). Entries are asked for (need) before they are used: libloom compiles missing ones, libloomrt has
 * them all. Nothing here compiles, allocates but partials from the device pool, or knows a vendor.
 */
#include "runtime/gpu/gpu_launch_policy.h"

#include <stdlib.h>

enum { P_MAIN, P_VEC, P_PART, P_FINISH, P_CACHED, P_PARTV, P_CACHEDV, P_FINISHB, P_VECW, P_FLATV };
_Static_assert(CG_ENTRY_FLATV == 1u << P_FLATV && CG_ENTRY_VECW == 1u << P_VECW && CG_ENTRY_FINISHB == 1u << P_FINISHB && CG_ENTRY_CACHEDV == 1u << P_CACHEDV,
               "entry indices are the bits of CG_ENTRY_*");

enum { ELEM_THREAD_POINTS = 16 }; /* points an elementwise entry's thread gets (see the policy) */
enum { ELEM_POINTS_AHEAD_MAX = 4 }; /* the scalar entry's points read ahead, at most (GPU_ELEM_POINTS_MAX, cg_lower.h) */

static uint32_t grid_of(int64_t items, int64_t per_block, int64_t cap) {
  int64_t g = (items + per_block - 1) / per_block;
  if (g > cap) g = cap;
  if (g < 1) g = 1;
  return (uint32_t)g;
}

static uint64_t dtype_bytes(uint8_t t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_UINT8: return 1;
  case LOOM_INT16: case LOOM_UINT16: case LOOM_FLOAT16: case LOOM_BFLOAT16: return 2;
  case LOOM_INT32: case LOOM_UINT32: case LOOM_FLOAT32: return 4;
  case LOOM_INT64: case LOOM_UINT64: case LOOM_FLOAT64: case LOOM_COMPLEX64: return 8;
  case LOOM_COMPLEX128: return 16;
  default: return 0;
  }
}

/* Whether the vector entries (lanes points per load) may run: every buffer contiguous along the last
 * dim has a base that is a multiple of lanes * its dtype size and O strides that are multiples of
 * lanes (so every row starts aligned). */
static bool vec_aligned(const RtGpuLauncher *L, const uint64_t *words, int lanes) {
  int nd = L->ndim, nb = L->nbuf;
  if (lanes < 2 || nd < 1) return false;
  for (int b = 0; b < nb; b++) {
    if (L->bufs[b].layout[nd - 1] != KL_ONE) continue;
    uint64_t align = (uint64_t)lanes * dtype_bytes(L->bufs[b].dtype);
    if (align == 0 || words[nd + b] % align) return false;
    for (int dd = 0; dd < L->nkeep; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

/* Whether a COL kernel's vector part over packed rows (codegen/gpu_colv.c: its buffers [1, S] with S = 2..4)
 * may run: two dims, the kept extent S, and every such buffer's base aligned to a vector. */
static bool colv_ok(const RtGpuLauncher *L, const uint64_t *words, int lanes) {
  int nb = L->nbuf;
  if (L->ndim != 2 || L->nkeep != 1 || lanes < 2) return false;
  int64_t s = 0, c;
  for (int b = 0; b < nb; b++) {
    if (L->bufs[b].layout[0] != KL_ONE || !ir_layout_const(L->bufs[b].layout[1], &c) || c < 2) continue;
    if ((s && c != s) || words[2 + b] % ((uint64_t)lanes * dtype_bytes(L->bufs[b].dtype))) return false;
    s = c;
  }
  return s >= 2 && (int64_t)words[0] == s;
}

/* Whether a ROW reduction's flatv (codegen/gpu_rowflat.c: short packed rows, the kernel specialized on their
 * extent nr) may run: every buffer contiguous along the row and varying along the rows has a base that is a
 * multiple of its vector (lanes: 16 bytes of the widest such buffer) and rows nr apart (the specialization
 * checked the strides of its plan; checked again, as words are cheap). Its rows a chunk into *rows. */
static bool rowflat_ok(const RtGpuLauncher *L, const uint64_t *words, int64_t nr, int64_t *rows) {
  int nb = L->nbuf;
  if (L->ndim != 2 || L->nkeep != 1 || nr < 2) return false;
  uint64_t widest = 0;
  for (int b = 0; b < nb; b++)
    if (L->bufs[b].layout[1] == KL_ONE && L->bufs[b].layout[0] != KL_ZERO && dtype_bytes(L->bufs[b].dtype) > widest)
      widest = dtype_bytes(L->bufs[b].dtype);
  if (widest < 1 || widest > 8) return false;
  int64_t lanes = 16 / (int64_t)widest;
  for (int b = 0; b < nb; b++) {
    if (L->bufs[b].layout[1] != KL_ONE || L->bufs[b].layout[0] == KL_ZERO) continue;
    if (words[2 + b] % ((uint64_t)lanes * dtype_bytes(L->bufs[b].dtype)) || (int64_t)words[2 + nb + b * 2] != nr ||
        words[2 + nb + b * 2 + 1] != 1)
      return false;
  }
  int64_t a = nr, c = lanes; /* rows a chunk: lcm(nr, lanes) / nr */
  while (c) {
    int64_t t = a % c;
    a = c, c = t;
  }
  *rows = lanes / a;
  return true;
}

/* Whether an elementwise kernel's vector entries may run on these words, beyond the bases' alignment:
 * for n-d kernels no vector crosses a row (the last dim a multiple of the lanes) and every buffer
 * contiguous along the last dim starts its rows aligned (its other strides multiples of the lanes). */
static bool elem_vec_ok(const RtGpuLauncher *L, const uint64_t *words, int lanes) {
  int nd = L->ndim, nb = L->nbuf;
  if (nd <= 1) return true;
  if ((int64_t)words[nd - 1] % lanes) return false;
  for (int b = 0; b < nb; b++) {
    if (L->bufs[b].layout[nd - 1] != KL_ONE) continue;
    for (int dd = 0; dd < nd - 1; dd++)
      if ((int64_t)words[nd + nb + b * nd + dd] % lanes) return false;
  }
  return true;
}

/* Whether `flatv` (codegen.h) may run on these words: an n-d kernel's buffers contiguous along the last dim
 * and broadcast along none (its vector buffers) are C-contiguous (each stride the product of the later
 * dims, any along a dim of extent 1) with bases that are multiples of lanes * their dtype size; kernels of 3
 * or more dims also need rows of at least a vector (its lanes then cross at most one row end). */
static bool elem_flat_ok(const RtGpuLauncher *L, const uint64_t *words, int lanes) {
  int nd = L->ndim, nb = L->nbuf;
  if (nd < 2 || lanes < 2 || (nd > 2 && (int64_t)words[nd - 1] < lanes)) return false;
  for (int b = 0; b < nb; b++) {
    bool vec = L->bufs[b].layout[nd - 1] == KL_ONE;
    for (int d = 0; d < nd - 1; d++) vec = vec && L->bufs[b].layout[d] != KL_ZERO;
    if (!vec) continue;
    uint64_t align = (uint64_t)lanes * dtype_bytes(L->bufs[b].dtype);
    if (align == 0 || words[nd + b] % align) return false;
    int64_t want = (int64_t)words[nd - 1];
    for (int d = nd - 2; d >= 0; d--) {
      if (words[d] != 1 && (int64_t)words[nd + nb + b * nd + d] != want) return false;
      want *= (int64_t)words[d];
    }
  }
  return true;
}

/* Threads per block of the cached entries' short-row mode (capped by the entry's register limit). */
#define SHORT_ROW_BLOCK 256

/* An environment knob of the launch policy (A/B timings), read once into *slot (a static int, -2 at
 * first): its value, >= 0; -1 when unset (the policy's default). */
static int env_knob_once(int *slot, const char *name) {
  int r = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (r == -2) {
    const char *s = getenv(name);
    r = s && *s ? atoi(s) : -1;
    if (r < -1) r = -1;
    __atomic_store_n(slot, r, __ATOMIC_RELAXED);
  }
  return r;
}

/* LOOM_GPU_ELEM_FLAT=0: kernels that flatv could run take the scalar entry, as before (A/B timings). */
static int flat_knob(void) {
  static int on = -2;
  return env_knob_once(&on, "LOOM_GPU_ELEM_FLAT");
}

/* Whether the vector cached entry of cache_k points a thread has the peel (codegen/gpu_cached.c, the same
 * rule): LOOM_GPU_ROWV_PEEL unset or 1: entries below 32 points (GPU_CACHE_K_MAX); 2: all; 0: none (the
 * entry only for aligned rows of whole vectors, as before). */
static bool rowv_peel_enabled(int64_t cache_k) {
  static int on = -2;
  int v = env_knob_once(&on, "LOOM_GPU_ROWV_PEEL");
  return v == 2 || (v != 0 && cache_k < 32);
}

/* Whether the peeled vector cached entry may run (codegen/gpu_cached.c: the peel): every buffer contiguous
 * along the last dim has a base that is a multiple of its dtype size, and the same start phase (point
 * offset mod lanes) on every row as the first such buffer: equal base phases, O strides equal mod lanes. */
static bool vec_phase_ok(const RtGpuLauncher *L, const uint64_t *words, int lanes) {
  int nd = L->ndim, nb = L->nbuf, ref = -1;
  if (lanes < 2 || nd < 1) return false;
  for (int b = 0; b < nb; b++) {
    if (L->bufs[b].layout[nd - 1] != KL_ONE) continue;
    uint64_t sz = dtype_bytes(L->bufs[b].dtype);
    if (sz == 0 || words[nd + b] % sz) return false;
    if (ref < 0) ref = b;
    if ((words[nd + b] / sz) % (uint64_t)lanes != (words[nd + ref] / dtype_bytes(L->bufs[ref].dtype)) % (uint64_t)lanes)
      return false;
    for (int dd = 0; dd < L->nkeep; dd++) {
      int64_t s = (int64_t)words[nd + nb + b * nd + dd], r = (int64_t)words[nd + nb + ref * nd + dd];
      if (((s % lanes) + lanes) % lanes != ((r % lanes) + lanes) % lanes) return false;
    }
  }
  return ref >= 0;
}

/* The most extra points (head + tail) a row of nr points has in the peeled vector entry: heads 0 .. lanes
 * - 1 (only 0 when every row starts aligned). */
static int64_t peel_extras(int64_t nr, int64_t lanes, bool aligned) {
  int64_t most = 0;
  for (int64_t h = 0; h < (aligned ? 1 : lanes); h++) {
    int64_t hh = h < nr ? h : nr, x = hh + (nr - hh) % lanes;
    if (x > most) most = x;
  }
  return most;
}

/* Threads per block of the short-row mode: a multiple of the wave up to SHORT_ROW_BLOCK (and lim, the most
 * the entry launches with: its registers' cap, about the threads they let a multiprocessor hold), the one
 * that keeps the most threads resident (floor(lim / bs) blocks of bs), the largest of equals. Written for
 * softmax_f16_keys (200003 rows of 1000 float16, a warp a row), thought to run
 * blocks of 256 (at 92 registers, two a multiprocessor); ncu later showed its entry at 64 registers, and
 * the fit changed nothing measured (bench/results/2026-12-05-1551-ab-short-rows-h100.md); kept for entries
 * whose registers cap their blocks. LOOM_GPU_SHORT_ROW_FIT=0: blocks of min(lim, SHORT_ROW_BLOCK), as before (A/B timings). */
static int64_t short_row_block(int lim, int wave) {
  static int fit = -2;
  int64_t cap = lim < SHORT_ROW_BLOCK ? lim : SHORT_ROW_BLOCK;
  if (env_knob_once(&fit, "LOOM_GPU_SHORT_ROW_FIT") == 0) return cap - cap % wave;
  int64_t best = cap - cap % wave, most = 0;
  for (int64_t bs = wave; bs <= cap; bs += wave)
    if ((lim / bs) * bs >= most) most = (lim / bs) * bs, best = bs;
  return best;
}

/* LOOM_GPU_SHORT_ROW_VECS: at most that many vectors a lane of a short row (unset: the policy's rule). */
static int short_row_vecs_knob(void) {
  static int v = -2;
  return env_knob_once(&v, "LOOM_GPU_SHORT_ROW_VECS");
}

/* Rows a thread (or a short-row group) of short rows, LOOM_GPU_ROW_ITEMS (unset: 4): each thread's prologue
 * (launch words, the magic divisors' setup: a 64-bit division a dimension) is paid over that many rows, as
 * long as about 2^20 threads remain (four waves of an H100). H100, 2026-12-07: pairwise_sqdist_3d (rows of
 * 3 points, 36M rows) 0.310 -> 0.196 ms at 4; its kernel was compute bound (77 % SM, 12 % DRAM under Nsight
 * Compute). Sizes only; the bits do not depend on it (every row is one thread's or group's fold). */
static int64_t short_row_items(int64_t threads) {
  static int v = -2;
  int64_t per = env_knob_once(&v, "LOOM_GPU_ROW_ITEMS");
  if (per < 0) per = 4;
  if (per < 1) per = 1;
  while (per > 1 && threads / per < ((int64_t)1 << 20)) per /= 2;
  return per;
}

/* LOOM_GPU_ELEM_PER_THREAD: the vector entries' vectors a thread (0: the grid capped at the resident blocks;
 * unset: the policy's rule). */
static int elem_per_thread_knob(void) {
  static int v = -2;
  return env_knob_once(&v, "LOOM_GPU_ELEM_PER_THREAD");
}
static int elem_main_points_knob(void) {
  static int v = -2;
  return env_knob_once(&v, "LOOM_GPU_ELEM_MAIN_POINTS");
}

/* Whether the scalar cached entry's thread-per-row mode may run staged (codegen.h: CG_GPU_STAGE): the
 * rule's buffers each hold the rows one after another (O strides C-contiguous, a row pitch of nr; dims of
 * one point any stride) from a 16-byte aligned base. LOOM_GPU_STAGE_ROWS=0: never (codegen/gpu_stage.c reads it too). */
static bool stage_ok(const RtGpuLauncher *L, const uint64_t *words, int64_t nr) {
  static int on = -2;
  int nd = L->ndim, nb = L->nbuf;
  if (env_knob_once(&on, "LOOM_GPU_STAGE_ROWS") == 0 || nb > 64) return false;
  int sizes[64];
  for (int b = 0; b < nb; b++) sizes[b] = (int)dtype_bytes(L->bufs[b].dtype);
  uint64_t mask = cg_gpu_stage_mask(L->bufs, sizes, nb, nd, L->nkeep, (int)L->cache_k);
  for (int b = 0; b < nb && mask; b++) {
    if (!(mask >> b & 1u)) continue;
    if (words[nd + b] % 16) return false; /* the tiles are copied as 16-byte vectors */
    int64_t want = nr;
    for (int dd = L->nkeep - 1; dd >= 0; dd--) {
      int64_t n = (int64_t)words[dd], s = (int64_t)words[nd + nb + b * nd + dd];
      if (n > 1 && s != want) return false;
      want *= n;
    }
  }
  return mask != 0;
}

/* LOOM_GPU_SHORT_ROWS=0 turns the short-row mode off (A/B timings): rows then take the block mode or
 * `main` as before it existed. */
static bool short_rows_enabled(void) {
  static int on = -2;
  return env_knob_once(&on, "LOOM_GPU_SHORT_ROWS") != 0;
}

/* A block of about n threads: a multiple of the wave, at least one wave, at most cap (when cap >= wave). */
static uint32_t wave_block(int64_t n, int wave) {
  int64_t bs = (n + wave - 1) / wave * wave;
  return (uint32_t)(bs < wave ? wave : bs);
}

/* LOOM_GPU_SCAN_LB_GRID=n (A/B timings): at most n look-back blocks (each loops over tickets); unset or
 * 0: a block per tile. Read once per process. */
static int64_t scan_lb_grid_cap(void) {
  static int64_t cap = -1;
  int64_t v = __atomic_load_n(&cap, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *s = getenv("LOOM_GPU_SCAN_LB_GRID");
    v = s && *s ? strtoll(s, NULL, 10) : 0;
    if (v <= 0) v = (int64_t)1 << 30;
    __atomic_store_n(&cap, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* The block finish's block: WIDE_BLOCK threads when the O points are few (a block each, fewer blocks
 * than SMs, each folding thousands of parts), the kernel has one REDUCE phase and the entry can launch
 * that many, else the kernel's block. H200, 2026-12-04, two paired rounds: sum_all 0.0727 -> 0.0705 ms,
 * absmax_all 0.0731 -> 0.0707, argmax_all 0.0811 -> 0.0789, amp_unscale 0.1181 -> 0.1155; but the phase
 * split's moments finishes lost 2 % (bn1d_stats, var_all_f64): those keep the kernel's block. From the
 * sizes and the entry's register limit only, as libloomrt decides it too (the fold's tree, hence the
 * bits, depend on it). LOOM_GPU_FINISHB_WIDE=0: the kernel's block always (A/B timings). */
#define WIDE_BLOCK 512
static bool wide_blocks(void) {
  static int wide = -2;
  return env_knob_once(&wide, "LOOM_GPU_FINISHB_WIDE") != 0;
}

/* The block finish of a phase split's folded COL records: about FINISH_AHEAD (codegen/gpu_phases.c: 8)
 * records a thread, fewer threads than the kernel's block when the records are few. Its time is the
 * chain of Chan merges (a division each) of the ahead loop (8, however many are real), the butterfly and
 * the fold of the block's waves: bn1d_stats' 512 records a column on 256 threads ran 7.5 us under Nsight
 * Compute (H200), its SMs issuing every 7.4 cycles. LOOM_GPU_FINISHB_NARROW=0: the kernel's block. */
#define FINISH_AHEAD 8
static uint32_t narrow_finishb(const RtGpuLauncher *L, int64_t nrec, uint32_t block) {
  static int knob = -2;
  if (env_knob_once(&knob, "LOOM_GPU_FINISHB_NARROW") == 0) return block;
  uint32_t nb = wave_block((nrec + FINISH_AHEAD - 1) / FINISH_AHEAD, L->wave);
  return nb < block ? nb : block;
}

static uint32_t finishb_block(const RtGpuLauncher *L, int64_t no) {
  if (!wide_blocks() || no > 128 || L->block >= WIDE_BLOCK || L->split_reduce) return L->block;
  return L->limit(L->user, RT_LIM_FINISHB_BLOCK, P_FINISHB) >= WIDE_BLOCK ? WIDE_BLOCK : L->block;
}

/* Many rows of a few thousand points (one-phase ROW, a block a row): a block of about nr / 32 threads (at
 * least 2 waves, at most the kernel's), so that each thread folds >= 32 points (8 float32 16-byte loads in
 * flight) before the block reduction, whose cost is per thread and row. H200 2026-12-04, argmax_rows
 * (16384 x 4096 float32, 256 threads: 16 points a thread): 25 instructions a point, 63 % of issue slots
 * and 69 % of DRAM bandwidth under Nsight Compute, the fold a small part of that. Sizes only (the bits do
 * not depend on the block: the combines keep the first extreme / are the same tree per size). From rows of
 * 256 points (LOOM_GPU_ROW_NARROW_MIN; 2048 until 2026-12-07): H100, top1_accuracy (argmax of rows of 1000)
 * 0.267 -> 0.135 ms, keras_masking 0.122 -> 0.088 (blocks of 64 instead of 256, each thread >= 32 points).
 * LOOM_GPU_ROW_NARROW=0: the kernel's block. */
static uint32_t narrow_row_block(const RtGpuLauncher *L, int64_t no, int64_t nr) {
  static int knob = -2, min_r = -2;
  int least = env_knob_once(&min_r, "LOOM_GPU_ROW_NARROW_MIN");
  if (least < 0) least = 256;
  if (env_knob_once(&knob, "LOOM_GPU_ROW_NARROW") == 0 || L->split_reduce || L->split_map || no < 2048 || nr < least)
    return 0;
  const int64_t wave = L->wave;
  int64_t bs = nr / 32 / wave * wave;
  if (bs < 2 * wave) bs = 2 * wave;
  return bs < (int64_t)L->block ? (uint32_t)bs : 0;
}

/* A one-phase ROW reduction's main block: WIDE_BLOCK threads for a few rows of thousands of points (a
 * loss's mean of 16384 per-row values ran in one block of 256 threads: 4.9 us under Nsight Compute, a
 * chain of 64 loads a thread) where the entry can launch them, else the kernel's block. From the sizes
 * and the entry's register limit, as libloomrt decides it too. LOOM_GPU_FINISHB_WIDE=0: the kernel's. */
static uint32_t main_block(const RtGpuLauncher *L, int64_t no, int64_t nr) {
  uint32_t narrow = narrow_row_block(L, no, nr);
  if (narrow) return narrow;
  if (!wide_blocks() || no > 8 || nr < 4096 || L->block >= WIDE_BLOCK || L->split_reduce || L->split_map)
    return L->block;
  return L->limit(L->user, RT_LIM_MAIN_BLOCK, P_MAIN) >= WIDE_BLOCK ? WIDE_BLOCK : L->block;
}

/* The block fold of COL parts (codegen.h; codegen/gpu_colfold.c): blocks of *block threads take g =
 * *block / nO parts of all nO <= 128 O points and fold them in shared memory into one record per O point,
 * so `finish` folds ceil(nparts / g) records instead of nparts. H200, 2026-12-04, bn1d_stats (2^20 x 64
 * float32 mean and var, 4096 parts): 0.0870 -> 0.0800 ms with blocks of 256 (g = 4; its block finish 16.8
 * -> 8.7 us under Nsight Compute); blocks of 512 fold 8 (0.0794 -> 0.0786, paired). Wider kernels keep their items: tiles of 32 O
 * points x 8 parts cost sum_cols (16384 x 4096) 13 % (0.0734 -> 0.0828 ms: a block's warps read 8 row
 * ranges instead of 1 KB of one row). None (1) below two tiles of parts. Sizes only (the bits depend on g),
 * as libloomrt decides it too. LOOM_GPU_COL_FOLD=0: no fold; =2: blocks of 256 (A/B timings). */
static int64_t col_fold(const RtGpuLauncher *L, int64_t no, int64_t nparts, uint32_t *block) {
  static int knob = -2;
  int v = env_knob_once(&knob, "LOOM_GPU_COL_FOLD");
  *block = v == 2 ? 256 : CG_COL_FOLD_BLOCK;
  if (v == 0 || L->strategy != CG_GPU_COL || !cg_col_fold_ok((int)L->acc_size) || no < 1 || no > 128) return 1;
  int64_t g = *block / no;
  return nparts >= 2 * g ? g : 1;
}

/* COL parts by whole waves of resident blocks: the part entry runs no * nparts items in blocks of 256, and
 * the blocks of a last, partial wave run with most SM slots idle. From the sizes' part count, the first
 * count (at most 4x, at most `most`) whose blocks fill at least 85 % of their waves, else the fullest; one
 * wave or less is kept. Sizes and the device's resident blocks of this code only: the same bits on every
 * run. H100, 2026-12-07 00:33, LOOM_GPU_COL_WAVES=0/1 alternated twice: max_mid_3d (96 x 1999 x 1031 float32,
 * max over axis 1: 98976 columns, 2 parts = 774 blocks = 1.17 waves of 660) 0.3127 -> 0.2915 ms (3 parts);
 * sum_axes_0_2, min_cols_int32, standardize_cols, sum_cols, sumsq_cols, bn1d_stats, mean_mid within 0.6 %.
 * LOOM_GPU_COL_WAVES=0: the sizes' count (A/B timings). */
static int64_t col_wave_parts(int64_t no, int64_t nparts, int64_t most, int64_t resident) {
  static int knob = -2;
  if (resident <= 0 || env_knob_once(&knob, "LOOM_GPU_COL_WAVES") == 0) return nparts;
  int64_t best = nparts;
  double best_fill = 0;
  for (int64_t np = nparts; np <= most && np <= 4 * nparts && np < nparts + 64; np++) {
    int64_t blocks = (no * np + 255) / 256, waves = (blocks + resident - 1) / resident;
    if (np == nparts && waves <= 1) return nparts;
    double fill = (double)blocks / (double)(waves * resident);
    if (fill >= 0.85) return np;
    if (fill > best_fill) {
      best_fill = fill;
      best = np;
    }
  }
  return best;
}

/* Few long rows with the single-pass look-back `finishb` (codegen.h; a ROW scan without `part`): the
 * clear launch zeroes the scratch's ticket counter and status words, then the scan launch takes the
 * tiles in ticket order; both on the stream, so back-to-back scans and replays each start clean. The
 * tile shape is the code's (part_lanes: cg_scan_lb_pack). */
static LoomStatus scan_lookback(const RtGpuLauncher *L, uint64_t *words, uint64_t *extra, int64_t no, int64_t nr,
                                Diag *d) {
  const int64_t cap = (int64_t)1 << 30;
  const int block = cg_scan_lb_block_of((int32_t)L->part_lanes);
  int64_t tile = (int64_t)block * cg_scan_lb_items_packed((int32_t)L->part_lanes, (int)L->acc_size);
  int64_t np = (nr + tile - 1) / tile, tiles = no * np;
  LoomStatus st = L->need(L->user, CG_ENTRY_FINISHB, d);
  if (st) return st;
  uint64_t scratch = 0;
  if ((st = rt_gpu_pool_alloc(L->pool, (size_t)cg_scan_lb_bytes(tiles, (int)L->acc_size), &scratch, d))) return st;
  /* clear: items cover the tiles' status words a block's worth each (extra word 0 sized so that
   * no * word 0 items are about that many) */
  int64_t clear_blocks = (tiles + block - 1) / block;
  extra[0] = (uint64_t)((clear_blocks + no - 1) / no);
  extra[1] = scratch;
  extra[2] = (uint64_t)tiles + 1;
  st = L->launch(L->user, P_FINISHB, grid_of(clear_blocks, 1, cap), (uint32_t)block, words, d);
  extra[0] = (uint64_t)np; /* scan: tiles per row, taken by ticket */
  extra[2] = 0;
  if (st == LOOM_OK) st = L->launch(L->user, P_FINISHB, grid_of(tiles, 1, scan_lb_grid_cap()), (uint32_t)block, words, d);
  if (st == LOOM_OK) st = L->settle(L->user, d);
  Diag dd = {.status = LOOM_OK};
  rt_gpu_pool_free(L->pool, scratch, &dd);
  return st;
}

/* A COL scan's parts (codegen/lower_scan.c): one thread a column leaves most SMs idle where columns are
 * few (cumsum(axis=0) of 16007 x 6151 float64: 6151 threads, 6.7 ms on the H100 against JAX's 1.45); about
 * 2^18 (part, column) items (a wave of blocks of 256 on 132 SMs), each >= 64 rows, at most 4096 parts.
 * Sizes only (float sums' bits depend on the parts). LOOM_GPU_COL_SCAN_SPLIT=0: a thread a column. */
static int64_t col_scan_parts(int64_t no, int64_t nr) {
  static int knob = -2;
  if (env_knob_once(&knob, "LOOM_GPU_COL_SCAN_SPLIT") == 0 || no < 1) return 1;
  int64_t a = (((int64_t)1 << 18) + no - 1) / no, b = nr / 64;
  int64_t np = a < b ? a : b;
  return np > 4096 ? 4096 : np;
}

static LoomStatus scan(const RtGpuLauncher *L, uint64_t *words, uint64_t *extra, int64_t no, int64_t nr, Diag *d) {
  const int64_t cap = (int64_t)1 << 30;
  const uint32_t has = L->entries;
  /* fewer than 512 rows of two tiles or more: the look-back scan (its tiles spread over the device;
   * `main` would run a block per row) */
  if (L->strategy == CG_GPU_ROW && (has & CG_ENTRY_FINISHB) && !(has & CG_ENTRY_PART) && no < 512 &&
      nr >= 2 * (int64_t)cg_scan_lb_block_of((int32_t)L->part_lanes) *
                     cg_scan_lb_items_packed((int32_t)L->part_lanes, (int)L->acc_size))
    return scan_lookback(L, words, extra, no, nr, d);
  int64_t np = 1; /* few long rows: about 1024 parts in all, each >= 16K points (sizes only) */
  if (L->strategy == CG_GPU_ROW && (has & CG_ENTRY_PART) && (has & CG_ENTRY_FINISHB) && no < 512 && nr >= 32768) {
    int64_t a = (1024 + no - 1) / no, b = nr / 16384;
    np = a < b ? a : b;
  }
  const bool col = L->strategy == CG_GPU_COL;
  if (col && (has & CG_ENTRY_PART) && (has & CG_ENTRY_FINISHB)) np = col_scan_parts(no, nr);
  extra[2] = 0;
  LoomStatus st;
  if (np <= 1) {
    if ((st = L->need(L->user, CG_ENTRY_MAIN, d))) return st;
    uint32_t bs = wave_block(nr, L->wave); /* short rows: a block of about their length */
    if (bs > L->block) bs = L->block < (uint32_t)L->wave ? (uint32_t)L->wave : L->block;
    if (L->strategy == CG_GPU_ROW) return L->launch(L->user, P_MAIN, grid_of(no, 1, cap), bs, words, d);
    /* a thread a short row-major row (walk_cols, codegen/gpu_lower.c: cache_k > 0): blocks of CG_STAGE_BLOCK
     * copy tiles of cache_k / nr rows a thread through shared memory (gpu_stage.c), as short-row reductions */
    int64_t ck = L->cache_k;
    if (col && ck > 0 && nr > 0 && nr <= ck && stage_ok(L, words, nr)) {
      extra[2] = CG_GPU_STAGE;
      return L->launch(L->user, P_MAIN, grid_of(no, CG_STAGE_BLOCK * (ck / nr), cap), CG_STAGE_BLOCK, words, d);
    }
    return L->launch(L->user, P_MAIN, grid_of(no, 256, cap), 256, words, d);
  }
  if ((st = L->need(L->user, CG_ENTRY_PART | CG_ENTRY_FINISHB, d))) return st;
  uint64_t partials = 0; /* each part's fold, then each part scanned from the fold of those before it */
  if ((st = rt_gpu_pool_alloc(L->pool, (size_t)no * (size_t)np * (size_t)L->acc_size, &partials, d))) return st;
  extra[0] = (uint64_t)np;
  extra[1] = partials;
  /* ROW: a block per (part, row) item; COL: a thread per (part, column) item */
  uint32_t grid = col ? grid_of(no * np, 256, cap) : grid_of(no * np, 1, cap), block = col ? 256 : L->block;
  st = L->launch(L->user, P_PART, grid, block, words, d);
  if (st == LOOM_OK) st = L->launch(L->user, P_FINISHB, grid, block, words, d);
  if (st == LOOM_OK) st = L->settle(L->user, d);
  Diag dd = {.status = LOOM_OK};
  rt_gpu_pool_free(L->pool, partials, &dd);
  return st;
}

LoomStatus rt_gpu_launch_policy(const RtGpuLauncher *L, uint64_t *words, int64_t no, int64_t nr, Diag *d) {
  const uint32_t has = L->entries;
  const int wave = L->wave;
  int nd = L->ndim, nb = L->nbuf;
  uint64_t *extra = words + nd + nb + nb * nd;
  extra[0] = 1;
  extra[1] = 0;
  const int64_t cap = (int64_t)1 << 30;
  LoomStatus st;
  if (L->strategy == CG_GPU_ELEMENTWISE) {
    bool vec = (has & CG_ENTRY_VEC) && L->vec_lanes > 0 && L->vec_align > 0;
    for (int b = 0; vec && b < nb; b++) vec = words[nd + b] % L->vec_align == 0;
    vec = vec && elem_vec_ok(L, words, (int)L->vec_lanes);
    /* vectors that cross rows where rows are not whole vectors (an image's 3 channels): flatv */
    bool flat = !vec && (has & CG_ENTRY_FLATV) && L->vec_lanes > 0 && no >= 2 * (int64_t)L->vec_lanes &&
                elem_flat_ok(L, words, (int)L->vec_lanes) && flat_knob() != 0;
    /* whole vectors: vecw (unless vec is loaded and that should not load a second entry); else vec (it
     * has the tail loop) */
    bool vecw = (has & CG_ENTRY_VECW) && (L->vecw_when_vec_loaded || !(L->loaded(L->user) & CG_ENTRY_VEC));
    int e = flat ? P_FLATV : !vec ? P_MAIN : no % L->vec_lanes ? P_VEC : vecw ? P_VECW : P_VEC;
    vec = vec || flat;
    int64_t steps = vec ? no / L->vec_lanes : no;
    if (steps < 1) steps = 1;
    if ((st = L->need(L->user, 1u << e, d))) return st;
    int block = L->limit(L->user, RT_LIM_ELEM_BLOCK, e), grid = L->limit(L->user, RT_LIM_ELEM_GRID, e);
    if (block < wave) block = wave;
    /* the vector entries: a grid of as many blocks as the points need, ELEM_THREAD_POINTS points (at least
     * two vectors: one pass of the pair loop) a thread, not a grid capped at the resident blocks. H200,
     * 2026-12-04 (bench/suite/ab_knobs.sh, 19 workloads): every map 3-18 % faster (gelu_tanh 0.1450 ->
     * 0.1317 ms, black_scholes 1.252 -> 1.036, int8_quantize 0.0991 -> 0.0880; outer_add, amp_unscale and
     * batchnorm within 2 %): the capped grid-stride loop left warps idle at its end (ncu: 83 % achieved
     * occupancy of 100 %) and fewer loads in flight; one vector a thread (no pair) lost on short threads
     * (int8_quantize 0.116, haversine 1.20: the launch's per-thread prologue over 4 or 2 points). */
    /* the scalar entry likewise ELEM_THREAD_POINTS points a thread (LOOM_GPU_ELEM_MAIN_POINTS; 0: the grid
     * capped at the resident blocks, grid-stride, as before). Its tiled form (codegen/gpu_tile.c, 1024
     * points a tile) then gets about a block a tile, launched in order: the tiles in flight stay those
     * near each other, as the persistent blocks' grid-stride walk did not once they drifted apart */
    int per = vec ? elem_per_thread_knob() : elem_main_points_knob();
    if (per < 0) {
      per = vec ? ELEM_THREAD_POINTS / (int)L->vec_lanes : ELEM_THREAD_POINTS;
      if (per < 2) per = 2;
    }
    /* 32-bit indices (passes/lower.c) keep 2^24 of headroom past the points for i + step: the scalar
     * entry steps by its threads times the points it reads ahead (at most ELEM_POINTS_AHEAD_MAX), so a
     * launch that could pass that takes the capped grid */
    uint32_t uncapped = per > 0 ? grid_of(steps, (int64_t)block * per, INT32_MAX) : 0;
    if (!vec && steps + (int64_t)uncapped * block * ELEM_POINTS_AHEAD_MAX > (int64_t)INT32_MAX - ((int64_t)1 << 24))
      uncapped = 0;
    /* HIP launches at most 2^32 - 1 work-items (grid x block); past that (2^36 points and more) the capped
     * grid-stride launch, on every vendor */
    if ((uint64_t)uncapped * (uint64_t)block > UINT32_MAX) uncapped = 0;
    if (uncapped) return L->launch(L->user, e, uncapped, (uint32_t)block, words, d);
    return L->launch(L->user, e, grid_of(steps, block, grid > 0 ? grid : 1), (uint32_t)block, words, d);
  }
  if (L->scan) return scan(L, words, extra, no, nr, d);
  /* short packed rows of a kernel specialized on their extent: chunks of whole rows as flat vectors, a thread
   * a chunk (codegen/gpu_rowflat.c), blocks and grid cap as the elementwise entries' */
  int64_t rf_rows = 0;
  if (L->strategy == CG_GPU_ROW && (has & CG_ENTRY_FLATV) && rowflat_ok(L, words, nr, &rf_rows)) {
    if ((st = L->need(L->user, CG_ENTRY_FLATV, d))) return st;
    int block = L->limit(L->user, RT_LIM_ELEM_BLOCK, P_FLATV), grid = L->limit(L->user, RT_LIM_ELEM_GRID, P_FLATV);
    if (block > 256) block = 256; /* (the staged form's shared regions: codegen/gpu_rowflat.c ROWF_STAGE_BLOCK) */
    block -= block % wave;
    if (block < wave) block = wave;
    int64_t chunks = no / rf_rows > 0 ? no / rf_rows : 1;
    return L->launch(L->user, P_FLATV, grid_of(chunks, block, grid > 0 ? grid : 1), (uint32_t)block, words, d);
  }
  /* a row that fits in registers: one read of it (blockDim * cache_k >= nr); the threads a cached entry
   * can launch with are known once it is loaded (registers) */
  int64_t ck = L->cache_k, cl = L->cache_lanes;
  bool cv = L->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHEDV) && ck > 0 && cl > 1 && nr > 0;
  bool cv_aligned = cv && vec_aligned(L, words, (int)cl);
  /* the peel (codegen/gpu_cached.c): rows of any length >= 2 * lanes - 1 and any start phase shared by the
   * buffers; a row's extra points (head and tail) go one a thread */
  bool peel = cv && rowv_peel_enabled(ck);
  int64_t extras = peel ? peel_extras(nr, cl, cv_aligned) : 0;
  cv = cv && ((nr % cl == 0 && cv_aligned) || (peel && nr >= 2 * cl - 1 && (cv_aligned || vec_phase_ok(L, words, (int)cl))));
  /* short rows (nr <= wave * cache_k): g lanes per row, g the least power of two with g * cache_k >= nr
   * (g == 1: a thread per row), a block of many rows, group shuffles instead of the block reduction;
   * every ROW reduction with a cached entry (codegen/gpu_lower.c: group_rows) */
  /* a multi-phase kernel whose rows need a whole wave (nr > wave * cache_k / 2) takes the block mode below
   * (blocks of one wave a row): H100, 2026-12-05, softmax_f16_keys (200003 rows of 1000 float16) 0.573 ms
   * in blocks of 8 rows of a wave each, 0.269 as blocks of one wave (ncu: the same registers, occupancy
   * and instructions within 12 %, but 64 % of the DRAM bandwidth against 87 %: cause not found).
   * LOOM_GPU_SHORT_ROW_WAVE=1: such rows keep the short-row mode (A/B timings) */
  static int wave_rows = -2;
  bool whole_wave = (L->split_reduce | L->split_map) && 2 * nr > wave * ck &&
                    env_knob_once(&wave_rows, "LOOM_GPU_SHORT_ROW_WAVE") != 1;
  if (L->strategy == CG_GPU_ROW && ck > 0 && nr > 0 && nr <= wave * ck && (has & (CG_ENTRY_CACHED | CG_ENTRY_CACHEDV)) &&
      short_rows_enabled() && !whole_wave) {
    /* the peel's extra points want lanes a row (one each): where they want more than the scalar entry's
     * rows (g * cache_k >= nr), rows of 3 .. 15 points would take 4 or 8 lanes for 1 or 2 vectors,
     * each lane issuing the entry's cache_k / lanes vector loads (clamped, repeated) and its per-point
     * code: there the scalar entry, unless LOOM_GPU_ROWV_PEEL_SHORT=1 (A/B timings; 0: never the peel here) */
    int64_t gs = 1;
    while (gs * ck < nr) gs *= 2;
    static int peel_short = -2;
    int ps = env_knob_once(&peel_short, "LOOM_GPU_ROWV_PEEL_SHORT");
    if (cv && !(nr % cl == 0 && cv_aligned) && (ps == 0 || (ps < 0 && extras > gs)) && (has & CG_ENTRY_CACHED)) cv = false;
    int e = cv ? P_CACHEDV : P_CACHED;
    if (!cv && !(has & CG_ENTRY_CACHED)) e = -1;
    if (e >= 0 && (st = L->need(L->user, 1u << e, d))) return st;
    int lim = e < 0 ? 0 : L->limit(L->user, e == P_CACHEDV ? RT_LIM_CACHEDV_BLOCK : RT_LIM_CACHED_BLOCK, e);
    int64_t bs = short_row_block(lim, wave);
    if (e >= 0 && bs >= wave) {
      int64_t g = 1;
      while (g * ck < nr || (e == P_CACHEDV && g < extras)) g *= 2;
      /* multi-phase rows (softmax: max, sum, map) at most 2 vectors a lane, more lanes a row: H200, 2026-12-04,
       * router_softmax_short (10^6 x 16 float32) 0.0536 -> 0.0394 ms with 2 lanes of 2 vectors a row
       * (1 vector a lane: 0.0617); a one-phase arg-reduction lost (kmeans_argmin 0.0247 -> 0.0361), so
       * one-phase rows keep a lane per row. LOOM_GPU_SHORT_ROW_VECS=v: at most v a lane for every kernel
       * (0: the least lanes) */
      int sv = short_row_vecs_knob();
      if (sv < 0) sv = (L->split_reduce | L->split_map) ? 2 : 0;
      if (sv > 0 && e == P_CACHEDV)
        while (g < wave && g * cl * sv < nr) g *= 2;
      extra[2] = (uint64_t)g;
      if (e == P_CACHED && g == 1 && nr >= 2 && stage_ok(L, words, nr)) { /* tiles of rows (codegen.h) */
        bs = bs < CG_STAGE_BLOCK ? bs : CG_STAGE_BLOCK;
        extra[2] |= CG_GPU_STAGE;
        return L->launch(L->user, e, grid_of(no, bs * (ck / nr), cap), (uint32_t)bs, words, d);
      }
      return L->launch(L->user, e, grid_of(no, bs / g * short_row_items(no * g), cap), (uint32_t)bs, words, d);
    }
  }
  extra[2] = 0; /* the cached entries' block mode */
  /* block mode: kernels that walk R more than once (a phase split: several REDUCE / MAP phases) */
  bool multi = (L->split_reduce | L->split_map) != 0;
  if (multi && cv && nr <= 1024 * ck) {
    if ((st = L->need(L->user, CG_ENTRY_CACHEDV, d))) return st;
    if (nr <= (int64_t)L->limit(L->user, RT_LIM_CACHEDV_BLOCK, P_CACHEDV) * ck)
      return L->launch(L->user, P_CACHEDV, grid_of(no, 1, cap), wave_block((nr + ck - 1) / ck, wave), words, d);
  }
  if (multi && L->strategy == CG_GPU_ROW && (has & CG_ENTRY_CACHED) && ck > 0 && nr > 0 && nr <= 1024 * ck) {
    if ((st = L->need(L->user, CG_ENTRY_CACHED, d))) return st;
    if (nr <= (int64_t)L->limit(L->user, RT_LIM_CACHED_BLOCK, P_CACHED) * ck)
      return L->launch(L->user, P_CACHED, grid_of(no, 1, cap), wave_block((nr + ck - 1) / ck, wave), words, d);
  }
  int64_t nparts = 1;
  /* 1-d full reduction with aligned contiguous loads: the vector part entry on a persistent grid.
   * Parts of 16K points (at most 16384 parts, sizes only: deterministic), many per resident block
   * so that the last round of parts leaves few SM slots idle; the block finish folds them. */
  bool partv = L->strategy == CG_GPU_ROW && no == 1 && (has & CG_ENTRY_PARTV) && (has & CG_ENTRY_FINISHB) &&
               nr >= 32768 && vec_aligned(L, words, (int)L->part_lanes);
  /* a COL reduction over packed rows of S columns: the same over the flat memory (codegen/gpu_colv.c) */
  if (L->strategy == CG_GPU_COL && (has & CG_ENTRY_PARTV) && (has & CG_ENTRY_FINISHB) && no * nr >= 32768 &&
      colv_ok(L, words, (int)L->part_lanes))
    partv = true;
  if (partv) {
    nparts = no * nr / 16384;
    if (nparts > 16384) nparts = 16384;
  } else if ((has & CG_ENTRY_PART) && nr > 0) {
    if (L->strategy == CG_GPU_ROW && no < 512 && nr >= 8192) {
      /* about 4 blocks per SM-slot's worth of work in total, each part >= 16K points (8 loads in
       * flight per thread); depends on the sizes only, so the bits do not change between runs */
      int64_t a = (2048 + no - 1) / no, b = (nr + 16383) / 16384;
      nparts = a < b ? a : b;
    } else if (L->strategy == CG_GPU_COL && no < 131072 && nr >= 64) {
      /* about 262144 (part, o) items, 131072 beyond 128 O points (kernels without the block fold): H200,
       * 2026-12-04, sum_cols (16384 x 4096, 64 -> 32 parts of 512 rows) 0.0715 -> 0.0672 ms, sumsq_cols
       * 0.1332 -> 0.1272; bn1d_stats (64 columns, folded) lost with 131072 (0.0775 -> 0.0811).
       * LOOM_GPU_COL_ITEMS=n: about n items for every COL kernel (A/B timings) */
      static int col_items = -2;
      int64_t items = env_knob_once(&col_items, "LOOM_GPU_COL_ITEMS") > 0 ? col_items : no > 128 ? 131072 : 262144;
      int64_t a = (items + no - 1) / no, b = nr / 32;
      nparts = a < b ? a : b;
      /* few columns: up to 4096 parts (the block finish folds them), unless blocks fold them first
       * (col_fold: g = 512 / nO parts a block, so about 512 records a column whatever nO): point_centroid
       * (mean over axis 0 of 5e7 x 3 float32) took 4096 parts = 25 blocks of 512 on 132 SMs, 1.88 ms
       * on the H100 against torch's 0.23. LOOM_GPU_COL_FOLD_PARTS=0: the cap always (A/B timings). */
      static int fold_parts = -2;
      uint32_t fb;
      if (nparts > 4096 && (env_knob_once(&fold_parts, "LOOM_GPU_COL_FOLD_PARTS") == 0 || col_fold(L, no, nparts, &fb) == 1))
        nparts = 4096;
    }
  }
  if (nparts <= 1) {
    if ((st = L->need(L->user, CG_ENTRY_MAIN, d))) return st;
    if (L->strategy == CG_GPU_ROW) return L->launch(L->user, P_MAIN, grid_of(no, 1, cap), main_block(L, no, nr), words, d);
    int64_t per = nr <= 32 ? short_row_items(no) : 1; /* a thread a short row (walk_cols): rows a thread */
    return L->launch(L->user, P_MAIN, grid_of(no, 256 * per, cap), 256, words, d);
  }
  uint32_t fold_block = 0;
  if (L->strategy == CG_GPU_COL && col_fold(L, no, nparts, &fold_block) == 1) { /* blocks of 256: by waves */
    if ((st = L->need(L->user, CG_ENTRY_PART, d))) return st;
    int64_t most = nr / 32 < 4096 ? nr / 32 : 4096;
    nparts = col_wave_parts(no, nparts, most > nparts ? most : nparts, L->limit(L->user, RT_LIM_COL_PART_RESIDENT, P_PART));
  }
  int64_t fold = partv ? 1 : col_fold(L, no, nparts, &fold_block), nrec = (nparts + fold - 1) / fold; /* records */
  int64_t cw = fold > 1 ? fold_block / fold : 1, tiles = (no + cw - 1) / cw * nrec;                    /* (fold > 1) */
  bool finishb = (has & CG_ENTRY_FINISHB) && no <= 2048 && nrec >= 64;
  if ((st = L->need(L->user, (partv ? CG_ENTRY_PARTV : CG_ENTRY_PART) | (finishb ? CG_ENTRY_FINISHB : CG_ENTRY_FINISH), d)))
    return st;
  /* a multi-phase kernel (codegen.h: split_reduce): each phase in order over the whole grid, the
   * finished accumulators of its REDUCE phases (fin, phase-major) after the partials */
  uint32_t red = L->split_reduce, map = L->split_map;
  int nphase = red ? 32 - __builtin_clz(red | map) : 1;
  int64_t nfin = red ? 32 - __builtin_clz(red) : 0;
  size_t pbytes = (size_t)no * (size_t)nrec * (size_t)L->acc_size;
  size_t bytes = pbytes + (size_t)no * (size_t)nfin * (size_t)L->acc_size;
  uint64_t partials = 0;
  if ((st = rt_gpu_pool_alloc(L->pool, bytes, &partials, d))) return st;
  extra[0] = (uint64_t)nparts;
  extra[1] = partials;
  extra[3] = partials + pbytes;
  int partv_grid = partv ? L->limit(L->user, RT_LIM_PARTV_GRID, P_PARTV) : 1;
  uint32_t fb_block = finishb ? finishb_block(L, no) : L->block;
  if (finishb && fold > 1 && red) fb_block = narrow_finishb(L, nrec, fb_block);
  for (int p = 0; p < nphase && st == LOOM_OK; p++) {
    bool reduce = !red || (red >> p & 1u);
    if (red && !reduce && !(map >> p & 1u)) continue; /* FINAL: run by its REDUCE phase's finish */
    extra[0] = (uint64_t)nparts;
    extra[2] = (uint64_t)p | (fold > 1 ? (uint64_t)fold << 8 : 0);
    if (partv) st = L->launch(L->user, P_PARTV, grid_of(nparts, 1, partv_grid > 0 ? partv_grid : 1), L->block, words, d);
    else if (L->strategy == CG_GPU_ROW) st = L->launch(L->user, P_PART, grid_of(no * nparts, 1, cap), L->block, words, d);
    else if (fold > 1) st = L->launch(L->user, P_PART, grid_of(tiles, 1, cap), fold_block, words, d);
    else st = L->launch(L->user, P_PART, grid_of(no * nparts, 256, cap), 256, words, d);
    if (!reduce) continue;
    extra[0] = (uint64_t)nrec; /* the finish folds the records */
    extra[2] = (uint64_t)p;
    /* few O points with many parts: one block per O point folds them (fixed order and tree) */
    if (st == LOOM_OK && finishb) st = L->launch(L->user, P_FINISHB, grid_of(no, 1, cap), fb_block, words, d);
    else if (st == LOOM_OK) st = L->launch(L->user, P_FINISH, grid_of(no, 256, cap), 256, words, d);
  }
  if (st == LOOM_OK) st = L->settle(L->user, d); /* the pool does not track streams */
  Diag dd = {.status = LOOM_OK};
  rt_gpu_pool_free(L->pool, partials, &dd);
  return st;
}
