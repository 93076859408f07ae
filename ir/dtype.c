/* SPDX-License-Identifier: Apache-2.0 */
/* dtype.c: dtype facts, NumPy 2 promotion, the op table and the public name functions.
 *
 * Approach: promotion is computed from kinds and sizes rather than a pasted 15x15 table:
 * bool joins anything; same kind takes the wider (float16 with bfloat16, neither holding the other,
 * takes float32); signed with unsigned takes the next signed type wide enough for both (uint64 with
 * a signed type has none: float64); an integer with a float takes the float wide enough to hold the
 * integer exactly enough (8-bit -> float16, 16-bit -> float32, wider -> float64), as NumPy's
 * promote_types does; anything with a complex promotes the parts' dtypes and takes the complex of
 * the result (complex64 + int32 -> complex128). bfloat16 sits in the lattice where ml_dtypes, JAX and
 * PyTorch put it: int8/uint8 + bfloat16 -> bfloat16, int16 + bfloat16 -> float32. tests/c/
 * test_promotion.c checks the full table. The op table is generated from include/loom/ops_public.def
 * by an X-macro.
 */
#include <string.h>

#include "ir/ir.h"

typedef struct DTypeFacts {
  const char *name, *short_name;
  DKind kind;
  int bits;
} DTypeFacts;

static const DTypeFacts dtype_facts[LOOM_DTYPE_COUNT] = {
    [LOOM_BOOL] = {"bool", "b1", DK_BOOL, 8},
    [LOOM_INT8] = {"int8", "i8", DK_INT, 8},
    [LOOM_INT16] = {"int16", "i16", DK_INT, 16},
    [LOOM_INT32] = {"int32", "i32", DK_INT, 32},
    [LOOM_INT64] = {"int64", "i64", DK_INT, 64},
    [LOOM_UINT8] = {"uint8", "u8", DK_UINT, 8},
    [LOOM_UINT16] = {"uint16", "u16", DK_UINT, 16},
    [LOOM_UINT32] = {"uint32", "u32", DK_UINT, 32},
    [LOOM_UINT64] = {"uint64", "u64", DK_UINT, 64},
    [LOOM_FLOAT16] = {"float16", "f16", DK_FLOAT, 16},
    [LOOM_FLOAT32] = {"float32", "f32", DK_FLOAT, 32},
    [LOOM_FLOAT64] = {"float64", "f64", DK_FLOAT, 64},
    [LOOM_BFLOAT16] = {"bfloat16", "bf16", DK_FLOAT, 16},
    [LOOM_COMPLEX64] = {"complex64", "c64", DK_COMPLEX, 64},
    [LOOM_COMPLEX128] = {"complex128", "c128", DK_COMPLEX, 128},
};

static bool dtype_ok(LoomDType t) { return (unsigned)t < LOOM_DTYPE_COUNT; }

DKind dtype_kind(LoomDType t) { return dtype_ok(t) ? dtype_facts[t].kind : DK_BOOL; }
int dtype_bits(LoomDType t) { return dtype_ok(t) ? dtype_facts[t].bits : 0; }
bool dtype_is_int(LoomDType t) {
  DKind k = dtype_kind(t);
  return dtype_ok(t) && (k == DK_INT || k == DK_UINT);
}
bool dtype_is_float(LoomDType t) { return dtype_ok(t) && dtype_kind(t) == DK_FLOAT; }
bool dtype_is_complex(LoomDType t) { return dtype_ok(t) && dtype_kind(t) == DK_COMPLEX; }

LoomDType dtype_real_of(LoomDType t) {
  return t == LOOM_COMPLEX64 ? LOOM_FLOAT32 : t == LOOM_COMPLEX128 ? LOOM_FLOAT64 : t;
}

static LoomDType signed_of_bits(int bits) {
  switch (bits) {
  case 8: return LOOM_INT8;
  case 16: return LOOM_INT16;
  case 32: return LOOM_INT32;
  default: return LOOM_INT64;
  }
}

