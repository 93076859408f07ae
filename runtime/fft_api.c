/* fft_api.c: loom_fft (batched FFTs on the array's device through its RtLinalg.fft, loom.h).
 *
 * Checks the arguments at the boundary (kind, rank, dtypes, C-contiguous input, lengths), allocates the
 * C-contiguous output on the input's device, and runs the device's FFT library over the whole batch in
 * one call. The output is freed on every error. LOOM_FFT_C2R_SCRATCH is LOOM_FFT_C2R with
 * RtFft.in_scratch set (the library may overwrite the input: no copy).
 */
#include <string.h>

#include "runtime/device.h"

/* An empty array is contiguous whatever its strides (loom gives new empty arrays zero strides, as NumPy). */
static bool c_contiguous(const LoomArray *a) {
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] == 0) return true;
  int64_t want = 1;
  for (int i = a->ndim - 1; i >= 0; i--) {
    if (a->shape[i] != 1 && a->strides[i] != want) return false;
    want *= a->shape[i];
  }
  return true;
}

static LoomStatus fft_impl(LoomContext *ctx, LoomFftKind kind, int32_t rank, int64_t n_last, const LoomArray *in,
                           LoomArray *out, Diag *d) {
  if ((unsigned)kind >= LOOM_FFT_KIND_COUNT) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_fft: unknown kind %d", (int)kind);
  bool scratch = kind == LOOM_FFT_C2R_SCRATCH; /* a C2R whose input the library may overwrite */
  if (scratch) kind = LOOM_FFT_C2R;
  if (!in || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_fft: in and out must not be NULL");
  if (rank < 1 || rank > 3 || rank > in->ndim)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_fft: rank %d for a %d-dimensional array (1 to 3, at most ndim)",
                      (int)rank, (int)in->ndim);
  bool complex_in = kind != LOOM_FFT_R2C;
  LoomDType t = in->dtype;
  if (complex_in ? (t != LOOM_COMPLEX64 && t != LOOM_COMPLEX128) : (t != LOOM_FLOAT32 && t != LOOM_FLOAT64))
    return diag_error(d, LOOM_ERR_DTYPE, "loom_fft: a %s input takes %s, not %s",
                      kind == LOOM_FFT_R2C ? "real-to-complex" : "complex", complex_in ? "complex64 or complex128" :
                      "float32 or float64", loom_dtype_name(t) ? loom_dtype_name(t) : "?");
  if (!c_contiguous(in)) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_fft: the input must be C-contiguous");
  LoomDType ct = t == LOOM_FLOAT32 ? LOOM_COMPLEX64 : t == LOOM_FLOAT64 ? LOOM_COMPLEX128 : t;
  RtFft f = {.kind = kind, .dtype = ct, .rank = rank, .in = in->data, .in_scratch = scratch};
  int nd = in->ndim;
  for (int i = 0; i < rank; i++) f.n[i] = in->shape[nd - rank + i];
  memset(out, 0, sizeof *out);
  *out = *in;
  out->data = NULL;
  out->dtype = kind == LOOM_FFT_R2C ? ct : kind == LOOM_FFT_C2R ? dtype_real_of(t) : t;
  if (kind == LOOM_FFT_R2C) out->shape[nd - 1] = in->shape[nd - 1] / 2 + 1;
  if (kind == LOOM_FFT_C2R) {
    if (n_last < 1 || n_last / 2 + 1 != in->shape[nd - 1])
      return diag_error(d, LOOM_ERR_SHAPE, "loom_fft: a complex-to-real transform of length %lld needs %lld input "
                        "values along the last dim, not %lld", (long long)n_last, (long long)(n_last / 2 + 1),
                        (long long)in->shape[nd - 1]);
    out->shape[nd - 1] = n_last;
    f.n[rank - 1] = n_last;
  }
  for (int i = 0; i < rank; i++)
    if (f.n[i] < 1)
      return diag_error(d, LOOM_ERR_SHAPE, "loom_fft: invalid number of data points (%lld) along dim %d", (long long)f.n[i],
                        nd - rank + i);
  f.batch = ir_numel(nd - rank, in->shape);
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) out->strides[i] = s, s *= out->shape[i] > 1 ? out->shape[i] : 1;
  const RtDevice *dev = rt_device(in->device);
  if (!dev) return diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_fft: unknown device kind %d", (int)in->device);
  if (!dev->linalg || !dev->linalg->fft)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_fft: the %s device has no FFT library in libloom", dev->name);
  if (loom_array_alloc(ctx, out) != LOOM_OK) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fft: %s", loom_last_error(ctx));
  if (f.batch == 0) return LOOM_OK;
  f.out = out->data;
  LoomStatus st = dev->linalg->fft(ctx, in->device_index, &f, d);
  if (st == LOOM_OK) rt_count_library_calls(ctx, 1);
  else loom_array_free(ctx, out);
  return st;
}

LOOM_API LoomStatus loom_fft(LoomContext *ctx, LoomFftKind kind, int32_t rank, int64_t n_last, const LoomArray *in,
                             LoomArray *out) {
  if (!ctx || !ctx->rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = fft_impl(ctx, kind, rank, n_last, in, out, &d);
  if (st == LOOM_OK) return LOOM_OK;
  return ctx_report(ctx, &d);
}
