/* SPDX-License-Identifier: Apache-2.0 */
/* cg_llvm.h: private interface of codegen/ (the lowering, math.c and the target files).
 *
 * math.c lowers scalar semantics (one KInstr value at a time) and knows nothing of loops, so every
 * target reuses it (GPU targets through CgMath.gpu: their math library and float32 sequences).
 * lower.c holds the shared instruction evaluator; lower_host.c the host loop structure
 * (cg_lower_host); gpu_lower.c and gpu_strategies.c the GPU one (cg_lower_gpu, cg_gpu.h).
 */
#ifndef LOOM_CG_LLVM_H
#define LOOM_CG_LLVM_H

#include <stdio.h>

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/codegen.h"
#include "ir/ir.h"

/* Where the host's math functions come from: SLEEF's scalar functions (Sleef_expf_u10, ...) called by
 * their own names, with vector variants from SLEEF's GNU vector ABI (_ZGVeN16v_expf, ...). */
typedef struct CgVecMath {
  /* ISA letters of the GNU vector ABI usable on the target, best first ("edcb" on AVX-512:
   * e = 512-bit, d = AVX2 256-bit, c = AVX 256-bit, b = SSE 128-bit). Empty or NULL: scalar only. */
  const char *isas;
  /* Whether a SLEEF symbol (scalar or vector) exists; NULL: no SLEEF (plain libm calls, scalar). */
  bool (*has_symbol)(void *user, const char *name);
  void *user;
} CgVecMath;

/* State of the scalar lowering of one module. Errors are recorded in d (first wins); builders
 * keep returning usable (undef) values after an error so callers check once at the end. */
#define CG_MAX_USED 128
struct CgGpuHooks;
typedef struct CgMath {
  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  const CgVecMath *vec; /* may be NULL */
  const struct CgGpuHooks *gpu; /* GPU targets: math from the device library (cg_gpu.h); NULL: libm + SLEEF */
  Diag *d;
  /* the instruction being emitted reads only values that are the same at every point of its O point
   * (constants, parameters, reduction results: lower.c's `varies`): GPU hooks then keep straight-line
   * sequences that are computed once (nvptx's division) instead of per-point fast paths with branches */
  bool uniform;
  /* the instruction's second operand (a divisor) varies per point (lower.c's `varies`): nothing to hoist */
  bool rhs_varies;
  /* code emitted now must stay one basic block (the unrolled GPU reduction loop evaluates its points'
   * loads and values in turn: a branch between them would keep the later loads from being issued
   * before the earlier points' arithmetic) */
  bool no_branch;
  int nused;
  LLVMValueRef used[CG_MAX_USED]; /* vector declarations kept alive through llvm.compiler.used */
} CgMath;

/* Register type of a compute dtype: i1 for bool, iN for ints, float/double (float16, bfloat16 ->
 * float), {T, T} for complex. */
LLVMTypeRef cg_reg_type(CgMath *m, LoomDType t);
/* Memory type of a storage dtype: i8 for bool, half for float16, i16 for bfloat16, {T, T} for
 * complex. */
LLVMTypeRef cg_mem_type(CgMath *m, LoomDType t);
/* A value's type where float16 is half and bfloat16 its i16 bits (cg_cast's convention, math_cast.c). */
LLVMTypeRef cg_val_type(CgMath *m, LoomDType t);
LLVMValueRef cg_const(CgMath *m, LoomDType t, Scalar v);
/* Converts v of dtype `from` to dtype `to` with KI_CAST semantics (ir.h). `from`/`to` may be
 * float16, meaning an LLVM half value. */
LLVMValueRef cg_cast(CgMath *m, LoomDType from, LoomDType to, LLVMValueRef v);
/* lower_host_cast.c: a float (float32/float64 value) -> 8/16/32-bit integer KI_CAST as vector-friendly
 * steps (NaN -> 0, clamp, convert, truncate) on host targets (m->gpu NULL); NULL: use the intrinsic. */
LLVMValueRef cg_host_float_to_int(CgMath *m, LoomDType to, LLVMValueRef v);
/* pipeline.c: runs pass pipeline `passes` on mod (LLVMRunPasses), without LLVM 19's SLP vectorizer for a
 * kernel it miscompiles (k: the kernel, or NULL for modules of no kernel). Every backend's pipelines go
 * through it. cg_slp_ok: whether kernel k may run SLP (no cast from a signed to an unsigned integer). */
LLVMErrorRef cg_run_pipeline(LLVMModuleRef mod, const char *passes, LLVMTargetMachineRef tm,
                             LLVMPassBuilderOptionsRef po, const KernelIr *k);
