/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c: a fixed pool of worker threads for the host backend.
 *
 * Approach: every rt_parallel_for call builds its own job record on the caller's stack and pushes it
 * on the pool's job list. Tasks are handed out by an atomic counter (dynamic distribution); the caller
 * takes tasks of its own job too. Workers sleep on a condition variable while no listed job has tasks
 * left (no busy spinning). A worker attaches to a job (refs++) under the pool lock before it claims
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
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

typedef struct RtJob {
  struct RtJob *next;
  void (*fn)(void *arg, int64_t task);
  void *arg;
  int64_t ntasks;
  _Atomic int64_t next_task;
  int refs; /* workers attached (pool lock) */
} RtJob;

struct RtPool {
  LoomContext *ctx;
  int nworkers;
  pthread_t *threads;
  pthread_mutex_t lock;
  pthread_cond_t work_cv; /* workers: a job was pushed, or shutdown */
  pthread_cond_t done_cv; /* callers: a worker detached from a job */
  RtJob *jobs;            /* listed jobs (pool lock) */
  bool shutdown;
};

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

static void *worker_main(void *arg) {
  RtPool *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    RtJob *j = NULL;
    while (!p->shutdown && (j = find_open_job(p)) == NULL) pthread_cond_wait(&p->work_cv, &p->lock);
    if (p->shutdown || !j) break;
    j->refs++;
    pthread_mutex_unlock(&p->lock);
    job_work(j);
    pthread_mutex_lock(&p->lock);
    if (--j->refs == 0) pthread_cond_broadcast(&p->done_cv);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

LoomStatus rt_pool_create(LoomContext *ctx, int nthreads, RtPool **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: rt_pool_create: out is NULL");
  *out = NULL;
  if (nthreads < 1) nthreads = 1;
  RtPool *p = ctx_calloc(ctx, 1, sizeof *p);
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: thread pool (%zu bytes)", sizeof *p);
  p->ctx = ctx;
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's mutex");
  }
  if (pthread_cond_init(&p->work_cv, NULL) != 0) {
    pthread_mutex_destroy(&p->lock);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's condition variable");
  }
  if (pthread_cond_init(&p->done_cv, NULL) != 0) {
    pthread_cond_destroy(&p->work_cv);
    pthread_mutex_destroy(&p->lock);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "could not create the thread pool's condition variable");
  }
  int want = nthreads - 1;
  if (want > 0) {
    p->threads = ctx_calloc(ctx, (size_t)want, sizeof *p->threads);
    /* No memory for the thread table: degrade to the caller alone rather than fail. */
    if (p->threads) {
      for (int i = 0; i < want; i++) {
        if (pthread_create(&p->threads[i], NULL, worker_main, p) != 0) break;
        p->nworkers++;
      }
    }
  }
  *out = p;
  return LOOM_OK;
}

void rt_pool_destroy(RtPool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->shutdown = true;
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->nworkers; i++) pthread_join(p->threads[i], NULL);
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->work_cv);
  pthread_mutex_destroy(&p->lock);
  LoomContext *ctx = p->ctx;
  ctx_free(ctx, p->threads);
  ctx_free(ctx, p);
}

int rt_pool_size(const RtPool *p) { return p ? p->nworkers + 1 : 1; }

void rt_parallel_for(RtPool *p, int64_t ntasks, void (*fn)(void *arg, int64_t task), void *arg) {
  if (ntasks <= 0 || !fn) return;
  if (!p || p->nworkers == 0 || ntasks == 1) {
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
  if (ntasks - 1 >= p->nworkers)
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
  while (job.refs > 0) pthread_cond_wait(&p->done_cv, &p->lock);
  pthread_mutex_unlock(&p->lock);
}
