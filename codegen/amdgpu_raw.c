/* amdgpu_raw.c: RawModule code for AMD GPUs: user LLVM IR for amdgcn -> code object, and the kernel entries
 * (with their parameters, which the launcher checks arguments against) of LLVM IR and of code objects.
 *
 * LLVM IR: parsed (text or bitcode) into a fresh LLVMContext and verified; the entries are the functions
 * of the amdgpu_kernel calling convention, their parameters read from the IR types BEFORE optimizing
 * (a byref / byval aggregate: its size); then the AMD target's own tool chain (cg_amd_build_module:
 * ocml / ockl and the __oclc_* constants, internalize, O3, object, comgr or ld.lld). A module that names
 * a triple other than amdgcn-amd-amdhsa is refused; one that names none is compiled for it.
 * Code objects: the entries and their explicit arguments come from the metadata (comgr): a
 * global_buffer is a pointer, a by_value argument a value of its size; hidden arguments are the
 * runtime's. Each call makes its own target (raw modules compile once per RawModule).
 */
#include <stdio.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>

#include "codegen/amdgpu.h"

static void param_of(LLVMTargetDataRef td, LLVMValueRef f, unsigned i, CgRawParam *p) {
  LLVMTypeRef ty = LLVMTypeOf(LLVMGetParam(f, i));
  switch (LLVMGetTypeKind(ty)) {
  case LLVMPointerTypeKind: {
    static const char *const by[2] = {"byref", "byval"};
    for (int k = 0; k < 2; k++) {
      LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(f, i + 1, LLVMGetEnumAttributeKindForName(by[k], 5));
      LLVMTypeRef bt = a ? LLVMGetTypeAttributeValue(a) : NULL;
      if (bt) {
        p->kind = CG_RAW_ANY;
        p->size = (int32_t)LLVMABISizeOfType(td, bt);
        return;
      }
    }
    p->kind = CG_RAW_POINTER;
    p->size = 8;
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

static LoomStatus entry_alloc(LoomContext *ctx, CgRawEntry *e, const char *name, size_t nlen, int32_t np, Diag *d) {
  if (np > CG_RAW_MAX_PARAMS)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "kernel '%.*s' has %d parameters; RawModule supports %d", (int)nlen, name,
                      np, CG_RAW_MAX_PARAMS);
  e->name = ctx_alloc(ctx, nlen + 1);
  e->params = np ? ctx_calloc(ctx, (size_t)np, sizeof *e->params) : NULL;
  if (!e->name || (np && !e->params)) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  memcpy(e->name, name, nlen);
  e->name[nlen] = 0;
  e->nparams = np;
  return LOOM_OK;
}

static LoomStatus read_entries(LoomContext *ctx, LLVMModuleRef mod, CgRawEntry **out, int32_t *nout, Diag *d) {
  int32_t count = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
    count += !LLVMIsDeclaration(f) && LLVMGetFunctionCallConv(f) == LLVMAMDGPUKERNELCallConv;
  CgRawEntry *es = count ? ctx_calloc(ctx, (size_t)count, sizeof *es) : NULL;
  LoomStatus st = count && !es ? diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory") : LOOM_OK;
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
  int32_t k = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f && st == LOOM_OK; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || LLVMGetFunctionCallConv(f) != LLVMAMDGPUKERNELCallConv) continue;
    size_t nlen = 0;
    const char *name = LLVMGetValueName2(f, &nlen);
    CgRawEntry *e = &es[k++];
    st = entry_alloc(ctx, e, name, nlen, (int32_t)LLVMCountParams(f), d);
    for (int32_t i = 0; st == LOOM_OK && i < e->nparams; i++) param_of(td, f, (unsigned)i, &e->params[i]);
  }
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, es, count);
    return st;
  }
  *out = es;
  *nout = count;
  return LOOM_OK;
}

/* LLVM's default diagnostic handler exits the process on an error (a bad bitcode file): keep the first
 * error's text instead, for the message. */
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

