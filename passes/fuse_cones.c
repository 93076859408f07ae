/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_cones.c: what a realized node reads, for pass_fuse: the cone walk (ELEM/CAST nodes above a
 * realized node, down to leaves, movement chains and other realized roots), the leaf and the producing
 * kernel of a read; and read resolution (pass_map_strides, pass_resolve_read), which lower.c shares.
 *
 * Contract: walks are iterative (f->stack) and mark visits with f->stamp/f->gen; they append to
 * f->cone and f->reads in first-visit order, operands left to right, so the plan is deterministic.
 */
#include <string.h>

#include "passes/fuse_internal.h"

LoomStatus pass_fuse_push_i32(Fuser *f, int32_t **arr, int32_t *n, int32_t *cap, int32_t v) {
  if (*n == *cap) {
    int32_t ncap = *cap ? *cap * 2 : 8;
    int32_t *na = arena_alloc(f->m->arena, (size_t)ncap * sizeof *na);
    if (!na) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    if (*n) memcpy(na, *arr, (size_t)*n * sizeof *na);
    *arr = na;
    *cap = ncap;
  }
  (*arr)[(*n)++] = v;
  return LOOM_OK;
}

/* ---- read resolution (shared with lower.c) ------------------------------------------------------------ */

bool pass_map_strides(const FusedKernel *k, bool final_space, int ndim, const int64_t *shape,
                      const int64_t *in, int64_t *out) {
  memset(out, 0, sizeof(int64_t) * LOOM_MAX_RANK);
  if (!final_space) {
    if (ndim != k->xndim) return false;
    for (int i = 0; i < ndim; i++)
      if (shape[i] != k->xshape[i]) return false;
    for (int kd = 0; kd < k->ndim; kd++) out[kd] = k->perm[kd] >= 0 ? in[k->perm[kd]] : 0;
  } else {
    int j = 0;
    for (int kd = 0; kd < k->nkeep; kd++) {
      if (k->shape[kd] == 1) continue;
      while (j < ndim && shape[j] == 1) j++;
      if (j >= ndim || shape[j] != k->shape[kd]) return false;
      out[kd] = in[j++];
    }
    while (j < ndim && shape[j] == 1) j++;
    if (j != ndim) return false;
  }
  for (int kd = 0; kd < k->ndim; kd++)
    if (k->shape[kd] == 1) out[kd] = 0;
  return true;
}

bool pass_local_map(const IrGraph *g, const FusedKernel *k, bool final_space, int32_t top) {
  const IrNode *n = &g->nodes[top];
  if (final_space || k->is_scan || k->is_call || k->is_scatter) return false;
  if ((n->kind != IR_ELEM && n->kind != IR_CAST) || dtype_compute((LoomDType)n->dtype) != n->dtype) return false;
  if (!pass_fuse_same_dims(n->ndim, n->shape, k->xndim, k->xshape)) return false;
  const int32_t *list = k->is_reduction ? k->sides : k->maps;
  int32_t count = k->is_reduction ? k->nside : k->nmap;
  for (int32_t i = 0; i < count; i++)
    if (list[i] == top) return true;
  return false;
}

LoomStatus pass_resolve_read(const IrGraph *g, const FusedKernel *k, bool final_space, int32_t top,
                             ReadInfo *out, Diag *d) {
  IrView v;
  memset(out, 0, sizeof *out);
  out->acc_phase = -1;
  if (!pass_compute_view(g, top, &v))
    return diag_error(d, LOOM_ERR_INTERNAL, "fuse: the view at %%%d has no strided form", top);
  const IrNode *t = &g->nodes[top];
  out->leaf = v.leaf;
  out->offset = v.offset;
  if (g->nodes[v.leaf].kind == IR_CONST) {
    out->is_const = true;
    return LOOM_OK;
  }
  if (pass_local_map(g, k, final_space, top)) {
    out->is_local = true;
    return LOOM_OK;
  }
  if (!pass_map_strides(k, final_space, t->ndim, t->shape, v.strides, out->strides))
    return diag_error(d, LOOM_ERR_INTERNAL, "fuse: node %%%d does not match its kernel's space", top);
  if (g->nodes[v.leaf].kind == IR_SCAN && k->is_scan && k->reduces[0] == v.leaf && !final_space && v.offset == 0) {
    int64_t cs[LOOM_MAX_RANK]; /* the scan of k read at the point being computed */
    pass_contiguous_strides(k->xndim, k->xshape, cs);
    bool same = t->ndim == k->xndim;
    for (int a = 0; same && a < k->xndim; a++) same = k->xshape[a] <= 1 || v.strides[a] == cs[a];
    if (same) {
      out->is_acc = true;
      out->acc_phase = 0;
    }
    return LOOM_OK;
  }
  if (g->nodes[v.leaf].kind != IR_REDUCE || v.offset != 0) return LOOM_OK;
  int phase = -1;
  for (int i = 0; i < k->nreduce; i++)
    if (k->reduces[i] == v.leaf) phase = i;
  if (phase < 0) return LOOM_OK;
  bool ok = true;
  if (!final_space) {
    int64_t s = 1, ostride[LOOM_MAX_RANK];
    for (int a = k->xndim - 1; a >= 0; a--) {
      ostride[a] = s;
      if (!(k->axes >> a & 1u)) s *= k->xshape[a];
    }
    for (int a = 0; a < k->xndim; a++) {
      if (k->xshape[a] <= 1) continue;
      if ((k->axes >> a & 1u) ? v.strides[a] != 0 : v.strides[a] != ostride[a]) ok = false;
    }
  } else {
    int64_t s = 1, o = 1;
    for (int kd = 0; kd < k->nkeep; kd++) o *= k->shape[kd];
    for (int i = t->ndim - 1; i >= 0; i--) {
      if (t->shape[i] <= 1) continue;
      if (v.strides[i] != s) ok = false;
      s *= t->shape[i];
    }
    if (ir_numel(t->ndim, t->shape) != o) ok = false;
  }
  if (ok) {
    out->is_acc = true;
    out->acc_phase = phase;
  }
  return LOOM_OK;
}

