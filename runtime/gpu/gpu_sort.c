/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_sort.c: loom_sort (a stable LSD radix sort of the rows of a GPU array, with values or argsort's
 * indices moved along) and loom_take_rows (rows gathered by int64 indices), loom.h.
 *
 * Approach. The kernels are codegen/gpu_radix.c's library kernels, generated as LLVM bitcode for the
 * array's device kind (NVPTX wave 32, AMDGPU wave 64) and compiled as a raw module (loom_raw_*: LLVM ->
 * PTX / code object at creation, loaded per device at the first launch, for that device's sm or chip).
 * Modules are made on first need and kept for the context's life in RtState.sort, one per CgRadixSpec:
 * device kind, key dtype, value width (0, 4, 8 bytes), pass design (LOOM_RADIX_LEGACY=1 selects the
 * first one, for A/B timing: gpu_radix.h) and tuning (LOOM_GPU_RADIX_ITEMS4 / ITEMS8 / BLOCKS_PER_SM /
 * HIST_PARTS / RANK, read per sort by cg_radix_tuning: one process can time several settings, as
 * bench/sort_sweep.py does; raw modules are not cached on disk), plus one gather module per kind.
 *
 * Rows that fit one block (n <= 256 x the largest row variant: 8192 keys-only 4-byte keys, 4096 for
 * float32 argsort or float64, ...) sort in one launch of loom_radix_rows<I> (a block per row, the whole
 * sort in shared memory: gpu_radix_rows.c), the smallest variant that holds the row;
 * LOOM_GPU_RADIX_ROWS=0 sends them through the tile sweep below (A/B).
 *
 * A sort of R longer rows of n keys (the last axis of a C-contiguous array) with P = key bytes passes:
 *   zero(scratch)                    tile counters, histograms, look-back status words
 *   histogram(keys)                  every pass's digit counts per row, one read of the keys
 *   plan                             per row and pass: trivial (one digit holds the row) or which buffers
 *                                    (codegen/gpu_radix_plan.c; decided on the device, no host sync)
 *   pass(p) for p = 0 .. P-1         trivial: every block returns at once; else keys (values) from the
 *                                    input, then ping-pong between the output and one temporary, so that
 *                                    the row's last non-trivial pass writes the output; argsort's index
 *                                    moves as int32 and that pass widens it into the int64 output
 *   copy                             rows with no non-trivial pass: the input copied (returns at once
 *                                    when there is none)
 * LOOM_GPU_RADIX_SKIP=0 (CgRadixSpec.all_passes, for A/B timing): no plan or copy, every pass runs.
 * Everything is enqueued on the calling thread's current stream of the device (asynchronous, like
 * loom_eval); temporaries come from the device's pool and go back to it when the call returns (after
 * the device's settle: the pool is stream-blind). Rows of fewer keys than a tile waste the rest of the tile: callers sort
 * short rows otherwise (python/loom/_sortnet.py: the bitonic network below RADIX_MIN_ROW).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/gpu_radix.h"
#include "runtime/device.h"
#include "runtime/gpu/gpu_sort.h"

/* Blocks of the histogram kernel: a few per multiprocessor of a large GPU. Each adds its counts to the
 * row's histogram once (P x 256 global atomics on the same few lines), so fewer, longer blocks
 * (LOOM_GPU_RADIX_HIST_TILES=k sets the tiles per block instead, for tuning). */
#define HIST_BLOCKS 1024

typedef struct SortModule {
  CgRadixSpec spec; /* what it was made for: device kind, key, value width, design and tuning */
  LoomRawModule *m;
  LoomRawFunction *zero, *hist, *pass, *plan, *copy; /* plan, copy: cg_radix_skips (else NULL) */
  LoomRawFunction *rows[CG_RADIX_ROW_VARIANTS]; /* spec.rows: the block row sorts, rows of <= 256 row_items[i] */
  int row_items[CG_RADIX_ROW_VARIANTS], nrows;
  struct SortModule *next;
} SortModule;

typedef struct TakeModule {
  LoomRawModule *m;
  LoomRawFunction *take[5]; /* 1, 2, 4, 8, 16 bytes */
} TakeModule;

struct RtSortKernels {
  pthread_mutex_t lock; /* guards the tables: a module is made once */
  SortModule *sorts;    /* one per distinct spec (the tuning is part of it: LOOM_GPU_RADIX_* may change) */
  TakeModule takes[RT_DEVICE_KINDS];
};

