/* SPDX-License-Identifier: Apache-2.0 */
/* graph_gather.c: the graph IR's data-dependent addressing nodes, IR_GATHER (reads at computed
 * positions along one axis) and IR_SCATTER (writes at computed flat positions); ir.h states their
 * semantics.
 *
 * Approach: the builders put each node in the form the passes need, so that no pass special-cases
 * shapes: a gather's index has exactly the result's shape (broadcast and cast to int64 here), its data
 * is always a view of a leaf (an elementwise data gets an IR_COPY: its values are read at positions no
 * kernel knows in advance), and src[0] is that view at the result's shape with stride 0 on the axis,
 * which fusion and lowering treat as any broadcast read; a scatter's index and values share one shape.
 * Contract: as graph_nodes.c's constructors (validated operands, nothing added on error).
 */
#include <string.h>

#include "ir/graph_internal.h"

static const char *const gather_mode_names[IR_GATHER_MODE_COUNT] = {"raise", "wrap", "clip"};

const char *ir_gather_mode_name(int mode) {
  return mode >= 0 && mode < IR_GATHER_MODE_COUNT ? gather_mode_names[mode] : NULL;
}

/* x broadcast to (nd, shape) unless it has that shape already. */
static LoomStatus broadcast_to(IrGraph *g, int32_t x, int nd, const int64_t *shape, int32_t *out, Diag *d) {
  const IrNode *n = &g->nodes[x];
  if (n->ndim == nd && memcmp(n->shape, shape, (size_t)nd * sizeof *shape) == 0) {
    *out = x;
    return LOOM_OK;
  }
  return ir_broadcast(g, x, nd, shape, out, d);
}

/* An integer or bool index node as int64 of shape (nd, shape). */
static LoomStatus index_of(IrGraph *g, int32_t idx, const char *what, int nd, const int64_t *shape, int32_t *out,
                           Diag *d) {
  LoomDType t = (LoomDType)g->nodes[idx].dtype;
  if (!dtype_is_int(t) && t != LOOM_BOOL)
    return diag_error(d, LOOM_ERR_DTYPE, "%s: indices must be integers, not %s", what, loom_dtype_name(t));
  LoomStatus st = LOOM_OK;
  if (t != LOOM_INT64) st = ir_cast(g, idx, LOOM_INT64, &idx, d);
  if (st == LOOM_OK) st = broadcast_to(g, idx, nd, shape, out, d);
  return st;
}

static LoomStatus gather_nodes(IrGraph *g, int32_t data, int32_t idx, int axis, IrGatherMode mode, int32_t *out,
                               Diag *d) {
  const IrNode *dn = &g->nodes[data], *xn = &g->nodes[idx];
  int nd = dn->ndim;
  int64_t shape[LOOM_MAX_RANK];
  char s1[400], s2[400];
  ir_format_shape(s1, sizeof s1, nd, dn->shape);
  ir_format_shape(s2, sizeof s2, xn->ndim, xn->shape);
  if (xn->ndim != nd)
    return diag_error(d, LOOM_ERR_SHAPE, "gather: indices of shape %s must have the rank of the data %s", s2, s1);
  for (int a = 0; a < nd; a++) {
    int64_t u = dn->shape[a], v = xn->shape[a];
    if (a == axis) shape[a] = v;
    else if (u == v || v == 1) shape[a] = u;
    else if (u == 1) shape[a] = v;
    else
      return diag_error(d, LOOM_ERR_SHAPE, "gather: indices of shape %s do not broadcast with data %s off axis %d",
                        s2, s1, axis);
  }
  int64_t n = dn->shape[axis];
  LoomDType dt = (LoomDType)dn->dtype;
  LoomStatus st;
  if (ir_numel(nd, shape) == 0) { /* nothing to read: an empty array of the dtype */
    int32_t z;
    Scalar zero;
    memset(&zero, 0, sizeof zero);
    if ((st = ir_const(g, dt, zero, false, &z, d))) return st;
    return ir_broadcast(g, z, nd, shape, out, d);
  }
  if (n == 0) return diag_error(d, LOOM_ERR_SHAPE, "cannot do a non-empty take from an empty axis");
  int32_t leaf = data;
  while (ir_is_movement(g->nodes[leaf].kind)) leaf = g->nodes[leaf].src[0];
  int lk = g->nodes[leaf].kind;
  if (lk == IR_ELEM || lk == IR_CAST || lk == IR_GATHER || lk == IR_SCATTER) /* read in memory: realized */
    if ((st = ir_copy(g, data, &data, d))) return st;
  int64_t dshape[LOOM_MAX_RANK], one[LOOM_MAX_RANK], zero[LOOM_MAX_RANK], len[LOOM_MAX_RANK];
  for (int a = 0; a < nd; a++) {
    dshape[a] = a == axis ? n : shape[a];
    one[a] = 1;
    zero[a] = 0;
    len[a] = a == axis ? 1 : dshape[a];
  }
  int32_t db, ib, sl, view;
  if ((st = broadcast_to(g, data, nd, dshape, &db, d))) return st;
  if ((st = index_of(g, idx, "gather", nd, shape, &ib, d))) return st;
  if ((st = ir_slice(g, db, zero, one, len, &sl, d))) return st;
  if ((st = ir_broadcast(g, sl, nd, shape, &view, d))) return st;
  IrNode r;
  ir_node_init(&r, IR_GATHER, dt, nd, shape);
  r.src[0] = view;
  r.src[1] = ib;
  r.src[2] = db;
  r.axes = 1u << axis;
  r.op = (uint16_t)mode;
  return ir_add_node(g, &r, out, d);
}

