/* SPDX-License-Identifier: Apache-2.0 */
/* eval.c: loom_eval, loom_dump and the host schedule runner.
 *
 * loom_eval: check the arguments at the boundary; allocate the outputs the caller left empty
 * (C-contiguous, the context's allocator); for a given output whose bytes overlap an input or another
 * given output, evaluate into a fresh contiguous temporary and copy it into the given array at the end
 * (compiled kernels treat their buffers as noalias). Then one Arena + IrModule per call:
 * pass_run_pipeline -> Schedule -> rt_run_schedule. Everything allocated here is freed on every path,
 * and on failure the caller's descriptors are left as they were.
 *
 * rt_run_schedule: temporaries from ctx_alloc; for each kernel a pinned entry of the kernel cache,
 * base pointers (binding offset applied) and buffer-major strides, then one of these dispatches:
 *   elementwise (N points): on the caller when N < 32768 or one thread; else about 4 tasks per thread,
 *     each a contiguous range of at least 16384 points.
 *   reduction (no O points x nr R points): parallel over O ranges when no >= 2 * threads or the work
 *     is small (on the caller when no * nr < 65536); else, when the kernel can be split along R, R is
 *     cut into P = min(256, ceil(nr / 32768)) parts (P depends on nr only, never on the thread count,
 *     so a result has the same bits run after run), partial() runs for every (o, part) in parallel
 *     into an accumulator array, and finish() combines the parts of each o in order; else run over O.
 * Kernels with an empty space are skipped, except a reduction with non-empty O and empty R, which must
 * still write its identities.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

enum {
  RT_ELEM_SERIAL_POINTS = 32768, /* below this an elementwise kernel runs on the caller */
  RT_ELEM_MIN_TASK = 16384,      /* points per task, at least */
  RT_TASKS_PER_THREAD = 4,
  RT_RED_SERIAL_WORK = 65536,    /* no * nr below this: one call on the caller */
  RT_RED_PART_POINTS = 32768,    /* R points per part when a reduction is split along R */
  RT_RED_MAX_PARTS = 256
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static size_t itemsize_of(LoomDType t) { return (size_t)dtype_bits(t) / 8; }

static const char *dtype_label(LoomDType t) {
  const char *s = loom_dtype_name(t);
  return s ? s : "(invalid dtype)";
}

/* "(2,3)" or "()" into buf. */
static const char *shape_str(char *buf, size_t cap, int ndim, const int64_t *shape) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, cap - n, "(");
  for (int i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (ndim == 1 && n < cap) n += (size_t)snprintf(buf + n, cap - n, ",");
  if (n < cap) snprintf(buf + n, cap - n, ")");
  return buf;
}

/* a * b saturating at INT64_MAX (both non-negative). */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
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

static LoomStatus launch_kernel(LoomContext *ctx, const KernelIr *ir, const CgCompiled *k,
                                const int64_t *shape, void *const *bufs, const int64_t *strides,
                                int64_t no, int64_t nr, Diag *d) {
  RtPool *pool = ctx->rt->pool;
  int64_t threads = rt_pool_size(pool);
  Launch L = {.k = k, .shape = shape, .bufs = bufs, .strides = strides, .n = no, .ntasks = 1, .nr = nr};
  if (ir->nkeep == ir->ndim) { /* elementwise: no is the whole space */
    int64_t ntasks = 1;
    if (no >= RT_ELEM_SERIAL_POINTS && threads > 1) {
      ntasks = threads * RT_TASKS_PER_THREAD;
      if (ntasks > no / RT_ELEM_MIN_TASK) ntasks = no / RT_ELEM_MIN_TASK;
    }
    launch_ranges(pool, &L, ntasks);
    return LOOM_OK;
  }
  int64_t work = sat_mul(no, nr > 0 ? nr : 1);
  int64_t nparts = (nr + RT_RED_PART_POINTS - 1) / RT_RED_PART_POINTS;
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
                      "internal error: kernel %s can be split along R but has acc_size %d", ir->name,
                      (int)k->acc_size);
  size_t acc_size = (size_t)k->acc_size;
  size_t total;
  if (__builtin_mul_overflow((size_t)no, (size_t)nparts, &total) ||
      __builtin_mul_overflow(total, acc_size, &total))
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: reduction accumulators overflow size_t");
  unsigned char *accs = ctx_alloc(ctx, total);
  if (!accs)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY,
                      "out of memory: %zu bytes of reduction accumulators for kernel %s", total, ir->name);
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

