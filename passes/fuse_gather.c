/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_gather.c: pass_fuse's placement of IR_SCATTER nodes (gathers need none: they are cone nodes, see
 * pass_cone_kind, fused with their index's producers and their consumers like any elementwise op).
 *
 * A scatter x is realized by two kernels. The first stores x's base (src[0]) into x's buffer: x is placed
 * as any other realized node whose stored value is the base (pass_fuse_stored_value), so the base's cone
 * is computed there and the kernel may be shared with other nodes of its shape; a PUT scatter (ir.h: the
 * base's elements are unspecified) has no such kernel. The second, a kernel of its own over the index's
 * shape (FusedKernel.is_scatter, never open to joins), computes the index (src[1]) and values (src[2])
 * cones and stores each value at its index; it depends on the first and becomes x's kernel, so every
 * reader of x runs after both.
 *
 * Stream compaction. When the index reads a scan at its own points (a scan kernel over the index's shape
 * P produces it: `where(m, cumsum(m) - 1, -1)`), the scatter's store joins that scan kernel as a store of
 * its KP_SCAN phase instead (the index cone reads the scan as KI_ACC, the running value at the point):
 * one kernel reads the mask's producers, scans, and writes each kept value at its rank, so the scan never
 * reaches memory (on GPUs the single-pass look-back scan, codegen/lower_scan_lookback.c, runs it). The
 * base's kernel still runs first; the join is refused where it would make a cycle or exceed a budget.
 * Python's compaction (_indexing.py _compact) scatters with PUT: its outputs are read only where written,
 * so the one scan kernel is all it runs (no fill of the full-size results first).
 */
#include <string.h>

#include "passes/fuse_internal.h"

bool pass_fuse_movement_kind(int kind) { return ir_is_movement(kind); }

/* f->reads and f->cone: what the scatter kernel of x reads (the index's and the values' cones). */
static LoomStatus scatter_reads(Fuser *f, int32_t x) {
  const IrNode *n = &f->g->nodes[x];
  f->nreads = f->ncone = 0;
  f->gen++;
  LoomStatus st = LOOM_OK;
  for (int i = 1; i < 3 && st == LOOM_OK; i++) {
    int32_t s = n->src[i];
    if (f->stamp[s] == f->gen) continue;
    if (pass_cone_kind(f->g->nodes[s].kind) && !f->p->is_stop[s]) {
      st = pass_fuse_walk_cone(f, s);
    } else {
      f->stamp[s] = f->gen;
      st = pass_fuse_push_i32(f, &f->reads, &f->nreads, &f->capreads, s);
    }
  }
  return st;
}

/* *out: the scan kernel x's scatter store may join (f->reads: its index and values reads), or -1: a
 * kernel over the index's shape that produces one of the reads as its scan, read at the point (KI_ACC),
 * other than the base's kernel (base_k; -1: none) and not depending on it (the base is stored first). */
static LoomStatus find_scan_kernel(Fuser *f, int32_t x, int32_t base_k, int32_t *out) {
  *out = -1;
  const IrNode *ix = &f->g->nodes[f->g->nodes[x].src[1]];
  for (int i = 0; i < f->nreads; i++) {
    int32_t k = pass_fuse_producer_of(f, f->reads[i]);
    if (k < 0 || (base_k >= 0 && k == base_k) || !f->p->kernels[k].is_scan || f->kfull[k]) continue;
    const FusedKernel *K = &f->p->kernels[k];
    if (!pass_fuse_same_dims(K->xndim, K->xshape, ix->ndim, ix->shape)) continue;
    bool ok, cyc;
    LoomStatus st = pass_fuse_can_join(f, k, false, x, &ok);
    if (st != LOOM_OK) return st;
    if (!ok) continue;
    int32_t budget = FUSE_MAX_REACH;
    f->kgen++;
    if (base_k >= 0 && (st = pass_fuse_reaches(f, base_k, k, &budget, &cyc)) != LOOM_OK) return st;
    if (base_k >= 0 && cyc) continue;
    *out = k;
    return LOOM_OK;
  }
  return LOOM_OK;
}

/* x becomes a scatter store of kernel k (its reads in f->reads): k depends on the reads' kernels and on
 * base_k (the base is stored first; -1: no base kernel), and maps x. */
static LoomStatus add_scatter(Fuser *f, int32_t x, int32_t base_k, int32_t k) {
  FusionPlan *p = f->p;
  LoomStatus st;
  p->kernel_of[x] = k;
  if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
  FusedKernel *K = &p->kernels[k];
  bool have = base_k < 0;
  for (int j = 0; j < K->ndep; j++) have |= K->deps[j] == base_k;
  if (!have) {
    if ((st = pass_fuse_push_i32(f, &K->deps, &K->ndep, &K->cap_dep, base_k)) != LOOM_OK) return st;
    f->kusers[base_k]++;
  }
  K = &p->kernels[k];
  return pass_fuse_push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
}

LoomStatus pass_fuse_place_scatter(Fuser *f, int32_t x) {
  FusionPlan *p = f->p;
  LoomStatus st = LOOM_OK;
  int32_t base_k = -1, k;
  if (f->g->nodes[x].op != IR_SCATTER_PUT) { /* the base, stored into x's buffer (reads in f->reads) */
    if ((st = pass_fuse_place_other(f, x)) != LOOM_OK) return st;
    base_k = p->kernel_of[x];
  }
  if ((st = scatter_reads(f, x)) != LOOM_OK) return st;
  if ((st = find_scan_kernel(f, x, base_k, &k)) != LOOM_OK) return st;
  if (k >= 0) return add_scatter(f, x, base_k, k); /* a store of the scan's KP_SCAN phase */
  if ((st = pass_fuse_new_kernel(f, &k)) != LOOM_OK) return st;
  const IrNode *ix = &f->g->nodes[f->g->nodes[x].src[1]];
  FusedKernel *K = &p->kernels[k];
  K->xndim = K->ndim = K->nkeep = ix->ndim;
  memcpy(K->xshape, ix->shape, sizeof K->xshape);
  memcpy(K->shape, ix->shape, sizeof K->shape);
  for (int a = 0; a < ix->ndim; a++) K->perm[a] = a;
  K->is_scatter = true;
  return add_scatter(f, x, base_k, k);
}

LoomStatus pass_fuse_mark_scatter_temps(Fuser *f, int32_t k) {
  const FusedKernel *K = &f->p->kernels[k];
  LOOM_ASSERT(f->d, !K->is_scatter || (K->nmap == 1 && f->g->nodes[K->maps[0]].kind == IR_SCATTER));
  for (int32_t m = 0; m < K->nmap; m++) {
    int32_t x = K->maps[m];
    if (f->g->nodes[x].kind != IR_SCATTER) continue; /* a scan kernel's other maps: fuse.c's mark_temps */
    LoomStatus st = scatter_reads(f, x);
    if (st != LOOM_OK) return st;
    for (int32_t i = 0; i < f->nreads; i++) {
      int32_t leaf = pass_fuse_leaf_of(f->g, f->reads[i]);
      int32_t kw = pass_fuse_producer_of(f, f->reads[i]);
      if (kw < 0) continue;
      if (kw == k) {
        ReadInfo r; /* a scan kernel's scatter reads the scan at its point */
        if ((st = pass_resolve_read(f->g, K, false, f->reads[i], &r, f->d)) != LOOM_OK) return st;
        if (K->is_scan && r.is_acc) continue;
        return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: scatter kernel %d reads %%%d, which it writes", k, leaf);
      }
      f->p->needs_temp[leaf] = 1;
    }
  }
  return LOOM_OK;
}
