/* SPDX-License-Identifier: Apache-2.0 */
/* bench_user_kernels.c: user kernels vs the equivalent built-in loom code, on the host CPU or on CUDA.
 *
 * Approach: ElementwiseKernel "z = (x - y) * (x - y)" vs the fused graph expression (x - y) * (x - y)
 * (what @loom.fuse traces to), and ReductionKernel "x * x", "a + b", "y = sqrt(a)" vs
 * sqrt(sum(x * x)) (row, column and full reductions), float32. Each case: warm-up (compiles), then the
 * median of the timed runs. Host: wall clock around each call, 2^24 points and 4096x4096. CUDA
 * (--gpu): CUDA events around each call on loom's stream (loom_event_*), 2^26 points and 8192x8192,
 * median of 25 after 3 warm-ups; each user result is also checked against the built-in one.
 * Prints a table; writes JSON to the path in the first free argument and a markdown table to the
 * second (if given). Exit 0 also when --gpu finds no CUDA device (it prints "skipped").
 * --overhead (host only): the host cost per call instead, on 1000 float32 points (sqdiff and the full
 * L2 reduction vs their built-in equivalents), mean of 20000 calls after 100 warm-ups.
 *   bench_user_kernels [--gpu | --overhead] [out.json] [out.md]
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"

#define MAX_REPS 25

typedef struct Bench {
  LoomContext *ctx;
  LoomDeviceKind dev;
  int reps, warm;
  LoomEvent *e0, *e1;
} Bench;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static LoomArray desc(void *p, int ndim, const int64_t *shape, LoomDeviceKind dev) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = p;
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  a.device = dev;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) a.shape[i] = shape[i], a.strides[i] = s, s *= shape[i];
  return a;
}

/* What one timed call runs. */
typedef struct Call {
  int kind; /* 0: elementwise kernel, 1: reduction kernel, 2: loom_eval */
  LoomUserKernel *k;
  LoomGraph *g;
  LoomNode node;
  const LoomArray *in;
  int32_t nin;
  LoomArray *out;
  int32_t naxes;
  const int32_t *axes;
} Call;

static LoomStatus call_once(const Call *c) {
  if (c->kind == 0) return loom_elementwise_kernel_call(c->k, c->nin, c->in, 1, c->out, -1);
  if (c->kind == 1) return loom_reduction_kernel_call(c->k, c->nin, c->in, 1, c->out, c->naxes, c->axes, 0);
  return loom_eval(c->g, 1, &c->node, c->out);
}

/* Median milliseconds of b->reps calls after b->warm warm-ups; -1 on an error (printed). CUDA also:
 * *pipe_ms, the GPU time per call of b->reps calls enqueued back to back (events around all of them:
 * host work overlaps the GPU), and *host_us, the host's wall time per enqueued call. */
static double time_call(Bench *b, const Call *c, double *pipe_ms, double *host_us) {
  *pipe_ms = *host_us = 0;
  double t[MAX_REPS];
  /* on the GPU, 100 ms of calls first: a new kernel's tier-up (its final JIT) finishes in the background */
  for (double w0 = now(); b->dev == LOOM_DEVICE_CUDA && now() - w0 < 100;)
    if (call_once(c) || loom_event_record(b->ctx, b->e1, NULL) || loom_event_synchronize(b->ctx, b->e1)) break;
  for (int r = -b->warm; r < b->reps; r++) {
    double t0 = now();
    LoomStatus st = b->dev == LOOM_DEVICE_CUDA ? loom_event_record(b->ctx, b->e0, NULL) : LOOM_OK;
    if (!st) st = call_once(c);
    if (!st && b->dev == LOOM_DEVICE_CUDA) {
      st = loom_event_record(b->ctx, b->e1, NULL);
      if (!st) st = loom_event_synchronize(b->ctx, b->e1);
      float ms = 0;
      if (!st) st = loom_event_elapsed_ms(b->ctx, b->e0, b->e1, &ms);
      if (r >= 0) t[r] = ms;
    } else if (r >= 0) {
      t[r] = now() - t0;
    }
    if (st) {
      fprintf(stderr, "error: %s\n", loom_last_error(b->ctx));
      return -1;
    }
  }
  qsort(t, (size_t)b->reps, sizeof *t, cmp);
  if (b->dev == LOOM_DEVICE_CUDA) {
    float ms = 0;
    double t0 = now();
    LoomStatus st = loom_event_record(b->ctx, b->e0, NULL);
    for (int r = 0; r < b->reps && !st; r++) st = call_once(c);
    double t1 = now();
    if (!st) st = loom_event_record(b->ctx, b->e1, NULL);
    if (!st) st = loom_event_synchronize(b->ctx, b->e1);
    if (!st) st = loom_event_elapsed_ms(b->ctx, b->e0, b->e1, &ms);
    if (st) {
      fprintf(stderr, "error: %s\n", loom_last_error(b->ctx));
      return -1;
    }
    *pipe_ms = ms / b->reps;
    *host_us = (t1 - t0) * 1e3 / b->reps;
  }
  return t[b->reps / 2];
}

