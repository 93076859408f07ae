/* SPDX-License-Identifier: Apache-2.0 */
/* host_launch.c: the host dispatch of one kernel (host_launch.h), shared by libloom and libloomrt, so a
 * bundled kernel is cut exactly as a JIT-compiled one and gives the same bits.
 *
 * The plan (rt_host_plan), from the sizes (and, for the number of tasks only, the thread count):
 *   elementwise (N points): on the caller when N < RT_ELEM_SERIAL_POINTS or one thread; else about
 *     RT_TASKS_PER_THREAD tasks per thread, each a contiguous range of at least RT_ELEM_MIN_TASK points.
 *   reduction, no O points x nr R points (work = no * nr):
 *     - work < RT_RED_SERIAL_WORK: one call on the caller;
 *     - column split (the kernel has colpart/colfinish: the reduced axis is outer in memory) when the
 *       rows are narrow, no <= RT_COL_SPLIT_MAX_O: R is cut into P slabs of
 *       max(RT_COL_MIN_ROWS, RT_COL_PART_POINTS / no) rows (P <= RT_RED_MAX_PARTS), or, where that gives
 *       fewer than RT_COL_MIN_PARTS slabs, into up to RT_COL_MIN_PARTS slabs of at least
 *       max(RT_COL_MIN_ROWS, RT_COL_MIN_PART_POINTS / no) rows. A slab costs more than its rows (the
 *       colpart setup and its compensated pairs, a part record written and combined, a new stream): with
 *       slabs of 65536 points (64 rows of 1024 float32) one thread's column sum of 4096 x 1024 from memory
 *       took 1.2x NumPy's single pass, with 256-1024 rows it matched it (2026-12-04); for each REDUCE
 *       phase in order, each task streams one slab through every column (whole cache lines, one pass),
 *       then the parts are combined in order per column (colfinish, which also runs the FINAL phases
 *       that follow). Cutting O instead gives each task a few columns of every row: 16 float32 columns
 *       over 8 tasks read 8 bytes of each 64-byte line per task, ~8x the traffic; and for rows of a
 *       page (1024 float32 columns) a 512-byte piece of every row, a new page per step, which the
 *       prefetchers do not follow (a slab streams whole rows). Up to 4096 columns the parts array
 *       (P x no accumulators, <= 8 MiB for float32) stays small beside the slab reads;
 *     - R split of an inner reduction with several REDUCE phases (colpart/colfinish with CG_COL_ROWS:
 *       np.var, statistics over a last axis) when no < 2 * threads: P as the R split's below, each phase
 *       in turn as the column split runs them (parts in parallel, then colfinish);
 *     - R split (the kernel has partial/finish) when no < 2 * threads: P = min(RT_RED_MAX_PARTS,
 *       ceil(nr / RT_RED_PART_POINTS)) parts, partial() per (o, part) in parallel into an accumulator
 *       array, finish() combines each o's parts in order;
 *     - else contiguous ranges of O, up to RT_TASKS_PER_THREAD per thread.
 * A kernel that picks its walk by strides (CG_COL_BY_STRIDES, codegen/codegen.h: x[:, ::2].mean(0))
 * can split columns only where its colpart's query says the strides pick the outer walk (rt_host_kernel_plan);
 * elsewhere it is planned as a kernel without the column split.
 * P depends on the sizes only, never on the thread count, so a result has the same bits run after run
 * on every machine (which of the strategies runs may depend on the threads: R split).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/host_launch.h"

enum {
  RT_ELEM_SERIAL_POINTS = 32768, /* below this an elementwise kernel runs on the caller */
  RT_ELEM_MIN_TASK = 16384,      /* points per task, at least */
  RT_TASKS_PER_THREAD = 4,
  RT_RED_SERIAL_WORK = 65536,    /* no * nr below this: one call on the caller */
  RT_RED_PART_POINTS = 32768,    /* R points per part when a reduction is split along R */
  RT_RED_MAX_PARTS = 256,
  RT_COL_SPLIT_MAX_O = 4096,     /* column split for at most this many O points */
  RT_COL_PART_POINTS = 131072,   /* points per slab of the column split (LOOM_HOST_COL_SLAB_POINTS) */
  RT_COL_MIN_PART_POINTS = 65536, /* points per slab, at least, where slabs are shrunk for RT_COL_MIN_PARTS */
  RT_COL_MIN_PARTS = 16,         /* slabs wanted at least (smaller ones, down to RT_COL_MIN_PART_POINTS) */
  RT_COL_MIN_ROWS = 64           /* rows per slab, at least */
};

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* LOOM_HOST_COL_SLAB_POINTS: points per slab of the column split (read once; 65536 gives the plan of
 * 2026-12-04 before session 21, 64 slabs of 4096 x 1024). Values below RT_COL_MIN_PART_POINTS are raised
 * to it. The same in libloom and libloomrt, so a bundled kernel is still cut as a JIT-compiled one. */
