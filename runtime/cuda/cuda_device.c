/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_device.c: the CUDA device of the runtime (device.h's table for LOOM_DEVICE_CUDA).
 *
 * Approach: the device is the shared GPU layer (runtime/gpu/: pools, streams, events, copies, the kernel
 * table with its entry groups, disk cache and tiers, launch shapes) over the driver table below, which the
 * CUDA driver layer's hooks fill (cuda.c, cuda_code.c: libcuda loaded at run time, primary contexts,
 * cuLink of PTX into cubins). What is CUDA's own stays here: the JIT policy (LOOM_CUDA_JIT_LEVEL and
 * LOOM_CUDA_JIT_TIERS), the NVPTX target for a device's compute capability, PTX dumps, and raw modules
 * (cuda_raw.c). device.h's hooks do not receive their table, so each generic hook is a one-line call of
 * the layer with this driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_rt.h"
#include "runtime/gpu/gpu_rt.h"
#include "runtime/cuda/cuda_blas.h"

/* ---- the driver table ------------------------------------------------------------------------------------ */
/* libcuda, its devices, and the JIT policy: elementwise kernels end at LOOM_CUDA_JIT_LEVEL (0..4, default 1:
 * LLVM has optimized them already; bench/results/2026-11-30-jit-levels.md), first linked at level 0 and
 * tiered up in the background unless LOOM_CUDA_JIT_TIERS=0 or the level is 0. */
static LoomStatus drv_load(LoomContext *ctx, void **out, int *ndev, RtGpuJit *jit, Diag *d) {
  RtCuda *cu = NULL;
  LoomStatus st = rt_cuda_load(ctx, &cu, d);
  if (st != LOOM_OK) return st;
  *out = cu;
  *ndev = rt_cuda_device_count(cu);
  jit->final_level = 1;
  const char *lv = getenv("LOOM_CUDA_JIT_LEVEL");
  if (lv && *lv) {
    if (lv[0] >= '0' && lv[0] <= '4' && !lv[1]) jit->final_level = lv[0] - '0';
    else fprintf(stderr, "loom: warning: LOOM_CUDA_JIT_LEVEL=%s is not 0..4; using 1\n", lv);
  }
  const char *tv = getenv("LOOM_CUDA_JIT_TIERS");
  jit->tiers = jit->final_level > 0 && !(tv && !strcmp(tv, "0"));
  return LOOM_OK;
}

static LoomStatus drv_target_create(LoomContext *ctx, const RtGpuDeviceInfo *info, CgTarget **out, Diag *d) {
  return cg_nvptx_target_create(ctx, info->arch_major, info->arch_minor, out, d);
}

static const RtGpuDriver cuda_driver = {
    RT_CUDA_DRIVER_COMMON, /* cuda_table.c and cuda.c / cuda_code.c, shared with libloomrt */
    .load = drv_load,
    .target_create = drv_target_create,
    .link = rt_cu_link,
};

