/* SPDX-License-Identifier: Apache-2.0 */
/* test_reduce.c: reductions through the public API against loops written here.
 *
 * Approach: one checker (check_reduce) builds input -> [view] -> reduce, evaluates it, and compares
 * with a reference that walks the input element by element through its own LoomArray view (so the
 * same reference serves contiguous, transposed, sliced and negative-stride inputs). Sums are
 * accumulated in long double with compensation, so the reference is far more accurate than any
 * reasonable kernel; float sums must be within a relative 1e-12. min/max/argmin/argmax/any/all are
 * exact. Then: dtype widening and dtype= overrides, empty arrays, NaN rules, a 10^7-element sum, the
 * accuracy of float32 sums on every layout, and the fused softmax and x - mean(x) patterns.
 */
#include "test_common.h"

/* ---- the reference ---------------------------------------------------------------------------------- */
typedef struct RefAcc {
  long double sum, comp, prod;
  double best;
  int64_t best_idx, count;
  bool any, all, has_nan, first;
} RefAcc;

static void acc_init(RefAcc *a) {
  memset(a, 0, sizeof *a);
  a->prod = 1;
  a->all = true;
  a->first = true;
  a->best_idx = -1;
}

static void acc_add(RefAcc *a, LoomReduceOp op, double v, int64_t idx) {
  long double y = (long double)v - a->comp, t = a->sum + y; /* compensated sum */
  a->comp = (t - a->sum) - y;
  a->sum = t;
  a->prod *= v;
  a->count++;
  a->any |= v != 0;
  a->all &= v != 0;
  if (a->has_nan) return;
  if (isnan(v)) {
    a->has_nan = true;
    a->best = v;
    a->best_idx = idx;
    return;
  }
  bool better = a->first || (op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_ARGMIN ? v < a->best : v > a->best);
  if (better) {
    a->best = v;
    a->best_idx = idx;
    a->first = false;
  }
}

static double acc_result(const RefAcc *a, LoomReduceOp op) {
  switch (op) {
  case LOOM_REDUCE_SUM: return (double)a->sum;
  case LOOM_REDUCE_PROD: return (double)a->prod;
  case LOOM_REDUCE_MIN: case LOOM_REDUCE_MAX: return a->best;
  case LOOM_REDUCE_MEAN: return a->count ? (double)(a->sum / a->count) : NAN;
  case LOOM_REDUCE_ANY: return a->any;
  case LOOM_REDUCE_ALL: return a->all;
  case LOOM_REDUCE_ARGMIN: case LOOM_REDUCE_ARGMAX: return (double)a->best_idx;
  default: return NAN;
  }
}

/* Reduces view x over the axes in mask; results (row-major over the kept dims) into vals. */
static int64_t ref_reduce(LoomReduceOp op, const LoomArray *x, uint32_t mask, double *vals) {
  int64_t nout = 1, nin = tc_numel(x->ndim, x->shape);
  for (int d = 0; d < x->ndim; d++)
    if (!(mask & (1u << d))) nout *= x->shape[d];
  RefAcc *acc = malloc(sizeof *acc * (size_t)(nout > 0 ? nout : 1));
  if (!acc) return -1;
  for (int64_t o = 0; o < nout; o++) acc_init(&acc[o]);
  for (int64_t i = 0; i < nin; i++) {
    int64_t rem = i, o = 0, omul = 1, r = 0, rmul = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
      int64_t id = rem % x->shape[d];
      rem /= x->shape[d];
      if (mask & (1u << d)) {
        r += id * rmul;
        rmul *= x->shape[d];
      } else {
        o += id * omul;
        omul *= x->shape[d];
      }
    }
    acc_add(&acc[o], op, tc_get_f(x, i), r);
  }
  for (int64_t o = 0; o < nout; o++) vals[o] = acc_result(&acc[o], op);
  free(acc);
  return nout;
}

/* Reduces node xn (whose values are the view ref) and compares. tol: relative tolerance for sums,
 * products and means; other ops are exact. */
