/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan_cache.c: plans shared between graphs by structure (runtime/plan_cache.c).
 *
 * Each case builds a new graph on new arrays and evaluates it; results are compared with loops computed
 * here, and loom_get_stats' plans_made shows whether the pass pipeline ran. Cases that must share a plan
 * (same expression, other data, other values of constants that reach the kernels as parameters) and cases
 * that must not (other strides, a constant a pass folded, one input used twice against two inputs, inputs
 * created in the other order, another output layout) are checked for both: the right values and the
 * right plan count. The cache is made small (LOOM_PLAN_CACHE=3, set before
 * the context exists) so eviction runs, and a plan must outlive the graph it was made for.
 */
#include "test_common.h"

static uint64_t plans_made(void) {
  LoomStats s;
  memset(&s, 0, sizeof s);
  loom_get_stats(tc_ctx, &s);
  return s.plans_made;
}

static void fill(LoomArray *a, double base, double step) {
  for (int64_t i = 0; i < tc_numel(a->ndim, a->shape); i++) tc_set_f(a, i, base + step * (double)(i % 17));
}

/* out = x - 2 * y (+ c), evaluated in a new graph whose inputs are created in the order asked (x first or
 * y first); swap_inputs also uses a different creation order for the same expression. */
static bool eval_sub(const LoomArray *x, const LoomArray *y, double c, bool y_first, LoomArray *out) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return false;
  LoomNode nx, ny, two, m, s, cc, r;
  bool ok = y_first ? CHECK_OK(loom_input(g, y, &ny)) && CHECK_OK(loom_input(g, x, &nx))
                    : CHECK_OK(loom_input(g, x, &nx)) && CHECK_OK(loom_input(g, y, &ny));
  ok = ok && CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, two, ny, &m)) &&
       CHECK_OK(loom_binary(g, LOOM_OP_SUB, nx, m, &s)) && CHECK_OK(loom_weak_float(g, c, &cc)) &&
       CHECK_OK(loom_binary(g, LOOM_OP_ADD, s, cc, &r)) && CHECK_OK(loom_eval(g, 1, &r, out));
  loom_graph_destroy(g);
  return ok;
}

static void check_sub(const LoomArray *out, const LoomArray *x, const LoomArray *y, double c, const char *what) {
  int64_t n = tc_numel(out->ndim, out->shape);
  for (int64_t i = 0; i < n; i++) {
    double want = tc_get_f(x, i) - 2.0 * tc_get_f(y, i) + c;
    if (!CHECK(tc_get_f(out, i) == want, "%s [%lld]: got %.17g want %.17g", what, (long long)i, tc_get_f(out, i), want))
      return;
  }
}