void rt_sort_destroy(LoomContext *ctx, RtState *rt) {
  RtSortKernels *k = rt ? rt->sort : NULL;
  if (!k) return;
  for (SortModule *s = k->sorts, *nx; s; s = nx) {
    nx = s->next;
    loom_raw_module_destroy(s->m);
    ctx_free(ctx, s);
  }
  for (int a = 0; a < RT_DEVICE_KINDS; a++) loom_raw_module_destroy(k->takes[a].m);
  pthread_mutex_destroy(&k->lock);
  ctx_free(ctx, k);
  rt->sort = NULL;
}

static LoomStatus kernels_of(LoomContext *ctx, RtSortKernels **out, Diag *d) {
  RtState *rt = ctx->rt;
  pthread_mutex_lock(&rt->device_lock);
  if (!rt->sort) {
    RtSortKernels *k = ctx_calloc(ctx, 1, sizeof *k);
    if (k) {
      pthread_mutex_init(&k->lock, NULL);
      rt->sort = k;
    }
  }
  *out = rt->sort;
  pthread_mutex_unlock(&rt->device_lock);
  return *out ? LOOM_OK : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "sort: out of memory");
}

/* The raw module of spec for device kind `kind`, made on first need; fns[i] = its function names[i]. */
static LoomStatus make_module(LoomContext *ctx, const CgRadixSpec *spec, LoomRawModule **m, const char *const *names,
                              LoomRawFunction **fns, int nfns, Diag *d) {
  void *bc = NULL;
  size_t size = 0;
  LoomStatus st = cg_radix_module(ctx, spec, &bc, &size, d);
  if (st != LOOM_OK) return st;
  st = loom_raw_module_create(ctx, bc, size, LOOM_RAW_LLVM_BITCODE, NULL, 0, m);
  ctx_free(ctx, bc);
  if (st != LOOM_OK) return diag_error(d, st, "sort: compiling the radix sort kernels failed: %s", loom_last_error(ctx));
  for (int i = 0; i < nfns && st == LOOM_OK; i++) st = loom_raw_module_get_function(*m, names[i], &fns[i]);
  if (st != LOOM_OK) {
    st = diag_error(d, st, "sort: %s", loom_last_error(ctx));
    loom_raw_module_destroy(*m);
    *m = NULL;
  }
  return st;
}

/* LOOM_RADIX_LEGACY=1: the first pass design (gpu_radix.h, CgRadixSpec.legacy), for A/B timing. */
static bool legacy_pass(void) {
  const char *e = getenv("LOOM_RADIX_LEGACY");
  return e && *e && strcmp(e, "0") != 0;
}

/* LOOM_GPU_RADIX_ROWS=0: rows that fit one block go through the tile sweep too (A/B timing). */
static bool block_rows(void) {
  const char *e = getenv("LOOM_GPU_RADIX_ROWS");
  return !e || !*e || strcmp(e, "0") != 0;
}

/* LOOM_GPU_RADIX_HIST_TILES=k (>= 1): tiles per histogram block; else about HIST_BLOCKS blocks. */
static int64_t hist_tiles(int64_t tiles) {
  const char *e = getenv("LOOM_GPU_RADIX_HIST_TILES");
  long k = e && *e ? strtol(e, NULL, 10) : 0;
  return k >= 1 && k <= (1L << 20) ? k : (tiles + HIST_BLOCKS - 1) / HIST_BLOCKS;
}

static CgRadixSpec spec_for(LoomDeviceKind kind, LoomDType key, int value_bytes, bool take) {
  bool amd = kind == LOOM_DEVICE_HIP;
  CgRadixSpec s = {.key = key, .value_bytes = value_bytes, .wave = amd ? 64 : 32, .amdgpu = amd, .take = take,
                   .legacy = !take && legacy_pass()};
  if (!take) cg_radix_tuning(&s); /* LOOM_GPU_RADIX_*: read per sort */
  return s;
}

static bool same_spec(const CgRadixSpec *a, const CgRadixSpec *b) {
  return a->key == b->key && a->value_bytes == b->value_bytes && a->wave == b->wave && a->amdgpu == b->amdgpu &&
         a->legacy == b->legacy && a->rows == b->rows && a->items == b->items && a->blocks_per_sm == b->blocks_per_sm &&
         a->hist_parts == b->hist_parts && a->ballot_rank == b->ballot_rank &&
         a->peers_first == b->peers_first && a->smem_rank == b->smem_rank &&
         a->atomic_rank == b->atomic_rank && a->all_passes == b->all_passes;
}

