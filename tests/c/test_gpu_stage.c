/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_stage.c: staged short rows (codegen/gpu_stage.c, codegen.h: CG_GPU_STAGE), no GPU needed.
 *  - The launch policy (compiler-free, a recording launcher): which rows run staged, with which block; the
 *    elementwise scalar entry's grid.
 *  - The lowering on the emulated GPU (gpu_emulate.h): L1-normalized and softmax rows against a long
 *    double loop, the same bits as the unstaged thread-per-row mode, nothing written outside the rows.
 *    The emulator runs one thread at a time and its barriers do nothing, so a block of B threads is run
 *    thread after thread three times over (shared memory persists between runs): after the first round
 *    the loaded tiles are whole, after the second every row's results are in the stored tiles, and the
 *    third copies them out; each block takes one tile (the grid covers the rows: tiles of B * (16 / C)
 *    rows, a thread's rows tid, tid + B, ...). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_launch_policy.h"
#include "tests/c/gpu_emulate.h"

/* ---- the launch policy ------------------------------------------------------------------------------- */
typedef struct Rec {
  int entry, calls;
  uint32_t grid, block;
  uint64_t word2;
  int nd, nb;
} Rec;

static uint32_t rec_loaded(void *u) { (void)u; return CG_ENTRY_ALL; }
static LoomStatus rec_need(void *u, uint32_t mask, Diag *d) { (void)u, (void)mask, (void)d; return LOOM_OK; }
static int g_lim = 1024; /* the most threads an entry launches with (its registers' cap) */
static int rec_limit(void *u, int what, int entry) { (void)u, (void)what, (void)entry; return g_lim; }
static LoomStatus rec_launch(void *u, int entry, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  (void)d;
  Rec *r = u;
  r->entry = entry, r->grid = grid, r->block = block, r->calls++;
  r->word2 = words[r->nd + r->nb + r->nb * r->nd + 2];
  return LOOM_OK;
}
static LoomStatus rec_settle(void *u, Diag *d) { (void)u, (void)d; return LOOM_OK; }

static uint64_t g_skew; /* bytes buffer 0's base lies past a 4096-byte boundary */
enum { P_CACHED = 4 }; /* gpu_launch_policy.c's entry index of `cached` (gpu_rt.h: E_CACHED) */

/* One launch of a 2-phase ROW kernel (a reduction, then a map) over shape[0..nd) (the last dim reduced)
 * with the buffers' layouts and strides; returns what the policy launched. */
static Rec policy(int nd, const int64_t *shape, int nb, const char *const *lay, const uint8_t *dt,
                  const int64_t *strides) {
  KBuffer bufs[4];
  memset(bufs, 0, sizeof bufs);
  for (int b = 0; b < nb; b++) {
    bufs[b].dtype = dt[b];
    for (int d = 0; d < nd; d++) bufs[b].layout[d] = lay[b][d] == '1' ? KL_ONE : lay[b][d] == '0' ? KL_ZERO : KL_ANY;
  }
  Rec r = {.entry = -1, .nd = nd, .nb = nb};
  RtGpuLauncher L = {.ndim = nd, .nkeep = nd - 1, .nbuf = nb, .bufs = bufs, .split_reduce = 1, .split_map = 2,
                     .strategy = CG_GPU_ROW, .block = 256, .acc_size = 8, .cache_k = 16,
                     .entries = CG_ENTRY_MAIN | CG_ENTRY_CACHED | CG_ENTRY_PART | CG_ENTRY_FINISH, .wave = 32,
                     .user = &r, .loaded = rec_loaded, .need = rec_need, .limit = rec_limit, .launch = rec_launch,
                     .settle = rec_settle};
  uint64_t words[64] = {0};
  int64_t no = 1;
  for (int d = 0; d < nd; d++) words[d] = (uint64_t)shape[d];
  for (int d = 0; d + 1 < nd; d++) no *= shape[d];
  for (int b = 0; b < nb; b++) words[nd + b] = 4096u * (uint64_t)(b + 1) + (b == 0 ? g_skew : 0);
  for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
  Diag d = {0};
  LoomStatus st = rt_gpu_launch_policy(&L, words, no, shape[nd - 1], &d);
  CHECK(st == LOOM_OK && r.calls == 1, "one launch (%d, %s)", r.calls, d.msg);
  return r;
}

/* The elementwise scalar entry's grid (gpu_launch_policy.c, the same recording launcher): 16 points a
 * thread, uncapped (the tiled form then gets about a block a tile); near 2^31 points the grid capped at
 * the resident blocks, so that a 32-bit index i + step (threads x 4 points read ahead) cannot wrap. */
static void test_elem_grid(void) {
  const char *knob = getenv("LOOM_GPU_ELEM_MAIN_POINTS");
  if (knob && *knob) return; /* (the launcher reads the knob) */
  KBuffer bufs[2];
  memset(bufs, 0, sizeof bufs);
  for (int b = 0; b < 2; b++) bufs[b].dtype = LOOM_FLOAT32, bufs[b].layout[0] = KL_ANY, bufs[b].layout[1] = KL_ONE;
  const int64_t ns[3] = {1000003, 155624567, (int64_t)INT32_MAX - (1 << 24) - 1};
  for (int i = 0; i < 3; i++) {
    Rec r = {.entry = -1, .nd = 2, .nb = 2};
    RtGpuLauncher L = {.ndim = 2, .nkeep = 2, .nbuf = 2, .bufs = bufs, .strategy = CG_GPU_ELEMENTWISE, .block = 64,
                       .entries = CG_ENTRY_MAIN, .wave = 32, .user = &r, .loaded = rec_loaded, .need = rec_need,
                       .limit = rec_limit, .launch = rec_launch, .settle = rec_settle};
    uint64_t words[64] = {0};
    words[0] = (uint64_t)(ns[i] / 7), words[1] = 7; /* rows of 7 floats: odd, so no vector entry either way */
    words[2] = 4096, words[3] = 8192;
    words[4] = 9, words[5] = 1, words[6] = 7, words[7] = 1;
    int64_t n = ns[i] / 7 * 7;
    g_lim = 64;
    Diag d = {0};
    LoomStatus st = rt_gpu_launch_policy(&L, words, n, 1, &d);
    g_lim = 1024;
    int64_t want = i < 2 ? (n + 64 * 16 - 1) / (64 * 16) : 64; /* the last: the capped grid (the limit, 64) */
    CHECK(st == LOOM_OK && r.calls == 1 && r.entry == 0 && r.block == 64 && r.grid == (uint32_t)want,
          "elementwise %lld points: entry %d, block %u, grid %u (want %lld)", (long long)n, r.entry, r.block, r.grid,
          (long long)want);
  }
}

/* A vector launch of 2^38 uint8 points (a 256 GiB array): the uncapped grid would exceed the 2^32 - 1
 * work-items HIP launches (grid x block); the capped grid-stride launch instead. */
static void test_elem_grid_items(void) {
  if (getenv("LOOM_GPU_ELEM_PER_THREAD")) return; /* (the launcher reads the knob) */
  KBuffer bufs[2];
  memset(bufs, 0, sizeof bufs);
  for (int b = 0; b < 2; b++) bufs[b].dtype = LOOM_UINT8, bufs[b].layout[0] = KL_ONE;
  const int64_t ns[2] = {(int64_t)1 << 32, (int64_t)1 << 38};
  for (int i = 0; i < 2; i++) {
    Rec r = {.entry = -1, .nd = 1, .nb = 2};
    RtGpuLauncher L = {.ndim = 1, .nkeep = 1, .nbuf = 2, .bufs = bufs, .strategy = CG_GPU_ELEMENTWISE, .block = 256,
                       .entries = CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW, .vec_lanes = 16, .vec_align = 16,
                       .wave = 64, .vecw_when_vec_loaded = true, .user = &r, .loaded = rec_loaded, .need = rec_need,
                       .limit = rec_limit, .launch = rec_launch, .settle = rec_settle};
    uint64_t words[64] = {0};
    words[0] = (uint64_t)ns[i], words[1] = 4096, words[2] = 8192, words[3] = 1, words[4] = 1;
    g_lim = 256;
    Diag d = {0};
    LoomStatus st = rt_gpu_launch_policy(&L, words, ns[i], 1, &d);
    g_lim = 1024;
    uint64_t items = (uint64_t)r.grid * r.block;
    CHECK(st == LOOM_OK && r.calls == 1 && items <= UINT32_MAX && (i == 1 ? r.grid == 256 : r.grid > 256),
          "%lld uint8 points: grid %u x block %u (%llu work-items; want the uncapped grid below 2^32, else the capped)",
          (long long)ns[i], r.grid, r.block, (unsigned long long)items);
  }
}

static void test_policy(void) {
  const char *lay2[2] = {"a1", "a1"};
  uint8_t f32[3] = {LOOM_FLOAT32, LOOM_FLOAT32, LOOM_FLOAT32};
  /* rows of 7 one after another: the thread-per-row mode, staged, blocks of CG_STAGE_BLOCK, tiles of
   * CG_STAGE_BLOCK * (16 / 7) rows */
  Rec r = policy(2, (int64_t[]){1000, 7}, 2, lay2, f32, (int64_t[]){7, 1, 7, 1});
  CHECK(r.entry == P_CACHED && r.word2 == (1 | CG_GPU_STAGE) && r.block == CG_STAGE_BLOCK &&
            r.grid == (1000 + 2 * CG_STAGE_BLOCK - 1) / (2 * CG_STAGE_BLOCK),
        "rows of 7: staged (entry %d, word 2 %#llx, block %u, grid %u)", r.entry, (unsigned long long)r.word2,
        r.block, r.grid);
  /* rows of 7 with a pitch of 10 (a slice): not staged, the usual block */
  r = policy(2, (int64_t[]){1000, 7}, 2, lay2, f32, (int64_t[]){10, 1, 7, 1});
  CHECK(r.entry == P_CACHED && r.word2 == 1 && r.block == 256, "a pitch of 10: unstaged (word 2 %#llx, block %u)",
        (unsigned long long)r.word2, r.block);
  /* three O dims of C order, one of them of one point with any stride, and a weight constant along O
   * (not staged, so not checked) */
  const char *lay3[3] = {"aa1", "aa1", "001"};
  r = policy(3, (int64_t[]){1, 40, 5}, 3, lay3, f32, (int64_t[]){12345, 5, 1, 200, 5, 1, 0, 0, 1});
  CHECK(r.entry == P_CACHED && r.word2 == (1 | CG_GPU_STAGE), "3-d rows of 5 with a broadcast weight: staged (%#llx)",
        (unsigned long long)r.word2);
  /* transposed O dims (rows not in order): unstaged */
  r = policy(3, (int64_t[]){3, 4, 5}, 2, lay3, f32, (int64_t[]){5, 15, 1, 20, 5, 1});
  CHECK(r.word2 == 1, "O dims out of order: unstaged (%#llx)", (unsigned long long)r.word2);
  /* a base off a 16-byte boundary: unstaged */
  g_skew = 4;
  r = policy(2, (int64_t[]){1000, 7}, 2, lay2, f32, (int64_t[]){7, 1, 7, 1});
  g_skew = 0;
  CHECK(r.word2 == 1, "a base 4 bytes past 16: unstaged (%#llx)", (unsigned long long)r.word2);
  /* rows of one point: unstaged; rows of 20 (two lanes a row): unstaged */
  r = policy(2, (int64_t[]){1000, 1}, 2, lay2, f32, (int64_t[]){1, 1, 1, 1});
  CHECK(r.word2 == 1, "rows of one point: unstaged (%#llx)", (unsigned long long)r.word2);
  r = policy(2, (int64_t[]){1000, 20}, 2, lay2, f32, (int64_t[]){20, 1, 20, 1});
  CHECK(r.word2 == 2, "rows of 20: two lanes a row, unstaged (%#llx)", (unsigned long long)r.word2);
  /* tiles over CG_STAGE_BYTES (three float64 buffers of 64 x 16 points: 24 KB): unstaged */
  uint8_t f64[3] = {LOOM_FLOAT64, LOOM_FLOAT64, LOOM_FLOAT64};
  const char *lay3b[3] = {"a1", "a1", "a1"};
  r = policy(2, (int64_t[]){1000, 7}, 3, lay3b, f64, (int64_t[]){7, 1, 7, 1, 7, 1});
  CHECK(r.word2 == 1, "24 KB of tiles: unstaged (%#llx)", (unsigned long long)r.word2);
  /* the short-row mode's block keeps the most threads resident under the entry's register cap: rows of 200
   * (16 lanes a row), at most 704 threads a block: blocks of 64 (11 resident: 704 threads; 256 would keep
   * 512); at most 1024: blocks of 256 (4 resident); at most 200: 192 or 96 (192 resident) */
  g_lim = 704;
  r = policy(2, (int64_t[]){1000, 200}, 2, lay2, f32, (int64_t[]){200, 1, 200, 1});
  CHECK(r.word2 == 16 && r.block == 64 && r.grid == 250, "lim 704: blocks of %u (g %llu, grid %u)", r.block,
        (unsigned long long)r.word2, r.grid);
  g_lim = 1024;
  r = policy(2, (int64_t[]){1000, 200}, 2, lay2, f32, (int64_t[]){200, 1, 200, 1});
  CHECK(r.word2 == 16 && r.block == 256, "lim 1024: blocks of %u", r.block);
  g_lim = 200;
  r = policy(2, (int64_t[]){1000, 200}, 2, lay2, f32, (int64_t[]){200, 1, 200, 1});
  CHECK(r.block == 96 || r.block == 192, "lim 200: blocks of %u (192 or 96 hold 192)", r.block);
  g_lim = 1024;
  /* rows that need a whole wave (500 > 32 * 16 / 2) of a multi-phase kernel: the block mode, a wave a row */
  r = policy(2, (int64_t[]){1000, 500}, 2, lay2, f32, (int64_t[]){500, 1, 500, 1});
  CHECK(r.entry == P_CACHED && r.word2 == 0 && r.block == 32 && r.grid == 1000, "rows of 500: block mode (g %llu, "
        "block %u, grid %u)", (unsigned long long)r.word2, r.block, r.grid);
  /* the shared rule itself */
  KBuffer b[2];
  memset(b, 0, sizeof b);
  b[0].layout[0] = KL_ANY, b[0].layout[1] = KL_ONE;
  b[1].layout[0] = KL_ZERO, b[1].layout[1] = KL_ONE;
  int sizes[2] = {4, 4};
  CHECK(cg_gpu_stage_mask(b, sizes, 2, 2, 1, 16) == 1, "the rule: the broadcast buffer is not staged");
  CHECK(cg_gpu_stage_mask(b, sizes, 2, 3, 1, 16) == 0, "the rule: two R dims, none");
  sizes[0] = 16;
  CHECK(cg_gpu_stage_mask(b, sizes, 2, 2, 1, 16) == 0, "the rule: 16-byte values, none");
}

/* ---- the lowering, emulated -------------------------------------------------------------------------- */
static double uniform(void) { return (double)rand() / ((double)RAND_MAX + 1.0); }

/* The entry over `grid` blocks of B threads, each block thread after thread, three rounds (above). */
static void launch_block_threads(Emu *e, EntryFn fn, int64_t grid, int B, uint64_t *words) {
  *e->ntid = B;
  *e->nbid = (int32_t)grid;
  for (int64_t g = 0; g < grid; g++) {
    *e->bid = (int32_t)g;
    for (int round = 0; round < 3; round++)
      for (int t = 0; t < B; t++) {
        *e->tid = t;
        fn(words);
      }
  }
}

enum { SENT = -999 };

static void test_lowering(bool softmax) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "a1");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  if (softmax) {
    kb_reduce(&kb, LOOM_REDUCE_MAX, LOOM_FLOAT32, x);
    int ex = kb_ins(&kb, KI_ELEM, LOOM_FLOAT32, LOOM_OP_EXP, kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT32, x, kb_acc(&kb, 0, LOOM_FLOAT32)), -1);
    kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, ex);
    kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, ex, kb_acc(&kb, 1, LOOM_FLOAT32)));
  } else {
    int ax = kb_ins(&kb, KI_ELEM, LOOM_FLOAT32, LOOM_OP_ABS, x, -1);
    kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, ax);
    kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, x, kb_acc(&kb, 0, LOOM_FLOAT32)));
  }
  Emu e;
  if (!emu_build(&e, &kb.k) || !e.cached) {
    CHECK(e.cached != NULL, "the cached entry exists");
    emu_free(&e);
    return;
  }
  CHECK(e.gk.cache_k == 16, "cache_k %d", e.gk.cache_k);
  static const int cols[] = {2, 3, 4, 5, 7, 8, 13, 16};
  static const int rows_of[] = {1, 5, 37, 128, 300};
  static const int blocks[] = {1, 4, 32, 128};
  int runs = 0;
  for (size_t ci = 0; ci < sizeof cols / sizeof *cols; ci++)
    for (size_t ri = 0; ri < sizeof rows_of / sizeof *rows_of; ri++)
      for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++) {
        int C = cols[ci], R = rows_of[ri], B = blocks[bi];
        enum { PAD = 4 }; /* (16-byte aligned rows: the launcher's condition) */
        size_t n = (size_t)R * (size_t)C;
        float *xs = malloc((n + PAD) * sizeof *xs), *o1 = malloc((n + 2 * PAD) * sizeof *o1);
        float *o2 = malloc((n + 2 * PAD) * sizeof *o2);
        for (size_t i = 0; i < n + PAD; i++) xs[i] = (float)(8.0 * uniform() - 4.0);
        if (n > 3) xs[3] = 0.0f, xs[n - 1] = -0.0f; /* zeros and a negative zero */
        float *outs[2] = {o1, o2};
        for (int stage = 0; stage < 2; stage++) {
          float *out = outs[stage];
          for (size_t i = 0; i < n + 2 * PAD; i++) out[i] = (float)SENT;
          uint64_t words[32] = {0};
          int nd = 2, nb = 2;
          words[0] = (uint64_t)R, words[1] = (uint64_t)C;
          words[nd] = (uint64_t)(uintptr_t)xs, words[nd + 1] = (uint64_t)(uintptr_t)(out + PAD);
          int64_t strides[4] = {C, 1, C, 1};
          for (int i = 0; i < 4; i++) words[nd + nb + i] = (uint64_t)strides[i];
          words[nd + nb + nb * nd + 2] = 1 | (stage ? CG_GPU_STAGE : 0);
          int64_t tile = (int64_t)B * (16 / C), grid = (R + tile - 1) / tile; /* a tile a block */
          if (stage) launch_block_threads(&e, e.cached, grid, B, words);
          else launch(&e, e.cached, R, words); /* a lane a row, one a block */
        }
        bool ok = true;
        for (int r = 0; r < R && ok; r++) {
          const float *xr = xs + (size_t)r * C;
          long double acc = 0, mx = -INFINITY;
          for (int c = 0; c < C; c++) mx = xr[c] > mx ? xr[c] : mx;
          for (int c = 0; c < C; c++) acc += softmax ? expl((long double)xr[c] - mx) : fabsl((long double)xr[c]);
          for (int c = 0; c < C && ok; c++) {
            long double want = softmax ? expl((long double)xr[c] - mx) / acc : xr[c] / acc;
            float got = o2[PAD + (size_t)r * C + c];
            ok = fabsl(got - want) <= 4e-6L * (1 + fabsl(want));
            if (!ok) printf("  C %d R %d B %d row %d col %d: %.9g want %.9Lg\n", C, R, B, r, c, got, want);
          }
        }
        ok = ok && memcmp(o1, o2, (n + 2 * PAD) * sizeof *o1) == 0; /* the same bits, nothing outside */
        for (int i = 0; i < PAD && ok; i++) ok = o2[i] == (float)SENT && o2[PAD + n + i] == (float)SENT;
        CHECK(ok, "%s rows of %d, %d rows, blocks of %d: staged as unstaged and as the reference",
              softmax ? "softmax" : "L1-normalized", C, R, B);
        runs++;
        free(xs), free(o1), free(o2);
      }
  CHECK(runs == 160, "cases run: %d", runs);
  emu_free(&e);
}