static void test_shared_by_structure(void) {
  LoomArray x = tc_new2(LOOM_FLOAT64, 5, 7), y = tc_new2(LOOM_FLOAT64, 5, 7), out = tc_new2(LOOM_FLOAT64, 5, 7);
  fill(&x, 1.0, 0.5);
  fill(&y, -3.0, 0.25);
  uint64_t p0 = plans_made();
  if (eval_sub(&x, &y, 1.0, false, &out)) check_sub(&out, &x, &y, 1.0, "first graph");
  uint64_t p1 = plans_made();
  CHECK(p1 == p0 + 1, "the first graph plans (%llu -> %llu)", (unsigned long long)p0, (unsigned long long)p1);
  /* new arrays, same layouts: the plan is shared and reads the new data */
  for (int k = 0; k < 3; k++) {
    LoomArray x2 = tc_new2(LOOM_FLOAT64, 5, 7), y2 = tc_new2(LOOM_FLOAT64, 5, 7);
    fill(&x2, 10.0 * k, -0.75);
    fill(&y2, 2.0 + k, 1.5);
    if (eval_sub(&x2, &y2, 1.0, false, &out)) check_sub(&out, &x2, &y2, 1.0, "a graph of the same structure");
    tc_free(&x2), tc_free(&y2);
  }
  CHECK(plans_made() == p1, "graphs of the same structure share the plan (%llu plans, want %llu)",
        (unsigned long long)plans_made(), (unsigned long long)p1);
  /* the inputs created y first: the subtraction must still take x - 2y (another key, or a right map) */
  if (eval_sub(&x, &y, 1.0, true, &out)) check_sub(&out, &x, &y, 1.0, "inputs created in the other order");
  /* x and y swapped: values must follow the arrays */
  if (eval_sub(&y, &x, 1.0, false, &out)) check_sub(&out, &y, &x, 1.0, "arrays swapped");
  /* other constants: the plan is shared, its parameter words rewritten (0 too: x + 0 is not folded for
   * floats, since -0.0 + 0.0 is +0.0) */
  uint64_t p2 = plans_made();
  const double cs[] = {-4.5, 0.0, -0.0, 1e300, 7.25};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
    if (eval_sub(&x, &y, cs[i], false, &out)) check_sub(&out, &x, &y, cs[i], "another constant");
  CHECK(plans_made() == p2, "other constants share the plan (%llu -> %llu plans)", (unsigned long long)p2,
        (unsigned long long)plans_made());
  /* a transposed view of y: other strides, never the contiguous plan's */
  LoomArray t = tc_new2(LOOM_FLOAT64, 7, 5);
  fill(&t, 0.5, 3.0);
  LoomArray tv = t;
  tv.shape[0] = 5, tv.shape[1] = 7, tv.strides[0] = 1, tv.strides[1] = 5;
  if (eval_sub(&x, &tv, 1.0, false, &out)) check_sub(&out, &x, &tv, 1.0, "a transposed input");
  /* a strided output: the kernels write other strides */
  LoomArray wide = tc_new2(LOOM_FLOAT64, 5, 14), wv = wide;
  wv.shape[1] = 7, wv.strides[1] = 2;
  if (eval_sub(&x, &y, 1.0, false, &wv)) check_sub(&wv, &x, &y, 1.0, "a strided output");
  if (eval_sub(&x, &y, 1.0, false, &out)) check_sub(&out, &x, &y, 1.0, "contiguous output again");
  tc_free(&x), tc_free(&y), tc_free(&out), tc_free(&t), tc_free(&wide);
}

/* x + x (one input used twice) against x + y (two inputs of one layout): different keys. */
static void test_one_input_or_two(void) {
  LoomArray x = tc_new1(LOOM_FLOAT32, 33), y = tc_new1(LOOM_FLOAT32, 33), out = tc_new1(LOOM_FLOAT32, 33);
  fill(&x, 1.0, 1.0);
  fill(&y, 100.0, -2.0);
  for (int round = 0; round < 2; round++)
    for (int two = 0; two < 2; two++) {
      LoomGraph *g = NULL;
      if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
      LoomNode nx, ny, r;
      bool ok = CHECK_OK(loom_input(g, &x, &nx));
      if (two) ok = ok && CHECK_OK(loom_input(g, &y, &ny));
      else ny = nx;
      ok = ok && CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, ny, &r)) && CHECK_OK(loom_eval(g, 1, &r, &out));
      loom_graph_destroy(g);
      for (int64_t i = 0; ok && i < 33; i++) {
        double want = tc_get_f(&x, i) + tc_get_f(two ? &y : &x, i);
        if (!CHECK(tc_get_f(&out, i) == want, "%s round %d [%lld]: got %g want %g", two ? "x + y" : "x + x", round,
                   (long long)i, tc_get_f(&out, i), want))
          break;
      }
    }
  tc_free(&x), tc_free(&y), tc_free(&out);
}

/* A reduction and a view of a slice with an offset: misaligned data through a plan made for aligned
 * data (passes read layouts only; kernels must take any element-aligned address). */
