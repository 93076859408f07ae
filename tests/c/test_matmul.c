/* test_matmul.c: loom_matmul on the host against a float64 (or exact integer) product written here.
 *
 * Covers NumPy's shape rules (1-d operands, batch broadcasting, 0-d and mismatch errors, K = 0, empty
 * results), dtypes (float16/32/64 with per-dtype tolerances, promotion, integer wrap-around, bool),
 * layouts (transposed and sliced inputs read in place by the BLAS, negative strides and broadcast
 * operands copied first) and the schedule (how many kernels and library calls). Epilogues and roots:
 * test_matmul_fuse.c.
 */
#include "tests/c/test_common.h"

#include "tests/c/matmul_ref.h"

static LoomStats stats(void) {
  LoomStats s;
  loom_get_stats(tc_ctx, &s);
  return s;
}

/* Evaluates a @ b and compares; kernels / calls: what the evaluation must launch (-1: any). */
static void check(const char *what, const LoomArray *a, const LoomArray *b, int kernels, int calls) {
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode na, nb, p;
  loom_input(g, a, &na);
  loom_input(g, b, &nb);
  if (!CHECK(loom_matmul(g, na, nb, &p) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    loom_graph_destroy(g);
    return;
  }
  LoomDType rt;
  loom_node_info(g, p, &rt, NULL, NULL);
  LoomArray out = {0};
  uint64_t calls0 = stats().library_calls;
  if (CHECK(loom_eval(g, 1, &p, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx))) {
    LoomStats s = stats();
    if (kernels >= 0) CHECK((int)s.last_eval_kernels == kernels, "%s: %d kernels, want %d", what, (int)s.last_eval_kernels, kernels);
    if (calls >= 0) CHECK((int)(s.library_calls - calls0) == calls, "%s: %d library calls, want %d", what,
                          (int)(s.library_calls - calls0), calls);
    Ref r = reference(a, b, rt);
    compare(what, &out, &r, rt);
    free_ref(&r);
    loom_array_free(tc_ctx, &out);
  }
  loom_graph_destroy(g);
}

static void check_new(const char *what, LoomDType ta, int an, const int64_t *ash, LoomDType tb, int bn,
                      const int64_t *bsh, int kernels, int calls) {
  LoomArray a = tc_new(ta, an, ash), b = tc_new(tb, bn, bsh);
  fill(&a, false);
  fill(&b, false);
  check(what, &a, &b, kernels, calls);
  tc_free(&a);
  tc_free(&b);
}

static void test_shapes(void) {
  LoomDType fl[4] = {LOOM_FLOAT64, LOOM_FLOAT32, LOOM_FLOAT16, LOOM_BFLOAT16};
  for (int t = 0; t < 4; t++) {
    int64_t s1[2] = {7, 13}, s2[2] = {13, 5};
    check_new("2-d", fl[t], 2, s1, fl[t], 2, s2, 0, 1);
    int64_t v[1] = {13};
    /* a dot or M @ v (N = 1, no batch dims) is one reduction kernel over K, no library call
     * (frontend/matmul.c); LOOM_MATMUL_VECTOR_LIBRARY=1 makes it the call (test_vector_library) */
    check_new("1-d @ 1-d", fl[t], 1, v, fl[t], 1, v, 1, 0);
    check_new("1-d @ 2-d", fl[t], 1, v, fl[t], 2, s2, 0, 1); /* u @ M (M = 1): the library */
    check_new("2-d @ 1-d", fl[t], 2, s1, fl[t], 1, v, 1, 0); /* M @ v: a row reduction */
    int64_t b3[3] = {4, 7, 13};
    check_new("3-d @ 2-d folds into one product", fl[t], 3, b3, fl[t], 2, s2, 0, 1);
    int64_t b3b[3] = {3, 13, 5};
    check_new("2-d @ 3-d: one strided batch", fl[t], 2, s1, fl[t], 3, b3b, 0, 1);
    int64_t c4a[4] = {2, 1, 3, 4}, c4b[4] = {1, 5, 4, 2};
    check_new("4-d batch broadcast", fl[t], 4, c4a, fl[t], 4, c4b, 0, -1);
    int64_t one[2] = {1, 1};
    check_new("1x1", fl[t], 2, one, fl[t], 2, one, 1, 0);
    int64_t rowv[3] = {3, 1, 13}, colv[3] = {3, 13, 1};
    check_new("batched dots: the library", fl[t], 3, rowv, fl[t], 3, colv, 0, 1);
  }
  int64_t big_a[3] = {3, 64, 96}, big_b[3] = {3, 96, 80};
  check_new("batched 64x96 @ 96x80", LOOM_FLOAT32, 3, big_a, LOOM_FLOAT32, 3, big_b, 0, 1);
  int64_t fa[2] = {6, 5}, fb[2] = {5, 4};
  check_new("float32 @ float64 promotes (a cast kernel)", LOOM_FLOAT32, 2, fa, LOOM_FLOAT64, 2, fb, 1, 1);
  check_new("int32 @ float32 gives float64", LOOM_INT32, 2, fa, LOOM_FLOAT32, 2, fb, -1, 1);
  /* K = 0: zeros, no call; empty results: nothing */
  int64_t k0a[2] = {3, 0}, k0b[2] = {0, 4};
  check_new("K = 0 gives zeros", LOOM_FLOAT32, 2, k0a, LOOM_FLOAT32, 2, k0b, -1, 0);
  check_new("K = 0 int", LOOM_INT16, 2, k0a, LOOM_INT16, 2, k0b, -1, 0);
  int64_t m0[2] = {0, 4}, m0b[2] = {4, 3};
  check_new("M = 0", LOOM_FLOAT64, 2, m0, LOOM_FLOAT64, 2, m0b, -1, 0);
  int64_t e3[3] = {0, 2, 4};
  check_new("empty batch", LOOM_FLOAT64, 3, e3, LOOM_FLOAT64, 2, m0b, -1, 0);
}

static void test_ints(void) {
  LoomDType it[6] = {LOOM_INT8, LOOM_INT16, LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_UINT64};
  int64_t sa[3] = {2, 5, 9}, sb[2] = {9, 4};
  for (int t = 0; t < 6; t++) check_new("integer product (wraps)", it[t], 3, sa, it[t], 2, sb, 1, 0);
  check_new("int8 @ int16 promotes", LOOM_INT8, 3, sa, LOOM_INT16, 2, sb, 1, 0);
  check_new("bool", LOOM_BOOL, 3, sa, LOOM_BOOL, 2, sb, 1, 0);
  int64_t v[1] = {9};
  check_new("int 1-d @ 1-d", LOOM_INT32, 1, v, LOOM_INT32, 1, v, 1, 0);
}

static void test_layouts(void) {
  int64_t sa[2] = {6, 8}, sb[2] = {8, 5};
  int rev[2] = {1, 0};
  LoomArray a = new_ordered(LOOM_FLOAT64, 2, sa, rev), b = new_ordered(LOOM_FLOAT64, 2, sb, rev);
  fill(&a, false);
  fill(&b, false);
  check("column-major operands are read in place", &a, &b, 0, 1);
  tc_free(&b);
  b = tc_new(LOOM_FLOAT64, 2, sb);
  fill(&b, false);
  check("column-major a, row-major b", &a, &b, 0, 1);
  /* a slice with unit inner stride: in place; every other column: copied */
  LoomArray big = tc_new2(LOOM_FLOAT64, 12, 20);
  fill(&big, false);
  LoomArray s = big;
  s.shape[0] = 6, s.shape[1] = 8, s.strides[0] = 40; /* big[::2, :8] */
  check("row slice read in place", &s, &b, 0, 1);
  s.strides[1] = 2, s.strides[0] = 20;               /* big[:6, ::2] */
  check("strided columns are copied first", &s, &b, 1, 1);
  s = big;
  s.shape[0] = 6, s.shape[1] = 8;
  s.data = (double *)big.data + 5 * 20;
  s.strides[0] = -20;                                 /* big[5::-1, :8] */
  check("negative strides are copied first", &s, &b, 1, 1);
  LoomArray bc = b;
  bc.strides[0] = 0;                                  /* a broadcast row: stride 0 */
  check("broadcast operand is copied first", &a, &bc, 1, 1);
  LoomArray b3 = tc_new(LOOM_FLOAT64, 3, (int64_t[]){4, 8, 5});
  fill(&b3, false);
  LoomArray b3t = b3;
  b3t.shape[1] = 5, b3t.shape[2] = 8, b3t.strides[1] = 1, b3t.strides[2] = 5; /* swapaxes(b3, 1, 2) */
  LoomArray a3 = tc_new(LOOM_FLOAT64, 3, (int64_t[]){4, 3, 5});
  fill(&a3, false);
  check("batched transposed b", &a3, &b3t, 0, 1);
  tc_free(&a);
  tc_free(&b);
  tc_free(&big);
  tc_free(&b3);
  tc_free(&a3);
}

static void test_errors(void) {
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomArray a = tc_new2(LOOM_FLOAT32, 3, 4), b = tc_new2(LOOM_FLOAT32, 5, 2), z = tc_new(LOOM_FLOAT32, 0, NULL);
  LoomArray a3 = tc_new(LOOM_FLOAT32, 3, (int64_t[]){2, 3, 4}), b3 = tc_new(LOOM_FLOAT32, 3, (int64_t[]){3, 4, 2});
  LoomNode na, nb, nz, n3, m3, p, w;
  loom_input(g, &a, &na);
  loom_input(g, &b, &nb);
  loom_input(g, &z, &nz);
  loom_input(g, &a3, &n3);
  loom_input(g, &b3, &m3);
  loom_weak_float(g, 2.0, &w);
  int32_t before = loom_graph_node_count(g);
  CHECK(loom_matmul(g, na, nb, &p) == LOOM_ERR_SHAPE && strstr(loom_last_error(tc_ctx), "mismatch"),
        "K mismatch: %s", loom_last_error(tc_ctx));
  CHECK(loom_matmul(g, nz, na, &p) == LOOM_ERR_SHAPE && strstr(loom_last_error(tc_ctx), "Input operand 0"),
        "0-d operand: %s", loom_last_error(tc_ctx));
  CHECK(loom_matmul(g, na, w, &p) == LOOM_ERR_SHAPE, "a Python scalar operand is 0-d");
  CHECK(loom_matmul(g, n3, m3, &p) == LOOM_ERR_SHAPE && strstr(loom_last_error(tc_ctx), "broadcast"),
        "batch dims 2 and 3: %s", loom_last_error(tc_ctx));
  CHECK(loom_matmul(g, na, 12345, &p) == LOOM_ERR_INVALID_ARGUMENT, "a bad node");
  CHECK(loom_matmul(g, na, na, NULL) == LOOM_ERR_INVALID_ARGUMENT, "out NULL");
  CHECK(loom_graph_node_count(g) == before, "failed calls leave the graph unchanged");
  loom_graph_destroy(g);
  tc_free(&a);
  tc_free(&b);
  tc_free(&z);
  tc_free(&a3);
  tc_free(&b3);
}

/* LOOM_MATMUL_VECTOR_LIBRARY=1: matrix-vector products are library calls again (same values) */
static void test_vector_library(void) {
  setenv("LOOM_MATMUL_VECTOR_LIBRARY", "1", 1);
  int64_t v[1] = {13}, s1[2] = {7, 13}, s2[2] = {13, 5};
  check_new("1-d @ 1-d, library", LOOM_FLOAT32, 1, v, LOOM_FLOAT32, 1, v, 0, 1);
  check_new("1-d @ 2-d, library", LOOM_FLOAT64, 1, v, LOOM_FLOAT64, 2, s2, 0, 1);
  check_new("2-d @ 1-d, library", LOOM_FLOAT32, 2, s1, LOOM_FLOAT32, 1, v, 0, 1);
  unsetenv("LOOM_MATMUL_VECTOR_LIBRARY");
  int64_t big[2] = {300, 1000}, bv[1] = {1000}, bu[1] = {300};
  check_new("wide 2-d @ 1-d", LOOM_FLOAT32, 2, big, LOOM_FLOAT32, 1, bv, 1, 0);
  check_new("1-d @ tall 2-d: the library", LOOM_FLOAT64, 1, bu, LOOM_FLOAT64, 2, big, 0, 1);
}

int main(void) {
  if (!tc_init()) return 1;
  test_shapes();
  test_ints();
  test_vector_library();
  test_layouts();
  test_errors();
  return tc_finish();
}
