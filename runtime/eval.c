/* SPDX-License-Identifier: Apache-2.0 */
/* eval.c: loom_eval: one evaluation flow for every device (device.h); its plans are eval_plan.c's, loom_dump
 * is eval_dump.c (eval_internal.h).
 *
 * loom_eval: check the arguments at the boundary; find the one device every reachable input and every
 * given output is on (the host when there are none), loading its driver; allocate the outputs the
 * caller left empty (C-contiguous, from that device's pool); for a given output whose bytes overlap an
 * input or another given output, evaluate into a fresh contiguous temporary and write it into the given
 * array at the end (compiled kernels treat their buffers as noalias; the device's write_strided, else a
 * copy kernel, in stream order). Then a plan: the graph's cached one for these roots and layouts, else
 * pass_run_pipeline -> Schedule with its kernels prepared (pinned) on the device; the device runs the
 * schedule. Everything allocated here is freed on every path, and on failure the caller's descriptors
 * are left as they were. The per-call work is kept small for the launch path: bookkeeping on the
 * stack for up to 4 outputs, clocks read only when timings are dumped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/eval_internal.h"

static size_t itemsize_of(LoomDType t) { return (size_t)dtype_bits(t) / 8; }

/* A Diag ready for use without zeroing its 1 KiB message (an initializer would, on every call). */
#define DIAG_OK(name)                                                                                             \
  Diag name;                                                                                                      \
  name.status = LOOM_OK;                                                                                          \
  name.msg[0] = '\0'


static const char *dtype_label(LoomDType t) {
  const char *s = loom_dtype_name(t);
  return s ? s : "(invalid dtype)";
}

/* "(2,3)" or "()" into buf. */
static const char *shape_str(char *buf, size_t cap, int ndim, const int64_t *shape) {
  size_t n = 0;
  buf[0] = '\0';
  n += (size_t)snprintf(buf + n, cap - n, "(");
  for (int i = 0; i < ndim && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (ndim == 1 && n < cap) n += (size_t)snprintf(buf + n, cap - n, ",");
  if (n < cap) snprintf(buf + n, cap - n, ")");
  return buf;
}

/* ---- argument checks and output arrays ------------------------------------------------------------ */
LoomStatus rt_eval_check_nodes(const LoomGraph *g, int32_t n, const LoomNode *nodes, const char *fn, Diag *d) {
  if (n < 1) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: n is %d; pass at least one node", fn, n);
  if (!nodes) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: nodes is NULL", fn);
  for (int32_t i = 0; i < n; i++)
    if (nodes[i] < 0 || nodes[i] >= g->ir.nnodes)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "%s: nodes[%d] = %d is not a node of this graph (it has %d nodes)", fn, i,
                        nodes[i], g->ir.nnodes);
  return LOOM_OK;
}

void rt_eval_describe_contiguous(LoomArray *a, const IrNode *nd, void *data) {
  memset(a, 0, sizeof *a);
  a->data = data;
  a->dtype = (LoomDType)nd->dtype;
  a->ndim = nd->ndim;
  int64_t stride = 1;
  for (int i = nd->ndim - 1; i >= 0; i--) {
    a->shape[i] = nd->shape[i];
    a->strides[i] = stride;
    stride *= nd->shape[i] > 1 ? nd->shape[i] : 1;
  }
  a->device = LOOM_DEVICE_HOST;
  a->device_index = 0;
}

/* Byte extent [lo, hi) of an array's elements, relative to address 0; false when it has no
 * elements. Computed in 128 bits so that no stride, however large, can wrap around. */
static bool byte_extent(const LoomArray *a, __int128 *lo, __int128 *hi) {
  if (!a->data || a->ndim < 0 || a->ndim > LOOM_MAX_RANK) return false;
  __int128 mn = 0, mx = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] <= 0) return false;
    __int128 span = (__int128)(a->shape[i] - 1) * a->strides[i];
    if (span < 0) mn += span; else mx += span;
  }
  __int128 isz = (__int128)itemsize_of(a->dtype);
  if (isz <= 0) isz = 1;
  __int128 base = (__int128)(uintptr_t)a->data;
  *lo = base + mn * isz;
  *hi = base + (mx + 1) * isz;
  return true;
}

/* need[i] (n entries, zeroed by the caller): given output i must be evaluated into a temporary, as
 * its bytes overlap an input on its device or another given output (compiled kernels treat their
 * buffers as noalias). One sort of the byte extents and a sweep: O((n + inputs) log), not O(n^2).
 * An extent overlaps another iff one that starts no later ends after its start, or the next one
 * starts before its end. */
