/* SPDX-License-Identifier: Apache-2.0 */
/* onehot.c: pass_onehot, one-hot contractions become gathers.
 *
 * Contract. Requires: a verified graph and roots (after pass_fold). Guarantees: every live
 *   r = sum(where(L == I, v, 0), axis=k)
 * where I is an integer index along k (I = s + t * p[k] over the whole extent C >= 2 of axis k: an iota
 * through reshapes, broadcasts, exact casts and integer +, -, * by constants) and L an integer value that
 * does not vary along k, is replaced by
 *   r = where(lo <= L <= hi and (L - s) % t == 0, v[p with p[k] = (L - s) // t] + 0, 0)
 * (lo, hi: the least and greatest I). v's elementwise tree is evaluated at the one gathered position: its
 * leaves that vary along k are read by IR_GATHER (mode clip, so the rows whose label matches no position
 * read in bounds and are then discarded); nodes constant along k (per-row reductions, broadcasts) are
 * used as they are. Same bits: the sum adds v's one chosen element to zeros (at most one position
 * matches: I's values are distinct), which is that element with -0 made +0 (the `+ 0`), or +0 when none
 * matches; NaN or inf anywhere else in v is dropped by where in both forms. Cross-entropy written the
 * NumPy way (`labels[:, None] == arange(C)` under where, then sum) thus reads one logit per row in its
 * last phase instead of comparing and adding all C of them. LOOM_ONEHOT=0 turns the pass off.
 *
 * Approach: fold's scaffold (nodes in index order, old -> new map); a reduce that matches is rewritten
 * with the graph's builders, and when any step does not apply the nodes made for it are rolled back.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

enum { ONEHOT_MAX_SINK = 256 }; /* nodes of v's tree one rewrite may rebuild */

static bool onehot_enabled(void) {
  static int slot = -1;
  int r = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv("LOOM_ONEHOT");
    r = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, r, __ATOMIC_RELAXED);
  }
  return r != 0;
}

/* Whether integer v is a value of integer dtype t. */
static bool int_fits(LoomDType t, __int128 v) {
  int bits = dtype_bits(t);
  if (dtype_kind(t) == DK_UINT) return v >= 0 && (bits >= 64 ? v <= (__int128)UINT64_MAX : v < ((__int128)1 << bits));
  return v >= -((__int128)1 << (bits - 1)) && v < ((__int128)1 << (bits - 1));
}

/* The integer value of constant node c (any int kind), false for other kinds. */
static bool const_int(const IrGraph *g, int32_t x, __int128 *v) {
  int32_t c = pass_const_of(g, x);
  if (c < 0) return false;
  DKind k = dtype_kind((LoomDType)g->nodes[c].dtype);
  if (k == DK_INT) *v = g->nodes[c].value.i;
  else if (k == DK_UINT) *v = g->nodes[c].value.u;
  else return false;
  return true;
}

/* An index along one axis: node value = s + t * q, q the coordinate of the node's own axis `axis`
 * (extent n >= 2; every other extent 1). */
typedef struct Affine {
  __int128 s, t;
  int axis;
  int64_t n;
} Affine;

static bool affine_ends_fit(LoomDType t, const Affine *a) {
  return int_fits(t, a->s) && int_fits(t, a->s + a->t * (a->n - 1));
}

/* The one axis of x with extent > 1, or -1 when there is none or several. */
static int only_axis(const IrNode *x) {
  int a = -1;
  for (int i = 0; i < x->ndim; i++)
    if (x->shape[i] > 1) {
      if (a >= 0) return -1;
      a = i;
    }
  return a;
}

