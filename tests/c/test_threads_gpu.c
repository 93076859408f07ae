/* SPDX-License-Identifier: Apache-2.0 */
/* test_threads_gpu.c: Loom's GPU device from several threads at once, the background tier-up included
 * (test_threads.c is the host's twin; issue 10's concurrency item).
 *
 * Without arguments (ctest test_threads_gpu; exits 77 without a GPU): the public API on GPU 0 of the
 * CUDA device (LOOM_TEST_GPU=hip: the AMD one). THREADS threads, each round started together (a barrier):
 *   1. compile: every thread evaluates a kernel no thread has run before (its own structure), and all
 *      of them one shared new kernel at the same moment; int64 row sums and column maxima;
 *   2. run: every thread evaluates its kernels again and again for RUN_MS, a window longer than the
 *      tier-up's idle wait (gpu_rt.h: TIER_IDLE_MS), so the tier-up thread links the final JIT level and
 *      swaps the function handles while the launches go on.
 * Every result is copied back and compared with a reference computed here (exact: integer inputs, exact
 * adds and multiplies, one correctly rounded division; integer reductions). Two layouts: separate contexts
 * (each thread its own context, device state, pool and tier thread) and one shared context (the kernel
 * table, the pool and the tier thread shared; half the threads on streams of their own). The disk cache is
 * off, so every kernel is compiled and tiered up here; a dump sink counts the tier-ups that swapped
 * (loom_set_dump "time"): on CUDA each layout must have some while threads were in their run phase (HIP
 * has no JIT step, so no tiers), and the shared context compiles each distinct kernel once
 * (LoomStats.kernels_compiled).
 *
 * --mock (ctest test_threads_gpu_mock, every CI run): the same threads over the shared GPU layer
 * (rt_gpu_*) and gpu_mock.h's driver, which runs no kernel, so results cannot be compared there. What it
 * checks instead: each thread's data survives the pool's reuse by the others (h2d, d2d and d2h copies of a
 * per-thread pattern on per-thread streams, on two devices); every launch's function belongs to a loaded
 * module (a tier-up never unloads what may still run), its buffers are live allocations and its output is
 * the caller's, on the caller's current stream; the tier-up swapped handles while the threads launched
 * (launches at the final JIT level after launches at level 0); each distinct kernel compiled once per
 * device in the shared context; every device made current before the hooks that name it; and after close
 * everything the driver handed out came back. Only a real GPU checks the kernels' values under
 * concurrency, the driver's own thread safety and real stream ordering.
 * --host (ctest test_threads_gpu_host): the first mode's code on host arrays (no tiers there): this test's
 * own logic, references and counts, in every CI run.
 * LOOM_THREADS_ROUNDS scales the rounds (default 3).
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/gpu/gpu_rt.h"
#define D mock_D /* gpu_mock.h's name for its table; this test's is the wrapper below */
#include "gpu_mock.h"
#undef D

enum { THREADS = 4, RUN_MS = 160 };

static int rounds = 3;
static long passed, failed;
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t barrier;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    bool ok_ = (cond);                                       \
    pthread_mutex_lock(&check_lock);                         \
    if (ok_) passed++;                                       \
    else if (++failed < 60) {                                \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);   \
      fprintf(stderr, __VA_ARGS__);                          \
      fputc('\n', stderr);                                   \
    }                                                        \
    pthread_mutex_unlock(&check_lock);                       \
  } while (0)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void run_threads(void *(*fn)(void *)) {
  pthread_t t[THREADS];
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
}

/* ---- the expression: its structure from the variant, its reference ------------------------------------- */
/* r = x; per base-3 digit of variant (5 digits): r + x, r - x, or 2r; then (r * k + t) / (1 + |x|). Distinct
 * variants are distinct kernels whatever Loom does with scalars; with integer x every step but the division
 * is exact, so the GPU's result equals the reference bit for bit. */
enum { DIGITS = 5 };
static double expr_ref(double x, int variant, double k, double t) {
  double r = x;
  for (int i = 0, v = variant; i < DIGITS; i++, v /= 3) r = v % 3 == 0 ? r + x : v % 3 == 1 ? r - x : r * 2;
  return (r * k + t) / (1.0 + fabs(x));
}

