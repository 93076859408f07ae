/* hip_device.c: the AMD device of the runtime (device.h's table for LOOM_DEVICE_HIP).
 *
 * Approach: the device is the shared GPU layer (runtime/gpu/: pools, streams, events, copies, the kernel
 * table with its entry groups and disk cache, launch shapes with the chip's wave) over the driver table
 * below, which the HIP layer's calls fill (hip.c: libamdhip64 loaded at run time, devices made current
 * with hipSetDevice, code objects loaded with hipModuleLoadData). What is AMD's own stays here: the
 * AMDGPU target for a device's chip, the check of each kernel code object's metadata against the
 * launch, AMDGPU assembly dumps, and raw modules (hip_raw.c). The target's code object is the binary
 * HIP loads (no link step, so no JIT levels and no tiers); the disk cache keeps code objects by
 * signature as it keeps cubins. device.h's hooks do not receive their table, so each generic hook is a
 * one-line call of the layer with this driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip.h"
#include "runtime/hip/hip_rt.h"
#include "runtime/gpu/gpu_rt.h"

/* ---- the driver table ------------------------------------------------------------------------------------ */
static LoomStatus drv_load(LoomContext *ctx, void **out, int *ndev, RtGpuJit *jit, Diag *d) {
  RtHip *h = NULL;
  LoomStatus st = rt_hip_load(ctx, &h, d);
  if (st != LOOM_OK) return st;
  *out = h;
  *ndev = rt_hip_device_count(h);
  jit->final_level = -1; /* the code object is final: LLVM's AMDGPU backend ran at its level (amdgpu.c) */
  jit->tiers = false;
  return LOOM_OK;
}

static LoomStatus drv_target_create(LoomContext *ctx, const RtGpuDeviceInfo *info, CgTarget **out, Diag *d) {
  return cg_amdgpu_target_create(ctx, info->arch, 0, out, d);
}

/* A kernel code object's metadata (comgr) against what the launch passes: each kernel takes one explicit
 * argument, Loom's parameter block, by value at offset 0 (hipModuleLaunchKernel copies it there and fills
 * in the hidden arguments the metadata lists). Without comgr the check is left to HIP, which reads the
 * same metadata. */
static LoomStatus check_kernargs(LoomContext *ctx, const void *co, size_t size, Diag *d) {
  CgAmdMeta meta;
  Diag md = {.status = LOOM_OK};
  if (cg_amdgpu_read_metadata(ctx, co, size, &meta, &md) != LOOM_OK)
    return md.status == LOOM_ERR_UNSUPPORTED ? LOOM_OK : diag_error(d, LOOM_ERR_BACKEND, "a kernel's code object: %s", md.msg);
  LoomStatus st = meta.nkernels > 0 ? LOOM_OK
                                    : diag_error(d, LOOM_ERR_INTERNAL, "internal error: a kernel code object has no kernel");
  for (int32_t i = 0; i < meta.nkernels && st == LOOM_OK; i++) {
    const CgAmdKernelMeta *k = &meta.kernels[i];
    int nexplicit = 0;
    for (int32_t j = 0; j < k->nargs; j++) nexplicit += strncmp(k->args[j].kind, "hidden_", 7) != 0;
    if (nexplicit != 1 || strcmp(k->args[0].kind, "by_value") || k->args[0].offset != 0 || k->args[0].size % 8)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the code object's metadata gives kernel %s %d explicit "
                      "arguments (the launcher passes one parameter block by value at offset 0)", k->name, nexplicit);
  }
  cg_amdgpu_meta_free(ctx, &meta);
  return st;
}

static LoomStatus drv_module_load(void *drv, int device, const void *co, size_t size, void **module, Diag *d) {
  LoomStatus st = check_kernargs(rt_hip_context(drv), co, size, d);
  return st == LOOM_OK ? rt_hip_module_load(drv, device, co, size, module, d) : st;
}

static const RtGpuDriver hip_driver = {
    RT_HIP_DRIVER_COMMON, /* hip_table.c and hip.c, shared with libloomrt */
    .load = drv_load,
    .target_create = drv_target_create,
    .link = NULL, /* the code object is the binary */
    .module_load = drv_module_load,
};

const RtGpuDriver *rt_hip_driver(void) { return &hip_driver; }

