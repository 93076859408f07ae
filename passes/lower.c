/* SPDX-License-Identifier: Apache-2.0 */
/* lower.c: pass_lower, FusionPlan -> Schedule (kernel IR plus concrete shapes and bindings).
 * Files: this one, lower_emit.c (emission, rounding) and lower_call.c (call kernels): lower_internal.h.
 *
 * Contract. Requires: m->plan from pass_fuse. Guarantees: m->schedule holds one SchedKernel per fused
 * kernel in plan order, named k0, k1, ...; each KernelIr obeys ir.h's typing rules (every KI_CAST is
 * explicit, no instruction has a storage dtype but a rounding cast); one buffer per distinct (leaf, view) read and one per
 * store; bindings: inputs -> SB_INPUT with the composed view, realized nodes read elsewhere ->
 * SB_TEMP (C-contiguous, a SchedTemp each), roots -> SB_OUTPUT with m->outs[i]'s strides, views of an
 * IR_IOTA -> SB_INDEX read by KI_OFFSET (no memory); layouts from the strides (ir_layout_of_stride: 0, 1,
 * -1, 2, 3, 4 are classes of their own, else KL_ANY); index_bits 32 when every extent and the point count
 * fit in int32. Empty kernels are still emitted. Constants are kernel parameters (KI_PARAM, their launch
 * words in SchedKernel.params) except complex ones and integer divisors (const_value says why). A call
 * kernel (FusedKernel.is_call) becomes a
 * KernelIr with a KCall over [B..., M, N, K] (ir.h): operands bound where their views lie (a call
 * operand in its own temp), the stored node bound to its root output or temp; a root a call stores is
 * read by later kernels from that output (C-contiguous: fuse.c made sure), not from a temp.
 *
 * Storage dtypes float16 and bfloat16 (NumPy and ml_dtypes round every result): a node of such a
 * dtype S (an op's result, a cast, a reduction) is computed in float32 and then rounded to S and back
 * (KI_CAST to S, KI_CAST to f32), unless its value is known to be an S value already: a load of an S
 * buffer, a constant S holds, a cast from bool or an 8-bit int, the result of such a rounding, or
 * neg / abs / sign / copysign / floor / ceil / trunc / rint / maximum / minimum / fmax / fmin /
 * where of such values (the `exact` bits). A value that float32 does not hold exactly is rounded to
 * S once: float64 -> float16 through pass_lower_round16_f64 (through float32, with the double-rounding case
 * fixed up; no double -> half instruction, which hosts lack); float64 and 32/64-bit ints ->
 * bfloat16 by one rounding cast (codegen rounds those once). A node stored into an S buffer as it
 * is (for_store) skips the pair: the store rounds (once, by the same rules).
 *
 * A reduction kernel's sides (FusedKernel.sides) are the side stores of its first REDUCE phase (ir.h):
 * their values in the (o, r) space, which the phases that read them at the point share (pass_local_map).
 *
 * A scan kernel (FusedKernel.is_scan) has one KP_SCAN phase whose value is the scanned node's cone cast
 * to the result dtype and whose stores are the scan (its KI_ACC) and the maps that read it (lower_scan).
 *
 * Approach: per kernel, a memoized walk of each stored node's cone, per phase space (the (o, r)
 * space of REDUCE/MAP phases, the o space of the FINAL phase); reads are classified by
 * pass_resolve_read (constant, KI_ACC of an earlier reduction of this kernel, or a load). Reduction
 * values: SUM/PROD/MEAN fold the source cast to dtype_compute(result); MIN/MAX/ARG* fold the source in
 * its compute dtype; ANY/ALL fold it cast to bool; MEAN divides the folded sum by KI_REDSIZE.
 */
#include <stdio.h>
#include <string.h>

#include "passes/lower_internal.h"

static KLayout layout_of(int64_t stride, bool inner) { return ir_layout_of_stride(stride, inner); }

/* The buffer for a binding (reads are shared; every store gets its own). */
LoomStatus pass_lower_buffer(Lower *l, LoomDType dtype, bool is_output, SchedBufKind kind, int32_t index,
                         int64_t offset, const int64_t *strides, int32_t *out) {
  int nd = l->K->ndim;
  if (!is_output)
    for (int32_t b = 0; b < l->nbuf; b++) {
      const SchedBinding *sb = &l->bind[b];
      if (l->bufs[b].is_output || sb->kind != kind || sb->index != index || sb->offset != offset ||
          l->bufs[b].dtype != dtype || memcmp(sb->strides, strides, (size_t)nd * sizeof *strides) != 0)
        continue;
      *out = b;
      return LOOM_OK;
    }
  if (l->nbuf == l->capbuf) {
    int32_t ncap = l->capbuf ? l->capbuf * 2 : 8;
    KBuffer *nb = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nb);
    SchedBinding *nsb = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nsb);
    if (!nb || !nsb) return pass_lower_oom(l);
    if (l->nbuf) {
      memcpy(nb, l->bufs, (size_t)l->nbuf * sizeof *nb);
      memcpy(nsb, l->bind, (size_t)l->nbuf * sizeof *nsb);
    }
    l->bufs = nb;
    l->bind = nsb;
    l->capbuf = ncap;
  }
  KBuffer *kb = &l->bufs[l->nbuf];
  SchedBinding *sb = &l->bind[l->nbuf];
  memset(kb, 0, sizeof *kb);
  memset(sb, 0, sizeof *sb);
  kb->dtype = (uint8_t)dtype;
  kb->is_output = is_output;
  sb->kind = (uint8_t)kind;
  sb->index = index;
  sb->offset = offset;
  for (int i = 0; i < nd; i++) {
    sb->strides[i] = l->K->shape[i] == 1 ? 0 : strides[i];
    kb->layout[i] = (uint8_t)layout_of(sb->strides[i], i == nd - 1);
  }
  *out = l->nbuf++;
  return LOOM_OK;
}

