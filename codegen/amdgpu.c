/* amdgpu.c: the AMD CgTarget: the shared GPU compile flow (gpu_compile.c) with AMD's tool chain hooks:
 * an amdgcn-amd-amdhsa module for one chip (code object v4 or v5 through the module flag
 * amdhsa_code_object_version), ROCm's ocml linked lazily with the __oclc_* constants defined in the
 * module (amdgpu_devlib.c), O3 (O2 for fused elementwise modules, O1 for user snippets, as on NVIDIA)
 * for the chip's AMDGPU TargetMachine, a relocatable object emitted in-process, linked into an
 * executable code object by comgr or ld.lld (amdgpu_link.c). The lowering hooks (dispatch packet,
 * ds_bpermute, s_barrier with fences, amdgpu_kernel, LDS) are in amdgpu_lower.c. No GPU and no HIP is
 * needed here; the runtime (runtime/hip/) loads the code object with hipModuleLoadData.
 *
 * The chip table (what the lowering and the code object checks need per chip) is amdgpu_chips.c, which
 * has no LLVM so that libloomrt's HIP runtime can use it too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/amdgpu.h"

/* Present only when LLVM was built with the AMDGPU backend (weak: a host-only LLVM still links). */
extern void LLVMInitializeAMDGPUTargetInfo(void) __attribute__((weak));
extern void LLVMInitializeAMDGPUTarget(void) __attribute__((weak));
extern void LLVMInitializeAMDGPUTargetMC(void) __attribute__((weak));
extern void LLVMInitializeAMDGPUAsmPrinter(void) __attribute__((weak));

/* ---- the target --------------------------------------------------------------------------------------- */

typedef struct AmdState {
  CgGpuTarget gpu; /* first: the shared GPU code's view (cg_gpu.h) */
  CgAmdChip chip;
  int cov;                 /* code object version: 4 or 5 */
  LLVMTargetMachineRef tm; /* CodeGenLevelAggressive, PIC */
  AmdDevLibs *libs;
  bool dump;          /* a dump target: emit gives the assembly text (cg_amdgpu_target_set_dump) */
  char dump_dir[1024]; /* and keeps the code objects there ("": no) */
  const char *linker; /* "comgr" / "ld.lld" of the last link */
  char why[512];      /* why not comgr */
  CgTarget *target;
} AmdState;

static LoomStatus llvm_err(Diag *d, LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "LLVM %s failed: %s", what, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return st;
}

static void amd_destroy(CgTarget *t) {
  if (!t) return;
  AmdState *s = t->state;
  if (s) {
    if (s->tm) LLVMDisposeTargetMachine(s->tm);
    cg_amd_devlibs_free(s->libs);
    pthread_mutex_destroy(&s->gpu.lock);
    ctx_free(t->ctx, s);
  }
  ctx_free(t->ctx, t);
}

static void amd_module_init(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod) {
  AmdState *s = (AmdState *)g;
  LLVMSetTarget(mod, AMDGPU_TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(s->tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  if (!LLVMGetModuleFlag(mod, "amdhsa_code_object_version", 26)) /* raw IR may carry its own */
    LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version", 26,
                      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), (unsigned)s->cov * 100, 0)));
}

static LoomStatus amd_link_math(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod, Diag *d) {
  AmdState *s = (AmdState *)g;
  return cg_amd_devlibs_link(s->libs, c, mod, &s->chip, s->cov, d);
}

/* Marks every loop of mod's functions (a branch back to a block laid out before it: the lowering builds
 * each loop head before its body) with llvm.loop.vectorize.enable = false. A GPU thread's loops are not
 * where vectors pay (the lowering writes the 16-byte accesses itself); on AMDGPU the loop vectorizer
 * would version the column reductions' R loop for a unit stride the column strategy never has, and
 * NVPTX's cost model already keeps them scalar. (LLVM 19's LLVMPassBuilderOptionsSetLoopVectorization
 * does not reach the loop vectorizer of a "default<O3>" pipeline text; loop metadata does.) */
static void no_loop_vectorize(LLVMContextRef c, LLVMModuleRef mod) {
  LLVMMetadataRef off[2] = {LLVMMDStringInContext2(c, "llvm.loop.vectorize.enable", 26),
                            LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(c), 0, 0))};
  LLVMMetadataRef prop = LLVMMDNodeInContext2(c, off, 2);
  unsigned kind = LLVMGetMDKindIDInContext(c, "llvm.loop", 9);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    int nb = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) nb++;
    if (!nb) continue;
    LLVMBasicBlockRef *order = malloc(sizeof *order * (size_t)nb);
    if (!order) return;
    int i = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b)) order[i++] = b;
    for (i = 0; i < nb; i++) {
      LLVMValueRef term = LLVMGetBasicBlockTerminator(order[i]);
      if (!term || LLVMGetInstructionOpcode(term) != LLVMBr) continue;
      bool back = false;
      for (unsigned s = 0; s < LLVMGetNumSuccessors(term) && !back; s++)
        for (int j = 0; j <= i && !back; j++) back = order[j] == LLVMGetSuccessor(term, s);
      if (!back) continue;
      LLVMMetadataRef tmp = LLVMTemporaryMDNode(c, NULL, 0), ops[2] = {tmp, prop};
      LLVMMetadataRef id = LLVMMDNodeInContext2(c, ops, 2); /* distinct once its first operand is itself */
      LLVMMetadataReplaceAllUsesWith(tmp, id);
      LLVMSetMetadata(term, kind, LLVMMetadataAsValue(c, id));
    }
    free(order);
  }
}

