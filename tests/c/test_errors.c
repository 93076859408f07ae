/* SPDX-License-Identifier: Apache-2.0 */
/* test_errors.c: bad input at the public API returns the right LoomStatus with a useful message.
 *
 * Approach: each case makes one bad call and checks (a) the status, (b) that loom_last_error
 * contains a key phrase (case-insensitive) telling the user what to change, and (c) that the graph
 * still works afterwards (a failed call leaves it unchanged): at the end the same graph evaluates a
 * valid expression correctly. The ASan build checks that no error path leaks.
 */
#include <ctype.h>

#include "test_common.h"

static bool contains_ci(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t k = 0;
    while (k < n && hay[k] && tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k])) k++;
    if (k == n) return true;
  }
  return n == 0;
}

/* Checks status and that the message contains one of up to two phrases (phrase2 may be NULL). */
#define EXPECT_ERR(expr, want, phrase1, phrase2) \
  expect_err((expr), (want), (phrase1), (phrase2), #expr, __LINE__)
static void expect_err(LoomStatus got, LoomStatus want, const char *p1, const char *p2,
                       const char *what, int line) {
  const char *msg = loom_last_error(tc_ctx);
  if (!CHECK(got == want, "line %d: %s returned %s, want %s (message: %s)", line, what,
             loom_status_name(got), loom_status_name(want), msg))
    return;
  bool has = (p1 && contains_ci(msg, p1)) || (p2 && contains_ci(msg, p2));
  CHECK(has, "line %d: %s: message \"%s\" lacks \"%s\"%s%s", line, what, msg, p1 ? p1 : "",
        p2 ? " or " : "", p2 ? p2 : "");
}

/* Issue 10, item 12 and the size arithmetic: device kinds and indexes, huge steps, spans and broadcast
 * shapes that overflow int64, outputs whose elements are not distinct. */
static void hardening_cases(LoomGraph *g, LoomNode na23, LoomNode nf3, const LoomArray *f3) {
  LoomNode y;
  /* devices: the host is device 0; unknown kinds are refused everywhere */
  LoomArray bad = *f3;
  bad.device_index = 3;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "device_index", "device 0");
  int32_t count = -1;
  EXPECT_ERR(loom_device_count(tc_ctx, (LoomDeviceKind)42, &count), LOOM_ERR_UNSUPPORTED, "42", "kind");
  CHECK(loom_device_count(tc_ctx, LOOM_DEVICE_HIP, &count) == LOOM_OK && count == 0, "HIP count: %d", count);
  EXPECT_ERR(loom_device_synchronize(tc_ctx, LOOM_DEVICE_HOST, 5), LOOM_ERR_INVALID_ARGUMENT, "device 0", NULL);
  EXPECT_ERR(loom_device_synchronize(tc_ctx, (LoomDeviceKind)9, 0), LOOM_ERR_UNSUPPORTED, "kind", NULL);
  LoomArray al = {.dtype = LOOM_FLOAT32, .ndim = 1, .shape = {4}, .device = LOOM_DEVICE_HOST, .device_index = 2};
  EXPECT_ERR(loom_array_alloc(tc_ctx, &al), LOOM_ERR_INVALID_ARGUMENT, "device_index", NULL);
  al.device = (LoomDeviceKind)11;
  al.device_index = 0;
  EXPECT_ERR(loom_array_alloc(tc_ctx, &al), LOOM_ERR_UNSUPPORTED, "device kind", NULL);
  LoomStream *strm = NULL;
  EXPECT_ERR(loom_stream_create(tc_ctx, LOOM_DEVICE_HOST, 1, &strm), LOOM_ERR_INVALID_ARGUMENT, "device 0", NULL);
  LoomNode e23;
  if (CHECK_OK(loom_unary(g, LOOM_OP_NEG, na23, &e23))) {
    LoomArray o = tc_new2(LOOM_FLOAT64, 2, 3);
    o.device_index = 1;
    EXPECT_ERR(loom_eval(g, 1, &e23, &o), LOOM_ERR_INVALID_ARGUMENT, "device_index", NULL);
    o.device_index = 0;
    o.device = (LoomDeviceKind)5;
    EXPECT_ERR(loom_eval(g, 1, &e23, &o), LOOM_ERR_UNSUPPORTED, "device kind", NULL);
    tc_free(&o);
  }

  /* a slice step of INT64_MIN (or any step past the axis) reads one element: the step is irrelevant */
  int64_t stp = INT64_MIN, stp2[2] = {INT64_MIN, INT64_MAX};
  LoomNode sl;
  LoomArray out;
  if (CHECK_OK(loom_slice(g, nf3, NULL, NULL, &stp, &sl))) {
    LoomNode two, sl2;
    if (CHECK_OK(loom_weak_float(g, 2.0, &two)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, sl, two, &sl2)) &&
        CHECK_OK(tc_eval1(g, sl2, &out))) {
      CHECK(out.ndim == 1 && out.shape[0] == 1 && tc_get_f(&out, 0) == 2.0 * tc_get_f(f3, 2),
            "f3[::INT64_MIN] * 2: shape %lld value %g", (long long)out.shape[0], tc_get_f(&out, 0));
      loom_array_free(tc_ctx, &out);
    }
  }
  if (CHECK_OK(loom_slice(g, na23, NULL, NULL, stp2, &sl)) && CHECK_OK(tc_eval1(g, sl, &out))) {
    CHECK(out.shape[0] == 1 && out.shape[1] == 1 && tc_get_f(&out, 0) == 3.0, "a23[::MIN, ::MAX] = [[a[1,0]]]: %g",
          tc_get_f(&out, 0));
    loom_array_free(tc_ctx, &out);
  }

  /* descriptors whose span overflows: strides count elements; a span past 2^62 bytes is no array */
  bad = *f3;
  bad.shape[0] = INT64_C(1) << 40;
  bad.strides[0] = INT64_C(1) << 40;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "2^62", "strides");
  bad.strides[0] = 0; /* stride 0: any length is fine (a broadcast) */
  CHECK_OK(loom_input(g, &bad, &y));
  bad.strides[0] = INT64_MIN;
  bad.shape[0] = 2;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "2^62", NULL);

  /* broadcast shapes whose size overflows int64, and reshapes of them */
  LoomArray big1 = {.data = (void *)f3->data, .dtype = LOOM_FLOAT32, .ndim = 2, .shape = {INT64_C(1) << 32, 1}, .strides = {0, 0}};
  LoomArray big2 = big1;
  big2.shape[0] = 1;
  big2.shape[1] = INT64_C(1) << 32;
  LoomNode nb1, nb2;
  if (CHECK_OK(loom_input(g, &big1, &nb1)) && CHECK_OK(loom_input(g, &big2, &nb2)))
    EXPECT_ERR(loom_binary(g, LOOM_OP_ADD, nb1, nb2, &y), LOOM_ERR_SHAPE, "2^63", NULL);
  EXPECT_ERR(loom_broadcast_to(g, nf3, 3, (const int64_t[]){INT64_C(1) << 31, INT64_C(1) << 31, 3}, &y),
             LOOM_ERR_SHAPE, "large", "overflow");
  EXPECT_ERR(loom_reshape(g, nf3, 3, (const int64_t[]){INT64_C(1) << 40, INT64_C(1) << 40, -1}, &y), LOOM_ERR_SHAPE,
             "large", "size");

  /* outputs whose elements are not distinct: a stride 0, strides that interleave */
  LoomNode neg;
  if (CHECK_OK(loom_unary(g, LOOM_OP_NEG, na23, &neg))) {
    LoomArray o = tc_new2(LOOM_FLOAT64, 2, 3);
    o.strides[0] = 0;
    EXPECT_ERR(loom_eval(g, 1, &neg, &o), LOOM_ERR_INVALID_ARGUMENT, "one element", "distinct");
    o.strides[0] = 1;
    o.strides[1] = 1; /* offsets 0 1 2 / 1 2 3 */
    EXPECT_ERR(loom_eval(g, 1, &neg, &o), LOOM_ERR_INVALID_ARGUMENT, "one element", "distinct");
    /* strides (3, 2) over shape (2, 3): offsets 0 2 4 / 3 5 7, distinct though they interleave */
    free(o.data);
    o.data = calloc(8, sizeof(double));
    o.strides[0] = 3;
    o.strides[1] = 2;
    if (CHECK_OK(loom_eval(g, 1, &neg, &o))) {
      int badv = 0;
      for (int i = 0; i < 6; i++) badv += tc_get_f(&o, i) != -(double)i;
      CHECK(badv == 0, "interleaved distinct output: %d wrong", badv);
    }
    tc_free(&o);
    /* two outputs that are the same array: both evaluated, the later one wins (as NumPy's out=) */
    LoomNode pos, pair[2];
    LoomArray same = tc_new2(LOOM_FLOAT64, 2, 3), outs2[2];
    if (CHECK_OK(loom_unary(g, LOOM_OP_ABS, na23, &pos))) {
      pair[0] = neg;
      pair[1] = pos;
      outs2[0] = outs2[1] = same;
      if (CHECK_OK(loom_eval(g, 2, pair, outs2))) CHECK(tc_get_f(&same, 4) == 4.0, "aliased outputs: %g", tc_get_f(&same, 4));
    }
    tc_free(&same);
  }
}

