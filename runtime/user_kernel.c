/* SPDX-License-Identifier: Apache-2.0 */
/* user_kernel.c: the C API of user kernels (CuPy's ElementwiseKernel and ReductionKernel).
 *
 * Approach: a LoomUserKernel keeps its parsed parameter lists and source texts. A call binds the type
 * placeholders from the arguments' dtypes (given outputs first, then inputs, as CuPy), finds or makes
 * the instantiation for that binding (the snippet module, compiled once by frontend/snippet_*.c and
 * kept on the kernel under a mutex), then builds ONE kernel IR directly (no graph: a user kernel is
 * already one kernel) with a KI_USER call of the snippet, and a one-kernel Schedule, and runs it
 * through the runtime's ordinary schedule runners (rt_run_schedule on the host, rt_gpu_run_schedule
 * on CUDA), so compiled code comes from the context's kernel cache (its key is the kernel text, which
 * includes the snippet's text) and launches use the same host / GPU strategies as every kernel:
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
 * (UK_MAX_ENTRIES); its value is the built, verified KernelIr and the compiled kernel, pinned in the
 * context's cache (host) or loaded (CUDA). A call computes the shapes and strides as before, looks the
 * key up and, on a hit, only launches (host: the same dispatch as runtime/eval.c's launch_kernel, with
 * the pinned kernel; CUDA: rt_gpu_run_schedule with the pinned function), so no IR is built, printed
 * or hashed. Entries in use by a running call are counted (users) and freed by the last user when
 * evicted meanwhile. Dumps (loom_user_kernel_dump, context dump flags) take the uncached path.
 * loop_prep / after_loop (loom_elementwise_kernel_create_ex) live in the snippet module (SF_PREP,
 * SF_AFTER): the kernel IR is built as for any elementwise call (one kernel, never fused, the MAP
 * strategy) and codegen brackets each worker's points with them.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "frontend/snippet.h"
#include "ir/snippet.h"
#include "runtime/runtime.h"

#define UK_MAX_PARAMS 64
#define UK_MAX_PH 26

#define UK_MAX_ENTRIES 16
#define UK_KEY_MAX (16 + UK_MAX_PH + 2 * UK_MAX_PARAMS * (1 + LOOM_MAX_RANK))

/* One cached instantiation: key -> verified kernel IR + compiled kernel (see the top comment). */
typedef struct UkEntry {
  struct UkEntry *next; /* most recently used first */
  int32_t users;        /* calls running it now (under the kernel's lock) */
  bool evicted;         /* unlinked while in use: the last user frees it */
  Arena arena;          /* owns ir */
  KernelIr *ir;
  const CgCompiled *host; /* pinned in the context's kernel cache (host entries) */
  const RtGpuFn *gpu;     /* CUDA entries; lives as long as the context */
  int32_t keylen;
  uint8_t key[UK_KEY_MAX];
} UkEntry;

typedef struct UkInst {
  struct UkInst *next;
  uint8_t dtypes[UK_MAX_PH];
  Arena arena;
  SnModule *mod;
} UkInst;

