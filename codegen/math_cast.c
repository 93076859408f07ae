/* SPDX-License-Identifier: Apache-2.0 */
/* math_cast.c: dtype conversions in LLVM IR (cg_cast, cg_from_mem, cg_to_mem) for every target, split from
 * math.c. NumPy's cast rules: float -> int truncates (out of range and NaN give what NumPy's C casts give on
 * x86, see cg_cast), int -> float rounds to nearest, bool is x != 0. bfloat16 lives in memory as its 16 bits
 * (i16) and is computed in float32: widening is a shift, narrowing rounds to nearest even with integer
 * sequences (a NaN keeps its sign and top payload bits), so every target computes the same bits without a
 * bfloat16 instruction or libcall.
 */
#include "codegen/cg_llvm.h"

static bool real_float(LoomDType t) { return dtype_kind(t) == DK_FLOAT && t != LOOM_BFLOAT16; }
static bool is_complex(LoomDType t) { return dtype_kind(t) == DK_COMPLEX; }
static bool is_sint(LoomDType t) { return dtype_kind(t) == DK_INT; }

/* ---- bfloat16 -------------------------------------------------------------------------------------------- */

static LLVMValueRef i32c(CgMath *m, unsigned long long v) { return LLVMConstInt(LLVMInt32TypeInContext(m->c), v, 0); }

/* bfloat16 bits (i16) -> float32 (exact). */
static LLVMValueRef bf16_to_f32(CgMath *m, LLVMValueRef v) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef w = LLVMBuildShl(b, LLVMBuildZExt(b, v, LLVMInt32TypeInContext(m->c), ""), i32c(m, 16), "");
  return LLVMBuildBitCast(b, w, LLVMFloatTypeInContext(m->c), "");
}

/* float32 -> bfloat16 bits, rounded to nearest even. A NaN keeps its sign and the top 7 bits of
 * its payload (so a bfloat16 NaN survives a load and store bit for bit), with the quiet bit set when
 * those bits are all zero (they would read as inf): the canonical float NaN gives 0x7fc0 as ml_dtypes. */
static LLVMValueRef f32_to_bf16(CgMath *m, LLVMValueRef f) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), i16 = LLVMInt16TypeInContext(m->c);
  LLVMValueRef w = LLVMBuildBitCast(b, f, i32, "");
  LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, w, i32c(m, 16), ""), i32c(m, 1), "");
  LLVMValueRef r = LLVMBuildLShr(b, LLVMBuildAdd(b, w, LLVMBuildAdd(b, lsb, i32c(m, 0x7fff), ""), ""), i32c(m, 16), "");
  LLVMValueRef hi = LLVMBuildLShr(b, w, i32c(m, 16), "");
  LLVMValueRef nopayload = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, hi, i32c(m, 0x7f), ""), i32c(m, 0), "");
  LLVMValueRef qnan = LLVMBuildSelect(b, nopayload, LLVMBuildOr(b, hi, i32c(m, 0x40), ""), hi, "");
  LLVMValueRef nan = LLVMBuildFCmp(b, LLVMRealUNO, f, f, "");
  return LLVMBuildTrunc(b, LLVMBuildSelect(b, nan, qnan, r, ""), i16, "");
}

/* float64 -> bfloat16 bits with one rounding: float32 rounded to odd (toward zero, then the last bit
 * set when inexact: 29 spare bits keep the second rounding exact), then f32_to_bf16. */
static LLVMValueRef f64_to_bf16(CgMath *m, LLVMValueRef d) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), f32 = LLVMFloatTypeInContext(m->c);
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c);
  LLVMValueRef f = LLVMBuildFPTrunc(b, d, f32, "");
  LLVMValueRef back = LLVMBuildFPExt(b, f, f64, "");
  LLVMValueRef w = LLVMBuildBitCast(b, f, i32, "");
  LLVMValueRef ad = cg_intrinsic(m, "llvm.fabs", &f64, 1, &d, 1), ab = cg_intrinsic(m, "llvm.fabs", &f64, 1, &back, 1);
  LLVMValueRef away = LLVMBuildFCmp(b, LLVMRealOGT, ab, ad, ""); /* rounded away from zero: step back */
  w = LLVMBuildSelect(b, away, LLVMBuildSub(b, w, i32c(m, 1), ""), w, "");
  LLVMValueRef inexact = LLVMBuildFCmp(b, LLVMRealUNE, back, d, ""); /* NaN too: stays NaN */
  w = LLVMBuildSelect(b, inexact, LLVMBuildOr(b, w, i32c(m, 1), ""), w, "");
  return f32_to_bf16(m, LLVMBuildBitCast(b, w, f32, ""));
}

