/* SPDX-License-Identifier: Apache-2.0 */
/* user_kernel.c: the C API of user kernels (CuPy's ElementwiseKernel and ReductionKernel).
 *
 * Approach: a LoomUserKernel keeps its parsed parameter lists and source texts. A call binds the type
 * placeholders from the arguments' dtypes (given outputs first, then inputs, as CuPy), finds or makes
 * the instantiation for that binding (the snippet module, compiled once by frontend/snippet_*.c and
 * kept on the kernel under a mutex), then builds ONE kernel IR directly (no graph: a user kernel is
 * already one kernel) with a KI_USER call of the snippet, and a one-kernel Schedule, and runs it
 * through the device's ordinary schedule runner (device.h's run_schedule), so compiled code comes from
 * the device's kernel table (its key is the kernel text, which includes the snippet's text) and
 * launches use the same host / GPU strategies as every kernel:
 * parallel ranges, split reductions with partial/finish, inner / outer reductions.
 * Buffers: one per param, in param order (ins then outs). Every binding is SB_OUTPUT with the array's
 * own (already offset) data pointer, so the schedule needs no graph. Raw arrays are bound whole: the
 * element count goes in the stride of dim 0 (ir.h's KI_USER), layout KL_ANY.
 * Dims (reduce_dims): size-1 dims are dropped and neighbours that are contiguous for every buffer
 * are merged (separately among kept and reduced dims), as passes/collapse.c does for fused kernels.
 *
 * Instantiation cache (the per-call host cost): the kernel IR is a function of the binding, the
 * arrays' dtypes, the collapsed rank (kept / reduced dims), every buffer's layout class per dim
 * (KL_ZERO / KL_ONE / KL_ANY), the index width and the device, never of sizes, strides or pointers
 * (those are the SchedKernel's). That tuple is the key of a small LRU table on the kernel object
 * (UK_MAX_ENTRIES); its value is the built, verified KernelIr and the kernel prepared (pinned) on the
 * device (device.h's prepare). A call computes the shapes and strides as before, looks the key up
 * and, on a hit, only launches (the device's run_schedule with the pinned kernel), so no IR is built,
 * printed or hashed. Entries in use by a running call are counted (users) and freed by the last user when
 * evicted meanwhile. Dumps (loom_user_kernel_dump, context dump flags) take the uncached path.
 * loop_prep / after_loop (loom_elementwise_kernel_create_ex) live in the snippet module (SF_PREP,
 * SF_AFTER): the kernel IR is built as for any elementwise call (one kernel, never fused, the MAP
 * strategy) and codegen brackets each worker's points with them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/user_kernel.h"

/* One cached instantiation: key -> verified kernel IR + compiled kernel (see the top comment). */
struct UkEntry {
  struct UkEntry *next; /* most recently used first */
  int32_t users;        /* calls running it now (under the kernel's lock) */
  bool evicted;         /* unlinked while in use: the last user frees it */
  Arena arena;          /* owns ir */
  KernelIr *ir;
  const RtKernel *kernel; /* prepared (pinned) on the device of the key */
  LoomDeviceKind dk;
  int32_t di;
  int32_t keylen;
  uint8_t key[UK_KEY_MAX];
};

struct UkInst {
  struct UkInst *next;
  uint8_t dtypes[UK_MAX_PH];
  Arena arena;
  SnModule *mod;
};

static char *dup_or(Arena *a, const char *s, const char *dflt) {
  return arena_strdup(a, s ? s : dflt);
}

static int ph_index(const LoomUserKernel *k, const char *name) {
  for (int i = 0; i < k->nph; i++)
    if (!strcmp(k->ph[i], name)) return i;
  return -1;
}

static LoomStatus add_placeholders(LoomUserKernel *k, const FeParamList *pl, Diag *d) {
  for (int32_t i = 0; i < pl->n; i++) {
    if (!pl->params[i].placeholder || ph_index(k, pl->params[i].type_name) >= 0) continue;
    if (k->nph >= UK_MAX_PH)
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: more than %d type placeholders", k->name, UK_MAX_PH);
    k->ph[k->nph++] = pl->params[i].type_name;
  }
  return LOOM_OK;
}