/* Largest relative difference between two float32 arrays of n points (copied to the host). */
static double max_rel_diff(Bench *b, const LoomArray *u, const LoomArray *v, int64_t n) {
  float *hu = malloc(sizeof(float) * (size_t)n), *hv = malloc(sizeof(float) * (size_t)n);
  double worst = -1;
  if (hu && hv) {
    LoomArray du = desc(hu, u->ndim, u->shape, LOOM_DEVICE_HOST), dv = desc(hv, v->ndim, v->shape, LOOM_DEVICE_HOST);
    if (!loom_array_copy(b->ctx, &du, u) && !loom_array_copy(b->ctx, &dv, v)) {
      worst = 0;
      for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)hu[i] - hv[i]) / (1e-30 + fabs((double)hv[i]));
        if (d > worst || d != d) worst = d;
      }
    }
  }
  free(hu), free(hv);
  return worst;
}

/* Mean microseconds per call of `calls` calls after 100 warm-ups; -1 on an error (printed). */
static double mean_us(Bench *b, const Call *c, int calls) {
  for (int r = 0; r < 100; r++)
    if (call_once(c)) {
      fprintf(stderr, "error: %s\n", loom_last_error(b->ctx));
      return -1;
    }
  double t0 = now();
  for (int r = 0; r < calls; r++)
    if (call_once(c)) {
      fprintf(stderr, "error: %s\n", loom_last_error(b->ctx));
      return -1;
    }
  return (now() - t0) * 1e3 / calls;
}

/* --overhead: host cost per call of small user kernels vs built-in loom code (1000 float32 points). */
static int overhead(Bench *b) {
  enum { N = 1000, CALLS = 20000 };
  static float hx[N], hy[N], hz[N], hz2[N], hr, hr2;
  for (int i = 0; i < N; i++) hx[i] = (float)(i % 100) * 1e-2f, hy[i] = (float)(i % 7);
  int64_t n = N;
  LoomArray in[2] = {desc(hx, 1, &n, LOOM_DEVICE_HOST), desc(hy, 1, &n, LOOM_DEVICE_HOST)};
  LoomArray z = desc(hz, 1, &n, LOOM_DEVICE_HOST), z2 = desc(hz2, 1, &n, LOOM_DEVICE_HOST);
  LoomArray r = desc(&hr, 0, NULL, LOOM_DEVICE_HOST), r2 = desc(&hr2, 0, NULL, LOOM_DEVICE_HOST);
  LoomUserKernel *ek = NULL, *rk = NULL;
  LoomGraph *ge = NULL, *gr = NULL;
  LoomNode a, bb, dn, sq, s;
  Call ce = {.kind = 0, .in = in, .nin = 2, .out = &z}, cr = {.kind = 1, .in = in, .nin = 1, .out = &r};
  Call be = {.kind = 2, .out = &z2}, br = {.kind = 2, .out = &r2};
  if (loom_elementwise_kernel_create(b->ctx, "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqdiff",
                                     NULL, 1, &ek) ||
      loom_reduction_kernel_create(b->ctx, "float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2",
                                   NULL, NULL, 1, &rk) ||
      loom_graph_create(b->ctx, &ge) || loom_graph_create(b->ctx, &gr) || loom_input(ge, &in[0], &a) ||
      loom_input(ge, &in[1], &bb) || loom_binary(ge, LOOM_OP_SUB, a, bb, &dn) ||
      loom_binary(ge, LOOM_OP_MUL, dn, dn, &be.node) || loom_input(gr, &in[0], &a) ||
      loom_binary(gr, LOOM_OP_MUL, a, a, &sq) || loom_reduce(gr, LOOM_REDUCE_SUM, sq, 0, NULL, 0, &s) ||
      loom_unary(gr, LOOM_OP_SQRT, s, &br.node)) {
    fprintf(stderr, "%s\n", loom_last_error(b->ctx));
    return 1;
  }
  ce.k = ek, cr.k = rk, be.g = ge, br.g = gr;
  double us[4] = {mean_us(b, &ce, CALLS), mean_us(b, &be, CALLS), mean_us(b, &cr, CALLS), mean_us(b, &br, CALLS)};
  LoomStats st;
  loom_get_stats(b->ctx, &st);
  printf("host overhead, %d float32 points, mean of %d calls\n", N, CALLS);
  printf("%-28s %10s %12s %8s\n", "case", "user us", "built-in us", "ratio");
  printf("%-28s %10.2f %12.2f %8.3f\n", "elementwise sqdiff", us[0], us[1], us[0] / us[1]);
  printf("%-28s %10.2f %12.2f %8.3f\n", "reduce l2 full", us[2], us[3], us[2] / us[3]);
  printf("kernels compiled %llu, cache hits %llu\n", (unsigned long long)st.kernels_compiled,
         (unsigned long long)st.cache_hits);
  int rc = us[0] < 0 || us[1] < 0 || us[2] < 0 || us[3] < 0;
  for (int i = 0; i < N; i++)
    if (fabsf(hz[i] - hz2[i]) > 1e-6f * fabsf(hz2[i])) rc = 1;
  if (fabsf(hr - hr2) > 1e-4f * fabsf(hr2)) rc = 1;
  loom_graph_destroy(ge), loom_graph_destroy(gr);
  loom_user_kernel_destroy(ek), loom_user_kernel_destroy(rk);
  return rc;
}

