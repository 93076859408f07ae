/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_col_scan.c: GPU scans and reductions down columns (cumsum(axis=0), x.sum(0): strategy COL,
 * codegen/lower_scan.c) without a GPU: the shared GPU lowering run on the host (gpu_emulate.h: one lane a block, entries run
 * block after block) through the real launcher (runtime/gpu/gpu_launch_policy.c) over a host-memory pool.
 *
 * Contract: a COL scan of few columns is split into parts of R (about 2^18 (part, column) items, each part
 * >= 64 rows, at most 4096 parts): `part` folds each (part, column) item's range, `finishb` scans it from
 * the fold of the earlier parts' partials; many columns or short columns keep `main` (a thread a column,
 * its values read GPU_SCAN_AHEAD points ahead). Every case is checked point by point against a serial
 * reference written here: integers exactly (wrapping as NumPy's fixed-width integers), max with a NaN
 * (NaN from it on), float sums within n * eps * the running sum of magnitudes (the split reassociates),
 * products near 1; the row padding must stay untouched. The launcher's choice (parts, entries) is checked
 * beside it, with COL reductions (sum, max, a fused int sum) through the same launcher. The COL block fold
 * is off here (LOOM_GPU_COL_FOLD=0: one lane a block cannot tile parts). */
#include <math.h>

#include "runtime/gpu/gpu_launch_policy.h"
#include "tests/c/gpu_emulate.h"

enum { P_MAIN = 0, P_PART = 2, P_FINISH = 3, P_FINISHB = 7 }; /* gpu_rt.h's E_* */

typedef struct Run {
  Emu *e;
  int mains, parts, finishbs, staged;
  uint64_t nparts; /* extra word 0 at the part launch */
  int nd, nb;
} Run;

static uint32_t r_loaded(void *u) { (void)u; return ~0u; }
static LoomStatus r_need(void *u, uint32_t mask, Diag *d) { (void)u, (void)mask, (void)d; return LOOM_OK; }
static int r_limit(void *u, int what, int entry) { (void)u, (void)what, (void)entry; return 1024; }
static LoomStatus r_settle(void *u, Diag *d) { (void)u, (void)d; return LOOM_OK; }
static LoomStatus r_launch(void *u, int entry, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  (void)block, (void)d;
  Run *r = u;
  EntryFn fn = entry == P_MAIN     ? r->e->main
               : entry == P_PART    ? r->e->part
               : entry == P_FINISH  ? r->e->finish
               : entry == P_FINISHB ? r->e->finishb
                                    : NULL;
  CHECK(fn != NULL, "entry %d launched but not built", entry);
  if (!fn) return LOOM_ERR_INTERNAL;
  if (entry == P_MAIN) r->mains++, r->staged += (words[r->nd + r->nb + r->nb * r->nd + 2] & CG_GPU_STAGE) != 0;
  if (entry == P_PART) r->parts++, r->nparts = words[r->nd + r->nb + r->nb * r->nd];
  if (entry == P_FINISHB || entry == P_FINISH) r->finishbs++;
  launch(r->e, fn, grid, words); /* one lane a block: the grid-stride loops cover every item */
  return LOOM_OK;
}

static LoomStatus h_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  (void)user, (void)device, (void)d;
  void *p = malloc(size + 64);
  if (!p) return LOOM_ERR_OUT_OF_MEMORY;
  memset(p, 0xA5, size); /* garbage: nothing may read a partial that was not written */
  *out = (uint64_t)(uintptr_t)p;
  return LOOM_OK;
}
static void h_free(void *user, int device, uint64_t ptr) { (void)user, (void)device, free((void *)(uintptr_t)ptr); }
static RtGpuPool *g_pool;

typedef struct Case {
  LoomDType t;
  LoomReduceOp op;
  int64_t rows, cols;
  bool fused;          /* scan of 2x + 1 */
  int64_t want_parts;  /* the launcher's part count (1: main; 0: a reduction's, not checked) */
  const char *what;
  bool reduce;         /* the fold of each column into y[col] instead of its scan */
  int64_t ostride;     /* 0: x contiguous along its columns; else a run-time column stride (x[:, ::2], x[:, ::-1]):
                          layouts ANY on both dims, the column walk asked for by the strides (walk_cols) */
  bool thread_rows;    /* x (and a scan's y) row-major, contiguous along R (rows of `rows` values): walked a thread a
                          row because the rows are short (walk_cols, cg_gpu_walk_cols' short-row rule) */
  bool dense;          /* thread_rows without the rows' padding: a scan's launch stages tiles of rows (gpu_stage.c) */
} Case;