/* A kernel whose rows are not contiguous along R (layout "aa"): no staged path is compiled, and the flag
 * is ignored (the unstaged mode's results). */
static void test_flag_ignored(void) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "aa"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "aa");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, x);
  kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT32, x, kb_acc(&kb, 0, LOOM_FLOAT32)));
  Emu e;
  if (!emu_build(&e, &kb.k) || !e.cached) {
    CHECK(e.cached != NULL, "the cached entry exists");
    emu_free(&e);
    return;
  }
  enum { R = 9, C = 5 };
  float xs[R * C * 2], out[R * C];
  for (int i = 0; i < R * C * 2; i++) xs[i] = (float)(i % 7) - 3.0f;
  uint64_t words[32] = {0};
  words[0] = R, words[1] = C;
  words[2] = (uint64_t)(uintptr_t)xs, words[3] = (uint64_t)(uintptr_t)out;
  int64_t strides[4] = {2 * C, 2, C, 1}; /* x: every other point */
  for (int i = 0; i < 4; i++) words[4 + i] = (uint64_t)strides[i];
  words[4 + 4 + 2] = 1 | CG_GPU_STAGE;
  launch(&e, e.cached, R, words);
  bool ok = true;
  for (int r = 0; r < R && ok; r++) {
    double s = 0;
    for (int c = 0; c < C; c++) s += xs[r * 2 * C + 2 * c];
    for (int c = 0; c < C && ok; c++) ok = out[r * C + c] == (float)(xs[r * 2 * C + 2 * c] - s);
  }
  CHECK(ok, "strided rows with the flag: the unstaged results");
  emu_free(&e);
}

