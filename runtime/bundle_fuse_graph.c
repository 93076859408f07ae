/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_fuse_graph.c: bundled @loom.fuse signatures in libloom (loom_aot.h): a record made from two
 * traces, and a call's graph rebuilt from a record without the Python function.
 *
 * Rebuilding: rt_fuse_replay (bundle_fuse_replay.c), for the record the loaded bundles hold (loom_bundle_fuse_build).
 *
 * Recording (loom_bundle_builder_add_fuse) pairs the reachable nodes of trace A with those of trace B
 * from the outputs back (users before sources, so each pair is fixed before its sources are): the two
 * must agree on everything but sizes and constants. A constant equal in both is a literal, unless a
 * scalar argument's value converts to it as well (ambiguous: refused); one that differs must be exactly
 * one scalar argument's value in both traces. The record is then rebuilt with B's arrays and scalars and
 * compared with B node for node, sizes and values included: what is kept reproduces a second trace.
 */
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "runtime/bundle_build.h"

/* The record signature of args; false when one is malformed. */
static bool args_fit(const LoomFuseArg *args, int32_t nargs, RtFuseArg *sig) {
  for (int32_t j = 0; j < nargs; j++) {
    const LoomFuseArg *a = &args[j];
    if (a->kind < LOOM_FUSE_ARRAY || a->kind > LOOM_FUSE_COMPLEX) return false;
    bool array = a->kind == LOOM_FUSE_ARRAY;
    if (array && ((unsigned)a->dtype >= LOOM_DTYPE_COUNT || a->ndim < 0 || a->ndim > LOOM_MAX_RANK)) return false;
    sig[j] = (RtFuseArg){(uint8_t)a->kind, array ? (uint8_t)a->dtype : 0, array ? (uint8_t)a->ndim : 0};
  }
  return true;
}

LOOM_API int loom_bundle_fuse_find(LoomContext *ctx, const char *identity, int32_t nargs, const LoomFuseArg *args) {
  RtFuseArg sig[RF_MAX_ARGS];
  if (!ctx || !identity || !args || nargs < 1 || nargs > RF_MAX_ARGS || !args_fit(args, nargs, sig)) return 0;
  return rt_bundles_find_fuse(ctx, identity, nargs, sig) != NULL;
}

LOOM_API LoomStatus loom_bundle_fuse_build(LoomGraph *g, const char *identity, int32_t nargs, const LoomFuseArg *args,
                                           LoomNode *outs, int32_t cap, int32_t *nout, int32_t *nwrite,
                                           int32_t *write_args, int *is_tuple, int *found) {
  if (!g || !identity || !args || !outs || !nout || !nwrite || !write_args || !is_tuple || !found || nargs < 1 ||
      nargs > RF_MAX_ARGS)
    return LOOM_ERR_INVALID_ARGUMENT;
  *found = 0;
  RtFuseArg sig[RF_MAX_ARGS];
  if (!args_fit(args, nargs, sig)) return LOOM_ERR_INVALID_ARGUMENT;
  const RtFuseRecord *r = rt_bundles_find_fuse(g->ctx, identity, nargs, sig);
  if (!r) return LOOM_OK;
  Diag d = {.status = LOOM_OK};
  if (cap < r->nout) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_fuse_build: %d outputs, room for %d", r->nout, cap);
    return ctx_report(g->ctx, &d);
  }
  for (int32_t j = 0; j < nargs; j++)
    if (args[j].kind == LOOM_FUSE_ARRAY) {
      int32_t x = args[j].node;
      const IrNode *in = x >= 0 && x < g->ir.nnodes ? &g->ir.nodes[x] : NULL;
      if (!in || in->kind != IR_INPUT || in->dtype != args[j].dtype || in->ndim != args[j].ndim) {
        diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_fuse_build: argument %d's node is not its input", (int)j);
        return ctx_report(g->ctx, &d);
      }
    }
  int32_t *map = ctx_alloc(g->ctx, (size_t)r->nnode * sizeof *map);
  if (!map) return LOOM_ERR_OUT_OF_MEMORY;
  int32_t mark = g->ir.nnodes;
  LoomStatus st = rt_fuse_replay(&g->ir, r, args, map, &d);
  if (st == LOOM_OK) {
    for (int32_t k = 0; k < r->nout; k++) outs[k] = map[r->outs[k]];
    for (int32_t k = 0; k < r->nwrite; k++) write_args[k] = r->write_args[k];
    *nout = r->nout;
    *nwrite = r->nwrite;
    *is_tuple = (r->flags & RF_FLAG_TUPLE) != 0;
    *found = 1;
  } else {
    ir_graph_rollback(&g->ir, mark, -1);
  }
  ctx_free(g->ctx, map);
  return st == LOOM_OK ? LOOM_OK : ctx_report(g->ctx, &d);
}