typedef struct Extent {
  __int128 lo, hi;
  int32_t out; /* output index, or -1 for an input */
} Extent;

static int extent_cmp(const void *a, const void *b) {
  const Extent *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  return x->out < y->out ? -1 : x->out > y->out;
}

static LoomStatus outs_needing_temps(LoomContext *ctx, const LoomGraph *g, int32_t n, const LoomArray *outs,
                                     bool *need, Diag *d) {
  int32_t first = -1;
  for (int32_t i = 0; i < n && first < 0; i++)
    if (outs[i].data) first = i;
  if (first < 0) return LOOM_OK;
  size_t cap = (size_t)n + (size_t)g->ir.ninputs;
  Extent *e = ctx_alloc(ctx, cap * sizeof *e);
  if (!e) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval overlap check of %d outputs", n);
  size_t m = 0;
  for (int32_t i = 0; i < n; i++)
    if (outs[i].data && byte_extent(&outs[i], &e[m].lo, &e[m].hi)) e[m++].out = i;
  for (int32_t j = 0; j < g->ir.ninputs; j++)
    if (g->ir.inputs[j].device == outs[first].device && byte_extent(&g->ir.inputs[j], &e[m].lo, &e[m].hi))
      e[m++].out = -1;
  qsort(e, m, sizeof *e, extent_cmp);
  __int128 maxhi = 0;
  for (size_t k = 0; k < m; k++) {
    bool before = k > 0 && maxhi > e[k].lo, after = k + 1 < m && e[k + 1].lo < e[k].hi;
    if (e[k].out >= 0 && (before || after)) need[e[k].out] = true;
    if (k == 0 || e[k].hi > maxhi) maxhi = e[k].hi;
  }
  ctx_free(ctx, e);
  return LOOM_OK;
}

/* Whether an array's elements are all distinct memory: false when two indices reach one element
 * (a stride 0 on an axis longer than 1, or strides that interleave), which an output must not do
 * (every result would land on a few elements). A sufficient test first (sorted by |stride|, each
 * stride passes the span of the smaller ones); otherwise the offsets are enumerated and sorted when
 * there are at most 2^20 of them. *unknown: too large to decide. */
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static __int128 abs128(int64_t v) { return v < 0 ? -(__int128)v : (__int128)v; }

static bool elements_distinct(LoomContext *ctx, const LoomArray *a, bool *unknown) {
  *unknown = false;
  int64_t numel = ir_numel(a->ndim, a->shape);
  if (numel <= 1) return true;
  int dims[LOOM_MAX_RANK], nd = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] <= 1) continue;
    if (a->strides[i] == 0) return false;
    int k = nd++;
    while (k > 0 && abs128(a->strides[dims[k - 1]]) > abs128(a->strides[i])) {
      dims[k] = dims[k - 1];
      k--;
    }
    dims[k] = i;
  }
  __int128 span = 0;
  bool simple = true;
  for (int k = 0; k < nd && simple; k++) {
    __int128 st = abs128(a->strides[dims[k]]);
    if (st <= span) simple = false;
    span += st * (a->shape[dims[k]] - 1);
  }
  if (simple) return true;
  if (numel > (1 << 20)) {
    *unknown = true;
    return false;
  }
  int64_t *off = ctx_alloc(ctx, (size_t)numel * sizeof *off);
  if (!off) {
    *unknown = true;
    return false;
  }
  int64_t idx[LOOM_MAX_RANK] = {0}, cur = 0;
  for (int64_t e = 0; e < numel; e++) {
    off[e] = cur;
    for (int i = a->ndim - 1; i >= 0; i--) {
      if (++idx[i] < a->shape[i]) {
        cur += a->strides[i];
        break;
      }
      cur -= a->strides[i] * (a->shape[i] - 1);
      idx[i] = 0;
    }
  }
  qsort(off, (size_t)numel, sizeof *off, cmp_i64);
  bool distinct = true;
  for (int64_t e = 1; e < numel && distinct; e++) distinct = off[e] != off[e - 1];
  ctx_free(ctx, off);
  return distinct;
}

/* Per output: where the kernels write it, and what must happen afterwards. */
typedef struct OutPlan {
  void *owned;   /* allocated here: a new output (kept on success) or a temporary (always freed) */
  bool is_temp;  /* owned is a temporary copied into the caller's array afterwards */
  size_t bytes;
} OutPlan;

