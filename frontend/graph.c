/* SPDX-License-Identifier: Apache-2.0 */
/* graph.c (frontend): the public graph-building API (loom_graph_*, loom_input, loom_binary, ...).
 *
 * Approach: each public function validates its arguments the way NumPy would (negative axes,
 * slice.indices, one inferred -1 in a reshape), translates them into the IR constructors of
 * ir/graph.c, and reports failures through ctx_report so loom_last_error() has the message. A
 * function that adds more than one node takes a mark first and rolls back on error, so a failed call
 * leaves the graph unchanged.
 */
#include <math.h>
#include <string.h>

#include "frontend/frontend.h"

/* Ends a builder call: on error drops what it added and stores the message on the context. */
static LoomStatus finish(LoomGraph *g, Diag *d, int32_t mark, int32_t mark_in) {
  if (d->status == LOOM_OK) return LOOM_OK;
  ir_graph_rollback(&g->ir, mark, mark_in);
  return ctx_report(g->ctx, d);
}

#define BEGIN(g)                                                                                   \
  if (!(g)) return LOOM_ERR_INVALID_ARGUMENT;                                                      \
  Diag d_; /* no initializer: zeroing its 1 KiB message per call was a tenth of an op's cost */   \
  d_.status = LOOM_OK;                                                                             \
  d_.msg[0] = '\0';                                                                                \
  Diag *d = &d_;                                                                                   \
  int32_t mark_ = (g)->ir.nnodes, mark_in_ = (g)->ir.ninputs
#define END(g) finish((g), d, mark_, mark_in_)

LoomStatus loom_graph_create(LoomContext *ctx, LoomGraph **out) {
  if (!ctx || !out) return LOOM_ERR_INVALID_ARGUMENT;
  *out = NULL;
  Diag d = {LOOM_OK, ""};
  LoomGraph *g = ctx_alloc(ctx, sizeof *g);
  if (!g) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory allocating a graph (%zu bytes)", sizeof *g);
    return ctx_report(ctx, &d);
  }
  g->ctx = ctx;
  g->plans = NULL;
  g->free_plans = NULL;
  g->memo = NULL;
  if (ir_graph_init(&g->ir, ctx, &d)) {
    ctx_free(ctx, g);
    return ctx_report(ctx, &d);
  }
  *out = g;
  return LOOM_OK;
}

void loom_graph_destroy(LoomGraph *g) {
  if (!g) return;
  LoomContext *ctx = g->ctx;
  if (g->free_plans) g->free_plans(g);
  op_memo_free(g);
  ir_graph_free(&g->ir);
  ctx_free(ctx, g);
}

static bool need_out(LoomNode *out, Diag *d, const char *fn) {
  if (out) return true;
  diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
  return false;
}

static const IrNode *node_of(LoomGraph *g, LoomNode x, Diag *d, const char *fn);

/* Whether a describes an array loom can read (fn names the caller in the message). */
static bool check_array(const LoomArray *a, Diag *d, const char *fn) {
  if (!a) diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: array is NULL", fn);
  else if ((unsigned)a->dtype >= LOOM_DTYPE_COUNT)
    diag_error(d, LOOM_ERR_DTYPE, "%s: dtype %d is not a LoomDType", fn, (int)a->dtype);
  else if (a->ndim < 0 || a->ndim > LOOM_MAX_RANK)
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: ndim %d is outside 0..%d", fn, a->ndim, LOOM_MAX_RANK);
  else if (a->device != LOOM_DEVICE_HOST && a->device != LOOM_DEVICE_CUDA && a->device != LOOM_DEVICE_HIP)
    diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: device kind %d is not supported (host, CUDA and HIP are)", fn,
               (int)a->device);
  else if (a->device_index < 0)
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: device_index %d is negative", fn, (int)a->device_index);
  else if (a->device == LOOM_DEVICE_HOST && a->device_index != 0)
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: device_index %d of a host array; the host is device 0", fn,
               (int)a->device_index);
  else {
    for (int i = 0; i < a->ndim; i++)
      if (a->shape[i] < 0) {
        diag_error(d, LOOM_ERR_SHAPE, "%s: negative dimension %lld at axis %d", fn, (long long)a->shape[i], i);
        return false;
      }
    int64_t n = ir_numel(a->ndim, a->shape);
    if (n < 0) diag_error(d, LOOM_ERR_SHAPE, "%s: shape too large", fn);
    else if (n > 0 && !a->data) diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: data is NULL for a non-empty array", fn);
    else return true;
  }
  return false;
}

LoomStatus loom_input(LoomGraph *g, const LoomArray *a, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_input") && check_array(a, d, "loom_input")) ir_input(&g->ir, a, out, d);
  return END(g);
}

