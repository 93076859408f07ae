/* test_threads.c: Loom from several threads at once (loom.h: a context may be used from several
 * threads for distinct graphs; one graph is used by one thread at a time).
 *
 * Cases, each with THREADS threads released together by a barrier, every result checked against a
 * reference computed here:
 *   - separate contexts: each thread its own context, the same kernels and different ones;
 *   - one shared context: each thread its own graphs; all compile the same new kernel at the same
 *     moment (the cache compiles it once: kernels_compiled grows by the distinct kernels only), then
 *     each evaluates kernels of its own, small ones on the caller and large ones on the shared thread
 *     pool (which several evaluations then use at once), elementwise and reductions, with given
 *     outputs that alias inputs (temporaries) and plans reused from a cache;
 *   - user kernels: one ElementwiseKernel called from every thread (instantiations built once);
 *   - errors: a failing call on one thread leaves another thread's loom_last_error alone;
 *   - contexts created and destroyed concurrently.
 * scripts/test.sh runs this under ThreadSanitizer (a Debug -fsanitize=thread build): no race reports.
 * LOOM_THREADS_ROUNDS scales the rounds (default 4).
 */
#include <pthread.h>

#include "test_common.h"

enum { THREADS = 4 };

static pthread_barrier_t barrier;
static int rounds = 4;
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;

/* CHECK from worker threads: the tallies in test_common.h are plain globals. */
#define TCHECK(cond, ...)                        \
  do {                                           \
    pthread_mutex_lock(&check_lock);             \
    CHECK(cond, __VA_ARGS__);                    \
    pthread_mutex_unlock(&check_lock);           \
  } while (0)

/* y = (x * k + t) / (1 + |x|) over n points, evaluated on ctx; checked against C. The kernel depends
 * on `variant` (0: shared by all threads, else its own structure). */
static void eval_expr(LoomContext *ctx, int tid, int variant, int64_t n, bool alias_out) {
  LoomGraph *g = NULL;
  if (loom_graph_create(ctx, &g) != LOOM_OK) {
    TCHECK(false, "thread %d: graph_create: %s", tid, loom_last_error(ctx));
    return;
  }
  double *x = malloc((size_t)n * sizeof *x), *y = NULL;
  for (int64_t i = 0; i < n; i++) x[i] = (double)((i * 7 + tid) % 101) - 50.0;
  LoomArray in = {.data = x, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {n}, .strides = {1}};
  double k = 1.5 + (variant >= 200 ? tid : 0), t = (double)variant; /* variants < 200: one kernel for all */
  LoomNode a, kk, tt, one, m, s, ab, den, r;
  LoomStatus st = loom_input(g, &in, &a);
  if (!st) st = loom_weak_float(g, k, &kk);
  if (!st) st = loom_weak_float(g, t, &tt);
  if (!st) st = loom_weak_float(g, 1.0, &one);
  if (!st) st = loom_binary(g, LOOM_OP_MUL, a, kk, &m);
  if (!st) st = loom_binary(g, variant % 2 ? LOOM_OP_SUB : LOOM_OP_ADD, m, tt, &s);
  if (!st) st = loom_unary(g, LOOM_OP_ABS, a, &ab);
  if (!st) st = loom_binary(g, LOOM_OP_ADD, ab, one, &den);
  if (!st) st = loom_binary(g, LOOM_OP_TRUEDIV, s, den, &r);
  for (int rep = 0; rep < 2 && !st; rep++) { /* the second evaluation reuses the graph's plan */
    LoomArray out;
    memset(&out, 0, sizeof out);
    if (alias_out) out = in; /* written in place: evaluated into a temporary first */
    st = loom_eval(g, 1, &r, &out);
    if (st) break;
    y = out.data;
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
      double xi = (double)((i * 7 + tid) % 101) - 50.0;
      if (alias_out && rep == 1) break; /* x was overwritten by the first round */
      double want = (xi * k + (variant % 2 ? -t : t)) / (1.0 + fabs(xi));
      bad += y[i] != want;
    }
    TCHECK(bad == 0, "thread %d variant %d n %lld: %d wrong", tid, variant, (long long)n, bad);
    if (!alias_out) loom_array_free(ctx, &out);
  }
  TCHECK(st == LOOM_OK, "thread %d: %s", tid, loom_last_error(ctx));
  loom_graph_destroy(g);
  free(x);
}

/* Row sums and a column max of an r x c matrix (reduction kernels; split along R when large). */
static void eval_reduce(LoomContext *ctx, int tid, int64_t r, int64_t c) {
  LoomGraph *g = NULL;
  if (loom_graph_create(ctx, &g) != LOOM_OK) return;
  int64_t *v = malloc((size_t)(r * c) * sizeof *v);
  for (int64_t i = 0; i < r * c; i++) v[i] = (i * 31 + tid) % 1000 - 500;
  LoomArray in = {.data = v, .dtype = LOOM_INT64, .ndim = 2, .shape = {r, c}, .strides = {c, 1}};
  LoomNode a, rs, cm;
  int32_t ax1 = 1, ax0 = 0;
  LoomStatus st = loom_input(g, &in, &a);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax1, 0, &rs);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &ax0, 0, &cm);
  LoomNode roots[2] = {rs, cm};
  LoomArray outs[2];
  memset(outs, 0, sizeof outs);
  if (!st) st = loom_eval(g, 2, roots, outs);
  if (!st) {
    int bad = 0;
    for (int64_t i = 0; i < r; i++) {
      int64_t s = 0;
      for (int64_t j = 0; j < c; j++) s += v[i * c + j];
      bad += ((int64_t *)outs[0].data)[i] != s;
    }
    for (int64_t j = 0; j < c; j++) {
      int64_t mx = INT64_MIN;
      for (int64_t i = 0; i < r; i++) mx = v[i * c + j] > mx ? v[i * c + j] : mx;
      bad += ((int64_t *)outs[1].data)[j] != mx;
    }
    TCHECK(bad == 0, "thread %d reductions %lldx%lld: %d wrong", tid, (long long)r, (long long)c, bad);
    loom_array_free(ctx, &outs[0]);
    loom_array_free(ctx, &outs[1]);
  }
  TCHECK(st == LOOM_OK, "thread %d reduce: %s", tid, loom_last_error(ctx));
  loom_graph_destroy(g);
  free(v);
}

