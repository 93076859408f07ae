/* SPDX-License-Identifier: Apache-2.0 */
/* print.c: the stable text forms of the graph IR and the kernel IR (ir/parse.c reads them back).
 *
 * Approach: one line per item, every semantic field spelled out, nothing depending on addresses or
 * on node numbering: the graph printer renumbers the printed nodes %0, %1, ... in index order (and
 * inputs in order of appearance), so print -> parse -> print is identical. Floats are printed with
 * %.17g (exact round trip), integers exactly.
 *
 * Graph lines:
 *   %0 = input 0 f32 [4,5] strides [5,1]
 *   %1 = const f32 [] 2.5                 (weak: "const weak f64 [] 2.5")
 *   %2 = add f32 [4,5] %0 %1              (all-weak result: "add weak i64 [] %0 %1")
 *   %3 = reduce sum f32 [4] %2 axes [1]   (keepdims: "... axes [1] keepdims")
 *   %4 = permute f32 [5,4] %0 perm [1,0]
 *   %5 = slice f32 [2,5] %0 start [1,0] step [2,1]
 *   %6 = cast|broadcast|reshape|copy DT [shape] %x
 *   %7 = matmul f32 [2,4,6] %0 %1         (a [B...,M,K] @ b [B...,K,N])
 *   output %3
 * Kernel lines:
 *   kernel NAME ndim 2 keep 1 index 64    (NAME "-" when empty; ir_print_kernel_key prints "-"; a
 *                                         host kernel specialized on its last extent ends "rows 3")
 *   buf 0 in f32 [s,1]                    (per iteration dim: s any stride, 0 zero, 1 unit)
 *   %0 = load f32 buf 0 | const f32 2.5 | exp f32 %0 | cast f64 %1 | acc f32 phase 0 | redsize i64
 *   phase reduce sum f32 %1
 *   phase map store buf 1 %2 store buf 2 %3
 *   phase final store buf 1 %2
 *   phase scan sum f32 %1 round f16 store buf 1 %3
 *   call matmul a 0 b 1 out 3 alpha 1 bias 2 c 4 beta 1 act relu   (a library-call kernel; bias, c and
 *                                         act appear only when present)
 */
#include <string.h>

#include "ir/ir.h"
#include "ir/snippet.h"

static void print_dims(StrBuf *out, int n, const int64_t *v) {
  sb_printf(out, "[");
  for (int i = 0; i < n; i++) sb_printf(out, i ? ",%lld" : "%lld", (long long)v[i]);
  sb_printf(out, "]");
}

static void print_scalar(StrBuf *out, LoomDType t, Scalar v) {
  switch (dtype_kind(t)) {
  case DK_FLOAT: sb_printf(out, "%.17g", v.f); break;
  case DK_COMPLEX: sb_printf(out, "%.17g%+.17gj", v.f, v.im); break;
  case DK_INT: sb_printf(out, "%lld", (long long)v.i); break;
  default: sb_printf(out, "%llu", (unsigned long long)v.u); break;
  }
}

static const char *const kind_names[IR_KIND_COUNT] = {
    [IR_INPUT] = "input", [IR_CONST] = "const",         [IR_ELEM] = "elem",
    [IR_CAST] = "cast",   [IR_BROADCAST] = "broadcast", [IR_RESHAPE] = "reshape",
    [IR_PERMUTE] = "permute", [IR_SLICE] = "slice",     [IR_REDUCE] = "reduce",
    [IR_COPY] = "copy",   [IR_MATMUL] = "matmul", [IR_IOTA] = "iota",
    [IR_SCAN] = "scan", [IR_GATHER] = "gather", [IR_SCATTER] = "scatter"};

static int node_arity(const IrNode *n) { return ir_node_arity(n); }