/* ---- schedule runner ----------------------------------------------------------------------------- */
static LoomStatus run_schedule(LoomContext *ctx, const IrGraph *g, const Schedule *s,
                               const CgCompiled *const *pinned, void *const *out_data, int32_t nouts,
                               uint64_t extra_temp_bytes, Diag *d) {
  if (!ctx || !ctx->rt || !ctx->rt->cache)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "the context has no runtime: create it with loom_context_create");
  if (!s) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the pipeline produced no schedule");
  RtState *rt = ctx->rt;
  LoomStatus st = LOOM_OK;
  void **temps = NULL;
  uint64_t temp_bytes = extra_temp_bytes, launched = 0;
  bool want_ir = (ctx->dump_flags & IR_DUMP_LLVM) != 0;

  if (s->ntemp < 0 || s->nkernel < 0 || (s->ntemp > 0 && !s->temps) || (s->nkernel > 0 && !s->kernels))
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: malformed schedule");
  if (s->ntemp > 0) {
    temps = ctx_calloc(ctx, (size_t)s->ntemp, sizeof *temps);
    if (!temps) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: temporary table");
    for (int32_t i = 0; i < s->ntemp; i++) {
      size_t isz = itemsize_of((LoomDType)s->temps[i].dtype), bytes;
      if (s->temps[i].nelem < 0 ||
          __builtin_mul_overflow((size_t)s->temps[i].nelem, isz, &bytes)) {
        st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: temporary %d is too large", i);
        goto done;
      }
      temps[i] = rt_host_alloc(rt->host_pool, bytes);
      if (!temps[i]) {
        st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: temporary %d of %zu bytes", i, bytes);
        goto done;
      }
      temp_bytes += bytes;
    }
  }

  for (int32_t ki = 0; ki < s->nkernel; ki++) {
    const SchedKernel *sk = &s->kernels[ki];
    const KernelIr *ir = sk->ir;
    if (!ir || ir->ndim < 1 || ir->ndim > LOOM_MAX_RANK || ir->nkeep < 0 || ir->nkeep > ir->ndim ||
        ir->nbuf < 0 || (ir->nbuf > 0 && (!ir->bufs || !sk->bind))) {
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: malformed kernel %d in the schedule", ki);
      goto done;
    }
    int64_t no = 1, nr = 1;
    for (int32_t i = 0; i < ir->ndim; i++) {
      if (sk->shape[i] < 0) {
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s has a negative size", ir->name);
        goto done;
      }
      if (i < ir->nkeep) no = sat_mul(no, sk->shape[i]);
      else nr = sat_mul(nr, sk->shape[i]);
    }
    if (no == 0 || (ir->nkeep == ir->ndim && nr == 0)) continue; /* nothing to write */

    size_t nbuf = (size_t)(ir->nbuf > 0 ? ir->nbuf : 1);
    /* Kernel arguments: on the stack when they fit (the common case), else from the allocator. */
    size_t args_bytes = nbuf * (sizeof(void *) + (size_t)ir->ndim * sizeof(int64_t));
    void *args_stack[512];
    void **bufs = args_bytes <= sizeof args_stack ? args_stack : ctx_alloc(ctx, args_bytes);
    if (!bufs) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: arguments of kernel %s", ir->name);
      goto done;
    }
    int64_t *strides = (int64_t *)(void *)(bufs + nbuf);
    bufs[0] = NULL;
    for (int32_t b = 0; b < ir->nbuf; b++) {
      const SchedBinding *bd = &sk->bind[b];
      void *base = NULL;
      if (bd->kind == SB_INPUT && bd->index >= 0 && bd->index < g->ninputs) base = g->inputs[bd->index].data;
      else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = out_data[bd->index];
      else {
        if (bufs != args_stack) ctx_free(ctx, bufs);
        st = diag_error(d, LOOM_ERR_INTERNAL,
                        "internal error: kernel %s binds buffer %d to a missing array (kind %d index %d)",
                        ir->name, b, bd->kind, bd->index);
        goto done;
      }
      size_t isz = itemsize_of((LoomDType)ir->bufs[b].dtype);
      /* offset may be negative (negative strides): pointer arithmetic stays within the array. */
      bufs[b] = base ? (char *)base + bd->offset * (int64_t)isz : NULL;
      for (int32_t i = 0; i < ir->ndim; i++) strides[(size_t)b * (size_t)ir->ndim + (size_t)i] = bd->strides[i];
    }

    const CgCompiled *k = pinned ? pinned[ki] : NULL;
    if (!k) {
      st = rt_cache_acquire(rt->cache, ir, want_ir, &k, NULL, d);
      if (st != LOOM_OK) {
        if (bufs != args_stack) ctx_free(ctx, bufs);
        goto done;
      }
    }
    if (want_ir && k->llvm_ir) fprintf(stderr, "; ---- LLVM IR of kernel %s ----\n%s\n", ir->name, k->llvm_ir);
    st = launch_kernel(ctx, ir, k, sk->shape, bufs, strides, no, nr, d);
    if (!pinned) rt_cache_release(rt->cache, k);
    if (bufs != args_stack) ctx_free(ctx, bufs);
    if (st != LOOM_OK) goto done;
    launched++;
  }

done:
  if (temps) {
    for (int32_t i = 0; i < s->ntemp; i++)
      if (temps[i])
        rt_host_free(rt->host_pool, temps[i],
                     (size_t)s->temps[i].nelem * itemsize_of((LoomDType)s->temps[i].dtype));
    ctx_free(ctx, temps);
  }
  pthread_mutex_lock(&rt->stats_lock);
  rt->stats.kernels_launched += launched;
  rt->stats.last_eval_kernels = launched;
  if (temp_bytes > rt->stats.temp_bytes_peak) rt->stats.temp_bytes_peak = temp_bytes;
  pthread_mutex_unlock(&rt->stats_lock);
  return st;
}

LoomStatus rt_run_schedule_pinned(LoomContext *ctx, const IrGraph *g, const Schedule *s,
                                  const CgCompiled *const *pinned, void *const *out_data, int32_t nouts,
                                  Diag *d) {
  return run_schedule(ctx, g, s, pinned, out_data, nouts, 0, d);
}

LoomStatus rt_run_schedule(LoomContext *ctx, const IrGraph *g, const Schedule *s,
                           void *const *out_data, Diag *d) {
  /* Without the output count, trust the schedule's indices (the pipeline made them from the roots). */
  return run_schedule(ctx, g, s, NULL, out_data, INT32_MAX, 0, d);
}

/* ---- argument checks and output arrays ------------------------------------------------------------ */
static LoomStatus check_nodes(const LoomGraph *g, int32_t n, const LoomNode *nodes, const char *fn,
                              Diag *d) {
  if (n < 1) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: n is %d; pass at least one node", fn, n);
  if (!nodes) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: nodes is NULL", fn);
  for (int32_t i = 0; i < n; i++)
    if (nodes[i] < 0 || nodes[i] >= g->ir.nnodes)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "%s: nodes[%d] = %d is not a node of this graph (it has %d nodes)", fn, i,
                        nodes[i], g->ir.nnodes);
  return LOOM_OK;
}

