/* SPDX-License-Identifier: Apache-2.0 */
/* graph_elementwise.c: the graph IR's elementwise constructor (ir_elem) and its validation: the
 * result dtype of each op under NumPy 2's promotion (ir_elem_result_dtype), weak Python scalars
 * (resolved to the partner's dtype, with NumPy's out-of-range errors and comparison shortcuts), and
 * operand broadcasting.
 *
 * Contract: every operand is checked (a node of the graph, a dtype the op takes, broadcastable shapes)
 * and a bad one gets an error naming the op as NumPy does; helper nodes added for resolved weak
 * constants are rolled back on error, so a failed call leaves the graph as it was.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph_internal.h"

/* ---- elementwise ----------------------------------------------------------------------------------------- */
/* NumPy's name for messages where it differs from Loom's op name. */
static const char *numpy_name(LoomOp op) {
  switch (op) {
  case LOOM_OP_NEG: return "negative";
  case LOOM_OP_SUB: return "subtract";
  case LOOM_OP_MUL: return "multiply";
  case LOOM_OP_TRUEDIV: return "true_divide";
  case LOOM_OP_FLOORDIV: return "floor_divide";
  case LOOM_OP_MOD: return "remainder";
  case LOOM_OP_POW: return "power";
  default: return loom_op_name(op);
  }
}

/* The result dtype of op on operand dtypes t[0..arity), or an error naming the op. */
LoomStatus ir_elem_result_dtype(LoomOp op, const LoomDType *t, LoomDType *out, Diag *d) {
  const OpInfo *info = op_info(op);
  if (!info || !t || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "op %d is not a LoomOp", (int)op);
  LoomDType a = t[0], p = info->arity >= 2 ? dtype_promote(t[0], t[1]) : t[0];
  const char *name = numpy_name(op);
  bool cx = info->rule == RULE_WHERE ? false : dtype_is_complex(p);
  switch (info->rule) {
  case RULE_INT:
  case RULE_BITWISE:
  case RULE_SHIFT:
  case RULE_PROMOTE_FLOAT:
  case RULE_FLOAT_REAL:
  case RULE_PROMOTE_NUM_REAL:
  case RULE_COMPLEX:
    if (cx)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s operands (NumPy has no complex loop)", name,
                        loom_dtype_name(p));
    break;
  default: break;
  }
  switch (info->rule) {
  case RULE_SAME: *out = a; return LOOM_OK;
  case RULE_SAME_NUM:
    if (a == LOOM_BOOL)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for bool operands; use %s", name,
                        op == LOOM_OP_NEG ? "logical_not" : "a cast to an integer dtype first");
    *out = a;
    return LOOM_OK;
  case RULE_FLOAT:
  case RULE_FLOAT_REAL: *out = dtype_float_of(a); return LOOM_OK;
  case RULE_REAL: *out = dtype_real_of(a); return LOOM_OK;
  case RULE_COMPLEX: *out = dtype_complex_of(p); return LOOM_OK;
  case RULE_PRED: *out = LOOM_BOOL; return LOOM_OK;
  case RULE_INT:
    if (dtype_is_float(a))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s operands; ints and bool only", name,
                        loom_dtype_name(a));
    *out = a;
    return LOOM_OK;
  case RULE_PROMOTE: *out = p; return LOOM_OK;
  case RULE_PROMOTE_NUM:
  case RULE_PROMOTE_NUM_REAL: *out = p == LOOM_BOOL ? LOOM_INT8 : p; return LOOM_OK;
  case RULE_PROMOTE_SUB:
    if (p == LOOM_BOOL)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for bool operands; use logical_xor", name);
    *out = p;
    return LOOM_OK;
  case RULE_PROMOTE_FLOAT: /* NumPy's first float loop every input casts to safely (int8, uint16 -> float32) */
    *out = info->arity >= 2 ? dtype_promote(dtype_float_of(t[0]), dtype_float_of(t[1])) : dtype_float_of(p);
    return LOOM_OK;
  case RULE_TRUEDIV: *out = dtype_is_float(p) || dtype_is_complex(p) ? p : LOOM_FLOAT64; return LOOM_OK;
  case RULE_COMPARE:
  case RULE_LOGICAL: *out = LOOM_BOOL; return LOOM_OK;
  case RULE_BITWISE:
    if (dtype_is_float(p))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s and %s operands; ints and bool only",
                        name, loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = p;
    return LOOM_OK;
  case RULE_SHIFT:
    if (dtype_is_float(p))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s and %s operands; ints only", name,
                        loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = p == LOOM_BOOL ? LOOM_INT8 : p;
    return LOOM_OK;
  case RULE_WHERE: *out = dtype_promote(t[1], t[2]); return LOOM_OK;
  case RULE_RANDOM:
    if (t[0] != LOOM_UINT64 || t[1] != LOOM_UINT64)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: key and counter must be uint64, not %s and %s", name,
                        loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = LOOM_UINT64;
    return LOOM_OK;
  case RULE_NUMERIC: *out = a == LOOM_BOOL ? LOOM_INT8 : a; return LOOM_OK;
  }
  return diag_error(d, LOOM_ERR_INTERNAL, "internal error: op %d has no dtype rule", (int)op);
}