/* ---- cones ------------------------------------------------------------------------------------------- */

static bool is_stop(const FusionPlan *p, const IrNode *n, int32_t x) {
  return p->is_stop[x] && pass_cone_kind(n->kind);
}

int pass_fuse_elem_arity(const IrNode *n) {
  if (n->kind == IR_CAST) return 1;
  if (n->kind == IR_GATHER) return 2; /* the data's view (a read) and the index (an operand) */
  const OpInfo *info = op_info((LoomOp)n->op);
  return info ? info->arity : 0;
}

/* The cone of `start`: a depth-first walk, operands left to right, on an explicit stack; reads
 * (leaves, chains, boundaries) are appended to f->reads and cone nodes to f->cone in first-visit
 * order. */
LoomStatus pass_fuse_walk_cone(Fuser *f, int32_t start) {
  int32_t nstack = 0;
  LoomStatus st = pass_fuse_push_i32(f, &f->stack, &nstack, &f->capstack, start);
  while (st == LOOM_OK && nstack > 0) {
    int32_t x = f->stack[--nstack];
    if (f->stamp[x] == f->gen) continue;
    f->stamp[x] = f->gen;
    const IrNode *n = &f->g->nodes[x];
    if (pass_cone_kind(n->kind) && (x == start || !is_stop(f->p, n, x))) {
      if ((st = pass_fuse_push_i32(f, &f->cone, &f->ncone, &f->capcone, x)) != LOOM_OK) return st;
      for (int i = pass_fuse_elem_arity(n) - 1; i >= 0 && st == LOOM_OK; i--)
        if (f->stamp[n->src[i]] != f->gen) st = pass_fuse_push_i32(f, &f->stack, &nstack, &f->capstack, n->src[i]);
      continue;
    }
    st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, x);
  }
  return st;
}

/* The node whose value realized node x stores (its cone's top). */
int32_t pass_fuse_stored_value(const IrGraph *g, int32_t x) {
  const IrNode *n = &g->nodes[x];
  return (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_SCAN || n->kind == IR_SCATTER) ? n->src[0] : x;
}

/* Fills f->reads with the tops read by x's cone (a product: its two operands). */
LoomStatus pass_fuse_collect_reads(Fuser *f, int32_t x) {
  f->nreads = 0;
  f->ncone = 0;
  f->gen++;
  const IrNode *n = &f->g->nodes[x];
  if (n->kind == IR_MATMUL) {
    LoomStatus st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[0]);
    if (st == LOOM_OK && n->src[1] != n->src[0]) st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[1]);
    return st;
  }
  return pass_fuse_walk_cone(f, pass_fuse_stored_value(f->g, x));
}

int32_t pass_fuse_leaf_of(const IrGraph *g, int32_t top) {
  while (ir_is_movement(g->nodes[top].kind)) top = g->nodes[top].src[0];
  return top;
}

/* The node whose buffer a call reads at operand top: the top itself when it was materialized for a
 * call, else the leaf under its view. */
int32_t pass_fuse_call_leaf_of(const Fuser *f, int32_t top) {
  return f->p->call_operand[top] ? top : pass_fuse_leaf_of(f->g, top);
}

/* The kernel that writes the buffer read at top, or -1 (inputs, constants and iotas are nobody's). */
int32_t pass_fuse_producer_of(const Fuser *f, int32_t top) {
  int32_t leaf = pass_fuse_leaf_of(f->g, top);
  int kind = f->g->nodes[leaf].kind;
  if (kind == IR_INPUT || kind == IR_CONST || kind == IR_IOTA) return -1;
  return f->p->kernel_of[leaf];
}