static void describe_contiguous(LoomArray *a, const IrNode *nd, void *data) {
  memset(a, 0, sizeof *a);
  a->data = data;
  a->dtype = (LoomDType)nd->dtype;
  a->ndim = nd->ndim;
  int64_t stride = 1;
  for (int i = nd->ndim - 1; i >= 0; i--) {
    a->shape[i] = nd->shape[i];
    a->strides[i] = stride;
    stride *= nd->shape[i] > 1 ? nd->shape[i] : 1;
  }
  a->device = LOOM_DEVICE_HOST;
  a->device_index = 0;
}

/* Byte extent [lo, hi) of an array's elements, relative to address 0; false when it has no
 * elements. Computed in 128 bits so that no stride, however large, can wrap around. */
static bool byte_extent(const LoomArray *a, __int128 *lo, __int128 *hi) {
  if (!a->data || a->ndim < 0 || a->ndim > LOOM_MAX_RANK) return false;
  __int128 mn = 0, mx = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] <= 0) return false;
    __int128 span = (__int128)(a->shape[i] - 1) * a->strides[i];
    if (span < 0) mn += span; else mx += span;
  }
  __int128 isz = (__int128)itemsize_of(a->dtype);
  if (isz <= 0) isz = 1;
  __int128 base = (__int128)(uintptr_t)a->data;
  *lo = base + mn * isz;
  *hi = base + (mx + 1) * isz;
  return true;
}

static bool overlaps(const LoomArray *a, const LoomArray *b) {
  __int128 alo, ahi, blo, bhi;
  if (!byte_extent(a, &alo, &ahi) || !byte_extent(b, &blo, &bhi)) return false;
  return alo < bhi && blo < ahi;
}

/* Whether given output i must be evaluated into a temporary: its bytes overlap an input on its
 * device or another given output (compiled kernels treat their buffers as noalias). */
static bool out_needs_temp(const LoomGraph *g, int32_t n, const LoomArray *outs, int32_t i) {
  for (int32_t j = 0; j < g->ir.ninputs; j++)
    if (g->ir.inputs[j].device == outs[i].device && overlaps(&outs[i], &g->ir.inputs[j])) return true;
  for (int32_t j = 0; j < n; j++)
    if (j != i && outs[j].data && overlaps(&outs[i], &outs[j])) return true;
  return false;
}

/* Copies a C-contiguous array into dst (any strides), element by element. */
static void copy_to_strided(const LoomArray *dst, const void *src) {
  size_t isz = itemsize_of(dst->dtype);
  int64_t numel = ir_numel(dst->ndim, dst->shape);
  int64_t idx[LOOM_MAX_RANK] = {0};
  int64_t off = 0;
  const char *sp = src;
  char *dp = dst->data;
  for (int64_t e = 0; e < numel; e++) {
    memcpy(dp + off * (int64_t)isz, sp + (size_t)e * isz, isz);
    for (int i = dst->ndim - 1; i >= 0; i--) {
      if (++idx[i] < dst->shape[i]) {
        off += dst->strides[i];
        break;
      }
      off -= dst->strides[i] * (dst->shape[i] - 1);
      idx[i] = 0;
    }
  }
}

/* Per output: where the kernels write it, and what must happen afterwards. */
typedef struct OutPlan {
  void *owned;   /* allocated here: a new output (kept on success) or a temporary (always freed) */
  bool is_temp;  /* owned is a temporary copied into the caller's array afterwards */
  size_t bytes;
} OutPlan;

static LoomStatus check_outs(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                             Diag *d) {
  char s1[256], s2[256];
  for (int32_t i = 0; i < n; i++) {
    const LoomArray *o = &outs[i];
    if (!o->data) continue;
    const IrNode *nd = &g->ir.nodes[nodes[i]];
    if (o->device != LOOM_DEVICE_HOST && o->device != LOOM_DEVICE_CUDA)
      return diag_error(d, LOOM_ERR_UNSUPPORTED,
                        "loom_eval: outs[%d] is on device kind %d; this version writes HOST and CUDA arrays",
                        i, (int)o->device);
    if (o->dtype != (LoomDType)nd->dtype)
      return diag_error(d, LOOM_ERR_DTYPE, "loom_eval: outs[%d] has dtype %s but node %d has dtype %s",
                        i, dtype_label(o->dtype), nodes[i], dtype_label((LoomDType)nd->dtype));
    bool same = o->ndim == nd->ndim;
    for (int k = 0; same && k < o->ndim; k++) same = o->shape[k] == nd->shape[k];
    if (!same) {
      if (o->ndim < 0 || o->ndim > LOOM_MAX_RANK)
        return diag_error(d, LOOM_ERR_SHAPE, "loom_eval: outs[%d] has ndim %d but node %d has shape %s",
                          i, o->ndim, nodes[i], shape_str(s2, sizeof s2, nd->ndim, nd->shape));
      return diag_error(d, LOOM_ERR_SHAPE, "loom_eval: outs[%d] has shape %s but node %d has shape %s", i,
                        shape_str(s1, sizeof s1, o->ndim, o->shape), nodes[i],
                        shape_str(s2, sizeof s2, nd->ndim, nd->shape));
    }
  }
  return LOOM_OK;
}

/* ---- evaluation plans ---------------------------------------------------------------------------
 * A graph keeps up to RT_MAX_PLANS plans (most recently used first): the schedule made for one set
 * of roots, output layouts and input layouts, with its kernels pinned in the cache. Graph nodes are
 * immutable and the schedule binds arrays by index, never by address, so a later loom_eval with the
 * same roots and layouts skips the passes and the cache look-up: only outputs are allocated and the
 * kernels launched. Plans are freed with the graph (LoomGraph.free_plans). */
enum { RT_MAX_PLANS = 8 };

