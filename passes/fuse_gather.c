/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_gather.c: pass_fuse's placement of IR_SCATTER nodes (gathers need none: they are cone nodes, see
 * pass_cone_kind, fused with their index's producers and their consumers like any elementwise op).
 *
 * A scatter x is realized by two kernels. The first stores x's base (src[0]) into x's buffer: x is placed
 * as any other realized node whose stored value is the base (pass_fuse_stored_value), so the base's cone
 * is computed there and the kernel may be shared with other nodes of its shape. The second, a kernel of
 * its own over the index's shape (FusedKernel.is_scatter, never open to joins), computes the index
 * (src[1]) and values (src[2]) cones and stores each value at its index; it depends on the first and
 * becomes x's kernel, so every reader of x runs after both.
 */
#include <string.h>

#include "passes/fuse_internal.h"

bool pass_fuse_movement_kind(int kind) {
  return kind == IR_BROADCAST || kind == IR_RESHAPE || kind == IR_PERMUTE || kind == IR_SLICE;
}

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

LoomStatus pass_fuse_place_scatter(Fuser *f, int32_t x) {
  FusionPlan *p = f->p;
  LoomStatus st = pass_fuse_place_other(f, x); /* the base, stored into x's buffer (reads in f->reads) */
  if (st != LOOM_OK) return st;
  int32_t base_k = p->kernel_of[x], k;
  if ((st = scatter_reads(f, x)) != LOOM_OK || (st = pass_fuse_new_kernel(f, &k)) != LOOM_OK) return st;
  const IrNode *ix = &f->g->nodes[f->g->nodes[x].src[1]];
  FusedKernel *K = &p->kernels[k];
  K->xndim = K->ndim = K->nkeep = ix->ndim;
  memcpy(K->xshape, ix->shape, sizeof K->xshape);
  memcpy(K->shape, ix->shape, sizeof K->shape);
  for (int a = 0; a < ix->ndim; a++) K->perm[a] = a;
  K->is_scatter = true;
  p->kernel_of[x] = k;
  if ((st = pass_fuse_add_deps(f, k)) != LOOM_OK || (st = pass_fuse_commit_join(f, k, x)) != LOOM_OK) return st;
  K = &p->kernels[k];
  bool have = false;
  for (int j = 0; j < K->ndep; j++) have |= K->deps[j] == base_k;
  if (!have) {
    if ((st = pass_fuse_push_i32(f, &K->deps, &K->ndep, &K->cap_dep, base_k)) != LOOM_OK) return st;
    f->kusers[base_k]++;
  }
  K = &p->kernels[k];
  return pass_fuse_push_i32(f, &K->maps, &K->nmap, &K->cap_map, x);
}

LoomStatus pass_fuse_mark_scatter_temps(Fuser *f, int32_t k) {
  const FusedKernel *K = &f->p->kernels[k];
  LOOM_ASSERT(f->d, K->nmap == 1 && f->g->nodes[K->maps[0]].kind == IR_SCATTER);
  LoomStatus st = scatter_reads(f, K->maps[0]);
  if (st != LOOM_OK) return st;
  for (int32_t i = 0; i < f->nreads; i++) {
    int32_t leaf = pass_fuse_leaf_of(f->g, f->reads[i]);
    int32_t kw = pass_fuse_producer_of(f, f->reads[i]);
    if (kw < 0) continue;
    if (kw == k) return diag_error(f->d, LOOM_ERR_INTERNAL, "fuse: scatter kernel %d reads %%%d, which it writes", k, leaf);
    f->p->needs_temp[leaf] = 1;
  }
  return LOOM_OK;
}
