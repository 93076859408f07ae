/* SPDX-License-Identifier: Apache-2.0 */
/* test_scan.c: loom_scan (cumulative sum, product, min, max along one axis) on the host against a serial
 * reference written here: every dtype, every axis, dtype= overrides, integer wrap-around, float16
 * rounding of every partial, NaN, empty and length-1 axes, non-contiguous (strided, transposed,
 * reversed) inputs and outputs, rows long enough for several chunks, column scans (the outer strategy),
 * fusion of the scanned expression and of its consumer (one kernel), and the errors.
 *
 * The reference follows NumPy's accumulate: each input converted to the result dtype, then
 * acc = acc op x in that dtype, in order (floats: computed in double, where a sum or product of two
 * values of a narrower float is exact, then rounded to the dtype: the same bits as the dtype's own
 * arithmetic). The host scans in that order, so floats must match bit for bit.
 */
#include "tests/c/test_common.h"
#include "loom/loom_aot.h"

static LoomDType default_dtype(LoomReduceOp op, LoomDType t) {
  if (op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX || tc_is_float(t)) return t;
  return tc_is_unsigned(t) ? LOOM_UINT64 : LOOM_INT64;
}

static double fcombine(LoomReduceOp op, double a, double b) {
  switch (op) {
  case LOOM_REDUCE_SUM: return a + b;
  case LOOM_REDUCE_PROD: return a * b;
  case LOOM_REDUCE_MIN: return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
  default: return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
  }
}

static I128 icombine(LoomReduceOp op, LoomDType t, I128 a, I128 b) {
  switch (op) {
  case LOOM_REDUCE_SUM: return tc_wrap(t, (U128)a + (U128)b);
  case LOOM_REDUCE_PROD: return tc_wrap(t, (U128)a * (U128)b);
  case LOOM_REDUCE_MIN: return a < b ? a : b;
  default: return a > b ? a : b;
  }
}

/* Evaluates scan(op, x, axis, dtype) of array x (any strides) into `out` (NULL: a new array) and
 * compares it with the reference. Returns the number of kernels the evaluation ran. */
static uint64_t check_scan(const char *what, const LoomArray *x, LoomReduceOp op, int axis, LoomDType dtype,
                           LoomArray *out) {
  LoomGraph *g;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return 0;
  LoomNode nx, ny;
  LoomDType rt = dtype == LOOM_DTYPE_COUNT ? default_dtype(op, x->dtype) : dtype;
  uint64_t kernels = 0;
  if (CHECK_OK(loom_input(g, x, &nx)) && CHECK_OK(loom_scan(g, op, nx, axis, dtype, &ny)) &&
      tc_check_info(g, ny, rt, x->ndim, x->shape, what)) {
    LoomArray r;
    memset(&r, 0, sizeof r);
    LoomArray *res = out ? out : &r;
    if (CHECK(loom_eval(g, 1, &ny, res) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx))) {
      LoomStats s;
      loom_get_stats(tc_ctx, &s);
      kernels = s.last_eval_kernels;
      int nd = x->ndim, ax = axis < 0 ? axis + nd : axis;
      int64_t n = tc_numel(nd, x->shape), inner = 1;
      for (int d = ax + 1; d < nd; d++) inner *= x->shape[d];
      double *fr = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
      I128 *ir = malloc(sizeof(I128) * (size_t)(n > 0 ? n : 1));
      int bad = 0;
      for (int64_t i = 0; i < n && fr && ir; i++) {
        bool first = (i / inner) % x->shape[ax] == 0;
        if (tc_is_float(rt)) {
          double v = tc_round_to(rt, tc_get_f(x, i));
          fr[i] = first ? v : tc_round_to(rt, fcombine(op, fr[i - inner], v));
          double got = tc_get_f(res, i);
          bool ok = (isnan(got) && isnan(fr[i])) || got == fr[i];
          if (!ok && bad++ < 3) CHECK(false, "%s: [%" PRId64 "] = %.17g, want %.17g", what, i, got, fr[i]);
        } else {
          I128 v = tc_is_float(x->dtype) ? (I128)tc_get_f(x, i) : tc_wrap(rt, (U128)tc_get_i(x, i));
          ir[i] = first ? v : icombine(op, rt, ir[i - inner], v);
          I128 got = tc_get_i(res, i);
          if (got != ir[i] && bad++ < 3)
            CHECK(false, "%s: [%" PRId64 "] = %lld, want %lld", what, i, (long long)got, (long long)ir[i]);
        }
      }
      CHECK(bad == 0, "%s: %d elements differ", what, bad);
      free(fr);
      free(ir);
      if (!out) loom_array_free(tc_ctx, &r);
    }
  }
  loom_graph_destroy(g);
  return kernels;
}