/* Compiles the snippet for one binding into inst (errors come from the front end). */
static LoomStatus compile_inst(LoomUserKernel *k, UkInst *inst, Diag *d) {
  LoomDType dts[UK_MAX_PH];
  for (int i = 0; i < k->nph; i++) dts[i] = (LoomDType)inst->dtypes[i];
  FeBinding bind = {k->nph, k->ph, dts};
  if (!k->reduction) {
    FeElementwiseSpec s = {k->name, k->in, k->out, k->operation, k->preamble, bind};
    return fe_snippet_elementwise_ex(&inst->arena, &s, k->loop_prep, k->after_loop, &inst->mod, d);
  }
  FeReductionSpec s = {k->name, k->in, k->out, k->map, k->reduce, k->post, k->identity, k->reduce_type,
                       k->preamble, bind};
  return fe_snippet_reduction(&inst->arena, &s, &inst->mod, d);
}

/* The instantiation for dtypes (made on first use). */
static LoomStatus get_inst(LoomUserKernel *k, const uint8_t *dtypes, const SnModule **out, Diag *d) {
  pthread_mutex_lock(&k->lock);
  for (UkInst *u = k->insts; u; u = u->next)
    if (!memcmp(u->dtypes, dtypes, (size_t)k->nph)) {
      *out = u->mod;
      pthread_mutex_unlock(&k->lock);
      return LOOM_OK;
    }
  LoomStatus st = LOOM_OK;
  UkInst *u = ctx_calloc(k->ctx, 1, sizeof *u);
  if (!u) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory instantiating kernel %s", k->name);
  else {
    memcpy(u->dtypes, dtypes, (size_t)k->nph);
    arena_init(&u->arena, k->ctx);
    st = compile_inst(k, u, d);
    if (st) {
      arena_free_all(&u->arena);
      ctx_free(k->ctx, u);
    } else {
      u->next = k->insts;
      k->insts = u;
      *out = u->mod;
    }
  }
  pthread_mutex_unlock(&k->lock);
  return st;
}

static LoomStatus create(LoomContext *ctx, bool red, const char *in_params, const char *out_params,
                         const char *operation, const char *map, const char *reduce, const char *post,
                         const char *identity, const char *name, const char *reduce_type, const char *preamble,
                         const char *loop_prep, const char *after_loop, int reduce_dims, LoomUserKernel **out) {
  if (!ctx) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {0};
  if (!out || !in_params || !out_params || (!red && !operation) || (red && (!map || !reduce))) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "user kernel: in_params, out_params and the code must not be NULL");
    return ctx_report(ctx, &d);
  }
  *out = NULL;
  LoomUserKernel *k = ctx_calloc(ctx, 1, sizeof *k);
  if (!k) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory creating a user kernel");
    return ctx_report(ctx, &d);
  }
  k->ctx = ctx;
  k->reduction = red;
  k->reduce_dims = reduce_dims != 0;
  arena_init(&k->arena, ctx);
  pthread_mutex_init(&k->lock, NULL);
  Arena *a = &k->arena;
  k->name = dup_or(a, name, red ? "reduce_kernel" : "kernel");
  k->operation = dup_or(a, operation, "");
  k->preamble = dup_or(a, preamble, "");
  k->map = dup_or(a, map, "");
  k->reduce = dup_or(a, reduce, "");
  k->post = dup_or(a, post, "");
  k->loop_prep = dup_or(a, loop_prep, "");
  k->after_loop = dup_or(a, after_loop, "");
  k->identity = identity ? arena_strdup(a, identity) : NULL;
  k->reduce_type = reduce_type ? arena_strdup(a, reduce_type) : NULL;
  LoomStatus st = LOOM_OK;
  if (!k->name || !k->operation || !k->preamble || !k->map || !k->reduce || !k->post || !k->loop_prep || !k->after_loop ||
      (identity && !k->identity) || (reduce_type && !k->reduce_type))
    st = diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory creating a user kernel");
  if (!st) st = fe_parse_params(a, k->name, "in_params", in_params, &k->in, &d);
  if (!st) st = fe_parse_params(a, k->name, "out_params", out_params, &k->out, &d);
  if (!st && (k->in.n > UK_MAX_PARAMS || k->out.n > UK_MAX_PARAMS))
    st = diag_error(&d, LOOM_ERR_UNSUPPORTED, "%s: more than %d in or out params", k->name, UK_MAX_PARAMS);
  if (!st && red && (!identity || !identity[0]))
    st = diag_error(&d, LOOM_ERR_UNSUPPORTED,
                    "%s: loom's ReductionKernel needs an identity (the value of an empty reduction, e.g. '0')",
                    k->name);
  if (!st && red && k->out.n < 1) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s: a ReductionKernel needs an out param", k->name);
  if (!st && red)
    for (int32_t i = 0; i < k->in.n && !st; i++)
      if (k->in.params[i].raw)
        st = diag_error(&d, LOOM_ERR_UNSUPPORTED, "%s: raw in params of a ReductionKernel are not supported yet ('%s')",
                        k->name, k->in.params[i].name);
  if (!st && red)
    for (int32_t i = 0; i < k->out.n && !st; i++)
      if (k->out.params[i].raw)
        st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s: out param '%s' of a ReductionKernel cannot be raw", k->name,
                        k->out.params[i].name);
  if (!st) st = add_placeholders(k, &k->out, &d);
  if (!st) st = add_placeholders(k, &k->in, &d);
  if (!st && k->nph == 0) { /* no placeholder: compile now, so that errors surface at creation */
    const SnModule *m;
    uint8_t none[1] = {0};
    st = get_inst(k, none, &m, &d);
  }
  if (st) {
    loom_user_kernel_destroy(k);
    return ctx_report(ctx, &d);
  }
  *out = k;
  return LOOM_OK;
}

