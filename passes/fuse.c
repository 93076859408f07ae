/* fuse.c: pass_fuse, grouping realized nodes into kernels (a FusionPlan).
 *
 * Contract. Requires: pass_push_views has run (movement chains only above leaves, ELEM operands of
 * the node's shape). Guarantees: m->plan lists kernels in an order where every buffer is written
 * before it is read; each realized node (a root, an IR_REDUCE, an IR_COPY) is computed by exactly one
 * kernel (no reduction is duplicated); a kernel never reads a buffer it writes; plan->needs_temp marks
 * the realized nodes read by a kernel other than their own (lower stores them into temps).
 *
 * Approach (greedy, in node order, which is topological). The "cone" of a realized node N is the
 * ELEM/CAST subgraph above it down to leaves (through their movement chains) and other realized
 * ELEM/CAST roots. A reduction starts a kernel over its source shape X (kept axes, then reduced axes,
 * in order), or joins the kernel K of an earlier reduction over the same (X, axes) that it reads only
 * through broadcast-back views (read as KI_ACC). Other realized nodes join such a K as a MAP store
 * (shape X) or a FINAL store (the reductions' output shape) when they read K only at the kept
 * coordinates; otherwise they share an elementwise kernel of their shape with no dependency between
 * them, or start one. A join that would create a cycle between kernels is refused.
 *
 * Library calls (IR_MATMUL, passes/calls.c). A product is realized by a kernel of its own, a call.
 * Its operands are read in place when a BLAS takes their strides (a view of an input or of a realized
 * node: transposes and slices are flags and leading dimensions, not copies); any other operand (an
 * elementwise expression, a broadcast or negative-stride view) is realized into a contiguous temp by an
 * ordinary kernel first (plan->call_operand). When the product is read by exactly one realized node
 * whose cone is an epilogue the library applies (bias, c matrix, scaling, ReLU), that node is stored
 * by the call itself and the product never reaches memory. A product that is a root with an output a
 * call cannot write directly (not C-contiguous, or the same node twice among the roots) is written
 * through an IR_COPY root instead; an epilogue root with such an output is not fused.
 */
#include <string.h>

#include "passes/passes.h"

typedef struct Fuser {
  IrModule *m;
  IrGraph *g;
  FusionPlan *p;
  Diag *d;
  int32_t *stamp, gen; /* per node: visited mark of the current cone walk */
  int32_t *reads, nreads, capreads;
  int32_t *kstamp, kgen; /* per kernel: visited mark of reaches() */
  int32_t kstamp_cap;
} Fuser;

static LoomStatus push_i32(Fuser *f, int32_t **arr, int32_t *n, int32_t *cap, int32_t v) {
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

static bool is_movement(int kind) {
  return kind == IR_BROADCAST || kind == IR_RESHAPE || kind == IR_PERMUTE || kind == IR_SLICE;
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
  if (!pass_map_strides(k, final_space, t->ndim, t->shape, v.strides, out->strides))
    return diag_error(d, LOOM_ERR_INTERNAL, "fuse: node %%%d does not match its kernel's space", top);
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
  return p->is_stop[x] && (n->kind == IR_ELEM || n->kind == IR_CAST);
}

static LoomStatus walk(Fuser *f, int32_t x, bool is_start) {
  if (f->stamp[x] == f->gen) return LOOM_OK;
  f->stamp[x] = f->gen;
  const IrNode *n = &f->g->nodes[x];
  if ((n->kind == IR_ELEM || n->kind == IR_CAST) && (is_start || !is_stop(f->p, n, x))) {
    int arity = n->kind == IR_CAST ? 1 : op_info((LoomOp)n->op) ? op_info((LoomOp)n->op)->arity : 0;
    for (int i = 0; i < arity; i++) {
      LoomStatus st = walk(f, n->src[i], false);
      if (st != LOOM_OK) return st;
    }
    return LOOM_OK;
  }
  return push_i32(f, &f->reads, &f->nreads, &f->capreads, x);
}

/* The node whose value realized node x stores (its cone's top). */
static int32_t value_of(const IrGraph *g, int32_t x) {
  const IrNode *n = &g->nodes[x];
  return (n->kind == IR_REDUCE || n->kind == IR_COPY) ? n->src[0] : x;
}

/* Fills f->reads with the tops read by x's cone (a product: its two operands). */
static LoomStatus collect_reads(Fuser *f, int32_t x) {
  f->nreads = 0;
  f->gen++;
  const IrNode *n = &f->g->nodes[x];
  if (n->kind == IR_MATMUL) {
    LoomStatus st = push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[0]);
    if (st == LOOM_OK && n->src[1] != n->src[0]) st = push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[1]);
    return st;
  }
  return walk(f, value_of(f->g, x), true);
}

