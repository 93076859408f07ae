/* SPDX-License-Identifier: Apache-2.0 */
/* host_device.c: the host CPU as a device (device.h): memory from the host pool, copies by memmove, work
 * done when its call returns (streams are no-ops, events read the monotonic clock), kernels from the
 * context's kernel table (runtime/cache.c over codegen's host target), and the host schedule runner.
 *
 * The schedule runner: temporaries from the host pool; for each kernel a pinned entry of the kernel
 * table, base pointers (binding offset applied) and buffer-major strides, then rt_host_launch
 * (runtime/host_launch.c: tasks over O, or R cut into parts that depend on the sizes only; the same code
 * runs libloomrt's bundled kernels, so both give the same bits).
 * Kernels with an empty space are skipped, except a reduction with non-empty O and empty R, which must
 * still write its identities. A library-call kernel (KernelIr.call) goes to rt_run_call (the host BLAS).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bundle_build.h"
#include "runtime/device.h"
#include "runtime/host_launch.h"

extern const RtDevice rt_host_device; /* the table at the end of this file */

static size_t itemsize_of(LoomDType t) { return (size_t)dtype_bits(t) / 8; }

/* a * b saturating at INT64_MAX (both non-negative). */
static int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return INT64_MAX;
  return r;
}

/* LOOM_DUMP=time: how a kernel was launched (rt_host_kernel_plan) and how long the launch took. */
static void dump_launch(LoomContext *ctx, const CgCompiled *k, const KernelIr *ir, const int64_t *shape,
                        void *const *bufs, const int64_t *strides, int64_t no, int64_t nr, double ms) {
  static const char *const names[] = {"serial", "ranges", "R split", "column split"};
  RtHostPlan p = rt_host_kernel_plan(k, ir->nkeep == ir->ndim, shape, bufs, strides, no, nr, rt_pool_size(ctx->rt->pool));
  rt_dump_printf(ctx, "# time host %s launch %.3f ms: %s, %lld tasks, %lld parts\n", ir->name, ms,
                 p.strategy >= 0 && p.strategy <= RT_HOST_SPLIT_COLS ? names[p.strategy] : "?", (long long)p.ntasks,
                 (long long)p.nparts);
}