void ir_print_graph(const IrGraph *g, int nroots, const int32_t *roots, StrBuf *out) {
  if (!g || !out || g->nnodes == 0) {
    for (int r = 0; out && r < nroots; r++) sb_printf(out, "output %%%d\n", roots[r]);
    return;
  }
  /* num[i]: printed number of node i, or -1 when not printed. */
  int32_t *num = ctx_alloc(g->ctx, sizeof(int32_t) * (size_t)g->nnodes);
  int32_t *innum = ctx_alloc(g->ctx, sizeof(int32_t) * (size_t)(g->ninputs > 0 ? g->ninputs : 1));
  if (!num || !innum) {
    ctx_free(g->ctx, num);
    ctx_free(g->ctx, innum);
    out->oom = true;
    return;
  }
  for (int32_t i = 0; i < g->nnodes; i++) num[i] = nroots == 0 ? 1 : -1;
  for (int32_t i = 0; i < g->ninputs; i++) innum[i] = -1;
  for (int r = 0; r < nroots; r++)
    if (roots[r] >= 0 && roots[r] < g->nnodes) num[roots[r]] = 1;
  /* Sources precede their users, so one backward sweep marks everything reachable. */
  for (int32_t i = g->nnodes - 1; i >= 0; i--) {
    if (num[i] < 0) continue;
    const IrNode *n = &g->nodes[i];
    for (int k = 0; k < node_arity(n); k++)
      if (n->src[k] >= 0 && n->src[k] < i) num[n->src[k]] = 1;
  }
  int32_t next = 0, nextin = 0;
  for (int32_t i = 0; i < g->nnodes; i++)
    if (num[i] >= 0) num[i] = next++;
  for (int32_t i = 0; i < g->nnodes; i++) {
    if (num[i] < 0) continue;
    const IrNode *n = &g->nodes[i];
    LoomDType t = (LoomDType)n->dtype;
    const char *kname = n->kind < IR_KIND_COUNT ? kind_names[n->kind] : "?";
    if (n->kind == IR_ELEM) kname = loom_op_name((LoomOp)n->op) ? loom_op_name((LoomOp)n->op) : "?";
    sb_printf(out, "%%%d = %s", num[i], kname);
    if (n->kind == IR_INPUT) {
      int32_t in = n->input;
      int32_t pn = in;
      if (in >= 0 && in < g->ninputs) {
        if (innum[in] < 0) innum[in] = nextin++;
        pn = innum[in];
      }
      sb_printf(out, " %d", pn);
    }
    if (n->kind == IR_REDUCE || n->kind == IR_SCAN) {
      const char *rn = reduce_op_name((LoomReduceOp)n->op);
      sb_printf(out, " %s", rn ? rn : "?");
    }
    if (n->kind == IR_GATHER) sb_printf(out, " %s", ir_gather_mode_name(n->op) ? ir_gather_mode_name(n->op) : "?");
    if (n->kind == IR_SCATTER) sb_printf(out, " %s", n->op == IR_SCATTER_ADD ? "add" : n->op == IR_SCATTER_PUT ? "put" : "set");
    if (n->flags & IR_FLAG_WEAK) sb_printf(out, " weak");
    sb_printf(out, " %s ", dtype_short_name(t));
    print_dims(out, n->ndim, n->shape);
    for (int k = 0; k < node_arity(n); k++) {
      int32_t s = n->src[k];
      sb_printf(out, " %%%d", s >= 0 && s < g->nnodes && num[s] >= 0 ? num[s] : s);
    }
    switch (n->kind) {
    case IR_INPUT:
      if (n->input >= 0 && n->input < g->ninputs) {
        const LoomArray *a = &g->inputs[n->input];
        sb_printf(out, " strides ");
        print_dims(out, a->ndim, a->strides);
      }
      break;
    case IR_CONST:
      sb_printf(out, " ");
      print_scalar(out, t, n->value);
      break;
    case IR_PERMUTE:
      sb_printf(out, " perm ");
      print_dims(out, n->ndim, n->arg);
      break;
    case IR_SLICE:
      sb_printf(out, " start ");
      print_dims(out, n->ndim, n->arg);
      sb_printf(out, " step ");
      print_dims(out, n->ndim, n->arg2);
      break;
    case IR_SCAN:
    case IR_GATHER:
    case IR_REDUCE: {
      sb_printf(out, " axes [");
      int c = 0;
      for (int a = 0; a < 32; a++)
        if (n->axes & (1u << a)) sb_printf(out, c++ ? ",%d" : "%d", a);
      sb_printf(out, "]");
      if (n->flags & IR_FLAG_KEEPDIMS) sb_printf(out, " keepdims");
      break;
    }
    default: break;
    }
    sb_printf(out, "\n");
  }
  for (int r = 0; r < nroots; r++) {
    int32_t x = roots[r];
    sb_printf(out, "output %%%d\n", x >= 0 && x < g->nnodes ? num[x] : x);
  }
  ctx_free(g->ctx, num);
  ctx_free(g->ctx, innum);
}

