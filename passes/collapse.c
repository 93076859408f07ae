/* collapse.c: pass_collapse, per kernel: drop size-1 dims and merge contiguous adjacent dims.
 *
 * Contract. Requires: m->schedule from pass_lower. Guarantees: for every kernel, no dim of size 1
 * remains except where needed to keep ndim >= 1 (a 0-d elementwise kernel becomes shape [1]) and at
 * least one R dim in a reduction; adjacent dims d, d+1 of the same class (both kept or both reduced)
 * are merged when every buffer has strides[d] == strides[d+1] * shape[d+1]; layouts are recomputed
 * from the new strides, so the same expression on sizes of the same layout class prints the same
 * kernel text. Values and the row-major order of R (argmin/argmax indices) are unchanged.
 */
#include <string.h>

#include "passes/passes.h"

static void collapse_kernel(SchedKernel *sk) {
  KernelIr *k = sk->ir;
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
  for (int b = 0; b < nb; b++) {
    memset(k->bufs[b].layout, 0, sizeof k->bufs[b].layout);
    for (int j = 0; j < n; j++) {
      if (shape[j] == 1) sk->bind[b].strides[j] = 0;
      int64_t s = sk->bind[b].strides[j];
      k->bufs[b].layout[j] = (uint8_t)(s == 0 ? KL_ZERO : s == 1 ? KL_ONE : KL_ANY);
    }
  }
}

LoomStatus pass_collapse(IrModule *m, Diag *d) {
  LOOM_ASSERT(d, m->schedule != NULL);
  for (int32_t i = 0; i < m->schedule->nkernel; i++) {
    LOOM_ASSERT(d, m->schedule->kernels[i].ir != NULL);
    if (m->schedule->kernels[i].ir->call) continue; /* a call's dims mean [B..., M, N, K] */
    collapse_kernel(&m->schedule->kernels[i]);
  }
  return LOOM_OK;
}