static LoomStatus expr_build(LoomGraph *g, LoomNode x, int variant, double k, double t, LoomNode *out) {
  LoomNode r = x, two, kk, tt, one, ab, den, m, s;
  LoomStatus st = loom_weak_float(g, 2.0, &two);
  for (int i = 0, v = variant; i < DIGITS && !st; i++, v /= 3)
    st = v % 3 == 2 ? loom_binary(g, LOOM_OP_MUL, r, two, &r)
                    : loom_binary(g, v % 3 ? LOOM_OP_SUB : LOOM_OP_ADD, r, x, &r);
  if (!st) st = loom_weak_float(g, k, &kk);
  if (!st) st = loom_weak_float(g, t, &tt);
  if (!st) st = loom_weak_float(g, 1.0, &one);
  if (!st) st = loom_binary(g, LOOM_OP_MUL, r, kk, &m);
  if (!st) st = loom_binary(g, LOOM_OP_ADD, m, tt, &s);
  if (!st) st = loom_unary(g, LOOM_OP_ABS, x, &ab);
  if (!st) st = loom_binary(g, LOOM_OP_ADD, ab, one, &den);
  if (!st) st = loom_binary(g, LOOM_OP_TRUEDIV, s, den, out);
  return st;
}

static double input_value(int64_t i, int tid) { return (double)((i * 7 + tid) % 101) - 50.0; }

/* ==== the real GPU: the public API ====================================================================== */
static LoomDeviceKind gpu = LOOM_DEVICE_CUDA;

/* Counts the tier-ups that swapped handles (loom_set_dump "time" lines) of one context. */
typedef struct TierCount {
  long swapped, kept, live; /* live: swapped while some thread was in its run phase */
} TierCount;
static int running; /* threads in their run phase (atomic) */
static void tier_sink(void *user, const char *text, size_t len) {
  TierCount *c = user;
  const char *end = text + len;
  for (const char *p = text; p < end && (p = memmem(p, (size_t)(end - p), "tier-up", 7)) != NULL; p += 7) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t rest = (size_t)((nl ? nl : end) - p);
    if (memmem(p, rest, "swapped", 7)) {
      __atomic_add_fetch(&c->swapped, 1, __ATOMIC_RELAXED);
      if (__atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0) __atomic_add_fetch(&c->live, 1, __ATOMIC_RELAXED);
    }
    else __atomic_add_fetch(&c->kept, 1, __ATOMIC_RELAXED);
  }
}

/* A device copy of n float64 values input_value(i, tid). */
static bool device_input(LoomContext *ctx, int tid, int64_t n, LoomArray *dev) {
  double *h = malloc((size_t)n * sizeof *h);
  for (int64_t i = 0; i < n; i++) h[i] = input_value(i, tid);
  LoomArray host = {.data = h, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {n}, .strides = {1}};
  *dev = host;
  dev->data = NULL;
  dev->device = gpu;
  bool ok = loom_array_alloc(ctx, dev) == LOOM_OK && loom_array_copy(ctx, dev, &host) == LOOM_OK;
  CHECK(ok, "thread %d: device input: %s", tid, loom_last_error(ctx));
  free(h);
  return ok;
}

/* One thread's expression on the GPU: built once, evaluated `evals` times or, with evals 0, for RUN_MS;
 * every result copied back and compared. Returns the evaluations done. */
static int gpu_expr(LoomContext *ctx, int tid, int variant, int64_t n, int evals) {
  LoomArray x;
  if (!device_input(ctx, tid, n, &x)) return 0;
  LoomGraph *g = NULL;
  LoomNode xn, y;
  double k = 1.5 + variant % 3, t = (double)(variant % 17); /* the variant's: the common kernel is one for all */
  LoomStatus st = loom_graph_create(ctx, &g);
  if (!st) st = loom_input(g, &x, &xn);
  if (!st) st = expr_build(g, xn, variant, k, t, &y);
  double *back = malloc((size_t)n * sizeof *back);
  int done = 0;
  double until = now_ms() + RUN_MS;
  while (!st && (evals ? done < evals : now_ms() < until || done < 2)) {
    LoomArray out;
    memset(&out, 0, sizeof out);
    st = loom_eval(g, 1, &y, &out);
    if (st) break;
    LoomArray host = {.data = back, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {n}, .strides = {1}};
    CHECK(out.device == gpu, "thread %d: the result is not on the GPU", tid);
    st = loom_array_copy(ctx, &host, &out);
    loom_array_free(ctx, &out);
    if (st) break;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
      if (back[i] != expr_ref(input_value(i, tid), variant, k, t) && bad++ == 0) first = i;
    CHECK(bad == 0, "thread %d variant %d evaluation %d: %lld of %lld wrong (first at %lld: %.17g, want %.17g)", tid,
          variant, done, (long long)bad, (long long)n, (long long)first, first >= 0 ? back[first] : 0.0,
          first >= 0 ? expr_ref(input_value(first, tid), variant, k, t) : 0.0);
    done++;
  }
  CHECK(st == LOOM_OK, "thread %d variant %d: %s", tid, variant, loom_last_error(ctx));
  free(back);
  loom_graph_destroy(g);
  loom_array_free(ctx, &x);
  return done;
}

/* int64 row sums and column maxima of an r x c matrix on the GPU (row and column reductions, split when
 * long), against loops here. */