typedef struct RtPlan {
  struct RtPlan *next;
  int32_t n;
  int32_t *roots;
  int64_t *out_strides;  /* n * LOOM_MAX_RANK */
  int32_t ninputs;
  LoomArray *inputs;     /* layouts of the graph's inputs when the plan was made (data unused) */
  Schedule *schedule;
  const CgCompiled **kernels; /* pinned, one per schedule kernel (host plans) */
  const RtGpuFn **gpu_kernels; /* loaded, one per schedule kernel (CUDA plans) */
  LoomDeviceKind device;
  int32_t device_index;
  Arena arena;           /* owns this struct and everything above */
} RtPlan;

static bool same_layout(const LoomArray *a, const LoomArray *b) {
  if (a->dtype != b->dtype || a->ndim != b->ndim || a->device != b->device ||
      a->device_index != b->device_index)
    return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i] || a->strides[i] != b->strides[i]) return false;
  return true;
}

static bool plan_matches(const RtPlan *p, const LoomGraph *g, int32_t n, const LoomNode *nodes,
                         const LoomArray *outs, LoomDeviceKind dk, int32_t di) {
  if (p->device != dk || p->device_index != di) return false;
  if (p->n != n || memcmp(p->roots, nodes, (size_t)n * sizeof *nodes) != 0) return false;
  for (int32_t i = 0; i < n; i++)
    if (memcmp(&p->out_strides[(size_t)i * LOOM_MAX_RANK], outs[i].strides,
               (size_t)outs[i].ndim * sizeof(int64_t)) != 0)
      return false;
  if (p->ninputs > g->ir.ninputs) return false;
  for (int32_t i = 0; i < p->ninputs; i++)
    if (!same_layout(&p->inputs[i], &g->ir.inputs[i])) return false;
  return true;
}

static void plan_free(LoomContext *ctx, RtPlan *p) {
  if (p->kernels)
    for (int32_t k = 0; k < p->schedule->nkernel; k++)
      if (p->kernels[k]) rt_cache_release(ctx->rt->cache, p->kernels[k]);
  Arena a = p->arena; /* p lives in its own arena */
  arena_free_all(&a);
}

static void graph_free_plans(LoomGraph *g) {
  for (RtPlan *p = g->plans, *next; p; p = next) {
    next = p->next;
    plan_free(g->ctx, p);
  }
  g->plans = NULL;
}

/* The matching plan, moved to the front of the graph's list; NULL if none. */
static RtPlan *find_plan(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                         LoomDeviceKind dk, int32_t di) {
  RtPlan **link = (RtPlan **)&g->plans;
  for (RtPlan *p = *link; p; link = &p->next, p = p->next) {
    if (!plan_matches(p, g, n, nodes, outs, dk, di)) continue;
    *link = p->next;
    p->next = g->plans;
    g->plans = p;
    return p;
  }
  return NULL;
}

/* Runs the pipeline into a new plan; when `keep`, pins its kernels and adds it to the graph. */
static LoomStatus make_plan(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                            LoomDeviceKind dk, int32_t di, bool keep, StrBuf *dump, RtPlan **out, Diag *d) {
  LoomContext *ctx = g->ctx;
  Arena a;
  arena_init(&a, ctx);
  RtPlan *p = arena_alloc(&a, sizeof *p);
  int32_t *roots = arena_alloc(&a, (size_t)n * sizeof *roots);
  if (p) {
    p->roots = arena_alloc(&a, (size_t)n * sizeof *p->roots);
    p->out_strides = arena_alloc(&a, (size_t)n * LOOM_MAX_RANK * sizeof(int64_t));
    p->inputs = arena_alloc(&a, (size_t)(g->ir.ninputs > 0 ? g->ir.ninputs : 1) * sizeof(LoomArray));
  }
  if (!p || !roots || !p->roots || !p->out_strides || !p->inputs) {
    arena_free_all(&a);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: evaluation plan for %d outputs", n);
  }
  p->n = n;
  memcpy(p->roots, nodes, (size_t)n * sizeof *nodes);
  memcpy(roots, nodes, (size_t)n * sizeof *nodes);
  for (int32_t i = 0; i < n; i++)
    memcpy(&p->out_strides[(size_t)i * LOOM_MAX_RANK], outs[i].strides, LOOM_MAX_RANK * sizeof(int64_t));
  p->ninputs = g->ir.ninputs;
  if (g->ir.ninputs > 0) memcpy(p->inputs, g->ir.inputs, (size_t)g->ir.ninputs * sizeof(LoomArray));

  IrModule m;
  memset(&m, 0, sizeof m);
  m.graph = &g->ir;
  m.arena = &a;
  m.nroots = n;
  m.roots = roots;
  m.outs = outs;
  m.dump = dump;
  m.dump_flags = ctx->dump_flags;
  LoomStatus st = pass_run_pipeline(&m, d);
  if (st == LOOM_OK && !m.schedule)
    st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the pipeline produced no schedule");
  if (st != LOOM_OK) {
    arena_free_all(&a);
    return st;
  }
  p->schedule = m.schedule;
  p->kernels = NULL;
  p->gpu_kernels = NULL;
  p->device = dk;
  p->device_index = di;
  p->arena = a;
  if (keep && dk == LOOM_DEVICE_CUDA && m.schedule->nkernel > 0) {
    p->gpu_kernels = arena_alloc(&p->arena, (size_t)m.schedule->nkernel * sizeof *p->gpu_kernels);
    if (!p->gpu_kernels) {
      plan_free(ctx, p);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: evaluation plan kernels");
    }
    for (int32_t k = 0; k < m.schedule->nkernel; k++) {
      const SchedKernel *sk = &m.schedule->kernels[k];
      int64_t npoints = 1;
      for (int32_t i = 0; i < sk->ir->ndim; i++) npoints *= sk->shape[i];
      st = rt_gpu_kernel(ctx, di, sk->ir, npoints, &p->gpu_kernels[k], d);
      if (st != LOOM_OK) {
        plan_free(ctx, p);
        return st;
      }
    }
  } else if (keep && m.schedule->nkernel > 0) {
    p->kernels = arena_alloc(&p->arena, (size_t)m.schedule->nkernel * sizeof *p->kernels);
    if (!p->kernels) {
      plan_free(ctx, p);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: evaluation plan kernels");
    }
    for (int32_t k = 0; k < m.schedule->nkernel; k++) {
      st = rt_cache_acquire(ctx->rt->cache, m.schedule->kernels[k].ir, false, &p->kernels[k], NULL, d);
      if (st != LOOM_OK) {
        plan_free(ctx, p);
        return st;
      }
    }
  }
  if (keep) {
    g->free_plans = graph_free_plans;
    p->next = g->plans;
    g->plans = p;
    int count = 0;
    for (RtPlan **link = (RtPlan **)&g->plans; *link; link = &(*link)->next)
      if (++count == RT_MAX_PLANS && (*link)->next) {
        RtPlan *rest = (*link)->next;
        (*link)->next = NULL;
        for (RtPlan *q = rest, *next; q; q = next) {
          next = q->next;
          plan_free(ctx, q);
        }
        break;
      }
  } else {
    p->next = NULL;
  }
  *out = p;
  return LOOM_OK;
}

