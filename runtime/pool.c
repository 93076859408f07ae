/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c: a fixed pool of worker threads for the host backend.
 *
 * Approach: every rt_parallel_for call builds its own job record on the caller's stack and pushes it
 * on the pool's job list. Tasks are handed out by an atomic counter (dynamic distribution); the caller
 * takes tasks of its own job too. Workers sleep on a condition variable while no listed job has tasks
 * left (after a bounded spin, below). A worker attaches to a job (refs++) under the pool lock before it claims
 * tasks and detaches after; the caller, once the counter is exhausted, unlinks its job (so nobody new
 * attaches) and waits for refs == 0. Every claimed task is then finished, and no worker touches the
 * record after the caller returns.
 *
 * Because each call has its own record, concurrent callers (several threads evaluating at once) and
 * nested calls (a task calling rt_parallel_for) are safe and cannot deadlock: a caller only ever waits
 * for workers that are running tasks of its own job.
 *
 * Creation never fails for lack of threads: if pthread_create fails, the pool keeps the workers it has
 * (possibly none; then every call runs on the caller).
 *
 * Waking a sleeping thread costs a futex round trip, ~10-30 us on a virtual machine: more than a split
 * reduction of a megabyte takes. So an idle worker first polls the pool's post counter for up to
 * LOOM_POOL_SPIN_US microseconds (default RT_POOL_SPIN_US) before it sleeps, and a caller whose tasks
 * are done polls its job's attached count as long before it sleeps on done_cv. Back-to-back launches
 * (a program's kernels, a benchmark's calls) then find a worker awake; an idle pool burns at most that
 * long a core after its last job. LOOM_POOL_SPIN_US=0: sleep at once.
 *
 * Workers run under SCHED_BATCH (Linux; LOOM_POOL_BATCH=0: the policy they inherit). A woken SCHED_OTHER
 * thread may preempt the task running on the core it is placed on, and when the other cores are busy
 * the scheduler places it on the caller's: the worker that rt_parallel_for wakes then takes the core
 * from the caller that is about to run tasks, and the caller waits behind it and the machine's other
 * work. Measured on a 2-vCPU VM under load (2026-12-04, sum of 4M float32, first call after other
 * work): the post-and-wake step of rt_parallel_for took 1.1-2.8 ms on average and the workers ran 85 %
 * of the tasks; with batch workers it took 12-130 us and the caller ran most tasks itself. A batch
 * thread never preempts on wake-up (it runs on an idle core at once, or at the next tick), so the
 * caller keeps its core; on an idle machine nothing changes. The caller's own policy is not touched.
 *
 * Resizing (rt_pool_resize, loom_set_num_threads) may happen while other threads evaluate: worker i
 * lives while i < target. Growing starts workers at the end of the table; shrinking lowers the target,
 * wakes everyone, and joins the workers past it once they have finished the tasks they claimed (jobs in
 * flight lose helpers, never tasks: their caller runs what is left). The table has room for
 * RT_POOL_MAX_THREADS - 1 workers from the start, so a worker's slot never moves.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* SCHED_BATCH */
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

typedef struct RtJob {
  struct RtJob *next;
  void (*fn)(void *arg, int64_t task);
  void *arg;
  int64_t ntasks;
  _Atomic int64_t next_task;
  _Atomic int refs; /* workers attached (changed under the pool lock; the caller polls it) */
} RtJob;

typedef struct RtWorker {
  struct RtPool *pool;
  int index;
  pthread_t thread;
} RtWorker;

struct RtPool {
  LoomContext *ctx;
  _Atomic int nworkers; /* workers started and not joined; rt_parallel_for reads it without the lock */
  int target;           /* worker i runs while i < target (pool lock) */
  RtWorker *workers;    /* RT_POOL_MAX_THREADS - 1 slots */
  pthread_mutex_t resize_lock; /* one resize at a time */
  pthread_mutex_t lock;
  pthread_cond_t work_cv; /* workers: a job was pushed, or shutdown */
  pthread_cond_t done_cv; /* callers: a worker detached from a job */
  RtJob *jobs;            /* listed jobs (pool lock) */
  bool shutdown;
  _Atomic uint64_t posted; /* jobs pushed so far: idle workers poll it before sleeping */
};

enum { RT_POOL_SPIN_US = 100 };