static void gpu_reduce(LoomContext *ctx, int tid, int64_t r, int64_t c) {
  int64_t *v = malloc((size_t)(r * c) * sizeof *v);
  for (int64_t i = 0; i < r * c; i++) v[i] = (i * 31 + tid) % 1000 - 500;
  LoomArray host = {.data = v, .dtype = LOOM_INT64, .ndim = 2, .shape = {r, c}, .strides = {c, 1}}, dev = host;
  dev.data = NULL;
  dev.device = gpu;
  LoomStatus st = loom_array_alloc(ctx, &dev);
  if (!st) st = loom_array_copy(ctx, &dev, &host);
  LoomGraph *g = NULL;
  LoomNode a, roots[2];
  int32_t ax1 = 1, ax0 = 0;
  if (!st) st = loom_graph_create(ctx, &g);
  if (!st) st = loom_input(g, &dev, &a);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax1, 0, &roots[0]);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &ax0, 0, &roots[1]);
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  if (!st) st = loom_eval(g, 2, roots, outs);
  int64_t *sums = malloc((size_t)r * sizeof *sums), *maxs = malloc((size_t)c * sizeof *maxs);
  if (!st) {
    LoomArray hs = {.data = sums, .dtype = LOOM_INT64, .ndim = 1, .shape = {r}, .strides = {1}};
    LoomArray hm = {.data = maxs, .dtype = LOOM_INT64, .ndim = 1, .shape = {c}, .strides = {1}};
    st = loom_array_copy(ctx, &hs, &outs[0]);
    if (!st) st = loom_array_copy(ctx, &hm, &outs[1]);
    loom_array_free(ctx, &outs[0]);
    loom_array_free(ctx, &outs[1]);
  }
  if (!st) {
    int bad = 0;
    for (int64_t i = 0; i < r; i++) {
      int64_t s = 0;
      for (int64_t j = 0; j < c; j++) s += v[i * c + j];
      bad += sums[i] != s;
    }
    for (int64_t j = 0; j < c; j++) {
      int64_t mx = INT64_MIN;
      for (int64_t i = 0; i < r; i++) mx = v[i * c + j] > mx ? v[i * c + j] : mx;
      bad += maxs[j] != mx;
    }
    CHECK(bad == 0, "thread %d: GPU reductions %lldx%lld: %d wrong", tid, (long long)r, (long long)c, bad);
  }
  CHECK(st == LOOM_OK, "thread %d: GPU reductions: %s", tid, loom_last_error(ctx));
  if (g) loom_graph_destroy(g);
  if (dev.data) loom_array_free(ctx, &dev);
  free(sums);
  free(maxs);
  free(v);
}

/* One round of a thread (all start together): new kernels compiled, the common one by all at once, then
 * run for RUN_MS, the window in which the tier-up (TIER_IDLE_MS after the context's last compile) swaps. */
static void gpu_round(LoomContext *ctx, int tid, int r, bool shared) {
  int own = 3 * (r * THREADS + tid) + 1 + (shared ? 121 : 0), common = 3 * (r * THREADS) + 2; /* distinct structures */
  gpu_expr(ctx, tid, common, 4096, 1);
  gpu_reduce(ctx, tid, 64 + tid, 3000);
  gpu_expr(ctx, tid, own, 50000 + 1000 * tid, 1); /* last: its tier-up comes during the run phase */
  __atomic_add_fetch(&running, 1, __ATOMIC_RELEASE);
  int n = gpu_expr(ctx, tid, own, 50000 + 1000 * tid, 0);
  n += gpu_expr(ctx, tid, common, 4096, 4);
  __atomic_sub_fetch(&running, 1, __ATOMIC_RELEASE);
  CHECK(n >= 2, "thread %d round %d: only %d evaluations", tid, r, n);
  pthread_barrier_wait(&barrier);
}

static TierCount own_tiers[THREADS];
static void *gpu_own_context(void *arg) {
  int tid = (int)(intptr_t)arg;
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) {
    CHECK(false, "thread %d: context", tid);
    for (int r = 0; r < rounds; r++) pthread_barrier_wait(&barrier);
    return NULL;
  }
  loom_set_dump_sink(ctx, tier_sink, &own_tiers[tid]);
  CHECK(loom_set_dump(ctx, "time") == LOOM_OK, "thread %d: dump: %s", tid, loom_last_error(ctx));
  for (int r = 0; r < rounds; r++) gpu_round(ctx, tid, r, false);
  loom_context_destroy(ctx); /* finishes the tier-up queue */
  return NULL;
}