/* ---- recording -------------------------------------------------------------------------------------- */
typedef struct Pairing {
  const IrGraph *a, *b;
  const LoomFuseArg *aa, *ab;
  int32_t nargs;
  bool strict;     /* sizes and constant values must match too (the check of the rebuilt record) */
  int32_t *pair;   /* [a->nnodes]: the paired node of b, or -1 */
  int32_t *bind;   /* [a->nnodes]: a constant's scalar argument, or -1 (not strict) */
  IrGraph *scratch; /* for conversions of scalar values */
  const char *name;
  Diag *d;
} Pairing;

static const char *kind_word(uint8_t k) {
  static const char *const w[] = {"input", "constant", "elementwise op", "cast", "broadcast_to", "reshape", "transpose",
                                  "slice", "reduction", "copy", "matmul", "arange-like index (iota)", "scan"};
  return k < sizeof w / sizeof *w ? w[k] : "node";
}

static LoomStatus set_pair(Pairing *p, int32_t x, int32_t y) {
  if (x < 0 || x >= p->a->nnodes || y < 0 || y >= p->b->nnodes)
    return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "@loom.fuse %s: an output node is out of range", p->name);
  if (p->pair[x] >= 0 && p->pair[x] != y)
    return diag_error(p->d, LOOM_ERR_UNSUPPORTED,
                      "@loom.fuse %s: its graph is shaped differently at other sizes or scalar values (one node of a "
                      "trace stands for two of the other)", p->name);
  p->pair[x] = y;
  return LOOM_OK;
}

static bool same_value(const Scalar *x, const Scalar *y) { return x->u == y->u && !memcmp(&x->im, &y->im, sizeof x->im); }

/* Whether scalar argument a, as the record's constant n (dtype, weak flag), has value v. */
static bool scalar_gives(Pairing *p, const LoomFuseArg *a, const IrNode *n, const Scalar *v) {
  RtFuseNode rn = {.kind = IR_CONST, .dtype = n->dtype, .flags = n->flags};
  Diag quiet = {.status = LOOM_OK};
  int32_t x;
  if (rt_fuse_scalar_node(p->scratch, a, &rn, &x, &quiet) != LOOM_OK) return false;
  return p->scratch->nodes[x].dtype == n->dtype && same_value(&p->scratch->nodes[x].value, v);
}