/* The value of reduction phase j of this kernel as the reduce node's result (compute dtype). */
static LoomStatus reduce_result(Lower *l, int j, bool for_store, int32_t *out) {
  const IrNode *r = &l->g->nodes[l->K->reduces[j]];
  LoomReduceOp op = (LoomReduceOp)r->op;
  LoomDType rd = dtype_compute((LoomDType)r->dtype);
  bool arg = op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX;
  KInstr in;
  pass_lower_init_instr(&in, KI_ACC, arg ? LOOM_INT64 : (LoomDType)l->phases[j].acc_dtype);
  in.phase = j;
  int32_t a;
  LoomStatus st = pass_lower_emit(l, &in, &a);
  if (st != LOOM_OK) return st;
  if (op == LOOM_REDUCE_MEAN) {
    /* NumPy: sum in the result dtype, divide (true_divide: float64 for an integer or bool dtype=), then
     * cast to the result dtype (truncating) */
    LoomDType qd = dtype_is_float(rd) || dtype_is_complex(rd) ? rd : LOOM_FLOAT64;
    int32_t sz, num, den;
    pass_lower_init_instr(&in, KI_REDSIZE, LOOM_INT64);
    if ((st = pass_lower_emit(l, &in, &sz)) != LOOM_OK) return st;
    if ((st = pass_lower_cast_to(l, a, qd, &num)) != LOOM_OK) return st;
    if ((st = pass_lower_cast_to(l, sz, qd, &den)) != LOOM_OK) return st;
    pass_lower_init_instr(&in, KI_ELEM, qd);
    in.op = LOOM_OP_TRUEDIV;
    in.src[0] = num;
    in.src[1] = den;
    if ((st = pass_lower_emit(l, &in, &a)) != LOOM_OK) return st;
  }
  if (pass_lower_exact_bit((LoomDType)r->dtype) && !for_store) /* a store to its float16 / bfloat16 buffer rounds anyway */
    return pass_lower_round_once(l, a, (LoomDType)r->dtype, false, out);
  return pass_lower_cast_to(l, a, rd, out);
}

enum { LOWER_MAX_PARAMS = 64 }; /* parameters per kernel; further constants are baked */

/* A constant that survived pass_fold becomes a kernel parameter (KI_PARAM), so the kernel's key names its
 * dtype but not its value: a new value reuses the compiled kernel. One parameter per use (per operand
 * of an instruction; value() does not memoize constants), not per IR_CONST node: the graph shares one
 * node between equal values, so `x * s + t` would otherwise be another kernel whenever s == t. Folding
 * already saw every value (x*1 -> x, x / 2^k -> x * 2^-k, powers by small exponents: rewrites that change
 * the kernel's structure, so they cost at most one kernel per rule, never one per value). Baked as
 * KI_CONST instead: complex constants (a parameter is one 8-byte launch word), `bake` operands (the
 * divisor of an integer // or %: a constant divisor becomes a multiply and shifts, which vectorize; a
 * run-time one is a hardware division per element, none on GPUs), and parameters past LOWER_MAX_PARAMS
 * (GPU parameter blocks are small). */
static LoomStatus const_value(Lower *l, int32_t c, bool bake, int32_t *out) {
  const IrNode *leaf = &l->g->nodes[c];
  LoomStatus st = pass_lower_param(l, dtype_compute((LoomDType)leaf->dtype), leaf->value, bake, c, out);
  /* a float16 constant's parameter (a float32 word holding a float16 value) goes through float16 once:
   * the same value, but the code generator then sees a widened float16 operand and computes
   * `round16(x * c)` as one float16 multiply (GPUs: mul.f16, packed f16x2) instead of a float32
   * multiply and two conversions. The cast pair is loop-invariant (hoisted). */
  if (st == LOOM_OK && leaf->dtype == LOOM_FLOAT16 && l->ins[*out].kind == KI_PARAM) {
    int32_t h;
    if ((st = pass_lower_cast_to(l, *out, LOOM_FLOAT16, &h)) != LOOM_OK) return st;
    st = pass_lower_cast_to(l, h, LOOM_FLOAT32, out);
  }
  return st;
}

