/* SPDX-License-Identifier: Apache-2.0 */
/* test_fusion.c: kernel counts of graphs built through the public graph API (tinygrad-style
 * check_schedule). Each case builds a graph with loom_* calls, runs pass_run_pipeline on the requested
 * nodes (outputs described as C-contiguous) and checks the number of kernels, plus a few structural
 * facts of the schedule (temps, phases). Prints "N passed, N failed"; exits nonzero on failure.
 */
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/ir.h"
#include "passes/passes.h"

static int passed, failed;

#define CHECK(cond, ...)                                         \
  do {                                                           \
    if (cond) passed++;                                          \
    else {                                                       \
      failed++;                                                  \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
      fprintf(stderr, __VA_ARGS__);                              \
      fprintf(stderr, "\n");                                     \
    }                                                            \
  } while (0)

typedef struct Result {
  int nkernel, ntemp, nphase0;
  int nside0; /* side stores of kernel 0's first phase when it is a REDUCE phase (ir.h) */
} Result;

/* Runs the pipeline on nodes; returns the kernel count (or -1 on error, message on stderr). */
static Result schedule_of(LoomGraph *g, int n, const LoomNode *nodes) {
  Result r = {-1, -1, -1, -1};
  Arena arena;
  arena_init(&arena, g->ctx);
  LoomArray outs[16];
  int32_t roots[16];
  memset(outs, 0, sizeof outs);
  for (int i = 0; i < n && i < 16; i++) {
    const IrNode *x = &g->ir.nodes[nodes[i]];
    roots[i] = nodes[i];
    outs[i].dtype = (LoomDType)x->dtype;
    outs[i].ndim = x->ndim;
    memcpy(outs[i].shape, x->shape, sizeof outs[i].shape);
    pass_contiguous_strides(x->ndim, x->shape, outs[i].strides);
  }
  IrModule m;
  memset(&m, 0, sizeof m);
  m.graph = &g->ir;
  m.arena = &arena;
  m.nroots = n;
  m.roots = roots;
  m.outs = outs;
  Diag d;
  memset(&d, 0, sizeof d);
  if (pass_run_pipeline(&m, &d) == LOOM_OK) {
    r.nkernel = m.schedule->nkernel;
    r.ntemp = m.schedule->ntemp;
    r.nphase0 = m.schedule->nkernel ? m.schedule->kernels[0].ir->nphase : 0;
    const KernelIr *k0 = m.schedule->nkernel ? m.schedule->kernels[0].ir : NULL;
    r.nside0 = k0 && k0->nphase && k0->phases[0].kind == KP_REDUCE ? k0->phases[0].nstores : 0;
  } else {
    fprintf(stderr, "pipeline: %s\n", d.msg);
  }
  arena_free_all(&arena);
  return r;
}

static float data[4096];

static LoomNode input(LoomGraph *g, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  memcpy(a.shape, shape, (size_t)ndim * sizeof *shape);
  pass_contiguous_strides(ndim, shape, a.strides);
  LoomNode x = -1;
  if (loom_input(g, &a, &x) != LOOM_OK) fprintf(stderr, "loom_input failed\n");
  return x;
}

