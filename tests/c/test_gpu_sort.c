/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_sort.c: the device radix sort (loom_sort, loom_take_rows; codegen/gpu_radix.c's kernels).
 *
 * `test_gpu_sort --ptx` (ctest test_gpu_sort_ptx, no GPU): the kernels of every key dtype and value width
 * compiled for NVPTX (sm_90; assembled by ptxas when the CUDA toolkit is installed) and for AMDGPU
 * (gfx942, gfx1100 in wave64 mode; skipped without a code-object linker), with the instructions the
 * design needs present: wave ballots, warp syncs, barriers, shared-memory atomics, the look-back's
 * relaxed global loads and stores; and the entries' parameter lists; and the C API's argument checks
 * that need no GPU (host arrays, NULL, unknown flags). LOOM_TEST_PTX_DIR=dir keeps each module's PTX
 * there (radix_<key>_v<value bytes>.ptx) for `ptxas -arch=sm_90 -v`. With ptxas, the pass kernel of the
 * default design must fit 4 blocks of 256 a multiprocessor: <= 64 registers, <= 32 bytes spilled.
 * `test_gpu_sort --ptxas-report` (no GPU, needs ptxas): registers, spills and shared memory of the pass
 * kernel over a grid of tuned shapes (CgRadixSpec.items x blocks_per_sm) and of the row sorts.
 * `test_gpu_sort --emulate` (ctest test_gpu_sort_emulate, no GPU): the kernels' arithmetic run on the
 * host for waves of 32 and 64 -- key images, the histogram, per-wave ballot ranking, the wave prefix and
 * tile scans, the look-back (tiles resolved in a shuffled order, so it walks over tiles that only
 * published their own counts), staging and the scatter -- compared with an independent stable
 * comparison sort (qsort on values with NumPy's order, ties by position).
 * `test_gpu_sort` (ctest test_gpu_sort; LOOM_TEST_GPU=hip for an AMD GPU): loom_sort on the GPU against
 * the same reference for every dtype (NaN of both signs, +-0.0, +-inf, denormals, duplicates, sorted,
 * reversed, sizes 0, 1, odd, across tiles, many rows), ascending and descending, argsort indices,
 * 4- and 8-byte values, the block row sort at its capacity edges (and the same rows by the tile sweep,
 * LOOM_GPU_RADIX_ROWS=0), the tuning switches (LOOM_GPU_RADIX_*), loom_take_rows with its bounds error,
 * the argument errors; then the time of
 * 2^20 .. 2^26 float32 sorts. Exits 77 (skipped) without a driver or device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "codegen/gpu_radix.h"
#include "tests/c/test_common.h"

static const LoomDType key_types[] = {LOOM_BOOL,   LOOM_INT8,    LOOM_INT16,   LOOM_INT32,   LOOM_INT64,
                                      LOOM_UINT8,  LOOM_UINT16,  LOOM_UINT32,  LOOM_UINT64,  LOOM_FLOAT16,
                                      LOOM_BFLOAT16, LOOM_FLOAT32, LOOM_FLOAT64};
#define NKEY_TYPES (int)(sizeof key_types / sizeof key_types[0])

static int esize(LoomDType t) { return loom_dtype_size(t) > 0 ? (int)loom_dtype_size(t) : 1; }
static uint64_t bits_at(const void *p, int es, int64_t i) {
  uint64_t v = 0;
  memcpy(&v, (const char *)p + i * es, (size_t)es); /* little-endian */
  return v;
}
static bool is_floating(LoomDType t) { return t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64; }

/* ---- the reference: NumPy's order by value (not by bits), ties by position ------------------------------ */
typedef struct RefKey {
  int cls;      /* 0 number, 1 NaN (last ascending) */
  double f;     /* floats */
  __int128 i;   /* integers, bool */
  int64_t pos;
} RefKey;
static int ref_desc;
static int ref_cmp(const void *pa, const void *pb) {
  const RefKey *a = pa, *b = pb;
  int c = 0;
  if (a->cls != b->cls) c = a->cls < b->cls ? -1 : 1;
  else if (a->cls == 0) c = a->f < b->f ? -1 : a->f > b->f ? 1 : a->i < b->i ? -1 : a->i > b->i ? 1 : 0;
  if (ref_desc) c = -c;
  if (c) return c;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static RefKey ref_key(LoomDType t, uint64_t b, int64_t pos) {
  RefKey k = {.pos = pos};
  double f = 0;
  switch (t) {
  case LOOM_FLOAT16: f = tc_f16_to_double((uint16_t)b); break;
  case LOOM_BFLOAT16: f = tc_bf16_to_double((uint16_t)b); break;
  case LOOM_FLOAT32: { float x; uint32_t u = (uint32_t)b; memcpy(&x, &u, 4); f = x; break; }
  case LOOM_FLOAT64: memcpy(&f, &b, 8); break;
  case LOOM_INT8: k.i = (int8_t)b; break;
  case LOOM_INT16: k.i = (int16_t)b; break;
  case LOOM_INT32: k.i = (int32_t)b; break;
  case LOOM_INT64: k.i = (int64_t)b; break;
  default: k.i = (__int128)b; break; /* unsigned, bool */
  }
  if (is_floating(t)) {
    k.cls = isnan(f) ? 1 : 0;
    k.f = isnan(f) ? 0 : f; /* -0.0 == 0.0 by comparison */
  }
  return k;
}
/* perm (rows x n): the stable order of each row of keys. */
static void ref_sort(LoomDType t, const void *keys, int64_t rows, int64_t n, bool desc, int64_t *perm) {
  RefKey *ks = malloc(sizeof *ks * (size_t)(n ? n : 1));
  int es = esize(t);
  ref_desc = desc;
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t i = 0; i < n; i++) ks[i] = ref_key(t, bits_at(keys, es, r * n + i), i);
    qsort(ks, (size_t)n, sizeof *ks, ref_cmp);
    for (int64_t i = 0; i < n; i++) perm[r * n + i] = ks[i].pos;
  }
  free(ks);
}

/* ---- test data ------------------------------------------------------------------------------------------- */
static uint64_t rng = 0x5eed;
static uint64_t special_float(LoomDType t, uint64_t r) {
  static const double vals[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0, -1.0, 0.5, 1e-30, -1e-30, 65504.0};
  double v = vals[r % (sizeof vals / sizeof vals[0])];
  if (t == LOOM_FLOAT16) return r % 13 == 0 ? 0x7e01u | ((r >> 8) & 1u) << 15 : r % 17 == 0 ? 1u : tc_double_to_f16(v);
  if (t == LOOM_BFLOAT16) return r % 13 == 0 ? 0xffc1u : tc_double_to_bf16(v);
  if (t == LOOM_FLOAT32) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return r % 13 == 0 ? 0xffc00123u : r % 17 == 0 ? 0x00000003u : u; /* a negative NaN with payload, a denormal */
  }
  uint64_t u;
  memcpy(&u, &v, 8);
  return r % 13 == 0 ? 0xfff8000000000abcull : r % 17 == 0 ? 5ull : u;
}
/* kind 0 random bits, 1 few distinct values (every byte differs: no trivial pass), 2 specials mixed in,
 * 3 ascending, 4 descending; the trivial passes' kinds (gpu_radix_plan.c): KIND_SMALL integers in
 * [0, 1000) (int32: 2 of 4 passes trivial, int64 6 of 8), KIND_EQUAL one value (every pass trivial),
 * KIND_LOW_ZERO multiples of 256 below 12800 (the first pass trivial: argsort's index made later),
 * KIND_EXPONENT a common high part (floats in [1, 2) with 8 mantissa bits: the exponent byte and the low
 * bytes trivial; integers 0x1234567890abcdef's high bytes + [0, 5000)); fill_rows' KIND_MIXED_ROWS:
 * rows of different kinds (their plans differ). */
