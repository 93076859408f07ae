/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rowflat.c: GPU reductions of short packed rows read as flat vectors (codegen/gpu_rowflat.c, the
 * `flatv` entry of a ROW kernel specialized on its row extent) without a GPU.
 *
 * 1. The decision (cg_gpu_rowflat_extent): a distance kernel over (N, E) packed rows gets E for E = 2..32 where
 *    its vectors fit, 0 for rows of 1 or 33, rows of 13 float32 over two buffers (26 vectors a chunk), fewer than
 *    2^14 rows, padded rows (row stride E + 1), a point stride of 2, an elementwise kernel; a child with
 *    LOOM_GPU_ROWF=0 gets 0 and no entry.
 *    Stores spread over more lines than twice a coalesced store's get 0: per-row results of rows of 3 (4 rows a
 *    chunk), a MAP phase's packed outputs of rows of 7 or 16 float32 (7 or 4 vectors a chunk).
 * 2. Values: the entry run on the host (gpu_emulate.h; threads of a block run one after another, as the entry
 *    shares nothing between them) with grids of 1, 3, 7 blocks of 1, 4, 32 threads, against loops written here
 *    in float64 / int64: three sums and a FINAL (Poincare-distance form), a max then a sum of squared deviations
 *    then a MAP (packed vector stores), argmax with ties and a NaN (the first), int8 summed into int64 (16 lanes,
 *    16 rows a chunk), and a per-column weight [0, 1] with a per-row scale [s, 0] read beside the packed rows;
 *    float32 and float64; rows of 2..16 points and row counts whose last chunk is partial: where the default
 *    rule builds the entry, and every case in children with LOOM_GPU_ROWF=2 and LOOM_GPU_ROWF_STAGE=1 (the staged
 *    form; here a wave is one lane, so its exchanges through shared memory are the identity: the GPU tests run
 *    its real exchanges, tests/python/test_row_flat.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

enum { K_DIST, K_NORM, K_ARGMAX, K_ISUM8, K_SCALED, K_NKIND };

static int cnst(KB *b, LoomDType t, double v) {
  int c = kb_ins(b, KI_CONST, t, 0, -1, -1);
  b->ins[c].value.f = v;
  return c;
}

/* dims (row, point); packed inputs "a1", outputs per row "10" or per point "a1". */
static void r_kernel(KB *b, int kind, LoomDType t) {
  kb_init(b, 2, 1, 32);
  switch (kind) {
  case K_DIST: { /* out = sum((x-y)^2) / (sum(x^2) + sum(y^2) + 1) */
    int bx = kb_buf(b, t, 0, "a1"), by = kb_buf(b, t, 0, "a1"), out = kb_buf(b, t, 1, "10");
    int x = kb_load(b, bx, t), y = kb_load(b, by, t), d = kb_bin(b, LOOM_OP_SUB, t, x, y);
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, x, x));
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, y, y));
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, d, d));
    int a0 = kb_acc(b, 0, t), a1 = kb_acc(b, 1, t), a2 = kb_acc(b, 2, t);
    int den = kb_bin(b, LOOM_OP_ADD, t, kb_bin(b, LOOM_OP_ADD, t, a0, a1), cnst(b, t, 1.0));
    kb_store(b, KP_FINAL, out, kb_bin(b, LOOM_OP_TRUEDIV, t, a2, den));
    break;
  }
  case K_NORM: { /* m = max(x); s = sum((x - m)^2); out[p] = (x - m) / (s + 1) */
    int bx = kb_buf(b, t, 0, "a1"), out = kb_buf(b, t, 1, "a1");
    int x = kb_load(b, bx, t);
    kb_reduce(b, LOOM_REDUCE_MAX, t, x);
    int m = kb_acc(b, 0, t), dx = kb_bin(b, LOOM_OP_SUB, t, x, m);
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, dx, dx));
    int s = kb_acc(b, 1, t);
    kb_store(b, KP_MAP, out, kb_bin(b, LOOM_OP_TRUEDIV, t, dx, kb_bin(b, LOOM_OP_ADD, t, s, cnst(b, t, 1.0))));
    break;
  }
  case K_ARGMAX: {
    int bx = kb_buf(b, t, 0, "a1"), out = kb_buf(b, LOOM_INT64, 1, "10");
    kb_reduce(b, LOOM_REDUCE_ARGMAX, LOOM_INT64, kb_load(b, bx, t));
    kb_store(b, KP_FINAL, out, kb_acc(b, 0, LOOM_INT64));
    break;
  }
  case K_ISUM8: {
    int bx = kb_buf(b, LOOM_INT8, 0, "a1"), out = kb_buf(b, LOOM_INT64, 1, "10");
    kb_reduce(b, LOOM_REDUCE_SUM, LOOM_INT64, kb_cast(b, kb_load(b, bx, LOOM_INT8), LOOM_INT64));
    kb_store(b, KP_FINAL, out, kb_acc(b, 0, LOOM_INT64));
    break;
  }
  default: { /* K_SCALED: out = sum(x * w[p]) * scale[row] */
    int bx = kb_buf(b, t, 0, "a1"), bw = kb_buf(b, t, 0, "01"), bs = kb_buf(b, t, 0, "a0"), out = kb_buf(b, t, 1, "10");
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, kb_load(b, bx, t), kb_load(b, bw, t)));
    kb_store(b, KP_FINAL, out, kb_bin(b, LOOM_OP_MUL, t, kb_acc(b, 0, t), kb_load(b, bs, t)));
    break;
  }
  }
}