static LoomStatus amd_optimize(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, Diag *d) {
  AmdState *s = (AmdState *)g;
  no_loop_vectorize(LLVMGetModuleContext(mod), mod);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* ocml's functions are not alwaysinline (libdevice's mostly are), so even the fused elementwise
   * modules need the inliner: O2 for them rather than NVIDIA's short pipeline */
  const char *pipeline = gk->strategy != CG_GPU_ELEMENTWISE ? "default<O3>" : k->snippet ? "default<O1>" : "default<O2>";
  LLVMErrorRef e = cg_run_pipeline(mod, pipeline, s->tm, po, k);
  LLVMDisposePassBuilderOptions(po);
  return e ? llvm_err(d, e, "optimization (amdgpu)") : LOOM_OK;
}

/* A dump target's assembly text of mod (emitted from a clone: code generation changes the module). */
static LoomStatus emit_asm(AmdState *s, LLVMModuleRef mod, const KernelIr *k, char **text, Diag *d) {
  LLVMModuleRef clone = LLVMCloneModule(mod);
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  LoomStatus st = LOOM_OK;
  if (!clone || LLVMTargetMachineEmitToMemoryBuffer(s->tm, clone, LLVMAssemblyFile, &err, &buf)) {
    st = diag_error(d, LOOM_ERR_BACKEND, "LLVM AMDGPU assembly failed for kernel '%s' (%s): %s", k->name, s->chip.name,
                    err ? err : "?");
  } else {
    size_t n = LLVMGetBufferSize(buf);
    *text = ctx_alloc(s->target->ctx, n + 1);
    if (*text) {
      memcpy(*text, LLVMGetBufferStart(buf), n);
      (*text)[n] = 0;
    } else {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory for %zu bytes of AMDGPU assembly", n + 1);
    }
    LLVMDisposeMemoryBuffer(buf);
  }
  if (err) LLVMDisposeMessage(err);
  if (clone) LLVMDisposeModule(clone);
  return st;
}

/* A dump target keeps each code object as <dir>/<module>.<chip>.co. */
static LoomStatus write_code_object(AmdState *s, LLVMModuleRef mod, const char *code, size_t size, Diag *d) {
  size_t n = 0;
  char path[1400];
  snprintf(path, sizeof path, "%s/%s.%s.co", s->dump_dir, LLVMGetModuleIdentifier(mod, &n), s->chip.name);
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(code, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = false;
  return ok ? LOOM_OK : diag_error(d, LOOM_ERR_BACKEND, "cannot write the code object %s", path);
}

static LoomStatus amd_emit(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, char **code,
                           size_t *size, Diag *d) {
  AmdState *s = (AmdState *)g;
  char *text = NULL;
  if (s->dump) {
    LoomStatus st = emit_asm(s, mod, k, &text, d);
    if (st != LOOM_OK) return st;
  }
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(s->tm, mod, LLVMObjectFile, &err, &buf)) {
    ctx_free(s->target->ctx, text);
    LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "LLVM AMDGPU code generation failed for kernel '%s' (%s): %s",
                               k->name, s->chip.name, err ? err : "?");
    if (err) LLVMDisposeMessage(err);
    return st;
  }
  if (err) LLVMDisposeMessage(err);
  LoomStatus st = cg_amd_link(s->target->ctx, &s->chip, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), code, size,
                              &s->linker, s->why, sizeof s->why, d);
  LLVMDisposeMemoryBuffer(buf);
  if (st == LOOM_OK && s->dump && s->dump_dir[0]) st = write_code_object(s, mod, *code, *size, d);
  if (s->dump) { /* the text takes the code object's place */
    ctx_free(s->target->ctx, st == LOOM_OK ? *code : NULL);
    if (st == LOOM_OK) {
      *code = text;
      *size = strlen(text);
      text = NULL;
    }
  }
  ctx_free(s->target->ctx, text);
  return st;
}

void cg_amdgpu_target_set_dump(CgTarget *t, const char *dir) {
  AmdState *s = t && t->state && t->binary == CG_BINARY_AMDGPU ? t->state : NULL;
  if (!s) return;
  s->dump = true;
  snprintf(s->dump_dir, sizeof s->dump_dir, "%s", dir ? dir : "");
}

void cg_amd_module_init(CgTarget *t, LLVMContextRef c, LLVMModuleRef mod) { amd_module_init(t->state, c, mod); }

