/* SPDX-License-Identifier: Apache-2.0 */
/* codegen.h: kernel IR -> machine code. The shared lowering (codegen/lower*.c, gpu_*.c) turns a KernelIr
 * into an LLVM module; each target file fills one CgTarget: host.c (the CPU, ORC JIT), nvptx.c (NVIDIA,
 * PTX), amdgpu.c (AMD, code objects). Only codegen/ includes
 * llvm-c/; this header does not.
 *
 * Host calling convention of a compiled kernel (all pointers valid for the call):
 *   shape   : ndim sizes of the iteration space
 *   bufs    : nbuf base pointers (binding offset already applied), then the kernel's nparam scalar
 *             parameters (KI_PARAM p: slot nbuf + p holds its launch word, ir_param_word's encoding)
 *   strides : nbuf * ndim strides in elements, buffer-major (strides[b * ndim + dim])
 *   run(lo, hi)
 *     nkeep == ndim (elementwise): computes linear points [lo, hi) of the whole space, row-major.
 *     nkeep <  ndim (reduction):   computes linear points [lo, hi) of O, every phase for each.
 *   partial(o, rlo, rhi, acc): only for kernels whose phases are exactly [REDUCE] or
 *     [REDUCE, FINAL]: folds phase 0 over linear points [rlo, rhi) of R at O point o and writes the
 *     accumulator to acc (acc_size bytes: the value in acc dtype, padded to 8 bytes, then for
 *     argmin/argmax an int64 index).
 *   finish(o, accs, nparts): combines nparts accumulators (acc_size bytes apart) in order, then runs
 *     the FINAL phase (if any) for o. Splitting R must give the same bits for the same split.
 *   colpart(a) / colfinish(a): the column split of reductions whose reduced axis is outer in memory
 *     (the outer strategy: column sums, BatchNorm statistics; any number of REDUCE phases, later ones
 *     reading earlier results, FINAL phases and MAP phases). R is cut into a->nparts ranges; the runtime
 *     runs, for each phase p of col_phases in order: colpart for every part (and range of O points) in
 *     parallel, which folds REDUCE phase p over R points [a->rlo, a->rhi) for O points [a->olo, a->ohi)
 *     and writes each o's accumulator to parts + (o * nparts + part) * acc_size; then colfinish over O
 *     ranges, which combines each o's nparts accumulators in order into fin + (p * no + o) * acc_size
 *     and runs the FINAL phases that follow p (up to the next REDUCE phase). colpart reads earlier
 *     phases' results from fin. colpart of a MAP phase p computes and stores its points of those R and O
 *     points (no accumulator); colfinish of it does nothing. The same nparts gives the same bits.
 */
#ifndef LOOM_CODEGEN_H
#define LOOM_CODEGEN_H

#include "ir/ir.h"

typedef void (*CgRunFn)(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t lo,
                        int64_t hi);
typedef void (*CgPartialFn)(const int64_t *shape, void *const *bufs, const int64_t *strides,
                            int64_t o, int64_t rlo, int64_t rhi, void *acc);
typedef void (*CgFinishFn)(const int64_t *shape, void *const *bufs, const int64_t *strides,
                           int64_t o, const void *accs, int64_t nparts);
/* Arguments of colpart / colfinish (8-byte fields: the lowering reads them by position). */
#define CG_COL_ROWS (1u << 31)
/* In col_phases, never with CG_COL_ROWS (such kernels, and every kernel without CG_COL_ROWS, have at most
 * 30 phases): a reduction whose walk the strides pick at run time (lower_host.c run_by_strides,
 * x[:, ::2].mean(0)); its colpart also answers a query: called with a->nparts == 0 it reads only the strides
 * and a->parts and stores to *(int64_t *)a->parts 1 where the strides pick the walk across O points (the
 * kept axis strides less than the reduced one in the deciding buffer), else 0. The launcher
 * (runtime/host_launch.c) plans the column split only on a 1; colpart itself takes the walk across O for
 * any strides (correct for every view, slow where the reduced axis strides less). */
#define CG_COL_BY_STRIDES (1u << 30)
/* The phase bits of col_phases (without the CG_COL_ROWS and CG_COL_BY_STRIDES flags). */
static inline uint32_t cg_col_phase_bits(uint32_t col_phases) {
  if (col_phases & CG_COL_ROWS) return col_phases & ~CG_COL_ROWS;
  return col_phases & ~CG_COL_BY_STRIDES;
}
typedef struct CgColSplit {
  int64_t phase;        /* the REDUCE phase */
  int64_t olo, ohi;     /* O points */
  int64_t rlo, rhi;     /* R points (colpart) */
  int64_t part, nparts; /* this part (colpart); the number of parts */
  void *parts;          /* no * nparts accumulators, o-major */
  void *fin;            /* nphase * no finished accumulators, phase-major */
  int64_t no;           /* O points of the whole kernel */
} CgColSplit;
typedef void (*CgColFn)(const int64_t *shape, void *const *bufs, const int64_t *strides, const CgColSplit *a);

