/* bench_gpu.c: Loom on one CUDA GPU: bandwidth of the cases, cold compile, disk-cache hit,
 * per-call host overhead vs a bare cuLaunchKernel. Prints "key value" lines that gpu_bench.sh merges
 * into bench/results/<date>-h200.json.
 *
 * Timing: each case runs 3 warm-up calls, then 20 timed calls, each bracketed by
 * loom_device_synchronize on the host clock (CLOCK_MONOTONIC); the median is reported. (The sync
 * adds a few microseconds to calls of ~1 ms.) Built against the static library because the public
 * loom_input does not take device arrays yet (see the report): inputs go through ir_input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontend/frontend.h"
#include "loom/loom.h"
#include "runtime/cuda.h"
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
static LoomArray dev_array(int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i];
  a.device = LOOM_DEVICE_CUDA;
  if (loom_array_alloc(ctx, &a) != LOOM_OK) {
    fprintf(stderr, "alloc: %s\n", loom_last_error(ctx));
    exit(1);
  }
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  float *h = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  LoomArray ha = a;
  ha.device = LOOM_DEVICE_HOST;
  ha.data = h;
  loom_array_copy(ctx, &a, &ha);
  free(h);
  return a;
}
/* median ms of loom_eval of node into a preallocated output */
static double time_eval(LoomGraph *g, LoomNode n, LoomArray *out) {
  double t[20];
  for (int i = 0; i < 23; i++) {
    double t0 = now_ms();
    if (loom_eval(g, 1, &n, out) != LOOM_OK) {
      fprintf(stderr, "eval: %s\n", loom_last_error(ctx));
      exit(1);
    }
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    if (i >= 3) t[i - 3] = now_ms() - t0;
  }
  qsort(t, 20, sizeof t[0], cmpd);
  return (t[9] + t[10]) / 2;
}
static LoomStatus expr_k(LoomGraph *g, LoomNode x, LoomNode y, int k, LoomNode *out) {
  /* distinct kernels: k selects the functions */
  LoomOp ops[6] = {LOOM_OP_EXP, LOOM_OP_SIN, LOOM_OP_LOG1P, LOOM_OP_TANH, LOOM_OP_COS, LOOM_OP_SQRT};
  LoomNode c, m, e;
  loom_weak_float(g, 2.0 + k, &c);
  loom_binary(g, LOOM_OP_MUL, c, x, &m);
  loom_unary(g, ops[k % 6], y, &e);
  return loom_binary(g, LOOM_OP_ADD, m, e, out);
}
/* median ms of the first eval of 5 distinct new kernels (small arrays) */
static double first_evals(void) {
  int64_t s[1] = {1000};
  LoomArray x = dev_array(1, s), y = dev_array(1, s);
  double t[5];
  for (int k = 0; k < 5; k++) {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode o, xi = input(g, &x), yi = input(g, &y);
    expr_k(g, xi, yi, k, &o);
    LoomArray r;
    memset(&r, 0, sizeof r);
    double t0 = now_ms();
    loom_eval(g, 1, &o, &r);
    t[k] = now_ms() - t0;
    loom_array_free(ctx, &r);
    loom_graph_destroy(g);
  }
  qsort(t, 5, sizeof t[0], cmpd);
  loom_array_free(ctx, &x);
  loom_array_free(ctx, &y);
  return t[2];
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
    printf("loom_disk_cache_hit_ms %.4f\n", first_evals());
    LoomStats st;
    loom_get_stats(ctx, &st);
    printf("disk_hit_kernels_compiled %llu\n", (unsigned long long)st.kernels_compiled);
    loom_context_destroy(ctx);
    return 0;
  }
  char dir[] = "/tmp/loom_bench_gpu_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  loom_context_create(&ctx);
  int32_t ndev = 0;
  loom_device_count(ctx, LOOM_DEVICE_CUDA, &ndev);
  if (!ndev) {
    printf("no CUDA device: %s\n", loom_last_error(ctx));
    return 0;
  }
  warm_driver();
  printf("loom_cold_compile_ms %.3f\n", first_evals());
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
    const int N = 20000;
    double t0 = now_ms();
    for (int i = 0; i < N; i++) loom_eval(g, 1, &r, &o);
    double t1 = now_ms();
    loom_device_synchronize(ctx, LOOM_DEVICE_CUDA, 0);
    printf("loom_launch_overhead_us %.3f\n", (t1 - t0) * 1e3 / N);
    /* the same kernel's PTX, launched bare */
    Arena ar;
    arena_init(&ar, ctx);
    const RtGpuFn *f = NULL;
    (void)f;
    /* bare launch: an empty-bodied copy of the elementwise kernel loaded through the driver layer */
    RtCuda *cu = NULL;
    Diag d = {.status = LOOM_OK};
    CgTarget *t = NULL;
    RtCuDeviceInfo info;
    if (rt_cuda_load(ctx, &cu, &d) == LOOM_OK && rt_cuda_device_info(cu, 0, &info, &d) == LOOM_OK &&
        rt_cuda_device_retain(cu, 0, &d) == LOOM_OK && cg_nvptx_target_create(ctx, info.cc_major, info.cc_minor, &t, &d) == LOOM_OK) {
      /* compile the kernel IR of r directly */
      char *text = NULL;
      loom_dump(g, LOOM_DUMP_KERNELS, 1, &r, &text);
      KernelIr *k = NULL;
      const char *kt = text ? strstr(text, "kernel ") : NULL;
      if (kt && ir_parse_kernel(&ar, kt, &k, &d) == LOOM_OK) {
        CgCompiled c;
        void *cubin = NULL;
        size_t cs = 0;
        RtCuModule *mod = NULL;
        RtCuKernel kk;
        if (t->compile(t, k, false, &c, &d) == LOOM_OK &&
            rt_cuda_link_ptx(cu, 0, c.gpu->ptx, "bare", &cubin, &cs, &d) == LOOM_OK &&
            rt_cuda_module_load(cu, 0, cubin, cs, &mod, &d) == LOOM_OK &&
            rt_cuda_module_kernel(cu, mod, c.gpu->main, &kk, &d) == LOOM_OK) {
          uint64_t words[64] = {0};
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
          double b1 = now_ms();
          rt_cuda_device_synchronize(cu, 0, &d);
          printf("raw_launch_us %.3f\n", (b1 - b0) * 1e3 / N);
          rt_cuda_module_unload(cu, mod);
          t->release(t, &c);
        } else {
          fprintf(stderr, "bare launch setup: %s\n", d.msg);
        }
        if (cubin) rt_cuda_free_host(cu, cubin);
      } else {
        fprintf(stderr, "bare launch: cannot parse the kernel: %s\n", d.msg);
      }
      loom_free_string(ctx, text);
      rt_cuda_device_release(cu, 0);
    } else {
      fprintf(stderr, "bare launch: %s\n", d.msg);
    }
    if (t) t->destroy(t);
    rt_cuda_unload(cu);
    arena_free_all(&ar);
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
