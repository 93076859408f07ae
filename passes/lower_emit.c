/* SPDX-License-Identifier: Apache-2.0 */
/* lower_emit.c: pass_lower's instruction emission and storage rounding. Instructions of the kernel
 * being built are value-numbered (equal bytes -> the same instruction, through a hash table), and each
 * carries `exact` bits: whether its value is already a float16 / bfloat16 value, so rounding to that
 * storage dtype can be skipped (see lower.c's header for the rules).
 *
 * Contract: an instruction is memset (pass_lower_init_instr) before it is filled; emission returns the
 * index of an equal earlier instruction when there is one; rounding helpers return float32 values.
 */
#include <string.h>

#include "passes/lower_internal.h"

void *pass_lower_grow(Lower *l, void *arr, int32_t n, int32_t *cap, size_t elem) {
  if (n < *cap) return arr;
  int32_t ncap = *cap ? *cap * 2 : 16;
  void *na = arena_alloc(l->m->arena, (size_t)ncap * elem);
  if (!na) return NULL;
  if (n) memcpy(na, arr, (size_t)n * elem);
  *cap = ncap;
  return na;
}

LoomStatus pass_lower_oom(Lower *l) { return diag_error(l->d, LOOM_ERR_OUT_OF_MEMORY, "lower: out of memory"); }

static uint32_t instr_hash(const KInstr *in) { return (uint32_t)ir_hash_bytes(in, sizeof *in, 0); }


/* The exact bit of storage dtype s (float16, bfloat16); 0 for others. */
uint8_t pass_lower_exact_bit(LoomDType s) {
  return s == LOOM_FLOAT16 ? EXACT_F16 : s == LOOM_BFLOAT16 ? EXACT_BF16 : 0;
}

/* The storage dtypes whose values instruction `in` (about to be appended) yields exactly, as bits. */
static uint8_t is_exact(const Lower *l, const KInstr *in) {
  switch (in->kind) {
  case KI_LOAD: return pass_lower_exact_bit((LoomDType)l->bufs[in->buf].dtype);
  case KI_CONST: {
    if (!dtype_is_float((LoomDType)in->dtype)) return 0;
    if (in->value.f != in->value.f) return EXACT_F16 | EXACT_BF16;
    return (uint8_t)((ir_scalar_canon(LOOM_FLOAT16, in->value).f == in->value.f ? EXACT_F16 : 0) |
                     (ir_scalar_canon(LOOM_BFLOAT16, in->value).f == in->value.f ? EXACT_BF16 : 0));
  }
  case KI_CAST: {
    LoomDType from = (LoomDType)l->ins[in->src[0]].dtype, to = (LoomDType)in->dtype;
    if (pass_lower_exact_bit(from)) return pass_lower_exact_bit(from);
    if (from == LOOM_BOOL || from == LOOM_INT8 || from == LOOM_UINT8) return EXACT_F16 | EXACT_BF16;
    if (dtype_is_float(from) && dtype_is_float(to)) return l->exact[in->src[0]]; /* f32 <-> f64 */
    return 0;
  }
  case KI_ACC: { /* min / max pick one of the folded values */
    const KPhase *ph = &l->phases[in->phase];
    return ph->reduce_op == LOOM_REDUCE_MIN || ph->reduce_op == LOOM_REDUCE_MAX ? l->exact[ph->value] : 0;
  }
  case KI_ELEM:
    switch (in->op) {
    case LOOM_OP_NEG: case LOOM_OP_ABS: case LOOM_OP_SIGN: case LOOM_OP_FLOOR: case LOOM_OP_CEIL:
    case LOOM_OP_TRUNC: case LOOM_OP_RINT:
      return dtype_is_float((LoomDType)in->dtype) ? l->exact[in->src[0]] : 0;
    case LOOM_OP_COPYSIGN: case LOOM_OP_MAXIMUM: case LOOM_OP_MINIMUM: case LOOM_OP_FMAX: case LOOM_OP_FMIN:
      return dtype_is_float((LoomDType)in->dtype) ? l->exact[in->src[0]] & l->exact[in->src[1]] : 0;
    case LOOM_OP_WHERE: return l->exact[in->src[1]] & l->exact[in->src[2]];
    default: return 0;
    }
  default: return 0;
  }
}

