/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_calls.c: library calls (IR_MATMUL) in pass_fuse: roots a call cannot store get an IR_COPY,
 * operands a BLAS cannot read in place are realized (plan->call_operand), the epilogue a call applies is
 * chosen per product, and call kernels are placed.
 *
 * Contract: a product is computed by a kernel of its own (is_call) that stores it or its epilogue's
 * root; see fuse.c's header for when an operand or root needs a copy.
 */
#include <string.h>

#include "passes/fuse_internal.h"

/* ---- library calls ---------------------------------------------------------------------------------- */

static bool out_c_contiguous(const LoomArray *o) {
  int64_t want = 1;
  for (int i = o->ndim - 1; i >= 0; i--) {
    if (o->shape[i] != 1 && o->strides[i] != want) return false;
    want *= o->shape[i] > 0 ? o->shape[i] : 1;
  }
  return true;
}

/* A root may be stored by a call when pass_root_output_contiguous (a call writes one buffer; other
 * kernels may read it as that node's contiguous storage). */
bool pass_root_output_contiguous(const IrModule *m, int32_t i) {
  for (int32_t j = 0; j < i; j++)
    if (m->roots[j] == m->roots[i]) return false;
  return out_c_contiguous(&m->outs[i]);
}

static bool call_storable(const IrModule *m, int32_t x) {
  for (int32_t i = 0; i < m->nroots; i++)
    if (m->roots[i] == x && !pass_root_output_contiguous(m, i)) return false;
  return true;
}

/* Roots that are products a call cannot store get an IR_COPY root above them (before the plan's
 * per-node arrays exist: it adds nodes). */
