/* SPDX-License-Identifier: Apache-2.0 */
/* nvptx.c: the NVIDIA CgTarget: the shared GPU compile flow (gpu_compile.c) with NVIDIA's tool chain
 * hooks: an nvptx64-nvidia-cuda module (no flush to zero: "nvvm-reflect-ftz" = 0, NumPy's semantics),
 * libdevice linked lazily, O3 (a short pipeline for fused elementwise modules) for the NVPTX
 * TargetMachine, PTX text. The lowering hooks (special registers, shuffles, barriers, kernel
 * annotations, math names, division / square root) are in nvptx_lower.c. No GPU and no CUDA library is
 * needed here; the runtime links the PTX into a cubin (runtime/cuda/cuda.c) and caches it
 * (runtime/cuda/).
 *
 * libdevice: the file is read once per target (bytes kept). A compile whose module calls __nv_*
 * functions parses it as a LAZY module (LLVMGetBitcodeModuleInContext2: bodies are not read yet),
 * gives every function definition linkonce_odr linkage so that the linker moves (and materializes)
 * only what the kernel references, links it in, then internalizes everything but the kernel entries.
 * The large ones are inlined within a per-module budget (limit_inlining: compile and JIT time follow
 * code size).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/nvptx.h"

#define NVPTX_BLOCK 256 /* threads per block of ROW kernels */
#define NV_LDSETS 64    /* libdevice function sets kept as bitcode per target */

/* LLVMInitializeNVPTX* exist only when LLVM was built with the NVPTX backend: look them up weakly so
 * that a host-only LLVM still links and the target reports LOOM_ERR_UNSUPPORTED. */
extern void LLVMInitializeNVPTXTargetInfo(void) __attribute__((weak));
extern void LLVMInitializeNVPTXTarget(void) __attribute__((weak));
extern void LLVMInitializeNVPTXTargetMC(void) __attribute__((weak));
extern void LLVMInitializeNVPTXAsmPrinter(void) __attribute__((weak));

typedef struct NvState {
  CgGpuTarget gpu;              /* first: the shared GPU code's view (cg_gpu.h) */
  LLVMTargetMachineRef tm;      /* CodeGenLevelAggressive */
  LLVMTargetMachineRef tm_elem; /* CodeGenLevelLess: fused elementwise kernels (same PTX, less time) */
  char cpu[16], features[16];
  char libdevice_path[1024];
  char *libdevice;        /* bytes of libdevice.10.bc, read on first use */
  size_t libdevice_size;
  /* libdevice's functions as kernels used them: per set of __nv_ names, a bitcode module holding
   * those functions and what they call (see link_libdevice) */
  struct LdSet {
    char *names; /* the sorted names, '\n'-separated */
    char *bc;
    size_t size;
  } ldsets[NV_LDSETS];
  int nldsets, ldnext;
  CgTarget *target;
} NvState;

static LoomStatus llvm_err(Diag *d, LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "LLVM %s failed: %s", what, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return st;
}

static void nv_destroy(CgTarget *t) {
  if (!t) return;
  NvState *s = t->state;
  if (s) {
    if (s->tm) LLVMDisposeTargetMachine(s->tm);
    if (s->tm_elem) LLVMDisposeTargetMachine(s->tm_elem);
    ctx_free(t->ctx, s->libdevice);
    for (int i = 0; i < s->nldsets; i++) {
      ctx_free(t->ctx, s->ldsets[i].names);
      ctx_free(t->ctx, s->ldsets[i].bc);
    }
    pthread_mutex_destroy(&s->gpu.lock);
    ctx_free(t->ctx, s);
  }
  ctx_free(t->ctx, t);
}

