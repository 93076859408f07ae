/* SPDX-License-Identifier: Apache-2.0 */
/* flip_dims.c: pass_flip_dims, a step of pass_collapse: reversed views walked forwards.
 *
 * A kernel visits its iteration space in row-major order, each dim from 0 up. Where a dim runs through
 * memory backwards (x[::-1], x[:, ::-2], np.flip) and the order of the points along it does not matter,
 * the dim is walked from its last point instead: every buffer's binding offset moves to that point and its
 * stride along the dim changes sign. The values at every point are the same; what changes is the order of
 * the visits, so only kernels whose result does not depend on it are flipped:
 *   - elementwise kernels without KI_INDEX (the linear index), user snippets or scatter stores (the last
 *     of several writes to one element wins), and no scans;
 *   - along an R dim, only reductions whose combiners commute (sum, prod, mean, min, max, any, all; the
 *     host's float sums are reassociated in blocks anyway), never argmin / argmax (the first of equal
 *     values, by index) or user reductions.
 * A dim is flipped when (a) no buffer runs forwards along it and one runs backwards (NumPy's nditer does
 * the same: memory is then read in address order, which the hardware prefetchers and interleaved loads
 * prefer), or (b) it is the innermost dim and flipping leaves fewer buffers with a run-time stride class
 * (ir_layout_of_stride: KL_ANY) there, or as many but fewer of them backwards: x[:, ::-2] * 2 + 1 becomes
 * a stride-2 read (an interleaved group: wide loads and shuffles) and a reversed store (KL_NEG1: a vector
 * permute), where -2 was a run-time stride that LLVM vectorizes only for stride 1 (the scalar loop ran);
 * x[:, ::-7] * 2 + 1 a forward read at stride 7. LOOM_FLIP_DIMS=0 turns it off
 * (A/B timings; the flipped kernels print other layouts, so they have their own cache keys).
 */
#include <stdlib.h>

#include "passes/passes.h"

static bool flip_enabled(void) {
  static int slot = -1;
  int r = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv("LOOM_FLIP_DIMS");
    r = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, r, __ATOMIC_RELAXED);
  }
  return r != 0;
}

/* Whether the kernel's result is independent of the order of its points: false when not; *r_dims: also
 * along its R dims. */
static bool order_free(const KernelIr *k, bool *r_dims) {
  if (k->snippet || k->call) return false;
  for (int32_t i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_INDEX || k->instrs[i].kind == KI_USER) return false;
  for (int32_t s = 0; s < k->nstore; s++)
    if (k->stores[s].scatter) return false;
  *r_dims = true;
  for (int32_t p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_SCAN) return false;
    if (ph->kind != KP_REDUCE) continue;
    switch (ph->reduce_op) {
    case LOOM_REDUCE_SUM: case LOOM_REDUCE_PROD: case LOOM_REDUCE_MEAN: case LOOM_REDUCE_MIN:
    case LOOM_REDUCE_MAX: case LOOM_REDUCE_ANY: case LOOM_REDUCE_ALL: break;
    default: *r_dims = false;
    }
  }
  return true;
}

/* A cost of the innermost dim d as bound (sign +1) or flipped (-1): buffers whose stride there has no
 * constant class, times 2, plus those of them that run backwards (the tie-break: a run-time stride read
 * backwards, x[:, ::-7], ran 3-8x slower than the same read forwards on this Zen 4; a reversed store is
 * a vector permute). */
static int runtime_strides(const SchedKernel *sk, int d, int sign) {
  int n = 0;
  for (int32_t b = 0; b < sk->ir->nbuf; b++) {
    int64_t s = sign * sk->bind[b].strides[d];
    if (ir_layout_of_stride(s, true) == KL_ANY) n += s < 0 ? 3 : 2;
  }
  return n;
}

void pass_flip_dims(SchedKernel *sk) {
  const KernelIr *k = sk->ir;
  bool r_dims = false;
  if (!flip_enabled() || !order_free(k, &r_dims)) return;
  for (int d = 0; d < k->ndim; d++) {
    if (sk->shape[d] <= 1 || (d >= k->nkeep && !r_dims)) continue;
    bool backwards = false, forwards = false;
    for (int32_t b = 0; b < k->nbuf; b++) {
      backwards |= sk->bind[b].strides[d] < 0;
      forwards |= sk->bind[b].strides[d] > 0;
    }
    if (!backwards) continue;
    bool flip = !forwards || (d == k->ndim - 1 && runtime_strides(sk, d, -1) < runtime_strides(sk, d, 1));
    if (!flip) continue;
    for (int32_t b = 0; b < k->nbuf; b++) {
      sk->bind[b].offset += (sk->shape[d] - 1) * sk->bind[b].strides[d];
      sk->bind[b].strides[d] = -sk->bind[b].strides[d];
    }
  }
}