LOOM_API LoomStatus loom_elementwise_kernel_create_ex(LoomContext *ctx, const char *in_params, const char *out_params,
                                                      const char *operation, const char *name, const char *preamble,
                                                      const char *loop_prep, const char *after_loop, int reduce_dims,
                                                      LoomUserKernel **out) {
  return create(ctx, false, in_params, out_params, operation, NULL, NULL, NULL, NULL, name, NULL, preamble, loop_prep,
                after_loop, reduce_dims, out);
}

LOOM_API LoomStatus loom_elementwise_kernel_create(LoomContext *ctx, const char *in_params, const char *out_params,
                                                   const char *operation, const char *name, const char *preamble,
                                                   int reduce_dims, LoomUserKernel **out) {
  return loom_elementwise_kernel_create_ex(ctx, in_params, out_params, operation, name, preamble, NULL, NULL,
                                           reduce_dims, out);
}

LOOM_API LoomStatus loom_reduction_kernel_create(LoomContext *ctx, const char *in_params, const char *out_params,
                                                 const char *map_expr, const char *reduce_expr,
                                                 const char *post_map_expr, const char *identity, const char *name,
                                                 const char *reduce_type, const char *preamble, int reduce_dims,
                                                 LoomUserKernel **out) {
  return create(ctx, true, in_params, out_params, NULL, map_expr, reduce_expr, post_map_expr, identity, name,
                reduce_type, preamble, NULL, NULL, reduce_dims, out);
}

static void entry_free(LoomContext *ctx, UkEntry *e) {
  if (e->kernel && ctx->rt) rt_device(e->dk)->unpin(ctx, e->di, e->kernel);
  arena_free_all(&e->arena);
  ctx_free(ctx, e);
}

LOOM_API void loom_user_kernel_destroy(LoomUserKernel *k) {
  if (!k) return;
  for (UkEntry *e = k->entries, *n; e; e = n) {
    n = e->next;
    entry_free(k->ctx, e);
  }
  for (UkInst *u = k->insts, *n; u; u = n) {
    n = u->next;
    arena_free_all(&u->arena);
    ctx_free(k->ctx, u);
  }
  pthread_mutex_destroy(&k->lock);
  arena_free_all(&k->arena);
  ctx_free(k->ctx, k);
}

LOOM_API LoomStatus loom_user_kernel_info(const LoomUserKernel *k, int32_t *nin, int32_t *nout, int *is_reduction) {
  if (!k) return LOOM_ERR_INVALID_ARGUMENT;
  if (nin) *nin = k->in.n;
  if (nout) *nout = k->out.n;
  if (is_reduction) *is_reduction = k->reduction;
  return LOOM_OK;
}

/* ---- one call ------------------------------------------------------------------------------------------ */

/* Whether the argument of buffer b takes part in binding and shapes: every input, and the outputs
 * given (data set; loom_user_kernel_dump never reads data). */
