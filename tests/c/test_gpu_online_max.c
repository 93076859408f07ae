/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_online_max.c: the GPU's online softmax sum (codegen/gpu_online_max.c) without a GPU.
 *
 * 1. The plan: a REDUCE sum of exp(h - c) / exp2(k (h - c)) (k > 0) with c phase 0's max of h folds
 *    (softmax, log_softmax, logsumexp); a shift by a loaded value, a phase 0 other than a max, of another
 *    value, a negative or missing factor, a cast in between, float16, a sum with side stores do not.
 * 2. Values: the shared GPU lowering run on the host with one lane a block (gpu_emulate.h), `main` over
 *    rows (ROW) and columns (COL), and the phase split (part / finish / finishb for several part counts:
 *    the parts' (max, sum) merged in part order, so the merge runs here too), against a
 *    float64 two-pass reference loop: random rows of lengths that leave partial unrolled blocks, rows with
 *    -inf first / later, only -inf (NaN, as two-pass), a NaN, +inf (NaN), increasing (a rescale every block),
 *    one element, empty rows (logsumexp: -inf). The butterfly across lanes and the waves' fold run only on a GPU.
 * 3. LOOM_GPU_ONLINE_MAX=0 (a child process): no plan, the same values, no "online" in the target's tag
 *    (the fold is off by default; this process sets LOOM_GPU_ONLINE_MAX=1 first).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

enum { F_EXP, F_EXP2K, F_EXP2K_LEFT, F_EXP_LOADED_C, F_EXP_NEG_K, F_EXP_CAST, F_EXP_NOSHIFT, F_EXP_OTHER_H };
enum { O_SOFTMAX, O_LOG_SOFTMAX, O_LOGSUMEXP };
#define LOG2E 1.4426950408889634

typedef struct SmKernel {
  KB kb;
  int x, out, cbuf;
} SmKernel;

/* A softmax-like kernel of x (dtype t) over the last dim: phase 0 reduce op0 of x, phase 1 the sum of
 * f(x - acc0) (form: F_*), then the output (O_*). col: over the first dim (COL). */
static void sm_kernel(SmKernel *s, LoomDType t, bool col, int form, int out, LoomReduceOp op0, bool side_store) {
  KB *b = &s->kb;
  kb_init(b, 2, 1, 32);
  const char *lx = col ? "1a" : "a1";
  s->x = kb_buf(b, t, 0, lx);
  s->cbuf = form == F_EXP_LOADED_C ? kb_buf(b, t, 0, col ? "10" : "10") : -1;
  s->out = kb_buf(b, t, 1, out == O_LOGSUMEXP ? "10" : lx);
  int side = side_store ? kb_buf(b, t, 1, lx) : -1;
  int x = kb_load(b, s->x, t);
  int h = form == F_EXP_OTHER_H ? kb_bin(b, LOOM_OP_ADD, t, x, x) : x;
  int a0 = kb_acc(b, 0, t);
  int c = form == F_EXP_LOADED_C ? kb_load(b, s->cbuf, t) : a0;
  int d = kb_bin(b, LOOM_OP_SUB, t, x, c);
  int f;
  if (form == F_EXP2K || form == F_EXP2K_LEFT || form == F_EXP_NEG_K) {
    int k = kb_ins(b, KI_CONST, t, 0, -1, -1);
    b->ins[k].value.f = form == F_EXP_NEG_K ? -1.0 : LOG2E;
    int u = form == F_EXP2K_LEFT ? kb_bin(b, LOOM_OP_MUL, t, k, d) : kb_bin(b, LOOM_OP_MUL, t, d, k);
    f = kb_ins(b, KI_ELEM, t, form == F_EXP_NEG_K ? LOOM_OP_EXP : LOOM_OP_EXP2, u, -1);
  } else if (form == F_EXP_CAST) {
    f = kb_ins(b, KI_ELEM, t, LOOM_OP_EXP, kb_cast(b, kb_cast(b, d, LOOM_FLOAT16), t), -1);
  } else {
    f = kb_ins(b, KI_ELEM, t, LOOM_OP_EXP, form == F_EXP_NOSHIFT ? x : d, -1);
  }
  int a1 = kb_acc(b, 1, t);
  kb_reduce(b, op0, t, h);
  kb_reduce(b, LOOM_REDUCE_SUM, t, f);
  if (side_store) kb_store(b, KP_REDUCE, side, f);
  if (out == O_SOFTMAX) kb_store(b, KP_MAP, s->out, kb_bin(b, LOOM_OP_TRUEDIV, t, f, a1));
  else if (out == O_LOG_SOFTMAX)
    kb_store(b, KP_MAP, s->out, kb_bin(b, LOOM_OP_SUB, t, d, kb_ins(b, KI_ELEM, t, LOOM_OP_LOG, a1, -1)));
  else kb_store(b, KP_FINAL, s->out, kb_bin(b, LOOM_OP_ADD, t, kb_ins(b, KI_ELEM, t, LOOM_OP_LOG, a1, -1), a0));
}

static int plan_phase(const KernelIr *k) {
  CgOnlPlan plan;
  cg_gpu_online_plan(k, &plan);
  return plan.phase;
}

static void test_plan(void) {
  SmKernel s;
  static const LoomDType ts[2] = {LOOM_FLOAT32, LOOM_FLOAT64};
  for (int ti = 0; ti < 2; ti++)
    for (int out = O_SOFTMAX; out <= O_LOGSUMEXP; out++)
      for (int col = 0; col < 2; col++) {
        sm_kernel(&s, ts[ti], col, F_EXP, out, LOOM_REDUCE_MAX, false);
        CHECK(plan_phase(&s.kb.k) == 1, "exp(x - max) (dtype %d, output %d, col %d) folds", ts[ti], out, col);
      }
  sm_kernel(&s, LOOM_FLOAT32, false, F_EXP2K, O_SOFTMAX, LOOM_REDUCE_MAX, false);
  CHECK(plan_phase(&s.kb.k) == 1, "exp2((x - max) * log2(e)) folds");
  sm_kernel(&s, LOOM_FLOAT32, false, F_EXP2K_LEFT, O_SOFTMAX, LOOM_REDUCE_MAX, false);
  CHECK(plan_phase(&s.kb.k) == 1, "exp2(log2(e) * (x - max)) folds");
  static const struct {
    int form;
    LoomReduceOp op0;
    bool side;
    const char *what;
  } no[] = {{F_EXP_LOADED_C, LOOM_REDUCE_MAX, false, "a shift by a loaded value"},
            {F_EXP_NEG_K, LOOM_REDUCE_MAX, false, "exp(-(x - max))"},
            {F_EXP_CAST, LOOM_REDUCE_MAX, false, "a float16 rounding between"},
            {F_EXP_NOSHIFT, LOOM_REDUCE_MAX, false, "exp(x) without the shift"},
            {F_EXP_OTHER_H, LOOM_REDUCE_MAX, false, "exp(x - max(2 x))"},
            {F_EXP, LOOM_REDUCE_MIN, false, "exp(x - min)"},
            {F_EXP, LOOM_REDUCE_SUM, false, "exp(x - sum)"},
            {F_EXP, LOOM_REDUCE_MAX, true, "a sum with a side store"}};
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    sm_kernel(&s, LOOM_FLOAT32, false, no[i].form, O_SOFTMAX, no[i].op0, no[i].side);
    CHECK(plan_phase(&s.kb.k) == 0, "%s does not fold", no[i].what);
  }
  sm_kernel(&s, LOOM_FLOAT16, false, F_EXP, O_SOFTMAX, LOOM_REDUCE_MAX, false);
  CHECK(plan_phase(&s.kb.k) == 0, "float16 does not fold");
  /* the phase split: the sum gets no step (two passes over the input: the max with the sum, the map) */
  sm_kernel(&s, LOOM_FLOAT64, false, F_EXP, O_SOFTMAX, LOOM_REDUCE_MAX, false);
  uint32_t red = 0, map = 0;
  CHECK(cg_gpu_phase_split(&s.kb.k, &red, &map) && red == 1u && map == 4u, "phase split steps %x %x", red, map);
  sm_kernel(&s, LOOM_FLOAT64, false, F_EXP, O_LOGSUMEXP, LOOM_REDUCE_MAX, false);
  CHECK(cg_gpu_phase_split(&s.kb.k, &red, &map) && red == 1u && map == 0u, "logsumexp split steps %x %x", red, map);
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}

