/* cuda_fft.c: FFTs on CUDA devices through cuFFT, loaded at run time like cuBLASLt (RtLinalg.fft of
 * runtime/linalg.h; loom_fft in loom.h).
 *
 * Loading: the file named by LOOM_CUFFT, then libcufft.so.12 / .11 / .13 by soname, then
 * $CUDA_HOME/lib64 and /usr/local/cuda/lib64; none: LOOM_ERR_UNSUPPORTED naming what to install.
 * Plans: cufftMakePlanMany64 over the last `rank` dims of a contiguous batch (basic layout), cached per
 * (device, type, lengths, batch) in a small table (a plan costs milliseconds to make); the oldest is
 * destroyed when the table is full. A plan runs on the calling thread's current loom stream
 * (cufftSetStream before each exec). cuFFT's complex-to-real transforms overwrite their input, so the
 * input is copied into a workspace from the device pool first.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_blas.h"
#include "runtime/vendor_lib.h"

#define PLAN_CACHE 32

/* cufft.h's values */
enum { FFT_R2C = 0x2a, FFT_C2R = 0x2c, FFT_C2C = 0x29, FFT_D2Z = 0x6a, FFT_Z2D = 0x6c, FFT_Z2Z = 0x69 };
enum { FFT_FORWARD = -1, FFT_INVERSE = 1 };

#define FFT_FUNCS(X)                                                                                               \
  X(cufftCreate, int, (int *))                                                                                     \
  X(cufftDestroy, int, (int))                                                                                      \
  X(cufftGetVersion, int, (int *))                                                                                 \
  X(cufftSetStream, int, (int, void *))                                                                            \
  X(cufftMakePlanMany64, int, (int, int, long long *, long long *, long long, long long, long long *, long long,    \
                               long long, int, long long, size_t *))                                               \
  X(cufftExecC2C, int, (int, void *, void *, int))                                                                 \
  X(cufftExecZ2Z, int, (int, void *, void *, int))                                                                 \
  X(cufftExecR2C, int, (int, void *, void *))                                                                      \
  X(cufftExecD2Z, int, (int, void *, void *))                                                                      \
  X(cufftExecC2R, int, (int, void *, void *))                                                                      \
  X(cufftExecZ2D, int, (int, void *, void *))

typedef struct Plan {
  bool used;
  int device, type, rank, handle;
  int64_t n[3], batch;
} Plan;

typedef struct CuFft {
  void *lib;
  char path[512];
  Diag fail;
#define X(name, ret, args) ret(*name) args;
  FFT_FUNCS(X)
#undef X
  Plan plans[PLAN_CACHE];
  int next;
} CuFft;

