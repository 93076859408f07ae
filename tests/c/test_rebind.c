/* SPDX-License-Identifier: Apache-2.0 */
/* test_rebind.c: graph reuse through loom_input_rebind / loom_input_rebind_many.
 *
 * A graph is built once on some arrays, then pointed at other arrays (new data, other strides) and
 * evaluated again; every result is compared with a loop computed here. This also covers the
 * evaluation plans of runtime/eval.c, which are keyed by input layouts: a rebind to another layout
 * must not reuse the old plan's strides. Errors (dtype, shape, device, a node that is no input, bad
 * counts) must leave the earlier binding in place. loom_node_bind: a computed node bound to an array
 * is read from it by the nodes built on it (the bound values differ from what the node computes, so
 * the result shows which one was read), loom_node_unbind computes it again, and bad binds change nothing.
 */
#include "test_common.h"

/* y = exp(a) * b + 2 over (2,3) float64, the reference computed with the arrays' own strides. */
static void check_result(const LoomArray *out, const LoomArray *a, const LoomArray *b, const char *what) {
  for (int64_t i = 0; i < 6; i++) {
    double want = exp(tc_get_f(a, i)) * tc_get_f(b, i) + 2.0;
    CHECK(tc_close_ulp(LOOM_FLOAT64, tc_get_f(out, i), want, 4), "%s [%lld]: got %.17g want %.17g", what,
          (long long)i, tc_get_f(out, i), want);
  }
}

static void fill(LoomArray *a, double base) {
  for (int64_t i = 0; i < tc_numel(a->ndim, a->shape); i++) tc_set_f(a, i, base + 0.25 * (double)i);
}

static void test_rebind(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new2(LOOM_FLOAT64, 2, 3), b = tc_new2(LOOM_FLOAT64, 2, 3);
  fill(&a, 0.5);
  fill(&b, -1.0);
  LoomNode na, nb, ea, m, two, y;
  bool built = CHECK_OK(loom_input(g, &a, &na)) && CHECK_OK(loom_input(g, &b, &nb)) &&
               CHECK_OK(loom_unary(g, LOOM_OP_EXP, na, &ea)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, nb, &m)) &&
               CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, two, &y));
  LoomArray out = tc_new2(LOOM_FLOAT64, 2, 3);
  if (built && CHECK_OK(loom_eval(g, 1, &y, &out))) check_result(&out, &a, &b, "first binding");

  /* New data, same layout: the evaluation plan is reused and reads the new data. */
  LoomArray a2 = tc_new2(LOOM_FLOAT64, 2, 3);
  fill(&a2, -2.0);
  if (built && CHECK_OK(loom_input_rebind(g, na, &a2)) && CHECK_OK(loom_eval(g, 1, &y, &out)))
    check_result(&out, &a2, &b, "new data");

  /* Another layout: a transposed view of a (3,2) array and a strided slice of a (2,6) array. */
  LoomArray t = tc_new2(LOOM_FLOAT64, 3, 2), wide = tc_new2(LOOM_FLOAT64, 2, 6);
  fill(&t, 1.0);
  fill(&wide, 3.0);
  LoomArray tv = t, wv = wide;
  tv.shape[0] = 2, tv.shape[1] = 3, tv.strides[0] = 1, tv.strides[1] = 2;
  wv.shape[1] = 3, wv.strides[1] = 2;
  if (built) {
    const LoomNode both[2] = {na, nb};
    const LoomArray *arrays[2] = {&tv, &wv};
    if (CHECK_OK(loom_input_rebind_many(g, 2, both, arrays)) && CHECK_OK(loom_eval(g, 1, &y, &out)))
      check_result(&out, &tv, &wv, "strided views");
    /* and back to contiguous arrays: the first plan again */
    const LoomArray *back[2] = {&a, &b};
    if (CHECK_OK(loom_input_rebind_many(g, 2, both, back)) && CHECK_OK(loom_eval(g, 1, &y, &out)))
      check_result(&out, &a, &b, "back to the first arrays");
  }

  /* Errors leave the binding as it was. */
  if (built) {
    LoomArray f32 = tc_new2(LOOM_FLOAT32, 2, 3), wrong_shape = tc_new2(LOOM_FLOAT64, 3, 2);
    CHECK(loom_input_rebind(g, na, &f32) != LOOM_OK, "rebind to another dtype must fail");
    CHECK(strstr(loom_last_error(tc_ctx), "float32") != NULL, "dtype message names float32: %s",
          loom_last_error(tc_ctx));
    CHECK(loom_input_rebind(g, na, &wrong_shape) != LOOM_OK, "rebind to another shape must fail");
    CHECK(loom_input_rebind(g, m, &a) == LOOM_ERR_INVALID_ARGUMENT, "rebind of a node that is no input");
    CHECK(loom_input_rebind(g, 9999, &a) == LOOM_ERR_INVALID_ARGUMENT, "rebind of a bad node");
    CHECK(loom_input_rebind(g, na, NULL) == LOOM_ERR_INVALID_ARGUMENT, "rebind to NULL");
    LoomArray dev = a;
    dev.device = LOOM_DEVICE_CUDA;
    CHECK(loom_input_rebind(g, na, &dev) != LOOM_OK, "rebind to another device must fail");
    const LoomNode pair[2] = {na, m};
    const LoomArray *pa[2] = {&a2, &a};
    CHECK(loom_input_rebind_many(g, 2, pair, pa) != LOOM_OK, "rebind_many with a non-input node");
    CHECK(loom_input_rebind_many(g, -1, pair, pa) == LOOM_ERR_INVALID_ARGUMENT, "rebind_many n = -1");
    /* the first pair of the failed call stays rebound (documented): a2 and b */
    if (CHECK_OK(loom_eval(g, 1, &y, &out))) check_result(&out, &a2, &b, "after failed rebinds");
    tc_free(&f32);
    tc_free(&wrong_shape);
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&b), tc_free(&a2), tc_free(&t), tc_free(&wide), tc_free(&out);
}