static void check_reduce(const char *what, LoomGraph *g, LoomNode xn, const LoomArray *ref,
                         LoomReduceOp op, int naxes, const int32_t *axes, int keepdims,
                         LoomDType want_dtype, double tol) {
  char name[160];
  snprintf(name, sizeof name, "%s: reduce op %d axes(%d)%s", what, (int)op, naxes,
           keepdims ? " keepdims" : "");
  uint32_t mask = 0;
  for (int k = 0; k < naxes; k++) mask |= 1u << (axes[k] < 0 ? axes[k] + ref->ndim : axes[k]);
  if (naxes == 0) mask = (1u << ref->ndim) - 1;
  int64_t want_shape[LOOM_MAX_RANK];
  int wnd = 0;
  for (int d = 0; d < ref->ndim; d++) {
    if (!(mask & (1u << d))) want_shape[wnd++] = ref->shape[d];
    else if (keepdims) want_shape[wnd++] = 1;
  }
  LoomNode y;
  if (!CHECK(loom_reduce(g, op, xn, naxes, naxes ? axes : NULL, keepdims, &y) == LOOM_OK, "%s: %s",
             name, loom_last_error(tc_ctx)))
    return;
  if (!tc_check_info(g, y, want_dtype, wnd, want_shape, name)) return;
  int64_t nout = tc_numel(wnd, want_shape);
  double *want = malloc(sizeof(double) * (size_t)(nout > 0 ? nout : 1));
  LoomArray out;
  if (want && ref_reduce(op, ref, mask, want) == nout &&
      CHECK(tc_eval1(g, y, &out) == LOOM_OK, "%s: eval: %s", name, loom_last_error(tc_ctx))) {
    for (int64_t o = 0; o < nout; o++) {
      double got = tc_get_f(&out, o);
      bool ok;
      if (op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_PROD || op == LOOM_REDUCE_MEAN)
        ok = tc_is_float(want_dtype)
                 ? tc_close_rel(got, tc_round_to(want_dtype, want[o]), tol, 1e-300)
                 : got == want[o];
      else ok = (isnan(got) && isnan(want[o])) || got == want[o];
      CHECK(ok, "%s: out[%" PRId64 "] = %.17g, want %.17g", name, o, got, want[o]);
    }
    loom_array_free(tc_ctx, &out);
  }
  free(want);
}

static const LoomReduceOp all_reduce_ops[] = {
    LOOM_REDUCE_SUM, LOOM_REDUCE_PROD, LOOM_REDUCE_MIN,    LOOM_REDUCE_MAX,   LOOM_REDUCE_MEAN,
    LOOM_REDUCE_ANY, LOOM_REDUCE_ALL,  LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ARGMAX};

static LoomDType float_result(LoomReduceOp op, LoomDType in) {
  if (op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL) return LOOM_BOOL;
  if (op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX) return LOOM_INT64;
  return in;
}