LoomStatus loom_node_bind(LoomGraph *g, LoomNode node, const LoomArray *value) {
  BEGIN(g);
  if (!node_of(g, node, d, "loom_node_bind") || !check_array(value, d, "loom_node_bind")) return END(g);
  (void)ir_node_bind(&g->ir, node, value, d); /* kept plans stay valid: see loom.h */
  return END(g);
}

LoomStatus loom_node_reaches(LoomGraph *g, LoomNode node, int32_t n, const LoomNode *users, int32_t *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_node_reaches") || !node_of(g, node, d, "loom_node_reaches")) return END(g);
  if (n < 0 || (n > 0 && !users)) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_node_reaches: %d users at %p; pass n >= 0 and an array of n nodes",
               (int)n, (const void *)users);
    return END(g);
  }
  for (int32_t i = 0; i < n; i++)
    if (!node_of(g, users[i], d, "loom_node_reaches")) return END(g);
  if (ir_node_reaches(&g->ir, node, n, users, out, d) != LOOM_OK) return END(g);
  return END(g);
}

LoomStatus loom_nodes_share(LoomGraph *g, int32_t na, const LoomNode *a, int32_t nb, const LoomNode *b, int32_t *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_nodes_share")) return END(g);
  if (na < 0 || nb < 0 || (na > 0 && !a) || (nb > 0 && !b)) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_nodes_share: node sets of %d and %d at %p, %p; pass counts >= 0 "
               "and arrays of that many nodes", (int)na, (int)nb, (const void *)a, (const void *)b);
    return END(g);
  }
  for (int32_t i = 0; i < na + nb; i++)
    if (!node_of(g, i < na ? a[i] : b[i - na], d, "loom_nodes_share")) return END(g);
  (void)ir_nodes_share(&g->ir, na, a, nb, b, out, d);
  return END(g);
}

LoomStatus loom_node_unbind(LoomGraph *g, LoomNode node) {
  BEGIN(g);
  if (!node_of(g, node, d, "loom_node_unbind")) return END(g);
  ir_node_unbind(&g->ir, node);
  if (g->free_plans) g->free_plans(g);
  return END(g);
}

/* ---- constants ------------------------------------------------------------------------------------ */
static void int_range(LoomDType t, int64_t *lo, uint64_t *hi) {
  int bits = dtype_bits(t);
  if (dtype_kind(t) == DK_UINT) {
    *lo = 0;
    *hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  } else {
    *lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    *hi = bits == 64 ? (uint64_t)INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
  }
}

static LoomStatus const_int(LoomGraph *g, bool neg, uint64_t mag, LoomDType dtype, LoomNode *out, Diag *d) {
  /* the value is -mag when neg, else mag */
  Scalar v = {0};
  v.u = 0;
  switch (dtype_kind(dtype)) {
  case DK_BOOL: v.u = mag != 0; break;
  case DK_FLOAT:
  case DK_COMPLEX: v.f = neg ? -(double)mag : (double)mag; break;
  default: {
    int64_t lo;
    uint64_t hi;
    int_range(dtype, &lo, &hi);
    uint64_t neg_limit = lo < 0 ? (uint64_t)(-(lo + 1)) + 1u : 0; /* |lo| without overflow */
    bool ok = neg ? mag <= neg_limit : mag <= hi;
    if (!ok)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "value %s%llu is out of bounds for %s", neg ? "-" : "",
                        (unsigned long long)mag, loom_dtype_name(dtype));
    if (dtype_kind(dtype) == DK_INT) v.i = neg ? (int64_t)((uint64_t)0 - mag) : (int64_t)mag;
    else v.u = mag;
  }
  }
  return ir_const(&g->ir, dtype, v, false, out, d);
}

static bool check_dtype(LoomDType t, Diag *d, const char *fn) {
  if ((unsigned)t < LOOM_DTYPE_COUNT) return true;
  diag_error(d, LOOM_ERR_DTYPE, "%s: dtype %d is not a LoomDType", fn, (int)t);
  return false;
}

LoomStatus loom_const_f64(LoomGraph *g, double value, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_const_f64") || !check_dtype(dtype, d, "loom_const_f64")) return END(g);
  DKind k = dtype_kind(dtype);
  if (k == DK_FLOAT || k == DK_COMPLEX) {
    Scalar v = {.f = value};
    ir_const(&g->ir, dtype, v, false, out, d);
  } else if (k == DK_BOOL) {
    Scalar v = {.u = value != 0};
    ir_const(&g->ir, dtype, v, false, out, d);
  } else if (isnan(value) || isinf(value)) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cannot convert float %s to integer %s", isnan(value) ? "NaN" : "infinity",
               loom_dtype_name(dtype));
  } else {
    double t = trunc(value); /* NumPy's float -> int conversion truncates toward zero */
    if (t >= 18446744073709551616.0 || t < -9223372036854775808.0)
      diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "value %.17g is out of bounds for %s", value, loom_dtype_name(dtype));
    else if (t < 0)
      const_int(g, true, (uint64_t)(-(t + 1.0)) + 1u, dtype, out, d);
    else
      const_int(g, false, (uint64_t)t, dtype, out, d);
  }
  return END(g);
}

