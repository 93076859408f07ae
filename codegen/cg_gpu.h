/* SPDX-License-Identifier: Apache-2.0 */
/* cg_gpu.h: the seam between the shared GPU code generator and a GPU target (private to codegen/).
 *
 * The shared GPU lowering (gpu_lower.c, gpu_strategies.c: grid-stride elementwise with vector entries,
 * row, cached row, column and split reductions) and the shared compile flow (gpu_compile.c: lower ->
 * keep the entries asked for -> link the math library -> internalize -> optimize -> emit) are written
 * once against the table below. A GPU target file (nvptx.c + nvptx_lower.c; amdgpu.c + amdgpu_lower.c) fills one
 * CgGpuHooks when its CgTarget is created, the way TVM's CodeGenNVPTX and CodeGenAMDGPU override a
 * shared CodeGenLLVM: the target supplies the machine's vocabulary (thread ids, wave shuffles,
 * barriers, kernel marking, address spaces, math-library names, division / square-root sequences) and
 * its tool chain (module set-up, math library linking, pass pipeline, code emission); the strategies
 * never name a vendor.
 *
 * The two GPU targets fill it: nvptx_lower.c (PTX special registers, shfl.sync, bar.sync, libdevice) and
 * amdgpu_lower.c (workitem / workgroup ids and the dispatch packet, ds_bpermute for a wave of 64 or 32,
 * s_barrier between workgroup fences, amdgpu_kernel, byref parameters in address space 4, ocml).
 */
#ifndef LOOM_CG_GPU_H
#define LOOM_CG_GPU_H

#include <pthread.h>

#include "codegen/cg_llvm.h"

/* The x components of the launch's indices, as i32 values. */
typedef enum CgGpuIndex {
  CG_GPU_THREAD_ID = 0, /* thread index within the block (threadIdx.x, workitem id) */
  CG_GPU_BLOCK_DIM,     /* threads per block (blockDim.x, workgroup size) */
  CG_GPU_BLOCK_ID,      /* block index within the grid (blockIdx.x, workgroup id) */
  CG_GPU_GRID_DIM       /* blocks in the grid (gridDim.x) */
} CgGpuIndex;

typedef struct CgGpuTarget CgGpuTarget;

typedef struct CgGpuHooks {
  /* ---- machine facts (the lowering's) -------------------------------------------------------- */
  int wave;               /* threads per wave (warp): 32 or 64; ROW blocks are multiples of it */
  unsigned as_global;     /* address space of buffers (kernel arguments, raw arrays) */
  unsigned as_shared;     /* address space of the block's shared slots (NVPTX shared, AMDGPU LDS) */
  unsigned as_param;      /* address space of the pointer to the entry's parameter block */
  unsigned as_private;    /* address space of allocas (the snippet worker state pointer) */
  const char *param_attr; /* how the parameter block is passed: "byval" or "byref" (a type attribute) */
  bool shared_poison;     /* shared globals get a poison initializer (else undef) */
  /* float64 multiplies and float32 <-> float64 conversions run at a high fraction (>= 1/2 for multiplies)
   * of the float32 rate (data-center chips: NVIDIA sm_60/70/80/90/100, AMD gfx90a/gfx94x): float32
   * sequences that need extra precision (math_pow.c's integer powers) then compute in float64 and round
   * once, in fewer instructions than float32 pairs; false on consumer chips (1/32 or 1/64 rate) */
  bool fast_f64;

  /* ---- lowering: each builds at m->b, declaring what it needs in m->m --------------------------- */
  LLVMValueRef (*index)(CgMath *m, CgGpuIndex which); /* an i32 */
  /* v (i32) of the lane (lane id ^ lane_mask) of the same wave; every lane of the wave takes part
   * (0 < lane_mask < wave) */
  LLVMValueRef (*shuffle_xor)(CgMath *m, LLVMValueRef v, int lane_mask);
  void (*barrier)(CgMath *m); /* every thread of the block, with shared memory visible after it */
  /* The lanes of the wave whose pred (i1) holds, as an integer of `wave` bits (bit i: lane i); every
   * lane of the wave takes part (library kernels: gpu_radix.c). */
  LLVMValueRef (*ballot)(CgMath *m, LLVMValueRef pred);
  /* The lanes of the wave whose v (i32) equals this lane's, as ballot's mask; every lane takes part.
   * NULL where the machine has no such instruction (callers build it from ballots). */
  LLVMValueRef (*match_any)(CgMath *m, LLVMValueRef v);
  /* Orders the shared-memory accesses of the wave's lanes before it with those after it (__syncwarp);
   * every lane of the wave takes part. */
  void (*wave_sync)(CgMath *m);
  /* An acquire-release fence at device (agent) scope: this thread's memory accesses before it are
   * ordered with those after it for every thread of the device (a value published before a flag, a
   * flag read before the value it guards: lower_scan_lookback.c). */
  void (*fence_device)(CgMath *m);
  /* makes fn a kernel entry; max_block: the most threads per block it will be launched with; fit: the
   * code must let a block of max_block threads run (NVIDIA: .maxntid, which caps the registers) */
  void (*mark_kernel)(CgMath *m, LLVMValueRef fn, int max_block, bool fit);

  /* ---- math (math.c) ---------------------------------------------------------------------------- */
  /* The device library's name of libm's `base` ("exp", "atan2", ...) for float32 or float64 (the
   * functions take and return that type): NVPTX "__nv_expf", AMDGPU "__ocml_exp_f32". */
  void (*math_name)(char *buf, size_t cap, const char *base, LoomDType t);
  /* A float32 argument of a device library call as the call should see it; NULL: as it is. */
  LLVMValueRef (*math_arg)(CgMath *m, LLVMValueRef a);
  /* Correctly rounded float32 a / b and sqrt(a) sequences; NULL: LLVM's fdiv / llvm.sqrt. */
  LLVMValueRef (*fdiv_f32)(CgMath *m, LLVMValueRef a, LLVMValueRef b);
  LLVMValueRef (*fsqrt_f32)(CgMath *m, LLVMValueRef a);
  /* An approximate float32 reciprocal (within ~1 ulp for normal inputs and results; one hardware
   * instruction) for sequences that need a faithful quotient only; NULL: none (callers divide). */
  LLVMValueRef (*frcp_approx_f32)(CgMath *m, LLVMValueRef a);
  /* A copy of the i32 v that the optimizer cannot see through nor merge with another copy (one register
   * move), so that what a later phase computes from it again is not merged with an earlier phase's value
   * of the same computation (gpu_cached.c: narrow values live across a block reduction instead of their
   * widened float32); NULL: none (the values stay as the optimizer leaves them). */
  LLVMValueRef (*opaque_i32)(CgMath *m, LLVMValueRef v);
  /* The high 32 bits of the 64-bit product of two i32 values (unsigned); NULL: a 64-bit multiply. */
  LLVMValueRef (*mulhi_u32)(CgMath *m, LLVMValueRef a, LLVMValueRef b);

  /* ---- tool chain (gpu_compile.c calls these in order, target lock held) ------------------------ */
  /* Triple, data layout and module flags of a new module. */
  void (*module_init)(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod);
  /* Links the device math library functions mod declares (and what they call) into mod. */
  LoomStatus (*link_math)(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod, Diag *d);
  /* Optimizes mod (everything but the entries internalized already) with the pipeline the target
   * picks for this kernel's strategy. */
  LoomStatus (*optimize)(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, Diag *d);
  /* The binary of the optimized module: *code ctx_alloc'ed (PTX: NUL-terminated, size = strlen). */
  LoomStatus (*emit)(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, char **code,
                     size_t *size, Diag *d);
} CgGpuHooks;