/* Every op over several axis sets of a 3-D float64 array, contiguous and through views. */
static void test_axes_and_views(void) {
  int64_t shape[3] = {3, 4, 5};
  LoomArray x = tc_new(LOOM_FLOAT64, 3, shape);
  uint64_t seed = 42;
  for (int64_t i = 0; i < 60; i++) tc_set_f(&x, i, (double)(int)(tc_rand_unit(&seed) * 40) / 8 - 2);
  tc_set_f(&x, 7, 0.0); /* zeros for any/all */
  tc_set_f(&x, 13, 0.0);
  LoomGraph *g = NULL;
  LoomNode xn;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) goto out;
  CHECK_OK(loom_input(g, &x, &xn));
  int32_t ax0[] = {0}, ax1[] = {1}, ax02[] = {0, 2}, axm1[] = {-1}, axm3[] = {-3, -1};
  struct { int n; const int32_t *axes; } sets[] = {{0, NULL}, {1, ax0}, {1, ax1}, {2, ax02}, {1, axm1},
                                                   {2, axm3}};
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
    for (size_t o = 0; o < sizeof all_reduce_ops / sizeof all_reduce_ops[0]; o++) {
      LoomReduceOp op = all_reduce_ops[o];
      if ((op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX) && sets[s].n > 1) continue;
      for (int keep = 0; keep < 2; keep++)
        check_reduce("3-D f64", g, xn, &x, op, sets[s].n, sets[s].axes, keep,
                     float_result(op, LOOM_FLOAT64), 1e-13);
    }
  /* A transposed input (permute in the graph), reduced over each axis. */
  LoomNode tn;
  int32_t perm[3] = {2, 0, 1};
  if (CHECK_OK(loom_permute(g, xn, perm, &tn))) {
    LoomArray tv = x; /* the same memory seen through the permutation */
    for (int d = 0; d < 3; d++) {
      tv.shape[d] = x.shape[perm[d]];
      tv.strides[d] = x.strides[perm[d]];
    }
    for (size_t o = 0; o < sizeof all_reduce_ops / sizeof all_reduce_ops[0]; o++)
      for (int32_t a = 0; a < 3; a++)
        check_reduce("permuted", g, tn, &tv, all_reduce_ops[o], 1, &a, 0,
                     float_result(all_reduce_ops[o], LOOM_FLOAT64), 1e-13);
    check_reduce("permuted all", g, tn, &tv, LOOM_REDUCE_ARGMAX, 0, NULL, 0, LOOM_INT64, 0);
    check_reduce("permuted all", g, tn, &tv, LOOM_REDUCE_SUM, 0, NULL, 1, LOOM_FLOAT64, 1e-13);
  }
  /* A sliced input: x[::2, 1:, ::-2]. */
  int64_t start[3] = {LOOM_SLICE_NONE, 1, LOOM_SLICE_NONE}, stop[3] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE, LOOM_SLICE_NONE},
          step[3] = {2, 1, -2};
  LoomNode sn;
  if (CHECK_OK(loom_slice(g, xn, start, stop, step, &sn))) {
    LoomArray sv = x;
    sv.shape[0] = 2;
    sv.strides[0] = 2 * x.strides[0];
    sv.shape[1] = 3;
    sv.shape[2] = 3;
    sv.strides[2] = -2;
    sv.data = (double *)x.data + 1 * x.strides[1] + 4;
    int32_t ax[] = {0}, bx[] = {2}, cx[] = {0, 2};
    for (size_t o = 0; o < sizeof all_reduce_ops / sizeof all_reduce_ops[0]; o++) {
      LoomReduceOp op = all_reduce_ops[o];
      LoomDType rt = float_result(op, LOOM_FLOAT64);
      check_reduce("sliced", g, sn, &sv, op, 1, ax, 0, rt, 1e-13);
      check_reduce("sliced", g, sn, &sv, op, 1, bx, 1, rt, 1e-13);
      if (op != LOOM_REDUCE_ARGMIN && op != LOOM_REDUCE_ARGMAX)
        check_reduce("sliced", g, sn, &sv, op, 2, cx, 0, rt, 1e-13);
      check_reduce("sliced", g, sn, &sv, op, 0, NULL, 0, rt, 1e-13);
    }
  }
  loom_graph_destroy(g);
  g = NULL;
  /* An input array that is itself non-contiguous with negative strides: (4,5) read backwards. */
  if (CHECK_OK(loom_graph_create(tc_ctx, &g))) {
    LoomArray nv = x;
    nv.ndim = 2;
    nv.shape[0] = 4;
    nv.shape[1] = 5;
    nv.strides[0] = -5;
    nv.strides[1] = -1;
    nv.data = (double *)x.data + 19;
    LoomNode nn;
    if (CHECK_OK(loom_input(g, &nv, &nn))) {
      int32_t a0[] = {0}, a1[] = {1};
      for (size_t o = 0; o < sizeof all_reduce_ops / sizeof all_reduce_ops[0]; o++) {
        LoomReduceOp op = all_reduce_ops[o];
        check_reduce("negative strides", g, nn, &nv, op, 1, a0, 0, float_result(op, LOOM_FLOAT64), 1e-13);
        check_reduce("negative strides", g, nn, &nv, op, 1, a1, 1, float_result(op, LOOM_FLOAT64), 1e-13);
      }
    }
    loom_graph_destroy(g);
  }
out:
  tc_free(&x);
}