static LoomContext *shared_ctx;
static void *gpu_shared_context(void *arg) {
  int tid = (int)(intptr_t)arg;
  LoomStream *s = NULL;
  if (tid % 2 && gpu != LOOM_DEVICE_HOST) { /* odd threads on a stream of their own */
    CHECK(loom_stream_create(shared_ctx, gpu, 0, &s) == LOOM_OK, "thread %d: stream: %s", tid,
          loom_last_error(shared_ctx));
    if (s) CHECK(loom_stream_use(shared_ctx, gpu, 0, s) == LOOM_OK, "thread %d: stream use", tid);
  }
  for (int r = 0; r < rounds; r++) gpu_round(shared_ctx, tid, r, true);
  if (s) {
    CHECK(loom_stream_synchronize(shared_ctx, s) == LOOM_OK, "thread %d: stream sync", tid);
    loom_stream_use(shared_ctx, gpu, 0, NULL);
    loom_stream_destroy(shared_ctx, s);
  }
  return NULL;
}

static int run_gpu(bool host) {
  const char *kind = getenv("LOOM_TEST_GPU");
  gpu = host ? LOOM_DEVICE_HOST : kind && !strcmp(kind, "hip") ? LOOM_DEVICE_HIP : LOOM_DEVICE_CUDA;
  LoomContext *probe = NULL;
  int32_t ndev = 0;
  if (loom_context_create(&probe) != LOOM_OK) return 1;
  loom_device_count(probe, gpu, &ndev);
  loom_context_destroy(probe);
  if (ndev == 0) {
    printf("test_threads_gpu: skipped: no %s device\n", gpu == LOOM_DEVICE_HIP ? "AMD" : "CUDA");
    return 77;
  }
  /* tiers are CUDA's (runtime/cuda/cuda_device.c: on unless LOOM_CUDA_JIT_TIERS=0 or LOOM_CUDA_JIT_LEVEL=0);
   * HIP loads code objects with no JIT step, so AMD has none */
  const char *tv = getenv("LOOM_CUDA_JIT_TIERS"), *lv = getenv("LOOM_CUDA_JIT_LEVEL");
  bool tiers = gpu == LOOM_DEVICE_CUDA && !(tv && !strcmp(tv, "0")) && !(lv && !strcmp(lv, "0"));
  double t0 = now_ms();
  run_threads(gpu_own_context);
  TierCount own = {0, 0, 0};
  for (int i = 0; i < THREADS; i++)
    own.swapped += own_tiers[i].swapped, own.kept += own_tiers[i].kept, own.live += own_tiers[i].live;
  CHECK(!tiers || own.live > 0, "separate contexts: no tier-up swapped a kernel while the threads ran (%ld swapped, "
        "%ld kept tier 0)", own.swapped, own.kept);

  if (loom_context_create(&shared_ctx) != LOOM_OK) return 1;
  TierCount swaps = {0, 0, 0};
  loom_set_dump_sink(shared_ctx, tier_sink, &swaps);
  loom_set_dump(shared_ctx, "time");
  LoomStats s0, s1;
  loom_get_stats(shared_ctx, &s0);
  run_threads(gpu_shared_context);
  loom_get_stats(shared_ctx, &s1);
  /* distinct kernels: per round THREADS own expressions and the common one; per thread's shape the row sums
   * and the column maxima (two kernels at most) */
  uint64_t compiled = s1.kernels_compiled - s0.kernels_compiled;
  uint64_t most = (uint64_t)rounds * (THREADS + 1) + 2 * THREADS;
  CHECK(compiled <= most, "shared context: %llu compilations for at most %llu distinct kernels",
        (unsigned long long)compiled, (unsigned long long)most);
  loom_context_destroy(shared_ctx); /* finishes the tier-up queue */
  CHECK(!tiers || swaps.live > 0, "shared context: no tier-up swapped a kernel while the threads ran (%ld swapped, "
        "%ld kept tier 0)", swaps.swapped, swaps.kept);
  printf("test_threads_gpu: %s, %d threads x %d rounds, %.0f ms; tier-ups (%s) swapped while the threads ran / in "
         "all / kept tier 0: %ld/%ld/%ld in the separate contexts, %ld/%ld/%ld in the shared one; %llu compilations "
         "in the shared context\n",
         gpu == LOOM_DEVICE_HIP ? "hip:0" : gpu == LOOM_DEVICE_CUDA ? "cuda:0" : "host", THREADS, rounds,
         now_ms() - t0, tiers ? "on" : "off", own.live, own.swapped, own.kept, swaps.live, swaps.swapped, swaps.kept,
         (unsigned long long)compiled);
  return 0;
}

/* ==== --mock: the shared GPU layer over gpu_mock.h's driver ============================================== */
/* W: the mock's table with the hooks below. The mock keeps some counts without a lock, so its hooks run
 * one at a time under drv_lock (a driver's own lock); the layer above runs concurrently. */