/* Rebinding an input to the array it already reads changes nothing (ir_input_rebind returns early); the
 * graph's table of inputs by descriptor stays right through same, new and old bindings: loom_input of the
 * bound array finds the rebound node, of an array no longer bound makes a new input. */
static void test_rebind_same(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new2(LOOM_FLOAT64, 2, 3), b = tc_new2(LOOM_FLOAT64, 2, 3), a2 = tc_new2(LOOM_FLOAT64, 2, 3);
  fill(&a, 0.5), fill(&b, -1.0), fill(&a2, 4.0);
  LoomNode na, nb, ea, m, two, y, again;
  bool built = CHECK_OK(loom_input(g, &a, &na)) && CHECK_OK(loom_input(g, &b, &nb)) &&
               CHECK_OK(loom_unary(g, LOOM_OP_EXP, na, &ea)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, nb, &m)) &&
               CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, two, &y));
  LoomArray out = tc_new2(LOOM_FLOAT64, 2, 3);
  const LoomNode both[2] = {na, nb};
  const LoomArray *same[2] = {&a, &b}, *other[2] = {&a2, &b};
  for (int round = 0; built && round < 3; round++) {
    if (CHECK_OK(loom_input_rebind_many(g, 2, both, same)) && CHECK_OK(loom_eval(g, 1, &y, &out)))
      check_result(&out, &a, &b, "rebound to the same arrays");
    CHECK(CHECK_OK(loom_input(g, &a, &again)) && again == na, "round %d: a is still input node %d", round, na);
  }
  if (built && CHECK_OK(loom_input_rebind_many(g, 2, both, other)) && CHECK_OK(loom_eval(g, 1, &y, &out)))
    check_result(&out, &a2, &b, "rebound to a new array");
  if (built) {
    CHECK(CHECK_OK(loom_input(g, &a2, &again)) && again == na, "a2 is found as the rebound input");
    CHECK(CHECK_OK(loom_input(g, &b, &again)) && again == nb, "b (rebound to itself) is still found");
    int32_t before = loom_graph_node_count(g);
    CHECK(CHECK_OK(loom_input(g, &a, &again)) && again != na && loom_graph_node_count(g) == before + 1,
          "a, no longer bound, is a new input");
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&b), tc_free(&a2), tc_free(&out);
}