LoomStatus pass_lower_param(Lower *l, LoomDType ct, Scalar value, bool bake, int32_t node, int32_t *out) {
  KInstr in;
  if (bake || dtype_is_complex(ct) || l->nparam >= LOWER_MAX_PARAMS) {
    if (node >= 0) pass_note_const_read(l->m, node); /* in the kernel's code: a new value is a new plan */
    pass_lower_init_instr(&in, KI_CONST, ct);
    in.value = value;
    return pass_lower_emit(l, &in, out);
  }
  int32_t p = l->nparam;
  if (p == l->capparam) {
    int32_t ncap = l->capparam ? l->capparam * 2 : 4;
    uint64_t *nw = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nw);
    int32_t *nn = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nn);
    if (!nw || !nn) return pass_lower_oom(l);
    if (p) memcpy(nw, l->param_word, (size_t)p * sizeof *nw);
    if (p) memcpy(nn, l->param_node, (size_t)p * sizeof *nn);
    l->param_word = nw;
    l->param_node = nn;
    l->capparam = ncap;
  }
  l->param_word[p] = ir_param_word(ct, value);
  l->param_node[p] = node;
  l->nparam++;
  pass_lower_init_instr(&in, KI_PARAM, ct);
  in.op = (uint16_t)p;
  return pass_lower_emit(l, &in, out);
}

/* Whether operand i of op (computing in od) stays a compile-time constant when it is one (const_value). */
static bool bakes_operand(LoomOp op, int i, LoomDType od) {
  /* the exponent of a power: codegen's pow by a constant exponent (math_pow.c: multiplies, sqrt,
   * divides, NumPy's fast paths) needs its value; a new exponent is a new kernel, as a new rule */
  if (i == 1 && op == LOOM_OP_POW) return true;
  /* a shift by a constant amount: an immediate shift, without the run-time test an amount >= the width
   * needs (bit tricks such as bitwise_count's); at most width + 1 kernels per shift over every amount
   * (pass_fold makes every amount outside [0, width] the width). It is also what NVIDIA's JIT computes
   * right at levels >= 1: shifts by a parameter after a multiply came out wrong on an H100 (driver 580,
   * 2026-12-06: bitwise_count of uint16 gave 12 for 16, of uint32 24 for 31; level 0 was right) */
  if (i == 1 && (op == LOOM_OP_LEFT_SHIFT || op == LOOM_OP_RIGHT_SHIFT) && dtype_is_int(od)) return true;
  return i == 1 && (op == LOOM_OP_FLOORDIV || op == LOOM_OP_MOD) && dtype_is_int(od);
}

/* Whether node x is read (not computed) in value() and is a constant: a parameter per use. */
static bool const_read(const Lower *l, int32_t x) {
  const IrNode *n = &l->g->nodes[x];
  return (!pass_cone_kind(n->kind) || l->p->is_stop[x]) && pass_const_of(l->g, x) >= 0;
}

static LoomStatus read_value_as(Lower *l, int32_t x, int space, bool bake, int32_t *out) {
  ReadInfo r;
  LoomStatus st = pass_resolve_read(l->g, l->K, space == 1, x, &r, l->d);
  if (st != LOOM_OK) return st;
  const IrNode *leaf = &l->g->nodes[r.leaf];
  KInstr in;
  if (r.is_const) return const_value(l, r.leaf, bake, out);
  if (r.is_acc) return reduce_result(l, r.acc_phase, false, out);
  int32_t b;
  if ((st = pass_lower_bind_read(l, &r, &b)) != LOOM_OK) return st;
  pass_lower_init_instr(&in, leaf->kind == IR_IOTA ? KI_OFFSET : KI_LOAD,
                        leaf->kind == IR_IOTA ? LOOM_INT64 : dtype_compute((LoomDType)leaf->dtype));
  in.buf = b;
  return pass_lower_emit(l, &in, out);
}

LoomStatus pass_lower_bind_read(Lower *l, const ReadInfo *rp, int32_t *out) {
  ReadInfo r = *rp;
  const IrNode *leaf = &l->g->nodes[r.leaf];
  LoomStatus st;
  int32_t b;
  if (leaf->kind == IR_IOTA) /* no memory: the view's element offset is the value (KI_OFFSET) */
    return pass_lower_buffer(l, LOOM_INT64, false, SB_INDEX, -1, r.offset, r.strides, out);
  if (leaf->kind == IR_INPUT) {
    LOOM_ASSERT(l->d, leaf->input >= 0 && leaf->input < l->g->ninputs);
    st = pass_lower_buffer(l, (LoomDType)leaf->dtype, false, SB_INPUT, leaf->input, r.offset, r.strides, &b);
  } else {
    int32_t t = l->temp_of[r.leaf];
    if (t < 0 && l->out_of[r.leaf] < 0)
      return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: %%%d is read but never stored", r.leaf);
    if (t >= 0) st = pass_lower_buffer(l, (LoomDType)leaf->dtype, false, SB_TEMP, t, r.offset, r.strides, &b);
    else st = pass_lower_buffer(l, (LoomDType)leaf->dtype, false, SB_OUTPUT, l->out_of[r.leaf], r.offset, r.strides, &b);
  }
  *out = b;
  return st;
}

