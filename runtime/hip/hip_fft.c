/* hip_fft.c: FFTs on AMD devices through hipFFT (rocFFT underneath), loaded at run time like hipBLASLt:
 * hipFFT's names, enums and handles for the GPU layer's FFTs (runtime/gpu/gpu_fft.c, which has the
 * approach; the twin of runtime/cuda/cuda_fft.c: hipFFT's API is cuFFT's with a pointer for a plan handle).
 *
 * Loading: the file named by LOOM_HIPFFT, then libhipfft.so.0 / .so by soname, then $ROCM_PATH/lib and
 * /opt/rocm/lib; none: LOOM_ERR_UNSUPPORTED naming what to install.
 */
#include "runtime/hip/hip_libs.h"
#include "runtime/hip/hip_rt.h"

typedef void *Handle; /* hipfftHandle */

typedef struct HipFft {
#define X(field, suffix, args) int(*field) args;
  GPU_FFT_FUNCS(X, Handle)
#undef X
} HipFft;

static const char *const symbols[] = {
#define X(field, suffix, args) "hipfft" suffix,
    GPU_FFT_FUNCS(X, Handle)
#undef X
        NULL};

static int create(const void *fns, GpuFftPlan *out) {
  Handle h = NULL;
  int r = ((const HipFft *)fns)->create(&h);
  *out = (GpuFftPlan)h;
  return r;
}
static int destroy(const void *fns, GpuFftPlan p) { return ((const HipFft *)fns)->destroy((Handle)p); }
static int set_stream(const void *fns, GpuFftPlan p, void *stream) {
  return ((const HipFft *)fns)->set_stream((Handle)p, stream);
}

static const int types[] = {[GPU_FFT_C2C] = HF_C2C, [GPU_FFT_Z2Z] = HF_Z2Z, [GPU_FFT_R2C] = HF_R2C,
                            [GPU_FFT_D2Z] = HF_D2Z, [GPU_FFT_C2R] = HF_C2R, [GPU_FFT_Z2D] = HF_Z2D};

static int make_plan(const void *fns, GpuFftPlan p, int rank, long long *n, GpuFftType t, long long batch, size_t *work) {
  return ((const HipFft *)fns)->make_plan_many64((Handle)p, rank, n, NULL, 1, 0, NULL, 1, 0, types[t], batch, work);
}

static int exec(const void *fns, GpuFftPlan p, GpuFftType t, void *in, void *out, bool inverse) {
  const HipFft *c = fns;
  Handle h = (Handle)p;
  int dir = inverse ? HF_BACKWARD : HF_FORWARD;
  switch (t) {
  case GPU_FFT_C2C: return c->exec_c2c(h, in, out, dir);
  case GPU_FFT_Z2Z: return c->exec_z2z(h, in, out, dir);
  case GPU_FFT_R2C: return c->exec_r2c(h, in, out);
  case GPU_FFT_D2Z: return c->exec_d2z(h, in, out);
  case GPU_FFT_C2R: return c->exec_c2r(h, in, out);
  default: return c->exec_z2d(h, in, out);
  }
}

static long long version(const void *fns) {
  int v = 0;
  return ((const HipFft *)fns)->get_version(&v) == 0 ? v : -1;
}

static const char *const sonames[] = {"libhipfft.so.0", "libhipfft.so", NULL};
static const char *const dirs[] = {"$ROCM_PATH/lib", "/opt/rocm/lib", NULL};

static const GpuFftVendor hipfft = {
    .lib = {.what = "hipFFT", .purpose = "FFTs on AMD devices", .install = "install ROCm's hipfft package",
            .env = "LOOM_HIPFFT", .sonames = sonames, .dirs = dirs, .symbols = symbols,
            .too_old = "ROCm 5 or later needed", .version = version},
    .fns_size = sizeof(HipFft),
    .device = "AMD",
    .status_type = "hipfftResult",
    .prefix = "hipfft",
    .status_alloc_failed = HF_ALLOC_FAILED,
    .libs = &rt_hip_lt,
    .create = create,
    .destroy = destroy,
    .set_stream = set_stream,
    .make_plan = make_plan,
    .exec = exec,
};

LoomStatus rt_hip_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d) { return rt_gpu_fft(ctx, &hipfft, index, f, d); }

void rt_hip_fft_close(LoomContext *ctx, void *state) { rt_gpu_fft_close(ctx, &hipfft, state); }

LoomStatus rt_hipfft_probe(char *path, size_t size, Diag *d) { return rt_vendor_lib_probe(&hipfft.lib, sizeof(HipFft), path, size, d); }