static int32_t leaf_of(const IrGraph *g, int32_t top) {
  while (is_movement(g->nodes[top].kind)) top = g->nodes[top].src[0];
  return top;
}

/* The node whose buffer a call reads at operand top: the top itself when it was materialized for a
 * call, else the leaf under its view. */
static int32_t call_leaf_of(const Fuser *f, int32_t top) {
  return f->p->call_operand[top] ? top : leaf_of(f->g, top);
}

/* The kernel that writes the buffer read at top, or -1 (inputs, constants and iotas are nobody's). */
static int32_t producer(const Fuser *f, int32_t top) {
  int32_t leaf = leaf_of(f->g, top);
  int kind = f->g->nodes[leaf].kind;
  if (kind == IR_INPUT || kind == IR_CONST || kind == IR_IOTA) return -1;
  return f->p->kernel_of[leaf];
}

/* ---- kernels ---------------------------------------------------------------------------------------- */

static bool reaches(Fuser *f, int32_t from, int32_t to) {
  if (from == to) return true;
  if (f->kstamp[from] == f->kgen) return false;
  f->kstamp[from] = f->kgen;
  const FusedKernel *k = &f->p->kernels[from];
  for (int i = 0; i < k->ndep; i++)
    if (reaches(f, k->deps[i], to)) return true;
  return false;
}

/* True when no kernel x's cone reads (other than k itself) depends on k. */
static bool no_cycle(Fuser *f, int32_t k) {
  for (int i = 0; i < f->nreads; i++) {
    int32_t kd = producer(f, f->reads[i]);
    if (kd < 0 || kd == k) continue;
    f->kgen++;
    if (reaches(f, kd, k)) return false;
  }
  return true;
}

static LoomStatus new_kernel(Fuser *f, int32_t *out) {
  FusionPlan *p = f->p;
  if (p->nkernel == p->cap) {
    int32_t ncap = p->cap ? p->cap * 2 : 8;
    FusedKernel *nk = arena_alloc(f->m->arena, (size_t)ncap * sizeof *nk);
    int32_t *ns = arena_alloc(f->m->arena, (size_t)ncap * sizeof *ns);
    if (!nk || !ns) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    if (p->nkernel) memcpy(nk, p->kernels, (size_t)p->nkernel * sizeof *nk);
    p->kernels = nk;
    p->cap = ncap;
    f->kstamp = ns;
    f->kstamp_cap = ncap;
  }
  memset(&p->kernels[p->nkernel], 0, sizeof p->kernels[0]);
  f->kstamp[p->nkernel] = 0;
  *out = p->nkernel++;
  return LOOM_OK;
}

/* Can x (whose reads are in f->reads) be computed by kernel k in the given space? */
static LoomStatus can_join(Fuser *f, int32_t k, bool final_space, bool *ok) {
  *ok = false;
  const FusedKernel *K = &f->p->kernels[k];
  for (int i = 0; i < f->nreads; i++) {
    const IrNode *t = &f->g->nodes[f->reads[i]];
    int64_t tmp[LOOM_MAX_RANK], z[LOOM_MAX_RANK] = {0};
    if (!pass_map_strides(K, final_space, t->ndim, t->shape, z, tmp)) return LOOM_OK;
    if (producer(f, f->reads[i]) != k) continue;
    ReadInfo r;
    LoomStatus st = pass_resolve_read(f->g, K, final_space, f->reads[i], &r, f->d);
    if (st != LOOM_OK) return st;
    if (!r.is_acc) return LOOM_OK;
  }
  *ok = no_cycle(f, k);
  return LOOM_OK;
}

