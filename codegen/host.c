/* SPDX-License-Identifier: Apache-2.0 */
/* host.c: the host CgTarget: lower (lower.c) -> optimize ("default<O3>" for the host CPU) -> ORC
 * LLJIT.
 *
 * One LLJIT per target, created for the host's CPU name and features. Each compile builds a module
 * in a fresh thread-safe context, runs the new pass manager with a TargetMachine for the host (so the
 * vectorizer knows the vector width) and adds the module to the main JITDylib under its own
 * resource tracker, which release() removes. Symbols are unique per compile (a counter). A mutex
 * serializes compiles. Vector math: SLEEF's vector library (LOOM_SLEEF_LIB, else "libsleefgnuabi.so.3")
 * and its scalar one (LOOM_SLEEF_SCALAR_LIB, else "libsleef.so.3") are dlopen'ed and attached as
 * search generators; the lowering calls SLEEF's scalar functions by name and maps them to the vector
 * variants that dlsym finds, and without SLEEF it emits plain libm calls. Vector width: functions ask
 * for LOOM_HOST_VECTOR_BITS-wide vectors ("prefer-vector-width"; default 512 on AVX-512 hosts, where
 * LLVM's own default for recent cores is 256). Every LLVMErrorRef becomes LOOM_ERR_BACKEND.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/cg_aot.h"
#include "codegen/cg_llvm.h"
#include "codegen/cg_lower.h" /* cg_host_switch_tag */

#ifndef LOOM_SLEEF_LIB
#define LOOM_SLEEF_LIB "libsleefgnuabi.so.3"
#endif
#ifndef LOOM_SLEEF_SCALAR_LIB
#define LOOM_SLEEF_SCALAR_LIB "libsleef.so.3"
#endif

typedef struct HostState {
  pthread_mutex_t lock;
  LLVMOrcLLJITRef jit;
  LLVMOrcJITDylibRef jd;
  LLVMTargetMachineRef tm; /* for the optimizer; the JIT owns its own */
  char *triple, *cpu, *features;
  char describe[256];
  void *sleef;        /* dlopen handle of the vector library or NULL */
  void *sleef_scalar; /* dlopen handle of the scalar library or NULL */
  char vector_bits[8]; /* "prefer-vector-width" of every function ("" : LLVM's choice) */
  char isas[8];
  CgVecMath vec;
  uint64_t counter;
} HostState;

typedef struct HostKernel {
  LLVMOrcResourceTrackerRef rt;
} HostKernel;

static LoomStatus llvm_err(Diag *d, LLVMErrorRef e, const char *what) {
  char *msg = LLVMGetErrorMessage(e);
  LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "LLVM %s failed: %s", what, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return st;
}

static bool sleef_has(void *user, const char *name) {
  HostState *s = user;
  if (!s->sleef) return false;
  if (strncmp(name, "Sleef_", 6) == 0) return s->sleef_scalar && dlsym(s->sleef_scalar, name) != NULL;
  return dlsym(s->sleef, name) != NULL;
}