static bool g_staged; /* LOOM_GPU_ROWF_STAGE=1: the staged form, its stores coalesced (no spread rule) */
static void test_decision(void) {
  KB kb;
  r_kernel(&kb, K_DIST, LOOM_FLOAT32);
  /* 3, 7, 11: 4 rows a chunk, so per-row results 4 apart; 13: 13 vectors of each of 2 buffers */
  static const int64_t es[] = {1, 2, 3, 7, 10, 11, 13, 16, 24, 32, 33};
  static const int want[] = {0, 2, 0, 0, 10, 0, 0, 16, 24, 32, 0}, staged_want[] = {0, 2, 3, 7, 10, 0, 0, 16, 24, 32, 0}; /* 11: 11 vectors a lane, more shared memory than the staged form takes */
  for (size_t i = 0; i < sizeof es / sizeof es[0]; i++) {
    int64_t e = es[i], shape[2] = {20000, e};
    SchedBinding bind[3] = {{.strides = {e, 1}}, {.strides = {e, 1}}, {.strides = {1, 0}}};
    int got = cg_gpu_rowflat_extent(&kb.k, shape, bind), w = g_staged ? staged_want[i] : want[i];
    CHECK(got == w, "rows of %lld: extent %d, want %d", (long long)e, got, w);
  }
  int64_t shape[2] = {20000, 10}, few[2] = {1000, 10};
  SchedBinding bind[3] = {{.strides = {10, 1}}, {.strides = {10, 1}}, {.strides = {1, 0}}};
  CHECK(cg_gpu_rowflat_extent(&kb.k, few, bind) == 0, "1000 rows: not specialized");
  SchedBinding pad[3] = {{.strides = {10, 1}}, {.strides = {11, 1}}, {.strides = {1, 0}}};
  CHECK(cg_gpu_rowflat_extent(&kb.k, shape, pad) == 0, "y's rows 11 apart (y[:, :10] of rows of 11)");
  kb.bufs[1].layout[1] = KL_ANY;
  SchedBinding two[3] = {{.strides = {10, 1}}, {.strides = {20, 2}}, {.strides = {1, 0}}};
  CHECK(cg_gpu_rowflat_extent(&kb.k, shape, two) == 0, "y[:, ::2]: a run-time point stride");
  KB f64;
  r_kernel(&f64, K_DIST, LOOM_FLOAT64);
  int64_t s7[2] = {20000, 7};
  SchedBinding b7[3] = {{.strides = {7, 1}}, {.strides = {7, 1}}, {.strides = {1, 0}}};
  CHECK(cg_gpu_rowflat_extent(&f64.k, s7, b7) == 7, "float64 rows of 7: 7 vectors of each buffer, 2 rows a chunk");
  KB nm; /* a MAP phase's packed stores: Q vectors a chunk, Q times the lines of coalesced stores */
  r_kernel(&nm, K_NORM, LOOM_FLOAT32);
  static const int64_t ne[] = {2, 4, 8, 7, 16};
  static const int nwant[] = {2, 4, 8, 0, 0}, nstaged[] = {2, 4, 8, 7, 16}; /* staged: stores coalesced */
  for (int i = 0; i < 5; i++) {
    int64_t sh[2] = {20000, ne[i]};
    SchedBinding nb[2] = {{.strides = {ne[i], 1}}, {.strides = {ne[i], 1}}};
    int w = g_staged ? nstaged[i] : nwant[i];
    CHECK(cg_gpu_rowflat_extent(&nm.k, sh, nb) == w, "MAP rows of %lld: %d, want %d", (long long)ne[i],
          cg_gpu_rowflat_extent(&nm.k, sh, nb), w);
  }
  KB map;
  kb_init(&map, 2, 2, 32);
  int x = kb_load(&map, kb_buf(&map, LOOM_FLOAT32, 0, "a1"), LOOM_FLOAT32);
  kb_store(&map, KP_MAP, kb_buf(&map, LOOM_FLOAT32, 1, "a1"), kb_bin(&map, LOOM_OP_MUL, LOOM_FLOAT32, x, x));
  SchedBinding mb[2] = {{.strides = {10, 1}}, {.strides = {10, 1}}};
  CHECK(cg_gpu_rowflat_extent(&map.k, shape, mb) == 0, "an elementwise kernel");
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (int64_t)((g_rng >> 11) % (uint64_t)n);
}

