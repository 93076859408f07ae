/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_place.c: the grouping decisions of pass_fuse: which kernel a realized node joins. A reduction
 * (or scan) starts a kernel, joins a sibling reduction over the same (shape, axes), or takes over the
 * elementwise kernel of its source shape whose roots it reads (its reduction epilogue); any other node
 * joins a reduction kernel as a MAP or FINAL store, or an open elementwise kernel of its shape (looked
 * up per shape in a hash of ShapeBuckets), or starts one.
 *
 * Contract: called in node order (topological) with x's reads in f->reads; sets p->kernel_of[x] and
 * records the join (deps, budget). Legality comes from fuse_join.c.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/fuse_internal.h"

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

bool pass_fuse_same_dims(int na, const int64_t *a, int nb, const int64_t *b) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (a[i] != b[i]) return false;
  return true;
}

/* Whether a reduction kernel is splittable along R (one REDUCE phase, FINAL stores only): the GPU's
 * and the host's split strategies, which a second phase would take away. */
static bool splittable(const FusedKernel *K) { return K->nreduce == 1 && K->nmap == 0; }

/* Whether reduction node r may share a walk over memory with a sibling: not an arg-reduction, not complex.
 * The GPU folds such independent REDUCE phases in one walk (codegen/gpu_joint.c) and splits that kernel
 * along R as it would split one phase; the host's column and row splits run any number of phases. */
static bool walk_shareable(const IrGraph *g, int32_t r) {
  static int slot = -1; /* LOOM_FUSE_SHARED_WALK=0: long splittable kernels take no such sibling (A/B timings) */
  int on = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (on < 0) {
    const char *s = getenv("LOOM_FUSE_SHARED_WALK");
    on = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, on, __ATOMIC_RELAXED);
  }
  if (!on) return false;
  const IrNode *n = &g->nodes[r];
  if (n->kind != IR_REDUCE || n->op == LOOM_REDUCE_ARGMIN || n->op == LOOM_REDUCE_ARGMAX) return false;
  return !dtype_is_complex(n->dtype) && !dtype_is_complex(g->nodes[n->src[0]].dtype);
}

/* A sibling of x: an open reduction kernel over the same (X, axes) that x does not read: one pass over
 * a shared input serves both (mean and var of one array, the row sums of a*b, a*a and b*b), and reductions
 * of disjoint inputs that a later expression combines (sum(u*u), then sum(v*v), then sum((u-v)**2) of a
 * Poincare distance) end in one kernel whose FINAL phase combines them, whatever order they were written
 * in (a shared input was required until 2026-12-07: u was read by two kernels there). A splittable kernel takes a sibling only where no split would
 * run anyway: short R (< FUSE_SIBLING_SPLIT_R points), or rows (the innermost axis reduced) with at
 * least FUSE_SIBLING_MIN_O kept points, or where both reductions may share a walk (walk_shareable: the
 * min and max of a column scaling, nanmean's sum and count; the GPU then reads the input once and splits
 * R all the same); a multi-phase kernel takes it always (it walks R once per phase from the same rows
 * either way).
 * The last FUSE_MAX_TRIES reduction kernels are tried, newest first; -1: none. */
static LoomStatus find_sibling(Fuser *f, int32_t x, int32_t *out) {
  *out = -1;
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  if (n->kind != IR_REDUCE) return LOOM_OK; /* a scan has a kernel of its own */
  for (int32_t j = f->nredk - 1; j >= 0 && j >= f->nredk - FUSE_MAX_TRIES; j--) {
    int32_t k = f->redks[j];
    const FusedKernel *K = &f->p->kernels[k];
    if (!K->is_reduction || K->is_scan || K->axes != n->axes || !pass_fuse_same_dims(K->xndim, K->xshape, s->ndim, s->shape) || f->kfull[k])
      continue;
    bool reads_k = false;
    for (int i = 0; i < f->nreads && !reads_k; i++) reads_k = pass_fuse_producer_of(f, f->reads[i]) == k;
    if (reads_k) continue;
    if (splittable(K)) {
      int64_t no = 1, nr = 1;
      for (int d = 0; d < K->ndim; d++) *(d < K->nkeep ? &no : &nr) *= K->shape[d];
      bool rows = K->xndim > 0 && (K->axes >> (K->xndim - 1) & 1u);
      if (nr >= FUSE_SIBLING_SPLIT_R && (!rows || no < FUSE_SIBLING_MIN_O) &&
          !(walk_shareable(f->g, K->reduces[0]) && walk_shareable(f->g, x)))
        continue;
    }
    bool ok;
    LoomStatus st = pass_fuse_can_join(f, k, false, x, &ok);
    if (st != LOOM_OK) return st;
    if (ok) {
      *out = k;
      return LOOM_OK;
    }
  }
  return LOOM_OK;
}

