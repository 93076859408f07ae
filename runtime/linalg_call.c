/* linalg_call.c: rt_run_call, a call kernel (KernelIr.call) of a schedule as calls of its device's
 * library (linalg.h's RtGemm).
 *
 * A matmul call kernel iterates [B..., M, N, K] with per-buffer strides (passes/lower.c). Here those
 * become the fewest library calls: each matrix's (row, column) strides are made BLAS-shaped (size-1
 * dims get the stride the library expects); batch dims next to M that the b operand broadcasts (stride
 * 0) while a, c and the result continue along M are folded into M (x [B, S, K] @ w [K, N] is one
 * [B*S, K] @ [K, N] product); remaining batch dims that are contiguous with each other in every buffer
 * merge into one strided batch; any dims left over are looped here, one library call each.
 */
#include <string.h>

#include "runtime/device.h"

void rt_count_library_calls(LoomContext *ctx, uint64_t n) {
  pthread_mutex_lock(&ctx->rt->stats_lock);
  ctx->rt->stats.library_calls += n;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
}

/* Makes the strides of an r x c matrix BLAS-shaped: one unit stride, the other its leading dimension
 * (at least the extent along the unit dim). row_major: the column stride must be the unit one. A
 * vector's size-1 dim gets the stride the library expects. False when the strides cannot be. */
static bool blas_shape(int64_t r, int64_t c, int64_t *rs, int64_t *cs, bool row_major) {
  if (r == 1 && c == 1) {
    *rs = *cs = 1;
    return true;
  }
  if (c == 1) { /* a column: elements rs apart */
    if (row_major || *rs != 1) {
      *cs = 1;
      return *rs >= 1;
    }
    *cs = r;
    return true;
  }
  if (r == 1) { /* a row: elements cs apart */
    if (*cs == 1) {
      *rs = c;
      return true;
    }
    *rs = 1;
    return !row_major && *cs >= 1;
  }
  if (*cs == 1 && *rs >= c) return true;
  return !row_major && *rs == 1 && *cs >= r;
}

/* Whether a batch dim of stride bstride continues the rows of an m x cols row-major matrix of row
 * stride *rs and column stride cs (then *rs is the stride of the folded rows). */
static bool continues(int64_t m, int64_t cols, int64_t *rs, int64_t cs, int64_t bstride) {
  if (cs != 1 && cols != 1) return false;
  int64_t r = m == 1 ? bstride : *rs;
  if (bstride != r * m || r < cols) return false;
  *rs = r;
  return true;
}

enum { A, B, D, C, NMAT };

typedef struct BatchDim {
  int64_t size;
  int64_t stride[NMAT];
} BatchDim;

