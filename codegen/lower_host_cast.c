/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_cast.c: float -> integer casts of host kernels in a form the loop vectorizer and the x86
 * backend keep in vector registers.
 *
 * KI_CAST from a float to an integer saturates and maps NaN to 0 (ir.h; NumPy's `astype` of values in
 * range, and a defined answer outside it). `llvm.fptosi.sat` / `llvm.fptoui.sat` say exactly that, but
 * LLVM 19's x86 backend has no vector lowering for them to 8-, 16- or 32-bit lanes: a vectorized loop
 * computes every lane with scalar max / min / cvttss2si and reassembles the vector with pinsrb (ONNX
 * QuantizeLinear `clip(rint(x / s)).astype(int8)` ran ~8 scalar conversions per 8 lanes).
 * cg_host_float_to_int writes the same function as vector-friendly steps: NaN -> 0, clamp into the
 * target's range (bounds exact in the float type), a plain conversion that can no longer overflow
 * (cvttps2dq / cvttpd2dq), truncation to the lane width (packs). 64-bit targets keep the intrinsic
 * (no vector conversion to 64-bit integers before AVX-512DQ).
 */
#include <math.h>

#include "codegen/cg_lower.h"

/* The largest value of the float type of v (float or double) that is <= hi. */
static double float_floor_of(bool dbl, double hi) {
  if (dbl) return hi; /* integer bounds of <= 32 bits are exact in double */
  float f = (float)hi;
  if ((double)f > hi) f = nextafterf(f, 0.0f);
  return (double)f;
}

LLVMValueRef cg_host_float_to_int(CgMath *m, LoomDType to, LLVMValueRef v) {
  if (m->gpu) return NULL;
  bool sg = to == LOOM_INT8 || to == LOOM_INT16 || to == LOOM_INT32;
  int bits = to == LOOM_INT8 || to == LOOM_UINT8 ? 8 : to == LOOM_INT16 || to == LOOM_UINT16 ? 16
           : to == LOOM_INT32 || to == LOOM_UINT32 ? 32 : 0;
  if (!bits) return NULL;
  LLVMBuilderRef b = m->b;
  LLVMTypeRef ft = LLVMTypeOf(v);
  bool dbl = LLVMGetTypeKind(ft) == LLVMDoubleTypeKind;
  if (!dbl && LLVMGetTypeKind(ft) != LLVMFloatTypeKind) return NULL;
  double lo = sg ? -ldexp(1.0, bits - 1) : 0.0;
  double hi_exact = sg ? ldexp(1.0, bits - 1) - 1.0 : ldexp(1.0, bits) - 1.0;
  double hi = float_floor_of(dbl, hi_exact);
  LLVMValueRef flo = LLVMConstReal(ft, lo), fhi = LLVMConstReal(ft, hi);
  /* NaN -> 0 first: the clamps below then see no NaN (nnan lets x86 use maxps / minps) */
  LLVMValueRef c = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, v, v, ""), LLVMConstReal(ft, 0.0), v, "");
  LLVMValueRef below = LLVMBuildFCmp(b, LLVMRealOLT, c, flo, "");
  LLVMSetFastMathFlags(below, LLVMFastMathNoNaNs);
  c = LLVMBuildSelect(b, below, flo, c, "");
  LLVMValueRef above = LLVMBuildFCmp(b, LLVMRealOGT, c, fhi, "");
  LLVMSetFastMathFlags(above, LLVMFastMathNoNaNs);
  c = LLVMBuildSelect(b, above, fhi, c, "");
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  /* in range of i32 (or u32 for uint32) now: the conversion cannot overflow */
  LLVMValueRef r = to == LOOM_UINT32 ? LLVMBuildFPToUI(b, c, i32, "") : LLVMBuildFPToSI(b, c, i32, "");
  if (hi < hi_exact) /* float32 -> (u)int32: no float between hi and 2^31 (2^32); larger saturate */
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, v, fhi, ""), LLVMConstInt(i32, (unsigned long long)hi_exact, 0), r, "");
  if (bits < 32) r = LLVMBuildTrunc(b, r, LLVMIntTypeInContext(m->c, (unsigned)bits), "");
  return r;
}