/* Every block, every thread of it (the entry's threads share nothing: run one after another). */
static void launch_threads(Emu *em, EntryFn fn, int64_t grid, int block, uint64_t *words) {
  *em->ntid = block;
  *em->nbid = (int32_t)grid;
  for (int64_t g = 0; g < grid; g++)
    for (int t = 0; t < block; t++) {
      *em->bid = (int32_t)g;
      *em->tid = t;
      fn(words);
    }
}

static void put(char *p, LoomDType t, int64_t i, double v) {
  if (t == LOOM_FLOAT32) ((float *)p)[i] = (float)v;
  else if (t == LOOM_FLOAT64) ((double *)p)[i] = v;
  else ((int8_t *)p)[i] = (int8_t)v;
}
static double get(const char *p, LoomDType t, int64_t i) {
  if (t == LOOM_FLOAT32) return (double)((const float *)p)[i];
  if (t == LOOM_FLOAT64) return ((const double *)p)[i];
  return (double)((const int64_t *)p)[i]; /* argmax, int8 sums */
}

/* The reference of row r (every output point of it into want[0 .. E-1] for K_NORM, else want[0]). */
static void ref(int kind, const double *x, const double *y, const double *w, const double *sc, int64_t e, int64_t r,
                double *want) {
  const double *a = x + r * e, *bb = y ? y + r * e : NULL;
  double s0 = 0, s1 = 0, s2 = 0, m = -INFINITY;
  int64_t at = 0, isum = 0;
  bool nan = false;
  for (int64_t p = 0; p < e; p++) {
    switch (kind) {
    case K_DIST: s0 += a[p] * a[p], s1 += bb[p] * bb[p], s2 += (a[p] - bb[p]) * (a[p] - bb[p]); break;
    case K_NORM: m = a[p] > m ? a[p] : m; break;
    case K_ARGMAX:
      if (isnan(a[p])) {
        if (!nan) at = p;
        nan = true;
      } else if (!nan && (p == 0 || a[p] > m)) at = p, m = a[p];
      break;
    case K_ISUM8: isum += (int64_t)a[p]; break;
    default: s0 += a[p] * w[p]; break;
    }
  }
  if (kind == K_NORM) {
    for (int64_t p = 0; p < e; p++) s1 += (a[p] - m) * (a[p] - m);
    for (int64_t p = 0; p < e; p++) want[p] = (a[p] - m) / (s1 + 1.0);
  } else if (kind == K_DIST) want[0] = s2 / (s0 + s1 + 1.0);
  else if (kind == K_ARGMAX) want[0] = (double)at;
  else if (kind == K_ISUM8) want[0] = (double)isum;
  else want[0] = s0 * sc[r];
}