/* ---- device.h's hooks: the shared GPU layer with the CUDA driver ------------------------------------------ */
static const RtGpuDriver *const D = &cuda_driver;
const RtGpuDriver *rt_cuda_gpu_driver(void) { return &cuda_driver; }
static LoomStatus cu_open(LoomContext *ctx, Diag *d) { return rt_gpu_open(D, ctx, d); }
static int cu_count(LoomContext *ctx) { return rt_gpu_count(D, ctx); }
static void cu_close(LoomContext *ctx) { rt_gpu_close(D, ctx); }
static LoomStatus cu_synchronize(LoomContext *ctx, int i, Diag *d) { return rt_gpu_synchronize(D, ctx, i, d); }
static LoomStatus cu_alloc(LoomContext *ctx, int i, size_t n, void **out, Diag *d) {
  return rt_gpu_alloc(D, ctx, i, n, out, d);
}
static LoomStatus cu_free(LoomContext *ctx, int i, void *p, size_t n, Diag *d) { return rt_gpu_free(D, ctx, i, p, n, d); }
static LoomStatus cu_pool_stats(LoomContext *ctx, int i, RtPoolStats *out, Diag *d) {
  return rt_gpu_device_pool_stats(D, ctx, i, out, d);
}
static LoomStatus cu_pool_trim(LoomContext *ctx, int i, Diag *d) { return rt_gpu_device_pool_trim(D, ctx, i, d); }
static LoomStatus cu_copy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                          int si, size_t n, Diag *d) {
  return rt_gpu_copy(D, ctx, dst, dk, di, src, sk, si, n, d);
}
static LoomStatus cu_copy_async(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                                LoomDeviceKind sk, int si, size_t n, RtStream *s, Diag *d) {
  return rt_gpu_copy_async(D, ctx, dst, dk, di, src, sk, si, n, s, d);
}
static LoomStatus cu_fill_bytes(LoomContext *ctx, void *dst, int i, uint8_t value, size_t n, RtStream *s, Diag *d) {
  return rt_gpu_fill_bytes(D, ctx, dst, i, value, n, s, d);
}
static LoomStatus cu_pool_limit(LoomContext *ctx, int i, bool set, uint64_t *limit, Diag *d) {
  return rt_gpu_device_pool_limit(D, ctx, i, set, limit, d);
}
static LoomStatus cu_stream_wrap(LoomContext *ctx, int i, void *handle, RtStream **out, Diag *d) {
  return rt_gpu_stream_wrap(D, ctx, i, handle, out, d);
}
static LoomStatus cu_stream_create(LoomContext *ctx, int i, RtStream **out, Diag *d) {
  return rt_gpu_stream_create(D, ctx, i, out, d);
}
static void cu_stream_destroy(LoomContext *ctx, RtStream *s) { rt_gpu_stream_destroy(D, ctx, s); }
static LoomStatus cu_stream_synchronize(LoomContext *ctx, RtStream *s, Diag *d) {
  return rt_gpu_stream_synchronize(D, ctx, s, d);
}
static LoomStatus cu_stream_use(LoomContext *ctx, int i, RtStream *s, Diag *d) { return rt_gpu_stream_use(D, ctx, i, s, d); }
static RtStream *cu_current_stream(LoomContext *ctx, int i) { return rt_gpu_current_stream(D, ctx, i); }
static LoomStatus cu_event_create(LoomContext *ctx, int i, RtEvent **out, Diag *d) {
  return rt_gpu_event_create(D, ctx, i, out, d);
}
static void cu_event_destroy(LoomContext *ctx, RtEvent *e) { rt_gpu_event_destroy(D, ctx, e); }
static LoomStatus cu_event_record(LoomContext *ctx, int i, RtEvent *e, RtStream *s, Diag *d) {
  return rt_gpu_event_record(D, ctx, i, e, s, d);
}
static LoomStatus cu_event_synchronize(LoomContext *ctx, RtEvent *e, Diag *d) {
  return rt_gpu_event_synchronize(D, ctx, e, d);
}
static LoomStatus cu_event_elapsed(LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d) {
  return rt_gpu_event_elapsed(D, ctx, a, b, ms, d);
}
static LoomStatus cu_prepare(LoomContext *ctx, int i, const KernelIr *k, int64_t npoints, const RtKernel **out,
                             Diag *d) {
  return rt_gpu_prepare(D, ctx, i, k, npoints, out, d);
}
static void cu_unpin(LoomContext *ctx, int i, const RtKernel *k) { rt_gpu_unpin(D, ctx, i, k); }
static LoomStatus cu_run_schedule(LoomContext *ctx, int i, const RtRun *run, Diag *d) {
  return rt_gpu_run_schedule(D, ctx, i, run, d);
}
static void cu_settle(LoomContext *ctx, int i) { rt_gpu_settle(D, ctx, i); }

/* ---- PTX dumps ---------------------------------------------------------------------------------------------- */
/* The PTX (and/or compile times) of kernels k[0..n) for rq->arch ("sm_80"; default sm_90, the H200's),
 * compiled here: no GPU is needed. */