/* Makes K a reduction kernel over the space of reduction (or scan) x: its source shape X, kept axes then
 * reduced ones. */
static LoomStatus set_reduce_space(Fuser *f, FusedKernel *K, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
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
  return LOOM_OK;
}

/* The reduction epilogue of a map: reduction x reduces, or reads at the point, roots of an elementwise
 * kernel k over its own source shape X (y = f(x), then y.sum(axis); amp's g32 = g * s, then
 * any(~isfinite(g32))).
 * Then k becomes x's reduction kernel and its maps its sides (FusedKernel.sides): the first REDUCE
 * phase stores them as it folds each point, so the values are written once and never read back.
 * Legal when every read of x that k produces is such a root (pass_local_map: the node itself, no
 * view, of a compute dtype), k's maps are all elementwise nodes, and the join fits k's budget without
 * a cycle; otherwise k is left as it was. *out: k, or -1. */
static LoomStatus take_map_kernel(Fuser *f, int32_t x, int32_t *out) {
  *out = -1;
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  FusionPlan *p = f->p;
  if (n->kind != IR_REDUCE) return LOOM_OK;
  /* candidates: the kernel of the reduced node itself when it is a root (its cone is the reduction's
   * value: y and y.sum()), then the producers of the reads (amp: g32 under ~isfinite) */
  for (int i = -1; i < f->nreads; i++) {
    int32_t k = i < 0 ? (pass_cone_kind(s->kind) ? p->kernel_of[n->src[0]] : -1) : pass_fuse_producer_of(f, f->reads[i]);
    if (k < 0) continue;
    FusedKernel *K = &p->kernels[k];
    if (K->is_reduction || K->is_scan || K->is_call || K->is_scatter || K->nmap == 0 || K->nside != 0 ||
        !pass_fuse_same_dims(K->xndim, K->xshape, s->ndim, s->shape))
      continue;
    bool cone_maps = true;
    for (int32_t j = 0; j < K->nmap && cone_maps; j++) cone_maps = pass_cone_kind(f->g->nodes[K->maps[j]].kind);
    if (!cone_maps) continue;
    FusedKernel saved = *K;
    uint8_t saved_full = f->kfull[k];
    LoomStatus st = set_reduce_space(f, K, x);
    if (st != LOOM_OK) return st;
    K->sides = K->maps;
    K->nside = K->nmap;
    K->cap_side = K->cap_map;
    K->maps = NULL;
    K->nmap = K->cap_map = 0;
    bool ok;
    if ((st = pass_fuse_can_join(f, k, false, x, &ok)) != LOOM_OK) return st;
    if (!ok) {
      *K = saved;
      f->kfull[k] = saved_full;
      continue;
    }
    p->kernel_of[x] = k;
    if ((st = pass_fuse_push_i32(f, &f->redks, &f->nredk, &f->capredk, k)) != LOOM_OK) return st;
    if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
    K = &p->kernels[k];
    *out = k;
    return pass_fuse_push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  return LOOM_OK;
}

LoomStatus pass_fuse_place_reduce(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  const IrNode *s = &f->g->nodes[n->src[0]];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = pass_fuse_leaf_of(f->g, f->reads[i]);
    int32_t k = pass_fuse_producer_of(f, f->reads[i]);
    if (k < 0 || f->g->nodes[leaf].kind != IR_REDUCE || n->kind == IR_SCAN) continue;
    FusedKernel *K = &p->kernels[k];
    if (!K->is_reduction || K->is_scan || K->axes != n->axes || !pass_fuse_same_dims(K->xndim, K->xshape, s->ndim, s->shape))
      continue;
    bool ok;
    if ((st = pass_fuse_can_join(f, k, false, x, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
    K = &p->kernels[k];
    return pass_fuse_push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  int32_t k;
  if ((st = find_sibling(f, x, &k)) != LOOM_OK) return st;
  if (k >= 0) {
    p->kernel_of[x] = k;
    if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
    FusedKernel *K = &p->kernels[k];
    return pass_fuse_push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
  }
  if ((st = take_map_kernel(f, x, &k)) != LOOM_OK) return st;
  if (k >= 0) return LOOM_OK;
  if ((st = pass_fuse_new_kernel(f, &k)) != LOOM_OK) return st;
  if ((st = pass_fuse_push_i32(f, &f->redks, &f->nredk, &f->capredk, k)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  if ((st = set_reduce_space(f, K, x)) != LOOM_OK) return st;
  p->kernel_of[x] = k;
  if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
  K = &p->kernels[k];
  return pass_fuse_push_i32(f, &K->reduces, &K->nreduce, &K->cap_reduce, x);
}

LoomStatus pass_fuse_place_other(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  FusionPlan *p = f->p;
  LoomStatus st;
  for (int i = 0; i < f->nreads; i++) {
    int32_t leaf = pass_fuse_leaf_of(f->g, f->reads[i]);
    int32_t k = pass_fuse_producer_of(f, f->reads[i]);
    int lk = f->g->nodes[leaf].kind;
    if (k < 0 || (lk != IR_REDUCE && lk != IR_SCAN) || !p->kernels[k].is_reduction) continue;
    FusedKernel *K = &p->kernels[k];
    bool final_space = !pass_fuse_same_dims(K->xndim, K->xshape, n->ndim, n->shape);
    if (K->is_scan && final_space) continue; /* a scan's consumers join it at its points only */
    bool ok;
    if ((st = pass_fuse_can_join(f, k, final_space, x, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
    K = &p->kernels[k];
    if (final_space) return pass_fuse_push_i32(f, &K->finals, &K->nfinal, &K->cap_final, x);
    return pass_fuse_push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
  }
  /* the open elementwise kernels of x's shape, lowest index first */
  ShapeBucket *b = bucket_of(f, n->ndim, n->shape, -1);
  int tries = 0;
  for (int32_t j = b ? b->first : 0; b && j < b->n && tries < FUSE_MAX_TRIES; j++) {
    int32_t k = b->ks[j];
    if (f->kfull[k] || p->kernels[k].is_reduction) { /* full, or taken by a reduction (take_map_kernel) */
      if (j == b->first) b->first++;
      continue;
    }
    tries++;
    bool reads_k = false;
    for (int i = 0; i < f->nreads; i++)
      if (pass_fuse_producer_of(f, f->reads[i]) == k && !pass_local_map(f->g, &p->kernels[k], false, f->reads[i]))
        reads_k = true;
    for (int i = 0; i < f->ncone && !reads_k; i++) { /* a gather reads its data anywhere: from memory */
      const IrNode *c = &f->g->nodes[f->cone[i]];
      if (c->kind == IR_GATHER && pass_fuse_producer_of(f, c->src[0]) == k) reads_k = true;
    }
    if (reads_k || !pass_fuse_fits_budget(f, k, x)) continue;
    bool ok;
    if ((st = pass_fuse_no_cycle(f, k, &ok)) != LOOM_OK) return st;
    if (!ok) continue;
    p->kernel_of[x] = k;
    if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
    FusedKernel *K = &p->kernels[k];
    return pass_fuse_push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
  }
  int32_t k;
  if ((st = pass_fuse_new_kernel(f, &k)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  K->xndim = K->ndim = K->nkeep = n->ndim;
  memcpy(K->xshape, n->shape, sizeof K->xshape);
  memcpy(K->shape, n->shape, sizeof K->shape);
  for (int a = 0; a < n->ndim; a++) K->perm[a] = a;
  p->kernel_of[x] = k;
  if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
  K = &p->kernels[k];
  if ((st = pass_fuse_push_i32(f, &K->maps, &K->nmap, &K->cap_map, x)) != LOOM_OK) return st;
  b = bucket_of(f, n->ndim, n->shape, k);
  if (!b) return diag_error(f->d, LOOM_ERR_OUT_OF_MEMORY, "fuse: out of memory");
  return pass_fuse_push_i32(f, &b->ks, &b->n, &b->cap, k);
}

/* Kahn's algorithm, lowest index first (a binary heap of the ready kernels); renumbers kernels and
 * kernel_of. */