static bool given(const UkCall *c, int32_t b) { return b < c->k->in.n || c->arr[b]->data; }

static LoomStatus bind_one(UkCall *c, int32_t b, bool *set, Diag *d) {
  const FeParam *p = c->par[b];
  if (!p->placeholder || !given(c, b)) return LOOM_OK;
  int h = ph_index(c->k, p->type_name);
  LoomDType t = c->arr[b]->dtype;
  if (h < 0) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: unknown placeholder %s", p->type_name);
  if (set[h] && c->bound[h] != t)
    return diag_error(d, LOOM_ERR_DTYPE, "%s: type is mismatched: %s is %s from an earlier argument but '%s' is %s",
                      c->k->name, p->type_name, loom_dtype_name((LoomDType)c->bound[h]), p->name, loom_dtype_name(t));
  c->bound[h] = (uint8_t)t;
  set[h] = true;
  return LOOM_OK;
}

/* Checks the arrays, binds the placeholders (outputs first) and gets the instantiation. */
LoomStatus uk_prepare(UkCall *c, const LoomArray *in, LoomArray *out, const SnModule **mod, Diag *d) {
  LoomUserKernel *k = c->k;
  c->n = k->in.n + k->out.n;
  for (int32_t i = 0; i < k->in.n; i++) {
    c->arr[i] = (LoomArray *)&in[i];
    c->par[i] = &k->in.params[i];
  }
  for (int32_t i = 0; i < k->out.n; i++) {
    c->arr[k->in.n + i] = &out[i];
    c->par[k->in.n + i] = &k->out.params[i];
  }
  for (int32_t b = 0; b < c->n; b++) {
    const LoomArray *a = c->arr[b];
    bool is_out = b >= k->in.n;
    if (!is_out && !a->data && !c->dump && ir_numel(a->ndim, a->shape) > 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: in param '%s' has no data", k->name, c->par[b]->name);
    if (a->data || !is_out) {
      if (a->dtype < 0 || a->dtype >= LOOM_DTYPE_COUNT || a->ndim < 0 || a->ndim > LOOM_MAX_RANK)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: argument '%s' has a bad dtype or rank", k->name,
                          c->par[b]->name);
      for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] < 0)
          return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: argument '%s' has a negative size", k->name,
                            c->par[b]->name);
    }
  }
  bool set[UK_MAX_PH] = {false};
  memset(c->bound, 0, sizeof c->bound);
  for (int32_t b = k->in.n; b < c->n; b++) {
    LoomStatus st = bind_one(c, b, set, d);
    if (st) return st;
  }
  for (int32_t b = 0; b < k->in.n; b++) {
    LoomStatus st = bind_one(c, b, set, d);
    if (st) return st;
  }
  for (int32_t b = 0; b < c->n; b++) {
    const FeParam *p = c->par[b];
    if (p->placeholder) {
      int h = ph_index(k, p->type_name);
      if (!set[h])
        return diag_error(d, LOOM_ERR_DTYPE,
                          "%s: cannot determine the type of %s (param '%s'): pass an argument or an output of that type",
                          k->name, p->type_name, p->name);
      c->pdt[b] = (LoomDType)c->bound[h];
    } else {
      c->pdt[b] = p->dtype;
    }
    if (p->raw && given(c, b) && c->arr[b]->dtype != c->pdt[b])
      return diag_error(d, LOOM_ERR_DTYPE, "%s: raw param '%s' is %s but its array is %s", k->name, p->name,
                        loom_dtype_name(c->pdt[b]), loom_dtype_name(c->arr[b]->dtype));
  }
  return get_inst(k, c->bound, mod, d);
}

/* Whether every array given is on one device; *dev gets it. */
LoomStatus uk_common_device(UkCall *c, LoomDeviceKind *kind, int32_t *index, Diag *d) {
  bool any = false;
  if (c->dump) { /* descriptors only: no device is used */
    *kind = LOOM_DEVICE_HOST, *index = 0;
    return LOOM_OK;
  }
  for (int32_t b = 0; b < c->n; b++) {
    const LoomArray *a = c->arr[b];
    if (!a->data) continue;
    if (!any) {
      *kind = a->device;
      *index = a->device_index;
      any = true;
    } else if (a->device != *kind || (a->device != LOOM_DEVICE_HOST && a->device_index != *index)) {
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: the arguments of one call must be on one device ('%s' is not)",
                        c->k->name, c->par[b]->name);
    }
  }
  if (!any) *kind = LOOM_DEVICE_HOST, *index = 0;
  return LOOM_OK;
}

