/* SPDX-License-Identifier: Apache-2.0 */
/* test_movement.c: views (broadcast_to, reshape, permute, slice, expand_dims, squeeze), their
 * compositions with elementwise ops, evaluation into caller-given strided and aliasing outputs,
 * 0-d arrays and empty shapes.
 *
 * Approach: the expected value of a movement op is the same memory seen through another LoomArray
 * descriptor (shape and element strides written out here by hand), so check_node compares the
 * evaluated node with that reference view element by element (float64 data, exact), and checks its
 * shape with loom_node_info.
 */
#include "test_common.h"

/* Evaluates node and compares with f(ref view element) exactly; f == NULL means identity. */
static void check_node(const char *what, LoomGraph *g, LoomNode n, const LoomArray *ref,
                       double (*f)(double, double), const LoomArray *ref2) {
  if (!tc_check_info(g, n, LOOM_FLOAT64, ref->ndim, ref->shape, what)) return;
  LoomArray out;
  if (!CHECK(tc_eval1(g, n, &out) == LOOM_OK, "%s: eval: %s", what, loom_last_error(tc_ctx))) return;
  int64_t total = tc_numel(ref->ndim, ref->shape), bad = 0;
  for (int64_t i = 0; i < total; i++) {
    double want = tc_get_f(ref, i);
    if (f) want = f(want, ref2 ? tc_get_f(ref2, i) : 0);
    if (tc_get_f(&out, i) != want && bad++ < 3)
      fprintf(stderr, "  %s[%" PRId64 "] = %g, want %g\n", what, i, tc_get_f(&out, i), want);
  }
  CHECK(bad == 0, "%s: %" PRId64 " of %" PRId64 " elements differ", what, bad, total);
  loom_array_free(tc_ctx, &out);
}
static double add_fn(double a, double b) { return a + b; }

static LoomArray view_of(const LoomArray *base, int ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset) {
  LoomArray v = *base;
  v.ndim = ndim;
  for (int d = 0; d < ndim; d++) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  v.data = (double *)base->data + offset;
  return v;
}

static LoomArray iota(int ndim, const int64_t *shape) {
  LoomArray a = tc_new(LOOM_FLOAT64, ndim, shape);
  for (int64_t i = 0; i < tc_numel(ndim, shape); i++) tc_set_f(&a, i, (double)i);
  return a;
}

