/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda_faults.c: fault injection on the real CUDA driver (issue 10): every fallible call of the CUDA
 * driver seam fails in turn along a representative program, and each failure must be clean.
 *
 * The CUDA driver table (rt_cuda_gpu_driver(): libcuda underneath) is wrapped by a table of the same hooks
 * that forwards each call, counts what the driver hands out (allocations, streams, events, modules, retained
 * contexts, the loaded library) and fails the fail_at-th fallible call with "fault injection: <hook> failed"
 * instead of calling libcuda. The program (scenario below) allocates, copies in, makes a stream and events,
 * compiles, links, loads and launches an elementwise kernel and a split reduction, times them, copies
 * device to device and back, synchronizes and trims the pool. For N = 1, 2, ... until a run has no N-th
 * call: the scenario runs with call N failing, must return LOOM_OK (the failure was absorbed: a cleanup
 * path, a retry) or the injected error (never another error, never a crash); then the SAME context runs the
 * scenario again with no failure and must give the right values (x*x + x and sum(x), checked against a
 * float64 loop); after the context is closed the driver must have got back everything it handed out.
 * Then every fallible hook the scenario calls must have failed at least once.
 *
 * The wrapper takes the AMD kind's context slot (the layer's state lives in the slot of the driver's kind;
 * no HIP device is opened here), so the test drives the shared GPU layer (rt_gpu_*) with the real driver
 * without the context's own CUDA device state. Tiered compilation is off: every run makes the same calls.
 * Without a CUDA driver or device: prints why, exits 77 (ctest: skipped). `--mock` runs the same test over
 * the mock driver of gpu_mock.h instead (no GPU: the test's own logic in every CI run; the mock runs no
 * kernel, so the values are not checked there).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "runtime/gpu/gpu_rt.h"
#define D mock_D /* gpu_mock.h's name for its table; this test's D is the wrapper */
#include "gpu_mock.h"
#undef D

static int passed, failed;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (cond) passed++;                                    \
    else {                                                 \
      failed++;                                            \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
    }                                                      \
  } while (0)

/* ---- the fault-injecting wrapper ------------------------------------------------------------------------- */
static const RtGpuDriver *B; /* the real CUDA driver table */
static struct {
  pthread_mutex_t lock;
  long fail_at, calls;  /* the fail_at-th fallible call fails (0: none) */
  char failed[512];     /* the hooks failed so far, " a b ..." */
  char injected[64];    /* the hook failed in this run */
  int allocs, streams, events, modules, retained, loaded;
} F = {.lock = PTHREAD_MUTEX_INITIALIZER};

static LoomStatus fault_enter(const char *hook, Diag *d) {
  pthread_mutex_lock(&F.lock);
  bool fail = F.fail_at && ++F.calls == F.fail_at;
  if (!F.fail_at) F.calls++;
  if (fail) {
    char needle[64];
    snprintf(needle, sizeof needle, " %s ", hook);
    if (strlen(F.failed) + strlen(needle) < sizeof F.failed && !strstr(F.failed, needle)) strcat(F.failed, needle);
    snprintf(F.injected, sizeof F.injected, "%s", hook);
  }
  pthread_mutex_unlock(&F.lock);
  return fail ? diag_error(d, LOOM_ERR_BACKEND, "fault injection: %s failed", hook) : LOOM_OK;
}
#define FAULT(hook)                                \
  do {                                             \
    LoomStatus e_ = fault_enter(hook, d);          \
    if (e_ != LOOM_OK) return e_;                  \
  } while (0)
static void count(int *what, int by) { __atomic_add_fetch(what, by, __ATOMIC_RELAXED); }

