/* SPDX-License-Identifier: Apache-2.0 */
/* verify.c: structural checks of both IR levels (run between passes in debug builds, and by parsers).
 *
 * Approach: re-derive what each node or instruction must be from its operands and compare; the first
 * mismatch is reported as LOOM_ERR_INTERNAL naming the node (%i) and the broken rule, since a bad IR
 * is a bug in whoever built it. Nothing is allocated except one reachability mask per kernel (from
 * the default allocator: a KernelIr carries no context).
 */
#include <string.h>

#include "ir/ir.h"

#define BAD(d, ...) diag_error((d), LOOM_ERR_INTERNAL, __VA_ARGS__)

static bool same_shape(int na, const int64_t *a, int nb, const int64_t *b) {
  return na == nb && memcmp(a, b, sizeof(int64_t) * (size_t)na) == 0;
}

static LoomStatus verify_node(const IrGraph *g, int32_t i, Diag *d) {
  const IrNode *n = &g->nodes[i];
  if (n->kind >= IR_KIND_COUNT) return BAD(d, "verify: %%%d has unknown kind %d", i, n->kind);
  if (n->dtype >= LOOM_DTYPE_COUNT) return BAD(d, "verify: %%%d has unknown dtype %d", i, n->dtype);
  if (n->ndim > LOOM_MAX_RANK) return BAD(d, "verify: %%%d has rank %d > %d", i, n->ndim, LOOM_MAX_RANK);
  for (int k = 0; k < n->ndim; k++)
    if (n->shape[k] < 0) return BAD(d, "verify: %%%d has negative dimension %lld", i, (long long)n->shape[k]);
  if (n->kind == IR_ELEM && !op_info((LoomOp)n->op)) return BAD(d, "verify: %%%d has unknown op %d", i, n->op);
  int arity = ir_node_arity(n);
  const IrNode *s[3] = {NULL, NULL, NULL};
  for (int k = 0; k < arity; k++) {
    if (n->src[k] < 0 || n->src[k] >= i)
      return BAD(d, "verify: %%%d operand %d is %%%d, not an earlier node", i, k, n->src[k]);
    s[k] = &g->nodes[n->src[k]];
  }
  const IrNode *x = s[0];
  switch ((IrKind)n->kind) {
  case IR_INPUT: {
    if (n->input < 0 || n->input >= g->ninputs)
      return BAD(d, "verify: %%%d reads input %d of %d", i, n->input, g->ninputs);
    const LoomArray *a = &g->inputs[n->input];
    if (a->dtype != (LoomDType)n->dtype || !same_shape(a->ndim, a->shape, n->ndim, n->shape))
      return BAD(d, "verify: %%%d does not match the dtype and shape of input %d", i, n->input);
    break;
  }
  case IR_IOTA:
    if (n->dtype != LOOM_INT64) return BAD(d, "verify: iota %%%d is not i64", i);
    break;
  case IR_CONST:
    if (n->ndim != 0) return BAD(d, "verify: constant %%%d is not 0-d", i);
    if ((n->flags & IR_FLAG_WEAK) && n->dtype != LOOM_BOOL && n->dtype != LOOM_INT64 && n->dtype != LOOM_UINT64 &&
        n->dtype != LOOM_FLOAT64 && n->dtype != LOOM_COMPLEX128)
      return BAD(d, "verify: weak constant %%%d must be b1, i64, u64, f64 or c128", i);
    break;
  case IR_ELEM: {
    LoomDType t[3] = {LOOM_BOOL, LOOM_BOOL, LOOM_BOOL}, rt;
    int nd = 0;
    int64_t shape[LOOM_MAX_RANK];
    for (int k = 0; k < arity; k++) {
      t[k] = (LoomDType)s[k]->dtype;
      if (s[k]->ndim > nd) nd = s[k]->ndim;
    }
    Diag tmp = {LOOM_OK, ""};
    if (ir_elem_result_dtype((LoomOp)n->op, t, &rt, &tmp))
      return BAD(d, "verify: %%%d: %s", i, tmp.msg);
    if (rt != (LoomDType)n->dtype)
      return BAD(d, "verify: %%%d has dtype %s, its op gives %s", i, dtype_short_name((LoomDType)n->dtype),
                 dtype_short_name(rt));
    for (int k = 0; k < nd; k++) shape[k] = 1;
    for (int k = 0; k < arity; k++)
      for (int a = 0; a < s[k]->ndim; a++) {
        int64_t *o = &shape[nd - s[k]->ndim + a], v = s[k]->shape[a];
        if (*o == 1) *o = v;
        else if (v != 1 && v != *o) return BAD(d, "verify: operands of %%%d do not broadcast", i);
      }
    if (!same_shape(nd, shape, n->ndim, n->shape))
      return BAD(d, "verify: %%%d shape is not the broadcast of its operands", i);
    break;
  }
  case IR_CAST:
  case IR_COPY:
    if (!same_shape(x->ndim, x->shape, n->ndim, n->shape)) return BAD(d, "verify: %%%d changes the shape", i);
    if (n->kind == IR_COPY && n->dtype != x->dtype) return BAD(d, "verify: copy %%%d changes the dtype", i);
    break;
  case IR_BROADCAST:
    if (n->dtype != x->dtype || x->ndim > n->ndim) return BAD(d, "verify: bad broadcast %%%d", i);
    for (int a = 0; a < x->ndim; a++) {
      int64_t v = x->shape[a], o = n->shape[n->ndim - x->ndim + a];
      if (v != o && v != 1) return BAD(d, "verify: broadcast %%%d: axis %d of size %lld cannot become %lld", i, a,
                                       (long long)v, (long long)o);
    }
    break;
  case IR_RESHAPE:
    if (n->dtype != x->dtype || ir_numel(x->ndim, x->shape) != ir_numel(n->ndim, n->shape))
      return BAD(d, "verify: reshape %%%d changes the size or dtype", i);
    break;
  case IR_PERMUTE: {
    bool seen[LOOM_MAX_RANK] = {false};
    if (n->dtype != x->dtype || n->ndim != x->ndim) return BAD(d, "verify: bad permute %%%d", i);
    for (int a = 0; a < n->ndim; a++) {
      int64_t p = n->arg[a];
      if (p < 0 || p >= n->ndim || seen[p] || n->shape[a] != x->shape[p])
        return BAD(d, "verify: permute %%%d: bad perm entry %d", i, a);
      seen[p] = true;
    }
    break;
  }
  case IR_SLICE:
    if (n->dtype != x->dtype || n->ndim != x->ndim) return BAD(d, "verify: bad slice %%%d", i);
    for (int a = 0; a < n->ndim; a++) {
      int64_t len = n->shape[a], b = n->arg[a], st = n->arg2[a], dim = x->shape[a];
      if (st == 0 || len > dim) return BAD(d, "verify: slice %%%d: bad axis %d", i, a);
      if (len > 0) {
        __int128 last = (__int128)b + (__int128)(len - 1) * st;
        if (b < 0 || b >= dim || last < 0 || last >= dim) return BAD(d, "verify: slice %%%d reads outside axis %d", i, a);
      }
    }
    break;
  case IR_REDUCE: {
    if (n->op >= LOOM_REDUCE_COUNT) return BAD(d, "verify: %%%d has unknown reduction %d", i, n->op);
    if (x->ndim < 32 && (n->axes >> x->ndim)) return BAD(d, "verify: reduce %%%d axes beyond rank", i);
    int nd = 0;
    int64_t shape[LOOM_MAX_RANK];
    for (int a = 0; a < x->ndim; a++) {
      if (!(n->axes & (1u << a))) shape[nd++] = x->shape[a];
      else if (n->flags & IR_FLAG_KEEPDIMS) shape[nd++] = 1;
    }
    if (!same_shape(nd, shape, n->ndim, n->shape)) return BAD(d, "verify: reduce %%%d has the wrong shape", i);
    break;
  }
  case IR_SCAN:
    if (n->op != LOOM_REDUCE_SUM && n->op != LOOM_REDUCE_PROD && n->op != LOOM_REDUCE_MIN && n->op != LOOM_REDUCE_MAX)
      return BAD(d, "verify: scan %%%d has op %d (sum, prod, min or max)", i, n->op);
    if (x->ndim < 1 || __builtin_popcount(n->axes) != 1 || (x->ndim < 32 && (n->axes >> x->ndim)))
      return BAD(d, "verify: scan %%%d must scan one axis of its source", i);
    if (!same_shape(x->ndim, x->shape, n->ndim, n->shape)) return BAD(d, "verify: scan %%%d has the wrong shape", i);
    break;
  case IR_GATHER: {
    int a = __builtin_ctz(n->axes ? n->axes : 1u);
    const IrNode *ix = s[1], *dat = s[2];
    bool ok = n->axes && __builtin_popcount(n->axes) == 1 && a < n->ndim && n->op < IR_GATHER_MODE_COUNT &&
              ix->dtype == LOOM_INT64 && same_shape(ix->ndim, ix->shape, n->ndim, n->shape) &&
              same_shape(x->ndim, x->shape, n->ndim, n->shape) && x->dtype == n->dtype && dat->dtype == n->dtype &&
              dat->ndim == n->ndim && dat->shape[a] >= 1;
    for (int k = 0; ok && k < n->ndim; k++) ok = k == a || dat->shape[k] == n->shape[k];
    if (!ok) return BAD(d, "verify: gather %%%d: needs one axis, a mode, i64 indices and its view of the data at its shape", i);
    break;
  }
  case IR_SCATTER:
    if (n->op >= IR_SCATTER_OP_COUNT || s[1]->dtype != LOOM_INT64 || s[2]->dtype != n->dtype || x->dtype != n->dtype ||
        !same_shape(x->ndim, x->shape, n->ndim, n->shape) || !same_shape(s[1]->ndim, s[1]->shape, s[2]->ndim, s[2]->shape))
      return BAD(d, "verify: scatter %%%d: needs a base of its shape and dtype, i64 indices and values of one shape", i);
    break;
  case IR_MATMUL: {
    const IrNode *y = s[1];
    int nd = n->ndim;
    if (nd < 2 || x->ndim != nd || y->ndim != nd || x->dtype != n->dtype || y->dtype != n->dtype ||
        !(dtype_is_float((LoomDType)n->dtype) || dtype_is_complex((LoomDType)n->dtype)))
      return BAD(d, "verify: matmul %%%d needs operands of its rank (>= 2) and a float or complex dtype", i);
    for (int a = 0; a < nd - 2; a++)
      if (x->shape[a] != n->shape[a] || y->shape[a] != n->shape[a])
        return BAD(d, "verify: matmul %%%d: batch dim %d differs", i, a);
    if (x->shape[nd - 2] != n->shape[nd - 2] || y->shape[nd - 1] != n->shape[nd - 1] ||
        x->shape[nd - 1] != y->shape[nd - 2] || x->shape[nd - 1] < 1)
      return BAD(d, "verify: matmul %%%d: shapes do not chain", i);
    break;
  }
  default: break;
  }
  return LOOM_OK;
}