/* A GPU target's state as the shared code sees it: the target file's own state struct begins with
 * one (so hooks may cast g to it). */
struct CgGpuTarget {
  CgGpuHooks hooks;
  int32_t binary;       /* CgBinaryKind of emit's code */
  int block;            /* threads per block ROW kernels are compiled for (a multiple of the wave) */
  const char *arch;     /* "nvptx": messages */
  pthread_mutex_t lock; /* one compile at a time (the targets' TargetMachines are shared) */
  uint64_t counter;     /* compiles so far: entry names are unique per compile */
  char describe[320];   /* CgTarget.describe */
};

/* Builds the GPU module for k into mod (entries named from prefix, marked by the hooks) and fills
 * out (everything but the code). block: threads per block of ROW kernels (a multiple of the wave, at
 * most 1024). Math uses the hooks' device library. */
LoomStatus cg_lower_gpu(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k, const char *prefix,
                        const CgGpuHooks *h, int block, CgGpuKernel *out, Diag *d);

/* Whether ROW scans of few long rows get the single-pass look-back entry (codegen/lower_scan_lookback.c):
 * LOOM_GPU_SCAN_LOOKBACK, read once per process, anything but "0" (the default: on). The targets put
 * " scan2" in their describe string when it is off, so kernels compiled either way have their own disk
 * cache keys. */
bool cg_gpu_scan_lookback_on(void);
/* The scan part of a GPU target's description: " scan2" with LOOM_GPU_SCAN_LOOKBACK=0, else the
 * look-back knobs that differ from the defaults (" scanlb512x16", " lbsleep100": lower_scan_lookback.c),
 * "" by default; so kernels compiled under other knobs never share a cache entry. */
const char *cg_gpu_scan_tag(void);

/* The CgTarget functions of every GPU target (t->state is the target's state, beginning with a
 * CgGpuTarget): compile (the shared flow above, under g->lock), release, describe. */
LoomStatus cg_gpu_compile(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out, Diag *d);
void cg_gpu_release(CgTarget *t, CgCompiled *c);
const char *cg_gpu_describe(CgTarget *t);
/* Fills the CgTarget fields common to GPU targets (name, binary, the functions above, ctx, state) and
 * initializes g's lock. The target sets destroy. */
void cg_gpu_target_init(CgTarget *t, CgGpuTarget *g, LoomContext *ctx, const char *name);

#endif /* LOOM_CG_GPU_H */