static LoomStatus read_value(Lower *l, int32_t x, int space, int32_t *out) {
  return read_value_as(l, x, space, false, out);
}

static LoomStatus set_memo(Lower *l, int32_t x, int space, int32_t v) {
  size_t key = (size_t)x * 2 + (size_t)space;
  if (l->memo[key] < 0) {
    int32_t *nt = pass_lower_grow(l, l->touched, l->ntouched, &l->captouched, sizeof *nt);
    if (!nt) return pass_lower_oom(l);
    l->touched = nt;
    l->touched[l->ntouched++] = (int32_t)key;
  }
  l->memo[key] = v;
  return LOOM_OK;
}

/* The instruction computing ELEM/CAST node x (a cone node) from its operands' instructions s[]. */
/* for_store: x's value is only stored into buffers of x's dtype (x is a boundary computed as the
 * start of its store), which round it themselves: no float16 / bfloat16 rounding here. */
static LoomStatus emit_node(Lower *l, int32_t x, const int32_t *s_in, bool for_store, int32_t *out) {
  const IrNode *n = &l->g->nodes[x];
  LoomStatus st;
  int32_t s[3] = {s_in[0], s_in[1], s_in[2]};
  LoomDType rd = dtype_compute((LoomDType)n->dtype);
  LoomDType sd = (LoomDType)n->dtype; /* a storage dtype when rd != sd */
  if (n->kind == IR_CAST)
    return rd != sd ? pass_lower_round_once(l, s[0], sd, for_store, out) : pass_lower_cast_to(l, s[0], rd, out);
  if (n->kind == IR_GATHER) return pass_lower_gather(l, x, s[0], l->space, out);
  LoomOp op = (LoomOp)n->op;
  const OpInfo *info = op_info(op);
  if (!info) return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: unknown op %d at %%%d", op, x);
  KInstr in;
  LoomDType res;
  if (op == LOOM_OP_WHERE) {
    if ((st = pass_lower_cast_to(l, s[0], LOOM_BOOL, &s[0])) != LOOM_OK) return st;
    if ((st = pass_lower_cast_to(l, s[1], rd, &s[1])) != LOOM_OK) return st;
    if ((st = pass_lower_cast_to(l, s[2], rd, &s[2])) != LOOM_OK) return st;
    res = rd;
  } else {
    LoomDType da = (LoomDType)l->g->nodes[n->src[0]].dtype;
    LoomDType db = info->arity > 1 ? (LoomDType)l->g->nodes[n->src[1]].dtype : da;
    LoomDType od = dtype_compute(ir_elem_operand_dtype(op, (LoomDType)n->dtype, da, db));
    for (int i = 0; i < info->arity; i++)
      if ((st = pass_lower_cast_to(l, s[i], od, &s[i])) != LOOM_OK) return st;
    res = ir_elem_value_dtype(op, od);
  }
  pass_lower_init_instr(&in, KI_ELEM, res);
  in.op = (uint16_t)op;
  for (int i = 0; i < 3; i++) in.src[i] = s[i];
  int32_t e;
  if ((st = pass_lower_emit(l, &in, &e)) != LOOM_OK) return st;
  if ((st = pass_lower_cast_to(l, e, rd, &e)) != LOOM_OK) return st;
  return rd != sd && !for_store ? pass_lower_round_to(l, e, sd, out) : (*out = e, LOOM_OK);
}

/* Writes frame nf (node x, next operand 0, start) of value()'s stack, growing it as needed. */
static LoomStatus push_frame(Lower *l, int32_t nf, int32_t x, bool start) {
  if ((nf + 1) * 3 > l->capframes) {
    int32_t ncap = l->capframes ? l->capframes * 2 : 3 * 64;
    int32_t *nfr = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nfr);
    if (!nfr) return pass_lower_oom(l);
    if (nf) memcpy(nfr, l->frames, (size_t)nf * 3 * sizeof *nfr);
    l->frames = nfr;
    l->capframes = ncap;
  }
  l->frames[nf * 3] = x;
  l->frames[nf * 3 + 1] = 0;
  l->frames[nf * 3 + 2] = start;
  return LOOM_OK;
}

/* The instruction of node x in phase space `space` (0: (o, r); 1: o). A post-order walk of x's cone
 * (operands left to right, each memoized), on an explicit stack of (node, next operand, start)
 * triples so that its depth is not the C stack's. Boundary nodes other than the start are read. */