static LoomStatus check_outs(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                             Diag *d) {
  char s1[256], s2[256];
  for (int32_t i = 0; i < n; i++) {
    const LoomArray *o = &outs[i];
    if (!o->data) continue;
    const IrNode *nd = &g->ir.nodes[nodes[i]];
    if (!rt_device(o->device)) {
      char kinds[64];
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_eval: outs[%d] is on device kind %d; this build has %s", i,
                        (int)o->device, rt_device_kinds(kinds, sizeof kinds));
    }
    if (o->device == LOOM_DEVICE_HOST ? o->device_index != 0 : o->device_index < 0)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_eval: outs[%d] has device_index %d; %s", i,
                        (int)o->device_index, o->device == LOOM_DEVICE_HOST ? "the host is device 0" : "it must be >= 0");
    if (o->dtype != (LoomDType)nd->dtype)
      return diag_error(d, LOOM_ERR_DTYPE, "loom_eval: outs[%d] has dtype %s but node %d has dtype %s",
                        i, dtype_label(o->dtype), nodes[i], dtype_label((LoomDType)nd->dtype));
    bool same = o->ndim == nd->ndim;
    for (int k = 0; same && k < o->ndim; k++) same = o->shape[k] == nd->shape[k];
    if (!same) {
      if (o->ndim < 0 || o->ndim > LOOM_MAX_RANK)
        return diag_error(d, LOOM_ERR_SHAPE, "loom_eval: outs[%d] has ndim %d but node %d has shape %s",
                          i, o->ndim, nodes[i], shape_str(s2, sizeof s2, nd->ndim, nd->shape));
      return diag_error(d, LOOM_ERR_SHAPE, "loom_eval: outs[%d] has shape %s but node %d has shape %s", i,
                        shape_str(s1, sizeof s1, o->ndim, o->shape), nodes[i],
                        shape_str(s2, sizeof s2, nd->ndim, nd->shape));
    }
    if (!ir_array_span_ok(o))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "loom_eval: outs[%d]'s shape and strides span more than 2^62 bytes; no array is that large", i);
    bool unknown;
    if (!elements_distinct(g->ctx, o, &unknown))
      return diag_error(d, unknown ? LOOM_ERR_UNSUPPORTED : LOOM_ERR_INVALID_ARGUMENT,
                        "loom_eval: outs[%d] %s (strides %s): several results would be written to one element; "
                        "pass an output whose elements are distinct (e.g. C-contiguous)", i,
                        unknown ? "may reach one element through two indices" : "reaches one element through two indices",
                        shape_str(s1, sizeof s1, o->ndim, o->strides));
  }
  return LOOM_OK;
}

static void dump_text(LoomContext *ctx, const char *title, const char *text) {
  rt_dump_printf(ctx, "; ---- %s ----\n%s", title, text ? text : "(out of memory)\n");
}

/* ---- device of an evaluation ----------------------------------------------------------------------------
 * The device every input reachable from the roots and every given output is on (the host when there
 * are none); two different devices are an error naming both. Fast path: a graph whose inputs and
 * outputs are all host arrays needs no walk. Every non-host device kind seen is opened (its driver
 * loaded) first, so that a missing driver is reported before a mixed-device error. */