static LoomStatus pair_node(Pairing *p, int32_t x) {
  const IrNode *na = &p->a->nodes[x], *nb = &p->b->nodes[p->pair[x]];
  uint8_t ma[LOOM_MAX_RANK] = {0}, mb[LOOM_MAX_RANK] = {0};
  bool unit = na->kind == IR_RESHAPE && nb->kind == IR_RESHAPE &&
              rt_fuse_unit_reshape(p->a->nodes[na->src[0]].ndim, p->a->nodes[na->src[0]].shape, na->ndim, na->shape, ma) &&
              rt_fuse_unit_reshape(p->b->nodes[nb->src[0]].ndim, p->b->nodes[nb->src[0]].shape, nb->ndim, nb->shape, mb) &&
              !memcmp(ma, mb, sizeof ma);
  if (na->kind == IR_SLICE && nb->kind == IR_SLICE)
    unit = rt_fuse_whole_slice(&p->a->nodes[na->src[0]], na, ma) && rt_fuse_whole_slice(&p->b->nodes[nb->src[0]], nb, mb) &&
           !memcmp(ma, mb, sizeof ma);
  if (na->kind == IR_BROADCAST || (na->kind == IR_RESHAPE && !unit) || (na->kind == IR_SLICE && !unit) || na->kind == IR_IOTA ||
      na->kind == IR_COPY || na->kind >= IR_KIND_COUNT)
    return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: its graph has a %s whose sizes are literal (they depend on "
                      "the call's sizes)", p->name, kind_word(na->kind));
  bool same = na->kind == nb->kind && na->op == nb->op && na->dtype == nb->dtype && na->ndim == nb->ndim &&
              na->flags == nb->flags && na->axes == nb->axes;
  if (same && (na->kind == IR_PERMUTE || (p->strict && na->kind == IR_SLICE)))
    same = !memcmp(na->arg, nb->arg, sizeof(int64_t) * na->ndim) &&
           (na->kind == IR_PERMUTE || !memcmp(na->arg2, nb->arg2, sizeof(int64_t) * na->ndim));
  if (same && p->strict) same = !memcmp(na->shape, nb->shape, sizeof(int64_t) * na->ndim);
  if (!same)
    return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: its graph differs at other sizes or scalar values (a %s "
                      "of %s and one of %s)", p->name, kind_word(na->kind), loom_dtype_name((LoomDType)na->dtype),
                      loom_dtype_name((LoomDType)nb->dtype));
  if (na->kind == IR_INPUT) {
    for (int32_t j = 0; j < p->nargs; j++)
      if (p->aa[j].kind == LOOM_FUSE_ARRAY && p->aa[j].node == x)
        return p->ab[j].kind == LOOM_FUSE_ARRAY && p->ab[j].node == p->pair[x]
                   ? LOOM_OK
                   : diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: argument %d is read differently", p->name, (int)j);
    return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: it reads an array that is not an argument (a global or "
                      "a closure's array: pass it as an argument)", p->name);
  }
  if (na->kind == IR_CONST) {
    int32_t found = -1, cands = 0;
    bool equal = same_value(&na->value, &nb->value);
    for (int32_t j = 0; j < p->nargs && !p->strict; j++) {
      if (p->aa[j].kind == LOOM_FUSE_ARRAY || !scalar_gives(p, &p->aa[j], na, &na->value)) continue;
      if (equal || scalar_gives(p, &p->ab[j], nb, &nb->value)) found = j, cands++;
    }
    if (!p->strict) {
      if (equal && cands)
        return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: a constant of its graph may be scalar argument %d's "
                          "value or a literal", p->name, (int)found);
      if (!equal && cands != 1)
        return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: a constant of its graph is computed from the sizes or "
                          "from scalar arguments (only a scalar argument itself can be bundled)", p->name);
      p->bind[x] = equal ? -1 : found;
    } else if (!equal) {
      return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: the rebuilt graph has another constant", p->name);
    }
  }
  for (int k = 0; k < ir_node_arity(na); k++) {
    LoomStatus st = set_pair(p, na->src[k], nb->src[k]);
    if (st) return st;
  }
  return LOOM_OK;
}

static LoomStatus pair_graphs(Pairing *p, int32_t nout, const int32_t *oa, const int32_t *ob) {
  for (int32_t i = 0; i < p->a->nnodes; i++) p->pair[i] = -1, p->bind[i] = -1;
  LoomStatus st = LOOM_OK;
  for (int32_t k = 0; k < nout && !st; k++) st = set_pair(p, oa[k], ob[k]);
  for (int32_t x = p->a->nnodes - 1; x >= 0 && !st; x--)
    if (p->pair[x] >= 0) st = pair_node(p, x);
  return st;
}