/* $LOOM_LIBDEVICE, else $CUDA_HOME, $CUDA_PATH, /usr/local/cuda + /nvvm/libdevice/libdevice.10.bc. */
LoomStatus cg_read_libdevice(LoomContext *ctx, char **buf, size_t *size, char *path_out, size_t path_cap,
                             Diag *d) {
  const char *env = getenv("LOOM_LIBDEVICE");
  char tried[2048];
  size_t tl = 0;
  tried[0] = 0;
  const char *roots[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = -1; i < 3; i++) {
    char path[1024];
    if (i < 0) {
      if (!env || !*env) continue;
      snprintf(path, sizeof path, "%s", env);
    } else {
      if (!roots[i] || !*roots[i]) continue;
      snprintf(path, sizeof path, "%s/nvvm/libdevice/libdevice.10.bc", roots[i]);
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
      int n = snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", path);
      if (n > 0 && (size_t)n < sizeof tried - tl) tl += (size_t)n;
      continue;
    }
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    char *b = len > 0 && fseek(f, 0, SEEK_SET) == 0 ? ctx_alloc(ctx, (size_t)len) : NULL;
    bool ok = b && fread(b, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!ok) {
      ctx_free(ctx, b);
      return diag_error(d, LOOM_ERR_BACKEND, "cannot read libdevice at %s", path);
    }
    *buf = b;
    *size = (size_t)len;
    if (path_out && path_cap) snprintf(path_out, path_cap, "%s", path);
    return LOOM_OK;
  }
  return diag_error(d, LOOM_ERR_UNSUPPORTED,
                    "libdevice not found (tried %s): set LOOM_LIBDEVICE to libdevice.10.bc or CUDA_HOME to the "
                    "CUDA toolkit", tl ? tried : "nothing");
}

static LoomStatus read_libdevice(CgTarget *t, NvState *s, Diag *d) {
  if (s->libdevice) return LOOM_OK;
  return cg_read_libdevice(t->ctx, &s->libdevice, &s->libdevice_size, s->libdevice_path,
                           sizeof s->libdevice_path, d);
}

/* Whether f is a libdevice function mod declares but does not define yet. */
static bool is_libdevice_decl(LLVMValueRef f) {
  size_t k = 0;
  const char *name = LLVMGetValueName2(f, &k);
  return k > 5 && strncmp(name, NV_MATH_PREFIX, 5) == 0 && LLVMIsDeclaration(f);
}

/* The names of the __nv_ functions mod declares, sorted, '\n'-separated (NULL when none or out of
 * memory: *oom tells which). */
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }
static char *libdevice_names(LoomContext *ctx, LLVMModuleRef mod, bool *oom) {
  const char *names[256];
  int n = 0;
  size_t len = 0;
  *oom = false;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && n < 256; f = LLVMGetNextFunction(f)) {
    if (!is_libdevice_decl(f)) continue;
    size_t k = 0;
    names[n++] = LLVMGetValueName2(f, &k);
    len += k + 1;
  }
  if (!n) return NULL;
  qsort(names, (size_t)n, sizeof names[0], cmp_str);
  char *out = ctx_alloc(ctx, len + 1), *p = out;
  if (!out) {
    *oom = true;
    return NULL;
  }
  for (int i = 0; i < n; i++) p += sprintf(p, "%s\n", names[i]);
  return out;
}

/* Links the libdevice functions mod declares (and what they call) into mod. The first kernel that
 * needs a given set of functions parses libdevice lazily (about 1.5 ms on the H200's host, most of it
 * reading libdevice's index), links the set into a module of its own and keeps that as bitcode;
 * later kernels with the same set parse those few kilobytes instead. */
