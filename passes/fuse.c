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

#include "passes/passes.h"

enum {
  FUSE_MAX_NODES = 512, /* ELEM/CAST nodes (plus reductions) per kernel */
  FUSE_MAX_BUFS = 64,   /* buffers per kernel (reads and stores) */
  FUSE_GPU_WORDS = 500, /* 8-byte words of a GPU kernel's parameter block we allow (4 KB limit) */
  FUSE_MAX_TRIES = 32,  /* open elementwise kernels of a shape tried before starting a new one */
  FUSE_MAX_REACH = 1024, /* kernels one cycle check may visit before it refuses the join */
  FUSE_SIBLING_MIN_O = 512,  /* kept points from which a one-phase row reduction takes a sibling */
  FUSE_SIBLING_SPLIT_R = 8192 /* reduced points below which no target splits R (any kernel takes one) */
};

/* A set of (kernel, node, tag) keys: which read tops and cone nodes a kernel already has. */
typedef struct KeySet {
  uint64_t *slot; /* key + 1, 0 = empty */
  int64_t cap, n;
} KeySet;

/* Per shape: the elementwise kernels of that shape still open to joins, in creation order. */
typedef struct ShapeBucket {
  int32_t kernel0; /* a kernel of the shape (-1: empty slot) */
  int32_t *ks, n, cap, first;
} ShapeBucket;

typedef struct Fuser {
  IrModule *m;
  IrGraph *g;
  FusionPlan *p;
  Diag *d;
  int32_t *stamp, gen; /* per node: visited mark of the current cone walk */
  int32_t *reads, nreads, capreads;
  int32_t *cone, ncone, capcone; /* the ELEM/CAST nodes of the current cone walk */
  int32_t *stack, capstack;      /* explicit stack of the walks */
  int32_t *kstamp, kgen;         /* per kernel: visited mark of reaches() */
  int32_t kstamp_cap;
  /* budgets */
  int32_t *knodes, *kbufs, *kusers; /* per kernel: nodes, buffers, kernels that depend on it */
  uint8_t *kfull;                   /* per kernel: refused a join for its budget */
  KeySet members;
  ShapeBucket *buckets; /* open addressing on the shape */
  int32_t nbucket_cap, nbucket_used;
  uint8_t *has_user; /* per node: read by another live node (a root that needs a temp too) */
  uint8_t *is_out;   /* per node: one of m->roots */
  int32_t *redks, nredk, capredk; /* the reduction kernels, in creation order (sibling joins) */
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
  return p->is_stop[x] && (n->kind == IR_ELEM || n->kind == IR_CAST);
}

static int elem_arity(const IrNode *n) {
  if (n->kind == IR_CAST) return 1;
  const OpInfo *info = op_info((LoomOp)n->op);
  return info ? info->arity : 0;
}

/* The cone of `start`: a depth-first walk, operands left to right, on an explicit stack; reads
 * (leaves, chains, boundaries) are appended to f->reads and cone nodes to f->cone in first-visit
 * order. */
static LoomStatus walk(Fuser *f, int32_t start) {
  int32_t nstack = 0;
  LoomStatus st = push_i32(f, &f->stack, &nstack, &f->capstack, start);
  while (st == LOOM_OK && nstack > 0) {
    int32_t x = f->stack[--nstack];
    if (f->stamp[x] == f->gen) continue;
    f->stamp[x] = f->gen;
    const IrNode *n = &f->g->nodes[x];
    if ((n->kind == IR_ELEM || n->kind == IR_CAST) && (x == start || !is_stop(f->p, n, x))) {
      if ((st = push_i32(f, &f->cone, &f->ncone, &f->capcone, x)) != LOOM_OK) return st;
      for (int i = elem_arity(n) - 1; i >= 0 && st == LOOM_OK; i--)
        if (f->stamp[n->src[i]] != f->gen) st = push_i32(f, &f->stack, &nstack, &f->capstack, n->src[i]);
      continue;
    }
    st = push_i32(f, &f->reads, &f->nreads, &f->capreads, x);
  }
  return st;
}