LoomStatus rt_run_call(LoomContext *ctx, const RtDevice *dev, int index, const SchedKernel *sk, void *const *base,
                       Diag *d) {
  const KernelIr *k = sk->ir;
  const KCall *call = k->call;
  if (call->op != KC_MATMUL || k->ndim < 3 || k->ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: malformed call kernel %s", k->name);
  if (!dev->linalg || !dev->linalg->gemm)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matrix products on the %s device are not supported (it has no BLAS)",
                      dev->name);
  int nb = k->ndim - 3;
  int64_t m = sk->shape[nb], n = sk->shape[nb + 1], kk = sk->shape[nb + 2];
  for (int i = 0; i < k->ndim; i++)
    if (sk->shape[i] == 0) return LOOM_OK; /* nothing to write (K = 0 never reaches a call) */
  int32_t buf[NMAT] = {call->a, call->b, call->out, call->c};
  const int64_t *s[NMAT];
  for (int i = 0; i < NMAT; i++) s[i] = buf[i] >= 0 ? sk->bind[buf[i]].strides : NULL;
  RtGemm g;
  memset(&g, 0, sizeof g);
  g.dtype = (LoomDType)k->bufs[call->out].dtype;
  g.k = kk;
  g.alpha = call->alpha;
  g.beta = call->beta;
  g.act = call->act;
  g.allow_tf32 = ctx->rt->allow_tf32 != 0;
  g.a_rs = s[A][nb], g.a_cs = s[A][nb + 2];
  g.b_rs = s[B][nb + 2], g.b_cs = s[B][nb + 1];
  g.d_rs = s[D][nb], g.d_cs = s[D][nb + 1];
  if (s[C]) g.c_rs = s[C][nb], g.c_cs = s[C][nb + 1];
  if (call->bias >= 0) {
    int64_t bs = sk->bind[call->bias].strides[nb + 1];
    if (bs != 1 && n != 1) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: %s: bias stride %lld", k->name, (long long)bs);
  }
  /* batch dims of size > 1; fold the innermost ones into M while they continue it */
  BatchDim dims[LOOM_MAX_RANK];
  int nd = 0;
  for (int i = 0; i < nb; i++) {
    if (sk->shape[i] == 1) continue;
    dims[nd].size = sk->shape[i];
    for (int j = 0; j < NMAT; j++) dims[nd].stride[j] = s[j] ? s[j][i] : 0;
    nd++;
  }
  while (nd > 0) {
    const BatchDim *bd = &dims[nd - 1];
    int64_t ars = g.a_rs, drs = g.d_rs, crs = g.c_rs;
    if (bd->stride[B] != 0 || !continues(m, kk, &ars, g.a_cs, bd->stride[A]) ||
        !continues(m, n, &drs, g.d_cs, bd->stride[D]) || (s[C] && !continues(m, n, &crs, g.c_cs, bd->stride[C])))
      break;
    g.a_rs = ars, g.d_rs = drs, g.c_rs = crs;
    m *= bd->size;
    nd--;
  }
  g.m = m;
  g.n = n;
  if (!blas_shape(m, kk, &g.a_rs, &g.a_cs, false) || !blas_shape(kk, n, &g.b_rs, &g.b_cs, false) ||
      !blas_shape(m, n, &g.d_rs, &g.d_cs, true) || (s[C] && !blas_shape(m, n, &g.c_rs, &g.c_cs, true)))
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: %s: a matrix has strides no BLAS takes", k->name);
  /* merge batch dims that are contiguous with each other in every buffer */
  for (int i = nd - 2; i >= 0; i--) {
    bool ok = true;
    for (int j = 0; j < NMAT; j++)
      if (dims[i].stride[j] != dims[i + 1].stride[j] * dims[i + 1].size) ok = false;
    if (!ok) continue;
    dims[i].size *= dims[i + 1].size;
    dims[i].stride[A] = dims[i + 1].stride[A], dims[i].stride[B] = dims[i + 1].stride[B];
    dims[i].stride[C] = dims[i + 1].stride[C], dims[i].stride[D] = dims[i + 1].stride[D];
    memmove(&dims[i + 1], &dims[i + 2], sizeof dims[0] * (size_t)(nd - i - 2));
    nd--;
  }
  g.batch = 1;
  if (nd > 0) { /* the innermost dim is the library's strided batch */
    g.batch = dims[nd - 1].size;
    g.a_bs = dims[nd - 1].stride[A], g.b_bs = dims[nd - 1].stride[B];
    g.d_bs = dims[nd - 1].stride[D], g.c_bs = dims[nd - 1].stride[C];
    nd--;
  }
  size_t isz = (size_t)dtype_bits(g.dtype) / 8;
  int64_t idx[LOOM_MAX_RANK] = {0}, off[NMAT] = {0}, ncalls = 0;
  LoomStatus st = LOOM_OK;
  for (;;) { /* the outer dims left: one call per point */
    g.a = (const char *)base[call->a] + off[A] * (int64_t)isz;
    g.b = (const char *)base[call->b] + off[B] * (int64_t)isz;
    g.d = (char *)base[call->out] + off[D] * (int64_t)isz;
    g.c = call->c >= 0 ? (const char *)base[call->c] + off[C] * (int64_t)isz : NULL;
    g.bias = call->bias >= 0 ? base[call->bias] : NULL;
    st = dev->linalg->gemm(ctx, index, &g, d);
    ncalls++;
    if (st != LOOM_OK) break;
    int i = nd - 1;
    for (; i >= 0; i--) {
      for (int j = 0; j < NMAT; j++) off[j] += dims[i].stride[j];
      if (++idx[i] < dims[i].size) break;
      for (int j = 0; j < NMAT; j++) off[j] -= dims[i].stride[j] * dims[i].size;
      idx[i] = 0;
    }
    if (i < 0) break;
  }
  rt_count_library_calls(ctx, (uint64_t)ncalls);
  return st;
}