static void dump_text(const char *title, const char *text) {
  fprintf(stderr, "; ---- %s ----\n%s", title, text ? text : "(out of memory)\n");
}

/* ---- device of an evaluation ----------------------------------------------------------------------------
 * The device every input reachable from the roots and every given output is on (the host when there
 * are none); two different devices are an error naming both. Fast path: a graph whose inputs and
 * outputs are all host arrays needs no walk. */
static const char *device_label(char *buf, size_t cap, LoomDeviceKind k, int32_t i) {
  snprintf(buf, cap, "%s:%d", k == LOOM_DEVICE_HOST ? "host" : k == LOOM_DEVICE_CUDA ? "cuda" : "hip", (int)i);
  return buf;
}

static LoomStatus eval_device(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                              LoomDeviceKind *dk, int32_t *di, Diag *d) {
  bool all_host = true;
  for (int32_t i = 0; i < g->ir.ninputs && all_host; i++) all_host = g->ir.inputs[i].device == LOOM_DEVICE_HOST;
  for (int32_t i = 0; i < n && all_host; i++) all_host = !outs[i].data || outs[i].device == LOOM_DEVICE_HOST;
  *dk = LOOM_DEVICE_HOST;
  *di = 0;
  if (all_host) return LOOM_OK;
  /* Only inputs reachable from the roots count. Without a driver, a reachable CUDA array gets
   * "no CUDA driver" before the mixed-device error, so mixed-device errors are kept aside (dm). */
  Diag dm = {.status = LOOM_OK};
  Diag *dout = d;
  d = &dm;
  bool any_cuda = false;
  for (int32_t i = 0; i < n; i++) any_cuda |= outs[i].data && outs[i].device == LOOM_DEVICE_CUDA;
  uint8_t *mark = ctx_calloc(g->ctx, (size_t)g->ir.nnodes + 1, 1);
  if (!mark) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval device check");
  bool found = false;
  const char *what = "";
  int32_t what_i = 0;
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < n; i++) mark[nodes[i]] = 1;
  for (int32_t i = g->ir.nnodes - 1; i >= 0 && st == LOOM_OK; i--) {
    if (!mark[i]) continue;
    const IrNode *nd = &g->ir.nodes[i];
    for (int j = 0; j < 3; j++)
      if (nd->src[j] >= 0 && nd->src[j] < g->ir.nnodes) mark[nd->src[j]] = 1;
    if (nd->kind != IR_INPUT || nd->input < 0 || nd->input >= g->ir.ninputs) continue;
    const LoomArray *a = &g->ir.inputs[nd->input];
    any_cuda |= a->device == LOOM_DEVICE_CUDA;
    if (!found) {
      *dk = a->device;
      *di = a->device_index;
      found = true;
      what = "input node";
      what_i = i;
    } else if (a->device != *dk || a->device_index != *di) {
      char b1[32], b2[32];
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_eval: %s %d is on %s but input node %d is on %s; all arrays of one evaluation must be "
                      "on one device (copy one with loom_array_copy)", what, what_i, device_label(b1, sizeof b1, *dk, *di), i,
                      device_label(b2, sizeof b2, a->device, a->device_index));
    }
  }
  ctx_free(g->ctx, mark);
  d = dout;
  if (any_cuda) {
    RtGpu *gpu = NULL;
    LoomStatus gs = rt_gpu_get(g->ctx, &gpu, d);
    if (gs != LOOM_OK) return gs;
  }
  if (st != LOOM_OK) {
    *d = dm;
    return st;
  }
  for (int32_t i = 0; i < n && st == LOOM_OK; i++) {
    if (!outs[i].data) continue;
    if (!found) {
      *dk = outs[i].device;
      *di = outs[i].device_index;
      found = true;
      what = "outs[] entry";
      what_i = i;
    } else if (outs[i].device != *dk || outs[i].device_index != *di) {
      char b1[32], b2[32];
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_eval: %s %d is on %s but outs[%d] is on %s; all arrays of one evaluation must be on one "
                      "device (copy one with loom_array_copy)", what, what_i, device_label(b1, sizeof b1, *dk, *di), i,
                      device_label(b2, sizeof b2, outs[i].device, outs[i].device_index));
    }
  }
  if (st == LOOM_OK && *dk == LOOM_DEVICE_HIP)
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_eval: HIP devices are not supported in this version");
  return st;
}

/* Writes the contiguous device array tmp into out (any strides) on the current stream: a copy kernel
 * of a scratch graph whose root is tmp itself. */
static LoomStatus copy_from_temp(LoomContext *ctx, const LoomArray *tmp, LoomArray *out, int32_t di, Diag *d);

