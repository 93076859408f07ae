/* SPDX-License-Identifier: Apache-2.0 */
/* test_op_memo.c: the builder's call memo (frontend/op_memo.c). A repeated elementwise call or weak scalar
 * returns the node the first call did; anything that makes the answer differ must miss: another operand,
 * op, scalar dtype or scalar bit pattern (0.0 and -0.0), a bound node (loom_node_bind: a weak constant then
 * is a strong input and the result's dtype changes; a bound result is not found again, test_rebind.c), an
 * invalid op whose low 16 bits name a valid one; after loom_node_unbind the first answers hold again. Errors are never remembered. Thousands of distinct calls (far past
 * the table, so slots are overwritten) built twice in two orders give the same nodes, each with the
 * dtype and shape the rules give, and evaluate to values computed here.
 */
#include "test_common.h"

static LoomDType dtype_of(LoomGraph *g, LoomNode n) {
  LoomDType t = LOOM_DTYPE_COUNT;
  int32_t nd = -1;
  CHECK_OK(loom_node_info(g, n, &t, &nd, NULL));
  return t;
}

static void test_repeat_and_keys(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_FLOAT32, 4), y = tc_new1(LOOM_FLOAT32, 4);
  LoomNode nx, ny, c1, c2, i1, b1, f0, fm0, s1, s2, s3, s4, s5;
  if (CHECK_OK(loom_input(g, &x, &nx)) && CHECK_OK(loom_input(g, &y, &ny)) && CHECK_OK(loom_weak_float(g, 1.0, &c1)) &&
      CHECK_OK(loom_weak_float(g, 1.0, &c2)) && CHECK_OK(loom_weak_int(g, 1, &i1)) && CHECK_OK(loom_weak_bool(g, 1, &b1)) &&
      CHECK_OK(loom_weak_float(g, 0.0, &f0)) && CHECK_OK(loom_weak_float(g, -0.0, &fm0))) {
    CHECK(c1 == c2, "the same weak float twice: one node (%d, %d)", c1, c2);
    CHECK(c1 != i1 && c1 != b1 && i1 != b1, "1.0, 1 and True are three constants (%d %d %d)", c1, i1, b1);
    CHECK(dtype_of(g, c1) == LOOM_FLOAT64 && dtype_of(g, i1) == LOOM_INT64 && dtype_of(g, b1) == LOOM_BOOL,
          "weak dtypes float64, int64, bool");
    CHECK(f0 != fm0, "0.0 and -0.0 are two constants (%d, %d)", f0, fm0);
    if (CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, c1, &s1)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, c1, &s2)) &&
        CHECK_OK(loom_binary(g, LOOM_OP_ADD, c1, nx, &s3)) && CHECK_OK(loom_binary(g, LOOM_OP_SUB, nx, c1, &s4)) &&
        CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, ny, &s5))) {
      CHECK(s1 == s2, "x + 1.0 twice: one node");
      CHECK(s3 != s1 && s4 != s1 && s5 != s1, "1.0 + x, x - 1.0, x + y: other nodes (%d %d %d / %d)", s3, s4, s5, s1);
      CHECK(dtype_of(g, s1) == LOOM_FLOAT32, "x + 1.0 stays float32");
    }
    LoomNode u1, u2, u3;
    if (CHECK_OK(loom_unary(g, LOOM_OP_NEG, nx, &u1)) && CHECK_OK(loom_unary(g, LOOM_OP_NEG, nx, &u2)) &&
        CHECK_OK(loom_unary(g, LOOM_OP_ABS, nx, &u3)))
      CHECK(u1 == u2 && u1 != u3, "-x twice one node, abs(x) another (%d %d %d)", u1, u2, u3);
    /* an op past 16 bits whose low bits are ADD: invalid, never the memo's x + 1.0 */
    LoomNode bad = -7;
    CHECK(loom_binary(g, (LoomOp)(0x10000 + (int)LOOM_OP_ADD), nx, c1, &bad) == LOOM_ERR_INVALID_ARGUMENT,
          "an op past 16 bits is refused");
    CHECK(bad == -7 || bad != s1, "the refused op returned no node");
    /* the wrong arity for an op the memo holds */
    CHECK(loom_unary(g, LOOM_OP_ADD, nx, &bad) == LOOM_ERR_INVALID_ARGUMENT, "add with one operand is refused");
  }
  loom_graph_destroy(g);
  tc_free(&x), tc_free(&y);
}

/* Errors are raised again, every time: an int8 array plus a Python int past int8. */
static void test_errors_not_remembered(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_INT8, 3);
  LoomNode nx, big, r;
  if (CHECK_OK(loom_input(g, &x, &nx)) && CHECK_OK(loom_weak_int(g, 300, &big)))
    for (int i = 0; i < 3; i++) {
      LoomStatus s = loom_binary(g, LOOM_OP_ADD, nx, big, &r);
      CHECK(s == LOOM_ERR_INVALID_ARGUMENT || s == LOOM_ERR_DTYPE,
            "int8 + 300 fails every time (try %d: %s)", i, loom_status_name(s));
    }
  loom_graph_destroy(g);
  tc_free(&x);
}

/* A weak constant bound to an array is a strong float64 input: f32 + it is float64 then (the memo must not
 * give the answer of before), float32 again after loom_node_unbind. */