LoomStatus loom_const_i64(LoomGraph *g, int64_t value, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_const_i64") || !check_dtype(dtype, d, "loom_const_i64")) return END(g);
  if (dtype_kind(dtype) == DK_FLOAT || dtype_kind(dtype) == DK_COMPLEX) {
    Scalar v = {.f = (double)value};
    ir_const(&g->ir, dtype, v, false, out, d);
  } else {
    bool neg = value < 0;
    const_int(g, neg, neg ? (uint64_t)0 - (uint64_t)value : (uint64_t)value, dtype, out, d);
  }
  return END(g);
}

LoomStatus loom_const_u64(LoomGraph *g, uint64_t value, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_const_u64") || !check_dtype(dtype, d, "loom_const_u64")) return END(g);
  if (dtype_kind(dtype) == DK_FLOAT || dtype_kind(dtype) == DK_COMPLEX) {
    Scalar v = {.f = (double)value};
    ir_const(&g->ir, dtype, v, false, out, d);
  } else {
    const_int(g, false, value, dtype, out, d);
  }
  return END(g);
}

/* A weak constant through the call memo (op_memo.c): key dtype and value bits. */
static LoomStatus weak_const(LoomGraph *g, LoomDType dtype, Scalar v, uint64_t bits, LoomNode *out, const char *fn) {
  uint64_t k0, k1;
  memo_key_weak(dtype, bits, &k0, &k1);
  bool memo = g && op_memo_usable(g);
  if (memo && out && op_memo_find(g, k0, k1, out)) return LOOM_OK;
  BEGIN(g);
  if (need_out(out, d, fn) && ir_const(&g->ir, dtype, v, true, out, d) == LOOM_OK && memo) op_memo_put(g, k0, k1, *out);
  return END(g);
}

LoomStatus loom_weak_float(LoomGraph *g, double value, LoomNode *out) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return weak_const(g, LOOM_FLOAT64, (Scalar){.f = value}, bits, out, "loom_weak_float");
}

LoomStatus loom_weak_int(LoomGraph *g, int64_t value, LoomNode *out) {
  return weak_const(g, LOOM_INT64, (Scalar){.i = value}, (uint64_t)value, out, "loom_weak_int");
}

LoomStatus loom_weak_uint(LoomGraph *g, uint64_t value, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_weak_uint")) {
    if (value <= (uint64_t)INT64_MAX) ir_const(&g->ir, LOOM_INT64, (Scalar){.i = (int64_t)value}, true, out, d);
    else ir_const(&g->ir, LOOM_UINT64, (Scalar){.u = value}, true, out, d);
  }
  return END(g);
}

LoomStatus loom_weak_bool(LoomGraph *g, int value, LoomNode *out) {
  return weak_const(g, LOOM_BOOL, (Scalar){.u = value != 0}, value != 0, out, "loom_weak_bool");
}

LoomStatus loom_const_complex(LoomGraph *g, double re, double im, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_const_complex") || !check_dtype(dtype, d, "loom_const_complex")) return END(g);
  if (!dtype_is_complex(dtype))
    diag_error(d, LOOM_ERR_DTYPE, "loom_const_complex: %s is not a complex dtype; use loom_const_f64 for the real part",
               loom_dtype_name(dtype));
  else
    ir_const(&g->ir, dtype, (Scalar){.f = re, .im = im}, false, out, d);
  return END(g);
}

LoomStatus loom_weak_complex(LoomGraph *g, double re, double im, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_weak_complex"))
    ir_const(&g->ir, LOOM_COMPLEX128, (Scalar){.f = re, .im = im}, true, out, d);
  return END(g);
}

/* ---- elementwise ---------------------------------------------------------------------------------------- */
LoomStatus loom_iota(LoomGraph *g, int32_t ndim, const int64_t *shape, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_iota")) ir_iota(&g->ir, ndim, shape, out, d);
  return END(g);
}