static LoomStatus sort_module(LoomContext *ctx, const CgRadixSpec *spec, const SortModule **out, Diag *d) {
  RtSortKernels *k;
  LoomStatus st = kernels_of(ctx, &k, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(&k->lock);
  SortModule *s = k->sorts;
  while (s && !same_spec(&s->spec, spec)) s = s->next;
  if (!s) {
    static const char *const names[5] = {"loom_radix_zero", "loom_radix_histogram", "loom_radix_pass", "loom_radix_plan",
                                         "loom_radix_copy"};
    LoomRawFunction *fns[5] = {NULL};
    s = ctx_calloc(ctx, 1, sizeof *s);
    if (!s) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "sort: out of memory");
    if (st == LOOM_OK && spec->rows) { /* the row sorts: loom_radix_rows<I> */
      char rn[CG_RADIX_ROW_VARIANTS][40];
      const char *rp[CG_RADIX_ROW_VARIANTS];
      s->nrows = cg_radix_row_items(spec, s->row_items);
      for (int i = 0; i < s->nrows; i++) {
        snprintf(rn[i], sizeof rn[i], "loom_radix_rows%d", s->row_items[i]);
        rp[i] = rn[i];
      }
      st = make_module(ctx, spec, &s->m, rp, s->rows, s->nrows, d);
    } else if (st == LOOM_OK) {
      st = make_module(ctx, spec, &s->m, names, fns, cg_radix_skips(spec) ? 5 : 3, d);
      if (st == LOOM_OK) s->zero = fns[0], s->hist = fns[1], s->pass = fns[2], s->plan = fns[3], s->copy = fns[4];
    }
    if (st == LOOM_OK) s->spec = *spec;
    if (st == LOOM_OK) {
      s->next = k->sorts;
      k->sorts = s;
    } else {
      ctx_free(ctx, s);
      s = NULL;
    }
  }
  pthread_mutex_unlock(&k->lock);
  *out = s;
  return st;
}

static LoomStatus take_module(LoomContext *ctx, LoomDeviceKind kind, const TakeModule **out, Diag *d) {
  RtSortKernels *k;
  LoomStatus st = kernels_of(ctx, &k, d);
  if (st != LOOM_OK) return st;
  TakeModule *t = &k->takes[kind];
  pthread_mutex_lock(&k->lock);
  if (!t->m) {
    CgRadixSpec spec = spec_for(kind, LOOM_UINT8, 0, true);
    static const char *const names[5] = {"loom_radix_take1", "loom_radix_take2", "loom_radix_take4",
                                         "loom_radix_take8", "loom_radix_take16"};
    st = make_module(ctx, &spec, &t->m, names, t->take, 5, d);
  }
  pthread_mutex_unlock(&k->lock);
  *out = t;
  return st;
}

/* ---- launches ----------------------------------------------------------------------------------------- */
static LoomRawArg arg_array(const LoomArray *a) { return (LoomRawArg){.kind = LOOM_RAW_ARG_ARRAY, .array = a}; }
static LoomRawArg arg_i64(int64_t v) {
  return (LoomRawArg){.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_INT64, .value.i = v};
}
static LoomRawArg arg_i32(int64_t v) {
  return (LoomRawArg){.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_INT32, .value.i = v};
}

static LoomStatus launch(LoomContext *ctx, LoomRawFunction *f, uint64_t blocks, int32_t nargs, const LoomRawArg *args,
                         Diag *d) {
  if (blocks > 0x7fffffffu)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "sort: %llu blocks exceed the grid limit", (unsigned long long)blocks);
  uint32_t grid[3] = {(uint32_t)blocks, 1, 1}, block[3] = {CG_RADIX_BLOCK, 1, 1};
  LoomStatus st = loom_raw_function_launch(f, grid, block, 0, NULL, nargs, args);
  return st == LOOM_OK ? LOOM_OK : diag_error(d, st, "sort: launching %s failed: %s", loom_raw_function_name(f),
                                               loom_last_error(ctx));
}