/* Appends an instruction, or returns the identical one already emitted (CSE through a hash table;
 * instructions are memset before they are filled, so equal ones have equal bytes). */
LoomStatus pass_lower_emit(Lower *l, const KInstr *in, int32_t *out) {
  if ((l->nins + 1) * 2 > l->itcap) {
    int32_t ncap = l->itcap ? l->itcap * 2 : 64;
    int32_t *nt = arena_alloc(l->m->arena, (size_t)ncap * sizeof *nt);
    if (!nt) return pass_lower_oom(l);
    for (int32_t i = 0; i < ncap; i++) nt[i] = -1;
    for (int32_t i = 0; i < l->nins; i++) {
      uint32_t j = instr_hash(&l->ins[i]) & (uint32_t)(ncap - 1);
      while (nt[j] >= 0) j = (j + 1) & (uint32_t)(ncap - 1);
      nt[j] = i;
    }
    l->itab = nt;
    l->itcap = ncap;
  }
  uint32_t mask = (uint32_t)l->itcap - 1, j = instr_hash(in) & mask;
  for (; l->itab[j] >= 0; j = (j + 1) & mask)
    if (memcmp(&l->ins[l->itab[j]], in, sizeof *in) == 0) {
      *out = l->itab[j];
      return LOOM_OK;
    }
  if (l->nins == l->capins) {
    int32_t cap = l->capins;
    KInstr *na = pass_lower_grow(l, l->ins, l->nins, &cap, sizeof *na);
    uint8_t *ne = arena_alloc(l->m->arena, (size_t)(cap > 0 ? cap : 1));
    if (!na || !ne) return pass_lower_oom(l);
    if (l->nins) memcpy(ne, l->exact, (size_t)l->nins);
    l->ins = na;
    l->exact = ne;
    l->capins = cap;
  }
  l->ins[l->nins] = *in;
  l->exact[l->nins] = is_exact(l, in);
  l->itab[j] = l->nins;
  *out = l->nins++;
  return LOOM_OK;
}

void pass_lower_init_instr(KInstr *in, int kind, LoomDType dtype) {
  memset(in, 0, sizeof *in);
  in->kind = (uint8_t)kind;
  in->dtype = (uint8_t)dtype;
  in->src[0] = in->src[1] = in->src[2] = -1;
  in->buf = -1;
  in->phase = -1;
}

LoomStatus pass_lower_cast_to(Lower *l, int32_t x, LoomDType dt, int32_t *out) {
  if (l->ins[x].dtype == dt) {
    *out = x;
    return LOOM_OK;
  }
  KInstr in;
  pass_lower_init_instr(&in, KI_CAST, dt);
  in.src[0] = x;
  return pass_lower_emit(l, &in, out);
}

/* The float32 value x rounded to storage dtype s (float16, bfloat16), as NumPy / ml_dtypes round
 * every such result: KI_CAST to s then back to f32, or x itself when it is an s value already. */
LoomStatus pass_lower_round_to(Lower *l, int32_t x, LoomDType s, int32_t *out) {
  if ((l->exact[x] & pass_lower_exact_bit(s)) && l->ins[x].dtype == LOOM_FLOAT32) {
    *out = x;
    return LOOM_OK;
  }
  int32_t h;
  LoomStatus st = pass_lower_cast_to(l, x, s, &h);
  if (st != LOOM_OK) return st;
  return pass_lower_cast_to(l, h, LOOM_FLOAT32, out);
}