struct LoomUserKernel {
  LoomContext *ctx;
  bool reduction;
  bool reduce_dims;
  Arena arena; /* params and texts */
  char *name, *operation, *preamble, *map, *reduce, *post, *identity, *reduce_type;
  char *loop_prep, *after_loop; /* elementwise: per-worker regions ("" for none) */
  FeParamList in, out;
  int32_t nph;
  const char *ph[UK_MAX_PH]; /* placeholder names */
  pthread_mutex_t lock; /* guards insts and entries */
  UkInst *insts;
  UkEntry *entries;
  int32_t nentries;
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
  if (e->host && ctx->rt && ctx->rt->cache) rt_cache_release(ctx->rt->cache, e->host);
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

/* The arrays of a call, in buffer order (ins then outs), and what the binding made of them. */
typedef struct UkCall {
  LoomUserKernel *k;
  int32_t n;                       /* in.n + out.n */
  LoomArray *arr[2 * UK_MAX_PARAMS];
  const FeParam *par[2 * UK_MAX_PARAMS];
  LoomDType pdt[2 * UK_MAX_PARAMS]; /* param dtypes after binding */
  uint8_t bound[UK_MAX_PH];
  bool allocated[2 * UK_MAX_PARAMS];
  StrBuf *dump;      /* loom_user_kernel_dump: the kernel's text goes here and nothing runs */
  LoomDumpKind dkind;
} UkCall;

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
static LoomStatus prepare(UkCall *c, const LoomArray *in, LoomArray *out, const SnModule **mod, Diag *d) {
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
static LoomStatus common_device(UkCall *c, LoomDeviceKind *kind, int32_t *index, Diag *d) {
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
static LoomStatus prepare_outs(UkCall *c, int ndim, const int64_t *shape, LoomDeviceKind dk, int32_t di,
                               Diag *d) {
  for (int32_t b = c->k->in.n; b < c->n; b++) {
    if (c->par[b]->raw) continue;
    if (!c->arr[b]->data) {
      LoomStatus st = alloc_out(c, b, ndim, shape, dk, di, d);
      if (st) return st;
    } else if (c->arr[b]->ndim != ndim || memcmp(c->arr[b]->shape, shape, sizeof(int64_t) * (size_t)ndim)) {
      char s1[256], s2[256];
      ir_format_shape(s1, sizeof s1, c->arr[b]->ndim, c->arr[b]->shape);
      ir_format_shape(s2, sizeof s2, ndim, shape);
      return diag_error(d, LOOM_ERR_SHAPE, "%s: out param '%s' has shape %s but the result has shape %s",
                        c->k->name, c->par[b]->name, s1, s2);
    }
  }
  return LOOM_OK;
}


/* Whether the post/kernel function reads out var v's value before a definite write: any read, or no
 * unconditional top-level assignment before a statement that may return. Conservative. */
static bool expr_reads(const SnModule *m, int32_t e, int32_t var) {
  if (e < 0 || e >= m->nexpr) return false;
  const SnExpr *x = &m->exprs[e];
  if (x->kind == SE_VAR && x->var == var) return true;
  for (int j = 0; j < 3; j++)
    if ((x->kind != SE_CONST && x->kind != SE_VAR && x->kind != SE_ARRAY_SIZE) && x->src[j] >= 0 &&
        x->src[j] != e && expr_reads(m, x->src[j], var))
      return true;
  if (x->kind == SE_CALL)
    for (int32_t a = 0; a < x->nargs; a++)
      if (expr_reads(m, m->lists[x->args_begin + a], var)) return true;
  return false;
}

static bool stmt_reads(const SnModule *m, int32_t s, int32_t var, int depth) {
  if (s < 0 || s >= m->nstmt || depth > 1000) return true;
  const SnStmt *st = &m->stmts[s];
  if (expr_reads(m, st->expr, var)) return true;
  if (st->kind == SS_LOOP && expr_reads(m, st->step, var)) return true;
  for (int j = 0; j < 2; j++)
    if ((st->kind == SS_IF || st->kind == SS_LOOP) && st->body[j] >= 0 && stmt_reads(m, st->body[j], var, depth + 1))
      return true;
  if (st->kind == SS_BLOCK)
    for (int32_t j = 0; j < st->nlist; j++)
      if (stmt_reads(m, m->lists[st->list_begin + j], var, depth + 1)) return true;
  return false;
}

static bool stmt_may_leave(const SnModule *m, int32_t s, int depth) {
  if (s < 0 || s >= m->nstmt || depth > 1000) return true;
  const SnStmt *st = &m->stmts[s];
  if (st->kind == SS_RETURN) return true;
  for (int j = 0; j < 2; j++)
    if ((st->kind == SS_IF || st->kind == SS_LOOP) && st->body[j] >= 0 && stmt_may_leave(m, st->body[j], depth + 1))
      return true;
  if (st->kind == SS_BLOCK)
    for (int32_t j = 0; j < st->nlist; j++)
      if (stmt_may_leave(m, m->lists[st->list_begin + j], depth + 1)) return true;
  return false;
}

static bool out_needs_load(const SnModule *m, const SnFunc *f, int32_t var) {
  if (stmt_reads(m, f->body, var, 0)) return true;
  const SnStmt *body = &m->stmts[f->body];
  if (body->kind != SS_BLOCK) return true;
  for (int32_t j = 0; j < body->nlist; j++) {
    const SnStmt *st = &m->stmts[m->lists[body->list_begin + j]];
    if (st->kind == SS_EXPR && st->expr >= 0 && m->exprs[st->expr].kind == SE_ASSIGN && m->exprs[st->expr].var == var)
      return false;
    if (stmt_may_leave(m, m->lists[body->list_begin + j], 0)) return true;
  }
  return true;
}

/* ---- kernel IR construction ------------------------------------------------------------------------------ */

typedef struct UkBuild {
  KernelIr *k;
  int32_t capi, capa, caps;
  Diag *d;
} UkBuild;

static int32_t add_instr(UkBuild *B, Arena *a, KInstr in) {
  if (B->k->ninstr >= B->capi) return -1;
  B->k->instrs[B->k->ninstr] = in;
  return B->k->ninstr++;
}

static int32_t instr_of(UkBuild *B, Arena *a, int kind, LoomDType dt, int32_t src0, int op) {
  KInstr in;
  memset(&in, 0, sizeof in);
  in.kind = (uint8_t)kind;
  in.dtype = (uint8_t)dt;
  in.op = (uint16_t)op;
  in.src[0] = src0;
  in.src[1] = in.src[2] = -1;
  in.buf = in.phase = -1;
  return add_instr(B, a, in);
}

/* value of buffer b converted to the param's compute dtype */
static int32_t load_as(UkBuild *B, Arena *a, int32_t b, LoomDType param) {
  KInstr in;
  memset(&in, 0, sizeof in);
  in.kind = KI_LOAD;
  in.dtype = (uint8_t)dtype_compute((LoomDType)B->k->bufs[b].dtype);
  in.src[0] = in.src[1] = in.src[2] = -1;
  in.buf = b;
  in.phase = -1;
  int32_t v = add_instr(B, a, in);
  LoomDType want = dtype_compute(param);
  if (v >= 0 && want != (LoomDType)in.dtype) v = instr_of(B, a, KI_CAST, want, v, 0);
  return v;
}

/* A user call of function f with args (instruction indices, or -(b+1) for raw buffers). */
static int32_t user_call(UkBuild *B, Arena *a, const SnModule *m, int32_t f, const int32_t *args, int32_t nargs) {
  KernelIr *k = B->k;
  if (k->nuser_arg + nargs > B->capa) return -1;
  memcpy(k->user_args + k->nuser_arg, args, sizeof(int32_t) * (size_t)nargs);
  KInstr in;
  memset(&in, 0, sizeof in);
  in.kind = KI_USER;
  const SnFunc *fn = &m->funcs[f];
  in.dtype = (uint8_t)(fn->ret_dtype < LOOM_DTYPE_COUNT ? dtype_compute((LoomDType)fn->ret_dtype) : LOOM_BOOL);
  in.op = (uint16_t)f;
  in.src[0] = in.src[1] = in.src[2] = -1;
  in.buf = k->nuser_arg;
  in.phase = nargs;
  k->nuser_arg += nargs;
  return add_instr(B, a, in);
}

static bool kernel_alloc(UkBuild *B, Arena *a, int32_t nbuf, int32_t ninstr, int32_t nargs, int32_t nstore) {
  KernelIr *k = arena_alloc(a, sizeof *k);
  if (!k) return false;
  B->k = k;
  B->capi = ninstr;
  B->capa = nargs;
  B->caps = nstore;
  k->bufs = arena_alloc(a, sizeof(KBuffer) * (size_t)(nbuf + 1));
  k->instrs = arena_alloc(a, sizeof(KInstr) * (size_t)(ninstr + 1));
  k->user_args = arena_alloc(a, sizeof(int32_t) * (size_t)(nargs + 1));
  k->stores = arena_alloc(a, sizeof(KStore) * (size_t)(nstore + 1));
  k->phases = arena_alloc(a, sizeof(KPhase) * 2);
  k->nbuf = nbuf;
  return k->bufs && k->instrs && k->user_args && k->stores && k->phases;
}

/* Collapses dims [d0, d1) of an iteration space in place: drops size-1 dims, merges a dim into the next
 * when every buffer's stride makes them one. Returns the new count of those dims. strides: nbuf rows of
 * LOOM_MAX_RANK; raw buffers are skipped (skip[b]). */
static int collapse(int d0, int d1, int64_t *shape, int64_t (*strides)[LOOM_MAX_RANK], int32_t nbuf,
                    const bool *skip, bool merge) {
  int n = d0;
  for (int dd = d0; dd < d1; dd++) {
    if (merge && shape[dd] == 1) continue;
    if (merge && n > d0) {
      bool ok = true;
      for (int32_t b = 0; b < nbuf && ok; b++)
        if (!skip[b] && strides[b][n - 1] != strides[b][dd] * shape[dd]) ok = false;
      if (ok) {
        shape[n - 1] *= shape[dd];
        for (int32_t b = 0; b < nbuf; b++)
          if (!skip[b]) strides[b][n - 1] = strides[b][dd];
        continue;
      }
    }
    shape[n] = shape[dd];
    for (int32_t b = 0; b < nbuf; b++) strides[b][n] = strides[b][dd];
    n++;
  }
  return n - d0;
}

/* What a call's kernel IR depends on besides the binding (see the top comment). */
typedef struct UkSig {
  int32_t ndim, nkeep;
  uint8_t index_bits;
  uint8_t dtype[2 * UK_MAX_PARAMS];
  uint8_t layout[2 * UK_MAX_PARAMS][LOOM_MAX_RANK];
} UkSig;

/* Fills sk's shape and bindings and sig for an iteration space of ndim dims, the first nkeep kept. */
static LoomStatus bind_space(UkCall *c, int ndim, int nkeep, const int64_t *shape,
                             int64_t (*strides)[LOOM_MAX_RANK], SchedKernel *sk, UkSig *sig, Arena *a, Diag *d) {
  sk->bind = arena_alloc(a, sizeof(SchedBinding) * (size_t)(c->n + 1));
  if (!sk->bind) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", c->k->name);
  memset(sig, 0, sizeof *sig);
  sig->ndim = ndim;
  sig->nkeep = nkeep;
  int64_t maxel = 0;
  for (int i = 0; i < ndim; i++) sk->shape[i] = shape[i];
  for (int32_t b = 0; b < c->n; b++) {
    const LoomArray *arr = c->arr[b];
    sig->dtype[b] = (uint8_t)arr->dtype;
    SchedBinding *bd = &sk->bind[b];
    bd->kind = SB_OUTPUT;
    bd->index = b;
    bd->offset = 0;
    if (c->par[b]->raw) {
      int64_t n = ir_numel(arr->ndim, arr->shape);
      if (n > maxel) maxel = n;
      for (int i = 0; i < ndim; i++) sig->layout[b][i] = KL_ANY;
      bd->strides[0] = n;
      continue;
    }
    for (int i = 0; i < ndim; i++) {
      int64_t s = shape[i] == 1 ? 0 : strides[b][i];
      bd->strides[i] = s;
      sig->layout[b][i] = s == 0 ? KL_ZERO : s == 1 ? KL_ONE : KL_ANY;
      int64_t ext = (shape[i] > 0 ? shape[i] - 1 : 0) * (s < 0 ? -s : s);
      if (ext > maxel) maxel = ext;
    }
  }
  int64_t total = ir_numel(ndim, shape);
  sig->index_bits = (total < INT32_MAX && maxel < INT32_MAX) ? 32 : 64;
  return LOOM_OK;
}

/* Gives kernel k the rank, buffers' dtypes and layouts, and index width of sig. */
static void apply_sig(const UkCall *c, KernelIr *k, const UkSig *sig) {
  k->ndim = sig->ndim;
  k->nkeep = sig->nkeep;
  k->index_bits = sig->index_bits;
  for (int32_t b = 0; b < c->n; b++) {
    KBuffer *kb = &k->bufs[b];
    kb->dtype = sig->dtype[b];
    kb->is_output = b >= c->k->in.n;
    for (int i = 0; i < sig->ndim; i++) kb->layout[i] = sig->layout[b][i];
  }
}

/* Writes the text loom_user_kernel_dump asked for of kernel k (verified) into c->dump. LLVM IR comes
 * from the context's host kernel cache (the entry a call would use; compiled again when it lacks its
 * IR text); PTX from a fresh NVIDIA target for sm_90 (no GPU needed; it is not cached). */
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
  return rt_dump_ptx(ctx, 1, (const KernelIr *const[]){k}, c->dump, d);
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
    if (t) fprintf(stderr, "; ---- user kernel %s ----\n%s", k->name, t);
    ctx_free(c->k->ctx, t);
  }
  LoomStatus st = ir_verify_kernel(k, d);
  if (st) return st;
  if (c->dump) return dump_kernel(c, k, d);
  if (dk == LOOM_DEVICE_CUDA) return rt_gpu_run_schedule(c->k->ctx, di, &g, &s, NULL, data, c->n, d);
  if (dk != LOOM_DEVICE_HOST) return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: user kernels run on the host and CUDA", c->k->name);
  return rt_run_schedule(c->k->ctx, &g, &s, data, d);
}

/* ---- the instantiation cache ------------------------------------------------------------------------- */

typedef LoomStatus (*UkBuildFn)(UkCall *c, const SnModule *m, const UkSig *sig, Arena *a, KernelIr **out, Diag *d);

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

/* Builds, verifies and compiles (host) or loads (CUDA) the entry for key, and adds it in use (evicting
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
  if (!st && dk == LOOM_DEVICE_CUDA) st = rt_gpu_kernel(ctx, di, e->ir, -1, &e->gpu, d);
  else if (!st) st = rt_cache_acquire(ctx->rt->cache, e->ir, false, &e->host, NULL, d);
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
static LoomStatus run_sig(UkCall *c, const SnModule *m, const UkSig *sig, SchedKernel *sk, LoomDeviceKind dk,
                          int32_t di, UkBuildFn build, Arena *a, Diag *d) {
  LoomUserKernel *uk = c->k;
  LoomContext *ctx = uk->ctx;
  LoomStatus st;
  bool cached = !c->dump && ctx->dump_flags == 0 && ctx->rt && ctx->rt->cache && ctx->rt->pool &&
                (dk == LOOM_DEVICE_HOST || dk == LOOM_DEVICE_CUDA);
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
  if (dk == LOOM_DEVICE_CUDA) {
    Schedule s;
    memset(&s, 0, sizeof s);
    s.nkernel = 1;
    s.kernels = sk;
    IrGraph g;
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    st = rt_gpu_run_schedule(ctx, di, &g, &s, &e->gpu, data, c->n, d);
  } else {
    Schedule s;
    memset(&s, 0, sizeof s);
    s.nkernel = 1;
    s.kernels = sk;
    IrGraph g; /* every binding is SB_OUTPUT: no graph inputs */
    memset(&g, 0, sizeof g);
    g.ctx = ctx;
    const CgCompiled *pinned[1] = {e->host};
    st = rt_run_schedule_pinned(ctx, &g, &s, pinned, data, c->n, d);
  }
  entry_put(uk, e);
  return st;
}