/* The node whose value realized node x stores (its cone's top). */
static int32_t value_of(const IrGraph *g, int32_t x) {
  const IrNode *n = &g->nodes[x];
  return (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_SCAN) ? n->src[0] : x;
}

/* Fills f->reads with the tops read by x's cone (a product: its two operands). */
static LoomStatus collect_reads(Fuser *f, int32_t x) {
  f->nreads = 0;
  f->ncone = 0;
  f->gen++;
  const IrNode *n = &f->g->nodes[x];
  if (n->kind == IR_MATMUL) {
    LoomStatus st = push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[0]);
    if (st == LOOM_OK && n->src[1] != n->src[0]) st = push_i32(f, &f->reads, &f->nreads, &f->capreads, n->src[1]);
    return st;
  }
  return walk(f, value_of(f->g, x));
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

/* Whether kernel `from` depends (transitively) on kernel `to`: an iterative depth-first search over
 * deps, sharing f->kstamp/kgen with the other searches of one cycle check (the target is the same,
 * so a kernel explored once need not be explored again). Past FUSE_MAX_REACH visited kernels it
 * answers true: the caller then refuses a join, which is always safe. */
static LoomStatus reaches(Fuser *f, int32_t from, int32_t to, int32_t *budget, bool *out) {
  *out = false;
  if (f->kusers[to] == 0) return LOOM_OK; /* nothing depends on `to` */
  int32_t nstack = 0;
  LoomStatus st = push_i32(f, &f->stack, &nstack, &f->capstack, from);
  while (st == LOOM_OK && nstack > 0) {
    int32_t k = f->stack[--nstack];
    if (k == to || --*budget < 0) {
      *out = true;
      return LOOM_OK;
    }
    if (f->kstamp[k] == f->kgen) continue;
    f->kstamp[k] = f->kgen;
    const FusedKernel *K = &f->p->kernels[k];
    for (int i = 0; i < K->ndep && st == LOOM_OK; i++)
      if (f->kstamp[K->deps[i]] != f->kgen) st = push_i32(f, &f->stack, &nstack, &f->capstack, K->deps[i]);
  }
  return st;
}

/* *ok: no kernel x's cone reads (other than k itself) depends on k. */
static LoomStatus no_cycle(Fuser *f, int32_t k, bool *ok) {
  *ok = true;
  f->kgen++;
  int32_t budget = FUSE_MAX_REACH;
  for (int i = 0; i < f->nreads; i++) {
    int32_t kd = producer(f, f->reads[i]);
    if (kd < 0 || kd == k) continue;
    bool r;
    LoomStatus st = reaches(f, kd, k, &budget, &r);
    if (st != LOOM_OK) return st;
    if (r) {
      *ok = false;
      return LOOM_OK;
    }
  }
  return LOOM_OK;
}

static LoomStatus grow_kernel_arrays(Fuser *f, int32_t ncap) {
  Arena *a = f->m->arena;
  int32_t n = f->p->nkernel;
  FusedKernel *nk = arena_alloc(a, (size_t)ncap * sizeof *nk);
  int32_t *ns = arena_alloc(a, (size_t)ncap * sizeof *ns);
  int32_t *nn = arena_alloc(a, (size_t)ncap * sizeof *nn);
  int32_t *nb = arena_alloc(a, (size_t)ncap * sizeof *nb);
  int32_t *nu = arena_alloc(a, (size_t)ncap * sizeof *nu);
  uint8_t *nf = arena_alloc(a, (size_t)ncap);
  if (!nk || !ns || !nn || !nb || !nu || !nf) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  if (n) {
    memcpy(nk, f->p->kernels, (size_t)n * sizeof *nk);
    memcpy(ns, f->kstamp, (size_t)n * sizeof *ns);
    memcpy(nn, f->knodes, (size_t)n * sizeof *nn);
    memcpy(nb, f->kbufs, (size_t)n * sizeof *nb);
    memcpy(nu, f->kusers, (size_t)n * sizeof *nu);
    memcpy(nf, f->kfull, (size_t)n);
  }
  f->p->kernels = nk;
  f->p->cap = ncap;
  f->kstamp = ns;
  f->kstamp_cap = ncap;
  f->knodes = nn;
  f->kbufs = nb;
  f->kusers = nu;
  f->kfull = nf;
  return LOOM_OK;
}