/* Resolves cuFFT's functions into f (vendor_lib.h's accept). */
static const char *resolve(void *lib, void *arg) {
  CuFft *f = arg;
  const char *missing = NULL;
  void *p;
#define X(name, ret, args)                                                                                         \
  p = dlsym(lib, #name);                                                                                           \
  if (!p && !missing) missing = #name;                                                                             \
  memcpy(&f->name, &p, sizeof p);
  FFT_FUNCS(X)
#undef X
  if (!missing) return NULL;
  snprintf(f->fail.msg, sizeof f->fail.msg, "has no %s (CUDA 11 or later needed)", missing);
  return f->fail.msg;
}

static void load(CuFft *f) {
  static const char *const sonames[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.13", NULL};
  static const char *const dirs[] = {"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", NULL};
  RtVendorLib v = {.what = "cuFFT", .purpose = "FFTs on CUDA devices",
                   .install = "install the CUDA toolkit's libcufft (or `pip install nvidia-cufft-cu12`)",
                   .env = "LOOM_CUFFT", .sonames = sonames, .dirs = dirs, .accept = resolve, .arg = f};
  Diag d = {.status = LOOM_OK};
  f->lib = rt_dlopen_first(&v, f->path, sizeof f->path, &d);
  f->fail = d;
}

static LoomStatus fft_error(int r, const char *call, int device, Diag *d) {
  return diag_error(d, r == 2 /* CUFFT_ALLOC_FAILED */ ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                    "%s on CUDA device %d failed: cufftResult %d", call, device, r);
}

/* A plan for (device, type, n, batch) from the cache or made now; b->lock held. */
static LoomStatus plan_of(LoomContext *ctx, CuFft *c, int device, int type, const RtFft *f, int *out, Diag *d) {
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
    c->cufftDestroy(p->handle);
    p->used = false;
  }
  int h = 0, r = c->cufftCreate(&h);
  if (r) return fft_error(r, "cufftCreate", device, d);
  long long n[3] = {0, 0, 0};
  for (int i = 0; i < f->rank; i++) n[i] = f->n[i];
  size_t work = 0;
  r = c->cufftMakePlanMany64(h, f->rank, n, NULL, 1, 0, NULL, 1, 0, type, f->batch, &work);
  if (r) {
    c->cufftDestroy(h);
    return fft_error(r, "cufftMakePlanMany64", device, d);
  }
  *p = (Plan){.used = true, .device = device, .type = type, .rank = f->rank, .handle = h, .batch = f->batch};
  memcpy(p->n, f->n, sizeof p->n);
  *out = h;
  return LOOM_OK;
}

LoomStatus rt_cuda_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d) {
  void **slot;
  pthread_mutex_t *lock;
  LoomStatus st = rt_cuda_lib_slot(ctx, RT_CUDA_LIB_FFT, &slot, &lock, d);
  if (st != LOOM_OK) return st;
  pthread_mutex_lock(lock);
  CuFft *c = *slot;
  if (!c && (c = ctx_calloc(ctx, 1, sizeof *c)) != NULL) {
    c->fail.status = LOOM_OK;
    load(c);
    *slot = c;
  }
  if (!c) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: the cuFFT state");
  else if (c->fail.status != LOOM_OK) st = diag_error(d, c->fail.status, "%s", c->fail.msg);
  const RtGpuDriver *drv = rt_cuda_gpu_driver();
  if (st == LOOM_OK) st = rt_gpu_make_current(drv, ctx, index, d);
  bool dbl = f->dtype == LOOM_COMPLEX128;
  int type = f->kind == LOOM_FFT_R2C ? (dbl ? FFT_D2Z : FFT_R2C)
             : f->kind == LOOM_FFT_C2R ? (dbl ? FFT_Z2D : FFT_C2R)
                                       : (dbl ? FFT_Z2Z : FFT_C2C);
  int plan = 0;
  if (st == LOOM_OK) st = plan_of(ctx, c, index, type, f, &plan, d);
  RtStream *rs = rt_gpu_current_stream(drv, ctx, index);
  void *stream = rs ? rt_gpu_stream_handle(rs) : NULL;
  int r = 0;
  if (st == LOOM_OK && (r = c->cufftSetStream(plan, stream)) != 0) st = fft_error(r, "cufftSetStream", index, d);
  void *src = (void *)(uintptr_t)f->in, *work = NULL;
  size_t wbytes = 0;
  if (st == LOOM_OK && f->kind == LOOM_FFT_C2R) { /* cuFFT overwrites a C2R input: transform a copy */
    int64_t m = f->batch * (f->n[f->rank - 1] / 2 + 1);
    for (int i = 0; i < f->rank - 1; i++) m *= f->n[i];
    wbytes = (size_t)m * (dbl ? 16 : 8);
    st = rt_gpu_alloc(drv, ctx, index, wbytes, &work, d);
    if (st == LOOM_OK) st = rt_gpu_copy(drv, ctx, work, LOOM_DEVICE_CUDA, index, f->in, LOOM_DEVICE_CUDA, index, wbytes, d);
    src = work;
  }
  if (st == LOOM_OK) {
    int dir = f->kind == LOOM_FFT_C2C_INVERSE ? FFT_INVERSE : FFT_FORWARD;
    const char *call = "cufftExec";
    switch (type) {
    case FFT_C2C: call = "cufftExecC2C", r = c->cufftExecC2C(plan, src, f->out, dir); break;
    case FFT_Z2Z: call = "cufftExecZ2Z", r = c->cufftExecZ2Z(plan, src, f->out, dir); break;
    case FFT_R2C: call = "cufftExecR2C", r = c->cufftExecR2C(plan, src, f->out); break;
    case FFT_D2Z: call = "cufftExecD2Z", r = c->cufftExecD2Z(plan, src, f->out); break;
    case FFT_C2R: call = "cufftExecC2R", r = c->cufftExecC2R(plan, src, f->out); break;
    default: call = "cufftExecZ2D", r = c->cufftExecZ2D(plan, src, f->out); break;
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

void rt_cuda_fft_close(LoomContext *ctx, void *state) {
  CuFft *c = state;
  if (!c) return;
  for (int i = 0; i < PLAN_CACHE; i++)
    if (c->plans[i].used) {
      Diag dd = {.status = LOOM_OK};
      rt_gpu_make_current(rt_cuda_gpu_driver(), ctx, c->plans[i].device, &dd);
      c->cufftDestroy(c->plans[i].handle);
    }
  if (c->lib) dlclose(c->lib);
  ctx_free(ctx, c);
}

LoomStatus rt_cufft_probe(char *path, size_t size, Diag *d) {
  CuFft *c = calloc(1, sizeof *c);
  if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  c->fail.status = LOOM_OK;
  load(c);
  LoomStatus st = c->fail.status;
  int v = 0;
  if (st != LOOM_OK) diag_error(d, st, "%s", c->fail.msg);
  else if (path) snprintf(path, size, "%s (version %d)", c->path, c->cufftGetVersion(&v) == 0 ? v : -1);
  if (c->lib) dlclose(c->lib);
  free(c);
  return st;
}