enum { KIND_SMALL = 5, KIND_EQUAL, KIND_LOW_ZERO, KIND_EXPONENT, KIND_MIXED_ROWS };
static void fill_keys(LoomDType t, void *p, int64_t count, int kind) {
  int es = esize(t);
  uint64_t same = tc_rand_u64(&rng);
  for (int64_t i = 0; i < count; i++) {
    uint64_t r = tc_rand_u64(&rng), v;
    if (kind == KIND_EQUAL) v = t == LOOM_BOOL ? same & 1 : same;
    else if (t == LOOM_BOOL) v = r & 1;
    else if (kind == KIND_SMALL) v = r % 1000;
    else if (kind == KIND_LOW_ZERO) v = (r % 50) << 8;
    else if (kind == KIND_EXPONENT && is_floating(t)) {
      uint64_t k = r % 256; /* 1 + k / 256 */
      v = t == LOOM_FLOAT16 ? 0x3c00u | (k >> 6) << 8 : t == LOOM_BFLOAT16 ? 0x3f80u | (k >> 1)
          : t == LOOM_FLOAT32 ? 0x3f800000u | k << 15 : 0x3ff0000000000000ull | k << 44;
    } else if (kind == KIND_EXPONENT) v = (0x1234567890abcdefull & ~0xffffull) + r % 5000;
    else if (kind == 1) v = (r % 7) * 0x0101010101010101ull;
    else if (kind == 2 && is_floating(t) && r % 3 == 0) v = special_float(t, r >> 8);
    else if (kind == 3 || kind == 4) v = (uint64_t)(kind == 3 ? i / 3 : count - i / 3);
    else v = r;
    if (is_floating(t) && (kind == 3 || kind == 4)) { /* ordered floats: small integers */
      double f = (double)(int64_t)v - (double)count / 6;
      v = t == LOOM_FLOAT16 ? tc_double_to_f16(f / 8) : t == LOOM_BFLOAT16 ? tc_double_to_bf16(f) : 0;
      if (t == LOOM_FLOAT32) { float x = (float)f; uint32_t u; memcpy(&u, &x, 4); v = u; }
      if (t == LOOM_FLOAT64) memcpy(&v, &f, 8);
    }
    memcpy((char *)p + i * es, &v, (size_t)es);
  }
}