/* Where a weak integer (v of kind kw: DK_INT as int64, DK_UINT as uint64) lies against integer dtype
 * t's range: -1 below it, 0 inside, 1 above. */
static int weak_int_range(DKind kw, Scalar v, LoomDType t) {
  int bits = dtype_bits(t);
  if (dtype_kind(t) == DK_UINT) {
    if (kw == DK_INT && v.i < 0) return -1;
    uint64_t u = kw == DK_INT ? (uint64_t)v.i : v.u, max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return u > max ? 1 : 0;
  }
  if (kw == DK_UINT && v.u > (uint64_t)INT64_MAX) return 1;
  int64_t x = kw == DK_INT ? v.i : (int64_t)v.u;
  int64_t lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1)), hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  return x < lo ? -1 : x > hi ? 1 : 0;
}

/* A weak value (bool, int64, uint64, float64 or complex128) converted to dtype t (in t's kind; the
 * target of a weak complex is complex or, for logical ops, bool). */
static Scalar weak_value_as(LoomDType from, Scalar v, LoomDType t) {
  Scalar r = {0};
  DKind kf = dtype_kind(from), kt = dtype_kind(t);
  if (kt == DK_COMPLEX) {
    r.f = kf == DK_FLOAT || kf == DK_COMPLEX ? v.f : kf == DK_INT ? (double)v.i : (double)v.u;
    r.im = kf == DK_COMPLEX ? v.im : 0.0;
  } else if (kt == DK_FLOAT) r.f = kf == DK_FLOAT ? v.f : kf == DK_INT ? (double)v.i : (double)v.u;
  else if (kt == DK_INT) r.i = kf == DK_INT ? v.i : (int64_t)v.u;
  else if (kt == DK_UINT) r.u = kf == DK_INT ? (uint64_t)v.i : v.u;
  else r.u = kf == DK_FLOAT ? v.f != 0 : kf == DK_COMPLEX ? v.f != 0 || v.im != 0 : kf == DK_INT ? v.i != 0 : v.u != 0;
  return r;
}

LoomStatus ir_weak_to(IrGraph *g, int32_t x, LoomDType t, int *range, int32_t *out, Diag *d) {
  const IrNode *n = &g->nodes[x];
  LoomDType wt = (LoomDType)n->dtype;
  DKind kw = dtype_kind(wt);
  *range = 0;
  if (n->kind != IR_CONST) return ir_cast(g, x, t, out, d);
  Scalar v = n->value;
  if ((kw == DK_INT || kw == DK_UINT) && dtype_is_int(t) && (*range = weak_int_range(kw, v, t)) != 0) return LOOM_OK;
  return ir_const(g, t, weak_value_as(wt, v, t), false, out, d);
}

