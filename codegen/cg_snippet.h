/* SPDX-License-Identifier: Apache-2.0 */
/* cg_snippet.h: private interface of codegen/snippet.c, the lowering of a kernel's snippet module
 * (ir/snippet.h: the functions of an ElementwiseKernel / ReductionKernel) to LLVM functions that the
 * kernel's loops call through KI_USER instructions and user reductions (IR_REDUCE_USER).
 *
 * Calling convention of a lowered snippet function (internal, alwaysinline, so after inlining only
 * registers remain): one LLVM parameter per snippet parameter in order, of the compute register type
 * of its dtype (cg_reg_type: float16 travels as float), except raw arrays, which take two: the base
 * pointer and the int64 element count. Kernel and post functions return a literal struct of the final
 * values of their SV_OUT parameters (compute register types, in order); helpers, map, reduce and
 * identity return their value (void helpers return void).
 */
#ifndef LOOM_CG_SNIPPET_H
#define LOOM_CG_SNIPPET_H

#include "codegen/cg_llvm.h"
#include "ir/snippet.h"

typedef struct CgSnippet CgSnippet;

/* Lowers every function of k->snippet into m->m and checks every KI_USER / KI_USER_OUT of k against
 * the module (arguments, parameter kinds and dtypes). *out is NULL when k has no snippet. The builder
 * m->b is left where it was. Free with cg_snippet_free (NULL is fine). */
LoomStatus cg_snippet_lower(LoomContext *ctx, CgMath *m, const KernelIr *k, CgSnippet **out, Diag *d);
void cg_snippet_free(CgSnippet *s);

/* KI_USER instruction i of the kernel at m->b: cache holds the values of earlier instructions,
 * base the nbuf buffer pointers and stride the nbuf * ndim strides (raw buffers: the element count
 * at dim 0). Returns the call's value (a struct for kernel/post functions). */
LLVMValueRef cg_snippet_call(CgSnippet *s, CgMath *m, int32_t i, const LLVMValueRef *cache,
                             const LLVMValueRef *base, const LLVMValueRef *stride);
/* KI_USER_OUT instruction i: the out value projected from agg (the KI_USER's value). */
LLVMValueRef cg_snippet_user_out(CgSnippet *s, CgMath *m, int32_t i, LLVMValueRef agg);
/* The identity and the combiner of a user reduction (values of the reduce dtype's register type). */
LLVMValueRef cg_snippet_identity(CgSnippet *s, CgMath *m);
LLVMValueRef cg_snippet_combine(CgSnippet *s, CgMath *m, LLVMValueRef a, LLVMValueRef v);

/* Per-worker regions (ElementwiseKernel loop_prep / after_loop, ir/snippet.h). A loop structure that
 * runs a worker's points (a GPU thread's grid-stride loops, a host run() over a range) brackets them:
 * cg_snippet_worker_begin zeroes the state block `state` (an alloca of cg_snippet_state_type, in the
 * entry block) and calls loop_prep; every KI_USER of the kernel function until cg_snippet_worker_end
 * passes that block; worker_end calls after_loop. base / stride as for cg_snippet_call; npoints: the
 * int64 number of points of the whole iteration space (_ind.size()). No-ops when the snippet has no
 * regions (cg_snippet_has_worker false). */
bool cg_snippet_has_worker(const CgSnippet *s);
LLVMTypeRef cg_snippet_state_type(const CgSnippet *s);
void cg_snippet_worker_begin(CgSnippet *s, CgMath *m, LLVMValueRef state, const LLVMValueRef *base,
                             const LLVMValueRef *stride, LLVMValueRef npoints);
void cg_snippet_worker_end(CgSnippet *s, CgMath *m, const LLVMValueRef *base, const LLVMValueRef *stride,
                           LLVMValueRef npoints);

#endif /* LOOM_CG_SNIPPET_H */