LoomStatus ir_verify_graph(const IrGraph *g, Diag *d) {
  if (!g) return BAD(d, "verify: null graph");
  if (g->nnodes < 0 || g->nnodes > g->cap || (g->nnodes && !g->nodes)) return BAD(d, "verify: bad node count");
  for (int32_t i = 0; i < g->nnodes; i++) {
    LoomStatus st = verify_node(g, i, d);
    if (st) return st;
  }
  return LOOM_OK;
}

/* ---- kernel ------------------------------------------------------------------------------------------- */
static LoomStatus verify_instr(const KernelIr *k, int32_t i, Diag *d) {
  const KInstr *in = &k->instrs[i];
  LoomDType t = (LoomDType)in->dtype;
  /* A storage dtype (float16, bfloat16) is only the result of a rounding cast. */
  if (in->dtype >= LOOM_DTYPE_COUNT || (dtype_compute(t) != t && in->kind != KI_CAST))
    return BAD(d, "verify kernel: %%%d has dtype %d, not a compute dtype", i, in->dtype);
  int nsrc = in->kind == KI_ELEM ? (op_info((LoomOp)in->op) ? op_info((LoomOp)in->op)->arity : 0)
             : in->kind == KI_CAST || in->kind == KI_GATHER ? 1 : 0;
  LoomDType st[3] = {LOOM_BOOL, LOOM_BOOL, LOOM_BOOL};
  for (int s = 0; s < nsrc; s++) {
    if (in->src[s] < 0 || in->src[s] >= i)
      return BAD(d, "verify kernel: %%%d operand %d is %%%d, not an earlier instruction", i, s, in->src[s]);
    st[s] = (LoomDType)k->instrs[in->src[s]].dtype;
    if (dtype_compute(st[s]) != st[s] && in->kind != KI_CAST) /* a rounding is only cast back or stored */
      return BAD(d, "verify kernel: %%%d uses the %s rounding %%%d; only casts and stores may", i,
                 dtype_short_name(st[s]), in->src[s]);
  }
  if (dtype_compute(t) != t && st[0] != LOOM_FLOAT32 && st[0] != LOOM_FLOAT64 &&
      !(t == LOOM_BFLOAT16 && dtype_is_int(st[0])))
    return BAD(d, "verify kernel: %%%d rounds a %s value to %s (float32, float64 and, to bfloat16, ints round)",
               i, dtype_short_name(st[0]), dtype_short_name(t));
  switch (in->kind) {
  case KI_LOAD:
    if (in->buf < 0 || in->buf >= k->nbuf) return BAD(d, "verify kernel: %%%d loads buffer %d of %d", i, in->buf, k->nbuf);
    if (t != dtype_compute((LoomDType)k->bufs[in->buf].dtype))
      return BAD(d, "verify kernel: %%%d loads %s from a %s buffer", i, dtype_short_name(t),
                 dtype_short_name((LoomDType)k->bufs[in->buf].dtype));
    break;
  case KI_CONST:
  case KI_CAST: break;
  case KI_ELEM: {
    const OpInfo *info = op_info((LoomOp)in->op);
    if (!info) return BAD(d, "verify kernel: %%%d has unknown op %d", i, in->op);
    if (info->rule == RULE_WHERE) {
      if (st[0] != LOOM_BOOL || st[1] != t || st[2] != t)
        return BAD(d, "verify kernel: where %%%d needs a b1 condition and two %s values", i, dtype_short_name(t));
      break;
    }
    LoomDType od = st[0];
    for (int s = 1; s < nsrc; s++)
      if (st[s] != od) return BAD(d, "verify kernel: %s %%%d has operands of different dtypes", info->name, i);
    if (t != ir_elem_value_dtype((LoomOp)in->op, od))
      return BAD(d, "verify kernel: %s %%%d has dtype %s for %s operands", info->name, i, dtype_short_name(t),
                 dtype_short_name(od));
    bool ok = true;
    switch (info->rule) {
    case RULE_SAME_NUM: ok = od != LOOM_BOOL; break;
    case RULE_FLOAT:
    case RULE_TRUEDIV: ok = dtype_is_float(od) || dtype_is_complex(od); break;
    case RULE_FLOAT_REAL:
    case RULE_PROMOTE_FLOAT:
    case RULE_COMPLEX: ok = dtype_is_float(od); break;
    case RULE_INT:
    case RULE_BITWISE: ok = !dtype_is_float(od) && !dtype_is_complex(od); break;
    case RULE_SHIFT: ok = dtype_is_int(od); break;
    case RULE_PROMOTE_NUM_REAL: ok = od != LOOM_BOOL && !dtype_is_complex(od); break;
    case RULE_PROMOTE_SUB:
    case RULE_NUMERIC:
    case RULE_PROMOTE_NUM: ok = od != LOOM_BOOL; break;
    case RULE_LOGICAL: ok = od == LOOM_BOOL; break;
    case RULE_RANDOM: ok = od == LOOM_UINT64; break;
    default: break;
    }
    if (in->op == LOOM_OP_LOGICAL_NOT) ok = od == LOOM_BOOL;
    if (!ok) return BAD(d, "verify kernel: %s %%%d cannot compute in %s", info->name, i, dtype_short_name(od));
    break;
  }
  case KI_ACC: {
    if (in->phase < 0 || in->phase >= k->nphase ||
        (k->phases[in->phase].kind != KP_REDUCE && k->phases[in->phase].kind != KP_SCAN))
      return BAD(d, "verify kernel: %%%d reads phase %d, not a reduce or scan phase", i, in->phase);
    const KPhase *p = &k->phases[in->phase];
    bool arg = p->reduce_op == LOOM_REDUCE_ARGMIN || p->reduce_op == LOOM_REDUCE_ARGMAX;
    if (t != (arg ? LOOM_INT64 : (LoomDType)p->acc_dtype))
      return BAD(d, "verify kernel: %%%d: acc of phase %d has the wrong dtype %s", i, in->phase, dtype_short_name(t));
    break;
  }
  case KI_REDSIZE:
  case KI_INDEX:
  case KI_NPOINTS:
    if (t != LOOM_INT64) return BAD(d, "verify kernel: %%%d (redsize, index or npoints) must be i64", i);
    break;
  case KI_OFFSET:
    if (t != LOOM_INT64) return BAD(d, "verify kernel: offset %%%d must be i64", i);
    if (in->buf < 0 || in->buf >= k->nbuf || k->bufs[in->buf].is_output)
      return BAD(d, "verify kernel: offset %%%d reads buffer %d, not an input of %d", i, in->buf, k->nbuf);
    break;
  case KI_GATHER:
    if (in->buf < 0 || in->buf >= k->nbuf || k->bufs[in->buf].is_output)
      return BAD(d, "verify kernel: gather %%%d reads buffer %d, not an input of %d", i, in->buf, k->nbuf);
    if (t != dtype_compute((LoomDType)k->bufs[in->buf].dtype) || st[0] != LOOM_INT64)
      return BAD(d, "verify kernel: gather %%%d must load the buffer's compute dtype at an i64 offset", i);
    break;
  case KI_USER: /* the argument dtypes are checked against the snippet by codegen/snippet.c */
    if (!k->snippet) return BAD(d, "verify kernel: user call %%%d in a kernel without a snippet", i);
    if (in->buf < 0 || in->phase < 0 || in->buf > k->nuser_arg - in->phase || (in->phase && !k->user_args))
      return BAD(d, "verify kernel: user call %%%d has a bad argument range", i);
    for (int32_t a = 0; a < in->phase; a++) {
      int32_t x = k->user_args[in->buf + a];
      if (x >= i || (x < 0 && -(int64_t)x - 1 >= k->nbuf))
        return BAD(d, "verify kernel: user call %%%d argument %d is %d", i, a, x);
    }
    break;
  case KI_PARAM:
    if (in->op >= k->nparam) return BAD(d, "verify kernel: %%%d is parameter %d of %d", i, in->op, k->nparam);
    if (dtype_is_complex(t)) return BAD(d, "verify kernel: parameter %%%d is complex (complex values stay constants)", i);
    for (int32_t j = 0; j < i; j++)
      if (k->instrs[j].kind == KI_PARAM && k->instrs[j].op == in->op)
        return BAD(d, "verify kernel: parameter %d is read by %%%d and %%%d (one instruction each)", in->op, j, i);
    break;
  case KI_USER_OUT:
    if (in->src[0] < 0 || in->src[0] >= i || k->instrs[in->src[0]].kind != KI_USER)
      return BAD(d, "verify kernel: user_out %%%d does not read an earlier user call", i);
    break;
  default: return BAD(d, "verify kernel: %%%d has unknown kind %d", i, in->kind);
  }
  return LOOM_OK;
}