/* y = exp(a) * b + 2 with m = exp(a) * b bound to c (a value other than m's, so that a result shows which
 * one was read): an expression first evaluated after the bind reads c, y's earlier plan computes m. */
static void test_node_bind(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new2(LOOM_FLOAT64, 2, 3), b = tc_new2(LOOM_FLOAT64, 2, 3), c = tc_new2(LOOM_FLOAT64, 2, 3);
  LoomArray out = tc_new2(LOOM_FLOAT64, 2, 3), f32 = tc_new2(LOOM_FLOAT32, 2, 3), row = tc_new2(LOOM_FLOAT64, 1, 3);
  fill(&a, 0.5);
  fill(&b, -1.0);
  fill(&c, 40.0);
  LoomNode na, nb, ea, m, two, y;
  bool built = CHECK_OK(loom_input(g, &a, &na)) && CHECK_OK(loom_input(g, &b, &nb)) &&
               CHECK_OK(loom_unary(g, LOOM_OP_EXP, na, &ea)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, nb, &m)) &&
               CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, two, &y));
  if (built && CHECK_OK(loom_eval(g, 1, &y, &out))) check_result(&out, &a, &b, "before the bind");
  if (built) {
    int32_t nodes = loom_graph_node_count(g);
    CHECK(loom_node_bind(g, m, &f32) == LOOM_ERR_SHAPE, "bind to another dtype");
    CHECK(loom_node_bind(g, m, &row) == LOOM_ERR_SHAPE, "bind to another shape");
    CHECK(loom_node_bind(g, 9999, &c) == LOOM_ERR_INVALID_ARGUMENT, "bind of a bad node");
    CHECK(loom_node_bind(g, m, NULL) == LOOM_ERR_INVALID_ARGUMENT, "bind to NULL");
    CHECK(loom_graph_node_count(g) == nodes, "failed binds add no node (%d, was %d)", loom_graph_node_count(g), nodes);
    /* y's plan, made before the bind, is kept (it computes m, the value a bind must hold); an expression
     * first evaluated after the bind reads the bound array: y3 = m + 2.5 */
    LoomNode y3, two5;
    if (CHECK_OK(loom_node_bind(g, m, &c)) && CHECK_OK(loom_eval(g, 1, &y, &out))) check_result(&out, &a, &b, "kept plan");
    if (CHECK_OK(loom_weak_float(g, 2.5, &two5)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m, two5, &y3)) &&
        CHECK_OK(loom_eval(g, 1, &y3, &out)))
      for (int64_t i = 0; i < 6; i++)
        CHECK(tc_get_f(&out, i) == tc_get_f(&c, i) + 2.5, "bound [%lld]: got %.17g want %.17g", (long long)i,
              tc_get_f(&out, i), tc_get_f(&c, i) + 2.5);
    /* the node itself evaluates to the bound array; binding it again to the same array changes nothing */
    if (CHECK_OK(loom_node_bind(g, m, &c)) && CHECK_OK(loom_eval(g, 1, &m, &out)))
      for (int64_t i = 0; i < 6; i++) CHECK(tc_get_f(&out, i) == tc_get_f(&c, i), "bound node [%lld]", (long long)i);
    /* unbound: computed from a and b again (the graph unchanged otherwise; y3's plan, which read c, is
     * dropped); unbinding again changes nothing */
    if (CHECK_OK(loom_node_unbind(g, m)) && CHECK_OK(loom_node_unbind(g, m)) && CHECK_OK(loom_eval(g, 1, &y3, &out)))
      for (int64_t i = 0; i < 6; i++) {
        double want = exp(tc_get_f(&a, i)) * tc_get_f(&b, i) + 2.5;
        CHECK(tc_close_ulp(LOOM_FLOAT64, tc_get_f(&out, i), want, 4), "unbound [%lld]: got %.17g want %.17g",
              (long long)i, tc_get_f(&out, i), want);
      }
    CHECK(loom_node_unbind(g, 9999) == LOOM_ERR_INVALID_ARGUMENT, "unbind of a bad node");
    CHECK_OK(loom_node_unbind(g, na)); /* an input never bound: nothing to undo */
    if (CHECK_OK(loom_eval(g, 1, &y, &out))) check_result(&out, &a, &b, "unbind of a node never bound");
    CHECK_OK(loom_node_bind(g, m, &c)); /* bound again, for the rebuilt-expression check below */
    /* the same expression built again is a new node, computed from a and b */
    LoomNode m2, y2;
    if (CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, nb, &m2)) && CHECK_OK(loom_binary(g, LOOM_OP_ADD, m2, two, &y2))) {
      CHECK(m2 != m, "a bound node is not found by hash-consing");
      if (CHECK_OK(loom_eval(g, 1, &y2, &out))) check_result(&out, &a, &b, "rebuilt expression");
    }
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&b), tc_free(&c), tc_free(&out), tc_free(&f32), tc_free(&row);
}