static LoomStatus w_load(LoomContext *ctx, void **drv, int *ndev, RtGpuJit *jit, Diag *d) {
  FAULT("load");
  LoomStatus st = B->load(ctx, drv, ndev, jit, d);
  if (st == LOOM_OK) {
    count(&F.loaded, 1);
    jit->tiers = false; /* the same calls in every run */
  }
  return st;
}
static void w_unload(void *drv) {
  count(&F.loaded, -1);
  B->unload(drv);
}
static LoomStatus w_device_info(void *drv, int dev, RtGpuDeviceInfo *out, Diag *d) {
  FAULT("device_info");
  return B->device_info(drv, dev, out, d);
}
static LoomStatus w_retain(void *drv, int dev, Diag *d) {
  FAULT("retain");
  LoomStatus st = B->retain(drv, dev, d);
  if (st == LOOM_OK) count(&F.retained, 1);
  return st;
}
static void w_release(void *drv, int dev) {
  count(&F.retained, -1);
  B->release(drv, dev);
}
static LoomStatus w_set_current(void *drv, int dev, Diag *d) {
  FAULT("set_current");
  return B->set_current(drv, dev, d);
}
static LoomStatus w_synchronize(void *drv, int dev, Diag *d) {
  FAULT("synchronize");
  return B->synchronize(drv, dev, d);
}
static LoomStatus w_target_create(LoomContext *ctx, const RtGpuDeviceInfo *info, CgTarget **out, Diag *d) {
  FAULT("target_create");
  return B->target_create(ctx, info, out, d);
}
static LoomStatus w_mem_alloc(void *drv, int dev, size_t size, uint64_t *out, Diag *d) {
  FAULT("mem_alloc");
  LoomStatus st = B->mem_alloc(drv, dev, size, out, d);
  if (st == LOOM_OK) count(&F.allocs, 1);
  return st;
}
static void w_mem_free(void *drv, int dev, uint64_t p) {
  count(&F.allocs, -1);
  B->mem_free(drv, dev, p);
}
static LoomStatus w_copy_h2d(void *drv, int dev, uint64_t dst, const void *src, size_t n, void *s, Diag *d) {
  FAULT("copy_h2d");
  return B->copy_h2d(drv, dev, dst, src, n, s, d);
}
static LoomStatus w_copy_d2h(void *drv, int dev, void *dst, uint64_t src, size_t n, void *s, Diag *d) {
  FAULT("copy_d2h");
  return B->copy_d2h(drv, dev, dst, src, n, s, d);
}
static LoomStatus w_copy_d2d(void *drv, int dev, uint64_t dst, uint64_t src, size_t n, void *s, Diag *d) {
  FAULT("copy_d2d");
  return B->copy_d2d(drv, dev, dst, src, n, s, d);
}
static LoomStatus w_copy_peer(void *drv, int dd, uint64_t dst, int sd, uint64_t src, size_t n, Diag *d) {
  FAULT("copy_peer");
  return B->copy_peer(drv, dd, dst, sd, src, n, d);
}
static LoomStatus w_stream_create(void *drv, int dev, void **out, Diag *d) {
  FAULT("stream_create");
  LoomStatus st = B->stream_create(drv, dev, out, d);
  if (st == LOOM_OK) count(&F.streams, 1);
  return st;
}
static void w_stream_destroy(void *drv, int dev, void *s) {
  count(&F.streams, -1);
  B->stream_destroy(drv, dev, s);
}
static LoomStatus w_stream_synchronize(void *drv, int dev, void *s, Diag *d) {
  FAULT("stream_synchronize");
  return B->stream_synchronize(drv, dev, s, d);
}
static LoomStatus w_event_create(void *drv, int dev, void **out, Diag *d) {
  FAULT("event_create");
  LoomStatus st = B->event_create(drv, dev, out, d);
  if (st == LOOM_OK) count(&F.events, 1);
  return st;
}
static void w_event_destroy(void *drv, int dev, void *e) {
  count(&F.events, -1);
  B->event_destroy(drv, dev, e);
}
/* the pool's ordering events (gpu_driver.h: fence_create, event_query): counted as events */
static LoomStatus w_fence_create(void *drv, int dev, void **out, Diag *d) {
  FAULT("fence_create");
  LoomStatus st = B->fence_create(drv, dev, out, d);
  if (st == LOOM_OK) count(&F.events, 1);
  return st;
}
static int w_event_query(void *drv, int dev, void *e) { return B->event_query(drv, dev, e); }
static LoomStatus w_event_record(void *drv, int dev, void *e, void *s, Diag *d) {
  FAULT("event_record");
  return B->event_record(drv, dev, e, s, d);
}
static LoomStatus w_event_synchronize(void *drv, int dev, void *e, Diag *d) {
  FAULT("event_synchronize");
  return B->event_synchronize(drv, dev, e, d);
}
static LoomStatus w_event_elapsed(void *drv, int dev, void *a, void *b, float *ms, Diag *d) {
  FAULT("event_elapsed");
  return B->event_elapsed(drv, dev, a, b, ms, d);
}
static LoomStatus w_link(void *drv, int dev, const char *code, size_t size, const char *name, int level,
                         void **bin, size_t *bin_size, Diag *d) {
  FAULT("link");
  return B->link(drv, dev, code, size, name, level, bin, bin_size, d);
}
static LoomStatus w_module_load(void *drv, int dev, const void *bin, size_t size, void **mod, Diag *d) {
  FAULT("module_load");
  LoomStatus st = B->module_load(drv, dev, bin, size, mod, d);
  if (st == LOOM_OK) count(&F.modules, 1);
  return st;
}
static void w_module_unload(void *drv, int dev, void *mod) {
  count(&F.modules, -1);
  B->module_unload(drv, dev, mod);
}
static LoomStatus w_module_function(void *drv, int dev, void *mod, const char *name, void **fn, Diag *d) {
  FAULT("module_function");
  return B->module_function(drv, dev, mod, name, fn, d);
}
static LoomStatus w_func_attrs(void *drv, int dev, void *fn, RtGpuFuncAttrs *out, Diag *d) {
  FAULT("func_attrs");
  return B->func_attrs(drv, dev, fn, out, d);
}
static LoomStatus w_occupancy(void *drv, int dev, void *fn, int block, size_t shared, int *per_sm, Diag *d) {
  FAULT("occupancy");
  return B->occupancy(drv, dev, fn, block, shared, per_sm, d);
}
static LoomStatus w_launch(void *drv, int dev, void *fn, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared, void *s, void **params, Diag *d) {
  FAULT("launch");
  return B->launch(drv, dev, fn, grid, block, shared, s, params, d);
}