LoomStatus ir_weak_range_error(const IrGraph *g, int32_t x, LoomDType t, Diag *d) {
  const IrNode *n = &g->nodes[x];
  char num[32];
  if (dtype_kind((LoomDType)n->dtype) == DK_INT) snprintf(num, sizeof num, "%lld", (long long)n->value.i);
  else snprintf(num, sizeof num, "%llu", (unsigned long long)n->value.u);
  return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "Python integer %s out of bounds for %s", num, loom_dtype_name(t));
}

/* NEP 50: the strong node that weak node x becomes next to a strong operand of dtype partner.
 * Logical ops (and, or, xor) take a weak scalar's own truth value, as NumPy does (logical_or(f16 0,
 * 5e-324) is true; logical_and(u8, 300) is defined). A weak int outside the integer target's range is
 * an error, except for comparisons, whose result it decides: *range is then -1 (below every value of
 * the target) or 1 (above), and *out is not set. */
static LoomDType weak_target(LoomDType wt, LoomDType partner, OpRule rule) {
  DKind kw = dtype_kind(wt), kp = dtype_kind(partner);
  if (rule == RULE_LOGICAL) return LOOM_BOOL;
  if (kw == DK_BOOL) return partner;
  if ((kw == DK_INT || kw == DK_UINT) && (rule == RULE_PROMOTE_FLOAT || rule == RULE_TRUEDIV) && kp != DK_FLOAT &&
      kp != DK_COMPLEX) /* float loops only: the int is taken as that float, never range-checked (NumPy) */
    return rule == RULE_TRUEDIV ? LOOM_FLOAT64 : dtype_float_of(kp == DK_BOOL ? LOOM_INT64 : partner);
  if (kw == DK_INT || kw == DK_UINT) return kp == DK_BOOL ? LOOM_INT64 : partner;
  if (kw == DK_FLOAT) return kp == DK_FLOAT || kp == DK_COMPLEX ? partner : LOOM_FLOAT64;
  return kp == DK_FLOAT || kp == DK_COMPLEX ? dtype_complex_of(partner) : LOOM_COMPLEX128;
}

static LoomStatus resolve_weak(IrGraph *g, int32_t x, LoomDType partner, OpRule rule, int32_t *out, int *range,
                               Diag *d) {
  const IrNode *n = &g->nodes[x];
  *range = 0;
  /* NumPy converts a Python int for a logical op to a C long first: past int64 it raises */
  if (rule == RULE_LOGICAL && n->kind == IR_CONST && dtype_kind((LoomDType)n->dtype) == DK_UINT &&
      n->value.u > (uint64_t)INT64_MAX)
    return ir_weak_range_error(g, x, LOOM_INT64, d);
  LoomDType target = weak_target((LoomDType)n->dtype, partner, rule);
  LoomStatus st = ir_weak_to(g, x, target, range, out, d);
  if (st != LOOM_OK || *range == 0) return st;
  if (rule == RULE_COMPARE && dtype_is_int(partner)) return LOOM_OK;
  *range = 0;
  return ir_weak_range_error(g, x, target, d);
}

/* Broadcast shape of n operand shapes, or the NumPy error naming every shape. */
static LoomStatus broadcast_shapes(const IrGraph *g, int n, const int32_t *src, int *ndim, int64_t *shape,
                                   Diag *d) {
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (g->nodes[src[k]].ndim > nd) nd = g->nodes[src[k]].ndim;
  for (int i = 0; i < nd; i++) shape[i] = 1;
  for (int k = 0; k < n; k++) {
    const IrNode *s = &g->nodes[src[k]];
    int off = nd - s->ndim;
    for (int i = 0; i < s->ndim; i++) {
      int64_t a = shape[off + i], b = s->shape[i];
      if (a == b || b == 1) continue;
      if (a == 1) {
        shape[off + i] = b;
        continue;
      }
      char msg[800] = "";
      size_t len = 0;
      for (int j = 0; j < n && len < sizeof msg; j++) {
        const IrNode *sj = &g->nodes[src[j]];
        if (j) msg[len++] = ' ';
        ir_format_shape(msg + len, sizeof msg - len, sj->ndim, sj->shape);
        len = strlen(msg);
      }
      return diag_error(d, LOOM_ERR_SHAPE, "operands could not be broadcast together with shapes %s", msg);
    }
  }
  *ndim = nd;
  return LOOM_OK;
}