static LoomStatus link_libdevice(CgTarget *t, NvState *s, LLVMContextRef c, LLVMModuleRef mod, Diag *d) {
  bool oom = false;
  char *names = libdevice_names(t->ctx, mod, &oom);
  if (!names) return oom ? diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory linking libdevice") : LOOM_OK;
  struct LdSet *hit = NULL;
  for (int i = 0; i < s->nldsets && !hit; i++)
    if (!strcmp(s->ldsets[i].names, names)) hit = &s->ldsets[i];
  LLVMModuleRef part = NULL;
  if (hit) {
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(hit->bc, hit->size, "libdevice part", 0);
    bool bad = LLVMParseBitcodeInContext2(c, mb, &part);
    LLVMDisposeMemoryBuffer(mb);
    if (bad) part = NULL; /* rebuilt below */
  }
  if (!part) {
    LoomStatus st = read_libdevice(t, s, d);
    if (st != LOOM_OK) {
      ctx_free(t->ctx, names);
      return st;
    }
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(s->libdevice, s->libdevice_size, "libdevice", 0);
    LLVMModuleRef lib = NULL;
    if (LLVMGetBitcodeModuleInContext2(c, mb, &lib)) { /* the lazy module owns mb on success */
      LLVMDisposeMemoryBuffer(mb);
      ctx_free(t->ctx, names);
      return diag_error(d, LOOM_ERR_BACKEND, "cannot parse libdevice (%s)", s->libdevice_path);
    }
    LLVMSetTarget(lib, NVPTX_TRIPLE);
    LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
    for (LLVMValueRef f = LLVMGetFirstFunction(lib); f; f = LLVMGetNextFunction(f)) {
      LLVMLinkage l = LLVMGetLinkage(f);
      if (l == LLVMExternalLinkage && !LLVMIsDeclaration(f)) LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
    }
    part = LLVMModuleCreateWithNameInContext("libdevice part", c);
    LLVMSetTarget(part, NVPTX_TRIPLE);
    LLVMSetDataLayout(part, LLVMGetDataLayoutStr(mod));
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
      size_t k = 0;
      if (is_libdevice_decl(f)) LLVMAddFunction(part, LLVMGetValueName2(f, &k), LLVMGlobalGetValueType(f));
    }
    if (LLVMLinkModules2(part, lib)) { /* destroys lib */
      LLVMDisposeModule(part);
      ctx_free(t->ctx, names);
      return diag_error(d, LOOM_ERR_BACKEND, "linking libdevice (%s) failed", s->libdevice_path);
    }
    LLVMMemoryBufferRef out = LLVMWriteBitcodeToMemoryBuffer(part);
    char *bc = out ? ctx_alloc(t->ctx, LLVMGetBufferSize(out)) : NULL;
    if (bc) { /* keep it (the oldest set makes room); without memory the next kernel parses again */
      memcpy(bc, LLVMGetBufferStart(out), LLVMGetBufferSize(out));
      struct LdSet *e = &s->ldsets[s->nldsets < NV_LDSETS ? s->nldsets++ : s->ldnext++ % NV_LDSETS];
      ctx_free(t->ctx, e->names);
      ctx_free(t->ctx, e->bc);
      e->names = names;
      e->bc = bc;
      e->size = LLVMGetBufferSize(out);
      names = NULL;
    }
    if (out) LLVMDisposeMemoryBuffer(out);
  }
  ctx_free(t->ctx, names);
  if (LLVMLinkModules2(mod, part)) /* destroys part */
    return diag_error(d, LOOM_ERR_BACKEND, "linking libdevice (%s) failed", s->libdevice_path);
  return LOOM_OK;
}

/* Inlining libdevice. Its functions are alwaysinline, so every call site (each lane of a vector entry,
 * each entry of the module) gets its own copy: a float32 sin kernel held 6 copies of sinf, 21.6 KB of
 * PTX, and LLVM, PTX emission and the driver's JIT all scale with that code. A call instead costs the
 * point its register moves, the .param traffic and any scheduling across it: float32 mish (log1pf)
 * ran at 46 % of copy bandwidth as calls, float64 haversine (sin, cos, asin) 2.54 ms as calls against
 * 1.21 ms inlined (H200, 2026-12-02; torch.compile 1.05), black_scholes (log) 1.317 -> 1.285 ms.
 * The rule, on sizes counted after nvvm-reflect folding (nv_link_math: before it every fma of libdevice
 * exists twice, ftz and not):
 *  - a function of at most NV_INLINE_SMALL instructions is always inlined (the float32 functions but the
 *    trigonometric ones, powf and fmodf; float64 exp, erf, tanh, atan2);
 *  - one of at most NV_INLINE_MAX (float64 sin, cos, tan, asin, acos, log, log1p, pow, fmod, erfc;
 *    float32 sinf, cosf, tanf with their Payne-Hanek loops, powf, fmodf) is inlined while the module's
 *    copies of such functions (size x call sites) stay within NV_INLINE_BUDGET instructions, the
 *    smallest first: an expression with many of them keeps the largest as calls, so code (and JIT
 *    time) grows by a bounded amount whatever the expression;
 *  - larger ones (lgammaf, tgammaf, tgamma: over 230) stay calls, one .func per module.
 * Their rare slow paths stay out of line where libdevice made them noinline (float64 trig reduction,
 * accurate pow, lgamma's positive branch). */
#define NV_INLINE_SMALL 64   /* tanhf 18, expf 20, logf 35, log1pf 38, erff 42, exp 57, tanh 62 */
#define NV_INLINE_MAX 200    /* sin 70, asin 70, cos 71, log 81, pow 100, log1p 108, sinf 130, powf 157, lgamma 167 */
#define NV_INLINE_BUDGET 4096 /* instructions of inlined copies above NV_INLINE_SMALL per module */
/* LOOM_NV_INLINE_MAX=n, LOOM_NV_INLINE_BUDGET=n: other limits (A/B switches for the H200; part of the
 * target's description, so of the kernel cache key). LOOM_NV_INLINE_MAX=64 is the rule before
 * 2026-12-02 (nothing above 64 inlined). */