static int g_runs;
static bool g_wide; /* LOOM_GPU_ROWF=2: every kernel has the entry */

static void check(int kind, LoomDType t, int64_t e, int64_t n) {
  KB kb;
  r_kernel(&kb, kind, t);
  kb.k.row_extent = (int32_t)e;
  Emu em;
  if (!emu_build(&em, &kb.k)) return;
  if (!em.flatv) {
    CHECK(!g_wide && !g_staged, "kind %d %s rows of %lld: no flatv entry with LOOM_GPU_ROWF=2", kind, t == LOOM_FLOAT32 ? "f32" : "f64",
          (long long)e);
    emu_free(&em);
    return;
  }
  LoomDType it = kind == K_ISUM8 ? LOOM_INT8 : t;
  size_t es = loom_dtype_size(it), os = kind == K_ARGMAX || kind == K_ISUM8 ? 8 : loom_dtype_size(t);
  int64_t np = n * e, no = kind == K_NORM ? np : n;
  double *x = malloc((size_t)np * sizeof *x), *y = malloc((size_t)np * sizeof *y), w[32], *sc = malloc((size_t)n * sizeof *sc);
  for (int64_t q = 0; q < np; q++) {
    x[q] = kind == K_ISUM8 ? (double)(rnd(256) - 128) : (double)(rnd(33) - 16) / 8.0;
    y[q] = (double)(rnd(17) - 8) / 4.0;
  }
  for (int p = 0; p < 32; p++) w[p] = (double)(rnd(9) - 4) / 2.0;
  for (int64_t r = 0; r < n; r++) sc[r] = (double)(rnd(7) + 1) / 4.0;
  if (kind == K_ARGMAX && n > 3) { /* row 1: a NaN at its last point but one; row 2 all ties; row 3 a NaN first */
    x[1 * e + (e - 2)] = NAN;
    for (int64_t p = 0; p < e; p++) x[2 * e + p] = -1.0;
    x[3 * e] = NAN;
  }
  char *dx = aligned_alloc(64, ((size_t)np * es + 64) / 64 * 64 + 64), *dy = aligned_alloc(64, ((size_t)np * es + 64) / 64 * 64 + 64);
  size_t ts = loom_dtype_size(t); /* the weight's and the scale's */
  char *dw = aligned_alloc(64, 32 * ts + 64), *ds = aligned_alloc(64, ((size_t)n * ts + 64) / 64 * 64 + 64);
  char *out = aligned_alloc(64, ((size_t)no * os + 64) / 64 * 64 + 64);
  for (int64_t q = 0; q < np; q++) put(dx, it, q, x[q]), put(dy, it, q, y[q]);
  for (int p = 0; p < 32; p++) put(dw, t, p, w[p]);
  for (int64_t r = 0; r < n; r++) put(ds, t, r, sc[r]);
  int nb = kb.k.nbuf;
  void *bases[4] = {dx, kind == K_SCALED ? (void *)dw : (void *)dy, ds, out};
  int64_t strides[8] = {e, 1, e, 1, 1, 0, 1, 0};
  if (kind == K_DIST) bases[2] = out; /* x, y, out */
  else if (kind == K_NORM) bases[1] = out, strides[2] = e, strides[3] = 1;
  else if (kind == K_ARGMAX || kind == K_ISUM8) bases[1] = out, strides[2] = 1, strides[3] = 0;
  else strides[2] = 0, strides[3] = 1, strides[4] = 1, strides[5] = 0, strides[6] = 1, strides[7] = 0; /* x, w, s, out */
  static const int grids[] = {1, 3, 7}, blocks[] = {1, 4, 32};
  double *want = malloc((size_t)(e > 1 ? e : 1) * sizeof *want);
  for (int gi = 0; gi < 3; gi++) {
    uint64_t words[64] = {0};
    words[0] = (uint64_t)n, words[1] = (uint64_t)e;
    for (int bi = 0; bi < nb; bi++) words[2 + bi] = (uint64_t)(uintptr_t)bases[bi];
    for (int i = 0; i < 2 * nb; i++) words[2 + nb + i] = (uint64_t)strides[i];
    memset(out, 0x5A, (size_t)no * os);
    launch_threads(&em, em.flatv, grids[gi], blocks[gi], words);
    int bad = 0;
    for (int64_t r = 0; r < n && !bad; r++) {
      ref(kind, x, y, w, sc, e, r, want);
      for (int64_t p = 0; p < (kind == K_NORM ? e : 1) && !bad; p++) {
        double wv = want[p], got = get(out, kind == K_ARGMAX || kind == K_ISUM8 ? LOOM_INT64 : t, kind == K_NORM ? r * e + p : r);
        double tol = t == LOOM_FLOAT32 && kind != K_ARGMAX && kind != K_ISUM8 ? 1e-5 * (fabs(wv) + 1.0) : 1e-12 * (fabs(wv) + 1.0);
        if (isnan(wv) ? !isnan(got) : !(fabs(got - wv) <= tol)) {
          bad = 1;
          CHECK(false, "kind %d %s rows of %lld, %lld rows, grid %d x %d: row %lld point %lld = %.17g, want %.17g", kind,
                t == LOOM_FLOAT32 ? "f32" : "f64", (long long)e, (long long)n, grids[gi], blocks[gi], (long long)r,
                (long long)p, got, wv);
        }
      }
    }
    if (!bad) CHECK(true, "kind %d", kind);
    g_runs++;
  }
  free(want), free(x), free(y), free(sc), free(dx), free(dy), free(dw), free(ds), free(out);
  emu_free(&em);
}

