/* amdgpu_lower.c: the AMD hooks of the shared GPU lowering (cg_gpu.h's CgGpuHooks).
 *
 *  - Launch indices: llvm.amdgcn.workitem.id.x / workgroup.id.x; the block size and the grid size from
 *    the HSA dispatch packet (llvm.amdgcn.dispatch.ptr: workgroup_size_x, a u16 at byte 4, and
 *    grid_size_x, a u32 at byte 12 counting work-items), which every code object version provides,
 *    so nothing depends on the kernarg layout of the hidden arguments (v4 and v5 differ there).
 *    gridDim = ceil(grid_size_x / workgroup_size_x) (HIP launches whole blocks: the division is exact).
 *  - Wave shuffles: ds_bpermute (llvm.amdgcn.ds.bpermute, a byte address 4 * (lane ^ mask)), the lane
 *    from mbcnt (lo, then hi for a wave of 64); every lane of the wave works, wave 32 or 64.
 *  - Barriers: s_barrier between workgroup-scope release and acquire fences (what HIP's
 *    __syncthreads is): the fences make LDS (and global) writes before the barrier visible after it,
 *    and keep LLVM from moving memory operations across s_barrier, an intrinsic that touches no
 *    memory. LLVM 19's C API cannot give a fence a sync scope, so the three live in a small function
 *    parsed from IR text once per module and inlined by the optimizer.
 *  - Kernels: the amdgpu_kernel calling convention, "amdgpu-flat-work-group-size"="1,<max block>" (the
 *    register budget then fits the largest block launched) and "uniform-work-group-size"="true".
 *  - Address spaces: global 1, LDS 3 (poison-initialized: LDS cannot be initialized), the parameter
 *    block byref in the constant space 4 (it lives in the kernarg segment, read with scalar loads),
 *    allocas in the private space 5.
 *  - Math: ocml's __ocml_<name>_f32 / _f64. float32 division and square root: LLVM's own fdiv and
 *    llvm.sqrt (no hooks). Without !fpmath metadata or afn flags the AMDGPU backend lowers both to
 *    correctly rounded sequences (fdiv: v_div_scale / v_rcp / FMA refinement / v_div_fmas /
 *    v_div_fixup with denormals enabled around it; sqrt: v_sqrt with scaling and a residual
 *    correction), the IEEE results the host gives; test_amdgpu checks the instructions are there.
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>

#include "codegen/amdgpu.h"

/* ---- launch indices ------------------------------------------------------------------------------- */

static LLVMValueRef amd_call(CgMath *m, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, unsigned nparams,
                             LLVMValueRef *args) {
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, name);
  LLVMTypeRef fty = LLVMFunctionType(ret, params, nparams, 0);
  if (!fn) fn = LLVMAddFunction(m->m, name, fty);
  return LLVMBuildCall2(m->b, fty, fn, args, nparams, "");
}

/* A load of `t` at byte `offset` of the dispatch packet: invariant for the kernel, with a value range. */
static LLVMValueRef dispatch_field(CgMath *m, LLVMTypeRef t, unsigned offset, unsigned long long lo,
                                   unsigned long long hi) {
  LLVMContextRef c = m->c;
  LLVMTypeRef cptr = LLVMPointerTypeInContext(c, AMD_AS_CONSTANT);
  LLVMValueRef dp = amd_call(m, "llvm.amdgcn.dispatch.ptr", cptr, NULL, 0, NULL);
  LLVMValueRef off = LLVMConstInt(LLVMInt64TypeInContext(c), offset, 0);
  LLVMValueRef p = LLVMBuildGEP2(m->b, LLVMInt8TypeInContext(c), dp, &off, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(m->b, t, p, "");
  LLVMSetAlignment(v, 4);
  LLVMMetadataRef range[2] = {LLVMValueAsMetadata(LLVMConstInt(t, lo, 0)), LLVMValueAsMetadata(LLVMConstInt(t, hi, 0))};
  LLVMSetMetadata(v, LLVMGetMDKindIDInContext(c, "range", 5), LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, range, 2)));
  LLVMSetMetadata(v, LLVMGetMDKindIDInContext(c, "invariant.load", 14), LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, NULL, 0)));
  return v;
}

