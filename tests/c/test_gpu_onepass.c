/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_onepass.c: the GPU's one-pass variance (codegen/gpu_moments.c) without a GPU.
 *
 * 1. Schedule facts: which phases the GPU walks R for (cg_gpu_phase_split's bits: one step per set bit,
 *    each a pass over the input): a variance (sum, then sum of (x - mean)^2) is ONE pass, a LayerNorm
 *    split over long rows two (the reductions, then the map); kernels the rule does not cover keep a
 *    pass per phase (a cast between the subtraction and the square, a deviation from a loaded value, a
 *    float16 rounding), and LOOM_GPU_ONEPASS_VAR=0 restores two passes.
 * 2. Values: the shared GPU lowering (cg_lower_gpu) with hooks of a one-lane wave whose launch indices are
 *    globals of the module, run on the host through LLVM's JIT, block after block, as the launcher runs the
 *    entries (`main`; the phase split's part / finish / finishb steps for several part counts). Variances
 *    are compared with a long double two-pass reference on data whose mean is large against its spread
 *    (1e8 + N(0, 1) in float64, 1e4 + N(0, 1) in float32), with NaN, inf, one point and an empty R, over
 *    all points, rows (ROW) and columns (COL), with an argmax phase 0 and a map phase after the variance.
 *    (One lane per block: the butterfly across lanes is not run here; the merges it uses are.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "tests/c/gpu_emulate.h"

#include "codegen/cg_lower.h"

/* mean = acc0 / n; dev = h - mean (or a variant); phases: sum h, sum dev^2; FINAL: mean and var (/ n) */
enum { V_PLAIN, V_CAST_BETWEEN, V_LOADED_MEAN, V_F16_ROUND, V_POW2 };
typedef struct VarKernel {
  KB kb;
  int x, mu, var, mbuf; /* buffers */
} VarKernel;

/* A variance of x (dtype t) over the R dims; ndim / nkeep / layouts as given (x: lay_x, outputs: lay_o). */
static void var_kernel(VarKernel *v, LoomDType t, int ndim, int nkeep, const char *lay_x, const char *lay_o,
                       int variant, bool argmax0) {
  KB *b = &v->kb;
  kb_init(b, ndim, nkeep, 32);
  v->x = kb_buf(b, t, 0, lay_x);
  v->mbuf = variant == V_LOADED_MEAN ? kb_buf(b, t, 0, lay_o) : -1;
  v->mu = kb_buf(b, t, 1, lay_o);
  v->var = kb_buf(b, t, 1, lay_o);
  int x = kb_load(b, v->x, t);
  int a0 = kb_acc(b, 0, argmax0 ? LOOM_INT64 : t);
  int n = kb_cast(b, kb_ins(b, KI_REDSIZE, LOOM_INT64, 0, -1, -1), t);
  int c = argmax0 ? kb_cast(b, a0, t) : kb_bin(b, LOOM_OP_TRUEDIV, t, a0, n);
  if (variant == V_LOADED_MEAN) c = kb_load(b, v->mbuf, t);
  int d = kb_bin(b, LOOM_OP_SUB, t, x, c);
  if (variant == V_F16_ROUND) d = kb_cast(b, kb_cast(b, d, LOOM_FLOAT16), t);
  int sq = kb_bin(b, LOOM_OP_MUL, variant == V_CAST_BETWEEN ? LOOM_FLOAT64 : t,
                  variant == V_CAST_BETWEEN ? kb_cast(b, d, LOOM_FLOAT64) : d,
                  variant == V_CAST_BETWEEN ? kb_cast(b, d, LOOM_FLOAT64) : d);
  if (variant == V_CAST_BETWEEN) sq = kb_cast(b, sq, t);
  if (variant == V_POW2) { /* (x - mu) ** 2 as written in the suite's BatchNorm2d statistics */
    int two = kb_ins(b, KI_CONST, t, 0, -1, -1);
    b->ins[two].value.f = 2.0;
    sq = kb_bin(b, LOOM_OP_POW, t, d, two);
  }
  kb_reduce(b, argmax0 ? LOOM_REDUCE_ARGMAX : LOOM_REDUCE_SUM, t, x);
  kb_reduce(b, LOOM_REDUCE_SUM, t, sq);
  kb_store(b, KP_FINAL, v->mu, argmax0 ? c : c);
  kb_store(b, KP_FINAL, v->var, kb_bin(b, LOOM_OP_TRUEDIV, t, kb_acc(b, 1, t), n));
}

static int popcount(uint32_t v) { return __builtin_popcount(v); }

static int gpu_passes(const KernelIr *k) {
  uint32_t red = 0, map = 0;
  if (!cg_gpu_phase_split(k, &red, &map)) return -1;
  return popcount(red | map);
}

static void test_schedule_facts(void) {
  VarKernel v;
  var_kernel(&v, LOOM_FLOAT64, 1, 0, "1", "0", V_PLAIN, false);
  CHECK(gpu_passes(&v.kb.k) == 1, "np.var of all points: %d passes over the input", gpu_passes(&v.kb.k));
  var_kernel(&v, LOOM_FLOAT32, 2, 1, "1a", "10", V_PLAIN, false);
  CHECK(gpu_passes(&v.kb.k) == 1, "column variance (BatchNorm1d): %d passes", gpu_passes(&v.kb.k));
  var_kernel(&v, LOOM_FLOAT32, 3, 1, "1aa", "100", V_PLAIN, false);
  CHECK(gpu_passes(&v.kb.k) == 1, "channel variance over two R dims (BatchNorm2d): %d passes", gpu_passes(&v.kb.k));
  var_kernel(&v, LOOM_FLOAT32, 3, 1, "1aa", "100", V_POW2, false);
  CHECK(gpu_passes(&v.kb.k) == 1, "(x - mu) ** 2 over two R dims: %d passes", gpu_passes(&v.kb.k));
  var_kernel(&v, LOOM_FLOAT64, 1, 0, "1", "0", V_PLAIN, true);
  CHECK(gpu_passes(&v.kb.k) == 1, "argmax phase 0 and squared deviations from it: %d passes", gpu_passes(&v.kb.k));
  /* LayerNorm: the map after the two reductions is its own pass */
  KB ln;
  kb_init(&ln, 2, 1, 32);
  int bx = kb_buf(&ln, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&ln, LOOM_FLOAT32, 1, "a1");
  int x = kb_load(&ln, bx, LOOM_FLOAT32);
  int n = kb_cast(&ln, kb_ins(&ln, KI_REDSIZE, LOOM_INT64, 0, -1, -1), LOOM_FLOAT32);
  int mu = kb_bin(&ln, LOOM_OP_TRUEDIV, LOOM_FLOAT32, kb_acc(&ln, 0, LOOM_FLOAT32), n);
  int d = kb_bin(&ln, LOOM_OP_SUB, LOOM_FLOAT32, x, mu);
  kb_reduce(&ln, LOOM_REDUCE_SUM, LOOM_FLOAT32, x);
  kb_reduce(&ln, LOOM_REDUCE_SUM, LOOM_FLOAT32, kb_bin(&ln, LOOM_OP_MUL, LOOM_FLOAT32, d, d));
  kb_store(&ln, KP_MAP, bo, kb_bin(&ln, LOOM_OP_MUL, LOOM_FLOAT32, d, kb_acc(&ln, 1, LOOM_FLOAT32)));
  CHECK(gpu_passes(&ln.k) == 2, "LayerNorm over split rows: %d passes (the reductions, the map)", gpu_passes(&ln.k));
  /* the rule's limits: two passes */
  int variants[2] = {V_CAST_BETWEEN, V_F16_ROUND};
  for (int i = 0; i < 2; i++) {
    var_kernel(&v, LOOM_FLOAT32, 1, 0, "1", "0", variants[i], false);
    CHECK(gpu_passes(&v.kb.k) == 2, "variant %d keeps a pass per phase: %d", variants[i], gpu_passes(&v.kb.k));
  }
  /* squared deviations from a loaded mean read no accumulator: not moments, but joined to phase 0's walk
   * where codegen/gpu_joint.c is on, so one pass then */
  var_kernel(&v, LOOM_FLOAT32, 1, 0, "1", "0", V_LOADED_MEAN, false);
  int want = cg_gpu_join_on() ? 1 : 2; /* (LOOM_GPU_JOINT=0: a pass per phase) */
  CHECK(gpu_passes(&v.kb.k) == want, "a loaded mean: %d passes, want %d", gpu_passes(&v.kb.k), want);
  CHECK(strstr(cg_gpu_switch_tag(), "onepass") == NULL, "default tag without onepass0");
}

/* LOOM_GPU_ONEPASS_VAR=0 (read once per process: this test runs again in a child with it) */
static void test_switch_off(void) {
  VarKernel v;
  var_kernel(&v, LOOM_FLOAT64, 1, 0, "1", "0", V_PLAIN, false);
  CHECK(gpu_passes(&v.kb.k) == 2 && strstr(cg_gpu_switch_tag(), " onepass0") != NULL,
        "LOOM_GPU_ONEPASS_VAR=0: %d passes, tag '%s'", gpu_passes(&v.kb.k), cg_gpu_switch_tag());
}

/* ---- values --------------------------------------------------------------------------------------------- */
static uint64_t g_rng = 88172645463325252ull;
static double uniform(void) {
  g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
  return (double)(g_rng >> 11) / 9007199254740992.0;
}
static double normal(void) {
  double u = uniform(), v = uniform();
  return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

/* long double two-pass variance of n values at x[i * stride] */
static long double ref_var(const double *x, int64_t n, int64_t stride, long double *mean) {
  long double s = 0;
  for (int64_t i = 0; i < n; i++) s += x[i * stride];
  long double m = s / (long double)n, q = 0;
  for (int64_t i = 0; i < n; i++) q += (x[i * stride] - m) * (x[i * stride] - m);
  *mean = m;
  return q / (long double)n;
}

static bool close_to(double got, long double want, double rtol) {
  if (isnan((double)want)) return isnan(got);
  return fabsl((long double)got - want) <= rtol * fabsl(want) + 1e-300;
}

/* A variance over all points / rows / columns of float64 or float32 data (stored as double here and
 * converted for float32). layout: 0 all points (1-d), 1 rows (ROW), 2 columns (COL). */
static void check_var(LoomDType t, int layout, int64_t rows, int64_t cols, double offset, int special, bool onepass,
                      int variant) {
  VarKernel v;
  int64_t n = layout == 0 ? rows * cols : 0;
  if (layout == 0) var_kernel(&v, t, 1, 0, "1", "0", variant, false);
  else if (layout == 1) var_kernel(&v, t, 2, 1, "a1", "10", variant, false);
  else var_kernel(&v, t, 2, 1, "1a", "10", variant, false);
  Emu e;
  if (!emu_build(&e, &v.kb.k)) {
    emu_free(&e);
    return;
  }
  CHECK((e.gk.strategy == CG_GPU_COL) == (layout == 2), "strategy %d for layout %d", e.gk.strategy, layout);
  int64_t total = rows * cols;
  double *x = malloc((size_t)(total > 0 ? total : 1) * sizeof *x);
  for (int64_t i = 0; i < total; i++) {
    double val = offset + normal();
    x[i] = t == LOOM_FLOAT32 ? (double)(float)val : val;
  }
  if (special == 1 && total > 3) x[total / 2] = NAN;
  if (special == 2 && total > 3) x[1] = INFINITY;
  if (special == 3 && total > 3) x[0] = offset + 1e3; /* the shift of the first part is an outlier */
  size_t es = t == LOOM_FLOAT32 ? 4 : 8;
  void *xb = malloc((size_t)(total > 0 ? total : 1) * es);
  for (int64_t i = 0; i < total; i++) {
    if (t == LOOM_FLOAT32) ((float *)xb)[i] = (float)x[i];
    else ((double *)xb)[i] = x[i];
  }
  int64_t no = layout == 0 ? 1 : layout == 1 ? rows : cols, nr = layout == 0 ? total : layout == 1 ? cols : rows;
  if (layout == 0) no = 1, nr = n;
  void *mu = calloc((size_t)no + 1, es), *var = calloc((size_t)no + 1, es);
  int64_t shape[2] = {layout == 0 ? nr : no, nr};
  /* strides per buffer and dim (elements): x, mu, var */
  int64_t strides[6];
  if (layout == 0) strides[0] = 1, strides[1] = 0, strides[2] = 0;
  else if (layout == 1) strides[0] = cols, strides[1] = 1, strides[2] = 1, strides[3] = 0, strides[4] = 1, strides[5] = 0;
  else strides[0] = 1, strides[1] = cols, strides[2] = 1, strides[3] = 0, strides[4] = 1, strides[5] = 0;
  void *bases[3] = {xb, mu, var};
  int parts[4] = {0, 1, 3, 7};
  for (int pi = 0; pi < 4; pi++) {
    for (int fb = 0; fb < (parts[pi] ? 2 : 1); fb++) {
      if (parts[pi] && nr < parts[pi]) continue; /* the launcher splits only long R */
      memset(var, 0xFF, (size_t)no * es);
      emu_run(&e, &v.kb.k, shape, bases, strides, parts[pi], fb == 1);
      for (int64_t o = 0; o < no; o++) {
        long double m, want;
        if (nr == 0) want = NAN;
        else want = ref_var(layout == 2 ? x + o : x + o * (layout == 1 ? cols : 0), nr, layout == 2 ? cols : 1, &m);
        double got = t == LOOM_FLOAT32 ? (double)((float *)var)[o] : ((double *)var)[o];
        double rtol = t == LOOM_FLOAT32 ? 2e-4 : 1e-12; /* float32: sequential sums per thread, as two-pass */
        CHECK(close_to(got, want, rtol),
              "%s layout %d %lldx%lld offset %g special %d %s parts %d%s o %lld: %.17g, want %.17Lg",
              t == LOOM_FLOAT32 ? "f32" : "f64", layout, (long long)rows, (long long)cols, offset, special,
              onepass ? "one-pass" : "two-pass", parts[pi], fb ? " (finishb)" : "", (long long)o, got, want);
      }
    }
  }
  free(x);
  free(xb);
  free(mu);
  free(var);
  emu_free(&e);
}

static void test_values(bool onepass) {
  {
    check_var(LOOM_FLOAT64, 0, 1, 5000, 1e8, 0, onepass, V_PLAIN);
    check_var(LOOM_FLOAT32, 0, 1, 5000, 1e4, 0, onepass, V_PLAIN);
    check_var(LOOM_FLOAT64, 0, 1, 3000, 0.0, 1, onepass, V_PLAIN); /* NaN */
    check_var(LOOM_FLOAT64, 0, 1, 3000, 0.0, 2, onepass, V_PLAIN); /* inf */
    check_var(LOOM_FLOAT64, 0, 1, 4000, 1e8, 3, onepass, V_PLAIN); /* an outlier first point */
    check_var(LOOM_FLOAT32, 0, 1, 4000, 1e4, 3, onepass, V_PLAIN);
    check_var(LOOM_FLOAT64, 0, 1, 1, 5.0, 0, onepass, V_PLAIN);   /* one point: 0 */
    check_var(LOOM_FLOAT64, 1, 7, 900, 1e8, 0, onepass, V_PLAIN); /* rows */
    check_var(LOOM_FLOAT32, 1, 5, 1000, 1e4, 0, onepass, V_PLAIN);
    check_var(LOOM_FLOAT64, 2, 700, 9, 1e8, 0, onepass, V_PLAIN); /* columns */
    check_var(LOOM_FLOAT32, 2, 800, 6, 1e4, 0, onepass, V_PLAIN);
    check_var(LOOM_FLOAT64, 1, 3, 0, 0.0, 0, onepass, V_PLAIN);   /* empty rows: NaN (0 / 0) */
    check_var(LOOM_FLOAT32, 1, 4, 3000, 1e4, 0, onepass, V_POW2); /* (x - mu) ** 2 */
    check_var(LOOM_FLOAT64, 2, 900, 5, 1e8, 3, onepass, V_CAST_BETWEEN); /* not folded: two passes */
  }
}

/* argmax as phase 0 (its record carries an index) and squared distances from its index */
static void test_argmax_leader(LoomDType t) {
  VarKernel v;
  var_kernel(&v, t, 1, 0, "1", "0", V_PLAIN, true);
  Emu e;
  if (!emu_build(&e, &v.kb.k)) {
    emu_free(&e);
    return;
  }
  enum { N = 3000 };
  double *x = malloc(N * sizeof *x), mu = 0, var = 0;
  float *xf = malloc(N * sizeof *xf), muf = 0, varf = 0;
  for (int i = 0; i < N; i++) x[i] = t == LOOM_FLOAT32 ? (double)(float)(50.0 * uniform()) : 50.0 * uniform();
  x[1234] = 1e3;
  x[2500] = 1e3; /* a tie after the first maximum (float32: parts split between them) */
  long double want = 0;
  for (int i = 0; i < N; i++) want += ((long double)x[i] - 1234.0L) * ((long double)x[i] - 1234.0L);
  want /= N;
  for (int i = 0; i < N; i++) xf[i] = (float)x[i];
  int64_t shape[1] = {N}, strides[3] = {1, 0, 0};
  void *bases[3] = {x, &mu, &var};
  if (t == LOOM_FLOAT32) bases[0] = xf, bases[1] = &muf, bases[2] = &varf;
  int parts[3] = {0, 2, 5};
  for (int pi = 0; pi < 3; pi++) {
    mu = var = muf = varf = -1;
    emu_run(&e, &v.kb.k, shape, bases, strides, parts[pi], pi == 2);
    double gm = t == LOOM_FLOAT32 ? muf : mu, gv = t == LOOM_FLOAT32 ? varf : var;
    CHECK(gm == 1234.0 && close_to(gv, want, t == LOOM_FLOAT32 ? 1e-5 : 1e-12),
          "argmax leader (%s), parts %d: index %g, var %.17g want %.17Lg", loom_dtype_name(t), parts[pi], gm, gv, want);
  }
  free(x);
  free(xf);
  emu_free(&e);
}

/* LayerNorm-like: a map phase after the folded variance reads its value from the phase-0 record */
static void test_map_after(void) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT64, 0, "a1"), bo = kb_buf(&kb, LOOM_FLOAT64, 1, "a1");
  int x = kb_load(&kb, bx, LOOM_FLOAT64);
  int n = kb_cast(&kb, kb_ins(&kb, KI_REDSIZE, LOOM_INT64, 0, -1, -1), LOOM_FLOAT64);
  int mu = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT64, kb_acc(&kb, 0, LOOM_FLOAT64), n);
  int d = kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT64, x, mu);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, x);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT64, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT64, d, d));
  int var = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT64, kb_acc(&kb, 1, LOOM_FLOAT64), n);
  kb_store(&kb, KP_MAP, bo, kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT64, d, var));
  Emu e;
  if (!emu_build(&e, &kb.k)) {
    emu_free(&e);
    return;
  }
  enum { R = 3, C = 2000 };
  double *xs = malloc(R * C * sizeof *xs), *out = calloc(R * C, sizeof *out);
  for (int i = 0; i < R * C; i++) xs[i] = 1e6 + normal();
  int64_t shape[2] = {R, C}, strides[4] = {C, 1, C, 1};
  void *bases[2] = {xs, out};
  for (int parts = 0; parts <= 4; parts += 4) {
    memset(out, 0, R * C * sizeof *out);
    emu_run(&e, &kb.k, shape, bases, strides, parts, false);
    bool ok = true;
    for (int r = 0; r < R && ok; r++) {
      long double m, v = ref_var(xs + r * C, C, 1, &m);
      for (int c = 0; c < C && ok; c++) {
        long double want = ((long double)xs[r * C + c] - m) / v;
        ok = fabsl(out[r * C + c] - want) <= 1e-7L * fabsl(want) + 1e-8L; /* x - mean: the mean's rounding */
        if (!ok) printf("  row %d col %d: %.17g want %.17Lg\n", r, c, out[r * C + c], want);
      }
    }
    CHECK(ok, "map after the folded variance, parts %d", parts);
  }
  free(xs);
  free(out);
  emu_free(&e);
}