/* ---- separate contexts ---------------------------------------------------------------------------- */
static void *own_context(void *arg) {
  int tid = (int)(intptr_t)arg;
  LoomContext *ctx = NULL;
  LoomContextOptions o = {.num_threads = 2};
  if (loom_context_create_ex(&o, &ctx) != LOOM_OK) {
    TCHECK(false, "thread %d: context", tid);
    return NULL;
  }
  pthread_barrier_wait(&barrier);
  for (int r = 0; r < rounds; r++) {
    eval_expr(ctx, tid, 0, 1000, false);          /* the same kernel in every context */
    eval_expr(ctx, tid, 10 + tid, 70000, false);  /* its own, on its own pool */
    eval_reduce(ctx, tid, 300, 200);
  }
  loom_context_destroy(ctx);
  return NULL;
}

/* ---- one shared context ------------------------------------------------------------------------------ */
static LoomContext *shared;
static LoomUserKernel *shared_uk;

static void *shared_context(void *arg) {
  int tid = (int)(intptr_t)arg;
  pthread_barrier_wait(&barrier);
  for (int r = 0; r < rounds; r++) {
    eval_expr(shared, tid, 100 + r, 500, false);      /* every thread compiles this one at once */
    eval_expr(shared, tid, 200 + 10 * r + tid, 40000, r % 2 == 1); /* its own; large: the pool */
    eval_reduce(shared, tid, 50 + tid, 2000);         /* split row sums through the pool */
    /* the user kernel: instantiation cache and kernel cache shared */
    LoomArray x = tc_new1(LOOM_FLOAT32, 3000), y;
    for (int i = 0; i < 3000; i++) ((float *)x.data)[i] = (float)(i % 13) + (float)tid;
    memset(&y, 0, sizeof y);
    LoomStatus st = loom_elementwise_kernel_call(shared_uk, 1, &x, 1, &y, -1);
    TCHECK(st == LOOM_OK, "thread %d user kernel: %s", tid, loom_last_error(shared));
    if (!st) {
      int bad = 0;
      for (int i = 0; i < 3000; i++) bad += ((float *)y.data)[i] != ((float)(i % 13) + (float)tid) * 2.0f + 1.0f;
      TCHECK(bad == 0, "thread %d user kernel: %d wrong", tid, bad);
      loom_array_free(shared, &y);
    }
    tc_free(&x);
    /* an error on this thread: its message is this thread's, and does not leak to the others */
    LoomGraph *g = NULL;
    if (loom_graph_create(shared, &g) == LOOM_OK) {
      LoomNode z;
      char want[64];
      snprintf(want, sizeof want, "node %d", 1000 + tid);
      st = loom_unary(g, LOOM_OP_EXP, 1000 + tid, &z);
      const char *msg = loom_last_error(shared);
      TCHECK(st == LOOM_ERR_INVALID_ARGUMENT && strstr(msg, want) != NULL, "thread %d: its own error: %s", tid, msg);
      loom_graph_destroy(g);
    }
  }
  return NULL;
}

/* ---- contexts created and destroyed concurrently --------------------------------------------------------- */
static void *churn(void *arg) {
  int tid = (int)(intptr_t)arg;
  pthread_barrier_wait(&barrier);
  for (int r = 0; r < rounds; r++) {
    LoomContext *ctx = NULL;
    LoomContextOptions o = {.num_threads = 1 + (tid + r) % 3};
    if (loom_context_create_ex(&o, &ctx) != LOOM_OK) {
      TCHECK(false, "churn %d: context", tid);
      continue;
    }
    eval_expr(ctx, tid, 0, 100, false);
    loom_context_destroy(ctx);
  }
  return NULL;
}

static void run_threads(void *(*fn)(void *)) {
  pthread_t t[THREADS];
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, fn, (void *)(intptr_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
}

int main(void) {
  const char *e = getenv("LOOM_THREADS_ROUNDS");
  if (e && atoi(e) > 0) rounds = atoi(e);
  if (!tc_init()) return 1;
  shared = tc_ctx;
  CHECK_OK(loom_elementwise_kernel_create(shared, "T x", "T y", "y = x * 2 + 1", "twice", NULL, 1, &shared_uk));
  run_threads(own_context);
  LoomStats s0, s1;
  loom_get_stats(shared, &s0);
  run_threads(shared_context);
  loom_get_stats(shared, &s1);
  /* distinct kernels: per round one shared expression, THREADS own ones, the reductions (one per
   * shape: THREADS), the user kernel; a kernel compiled twice would show up here */
  uint64_t compiled = s1.kernels_compiled - s0.kernels_compiled;
  uint64_t most = (uint64_t)rounds * (1 + THREADS) + 2 * THREADS + 2;
  CHECK(compiled <= most, "shared context: %llu compilations for at most %llu distinct kernels",
        (unsigned long long)compiled, (unsigned long long)most);
  run_threads(churn);
  loom_user_kernel_destroy(shared_uk);
  printf("test_threads: %d threads x %d rounds\n", THREADS, rounds);
  return tc_finish();
}
