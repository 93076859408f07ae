/* SPDX-License-Identifier: Apache-2.0 */
/* eval_plan.c: evaluation plans (eval_internal.h). A graph keeps up to RT_MAX_PLANS plans, most recently
 * used first: the schedule the pass pipeline made for one set of roots, output layouts and input layouts
 * on one device, with its kernels prepared (pinned) there. Graph nodes change only by loom_node_bind, which
 * drops every plan, and a schedule binds arrays by index, never by address, so a later loom_eval with the
 * same roots and layouts skips the passes and the kernel-table look-ups. Plans are freed with the graph (LoomGraph.free_plans).
 */
#include <stddef.h>
#include <string.h>

#include "runtime/eval_internal.h"

/* The graph's input descriptors are zeroed past ndim (ir_input_append) and only their data and strides
 * change (ir_input_rebind), so layouts compare as the bytes after the data pointer: one memcmp. */
static bool same_layout(const LoomArray *a, const LoomArray *b) {
  enum { LAYOUT_OFFSET = offsetof(LoomArray, dtype), LAYOUT_BYTES = sizeof(LoomArray) - LAYOUT_OFFSET };
  return memcmp((const char *)a + LAYOUT_OFFSET, (const char *)b + LAYOUT_OFFSET, LAYOUT_BYTES) == 0;
}

/* Whether g's inputs have the layouts p recorded (p->input_index: which ones; NULL: the first ninputs). */
static bool same_layouts(const RtPlan *p, const LoomGraph *g) {
  if (!p->input_index) {
    if (p->ninputs > g->ir.ninputs) return false;
    for (int32_t i = 0; i < p->ninputs; i++)
      if (!same_layout(&p->inputs[i], &g->ir.inputs[i])) return false;
    return true;
  }
  for (int32_t i = 0; i < p->ninputs; i++)
    if (p->input_index[i] >= g->ir.ninputs || !same_layout(&p->inputs[i], &g->ir.inputs[p->input_index[i]]))
      return false;
  return true;
}

static bool plan_matches(const RtPlan *p, const LoomGraph *g, int32_t n, const LoomNode *nodes,
                         const LoomArray *outs, LoomDeviceKind dk, int32_t di) {
  if (p->device != dk || p->device_index != di) return false;
  if (p->n != n || memcmp(p->roots, nodes, (size_t)n * sizeof *nodes) != 0) return false;
  for (int32_t i = 0; i < n; i++)
    if (memcmp(&p->out_strides[(size_t)i * LOOM_MAX_RANK], outs[i].strides,
               (size_t)outs[i].ndim * sizeof(int64_t)) != 0)
      return false;
  return same_layouts(p, g);
}

/* A kept plan for these roots when every output is to be allocated here (all outs[i].data NULL), found
 * before the device walk: the plan's device is the one eval_device would find, since the plan compares
 * every input's layout and device and the roots, hence the inputs they reach; its outputs were allocated
 * C-contiguous as they will be now. NULL when there is none (or an output is given). */
RtPlan *rt_plan_find_fresh(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs) {
  for (int32_t i = 0; i < n; i++)
    if (outs[i].data) return NULL;
  RtPlan **link = (RtPlan **)&g->plans;
  for (RtPlan *p = *link; p; link = &p->next, p = p->next) {
    if (!p->fresh_outs || p->n != n || memcmp(p->roots, nodes, (size_t)n * sizeof *nodes) != 0) continue;
    if (!same_layouts(p, g)) continue;
    *link = p->next; /* most recently used first */
    p->next = g->plans;
    g->plans = p;
    return p;
  }
  return NULL;
}

void rt_plan_free(LoomContext *ctx, RtPlan *p) {
  if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (p->origin) rt_plan_free(ctx, p->origin); /* its schedule and kernels were the origin's */
  else if (p->kernels)
    for (int32_t k = 0; k < p->schedule->nkernel; k++)
      if (p->kernels[k]) p->dev->unpin(ctx, p->device_index, p->kernels[k]);
  Arena a = p->arena; /* p lives in its own arena */
  arena_free_all(&a);
}

static void graph_free_plans(LoomGraph *g) {
  for (RtPlan *p = g->plans, *next; p; p = next) {
    next = p->next;
    rt_plan_free(g->ctx, p);
  }
  g->plans = NULL;
}

/* The matching plan, moved to the front of the graph's list; NULL if none. */
RtPlan *rt_plan_find(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                     int32_t di) {
  RtPlan **link = (RtPlan **)&g->plans;
  for (RtPlan *p = *link; p; link = &p->next, p = p->next) {
    if (!plan_matches(p, g, n, nodes, outs, dk, di)) continue;
    *link = p->next;
    p->next = g->plans;
    g->plans = p;
    return p;
  }
  return NULL;
}