/* argmax per row through `main` (16-byte loads when the rows allow, the scalar loop otherwise): ties
 * (the first wins), NaN (the first NaN wins), rows of -inf only (index 0), rows not whole vectors */
static void test_argmax_rows(void) {
  for (int odd = 0; odd < 2; odd++) {
    KB kb;
    kb_init(&kb, 2, 1, 32);
    int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&kb, LOOM_INT64, 1, "10");
    kb_reduce(&kb, LOOM_REDUCE_ARGMAX, LOOM_FLOAT32, kb_load(&kb, bx, LOOM_FLOAT32));
    kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_INT64));
    Emu e;
    if (!emu_build(&e, &kb.k)) {
      emu_free(&e);
      return;
    }
    enum { R = 6 };
    int C = odd ? 1001 : 1000;
    float *x = malloc((size_t)R * C * sizeof *x);
    int64_t out[R];
    for (int i = 0; i < R * C; i++) x[i] = (float)floor(8.0 * uniform()); /* many ties */
    x[0 * C + 500] = 9.0f;                                                /* row 0: one max */
    x[1 * C + 3] = NAN, x[1 * C + 700] = NAN;                             /* row 1: first NaN */
    for (int c = 0; c < C; c++) x[2 * C + c] = -INFINITY;                 /* row 2: -inf only */
    x[3 * C + C - 1] = 100.0f;                                            /* row 3: the last point */
    int64_t shape[2] = {R, C}, strides[4] = {C, 1, 1, 0};
    void *bases[2] = {x, out};
    emu_run(&e, &kb.k, shape, bases, strides, 0, false);
    for (int r = 0; r < R; r++) {
      int64_t want = 0;
      for (int c = 1; c < C; c++) {
        float v = x[r * C + c], best = x[r * C + want];
        if (isnan(best)) break;
        if (isnan(v) || v > best) want = c;
      }
      CHECK(out[r] == want, "argmax row %d of %d columns: %lld, want %lld", r, C, (long long)out[r], (long long)want);
    }
    free(x);
    emu_free(&e);
  }
}