static RtGpuDriver W; /* B's table with the hooks above; the HIP kind's slot */
static const RtGpuDriver *const D = &W;

static void wrap(void) {
  W = *B;
  W.name = "CUDA (fault injection)";
  W.kind = LOOM_DEVICE_HIP;
  W.load = w_load, W.unload = w_unload, W.device_info = w_device_info, W.retain = w_retain;
  W.release = w_release, W.set_current = w_set_current, W.synchronize = w_synchronize;
  W.target_create = w_target_create, W.mem_alloc = w_mem_alloc, W.mem_free = w_mem_free;
  W.copy_h2d = w_copy_h2d, W.copy_d2h = w_copy_d2h, W.copy_d2d = w_copy_d2d;
  W.copy_peer = B->copy_peer ? w_copy_peer : NULL;
  W.stream_create = w_stream_create, W.stream_destroy = w_stream_destroy;
  W.stream_synchronize = w_stream_synchronize, W.event_create = w_event_create;
  W.event_destroy = w_event_destroy, W.event_record = w_event_record;
  W.event_synchronize = w_event_synchronize, W.event_elapsed = w_event_elapsed;
  W.link = B->link ? w_link : NULL, W.module_load = w_module_load, W.module_unload = w_module_unload;
  W.module_function = w_module_function, W.func_attrs = w_func_attrs, W.occupancy = w_occupancy;
  W.launch = w_launch;
  W.fence_create = B->fence_create ? w_fence_create : NULL, W.event_query = B->event_query ? w_event_query : NULL;
}

