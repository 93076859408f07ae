/* SPDX-License-Identifier: Apache-2.0 */
/* test_ir.c: the graph IR and kernel IR: print/parse round trips, hash-consing, shape and axis errors,
 * slicing, the verifier, and allocation-failure injection through the pluggable allocator.
 * Links loom_internal; needs no runtime (the context is built by hand). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/ir.h"

static int passed, failed;
#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond) passed++;                                                                            \
    else {                                                                                         \
      failed++;                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)
#define CHECK_STR(a, b)                                                                            \
  do {                                                                                             \
    const char *a_ = (a), *b_ = (b);                                                               \
    if (a_ && b_ && strcmp(a_, b_) == 0) passed++;                                                 \
    else {                                                                                         \
      failed++;                                                                                    \
      fprintf(stderr, "%s:%d: strings differ:\n--- got\n%s\n--- want\n%s\n", __FILE__, __LINE__,  \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                             \
    }                                                                                              \
  } while (0)

/* A counting allocator that can fail the n-th allocation (fail_at < 0: never). */
typedef struct Counting {
  long live, count, fail_at;
} Counting;
static void *counting_alloc(void *user, size_t size) {
  Counting *c = user;
  if (c->fail_at >= 0 && c->count++ >= c->fail_at) return NULL;
  void *p = ir_default_allocator()->alloc(NULL, size);
  if (p) c->live++;
  return p;
}
static void counting_free(void *user, void *p) {
  Counting *c = user;
  c->live--;
  ir_default_allocator()->free(NULL, p);
}

static void make_ctx(LoomContext *ctx, Counting *cnt) {
  memset(ctx, 0, sizeof *ctx);
  cnt->live = cnt->count = 0;
  cnt->fail_at = -1;
  ctx->alloc.alloc = counting_alloc;
  ctx->alloc.free = counting_free;
  ctx->alloc.user = cnt;
}

static LoomArray arr(float *data, LoomDType t, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t st = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = st;
    st *= shape[i];
  }
  return a;
}

static char *print_graph(const IrGraph *g, int n, const int32_t *roots) {
  StrBuf b;
  sb_init(&b, g->ctx);
  ir_print_graph(g, n, roots, &b);
  return sb_take(&b);
}

static void test_graph_roundtrip(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  LoomGraph *g;
  CHECK(loom_graph_create(&ctx, &g) == LOOM_OK);
  static float buf[20];
  int64_t s45[2] = {4, 5};
  LoomArray a = arr(buf, LOOM_FLOAT32, 2, s45);
  LoomNode x, c, w, sum, red, perm, sl, m, cast, wb, red2;
  CHECK(loom_input(g, &a, &x) == LOOM_OK);
  CHECK(loom_const_f64(g, 2.5, LOOM_FLOAT32, &c) == LOOM_OK);
  CHECK(loom_weak_float(g, 0.1, &w) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_ADD, x, c, &sum) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_MUL, sum, w, &m) == LOOM_OK);
  int32_t ax1 = 1, ax0 = 0;
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, m, 1, &ax1, 0, &red) == LOOM_OK);
  CHECK(loom_reduce(g, LOOM_REDUCE_MAX, m, 1, &ax0, 1, &red2) == LOOM_OK);
  CHECK(loom_permute(g, x, NULL, &perm) == LOOM_OK);
  int64_t st[2] = {1, LOOM_SLICE_NONE}, sp[2] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE}, stp[2] = {2, -1};
  CHECK(loom_slice(g, perm, st, sp, stp, &sl) == LOOM_OK);
  CHECK(loom_cast(g, sl, LOOM_FLOAT64, &cast) == LOOM_OK);
  CHECK(loom_weak_int(g, 7, &wb) == LOOM_OK);
  LoomNode roots[4] = {red, cast, red2, wb};
  char *t1 = print_graph(&g->ir, 4, roots);
  const char *want =
      "%0 = input 0 f32 [4,5] strides [5,1]\n"
      "%1 = const f32 [] 2.5\n"
      "%2 = add f32 [4,5] %0 %1\n"
      "%3 = const f32 [] 0.10000000149011612\n" /* the weak 0.1 became a float32 constant */
      "%4 = mul f32 [4,5] %2 %3\n"
      "%5 = reduce sum f32 [4] %4 axes [1]\n"
      "%6 = reduce max f32 [1,5] %4 axes [0] keepdims\n"
      "%7 = permute f32 [5,4] %0 perm [1,0]\n"
      "%8 = slice f32 [2,4] %7 start [1,3] step [2,-1]\n"
      "%9 = cast f64 [2,4] %8\n"
      "%10 = const weak i64 [] 7\n"
      "output %5\n"
      "output %9\n"
      "output %6\n"
      "output %10\n";
  CHECK_STR(t1, want);
  IrGraph g2;
  Diag d = {LOOM_OK, ""};
  CHECK(ir_graph_init(&g2, &ctx, &d) == LOOM_OK);
  int32_t r2[8], nr = 0;
  CHECK(ir_parse_graph(&g2, t1, &nr, r2, 8, &d) == LOOM_OK);
  if (d.status) fprintf(stderr, "parse: %s\n", d.msg);
  CHECK(nr == 4);
  CHECK(g2.ninputs == 1 && g2.inputs[0].data == NULL && g2.inputs[0].strides[0] == 5);
  char *t2 = print_graph(&g2, nr, r2);
  CHECK_STR(t2, t1);
  CHECK(ir_verify_graph(&g->ir, &d) == LOOM_OK);
  /* A subset prints renumbered and still round-trips. */
  char *t3 = print_graph(&g->ir, 1, &cast);
  CHECK_STR(t3, "%0 = input 0 f32 [4,5] strides [5,1]\n%1 = permute f32 [5,4] %0 perm [1,0]\n"
                "%2 = slice f32 [2,4] %1 start [1,3] step [2,-1]\n%3 = cast f64 [2,4] %2\noutput %3\n");
  ctx_free(&ctx, t1);
  ctx_free(&ctx, t2);
  ctx_free(&ctx, t3);
  ir_graph_free(&g2);
  loom_graph_destroy(g);
  CHECK(cnt.live == 0);
}