/* argmin / argmax per row of several dtypes through `main` (packed (key, index) block folds where the value
 * has at most 32 bits and the kernel 32-bit indices, the (value, index) pairs otherwise): -0.0 and +0.0
 * tie (the first wins), NaN first wins, infinities, integer extremes; against a reference loop */
static void test_arg_rows_dtypes(void) {
  static const LoomDType ts[] = {LOOM_FLOAT32, LOOM_INT32, LOOM_UINT8, LOOM_INT8, LOOM_UINT32, LOOM_FLOAT64};
  for (int ti = 0; ti < (int)(sizeof ts / sizeof ts[0]); ti++)
    for (int op = 0; op < 2; op++)
      for (int ib = 32; ib <= 64; ib += 32) {
        LoomDType t = ts[ti];
        LoomReduceOp rop = op ? LOOM_REDUCE_ARGMAX : LOOM_REDUCE_ARGMIN;
        KB kb;
        kb_init(&kb, 2, 1, ib);
        int bx = kb_buf(&kb, t, 0, "a1"), bo = kb_buf(&kb, LOOM_INT64, 1, "10");
        kb_reduce(&kb, rop, t, kb_load(&kb, bx, t));
        kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_INT64));
        Emu e;
        if (!emu_build(&e, &kb.k)) {
          emu_free(&e);
          return;
        }
        enum { R = 7, C = 64 };
        double v[R * C];
        bool flt = t == LOOM_FLOAT32 || t == LOOM_FLOAT64;
        double lo = t == LOOM_INT32 ? -2147483648.0 : t == LOOM_INT8 ? -128 : 0;
        double hi = t == LOOM_INT32 ? 2147483647.0 : t == LOOM_INT8 ? 127 : t == LOOM_UINT8 ? 255
                  : t == LOOM_UINT32 ? 4294967295.0 : 1e30;
        for (int i = 0; i < R * C; i++) v[i] = flt ? floor(16.0 * uniform()) - 8.0 : floor(lo + (hi - lo) * uniform());
        for (int c = 0; c < C; c++) v[0 * C + c] = (c % 2) ? 0.0 : -0.0;       /* row 0: zeros of both signs */
        for (int c = 0; c < C; c++) v[1 * C + c] = op ? lo : hi;                /* row 1: all the worst value */
        v[2 * C + 5] = op ? hi : lo, v[2 * C + 40] = op ? hi : lo;              /* row 2: extremes, tie */
        if (flt) {
          v[3 * C + 9] = NAN, v[3 * C + 20] = NAN;                              /* row 3: first NaN */
          v[4 * C + 0] = op ? -INFINITY : INFINITY, v[4 * C + 63] = op ? INFINITY : -INFINITY;
          for (int c = 0; c < C; c++) v[5 * C + c] = op ? -INFINITY : INFINITY; /* row 5: the identity only */
          v[6 * C + 31] = -0.0, v[6 * C + 32] = 0.0;                            /* row 6: an extreme of 0 */
          for (int c = 0; c < C; c++)
            if (c != 31 && c != 32) v[6 * C + c] = op ? -1.0 - c : 1.0 + c;
        }
        unsigned char mem[R * C * 8];
        for (int i = 0; i < R * C; i++) {
          switch (t) {
          case LOOM_FLOAT32: ((float *)mem)[i] = (float)v[i]; break;
          case LOOM_FLOAT64: ((double *)mem)[i] = v[i]; break;
          case LOOM_INT32: ((int32_t *)mem)[i] = (int32_t)v[i]; break;
          case LOOM_UINT32: ((uint32_t *)mem)[i] = (uint32_t)v[i]; break;
          case LOOM_INT8: ((int8_t *)mem)[i] = (int8_t)v[i]; break;
          default: ((uint8_t *)mem)[i] = (uint8_t)v[i]; break;
          }
        }
        int64_t out[R], shape[2] = {R, C}, strides[4] = {C, 1, 1, 0};
        void *bases[2] = {mem, out};
        emu_run(&e, &kb.k, shape, bases, strides, 0, false);
        for (int r = 0; r < R; r++) {
          int64_t want = 0;
          for (int c = 1; c < C; c++) {
            double x = v[r * C + c], best = v[r * C + want];
            if (isnan(best)) break;
            if (isnan(x) || (op ? x > best : x < best)) want = c;
          }
          CHECK(out[r] == want, "%s %s row %d (index bits %d): %lld, want %lld", op ? "argmax" : "argmin",
                loom_dtype_name(t), r, ib, (long long)out[r], (long long)want);
        }
        emu_free(&e);
      }
}