bool cg_slp_ok(const KernelIr *k);
/* Memory value (cg_mem_type) of storage dtype `st` -> register value of compute dtype `to`. */
LLVMValueRef cg_from_mem(CgMath *m, LoomDType st, LoomDType to, LLVMValueRef v);
/* Register value of compute dtype `from` -> memory value of storage dtype `st`. */
LLVMValueRef cg_to_mem(CgMath *m, LoomDType from, LoomDType st, LLVMValueRef v);
/* One KI_ELEM: operands of dtype `operand` (for WHERE: args[0] is bool, args[1..2] `operand`).
 * May add basic blocks (integer power); the builder ends positioned after the result. */
LLVMValueRef cg_elem(CgMath *m, LoomOp op, LoomDType operand, const LLVMValueRef *args);
/* Philox4x32-10 of (key, counter), both i64: output words 0 | 1 << 32, or 2 | 3 << 32 when high_words
 * (lower_random.c; RANDOM_BITS, RANDOM_BITS_HI of ops_public.def). */
LLVMValueRef cg_random_bits(CgMath *m, LLVMValueRef key, LLVMValueRef counter, bool high_words);
/* a / b and sqrt(a) of floats, correctly rounded; on GPUs float32 ones may use the target's own
 * sequences (CgGpuHooks.fdiv_f32 / fsqrt_f32). */