/* Marks root in `need`; close_deps then marks everything the marked roots depend on (one backward
 * sweep for all the roots of a phase, not one per root). */
static void mark_deps(const KernelIr *k, int32_t root, uint8_t *need) {
  if (root >= 0 && root < k->ninstr) need[root] = 1;
}

static void close_deps(const KernelIr *k, uint8_t *need) {
  for (int32_t i = k->ninstr - 1; i >= 0; i--) {
    if (!need[i]) continue;
    for (int s = 0; s < 3; s++) {
      int32_t x = k->instrs[i].src[s];
      if (x >= 0 && x < i) need[x] = 1;
    }
  }
}

/* A library-call kernel: buffers in range, of the right direction and dtype; nothing generated. */
static LoomStatus verify_call(const KernelIr *k, Diag *d) {
  const KCall *c = k->call;
  if (c->op >= KC_COUNT || c->act >= KACT_COUNT) return BAD(d, "verify kernel: call of unknown op or activation");
  if (k->ninstr || k->nphase || k->nstore || k->snippet)
    return BAD(d, "verify kernel: a call kernel has no instructions, phases, stores or snippet");
  if (k->ndim < 3 || k->nkeep != k->ndim - 1) return BAD(d, "verify kernel: a matmul call has dims [B..., M, N, K]");
  int32_t bufs[5] = {c->a, c->b, c->out, c->bias, c->c};
  for (int i = 0; i < 5; i++) {
    if (bufs[i] < (i < 3 ? 0 : -1) || bufs[i] >= k->nbuf) return BAD(d, "verify kernel: call buffer %d out of range", bufs[i]);
    if (bufs[i] >= 0 && k->bufs[bufs[i]].is_output != (i == 2))
      return BAD(d, "verify kernel: call buffer %d has the wrong direction", bufs[i]);
  }
  LoomDType t = (LoomDType)k->bufs[c->a].dtype;
  bool cplx = dtype_is_complex(t);
  if (!(dtype_is_float(t) || cplx) || k->bufs[c->b].dtype != t || k->bufs[c->out].dtype != t ||
      (c->bias >= 0 && k->bufs[c->bias].dtype != t) || (c->c >= 0 && k->bufs[c->c].dtype != t))
    return BAD(d, "verify kernel: a matmul call's buffers share one float or complex dtype");
  if (cplx && (c->bias >= 0 || c->c >= 0 || c->act != KACT_NONE || c->alpha != 1.0))
    return BAD(d, "verify kernel: a complex matmul call has no epilogue (passes/calls.c)");
  return LOOM_OK;
}