/* float64 two-pass reference of n values at x[i * stride]: the max (NaN wins) and sum exp(x - max) */
static void ref_row(const double *x, int64_t n, int64_t stride, double *m, double *s) {
  double mx = -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    double v = x[i * stride];
    if (isnan(v) || isnan(mx)) mx = NAN;
    else if (v > mx) mx = v;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += exp(x[i * stride] - mx);
  *m = mx, *s = sum;
}

static bool close_to(double got, double want, double rtol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rtol * fabs(want) + 1e-300;
}

/* row kinds: 0 random, 1 -inf first, 2 -inf later, 3 all -inf, 4 a NaN, 5 +inf, 6 a large spread, 7 increasing
 * (a new max every block: a rescale each) */
static void fill_row(double *x, int64_t n, int64_t stride, int kind, bool f32) {
  for (int64_t i = 0; i < n; i++) {
    double v = kind == 6 ? 80.0 * (uniform() - 0.5) : kind == 7 ? -20.0 + 40.0 * (double)i / (double)n : 8.0 * uniform() - 4.0;
    x[i * stride] = f32 ? (double)(float)v : v;
  }
  if (n == 0) return;
  if (kind == 1) x[0] = -INFINITY;
  if (kind == 2) x[(n / 2) * stride] = -INFINITY, x[(n - 1) * stride] = -INFINITY;
  if (kind == 3)
    for (int64_t i = 0; i < n; i++) x[i * stride] = -INFINITY;
  if (kind == 4) x[(n / 3) * stride] = NAN;
  if (kind == 5) x[(n - 1) * stride] = INFINITY;
}

