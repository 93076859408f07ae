/* SPDX-License-Identifier: Apache-2.0 */
/* moments_plan.c: which REDUCE phases of a kernel the one-pass variance folds into phase 0's walk, for
 * every target (gpu_moments.c, host_moments.c: the walks; each target has its own switch).
 *
 * A REDUCE phase p > 0 qualifies when it sums (h - c)^2 (or (h - c) ** 2) in float32 or float64, where h
 * reads no accumulator and c is uniform over R: constants, parameters, the R size and phase 0's result
 * (a variance's mean). Phase 0's walk then gathers the shifted moments (n, mean, M2) of h, and p's value
 * is M2 + n (mean - c)^2 without a pass of its own. Instructions come in dependency order, so one
 * forward sweep marks what is uniform and what is free of accumulators.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

void cg_onepass_plan(const KernelIr *k, CgMomPlan *plan) {
  memset(plan, 0, sizeof *plan);
  if (!k || k->snippet || k->nkeep >= k->ndim || k->nphase < 2 || k->nphase > 32 ||
      k->phases[0].kind != KP_REDUCE || k->ninstr <= 0)
    return;
  /* per instruction: uniform over R (no load, no per-point value, accumulators of phase 0 only) and
   * free of accumulators; instructions come in dependency order */
  uint8_t *unif = calloc((size_t)k->ninstr, 1), *accfree = calloc((size_t)k->ninstr, 1);
  if (!unif || !accfree) {
    free(unif);
    free(accfree);
    return;
  }
  for (int32_t i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    bool u = in->kind == KI_CONST || in->kind == KI_PARAM || in->kind == KI_REDSIZE || in->kind == KI_NPOINTS ||
             in->kind == KI_ELEM || in->kind == KI_CAST || (in->kind == KI_ACC && in->phase == 0);
    bool f = in->kind != KI_ACC && in->kind != KI_USER && in->kind != KI_USER_OUT;
    int nsrc = in->kind == KI_ELEM ? 3 : in->kind == KI_CAST || in->kind == KI_GATHER ? 1 : 0;
    for (int j = 0; j < nsrc; j++) {
      int32_t s = in->src[j];
      if (s < 0) continue;
      if (s >= i) u = f = false;
      else {
        u = u && unif[s];
        f = f && accfree[s];
      }
    }
    unif[i] = u;
    accfree[i] = f;
  }
  for (int p = 1; p < k->nphase && plan->n < CG_MOM_MAX; p++) {
    const KPhase *ph = &k->phases[p];
    LoomDType t = (LoomDType)ph->acc_dtype;
    if (ph->kind != KP_REDUCE || ph->reduce_op != LOOM_REDUCE_SUM || (t != LOOM_FLOAT32 && t != LOOM_FLOAT64)) continue;
    if (ph->value < 0 || ph->value >= k->ninstr) continue;
    const KInstr *sq = &k->instrs[ph->value];
    if (sq->kind != KI_ELEM || sq->dtype != t || sq->src[0] < 0 || sq->src[0] >= ph->value) continue;
    /* d * d, or d ** 2 (a constant exponent: math_pow.c computes it as d * d) */
    bool square = sq->op == LOOM_OP_MUL && sq->src[0] == sq->src[1];
    if (sq->op == LOOM_OP_POW && sq->src[1] >= 0 && k->instrs[sq->src[1]].kind == KI_CONST)
      square = k->instrs[sq->src[1]].value.f == 2.0;
    if (!square) continue;
    const KInstr *d = &k->instrs[sq->src[0]];
    if (d->kind != KI_ELEM || d->op != LOOM_OP_SUB || d->dtype != t) continue;
    int32_t a = d->src[0], b = d->src[1], h = -1, c = -1;
    if (unif[b] && accfree[a]) h = a, c = b;
    else if (unif[a] && accfree[b]) h = b, c = a;
    if (h < 0 || k->instrs[h].dtype != t || k->instrs[c].dtype != t) continue;
    plan->phase[plan->n] = p;
    plan->h[plan->n] = h;
    plan->c[plan->n] = c;
    plan->t[plan->n] = (uint8_t)t;
    plan->bits |= 1u << p;
    plan->n++;
  }
  free(unif);
  free(accfree);
}