static bool check_arity(LoomOp op, int n, Diag *d, const char *fn) {
  const OpInfo *info = op_info(op);
  if (!info) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: op %d is not a LoomOp", fn, (int)op);
    return false;
  }
  if (info->arity != n) {
    const char *use = info->arity == 1 ? "loom_unary" : info->arity == 2 ? "loom_binary" : "loom_where";
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %s takes %d operand%s; use %s", fn, info->name, info->arity,
               info->arity == 1 ? "" : "s", use);
    return false;
  }
  return true;
}

/* An elementwise op through the call memo (op_memo.c): a repeated call returns the node the first one did. */
static LoomStatus elem_call(LoomGraph *g, LoomOp op, int n, const int32_t *src, LoomNode *out, const char *fn) {
  uint64_t k0, k1;
  memo_key_elem(op, src[0], n > 1 ? src[1] : -1, n > 2 ? src[2] : -1, &k0, &k1);
  /* the key holds 16 bits of op: a larger (invalid) one is never looked up */
  bool memo = (unsigned)op <= UINT16_MAX && g && op_memo_usable(g);
  if (memo && out && op_memo_find(g, k0, k1, out)) return LOOM_OK;
  BEGIN(g);
  if (need_out(out, d, fn) && check_arity(op, n, d, fn) && ir_elem(&g->ir, op, n, src, out, d) == LOOM_OK && memo)
    op_memo_put(g, k0, k1, *out);
  return END(g);
}

LoomStatus loom_unary(LoomGraph *g, LoomOp op, LoomNode x, LoomNode *out) {
  return elem_call(g, op, 1, &x, out, "loom_unary");
}

LoomStatus loom_binary(LoomGraph *g, LoomOp op, LoomNode a, LoomNode b, LoomNode *out) {
  int32_t src[2] = {a, b};
  return elem_call(g, op, 2, src, out, "loom_binary");
}

LoomStatus loom_where(LoomGraph *g, LoomNode cond, LoomNode a, LoomNode b, LoomNode *out) {
  int32_t src[3] = {cond, a, b};
  return elem_call(g, LOOM_OP_WHERE, 3, src, out, "loom_where");
}

/* clip follows NumPy 2's np.clip: for an integer x, a Python int bound at or below x's dtype minimum
 * (lower) or at or above its maximum (upper) is dropped first (it clips nothing); one bound left is
 * maximum(x, lo) or minimum(x, hi) (two-operand promotion); two bounds are the three-operand ufunc: its
 * dtype is the n-ary promotion of the strong operands, widened by the weak ones (NEP 50: a Python float
 * makes an integer result float64, a Python int a bool one int64), all three converted to it, then
 * max / min. */
static bool is_weak(const LoomGraph *g, LoomNode x) { return (g->ir.nodes[x].flags & IR_FLAG_WEAK) != 0; }

/* Whether weak node b is a Python int constant at or past integer dtype t's limit (low: the minimum). */
static bool weak_int_past(const LoomGraph *g, LoomNode b, LoomDType t, bool low) {
  const IrNode *n = &g->ir.nodes[b];
  DKind k = dtype_kind((LoomDType)n->dtype);
  if (n->kind != IR_CONST || !(n->flags & IR_FLAG_WEAK) || (k != DK_INT && k != DK_UINT)) return false;
  int64_t lo;
  uint64_t hi;
  int_range(t, &lo, &hi);
  if (k == DK_UINT) return !low && n->value.u >= hi; /* above INT64_MAX: above every signed limit too */
  int64_t v = n->value.i;
  if (low) return v <= lo;
  return v >= 0 && (uint64_t)v >= hi;
}