static void test_views(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  int64_t s3[1] = {3}, s23[2] = {2, 3}, s34[2] = {3, 4}, s234[3] = {2, 3, 4}, s10[1] = {10};
  LoomArray v3 = iota(1, s3), m34 = iota(2, s34), t234 = iota(3, s234), v10 = iota(1, s10);
  LoomNode n3, n34, n234, n10, y;
  CHECK_OK(loom_input(g, &v3, &n3));
  CHECK_OK(loom_input(g, &m34, &n34));
  CHECK_OK(loom_input(g, &t234, &n234));
  CHECK_OK(loom_input(g, &v10, &n10));

  /* broadcast_to */
  if (CHECK_OK(loom_broadcast_to(g, n3, 2, s23, &y))) {
    LoomArray r = view_of(&v3, 2, s23, (const int64_t[]){0, 1}, 0);
    check_node("broadcast (3,)->(2,3)", g, y, &r, NULL, NULL);
  }
  LoomNode col;
  int64_t s31[2] = {3, 1};
  if (CHECK_OK(loom_reshape(g, n3, 2, s31, &col)) && CHECK_OK(loom_broadcast_to(g, col, 2, s34, &y))) {
    LoomArray r = view_of(&v3, 2, s34, (const int64_t[]){1, 0}, 0);
    check_node("broadcast (3,1)->(3,4)", g, y, &r, NULL, NULL);
  }
  /* reshape with -1 */
  int64_t sm1[2] = {4, -1}, s43[2] = {4, 3};
  if (CHECK_OK(loom_reshape(g, n34, 2, sm1, &y))) {
    LoomArray r = view_of(&m34, 2, s43, (const int64_t[]){3, 1}, 0);
    check_node("reshape (3,4)->(4,-1)", g, y, &r, NULL, NULL);
  }
  /* reshape of a transposed view: row-major order of the transposed values */
  LoomNode tr, flat;
  int64_t sflat[1] = {-1};
  if (CHECK_OK(loom_permute(g, n34, NULL, &tr)) && CHECK_OK(loom_reshape(g, tr, 1, sflat, &flat))) {
    LoomArray want = tc_new1(LOOM_FLOAT64, 12);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 3; j++) tc_set_f(&want, i * 3 + j, (double)(j * 4 + i));
    check_node("reshape(transpose(3,4), -1)", g, flat, &want, NULL, NULL);
    tc_free(&want);
  }
  /* permute */
  int32_t perm[3] = {2, 0, 1};
  if (CHECK_OK(loom_permute(g, n234, perm, &y))) {
    LoomArray r = view_of(&t234, 3, (const int64_t[]){4, 2, 3}, (const int64_t[]){1, 12, 4}, 0);
    check_node("permute (2,0,1)", g, y, &r, NULL, NULL);
  }
  if (CHECK_OK(loom_permute(g, n234, NULL, &y))) {
    LoomArray r = view_of(&t234, 3, (const int64_t[]){4, 3, 2}, (const int64_t[]){1, 4, 12}, 0);
    check_node("permute reversed", g, y, &r, NULL, NULL);
  }
  /* slices: [::-1], [1:8:3], [7:1:-2], [-3:], [:100], [5:2] (empty) */
  struct { int64_t start, stop, step, first, len, stride; const char *name; } sl[] = {
      {LOOM_SLICE_NONE, LOOM_SLICE_NONE, -1, 9, 10, -1, "[::-1]"},
      {1, 8, 3, 1, 3, 3, "[1:8:3]"},
      {7, 1, -2, 7, 3, -2, "[7:1:-2]"},
      {-3, LOOM_SLICE_NONE, 1, 7, 3, 1, "[-3:]"},
      {LOOM_SLICE_NONE, 100, 1, 0, 10, 1, "[:100]"},
      {-1, -11, -3, 9, 4, -3, "[-1:-11:-3]"},
      {5, 2, 1, 0, 0, 1, "[5:2]"},
  };
  for (size_t k = 0; k < sizeof sl / sizeof sl[0]; k++) {
    if (CHECK_OK(loom_slice(g, n10, &sl[k].start, &sl[k].stop, &sl[k].step, &y))) {
      LoomArray r = view_of(&v10, 1, &sl[k].len, &sl[k].stride, sl[k].len ? sl[k].first : 0);
      check_node(sl[k].name, g, y, &r, NULL, NULL);
    }
  }
  /* 2-D slice m34[::-1, 1::2] */
  int64_t st2[2] = {LOOM_SLICE_NONE, 1}, sp2[2] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE}, sg2[2] = {-1, 2};
  if (CHECK_OK(loom_slice(g, n34, st2, sp2, sg2, &y))) {
    LoomArray r = view_of(&m34, 2, (const int64_t[]){3, 2}, (const int64_t[]){-4, 2}, 9);
    check_node("m34[::-1, 1::2]", g, y, &r, NULL, NULL);
  }
  /* expand_dims and squeeze */
  if (CHECK_OK(loom_expand_dims(g, n34, 0, &y))) {
    LoomArray r = view_of(&m34, 3, (const int64_t[]){1, 3, 4}, (const int64_t[]){12, 4, 1}, 0);
    check_node("expand_dims 0", g, y, &r, NULL, NULL);
    LoomNode sq;
    if (CHECK_OK(loom_squeeze(g, y, 0, NULL, &sq))) check_node("squeeze all", g, sq, &m34, NULL, NULL);
    int32_t ax0 = 0;
    if (CHECK_OK(loom_squeeze(g, y, 1, &ax0, &sq))) check_node("squeeze axis 0", g, sq, &m34, NULL, NULL);
  }
  if (CHECK_OK(loom_expand_dims(g, n34, -1, &y))) {
    LoomArray r = view_of(&m34, 3, (const int64_t[]){3, 4, 1}, (const int64_t[]){4, 1, 1}, 0);
    check_node("expand_dims -1", g, y, &r, NULL, NULL);
    int32_t axm1 = -1;
    LoomNode sq;
    if (CHECK_OK(loom_squeeze(g, y, 1, &axm1, &sq))) check_node("squeeze -1", g, sq, &m34, NULL, NULL);
    int32_t ax1 = 1;
    CHECK(loom_squeeze(g, y, 1, &ax1, &sq) != LOOM_OK, "squeezing an axis of size 4 must fail");
  }
  /* compositions: transpose + add; slice + broadcast + add */
  LoomArray m43 = iota(2, s43);
  LoomNode n43, sum;
  CHECK_OK(loom_input(g, &m43, &n43));
  if (CHECK_OK(loom_permute(g, n34, NULL, &tr)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, tr, n43, &sum))) {
    LoomArray r = view_of(&m34, 2, s43, (const int64_t[]){1, 4}, 0);
    check_node("transpose(m34) + m43", g, sum, &r, add_fn, &m43);
  }
  LoomNode sl3, b3;
  int64_t a0 = 1, a1 = 8, a2 = 3;
  if (CHECK_OK(loom_slice(g, n10, &a0, &a1, &a2, &sl3)) && /* [1, 4, 7] */
      CHECK_OK(loom_broadcast_to(g, sl3, 2, (const int64_t[]){4, 3}, &b3)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, b3, n43, &sum))) {
    LoomArray r = view_of(&v10, 2, s43, (const int64_t[]){0, 3}, 1);
    check_node("broadcast(v10[1:8:3]) + m43", g, sum, &r, add_fn, &m43);
  }
  loom_graph_destroy(g);
  tc_free(&v3);
  tc_free(&m34);
  tc_free(&t234);
  tc_free(&v10);
  tc_free(&m43);
}

