/* SPDX-License-Identifier: Apache-2.0 */
/* fold.c: pass_fold, constant folding and simple identities on the graph.
 *
 * Contract. Requires: a verified graph and roots. Guarantees: every IR_ELEM/IR_CAST reachable from the
 * roots whose operands are all constants (IR_CONST or a broadcast of one) and whose op can be computed
 * exactly as the kernels do is replaced by an IR_CONST (broadcast to the node's shape when it has a
 * rank); a movement op of a constant becomes a broadcast of it; x / c becomes x * (1/c) for a power of two
 * c of a float dtype (the same bits: reciprocal_if_pow2); x*1 (any dtype), x+0 (ints and bool)
 * and a cast to the same dtype become x when x already has the node's shape and dtype; a keepdims
 * reduction that is not a root becomes its plain twin reshaped (so the two share one node). Roots are
 * replaced; values are bit-identical to what the kernels would compute.
 *
 * Approach: one pass over the nodes reachable from the roots in index order (indices are
 * topological), mapping old -> new. Scalars are computed in the op's compute dtype with the semantics
 * of ir/ir.h (wrapping ints, x//0 = 0, NaN rules) and converted to the result dtype with the cast
 * rules; float32 math is done in C float, float16 results are rounded through _Float16. Ops whose
 * kernel result may differ by an ulp (exp, log, sin, pow on floats, ...) are not folded.
 */
#include <math.h>
#include <string.h>

#include "passes/passes.h"

/* ---- scalar semantics ------------------------------------------------------------------------------- */

static int64_t sext(uint64_t u, int bits) {
  if (bits >= 64) return (int64_t)u;
  uint64_t m = 1ull << (bits - 1);
  u &= (1ull << bits) - 1;
  return (int64_t)((u ^ m) - m);
}
static uint64_t zext(uint64_t u, int bits) { return bits >= 64 ? u : u & ((1ull << bits) - 1); }

static double round_float(LoomDType t, double f) {
  if (t == LOOM_FLOAT32) return (double)(float)f;
  if (t == LOOM_FLOAT16) return (double)(_Float16)(float)f; /* values here are float32 already */
  if (t == LOOM_BFLOAT16) return ir_scalar_canon(t, (Scalar){.f = f}).f;
  return f;
}

/* The value v of dtype `from` converted to dtype `to` with KI_CAST semantics. */
static Scalar cast_scalar(Scalar v, LoomDType from, LoomDType to) {
  DKind fk = dtype_kind(from), tk = dtype_kind(to);
  int bits = dtype_bits(to);
  Scalar r = {0};
  if (tk == DK_BOOL) {
    r.u = fk == DK_COMPLEX ? (v.f != 0.0 || v.im != 0.0)
        : fk == DK_FLOAT ? (v.f != 0.0) : fk == DK_INT ? (v.i != 0) : (v.u != 0);
    return r;
  }
  if (tk == DK_COMPLEX) { /* the parts, each as a cast to the parts' dtype */
    LoomDType pt = dtype_real_of(to);
    r = cast_scalar(fk == DK_COMPLEX ? (Scalar){.f = v.f} : v, fk == DK_COMPLEX ? dtype_real_of(from) : from, pt);
    r.im = fk == DK_COMPLEX ? cast_scalar((Scalar){.f = v.im}, dtype_real_of(from), pt).f : 0.0;
    return r;
  }
  if (fk == DK_COMPLEX) { /* a complex to a real dtype takes the real part */
    from = dtype_real_of(from);
    fk = DK_FLOAT;
    v.im = 0;
  }
  if (tk == DK_FLOAT) {
    if (to == LOOM_BFLOAT16) {
      r.f = fk == DK_FLOAT ? v.f : fk == DK_INT ? (double)v.i : (double)v.u; /* exact: see fold_scalar */
      r.f = round_float(to, r.f);
    } else if (fk == DK_FLOAT) {
      if (to == LOOM_FLOAT16) r.f = (double)(_Float16)v.f;
      else if (to == LOOM_FLOAT32) r.f = (double)(float)v.f;
      else r.f = v.f;
    } else if (fk == DK_INT) {
      if (to == LOOM_FLOAT16) r.f = (double)(_Float16)v.i;
      else if (to == LOOM_FLOAT32) r.f = (double)(float)v.i;
      else r.f = (double)v.i;
    } else {
      if (to == LOOM_FLOAT16) r.f = (double)(_Float16)v.u;
      else if (to == LOOM_FLOAT32) r.f = (double)(float)v.u;
      else r.f = (double)v.u;
    }
    return r;
  }
  if (fk == DK_FLOAT) { /* saturating, NaN -> 0 */
    double f = v.f;
    if (isnan(f)) return r;
    if (tk == DK_INT) {
      double lo = -ldexp(1.0, bits - 1), hi = ldexp(1.0, bits - 1);
      if (f <= lo) r.i = sext(1ull << (bits - 1), bits);
      else if (f >= hi) r.i = sext((1ull << (bits - 1)) - 1, bits);
      else r.i = (int64_t)f;
    } else {
      double hi = ldexp(1.0, bits);
      if (f <= 0) r.u = 0;
      else if (f >= hi) r.u = bits >= 64 ? UINT64_MAX : (1ull << bits) - 1;
      else r.u = (uint64_t)f;
    }
    return r;
  }
  uint64_t raw = fk == DK_INT ? (uint64_t)v.i : v.u; /* int -> int wraps */
  if (tk == DK_INT) r.i = sext(raw, bits);
  else r.u = zext(raw, bits);
  return r;
}

