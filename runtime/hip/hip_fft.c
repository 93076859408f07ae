/* hip_fft.c: FFTs on AMD devices through hipFFT (rocFFT underneath), loaded at run time like hipBLASLt
 * (RtLinalg.fft of runtime/linalg.h; loom_fft in loom.h); the twin of runtime/cuda/cuda_fft.c (hipFFT's
 * API is hipFFT's, with a pointer for a plan handle).
 *
 * Loading: the file named by LOOM_HIPFFT, then libhipfft.so.0 / .so by soname, then $ROCM_PATH/lib and
 * /opt/rocm/lib; none: LOOM_ERR_UNSUPPORTED naming what to install.
 * Plans: hipfftMakePlanMany64 over the last `rank` dims of a contiguous batch (basic layout), cached per
 * (device, type, lengths, batch) in a small table (a plan costs milliseconds to make); the oldest is
 * destroyed when the table is full. A plan runs on the calling thread's current loom stream
 * (hipfftSetStream before each exec). hipFFT's complex-to-real transforms overwrite their input, so the
 * input is copied into a workspace from the device pool first.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_libs.h"
#include "runtime/hip/hip_rt.h"
#include "runtime/vendor_lib.h"

#define PLAN_CACHE 32

enum { FFT_R2C = HF_R2C, FFT_C2R = HF_C2R, FFT_C2C = HF_C2C, FFT_D2Z = HF_D2Z, FFT_Z2D = HF_Z2D, FFT_Z2Z = HF_Z2Z };
enum { FFT_FORWARD = HF_FORWARD, FFT_INVERSE = HF_BACKWARD };
typedef void *Handle; /* hipfftHandle */

#define FFT_FUNCS(X)                                                                                               \
  X(hipfftCreate, int, (Handle *))                                                                                     \
  X(hipfftDestroy, int, (Handle))                                                                                      \
  X(hipfftGetVersion, int, (int *))                                                                                 \
  X(hipfftSetStream, int, (Handle, void *))                                                                            \
  X(hipfftMakePlanMany64, int, (Handle, int, long long *, long long *, long long, long long, long long *, long long,    \
                               long long, int, long long, size_t *))                                               \
  X(hipfftExecC2C, int, (Handle, void *, void *, int))                                                                 \
  X(hipfftExecZ2Z, int, (Handle, void *, void *, int))                                                                 \
  X(hipfftExecR2C, int, (Handle, void *, void *))                                                                      \
  X(hipfftExecD2Z, int, (Handle, void *, void *))                                                                      \
  X(hipfftExecC2R, int, (Handle, void *, void *))                                                                      \
  X(hipfftExecZ2D, int, (Handle, void *, void *))

typedef struct Plan {
  bool used;
  int device, type, rank;
  Handle handle;
  int64_t n[3], batch;
} Plan;

typedef struct HipFft {
  void *lib;
  char path[512];
  Diag fail;
#define X(name, ret, args) ret(*name) args;
  FFT_FUNCS(X)
#undef X
  Plan plans[PLAN_CACHE];
  int next;
} HipFft;

/* Resolves hipFFT's functions into f (vendor_lib.h's accept). */
static const char *resolve(void *lib, void *arg) {
  HipFft *f = arg;
  const char *missing = NULL;
  void *p;
#define X(name, ret, args)                                                                                         \
  p = dlsym(lib, #name);                                                                                           \
  if (!p && !missing) missing = #name;                                                                             \
  memcpy(&f->name, &p, sizeof p);
  FFT_FUNCS(X)
#undef X
  if (!missing) return NULL;
  snprintf(f->fail.msg, sizeof f->fail.msg, "has no %s (ROCm 5 or later needed)", missing);
  return f->fail.msg;
}

static void load(HipFft *f) {
  static const char *const sonames[] = {"libhipfft.so.0", "libhipfft.so", NULL};
  static const char *const dirs[] = {"$ROCM_PATH/lib", "/opt/rocm/lib", NULL};
  RtVendorLib v = {.what = "hipFFT", .purpose = "FFTs on AMD devices", .install = "install ROCm's hipfft package",
                   .env = "LOOM_HIPFFT", .sonames = sonames, .dirs = dirs, .accept = resolve, .arg = f};
  Diag d = {.status = LOOM_OK};
  f->lib = rt_dlopen_first(&v, f->path, sizeof f->path, &d);
  f->fail = d;
}

static LoomStatus fft_error(int r, const char *call, int device, Diag *d) {
  return diag_error(d, r == HF_ALLOC_FAILED ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                    "%s on AMD device %d failed: hipfftResult %d", call, device, r);
}

/* A plan for (device, type, n, batch) from the cache or made now; b->lock held. */
static LoomStatus plan_of(HipFft *c, int device, int type, const RtFft *f, Handle *out, Diag *d) {
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
    c->hipfftDestroy(p->handle);
    p->used = false;
  }
  Handle h = NULL;
  int r = c->hipfftCreate(&h);
  if (r) return fft_error(r, "hipfftCreate", device, d);
  long long n[3] = {0, 0, 0};
  for (int i = 0; i < f->rank; i++) n[i] = f->n[i];
  size_t work = 0;
  r = c->hipfftMakePlanMany64(h, f->rank, n, NULL, 1, 0, NULL, 1, 0, type, f->batch, &work);
  if (r) {
    c->hipfftDestroy(h);
    return fft_error(r, "hipfftMakePlanMany64", device, d);
  }
  *p = (Plan){.used = true, .device = device, .type = type, .rank = f->rank, .handle = h, .batch = f->batch};
  memcpy(p->n, f->n, sizeof p->n);
  *out = h;
  return LOOM_OK;
}