static LoomStatus new_kernel(Fuser *f, int32_t *out) {
  FusionPlan *p = f->p;
  if (p->nkernel == p->cap) {
    LoomStatus st = grow_kernel_arrays(f, p->cap ? p->cap * 2 : 8);
    if (st != LOOM_OK) return st;
  }
  int32_t k = p->nkernel;
  memset(&p->kernels[k], 0, sizeof p->kernels[0]);
  f->kstamp[k] = 0;
  f->knodes[k] = f->kbufs[k] = f->kusers[k] = 0;
  f->kfull[k] = 0;
  *out = p->nkernel++;
  return LOOM_OK;
}

/* ---- budgets ------------------------------------------------------------------------------------------ */

/* Buffers a kernel of rank nd may have: FUSE_MAX_BUFS, and few enough for its GPU parameter block
 * (nd sizes, then per buffer an address and nd strides, then 4 words). */
static int32_t buf_cap(int nd) {
  int32_t gpu = (FUSE_GPU_WORDS - nd) / (1 + nd);
  return gpu < FUSE_MAX_BUFS ? gpu : FUSE_MAX_BUFS;
}

static uint64_t key_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

static bool keyset_has(const KeySet *s, uint64_t key) {
  if (s->cap == 0) return false;
  uint64_t mask = (uint64_t)s->cap - 1;
  for (uint64_t i = key_hash(key) & mask; s->slot[i]; i = (i + 1) & mask)
    if (s->slot[i] == key + 1) return true;
  return false;
}

static LoomStatus keyset_add(Fuser *f, KeySet *s, uint64_t key) {
  if ((s->n + 1) * 2 > s->cap) {
    int64_t ncap = s->cap ? s->cap * 2 : 1024;
    uint64_t *ns = arena_alloc(f->m->arena, (size_t)ncap * sizeof *ns);
    if (!ns) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory (%lld keys)", (long long)ncap);
    uint64_t mask = (uint64_t)ncap - 1;
    for (int64_t i = 0; i < s->cap; i++) {
      if (!s->slot[i]) continue;
      uint64_t j = key_hash(s->slot[i] - 1) & mask;
      while (ns[j]) j = (j + 1) & mask;
      ns[j] = s->slot[i];
    }
    s->slot = ns;
    s->cap = ncap;
  }
  uint64_t mask = (uint64_t)s->cap - 1, i = key_hash(key) & mask;
  for (; s->slot[i]; i = (i + 1) & mask)
    if (s->slot[i] == key + 1) return LOOM_OK;
  s->slot[i] = key + 1;
  s->n++;
  return LOOM_OK;
}

static uint64_t member_key(int32_t k, int32_t node, int tag) {
  return ((uint64_t)(uint32_t)k << 32) | ((uint64_t)(uint32_t)node << 1) | (uint64_t)tag;
}

static bool is_const_read(const IrGraph *g, int32_t top) { return pass_const_of(g, top) >= 0; }

/* Buffers x stores: its output (a root) and its temp (when another node reads it). */
static int32_t store_cost(const Fuser *f, int32_t x) {
  int32_t c = f->is_out[x] + f->has_user[x];
  return c > 0 ? c : 1;
}

/* What x (its cone in f->cone, reads in f->reads) adds to kernel k: distinct nodes and buffers. */
static void join_cost(const Fuser *f, int32_t k, int32_t x, int32_t *dn, int32_t *db) {
  int32_t n = f->g->nodes[x].kind == IR_REDUCE ? 1 : 0, b = store_cost(f, x);
  for (int32_t i = 0; i < f->ncone; i++)
    if (k < 0 || !keyset_has(&f->members, member_key(k, f->cone[i], 0))) n++;
  for (int32_t i = 0; i < f->nreads; i++) {
    int32_t t = f->reads[i];
    if (is_const_read(f->g, t) || (k >= 0 && producer(f, t) == k)) continue;
    if (k < 0 || !keyset_has(&f->members, member_key(k, t, 1))) b++;
  }
  *dn = n;
  *db = b;
}

