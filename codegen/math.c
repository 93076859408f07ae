/* SPDX-License-Identifier: Apache-2.0 */
/* math.c: scalar semantics of Loom's elementwise ops, casts and reduction combiners in LLVM IR.
 *
 * Approach: every op is a short, branch-free sequence of LLVM instructions (selects instead of
 * branches) so the loop vectorizer can widen it; the only exception is integer power, a small loop.
 * NumPy's scalar definitions are followed literally (see ir.h): integer division never traps (the
 * divisor is replaced by a safe one and the result selected), float floordiv/mod are npy_divmod,
 * maximum/minimum/fmax/fmin are NumPy's compare-and-select forms. Transcendentals are calls to
 * SLEEF's scalar functions under SLEEF's names (Sleef_expf_u10: names LLVM's library-call simplifier
 * does not know, so it leaves them alone) carrying the "vector-function-abi-variant" attribute that
 * maps them to SLEEF's GNU vector ABI functions, which the loop vectorizer then calls at the width it
 * picks; without SLEEF they are libm calls marked nobuiltin (scalar).
 * GPU targets set CgMath.gpu: the same calls then name the device library's functions (the hooks'
 * math_name: __nv_expf, __ocml_exp_f32, ...; linked into the module by the target), with no vector
 * variants, and float32 division and square root may take the target's own sequences.
 * bfloat16 lives in memory as its 16 bits (i16) and is computed in float32; casts are math_cast.c's.
 * Complex values are {T, T} literal structs (real, imag); their ops live in lower_complex.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"

static bool is_float(LoomDType t) { return t == LOOM_FLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64; }
static bool is_cplx(LoomDType t) { return t == LOOM_COMPLEX64 || t == LOOM_COMPLEX128; }
static bool is_signed(LoomDType t) { return t >= LOOM_INT8 && t <= LOOM_INT64; }
static int int_bits(LoomDType t) {
  switch (t) {
  case LOOM_BOOL: return 1;
  case LOOM_INT8: case LOOM_UINT8: return 8;
  case LOOM_INT16: case LOOM_UINT16: return 16;
  case LOOM_INT32: case LOOM_UINT32: return 32;
  default: return 64;
  }
}

LLVMValueRef cg_i64(CgMath *m, int64_t v) {
  return LLVMConstInt(LLVMInt64TypeInContext(m->c), (unsigned long long)v, 1);
}

LLVMTypeRef cg_reg_type(CgMath *m, LoomDType t) {
  switch (t) {
  case LOOM_BOOL: return LLVMInt1TypeInContext(m->c);
  case LOOM_FLOAT16: case LOOM_FLOAT32: case LOOM_BFLOAT16: return LLVMFloatTypeInContext(m->c);
  case LOOM_FLOAT64: return LLVMDoubleTypeInContext(m->c);
  case LOOM_COMPLEX64: case LOOM_COMPLEX128: {
    LLVMTypeRef p = cg_reg_type(m, dtype_real_of(t));
    LLVMTypeRef f[2] = {p, p};
    return LLVMStructTypeInContext(m->c, f, 2, 0);
  }
  default: return LLVMIntTypeInContext(m->c, (unsigned)int_bits(t));
  }
}

LLVMTypeRef cg_mem_type(CgMath *m, LoomDType t) {
  if (t == LOOM_BOOL) return LLVMInt8TypeInContext(m->c);
  if (t == LOOM_FLOAT16) return LLVMHalfTypeInContext(m->c);
  if (t == LOOM_BFLOAT16) return LLVMInt16TypeInContext(m->c);
  return cg_reg_type(m, t);
}

LLVMTypeRef cg_val_type(CgMath *m, LoomDType t) {
  return t == LOOM_FLOAT16 || t == LOOM_BFLOAT16 ? cg_mem_type(m, t) : cg_reg_type(m, t);
}

static LLVMValueRef fconst(CgMath *m, LoomDType t, double v) {
  return LLVMConstReal(cg_reg_type(m, t), v);
}
LLVMValueRef cg_fmuladd(CgMath *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return cg_intrinsic(m, "llvm.fmuladd", &t, 1, args, 3);
}

LLVMValueRef cg_fconst(CgMath *m, LoomDType t, double v) { return fconst(m, t, v); }

LLVMValueRef cg_cx_make(CgMath *m, LoomDType t, LLVMValueRef re, LLVMValueRef im) {
  LLVMValueRef v = LLVMGetUndef(cg_reg_type(m, t));
  v = LLVMBuildInsertValue(m->b, v, re, 0, "");
  return LLVMBuildInsertValue(m->b, v, im, 1, "");
}
LLVMValueRef cg_cx_re(CgMath *m, LLVMValueRef v) { return LLVMBuildExtractValue(m->b, v, 0, "re"); }
LLVMValueRef cg_cx_im(CgMath *m, LLVMValueRef v) { return LLVMBuildExtractValue(m->b, v, 1, "im"); }
static LLVMValueRef iconst(CgMath *m, LoomDType t, long long v) {
  return LLVMConstInt(cg_reg_type(m, t), (unsigned long long)v, 1);
}
LLVMValueRef cg_iconst(CgMath *m, LoomDType t, long long v) { return iconst(m, t, v); }
int cg_int_bits(LoomDType t) { return int_bits(t); }

LLVMValueRef cg_const(CgMath *m, LoomDType t, Scalar v) {
  if (is_cplx(t)) {
    LoomDType p = dtype_real_of(t);
    LLVMValueRef f[2] = {fconst(m, p, v.f), fconst(m, p, v.im)};
    return LLVMConstStructInContext(m->c, f, 2, 0);
  }
  if (is_float(t) || t == LOOM_BFLOAT16) return fconst(m, t, v.f);
  if (t == LOOM_BOOL) return LLVMConstInt(cg_reg_type(m, t), v.u != 0, 0);
  return LLVMConstInt(cg_reg_type(m, t), v.u, 0);
}

static LLVMValueRef bad(CgMath *m, LoomDType t, const char *what) {
  diag_error(m->d, LOOM_ERR_DTYPE, "codegen: %s is not defined for dtype %s", what,
             loom_dtype_name(t) ? loom_dtype_name(t) : "?");
  return LLVMGetUndef(cg_reg_type(m, t));
}

/* cg_llvm.h */
int cg_env_int_once(int *slot, const char *name, int dflt) {
  int r = __atomic_load_n(slot, __ATOMIC_RELAXED);
  if (r < 0) {
    const char *s = getenv(name);
    r = s && *s ? atoi(s) : dflt;
    if (r < 0) r = 0;
    __atomic_store_n(slot, r, __ATOMIC_RELAXED);
  }
  return r;
}

/* Calls an intrinsic; tys are its overload types. */
LLVMValueRef cg_intrinsic(CgMath *m, const char *name, LLVMTypeRef *tys, unsigned ntys, LLVMValueRef *args,
                          unsigned nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(m->m, id, tys, ntys);
  LLVMTypeRef fty = LLVMIntrinsicGetType(m->c, id, tys, ntys);
  return LLVMBuildCall2(m->b, fty, fn, args, nargs, "");
}
static LLVMValueRef intr1(CgMath *m, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(m, name, &t, 1, &a, 1);
}
static LLVMValueRef intr2(CgMath *m, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef args[2] = {a, b};
  return cg_intrinsic(m, name, &t, 1, args, 2);
}

static void keep_used(CgMath *m, LLVMValueRef fn) {
  for (int i = 0; i < m->nused; i++)
    if (m->used[i] == fn) return;
  if (m->nused < CG_MAX_USED) m->used[m->nused++] = fn;
}

static int isa_bits(char isa) { return isa == 'e' ? 512 : (isa == 'b' ? 128 : 256); }

/* The scalar callee of a host math call: SLEEF's own scalar function ("Sleef_expf_u10"; the 3.5-ulp
 * one where SLEEF has it, as for the vector variants below) when the SLEEF library has it, so that
 * LLVM sees a function it does not know: the library-call simplifier cannot rewrite it (into an
 * intrinsic that loses the vector mapping, or another libm call) and the loop vectorizer may widen
 * it through its vector-function-abi-variant mappings (calls marked nobuiltin are never widened).
 * Scalar tails and vector lanes then run the same algorithm. false: no SLEEF scalar; name is libm's. */