LoomStatus cg_amd_build_module(CgTarget *t, LLVMContextRef c, LLVMModuleRef mod, const char *const *keep, int nkeep,
                               char **co, size_t *co_size, Diag *d) {
  AmdState *s = t->state;
  pthread_mutex_lock(&s->gpu.lock);
  amd_module_init(&s->gpu, c, mod);
  LoomStatus st = amd_link_math(&s->gpu, c, mod, d);
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); st == LOOM_OK && f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    bool entry = false;
    for (int i = 0; i < nkeep && !entry; i++) entry = !strcmp(name, keep[i]);
    if (!entry) LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  if (st == LOOM_OK) {
    no_loop_vectorize(c, mod);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = cg_run_pipeline(mod, "default<O3>", s->tm, po, NULL);
    LLVMDisposePassBuilderOptions(po);
    if (e) st = llvm_err(d, e, "optimization of the raw module (amdgpu)");
  }
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (st == LOOM_OK && LLVMTargetMachineEmitToMemoryBuffer(s->tm, mod, LLVMObjectFile, &err, &buf))
    st = diag_error(d, LOOM_ERR_BACKEND, "LLVM AMDGPU code generation of the raw module failed (%s): %s", s->chip.name,
                    err ? err : "?");
  if (err) LLVMDisposeMessage(err);
  if (st == LOOM_OK)
    st = cg_amd_link(t->ctx, &s->chip, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), co, co_size, &s->linker, s->why,
                     sizeof s->why, d);
  if (buf) LLVMDisposeMemoryBuffer(buf);
  pthread_mutex_unlock(&s->gpu.lock);
  return st;
}

const char *cg_amdgpu_linker(CgTarget *t, const char **why) {
  AmdState *s = t && t->state && t->binary == CG_BINARY_AMDGPU ? t->state : NULL;
  if (why) *why = s ? s->why : "";
  return s && s->linker ? s->linker : "";
}

LoomStatus cg_amdgpu_target_create(LoomContext *ctx, const char *gfx, int code_object_version, CgTarget **out,
                                   Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_amdgpu_target_create: out is NULL");
  *out = NULL;
  if (!LLVMInitializeAMDGPUTargetInfo || !LLVMInitializeAMDGPUTarget || !LLVMInitializeAMDGPUTargetMC ||
      !LLVMInitializeAMDGPUAsmPrinter)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "this LLVM has no AMDGPU backend: build Loom against an LLVM 19 with "
                                               "the AMDGPU target for AMD GPUs");
  CgAmdChip chip;
  if (!cg_amdgpu_chip(gfx, &chip))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "amdgpu: unknown chip '%s' (Loom knows %s)", gfx ? gfx : "(null)",
                      cg_amdgpu_chip_names());
  int cov = code_object_version;
  if (cov == 0) {
    const char *env = getenv("LOOM_AMDGPU_CODE_OBJECT");
    cov = env && *env ? atoi(env) : 5;
  }
  if (cov != 4 && cov != 5)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "amdgpu: code object version %d: use 4 or 5 (LOOM_AMDGPU_CODE_OBJECT)",
                      cov);
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  CgTarget *t = ctx_calloc(ctx, 1, sizeof *t);
  AmdState *s = t ? ctx_calloc(ctx, 1, sizeof *s) : NULL;
  AmdDevLibs *libs = s ? cg_amd_devlibs_new(ctx) : NULL;
  if (!libs) {
    ctx_free(ctx, s);
    ctx_free(ctx, t);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory creating the amdgpu target");
  }
  s->chip = chip;
  s->cov = cov;
  s->libs = libs;
  s->gpu.binary = CG_BINARY_AMDGPU;
  s->gpu.block = AMD_BLOCK;
  s->target = t;
  cg_gpu_target_init(t, &s->gpu, ctx, "amdgpu");
  t->destroy = amd_destroy;
  cg_amdgpu_lower_hooks(&s->gpu.hooks, chip.wave);
  s->gpu.hooks.fast_f64 = chip.fast_f64;
  s->gpu.hooks.module_init = amd_module_init;
  s->gpu.hooks.link_math = amd_link_math;
  s->gpu.hooks.optimize = amd_optimize;
  s->gpu.hooks.emit = amd_emit;
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(AMDGPU_TRIPLE, &target, &err)) {
    LoomStatus st = diag_error(d, LOOM_ERR_UNSUPPORTED, "LLVM: no AMDGPU target: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    amd_destroy(t);
    return st;
  }
  /* no features: xnack and sramecc "any", so the code object loads whatever the device's mode */
  s->tm = LLVMCreateTargetMachine(target, AMDGPU_TRIPLE, chip.name, "", LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                  LLVMCodeModelDefault);
  if (!s->tm) {
    amd_destroy(t);
    return diag_error(d, LOOM_ERR_BACKEND, "LLVM: cannot create an AMDGPU target machine for %s", chip.name);
  }
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  snprintf(s->gpu.describe, sizeof s->gpu.describe, "LLVM %u.%u.%u amdgpu %s wave%d cov%d block%d%s%s%s", maj, min,
           pat, chip.name, chip.wave, cov, AMD_BLOCK, cg_gpu_scan_tag(), cg_gpu_switch_tag(), cg_gpu_elem_tag());
  *out = t;
  return LOOM_OK;
}