static LLVMValueRef amd_index(CgMath *m, CgGpuIndex which) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c), i16 = LLVMInt16TypeInContext(m->c);
  switch (which) {
  case CG_GPU_THREAD_ID: return amd_call(m, "llvm.amdgcn.workitem.id.x", i32, NULL, 0, NULL);
  case CG_GPU_BLOCK_ID: return amd_call(m, "llvm.amdgcn.workgroup.id.x", i32, NULL, 0, NULL);
  case CG_GPU_BLOCK_DIM: return LLVMBuildZExt(m->b, dispatch_field(m, i16, 4, 1, 1025), i32, "");
  case CG_GPU_GRID_DIM: {
    LLVMValueRef wg = LLVMBuildZExt(m->b, dispatch_field(m, i16, 4, 1, 1025), i32, "");
    LLVMValueRef grid = dispatch_field(m, i32, 12, 1, 0); /* [1, 2^32): a wrapped range */
    LLVMValueRef one = LLVMConstInt(i32, 1, 0);
    return LLVMBuildAdd(m->b, LLVMBuildUDiv(m->b, LLVMBuildSub(m->b, grid, one, ""), wg, ""), one, "");
  }
  }
  return LLVMGetUndef(i32);
}

/* ---- wave shuffles, barriers, kernels ------------------------------------------------------------- */

static int wave_of(CgMath *m) { return m->gpu ? m->gpu->wave : 64; }

static LLVMValueRef lane_id(CgMath *m) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMTypeRef pt[2] = {i32, i32};
  LLVMValueRef a[2] = {LLVMConstInt(i32, 0xffffffffu, 0), LLVMConstInt(i32, 0, 0)};
  LLVMValueRef lo = amd_call(m, "llvm.amdgcn.mbcnt.lo", i32, pt, 2, a);
  if (wave_of(m) == 32) return lo;
  a[1] = lo;
  return amd_call(m, "llvm.amdgcn.mbcnt.hi", i32, pt, 2, a);
}

static LLVMValueRef amd_shuffle_xor(CgMath *m, LLVMValueRef v, int lane_mask) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef src = LLVMBuildXor(m->b, lane_id(m), LLVMConstInt(i32, (unsigned)lane_mask, 0), "");
  LLVMValueRef addr = LLVMBuildShl(m->b, src, LLVMConstInt(i32, 2, 0), ""); /* a byte address */
  LLVMTypeRef pt[2] = {i32, i32};
  LLVMValueRef a[2] = {addr, v};
  return amd_call(m, "llvm.amdgcn.ds.bpermute", i32, pt, 2, a);
}

#define BARRIER_FN "loom.amdgpu.barrier"
static const char barrier_ir[] =
    "define void @" BARRIER_FN "() #0 {\n"
    "  fence syncscope(\"workgroup\") release\n"
    "  call void @llvm.amdgcn.s.barrier()\n"
    "  fence syncscope(\"workgroup\") acquire\n"
    "  ret void\n"
    "}\n"
    "declare void @llvm.amdgcn.s.barrier() #1\n"
    "attributes #0 = { alwaysinline convergent nounwind }\n"
    "attributes #1 = { convergent nounwind willreturn }\n";

/* The barrier function of m's module, defined on first use (external until gpu_compile.c's
 * internalize: a local definition would not survive the link into an unreferencing module). */