/* Computes op on a, b (already in compute dtype cd); the result has dtype rd (cd or bool).
 * Returns false when the op is not folded. */
static bool eval_float(LoomOp op, LoomDType cd, bool half, double a, double b, Scalar *r) {
  bool f32 = cd == LOOM_FLOAT32;
  double x;
  switch (op) {
  case LOOM_OP_NEG: x = -a; break;
  case LOOM_OP_ABS: x = fabs(a); break;
  case LOOM_OP_SIGN: x = isnan(a) ? a : a > 0 ? 1.0 : a < 0 ? -1.0 : 0.0; break;
  case LOOM_OP_SQRT: x = f32 ? (double)sqrtf((float)a) : sqrt(a); break;
  case LOOM_OP_FLOOR: x = floor(a); break;
  case LOOM_OP_CEIL: x = ceil(a); break;
  case LOOM_OP_TRUNC: x = trunc(a); break;
  case LOOM_OP_RINT: x = nearbyint(a); break;
  case LOOM_OP_ADD: x = f32 ? (double)((float)a + (float)b) : a + b; break;
  case LOOM_OP_SUB: x = f32 ? (double)((float)a - (float)b) : a - b; break;
  case LOOM_OP_MUL: x = f32 ? (double)((float)a * (float)b) : a * b; break;
  case LOOM_OP_TRUEDIV: x = f32 ? (double)((float)a / (float)b) : a / b; break;
  /* on a tie (0.0, -0.0) NumPy's float32/float64 maximum/minimum give b, its float16 ones a (codegen's
   * float_minmax) */
  case LOOM_OP_MAXIMUM: x = isnan(a) || isnan(b) ? NAN : a > b || (half && a == b) ? a : b; break;
  case LOOM_OP_MINIMUM: x = isnan(a) || isnan(b) ? NAN : a < b || (half && a == b) ? a : b; break;
  case LOOM_OP_FMAX: x = fmax(a, b); break;
  case LOOM_OP_FMIN: x = fmin(a, b); break;
  case LOOM_OP_COPYSIGN: x = copysign(a, b); break;
  case LOOM_OP_RECIPROCAL: x = f32 ? (double)(1.0f / (float)a) : 1.0 / a; break;
  default: return false;
  }
  r->f = round_float(cd, x);
  return true;
}