/* A KP_SCAN phase: the only phase of a kernel with one R dim; op sum/prod/min/max; a value of the
 * accumulator's (compute) dtype that reads no accumulator; rounding only of a float32 accumulator to
 * float16 / bfloat16. need: scratch (may be NULL when there are no instructions). */
static LoomStatus verify_scan_phase(const KernelIr *k, int32_t p, uint8_t *need, Diag *d) {
  const KPhase *ph = &k->phases[p];
  LoomReduceOp op = (LoomReduceOp)ph->reduce_op;
  if (k->nphase != 1 || k->ndim - k->nkeep != 1)
    return BAD(d, "verify kernel: a scan phase is the only phase of a kernel with one reduced dim");
  if (op != LOOM_REDUCE_SUM && op != LOOM_REDUCE_PROD && op != LOOM_REDUCE_MIN && op != LOOM_REDUCE_MAX)
    return BAD(d, "verify kernel: scan phase %d has op %d (sum, prod, min or max)", p, (int)op);
  if (ph->acc_dtype >= LOOM_DTYPE_COUNT || dtype_compute((LoomDType)ph->acc_dtype) != ph->acc_dtype)
    return BAD(d, "verify kernel: phase %d accumulates in a non-compute dtype", p);
  if (ph->value < 0 || ph->value >= k->ninstr || k->instrs[ph->value].dtype != ph->acc_dtype)
    return BAD(d, "verify kernel: scan phase %d folds %%%d, not an instruction of its accumulator dtype", p, ph->value);
  if (ph->scan_round && !((ph->scan_round == LOOM_FLOAT16 || ph->scan_round == LOOM_BFLOAT16) &&
                          ph->acc_dtype == LOOM_FLOAT32))
    return BAD(d, "verify kernel: scan phase %d rounds a %s accumulator to %s", p,
               dtype_short_name((LoomDType)ph->acc_dtype), dtype_short_name((LoomDType)ph->scan_round));
  mark_deps(k, ph->value, need);
  close_deps(k, need);
  for (int32_t i = 0; i < k->ninstr; i++)
    if (need[i] && k->instrs[i].kind == KI_ACC)
      return BAD(d, "verify kernel: the value of scan phase %d reads an accumulator (%%%d)", p, i);
  memset(need, 0, (size_t)k->ninstr);
  return LOOM_OK;
}