static LoomStatus broadcast_into(UkCall *c, int32_t b, int *ndim, int64_t *shape, Diag *d) {
  const LoomArray *a = c->arr[b];
  int n = a->ndim > *ndim ? a->ndim : *ndim;
  int64_t out[LOOM_MAX_RANK];
  for (int i = 0; i < n; i++) {
    int ia = i - (n - a->ndim), is = i - (n - *ndim);
    int64_t x = ia >= 0 ? a->shape[ia] : 1, y = is >= 0 ? shape[is] : 1;
    if (x != y && x != 1 && y != 1) {
      char s1[256], s2[256];
      ir_format_shape(s1, sizeof s1, a->ndim, a->shape);
      ir_format_shape(s2, sizeof s2, *ndim, shape);
      return diag_error(d, LOOM_ERR_SHAPE, "%s: argument '%s' of shape %s does not broadcast with shape %s", c->k->name,
                        c->par[b]->name, s1, s2);
    }
    out[i] = x == 1 ? y : x;
  }
  *ndim = n;
  memcpy(shape, out, sizeof(int64_t) * (size_t)n);
  return LOOM_OK;
}

/* Strides of array a broadcast to (ndim, shape): 0 on stretched dims. */
static void bstrides(const LoomArray *a, int ndim, const int64_t *shape, int64_t *out) {
  for (int i = 0; i < ndim; i++) {
    int ia = i - (ndim - a->ndim);
    out[i] = (ia < 0 || a->shape[ia] == 1 || shape[i] == 1) ? 0 : a->strides[ia];
  }
}

