/* SPDX-License-Identifier: Apache-2.0 */
/* eval_dump.c: loom_dump and loom_dump_for: the text of what loom_eval would run for some nodes (the
 * graph, the kernels the pass pipeline makes, their LLVM IR, PTX or AMDGPU code, compile times), made on a
 * throwaway schedule: nothing is run and no plan is kept.
 */
#include <string.h>

#include "runtime/eval_internal.h"

/* LOOM_DUMP_PTX comes from the device whose kernels are PTX (its reference architecture, sm_90, or
 * targets->ptx_arch), LOOM_DUMP_AMDGPU from the one whose kernels are AMDGPU code objects (gfx942, or
 * targets->amdgpu_chip), compiled without a GPU. LOOM_DUMP_TIME: the pipeline's pass times, then per
 * kernel a fresh host compile (timed here) and the GPU targets' compile times (those this build has). */
static LoomStatus dump_time_kernels(LoomContext *ctx, const Schedule *s, const KernelIr **gpu_ks, int32_t ngpu,
                                    const LoomDumpTargets *targets, StrBuf *sb, Diag *d) {
  CgTarget *host = ctx->rt->host;
  for (int32_t i = 0; i < s->nkernel; i++) {
    const KernelIr *ir = s->kernels[i].ir;
    if (ir->call) {
      sb_printf(sb, "# time kernel %s is a library call (nothing to compile)\n", ir->name);
      continue;
    }
    CgCompiled cc;
    memset(&cc, 0, sizeof cc);
    CgCompileOptions opt = CG_COMPILE_DEFAULTS;
    double t0 = rt_now_ms();
    LoomStatus st = host->compile(host, ir, &opt, &cc, d);
    double ms = rt_now_ms() - t0;
    if (st != LOOM_OK) return st;
    if (host->release) host->release(host, &cc);
    sb_printf(sb, "# time kernel %s host %.3f ms\n", ir->name, ms);
  }
  const CgBinaryKind gpus[] = {CG_BINARY_PTX, CG_BINARY_AMDGPU};
  for (int g = 0; g < 2 && ngpu > 0; g++) {
    const RtDevice *pd = rt_device_for_binary(gpus[g]);
    if (!pd || !pd->dump_code) continue; /* this build has no such target */
    RtDumpRequest rq = {.arch = targets ? (g == 0 ? targets->ptx_arch : targets->amdgpu_chip) : NULL, .times = true};
    LoomStatus st = pd->dump_code(ctx, &rq, ngpu, gpu_ks, sb, d);
    if (st == LOOM_ERR_UNSUPPORTED) { /* no libdevice / device libraries for math here: say so, keep the rest */
      sb_printf(sb, "# time %s: unavailable: %s\n", g == 0 ? "ptx" : "amdgpu", d->msg);
      *d = (Diag){.status = LOOM_OK};
    } else if (st != LOOM_OK) {
      return st;
    }
  }
  return LOOM_OK;
}