static bool eval_compare(LoomOp op, DKind k, Scalar a, Scalar b, Scalar *r) {
  int c; /* -1, 0, 1, or 2 for unordered */
  if (k == DK_FLOAT) c = (isnan(a.f) || isnan(b.f)) ? 2 : a.f < b.f ? -1 : a.f > b.f ? 1 : 0;
  else if (k == DK_INT) c = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  else c = a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
  switch (op) {
  case LOOM_OP_EQ: r->u = c == 0; break;
  case LOOM_OP_NE: r->u = c != 0; break;
  case LOOM_OP_LT: r->u = c == -1; break;
  case LOOM_OP_LE: r->u = c == -1 || c == 0; break;
  case LOOM_OP_GT: r->u = c == 1; break;
  case LOOM_OP_GE: r->u = c == 1 || c == 0; break;
  default: return false;
  }
  return true;
}

static bool truth(DKind k, Scalar v) {
  if (k == DK_COMPLEX) return v.f != 0.0 || v.im != 0.0;
  return k == DK_FLOAT ? v.f != 0.0 : k == DK_INT ? v.i != 0 : v.u != 0;
}

/* The complex ops whose kernel sequence is exact (no rounding, or one rounding per part); the
 * others (multiplication, division, functions) are left to the kernels. */
static bool eval_complex(LoomOp op, LoomDType cd, Scalar a, Scalar b, Scalar *r) {
  LoomDType pt = dtype_real_of(cd);
  switch (op) {
  case LOOM_OP_NEG: r->f = -a.f; r->im = -a.im; break;
  case LOOM_OP_CONJ: r->f = a.f; r->im = -a.im; break;
  case LOOM_OP_REAL: r->f = a.f; r->im = 0; return true;
  case LOOM_OP_IMAG: r->f = a.im; r->im = 0; return true;
  case LOOM_OP_ADD: r->f = round_float(pt, a.f + b.f); r->im = round_float(pt, a.im + b.im); break;
  case LOOM_OP_SUB: r->f = round_float(pt, a.f - b.f); r->im = round_float(pt, a.im - b.im); break;
  case LOOM_OP_EQ: r->u = a.f == b.f && a.im == b.im; return true;
  case LOOM_OP_NE: r->u = a.f != b.f || a.im != b.im; return true;
  case LOOM_OP_ISNAN: r->u = isnan(a.f) || isnan(a.im); return true;
  case LOOM_OP_ISINF: r->u = isinf(a.f) || isinf(a.im); return true;
  case LOOM_OP_ISFINITE: r->u = isfinite(a.f) && isfinite(a.im); return true;
  default: return false;
  }
  return true;
}