static int nv_env_int(const char *name, int dflt) {
  const char *e = getenv(name);
  long v = e && *e ? strtol(e, NULL, 10) : dflt;
  return v < 0 ? 0 : v > 1000000 ? 1000000 : (int)v;
}
static int nv_inline_max(void) { return nv_env_int("LOOM_NV_INLINE_MAX", NV_INLINE_MAX); }
static int nv_inline_budget(void) { return nv_env_int("LOOM_NV_INLINE_BUDGET", NV_INLINE_BUDGET); }

typedef struct NvInlineCand {
  LLVMValueRef f;
  int size, sites;
} NvInlineCand;

static int cmp_cand_size(const void *a, const void *b) {
  const NvInlineCand *x = a, *y = b;
  return x->size != y->size ? x->size - y->size : x->sites - y->sites;
}

/* The calls of f in mod (each a copy if inlined). */
static int call_sites(LLVMValueRef f) {
  int n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    n += LLVMIsACallInst(user) && LLVMGetCalledValue(user) == f;
  }
  return n;
}

static void limit_inlining(LLVMContextRef c, LLVMModuleRef mod) {
  const int limit = nv_inline_max(), small = limit < NV_INLINE_SMALL ? limit : NV_INLINE_SMALL;
  int budget = nv_inline_budget();
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  unsigned never = LLVMGetEnumAttributeKindForName("noinline", 8);
  NvInlineCand cand[64];
  int ncand = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    if (n <= 5 || strncmp(name, NV_MATH_PREFIX, 5) != 0 || LLVMIsDeclaration(f)) continue;
    int count = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b && count <= limit; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i && count <= limit; i = LLVMGetNextInstruction(i))
        count++;
    if (count <= small) continue;
    if (count <= limit && ncand < 64) {
      cand[ncand++] = (NvInlineCand){f, count, call_sites(f)};
      continue;
    }
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, always);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c, never, 0));
  }
  qsort(cand, (size_t)ncand, sizeof cand[0], cmp_cand_size);
  for (int i = 0; i < ncand; i++) {
    long copies = (long)cand[i].size * cand[i].sites;
    if (copies <= budget) {
      budget -= (int)copies;
      continue;
    }
    budget = -1; /* the larger ones stay calls too (sizes ascend) */
    LLVMRemoveEnumAttributeAtIndex(cand[i].f, LLVMAttributeFunctionIndex, always);
    LLVMAddAttributeAtIndex(cand[i].f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c, never, 0));
  }
}

/* ---- tool chain hooks (cg_gpu.h) ---------------------------------------------------------------------- */

static void nv_module_init(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod) {
  NvState *s = (NvState *)g;
  LLVMSetTarget(mod, NVPTX_TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(s->tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-ftz", 16,
                    LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 0, 0)));
  /* read by LLVM >= 20's nvvm-reflect; LLVM 19 ignores it (nv_fold_prec_sqrt does its work) */
  LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorOverride, "nvvm-reflect-prec-sqrt", 22,
                    LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0)));
}

/* Replaces libdevice's __nvvm_reflect("__CUDA_PREC_SQRT") calls by 1 (IEEE sqrt.rn), before the
 * nvvm-reflect pass: LLVM 19's pass knows only __CUDA_FTZ and __CUDA_ARCH and folds every other name
 * to 0, which sends __nv_sqrtf, __nv_hypotf, __nv_normf, __nv_norm3df, __nv_norm4df and __nv_jnf to
 * sqrt.approx.f32 (~1 ulp off NumPy's correctly rounded sqrt). */