LoomDType dtype_float_of(LoomDType t) {
  if (!dtype_ok(t)) return LOOM_FLOAT64;
  switch (dtype_kind(t)) {
  case DK_FLOAT:
  case DK_COMPLEX: return t;
  case DK_BOOL: return LOOM_FLOAT16;
  default: break;
  }
  int bits = dtype_bits(t);
  return bits == 8 ? LOOM_FLOAT16 : bits == 16 ? LOOM_FLOAT32 : LOOM_FLOAT64;
}

LoomDType dtype_complex_of(LoomDType t) {
  LoomDType f = dtype_float_of(t);
  if (dtype_kind(f) == DK_COMPLEX) return f;
  return f == LOOM_FLOAT64 ? LOOM_COMPLEX128 : LOOM_COMPLEX64;
}

LoomDType dtype_promote(LoomDType a, LoomDType b) {
  if (!dtype_ok(a) || !dtype_ok(b)) return LOOM_DTYPE_COUNT;
  if (a == b) return a;
  DKind ka = dtype_kind(a), kb = dtype_kind(b);
  if (ka == DK_BOOL) return b;
  if (kb == DK_BOOL) return a;
  if (ka == DK_COMPLEX || kb == DK_COMPLEX) return dtype_complex_of(dtype_promote(dtype_real_of(a), dtype_real_of(b)));
  int ba = dtype_bits(a), bb = dtype_bits(b);
  if (ka == kb && ba == bb) return LOOM_FLOAT32; /* float16 with bfloat16: neither holds the other */
  if (ka == kb) return ba >= bb ? a : b;
  if (ka == DK_FLOAT || kb == DK_FLOAT) {
    LoomDType f = ka == DK_FLOAT ? a : b, i = ka == DK_FLOAT ? b : a;
    LoomDType need = dtype_float_of(i);
    return dtype_bits(need) > dtype_bits(f) ? need : f;
  }
  /* one signed, one unsigned */
  LoomDType s = ka == DK_INT ? a : b, u = ka == DK_INT ? b : a;
  int bs = dtype_bits(s), bu = dtype_bits(u);
  if (bs > bu) return s;
  if (bu == 64) return LOOM_FLOAT64;
  return signed_of_bits(2 * bu);
}

LoomDType dtype_compute(LoomDType t) { return t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 ? LOOM_FLOAT32 : t; }

const char *dtype_short_name(LoomDType t) { return dtype_ok(t) ? dtype_facts[t].short_name : "?"; }

bool dtype_from_short_name(const char *s, LoomDType *out) {
  if (!s) return false;
  for (int t = 0; t < LOOM_DTYPE_COUNT; t++)
    if (strcmp(s, dtype_facts[t].short_name) == 0) {
      if (out) *out = (LoomDType)t;
      return true;
    }
  return false;
}

/* ---- ops ------------------------------------------------------------------------------------------ */

/* Lower-case names, computed once into a constant table by the same X-macro (no runtime state). */
typedef struct OpName {
  char s[16];
} OpName;
#define LC(c) ((c) >= 'A' && (c) <= 'Z' ? (char)((c) - 'A' + 'a') : (c))
#define LC_AT(str, i) LC((str "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0")[i]) /* padded: [i] is in bounds */
#define LOWER16(str)                                                                               \
  {{LC_AT(str, 0), LC_AT(str, 1), LC_AT(str, 2), LC_AT(str, 3), LC_AT(str, 4), LC_AT(str, 5),         \
    LC_AT(str, 6), LC_AT(str, 7), LC_AT(str, 8), LC_AT(str, 9), LC_AT(str, 10), LC_AT(str, 11),       \
    LC_AT(str, 12), LC_AT(str, 13), LC_AT(str, 14), '\0'}}
static const OpName op_names[LOOM_OP_COUNT] = {
#define LOOM_OP(name, kind, arity, rule, doc) [LOOM_OP_##name] = LOWER16(#name),
#include "loom/ops_public.def"
#undef LOOM_OP
};
#undef LOWER16
#undef LC_AT
#undef LC