/* ---- kernels ----------------------------------------------------------------------------------------- */
static const char layout_letter[KL_COUNT] = {[KL_ANY] = 's', [KL_ZERO] = '0', [KL_ONE] = '1', [KL_NEG1] = 'r',
                                              [KL_TWO] = '2', [KL_THREE] = '3', [KL_FOUR] = '4'};

static void print_call(const KCall *c, StrBuf *out);

static void print_kernel(const KernelIr *k, bool with_name, StrBuf *out) {
  char name[sizeof k->name + 1];
  size_t n = 0;
  if (with_name)
    for (; n < sizeof k->name && k->name[n]; n++) {
      char c = k->name[n];
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.';
      name[n] = ok ? c : '_';
    }
  if (n == 0) name[n++] = '-';
  name[n] = '\0';
  sb_printf(out, "kernel %s ndim %d keep %d index %d", name, k->ndim, k->nkeep, k->index_bits);
  if (k->row_extent) sb_printf(out, " rows %d", (int)k->row_extent);
  if (k->walk_cols) sb_printf(out, " cols");
  if (k->col_stride == IR_COL_STRIDE_OTHER) sb_printf(out, " colstride other");
  else if (k->col_stride) sb_printf(out, " colstride %d", (int)k->col_stride);
  sb_printf(out, "\n");
  for (int32_t b = 0; b < k->nbuf; b++) {
    const KBuffer *kb = &k->bufs[b];
    sb_printf(out, "  buf %d %s %s [", b, kb->is_output ? "out" : "in", dtype_short_name((LoomDType)kb->dtype));
    for (int i = 0; i < k->ndim && i < LOOM_MAX_RANK; i++)
      sb_printf(out, i ? ",%c" : "%c", kb->layout[i] < KL_COUNT ? layout_letter[kb->layout[i]] : '?');
    sb_printf(out, "]\n");
  }
  for (int32_t i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    const char *dt = dtype_short_name((LoomDType)in->dtype);
    sb_printf(out, "  %%%d = ", i);
    switch (in->kind) {
    case KI_LOAD: sb_printf(out, "load %s buf %d", dt, in->buf); break;
    case KI_CONST:
      sb_printf(out, "const %s ", dt);
      print_scalar(out, (LoomDType)in->dtype, in->value);
      break;
    case KI_ELEM: {
      const OpInfo *info = op_info((LoomOp)in->op);
      sb_printf(out, "%s %s", info ? loom_op_name((LoomOp)in->op) : "?", dt);
      for (int s = 0; s < (info ? info->arity : 0); s++) sb_printf(out, " %%%d", in->src[s]);
      break;
    }
    case KI_CAST: sb_printf(out, "cast %s %%%d", dt, in->src[0]); break;
    case KI_ACC: sb_printf(out, "acc %s phase %d", dt, in->phase); break;
    case KI_REDSIZE: sb_printf(out, "redsize %s", dt); break;
    case KI_USER:
      sb_printf(out, "user %s func %d (", dt, (int)in->op);
      for (int32_t a = 0; a < in->phase; a++) {
        int32_t x = in->buf + a >= 0 && in->buf + a < k->nuser_arg ? k->user_args[in->buf + a] : INT32_MIN;
        if (x >= 0) sb_printf(out, a ? " %%%d" : "%%%d", x);
        else sb_printf(out, a ? " buf %d" : "buf %d", x == INT32_MIN ? -1 : -x - 1);
      }
      sb_printf(out, ")");
      break;
    case KI_USER_OUT: sb_printf(out, "user_out %s %%%d %d", dt, in->src[0], (int)in->op); break;
    case KI_INDEX: sb_printf(out, "index %s", dt); break;
    case KI_NPOINTS: sb_printf(out, "npoints %s", dt); break;
    case KI_PARAM: sb_printf(out, "param %s %d", dt, (int)in->op); break;
    case KI_OFFSET: sb_printf(out, "offset %s buf %d", dt, in->buf); break;
    case KI_GATHER: sb_printf(out, "gather %s buf %d %%%d", dt, in->buf, in->src[0]); break;
    default: sb_printf(out, "? %s", dt); break;
    }
    sb_printf(out, "\n");
  }
  for (int32_t p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_REDUCE) {
      const char *rn = ph->reduce_op == IR_REDUCE_USER ? "user" : reduce_op_name((LoomReduceOp)ph->reduce_op);
      sb_printf(out, "  phase reduce %s %s %%%d", rn ? rn : "?", dtype_short_name((LoomDType)ph->acc_dtype),
                ph->value);
    } else if (ph->kind == KP_SCAN) {
      const char *rn = reduce_op_name((LoomReduceOp)ph->reduce_op);
      sb_printf(out, "  phase scan %s %s %%%d", rn ? rn : "?", dtype_short_name((LoomDType)ph->acc_dtype), ph->value);
      if (ph->scan_round) sb_printf(out, " round %s", dtype_short_name((LoomDType)ph->scan_round));
    } else {
      sb_printf(out, "  phase %s", ph->kind == KP_MAP ? "map" : ph->kind == KP_FINAL ? "final" : "?");
    }
    for (int32_t s = 0; s < ph->nstores; s++) {
      int32_t si = ph->store_begin + s;
      if (si < 0 || si >= k->nstore) continue;
      const KStore *ks = &k->stores[si];
      sb_printf(out, " store buf %d %%%d", ks->buf, ks->value);
      if (ks->scatter) sb_printf(out, " at %%%d limit %%%d %s", ks->index, ks->limit, ks->op == IR_SCATTER_ADD ? "add" : "set");
    }
    sb_printf(out, "\n");
  }
  if (k->call) print_call(k->call, out);
}