static void test_values(void) {
  static const int64_t es[] = {2, 3, 5, 7, 10, 16}, ns[] = {1, 5, 37, 1001};
  for (int kind = 0; kind < K_NKIND; kind++)
    for (int ti = 0; ti < (kind == K_ISUM8 ? 1 : 2); ti++)
      for (size_t i = 0; i < sizeof es / sizeof es[0]; i++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) check(kind, ti ? LOOM_FLOAT64 : LOOM_FLOAT32, es[i], ns[j]);
  CHECK(g_wide || g_staged ? g_runs == 3 * 4 * 6 * 9 : g_runs >= 3 * 4 * 12, "runs: %d", g_runs);
}

int main(void) {
  const char *env = getenv("LOOM_GPU_ROWF");
  bool off = env && strcmp(env, "0") == 0;
  emu_init();
  if (off) {
    KB kb;
    r_kernel(&kb, K_DIST, LOOM_FLOAT32);
    int64_t shape[2] = {20000, 10};
    SchedBinding bind[3] = {{.strides = {10, 1}}, {.strides = {10, 1}}, {.strides = {1, 0}}};
    CHECK(cg_gpu_rowflat_extent(&kb.k, shape, bind) == 0, "LOOM_GPU_ROWF=0: no specialization");
    kb.k.row_extent = 10;
    CHECK(cg_gpu_rowflat_lanes(&kb.k) == 0, "LOOM_GPU_ROWF=0: no entry");
    printf("(LOOM_GPU_ROWF=0) %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
  }
  g_wide = env && strcmp(env, "2") == 0;
  g_staged = cg_gpu_rowflat_stage_knob() == 1; /* (LOOM_GPU_ROWF_STAGE, or its default) */
  if (g_wide) {
    test_values();
    printf("(LOOM_GPU_ROWF=2) %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
  }
  test_decision();
  test_values();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  bool child_ok = emu_rerun_with("test_gpu_rowflat", "LOOM_GPU_ROWF", "0");
  bool wide_ok = emu_rerun_with("test_gpu_rowflat", "LOOM_GPU_ROWF", "2");
  bool staged_ok = getenv("LOOM_GPU_ROWF_STAGE") || /* (a child already: no grandchild) */
                   emu_rerun_with("test_gpu_rowflat", "LOOM_GPU_ROWF_STAGE", g_staged ? "0" : "1");
  return g_fail || !child_ok || !wide_ok || !staged_ok ? 1 : 0;
}