static void test_offsets_and_reductions(void) {
  int64_t shape[2] = {6, 67};
  LoomArray big = tc_new(LOOM_FLOAT32, 2, shape);
  fill(&big, -2.0, 0.125);
  LoomArray sums = tc_new1(LOOM_FLOAT32, 6);
  uint64_t before = 0;
  for (int off = 0; off < 4; off++) {
    LoomArray v = big; /* columns off .. off + 63 */
    v.shape[1] = 64;
    v.data = (float *)big.data + off;
    LoomGraph *g = NULL;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) break;
    LoomNode nv, sq, r;
    int32_t axis = 1;
    bool ok = CHECK_OK(loom_input(g, &v, &nv)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, nv, nv, &sq)) &&
              CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, sq, 1, &axis, 0, &r)) && CHECK_OK(loom_eval(g, 1, &r, &sums));
    loom_graph_destroy(g);
    if (off == 0) before = plans_made();
    for (int64_t row = 0; ok && row < 6; row++) {
      double want = 0;
      for (int64_t c = 0; c < 64; c++) {
        double e = tc_get_f(&v, row * 64 + c);
        want += (double)(float)(e * e);
      }
      CHECK(fabs(tc_get_f(&sums, row) - want) <= 1e-5 * fabs(want) + 1e-6, "offset %d row %lld: got %.9g want %.9g",
            off, (long long)row, tc_get_f(&sums, row), want);
    }
  }
  CHECK(plans_made() == before, "slices at other offsets share the plan (%llu -> %llu)", (unsigned long long)before,
        (unsigned long long)plans_made());
  tc_free(&big), tc_free(&sums);
}

/* More structures (here: lengths) than the cache holds (LOOM_PLAN_CACHE=3): eviction, then the same
 * structures again. */
static void test_eviction(void) {
  for (int round = 0; round < 3; round++)
    for (int c = 0; c < 6; c++) {
      LoomArray x = tc_new1(LOOM_FLOAT64, 9 + c), y = tc_new1(LOOM_FLOAT64, 9 + c), out = tc_new1(LOOM_FLOAT64, 9 + c);
      fill(&x, 0.5, 1.0);
      fill(&y, -1.0, 0.5);
      if (eval_sub(&x, &y, (double)c, false, &out)) check_sub(&out, &x, &y, (double)c, "eviction round");
      tc_free(&x), tc_free(&y), tc_free(&out);
    }
}

/* A structure reused once is protected: many structures made once each (here: a new length each call)
 * then do not push it out of the small cache (LOOM_PLAN_CACHE=3: two protected). */
static void test_one_offs_do_not_evict(void) {
  LoomArray x = tc_new1(LOOM_FLOAT64, 9), y = tc_new1(LOOM_FLOAT64, 9), out = tc_new1(LOOM_FLOAT64, 9);
  fill(&x, 0.25, 1.0);
  fill(&y, 2.0, -0.5);
  if (eval_sub(&x, &y, 0.125, false, &out)) check_sub(&out, &x, &y, 0.125, "reused structure");
  if (eval_sub(&y, &x, 0.125, false, &out)) check_sub(&out, &y, &x, 0.125, "reused structure, a hit");
  for (int k = 0; k < 10; k++) {
    LoomArray a = tc_new1(LOOM_FLOAT64, 20 + k), b = tc_new1(LOOM_FLOAT64, 20 + k), o = tc_new1(LOOM_FLOAT64, 20 + k);
    fill(&a, 1.0, 0.5);
    fill(&b, -2.0, 0.25);
    if (eval_sub(&a, &b, 1000.0 + k, false, &o)) check_sub(&o, &a, &b, 1000.0 + k, "a one-off structure");
    tc_free(&a), tc_free(&b), tc_free(&o);
  }
  uint64_t before = plans_made();
  if (eval_sub(&x, &y, 0.125, false, &out)) check_sub(&out, &x, &y, 0.125, "reused structure after the one-offs");
  CHECK(plans_made() == before, "the reused structure was pushed out by one-off ones (%llu -> %llu plans)",
        (unsigned long long)before, (unsigned long long)plans_made());
  tc_free(&x), tc_free(&y), tc_free(&out);
}