static LoomStatus check_raw(UkCall *c, Diag *d) {
  for (int32_t b = 0; b < c->n; b++)
    if (c->par[b]->raw) {
      if (!c->arr[b]->data && b >= c->k->in.n)
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: raw out param '%s' must be given", c->k->name,
                          c->par[b]->name);
      if (!rt_array_c_contiguous(c->arr[b]))
        return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: raw param '%s' must be C-contiguous (make a contiguous copy)",
                          c->k->name, c->par[b]->name);
    }
  return LOOM_OK;
}

/* Builds the kernel IR of an elementwise call (ins, outs, then i and _ind.size() as the params). */
static LoomStatus ew_build(UkCall *c, const SnModule *m, const UkSig *sig, Arena *a, KernelIr **out, Diag *d) {
  LoomUserKernel *uk = c->k;
  const SnFunc *f = &m->funcs[m->kernel];
  UkBuild B = {.d = d};
  if (!kernel_alloc(&B, a, c->n, 3 * c->n + 8, f->nparam + 2, c->n))
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", uk->name);
  KernelIr *k = B.k;
  snprintf(k->name, sizeof k->name, "%s", uk->name);
  k->snippet = m;
  apply_sig(c, k, sig);
  int32_t args[2 * UK_MAX_PARAMS + 2];
  int32_t na = 0;
  for (int32_t p = 0; p < f->nparam; p++) {
    const SnVar *v = &m->vars[f->var_begin + p];
    int32_t b = p; /* params: ins, outs, then i and _ind.size() */
    if (v->kind == SV_SPECIAL && v->special == SN_SPECIAL_INDEX && !stmt_reads(m, f->body, f->var_begin + p, 0)) {
      /* `i` unread: a constant, so the GPU can use its 16-byte vector entry (it has no per-point index) */
      KInstr z;
      memset(&z, 0, sizeof z);
      z.kind = KI_CONST;
      z.dtype = LOOM_INT64;
      z.src[0] = z.src[1] = z.src[2] = z.buf = z.phase = -1;
      args[na++] = add_instr(&B, a, z);
    } else if (v->kind == SV_SPECIAL) {
      args[na++] = instr_of(&B, a, v->special == SN_SPECIAL_INDEX ? KI_INDEX : KI_NPOINTS, LOOM_INT64, -1, 0);
    } else if (v->kind == SV_RAW_IN || v->kind == SV_RAW_OUT) {
      args[na++] = -(b + 1);
    } else if (v->kind == SV_IN || (v->kind == SV_OUT && out_needs_load(m, f, f->var_begin + p))) {
      args[na++] = load_as(&B, a, b, c->pdt[b]);
    } else {
      KInstr z;
      memset(&z, 0, sizeof z);
      z.kind = KI_CONST;
      z.dtype = (uint8_t)dtype_compute((LoomDType)v->dtype);
      z.src[0] = z.src[1] = z.src[2] = z.buf = z.phase = -1;
      args[na++] = add_instr(&B, a, z);
    }
    if (args[na - 1] == -1 && v->kind != SV_RAW_IN && v->kind != SV_RAW_OUT)
      return diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s has too many instructions", uk->name);
  }
  int32_t call = user_call(&B, a, m, m->kernel, args, na);
  int nouts = 0;
  k->phases[0].kind = KP_MAP;
  k->phases[0].store_begin = 0;
  for (int32_t p = 0; p < f->nparam; p++) {
    const SnVar *v = &m->vars[f->var_begin + p];
    if (v->kind != SV_OUT) continue;
    int32_t o = instr_of(&B, a, KI_USER_OUT, dtype_compute((LoomDType)v->dtype), call, nouts++);
    k->stores[k->nstore].buf = p;
    k->stores[k->nstore].value = o;
    k->nstore++;
  }
  k->phases[0].nstores = k->nstore;
  k->nphase = 1;
  if (call < 0) return diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s is too large", uk->name);
  *out = k;
  return LOOM_OK;
}