/* Helpers of round16_f64: a KI_ELEM of the given result dtype. */
static LoomStatus elem2(Lower *l, LoomOp op, LoomDType t, int32_t a, int32_t b, int32_t *out) {
  KInstr in;
  pass_lower_init_instr(&in, KI_ELEM, t);
  in.op = (uint16_t)op;
  in.src[0] = a;
  in.src[1] = b;
  return pass_lower_emit(l, &in, out);
}

static LoomStatus const_f64(Lower *l, double v, int32_t *out) {
  KInstr in;
  pass_lower_init_instr(&in, KI_CONST, LOOM_FLOAT64);
  in.value.f = v;
  return pass_lower_emit(l, &in, out);
}

/* The float64 value x rounded once to float16 (NumPy's float64 -> float16 cast), as a float32
 * instruction. Hosts convert double -> half through a runtime function the JIT may not have, so the
 * rounding goes through float32: h = RN16(RN32(x)) is right unless RN32(x) = y landed exactly on a
 * float16 midpoint it did not start on; then the other candidate h' = 2y - h (exact) is nearer to x.
 * Past the largest float16 (65504), RN32 can reach the midpoint 65520 and make inf from a finite
 * below it: that case gives +-65504. Only exact double operations, compares and selects. */
LoomStatus pass_lower_round16_f64(Lower *l, int32_t x, int32_t *out) {
  LoomStatus st;
  int32_t y, h16, hf, hd, yd, two, twoy, hp, hp32, hp16, hpf, hpd, rep, dxh, dxp, ah, ap, closer, inexact, off, use1,
      use, r, big, ax, lim, small, fix, sig, ok;
  if ((st = pass_lower_cast_to(l, x, LOOM_FLOAT32, &y)) || (st = pass_lower_cast_to(l, y, LOOM_FLOAT16, &h16)) ||
      (st = pass_lower_cast_to(l, h16, LOOM_FLOAT32, &hf)) || (st = pass_lower_cast_to(l, hf, LOOM_FLOAT64, &hd)) ||
      (st = pass_lower_cast_to(l, y, LOOM_FLOAT64, &yd)) || (st = const_f64(l, 2.0, &two)) ||
      (st = elem2(l, LOOM_OP_MUL, LOOM_FLOAT64, two, yd, &twoy)) || (st = elem2(l, LOOM_OP_SUB, LOOM_FLOAT64, twoy, hd, &hp)))
    return st;
  /* h' representable in float16: f64 -> f32 -> f16 -> f32 -> f64 gives it back */
  if ((st = pass_lower_cast_to(l, hp, LOOM_FLOAT32, &hp32)) || (st = pass_lower_cast_to(l, hp32, LOOM_FLOAT16, &hp16)) ||
      (st = pass_lower_cast_to(l, hp16, LOOM_FLOAT32, &hpf)) || (st = pass_lower_cast_to(l, hpf, LOOM_FLOAT64, &hpd)) ||
      (st = elem2(l, LOOM_OP_EQ, LOOM_BOOL, hpd, hp, &rep)))
    return st;
  if ((st = elem2(l, LOOM_OP_SUB, LOOM_FLOAT64, x, hd, &dxh)) || (st = elem2(l, LOOM_OP_SUB, LOOM_FLOAT64, x, hp, &dxp)) ||
      (st = elem2(l, LOOM_OP_ABS, LOOM_FLOAT64, dxh, -1, &ah)) || (st = elem2(l, LOOM_OP_ABS, LOOM_FLOAT64, dxp, -1, &ap)) ||
      (st = elem2(l, LOOM_OP_LT, LOOM_BOOL, ap, ah, &closer)) || (st = elem2(l, LOOM_OP_NE, LOOM_BOOL, yd, x, &inexact)) ||
      (st = elem2(l, LOOM_OP_NE, LOOM_BOOL, yd, hd, &off)) ||
      (st = elem2(l, LOOM_OP_LOGICAL_AND, LOOM_BOOL, inexact, off, &use1)) ||
      (st = elem2(l, LOOM_OP_LOGICAL_AND, LOOM_BOOL, use1, rep, &use)) ||
      (st = elem2(l, LOOM_OP_LOGICAL_AND, LOOM_BOOL, use, closer, &use)))
    return st;
  KInstr in;
  pass_lower_init_instr(&in, KI_ELEM, LOOM_FLOAT64);
  in.op = LOOM_OP_WHERE;
  in.src[0] = use;
  in.src[1] = hp;
  in.src[2] = hd;
  if ((st = pass_lower_emit(l, &in, &r)) != LOOM_OK) return st;
  /* inf from a finite x below 65520: +-65504 */
  if ((st = elem2(l, LOOM_OP_ISINF, LOOM_BOOL, hd, -1, &big)) || (st = elem2(l, LOOM_OP_ABS, LOOM_FLOAT64, x, -1, &ax)) ||
      (st = const_f64(l, 65520.0, &lim)) || (st = elem2(l, LOOM_OP_LT, LOOM_BOOL, ax, lim, &small)) ||
      (st = elem2(l, LOOM_OP_LOGICAL_AND, LOOM_BOOL, big, small, &fix)) || (st = const_f64(l, 65504.0, &sig)) ||
      (st = elem2(l, LOOM_OP_COPYSIGN, LOOM_FLOAT64, sig, x, &sig)))
    return st;
  pass_lower_init_instr(&in, KI_ELEM, LOOM_FLOAT64);
  in.op = LOOM_OP_WHERE;
  in.src[0] = fix;
  in.src[1] = sig;
  in.src[2] = r;
  if ((st = pass_lower_emit(l, &in, &ok)) != LOOM_OK) return st;
  if ((st = pass_lower_cast_to(l, ok, LOOM_FLOAT32, out)) != LOOM_OK) return st;
  l->exact[*out] |= EXACT_F16; /* a float16 value by construction */
  return LOOM_OK;
}

