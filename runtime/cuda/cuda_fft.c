/* cuda_fft.c: FFTs on CUDA devices through cuFFT, loaded at run time like cuBLASLt: cuFFT's names, enums
 * and handles for the GPU layer's FFTs (runtime/gpu/gpu_fft.c, which has the approach: cached plans, the
 * loom stream, the C2R input copy).
 *
 * Loading: the file named by LOOM_CUFFT, then libcufft.so.12 / .11 / .13 by soname, then
 * $CUDA_HOME/lib64 and /usr/local/cuda/lib64; none: LOOM_ERR_UNSUPPORTED naming what to install.
 * A cufftHandle is an int.
 */
#include "runtime/cuda/cuda_blas.h"

/* cufft.h's values */
enum { FFT_R2C = 0x2a, FFT_C2R = 0x2c, FFT_C2C = 0x29, FFT_D2Z = 0x6a, FFT_Z2D = 0x6c, FFT_Z2Z = 0x69 };
enum { FFT_FORWARD = -1, FFT_INVERSE = 1, FFT_ALLOC_FAILED = 2 };

typedef struct CuFft {
#define X(field, suffix, args) int(*field) args;
  GPU_FFT_FUNCS(X, int)
#undef X
} CuFft;

static const char *const symbols[] = {
#define X(field, suffix, args) "cufft" suffix,
    GPU_FFT_FUNCS(X, int)
#undef X
        NULL};

static int create(const void *fns, GpuFftPlan *out) {
  int h = 0, r = ((const CuFft *)fns)->create(&h);
  *out = (GpuFftPlan)h;
  return r;
}
static int destroy(const void *fns, GpuFftPlan p) { return ((const CuFft *)fns)->destroy((int)p); }
static int set_stream(const void *fns, GpuFftPlan p, void *stream) {
  return ((const CuFft *)fns)->set_stream((int)p, stream);
}

static const int types[] = {[GPU_FFT_C2C] = FFT_C2C, [GPU_FFT_Z2Z] = FFT_Z2Z, [GPU_FFT_R2C] = FFT_R2C,
                            [GPU_FFT_D2Z] = FFT_D2Z, [GPU_FFT_C2R] = FFT_C2R, [GPU_FFT_Z2D] = FFT_Z2D};

static int make_plan(const void *fns, GpuFftPlan p, int rank, long long *n, GpuFftType t, long long batch, size_t *work) {
  return ((const CuFft *)fns)->make_plan_many64((int)p, rank, n, NULL, 1, 0, NULL, 1, 0, types[t], batch, work);
}

static int exec(const void *fns, GpuFftPlan p, GpuFftType t, void *in, void *out, bool inverse) {
  const CuFft *c = fns;
  int h = (int)p, dir = inverse ? FFT_INVERSE : FFT_FORWARD;
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
  return ((const CuFft *)fns)->get_version(&v) == 0 ? v : -1;
}

static const char *const sonames[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.13", NULL};
static const char *const dirs[] = {"$CUDA_HOME/lib64", "/usr/local/cuda/lib64", NULL};

static const GpuFftVendor cufft = {
    .lib = {.what = "cuFFT", .purpose = "FFTs on CUDA devices",
            .install = "install the CUDA toolkit's libcufft (or `pip install nvidia-cufft-cu12`)", .env = "LOOM_CUFFT",
            .sonames = sonames, .dirs = dirs, .symbols = symbols, .too_old = "CUDA 11 or later needed",
            .version = version},
    .fns_size = sizeof(CuFft),
    .device = "CUDA",
    .status_type = "cufftResult",
    .prefix = "cufft",
    .status_alloc_failed = FFT_ALLOC_FAILED,
    .libs = &rt_cuda_lt,
    .create = create,
    .destroy = destroy,
    .set_stream = set_stream,
    .make_plan = make_plan,
    .exec = exec,
};

LoomStatus rt_cuda_fft(LoomContext *ctx, int index, const RtFft *f, Diag *d) { return rt_gpu_fft(ctx, &cufft, index, f, d); }

void rt_cuda_fft_close(LoomContext *ctx, void *state) { rt_gpu_fft_close(ctx, &cufft, state); }

LoomStatus rt_cufft_probe(char *path, size_t size, Diag *d) { return rt_vendor_lib_probe(&cufft.lib, sizeof(CuFft), path, size, d); }