LoomStatus rt_hip_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d) {
  void **slot;
  pthread_mutex_t *lock;
  LoomStatus st = rt_hip_fft_slot(ctx, &slot, &lock, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(lock);
  HipFft *c = *slot;
  if (!c && (c = ctx_calloc(ctx, 1, sizeof *c)) != NULL) {
    c->fail.status = LOOM_OK;
    load(c);
    *slot = c;
  }
  if (!c) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the hipFFT state");
  else if (c->fail.status != LOOM_OK) st = diag_error(d, c->fail.status, "%s", c->fail.msg);
  const RtGpuDriver *drv = rt_hip_driver();
  if (st == LOOM_OK) st = rt_gpu_make_current(drv, ctx, index, d);
  bool dbl = f->dtype == LOOM_COMPLEX128;
  int type = f->kind == LOOM_FFT_R2C ? (dbl ? FFT_D2Z : FFT_R2C)
             : f->kind == LOOM_FFT_C2R ? (dbl ? FFT_Z2D : FFT_C2R)
                                       : (dbl ? FFT_Z2Z : FFT_C2C);
  Handle plan = NULL;
  if (st == LOOM_OK) st = plan_of(c, index, type, f, &plan, d);
  RtStream *rs = rt_gpu_current_stream(drv, ctx, index);
  void *stream = rs ? rt_gpu_stream_handle(rs) : NULL;
  int r = 0;
  if (st == LOOM_OK && (r = c->hipfftSetStream(plan, stream)) != 0) st = fft_error(r, "hipfftSetStream", index, d);
  void *src = (void *)(uintptr_t)f->in, *work = NULL;
  size_t wbytes = 0;
  if (st == LOOM_OK && f->kind == LOOM_FFT_C2R) { /* hipFFT overwrites a C2R input: transform a copy */
    int64_t m = f->batch * (f->n[f->rank - 1] / 2 + 1);
    for (int i = 0; i < f->rank - 1; i++) m *= f->n[i];
    wbytes = (size_t)m * (dbl ? 16 : 8);
    st = rt_gpu_alloc(drv, ctx, index, wbytes, &work, d);
    if (st == LOOM_OK) st = rt_gpu_copy(drv, ctx, work, LOOM_DEVICE_HIP, index, f->in, LOOM_DEVICE_HIP, index, wbytes, d);
    src = work;
  }
  if (st == LOOM_OK) {
    int dir = f->kind == LOOM_FFT_C2C_INVERSE ? FFT_INVERSE : FFT_FORWARD;
    const char *call = "hipfftExec";
    switch (type) {
    case FFT_C2C: call = "hipfftExecC2C", r = c->hipfftExecC2C(plan, src, f->out, dir); break;
    case FFT_Z2Z: call = "hipfftExecZ2Z", r = c->hipfftExecZ2Z(plan, src, f->out, dir); break;
    case FFT_R2C: call = "hipfftExecR2C", r = c->hipfftExecR2C(plan, src, f->out); break;
    case FFT_D2Z: call = "hipfftExecD2Z", r = c->hipfftExecD2Z(plan, src, f->out); break;
    case FFT_C2R: call = "hipfftExecC2R", r = c->hipfftExecC2R(plan, src, f->out); break;
    default: call = "hipfftExecZ2D", r = c->hipfftExecZ2D(plan, src, f->out); break;
    }
    if (r) st = fft_error(r, call, index, d);
  }
  if (work) {
    Diag fd = {.status = LOOM_OK};
    if (rs) rt_gpu_stream_synchronize(drv, ctx, rs, &fd); /* the pool is stream-blind */
    rt_gpu_free(drv, ctx, index, work, wbytes, &fd);
  }
  pthread_mutex_unlock(lock);
  return st;
}

void rt_hip_fft_close(LoomContext *ctx, void *state) {
  HipFft *c = state;
  if (!c) return;
  for (int i = 0; i < PLAN_CACHE; i++)
    if (c->plans[i].used) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(rt_hip_driver(), ctx, c->plans[i].device, &dd);
      c->hipfftDestroy(c->plans[i].handle);
    }
  if (c->lib) dlclose(c->lib);
  ctx_free(ctx, c);
}

LoomStatus rt_hipfft_probe(char *path, size_t size, Diag *d) {
  HipFft *c = calloc(1, sizeof *c);
  if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  c->fail.status = LOOM_OK;
  load(c);
  LoomStatus st = c->fail.status;
  int v = 0;
  if (st != LOOM_OK) diag_error(d, st, "%s", c->fail.msg);
  else if (path) snprintf(path, size, "%s (version %d)", c->path, c->hipfftGetVersion(&v) == 0 ? v : -1);
  if (c->lib) dlclose(c->lib);
  free(c);
  return st;
}
