/* SPDX-License-Identifier: Apache-2.0 */
/* user_kernel_call.c: one call of a user kernel: the iteration space (the arguments broadcast, size-1
 * dims dropped and neighbours merged when contiguous for every buffer, as passes/collapse.c does; raw
 * arrays bound whole) and its kernel IR, built directly (no graph: a user kernel is already one kernel)
 * with a KI_USER call of the snippet: ElementwiseKernel as one MAP phase, ReductionKernel as a REDUCE
 * phase of the map function folded by the snippet's reduce, then a FINAL phase with post_map. */
#include <stdio.h>
#include <string.h>

#include "runtime/user_kernel.h"

/* ---- snippet analysis ----------------------------------------------------------------------------- */

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

/* ---- ElementwiseKernel ---------------------------------------------------------------------------------- */

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

/* The raw params given are C-contiguous (a raw out not given is allocated with the iteration space's
 * shape, as CuPy's: uk_prepare_outs). */
static LoomStatus check_raw(UkCall *c, Diag *d) {
  for (int32_t b = 0; b < c->n; b++)
    if (c->par[b]->raw) {
      if (!c->arr[b]->data && b >= c->k->in.n) continue;
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

LoomStatus uk_ew_call(LoomUserKernel *uk, int32_t nin, const LoomArray *in, int32_t nout, LoomArray *out,
                          int64_t size, Arena *a, UkCall *c, Diag *d) {
  const SnModule *m;
  LoomStatus st = uk_prepare(c, in, out, &m, d);
  if (st) return st;
  if ((st = check_raw(c, d))) return st;
  LoomDeviceKind dk;
  int32_t di;
  if ((st = uk_common_device(c, &dk, &di, d))) return st;
  int ndim = 0;
  int64_t shape[LOOM_MAX_RANK];
  bool any = false;
  for (int32_t b = 0; b < c->n; b++)
    if (!c->par[b]->raw && (c->arr[b]->data || b < uk->in.n)) { /* inputs, and the outputs given */
      if ((st = broadcast_into(c, b, &ndim, shape, d))) return st;
      any = true;
    }
  if (!any || (ndim == 0 && size >= 0)) { /* every argument raw, or the non-raw ones 0-d (scalars): size's */
    if (size < 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: every argument is raw: pass size (the number of points)",
                        uk->name);
    ndim = 1;
    shape[0] = size;
  } else if (size >= 0 && size != ir_numel(ndim, shape)) {
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: size %lld given with non-raw arguments of %lld points",
                      uk->name, (long long)size, (long long)ir_numel(ndim, shape));
  }
  if ((st = uk_prepare_outs(c, ndim, shape, dk, di, d))) return st;
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
  return uk_run_sig(c, m, &sig, sk, dk, di, ew_build, a, d);
}

/* ---- ReductionKernel ------------------------------------------------------------------------------------ */

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

LoomStatus uk_red_call(LoomUserKernel *uk, const LoomArray *in, LoomArray *out, int32_t naxes,
                           const int32_t *axes, int keepdims, Arena *a, UkCall *c, Diag *d) {
  const SnModule *m;
  LoomStatus st = uk_prepare(c, in, out, &m, d);
  if (st) return st;
  LoomDeviceKind dk;
  int32_t di;
  if ((st = uk_common_device(c, &dk, &di, d))) return st;
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
  if ((st = uk_prepare_outs(c, on, os, dk, di, d))) return st;
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
  return uk_run_sig(c, m, &sig, sk, dk, di, red_build, a, d);
}
