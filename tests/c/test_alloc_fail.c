/* SPDX-License-Identifier: Apache-2.0 */
/* test_alloc_fail.c: allocation-failure injection through the pluggable allocator.
 *
 * Approach (Lua's T.alloccount): a counting allocator fails its k-th allocation. For k = 1, 2, ...
 * (1) creating a context must fail cleanly with LOOM_ERR_OUT_OF_MEMORY until it succeeds;
 * (2) on a fresh context, building and evaluating a small fused graph (elementwise + reduction, one
 *     output given and one allocated by Loom, so compile, cache, temporaries and outputs are all on
 *     the path) must fail with LOOM_ERR_OUT_OF_MEMORY, then with failures switched off the same
 *     context must evaluate a new graph correctly. The loop ends at the first k the whole run
 *     survives. After each context is destroyed every block it allocated must be freed (the counter
 *     says so even without ASan).
 */
#include "test_common.h"

typedef struct FailAlloc {
  long calls;   /* allocations attempted since the last reset */
  long fail_at; /* 0: never fail */
  long live;    /* blocks currently allocated */
  bool failed;  /* the injected failure happened */
} FailAlloc;

static void *fa_alloc(void *user, size_t size) {
  FailAlloc *fa = user;
  fa->calls++;
  if (fa->fail_at && fa->calls == fa->fail_at) {
    fa->failed = true;
    return NULL;
  }
  size_t rounded = (size + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, rounded ? rounded : 64);
  if (p) fa->live++;
  return p;
}
static void fa_free(void *user, void *ptr) {
  FailAlloc *fa = user;
  if (!ptr) return;
  fa->live--;
  free(ptr);
}

/* Builds y = sum(exp(a) * b, axis=1) and z = a * b + 1 and evaluates both.
 * *stage tells how far it got. */
static LoomStatus build_and_eval(LoomContext *ctx, const LoomArray *a, const LoomArray *b, double *yv,
                                 LoomArray *zout, int *stage) {
  LoomGraph *g = NULL;
  *stage = 0;
  LoomStatus st = loom_graph_create(ctx, &g);
  if (st != LOOM_OK) return st;
  *stage = 1;
  LoomNode an, bn, e, p, y, one, q, z;
  int32_t ax = 1;
  if ((st = loom_input(g, a, &an)) || (st = loom_input(g, b, &bn)) ||
      (st = loom_unary(g, LOOM_OP_EXP, an, &e)) || (st = loom_binary(g, LOOM_OP_MUL, e, bn, &p)) ||
      (st = loom_reduce(g, LOOM_REDUCE_SUM, p, 1, &ax, 0, &y)) || (st = loom_weak_float(g, 1.0, &one)) ||
      (st = loom_binary(g, LOOM_OP_MUL, an, bn, &q)) || (st = loom_binary(g, LOOM_OP_ADD, q, one, &z))) {
    loom_graph_destroy(g);
    return st;
  }
  *stage = 2;
  LoomNode nodes[2] = {y, z};
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  outs[0].data = yv;
  outs[0].dtype = LOOM_FLOAT64;
  outs[0].ndim = 1;
  outs[0].shape[0] = a->shape[0];
  outs[0].strides[0] = 1;
  st = loom_eval(g, 2, nodes, outs);
  if (st == LOOM_OK) *zout = outs[1];
  else if (outs[1].data) { /* a failed eval must not hand out memory */
    CHECK(false, "failed loom_eval left an allocated output");
    loom_array_free(ctx, &outs[1]);
  }
  loom_graph_destroy(g);
  return st;
}

static bool check_results(const LoomArray *a, const LoomArray *b, const double *yv, const LoomArray *z) {
  bool ok = true;
  for (int64_t r = 0; r < a->shape[0]; r++) {
    double s = 0;
    for (int64_t c = 0; c < a->shape[1]; c++) {
      int64_t i = r * a->shape[1] + c;
      s += exp(tc_get_f(a, i)) * tc_get_f(b, i);
      ok &= tc_close_rel(tc_get_f(z, i), tc_get_f(a, i) * tc_get_f(b, i) + 1, 1e-15, 0);
    }
    ok &= tc_close_rel(yv[r], s, 1e-13, 0);
  }
  return ok;
}