/* A 1-d temporary of n elements of dtype t on a's device. */
static LoomStatus temp(LoomContext *ctx, const LoomArray *a, LoomDType t, int64_t n, LoomArray *out, Diag *d) {
  memset(out, 0, sizeof *out);
  *out = (LoomArray){.dtype = t, .ndim = 1, .shape = {n}, .device = a->device, .device_index = a->device_index};
  LoomStatus st = loom_array_alloc(ctx, out);
  return st == LOOM_OK ? LOOM_OK : diag_error(d, st, "sort: %s", loom_last_error(ctx));
}

static LoomDType uint_of(int bytes) {
  return bytes == 1 ? LOOM_UINT8 : bytes == 2 ? LOOM_UINT16 : bytes == 4 ? LOOM_UINT32 : bytes == 8 ? LOOM_UINT64
                                                                                                    : LOOM_COMPLEX128;
}

/* ---- checks --------------------------------------------------------------------------------------------- */
static LoomStatus check_gpu_array(const LoomArray *a, const char *what, const char *fn, Diag *d) {
  if (!a) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s must not be NULL", fn, what);
  if (a->device != LOOM_DEVICE_CUDA && a->device != LOOM_DEVICE_HIP)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: %s is a %s array; the radix sort runs on GPU arrays (CUDA, HIP)",
                      fn, what, a->device == LOOM_DEVICE_HOST ? "host" : "unknown device's");
  if (a->ndim < 1 || a->ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_SHAPE, "%s: %s has %d dimensions (1 to %d: rows along the last)", fn, what,
                      (int)a->ndim, LOOM_MAX_RANK);
  if (!rt_array_c_contiguous(a)) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s must be C-contiguous", fn, what);
  if ((unsigned)a->dtype >= LOOM_DTYPE_COUNT) return diag_error(d, LOOM_ERR_DTYPE, "%s: %s has an unknown dtype", fn, what);
  return LOOM_OK;
}

static bool same_place(const LoomArray *a, const LoomArray *b) {
  return a->device == b->device && a->device_index == b->device_index;
}

static LoomStatus alloc_like(LoomContext *ctx, const LoomArray *shape_of, LoomDType t, LoomArray *out, Diag *d) {
  memset(out, 0, sizeof *out);
  out->dtype = t;
  out->ndim = shape_of->ndim;
  memcpy(out->shape, shape_of->shape, sizeof out->shape);
  out->device = shape_of->device;
  out->device_index = shape_of->device_index;
  LoomStatus st = loom_array_alloc(ctx, out);
  return st == LOOM_OK ? LOOM_OK : diag_error(d, st, "sort: %s", loom_last_error(ctx));
}