static LoomStatus ew_call(LoomUserKernel *uk, int32_t nin, const LoomArray *in, int32_t nout, LoomArray *out,
                          int64_t size, Arena *a, UkCall *c, Diag *d) {
  const SnModule *m;
  LoomStatus st = prepare(c, in, out, &m, d);
  if (st) return st;
  if ((st = check_raw(c, d))) return st;
  LoomDeviceKind dk;
  int32_t di;
  if ((st = common_device(c, &dk, &di, d))) return st;
  int ndim = 0;
  int64_t shape[LOOM_MAX_RANK];
  bool any = false;
  for (int32_t b = 0; b < c->n; b++)
    if (!c->par[b]->raw && (c->arr[b]->data || b < uk->in.n)) { /* inputs, and the outputs given */
      if ((st = broadcast_into(c, b, &ndim, shape, d))) return st;
      any = true;
    }
  if (!any) {
    if (size < 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: every argument is raw: pass size (the number of points)",
                        uk->name);
    ndim = 1;
    shape[0] = size;
  } else if (size >= 0 && size != ir_numel(ndim, shape)) {
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: size %lld given with non-raw arguments of %lld points",
                      uk->name, (long long)size, (long long)ir_numel(ndim, shape));
  }
  if ((st = prepare_outs(c, ndim, shape, dk, di, d))) return st;
  if (ir_numel(ndim, shape) == 0) {
    if (c->dump) sb_printf(c->dump, "; %s: no kernel runs over zero points\n", uk->name);
    return LOOM_OK;
  }
  /* iteration space */
  int64_t (*str)[LOOM_MAX_RANK] = arena_alloc(a, sizeof(int64_t) * LOOM_MAX_RANK * (size_t)c->n);
  bool skip[2 * UK_MAX_PARAMS] = {false};
  if (!str) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory calling kernel %s", uk->name);
  for (int32_t b = 0; b < c->n; b++) {
    skip[b] = c->par[b]->raw;
    if (!skip[b]) bstrides(c->arr[b], ndim, shape, str[b]);
  }
  int kd = collapse(0, ndim, shape, str, c->n, skip, uk->reduce_dims);
  if (kd == 0) {
    kd = 1;
    shape[0] = 1;
    for (int32_t b = 0; b < c->n; b++) str[b][0] = 0;
  }
  SchedKernel *sk = arena_alloc(a, sizeof *sk);
  if (!sk) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", uk->name);
  UkSig sig;
  if ((st = bind_space(c, kd, kd, shape, str, sk, &sig, a, d))) return st;
  return run_sig(c, m, &sig, sk, dk, di, ew_build, a, d);
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
    if (ew_call(uk, nin, in, nout, out, size, &a, c, &d)) free_allocated(c);
  }
  arena_free_all(&a);
  return d.status ? ctx_report(uk->ctx, &d) : LOOM_OK;
}