LoomStatus loom_clip(LoomGraph *g, LoomNode x, LoomNode lo, LoomNode hi, LoomNode *out) {
  BEGIN(g);
  if (!need_out(out, d, "loom_clip")) return END(g);
  LoomNode ops[3] = {x, lo, hi};
  for (int k = 0; k < 3; k++)
    if ((k == 0 || ops[k] >= 0) && (ops[k] < 0 || ops[k] >= g->ir.nnodes)) {
      diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_clip: node %d is not a node of this graph", ops[k]);
      return END(g);
    }
  LoomDType xt = (LoomDType)g->ir.nodes[x].dtype;
  if (dtype_is_int(xt)) {
    if (lo >= 0 && weak_int_past(g, lo, xt, true)) ops[1] = -1;
    if (hi >= 0 && weak_int_past(g, hi, xt, false)) ops[2] = -1;
  }
  int32_t cur = x, src[2];
  if (ops[1] >= 0 && ops[2] >= 0) { /* the three-operand ufunc */
    /* NumPy promotes the three together, not pairwise: with a float among them the result is the
     * widest of each one's smallest safe float (int8, uint16, float16 -> float32, where pairwise
     * promotion would give float64); without, the pairwise integer promotion (associative). */
    bool strong = false, any_float = false;
    LoomDType r = LOOM_BOOL, rf = LOOM_FLOAT16;
    for (int k = 0; k < 3; k++)
      if (!is_weak(g, ops[k])) {
        LoomDType t = (LoomDType)g->ir.nodes[ops[k]].dtype;
        r = strong ? dtype_promote(r, t) : t;
        strong = true;
        any_float |= dtype_is_float(t);
        if (t != LOOM_BOOL && dtype_bits(dtype_float_of(t)) > dtype_bits(rf)) rf = dtype_float_of(t);
      }
    if (any_float) r = rf;
    if (strong) {
      for (int k = 0; k < 3; k++) {
        if (!is_weak(g, ops[k])) continue;
        DKind kw = dtype_kind((LoomDType)g->ir.nodes[ops[k]].dtype);
        if ((kw == DK_INT || kw == DK_UINT) && r == LOOM_BOOL) r = LOOM_INT64;
        if (kw == DK_FLOAT && !dtype_is_float(r)) r = LOOM_FLOAT64;
      }
      for (int k = 0; k < 3; k++) {
        int range = 0;
        LoomNode orig = ops[k];
        if (!is_weak(g, orig)) {
          if (g->ir.nodes[orig].dtype != r && ir_cast(&g->ir, orig, r, &ops[k], d)) return END(g);
          continue;
        }
        if (ir_weak_to(&g->ir, orig, r, &range, &ops[k], d)) return END(g);
        if (range != 0) {
          ir_weak_range_error(&g->ir, orig, r, d);
          return END(g);
        }
      }
      cur = ops[0];
    }
  }
  /* maximum(x, lo), then minimum(that, hi): on a tie of zeros (-0.0, 0.0) the bound, as NumPy's float32 /
   * float64 clip gives with one bound or array bounds (maximum/minimum give their second operand there;
   * float16's give the first: x). With two 0-d bounds NumPy's clip loop keeps x (clip(0.0, -0.0, 1.0) is
   * 0.0): the operands swap. A NaN x or bound propagates either way (maximum's NaN rule). */
  bool keep_x = ops[1] >= 0 && ops[2] >= 0 && g->ir.nodes[ops[1]].ndim == 0 && g->ir.nodes[ops[2]].ndim == 0 &&
                g->ir.nodes[cur].dtype != LOOM_FLOAT16;
  if (ops[1] >= 0) {
    src[keep_x] = cur;
    src[!keep_x] = ops[1];
    if (ir_elem(&g->ir, LOOM_OP_MAXIMUM, 2, src, &cur, d)) return END(g);
  }
  if (ops[2] >= 0) {
    src[keep_x] = cur;
    src[!keep_x] = ops[2];
    if (ir_elem(&g->ir, LOOM_OP_MINIMUM, 2, src, &cur, d)) return END(g);
  }
  *out = cur;
  return END(g);
}

LoomStatus loom_cast(LoomGraph *g, LoomNode x, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_cast")) ir_cast(&g->ir, x, dtype, out, d);
  return END(g);
}

/* ---- movement ------------------------------------------------------------------------------------------- */
static const IrNode *node_of(LoomGraph *g, LoomNode x, Diag *d, const char *fn) {
  if (x < 0 || x >= g->ir.nnodes) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: node %d is not a node of this graph (it has %d)", fn, x,
               g->ir.nnodes);
    return NULL;
  }
  return &g->ir.nodes[x];
}

LoomStatus loom_broadcast_to(LoomGraph *g, LoomNode x, int32_t ndim, const int64_t *shape, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_broadcast_to")) ir_broadcast(&g->ir, x, ndim, shape, out, d);
  return END(g);
}