/* ---- schedule runner ----------------------------------------------------------------------------- */
static LoomStatus run_schedule(LoomContext *ctx, const IrGraph *g, const int32_t *imap, int32_t nimap,
                               const Schedule *s, const RtKernel *const *pinned, void *const *out_data,
                               int32_t nouts, uint64_t extra_temp_bytes, Diag *d) {
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
    if (ir && !ir->call) rt_bundles_capture(ctx, ir); /* AOT bundle builders record the kernels a run needs */
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

    /* slots: the buffers, then the parameters' launch words (codegen.h) */
    size_t nbuf = (size_t)(ir->nbuf + ir->nparam > 0 ? ir->nbuf + ir->nparam : 1);
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
      if (bd->kind == SB_INPUT && rt_schedule_input(g, imap, nimap, bd->index, &base)) {
      } else if (bd->kind == SB_TEMP && bd->index >= 0 && bd->index < s->ntemp) base = temps[bd->index];
      else if (bd->kind == SB_OUTPUT && bd->index >= 0 && bd->index < nouts) base = out_data[bd->index];
      else if (bd->kind == SB_INDEX) { /* no memory: the base word carries the offset (ir.h) */
        bufs[b] = (void *)(uintptr_t)((uint64_t)bd->offset * 8u);
        for (int32_t i = 0; i < ir->ndim; i++) strides[(size_t)b * (size_t)ir->ndim + (size_t)i] = bd->strides[i];
        continue;
      } else {
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

    for (int32_t p = 0; p < ir->nparam; p++) memcpy(&bufs[ir->nbuf + p], &sk->params[p], sizeof(uint64_t));

    if (ir->call) { /* a library call (linalg_call.c): no compiled code */
      st = rt_run_call(ctx, &rt_host_device, 0, sk, bufs, d);
      if (bufs != args_stack) ctx_free(ctx, bufs);
      if (st != LOOM_OK) goto done;
      continue;
    }
    const CgCompiled *k = pinned ? (const CgCompiled *)pinned[ki] : NULL;
    if (!k) {
      st = rt_cache_acquire(rt->cache, ir, want_ir, &k, NULL, d);
      if (st != LOOM_OK) {
        if (bufs != args_stack) ctx_free(ctx, bufs);
        goto done;
      }
    }
    if (want_ir && k->llvm_ir) rt_dump_printf(ctx, "; ---- LLVM IR of kernel %s ----\n%s\n", ir->name, k->llvm_ir);
    double t0 = (ctx->dump_flags & IR_DUMP_TIME) ? rt_now_ms() : 0;
    st = rt_host_launch(ctx, rt->pool, k, ir->nkeep == ir->ndim, ir->name, sk->shape, bufs, strides, no, nr, d);
    if (st == LOOM_OK && (ctx->dump_flags & IR_DUMP_TIME))
      dump_launch(ctx, k, ir, sk->shape, bufs, strides, no, nr, rt_now_ms() - t0);
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
  rt_count_launches(ctx, launched, temp_bytes);
  return st;
}

LoomStatus rt_run_schedule(LoomContext *ctx, const IrGraph *g, const Schedule *s, void *const *out_data, Diag *d) {
  /* Without the output count, trust the schedule's indices (the pipeline made them from the roots). */
  return run_schedule(ctx, g, NULL, 0, s, NULL, out_data, INT32_MAX, 0, d);
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

/* ---- the device table ------------------------------------------------------------------------------ */
extern const RtLinalg rt_host_linalg; /* runtime/host_blas.c */
static LoomStatus host_open(LoomContext *ctx, Diag *d) { return LOOM_OK; }
static int host_count(LoomContext *ctx) { return 1; }
static void host_close(LoomContext *ctx) {}
static LoomStatus host_synchronize(LoomContext *ctx, int index, Diag *d) { return LOOM_OK; }

/* size 0 gives a valid (1-byte) block: evaluated outputs always have data */
static LoomStatus host_alloc(LoomContext *ctx, int index, size_t size, void **out, Diag *d) {
  *out = rt_host_alloc(ctx->rt->host_pool, size);
  if (*out) return LOOM_OK;
  size_t limit = rt_host_pool_limit(ctx->rt->host_pool);
  if (limit)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of host memory: the memory "
                      "pool's limit is %zu bytes and %zu are in use (raise it with MemoryPool.set_limit)", size, limit,
                      rt_host_pool_used(ctx->rt->host_pool));
  return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %zu bytes of host memory", size);
}

static LoomStatus host_pool_limit(LoomContext *ctx, int index, bool set, uint64_t *limit, Diag *d) {
  if (set) rt_host_pool_set_limit(ctx->rt->host_pool, (size_t)*limit);
  *limit = rt_host_pool_limit(ctx->rt->host_pool);
  return LOOM_OK;
}

static LoomStatus host_free(LoomContext *ctx, int index, void *ptr, size_t size, Diag *d) {
  rt_host_free(ctx->rt->host_pool, ptr, size);
  return LOOM_OK;
}

static LoomStatus host_pool_stats(LoomContext *ctx, int index, RtPoolStats *out, Diag *d) {
  memset(out, 0, sizeof *out);
  out->used_bytes = rt_host_pool_used(ctx->rt->host_pool);
  out->cached_bytes = rt_host_pool_cached(ctx->rt->host_pool);
  out->cached_blocks = rt_host_pool_cached_blocks(ctx->rt->host_pool);
  out->total_bytes = out->used_bytes + out->cached_bytes;
  return LOOM_OK;
}

static LoomStatus host_pool_trim(LoomContext *ctx, int index, Diag *d) {
  rt_host_pool_trim(ctx->rt->host_pool);
  return LOOM_OK;
}

static LoomStatus host_copy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                            int si, size_t n, Diag *d) {
  if (n) memmove(dst, src, n);
  return LOOM_OK;
}

/* Host streams order nothing (the work of a call is done when it returns): the handle is NULL. */
static LoomStatus host_stream_create(LoomContext *ctx, int index, RtStream **out, Diag *d) {
  *out = NULL;
  return LOOM_OK;
}
static void host_stream_destroy(LoomContext *ctx, RtStream *s) {}
static LoomStatus host_stream_synchronize(LoomContext *ctx, RtStream *s, Diag *d) { return LOOM_OK; }
static LoomStatus host_stream_use(LoomContext *ctx, int index, RtStream *s, Diag *d) { return LOOM_OK; }
static RtStream *host_current_stream(LoomContext *ctx, int index) { return NULL; }
static void *host_stream_handle(RtStream *s) { return NULL; }
static LoomStatus host_stream_wrap(LoomContext *ctx, int index, void *handle, RtStream **out, Diag *d) {
  *out = NULL;
  return LOOM_OK;
}
static LoomStatus host_copy_async(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                                  LoomDeviceKind sk, int si, size_t n, RtStream *s, Diag *d) {
  if (n) memmove(dst, src, n);
  return LOOM_OK;
}
static LoomStatus host_fill_bytes(LoomContext *ctx, void *dst, int index, uint8_t value, size_t n, RtStream *s,
                                  Diag *d) {
  if (n) memset(dst, value, n);
  return LOOM_OK;
}

/* A host event is complete when recorded; its time is the monotonic clock then. */
typedef struct HostEvent {
  double ms;
} HostEvent;

