/* linalg_api.c: loom_linalg (decompositions and solvers on the arrays' device) and loom_set_allow_tf32.
 *
 * Checks the arguments at the boundary (op, dtypes, one device, column-major packed batches, shapes),
 * allocates the outputs on the device (column-major packed, so one descriptor describes what LAPACK and
 * cuSOLVER write), runs the device's RtLinalg.decompose over the whole batch, and turns LAPACK's info of
 * the first failing problem into LOOM_ERR_LINALG with NumPy's message. Outputs are freed on every error.
 * An SVD asked with LOOM_LINALG_ANY_VH_LAYOUT whose library wrote V (RtDecomp.vh_rows) gets vh's
 * descriptor row-major: the same memory read as V^T.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/device.h"

LOOM_API int loom_set_allow_tf32(LoomContext *ctx, int allow) {
  if (!ctx || !ctx->rt) return 0;
  int old = ctx->rt->allow_tf32;
  ctx->rt->allow_tf32 = allow != 0;
  return old;
}

static const char *const op_names[LOOM_LINALG_COUNT] = {"lu", "solve", "cholesky", "qr", "svd", "eigh"};

/* Whether a (rank >= 2) holds column-major matrices packed one after another. */
static bool column_major_packed(const LoomArray *a) {
  if (ir_numel(a->ndim, a->shape) == 0) return true;
  int64_t want = 1;
  int nd = a->ndim;
  int order[LOOM_MAX_RANK];
  order[0] = nd - 2, order[1] = nd - 1;
  for (int i = 2; i < nd; i++) order[i] = nd - 1 - i;
  for (int i = 0; i < nd; i++) {
    int ax = order[i];
    if (a->shape[ax] != 1 && a->strides[ax] != want) return false;
    want *= a->shape[ax];
  }
  return true;
}

/* Output i: dtype, the batch dims of in0, then dims[0..nd) (1 or 2 matrix/vector dims), column-major. */
static LoomStatus alloc_out(LoomContext *ctx, const LoomArray *in0, LoomDType dtype, int nd, int64_t r, int64_t c,
                            LoomArray *out, Diag *d) {
  memset(out, 0, sizeof *out);
  int nb = in0->ndim - 2;
  out->dtype = dtype;
  out->ndim = nb + nd;
  out->device = in0->device;
  out->device_index = in0->device_index;
  memcpy(out->shape, in0->shape, sizeof(int64_t) * (size_t)nb);
  out->shape[nb] = r;
  if (nd == 2) out->shape[nb + 1] = c;
  if (loom_array_alloc(ctx, out) != LOOM_OK)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "linalg: %s", loom_last_error(ctx));
  if (nd == 2) { /* column-major matrices, packed */
    int64_t s = r * c;
    out->strides[nb] = 1;
    out->strides[nb + 1] = r;
    for (int i = nb - 1; i >= 0; i--) {
      out->strides[i] = s;
      s *= out->shape[i];
    }
  }
  return LOOM_OK;
}

/* Every matrix of out (square r x r) set to the identity: an empty problem's complete Q, U and Vh
 * (NumPy's). The packed column-major identity has the bytes of a row-major one, so out is written as
 * one flat vector: in place on the host, else built on the host and copied. */
static LoomStatus fill_identity(LoomContext *ctx, const LoomArray *out, int64_t r, Diag *d) {
  int64_t numel = ir_numel(out->ndim, out->shape);
  if (numel == 0) return LOOM_OK;
  size_t es = (size_t)dtype_bits(out->dtype) / 8;
  bool host = out->device == LOOM_DEVICE_HOST;
  char *p = host ? out->data : ctx_calloc(ctx, (size_t)numel, es);
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: identity matrices (%lld elements)", (long long)numel);
  if (host) memset(p, 0, (size_t)numel * es);
  for (int64_t i = 0; i < numel; i += r * r)
    for (int64_t j = 0; j < r; j++) {
      char *e = p + (size_t)(i + j * r + j) * es;
      if (out->dtype == LOOM_FLOAT32 || out->dtype == LOOM_COMPLEX64) *(float *)(void *)e = 1.0f;
      else *(double *)(void *)e = 1.0;
    }
  if (host) return LOOM_OK;
  LoomArray src = {.dtype = out->dtype, .ndim = 1, .shape = {numel}, .strides = {1}, .data = p,
                   .device = LOOM_DEVICE_HOST};
  LoomArray dst = *out;
  dst.ndim = 1;
  dst.shape[0] = numel;
  dst.strides[0] = 1;
  LoomStatus st = loom_array_copy(ctx, &dst, &src);
  ctx_free(ctx, p);
  return st == LOOM_OK ? LOOM_OK : diag_error(d, st, "linalg: %s", loom_last_error(ctx));
}