/* A 64-bit integer (signed or not) -> bfloat16 bits, rounded once: normalize the magnitude, keep 8
 * significant bits, round to nearest even on the rest. */
static LLVMValueRef i64_to_bf16(CgMath *m, LLVMValueRef v, bool sg) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(m->c), i16 = LLVMInt16TypeInContext(m->c), i1 = LLVMInt1TypeInContext(m->c);
  LLVMValueRef zero = LLVMConstInt(i64, 0, 0);
  LLVMValueRef neg = sg ? LLVMBuildICmp(b, LLVMIntSLT, v, zero, "") : LLVMConstInt(i1, 0, 0);
  LLVMValueRef mag = LLVMBuildSelect(b, neg, LLVMBuildSub(b, zero, v, ""), v, ""); /* INT64_MIN: 2^63 as unsigned */
  LLVMValueRef args[2] = {mag, LLVMConstInt(i1, 1, 0)}; /* ctlz(0) is poison: 0 is handled below */
  LLVMValueRef lz = cg_intrinsic(m, "llvm.ctlz", &i64, 1, args, 2);
  LLVMValueRef norm = LLVMBuildShl(b, mag, LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, mag, zero, ""), zero, lz, ""), "");
  LLVMValueRef q = LLVMBuildLShr(b, norm, LLVMConstInt(i64, 56, 0), "");
  LLVMValueRef rest = LLVMBuildAnd(b, norm, LLVMConstInt(i64, (1ull << 56) - 1, 0), "");
  LLVMValueRef half = LLVMConstInt(i64, 1ull << 55, 0);
  LLVMValueRef up = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntUGT, rest, half, ""),
                                LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, rest, half, ""),
                                             LLVMBuildTrunc(b, q, i1, ""), ""), "");
  q = LLVMBuildAdd(b, q, LLVMBuildZExt(b, up, i64, ""), ""); /* 128..256: 256 carries into the exponent */
  LLVMValueRef e = LLVMBuildSub(b, LLVMConstInt(i64, 63 + 127, 0), lz, ""); /* biased exponent of 2^(63-lz) */
  /* bits = e << 7 + (q - 128): q == 256 adds one to the exponent and clears the fraction, as wanted */
  LLVMValueRef bits = LLVMBuildAdd(b, LLVMBuildShl(b, e, LLVMConstInt(i64, 7, 0), ""),
                                   LLVMBuildSub(b, q, LLVMConstInt(i64, 128, 0), ""), "");
  bits = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, mag, zero, ""), zero, bits, "");
  bits = LLVMBuildOr(b, bits, LLVMBuildSelect(b, neg, LLVMConstInt(i64, 0x8000, 0), zero, ""), "");
  return LLVMBuildTrunc(b, bits, i16, "");
}

/* v of dtype `from` (not bfloat16) -> bfloat16 bits. */
static LLVMValueRef to_bf16(CgMath *m, LoomDType from, LLVMValueRef v) {
  LLVMBuilderRef b = m->b;
  LLVMTypeRef f32 = LLVMFloatTypeInContext(m->c), f64 = LLVMDoubleTypeInContext(m->c);
  switch (from) {
  case LOOM_BOOL: return LLVMBuildSelect(b, v, LLVMConstInt(LLVMInt16TypeInContext(m->c), 0x3f80, 0),
                                         LLVMConstInt(LLVMInt16TypeInContext(m->c), 0, 0), "");
  case LOOM_FLOAT16: return f32_to_bf16(m, LLVMBuildFPExt(b, v, f32, "")); /* exact widening */
  case LOOM_FLOAT32: return f32_to_bf16(m, v);
  case LOOM_FLOAT64: return f64_to_bf16(m, v);
  case LOOM_INT64: case LOOM_UINT64: return i64_to_bf16(m, v, from == LOOM_INT64);
  default: /* narrower ints are exact in float64 */
    return f64_to_bf16(m, is_sint(from) ? LLVMBuildSIToFP(b, v, f64, "") : LLVMBuildUIToFP(b, v, f64, ""));
  }
}