/* One run of the built kernel e (sm_kernel's t, col, out) over 3 rows of n, row 1 of the given kind. */
static void check_run(Emu *e, const SmKernel *s, LoomDType t, bool col, int form, int out, int64_t n, int kind,
                      int nparts, bool finishb) {
  bool f32 = t == LOOM_FLOAT32;
  enum { ROWS = 3 };
  int64_t total = ROWS * n, cnt = total > ROWS ? total : ROWS, nout = out == O_LOGSUMEXP ? ROWS : total;
  double *x = malloc((size_t)cnt * sizeof *x), *y = malloc((size_t)cnt * sizeof *y);
  int64_t rs = col ? 1 : n, es = col ? ROWS : 1; /* row / element strides of x */
  for (int r = 0; r < ROWS; r++) fill_row(x + r * rs, n, es, r == 1 ? kind : 0, f32);
  /* device buffers of dtype t */
  size_t esz = f32 ? 4 : 8;
  void *dx = calloc((size_t)cnt, esz), *dout = calloc((size_t)cnt, esz);
  for (int64_t i = 0; i < total; i++) {
    if (f32) ((float *)dx)[i] = (float)x[i];
    else ((double *)dx)[i] = x[i];
  }
  int64_t shape[2] = {ROWS, n};
  int64_t strides[4] = {rs, es, out == O_LOGSUMEXP ? 1 : rs, out == O_LOGSUMEXP ? 0 : es};
  void *bases[2] = {dx, dout};
  emu_run(e, &s->kb.k, shape, bases, strides, nparts, finishb);
  for (int64_t i = 0; i < nout; i++) y[i] = f32 ? (double)((float *)dout)[i] : ((double *)dout)[i];
  double rtol = f32 ? 2e-5 : 1e-12;
  int bad = 0;
  for (int r = 0; r < ROWS && !bad; r++) {
    double m, sum;
    ref_row(x + r * rs, n, es, &m, &sum);
    if (out == O_LOGSUMEXP) {
      double want = log(sum) + m;
      /* log(s) + m: near 0 where s rounds to 1, an absolute tolerance as for log_softmax */
      if (isnan(want) ? !isnan(y[r]) : isinf(want) ? y[r] != want : fabs(y[r] - want) > rtol * (1.0 + fabs(want))) bad = 1;
      CHECK(!bad, "logsumexp dtype %d col %d form %d n %lld kind %d parts %d row %d: %.17g, want %.17g", t, col, form,
            (long long)n, kind, nparts, r, y[r], want);
      continue;
    }
    for (int64_t i = 0; i < n && !bad; i++) {
      double xv = x[r * rs + i * es];
      double want = out == O_SOFTMAX ? exp(xv - m) / sum : (xv - m) - log(sum);
      /* log_softmax: (x - m) - log(s) cancels where x - m is close to log(s): an absolute tolerance */
      double got = y[r * rs + i * es];
      bool ok = out == O_SOFTMAX ? close_to(got, want, rtol)
                                 : (isnan(want) ? isnan(got) : isinf(want) ? got == want : fabs(got - want) <= rtol * (1.0 + fabs(want)));
      if (!ok) {
        bad = 1;
        CHECK(false, "%s dtype %d col %d form %d n %lld kind %d parts %d row %d point %lld: %.17g, want %.17g",
              out == O_SOFTMAX ? "softmax" : "log_softmax", t, col, form, (long long)n, kind, nparts, r, (long long)i,
              got, want);
      }
    }
    if (!bad) CHECK(true, "row %d", r);
  }
  free(x), free(y), free(dx), free(dout);
}

