/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_joint.c: independent GPU reductions folded in phase 0's walk (codegen/gpu_joint.c) without a GPU.
 *
 * 1. The plan: REDUCE phases after phase 0 whose value reads no accumulator join it (min and max; nanmean's
 *    count and sum; a sum beside a phase that depends on phase 0); a phase reading an accumulator, an
 *    arg-reduction and a phase with side stores do not; joined phases leave the phase split's steps, and
 *    phase 0's records grow by their accumulators.
 * 2. Values: the shared GPU lowering run on the host with one lane a block (gpu_emulate.h), `main` over rows
 *    (ROW) and columns (COL), and the phase split (part / finish / finishb for 1, 4 and 7 parts: the joined
 *    values ride in phase 0's records, merged in part order), against float64 loops: random rows of lengths
 *    that leave partial unrolled blocks, a NaN, constant rows (minmax: 0 / 0), empty rows (min / max of
 *    nothing: the identities, as the unjoined kernel gives). The block's butterfly and the COL block fold
 *    run only on a GPU (tests/python/test_gpu_joint.py).
 * 3. The fold is on by default: a child runs with LOOM_GPU_JOINT=0: no plan, " joint0" in the target's
 *    tag, the same values.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

enum { K_MINMAX, K_NANMEAN, K_MIXED, K_DEPENDENT, K_ARG, K_SIDE };

typedef struct JKernel {
  KB kb;
  int kind, x, out, side;
  bool map; /* the output is per point (else one a row) */
} JKernel;

static int kconst(KB *b, LoomDType t, double v) {
  int c = kb_ins(b, KI_CONST, t, 0, -1, -1);
  if (t == LOOM_INT64) b->ins[c].value.i = (int64_t)v;
  else b->ins[c].value.f = v;
  return c;
}

/* The kernels over the last dim of x (t); col: over the first (COL).
 * K_MINMAX: (x - min) / (max - min); K_NANMEAN: sum(where(~isnan x, x, 0)) / count(~isnan x) (the count
 * first, int64); K_MIXED: max, sum(x - max) (reads phase 0), sum(x) (joins), -> sum(x - max) + sum(x);
 * K_DEPENDENT: sum(x), sum(x * sum) (reads phase 0: no join); K_ARG: max(x), argmin(x); K_SIDE: sum(x) and
 * sum(x * x) stored beside (side stores). */
static void j_kernel(JKernel *s, LoomDType t, bool col, int kind) {
  KB *b = &s->kb;
  kb_init(b, 2, 1, 32);
  s->kind = kind;
  const char *lx = col ? "1a" : "a1";
  s->x = kb_buf(b, t, 0, lx);
  s->map = kind == K_MINMAX;
  s->out = kb_buf(b, t, 1, s->map ? lx : "10");
  s->side = kind == K_SIDE ? kb_buf(b, t, 1, lx) : -1;
  int x = kb_load(b, s->x, t);
  switch (kind) {
  case K_MINMAX: {
    int a0 = kb_acc(b, 0, t), a1 = kb_acc(b, 1, t);
    int v = kb_bin(b, LOOM_OP_TRUEDIV, t, kb_bin(b, LOOM_OP_SUB, t, x, a0), kb_bin(b, LOOM_OP_SUB, t, a1, a0));
    kb_reduce(b, LOOM_REDUCE_MIN, t, x);
    kb_reduce(b, LOOM_REDUCE_MAX, t, x);
    kb_store(b, KP_MAP, s->out, v);
    break;
  }
  case K_NANMEAN: {
    int ok = kb_ins(b, KI_ELEM, LOOM_BOOL, LOOM_OP_LOGICAL_NOT, kb_ins(b, KI_ELEM, LOOM_BOOL, LOOM_OP_ISNAN, x, -1), -1);
    int cnt = kb_cast(b, ok, LOOM_INT64);
    int zero = kconst(b, t, 0.0), w = kb_ins(b, KI_ELEM, t, LOOM_OP_WHERE, ok, x);
    b->ins[w].src[2] = zero;
    int a0 = kb_acc(b, 0, LOOM_INT64), a1 = kb_acc(b, 1, t);
    kb_reduce(b, LOOM_REDUCE_SUM, LOOM_INT64, cnt);
    kb_reduce(b, LOOM_REDUCE_SUM, t, w);
    kb_store(b, KP_FINAL, s->out, kb_bin(b, LOOM_OP_TRUEDIV, t, a1, kb_cast(b, a0, t)));
    break;
  }
  case K_MIXED: {
    int a0 = kb_acc(b, 0, t), a1 = kb_acc(b, 1, t), a2 = kb_acc(b, 2, t);
    int d = kb_bin(b, LOOM_OP_SUB, t, x, a0);
    kb_reduce(b, LOOM_REDUCE_MAX, t, x);
    kb_reduce(b, LOOM_REDUCE_SUM, t, d);
    kb_reduce(b, LOOM_REDUCE_SUM, t, x);
    kb_store(b, KP_FINAL, s->out, kb_bin(b, LOOM_OP_ADD, t, a1, a2));
    break;
  }
  case K_DEPENDENT: {
    int a0 = kb_acc(b, 0, t), a1 = kb_acc(b, 1, t);
    kb_reduce(b, LOOM_REDUCE_SUM, t, x);
    kb_reduce(b, LOOM_REDUCE_SUM, t, kb_bin(b, LOOM_OP_MUL, t, x, a0));
    kb_store(b, KP_FINAL, s->out, a1);
    break;
  }
  case K_ARG: {
    int a1 = kb_acc(b, 1, LOOM_INT64);
    kb_reduce(b, LOOM_REDUCE_MAX, t, x);
    kb_reduce(b, LOOM_REDUCE_ARGMIN, t, x);
    kb_store(b, KP_FINAL, s->out, kb_cast(b, a1, t));
    break;
  }
  default: { /* K_SIDE */
    int a0 = kb_acc(b, 0, t), a1 = kb_acc(b, 1, t), sq = kb_bin(b, LOOM_OP_MUL, t, x, x);
    kb_reduce(b, LOOM_REDUCE_SUM, t, x);
    kb_reduce(b, LOOM_REDUCE_SUM, t, sq);
    kb_store(b, KP_REDUCE, s->side, sq);
    kb_store(b, KP_FINAL, s->out, kb_bin(b, LOOM_OP_ADD, t, a0, a1));
    break;
  }
  }
}

static void test_plan(void) {
  static const struct {
    int kind;
    uint32_t bits, red;
    const char *what;
  } want[] = {{K_MINMAX, 2u, 1u, "min and max"},
              {K_NANMEAN, 2u, 1u, "nanmean's count and sum"},
              {K_MIXED, 4u, 3u, "a sum beside one that reads phase 0"},
              {K_DEPENDENT, 0u, 3u, "a sum that reads phase 0"},
              {K_ARG, 0u, 3u, "an arg-reduction"},
              {K_SIDE, 0u, 3u, "a sum with side stores"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    for (int col = 0; col < 2; col++) {
      JKernel s;
      j_kernel(&s, LOOM_FLOAT32, col, want[i].kind);
      CgJoinPlan plan;
      cg_gpu_join_plan(&s.kb.k, &plan);
      CHECK(plan.bits == want[i].bits, "%s (col %d): joined phases %x, want %x", want[i].what, col, plan.bits, want[i].bits);
      uint32_t red = 0, map = 0;
      CHECK(cg_gpu_phase_split(&s.kb.k, &red, &map) && red == want[i].red, "%s (col %d): split steps %x, want %x",
            want[i].what, col, red, want[i].red);
      if (plan.n) /* phase 0's record: its own value, then the joined phases' */
        CHECK(cg_gpu_phase_acc_size(&s.kb.k) == plan.record_size && plan.record_size == 8 + 8 * plan.n,
              "%s: records of %d bytes (plan %d)", want[i].what, cg_gpu_phase_acc_size(&s.kb.k), plan.record_size);
    }
  JKernel s;
  j_kernel(&s, LOOM_FLOAT64, false, K_NANMEAN);
  CgJoinPlan plan;
  cg_gpu_join_plan(&s.kb.k, &plan);
  CHECK(plan.n == 1 && plan.phase[0] == 1 && plan.off[0] == 8, "float64 nanmean: phase 1 at byte 8 (%d, %d)", plan.n,
        plan.off[0]);
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}

/* Row kinds: 0 random in [-4, 4), 1 random with a NaN in the middle, 2 constant (3.5). */
static void fill_row(double *x, int64_t n, int64_t stride, int kind, bool f32) {
  for (int64_t i = 0; i < n; i++) {
    double v = kind == 2 ? 3.5 : 8.0 * uniform() - 4.0;
    x[i * stride] = f32 ? (double)(float)v : v;
  }
  if (kind == 1 && n > 0) x[(n / 2) * stride] = NAN;
}


static bool same(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= tol;
}

/* The float64 reference of a row: the output at point i (map kernels) or the row's value. */
static double ref_value(int kind, const double *x, int64_t n, int64_t es, int64_t i, double *scale) {
  double mn = INFINITY, mx = -INFINITY, sum = 0, sabs = 0, cnt = 0;
  bool nan = false;
  for (int64_t j = 0; j < n; j++) {
    double v = x[j * es];
    if (isnan(v)) {
      nan = true;
      continue;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    sum += v, sabs += fabs(v), cnt += 1;
  }
  *scale = sabs + 1.0;
  switch (kind) {
  case K_MINMAX: {
    if (nan) return NAN;
    *scale = 1.0;
    return (x[i * es] - mn) / (mx - mn);
  }
  case K_NANMEAN: *scale = cnt > 0 ? (sabs / cnt + 1.0) : 1.0; return sum / cnt;
  default: { /* K_MIXED: sum(x - max) + sum(x) */
    if (nan) return NAN;
    if (n == 0) return 0.0;
    *scale = 2 * sabs + (double)n * fabs(mx) + 1.0;
    return (sum - (double)n * mx) + sum;
  }
  }
}

static void check_run(Emu *e, const JKernel *s, LoomDType t, bool col, int64_t n, int nparts, bool finishb) {
  bool f32 = t == LOOM_FLOAT32;
  enum { ROWS = 3 };
  int64_t total = ROWS * n, cnt = total > ROWS ? total : ROWS;
  double *x = malloc((size_t)cnt * sizeof *x);
  int64_t rs = col ? 1 : n, es = col ? ROWS : 1; /* row / element strides of x */
  for (int r = 0; r < ROWS; r++) fill_row(x + r * rs, n, es, r, f32);
  size_t esz = f32 ? 4 : 8;
  void *dx = calloc((size_t)cnt, esz), *dout = calloc((size_t)cnt, esz);
  for (int64_t i = 0; i < total; i++) {
    if (f32) ((float *)dx)[i] = (float)x[i];
    else ((double *)dx)[i] = x[i];
  }
  int64_t shape[2] = {ROWS, n};
  int64_t strides[4] = {rs, es, s->map ? rs : 1, s->map ? es : 0};
  void *bases[2] = {dx, dout};
  emu_run(e, &s->kb.k, shape, bases, strides, nparts, finishb);
  double rtol = f32 ? 3e-6 : 1e-13;
  int bad = 0;
  for (int r = 0; r < ROWS && !bad; r++) {
    int64_t npts = s->map ? n : 1;
    for (int64_t i = 0; i < npts && !bad; i++) {
      double scale, want = ref_value(s->kind, x + r * rs, n, es, i, &scale);
      int64_t at = s->map ? r * rs + i * es : r;
      double got = f32 ? (double)((float *)dout)[at] : ((double *)dout)[at];
      double tol = rtol * (s->kind == K_MINMAX ? 4.0 : scale * (f32 ? 8.0 : 1.0));
      if (!same(got, want, tol)) {
        bad = 1;
        CHECK(false, "kernel %d dtype %d col %d n %lld parts %d finishb %d row %d point %lld: %.17g, want %.17g",
              s->kind, t, col, (long long)n, nparts, finishb, r, (long long)i, got, want);
      }
    }
  }
  if (!bad) CHECK(true, "kernel %d n %lld", s->kind, (long long)n);
  free(x), free(dx), free(dout);
}

static void check_values(LoomDType t, bool col, int kind, const int64_t *lens, int nlens, int nparts, bool finishb) {
  JKernel s;
  j_kernel(&s, t, col, kind);
  Emu e;
  if (!emu_build(&e, &s.kb.k) || (nparts && !(finishb ? e.finishb : e.finish))) {
    CHECK(!nparts || (finishb ? e.finishb : e.finish), "phase split entries");
    emu_free(&e);
    return;
  }
  CHECK((e.gk.strategy == CG_GPU_COL) == col, "strategy %d for col %d", e.gk.strategy, col);
  for (int li = 0; li < nlens; li++) check_run(&e, &s, t, col, lens[li], nparts, finishb);
  emu_free(&e);
}

static void test_values(void) {
  static const int64_t lens[] = {1, 2, 7, 8, 9, 17, 100, 1001}, split[] = {5, 300, 1001};
  static const LoomDType ts[2] = {LOOM_FLOAT32, LOOM_FLOAT64};
  static const int kinds[] = {K_MINMAX, K_NANMEAN, K_MIXED};
  for (int ti = 0; ti < 2; ti++)
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++)
      for (int col = 0; col < 2; col++) {
        check_values(ts[ti], col, kinds[ki], lens, 8, 0, false); /* main: a block (ROW) / thread (COL) a row */
        for (int parts = 1; parts <= 7; parts += 3)              /* the phase split: 1, 4, 7 parts */
          for (int fb = 0; fb < 2; fb++) check_values(ts[ti], col, kinds[ki], split, 3, parts, fb);
      }
}

int main(void) {
  /* the fold is on by default (LOOM_GPU_JOINT=0 turns it off): this process tests it on, a child off */
  const char *env = getenv("LOOM_GPU_JOINT");
  bool off = env && strcmp(env, "0") == 0;
  emu_init();
  if (off) {
    JKernel s;
    j_kernel(&s, LOOM_FLOAT32, false, K_MINMAX);
    CgJoinPlan plan;
    cg_gpu_join_plan(&s.kb.k, &plan);
    CHECK(plan.n == 0, "LOOM_GPU_JOINT=0: no plan");
    CHECK(strstr(cg_gpu_switch_tag(), " joint0") != NULL, "LOOM_GPU_JOINT=0 tag '%s'", cg_gpu_switch_tag());
  } else {
    test_plan();
    CHECK(strstr(cg_gpu_switch_tag(), "joint") == NULL, "the default (on) tag '%s'", cg_gpu_switch_tag());
  }
  test_values();
  printf("%s%d passed, %d failed\n", off ? "(LOOM_GPU_JOINT=0) " : "", g_pass, g_fail);
  if (off) return g_fail ? 1 : 0;
  bool child_ok = emu_rerun_with("test_gpu_joint", "LOOM_GPU_JOINT", "0"); /* the switch off, in a child */
  return g_fail || !child_ok ? 1 : 0;
}