LoomStatus loom_reshape(LoomGraph *g, LoomNode x, int32_t ndim, const int64_t *shape, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_reshape") || !(s = node_of(g, x, d, "loom_reshape"))) return END(g);
  if (ndim < 0 || ndim > LOOM_MAX_RANK || (ndim > 0 && !shape)) {
    diag_error(d, LOOM_ERR_SHAPE, "loom_reshape: ndim %d must be in 0..%d with a non-NULL shape", ndim, LOOM_MAX_RANK);
    return END(g);
  }
  int64_t sh[LOOM_MAX_RANK], known = 1;
  int infer = -1;
  char want[400];
  ir_format_shape(want, sizeof want, ndim, shape);
  int64_t size = ir_numel(s->ndim, s->shape);
  for (int i = 0; i < ndim; i++) {
    sh[i] = shape[i];
    if (shape[i] == -1) {
      if (infer >= 0) {
        diag_error(d, LOOM_ERR_SHAPE, "can only specify one unknown dimension (shape %s)", want);
        return END(g);
      }
      infer = i;
    } else if (shape[i] < 0) {
      diag_error(d, LOOM_ERR_SHAPE, "loom_reshape: negative dimension %lld in shape %s", (long long)shape[i], want);
      return END(g);
    } else if (shape[i] == 0 || known <= INT64_MAX / shape[i]) {
      known *= shape[i];
    } else {
      diag_error(d, LOOM_ERR_SHAPE, "loom_reshape: shape %s is too large", want);
      return END(g);
    }
  }
  if (infer >= 0) {
    if (known == 0 || size % known != 0) {
      diag_error(d, LOOM_ERR_SHAPE, "cannot reshape array of size %lld into shape %s", (long long)size, want);
      return END(g);
    }
    sh[infer] = size / known;
  }
  if (ndim == s->ndim && memcmp(sh, s->shape, sizeof(int64_t) * (size_t)ndim) == 0) {
    *out = x;
    return END(g);
  }
  ir_reshape(&g->ir, x, ndim, sh, out, d);
  return END(g);
}

LoomStatus loom_permute(LoomGraph *g, LoomNode x, const int32_t *perm, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_permute") || !(s = node_of(g, x, d, "loom_permute"))) return END(g);
  int32_t p[LOOM_MAX_RANK];
  int nd = s->ndim;
  for (int i = 0; i < nd; i++) {
    int32_t v = perm ? perm[i] : nd - 1 - i;
    if (v < -nd || v >= nd) {
      diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", v, nd);
      return END(g);
    }
    p[i] = v < 0 ? v + nd : v;
  }
  ir_permute(&g->ir, x, p, out, d);
  return END(g);
}

/* Python's slice.indices(length) followed by the slice's length. */
static void slice_indices(int64_t start, int64_t stop, int64_t step, int64_t length, int64_t *b, int64_t *len) {
  __int128 lo = step > 0 ? 0 : -1, hi = step > 0 ? length : length - 1, s, e;
  if (start == LOOM_SLICE_NONE) s = step < 0 ? hi : lo;
  else {
    s = start;
    if (s < 0) {
      s += length;
      if (s < lo) s = lo;
    } else if (s > hi) s = hi;
  }
  if (stop == LOOM_SLICE_NONE) e = step < 0 ? lo : hi;
  else {
    e = stop;
    if (e < 0) {
      e += length;
      if (e < lo) e = lo;
    } else if (e > hi) e = hi;
  }
  __int128 n = 0, st = step;
  if (st > 0 && s < e) n = (e - s - 1) / st + 1;
  if (st < 0 && e < s) n = (s - e - 1) / (-st) + 1;
  *b = (int64_t)s;
  *len = (int64_t)n;
}

LoomStatus loom_slice(LoomGraph *g, LoomNode x, const int64_t *start, const int64_t *stop, const int64_t *step,
                      LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_slice") || !(s = node_of(g, x, d, "loom_slice"))) return END(g);
  int64_t b[LOOM_MAX_RANK], k[LOOM_MAX_RANK], len[LOOM_MAX_RANK];
  for (int i = 0; i < s->ndim; i++) {
    k[i] = step ? step[i] : 1;
    if (k[i] == 0) {
      diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice step cannot be zero (axis %d)", i);
      return END(g);
    }
    slice_indices(start ? start[i] : LOOM_SLICE_NONE, stop ? stop[i] : LOOM_SLICE_NONE, k[i], s->shape[i], &b[i],
                  &len[i]);
  }
  ir_slice(&g->ir, x, b, k, len, out, d);
  return END(g);
}

LoomStatus loom_expand_dims(LoomGraph *g, LoomNode x, int32_t axis, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_expand_dims") || !(s = node_of(g, x, d, "loom_expand_dims"))) return END(g);
  int nd = s->ndim + 1;
  if (axis < -nd || axis >= nd) {
    diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, nd);
    return END(g);
  }
  if (nd > LOOM_MAX_RANK) {
    diag_error(d, LOOM_ERR_SHAPE, "loom_expand_dims: the result would have rank %d > %d", nd, LOOM_MAX_RANK);
    return END(g);
  }
  int a = axis < 0 ? axis + nd : axis;
  int64_t sh[LOOM_MAX_RANK];
  for (int i = 0, j = 0; i < nd; i++) sh[i] = i == a ? 1 : s->shape[j++];
  ir_reshape(&g->ir, x, nd, sh, out, d);
  return END(g);
}