static void test_bind_forgets(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_FLOAT32, 4), c = tc_new(LOOM_FLOAT64, 0, NULL);
  for (int i = 0; i < 4; i++) tc_set_f(&x, i, 0.5 + i);
  tc_set_f(&c, 0, 10.0);
  LoomNode nx, two, before, bound, after;
  if (CHECK_OK(loom_input(g, &x, &nx)) && CHECK_OK(loom_weak_float(g, 2.0, &two)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, two, &before))) {
    CHECK(dtype_of(g, before) == LOOM_FLOAT32, "x + 2.0 is float32");
    if (CHECK_OK(loom_node_bind(g, two, &c)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, two, &bound))) {
      CHECK(bound != before && dtype_of(g, bound) == LOOM_FLOAT64, "x + (bound float64) is float64 (%s)",
            loom_dtype_name(dtype_of(g, bound)));
      LoomArray out = tc_new1(LOOM_FLOAT64, 4);
      if (CHECK_OK(loom_eval(g, 1, &bound, &out)))
        for (int i = 0; i < 4; i++)
          CHECK(tc_get_f(&out, i) == 0.5 + i + 10.0, "bound [%d]: %g", i, tc_get_f(&out, i));
      tc_free(&out);
    }
    if (CHECK_OK(loom_node_unbind(g, two)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, two, &after))) {
      CHECK(after == before && dtype_of(g, after) == LOOM_FLOAT32, "unbound: x + 2.0 again (%d, %d)", after, before);
      LoomArray out = tc_new1(LOOM_FLOAT32, 4);
      if (CHECK_OK(loom_eval(g, 1, &after, &out)))
        for (int i = 0; i < 4; i++) CHECK(tc_get_f(&out, i) == 0.5 + i + 2.0, "unbound [%d]: %g", i, tc_get_f(&out, i));
      tc_free(&out);
    }
  }
  loom_graph_destroy(g);
  tc_free(&x), tc_free(&c);
}

/* 3000 distinct calls x OP k (k = 0..999, three ops), built forward then backward: the same nodes. The
 * table has far fewer slots, so most entries are overwritten; a wrong hit would show as another node. */
static void test_many_calls(void) {
  enum { K = 1000 };
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_FLOAT64, 3);
  for (int i = 0; i < 3; i++) tc_set_f(&x, i, 1.0 + i);
  static LoomNode first[3][K];
  static const LoomOp ops[3] = {LOOM_OP_ADD, LOOM_OP_MUL, LOOM_OP_SUB};
  LoomNode nx;
  bool ok = CHECK_OK(loom_input(g, &x, &nx));
  for (int pass = 0; ok && pass < 2; pass++)
    for (int j = 0; ok && j < 3 * K; j++) {
      int q = pass == 0 ? j : 3 * K - 1 - j, o = q % 3, k = q / 3;
      LoomNode c, r;
      ok = loom_weak_float(g, (double)k, &c) == LOOM_OK && loom_binary(g, ops[o], nx, c, &r) == LOOM_OK;
      if (!ok) CHECK(false, "call %d failed: %s", q, loom_last_error(tc_ctx));
      else if (pass == 0) first[o][k] = r;
      else if (r != first[o][k]) ok = CHECK(false, "x op %d: node %d then %d", k, first[o][k], r);
    }
  CHECK(ok, "3000 calls, twice, one node each");
  LoomArray out = tc_new1(LOOM_FLOAT64, 3);
  for (int k = 0; ok && k < K; k += 97)
    for (int o = 0; o < 3; o++)
      if (CHECK_OK(loom_eval(g, 1, &first[o][k], &out)))
        for (int i = 0; i < 3; i++) {
          double v = 1.0 + i, want = o == 0 ? v + k : o == 1 ? v * k : v - k;
          CHECK(tc_get_f(&out, i) == want, "op %d k %d [%d]: %g want %g", o, k, i, tc_get_f(&out, i), want);
        }
  tc_free(&out);
  loom_graph_destroy(g);
  tc_free(&x);
}

/* A strong node bound to an array: calls on it return the nodes built on it before (hash-consing's
 * answer), which read the bound values; after unbind they compute again, and the memo answers again. */
static void test_bind_strong(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray x = tc_new1(LOOM_FLOAT64, 3), m_val = tc_new1(LOOM_FLOAT64, 3), out = tc_new1(LOOM_FLOAT64, 3);
  for (int i = 0; i < 3; i++) tc_set_f(&x, i, 1.0 + i), tc_set_f(&m_val, i, 100.0 * (i + 1));
  LoomNode nx, two, m, one, y1, y2, y3;
  if (CHECK_OK(loom_input(g, &x, &nx)) && CHECK_OK(loom_weak_float(g, 2.0, &two)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_MUL, nx, two, &m)) && CHECK_OK(loom_weak_float(g, 1.0, &one)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, one, &y1)) && CHECK_OK(loom_node_bind(g, m, &m_val)) &&
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, one, &y2))) {
    CHECK(y1 == y2, "m + 1 after binding m: the node built before (%d, %d)", y1, y2);
    if (CHECK_OK(loom_eval(g, 1, &y2, &out)))
      for (int i = 0; i < 3; i++) CHECK(tc_get_f(&out, i) == 100.0 * (i + 1) + 1.0, "bound m [%d]: %g", i, tc_get_f(&out, i));
    if (CHECK_OK(loom_node_unbind(g, m)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, one, &y3))) {
      CHECK(y3 == y1, "m + 1 after unbinding (%d, %d)", y3, y1);
      if (CHECK_OK(loom_eval(g, 1, &y3, &out)))
        for (int i = 0; i < 3; i++) CHECK(tc_get_f(&out, i) == 2.0 * (1.0 + i) + 1.0, "unbound m [%d]: %g", i, tc_get_f(&out, i));
    }
  }
  loom_graph_destroy(g);
  tc_free(&x), tc_free(&m_val), tc_free(&out);
}

int main(void) {
  if (!tc_init()) return 1;
  test_repeat_and_keys();
  test_errors_not_remembered();
  test_bind_forgets();
  test_bind_strong();
  test_many_calls();
  return tc_finish();
}