/* LayerNorm with weight and bias, (x - mu) / sqrt(var + eps) * w + b, through the cached vector entry
 * (block mode; one thread a block here, so rows of up to GPU_CACHE_K points): the weight and bias, read
 * only by the map, are loaded group by group inside it (LOOM_GPU_CACHED_DEFER); against a long double
 * reference, with rows of 4, 8, 12 and 16 points (the groups past a short row's last are clamped) */
static void test_cached_layernorm(void) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bw = kb_buf(&kb, LOOM_FLOAT32, 0, "01");
  int bb = kb_buf(&kb, LOOM_FLOAT32, 0, "01"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "a1");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  int n = kb_cast(&kb, kb_ins(&kb, KI_REDSIZE, LOOM_INT64, 0, -1, -1), LOOM_FLOAT32);
  int mu = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, kb_acc(&kb, 0, LOOM_FLOAT32), n);
  int d = kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT32, x, mu);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, x);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, d, d));
  int var = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, kb_acc(&kb, 1, LOOM_FLOAT32), n);
  int eps = kb_ins(&kb, KI_CONST, LOOM_FLOAT32, 0, -1, -1);
  kb.ins[eps].value.f = 1e-5;
  int den = kb_ins(&kb, KI_ELEM, LOOM_FLOAT32, LOOM_OP_SQRT, kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT32, var, eps), -1);
  int y = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, d, den);
  y = kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, y, kb_load(&kb, bw, LOOM_FLOAT32));
  y = kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT32, y, kb_load(&kb, bb, LOOM_FLOAT32));
  kb_store(&kb, KP_MAP, bo, y);
  Emu e;
  if (!emu_build(&e, &kb.k)) {
    emu_free(&e);
    return;
  }
  CHECK(e.cachedv != NULL && e.gk.cache_lanes == 4, "the cached vector entry exists (lanes %d)", e.gk.cache_lanes);
  if (!e.cachedv) {
    emu_free(&e);
    return;
  }
  enum { R = 5, CMAX = 16 };
  for (int C = 4; C <= CMAX; C += 4) {
    _Alignas(16) float xs[R * CMAX], w[CMAX], bias[CMAX], out[R * CMAX];
    for (int i = 0; i < R * C; i++) xs[i] = (float)(3.0 + 2.0 * normal());
    for (int c = 0; c < C; c++) w[c] = (float)(0.5 + uniform()), bias[c] = (float)normal();
    for (int i = 0; i < R * C; i++) out[i] = -999.0f;
    uint64_t words[64] = {0};
    int64_t shape[2] = {R, C}, strides[8] = {C, 1, 0, 1, 0, 1, C, 1};
    void *bases[4] = {xs, w, bias, out};
    int nd = 2, nb = 4;
    for (int dd = 0; dd < nd; dd++) words[dd] = (uint64_t)shape[dd];
    for (int b = 0; b < nb; b++) words[nd + b] = (uint64_t)(uintptr_t)bases[b];
    for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
    launch(&e, e.cachedv, R, words); /* extra words 0: block mode */
    bool ok = true;
    for (int r = 0; r < R && ok; r++) {
      long double m = 0, v = 0;
      for (int c = 0; c < C; c++) m += xs[r * C + c];
      m /= C;
      for (int c = 0; c < C; c++) v += (xs[r * C + c] - m) * (xs[r * C + c] - m);
      v /= C;
      for (int c = 0; c < C && ok; c++) {
        long double want = (xs[r * C + c] - m) / sqrtl(v + 1e-5L) * w[c] + bias[c];
        ok = fabsl(out[r * C + c] - want) <= 1e-5L * (1 + fabsl(want));
        if (!ok) printf("  C %d row %d col %d: %.9g want %.9Lg\n", C, r, c, out[r * C + c], want);
      }
    }
    CHECK(ok, "cached LayerNorm with weight and bias, rows of %d", C);
  }
  emu_free(&e);
}