static LoomStatus add_deps(Fuser *f, int32_t k) {
  FusedKernel *K = &f->p->kernels[k];
  for (int i = 0; i < f->nreads; i++) {
    int32_t kd = producer(f, f->reads[i]);
    if (kd < 0 || kd == k) continue;
    bool have = false;
    for (int j = 0; j < K->ndep; j++)
      if (K->deps[j] == kd) have = true;
    if (!have) {
      LoomStatus st = push_i32(f, &K->deps, &K->ndep, &K->cap_dep, kd);
      if (st != LOOM_OK) return st;
    }
  }
  return LOOM_OK;
}

static bool same_dims(int na, const int64_t *a, int nb, const int64_t *b) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static LoomStatus place_reduce(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = leaf_of(f->g, f->reads[i]);
    int32_t k = producer(f, f->reads[i]);
    if (k < 0 || f->g->nodes[leaf].kind != IR_REDUCE) continue;
    FusedKernel *K = &p->kernels[k];
    if (!K->is_reduction || K->axes != n->axes || !same_dims(K->xndim, K->xshape, s->ndim, s->shape))
      continue;
    bool ok;
    if ((st = can_join(f, k, false, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK) return st;
    K = &p->kernels[k];
    return push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  int32_t k;
  if ((st = new_kernel(f, &k)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  K->is_reduction = true;
  K->axes = n->axes;
  K->xndim = s->ndim;
  memcpy(K->xshape, s->shape, sizeof K->xshape);
  int nd = 0;
  for (int a = 0; a < s->ndim; a++)
    if (!(n->axes >> a & 1u)) {
      K->perm[nd] = a;
      K->shape[nd++] = s->shape[a];
    }
  K->nkeep = nd;
  for (int a = 0; a < s->ndim; a++)
    if (n->axes >> a & 1u) {
      K->perm[nd] = a;
      K->shape[nd++] = s->shape[a];
    }
  if (nd == K->nkeep) { /* nothing reduced: a virtual R dim of size 1 */
    if (nd >= LOOM_MAX_RANK)
      return diag_error(f->d, LOOM_ERR_UNSUPPORTED,
                        "a reduction over no axis of a rank-%d array is not supported", nd);
    K->perm[nd] = -1;
    K->shape[nd++] = 1;
  }
  K->ndim = nd;
  p->kernel_of[x] = k;
  if ((st = add_deps(f, k)) != LOOM_OK) return st;
  return push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
}

static LoomStatus place_other(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = leaf_of(f->g, f->reads[i]);
    int32_t k = producer(f, f->reads[i]);
    if (k < 0 || f->g->nodes[leaf].kind != IR_REDUCE || !p->kernels[k].is_reduction) continue;
    FusedKernel *K = &p->kernels[k];
    bool final_space = !same_dims(K->xndim, K->xshape, n->ndim, n->shape);
    bool ok;
    if ((st = can_join(f, k, final_space, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK) return st;
    K = &p->kernels[k];
    if (final_space) return push_i32(f, &K->finals, &K->nfinal, &K->cap_final, x);
    return push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
  }
  for (int32_t k = 0; k < p->nkernel; k++) {
    FusedKernel *K = &p->kernels[k];
    if (K->is_reduction || K->is_call || !same_dims(K->xndim, K->xshape, n->ndim, n->shape)) continue;
    if (!no_cycle(f, k)) continue;
    bool reads_k = false;
    for (int i = 0; i < f->nreads; i++)
      if (producer(f, f->reads[i]) == k) reads_k = true;
    if (reads_k) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK) return st;
    K = &p->kernels[k];
    return push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
  }
  int32_t k;
  if ((st = new_kernel(f, &k)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  K->xndim = K->ndim = K->nkeep = n->ndim;
  memcpy(K->xshape, n->shape, sizeof K->xshape);
  memcpy(K->shape, n->shape, sizeof K->shape);
  for (int a = 0; a < n->ndim; a++) K->perm[a] = a;
  p->kernel_of[x] = k;
  if ((st = add_deps(f, k)) != LOOM_OK) return st;
  return push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
}

/* Kahn's algorithm, lowest index first; renumbers kernels and kernel_of. */
static LoomStatus order_kernels(Fuser *f) {
  FusionPlan *p = f->p;
  int32_t nk = p->nkernel;
  if (nk == 0) return LOOM_OK;
  int32_t *newid = arena_alloc(f->m->arena, (size_t)nk * sizeof *newid);
  FusedKernel *out = arena_alloc(f->m->arena, (size_t)nk * sizeof *out);
  if (!newid || !out) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  for (int32_t i = 0; i < nk; i++) newid[i] = -1;
  for (int32_t done = 0; done < nk; done++) {
    int32_t pick = -1;
    for (int32_t k = 0; k < nk && pick < 0; k++) {
      if (newid[k] >= 0) continue;
      bool ready = true;
      for (int j = 0; j < p->kernels[k].ndep; j++)
        if (newid[p->kernels[k].deps[j]] < 0) ready = false;
      if (ready) pick = k;
    }
    if (pick < 0) return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: cyclic kernel dependencies");
    newid[pick] = done;
    out[done] = p->kernels[pick];
  }
  for (int32_t k = 0; k < nk; k++)
    for (int j = 0; j < out[k].ndep; j++) out[k].deps[j] = newid[out[k].deps[j]];
  for (int32_t x = 0; x < p->nnodes; x++)
    if (p->kernel_of[x] >= 0) p->kernel_of[x] = newid[p->kernel_of[x]];
  p->kernels = out;
  p->cap = nk;
  return LOOM_OK;
}

/* Marks the buffers a call kernel reads (operands, bias, c) as temps of their writers. */
static LoomStatus mark_call_temps(Fuser *f, int32_t k) {
  const FusedKernel *K = &f->p->kernels[k];
  const IrNode *mm = &f->g->nodes[K->call];
  int32_t tops[4] = {mm->src[0], mm->src[1], K->epi.bias, K->epi.c};
  for (int i = 0; i < 4; i++) {
    if (tops[i] < 0) continue;
    int32_t leaf = i < 2 ? call_leaf_of(f, tops[i]) : leaf_of(f->g, tops[i]);
    int kind = f->g->nodes[leaf].kind;
    if ((kind == IR_INPUT || kind == IR_CONST) && !(i < 2 && f->p->call_operand[leaf])) continue;
    int32_t kw = f->p->kernel_of[leaf];
    if (kw == k) return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: call kernel %d reads %%%d, which it writes", k, leaf);
    if (kw < 0) return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: call kernel %d reads %%%d, which no kernel writes", k, leaf);
    f->p->needs_temp[leaf] = 1;
  }
  return LOOM_OK;
}

/* Marks the realized nodes read outside their kernel (or not as KI_ACC). */
static LoomStatus mark_temps(Fuser *f) {
  FusionPlan *p = f->p;
  for (int32_t k = 0; k < p->nkernel; k++)
    if (p->kernels[k].is_call) {
      LoomStatus st = mark_call_temps(f, k);
      if (st != LOOM_OK) return st;
    }
  for (int32_t x = 0; x < p->nnodes; x++) {
    int32_t k = p->kernel_of[x];
    if (k < 0) continue;
    const FusedKernel *K = &p->kernels[k];
    if (K->is_call) continue;
    bool final_space = false;
    for (int i = 0; i < K->nfinal; i++)
      if (K->finals[i] == x) final_space = true;
    LoomStatus st = collect_reads(f, x);
    if (st != LOOM_OK) return st;
    for (int i = 0; i < f->nreads; i++) {
      int32_t leaf = leaf_of(f->g, f->reads[i]);
      int32_t kw = producer(f, f->reads[i]);
      if (kw < 0) continue;
      ReadInfo r;
      if (kw == k) {
        if ((st = pass_resolve_read(f->g, K, final_space, f->reads[i], &r, f->d)) != LOOM_OK) return st;
        if (r.is_acc) continue;
        return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: kernel %d reads %%%d, which it writes", k, leaf);
      }
      p->needs_temp[leaf] = 1;
    }
  }
  return LOOM_OK;
}

/* ---- library calls ---------------------------------------------------------------------------------- */

static bool out_c_contiguous(const LoomArray *o) {
  int64_t want = 1;
  for (int i = o->ndim - 1; i >= 0; i--) {
    if (o->shape[i] != 1 && o->strides[i] != want) return false;
    want *= o->shape[i] > 0 ? o->shape[i] : 1;
  }
  return true;
}

/* Whether root i may be stored by a call: its output is C-contiguous and no earlier root is the same
 * node (a call writes one buffer; other kernels may read it as that node's contiguous storage). */
static bool root_call_storable(const IrModule *m, int32_t i) {
  for (int32_t j = 0; j < i; j++)
    if (m->roots[j] == m->roots[i]) return false;
  return out_c_contiguous(&m->outs[i]);
}

static bool call_storable(const IrModule *m, int32_t x) {
  for (int32_t i = 0; i < m->nroots; i++)
    if (m->roots[i] == x && !root_call_storable(m, i)) return false;
  return true;
}

/* Roots that are products a call cannot store get an IR_COPY root above them (before the plan's
 * per-node arrays exist: it adds nodes). */
static LoomStatus copy_call_roots(IrModule *m, Diag *d) {
  for (int32_t i = 0; i < m->nroots; i++) {
    int32_t x = m->roots[i];
    if (m->graph->nodes[x].kind != IR_MATMUL || root_call_storable(m, i)) continue;
    IrNode src = m->graph->nodes[x], c;
    pass_init_node(&c, IR_COPY, src.dtype, src.ndim, src.shape);
    c.src[0] = x;
    LoomStatus st = ir_add_raw(m->graph, &c, &m->roots[i], d);
    if (st != LOOM_OK) return st;
  }
  return LOOM_OK;
}

/* Marks the operands of product x that a BLAS cannot read in place as realized call operands. */
static void plan_operands(Fuser *f, int32_t x, uint8_t *realized) {
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
static LoomStatus plan_epilogues(Fuser *f, const uint8_t *realized, int32_t *epi_root, CallEpilogue *epi) {
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
    LoomStatus st = collect_reads(f, x);
    if (st != LOOM_OK) return st;
    bool is_mm = g->nodes[x].kind == IR_MATMUL;
    for (int i = 0; i < f->nreads; i++) {
      int32_t r = f->reads[i];
      int32_t leaf = is_mm ? call_leaf_of(f, r) : leaf_of(g, r);
      if (g->nodes[leaf].kind != IR_MATMUL || reader[leaf] == x) continue;
      count[leaf]++;
      /* the one reader an epilogue may have reads the product itself (no view) in an elementwise cone,
       * or is a free view of it (a root reshape that only adds or drops size-1 dims) */
      bool elementwise = !is_mm && g->nodes[x].kind != IR_REDUCE;
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
    if (!same_dims(xn->ndim, xn->shape, g->nodes[mm].ndim, g->nodes[mm].shape)) continue;
    if (pass_match_epilogue(g, f->p->is_stop, value_of(g, x), mm, &epi[mm])) epi_root[mm] = x;
  }
  return LOOM_OK;
}

/* A call kernel for product x (stores x, or its epilogue's root). */
static LoomStatus place_call(Fuser *f, int32_t x, int32_t store, const CallEpilogue *epi) {
  int32_t k;
  LoomStatus st = new_kernel(f, &k);
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
    int32_t leaf = call_leaf_of(f, n->src[i]);
    int kind = f->g->nodes[leaf].kind;
    bool own = f->p->call_operand[leaf]; /* materialized for the call: its copy kernel */
    int32_t kd = (kind == IR_INPUT || kind == IR_CONST) && !own ? -1 : f->p->kernel_of[leaf];
    bool have = kd < 0;
    for (int j = 0; j < K->ndep && !have; j++) have = K->deps[j] == kd;
    if (!have && (st = push_i32(f, &K->deps, &K->ndep, &K->cap_dep, kd)) != LOOM_OK) return st;
    K = &f->p->kernels[k];
  }
  return LOOM_OK;
}

/* The epilogue root x joins the call kernel of its product: the kernel also waits for the writers of
 * the bias and c it reads. */
static LoomStatus place_epilogue(Fuser *f, int32_t x, int32_t mm) {
  int32_t k = f->p->kernel_of[mm];
  FusedKernel *K = &f->p->kernels[k];
  f->p->kernel_of[x] = k;
  f->nreads = 0;
  LoomStatus st;
  if (K->epi.bias >= 0 && (st = push_i32(f, &f->reads, &f->nreads, &f->capreads, K->epi.bias)) != LOOM_OK) return st;
  if (K->epi.c >= 0 && (st = push_i32(f, &f->reads, &f->nreads, &f->capreads, K->epi.c)) != LOOM_OK) return st;
  return add_deps(f, k);
}

LoomStatus pass_fuse(IrModule *m, Diag *d) {
  LoomStatus st = copy_call_roots(m, d);
  if (st != LOOM_OK) return st;
  IrGraph *g = m->graph;
  int32_t nn = g->nnodes > 0 ? g->nnodes : 1;
  FusionPlan *p = arena_alloc(m->arena, sizeof *p);
  Fuser f = {m, g, p, d, NULL, 0, NULL, 0, 0, NULL, 0, 0};
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  p->nnodes = g->nnodes;
  p->kernel_of = arena_alloc(m->arena, (size_t)nn * sizeof *p->kernel_of);
  p->is_root = arena_alloc(m->arena, (size_t)nn);
  p->needs_temp = arena_alloc(m->arena, (size_t)nn);
  p->is_stop = arena_alloc(m->arena, (size_t)nn);
  p->call_operand = arena_alloc(m->arena, (size_t)nn);
  uint8_t *realized = arena_alloc(m->arena, (size_t)nn);
  int32_t *epi_root = arena_alloc(m->arena, (size_t)nn * sizeof *epi_root);
  int32_t *epi_of = arena_alloc(m->arena, (size_t)nn * sizeof *epi_of);
  CallEpilogue *epi = arena_alloc(m->arena, (size_t)nn * sizeof *epi);
  f.stamp = arena_alloc(m->arena, (size_t)nn * sizeof *f.stamp);
  if (!p->kernel_of || !p->is_root || !p->needs_temp || !p->is_stop || !p->call_operand || !realized ||
      !epi_root || !epi_of || !epi || !f.stamp)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory (%d nodes)", nn);
  for (int32_t x = 0; x < g->nnodes; x++) p->kernel_of[x] = epi_of[x] = -1;
  for (int32_t i = 0; i < m->nroots; i++) {
    LOOM_ASSERT(d, m->roots[i] >= 0 && m->roots[i] < g->nnodes);
    p->is_root[m->roots[i]] = 1;
    p->is_stop[m->roots[i]] = 1;
    realized[m->roots[i]] = 1;
  }
  /* Realized: roots plus every REDUCE/COPY/MATMUL reachable from them, and the call operands. */
  uint8_t *live = p->needs_temp; /* scratch, cleared below */
  for (int32_t i = 0; i < m->nroots; i++) live[m->roots[i]] = 1;
  for (int32_t x = g->nnodes - 1; x >= 0; x--) {
    if (!live[x]) continue;
    const IrNode *n = &g->nodes[x];
    if (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_MATMUL) realized[x] = 1;
    for (int i = 0; i < 3; i++)
      if (n->src[i] >= 0 && n->src[i] < x) live[n->src[i]] = 1;
  }
  memset(live, 0, (size_t)nn);
  for (int32_t x = 0; x < g->nnodes; x++)
    if (realized[x] && g->nodes[x].kind == IR_MATMUL) plan_operands(&f, x, realized);
  if ((st = plan_epilogues(&f, realized, epi_root, epi)) != LOOM_OK) return st;
  for (int32_t x = 0; x < g->nnodes; x++)
    if (epi_root[x] >= 0) epi_of[epi_root[x]] = x;
  for (int32_t x = 0; x < g->nnodes; x++) {
    if (!realized[x]) continue;
    if (g->nodes[x].kind == IR_MATMUL) {
      CallEpilogue none = {.bias = -1, .c = -1, .alpha = 1.0, .act = KACT_NONE};
      st = place_call(&f, x, epi_root[x] >= 0 ? epi_root[x] : x, epi_root[x] >= 0 ? &epi[x] : &none);
    } else if (epi_of[x] >= 0) {
      st = place_epilogue(&f, x, epi_of[x]);
    } else {
      if ((st = collect_reads(&f, x)) != LOOM_OK) return st;
      if (g->nodes[x].kind == IR_REDUCE) st = place_reduce(&f, x);
      else st = place_other(&f, x);
    }
    if (st != LOOM_OK) return st;
  }
  if ((st = order_kernels(&f)) != LOOM_OK) return st;
  if ((st = mark_temps(&f)) != LOOM_OK) return st;
  m->plan = p;
  return LOOM_OK;
}
