/* SPDX-License-Identifier: Apache-2.0 */
/* bench_gpu.c: Loom on one CUDA GPU: bandwidth of the cases, cold compile, disk-cache hit,
 * per-call host overhead vs a bare cuLaunchKernel. Prints "key value" lines that gpu_bench.sh merges
 * into bench/results/<date>-h200.json.
 *
 * Timing: each case runs 3 warm-up calls, then 20 timed calls, each between two CUDA events
 * (loom_event_record on the current stream); the median is reported. Cold compile: the first
 * loom_eval (graph to result) of 12 distinct new kernels, median. Host overhead: 20000 cached calls
 * on 1000 elements then one synchronize, per call; the bare launch (a hand-written PTX kernel of the
 * same work and parameter block through cuLaunchKernel) is timed the same way. Without a CUDA device
 * it prints "skipped: no CUDA device". Built against the static library (driver layer for the bare
 * launch; ir_input as a fallback for device inputs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "loom/loom.h"
#include "runtime/cuda/cuda.h"
#include "runtime/runtime.h"

static LoomContext *ctx;
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static LoomNode input(LoomGraph *g, const LoomArray *a) {
  LoomNode n = -1;
  if (loom_input(g, a, &n) == LOOM_OK) return n;
  Diag d = {.status = LOOM_OK};
  ir_input(&g->ir, a, &n, &d);
  return n;
}
static LoomArray dev_array_of(LoomDType dtype, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = dtype;
  a.ndim = ndim;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i];
  a.device = LOOM_DEVICE_CUDA;
  if (loom_array_alloc(ctx, &a) != LOOM_OK) {
    fprintf(stderr, "alloc: %s\n", loom_last_error(ctx));
    exit(1);
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  void *h = malloc((size_t)n * loom_dtype_size(dtype));
  for (int64_t i = 0; i < n; i++) {
    double v = (double)((i * 2654435761u) % 1000) * 1e-3 - 0.5;
    if (dtype == LOOM_FLOAT64) ((double *)h)[i] = v;
    else ((float *)h)[i] = (float)v;
  }
  LoomArray ha = a;
  ha.device = LOOM_DEVICE_HOST;
  ha.data = h;
  loom_array_copy(ctx, &a, &ha);
  free(h);
  return a;
}
static LoomArray dev_array(int ndim, const int64_t *shape) { return dev_array_of(LOOM_FLOAT32, ndim, shape); }
/* median ms of loom_eval of node into a preallocated output */
static double time_eval(LoomGraph *g, LoomNode n, LoomArray *out) {
  double t[20];
  LoomEvent *e0 = NULL, *e1 = NULL;
  if (loom_event_create(ctx, LOOM_DEVICE_CUDA, 0, &e0) != LOOM_OK || loom_event_create(ctx, LOOM_DEVICE_CUDA, 0, &e1) != LOOM_OK) {
    fprintf(stderr, "event: %s\n", loom_last_error(ctx));
    exit(1);
  }
  /* warm-up: 3 evaluations and at least 100 ms, so that a new kernel's tier-up (its final JIT, in the
   * background) is in place before the timed runs */
  double w0 = now_ms();
  for (int i = 0; i < 3 || now_ms() - w0 < 100; i++) {
    if (loom_eval(g, 1, &n, out) != LOOM_OK) {
      fprintf(stderr, "eval: %s\n", loom_last_error(ctx));
      exit(1);
    }
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
  }
  for (int i = 0; i < 23; i++) {
    loom_event_record(ctx, e0, NULL);
    if (loom_eval(g, 1, &n, out) != LOOM_OK) {
      fprintf(stderr, "eval: %s\n", loom_last_error(ctx));
      exit(1);
    }
    loom_event_record(ctx, e1, NULL);
    loom_event_synchronize(ctx, e1);
    float ms = 0;
    loom_event_elapsed_ms(ctx, e0, e1, &ms);
    if (i >= 3) t[i - 3] = ms;
  }
  loom_event_destroy(ctx, e0);
  loom_event_destroy(ctx, e1);
  qsort(t, 20, sizeof t[0], cmpd);
  return (t[9] + t[10]) / 2;
}
static LoomStatus expr_k(LoomGraph *g, LoomNode x, LoomNode y, int k, LoomNode *out) {
  /* distinct kernels: k % 6 selects the function, k / 6 one of four structures */
  LoomOp ops[6] = {LOOM_OP_EXP, LOOM_OP_SIN, LOOM_OP_LOG1P, LOOM_OP_TANH, LOOM_OP_COS, LOOM_OP_SQRT};
  LoomNode c, e, a, b;
  loom_weak_float(g, 2.0 + k, &c);
  switch (k / 6) {
  case 0: /* c * x + f(y) */
    loom_binary(g, LOOM_OP_MUL, c, x, &a);
    loom_unary(g, ops[k % 6], y, &e);
    return loom_binary(g, LOOM_OP_ADD, a, e, out);
  case 1: /* f(y) + c * x * x */
    loom_unary(g, ops[k % 6], y, &e);
    loom_binary(g, LOOM_OP_MUL, x, x, &a);
    loom_binary(g, LOOM_OP_MUL, c, a, &b);
    return loom_binary(g, LOOM_OP_ADD, e, b, out);
  case 2: /* (f(y) - x) / (c + x * x) */
    loom_unary(g, ops[k % 6], y, &e);
    loom_binary(g, LOOM_OP_SUB, e, x, &a);
    loom_binary(g, LOOM_OP_MUL, x, x, &b);
    loom_binary(g, LOOM_OP_ADD, c, b, &b);
    return loom_binary(g, LOOM_OP_TRUEDIV, a, b, out);
  default: /* f(x * y + c) * y - x */
    loom_binary(g, LOOM_OP_MUL, x, y, &a);
    loom_binary(g, LOOM_OP_ADD, a, c, &a);
    loom_unary(g, ops[k % 6], a, &e);
    loom_binary(g, LOOM_OP_MUL, e, y, &b);
    return loom_binary(g, LOOM_OP_SUB, b, x, out);
  }
}
/* median ms of the first eval of NCOLD distinct new kernels (small arrays), each graph to result */
enum { NCOLD = 24 };
static double first_evals(const char *what) {
  int64_t s[1] = {1000};
  LoomArray x = dev_array(1, s), y = dev_array(1, s);
  double t[NCOLD];
  for (int k = 0; k < NCOLD; k++) {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode o, xi = input(g, &x), yi = input(g, &y);
    expr_k(g, xi, yi, k, &o);
    LoomArray r;
    memset(&r, 0, sizeof r);
    double t0 = now_ms();
    loom_eval(g, 1, &o, &r);
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    t[k] = now_ms() - t0;
    loom_array_free(ctx, &r);
    loom_graph_destroy(g);
  }
  qsort(t, NCOLD, sizeof t[0], cmpd);
  loom_array_free(ctx, &x);
  loom_array_free(ctx, &y);
  printf("%s_min_ms %.3f\n%s_max_ms %.3f\n", what, t[0], what, t[NCOLD - 1]);
  return (t[NCOLD / 2 - 1] + t[NCOLD / 2]) / 2;
}
/* Bandwidth of each cold-compile kernel (and two float64 ones) on 2^26 points: the figures that
 * tell whether the JIT level of elementwise kernels (LOOM_CUDA_JIT_LEVEL) costs speed. */