static void nv_fold_prec_sqrt(LLVMModuleRef mod) {
  LLVMValueRef reflect = LLVMGetNamedFunction(mod, "__nvvm_reflect");
  if (!reflect) return;
  LLVMValueRef u = NULL;
  for (LLVMUseRef use = LLVMGetFirstUse(reflect), next; use; use = next) {
    next = LLVMGetNextUse(use);
    u = LLVMGetUser(use);
    if (!LLVMIsACallInst(u) || LLVMGetCalledValue(u) != reflect || LLVMGetNumArgOperands(u) != 1) continue;
    LLVMValueRef arg = LLVMGetOperand(u, 0);
    if (LLVMIsAConstantExpr(arg)) arg = LLVMGetOperand(arg, 0); /* a GEP or cast of the string */
    LLVMValueRef init = LLVMIsAGlobalVariable(arg) ? LLVMGetInitializer(arg) : NULL;
    size_t len = 0;
    const char *name = init && LLVMIsAConstantDataSequential(init) && LLVMIsConstantString(init)
                           ? LLVMGetAsString(init, &len)
                           : NULL;
    if (!name || len < 16 || memcmp(name, "__CUDA_PREC_SQRT", 16) != 0 || (len > 16 && name[16] != '\0')) continue;
    LLVMReplaceAllUsesWith(u, LLVMConstInt(LLVMTypeOf(u), 1, 0));
    LLVMInstructionEraseFromParent(u);
  }
}

static LoomStatus nv_link_math(CgGpuTarget *g, LLVMContextRef c, LLVMModuleRef mod, Diag *d) {
  NvState *s = (NvState *)g;
  LoomStatus st = link_libdevice(s->target, s, c, mod, d);
  if (st != LOOM_OK) return st;
  /* fold libdevice's reflect branches first, so that limit_inlining counts the code that remains */
  nv_fold_prec_sqrt(mod);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = cg_run_pipeline(mod, "function(nvvm-reflect,simplifycfg)", s->tm, po, NULL);
  LLVMDisposePassBuilderOptions(po);
  if (e) return llvm_err(d, e, "nvvm-reflect folding (nvptx)");
  limit_inlining(c, mod);
  return st;
}

static LoomStatus nv_optimize(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, Diag *d) {
  NvState *s = (NvState *)g;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  /* Fused elementwise modules are one grid-stride loop of straight-line code that the lowering writes
   * out already simplified (the vector entry's lanes included), so they get a short pipeline:
   * libdevice's reflect calls folded, the small math functions inlined, allocas promoted,
   * redundancies and dead branches removed. It emits the same PTX as default<O1> up to register
   * names and loop shape (the driver's JIT rotates loops itself) in a quarter of the time (12 cold
   * kernels, LLVM 19). User kernels may hold loops and keep default<O1>; reductions keep O3 (their
   * bandwidth was tuned with it). */
  const char *pipeline = gk->strategy != CG_GPU_ELEMENTWISE ? "default<O3>"
                         : k->snippet ? "default<O1>"
                                      : "function(nvvm-reflect),always-inline,function(sroa,early-cse,"
                                        "instcombine<no-verify-fixpoint>,simplifycfg),globaldce";
  LLVMErrorRef e = cg_run_pipeline(mod, pipeline, s->tm, po, k);
  LLVMDisposePassBuilderOptions(po);
  if (e) return llvm_err(d, e, "optimization (nvptx)");
  cg_nvptx_fence_narrow_abs(mod);
  cg_nvptx_copysign_bits(mod);
  return LOOM_OK;
}

static LoomStatus nv_emit(CgGpuTarget *g, LLVMModuleRef mod, const CgGpuKernel *gk, const KernelIr *k, char **code,
                          size_t *size, Diag *d) {
  NvState *s = (NvState *)g;
  char *err = NULL;
  LLVMMemoryBufferRef buf = NULL;
  LLVMTargetMachineRef tm = gk->strategy == CG_GPU_ELEMENTWISE && !k->snippet ? s->tm_elem : s->tm;
  LoomStatus st = LOOM_OK;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
    st = diag_error(d, LOOM_ERR_BACKEND, "LLVM NVPTX code generation failed for kernel '%s': %s", k->name, err ? err : "?");
  } else {
    size_t n = LLVMGetBufferSize(buf);
    *code = ctx_alloc(s->target->ctx, n + 1);
    if (*code) {
      memcpy(*code, LLVMGetBufferStart(buf), n);
      (*code)[n] = 0;
      *size = strlen(*code);
    } else {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for %zu bytes of PTX", n + 1);
    }
    LLVMDisposeMemoryBuffer(buf);
  }
  if (err) LLVMDisposeMessage(err);
  return st;
}

/* Whether compute capability sm (major * 10 + minor) has float64 at >= 1/2 the float32 rate (cg_gpu.h's
 * fast_f64): the data-center chips P100 (6.0), V100 (7.0), A100 (8.0), H100/H200 (9.0), B200 (10.x);
 * consumer and embedded chips (6.1, 7.5, 8.6, 8.7, 8.9, 12.x) run it at 1/32 or 1/64. */