/* GPU kernels (the shared GPU lowering, codegen/gpu_*.c, for every GPU target). The code is the
 * target's binary (CgGpuKernel.kind: PTX text, an AMDGPU code object); every entry takes ONE parameter,
 * a block of 8-byte words passed by value (the launch's kernel parameter 0 points at it on the host):
 *   words[0, ndim)                    shape of the iteration space
 *   words[ndim, ndim + nbuf)          buffer base addresses (binding offset applied)
 *   words[ndim + nbuf, + nbuf * ndim) strides in elements, buffer-major
 *   then CG_GPU_EXTRA words: [0] nparts (split reductions), [1] partials address, [2] phase and
 *   [3] finished accumulators' address (the phase split, split_reduce below); for `cached` / `cachedv`
 *   [2] is g, the lanes per row of the short-row mode (0: a block per row),
 *   then nparam words: the scalar parameters (KI_PARAM p: its launch word, ir_param_word's encoding), so a
 *   Python scalar travels in the parameter block and a new value reuses the kernel.
 * Strategies:
 *   CG_GPU_ELEMENTWISE: `main` is a grid-stride loop over the linear points, any launch shape (for a
 *     kernel reading a buffer transposed, codegen/gpu_tile.c: a grid-stride loop over 32 x 32 tiles
 *     with shared memory and barriers, any 1-d launch whose blocks are multiples of 32 threads);
 *     `vec` (when vec_lanes > 0: ndim == 1 and every buffer contiguous) does vec_lanes points per
 *     step with 16-byte loads/stores and requires every base address to be a multiple of
 *     vec_align; the launcher falls back to `main` otherwise.
 *   CG_GPU_ROW (R inner in memory): `main` runs one block of exactly `block` threads per O point
 *     (grid-stride over O on blockIdx.x): every phase in order, REDUCE phases through wave shuffles
 *     and shared memory, their results broadcast to the block. Block sizes the launcher picks are
 *     multiples of the wave (CgGpuKernel.wave: 32 on NVIDIA; 64 or 32 on AMD).
 *   CG_GPU_COL (R outer, O contiguous): `main` runs one thread per O point (coalesced along O).
 *   When `part` is set (phases [REDUCE] or [REDUCE, FINAL]; other phase lists: the phase split,
 *   split_reduce below, runs `part` and `finish` once per phase) the launcher may split R into nparts
 *   ranges: `part` computes the accumulator of item = part * nO + o into partials + item * acc_size
 *   (ROW: one block per item; COL: one thread per item), then `finish` (one thread per O point)
 *   combines the parts in order and runs the FINAL phase. The same nparts gives the same bits.
 *   COL `part` block fold (codegen/gpu_colfold.c): extra word 2 >> 8 = g >= 2 (the low byte is the
 *   phase), blockDim <= CG_COL_FOLD_BLOCK and cg_col_fold_ok(acc_size): blocks take tiles of g parts
 *   x cw = blockDim / g O points (tile t: parts (t / ncb) * g + j, O points (t % ncb) * cw + c, ncb =
 *   ceil(nO / cw); thread j * cw + c), grid-stride over the ceil(nparts / g) * ncb tiles; the block
 *   folds a tile's g parts in part order in shared memory and writes ONE record per O point, record
 *   (t / ncb) * nO + o: the finish then runs with nparts = ceil(nparts / g) (extra word 0).
 *   ROW REDUCE loops keep 8 independent accumulators per thread (8 loads in flight), folded in a
 *   fixed order at the end: the bits depend on the sizes and the launch shape only.
 *   Scan kernels (one KP_SCAN phase, codegen/lower_scan.c): ROW `main` scans each O point's row with
 *   one block (chunks of blockDim points with a carry), COL `main` one thread per O point; ROW scans
 *   also have `part` (the fold of each of nparts R ranges, as a split reduction's) and `finishb`
 *   (named "<prefix>_scanp": one block per item = part * nO + o scans that range starting from the fold
 *   of the partials of the parts before it), which the launcher runs in that order for long rows.
 *   With the single-pass look-back scan (codegen/lower_scan_lookback.c; LOOM_GPU_SCAN_LOOKBACK not
 *   "0" when the kernel was compiled) a ROW scan has `main` and `finishb` but no `part`: `finishb`
 *   then runs blocks of exactly B threads (B and the points per thread K: part_lanes, cg_scan_lb_pack;
 *   LOOM_GPU_SCAN_LB_BLOCK / _ITEMS when compiled); nparts (extra word 0) is the tiles per row,
 *   ceil(nr / (B * K)), and extra word 1 the scratch (cg_scan_lb_bytes: a 32-bit
 *   ticket counter at byte 0, 8-byte status words from CG_SCAN_LB_STATUS, then aggregate and inclusive
 *   values of acc_size bytes). The launcher runs it twice on the stream: with extra word 2 = tiles + 1
 *   (clear: item i zeroes status words [i * B, (i + 1) * B) below tiles,
 *   item 0 the counter; nparts then sized so that no * nparts items cover them), then with word 2 = 0
 *   (the scan: any grid; each block takes tiles from the counter). */
