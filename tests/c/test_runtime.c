/* SPDX-License-Identifier: Apache-2.0 */
/* test_runtime.c: the host runtime: thread pool, kernel cache, schedule dispatch, loom_eval.
 *
 * Approach: the pool, the cache and the schedule runner are tested against a fake CgTarget whose
 * "compiled" kernels are plain C functions (an elementwise y = x + 1 and a row sum with run/partial/
 * finish), so dispatch, splitting and caching are checked without LLVM. End-to-end cases go through
 * the public API (loom_context_create ... loom_eval) and compare with loops written here; they
 * need the whole library. Prints "N passed, N failed"; exits nonzero on any failure.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* SCHED_BATCH */
#endif
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"
#include "runtime/device.h"
#include "runtime/host_launch.h"

static int n_passed, n_failed;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (cond) {                                                                       \
      n_passed++;                                                                     \
    } else {                                                                          \
      n_failed++;                                                                     \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
    }                                                                                 \
  } while (0)

#define CHECK_OK(ctx, expr)                                                           \
  do {                                                                                \
    LoomStatus st_ = (expr);                                                          \
    if (st_ == LOOM_OK) {                                                             \
      n_passed++;                                                                     \
    } else {                                                                          \
      n_failed++;                                                                     \
      fprintf(stderr, "FAIL %s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #expr, (int)st_, \
              (ctx) ? loom_last_error(ctx) : "");                                     \
    }                                                                                 \
  } while (0)

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A context built by hand (no LLVM): allocator, stats lock, a pool; the cache is added per test. */
typedef struct TestCtx {
  LoomContext ctx;
  RtState rt;
} TestCtx;

static void test_ctx_init(TestCtx *t, int threads) {
  memset(t, 0, sizeof *t);
  t->ctx.alloc = *ir_default_allocator();
  t->ctx.num_threads = threads;
  t->ctx.rt = &t->rt;
  pthread_mutex_init(&t->rt.stats_lock, NULL);
  Diag d = {.status = LOOM_OK};
  if (rt_pool_create(&t->ctx, threads, &t->rt.pool, &d) != LOOM_OK) fprintf(stderr, "pool: %s\n", d.msg);
  if (rt_host_pool_create(&t->ctx, &t->rt.host_pool, &d) != LOOM_OK) fprintf(stderr, "host pool: %s\n", d.msg);
}

static void test_ctx_free(TestCtx *t) {
  rt_cache_destroy(t->rt.cache);
  rt_host_disk_destroy(&t->ctx); /* the kernel disk cache's host state, if a compile made it */
  rt_pool_destroy(t->rt.pool);
  rt_host_pool_destroy(t->rt.host_pool);
  pthread_mutex_destroy(&t->rt.stats_lock);
}

/* ---- pool --------------------------------------------------------------------------------------- */
enum { POOL_TASKS = 20000, POOL_CALLERS = 4 };

typedef struct PoolArg {
  RtPool *pool;
  _Atomic int *hits; /* POOL_TASKS counters */
  _Atomic int nested_hits;
  bool nested;
} PoolArg;

static void pool_task(void *arg, int64_t t) {
  PoolArg *a = arg;
  atomic_fetch_add(&a->hits[t], 1);
}

static void nested_inner(void *arg, int64_t t) {
  PoolArg *a = arg;
  (void)t;
  atomic_fetch_add(&a->nested_hits, 1);
}

static void nested_outer(void *arg, int64_t t) {
  PoolArg *a = arg;
  atomic_fetch_add(&a->hits[t], 1);
  rt_parallel_for(a->pool, 10, nested_inner, a);
}

static void *pool_caller(void *arg) {
  PoolArg *a = arg;
  for (int rep = 0; rep < 5; rep++) rt_parallel_for(a->pool, POOL_TASKS, pool_task, a);
  return NULL;
}

static void test_pool(void) {
  TestCtx t;
  test_ctx_init(&t, 4);
  RtPool *p = t.rt.pool;
  CHECK(p != NULL);
  if (!p) return;
  CHECK(rt_pool_size(p) >= 1 && rt_pool_size(p) <= 4);

  /* One caller: every task exactly once. */
  PoolArg a = {.pool = p};
  a.hits = calloc(POOL_TASKS, sizeof *a.hits);
  rt_parallel_for(p, POOL_TASKS, pool_task, &a);
  int bad = 0;
  for (int i = 0; i < POOL_TASKS; i++) bad += atomic_load(&a.hits[i]) != 1;
  CHECK(bad == 0);

  /* Concurrent callers, each with its own counters: each task of each call exactly once. */
  PoolArg args[POOL_CALLERS];
  pthread_t th[POOL_CALLERS];
  for (int c = 0; c < POOL_CALLERS; c++) {
    args[c] = (PoolArg){.pool = p};
    args[c].hits = calloc(POOL_TASKS, sizeof *args[c].hits);
    pthread_create(&th[c], NULL, pool_caller, &args[c]);
  }
  for (int c = 0; c < POOL_CALLERS; c++) pthread_join(th[c], NULL);
  bad = 0;
  for (int c = 0; c < POOL_CALLERS; c++) {
    for (int i = 0; i < POOL_TASKS; i++) bad += atomic_load(&args[c].hits[i]) != 5;
    free(args[c].hits);
  }
  CHECK(bad == 0);

  /* Nested calls do not deadlock and run everything. */
  memset(a.hits, 0, POOL_TASKS * sizeof *a.hits);
  atomic_store(&a.nested_hits, 0);
  rt_parallel_for(p, 100, nested_outer, &a);
  bad = 0;
  for (int i = 0; i < 100; i++) bad += atomic_load(&a.hits[i]) != 1;
  CHECK(bad == 0);
  CHECK(atomic_load(&a.nested_hits) == 1000);

  /* Zero and one task; a pool of one thread runs on the caller. */
  rt_parallel_for(p, 0, pool_task, &a);
  CHECK(1);
  free(a.hits);
  test_ctx_free(&t);

  TestCtx t1;
  test_ctx_init(&t1, 1);
  CHECK(rt_pool_size(t1.rt.pool) == 1);
  PoolArg b = {.pool = t1.rt.pool};
  b.hits = calloc(1000, sizeof *b.hits);
  rt_parallel_for(t1.rt.pool, 1000, pool_task, &b);
  bad = 0;
  for (int i = 0; i < 1000; i++) bad += atomic_load(&b.hits[i]) != 1;
  CHECK(bad == 0);
  free(b.hits);
  test_ctx_free(&t1);
}

/* Pool workers run under SCHED_BATCH (LOOM_POOL_BATCH, default 1), so that waking one never preempts
 * the caller on its core; the caller's own policy is left alone. Task 0 (claimed first, by the caller or a
 * worker) waits until another thread has run a task, so both a worker and the caller are seen. */
typedef struct PolicyArg {
  pthread_t caller;
  _Atomic int worker_policy, caller_policy, others;
} PolicyArg;

static void policy_task(void *arg, int64_t t) {
  PolicyArg *a = arg;
  bool on_caller = pthread_equal(pthread_self(), a->caller);
  atomic_store(on_caller ? &a->caller_policy : &a->worker_policy, sched_getscheduler(0));
  if (t == 0) {
    for (int i = 0; i < 5000 && atomic_load(&a->others) == 0; i++) sleep_ms(1);
  } else {
    atomic_fetch_add(&a->others, 1);
  }
}

static void test_pool_policy(void) {
#ifdef SCHED_BATCH
  const char *e = getenv("LOOM_POOL_BATCH");
  int want = e && *e && strtol(e, NULL, 10) == 0 ? SCHED_OTHER : SCHED_BATCH;
  TestCtx t;
  test_ctx_init(&t, 2);
  if (rt_pool_size(t.rt.pool) < 2) { /* no worker could be started: nothing to check */
    test_ctx_free(&t);
    return;
  }
  PolicyArg a = {.caller = pthread_self()};
  atomic_init(&a.worker_policy, -1);
  atomic_init(&a.caller_policy, -1);
  atomic_init(&a.others, 0);
  int before = sched_getscheduler(0);
  rt_parallel_for(t.rt.pool, 2, policy_task, &a);
  CHECK(atomic_load(&a.worker_policy) == want);
  CHECK(sched_getscheduler(0) == before); /* the caller keeps its policy */
  CHECK(atomic_load(&a.caller_policy) == -1 || atomic_load(&a.caller_policy) == before);
  test_ctx_free(&t);
#endif
}

/* ---- a fake target --------------------------------------------------------------------------------- */
typedef struct FakeTarget {
  CgTarget base;
  _Atomic int compiles, releases, partial_calls, run_calls;
  int delay_ms;
  bool fail; /* compile fails while set */
} FakeTarget;

/* Elementwise over one dim: buf1[i] = buf0[i] + 1 (float64). */
static void fake_elem_run(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t lo,
                          int64_t hi) {
  (void)shape;
  const double *x = bufs[0];
  double *y = bufs[1];
  for (int64_t i = lo; i < hi; i++) y[i * strides[1]] = x[i * strides[0]] + 1.0;
}

/* Row sum, ndim 2 keep 1: buf1[o] = sum_r buf0[o, r] (float64). */
static void fake_red_run(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t lo,
                         int64_t hi) {
  const double *x = bufs[0];
  double *y = bufs[1];
  for (int64_t o = lo; o < hi; o++) {
    double acc = 0.0;
    for (int64_t r = 0; r < shape[1]; r++) acc += x[o * strides[0] + r * strides[1]];
    y[o * strides[2]] = acc;
  }
}

static FakeTarget *fake_for_callbacks; /* test-only: lets the fake partial count its calls */

static void fake_red_partial(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t o,
                             int64_t rlo, int64_t rhi, void *acc) {
  (void)shape;
  const double *x = bufs[0];
  double s = 0.0;
  for (int64_t r = rlo; r < rhi; r++) s += x[o * strides[0] + r * strides[1]];
  memcpy(acc, &s, sizeof s);
  if (fake_for_callbacks) atomic_fetch_add(&fake_for_callbacks->partial_calls, 1);
}

static void fake_red_finish(const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t o,
                            const void *accs, int64_t nparts) {
  (void)shape;
  double *y = bufs[1];
  double s = 0.0;
  for (int64_t p = 0; p < nparts; p++) {
    double v;
    memcpy(&v, (const char *)accs + p * 8, sizeof v);
    s += v;
  }
  y[o * strides[2]] = s;
}

static LoomStatus fake_compile(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out,
                               Diag *d) {
  bool want_llvm_ir = opt && opt->want_llvm_ir;
  FakeTarget *f = (FakeTarget *)t;
  atomic_fetch_add(&f->compiles, 1);
  if (f->delay_ms) sleep_ms(f->delay_ms);
  if (f->fail) return diag_error(d, LOOM_ERR_BACKEND, "fake compile failure of %s", k->name);
  memset(out, 0, sizeof *out);
  if (k->nkeep == k->ndim) {
    out->run = fake_elem_run;
  } else {
    out->run = fake_red_run;
    out->partial = fake_red_partial;
    out->finish = fake_red_finish;
    out->acc_size = 8;
  }
  if (want_llvm_ir) {
    out->llvm_ir = ctx_alloc(t->ctx, 32);
    if (out->llvm_ir) strcpy(out->llvm_ir, "; fake llvm ir");
  }
  return LOOM_OK;
}

static void fake_release(CgTarget *t, CgCompiled *c) {
  FakeTarget *f = (FakeTarget *)t;
  atomic_fetch_add(&f->releases, 1);
  ctx_free(t->ctx, c->llvm_ir);
  c->llvm_ir = NULL;
}

static const char *fake_describe(CgTarget *t) { return "fake target 1"; }

static void fake_init(FakeTarget *f, LoomContext *ctx) {
  memset(f, 0, sizeof *f);
  f->base.name = "fake";
  f->base.describe = fake_describe;
  f->base.compile = fake_compile;
  f->base.release = fake_release;
  f->base.ctx = ctx;
}

/* A one-dim elementwise kernel y = x + c (c varies the key). */
typedef struct ElemKernel {
  KernelIr k;
  KBuffer bufs[2];
  KInstr ins[3];
  KPhase phase;
  KStore store;
} ElemKernel;

static void elem_kernel_init(ElemKernel *e, double c, const char *name) {
  memset(e, 0, sizeof *e);
  e->bufs[0] = (KBuffer){.dtype = LOOM_FLOAT64, .is_output = 0, .layout = {KL_ANY}};
  e->bufs[1] = (KBuffer){.dtype = LOOM_FLOAT64, .is_output = 1, .layout = {KL_ANY}};
  e->ins[0] = (KInstr){.kind = KI_LOAD, .dtype = LOOM_FLOAT64, .src = {-1, -1, -1}, .buf = 0};
  e->ins[1] = (KInstr){.kind = KI_CONST, .dtype = LOOM_FLOAT64, .src = {-1, -1, -1}, .buf = -1};
  e->ins[1].value.f = c;
  e->ins[2] = (KInstr){.kind = KI_ELEM, .dtype = LOOM_FLOAT64, .op = LOOM_OP_ADD, .src = {0, 1, -1},
                       .buf = -1};
  e->phase = (KPhase){.kind = KP_MAP, .store_begin = 0, .nstores = 1};
  e->store = (KStore){.buf = 1, .value = 2};
  snprintf(e->k.name, sizeof e->k.name, "%s", name);
  e->k.ndim = 1;
  e->k.nkeep = 1;
  e->k.index_bits = 64;
  e->k.nbuf = 2;
  e->k.bufs = e->bufs;
  e->k.ninstr = 3;
  e->k.instrs = e->ins;
  e->k.nphase = 1;
  e->k.phases = &e->phase;
  e->k.nstore = 1;
  e->k.stores = &e->store;
}

/* A row sum kernel: ndim 2 keep 1, [reduce sum, final store]. */
typedef struct RedKernel {
  KernelIr k;
  KBuffer bufs[2];
  KInstr ins[2];
  KPhase phases[2];
  KStore store;
} RedKernel;

static void red_kernel_init(RedKernel *r) {
  memset(r, 0, sizeof *r);
  r->bufs[0] = (KBuffer){.dtype = LOOM_FLOAT64, .is_output = 0, .layout = {KL_ANY, KL_ANY}};
  r->bufs[1] = (KBuffer){.dtype = LOOM_FLOAT64, .is_output = 1, .layout = {KL_ANY, KL_ZERO}};
  r->ins[0] = (KInstr){.kind = KI_LOAD, .dtype = LOOM_FLOAT64, .src = {-1, -1, -1}, .buf = 0};
  r->ins[1] = (KInstr){.kind = KI_ACC, .dtype = LOOM_FLOAT64, .src = {-1, -1, -1}, .buf = -1, .phase = 0};
  r->phases[0] = (KPhase){.kind = KP_REDUCE, .reduce_op = LOOM_REDUCE_SUM, .acc_dtype = LOOM_FLOAT64,
                          .value = 0};
  r->phases[1] = (KPhase){.kind = KP_FINAL, .store_begin = 0, .nstores = 1};
  r->store = (KStore){.buf = 1, .value = 1};
  snprintf(r->k.name, sizeof r->k.name, "k0_reduce_sum");
  r->k.ndim = 2;
  r->k.nkeep = 1;
  r->k.index_bits = 64;
  r->k.nbuf = 2;
  r->k.bufs = r->bufs;
  r->k.ninstr = 2;
  r->k.instrs = r->ins;
  r->k.nphase = 2;
  r->k.phases = r->phases;
  r->k.nstore = 1;
  r->k.stores = &r->store;
}

/* ---- cache --------------------------------------------------------------------------------------------- */
typedef struct CacheArg {
  RtCache *cache;
  pthread_barrier_t *barrier;
  LoomStatus st;
  const CgCompiled *got;
  bool hit;
} CacheArg;

static void *cache_caller(void *arg) {
  CacheArg *a = arg;
  ElemKernel e;
  elem_kernel_init(&e, 1.0, "k0"); /* each thread its own KernelIr with the same text */
  pthread_barrier_wait(a->barrier);
  Diag d = {.status = LOOM_OK};
  a->st = rt_cache_acquire(a->cache, &e.k, false, &a->got, &a->hit, &d);
  return NULL;
}

static void test_cache(void) {
  TestCtx t;
  test_ctx_init(&t, 2);
  FakeTarget f;
  fake_init(&f, &t.ctx);
  Diag d = {.status = LOOM_OK};
  CHECK(rt_cache_create(&t.ctx, &f.base, &t.rt.cache, &d) == LOOM_OK);
  RtCache *c = t.rt.cache;
  if (!c) return;

  /* 8 threads at once: one compilation, 7 hits, all get the same kernel. */
  f.delay_ms = 50;
  enum { NT = 8 };
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, NT);
  CacheArg args[NT];
  pthread_t th[NT];
  for (int i = 0; i < NT; i++) {
    args[i] = (CacheArg){.cache = c, .barrier = &barrier};
    pthread_create(&th[i], NULL, cache_caller, &args[i]);
  }
  for (int i = 0; i < NT; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&barrier);
  f.delay_ms = 0;
  int ok = 0, hits = 0, same = 0;
  for (int i = 0; i < NT; i++) {
    ok += args[i].st == LOOM_OK;
    hits += args[i].hit;
    same += args[i].got == args[0].got;
  }
  CHECK(ok == NT);
  CHECK(same == NT);
  CHECK(atomic_load(&f.compiles) == 1);
  CHECK(hits == NT - 1);
  CHECK(t.rt.stats.kernels_compiled == 1);
  CHECK(t.rt.stats.cache_hits == NT - 1);
  for (int i = 0; i < NT; i++) rt_cache_release(c, args[i].got);

  /* Same text under another name: a hit. A different constant: a miss. */
  ElemKernel e2, e3;
  elem_kernel_init(&e2, 1.0, "k7_other_name");
  elem_kernel_init(&e3, 2.0, "k0");
  const CgCompiled *k2 = NULL, *k3 = NULL;
  bool hit = false;
  CHECK(rt_cache_get(c, &e2.k, false, &k2, &hit, &d) == LOOM_OK);
  CHECK(hit && k2 == args[0].got);
  CHECK(rt_cache_acquire(c, &e3.k, false, &k3, &hit, &d) == LOOM_OK);
  CHECK(!hit && k3 != k2);
  CHECK(atomic_load(&f.compiles) == 2);

  /* LLVM IR asked of an entry compiled without it: compiled again, the text kept on the entry. */
  const CgCompiled *k4 = NULL;
  CHECK(k3->llvm_ir == NULL);
  CHECK(rt_cache_acquire(c, &e3.k, true, &k4, &hit, &d) == LOOM_OK);
  CHECK(k4 == k3 && k4->llvm_ir && strcmp(k4->llvm_ir, "; fake llvm ir") == 0);
  CHECK(atomic_load(&f.compiles) == 3);
  CHECK(rt_cache_acquire(c, &e3.k, true, &k4, &hit, &d) == LOOM_OK); /* now a plain hit */
  CHECK(atomic_load(&f.compiles) == 3);
  rt_cache_release(c, k4);
  rt_cache_release(c, k4);
  rt_cache_release(c, k3);

  /* A failing compile reports the target's message; the next request compiles again. */
  ElemKernel e5;
  elem_kernel_init(&e5, 5.0, "k5");
  f.fail = true;
  Diag d2 = {.status = LOOM_OK};
  const CgCompiled *k5 = NULL;
  CHECK(rt_cache_acquire(c, &e5.k, false, &k5, &hit, &d2) == LOOM_ERR_BACKEND);
  CHECK(k5 == NULL && strstr(d2.msg, "fake compile failure") != NULL);
  f.fail = false;
  Diag d3 = {.status = LOOM_OK};
  CHECK(rt_cache_acquire(c, &e5.k, false, &k5, &hit, &d3) == LOOM_OK && !hit);
  rt_cache_release(c, k5);

  /* The bound: filling past RT_CACHE_MAX_ENTRIES evicts unpinned entries, never the pinned one
   * (k2 came from rt_cache_get: pinned for the cache's life). */
  int before = atomic_load(&f.compiles);
  for (int i = 0; i < RT_CACHE_MAX_ENTRIES + 50; i++) {
    ElemKernel ei;
    elem_kernel_init(&ei, 100.0 + i, "kfill");
    const CgCompiled *ki = NULL;
    Diag di = {.status = LOOM_OK};
    if (rt_cache_acquire(c, &ei.k, false, &ki, NULL, &di) == LOOM_OK) rt_cache_release(c, ki);
  }
  CHECK(atomic_load(&f.compiles) == before + RT_CACHE_MAX_ENTRIES + 50);
  CHECK(rt_cache_size(c) <= RT_CACHE_MAX_ENTRIES);
  CHECK(atomic_load(&f.releases) >= 50);
  CHECK(rt_cache_get(c, &e2.k, false, &k2, &hit, &d) == LOOM_OK && hit);

  test_ctx_free(&t); /* destroys the cache: every remaining entry released */
  /* Every successful compilation (all but the one failure) was released exactly once. */
  CHECK(atomic_load(&f.releases) == atomic_load(&f.compiles) - 1);
}

/* ---- schedule dispatch with the fake target ------------------------------------------------------- */
static void test_schedule_fake(int threads) {
  TestCtx t;
  test_ctx_init(&t, threads);
  FakeTarget f;
  fake_init(&f, &t.ctx);
  Diag d = {.status = LOOM_OK};
  CHECK(rt_cache_create(&t.ctx, &f.base, &t.rt.cache, &d) == LOOM_OK);
  fake_for_callbacks = &f;

  /* Elementwise x -> temp (x + 1) -> out (temp + 1): large enough to run in parallel. */
  enum { N = 200003 };
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++) x[i] = i * 0.5;
  IrGraph g;
  memset(&g, 0, sizeof g);
  LoomArray in = {.data = x, .dtype = LOOM_FLOAT64, .ndim = 1, .shape = {N}, .strides = {1}};
  g.inputs = &in;
  g.ninputs = 1;
  ElemKernel e;
  elem_kernel_init(&e, 1.0, "k0");
  SchedBinding b0[2] = {{.kind = SB_INPUT, .index = 0, .strides = {1}},
                        {.kind = SB_TEMP, .index = 0, .strides = {1}}};
  SchedBinding b1[2] = {{.kind = SB_TEMP, .index = 0, .strides = {1}},
                        {.kind = SB_OUTPUT, .index = 0, .offset = N - 1, .strides = {-1}}};
  SchedKernel ks[2] = {{.ir = &e.k, .shape = {N}, .bind = b0}, {.ir = &e.k, .shape = {N}, .bind = b1}};
  SchedTemp temp = {.dtype = LOOM_FLOAT64, .nelem = N};
  Schedule s = {.nkernel = 2, .kernels = ks, .ntemp = 1, .temps = &temp};
  void *outs[1] = {y};
  CHECK(rt_run_schedule(&t.ctx, &g, &s, outs, &d) == LOOM_OK);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += y[N - 1 - i] != x[i] + 2.0;
  CHECK(bad == 0);
  CHECK(t.rt.stats.last_eval_kernels == 2);
  CHECK(t.rt.stats.temp_bytes_peak >= (uint64_t)N * 8);
  CHECK(atomic_load(&f.compiles) == 1); /* both kernels share one cache entry */

  /* Row sums: few long rows (split along R) and many short rows (parallel over O). */
  RedKernel r;
  red_kernel_init(&r);
  int64_t shapes[3][2] = {{1, 1 << 20}, {3, 300000}, {5000, 40}};
  for (int si = 0; si < 3; si++) {
    int64_t no = shapes[si][0], nr = shapes[si][1];
    double *m = malloc((size_t)(no * nr) * sizeof *m), *out = malloc((size_t)no * sizeof *out);
    for (int64_t i = 0; i < no * nr; i++) m[i] = (double)(i % 7);
    LoomArray min = {.data = m, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {no, nr}, .strides = {nr, 1}};
    g.inputs = &min;
    SchedBinding rb[2] = {{.kind = SB_INPUT, .index = 0, .strides = {nr, 1}},
                          {.kind = SB_OUTPUT, .index = 0, .strides = {1, 0}}};
    SchedKernel rk = {.ir = &r.k, .shape = {no, nr}, .bind = rb};
    Schedule rs = {.nkernel = 1, .kernels = &rk};
    void *routs[1] = {out};
    atomic_store(&f.partial_calls, 0);
    CHECK(rt_run_schedule(&t.ctx, &g, &rs, routs, &d) == LOOM_OK);
    bad = 0;
    for (int64_t o = 0; o < no; o++) {
      double ref = 0.0;
      for (int64_t i = 0; i < nr; i++) ref += (double)((o * nr + i) % 7);
      bad += out[o] != ref;
    }
    CHECK(bad == 0);
    int64_t parts = (nr + 32767) / 32768;
    /* The split depends on nr (parts) and on no versus the threads, not on the thread count alone:
     * one long row is split even on one thread, so its bits do not depend on the pool. */
    bool expect_split = no < 2 * rt_pool_size(t.rt.pool) && parts > 1 && no * nr >= 65536;
    if (expect_split) CHECK(atomic_load(&f.partial_calls) == no * parts);
    else CHECK(atomic_load(&f.partial_calls) == 0);
    free(m);
    free(out);
  }

  /* Empty spaces: an elementwise kernel of size 0 is skipped; a reduction with empty R still runs. */
  double ident[4] = {9, 9, 9, 9};
  LoomArray empty = {.data = NULL, .dtype = LOOM_FLOAT64, .ndim = 2, .shape = {4, 0}, .strides = {0, 1}};
  g.inputs = &empty;
  SchedBinding eb[2] = {{.kind = SB_INPUT, .index = 0, .strides = {0, 1}},
                        {.kind = SB_OUTPUT, .index = 0, .strides = {1, 0}}};
  SchedKernel ek[2] = {{.ir = &e.k, .shape = {0}, .bind = eb}, {.ir = &r.k, .shape = {4, 0}, .bind = eb}};
  Schedule es = {.nkernel = 2, .kernels = ek};
  void *eouts[1] = {ident};
  CHECK(rt_run_schedule(&t.ctx, &g, &es, eouts, &d) == LOOM_OK);
  CHECK(ident[0] == 0 && ident[3] == 0);
  CHECK(t.rt.stats.last_eval_kernels == 1);

  /* A binding to a missing array is an internal error, not a crash. */
  SchedBinding badb[2] = {{.kind = SB_TEMP, .index = 3, .strides = {1}},
                          {.kind = SB_OUTPUT, .index = 0, .strides = {1}}};
  SchedKernel bk = {.ir = &e.k, .shape = {4}, .bind = badb};
  Schedule bs = {.nkernel = 1, .kernels = &bk};
  Diag d4 = {.status = LOOM_OK};
  CHECK(rt_run_schedule(&t.ctx, &g, &bs, eouts, &d4) == LOOM_ERR_INTERNAL);

  fake_for_callbacks = NULL;
  free(x);
  free(y);
  test_ctx_free(&t);
}

/* ---- end to end through the public API -------------------------------------------------------------- */
static LoomArray arr1d(void *data, LoomDType dt, int64_t n) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = dt;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 1;
  return a;
}