/* x OP k for an integer array x and a Python int k outside x's dtype: every element compares the same
 * way. side: 1 when k is above every value of x (x < k), -1 when below. The result is that constant
 * broadcast to x's shape (NumPy 2 answers these comparisons instead of raising). */
static LoomStatus compare_out_of_range(IrGraph *g, LoomOp op, int32_t x, int side, int32_t *out, Diag *d) {
  bool lt = side > 0; /* x < k */
  bool v;
  switch (op) {
  case LOOM_OP_EQ: v = false; break;
  case LOOM_OP_NE: v = true; break;
  case LOOM_OP_LT: case LOOM_OP_LE: v = lt; break;
  default: v = !lt; break; /* GT, GE */
  }
  int32_t c;
  LoomStatus st = ir_const(g, LOOM_BOOL, (Scalar){.u = v}, false, &c, d);
  const IrNode *xn = &g->nodes[x];
  if (st || xn->ndim == 0) {
    if (!st) *out = c;
    return st;
  }
  int64_t shape[LOOM_MAX_RANK];
  memcpy(shape, xn->shape, sizeof shape);
  return ir_broadcast(g, c, xn->ndim, shape, out, d);
}

static bool is_compare(LoomOp op) {
  return op == LOOM_OP_EQ || op == LOOM_OP_NE || op == LOOM_OP_LT || op == LOOM_OP_LE || op == LOOM_OP_GT ||
         op == LOOM_OP_GE;
}

/* a OP b for a signed integer and a uint64 operand: NumPy 2 compares them exactly (its qQ / Qq loops),
 * where promotion would round both to float64 (4022953313179823382 >= 4022953313179823616 was true).
 * Built as where(s < 0, what a negative s gives, OP on both as uint64). */
static LoomStatus compare_mixed_sign(IrGraph *g, LoomOp op, const int32_t *src, int si, int32_t *out, Diag *d) {
  int32_t z, neg, su, cmp, c, two[2];
  LoomStatus st = ir_const(g, (LoomDType)g->nodes[src[si]].dtype, (Scalar){.i = 0}, false, &z, d);
  two[0] = src[si];
  two[1] = z;
  if (!st) st = ir_elem(g, LOOM_OP_LT, 2, two, &neg, d);
  if (!st) st = ir_cast(g, src[si], LOOM_UINT64, &su, d);
  if (st) return st;
  two[si] = su;
  two[1 - si] = src[1 - si];
  if ((st = ir_elem(g, op, 2, two, &cmp, d))) return st;
  bool below = si == 0; /* a negative s is below every uint64: a < b when s is a */
  bool v = op == LOOM_OP_NE || ((op == LOOM_OP_LT || op == LOOM_OP_LE) && below) ||
           ((op == LOOM_OP_GT || op == LOOM_OP_GE) && !below);
  if ((st = ir_const(g, LOOM_BOOL, (Scalar){.u = v}, false, &c, d))) return st;
  int32_t three[3] = {neg, c, cmp};
  return ir_elem(g, LOOM_OP_WHERE, 3, three, out, d);
}