static LoomStatus host_event_create(LoomContext *ctx, int index, RtEvent **out, Diag *d) {
  HostEvent *e = ctx_calloc(ctx, 1, sizeof *e);
  *out = (RtEvent *)e;
  return e ? LOOM_OK : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "loom_event_create: out of memory");
}
static void host_event_destroy(LoomContext *ctx, RtEvent *e) { ctx_free(ctx, e); }
static LoomStatus host_event_record(LoomContext *ctx, int index, RtEvent *e, RtStream *s, Diag *d) {
  ((HostEvent *)e)->ms = rt_now_ms();
  return LOOM_OK;
}
static LoomStatus host_event_synchronize(LoomContext *ctx, RtEvent *e, Diag *d) { return LOOM_OK; }
static LoomStatus host_event_elapsed(LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d) {
  *ms = (float)(((HostEvent *)b)->ms - ((HostEvent *)a)->ms);
  return LOOM_OK;
}

/* A host kernel is the kernel table's CgCompiled, pinned. */
static LoomStatus host_prepare(LoomContext *ctx, int index, const KernelIr *k, int64_t npoints, const RtKernel **out,
                               Diag *d) {
  const CgCompiled *c = NULL;
  LoomStatus st = rt_cache_acquire(ctx->rt->cache, k, false, &c, NULL, d);
  *out = (const RtKernel *)c;
  return st;
}
static void host_unpin(LoomContext *ctx, int index, const RtKernel *k) { rt_cache_release(ctx->rt->cache, k); }

/* Kernels over a short last dim get a copy with row_extent set (cg_host_row_extent), reductions of views
 * strided along both axes one that walks by columns where the strides pick it (cg_host_walk_cols), column
 * walks one with their run-time column stride (cg_host_col_stride: one walk instead of a copy per small stride),
 * except while AOT bundles are in play: a bundle holds kernels that run at any size, found by the generic
 * key. Plans are keyed by shapes and strides (plan_cache.c): a plan's copies hold for its every launch. */
static LoomStatus host_specialize(LoomContext *ctx, Arena *a, Schedule *s, Diag *d) {
  if (!s || rt_bundles_active(ctx)) return LOOM_OK;
  for (int32_t i = 0; i < s->nkernel; i++) {
    SchedKernel *sk = &s->kernels[i];
    int e = sk->ir ? cg_host_row_extent(sk->ir, sk->shape, sk->bind) : 0;
    int cs = sk->ir ? cg_host_col_stride(sk->ir, sk->shape, sk->bind) : 0;
    int wc = sk->ir && !e ? cg_host_walk_cols(sk->ir, sk->shape, sk->bind) : 0;
    if (!e && !cs && !wc) continue;
    KernelIr *c = rt_specialize_copy(a, sk, d);
    if (!c) return d->status;
    if (e) c->row_extent = e;
    c->col_stride = (int8_t)cs;
    c->walk_cols = (uint8_t)wc;
  }
  return LOOM_OK;
}

static LoomStatus host_run_schedule(LoomContext *ctx, int index, const RtRun *r, Diag *d) {
  return run_schedule(ctx, r->graph, r->input_map, r->ninput_map, r->schedule, r->pinned, r->out_data, r->nouts,
                      r->extra_temp_bytes, d);
}

static LoomStatus host_write_strided(LoomContext *ctx, const LoomArray *tmp, LoomArray *out, Diag *d) {
  copy_to_strided(out, tmp->data);
  return LOOM_OK;
}

const RtDevice rt_host_device = {
    .name = "host",
    .kind = LOOM_DEVICE_HOST,
    .binary = CG_BINARY_HOST,
    .open = host_open,
    .count = host_count,
    .close = host_close,
    .synchronize = host_synchronize,
    .alloc = host_alloc,
    .free = host_free,
    .pool_stats = host_pool_stats,
    .pool_trim = host_pool_trim,
    .pool_limit = host_pool_limit,
    .copy = host_copy,
    .copy_async = host_copy_async,
    .fill_bytes = host_fill_bytes,
    .stream_create = host_stream_create,
    .stream_destroy = host_stream_destroy,
    .stream_synchronize = host_stream_synchronize,
    .stream_use = host_stream_use,
    .current_stream = host_current_stream,
    .stream_handle = host_stream_handle,
    .stream_wrap = host_stream_wrap,
    .event_create = host_event_create,
    .event_destroy = host_event_destroy,
    .event_record = host_event_record,
    .event_synchronize = host_event_synchronize,
    .event_elapsed = host_event_elapsed,
    .prepare = host_prepare,
    .specialize = host_specialize,
    .unpin = host_unpin,
    .run_schedule = host_run_schedule,
    .write_strided = host_write_strided,
    .settle = NULL,
    .dump_code = NULL,
    .linalg = &rt_host_linalg,
};