/* Integer and bool ops in dtype cd (kind INT, UINT or BOOL). */
static bool eval_int(LoomOp op, LoomDType cd, Scalar a, Scalar b, Scalar *r) {
  DKind k = dtype_kind(cd);
  int bits = dtype_bits(cd);
  bool sg = k == DK_INT;
  uint64_t ua = sg ? (uint64_t)a.i : a.u, ub = sg ? (uint64_t)b.i : b.u, x;
  int64_t min = sg ? sext(1ull << (bits - 1), bits) : 0;
  if (k == DK_BOOL) {
    switch (op) {
    case LOOM_OP_ADD: case LOOM_OP_MAXIMUM: case LOOM_OP_FMAX: case LOOM_OP_BITWISE_OR:
      r->u = (ua | ub) != 0; return true;
    case LOOM_OP_MUL: case LOOM_OP_MINIMUM: case LOOM_OP_FMIN: case LOOM_OP_BITWISE_AND:
      r->u = (ua & ub) != 0; return true;
    case LOOM_OP_BITWISE_XOR: r->u = (ua ^ ub) != 0; return true;
    case LOOM_OP_BITWISE_NOT: r->u = ua == 0; return true;
    case LOOM_OP_ABS: r->u = ua; return true;
    default: return false;
    }
  }
  switch (op) {
  case LOOM_OP_NEG: x = 0 - ua; break;
  case LOOM_OP_ABS: x = sg && a.i < 0 ? 0 - ua : ua; break;
  case LOOM_OP_SIGN: x = sg ? (uint64_t)(int64_t)(a.i > 0 ? 1 : a.i < 0 ? -1 : 0) : (ua != 0); break;
  case LOOM_OP_BITWISE_NOT: x = ~ua; break;
  case LOOM_OP_RECIPROCAL: /* 1 / x truncated: 1 and -1 are their own reciprocals, 1 / 0 is 0 */
    x = ua == 1 ? 1 : (sg && a.i == -1) ? (uint64_t)-1 : 0;
    break;
  case LOOM_OP_ADD: x = ua + ub; break;
  case LOOM_OP_SUB: x = ua - ub; break;
  case LOOM_OP_MUL: x = ua * ub; break;
  case LOOM_OP_FLOORDIV:
  case LOOM_OP_MOD:
    if (ub == 0) x = 0;
    else if (sg) {
      if (b.i == -1 && a.i == min) x = op == LOOM_OP_FLOORDIV ? (uint64_t)min : 0;
      else {
        int64_t q = a.i / b.i, m = a.i % b.i;
        if (m != 0 && ((m < 0) != (b.i < 0))) {
          q -= 1;
          m += b.i;
        }
        x = op == LOOM_OP_FLOORDIV ? (uint64_t)q : (uint64_t)m;
      }
    } else x = op == LOOM_OP_FLOORDIV ? ua / ub : ua % ub;
    break;
  case LOOM_OP_POW:
    if (sg && b.i < 0) x = a.i == 1 ? 1 : a.i == -1 ? ((b.i & 1) ? (uint64_t)-1 : 1) : 0;
    else {
      uint64_t base = ua, e = ub;
      x = 1;
      while (e) {
        if (e & 1) x *= base;
        base *= base;
        e >>= 1;
      }
    }
    break;
  case LOOM_OP_MAXIMUM: case LOOM_OP_FMAX: x = sg ? (a.i >= b.i ? ua : ub) : (ua >= ub ? ua : ub); break;
  case LOOM_OP_MINIMUM: case LOOM_OP_FMIN: x = sg ? (a.i <= b.i ? ua : ub) : (ua <= ub ? ua : ub); break;
  case LOOM_OP_BITWISE_AND: x = ua & ub; break;
  case LOOM_OP_BITWISE_OR: x = ua | ub; break;
  case LOOM_OP_BITWISE_XOR: x = ua ^ ub; break;
  case LOOM_OP_LEFT_SHIFT:
    x = (sg ? (b.i < 0 || b.i >= bits) : ub >= (uint64_t)bits) ? 0 : ua << ub;
    break;
  case LOOM_OP_RIGHT_SHIFT:
    if (sg ? (b.i < 0 || b.i >= bits) : ub >= (uint64_t)bits) x = sg && a.i < 0 ? (uint64_t)-1 : 0;
    else x = sg ? (uint64_t)(a.i >> ub) : ua >> ub;
    break;
  default: return false;
  }
  if (sg) r->i = sext(x, bits);
  else r->u = zext(x, bits);
  return true;
}