/* The cached vector entry's peel (codegen/gpu_cached.c): rows whose start is not on a vector boundary and
 * whose length is not a multiple of the lanes, LayerNorm with a weight and bias (loaded point by point in
 * the map: the extra point's own loads) in block mode (extra word 2 = 0) and the short-row mode with one
 * lane a row (= 1). One lane a block here: rows whose extra points (head + tail) are at most 1 and whose
 * vectors fit the lane's 4 (head 0: lengths 4k and 4k + 1; head 1: 4k + 1). Every buffer on one phase:
 * x and out start `off` points past a 16-byte boundary, rows of 20 points; w and bias at the same phase. */
static void test_cached_peel(void) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bw = kb_buf(&kb, LOOM_FLOAT32, 0, "01");
  int bb = kb_buf(&kb, LOOM_FLOAT32, 0, "01"), bo = kb_buf(&kb, LOOM_FLOAT32, 1, "a1");
  int x = kb_load(&kb, bx, LOOM_FLOAT32);
  int n = kb_cast(&kb, kb_ins(&kb, KI_REDSIZE, LOOM_INT64, 0, -1, -1), LOOM_FLOAT32);
  int mu = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, kb_acc(&kb, 0, LOOM_FLOAT32), n);
  int d = kb_bin(&kb, LOOM_OP_SUB, LOOM_FLOAT32, x, mu);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, x);
  kb_reduce(&kb, LOOM_REDUCE_SUM, LOOM_FLOAT32, kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, d, d));
  int var = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, kb_acc(&kb, 1, LOOM_FLOAT32), n);
  int eps = kb_ins(&kb, KI_CONST, LOOM_FLOAT32, 0, -1, -1);
  kb.ins[eps].value.f = 1e-5;
  int den = kb_ins(&kb, KI_ELEM, LOOM_FLOAT32, LOOM_OP_SQRT, kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT32, var, eps), -1);
  int y = kb_bin(&kb, LOOM_OP_TRUEDIV, LOOM_FLOAT32, d, den);
  y = kb_bin(&kb, LOOM_OP_MUL, LOOM_FLOAT32, y, kb_load(&kb, bw, LOOM_FLOAT32));
  y = kb_bin(&kb, LOOM_OP_ADD, LOOM_FLOAT32, y, kb_load(&kb, bb, LOOM_FLOAT32));
  kb_store(&kb, KP_MAP, bo, y);
  Emu e;
  if (!emu_build(&e, &kb.k)) {
    emu_free(&e);
    return;
  }
  if (!e.cachedv) {
    emu_free(&e);
    return;
  }
  enum { R = 5, S = 20, PAD = 8 };
  int runs = 0;
  for (int off = 0; off < 4; off++)
    for (int C = 1; C <= 17; C++) {
      int h = (4 - off) % 4;
      if (h > C) continue;
      int nvec = (C - h) / 4, extras = C - 4 * nvec;
      if (nvec < 1 || nvec > 4 || extras > 1) continue;
      for (int group = 0; group < 2; group++) {
        _Alignas(16) float xs[R * S + PAD], w[S + PAD], bias[S + PAD], out[R * S + PAD];
        for (int i = 0; i < R * S + PAD; i++) xs[i] = (float)(3.0 + 2.0 * normal()), out[i] = -999.0f;
        for (int c = 0; c < S + PAD; c++) w[c] = (float)(0.5 + uniform()), bias[c] = (float)normal();
        uint64_t words[64] = {0};
        int64_t shape[2] = {R, C}, strides[8] = {S, 1, 0, 1, 0, 1, S, 1};
        void *bases[4] = {xs + off, w + off, bias + off, out + off};
        int nd = 2, nb = 4;
        for (int dd = 0; dd < nd; dd++) words[dd] = (uint64_t)shape[dd];
        for (int b = 0; b < nb; b++) words[nd + b] = (uint64_t)(uintptr_t)bases[b];
        for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
        words[nd + nb + nb * nd + 2] = (uint64_t)group; /* 0: block mode; 1: a lane a row */
        launch(&e, e.cachedv, R, words);
        bool ok = true;
        for (int r = 0; r < R && ok; r++) {
          const float *xr = xs + off + r * S;
          long double m = 0, v = 0;
          for (int c = 0; c < C; c++) m += xr[c];
          m /= C;
          for (int c = 0; c < C; c++) v += (xr[c] - m) * (xr[c] - m);
          v /= C;
          for (int c = 0; c < C && ok; c++) {
            long double want = (xr[c] - m) / sqrtl(v + 1e-5L) * w[off + c] + bias[off + c];
            float got = out[off + r * S + c];
            ok = fabsl(got - want) <= 1e-5L * (1 + fabsl(want));
            if (!ok) printf("  off %d C %d group %d row %d col %d: %.9g want %.9Lg\n", off, C, group, r, c, got, want);
          }
          for (int c = C; c < S && ok && off + r * S + c < R * S + PAD; c++) /* nothing past the row */
            ok = out[off + r * S + c] == -999.0f;
        }
        for (int i = 0; i < off && ok; i++) ok = out[i] == -999.0f; /* nor before the first row */
        CHECK(ok, "peeled cached LayerNorm: rows of %d starting %d points past a vector, %s", C, off,
              group ? "a lane a row" : "block mode");
        runs++;
      }
    }
  CHECK(runs >= 20, "peel cases run: %d", runs);
  emu_free(&e);
}