int main(void) {
  FailAlloc fa = {0, 0, 0, false};
  LoomAllocator alloc = {fa_alloc, fa_free, &fa};
  LoomContextOptions opts = {&alloc, 2};

  /* (1) context creation */
  long k;
  for (k = 1; k < 10000; k++) {
    fa = (FailAlloc){0, k, 0, false};
    LoomContext *ctx = NULL;
    LoomStatus st = loom_context_create_ex(&opts, &ctx);
    if (st == LOOM_OK) {
      loom_context_destroy(ctx);
      CHECK(fa.live == 0, "context create/destroy: %ld blocks leaked", fa.live);
      if (!fa.failed) break;
      continue; /* the failure was absorbed: fine if nothing leaked */
    }
    CHECK(st == LOOM_ERR_OUT_OF_MEMORY, "context creation failing at allocation %ld: %s", k,
          loom_status_name(st));
    CHECK(ctx == NULL, "failed context creation returns no context");
    CHECK(fa.live == 0, "failed context creation at %ld leaked %ld blocks", k, fa.live);
  }
  printf("context creation: %ld allocation points\n", k - 1);

  /* (2) graph building and evaluation on a fresh context per k */
  int64_t R = 8, C = 33;
  LoomArray a = tc_new2(LOOM_FLOAT64, R, C), b = tc_new2(LOOM_FLOAT64, R, C);
  for (int64_t i = 0; i < R * C; i++) {
    tc_set_f(&a, i, (double)(i % 7) / 7.0);
    tc_set_f(&b, i, (double)(i % 5) - 2.0);
  }
  double yv[8];
  long points = 0;
  for (k = 1; k < 20000; k++) {
    fa = (FailAlloc){0, 0, 0, false};
    LoomContext *ctx = NULL;
    if (!CHECK(loom_context_create_ex(&opts, &ctx) == LOOM_OK, "context (no failures)")) break;
    tc_ctx = ctx; /* CHECK_* messages read the last error from here */
    fa.calls = 0;
    fa.fail_at = k;
    LoomArray z;
    memset(&z, 0, sizeof z);
    int stage = 0;
    LoomStatus st = build_and_eval(ctx, &a, &b, yv, &z, &stage);
    bool injected = fa.failed;
    fa.fail_at = 0;
    if (st == LOOM_OK) {
      CHECK(check_results(&a, &b, yv, &z), "results with failure at %ld (absorbed)", k);
      loom_array_free(ctx, &z);
    } else {
      CHECK(st == LOOM_ERR_OUT_OF_MEMORY, "failure at allocation %ld (stage %d): %s: %s", k, stage,
            loom_status_name(st), loom_last_error(ctx));
      CHECK(injected, "an error without an injected failure at %ld: %s", k, loom_last_error(ctx));
      /* the same context still works */
      memset(&z, 0, sizeof z);
      memset(yv, 0, sizeof yv);
      st = build_and_eval(ctx, &a, &b, yv, &z, &stage);
      if (CHECK(st == LOOM_OK, "evaluation after a failure at %ld: %s", k, loom_last_error(ctx))) {
        CHECK(check_results(&a, &b, yv, &z), "results after a failure at %ld", k);
        loom_array_free(ctx, &z);
      }
    }
    loom_context_destroy(ctx);
    tc_ctx = NULL;
    CHECK(fa.live == 0, "failure at %ld: %ld blocks leaked", k, fa.live);
    if (!injected) break; /* the whole run needed fewer than k allocations: done */
    points++;
  }
  printf("graph + eval: %ld allocation points tested\n", points);
  CHECK(points > 0, "at least one allocation was failed");
  tc_free(&a);
  tc_free(&b);
  return tc_finish();
}