static void cold_kernel_bandwidths(void) {
  int64_t n[1] = {(int64_t)1 << 26};
  for (int dt = 0; dt < 2; dt++) {
    LoomDType t = dt ? LOOM_FLOAT64 : LOOM_FLOAT32;
    LoomArray x = dev_array_of(t, 1, n), y = dev_array_of(t, 1, n), out = dev_array_of(t, 1, n);
    for (int k = 0; k < NCOLD; k++) {
      if (dt && k != 1 && k != 2) continue;
      LoomGraph *g;
      loom_graph_create(ctx, &g);
      LoomNode o;
      expr_k(g, input(g, &x), input(g, &y), k, &o);
      double ms = time_eval(g, o, &out);
      printf("loom_cold_k%02d_%s_GBps %.1f\n", k, dt ? "f64" : "f32", 3.0 * loom_dtype_size(t) * n[0] / ms / 1e6);
      loom_graph_destroy(g);
    }
    loom_array_free(ctx, &x);
    loom_array_free(ctx, &y);
    loom_array_free(ctx, &out);
  }
}
/* Median ms of the first eval of 8 distinct new reductions on 256 x 1000 float32 (graph to result):
 * row and column sums, max, mean, a norm, a full sum, softmax, x - mean(x). */
static double first_reductions(void) {
  int64_t sh[2] = {256, 1000};
  LoomArray x = dev_array(2, sh);
  enum { NRED = 8 };
  double t[NRED];
  for (int k = 0; k < NRED; k++) {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode xi = input(g, &x), o = -1, a1, a2, a3;
    int32_t ax1 = 1, ax0 = 0;
    switch (k) {
    case 0: loom_reduce(g, LOOM_REDUCE_SUM, xi, 1, &ax1, 0, &o); break;
    case 1: loom_reduce(g, LOOM_REDUCE_SUM, xi, 1, &ax0, 0, &o); break;
    case 2: loom_reduce(g, LOOM_REDUCE_MAX, xi, 1, &ax1, 0, &o); break;
    case 3: loom_reduce(g, LOOM_REDUCE_MEAN, xi, 1, &ax0, 0, &o); break;
    case 4: /* sqrt(sum(x * x, axis 1)) */
      loom_binary(g, LOOM_OP_MUL, xi, xi, &a1);
      loom_reduce(g, LOOM_REDUCE_SUM, a1, 1, &ax1, 0, &a2);
      loom_unary(g, LOOM_OP_SQRT, a2, &o);
      break;
    case 5: loom_reduce(g, LOOM_REDUCE_SUM, xi, 0, NULL, 0, &o); break;
    case 6: /* softmax over axis 1 */
      loom_reduce(g, LOOM_REDUCE_MAX, xi, 1, &ax1, 1, &a1);
      loom_binary(g, LOOM_OP_SUB, xi, a1, &a2);
      loom_unary(g, LOOM_OP_EXP, a2, &a3);
      loom_reduce(g, LOOM_REDUCE_SUM, a3, 1, &ax1, 1, &a1);
      loom_binary(g, LOOM_OP_TRUEDIV, a3, a1, &o);
      break;
    default: /* x - mean(x, axis 1) */
      loom_reduce(g, LOOM_REDUCE_MEAN, xi, 1, &ax1, 1, &a1);
      loom_binary(g, LOOM_OP_SUB, xi, a1, &o);
      break;
    }
    LoomArray r;
    memset(&r, 0, sizeof r);
    double t0 = now_ms();
    if (loom_eval(g, 1, &o, &r) != LOOM_OK) fprintf(stderr, "reduction %d: %s\n", k, loom_last_error(ctx));
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    t[k] = now_ms() - t0;
    loom_array_free(ctx, &r);
    loom_graph_destroy(g);
  }
  loom_array_free(ctx, &x);
  qsort(t, NRED, sizeof t[0], cmpd);
  printf("loom_cold_compile_reduction_min_ms %.3f\nloom_cold_compile_reduction_max_ms %.3f\n", t[0], t[NRED - 1]);
  return (t[NRED / 2 - 1] + t[NRED / 2]) / 2;
}
static void warm_driver(void) { /* driver, context and pool: not part of a kernel's compile */
  int64_t s[1] = {16};
  LoomArray x = dev_array(1, s);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), o;
  loom_unary(g, LOOM_OP_NEG, xi, &o);
  LoomArray r;
  memset(&r, 0, sizeof r);
  loom_eval(g, 1, &o, &r);
  loom_array_free(ctx, &r);
  loom_graph_destroy(g);
  loom_array_free(ctx, &x);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--disk-hit")) {
    setenv("LOOM_CACHE_DIR", argv[2], 1);
    loom_context_create(&ctx);
    warm_driver();
    printf("loom_disk_cache_hit_ms %.4f\n", first_evals("loom_disk_cache_hit"));
    LoomStats st;
    loom_get_stats(ctx, &st);
    printf("disk_hit_kernels_compiled %llu\n", (unsigned long long)st.kernels_compiled);
    loom_context_destroy(ctx);
    return 0;
  }
  bool cold_only = argc == 2 && !strcmp(argv[1], "--cold");
  /* The driver keeps its own cache of JIT-compiled PTX (~/.nv/ComputeCache): a kernel compiled by an
   * earlier run would skip the JIT and read as a fraction of its cold cost. Loom's disk cache holds
   * the cubins already, so the cold figures are taken with the driver's cache off. */
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  char dir[] = "/tmp/loom_bench_gpu_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  loom_context_create(&ctx);
  int32_t ndev = 0;
  loom_device_count(ctx, LOOM_DEVICE_CUDA, &ndev);
  if (!ndev) {
    printf("skipped: no CUDA device\n");
    loom_context_destroy(ctx);
    rmdir(dir);
    return 0;
  }
  warm_driver();
  printf("loom_cold_compile_ms %.3f\n", first_evals("loom_cold_compile"));
  printf("loom_cold_compile_reduction_ms %.3f\n", first_reductions());
  char cmd[512];
  snprintf(cmd, sizeof cmd, "'%s' --disk-hit '%s'", argv[0], dir);
  fflush(stdout);
  if (system(cmd) != 0) fprintf(stderr, "disk-hit child failed\n");

  /* elementwise 2*x + exp(y), 2^28 float32 */
  int64_t n28[1] = {(int64_t)1 << 28};
  LoomArray x = dev_array(1, n28), y = dev_array(1, n28), out = dev_array(1, n28);
  {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode o;
    expr_k(g, input(g, &x), input(g, &y), 0, &o);
    double ms = time_eval(g, o, &out);
    printf("loom_elementwise_GBps %.1f\n", 3.0 * 4 * n28[0] / ms / 1e6);
    loom_graph_destroy(g);
    if (cold_only) { /* compile-time probes: the cold figures and the cold kernels' bandwidth */
      cold_kernel_bandwidths();
      loom_array_free(ctx, &x);
      loom_array_free(ctx, &y);
      loom_array_free(ctx, &out);
      loom_context_destroy(ctx);
      return 0;
    }
    /* device-to-device copy (loom_array_copy: cuMemcpyDtoD + synchronize) */
    double t[20];
    for (int i = 0; i < 23; i++) {
      double t0 = now_ms();
      loom_array_copy(ctx, &out, &x);
      if (i >= 3) t[i - 3] = now_ms() - t0;
    }
    qsort(t, 20, sizeof t[0], cmpd);
    printf("copy_GBps %.1f\n", 2.0 * 4 * n28[0] / ((t[9] + t[10]) / 2) / 1e6);
  }
  /* sum of all 2^28 */
  {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode s;
    loom_reduce(g, LOOM_REDUCE_SUM, input(g, &x), 0, NULL, 0, &s);
    LoomArray o = dev_array(0, NULL);
    double ms = time_eval(g, s, &o);
    printf("loom_sum_all_GBps %.1f\n", 4.0 * n28[0] / ms / 1e6);
    loom_array_free(ctx, &o);
    loom_graph_destroy(g);
  }
  loom_array_free(ctx, &y);
  loom_array_free(ctx, &out);
  /* sums over axis 0 and 1 of 16384 x 16384 (x reshaped) */
  for (int ax = 0; ax < 2; ax++) {
    LoomArray m = x;
    m.ndim = 2;
    m.shape[0] = m.shape[1] = 16384;
    m.strides[0] = 16384;
    m.strides[1] = 1;
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode s;
    int32_t a = ax;
    loom_reduce(g, LOOM_REDUCE_SUM, input(g, &m), 1, &a, 0, &s);
    int64_t s1[1] = {16384};
    LoomArray o = dev_array(1, s1);
    double ms = time_eval(g, s, &o);
    printf("loom_sum_axis%d_GBps %.1f\n", ax, 4.0 * n28[0] / ms / 1e6);
    loom_array_free(ctx, &o);
    loom_graph_destroy(g);
  }
  /* row softmax 16384 x 4096 */
  {
    LoomArray m = x;
    m.ndim = 2;
    m.shape[0] = 16384;
    m.shape[1] = 4096;
    m.strides[0] = 4096;
    m.strides[1] = 1;
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode xi = input(g, &m), mx, sh, ex, sm, res;
    int32_t a = 1;
    loom_reduce(g, LOOM_REDUCE_MAX, xi, 1, &a, 1, &mx);
    loom_binary(g, LOOM_OP_SUB, xi, mx, &sh);
    loom_unary(g, LOOM_OP_EXP, sh, &ex);
    loom_reduce(g, LOOM_REDUCE_SUM, ex, 1, &a, 1, &sm);
    loom_binary(g, LOOM_OP_TRUEDIV, ex, sm, &res);
    int64_t s2[2] = {16384, 4096};
    LoomArray o = dev_array(2, s2);
    double ms = time_eval(g, res, &o);
    LoomStats st;
    loom_get_stats(ctx, &st);
    loom_eval(g, 1, &res, &o);
    loom_get_stats(ctx, &st);
    printf("loom_softmax_GBps %.1f\n", 2.0 * 4 * 16384 * 4096 / ms / 1e6);
    printf("loom_softmax_kernels %llu\n", (unsigned long long)st.last_eval_kernels);
    loom_array_free(ctx, &o);
    loom_graph_destroy(g);
  }
  loom_array_free(ctx, &x);
  /* per-call host overhead on 1000 elements: cached eval (no sync) vs bare cuLaunchKernel */
  {
    int64_t s[1] = {1000};
    LoomArray a = dev_array(1, s), b = dev_array(1, s), o = dev_array(1, s);
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode r;
    expr_k(g, input(g, &a), input(g, &b), 0, &r);
    for (int i = 0; i < 100; i++) loom_eval(g, 1, &r, &o);
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    const int N = 20000; /* N calls, then one synchronize: time per call (the bare launch likewise) */
    double t0 = now_ms();
    for (int i = 0; i < N; i++) loom_eval(g, 1, &r, &o);
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    double t1 = now_ms();
    printf("loom_launch_overhead_us %.3f\n", (t1 - t0) * 1e3 / N);
    /* the bare launch: a hand-written PTX kernel of the same work (out = 2 * a + b, one point per
     * thread) and the same parameter block (one byval block of 8-byte words), loaded through the
     * driver layer and launched directly with cuLaunchKernel; timed the same way */
    static const char bare_ptx[] =
        ".version 7.8\n.target sm_90\n.address_size 64\n"
        ".visible .entry bare(.param .align 8 .b8 words[88])\n{\n"
        "  .reg .pred %p<2>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<12>;\n  .reg .f32 %f<4>;\n"
        "  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n"
        "  mad.lo.s32 %r1, %r2, %r3, %r1;\n  ld.param.u64 %rd1, [words];\n  cvt.u64.u32 %rd2, %r1;\n"
        "  setp.ge.u64 %p1, %rd2, %rd1;\n  @%p1 bra DONE;\n"
        "  ld.param.u64 %rd3, [words+8];\n  ld.param.u64 %rd4, [words+16];\n  ld.param.u64 %rd5, [words+24];\n"
        "  shl.b64 %rd6, %rd2, 2;\n  add.s64 %rd7, %rd3, %rd6;\n  add.s64 %rd8, %rd4, %rd6;\n"
        "  add.s64 %rd9, %rd5, %rd6;\n  ld.global.f32 %f1, [%rd7];\n  ld.global.f32 %f2, [%rd8];\n"
        "  fma.rn.f32 %f3, %f1, 0f40000000, %f2;\n  st.global.f32 [%rd9], %f3;\nDONE:\n  ret;\n}\n";
    RtCuda *cu = NULL;
    Diag d = {.status = LOOM_OK};
    RtCuModule *mod = NULL;
    RtCuKernel kk;
    if (rt_cuda_load(ctx, &cu, &d) == LOOM_OK && rt_cuda_device_retain(cu, 0, &d) == LOOM_OK) {
      if (rt_cuda_module_load(cu, 0, bare_ptx, sizeof bare_ptx, &mod, &d) == LOOM_OK &&
          rt_cuda_module_kernel(cu, mod, "bare", &kk, &d) == LOOM_OK) {
        uint64_t words[11] = {0};
        words[0] = 1000;
        words[1] = (uint64_t)(uintptr_t)a.data;
        words[2] = (uint64_t)(uintptr_t)b.data;
        words[3] = (uint64_t)(uintptr_t)o.data;
        void *params[1] = {words};
        uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
        for (int i = 0; i < 100; i++) rt_cuda_launch(cu, &kk, grid, block, 0, NULL, params, &d);
        rt_cuda_device_synchronize(cu, 0, &d);
        double b0 = now_ms();
        for (int i = 0; i < N; i++) rt_cuda_launch(cu, &kk, grid, block, 0, NULL, params, &d);
        rt_cuda_device_synchronize(cu, 0, &d);
        double b1 = now_ms();
        if (d.status == LOOM_OK) printf("raw_launch_us %.3f\n", (b1 - b0) * 1e3 / N);
        else fprintf(stderr, "bare launch: %s\n", d.msg);
        rt_cuda_module_unload(cu, mod);
      } else {
        fprintf(stderr, "bare launch setup: %s\n", d.msg);
      }
      rt_cuda_device_release(cu, 0);
    } else {
      fprintf(stderr, "bare launch: %s\n", d.msg);
    }
    rt_cuda_unload(cu);
    loom_graph_destroy(g);
    loom_array_free(ctx, &a);
    loom_array_free(ctx, &b);
    loom_array_free(ctx, &o);
  }
  loom_context_destroy(ctx);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return 0;
}