/* Allocates the missing outputs (shape given) on the call's device. */
static LoomStatus alloc_out(UkCall *c, int32_t b, int ndim, const int64_t *shape, LoomDeviceKind dk, int32_t di,
                            Diag *d) {
  LoomArray *a = c->arr[b];
  memset(a, 0, sizeof *a);
  a->dtype = c->pdt[b];
  a->ndim = ndim;
  memcpy(a->shape, shape, sizeof(int64_t) * (size_t)ndim);
  a->device = dk;
  a->device_index = di;
  if (c->dump) { /* a descriptor of what would be allocated: C-contiguous, no data */
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) a->strides[i] = s, s *= shape[i];
    return LOOM_OK;
  }
  LoomStatus st = loom_array_alloc(c->k->ctx, a);
  if (st) return diag_error(d, st, "%s", loom_last_error(c->k->ctx));
  c->allocated[b] = true;
  return LOOM_OK;
}

static void free_allocated(UkCall *c) {
  for (int32_t b = 0; b < c->n; b++)
    if (c->allocated[b]) {
      loom_array_free(c->k->ctx, c->arr[b]);
      memset(c->arr[b], 0, sizeof *c->arr[b]);
    }
}

/* The non-raw out params of a call: allocated with the result's shape when not given, else checked
 * against it. */
LoomStatus uk_prepare_outs(UkCall *c, int ndim, const int64_t *shape, LoomDeviceKind dk, int32_t di,
                               Diag *d) {
  for (int32_t b = c->k->in.n; b < c->n; b++) {
    if (c->par[b]->raw && c->arr[b]->data) continue; /* a raw out given: any shape */
    if (!c->arr[b]->data) {
      LoomStatus st = alloc_out(c, b, ndim, shape, dk, di, d);
      if (st) return st;
    } else if (c->arr[b]->ndim != ndim || memcmp(c->arr[b]->shape, shape, sizeof(int64_t) * (size_t)ndim)) {
      char s1[256], s2[256];
      ir_format_shape(s1, sizeof s1, c->arr[b]->ndim, c->arr[b]->shape);
      ir_format_shape(s2, sizeof s2, ndim, shape);
      return diag_error(d, LOOM_ERR_SHAPE,
                        "%s: Out shape is mismatched: out param '%s' has shape %s but the result has shape %s",
                        c->k->name, c->par[b]->name, s1, s2);
    }
  }
  return LOOM_OK;
}

/* Writes the text loom_user_kernel_dump asked for of kernel k (verified) into c->dump. LLVM IR comes
 * from the context's host kernel cache (the entry a call would use; compiled again when it lacks its
 * IR text); PTX (AMDGPU assembly) from the PTX (AMDGPU) device's dump_code (sm_90, gfx942; no GPU needed; it is
 * not cached). */
static LoomStatus dump_kernel(UkCall *c, const KernelIr *k, Diag *d) {
  LoomContext *ctx = c->k->ctx;
  if (c->dkind == LOOM_DUMP_KERNELS) {
    ir_print_kernel(k, c->dump);
    return LOOM_OK;
  }
  if (c->dkind == LOOM_DUMP_LLVM) {
    if (!ctx->rt || !ctx->rt->cache) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_user_kernel_dump: the context has no runtime");
    const CgCompiled *cc = NULL;
    LoomStatus st = rt_cache_acquire(ctx->rt->cache, k, true, &cc, NULL, d);
    if (st) return st;
    sb_printf(c->dump, "; kernel %s\n%s", k->name, cc->llvm_ir ? cc->llvm_ir : "");
    rt_cache_release(ctx->rt->cache, cc);
    return LOOM_OK;
  }
  bool ptx = c->dkind == LOOM_DUMP_PTX;
  const RtDevice *pd = rt_device_for_binary(ptx ? CG_BINARY_PTX : CG_BINARY_AMDGPU);
  if (!pd || !pd->dump_code)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_user_kernel_dump: this build has no %s target", ptx ? "PTX" : "AMDGPU");
  RtDumpRequest rq = {.code = true, .times = (ctx->dump_flags & IR_DUMP_TIME) != 0};
  return pd->dump_code(ctx, &rq, 1, (const KernelIr *const[]){k}, c->dump, d);
}