/* loom_eval on a CUDA device: outputs from the device pool; plans as on the host (GPU kernels). A given
 * output whose bytes overlap an input or another given output (in-place updates, x[::-1] = x) is
 * evaluated into a pool temporary, then copied into place by a second kernel, in stream order. */
static LoomStatus eval_gpu(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs, int32_t di, Diag *d) {
  LoomContext *ctx = g->ctx;
  LoomStatus st = LOOM_OK;
  LoomArray stack_outs[4];
  void *stack_data[4];
  bool stack_temp[4] = {false, false, false, false};
  LoomArray *mod_outs = n <= 4 ? stack_outs : ctx_calloc(ctx, (size_t)n, sizeof *mod_outs);
  void **out_data = n <= 4 ? stack_data : ctx_calloc(ctx, (size_t)n, sizeof *out_data);
  bool *is_temp = n <= 4 ? stack_temp : ctx_calloc(ctx, (size_t)n, sizeof *is_temp);
  if (!mod_outs || !out_data || !is_temp) {
    if (n > 4) {
      ctx_free(ctx, mod_outs);
      ctx_free(ctx, out_data);
      ctx_free(ctx, is_temp);
    }
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval bookkeeping");
  }
  double t0 = now_ms(), t_alloc = 0, t_plan = 0, t_run = 0;
  int32_t made = 0;
  for (int32_t i = 0; i < n && st == LOOM_OK; i++) {
    const IrNode *nd = &g->ir.nodes[nodes[i]];
    made = i + 1;
    out_data[i] = NULL;
    if (outs[i].data) {
      if (!out_needs_temp(g, n, outs, i)) {
        mod_outs[i] = outs[i];
        out_data[i] = outs[i].data;
        continue;
      }
      is_temp[i] = true;
    }
    size_t bytes = (size_t)ir_numel(nd->ndim, nd->shape) * itemsize_of((LoomDType)nd->dtype);
    void *p = NULL;
    st = rt_gpu_alloc(ctx, di, bytes, &p, d);
    describe_contiguous(&mod_outs[i], nd, p);
    mod_outs[i].device = LOOM_DEVICE_CUDA;
    mod_outs[i].device_index = di;
    out_data[i] = p;
  }
  RtPlan *rp = NULL;
  bool keep = ctx->dump_flags == 0;
  t_alloc = now_ms();
  if (st == LOOM_OK) {
    rp = keep ? find_plan(g, n, nodes, mod_outs, LOOM_DEVICE_CUDA, di) : NULL;
    if (rp) {
      pthread_mutex_lock(&ctx->rt->stats_lock);
      ctx->rt->stats.cache_hits += (uint64_t)rp->schedule->nkernel;
      pthread_mutex_unlock(&ctx->rt->stats_lock);
    } else {
      st = make_plan(g, n, nodes, mod_outs, LOOM_DEVICE_CUDA, di, keep, NULL, &rp, d);
    }
  }
  t_plan = now_ms();
  if (st == LOOM_OK) {
    st = rt_gpu_run_schedule(ctx, di, &g->ir, rp->schedule, rp->gpu_kernels, out_data, n, d);
    if (!keep) plan_free(ctx, rp);
  }
  t_run = now_ms();
  bool temps = false;
  for (int32_t i = 0; i < made && st == LOOM_OK; i++)
    if (is_temp[i]) {
      temps = true;
      st = copy_from_temp(ctx, &mod_outs[i], &outs[i], di, d);
    }
  if (temps) { /* the pool is stream-blind: a user stream must be done with the temporaries */
    struct RtCuStream *cur = rt_gpu_current_stream(ctx, di);
    Diag dd = {.status = LOOM_OK};
    if (cur) rt_gpu_stream_synchronize(ctx, cur, &dd);
  }
  for (int32_t i = 0; i < made; i++) {
    if (outs[i].data && !is_temp[i]) continue;
    if (st == LOOM_OK && !is_temp[i]) {
      outs[i] = mod_outs[i];
    } else if (out_data[i]) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_free(ctx, di, out_data[i], &dd);
    }
  }
  if (n > 4) {
    ctx_free(ctx, mod_outs);
    ctx_free(ctx, out_data);
    ctx_free(ctx, is_temp);
  }
  if (ctx->dump_flags & IR_DUMP_TIME)
    fprintf(stderr, "# time gpu eval: alloc %.3f plan %.3f run %.3f (kernels, launches) finish %.3f ms\n", t_alloc - t0,
            t_plan - t_alloc, t_run - t_plan, now_ms() - t_run);
  return st;
}

static LoomStatus copy_from_temp(LoomContext *ctx, const LoomArray *tmp, LoomArray *out, int32_t di, Diag *d) {
  LoomGraph *g2 = NULL;
  LoomStatus st = loom_graph_create(ctx, &g2);
  if (st != LOOM_OK) return diag_error(d, st, "out of memory: in-place copy graph");
  LoomNode src;
  st = loom_input(g2, tmp, &src);
  if (st == LOOM_OK) st = eval_gpu(g2, 1, &src, out, di, d);
  else diag_error(d, st, "in-place copy: %s", loom_last_error(ctx));
  loom_graph_destroy(g2);
  return st;
}