static LoomStatus eval_device(LoomGraph *g, int32_t n, const LoomNode *nodes, const LoomArray *outs,
                              LoomDeviceKind *dk, int32_t *di, Diag *d) {
  bool all_host = true;
  for (int32_t i = 0; i < g->ir.ninputs && all_host; i++) all_host = g->ir.inputs[i].device == LOOM_DEVICE_HOST;
  for (int32_t i = 0; i < n && all_host; i++) all_host = !outs[i].data || outs[i].device == LOOM_DEVICE_HOST;
  *dk = LOOM_DEVICE_HOST;
  *di = 0;
  if (all_host) return LOOM_OK;
  /* Only inputs reachable from the roots count. Without a driver, a reachable device array gets
   * its kind's open error ("no CUDA driver") before the mixed-device error, so mixed-device errors are
   * kept aside (dm). */
  Diag dm = {.status = LOOM_OK};
  Diag *dout = d;
  d = &dm;
  uint32_t kinds = 0; /* bit per device kind seen */
  for (int32_t i = 0; i < n; i++)
    if (outs[i].data) kinds |= 1u << ((unsigned)outs[i].device & 31u);
  uint8_t *mark = ctx_calloc(g->ctx, (size_t)g->ir.nnodes + 1, 1);
  if (!mark) return diag_error(dout, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval device check");
  bool found = false;
  const char *what = "";
  int32_t what_i = 0;
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < n; i++) mark[nodes[i]] = 1;
  for (int32_t i = g->ir.nnodes - 1; i >= 0 && st == LOOM_OK; i--) {
    if (!mark[i]) continue;
    const IrNode *nd = &g->ir.nodes[i];
    for (int j = 0; j < 3; j++)
      if (nd->src[j] >= 0 && nd->src[j] < g->ir.nnodes) mark[nd->src[j]] = 1;
    if (nd->kind != IR_INPUT || nd->input < 0 || nd->input >= g->ir.ninputs) continue;
    const LoomArray *a = &g->ir.inputs[nd->input];
    kinds |= 1u << ((unsigned)a->device & 31u);
    if (!found) {
      *dk = a->device;
      *di = a->device_index;
      found = true;
      what = "input node";
      what_i = i;
    } else if (a->device != *dk || a->device_index != *di) {
      char b1[32], b2[32];
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_eval: %s %d is on %s but input node %d is on %s; all arrays of one evaluation must be "
                      "on one device (copy one with loom_array_copy)", what, what_i, rt_device_label(b1, sizeof b1, *dk, *di), i,
                      rt_device_label(b2, sizeof b2, a->device, a->device_index));
    }
  }
  ctx_free(g->ctx, mark);
  d = dout;
  for (unsigned kind = 0; kind < 32; kind++) {
    if (!(kinds & (1u << kind)) || kind == LOOM_DEVICE_HOST) continue;
    const RtDevice *dev = rt_device((LoomDeviceKind)kind);
    if (!dev) {
      char have[64];
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "loom_eval: an array is on device kind %u; this build has %s", kind,
                        rt_device_kinds(have, sizeof have));
    }
    LoomStatus gs = dev->open(g->ctx, d);
    if (gs != LOOM_OK) return gs;
  }
  if (st != LOOM_OK) {
    *d = dm;
    return st;
  }
  for (int32_t i = 0; i < n && st == LOOM_OK; i++) {
    if (!outs[i].data) continue;
    if (!found) {
      *dk = outs[i].device;
      *di = outs[i].device_index;
      found = true;
      what = "outs[] entry";
      what_i = i;
    } else if (outs[i].device != *dk || outs[i].device_index != *di) {
      char b1[32], b2[32];
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "loom_eval: %s %d is on %s but outs[%d] is on %s; all arrays of one evaluation must be on one "
                      "device (copy one with loom_array_copy)", what, what_i, rt_device_label(b1, sizeof b1, *dk, *di), i,
                      rt_device_label(b2, sizeof b2, outs[i].device, outs[i].device_index));
    }
  }
  return st;
}

/* ---- the evaluation ---------------------------------------------------------------------------------- */

/* Writes the contiguous temporary tmp into out (any strides), both on the device: the device's own copy,
 * else a copy kernel of a scratch graph whose root is tmp itself (evaluated into out). */
static LoomStatus evaluate(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs, LoomDeviceKind dk,
                           int32_t di, RtPlan *known, Diag *d);
static LoomStatus write_back(LoomContext *ctx, const RtDevice *dev, const LoomArray *tmp, LoomArray *out, Diag *d) {
  if (dev->write_strided) return dev->write_strided(ctx, tmp, out, d);
  LoomGraph *g2 = NULL;
  LoomStatus st = loom_graph_create(ctx, &g2);
  if (st != LOOM_OK) return diag_error(d, st, "out of memory: in-place copy graph");
  LoomNode src;
  st = loom_input(g2, tmp, &src);
  if (st == LOOM_OK) st = evaluate(g2, 1, &src, out, tmp->device, tmp->device_index, NULL, d);
  else diag_error(d, st, "in-place copy: %s", loom_last_error(ctx));
  loom_graph_destroy(g2);
  return st;
}