static bool sleef_scalar_name(CgMath *m, const char *name, char *out, size_t n) {
  /* erfc has only _u15; exact functions (fmod) have no suffix */
  static const char *const ulps[5] = {"_u35", "_u10", "_u15", "_u05", ""};
  if (!m->vec || !m->vec->has_symbol) return false;
  for (int i = 0; i < 5; i++) {
    snprintf(out, n, "Sleef_%s%s", name, ulps[i]);
    if (m->vec->has_symbol(m->vec->user, out)) return true;
  }
  return false;
}

/* Marks a call of a math function pure: memory(none), nounwind, willreturn (libm's functions only touch errno,
 * which Loom never reads; SLEEF's and Loom's own touch nothing). */
static void pure_call(CgMath *m, LLVMValueRef call) {
  static const char *const kinds[] = {"memory", "nounwind", "willreturn"};
  for (int i = 0; i < 3; i++)
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(m->c, LLVMGetEnumAttributeKindForName(kinds[i], strlen(kinds[i])), 0));
}

/* A new internal math function of type fty: memory(none), nounwind, willreturn, and noinline when asked (a scalar
 * function the loop vectorizer must still see as a call, its vector forms mapped to it). */
static LLVMValueRef pure_internal_fn(CgMath *m, const char *name, LLVMTypeRef fty, bool noinline) {
  LLVMValueRef fn = LLVMAddFunction(m->m, name, fty);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  static const char *const attrs[] = {"memory", "nounwind", "willreturn", "noinline"};
  for (int i = 0; i < (noinline ? 4 : 3); i++)
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(m->c, LLVMGetEnumAttributeKindForName(attrs[i], strlen(attrs[i])), 0));
  return fn;
}

/* Every width runs SLEEF's widest vector variant for the host: a scalar call (a loop's remainder, a loop
 * the vectorizer leaves scalar) on lane 0 of it, a narrower vector (the vectorized epilogue after a wider
 * main loop) in its low lanes, instead of SLEEF's scalar function or its narrower ISA's variant. Those are
 * different code (purec / purecfma, AVX2, SSE against AVX-512) and differ in the last bit for some inputs
 * (exp2_u35 of -483.26, logf, cbrt, exp): one kernel gave position-dependent bits, and x // exp2(y) of equal
 * values was 0 in one kernel and 1 in another (scripts/fuzz_numpy.py). lanes_fn(m, callee, vl, ...) is
 * "loom.vf<vl>.<callee>": vl == 1 a scalar function (noinline, so that the loop vectorizer still sees a
 * scalar call with its vector-function-abi-variant mappings, which name these functions), else a vector one
 * the vectorizer calls at width vl. Pad lanes repeat lane 0 (no garbage input). */
static LLVMValueRef lanes_fn(CgMath *m, const char *callee, int vl, LLVMTypeRef ft, LLVMValueRef wide, int wide_vl,
                             unsigned nargs, char *name, size_t cap) {
  snprintf(name, cap, "loom.vf%d.%s", vl, callee);
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, name);
  if (fn) return fn;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef t = vl == 1 ? ft : LLVMVectorType(ft, (unsigned)vl), wt = LLVMVectorType(ft, (unsigned)wide_vl);
  LLVMTypeRef params[2] = {t, t}, wparams[2] = {wt, wt};
  fn = pure_internal_fn(m, name, LLVMFunctionType(t, params, nargs, 0), vl == 1);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(m->c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(m->c, fn, "entry"));
  LLVMValueRef mask[64], vargs[2];
  for (int i = 0; i < wide_vl; i++) mask[i] = LLVMConstInt(i32, (unsigned long long)(i < vl ? i : 0), 0);
  for (unsigned a = 0; a < nargs; a++) {
    LLVMValueRef x = LLVMGetParam(fn, a);
    if (vl == 1) x = LLVMBuildInsertElement(b, LLVMGetPoison(LLVMVectorType(ft, 1)), x, LLVMConstInt(i32, 0, 0), "");
    vargs[a] = LLVMBuildShuffleVector(b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(mask, (unsigned)wide_vl), "");
  }
  LLVMValueRef r = LLVMBuildCall2(b, LLVMFunctionType(wt, wparams, nargs, 0), wide, vargs, nargs, "");
  if (vl == 1) r = LLVMBuildExtractElement(b, r, LLVMConstInt(i32, 0, 0), "");
  else {
    for (int i = 0; i < vl; i++) mask[i] = LLVMConstInt(i32, (unsigned long long)i, 0);
    r = LLVMBuildShuffleVector(b, r, LLVMGetPoison(wt), LLVMConstVector(mask, (unsigned)vl), "");
  }
  LLVMBuildRet(b, r);
  LLVMDisposeBuilder(b);
  return fn;
}

/* A call of libm's `base` (suffix f for float32) with SLEEF vector variants attached. */
static LLVMValueRef libm_call(CgMath *m, const char *base, LoomDType t, LLVMValueRef *args,
                              unsigned nargs);
LLVMValueRef cg_libm(CgMath *m, const char *base, LoomDType t, LLVMValueRef *args, unsigned nargs) {
  return libm_call(m, base, t, args, nargs);
}
static LLVMValueRef libm_call(CgMath *m, const char *base, LoomDType t, LLVMValueRef *args,
                              unsigned nargs) {
  char name[32], callee[48];
  if (m->gpu) m->gpu->math_name(name, sizeof name, base, t);
  else snprintf(name, sizeof name, "%s%s", base, t == LOOM_FLOAT32 ? "f" : "");
  bool sleef = !m->gpu && sleef_scalar_name(m, name, callee, sizeof callee);
  if (!sleef) snprintf(callee, sizeof callee, "%s", name);
  LLVMTypeRef ft = cg_reg_type(m, t);
  LLVMTypeRef params[2] = {ft, ft};
  LLVMTypeRef fty = LLVMFunctionType(ft, params, nargs, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, callee);
  if (!fn) fn = LLVMAddFunction(m->m, callee, fty);
  LLVMValueRef cargs[2] = {args[0], nargs > 1 ? args[1] : NULL}; /* as the device library should see them */
  for (unsigned i = 0; m->gpu && m->gpu->math_arg && t == LOOM_FLOAT32 && i < nargs; i++) cargs[i] = m->gpu->math_arg(m, args[i]);
  LLVMValueRef call = LLVMBuildCall2(m->b, fty, fn, cargs, nargs, "");
  pure_call(m, call);
  if (m->gpu) return call; /* the device library: linked and inlined by the target */
  if (!sleef) {
    /* a libm name: keep the optimizer from rewriting the call (no SLEEF: nothing to vectorize) */
    unsigned nobuiltin = LLVMGetEnumAttributeKindForName("nobuiltin", 9);
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(m->c, nobuiltin, 0));
    return call;
  }
  if (!m->vec->isas || !m->vec->isas[0]) return call;
  LLVMValueRef wide = NULL; /* SLEEF's widest vector variant: every width runs it (lanes_fn) */
  int wide_vl = 0;
  char attr[512], lname[80];
  size_t len = 0;
  attr[0] = 0;
  int done_vl[8] = {0};
  int ndone = 0;
  int ebits = t == LOOM_FLOAT32 ? 32 : 64;
  for (const char *p = m->vec->isas; *p && ndone < 8; p++) {
    int vl = isa_bits(*p) / ebits;
    bool seen = false;
    for (int i = 0; i < ndone; i++) seen |= done_vl[i] == vl;
    if (seen || (wide && vl > wide_vl)) continue;
    LLVMValueRef vfn = NULL;
    const char *vname = lname;
    if (!wide) {
      /* Prefer SLEEF's 3.5-ulp variant where there is one (sin, cos, log, ...: about twice as
       * fast as the 1-ulp one); Loom promises results within a few ulp, tests hold it to 4. */
      snprintf(lname, sizeof lname, "_ZGV%cN%d%s_%s_u35", *p, vl, nargs == 2 ? "vv" : "v", name);
      if (!m->vec->has_symbol(m->vec->user, lname)) {
        snprintf(lname, sizeof lname, "_ZGV%cN%d%s_%s", *p, vl, nargs == 2 ? "vv" : "v", name);
        if (!m->vec->has_symbol(m->vec->user, lname)) continue;
      }
      LLVMTypeRef vt = LLVMVectorType(ft, (unsigned)vl);
      LLVMTypeRef vparams[2] = {vt, vt};
      vfn = LLVMGetNamedFunction(m->m, lname);
      if (!vfn) vfn = LLVMAddFunction(m->m, lname, LLVMFunctionType(vt, vparams, nargs, 0));
      wide = vfn, wide_vl = vl;
    } else {
      vfn = lanes_fn(m, callee, vl, ft, wide, wide_vl, nargs, lname, sizeof lname); /* narrower: the wide one */
    }
    done_vl[ndone++] = vl;
    keep_used(m, vfn);
    char sname[80];
    snprintf(sname, sizeof sname, "loom.vf1.%s", callee);
    int n = snprintf(attr + len, sizeof attr - len, "%s_ZGV_LLVM_N%d%s_%s(%s)", len ? "," : "", vl,
                     nargs == 2 ? "vv" : "v", sname, vname);
    if (n < 0 || (size_t)n >= sizeof attr - len) break;
    len += (size_t)n;
  }
  if (len) { /* the scalar call becomes a call of the lane-0 function */
    LLVMValueRef sfn = lanes_fn(m, callee, 1, ft, wide, wide_vl, nargs, lname, sizeof lname);
    /* kept as declared: interprocedural constant propagation would otherwise fold a constant argument (the
     * exponent of x ** (1 / 2.2)) into it and drop the parameter, so that the mappings below, which name a
     * function of nargs arguments, no longer fit: the loop stayed scalar, a 16-lane call a point (30x) */
    keep_used(m, sfn);
    LLVMValueRef cargs2[2] = {LLVMGetOperand(call, 0), nargs > 1 ? LLVMGetOperand(call, 1) : NULL};
    LLVMValueRef nc = LLVMBuildCall2(m->b, fty, sfn, cargs2, nargs, "");
    pure_call(m, nc);
    LLVMInstructionEraseFromParent(call);
    call = nc;
  }
  if (len) {
    const char *key = "vector-function-abi-variant";
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateStringAttribute(m->c, key, (unsigned)strlen(key), attr,
                                                       (unsigned)len));
  }
  return call;
}