static bool affine_of(const IrGraph *g, int32_t x, Affine *a, int depth) {
  const IrNode *n = &g->nodes[x];
  if (depth > 16 || !dtype_is_int((LoomDType)n->dtype)) return false;
  int ax = only_axis(n);
  if (ax < 0) return false;
  switch (n->kind) {
  case IR_IOTA:
    *a = (Affine){.s = 0, .t = 1, .axis = ax, .n = n->shape[ax]};
    return true;
  case IR_RESHAPE:
  case IR_BROADCAST: /* the varying extent survives as the only one > 1 (a broadcast cannot stretch it) */
    if (!affine_of(g, n->src[0], a, depth + 1) || a->n != n->shape[ax]) return false;
    a->axis = ax;
    return true;
  case IR_CAST:
    return affine_of(g, n->src[0], a, depth + 1) && affine_ends_fit((LoomDType)n->dtype, a);
  case IR_ELEM: {
    if (n->op != LOOM_OP_ADD && n->op != LOOM_OP_SUB && n->op != LOOM_OP_MUL) return false;
    __int128 c;
    int ci = const_int(g, n->src[1], &c) ? 1 : const_int(g, n->src[0], &c) ? 0 : -1;
    if (ci < 0 || !affine_of(g, n->src[1 - ci], a, depth + 1) || a->n != n->shape[ax]) return false;
    if (n->op == LOOM_OP_MUL) {
      if (c == 0) return false;
      a->s *= c, a->t *= c;
    } else if (n->op == LOOM_OP_ADD) {
      a->s += c;
    } else if (ci == 1) { /* i - c */
      a->s -= c;
    } else {              /* c - i */
      a->s = c - a->s, a->t = -a->t;
    }
    a->axis = ax;
    return int_fits(LOOM_INT64, a->s) && int_fits(LOOM_INT64, a->t) && affine_ends_fit((LoomDType)n->dtype, a);
  }
  default: return false;
  }
}

/* ---- the rewrite ------------------------------------------------------------------------------------- */
/* The rewrite computes r at the reduced shape R (the where's shape S less axis k, rank nd - 1) so that no
 * view of a gather is left for fusion to realize: an operand constant along k is reshaped to R (a view
 * push_views moves onto its leaf); a leaf that varies along k is gathered with axis k merged into its
 * neighbour m (k - 1, or 1 when k = 0): data of that merged extent, read at idx = p * C + j (k >= 1) or
 * j * S[1] + p (k = 0), p the point's coordinate on the merged axis of R and j the label's position
 * clamped to [0, C - 1]; a leaf of extent 1 on m reads at j alone. */
typedef struct Rewrite {
  IrGraph *g;
  int nd, k;          /* the where's rank and the reduced axis */
  int64_t C, Sm;      /* S[k] and the extent of its merge partner m (k - 1, or 1 when k = 0) */
  int32_t j;          /* the label's position along k, clamped: int64 at R (rank nd - 1) */
  int32_t idx_p, idx; /* the merged index with and without p's term (-1: not built yet) */
  int32_t memo_from[ONEHOT_MAX_SINK], memo_to[ONEHOT_MAX_SINK];
  int nmemo;
} Rewrite;

/* x below its broadcasts (the values do not change along the axes a broadcast adds or stretches). */
static int32_t unbroadcast(const IrGraph *g, int32_t x) {
  while (g->nodes[x].kind == IR_BROADCAST) x = g->nodes[x].src[0];
  return x;
}

/* Whether x, an operand right-aligned at rank nd, has extent 1 (or none) on axis k. */
static bool flat_along(const IrGraph *g, int32_t x, int nd, int k) {
  const IrNode *n = &g->nodes[x];
  int a = k - (nd - n->ndim);
  return a < 0 || n->shape[a] == 1;
}

/* x (right-aligned at rank nd) reshaped to rank nd with leading extents 1, then `drop` (an axis of extent 1
 * there; -1 none) removed and, when merge >= 0, axes merge and merge + 1 made one. */