static int64_t col_slab_points(void) {
  static _Atomic int64_t knob = -1;
  int64_t v = atomic_load_explicit(&knob, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("LOOM_HOST_COL_SLAB_POINTS");
    long long n = e && *e ? strtoll(e, NULL, 10) : RT_COL_PART_POINTS;
    if (n < RT_COL_MIN_PART_POINTS) n = RT_COL_MIN_PART_POINTS;
    if (n > (1ll << 30)) n = 1ll << 30;
    v = (int64_t)n;
    atomic_store_explicit(&knob, v, memory_order_relaxed);
  }
  return v;
}

/* Slabs of the column split of nr rows of no columns (before the RT_RED_MAX_PARTS cap). */
static int64_t col_slabs(int64_t no, int64_t nr) {
  int64_t rows = cdiv(col_slab_points(), no);
  if (rows < RT_COL_MIN_ROWS) rows = RT_COL_MIN_ROWS;
  int64_t parts = cdiv(nr, rows);
  if (parts < RT_COL_MIN_PARTS) { /* small inputs: more, smaller slabs (never below the floor) */
    int64_t min_rows = cdiv(RT_COL_MIN_PART_POINTS, no);
    if (min_rows < RT_COL_MIN_ROWS) min_rows = RT_COL_MIN_ROWS;
    int64_t more = cdiv(nr, min_rows);
    parts = more < RT_COL_MIN_PARTS ? more : RT_COL_MIN_PARTS;
  }
  return parts;
}

/* a * b saturating at INT64_MAX (both non-negative). */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
}


/* ---- the plan ------------------------------------------------------------------------------------ */
RtHostPlan rt_host_plan(const RtHostKernelInfo *k, int64_t no, int64_t nr, int64_t threads) {
  RtHostPlan p = {.strategy = RT_HOST_SERIAL, .ntasks = 1, .nparts = 1, .ochunks = 1};
  if (threads < 1) threads = 1;
  if (k->elementwise) { /* no is the whole space */
    if (no >= RT_ELEM_SERIAL_POINTS && threads > 1) {
      int64_t n = threads * RT_TASKS_PER_THREAD;
      if (n > no / RT_ELEM_MIN_TASK) n = no / RT_ELEM_MIN_TASK;
      if (n > 1) p.strategy = RT_HOST_RANGES, p.ntasks = n;
    }
    return p;
  }
  int64_t work = sat_mul(no, nr > 0 ? nr : 1);
  if (work < RT_RED_SERIAL_WORK || nr <= 0) return p;
  if (k->can_split_cols && k->cols_are_rows) { /* inner multi-phase: an R split's plan (colpart per phase) */
    int64_t parts = cdiv(nr, RT_RED_PART_POINTS);
    if (parts > RT_RED_MAX_PARTS) parts = RT_RED_MAX_PARTS;
    if (parts > 1 && no < 2 * threads) {
      p.strategy = RT_HOST_SPLIT_COLS;
      p.nparts = parts;
      p.ochunks = 1;
      p.ntasks = no < threads ? (no > 0 ? no : 1) : threads;
      return p;
    }
  } else if (k->can_split_cols && no <= RT_COL_SPLIT_MAX_O) {
    int64_t parts = col_slabs(no, nr);
    if (parts > RT_RED_MAX_PARTS) parts = RT_RED_MAX_PARTS;
    if (parts >= 2) {
      p.strategy = RT_HOST_SPLIT_COLS;
      p.nparts = parts;
      p.ochunks = 1;
      p.ntasks = no < threads ? (no > 0 ? no : 1) : threads; /* colfinish: O ranges */
      return p;
    }
  }
  int64_t nparts = cdiv(nr, RT_RED_PART_POINTS);
  if (nparts > RT_RED_MAX_PARTS) nparts = RT_RED_MAX_PARTS;
  if (k->can_split && nparts > 1 && no < 2 * threads) {
    p.strategy = RT_HOST_SPLIT_R;
    p.nparts = nparts;
    p.ntasks = no < threads ? no : threads; /* finish: O ranges */
    return p;
  }
  if (threads > 1 && no > 1) {
    p.strategy = RT_HOST_RANGES;
    p.ntasks = no < threads * RT_TASKS_PER_THREAD ? no : threads * RT_TASKS_PER_THREAD;
  }
  return p;
}

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
  int64_t ochunks; /* column split: O ranges per part */
  CgColSplit col;  /* column split: the arguments shared by every task */
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

static void task_colpart(void *arg, int64_t t) {
  const Launch *L = arg;
  CgColSplit a = L->col;
  a.part = t / L->ochunks;
  split_range(L->nr, L->nparts, a.part, &a.rlo, &a.rhi);
  split_range(L->n, L->ochunks, t % L->ochunks, &a.olo, &a.ohi);
  if (a.olo < a.ohi) L->k->colpart(L->shape, L->bufs, L->strides, &a);
}