static bool close_rel(double got, double want, double tol) {
  if (isnan(want)) return isnan(got);
  return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

static void test_e2e_elementwise(LoomContext *ctx) {
  enum { N = 100003 };
  double *a = malloc(N * 8), *b = malloc(N * 8), *c = malloc(N * 8);
  for (int i = 0; i < N; i++) {
    a[i] = sin(i * 0.001);
    b[i] = 1.0 + i * 1e-5;
    c[i] = (i % 13) - 6.0;
  }
  LoomGraph *g = NULL;
  CHECK_OK(ctx, loom_graph_create(ctx, &g));
  if (!g) return;
  LoomArray A = arr1d(a, LOOM_FLOAT64, N), B = arr1d(b, LOOM_FLOAT64, N), C = arr1d(c, LOOM_FLOAT64, N);
  LoomNode na, nb, nc, t1, t2, t3;
  CHECK_OK(ctx, loom_input(g, &A, &na));
  CHECK_OK(ctx, loom_input(g, &B, &nb));
  CHECK_OK(ctx, loom_input(g, &C, &nc));
  CHECK_OK(ctx, loom_binary(g, LOOM_OP_MUL, nb, nc, &t1));
  CHECK_OK(ctx, loom_unary(g, LOOM_OP_EXP, na, &t2));
  CHECK_OK(ctx, loom_binary(g, LOOM_OP_ADD, t1, t2, &t3)); /* b * c + exp(a) */
  LoomArray out;
  memset(&out, 0, sizeof out);
  CHECK_OK(ctx, loom_eval(g, 1, &t3, &out));
  if (out.data) {
    CHECK(out.dtype == LOOM_FLOAT64 && out.ndim == 1 && out.shape[0] == N && out.strides[0] == 1);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += !close_rel(((double *)out.data)[i], b[i] * c[i] + exp(a[i]), 1e-13);
    CHECK(bad == 0);
    loom_array_free(ctx, &out);
    CHECK(out.data == NULL);
  }
  LoomStats st1, st2;
  CHECK_OK(ctx, loom_get_stats(ctx, &st1));
  CHECK(st1.last_eval_kernels == 1); /* fused */

  /* The same expression again: a cache hit, no compilation. */
  memset(&out, 0, sizeof out);
  CHECK_OK(ctx, loom_eval(g, 1, &t3, &out));
  CHECK_OK(ctx, loom_get_stats(ctx, &st2));
  CHECK(st2.kernels_compiled == st1.kernels_compiled);
  CHECK(st2.cache_hits > st1.cache_hits);
  CHECK(st2.kernels_launched == st1.kernels_launched + 1);
  loom_array_free(ctx, &out);

  /* A given output with a negative stride (written reversed). */
  double *rev = malloc(N * 8);
  LoomArray R = arr1d(rev + N - 1, LOOM_FLOAT64, N);
  R.strides[0] = -1;
  CHECK_OK(ctx, loom_eval(g, 1, &t1, &R));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += rev[N - 1 - i] != b[i] * c[i];
  CHECK(bad == 0);
  CHECK(R.data == rev + N - 1); /* the descriptor is unchanged */

  /* Two outputs at once, one allocated, one given. */
  LoomNode two[2] = {t1, t3};
  LoomArray outs2[2];
  memset(outs2, 0, sizeof outs2);
  double *given = malloc(N * 8);
  outs2[1] = arr1d(given, LOOM_FLOAT64, N);
  CHECK_OK(ctx, loom_eval(g, 2, two, outs2));
  if (outs2[0].data) {
    bad = 0;
    for (int i = 0; i < N; i++)
      bad += ((double *)outs2[0].data)[i] != b[i] * c[i] ||
             !close_rel(given[i], b[i] * c[i] + exp(a[i]), 1e-13);
    CHECK(bad == 0);
  }
  loom_array_free(ctx, &outs2[0]);

  /* Dumps. */
  char *text = NULL;
  CHECK_OK(ctx, loom_dump(g, LOOM_DUMP_KERNELS, 1, &t3, &text));
  CHECK(text && strlen(text) > 0);
  loom_free_string(ctx, text);
  text = NULL;
  CHECK_OK(ctx, loom_dump(g, LOOM_DUMP_GRAPH, 1, &t3, &text));
  CHECK(text && strstr(text, "exp") != NULL);
  loom_free_string(ctx, text);
  text = NULL;
  CHECK_OK(ctx, loom_dump(g, LOOM_DUMP_LLVM, 1, &t3, &text));
  CHECK(text && strstr(text, "define") != NULL);
  loom_free_string(ctx, text);

  loom_graph_destroy(g);
  free(a);
  free(b);
  free(c);
  free(rev);
  free(given);
}

/* prev_sum: the full sum from a context with another thread count (NaN on the first call); a full
 * reduction is split by its size only, so the bits must not depend on the number of threads. */
static void test_e2e_reductions(LoomContext *ctx, double *prev_sum) {
  /* Full sum of exp(x) over 2^21 float64: split along R; bit-identical run after run. */
  enum { N = 1 << 21 };
  double *x = malloc((size_t)N * 8);
  double ref = 0.0;
  for (int i = 0; i < N; i++) {
    x[i] = (double)(((int64_t)i * 7919) % 1000) * 1e-3;
    ref += exp(x[i]);
  }
  LoomGraph *g = NULL;
  CHECK_OK(ctx, loom_graph_create(ctx, &g));
  if (!g) return;
  LoomArray X = arr1d(x, LOOM_FLOAT64, N);
  LoomNode nx, ne, ns;
  CHECK_OK(ctx, loom_input(g, &X, &nx));
  CHECK_OK(ctx, loom_unary(g, LOOM_OP_EXP, nx, &ne));
  CHECK_OK(ctx, loom_reduce(g, LOOM_REDUCE_SUM, ne, 0, NULL, 0, &ns));
  double r1 = 0, r2 = 1;
  LoomArray o1, o2;
  memset(&o1, 0, sizeof o1);
  memset(&o2, 0, sizeof o2);
  CHECK_OK(ctx, loom_eval(g, 1, &ns, &o1));
  CHECK_OK(ctx, loom_eval(g, 1, &ns, &o2));
  if (o1.data && o2.data) {
    CHECK(o1.ndim == 0);
    r1 = *(double *)o1.data;
    r2 = *(double *)o2.data;
    CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
    CHECK(close_rel(r1, ref, 1e-10));
    if (!isnan(*prev_sum)) CHECK(memcmp(&r1, prev_sum, sizeof r1) == 0);
    *prev_sum = r1;
  }
  loom_array_free(ctx, &o1);
  loom_array_free(ctx, &o2);
  loom_graph_destroy(g);
  free(x);

  /* Row mean of a 300 x 1000 float32 matrix. */
  enum { ROWS = 300, COLS = 1000 };
  float *m = malloc(ROWS * COLS * sizeof *m);
  for (int i = 0; i < ROWS * COLS; i++) m[i] = (float)((i % 17) * 0.25);
  CHECK_OK(ctx, loom_graph_create(ctx, &g));
  if (!g) return;
  LoomArray M;
  memset(&M, 0, sizeof M);
  M.data = m;
  M.dtype = LOOM_FLOAT32;
  M.ndim = 2;
  M.shape[0] = ROWS;
  M.shape[1] = COLS;
  M.strides[0] = COLS;
  M.strides[1] = 1;
  LoomNode nm, nmean;
  int32_t axis = 1;
  CHECK_OK(ctx, loom_input(g, &M, &nm));
  CHECK_OK(ctx, loom_reduce(g, LOOM_REDUCE_MEAN, nm, 1, &axis, 0, &nmean));
  LoomArray om;
  memset(&om, 0, sizeof om);
  CHECK_OK(ctx, loom_eval(g, 1, &nmean, &om));
  if (om.data) {
    CHECK(om.dtype == LOOM_FLOAT32 && om.ndim == 1 && om.shape[0] == ROWS);
    int bad = 0;
    for (int r = 0; r < ROWS; r++) {
      double s = 0;
      for (int c = 0; c < COLS; c++) s += m[r * COLS + c];
      bad += !close_rel(((float *)om.data)[r], s / COLS, 1e-5);
    }
    CHECK(bad == 0);
  }
  loom_array_free(ctx, &om);
  loom_graph_destroy(g);
  free(m);
}

static void test_e2e_alias(LoomContext *ctx) {
  enum { N = 70001 };
  double *a = malloc(N * 8), *orig = malloc(N * 8);
  for (int i = 0; i < N; i++) orig[i] = a[i] = i * 0.25;
  LoomGraph *g = NULL;
  CHECK_OK(ctx, loom_graph_create(ctx, &g));
  if (!g) return;
  LoomArray A = arr1d(a, LOOM_FLOAT64, N);
  LoomNode na, one, sum;
  CHECK_OK(ctx, loom_input(g, &A, &na));
  CHECK_OK(ctx, loom_weak_float(g, 1.0, &one));
  CHECK_OK(ctx, loom_binary(g, LOOM_OP_ADD, na, one, &sum));

  /* out == input: a = a + 1 in place. */
  LoomArray out = A;
  CHECK_OK(ctx, loom_eval(g, 1, &sum, &out));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += a[i] != orig[i] + 1.0;
  CHECK(bad == 0);

  /* out is the input reversed: a[N-1-i] = old a[i] + 1 (needs the temporary). */
  for (int i = 0; i < N; i++) a[i] = orig[i];
  LoomArray rev = arr1d(a + N - 1, LOOM_FLOAT64, N);
  rev.strides[0] = -1;
  CHECK_OK(ctx, loom_eval(g, 1, &sum, &rev));
  bad = 0;
  for (int i = 0; i < N; i++) bad += a[N - 1 - i] != orig[i] + 1.0;
  CHECK(bad == 0);
  loom_graph_destroy(g);
  free(a);
  free(orig);
}

static void test_e2e_errors(LoomContext *ctx) {
  float x[6] = {1, 2, 3, 4, 5, 6};
  LoomGraph *g = NULL;
  CHECK_OK(ctx, loom_graph_create(ctx, &g));
  if (!g) return;
  LoomArray X;
  memset(&X, 0, sizeof X);
  X.data = x;
  X.dtype = LOOM_FLOAT32;
  X.ndim = 2;
  X.shape[0] = 2;
  X.shape[1] = 3;
  X.strides[0] = 3;
  X.strides[1] = 1;
  LoomNode nx, ny;
  CHECK_OK(ctx, loom_input(g, &X, &nx));
  CHECK_OK(ctx, loom_unary(g, LOOM_OP_NEG, nx, &ny));
  LoomArray out;
  memset(&out, 0, sizeof out);

  CHECK(loom_eval(g, 0, &ny, &out) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strlen(loom_last_error(ctx)) > 0);
  LoomNode badnode = 12345;
  CHECK(loom_eval(g, 1, &badnode, &out) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(ctx), "12345") != NULL);
  CHECK(loom_eval(g, 1, &ny, NULL) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_eval(NULL, 1, &ny, &out) == LOOM_ERR_INVALID_ARGUMENT);

  double wrong_dt[6];
  LoomArray W = X;
  W.data = wrong_dt;
  W.dtype = LOOM_FLOAT64;
  CHECK(loom_eval(g, 1, &ny, &W) == LOOM_ERR_DTYPE);
  CHECK(strstr(loom_last_error(ctx), "float64") && strstr(loom_last_error(ctx), "float32"));

  float wrong_shape[6];
  LoomArray S = X;
  S.data = wrong_shape;
  S.shape[0] = 3;
  S.shape[1] = 2;
  S.strides[0] = 2;
  CHECK(loom_eval(g, 1, &ny, &S) == LOOM_ERR_SHAPE);
  CHECK(strstr(loom_last_error(ctx), "(3,2)") && strstr(loom_last_error(ctx), "(2,3)"));

  /* A failing call leaves the outputs it would have allocated untouched. */
  LoomNode both[2] = {ny, ny};
  LoomArray outs2[2];
  memset(outs2, 0, sizeof outs2);
  outs2[1] = W;
  CHECK(loom_eval(g, 2, both, outs2) == LOOM_ERR_DTYPE);
  CHECK(outs2[0].data == NULL && outs2[0].ndim == 0);

  LoomArray dev = X;
  dev.data = wrong_shape;
  dev.device = LOOM_DEVICE_CUDA;
  /* Host inputs with a CUDA output: "no CUDA driver" (UNSUPPORTED) on a machine without one, a
   * mixed-device error (INVALID_ARGUMENT naming both devices) where there is one. */
  LoomStatus dst = loom_eval(g, 1, &ny, &dev);
  CHECK(dst == LOOM_ERR_UNSUPPORTED || dst == LOOM_ERR_INVALID_ARGUMENT);

  char *text = (char *)1;
  CHECK(loom_dump(g, (LoomDumpKind)42, 1, &ny, &text) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(text == NULL);
  CHECK(loom_get_stats(ctx, NULL) == LOOM_ERR_INVALID_ARGUMENT);

  /* After the errors, a good call works. */
  CHECK_OK(ctx, loom_eval(g, 1, &ny, &out));
  if (out.data) CHECK(((float *)out.data)[5] == -6.0f);
  loom_array_free(ctx, &out);
  loom_graph_destroy(g);
}

typedef struct EvalThreadArg {
  LoomContext *ctx;
  int seed;
  int bad;
} EvalThreadArg;

static void *eval_thread(void *arg) {
  EvalThreadArg *t = arg;
  enum { N = 50000 };
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++) x[i] = (float)((i + t->seed) % 100);
  LoomGraph *g = NULL;
  if (loom_graph_create(t->ctx, &g) != LOOM_OK) {
    t->bad = -1;
    free(x);
    return NULL;
  }
  LoomArray X = arr1d(x, LOOM_FLOAT32, N);
  LoomNode nx, nk, nm;
  loom_input(g, &X, &nx);
  loom_const_f64(g, (double)t->seed, LOOM_FLOAT32, &nk);
  loom_binary(g, LOOM_OP_MUL, nx, nk, &nm);
  for (int rep = 0; rep < 10; rep++) {
    LoomArray out;
    memset(&out, 0, sizeof out);
    if (loom_eval(g, 1, &nm, &out) != LOOM_OK) {
      t->bad++;
      continue;
    }
    for (int i = 0; i < N; i++) t->bad += ((float *)out.data)[i] != x[i] * (float)t->seed;
    loom_array_free(t->ctx, &out);
  }
  loom_graph_destroy(g);
  free(x);
  return NULL;
}