static RtGpuDriver W;
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;
enum { MAX_MODULES = 1024 };
static struct {
  void *mods[MAX_MODULES]; /* loaded modules, every mock */
  int nmods;
  long launches, stale, dead_buffers, foreign_out, wrong_stream, level[3], swaps_seen;
} L;
/* What the calling thread's next launches must show: its kernel's layout, output and stream. */
static __thread struct {
  bool set, track; /* track: the launches' JIT levels go to first_level / last_level */
  int ndim, nbuf, first_level, last_level;
  uint64_t out;
  void *stream;
} tl;

#define LOCKED(call)                        \
  do {                                      \
    pthread_mutex_lock(&drv_lock);          \
    LoomStatus st_ = (call);                \
    pthread_mutex_unlock(&drv_lock);        \
    return st_;                             \
  } while (0)
static LoomStatus w_stream_create(void *drv, int dev, void **out, Diag *d) {
  LOCKED(mock_D->stream_create(drv, dev, out, d));
}
static void w_stream_destroy(void *drv, int dev, void *s) {
  pthread_mutex_lock(&drv_lock);
  mock_D->stream_destroy(drv, dev, s);
  pthread_mutex_unlock(&drv_lock);
}
static LoomStatus w_stream_sync(void *drv, int dev, void *s, Diag *d) {
  LOCKED(mock_D->stream_synchronize(drv, dev, s, d));
}
static LoomStatus w_event_create(void *drv, int dev, void **out, Diag *d) {
  LOCKED(mock_D->event_create(drv, dev, out, d));
}
static void w_event_destroy(void *drv, int dev, void *e) {
  pthread_mutex_lock(&drv_lock);
  mock_D->event_destroy(drv, dev, e);
  pthread_mutex_unlock(&drv_lock);
}
static LoomStatus w_event_record(void *drv, int dev, void *e, void *s, Diag *d) {
  LOCKED(mock_D->event_record(drv, dev, e, s, d));
}
static LoomStatus w_h2d(void *drv, int dev, uint64_t dst, const void *src, size_t n, void *s, Diag *d) {
  LOCKED(mock_D->copy_h2d(drv, dev, dst, src, n, s, d));
}
static LoomStatus w_d2h(void *drv, int dev, void *dst, uint64_t src, size_t n, void *s, Diag *d) {
  LOCKED(mock_D->copy_d2h(drv, dev, dst, src, n, s, d));
}
static LoomStatus w_d2d(void *drv, int dev, uint64_t dst, uint64_t src, size_t n, void *s, Diag *d) {
  LOCKED(mock_D->copy_d2d(drv, dev, dst, src, n, s, d));
}
static LoomStatus w_peer(void *drv, int dd, uint64_t dst, int sd, uint64_t src, size_t n, Diag *d) {
  LOCKED(mock_D->copy_peer(drv, dd, dst, sd, src, n, d));
}
static LoomStatus w_module_load(void *drv, int dev, const void *bin, size_t size, void **mod, Diag *d) {
  pthread_mutex_lock(&drv_lock);
  LoomStatus st = mock_D->module_load(drv, dev, bin, size, mod, d);
  if (st == LOOM_OK && L.nmods < MAX_MODULES) L.mods[L.nmods++] = *mod;
  pthread_mutex_unlock(&drv_lock);
  return st;
}
static void w_module_unload(void *drv, int dev, void *mod) {
  pthread_mutex_lock(&drv_lock);
  for (int i = 0; i < L.nmods; i++)
    if (L.mods[i] == mod) L.mods[i] = L.mods[--L.nmods];
  mock_D->module_unload(drv, dev, mod);
  pthread_mutex_unlock(&drv_lock);
}
/* The launch: no kernel runs; what the layer hands over is checked. */
static LoomStatus w_launch(void *drv, int dev, void *fn, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared_bytes, void *stream, void **params, Diag *d) {
  Mock *m = drv;
  LoomStatus st = enter(m, "launch", dev, d);
  if (st != LOOM_OK) return st;
  need_current(m, dev);
  const uint64_t *w = params[0];
  pthread_mutex_lock(&drv_lock);
  L.launches++;
  const MockModule *owner = NULL; /* the loaded module fn lies in (never dereferenced before it is found) */
  for (int i = 0; i < L.nmods && !owner; i++) {
    const char *mod = L.mods[i];
    if ((const char *)fn >= mod && (const char *)fn < mod + sizeof(MockModule)) owner = L.mods[i];
  }
  if (!owner) L.stale++;
  int level = owner ? (owner->level < 0 ? 0 : owner->level > 2 ? 2 : owner->level) : 0;
  if (owner) L.level[level]++;
  if (tl.set) {
    if (tl.track && tl.first_level < 0) tl.first_level = level;
    if (tl.track) tl.last_level = level;
    bool out = false;
    pthread_mutex_lock(&m->lock);
    for (int b = 0; b < tl.nbuf; b++) {
      L.dead_buffers += !m_live(m, w[tl.ndim + b]);
      out |= w[tl.ndim + b] == tl.out;
    }
    uint64_t partials = w[tl.ndim + tl.nbuf + tl.nbuf * tl.ndim + 1];
    L.dead_buffers += partials && !m_live(m, partials);
    pthread_mutex_unlock(&m->lock);
    L.foreign_out += !out;
    L.wrong_stream += stream != tl.stream;
  }
  pthread_mutex_unlock(&drv_lock);
  (void)grid, (void)block, (void)shared_bytes;
  return LOOM_OK;
}