static bool fits(Fuser *f, int32_t k, int32_t x) {
  int32_t dn, db;
  join_cost(f, k, x, &dn, &db);
  bool ok = f->knodes[k] + dn <= FUSE_MAX_NODES && f->kbufs[k] + db <= buf_cap(f->p->kernels[k].ndim);
  if (!ok) f->kfull[k] = 1;
  return ok;
}

/* Records x's cone and reads as members of kernel k (its budget). */
static LoomStatus commit_join(Fuser *f, int32_t k, int32_t x) {
  int32_t dn, db;
  join_cost(f, k, x, &dn, &db);
  f->knodes[k] += dn;
  f->kbufs[k] += db;
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < f->ncone && st == LOOM_OK; i++) st = keyset_add(f, &f->members, member_key(k, f->cone[i], 0));
  for (int32_t i = 0; i < f->nreads && st == LOOM_OK; i++)
    if (!is_const_read(f->g, f->reads[i])) st = keyset_add(f, &f->members, member_key(k, f->reads[i], 1));
  return st;
}

/* Can x (whose reads are in f->reads) be computed by kernel k in the given space? */
static LoomStatus can_join(Fuser *f, int32_t k, bool final_space, int32_t x, bool *ok) {
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
  if (!fits(f, k, x)) return LOOM_OK;
  return no_cycle(f, k, ok);
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
      f->kusers[kd]++;
    }
  }
  return LOOM_OK;
}

/* ---- open elementwise kernels per shape --------------------------------------------------------------- */

static uint64_t shape_hash(int nd, const int64_t *shape) {
  return ir_hash_bytes(shape, (size_t)nd * sizeof *shape, (uint64_t)nd);
}

/* The bucket of shape (nd, shape), or NULL when there is none; with claim >= 0 a missing one is
 * created for kernel `claim` (NULL only when out of memory). */
static ShapeBucket *bucket_of(Fuser *f, int nd, const int64_t *shape, int32_t claim) {
  if (claim >= 0 && (f->nbucket_used + 1) * 2 > f->nbucket_cap) {
    int32_t ncap = f->nbucket_cap ? f->nbucket_cap * 2 : 64;
    ShapeBucket *nb = arena_alloc(f->m->arena, (size_t)ncap * sizeof *nb);
    if (!nb) return NULL;
    for (int32_t i = 0; i < ncap; i++) nb[i].kernel0 = -1;
    for (int32_t i = 0; i < f->nbucket_cap; i++) {
      ShapeBucket *b = &f->buckets[i];
      if (b->kernel0 < 0) continue;
      const FusedKernel *K = &f->p->kernels[b->kernel0];
      uint32_t j = (uint32_t)shape_hash(K->xndim, K->xshape) & (uint32_t)(ncap - 1);
      while (nb[j].kernel0 >= 0) j = (j + 1) & (uint32_t)(ncap - 1);
      nb[j] = *b;
    }
    f->buckets = nb;
    f->nbucket_cap = ncap;
  }
  if (f->nbucket_cap == 0) return NULL;
  uint32_t mask = (uint32_t)f->nbucket_cap - 1;
  for (uint32_t i = (uint32_t)shape_hash(nd, shape) & mask;; i = (i + 1) & mask) {
    ShapeBucket *b = &f->buckets[i];
    if (b->kernel0 < 0) {
      if (claim < 0) return NULL;
      memset(b, 0, sizeof *b);
      b->kernel0 = claim;
      f->nbucket_used++;
      return b;
    }
    const FusedKernel *K = &f->p->kernels[b->kernel0];
    if (K->xndim == nd && memcmp(K->xshape, shape, (size_t)nd * sizeof *shape) == 0) return b;
  }
}

static bool same_dims(int na, const int64_t *a, int nb, const int64_t *b) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* Whether a reduction kernel is splittable along R (one REDUCE phase, FINAL stores only): the GPU's
 * and the host's split strategies, which a second phase would take away. */
static bool splittable(const FusedKernel *K) { return K->nreduce == 1 && K->nmap == 0; }