static void keep_plan(LoomGraph *g, RtPlan *p);
static bool record_match(LoomGraph *g, RtPlan *p, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                         const int32_t *used, int32_t nused);

/* Runs the pipeline into a new plan; when `keep`, pins its kernels and adds it to the graph. */
LoomStatus rt_eval_schedule(LoomGraph *g, Arena *a, int32_t n, int32_t *roots, const LoomArray *outs, StrBuf *dump,
                            uint32_t dump_flags, Schedule **out, Diag *d) {
  IrModule m;
  memset(&m, 0, sizeof m);
  m.graph = &g->ir;
  m.arena = a;
  m.nroots = n;
  m.roots = roots;
  m.outs = outs;
  m.dump = dump;
  m.dump_flags = dump_flags;
  LoomStatus st = pass_run_pipeline(&m, d);
  if (st == LOOM_OK && !m.schedule)
    st = diag_error(d, LOOM_ERR_INTERNAL, "internal error: the pipeline produced no schedule");
  *out = st == LOOM_OK ? m.schedule : NULL;
  return st;
}

LoomStatus rt_plan_make(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                        int32_t di, bool keep, bool fresh, StrBuf *dump, RtPlan **out, Diag *d) {
  LoomContext *ctx = g->ctx;
  Arena a;
  arena_init(&a, ctx);
  RtPlan *p = arena_alloc(&a, sizeof *p);
  int32_t *roots = arena_alloc(&a, (size_t)n * sizeof *roots);
  if (p) {
    p->arena = a;
    p->refs = 1; /* the caller's (kept: the graph's list) */
  }
  if (!p || !roots || !record_match(g, p, n, nodes, outs, NULL, 0)) {
    arena_free_all(p ? &p->arena : &a);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: evaluation plan for %d outputs", n);
  }
  a = p->arena;
  memcpy(roots, nodes, (size_t)n * sizeof *nodes);

  pthread_mutex_lock(&ctx->rt->stats_lock);
  ctx->rt->stats.plans_made++;
  pthread_mutex_unlock(&ctx->rt->stats_lock);
  Schedule *sched = NULL;
  LoomStatus st = rt_eval_schedule(g, &a, n, roots, outs, dump, ctx->dump_flags, &sched, d);
  const RtDevice *dev = rt_device(dk);
  if (st == LOOM_OK && dev && dev->specialize) st = dev->specialize(ctx, &a, sched, d); /* before prepare */
  if (st != LOOM_OK) {
    arena_free_all(&a);
    return st;
  }
  p->schedule = sched;
  p->kernels = NULL;
  p->dev = rt_device(dk);
  p->device = dk;
  p->device_index = di;
  p->fresh_outs = fresh;
  p->arena = a;
  if (keep && sched->nkernel > 0) {
    p->kernels = arena_alloc(&p->arena, (size_t)sched->nkernel * sizeof *p->kernels);
    if (!p->kernels) {
      rt_plan_free(ctx, p);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: evaluation plan kernels");
    }
    memset(p->kernels, 0, (size_t)sched->nkernel * sizeof *p->kernels);
    for (int32_t k = 0; k < sched->nkernel; k++) {
      const SchedKernel *sk = &sched->kernels[k];
      if (sk->ir->call) continue; /* a library call: nothing to compile */
      int64_t npoints = 1;
      for (int32_t i = 0; i < sk->ir->ndim; i++) npoints *= sk->shape[i];
      st = p->dev->prepare(ctx, di, sk->ir, npoints, &p->kernels[k], d);
      if (st != LOOM_OK) {
        rt_plan_free(ctx, p);
        return st;
      }
    }
  }
  if (keep) keep_plan(g, p);
  else p->next = NULL;
  *out = p;
  return LOOM_OK;
}

/* Puts p first on g's list, dropping the least recently used plans past RT_MAX_PLANS. */
static void keep_plan(LoomGraph *g, RtPlan *p) {
  g->free_plans = graph_free_plans;
  p->next = g->plans;
  g->plans = p;
  int count = 0;
  for (RtPlan **link = (RtPlan **)&g->plans; *link; link = &(*link)->next)
    if (++count == RT_MAX_PLANS && (*link)->next) {
      RtPlan *rest = (*link)->next;
      (*link)->next = NULL;
      for (RtPlan *q = rest, *next; q; q = next) {
        next = q->next;
        rt_plan_free(g->ctx, q);
      }
      break;
    }
}