static void test_e2e_threads(LoomContext *ctx) {
  enum { NT = 4 };
  pthread_t th[NT];
  EvalThreadArg args[NT];
  for (int i = 0; i < NT; i++) {
    args[i] = (EvalThreadArg){.ctx = ctx, .seed = i + 2};
    pthread_create(&th[i], NULL, eval_thread, &args[i]);
  }
  int bad = 0;
  for (int i = 0; i < NT; i++) {
    pthread_join(th[i], NULL);
    bad += args[i].bad;
  }
  CHECK(bad == 0);
}

static void test_e2e(void) {
  loom_context_destroy(NULL); /* NULL-safe */
  CHECK(loom_context_create(NULL) == LOOM_ERR_INVALID_ARGUMENT);
  LoomContextOptions bad_opts = {.allocator = NULL, .num_threads = -3};
  LoomContext *ctx = NULL;
  CHECK(loom_context_create_ex(&bad_opts, &ctx) == LOOM_ERR_INVALID_ARGUMENT && ctx == NULL);

  int thread_counts[2] = {1, 4};
  double full_sum = NAN;
  for (int i = 0; i < 2; i++) {
    LoomContextOptions opts = {.allocator = NULL, .num_threads = thread_counts[i]};
    ctx = NULL;
    LoomStatus st = loom_context_create_ex(&opts, &ctx);
    CHECK(st == LOOM_OK && ctx != NULL);
    if (st != LOOM_OK) {
      fprintf(stderr, "loom_context_create_ex failed with status %d; skipping end-to-end tests\n", (int)st);
      return;
    }
    CHECK(strcmp(loom_last_error(ctx), "") == 0);
    test_e2e_elementwise(ctx);
    test_e2e_reductions(ctx, &full_sum);
    test_e2e_alias(ctx);
    test_e2e_errors(ctx);
    test_e2e_threads(ctx);
    loom_context_destroy(ctx);
  }
}