/* ---- loom_sort ---------------------------------------------------------------------------------------------- */
static LoomStatus run_sort(LoomContext *ctx, const LoomArray *keys, const LoomArray *values, int32_t flags,
                           LoomArray *sk, LoomArray *sv, int64_t rows, int64_t n, int vb, Diag *d) {
  const SortModule *sm;
  CgRadixSpec spec = spec_for(keys->device, keys->dtype, vb, false);
  int64_t desc = (flags & LOOM_SORT_DESCENDING) ? -1 : 0;
  /* argsort's index moves as int32 (widened into the int64 output by the last pass) when vb is 4 */
  bool widen = (flags & LOOM_SORT_INDEX) && vb == 4;
  int items[CG_RADIX_ROW_VARIANTS], nv = cg_radix_row_items(&spec, items);
  if (block_rows() && nv && n <= (int64_t)CG_RADIX_BLOCK * items[nv - 1]) {
    /* a row that fits one block: sorted there, one launch (gpu_radix_rows.c); one module per key and
     * value width whatever the tile tuning */
    CgRadixSpec rs = {.key = spec.key, .value_bytes = vb, .wave = spec.wave, .amdgpu = spec.amdgpu, .rows = true,
                      .ballot_rank = spec.ballot_rank, .all_passes = spec.all_passes};
    LoomStatus st = sort_module(ctx, &rs, &sm, d);
    if (st != LOOM_OK) return st;
    int v = 0;
    while ((int64_t)CG_RADIX_BLOCK * sm->row_items[v] < n) v++;
    int32_t mode = !vb ? 0 : (flags & LOOM_SORT_INDEX) ? 1 : 2;
    if (widen) mode |= 4;
    LoomRawArg a[7] = {arg_array(keys), arg_array(sk), arg_array(values ? values : keys), arg_array(sv ? sv : keys),
                       arg_i64(n), arg_i64(desc), arg_i32(mode)};
    return launch(ctx, sm->rows[v], (uint64_t)rows, 7, a, d);
  }
  LoomStatus st = sort_module(ctx, &spec, &sm, d);
  if (st != LOOM_OK) return st;
  CgRadixShape sh = cg_radix_shape(&spec);
  int64_t tpr = (n + sh.tile - 1) / sh.tile, tiles = rows * tpr, P = sh.passes;
  if (tpr > 0x7fffffff || tiles > 0x7fffffff)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "sort: %lld rows of %lld keys are more tiles than one launch takes",
                      (long long)rows, (long long)n);
  int64_t words = cg_radix_scratch_words(&spec, rows, tpr);
  bool planned = cg_radix_skips(&spec); /* trivial passes skipped on the device (gpu_radix_plan.c) */
  /* widen: values ping-pong between two int32 temporaries and the last pass writes the int64 output */
  LoomArray scratch, kalt, valt[2];
  memset(&kalt, 0, sizeof kalt);
  memset(valt, 0, sizeof valt);
  st = temp(ctx, keys, LOOM_UINT32, words, &scratch, d);
  if (st == LOOM_OK && P > 1) st = temp(ctx, keys, keys->dtype, rows * n, &kalt, d);
  if (st == LOOM_OK && P > 1 && vb) st = temp(ctx, keys, uint_of(vb), rows * n, &valt[0], d);
  if (st == LOOM_OK && P > 2 && widen) st = temp(ctx, keys, LOOM_INT32, rows * n, &valt[1], d);
  if (st == LOOM_OK) {
    LoomRawArg a[2] = {arg_array(&scratch), arg_i64(words)};
    int64_t blocks = (words + 255) / 256;
    st = launch(ctx, sm->zero, (uint64_t)(blocks < 4096 ? blocks : 4096), 2, a, d);
  }
  int64_t chunk = hist_tiles(tiles), per_row = (tpr + chunk - 1) / chunk;
  if (st == LOOM_OK) { /* about HIST_BLOCKS blocks, each over `chunk` tiles of one row */
    LoomRawArg a[6] = {arg_array(keys), arg_array(&scratch), arg_i64(n), arg_i32(tpr), arg_i64(desc), arg_i32(chunk)};
    st = launch(ctx, sm->hist, (uint64_t)(rows * per_row), 6, a, d);
  }
  if (st == LOOM_OK && planned) { /* each row's trivial passes and buffers, decided on the device */
    LoomRawArg a[4] = {arg_array(&scratch), arg_i64(n), arg_i32(tpr), arg_i64(rows)};
    st = launch(ctx, sm->plan, (uint64_t)rows, 4, a, d);
  }
  int32_t vmode = !vb ? 0 : (flags & LOOM_SORT_INDEX) ? 1 : 2;
  if (planned) { /* one launch a pass; each row's tiles take their buffers and mode from its plan words */
    const LoomArray *some = keys; /* in the place of buffers that a plan never selects (not allocated) */
    const LoomArray *bufs[7] = {keys, sk, P > 1 ? &kalt : some, values ? values : some, sv ? sv : some,
                                P > 1 && vb ? &valt[0] : some, P > 2 && widen ? &valt[1] : some};
    for (int64_t p = 0; p < P && st == LOOM_OK; p++) {
      LoomRawArg a[14];
      for (int i = 0; i < 7; i++) a[i] = arg_array(bufs[i]);
      a[7] = arg_array(&scratch), a[8] = arg_i64(n), a[9] = arg_i32(tpr), a[10] = arg_i64(rows), a[11] = arg_i32(p);
      a[12] = arg_i64(desc), a[13] = arg_i32(vmode | (widen ? 4 : 0));
      st = launch(ctx, sm->pass, (uint64_t)tiles, 14, a, d);
    }
    if (st == LOOM_OK) { /* rows with no non-trivial pass: copied (every block returns at once if none) */
      LoomRawArg a[10] = {arg_array(keys),     arg_array(sk),  arg_array(values ? values : keys), arg_array(sv ? sv : keys),
                          arg_array(&scratch), arg_i64(n),     arg_i32(tpr),                      arg_i64(rows),
                          arg_i32(chunk),      arg_i32(vmode | (widen ? 4 : 0))};
      st = launch(ctx, sm->copy, (uint64_t)(rows * per_row), 10, a, d);
    }
  }
  const LoomArray *kin = keys, *vin = values ? values : keys;
  for (int64_t p = 0; p < P && st == LOOM_OK && !planned; p++) {
    bool last_parity = ((P - 1 - p) & 1) == 0; /* pass P-1 writes the outputs */
    const LoomArray *kout = last_parity ? sk : &kalt;
    const LoomArray *vout = !vb ? keys : widen ? (p == P - 1 ? sv : &valt[p & 1]) : last_parity ? sv : &valt[0];
    int32_t mode = !vb ? 0 : (p == 0 && (flags & LOOM_SORT_INDEX)) ? 1 : 2;
    if (widen && p == P - 1) mode |= 4;
    LoomRawArg a[11] = {arg_array(kin), arg_array(kout), arg_array(vin), arg_array(vout), arg_array(&scratch),
                        arg_i64(n), arg_i32(tpr), arg_i64(rows), arg_i32(p), arg_i64(desc), arg_i32(mode)};
    st = launch(ctx, sm->pass, (uint64_t)tiles, 11, a, d);
    kin = kout;
    vin = vout;
  }
  const RtDevice *dev = rt_device(keys->device);
  if (dev && dev->settle) dev->settle(ctx, keys->device_index); /* the pool is stream-blind (device.h) */
  loom_array_free(ctx, &scratch);
  loom_array_free(ctx, &kalt);
  loom_array_free(ctx, &valt[0]);
  loom_array_free(ctx, &valt[1]);
  return st;
}

