/* SPDX-License-Identifier: Apache-2.0 */
/* demo.c: Loom's fusion demo through the public API only.
 *
 * Builds out = exp(a + b) * c - sqrt(abs(d)) over 10^7 float64 elements and the row means of a
 * 1000 x 1000 matrix (the first 10^6 elements of a seen as a matrix), evaluates both in one
 * loom_eval, checks them against plain C loops (max relative error), and prints the kernel count,
 * the compile time and the run time against the C loops. Exits nonzero on a wrong result or error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int fail(LoomContext *ctx, const char *what, LoomStatus st) {
  fprintf(stderr, "demo: %s failed: %s: %s\n", what, loom_status_name(st), ctx ? loom_last_error(ctx) : "");
  return 1;
}

static LoomArray vec(double *data, int64_t n) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = LOOM_FLOAT64;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 1;
  return a;
}

int main(void) {
  const int64_t n = 10000000, rows = 1000, cols = 1000;
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *c = malloc(sizeof(double) * n),
         *d = malloc(sizeof(double) * n), *out = malloc(sizeof(double) * n),
         *ref = malloc(sizeof(double) * n), *means = malloc(sizeof(double) * rows),
         *ref_means = malloc(sizeof(double) * rows);
  int rc = 1;
  LoomContext *ctx = NULL;
  LoomGraph *g = NULL;
  if (!a || !b || !c || !d || !out || !ref || !means || !ref_means) {
    fprintf(stderr, "demo: out of memory\n");
    goto done;
  }
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = (double)(s >> 11) * 0x1.0p-53;
    a[i] = u - 0.5;
    b[i] = 0.25 * u;
    c[i] = 2.0 - u;
    d[i] = 3.0 * u - 1.5;
  }

  LoomStatus st;
  if ((st = loom_context_create(&ctx))) { rc = fail(ctx, "loom_context_create", st); goto done; }
  if ((st = loom_graph_create(ctx, &g))) { rc = fail(ctx, "loom_graph_create", st); goto done; }
  LoomArray aa = vec(a, n), ba = vec(b, n), ca = vec(c, n), da = vec(d, n);
  LoomArray ma = vec(a, rows * cols);
  ma.ndim = 2;
  ma.shape[0] = rows;
  ma.shape[1] = cols;
  ma.strides[0] = cols;
  ma.strides[1] = 1;
  LoomNode an, bn, cn, dn, mn, sum, e, prod, ab, sq, res, mean;
  int32_t axis = 1;
  if ((st = loom_input(g, &aa, &an)) || (st = loom_input(g, &ba, &bn)) || (st = loom_input(g, &ca, &cn)) ||
      (st = loom_input(g, &da, &dn)) || (st = loom_input(g, &ma, &mn)) ||
      (st = loom_binary(g, LOOM_OP_ADD, an, bn, &sum)) || (st = loom_unary(g, LOOM_OP_EXP, sum, &e)) ||
      (st = loom_binary(g, LOOM_OP_MUL, e, cn, &prod)) || (st = loom_unary(g, LOOM_OP_ABS, dn, &ab)) ||
      (st = loom_unary(g, LOOM_OP_SQRT, ab, &sq)) || (st = loom_binary(g, LOOM_OP_SUB, prod, sq, &res)) ||
      (st = loom_reduce(g, LOOM_REDUCE_MEAN, mn, 1, &axis, 0, &mean))) {
    rc = fail(ctx, "building the graph", st);
    goto done;
  }
  LoomNode nodes[2] = {res, mean};
  LoomArray outs[2] = {vec(out, n), vec(means, rows)};

  double t0 = now_ms();
  if ((st = loom_eval(g, 2, nodes, outs))) { rc = fail(ctx, "loom_eval", st); goto done; }
  double first_ms = now_ms() - t0;
  LoomStats stats;
  loom_get_stats(ctx, &stats);
  double warm_ms = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    t0 = now_ms();
    if ((st = loom_eval(g, 2, nodes, outs))) { rc = fail(ctx, "loom_eval (warm)", st); goto done; }
    double t = now_ms() - t0;
    warm_ms = t < warm_ms ? t : warm_ms;
  }

  double c_ms = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    t0 = now_ms();
    for (int64_t i = 0; i < n; i++) ref[i] = exp(a[i] + b[i]) * c[i] - sqrt(fabs(d[i]));
    for (int64_t r = 0; r < rows; r++) {
      double acc = 0;
      for (int64_t k = 0; k < cols; k++) acc += a[r * cols + k];
      ref_means[r] = acc / (double)cols;
    }
    double t = now_ms() - t0;
    c_ms = t < c_ms ? t : c_ms;
  }

  double max_rel = 0, max_rel_mean = 0;
  for (int64_t i = 0; i < n; i++) {
    double err = fabs(out[i] - ref[i]) / fmax(fabs(ref[i]), 1.0); /* relative, absolute near 0 */
    if (!(err <= max_rel)) max_rel = isnan(err) ? INFINITY : err;
  }
  for (int64_t r = 0; r < rows; r++) {
    double err = fabs(means[r] - ref_means[r]) / fmax(fabs(ref_means[r]), 1e-12);
    if (!(err <= max_rel_mean)) max_rel_mean = isnan(err) ? INFINITY : err;
  }

  printf("Loom %s fusion demo\n", LOOM_VERSION_STRING);
  printf("  out = exp(a + b) * c - sqrt(abs(d))   over %lld float64\n", (long long)n);
  printf("  means = mean(A, axis=1)               A: %lld x %lld float64\n", (long long)rows, (long long)cols);
  printf("  kernels launched by one loom_eval: %llu\n", (unsigned long long)stats.last_eval_kernels);
  printf("  compile time:                      %.1f ms (%llu kernel(s) compiled)\n", stats.compile_ms,
         (unsigned long long)stats.kernels_compiled);
  printf("  first loom_eval (compile + run):   %.1f ms\n", first_ms);
  printf("  warm loom_eval (best of 5):        %.1f ms\n", warm_ms);
  printf("  plain C loops (best of 3):         %.1f ms  -> Loom is %.2fx\n", c_ms, c_ms / warm_ms);
  printf("  max relative error: out %.3g, means %.3g\n", max_rel, max_rel_mean);
  if (max_rel > 1e-13 || max_rel_mean > 1e-12) {
    fprintf(stderr, "demo: WRONG RESULT (tolerance 1e-13 / 1e-12)\n");
    rc = 1;
  } else {
    printf("  result: OK\n");
    rc = 0;
  }
done:
  if (g) loom_graph_destroy(g);
  if (ctx) loom_context_destroy(ctx);
  free(a);
  free(b);
  free(c);
  free(d);
  free(out);
  free(ref);
  free(means);
  free(ref_means);
  return rc;
}