void cg_math_finish(CgMath *m) {
  if (m->nused == 0) return;
  LLVMTypeRef ptr = LLVMPointerTypeInContext(m->c, 0);
  LLVMTypeRef at = LLVMArrayType2(ptr, (uint64_t)m->nused);
  LLVMValueRef g = LLVMAddGlobal(m->m, at, "llvm.compiler.used");
  LLVMSetLinkage(g, LLVMAppendingLinkage);
  LLVMSetSection(g, "llvm.metadata");
  LLVMSetInitializer(g, LLVMConstArray2(ptr, m->used, (uint64_t)m->nused));
}

/* ---- integer helpers ------------------------------------------------------------------------------------ */

/* NumPy floor division and remainder for integers: x // 0 = x % 0 = 0, MIN // -1 = MIN. */
/* Host truncating division of integers of at most 32 bits (sb != 0): through float32 (8 / 16 bits) or
 * float64 (32 bits) division, which x86 vectorizes (it has no vector integer division: LLVM issues one idiv a
 * lane). Exact: for |a|, |b| < 2^p (p = 16 or 32) a non-integer a / b lies at least 1 / |b| from an integer,
 * and the rounding error of the quotient is below |a / b| * 2^-24 (2^-53) < 1 / |b|, so trunc never crosses
 * one; an integer quotient is exact. floor_divide of 2^22 points on 2 Zen 4 cores: int16 9.7 -> 0.64 ms,
 * int32 5.1 -> 1.15, int8 3.7 -> 0.39 (torch 3.5, 3.6, -). The remainder is a - q * b. NULL: not such a division (64-bit, or a GPU). */
static LLVMValueRef host_int_quotient(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef sb) {
  int bits = cg_int_bits(t);
  if (m->gpu || bits > 32 || t == LOOM_BOOL || LLVMIsConstant(sb)) return NULL; /* constants: LLVM's multiply */
  LLVMBuilderRef b = m->b;
  LLVMTypeRef it = LLVMTypeOf(a), ft = bits <= 16 ? LLVMFloatTypeInContext(m->c) : LLVMDoubleTypeInContext(m->c);
  if (LLVMGetTypeKind(it) == LLVMVectorTypeKind) ft = LLVMVectorType(ft, LLVMGetVectorSize(it));
  bool sg = is_signed(t);
  LLVMValueRef fa = sg ? LLVMBuildSIToFP(b, a, ft, "") : LLVMBuildUIToFP(b, a, ft, "");
  LLVMValueRef fb = sg ? LLVMBuildSIToFP(b, sb, ft, "") : LLVMBuildUIToFP(b, sb, ft, "");
  LLVMValueRef fq = intr1(m, "llvm.trunc", LLVMBuildFDiv(b, fa, fb, ""));
  return sg ? LLVMBuildFPToSI(b, fq, it, "") : LLVMBuildFPToUI(b, fq, it, "");
}

static LLVMValueRef int_divmod(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef bv, bool want_mod) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef zero = iconst(m, t, 0), one = iconst(m, t, 1);
  LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, bv, zero, "");
  if (!is_signed(t)) {
    LLVMValueRef sb = LLVMBuildSelect(b, bz, one, bv, "");
    LLVMValueRef fq = host_int_quotient(m, t, a, sb), r;
    if (fq) r = want_mod ? LLVMBuildSub(b, a, LLVMBuildMul(b, fq, sb, ""), "") : fq;
    else r = want_mod ? LLVMBuildURem(b, a, sb, "") : LLVMBuildUDiv(b, a, sb, "");
    return LLVMBuildSelect(b, bz, zero, r, "");
  }
  LLVMValueRef bm1 = LLVMBuildICmp(b, LLVMIntEQ, bv, iconst(m, t, -1), "");
  LLVMValueRef unsafe = LLVMBuildOr(b, bz, bm1, "");
  LLVMValueRef sb = LLVMBuildSelect(b, unsafe, one, bv, "");
  LLVMValueRef q = host_int_quotient(m, t, a, sb), r;
  if (q) {
    r = LLVMBuildSub(b, a, LLVMBuildMul(b, q, sb, ""), "");
  } else {
    q = LLVMBuildSDiv(b, a, sb, "");
    r = LLVMBuildSRem(b, a, sb, "");
  }
  /* Python signs: when r != 0 and r, b differ in sign, q -= 1 and r += b. */
  LLVMValueRef rnz = LLVMBuildICmp(b, LLVMIntNE, r, zero, "");
  LLVMValueRef diff = LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildXor(b, r, bv, ""), zero, "");
  LLVMValueRef adj = LLVMBuildAnd(b, rnz, diff, "");
  if (want_mod) {
    LLVMValueRef rr = LLVMBuildSelect(b, adj, LLVMBuildAdd(b, r, bv, ""), r, "");
    return LLVMBuildSelect(b, unsafe, zero, rr, ""); /* x % -1 == 0 too */
  }
  LLVMValueRef qq = LLVMBuildSelect(b, adj, LLVMBuildSub(b, q, one, ""), q, "");
  LLVMValueRef neg = LLVMBuildSub(b, zero, a, ""); /* wraps: MIN // -1 = MIN */
  return LLVMBuildSelect(b, bz, zero, LLVMBuildSelect(b, bm1, neg, qq, ""), "");
}

LLVMValueRef cg_fdiv(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef bv) {
  if (m->gpu && m->gpu->fdiv_f32 && LLVMTypeOf(a) == LLVMFloatTypeInContext(m->c) && t != LOOM_FLOAT64)
    return m->gpu->fdiv_f32(m, a, bv);
  return LLVMBuildFDiv(m->b, a, bv, "");
}

LLVMValueRef cg_fsqrt(CgMath *m, LLVMValueRef a) {
  if (m->gpu && m->gpu->fsqrt_f32 && LLVMTypeOf(a) == LLVMFloatTypeInContext(m->c)) return m->gpu->fsqrt_f32(m, a);
  return intr1(m, "llvm.sqrt", a);
}