static uint64_t rng = 12345;

/* Random values of dtype t suited to op (products near 1 in magnitude so they neither vanish nor
 * overflow too soon, but integer products still wrap). */
static void fill(LoomArray *a, LoomReduceOp op) {
  int64_t n = tc_numel(a->ndim, a->shape);
  for (int64_t i = 0; i < n; i++) {
    double u = tc_rand_unit(&rng);
    if (a->dtype == LOOM_BOOL) tc_set_i(a, i, u < 0.6);
    else if (tc_is_float(a->dtype)) tc_set_f(a, i, op == LOOM_REDUCE_PROD ? 0.6 + u * 0.8 : u * 8 - 4);
    else if (tc_is_unsigned(a->dtype)) tc_set_i(a, i, (I128)(u * 200));
    else tc_set_i(a, i, (I128)(u * 200) - 100);
  }
}

static void test_dtypes_axes(void) {
  const LoomReduceOp ops[4] = {LOOM_REDUCE_SUM, LOOM_REDUCE_PROD, LOOM_REDUCE_MIN, LOOM_REDUCE_MAX};
  for (int ti = 0; ti < TC_NDTYPES; ti++) {
    LoomDType t = tc_all_dtypes[ti];
    for (int oi = 0; oi < 4; oi++) {
      if (t == LOOM_BOOL && oi >= 2) continue; /* min/max of bool: no ordering rule needed */
      int64_t shape[3] = {3, 5, 41};
      LoomArray a = tc_new(t, 3, shape);
      fill(&a, ops[oi]);
      for (int axis = -1; axis < 3; axis++) {
        char what[96];
        snprintf(what, sizeof what, "%s scan of %s axis %d", oi == 0 ? "sum" : oi == 1 ? "prod" : oi == 2 ? "min" : "max",
                 loom_dtype_name(t), axis);
        check_scan(what, &a, ops[oi], axis, LOOM_DTYPE_COUNT, NULL);
      }
      tc_free(&a);
    }
  }
}