/* The evaluation on device (dk, di), arguments checked; known: a plan rt_plan_find_fresh found, or NULL. */
static LoomStatus evaluate(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs, LoomDeviceKind dk,
                           int32_t di, RtPlan *known, Diag *d) {
  LoomContext *ctx = g->ctx;
  const RtDevice *dev = rt_device(dk);
  uint32_t flags = ctx->dump_flags;
  bool timed = (flags & IR_DUMP_TIME) != 0;
  double t0 = timed ? rt_now_ms() : 0, t_alloc = 0, t_plan = 0, t_run = 0;
  LoomStatus st = LOOM_OK;
  uint64_t extra_bytes = 0;
  /* bookkeeping: on the stack for up to 4 outputs */
  OutPlan stack_plan[4];
  LoomArray stack_outs[4];
  void *stack_data[4];
  OutPlan *plan = stack_plan;
  LoomArray *mod_outs = stack_outs;
  void **out_data = stack_data;
  bool stack_needs[4];
  bool *needs = stack_needs; /* given output i overlaps an input or another output */
  void *heap = NULL;
  if (n > 4) {
    size_t each = sizeof *plan + sizeof *mod_outs + sizeof *out_data + sizeof *needs;
    heap = ctx_alloc(ctx, (size_t)n * each);
    if (!heap) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: loom_eval bookkeeping for %d outputs", n);
    mod_outs = heap;
    plan = (OutPlan *)(void *)(mod_outs + n);
    out_data = (void **)(void *)(plan + n);
    needs = (bool *)(void *)(out_data + n);
  }
  memset(plan, 0, (size_t)n * sizeof *plan);
  memset(needs, 0, (size_t)n * sizeof *needs);
  if ((st = outs_needing_temps(ctx, g, n, outs, needs, d)) != LOOM_OK) goto fail;

  for (int32_t i = 0; i < n; i++) {
    const IrNode *nd = &g->ir.nodes[nodes[i]];
    bool need_temp = outs[i].data && needs[i];
    if (outs[i].data && !need_temp) {
      mod_outs[i] = outs[i];
      out_data[i] = outs[i].data;
      continue;
    }
    size_t isz = itemsize_of((LoomDType)nd->dtype), bytes;
    int64_t numel = ir_numel(nd->ndim, nd->shape);
    if (numel < 0 || __builtin_mul_overflow((size_t)numel, isz, &bytes)) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: output %d is too large", i);
      goto fail;
    }
    void *p = NULL;
    DIAG_OK(ad);
    if (dev->alloc(ctx, di, bytes, &p, &ad) != LOOM_OK) {
      st = ad.status == LOOM_ERR_OUT_OF_MEMORY
               ? diag_error(d, ad.status, "out of memory: %s %d of %zu bytes (%s)",
                            need_temp ? "temporary for output" : "output", i, bytes, ad.msg)
               : diag_error(d, ad.status, "%s", ad.msg);
      goto fail;
    }
    plan[i].owned = p;
    plan[i].is_temp = need_temp;
    plan[i].bytes = bytes;
    if (need_temp) extra_bytes += bytes;
    rt_eval_describe_contiguous(&mod_outs[i], nd, p);
    mod_outs[i].device = dk;
    mod_outs[i].device_index = di;
    out_data[i] = p;
  }
  if (timed) t_alloc = rt_now_ms();

  if (flags & IR_DUMP_GRAPH) {
    StrBuf gb;
    sb_init(&gb, ctx);
    ir_print_graph(&g->ir, n, nodes, &gb);
    char *text = sb_take(&gb);
    dump_text(ctx, "graph of the requested nodes", text);
    ctx_free(ctx, text);
  }

  /* With dumps asked for, every evaluation runs the passes (and prints them) on a throwaway plan. */
  bool keep = flags == 0, fresh = true;
  for (int32_t i = 0; i < n; i++) fresh = fresh && !outs[i].data;
  RtPlan *rp = known ? known : keep ? rt_plan_find(g, n, nodes, mod_outs, dk, di) : NULL;
  RtPlanKey key; /* another graph's plan of the same structure (plan_cache.c) */
  bool keyed = !rp && keep && rt_plan_key_make(g, n, nodes, mod_outs, dk, di, fresh, &key);
  if (keyed) rp = rt_plan_cache_find(g, &key, n, nodes, mod_outs, dk, di, fresh);
  if (rp) { /* its kernels are reused compiled kernels: count them as cache hits */
    pthread_mutex_lock(&ctx->rt->stats_lock);
    ctx->rt->stats.cache_hits += (uint64_t)rp->schedule->nkernel;
    pthread_mutex_unlock(&ctx->rt->stats_lock);
  } else {
    StrBuf dump;
    sb_init(&dump, ctx);
    st = rt_plan_make(g, n, nodes, mod_outs, dk, di, keep, fresh,
                   (flags & (IR_DUMP_GRAPH | IR_DUMP_KERNELS | IR_DUMP_TIME)) ? &dump : NULL, &rp, d);
    if (st == LOOM_OK && keyed) rt_plan_cache_insert(ctx, &key, rp, &g->ir);
    if (dump.len > 0) {
      dump_text(ctx, "passes", dump.s);
    } else if (st == LOOM_OK && (flags & IR_DUMP_KERNELS)) {
      StrBuf kb;
      sb_init(&kb, ctx);
      ir_print_schedule(rp->schedule, &kb);
      char *text = sb_take(&kb);
      dump_text(ctx, "kernels", text);
      ctx_free(ctx, text);
    }
    sb_free(&dump);
  }
  if (keyed) rt_plan_key_free(ctx, &key);
  if (timed) t_plan = rt_now_ms();
  if (st != LOOM_OK) goto fail;

  RtRun run = {.graph = &g->ir, .schedule = rp->schedule, .pinned = rp->kernels, .out_data = out_data, .nouts = n,
               .extra_temp_bytes = extra_bytes, .input_map = rp->input_map, .ninput_map = rp->ninput_map};
  st = dev->run_schedule(ctx, di, &run, d);
  if (!keep) rt_plan_free(ctx, rp);
  if (timed) t_run = rt_now_ms();
  if (st != LOOM_OK) goto fail;

  bool temps = false;
  for (int32_t i = 0; i < n && st == LOOM_OK; i++)
    if (plan[i].is_temp) {
      temps = true;
      st = write_back(ctx, dev, &mod_outs[i], &outs[i], d);
    }
  if (temps && dev->settle) dev->settle(ctx, di); /* the pool is stream-blind: the stream must be done with them */
  if (st != LOOM_OK) goto fail;
  for (int32_t i = 0; i < n; i++) {
    if (plan[i].is_temp) {
      DIAG_OK(fd);
      dev->free(ctx, di, plan[i].owned, plan[i].bytes, &fd);
    } else if (!outs[i].data) {
      outs[i] = mod_outs[i]; /* allocated here (an empty output may have no bytes: owned NULL) */
    }
    plan[i].owned = NULL;
  }
  if (timed)
    rt_dump_printf(ctx, "# time eval (%s:%d): alloc %.3f plan %.3f run %.3f (kernels, launches) finish %.3f ms\n",
            dev->name, (int)di, t_alloc - t0, t_plan - t_alloc, t_run - t_plan, rt_now_ms() - t_run);
  ctx_free(ctx, heap);
  return LOOM_OK;