static void test_hash_consing(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  LoomGraph *g;
  CHECK(loom_graph_create(&ctx, &g) == LOOM_OK);
  static float buf[6];
  int64_t s[2] = {2, 3};
  LoomArray a = arr(buf, LOOM_FLOAT32, 2, s);
  LoomNode x1, x2, e1, e2, k1, k2, y1, y2;
  CHECK(loom_input(g, &a, &x1) == LOOM_OK);
  CHECK(loom_input(g, &a, &x2) == LOOM_OK);
  CHECK(x1 == x2 && g->ir.ninputs == 1);
  CHECK(loom_unary(g, LOOM_OP_EXP, x1, &e1) == LOOM_OK);
  CHECK(loom_unary(g, LOOM_OP_EXP, x2, &e2) == LOOM_OK);
  CHECK(e1 == e2);
  CHECK(loom_const_f64(g, 1.0, LOOM_FLOAT32, &k1) == LOOM_OK);
  CHECK(loom_const_i64(g, 1, LOOM_FLOAT32, &k2) == LOOM_OK);
  CHECK(k1 == k2);
  CHECK(loom_binary(g, LOOM_OP_ADD, e1, k1, &y1) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_ADD, e2, k2, &y2) == LOOM_OK);
  CHECK(y1 == y2);
  int32_t n = g->ir.nnodes;
  LoomNode w1, w2, z1, z2;
  CHECK(loom_weak_float(g, 2.0, &w1) == LOOM_OK);
  CHECK(loom_weak_float(g, 2.0, &w2) == LOOM_OK);
  CHECK(w1 == w2);
  CHECK(loom_binary(g, LOOM_OP_MUL, x1, w1, &z1) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_MUL, x1, w2, &z2) == LOOM_OK);
  CHECK(z1 == z2 && g->ir.nnodes == n + 3); /* weak const, its f32 copy, the mul */
  /* float32 constants are rounded before hashing: 0.1 and 0.1f are one constant */
  LoomNode c1, c2;
  CHECK(loom_const_f64(g, 0.1, LOOM_FLOAT32, &c1) == LOOM_OK);
  CHECK(loom_const_f64(g, (double)0.1f, LOOM_FLOAT32, &c2) == LOOM_OK);
  CHECK(c1 == c2);
  /* many nodes: the table grows and still finds old nodes */
  LoomNode prev = x1, first = -1;
  for (int i = 0; i < 500; i++) {
    LoomNode k, nx;
    CHECK(loom_const_i64(g, i, LOOM_FLOAT32, &k) == LOOM_OK);
    CHECK(loom_binary(g, LOOM_OP_ADD, prev, k, &nx) == LOOM_OK);
    if (i == 0) first = nx;
    prev = nx;
  }
  LoomNode k0, again;
  CHECK(loom_const_i64(g, 0, LOOM_FLOAT32, &k0) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_ADD, x1, k0, &again) == LOOM_OK);
  CHECK(again == first);
  /* the kinds with per-axis arguments (ir_node_init writes only the entries below ndim; arg / arg2 only for
   * permute and slice): equal arguments are one node, any different argument another; each stored node's
   * unused entries are zero (what verify and the printers read) */
  int32_t p01[2] = {1, 0}, p10[2] = {0, 1};
  int64_t st0[2] = {0, 0}, sp0[2] = {2, 3}, by1[2] = {1, 1}, by2[2] = {1, 2}, st1[2] = {1, 0};
  int32_t ax1 = 1, ax0 = 0;
  LoomNode pa, pb, pc, sa, sb, sc, sd, ra, rb, rc, rd;
  CHECK(loom_permute(g, x1, p01, &pa) == LOOM_OK && loom_permute(g, x1, NULL, &pb) == LOOM_OK && pa == pb);
  CHECK(loom_permute(g, x1, p10, &pc) == LOOM_OK && pc != pa);
  CHECK(loom_slice(g, x1, st0, sp0, by1, &sa) == LOOM_OK && loom_slice(g, x1, st0, sp0, by1, &sb) == LOOM_OK);
  CHECK(sa == sb);
  CHECK(loom_slice(g, x1, st0, sp0, by2, &sc) == LOOM_OK && sc != sa); /* another step */
  CHECK(loom_slice(g, x1, st1, sp0, by1, &sd) == LOOM_OK && sd != sa && sd != sc); /* another start */
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x1, 1, &ax1, 1, &ra) == LOOM_OK);
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x1, 1, &ax1, 1, &rb) == LOOM_OK && ra == rb);
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x1, 1, &ax0, 1, &rc) == LOOM_OK && rc != ra);
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x1, 1, &ax1, 0, &rd) == LOOM_OK && rd != ra);
  const LoomNode kinds[] = {pa, pc, sa, sc, sd, ra, rc, rd, y1, k1};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    const IrNode *nd = &g->ir.nodes[kinds[i]];
    bool args = nd->kind == IR_PERMUTE || nd->kind == IR_SLICE, clean = true;
    for (int k = 0; k < LOOM_MAX_RANK; k++) {
      if (k >= nd->ndim && nd->shape[k] != 0) clean = false;
      if ((k >= nd->ndim || !args) && nd->arg[k] != 0) clean = false;
      if ((k >= nd->ndim || nd->kind != IR_SLICE) && nd->arg2[k] != 0) clean = false;
    }
    CHECK(clean);
  }
  loom_graph_destroy(g);
  CHECK(cnt.live == 0);
}