static LoomStatus value(Lower *l, int32_t root, int space, bool is_start, bool store_only, int32_t *out) {
  LoomStatus st;
  if (l->memo[(size_t)root * 2 + (size_t)space] >= 0) {
    *out = l->memo[(size_t)root * 2 + (size_t)space];
    return LOOM_OK;
  }
  int32_t nf = 0;
  if ((st = push_frame(l, nf, root, is_start)) != LOOM_OK) return st;
  nf = 1;
  while (nf > 0) {
    int32_t *top = &l->frames[(nf - 1) * 3];
    int32_t x = top[0];
    const IrNode *n = &l->g->nodes[x];
    /* a root this kernel stores, read at the point by another of its roots: computed here (memo) */
    bool stop = l->p->is_stop[x] && !top[2] && !pass_local_map(l->g, l->K, space == 1, x);
    int32_t v;
    if (!pass_cone_kind(n->kind) || stop) {
      if ((st = read_value(l, x, space, &v)) != LOOM_OK) return st;
    } else {
      const OpInfo *info = n->kind == IR_ELEM ? op_info((LoomOp)n->op) : NULL;
      if (n->kind == IR_ELEM && !info) return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: unknown op %d at %%%d", n->op, x);
      int arity = n->kind == IR_ELEM ? info->arity : 1;
      const int32_t *srcs = n->kind == IR_GATHER ? &n->src[1] : n->src; /* a gather's operand: its index */
      while (top[1] < arity &&
             (l->memo[(size_t)srcs[top[1]] * 2 + (size_t)space] >= 0 || const_read(l, srcs[top[1]])))
        top[1]++;
      if (top[1] < arity) { /* descend into the next operand not yet computed */
        if ((st = push_frame(l, nf, srcs[top[1]], false)) != LOOM_OK) return st;
        nf++;
        continue;
      }
      int32_t s[3] = {-1, -1, -1};
      LoomDType od = n->kind == IR_ELEM && arity == 2
                         ? dtype_compute(ir_elem_operand_dtype((LoomOp)n->op, (LoomDType)n->dtype,
                                                               (LoomDType)l->g->nodes[n->src[0]].dtype,
                                                               (LoomDType)l->g->nodes[n->src[1]].dtype))
                         : LOOM_BOOL;
      for (int i = 0; i < arity; i++) {
        if (const_read(l, srcs[i])) { /* a parameter per use (const_value) */
          bool bake = n->kind == IR_ELEM && bakes_operand((LoomOp)n->op, i, od);
          if ((st = read_value_as(l, srcs[i], space, bake, &s[i])) != LOOM_OK) return st;
        } else {
          s[i] = l->memo[(size_t)srcs[i] * 2 + (size_t)space];
        }
      }
      bool for_store = nf == 1 && store_only && l->p->is_stop[x];
      l->space = space;
      if ((st = emit_node(l, x, s, for_store, &v)) != LOOM_OK) return st;
    }
    if ((st = set_memo(l, x, space, v)) != LOOM_OK) return st;
    nf--;
  }
  *out = l->memo[(size_t)root * 2 + (size_t)space];
  return LOOM_OK;
}

LoomStatus pass_lower_read(Lower *l, int32_t x, int space, int32_t *out) { return read_value(l, x, space, out); }

LoomStatus pass_lower_value(Lower *l, int32_t x, int space, int32_t *out) {
  return value(l, x, space, false, false, out);
}

static LoomStatus add_store(Lower *l, int32_t node, bool final_space, int32_t val) {
  const IrNode *n = &l->g->nodes[node];
  LoomStatus st;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t i = 0; i < (pass == 0 ? l->m->nroots : 1); i++) {
      int64_t st_in[LOOM_MAX_RANK], st_k[LOOM_MAX_RANK];
      LoomDType dt = (LoomDType)n->dtype;
      SchedBufKind kind;
      int32_t index;
      if (pass == 0) {
        if (l->m->roots[i] != node) continue;
        const LoomArray *o = &l->m->outs[i];
        if (o->ndim != n->ndim || memcmp(o->shape, n->shape, (size_t)n->ndim * sizeof *o->shape) != 0)
          return diag_error(l->d, LOOM_ERR_SHAPE, "output %d: its shape does not match the result's", i);
        memcpy(st_in, o->strides, sizeof st_in);
        dt = o->dtype;
        kind = SB_OUTPUT;
        index = i;
      } else {
        if (!l->p->needs_temp[node] || l->out_of[node] >= 0) continue;
        pass_contiguous_strides(n->ndim, n->shape, st_in);
        kind = SB_TEMP;
        index = l->temp_of[node];
      }
      if (!pass_map_strides(l->K, final_space, n->ndim, n->shape, st_in, st_k))
        return diag_error(l->d, LOOM_ERR_INTERNAL, "lower: store of %%%d does not match its kernel", node);
      int32_t b;
      if ((st = pass_lower_buffer(l, dt, true, kind, index, 0, st_k, &b)) != LOOM_OK) return st;
      KStore *ns = pass_lower_grow(l, l->stores, l->nstore, &l->capstore, sizeof *ns);
      if (!ns) return pass_lower_oom(l);
      l->stores = ns;
      l->stores[l->nstore].buf = b;
      l->stores[l->nstore].value = val;
      l->nstore++;
    }
  }
  return LOOM_OK;
}