static LoomStatus view_as(IrGraph *g, int32_t x, int nd, int drop, int merge, int32_t *out, Diag *d) {
  const IrNode *n = &g->nodes[x];
  int64_t full[LOOM_MAX_RANK], shape[LOOM_MAX_RANK];
  int lead = nd - n->ndim, r = 0;
  if (drop >= 0 && drop < lead) { /* the axis is not there: the trailing axes keep their places */
    if (merge < 0) {
      *out = x;
      return LOOM_OK;
    }
  }
  for (int i = 0; i < nd; i++) full[i] = i < lead ? 1 : n->shape[i - lead];
  for (int i = 0; i < nd; i++) {
    if (i == drop) continue;
    if (i == merge) {
      shape[r++] = full[i] * full[i + 1];
      i++;
      continue;
    }
    shape[r++] = full[i];
  }
  if (r == n->ndim && memcmp(shape, n->shape, (size_t)r * sizeof *shape) == 0) {
    *out = x;
    return LOOM_OK;
  }
  return ir_reshape(g, x, r, shape, out, d);
}

/* Whether x is a view (movement ops) of an input whose axes k and m (right-aligned at rank nd) merge into
 * one strided axis: what IR_GATHER reads in memory without a copy. */
static bool mergeable_input(const IrGraph *g, int32_t x, int nd, int lo) {
  int32_t leaf = x;
  while (ir_is_movement(g->nodes[leaf].kind)) leaf = g->nodes[leaf].src[0];
  if (g->nodes[leaf].kind != IR_INPUT) return false;
  IrView v;
  if (!pass_compute_view(g, x, &v)) return false;
  const IrNode *n = &g->nodes[x];
  int a = lo - (nd - n->ndim); /* axes a, a + 1 of x */
  if (a < 0) return true;      /* a leading extent 1 merges with anything */
  return n->shape[a] == 1 || n->shape[a + 1] == 1 || v.strides[a] == v.strides[a + 1] * n->shape[a + 1];
}

static LoomStatus int_const(IrGraph *g, LoomDType t, __int128 v, int32_t *out, Diag *d) {
  Scalar s = {0};
  if (dtype_kind(t) == DK_UINT) s.u = (uint64_t)v;
  else s.i = (int64_t)v;
  return ir_const(g, t, s, false, out, d);
}

static LoomStatus binop(IrGraph *g, LoomOp op, int32_t a, int32_t b, int32_t *out, Diag *d) {
  int32_t src[2] = {a, b};
  return ir_elem(g, op, 2, src, out, d);
}

/* r->idx (with_p: r->idx_p), built on first use. */
static LoomStatus merged_index(Rewrite *r, bool with_p, int32_t *out, Diag *d) {
  IrGraph *g = r->g;
  int32_t *slot = with_p ? &r->idx_p : &r->idx;
  if (*slot >= 0) {
    *out = *slot;
    return LOOM_OK;
  }
  LoomStatus st = LOOM_OK;
  int32_t v = r->j, p, scale;
  int pm = r->k > 0 ? r->k - 1 : 0; /* the merged axis in R */
  if (r->k == 0) { /* j * S[1] (+ p) */
    st = int_const(g, LOOM_INT64, r->Sm, &scale, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_MUL, v, scale, &v, d);
  }
  if (st == LOOM_OK && with_p) { /* p along R's axis pm (p * C + j when k >= 1) */
    int64_t n = r->Sm, shape[LOOM_MAX_RANK]; /* R's axis pm has S[m]'s extent */
    for (int i = 0; i < r->nd - 1; i++) shape[i] = i == pm ? n : 1;
    st = ir_iota(g, 1, &n, &p, d);
    if (st == LOOM_OK) st = ir_reshape(g, p, r->nd - 1, shape, &p, d);
    if (st == LOOM_OK && r->k > 0) st = int_const(g, LOOM_INT64, r->C, &scale, d);
    if (st == LOOM_OK && r->k > 0) st = binop(g, LOOM_OP_MUL, p, scale, &p, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_ADD, p, v, &v, d);
  }
  if (st == LOOM_OK) st = view_as(g, v, r->nd - 1, -1, -1, &v, d); /* rank nd - 1, as the data */
  if (st == LOOM_OK) *slot = *out = v;
  return st;
}