enum { CG_GPU_ELEMENTWISE = 0, CG_GPU_ROW = 1, CG_GPU_COL = 2 };
#define CG_SCAN_LB_BLOCK 256 /* the default threads per look-back block */
#define CG_SCAN_LB_STATUS 16
#define CG_SCAN_LB_ITEMS 16     /* the default points per thread (asked for; see cg_scan_lb_items) */
#define CG_SCAN_LB_ITEMS_MAX 32
#define CG_SCAN_LB_SHARED_MAX 45056 /* bytes of a block's staged tile and thread slots: under 48 KB static */
/* Points per thread of a look-back tile of `block` threads when `asked` (a power of two) are asked for:
 * half of them for 16-byte accumulators (complex128), halved again while the staged tile (a pad slot
 * per 32) and the block's thread slots, value_size bytes each, exceed CG_SCAN_LB_SHARED_MAX; at least 1.
 * The defaults: 16, or 8 for complex128 (16 took cumsum f32 2^26 on the H200 from 0.69x to 0.93x torch). */
static inline int cg_scan_lb_items_of(int block, int asked, int acc_size, int value_size) {
  int k = acc_size > 8 ? asked / 2 : asked;
  int64_t v = value_size > 0 ? value_size : 1;
  while (k > 1 && v * ((int64_t)block * k + (int64_t)block * k / 32 + block) > CG_SCAN_LB_SHARED_MAX) k /= 2;
  return k < 1 ? 1 : k;
}
static inline int cg_scan_lb_items(int acc_size) {
  return cg_scan_lb_items_of(CG_SCAN_LB_BLOCK, CG_SCAN_LB_ITEMS, acc_size, acc_size);
}
static inline int64_t cg_scan_lb_tile(int acc_size) { return (int64_t)CG_SCAN_LB_BLOCK * cg_scan_lb_items(acc_size); }
/* A look-back scan kernel's tile shape travels in CgGpuKernel.part_lanes (look-back kernels have no
 * part, so no partv): block << 8 | items; 0 (code from before the knobs) means the defaults above. */
static inline int32_t cg_scan_lb_pack(int block, int items) { return (int32_t)(block << 8 | items); }
static inline int cg_scan_lb_block_of(int32_t packed) { return packed > 0 ? (int)(packed >> 8) : CG_SCAN_LB_BLOCK; }
static inline int cg_scan_lb_items_packed(int32_t packed, int acc_size) {
  return packed > 0 ? (int)(packed & 255) : cg_scan_lb_items(acc_size);
}
/* Scratch bytes for `tiles` tiles (no * nparts) of acc_size-byte values. */
static inline uint64_t cg_scan_lb_bytes(int64_t tiles, int acc_size) {
  uint64_t values = ((uint64_t)CG_SCAN_LB_STATUS + 8u * (uint64_t)tiles + 15u) & ~(uint64_t)15;
  return values + 2u * (uint64_t)tiles * (uint64_t)acc_size;
}
/* Whether kernel k gets the phase split (CgGpuKernel.split_reduce / split_map, which it sets): a
 * reduction whose phases are REDUCE (the first), MAP and FINAL, at most 32, other than [REDUCE] and
 * [REDUCE, FINAL] (those have the single-phase split). */
bool cg_gpu_phase_split(const KernelIr *k, uint32_t *reduce_bits, uint32_t *map_bits);
/* COL splits: bit p for each MAP phase p whose `part` step runs the grid's threads as row phases of
 * every O point (any grid: the launcher's, nparts * nO items) instead of (part, o) items that stride down
 * a part's rows (gpu_phases.c; LOOM_GPU_MAP_FLAT=0: none, n: n rows read ahead a step, default 4). */
uint32_t cg_gpu_map_flat_bits(const KernelIr *k);
int cg_gpu_map_flat_points(void);
/* Code-generation switches that change what the launcher must do (LOOM_GPU_ONEPASS_VAR=0: variances
 * in two passes, codegen/gpu_moments.c), as a suffix of the GPU targets' descriptions, so that kernels
 * compiled under one setting are never launched under the other ("" by default). */
const char *cg_gpu_switch_tag(void);
const char *cg_gpu_elem_tag(void); /* LOOM_GPU_ELEM_GROUP / _PIPELINE (gpu_strategies.c) */
/* One bit per entry of CgGpuKernel (the order of the names there). */
enum {
  CG_ENTRY_MAIN = 1u, CG_ENTRY_VEC = 2u, CG_ENTRY_PART = 4u, CG_ENTRY_FINISH = 8u, CG_ENTRY_CACHED = 16u,
  CG_ENTRY_PARTV = 32u, CG_ENTRY_CACHEDV = 64u, CG_ENTRY_FINISHB = 128u, CG_ENTRY_VECW = 256u, CG_ENTRY_FLATV = 512u,
  CG_ENTRY_ALL = 1023u
};
#define CG_NENTRY 10
#define CG_GPU_EXTRA 4
/* The COL part's block fold (above): at most CG_COL_FOLD_BLOCK threads, a record of at most
 * CG_COL_FOLD_MAX_ACC bytes a thread in shared memory. */