int main(void) {
  if (!tc_init()) return 1;
  /* NULL arguments with no context to report to */
  CHECK(loom_context_create(NULL) == LOOM_ERR_INVALID_ARGUMENT, "context_create(NULL)");
  CHECK(loom_graph_create(NULL, NULL) == LOOM_ERR_INVALID_ARGUMENT, "graph_create(NULL, NULL)");
  loom_context_destroy(NULL); /* no-ops, no crash */
  loom_graph_destroy(NULL);
  CHECK(loom_status_name(LOOM_ERR_SHAPE) != NULL && loom_status_name((LoomStatus)99) != NULL,
        "status names");
  CHECK(loom_dtype_name((LoomDType)99) == NULL && loom_dtype_size((LoomDType)99) == 0 &&
            loom_dtype_size(LOOM_FLOAT16) == 2 && strcmp(loom_dtype_name(LOOM_UINT16), "uint16") == 0,
        "dtype names and sizes");
  CHECK(loom_op_name(LOOM_OP_ADD) != NULL, "op name");

  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return tc_finish();
  LoomArray a23 = tc_new2(LOOM_FLOAT64, 2, 3), v4 = tc_new1(LOOM_FLOAT64, 4), b3 = tc_new1(LOOM_BOOL, 3),
            f3 = tc_new1(LOOM_FLOAT32, 3), e0 = tc_new1(LOOM_FLOAT64, 0);
  for (int i = 0; i < 6; i++) tc_set_f(&a23, i, i);
  LoomNode na23, nv4, nb3, nf3, ne0, y = -1;
  CHECK_OK(loom_input(g, &a23, &na23));
  CHECK_OK(loom_input(g, &v4, &nv4));
  CHECK_OK(loom_input(g, &b3, &nb3));
  CHECK_OK(loom_input(g, &f3, &nf3));
  CHECK_OK(loom_input(g, &e0, &ne0));

  /* shapes: the message names both shapes */
  EXPECT_ERR(loom_binary(g, LOOM_OP_ADD, na23, nv4, &y), LOOM_ERR_SHAPE, "(2,3)", "(2, 3)");
  EXPECT_ERR(loom_binary(g, LOOM_OP_ADD, na23, nv4, &y), LOOM_ERR_SHAPE, "(4,)", "(4)");
  EXPECT_ERR(loom_where(g, nb3, na23, nv4, &y), LOOM_ERR_SHAPE, "(4", "broadcast");
  EXPECT_ERR(loom_broadcast_to(g, nv4, 2, (const int64_t[]){2, 3}, &y), LOOM_ERR_SHAPE, "(4", "broadcast");
  EXPECT_ERR(loom_reshape(g, na23, 1, (const int64_t[]){4}, &y), LOOM_ERR_SHAPE, "reshape", "size");
  LoomStatus st = loom_reshape(g, na23, 2, (const int64_t[]){-1, -1}, &y);
  CHECK(st == LOOM_ERR_SHAPE || st == LOOM_ERR_INVALID_ARGUMENT, "reshape with two -1: %s",
        loom_status_name(st));
  EXPECT_ERR(loom_reshape(g, na23, 2, (const int64_t[]){-2, 3}, &y), LOOM_ERR_SHAPE, "reshape", "-2");
  EXPECT_ERR(loom_squeeze(g, na23, 1, (const int32_t[]){0}, &y), LOOM_ERR_SHAPE, "squeeze", "size");

  /* axes */
  EXPECT_ERR(loom_reduce(g, LOOM_REDUCE_SUM, na23, 1, (const int32_t[]){2}, 0, &y), LOOM_ERR_AXIS, "axis", NULL);
  EXPECT_ERR(loom_reduce(g, LOOM_REDUCE_SUM, na23, 1, (const int32_t[]){-3}, 0, &y), LOOM_ERR_AXIS, "axis", NULL);
  EXPECT_ERR(loom_reduce(g, LOOM_REDUCE_SUM, na23, 2, (const int32_t[]){0, -2}, 0, &y), LOOM_ERR_AXIS,
             "twice", "duplicate");
  EXPECT_ERR(loom_permute(g, na23, (const int32_t[]){0, 0}, &y), LOOM_ERR_AXIS, "axis", "perm");
  EXPECT_ERR(loom_permute(g, na23, (const int32_t[]){0, 5}, &y), LOOM_ERR_AXIS, "axis", "perm");
  EXPECT_ERR(loom_expand_dims(g, na23, 4, &y), LOOM_ERR_AXIS, "axis", NULL);
  /* argmax over every axis given explicitly is the flat argmax (allowed); over a proper subset of
   * two or more axes it is an error (NumPy takes one axis or None). */
  st = loom_reduce(g, LOOM_REDUCE_ARGMAX, na23, 2, (const int32_t[]){0, 1}, 0, &y);
  CHECK(st == LOOM_OK, "argmax over all axes listed: %s", loom_status_name(st));
  st = loom_reduce(g, LOOM_REDUCE_MIN, ne0, 0, NULL, 0, &y);
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT || st == LOOM_ERR_SHAPE, "min of empty: %s", loom_status_name(st));
  CHECK(contains_ci(loom_last_error(tc_ctx), "zero-size"), "min of empty: message %s", loom_last_error(tc_ctx));

  /* dtypes */
  EXPECT_ERR(loom_binary(g, LOOM_OP_SUB, nb3, nb3, &y), LOOM_ERR_DTYPE, "bool", NULL);
  EXPECT_ERR(loom_binary(g, LOOM_OP_LEFT_SHIFT, nf3, nf3, &y), LOOM_ERR_DTYPE, "float", NULL);
  EXPECT_ERR(loom_binary(g, LOOM_OP_BITWISE_AND, nf3, nb3, &y), LOOM_ERR_DTYPE, "float", NULL);
  EXPECT_ERR(loom_unary(g, LOOM_OP_NEG, nb3, &y), LOOM_ERR_DTYPE, "bool", NULL);
  EXPECT_ERR(loom_unary(g, LOOM_OP_BITWISE_NOT, nf3, &y), LOOM_ERR_DTYPE, "float", NULL);
  EXPECT_ERR(loom_cast(g, nf3, (LoomDType)99, &y), LOOM_ERR_DTYPE, "99", "dtype");
  EXPECT_ERR(loom_reduce_dtype(g, LOOM_REDUCE_SUM, nf3, 0, NULL, 0, (LoomDType)-1, &y), LOOM_ERR_DTYPE,
             "dtype", NULL);

  /* ops, node handles, NULL pointers, values */
  EXPECT_ERR(loom_unary(g, LOOM_OP_ADD, nf3, &y), LOOM_ERR_INVALID_ARGUMENT, "add", "unary");
  EXPECT_ERR(loom_binary(g, LOOM_OP_EXP, nf3, nf3, &y), LOOM_ERR_INVALID_ARGUMENT, "exp", "binary");
  EXPECT_ERR(loom_unary(g, (LoomOp)1000, nf3, &y), LOOM_ERR_INVALID_ARGUMENT, "op", NULL);
  EXPECT_ERR(loom_unary(g, LOOM_OP_EXP, 12345, &y), LOOM_ERR_INVALID_ARGUMENT, "node", NULL);
  EXPECT_ERR(loom_unary(g, LOOM_OP_EXP, -1, &y), LOOM_ERR_INVALID_ARGUMENT, "node", NULL);
  EXPECT_ERR(loom_reduce(g, (LoomReduceOp)77, nf3, 0, NULL, 0, &y), LOOM_ERR_INVALID_ARGUMENT, "reduce", "op");
  EXPECT_ERR(loom_unary(g, LOOM_OP_EXP, nf3, NULL), LOOM_ERR_INVALID_ARGUMENT, "null", NULL);
  EXPECT_ERR(loom_input(g, NULL, &y), LOOM_ERR_INVALID_ARGUMENT, "null", NULL);
  EXPECT_ERR(loom_reduce(g, LOOM_REDUCE_SUM, nf3, 1, NULL, 0, &y), LOOM_ERR_INVALID_ARGUMENT, "null", "axes");
  EXPECT_ERR(loom_node_info(g, 999, NULL, NULL, NULL), LOOM_ERR_INVALID_ARGUMENT, "node", NULL);
  CHECK(loom_unary(NULL, LOOM_OP_EXP, nf3, &y) == LOOM_ERR_INVALID_ARGUMENT, "unary(NULL graph)");
  CHECK(loom_eval(NULL, 1, &nf3, NULL) == LOOM_ERR_INVALID_ARGUMENT, "eval(NULL graph)");
  EXPECT_ERR(loom_const_i64(g, 300, LOOM_INT8, &y), LOOM_ERR_INVALID_ARGUMENT, "300", "range");
  LoomNode w300;
  if (CHECK_OK(loom_weak_int(g, 300, &w300))) {
    LoomArray u8 = tc_new1(LOOM_UINT8, 2);
    LoomNode nu8;
    if (CHECK_OK(loom_input(g, &u8, &nu8)))
      EXPECT_ERR(loom_binary(g, LOOM_OP_ADD, nu8, w300, &y), LOOM_ERR_INVALID_ARGUMENT, "300", "uint8");
    tc_free(&u8);
  }
  int64_t s0 = 0, s1 = 3, step0 = 0;
  EXPECT_ERR(loom_slice(g, nf3, &s0, &s1, &step0, &y), LOOM_ERR_INVALID_ARGUMENT, "step", NULL);

  /* bad input descriptors */
  LoomArray bad = f3;
  bad.ndim = LOOM_MAX_RANK + 1;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "ndim", "rank");
  bad = f3;
  bad.shape[0] = -2;
  st = loom_input(g, &bad, &y);
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT || st == LOOM_ERR_SHAPE, "negative dim: %s", loom_status_name(st));
  bad = f3;
  bad.dtype = (LoomDType)42;
  st = loom_input(g, &bad, &y);
  CHECK(st == LOOM_ERR_INVALID_ARGUMENT || st == LOOM_ERR_DTYPE, "input dtype 42: %s", loom_status_name(st));
  bad = f3;
  bad.data = NULL;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "null", "data");
  bad = f3;
  bad.device = LOOM_DEVICE_CUDA;
  bad.device_index = -1;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_INVALID_ARGUMENT, "device_index", NULL);
  bad.device = (LoomDeviceKind)7;
  bad.device_index = 0;
  EXPECT_ERR(loom_input(g, &bad, &y), LOOM_ERR_UNSUPPORTED, "device", NULL);
  {
    /* A CUDA input is accepted when the graph is built; evaluating it needs a driver. (The descriptor
     * points at host memory, so it is only evaluated where there is no CUDA device.) */
    int32_t ndev = -1;
    CHECK(loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev) == LOOM_OK && ndev >= 0, "device count");
    LoomGraph *gc = NULL;
    LoomNode cy, ce;
    bad = f3;
    bad.device = LOOM_DEVICE_CUDA;
    if (ndev == 0 && CHECK_OK(loom_graph_create(tc_ctx, &gc)) && CHECK_OK(loom_input(gc, &bad, &cy)) &&
        CHECK_OK(loom_unary(gc, LOOM_OP_EXP, cy, &ce))) {
      LoomArray o;
      memset(&o, 0, sizeof o);
      EXPECT_ERR(loom_eval(gc, 1, &ce, &o), LOOM_ERR_UNSUPPORTED, "cuda", NULL);
      CHECK(o.data == NULL, "failed CUDA eval allocated nothing");
    }
    loom_graph_destroy(gc);
  }

  /* outputs of the wrong shape or dtype */
  LoomNode ok_node;
  if (CHECK_OK(loom_unary(g, LOOM_OP_EXP, na23, &ok_node))) {
    LoomArray wrong = tc_new2(LOOM_FLOAT64, 3, 2);
    EXPECT_ERR(loom_eval(g, 1, &ok_node, &wrong), LOOM_ERR_SHAPE, "(3,2)", "(3, 2)");
    tc_free(&wrong);
    wrong = tc_new2(LOOM_FLOAT32, 2, 3);
    st = loom_eval(g, 1, &ok_node, &wrong);
    CHECK(st == LOOM_ERR_DTYPE || st == LOOM_ERR_INVALID_ARGUMENT, "out of dtype float32 for a float64 node: %s",
          loom_status_name(st));
    CHECK(contains_ci(loom_last_error(tc_ctx), "float32"), "wrong out dtype message: %s", loom_last_error(tc_ctx));
    tc_free(&wrong);
    EXPECT_ERR(loom_eval(g, -1, &ok_node, &wrong), LOOM_ERR_INVALID_ARGUMENT, "", NULL);
    EXPECT_ERR(loom_eval(g, 1, &ok_node, NULL), LOOM_ERR_INVALID_ARGUMENT, "null", "out");
    LoomNode badn = 4242;
    LoomArray o;
    memset(&o, 0, sizeof o);
    EXPECT_ERR(loom_eval(g, 1, &badn, &o), LOOM_ERR_INVALID_ARGUMENT, "node", NULL);
    CHECK(o.data == NULL, "failed eval allocated nothing");

    /* After all these failures the graph still evaluates correctly. */
    LoomArray out;
    if (CHECK_OK(tc_eval1(g, ok_node, &out))) {
      for (int i = 0; i < 6; i++)
        CHECK(tc_close_ulp(LOOM_FLOAT64, tc_get_f(&out, i), exp((double)i), 4), "exp after errors [%d]", i);
      loom_array_free(tc_ctx, &out);
    }
  }
  hardening_cases(g, na23, nf3, &f3);
  char *text = NULL;
  EXPECT_ERR(loom_dump(g, (LoomDumpKind)9, 1, &na23, &text), LOOM_ERR_INVALID_ARGUMENT, "dump", "kind");
  CHECK(text == NULL, "failed dump returns no text");
  loom_free_string(tc_ctx, NULL);
  loom_array_free(tc_ctx, NULL);

  loom_graph_destroy(g);
  tc_free(&a23);
  tc_free(&v4);
  tc_free(&b3);
  tc_free(&f3);
  tc_free(&e0);
  return tc_finish();
}