static LoomStatus sort_impl(LoomContext *ctx, const LoomArray *keys, const LoomArray *values, int32_t flags,
                            LoomArray *sk, LoomArray *sv, Diag *d) {
  const char *fn = "loom_sort";
  if (flags & ~(LOOM_SORT_DESCENDING | LOOM_SORT_INDEX))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, (unsigned)flags);
  LoomStatus st = check_gpu_array(keys, "keys", fn, d);
  if (st != LOOM_OK) return st;
  if (!cg_radix_key_ok(keys->dtype))
    return diag_error(d, LOOM_ERR_DTYPE, "%s: keys of dtype %s cannot be radix-sorted (bool, integers, float16, "
                      "bfloat16, float32, float64; sort a complex key by its parts)", fn, loom_dtype_name(keys->dtype));
  if (!sk) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: sorted_keys must not be NULL", fn);
  bool index = (flags & LOOM_SORT_INDEX) != 0;
  if (index && values)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: LOOM_SORT_INDEX makes the values: pass values NULL", fn);
  int vb = index ? 8 : 0, kernel_vb;
  if (values) {
    if ((st = check_gpu_array(values, "values", fn, d)) != LOOM_OK) return st;
    vb = dtype_bits(values->dtype) / 8;
    if (vb != 4 && vb != 8)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: values of dtype %s: the sort moves 4- or 8-byte values (gather "
                        "others with loom_take_rows and LOOM_SORT_INDEX)", fn, loom_dtype_name(values->dtype));
    if (!same_place(keys, values) || values->ndim != keys->ndim ||
        memcmp(values->shape, keys->shape, sizeof(int64_t) * (size_t)keys->ndim))
      return diag_error(d, LOOM_ERR_SHAPE, "%s: values must have the keys' shape and device", fn);
  }
  if ((index || values) && !sv)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: sorted_values must not be NULL with values or LOOM_SORT_INDEX", fn);
  int64_t n = keys->shape[keys->ndim - 1], numel = ir_numel(keys->ndim, keys->shape);
  int64_t rows = n ? numel / n : 0;
  if (n >= CG_RADIX_MAX_ROW)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: rows of %lld keys; the radix sort takes fewer than 2^30 per row", fn,
                      (long long)n);
  if ((st = alloc_like(ctx, keys, keys->dtype, sk, d)) != LOOM_OK) return st;
  if (vb && (st = alloc_like(ctx, keys, index ? LOOM_INT64 : values->dtype, sv, d)) != LOOM_OK) {
    loom_array_free(ctx, sk);
    return st;
  }
  if (numel == 0) return LOOM_OK;
  kernel_vb = index && n <= INT32_MAX ? 4 : vb; /* argsort: an int32 index while positions fit */
  st = run_sort(ctx, keys, values, flags, sk, vb ? sv : NULL, rows, n, kernel_vb, d);
  if (st != LOOM_OK) {
    loom_array_free(ctx, sk);
    if (vb) loom_array_free(ctx, sv);
  }
  return st;
}

