/* SPDX-License-Identifier: Apache-2.0 */
/* collapse.c: pass_collapse, per kernel: drop size-1 dims and merge contiguous adjacent dims.
 *
 * Contract. Requires: m->schedule from pass_lower. Guarantees: for every kernel, no dim of size 1
 * remains except where needed to keep ndim >= 1 (a 0-d elementwise kernel becomes shape [1]) and at
 * least one R dim in a reduction; adjacent dims d, d+1 of the same class (both kept or both reduced)
 * are merged when every buffer has strides[d] == strides[d+1] * shape[d+1]; layouts are recomputed
 * from the new strides, so the same expression on sizes of the same layout class prints the same
 * kernel text. Values and the row-major order of R (argmin/argmax indices) are unchanged; dims that
 * memory runs through backwards may be walked from their last point (flip_dims.c).
 * A reduction whose phases only pick (min, max, any, all; argmin/argmax on leading R dims) drops the
 * R dims along which every buffer has stride 0 (the same value repeated: picking among copies is
 * the value itself; a dim of size 0 is never dropped: it makes the reduction empty, and empty
 * arrays have zero strides), so a reduction over a huge broadcast input runs in no time. Last, a kernel
 * of more than PASS_MAX_POINTS points (only reachable through stride-0 inputs, which take no
 * memory) is refused with LOOM_ERR_UNSUPPORTED: it could not finish in any useful time.
 * Before merging, an elementwise kernel storing into a permuted layout iterates in that layout's
 * memory order (order_by_output).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* Which R dims of a reduction kernel may be dropped when constant: 0 none, 1 any, 2 leading only. */
static int droppable_r_dims(const KernelIr *k) {
  if (k->nkeep >= k->ndim || k->snippet) return 0;
  int mode = 1;
  for (int32_t p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_MAP || ph->kind == KP_SCAN) return 0; /* a scan stores at every r */
    if (ph->kind != KP_REDUCE) continue;
    switch (ph->reduce_op) {
    case LOOM_REDUCE_MIN: case LOOM_REDUCE_MAX: case LOOM_REDUCE_ANY: case LOOM_REDUCE_ALL: break;
    case LOOM_REDUCE_ARGMIN: case LOOM_REDUCE_ARGMAX: mode = 2; break;
    default: return 0;
    }
  }
  for (int32_t i = 0; i < k->ninstr; i++) {
    int kind = k->instrs[i].kind;
    if (kind == KI_REDSIZE || kind == KI_INDEX || kind == KI_NPOINTS || kind == KI_USER) return 0;
  }
  return mode;
}

static void drop_constant_r_dims(SchedKernel *sk) {
  const KernelIr *k = sk->ir;
  int mode = droppable_r_dims(k);
  for (int i = 0; i < k->ndim; i++)
    if (sk->shape[i] == 0) return; /* an empty reduction: its value is the identity (all() is True) */
  for (int i = k->nkeep; mode && i < k->ndim; i++) {
    if (sk->shape[i] <= 1) continue; /* a dim of 0 is no repetition: the reduction is empty */
    bool constant = true;
    for (int32_t b = 0; b < k->nbuf && constant; b++) constant = sk->bind[b].strides[i] == 0;
    if (constant) sk->shape[i] = 1;
    else if (mode == 2) break; /* argmin/argmax: a later dim's index would need the earlier ones */
  }
}

static bool output_order_enabled(void) {
  static int slot = -1;
  int r = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv("LOOM_MAP_OUTPUT_ORDER");
    r = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, r, __ATOMIC_RELAXED);
  }
  return r != 0;
}

static int64_t iabs64(int64_t v) { return v < 0 ? -v : v; }

/* An elementwise kernel whose first output is not stride +-1 along the last dim but is along another
 * (a store into a permuted layout: astype(order='K') of a transposed view writes HWC memory through
 * a CHW index space) iterates its dims in that output's memory order: dims sorted by the output's
 * |stride|, largest first (stable; stride-0 dims of the output keep their place ahead). The dims then
 * merge where memory allows, so a copy between two arrays of one permuted layout becomes one
 * contiguous run. Point order is free in an elementwise kernel without KI_INDEX / KI_NPOINTS /
 * KI_USER (every other value depends on the point only through the buffers' strides).
 * LOOM_MAP_OUTPUT_ORDER=0 turns it off (A/B). */