#define CG_COL_FOLD_BLOCK 512
#define CG_COL_FOLD_MAX_ACC 64
static inline bool cg_col_fold_ok(int acc_size) { return acc_size > 0 && acc_size <= CG_COL_FOLD_MAX_ACC; }
/* Staged short rows (codegen/gpu_stage.c): the scalar cached entry's thread-per-row mode (extra word 2 =
 * 1 | CG_GPU_STAGE) copies the block's tile of rows (blockDim * (cache_k / nr) rows, a grid-stride loop
 * over tiles) of each staged buffer between global and shared memory with coalesced accesses, and each
 * thread runs its rows of the tile from there (a thread per row read its row's points a row apart:
 * 28-byte strides for rows of 7 float32). Staged: every buffer contiguous along the one R dim (KL_ONE) and not constant along
 * any O dim (KL_ZERO), when their tiles (CG_STAGE_BLOCK rows of cache_k points each) fit CG_STAGE_BYTES;
 * sizes[b] is buffer b's dtype bytes. The launcher sets the flag only with blocks of at most
 * CG_STAGE_BLOCK threads and where each staged buffer's rows lie one after another (O strides C-contiguous
 * with a row pitch of nr) from a 16-byte aligned base; an entry compiled without the staged path ignores
 * it. Both sides use this rule. */
#define CG_GPU_STAGE (1u << 16)
#define CG_STAGE_BLOCK 64
#define CG_STAGE_BYTES 16384
static inline uint64_t cg_gpu_stage_mask(const KBuffer *bufs, const int *sizes, int nbuf, int ndim, int nkeep,
                                         int cache_k) {
  if (ndim - nkeep != 1 || nkeep < 1 || nbuf > 64 || cache_k < 1) return 0;
  uint64_t mask = 0, bytes = 0;
  for (int b = 0; b < nbuf; b++) {
    if (bufs[b].layout[ndim - 1] != KL_ONE) continue;
    bool bcast = false;
    for (int d = 0; d < nkeep; d++) bcast = bcast || bufs[b].layout[d] == KL_ZERO;
    if (bcast) continue;
    if (sizes[b] < 1 || sizes[b] > 8) return 0;
    bytes += (uint64_t)CG_STAGE_BLOCK * (uint64_t)cache_k * (uint64_t)sizes[b];
    mask |= 1ull << b;
  }
  return bytes <= CG_STAGE_BYTES ? mask : 0;
}
typedef struct CgGpuKernel {
  int32_t strategy;
  char main[64], vec[64], part[64], finish[64]; /* entry names; "" when absent */
  int32_t block;     /* ROW: threads per block the block reduction is compiled for */
  int32_t vec_lanes; /* points per step of `vec`; 0 when there is no vec entry */
  int32_t vec_align; /* bytes every base address must be a multiple of for `vec` */
  int32_t acc_size;  /* bytes per partial accumulator */
  int32_t nwords;    /* words of the parameter block */
  /* ROW only: `cached` (when cache_k > 0) is `main` with the row kept in registers: each thread
   * loads its points tid + j * blockDim (j < cache_k) of every loaded buffer ONCE (each buffer before
   * the first phase that reads it), and every phase works from those registers, so a multi-phase row
   * (softmax) is read once. Any block size that is a multiple of the wave; the launcher uses it when
   * 0 < nr <= blockDim * cache_k for kernels of several phases over R. Short-row mode (extra word 2 =
   * g > 0, a power of two <= wave): each aligned group of g lanes takes one row (blockDim / g rows per
   * block, tid and blockDim above read as the lane in the group and g), reductions by group shuffles
   * without shared memory or barriers; the launcher uses it for every ROW reduction with
   * nr <= wave * cache_k (g: the least power of two with g * cache_k >= nr). */
  char cached[64];
  int32_t cache_k;
  /* ROW only, 16-byte vector variants (every loaded buffer contiguous along the last dim, no user
   * snippet; "" / 0 when absent). The launcher uses them only when every buffer whose layout is
   * contiguous along the last dim has a base address that is a multiple of lanes * its dtype size
   * and O strides that are multiples of lanes, and (cachedv) nr % lanes == 0:
   *   partv (part_lanes points per load; 1-d full reductions [REDUCE] or [REDUCE, FINAL]): `part`
   *     with vector loads: grid-stride over the nparts parts on blockIdx.x (any grid), each part a
   *     balanced range of the nr / lanes vectors (the last part also takes the nr % lanes tail);
   *     the same nparts and block give the same bits; `finish` as for `part`. Also COL kernels of
   *     dims [S, N] whose loaded buffers are all [1, S] (S = 2..4, codegen/gpu_colv.c): the parts are
   *     balanced ranges of lcm(S, lanes)-point chunks of the flat memory, each writing S records (part *
   *     S + o); the launcher runs it when the kept extent is S and those buffers' bases are aligned.
   *   cachedv (cache_lanes points per load; one R dim): `cached` whose thread holds the points
   *     (tid + g * blockDim) * lanes + l (g < cache_k / lanes), loaded and (MAP stores contiguous
   *     along R) stored as vectors. */
  char partv[64], cachedv[64];
  int32_t part_lanes, cache_lanes;
  /* With `part`: `finish` with one block per O point (grid-stride on blockIdx.x, any multiple of
   * the wave): thread t folds parts t, t + blockDim, ... in order, then the block combines the
   * threads' values in a fixed tree; the same nparts and block give the same bits. For few O
   * points with many parts. */
  char finishb[64];
  /* ELEMENTWISE, with `vec`: `vec` for whole vectors only, without the scalar tail loop (one copy of
   * the expression fewer to compile and JIT); the launcher uses it when the point count is a
   * multiple of vec_lanes (and the bases are aligned as for `vec`). */
  char vecw[64];
  /* ELEMENTWISE 2-d, with `vec`: `vec` over the flat point index, its vectors crossing rows: a buffer
   * contiguous along the last dim and not broadcast along the first is read and written as vectors (the
   * launcher uses it only where every such buffer is C-contiguous: its first stride equals the last dim,
   * and its base aligned as for `vec`), one broadcast along the first dim (a per-column operand: a
   * channel's mean) and every other buffer are read lane by lane at each lane's own (row, column). For
   * last dims that are not a multiple of vec_lanes (images of 3 channels, tables of odd widths).
   * ROW reductions of 2 dims specialized on a short packed row (KernelIr.row_extent = E, cg_gpu_rowflat_extent):
   * chunks of lcm(E, lanes) points, whole rows, a thread (grid-stride over tiles of blockDim chunks, any
   * grid and block), every phase of each row from registers; the lanes are 16 bytes of the widest buffer
   * contiguous along the row and varying along the rows (its packed buffers). The launcher uses it when
   * those buffers' bases are multiples of lanes * their dtype size (codegen/gpu_rowflat.c). */
  char flatv[64];
  /* The phase split of a multi-phase reduction (codegen/gpu_phases.c; ROW and COL): bit p of
   * split_reduce set for each REDUCE phase p, of split_map for each MAP phase p, when `part`, `finish`
   * and `finishb` run one phase at a time (0 and 0: they are the single-phase split, or absent). The
   * launcher allocates partials (no * nparts accumulators of acc_size bytes, item = part * no + o) and
   * fin (no * (highest REDUCE phase + 1) accumulators, phase-major), puts the phase in extra word 2 and
   * fin in word 3, and for each phase p in order runs: REDUCE: `part` then `finish` or `finishb`
   * (which write fin[p * no + o] and run the FINAL phases after p up to the next REDUCE phase); MAP:
   * `part` (the map over the part's R range). Earlier phases' results are read from fin. */
  uint32_t split_reduce, split_map;
  /* Entries: bit CG_ENTRY_x set in `entries_all` when the lowering made entry x, in `entries` when
   * this code holds it (a compile may emit a subset: CgCompileOptions.entries); the names of entries
   * not in the code are "". */
  uint32_t entries_all, entries;
  int32_t wave;      /* threads of one wave (warp): 32 or 64; blocks are launched in multiples of it */
  int32_t kind;      /* CgBinaryKind of `code` */
  char *code;        /* CG_BINARY_PTX: NUL-terminated PTX text; CG_BINARY_AMDGPU: an ELF code object
                      * (ctx_alloc'ed); NULL when no entry was asked for */
  size_t code_size;  /* bytes (PTX: strlen) */
  double phase_ms[4]; /* compile time: lowering, math library linking, optimization, code emission */
} CgGpuKernel;