static LoomStatus eval_impl(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs, Diag *d) {
  LoomContext *ctx = g->ctx;
  if (!ctx->rt) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_eval: the context has no runtime");
  LoomStatus st = check_nodes(g, n, nodes, "loom_eval", d);
  if (st != LOOM_OK) return st;
  if (!outs) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_eval: outs is NULL; pass n LoomArray "
                                                             "descriptors (data NULL to allocate)");
  st = check_outs(g, n, nodes, outs, d);
  if (st != LOOM_OK) return st;
  LoomDeviceKind dk = LOOM_DEVICE_HOST;
  int32_t di = 0;
  st = eval_device(g, n, nodes, outs, &dk, &di, d);
  if (st != LOOM_OK) return st;
  if (dk == LOOM_DEVICE_CUDA) return eval_gpu(g, n, nodes, outs, di, d);

  uint32_t flags = ctx->dump_flags;
  double t_start = now_ms(), t_pipe = 0.0;
  Arena arena;
  arena_init(&arena, ctx);
  StrBuf dump;
  sb_init(&dump, ctx);
  uint64_t extra_bytes = 0;

  OutPlan *plan = arena_alloc(&arena, (size_t)n * sizeof *plan);
  LoomArray *mod_outs = arena_alloc(&arena, (size_t)n * sizeof *mod_outs);
  void **out_data = arena_alloc(&arena, (size_t)n * sizeof *out_data);
  int32_t *roots = arena_alloc(&arena, (size_t)n * sizeof *roots);
  if (!plan || !mod_outs || !out_data || !roots) {
    arena_free_all(&arena);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval bookkeeping for %d outputs", n);
  }
  memcpy(roots, nodes, (size_t)n * sizeof *roots);

  for (int32_t i = 0; i < n; i++) {
    const IrNode *nd = &g->ir.nodes[nodes[i]];
    bool need_temp = outs[i].data && out_needs_temp(g, n, outs, i);
    if (outs[i].data && !need_temp) {
      mod_outs[i] = outs[i];
      out_data[i] = outs[i].data;
      continue;
    }
    size_t isz = itemsize_of((LoomDType)nd->dtype), bytes;
    int64_t numel = ir_numel(nd->ndim, nd->shape);
    if (numel < 0 || __builtin_mul_overflow((size_t)numel, isz, &bytes)) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: output %d is too large", i);
      goto fail;
    }
    void *p = rt_host_alloc(ctx->rt->host_pool, bytes);
    if (!p) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %s %d of %zu bytes",
                      need_temp ? "temporary for output" : "output", i, bytes);
      goto fail;
    }
    plan[i].owned = p;
    plan[i].is_temp = need_temp;
    plan[i].bytes = bytes;
    if (need_temp) extra_bytes += bytes;
    describe_contiguous(&mod_outs[i], nd, p);
    out_data[i] = p;
  }

  if (flags & IR_DUMP_GRAPH) {
    StrBuf gb;
    sb_init(&gb, ctx);
    ir_print_graph(&g->ir, n, roots, &gb);
    char *text = sb_take(&gb);
    dump_text("graph of the requested nodes", text);
    ctx_free(ctx, text);
  }

  /* With dumps asked for, every evaluation runs the passes (and prints them) on a throwaway plan. */
  bool keep = flags == 0;
  RtPlan *rp = keep ? find_plan(g, n, nodes, mod_outs, LOOM_DEVICE_HOST, 0) : NULL;
  if (rp) { /* its kernels are reused compiled kernels: count them as cache hits */
    pthread_mutex_lock(&ctx->rt->stats_lock);
    ctx->rt->stats.cache_hits += (uint64_t)rp->schedule->nkernel;
    pthread_mutex_unlock(&ctx->rt->stats_lock);
  } else {
    st = make_plan(g, n, nodes, mod_outs, LOOM_DEVICE_HOST, 0, keep,
                   (flags & (IR_DUMP_GRAPH | IR_DUMP_KERNELS | IR_DUMP_TIME)) ? &dump : NULL, &rp, d);
    if (dump.len > 0) {
      dump_text("passes", dump.s);
    } else if (st == LOOM_OK && (flags & IR_DUMP_KERNELS)) {
      StrBuf kb;
      sb_init(&kb, ctx);
      ir_print_schedule(rp->schedule, &kb);
      char *text = sb_take(&kb);
      dump_text("kernels", text);
      ctx_free(ctx, text);
    }
  }
  sb_free(&dump);
  t_pipe = now_ms();
  if (st != LOOM_OK) goto fail;

  st = run_schedule(ctx, &g->ir, rp->schedule, rp->kernels, out_data, n, extra_bytes, d);
  if (!keep) plan_free(ctx, rp);
  if (st != LOOM_OK) goto fail;

  for (int32_t i = 0; i < n; i++) {
    if (plan[i].is_temp) {
      copy_to_strided(&outs[i], plan[i].owned);
      rt_host_free(ctx->rt->host_pool, plan[i].owned, plan[i].bytes);
    } else if (plan[i].owned) {
      describe_contiguous(&outs[i], &g->ir.nodes[nodes[i]], plan[i].owned);
    }
    plan[i].owned = NULL;
  }
  if (flags & IR_DUMP_TIME)
    fprintf(stderr, "; loom_eval: pipeline %.3f ms, run %.3f ms\n", t_pipe - t_start, now_ms() - t_pipe);
  arena_free_all(&arena);
  return LOOM_OK;

fail:
  for (int32_t i = 0; i < n; i++) rt_host_free(ctx->rt->host_pool, plan[i].owned, plan[i].bytes);
  arena_free_all(&arena);
  return st;
}

LOOM_API LoomStatus loom_eval(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs) {
  if (!g || !g->ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = eval_impl(g, n, nodes, outs, &d);
  if (st == LOOM_OK) return LOOM_OK;
  if (d.status == LOOM_OK) diag_error(&d, st, "loom_eval failed (%s)", loom_status_name(st));
  return ctx_report(g->ctx, &d);
}

/* ---- introspection --------------------------------------------------------------------------------- */
/* The PTX of kernels k[0..n) for sm_90 (the H200's), compiled here: no GPU is needed. */
LoomStatus rt_dump_ptx(LoomContext *ctx, int32_t n, const KernelIr *const *k, StrBuf *sb, Diag *d) {
  CgTarget *t = NULL;
  LoomStatus st = cg_nvptx_target_create(ctx, 9, 0, &t, d);
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    st = t->compile(t, k[i], NULL, &cc, d);
    if (st != LOOM_OK) break;
    if (cc.gpu && (ctx->dump_flags & IR_DUMP_TIME))
      sb_printf(sb, "// time %s lower %.3f libdevice %.3f opt %.3f ptx %.3f ms\n", k[i]->name, cc.gpu->phase_ms[0],
                cc.gpu->phase_ms[1], cc.gpu->phase_ms[2], cc.gpu->phase_ms[3]);
    if (cc.gpu && cc.gpu->code) sb_printf(sb, "// kernel %s (sm_90)\n%s", k[i]->name, cc.gpu->code);
    else st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the NVIDIA target gave no PTX for %s", k[i]->name);
    t->release(t, &cc);
  }
  if (t) t->destroy(t);
  return st;
}

