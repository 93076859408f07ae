/* SPDX-License-Identifier: Apache-2.0 */
/* complex_parts.c: pass_complex_parts: complex inputs read only for one part are read as float views.
 *
 * Contract. Requires: m->schedule from pass_lower (bindings per iteration dim, layouts not yet final:
 * pass_collapse recomputes them). Guarantees: a complex input buffer whose one KI_LOAD feeds only
 * `real` (or only `imag`) instructions becomes a buffer of the part's dtype (float32 for complex64,
 * float64 for complex128) bound to the same memory at element offset 2o (+1 for imag) with every stride
 * doubled; its load yields the part and the real / imag instructions become `real` of a real value (the
 * value itself, codegen's identity). Values are unchanged.
 *
 * Why: z.real.sum() inside a kernel (a @loom.fuse function, or any fused expression of a complex input)
 * loaded the whole complex value and kept one half. LLVM's vectorizer saw a float read at 8-byte steps
 * through a GEP of {float, float} whose index it could not prove free of wrapping, so it emitted a
 * masked gather (about one element a cycle on Zen 4): 0.57 ms for z.real.sum() of 2^20 complex64 against
 * 0.10 for z.sum(). As a float view the read is a stride-2 load, the constant layout class that the host
 * turns into wide loads and shuffles (lower_host_strided.c), as NumPy's own z.real view is. Buffers with
 * other readers (KI_GATHER, KI_OFFSET, a raw snippet argument), outputs and loads used whole stay complex.
 * LOOM_COMPLEX_PARTS=0 turns the rewrite off (A/B timings; the kernels print other dtypes, so their own
 * cache keys).
 */
#include <stdlib.h>

#include "passes/passes.h"

static bool parts_enabled(void) {
  static int slot = -1;
  int r = __atomic_load_n(&slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv("LOOM_COMPLEX_PARTS");
    r = s && *s ? atoi(s) != 0 : 1;
    __atomic_store_n(&slot, r, __ATOMIC_RELAXED);
  }
  return r != 0;
}

/* The one KI_LOAD of buffer b, or -1 when b is read otherwise or loaded more than once. */
static int32_t only_load(const KernelIr *k, int32_t b) {
  int32_t load = -1;
  for (int32_t i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if ((in->kind == KI_GATHER || in->kind == KI_OFFSET) && in->buf == b) return -1;
    if (in->kind != KI_LOAD || in->buf != b) continue;
    if (load >= 0) return -1;
    load = i;
  }
  return load;
}

/* LOOM_OP_REAL or LOOM_OP_IMAG when every use of instruction x is that one op, else -1. */
static int part_of_uses(const KernelIr *k, int32_t x) {
  int op = -1;
  for (int32_t i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    const OpInfo *info = in->kind == KI_ELEM ? op_info((LoomOp)in->op) : NULL;
    int nsrc = info ? info->arity : in->kind == KI_CAST || in->kind == KI_GATHER || in->kind == KI_USER_OUT ? 1 : 0;
    for (int j = 0; j < nsrc; j++) {
      if (in->src[j] != x) continue;
      if (in->kind != KI_ELEM || (in->op != LOOM_OP_REAL && in->op != LOOM_OP_IMAG)) return -1;
      if (op >= 0 && op != in->op) return -1;
      op = in->op;
    }
  }
  for (int32_t p = 0; p < k->nphase; p++)
    if ((k->phases[p].kind == KP_REDUCE || k->phases[p].kind == KP_SCAN) && k->phases[p].value == x) return -1;
  for (int32_t s = 0; s < k->nstore; s++) {
    const KStore *st = &k->stores[s];
    if (st->value == x || (st->scatter && (st->index == x || st->limit == x))) return -1;
  }
  return op;
}

static void rewrite_kernel(SchedKernel *sk) {
  KernelIr *k = sk->ir;
  if (k->snippet || k->call) return;
  for (int32_t b = 0; b < k->nbuf; b++) {
    LoomDType dt = (LoomDType)k->bufs[b].dtype;
    if (k->bufs[b].is_output || (dt != LOOM_COMPLEX64 && dt != LOOM_COMPLEX128)) continue;
    if (sk->bind[b].kind == SB_INDEX) continue;
    int32_t load = only_load(k, b);
    int op = load >= 0 ? part_of_uses(k, load) : -1;
    if (op < 0) continue;
    LoomDType part = dt == LOOM_COMPLEX64 ? LOOM_FLOAT32 : LOOM_FLOAT64;
    k->bufs[b].dtype = (uint8_t)part;
    k->instrs[load].dtype = (uint8_t)part;
    for (int32_t i = 0; i < k->ninstr; i++) {
      KInstr *in = &k->instrs[i];
      if (in->kind == KI_ELEM && (in->op == LOOM_OP_REAL || in->op == LOOM_OP_IMAG) && in->src[0] == load)
        in->op = LOOM_OP_REAL; /* real of a real: the value itself */
    }
    SchedBinding *bd = &sk->bind[b];
    bd->offset = 2 * bd->offset + (op == LOOM_OP_IMAG ? 1 : 0);
    for (int32_t d = 0; d < k->ndim; d++) bd->strides[d] *= 2;
  }
}

LoomStatus pass_complex_parts(IrModule *m, Diag *d) {
  LOOM_ASSERT(d, m->schedule != NULL);
  if (!parts_enabled()) return LOOM_OK;
  for (int32_t i = 0; i < m->schedule->nkernel; i++) rewrite_kernel(&m->schedule->kernels[i]);
  return LOOM_OK;
}
