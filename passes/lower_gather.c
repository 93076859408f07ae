/* SPDX-License-Identifier: Apache-2.0 */
/* lower_gather.c: pass_lower's part for data-dependent addressing: the value of an IR_GATHER inside a
 * kernel's cone (KI_GATHER) and the store of an IR_SCATTER's scatter kernel (a KStore with an index).
 *
 * Gather. The data's view at the gather's shape (src[0], stride 0 on the axis) is bound as any read; the
 * index, computed by the cone, becomes an element of the axis by the mode (ir.h IR_GATHER) with the
 * axis extent a kernel parameter (baked into wrap's modulo), and is multiplied by the data's axis stride
 * (src[2]'s view; another parameter): KI_GATHER loads the buffer at the point's offset plus that product.
 * Sizes and strides are parameters, so a new size or stride reuses the compiled kernel (wrap mode: a new
 * extent compiles anew). A gather from a constant is the constant; from an iota (arange) the offset
 * itself, no memory.
 *
 * Scatter. The index and values cones are computed at the point of the scatter kernel; the store goes to
 * the node's buffer (its outputs, which must be C-contiguous, and its temp) with zero strides, at the
 * index, guarded by 0 <= index < size (a parameter). PUT stores as SET (its base is only not written).
 */
#include <string.h>

#include "passes/lower_internal.h"

static LoomStatus elem(Lower *l, LoomOp op, LoomDType t, int32_t a, int32_t b, int32_t c, int32_t *out) {
  KInstr in;
  pass_lower_init_instr(&in, KI_ELEM, t);
  in.op = (uint16_t)op;
  in.src[0] = a;
  in.src[1] = b;
  in.src[2] = c;
  return pass_lower_emit(l, &in, out);
}

static LoomStatus i64_param(Lower *l, int64_t v, bool bake, int32_t *out) {
  Scalar s;
  memset(&s, 0, sizeof s);
  s.i = v;
  return pass_lower_param(l, LOOM_INT64, s, bake, -1, out);
}

/* The index x (int64) as an element of an axis of extent n (>= 1 when the kernel has points). */
static LoomStatus normalize(Lower *l, IrGatherMode mode, int64_t n, int32_t x, int32_t *out) {
  const LoomDType I = LOOM_INT64;
  int32_t zero, np, last, t;
  /* wrap's divisor is baked (lower.c's rule for integer divisors: a constant one is a multiply and shifts,
   * which vectorize; a run-time one is a hardware division per element, none on GPUs): one kernel per
   * extent in wrap mode */
  LoomStatus st = mode != IR_GATHER_CLIP ? i64_param(l, n, mode == IR_GATHER_WRAP, &np) : LOOM_OK;
  if (st != LOOM_OK) return st;
  if (mode == IR_GATHER_WRAP) return elem(l, LOOM_OP_MOD, I, x, np, -1, out); /* floor modulo: >= 0 */
  if ((st = i64_param(l, 0, true, &zero)) != LOOM_OK) return st;
  if (mode == IR_GATHER_RAISE) { /* negative counts from the end; the caller checked the range */
    if ((st = elem(l, LOOM_OP_LT, LOOM_BOOL, x, zero, -1, &t)) != LOOM_OK) return st;
    int32_t shifted;
    if ((st = elem(l, LOOM_OP_ADD, I, x, np, -1, &shifted)) != LOOM_OK) return st;
    if ((st = elem(l, LOOM_OP_WHERE, I, t, shifted, x, &x)) != LOOM_OK) return st;
  }
  /* clamped into the axis: clip's rule, and raise's guarantee that no index leaves the array */
  if ((st = i64_param(l, n - 1, false, &last)) != LOOM_OK) return st;
  if ((st = elem(l, LOOM_OP_MINIMUM, I, x, last, -1, &t)) != LOOM_OK) return st;
  return elem(l, LOOM_OP_MAXIMUM, I, t, zero, -1, out);
}

