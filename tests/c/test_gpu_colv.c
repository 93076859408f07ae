/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_colv.c: the vector part of column reductions over packed short rows (codegen/gpu_colv.c) without a
 * GPU.
 *
 * 1. Which kernels get it (cg_gpu_colv_stride): a COL kernel of 2 dims whose loaded buffers are all [1, S],
 *    S = 2, 3, 4, with one REDUCE phase (and a FINAL); not a run-time reduced stride, two REDUCE phases, side
 *    stores, complex values, mixed strides; LOOM_GPU_COLV=0 (a child): none, " colv0" in the target's tag.
 * 2. Values: the shared GPU lowering run on the host with one lane a block (gpu_emulate.h): the `partv` entry
 *    over 1, 3 and 7 parts (chunks split unevenly, some parts empty), then FINISH or FINISHB, against loops
 *    written here in float64 / int64: sum of 2x + 1 (float32), max with a NaN, argmin with ties and a NaN
 *    (float64: the first), any(x > 0.75) (bool), int32 summed in int64, float16 summed in float32, for
 *    S = 2, 3, 4 and row counts around a chunk (C / S rows) and past several.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

enum { C_SUM, C_MAX, C_ARGMIN, C_ANY, C_ISUM, C_HSUM, C_NKIND };

static const KLayout S_LAYOUT[5] = {KL_ANY, KL_ANY, KL_TWO, KL_THREE, KL_FOUR};

static LoomDType in_dtype(int kind) {
  return kind == C_ARGMIN ? LOOM_FLOAT64 : kind == C_ISUM ? LOOM_INT32 : kind == C_HSUM ? LOOM_FLOAT16 : LOOM_FLOAT32;
}

static LoomDType out_dtype(int kind) {
  return kind == C_ARGMIN || kind == C_ISUM ? LOOM_INT64 : kind == C_ANY ? LOOM_BOOL : LOOM_FLOAT32;
}

/* out[o] = reduce over rows r of f(x[r, o]): dims [S (kept), N], x [1, S], out [1, 0]. */
static void c_kernel(KB *b, int kind, int s) {
  kb_init(b, 2, 1, 32);
  LoomDType t = in_dtype(kind), ot = out_dtype(kind);
  int bx = kb_buf(b, t, 0, "1a");
  b->bufs[bx].layout[1] = (uint8_t)S_LAYOUT[s];
  int out = kb_buf(b, ot, 1, "10");
  int x = kb_load(b, bx, kind == C_HSUM ? LOOM_FLOAT32 : t), v = x, acc; /* (float16 computes in float32) */
  LoomReduceOp op = LOOM_REDUCE_SUM;
  LoomDType at = t;
  switch (kind) {
  case C_SUM: {
    int two = kb_ins(b, KI_CONST, t, 0, -1, -1), one = kb_ins(b, KI_CONST, t, 0, -1, -1);
    b->ins[two].value.f = 2.0, b->ins[one].value.f = 1.0;
    v = kb_bin(b, LOOM_OP_ADD, t, kb_bin(b, LOOM_OP_MUL, t, x, two), one);
    break;
  }
  case C_MAX: op = LOOM_REDUCE_MAX; break;
  case C_ARGMIN: op = LOOM_REDUCE_ARGMIN; break;
  case C_ANY: {
    int c = kb_ins(b, KI_CONST, t, 0, -1, -1);
    b->ins[c].value.f = 0.75;
    v = kb_ins(b, KI_ELEM, LOOM_BOOL, LOOM_OP_GT, x, c);
    op = LOOM_REDUCE_ANY, at = LOOM_BOOL;
    break;
  }
  case C_ISUM: v = kb_cast(b, x, LOOM_INT64), at = LOOM_INT64; break;
  default: at = LOOM_FLOAT32; break; /* C_HSUM */
  }
  acc = kb_acc(b, 0, ot);
  kb_reduce(b, op, at, v);
  kb_store(b, KP_FINAL, out, acc);
}