static LoomStatus add_fuse(LoomBundleBuilder *b, const char *name, const char *identity, int32_t nargs, IrGraph *ga,
                           const LoomFuseArg *aa, const LoomNode *oa, IrGraph *gb, const LoomFuseArg *ab,
                           const LoomNode *ob, int32_t nout, int32_t nwrite, const int32_t *write_args, int is_tuple,
                           IrGraph *scratch, int32_t *work, Diag *d) {
  RtFuseArg sig[RF_MAX_ARGS], sigb[RF_MAX_ARGS];
  if (!args_fit(aa, nargs, sig) || !args_fit(ab, nargs, sigb) || memcmp(sig, sigb, sizeof *sig * (size_t)nargs))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "@loom.fuse %s: the two traces' arguments differ in kind, dtype or rank", name);
  for (int32_t j = 0; j < nargs; j++)
    if (aa[j].kind == LOOM_FUSE_ARRAY && (aa[j].node < 0 || aa[j].node >= ga->nnodes || ab[j].node < 0 || ab[j].node >= gb->nnodes))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "@loom.fuse %s: argument %d's node is out of range", name, (int)j);
  int32_t *pair = work, *bind = work + ga->nnodes, *local = work + 2 * (size_t)ga->nnodes;
  Pairing p = {.a = ga, .b = gb, .aa = aa, .ab = ab, .nargs = nargs, .pair = pair, .bind = bind, .scratch = scratch,
               .name = name, .d = d};
  LoomStatus st = pair_graphs(&p, nout, oa, ob);
  if (st) return st;
  int32_t nn = 0;
  for (int32_t x = 0; x < ga->nnodes; x++) local[x] = pair[x] >= 0 ? nn++ : -1;
  if (nn == 0 || nn > RF_MAX_NODES)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: %d graph nodes (1 to %d can be bundled)", name, (int)nn, RF_MAX_NODES);
  RtFuseNode *nodes = ctx_calloc(ga->ctx, (size_t)nn, sizeof *nodes);
  int32_t *outs = ctx_calloc(ga->ctx, (size_t)nout + 1, sizeof *outs);
  int32_t *map = ctx_calloc(gb->ctx, (size_t)nn, sizeof *map);
  if (!nodes || !outs || !map) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse record");
  for (int32_t x = 0; x < ga->nnodes && !st; x++) {
    if (local[x] < 0) continue;
    const IrNode *n = &ga->nodes[x];
    RtFuseNode *r = &nodes[local[x]];
    *r = (RtFuseNode){.kind = n->kind, .dtype = n->dtype, .flags = n->flags, .ndim = n->ndim, .src = {-1, -1, -1}, .bind = -1};
    if (n->kind == IR_ELEM || n->kind == IR_REDUCE || n->kind == IR_SCAN) r->op = n->op;
    if (n->kind == IR_REDUCE || n->kind == IR_SCAN) r->axes = n->axes;
    for (int k = 0; k < ir_node_arity(n); k++) r->src[k] = local[n->src[k]];
    if (n->kind == IR_PERMUTE)
      for (int k = 0; k < n->ndim; k++) r->perm[k] = (uint8_t)n->arg[k];
    if (n->kind == IR_RESHAPE) /* a unit reshape (pair_node checked it) */
      (void)rt_fuse_unit_reshape(ga->nodes[n->src[0]].ndim, ga->nodes[n->src[0]].shape, n->ndim, n->shape, r->perm);
    if (n->kind == IR_SLICE) /* a whole slice (pair_node checked it) */
      (void)rt_fuse_whole_slice(&ga->nodes[n->src[0]], n, r->perm);
    if (n->kind == IR_INPUT)
      for (int32_t j = 0; j < nargs; j++)
        if (aa[j].kind == LOOM_FUSE_ARRAY && aa[j].node == x) r->bind = j;
    if (n->kind == IR_CONST) {
      r->bind = bind[x];
      if (r->bind < 0) r->value = n->value;
    }
  }
  for (int32_t k = 0; k < nout && !st; k++) outs[k] = local[oa[k]];
  /* the check: the record rebuilt with B's arrays and scalars is B's graph, sizes and values included */
  RtFuseRecord rec = {.name = name, .identity = identity, .nargs = nargs, .nnode = nn, .nout = nout, .nwrite = nwrite,
                      .nodes = nodes, .outs = outs, .write_args = write_args};
  LoomFuseArg rb[RF_MAX_ARGS];
  for (int32_t j = 0; j < nargs && !st; j++) {
    rb[j] = ab[j];
    if (ab[j].kind != LOOM_FUSE_ARRAY) continue;
    const IrNode *in = &gb->nodes[ab[j].node];
    if (in->kind != IR_INPUT) st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "@loom.fuse %s: argument %d is not an input", name, (int)j);
    else st = ir_input(scratch, &gb->inputs[in->input], &rb[j].node, d);
  }
  if (!st) st = rt_fuse_replay(scratch, &rec, rb, map, d);
  if (st && st != LOOM_ERR_OUT_OF_MEMORY && st != LOOM_ERR_UNSUPPORTED) {
    char why[sizeof d->msg];
    snprintf(why, sizeof why, "%s", d->msg);
    d->status = LOOM_OK;
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "@loom.fuse %s: its graph does not rebuild at other sizes (%.900s)", name, why);
  }
  if (!st) {
    int32_t *rout = ctx_calloc(ga->ctx, (size_t)nout + 1, sizeof *rout);
    int32_t *pw = ctx_calloc(ga->ctx, 2 * (size_t)scratch->nnodes + 1, sizeof *pw);
    if (!rout || !pw) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse record check");
    for (int32_t k = 0; k < nout && !st; k++) rout[k] = map[outs[k]];
    Pairing q = {.a = scratch, .b = gb, .aa = rb, .ab = ab, .nargs = nargs, .strict = true, .pair = pw,
                 .bind = pw + scratch->nnodes, .scratch = scratch, .name = name, .d = d};
    if (!st) st = pair_graphs(&q, nout, rout, ob);
    ctx_free(ga->ctx, rout);
    ctx_free(ga->ctx, pw);
  }
  if (!st && !b->fuse) st = rt_fuse_writer_create(b->ctx, &b->fuse, d);
  bool dup = false;
  if (!st)
    st = rt_fuse_writer_add(b->fuse, name, identity, nargs, sig, nn, nodes, nout, outs, nwrite, write_args,
                            is_tuple ? RF_FLAG_TUPLE : 0, &dup, d);
  ctx_free(ga->ctx, nodes);
  ctx_free(ga->ctx, outs);
  ctx_free(gb->ctx, map);
  return st;
}