static double get(const void *p, LoomDType t, int64_t i) {
  switch (t) {
  case LOOM_FLOAT32: return ((const float *)p)[i];
  case LOOM_FLOAT64: return ((const double *)p)[i];
  case LOOM_INT32: return ((const int32_t *)p)[i];
  default: return (double)((const int64_t *)p)[i];
  }
}
static int64_t get_int(const void *p, LoomDType t, int64_t i) {
  return t == LOOM_INT32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}
static void set(void *p, LoomDType t, int64_t i, double v) {
  switch (t) {
  case LOOM_FLOAT32: ((float *)p)[i] = (float)v; break;
  case LOOM_FLOAT64: ((double *)p)[i] = v; break;
  case LOOM_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int64_t *)p)[i] = (int64_t)v; break;
  }
}

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static double unit(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}

static void run_case(const Case *c) {
  LoomDType t = c->t;
  bool is_int = t == LOOM_INT32 || t == LOOM_INT64;
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int64_t os = c->ostride ? c->ostride : 1, aos = os < 0 ? -os : os;
  const bool tr = c->thread_rows;
  int bx = kb_buf(&kb, t, 0, tr ? "a1" : c->ostride ? "aa" : "1a"), by = kb_buf(&kb, t, 1, c->reduce ? "10" : tr ? "a1" : "1a");
  int v = kb_load(&kb, bx, t);
  if (c->fused) {
    int two = kb_ins(&kb, KI_CONST, t, 0, -1, -1), one = kb_ins(&kb, KI_CONST, t, 0, -1, -1);
    if (is_int) kb.ins[two].value.i = 2, kb.ins[one].value.i = 1;
    else kb.ins[two].value.f = 2.0, kb.ins[one].value.f = 1.0;
    v = kb_bin(&kb, LOOM_OP_ADD, t, kb_bin(&kb, LOOM_OP_MUL, t, v, two), one);
  }
  if (c->reduce) {
    kb_reduce(&kb, c->op, t, v);
    kb_store(&kb, KP_FINAL, by, kb_acc(&kb, 0, t));
  } else {
    KPhase *ph = &kb.ph[kb.k.nphase++];
    ph->kind = KP_SCAN;
    ph->reduce_op = (uint8_t)c->op;
    ph->acc_dtype = (uint8_t)t;
    ph->value = v;
    ph->store_begin = kb.k.nstore;
    kb_store(&kb, KP_SCAN, by, kb_acc(&kb, 0, t));
  }
  /* padded rows: the padding must stay as it was (thread_rows: rows of R values padded to rows + 3) */
  int64_t ld = tr ? c->rows + (c->dense ? 0 : 3) : c->cols + 3, n = tr ? c->cols * ld : c->rows * ld * aos;
  int64_t x0 = os < 0 ? (c->cols - 1) * aos : 0;   /* x's first element (a reversed view: its last column) */
#define XAT(row, col) (tr ? (col) * ld + (row) : (row) * ld * aos + x0 + (col) * os)
#define YAT(row, col) (c->reduce ? (col) : tr ? (col) * ld + (row) : (row) * ld + (col))
  if (tr) { /* short rows (at most 128 bytes) over >= 2^14 of them: a thread a row; long rows keep the row walk */
    int64_t shape[2] = {c->cols, c->rows}, longer[2] = {c->cols, 1000}, fewer[2] = {100, c->rows};
    SchedBinding bind[2] = {{.strides = {ld, 1}}, {.strides = {c->reduce ? 1 : ld, c->reduce ? 0 : 1}}};
    /* (a reduction of a buffer the short-row mode stages keeps the row walk; its column walk is run anyway) */
    CHECK(cg_gpu_walk_cols(&kb.k, shape, bind) == !c->reduce && cg_gpu_walk_cols(&kb.k, longer, bind) == 0 &&
              cg_gpu_walk_cols(&kb.k, fewer, bind) == 0,
          "%s: cg_gpu_walk_cols walks a thread a row for %lld rows of %lld only (scans)", c->what,
          (long long)c->cols, (long long)c->rows);
    kb.k.walk_cols = 1;
  }
  if (c->ostride) { /* the device's specialization decides it from the launch's strides, both ways round */
    SchedBinding bind[2] = {{.strides = {os, ld * aos}}, {.strides = {1, c->reduce ? 0 : ld}}};
    SchedBinding swapped[2] = {{.strides = {ld * aos, os}}, {.strides = {1, c->reduce ? 0 : ld}}};
    int64_t shape[2] = {c->cols, c->rows};
    CHECK(cg_gpu_walk_cols(&kb.k, shape, bind) == 1 && cg_gpu_walk_cols(&kb.k, shape, swapped) == 0,
          "%s: cg_gpu_walk_cols picks the column walk for a column stride of %lld only", c->what, (long long)os);
    kb.k.walk_cols = 1;
  }
  Emu e;
  if (!emu_build(&e, &kb.k)) {
    emu_free(&e);
    return;
  }
  CHECK(e.gk.strategy == CG_GPU_COL, "%s: strategy %u", c->what, e.gk.strategy);
  if (e.gk.strategy != CG_GPU_COL) { /* (ROW's look-back scan needs hooks this emulation lacks) */
    emu_free(&e);
    return;
  }
  CHECK(e.part && e.finishb, "%s: the split's part / finishb entries were built", c->what);
  size_t es = loom_dtype_size(t);
  int64_t yld = c->reduce ? 0 : ld, ny = c->reduce ? c->cols + 3 : n;
  int64_t xs0 = tr ? ld : os, xs1 = tr ? 1 : ld * aos, ys0 = c->reduce ? 1 : tr ? ld : 1, ys1 = tr && !c->reduce ? 1 : yld;
  void *x = malloc((size_t)n * es), *y = malloc((size_t)ny * es);
  for (int64_t i = 0; i < n; i++) {
    double u = unit();
    double val = is_int ? floor(u * 2000) - 1000 : c->op == LOOM_REDUCE_PROD ? 0.999 + 0.002 * u : u * 4 - 1;
    if (t == LOOM_INT32 && c->op == LOOM_REDUCE_SUM) val = floor(u * 2e9) - 1e9; /* sums wrap */
    set(x, t, i, val);
  }
  if (c->op == LOOM_REDUCE_MAX && c->cols > 2 && (c->rows > 100 || tr)) set(x, t, XAT(c->rows > 100 ? 100 : c->rows / 2, 2), NAN);
  memset(y, 0x5A, (size_t)ny * es);
  Run r = {.e = &e, .nd = 2, .nb = 2};
  KBuffer bufs[2] = {kb.bufs[bx], kb.bufs[by]};
  uint32_t entries = 0; /* (the compiler's keep_entries fills gk.entries; the emulator's lowering does not) */
  for (int i = 0; i < CG_NENTRY; i++) entries |= cg_gpu_entry_name(&e.gk, i)[0] ? 1u << i : 0u;
  RtGpuLauncher L = {.ndim = 2, .nkeep = 1, .nbuf = 2, .bufs = bufs, .scan = !c->reduce, .strategy = e.gk.strategy,
                     .block = 256, .acc_size = (uint32_t)e.gk.acc_size, .entries = entries, .wave = 32,
                     .cache_k = e.gk.cache_k,
                     .pool = g_pool, .user = &r, .loaded = r_loaded, .need = r_need, .limit = r_limit,
                     .launch = r_launch, .settle = r_settle};
  uint64_t words[64] = {0};
  words[0] = (uint64_t)c->cols, words[1] = (uint64_t)c->rows;
  words[2] = (uint64_t)(uintptr_t)((char *)x + (size_t)x0 * es), words[3] = (uint64_t)(uintptr_t)y;
  words[4] = (uint64_t)xs0, words[5] = (uint64_t)xs1, words[6] = (uint64_t)ys0, words[7] = (uint64_t)ys1;
  Diag d = {0};
  LoomStatus st = rt_gpu_launch_policy(&L, words, c->cols, c->rows, &d);
  CHECK(st == LOOM_OK, "%s: launch: %s", c->what, d.msg);
  int64_t got_parts = r.parts ? (int64_t)r.nparts : 1;
  CHECK(c->want_parts == 0 || (got_parts == c->want_parts && (c->want_parts > 1 ? r.finishbs == 1 && r.mains == 0 : r.mains == 1)),
        "%s: %lld parts (want %lld), launches main %d part %d finishb %d", c->what, (long long)got_parts,
        (long long)c->want_parts, r.mains, r.parts, r.finishbs);
  CHECK(!tr || c->reduce || (r.staged == (c->dense ? 1 : 0) && e.gk.cache_k > 0),
        "%s: staged launches %d (cache_k %d)", c->what, r.staged, e.gk.cache_k);
  int bad = 0;
  const double eps = t == LOOM_FLOAT32 ? 1.2e-7 : 2.3e-16;
  for (int64_t col = 0; col < c->cols && bad < 4; col++) {
    long double acc = c->op == LOOM_REDUCE_PROD ? 1 : c->op == LOOM_REDUCE_MAX ? -INFINITY : 0, mag = 0;
    int64_t iacc = c->op == LOOM_REDUCE_PROD ? 1 : 0;
    for (int64_t row = 0; row < c->rows && bad < 4; row++) {
      int64_t i = XAT(row, col), iy = YAT(row, col);
      double xv = get(x, t, i);
      if (c->fused) xv = is_int ? xv * 2 + 1 : xv * 2.0 + 1.0;
      bool ok;
      double g = get(y, t, iy);
      bool last = row == c->rows - 1; /* a reduction: only the column's total is stored */
      if (is_int) {
        int64_t xi = get_int(x, t, i), gi = get_int(y, t, iy);
        if (c->fused) xi = (int64_t)((uint64_t)xi * 2u + 1u);
        uint64_t a = (uint64_t)iacc, b = (uint64_t)xi; /* two's complement wrap */
        iacc = (int64_t)(c->op == LOOM_REDUCE_PROD ? a * b : a + b);
        if (t == LOOM_INT32) iacc = (int64_t)(int32_t)(uint32_t)(uint64_t)iacc;
        ok = (c->reduce && !last) || gi == iacc;
        if (!ok) printf("  %s (%lld, %lld): %lld want %lld\n", c->what, (long long)row, (long long)col, (long long)gi, (long long)iacc);
      } else {
        if (c->op == LOOM_REDUCE_MAX) acc = isnan(xv) || isnan((double)acc) ? NAN : xv > acc ? xv : acc;
        else if (c->op == LOOM_REDUCE_PROD) acc *= xv;
        else acc += xv;
        mag += fabs(xv);
        double tol = c->op == LOOM_REDUCE_MAX ? 0 : (double)(row + 2) * eps * (double)(c->op == LOOM_REDUCE_PROD ? 1 : mag);
        ok = (c->reduce && !last) || (isnan((double)acc) ? isnan(g) : fabs(g - (double)acc) <= tol);
        if (!ok) printf("  %s (%lld, %lld): %.17g want %.17Lg\n", c->what, (long long)row, (long long)col, g, acc);
      }
      bad += !ok;
    }
  }
  CHECK(bad == 0, "%s: values against the serial reference", c->what);
  bool pad_ok = true;
  unsigned char pad[8];
  memset(pad, 0x5A, sizeof pad);
  if (tr && !c->reduce) /* each row's 3 padding values */
    for (int64_t col = 0; col < c->cols && pad_ok; col++)
      for (int64_t row = c->rows; row < ld; row++)
        pad_ok = pad_ok && !memcmp((char *)y + (size_t)(col * ld + row) * es, pad, es);
  else
    for (int64_t row = 0; row < (c->reduce ? 1 : c->rows) && pad_ok; row++)
      for (int64_t col = c->cols; col < (c->reduce ? ny : ld); col++)
        pad_ok = pad_ok && !memcmp((char *)y + (size_t)(row * yld + col) * es, pad, es);
  CHECK(pad_ok, "%s: the row padding is untouched", c->what);
  free(x);
  free(y);
  emu_free(&e);
#undef XAT
#undef YAT
}