static LoomStatus linalg_impl(LoomContext *ctx, LoomLinalgOp op, int32_t flags, int32_t nin, const LoomArray *in,
                              int32_t nout, LoomArray *out, Diag *d) {
  if ((unsigned)op >= LOOM_LINALG_COUNT)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_linalg: unknown op %d", (int)op);
  const char *name = op_names[op];
  int want_in = op == LOOM_LINALG_SOLVE ? 2 : 1;
  if (nin != want_in || !in)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_linalg: %s takes %d input%s", name, want_in, want_in > 1 ? "s" : "");
  bool values = (flags & LOOM_LINALG_VALUES_ONLY) != 0;
  int want_out = op == LOOM_LINALG_LU ? 2 : op == LOOM_LINALG_SOLVE || op == LOOM_LINALG_CHOLESKY ? 1
                 : op == LOOM_LINALG_SVD ? (values ? 1 : 3) : (values ? 1 : 2);
  if (nout != want_out || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_linalg: %s with these flags gives %d output%s", name,
                      want_out, want_out > 1 ? "s" : "");
  const LoomArray *a = &in[0];
  for (int i = 0; i < nin; i++) {
    const LoomArray *x = &in[i];
    if (x->ndim < 2 || x->ndim > LOOM_MAX_RANK)
      return diag_error(d, LOOM_ERR_SHAPE, "%s: %d-dimensional array given. Array must be at least two-dimensional",
                        name, x->ndim);
    if (x->dtype != LOOM_FLOAT32 && x->dtype != LOOM_FLOAT64 && x->dtype != LOOM_COMPLEX64 &&
        x->dtype != LOOM_COMPLEX128)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: array type %s is unsupported in linalg (float32, float64, complex64 or "
                        "complex128)", name,
                        loom_dtype_name(x->dtype) ? loom_dtype_name(x->dtype) : "?");
    if (x->dtype != a->dtype || x->device != a->device || x->device_index != a->device_index)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: the inputs must share one dtype and one device", name);
    if (!column_major_packed(x))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: input %d must hold column-major matrices packed one after "
                        "another (strides [..., 1, rows])", name, i);
    if (!x->data && ir_numel(x->ndim, x->shape) > 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: no data", name);
  }
  const RtDevice *dev = rt_device(a->device);
  if (!dev) return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: unknown device kind %d", name, (int)a->device);
  if (!dev->linalg || !dev->linalg->decompose)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s on the %s device is not supported", name, dev->name);
  int nb = a->ndim - 2;
  int64_t m = a->shape[nb], n = a->shape[nb + 1], k = 0, batch = ir_numel(nb, a->shape), mn = m < n ? m : n;
  bool square = op != LOOM_LINALG_QR && op != LOOM_LINALG_SVD;
  if (square && m != n) return diag_error(d, LOOM_ERR_LINALG, "Last 2 dimensions of the array must be square");
  if (op == LOOM_LINALG_SOLVE) {
    const LoomArray *b = &in[1];
    if (b->ndim != a->ndim || memcmp(b->shape, a->shape, sizeof(int64_t) * (size_t)nb) != 0 || b->shape[nb] != n)
      return diag_error(d, LOOM_ERR_SHAPE, "solve: b must have a's batch dims and %lld rows", (long long)n);
    k = b->shape[nb + 1];
  }
  bool complete = (flags & LOOM_LINALG_COMPLETE) != 0;
  /* singular values and eigenvalues are real: the real dtype of a's precision */
  LoomDType real = a->dtype == LOOM_COMPLEX64 ? LOOM_FLOAT32 : a->dtype == LOOM_COMPLEX128 ? LOOM_FLOAT64 : a->dtype;
  LoomStatus st = LOOM_OK;
  int no = 0;
  memset(out, 0, sizeof *out * (size_t)nout);
  switch (op) {
  case LOOM_LINALG_LU:
    if ((st = alloc_out(ctx, a, a->dtype, 2, n, n, &out[no++], d)) == LOOM_OK)
      st = alloc_out(ctx, a, LOOM_INT32, 1, n, 0, &out[no++], d);
    break;
  case LOOM_LINALG_SOLVE: st = alloc_out(ctx, a, a->dtype, 2, n, k, &out[no++], d); break;
  case LOOM_LINALG_CHOLESKY: st = alloc_out(ctx, a, a->dtype, 2, n, n, &out[no++], d); break;
  case LOOM_LINALG_QR:
    if ((st = alloc_out(ctx, a, a->dtype, 2, m, n, &out[no++], d)) == LOOM_OK && !values)
      st = alloc_out(ctx, a, a->dtype, 2, m, complete ? m : mn, &out[no++], d);
    break;
  case LOOM_LINALG_SVD:
    if ((st = alloc_out(ctx, a, real, 1, mn, 0, &out[no++], d)) == LOOM_OK && !values &&
        (st = alloc_out(ctx, a, a->dtype, 2, m, complete ? m : mn, &out[no++], d)) == LOOM_OK)
      st = alloc_out(ctx, a, a->dtype, 2, complete ? n : mn, n, &out[no++], d);
    break;
  case LOOM_LINALG_EIGH:
    if ((st = alloc_out(ctx, a, real, 1, n, 0, &out[no++], d)) == LOOM_OK && !values)
      st = alloc_out(ctx, a, a->dtype, 2, n, n, &out[no++], d);
    break;
  default: break;
  }
  int64_t *info = NULL;
  if (st == LOOM_OK && complete && !values && (m == 0 || n == 0)) { /* no problem to solve; Q, U, Vh: identities */
    if (op == LOOM_LINALG_QR) st = fill_identity(ctx, &out[1], m, d);
    if (op == LOOM_LINALG_SVD && (st = fill_identity(ctx, &out[1], m, d)) == LOOM_OK)
      st = fill_identity(ctx, &out[2], n, d);
  }
  if (st == LOOM_OK && batch > 0 && m > 0 && n > 0 && (op != LOOM_LINALG_SOLVE || k > 0)) {
    info = ctx_calloc(ctx, (size_t)batch, sizeof *info);
    if (!info) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: linalg status of %lld matrices", (long long)batch);
    bool vh_rows = false;
    RtDecomp r = {.op = (RtDecompOp)op, .dtype = a->dtype, .flags = flags, .batch = batch, .m = m, .n = n, .k = k,
                  .info = info, .vh_rows = &vh_rows};
    r.in[0] = a->data;
    r.in[1] = nin > 1 ? in[1].data : NULL;
    for (int i = 0; i < no && i < 3; i++) r.out[i] = out[i].data;
    if (st == LOOM_OK) st = dev->linalg->decompose(ctx, a->device_index, &r, d);
    if (st == LOOM_OK) rt_count_library_calls(ctx, 1);
    if (st == LOOM_OK && vh_rows && op == LOOM_LINALG_SVD && !values) { /* V column-major: vh row-major */
      out[2].strides[nb] = n;
      out[2].strides[nb + 1] = 1;
    }
    for (int64_t i = 0; st == LOOM_OK && i < batch; i++) {
      if (info[i] == 0) continue;
      char where[64] = "";
      if (batch > 1) snprintf(where, sizeof where, " (matrix %lld of the batch)", (long long)i);
      if (info[i] < 0)
        st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: %s: argument %lld of the library call is invalid", name,
                        (long long)-info[i]);
      else if (op == LOOM_LINALG_SOLVE) st = diag_error(d, LOOM_ERR_LINALG, "Singular matrix%s", where);
      else if (op == LOOM_LINALG_CHOLESKY) st = diag_error(d, LOOM_ERR_LINALG, "Matrix is not positive definite%s", where);
      else if (op == LOOM_LINALG_SVD) st = diag_error(d, LOOM_ERR_LINALG, "SVD did not converge%s", where);
      else if (op == LOOM_LINALG_EIGH) st = diag_error(d, LOOM_ERR_LINALG, "Eigenvalues did not converge%s", where);
      else st = diag_error(d, LOOM_ERR_LINALG, "%s failed (info %lld)%s", name, (long long)info[i], where);
    }
  }
  ctx_free(ctx, info);
  if (st != LOOM_OK)
    for (int i = 0; i < no; i++) loom_array_free(ctx, &out[i]);
  return st;
}

LOOM_API LoomStatus loom_linalg(LoomContext *ctx, LoomLinalgOp op, int32_t flags, int32_t nin, const LoomArray *in,
                                int32_t nout, LoomArray *out) {
  if (!ctx || !ctx->rt) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomStatus st = linalg_impl(ctx, op, flags, nin, in, nout, out, &d);
  if (st == LOOM_OK) return LOOM_OK;
  return ctx_report(ctx, &d);
}
