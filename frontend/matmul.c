/* matmul.c (frontend): loom_matmul, NumPy's matmul (the `@` operator) on graph nodes.
 *
 * NumPy's rules, checked here so that errors surface at the line that builds the product: 0-d operands
 * are an error; a 1-d a is read as [1, K] and a 1-d b as [K, 1], the added dim dropped from the
 * result; the dims before the last two (batch dims) broadcast; the dtype is the two operands'
 * promotion. Float and complex results (a real operand times a complex one promotes as in NumPy) become
 * one IR_MATMUL (a library call: sgemm ... zgemm, cuBLASLt's 16F ... C_64F types) over operands cast to
 * that dtype and broadcast to the common batch dims (views, no copies). Matrix-vector products M @ v
 * (N = 1, v without batch dims) and integer and bool results (NumPy uses no BLAS for them either) become a
 * multiply (logical and for bool) over [B..., M, N, K] and a sum (any) over K in the result dtype, which
 * the fusion pass turns into one reduction kernel; integer overflow wraps as in NumPy. K = 0 or an empty
 * result gives zeros without a call.
 */
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

typedef struct Operand {
  int32_t node;
  int ndim;
  int64_t shape[LOOM_MAX_RANK];
} Operand;

static LoomStatus operand(IrGraph *g, LoomNode x, int which, Operand *o, Diag *d) {
  if (x < 0 || x >= g->nnodes)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_matmul: node %d is not a node of this graph (it has %d)",
                      x, g->nnodes);
  const IrNode *n = &g->nodes[x];
  if (n->ndim == 0)
    return diag_error(d, LOOM_ERR_SHAPE,
                      "matmul: Input operand %d does not have enough dimensions (has 0, gufunc core with signature "
                      "(n?,k),(k,m?)->(n?,m?) requires 1)", which);
  o->node = x;
  o->ndim = n->ndim;
  memcpy(o->shape, n->shape, sizeof o->shape);
  return LOOM_OK;
}

/* x cast to dtype (when it differs) and broadcast to shape (when it differs). */
static LoomStatus fit(IrGraph *g, int32_t x, LoomDType dtype, int nd, const int64_t *shape, int32_t *out, Diag *d) {
  LoomStatus st = LOOM_OK;
  if ((LoomDType)g->nodes[x].dtype != dtype) st = ir_cast(g, x, dtype, &x, d);
  const IrNode *n = &g->nodes[x];
  if (st == LOOM_OK && (n->ndim != nd || memcmp(n->shape, shape, sizeof(int64_t) * (size_t)nd) != 0))
    st = ir_broadcast(g, x, nd, shape, &x, d);
  *out = x;
  return st;
}

