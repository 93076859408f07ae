/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_rows.c: GPU reductions of short rows compiled with the row's extent as a constant
 * (KernelIr.row_extent on the GPU: codegen/lower.c cg_gpu_row_extent, gpu_lower.c) without a GPU.
 *
 * 1. The decision: a pairwise-distance kernel (out[i, j] = reduce over e of f(a[i, e], b[j, e])) over many
 *    kept points and rows of 2 .. 8 points gets E; rows of 9, too few kept points, a row stride that is not
 *    E times the point stride, a run-time point stride, an elementwise kernel and LOOM_GPU_SMALL_ROWS=0 (a
 *    child) get 0.
 * 2. Values: the shared GPU lowering run on the host with one lane a block (gpu_emulate.h), the COL walk (a
 *    thread a row) with row_extent = E and without, against loops written here in float64 / int64: sum of
 *    squared differences (float32, float64), max with a NaN, argmax with ties and a NaN (the first), int32
 *    product (wrapping), over operands whose rows are packed or reversed (a[:, ::-1]: point stride -1), for
 *    E = 2 .. 8. Children run with LOOM_GPU_SMALL_ROWS=0 (no specialization) and LOOM_GPU_WALK_NSW=0 (the walks'
 *    offsets without nsw, gpu_lower.c cg_gpu_offsets_in: the same values, " nsw0" in the target's tag).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

enum { R_SUMSQ, R_MAX, R_ARGMAX, R_PROD };

/* out[i, j] over dims (i, j, e): a's layout "a0c", b's "0ac" (c: the point stride's class), out "a10". */
static void r_kernel(KB *b, int kind, LoomDType t, KLayout point) {
  kb_init(b, 3, 2, 32);
  int ba = kb_buf(b, t, 0, "a01"), bb = kb_buf(b, t, 0, "0a1");
  b->bufs[ba].layout[2] = b->bufs[bb].layout[2] = (uint8_t)point;
  LoomDType ot = kind == R_ARGMAX ? LOOM_INT64 : t;
  int out = kb_buf(b, ot, 1, "a10");
  int x = kb_load(b, ba, t), y = kb_load(b, bb, t);
  int v = kind == R_SUMSQ ? kb_bin(b, LOOM_OP_SUB, t, x, y) : kind == R_PROD ? kb_bin(b, LOOM_OP_ADD, t, x, y) : kb_bin(b, LOOM_OP_MUL, t, x, y);
  if (kind == R_SUMSQ) v = kb_bin(b, LOOM_OP_MUL, t, v, v);
  LoomReduceOp op = kind == R_SUMSQ ? LOOM_REDUCE_SUM : kind == R_MAX ? LOOM_REDUCE_MAX : kind == R_ARGMAX ? LOOM_REDUCE_ARGMAX : LOOM_REDUCE_PROD;
  int acc = kb_acc(b, 0, ot);
  kb_reduce(b, op, t, v);
  kb_store(b, KP_FINAL, out, acc);
}

static void test_decision(void) {
  KB kb;
  r_kernel(&kb, R_SUMSQ, LOOM_FLOAT32, KL_ONE);
  for (int64_t e = 1; e <= 10; e++) {
    int64_t shape[3] = {200, 300, e};
    SchedBinding bind[3] = {{.strides = {e, 0, 1}}, {.strides = {0, e, 1}}, {.strides = {300, 1, 0}}};
    int want = e >= 2 && e <= 8 ? (int)e : 0;
    CHECK(cg_gpu_row_extent(&kb.k, shape, bind) == want, "rows of %lld: extent %d, want %d", (long long)e,
          cg_gpu_row_extent(&kb.k, shape, bind), want);
  }
  int64_t shape[3] = {200, 300, 3}, few[3] = {20, 30, 3};
  SchedBinding bind[3] = {{.strides = {3, 0, 1}}, {.strides = {0, 3, 1}}, {.strides = {300, 1, 0}}};
  CHECK(cg_gpu_row_extent(&kb.k, few, bind) == 0, "600 kept points: not walked a thread a row");
  SchedBinding gap[3] = {{.strides = {3, 0, 1}}, {.strides = {0, 4, 1}}, {.strides = {300, 1, 0}}};
  CHECK(cg_gpu_row_extent(&kb.k, shape, gap) == 0, "b's rows 4 apart (b[:, :3] of rows of 4)");
  kb.bufs[1].layout[2] = KL_ANY;
  CHECK(cg_gpu_row_extent(&kb.k, shape, bind) == 0, "b's point stride known only at run time");
  KB map;
  kb_init(&map, 2, 2, 32);
  int x = kb_load(&map, kb_buf(&map, LOOM_FLOAT32, 0, "a1"), LOOM_FLOAT32);
  kb_store(&map, KP_MAP, kb_buf(&map, LOOM_FLOAT32, 1, "a1"), kb_bin(&map, LOOM_OP_MUL, LOOM_FLOAT32, x, x));
  int64_t ms[2] = {100000, 3};
  SchedBinding mb[2] = {{.strides = {3, 1}}, {.strides = {3, 1}}};
  CHECK(cg_gpu_row_extent(&map.k, ms, mb) == 0, "an elementwise kernel");
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (int64_t)((g_rng >> 11) % (uint64_t)n);
}

enum { NI = 5, NJ = 7 };

/* The reference of out[i, j]: a's row i against b's row j (points e = 0 .. E-1, read through the strides). */
static double ref(int kind, const double *a, const double *b, int64_t e, int64_t sa, int64_t sb, int64_t pa,
                  int64_t pb, int64_t i, int64_t j) {
  double acc = kind == R_SUMSQ ? 0.0 : kind == R_PROD ? 1.0 : -INFINITY;
  int64_t at = 0;
  bool nan = false;
  int64_t prod = 1;
  for (int64_t p = 0; p < e; p++) {
    double x = a[i * sa + p * pa], y = b[j * sb + p * pb];
    if (kind == R_SUMSQ) acc += (x - y) * (x - y);
    else if (kind == R_PROD) prod = (int64_t)(int32_t)(uint32_t)((uint64_t)prod * (uint64_t)(int64_t)(x + y));
    else {
      double v = x * y;
      if (isnan(v)) {
        if (!nan) at = p, acc = NAN;
        nan = true;
      } else if (!nan && v > acc) at = p, acc = v;
    }
  }
  return kind == R_ARGMAX ? (double)at : kind == R_PROD ? (double)prod : acc;
}

/* Runs the kernel (row_extent = e, or 0: generic) over a (NI rows) and b (NJ rows) of e points, point
 * stride `point` (1 or -1). */
static void check(int kind, LoomDType t, int64_t e, int point, bool specialize) {
  KB kb;
  r_kernel(&kb, kind, t, point == 1 ? KL_ONE : KL_NEG1);
  kb.k.walk_cols = 1;
  kb.k.row_extent = specialize ? (int32_t)e : 0;
  Emu em;
  if (!emu_build(&em, &kb.k)) return;
  CHECK(em.gk.strategy == CG_GPU_COL, "a thread a row (COL)");
  int64_t na = NI * e, nb = NJ * e;
  double *a = malloc((size_t)na * sizeof *a), *b = malloc((size_t)nb * sizeof *b);
  bool f32 = t == LOOM_FLOAT32, i32 = t == LOOM_INT32;
  for (int64_t q = 0; q < na; q++) a[q] = i32 ? (double)(rnd(2001) - 1000) : (double)(rnd(17) - 8) / 4.0 + (f32 ? 0.0 : 1e-9 * (double)rnd(1000));
  for (int64_t q = 0; q < nb; q++) b[q] = i32 ? (double)(rnd(2001) - 1000) : (double)(rnd(17) - 8) / 4.0;
  if (kind == R_ARGMAX || kind == R_MAX) { /* a NaN in a's row 1 at its last point but one; b's row 2 all ties */
    a[1 * e + (e - 2)] = NAN;
    for (int64_t p = 0; p < e; p++) b[2 * e + p] = 1.0, a[3 * e + p] = 2.0;
  }
  size_t es = f32 || i32 ? 4 : 8;
  char *da = calloc((size_t)na, es), *db = calloc((size_t)nb, es);
  for (int64_t q = 0; q < na; q++) {
    if (f32) ((float *)da)[q] = (float)a[q];
    else if (i32) ((int32_t *)da)[q] = (int32_t)a[q];
    else ((double *)da)[q] = a[q];
  }
  for (int64_t q = 0; q < nb; q++) {
    if (f32) ((float *)db)[q] = (float)b[q];
    else if (i32) ((int32_t *)db)[q] = (int32_t)b[q];
    else ((double *)db)[q] = b[q];
  }
  size_t os = kind == R_ARGMAX ? 8 : es;
  char *out = calloc(NI * NJ, os);
  /* reversed rows: the base is each row's first point read, its last in memory (a[:, ::-1]) */
  int64_t pa = point, pb = point, sa = e, sb = e;
  void *bases[3] = {da + (point < 0 ? (size_t)(e - 1) * es : 0), db + (point < 0 ? (size_t)(e - 1) * es : 0), out};
  int64_t shape[3] = {NI, NJ, e};
  int64_t strides[9] = {sa, 0, pa, 0, sb, pb, NJ, 1, 0};
  emu_run(&em, &kb.k, shape, bases, strides, 0, false);
  int bad = 0;
  for (int64_t i = 0; i < NI && !bad; i++)
    for (int64_t j = 0; j < NJ && !bad; j++) {
      const double *ra = point < 0 ? a + (e - 1) : a, *rb = point < 0 ? b + (e - 1) : b;
      double want = ref(kind, ra, rb, e, sa, sb, pa, pb, i, j), got;
      int64_t at = i * NJ + j;
      if (kind == R_ARGMAX) got = (double)((int64_t *)out)[at];
      else if (f32) got = (double)((float *)out)[at];
      else if (i32) got = (double)((int32_t *)out)[at];
      else got = ((double *)out)[at];
      double tol = f32 ? 1e-5 * (fabs(want) + 1.0) : kind == R_SUMSQ ? 1e-12 * (fabs(want) + 1.0) : 0.0;
      bool ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol;
      if (!ok) {
        bad = 1;
        CHECK(false, "kind %d dtype %d E %lld point stride %d specialized %d: out[%lld, %lld] = %.17g, want %.17g", kind,
              t, (long long)e, point, specialize, (long long)i, (long long)j, got, want);
      }
    }
  if (!bad) CHECK(true, "kind %d E %lld", kind, (long long)e);
  emu_free(&em);
  free(a), free(b), free(da), free(db), free(out);
}

static void test_values(void) {
  static const struct {
    int kind;
    LoomDType t;
  } cases[] = {{R_SUMSQ, LOOM_FLOAT32}, {R_SUMSQ, LOOM_FLOAT64}, {R_MAX, LOOM_FLOAT32},
               {R_ARGMAX, LOOM_FLOAT32}, {R_ARGMAX, LOOM_FLOAT64}, {R_PROD, LOOM_INT32}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int64_t e = 2; e <= 8; e++)
      for (int point = -1; point <= 1; point += 2)
        for (int spec = 0; spec < 2; spec++) check(cases[c].kind, cases[c].t, e, point, spec);
}

int main(void) {
  const char *env = getenv("LOOM_GPU_SMALL_ROWS");
  bool off = env && strcmp(env, "0") == 0;
  emu_init();
  if (off) {
    KB kb;
    r_kernel(&kb, R_SUMSQ, LOOM_FLOAT32, KL_ONE);
    int64_t shape[3] = {200, 300, 3};
    SchedBinding bind[3] = {{.strides = {3, 0, 1}}, {.strides = {0, 3, 1}}, {.strides = {300, 1, 0}}};
    CHECK(cg_gpu_row_extent(&kb.k, shape, bind) == 0, "LOOM_GPU_SMALL_ROWS=0: no specialization");
    printf("(LOOM_GPU_SMALL_ROWS=0) %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
  }
  const char *nsw = getenv("LOOM_GPU_WALK_NSW");
  bool nsw_off = nsw && strcmp(nsw, "0") == 0;
  if (!nsw_off) test_decision();
  test_values();
  CHECK((strstr(cg_gpu_elem_tag(), " nsw0") != NULL) == nsw_off, "tag '%s' with LOOM_GPU_WALK_NSW=%s", cg_gpu_elem_tag(),
        nsw ? nsw : "(unset)");
  printf("%s%d passed, %d failed\n", nsw_off ? "(LOOM_GPU_WALK_NSW=0) " : "", g_pass, g_fail);
  if (nsw_off) return g_fail ? 1 : 0;
  bool child_ok = emu_rerun_with("test_gpu_rows", "LOOM_GPU_SMALL_ROWS", "0");
  child_ok = emu_rerun_with("test_gpu_rows", "LOOM_GPU_WALK_NSW", "0") && child_ok; /* the walks' plain offsets */
  return g_fail || !child_ok ? 1 : 0;
}