/* Whether a value of dtype t reaches bfloat16 with one rounding only when cast directly (float32
 * does not hold every t value): codegen's cast to bfloat16 rounds these once. */
static bool bf16_wide(LoomDType t) {
  return t == LOOM_FLOAT64 || t == LOOM_COMPLEX128 || (dtype_is_int(t) && dtype_bits(t) >= 32);
}

/* Value x (any non-storage dtype) rounded once to storage dtype s, as a float32 instruction (complex:
 * its real part, as every cast to a real dtype). for_store: the value only goes to stores into s
 * buffers, which round it themselves: returned unrounded where their rounding is the single one. */
LoomStatus pass_lower_round_once(Lower *l, int32_t x, LoomDType s, bool for_store, int32_t *out) {
  LoomDType from = (LoomDType)l->ins[x].dtype;
  LoomStatus st;
  if (s == LOOM_BFLOAT16 && bf16_wide(from)) {
    if (for_store) return (*out = x, LOOM_OK);
    if (from == LOOM_COMPLEX128 && (st = pass_lower_cast_to(l, x, LOOM_FLOAT64, &x)) != LOOM_OK) return st;
    int32_t h;
    if ((st = pass_lower_cast_to(l, x, LOOM_BFLOAT16, &h)) != LOOM_OK) return st;
    return pass_lower_cast_to(l, h, LOOM_FLOAT32, out);
  }
  if (s == LOOM_FLOAT16 && (from == LOOM_FLOAT64 || from == LOOM_COMPLEX128)) {
    if (from == LOOM_COMPLEX128 && (st = pass_lower_cast_to(l, x, LOOM_FLOAT64, &x)) != LOOM_OK) return st;
    return pass_lower_round16_f64(l, x, out);
  }
  /* float32 holds x exactly (or, for float16, every x it does not hold is past float16's range) */
  if ((st = pass_lower_cast_to(l, x, LOOM_FLOAT32, &x)) != LOOM_OK) return st;
  return for_store ? (*out = x, LOOM_OK) : pass_lower_round_to(l, x, s, out);
}