/* Evaluation into a given strided output, and in place (out aliasing an input). */
static void test_outputs(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  int64_t s34[2] = {3, 4};
  LoomArray a = iota(2, s34);
  LoomNode an, one, y;
  CHECK_OK(loom_input(g, &a, &an));
  CHECK_OK(loom_weak_float(g, 1.0, &one));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, an, one, &y));
  /* a Fortran-order output with a gap: strides (2, 6) in a buffer of 24 doubles */
  double buf[24];
  for (int i = 0; i < 24; i++) buf[i] = -1234.0;
  LoomArray out = view_of(&a, 2, s34, (const int64_t[]){2, 6}, 0);
  out.data = buf;
  if (CHECK_OK(loom_eval(g, 1, &y, &out))) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        CHECK(buf[i * 2 + j * 6] == (double)(i * 4 + j) + 1, "strided out (%d,%d)", i, j);
    for (int k = 1; k < 24; k += 2) CHECK(buf[k] == -1234.0, "strided out: gap %d untouched", k);
  }
  /* a negative-stride output: reversed rows */
  double buf2[12];
  LoomArray out2 = view_of(&a, 2, s34, (const int64_t[]){-4, 1}, 0);
  out2.data = buf2 + 8;
  if (CHECK_OK(loom_eval(g, 1, &y, &out2)))
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        CHECK(buf2[(2 - i) * 4 + j] == (double)(i * 4 + j) + 1, "reversed out (%d,%d)", i, j);
  /* two outputs in one evaluation, one given and one allocated */
  LoomNode z, nodes[2];
  LoomArray outs[2];
  double buf3[12];
  if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, an, an, &z))) {
    nodes[0] = y;
    nodes[1] = z;
    outs[0] = view_of(&a, 2, s34, (const int64_t[]){4, 1}, 0);
    outs[0].data = buf3;
    memset(&outs[1], 0, sizeof outs[1]);
    if (CHECK_OK(loom_eval(g, 2, nodes, outs))) {
      for (int i = 0; i < 12; i++) {
        double v = tc_get_f(&a, i);
        CHECK(buf3[i] == v + 1 && tc_get_f(&outs[1], i) == v * v, "two outputs [%d]", i);
      }
      loom_array_free(tc_ctx, &outs[1]);
    }
  }
  /* in place: a = a + 1 (the last evaluation of this graph that reads a's old values) */
  LoomArray inplace = a;
  if (CHECK_OK(loom_eval(g, 1, &y, &inplace)))
    for (int i = 0; i < 12; i++) CHECK(tc_get_f(&a, i) == i + 1.0, "in place a = a + 1 [%d]", i);
  loom_graph_destroy(g);
  tc_free(&a);
}