/* A sibling of x: an open reduction kernel over the same (X, axes) that x does not read but that
 * already reads one of x's inputs (mean and var of one array, the row sums of a*b, a*a and b*b), so
 * one pass over the input serves both. A splittable kernel takes a sibling only where no split would
 * run anyway: short R (< FUSE_SIBLING_SPLIT_R points), or rows (the innermost axis reduced) with at
 * least FUSE_SIBLING_MIN_O kept points; a multi-phase kernel takes it always (it walks R once per
 * phase from the same rows either way).
 * The last FUSE_MAX_TRIES reduction kernels are tried, newest first; -1: none. */
static LoomStatus find_sibling(Fuser *f, int32_t x, int32_t *out) {
  *out = -1;
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  if (n->kind != IR_REDUCE) return LOOM_OK; /* a scan has a kernel of its own */
  for (int32_t j = f->nredk - 1; j >= 0 && j >= f->nredk - FUSE_MAX_TRIES; j--) {
    int32_t k = f->redks[j];
    const FusedKernel *K = &f->p->kernels[k];
    if (!K->is_reduction || K->is_scan || K->axes != n->axes || !same_dims(K->xndim, K->xshape, s->ndim, s->shape) || f->kfull[k])
      continue;
    bool shares = false, reads_k = false;
    for (int i = 0; i < f->nreads; i++) {
      int32_t t = f->reads[i];
      if (producer(f, t) == k) reads_k = true;
      if (!is_const_read(f->g, t) && keyset_has(&f->members, member_key(k, t, 1))) shares = true;
    }
    if (!shares || reads_k) continue;
    if (splittable(K)) {
      int64_t no = 1, nr = 1;
      for (int d = 0; d < K->ndim; d++) *(d < K->nkeep ? &no : &nr) *= K->shape[d];
      bool rows = K->xndim > 0 && (K->axes >> (K->xndim - 1) & 1u);
      if (nr >= FUSE_SIBLING_SPLIT_R && (!rows || no < FUSE_SIBLING_MIN_O)) continue;
    }
    bool ok;
    LoomStatus st = can_join(f, k, false, x, &ok);
    if (st != LOOM_OK) return st;
    if (ok) {
      *out = k;
      return LOOM_OK;
    }
  }
  return LOOM_OK;
}