static const OpInfo op_table[LOOM_OP_COUNT] = {
#define LOOM_OP(name, kind, arity, rule, doc)                                                       \
  [LOOM_OP_##name] = {op_names[LOOM_OP_##name].s, OPK_##kind, arity, RULE_##rule, doc},
#include "loom/ops_public.def"
#undef LOOM_OP
};

const OpInfo *op_info(LoomOp op) {
  if ((unsigned)op >= LOOM_OP_COUNT) return NULL;
  return &op_table[op];
}

const char *loom_op_name(LoomOp op) {
  if ((unsigned)op >= LOOM_OP_COUNT) return NULL;
  return op_names[op].s;
}

bool op_from_name(const char *name, LoomOp *out) {
  if (!name) return false;
  for (int i = 0; i < LOOM_OP_COUNT; i++)
    if (strcmp(name, op_names[i].s) == 0) {
      if (out) *out = (LoomOp)i;
      return true;
    }
  return false;
}

static const char *const reduce_names[LOOM_REDUCE_COUNT] = {
    "sum", "prod", "min", "max", "mean", "any", "all", "argmin", "argmax"};

const char *reduce_op_name(LoomReduceOp op) {
  return (unsigned)op < LOOM_REDUCE_COUNT ? reduce_names[op] : NULL;
}

bool reduce_op_from_name(const char *name, LoomReduceOp *out) {
  if (!name) return false;
  for (int i = 0; i < LOOM_REDUCE_COUNT; i++)
    if (strcmp(name, reduce_names[i]) == 0) {
      if (out) *out = (LoomReduceOp)i;
      return true;
    }
  return false;
}

LoomDType ir_elem_operand_dtype(LoomOp op, LoomDType result, LoomDType a, LoomDType b) {
  const OpInfo *info = op_info(op);
  if (!info) return result;
  switch (info->rule) {
  case RULE_PRED:
    return op == LOOM_OP_LOGICAL_NOT ? LOOM_BOOL : a; /* isnan & co. look at the value itself */
  case RULE_COMPARE: return dtype_promote(a, b);
  case RULE_LOGICAL: return LOOM_BOOL;
  case RULE_REAL: return a;                      /* abs, real, imag read the complex value */
  case RULE_COMPLEX: return dtype_real_of(result); /* complex(re, im) pairs two parts */
  default: return result; /* SAME*, FLOAT*, INT, PROMOTE*, TRUEDIV, BITWISE, SHIFT, WHERE values */
  }
}

LoomDType ir_elem_value_dtype(LoomOp op, LoomDType od) {
  const OpInfo *info = op_info(op);
  if (!info) return od;
  switch (info->rule) {
  case RULE_PRED:
  case RULE_COMPARE:
  case RULE_LOGICAL: return LOOM_BOOL;
  case RULE_REAL: return dtype_real_of(od);
  case RULE_COMPLEX: return dtype_complex_of(od);
  default: return od;
  }
}

/* ---- public names ----------------------------------------------------------------------------------- */
const char *loom_status_name(LoomStatus status) {
  switch (status) {
  case LOOM_OK: return "LOOM_OK";
  case LOOM_ERR_INVALID_ARGUMENT: return "LOOM_ERR_INVALID_ARGUMENT";
  case LOOM_ERR_SHAPE: return "LOOM_ERR_SHAPE";
  case LOOM_ERR_DTYPE: return "LOOM_ERR_DTYPE";
  case LOOM_ERR_AXIS: return "LOOM_ERR_AXIS";
  case LOOM_ERR_OUT_OF_MEMORY: return "LOOM_ERR_OUT_OF_MEMORY";
  case LOOM_ERR_UNSUPPORTED: return "LOOM_ERR_UNSUPPORTED";
  case LOOM_ERR_BACKEND: return "LOOM_ERR_BACKEND";
  case LOOM_ERR_INTERNAL: return "LOOM_ERR_INTERNAL";
  case LOOM_ERR_LINALG: return "LOOM_ERR_LINALG";
  }
  return "LOOM_ERR_UNKNOWN";
}

const char *loom_dtype_name(LoomDType dtype) { return dtype_ok(dtype) ? dtype_facts[dtype].name : NULL; }

size_t loom_dtype_size(LoomDType dtype) { return dtype_ok(dtype) ? (size_t)dtype_facts[dtype].bits / 8 : 0; }
