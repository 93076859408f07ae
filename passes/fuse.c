/* fuse.c: pass_fuse, grouping realized nodes into kernels (a FusionPlan).
 *
 * Files: this one (the driver: bounds, placement order, kernel order, temps) and fuse_cones.c,
 * fuse_join.c, fuse_place.c, fuse_calls.c (see fuse_internal.h).
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
 * them, or start one. A join that would create a cycle between kernels is refused. A reduction that
 * starts no kernel otherwise and reads, at the point, roots of an elementwise kernel of its source shape
 * X takes that kernel over (its reduction epilogue): the maps become the kernel's sides, stored by its
 * first REDUCE phase as it folds each point, so a value that is both an output and reduced (amp's g32
 * and any(~isfinite(g32))) is written once and never read back.
 *
 * Bounds (so that one evaluation of any size compiles and schedules in near-linear time): before
 * placement, every ELEM/CAST cone is bounded to FUSE_MAX_NODES nodes and a buffer budget by "cutting"
 * (realizing into a temp) its largest operand where needed; a join is refused when the kernel would
 * exceed FUSE_MAX_NODES distinct nodes or its buffer budget (FUSE_MAX_BUFS, fewer for high ranks so the
 * GPU parameter block stays within 4 KB); an elementwise kernel is looked for among at most
 * FUSE_MAX_TRIES open kernels of the node's shape; the cycle check gives up (refusing the join) after
 * visiting FUSE_MAX_REACH kernels. None of these changes a result, only how it is split into kernels;
 * below the bounds the plan is what the unbounded greedy would make. Every walk is iterative.
 *
 * Scans (IR_SCAN) are realized like reductions over their one axis, in a kernel of their own (no other
 * reduction joins it): the cone of the source is the scan phase's value (the producer is fused into the
 * scan's loads), and an elementwise consumer of the scan's shape that reads it at the same point joins
 * as a store of the scan phase (the consumer is fused into the scan's store).
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

#include "passes/fuse_internal.h"

static LoomStatus order_kernels(Fuser *f) {
  FusionPlan *p = f->p;
  int32_t nk = p->nkernel;
  if (nk == 0) return LOOM_OK;
  Arena *a = f->m->arena;
  int32_t *newid = arena_alloc(a, (size_t)nk * sizeof *newid);
  int32_t *indeg = arena_alloc(a, (size_t)nk * sizeof *indeg);
  int32_t *ustart = arena_alloc(a, (size_t)(nk + 1) * sizeof *ustart);
  int32_t *heap = arena_alloc(a, (size_t)nk * sizeof *heap);
  FusedKernel *out = arena_alloc(a, (size_t)nk * sizeof *out);
  int64_t nedge = 0;
  for (int32_t k = 0; k < nk; k++) nedge += p->kernels[k].ndep;
  int32_t *users = arena_alloc(a, (size_t)(nedge > 0 ? nedge : 1) * sizeof *users);
  if (!newid || !indeg || !ustart || !heap || !out || !users)
    return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  /* users of each kernel (compressed rows) */
  for (int32_t k = 0; k < nk; k++) {
    indeg[k] = p->kernels[k].ndep;
    for (int j = 0; j < p->kernels[k].ndep; j++) ustart[p->kernels[k].deps[j] + 1]++;
  }
  for (int32_t k = 0; k < nk; k++) ustart[k + 1] += ustart[k];
  for (int32_t k = 0; k < nk; k++) newid[k] = ustart[k]; /* fill cursors (newid reused) */
  for (int32_t k = 0; k < nk; k++)
    for (int j = 0; j < p->kernels[k].ndep; j++) users[newid[p->kernels[k].deps[j]]++] = k;
  int32_t nheap = 0;
  for (int32_t k = 0; k < nk; k++) {
    newid[k] = -1;
    if (indeg[k] == 0) heap[nheap++] = k; /* increasing: already a heap */
  }
  for (int32_t done = 0; done < nk; done++) {
    if (nheap == 0) return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: cyclic kernel dependencies");
    int32_t pick = heap[0];
    heap[0] = heap[--nheap];
    for (int32_t i = 0;;) { /* sift down */
      int32_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < nheap && heap[l] < heap[m]) m = l;
      if (r < nheap && heap[r] < heap[m]) m = r;
      if (m == i) break;
      int32_t t = heap[i];
      heap[i] = heap[m];
      heap[m] = t;
      i = m;
    }
    newid[pick] = done;
    out[done] = p->kernels[pick];
    for (int32_t u = ustart[pick]; u < ustart[pick + 1]; u++) {
      int32_t k = users[u];
      if (--indeg[k] != 0) continue;
      int32_t i = nheap++; /* sift up */
      heap[i] = k;
      while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
        int32_t t = heap[i];
        heap[i] = heap[(i - 1) / 2];
        heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
      }
    }
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
    int32_t leaf = i < 2 ? pass_fuse_call_leaf_of(f, tops[i]) : pass_fuse_leaf_of(f->g, tops[i]);
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
  for (int32_t k = 0; k < p->nkernel; k++) {
    LoomStatus st = LOOM_OK;
    if (p->kernels[k].is_call) st = mark_call_temps(f, k);
    if (p->kernels[k].is_scatter || p->kernels[k].is_scan) st = pass_fuse_mark_scatter_temps(f, k);
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
    LoomStatus st = pass_fuse_collect_reads(f, x);
    if (st != LOOM_OK) return st;
    for (int i = 0; i < f->nreads; i++) {
      int32_t leaf = pass_fuse_leaf_of(f->g, f->reads[i]);
      int32_t kw = pass_fuse_producer_of(f, f->reads[i]);
      if (kw < 0) continue;
      ReadInfo r;
      if (kw == k) {
        if ((st = pass_resolve_read(f->g, K, final_space, f->reads[i], &r, f->d)) != LOOM_OK) return st;
        if (r.is_acc || r.is_local) continue;
        return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: kernel %d reads %%%d, which it writes", k, leaf);
      }
      p->needs_temp[leaf] = 1;
    }
  }
  return LOOM_OK;
}