/* Streams, events and pool figures on the host: they exist, complete at once, and check devices. */
static void test_host_streams(void) {
  LoomContext *ctx = NULL;
  CHECK(loom_context_create(&ctx) == LOOM_OK);
  if (!ctx) return;
  LoomStream *s = NULL;
  CHECK(loom_stream_create(ctx, LOOM_DEVICE_HOST, 0, &s) == LOOM_OK && s != NULL);
  CHECK(loom_stream_handle(s) == NULL);
  CHECK(loom_stream_use(ctx, LOOM_DEVICE_HOST, 0, s) == LOOM_OK);
  CHECK(loom_stream_synchronize(ctx, s) == LOOM_OK);
  CHECK(loom_stream_use(ctx, LOOM_DEVICE_HOST, 0, NULL) == LOOM_OK);
  CHECK(loom_stream_use(ctx, LOOM_DEVICE_HOST, 1, NULL) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(ctx), "device 0") != NULL);
  CHECK(loom_stream_use(ctx, (LoomDeviceKind)7, 0, NULL) == LOOM_ERR_UNSUPPORTED);
  CHECK(loom_stream_create(ctx, LOOM_DEVICE_HOST, 0, NULL) == LOOM_ERR_INVALID_ARGUMENT);
  LoomEvent *e0 = NULL, *e1 = NULL;
  CHECK(loom_event_create(ctx, LOOM_DEVICE_HOST, 0, &e0) == LOOM_OK);
  CHECK(loom_event_create(ctx, LOOM_DEVICE_HOST, 0, &e1) == LOOM_OK);
  float ms = -1;
  CHECK(loom_event_elapsed_ms(ctx, e0, e1, &ms) == LOOM_ERR_INVALID_ARGUMENT); /* not recorded */
  CHECK(loom_event_record(ctx, e0, s) == LOOM_OK);
  CHECK(loom_event_record(ctx, e1, NULL) == LOOM_OK);
  CHECK(loom_event_synchronize(ctx, e1) == LOOM_OK);
  CHECK(loom_event_elapsed_ms(ctx, e0, e1, &ms) == LOOM_OK && ms >= 0 && ms < 1000);
  CHECK(loom_event_elapsed_ms(ctx, e0, e1, NULL) == LOOM_ERR_INVALID_ARGUMENT);
  loom_event_destroy(ctx, e0);
  loom_event_destroy(ctx, e1);
  loom_event_destroy(ctx, NULL);
  loom_stream_destroy(ctx, s);
  loom_stream_destroy(ctx, NULL);
  /* the host pool: a large array counts as used, then as cached, then is gone after free_all */
  LoomPoolStats p0, p1, p2, p3;
  CHECK(loom_pool_stats(ctx, LOOM_DEVICE_HOST, 0, &p0) == LOOM_OK);
  LoomArray a = {.dtype = LOOM_FLOAT64, .ndim = 1, .shape = {1 << 18}, .device = LOOM_DEVICE_HOST};
  CHECK(loom_array_alloc(ctx, &a) == LOOM_OK && a.data != NULL);
  CHECK(loom_pool_stats(ctx, LOOM_DEVICE_HOST, 0, &p1) == LOOM_OK);
  CHECK(p1.used_bytes >= p0.used_bytes + (2u << 20) && p1.total_bytes >= p1.used_bytes);
  loom_array_free(ctx, &a);
  CHECK(loom_pool_stats(ctx, LOOM_DEVICE_HOST, 0, &p2) == LOOM_OK);
  CHECK(p2.used_bytes == p0.used_bytes && p2.total_bytes >= p0.total_bytes + (2u << 20));
  CHECK(loom_pool_free_all_blocks(ctx, LOOM_DEVICE_HOST, 0) == LOOM_OK);
  CHECK(loom_pool_stats(ctx, LOOM_DEVICE_HOST, 0, &p3) == LOOM_OK);
  CHECK(p3.total_bytes == p3.used_bytes && p3.used_bytes == p0.used_bytes);
  CHECK(loom_pool_stats(ctx, LOOM_DEVICE_HOST, 0, NULL) == LOOM_ERR_INVALID_ARGUMENT);
  /* CUDA without a driver: a clear error, not a crash (with one: a stream of a missing device) */
  int32_t ndev = 0;
  loom_device_count(ctx, LOOM_DEVICE_CUDA, &ndev);
  LoomStream *cs = NULL;
  LoomStatus st = loom_stream_create(ctx, LOOM_DEVICE_CUDA, ndev, &cs);
  CHECK(st != LOOM_OK && cs == NULL && strstr(loom_last_error(ctx), "CUDA") != NULL);
  CHECK(loom_pool_free_all_blocks(ctx, LOOM_DEVICE_CUDA, ndev) != LOOM_OK);
  loom_context_destroy(ctx);
}