static LoomStatus run(UkCall *c, KernelIr *k, SchedKernel *sk, LoomDeviceKind dk, int32_t di, Diag *d) {
  void *data[2 * UK_MAX_PARAMS];
  for (int32_t b = 0; b < c->n; b++) data[b] = c->arr[b]->data;
  Schedule s;
  memset(&s, 0, sizeof s);
  s.nkernel = 1;
  s.kernels = sk;
  sk->ir = k;
  IrGraph g;
  memset(&g, 0, sizeof g); /* no inputs: every binding is SB_OUTPUT */
  g.ctx = c->k->ctx;
  if (c->k->ctx->dump_flags & IR_DUMP_KERNELS) {
    StrBuf sb;
    sb_init(&sb, c->k->ctx);
    ir_print_kernel(k, &sb);
    char *t = sb_take(&sb);
    if (t) rt_dump_printf(c->k->ctx, "; ---- user kernel %s ----\n%s", k->name, t);
    ctx_free(c->k->ctx, t);
  }
  LoomStatus st = ir_verify_kernel(k, d);
  if (st) return st;
  if (c->dump) return dump_kernel(c, k, d);
  const RtDevice *dev = rt_device(dk);
  if (!dev) return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: device kind %d is not available", c->k->name, (int)dk);
  RtRun r = {.graph = &g, .schedule = &s, .out_data = data, .nouts = c->n};
  return dev->run_schedule(c->k->ctx, di, &r, d);
}

/* ---- the instantiation cache ------------------------------------------------------------------------- */

/* The key of a call: device, binding, then rank and per buffer its dtype and layout classes. */
static int32_t make_key(const UkCall *c, const UkSig *sig, LoomDeviceKind dk, int32_t di, uint8_t *key) {
  int32_t n = 0;
  int32_t head[5] = {(int32_t)dk, di, sig->ndim, sig->nkeep, sig->index_bits};
  memcpy(key, head, sizeof head);
  n += (int32_t)sizeof head;
  memcpy(key + n, c->bound, (size_t)c->k->nph);
  n += c->k->nph;
  for (int32_t b = 0; b < c->n; b++) {
    key[n++] = sig->dtype[b];
    memcpy(key + n, sig->layout[b], (size_t)sig->ndim);
    n += sig->ndim;
  }
  return n;
}

/* The entry for key, marked in use and moved to the front; NULL if none. Caller holds k->lock. */
static UkEntry *entry_find_locked(LoomUserKernel *k, const uint8_t *key, int32_t keylen) {
  for (UkEntry **link = &k->entries, *e; (e = *link); link = &e->next) {
    if (e->keylen != keylen || memcmp(e->key, key, (size_t)keylen)) continue;
    *link = e->next;
    e->next = k->entries;
    k->entries = e;
    e->users++;
    return e;
  }
  return NULL;
}

/* Ends a call's use of e (freed here when it was evicted meanwhile). */
static void entry_put(LoomUserKernel *k, UkEntry *e) {
  pthread_mutex_lock(&k->lock);
  bool gone = --e->users == 0 && e->evicted;
  pthread_mutex_unlock(&k->lock);
  if (gone) entry_free(k->ctx, e);
}

/* Builds, verifies and prepares on the device (compiled, loaded) the entry for key, and adds it in use (evicting
 * the least recently used beyond UK_MAX_ENTRIES). Errors are the ones the uncached path gives. */