fail:
  for (int32_t i = 0; i < n; i++)
    if (plan[i].owned) {
      DIAG_OK(fd);
      dev->free(ctx, di, plan[i].owned, plan[i].bytes, &fd);
    }
  ctx_free(ctx, heap);
  return st;
}

static LoomStatus eval_impl(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs, Diag *d) {
  LoomContext *ctx = g->ctx;
  if (!ctx->rt) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_eval: the context has no runtime");
  LoomStatus st = rt_eval_check_nodes(g, n, nodes, "loom_eval", d);
  if (st != LOOM_OK) return st;
  if (!outs) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "loom_eval: outs is NULL; pass n LoomArray "
                                                             "descriptors (data NULL to allocate)");
  st = check_outs(g, n, nodes, outs, d);
  if (st != LOOM_OK) return st;
  RtPlan *known = ctx->dump_flags == 0 ? rt_plan_find_fresh(g, n, nodes, outs) : NULL;
  if (known) return evaluate(g, n, nodes, outs, known->device, known->device_index, known, d);
  LoomDeviceKind dk = LOOM_DEVICE_HOST;
  int32_t di = 0;
  st = eval_device(g, n, nodes, outs, &dk, &di, d);
  if (st != LOOM_OK) return st;
  return evaluate(g, n, nodes, outs, dk, di, NULL, d);
}

LOOM_API LoomStatus loom_eval(LoomGraph *g, int32_t n, const LoomNode *nodes, LoomArray *outs) {
  if (!g || !g->ctx) return LOOM_ERR_INVALID_ARGUMENT;
  DIAG_OK(d);
  LoomStatus st = eval_impl(g, n, nodes, outs, &d);
  if (st == LOOM_OK) return LOOM_OK;
  if (d.status == LOOM_OK) diag_error(&d, st, "loom_eval failed (%s)", loom_status_name(st));
  return ctx_report(g->ctx, &d);
}