LoomStatus ir_gather(IrGraph *g, int32_t data, int32_t idx, int axis, IrGatherMode mode, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "gather: null argument");
  LoomStatus st = ir_check_node(g, data, "gather", d);
  if (!st) st = ir_check_node(g, idx, "gather", d);
  if (st) return st;
  int nd = g->nodes[data].ndim;
  if (nd < 1) return diag_error(d, LOOM_ERR_SHAPE, "gather: the data must have at least one dimension");
  if (axis < 0 || axis >= nd)
    return diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, nd);
  if ((unsigned)mode >= IR_GATHER_MODE_COUNT)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "gather: mode %d is not raise (0), wrap (1) or clip (2)", (int)mode);
  int32_t mark = g->nnodes, mark_in = g->ninputs;
  st = gather_nodes(g, data, idx, axis, mode, out, d);
  if (st) ir_graph_rollback(g, mark, mark_in);
  return st;
}

static LoomStatus scatter_nodes(IrGraph *g, int32_t base, int32_t idx, int32_t values, IrScatterOp op, int32_t *out,
                                Diag *d) {
  const IrNode *bn = &g->nodes[base], *xn = &g->nodes[idx];
  LoomDType bt = (LoomDType)bn->dtype;
  int nd = xn->ndim;
  int64_t pshape[LOOM_MAX_RANK];
  memcpy(pshape, xn->shape, sizeof pshape);
  LoomStatus st;
  int32_t ib, vb = values;
  if ((st = index_of(g, idx, "scatter", nd, pshape, &ib, d))) return st;
  if (g->nodes[vb].dtype != bt && (st = ir_cast(g, vb, bt, &vb, d))) return st;
  if ((st = broadcast_to(g, vb, nd, pshape, &vb, d))) return st;
  IrNode r;
  ir_node_init(&r, IR_SCATTER, bt, bn->ndim, bn->shape);
  r.src[0] = base;
  r.src[1] = ib;
  r.src[2] = vb;
  r.op = (uint16_t)op;
  return ir_add_node(g, &r, out, d);
}

LoomStatus ir_scatter(IrGraph *g, int32_t base, int32_t idx, int32_t values, IrScatterOp op, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scatter: null argument");
  LoomStatus st = ir_check_node(g, base, "scatter", d);
  if (!st) st = ir_check_node(g, idx, "scatter", d);
  if (!st) st = ir_check_node(g, values, "scatter", d);
  if (st) return st;
  if ((unsigned)op >= IR_SCATTER_OP_COUNT)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scatter: op %d is not set (0), add (1) or put (2)", (int)op);
  LoomDType bt = (LoomDType)g->nodes[base].dtype;
  if (op == IR_SCATTER_ADD && !dtype_is_int(bt) && bt != LOOM_FLOAT32 && bt != LOOM_FLOAT64)
    return diag_error(d, LOOM_ERR_DTYPE, "scatter add: supported for integer, float32 and float64 arrays, not %s",
                      loom_dtype_name(bt));
  int32_t mark = g->nnodes, mark_in = g->ninputs;
  st = scatter_nodes(g, base, idx, values, op, out, d);
  if (st) ir_graph_rollback(g, mark, mark_in);
  return st;
}