/* *out: x evaluated at the gathered position, at R (*out = -1: not possible). */
static LoomStatus sink(Rewrite *r, int32_t x, int32_t *out, Diag *d) {
  IrGraph *g = r->g;
  *out = -1;
  int32_t b = unbroadcast(g, x);
  if (flat_along(g, b, r->nd, r->k)) return view_as(g, b, r->nd, r->k, -1, out, d);
  for (int i = 0; i < r->nmemo; i++)
    if (r->memo_from[i] == x) {
      *out = r->memo_to[i];
      return LOOM_OK;
    }
  if (r->nmemo >= ONEHOT_MAX_SINK) return LOOM_OK;
  const IrNode *n = &g->nodes[x];
  LoomStatus st = LOOM_OK;
  int32_t y = -1, lo = r->k > 0 ? r->k - 1 : 0;
  if (n->kind == IR_ELEM || n->kind == IR_CAST) {
    int na = ir_node_arity(n);
    int32_t src[3];
    for (int i = 0; i < na; i++) {
      if ((st = sink(r, g->nodes[x].src[i], &src[i], d)) != LOOM_OK || src[i] < 0) return st;
    }
    n = &g->nodes[x]; /* the node array may have moved */
    LoomDType want = (LoomDType)n->dtype;
    st = n->kind == IR_CAST ? ir_cast(g, src[0], want, &y, d) : ir_elem(g, (LoomOp)n->op, na, src, &y, d);
    if (st != LOOM_OK) return st;
    if (g->nodes[y].dtype != want) return LOOM_OK; /* a weak operand resolved otherwise: give up */
  } else if (mergeable_input(g, x, r->nd, lo)) {
    int32_t data, idx;
    int a = (r->k > 0 ? r->k - 1 : 1) - (r->nd - n->ndim); /* x's axis m */
    bool with_p = a >= 0 && n->shape[a] > 1;
    if ((st = view_as(g, x, r->nd, -1, lo, &data, d)) != LOOM_OK) return st;
    if ((st = merged_index(r, with_p, &idx, d)) != LOOM_OK) return st;
    if ((st = ir_gather(g, data, idx, lo, IR_GATHER_CLIP, &y, d)) != LOOM_OK) return st;
  } else {
    return LOOM_OK; /* a computed leaf that varies along k (a reduction, a scan, ...): not worth a copy */
  }
  r->memo_from[r->nmemo] = x;
  r->memo_to[r->nmemo++] = y;
  *out = y;
  return LOOM_OK;
}

/* Whether constant x is +0 (floats: the bits of +0.0), 0 or false. */
static bool plus_zero(const IrGraph *g, int32_t x) {
  int32_t c = pass_const_of(g, x);
  if (c < 0) return false;
  const IrNode *n = &g->nodes[c];
  switch (dtype_kind((LoomDType)n->dtype)) {
  case DK_FLOAT: return n->value.f == 0.0 && !__builtin_signbit(n->value.f);
  case DK_INT: return n->value.i == 0;
  case DK_BOOL:
  case DK_UINT: return n->value.u == 0;
  default: return false;
  }
}