/* Phase p's store range and stores (outputs, instructions, scatter operands); marks what they read. */
static LoomStatus verify_stores(const KernelIr *k, int32_t p, uint8_t *need, Diag *d) {
  const KPhase *ph = &k->phases[p];
  LoomStatus st = LOOM_OK;
  if (ph->nstores < 0 || ph->store_begin < 0 || ph->store_begin > k->nstore ||
      ph->nstores > k->nstore - ph->store_begin) {
    st = BAD(d, "verify kernel: phase %d store range out of bounds", p);
    return st;
  }
  for (int32_t s = ph->store_begin; s < ph->store_begin + ph->nstores && !st; s++) {
    const KStore *ks = &k->stores[s];
    if (ks->buf < 0 || ks->buf >= k->nbuf || !k->bufs[ks->buf].is_output)
      st = BAD(d, "verify kernel: phase %d stores to buffer %d, not an output", p, ks->buf);
    else if (ks->value < 0 || ks->value >= k->ninstr)
      st = BAD(d, "verify kernel: phase %d stores %%%d, not an instruction", p, ks->value);
    else if (ks->scatter && (ks->index < 0 || ks->index >= k->ninstr || ks->limit < 0 || ks->limit >= k->ninstr ||
                             k->instrs[ks->index].dtype != LOOM_INT64 || k->instrs[ks->limit].dtype != LOOM_INT64 ||
                             ks->op >= IR_SCATTER_OP_COUNT || (ph->kind != KP_MAP && ph->kind != KP_SCAN)))
      st = BAD(d, "verify kernel: scatter store %d needs i64 index and limit instructions in a map or scan phase", s);
    else {
      mark_deps(k, ks->value, need);
      if (ks->scatter) {
        mark_deps(k, ks->index, need);
        mark_deps(k, ks->limit, need);
      }
    }
  }
  return st;
}