/* ---- device.h's hooks: the shared GPU layer with the HIP driver ------------------------------------------- */
static const RtGpuDriver *const D = &hip_driver;
static LoomStatus hip_open(LoomContext *ctx, Diag *d) { return rt_gpu_open(D, ctx, d); }
static int hip_count(LoomContext *ctx) { return rt_gpu_count(D, ctx); }
static void hip_close(LoomContext *ctx) { rt_gpu_close(D, ctx); }
static LoomStatus hip_synchronize(LoomContext *ctx, int i, Diag *d) { return rt_gpu_synchronize(D, ctx, i, d); }
static LoomStatus hip_alloc(LoomContext *ctx, int i, size_t n, void **out, Diag *d) {
  return rt_gpu_alloc(D, ctx, i, n, out, d);
}
static LoomStatus hip_free(LoomContext *ctx, int i, void *p, size_t n, Diag *d) { return rt_gpu_free(D, ctx, i, p, n, d); }
static LoomStatus hip_pool_stats(LoomContext *ctx, int i, RtPoolStats *out, Diag *d) {
  return rt_gpu_device_pool_stats(D, ctx, i, out, d);
}
static LoomStatus hip_pool_trim(LoomContext *ctx, int i, Diag *d) { return rt_gpu_device_pool_trim(D, ctx, i, d); }
static LoomStatus hip_copy(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src, LoomDeviceKind sk,
                           int si, size_t n, Diag *d) {
  return rt_gpu_copy(D, ctx, dst, dk, di, src, sk, si, n, d);
}
static LoomStatus hip_copy_async(LoomContext *ctx, void *dst, LoomDeviceKind dk, int di, const void *src,
                                LoomDeviceKind sk, int si, size_t n, RtStream *s, Diag *d) {
  return rt_gpu_copy_async(D, ctx, dst, dk, di, src, sk, si, n, s, d);
}
static LoomStatus hip_fill_bytes(LoomContext *ctx, void *dst, int i, uint8_t value, size_t n, RtStream *s, Diag *d) {
  return rt_gpu_fill_bytes(D, ctx, dst, i, value, n, s, d);
}
static LoomStatus hip_pool_limit(LoomContext *ctx, int i, bool set, uint64_t *limit, Diag *d) {
  return rt_gpu_device_pool_limit(D, ctx, i, set, limit, d);
}
static LoomStatus hip_stream_wrap(LoomContext *ctx, int i, void *handle, RtStream **out, Diag *d) {
  return rt_gpu_stream_wrap(D, ctx, i, handle, out, d);
}
static LoomStatus hip_stream_create(LoomContext *ctx, int i, RtStream **out, Diag *d) {
  return rt_gpu_stream_create(D, ctx, i, out, d);
}
static void hip_stream_destroy(LoomContext *ctx, RtStream *s) { rt_gpu_stream_destroy(D, ctx, s); }
static LoomStatus hip_stream_synchronize(LoomContext *ctx, RtStream *s, Diag *d) {
  return rt_gpu_stream_synchronize(D, ctx, s, d);
}
static LoomStatus hip_stream_use(LoomContext *ctx, int i, RtStream *s, Diag *d) {
  return rt_gpu_stream_use(D, ctx, i, s, d);
}
static RtStream *hip_current_stream(LoomContext *ctx, int i) { return rt_gpu_current_stream(D, ctx, i); }
static LoomStatus hip_event_create(LoomContext *ctx, int i, RtEvent **out, Diag *d) {
  return rt_gpu_event_create(D, ctx, i, out, d);
}
static void hip_event_destroy(LoomContext *ctx, RtEvent *e) { rt_gpu_event_destroy(D, ctx, e); }
static LoomStatus hip_event_record(LoomContext *ctx, int i, RtEvent *e, RtStream *s, Diag *d) {
  return rt_gpu_event_record(D, ctx, i, e, s, d);
}
static LoomStatus hip_event_synchronize(LoomContext *ctx, RtEvent *e, Diag *d) {
  return rt_gpu_event_synchronize(D, ctx, e, d);
}
static LoomStatus hip_event_elapsed(LoomContext *ctx, RtEvent *a, RtEvent *b, float *ms, Diag *d) {
  return rt_gpu_event_elapsed(D, ctx, a, b, ms, d);
}
static LoomStatus hip_prepare(LoomContext *ctx, int i, const KernelIr *k, int64_t npoints, const RtKernel **out,
                              Diag *d) {
  return rt_gpu_prepare(D, ctx, i, k, npoints, out, d);
}
static void hip_unpin(LoomContext *ctx, int i, const RtKernel *k) { rt_gpu_unpin(D, ctx, i, k); }
static LoomStatus hip_run_schedule(LoomContext *ctx, int i, const RtRun *run, Diag *d) {
  return rt_gpu_run_schedule(D, ctx, i, run, d);
}
static void hip_settle(LoomContext *ctx, int i) { rt_gpu_settle(D, ctx, i); }