/* The origin graph stays alive and is evaluated again after another graph shared its plan; then it is
 * destroyed while the other graph still holds the shared plan. */
static void test_lifetimes(void) {
  LoomArray x = tc_new1(LOOM_INT32, 12), out = tc_new1(LOOM_INT32, 12), out2 = tc_new1(LOOM_INT32, 12);
  for (int64_t i = 0; i < 12; i++) tc_set_f(&x, i, (double)(i * 3 - 7));
  LoomGraph *a = NULL, *b = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &a)) || !CHECK_OK(loom_graph_create(tc_ctx, &b))) return;
  LoomNode na, ra, nb, rb, ca, cb;
  bool ok = CHECK_OK(loom_input(a, &x, &na)) && CHECK_OK(loom_weak_int(a, 5, &ca)) &&
            CHECK_OK(loom_binary(a, LOOM_OP_MUL, na, ca, &ra)) && CHECK_OK(loom_eval(a, 1, &ra, &out));
  LoomArray x2 = tc_new1(LOOM_INT32, 12);
  for (int64_t i = 0; i < 12; i++) tc_set_f(&x2, i, (double)(100 - i));
  ok = ok && CHECK_OK(loom_input(b, &x2, &nb)) && CHECK_OK(loom_weak_int(b, 5, &cb)) &&
       CHECK_OK(loom_binary(b, LOOM_OP_MUL, nb, cb, &rb)) && CHECK_OK(loom_eval(b, 1, &rb, &out2));
  ok = ok && CHECK_OK(loom_eval(a, 1, &ra, &out));
  loom_graph_destroy(a);
  ok = ok && CHECK_OK(loom_eval(b, 1, &rb, &out2));
  for (int64_t i = 0; ok && i < 12; i++) {
    CHECK(tc_get_f(&out, i) == 5.0 * (double)(i * 3 - 7), "origin graph [%lld]", (long long)i);
    CHECK(tc_get_f(&out2, i) == 5.0 * (double)(100 - i), "sharing graph after the origin went [%lld]", (long long)i);
  }
  loom_graph_destroy(b);
  tc_free(&x), tc_free(&x2), tc_free(&out), tc_free(&out2);
}

/* A new graph each, c1 and c2 weak float64 constants: out = x * c1 + y * c2 (SCALED), x * (c1 + c2)
 * (SUM_CONSTS), x / c1 + y * c2 (DIVIDE) or x * c1 + c1 (SAME_TWICE). */
enum { SCALED, SUM_CONSTS, DIVIDE, SAME_TWICE };
static bool eval_scaled(const LoomArray *x, const LoomArray *y, double c1, double c2, int form, LoomArray *out) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return false;
  LoomNode nx, ny, k1, k2, a, b, r;
  bool ok = CHECK_OK(loom_input(g, x, &nx)) && CHECK_OK(loom_input(g, y, &ny)) &&
            CHECK_OK(loom_weak_float(g, c1, &k1)) && CHECK_OK(loom_weak_float(g, c2, &k2));
  if (ok && form == SUM_CONSTS)
    ok = CHECK_OK(loom_binary(g, LOOM_OP_ADD, k1, k2, &a)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, nx, a, &r));
  else if (ok && form == SAME_TWICE)
    ok = CHECK_OK(loom_binary(g, LOOM_OP_MUL, nx, k1, &a)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, a, k1, &r));
  else if (ok)
    ok = CHECK_OK(loom_binary(g, form == DIVIDE ? LOOM_OP_TRUEDIV : LOOM_OP_MUL, nx, k1, &a)) &&
         CHECK_OK(loom_binary(g, LOOM_OP_MUL, ny, k2, &b)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, a, b, &r));
  ok = ok && CHECK_OK(loom_eval(g, 1, &r, out));
  loom_graph_destroy(g);
  return ok;
}