static LoomStatus entry_make(UkCall *c, const SnModule *m, const UkSig *sig, LoomDeviceKind dk, int32_t di,
                             UkBuildFn build, const uint8_t *key, int32_t keylen, UkEntry **out, Diag *d) {
  LoomUserKernel *uk = c->k;
  LoomContext *ctx = uk->ctx;
  UkEntry *e = ctx_calloc(ctx, 1, sizeof *e);
  if (!e) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", uk->name);
  arena_init(&e->arena, ctx);
  e->keylen = keylen;
  memcpy(e->key, key, (size_t)keylen);
  LoomStatus st = build(c, m, sig, &e->arena, &e->ir, d);
  if (!st) st = ir_verify_kernel(e->ir, d);
  if (!st) st = rt_device(dk)->prepare(ctx, di, e->ir, -1, &e->kernel, d);
  e->dk = dk;
  e->di = di;
  if (st) {
    entry_free(ctx, e);
    return st;
  }
  pthread_mutex_lock(&uk->lock);
  UkEntry *twin = entry_find_locked(uk, key, keylen); /* made by another thread meanwhile */
  UkEntry *drop = NULL;
  if (twin) {
    pthread_mutex_unlock(&uk->lock);
    entry_free(ctx, e);
    *out = twin;
    return LOOM_OK;
  }
  e->users = 1;
  e->next = uk->entries;
  uk->entries = e;
  if (++uk->nentries > UK_MAX_ENTRIES) { /* evict the tail */
    UkEntry **link = &uk->entries;
    while ((*link)->next) link = &(*link)->next;
    drop = *link;
    *link = NULL;
    uk->nentries--;
    drop->evicted = true;
    if (drop->users > 0) drop = NULL; /* its last user frees it */
  }
  pthread_mutex_unlock(&uk->lock);
  if (drop) entry_free(ctx, drop);
  *out = e;
  return LOOM_OK;
}

/* Runs the call's kernel: through the instantiation cache when it can be used, else built afresh. */
LoomStatus uk_run_sig(UkCall *c, const SnModule *m, const UkSig *sig, SchedKernel *sk, LoomDeviceKind dk,
                          int32_t di, UkBuildFn build, Arena *a, Diag *d) {
  LoomUserKernel *uk = c->k;
  LoomContext *ctx = uk->ctx;
  LoomStatus st;
  bool cached = !c->dump && ctx->dump_flags == 0 && ctx->rt && ctx->rt->cache && ctx->rt->pool && rt_device(dk);
  if (!cached) {
    KernelIr *k = NULL;
    if ((st = build(c, m, sig, a, &k, d))) return st;
    return run(c, k, sk, dk, di, d);
  }
  uint8_t key[UK_KEY_MAX];
  int32_t keylen = make_key(c, sig, dk, di, key);
  pthread_mutex_lock(&uk->lock);
  UkEntry *e = entry_find_locked(uk, key, keylen);
  pthread_mutex_unlock(&uk->lock);
  if (e) { /* a reused compiled kernel: counted as a cache hit, as loom_eval's plans do */
    pthread_mutex_lock(&ctx->rt->stats_lock);
    ctx->rt->stats.cache_hits++;
    pthread_mutex_unlock(&ctx->rt->stats_lock);
  } else if ((st = entry_make(c, m, sig, dk, di, build, key, keylen, &e, d))) {
    return st;
  }
  void *data[2 * UK_MAX_PARAMS];
  for (int32_t b = 0; b < c->n; b++) data[b] = c->arr[b]->data;
  sk->ir = e->ir;
  Schedule s;
  memset(&s, 0, sizeof s);
  s.nkernel = 1;
  s.kernels = sk;
  IrGraph g; /* every binding is SB_OUTPUT: no graph inputs */
  memset(&g, 0, sizeof g);
  g.ctx = ctx;
  const RtKernel *pinned[1] = {e->kernel};
  RtRun r = {.graph = &g, .schedule = &s, .pinned = pinned, .out_data = data, .nouts = c->n};
  st = rt_device(dk)->run_schedule(ctx, di, &r, d);
  entry_put(uk, e);
  return st;
}

LOOM_API LoomStatus loom_elementwise_kernel_call(LoomUserKernel *uk, int32_t nin, const LoomArray *in, int32_t nout,
                                                 LoomArray *out, int64_t size) {
  if (!uk) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {0};
  if (uk->reduction)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s is a ReductionKernel: call loom_reduction_kernel_call", uk->name);
  else if (nin != uk->in.n || nout != uk->out.n || (nin && !in) || (nout && !out))
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s takes %d inputs and %d outputs (got %d and %d)", uk->name,
               (int)uk->in.n, (int)uk->out.n, (int)nin, (int)nout);
  if (d.status) return ctx_report(uk->ctx, &d);
  Arena a;
  arena_init(&a, uk->ctx);
  UkCall *c = arena_alloc(&a, sizeof *c);
  if (!c) diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory calling kernel %s", uk->name);
  else {
    c->k = uk;
    if (uk_ew_call(uk, nin, in, nout, out, size, &a, c, &d)) free_allocated(c);
  }
  arena_free_all(&a);
  return d.status ? ctx_report(uk->ctx, &d) : LOOM_OK;
}