/* ---- the program ------------------------------------------------------------------------------------------ */
enum { N = 1 << 16 };
static float host_in[N], host_out[N], host_sum;

static LoomNode input_at(LoomGraph *g, void *data, int ndim, const int64_t *shape) {
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

/* The one-kernel schedule of root with a C-contiguous output (in arena); NULL if it is not one kernel. */
static Schedule *schedule_of(LoomGraph *g, LoomNode root, Arena *arena, Diag *d) {
  arena_init(arena, g->ctx);
  LoomArray *out = arena_alloc(arena, sizeof *out);
  int32_t *roots = arena_alloc(arena, sizeof *roots);
  if (!out || !roots) return NULL;
  memset(out, 0, sizeof *out);
  const IrNode *x = &g->ir.nodes[root];
  roots[0] = root;
  out->dtype = (LoomDType)x->dtype;
  out->ndim = x->ndim;
  memcpy(out->shape, x->shape, sizeof out->shape);
  pass_contiguous_strides(x->ndim, x->shape, out->strides);
  IrModule mod;
  memset(&mod, 0, sizeof mod);
  mod.graph = &g->ir;
  mod.arena = arena;
  mod.nroots = 1;
  mod.roots = roots;
  mod.outs = out;
  return pass_run_pipeline(&mod, d) == LOOM_OK && mod.schedule->nkernel == 1 ? mod.schedule : NULL;
}

static LoomStatus run_on(LoomContext *ctx, LoomGraph *g, const Schedule *s, void *out, Diag *d) {
  void *outs[1] = {out};
  RtRun r = {.graph = &g->ir, .schedule = s, .pinned = NULL, .out_data = outs, .nouts = 1};
  return rt_gpu_run_schedule(D, ctx, 0, &r, d);
}

#define STEP(expr)                           \
  do {                                       \
    if ((st = (expr)) != LOOM_OK) goto out;  \
  } while (0)

/* Everything a program does with a device, stopping at the first failure and undoing what it made:
 * host_out = x*x + x, host_sum = sum(x). */
static LoomStatus scenario(LoomContext *ctx, Diag *d) {
  const LoomDeviceKind K = LOOM_DEVICE_HIP, H = LOOM_DEVICE_HOST;
  void *a = NULL, *b = NULL, *c = NULL;
  RtStream *s = NULL;
  RtEvent *e0 = NULL, *e1 = NULL;
  LoomGraph *g = NULL;
  Arena ar1, ar2;
  bool ars = false;
  float ms = 0;
  LoomStatus st;
  STEP(rt_gpu_open(D, ctx, d));
  STEP(rt_gpu_alloc(D, ctx, 0, N * 4, &a, d));
  STEP(rt_gpu_alloc(D, ctx, 0, N * 4, &b, d));
  STEP(rt_gpu_alloc(D, ctx, 0, 4, &c, d));
  STEP(rt_gpu_copy(D, ctx, a, K, 0, host_in, H, 0, N * 4, d));
  STEP(rt_gpu_stream_create(D, ctx, 0, &s, d));
  STEP(rt_gpu_stream_use(D, ctx, 0, s, d));
  STEP(rt_gpu_event_create(D, ctx, 0, &e0, d));
  STEP(rt_gpu_event_create(D, ctx, 0, &e1, d));
  STEP(rt_gpu_event_record(D, ctx, 0, e0, NULL, d));
  if (loom_graph_create(ctx, &g) != LOOM_OK) {
    st = LOOM_ERR_OUT_OF_MEMORY;
    goto out;
  }
  int64_t n = N;
  LoomNode x = input_at(g, a, 1, &n), t, u, v;
  loom_binary(g, LOOM_OP_MUL, x, x, &t);
  loom_binary(g, LOOM_OP_ADD, t, x, &u);
  loom_reduce(g, LOOM_REDUCE_SUM, x, 0, NULL, 0, &v);
  Schedule *s1 = schedule_of(g, u, &ar1, d), *s2 = schedule_of(g, v, &ar2, d);
  ars = true;
  if (!s1 || !s2) {
    st = LOOM_ERR_INTERNAL;
    goto out;
  }
  STEP(run_on(ctx, g, s1, b, d));
  STEP(run_on(ctx, g, s2, c, d));
  STEP(rt_gpu_event_record(D, ctx, 0, e1, NULL, d));
  STEP(rt_gpu_event_synchronize(D, ctx, e1, d));
  STEP(rt_gpu_event_elapsed(D, ctx, e0, e1, &ms, d));
  STEP(rt_gpu_stream_synchronize(D, ctx, s, d));
  STEP(rt_gpu_copy(D, ctx, a, K, 0, b, K, 0, N * 4, d));
  STEP(rt_gpu_copy(D, ctx, host_out, H, 0, a, K, 0, N * 4, d));
  STEP(rt_gpu_copy(D, ctx, &host_sum, H, 0, c, K, 0, 4, d));
  STEP(rt_gpu_stream_use(D, ctx, 0, NULL, d));
  STEP(rt_gpu_synchronize(D, ctx, 0, d));
  STEP(rt_gpu_device_pool_trim(D, ctx, 0, d));
out:;
  Diag dd = {.status = LOOM_OK};
  if (ars) {
    arena_free_all(&ar1);
    arena_free_all(&ar2);
  }
  if (g) loom_graph_destroy(g);
  if (e0) rt_gpu_event_destroy(D, ctx, e0);
  if (e1) rt_gpu_event_destroy(D, ctx, e1);
  if (s) {
    rt_gpu_stream_use(D, ctx, 0, NULL, &dd);
    rt_gpu_stream_destroy(D, ctx, s);
  }
  if (a) rt_gpu_free(D, ctx, 0, a, N * 4, &dd);
  if (b) rt_gpu_free(D, ctx, 0, b, N * 4, &dd);
  if (c) rt_gpu_free(D, ctx, 0, c, 4, &dd);
  return st;
}

/* The clean run's values against a float64 loop. */
static bool mock_mode;
static Mock mock;

static bool values_ok(const char *what) {
  if (mock_mode) return true;
  double sum = 0, worst = 0;
  for (int i = 0; i < N; i++) {
    double x = host_in[i], want = (double)(float)(x * x) + x, got = host_out[i];
    double err = fabs(got - want) / (fabs(want) + 1e-30);
    if (err > worst) worst = err;
    sum += x;
  }
  bool ok = worst <= 2e-7 && fabs(host_sum - sum) <= 1e-5 * N;
  CHECK(ok, "%s: x*x + x off by %.3g (relative), sum %.9g vs %.9g", what, worst, (double)host_sum, sum);
  return ok;
}

static LoomContext *new_ctx(void) {
  if (mock_mode) {
    mock_init(&mock, 32);
    mock.tiers = false;
    mock_next = &mock;
  }
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) {
    fprintf(stderr, "cannot create a context\n");
    exit(1);
  }
  return ctx;
}