/* LOOM_HOST_FMOD64_FAST=0: float64 remainders call libm's fmod a point, as before (A/B timings; read per
 * kernel compiled, so time each setting with its own LOOM_CACHE_DIR). */
static bool fmod64_fast(void) {
  const char *s = getenv("LOOM_HOST_FMOD64_FAST");
  return !(s && strcmp(s, "0") == 0);
}

static LLVMValueRef splat_like(LLVMTypeRef t, LLVMValueRef c) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return c;
  LLVMValueRef v[64];
  unsigned n = LLVMGetVectorSize(t);
  for (unsigned i = 0; i < n; i++) v[i] = c;
  return LLVMConstVector(v, n);
}

/* "loom.fmod64.v<vl>": the exact float64 fmod of vl lanes (vl == 1: a scalar). Where |a / b| < 2^52 and b
 * is finite, q = trunc(a / b) is the true quotient or one more in magnitude (the rounded division never
 * falls below an integer it passes), a - q b is exact in one fma (a multiple of b's ulp, smaller than |b|),
 * one step back by b fixes its sign, and a zero takes a's sign. A vector with any other lane (a huge
 * quotient, b zero, infinite or NaN, a not finite) takes libm's fmod on each lane (a branch, rarely taken).
 * The host's frem was libm's fmod a point (no vector form; SLEEF's returns NaN where a / b overflows):
 * 2M float64 (x + 360) % 360 on this box 12.4 -> 2.3 ms. Checked against NumPy on 400k random pairs of
 * every class (tests/python/test_fmod64.py). */
static LLVMValueRef fmod64_fn(CgMath *m, int vl) {
  char name[40];
  snprintf(name, sizeof name, "loom.fmod64.v%d", vl);
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, name);
  if (fn) return fn;
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c), i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef t = vl == 1 ? f64 : LLVMVectorType(f64, (unsigned)vl);
  LLVMTypeRef params[2] = {t, t};
  fn = pure_internal_fn(m, name, LLVMFunctionType(t, params, 2, 0), vl == 1);
  LLVMBuilderRef saved = m->b, b = LLVMCreateBuilderInContext(m->c);
  m->b = b;
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(m->c, fn, "entry");
  LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(m->c, fn, "slow"), done = LLVMAppendBasicBlockInContext(m->c, fn, "done");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef a = LLVMGetParam(fn, 0), bv = LLVMGetParam(fn, 1);
  LLVMValueRef z = splat_like(t, LLVMConstReal(f64, 0.0));
  LLVMValueRef q = LLVMBuildFDiv(b, a, bv, "");
  LLVMValueRef ok = LLVMBuildFCmp(b, LLVMRealOLT, intr1(m, "llvm.fabs", q), splat_like(t, LLVMConstReal(f64, 4503599627370496.0)), "");
  ok = LLVMBuildAnd(b, ok, LLVMBuildFCmp(b, LLVMRealOLT, intr1(m, "llvm.fabs", bv), splat_like(t, LLVMConstReal(f64, INFINITY)), ""), "");
  LLVMValueRef fa[3] = {LLVMBuildFNeg(b, intr1(m, "llvm.trunc", q), ""), bv, a};
  LLVMValueRef r = cg_intrinsic(m, "llvm.fma", &t, 1, fa, 3);
  LLVMValueRef flip = LLVMBuildOr(b, LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, a, z, ""), LLVMBuildFCmp(b, LLVMRealOLT, r, z, ""), ""),
                                  LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOLT, a, z, ""), LLVMBuildFCmp(b, LLVMRealOGT, r, z, ""), ""), "");
  r = LLVMBuildSelect(b, flip, LLVMBuildFAdd(b, r, intr2(m, "llvm.copysign", bv, a), ""), r, "");
  r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, r, z, ""), intr2(m, "llvm.copysign", z, a), r, "");
  LLVMValueRef bad = LLVMBuildNot(b, ok, "");
  if (vl > 1) {
    LLVMTypeRef mt = LLVMTypeOf(bad);
    bad = cg_intrinsic(m, "llvm.vector.reduce.or", &mt, 1, &bad, 1);
  }
  LLVMBuildCondBr(b, bad, slow, done);
  LLVMPositionBuilderAtEnd(b, slow);
  LLVMTypeRef sp[2] = {f64, f64};
  LLVMTypeRef sty = LLVMFunctionType(f64, sp, 2, 0);
  LLVMValueRef libm = LLVMGetNamedFunction(m->m, "fmod");
  if (!libm) libm = LLVMAddFunction(m->m, "fmod", sty);
  LLVMValueRef r2 = r;
  for (int i = 0; i < vl; i++) {
    LLVMValueRef ix = LLVMConstInt(i32, (unsigned long long)i, 0);
    LLVMValueRef ai = vl == 1 ? a : LLVMBuildExtractElement(b, a, ix, ""), bi = vl == 1 ? bv : LLVMBuildExtractElement(b, bv, ix, "");
    LLVMValueRef args[2] = {ai, bi};
    LLVMValueRef fi = LLVMBuildCall2(b, sty, libm, args, 2, "");
    LLVMValueRef oki = vl == 1 ? ok : LLVMBuildExtractElement(b, ok, ix, "");
    LLVMValueRef ri = vl == 1 ? r : LLVMBuildExtractElement(b, r, ix, "");
    LLVMValueRef v = LLVMBuildSelect(b, oki, ri, fi, "");
    r2 = vl == 1 ? v : LLVMBuildInsertElement(b, r2, v, ix, "");
  }
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMValueRef phi = LLVMBuildPhi(b, t, "");
  LLVMValueRef vals[2] = {r, r2};
  LLVMBasicBlockRef from[2] = {entry, slow};
  LLVMAddIncoming(phi, vals, from, 2);
  LLVMBuildRet(b, phi);
  m->b = saved;
  LLVMDisposeBuilder(b);
  keep_used(m, fn);
  return fn;
}

/* a % b in float64 on the host: a call of loom.fmod64.v1 whose 2-, 4- and 8-lane forms the loop vectorizer
 * takes (vector-function-abi-variant). */
static LLVMValueRef fmod64_call(CgMath *m, LLVMValueRef a, LLVMValueRef bv) {
  LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c);
  LLVMTypeRef params[2] = {f64, f64};
  LLVMValueRef fn = fmod64_fn(m, 1), args[2] = {a, bv};
  char attr[256];
  size_t len = 0;
  for (int vl = 2; vl <= 8; vl *= 2) {
    fmod64_fn(m, vl);
    len += (size_t)snprintf(attr + len, sizeof attr - len, "%s_ZGV_LLVM_N%dvv_loom.fmod64.v1(loom.fmod64.v%d)", len ? "," : "", vl, vl);
  }
  LLVMBuilderRef b = m->b;
  LLVMValueRef call = LLVMBuildCall2(b, LLVMFunctionType(f64, params, 2, 0), fn, args, 2, "");
  pure_call(m, call);
  const char *key = "vector-function-abi-variant";
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateStringAttribute(m->c, key, (unsigned)strlen(key), attr, (unsigned)len));
  return call;
}