int main(void) {
  const char *knob = getenv("LOOM_GPU_COL_SCAN_SPLIT");
  if ((knob && *knob) || getenv("LOOM_GPU_THREAD_ROW_BYTES")) {
    printf("LOOM_GPU_COL_SCAN_SPLIT or LOOM_GPU_THREAD_ROW_BYTES set: not the defaults; skipped\n");
    return 77;
  }
  setenv("LOOM_GPU_COL_FOLD", "0", 1); /* (read once by the launcher) */
  emu_init();
  RtDevAllocator alloc = {.alloc = h_alloc, .free = h_free};
  Diag d = {0};
  if (rt_gpu_pool_create(NULL, 0, &alloc, &g_pool, &d) != LOOM_OK) {
    printf("pool: %s\n", d.msg);
    return 1;
  }
  /* parts = min(ceil(2^18 / cols), rows / 64, 4096) */
  static const Case cases[] = {
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 1000, 37, false, 15, "f64 cumsum, 37 columns: 15 parts of 66-67 rows", false, 0, false, false},
      {LOOM_INT64, LOOM_REDUCE_SUM, 777, 300, false, 12, "i64 cumsum, 300 columns", false, 0, false, false},
      {LOOM_INT32, LOOM_REDUCE_SUM, 1300, 5, true, 20, "i32 cumsum of 2x+1 (wraps), fused", false, 0, false, false},
      {LOOM_FLOAT32, LOOM_REDUCE_MAX, 4099, 5, false, 64, "f32 cummax with a NaN", false, 0, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_PROD, 5000, 3, false, 78, "f64 cumprod near 1, 3 columns", false, 0, false, false},
      {LOOM_INT64, LOOM_REDUCE_PROD, 129, 2, false, 2, "i64 cumprod wraps, 2 parts of 64-65 rows", false, 0, false, false},
      {LOOM_FLOAT32, LOOM_REDUCE_SUM, 300000, 1, false, 4096, "f32 one column: 4096 parts", false, 0, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 127, 9, true, 1, "f64 short columns: main (chunks of 4 and the rest)", false, 0, false, false},
      {LOOM_INT32, LOOM_REDUCE_SUM, 70, 300000, false, 1, "i32 many columns: main", false, 0, false, false},
      {LOOM_FLOAT32, LOOM_REDUCE_SUM, 5, 4, false, 1, "f32 fewer rows than a chunk", false, 0, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 0, 4, false, 1, "f64 no rows", false, 0, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 5000, 9, false, 0, "f64 sum over axis 0", true, 0, false, false},
      {LOOM_FLOAT32, LOOM_REDUCE_MAX, 3001, 4, false, 0, "f32 max over axis 0, a NaN", true, 0, false, false},
      {LOOM_INT32, LOOM_REDUCE_SUM, 200, 50, true, 0, "i32 sum of 2 x + 1 over axis 0 (wraps)", true, 0, false, false},
      /* strided columns: KL_ANY on both dims, walked by columns because the strides asked (KernelIr.walk_cols) */
      {LOOM_FLOAT32, LOOM_REDUCE_SUM, 3001, 700, false, 0, "f32 x[:, ::2].sum(0)", true, 2, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_MAX, 2000, 5, false, 0, "f64 x[:, ::3].max(0), a NaN", true, 3, false, false},
      {LOOM_INT64, LOOM_REDUCE_SUM, 999, 130, true, 0, "i64 (2 x + 1)[:, ::-1].sum(0)", true, -1, false, false},
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 1000, 37, false, 15, "f64 x[:, ::2].cumsum(0): 15 parts", false, 2, false, false},
      {LOOM_INT32, LOOM_REDUCE_SUM, 70, 3000, false, 1, "i32 x[:, ::-1].cumsum(0), many columns: main", false, -1, false, false},
      /* short rows, row-major: a thread a row (cumprod(1 + r, axis=-1) of 12 months; distances over 3 coordinates) */
      {LOOM_FLOAT64, LOOM_REDUCE_PROD, 12, 20000, false, 1, "f64 cumprod(axis=-1) near 1, rows of 12", false, 0, true, false},
      {LOOM_INT32, LOOM_REDUCE_SUM, 31, 16384, false, 1, "i32 cumsum(axis=-1), rows of 31 (wraps)", false, 0, true, false},
      {LOOM_FLOAT32, LOOM_REDUCE_MAX, 7, 17000, false, 1, "f32 cummax(axis=-1), rows of 7", false, 0, true, false},
      {LOOM_FLOAT64, LOOM_REDUCE_PROD, 12, 20000, false, 1, "f64 cumprod(axis=-1), dense rows of 12: staged", false, 0, true, true},
      {LOOM_INT32, LOOM_REDUCE_SUM, 31, 16385, true, 1, "i32 cumsum(2 x + 1, axis=-1), dense rows of 31: staged", false, 0, true, true},
      {LOOM_FLOAT32, LOOM_REDUCE_MAX, 7, 17001, false, 1, "f32 cummax(axis=-1), dense rows of 7, a NaN: staged", false, 0, true, true},
      {LOOM_FLOAT64, LOOM_REDUCE_SUM, 1, 20000, false, 1, "f64 cumsum(axis=-1), rows of 1: staged", false, 0, true, true},
      {LOOM_FLOAT32, LOOM_REDUCE_SUM, 3, 30000, true, 0, "f32 (2 x + 1).sum(-1), rows of 3", true, 0, true, false},
      {LOOM_FLOAT64, LOOM_REDUCE_MAX, 16, 16500, false, 0, "f64 max(-1), rows of 16, a NaN", true, 0, true, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
  rt_gpu_pool_destroy(g_pool);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
