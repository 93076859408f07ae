/* host_plan.c: the cost model of host launches: how a kernel's points are cut into tasks, from the
 * sizes (and, for the number of tasks only, the thread count). One place, so every host strategy
 * choice can be read and tested here (test_runtime checks the plans of many sizes).
 *
 *   elementwise (N points): on the caller when N < RT_ELEM_SERIAL_POINTS or one thread; else about
 *     RT_TASKS_PER_THREAD tasks per thread, each a contiguous range of at least RT_ELEM_MIN_TASK points.
 *   reduction, no O points x nr R points (work = no * nr):
 *     - work < RT_RED_SERIAL_WORK: one call on the caller;
 *     - column split (the kernel has colpart/colfinish: the reduced axis is outer in memory) when the
 *       rows are narrow, no <= RT_COL_SPLIT_MAX_O: R is cut into P slabs of at least
 *       max(RT_COL_MIN_ROWS, RT_COL_PART_POINTS / no) rows (P <= RT_RED_MAX_PARTS); each task streams
 *       one slab through every column (whole cache lines, one pass), then the parts are combined in
 *       order. Cutting O instead gives each task a few columns of every row: 16 float32 columns over
 *       8 tasks read 8 bytes of each 64-byte line per task, ~8x the traffic;
 *     - R split (the kernel has partial/finish) when no < 2 * threads: P = min(RT_RED_MAX_PARTS,
 *       ceil(nr / RT_RED_PART_POINTS)) parts, partial() per (o, part), finish() per o;
 *     - else contiguous ranges of O, up to RT_TASKS_PER_THREAD per thread.
 * P depends on the sizes only, never on the thread count, so a result has the same bits run after
 * run on every machine (which of the strategies runs may depend on the threads: R split).
 */
#include "runtime/runtime.h"

enum {
  RT_ELEM_SERIAL_POINTS = 32768, /* below this an elementwise kernel runs on the caller */
  RT_ELEM_MIN_TASK = 16384,      /* points per task, at least */
  RT_TASKS_PER_THREAD = 4,
  RT_RED_SERIAL_WORK = 65536,    /* no * nr below this: one call on the caller */
  RT_RED_PART_POINTS = 32768,    /* R points per part when a reduction is split along R */
  RT_RED_MAX_PARTS = 256,
  RT_COL_SPLIT_MAX_O = 256,      /* column split for at most this many O points (narrow rows) */
  RT_COL_PART_POINTS = 65536,    /* points per slab of the column split, at least */
  RT_COL_MIN_ROWS = 64           /* rows per slab, at least */
};

static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

static int64_t cdiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

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
  if (k->can_split_cols && no <= RT_COL_SPLIT_MAX_O) {
    int64_t rows = cdiv(RT_COL_PART_POINTS, no);
    if (rows < RT_COL_MIN_ROWS) rows = RT_COL_MIN_ROWS;
    int64_t parts = cdiv(nr, rows);
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