/* Empty arrays: identities, and errors for min/max/argmin/argmax of nothing. */
static void test_empty(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray e1 = tc_new1(LOOM_FLOAT64, 0), e2 = tc_new2(LOOM_FLOAT64, 3, 0);
  LoomNode n1, n2, y;
  CHECK_OK(loom_input(g, &e1, &n1));
  CHECK_OK(loom_input(g, &e2, &n2));
  struct { LoomReduceOp op; double want; LoomDType t; } idents[] = {
      {LOOM_REDUCE_SUM, 0.0, LOOM_FLOAT64}, {LOOM_REDUCE_PROD, 1.0, LOOM_FLOAT64},
      {LOOM_REDUCE_MEAN, NAN, LOOM_FLOAT64}, {LOOM_REDUCE_ANY, 0.0, LOOM_BOOL},
      {LOOM_REDUCE_ALL, 1.0, LOOM_BOOL}};
  for (size_t k = 0; k < sizeof idents / sizeof idents[0]; k++) {
    LoomArray out;
    if (CHECK_OK(loom_reduce(g, idents[k].op, n1, 0, NULL, 0, &y)) &&
        tc_check_info(g, y, idents[k].t, 0, NULL, "empty all-axes") && CHECK_OK(tc_eval1(g, y, &out))) {
      double got = tc_get_f(&out, 0);
      CHECK((isnan(got) && isnan(idents[k].want)) || got == idents[k].want,
            "reduce op %d of empty: got %g want %g", (int)idents[k].op, got, idents[k].want);
      loom_array_free(tc_ctx, &out);
    }
    int32_t a1 = 1, a0 = 0;
    if (CHECK_OK(loom_reduce(g, idents[k].op, n2, 1, &a1, 0, &y)) &&
        tc_check_info(g, y, idents[k].t, 1, (const int64_t[]){3}, "empty (3,0) axis 1") &&
        CHECK_OK(tc_eval1(g, y, &out))) {
      for (int i = 0; i < 3; i++) {
        double got = tc_get_f(&out, i);
        CHECK((isnan(got) && isnan(idents[k].want)) || got == idents[k].want,
              "reduce op %d of (3,0) axis 1 [%d]: got %g want %g", (int)idents[k].op, i, got, idents[k].want);
      }
      loom_array_free(tc_ctx, &out);
    }
    /* Reducing the non-empty axis of an empty array gives an empty result. */
    if (CHECK_OK(loom_reduce(g, idents[k].op, n2, 1, &a0, 0, &y)) &&
        tc_check_info(g, y, idents[k].t, 1, (const int64_t[]){0}, "empty (3,0) axis 0") &&
        CHECK_OK(tc_eval1(g, y, &out)))
      loom_array_free(tc_ctx, &out);
  }
  LoomReduceOp bad[] = {LOOM_REDUCE_MIN, LOOM_REDUCE_MAX, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ARGMAX};
  for (size_t k = 0; k < 4; k++) {
    LoomStatus st = loom_reduce(g, bad[k], n1, 0, NULL, 0, &y);
    CHECK(st != LOOM_OK, "reduce op %d of an empty array must fail", (int)bad[k]);
    CHECK(strlen(loom_last_error(tc_ctx)) > 0, "empty min/max: message");
  }
  loom_graph_destroy(g);
  tc_free(&e1);
  tc_free(&e2);
}

