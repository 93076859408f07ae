/* bench_amd.c: Loom on one AMD GPU (LOOM_DEVICE_HIP), public API only: the bandwidth of the cases
 * bench_gpu.c measures on the H200 (elementwise 2*x + exp(y), sums along the last and the first axis, a
 * full sum, softmax rows), beside the device-to-device copy of the same bytes (what the memory system
 * gives one stream: the practical ceiling), the cold compile of new kernels (LLVM + code object + load)
 * and a disk-cache hit in a new context. Prints "key value" lines (scripts/amd_all.sh turns them into
 * bench/results/<date>-<chip>.json).
 *
 * Timing: 3 warm-up calls, then 20 calls each between two events on the current stream; the median. The
 * predicted bandwidth of every case is the copy's: each reads its inputs and writes its outputs once
 * (the traffic test_amdgpu checks in the code), so "<case>_of_copy" near 1 is the target. Without an AMD
 * device it prints "skipped: no AMD device" and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"

static LoomContext *ctx;

static void put(const char *key, double v) { printf("%s %.3f\n", key, v); }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what) {
  fprintf(stderr, "bench_amd: %s: %s\n", what, loom_last_error(ctx));
  exit(1);
}

static LoomArray dev_array(int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  a.device = LOOM_DEVICE_HIP;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i], n *= shape[i];
  if (loom_array_alloc(ctx, &a) != LOOM_OK) die("alloc");
  float *h = malloc((size_t)n * sizeof *h);
  for (int64_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  LoomArray ha = a;
  ha.device = LOOM_DEVICE_HOST;
  ha.data = h;
  for (int i = ndim - 1, s = 1; i >= 0; i--) ha.strides[i] = s, s *= (int)shape[i];
  if (loom_array_copy(ctx, &a, &ha) != LOOM_OK) die("copy in");
  free(h);
  return a;
}

/* Median ms of run(arg) between two events. */
static double time_ms(void (*run)(void *), void *arg) {
  LoomEvent *e0 = NULL, *e1 = NULL;
  if (loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e0) || loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e1)) die("event");
  for (int i = 0; i < 3; i++) run(arg);
  loom_device_synchronize(ctx, LOOM_DEVICE_HIP, 0);
  double t[20];
  for (int i = 0; i < 20; i++) {
    loom_event_record(ctx, e0, NULL);
    run(arg);
    loom_event_record(ctx, e1, NULL);
    loom_event_synchronize(ctx, e1);
    float ms = 0;
    loom_event_elapsed_ms(ctx, e0, e1, &ms);
    t[i] = ms;
  }
  loom_event_destroy(ctx, e0);
  loom_event_destroy(ctx, e1);
  qsort(t, 20, sizeof t[0], cmpd);
  return (t[9] + t[10]) / 2;
}

typedef struct Eval {
  LoomGraph *g;
  LoomNode n;
  LoomArray *out;
} Eval;
static void run_eval(void *arg) {
  Eval *e = arg;
  if (loom_eval(e->g, 1, &e->n, e->out) != LOOM_OK) die("eval");
}
typedef struct Copy {
  LoomArray *dst, *src;
} Copy;
static void run_copy(void *arg) {
  Copy *c = arg;
  if (loom_array_copy(ctx, c->dst, c->src) != LOOM_OK) die("copy");
}

static LoomNode expr_k(LoomGraph *g, LoomNode x, LoomNode y, int k) {
  LoomOp ops[6] = {LOOM_OP_EXP, LOOM_OP_SIN, LOOM_OP_LOG1P, LOOM_OP_TANH, LOOM_OP_COS, LOOM_OP_SQRT};
  LoomNode c, a, e, o;
  loom_weak_float(g, 2.0 + k, &c);
  loom_binary(g, LOOM_OP_MUL, c, x, &a);
  loom_unary(g, ops[k % 6], y, &e);
  loom_binary(g, k / 6 ? LOOM_OP_SUB : LOOM_OP_ADD, a, e, &o);
  return o;
}