/* argmax of peeled rows (one lane a block: the head or tail point is the lane's extra point): a tie between
 * the extra point and a vector point keeps the smaller index, before (head) or after (tail) the vectors;
 * a NaN in the extra point is the first NaN. */
static void test_cached_peel_argmax(void) {
  KB kb;
  kb_init(&kb, 2, 1, 32);
  int bx = kb_buf(&kb, LOOM_FLOAT32, 0, "a1"), bo = kb_buf(&kb, LOOM_INT64, 1, "10");
  kb_reduce(&kb, LOOM_REDUCE_ARGMAX, LOOM_FLOAT32, kb_load(&kb, bx, LOOM_FLOAT32));
  kb_store(&kb, KP_FINAL, bo, kb_acc(&kb, 0, LOOM_INT64));
  Emu e;
  if (!emu_build(&e, &kb.k) || !e.cachedv) {
    emu_free(&e);
    return;
  }
  enum { R = 4, S = 20 };
  for (int off = 0; off < 4; off += 3) /* head 0 (tail extra) and head 1 (head extra) */
    for (int C = 5; C <= 17; C += 4)
      for (int group = 0; group < 2; group++) {
        _Alignas(16) float xs[R * S + 8];
        for (int i = 0; i < R * S + 8; i++) xs[i] = (float)floor(4.0 * uniform());
        float *x = xs + off;
        int last = C - 1;
        x[0 * S + 0] = 7.0f, x[0 * S + 2] = 7.0f;       /* row 0: the head point ties a later one */
        x[1 * S + 1] = 7.0f, x[1 * S + last] = 7.0f;    /* row 1: a vector point ties the tail point */
        x[2 * S + last] = 9.0f;                          /* row 2: the tail point alone */
        x[3 * S + 0] = NAN, x[3 * S + 2] = NAN;          /* row 3: NaN at the head point first */
        int64_t out[R];
        uint64_t words[64] = {0};
        int64_t shape[2] = {R, C}, strides[4] = {S, 1, 1, 0};
        void *bases[2] = {x, out};
        for (int dd = 0; dd < 2; dd++) words[dd] = (uint64_t)shape[dd];
        for (int b = 0; b < 2; b++) words[2 + b] = (uint64_t)(uintptr_t)bases[b];
        for (int i = 0; i < 4; i++) words[4 + i] = (uint64_t)strides[i];
        words[4 + 4 + 2] = (uint64_t)group;
        launch(&e, e.cachedv, R, words);
        for (int r = 0; r < R; r++) {
          int64_t want = 0;
          for (int c = 1; c < C; c++) {
            float v = x[r * S + c], best = x[r * S + want];
            if (isnan(best)) break;
            if (isnan(v) || v > best) want = c;
          }
          CHECK(out[r] == want, "peeled argmax row %d of %d starting %d past a vector (%s): %lld, want %lld", r, C, off,
                group ? "a lane a row" : "block mode", (long long)out[r], (long long)want);
        }
      }
  emu_free(&e);
}

int main(void) {
  emu_init();
  const char *env = getenv("LOOM_GPU_ONEPASS_VAR");
  bool off = env && strcmp(env, "0") == 0;
  if (off) {
    test_switch_off();
  } else {
    test_schedule_facts();
    test_argmax_leader(LOOM_FLOAT64);
    test_argmax_leader(LOOM_FLOAT32);
    test_map_after();
  }
  test_values(!off);
  test_argmax_rows();
  test_arg_rows_dtypes();
  test_cached_layernorm();
  test_cached_peel();
  test_cached_peel_argmax();
  printf("%s%d passed, %d failed\n", off ? "(LOOM_GPU_ONEPASS_VAR=0) " : "", g_pass, g_fail);
  if (off) return g_fail ? 1 : 0;
  bool child_ok = emu_rerun_with("test_gpu_onepass", "LOOM_GPU_ONEPASS_VAR", "0"); /* the switch off, in a child */
  return g_fail || !child_ok ? 1 : 0;
}