static LoomStatus place_reduce(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = leaf_of(f->g, f->reads[i]);
    int32_t k = producer(f, f->reads[i]);
    if (k < 0 || f->g->nodes[leaf].kind != IR_REDUCE || n->kind == IR_SCAN) continue;
    FusedKernel *K = &p->kernels[k];
    if (!K->is_reduction || K->is_scan || K->axes != n->axes || !same_dims(K->xndim, K->xshape, s->ndim, s->shape))
      continue;
    bool ok;
    if ((st = can_join(f, k, false, x, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
    K = &p->kernels[k];
    return push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  int32_t k;
  if ((st = find_sibling(f, x, &k)) != LOOM_OK) return st;
  if (k >= 0) {
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
    FusedKernel *K = &p->kernels[k];
    return push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  if ((st = new_kernel(f, &k)) != LOOM_OK) return st;
  if ((st = push_i32(f, &f->redks, &f->nredk, &f->capredk, k)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  K->is_reduction = true;
  K->is_scan = n->kind == IR_SCAN; /* a kernel of its own: nothing else reduces along its axis */
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
  if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
  K = &p->kernels[k];
  return push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
}

static LoomStatus place_other(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = leaf_of(f->g, f->reads[i]);
    int32_t k = producer(f, f->reads[i]);
    int lk = f->g->nodes[leaf].kind;
    if (k < 0 || (lk != IR_REDUCE && lk != IR_SCAN) || !p->kernels[k].is_reduction) continue;
    FusedKernel *K = &p->kernels[k];
    bool final_space = !same_dims(K->xndim, K->xshape, n->ndim, n->shape);
    if (K->is_scan && final_space) continue; /* a scan's consumers join it at its points only */
    bool ok;
    if ((st = can_join(f, k, final_space, x, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
    K = &p->kernels[k];
    if (final_space) return push_i32(f, &K->finals, &K->nfinal, &K->cap_final, x);
    return push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
  }
  /* the open elementwise kernels of x's shape, lowest index first */
  ShapeBucket *b = bucket_of(f, n->ndim, n->shape, -1);
  int tries = 0;
  for (int32_t j = b ? b->first : 0; b && j < b->n && tries < FUSE_MAX_TRIES; j++) {
    int32_t k = b->ks[j];
    if (f->kfull[k]) {
      if (j == b->first) b->first++;
      continue;
    }
    tries++;
    bool reads_k = false;
    for (int i = 0; i < f->nreads; i++)
      if (producer(f, f->reads[i]) == k) reads_k = true;
    if (reads_k || !fits(f, k, x)) continue;
    bool ok;
    if ((st = no_cycle(f, k, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
    FusedKernel *K = &p->kernels[k];
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
  if ((st = add_deps(f, k)) != LOOM_OK || (st = commit_join(f, k, x)) != LOOM_OK) return st;
  K = &p->kernels[k];
  if ((st = push_i32(f, &K->maps, &K->nmap, &K->cap_map, x)) != LOOM_OK) return st;
  b = bucket_of(f, n->ndim, n->shape, k);
  if (!b) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  return push_i32(f, &b->ks, &b->n, &b->cap, k);
}

/* Kahn's algorithm, lowest index first (a binary heap of the ready kernels); renumbers kernels and
 * kernel_of. */
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
    if (!live[x] || (n->kind != IR_ELEM && n->kind != IR_CAST)) continue;
    int32_t bufs = buf_cap(n->ndim + 1) - 2;
    for (;;) {
      int64_t en = 1, eb = 0, big_size = -1;
      int32_t big = -1;
      for (int i = 0; i < elem_arity(n); i++) {
        int32_t sx = n->src[i];
        const IrNode *sn = &g->nodes[sx];
        if ((sn->kind == IR_ELEM || sn->kind == IR_CAST) && !f->p->is_stop[sx]) {
          en += cn[sx];
          eb += cb[sx];
          if (cn[sx] + cb[sx] > big_size) {
            big_size = cn[sx] + cb[sx];
            big = sx;
          }
        } else if (!is_const_read(g, sx)) {
          eb++;
        }
      }
      if (en > FUSE_MAX_NODES || eb > bufs) { /* the sums overcount shared nodes: count exactly */
        f->nreads = f->ncone = 0;
        f->gen++;
        LoomStatus st = walk(f, x);
        if (st != LOOM_OK) return st;
        en = f->ncone;
        eb = 0;
        for (int32_t i = 0; i < f->nreads; i++) eb += !is_const_read(g, f->reads[i]);
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
      bool elementwise = !is_mm && g->nodes[x].kind != IR_REDUCE && g->nodes[x].kind != IR_SCAN;
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
    if (!have) {
      if ((st = push_i32(f, &K->deps, &K->ndep, &K->cap_dep, kd)) != LOOM_OK) return st;
      f->kusers[kd]++; /* reaches() skips kernels nobody depends on */
    }
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
    if (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_MATMUL || n->kind == IR_SCAN) realized[x] = 1;
    for (int i = 0; i < 3; i++)
      if (n->src[i] >= 0 && n->src[i] < x) {
        live[n->src[i]] = 1;
        f.has_user[n->src[i]] = 1;
      }
  }
  for (int32_t x = 0; x < g->nnodes; x++)
    if (realized[x] && g->nodes[x].kind == IR_MATMUL) plan_operands(&f, x, realized);
  if ((st = bound_cones(&f, live, realized)) != LOOM_OK) return st;
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
      if (g->nodes[x].kind == IR_REDUCE || g->nodes[x].kind == IR_SCAN) st = place_reduce(&f, x);
      else st = place_other(&f, x);
    }
    if (st != LOOM_OK) return st;
  }
  if ((st = order_kernels(&f)) != LOOM_OK) return st;
  if ((st = mark_temps(&f)) != LOOM_OK) return st;
  m->plan = p;
  return LOOM_OK;
}