/* Bounds every ELEM/CAST cone to FUSE_MAX_NODES nodes and the buffers a kernel of its rank may read
 * (buf_cap less its stores), in node order (operands first): a cone over the budget gets its largest
 * operand cone cut off, i.e. realized as a boundary node (stored into a temp by its own kernel and
 * loaded by its users). Sizes are upper bounds: the sum of the operands' sizes, counted exactly
 * (one walk) only when the sum is over the budget. */
static LoomStatus bound_cones(Fuser *f, const uint8_t *live, uint8_t *realized) {
  IrGraph *g = f->g;
  int32_t nn = g->nnodes;
  int32_t *cn = arena_alloc(f->m->arena, (size_t)(nn > 0 ? nn : 1) * sizeof *cn);
  int32_t *cb = arena_alloc(f->m->arena, (size_t)(nn > 0 ? nn : 1) * sizeof *cb);
  if (!cn || !cb) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory (%d nodes)", nn);
  for (int32_t x = 0; x < nn; x++) {
    const IrNode *n = &g->nodes[x];
    if (!live[x] || !pass_cone_kind(n->kind)) continue;
    int32_t bufs = pass_fuse_buf_cap(n->ndim + 1) - 2;
    for (;;) {
      int64_t en = 1, eb = 0, big_size = -1;
      int32_t big = -1;
      for (int i = 0; i < pass_fuse_elem_arity(n); i++) {
        int32_t sx = n->src[i];
        const IrNode *sn = &g->nodes[sx];
        if (pass_cone_kind(sn->kind) && !f->p->is_stop[sx]) {
          en += cn[sx];
          eb += cb[sx];
          if (cn[sx] + cb[sx] > big_size) {
            big_size = cn[sx] + cb[sx];
            big = sx;
          }
        } else if (!pass_fuse_is_const_read(g, sx)) {
          eb++;
        }
      }
      if (en > FUSE_MAX_NODES || eb > bufs) { /* the sums overcount shared nodes: count exactly */
        f->nreads = f->ncone = 0;
        f->gen++;
        LoomStatus st = pass_fuse_walk_cone(f, x);
        if (st != LOOM_OK) return st;
        en = f->ncone;
        eb = 0;
        for (int32_t i = 0; i < f->nreads; i++) eb += !pass_fuse_is_const_read(g, f->reads[i]);
      }
      if (en <= FUSE_MAX_NODES && eb <= bufs) {
        cn[x] = (int32_t)en;
        cb[x] = (int32_t)eb;
        break;
      }
      LOOM_ASSERT(f->d, big >= 0);
      realized[big] = 1; /* the cut: a boundary from now on */
      f->p->is_stop[big] = 1;
    }
  }
  return LOOM_OK;
}