static void mock_wrap(void) {
  W = *mock_D;
  W.name = "Mock (threads)";
  W.stream_create = w_stream_create, W.stream_destroy = w_stream_destroy, W.stream_synchronize = w_stream_sync;
  W.event_create = w_event_create, W.event_destroy = w_event_destroy, W.event_record = w_event_record;
  W.copy_h2d = w_h2d, W.copy_d2h = w_d2h, W.copy_d2d = w_d2d, W.copy_peer = w_peer;
  W.module_load = w_module_load, W.module_unload = w_module_unload, W.launch = w_launch;
}

/* A float32 input node over device memory. */
static LoomNode mock_input(LoomGraph *g, void *data, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  memcpy(a.shape, shape, (size_t)ndim * sizeof *shape);
  pass_contiguous_strides(ndim, shape, a.strides);
  LoomNode x = -1;
  loom_input(g, &a, &x);
  return x;
}

/* Runs root's one-kernel schedule on device dev into out (launches checked against this thread's). */
static LoomStatus mock_run(LoomContext *ctx, int dev, LoomGraph *g, LoomNode root, void *out, bool track, Diag *d) {
  Arena ar;
  arena_init(&ar, ctx);
  LoomArray *o = arena_alloc(&ar, sizeof *o);
  int32_t *roots = arena_alloc(&ar, sizeof *roots);
  LoomStatus st = o && roots ? LOOM_OK : LOOM_ERR_OUT_OF_MEMORY;
  if (!st) {
    memset(o, 0, sizeof *o);
    const IrNode *x = &g->ir.nodes[root];
    roots[0] = root;
    o->dtype = (LoomDType)x->dtype;
    o->ndim = x->ndim;
    memcpy(o->shape, x->shape, sizeof o->shape);
    pass_contiguous_strides(x->ndim, x->shape, o->strides);
    IrModule mod;
    memset(&mod, 0, sizeof mod);
    mod.graph = &g->ir, mod.arena = &ar, mod.nroots = 1, mod.roots = roots, mod.outs = o;
    st = pass_run_pipeline(&mod, d);
    if (!st && mod.schedule->nkernel != 1) st = diag_error(d, LOOM_ERR_INTERNAL, "not one kernel");
    if (!st) {
      const KernelIr *k = mod.schedule->kernels[0].ir;
      tl.ndim = k->ndim, tl.nbuf = k->nbuf, tl.out = (uint64_t)(uintptr_t)out, tl.set = true, tl.track = track;
      void *outs[1] = {out};
      RtRun run = {.graph = &g->ir, .schedule = mod.schedule, .out_data = outs, .nouts = 1};
      st = rt_gpu_run_schedule(&W, ctx, dev, &run, d);
      tl.set = false;
    }
  }
  arena_free_all(&ar);
  return st;
}

