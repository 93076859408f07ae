/* SPDX-License-Identifier: Apache-2.0 */
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
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

void pass_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
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
  while (v >= 0 && v < g->nnodes && ir_is_movement(g->nodes[v].kind)) {
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
  struct Frame *frames; /* the explicit rewrite stack (see rewrite) */
  int32_t nframe, capframe;
  int32_t ret;          /* the result of the frame that finished last */
  IrNode *tmpls;        /* movement templates that are not graph nodes (implicit broadcasts) */
  int32_t ntmpl, captmpl;
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

void pass_note_const_read(IrModule *m, int32_t c) {
  if (c >= 0 && c < m->nconst_read) m->const_read[c] = 1;
}

LoomStatus pass_note_consts_below(IrModule *m, int32_t top, int32_t stop, Diag *d) {
  const IrGraph *g = m->graph;
  if (top < 0 || top >= g->nnodes) return LOOM_OK;
  /* an explicit stack over nodes (sources precede their users); seen marks each node once */
  uint8_t *seen = arena_alloc(m->arena, (size_t)top + 1); /* zeroed */
  int32_t *stack = arena_alloc(m->arena, ((size_t)top + 1) * sizeof *stack);
  if (!seen || !stack) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: %d nodes", top + 1);
  int32_t n = 0;
  stack[n++] = top;
  seen[top] = 1;
  while (n > 0) {
    int32_t x = stack[--n];
    const IrNode *nd = &g->nodes[x];
    if (nd->kind == IR_CONST) pass_note_const_read(m, x);
    if (x == stop) continue;
    for (int i = 0; i < 3; i++) {
      int32_t s = nd->src[i];
      if (s >= 0 && s < x && !seen[s]) {
        seen[s] = 1;
        stack[n++] = s;
      }
    }
  }
  return LOOM_OK;
}

/* Length of the movement chain from x down to its leaf (0 for a leaf). */
static int chain_length(const IrGraph *g, int32_t x) {
  int n = 0;
  while (x >= 0 && x < g->nnodes && ir_is_movement(g->nodes[x].kind) && n <= PASS_MAX_VIEW_CHAIN) {
    x = g->nodes[x].src[0];
    n++;
  }
  return n;
}

/* The rewrite is the recursion "rewrite(x) = x with rewritten operands; a movement op over an
 * ELEM/CAST is applied to the operands and rewritten again" run on an explicit stack of frames (an
 * arena array), so its depth is bounded by memory, not by the C stack: chains of any length work in
 * threads with small stacks. A frame is one call of rewrite() or apply_move(); `step` says where it
 * resumes, v->ret carries a finished callee's result back to its caller. Nodes are added in the
 * same order as the recursive form would add them, so the rewritten graph is the same. */
typedef struct Frame {
  uint8_t apply; /* 0: rewrite(x); 1: apply_move(template, normalized source s), the template being
                    node x, or Views.tmpls[-x - 1] when x < 0 */
  uint8_t step;
  uint8_t i;     /* next operand */
  int32_t x, s;
  int32_t src[3];
} Frame;

enum { VIEWS_MAX_FRAMES = 1 << 28 };

static LoomStatus push_frame(Views *v, int apply, int32_t x, int32_t s) {
  if (v->nframe == v->capframe) {
    if (v->capframe >= VIEWS_MAX_FRAMES)
      return diag_error(v->d, LOOM_ERR_OUT_OF_MEMORY, "push_views: rewrite stack too deep");
    int32_t ncap = v->capframe ? v->capframe * 2 : 256;
    Frame *nf = arena_alloc(v->m->arena, (size_t)ncap * sizeof *nf);
    if (!nf) return diag_error(v->d, LOOM_ERR_OUT_OF_MEMORY, "push_views: out of memory (%d frames)", ncap);
    if (v->nframe) memcpy(nf, v->frames, (size_t)v->nframe * sizeof *nf);
    v->frames = nf;
    v->capframe = ncap;
  }
  Frame *f = &v->frames[v->nframe++];
  memset(f, 0, sizeof *f);
  f->apply = (uint8_t)apply;
  f->x = x;
  f->s = s;
  f->src[0] = f->src[1] = f->src[2] = -1;
  return LOOM_OK;
}

static int elem_arity(const IrNode *n) {
  if (n->kind == IR_CAST) return 1;
  const OpInfo *info = op_info((LoomOp)n->op);
  return info ? info->arity : 0;
}

/* Returns r from the top frame (a rewrite of x also records it in the memo). */
static LoomStatus finish_frame(Views *v, int32_t x, int32_t r) {
  Frame *f = &v->frames[v->nframe - 1];
  if (!f->apply) {
    LoomStatus st = memo_reserve(v);
    if (st != LOOM_OK) return st;
    v->memo[x] = r;
    v->memo[r] = r;
  }
  v->ret = r;
  v->nframe--;
  return LOOM_OK;
}

/* One step of rewrite(f->x). */
static LoomStatus step_rewrite(Views *v, Frame *f) {
  IrGraph *g = v->g;
  LoomStatus st;
  int32_t x = f->x;
  IrNode n = g->nodes[x]; /* copy: the array may move */
  bool elem = n.kind == IR_ELEM || n.kind == IR_CAST;
  int arity = elem ? elem_arity(&n) : ir_node_arity(&n); /* MATMUL: 2; INPUT, CONST, IOTA: 0 */
  switch (f->step) {
  case 0: /* entry */
    if ((st = memo_reserve(v)) != LOOM_OK) return st;
    if (v->memo[x] >= 0) {
      v->ret = v->memo[x];
      v->nframe--;
      return LOOM_OK;
    }
    if (n.kind >= IR_KIND_COUNT)
      return diag_error(v->d, LOOM_ERR_INTERNAL, "push_views: unknown node kind %d at %%%d", n.kind, x);
    f->step = 1;
    return LOOM_OK;
  case 1: /* operand loop */
    if (f->i < arity) {
      f->step = 2;
      return push_frame(v, 0, n.src[f->i], -1);
    }
    f->step = 4;
    return LOOM_OK;
  case 2: { /* operand f->i rewritten into v->ret */
    int32_t s = v->ret;
    if (elem && !same_shape(&g->nodes[s], &n)) { /* implicit broadcasting made explicit */
      if (v->ntmpl == v->captmpl) {
        int32_t ncap = v->captmpl ? v->captmpl * 2 : 16;
        IrNode *nt = arena_alloc(v->m->arena, (size_t)ncap * sizeof *nt);
        if (!nt) return diag_error(v->d, LOOM_ERR_OUT_OF_MEMORY, "push_views: out of memory");
        if (v->ntmpl) memcpy(nt, v->tmpls, (size_t)v->ntmpl * sizeof *nt);
        v->tmpls = nt;
        v->captmpl = ncap;
      }
      pass_init_node(&v->tmpls[v->ntmpl], IR_BROADCAST, g->nodes[s].dtype, n.ndim, n.shape);
      f->step = 3;
      return push_frame(v, 1, -(v->ntmpl++) - 1, s);
    }
    f->src[f->i++] = s;
    f->step = 1;
    return LOOM_OK;
  }
  case 3: /* the broadcast operand applied */
    f->src[f->i++] = v->ret;
    f->step = 1;
    return LOOM_OK;
  case 4: { /* combine */
    if (ir_is_movement(n.kind)) {
      int32_t s = f->src[0];
      const IrNode *sn = &g->nodes[s];
      if (s == n.src[0] && pass_const_of(g, s) < 0 && sn->kind != IR_ELEM && sn->kind != IR_CAST) {
        IrView view;
        if (pass_compute_view(g, x, &view)) return finish_frame(v, x, x); /* already composable */
      }
      f->step = 5;
      return push_frame(v, 1, x, s);
    }
    bool changed = false;
    for (int i = 0; i < arity; i++)
      if (f->src[i] != n.src[i]) {
        n.src[i] = f->src[i];
        changed = true;
      }
    int32_t r = x;
    if (changed) {
      n.hash = 0;
      if ((st = add_node(v, &n, &r)) != LOOM_OK) return st;
    }
    return finish_frame(v, x, r);
  }
  default: /* 5: the movement op applied */
    return finish_frame(v, x, v->ret);
  }
}

/* One step of apply_move: movement op f->x (a template: its src is ignored) applied to the normalized
 * node f->s. A constant becomes a broadcast of the constant; an ELEM/CAST gets the op on each operand
 * (each then rewritten); anything else gets the op stacked on it, with an IR_COPY below when a
 * reshape has no strided view or the chain would exceed PASS_MAX_VIEW_CHAIN ops. */
static LoomStatus step_apply(Views *v, Frame *f) {
  IrGraph *g = v->g;
  LoomStatus st;
  IrNode tmpl = f->x >= 0 ? g->nodes[f->x] : v->tmpls[-f->x - 1];
  IrNode sn = g->nodes[f->s];
  int32_t out;
  if (f->step == 0) {
    int32_t c = pass_const_of(g, f->s);
    if (c >= 0) {
      if (tmpl.ndim == 0) return finish_frame(v, -1, c);
      IrNode b;
      pass_init_node(&b, IR_BROADCAST, g->nodes[c].dtype, tmpl.ndim, tmpl.shape);
      b.src[0] = c;
      if ((st = add_node(v, &b, &out)) != LOOM_OK) return st;
      return finish_frame(v, -1, out);
    }
    if (sn.kind != IR_ELEM && sn.kind != IR_CAST) {
      int32_t base = f->s;
      if (chain_length(g, base) >= PASS_MAX_VIEW_CHAIN) { /* bound every chain: copy, restart */
        IrNode cp;
        pass_init_node(&cp, IR_COPY, sn.dtype, sn.ndim, sn.shape);
        cp.src[0] = base;
        if ((st = add_node(v, &cp, &base)) != LOOM_OK) return st;
      }
      IrNode mv = tmpl;
      mv.dtype = sn.dtype;
      mv.src[0] = base;
      mv.hash = 0;
      if ((st = add_node(v, &mv, &out)) != LOOM_OK) return st;
      IrView view;
      if (pass_compute_view(g, out, &view)) return finish_frame(v, -1, out);
      if (tmpl.kind != IR_RESHAPE || base != f->s)
        return diag_error(v->d, LOOM_ERR_INTERNAL, "push_views: movement chain at %%%d has no view", out);
      IrNode cp;
      pass_init_node(&cp, IR_COPY, sn.dtype, sn.ndim, sn.shape);
      cp.src[0] = f->s;
      int32_t copy;
      if ((st = add_node(v, &cp, &copy)) != LOOM_OK) return st;
      mv.src[0] = copy;
      if ((st = add_node(v, &mv, &out)) != LOOM_OK) return st;
      return finish_frame(v, -1, out);
    }
    f->step = 1;
  }
  if (f->step == 2) { /* operand f->i moved and rewritten */
    f->src[f->i++] = v->ret;
    f->step = 1;
  }
  int arity = elem_arity(&sn);
  if (f->i < arity) {
    IrNode mv = tmpl;
    mv.dtype = g->nodes[sn.src[f->i]].dtype;
    mv.src[0] = sn.src[f->i];
    mv.hash = 0;
    int32_t moved;
    if ((st = add_node(v, &mv, &moved)) != LOOM_OK) return st;
    f->step = 2;
    return push_frame(v, 0, moved, -1);
  }
  IrNode e = sn;
  e.ndim = tmpl.ndim;
  memset(e.shape, 0, sizeof e.shape);
  memcpy(e.shape, tmpl.shape, sizeof e.shape);
  e.hash = 0;
  for (int i = 0; i < arity; i++) e.src[i] = f->src[i];
  if ((st = add_node(v, &e, &out)) != LOOM_OK) return st;
  return finish_frame(v, -1, out);
}

/* rewrite(root), iteratively. */
static LoomStatus rewrite(Views *v, int32_t root, int32_t *out) {
  v->nframe = 0;
  LoomStatus st = push_frame(v, 0, root, -1);
  while (st == LOOM_OK && v->nframe > 0) {
    Frame *f = &v->frames[v->nframe - 1];
    st = f->apply ? step_apply(v, f) : step_rewrite(v, f);
  }
  if (st == LOOM_OK) *out = v->ret;
  return st;
}

static bool reshape_roots_enabled(void) {
  static int slot = -1;
  int r = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv("LOOM_RESHAPE_ROOT_STORE");
    r = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, r, __ATOMIC_RELAXED);
  }
  return r != 0;
}