/* Folds node n (an ELEM or CAST) whose operands are the constants c[]; false if not folded. */
static bool fold_scalar(const IrGraph *g, const IrNode *n, const int32_t *c, Scalar *out) {
  if (n->kind == IR_CAST) {
    const IrNode *s = &g->nodes[c[0]];
    DKind sk = dtype_kind((LoomDType)s->dtype);
    if (n->dtype == LOOM_BFLOAT16 && ((sk == DK_INT && (s->value.i > (1ll << 53) || s->value.i < -(1ll << 53))) ||
                                      (sk == DK_UINT && s->value.u > (1ull << 53))))
      return false; /* not exact through a double: the kernel rounds the integer itself */
    *out = cast_scalar(s->value, (LoomDType)s->dtype, (LoomDType)n->dtype);
    return true;
  }
  LoomOp op = (LoomOp)n->op;
  const OpInfo *info = op_info(op);
  if (!info) return false;
  LoomDType rd = (LoomDType)n->dtype;
  if (op == LOOM_OP_WHERE) {
    const IrNode *cn = &g->nodes[c[0]];
    bool t = truth(dtype_kind((LoomDType)cn->dtype), cn->value);
    const IrNode *pick = &g->nodes[c[t ? 1 : 2]];
    Scalar v = cast_scalar(pick->value, (LoomDType)pick->dtype, dtype_compute(rd));
    *out = cast_scalar(v, dtype_compute(rd), rd);
    return true;
  }
  LoomDType da = (LoomDType)g->nodes[c[0]].dtype;
  LoomDType db = info->arity > 1 ? (LoomDType)g->nodes[c[1]].dtype : da;
  LoomDType cd = dtype_compute(ir_elem_operand_dtype(op, rd, da, db));
  Scalar a = cast_scalar(g->nodes[c[0]].value, da, cd);
  Scalar b = info->arity > 1 ? cast_scalar(g->nodes[c[1]].value, db, cd) : a;
  DKind k = dtype_kind(cd);
  Scalar r = {0};
  LoomDType resd = ir_elem_value_dtype(op, cd);
  bool ok;
  if (k == DK_COMPLEX) {
    if (op == LOOM_OP_LOGICAL_NOT) r.u = !truth(k, a);
    else if (op == LOOM_OP_LOGICAL_AND) r.u = truth(k, a) && truth(k, b);
    else if (op == LOOM_OP_LOGICAL_OR) r.u = truth(k, a) || truth(k, b);
    else if (op == LOOM_OP_LOGICAL_XOR) r.u = truth(k, a) != truth(k, b);
    else if (!eval_complex(op, cd, a, b, &r)) return false;
    *out = cast_scalar(r, resd, rd);
    return true;
  }
  switch (op) {
  case LOOM_OP_ISNAN: r.u = k == DK_FLOAT && isnan(a.f); ok = true; break;
  case LOOM_OP_ISINF: r.u = k == DK_FLOAT && isinf(a.f); ok = true; break;
  case LOOM_OP_ISFINITE: r.u = k != DK_FLOAT || isfinite(a.f); ok = true; break;
  case LOOM_OP_LOGICAL_NOT: r.u = !truth(k, a); ok = true; break;
  case LOOM_OP_LOGICAL_AND: r.u = truth(k, a) && truth(k, b); ok = true; break;
  case LOOM_OP_LOGICAL_OR: r.u = truth(k, a) || truth(k, b); ok = true; break;
  case LOOM_OP_LOGICAL_XOR: r.u = truth(k, a) != truth(k, b); ok = true; break;
  case LOOM_OP_EQ: case LOOM_OP_NE: case LOOM_OP_LT: case LOOM_OP_LE: case LOOM_OP_GT: case LOOM_OP_GE:
    ok = eval_compare(op, k, a, b, &r);
    break;
  default:
    if (resd == LOOM_BOOL && cd != LOOM_BOOL) return false;
    ok = k == DK_FLOAT ? eval_float(op, cd, ir_elem_operand_dtype(op, rd, da, db) == LOOM_FLOAT16, a.f, b.f, &r)
                       : eval_int(op, cd, a, b, &r);
  }
  if (!ok) return false;
  *out = cast_scalar(r, resd, rd);
  return true;
}

/* ---- the pass --------------------------------------------------------------------------------------- */

