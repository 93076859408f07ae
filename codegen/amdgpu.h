/* amdgpu.h: private interface of the AMD target files: amdgpu.c (the CgTarget and its tool chain hooks),
 * amdgpu_lower.c (the lowering hooks), amdgpu_devlib.c (ROCm's device libraries), amdgpu_link.c (the
 * code object: comgr or ld.lld, and its metadata through comgr), amdgpu_raw.c (raw LLVM IR and code
 * objects of RawModule). */
#ifndef LOOM_CG_AMDGPU_H
#define LOOM_CG_AMDGPU_H

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"

#define AMDGPU_TRIPLE "amdgcn-amd-amdhsa"
#define AMD_OCML_PREFIX "__ocml_" /* ROCm's math library (ocml.bc) */
#define AMD_OCKL_PREFIX "__ockl_" /* ROCm's kernel library (ockl.bc): raw LLVM IR may call it */
#define AMD_BLOCK 256             /* threads per block of ROW kernels (a multiple of 32 and 64) */

/* Address spaces of the AMDGPU backend (LLVM's AMDGPUAS). */
enum { AMD_AS_FLAT = 0, AMD_AS_GLOBAL = 1, AMD_AS_LOCAL = 3, AMD_AS_CONSTANT = 4, AMD_AS_PRIVATE = 5 };

/* Fills the lowering and math hooks of h for a wave of `wave` threads (amdgpu_lower.c); amdgpu.c adds
 * the tool chain ones. */
void cg_amdgpu_lower_hooks(CgGpuHooks *h, int wave);

/* Triple, data layout and code object version flag (unless mod has one) of target t on mod. */
void cg_amd_module_init(CgTarget *t, LLVMContextRef c, LLVMModuleRef mod);
/* The tool chain of target t (cg_amdgpu_target_create) for a module made elsewhere (raw LLVM IR,
 * amdgpu_raw.c): triple, data layout and code object version flag (unless mod has one), the device
 * libraries, every definition but the nkeep functions `keep` internalized, O3, an executable code
 * object (*co ctx_alloc'ed). Holds t's lock. */
LoomStatus cg_amd_build_module(CgTarget *t, LLVMContextRef c, LLVMModuleRef mod, const char *const *keep, int nkeep,
                               char **co, size_t *co_size, Diag *d);

/* ---- amdgpu_devlib.c: ocml / ockl, linked lazily ---------------------------------------------------- */
typedef struct AmdDevLibs AmdDevLibs;
AmdDevLibs *cg_amd_devlibs_new(LoomContext *ctx);
void cg_amd_devlibs_free(AmdDevLibs *dl);
/* Links the __ocml_* / __ockl_* functions mod declares (and what they call) into mod and defines the
 * __oclc_* control constants they read for `chip` and code object version `cov` (4 or 5). Nothing to
 * do (LOOM_OK) when mod calls neither library. Not thread-safe for one dl (the target's lock). */
LoomStatus cg_amd_devlibs_link(AmdDevLibs *dl, LLVMContextRef c, LLVMModuleRef mod, const CgAmdChip *chip, int cov,
                               Diag *d);
/* The folder the bitcode was read from ("" before the first use). */
const char *cg_amd_devlibs_dir(const AmdDevLibs *dl);
/* Finds the device libraries' folder (without reading them); LOOM_ERR_UNSUPPORTED saying where it looked. */
LoomStatus cg_amd_devlibs_locate(AmdDevLibs *dl, Diag *d);

/* ---- amdgpu_link.c: relocatable object -> code object -------------------------------------------------- */
/* Links the relocatable object obj (LLVM's output for `chip`) into an executable code object
 * (*out ctx_alloc'ed): through comgr when it loads and knows the chip, else ld.lld (-shared
 * --no-undefined), or as LOOM_AMDGPU_LINKER (comgr | lld) says. *path: which one did ("comgr" or
 * "ld.lld"), and why when it was not comgr (why may be NULL; why_cap bytes). */
LoomStatus cg_amd_link(LoomContext *ctx, const CgAmdChip *chip, const void *obj, size_t size, char **out,
                       size_t *out_size, const char **path, char *why, size_t why_cap, Diag *d);

#endif /* LOOM_CG_AMDGPU_H */