/* NaN propagation in min/max, first NaN for argmax/argmin, ties: the first index. */
static void test_nan_and_ties(void) {
  double v[] = {1.0, 5.0, -2.0, 5.0, -2.0, NAN, 7.0, NAN};
  LoomArray x = tc_new1(LOOM_FLOAT64, 8), t = tc_new1(LOOM_FLOAT64, 5);
  for (int k = 0; k < 8; k++) tc_set_f(&x, k, v[k]);
  for (int k = 0; k < 5; k++) tc_set_f(&t, k, v[k]);
  LoomGraph *g = NULL;
  LoomNode xn, tn;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn)) &&
      CHECK_OK(loom_input(g, &t, &tn))) {
    for (size_t o = 0; o < sizeof all_reduce_ops / sizeof all_reduce_ops[0]; o++) {
      LoomReduceOp op = all_reduce_ops[o];
      check_reduce("with NaN", g, xn, &x, op, 0, NULL, 0, float_result(op, LOOM_FLOAT64), 1e-15);
      check_reduce("ties", g, tn, &t, op, 0, NULL, 0, float_result(op, LOOM_FLOAT64), 1e-15);
    }
    /* explicit expectations, in case the reference and Loom share a misreading */
    LoomNode y;
    LoomArray out;
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_ARGMAX, xn, 0, NULL, 0, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
      CHECK(tc_get_i(&out, 0) == 5, "argmax with NaN is the first NaN (5)");
      loom_array_free(tc_ctx, &out);
    }
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_ARGMIN, tn, 0, NULL, 0, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
      CHECK(tc_get_i(&out, 0) == 2, "argmin ties: first index (2)");
      loom_array_free(tc_ctx, &out);
    }
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_MAX, xn, 0, NULL, 0, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
      CHECK(isnan(tc_get_f(&out, 0)), "max with NaN is NaN");
      loom_array_free(tc_ctx, &out);
    }
  }
  if (g) loom_graph_destroy(g);
  tc_free(&x);
  tc_free(&t);
}

/* Result dtypes of integer reductions and dtype= overrides, with values. */
static void test_int_dtypes(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray i8 = tc_new2(LOOM_INT8, 3, 4), u8 = tc_new2(LOOM_UINT8, 3, 4), b = tc_new2(LOOM_BOOL, 3, 4),
            i32 = tc_new2(LOOM_INT32, 3, 4), i16 = tc_new2(LOOM_INT16, 3, 4),
            f32 = tc_new2(LOOM_FLOAT32, 3, 4), f16 = tc_new1(LOOM_FLOAT16, 1000);
  for (int k = 0; k < 12; k++) {
    tc_set_i(&i8, k, k % 2 ? 100 : -100 + k);
    tc_set_i(&u8, k, 200 + k);
    tc_set_i(&b, k, k % 3 == 0);
    tc_set_i(&i32, k, (I128)k * 1000000 - 3);
    tc_set_i(&i16, k, k % 4 == 0 ? 300 : 2);
    tc_set_f(&f32, k, 0.1 * k);
  }
  for (int k = 0; k < 1000; k++) tc_set_f(&f16, k, 0.1);
  LoomNode ni8, nu8, nb, ni32, ni16, nf32, nf16;
  CHECK_OK(loom_input(g, &i8, &ni8));
  CHECK_OK(loom_input(g, &u8, &nu8));
  CHECK_OK(loom_input(g, &b, &nb));
  CHECK_OK(loom_input(g, &i32, &ni32));
  CHECK_OK(loom_input(g, &i16, &ni16));
  CHECK_OK(loom_input(g, &f32, &nf32));
  CHECK_OK(loom_input(g, &f16, &nf16));
  int32_t a1[] = {1}, a0[] = {0};
  check_reduce("int8 sum", g, ni8, &i8, LOOM_REDUCE_SUM, 1, a1, 0, LOOM_INT64, 0);
  check_reduce("int8 sum all", g, ni8, &i8, LOOM_REDUCE_SUM, 0, NULL, 0, LOOM_INT64, 0);
  check_reduce("uint8 sum", g, nu8, &u8, LOOM_REDUCE_SUM, 1, a0, 0, LOOM_UINT64, 0);
  check_reduce("bool sum", g, nb, &b, LOOM_REDUCE_SUM, 1, a1, 0, LOOM_INT64, 0);
  check_reduce("int32 mean", g, ni32, &i32, LOOM_REDUCE_MEAN, 1, a1, 0, LOOM_FLOAT64, 1e-15);
  check_reduce("int16 prod", g, ni16, &i16, LOOM_REDUCE_PROD, 1, a1, 0, LOOM_INT64, 0);
  check_reduce("int8 max", g, ni8, &i8, LOOM_REDUCE_MAX, 1, a1, 0, LOOM_INT8, 0);
  check_reduce("uint8 argmin", g, nu8, &u8, LOOM_REDUCE_ARGMIN, 1, a1, 0, LOOM_INT64, 0);
  check_reduce("bool any", g, nb, &b, LOOM_REDUCE_ANY, 1, a1, 0, LOOM_BOOL, 0);
  check_reduce("bool all", g, nb, &b, LOOM_REDUCE_ALL, 1, a0, 0, LOOM_BOOL, 0);
  check_reduce("float32 sum", g, nf32, &f32, LOOM_REDUCE_SUM, 1, a1, 0, LOOM_FLOAT32, 1e-6);
  /* dtype= overrides */
  LoomNode y;
  LoomArray out;
  if (CHECK_OK(loom_reduce_dtype(g, LOOM_REDUCE_SUM, ni8, 1, a1, 0, LOOM_INT8, &y)) &&
      tc_check_info(g, y, LOOM_INT8, 1, (const int64_t[]){3}, "sum(int8, dtype=int8)") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    for (int r = 0; r < 3; r++) {
      I128 s = 0;
      for (int c = 0; c < 4; c++) s += tc_get_i(&i8, r * 4 + c);
      CHECK(tc_get_i(&out, r) == tc_wrap(LOOM_INT8, (U128)s), "sum(int8, dtype=int8) wraps [%d]", r);
    }
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_reduce_dtype(g, LOOM_REDUCE_SUM, nf32, 0, NULL, 0, LOOM_FLOAT64, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT64, 0, NULL, "sum(float32, dtype=float64)") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    long double s = 0;
    for (int k = 0; k < 12; k++) s += tc_get_f(&f32, k);
    CHECK(tc_close_rel(tc_get_f(&out, 0), (double)s, 1e-15, 0), "sum(float32, dtype=float64) value");
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_reduce_dtype(g, LOOM_REDUCE_MEAN, ni32, 1, a1, 1, LOOM_FLOAT32, &y)))
    tc_check_info(g, y, LOOM_FLOAT32, 2, (const int64_t[]){3, 1}, "mean(int32, dtype=float32, keepdims)");
  /* float16 sums accumulate in float32: 1000 * float16(0.1) */
  if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, nf16, 0, NULL, 0, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT16, 0, NULL, "sum(float16)") && CHECK_OK(tc_eval1(g, y, &out))) {
    double want = tc_round_f16(1000 * tc_round_f16(0.1));
    CHECK(tc_close_ulp(LOOM_FLOAT16, tc_get_f(&out, 0), want, 1), "sum(float16): got %g want %g",
          tc_get_f(&out, 0), want);
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
  tc_free(&i8);
  tc_free(&u8);
  tc_free(&b);
  tc_free(&i32);
  tc_free(&i16);
  tc_free(&f32);
  tc_free(&f16);
}

