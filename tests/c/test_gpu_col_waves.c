/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_col_waves.c: the part count of COL split reductions by whole waves of resident blocks
 * (runtime/gpu/gpu_launch_policy.c, col_wave_parts), no GPU needed: a recording launcher over a fake pool.
 * Contract: the sizes' part count is kept when its blocks of 256 fit one wave of resident blocks or when
 * the device's resident count is unknown (0); otherwise the count grows (at most 4x, each part keeping >= 32
 * rows) until the blocks fill >= 85 % of their waves, or to the fullest count found; every phase of a
 * split launches the same grid; the decision is the same on every call (the bits depend on it).
 * (LOOM_GPU_COL_WAVES=0 turns it off for A/B timings; this test sets it on.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_launch_policy.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (cond) g_pass++;                           \
    else {                                        \
      g_fail++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

enum { P_PART = 2, P_FINISH = 3, P_FINISHB = 7 }; /* gpu_rt.h's E_* */

typedef struct Rec {
  int resident; /* what RT_LIM_COL_PART_RESIDENT reports */
  int nd, nb;
  int parts_launches, finish_launches;
  uint32_t part_grid, part_block;
  uint64_t nparts;   /* extra[0] at the part launches */
  bool grids_differ; /* two part launches of one call with different grids */
} Rec;

static uint32_t rec_loaded(void *u) { (void)u; return 0; }
static LoomStatus rec_need(void *u, uint32_t mask, Diag *d) { (void)u, (void)mask, (void)d; return LOOM_OK; }
static int rec_limit(void *u, int what, int entry) {
  (void)entry;
  return what == RT_LIM_COL_PART_RESIDENT ? ((Rec *)u)->resident : 1024;
}
static LoomStatus rec_launch(void *u, int entry, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  (void)d;
  Rec *r = u;
  if (entry == P_PART) {
    if (r->parts_launches && grid != r->part_grid) r->grids_differ = true;
    r->parts_launches++, r->part_grid = grid, r->part_block = block;
    r->nparts = words[r->nd + r->nb + r->nb * r->nd];
  } else if (entry == P_FINISH || entry == P_FINISHB) {
    r->finish_launches++;
  }
  return LOOM_OK;
}
static LoomStatus rec_settle(void *u, Diag *d) { (void)u, (void)d; return LOOM_OK; }

static uint64_t g_next = 1 << 20;
static LoomStatus f_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  (void)user, (void)device, (void)d;
  *out = g_next;
  g_next += (size + 4095) / 4096 * 4096 + 4096;
  return LOOM_OK;
}
static void f_free(void *user, int device, uint64_t ptr) { (void)user, (void)device, (void)ptr; }
static RtGpuPool *g_pool;
static uint32_t g_acc = 4; /* the kernel's record bytes (col_launch) */

/* A column reduction of a (nr, no) float32 matrix over axis 0 (strategy COL: O = the columns, R = the
 * rows), as one REDUCE phase (phases = 1) or a REDUCE-then-MAP split (phases = 2). */
static Rec col_launch(int64_t nr, int64_t no, int resident, int phases) {
  KBuffer bufs[2];
  memset(bufs, 0, sizeof bufs);
  bufs[0].dtype = LOOM_FLOAT32, bufs[0].layout[0] = KL_ANY, bufs[0].layout[1] = KL_ANY;
  bufs[1].dtype = LOOM_FLOAT32, bufs[1].layout[0] = KL_ZERO, bufs[1].layout[1] = KL_ANY;
  Rec r = {.resident = resident, .nd = 2, .nb = 2};
  RtGpuLauncher L = {.ndim = 2, .nkeep = 1, .nbuf = 2, .bufs = bufs, .split_reduce = phases == 2 ? 1u : 0u,
                     .split_map = phases == 2 ? 2u : 0u, .strategy = CG_GPU_COL, .block = 256, .acc_size = g_acc,
                     .entries = CG_ENTRY_MAIN | CG_ENTRY_PART | CG_ENTRY_FINISH, .wave = 32, .pool = g_pool,
                     .user = &r, .loaded = rec_loaded, .need = rec_need, .limit = rec_limit, .launch = rec_launch,
                     .settle = rec_settle};
  /* words: shape (R, O) in the kernel's dim order (codegen.h: kept dims first), bases, strides */
  uint64_t words[64] = {0};
  words[0] = (uint64_t)no, words[1] = (uint64_t)nr;
  words[2] = 4096, words[3] = 1 << 30;
  words[4] = 1, words[5] = (uint64_t)no, words[6] = 1, words[7] = 0;
  Diag d = {0};
  LoomStatus st = rt_gpu_launch_policy(&L, words, no, nr, &d);
  CHECK(st == LOOM_OK, "launch %lld x %lld: %s", (long long)nr, (long long)no, d.msg);
  return r;
}

static double fill_of(uint32_t blocks, int resident) {
  int64_t waves = ((int64_t)blocks + resident - 1) / resident;
  return (double)blocks / (double)(waves * resident);
}

/* Shapes of the probe and suite (columns x rows) and odd ones, against resident counts of 4-8 blocks on
 * 132 SMs and a small GPU (20 SMs x 4). */
static void test_waves(void) {
  static const int64_t shapes[][2] = {{1999, 98976}, {20011, 7777}, {16384, 4096}, {1031, 191904}, {5000, 700},
                                      {64, 100000},  {100, 3000},   {4096, 130000}, {777, 129}};
  static const int residents[] = {528, 660, 792, 1056, 80};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t nr = shapes[s][0], no = shapes[s][1];
    Rec base = col_launch(nr, no, 0, 1); /* unknown resident count: the sizes' count */
    if (base.parts_launches == 0) continue; /* (no split: nothing to decide) */
    for (size_t q = 0; q < sizeof residents / sizeof residents[0]; q++) {
      int res = residents[q];
      Rec r = col_launch(nr, no, res, 1);
      CHECK(r.parts_launches == 1 && r.finish_launches == 1, "%lld x %lld: one part and one finish launch",
            (long long)nr, (long long)no);
      CHECK(r.part_block == 256, "blocks of 256 (%u)", r.part_block);
      CHECK(r.part_grid == (uint32_t)((no * (int64_t)r.nparts + 255) / 256), "grid = the (part, column) items / 256");
      CHECK(r.nparts >= base.nparts && r.nparts <= 4 * base.nparts, "%lld x %lld: %llu parts from %llu",
            (long long)nr, (long long)no, (unsigned long long)r.nparts, (unsigned long long)base.nparts);
      CHECK(r.nparts == base.nparts || (int64_t)r.nparts * 32 <= nr, "parts of >= 32 rows");
      if (base.part_grid <= (uint32_t)res) {
        CHECK(r.nparts == base.nparts, "%lld x %lld, %d resident: one wave keeps the sizes' count", (long long)nr,
              (long long)no, res);
      } else if (r.nparts != base.nparts) {
        CHECK(fill_of(r.part_grid, res) > fill_of(base.part_grid, res), "a fuller last wave");
      }
      if (base.part_grid > (uint32_t)res && fill_of(base.part_grid, res) < 0.85 && r.nparts * 32 * 4 <= (uint64_t)nr) {
        /* room to grow: the blocks fill >= 85 % of their waves unless no count up to 4x does */
        bool any = false;
        for (uint64_t np = base.nparts; np <= 4 * base.nparts && np < base.nparts + 64; np++)
          any |= fill_of((uint32_t)((no * (int64_t)np + 255) / 256), res) >= 0.85;
        CHECK(!any || fill_of(r.part_grid, res) >= 0.85, "%lld x %lld, %d resident: %u blocks fill %.2f", (long long)nr,
              (long long)no, res, r.part_grid, fill_of(r.part_grid, res));
      }
      Rec again = col_launch(nr, no, res, 1);
      CHECK(again.nparts == r.nparts && again.part_grid == r.part_grid, "the same decision on every call");
      Rec split = col_launch(nr, no, res, 2);
      CHECK(split.parts_launches == 2 && !split.grids_differ && split.nparts == r.nparts,
            "a REDUCE + MAP split: both phases on the same grid and parts (%d launches)", split.parts_launches);
    }
  }
  /* max_mid_3d's kernel on an H100 (98976 columns, 1999 rows, 660 resident): 2 parts = 774 blocks = 1.17
   * waves before; now a count whose blocks fill >= 85 % */
  Rec m = col_launch(1999, 98976, 660, 1);
  CHECK(m.nparts > 2 && fill_of(m.part_grid, 660) >= 0.85, "max_mid_3d: %llu parts, %u blocks",
        (unsigned long long)m.nparts, m.part_grid);
}