/* rows x n keys of `kind`; KIND_MIXED_ROWS: row r of kind {small, equal, random, low zero, few, exponent}[r % 6] */
static void fill_rows(LoomDType t, void *p, int64_t rows, int64_t n, int kind) {
  static const int mixed[6] = {KIND_SMALL, KIND_EQUAL, 0, KIND_LOW_ZERO, 1, KIND_EXPONENT};
  if (kind != KIND_MIXED_ROWS) {
    fill_keys(t, p, rows * n, kind);
    return;
  }
  for (int64_t r = 0; r < rows; r++) fill_keys(t, (char *)p + r * n * esize(t), n, mixed[r % 6]);
}

#include "tests/c/radix_emulate.h"

/* ---- compile checks (no GPU) ------------------------------------------------------------------------------ */
static const char *ptxas_path(void) {
  static char buf[512];
  const char *home = getenv("CUDA_HOME");
  snprintf(buf, sizeof buf, "%s/bin/ptxas", home && *home ? home : "/usr/local/cuda");
  return access(buf, X_OK) == 0 ? buf : NULL;
}

static void check_entries(const char *what, const CgRadixSpec *spec, const CgRawEntry *es, int32_t n, bool take) {
  /* the planned sweep (cg_radix_skips: trivial passes skipped) adds the plan and copy kernels and three
   * buffers to the pass kernel's parameters */
  static const char *const names[5] = {"loom_radix_zero", "loom_radix_histogram", "loom_radix_pass", "loom_radix_plan",
                                       "loom_radix_copy"};
  bool planned = cg_radix_skips(spec);
  int nparams[5] = {2, 6, planned ? 14 : 11, 4, 10}, npointers[5] = {1, 2, planned ? 8 : 5, 1, 5}, want = planned ? 5 : 3;
  if (take) {
    CHECK(n == 6, "%s: %d entries, want 6 (zero, take1..16)", what, (int)n);
    for (int i = 0; i < n; i++)
      CHECK(!strcmp(es[i].name, "loom_radix_zero") || (strstr(es[i].name, "loom_radix_take") && es[i].nparams == 7),
            "%s: entry %s with %d parameters", what, es[i].name, (int)es[i].nparams);
    return;
  }
  if (spec->rows) {
    int items[CG_RADIX_ROW_VARIANTS], nv = cg_radix_row_items(spec, items);
    /* every key and value width has the row sorts of 1 .. 8 keys a thread at least (rows of <= 2048) */
    CHECK(nv >= 4 && items[0] == 1 && items[3] == 8, "%s: %d row sort variants", what, nv);
    CHECK(n == nv, "%s: %d entries, want %d row sorts", what, (int)n, nv);
    for (int i = 0; i < n && i < nv; i++) {
      char want[40];
      snprintf(want, sizeof want, "loom_radix_rows%d", items[i]);
      CHECK(!strcmp(es[i].name, want) && es[i].nparams == 7, "%s: entry %d is %s with %d parameters, want %s with 7",
            what, i, es[i].name, (int)es[i].nparams, want);
      for (int p = 0; p < 4; p++)
        CHECK(es[i].params[p].kind == CG_RAW_POINTER, "%s: %s parameter %d is not a pointer", what, es[i].name, p);
    }
    return;
  }
  CHECK(n == want, "%s: %d entries, want %d", what, (int)n, want);
  for (int i = 0; i < n && i < want; i++) {
    CHECK(!strcmp(es[i].name, names[i]), "%s: entry %d is %s, want %s", what, i, es[i].name, names[i]);
    CHECK(es[i].nparams == nparams[i], "%s: %s has %d parameters, want %d", what, es[i].name, (int)es[i].nparams, nparams[i]);
    for (int p = 0; p < es[i].nparams; p++)
      CHECK((es[i].params[p].kind == CG_RAW_POINTER) == (p < npointers[i]), "%s: %s parameter %d is%s a pointer", what,
            es[i].name, p, p < npointers[i] ? " not" : "");
  }
}