static LoomStatus dump_impl(LoomGraph *g, LoomDumpKind kind, int32_t n, const LoomNode *nodes,
                            char **text, Diag *d) {
  LoomContext *ctx = g->ctx;
  if (!text) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_dump: text is NULL");
  *text = NULL;
  LoomStatus st = check_nodes(g, n, nodes, "loom_dump", d);
  if (st != LOOM_OK) return st;
  if (kind != LOOM_DUMP_GRAPH && kind != LOOM_DUMP_KERNELS && kind != LOOM_DUMP_LLVM && kind != LOOM_DUMP_PTX)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_dump: unknown kind %d; use LOOM_DUMP_GRAPH, LOOM_DUMP_KERNELS, LOOM_DUMP_LLVM or "
                      "LOOM_DUMP_PTX", (int)kind);
  if (kind == LOOM_DUMP_LLVM && (!ctx->rt || !ctx->rt->cache))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_dump: the context has no runtime");

  StrBuf sb;
  sb_init(&sb, ctx);
  if (kind == LOOM_DUMP_GRAPH) {
    ir_print_graph(&g->ir, n, nodes, &sb);
  } else {
    Arena arena;
    arena_init(&arena, ctx);
    LoomArray *mod_outs = arena_alloc(&arena, (size_t)n * sizeof *mod_outs);
    int32_t *roots = arena_alloc(&arena, (size_t)n * sizeof *roots);
    if (!mod_outs || !roots) {
      arena_free_all(&arena);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump bookkeeping");
    }
    memcpy(roots, nodes, (size_t)n * sizeof *roots);
    for (int32_t i = 0; i < n; i++) describe_contiguous(&mod_outs[i], &g->ir.nodes[nodes[i]], NULL);
    IrModule m;
    memset(&m, 0, sizeof m);
    m.graph = &g->ir;
    m.arena = &arena;
    m.nroots = n;
    m.roots = roots;
    m.outs = mod_outs;
    st = pass_run_pipeline(&m, d);
    if (st == LOOM_OK && !m.schedule)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the pipeline produced no schedule");
    if (st == LOOM_OK && kind == LOOM_DUMP_KERNELS) ir_print_schedule(m.schedule, &sb);
    for (int32_t i = 0; st == LOOM_OK && kind == LOOM_DUMP_LLVM && i < m.schedule->nkernel; i++) {
      const KernelIr *ir = m.schedule->kernels[i].ir;
      const CgCompiled *k = NULL;
      st = rt_cache_acquire(ctx->rt->cache, ir, true, &k, NULL, d);
      if (st != LOOM_OK) break;
      sb_printf(&sb, "; kernel %s\n%s\n", ir->name, k->llvm_ir ? k->llvm_ir : "");
      rt_cache_release(ctx->rt->cache, k);
    }
    if (st == LOOM_OK && kind == LOOM_DUMP_PTX) {
      const KernelIr **ks = arena_alloc(&arena, sizeof *ks * (size_t)(m.schedule->nkernel + 1));
      for (int32_t i = 0; ks && i < m.schedule->nkernel; i++) ks[i] = m.schedule->kernels[i].ir;
      st = ks ? rt_dump_ptx(ctx, m.schedule->nkernel, ks, &sb, d)
              : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump bookkeeping");
    }
    arena_free_all(&arena);
    if (st != LOOM_OK) {
      sb_free(&sb);
      return st;
    }
  }
  *text = sb_take(&sb);
  if (!*text) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump text");
  return LOOM_OK;
}

LOOM_API LoomStatus loom_dump(LoomGraph *g, LoomDumpKind kind, int32_t n, const LoomNode *nodes,
                              char **text) {
  if (!g || !g->ctx) {
    if (text) *text = NULL;
    return LOOM_ERR_INVALID_ARGUMENT;
  }
  Diag d = {.status = LOOM_OK};
  LoomStatus st = dump_impl(g, kind, n, nodes, text, &d);
  if (st == LOOM_OK) return LOOM_OK;
  if (d.status == LOOM_OK) diag_error(&d, st, "loom_dump failed (%s)", loom_status_name(st));
  return ctx_report(g->ctx, &d);
}

LOOM_API void loom_free_string(LoomContext *ctx, char *text) { ctx_free(ctx, text); }

LOOM_API void loom_array_free(LoomContext *ctx, LoomArray *array) {
  if (!array) return;
  if (array->device == LOOM_DEVICE_CUDA) {
    Diag d = {.status = LOOM_OK};
    if (ctx && ctx->rt && array->data) rt_gpu_free(ctx, array->device_index, array->data, &d);
    memset(array, 0, sizeof *array);
    return;
  }
  /* The size class comes from the descriptor loom_eval filled in (C-contiguous, so numel * size). */
  int64_t numel = array->ndim >= 0 && array->ndim <= LOOM_MAX_RANK ? ir_numel(array->ndim, array->shape) : 0;
  size_t bytes = numel > 0 ? (size_t)numel * loom_dtype_size(array->dtype) : 0;
  if (ctx && ctx->rt) rt_host_free(ctx->rt->host_pool, array->data, bytes);
  else ctx_free(ctx, array->data);
  memset(array, 0, sizeof *array);
}