LOOM_API LoomStatus loom_reduction_kernel_call(LoomUserKernel *uk, int32_t nin, const LoomArray *in, int32_t nout,
                                               LoomArray *out, int32_t naxes, const int32_t *axes, int keepdims) {
  if (!uk) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {0};
  if (!uk->reduction)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s is an ElementwiseKernel: call loom_elementwise_kernel_call", uk->name);
  else if (nin != uk->in.n || nout != uk->out.n || (nin && !in) || (nout && !out))
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s takes %d inputs and %d outputs (got %d and %d)", uk->name,
               (int)uk->in.n, (int)uk->out.n, (int)nin, (int)nout);
  else if (nin == 0)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s: a ReductionKernel needs at least one input", uk->name);
  if (d.status) return ctx_report(uk->ctx, &d);
  Arena a;
  arena_init(&a, uk->ctx);
  UkCall *c = arena_alloc(&a, sizeof *c);
  if (!c) diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory calling kernel %s", uk->name);
  else {
    c->k = uk;
    if (uk_red_call(uk, in, out, naxes, axes, keepdims, &a, c, &d)) free_allocated(c);
  }
  arena_free_all(&a);
  return d.status ? ctx_report(uk->ctx, &d) : LOOM_OK;
}

LOOM_API LoomStatus loom_user_kernel_dump(LoomUserKernel *uk, LoomDumpKind kind, int32_t nin, const LoomArray *in,
                                          int32_t nout, const LoomArray *out, int64_t size, int32_t naxes,
                                          const int32_t *axes, int keepdims, char **text) {
  if (!uk) {
    if (text) *text = NULL;
    return LOOM_ERR_INVALID_ARGUMENT;
  }
  Diag d = {0};
  if (!text)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_user_kernel_dump: text is NULL");
  else if (kind != LOOM_DUMP_KERNELS && kind != LOOM_DUMP_LLVM && kind != LOOM_DUMP_PTX && kind != LOOM_DUMP_AMDGPU)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_user_kernel_dump: unknown kind %d; use LOOM_DUMP_KERNELS, LOOM_DUMP_LLVM, LOOM_DUMP_PTX or "
               "LOOM_DUMP_AMDGPU", (int)kind);
  else if (nin != uk->in.n || nout != uk->out.n || (nin && !in) || (nout && !out))
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s takes %d inputs and %d outputs (got %d and %d)", uk->name,
               (int)uk->in.n, (int)uk->out.n, (int)nin, (int)nout);
  else if (uk->reduction && nin == 0)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "%s: a ReductionKernel needs at least one input", uk->name);
  if (text) *text = NULL;
  if (d.status) return ctx_report(uk->ctx, &d);
  Arena a;
  arena_init(&a, uk->ctx);
  UkCall *c = arena_alloc(&a, sizeof *c);
  LoomArray *ins = arena_alloc(&a, sizeof(LoomArray) * (size_t)(nin + 1));
  LoomArray *outs = arena_alloc(&a, sizeof(LoomArray) * (size_t)(nout + 1));
  StrBuf sb;
  sb_init(&sb, uk->ctx);
  if (!c || !ins || !outs) {
    diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory dumping kernel %s", uk->name);
  } else {
    if (nin) memcpy(ins, in, sizeof(LoomArray) * (size_t)nin); /* copies: outputs are filled in */
    if (nout) memcpy(outs, out, sizeof(LoomArray) * (size_t)nout);
    c->k = uk;
    c->dump = &sb;
    c->dkind = kind;
    if (uk->reduction) uk_red_call(uk, ins, outs, naxes, axes, keepdims, &a, c, &d);
    else uk_ew_call(uk, nin, ins, nout, outs, size, &a, c, &d);
  }
  arena_free_all(&a);
  if (!d.status) {
    *text = sb_take(&sb);
    if (!*text) diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_user_kernel_dump text");
  } else {
    sb_free(&sb);
  }
  return d.status ? ctx_report(uk->ctx, &d) : LOOM_OK;
}
