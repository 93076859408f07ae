/* SPDX-License-Identifier: Apache-2.0 */
/* nvptx.h: private interface of the NVIDIA target files (nvptx.c, nvptx_lower.c, nvptx_raw.c). */
#ifndef LOOM_CG_NVPTX_H
#define LOOM_CG_NVPTX_H

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"

#define NVPTX_TRIPLE "nvptx64-nvidia-cuda"
#define NV_MATH_PREFIX "__nv_" /* libdevice's functions */

/* Fills the lowering and math hooks of h (nvptx_lower.c); nvptx.c adds the tool chain ones. */
void cg_nvptx_lower_hooks(CgGpuHooks *h);
/* Rewrites every llvm.abs.i8 / llvm.abs.i16 of an optimized module as a 32-bit abs truncated through an
 * opaque cvt (nvptx_lower.c): ptxas treats abs.s16's result as non-negative and skips the sign extension a
 * later 32-bit use needs, so abs(INT16_MIN) read back as +32768 (NumPy: -32768) in a division or a cast. */
void cg_nvptx_fence_narrow_abs(LLVMModuleRef mod);
/* llvm.copysign.f32 calls -> integer and / or of the bits (after optimization; LOOM_GPU_COPYSIGN_BITS=0: off) */
void cg_nvptx_copysign_bits(LLVMModuleRef mod);
/* LOOM_NV_FDIV=ieee: float32 division as LLVM's fdiv (PTX div.rn.f32) instead of nv_fdiv_f32 (an A/B
 * switch for the H200) */
bool cg_nvptx_fdiv_ieee(void);

/* CUDA's libdevice bitcode: $LOOM_LIBDEVICE, else $CUDA_HOME, $CUDA_PATH, /usr/local/cuda +
 * /nvvm/libdevice/libdevice.10.bc. *buf is ctx_alloc'ed; path_out (may be NULL) gets the file read.
 * LOOM_ERR_UNSUPPORTED naming every path tried when there is none. */
LoomStatus cg_read_libdevice(LoomContext *ctx, char **buf, size_t *size, char *path_out, size_t path_cap, Diag *d);

#endif /* LOOM_CG_NVPTX_H */