LoomStatus pass_lower_gather(Lower *l, int32_t x, int32_t idx, int space, int32_t *out) {
  const IrGraph *g = l->g;
  const IrNode *n = &g->nodes[x];
  int axis = __builtin_ctz(n->axes);
  ReadInfo r;
  LoomStatus st = pass_resolve_read(g, l->K, space == 1, n->src[0], &r, l->d);
  if (st != LOOM_OK) return st;
  const IrNode *dat = &g->nodes[n->src[2]];
  if (r.is_const || (r.is_acc && dat->shape[axis] == 1)) /* one value along the axis: read it */
    return pass_lower_read(l, n->src[0], space, out);
  LOOM_ASSERT(l->d, !r.is_acc);
  IrView v;
  if (!pass_compute_view(g, n->src[2], &v) || v.leaf != r.leaf)
    return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: gather %%%d: its data and data view differ", x);
  int32_t i, stride, delta, b;
  if ((st = normalize(l, (IrGatherMode)n->op, dat->shape[axis], idx, &i)) != LOOM_OK) return st;
  if ((st = i64_param(l, v.strides[axis], false, &stride)) != LOOM_OK) return st;
  if ((st = elem(l, LOOM_OP_MUL, LOOM_INT64, i, stride, -1, &delta)) != LOOM_OK) return st;
  if ((st = pass_lower_bind_read(l, &r, &b)) != LOOM_OK) return st;
  const IrNode *leaf = &g->nodes[r.leaf];
  KInstr in;
  if (leaf->kind == IR_IOTA) { /* arange(n)[i]: the offset itself */
    int32_t off;
    pass_lower_init_instr(&in, KI_OFFSET, LOOM_INT64);
    in.buf = b;
    if ((st = pass_lower_emit(l, &in, &off)) != LOOM_OK) return st;
    return elem(l, LOOM_OP_ADD, LOOM_INT64, off, delta, -1, out);
  }
  pass_lower_init_instr(&in, KI_GATHER, dtype_compute((LoomDType)leaf->dtype));
  in.buf = b;
  in.src[0] = delta;
  return pass_lower_emit(l, &in, out);
}

static LoomStatus push_store(Lower *l, int32_t b, int32_t value, int32_t index, int32_t limit, int op) {
  KStore *ns = pass_lower_grow(l, l->stores, l->nstore, &l->capstore, sizeof *ns);
  if (!ns) return pass_lower_oom(l);
  l->stores = ns;
  KStore *s = &l->stores[l->nstore++];
  memset(s, 0, sizeof *s);
  s->buf = b;
  s->value = value;
  s->scatter = 1;
  s->index = index;
  s->limit = limit;
  s->op = (uint8_t)op;
  return LOOM_OK;
}

LoomStatus pass_lower_scatter_store(Lower *l, int32_t x) {
  const IrNode *n = &l->g->nodes[x];
  const int op = n->op == IR_SCATTER_ADD ? IR_SCATTER_ADD : IR_SCATTER_SET; /* PUT stores as SET */
  int32_t iv, vv, lim, b;
  LoomStatus st = pass_lower_value(l, n->src[1], 0, &iv);
  if (st == LOOM_OK) st = pass_lower_value(l, n->src[2], 0, &vv);
  if (st == LOOM_OK) st = i64_param(l, ir_numel(n->ndim, n->shape), false, &lim);
  if (st != LOOM_OK) return st;
  int64_t zero[LOOM_MAX_RANK] = {0}, cs[LOOM_MAX_RANK];
  pass_contiguous_strides(n->ndim, n->shape, cs);
  for (int32_t i = 0; i < l->m->nroots; i++) {
    if (l->m->roots[i] != x) continue;
    const LoomArray *o = &l->m->outs[i];
    bool contiguous = o->ndim == n->ndim;
    for (int a = 0; contiguous && a < n->ndim; a++)
      contiguous = o->shape[a] == n->shape[a] && (n->shape[a] <= 1 || o->strides[a] == cs[a]);
    if (!contiguous)
      return diag_error(l->d, LOOM_ERR_UNSUPPORTED, "scatter: output %d must be C-contiguous (write into a new array, then copy)", i);
    if ((st = pass_lower_buffer(l, o->dtype, true, SB_OUTPUT, i, 0, zero, &b)) != LOOM_OK) return st;
    if ((st = push_store(l, b, vv, iv, lim, op)) != LOOM_OK) return st;
  }
  if (l->p->needs_temp[x]) {
    if ((st = pass_lower_buffer(l, (LoomDType)n->dtype, true, SB_TEMP, l->temp_of[x], 0, zero, &b)) != LOOM_OK) return st;
    if ((st = push_store(l, b, vv, iv, lim, op)) != LOOM_OK) return st;
  }
  return LOOM_OK;
}
