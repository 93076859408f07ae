/* SPDX-License-Identifier: Apache-2.0 */
/* nvptx_raw.c: user LLVM IR (a RawModule's code, or what clang's CUDA front end made of CUDA C++)
 * -> PTX, and the kernel entries' parameter lists that the launcher checks arguments against.
 *
 * Approach: parse (text or bitcode) into a fresh LLVMContext, verify, read the entries (functions
 * named by !nvvm.annotations "kernel", or of the ptx_kernel calling convention) and their parameter
 * types BEFORE optimizing, link libdevice lazily when the module calls __nv_* (the same scheme as
 * nvptx.c: a lazy bitcode module whose definitions become linkonce_odr, so only used functions are
 * materialized), internalize everything but the entries, run O3 for an NVPTX TargetMachine of the
 * requested sm and print PTX. Each call makes its own context and TargetMachine: raw modules are
 * compiled once per RawModule, so there is nothing worth sharing, and calls are thread-safe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/codegen.h"
#include "codegen/nvptx.h"

#define RAW_TRIPLE NVPTX_TRIPLE
#define RAW_PTX_KERNEL_CC 71 /* LLVM's CallingConv::PTX_Kernel */

extern void LLVMInitializeNVPTXTargetInfo(void) __attribute__((weak));
extern void LLVMInitializeNVPTXTarget(void) __attribute__((weak));
extern void LLVMInitializeNVPTXTargetMC(void) __attribute__((weak));
extern void LLVMInitializeNVPTXAsmPrinter(void) __attribute__((weak));

void cg_raw_entries_free(LoomContext *ctx, CgRawEntry *entries, int32_t n) {
  if (!entries) return;
  for (int32_t i = 0; i < n; i++) {
    ctx_free(ctx, entries[i].name);
    ctx_free(ctx, entries[i].params);
  }
  ctx_free(ctx, entries);
}

static LoomStatus link_libdevice(LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, Diag *d) {
  bool used = false;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && !used; f = LLVMGetNextFunction(f)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    used = n > 5 && strncmp(name, NV_MATH_PREFIX, 5) == 0 && LLVMIsDeclaration(f);
  }
  if (!used) return LOOM_OK;
  char *bytes = NULL;
  size_t size = 0;
  LoomStatus st = cg_read_libdevice(ctx, &bytes, &size, NULL, 0, d);
  if (st != LOOM_OK) return st;
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRange(bytes, size, "libdevice", 0);
  LLVMModuleRef lib = NULL;
  if (LLVMGetBitcodeModuleInContext2(c, mb, &lib)) {
    LLVMDisposeMemoryBuffer(mb);
    ctx_free(ctx, bytes);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot parse libdevice");
  }
  LLVMSetTarget(lib, RAW_TRIPLE);
  LLVMSetDataLayout(lib, LLVMGetDataLayoutStr(mod));
  for (LLVMValueRef f = LLVMGetFirstFunction(lib); f; f = LLVMGetNextFunction(f))
    if (LLVMGetLinkage(f) == LLVMExternalLinkage && !LLVMIsDeclaration(f)) LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
  /* the lazy module reads from bytes until the link has materialized what it needs */
  st = LLVMLinkModules2(mod, lib) ? diag_error(d, LOOM_ERR_BACKEND, "linking libdevice failed") : LOOM_OK;
  ctx_free(ctx, bytes);
  return st;
}

/* The kernel entries of mod, in module order. */
static bool is_kernel(LLVMModuleRef mod, LLVMValueRef f, LLVMValueRef *marks, unsigned nmarks) {
  if (LLVMGetFunctionCallConv(f) == RAW_PTX_KERNEL_CC) return true;
  for (unsigned i = 0; i < nmarks; i++)
    if (marks[i] == f) return true;
  return false;
}

static void param_of(LLVMTargetDataRef td, LLVMValueRef f, unsigned i, CgRawParam *p) {
  LLVMTypeRef ty = LLVMTypeOf(LLVMGetParam(f, i));
  switch (LLVMGetTypeKind(ty)) {
  case LLVMPointerTypeKind: {
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
    LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(f, i + 1, byval);
    if (a) {
      LLVMTypeRef bt = LLVMGetTypeAttributeValue(a);
      p->kind = CG_RAW_ANY;
      p->size = bt ? (int32_t)LLVMABISizeOfType(td, bt) : 8;
    } else {
      p->kind = CG_RAW_POINTER;
      p->size = 8;
    }
    return;
  }
  case LLVMIntegerTypeKind:
    p->kind = CG_RAW_INT;
    p->size = (int32_t)((LLVMGetIntTypeWidth(ty) + 7) / 8);
    return;
  case LLVMHalfTypeKind: case LLVMBFloatTypeKind: case LLVMFloatTypeKind: case LLVMDoubleTypeKind:
    p->kind = CG_RAW_FLOAT;
    p->size = (int32_t)LLVMABISizeOfType(td, ty);
    return;
  default:
    p->kind = CG_RAW_ANY;
    p->size = (int32_t)LLVMABISizeOfType(td, ty);
    return;
  }
}