static bool same_shape(const IrNode *a, const IrNode *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

static bool is_value(const IrNode *c, int64_t want) {
  DKind k = dtype_kind((LoomDType)c->dtype);
  if (k == DK_FLOAT) return c->value.f == (double)want;
  if (k == DK_INT) return c->value.i == want;
  return c->value.u == (uint64_t)want;
}

/* Const c (0-d) shown at shape of n: c itself or a broadcast of it. */
static LoomStatus const_at(IrGraph *g, int32_t c, const IrNode *n, int32_t *out, Diag *d) {
  if (n->ndim == 0) {
    *out = c;
    return LOOM_OK;
  }
  IrNode b;
  pass_init_node(&b, IR_BROADCAST, g->nodes[c].dtype, n->ndim, n->shape);
  b.src[0] = c;
  return ir_add_raw(g, &b, out, d);
}

/* x / c with c a power of two of x's real float dtype whose reciprocal is a normal number of the dtype
 * it computes in: the constant 1/c (a node; -1 when the rule does not apply, -2 after an error in d).
 * x * (1/c) rounds the same real value x / c does, so the bits are the same; a multiply is several times
 * cheaper than a division, and since scalars are kernel parameters (passes/lower.c) LLVM no longer sees
 * the divisor to do this itself. */
static int32_t reciprocal_if_pow2(IrGraph *g, const IrNode *n, Diag *d) {
  int32_t k = pass_const_of(g, n->src[1]);
  const IrNode *x = &g->nodes[n->src[0]];
  LoomDType t = (LoomDType)n->dtype;
  if (k < 0 || !dtype_is_float(t) || g->nodes[k].dtype != n->dtype || x->dtype != n->dtype || !same_shape(x, n))
    return -1;
  double c = g->nodes[k].value.f, m;
  int e;
  if (!isfinite(c) || c == 0 || ((m = frexp(c, &e)) != 0.5 && m != -0.5)) return -1;
  double r = 1.0 / c, lo = dtype_compute(t) == LOOM_FLOAT64 ? 2.2250738585072014e-308 : 1.1754943508222875e-38;
  if (fabs(r) < lo || fabs(r) > (dtype_compute(t) == LOOM_FLOAT64 ? 8.98846567431158e307 : 1.7014118346046923e38))
    return -1;
  IrNode rc = g->nodes[k];
  rc.value = ir_scalar_canon(t, (Scalar){.f = r});
  if (rc.value.f != r) return -1; /* not exact in the storage dtype (float16: 1/c may not be a half) */
  rc.hash = 0;
  int32_t out;
  return ir_add_raw(g, &rc, &out, d) == LOOM_OK ? out : -2;
}

/* 2 ** x with x of the result's real float dtype and shape: exp2(x) is the same function (pow(2, y) is 2^y
 * exactly, NaN, +-inf, overflow and underflow alike) and several times cheaper than pow (fresh2 midi_to_hz,
 * 440 * 2 ** ((m - 69) / 12): SLEEF's powf 2.9 ms against exp2f 0.58 on 2M float32). The base is then read by
 * the pass (a plan for another base is a plan of its own). */
static bool base_two(const IrGraph *g, const IrNode *n) {
  int32_t k = pass_const_of(g, n->src[0]);
  const IrNode *x = &g->nodes[n->src[1]];
  LoomDType t = (LoomDType)n->dtype;
  return k >= 0 && dtype_is_float(t) && !dtype_is_complex(t) && x->dtype == n->dtype && same_shape(x, n) &&
         dtype_kind((LoomDType)g->nodes[k].dtype) == DK_FLOAT && g->nodes[k].value.f == 2.0;
}

/* x << c or x >> c with c a constant of x's integer dtype outside [0, width]: the amount `width` shifts the
 * same (every amount >= the width or negative shifts every bit out: 0, or the sign of an arithmetic right
 * shift; codegen/math_int.c), so all of them become one node. Constant shift amounts are baked into the
 * kernel (passes/lower.c), so a shift costs at most width + 1 kernels over every value of its amount.
 * The constant for the new amount (a node); -1 when the rule does not apply, -2 after an error in d. */
static int32_t clamped_shift_amount(IrGraph *g, const IrNode *n, Diag *d) {
  int32_t k = pass_const_of(g, n->src[1]);
  LoomDType t = (LoomDType)n->dtype;
  if (k < 0 || g->nodes[k].dtype != n->dtype || !dtype_is_int(t)) return -1;
  int w = dtype_bits(t);
  const Scalar v = g->nodes[k].value;
  if (dtype_kind(t) == DK_UINT ? v.u <= (uint64_t)w : v.i >= 0 && v.i <= w) return -1;
  IrNode rc = g->nodes[k];
  rc.value = ir_scalar_canon(t, (Scalar){.i = w});
  rc.hash = 0;
  int32_t out;
  return ir_add_raw(g, &rc, &out, d) == LOOM_OK ? out : -2;
}

/* A keepdims reduction (not a root) as the plain reduction viewed with its reduced axes as 1s: the
 * plain node is hash-consed, so x.mean(0) and the x.mean(0, keepdims=True) inside x.var(0) become one
 * reduction, computed once. The views are free (fusion reads the reduction through them). */
static LoomStatus plain_reduce(IrGraph *g, const IrNode *n, int32_t *out, Diag *d) {
  IrNode r = *n;
  const IrNode *s = &g->nodes[n->src[0]];
  r.flags &= (uint8_t)~IR_FLAG_KEEPDIMS;
  r.ndim = 0;
  for (int i = 0; i < s->ndim; i++)
    if (!(n->axes >> i & 1u)) r.shape[r.ndim++] = s->shape[i];
  for (int i = r.ndim; i < LOOM_MAX_RANK; i++) r.shape[i] = 0;
  r.hash = 0;
  int32_t plain;
  LoomStatus st = ir_add_raw(g, &r, &plain, d);
  if (st != LOOM_OK) return st;
  return ir_reshape(g, plain, n->ndim, n->shape, out, d);
}

static LoomStatus fold_node(IrModule *m, int32_t x, bool root, const int32_t *map, int32_t *out, Diag *d) {
  IrGraph *g = m->graph;
  IrNode n = g->nodes[x];
  int nsrc = ir_node_arity(&n);
  bool changed = false;
  for (int i = 0; i < nsrc; i++) {
    LOOM_ASSERT(d, n.src[i] >= 0 && n.src[i] < x && map[n.src[i]] >= 0);
    if (map[n.src[i]] != n.src[i]) {
      n.src[i] = map[n.src[i]];
      changed = true;
    }
  }
  LoomStatus st;
  if (n.kind == IR_ELEM || n.kind == IR_CAST) {
    int32_t c[3];
    bool all = true;
    for (int i = 0; i < nsrc; i++)
      if ((c[i] = pass_const_of(g, n.src[i])) < 0) all = false;
    Scalar v;
    if (all && fold_scalar(g, &n, c, &v)) {
      IrNode k;
      pass_init_node(&k, IR_CONST, n.dtype, 0, NULL);
      k.flags = n.flags & IR_FLAG_WEAK;
      k.value = ir_scalar_canon((LoomDType)n.dtype, v);
      int32_t kc;
      if ((st = ir_add_raw(g, &k, &kc, d)) != LOOM_OK) return st;
      for (int i = 0; i < nsrc; i++) pass_note_const_read(m, c[i]);
      pass_note_const_read(m, kc); /* hash-consed: may be a constant of the graph */
      return const_at(g, kc, &n, out, d);
    }
    if (n.kind == IR_CAST && g->nodes[n.src[0]].dtype == n.dtype && same_shape(&g->nodes[n.src[0]], &n)) {
      *out = n.src[0];
      return LOOM_OK;
    }
    if (n.kind == IR_ELEM && (n.op == LOOM_OP_MUL || n.op == LOOM_OP_ADD)) {
      bool add = n.op == LOOM_OP_ADD;
      for (int i = 0; i < 2; i++) {
        int32_t k = pass_const_of(g, n.src[i]);
        const IrNode *o = &g->nodes[n.src[1 - i]];
        if (k < 0 || o->dtype != n.dtype || !same_shape(o, &n)) continue;
        if (add && dtype_is_float((LoomDType)n.dtype)) continue; /* -0.0 + 0.0 is +0.0 */
        if (dtype_is_complex((LoomDType)n.dtype)) continue;     /* (inf+0j) * 1 is inf+nanj */
        if (is_value(&g->nodes[k], add ? 0 : 1)) {
          pass_note_const_read(m, k);
          *out = n.src[1 - i];
          return LOOM_OK;
        }
      }
    }
    if (n.kind == IR_ELEM && (n.op == LOOM_OP_LEFT_SHIFT || n.op == LOOM_OP_RIGHT_SHIFT)) {
      int32_t r = clamped_shift_amount(g, &n, d);
      if (r == -2) return d->status;
      if (r >= 0) {
        pass_note_const_read(m, pass_const_of(g, n.src[1]));
        pass_note_const_read(m, r);
        /* at the old amount's shape: a [1] amount may be what gives the shift its shape (fuzz seed 1019587) */
        if ((st = const_at(g, r, &g->nodes[n.src[1]], &n.src[1], d)) != LOOM_OK) return st;
        n.hash = 0;
        return ir_add_raw(g, &n, out, d);
      }
    }
    if (n.kind == IR_ELEM && n.op == LOOM_OP_POW && base_two(g, &n)) { /* 2 ** x: exp2(x) */
      pass_note_const_read(m, pass_const_of(g, n.src[0]));
      IrNode e;
      pass_init_node(&e, IR_ELEM, n.dtype, n.ndim, n.shape);
      e.op = LOOM_OP_EXP2;
      e.flags = n.flags;
      e.src[0] = n.src[1];
      return ir_add_raw(g, &e, out, d);
    }
    if (n.kind == IR_ELEM && n.op == LOOM_OP_TRUEDIV) {
      int32_t r = reciprocal_if_pow2(g, &n, d);
      if (r == -2) return d->status;
      if (r >= 0) {
        pass_note_const_read(m, pass_const_of(g, n.src[1]));
        pass_note_const_read(m, r);
        n.op = LOOM_OP_MUL;
        n.src[1] = r;
        n.hash = 0;
        return ir_add_raw(g, &n, out, d);
      }
    }
  } else if (n.kind == IR_REDUCE && (n.flags & IR_FLAG_KEEPDIMS) && !root) {
    return plain_reduce(g, &n, out, d);
  } else if (n.kind == IR_BROADCAST || n.kind == IR_RESHAPE || n.kind == IR_PERMUTE ||
             n.kind == IR_SLICE) {
    int32_t c = pass_const_of(g, n.src[0]);
    if (c >= 0) return const_at(g, c, &n, out, d);
  }
  if (!changed) {
    *out = x;
    return LOOM_OK;
  }
  n.hash = 0;
  return ir_add_raw(g, &n, out, d);
}

LoomStatus pass_fold(IrModule *m, Diag *d) {
  IrGraph *g = m->graph;
  int32_t nn = g->nnodes;
  int32_t *map = arena_alloc(m->arena, (size_t)(nn > 0 ? nn : 1) * sizeof *map);
  uint8_t *live = arena_alloc(m->arena, (size_t)(nn > 0 ? nn : 1));
  if (!map || !live) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fold: out of memory (%d nodes)", nn);
  for (int32_t i = 0; i < m->nroots; i++) {
    LOOM_ASSERT(d, m->roots[i] >= 0 && m->roots[i] < nn);
    live[m->roots[i]] = 2; /* 2: a root */
  }
  for (int32_t x = nn - 1; x >= 0; x--) { /* sources have smaller indices */
    map[x] = -1;
    if (!live[x]) continue;
    const IrNode *n = &g->nodes[x];
    for (int i = 0; i < 3; i++)
      if (n->src[i] >= 0 && n->src[i] < x && !live[n->src[i]]) live[n->src[i]] = 1;
  }
  for (int32_t x = 0; x < nn; x++) {
    if (!live[x]) continue;
    LoomStatus st = fold_node(m, x, live[x] == 2, map, &map[x], d);
    if (st != LOOM_OK) return st;
  }
  for (int32_t i = 0; i < m->nroots; i++) m->roots[i] = map[m->roots[i]];
  return LOOM_OK;
}