static LoomStatus build(IrGraph *g, LoomNode an, LoomNode bn, LoomNode *out, Diag *d) {
  Operand a, b;
  LoomStatus st;
  if ((st = operand(g, an, 0, &a, d)) || (st = operand(g, bn, 1, &b, d))) return st;
  bool a_vec = a.ndim == 1, b_vec = b.ndim == 1;
  if (a_vec) { /* [K] -> [1, K] */
    a.shape[1] = a.shape[0];
    a.shape[0] = 1;
    a.ndim = 2;
    if ((st = ir_reshape(g, a.node, 2, a.shape, &a.node, d))) return st;
  }
  if (b_vec) { /* [K] -> [K, 1] */
    b.shape[1] = 1;
    b.ndim = 2;
    if ((st = ir_reshape(g, b.node, 2, b.shape, &b.node, d))) return st;
  }
  int64_t m = a.shape[a.ndim - 2], k = a.shape[a.ndim - 1], n = b.shape[b.ndim - 1];
  if (b.shape[b.ndim - 2] != k)
    return diag_error(d, LOOM_ERR_SHAPE,
                      "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                      "(n?,k),(k,m?)->(n?,m?) (size %lld is different from %lld)",
                      (long long)b.shape[b.ndim - 2], (long long)k);
  /* batch dims: NumPy broadcasting of a.shape[:-2] and b.shape[:-2] */
  int nb = (a.ndim > b.ndim ? a.ndim : b.ndim) - 2;
  if (nb + 3 > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "matmul: at most %d batch dims are supported", LOOM_MAX_RANK - 3);
  int64_t batch[LOOM_MAX_RANK];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (a.ndim - 2)), ib = i - (nb - (b.ndim - 2));
    int64_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      char s1[200], s2[200];
      ir_format_shape(s1, sizeof s1, a.ndim - 2, a.shape);
      ir_format_shape(s2, sizeof s2, b.ndim - 2, b.shape);
      return diag_error(d, LOOM_ERR_SHAPE, "matmul: the batch dims %s and %s do not broadcast", s1, s2);
    }
    batch[i] = da == 1 ? db : da;
  }
  LoomDType dt = dtype_promote((LoomDType)g->nodes[an].dtype, (LoomDType)g->nodes[bn].dtype);
  int64_t rshape[LOOM_MAX_RANK], fshape[LOOM_MAX_RANK];
  memcpy(rshape, batch, sizeof(int64_t) * (size_t)nb);
  rshape[nb] = m;
  rshape[nb + 1] = n;
  int fnd = 0; /* the result without the dims added for 1-d operands */
  for (int i = 0; i < nb; i++) fshape[fnd++] = batch[i];
  if (!a_vec) fshape[fnd++] = m;
  if (!b_vec) fshape[fnd++] = n;
  int32_t r;
  /* a matrix-vector product M @ v (N = 1, v without batch dims; dot, vdot, inner of vectors) is bound by reading
   * the matrix once (2 flops per element): a row reduction over K, fused with what computes its operands,
   * reaches that; BLAS gemm with N = 1 ran one thread (2^22 float32 dot: 5 ms against 0.13; 2048^2 M @ v
   * 0.66 against NumPy's gemv 0.13). On an H100 (bench/results/2026-12-06-0212-matvec-h100.md) the
   * reduction beat cuBLASLt there (1.0-1.5x) but not for u @ M (M = 1: a column reduction, 0.77-1.0x) or
   * products with batched vectors (0.54x), which stay library calls (the graph does not know its device) */
  const char *lib = getenv("LOOM_MATMUL_VECTOR_LIBRARY"); /* "1": the library call as before (A/B) */
  bool gemv = n == 1 && b.ndim == 2 && !(lib && lib[0] == '1'); /* b without batch dims: a's rows times v */
  if ((dtype_is_float(dt) || dtype_is_complex(dt)) && !gemv) {
    if (k == 0 || ir_numel(nb + 2, rshape) == 0) { /* zeros: nothing to multiply */
      Scalar zero = {.f = 0};
      if ((st = ir_const(g, dt, zero, false, &r, d))) return st;
      if (fnd == 0) {
        *out = r;
        return LOOM_OK;
      }
      return ir_broadcast(g, r, fnd, fshape, out, d);
    }
    int64_t ashape[LOOM_MAX_RANK], bshape[LOOM_MAX_RANK];
    memcpy(ashape, batch, sizeof(int64_t) * (size_t)nb);
    memcpy(bshape, batch, sizeof(int64_t) * (size_t)nb);
    ashape[nb] = m, ashape[nb + 1] = k;
    bshape[nb] = k, bshape[nb + 1] = n;
    if ((st = fit(g, a.node, dt, nb + 2, ashape, &a.node, d)) || (st = fit(g, b.node, dt, nb + 2, bshape, &b.node, d)))
      return st;
    if ((st = ir_matmul(g, a.node, b.node, &r, d))) return st;
  } else {
    /* a [..., M, 1, K] * b^T [..., 1, N, K], folded over K */
    int64_t s[LOOM_MAX_RANK];
    int32_t perm[LOOM_MAX_RANK], x, y, p;
    if ((st = fit(g, a.node, dt, a.ndim, a.shape, &x, d))) return st;
    memcpy(s, a.shape, sizeof(int64_t) * (size_t)a.ndim);
    s[a.ndim - 1] = 1;
    s[a.ndim] = k;
    if ((st = ir_reshape(g, x, a.ndim + 1, s, &x, d))) return st;
    if ((st = fit(g, b.node, dt, b.ndim, b.shape, &y, d))) return st;
    for (int i = 0; i < b.ndim; i++) perm[i] = i;
    perm[b.ndim - 2] = b.ndim - 1;
    perm[b.ndim - 1] = b.ndim - 2;
    if ((st = ir_permute(g, y, perm, &y, d))) return st;
    memcpy(s, b.shape, sizeof(int64_t) * (size_t)b.ndim);
    s[b.ndim - 2] = 1;
    s[b.ndim - 1] = n;
    s[b.ndim] = k;
    if ((st = ir_reshape(g, y, b.ndim + 1, s, &y, d))) return st;
    int32_t src[2] = {x, y};
    if ((st = ir_elem(g, dt == LOOM_BOOL ? LOOM_OP_LOGICAL_AND : LOOM_OP_MUL, 2, src, &p, d))) return st;
    uint32_t axes = 1u << (nb + 2);
    LoomReduceOp op = dt == LOOM_BOOL ? LOOM_REDUCE_ANY : LOOM_REDUCE_SUM;
    if ((st = ir_reduce(g, op, p, axes, false, dt == LOOM_BOOL ? LOOM_DTYPE_COUNT : dt, &r, d))) return st;
  }
  if (fnd == nb + 2) {
    *out = r;
    return LOOM_OK;
  }
  return ir_reshape(g, r, fnd, fshape, out, d);
}

LoomStatus loom_matmul(LoomGraph *g, LoomNode a, LoomNode b, LoomNode *out) {
  if (!g) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {LOOM_OK, ""};
  int32_t mark = g->ir.nnodes, mark_in = g->ir.ninputs;
  if (!out) diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_matmul: out is NULL");
  else build(&g->ir, a, b, out, &d);
  if (d.status == LOOM_OK) return LOOM_OK;
  ir_graph_rollback(&g->ir, mark, mark_in);
  return ctx_report(g->ctx, &d);
}