static int32_t value_node(const IrGraph *g, int32_t x) {
  const IrNode *n = &g->nodes[x];
  return (n->kind == IR_REDUCE || n->kind == IR_COPY || n->kind == IR_SCAN || n->kind == IR_SCATTER) ? n->src[0] : x;
}

static int64_t iabs(int64_t v) { return v < 0 ? -v : v; }

static LoomStatus lower_scan(Lower *l) {
  const FusedKernel *K = l->K;
  int32_t x = K->reduces[0];
  const IrNode *r = &l->g->nodes[x];
  LoomDType rt = (LoomDType)r->dtype, acc = dtype_compute(rt);
  int32_t v;
  LoomStatus st = value(l, r->src[0], 0, true, false, &v);
  if (st == LOOM_OK && pass_lower_exact_bit(rt)) st = pass_lower_round_once(l, v, rt, false, &v);
  if (st == LOOM_OK) st = pass_lower_cast_to(l, v, acc, &v);
  if (st != LOOM_OK) return st;
  KPhase *ph = &l->phases[l->nphase++];
  memset(ph, 0, sizeof *ph);
  ph->kind = KP_SCAN;
  ph->reduce_op = (uint8_t)r->op;
  ph->acc_dtype = (uint8_t)acc;
  ph->value = v;
  ph->scan_round = pass_lower_exact_bit(rt) ? (uint8_t)rt : 0;
  int32_t begin = l->nstore;
  if (l->p->is_root[x] || l->p->needs_temp[x]) {
    if ((st = reduce_result(l, 0, true, &v)) != LOOM_OK || (st = add_store(l, x, false, v)) != LOOM_OK) return st;
  }
  for (int i = 0; i < K->nmap; i++) {
    if (l->g->nodes[K->maps[i]].kind == IR_SCATTER) { /* a compaction's store (fuse_gather.c) */
      if ((st = pass_lower_scatter_store(l, K->maps[i])) != LOOM_OK) return st;
      continue;
    }
    if ((st = value(l, value_node(l->g, K->maps[i]), 0, true, true, &v)) != LOOM_OK) return st;
    if ((st = add_store(l, K->maps[i], false, v)) != LOOM_OK) return st;
  }
  ph = &l->phases[0];
  ph->store_begin = begin;
  ph->nstores = l->nstore - begin;
  return LOOM_OK;
}