/* NumPy's npy_divmod for floats. */
static LLVMValueRef float_divmod(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef bv, bool want_mod) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef zero = fconst(m, t, 0.0), one = fconst(m, t, 1.0);
  /* fmod must be exact (NumPy's is). The host's frem is libm's fmod, one scalar call a point; SLEEF's
   * fmod (exact too) has vector variants the loop vectorizer takes (float32 floor_divide of 2^22 points on
   * 2 Zen 4 cores: 29 -> 3 ms, torch 5.9). NVPTX would lower frem to a - trunc(a / b) * b, wrong once
   * a / b is large or inexact: the device library's fmod (libdevice's __nv_fmod(f)) is exact. */
  LLVMValueRef fa[2] = {a, bv}, mod;
  char sname[48];
  if (m->gpu) {
    mod = libm_call(m, "fmod", t, fa, 2);
  } else if (t == LOOM_FLOAT32 && sleef_scalar_name(m, "fmod", sname, sizeof sname)) {
    /* SLEEF's fmod returns NaN where a / b overflows (float32 1e20 / 1e-30); in float64 no float32
     * quotient does, and the exact remainder converts back exactly */
    LLVMTypeRef dt = LLVMTypeOf(a) == LLVMFloatTypeInContext(m->c) ? LLVMDoubleTypeInContext(m->c)
                                                                     : LLVMVectorType(LLVMDoubleTypeInContext(m->c), LLVMGetVectorSize(LLVMTypeOf(a)));
    LLVMValueRef da[2] = {LLVMBuildFPExt(b, a, dt, ""), LLVMBuildFPExt(b, bv, dt, "")};
    mod = LLVMBuildFPTrunc(b, libm_call(m, "fmod", LOOM_FLOAT64, da, 2), LLVMTypeOf(a), "");
  } else if (t == LOOM_FLOAT64 && LLVMTypeOf(a) == LLVMDoubleTypeInContext(m->c) && fmod64_fast()) {
    mod = fmod64_call(m, a, bv);
  } else {
    mod = LLVMBuildFRem(b, a, bv, ""); /* libm's fmod: float64 quotients may overflow */
  }
  LLVMValueRef bz = LLVMBuildFCmp(b, LLVMRealOEQ, bv, zero, "");
  LLVMValueRef adiv = cg_fdiv(m, t, a, bv);
  LLVMValueRef div = cg_fdiv(m, t, LLVMBuildFSub(b, a, mod, ""), bv);
  LLVMValueRef modnz = LLVMBuildFCmp(b, LLVMRealUNE, mod, zero, ""); /* NaN counts as true */
  LLVMValueRef bneg = LLVMBuildFCmp(b, LLVMRealOLT, bv, zero, "");
  LLVMValueRef mneg = LLVMBuildFCmp(b, LLVMRealOLT, mod, zero, "");
  LLVMValueRef fix = LLVMBuildAnd(b, modnz, LLVMBuildICmp(b, LLVMIntNE, bneg, mneg, ""), "");
  LLVMValueRef czb = intr2(m, "llvm.copysign", zero, bv);
  LLVMValueRef mod2 = LLVMBuildSelect(b, modnz, LLVMBuildSelect(b, fix, LLVMBuildFAdd(b, mod, bv, ""), mod, ""), czb, "");
  if (want_mod) return LLVMBuildSelect(b, bz, mod, mod2, "");
  LLVMValueRef div2 = LLVMBuildSelect(b, fix, LLVMBuildFSub(b, div, one, ""), div, "");
  LLVMValueRef fl = intr1(m, "llvm.floor", div2);
  LLVMValueRef up = LLVMBuildFCmp(b, LLVMRealOGT, LLVMBuildFSub(b, div2, fl, ""), fconst(m, t, 0.5), "");
  fl = LLVMBuildSelect(b, up, LLVMBuildFAdd(b, fl, one, ""), fl, "");
  LLVMValueRef dnz = LLVMBuildFCmp(b, LLVMRealUNE, div2, zero, "");
  LLVMValueRef fd = LLVMBuildSelect(b, dnz, fl, intr2(m, "llvm.copysign", zero, adiv), "");
  return LLVMBuildSelect(b, bz, adiv, fd, "");
}

static LLVMValueRef isnan_v(CgMath *m, LLVMValueRef a) { return LLVMBuildFCmp(m->b, LLVMRealUNO, a, a, ""); }

/* NumPy's maximum/minimum/fmax/fmin: a when it compares greater (less) or is the NaN that wins, else b.
 * On a tie (-0.0 and 0.0) its float32/float64 (SIMD) loops give the second operand and its float16 loops
 * the first ((a >= b || isnan(a)) ? a : b): float16 operands (widened halves) compare with >= / <=. */
static LLVMValueRef float_minmax(CgMath *m, LLVMValueRef a, LLVMValueRef bv, bool max, bool ignore_nan) {
  bool half = cg_is_widened_half(a) || cg_is_widened_half(bv);
  LLVMRealPredicate p = max ? (half ? LLVMRealOGE : LLVMRealOGT) : (half ? LLVMRealOLE : LLVMRealOLT);
  LLVMValueRef cmp = LLVMBuildFCmp(m->b, p, a, bv, "");
  LLVMValueRef nan = isnan_v(m, ignore_nan ? bv : a);
  return LLVMBuildSelect(m->b, LLVMBuildOr(m->b, cmp, nan, ""), a, bv, "");
}

static LLVMValueRef int_minmax(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef bv, bool max) {
  if (t == LOOM_BOOL) return max ? LLVMBuildOr(m->b, a, bv, "") : LLVMBuildAnd(m->b, a, bv, "");
  const char *n = is_signed(t) ? (max ? "llvm.smax" : "llvm.smin") : (max ? "llvm.umax" : "llvm.umin");
  return intr2(m, n, a, bv);
}

static const char *libm_name(LoomOp op) {
  switch (op) {
  case LOOM_OP_EXP: return "exp";     case LOOM_OP_EXP2: return "exp2";
  case LOOM_OP_EXPM1: return "expm1"; case LOOM_OP_LOG: return "log";
  case LOOM_OP_LOG2: return "log2";   case LOOM_OP_LOG10: return "log10";
  case LOOM_OP_LOG1P: return "log1p"; case LOOM_OP_CBRT: return "cbrt";
  case LOOM_OP_SIN: return "sin";     case LOOM_OP_COS: return "cos";
  case LOOM_OP_TAN: return "tan";     case LOOM_OP_ASIN: return "asin";
  case LOOM_OP_ACOS: return "acos";   case LOOM_OP_ATAN: return "atan";
  case LOOM_OP_SINH: return "sinh";   case LOOM_OP_COSH: return "cosh";
  case LOOM_OP_TANH: return "tanh";   case LOOM_OP_ASINH: return "asinh";
  case LOOM_OP_ACOSH: return "acosh"; case LOOM_OP_ATANH: return "atanh";
  case LOOM_OP_ATAN2: return "atan2"; case LOOM_OP_HYPOT: return "hypot";
  case LOOM_OP_POW: return "pow";
  case LOOM_OP_ERF: return "erf";     case LOOM_OP_ERFC: return "erfc";
  default: return NULL;
  }
}

/* tanh(log1p(u)) without either function (GPU; Mish's x * tanh(softplus(x)), softplus = log1p(exp x)):
 * with v = 1 + u, tanh(log v) = (v^2 - 1) / (v^2 + 1) = n / (n + 2), n = u * (u + 2). n is formed with
 * two roundings and no cancellation (u + 2 >= 1 for u >= -1), so the quotient (correctly rounded
 * division) is within a few ulp of the function on the whole range: tanh(log1p(u)) ~ u for small u,
 * -1 at u = -1, NaN below -1 (log1p's domain) and for NaN, 1 where n >= 2^26 (float32; 2^55 float64),
 * where the quotient rounds to 1 already. NULL when `a` is not a call of the device library's log1p. Two
 * device-library calls (libdevice's log1pf and tanhf: ~60 instructions) become ~15. */