static void test_errors(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  LoomGraph *g;
  CHECK(loom_graph_create(&ctx, &g) == LOOM_OK);
  static float buf[64];
  int64_t s23[2] = {2, 3}, s4[1] = {4}, s0[2] = {0, 3}, s30[2] = {3, 0};
  LoomArray a = arr(buf, LOOM_FLOAT32, 2, s23), b = arr(buf, LOOM_FLOAT32, 1, s4);
  LoomNode x, y, r;
  CHECK(loom_input(g, &a, &x) == LOOM_OK);
  CHECK(loom_input(g, &b, &y) == LOOM_OK);
  int32_t n = g->ir.nnodes;
  CHECK(loom_binary(g, LOOM_OP_ADD, x, y, &r) == LOOM_ERR_SHAPE);
  CHECK_STR(ctx_last_error(&ctx), "operands could not be broadcast together with shapes (2,3) (4,)");
  int64_t s6[1] = {4};
  CHECK(loom_reshape(g, x, 1, s6, &r) == LOOM_ERR_SHAPE);
  CHECK_STR(ctx_last_error(&ctx), "cannot reshape array of size 6 into shape (4,)");
  int64_t sm[2] = {-1, 4};
  CHECK(loom_reshape(g, x, 2, sm, &r) == LOOM_ERR_SHAPE);
  int64_t sm2[2] = {-1, -1};
  CHECK(loom_reshape(g, x, 2, sm2, &r) == LOOM_ERR_SHAPE);
  int64_t sm3[2] = {-1, 2};
  CHECK(loom_reshape(g, x, 2, sm3, &r) == LOOM_OK);
  int64_t shp[3];
  int32_t nd;
  LoomDType dt;
  CHECK(loom_node_info(g, r, &dt, &nd, shp) == LOOM_OK && nd == 2 && shp[0] == 3 && shp[1] == 2);
  n = g->ir.nnodes;
  int32_t axes[2] = {1, -1};
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x, 2, axes, 0, &r) == LOOM_ERR_AXIS);
  CHECK_STR(ctx_last_error(&ctx), "axis 1 appears twice");
  int32_t ax3 = 3;
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, x, 1, &ax3, 0, &r) == LOOM_ERR_AXIS);
  CHECK_STR(ctx_last_error(&ctx), "axis 3 is out of bounds for array of dimension 2");
  int64_t s3[3] = {2, 2, 2};
  LoomArray c3 = arr(buf, LOOM_FLOAT32, 3, s3);
  LoomNode z;
  CHECK(loom_input(g, &c3, &z) == LOOM_OK);
  n = g->ir.nnodes;
  int32_t ax01[2] = {0, 1};
  CHECK(loom_reduce(g, LOOM_REDUCE_ARGMAX, z, 2, ax01, 0, &r) == LOOM_ERR_UNSUPPORTED);
  CHECK(loom_reduce(g, LOOM_REDUCE_ARGMAX, z, 0, NULL, 0, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, &dt, &nd, NULL) == LOOM_OK && dt == LOOM_INT64 && nd == 0);
  LoomArray e = arr(NULL, LOOM_FLOAT32, 2, s30), e0 = arr(NULL, LOOM_FLOAT32, 2, s0);
  LoomNode ex, ex0;
  CHECK(loom_input(g, &e, &ex) == LOOM_OK);
  CHECK(loom_input(g, &e0, &ex0) == LOOM_OK);
  CHECK(loom_reduce(g, LOOM_REDUCE_MAX, ex, 1, &ax01[1], 0, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STR(ctx_last_error(&ctx), "zero-size array to reduction operation maximum which has no identity");
  CHECK(loom_reduce(g, LOOM_REDUCE_MAX, ex0, 1, &ax01[1], 0, &r) == LOOM_OK); /* empty output: fine */
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, ex, 0, NULL, 0, &r) == LOOM_OK);
  n = g->ir.nnodes;
  /* handles */
  CHECK(loom_unary(g, LOOM_OP_EXP, 999, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_unary(g, LOOM_OP_EXP, -1, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_unary(g, LOOM_OP_ADD, x, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_binary(g, LOOM_OP_EXP, x, x, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_binary(g, (LoomOp)9999, x, x, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_unary(NULL, LOOM_OP_EXP, x, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_cast(g, x, (LoomDType)77, &r) == LOOM_ERR_DTYPE);
  int32_t badperm[2] = {0, 0};
  CHECK(loom_permute(g, x, badperm, &r) == LOOM_ERR_AXIS);
  int64_t bshape[2] = {3, 3};
  CHECK(loom_broadcast_to(g, x, 2, bshape, &r) == LOOM_ERR_SHAPE);
  int64_t zstep[2] = {1, 0};
  CHECK(loom_slice(g, x, NULL, NULL, zstep, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_expand_dims(g, x, 3, &r) == LOOM_ERR_AXIS);
  int32_t sq0 = 0;
  CHECK(loom_squeeze(g, x, 1, &sq0, &r) == LOOM_ERR_SHAPE);
  CHECK(loom_const_i64(g, 300, LOOM_UINT8, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_const_i64(g, -1, LOOM_UINT64, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_const_f64(g, 0.0 / 0.0, LOOM_INT32, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_const_u64(g, UINT64_MAX, LOOM_INT64, &r) == LOOM_ERR_INVALID_ARGUMENT);
  LoomArray bad = arr(NULL, LOOM_FLOAT32, 2, s23);
  CHECK(loom_input(g, &bad, &r) == LOOM_ERR_INVALID_ARGUMENT);
  bad.data = buf;
  bad.shape[0] = -2;
  CHECK(loom_input(g, &bad, &r) == LOOM_ERR_SHAPE);
  CHECK(g->ir.nnodes == n); /* failed calls add nothing */
  /* a failure after a helper node was added (weak const resolved, then the dtype rule fails) */
  LoomArray bb = arr(buf, LOOM_BOOL, 2, s23);
  LoomNode xb, wtrue;
  CHECK(loom_input(g, &bb, &xb) == LOOM_OK);
  CHECK(loom_weak_bool(g, 1, &wtrue) == LOOM_OK);
  n = g->ir.nnodes;
  CHECK(loom_binary(g, LOOM_OP_SUB, xb, wtrue, &r) == LOOM_ERR_DTYPE);
  CHECK_STR(ctx_last_error(&ctx), "subtract: not supported for bool operands; use logical_xor");
  CHECK(g->ir.nnodes == n);
  CHECK(loom_unary(g, LOOM_OP_NEG, xb, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_unary(g, LOOM_OP_BITWISE_NOT, x, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_binary(g, LOOM_OP_LEFT_SHIFT, x, x, &r) == LOOM_ERR_DTYPE);
  CHECK(g->ir.nnodes == n);
  loom_graph_destroy(g);
  CHECK(cnt.live == 0);
}

static void test_movement(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  LoomGraph *g;
  CHECK(loom_graph_create(&ctx, &g) == LOOM_OK);
  static float buf[120];
  int64_t s[3] = {10, 3, 4};
  LoomArray a = arr(buf, LOOM_FLOAT32, 3, s);
  LoomNode x, r;
  CHECK(loom_input(g, &a, &x) == LOOM_OK);
  int64_t shp[LOOM_MAX_RANK];
  int32_t nd;
  /* x[::-1, 1:, -3:-1] -> (10, 2, 2); start 9, 1, 1 */
  int64_t st[3] = {LOOM_SLICE_NONE, 1, -3}, sp[3] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE, -1}, stp[3] = {-1, 1, 1};
  CHECK(loom_slice(g, x, st, sp, stp, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, NULL, &nd, shp) == LOOM_OK && nd == 3 && shp[0] == 10 && shp[1] == 2 && shp[2] == 2);
  CHECK(g->ir.nodes[r].arg[0] == 9 && g->ir.nodes[r].arg2[0] == -1 && g->ir.nodes[r].arg[2] == 1);
  /* x[7:2:-2] -> 7, 5, 3; x[100:] -> empty; x[-100:3] -> 3 */
  int64_t st2[3] = {7, 100, -100}, sp2[3] = {2, LOOM_SLICE_NONE, 3}, stp2[3] = {-2, 1, 1};
  CHECK(loom_slice(g, x, st2, sp2, stp2, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, NULL, &nd, shp) == LOOM_OK && shp[0] == 3 && shp[1] == 0 && shp[2] == 3);
  CHECK(loom_expand_dims(g, x, -1, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, NULL, &nd, shp) == LOOM_OK && nd == 4 && shp[3] == 1);
  LoomNode q;
  CHECK(loom_squeeze(g, r, 0, NULL, &q) == LOOM_OK);
  CHECK(loom_node_info(g, q, NULL, &nd, shp) == LOOM_OK && nd == 3 && shp[2] == 4);
  int32_t perm[3] = {2, 0, 1};
  CHECK(loom_permute(g, x, perm, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, NULL, &nd, shp) == LOOM_OK && shp[0] == 4 && shp[1] == 10 && shp[2] == 3);
  int64_t bs[4] = {2, 10, 3, 4};
  CHECK(loom_broadcast_to(g, x, 4, bs, &r) == LOOM_OK);
  int32_t axes[2] = {0, 2};
  CHECK(loom_reduce(g, LOOM_REDUCE_MEAN, x, 2, axes, 1, &r) == LOOM_OK);
  CHECK(loom_node_info(g, r, NULL, &nd, shp) == LOOM_OK && nd == 3 && shp[0] == 1 && shp[1] == 3 && shp[2] == 1);
  LoomNode lo, hi, cl;
  CHECK(loom_weak_int(g, 0, &lo) == LOOM_OK);
  CHECK(loom_weak_float(g, 1.5, &hi) == LOOM_OK);
  CHECK(loom_clip(g, x, lo, hi, &cl) == LOOM_OK);
  CHECK(g->ir.nodes[cl].op == LOOM_OP_MINIMUM && g->ir.nodes[cl].dtype == LOOM_FLOAT32);
  CHECK(loom_clip(g, x, -1, -1, &cl) == LOOM_OK && cl == x);
  loom_graph_destroy(g);
  CHECK(cnt.live == 0);
}

static const char *kernel_text =
    "kernel k0_softmax ndim 2 keep 1 index 64\n"
    "  buf 0 in f16 [s,1]\n"
    "  buf 1 out f32 [1,0]\n"
    "  %0 = load f32 buf 0\n"
    "  %1 = exp f32 %0\n"
    "  %2 = acc f32 phase 0\n"
    "  %3 = const f32 0.5\n"
    "  %4 = mul f32 %2 %3\n"
    "  %5 = redsize i64\n"
    "  %6 = cast f32 %5\n"
    "  %7 = truediv f32 %4 %6\n"
    "  %8 = lt b1 %0 %3\n"
    "  %9 = where f32 %8 %0 %3\n"
    "  phase reduce sum f32 %1\n"
    "  phase final store buf 1 %7\n"
    "  phase reduce max f32 %9\n";

static void test_kernel_roundtrip(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  Arena a;
  arena_init(&a, &ctx);
  Diag d = {LOOM_OK, ""};
  KernelIr *k = NULL;
  CHECK(ir_parse_kernel(&a, kernel_text, &k, &d) == LOOM_OK);
  if (d.status) fprintf(stderr, "kernel parse: %s\n", d.msg);
  if (k) {
    CHECK(k->ndim == 2 && k->nkeep == 1 && k->nbuf == 2 && k->ninstr == 10 && k->nphase == 3 && k->nstore == 1);
    CHECK(strcmp(k->name, "k0_softmax") == 0);
    StrBuf b;
    sb_init(&b, &ctx);
    ir_print_kernel(k, &b);
    char *t = sb_take(&b);
    CHECK_STR(t, kernel_text);
    sb_init(&b, &ctx);
    ir_print_kernel_key(k, &b);
    char *key = sb_take(&b);
    CHECK(key && strncmp(key, "kernel - ndim 2", 15) == 0);
    ctx_free(&ctx, t);
    ctx_free(&ctx, key);
    CHECK(ir_verify_kernel(k, &d) == LOOM_OK);
    /* break it: an operand that is not earlier, a store into an input, an acc of a later phase */
    k->instrs[1].src[0] = 5;
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->instrs[1].src[0] = 0;
    d.status = LOOM_OK;
    k->stores[0].buf = 0;
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->stores[0].buf = 1;
    d.status = LOOM_OK;
    k->instrs[2].phase = 2;
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->instrs[2].phase = 0;
    d.status = LOOM_OK;
    k->instrs[4].dtype = LOOM_FLOAT64;
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->instrs[4].dtype = LOOM_FLOAT32;
    d.status = LOOM_OK;
    CHECK(ir_verify_kernel(k, &d) == LOOM_OK);
  }
  /* parse errors name line:col */
  d.status = LOOM_OK;
  CHECK(ir_parse_kernel(&a, "kernel k ndim 1 keep 1 index 64\n  buf 0 in q32 [s]\n", &k, &d) != LOOM_OK);
  CHECK(strstr(d.msg, "line 2:") != NULL);
  d.status = LOOM_OK;
  CHECK(ir_parse_kernel(&a, "kernel k ndim 1 keep 1 index 64\n  buf 0 in f32 [s]\n  %0 = load f16 buf 0\n", &k, &d) ==
        LOOM_ERR_INTERNAL); /* f16 is never a compute dtype */
  /* a reduce phase's side stores (ir.h) print and parse back; one that reads its own phase is refused */
  const char *side_text = "kernel k0_side ndim 1 keep 0 index 32\n"
                          "  buf 0 in f32 [1]\n"
                          "  buf 1 out f32 [1]\n"
                          "  buf 2 out f32 [0]\n"
                          "  %0 = load f32 buf 0\n"
                          "  %1 = exp f32 %0\n"
                          "  %2 = acc f32 phase 0\n"
                          "  phase reduce sum f32 %1 store buf 1 %1\n"
                          "  phase final store buf 2 %2\n";
  d.status = LOOM_OK;
  CHECK(ir_parse_kernel(&a, side_text, &k, &d) == LOOM_OK);
  if (d.status) fprintf(stderr, "side-store kernel parse: %s\n", d.msg);
  if (k) {
    CHECK(k->nphase == 2 && k->phases[0].nstores == 1 && k->phases[0].store_begin == 0 && k->nstore == 2);
    StrBuf sb;
    sb_init(&sb, &ctx);
    ir_print_kernel(k, &sb);
    char *t = sb_take(&sb);
    CHECK_STR(t, side_text);
    ctx_free(&ctx, t);
  }
  d.status = LOOM_OK;
  CHECK(ir_parse_kernel(&a, "kernel k ndim 1 keep 0 index 32\n  buf 0 in f32 [1]\n  buf 1 out f32 [1]\n"
                            "  %0 = load f32 buf 0\n  %1 = acc f32 phase 0\n  phase reduce sum f32 %0 store buf 1 %1\n",
                        &k, &d) == LOOM_ERR_INTERNAL);
  arena_free_all(&a);
  IrGraph g;
  CHECK(ir_graph_init(&g, &ctx, &d) == LOOM_OK);
  int32_t roots[2], nr;
  d.status = LOOM_OK;
  CHECK(ir_parse_graph(&g, "%0 = input 0 f32 [2] strides [1]\n%1 = add f32 [2] %0 %7\n", &nr, roots, 2, &d) != LOOM_OK);
  CHECK(strstr(d.msg, "line 2:") != NULL);
  d.status = LOOM_OK;
  CHECK(ir_parse_graph(&g, "%0 = input 0 f32 [2] strides [1]\n%1 = add f64 [2] %0 %0\n", &nr, roots, 2, &d) ==
        LOOM_ERR_INTERNAL); /* parsed but the verifier rejects the dtype */
  CHECK(g.nnodes == 0 && g.ninputs == 0);
  ir_graph_free(&g);
  /* arena: big and small requests, alignment */
  arena_init(&a, &ctx);
  for (int i = 0; i < 100; i++) {
    unsigned char *p = arena_alloc(&a, (size_t)(i * 997 % 40000) + 1);
    CHECK(p && ((uintptr_t)p & 15) == 0 && p[0] == 0);
  }
  arena_free_all(&a);
  CHECK(cnt.live == 0);
}

/* Every allocation failure point: no crash, no leak, a clean status. */
/* A kernel specialized on a short last dim (KernelIr.row_extent): " rows E" on the kernel line, printed
 * back, part of the key (the generic key differs), and the verifier's conditions: rows >= 2, at most the
 * last dim reduced, a constant stride on the last dim for every buffer. */
static const char *rows_text =
    "kernel k0_map ndim 2 keep 2 index 32 rows 3\n"
    "  buf 0 in u8 [s,1]\n"
    "  buf 1 in f32 [0,1]\n"
    "  buf 2 out f32 [s,1]\n"
    "  %0 = load u8 buf 0\n"
    "  %1 = cast f32 %0\n"
    "  %2 = load f32 buf 1\n"
    "  %3 = sub f32 %1 %2\n"
    "  phase map store buf 2 %3\n";

/* k's text (key: the cache key's form), allocated in ctx. */
static char *printed(LoomContext *ctx, const KernelIr *k, bool key) {
  StrBuf b;
  sb_init(&b, ctx);
  if (key) ir_print_kernel_key(k, &b);
  else ir_print_kernel(k, &b);
  return sb_take(&b);
}

static void test_row_extent(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  Arena a;
  arena_init(&a, &ctx);
  Diag d = {LOOM_OK, ""};
  KernelIr *k = NULL;
  CHECK(ir_parse_kernel(&a, rows_text, &k, &d) == LOOM_OK);
  if (k) {
    CHECK(k->row_extent == 3);
    char *t = printed(&ctx, k, false);
    CHECK_STR(t, rows_text);
    char *key = printed(&ctx, k, true);
    CHECK(key && strncmp(key, "kernel - ndim 2 keep 2 index 32 rows 3\n", 39) == 0);
    k->row_extent = 0;
    char *generic = printed(&ctx, k, true);
    CHECK(generic && key && strcmp(generic, key) != 0 && !strstr(generic, "rows"));
    ctx_free(&ctx, t);
    ctx_free(&ctx, key);
    ctx_free(&ctx, generic);
    k->row_extent = 3;
    CHECK(ir_verify_kernel(k, &d) == LOOM_OK);
    k->bufs[0].layout[1] = KL_ANY; /* no constant stride along the row */
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->bufs[0].layout[1] = KL_ONE;
    d.status = LOOM_OK;
    k->nkeep = 0; /* both dims reduced */
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    k->nkeep = 2;
    d.status = LOOM_OK;
  }
  KernelIr *bad = NULL;
  CHECK(ir_parse_kernel(&a, "kernel - ndim 1 keep 1 index 32 rows 1\n", &bad, &d) != LOOM_OK); /* rows >= 2 */
  arena_free_all(&a);
  CHECK(cnt.live == 0);
}

/* A reduction the GPU walks by columns because of its strides (KernelIr.walk_cols): " cols" on the kernel
 * line, printed back, part of the key, and verified to keep a dim and reduce one. */
static const char *cols_text =
    "kernel k0_reduce_sum ndim 2 keep 1 index 32 cols\n"
    "  buf 0 in f32 [s,s]\n"
    "  buf 1 out f32 [1,0]\n"
    "  %0 = load f32 buf 0\n"
    "  %1 = acc f32 phase 0\n"
    "  phase reduce sum f32 %0\n"
    "  phase final store buf 1 %1\n";

static void test_walk_cols(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  Arena a;
  arena_init(&a, &ctx);
  Diag d = {LOOM_OK, ""};
  KernelIr *k = NULL;
  CHECK(ir_parse_kernel(&a, cols_text, &k, &d) == LOOM_OK);
  if (k) {
    CHECK(k->walk_cols == 1 && k->row_extent == 0);
    CHECK(ir_verify_kernel(k, &d) == LOOM_OK);
    char *t = printed(&ctx, k, false);
    CHECK_STR(t, cols_text);
    char *key = printed(&ctx, k, true);
    k->walk_cols = 0;
    char *generic = printed(&ctx, k, true);
    CHECK(generic && key && strcmp(generic, key) != 0 && !strstr(generic, "cols"));
    ctx_free(&ctx, t);
    ctx_free(&ctx, key);
    ctx_free(&ctx, generic);
    k->walk_cols = 1;
    k->nkeep = 2; /* nothing reduced */
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL);
    d.status = LOOM_OK;
  }
  KernelIr *both = NULL; /* rows and cols together parse in that order */
  CHECK(ir_parse_kernel(&a, "kernel - ndim 2 keep 1 index 32 rows 3 cols\n", &both, &d) == LOOM_OK && both &&
        both->row_extent == 3 && both->walk_cols == 1);
  KernelIr *bad = NULL;
  d.status = LOOM_OK;
  CHECK(ir_parse_kernel(&a, "kernel - ndim 2 keep 1 index 32 colsx\n", &bad, &d) != LOOM_OK);
  /* the host's column-stride specialization (KernelIr.col_stride): 2, 3, 4, -1 or other, printed back */
  static const char *const strides[] = {"2", "3", "4", "-1", "other"};
  for (int i = 0; i < 5; i++) {
    char text[512];
    snprintf(text, sizeof text, "kernel k0_reduce_sum ndim 2 keep 1 index 32 colstride %s\n%s", strides[i],
             strchr(cols_text, '\n') + 1);
    KernelIr *ks = NULL;
    d.status = LOOM_OK;
    CHECK(ir_parse_kernel(&a, text, &ks, &d) == LOOM_OK && ks && ir_verify_kernel(ks, &d) == LOOM_OK);
    if (!ks) continue;
    CHECK(ks->col_stride == (i == 4 ? IR_COL_STRIDE_OTHER : atoi(strides[i])));
    char *t = printed(&ctx, ks, false);
    CHECK_STR(t, text);
    ctx_free(&ctx, t);
    ks->nkeep = 2; /* nothing reduced */
    CHECK(ir_verify_kernel(ks, &d) == LOOM_ERR_INTERNAL);
  }
  static const char *const bad_strides[] = {"0", "1", "5", "-2", "any"};
  for (int i = 0; i < 5; i++) {
    char text[128];
    snprintf(text, sizeof text, "kernel - ndim 2 keep 1 index 32 colstride %s\n", bad_strides[i]);
    d.status = LOOM_OK;
    CHECK(ir_parse_kernel(&a, text, &bad, &d) != LOOM_OK);
  }
  arena_free_all(&a);
  CHECK(cnt.live == 0);
}

static void test_oom(void) {
  int ok = 0, oom = 0;
  for (long fail_at = 0; fail_at < 60; fail_at++) {
    LoomContext ctx;
    Counting cnt;
    make_ctx(&ctx, &cnt);
    cnt.fail_at = fail_at;
    LoomGraph *g = NULL;
    LoomStatus st = loom_graph_create(&ctx, &g);
    if (st == LOOM_OK) {
      static float buf[6];
      int64_t s[2] = {2, 3};
      LoomArray a = arr(buf, LOOM_FLOAT32, 2, s);
      LoomNode x = -1, y = x;
      st = loom_input(g, &a, &x);
      for (int i = 0; i < 200 && st == LOOM_OK; i++) {
        LoomNode k;
        st = loom_const_i64(g, i, LOOM_FLOAT32, &k);
        if (st == LOOM_OK) st = loom_binary(g, LOOM_OP_ADD, i ? y : x, k, &y);
      }
      if (st == LOOM_OK) {
        StrBuf b;
        sb_init(&b, &ctx);
        ir_print_graph(&g->ir, 1, &y, &b);
        char *t = sb_take(&b);
        if (!t) st = LOOM_ERR_OUT_OF_MEMORY;
        ctx_free(&ctx, t);
      }
      loom_graph_destroy(g);
    }
    if (st == LOOM_OK) ok++;
    else if (st == LOOM_ERR_OUT_OF_MEMORY) oom++;
    CHECK(st == LOOM_OK || st == LOOM_ERR_OUT_OF_MEMORY);
    CHECK(cnt.live == 0);
  }
  CHECK(oom > 0 && ok > 0);
}

/* complex and bfloat16 constants print as re+imj / their rounded value and parse back */
static void test_dtype_roundtrip(void) {
  LoomContext ctx;
  Counting cnt;
  make_ctx(&ctx, &cnt);
  LoomGraph *g;
  CHECK(loom_graph_create(&ctx, &g) == LOOM_OK);
  static float buf[6], hbuf[3]; /* complex64 and bfloat16 data (never read: nothing is evaluated) */
  int64_t s3[1] = {3};
  LoomArray a = arr(buf, LOOM_COMPLEX64, 1, s3), h = arr(hbuf, LOOM_BFLOAT16, 1, s3);
  LoomNode x, y, j, m, ab, c, bf, sum, k;
  CHECK(loom_input(g, &a, &x) == LOOM_OK && loom_input(g, &h, &y) == LOOM_OK);
  CHECK(loom_weak_complex(g, -0.5, 2.0, &j) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_MUL, x, j, &m) == LOOM_OK);
  CHECK(loom_unary(g, LOOM_OP_ABS, m, &ab) == LOOM_OK);
  CHECK(loom_const_f64(g, 0.1, LOOM_BFLOAT16, &bf) == LOOM_OK);
  CHECK(loom_binary(g, LOOM_OP_ADD, y, bf, &sum) == LOOM_OK);
  CHECK(loom_const_complex(g, __builtin_nan(""), -__builtin_inf(), LOOM_COMPLEX128, &k) == LOOM_OK);
  CHECK(loom_cast(g, sum, LOOM_COMPLEX64, &c) == LOOM_OK);
  LoomNode roots[3] = {ab, c, k};
  char *t1 = print_graph(&g->ir, 3, roots);
  const char *want =
      "%0 = input 0 c64 [3] strides [1]\n"
      "%1 = input 1 bf16 [3] strides [1]\n"
      "%2 = const c64 [] -0.5+2j\n" /* the weak -0.5+2j became a complex64 constant */
      "%3 = mul c64 [3] %0 %2\n"
      "%4 = abs f32 [3] %3\n"
      "%5 = const bf16 [] 0.10009765625\n" /* 0.1 rounded to bfloat16 */
      "%6 = add bf16 [3] %1 %5\n"
      "%7 = const c128 [] nan-infj\n"
      "%8 = cast c64 [3] %6\n"
      "output %4\n"
      "output %8\n"
      "output %7\n";
  CHECK_STR(t1, want);
  IrGraph g2;
  Diag d = {LOOM_OK, ""};
  CHECK(ir_graph_init(&g2, &ctx, &d) == LOOM_OK);
  int32_t r2[4], nr = 0;
  CHECK(ir_parse_graph(&g2, t1, &nr, r2, 4, &d) == LOOM_OK);
  if (d.status) fprintf(stderr, "parse: %s\n", d.msg);
  char *t2 = print_graph(&g2, nr, r2);
  CHECK_STR(t2, t1);
  CHECK(ir_verify_graph(&g2, &d) == LOOM_OK);
  ctx_free(&ctx, t1);
  ctx_free(&ctx, t2);
  ir_graph_free(&g2);
  loom_graph_destroy(g);
  CHECK(cnt.live == 0);
}

int main(void) {
  test_graph_roundtrip();
  test_dtype_roundtrip();
  test_hash_consing();
  test_errors();
  test_movement();
  test_kernel_roundtrip();
  test_row_extent();
  test_walk_cols();
  test_oom();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