/* ptxas -v's figures of one kernel: registers, spill stores, static shared bytes (-1: not found). */
typedef struct PtxasFigures {
  int regs, spill, shared;
} PtxasFigures;

/* The figure before `tag` in line (a number followed by spaces then tag), or -1. */
static int number_before(const char *line, const char *tag) {
  const char *t = strstr(line, tag);
  if (!t) return -1;
  while (t > line && t[-1] == ' ') t--;
  const char *q = t;
  while (q > line && q[-1] >= '0' && q[-1] <= '9') q--;
  return q < t ? atoi(q) : -1;
}

/* Assembles ptx with ptxas -arch=sm_90 -v; figures of loom_radix_pass and the largest row sort
 * (rows_name) into pass / rows. False when ptxas rejects it. */
static bool run_ptxas(const char *px, const char *ptx, const char *rows_name, PtxasFigures *pass, PtxasFigures *rows) {
  *pass = *rows = (PtxasFigures){-1, -1, -1};
  char path[] = "/tmp/loom_sort_ptx_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return true;
  size_t len = strlen(ptx);
  bool wrote = write(fd, ptx, len) == (ssize_t)len;
  close(fd);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 -v -o /dev/null '%s' 2>&1", px, path);
  FILE *pp = wrote ? popen(cmd, "r") : NULL;
  char line[512];
  PtxasFigures *cur = NULL;
  while (pp && fgets(line, sizeof line, pp)) { /* "Compiling entry function 'x'", then its figures */
    if (strstr(line, "entry function")) {
      char q[64];
      snprintf(q, sizeof q, "'%s'", rows_name);
      cur = strstr(line, "'loom_radix_pass'") ? pass : strstr(line, q) ? rows : NULL;
    }
    if (!cur) continue;
    const char *u = strstr(line, "Used ");
    if (u) cur->regs = atoi(u + 5);
    int sp = number_before(line, "bytes spill stores"), sm = number_before(line, "bytes smem");
    if (sp >= 0) cur->spill = sp;
    if (sm >= 0) cur->shared = sm;
  }
  bool ok = pp && pclose(pp) == 0;
  unlink(path);
  return ok;
}

static bool ballot_rank, peers_first, smem_rank, atomic_rank; /* the next nvptx_case_tuned's CgRadixSpec fields */
static bool all_passes; /* the next nvptx_case_tuned / amd_case: every pass runs (LOOM_GPU_RADIX_SKIP=0) */

/* The module of spec compiled to PTX for sm_90 (NULL on failure, reported); entries checked. */
static char *nvptx_module(const char *what, const CgRadixSpec *spec) {
  void *bc = NULL;
  size_t size = 0;
  Diag d = {.status = LOOM_OK};
  if (!CHECK(cg_radix_module(tc_ctx, spec, &bc, &size, &d) == LOOM_OK, "%s: generator: %s", what, d.msg)) return NULL;
  char *ptx = NULL;
  CgRawEntry *es = NULL;
  int32_t n = 0;
  LoomStatus st = cg_nvptx_compile_llvm(tc_ctx, bc, size, true, 90, &ptx, &es, &n, &d);
  ctx_free(tc_ctx, bc);
  if (CHECK(st == LOOM_OK, "%s: compile: %s", what, d.msg)) check_entries(what, spec, es, n, spec->take);
  cg_raw_entries_free(tc_ctx, es, n);
  return st == LOOM_OK ? ptx : NULL;
}