static LoomStatus dump_impl(LoomGraph *g, LoomDumpKind kind, const LoomDumpTargets *targets, int32_t n,
                            const LoomNode *nodes, char **text, Diag *d) {
  LoomContext *ctx = g->ctx;
  if (!text) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_dump: text is NULL");
  *text = NULL;
  LoomStatus st = rt_eval_check_nodes(g, n, nodes, "loom_dump", d);
  if (st != LOOM_OK) return st;
  if (kind != LOOM_DUMP_GRAPH && kind != LOOM_DUMP_KERNELS && kind != LOOM_DUMP_LLVM && kind != LOOM_DUMP_PTX &&
      kind != LOOM_DUMP_AMDGPU && kind != LOOM_DUMP_TIME)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_dump: unknown kind %d; use LOOM_DUMP_GRAPH, LOOM_DUMP_KERNELS, LOOM_DUMP_LLVM, "
                      "LOOM_DUMP_PTX, LOOM_DUMP_AMDGPU or LOOM_DUMP_TIME", (int)kind);
  if ((kind == LOOM_DUMP_LLVM || kind == LOOM_DUMP_TIME) && (!ctx->rt || !ctx->rt->cache))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_dump: the context has no runtime");

  StrBuf sb;
  sb_init(&sb, ctx);
  if (kind == LOOM_DUMP_GRAPH) {
    ir_print_graph(&g->ir, n, nodes, &sb);
  } else {
    Arena arena;
    arena_init(&arena, ctx);
    LoomArray *mod_outs = arena_alloc(&arena, (size_t)n * sizeof *mod_outs);
    int32_t *roots = arena_alloc(&arena, (size_t)n * sizeof *roots);
    if (!mod_outs || !roots) {
      arena_free_all(&arena);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump bookkeeping");
    }
    memcpy(roots, nodes, (size_t)n * sizeof *roots);
    for (int32_t i = 0; i < n; i++) rt_eval_describe_contiguous(&mod_outs[i], &g->ir.nodes[nodes[i]], NULL);
    Schedule *sched = NULL; /* LOOM_DUMP_TIME: "# time NAME MS ms" per pass */
    bool timed = kind == LOOM_DUMP_TIME;
    st = rt_eval_schedule(g, &arena, n, roots, mod_outs, timed ? &sb : NULL, timed ? IR_DUMP_TIME : 0, &sched, d);
    if (st == LOOM_OK && kind == LOOM_DUMP_KERNELS) ir_print_schedule(sched, &sb);
    const RtDevice *host = rt_device(LOOM_DEVICE_HOST); /* the host's kernels as they run (specialized) */
    if (st == LOOM_OK && kind == LOOM_DUMP_LLVM && host && host->specialize) st = host->specialize(ctx, &arena, sched, d);
    for (int32_t i = 0; st == LOOM_OK && kind == LOOM_DUMP_LLVM && i < sched->nkernel; i++) {
      const KernelIr *ir = sched->kernels[i].ir;
      const CgCompiled *k = NULL;
      if (ir->call) {
        sb_printf(&sb, "; kernel %s is a library call (no LLVM IR)\n", ir->name);
        continue;
      }
      st = rt_cache_acquire(ctx->rt->cache, ir, true, &k, NULL, d);
      if (st != LOOM_OK) break;
      sb_printf(&sb, "; kernel %s\n%s\n", ir->name, k->llvm_ir ? k->llvm_ir : "");
      rt_cache_release(ctx->rt->cache, k);
    }
    if (st == LOOM_OK && (kind == LOOM_DUMP_PTX || kind == LOOM_DUMP_AMDGPU || kind == LOOM_DUMP_TIME)) {
      const RtDevice *pd = rt_device_for_binary(kind == LOOM_DUMP_PTX ? CG_BINARY_PTX : CG_BINARY_AMDGPU);
      if (kind != LOOM_DUMP_TIME && pd && pd->specialize) st = pd->specialize(ctx, &arena, sched, d); /* as they run */
      const KernelIr **ks = arena_alloc(&arena, sizeof *ks * (size_t)(sched->nkernel + 1));
      int32_t nks = 0; /* library calls have no device code */
      for (int32_t i = 0; ks && i < sched->nkernel; i++)
        if (!sched->kernels[i].ir->call) ks[nks++] = sched->kernels[i].ir;
      RtDumpRequest rq = {.arch = targets ? (kind == LOOM_DUMP_PTX ? targets->ptx_arch : targets->amdgpu_chip) : NULL,
                          .code = true, .times = (ctx->dump_flags & IR_DUMP_TIME) != 0};
      if (st != LOOM_OK) /* the specialization's */
        ;
      else if (!ks) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump bookkeeping");
      else if (kind == LOOM_DUMP_TIME) st = dump_time_kernels(ctx, sched, ks, nks, targets, &sb, d);
      else if (!pd || !pd->dump_code)
        st = diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_dump: this build has no %s target",
                        kind == LOOM_DUMP_PTX ? "PTX" : "AMDGPU");
      else st = pd->dump_code(ctx, &rq, nks, ks, &sb, d);
    }
    arena_free_all(&arena);
    if (st != LOOM_OK) {
      sb_free(&sb);
      return st;
    }
  }
  *text = sb_take(&sb);
  if (!*text) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_dump text");
  return LOOM_OK;
}

LOOM_API LoomStatus loom_dump(LoomGraph *g, LoomDumpKind kind, int32_t n, const LoomNode *nodes,
                              char **text) {
  if (!g || !g->ctx) {
    if (text) *text = NULL;
    return LOOM_ERR_INVALID_ARGUMENT;
  }
  Diag d = {.status = LOOM_OK};
  LoomStatus st = dump_impl(g, kind, NULL, n, nodes, text, &d);
  if (st == LOOM_OK) return LOOM_OK;
  if (d.status == LOOM_OK) diag_error(&d, st, "loom_dump failed (%s)", loom_status_name(st));
  return ctx_report(g->ctx, &d);
}

LOOM_API LoomStatus loom_dump_for(LoomGraph *g, LoomDumpKind kind, const LoomDumpTargets *targets, int32_t n,
                                  const LoomNode *nodes, char **text) {
  if (!g || !g->ctx) {
    if (text) *text = NULL;
    return LOOM_ERR_INVALID_ARGUMENT;
  }
  Diag d = {.status = LOOM_OK};
  LoomStatus st = dump_impl(g, kind, targets, n, nodes, text, &d);
  if (st == LOOM_OK) return LOOM_OK;
  if (d.status == LOOM_OK) diag_error(&d, st, "loom_dump_for failed (%s)", loom_status_name(st));
  return ctx_report(g->ctx, &d);
}

LOOM_API void loom_free_string(LoomContext *ctx, char *text) { ctx_free(ctx, text); }