/* What a target's compile returns: host function pointers (run/partial/finish, callable at once) or a
 * GPU binary that a device loads (CgCompiled.gpu). */
typedef enum CgBinaryKind { CG_BINARY_HOST = 0, CG_BINARY_PTX = 1, CG_BINARY_AMDGPU = 2 } CgBinaryKind;

typedef struct CgCompiled {
  int32_t kind;        /* CgBinaryKind */
  CgRunFn run;
  CgPartialFn partial; /* NULL when the kernel cannot be split along R */
  CgFinishFn finish;
  CgColFn colpart, colfinish; /* NULL unless the kernel is an outer-strategy reduction */
  uint32_t col_phases;         /* with colpart: bit p set for each REDUCE and MAP phase p (at most 30); with
                                * CG_COL_ROWS (bit 31, then at most 31 phases) the entries split inner R
                                * per O point (lower_host_outer.c): the launcher plans an R split; with
                                * CG_COL_BY_STRIDES (bit 30, above) colpart answers the launcher's query */
  int32_t acc_size;
  char *llvm_ir;       /* optimized LLVM IR text when asked for (ctx_alloc'ed), else NULL */
  void *impl;          /* target-owned */
  void *image;         /* a host image the runtime owns (runtime/host_disk.c), NULL for JIT code */
  CgGpuKernel *gpu;    /* GPU targets: the binary and how to launch it (run/partial/finish are NULL) */
} CgCompiled;

/* Options of one compile (NULL: the defaults, CG_COMPILE_DEFAULTS). */
typedef struct CgCompileOptions {
  bool want_llvm_ir; /* CgCompiled.llvm_ir: the optimized module as text */
  /* GPU targets: the entries to emit (CG_ENTRY_* bits) among those the kernel has; when it has none
   * of them, `vec` for a `vecw` asked for, else `main`. 0 only describes the kernel: the CgGpuKernel
   * facts and entries_all, no code (code NULL, entries 0; lowering only, well under a millisecond).
   * Compile and JIT time follow the code emitted, so a device compiles the entries a launch needs and
   * adds the others when a later launch needs them. The entry names of one compile are unique to it
   * (a module per compile). The host target ignores it. */
  uint32_t entries;
} CgCompileOptions;
#define CG_COMPILE_DEFAULTS ((CgCompileOptions){.want_llvm_ir = false, .entries = CG_ENTRY_ALL})

