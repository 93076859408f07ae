/* SPDX-License-Identifier: Apache-2.0 */
/* host_launch.c: the host dispatch of one kernel (host_launch.h), shared by libloom and libloomrt.
 *   elementwise (N points): on the caller when N < 32768 or one thread; else about 4 tasks per thread,
 *     each a contiguous range of at least 16384 points.
 *   reduction (no O points x nr R points): parallel over O ranges when no >= 2 * threads or the work
 *     is small (on the caller when no * nr < 65536); else, when the kernel can be split along R, R is
 *     cut into P = min(256, ceil(nr / 32768)) parts (P depends on nr only, never on the thread count,
 *     so a result has the same bits run after run), partial() runs for every (o, part) in parallel
 *     into an accumulator array, and finish() combines the parts of each o in order; else run over O.
 */
#include <stdint.h>
#include <string.h>

#include "runtime/host_launch.h"

/* a * b saturating at INT64_MAX (both non-negative). */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

enum {
  RT_ELEM_SERIAL_POINTS = 32768, /* below this an elementwise kernel runs on the caller */
  RT_ELEM_MIN_TASK = 16384,      /* points per task, at least */
  RT_TASKS_PER_THREAD = 4,
  RT_RED_SERIAL_WORK = 65536,    /* no * nr below this: one call on the caller */
  RT_RED_PART_POINTS = 32768,    /* R points per part when a reduction is split along R */
  RT_RED_MAX_PARTS = 256
};

/* The t-th of ntasks balanced contiguous ranges of [0, n). */
static void split_range(int64_t n, int64_t ntasks, int64_t t, int64_t *lo, int64_t *hi) {
  int64_t q = n / ntasks, r = n % ntasks;
  *lo = q * t + (t < r ? t : r);
  *hi = *lo + q + (t < r ? 1 : 0);
}

/* ---- kernel launch ----------------------------------------------------------------------------- */
typedef struct Launch {
  const CgCompiled *k;
  const int64_t *shape;
  void *const *bufs;
  const int64_t *strides;
  int64_t n;      /* points split among tasks (elementwise: all; reduction: O) */
  int64_t ntasks;
  int64_t nr;     /* R points */
  int64_t nparts; /* R parts (split reductions) */
  unsigned char *accs;
  size_t acc_size;
} Launch;

static void task_run(void *arg, int64_t t) {
  const Launch *L = arg;
  int64_t lo, hi;
  split_range(L->n, L->ntasks, t, &lo, &hi);
  if (lo < hi) L->k->run(L->shape, L->bufs, L->strides, lo, hi);
}

static void task_partial(void *arg, int64_t t) {
  const Launch *L = arg;
  int64_t o = t / L->nparts, part = t % L->nparts, rlo, rhi;
  split_range(L->nr, L->nparts, part, &rlo, &rhi);
  L->k->partial(L->shape, L->bufs, L->strides, o, rlo, rhi, L->accs + (size_t)t * L->acc_size);
}

static void task_finish(void *arg, int64_t t) {
  const Launch *L = arg;
  int64_t lo, hi;
  split_range(L->n, L->ntasks, t, &lo, &hi);
  for (int64_t o = lo; o < hi; o++)
    L->k->finish(L->shape, L->bufs, L->strides, o,
                 L->accs + (size_t)o * (size_t)L->nparts * L->acc_size, L->nparts);
}

/* Runs points [0, L->n) in `ntasks` contiguous ranges (on the caller when ntasks <= 1). */
static void launch_ranges(RtPool *pool, Launch *L, int64_t ntasks) {
  if (ntasks <= 1) {
    L->k->run(L->shape, L->bufs, L->strides, 0, L->n);
    return;
  }
  L->ntasks = ntasks;
  rt_parallel_for(pool, ntasks, task_run, L);
}

LoomStatus rt_host_launch(LoomContext *ctx, RtPool *pool, const CgCompiled *k, bool elementwise, const char *name,
                          const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t no, int64_t nr,
                          Diag *d) {
  int64_t threads = rt_pool_size(pool);
  Launch L = {.k = k, .shape = shape, .bufs = bufs, .strides = strides, .n = no, .ntasks = 1, .nr = nr};
  if (elementwise) { /* no is the whole space */
    int64_t ntasks = 1;
    if (no >= RT_ELEM_SERIAL_POINTS && threads > 1) {
      ntasks = threads * RT_TASKS_PER_THREAD;
      if (ntasks > no / RT_ELEM_MIN_TASK) ntasks = no / RT_ELEM_MIN_TASK;
    }
    launch_ranges(pool, &L, ntasks);
    return LOOM_OK;
  }
  int64_t work = sat_mul(no, nr > 0 ? nr : 1);
  int64_t nparts = nr / RT_RED_PART_POINTS + (nr % RT_RED_PART_POINTS != 0); /* no overflow near INT64_MAX */
  if (nparts > RT_RED_MAX_PARTS) nparts = RT_RED_MAX_PARTS;
  bool split = k->partial && k->finish && nparts > 1 && no < 2 * threads && work >= RT_RED_SERIAL_WORK;
  if (!split) {
    int64_t ntasks = 1;
    if (work >= RT_RED_SERIAL_WORK && threads > 1 && no > 1)
      ntasks = no < threads * RT_TASKS_PER_THREAD ? no : threads * RT_TASKS_PER_THREAD;
    launch_ranges(pool, &L, ntasks);
    return LOOM_OK;
  }
  if (k->acc_size <= 0)
    return diag_error(d, LOOM_ERR_INTERNAL,
                      "internal error: kernel %s can be split along R but has acc_size %d", name,
                      (int)k->acc_size);
  size_t acc_size = (size_t)k->acc_size;
  size_t total;
  if (__builtin_mul_overflow((size_t)no, (size_t)nparts, &total) ||
      __builtin_mul_overflow(total, acc_size, &total))
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: reduction accumulators overflow size_t");
  unsigned char *accs = ctx_alloc(ctx, total);
  if (!accs)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                      "out of memory: %zu bytes of reduction accumulators for kernel %s", total, name);
  L.accs = accs;
  L.acc_size = acc_size;
  L.nparts = nparts;
  rt_parallel_for(pool, no * nparts, task_partial, &L);
  int64_t ntasks = no < threads ? no : threads;
  L.ntasks = ntasks < 1 ? 1 : ntasks;
  rt_parallel_for(pool, L.ntasks, task_finish, &L);
  ctx_free(ctx, accs);
  return LOOM_OK;
}