/* ---- device tables --------------------------------------------------------------------------------------
 * Every device kind of this build fills its whole table (device.h): a missing function would crash the
 * first caller, on a machine this test may never see (CUDA's and HIP's are checked here without a GPU). */
static void test_device_tables(void) {
  const RtDevice *host = rt_device(LOOM_DEVICE_HOST), *cuda = rt_device(LOOM_DEVICE_CUDA), *hip = rt_device(LOOM_DEVICE_HIP);
  CHECK(host && host->kind == LOOM_DEVICE_HOST && !strcmp(host->name, "host") && host->binary == CG_BINARY_HOST);
  CHECK(cuda && cuda->kind == LOOM_DEVICE_CUDA && !strcmp(cuda->name, "cuda") && cuda->binary == CG_BINARY_PTX);
  CHECK(hip && hip->kind == LOOM_DEVICE_HIP && !strcmp(hip->name, "hip") && hip->binary == CG_BINARY_AMDGPU);
  CHECK(rt_device((LoomDeviceKind)7) == NULL && rt_device((LoomDeviceKind)-1) == NULL);
  const RtDevice *all[3] = {host, cuda, hip};
  for (int i = 0; i < 3 && all[i]; i++) {
    const RtDevice *t = all[i];
    CHECK(t->open && t->count && t->close && t->synchronize && t->alloc && t->free && t->pool_stats && t->pool_trim &&
          t->copy && t->stream_create && t->stream_destroy && t->stream_synchronize && t->stream_use &&
          t->current_stream && t->stream_handle && t->event_create && t->event_destroy && t->event_record &&
          t->event_synchronize && t->event_elapsed && t->prepare && t->unpin && t->run_schedule);
  }
  /* the host writes in-place outputs itself and has nothing to settle; CUDA uses a copy kernel, settles
   * user streams, dumps PTX and takes raw modules */
  CHECK(host->write_strided && !host->settle && !host->dump_code && !host->raw_create && !host->raw_formats);
  CHECK(!cuda->write_strided && cuda->settle && cuda->dump_code && cuda->raw_sniff && cuda->raw_create &&
        cuda->raw_destroy && cuda->raw_text && cuda->raw_load && cuda->raw_launch &&
        (cuda->raw_formats & (1u << LOOM_RAW_PTX)) && (cuda->raw_formats & (1u << LOOM_RAW_CUBIN)));
  CHECK(hip && !hip->write_strided && hip->settle && hip->dump_code && hip->raw_sniff && hip->raw_create &&
        hip->raw_destroy && hip->raw_text && hip->raw_load && hip->raw_launch &&
        (hip->raw_formats & (1u << LOOM_RAW_HSACO)) && (hip->raw_formats & (1u << LOOM_RAW_LLVM_IR)));
  CHECK(rt_device_for_binary(CG_BINARY_PTX) == cuda && rt_device_for_binary(CG_BINARY_HOST) == host &&
        rt_device_for_binary(CG_BINARY_AMDGPU) == hip);
  const char ptx[] = ".version 7.8\n.target sm_90\n.visible .entry k(.param .u64 p)\n{ ret; }\n";
  LoomRawFormat f = LOOM_RAW_AUTO;
  CHECK(rt_device_for_raw(&f, ptx, sizeof ptx - 1) == cuda && f == LOOM_RAW_PTX);
  f = LOOM_RAW_CUBIN;
  CHECK(rt_device_for_raw(&f, "\177ELF", 4) == cuda && f == LOOM_RAW_CUBIN);
  /* AMD code: an ELF of machine EM_AMDGPU (224), LLVM IR for amdgcn (given as LLVM IR or sniffed) */
  unsigned char hsaco[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64};
  hsaco[18] = 224;
  f = LOOM_RAW_AUTO;
  CHECK(rt_device_for_raw(&f, hsaco, sizeof hsaco) == hip && f == LOOM_RAW_HSACO);
  const char amd_ir[] = "target triple = \"amdgcn-amd-amdhsa\"\ndefine amdgpu_kernel void @k() {\n  ret void\n}\n";
  const char nv_ir[] = "target triple = \"nvptx64-nvidia-cuda\"\ndefine void @k() {\n  ret void\n}\n";
  f = LOOM_RAW_AUTO;
  CHECK(rt_device_for_raw(&f, amd_ir, sizeof amd_ir - 1) == hip && f == LOOM_RAW_LLVM_IR);
  f = LOOM_RAW_LLVM_IR;
  CHECK(rt_device_for_raw(&f, amd_ir, sizeof amd_ir - 1) == hip && f == LOOM_RAW_LLVM_IR);
  f = LOOM_RAW_LLVM_IR;
  CHECK(rt_device_for_raw(&f, nv_ir, sizeof nv_ir - 1) == cuda && f == LOOM_RAW_LLVM_IR);
  char buf[64];
  CHECK(!strcmp(rt_device_kinds(buf, sizeof buf), "host, cuda, hip"));
  CHECK(!strcmp(rt_device_label(buf, sizeof buf, LOOM_DEVICE_CUDA, 1), "cuda:1"));
  CHECK(!strcmp(rt_device_label(buf, sizeof buf, LOOM_DEVICE_HIP, 0), "hip:0"));
  CHECK(!strcmp(rt_device_label(buf, sizeof buf, (LoomDeviceKind)7, 0), "device kind 7:0"));
}