LoomStatus loom_squeeze(LoomGraph *g, LoomNode x, int32_t naxes, const int32_t *axes, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_squeeze") || !(s = node_of(g, x, d, "loom_squeeze"))) return END(g);
  bool drop[LOOM_MAX_RANK] = {false};
  if (naxes < 0 || naxes > s->ndim || (naxes > 0 && !axes)) {
    diag_error(d, LOOM_ERR_AXIS, "loom_squeeze: naxes %d must be in 0..%d with non-NULL axes", naxes, s->ndim);
    return END(g);
  }
  for (int i = 0; i < naxes; i++) {
    int32_t v = axes[i];
    if (v < -s->ndim || v >= s->ndim) {
      diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", v, s->ndim);
      return END(g);
    }
    int a = v < 0 ? v + s->ndim : v;
    if (drop[a]) {
      diag_error(d, LOOM_ERR_AXIS, "axis %d appears twice", a);
      return END(g);
    }
    if (s->shape[a] != 1) {
      diag_error(d, LOOM_ERR_SHAPE, "cannot select an axis to squeeze out which has size not equal to one (axis %d has size %lld)",
                 a, (long long)s->shape[a]);
      return END(g);
    }
    drop[a] = true;
  }
  int64_t sh[LOOM_MAX_RANK];
  int nd = 0;
  for (int i = 0; i < s->ndim; i++)
    if (!(naxes == 0 ? s->shape[i] == 1 : drop[i])) sh[nd++] = s->shape[i];
  if (nd == s->ndim) *out = x;
  else ir_reshape(&g->ir, x, nd, sh, out, d);
  return END(g);
}

/* ---- reductions -------------------------------------------------------------------------------------------- */
LoomStatus loom_reduce_dtype(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t naxes, const int32_t *axes,
                             int keepdims, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_reduce") || !(s = node_of(g, x, d, "loom_reduce"))) return END(g);
  const char *name = reduce_op_name(op);
  if (!name) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_reduce: %d is not a LoomReduceOp", (int)op);
    return END(g);
  }
  int nd = s->ndim;
  uint32_t all = nd >= 32 ? UINT32_MAX : (1u << nd) - 1, mask = 0;
  if (naxes < 0 || (naxes > 0 && !axes)) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: naxes %d needs a non-NULL axes array", name, naxes);
    return END(g);
  }
  if (naxes == 0 && !axes) mask = all;
  for (int i = 0; i < naxes; i++) {
    int32_t v = axes[i];
    if (v < -nd || v >= nd) {
      diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", v, nd);
      return END(g);
    }
    int a = v < 0 ? v + nd : v;
    if (mask & (1u << a)) {
      diag_error(d, LOOM_ERR_AXIS, "axis %d appears twice", a);
      return END(g);
    }
    mask |= 1u << a;
  }
  if ((op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX) && mask != all && __builtin_popcount(mask) != 1) {
    diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: takes exactly one axis or all axes, not %d of %d", name,
               __builtin_popcount(mask), nd);
    return END(g);
  }
  ir_reduce(&g->ir, op, x, mask, keepdims != 0, dtype, out, d);
  return END(g);
}

LoomStatus loom_reduce(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t naxes, const int32_t *axes, int keepdims,
                       LoomNode *out) {
  return loom_reduce_dtype(g, op, x, naxes, axes, keepdims, LOOM_DTYPE_COUNT, out);
}

LoomStatus loom_scan(LoomGraph *g, LoomReduceOp op, LoomNode x, int32_t axis, LoomDType dtype, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_scan") || !(s = node_of(g, x, d, "loom_scan"))) return END(g);
  int nd = s->ndim;
  if (nd >= 1 && axis >= -nd && axis < nd) axis = axis < 0 ? axis + nd : axis;
  else if (nd >= 1) {
    diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, nd);
    return END(g);
  }
  ir_scan(&g->ir, op, x, axis, dtype, out, d);
  return END(g);
}

LoomStatus loom_gather(LoomGraph *g, LoomNode data, LoomNode idx, int32_t axis, int32_t mode, LoomNode *out) {
  BEGIN(g);
  const IrNode *s;
  if (!need_out(out, d, "loom_gather") || !(s = node_of(g, data, d, "loom_gather")) || !node_of(g, idx, d, "loom_gather"))
    return END(g);
  int nd = s->ndim;
  if (nd >= 1 && axis >= -nd && axis < nd) axis = axis < 0 ? axis + nd : axis;
  else if (nd >= 1) {
    diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, nd);
    return END(g);
  }
  ir_gather(&g->ir, data, idx, axis, (IrGatherMode)mode, out, d);
  return END(g);
}