static int64_t spin_ns(void) {
  static _Atomic int64_t ns = -1;
  int64_t v = atomic_load_explicit(&ns, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("LOOM_POOL_SPIN_US");
    long us = e && *e ? strtol(e, NULL, 10) : RT_POOL_SPIN_US;
    if (us < 0) us = 0;
    if (us > 100000) us = 100000;
    v = (int64_t)us * 1000;
    atomic_store_explicit(&ns, v, memory_order_relaxed);
  }
  return v;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Polls until done(arg) or the spin time has passed; returns done(arg). */
static bool spin_until(bool (*done)(const void *arg), const void *arg) {
  int64_t limit = spin_ns();
  if (limit <= 0) return done(arg);
  int64_t end = now_ns() + limit;
  for (int i = 1;; i++) {
    if (done(arg)) return true;
    cpu_relax();
    if ((i & 63) == 0 && now_ns() > end) return done(arg);
  }
}

typedef struct PostWait {
  RtPool *p;
  uint64_t seen;
} PostWait;
static bool post_changed(const void *arg) {
  const PostWait *w = arg;
  return atomic_load_explicit(&w->p->posted, memory_order_acquire) != w->seen;
}
static bool job_detached(const void *arg) {
  return atomic_load_explicit(&((RtJob *)arg)->refs, memory_order_acquire) == 0;
}

/* Runs tasks of job j until its counter is exhausted. */
static void job_work(RtJob *j) {
  for (;;) {
    int64_t t = atomic_fetch_add_explicit(&j->next_task, 1, memory_order_relaxed);
    if (t >= j->ntasks) return;
    j->fn(j->arg, t);
  }
}

static RtJob *find_open_job(RtPool *p) {
  for (RtJob *j = p->jobs; j; j = j->next)
    if (atomic_load_explicit(&j->next_task, memory_order_relaxed) < j->ntasks) return j;
  return NULL;
}

/* LOOM_POOL_BATCH (default 1; read once): workers run under SCHED_BATCH, see the file's comment. */
static bool batch_workers(void) {
  static _Atomic int knob = -1;
  int v = atomic_load_explicit(&knob, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("LOOM_POOL_BATCH");
    v = e && *e ? strtol(e, NULL, 10) != 0 : 1;
    atomic_store_explicit(&knob, v, memory_order_relaxed);
  }
  return v != 0;
}

static void *worker_main(void *arg) {
  RtWorker *w = arg;
  RtPool *p = w->pool;
#ifdef SCHED_BATCH
  if (batch_workers()) { /* best effort: where it fails the worker keeps the policy it inherited */
    struct sched_param sp = {0};
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
  }
#endif
  pthread_mutex_lock(&p->lock);
  for (;;) {
    RtJob *j = NULL;
    while (!p->shutdown && w->index < p->target && (j = find_open_job(p)) == NULL) {
      PostWait pw = {p, atomic_load_explicit(&p->posted, memory_order_relaxed)}; /* under the lock */
      pthread_mutex_unlock(&p->lock);
      spin_until(post_changed, &pw);
      pthread_mutex_lock(&p->lock);
      /* a job pushed since `seen` is listed now (pushes happen under the lock), and a shutdown or resize
       * broadcast during the spin found no sleeper: look again; otherwise sleep, and the next push or
       * broadcast (under the lock, after this wait began) wakes it */
      if (post_changed(&pw) || p->shutdown || w->index >= p->target || find_open_job(p)) continue;
      pthread_cond_wait(&p->work_cv, &p->lock);
    }
    if (p->shutdown || w->index >= p->target || !j) break;
    j->refs++;
    pthread_mutex_unlock(&p->lock);
    job_work(j);
    pthread_mutex_lock(&p->lock);
    if (--j->refs == 0) pthread_cond_broadcast(&p->done_cv);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

/* Starts workers up to want (pool size nthreads - 1); returns how many run. Holds resize_lock. */
static int start_workers(RtPool *p, int want) {
  pthread_mutex_lock(&p->lock);
  p->target = want;
  pthread_mutex_unlock(&p->lock);
  int n = atomic_load(&p->nworkers);
  while (n < want) {
    RtWorker *w = &p->workers[n];
    w->pool = p;
    w->index = n;
    if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
    atomic_store(&p->nworkers, ++n);
  }
  pthread_mutex_lock(&p->lock);
  p->target = n;
  pthread_mutex_unlock(&p->lock);
  return n;
}

/* Stops the workers at index >= want and joins them. Holds resize_lock. */
static void stop_workers(RtPool *p, int want) {
  pthread_mutex_lock(&p->lock);
  p->target = want;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->lock);
  int n = atomic_load(&p->nworkers);
  for (int i = want; i < n; i++) pthread_join(p->workers[i].thread, NULL);
  if (want < n) atomic_store(&p->nworkers, want);
}

LoomStatus rt_pool_create(LoomContext *ctx, int nthreads, RtPool **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_pool_create: out is NULL");
  *out = NULL;
  if (nthreads < 1) nthreads = 1;
  if (nthreads > RT_POOL_MAX_THREADS) nthreads = RT_POOL_MAX_THREADS;
  RtPool *p = ctx_calloc(ctx, 1, sizeof *p);
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: thread pool (%zu bytes)", sizeof *p);
  p->ctx = ctx;
  atomic_init(&p->nworkers, 0);
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's mutex");
  }
  if (pthread_mutex_init(&p->resize_lock, NULL) != 0) {
    pthread_mutex_destroy(&p->lock);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's mutex");
  }
  if (pthread_cond_init(&p->work_cv, NULL) != 0) {
    pthread_mutex_destroy(&p->resize_lock);
    pthread_mutex_destroy(&p->lock);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's condition variable");
  }
  if (pthread_cond_init(&p->done_cv, NULL) != 0) {
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->resize_lock);
    pthread_mutex_destroy(&p->lock);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's condition variable");
  }
  /* No memory for the worker table: degrade to the caller alone rather than fail. */
  p->workers = ctx_calloc(ctx, RT_POOL_MAX_THREADS - 1, sizeof *p->workers);
  if (p->workers) {
    pthread_mutex_lock(&p->resize_lock);
    start_workers(p, nthreads - 1);
    pthread_mutex_unlock(&p->resize_lock);
  }
  *out = p;
  return LOOM_OK;
}

