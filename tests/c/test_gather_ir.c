/* SPDX-License-Identifier: Apache-2.0 */
/* test_gather_ir.c: IR_GATHER / IR_SCATTER and their kernel forms (KI_GATHER, scatter stores) at the IR
 * level: the builders' checks and messages (loom_gather, loom_scatter), hash-consing, graph and kernel
 * print -> parse -> print round trips, and the verifier's rejection of malformed nodes and stores.
 * Values are tested against NumPy in tests/python/test_gather.py; fusion in tests/golden/19_*, 20_*. */
#include <stdio.h>
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

static char *print_graph(const IrGraph *g, int n, const int32_t *roots) {
  StrBuf b;
  sb_init(&b, g->ctx);
  ir_print_graph(g, n, roots, &b);
  return sb_take(&b);
}

static LoomArray desc(LoomDType t, int ndim, const int64_t *shape) {
  static float mem[256];
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = mem;
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

static void test_builders(LoomContext *ctx) {
  LoomGraph *g;
  CHECK(loom_graph_create(ctx, &g) == LOOM_OK);
  int64_t s45[2] = {4, 5}, s35[2] = {3, 5}, s15[2] = {1, 5}, s3[1] = {3}, s05[2] = {0, 5};
  LoomArray x = desc(LOOM_FLOAT32, 2, s45), i = desc(LOOM_INT32, 2, s35), i1 = desc(LOOM_INT32, 2, s15),
            f = desc(LOOM_FLOAT32, 2, s35), v = desc(LOOM_INT64, 1, s3), e = desc(LOOM_FLOAT32, 2, s05);
  LoomNode nx, ni, ni1, nf, nv, ne, g1, g2, g3, sc;
  CHECK(loom_input(g, &x, &nx) == LOOM_OK && loom_input(g, &i, &ni) == LOOM_OK && loom_input(g, &i1, &ni1) == LOOM_OK);
  CHECK(loom_input(g, &f, &nf) == LOOM_OK && loom_input(g, &v, &nv) == LOOM_OK && loom_input(g, &e, &ne) == LOOM_OK);
  CHECK(loom_gather(g, nx, ni, 0, 1, &g1) == LOOM_OK);
  CHECK(loom_gather(g, nx, ni, -2, 1, &g2) == LOOM_OK && g1 == g2); /* hash-consed, axis normalized */
  CHECK(loom_gather(g, nx, ni, 0, 2, &g3) == LOOM_OK && g3 != g1);  /* another mode: another node */
  LoomDType dt;
  int32_t nd;
  int64_t shape[LOOM_MAX_RANK];
  CHECK(loom_node_info(g, g1, &dt, &nd, shape) == LOOM_OK && dt == LOOM_FLOAT32 && nd == 2 && shape[0] == 3 && shape[1] == 5);
  CHECK(loom_gather(g, nx, ni1, 1, 0, &g2) == LOOM_OK); /* a (1,5) index broadcast to (4,5) along axis 1 */
  CHECK(loom_node_info(g, g2, &dt, &nd, shape) == LOOM_OK && shape[0] == 4 && shape[1] == 5);
  CHECK(loom_gather(g, nx, nf, 0, 0, &g2) == LOOM_ERR_DTYPE);
  CHECK(strstr(loom_last_error(ctx), "indices must be integers") != NULL);
  CHECK(loom_gather(g, nx, ni, 2, 0, &g2) == LOOM_ERR_AXIS);
  CHECK(loom_gather(g, nx, ni, 0, 7, &g2) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_gather(g, nx, nv, 0, 0, &g2) == LOOM_ERR_SHAPE); /* rank 1 index of rank 2 data */
  CHECK(loom_gather(g, ne, ni1, 0, 0, &g2) == LOOM_ERR_SHAPE);
  CHECK(strstr(loom_last_error(ctx), "non-empty take from an empty axis") != NULL);
  CHECK(loom_scatter(g, nx, nv, nf, 0, &sc) == LOOM_ERR_SHAPE); /* values (3,5) do not broadcast to (3,) */
  LoomNode one;
  CHECK(loom_weak_float(g, 1.5, &one) == LOOM_OK);
  CHECK(loom_scatter(g, nx, nv, one, 0, &sc) == LOOM_OK);
  CHECK(loom_node_info(g, sc, &dt, &nd, shape) == LOOM_OK && dt == LOOM_FLOAT32 && nd == 2 && shape[0] == 4);
  CHECK(loom_scatter(g, nx, nv, one, 5, &sc) == LOOM_ERR_INVALID_ARGUMENT);
  LoomArray b = desc(LOOM_BOOL, 1, s3);
  LoomNode nb, sb2;
  CHECK(loom_input(g, &b, &nb) == LOOM_OK);
  CHECK(loom_scatter(g, nb, nv, nb, 1, &sb2) == LOOM_ERR_DTYPE); /* add into bool */

  /* print -> parse -> print */
  LoomNode roots[3] = {g1, g3, sc};
  char *t1 = print_graph(&g->ir, 3, roots);
  CHECK(t1 && strstr(t1, "gather wrap f32 [3,5]") && strstr(t1, "gather clip f32 [3,5]") && strstr(t1, "scatter set f32 [4,5]"));
  IrGraph g2r;
  Diag d = {LOOM_OK, ""};
  CHECK(ir_graph_init(&g2r, ctx, &d) == LOOM_OK);
  int32_t r2[4], nr = 0;
  CHECK(ir_parse_graph(&g2r, t1, &nr, r2, 4, &d) == LOOM_OK && nr == 3);
  if (d.status) fprintf(stderr, "parse: %s\n", d.msg);
  char *t2 = print_graph(&g2r, nr, r2);
  CHECK(t1 && t2 && strcmp(t1, t2) == 0);
  CHECK(ir_verify_graph(&g2r, &d) == LOOM_OK);
  /* a gather whose index is not int64 fails the verifier */
  IrNode bad = g2r.nodes[r2[0]];
  bad.src[1] = bad.src[0];
  bad.hash = 0;
  int32_t xb;
  CHECK(ir_add_raw(&g2r, &bad, &xb, &d) == LOOM_OK);
  CHECK(ir_verify_graph(&g2r, &d) == LOOM_ERR_INTERNAL && strstr(d.msg, "gather"));
  ctx_free(ctx, t1);
  ctx_free(ctx, t2);
  ir_graph_free(&g2r);
  loom_graph_destroy(g);
}

static const char *kernel_text =
    "kernel k1_scatter ndim 1 keep 1 index 32\n"
    "  buf 0 in i64 [1]\n"
    "  buf 1 in f32 [0]\n"
    "  buf 2 out f32 [0]\n"
    "  %0 = load i64 buf 0\n"
    "  %1 = param i64 0\n"
    "  %2 = mul i64 %0 %1\n"
    "  %3 = gather f32 buf 1 %2\n"
    "  %4 = param i64 1\n"
    "  phase map store buf 2 %3 at %0 limit %4 set store buf 2 %3 at %0 limit %4 add\n";

static void test_kernel_forms(LoomContext *ctx) {
  Arena a;
  arena_init(&a, ctx);
  Diag d = {LOOM_OK, ""};
  KernelIr *k = NULL;
  CHECK(ir_parse_kernel(&a, kernel_text, &k, &d) == LOOM_OK);
  if (d.status) fprintf(stderr, "kernel parse: %s\n", d.msg);
  if (k) {
    CHECK(k->nstore == 2 && k->stores[0].scatter && k->stores[0].index == 0 && k->stores[0].limit == 4 &&
          k->stores[0].op == IR_SCATTER_SET && k->stores[1].op == IR_SCATTER_ADD);
    CHECK(k->instrs[3].kind == KI_GATHER && k->instrs[3].buf == 1 && k->instrs[3].src[0] == 2);
    StrBuf b;
    sb_init(&b, ctx);
    ir_print_kernel(k, &b);
    char *t = sb_take(&b);
    CHECK(t && strcmp(t, kernel_text) == 0);
    ctx_free(ctx, t);
    CHECK(ir_verify_kernel(k, &d) == LOOM_OK);
    k->stores[0].index = 3; /* a float index */
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL && strstr(d.msg, "scatter store"));
    k->stores[0].index = 0;
    k->instrs[3].buf = 2; /* a gather from an output */
    d.status = LOOM_OK;
    CHECK(ir_verify_kernel(k, &d) == LOOM_ERR_INTERNAL && strstr(d.msg, "gather"));
  }
  arena_free_all(&a);
}

int main(void) {
  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc = *ir_default_allocator();
  test_builders(&ctx);
  test_kernel_forms(&ctx);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