/* Few columns (<= 128) whose blocks fold their parts (gpu_colfold.c): the part count is the sizes' (about
 * 2^18 items, >= 32 rows a part) without the 4096 cap, so that the blocks of 512 (g = 512 / nO parts each)
 * fill the GPU: mean over axis 0 of 5e7 x 3 ran 25 blocks with the cap. Records too large to fold keep it.
 * (LOOM_GPU_COL_FOLD_PARTS=0, the cap always, fails here.) */
static void test_fold_parts(void) {
  static const int64_t shapes[][2] = {{50000017, 3}, {1000000, 16}, {1 << 20, 64}, {3000000, 100}, {4000, 3}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t nr = shapes[s][0], no = shapes[s][1];
    int64_t a = (262144 + no - 1) / no, b = nr / 32, want = a < b ? a : b;
    int64_t g = CG_COL_FOLD_BLOCK / no, cw = CG_COL_FOLD_BLOCK / g;
    Rec r = col_launch(nr, no, 660, 1);
    CHECK((int64_t)r.nparts == want, "%lld x %lld folded: %llu parts (want %lld)", (long long)nr, (long long)no,
          (unsigned long long)r.nparts, (long long)want);
    if (want >= 2 * g) /* (fewer parts than two tiles: no fold, blocks of 256) */
      CHECK(r.part_block == CG_COL_FOLD_BLOCK && r.part_grid == (uint32_t)((no + cw - 1) / cw * ((want + g - 1) / g)),
            "%lld x %lld: %u blocks of %u (tiles of %lld parts)", (long long)nr, (long long)no, r.part_grid,
            r.part_block, (long long)g);
    else CHECK(r.part_block == 256, "%lld x %lld: unfolded blocks of 256 (%u)", (long long)nr, (long long)no, r.part_block);
    if (nr >= 50000000) CHECK(r.part_grid >= 500, "5e7 x 3: %u blocks (25 with the cap)", r.part_grid);
    g_acc = CG_COL_FOLD_MAX_ACC + 8; /* records too large to fold: at most 4096 parts */
    Rec big = col_launch(nr, no, 0, 1);
    g_acc = 4;
    CHECK((int64_t)big.nparts == (want < 4096 ? want : 4096) && big.part_block == 256,
          "%lld x %lld unfolded: %llu parts in blocks of %u", (long long)nr, (long long)no,
          (unsigned long long)big.nparts, big.part_block);
  }
}

int main(void) {
  const char *items = getenv("LOOM_GPU_COL_ITEMS");
  if (items && *items) {
    printf("LOOM_GPU_COL_ITEMS set: the sizes' part count is the default's; skipped\n");
    return 0;
  }
  setenv("LOOM_GPU_COL_WAVES", "1", 1); /* (the default; the launcher reads it once) */
  RtDevAllocator alloc = {.alloc = f_alloc, .free = f_free};
  Diag d = {0};
  if (rt_gpu_pool_create(NULL, 0, &alloc, &g_pool, &d) != LOOM_OK) {
    printf("pool: %s\n", d.msg);
    return 1;
  }
  test_waves();
  test_fold_parts();
  rt_gpu_pool_destroy(g_pool);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
