/* views.c: pass_push_views, and the strided-view composition shared with fuse.c and lower.c.
 *
 * Contract. Requires: a verified graph whose roots are m->roots. Guarantees: every movement op
 * (BROADCAST, RESHAPE, PERMUTE, SLICE) reachable from the roots sits in a chain directly above a leaf
 * (IR_INPUT, IR_CONST, IR_IOTA, IR_REDUCE, IR_COPY, IR_MATMUL); every chain composes into one strided view of its leaf
 * (pass_compute_view succeeds); every IR_ELEM/IR_CAST operand has exactly the node's shape. Roots are
 * replaced by their rewritten nodes; values are unchanged.
 *
 * Approach: one memoized bottom-up rewrite. Implicit broadcasting of ELEM operands is made explicit
 * with IR_BROADCAST. A movement op whose (rewritten) source is an ELEM/CAST is applied to each operand
 * instead (elementwise ops commute with movement), recursively. A movement op over a constant becomes
 * a broadcast of the constant. A RESHAPE whose chain has no strided form gets an IR_COPY below it.
 */
#include <string.h>

#include "passes/passes.h"

void pass_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
}

static bool is_movement(int kind) {
  return kind == IR_BROADCAST || kind == IR_RESHAPE || kind == IR_PERMUTE || kind == IR_SLICE;
}

/* NumPy's no-copy reshape: strides for new shape (nn, nd) of a view (on, od, os), or false. Size-1
 * source dims are ignored; groups of source dims that multiply to groups of new dims must be
 * contiguous among themselves. */
static bool reshape_strides(int on, const int64_t *od, const int64_t *os, int nn, const int64_t *nd,
                            int64_t *ns) {
  int64_t dims[LOOM_MAX_RANK], strides[LOOM_MAX_RANK];
  int n = 0;
  if (ir_numel(on, od) == 0) { /* empty: any strides describe it */
    pass_contiguous_strides(nn, nd, ns);
    return true;
  }
  for (int i = 0; i < on; i++) {
    if (od[i] != 1) {
      dims[n] = od[i];
      strides[n] = os[i];
      n++;
    }
  }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < nn && oi < n) {
    int64_t np = nd[ni], op = dims[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn) return false;
        np *= nd[nj++];
      } else {
        if (oj >= n) return false;
        op *= dims[oj++];
      }
    }
    for (int ok = oi; ok < oj - 1; ok++)
      if (strides[ok] != dims[ok + 1] * strides[ok + 1]) return false;
    ns[nj - 1] = strides[oj - 1];
    for (int nk = nj - 1; nk > ni; nk--) ns[nk - 1] = ns[nk] * nd[nk];
    ni = nj++;
    oi = oj++;
  }
  for (int i = ni; i < nn; i++) ns[i] = 0; /* trailing size-1 dims */
  return true;
}

bool pass_compute_view(const IrGraph *g, int32_t node, IrView *out) {
  int32_t chain[256];
  int nchain = 0;
  int32_t v = node;
  while (v >= 0 && v < g->nnodes && is_movement(g->nodes[v].kind)) {
    if (nchain == (int)(sizeof chain / sizeof chain[0])) return false;
    chain[nchain++] = v;
    v = g->nodes[v].src[0];
  }
  if (v < 0 || v >= g->nnodes) return false;
  const IrNode *leaf = &g->nodes[v];
  int nd = leaf->ndim;
  int64_t shape[LOOM_MAX_RANK], st[LOOM_MAX_RANK], off = 0;
  memcpy(shape, leaf->shape, sizeof shape);
  if (leaf->kind == IR_INPUT) {
    if (leaf->input < 0 || leaf->input >= g->ninputs) return false;
    memcpy(st, g->inputs[leaf->input].strides, sizeof st);
  } else if (leaf->kind == IR_CONST) {
    nd = 0;
  } else {
    pass_contiguous_strides(nd, shape, st);
  }
  for (int c = nchain - 1; c >= 0; c--) {
    const IrNode *n = &g->nodes[chain[c]];
    int64_t ns[LOOM_MAX_RANK] = {0};
    switch (n->kind) {
    case IR_BROADCAST: {
      int lead = n->ndim - nd;
      if (lead < 0) return false;
      for (int i = 0; i < n->ndim; i++) {
        if (i < lead) ns[i] = 0;
        else ns[i] = (shape[i - lead] == 1 && n->shape[i] != 1) ? 0 : st[i - lead];
      }
      break;
    }
    case IR_PERMUTE:
      for (int i = 0; i < n->ndim; i++) {
        if (n->arg[i] < 0 || n->arg[i] >= nd) return false;
        ns[i] = st[n->arg[i]];
      }
      break;
    case IR_SLICE:
      if (n->ndim != nd) return false;
      if (ir_numel(n->ndim, n->shape) > 0)
        for (int i = 0; i < nd; i++) off += n->arg[i] * st[i];
      for (int i = 0; i < nd; i++) ns[i] = st[i] * n->arg2[i];
      break;
    case IR_RESHAPE:
      if (!reshape_strides(nd, shape, st, n->ndim, n->shape, ns)) return false;
      break;
    default:
      return false;
    }
    nd = n->ndim;
    memcpy(shape, n->shape, sizeof shape);
    memcpy(st, ns, sizeof st);
  }
  out->leaf = v;
  out->offset = ir_numel(nd, shape) == 0 ? 0 : off;
  memset(out->strides, 0, sizeof out->strides);
  for (int i = 0; i < nd; i++) out->strides[i] = shape[i] == 1 ? 0 : st[i];
  return true;
}