static LLVMValueRef tanh_of_log1p(CgMath *m, LoomDType t, LLVMValueRef a) {
  if (!LLVMIsACallInst(a)) return NULL;
  LLVMValueRef callee = LLVMGetCalledValue(a);
  char want[32];
  m->gpu->math_name(want, sizeof want, "log1p", t);
  size_t len = 0;
  const char *name = callee ? LLVMGetValueName2(callee, &len) : NULL;
  if (!name || len != strlen(want) || memcmp(name, want, len) != 0 || LLVMGetNumArgOperands(a) != 1) return NULL;
  LLVMBuilderRef b = m->b;
  LLVMValueRef u = LLVMGetOperand(a, 0);
  LLVMValueRef n = LLVMBuildFMul(b, u, LLVMBuildFAdd(b, u, fconst(m, t, 2.0), ""), "");
  LLVMValueRef den = LLVMBuildFAdd(b, n, fconst(m, t, 2.0), ""), r;
  if (t == LOOM_FLOAT32 && m->gpu->frcp_approx_f32) {
    /* den >= 1 (n >= -1): a hardware reciprocal and one residual correction give the quotient within
     * ~1 ulp, as the two library calls it replaces are (not correctly rounded either); the exact
     * division costs two float64 conversions and a float64 reciprocal per point (float32 Mish was
     * instruction-bound at 78 % of copy bandwidth on an H200) */
    LLVMTypeRef ty = LLVMTypeOf(n);
    LLVMValueRef y = m->gpu->frcp_approx_f32(m, den), q = LLVMBuildFMul(b, n, y, "");
    LLVMValueRef a1[3] = {LLVMBuildFNeg(b, den, ""), q, n};
    LLVMValueRef res = cg_intrinsic(m, "llvm.fma", &ty, 1, a1, 3);
    LLVMValueRef a2[3] = {res, y, q};
    r = cg_intrinsic(m, "llvm.fma", &ty, 1, a2, 3);
  } else {
    r = cg_fdiv(m, t, n, den);
  }
  /* n >= 2^(p+2) (p: the significand's bits): n / (n + 2) rounds to 1, and the hardware reciprocal of
   * den >= 2^126 would flush to 0 (u = 1e19 gave 0); this covers n = inf as well */
  double big = t == LOOM_FLOAT32 ? 0x1p26 : 0x1p55;
  r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, n, fconst(m, t, big), ""), fconst(m, t, 1.0), r, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, u, fconst(m, t, -1.0), ""), fconst(m, t, 0.0 / 0.0), r, "");
}