LoomStatus ir_verify_kernel(const KernelIr *k, Diag *d) {
  if (!k) return BAD(d, "verify kernel: null kernel");
  if (k->ndim < 0 || k->ndim > LOOM_MAX_RANK || k->nkeep < 0 || k->nkeep > k->ndim)
    return BAD(d, "verify kernel: ndim %d keep %d out of range", k->ndim, k->nkeep);
  if (k->index_bits != 32 && k->index_bits != 64) return BAD(d, "verify kernel: index width %d is not 32 or 64", k->index_bits);
  if (k->nbuf < 0 || k->ninstr < 0 || k->nphase < 0 || k->nstore < 0 || (k->nbuf && !k->bufs) ||
      (k->ninstr && !k->instrs) || (k->nphase && !k->phases) || (k->nstore && !k->stores))
    return BAD(d, "verify kernel: bad array counts");
  for (int32_t b = 0; b < k->nbuf; b++) {
    if (k->bufs[b].dtype >= LOOM_DTYPE_COUNT) return BAD(d, "verify kernel: buffer %d has unknown dtype", b);
    for (int a = 0; a < k->ndim; a++)
      if (k->bufs[b].layout[a] >= KL_COUNT) return BAD(d, "verify kernel: buffer %d has bad layout on dim %d", b, a);
  }
  if (k->call) return verify_call(k, d);
  if (k->row_extent) { /* ir.h KernelIr.row_extent */
    int64_t c;
    if (k->row_extent < 2 || k->ndim < 2 || (k->nkeep != k->ndim && k->nkeep != k->ndim - 1))
      return BAD(d, "verify kernel: rows %d needs ndim >= 2 and at most the last dim reduced", (int)k->row_extent);
    for (int32_t b = 0; b < k->nbuf; b++)
      if (!ir_layout_const(k->bufs[b].layout[k->ndim - 1], &c))
        return BAD(d, "verify kernel: rows %d: buffer %d has no constant stride on the last dim", (int)k->row_extent, b);
  }
  if (k->walk_cols > 1 || (k->walk_cols && (k->nkeep < 1 || k->nkeep >= k->ndim))) /* ir.h KernelIr.walk_cols */
    return BAD(d, "verify kernel: cols (a column walk) needs a reduction that keeps a dim (keep %d of %d dims)",
               (int)k->nkeep, (int)k->ndim);
  if (k->col_stride && (k->col_stride < -1 || k->col_stride > 4 || k->nkeep < 1 ||
                        k->nkeep >= k->ndim)) /* ir.h KernelIr.col_stride */
    return BAD(d, "verify kernel: colstride %d needs a reduction that keeps a dim and a stride of 2, 3, 4, -1 or other",
               (int)k->col_stride);
  int32_t nparam_read = 0;
  for (int32_t i = 0; i < k->ninstr; i++) {
    LoomStatus st = verify_instr(k, i, d);
    if (st) return st;
    nparam_read += k->instrs[i].kind == KI_PARAM;
  }
  if (k->nparam < 0 || nparam_read != k->nparam)
    return BAD(d, "verify kernel: %d parameters but %d param instructions", k->nparam, nparam_read);
  uint8_t *need = NULL;
  LoomStatus st = LOOM_OK;
  if (k->ninstr > 0) {
    need = ctx_alloc(NULL, (size_t)k->ninstr);
    if (!need) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory verifying a kernel");
  }
  for (int32_t p = 0; p < k->nphase && !st; p++) {
    const KPhase *ph = &k->phases[p];
    int32_t own = p; /* KI_ACC of phases >= own must not be read */
    if (need) memset(need, 0, (size_t)k->ninstr);
    if (ph->kind == KP_REDUCE) {
      LoomReduceOp op = (LoomReduceOp)ph->reduce_op;
      if ((op >= LOOM_REDUCE_COUNT && !((int)op == IR_REDUCE_USER && k->snippet)) || op == LOOM_REDUCE_MEAN) {
        st = BAD(d, "verify kernel: phase %d has reduction %d (mean is lowered to sum)", p, op);
        break;
      }
      if (ph->acc_dtype >= LOOM_DTYPE_COUNT || dtype_compute((LoomDType)ph->acc_dtype) != ph->acc_dtype) {
        st = BAD(d, "verify kernel: phase %d accumulates in a non-compute dtype", p);
        break;
      }
      if (ph->value < 0 || ph->value >= k->ninstr) {
        st = BAD(d, "verify kernel: phase %d folds %%%d, not an instruction", p, ph->value);
        break;
      }
      LoomDType vt = (LoomDType)k->instrs[ph->value].dtype;
      bool logic = op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL;
      if ((logic && (vt != LOOM_BOOL || ph->acc_dtype != LOOM_BOOL)) || (!logic && vt != ph->acc_dtype)) {
        st = BAD(d, "verify kernel: phase %d folds a %s value into a %s accumulator", p, dtype_short_name(vt),
                 dtype_short_name((LoomDType)ph->acc_dtype));
        break;
      }
      mark_deps(k, ph->value, need);
      /* side stores, run at each point the phase folds (scatters: map and scan phases only) */
      if ((st = verify_stores(k, p, need, d)) != LOOM_OK) break;
    } else if (ph->kind == KP_MAP || ph->kind == KP_FINAL || ph->kind == KP_SCAN) {
      if (ph->kind == KP_SCAN && (st = verify_scan_phase(k, p, need, d)) != LOOM_OK) break;
      if (ph->kind == KP_SCAN) own = p + 1; /* its stores read its own running value */
      if ((st = verify_stores(k, p, need, d)) != LOOM_OK) break;
    } else {
      st = BAD(d, "verify kernel: phase %d has unknown kind %d", p, ph->kind);
    }
    if (need) close_deps(k, need);
    for (int32_t i = 0; i < k->ninstr && !st; i++)
      if (need[i] && k->instrs[i].kind == KI_ACC && k->instrs[i].phase >= own)
        st = BAD(d, "verify kernel: phase %d uses %%%d, the result of phase %d, which is not earlier", p, i,
                 k->instrs[i].phase);
  }
  ctx_free(NULL, need);
  return st;
}