/* ---- casts ------------------------------------------------------------------------------------------ */

LLVMValueRef cg_cast(CgMath *m, LoomDType from, LoomDType to, LLVMValueRef v) {
  LLVMBuilderRef b = m->b;
  if (from == to) return v;
  if (is_complex(to)) { /* each part cast to the parts' dtype; a real value has imaginary part 0 */
    LoomDType pt = dtype_real_of(to);
    if (is_complex(from))
      return cg_cx_make(m, to, cg_cast(m, dtype_real_of(from), pt, cg_cx_re(m, v)),
                        cg_cast(m, dtype_real_of(from), pt, cg_cx_im(m, v)));
    return cg_cx_make(m, to, cg_cast(m, from, pt, v), cg_fconst(m, pt, 0.0));
  }
  if (is_complex(from)) { /* to bool: either part nonzero (NaN too); else the real part */
    LoomDType pt = dtype_real_of(from);
    if (to == LOOM_BOOL)
      return LLVMBuildOr(b, cg_cast(m, pt, LOOM_BOOL, cg_cx_re(m, v)), cg_cast(m, pt, LOOM_BOOL, cg_cx_im(m, v)), "");
    return cg_cast(m, pt, to, cg_cx_re(m, v));
  }
  if (from == LOOM_BFLOAT16) return cg_cast(m, LOOM_FLOAT32, to, bf16_to_f32(m, v));
  if (to == LOOM_BFLOAT16) return to_bf16(m, from, v);
  LLVMTypeRef tt = cg_val_type(m, to);
  if (to == LOOM_BOOL) {
    if (real_float(from)) return LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "");
    return LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
  }
  if (from == LOOM_BOOL) {
    if (real_float(to)) return LLVMBuildUIToFP(b, v, tt, "");
    return LLVMBuildZExt(b, v, tt, "");
  }
  if (real_float(from) && real_float(to)) {
    unsigned fb = from == LOOM_FLOAT16 ? 16 : from == LOOM_FLOAT32 ? 32 : 64;
    unsigned tb = to == LOOM_FLOAT16 ? 16 : to == LOOM_FLOAT32 ? 32 : 64;
    return fb < tb ? LLVMBuildFPExt(b, v, tt, "") : LLVMBuildFPTrunc(b, v, tt, "");
  }
  if (real_float(from)) { /* saturating, NaN -> 0 */
    if (from == LOOM_FLOAT16) v = LLVMBuildFPExt(b, v, LLVMFloatTypeInContext(m->c), "");
    LLVMValueRef hv = cg_host_float_to_int(m, to, v); /* host: the same function, vectorizable */
    if (hv) return hv;
    LLVMTypeRef tys[2] = {tt, LLVMTypeOf(v)};
    return cg_intrinsic(m, is_sint(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &v, 1);
  }
  if (real_float(to)) return is_sint(from) ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
  int fb = cg_int_bits(from), tb = cg_int_bits(to);
  if (fb == tb) return v;
  if (fb > tb) return LLVMBuildTrunc(b, v, tt, "");
  return is_sint(from) ? LLVMBuildSExt(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
}

LLVMValueRef cg_from_mem(CgMath *m, LoomDType st, LoomDType to, LLVMValueRef v) {
  if (st == LOOM_BOOL) {
    v = LLVMBuildICmp(m->b, LLVMIntNE, v, LLVMConstInt(LLVMInt8TypeInContext(m->c), 0, 0), "");
  }
  return cg_cast(m, st, to, v);
}

LLVMValueRef cg_to_mem(CgMath *m, LoomDType from, LoomDType st, LLVMValueRef v) {
  v = cg_cast(m, from, st, v);
  if (st == LOOM_BOOL) v = LLVMBuildZExt(m->b, v, LLVMInt8TypeInContext(m->c), "");
  return v;
}