static void nvptx_case_tuned(LoomDType key, int vb, bool take, bool legacy, int items, int bps, bool report) {
  char what[128];
  snprintf(what, sizeof what, "nvptx %s keys, %d-byte values%s%s items %d blocks/SM %d", loom_dtype_name(key), vb,
           take ? " (take)" : "", legacy ? " (legacy pass)" : "", items, bps);
  CgRadixSpec spec = {.key = key, .value_bytes = vb, .wave = 32, .amdgpu = false, .take = take, .legacy = legacy,
                      .items = items, .blocks_per_sm = bps, .ballot_rank = ballot_rank,
                      .peers_first = peers_first, .smem_rank = smem_rank, .atomic_rank = atomic_rank,
                      .all_passes = all_passes};
  if (all_passes) strncat(what, " (every pass)", sizeof what - strlen(what) - 1);
  char *ptx = nvptx_module(what, &spec), *rows_ptx = NULL;
  if (ptx) {
    const char *must_sort[] = {ballot_rank ? "vote.sync.ballot.b32" : "match.any.sync.b32",
                               smem_rank || atomic_rank ? "shfl.sync.idx" : "bar.warp.sync", "bar.sync", "atom.shared.add", "atom.global.add",
                               "ld.relaxed.sys.global", "st.relaxed.sys.global"};
    const char *must_take[] = {"ld.global", "st.global"};
    const char *const *must = take ? must_take : must_sort;
    int nm = take ? 2 : 7;
    for (int i = 0; i < nm; i++)
      if (!strstr(ptx, must[i])) { /* LLVM spells a relaxed access ld.volatile on older PTX */
        bool alt = strstr(must[i], "relaxed") && strstr(ptx, must[i][0] == 'l' ? "ld.volatile.global" : "st.volatile.global");
        CHECK(alt, "%s: the PTX has no %s", what, must[i]);
      }
    if (cg_radix_skips(&spec)) /* the plan's summaries over rows */
      CHECK(strstr(ptx, "atom.global.or") != NULL, "%s: the PTX has no atom.global.or (loom_radix_plan)", what);
    CgRadixSpec rs = {.key = key, .value_bytes = vb, .wave = 32, .rows = true, .ballot_rank = ballot_rank,
                      .all_passes = all_passes};
    char rwhat[160];
    snprintf(rwhat, sizeof rwhat, "%s (row sorts)", what);
    rows_ptx = take ? NULL : nvptx_module(rwhat, &rs);
    if (rows_ptx) { /* the row sorts: the wave ranking, barriers, shared atomics */
      const char *must_rows[] = {ballot_rank ? "vote.sync.ballot.b32" : "match.any.sync.b32", "bar.warp.sync",
                                 "bar.sync", "st.shared", "ld.global", "st.global"};
      for (int i = 0; i < 6; i++) CHECK(strstr(rows_ptx, must_rows[i]) != NULL, "%s: the PTX has no %s", rwhat, must_rows[i]);
    }
    const char *dump = getenv("LOOM_TEST_PTX_DIR"); /* keep the PTX (ptxas -v: registers, spills, shared) */
    if (dump && *dump) {
      for (int r = 0; r < 2; r++) {
        if (r && !rows_ptx) continue;
        char out[600];
        snprintf(out, sizeof out, "%s/radix_%s_v%d%s%s%s%s%s%s%s_i%d_b%d.ptx", dump, loom_dtype_name(key), vb,
                 take ? "_take" : "", r ? "_rows" : "", legacy ? "_legacy" : "", ballot_rank ? "_ballot" : "",
                 peers_first ? "_early" : "", smem_rank ? "_smem" : "", all_passes ? "_all" : "", items, bps);
        FILE *f = fopen(out, "w");
        if (CHECK(f != NULL, "%s: cannot write %s", what, out)) {
          fputs(r ? rows_ptx : ptx, f);
          fclose(f);
        }
      }
    }
    const char *px = ptxas_path();
    if (px) {
      int ri[CG_RADIX_ROW_VARIANTS], nv = take ? 0 : cg_radix_row_items(&spec, ri);
      char rows_name[40];
      snprintf(rows_name, sizeof rows_name, "loom_radix_rows%d", nv ? ri[nv - 1] : 0);
      PtxasFigures pf, rf, none;
      CHECK(run_ptxas(px, ptx, rows_name, &pf, &none), "%s: ptxas rejects the PTX", what);
      if (rows_ptx) CHECK(run_ptxas(px, rows_ptx, rows_name, &none, &rf), "%s: ptxas rejects the PTX", rwhat);
      CgRadixShape sh = cg_radix_shape(&spec);
      if (report && !take)
        printf("ptxas sm_90 | %-8s | v%d | %s%s%s%s%s | items %2d | tile %4d | bound %d/SM | pass: %3d regs, %4d B spilled, %5d B "
               "smem | %s: %3d regs, %4d B spilled, %5d B smem\n",
               loom_dtype_name(key), vb, legacy ? "legacy" : "sweep ", all_passes ? " every-pass" : "", ballot_rank ? " ballots" : "", peers_first ? " early" : "", smem_rank ? " smem" : "", sh.items, sh.tile, sh.blocks_per_sm, pf.regs,
               pf.spill, pf.shared, rows_name, rf.regs, rf.spill, rf.shared);
      /* the single-sweep pass at its default shape is built for its blocks a multiprocessor (4, 3 for 8-byte
       * keys): at most the registers that leaves a thread (64, 80: 64K registers, allocated by 8), a few
       * words spilled */
      int reg_cap = 65536 / (sh.block * sh.blocks_per_sm) / 8 * 8;
      if (!take && !legacy && !items && !bps && !ballot_rank)
        CHECK(pf.regs > 0 && pf.regs <= reg_cap && pf.spill >= 0 && pf.spill <= 32,
              "%s: loom_radix_pass uses %d registers, %d bytes spilled (want <= %d, <= 32)", what, pf.regs, pf.spill, reg_cap);
      /* the row sorts have no launch bound: they must not spill (a spilled key costs a local round trip a pass) */
      if (rows_ptx) CHECK(rf.regs > 0 && rf.spill == 0, "%s: %s uses %d registers, %d bytes spilled (want no spills)", rwhat,
                          rows_name, rf.regs, rf.spill);
    }
  }
  ctx_free(tc_ctx, rows_ptx);
  ctx_free(tc_ctx, ptx);
}