/* Builds the kernel IR of a reduction call: map over the R dims, then post with the outs. */
static LoomStatus red_build(UkCall *c, const SnModule *m, const UkSig *sig, Arena *a, KernelIr **out, Diag *d) {
  LoomUserKernel *uk = c->k;
  const SnFunc *fm = &m->funcs[m->map], *fp = &m->funcs[m->post];
  LoomDType rdt = (LoomDType)m->reduce_dtype;
  UkBuild B = {.d = d};
  if (!kernel_alloc(&B, a, c->n, 3 * c->n + 8, fm->nparam + fp->nparam, c->n))
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", uk->name);
  KernelIr *k = B.k;
  snprintf(k->name, sizeof k->name, "%s", uk->name);
  k->snippet = m;
  apply_sig(c, k, sig);
  int32_t args[2 * UK_MAX_PARAMS + 2];
  for (int32_t p = 0; p < fm->nparam; p++) args[p] = load_as(&B, a, p, c->pdt[p]);
  int32_t mv = user_call(&B, a, m, m->map, args, fm->nparam);
  k->phases[0].kind = KP_REDUCE;
  k->phases[0].reduce_op = (uint8_t)IR_REDUCE_USER;
  k->phases[0].acc_dtype = (uint8_t)dtype_compute(rdt);
  k->phases[0].value = mv;
  int32_t acc = instr_of(&B, a, KI_ACC, dtype_compute(rdt), -1, 0);
  if (acc >= 0) B.k->instrs[acc].phase = 0;
  int32_t na = 0;
  args[na++] = acc;
  for (int32_t p = 1; p < fp->nparam; p++) { /* a, then the out params */
    int32_t b = uk->in.n + p - 1;
    if (out_needs_load(m, fp, fp->var_begin + p)) {
      args[na++] = load_as(&B, a, b, c->pdt[b]);
    } else {
      KInstr z;
      memset(&z, 0, sizeof z);
      z.kind = KI_CONST;
      z.dtype = (uint8_t)dtype_compute(c->pdt[b]);
      z.src[0] = z.src[1] = z.src[2] = z.buf = z.phase = -1;
      args[na++] = add_instr(&B, a, z);
    }
  }
  int32_t call = user_call(&B, a, m, m->post, args, na);
  k->phases[1].kind = KP_FINAL;
  k->phases[1].store_begin = 0;
  int nouts = 0;
  for (int32_t p = 1; p < fp->nparam; p++) {
    int32_t o = instr_of(&B, a, KI_USER_OUT, dtype_compute(c->pdt[uk->in.n + p - 1]), call, nouts++);
    k->stores[k->nstore].buf = uk->in.n + p - 1;
    k->stores[k->nstore].value = o;
    k->nstore++;
  }
  k->phases[1].nstores = k->nstore;
  k->nphase = 2;
  if (mv < 0 || acc < 0 || call < 0)
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: kernel %s is too large", uk->name);
  *out = k;
  return LOOM_OK;
}

