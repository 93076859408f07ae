/* gpu_fft.c: FFTs on GPU devices through the vendor's FFT library (cuFFT, hipFFT), over the vendor table of
 * gpu_libs.h (RtLinalg.fft of runtime/linalg.h; loom_fft in loom.h).
 *
 * Plans: <prefix>MakePlanMany64 over the last `rank` dims of a contiguous batch (basic layout), cached per
 * (device, type, lengths, batch) in a small table (a plan costs milliseconds to make); the oldest is
 * destroyed when the table is full. A plan runs on the calling thread's current loom stream (SetStream
 * before each exec). The libraries' complex-to-real transforms overwrite their input, so the input is
 * copied into a workspace from the device pool first, unless the caller passed it as scratch
 * (RtFft.in_scratch: loom's Python layer always does, handing over the copy it makes anyway), which
 * costs no copy, pool allocation or synchronization. The whole call holds the kind's library lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_libs.h"

#define PLAN_CACHE 32

typedef struct Plan {
  bool used;
  int device, rank;
  GpuFftType type;
  GpuFftPlan handle;
  int64_t n[3], batch;
} Plan;

typedef struct GpuFft {
  RtLoadedLib lib;
  Plan plans[PLAN_CACHE];
  int next;
  _Alignas(16) unsigned char fns[]; /* the vendor's struct of function pointers (GpuFftVendor.fns_size) */
} GpuFft;

static LoomStatus fft_error(const GpuFftVendor *v, int r, const char *call, int device, Diag *d) {
  return diag_error(d, r == v->status_alloc_failed ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                    "%s on %s device %d failed: %s %d", call, v->device, device, v->status_type, r);
}

/* A plan for (device, type, n, batch) from the cache or made now; the library lock held. */
static LoomStatus plan_of(const GpuFftVendor *v, GpuFft *c, int device, GpuFftType type, const RtFft *f,
                          GpuFftPlan *out, Diag *d) {
  for (int i = 0; i < PLAN_CACHE; i++) {
    const Plan *p = &c->plans[i];
    if (p->used && p->device == device && p->type == type && p->rank == f->rank && p->batch == f->batch &&
        memcmp(p->n, f->n, sizeof p->n) == 0) {
      *out = p->handle;
      return LOOM_OK;
    }
  }
  Plan *p = &c->plans[c->next];
  c->next = (c->next + 1) % PLAN_CACHE;
  if (p->used) {
    v->destroy(c->fns, p->handle);
    p->used = false;
  }
  char call[64];
  GpuFftPlan h = 0;
  int r = v->create(c->fns, &h);
  if (r) return snprintf(call, sizeof call, "%sCreate", v->prefix), fft_error(v, r, call, device, d);
  long long n[3] = {0, 0, 0};
  for (int i = 0; i < f->rank; i++) n[i] = f->n[i];
  size_t work = 0;
  r = v->make_plan(c->fns, h, f->rank, n, type, f->batch, &work);
  if (r) {
    v->destroy(c->fns, h);
    return snprintf(call, sizeof call, "%sMakePlanMany64", v->prefix), fft_error(v, r, call, device, d);
  }
  *p = (Plan){.used = true, .device = device, .type = type, .rank = f->rank, .handle = h, .batch = f->batch};
  memcpy(p->n, f->n, sizeof p->n);
  *out = h;
  return LOOM_OK;
}

LoomStatus rt_gpu_fft(LoomContext *ctx, const GpuFftVendor *v, int index, const RtFft *f, Diag *d) {
  RtLoadedLib *state = NULL;
  pthread_mutex_t *lock = NULL;
  LoomStatus st = rt_gpu_lib_state(ctx, v->libs, GPU_LIB_FFT, &v->lib, sizeof(GpuFft) + v->fns_size,
                                   offsetof(GpuFft, fns), &state, &lock, d);
  if (st != LOOM_OK) return st;
  GpuFft *c = (GpuFft *)state;
  const RtGpuDriver *drv = v->libs->driver();
  st = rt_gpu_make_current(drv, ctx, index, d);
  bool dbl = f->dtype == LOOM_COMPLEX128;
  GpuFftType type = f->kind == LOOM_FFT_R2C ? (dbl ? GPU_FFT_D2Z : GPU_FFT_R2C)
                    : f->kind == LOOM_FFT_C2R ? (dbl ? GPU_FFT_Z2D : GPU_FFT_C2R)
                                              : (dbl ? GPU_FFT_Z2Z : GPU_FFT_C2C);
  GpuFftPlan plan = 0;
  if (st == LOOM_OK) st = plan_of(v, c, index, type, f, &plan, d);
  RtStream *rs = rt_gpu_current_stream(drv, ctx, index);
  void *stream = rs ? rt_gpu_stream_handle(rs) : NULL;
  int r = 0;
  char call[64];
  if (st == LOOM_OK && (r = v->set_stream(c->fns, plan, stream)) != 0) {
    snprintf(call, sizeof call, "%sSetStream", v->prefix);
    st = fft_error(v, r, call, index, d);
  }
  void *src = (void *)(uintptr_t)f->in, *work = NULL;
  size_t wbytes = 0;
  if (st == LOOM_OK && f->kind == LOOM_FFT_C2R && !f->in_scratch) { /* the library overwrites a C2R input */
    int64_t m = f->batch * (f->n[f->rank - 1] / 2 + 1);
    for (int i = 0; i < f->rank - 1; i++) m *= f->n[i];
    wbytes = (size_t)m * (dbl ? 16 : 8);
    st = rt_gpu_alloc(drv, ctx, index, wbytes, &work, d);
    if (st == LOOM_OK) st = rt_gpu_copy(drv, ctx, work, drv->kind, index, f->in, drv->kind, index, wbytes, d);
    src = work;
  }
  if (st == LOOM_OK && (r = v->exec(c->fns, plan, type, src, f->out, f->kind == LOOM_FFT_C2C_INVERSE)) != 0) {
    static const char *const exec_name[] = {[GPU_FFT_C2C] = "ExecC2C", [GPU_FFT_Z2Z] = "ExecZ2Z", [GPU_FFT_R2C] = "ExecR2C",
                                            [GPU_FFT_D2Z] = "ExecD2Z", [GPU_FFT_C2R] = "ExecC2R", [GPU_FFT_Z2D] = "ExecZ2D"};
    snprintf(call, sizeof call, "%s%s", v->prefix, exec_name[type]);
    st = fft_error(v, r, call, index, d);
  }
  if (work) {
    Diag fd = {.status = LOOM_OK};
    if (rs) rt_gpu_stream_synchronize(drv, ctx, rs, &fd); /* the pool is stream-blind */
    rt_gpu_free(drv, ctx, index, work, wbytes, &fd);
  }
  pthread_mutex_unlock(lock);
  return st;
}

void rt_gpu_fft_close(LoomContext *ctx, const GpuFftVendor *v, void *state) {
  GpuFft *c = state;
  if (!c) return;
  for (int i = 0; i < PLAN_CACHE; i++)
    if (c->plans[i].used) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(v->libs->driver(), ctx, c->plans[i].device, &dd);
      v->destroy(c->fns, c->plans[i].handle);
    }
  rt_gpu_lib_state_free(ctx, &c->lib);
}