/* The NVPTX target's cached entry of the L1 normalization: the tiles are shared memory (its loads and
 * stores of the tile are ld.shared / st.shared); LOOM_TEST_PTX=path writes the PTX (ptxas -v by hand). */
static void test_nvptx(void) {
  CgTarget *t = NULL;
  Diag d = {0};
  if (cg_nvptx_target_create(&g_ctx, 9, 0, &t, &d) != LOOM_OK) {
    printf("  (no NVPTX backend: %s)\n", d.msg);
    return;
  }
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "a1");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, kb_ins(&kb, KI_ELEM, LOOM_FLOAT32, LOOM_OP_ABS, x, -1));
  kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, x, kb_acc(&kb, 0, LOOM_FLOAT32)));
  CgCompileOptions cached = {.entries = CG_ENTRY_CACHED};
  CgCompiled cc;
  if (t->compile(t, &kb.k, &cached, &cc, &d) == LOOM_OK) {
    const char *ptx = cc.gpu->code;
    printf("  the cached entry's compile: %.1f ms (lowering, linking, optimization, emission %.1f %.1f %.1f %.1f), "
           "%zu bytes of PTX\n", cc.gpu->phase_ms[0] + cc.gpu->phase_ms[1] + cc.gpu->phase_ms[2] + cc.gpu->phase_ms[3],
           cc.gpu->phase_ms[0], cc.gpu->phase_ms[1], cc.gpu->phase_ms[2], cc.gpu->phase_ms[3], cc.gpu->code_size);
    const char *dump = getenv("LOOM_TEST_PTX");
    FILE *f = dump ? fopen(dump, "w") : NULL;
    if (f) fputs(ptx, f), fclose(f);
    bool off = getenv("LOOM_GPU_STAGE_ROWS") && strcmp(getenv("LOOM_GPU_STAGE_ROWS"), "0") == 0;
    bool tiles = strstr(ptx, "stage_$_0") != NULL;
    CHECK(off ? !tiles : tiles && strstr(ptx, "ld.shared.f32") && strstr(ptx, "st.shared.f32"),
          "the PTX %s shared tiles", off ? "has no" : "has");
    t->release(t, &cc);
  } else {
    CHECK(false, "the cached entry: %s", d.msg);
  }
  t->destroy(t);
}

int main(void) {
  emu_init();
  srand(7);
  const char *knob = getenv("LOOM_GPU_STAGE_ROWS");
  if (!knob || strcmp(knob, "0") != 0) test_policy(); /* (the launcher reads the knob too) */
  test_elem_grid();
  test_elem_grid_items();
  test_lowering(false);
  test_lowering(true);
  test_flag_ignored();
  test_nvptx();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