/* ---- AMDGPU assembly dumps ------------------------------------------------------------------------------- */
/* The AMDGPU assembly (and/or compile times) of kernels k[0..n) for rq->arch, else LOOM_DUMP_AMDGPU_CHIP, else
 * the reference chip, gfx942 (MI300), compiled here without a GPU: each code object is still linked (and
 * kept in LOOM_DUMP_AMDGPU_DIR when set). Times alone time the compile a device makes (to the ELF). */
static LoomStatus hip_dump_code(LoomContext *ctx, const RtDumpRequest *rq, int32_t n, const KernelIr *const *k,
                                StrBuf *sb, Diag *d) {
  const char *chip = rq->arch && *rq->arch ? rq->arch : getenv("LOOM_DUMP_AMDGPU_CHIP");
  if (!chip || !*chip) chip = "gfx942";
  if (rq->arch && *rq->arch && !cg_amdgpu_chip(chip, NULL))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "AMDGPU dump: unknown chip '%s' (Loom knows %s)", chip,
                      cg_amdgpu_chip_names());
  CgTarget *t = NULL;
  LoomStatus st = cg_amdgpu_target_create(ctx, chip, 0, &t, d);
  if (st == LOOM_OK && rq->code) cg_amdgpu_target_set_dump(t, getenv("LOOM_DUMP_AMDGPU_DIR")); /* else: the ELF */
  for (int32_t i = 0; st == LOOM_OK && i < n; i++) {
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    st = t->compile(t, k[i], NULL, &cc, d);
    if (st != LOOM_OK) break;
    const double *ph = cc.gpu ? cc.gpu->phase_ms : NULL;
    if (ph && rq->times)
      sb_printf(sb, "%stime kernel %s %s %.3f ms (lower %.3f ocml %.3f opt %.3f code object %.3f)\n", rq->code ? "; " : "# ",
                k[i]->name, chip, ph[0] + ph[1] + ph[2] + ph[3], ph[0], ph[1], ph[2], ph[3]);
    const char *why = NULL, *linker = cg_amdgpu_linker(t, &why);
    if (!cc.gpu || !cc.gpu->code)
      st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the AMD target gave no assembly for %s", k[i]->name);
    else if (rq->code)
      sb_printf(sb, "; kernel %s (%s, linked by %s%s%s)\n%s", k[i]->name, chip, linker, why && *why ? ": " : "",
                why ? why : "", cc.gpu->code);
    t->release(t, &cc);
  }
  if (t) t->destroy(t);
  return st;
}

const RtDevice rt_hip_device = {
    .name = "hip",
    .kind = LOOM_DEVICE_HIP,
    .binary = CG_BINARY_AMDGPU,
    .open = hip_open,
    .count = hip_count,
    .close = hip_close,
    .stop_background = rt_gpu_tiers_stop_all,
    .synchronize = hip_synchronize,
    .alloc = hip_alloc,
    .free = hip_free,
    .pool_stats = hip_pool_stats,
    .pool_trim = hip_pool_trim,
    .copy = hip_copy,
    .copy_async = hip_copy_async,
    .fill_bytes = hip_fill_bytes,
    .pool_limit = hip_pool_limit,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .stream_synchronize = hip_stream_synchronize,
    .stream_use = hip_stream_use,
    .current_stream = hip_current_stream,
    .stream_handle = rt_gpu_stream_handle,
    .stream_wrap = hip_stream_wrap,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_synchronize = hip_event_synchronize,
    .event_elapsed = hip_event_elapsed,
    .prepare = hip_prepare,
    .specialize = rt_gpu_specialize, /* gpu_launch.c */
    .unpin = hip_unpin,
    .run_schedule = hip_run_schedule,
    .write_strided = NULL, /* a copy kernel */
    .settle = hip_settle,
    .dump_code = hip_dump_code,
    .linalg = &rt_hip_linalg, /* hipBLASLt, hipFFT (hip_blas.c, hip_fft.c) */
    .raw_formats = RT_AMD_RAW_FORMATS,
    .raw_sniff = rt_amd_raw_sniff,
    .raw_create = rt_amd_raw_create,
    .raw_destroy = rt_amd_raw_destroy,
    .raw_text = rt_amd_raw_text,
    .raw_load = rt_amd_raw_load,
    .raw_launch = rt_amd_raw_launch,
};