static LoomStatus read_entries(LoomContext *ctx, LLVMModuleRef mod, CgRawEntry **out, int32_t *nout, Diag *d) {
  unsigned nann = LLVMGetNamedMetadataNumOperands(mod, "nvvm.annotations");
  LLVMValueRef *ann = nann ? ctx_calloc(ctx, nann, sizeof *ann) : NULL;
  LLVMValueRef *marks = nann ? ctx_calloc(ctx, nann, sizeof *marks) : NULL;
  if (nann && (!ann || !marks)) {
    ctx_free(ctx, ann);
    ctx_free(ctx, marks);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory reading kernel annotations");
  }
  unsigned nmarks = 0;
  if (nann) LLVMGetNamedMetadataOperands(mod, "nvvm.annotations", ann);
  for (unsigned i = 0; i < nann; i++) {
    if (LLVMGetMDNodeNumOperands(ann[i]) < 2) continue;
    LLVMValueRef ops[3] = {0, 0, 0};
    unsigned n = LLVMGetMDNodeNumOperands(ann[i]);
    if (n > 3) continue;
    LLVMGetMDNodeOperands(ann[i], ops);
    unsigned len = 0;
    const char *s = ops[1] ? LLVMGetMDString(ops[1], &len) : NULL;
    if (s && len == 6 && !memcmp(s, "kernel", 6) && ops[0] && LLVMIsAFunction(ops[0])) marks[nmarks++] = ops[0];
  }
  int32_t count = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    if (!LLVMIsDeclaration(f) && is_kernel(mod, f, marks, nmarks)) count++;
  CgRawEntry *es = count ? ctx_calloc(ctx, (size_t)count, sizeof *es) : NULL;
  LoomStatus st = count && !es ? diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory") : LOOM_OK;
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
  int32_t k = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && st == LOOM_OK; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || !is_kernel(mod, f, marks, nmarks)) continue;
    size_t nlen = 0;
    const char *name = LLVMGetValueName2(f, &nlen);
    unsigned np = LLVMCountParams(f);
    if (np > CG_RAW_MAX_PARAMS) {
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "kernel '%s' has %u parameters; RawModule supports %d", name, np,
                      CG_RAW_MAX_PARAMS);
      break;
    }
    CgRawEntry *e = &es[k++];
    e->name = ctx_alloc(ctx, nlen + 1);
    e->params = np ? ctx_calloc(ctx, np, sizeof *e->params) : NULL;
    if (!e->name || (np && !e->params)) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
      break;
    }
    memcpy(e->name, name, nlen);
    e->name[nlen] = 0;
    e->nparams = (int32_t)np;
    for (unsigned i = 0; i < np; i++) param_of(td, f, i, &e->params[i]);
  }
  ctx_free(ctx, ann);
  ctx_free(ctx, marks);
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, es, count);
    return st;
  }
  *out = es;
  *nout = count;
  return LOOM_OK;
}

/* LLVM's default diagnostic handler exits the process on an error (a bad bitcode file): keep the
 * first error's text instead, for the message. */
typedef struct RawDiag {
  char msg[512];
} RawDiag;

static void raw_diag_handler(LLVMDiagnosticInfoRef info, void *user) {
  RawDiag *rd = user;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || rd->msg[0]) return;
  char *text = LLVMGetDiagInfoDescription(info);
  snprintf(rd->msg, sizeof rd->msg, "%s", text ? text : "?");
  LLVMDisposeMessage(text);
}

static bool is_entry(const CgRawEntry *es, int32_t n, const char *name) {
  for (int32_t i = 0; i < n; i++)
    if (!strcmp(es[i].name, name)) return true;
  return false;
}