/* The roots, output strides and input layouts a plan of g is matched by (plan_matches), in p's arena: the
 * layouts of the inputs used[0..nused) (a shared plan's: the ones its schedule reads), or with used NULL
 * of every input of g (a plan made here: the passes saw the whole graph). */
static bool record_match(LoomGraph *g, RtPlan *p, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                         const int32_t *used, int32_t nused) {
  int32_t ni = used ? nused : g->ir.ninputs;
  p->roots = arena_alloc(&p->arena, (size_t)n * sizeof *p->roots);
  p->out_strides = arena_alloc(&p->arena, (size_t)n * LOOM_MAX_RANK * sizeof(int64_t));
  p->inputs = arena_alloc(&p->arena, (size_t)(ni > 0 ? ni : 1) * sizeof(LoomArray));
  p->input_index = used ? arena_alloc(&p->arena, (size_t)(ni > 0 ? ni : 1) * sizeof *p->input_index) : NULL;
  if (!p->roots || !p->out_strides || !p->inputs || (used && !p->input_index)) return false;
  p->n = n;
  memcpy(p->roots, nodes, (size_t)n * sizeof *nodes);
  for (int32_t i = 0; i < n; i++)
    memcpy(&p->out_strides[(size_t)i * LOOM_MAX_RANK], outs[i].strides, LOOM_MAX_RANK * sizeof(int64_t));
  p->ninputs = ni;
  for (int32_t i = 0; i < ni; i++) {
    int32_t x = used ? used[i] : i;
    p->inputs[i] = g->ir.inputs[x];
    if (used) p->input_index[i] = x;
  }
  return true;
}

/* origin's schedule with the words in patch[] rewritten, in a's arena (kernels and untouched words shared). */
static Schedule *patched_schedule(Arena *a, const Schedule *s, const RtParamPatch *patch, int32_t npatch) {
  Schedule *c = arena_alloc(a, sizeof *c);
  SchedKernel *ks = c ? arena_alloc(a, (size_t)s->nkernel * sizeof *ks) : NULL;
  if (!ks) return NULL;
  *c = *s;
  memcpy(ks, s->kernels, (size_t)s->nkernel * sizeof *ks);
  c->kernels = ks;
  for (int32_t i = 0; i < npatch; i++) {
    SchedKernel *k = &ks[patch[i].kernel];
    if (k->params == s->kernels[patch[i].kernel].params) { /* first patch of this kernel: its own words */
      uint64_t *w = arena_alloc(a, (size_t)k->ir->nparam * sizeof *w);
      if (!w) return NULL;
      memcpy(w, k->params, (size_t)k->ir->nparam * sizeof *w);
      k->params = w;
    }
    k->params[patch[i].param] = patch[i].word;
  }
  return c;
}

RtPlan *rt_plan_share(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs, LoomDeviceKind dk,
                      int32_t di, bool fresh, RtPlan *origin, const int32_t *map, int32_t nmap,
                      const RtParamPatch *patch, int32_t npatch) {
  Arena a;
  arena_init_small(&a, g->ctx, 960); /* a few hundred bytes a plan (one per evaluation), kept under 1 KB */
  RtPlan *p = arena_alloc(&a, sizeof *p);
  int32_t *own_map = p ? arena_alloc(&a, (size_t)(nmap > 0 ? nmap : 1) * sizeof *own_map) : NULL;
  int32_t *used = own_map ? arena_alloc(&a, (size_t)(nmap > 0 ? nmap : 1) * sizeof *used) : NULL;
  if (!used) {
    arena_free_all(&a);
    return NULL;
  }
  int32_t nused = 0; /* g's inputs the schedule reads: their layouts match this plan again */
  for (int32_t i = 0; i < nmap; i++)
    if (map[i] >= 0) used[nused++] = map[i];
  p->arena = a;
  if (!record_match(g, p, n, nodes, outs, used, nused)) {
    arena_free_all(&p->arena);
    return NULL;
  }
  if (nmap > 0) memcpy(own_map, map, (size_t)nmap * sizeof *own_map);
  __atomic_add_fetch(&origin->refs, 1, __ATOMIC_RELAXED);
  p->refs = 1;
  p->origin = origin;
  p->input_map = own_map;
  p->ninput_map = nmap;
  p->schedule = npatch > 0 ? patched_schedule(&p->arena, origin->schedule, patch, npatch) : origin->schedule;
  if (!p->schedule) {
    rt_plan_free(g->ctx, p); /* releases origin too */
    return NULL;
  }
  p->kernels = origin->kernels;
  p->dev = origin->dev;
  p->device = dk;
  p->device_index = di;
  p->fresh_outs = fresh;
  keep_plan(g, p);
  return p;
}