LLVMValueRef cg_fdiv(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_fsqrt(CgMath *m, LLVMValueRef a);
/* a ** e for a constant exponent e that math_pow.c rewrites (small integers, +-0.5) in compute dtype t;
 * NULL otherwise (the caller emits the general power). */
/* Whether float32 value a is a float16 value widened (an fpext from half: a load or a rounded step). */
bool cg_is_widened_half(LLVMValueRef a);
/* Float16 vector comparisons, min / max, rounding and square roots of an optimized host module as float32
 * vector code between conversions (x86 without AVX512-FP16 scalarizes them; codegen/host_half.c). */
void cg_host_widen_half(LLVMModuleRef mod, const char *features);
LLVMValueRef cg_pow_const(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef e);
/* Integer a ** e (wrapping; negative exponents as ir.h says) and shifts (counts >= bits or negative:
 * 0, or -1 for a negative value shifted right), math_int.c; an integer constant of dtype t and the bits
 * of an integer dtype (bool: 1), math.c. */
LLVMValueRef cg_int_pow(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef e);
LLVMValueRef cg_int_shift(CgMath *m, LoomDType t, LLVMValueRef a, LLVMValueRef s, bool left);
LLVMValueRef cg_iconst(CgMath *m, LoomDType t, long long v);
int cg_int_bits(LoomDType t);
/* Reductions: identity and combiner (acc = op(acc, v)); `fold` asks for the reassociable form
 * used inside a loop (float sums get `reassoc`). */
LLVMValueRef cg_identity(CgMath *m, LoomReduceOp op, LoomDType acc);
LLVMValueRef cg_combine(CgMath *m, LoomReduceOp op, LoomDType acc, LLVMValueRef a, LLVMValueRef v);
/* Argmin/argmax: whether v at a later index replaces the current extreme cur (first extreme wins,
 * a NaN wins over everything that is not NaN and stays). */
LLVMValueRef cg_arg_better(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef cur,
                           LLVMValueRef v);
/* Complex values ({T, T} structs: real, imaginary) and their ops (lower_complex.c): cg_elem,
 * cg_identity, cg_combine and cg_arg_better pass complex operand dtypes on to these. */
LLVMValueRef cg_cx_make(CgMath *m, LoomDType t, LLVMValueRef re, LLVMValueRef im);
LLVMValueRef cg_cx_re(CgMath *m, LLVMValueRef v);
LLVMValueRef cg_cx_im(CgMath *m, LLVMValueRef v);
LLVMValueRef cg_complex_elem(CgMath *m, LoomOp op, LoomDType t, const LLVMValueRef *args);
LLVMValueRef cg_complex_identity(CgMath *m, LoomReduceOp op, LoomDType t);
LLVMValueRef cg_complex_combine(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef acc, LLVMValueRef v);
LLVMValueRef cg_complex_arg_better(CgMath *m, LoomReduceOp op, LoomDType t, LLVMValueRef cur, LLVMValueRef v);
/* Drops the fast-math flags of a combine's result (for a complex value: of the parts it was built
 * from), where a fold must stay in order. */
void cg_clear_fmf(LLVMValueRef v);
/* A float constant of a real compute dtype; a call of libm's `base` as math.c makes it. */
LLVMValueRef cg_fconst(CgMath *m, LoomDType t, double v);
LLVMValueRef cg_libm(CgMath *m, const char *base, LoomDType t, LLVMValueRef *args, unsigned nargs);
/* a * b + c (llvm.fmuladd: fused where the target has fma, no libm call elsewhere): the Horner steps of
 * the host's own math functions (math_erf.c, math_exp.c, math_log1p.c, math_tanh.c). */
LLVMValueRef cg_fmuladd(CgMath *m, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
/* Loom's own float32 erf for the host (math_erf.c): scalar code the loop vectorizer widens. */
LLVMValueRef cg_host_erf_f32(CgMath *m, LLVMValueRef x);
/* Loom's own float32 tanh for the host (math_tanh.c): variant 1 evaluates a rational in float64, 2 in
 * float32 (A/B only: up to 5 ulp). */
LLVMValueRef cg_host_tanh_f32(CgMath *m, LLVMValueRef x, int variant);
/* Loom's own float32 exp for the host (math_exp.c): inline, within 1 ulp. */
LLVMValueRef cg_host_exp_f32(CgMath *m, LLVMValueRef x);
/* Loom's own float32 log1p for the host (math_log1p.c): variant 1 in float32, 2 in float64 (A/B). */
LLVMValueRef cg_host_log1p_f32(CgMath *m, LLVMValueRef x, int variant);
/* log(1 + f) = f + f^2 Q(f) for f in [sqrt(2)/2 - 1, sqrt(2) - 1], float32 (math_log1p.c's polynomial) */
LLVMValueRef cg_host_log1pf_core(CgMath *m, LLVMValueRef f);
/* Loom's own float32 log10 for the host (math_log10.c): inline, within ~1 ulp. */
LLVMValueRef cg_host_log10_f32(CgMath *m, LLVMValueRef x);
/* Emits llvm.compiler.used for the vector declarations. Call once, after lowering. */
void cg_math_finish(CgMath *m);
LLVMValueRef cg_i64(CgMath *m, int64_t v);
/* An environment knob read once per process into *slot (a static int, -1 at first; A/B timings): its value,
 * dflt when unset; a negative value reads as 0 (math.c). */
int cg_env_int_once(int *slot, const char *name, int dflt);
bool cg_gpu_poly_log10(void); /* LOOM_GPU_POLY_LOG10=1: GPUs take the host's float32 log10 (math_log10.c) */
/* A call of intrinsic `name` (overload types tys, none for a non-overloaded one). */
LLVMValueRef cg_intrinsic(CgMath *m, const char *name, LLVMTypeRef *tys, unsigned ntys, LLVMValueRef *args,
                          unsigned nargs);

/* Names of the entry points lower.c defines (prefix + "_run" / "_partial" / "_finish"). */
typedef struct CgEntryNames {
  char run[64], partial[64], finish[64], colpart[64], colfinish[64];
  bool has_partial, has_col;
  int32_t acc_size;
  uint32_t col_phases; /* has_col: bit p set for each REDUCE phase p (CgCompiled.col_phases) */
} CgEntryNames;

/* Builds the host module for k into m (functions named from prefix): run always, partial/finish
 * when the phases are [REDUCE] or [REDUCE, FINAL], colpart/colfinish for reductions of the outer
 * strategy (codegen.h). fn_attrs: string attributes put on every
 * function (e.g. target-cpu), as key/value pairs, nattrs pairs. */
LoomStatus cg_lower_host(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef m, const KernelIr *k, const char *prefix,
                         const CgVecMath *vec, const char *const *fn_attrs, int nattrs,
                         CgEntryNames *names, Diag *d);

/* The diagnostics LLVM reports in a context Loom compiles in: remarks and warnings (a loop the
 * vectorizer was hinted at and left scalar: "loop not vectorized: ...") are dropped, which LLVM would
 * otherwise print on stderr at every compile a user makes; errors are printed there (LLVM's default for
 * them ends the process), the failing call returns its own status. */
static inline void cg_llvm_diagnostic(LLVMDiagnosticInfoRef info, void *user) {
  (void)user;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError) return;
  char *text = LLVMGetDiagInfoDescription(info);
  fprintf(stderr, "loom: LLVM error: %s\n", text ? text : "?");
  LLVMDisposeMessage(text);
}

static inline void cg_llvm_quiet(LLVMContextRef c) { LLVMContextSetDiagnosticHandler(c, cg_llvm_diagnostic, NULL); }

#endif /* LOOM_CG_LLVM_H */