/* 10^7 float64 elements: sum and mean within 1e-12 of a Kahan reference; rows and columns too. */
static void test_large_sum(void) {
  const int64_t n = 10000000;
  LoomArray x = tc_new1(LOOM_FLOAT64, n);
  if (!CHECK(x.data != NULL, "allocate 10^7 doubles")) return;
  double *p = x.data;
  uint64_t seed = 7;
  for (int64_t i = 0; i < n; i++) p[i] = tc_rand_unit(&seed) * 2.0 - 0.25;
  double sum = 0, c = 0; /* Kahan in float64 */
  for (int64_t i = 0; i < n; i++) {
    double y = p[i] - c, t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  LoomGraph *g = NULL;
  LoomNode xn, s, m;
  LoomArray out;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn))) {
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, xn, 0, NULL, 0, &s)) && CHECK_OK(tc_eval1(g, s, &out))) {
      CHECK(tc_close_rel(tc_get_f(&out, 0), sum, 1e-12, 0), "sum of 1e7: got %.17g want %.17g",
            tc_get_f(&out, 0), sum);
      loom_array_free(tc_ctx, &out);
    }
    if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_MEAN, xn, 0, NULL, 0, &m)) && CHECK_OK(tc_eval1(g, m, &out))) {
      CHECK(tc_close_rel(tc_get_f(&out, 0), sum / (double)n, 1e-12, 0), "mean of 1e7: got %.17g want %.17g",
            tc_get_f(&out, 0), sum / (double)n);
      loom_array_free(tc_ctx, &out);
    }
    /* The same data as (2000, 5000): row sums and column sums. */
    LoomNode r2;
    int64_t shp[2] = {2000, 5000};
    LoomArray view = x; /* the reference's view of the same memory */
    view.ndim = 2;
    view.shape[0] = 2000;
    view.shape[1] = 5000;
    view.strides[0] = 5000;
    view.strides[1] = 1;
    int32_t a0 = 0, a1 = 1;
    if (CHECK_OK(loom_reshape(g, xn, 2, shp, &r2))) {
      check_reduce("row sums 2000x5000", g, r2, &view, LOOM_REDUCE_SUM, 1, &a1, 0, LOOM_FLOAT64, 1e-12);
      check_reduce("column sums 2000x5000", g, r2, &view, LOOM_REDUCE_SUM, 1, &a0, 0, LOOM_FLOAT64, 1e-12);
    }
  }
  if (g) loom_graph_destroy(g);
  tc_free(&x);
}