static LoomStatus elem_build(IrGraph *g, LoomOp op, int n, const int32_t *src_in, int32_t *out, Diag *d) {
  const OpInfo *info = op_info(op);
  int32_t src[3] = {-1, -1, -1};
  bool weak[3] = {false, false, false}, all_weak = true;
  for (int k = 0; k < n; k++) {
    src[k] = src_in[k];
    weak[k] = (g->nodes[src[k]].flags & IR_FLAG_WEAK) != 0;
    all_weak = all_weak && weak[k];
  }
  /* NumPy's order of errors: dtypes (TypeError), then shapes (ValueError), then a Python int out of
   * its dtype's range (OverflowError, found when the value is converted). np.where (NumPy 2.5) converts
   * its Python scalars before it broadcasts: the range error comes first there. */
  LoomStatus st;
  int w = -1, sp = -1;
  if (!all_weak) {
    int first = 0;
    if (info->rule == RULE_WHERE) first = 1; /* a condition is a truth value: any dtype will do */
    if (n - first == 2 && weak[first] != weak[first + 1]) {
      w = weak[first] ? first : first + 1;
      sp = w == first ? first + 1 : first;
    }
  }
  LoomDType t[3] = {LOOM_BOOL, LOOM_BOOL, LOOM_BOOL}, rt;
  for (int k = 0; k < n; k++) t[k] = (LoomDType)g->nodes[src[k]].dtype;
  if (w >= 0) t[w] = weak_target(t[w], t[sp], info->rule);
  if ((st = ir_elem_result_dtype(op, t, &rt, d))) return st;
  bool range_first = w >= 0 && info->rule == RULE_WHERE; /* where's range errors are errors (no compare) */
  if (range_first) {
    int range;
    if ((st = resolve_weak(g, src[w], (LoomDType)g->nodes[src[sp]].dtype, info->rule, &src[w], &range, d))) return st;
  }
  int ndim = 0;
  int64_t shape[LOOM_MAX_RANK];
  if ((st = broadcast_shapes(g, n, src, &ndim, shape, d))) return st;
  if (w >= 0 && !range_first) {
    int range;
    if ((st = resolve_weak(g, src[w], (LoomDType)g->nodes[src[sp]].dtype, info->rule, &src[w], &range, d))) return st;
    if (range != 0) return compare_out_of_range(g, op, src[sp], w > sp ? range : -range, out, d);
  }
  if (n == 2 && is_compare(op)) {
    LoomDType ta = (LoomDType)g->nodes[src[0]].dtype, tb = (LoomDType)g->nodes[src[1]].dtype;
    if (dtype_kind(ta) == DK_INT && tb == LOOM_UINT64) return compare_mixed_sign(g, op, src, 0, out, d);
    if (dtype_kind(tb) == DK_INT && ta == LOOM_UINT64) return compare_mixed_sign(g, op, src, 1, out, d);
  }
  if (ir_numel(ndim, shape) < 0) {
    char b[400];
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "%s: the broadcast shape %s has more than 2^63-1 elements",
                      numpy_name(op), b);
  }
  IrNode node;
  ir_node_init(&node, IR_ELEM, rt, ndim, shape);
  node.op = (uint16_t)op;
  for (int k = 0; k < n; k++) node.src[k] = src[k];
  if (all_weak && (rt == LOOM_BOOL || rt == LOOM_INT64 || rt == LOOM_UINT64 || rt == LOOM_FLOAT64 ||
                   rt == LOOM_COMPLEX128))
    node.flags = IR_FLAG_WEAK;
  return ir_add_node(g, &node, out, d);
}

LoomStatus ir_elem(IrGraph *g, LoomOp op, int n, const int32_t *src, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "elementwise op: null argument");
  const OpInfo *info = op_info(op);
  if (!info) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "op %d is not a LoomOp", (int)op);
  if (n != info->arity || !src)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s takes %d operand%s, got %d", info->name, info->arity,
                      info->arity == 1 ? "" : "s", n);
  for (int k = 0; k < n; k++) {
    LoomStatus st = ir_check_node(g, src[k], info->name, d);
    if (st) return st;
  }
  int32_t mark = g->nnodes;
  LoomStatus st = elem_build(g, op, n, src, out, d);
  if (st) ir_graph_rollback(g, mark, -1);
  return st;
}