LOOM_API LoomStatus loom_bundle_builder_add_fuse(LoomBundleBuilder *b, const char *name, const char *identity,
                                                 int32_t nargs, LoomGraph *ga, const LoomFuseArg *args_a,
                                                 const LoomNode *outs_a, LoomGraph *gb, const LoomFuseArg *args_b,
                                                 const LoomNode *outs_b, int32_t nout, int32_t nwrite,
                                                 const int32_t *write_args, int is_tuple) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  if (!name || !*name || !identity || !*identity || !ga || !gb || !args_a || !args_b || nargs < 1 || nargs > RF_MAX_ARGS ||
      nout < 0 || nout > RF_MAX_OUTS || nwrite < 0 || nwrite > nout || (nout && (!outs_a || !outs_b)) ||
      (nwrite && !write_args)) {
    diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_builder_add_fuse: a name, an identity, two graphs, 1 to %d "
               "arguments and at most %d outputs", RF_MAX_ARGS, RF_MAX_OUTS);
    return ctx_report(b->ctx, &d);
  }
  for (int32_t k = 0; k < nwrite; k++)
    if (write_args[k] < 0 || write_args[k] >= nargs || args_a[write_args[k]].kind != LOOM_FUSE_ARRAY) {
      diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_builder_add_fuse: written argument %d is not an array", write_args[k]);
      return ctx_report(b->ctx, &d);
    }
  IrGraph scratch;
  LoomStatus st = ir_graph_init(&scratch, b->ctx, &d);
  bool have_scratch = st == LOOM_OK;
  int32_t *work = st ? NULL : ctx_calloc(b->ctx, 3 * (size_t)ga->ir.nnodes + 1, sizeof *work);
  if (!st && !work) st = diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: fuse record");
  if (!st)
    st = add_fuse(b, name, identity, nargs, &ga->ir, args_a, outs_a, &gb->ir, args_b, outs_b, nout, nwrite, write_args,
                  is_tuple, &scratch, work, &d);
  ctx_free(b->ctx, work);
  if (have_scratch) ir_graph_free(&scratch);
  return st == LOOM_OK ? LOOM_OK : ctx_report(b->ctx, &d);
}