int main(void) {
  LoomContext ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.alloc = *ir_default_allocator();
  LoomGraph *g = NULL;
  if (loom_graph_create(&ctx, &g) != LOOM_OK) {
    fprintf(stderr, "cannot create a graph\n");
    return 1;
  }
  const int64_t s45[2] = {4, 5}, s41[2] = {4, 1}, s5[1] = {5}, s31[2] = {3, 1}, s14[2] = {1, 4};
  LoomNode a = input(g, 2, s45), b = input(g, 2, s45), c = input(g, 2, s45), t, u, v, w;
  int32_t ax1 = 1, ax0 = 0, axm1 = -1;
  Result r;

  /* exp(a + b) * c */
  loom_binary(g, LOOM_OP_ADD, a, b, &t);
  loom_unary(g, LOOM_OP_EXP, t, &u);
  loom_binary(g, LOOM_OP_MUL, u, c, &v);
  r = schedule_of(g, 1, &v);
  CHECK(r.nkernel == 1, "exp(a+b)*c: %d kernels", r.nkernel);

  /* sum(a * b, axis=1) */
  loom_binary(g, LOOM_OP_MUL, a, b, &t);
  loom_reduce(g, LOOM_REDUCE_SUM, t, 1, &ax1, 0, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1 && r.ntemp == 0, "sum(a*b,1): %d kernels %d temps", r.nkernel, r.ntemp);

  /* full sum, sum over axis 0 */
  loom_reduce(g, LOOM_REDUCE_SUM, a, 0, NULL, 0, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "sum(a): %d kernels", r.nkernel);
  loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax0, 0, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "sum(a,0): %d kernels", r.nkernel);

  /* softmax over the last axis: one kernel of phases [max, sum, map] */
  loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &axm1, 1, &t);
  loom_binary(g, LOOM_OP_SUB, a, t, &u);
  loom_unary(g, LOOM_OP_EXP, u, &v);
  loom_reduce(g, LOOM_REDUCE_SUM, v, 1, &axm1, 1, &w);
  loom_binary(g, LOOM_OP_TRUEDIV, v, w, &t);
  r = schedule_of(g, 1, &t);
  CHECK(r.nkernel == 1 && r.nphase0 == 3 && r.ntemp == 0, "softmax: %d kernels, %d phases, %d temps",
        r.nkernel, r.nphase0, r.ntemp);

  /* x - mean(x, axis=1, keepdims); mean without keepdims as output; mean / 2 as a FINAL store */
  loom_reduce(g, LOOM_REDUCE_MEAN, a, 1, &ax1, 1, &t);
  loom_binary(g, LOOM_OP_SUB, a, t, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "x - mean(x): %d kernels", r.nkernel);
  loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax1, 0, &t);
  loom_unary(g, LOOM_OP_SQRT, t, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "sqrt(sum(x)): %d kernels", r.nkernel);

  /* transpose + add; (3,1) + (1,4) */
  int64_t s54[2] = {5, 4};
  LoomNode x54 = input(g, 2, s54);
  loom_permute(g, x54, NULL, &t);
  loom_binary(g, LOOM_OP_ADD, t, a, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "x.T + a: %d kernels", r.nkernel);
  LoomNode p = input(g, 2, s31), q = input(g, 2, s14);
  loom_binary(g, LOOM_OP_ADD, p, q, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "(3,1)+(1,4): %d kernels", r.nkernel);

  /* two outputs of one shape -> one kernel; the same node twice -> one kernel */
  LoomNode two[2];
  loom_binary(g, LOOM_OP_ADD, a, b, &two[0]);
  loom_binary(g, LOOM_OP_MUL, a, b, &two[1]);
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1, "two outputs: %d kernels", r.nkernel);
  two[1] = two[0];
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1, "same node twice: %d kernels", r.nkernel);

  /* a reduction that is an output and feeds an op of another shape: 2 kernels, no temp (the second
   * reads the sum from its C-contiguous output: passes/lower.c) */
  loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax1, 1, &t); /* (4,1) */
  int64_t s47[2] = {4, 7};
  LoomNode z = input(g, 2, s47);
  loom_binary(g, LOOM_OP_ADD, t, z, &u);
  two[0] = t;
  two[1] = u;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 2 && r.ntemp == 0, "sum + other shape: %d kernels %d temps", r.nkernel, r.ntemp);

  /* reshape of a non-contiguous slice: a copy kernel first */
  int64_t st[2] = {0, 0}, sp[2] = {LOOM_SLICE_NONE, 3}, step[2] = {1, 1}, flat[1] = {12};
  loom_slice(g, a, st, sp, step, &t);
  loom_reshape(g, t, 1, flat, &u);
  loom_unary(g, LOOM_OP_EXP, u, &v);
  r = schedule_of(g, 1, &v);
  CHECK(r.nkernel == 2, "reshape(slice): %d kernels", r.nkernel);

  /* constant folding: 2 * 3 + x is one kernel with one constant */
  LoomNode k2, k3;
  loom_const_f64(g, 2.0, LOOM_FLOAT32, &k2);
  loom_const_f64(g, 3.0, LOOM_FLOAT32, &k3);
  loom_binary(g, LOOM_OP_MUL, k2, k3, &t);
  loom_binary(g, LOOM_OP_ADD, t, a, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "2*3+x: %d kernels", r.nkernel);
  /* a constant output: one kernel */
  r = schedule_of(g, 1, &t);
  CHECK(r.nkernel == 1, "const output: %d kernels", r.nkernel);

  /* argmax over axis 0; an input returned as is; a 1-d vector broadcast */
  loom_reduce(g, LOOM_REDUCE_ARGMAX, a, 1, &ax0, 0, &t);
  r = schedule_of(g, 1, &t);
  CHECK(r.nkernel == 1, "argmax: %d kernels", r.nkernel);
  r = schedule_of(g, 1, &a);
  CHECK(r.nkernel == 1, "copy of an input: %d kernels", r.nkernel);
  LoomNode vec = input(g, 1, s5);
  loom_binary(g, LOOM_OP_MUL, a, vec, &t);
  loom_reduce(g, LOOM_REDUCE_SUM, t, 1, &ax1, 0, &u);
  r = schedule_of(g, 1, &u);
  CHECK(r.nkernel == 1, "sum(a * v): %d kernels", r.nkernel);

  /* two independent reductions of different shapes: 2 kernels */
  loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax0, 0, &two[0]);
  loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax1, 0, &two[1]);
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 2, "sum(a,0), sum(a,1): %d kernels", r.nkernel);
  (void)s41;

  /* reduction epilogues of maps (fuse_place.c take_map_kernel): a reduction over the map's own shape that
   * reads its roots at the point joins the map's kernel, which stores them as it folds (side stores).
   * amp's unscale: g32 = a * 0.5 and any(~isfinite(g32)), both outputs: one kernel, no temp */
  LoomNode half, fin, nfin;
  loom_const_f64(g, 0.5, LOOM_FLOAT32, &half);
  loom_binary(g, LOOM_OP_MUL, a, half, &t);
  loom_unary(g, LOOM_OP_ISFINITE, t, &fin);
  loom_unary(g, LOOM_OP_LOGICAL_NOT, fin, &nfin);
  loom_reduce(g, LOOM_REDUCE_ANY, nfin, 0, NULL, 0, &u);
  two[0] = t;
  two[1] = u;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1 && r.ntemp == 0 && r.nside0 == 1 && r.nphase0 == 2,
        "g32, any(~isfinite(g32)): %d kernels %d temps %d side stores %d phases", r.nkernel, r.ntemp, r.nside0,
        r.nphase0);
  two[0] = u; /* the outputs in the other order: the same schedule */
  two[1] = t;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1 && r.nside0 == 1, "any(~isfinite(g32)), g32: %d kernels %d side stores", r.nkernel, r.nside0);
  /* y = exp(a) and its row sums, column sums, full max */
  loom_unary(g, LOOM_OP_EXP, a, &t);
  for (int axis = -1; axis <= 1; axis++) {
    int32_t ax = axis;
    loom_reduce(g, LOOM_REDUCE_SUM, t, axis < 0 ? 0 : 1, &ax, 0, &u);
    two[0] = t;
    two[1] = u;
    r = schedule_of(g, 2, two);
    CHECK(r.nkernel == 1 && r.ntemp == 0 && r.nside0 == 1, "exp(a), sum(exp(a), axis %d): %d kernels %d temps %d side",
          axis, r.nkernel, r.ntemp, r.nside0);
  }
  /* two maps and a reduction of both: one kernel, two side stores */
  LoomNode m2[3];
  loom_unary(g, LOOM_OP_EXP, a, &m2[0]);
  loom_binary(g, LOOM_OP_MUL, a, b, &m2[1]);
  loom_binary(g, LOOM_OP_ADD, m2[0], m2[1], &t);
  loom_reduce(g, LOOM_REDUCE_MAX, t, 1, &ax1, 0, &m2[2]);
  r = schedule_of(g, 3, m2);
  CHECK(r.nkernel == 1 && r.nside0 == 2, "exp(a), a*b, max(exp(a)+a*b, 1): %d kernels %d side", r.nkernel, r.nside0);
  /* e = exp(a) stored, then e / sum(e, axis=1, keepdims): the sum folds e (side store), the division
   * joins as a MAP phase reading e at the point: one kernel of phases [sum + side, map] */
  loom_unary(g, LOOM_OP_EXP, a, &t);
  loom_reduce(g, LOOM_REDUCE_SUM, t, 1, &ax1, 1, &u);
  loom_binary(g, LOOM_OP_TRUEDIV, t, u, &v);
  two[0] = t;
  two[1] = v;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1 && r.nside0 == 1 && r.nphase0 == 2, "exp(a), exp(a)/sum: %d kernels %d side %d phases",
        r.nkernel, r.nside0, r.nphase0);
  /* not taken: the reduction reads the map through a view (a transpose), or reads a float16 map inside
   * its cone (its store rounds, a local read would not): two kernels, the second reads the first's output */
  loom_unary(g, LOOM_OP_EXP, a, &t);
  loom_permute(g, t, NULL, &u);
  loom_reduce(g, LOOM_REDUCE_SUM, u, 1, &ax1, 0, &v);
  two[0] = t;
  two[1] = v;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 2 && r.nside0 == 0, "exp(a), sum(exp(a).T, 1): %d kernels %d side", r.nkernel, r.nside0);
  loom_cast(g, a, LOOM_FLOAT16, &t);
  loom_binary(g, LOOM_OP_MUL, t, t, &v);
  loom_reduce(g, LOOM_REDUCE_SUM, v, 0, NULL, 0, &u);
  two[0] = t;
  two[1] = u;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 2, "f16(a), sum(f16(a)**2): %d kernels", r.nkernel);
  loom_reduce(g, LOOM_REDUCE_SUM, t, 0, NULL, 0, &u); /* the reduced node itself: its value, rounded */
  two[1] = u;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 1 && r.nside0 == 1, "f16(a), sum(f16(a)): %d kernels %d side", r.nkernel, r.nside0);
  /* a reduction of another shape (the map broadcast): not the map's domain, two kernels */
  loom_unary(g, LOOM_OP_EXP, vec, &t);
  loom_binary(g, LOOM_OP_MUL, a, t, &u);
  loom_reduce(g, LOOM_REDUCE_SUM, u, 0, NULL, 0, &v);
  two[0] = t;
  two[1] = v;
  r = schedule_of(g, 2, two);
  CHECK(r.nkernel == 2, "exp(v), sum(a * exp(v)): %d kernels", r.nkernel);

  loom_graph_destroy(g);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