/* One round of a thread over the mock: the same shape as gpu_round, with copies checked in place of values. */
static void mock_round(LoomContext *ctx, int tid, int r, bool shared) {
  int dev = tid % MOCK_DEVICES;
  int64_t n = 20000, big = 100000; /* one shape for all: the common kernels are one per device */
  size_t bytes = (size_t)n * 4;
  Diag d = {.status = LOOM_OK};
  RtStream *s = NULL;
  void *x = NULL, *y = NULL, *z = NULL, *p = NULL, *q = NULL;
  float *pat = malloc(bytes), *back = malloc(bytes);
  for (int64_t i = 0; i < n; i++) pat[i] = (float)(tid * 1000000 + r * 100000 + i); /* exact in float32 */
  LoomStatus st = rt_gpu_stream_create(&W, ctx, dev, &s, &d);
  if (!st) st = rt_gpu_stream_use(&W, ctx, dev, s, &d);
  tl.stream = s ? rt_gpu_stream_handle(s) : NULL;
  if (!st) st = rt_gpu_alloc(&W, ctx, dev, bytes, &x, &d);
  if (!st) st = rt_gpu_alloc(&W, ctx, dev, bytes, &y, &d);
  if (!st) st = rt_gpu_alloc(&W, ctx, dev, bytes, &z, &d);
  if (!st) st = rt_gpu_alloc(&W, ctx, dev, (size_t)big * 4, &p, &d);
  if (!st) st = rt_gpu_alloc(&W, ctx, dev, 4, &q, &d);
  if (!st) st = rt_gpu_copy(&W, ctx, x, LOOM_DEVICE_HIP, dev, pat, LOOM_DEVICE_HOST, 0, bytes, &d);
  LoomGraph *g = NULL;
  LoomNode xn = -1, own = -1, common = -1, sum = -1;
  int vown = 3 * (r * THREADS + tid) + 1 + (shared ? 121 : 0), vcommon = 3 * (r * THREADS) + 2;
  if (!st) st = loom_graph_create(ctx, &g);
  if (!st) {
    xn = mock_input(g, x, 1, &n);
    LoomNode pn = mock_input(g, p, 1, &big);
    st = expr_build(g, xn, vown, 1.5, 1.0, &own);
    if (!st) st = expr_build(g, xn, vcommon, 2.5, 3.0, &common);
    if (!st) st = loom_reduce(g, LOOM_REDUCE_SUM, pn, 0, NULL, 0, &sum); /* split: partials from the pool */
  }
  /* compile: new kernels, the common one by all threads at once, the own one last (its tier-up, due
   * TIER_IDLE_MS after the context's last compile, then comes while the loop below launches it) */
  if (!st) st = mock_run(ctx, dev, g, common, y, false, &d);
  if (!st) st = mock_run(ctx, dev, g, sum, q, false, &d);
  if (!st) st = mock_run(ctx, dev, g, own, y, true, &d);
  CHECK(st == LOOM_OK, "mock thread %d round %d: %s", tid, r, d.msg);
  /* run through the tier-ups: RUN_MS, longer while the own kernel still runs its level-0 code */
  tl.first_level = -1;
  double until = now_ms() + RUN_MS, cap = until + 20 * RUN_MS;
  int runs = 0;
  while (!st && (now_ms() < until || runs < 2 || (tl.first_level == 0 && tl.last_level != 2 && now_ms() < cap))) {
    st = mock_run(ctx, dev, g, own, y, true, &d);
    if (!st && runs % 4 == 0) st = mock_run(ctx, dev, g, common, z, false, &d);
    if (!st && runs % 8 == 0) st = mock_run(ctx, dev, g, sum, q, false, &d);
    runs++;
  }
  CHECK(st == LOOM_OK, "mock thread %d round %d, run %d: %s", tid, r, runs, d.msg);
  if (tl.first_level == 0 && tl.last_level == 2) __atomic_add_fetch(&L.swaps_seen, 1, __ATOMIC_RELAXED);
  /* the thread's data: still in x after the others' allocations, and through device and host copies */
  if (!st) st = rt_gpu_copy(&W, ctx, z, LOOM_DEVICE_HIP, dev, x, LOOM_DEVICE_HIP, dev, bytes, &d);
  if (!st) st = rt_gpu_copy(&W, ctx, back, LOOM_DEVICE_HOST, 0, z, LOOM_DEVICE_HIP, dev, bytes, &d);
  if (!st) st = rt_gpu_stream_synchronize(&W, ctx, s, &d);
  CHECK(st == LOOM_OK, "mock thread %d round %d copies: %s", tid, r, d.msg);
  if (!st) CHECK(!memcmp(back, pat, bytes), "mock thread %d round %d: its data changed under the others", tid, r);
  Diag dd = {.status = LOOM_OK};
  if (g) loom_graph_destroy(g);
  void *bufs[5] = {x, y, z, p, q};
  size_t sizes[5] = {bytes, bytes, bytes, (size_t)big * 4, 4};
  for (int i = 0; i < 5; i++)
    if (bufs[i]) rt_gpu_free(&W, ctx, dev, bufs[i], sizes[i], &dd);
  if (s) {
    rt_gpu_stream_use(&W, ctx, dev, NULL, &dd);
    rt_gpu_stream_destroy(&W, ctx, s);
  }
  free(pat);
  free(back);
  pthread_barrier_wait(&barrier);
}

/* Closes the layer and the context; the mock must have everything back. */
static void mock_close(LoomContext *ctx, Mock *m, const char *what) {
  rt_gpu_close(&W, ctx);
  loom_context_destroy(ctx);
  CHECK(m->live_allocs == 0 && m->live_streams == 0 && m->live_events == 0 && m->live_modules == 0 &&
            m->retained[0] == 0 && m->retained[1] == 0 && !m->loaded,
        "%s: left behind: %d allocations, %d streams, %d events, %d modules, retained %d/%d, loaded %d", what,
        m->live_allocs, m->live_streams, m->live_events, m->live_modules, m->retained[0], m->retained[1], m->loaded);
  CHECK(m->not_current == 0, "%s: %d hook calls without their device current", what, m->not_current);
  CHECK(m->links[3] >= m->links[1] && m->links[1] > 0, "%s: %d links at level 0, %d tier-ups or final links", what,
        m->links[1], m->links[3]);
}