LLVMValueRef cg_elem(CgMath *m, LoomOp op, LoomDType t, const LLVMValueRef *args) {
  LLVMBuilderRef b = m->b;
  LLVMValueRef a = args[0], bv = args[1];
  bool fl = is_float(t), sg = is_signed(t), bo = t == LOOM_BOOL;
  if (t == LOOM_FLOAT16 || t == LOOM_BFLOAT16) return bad(m, t, "computing (16-bit floats are computed as float32)");
  if (is_cplx(t)) return cg_complex_elem(m, op, t, args);
  const char *lm = libm_name(op);
  if (fl && (op == LOOM_OP_ASINH || op == LOOM_OP_ACOSH)) {
    /* SLEEF's vector asinh/acosh overflow to inf above ~1.3e154 (f64) / ~1.8e19 (f32); there
     * asinh(x) = sign(x) (log|x| + ln 2) and acosh(x) = log x + ln 2 to rounding. */
    LLVMValueRef x0 = a;
    LLVMValueRef r = libm_call(m, lm, t, &x0, 1);
    LLVMValueRef ax = op == LOOM_OP_ASINH ? intr1(m, "llvm.fabs", a) : a;
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, ax, fconst(m, t, t == LOOM_FLOAT64 ? 1e150 : 1e18), "");
    LLVMValueRef alt = LLVMBuildFAdd(b, libm_call(m, "log", t, &ax, 1), fconst(m, t, 0.69314718055994530942), "");
    if (op == LOOM_OP_ASINH) alt = intr2(m, "llvm.copysign", alt, a);
    r = LLVMBuildSelect(b, big, alt, r, "");
    if (op == LOOM_OP_ASINH && !m->gpu) {
      /* host: SLEEF's asinh of a subnormal is 0 (5e-324 // asinh(5e-324) gave inf, NumPy 1.0); for |x| <
       * 2^-28 (f32: 2^-12) asinh(x) = x (1 - x^2/6 + ...) rounds to x itself */
      LLVMValueRef tiny = LLVMBuildFCmp(b, LLVMRealOLT, ax, fconst(m, t, t == LOOM_FLOAT64 ? 0x1p-28 : 0x1p-12), "");
      r = LLVMBuildSelect(b, tiny, a, r, "");
    }
    return r;
  }
  if (t == LOOM_FLOAT32 && op == LOOM_OP_LOG10) {
    /* LOOM_HOST_POLY_LOG10=0: SLEEF's log10f_u10 on the host; LOOM_GPU_POLY_LOG10=1: this code on GPUs too
     * (default: the device library's, libdevice's logf times log10(e), 2 ulp; faster there: math_log10.c) */
    static int poly10 = -1;
    if (m->gpu ? cg_gpu_poly_log10() : cg_env_int_once(&poly10, "LOOM_HOST_POLY_LOG10", 1) != 0)
      return cg_host_log10_f32(m, a);
  }
  if (!m->gpu && t == LOOM_FLOAT32 && op == LOOM_OP_LOG1P) {
    static int poly = -1; /* LOOM_HOST_POLY_LOG1P=0: SLEEF's log1pf_u10 with the guards below; 2: float64 (A/B) */
    int v = cg_env_int_once(&poly, "LOOM_HOST_POLY_LOG1P", 1);
    if (v == 1 || v == 2) return cg_host_log1p_f32(m, a, v);
  }
  if (fl && op == LOOM_OP_LOG1P && !m->gpu) {
    /* SLEEF's log1p (and its vector log1pf above ~1e38) gives inf near the largest floats (1 + x
     * overflows inside); there log1p(x) = log(x) to rounding. SLEEF's log1p of the smallest subnormal
     * is 0; for |x| < 2^-56 (f32: 2^-27) log1p(x) = x - x^2/2 + ... rounds to x itself. Host only: the
     * device libraries' log1p is right on the whole range (libdevice's adds 1 rounding toward zero), and
     * on a GPU the guards' second logarithm is paid on every element (float32 mish: 86 -> 59 SASS
     * instructions). */
    LLVMValueRef x0 = a;
    LLVMValueRef r = libm_call(m, lm, t, &x0, 1);
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, a, fconst(m, t, t == LOOM_FLOAT64 ? 1e300 : 1e30), "");
    r = LLVMBuildSelect(b, big, libm_call(m, "log", t, &x0, 1), r, "");
    LLVMValueRef tiny = LLVMBuildFCmp(b, LLVMRealOLT, intr1(m, "llvm.fabs", a),
                                      fconst(m, t, t == LOOM_FLOAT64 ? 0x1p-56 : 0x1p-27), "");
    return LLVMBuildSelect(b, tiny, a, r, "");
  }
  if (fl && !m->gpu && (op == LOOM_OP_COSH || op == LOOM_OP_SINH)) {
    /* SLEEF's cosh/sinh overflow to inf where exp(|x|) does (|x| > ~709.78 / 88.72), short of their
     * own limits (~710.48 / 89.42); there cosh(x) = e^(|x|/2) / 2 * e^(|x|/2) (sinh with x's sign). */
    LLVMValueRef x0 = a;
    LLVMValueRef r = libm_call(m, lm, t, &x0, 1);
    LLVMValueRef ax = intr1(m, "llvm.fabs", a);
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, ax, fconst(m, t, t == LOOM_FLOAT64 ? 700.0 : 80.0), "");
    LLVMValueRef hx = LLVMBuildFMul(b, ax, fconst(m, t, 0.5), "");
    LLVMValueRef h = libm_call(m, "exp", t, &hx, 1);
    LLVMValueRef alt = LLVMBuildFMul(b, LLVMBuildFMul(b, h, fconst(m, t, 0.5), ""), h, "");
    if (op == LOOM_OP_SINH) alt = intr2(m, "llvm.copysign", alt, a);
    return LLVMBuildSelect(b, big, alt, r, "");
  }
  if (!m->gpu && t == LOOM_FLOAT32 && op == LOOM_OP_ERF) {
    static int poly = -1; /* LOOM_HOST_POLY_ERF=0: SLEEF's erff (A/B timings) */
    if (cg_env_int_once(&poly, "LOOM_HOST_POLY_ERF", 1)) return cg_host_erf_f32(m, a);
  }
  if (!m->gpu && t == LOOM_FLOAT32 && op == LOOM_OP_EXP) {
    static int poly = -1; /* LOOM_HOST_POLY_EXP=0: SLEEF's expf_u10 (A/B timings) */
    if (cg_env_int_once(&poly, "LOOM_HOST_POLY_EXP", 1)) return cg_host_exp_f32(m, a);
  }
  if (!m->gpu && t == LOOM_FLOAT32 && op == LOOM_OP_TANH) {
    static int poly = -1; /* LOOM_HOST_POLY_TANH=0: SLEEF's tanhf_u35; 2: the float32 rational (A/B timings) */
    int v = cg_env_int_once(&poly, "LOOM_HOST_POLY_TANH", 1);
    if (v == 1 || v == 2) return cg_host_tanh_f32(m, a, v);
  }
  if (fl && op == LOOM_OP_TANH && m->gpu) {
    LLVMValueRef r = tanh_of_log1p(m, t, a);
    if (r) return r;
  }
  if (fl && op == LOOM_OP_HYPOT && LLVMTypeOf(a) == LLVMFloatTypeInContext(m->c)) {
    /* float32 hypot: sqrt(x^2 + y^2) in float64 (both squares exact, one rounding of the sum, IEEE sqrt),
     * rounded once to float32: correctly rounded but within ~2^-29 of a tie, as glibc's hypotf (NumPy's
     * np.hypot on Linux) computes it; on the host SLEEF's hypotf_u35 was up to 1.84 ulp off. libdevice's
     * __nv_hypotf took sqrt.approx under LLVM 19's nvvm-reflect (nvptx.c now folds __CUDA_PREC_SQRT to 1)
     * and is not correctly rounded with IEEE sqrt either (CUDA documents a multi-ulp bound): off NumPy, and off a raw kernel's hypotf from NVRTC (CuPy's test_cuFloatComplex compares
     * cuCabsf with abs of complex64 exactly; cupy/complex.cuh computes the same way). inf wins over NaN. */
    LLVMTypeRef f64 = LLVMDoubleTypeInContext(m->c);
    LLVMValueRef x = LLVMBuildFPExt(b, a, f64, ""), y = LLVMBuildFPExt(b, bv, f64, "");
    LLVMValueRef ss = LLVMBuildFAdd(b, LLVMBuildFMul(b, x, x, ""), LLVMBuildFMul(b, y, y, ""), "");
    LLVMValueRef r = LLVMBuildFPTrunc(b, intr1(m, "llvm.sqrt", ss), LLVMTypeOf(a), "");
    LLVMValueRef inf = LLVMConstReal(LLVMTypeOf(a), INFINITY);
    LLVMValueRef isinf = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOEQ, intr1(m, "llvm.fabs", a), inf, ""),
                                     LLVMBuildFCmp(b, LLVMRealOEQ, intr1(m, "llvm.fabs", bv), inf, ""), "");
    return LLVMBuildSelect(b, isinf, inf, r, "");
  }
  if (lm && fl && op != LOOM_OP_POW) {
    LLVMValueRef xs[2] = {a, bv};
    return libm_call(m, lm, t, xs, op == LOOM_OP_ATAN2 || op == LOOM_OP_HYPOT ? 2 : 1);
  }
  switch (op) {
  case LOOM_OP_NEG:
    if (fl) return LLVMBuildFNeg(b, a, "");
    if (bo) return bad(m, t, "negative");
    return LLVMBuildSub(b, iconst(m, t, 0), a, "");
  case LOOM_OP_ABS:
    if (fl) return intr1(m, "llvm.fabs", a);
    if (!sg) return a;
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, a, iconst(m, t, 0), ""),
                           LLVMBuildSub(b, iconst(m, t, 0), a, ""), a, "");
  case LOOM_OP_SIGN:
    if (bo) return bad(m, t, "sign");
    if (fl) {
      LLVMValueRef z = fconst(m, t, 0);
      LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, a, z, ""), z, a, "");
      r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, a, z, ""), fconst(m, t, -1), r, "");
      return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, a, z, ""), fconst(m, t, 1), r, "");
    } else {
      LLVMValueRef gt = LLVMBuildZExt(b, LLVMBuildICmp(b, sg ? LLVMIntSGT : LLVMIntUGT, a, iconst(m, t, 0), ""), cg_reg_type(m, t), "");
      if (!sg) return gt;
      LLVMValueRef lt = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntSLT, a, iconst(m, t, 0), ""), cg_reg_type(m, t), "");
      return LLVMBuildSub(b, gt, lt, "");
    }
  case LOOM_OP_RECIPROCAL: /* ints: 1 / x truncated toward 0, so 1 -> 1, -1 -> -1, else (0 too) 0 */
    if (fl) return cg_fdiv(m, t, fconst(m, t, 1.0), a);
    if (bo) return bad(m, t, "reciprocal");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, a, iconst(m, t, 1), ""), iconst(m, t, 1),
                           sg ? LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, a, iconst(m, t, -1), ""),
                                                iconst(m, t, -1), iconst(m, t, 0), "")
                              : iconst(m, t, 0), "");
  case LOOM_OP_SQRT: return fl ? cg_fsqrt(m, a) : bad(m, t, "sqrt");
  case LOOM_OP_RSQRT: return fl ? cg_fdiv(m, t, fconst(m, t, 1.0), cg_fsqrt(m, a)) : bad(m, t, "rsqrt");
  case LOOM_OP_FLOOR: return fl ? intr1(m, "llvm.floor", a) : a;
  case LOOM_OP_CEIL: return fl ? intr1(m, "llvm.ceil", a) : a;
  case LOOM_OP_TRUNC: return fl ? intr1(m, "llvm.trunc", a) : a;
  case LOOM_OP_RINT: return fl ? intr1(m, "llvm.roundeven", a) : a;
  case LOOM_OP_ISNAN:
    return fl ? isnan_v(m, a) : LLVMConstInt(LLVMInt1TypeInContext(m->c), 0, 0);
  case LOOM_OP_ISINF:
    if (!fl) return LLVMConstInt(LLVMInt1TypeInContext(m->c), 0, 0);
    return LLVMBuildFCmp(b, LLVMRealOEQ, intr1(m, "llvm.fabs", a), fconst(m, t, 1.0 / 0.0), "");
  case LOOM_OP_ISFINITE:
    if (!fl) return LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0);
    return LLVMBuildFCmp(b, LLVMRealOLT, intr1(m, "llvm.fabs", a), fconst(m, t, 1.0 / 0.0), "");
  case LOOM_OP_LOGICAL_NOT:
    return LLVMBuildNot(b, cg_cast(m, t, LOOM_BOOL, a), "");
  case LOOM_OP_BITWISE_NOT:
    if (fl) return bad(m, t, "bitwise_not");
    return LLVMBuildNot(b, a, "");
  case LOOM_OP_ADD:
    return fl ? LLVMBuildFAdd(b, a, bv, "") : bo ? LLVMBuildOr(b, a, bv, "") : LLVMBuildAdd(b, a, bv, "");
  case LOOM_OP_SUB:
    return fl ? LLVMBuildFSub(b, a, bv, "") : bo ? LLVMBuildXor(b, a, bv, "") : LLVMBuildSub(b, a, bv, "");
  case LOOM_OP_MUL:
    return fl ? LLVMBuildFMul(b, a, bv, "") : bo ? LLVMBuildAnd(b, a, bv, "") : LLVMBuildMul(b, a, bv, "");
  case LOOM_OP_TRUEDIV:
    return fl ? cg_fdiv(m, t, a, bv) : bad(m, t, "true_divide operands (the IR casts to float)");
  case LOOM_OP_FLOORDIV:
    if (bo) return bad(m, t, "floor_divide");
    return fl ? float_divmod(m, t, a, bv, false) : int_divmod(m, t, a, bv, false);
  case LOOM_OP_MOD:
    if (bo) return bad(m, t, "remainder");
    return fl ? float_divmod(m, t, a, bv, true) : int_divmod(m, t, a, bv, true);
  case LOOM_OP_POW: {
    if (bo) return bad(m, t, "power");
    LLVMValueRef k = cg_pow_const(m, t, a, bv); /* a constant exponent: multiplies, sqrt (math_pow.c) */
    if (k) return k;
    if (!fl) return cg_int_pow(m, t, a, bv);
    LLVMValueRef xs[2] = {a, bv};
    return libm_call(m, "pow", t, xs, 2);
  }
  case LOOM_OP_MAXIMUM: return fl ? float_minmax(m, a, bv, true, false) : int_minmax(m, t, a, bv, true);
  case LOOM_OP_MINIMUM: return fl ? float_minmax(m, a, bv, false, false) : int_minmax(m, t, a, bv, false);
  case LOOM_OP_FMAX: return fl ? float_minmax(m, a, bv, true, true) : int_minmax(m, t, a, bv, true);
  case LOOM_OP_FMIN: return fl ? float_minmax(m, a, bv, false, true) : int_minmax(m, t, a, bv, false);
  case LOOM_OP_COPYSIGN: return fl ? intr2(m, "llvm.copysign", a, bv) : bad(m, t, "copysign");
  case LOOM_OP_EQ: case LOOM_OP_NE: case LOOM_OP_LT: case LOOM_OP_LE: case LOOM_OP_GT: case LOOM_OP_GE: {
    static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    int i = (int)op - (int)LOOM_OP_EQ;
    if (fl) return LLVMBuildFCmp(b, fp[i], a, bv, "");
    return LLVMBuildICmp(b, sg ? sp[i] : up[i], a, bv, "");
  }
  case LOOM_OP_LOGICAL_AND: case LOOM_OP_LOGICAL_OR: case LOOM_OP_LOGICAL_XOR: {
    LLVMValueRef x = cg_cast(m, t, LOOM_BOOL, a), y = cg_cast(m, t, LOOM_BOOL, bv);
    if (op == LOOM_OP_LOGICAL_AND) return LLVMBuildAnd(b, x, y, "");
    if (op == LOOM_OP_LOGICAL_OR) return LLVMBuildOr(b, x, y, "");
    return LLVMBuildXor(b, x, y, "");
  }
  case LOOM_OP_BITWISE_AND: return fl ? bad(m, t, "bitwise_and") : LLVMBuildAnd(b, a, bv, "");
  case LOOM_OP_BITWISE_OR: return fl ? bad(m, t, "bitwise_or") : LLVMBuildOr(b, a, bv, "");
  case LOOM_OP_BITWISE_XOR: return fl ? bad(m, t, "bitwise_xor") : LLVMBuildXor(b, a, bv, "");
  case LOOM_OP_LEFT_SHIFT: case LOOM_OP_RIGHT_SHIFT:
    if (fl || bo) return bad(m, t, "shift");
    return cg_int_shift(m, t, a, bv, op == LOOM_OP_LEFT_SHIFT);
  case LOOM_OP_WHERE:
    return LLVMBuildSelect(b, a, bv, args[2], "");
  case LOOM_OP_RANDOM_BITS: case LOOM_OP_RANDOM_BITS_HI:
    if (t != LOOM_UINT64) return bad(m, t, "random_bits (key and counter are uint64)");
    return cg_random_bits(m, a, bv, op == LOOM_OP_RANDOM_BITS_HI);
  case LOOM_OP_CONJ: case LOOM_OP_REAL: return a; /* a real value is its own conjugate and real part */
  case LOOM_OP_IMAG: return fl ? fconst(m, t, 0.0) : LLVMConstNull(cg_reg_type(m, t));
  case LOOM_OP_COMPLEX:
    if (!fl) return bad(m, t, "complex (its operands are cast to a float dtype)");
    return cg_cx_make(m, dtype_complex_of(t), a, bv);
  default:
    break;
  }
  if (lm) return bad(m, t, lm); /* a float function on a non-float operand */
  diag_error(m->d, LOOM_ERR_UNSUPPORTED, "codegen: op %d is not supported", (int)op);
  return LLVMGetUndef(cg_reg_type(m, t));
}