/* float32 sums of a constant 0.1 (each addition of a long sequential fold rounds the same way, so its
 * error grows linearly) over 10^6 points in every layout: contiguous, a stride-7 slice, a permuted
 * 3-d input (all axes, and two axes), column sums (the outer strategy, narrow ones the column split).
 * The error must stay within 2 log2(n) eps of the sum (sum|x| here), the order of pairwise summation. */
static void test_float32_sum_accuracy(void) {
  const int64_t n = 1000000;
  int64_t shape[3] = {100, 100, 100};
  LoomArray x = tc_new(LOOM_FLOAT32, 3, shape);
  if (!CHECK(x.data != NULL, "allocate 10^6 floats")) return;
  for (int64_t i = 0; i < n; i++) ((float *)x.data)[i] = 0.1f;
  LoomGraph *g = NULL;
  LoomNode xn, tn, fn, sn, cn;
  double tol = 2 * log2((double)n) * FLT_EPSILON;
  if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &x, &xn))) {
    check_reduce("f32 0.1 contiguous", g, xn, &x, LOOM_REDUCE_SUM, 0, NULL, 0, LOOM_FLOAT32, tol);
    check_reduce("f32 0.1 mean", g, xn, &x, LOOM_REDUCE_MEAN, 0, NULL, 0, LOOM_FLOAT32, tol);
    int32_t perm[3] = {2, 0, 1}, ax01[] = {0, 1}, ax0[] = {0};
    if (CHECK_OK(loom_permute(g, xn, perm, &tn))) {
      LoomArray tv = x;
      for (int d = 0; d < 3; d++) tv.shape[d] = x.shape[perm[d]], tv.strides[d] = x.strides[perm[d]];
      check_reduce("f32 0.1 permuted", g, tn, &tv, LOOM_REDUCE_SUM, 0, NULL, 0, LOOM_FLOAT32, tol);
      check_reduce("f32 0.1 permuted", g, tn, &tv, LOOM_REDUCE_SUM, 2, ax01, 1, LOOM_FLOAT32, 2 * log2(1e4) * FLT_EPSILON);
    }
    int64_t flat[1] = {n}, start[1] = {LOOM_SLICE_NONE}, stop[1] = {LOOM_SLICE_NONE}, step[1] = {7};
    if (CHECK_OK(loom_reshape(g, xn, 1, flat, &fn)) && CHECK_OK(loom_slice(g, fn, start, stop, step, &sn))) {
      LoomArray sv = x;
      sv.ndim = 1, sv.shape[0] = (n + 6) / 7, sv.strides[0] = 7;
      check_reduce("f32 0.1 stride 7", g, sn, &sv, LOOM_REDUCE_SUM, 0, NULL, 0, LOOM_FLOAT32, tol);
    }
    for (int w = 0; w < 2; w++) { /* 10^4 x 100 (column split) and 2000 x 500 (outer strategy) */
      int64_t cs[2] = {w ? 2000 : 10000, w ? 500 : 100};
      if (!CHECK_OK(loom_reshape(g, xn, 2, cs, &cn))) continue;
      LoomArray cv = x;
      cv.ndim = 2, cv.shape[0] = cs[0], cv.shape[1] = cs[1], cv.strides[0] = cs[1], cv.strides[1] = 1;
      check_reduce("f32 0.1 column sums", g, cn, &cv, LOOM_REDUCE_SUM, 1, ax0, 0, LOOM_FLOAT32,
                   2 * log2((double)cs[0]) * FLT_EPSILON);
    }
  }
  if (g) loom_graph_destroy(g);
  tc_free(&x);
}