/* loom_node_reaches: whether users are built on a node (through any source), checked on a small graph. */
static void test_node_reaches(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new2(LOOM_FLOAT64, 2, 3), b = tc_new2(LOOM_FLOAT64, 2, 3);
  LoomNode na, nb, ea, eb, m, s, t, w;
  /* ea = exp(a), eb = exp(b), m = ea * b, t = eb + 1 (not built on ea), s = t - m, w = t * t */
  LoomNode one;
  bool built = CHECK_OK(loom_input(g, &a, &na)) && CHECK_OK(loom_input(g, &b, &nb)) &&
               CHECK_OK(loom_unary(g, LOOM_OP_EXP, na, &ea)) && CHECK_OK(loom_unary(g, LOOM_OP_EXP, nb, &eb)) &&
               CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, nb, &m)) && CHECK_OK(loom_weak_float(g, 1.0, &one)) &&
               CHECK_OK(loom_binary(g, LOOM_OP_ADD, eb, one, &t)) && CHECK_OK(loom_binary(g, LOOM_OP_SUB, t, m, &s)) &&
               CHECK_OK(loom_binary(g, LOOM_OP_MUL, t, t, &w));
  if (built) {
    int32_t r = -1;
    const LoomNode just_t[1] = {t}, t_and_s[2] = {w, s}, self[1] = {ea}, early[1] = {na};
    CHECK(CHECK_OK(loom_node_reaches(g, ea, 1, just_t, &r)) && r == 0, "t = exp(b) + 1 is not built on exp(a) (%d)", r);
    CHECK(CHECK_OK(loom_node_reaches(g, ea, 2, t_and_s, &r)) && r == 1, "s = t - exp(a) * b is (%d)", r);
    CHECK(CHECK_OK(loom_node_reaches(g, ea, 1, self, &r)) && r == 1, "a node reaches itself (%d)", r);
    CHECK(CHECK_OK(loom_node_reaches(g, ea, 1, early, &r)) && r == 0, "an earlier node is not built on it (%d)", r);
    CHECK(CHECK_OK(loom_node_reaches(g, ea, 0, NULL, &r)) && r == 0, "no users (%d)", r);
    CHECK(loom_node_reaches(g, ea, -1, NULL, &r) == LOOM_ERR_INVALID_ARGUMENT, "a negative count");
    CHECK(loom_node_reaches(g, ea, 1, NULL, &r) == LOOM_ERR_INVALID_ARGUMENT, "users NULL");
    const LoomNode bad[1] = {9999};
    CHECK(loom_node_reaches(g, ea, 1, bad, &r) == LOOM_ERR_INVALID_ARGUMENT, "a bad user");
    CHECK(loom_node_reaches(g, ea, 1, just_t, NULL) == LOOM_ERR_INVALID_ARGUMENT, "out NULL");
    /* m bound: s reads the bound array, not exp(a), so it no longer reaches exp(a) */
    LoomArray c = tc_new2(LOOM_FLOAT64, 2, 3);
    const LoomNode just_s[1] = {s};
    if (CHECK_OK(loom_node_bind(g, m, &c)))
      CHECK(CHECK_OK(loom_node_reaches(g, ea, 1, just_s, &r)) && r == 0, "through a bound node (%d)", r);
    tc_free(&c);
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&b);
}