LoomStatus loom_scatter(LoomGraph *g, LoomNode base, LoomNode idx, LoomNode values, int32_t op, LoomNode *out) {
  BEGIN(g);
  if (need_out(out, d, "loom_scatter") && node_of(g, base, d, "loom_scatter") && node_of(g, idx, d, "loom_scatter") &&
      node_of(g, values, d, "loom_scatter"))
    ir_scatter(&g->ir, base, idx, values, (IrScatterOp)op, out, d);
  return END(g);
}

LoomStatus loom_node_info(LoomGraph *g, LoomNode node, LoomDType *dtype, int32_t *ndim, int64_t *shape) {
  BEGIN(g);
  const IrNode *s = node_of(g, node, d, "loom_node_info");
  if (s) {
    if (dtype) *dtype = (LoomDType)s->dtype;
    if (ndim) *ndim = s->ndim;
    if (shape)
      for (int i = 0; i < s->ndim; i++) shape[i] = s->shape[i];
  }
  return END(g);
}

/* ---- graph reuse (the Python @loom.fuse cache) ------------------------------------------------------- */
LoomStatus loom_input_rebind(LoomGraph *g, LoomNode input, const LoomArray *array) {
  BEGIN(g);
  const IrNode *s = node_of(g, input, d, "loom_input_rebind");
  if (!s) return END(g);
  if (s->kind != IR_INPUT || s->input < 0 || s->input >= g->ir.ninputs) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_input_rebind: node %d was not made by loom_input", input);
    return END(g);
  }
  if (!array) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_input_rebind: array is NULL");
    return END(g);
  }
  LoomArray *cur = &g->ir.inputs[s->input];
  if (array->dtype != cur->dtype || array->ndim != cur->ndim || array->device != cur->device ||
      array->device_index != cur->device_index) {
    const char *got = loom_dtype_name(array->dtype);
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_input_rebind: the new array (dtype %s, rank %d, device %d:%d) must have the input's "
               "dtype %s, rank %d and device %d:%d",
               got ? got : "invalid", (int)array->ndim, (int)array->device, (int)array->device_index,
               loom_dtype_name(cur->dtype), cur->ndim, (int)cur->device, (int)cur->device_index);
    return END(g);
  }
  for (int i = 0; i < cur->ndim; i++)
    if (array->shape[i] != cur->shape[i]) {
      char want[400], got[400];
      ir_format_shape(want, sizeof want, cur->ndim, cur->shape);
      ir_format_shape(got, sizeof got, array->ndim, array->shape);
      diag_error(d, LOOM_ERR_SHAPE, "loom_input_rebind: the new array has shape %s, the input has %s", got, want);
      return END(g);
    }
  if (!array->data && ir_numel(cur->ndim, cur->shape) > 0) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_input_rebind: data is NULL for a non-empty array");
    return END(g);
  }
  if (!ir_array_span_ok(array)) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_input_rebind: shape and strides span more than 2^62 bytes; no array is that large");
    return END(g);
  }
  ir_input_rebind(&g->ir, s->input, array->data, array->strides);
  return END(g);
}

/* The checks of loom_input_rebind without setting up a Diag (a 1 KiB message buffer) per input: a
 * valid pair is rebound directly; the first invalid one goes through loom_input_rebind, which fails
 * with the precise message. */
LoomStatus loom_input_rebind_many(LoomGraph *g, int32_t n, const LoomNode *inputs,
                                  const LoomArray *const *arrays) {
  if (!g || n < 0 || (n > 0 && (!inputs || !arrays))) return LOOM_ERR_INVALID_ARGUMENT;
  for (int32_t k = 0; k < n; k++) {
    LoomNode x = inputs[k];
    const LoomArray *a = arrays[k];
    const IrNode *s = x >= 0 && x < g->ir.nnodes ? &g->ir.nodes[x] : NULL;
    LoomArray *cur = s && s->kind == IR_INPUT && s->input >= 0 && s->input < g->ir.ninputs
                         ? &g->ir.inputs[s->input] : NULL;
    int ok = cur && a && a->dtype == cur->dtype && a->ndim == cur->ndim && a->device == cur->device &&
             a->device_index == cur->device_index;
    for (int i = 0; ok && i < cur->ndim; i++) ok = a->shape[i] == cur->shape[i];
    if (ok && !a->data && ir_numel(cur->ndim, cur->shape) > 0) ok = 0;
    if (ok && !ir_array_span_ok(a)) ok = 0;
    if (!ok) {
      LoomStatus st = loom_input_rebind(g, x, a);
      if (st) return st;
      continue;
    }
    ir_input_rebind(&g->ir, s->input, a->data, a->strides);
  }
  return LOOM_OK;
}

int32_t loom_graph_node_count(const LoomGraph *g) { return g ? g->ir.nnodes : 0; }