/* The host cost model (host_launch.c): strategies from the sizes, parts independent of the threads. */
static void test_host_plan(void) {
  RtHostKernelInfo elem = {.elementwise = true}, row = {.can_split = true}, col = {.can_split = true, .can_split_cols = true},
                   plain = {0};
  RtHostPlan p = rt_host_plan(&elem, 1000, 1, 8);
  CHECK(p.strategy == RT_HOST_SERIAL);
  p = rt_host_plan(&elem, 1 << 24, 1, 8);
  CHECK(p.strategy == RT_HOST_RANGES && p.ntasks == 32);
  p = rt_host_plan(&elem, 1 << 24, 1, 1);
  CHECK(p.strategy == RT_HOST_SERIAL);
  p = rt_host_plan(&row, 10, 10, 8); /* tiny work */
  CHECK(p.strategy == RT_HOST_SERIAL);
  p = rt_host_plan(&row, 1, 10000000, 2); /* few long rows: R split, parts from nr only */
  CHECK(p.strategy == RT_HOST_SPLIT_R && p.nparts == 256);
  p = rt_host_plan(&row, 1, 100000, 64);
  CHECK(p.strategy == RT_HOST_SPLIT_R && p.nparts == 4);
  p = rt_host_plan(&row, 4096, 1024, 2); /* many rows: ranges of O */
  CHECK(p.strategy == RT_HOST_RANGES && p.ntasks == 8);
  p = rt_host_plan(&plain, 1, 10000000, 2); /* not splittable */
  CHECK(p.strategy == RT_HOST_SERIAL || p.strategy == RT_HOST_RANGES);
  /* tall narrow columns: column split, the same parts for any thread count; slabs of 131072 points
   * (LOOM_HOST_COL_SLAB_POINTS=65536: of 65536, the plan before), at least 64 rows, and where that gives
   * fewer than 16 slabs, up to 16 of at least 65536 points */
  const char *slab_env = getenv("LOOM_HOST_COL_SLAB_POINTS");
  bool small_slabs = slab_env && strtol(slab_env, NULL, 10) <= 65536;
  for (int64_t threads = 1; threads <= 64; threads *= 4) {
    p = rt_host_plan(&col, 16, 1 << 20, threads);
    CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == (small_slabs ? 256 : 128));
    p = rt_host_plan(&col, 64, 65536, threads);
    CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == (small_slabs ? 64 : 32));
  }
  p = rt_host_plan(&col, 1024, 4096, 2); /* rows of a page: slabs of whole rows (streamed), not ranges of O */
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == (small_slabs ? 64 : 32));
  p = rt_host_plan(&col, 1024, 512, 2); /* 4 slabs of 128 rows would be too few: 8 of 64 */
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == 8);
  p = rt_host_plan(&col, 1024, 200, 2); /* as before: 4 slabs of at least 64 rows */
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == 4);
  p = rt_host_plan(&col, 3, 3000017, 8); /* a few columns of many rows: the cap */
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == (small_slabs ? 138 : 69));
  p = rt_host_plan(&col, 8192, 4096, 2); /* wider rows: ranges of O */
  CHECK(p.strategy == RT_HOST_RANGES);
  p = rt_host_plan(&col, 200, 100, 2); /* too few rows for two slabs */
  CHECK(p.strategy != RT_HOST_SPLIT_COLS);
  /* inner multi-phase reductions (np.var of a vector): an R split's parts through colpart, per phase */
  RtHostKernelInfo rows = {.can_split_cols = true, .cols_are_rows = true};
  p = rt_host_plan(&rows, 1, 10000000, 2);
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == 256 && p.ochunks == 1 && p.ntasks == 1);
  p = rt_host_plan(&rows, 3, 1 << 20, 2);
  CHECK(p.strategy == RT_HOST_SPLIT_COLS && p.nparts == 32 && p.ntasks == 2);
  p = rt_host_plan(&rows, 4096, 1024, 2); /* many rows: ranges of O, never slabs of an inner axis */
  CHECK(p.strategy == RT_HOST_RANGES);
  p = rt_host_plan(&rows, 16, 65536, 2); /* 16 rows, 2 threads: ranges of O */
  CHECK(p.strategy == RT_HOST_RANGES);
  p = rt_host_plan(&rows, 1, 20000, 8); /* one part: serial */
  CHECK(p.strategy == RT_HOST_SERIAL);
}

int main(void) {
  test_host_plan();
  test_device_tables();
  test_host_streams();
  test_pool();
  test_pool_policy();
  test_cache();
  test_schedule_fake(1);
  test_schedule_fake(4);
  if (!getenv("LOOM_TEST_RUNTIME_UNIT_ONLY")) test_e2e();
  printf("%d passed, %d failed\n", n_passed, n_failed);
  return n_failed ? 1 : 0;
}