/* The kernel (t, col, form, out) built once, run over lens[0..nlens) x row kinds 0..7 (nparts: the split with
 * finish or finishb). */
static void check_values(LoomDType t, bool col, int form, int out, const int64_t *lens, int nlens, int nparts,
                         bool finishb) {
  SmKernel s;
  sm_kernel(&s, t, col, form, out, LOOM_REDUCE_MAX, false);
  Emu e;
  if (!emu_build(&e, &s.kb.k) || (nparts && !(finishb ? e.finishb : e.finish))) {
    CHECK(!nparts || (finishb ? e.finishb : e.finish), "phase split entries");
    emu_free(&e);
    return;
  }
  CHECK((e.gk.strategy == CG_GPU_COL) == col, "strategy %d for col %d", e.gk.strategy, col);
  for (int li = 0; li < nlens; li++)
    for (int kind = 0; kind <= 7; kind++) check_run(&e, &s, t, col, form, out, lens[li], kind, nparts, finishb);
  emu_free(&e);
}

static void test_values(void) {
  static const int64_t lens[] = {0, 1, 2, 7, 8, 9, 15, 17, 100, 1001}, split[] = {5, 300, 1001};
  static const LoomDType ts[2] = {LOOM_FLOAT32, LOOM_FLOAT64};
  for (int ti = 0; ti < 2; ti++) {
    for (int out = O_SOFTMAX; out <= O_LOGSUMEXP; out++) check_values(ts[ti], false, F_EXP, out, lens, 10, 0, false);
    check_values(ts[ti], true, F_EXP, O_SOFTMAX, lens, 10, 0, false);       /* COL: a thread a column */
    check_values(ts[ti], false, F_EXP2K, O_SOFTMAX, lens, 10, 0, false);    /* exp2 with the factor */
    for (int parts = 1; parts <= 7; parts += 3)  /* the phase split: 1, 4, 7 parts */
      for (int fb = 0; fb < 2; fb++) {           /* finish (a thread per row) / finishb (a block per row) */
        check_values(ts[ti], false, F_EXP, O_LOG_SOFTMAX, split, 3, parts, fb);
        check_values(ts[ti], false, F_EXP, O_LOGSUMEXP, split, 3, parts, fb);
        check_values(ts[ti], false, F_EXP, O_SOFTMAX, split, 3, parts, fb);
        check_values(ts[ti], true, F_EXP, O_SOFTMAX, split, 3, parts, fb); /* COL parts (without the block fold) */
        check_values(ts[ti], true, F_EXP, O_LOGSUMEXP, split, 3, parts, fb);
      }
  }
}

static void test_switch_off(void) {
  SmKernel s;
  sm_kernel(&s, LOOM_FLOAT32, false, F_EXP, O_SOFTMAX, LOOM_REDUCE_MAX, false);
  CHECK(plan_phase(&s.kb.k) == 0 && !cg_gpu_online_on(), "LOOM_GPU_ONLINE_MAX=0: no plan");
  CHECK(strstr(cg_gpu_elem_tag(), "online") == NULL, "LOOM_GPU_ONLINE_MAX=0 tag '%s'", cg_gpu_elem_tag());
}

int main(void) {
  /* the fold is off by default (LOOM_GPU_ONLINE_MAX=1 turns it on): this process tests it on, a child off */
  const char *env = getenv("LOOM_GPU_ONLINE_MAX");
  bool off = env && strcmp(env, "0") == 0;
  if (!off) setenv("LOOM_GPU_ONLINE_MAX", "1", 1);
  emu_init();
  if (off) test_switch_off();
  else {
    test_plan();
    CHECK(strstr(cg_gpu_elem_tag(), " online1") != NULL, "the on tag '%s'", cg_gpu_elem_tag());
  }
  test_values();
  printf("%s%d passed, %d failed\n", off ? "(LOOM_GPU_ONLINE_MAX=0) " : "", g_pass, g_fail);
  if (off) return g_fail ? 1 : 0;
  bool child_ok = emu_rerun_with("test_gpu_online_max", "LOOM_GPU_ONLINE_MAX", "0"); /* the switch off, in a child */
  return g_fail || !child_ok ? 1 : 0;
}