static void check_scaled(const LoomArray *out, const LoomArray *x, const LoomArray *y, double c1, double c2, int form,
                         const char *what) {
  for (int64_t i = 0; i < tc_numel(out->ndim, out->shape); i++) {
    double xv = tc_get_f(x, i), yv = tc_get_f(y, i);
    double want = form == SUM_CONSTS   ? xv * (c1 + c2)
                  : form == SAME_TWICE ? xv * c1 + c1
                                       : (form == DIVIDE ? xv / c1 : xv * c1) + yv * c2;
    if (!CHECK(tc_get_f(out, i) == want, "%s (c1 %g, c2 %g) [%lld]: got %.17g want %.17g", what, c1, c2,
               (long long)i, tc_get_f(out, i), want))
      return;
  }
}

/* Constants a pass read are pinned: x * 1 folds to x, so that plan serves only c1 == 1 (another value is
 * another plan, whose general form then serves every value, 1 included; in x * c1 + c1 the 1 still
 * reaches a launch word after the fold, which must keep it); a constant-only subexpression
 * (c1 + c2) is folded, so both are pinned; x / 2 becomes x * 0.5, a constant hash-consed with a c2 of 0.5
 * (the same node), whose words must then never take c2's next value. Each result against a loop. */
static void test_read_constants_pinned(void) {
  LoomArray x = tc_new1(LOOM_FLOAT64, 11), y = tc_new1(LOOM_FLOAT64, 11), out = tc_new1(LOOM_FLOAT64, 11);
  fill(&x, -2.0, 0.75);
  fill(&y, 3.0, -0.5);
  struct { double c1, c2; int new_plans; } fold_one[] = {{1, 3, 1}, {1, 5, 0}, {2, 3, 1}, {1, 4, 0}, {-7, 0.5, 0}, {1, 1.5, 0}};
  for (size_t i = 0; i < sizeof fold_one / sizeof fold_one[0]; i++) {
    uint64_t before = plans_made();
    double c1 = fold_one[i].c1, c2 = fold_one[i].c2;
    if (eval_scaled(&x, &y, c1, c2, SCALED, &out)) check_scaled(&out, &x, &y, c1, c2, SCALED, "x * c1 + y * c2");
    CHECK((int)(plans_made() - before) == fold_one[i].new_plans || i == 0,
          "x * c1 + y * c2, round %zu: %llu new plans, want %d", i, (unsigned long long)(plans_made() - before),
          fold_one[i].new_plans);
  }
  const double sums[][2] = {{1, 2}, {0.5, 4}, {1, 2}, {-3, 3}};
  for (size_t i = 0; i < 4; i++)
    if (eval_scaled(&x, &y, sums[i][0], sums[i][1], SUM_CONSTS, &out))
      check_scaled(&out, &x, &y, sums[i][0], sums[i][1], SUM_CONSTS, "x * (c1 + c2)");
  const double twice[] = {1, 3, 1, -2.5};
  for (size_t i = 0; i < 4; i++)
    if (eval_scaled(&x, &y, twice[i], 0, SAME_TWICE, &out))
      check_scaled(&out, &x, &y, twice[i], 0, SAME_TWICE, "x * c1 + c1");
  const double divs[][2] = {{2, 0.5}, {2, 0.75}, {3, 0.5}, {4, 0.5}, {2, 0.5}, {8, 0.125}, {5, -1}};
  for (size_t i = 0; i < sizeof divs / sizeof divs[0]; i++)
    if (eval_scaled(&x, &y, divs[i][0], divs[i][1], DIVIDE, &out))
      check_scaled(&out, &x, &y, divs[i][0], divs[i][1], DIVIDE, "x / c1 + y * c2");
  tc_free(&x), tc_free(&y), tc_free(&out);
}

int main(void) {
  setenv("LOOM_PLAN_CACHE", "3", 1); /* read once, when the first plan is keyed */
  if (!tc_init()) return 1;
  test_shared_by_structure();
  test_one_input_or_two();
  test_offsets_and_reductions();
  test_eviction();
  test_one_offs_do_not_evict();
  test_lifetimes();
  test_read_constants_pinned();
  return tc_finish();
}