static LoomStatus red_call(LoomUserKernel *uk, const LoomArray *in, LoomArray *out, int32_t naxes,
                           const int32_t *axes, int keepdims, Arena *a, UkCall *c, Diag *d) {
  const SnModule *m;
  LoomStatus st = prepare(c, in, out, &m, d);
  if (st) return st;
  LoomDeviceKind dk;
  int32_t di;
  if ((st = common_device(c, &dk, &di, d))) return st;
  int xn = 0;
  int64_t xs[LOOM_MAX_RANK];
  for (int32_t b = 0; b < uk->in.n; b++)
    if ((st = broadcast_into(c, b, &xn, xs, d))) return st;
  bool red[LOOM_MAX_RANK] = {false};
  if (naxes == 0 && !axes) {
    for (int i = 0; i < xn; i++) red[i] = true;
  } else {
    if (naxes < 0 || (naxes > 0 && !axes))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: %d axes without an axes array", uk->name, (int)naxes);
    for (int32_t j = 0; j < naxes; j++) {
      int32_t ax = axes[j] < 0 ? axes[j] + xn : axes[j];
      if (ax < 0 || ax >= xn)
        return diag_error(d, LOOM_ERR_AXIS, "%s: axis %d is out of bounds for an array of dimension %d", uk->name,
                          (int)axes[j], xn);
      if (red[ax]) return diag_error(d, LOOM_ERR_AXIS, "%s: axis %d is repeated", uk->name, (int)axes[j]);
      red[ax] = true;
    }
  }
  int on = 0;
  int64_t os[LOOM_MAX_RANK];
  for (int i = 0; i < xn; i++)
    if (!red[i]) os[on++] = xs[i];
    else if (keepdims) os[on++] = 1;
  if ((st = prepare_outs(c, on, os, dk, di, d))) return st;
  if (ir_numel(on, os) == 0) {
    if (c->dump) sb_printf(c->dump, "; %s: no kernel runs for an empty result\n", uk->name);
    return LOOM_OK;
  }
  /* kernel dims: kept axes then reduced axes */
  int64_t shape[LOOM_MAX_RANK + 1];
  int64_t (*str)[LOOM_MAX_RANK] = arena_alloc(a, sizeof(int64_t) * LOOM_MAX_RANK * (size_t)c->n);
  bool skip[2 * UK_MAX_PARAMS] = {false};
  if (!str) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory calling kernel %s", uk->name);
  int nk = 0, nd = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < xn; i++) {
      if (red[i] != (pass == 1)) continue;
      shape[nd] = xs[i];
      for (int32_t b = 0; b < uk->in.n; b++) {
        const LoomArray *ar = c->arr[b];
        int ia = i - (xn - ar->ndim);
        str[b][nd] = (ia < 0 || ar->shape[ia] == 1) ? 0 : ar->strides[ia];
      }
      for (int32_t b = uk->in.n; b < c->n; b++) { /* outputs: their dim for kept axes, 0 on reduced */
        const LoomArray *ar = c->arr[b];
        int od = 0;
        for (int j = 0; j < i; j++) od += !red[j] || keepdims;
        str[b][nd] = red[i] ? 0 : ar->strides[od];
      }
      nd++;
      if (pass == 0) nk++;
    }
  int kk = collapse(0, nk, shape, str, c->n, skip, uk->reduce_dims);
  /* move the R dims down after the collapsed O dims */
  for (int i = nk; i < nd; i++) {
    shape[kk + i - nk] = shape[i];
    for (int32_t b = 0; b < c->n; b++) str[b][kk + i - nk] = str[b][i];
  }
  int kr = collapse(kk, kk + nd - nk, shape, str, c->n, skip, uk->reduce_dims);
  if (kr == 0) { /* a reduction over nothing (or only size-1 dims): one virtual R point */
    shape[kk] = 1;
    for (int32_t b = 0; b < c->n; b++) str[b][kk] = 0;
    kr = 1;
  }
  if (kk + kr > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "%s: more than %d dims after adding a reduced dim", uk->name, LOOM_MAX_RANK);
  SchedKernel *sk = arena_alloc(a, sizeof *sk);
  if (!sk) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory building kernel %s", uk->name);
  UkSig sig;
  if ((st = bind_space(c, kk + kr, kk, shape, str, sk, &sig, a, d))) return st;
  return run_sig(c, m, &sig, sk, dk, di, red_build, a, d);
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
    if (red_call(uk, in, out, naxes, axes, keepdims, &a, c, &d)) free_allocated(c);
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
  else if (kind != LOOM_DUMP_KERNELS && kind != LOOM_DUMP_LLVM && kind != LOOM_DUMP_PTX)
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT,
               "loom_user_kernel_dump: unknown kind %d; use LOOM_DUMP_KERNELS, LOOM_DUMP_LLVM or LOOM_DUMP_PTX", (int)kind);
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
    if (uk->reduction) red_call(uk, ins, outs, naxes, axes, keepdims, &a, c, &d);
    else ew_call(uk, nin, ins, nout, outs, size, &a, c, &d);
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