LoomStatus rt_pool_resize(RtPool *p, int nthreads, Diag *d) {
  if (!p) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_pool_resize: no pool");
  if (nthreads < 1 || nthreads > RT_POOL_MAX_THREADS)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "the thread count must be between 1 and %d, not %d",
                      RT_POOL_MAX_THREADS, nthreads);
  if (!p->workers)
    return nthreads == 1 ? LOOM_OK
                         : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "the thread pool has no worker table (out of memory "
                                                                 "when the context was made): it runs on the caller alone");
  pthread_mutex_lock(&p->resize_lock);
  int want = nthreads - 1, have = atomic_load(&p->nworkers);
  LoomStatus st = LOOM_OK;
  if (want < have) {
    stop_workers(p, want);
  } else if (want > have) {
    int got = start_workers(p, want);
    if (got < want)
      st = diag_error(d, LOOM_ERR_BACKEND, "could start only %d of the %d threads asked for (pthread_create failed); "
                      "the pool has %d", got + 1, nthreads, got + 1);
  }
  pthread_mutex_unlock(&p->resize_lock);
  return st;
}

void rt_pool_destroy(RtPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->shutdown = true;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->lock);
  int n = atomic_load(&p->nworkers);
  for (int i = 0; i < n; i++) pthread_join(p->workers[i].thread, NULL);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->work_cv);
  pthread_mutex_destroy(&p->resize_lock);
  pthread_mutex_destroy(&p->lock);
  LoomContext *ctx = p->ctx;
  ctx_free(ctx, p->workers);
  ctx_free(ctx, p);
}

int rt_pool_size(const RtPool *p) { return p ? atomic_load(&((RtPool *)p)->nworkers) + 1 : 1; }

void rt_parallel_for(RtPool *p, int64_t ntasks, void (*fn)(void *arg, int64_t task), void *arg) {
  if (ntasks <= 0 || !fn) return;
  int nworkers = p ? atomic_load_explicit(&p->nworkers, memory_order_relaxed) : 0;
  if (nworkers == 0 || ntasks == 1) {
    for (int64_t t = 0; t < ntasks; t++) fn(arg, t);
    return;
  }
  RtJob job;
  memset(&job, 0, sizeof job);
  job.fn = fn;
  job.arg = arg;
  job.ntasks = ntasks;
  atomic_init(&job.next_task, 0);

  pthread_mutex_lock(&p->lock);
  job.next = p->jobs;
  p->jobs = &job;
  atomic_fetch_add_explicit(&p->posted, 1, memory_order_release);
  if (ntasks - 1 >= nworkers)
    pthread_cond_broadcast(&p->work_cv);
  else
    for (int64_t i = 0; i < ntasks - 1; i++) pthread_cond_signal(&p->work_cv);
  pthread_mutex_unlock(&p->lock);

  job_work(&job);

  pthread_mutex_lock(&p->lock);
  for (RtJob **pp = &p->jobs; *pp; pp = &(*pp)->next) {
    if (*pp == &job) {
      *pp = job.next;
      break;
    }
  }
  if (atomic_load_explicit(&job.refs, memory_order_relaxed) > 0) { /* workers finish their last tasks */
    pthread_mutex_unlock(&p->lock);
    spin_until(job_detached, &job);
    pthread_mutex_lock(&p->lock);
  }
  while (job.refs > 0) pthread_cond_wait(&p->done_cv, &p->lock);
  pthread_mutex_unlock(&p->lock);
}