/* softmax(x, axis=1) and x - mean(x, axis=1, keepdims) as fused graphs, against loops. */
static void test_fused_patterns(void) {
  const int64_t R = 67, C = 301;
  LoomArray x = tc_new2(LOOM_FLOAT64, R, C);
  double *p = x.data;
  uint64_t seed = 3;
  for (int64_t i = 0; i < R * C; i++) p[i] = tc_rand_unit(&seed) * 20 - 10;
  LoomGraph *g = NULL;
  LoomNode xn, mx, sh, e, s, sm, mean, centered;
  int32_t a1 = 1;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g)) || !CHECK_OK(loom_input(g, &x, &xn))) goto done;
  if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_MAX, xn, 1, &a1, 1, &mx)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_SUB, xn, mx, &sh)) && CHECK_OK(loom_unary(g, LOOM_OP_EXP, sh, &e)) &&
      CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, e, 1, &a1, 1, &s)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_TRUEDIV, e, s, &sm)) &&
      tc_check_info(g, sm, LOOM_FLOAT64, 2, (const int64_t[]){R, C}, "softmax")) {
    LoomArray out;
    if (CHECK_OK(tc_eval1(g, sm, &out))) {
      LoomStats st;
      if (loom_get_stats(tc_ctx, &st) == LOOM_OK)
        printf("softmax: %" PRIu64 " kernel(s)\n", st.last_eval_kernels);
      for (int64_t r = 0; r < R; r++) {
        double m = -INFINITY, sum = 0;
        for (int64_t c = 0; c < C; c++) m = p[r * C + c] > m ? p[r * C + c] : m;
        for (int64_t c = 0; c < C; c++) sum += exp(p[r * C + c] - m);
        for (int64_t c = 0; c < C; c++) {
          double want = exp(p[r * C + c] - m) / sum, got = tc_get_f(&out, r * C + c);
          if (!CHECK(tc_close_rel(got, want, 1e-13, 1e-300), "softmax[%" PRId64 ",%" PRId64 "]: %.17g vs %.17g",
                     r, c, got, want))
            r = R;
          if (r == R) break;
        }
      }
      loom_array_free(tc_ctx, &out);
    }
  }
  if (CHECK_OK(loom_reduce(g, LOOM_REDUCE_MEAN, xn, 1, &a1, 1, &mean)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_SUB, xn, mean, &centered))) {
    LoomArray out;
    if (CHECK_OK(tc_eval1(g, centered, &out))) {
      int bad = 0;
      for (int64_t r = 0; r < R; r++) {
        long double sum = 0;
        for (int64_t c = 0; c < C; c++) sum += p[r * C + c];
        double mu = (double)(sum / C);
        for (int64_t c = 0; c < C; c++) {
          double want = p[r * C + c] - mu, got = tc_get_f(&out, r * C + c);
          if (!tc_close_rel(got, want, 1e-12, 1e-13)) bad++;
        }
      }
      CHECK(bad == 0, "x - mean(x, axis=1, keepdims): %d elements off", bad);
      loom_array_free(tc_ctx, &out);
    }
  }
done:
  if (g) loom_graph_destroy(g);
  tc_free(&x);
}

int main(void) {
  if (!tc_init()) return 1;
  test_axes_and_views();
  test_empty();
  test_nan_and_ties();
  test_int_dtypes();
  test_large_sum();
  test_float32_sum_accuracy();
  test_fused_patterns();
  return tc_finish();
}