LoomStatus cg_amdgpu_compile_llvm(LoomContext *ctx, const void *code, size_t size, bool bitcode, const char *gfx,
                                  char **co, size_t *co_size, CgRawEntry **entries, int32_t *nentries, Diag *d) {
  if (!code || !size || !co || !co_size || !entries || !nentries)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_amdgpu_compile_llvm: empty code or NULL argument");
  *co = NULL;
  *co_size = 0;
  *entries = NULL;
  *nentries = 0;
  CgTarget *t = NULL;
  LoomStatus st = cg_amdgpu_target_create(ctx, gfx, 0, &t, d);
  if (st != LOOM_OK) return st;
  LLVMContextRef c = LLVMContextCreate();
  RawDiag rd = {.msg = ""};
  LLVMContextSetDiagnosticHandler(c, raw_diag_handler, &rd);
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(code, size, "raw_module");
  LLVMModuleRef mod = NULL;
  char *msg = NULL;
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
  if (st == LOOM_OK) {
    const char *triple = LLVMGetTarget(mod);
    if (triple && *triple && strncmp(triple, "amdgcn", 6) != 0)
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR targets '%s'; for an AMD GPU it must target "
                      "%s (or name no triple)", triple, AMDGPU_TRIPLE);
  }
  if (st == LOOM_OK) {
    cg_amd_module_init(t, c, mod); /* the data layout the parameter sizes are read with */
    st = read_entries(ctx, mod, entries, nentries, d);
  }
  if (st == LOOM_OK && *nentries == 0)
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the LLVM IR defines no kernel (give entries the "
                                                  "amdgpu_kernel calling convention)");
  if (st == LOOM_OK) {
    const char **keep = ctx_calloc(ctx, (size_t)*nentries, sizeof *keep);
    for (int32_t i = 0; keep && i < *nentries; i++) keep[i] = (*entries)[i].name;
    st = keep ? cg_amd_build_module(t, c, mod, keep, *nentries, co, co_size, d)
              : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
    ctx_free(ctx, keep);
  }
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  t->destroy(t);
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, *entries, *nentries);
    *entries = NULL;
    *nentries = 0;
    ctx_free(ctx, *co);
    *co = NULL;
  }
  return st;
}

LoomStatus cg_amdgpu_code_object_entries(LoomContext *ctx, const void *co, size_t size, CgRawEntry **entries,
                                         int32_t *nentries, Diag *d) {
  if (!entries || !nentries) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cg_amdgpu_code_object_entries: NULL");
  *entries = NULL;
  *nentries = 0;
  CgAmdMeta meta;
  LoomStatus st = cg_amdgpu_read_metadata(ctx, co, size, &meta, d);
  if (st != LOOM_OK) return st;
  CgRawEntry *es = meta.nkernels ? ctx_calloc(ctx, (size_t)meta.nkernels, sizeof *es) : NULL;
  if (meta.nkernels && !es) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  for (int32_t i = 0; st == LOOM_OK && i < meta.nkernels; i++) {
    const CgAmdKernelMeta *k = &meta.kernels[i];
    int32_t np = 0;
    for (int32_t j = 0; j < k->nargs; j++) np += strncmp(k->args[j].kind, "hidden_", 7) != 0;
    st = entry_alloc(ctx, &es[i], k->name, strlen(k->name), np, d);
    int32_t p = 0;
    for (int32_t j = 0; st == LOOM_OK && j < k->nargs; j++) {
      const CgAmdArg *a = &k->args[j];
      if (!strncmp(a->kind, "hidden_", 7)) continue;
      bool ptr = !strcmp(a->kind, "global_buffer") || !strcmp(a->kind, "dynamic_shared_pointer");
      es[i].params[p].kind = ptr ? CG_RAW_POINTER : CG_RAW_ANY;
      es[i].params[p++].size = (int32_t)a->size;
    }
  }
  int32_t n = meta.nkernels;
  cg_amdgpu_meta_free(ctx, &meta);
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, es, n);
    return st;
  }
  if (n == 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the code object has no kernels");
  *entries = es;
  *nentries = n;
  return LOOM_OK;
}

bool cg_llvm_targets_amdgcn(const void *code, size_t size) {
  const unsigned char *p = code;
  if (!code || size < 4) return false;
  bool bitcode = (p[0] == 'B' && p[1] == 'C' && p[2] == 0xc0 && p[3] == 0xde) ||
                 (p[0] == 0xde && p[1] == 0xc0 && p[2] == 0x17 && p[3] == 0x0b);
  if (!bitcode) { /* text: its `target triple = "amdgcn...` line */
    static const char key[] = "target triple";
    const char *s = code, *end = s + size;
    for (const char *q = s; q + sizeof key < end; q++) {
      q = memchr(q, 't', (size_t)(end - q));
      if (!q || q + sizeof key >= end) break;
      if (memcmp(q, key, sizeof key - 1)) continue;
      const char *v = q + sizeof key - 1;
      while (v < end && (*v == ' ' || *v == '\t' || *v == '=')) v++;
      return v + 7 < end && !memcmp(v, "\"amdgcn", 7);
    }
    return false;
  }
  /* bitcode: the module's triple, read lazily (no function bodies) */
  LLVMContextRef c = LLVMContextCreate();
  RawDiag rd = {.msg = ""};
  LLVMContextSetDiagnosticHandler(c, raw_diag_handler, &rd);
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(code, size, "sniff");
  LLVMModuleRef mod = NULL;
  bool amd = false;
  if (!LLVMGetBitcodeModuleInContext2(c, mb, &mod)) { /* the lazy module owns mb */
    const char *t = LLVMGetTarget(mod);
    amd = t && !strncmp(t, "amdgcn", 6);
    LLVMDisposeModule(mod);
  } else {
    LLVMDisposeMemoryBuffer(mb);
  }
  LLVMContextDispose(c);
  return amd;
}