static void nvptx_case(LoomDType key, int vb, bool take, bool legacy) {
  nvptx_case_tuned(key, vb, take, legacy, 0, 0, false);
}

static bool amd_rows; /* the next amd_case builds the row sort module (CgRadixSpec.rows) */
static bool amd_smem; /* the next amd_case ranks by gpu_radix_rank.c (CgRadixSpec.smem_rank) */

static bool amd_case(LoomDType key, int vb, bool take, const char *chip) {
  char what[96];
  snprintf(what, sizeof what, "amdgpu %s %s keys, %d-byte values%s%s%s", chip, loom_dtype_name(key), vb,
           take ? " (take)" : "", amd_rows ? " (row sorts)" : "", amd_smem ? " (smem rank)" : "");
  CgRadixSpec spec = {.key = key, .value_bytes = vb, .wave = 64, .amdgpu = true, .take = take, .rows = amd_rows,
                      .smem_rank = amd_smem, .all_passes = all_passes};
  void *bc = NULL;
  size_t size = 0;
  Diag d = {.status = LOOM_OK};
  if (!CHECK(cg_radix_module(tc_ctx, &spec, &bc, &size, &d) == LOOM_OK, "%s: generator: %s", what, d.msg)) return true;
  char *co = NULL;
  size_t co_size = 0;
  CgRawEntry *es = NULL;
  int32_t n = 0;
  LoomStatus st = cg_amdgpu_compile_llvm(tc_ctx, bc, size, true, chip, &co, &co_size, &es, &n, &d);
  ctx_free(tc_ctx, bc);
  if (st == LOOM_ERR_UNSUPPORTED) {
    printf("test_gpu_sort --ptx: AMDGPU skipped (%s)\n", d.msg);
    return false;
  }
  if (CHECK(st == LOOM_OK, "%s: compile: %s", what, d.msg)) {
    check_entries(what, &spec, es, n, take);
    CHECK(co_size > 1000 && !memcmp(co, "\177ELF", 4), "%s: no ELF code object", what);
  }
  cg_raw_entries_free(tc_ctx, es, n);
  ctx_free(tc_ctx, co);
  return true;
}