/* loom_nodes_share: two node sets built on a common computing node (not an input, constant or view). */
static void test_nodes_share(void) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomArray a = tc_new2(LOOM_FLOAT64, 2, 3), b = tc_new2(LOOM_FLOAT64, 2, 3);
  LoomNode na, nb, ea, sa, pa, ta, sb, va, vb;
  /* ea = exp(a); sa = sum(ea); pa = ea * 2 (shares ea with sa); ta = transpose(a); va = ta * 3 (only a view
   * of a shared with sb); sb = sum(b * a) (reads the input a, not exp(a)); vb = sum(ta) */
  LoomNode two, three, ab;
  const int32_t axes[2] = {0, 1}, perm[2] = {1, 0};
  bool built = CHECK_OK(loom_input(g, &a, &na)) && CHECK_OK(loom_input(g, &b, &nb)) &&
               CHECK_OK(loom_unary(g, LOOM_OP_EXP, na, &ea)) &&
               CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, ea, 2, axes, 0, &sa)) &&
               CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, ea, two, &pa)) &&
               CHECK_OK(loom_permute(g, na, perm, &ta)) && CHECK_OK(loom_weak_float(g, 3.0, &three)) &&
               CHECK_OK(loom_binary(g, LOOM_OP_MUL, ta, three, &va)) &&
               CHECK_OK(loom_binary(g, LOOM_OP_MUL, nb, na, &ab)) &&
               CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, ab, 2, axes, 0, &sb)) &&
               CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, ta, 2, axes, 0, &vb));
  if (built) {
    int32_t r = -1;
    const LoomNode s_a[1] = {sa}, p_a[1] = {pa}, s_b[1] = {sb}, v_a[1] = {va}, v_b[1] = {vb}, e_a[1] = {ea};
    const LoomNode both[2] = {sb, pa};
    CHECK(CHECK_OK(loom_nodes_share(g, 1, s_a, 1, p_a, &r)) && r == 1, "sum(exp(a)) and exp(a) * 2 share exp(a) (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 1, s_a, 1, s_b, &r)) && r == 0, "an input is not a shared computation (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 1, v_a, 1, v_b, &r)) && r == 0, "nor is a view of one (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 1, e_a, 1, p_a, &r)) && r == 0, "a's own values are kept, not shared (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 1, p_a, 1, e_a, &r)) && r == 1, "b = exp(a) is computed again for a (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 1, s_a, 2, both, &r)) && r == 1, "any member of a set counts (%d)", r);
    CHECK(CHECK_OK(loom_nodes_share(g, 0, NULL, 1, s_a, &r)) && r == 0, "an empty set shares nothing (%d)", r);
    CHECK(loom_nodes_share(g, -1, s_a, 1, p_a, &r) == LOOM_ERR_INVALID_ARGUMENT, "a negative count");
    CHECK(loom_nodes_share(g, 1, NULL, 1, p_a, &r) == LOOM_ERR_INVALID_ARGUMENT, "a NULL set");
    const LoomNode bad[1] = {9999};
    CHECK(loom_nodes_share(g, 1, s_a, 1, bad, &r) == LOOM_ERR_INVALID_ARGUMENT, "a bad node");
    CHECK(loom_nodes_share(g, 1, s_a, 1, p_a, NULL) == LOOM_ERR_INVALID_ARGUMENT, "out NULL");
    /* exp(a) bound to an array: it is an input now, so nothing computed is shared any more */
    LoomArray c = tc_new2(LOOM_FLOAT64, 2, 3);
    if (CHECK_OK(loom_node_bind(g, ea, &c)))
      CHECK(CHECK_OK(loom_nodes_share(g, 1, s_a, 1, p_a, &r)) && r == 0, "through a bound node (%d)", r);
    tc_free(&c);
  }
  loom_graph_destroy(g);
  tc_free(&a), tc_free(&b);
}

int main(void) {
  if (!tc_init()) return 1;
  test_rebind();
  test_rebind_same();
  test_node_bind();
  test_node_reaches();
  test_nodes_share();
  return tc_finish();
}