static LoomStatus lower_kernel(Lower *l, int32_t kidx) {
  const FusedKernel *K = &l->p->kernels[kidx];
  if (K->is_call) {
    l->nbuf = 0;
    l->capbuf = 0;
    l->bufs = NULL;
    l->bind = NULL;
    return pass_lower_call(l, kidx);
  }
  IrGraph *g = l->g;
  LoomStatus st;
  l->K = K;
  l->nins = l->nbuf = l->nstore = l->nphase = l->nparam = l->capparam = 0;
  l->param_word = NULL;
  l->param_node = NULL;
  l->ins = NULL;
  l->exact = NULL;
  l->bufs = NULL;
  l->bind = NULL;
  l->stores = NULL;
  l->capins = l->capbuf = l->capstore = 0;
  l->itab = NULL;
  l->itcap = 0;
  for (int32_t i = 0; i < l->ntouched; i++) l->memo[l->touched[i]] = -1; /* the previous kernel's */
  l->ntouched = 0;
  l->phases = arena_alloc(l->m->arena, (size_t)(K->nreduce + 2) * sizeof *l->phases);
  if (!l->phases) return pass_lower_oom(l);
  if (K->is_scan && (st = lower_scan(l)) != LOOM_OK) return st;

  for (int j = 0; j < K->nreduce && !K->is_scan; j++) {
    const IrNode *r = &g->nodes[K->reduces[j]];
    LoomReduceOp op = (LoomReduceOp)r->op;
    LoomDType sd = dtype_compute((LoomDType)g->nodes[r->src[0]].dtype);
    LoomDType acc;
    switch (op) {
    case LOOM_REDUCE_SUM: case LOOM_REDUCE_PROD: case LOOM_REDUCE_MEAN:
      acc = dtype_compute((LoomDType)r->dtype);
      break;
    case LOOM_REDUCE_ANY: case LOOM_REDUCE_ALL: acc = LOOM_BOOL; break;
    default: acc = sd; break;
    }
    int32_t v;
    if ((st = value(l, r->src[0], 0, true, false, &v)) != LOOM_OK) return st;
    /* dtype=float16 / bfloat16: each value rounded once to it first */
    bool to_storage = pass_lower_exact_bit((LoomDType)r->dtype) &&
                      (op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_PROD || op == LOOM_REDUCE_MEAN);
    if (to_storage && (st = pass_lower_round_once(l, v, (LoomDType)r->dtype, false, &v)) != LOOM_OK) return st;
    if ((st = pass_lower_cast_to(l, v, acc, &v)) != LOOM_OK) return st;
    KPhase *ph = &l->phases[l->nphase++];
    memset(ph, 0, sizeof *ph);
    ph->kind = KP_REDUCE;
    ph->reduce_op = (uint8_t)(op == LOOM_REDUCE_MEAN ? LOOM_REDUCE_SUM : op);
    ph->acc_dtype = (uint8_t)acc;
    ph->value = v;
  }
  if (K->nside > 0) { /* the first REDUCE phase's side stores (ir.h): values at its points */
    int32_t begin = l->nstore;
    for (int i = 0; i < K->nside; i++) {
      int32_t v;
      if ((st = value(l, value_node(g, K->sides[i]), 0, true, true, &v)) != LOOM_OK) return st;
      if ((st = add_store(l, K->sides[i], false, v)) != LOOM_OK) return st;
    }
    LOOM_ASSERT(l->d, l->nphase > 0 && l->phases[0].kind == KP_REDUCE);
    l->phases[0].store_begin = begin;
    l->phases[0].nstores = l->nstore - begin;
  }
  if (K->nmap > 0 && !K->is_scan) {
    int32_t begin = l->nstore;
    for (int i = 0; i < K->nmap; i++) {
      int32_t v;
      if (K->is_scatter) { /* lower_gather.c */
        if ((st = pass_lower_scatter_store(l, K->maps[i])) != LOOM_OK) return st;
        continue;
      }
      if ((st = value(l, value_node(g, K->maps[i]), 0, true, true, &v)) != LOOM_OK) return st;
      if ((st = add_store(l, K->maps[i], false, v)) != LOOM_OK) return st;
    }
    KPhase *ph = &l->phases[l->nphase++];
    memset(ph, 0, sizeof *ph);
    ph->kind = KP_MAP;
    ph->store_begin = begin;
    ph->nstores = l->nstore - begin;
  }
  int32_t begin = l->nstore;
  for (int j = 0; j < K->nreduce && !K->is_scan; j++) {
    int32_t x = K->reduces[j];
    if (!l->p->is_root[x] && !l->p->needs_temp[x]) continue;
    int32_t v;
    if ((st = reduce_result(l, j, true, &v)) != LOOM_OK) return st;
    if ((st = add_store(l, x, true, v)) != LOOM_OK) return st;
  }
  for (int i = 0; i < K->nfinal; i++) {
    int32_t v;
    if ((st = value(l, value_node(g, K->finals[i]), 1, true, true, &v)) != LOOM_OK) return st;
    if ((st = add_store(l, K->finals[i], true, v)) != LOOM_OK) return st;
  }
  if (l->nstore > begin) {
    KPhase *ph = &l->phases[l->nphase++];
    memset(ph, 0, sizeof *ph);
    ph->kind = KP_FINAL;
    ph->store_begin = begin;
    ph->nstores = l->nstore - begin;
  }

  KernelIr *k = arena_alloc(l->m->arena, sizeof *k);
  if (!k) return pass_lower_oom(l);
  const char *hint = "map";
  char hb[32];
  if (K->is_scatter) hint = "scatter";
  if (K->is_reduction) {
    snprintf(hb, sizeof hb, "%s_%s", K->is_scan ? "scan" : "reduce", reduce_op_name((LoomReduceOp)g->nodes[K->reduces[0]].op));
    hint = hb;
  }
  snprintf(k->name, sizeof k->name, "k%d_%s", kidx, hint);
  k->ndim = K->ndim;
  k->nkeep = K->nkeep;
  k->nbuf = l->nbuf;
  k->bufs = l->bufs;
  k->ninstr = l->nins;
  k->instrs = l->ins;
  k->nphase = l->nphase;
  k->phases = l->phases;
  k->nstore = l->nstore;
  k->stores = l->stores;
  k->nparam = l->nparam;
  int64_t points = ir_numel(K->ndim, K->shape);
  /* 32-bit indices leave 2^24 of headroom: a GPU thread's index i + step (a grid's threads, times the points
   * it reads ahead) must not wrap past the end of a loop that tests i < n */
  bool wide = points > INT32_MAX - (1 << 24);
  for (int32_t b = 0; b < l->nbuf && points > 0; b++) {
    int64_t e = iabs(l->bind[b].offset);
    for (int i = 0; i < K->ndim; i++) e += (K->shape[i] - 1) * iabs(l->bind[b].strides[i]);
    if (e > INT32_MAX) wide = true;
  }
  k->index_bits = wide ? 64 : 32;
  SchedKernel *sk = &l->s->kernels[kidx];
  sk->ir = k;
  memset(sk->shape, 0, sizeof sk->shape);
  memcpy(sk->shape, K->shape, (size_t)K->ndim * sizeof *K->shape);
  sk->bind = l->bind;
  sk->params = l->nparam ? l->param_word : NULL;
  sk->param_node = l->nparam ? l->param_node : NULL;
  return LOOM_OK;
}