static void compile_cases(void) {
  for (int i = 0; i < NKEY_TYPES; i++)
    for (int vb = 0; vb <= 8; vb += 4) nvptx_case(key_types[i], vb, false, false);
  nvptx_case(LOOM_UINT8, 0, true, false);
  nvptx_case(LOOM_FLOAT32, 0, false, true);
  nvptx_case(LOOM_FLOAT32, 4, false, true);
  nvptx_case(LOOM_FLOAT64, 8, false, true);
  nvptx_case(LOOM_UINT8, 0, false, true);
  /* tuned shapes (LOOM_GPU_RADIX_*: what bench/sort_sweep.py times) compile and assemble too */
  nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 24, 3, false);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 8, 8, false);
  nvptx_case_tuned(LOOM_FLOAT64, 0, false, false, 12, 2, false);
  nvptx_case_tuned(LOOM_INT32, 0, false, false, 32, 1, false); /* the largest tile */
  ballot_rank = true;
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_INT16, 0, false, false, 0, 0, false);
  ballot_rank = false;
  peers_first = true;
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 3, false);
  nvptx_case_tuned(LOOM_FLOAT64, 0, false, false, 0, 0, false);
  peers_first = false;
  smem_rank = true; /* LOOM_GPU_RADIX_RANK=smem (gpu_radix_rank.c): with ballots and with match.any */
  ballot_rank = true;
  nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_FLOAT64, 8, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_INT16, 0, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_UINT8, 0, false, false, 7, 0, false); /* a tile of items not a multiple of 4 */
  ballot_rank = false;
  nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, 0, false);
  smem_rank = false;
  atomic_rank = ballot_rank = true; /* LOOM_GPU_RADIX_RANK=atomic: the counters taken by returning atomics */
  nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, 0, false);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 0, false);
  atomic_rank = ballot_rank = false;
  all_passes = true; /* LOOM_GPU_RADIX_SKIP=0: the sweep without the plan (A/B) */
  nvptx_case(LOOM_FLOAT32, 0, false, false);
  nvptx_case(LOOM_INT32, 4, false, false);
  nvptx_case(LOOM_FLOAT64, 8, false, false);
  all_passes = false;
  const char *chips[2] = {"gfx942", "gfx1100"};
  for (int c = 0; c < 2; c++) {
    if (!amd_case(LOOM_FLOAT32, 8, false, chips[c])) break;
    amd_case(LOOM_UINT8, 0, false, chips[c]);
    amd_case(LOOM_FLOAT64, 4, false, chips[c]);
    amd_case(LOOM_INT16, 0, false, chips[c]);
    amd_case(LOOM_UINT8, 0, true, chips[c]);
    amd_rows = true;
    amd_case(LOOM_FLOAT32, 4, false, chips[c]);
    amd_case(LOOM_INT8, 0, false, chips[c]);
    amd_rows = false;
    amd_smem = true;
    amd_case(LOOM_FLOAT32, 8, false, chips[c]);
    amd_case(LOOM_INT16, 0, false, chips[c]);
    amd_smem = false;
    amd_case(LOOM_INT64, 4, false, chips[c]); /* argsort's widened index through the planned buffers */
    all_passes = true;
    amd_case(LOOM_FLOAT32, 4, false, chips[c]);
    all_passes = false;
  }
  /* bad specs: clear errors */
  CgRadixSpec bad = {.key = LOOM_COMPLEX64, .wave = 32};
  void *bc = NULL;
  size_t size = 0;
  Diag d = {.status = LOOM_OK};
  CHECK(cg_radix_module(tc_ctx, &bad, &bc, &size, &d) == LOOM_ERR_DTYPE && strstr(d.msg, "complex64"),
        "complex keys: %s", d.msg);
  /* the C API's checks that need no GPU */
  LoomArray h = tc_new1(LOOM_FLOAT32, 10), sk, sv;
  CHECK_STATUS(loom_sort(tc_ctx, &h, NULL, 0, &sk, NULL), LOOM_ERR_UNSUPPORTED);
  CHECK(strstr(loom_last_error(tc_ctx), "host array") != NULL, "host keys: %s", loom_last_error(tc_ctx));
  CHECK_STATUS(loom_sort(tc_ctx, NULL, NULL, 0, &sk, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_sort(tc_ctx, &h, NULL, 8, &sk, &sv), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_sort(NULL, &h, NULL, 0, &sk, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_take_rows(tc_ctx, &h, &h, &sk), LOOM_ERR_UNSUPPORTED);
  tc_free(&h);
  if (!ptxas_path()) printf("test_gpu_sort --ptx: no ptxas found (CUDA_HOME, /usr/local/cuda): PTX not assembled\n");
}

/* `test_gpu_sort --ptxas-report`: ptxas -v's registers, spills and shared memory of the pass kernel for a
 * grid of tuned shapes (keys per thread x launch bound) and of the largest row sort, per key and value
 * width: the occupancy half of the roofline in gpu_radix.c's header. */
static void ptxas_report_designs(void);
static void ptxas_report_plan(void);
static void ptxas_report(bool ranks_only, bool plan_only) {
  if (!ptxas_path()) {
    printf("test_gpu_sort --ptxas-report: no ptxas (CUDA_HOME, /usr/local/cuda)\n");
    return;
  }
  static const struct { LoomDType key; int vb; } cases[] = {{LOOM_FLOAT32, 0}, {LOOM_FLOAT32, 4}, {LOOM_FLOAT64, 0},
                                                            {LOOM_FLOAT64, 4}, {LOOM_UINT8, 0}};
  static const int items[] = {0, 8, 12, 16, 20, 24, 32};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0] && !ranks_only && !plan_only; c++)
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
      for (int bps = 2; bps <= 4; bps++) nvptx_case_tuned(cases[c].key, cases[c].vb, false, false, items[i], bps, true);
  if (!plan_only) ptxas_report_designs();
  ptxas_report_plan();
}