LOOM_API LoomStatus loom_sort(LoomContext *ctx, const LoomArray *keys, const LoomArray *values, int32_t flags,
                              LoomArray *sorted_keys, LoomArray *sorted_values) {
  if (!ctx || !ctx->rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = sort_impl(ctx, keys, values, flags, sorted_keys, sorted_values, &d);
  return st == LOOM_OK ? LOOM_OK : ctx_report(ctx, &d);
}

/* ---- loom_take_rows ------------------------------------------------------------------------------------------ */
static LoomStatus take_impl(LoomContext *ctx, const LoomArray *src, const LoomArray *index, LoomArray *out, Diag *d) {
  const char *fn = "loom_take_rows";
  LoomStatus st = check_gpu_array(src, "src", fn, d);
  if (st == LOOM_OK) st = check_gpu_array(index, "index", fn, d);
  if (st != LOOM_OK) return st;
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: out must not be NULL", fn);
  if (index->dtype != LOOM_INT64) return diag_error(d, LOOM_ERR_DTYPE, "%s: index must be int64", fn);
  if (!same_place(src, index) || src->ndim != index->ndim ||
      memcmp(src->shape, index->shape, sizeof(int64_t) * (size_t)(src->ndim - 1)))
    return diag_error(d, LOOM_ERR_SHAPE, "%s: index must be on src's device with src's leading dimensions", fn);
  int bytes = dtype_bits(src->dtype) / 8, which = bytes == 1 ? 0 : bytes == 2 ? 1 : bytes == 4 ? 2 : bytes == 8 ? 3 : 4;
  int64_t m = index->shape[index->ndim - 1], ns = src->shape[src->ndim - 1], total = ir_numel(index->ndim, index->shape);
  if (total > 0 && ns == 0)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: cannot take from rows of length 0", fn);
  if ((st = alloc_like(ctx, index, src->dtype, out, d)) != LOOM_OK) return st;
  if (total == 0) return LOOM_OK;
  const TakeModule *tm;
  LoomArray bad;
  memset(&bad, 0, sizeof bad);
  st = take_module(ctx, src->device, &tm, d);
  if (st == LOOM_OK) st = temp(ctx, src, LOOM_UINT32, 1, &bad, d);
  if (st == LOOM_OK) {
    uint32_t zero = 0;
    LoomArray h = {.dtype = LOOM_UINT32, .ndim = 1, .shape = {1}, .strides = {1}, .data = &zero, .device = LOOM_DEVICE_HOST};
    if (loom_array_copy(ctx, &bad, &h) != LOOM_OK) st = diag_error(d, LOOM_ERR_BACKEND, "%s: %s", fn, loom_last_error(ctx));
  }
  if (st == LOOM_OK) {
    LoomRawArg a[7] = {arg_array(src), arg_array(index), arg_array(out), arg_array(&bad), arg_i64(m), arg_i64(ns),
                       arg_i64(total)};
    int64_t blocks = (total + 255) / 256;
    st = launch(ctx, tm->take[which], (uint64_t)(blocks < 65536 ? blocks : 65536), 7, a, d);
  }
  if (st == LOOM_OK) { /* the flag: one word read back (the copy waits for the gather) */
    uint32_t flag = 0;
    LoomArray h = {.dtype = LOOM_UINT32, .ndim = 1, .shape = {1}, .strides = {1}, .data = &flag, .device = LOOM_DEVICE_HOST};
    if (loom_array_copy(ctx, &h, &bad) != LOOM_OK) st = diag_error(d, LOOM_ERR_BACKEND, "%s: %s", fn, loom_last_error(ctx));
    else if (flag)
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: an index is out of bounds for rows of %lld elements", fn, (long long)ns);
  }
  loom_array_free(ctx, &bad);
  if (st != LOOM_OK) loom_array_free(ctx, out);
  return st;
}

LOOM_API LoomStatus loom_take_rows(LoomContext *ctx, const LoomArray *src, const LoomArray *index, LoomArray *out) {
  if (!ctx || !ctx->rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = take_impl(ctx, src, index, out, &d);
  return st == LOOM_OK ? LOOM_OK : ctx_report(ctx, &d);
}