/* Closes the layer's state and the context; the driver must have got back what it handed out. */
static void close_ctx(LoomContext *ctx, const char *what) {
  rt_gpu_close(D, ctx);
  loom_context_destroy(ctx);
  CHECK(F.allocs == 0 && F.streams == 0 && F.events == 0 && F.modules == 0 && F.retained == 0 && F.loaded == 0,
        "%s: left behind: %d allocations, %d streams, %d events, %d modules, %d retained contexts, loaded %d", what,
        F.allocs, F.streams, F.events, F.modules, F.retained, F.loaded);
  if (mock_mode) {
    CHECK(mock.not_current == 0, "%s: %d hook calls without their device current", what, mock.not_current);
    pthread_mutex_destroy(&mock.lock);
  }
}

int main(int argc, char **argv) {
  setenv("LOOM_CACHE_DIR", "", 1); /* every run compiles: the same calls in the same order */
  mock_mode = argc > 1 && !strcmp(argv[1], "--mock");
  B = mock_mode ? &mock_driver : rt_cuda_gpu_driver();
  LoomContext *probe = new_ctx();
  void *drv = NULL;
  int ndev = 0;
  RtGpuJit jit;
  Diag pd = {.status = LOOM_OK};
  if (B->load(probe, &drv, &ndev, &jit, &pd) != LOOM_OK) {
    printf("test_cuda_faults: skipped: %s\n", pd.msg);
    loom_context_destroy(probe);
    return 77;
  }
  B->unload(drv);
  loom_context_destroy(probe);
  wrap();
  for (int i = 0; i < N; i++) host_in[i] = (float)((i % 1000) - 500) / 64.0f;

  /* the calls of one clean run */
  LoomContext *ctx = new_ctx();
  Diag d = {.status = LOOM_OK};
  LoomStatus st = scenario(ctx, &d);
  CHECK(st == LOOM_OK, "the scenario without faults: %s", d.msg);
  values_ok("the scenario without faults");
  close_ctx(ctx, "the scenario without faults");
  long total = F.calls;
  CHECK(total > 20, "the scenario made only %ld fallible driver calls", total);

  int clean = 0, absorbed = 0;
  for (long k = 1; k <= total + 5; k++) {
    memset(host_out, 0, sizeof host_out);
    F.calls = 0;
    F.fail_at = k;
    F.injected[0] = 0;
    ctx = new_ctx();
    Diag fd = {.status = LOOM_OK};
    st = scenario(ctx, &fd);
    bool injected = F.injected[0] != 0;
    char what[160];
    snprintf(what, sizeof what, "call %ld failing (%s)", k, injected ? F.injected : "none reached");
    if (!injected) { /* the run had fewer than k calls: done */
      CHECK(st == LOOM_OK, "%s: %s", what, fd.msg);
      close_ctx(ctx, what);
      break;
    }
    if (st == LOOM_OK) absorbed++;
    else clean++;
    CHECK(st == LOOM_OK || strstr(fd.msg, "fault injection:"), "%s: status %s, '%s' (not the injected error)", what,
          loom_status_name(st), fd.msg);
    /* the same context works again */
    F.fail_at = 0;
    Diag rd = {.status = LOOM_OK};
    st = scenario(ctx, &rd);
    char again[200];
    snprintf(again, sizeof again, "%s, then a clean run in the same context", what);
    CHECK(st == LOOM_OK, "%s: %s", again, rd.msg);
    if (st == LOOM_OK) values_ok(again);
    close_ctx(ctx, what);
  }
  static const char *const fallible[] = {"load", "device_info", "retain", "set_current", "synchronize",
                                         "target_create", "mem_alloc", "copy_h2d", "copy_d2h", "copy_d2d",
                                         "stream_create", "stream_synchronize", "event_create", "event_record",
                                         "event_synchronize", "event_elapsed", "link", "module_load",
                                         "module_function", "launch"};
  for (size_t i = 0; i < sizeof fallible / sizeof fallible[0]; i++) {
    char needle[64];
    snprintf(needle, sizeof needle, " %s ", fallible[i]);
    CHECK(strstr(F.failed, needle), "the hook %s never failed in the scenario", fallible[i]);
  }
  printf("fault injection on the %s driver: %ld calls failed in turn: %d failed cleanly, %d were absorbed\n",
         mock_mode ? "mock" : "CUDA", total, clean, absorbed);
  printf("test_cuda_faults: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