static void order_by_output(SchedKernel *sk) {
  const KernelIr *k = sk->ir;
  int nd = k->ndim;
  if (nd < 2 || k->nkeep != nd || k->snippet || !output_order_enabled()) return;
  for (int32_t p = 0; p < k->nphase; p++)
    if (k->phases[p].kind != KP_MAP) return;
  for (int32_t i = 0; i < k->ninstr; i++) {
    int kind = k->instrs[i].kind;
    if (kind == KI_INDEX || kind == KI_NPOINTS || kind == KI_USER) return;
  }
  int out = -1;
  for (int32_t b = 0; b < k->nbuf && out < 0; b++)
    if (k->bufs[b].is_output) out = b;
  if (out < 0) return;
  const int64_t *os = sk->bind[out].strides;
  int unit = -1;
  for (int i = 0; i < nd; i++)
    if (sk->shape[i] > 1 && iabs64(os[i]) == 1) unit = i;
  int last = nd - 1;
  while (last > 0 && sk->shape[last] <= 1) last--;
  if (unit < 0 || unit == last) return;
  int perm[LOOM_MAX_RANK];
  for (int i = 0; i < nd; i++) perm[i] = i;
  for (int i = 1; i < nd; i++) { /* insertion sort: stable, by |stride| descending (size-1 dims stay put) */
    int v = perm[i], j = i;
    int64_t sv = sk->shape[v] > 1 ? iabs64(os[v]) : INT64_MAX;
    while (j > 0) {
      int u = perm[j - 1];
      int64_t su = sk->shape[u] > 1 ? iabs64(os[u]) : INT64_MAX;
      if (sv == INT64_MAX || su == INT64_MAX || su >= sv) break;
      perm[j] = u;
      j--;
    }
    perm[j] = v;
  }
  int64_t shape[LOOM_MAX_RANK];
  for (int i = 0; i < nd; i++) shape[i] = sk->shape[perm[i]];
  for (int i = 0; i < nd; i++) sk->shape[i] = shape[i];
  for (int32_t b = 0; b < k->nbuf; b++) {
    int64_t st[LOOM_MAX_RANK];
    for (int i = 0; i < nd; i++) st[i] = sk->bind[b].strides[perm[i]];
    for (int i = 0; i < nd; i++) sk->bind[b].strides[i] = st[i];
  }
}

static void collapse_kernel(SchedKernel *sk) {
  KernelIr *k = sk->ir;
  drop_constant_r_dims(sk);
  order_by_output(sk);
  int nd = k->ndim, nkeep = k->nkeep, nb = k->nbuf;
  bool reduction = nkeep < nd;
  int64_t shape[LOOM_MAX_RANK];
  int keep[LOOM_MAX_RANK], n = 0, nk = 0;
  int last_r = -1;
  for (int i = nkeep; i < nd; i++)
    if (sk->shape[i] != 1) last_r = i;
  for (int i = 0; i < nd; i++) {
    bool is_r = i >= nkeep;
    bool need = sk->shape[i] != 1 || (reduction && last_r < 0 && i == nd - 1);
    if (!need) continue;
    keep[n++] = i;
    if (!is_r) nk++;
  }
  /* new dims: the kept ones, or [1] when none */
  for (int b = 0; b < nb; b++) {
    int64_t st[LOOM_MAX_RANK] = {0};
    for (int j = 0; j < n; j++) st[j] = sk->bind[b].strides[keep[j]];
    memcpy(sk->bind[b].strides, st, sizeof st);
  }
  for (int j = 0; j < n; j++) shape[j] = sk->shape[keep[j]];
  if (n == 0) {
    n = 1;
    shape[0] = 1;
    nk = 1; /* elementwise (a reduction always keeps an R dim) */
  }
  /* merge from the right so a merged dim can merge again with its left neighbour */
  for (int d = n - 2; d >= 0; d--) {
    bool same_class = (d < nk) == (d + 1 < nk);
    if (!same_class) continue;
    bool ok = true;
    for (int b = 0; b < nb && ok; b++)
      if (sk->bind[b].strides[d] != sk->bind[b].strides[d + 1] * shape[d + 1]) ok = false;
    if (!ok) continue;
    shape[d] *= shape[d + 1];
    for (int b = 0; b < nb; b++) {
      sk->bind[b].strides[d] = sk->bind[b].strides[d + 1];
      for (int j = d + 1; j < n - 1; j++) sk->bind[b].strides[j] = sk->bind[b].strides[j + 1];
      sk->bind[b].strides[n - 1] = 0;
    }
    for (int j = d + 1; j < n - 1; j++) shape[j] = shape[j + 1];
    n--;
    if (d < nk) nk--;
  }
  memset(sk->shape, 0, sizeof sk->shape);
  memcpy(sk->shape, shape, (size_t)n * sizeof *shape);
  k->ndim = n;
  k->nkeep = nk;
  pass_flip_dims(sk); /* reversed views walked forwards where the order is free (flip_dims.c) */
  for (int b = 0; b < nb; b++) {
    memset(k->bufs[b].layout, 0, sizeof k->bufs[b].layout);
    for (int j = 0; j < n; j++) {
      if (shape[j] == 1) sk->bind[b].strides[j] = 0;
      int64_t s = sk->bind[b].strides[j];
      k->bufs[b].layout[j] = (uint8_t)ir_layout_of_stride(s, j == n - 1);
    }
  }
}

LoomStatus pass_collapse(IrModule *m, Diag *d) {
  LOOM_ASSERT(d, m->schedule != NULL);
  for (int32_t i = 0; i < m->schedule->nkernel; i++) {
    SchedKernel *sk = &m->schedule->kernels[i];
    LOOM_ASSERT(d, sk->ir != NULL);
    if (sk->ir->call) continue; /* a call's dims mean [B..., M, N, K] */
    collapse_kernel(sk);
    int64_t points = ir_numel(sk->ir->ndim, sk->shape);
    if (points < 0 || points > PASS_MAX_POINTS)
      return diag_error(d, LOOM_ERR_UNSUPPORTED,
                        "kernel %s would run %lld points (more than 2^50): reducing a broadcast (stride-0) "
                        "array this large cannot finish; reduce a smaller array, or use min/max/any/all, "
                        "which skip repeated values", sk->ir->name, (long long)points);
  }
  return LOOM_OK;
}
