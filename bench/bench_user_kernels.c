/* bench_user_kernels.c: user kernels vs the equivalent built-in loom code on the host CPU.
 *
 * Approach: ElementwiseKernel "z = (x - y) * (x - y)" vs the fused graph expression (x - y) * (x - y),
 * and ReductionKernel "x * x", "a + b", "y = sqrt(a)" vs sqrt(sum(x * x)) (row, column and full
 * reductions), float32, on arrays larger than the last-level cache. Each case: warm-up (compiles),
 * then the median of REPS timed runs. Prints a table and writes JSON to the path in argv[1] (if any).
 * Build: gcc -O2 -Iinclude bench/bench_user_kernels.c -Lbuild -lloom -lm (not in bench/CMakeLists.txt yet).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"

#define REPS 15

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static LoomArray arr(void *p, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) a.shape[i] = shape[i], a.strides[i] = s, s *= shape[i];
  return a;
}

typedef struct Case { const char *name; double user_ms, builtin_ms; } Case;

int main(int argc, char **argv) {
  LoomContext *ctx;
  if (loom_context_create(&ctx)) return 1;
  int64_t n = 1 << 24, rows = 4096, cols = 4096;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *z = malloc(sizeof(float) * n);
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 1000) * 1e-3f, y[i] = (float)(i % 7);
  Case cases[4];
  int nc = 0;
  double t[REPS];
  /* elementwise */
  LoomUserKernel *ek;
  if (loom_elementwise_kernel_create(ctx, "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqdiff", NULL, 1, &ek)) {
    fprintf(stderr, "%s\n", loom_last_error(ctx));
    return 1;
  }
  LoomArray in[2] = {arr(x, 1, &n), arr(y, 1, &n)}, out[1] = {arr(z, 1, &n)};
  for (int r = -2; r < REPS; r++) {
    double t0 = now();
    loom_elementwise_kernel_call(ek, 2, in, 1, out, -1);
    if (r >= 0) t[r] = now() - t0;
  }
  qsort(t, REPS, sizeof *t, cmp);
  cases[nc].name = "elementwise sqdiff 16M f32";
  cases[nc].user_ms = t[REPS / 2];
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode a, b, dnode, e;
  loom_input(g, &in[0], &a);
  loom_input(g, &in[1], &b);
  loom_binary(g, LOOM_OP_SUB, a, b, &dnode);
  loom_binary(g, LOOM_OP_MUL, dnode, dnode, &e);
  for (int r = -2; r < REPS; r++) {
    double t0 = now();
    loom_eval(g, 1, &e, out);
    if (r >= 0) t[r] = now() - t0;
  }
  qsort(t, REPS, sizeof *t, cmp);
  cases[nc++].builtin_ms = t[REPS / 2];
  loom_graph_destroy(g);
  loom_user_kernel_destroy(ek);
  /* reductions */
  LoomUserKernel *rk;
  if (loom_reduction_kernel_create(ctx, "float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2", NULL, NULL, 1, &rk)) {
    fprintf(stderr, "%s\n", loom_last_error(ctx));
    return 1;
  }
  int64_t shape2[2] = {rows, cols};
  LoomArray x2 = arr(x, 2, shape2);
  const char *names[3] = {"reduce l2 rows 4096x4096 f32 axis=1", "reduce l2 cols 4096x4096 f32 axis=0",
                          "reduce l2 full 16M f32"};
  int32_t axes[3] = {1, 0, -1};
  for (int c = 0; c < 3; c++) {
    int64_t on = c == 2 ? 1 : 4096;
    LoomArray o = arr(z, c == 2 ? 0 : 1, &on);
    for (int r = -2; r < REPS; r++) {
      double t0 = now();
      loom_reduction_kernel_call(rk, 1, &x2, 1, &o, c == 2 ? 0 : 1, c == 2 ? NULL : &axes[c], 0);
      if (r >= 0) t[r] = now() - t0;
    }
    qsort(t, REPS, sizeof *t, cmp);
    cases[nc].name = names[c];
    cases[nc].user_ms = t[REPS / 2];
    loom_graph_create(ctx, &g);
    LoomNode xi, sq, s, rt;
    loom_input(g, &x2, &xi);
    loom_binary(g, LOOM_OP_MUL, xi, xi, &sq);
    loom_reduce(g, LOOM_REDUCE_SUM, sq, c == 2 ? 0 : 1, c == 2 ? NULL : &axes[c], 0, &s);
    loom_unary(g, LOOM_OP_SQRT, s, &rt);
    for (int r = -2; r < REPS; r++) {
      double t0 = now();
      loom_eval(g, 1, &rt, &o);
      if (r >= 0) t[r] = now() - t0;
    }
    qsort(t, REPS, sizeof *t, cmp);
    cases[nc++].builtin_ms = t[REPS / 2];
    loom_graph_destroy(g);
  }
  loom_user_kernel_destroy(rk);
  FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL;
  if (f) fprintf(f, "{\n  \"bench\": \"user-kernels-host\",\n  \"reps\": %d,\n  \"cases\": [\n", REPS);
  printf("%-40s %10s %10s %8s\n", "case", "user ms", "builtin ms", "ratio");
  for (int c = 0; c < nc; c++) {
    printf("%-40s %10.3f %10.3f %8.3f\n", cases[c].name, cases[c].user_ms, cases[c].builtin_ms,
           cases[c].user_ms / cases[c].builtin_ms);
    if (f)
      fprintf(f, "    {\"name\": \"%s\", \"user_ms\": %.4f, \"builtin_ms\": %.4f, \"ratio\": %.4f}%s\n", cases[c].name,
              cases[c].user_ms, cases[c].builtin_ms, cases[c].user_ms / cases[c].builtin_ms, c + 1 < nc ? "," : "");
  }
  if (f) fprintf(f, "  ]\n}\n"), fclose(f);
  free(x), free(y), free(z);
  loom_context_destroy(ctx);
  return 0;
}