/* A target (QBE's Target): a struct of function pointers that a target file fills. */
typedef struct CgTarget CgTarget;
struct CgTarget {
  const char *name;  /* "host", "nvptx", "amdgpu": messages */
  int32_t binary;    /* CgBinaryKind its compiles return */
  /* The target's part of every cache key: LLVM version, triple or architecture, CPU and features,
   * and every setting that changes the code ("LLVM 19.1.7 nvptx sm_90 ptx78 block256"). Stable for
   * the target's life. */
  const char *(*describe)(CgTarget *t);
  /* Compiles k (opt NULL: CG_COMPILE_DEFAULTS). Thread-safe with respect to other compiles on the
   * same target. */
  LoomStatus (*compile)(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out, Diag *d);
  void (*release)(CgTarget *t, CgCompiled *c); /* frees what compile made */
  void (*destroy)(CgTarget *t);
  LoomContext *ctx;
  void *state;
};

/* The host specialization on a short last dim (codegen/lower_host_rows.c): the extent E to compile a copy
 * of k with (KernelIr.row_extent = E) for a launch of these sizes and bindings (strides per iteration
 * dim), or 0 where it does not apply or LOOM_HOST_SMALL_ROWS turns it off. */
int cg_host_row_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);
/* KernelIr.row_extent's contract for a launch whose last dim has e points (codegen/lower.c): elementwise or a
 * reduction of the last dim alone, no scan, user reduction, user code or scatter, every buffer a constant stride
 * c along the last dim and along the one before a constant or e * c. Both devices' specializations check it. */
bool cg_row_extent_fits(const KernelIr *k, const SchedBinding *bind, int64_t e);
/* The host specialization of column walks on their run-time column stride (codegen/lower_host_outer_loads.c,
 * KernelIr.col_stride): for a reduction the host walks by columns whose loaded buffers stride by run-time
 * amounts along the last kept dim, the one stride they all have at this launch if it is 2, 3, 4 or -1, else
 * IR_COL_STRIDE_OTHER; 0 where it does not apply or LOOM_HOST_COL_SPECIALIZE=0 /
 * LOOM_HOST_COL_STRIDED_LOADS=0. */
int cg_host_col_stride(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);
/* The host's KernelIr.walk_cols (codegen/lower_host_by_strides.c): 1 where a reduction of a view strided along
 * both its last kept and its innermost reduced dim strides less along the kept one at this launch (the outer
 * walk, planned as for a contiguous kept dim, MAP phases included); else 0 (also LOOM_HOST_WALK_BY_STRIDES=0 or
 * LOOM_HOST_COL_SPECIALIZE=0: the generic kernel, whose run() picks the walk at run time). */
int cg_host_walk_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);

/* The GPU specialization of a reduction whose walk the strides pick (codegen/lower.c; KernelIr.walk_cols):
 * 1 where no buffer is contiguous along the last kept dim or the innermost reduced dim, one strides by
 * run-time amounts along both (cg_reduce_walk's by_strides), and its binding strides less along the kept dim
 * (x[:, ::2].sum(0): a thread a column reads neighbouring words, where a block a column reads a word a row),
 * so the GPU should walk by columns; else 0 (also with LOOM_GPU_WALK_BY_STRIDES=0). */
int cg_gpu_walk_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);
/* The GPU specialization on a short reduced row walked a thread a row (codegen/lower.c; KernelIr.row_extent):
 * the extent E (2 .. LOOM_GPU_SMALL_ROWS, default 8) to compile a copy of k with, or 0. */
int cg_gpu_row_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);
/* The GPU specialization of reductions over short packed rows (codegen/gpu_rowflat.c): the extent E (2 .. 32) of
 * the last dim of a 2-d ROW reduction over at least 2^14 rows whose buffers contiguous along the row are packed
 * (row stride E) to compile a copy of k with (KernelIr.row_extent = E; its `flatv` entry reads chunks of whole
 * rows as flat vectors), or 0 (also with LOOM_GPU_ROWF=0). */
int cg_gpu_rowflat_extent(const KernelIr *k, const int64_t *shape, const SchedBinding *bind);

/* The host CPU target: LLVM ORC JIT for the host's own CPU and features, vectorized loops,
 * SLEEF vector math. describe: "LLVM 19.1.7 host x86_64 <cpu> <features hash>". */
LoomStatus cg_host_target_create(LoomContext *ctx, CgTarget **out, Diag *d);

/* The NVIDIA target: kernel IR -> LLVM IR (nvptx64-nvidia-cuda) -> PTX for sm_<major><minor>, math
 * through CUDA's libdevice ($LOOM_LIBDEVICE, else found under $CUDA_HOME, $CUDA_PATH or
 * /usr/local/cuda: codegen/nvptx.h), loaded lazily per compile so that only used functions are
 * linked. LOOM_ERR_UNSUPPORTED when this LLVM has no NVPTX backend. Needs no GPU. */