static LLVMValueRef barrier_fn(CgMath *m) {
  LLVMValueRef fn = LLVMGetNamedFunction(m->m, BARRIER_FN);
  if (fn) return fn;
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(barrier_ir, sizeof barrier_ir - 1, "barrier");
  LLVMModuleRef part = NULL;
  char *msg = NULL;
  if (LLVMParseIRInContext(m->c, mb, &part, &msg)) { /* consumes mb */
    diag_error(m->d, LOOM_ERR_INTERNAL, "internal error: AMDGPU barrier IR: %s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return NULL;
  }
  LLVMSetTarget(part, LLVMGetTarget(m->m));
  LLVMSetDataLayout(part, LLVMGetDataLayoutStr(m->m));
  if (LLVMLinkModules2(m->m, part)) { /* destroys part */
    diag_error(m->d, LOOM_ERR_INTERNAL, "internal error: linking the AMDGPU barrier failed");
    return NULL;
  }
  return LLVMGetNamedFunction(m->m, BARRIER_FN);
}

static void amd_barrier(CgMath *m) {
  LLVMValueRef fn = barrier_fn(m);
  if (!fn) return;
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(m->c), NULL, 0, 0);
  LLVMBuildCall2(m->b, fty, fn, NULL, 0, "");
}

/* llvm.amdgcn.ballot of the wave's width */
static LLVMValueRef amd_ballot(CgMath *m, LLVMValueRef pred) {
  int w = wave_of(m);
  LLVMTypeRef t = LLVMIntTypeInContext(m->c, (unsigned)w), i1 = LLVMInt1TypeInContext(m->c);
  return amd_call(m, w == 32 ? "llvm.amdgcn.ballot.i32" : "llvm.amdgcn.ballot.i64", t, &i1, 1, &pred);
}

/* A wave runs in lockstep and its LDS accesses complete in order: only the compiler must not move
 * memory accesses across (a single-thread fence). */
static void amd_wave_sync(CgMath *m) { LLVMBuildFence(m->b, LLVMAtomicOrderingAcquireRelease, 1, ""); }

/* acq_rel at system scope (a superset of agent scope; LLVM 19's C API names no sync scope). */
static void amd_fence_device(CgMath *m) { LLVMBuildFence(m->b, LLVMAtomicOrderingAcquireRelease, 0, ""); }

static void amd_mark_kernel(CgMath *m, LLVMValueRef fn, int max_block, bool fit) {
  (void)fit; /* amdgpu-flat-work-group-size bounds the registers already */
  char v[32];
  snprintf(v, sizeof v, "1,%d", max_block);
  LLVMSetFunctionCallConv(fn, LLVMAMDGPUKERNELCallConv);
  LLVMAddTargetDependentFunctionAttr(fn, "amdgpu-flat-work-group-size", v);
  LLVMAddTargetDependentFunctionAttr(fn, "uniform-work-group-size", "true");
}

/* ocml: __ocml_exp_f32, __ocml_atan2_f64. */
static void amd_math_name(char *buf, size_t cap, const char *base, LoomDType t) {
  snprintf(buf, cap, "%s%s_f%d", AMD_OCML_PREFIX, base, t == LOOM_FLOAT32 ? 32 : 64);
}

void cg_amdgpu_lower_hooks(CgGpuHooks *h, int wave) {
  h->wave = wave;
  h->as_global = AMD_AS_GLOBAL;
  h->as_shared = AMD_AS_LOCAL;
  h->as_param = AMD_AS_CONSTANT;
  h->as_private = AMD_AS_PRIVATE;
  h->param_attr = "byref";
  h->shared_poison = true;
  h->index = amd_index;
  h->shuffle_xor = amd_shuffle_xor;
  h->barrier = amd_barrier;
  h->mark_kernel = amd_mark_kernel;
  h->ballot = amd_ballot;
  h->wave_sync = amd_wave_sync;
  h->fence_device = amd_fence_device;
  h->match_any = NULL; /* no such instruction: gpu_radix.c matches with ballots */
  h->math_name = amd_math_name;
  h->fdiv_f32 = NULL; /* LLVM's fdiv: correctly rounded on AMDGPU (see the top) */
  h->fsqrt_f32 = NULL;
  h->frcp_approx_f32 = NULL; /* tanh(log1p(u)) divides exactly here: the division is native */
  h->mulhi_u32 = NULL; /* (zext a * zext b) >> 32: a 64-bit multiply */
}