const char *ir_call_act_name(KCallAct act) {
  static const char *const names[KACT_COUNT] = {[KACT_NONE] = "none", [KACT_RELU] = "relu",
                                                [KACT_GELU_TANH] = "gelu_tanh"};
  return (unsigned)act < KACT_COUNT ? names[act] : "?";
}

static void print_call(const KCall *c, StrBuf *out) {
  sb_printf(out, "  call %s a %d b %d out %d alpha %.17g", c->op == KC_MATMUL ? "matmul" : "?", c->a, c->b,
            c->out, c->alpha);
  if (c->bias >= 0) sb_printf(out, " bias %d", c->bias);
  if (c->c >= 0) sb_printf(out, " c %d beta %.17g", c->c, c->beta);
  if (c->act != KACT_NONE) sb_printf(out, " act %s", ir_call_act_name((KCallAct)c->act));
  sb_printf(out, "\n");
}

/* User kernels: the snippet module follows the kernel (it is part of the cache key). */
static void print_snippet(const KernelIr *k, StrBuf *out) {
  if (k->snippet) ir_snippet_print(k->snippet, out);
}

void ir_print_kernel(const KernelIr *k, StrBuf *out) {
  if (k && out) {
    print_kernel(k, true, out);
    print_snippet(k, out);
  }
}

void ir_print_kernel_key(const KernelIr *k, StrBuf *out) {
  if (k && out) {
    print_kernel(k, false, out);
    print_snippet(k, out);
  }
}