/* A root that is a RESHAPE of an IR_COPY (a reshape with no strided view: tile and repeat reshape a
 * broadcast) is stored by the copy itself, straight into the output: a C-contiguous output holds the
 * copy's C-contiguous storage element for element, so the output is described with the copy's shape
 * and the root becomes the copy. Without this the copy fills a temp and a second kernel copies the
 * temp into the output (twice the bytes). Outputs that are not C-contiguous, or a copy that another
 * root already is, keep the two kernels. LOOM_RESHAPE_ROOT_STORE=0 turns this off (A/B). */
static LoomStatus store_reshape_roots(IrModule *m, Diag *d) {
  if (!reshape_roots_enabled()) return LOOM_OK;
  const IrGraph *g = m->graph;
  LoomArray *outs = NULL;
  for (int32_t i = 0; i < m->nroots; i++) {
    const IrNode *r = &g->nodes[m->roots[i]];
    if (r->kind != IR_RESHAPE || g->nodes[r->src[0]].kind != IR_COPY) continue;
    int32_t c = r->src[0];
    const IrNode *cn = &g->nodes[c];
    const LoomArray *o = outs ? &outs[i] : &m->outs[i];
    bool ok = o->ndim == r->ndim && cn->ndim <= LOOM_MAX_RANK;
    int64_t want = 1;
    for (int k = o->ndim - 1; ok && k >= 0; k--) {
      if (o->shape[k] != r->shape[k] || (o->shape[k] != 1 && o->strides[k] != want)) ok = false;
      want *= o->shape[k] > 0 ? o->shape[k] : 1;
    }
    for (int32_t j = 0; ok && j < m->nroots; j++)
      if (m->roots[j] == c || (j != i && m->roots[j] == m->roots[i])) ok = false;
    if (!ok) continue;
    if (!outs) {
      outs = arena_alloc(m->arena, (size_t)m->nroots * sizeof *outs);
      if (!outs) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "push_views: out of memory (%d outputs)", m->nroots);
      memcpy(outs, m->outs, (size_t)m->nroots * sizeof *outs);
    }
    outs[i].ndim = cn->ndim;
    memset(outs[i].shape, 0, sizeof outs[i].shape);
    memcpy(outs[i].shape, cn->shape, (size_t)cn->ndim * sizeof *cn->shape);
    pass_contiguous_strides(cn->ndim, cn->shape, outs[i].strides);
    m->roots[i] = c;
  }
  if (outs) m->outs = outs;
  return LOOM_OK;
}

LoomStatus pass_push_views(IrModule *m, Diag *d) {
  Views v;
  memset(&v, 0, sizeof v);
  v.m = m;
  v.g = m->graph;
  v.d = d;
  LoomStatus st = memo_reserve(&v);
  if (st != LOOM_OK) return st;
  for (int32_t i = 0; i < m->nroots; i++) {
    LOOM_ASSERT(d, m->roots[i] >= 0 && m->roots[i] < m->graph->nnodes);
    if ((st = rewrite(&v, m->roots[i], &m->roots[i])) != LOOM_OK) return st;
  }
  return store_reshape_roots(m, d);
}