static void test_decision(void) {
  for (int s = 2; s <= 4; s++)
    for (int kind = 0; kind < C_NKIND; kind++) {
      KB kb;
      c_kernel(&kb, kind, s);
      CHECK(cg_gpu_colv_stride(&kb.k) == s, "kind %d, rows of %d: stride %d", kind, s, cg_gpu_colv_stride(&kb.k));
    }
  KB kb;
  c_kernel(&kb, C_SUM, 3);
  kb.bufs[0].layout[1] = KL_ANY;
  CHECK(cg_gpu_colv_stride(&kb.k) == 0, "a run-time reduced stride");
  c_kernel(&kb, C_SUM, 3);
  kb.bufs[0].dtype = LOOM_COMPLEX64;
  CHECK(cg_gpu_colv_stride(&kb.k) == 0, "complex values");
  c_kernel(&kb, C_SUM, 3); /* a second loaded buffer with another stride */
  int y = kb_buf(&kb, LOOM_FLOAT32, 0, "1a");
  kb.bufs[y].layout[1] = KL_FOUR;
  kb_load(&kb, y, LOOM_FLOAT32);
  CHECK(cg_gpu_colv_stride(&kb.k) == 0, "buffers of rows of 3 and 4");
  c_kernel(&kb, C_SUM, 3); /* two REDUCE phases: sum and max */
  kb.ph[1].kind = KP_REDUCE, kb.ph[1].reduce_op = LOOM_REDUCE_MAX, kb.ph[1].acc_dtype = LOOM_FLOAT32, kb.ph[1].value = 0;
  kb.ph[1].nstores = 0;
  CHECK(cg_gpu_colv_stride(&kb.k) == 0, "two REDUCE phases");
  c_kernel(&kb, C_SUM, 3); /* a side store of the REDUCE phase */
  kb.ph[0].store_begin = 0, kb.ph[0].nstores = 1;
  CHECK(cg_gpu_colv_stride(&kb.k) == 0, "a side store");
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static int64_t rnd(int64_t n) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (int64_t)((g_rng >> 11) % (uint64_t)n);
}