LoomStatus pass_fuse(IrModule *m, Diag *d) {
  LoomStatus st = pass_fuse_copy_call_roots(m, d);
  if (st != LOOM_OK) return st;
  IrGraph *g = m->graph;
  int32_t nn = g->nnodes > 0 ? g->nnodes : 1;
  FusionPlan *p = arena_alloc(m->arena, sizeof *p);
  Fuser f;
  memset(&f, 0, sizeof f);
  f.m = m;
  f.g = g;
  f.p = p;
  f.d = d;
  if (!p) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  p->nnodes = g->nnodes;
  p->kernel_of = arena_alloc(m->arena, (size_t)nn * sizeof *p->kernel_of);
  p->is_root = arena_alloc(m->arena, (size_t)nn);
  p->needs_temp = arena_alloc(m->arena, (size_t)nn);
  p->is_stop = arena_alloc(m->arena, (size_t)nn);
  p->call_operand = arena_alloc(m->arena, (size_t)nn);
  uint8_t *realized = arena_alloc(m->arena, (size_t)nn);
  uint8_t *live = arena_alloc(m->arena, (size_t)nn);
  int32_t *epi_root = arena_alloc(m->arena, (size_t)nn * sizeof *epi_root);
  int32_t *epi_of = arena_alloc(m->arena, (size_t)nn * sizeof *epi_of);
  CallEpilogue *epi = arena_alloc(m->arena, (size_t)nn * sizeof *epi);
  f.stamp = arena_alloc(m->arena, (size_t)nn * sizeof *f.stamp);
  f.has_user = arena_alloc(m->arena, (size_t)nn);
  f.is_out = arena_alloc(m->arena, (size_t)nn);
  if (!p->kernel_of || !p->is_root || !p->needs_temp || !p->is_stop || !p->call_operand || !realized || !live ||
      !epi_root || !epi_of || !epi || !f.stamp || !f.has_user || !f.is_out)
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory (%d nodes)", nn);
  for (int32_t x = 0; x < g->nnodes; x++) p->kernel_of[x] = epi_of[x] = -1;
  for (int32_t i = 0; i < m->nroots; i++) {
    LOOM_ASSERT(d, m->roots[i] >= 0 && m->roots[i] < g->nnodes);
    p->is_root[m->roots[i]] = 1;
    p->is_stop[m->roots[i]] = 1;
    f.is_out[m->roots[i]] = 1;
    realized[m->roots[i]] = 1;
  }
  /* Realized: roots plus every REDUCE/COPY/MATMUL reachable from them, the call operands, and the cuts
   * that bound the cones. */
  for (int32_t i = 0; i < m->nroots; i++) live[m->roots[i]] = 1;
  for (int32_t x = g->nnodes - 1; x >= 0; x--) {
    if (!live[x]) continue;
    const IrNode *n = &g->nodes[x];
    if (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_MATMUL || n->kind == IR_SCAN || n->kind == IR_SCATTER)
      realized[x] = 1;
    if (pass_fuse_movement_kind(n->kind) && g->nodes[n->src[0]].kind == IR_GATHER) /* a leaf of a view: in memory */
      realized[n->src[0]] = 1;
    for (int i = 0; i < 3; i++)
      if (n->src[i] >= 0 && n->src[i] < x) {
        live[n->src[i]] = 1;
        f.has_user[n->src[i]] = 1;
      }
  }
  for (int32_t x = 0; x < g->nnodes; x++)
    if (realized[x] && g->nodes[x].kind == IR_MATMUL) pass_fuse_plan_operands(&f, x, realized);
  if ((st = bound_cones(&f, live, realized)) != LOOM_OK) return st;
  if ((st = pass_fuse_plan_epilogues(&f, realized, epi_root, epi)) != LOOM_OK) return st;
  for (int32_t x = 0; x < g->nnodes; x++)
    if (epi_root[x] >= 0) epi_of[epi_root[x]] = x;
  for (int32_t x = 0; x < g->nnodes; x++) {
    if (!realized[x]) continue;
    if (g->nodes[x].kind == IR_MATMUL) {
      CallEpilogue none = {.bias = -1, .c = -1, .alpha = 1.0, .act = KACT_NONE};
      st = pass_fuse_place_call(&f, x, epi_root[x] >= 0 ? epi_root[x] : x, epi_root[x] >= 0 ? &epi[x] : &none);
    } else if (epi_of[x] >= 0) {
      st = pass_fuse_place_epilogue(&f, x, epi_of[x]);
    } else {
      if ((st = pass_fuse_collect_reads(&f, x)) != LOOM_OK) return st;
      if (g->nodes[x].kind == IR_REDUCE || g->nodes[x].kind == IR_SCAN) st = pass_fuse_place_reduce(&f, x);
      else if (g->nodes[x].kind == IR_SCATTER) st = pass_fuse_place_scatter(&f, x);
      else st = pass_fuse_place_other(&f, x);
    }
    if (st != LOOM_OK) return st;
  }
  if ((st = order_kernels(&f)) != LOOM_OK) return st;
  if ((st = mark_temps(&f)) != LOOM_OK) return st;
  m->plan = p;
  return LOOM_OK;
}