static void task_colfinish(void *arg, int64_t t) {
  const Launch *L = arg;
  CgColSplit a = L->col;
  split_range(L->n, L->ntasks, t, &a.olo, &a.ohi);
  if (a.olo < a.ohi) L->k->colfinish(L->shape, L->bufs, L->strides, &a);
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

/* count accumulators of k->acc_size bytes, or an error naming the kernel. */
static LoomStatus alloc_accs(LoomContext *ctx, const CgCompiled *k, const char *name, int64_t count,
                             unsigned char **out, Diag *d) {
  size_t total;
  *out = NULL;
  if (k->acc_size <= 0)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s can be split but has acc_size %d", name,
                      (int)k->acc_size);
  if (count < 0 || __builtin_mul_overflow((size_t)count, (size_t)k->acc_size, &total))
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: reduction accumulators overflow size_t");
  *out = ctx_alloc(ctx, total ? total : 1);
  if (!*out)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes of reduction accumulators for kernel %s",
                      total, name);
  return LOOM_OK;
}

/* Whether the column split suits these strides: always, unless the kernel walks by strides
 * (CG_COL_BY_STRIDES), whose colpart then answers the query of codegen.h (CG_COL_BY_STRIDES). */
static bool cols_suit_strides(const CgCompiled *k, const int64_t *shape, void *const *bufs, const int64_t *strides) {
  if ((k->col_phases & CG_COL_ROWS) || !(k->col_phases & CG_COL_BY_STRIDES)) return true;
  int64_t outer = 0;
  CgColSplit query = {.nparts = 0, .parts = &outer};
  k->colpart(shape, bufs, strides, &query);
  return outer != 0;
}

RtHostPlan rt_host_kernel_plan(const CgCompiled *k, bool elementwise, const int64_t *shape, void *const *bufs,
                               const int64_t *strides, int64_t no, int64_t nr, int64_t threads) {
  bool cols = k->colpart && k->colfinish && cg_col_phase_bits(k->col_phases) != 0;
  if (cols && !elementwise && nr > 0) cols = cols_suit_strides(k, shape, bufs, strides);
  RtHostKernelInfo info = {.elementwise = elementwise, .can_split = k->partial && k->finish, .can_split_cols = cols,
                           .cols_are_rows = (k->col_phases & CG_COL_ROWS) != 0};
  return rt_host_plan(&info, no, nr, threads);
}

LoomStatus rt_host_launch(LoomContext *ctx, RtPool *pool, const CgCompiled *k, bool elementwise, const char *name,
                          const int64_t *shape, void *const *bufs, const int64_t *strides, int64_t no, int64_t nr,
                          Diag *d) {
  RtHostPlan plan = rt_host_kernel_plan(k, elementwise, shape, bufs, strides, no, nr, rt_pool_size(pool));
  Launch L = {.k = k, .shape = shape, .bufs = bufs, .strides = strides, .n = no, .ntasks = 1, .nr = nr};
  if (plan.strategy == RT_HOST_SERIAL || plan.strategy == RT_HOST_RANGES) {
    launch_ranges(pool, &L, plan.strategy == RT_HOST_SERIAL ? 1 : plan.ntasks);
    return LOOM_OK;
  }
  L.acc_size = (size_t)k->acc_size;
  L.nparts = plan.nparts;
  L.ntasks = plan.ntasks < 1 ? 1 : plan.ntasks;
  if (plan.strategy == RT_HOST_SPLIT_R) {
    LoomStatus st = alloc_accs(ctx, k, name, sat_mul(no, plan.nparts), &L.accs, d);
    if (st != LOOM_OK) return st;
    rt_parallel_for(pool, no * plan.nparts, task_partial, &L);
    rt_parallel_for(pool, L.ntasks, task_finish, &L);
    ctx_free(ctx, L.accs);
    return LOOM_OK;
  }
  /* column split: for each REDUCE phase in order, the parts in parallel, then their combination into
   * the finished accumulators (phase-major, up to the last REDUCE phase) that later phases read; a MAP
   * phase's colpart maps each slab (its colfinish does nothing) */
  uint32_t phases = cg_col_phase_bits(k->col_phases);
  int nfin = 32 - __builtin_clz(phases);
  unsigned char *parts = NULL, *fin = NULL;
  LoomStatus st = alloc_accs(ctx, k, name, sat_mul(no, plan.nparts), &parts, d);
  if (st == LOOM_OK) st = alloc_accs(ctx, k, name, sat_mul(no, nfin), &fin, d);
  if (st == LOOM_OK) {
    L.ochunks = plan.ochunks < 1 ? 1 : plan.ochunks;
    L.col = (CgColSplit){.nparts = plan.nparts, .parts = parts, .fin = fin, .no = no};
    for (int p = 0; p < nfin; p++) {
      if (!(phases >> p & 1u)) continue;
      L.col.phase = p;
      rt_parallel_for(pool, plan.nparts * L.ochunks, task_colpart, &L);
      rt_parallel_for(pool, L.ntasks, task_colfinish, &L);
    }
  }
  ctx_free(ctx, parts);
  ctx_free(ctx, fin);
  return st;
}