LoomStatus pass_fuse_copy_call_roots(IrModule *m, Diag *d) {
  for (int32_t i = 0; i < m->nroots; i++) {
    int32_t x = m->roots[i];
    if (m->graph->nodes[x].kind != IR_MATMUL || pass_root_output_contiguous(m, i)) continue;
    IrNode src = m->graph->nodes[x], c;
    pass_init_node(&c, IR_COPY, src.dtype, src.ndim, src.shape);
    c.src[0] = x;
    LoomStatus st = ir_add_raw(m->graph, &c, &m->roots[i], d);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

/* Marks the operands of product x that a BLAS cannot read in place as realized call operands. */
void pass_fuse_plan_operands(Fuser *f, int32_t x, uint8_t *realized) {
  const IrGraph *g = f->g;
  for (int i = 0; i < 2; i++) {
    int32_t t = g->nodes[x].src[i];
    const IrNode *tn = &g->nodes[t];
    IrView v;
    bool direct = false;
    if (!((tn->kind == IR_ELEM || tn->kind == IR_CAST) && !f->p->is_stop[t]) && pass_compute_view(g, t, &v) &&
        g->nodes[v.leaf].kind != IR_CONST && g->nodes[v.leaf].kind != IR_IOTA) /* no memory to read */
      direct = pass_blas_matrix(tn->ndim, tn->shape, v.strides);
    if (direct) continue;
    realized[t] = 1;
    f->p->call_operand[t] = 1;
    f->p->is_stop[t] = 1;
  }
}

/* Whether top r is a view of product mm with mm's own contiguous layout (a reshape that adds or drops
 * size-1 dims): the product's buffer is then r's, C-contiguous. */
static bool free_view(const IrGraph *g, int32_t r, int32_t mm) {
  IrView v;
  const IrNode *t = &g->nodes[r];
  if (!pass_compute_view(g, r, &v) || v.leaf != mm || v.offset != 0 ||
      ir_numel(t->ndim, t->shape) != ir_numel(g->nodes[mm].ndim, g->nodes[mm].shape))
    return false;
  int64_t cs[LOOM_MAX_RANK];
  pass_contiguous_strides(t->ndim, t->shape, cs);
  for (int i = 0; i < t->ndim; i++)
    if (t->shape[i] > 1 && v.strides[i] != cs[i]) return false;
  return true;
}

/* Chooses the epilogue of each product read by exactly one realized node: epi_root[mm] = that node
 * when its cone is an epilogue the call applies (epi[mm] describes it), else -1. */
LoomStatus pass_fuse_plan_epilogues(Fuser *f, const uint8_t *realized, int32_t *epi_root, CallEpilogue *epi) {
  const IrGraph *g = f->g;
  int32_t nn = g->nnodes;
  int32_t *count = arena_alloc(f->m->arena, (size_t)nn * sizeof *count);
  int32_t *reader = arena_alloc(f->m->arena, (size_t)nn * sizeof *reader);
  if (!count || !reader) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  for (int32_t x = 0; x < nn; x++) {
    count[x] = 0;
    reader[x] = epi_root[x] = -1;
  }
  for (int32_t x = 0; x < nn; x++) {
    if (!realized[x]) continue;
    LoomStatus st = pass_fuse_collect_reads(f, x);
    if (st != LOOM_OK) return st;
    bool is_mm = g->nodes[x].kind == IR_MATMUL;
    for (int i = 0; i < f->nreads; i++) {
      int32_t r = f->reads[i];
      int32_t leaf = is_mm ? pass_fuse_call_leaf_of(f, r) : pass_fuse_leaf_of(g, r);
      if (g->nodes[leaf].kind != IR_MATMUL || reader[leaf] == x) continue;
      count[leaf]++;
      /* the one reader an epilogue may have reads the product itself (no view) in an elementwise cone,
       * or is a free view of it (a root reshape that only adds or drops size-1 dims). A scatter is
       * neither: its base is stored by a kernel of its own, then its values (pass_fuse_place_scatter);
       * taken as an epilogue it was placed as a plain call that stored the bare product in its buffer. */
      int kind = g->nodes[x].kind;
      bool elementwise = !is_mm && kind != IR_REDUCE && kind != IR_SCAN && kind != IR_SCATTER;
      reader[leaf] = elementwise && (r == leaf || (r == x && free_view(g, r, leaf))) ? x : nn;
    }
  }
  for (int32_t mm = 0; mm < nn; mm++) {
    int32_t x = reader[mm];
    if (!realized[mm] || g->nodes[mm].kind != IR_MATMUL || f->p->is_root[mm] || count[mm] != 1 || x >= nn || x < 0)
      continue;
    const IrNode *xn = &g->nodes[x];
    if (!call_storable(f->m, x)) continue;
    if (xn->kind != IR_ELEM && xn->kind != IR_CAST) { /* a free view: stored as the product itself */
      epi[mm] = (CallEpilogue){.bias = -1, .c = -1, .alpha = 1.0, .act = KACT_NONE};
      epi_root[mm] = x;
      continue;
    }
    if (!pass_fuse_same_dims(xn->ndim, xn->shape, g->nodes[mm].ndim, g->nodes[mm].shape)) continue;
    int32_t value = pass_fuse_stored_value(g, x);
    if (!pass_match_epilogue(g, f->p->is_stop, value, mm, &epi[mm])) continue;
    epi_root[mm] = x;
    /* the call takes the epilogue's constants (alpha, beta, a ReLU's 0) as values of its own */
    LoomStatus st = pass_note_consts_below(f->m, value, mm, f->d);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

/* A call kernel for product x (stores x, or its epilogue's root). */
LoomStatus pass_fuse_place_call(Fuser *f, int32_t x, int32_t store, const CallEpilogue *epi) {
  int32_t k;
  LoomStatus st = pass_fuse_new_kernel(f, &k);
  if (st != LOOM_OK) return st;
  FusedKernel *K = &f->p->kernels[k];
  const IrNode *n = &f->g->nodes[x];
  K->is_call = true;
  K->call = x;
  K->call_store = store;
  K->epi = *epi;
  K->xndim = K->ndim = K->nkeep = n->ndim;
  memcpy(K->xshape, n->shape, sizeof K->xshape);
  memcpy(K->shape, n->shape, sizeof K->shape);
  for (int a = 0; a < n->ndim; a++) K->perm[a] = a;
  f->p->kernel_of[x] = k;
  for (int i = 0; i < 2; i++) {
    int32_t leaf = pass_fuse_call_leaf_of(f, n->src[i]);
    int kind = f->g->nodes[leaf].kind;
    bool own = f->p->call_operand[leaf]; /* materialized for the call: its copy kernel */
    int32_t kd = (kind == IR_INPUT || kind == IR_CONST) && !own ? -1 : f->p->kernel_of[leaf];
    bool have = kd < 0;
    for (int j = 0; j < K->ndep && !have; j++) have = K->deps[j] == kd;
    if (!have) {
      if ((st = pass_fuse_push_i32(f, &K->deps, &K->ndep, &K->cap_dep, kd)) != LOOM_OK) return st;
      f->kusers[kd]++; /* pass_fuse_reaches() skips kernels nobody depends on */
    }
    K = &f->p->kernels[k];
  }
  return LOOM_OK;
}

/* The epilogue root x joins the call kernel of its product: the kernel also waits for the writers of
 * the bias and c it reads. */
LoomStatus pass_fuse_place_epilogue(Fuser *f, int32_t x, int32_t mm) {
  int32_t k = f->p->kernel_of[mm];
  FusedKernel *K = &f->p->kernels[k];
  f->p->kernel_of[x] = k;
  f->nreads = 0;
  LoomStatus st;
  if (K->epi.bias >= 0 && (st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, K->epi.bias)) != LOOM_OK) return st;
  if (K->epi.c >= 0 && (st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, K->epi.c)) != LOOM_OK) return st;
  return pass_fuse_add_deps(f, k);
}