static uint16_t to_half(double v) { /* exact for the quarter-steps below 8 used here */
  _Float16 h = (_Float16)v;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

/* The reference of column o over n rows of x (row-major, s columns). */
static double ref(int kind, const double *x, int64_t n, int s, int o) {
  double acc = kind == C_MAX ? -INFINITY : 0.0, best = INFINITY;
  int64_t at = 0, isum = 0;
  bool any = false, nan = false;
  for (int64_t r = 0; r < n; r++) {
    double v = x[r * s + o];
    switch (kind) {
    case C_SUM: acc += 2.0 * v + 1.0; break;
    case C_MAX: acc = isnan(v) || isnan(acc) ? NAN : v > acc ? v : acc; break;
    case C_ARGMIN:
      if (!nan && (isnan(v) || v < best)) at = r, best = v, nan = isnan(v);
      break;
    case C_ANY: any = any || v > 0.75; break;
    case C_ISUM: isum += (int64_t)v; break;
    default: acc += v; break;
    }
  }
  return kind == C_ARGMIN ? (double)at : kind == C_ANY ? (double)any : kind == C_ISUM ? (double)isum : acc;
}

static void check(int kind, int s, int64_t n, int nparts, bool finishb) {
  KB kb;
  c_kernel(&kb, kind, s);
  Emu em;
  if (!emu_build(&em, &kb.k)) return;
  if (!em.partv || !(finishb ? em.finishb : em.finish)) {
    CHECK(false, "kind %d S %d: no partv / finish entry", kind, s);
    emu_free(&em);
    return;
  }
  CHECK(em.gk.strategy == CG_GPU_COL && em.gk.part_lanes >= 2, "COL with vector lanes (%d)", em.gk.part_lanes);
  int64_t total = n * s;
  double *x = malloc((size_t)(total + 1) * sizeof *x);
  for (int64_t q = 0; q < total; q++)
    x[q] = kind == C_ISUM ? (double)(rnd(2000001) - 1000000) : (double)(rnd(33) - 16) / 4.0;
  if ((kind == C_MAX || kind == C_ARGMIN) && n > 3) x[(n / 2) * s + 1] = NAN; /* column 1 */
  LoomDType t = in_dtype(kind);
  size_t es = loom_dtype_size(t);
  char *dx = aligned_alloc(64, ((size_t)total * es + 64) / 64 * 64 + 64);
  for (int64_t q = 0; q < total; q++) {
    if (t == LOOM_FLOAT32) ((float *)dx)[q] = (float)x[q];
    else if (t == LOOM_FLOAT64) ((double *)dx)[q] = x[q];
    else if (t == LOOM_INT32) ((int32_t *)dx)[q] = (int32_t)x[q];
    else ((uint16_t *)dx)[q] = to_half(x[q]);
  }
  char out[64];
  memset(out, 0x5A, sizeof out);
  size_t acc = (size_t)em.gk.acc_size, bytes = (size_t)(nparts * s + s) * acc;
  unsigned char *mem = malloc(bytes + 64);
  memset(mem, 0xA5, bytes);
  uint64_t words[64] = {0};
  words[0] = (uint64_t)s, words[1] = (uint64_t)n;
  words[2] = (uint64_t)(uintptr_t)dx, words[3] = (uint64_t)(uintptr_t)out;
  words[4] = 1, words[5] = (uint64_t)s, words[6] = 1, words[7] = 0;
  uint64_t *extra = &words[8];
  extra[0] = (uint64_t)nparts, extra[1] = (uint64_t)(uintptr_t)mem, extra[2] = 0;
  extra[3] = (uint64_t)(uintptr_t)(mem + (size_t)(nparts * s) * acc);
  launch(&em, em.partv, nparts, words);
  launch(&em, finishb ? em.finishb : em.finish, s, words);
  int bad = 0;
  LoomDType ot = out_dtype(kind);
  for (int o = 0; o < s && !bad; o++) {
    double want = ref(kind, x, n, s, o), got;
    if (ot == LOOM_INT64) got = (double)((int64_t *)out)[o];
    else if (ot == LOOM_BOOL) got = (double)((uint8_t *)out)[o];
    else got = (double)((float *)out)[o];
    double tol = ot == LOOM_FLOAT32 ? 1e-6 * (fabs(want) + (double)n) : 0.0;
    bool ok = isnan(want) ? isnan(got) : fabs(got - want) <= tol;
    if (!ok) {
      bad = 1;
      CHECK(false, "kind %d S %d rows %lld parts %d finishb %d: column %d = %.17g, want %.17g", kind, s, (long long)n,
            nparts, finishb, o, got, want);
    }
  }
  if (!bad) CHECK(true, "kind %d", kind);
  emu_free(&em);
  free(x), free(dx), free(mem);
}

static void test_values(void) {
  static const int64_t rows[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 100, 1001, 4099};
  for (int kind = 0; kind < C_NKIND; kind++)
    for (int s = 2; s <= 4; s++)
      for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int parts = 1; parts <= 7; parts += 3) check(kind, s, rows[i], parts, (i + (size_t)parts) % 2 == 0);
}

int main(void) {
  const char *env = getenv("LOOM_GPU_COLV");
  bool off = env && strcmp(env, "0") == 0;
  emu_init();
  if (off) {
    KB kb;
    c_kernel(&kb, C_SUM, 3);
    CHECK(cg_gpu_colv_stride(&kb.k) == 0, "LOOM_GPU_COLV=0: none");
    CHECK(strstr(cg_gpu_elem_tag(), " colv0") != NULL, "LOOM_GPU_COLV=0 tag '%s'", cg_gpu_elem_tag());
    printf("(LOOM_GPU_COLV=0) %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
  }
  CHECK(strstr(cg_gpu_elem_tag(), "colv") == NULL, "the default tag '%s'", cg_gpu_elem_tag());
  test_decision();
  test_values();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  bool child_ok = emu_rerun_with("test_gpu_colv", "LOOM_GPU_COLV", "0");
  return g_fail || !child_ok ? 1 : 0;
}
