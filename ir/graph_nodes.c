/* SPDX-License-Identifier: Apache-2.0 */
/* graph_nodes.c: the graph IR's validating constructors of every node but elementwise ones: casts,
 * movement (broadcast, reshape, permute, slice), reductions, scans, copies, matrix products, iotas.
 *
 * Contract: each checks its operands (a node of the graph, rank, axes, extents, dtypes) and returns
 * LOOM_ERR_SHAPE / INVALID_ARGUMENT with a message, or the hash-consed node with its shape and dtype
 * inferred (NumPy 2 rules); nothing is added on error.
 */
#include <string.h>

#include "ir/graph_internal.h"

/* ---- casts and movement ---------------------------------------------------------------------------------- */
LoomStatus ir_cast(IrGraph *g, int32_t x, LoomDType dtype, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cast: null argument");
  LoomStatus st = ir_check_node(g, x, "cast", d);
  if (st) return st;
  if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
    return diag_error(d, LOOM_ERR_DTYPE, "cast: target dtype %d is not a LoomDType", (int)dtype);
  const IrNode *s = &g->nodes[x];
  IrNode n;
  ir_node_init(&n, IR_CAST, dtype, s->ndim, s->shape);
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_broadcast(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "broadcast_to: null argument");
  LoomStatus st = ir_check_node(g, x, "broadcast_to", d);
  if (st || (st = ir_check_shape(ndim, shape, "broadcast_to", d))) return st;
  const IrNode *s = &g->nodes[x];
  bool ok = s->ndim <= ndim;
  for (int i = 0; ok && i < s->ndim; i++) {
    int64_t a = s->shape[i], b = shape[ndim - s->ndim + i];
    ok = a == b || a == 1;
  }
  if (!ok) {
    char a[400], b[400];
    ir_format_shape(a, sizeof a, s->ndim, s->shape);
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "cannot broadcast an array of shape %s to shape %s", a, b);
  }
  IrNode n;
  ir_node_init(&n, IR_BROADCAST, (LoomDType)s->dtype, ndim, shape);
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_reshape(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reshape: null argument");
  LoomStatus st = ir_check_node(g, x, "reshape", d);
  if (st || (st = ir_check_shape(ndim, shape, "reshape", d))) return st;
  const IrNode *s = &g->nodes[x];
  int64_t n0 = ir_numel(s->ndim, s->shape), n1 = ir_numel(ndim, shape);
  if (n0 != n1) {
    char b[400];
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "cannot reshape array of size %lld into shape %s", (long long)n0, b);
  }
  IrNode n;
  ir_node_init(&n, IR_RESHAPE, (LoomDType)s->dtype, ndim, shape);
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_permute(IrGraph *g, int32_t x, const int32_t *perm, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "permute: null argument");
  LoomStatus st = ir_check_node(g, x, "permute", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  if (s->ndim > 0 && !perm) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "permute: perm is NULL");
  bool seen[LOOM_MAX_RANK] = {false};
  IrNode n;
  ir_node_init(&n, IR_PERMUTE, (LoomDType)s->dtype, s->ndim, NULL);
  for (int i = 0; i < s->ndim; i++) {
    int32_t p = perm[i];
    if (p < 0 || p >= s->ndim || seen[p])
      return diag_error(d, LOOM_ERR_AXIS, "permute: axes are not a permutation of 0..%d (entry %d is %d)",
                        s->ndim - 1, i, p);
    seen[p] = true;
    n.arg[i] = p;
    n.shape[i] = s->shape[p];
  }
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_slice(IrGraph *g, int32_t x, const int64_t *start, const int64_t *step, const int64_t *len,
                    int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: null argument");
  LoomStatus st = ir_check_node(g, x, "slice", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  if (s->ndim > 0 && (!start || !step || !len))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: start, step and len must not be NULL");
  IrNode n;
  ir_node_init(&n, IR_SLICE, (LoomDType)s->dtype, s->ndim, NULL);
  for (int i = 0; i < s->ndim; i++) {
    int64_t dim = s->shape[i], b = start[i], k = step[i], l = len[i];
    if (k == 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: step of axis %d is 0", i);
    if (l < 0 || l > dim)
      return diag_error(d, LOOM_ERR_SHAPE, "slice: length %lld of axis %d is outside 0..%lld", (long long)l, i,
                        (long long)dim);
    if (l == 0) {
      b = 0; /* every empty slice of an axis is the same slice */
      k = 1;
    } else if (l == 1) {
      if (b < 0 || b >= dim)
        return diag_error(d, LOOM_ERR_SHAPE, "slice: start %lld of axis %d is outside 0..%lld", (long long)b, i,
                          (long long)dim - 1);
      k = 1; /* one element: its step is irrelevant (and a huge one must not reach stride math) */
    } else {
      __int128 last = (__int128)b + (__int128)(l - 1) * k;
      if (b < 0 || b >= dim || last < 0 || last >= dim)
        return diag_error(d, LOOM_ERR_SHAPE,
                          "slice: axis %d of size %lld cannot read %lld elements from %lld by step %lld", i,
                          (long long)dim, (long long)l, (long long)b, (long long)k);
    }
    n.arg[i] = b;
    n.arg2[i] = k;
    n.shape[i] = l;
  }
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_reduce(IrGraph *g, LoomReduceOp op, int32_t x, uint32_t axes, bool keepdims, LoomDType dtype,
                     int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reduce: null argument");
  LoomStatus st = ir_check_node(g, x, "reduce", d);
  if (st) return st;
  const char *name = reduce_op_name(op);
  if (!name) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reduce: %d is not a LoomReduceOp", (int)op);
  const IrNode *s = &g->nodes[x];
  if (s->ndim < 32 && (axes >> s->ndim) != 0)
    return diag_error(d, LOOM_ERR_AXIS, "%s: axis mask 0x%x names axes beyond dimension %d", name, axes, s->ndim);
  LoomDType src = (LoomDType)s->dtype, rt;
  DKind k = dtype_kind(src);
  switch (op) {
  case LOOM_REDUCE_SUM:
  case LOOM_REDUCE_PROD:
    rt = k == DK_FLOAT || k == DK_COMPLEX ? src : k == DK_UINT ? LOOM_UINT64 : LOOM_INT64;
    break;
  case LOOM_REDUCE_MEAN: rt = k == DK_FLOAT || k == DK_COMPLEX ? src : LOOM_FLOAT64; break;
  case LOOM_REDUCE_ANY:
  case LOOM_REDUCE_ALL: rt = LOOM_BOOL; break;
  case LOOM_REDUCE_ARGMIN:
  case LOOM_REDUCE_ARGMAX: rt = LOOM_INT64; break;
  default: rt = src; break;
  }
  if (dtype != LOOM_DTYPE_COUNT) {
    if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: dtype %d is not a LoomDType", name, (int)dtype);
    if (rt != dtype && (op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL || op == LOOM_REDUCE_ARGMIN ||
                        op == LOOM_REDUCE_ARGMAX))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: the result dtype is always %s; pass LOOM_DTYPE_COUNT", name,
                        loom_dtype_name(rt));
    rt = dtype;
  }
  IrNode n;
  ir_node_init(&n, IR_REDUCE, rt, 0, NULL);
  int64_t rcount = 1;
  for (int i = 0; i < s->ndim; i++) {
    if (axes & (1u << i)) {
      rcount *= s->shape[i] ? 1 : 0;
      if (keepdims) n.shape[n.ndim++] = 1;
    } else {
      n.shape[n.ndim++] = s->shape[i];
    }
  }
  if (rcount == 0 && /* NumPy: also when the result is empty (max over axes (0, 1) of a (0, 0, 4) array) */
      (op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX || op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX)) {
    const char *np = op == LOOM_REDUCE_MIN ? "minimum" : op == LOOM_REDUCE_MAX ? "maximum" : name;
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "zero-size array to reduction operation %s which has no identity", np);
  }
  n.op = (uint16_t)op;
  n.axes = axes;
  n.flags = keepdims ? IR_FLAG_KEEPDIMS : 0;
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_scan(IrGraph *g, LoomReduceOp op, int32_t x, int axis, LoomDType dtype, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scan: null argument");
  LoomStatus st = ir_check_node(g, x, "scan", d);
  if (st) return st;
  if (op != LOOM_REDUCE_SUM && op != LOOM_REDUCE_PROD && op != LOOM_REDUCE_MIN && op != LOOM_REDUCE_MAX)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scan: op %d is not sum, prod, min or max", (int)op);
  const char *name = reduce_op_name(op);
  const IrNode *s = &g->nodes[x];
  if (s->ndim < 1) return diag_error(d, LOOM_ERR_AXIS, "cumulative %s: the array must be at least 1-d", name);
  if (axis < 0 || axis >= s->ndim)
    return diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, s->ndim);
  LoomDType src = (LoomDType)s->dtype, rt = src;
  DKind k = dtype_kind(src);
  if (op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_PROD)
    rt = k == DK_FLOAT || k == DK_COMPLEX ? src : k == DK_UINT ? LOOM_UINT64 : LOOM_INT64;
  if (dtype != LOOM_DTYPE_COUNT) {
    if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
      return diag_error(d, LOOM_ERR_DTYPE, "cumulative %s: dtype %d is not a LoomDType", name, (int)dtype);
    rt = dtype;
  }
  if ((op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX) && dtype_is_complex(rt))
    return diag_error(d, LOOM_ERR_DTYPE, "cumulative %s: complex values have no order here", name);
  IrNode n;
  ir_node_init(&n, IR_SCAN, rt, s->ndim, s->shape);
  n.op = (uint16_t)op;
  n.axes = 1u << axis;
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_copy(IrGraph *g, int32_t x, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "copy: null argument");
  LoomStatus st = ir_check_node(g, x, "copy", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  IrNode n;
  ir_node_init(&n, IR_COPY, (LoomDType)s->dtype, s->ndim, s->shape);
  n.src[0] = x;
  return ir_add_node(g, &n, out, d);
}

int ir_node_arity(const IrNode *n) {
  if (n->kind == IR_INPUT || n->kind == IR_CONST || n->kind == IR_IOTA) return 0;
  if (n->kind == IR_MATMUL) return 2;
  if (n->kind == IR_GATHER || n->kind == IR_SCATTER) return 3;
  if (n->kind == IR_ELEM) {
    const OpInfo *info = op_info((LoomOp)n->op);
    return info ? info->arity : 0;
  }
  return 1;
}

LoomStatus ir_matmul(IrGraph *g, int32_t a, int32_t b, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "matmul: null argument");
  LoomStatus st = ir_check_node(g, a, "matmul", d);
  if (!st) st = ir_check_node(g, b, "matmul", d);
  if (st) return st;
  const IrNode *x = &g->nodes[a], *y = &g->nodes[b];
  char s1[160], s2[160];
  ir_format_shape(s1, sizeof s1, x->ndim, x->shape);
  ir_format_shape(s2, sizeof s2, y->ndim, y->shape);
  if (x->ndim < 2 || x->ndim != y->ndim)
    return diag_error(d, LOOM_ERR_SHAPE, "matmul: operands of shapes %s and %s must have one rank >= 2", s1, s2);
  int nd = x->ndim;
  for (int i = 0; i < nd - 2; i++)
    if (x->shape[i] != y->shape[i])
      return diag_error(d, LOOM_ERR_SHAPE, "matmul: batch dims of %s and %s differ (broadcast them first)", s1, s2);
  if (x->shape[nd - 1] != y->shape[nd - 2] || x->shape[nd - 1] < 1)
    return diag_error(d, LOOM_ERR_SHAPE, "matmul: %s @ %s: the contracted dims must be equal and >= 1", s1, s2);
  if (x->dtype != y->dtype || !(dtype_is_float((LoomDType)x->dtype) || dtype_is_complex((LoomDType)x->dtype)))
    return diag_error(d, LOOM_ERR_DTYPE, "matmul: operands must share one float or complex dtype, not %s and %s",
                      loom_dtype_name((LoomDType)x->dtype), loom_dtype_name((LoomDType)y->dtype));
  IrNode n;
  ir_node_init(&n, IR_MATMUL, (LoomDType)x->dtype, nd, x->shape);
  n.shape[nd - 1] = y->shape[nd - 1];
  n.src[0] = a;
  n.src[1] = b;
  return ir_add_node(g, &n, out, d);
}

LoomStatus ir_iota(IrGraph *g, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out || (ndim > 0 && !shape)) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "iota: null argument");
  LoomStatus st = ir_check_shape(ndim, shape, "iota", d);
  if (st) return st;
  IrNode n;
  ir_node_init(&n, IR_IOTA, LOOM_INT64, ndim, shape);
  return ir_add_node(g, &n, out, d);
}
