/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix.h: the device radix sort's library kernels (codegen/gpu_radix.c), generated as LLVM IR
 * through a GPU target's lowering hooks (cg_gpu.h) and handed to the runtime as bitcode; runtime/gpu/
 * gpu_sort.c compiles them once per key dtype, payload width and device kind (a raw module) and
 * launches them.
 *
 * The sort (LSD, 8-bit digits, stable) works on rows: R rows of n keys, C-contiguous; every tile of
 * CgRadixShape.tile keys lies in one row (tiles_per_row = ceil(n / tile), G = R * tiles_per_row tiles).
 * Keys are compared through an order-preserving unsigned image (cg_radix_* in gpu_radix.c): integers
 * with the sign bit flipped, floats with the sign bit set on non-negatives and negatives negated (two's
 * complement: -0.0 meets 0.0), every NaN the largest image (last, as NumPy); descending sorts flip every
 * bit of the image (a stable sort by it is NumPy's stable descending order, NaN first). Keys move
 * with their own bits.
 *
 * Kernels (pointers are global device addresses; scratch is u32 words, zeroed before a sort):
 *   loom_radix_zero(ptr p, i64 nwords)          p[0 .. nwords) = 0, grid-stride
 *   loom_radix_histogram(ptr keys, ptr scratch, i64 n, i32 tiles_per_row, i64 desc, i32 chunk)
 *       one block per `chunk` tiles of a row (rows * ceil(tiles_per_row / chunk) blocks): their digit
 *       counts of every pass added into hist[row][pass][digit] (gathered first in shared memory, in 2-4
 *       copies by lane unless legacy)
 *   loom_radix_plan(ptr scratch, i64 n, i32 tiles_per_row, i64 rows)    (unless CgRadixSpec.all_passes)
 *       one block per row, after the histogram: pass p of row r is trivial when one digit holds the row's
 *       n keys (the stable pass is then the identity); writes plan[r][p] (CG_RADIX_PLAN_* bits: trivial,
 *       the row's first / last non-trivial pass, which buffer it writes) and ORs each pass's words (and
 *       their complements) over rows into scratch[CG_RADIX_PLAN_OR + p] ([CG_RADIX_PLAN_NOR + p]): a pass
 *       whose words agree over rows is decided before its blocks take a tile. The buffers are assigned
 *       from the last non-trivial pass backwards (it writes the output, the one before the temporary,
 *       ...), so no parity copy is needed; a row with no non-trivial pass sets scratch[CG_RADIX_PLAN_COPY].
 *   loom_radix_pass(ptr keys_in, ptr keys_out, [ptr keys_alt,] ptr vals_in, ptr vals_out,
 *                   [ptr vals_alt0, ptr vals_alt1,] ptr scratch, i64 n, i32 tiles_per_row, i64 rows,
 *                   i32 pass, i64 desc, i32 vals_mode)        ([..]: the planned kernel, not all_passes)
 *       one sweep of digit `pass` (bits 8 pass .. 8 pass + 7 of the image): tiles are taken in order
 *       from an atomic counter; each tile ranks its keys stably (wave ballots + per-wave counters),
 *       finds the keys of its digits in earlier tiles of its row by a decoupled look-back over the
 *       tiles' published counts, and scatters keys (and values) through shared memory to
 *       row * n + (keys of smaller digits in the row) + (same digit in earlier tiles) + rank.
 *       vals_mode & 3: 0 no values, 1 values are the key's position in its row (int32/int64: argsort's
 *       first pass), 2 values moved from vals_in; vals_mode & 4 (4-byte values): vals_out holds int64,
 *       the values sign-extended (argsort's int32 index widened by its last pass).
 *       Planned (not all_passes): the same launch for every pass p; each tile reads its row's plan word:
 *       trivial -> the block returns at once (before taking a tile when the word agrees over rows);
 *       else keys come from keys_in (the row's first non-trivial pass) or the buffer the previous one
 *       wrote, and go to keys_out (the row's last non-trivial pass and every second one before it) or
 *       keys_alt; values likewise (vals_in / vals_out / vals_alt0), argsort's index made by the row's
 *       first non-trivial pass (vals_mode 1), and with vals_mode & 4 through vals_alt0 / vals_alt1 to
 *       the int64 vals_out written by the row's last one.
 *   loom_radix_copy(ptr keys_in, ptr keys_out, ptr vals_in, ptr vals_out, ptr scratch, i64 n,
 *                   i32 tiles_per_row, i64 rows, i32 chunk, i32 vals_mode)   (unless all_passes)
 *       rows whose every pass is trivial (already in order): keys copied, values copied or made (argsort's
 *       position, int64 with vals_mode & 4); one block per `chunk` tiles of a row, every block returns at
 *       once unless scratch[CG_RADIX_PLAN_COPY] is set.
 *   loom_radix_rows<I>(ptr keys_in, ptr keys_out, ptr vals_in, ptr vals_out, i64 n, i64 desc, i32 vals_mode)
 *       (gpu_radix_rows.c; a module of its own: CgRadixSpec.rows) block b sorts row b whole in shared memory, rows of n <= 256 I keys: every non-trivial pass
 *       ranks the staged keys as loom_radix_pass does (stable) and moves them (and values) to their
 *       places in the block's own memory; one read and one write of the row in all. vals_mode as above.
 * scratch layout (u32 words): [0, 8) the passes' tile counters, [8, 25) the plan's summaries
 * (CG_RADIX_PLAN_OR / NOR / COPY); [64, 64 + R P 256) hist; then per pass G x 256 status words
 * (flag << 30 | count: 1 the tile's own count, 2 the inclusive count of its row so far); then (not
 * all_passes) the plan, R x P words (cg_radix_scratch_words). So n < 2^30 (cg_radix_max_row).
 */
#ifndef LOOM_CG_GPU_RADIX_H
#define LOOM_CG_GPU_RADIX_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/ir.h"

#define CG_RADIX_BLOCK 256     /* threads per block: one per digit in the scans */
/* resident pass blocks per multiprocessor the NVPTX pass kernel is built for (launch bounds: at most 64
 * registers a thread at 256 threads; ptxas -v shows no spills at 64 for any key and value width) */
#define CG_RADIX_PASS_BLOCKS_PER_SM 4
#define CG_RADIX_COUNTERS 64   /* scratch words before the histograms */
#define CG_RADIX_MAX_ROW ((int64_t)1 << 30) /* keys per row below this (30-bit status counts) */
#define CG_RADIX_MAX_ITEMS 32  /* keys per thread at most (CgRadixSpec.items) */
#define CG_RADIX_SHARED_BYTES 49152 /* static shared memory a block may declare (the tile must fit) */
#define CG_RADIX_ROW_VARIANTS 6 /* block row sorts of 1, 2, 4, 8, 16, 32 keys per thread (those that fit) */
/* scratch words of the plan's summaries (per pass p < 8: + p) */
#define CG_RADIX_PLAN_OR 8    /* OR over rows of pass p's plan words (low 4 bits) */
#define CG_RADIX_PLAN_NOR 16  /* OR over rows of their complements (low 4 bits): 0 where all rows agree */
#define CG_RADIX_PLAN_COPY 24 /* nonzero: some row has no non-trivial pass (loom_radix_copy works) */
/* a plan word's bits (plan[row][pass]) */
#define CG_RADIX_PLAN_TRIVIAL 1u /* one digit holds the row's keys: the pass is skipped */
#define CG_RADIX_PLAN_FIRST 2u   /* the row's first non-trivial pass: reads keys_in (argsort makes the index) */
#define CG_RADIX_PLAN_LAST 4u    /* the row's last non-trivial pass: writes keys_out (argsort widens) */
#define CG_RADIX_PLAN_ODD 8u     /* an odd count of non-trivial passes after it: writes keys_alt */
#define CG_RADIX_PLAN_NONE 16u   /* (with TRIVIAL) the row has no non-trivial pass: loom_radix_copy */

typedef struct CgRadixSpec {
  LoomDType key;      /* bool, int8 .. uint64, float16, bfloat16, float32, float64 */
  int value_bytes;    /* 0 (keys only), 4 or 8: the payload moved with the keys */
  int wave;           /* the target's wave (32 NVPTX; 64 AMDGPU, which compiles in wave64 mode) */
  bool amdgpu;        /* amdgcn-amd-amdhsa (else nvptx64-nvidia-cuda) */
  bool legacy;        /* the first pass design (A/B, LOOM_RADIX_LEGACY=1): keys held in registers through the
                         look-back, published only then, staged and written after it, values in a second
                         round; else (default) the tile's counts are published as soon as the wave counts are
                         summed and keys and values are staged before the look-back (no key in a register
                         while the tile waits), then written in one round */
  bool take;          /* the gather module instead (key and value_bytes unused): loom_radix_zero and
                         loom_radix_take<bytes>(ptr src, ptr index, ptr dst, ptr bad, i64 m, i64 ns,
                         i64 total) for bytes 1, 2, 4, 8, 16: dst[i] = src[(i / m) ns + index[i]] (int64
                         indices, negative from the row's end; one out of range sets *bad) */
  bool rows;          /* the row sort module instead: loom_radix_rows<I> for cg_radix_row_items' I only (the
                         tuning fields but ballot_rank unused) */
  bool all_passes;    /* every digit pass runs, trivial or not (A/B: LOOM_GPU_RADIX_SKIP=0; legacy implies
                         it): no loom_radix_plan / loom_radix_copy, the pass kernel's 11 parameters; else
                         trivial passes are skipped on the device (cg_radix_skips; the row sorts skip a
                         pass whose digit is the same in all of the row's keys) */
  /* Tuning (cg_radix_tuning fills them from LOOM_GPU_RADIX_*; 0: the default). Compile-time: the
   * runtime keeps one module per distinct spec, so a process may time several settings. */
  int items;          /* keys per thread of the histogram and pass kernels (1 .. CG_RADIX_MAX_ITEMS; cut to
                         what fits CG_RADIX_SHARED_BYTES); 0: 16 when keys and values are <= 4 bytes, else 8 */
  int blocks_per_sm;  /* the pass kernel's NVPTX launch bound (1 .. 8: registers <= 64K / (256 x it));
                         0: CG_RADIX_PASS_BLOCKS_PER_SM */
  int hist_parts;     /* copies of the histogram kernel's block counts (1, 2, 4, 8; cut to fit);
                         0: 4 for keys of <= 4 bytes, 2 for 8 (1 when legacy) */
  bool ballot_rank;   /* NVPTX: peers of a digit from 8 ballots (as AMDGPU) instead of one match.any */
  bool peers_first;   /* the pass finds every item's peers before the wave counters' chain (not per item);
                         cg_radix_tuning sets it for keys-only sorts */
  bool smem_rank;     /* the pass ranks in the manner of early counts (gpu_radix_rank.c): the tile's digit counts
                         per wave first (shared atomics), published and scanned, then each item's tile slot
                         from its peers and one returning shared atomic of the highest peer (no counter chain
                         between items); peers_first unused */
  bool atomic_rank;   /* the default ranking's wave counters taken by one returning shared atomic of the
                         highest peer (its old value shuffled to the peers) instead of a load, an add, a store
                         and two warp syncs: no chain from item to item (gpu_radix_rank.c) */
} CgRadixSpec;

/* Fills spec's tuning fields from the environment (read per call: a process may change them between
 * sorts): LOOM_GPU_RADIX_ITEMS4 (keys per thread when keys and values are <= 4 bytes),
 * LOOM_GPU_RADIX_ITEMS8 (when one of them is 8 bytes), LOOM_GPU_RADIX_BLOCKS_PER_SM,
 * LOOM_GPU_RADIX_HIST_PARTS, LOOM_GPU_RADIX_RANK (words: "match" clears ballot_rank, "early" sets
 * peers_first, "chain" clears it, else peers_first for keys alone; "smem" sets smem_rank, "atomic"
 * atomic_rank), LOOM_GPU_RADIX_SKIP ("0" sets all_passes); unset, empty or out of range: the default. */
void cg_radix_tuning(CgRadixSpec *spec);

typedef struct CgRadixShape {
  int block;   /* threads per block of the histogram and pass kernels */
  int items;   /* keys per thread */
  int tile;    /* keys per tile: block * items */
  int passes;  /* digit passes: the key's bytes */
  int blocks_per_sm; /* the pass kernel's launch bound (NVPTX) */
  int hist_parts;    /* copies of the histogram kernel's counts */
} CgRadixShape;

/* Whether spec's sweep skips trivial passes (loom_radix_plan, the planned pass and loom_radix_copy): not
 * all_passes, legacy, take or rows. */
bool cg_radix_skips(const CgRadixSpec *spec);
/* Scratch words of a sweep over rows x tiles_per_row tiles (the layout above; the plan when skips). */
int64_t cg_radix_scratch_words(const CgRadixSpec *spec, int64_t rows, int64_t tiles_per_row);
/* Whether spec's pass kernel stages each key's digit (a byte) beside it for the write-out: float keys,
 * whose image costs more than the byte's store and load (the tile's shared bytes count it). */
bool cg_radix_stages_digits(const CgRadixSpec *spec);
/* Whether keys of dtype t can be radix-sorted (real dtypes: not complex). */
bool cg_radix_key_ok(LoomDType t);
/* The launch shape for spec (no LLVM needed): its tuning fields, defaults and cuts applied. */
CgRadixShape cg_radix_shape(const CgRadixSpec *spec);
/* Keys per thread of the module's block row sorts (loom_radix_rows<items>, gpu_radix_rows.c): items[i] for
 * i < the count returned, ascending (those whose row fits the block's shared memory); a row of n keys
 * sorts in one block by the first with 256 x items >= n. */
int cg_radix_row_items(const CgRadixSpec *spec, int items[CG_RADIX_ROW_VARIANTS]);
/* The module of the three kernels (the row sorts with spec->rows, the gathers with spec->take) as LLVM bitcode for spec's target (*bitcode ctx_alloc'ed). Needs no
 * GPU; the runtime compiles it as a raw module (cg_nvptx_compile_llvm / cg_amdgpu_compile_llvm). */
LoomStatus cg_radix_module(LoomContext *ctx, const CgRadixSpec *spec, void **bitcode, size_t *size, Diag *d);
/* The same module as LLVM IR text (*text ctx_alloc'ed, NUL-terminated): tests and dumps. */
LoomStatus cg_radix_module_text(LoomContext *ctx, const CgRadixSpec *spec, char **text, Diag *d);

#endif /* LOOM_CG_GPU_RADIX_H */