static Mock mocks[THREADS], shared_mock;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

static void *mock_own_context(void *arg) {
  int tid = (int)(intptr_t)arg;
  LoomContext *ctx = NULL;
  Diag d = {.status = LOOM_OK};
  /* load() and target_create() (device setup) take mock_next: one context opens its device at a time */
  pthread_mutex_lock(&open_lock);
  mock_init(&mocks[tid], tid % 2 ? 64 : 32);
  mock_next = &mocks[tid];
  LoomStatus st = loom_context_create(&ctx);
  if (!st) st = rt_gpu_make_current(&W, ctx, tid % MOCK_DEVICES, &d);
  pthread_mutex_unlock(&open_lock);
  CHECK(st == LOOM_OK, "mock thread %d: open: %s", tid, d.msg);
  for (int r = 0; r < rounds; r++) mock_round(ctx, tid, r, false);
  if (ctx) mock_close(ctx, &mocks[tid], "separate context");
  return NULL;
}

static void *mock_shared_context(void *arg) {
  for (int r = 0; r < rounds; r++) mock_round(shared_ctx, (int)(intptr_t)arg, r, true);
  return NULL;
}

static int run_mock(void) {
  mock_wrap();
  double t0 = now_ms();
  run_threads(mock_own_context);
  long own_swaps = L.swaps_seen, own_l0 = L.level[0], own_l2 = L.level[2];
  CHECK(own_l0 > 0 && own_l2 > 0 && own_swaps > 0,
        "separate contexts: launches at level 0: %ld, at level 2: %ld; rounds that saw the swap: %ld", own_l0, own_l2,
        own_swaps);
  mock_init(&shared_mock, 32);
  mock_next = &shared_mock;
  Diag d = {.status = LOOM_OK};
  if (loom_context_create(&shared_ctx) != LOOM_OK || rt_gpu_open(&W, shared_ctx, &d) != LOOM_OK) {
    CHECK(false, "shared context: %s", d.msg);
    return 1;
  }
  LoomStats s0, s1;
  loom_get_stats(shared_ctx, &s0);
  run_threads(mock_shared_context);
  loom_get_stats(shared_ctx, &s1);
  /* distinct kernels: per round the THREADS own expressions (each on its thread's device) and the common
   * one per device; the sum (one shape) once per device */
  uint64_t compiled = s1.kernels_compiled - s0.kernels_compiled;
  uint64_t most = (uint64_t)rounds * (THREADS + MOCK_DEVICES) + MOCK_DEVICES;
  CHECK(compiled <= most, "shared context: %llu compilations for at most %llu distinct kernels",
        (unsigned long long)compiled, (unsigned long long)most);
  mock_close(shared_ctx, &shared_mock, "shared context");
  CHECK(L.level[0] > own_l0 && L.level[2] > own_l2 && L.swaps_seen > own_swaps,
        "shared context: launches at level 0: %ld, at level 2: %ld; rounds that saw the swap: %ld",
        L.level[0] - own_l0, L.level[2] - own_l2, L.swaps_seen - own_swaps);
  CHECK(L.stale == 0, "%ld launches of a function whose module was unloaded", L.stale);
  CHECK(L.dead_buffers == 0, "%ld launch buffers (or partials) not live allocations", L.dead_buffers);
  CHECK(L.foreign_out == 0, "%ld launches without the caller's output", L.foreign_out);
  CHECK(L.wrong_stream == 0, "%ld launches on another stream than the caller's current one", L.wrong_stream);
  printf("test_threads_gpu --mock: %d threads x %d rounds, %.0f ms: %ld launches (%ld at JIT level 0, %ld at level "
         "2), %ld thread-rounds saw the tier-up swap; %llu compilations in the shared context\n",
         THREADS, rounds, now_ms() - t0, L.launches, L.level[0], L.level[2], L.swaps_seen,
         (unsigned long long)compiled);
  return 0;
}

int main(int argc, char **argv) {
  const char *e = getenv("LOOM_THREADS_ROUNDS");
  if (e && atoi(e) > 0) rounds = atoi(e);
  setenv("LOOM_CACHE_DIR", "", 1); /* every kernel compiled and tiered up in this process */
  const char *mode = argc > 1 ? argv[1] : "";
  int rc = !strcmp(mode, "--mock") ? run_mock() : run_gpu(!strcmp(mode, "--host"));
  if (rc == 77) return 77;
  printf("test_threads_gpu%s%s: %ld passed, %ld failed\n", *mode ? " " : "", mode, passed, failed);
  return failed || rc ? 1 : 0;
}