/* ---- reductions ------------------------------------------------------------------------------------------------ */

LLVMValueRef cg_identity(CgMath *m, LoomReduceOp op, LoomDType t) {
  if (is_cplx(t)) return cg_complex_identity(m, op, t);
  bool fl = is_float(t);
  int bits = int_bits(t);
  switch (op) {
  case LOOM_REDUCE_SUM: case LOOM_REDUCE_MEAN: case LOOM_REDUCE_ANY:
    return fl ? fconst(m, t, 0.0) : iconst(m, t, 0);
  case LOOM_REDUCE_PROD: case LOOM_REDUCE_ALL:
    return fl ? fconst(m, t, 1.0) : iconst(m, t, 1);
  case LOOM_REDUCE_MIN: case LOOM_REDUCE_ARGMIN:
    if (fl) return fconst(m, t, 1.0 / 0.0);
    if (t == LOOM_BOOL) return iconst(m, t, 1);
    if (is_signed(t)) return LLVMConstInt(cg_reg_type(m, t), bits == 64 ? (unsigned long long)INT64_MAX : (1ull << (bits - 1)) - 1, 0);
    return LLVMConstAllOnes(cg_reg_type(m, t));
  case LOOM_REDUCE_MAX: case LOOM_REDUCE_ARGMAX:
    if (fl) return fconst(m, t, -1.0 / 0.0);
    if (is_signed(t)) return LLVMConstInt(cg_reg_type(m, t), 1ull << (bits - 1), 0);
    return iconst(m, t, 0);
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: reduce op %d has no identity", (int)op);
    return LLVMGetUndef(cg_reg_type(m, t));
  }
}

LLVMValueRef cg_combine(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef a, LLVMValueRef v) {
  if (is_cplx(t)) return cg_complex_combine(m, op, t, a, v);
  LLVMBuilderRef b = m->b;
  bool fl = is_float(t), bo = t == LOOM_BOOL;
  switch (op) {
  case LOOM_REDUCE_SUM: case LOOM_REDUCE_MEAN:
    if (fl) {
      LLVMValueRef r = LLVMBuildFAdd(b, a, v, "");
      LLVMSetFastMathFlags(r, LLVMFastMathAllowReassoc);
      return r;
    }
    return bo ? LLVMBuildOr(b, a, v, "") : LLVMBuildAdd(b, a, v, "");
  case LOOM_REDUCE_PROD:
    if (fl) {
      LLVMValueRef r = LLVMBuildFMul(b, a, v, "");
      LLVMSetFastMathFlags(r, LLVMFastMathAllowReassoc);
      return r;
    }
    return bo ? LLVMBuildAnd(b, a, v, "") : LLVMBuildMul(b, a, v, "");
  case LOOM_REDUCE_MIN: case LOOM_REDUCE_MAX: {
    bool mx = op == LOOM_REDUCE_MAX;
    if (!fl) return int_minmax(m, t, a, v, mx);
    LLVMValueRef r = intr2(m, mx ? "llvm.maximum" : "llvm.minimum", a, v);
    /* host: NaN still wins, but -0 and +0 need not be ordered (NumPy's own max / min of zeros of both
     * signs depends on their order); x86 then drops two of llvm.maximum's six instructions a vector */
    static int nsz = -1; /* LOOM_HOST_MINMAX_NSZ=0: ordered zeros (A/B timings) */
    if (!m->gpu && cg_env_int_once(&nsz, "LOOM_HOST_MINMAX_NSZ", 1)) LLVMSetFastMathFlags(r, LLVMFastMathNoSignedZeros);
    return r;
  }
  case LOOM_REDUCE_ANY: return LLVMBuildOr(b, a, cg_cast(m, t, LOOM_BOOL, v), "");
  case LOOM_REDUCE_ALL: return LLVMBuildAnd(b, a, cg_cast(m, t, LOOM_BOOL, v), "");
  default:
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: reduce op %d has no combiner", (int)op);
    return a;
  }
}

LLVMValueRef cg_arg_better(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef cur, LLVMValueRef v) {
  if (is_cplx(t)) return cg_complex_arg_better(m, op, t, cur, v);
  LLVMBuilderRef b = m->b;
  bool max = op == LOOM_REDUCE_ARGMAX;
  if (is_float(t)) {
    LLVMValueRef strict = LLVMBuildFCmp(b, max ? LLVMRealOGT : LLVMRealOLT, v, cur, "");
    LLVMValueRef take = LLVMBuildOr(b, strict, isnan_v(m, v), "");
    return LLVMBuildAnd(b, take, LLVMBuildNot(b, isnan_v(m, cur), ""), "");
  }
  LLVMIntPredicate p = is_signed(t) ? (max ? LLVMIntSGT : LLVMIntSLT) : (max ? LLVMIntUGT : LLVMIntULT);
  return LLVMBuildICmp(b, p, v, cur, "");
}

bool cg_gpu_poly_log10(void) {
  static int on = -1;
  return cg_env_int_once(&on, "LOOM_GPU_POLY_LOG10", 0) == 1;
}