static bool has_feature(const char *features, const char *f) {
  size_t n = strlen(f);
  for (const char *p = features; (p = strstr(p, f)) != NULL; p += n) {
    if ((p == features || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return true;
  }
  return false;
}

static void host_destroy(CgTarget *t) {
  if (!t) return;
  HostState *s = t->state;
  if (s) {
    if (s->jit) {
      LLVMErrorRef e = LLVMOrcDisposeLLJIT(s->jit);
      if (e) LLVMConsumeError(e);
    }
    if (s->tm) LLVMDisposeTargetMachine(s->tm);
    if (s->triple) LLVMDisposeMessage(s->triple);
    if (s->cpu) LLVMDisposeMessage(s->cpu);
    if (s->features) LLVMDisposeMessage(s->features);
    if (s->sleef) dlclose(s->sleef);
    if (s->sleef_scalar) dlclose(s->sleef_scalar);
    pthread_mutex_destroy(&s->lock);
    ctx_free(t->ctx, s);
  }
  ctx_free(t->ctx, t);
}

static void host_release(CgTarget *t, CgCompiled *c) {
  if (!c) return;
  HostKernel *hk = c->impl;
  if (hk) {
    HostState *s = t->state;
    pthread_mutex_lock(&s->lock);
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(hk->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(hk->rt);
    pthread_mutex_unlock(&s->lock);
    ctx_free(t->ctx, hk);
  }
  ctx_free(t->ctx, c->llvm_ir);
  memset(c, 0, sizeof *c);
}

static LoomStatus lookup(HostState *s, const char *name, LLVMOrcExecutorAddress *addr, Diag *d) {
  LLVMErrorRef e = LLVMOrcLLJITLookup(s->jit, addr, name);
  if (e) return llvm_err(d, e, "symbol lookup");
  if (!*addr) return diag_error(d, LOOM_ERR_BACKEND, "LLVM JIT: symbol %s has address 0", name);
  return LOOM_OK;
}

static LoomStatus compile_locked(CgTarget *t, HostState *s, const KernelIr *k, bool want_llvm_ir,
                                 CgCompiled *out, Diag *d) {
  LoomContext *ctx = t->ctx;
  char prefix[48];
  snprintf(prefix, sizeof prefix, "loom_k%llu", (unsigned long long)++s->counter);
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef c = LLVMOrcThreadSafeContextGetContext(tsc);
  cg_llvm_quiet(c);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, c);
  LLVMSetTarget(mod, s->triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(s->tm);
  LLVMSetModuleDataLayout(mod, dl);
  LLVMDisposeTargetData(dl);
  const char *attrs[6] = {"target-cpu", s->cpu, "target-features", s->features, "prefer-vector-width",
                          s->vector_bits};
  CgEntryNames names;
  LoomStatus st = cg_lower_host(ctx, c, mod, k, prefix, &s->vec, attrs, s->vector_bits[0] ? 3 : 2, &names, d);
  if (st != LOOM_OK) {
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return st;
  }
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
  LLVMErrorRef e = cg_run_pipeline(mod, "default<O3>", s->tm, po, k);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return llvm_err(d, e, "optimization");
  }
  cg_host_widen_half(mod, s->features);
  char *ir_text = NULL;
  if (want_llvm_ir) {
    char *txt = LLVMPrintModuleToString(mod);
    size_t n = strlen(txt);
    ir_text = ctx_alloc(ctx, n + 1);
    if (ir_text) memcpy(ir_text, txt, n + 1);
    LLVMDisposeMessage(txt);
    if (!ir_text) {
      LLVMDisposeModule(mod);
      LLVMOrcDisposeThreadSafeContext(tsc);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for %zu bytes of LLVM IR", n + 1);
    }
  }
  HostKernel *hk = ctx_calloc(ctx, 1, sizeof *hk);
  if (!hk) {
    ctx_free(ctx, ir_text);
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  }
  hk->rt = LLVMOrcJITDylibCreateResourceTracker(s->jd);
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  e = LLVMOrcLLJITAddLLVMIRModuleWithRT(s->jit, hk->rt, tsm);
  if (e) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    LLVMOrcReleaseResourceTracker(hk->rt);
    ctx_free(ctx, hk);
    ctx_free(ctx, ir_text);
    return llvm_err(d, e, "adding a module to the JIT");
  }
  memset(out, 0, sizeof *out);
  out->kind = CG_BINARY_HOST;
  out->impl = hk;
  out->llvm_ir = ir_text;
  LLVMOrcExecutorAddress a = 0;
  st = lookup(s, names.run, &a, d);
  if (st == LOOM_OK) out->run = (CgRunFn)(uintptr_t)a;
  if (st == LOOM_OK && names.has_partial) {
    st = lookup(s, names.partial, &a, d);
    if (st == LOOM_OK) out->partial = (CgPartialFn)(uintptr_t)a;
    if (st == LOOM_OK) st = lookup(s, names.finish, &a, d);
    if (st == LOOM_OK) out->finish = (CgFinishFn)(uintptr_t)a;
  }
  if (st == LOOM_OK && names.has_col) {
    st = lookup(s, names.colpart, &a, d);
    if (st == LOOM_OK) out->colpart = (CgColFn)(uintptr_t)a;
    if (st == LOOM_OK) st = lookup(s, names.colfinish, &a, d);
    if (st == LOOM_OK) out->colfinish = (CgColFn)(uintptr_t)a;
    out->col_phases = names.col_phases;
  }
  out->acc_size = names.acc_size;
  return st;
}

static LoomStatus host_compile(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out,
                               Diag *d) {
  if (!t || !k || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: null argument to compile");
  HostState *s = t->state;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&s->lock);
  LoomStatus st = compile_locked(t, s, k, opt && opt->want_llvm_ir, out, d);
  pthread_mutex_unlock(&s->lock);
  if (st != LOOM_OK && out->impl) host_release(t, out);
  return st;
}

bool cg_host_target_cpu(CgTarget *t, CgHostCpu *out) {
  if (!t || t->compile != host_compile) return false;
  HostState *s = t->state;
  *out = (CgHostCpu){.cpu = s->cpu, .features = s->features, .vector_bits = s->vector_bits, .isas = s->isas};
  return true;
}

static const char *host_describe(CgTarget *t) {
  return t && t->state ? ((HostState *)t->state)->describe : "";
}

LoomStatus cg_host_target_create(LoomContext *ctx, CgTarget **out, Diag *d) {
  if (!out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_host_target_create: out is NULL");
  *out = NULL;
  if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter())
    return diag_error(d, LOOM_ERR_BACKEND, "LLVM has no native target for this host");
  CgTarget *t = ctx_calloc(ctx, 1, sizeof *t);
  HostState *s = t ? ctx_calloc(ctx, 1, sizeof *s) : NULL;
  if (!s) {
    ctx_free(ctx, t);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory creating the host target");
  }
  t->name = "host";
  t->binary = CG_BINARY_HOST;
  t->describe = host_describe;
  t->compile = host_compile;
  t->release = host_release;
  t->destroy = host_destroy;
  t->ctx = ctx;
  t->state = s;
  pthread_mutex_init(&s->lock, NULL);
  s->triple = LLVMGetDefaultTargetTriple();
  s->cpu = LLVMGetHostCPUName();
  s->features = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(s->triple, &target, &err)) {
    LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "LLVM: no target for %s: %s", s->triple, err ? err : "?");
    LLVMDisposeMessage(err);
    host_destroy(t);
    return st;
  }
  s->tm = LLVMCreateTargetMachine(target, s->triple, s->cpu, s->features, LLVMCodeGenLevelAggressive,
                                  LLVMRelocDefault, LLVMCodeModelJITDefault);
  LLVMTargetMachineRef jtm = LLVMCreateTargetMachine(target, s->triple, s->cpu, s->features,
                                                     LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                                     LLVMCodeModelJITDefault);
  if (!s->tm || !jtm) {
    if (jtm) LLVMDisposeTargetMachine(jtm);
    host_destroy(t);
    return diag_error(d, LOOM_ERR_BACKEND, "LLVM: cannot create a target machine for %s", s->triple);
  }
  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(jtm));
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&s->jit, jb); /* takes jb */
  if (e) {
    s->jit = NULL;
    LoomStatus st = llvm_err(d, e, "creating the JIT");
    host_destroy(t);
    return st;
  }
  s->jd = LLVMOrcLLJITGetMainJITDylib(s->jit);
  char prefix = LLVMOrcLLJITGetGlobalPrefix(s->jit);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, prefix, NULL, NULL);
  if (e) {
    LoomStatus st = llvm_err(d, e, "process symbol search");
    host_destroy(t);
    return st;
  }
  LLVMOrcJITDylibAddGenerator(s->jd, gen);
  /* SLEEF: optional; without it the kernels call scalar libm. */
  const char *paths[2][2] = {{LOOM_SLEEF_LIB, "libsleefgnuabi.so.3"}, {LOOM_SLEEF_SCALAR_LIB, "libsleef.so.3"}};
  void **handles[2] = {&s->sleef, &s->sleef_scalar};
  for (int lib = 0; lib < 2; lib++)
    for (int i = 0; i < 2 && !*handles[lib]; i++) {
      *handles[lib] = dlopen(paths[lib][i], RTLD_NOW | RTLD_LOCAL);
      if (!*handles[lib]) continue;
      LLVMOrcDefinitionGeneratorRef sg = NULL;
      e = LLVMOrcCreateDynamicLibrarySearchGeneratorForPath(&sg, paths[lib][i], prefix, NULL, NULL);
      if (e) {
        LLVMConsumeError(e);
        dlclose(*handles[lib]);
        *handles[lib] = NULL;
        continue;
      }
      LLVMOrcJITDylibAddGenerator(s->jd, sg);
    }
  if (!s->sleef_scalar && s->sleef) { /* vector functions without scalar ones: not usable (math.c) */
    dlclose(s->sleef);
    s->sleef = NULL;
  }
  size_t ni = 0;
  if (s->sleef) {
    if (has_feature(s->features, "+avx512f")) s->isas[ni++] = 'e';
    if (has_feature(s->features, "+avx2")) s->isas[ni++] = 'd';
    if (has_feature(s->features, "+avx")) s->isas[ni++] = 'c';
    if (has_feature(s->features, "+sse2")) s->isas[ni++] = 'b';
  }
  s->isas[ni] = 0;
  /* vector width: LOOM_HOST_VECTOR_BITS (128, 256 or 512), else 512 where AVX-512 is present */
  const char *vb = getenv("LOOM_HOST_VECTOR_BITS");
  int bits = vb && *vb ? atoi(vb) : (has_feature(s->features, "+avx512f") ? 512 : 0);
  if (bits != 0 && bits != 128 && bits != 256 && bits != 512) {
    host_destroy(t);
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "LOOM_HOST_VECTOR_BITS=%s: use 128, 256 or 512", vb);
  }
  if (bits) snprintf(s->vector_bits, sizeof s->vector_bits, "%d", bits);
  s->vec.isas = s->isas;
  s->vec.has_symbol = sleef_has;
  s->vec.user = s;
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  uint64_t h = 1469598103934665603ull; /* FNV-1a of the feature string */
  for (const char *p = s->features; *p; p++) h = (h ^ (uint8_t)*p) * 1099511628211ull;
  /* the code's switches (host_moments.c) are part of the cache keys, as the GPU targets' are */
  snprintf(s->describe, sizeof s->describe, "LLVM %u.%u.%u host %s %s %016llx%s%s%s%s", maj, min, pat,
           s->triple, s->cpu, (unsigned long long)h, s->sleef ? " sleef" : "", bits ? " vw" : "", s->vector_bits,
           cg_host_switch_tag());
  *out = t;
  return LOOM_OK;
}