static bool nv_fast_f64(int sm) { return sm == 60 || sm == 70 || sm == 80 || sm == 90 || sm / 10 == 10; }

LoomStatus cg_nvptx_target_create(LoomContext *ctx, int sm_major, int sm_minor, CgTarget **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_nvptx_target_create: out is NULL");
  *out = NULL;
  if (!LLVMInitializeNVPTXTargetInfo || !LLVMInitializeNVPTXTarget || !LLVMInitializeNVPTXTargetMC ||
      !LLVMInitializeNVPTXAsmPrinter)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "this LLVM has no NVPTX backend: build Loom against an LLVM 19 with "
                                               "the NVPTX target for NVIDIA GPUs");
  if (sm_major < 3 || sm_major > 12 || sm_minor < 0 || sm_minor > 9)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "nvptx: compute capability %d.%d is out of range", sm_major, sm_minor);
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  CgTarget *t = ctx_calloc(ctx, 1, sizeof *t);
  NvState *s = t ? ctx_calloc(ctx, 1, sizeof *s) : NULL;
  if (!s) {
    ctx_free(ctx, t);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory creating the nvptx target");
  }
  s->gpu.binary = CG_BINARY_PTX;
  s->gpu.block = NVPTX_BLOCK;
  s->target = t;
  cg_gpu_target_init(t, &s->gpu, ctx, "nvptx");
  t->destroy = nv_destroy;
  cg_nvptx_lower_hooks(&s->gpu.hooks);
  s->gpu.hooks.module_init = nv_module_init;
  s->gpu.hooks.link_math = nv_link_math;
  s->gpu.hooks.optimize = nv_optimize;
  s->gpu.hooks.emit = nv_emit;
  int sm = sm_major * 10 + sm_minor;
  s->gpu.hooks.fast_f64 = nv_fast_f64(sm);
  /* LLVM 19 knows sm_20 .. sm_90a; newer GPUs run sm_90 PTX through the driver's JIT */
  if (sm > 90) sm = 90;
  int ptx = sm >= 90 ? 78 : sm >= 89 ? 78 : sm >= 87 ? 74 : sm >= 86 ? 71 : sm >= 80 ? 70 : sm >= 75 ? 63 : 60;
  snprintf(s->cpu, sizeof s->cpu, "sm_%d", sm);
  snprintf(s->features, sizeof s->features, "+ptx%d", ptx);
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(NVPTX_TRIPLE, &target, &err)) {
    LoomStatus st = diag_error(d, LOOM_ERR_UNSUPPORTED, "LLVM: no NVPTX target: %s", err ? err : "?");
    LLVMDisposeMessage(err);
    nv_destroy(t);
    return st;
  }
  s->tm = LLVMCreateTargetMachine(target, NVPTX_TRIPLE, s->cpu, s->features, LLVMCodeGenLevelAggressive,
                                  LLVMRelocDefault, LLVMCodeModelDefault);
  s->tm_elem = LLVMCreateTargetMachine(target, NVPTX_TRIPLE, s->cpu, s->features, LLVMCodeGenLevelLess,
                                       LLVMRelocDefault, LLVMCodeModelDefault);
  if (!s->tm || !s->tm_elem) {
    nv_destroy(t);
    return diag_error(d, LOOM_ERR_BACKEND, "LLVM: cannot create an NVPTX target machine for %s", s->cpu);
  }
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  char knobs[64] = "";
  if (nv_inline_max() != NV_INLINE_MAX) snprintf(knobs, sizeof knobs, " inline%d", nv_inline_max());
  if (nv_inline_budget() != NV_INLINE_BUDGET)
    snprintf(knobs + strlen(knobs), sizeof knobs - strlen(knobs), " inlinebudget%d", nv_inline_budget());
  if (cg_nvptx_fdiv_ieee()) strcat(knobs, " fdivrn");
  snprintf(s->gpu.describe, sizeof s->gpu.describe, "LLVM %u.%u.%u nvptx %s ptx%d block%d%s%s%s%s", maj, min, pat, s->cpu,
           ptx, NVPTX_BLOCK, cg_gpu_scan_tag(), cg_gpu_switch_tag(), cg_gpu_elem_tag(), knobs);
  *out = t;
  return LOOM_OK;
}