/* GB/s of a case moving `bytes`, and its share of the copy's. */
static void report(const char *key, double bytes, double ms, double copy_gbps) {
  char k[96];
  double gbps = bytes / ms / 1e6;
  snprintf(k, sizeof k, "loom_%s_GBps", key);
  put(k, gbps);
  snprintf(k, sizeof k, "loom_%s_of_copy", key);
  put(k, gbps / copy_gbps);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--disk-hit")) { /* a new process: the kernel from the disk cache */
    setenv("LOOM_CACHE_DIR", argv[2], 1);
    loom_context_create(&ctx);
    int64_t s[1] = {1000};
    LoomArray x = dev_array(1, s), y = dev_array(1, s);
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode xi, yi;
    loom_input(g, &x, &xi);
    loom_input(g, &y, &yi);
    LoomNode o = expr_k(g, xi, yi, 0);
    LoomArray r;
    memset(&r, 0, sizeof r);
    double t0 = now_ms();
    if (loom_eval(g, 1, &o, &r) != LOOM_OK) die("eval");
    loom_device_synchronize(ctx, LOOM_DEVICE_HIP, 0);
    LoomStats st;
    loom_get_stats(ctx, &st);
    printf("loom_disk_hit_first_eval_ms %.3f\nloom_disk_hit_gpu_compiles %llu\n", now_ms() - t0,
           (unsigned long long)st.kernels_compiled);
    loom_context_destroy(ctx);
    return 0;
  }
  char dir[] = "/tmp/loom_bench_amd_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  loom_context_create(&ctx);
  int32_t ndev = 0;
  loom_device_count(ctx, LOOM_DEVICE_HIP, &ndev);
  if (!ndev) {
    printf("skipped: no AMD device\n");
    loom_context_destroy(ctx);
    rmdir(dir);
    return 0;
  }
  /* cold compile: 24 new kernels (12 structures x 2), first eval each, median */
  {
    int64_t s[1] = {1000};
    LoomArray x = dev_array(1, s), y = dev_array(1, s);
    double t[12];
    for (int k = 0; k < 12; k++) {
      LoomGraph *g;
      loom_graph_create(ctx, &g);
      LoomNode xi, yi;
      loom_input(g, &x, &xi);
      loom_input(g, &y, &yi);
      LoomNode o = expr_k(g, xi, yi, k);
      LoomArray r;
      memset(&r, 0, sizeof r);
      double t0 = now_ms();
      if (loom_eval(g, 1, &o, &r) != LOOM_OK) die("cold eval");
      loom_device_synchronize(ctx, LOOM_DEVICE_HIP, 0);
      t[k] = now_ms() - t0;
      loom_array_free(ctx, &r);
      loom_graph_destroy(g);
    }
    qsort(t, 12, sizeof t[0], cmpd);
    put("loom_cold_compile_ms", (t[5] + t[6]) / 2);
    loom_array_free(ctx, &x);
    loom_array_free(ctx, &y);
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "'%s' --disk-hit '%s'", argv[0], dir);
  fflush(stdout);
  if (system(cmd) != 0) fprintf(stderr, "disk-hit child failed\n");
  /* the copy: the ceiling */
  int64_t n28[1] = {(int64_t)1 << 28};
  LoomArray x = dev_array(1, n28), y = dev_array(1, n28), out = dev_array(1, n28);
  Copy cp = {&out, &x};
  double copy_ms = time_ms(run_copy, &cp), copy_gbps = 2.0 * 4 * n28[0] / copy_ms / 1e6;
  put("copy_d2d_GBps", copy_gbps);
  /* elementwise 2*x + exp(y): 12 bytes per point */
  {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode xi, yi;
    loom_input(g, &x, &xi);
    loom_input(g, &y, &yi);
    Eval e = {g, expr_k(g, xi, yi, 0), &out};
    report("elementwise", 3.0 * 4 * n28[0], time_ms(run_eval, &e), copy_gbps);
    loom_graph_destroy(g);
  }
  /* a full sum of 2^28 float32 (the vector part entry): 4 bytes per point */
  {
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode xi, s;
    loom_input(g, &x, &xi);
    loom_reduce(g, LOOM_REDUCE_SUM, xi, 0, NULL, 0, &s);
    LoomArray r;
    memset(&r, 0, sizeof r);
    r.dtype = LOOM_FLOAT32;
    r.device = LOOM_DEVICE_HIP;
    if (loom_array_alloc(ctx, &r) != LOOM_OK) die("alloc");
    Eval e = {g, s, &r};
    report("full_sum", 4.0 * n28[0], time_ms(run_eval, &e), copy_gbps);
    loom_array_free(ctx, &r);
    loom_graph_destroy(g);
  }
  /* sums of a 16384 x 16384 matrix along each axis; softmax rows of 1024 */
  {
    int64_t m[2] = {16384, 16384}, o1[1] = {16384};
    LoomArray a = dev_array(2, m), r = dev_array(1, o1);
    for (int ax = 1; ax >= 0; ax--) {
      LoomGraph *g;
      loom_graph_create(ctx, &g);
      LoomNode ai, s;
      loom_input(g, &a, &ai);
      int32_t axis = ax;
      loom_reduce(g, LOOM_REDUCE_SUM, ai, 1, &axis, 0, &s);
      Eval e = {g, s, &r};
      report(ax ? "sum_axis1" : "sum_axis0", 4.0 * m[0] * m[1], time_ms(run_eval, &e), copy_gbps);
      loom_graph_destroy(g);
    }
    loom_array_free(ctx, &r);
    loom_array_free(ctx, &a);
    int64_t sm[2] = {262144, 1024};
    LoomArray b = dev_array(2, sm), so = dev_array(2, sm);
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode bi, mx, sh, ex, su, o;
    loom_input(g, &b, &bi);
    int32_t last = -1;
    loom_reduce(g, LOOM_REDUCE_MAX, bi, 1, &last, 1, &mx);
    loom_binary(g, LOOM_OP_SUB, bi, mx, &sh);
    loom_unary(g, LOOM_OP_EXP, sh, &ex);
    loom_reduce(g, LOOM_REDUCE_SUM, ex, 1, &last, 1, &su);
    loom_binary(g, LOOM_OP_TRUEDIV, ex, su, &o);
    Eval e = {g, o, &so};
    report("softmax", 2.0 * 4 * sm[0] * sm[1], time_ms(run_eval, &e), copy_gbps);
    loom_graph_destroy(g);
    loom_array_free(ctx, &b);
    loom_array_free(ctx, &so);
  }
  loom_array_free(ctx, &x);
  loom_array_free(ctx, &y);
  loom_array_free(ctx, &out);
  loom_context_destroy(ctx);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return 0;
}
