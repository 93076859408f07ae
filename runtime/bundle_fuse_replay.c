/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_fuse_replay.c: a bundled @loom.fuse record rebuilt into a graph (bundle_fuse.h), for a call's
 * arrays and scalars. Needs only the graph IR (ir/graph.c), so the bundle fuzzer runs it too.
 *
 * Per record node in order, the graph constructor that made the node in the trace (ir_elem, ir_cast,
 * ir_permute, ir_reduce, ir_scan, ir_matmul, ir_const) is called on the rebuilt sources: shapes come back
 * through the constructors' own rules (broadcasting, reduced axes), dtypes and NEP 50 resolution are
 * recomputed, and the result must have the record's kind, dtype, rank and weak flag (else the record does
 * not fit the call and the caller traces). A constant bound to a scalar argument is made from the call's
 * value as the trace made it: a weak constant of the Python type, converted by value (ir_weak_to) when
 * the record's node is the converted one; a Python int out of the target's range fails the rebuild (the
 * trace then raises NumPy's error). Every node goes through the validating constructors, so a record that
 * passed the format's checks but lies still yields a valid graph: it cannot make the passes read out of
 * bounds, only compute something else (a bundle is code: trust it as a shared library).
 */
#include <string.h>

#include "runtime/bundle_fuse.h"

/* A scalar argument as the trace saw it: a weak constant of its Python type. */
static void scalar_weak(const LoomFuseArg *a, LoomDType *t, Scalar *v) {
  memset(v, 0, sizeof *v);
  switch (a->kind) {
  case LOOM_FUSE_BOOL: *t = LOOM_BOOL, v->u = a->i != 0; break;
  case LOOM_FUSE_INT: *t = LOOM_INT64, v->i = a->i; break;
  case LOOM_FUSE_FLOAT: *t = LOOM_FLOAT64, v->f = a->re; break;
  default: *t = LOOM_COMPLEX128, v->f = a->re, v->im = a->im; break;
  }
}

/* The node for scalar argument a where the record has constant n (see the file comment). */
LoomStatus rt_fuse_scalar_node(IrGraph *g, const LoomFuseArg *a, const RtFuseNode *n, int32_t *out, Diag *d) {
  LoomDType t;
  Scalar v;
  scalar_weak(a, &t, &v);
  int32_t w;
  LoomStatus st = ir_const(g, t, v, true, &w, d);
  if (st) return st;
  if (n->flags & IR_FLAG_WEAK) {
    if (t != (LoomDType)n->dtype) return diag_error(d, LOOM_ERR_DTYPE, "fuse record: a weak %s argument where the record has %s",
                                                   loom_dtype_name(t), loom_dtype_name((LoomDType)n->dtype));
    *out = w;
    return LOOM_OK;
  }
  int range = 0;
  if ((st = ir_weak_to(g, w, (LoomDType)n->dtype, &range, out, d))) return st;
  return range ? ir_weak_range_error(g, w, (LoomDType)n->dtype, d) : LOOM_OK;
}

bool rt_fuse_unit_reshape(int sn, const int64_t *from, int n, const int64_t *to, uint8_t *map) {
  int i = 0;
  for (int k = 0; k < n; k++) {
    while (i < sn && from[i] == 1 && to[k] != 1) i++; /* a dropped axis of size 1 */
    if (i < sn && from[i] == to[k]) map[k] = (uint8_t)i++;
    else if (to[k] == 1) map[k] = RF_NEW_AXIS;
    else return false;
  }
  for (; i < sn; i++)
    if (from[i] != 1) return false;
  return true;
}

bool rt_fuse_whole_slice(const IrNode *s, const IrNode *n, uint8_t *dir) {
  if (s->ndim != n->ndim) return false;
  for (int k = 0; k < n->ndim; k++) {
    int64_t dim = s->shape[k];
    if (n->shape[k] != dim) return false;
    if (dim <= 1 || (n->arg[k] == 0 && n->arg2[k] == 1)) dir[k] = 0;
    else if (n->arg[k] == dim - 1 && n->arg2[k] == -1) dir[k] = 1;
    else return false;
  }
  return true;
}

static int source_count(const RtFuseNode *n) {
  int c = 0;
  while (c < 3 && n->src[c] >= 0) c++;
  return c;
}

LoomStatus rt_fuse_replay(IrGraph *g, const RtFuseRecord *r, const LoomFuseArg *args, int32_t *map, Diag *d) {
  for (int32_t i = 0; i < r->nnode; i++) {
    const RtFuseNode *n = &r->nodes[i];
    int32_t src[3] = {-1, -1, -1}, x = -1;
    int ns = source_count(n);
    for (int k = 0; k < ns; k++) src[k] = map[n->src[k]];
    LoomStatus st = LOOM_OK;
    switch (n->kind) {
    case IR_INPUT: {
      x = args[n->bind].node;
      if (x < 0 || x >= g->nnodes || g->nodes[x].kind != IR_INPUT)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fuse record: argument %d's node %d is not an input", n->bind, x);
      break;
    }
    case IR_CONST:
      st = n->bind >= 0 ? rt_fuse_scalar_node(g, &args[n->bind], n, &x, d)
                        : ir_const(g, (LoomDType)n->dtype, n->value, (n->flags & IR_FLAG_WEAK) != 0, &x, d);
      break;
    case IR_ELEM: {
      const OpInfo *info = op_info((LoomOp)n->op);
      if (!info || info->arity != ns)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fuse record: node %d: op %u with %d sources", i, n->op, ns);
      st = ir_elem(g, (LoomOp)n->op, ns, src, &x, d);
      break;
    }
    case IR_CAST: st = ir_cast(g, src[0], (LoomDType)n->dtype, &x, d); break;
    case IR_PERMUTE: {
      int32_t perm[LOOM_MAX_RANK];
      if (g->nodes[src[0]].ndim != n->ndim)
        return diag_error(d, LOOM_ERR_SHAPE, "fuse record: node %d permutes %d axes of a rank-%d value", i, n->ndim,
                          g->nodes[src[0]].ndim);
      for (int k = 0; k < n->ndim; k++) perm[k] = n->perm[k];
      st = ir_permute(g, src[0], perm, &x, d);
      break;
    }
    case IR_RESHAPE: { /* a unit reshape: the source's sizes, axes of size 1 added or dropped */
      const IrNode *s = &g->nodes[src[0]];
      int64_t shape[LOOM_MAX_RANK];
      uint32_t named = 0;
      for (int k = 0; k < n->ndim; k++) {
        uint8_t v = n->perm[k];
        if (v != RF_NEW_AXIS && v >= s->ndim)
          return diag_error(d, LOOM_ERR_SHAPE, "fuse record: node %d names axis %u of a rank-%d value", i, v, s->ndim);
        shape[k] = v == RF_NEW_AXIS ? 1 : s->shape[v];
        if (v != RF_NEW_AXIS) named |= 1u << v;
      }
      for (int a = 0; a < s->ndim; a++)
        if (!(named >> a & 1u) && s->shape[a] != 1)
          return diag_error(d, LOOM_ERR_SHAPE, "fuse record: node %d drops axis %d of size %lld", i, a, (long long)s->shape[a]);
      st = ir_reshape(g, src[0], n->ndim, shape, &x, d);
      break;
    }
    case IR_SLICE: { /* every element of every axis, forward or reversed */
      const IrNode *s = &g->nodes[src[0]];
      int64_t start[LOOM_MAX_RANK], step[LOOM_MAX_RANK], len[LOOM_MAX_RANK];
      if (s->ndim != n->ndim)
        return diag_error(d, LOOM_ERR_SHAPE, "fuse record: node %d slices %d axes of a rank-%d value", i, n->ndim, s->ndim);
      for (int k = 0; k < s->ndim; k++) {
        bool rev = n->perm[k] == 1 && s->shape[k] > 0;
        start[k] = rev ? s->shape[k] - 1 : 0, step[k] = rev ? -1 : 1, len[k] = s->shape[k];
      }
      st = ir_slice(g, src[0], start, step, len, &x, d);
      break;
    }
    case IR_REDUCE:
      st = ir_reduce(g, (LoomReduceOp)n->op, src[0], n->axes, (n->flags & IR_FLAG_KEEPDIMS) != 0, (LoomDType)n->dtype, &x, d);
      break;
    case IR_SCAN:
      if (!n->axes || (n->axes & (n->axes - 1)))
        return diag_error(d, LOOM_ERR_AXIS, "fuse record: node %d scans axis mask %#x", i, n->axes);
      st = ir_scan(g, (LoomReduceOp)n->op, src[0], __builtin_ctz(n->axes), (LoomDType)n->dtype, &x, d);
      break;
    case IR_MATMUL: st = ir_matmul(g, src[0], src[1], &x, d); break;
    default: return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fuse record: node %d has kind %u", i, n->kind);
    }
    if (st) return st;
    const IrNode *got = &g->nodes[x];
    if (got->kind != n->kind || got->dtype != n->dtype || got->ndim != n->ndim ||
        (got->flags & IR_FLAG_WEAK) != (n->flags & IR_FLAG_WEAK))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "fuse record: node %d rebuilt as kind %u %s rank %u, the record has kind %u %s rank %u", i,
                        got->kind, loom_dtype_name((LoomDType)got->dtype), got->ndim, n->kind,
                        loom_dtype_name((LoomDType)n->dtype), n->ndim);
    map[i] = x;
  }
  return LOOM_OK;
}