/* 0-d arrays and empty shapes. */
static void test_0d_and_empty(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray s = tc_new(LOOM_FLOAT64, 0, NULL);
  tc_set_f(&s, 0, 2.5);
  int64_t s3 = 3;
  LoomArray v = iota(1, &s3);
  LoomNode sn, vn, y, two;
  CHECK_OK(loom_input(g, &s, &sn));
  CHECK_OK(loom_input(g, &v, &vn));
  CHECK_OK(loom_weak_float(g, 2.0, &two));
  LoomArray out;
  if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, sn, two, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT64, 0, NULL, "0-d * 2") && CHECK_OK(tc_eval1(g, y, &out))) {
    CHECK(out.ndim == 0 && tc_get_f(&out, 0) == 5.0, "0-d * 2 = 5");
    loom_array_free(tc_ctx, &out);
  }
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, sn, vn, &y)) && CHECK_OK(tc_eval1(g, y, &out))) {
    CHECK(out.ndim == 1 && out.shape[0] == 3, "0-d + (3,) shape");
    for (int i = 0; i < 3; i++) CHECK(tc_get_f(&out, i) == 2.5 + i, "0-d + (3,) [%d]", i);
    loom_array_free(tc_ctx, &out);
  }
  LoomNode e, r;
  if (CHECK_OK(loom_expand_dims(g, sn, 0, &e)) && CHECK_OK(loom_squeeze(g, e, 0, NULL, &r)))
    tc_check_info(g, r, LOOM_FLOAT64, 0, NULL, "squeeze(expand_dims(0-d))");
  if (CHECK_OK(loom_reshape(g, vn, 2, (const int64_t[]){1, 3}, &e)) &&
      CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, e, 0, NULL, 0, &r)) && CHECK_OK(tc_eval1(g, r, &out))) {
    CHECK(out.ndim == 0 && tc_get_f(&out, 0) == 3.0, "sum to 0-d");
    loom_array_free(tc_ctx, &out);
  }
  /* empty shapes: (0,3) + (3,) -> (0,3); reshape (0,3) -> (3,0, -1)... */
  LoomArray z = tc_new2(LOOM_FLOAT64, 0, 3);
  LoomNode zn;
  CHECK_OK(loom_input(g, &z, &zn));
  if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, zn, vn, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT64, 2, (const int64_t[]){0, 3}, "(0,3) + (3,)") &&
      CHECK_OK(tc_eval1(g, y, &out))) {
    CHECK(out.shape[0] == 0 && out.shape[1] == 3, "(0,3) + (3,) result shape");
    loom_array_free(tc_ctx, &out);
  }
  LoomNode p;
  if (CHECK_OK(loom_permute(g, zn, NULL, &p)) && CHECK_OK(loom_unary(g, LOOM_OP_EXP, p, &y)) &&
      tc_check_info(g, y, LOOM_FLOAT64, 2, (const int64_t[]){3, 0}, "exp(transpose((0,3)))") &&
      CHECK_OK(tc_eval1(g, y, &out)))
    loom_array_free(tc_ctx, &out);
  if (CHECK_OK(loom_reshape(g, zn, 3, (const int64_t[]){3, 0, 5}, &y)))
    tc_check_info(g, y, LOOM_FLOAT64, 3, (const int64_t[]){3, 0, 5}, "reshape (0,3)->(3,0,5)");
  loom_graph_destroy(g);
  tc_free(&s);
  tc_free(&v);
  tc_free(&z);
}

int main(void) {
  if (!tc_init()) return 1;
  test_views();
  test_outputs();
  test_0d_and_empty();
  return tc_finish();
}