static LoomStatus cu_dump_code(LoomContext *ctx, const RtDumpRequest *rq, int32_t n, const KernelIr *const *k,
                               StrBuf *sb, Diag *d) {
  int sm = 90;
  if (rq->arch && *rq->arch) {
    char *end = NULL;
    long v = strncmp(rq->arch, "sm_", 3) == 0 && rq->arch[3] >= '0' && rq->arch[3] <= '9' ? strtol(rq->arch + 3, &end, 10) : -1;
    if (v < 30 || v > 129 || (end && *end))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "PTX dump: arch '%s' is not sm_<major><minor> from sm_30 to "
                        "sm_129 (e.g. sm_80)", rq->arch);
    sm = (int)v;
  }
  CgTarget *t = NULL;
  LoomStatus st = cg_nvptx_target_create(ctx, sm / 10, sm % 10, &t, d);
  if (sm > 90) sm = 90; /* the target emits sm_90 PTX for newer GPUs (the driver JITs it) */
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    st = t->compile(t, k[i], NULL, &cc, d);
    if (st != LOOM_OK) break;
    const double *ph = cc.gpu ? cc.gpu->phase_ms : NULL;
    if (ph && rq->times)
      sb_printf(sb, "%stime kernel %s sm_%d %.3f ms (lower %.3f libdevice %.3f opt %.3f ptx %.3f)\n", rq->code ? "// " : "# ",
                k[i]->name, sm, ph[0] + ph[1] + ph[2] + ph[3], ph[0], ph[1], ph[2], ph[3]);
    if (!cc.gpu || !cc.gpu->code)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the NVIDIA target gave no PTX for %s", k[i]->name);
    else if (rq->code)
      sb_printf(sb, "// kernel %s (sm_%d)\n%s", k[i]->name, sm, cc.gpu->code);
    t->release(t, &cc);
  }
  if (t) t->destroy(t);
  return st;
}

const RtDevice rt_cuda_device = {
    .name = "cuda",
    .kind = LOOM_DEVICE_CUDA,
    .binary = CG_BINARY_PTX,
    .open = cu_open,
    .count = cu_count,
    .close = cu_close,
    .stop_background = rt_gpu_tiers_stop_all,
    .synchronize = cu_synchronize,
    .alloc = cu_alloc,
    .free = cu_free,
    .pool_stats = cu_pool_stats,
    .pool_trim = cu_pool_trim,
    .copy = cu_copy,
    .copy_async = cu_copy_async,
    .fill_bytes = cu_fill_bytes,
    .pool_limit = cu_pool_limit,
    .stream_create = cu_stream_create,
    .stream_destroy = cu_stream_destroy,
    .stream_synchronize = cu_stream_synchronize,
    .stream_use = cu_stream_use,
    .current_stream = cu_current_stream,
    .stream_handle = rt_gpu_stream_handle,
    .stream_wrap = cu_stream_wrap,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_synchronize = cu_event_synchronize,
    .event_elapsed = cu_event_elapsed,
    .prepare = cu_prepare,
    .specialize = rt_gpu_specialize, /* gpu_launch.c */
    .unpin = cu_unpin,
    .run_schedule = cu_run_schedule,
    .write_strided = NULL, /* a copy kernel */
    .settle = cu_settle,
    .dump_code = cu_dump_code,
    .linalg = &rt_cuda_linalg, /* cuBLASLt (cuda_blas.c) */
    .raw_formats = RT_CU_RAW_FORMATS,
    .raw_sniff = rt_cu_raw_sniff,
    .raw_create = rt_cu_raw_create,
    .raw_destroy = rt_cu_raw_destroy,
    .raw_text = rt_cu_raw_text,
    .raw_load = rt_cu_raw_load,
    .raw_launch = rt_cu_raw_launch,
    .raw_global = rt_cu_raw_global,
};
