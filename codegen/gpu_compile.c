/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_compile.c: the compile flow shared by GPU targets (cg_gpu.h): a module per compile, lowered by the
 * shared GPU lowering (cg_lower_gpu), trimmed to the entries asked for, the device math library linked,
 * everything but the entries internalized, optimized and emitted as the target's binary, each step
 * through the target's hooks and timed (CgGpuKernel.phase_ms). One compile at a time per target (its
 * TargetMachines are shared); each compile has its own LLVMContext.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Core.h>

#include "codegen/cg_gpu.h"
#include "codegen/cg_lower.h"

/* Milliseconds since *mark; moves *mark to now. */
static double lap_ms(double *mark) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double now = ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6, dt = now - *mark;
  *mark = now;
  return dt;
}

/* Deletes the entries of gk not in `want` (see CgCompileOptions.entries) before optimization, so that
 * neither LLVM nor the driver's JIT spends time on them; fills entries_all / entries. */
static void keep_entries(LLVMModuleRef mod, CgGpuKernel *gk, uint32_t want) {
  uint32_t all = 0;
  for (int i = 0; i < CG_NENTRY; i++)
    if (cg_gpu_entry_name(gk, i)[0]) all |= 1u << i;
  uint32_t keep = all & want;
  if (!keep && (want & CG_ENTRY_VECW)) keep = all & CG_ENTRY_VEC;
  if (!keep && want) keep = all & CG_ENTRY_MAIN;
  for (int i = 0; i < CG_NENTRY; i++) {
    char *name = cg_gpu_entry_name(gk, i);
    if (!name[0] || (keep & (1u << i))) continue;
    LLVMValueRef f = LLVMGetNamedFunction(mod, name);
    if (f) LLVMDeleteFunction(f);
    name[0] = 0;
  }
  gk->entries_all = all;
  gk->entries = keep;
}

/* Every function but the entries and every global definition become internal. */
static void internalize(LLVMModuleRef mod, CgGpuKernel *gk) {
  for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    bool entry = false;
    for (int i = 0; i < CG_NENTRY && !entry; i++) {
      const char *e = cg_gpu_entry_name(gk, i);
      entry = e[0] && !strcmp(name, e);
    }
    if (!entry) LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsDeclaration(g)) LLVMSetLinkage(g, LLVMInternalLinkage);
}

static LoomStatus compile_locked(CgTarget *t, CgGpuTarget *g, const KernelIr *k, const CgCompileOptions *opt,
                                 CgCompiled *out, Diag *d) {
  LoomContext *ctx = t->ctx;
  const CgGpuHooks *h = &g->hooks;
  char prefix[48];
  snprintf(prefix, sizeof prefix, "loom_k%llu", (unsigned long long)++g->counter);
  LLVMContextRef c = LLVMContextCreate();
  cg_llvm_quiet(c);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext(prefix, c);
  h->module_init(g, c, mod);
  double mark = 0;
  lap_ms(&mark);
  CgGpuKernel *gk = ctx_calloc(ctx, 1, sizeof *gk);
  LoomStatus st = gk ? cg_lower_gpu(ctx, c, mod, k, prefix, h, g->block, gk, d)
                     : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory");
  if (st == LOOM_OK) cg_gpu_scan_lookback_trim(mod, k, gk); /* lower_scan_lookback.c: no `part` */
  if (st == LOOM_OK) keep_entries(mod, gk, opt->entries);
  if (gk) gk->phase_ms[0] = lap_ms(&mark);
  bool emit = opt->entries != 0; /* 0: describe only (entry set and launch facts; no code) */
  if (st == LOOM_OK && emit) st = h->link_math(g, c, mod, d);
  if (gk) gk->phase_ms[1] = lap_ms(&mark);
  if (st == LOOM_OK && emit) {
    internalize(mod, gk);
    st = h->optimize(g, mod, gk, k, d);
    gk->phase_ms[2] = lap_ms(&mark);
  }
  char *ir_text = NULL;
  if (st == LOOM_OK && emit && opt->want_llvm_ir) {
    char *txt = LLVMPrintModuleToString(mod);
    size_t n = strlen(txt);
    ir_text = ctx_alloc(ctx, n + 1);
    if (ir_text) memcpy(ir_text, txt, n + 1);
    LLVMDisposeMessage(txt);
    if (!ir_text) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory for LLVM IR text");
  }
  if (st == LOOM_OK && emit) {
    st = h->emit(g, mod, gk, k, &gk->code, &gk->code_size, d);
    gk->phase_ms[3] = lap_ms(&mark);
  }
  if (gk) gk->kind = g->binary;
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  if (st != LOOM_OK) {
    if (gk) ctx_free(ctx, gk->code);
    ctx_free(ctx, gk);
    ctx_free(ctx, ir_text);
    return st;
  }
  memset(out, 0, sizeof *out);
  out->kind = g->binary;
  out->gpu = gk;
  out->llvm_ir = ir_text;
  out->acc_size = gk->acc_size;
  return LOOM_OK;
}

LoomStatus cg_gpu_compile(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out, Diag *d) {
  if (!t || !t->state || !k || !out)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "codegen: null argument to compile");
  CgGpuTarget *g = t->state;
  CgCompileOptions defaults = CG_COMPILE_DEFAULTS;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&g->lock);
  LoomStatus st = compile_locked(t, g, k, opt ? opt : &defaults, out, d);
  pthread_mutex_unlock(&g->lock);
  return st;
}

void cg_gpu_release(CgTarget *t, CgCompiled *c) {
  if (!c) return;
  if (c->gpu) {
    ctx_free(t->ctx, c->gpu->code);
    ctx_free(t->ctx, c->gpu);
  }
  ctx_free(t->ctx, c->llvm_ir);
  memset(c, 0, sizeof *c);
}

const char *cg_gpu_describe(CgTarget *t) { return t && t->state ? ((CgGpuTarget *)t->state)->describe : ""; }

void cg_gpu_target_init(CgTarget *t, CgGpuTarget *g, LoomContext *ctx, const char *name) {
  t->name = name;
  t->binary = g->binary;
  t->describe = cg_gpu_describe;
  t->compile = cg_gpu_compile;
  t->release = cg_gpu_release;
  t->ctx = ctx;
  t->state = g;
  g->arch = name;
  pthread_mutex_init(&g->lock, NULL);
}