/* ---- the rewrite ---------------------------------------------------------------------------------- */

typedef struct Views {
  IrModule *m;
  IrGraph *g;
  int32_t *memo; /* node -> rewritten node, -1 unknown; grows with the graph */
  int32_t cap;
  Diag *d;
} Views;

static LoomStatus memo_reserve(Views *v) {
  if (v->g->nnodes <= v->cap) return LOOM_OK;
  int32_t ncap = v->g->nnodes * 2 + 64;
  int32_t *nm = arena_alloc(v->m->arena, (size_t)ncap * sizeof *nm);
  if (!nm) return diag_error(v->d, LOOM_ERR_OUT_OF_MEMORY, "push_views: out of memory (%d nodes)", ncap);
  if (v->memo) memcpy(nm, v->memo, (size_t)v->cap * sizeof *nm);
  for (int32_t i = v->cap; i < ncap; i++) nm[i] = -1;
  v->memo = nm;
  v->cap = ncap;
  return LOOM_OK;
}

static LoomStatus add_node(Views *v, const IrNode *n, int32_t *out) {
  LoomStatus st = ir_add_raw(v->g, n, out, v->d);
  if (st != LOOM_OK) return st;
  return memo_reserve(v);
}

static bool same_shape(const IrNode *a, const IrNode *b) {
  if (a->ndim != b->ndim) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

void pass_init_node(IrNode *n, int kind, int dtype, int ndim, const int64_t *shape) {
  memset(n, 0, sizeof *n);
  n->kind = (uint8_t)kind;
  n->dtype = (uint8_t)dtype;
  n->ndim = (uint8_t)ndim;
  n->src[0] = n->src[1] = n->src[2] = -1;
  n->input = -1;
  for (int i = 0; i < ndim; i++) n->shape[i] = shape[i];
}

int32_t pass_const_of(const IrGraph *g, int32_t x) {
  const IrNode *n = &g->nodes[x];
  if (n->kind == IR_CONST) return x;
  if (n->kind == IR_BROADCAST && g->nodes[n->src[0]].kind == IR_CONST) return n->src[0];
  return -1;
}

static LoomStatus rewrite(Views *v, int32_t x, int32_t *out, int depth);

/* Applies movement op `tmpl` (its src ignored) to the normalized node s. */
static LoomStatus apply_move(Views *v, const IrNode *tmpl, int32_t s, int32_t *out, int depth) {
  IrGraph *g = v->g;
  LoomStatus st;
  IrNode sn = g->nodes[s]; /* copy: the array may move */
  int32_t c = pass_const_of(g, s);
  if (c >= 0) {
    if (tmpl->ndim == 0) {
      *out = c;
      return LOOM_OK;
    }
    IrNode b;
    pass_init_node(&b, IR_BROADCAST, g->nodes[c].dtype, tmpl->ndim, tmpl->shape);
    b.src[0] = c;
    return add_node(v, &b, out);
  }
  if (sn.kind == IR_ELEM || sn.kind == IR_CAST) {
    IrNode e = sn;
    e.ndim = tmpl->ndim;
    memset(e.shape, 0, sizeof e.shape);
    memcpy(e.shape, tmpl->shape, sizeof e.shape);
    e.hash = 0;
    int arity = sn.kind == IR_CAST ? 1 : op_info((LoomOp)sn.op) ? op_info((LoomOp)sn.op)->arity : 0;
    for (int i = 0; i < arity; i++) {
      IrNode mv = *tmpl;
      mv.dtype = g->nodes[sn.src[i]].dtype;
      mv.src[0] = sn.src[i];
      mv.hash = 0;
      int32_t moved;
      if ((st = add_node(v, &mv, &moved)) != LOOM_OK) return st;
      if ((st = rewrite(v, moved, &e.src[i], depth + 1)) != LOOM_OK) return st;
    }
    return add_node(v, &e, out);
  }
  /* s is a leaf or a chain over a leaf: stack the op, copying first when a reshape has no view. */
  IrNode mv = *tmpl;
  mv.dtype = sn.dtype;
  mv.src[0] = s;
  mv.hash = 0;
  if ((st = add_node(v, &mv, out)) != LOOM_OK) return st;
  IrView view;
  if (pass_compute_view(g, *out, &view)) return LOOM_OK;
  if (tmpl->kind != IR_RESHAPE)
    return diag_error(v->d, LOOM_ERR_INTERNAL, "push_views: movement chain at %%%d has no view", *out);
  IrNode cp;
  pass_init_node(&cp, IR_COPY, sn.dtype, sn.ndim, sn.shape);
  cp.src[0] = s;
  int32_t copy;
  if ((st = add_node(v, &cp, &copy)) != LOOM_OK) return st;
  mv.src[0] = copy;
  return add_node(v, &mv, out);
}

static LoomStatus rewrite(Views *v, int32_t x, int32_t *out, int depth) {
  LoomStatus st;
  if (depth > 10000) return diag_error(v->d, LOOM_ERR_UNSUPPORTED, "push_views: graph too deep");
  if ((st = memo_reserve(v)) != LOOM_OK) return st;
  if (v->memo[x] >= 0) {
    *out = v->memo[x];
    return LOOM_OK;
  }
  IrGraph *g = v->g;
  IrNode n = g->nodes[x];
  int32_t r = x;
  switch (n.kind) {
  case IR_INPUT:
  case IR_CONST:
  case IR_IOTA:
    break;
  case IR_REDUCE:
  case IR_COPY:
  case IR_MATMUL: {
    bool changed = false;
    for (int i = 0; i < ir_node_arity(&n); i++) {
      int32_t s = -1;
      if ((st = rewrite(v, n.src[i], &s, depth + 1)) != LOOM_OK) return st;
      if (s != n.src[i]) {
        n.src[i] = s;
        changed = true;
      }
    }
    if (changed) {
      n.hash = 0;
      if ((st = add_node(v, &n, &r)) != LOOM_OK) return st;
    }
    break;
  }
  case IR_ELEM:
  case IR_CAST: {
    int arity = n.kind == IR_CAST ? 1 : op_info((LoomOp)n.op) ? op_info((LoomOp)n.op)->arity : 0;
    bool changed = false;
    for (int i = 0; i < arity; i++) {
      int32_t s;
      if ((st = rewrite(v, n.src[i], &s, depth + 1)) != LOOM_OK) return st;
      if (!same_shape(&g->nodes[s], &n)) {
        IrNode b;
        pass_init_node(&b, IR_BROADCAST, g->nodes[s].dtype, n.ndim, n.shape);
        if ((st = apply_move(v, &b, s, &s, depth + 1)) != LOOM_OK) return st;
      }
      if (s != n.src[i]) {
        n.src[i] = s;
        changed = true;
      }
    }
    if (changed) {
      n.hash = 0;
      if ((st = add_node(v, &n, &r)) != LOOM_OK) return st;
    }
    break;
  }
  case IR_BROADCAST:
  case IR_RESHAPE:
  case IR_PERMUTE:
  case IR_SLICE: {
    int32_t s;
    if ((st = rewrite(v, n.src[0], &s, depth + 1)) != LOOM_OK) return st;
    const IrNode *sn = &g->nodes[s];
    if (s == n.src[0] && pass_const_of(g, s) < 0 && sn->kind != IR_ELEM && sn->kind != IR_CAST) {
      IrView view;
      if (pass_compute_view(g, x, &view)) break; /* already a composable chain */
    }
    if ((st = apply_move(v, &n, s, &r, depth + 1)) != LOOM_OK) return st;
    break;
  }
  default:
    return diag_error(v->d, LOOM_ERR_INTERNAL, "push_views: unknown node kind %d at %%%d", n.kind, x);
  }
  if ((st = memo_reserve(v)) != LOOM_OK) return st;
  v->memo[x] = r;
  v->memo[r] = r;
  *out = r;
  return LOOM_OK;
}

LoomStatus pass_push_views(IrModule *m, Diag *d) {
  Views v = {m, m->graph, NULL, 0, d};
  LoomStatus st = memo_reserve(&v);
  if (st != LOOM_OK) return st;
  for (int32_t i = 0; i < m->nroots; i++) {
    LOOM_ASSERT(d, m->roots[i] >= 0 && m->roots[i] < m->graph->nnodes);
    if ((st = rewrite(&v, m->roots[i], &m->roots[i], 0)) != LOOM_OK) return st;
  }
  return LOOM_OK;
}