/* *out: the rewritten reduce n, or -1 when it is not a one-hot contraction. */
static LoomStatus rewrite(IrGraph *g, const IrNode *n, int32_t *out, Diag *d) {
  *out = -1;
  if (n->kind != IR_REDUCE || n->op != LOOM_REDUCE_SUM || __builtin_popcount(n->axes) != 1) return LOOM_OK;
  LoomDType rt = (LoomDType)n->dtype;
  DKind rk = dtype_kind(rt);
  if (rk == DK_COMPLEX || rk == DK_BOOL) return LOOM_OK;
  const IrNode *w = &g->nodes[n->src[0]];
  int k = __builtin_ctz(n->axes), nd = w->ndim;
  if (nd < 2 || w->kind != IR_ELEM || w->op != LOOM_OP_WHERE || !plus_zero(g, w->src[2]) || w->shape[k] < 2 ||
      ir_numel(nd, w->shape) == 0)
    return LOOM_OK;
  const IrNode *c = &g->nodes[w->src[0]];
  if (c->kind != IR_ELEM || c->op != LOOM_OP_EQ ||
      !dtype_is_int(dtype_promote((LoomDType)g->nodes[c->src[0]].dtype, (LoomDType)g->nodes[c->src[1]].dtype)))
    return LOOM_OK; /* compared as floats: not an exact integer match */
  Affine a;
  int32_t L = -1;
  for (int i = 0; i < 2 && L < 0; i++) {
    const IrNode *e = &g->nodes[c->src[i]];
    int32_t other = unbroadcast(g, c->src[1 - i]);
    LoomDType lt = (LoomDType)g->nodes[other].dtype;
    if (affine_of(g, c->src[i], &a, 0) && a.axis + (nd - e->ndim) == k && a.n == w->shape[k] &&
        flat_along(g, other, nd, k) &&
        (lt == LOOM_BOOL || dtype_kind(lt) == DK_INT || (dtype_kind(lt) == DK_UINT && dtype_bits(lt) <= 32)))
      L = other; /* exact as int64 */
  }
  if (L < 0) return LOOM_OK;
  __int128 last = a.s + a.t * (a.n - 1), lo = a.t > 0 ? a.s : last, hi = a.t > 0 ? last : a.s;
  if (!int_fits(LOOM_INT64, hi - lo)) return LOOM_OK;

  int32_t mark_nodes = g->nnodes, mark_inputs = g->ninputs, v = w->src[1], wdt = w->dtype;
  Rewrite r = {.g = g, .nd = nd, .k = k, .C = w->shape[k], .Sm = w->shape[k > 0 ? k - 1 : 1], .idx = -1, .idx_p = -1};
  int32_t l64, kc, ok, cmp, dlt, val, zero;
  LoomStatus st = view_as(g, L, nd, k, -1, &l64, d);
  if (st == LOOM_OK && g->nodes[l64].dtype != LOOM_INT64) st = ir_cast(g, l64, LOOM_INT64, &l64, d);
  if (st == LOOM_OK) st = int_const(g, LOOM_INT64, lo, &kc, d);
  if (st == LOOM_OK) st = binop(g, LOOM_OP_GE, l64, kc, &ok, d);
  if (st == LOOM_OK) st = int_const(g, LOOM_INT64, hi, &kc, d);
  if (st == LOOM_OK) st = binop(g, LOOM_OP_LE, l64, kc, &cmp, d);
  if (st == LOOM_OK) st = binop(g, LOOM_OP_LOGICAL_AND, ok, cmp, &ok, d);
  dlt = l64;
  if (st == LOOM_OK && a.s != 0) st = int_const(g, LOOM_INT64, a.s, &kc, d);
  if (st == LOOM_OK && a.s != 0) st = binop(g, LOOM_OP_SUB, l64, kc, &dlt, d);
  if (st == LOOM_OK && a.t != 1) { /* (L - s) divisible by t; the position (L - s) // t */
    int32_t kt, rem, okr;
    st = int_const(g, LOOM_INT64, a.t, &kt, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_MOD, dlt, kt, &rem, d);
    if (st == LOOM_OK) st = int_const(g, LOOM_INT64, 0, &kc, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_EQ, rem, kc, &okr, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_LOGICAL_AND, ok, okr, &ok, d);
    if (st == LOOM_OK) st = binop(g, LOOM_OP_FLOORDIV, dlt, kt, &dlt, d);
  }
  if (st == LOOM_OK) st = int_const(g, LOOM_INT64, 0, &kc, d); /* j clamped: the merged index stays inside */
  if (st == LOOM_OK) st = binop(g, LOOM_OP_MAXIMUM, dlt, kc, &dlt, d);
  if (st == LOOM_OK) st = int_const(g, LOOM_INT64, r.C - 1, &kc, d);
  if (st == LOOM_OK) st = binop(g, LOOM_OP_MINIMUM, dlt, kc, &r.j, d);
  if (st == LOOM_OK) st = sink(&r, v, &val, d);
  if (st != LOOM_OK) return st;
  if (val < 0) {
    ir_graph_rollback(g, mark_nodes, mark_inputs);
    return LOOM_OK;
  }
  if (g->nodes[val].dtype != wdt) st = ir_cast(g, val, (LoomDType)wdt, &val, d);
  if (st == LOOM_OK && g->nodes[val].dtype != rt) st = ir_cast(g, val, rt, &val, d);
  if (st == LOOM_OK) st = ir_const(g, rt, (Scalar){0}, false, &zero, d);
  if (st == LOOM_OK && rk == DK_FLOAT) st = binop(g, LOOM_OP_ADD, val, zero, &val, d); /* -0 -> +0 */
  int32_t src[3] = {ok, val, zero}, res;
  if (st == LOOM_OK) st = ir_elem(g, LOOM_OP_WHERE, 3, src, &res, d);
  if (st != LOOM_OK) return st;
  int64_t R[LOOM_MAX_RANK]; /* the where's shape less axis k */
  const IrNode *wn = &g->nodes[n->src[0]];
  for (int i = 0, o = 0; i < nd; i++)
    if (i != k) R[o++] = wn->shape[i];
  const IrNode *rn = &g->nodes[res];
  if (rn->ndim != nd - 1 || memcmp(rn->shape, R, (size_t)(nd - 1) * sizeof *R) != 0)
    st = ir_broadcast(g, res, nd - 1, R, &res, d);
  if (st == LOOM_OK && (n->ndim != nd - 1)) st = ir_reshape(g, res, n->ndim, n->shape, &res, d); /* keepdims */
  if (st == LOOM_OK) *out = res;
  return st;
}