LoomStatus pass_lower(IrModule *m, Diag *d) {
  FusionPlan *p = m->plan;
  LOOM_ASSERT(d, p != NULL);
  IrGraph *g = m->graph;
  Lower l;
  memset(&l, 0, sizeof l);
  l.m = m;
  l.g = g;
  l.p = p;
  l.d = d;
  l.s = arena_alloc(m->arena, sizeof *l.s);
  l.temp_of = arena_alloc(m->arena, (size_t)(p->nnodes > 0 ? p->nnodes : 1) * sizeof *l.temp_of);
  l.out_of = arena_alloc(m->arena, (size_t)(p->nnodes > 0 ? p->nnodes : 1) * sizeof *l.out_of);
  size_t nmemo = (size_t)(p->nnodes > 0 ? p->nnodes : 1) * 2;
  l.memo = arena_alloc(m->arena, nmemo * sizeof *l.memo);
  if (!l.s || !l.temp_of || !l.out_of || !l.memo) return pass_lower_oom(&l);
  for (size_t i = 0; i < nmemo; i++) l.memo[i] = -1;
  l.s->nkernel = p->nkernel;
  l.s->kernels = arena_alloc(m->arena, (size_t)(p->nkernel > 0 ? p->nkernel : 1) * sizeof *l.s->kernels);
  l.s->temps = arena_alloc(m->arena, (size_t)(p->nnodes > 0 ? p->nnodes : 1) * sizeof *l.s->temps);
  if (!l.s->kernels || !l.s->temps) return pass_lower_oom(&l);
  for (int32_t x = 0; x < p->nnodes; x++) l.temp_of[x] = l.out_of[x] = -1;
  /* A root that later kernels read is read from its output when that output is the node's contiguous
   * storage of the node's dtype (pass_root_output_contiguous), not stored twice (output and temp): amp's
   * unscale (g32 = g * s, and any(~isfinite(g32))) wrote 14 bytes a point instead of 10. A root a call
   * stores is read from its output always (fuse_calls.c made sure it may). */
  for (int32_t k = 0; k < p->nkernel; k++) {
    const FusedKernel *K = &p->kernels[k];
    for (int part = 0; part < 5; part++) {
      int32_t cnt = part == 0 ? K->nreduce : part == 1 ? K->nmap : part == 2 ? K->nfinal : part == 3 ? K->nside
                  : K->is_call ? 1 : 0;
      const int32_t *arr = part == 0 ? K->reduces : part == 1 ? K->maps : part == 2 ? K->finals : part == 3 ? K->sides
                         : &K->call_store;
      for (int32_t j = 0; j < cnt; j++) {
        int32_t x = arr[j];
        if (part < 4 && (!p->needs_temp[x] || g->nodes[x].kind == IR_SCATTER)) continue;
        for (int32_t i = 0; i < m->nroots && l.out_of[x] < 0; i++)
          if (m->roots[i] == x && (part == 4 || (m->outs[i].dtype == g->nodes[x].dtype && pass_root_output_contiguous(m, i))))
            l.out_of[x] = i;
      }
    }
  }
  for (int32_t k = 0; k < p->nkernel; k++) { /* temps in the order their writers run */
    const FusedKernel *K = &p->kernels[k];
    if (K->is_call) {
      int32_t x = K->call_store;
      if (p->needs_temp[x] && l.out_of[x] < 0 && l.temp_of[x] < 0) {
        l.temp_of[x] = l.s->ntemp;
        l.s->temps[l.s->ntemp].dtype = g->nodes[x].dtype;
        l.s->temps[l.s->ntemp].nelem = ir_numel(g->nodes[x].ndim, g->nodes[x].shape);
        l.s->ntemp++;
      }
      continue;
    }
    for (int part = 0; part < 4; part++) {
      int32_t cnt = part == 0 ? K->nreduce : part == 1 ? K->nmap : part == 2 ? K->nfinal : K->nside;
      const int32_t *arr = part == 0 ? K->reduces : part == 1 ? K->maps : part == 2 ? K->finals : K->sides;
      for (int32_t i = 0; i < cnt; i++) {
        int32_t x = arr[i];
        if (!p->needs_temp[x] || l.temp_of[x] >= 0 || l.out_of[x] >= 0) continue;
        l.temp_of[x] = l.s->ntemp;
        l.s->temps[l.s->ntemp].dtype = g->nodes[x].dtype;
        l.s->temps[l.s->ntemp].nelem = ir_numel(g->nodes[x].ndim, g->nodes[x].shape);
        l.s->ntemp++;
      }
    }
  }
  for (int32_t k = 0; k < p->nkernel; k++) {
    LoomStatus st = lower_kernel(&l, k);
    if (st != LOOM_OK) return st;
  }
  m->schedule = l.s;
  return LOOM_OK;
}