LoomStatus cg_nvptx_target_create(LoomContext *ctx, int sm_major, int sm_minor, CgTarget **out, Diag *d);

/* ---- AMD (codegen/amdgpu*.c) ------------------------------------------------------------------------
 * The chips the AMD target compiles for, with the facts the lowering and the code object checks use. */
typedef struct CgAmdChip {
  char name[16];       /* "gfx942" (LLVM's processor name) */
  unsigned mach;       /* ELF e_flags & EF_AMDGPU_MACH (0xff) of its code objects */
  int wave;            /* threads per wave (wavefront): 64 on gfx9, 32 on gfx10+ */
  int isa_version;     /* major * 1000 + minor * 100 + stepping (gfx90a: 9010): ocml's __oclc_ISA_version */
  int simds;           /* SIMDs one workgroup's waves are spread over (gfx9: a CU's 4; gfx10+: a WGP's 4) */
  int vgpr_file;       /* VGPRs per lane of one SIMD (the waves on it share them) */
  int max_vgprs;       /* VGPRs (with AGPRs where unified) one wave can use */
  int max_sgprs;       /* SGPRs one wave can use, VCC / FLAT_SCRATCH / XNACK_MASK included */
  int lds_bytes;       /* LDS one workgroup can use */
  bool fast_f64;       /* float64 at >= 1/2 the float32 rate (CDNA: gfx90a, gfx94x; cg_gpu.h's fast_f64) */
} CgAmdChip;
/* The facts of chip gfx ("gfx90a", "gfx942", "gfx1100", ...; a HIP gcnArchName's ":sramecc+:xnack-"
 * suffix is ignored). false for a chip Loom does not know. */
bool cg_amdgpu_chip(const char *gfx, CgAmdChip *out);
/* Comma-separated names of the known chips (messages). */
const char *cg_amdgpu_chip_names(void);

/* The AMD target: kernel IR -> LLVM IR (amdgcn-amd-amdhsa) -> relocatable object for chip gfx (LLVM's
 * AMDGPU backend, in-process) -> executable code object (ROCm comgr, or ld.lld where the installed
 * comgr does not know the chip: amdgpu_link.c). Math through ROCm's device libraries (ocml; ockl for
 * raw IR) linked lazily. code_object_version: 4 or 5 (0: $LOOM_AMDGPU_CODE_OBJECT, else 5). Needs no
 * GPU. LOOM_ERR_UNSUPPORTED when this LLVM has no AMDGPU backend or the chip is unknown. */
LoomStatus cg_amdgpu_target_create(LoomContext *ctx, const char *gfx, int code_object_version, CgTarget **out,
                                   Diag *d);
/* Makes t a dump target: each compile's code is the AMDGPU assembly text (NUL-terminated: instructions,
 * the kernel descriptors' .amdhsa directives, the metadata) of the code object, which is still linked
 * and, when dir is not NULL or "", written to dir/<module>.<chip>.co (LOOM_DUMP_AMDGPU_DIR). */
void cg_amdgpu_target_set_dump(CgTarget *t, const char *dir);
/* How the AMD target t linked its last code object: "comgr" or "ld.lld" ("" before the first), and
 * why not comgr (why may be NULL). */
const char *cg_amdgpu_linker(CgTarget *t, const char **why);

/* A code object's metadata (NT_AMDGPU_METADATA), read through ROCm comgr (amdgpu_link.c): what the
 * launcher needs (kernarg layout, limits) and what tests check. Sizes in bytes. */
typedef struct CgAmdArg {
  uint32_t offset, size;
  char kind[32];         /* .value_kind: "by_value", "global_buffer", "hidden_block_count_x", ... */
  int32_t address_space; /* .address_space of pointers: 1 global, 3 local, 4 constant; -1 when absent */
} CgAmdArg;
typedef struct CgAmdKernelMeta {
  char name[128], symbol[136]; /* .name; .symbol: the kernel descriptor's symbol ("<name>.kd") */
  uint32_t kernarg_size, kernarg_align, group_segment, private_segment, max_flat_workgroup, wave;
  int32_t sgprs, vgprs, agprs, sgpr_spills, vgpr_spills; /* -1 when absent */
  int32_t nargs;
  CgAmdArg *args; /* nargs, ctx_alloc'ed: explicit arguments first, then hidden ones */
} CgAmdKernelMeta;
typedef struct CgAmdMeta {
  int32_t version[2]; /* amdhsa.version: [1, 1] code object v4, [1, 2] v5 */
  char target[96];    /* amdhsa.target: "amdgcn-amd-amdhsa--gfx90a" */
  int32_t nkernels;
  CgAmdKernelMeta *kernels; /* ctx_alloc'ed */
} CgAmdMeta;
/* Reads the metadata of an executable code object. LOOM_ERR_UNSUPPORTED when comgr cannot be loaded
 * ($LOOM_COMGR, else libamd_comgr.so.{3,2} / libamd_comgr.so), LOOM_ERR_INVALID_ARGUMENT for bytes that
 * are not a code object comgr can read. Free with cg_amdgpu_meta_free. */