/* --ptxas-report's rank designs (all but --ptxas-report plan) */
static void ptxas_report_designs(void) {
  nvptx_case_tuned(LOOM_FLOAT32, 0, false, true, 0, 0, true);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, true, 0, 0, true);
  ballot_rank = true;
  for (int bps = 2; bps <= 4; bps++) nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, bps, true);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 0, true);
  nvptx_case_tuned(LOOM_FLOAT64, 0, false, false, 0, 0, true);
  ballot_rank = false;
  peers_first = true;
  static const int early_items[] = {8, 12, 16};
  for (int i = 0; i < 3; i++)
    for (int bps = 2; bps <= 4; bps++) nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, early_items[i], bps, true);
  for (int bps = 2; bps <= 4; bps++) nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, bps, true);
  nvptx_case_tuned(LOOM_FLOAT64, 0, false, false, 0, 3, true);
  peers_first = false;
  /* the runtime's default for keys alone (ballots, peers first) and the shared-memory ranking */
  ballot_rank = peers_first = true;
  for (int bps = 3; bps <= 4; bps++) nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, bps, true);
  nvptx_case_tuned(LOOM_INT32, 0, false, false, 0, 0, true);
  peers_first = false;
  smem_rank = true;
  for (int bps = 3; bps <= 4; bps++) nvptx_case_tuned(LOOM_FLOAT32, 0, false, false, 0, bps, true);
  nvptx_case_tuned(LOOM_INT32, 0, false, false, 0, 0, true);
  nvptx_case_tuned(LOOM_FLOAT32, 4, false, false, 0, 0, true);
  nvptx_case_tuned(LOOM_FLOAT64, 0, false, false, 0, 0, true);
  smem_rank = ballot_rank = false;
}

static void ptxas_report_plan(void) {
  /* the runtime's defaults with and without the trivial-pass plan (gpu_radix_plan.c; LOOM_GPU_RADIX_SKIP=0) */
  static const struct { LoomDType key; int vb; } planned[] = {{LOOM_INT32, 0}, {LOOM_FLOAT32, 0}, {LOOM_FLOAT32, 4},
                                                              {LOOM_INT32, 4}, {LOOM_FLOAT64, 0}, {LOOM_FLOAT64, 4},
                                                              {LOOM_INT64, 8}, {LOOM_UINT8, 0}, {LOOM_INT16, 4}};
  ballot_rank = true;
  for (size_t c = 0; c < sizeof planned / sizeof planned[0]; c++)
    for (int a = 1; a >= 0; a--) {
      all_passes = a;
      peers_first = planned[c].vb == 0 && esize(planned[c].key) == 8; /* as cg_radix_tuning */
      nvptx_case_tuned(planned[c].key, planned[c].vb, false, false, 0, 0, true);
    }
  all_passes = peers_first = ballot_rank = false;
}

/* `test_gpu_sort --dump-ptx DIR`: the PTX (sm_90) of the histogram and pass module for float32, int32 and
 * float64 keys alone and float32 with 4-byte values, with the tuning the runtime would take from the
 * environment (cg_radix_tuning: LOOM_GPU_RADIX_*), as DIR/radix_<key>_v<value bytes>.ptx: for ptxas -v
 * and instruction counts (nvdisasm of ptxas's cubin) of the runtime's own spec. */
static void dump_ptx(const char *dir) {
  static const struct { LoomDType key; int vb; } cases[] = {{LOOM_FLOAT32, 0}, {LOOM_INT32, 0}, {LOOM_FLOAT64, 0},
                                                            {LOOM_FLOAT32, 4}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    CgRadixSpec spec = {.key = cases[c].key, .value_bytes = cases[c].vb, .wave = 32};
    cg_radix_tuning(&spec);
    char what[64], out[600];
    snprintf(what, sizeof what, "dump %s v%d", loom_dtype_name(spec.key), spec.value_bytes);
    char *ptx = nvptx_module(what, &spec);
    if (!ptx) continue;
    snprintf(out, sizeof out, "%s/radix_%s_v%d.ptx", dir, loom_dtype_name(spec.key), spec.value_bytes);
    FILE *f = fopen(out, "w");
    if (CHECK(f != NULL, "%s: cannot write %s", what, out)) {
      fputs(ptx, f);
      fclose(f);
    }
    ctx_free(tc_ctx, ptx);
  }
}

#include "tests/c/gpu_sort_device.h"

int main(int argc, char **argv) {
  bool ptx = argc == 2 && !strcmp(argv[1], "--ptx"), emulate = argc == 2 && !strcmp(argv[1], "--emulate");
  if (!tc_init()) return 1;
  if (ptx) {
    compile_cases();
    return tc_finish();
  }
  if (emulate) {
    emulate_cases();
    return tc_finish();
  }
  if (argc == 3 && !strcmp(argv[1], "--dump-ptx")) {
    dump_ptx(argv[2]);
    return tc_finish();
  }
  if (argc >= 2 && !strcmp(argv[1], "--ptxas-report")) { /* ranks: the rank variants only; plan: the planned pass */
    ptxas_report(argc == 3 && !strcmp(argv[2], "ranks"), argc == 3 && !strcmp(argv[2], "plan"));
    return tc_finish();
  }
  return device_main();
}