typedef struct Case {
  char name[96];
  double user_ms, builtin_ms, gbytes, rel;
  double user_pipe_ms, builtin_pipe_ms, user_host_us, builtin_host_us; /* CUDA only */
} Case;

int main(int argc, char **argv) {
  Bench b = {0};
  b.dev = LOOM_DEVICE_HOST;
  const char *paths[2] = {NULL, NULL};
  int np = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--gpu")) b.dev = LOOM_DEVICE_CUDA;
    else if (!strcmp(argv[i], "--overhead")) b.reps = -1;
    else if (np < 2) paths[np++] = argv[i];
  }
  bool gpu = b.dev == LOOM_DEVICE_CUDA;
  if (loom_context_create(&b.ctx)) return 1;
  if (b.reps < 0 && !gpu) {
    int orc = overhead(&b);
    loom_context_destroy(b.ctx);
    return orc;
  }
  int32_t ndev = 0;
  if (gpu && (loom_device_count(b.ctx, LOOM_DEVICE_CUDA, &ndev) || ndev < 1)) {
    printf("skipped: no CUDA device\n");
    loom_context_destroy(b.ctx);
    return 0;
  }
  if (gpu && (loom_event_create(b.ctx, b.dev, 0, &b.e0) || loom_event_create(b.ctx, b.dev, 0, &b.e1))) {
    fprintf(stderr, "events: %s\n", loom_last_error(b.ctx));
    return 1;
  }
  b.reps = gpu ? 25 : 15;
  b.warm = gpu ? 3 : 2;
  int64_t n = gpu ? (int64_t)1 << 26 : (int64_t)1 << 24, rows = gpu ? 8192 : 4096, cols = rows;
  int rc = 0;
  /* inputs: filled on the host, copied to the device */
  float *hx = malloc(sizeof(float) * (size_t)n), *hy = malloc(sizeof(float) * (size_t)n);
  if (!hx || !hy) return 1;
  for (int64_t i = 0; i < n; i++) hx[i] = (float)(i % 1000) * 1e-3f, hy[i] = (float)(i % 7);
  LoomArray x = desc(NULL, 1, &n, b.dev), y = desc(NULL, 1, &n, b.dev), z = desc(NULL, 1, &n, b.dev),
            z2 = desc(NULL, 1, &n, b.dev);
  LoomArray hxd = desc(hx, 1, &n, LOOM_DEVICE_HOST), hyd = desc(hy, 1, &n, LOOM_DEVICE_HOST);
  if (loom_array_alloc(b.ctx, &x) || loom_array_alloc(b.ctx, &y) || loom_array_alloc(b.ctx, &z) ||
      loom_array_alloc(b.ctx, &z2) || loom_array_copy(b.ctx, &x, &hxd) || loom_array_copy(b.ctx, &y, &hyd)) {
    fprintf(stderr, "arrays: %s\n", loom_last_error(b.ctx));
    return 1;
  }
  Case cases[4];
  memset(cases, 0, sizeof cases);
  int nc = 0;
  /* elementwise */
  LoomUserKernel *ek;
  if (loom_elementwise_kernel_create(b.ctx, "float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "sqdiff",
                                     NULL, 1, &ek)) {
    fprintf(stderr, "%s\n", loom_last_error(b.ctx));
    return 1;
  }
  LoomArray in[2] = {x, y};
  Call cu = {.kind = 0, .k = ek, .in = in, .nin = 2, .out = &z};
  snprintf(cases[nc].name, sizeof cases[nc].name, "elementwise sqdiff %lldM f32", (long long)(n >> 20));
  cases[nc].gbytes = 3.0 * 4 * (double)n / 1e9;
  cases[nc].user_ms = time_call(&b, &cu, &cases[nc].user_pipe_ms, &cases[nc].user_host_us);
  LoomGraph *g;
  loom_graph_create(b.ctx, &g);
  LoomNode a, bb, dnode;
  Call cb = {.kind = 2, .g = g, .out = &z2};
  loom_input(g, &in[0], &a);
  loom_input(g, &in[1], &bb);
  loom_binary(g, LOOM_OP_SUB, a, bb, &dnode);
  loom_binary(g, LOOM_OP_MUL, dnode, dnode, &cb.node);
  cases[nc].builtin_ms = time_call(&b, &cb, &cases[nc].builtin_pipe_ms, &cases[nc].builtin_host_us);
  cases[nc].rel = max_rel_diff(&b, &z, &z2, n);
  nc++;
  loom_graph_destroy(g);
  loom_user_kernel_destroy(ek);
  /* reductions */
  LoomUserKernel *rk;
  if (loom_reduction_kernel_create(b.ctx, "float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2", NULL,
                                   NULL, 1, &rk)) {
    fprintf(stderr, "%s\n", loom_last_error(b.ctx));
    return 1;
  }
  int64_t shape2[2] = {rows, cols};
  LoomArray x2 = desc(x.data, 2, shape2, b.dev);
  const char *what[3] = {"rows axis=1", "cols axis=0", "full"};
  int32_t axes[3] = {1, 0, -1};
  for (int c = 0; c < 3; c++) {
    int64_t on = c == 2 ? 1 : (c == 0 ? rows : cols);
    LoomArray o = desc(z.data, c == 2 ? 0 : 1, &on, b.dev), o2 = desc(z2.data, c == 2 ? 0 : 1, &on, b.dev);
    Call ru = {.kind = 1, .k = rk, .in = &x2, .nin = 1, .out = &o, .naxes = c == 2 ? 0 : 1,
               .axes = c == 2 ? NULL : &axes[c]};
    snprintf(cases[nc].name, sizeof cases[nc].name, "reduce l2 %s %lldx%lld f32", what[c], (long long)rows,
             (long long)cols);
    cases[nc].gbytes = 4.0 * (double)(rows * cols) / 1e9;
    cases[nc].user_ms = time_call(&b, &ru, &cases[nc].user_pipe_ms, &cases[nc].user_host_us);
    loom_graph_create(b.ctx, &g);
    LoomNode xi, sq, s;
    Call rb = {.kind = 2, .g = g, .out = &o2};
    loom_input(g, &x2, &xi);
    loom_binary(g, LOOM_OP_MUL, xi, xi, &sq);
    loom_reduce(g, LOOM_REDUCE_SUM, sq, c == 2 ? 0 : 1, c == 2 ? NULL : &axes[c], 0, &s);
    loom_unary(g, LOOM_OP_SQRT, s, &rb.node);
    cases[nc].builtin_ms = time_call(&b, &rb, &cases[nc].builtin_pipe_ms, &cases[nc].builtin_host_us);
    cases[nc].rel = max_rel_diff(&b, &o, &o2, on);
    nc++;
    loom_graph_destroy(g);
  }
  loom_user_kernel_destroy(rk);
  const char *label = gpu ? "user-kernels-h200" : "user-kernels-host";
  FILE *f = paths[0] ? fopen(paths[0], "w") : NULL, *md = paths[1] ? fopen(paths[1], "w") : NULL;
  if (f)
    fprintf(f, "{\n  \"bench\": \"%s\",\n  \"timing\": \"median of %d after %d warm-ups (%s)\",\n  \"cases\": [\n",
            label, b.reps, b.warm, gpu ? "CUDA events" : "wall clock");
  if (md)
    fprintf(md, "# %s: user kernels vs built-in loom (median of %d, %s)\n\n"
                "| case | user ms | built-in ms | user / built-in | user GB/s | max rel diff |\n"
                "| --- | --- | --- | --- | --- | --- |\n",
            label, b.reps, gpu ? "CUDA events" : "wall clock");
  printf("%-40s %10s %10s %8s %9s %10s\n", "case", "user ms", "builtin ms", "ratio", "user GB/s", "rel diff");
  if (gpu)
    for (int c = 0; c < nc; c++)
      printf("pipelined %-30s user %.4f ms builtin %.4f ms ratio %.3f | host us/call user %.1f builtin %.1f\n",
             cases[c].name, cases[c].user_pipe_ms, cases[c].builtin_pipe_ms,
             cases[c].user_pipe_ms / cases[c].builtin_pipe_ms, cases[c].user_host_us, cases[c].builtin_host_us);
  for (int c = 0; c < nc; c++) {
    Case *k = &cases[c];
    double ratio = k->user_ms / k->builtin_ms, gbs = k->gbytes / (k->user_ms * 1e-3);
    if (k->user_ms < 0 || k->builtin_ms < 0 || k->rel < 0 || k->rel > 1e-3) rc = 1;
    printf("%-40s %10.4f %10.4f %8.3f %9.1f %10.2e\n", k->name, k->user_ms, k->builtin_ms, ratio, gbs, k->rel);
    if (f)
      fprintf(f,
              "    {\"name\": \"%s\", \"user_ms\": %.5f, \"builtin_ms\": %.5f, \"ratio\": %.4f, \"user_GBps\": %.1f, "
              "\"max_rel_diff\": %.3g, \"user_pipelined_ms\": %.5f, \"builtin_pipelined_ms\": %.5f, "
              "\"user_host_us_per_call\": %.2f, \"builtin_host_us_per_call\": %.2f}%s\n",
              k->name, k->user_ms, k->builtin_ms, ratio, gbs, k->rel, k->user_pipe_ms, k->builtin_pipe_ms,
              k->user_host_us, k->builtin_host_us, c + 1 < nc ? "," : "");
    if (md)
      fprintf(md, "| %s | %.4f | %.4f | %.3f | %.1f | %.2g |\n", k->name, k->user_ms, k->builtin_ms, ratio, gbs, k->rel);
  if (md && gpu) {
    fprintf(md, "\nBack to back (%d calls enqueued, events around all; host work overlaps the GPU):\n\n"
                "| case | user ms/call | built-in ms/call | ratio | host us/call user | host us/call built-in |\n"
                "| --- | --- | --- | --- | --- | --- |\n", b.reps);
    for (int c = 0; c < nc; c++)
      fprintf(md, "| %s | %.4f | %.4f | %.3f | %.1f | %.1f |\n", cases[c].name, cases[c].user_pipe_ms,
              cases[c].builtin_pipe_ms, cases[c].user_pipe_ms / cases[c].builtin_pipe_ms, cases[c].user_host_us,
              cases[c].builtin_host_us);
  }
  }
  if (f) fprintf(f, "  ]\n}\n"), fclose(f);
  if (md) fclose(md);
  loom_array_free(b.ctx, &x), loom_array_free(b.ctx, &y), loom_array_free(b.ctx, &z), loom_array_free(b.ctx, &z2);
  free(hx), free(hy);
  if (b.e0) loom_event_destroy(b.ctx, b.e0);
  if (b.e1) loom_event_destroy(b.ctx, b.e1);
  loom_context_destroy(b.ctx);
  return rc;
}