LoomStatus cg_amdgpu_read_metadata(LoomContext *ctx, const void *code, size_t size, CgAmdMeta *out, Diag *d);
void cg_amdgpu_meta_free(LoomContext *ctx, CgAmdMeta *m);
/* Whether comgr loads here (and its version "2.4"); why says what was tried when it does not. */
bool cg_amdgpu_comgr_available(char *version, size_t version_cap, char *why, size_t why_cap);
/* Whether AMD code objects can be built here: ROCm's device libraries (ocml.bc) are found and a linker
 * (comgr or ld.lld) is; why says what is missing (a machine without ROCm: tests skip). */
bool cg_amdgpu_toolchain_available(LoomContext *ctx, char *why, size_t why_cap);
/* Points per step of an elementwise kernel's `vec` entries (0: it has none), from the kernel IR
 * alone (no lowering): what the launcher asks for before anything is compiled. */
int cg_gpu_vec_lanes(const KernelIr *k);
/* The CgGpuKernel entry name of bit index i (0 .. CG_NENTRY - 1). */
static inline char *cg_gpu_entry_name(CgGpuKernel *gk, int i) {
  char *names[CG_NENTRY] = {gk->main, gk->vec, gk->part, gk->finish, gk->cached, gk->partv, gk->cachedv, gk->finishb,
                            gk->vecw, gk->flatv};
  return i >= 0 && i < CG_NENTRY ? names[i] : NULL;
}

/* ---- raw LLVM IR for user kernels (codegen/nvptx_raw.c; RawModule, runtime/raw_kernel.c) ----------
 * A parameter of a kernel entry as the launcher checks it. Kinds: POINTER (a device address), INT and
 * FLOAT (a scalar of `size` bytes), INT_OR_POINTER (8 bytes: a PTX .u64/.s64 without .ptr), ANY (only
 * the size is known: an aggregate passed by value, an untyped PTX .b32/.b64, a cubin's param info). */
enum { CG_RAW_POINTER = 0, CG_RAW_INT = 1, CG_RAW_FLOAT = 2, CG_RAW_INT_OR_POINTER = 3, CG_RAW_ANY = 4 };
#define CG_RAW_MAX_PARAMS 256
typedef struct CgRawParam {
  int32_t kind;
  int32_t size; /* bytes */
} CgRawParam;
typedef struct CgRawEntry {
  char *name; /* ctx_alloc'ed */
  int32_t nparams;
  CgRawParam *params; /* nparams entries, ctx_alloc'ed (NULL when nparams is 0) */
} CgRawEntry;
/* Parses an LLVM IR module (text, or bitcode when `bitcode`), lists its kernel entries (functions
 * marked as kernels by NVPTX's kernel annotation or the ptx_kernel calling convention) with their parameters,
 * links libdevice when it calls __nv_* functions (as cg_nvptx_target_create finds it), optimizes it
 * (O3) and emits PTX for sm_<sm> (e.g. 90; LLVM 19 knows up to 90). *ptx (NUL-terminated) and
 * *entries are ctx_alloc'ed: free them with ctx_free and cg_raw_entries_free. Needs no GPU.
 * Errors: LOOM_ERR_INVALID_ARGUMENT for IR that does not parse or verify (LLVM's message),
 * LOOM_ERR_UNSUPPORTED without an NVPTX backend or libdevice. */
LoomStatus cg_nvptx_compile_llvm(LoomContext *ctx, const void *code, size_t size, bool bitcode, int sm,
                                 char **ptx, CgRawEntry **entries, int32_t *nentries, Diag *d);
void cg_raw_entries_free(LoomContext *ctx, CgRawEntry *entries, int32_t n);
/* codegen/amdgpu_raw.c: the same for AMD: LLVM IR for amdgcn-amd-amdhsa (entries: functions of the
 * amdgpu_kernel calling convention; __ocml_ / __ockl_ calls linked) -> an executable code object for chip
 * gfx (*co ctx_alloc'ed, code object v5 unless $LOOM_AMDGPU_CODE_OBJECT or the module's own flag says
 * otherwise). Errors as cg_nvptx_compile_llvm's; LOOM_ERR_UNSUPPORTED for an unknown chip or without
 * ocml / a linker. Needs no GPU. */
LoomStatus cg_amdgpu_compile_llvm(LoomContext *ctx, const void *code, size_t size, bool bitcode, const char *gfx,
                                  char **co, size_t *co_size, CgRawEntry **entries, int32_t *nentries, Diag *d);
/* Whether LLVM IR (text, or bitcode) names an amdgcn target triple (RawModule picks the device kind by it). */
bool cg_llvm_targets_amdgcn(const void *code, size_t size);
/* The kernels of an AMDGPU code object and their explicit arguments, from its metadata (comgr): a
 * global_buffer is a POINTER, a by_value argument ANY of its size. */
LoomStatus cg_amdgpu_code_object_entries(LoomContext *ctx, const void *co, size_t size, CgRawEntry **entries,
                                         int32_t *nentries, Diag *d);

#endif /* LOOM_CODEGEN_H */