LoomStatus pass_onehot(IrModule *m, Diag *d) {
  if (!onehot_enabled()) return LOOM_OK;
  IrGraph *g = m->graph;
  int32_t nn = g->nnodes;
  bool any = false;
  for (int32_t x = 0; x < nn && !any; x++) {
    const IrNode *n = &g->nodes[x];
    any = n->kind == IR_REDUCE && n->op == LOOM_REDUCE_SUM && g->nodes[n->src[0]].kind == IR_ELEM &&
          g->nodes[n->src[0]].op == LOOM_OP_WHERE;
  }
  if (!any) return LOOM_OK;
  int32_t *map = arena_alloc(m->arena, (size_t)nn * sizeof *map);
  uint8_t *live = arena_alloc(m->arena, (size_t)nn);
  if (!map || !live) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "onehot: out of memory (%d nodes)", nn);
  memset(live, 0, (size_t)nn);
  for (int32_t i = 0; i < m->nroots; i++) live[m->roots[i]] = 1;
  for (int32_t x = nn - 1; x >= 0; x--) {
    if (!live[x]) continue;
    const IrNode *n = &g->nodes[x];
    for (int i = 0; i < 3; i++)
      if (n->src[i] >= 0 && n->src[i] < x) live[n->src[i]] = 1;
  }
  for (int32_t x = 0; x < nn; x++) {
    map[x] = x;
    if (!live[x]) continue;
    IrNode n = g->nodes[x];
    bool changed = false;
    for (int i = 0; i < ir_node_arity(&n); i++)
      if (map[n.src[i]] != n.src[i]) n.src[i] = map[n.src[i]], changed = true;
    LoomStatus st;
    if (changed) {
      n.hash = 0;
      if ((st = ir_add_raw(g, &n, &map[x], d)) != LOOM_OK) return st;
      n = g->nodes[map[x]];
    }
    int32_t r;
    if ((st = rewrite(g, &n, &r, d)) != LOOM_OK) return st;
    if (r >= 0) { /* the match read the constants below it; the rewrite's may be the graph's (hash-consed) */
      if ((st = pass_note_consts_below(m, map[x], -1, d)) != LOOM_OK) return st;
      if ((st = pass_note_consts_below(m, r, -1, d)) != LOOM_OK) return st;
      map[x] = r;
    }
  }
  for (int32_t i = 0; i < m->nroots; i++) m->roots[i] = map[m->roots[i]];
  return LOOM_OK;
}