static void test_overrides_and_wrap(void) {
  LoomArray a = tc_new1(LOOM_INT8, 300);
  for (int i = 0; i < 300; i++) tc_set_i(&a, i, 100 + (i % 27));
  check_scan("int8 cumsum dtype=int8 wraps", &a, LOOM_REDUCE_SUM, 0, LOOM_INT8, NULL);
  check_scan("int8 cumsum (int64)", &a, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("int8 cumprod dtype=int16 wraps", &a, LOOM_REDUCE_PROD, 0, LOOM_INT16, NULL);
  check_scan("int8 cumsum dtype=float32", &a, LOOM_REDUCE_SUM, 0, LOOM_FLOAT32, NULL);
  check_scan("int8 cumsum dtype=float16 (rounded partials)", &a, LOOM_REDUCE_SUM, 0, LOOM_FLOAT16, NULL);
  check_scan("int8 cumsum dtype=uint8 wraps", &a, LOOM_REDUCE_SUM, 0, LOOM_UINT8, NULL);
  tc_free(&a);
  LoomArray b = tc_new1(LOOM_INT64, 64);
  for (int i = 0; i < 64; i++) tc_set_i(&b, i, (I128)INT64_MAX / 3 + i);
  check_scan("int64 cumsum overflow wraps", &b, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("int64 cumprod overflow wraps", &b, LOOM_REDUCE_PROD, 0, LOOM_DTYPE_COUNT, NULL);
  tc_free(&b);
  LoomArray u = tc_new1(LOOM_UINT32, 50);
  for (int i = 0; i < 50; i++) tc_set_i(&u, i, (I128)UINT32_MAX - (I128)i);
  check_scan("uint32 cumsum (uint64)", &u, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("uint32 cumsum dtype=uint32 wraps", &u, LOOM_REDUCE_SUM, 0, LOOM_UINT32, NULL);
  tc_free(&u);
  LoomArray h = tc_new1(LOOM_FLOAT16, 4000);
  for (int i = 0; i < 4000; i++) tc_set_f(&h, i, 0.1 + (i % 7) * 0.01);
  check_scan("float16 cumsum (partials rounded to float16, saturating growth)", &h, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT,
             NULL);
  check_scan("float16 cumsum dtype=float32", &h, LOOM_REDUCE_SUM, 0, LOOM_FLOAT32, NULL);
  tc_free(&h);
}

static void test_special_values(void) {
  LoomArray a = tc_new1(LOOM_FLOAT64, 9);
  double v[9] = {1, 2, NAN, 4, -INFINITY, 5, INFINITY, 0, -1};
  for (int i = 0; i < 9; i++) tc_set_f(&a, i, v[i]);
  check_scan("float64 cumsum with NaN", &a, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("float64 cummax with NaN", &a, LOOM_REDUCE_MAX, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("float64 cummin with NaN", &a, LOOM_REDUCE_MIN, 0, LOOM_DTYPE_COUNT, NULL);
  tc_free(&a);
  LoomArray b = tc_new1(LOOM_FLOAT32, 5);
  double w[5] = {3e38f, 3e38f, -INFINITY, 1, 2};
  for (int i = 0; i < 5; i++) tc_set_f(&b, i, w[i]);
  check_scan("float32 cumsum overflows to inf, then inf - inf = NaN", &b, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  tc_free(&b);
}

static void test_shapes_and_views(void) {
  int64_t s0[1] = {0}, s30[2] = {3, 0}, s03[2] = {0, 3}, s1[1] = {1}, s17[2] = {1, 7};
  LoomArray e = tc_new(LOOM_FLOAT32, 1, s0), e2 = tc_new(LOOM_INT32, 2, s30), e3 = tc_new(LOOM_INT32, 2, s03);
  check_scan("empty", &e, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("(3,0) axis 1", &e2, LOOM_REDUCE_SUM, 1, LOOM_DTYPE_COUNT, NULL);
  check_scan("(3,0) axis 0", &e2, LOOM_REDUCE_PROD, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("(0,3) axis 0", &e3, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  LoomArray one = tc_new(LOOM_FLOAT64, 1, s1), row = tc_new(LOOM_INT16, 2, s17);
  fill(&one, LOOM_REDUCE_SUM);
  fill(&row, LOOM_REDUCE_SUM);
  check_scan("length 1", &one, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("(1,7) axis 0: length-1 scans", &row, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("(1,7) axis 1", &row, LOOM_REDUCE_MAX, 1, LOOM_DTYPE_COUNT, NULL);
  tc_free(&e);
  tc_free(&e2);
  tc_free(&e3);
  tc_free(&one);
  tc_free(&row);

  /* views of a (40, 30) float64 base: transposed, every other row reversed, a column slice */
  LoomArray base = tc_new2(LOOM_FLOAT64, 40, 30);
  fill(&base, LOOM_REDUCE_SUM);
  LoomArray tr = base;
  tr.shape[0] = 30, tr.shape[1] = 40, tr.strides[0] = 1, tr.strides[1] = 30;
  check_scan("transposed axis 1", &tr, LOOM_REDUCE_SUM, 1, LOOM_DTYPE_COUNT, NULL);
  check_scan("transposed axis 0", &tr, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  LoomArray rv = base;
  rv.data = (double *)base.data + 39 * 30 + 29;
  rv.shape[0] = 20, rv.strides[0] = -60, rv.strides[1] = -1;
  check_scan("reversed, every other row, axis 1", &rv, LOOM_REDUCE_SUM, 1, LOOM_DTYPE_COUNT, NULL);
  check_scan("reversed, every other row, axis 0", &rv, LOOM_REDUCE_PROD, 0, LOOM_DTYPE_COUNT, NULL);
  LoomArray col = base;
  col.ndim = 1, col.shape[0] = 40, col.strides[0] = 30;
  check_scan("a column (stride 30)", &col, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  /* into a transposed output */
  LoomArray ob = tc_new2(LOOM_FLOAT64, 30, 40), ot = ob;
  ot.shape[0] = 40, ot.shape[1] = 30, ot.strides[0] = 1, ot.strides[1] = 40;
  check_scan("into a transposed output, axis 1", &base, LOOM_REDUCE_SUM, 1, LOOM_DTYPE_COUNT, &ot);
  check_scan("into a transposed output, axis 0", &base, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, &ot);
  tc_free(&ob);
  tc_free(&base);
}

static void test_big(void) {
  LoomArray a = tc_new1(LOOM_FLOAT32, 300007);
  fill(&a, LOOM_REDUCE_SUM);
  check_scan("one long float32 row", &a, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  tc_free(&a);
  LoomArray b = tc_new2(LOOM_INT32, 1500, 1031);
  fill(&b, LOOM_REDUCE_SUM);
  check_scan("int32 (1500, 1031) axis 0 (columns)", &b, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("int32 (1500, 1031) axis 1 (rows)", &b, LOOM_REDUCE_SUM, 1, LOOM_DTYPE_COUNT, NULL);
  tc_free(&b);
  LoomArray c = tc_new2(LOOM_FLOAT64, 700, 600);
  fill(&c, LOOM_REDUCE_SUM);
  check_scan("float64 (700, 600) axis 0 (columns)", &c, LOOM_REDUCE_SUM, 0, LOOM_DTYPE_COUNT, NULL);
  check_scan("float64 (700, 600) cummax axis 0", &c, LOOM_REDUCE_MAX, 0, LOOM_DTYPE_COUNT, NULL);
  tc_free(&c);
}

/* cumsum(2 * x + 1) * 3 runs as one kernel; so does a consumer next to the scan. */
static void test_fusion(void) {
  int64_t n = 1000;
  LoomArray a = tc_new1(LOOM_FLOAT64, n);
  fill(&a, LOOM_REDUCE_SUM);
  LoomGraph *g;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomNode x, two, one, three, t, u, s, y;
  CHECK_OK(loom_input(g, &a, &x));
  CHECK_OK(loom_const_f64(g, 2.0, LOOM_FLOAT64, &two));
  CHECK_OK(loom_const_f64(g, 1.0, LOOM_FLOAT64, &one));
  CHECK_OK(loom_const_f64(g, 3.0, LOOM_FLOAT64, &three));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, two, x, &t));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, t, one, &u));
  CHECK_OK(loom_scan(g, LOOM_REDUCE_SUM, u, 0, LOOM_DTYPE_COUNT, &s));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, s, three, &y));
  LoomArray r;
  if (CHECK_OK(tc_eval1(g, y, &r))) {
    LoomStats st;
    loom_get_stats(tc_ctx, &st);
    CHECK(st.last_eval_kernels == 1, "cumsum(2x+1)*3: %llu kernels, want 1", (unsigned long long)st.last_eval_kernels);
    double acc = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      acc += 2.0 * tc_get_f(&a, i) + 1.0;
      if (tc_get_f(&r, i) != acc * 3.0) bad++;
    }
    CHECK(bad == 0, "cumsum(2x+1)*3: %d elements differ", bad);
    loom_array_free(tc_ctx, &r);
  }
  /* both the scan and its consumer requested: still one kernel, two stores */
  LoomNode both[2] = {s, y};
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  if (CHECK_OK(loom_eval(g, 2, both, outs))) {
    LoomStats st;
    loom_get_stats(tc_ctx, &st);
    CHECK(st.last_eval_kernels == 1, "scan and consumer: %llu kernels, want 1", (unsigned long long)st.last_eval_kernels);
    double acc = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      acc += 2.0 * tc_get_f(&a, i) + 1.0;
      bad += tc_get_f(&outs[0], i) != acc || tc_get_f(&outs[1], i) != acc * 3.0;
    }
    CHECK(bad == 0, "scan and consumer: %d elements differ", bad);
    loom_array_free(tc_ctx, &outs[0]);
    loom_array_free(tc_ctx, &outs[1]);
  }
  /* a consumer reading the scan reversed cannot run in the scan's order: two kernels, right values */
  int64_t st0 = n - 1, sp = LOOM_SLICE_NONE, stp = -1;
  LoomNode rev, z;
  CHECK_OK(loom_slice(g, s, &st0, &sp, &stp, &rev));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, rev, s, &z));
  if (CHECK_OK(tc_eval1(g, z, &r))) {
    double *c = malloc(sizeof(double) * (size_t)n), acc = 0;
    for (int64_t i = 0; i < n; i++) c[i] = acc += 2.0 * tc_get_f(&a, i) + 1.0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += tc_get_f(&r, i) != c[n - 1 - i] + c[i];
    CHECK(bad == 0, "reversed scan + scan: %d elements differ", bad);
    free(c);
    loom_array_free(tc_ctx, &r);
  }
  /* two scans of one graph (cumsum of a cumsum) */
  LoomNode s2;
  CHECK_OK(loom_scan(g, LOOM_REDUCE_SUM, s, -1, LOOM_DTYPE_COUNT, &s2));
  if (CHECK_OK(tc_eval1(g, s2, &r))) {
    double acc = 0, acc2 = 0;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      acc += 2.0 * tc_get_f(&a, i) + 1.0;
      acc2 += acc;
      bad += tc_get_f(&r, i) != acc2;
    }
    CHECK(bad == 0, "cumsum of cumsum: %d elements differ", bad);
    loom_array_free(tc_ctx, &r);
  }
  loom_graph_destroy(g);
  tc_free(&a);
}

static void test_errors(void) {
  LoomGraph *g;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new1(LOOM_FLOAT32, 4);
  LoomNode x, c, y;
  CHECK_OK(loom_input(g, &a, &x));
  CHECK_OK(loom_const_f64(g, 1.0, LOOM_FLOAT32, &c));
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, c, 0, LOOM_DTYPE_COUNT, &y), LOOM_ERR_AXIS);
  CHECK(strstr(loom_last_error(tc_ctx), "at least 1-d") != NULL, "0-d message: %s", loom_last_error(tc_ctx));
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, x, 1, LOOM_DTYPE_COUNT, &y), LOOM_ERR_AXIS);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, x, -2, LOOM_DTYPE_COUNT, &y), LOOM_ERR_AXIS);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_MEAN, x, 0, LOOM_DTYPE_COUNT, &y), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, x, 0, (LoomDType)99, &y), LOOM_ERR_DTYPE);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_MAX, x, 0, LOOM_COMPLEX64, &y), LOOM_ERR_DTYPE);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, x, 0, LOOM_DTYPE_COUNT, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_scan(g, LOOM_REDUCE_SUM, 12345, 0, LOOM_DTYPE_COUNT, &y), LOOM_ERR_INVALID_ARGUMENT);
  loom_graph_destroy(g);
  tc_free(&a);
  /* kernel text: a scan kernel reads back, but bundles refuse it (libloomrt cannot launch its entries);
   * a scan whose value reads its own accumulator is malformed */
  LoomBundleBuilder *bb;
  if (CHECK_OK(loom_bundle_builder_create(tc_ctx, &bb))) {
    const char *ok = "kernel k0_scan_sum ndim 1 keep 0 index 32\n  buf 0 in f32 [1]\n  buf 1 out f32 [1]\n"
                     "  %0 = load f32 buf 0\n  %1 = acc f32 phase 0\n  phase scan sum f32 %0 store buf 1 %1\n";
    CHECK_STATUS(loom_bundle_builder_add_ir(bb, ok, "cs", NULL), LOOM_ERR_UNSUPPORTED);
    CHECK(strstr(loom_last_error(tc_ctx), "scans") != NULL, "bundle refusal: %s", loom_last_error(tc_ctx));
    const char *bad = "kernel k0_scan_sum ndim 1 keep 0 index 32\n  buf 0 in f32 [1]\n  buf 1 out f32 [1]\n"
                      "  %0 = acc f32 phase 0\n  phase scan sum f32 %0 store buf 1 %0\n";
    CHECK(loom_bundle_builder_add_ir(bb, bad, "bad", NULL) != LOOM_OK && strstr(loom_last_error(tc_ctx), "reads an accumulator"),
          "a scan folding its own accumulator is refused by the verifier: %s", loom_last_error(tc_ctx));
    const char *two = "kernel k0_scan_sum ndim 2 keep 0 index 32\n  buf 0 in f32 [1,1]\n  buf 1 out f32 [1,1]\n"
                      "  %0 = load f32 buf 0\n  %1 = acc f32 phase 0\n  phase scan sum f32 %0 store buf 1 %1\n";
    CHECK(loom_bundle_builder_add_ir(bb, two, "two", NULL) != LOOM_OK && strstr(loom_last_error(tc_ctx), "one reduced dim"),
          "a scan over two R dims is refused by the verifier: %s", loom_last_error(tc_ctx));
    CHECK(loom_bundle_builder_count(bb) == 0, "no entry added");
    loom_bundle_builder_destroy(bb);
  }
}

int main(void) {
  if (!tc_init()) return 1;
  test_dtypes_axes();
  test_overrides_and_wrap();
  test_special_values();
  test_shapes_and_views();
  test_big();
  test_fusion();
  test_errors();
  return tc_finish();
}