LoomStatus cg_nvptx_compile_llvm(LoomContext *ctx, const void *code, size_t size, bool bitcode, int sm,
                                 char **ptx, CgRawEntry **entries, int32_t *nentries, Diag *d) {
  if (!code || !size || !ptx || !entries || !nentries)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_nvptx_compile_llvm: empty code or NULL argument");
  *ptx = NULL;
  *entries = NULL;
  *nentries = 0;
  if (!LLVMInitializeNVPTXTargetInfo || !LLVMInitializeNVPTXTarget || !LLVMInitializeNVPTXTargetMC ||
      !LLVMInitializeNVPTXAsmPrinter)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "this LLVM has no NVPTX backend: build Loom against an LLVM 19 with "
                                               "the NVPTX target to compile LLVM IR for NVIDIA GPUs");
  if (sm < 30 || sm > 129) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "nvptx: sm_%d is out of range", sm);
  if (sm > 90) sm = 90; /* LLVM 19 knows up to sm_90; newer GPUs JIT sm_90 PTX */
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();

  LLVMContextRef c = LLVMContextCreate();
  RawDiag rd = {.msg = ""};
  LLVMContextSetDiagnosticHandler(c, raw_diag_handler, &rd);
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(code, size, "raw_module");
  LLVMModuleRef mod = NULL;
  char *msg = NULL;
  LoomStatus st = LOOM_OK;
  if (bitcode) {
    if (LLVMParseBitcodeInContext2(c, mb, &mod)) {
      mod = NULL;
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM bitcode does not parse (%s; a corrupt or "
                                                    "newer-than-LLVM-19 file?)", rd.msg[0] ? rd.msg : "no message");
    }
    LLVMDisposeMemoryBuffer(mb);
  } else if (LLVMParseIRInContext(c, mb, &mod, &msg)) { /* takes mb */
    mod = NULL;
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR does not parse: %s", msg ? msg : "?");
  }
  if (msg) LLVMDisposeMessage(msg);
  msg = NULL;
  if (st == LOOM_OK && LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg))
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR is invalid: %s", msg ? msg : "?");
  if (msg) LLVMDisposeMessage(msg);

  LLVMTargetMachineRef tm = NULL;
  if (st == LOOM_OK) {
    const char *triple = LLVMGetTarget(mod);
    if (triple && *triple && strncmp(triple, "nvptx", 5) != 0)
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR targets '%s'; it must target %s (or "
                                                    "name no triple)", triple, RAW_TRIPLE);
  }
  if (st == LOOM_OK) {
    char cpu[16], features[16];
    int ptxv = sm >= 89 ? 78 : sm >= 87 ? 74 : sm >= 86 ? 71 : sm >= 80 ? 70 : sm >= 75 ? 63 : 60;
    snprintf(cpu, sizeof cpu, "sm_%d", sm);
    snprintf(features, sizeof features, "+ptx%d", ptxv);
    LLVMTargetRef target;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(RAW_TRIPLE, &target, &err))
      st = diag_error(d, LOOM_ERR_UNSUPPORTED, "LLVM: no NVPTX target: %s", err ? err : "?");
    else
      tm = LLVMCreateTargetMachine(target, RAW_TRIPLE, cpu, features, LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                   LLVMCodeModelDefault);
    if (err) LLVMDisposeMessage(err);
    if (st == LOOM_OK && !tm) st = diag_error(d, LOOM_ERR_BACKEND, "LLVM: cannot create an NVPTX machine for %s", cpu);
  }
  if (st == LOOM_OK) {
    LLVMSetTarget(mod, RAW_TRIPLE);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(mod, dl);
    LLVMDisposeTargetData(dl);
    st = read_entries(ctx, mod, entries, nentries, d);
  }
  if (st == LOOM_OK && *nentries == 0)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR defines no kernel (mark entries with "
                                                  "!nvvm.annotations !{ptr @f, !\"kernel\", i32 1} or __global__)");
  if (st == LOOM_OK) st = link_libdevice(ctx, c, mod, d);
  if (st == LOOM_OK) {
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
      if (LLVMIsDeclaration(f)) continue;
      if (!is_entry(*entries, *nentries, LLVMGetValueName2(f, &(size_t){0}))) LLVMSetLinkage(f, LLVMInternalLinkage);
    }
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = cg_run_pipeline(mod, "default<O3>", tm, po, NULL);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *em = LLVMGetErrorMessage(e);
      st = diag_error(d, LOOM_ERR_BACKEND, "LLVM optimization of the raw module failed: %s", em ? em : "?");
      LLVMDisposeErrorMessage(em);
    }
  }
  if (st == LOOM_OK) {
    char *err = NULL;
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
      st = diag_error(d, LOOM_ERR_BACKEND, "LLVM NVPTX code generation of the raw module failed: %s", err ? err : "?");
    } else {
      size_t n = LLVMGetBufferSize(buf);
      *ptx = ctx_alloc(ctx, n + 1);
      if (*ptx) {
        memcpy(*ptx, LLVMGetBufferStart(buf), n);
        (*ptx)[n] = 0;
      } else {
        st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory for %zu bytes of PTX", n + 1);
      }
      LLVMDisposeMemoryBuffer(buf);
    }
    if (err) LLVMDisposeMessage(err);
  }
  if (tm) LLVMDisposeTargetMachine(tm);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, *entries, *nentries);
    *entries = NULL;
    *nentries = 0;
    ctx_free(ctx, *ptx);
    *ptx = NULL;
  }
  return st;
}
