/* SPDX-License-Identifier: Apache-2.0 */
/* graph.c: the graph IR: storage, hash-consing, inputs and constants. The other validating
 * constructors are in graph_elementwise.c and graph_nodes.c (see graph_internal.h).
 *
 * Approach: nodes live in one growable array; an open-addressing table (linear probing, load <= 1/2)
 * maps structural hashes to node indices, so building an equal node returns the existing index.
 * Every node is canonicalized before hashing (unused fields zeroed or -1), so hash and equality can
 * read the same fixed list of fields. Capacity is reserved before anything is appended, so an
 * allocation failure leaves the graph unchanged; constructors that add helper nodes (resolved weak
 * constants) roll back to a mark on error. Shapes and dtypes are inferred eagerly, NumPy 2 rules.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph_internal.h"

/* ---- helpers -------------------------------------------------------------------------------------- */
int64_t ir_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0) return 0;
    if (shape[i] < 0 || n > INT64_MAX / shape[i]) return -1;
    n *= shape[i];
  }
  return n;
}

bool ir_array_span_ok(const LoomArray *a) {
  if (a->ndim < 0 || a->ndim > LOOM_MAX_RANK) return false;
  if (ir_numel(a->ndim, a->shape) == 0) return true;
  __int128 span = 0, limit = (__int128)1 << 62;
  for (int i = 0; i < a->ndim; i++) {
    __int128 st = a->strides[i] < 0 ? -(__int128)a->strides[i] : (__int128)a->strides[i];
    span += (__int128)(a->shape[i] - 1) * st; /* each term < 2^126: no overflow */
    if (span > limit) return false;
  }
  int isz = dtype_bits(a->dtype) / 8;
  return span * (isz > 0 ? isz : 1) <= limit;
}

void ir_format_shape(char *buf, size_t n, int ndim, const int64_t *shape) {
  if (!buf || n == 0) return;
  size_t len = 0;
  buf[0] = '\0';
  len += (size_t)snprintf(buf + len, n - len, "(");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (len < n) len += (size_t)snprintf(buf + len, n - len, ndim == 1 ? ",)" : ")");
}

/* In-memory hashing only (never stored): cache keys, input descriptors, instructions. Eight bytes per step
 * (a multiply-rotate mix, as node_hash's hash_word), the tail zero-padded with its length folded in, so
 * keys of a kilobyte cost about a hundred steps instead of a thousand byte-wise FNV rounds. */
uint64_t ir_hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull ^ seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h ^= w * 0x9e3779b97f4a7c15ull;
    h = (h << 27) | (h >> 37);
    h *= 0xc2b2ae3d27d4eb4full;
  }
  if (i < n) {
    uint64_t w = 0;
    memcpy(&w, b + i, n - i);
    h ^= w * 0x9e3779b97f4a7c15ull;
    h = (h << 27) | (h >> 37);
    h *= 0xc2b2ae3d27d4eb4full;
  }
  h ^= h >> 33; /* final mix: spread the high bits into the low bits the tables use */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* double -> nearest float16 value (ties to even), returned as a double. */
static double round_f16(double x) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  double ax = fabs(x);
  if (ax >= 65520.0) return copysign(INFINITY, x);
  int e;
  frexp(ax, &e); /* ax = m * 2^e, m in [0.5, 1) */
  int q = e - 1 - 10;
  if (q < -24) q = -24; /* subnormals: fixed quantum 2^-24 */
  double r = nearbyint(ldexp(ax, -q));
  return copysign(ldexp(r, q), x);
}

/* double -> nearest bfloat16 value (ties to even, from the double itself: no double rounding). */
static double round_bf16(double x) {
  if (isnan(x) || isinf(x) || x == 0) return x;
  double ax = fabs(x);
  int e;
  frexp(ax, &e);
  int q = e - 1 - 7;
  if (q < -133) q = -133; /* subnormals: fixed quantum 2^-133 */
  double r = nearbyint(ldexp(ax, -q));
  r = ldexp(r, q);
  if (r > 3.3895313892515355e38) r = INFINITY; /* past the largest bfloat16 (0x7f7f) */
  return copysign(r, x);
}

static double canon_part(LoomDType t, double f) {
  if (isnan(f)) return NAN;
  return t == LOOM_FLOAT32 ? (double)(float)f : f;
}

Scalar ir_scalar_canon(LoomDType dtype, Scalar v) {
  Scalar r = v;
  r.im = 0;
  switch (dtype) {
  case LOOM_BOOL: r.u = v.u != 0; break;
  case LOOM_INT8: r.i = (int8_t)(uint8_t)(v.u & 0xff); break;
  case LOOM_INT16: r.i = (int16_t)(uint16_t)(v.u & 0xffff); break;
  case LOOM_INT32: r.i = (int32_t)(uint32_t)(v.u & 0xffffffffu); break;
  case LOOM_INT64: break;
  case LOOM_UINT8: r.u = v.u & 0xff; break;
  case LOOM_UINT16: r.u = v.u & 0xffff; break;
  case LOOM_UINT32: r.u = v.u & 0xffffffffu; break;
  case LOOM_UINT64: break;
  case LOOM_FLOAT16: r.f = isnan(v.f) ? NAN : round_f16(v.f); break;
  case LOOM_FLOAT32: r.f = isnan(v.f) ? NAN : (double)(float)v.f; break;
  case LOOM_FLOAT64: r.f = isnan(v.f) ? NAN : v.f; break;
  case LOOM_BFLOAT16: r.f = isnan(v.f) ? NAN : round_bf16(v.f); break;
  case LOOM_COMPLEX64:
  case LOOM_COMPLEX128:
    r.f = canon_part(dtype_real_of(dtype), v.f);
    r.im = canon_part(dtype_real_of(dtype), v.im);
    break;
  default: break;
  }
  return r;
}

/* ---- storage and hash-consing ----------------------------------------------------------------------- */
LoomStatus ir_graph_init(IrGraph *g, LoomContext *ctx, Diag *d) {
  memset(g, 0, sizeof *g);
  g->ctx = ctx;
  g->cap = 64;
  g->tcap = 128;
  g->incap = 8;
  g->nodes = ctx_alloc(ctx, sizeof(IrNode) * (size_t)g->cap);
  g->table = ctx_alloc(ctx, sizeof(int32_t) * (size_t)g->tcap);
  g->inputs = ctx_alloc(ctx, sizeof(LoomArray) * (size_t)g->incap);
  if (!g->nodes || !g->table || !g->inputs) {
    ir_graph_free(g);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory creating a graph (%zu bytes)",
                      sizeof(IrNode) * 64 + 128 * sizeof(int32_t) + 8 * sizeof(LoomArray));
  }
  for (int32_t i = 0; i < g->tcap; i++) g->table[i] = -1;
  return LOOM_OK;
}

void ir_graph_free(IrGraph *g) {
  if (!g) return;
  ctx_free(g->ctx, g->nodes);
  ctx_free(g->ctx, g->table);
  ctx_free(g->ctx, g->inputs);
  ctx_free(g->ctx, g->intable);
  ctx_free(g->ctx, g->bound);
  ctx_free(g->ctx, g->bound_at);
  g->bound = NULL;
  g->bound_at = NULL;
  g->nbound = g->boundcap = 0;
  g->nodes = NULL;
  g->table = NULL;
  g->inputs = NULL;
  g->intable = NULL;
  g->nnodes = g->cap = g->tcap = g->ninputs = g->incap = g->intcap = 0;
}

/* One 64-bit word into the node hash (a multiply-rotate mix: word at a time, where a byte-wise FNV took
 * about a fifth of the lazy API's per-op time). */
static inline uint64_t hash_word(uint64_t h, uint64_t w) {
  h ^= w * 0x9e3779b97f4a7c15ull;
  h = (h << 27) | (h >> 37);
  return h * 0xc2b2ae3d27d4eb4full;
}

/* In-memory hash-consing only (never stored): over the canonical fields (node_canon). */
static uint64_t node_hash(const IrNode *n) {
  uint64_t h = (uint64_t)n->kind | (uint64_t)n->dtype << 8 | (uint64_t)n->ndim << 16 | (uint64_t)n->flags << 24 |
               (uint64_t)n->op << 32;
  h = hash_word(0x243f6a8885a308d3ull, h);
  h = hash_word(h, (uint64_t)(uint32_t)n->src[0] | (uint64_t)(uint32_t)n->src[1] << 32);
  h = hash_word(h, (uint64_t)(uint32_t)n->src[2] | (uint64_t)(uint32_t)n->input << 32);
  h = hash_word(h, (uint64_t)n->axes);
  uint64_t im;
  memcpy(&im, &n->value.im, sizeof im);
  h = hash_word(h, n->value.u);
  h = hash_word(h, im);
  int k = n->ndim <= LOOM_MAX_RANK ? n->ndim : LOOM_MAX_RANK;
  for (int i = 0; i < k; i++) h = hash_word(h, (uint64_t)n->shape[i]);
  if (n->kind == IR_PERMUTE || n->kind == IR_SLICE) /* node_canon zeroes arg and arg2 of every other kind */
    for (int i = 0; i < k; i++) h = hash_word(hash_word(h, (uint64_t)n->arg[i]), (uint64_t)n->arg2[i]);
  h ^= h >> 33; /* the table uses the low bits */
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

static bool node_equal(const IrNode *a, const IrNode *b) {
  if (a->hash != b->hash || a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim ||
      a->flags != b->flags || a->op != b->op || a->input != b->input || a->axes != b->axes ||
      a->value.u != b->value.u || memcmp(&a->value.im, &b->value.im, sizeof a->value.im) != 0 ||
      memcmp(a->src, b->src, sizeof a->src) != 0)
    return false;
  size_t k = (size_t)a->ndim * sizeof(int64_t);
  if (memcmp(a->shape, b->shape, k) != 0) return false;
  /* arg and arg2: only the kinds that use them (node_hash's rule; the stored nodes of the others have zeroes) */
  if (a->kind != IR_PERMUTE && a->kind != IR_SLICE) return true;
  return memcmp(a->arg, b->arg, k) == 0 && memcmp(a->arg2, b->arg2, k) == 0;
}

/* Zeroes the per-axis entries the node does not use (past ndim; arg and arg2 of kinds without them): run on
 * the copy ir_add_node stores (a new node; hash-consing hits, the common case, never pay it) and by
 * ir_add_raw. node_hash and node_equal read entries below ndim only, arg and arg2 only for the kinds that
 * use them, so the scratch nodes of the constructors need no zeroed tails (ir_node_init). */
static void node_canon_axes(IrNode *n) {
  int nd = n->ndim < LOOM_MAX_RANK ? n->ndim : LOOM_MAX_RANK;
  bool arg_used = n->kind == IR_PERMUTE || n->kind == IR_SLICE, arg2_used = n->kind == IR_SLICE;
  for (int i = 0; i < LOOM_MAX_RANK; i++) {
    bool tail = i >= nd;
    if (tail) n->shape[i] = 0;
    if (tail || !arg_used) n->arg[i] = 0;
    if (tail || !arg2_used) n->arg2[i] = 0;
  }
}

/* Zeroes (or sets to -1) every scalar field the node's kind does not use, so equal meaning = equal bits
 * (the per-axis arrays: node_canon_axes). */
static void node_canon(IrNode *n) {
  n->pad = 0;
  if (n->kind != IR_CONST) n->value.u = 0;
  if (n->kind != IR_CONST || !dtype_is_complex((LoomDType)n->dtype)) n->value.im = 0;
  if (n->kind != IR_INPUT) n->input = -1;
  if (n->kind != IR_REDUCE && n->kind != IR_SCAN && n->kind != IR_GATHER) n->axes = 0;
  if (n->kind != IR_ELEM && n->kind != IR_REDUCE && n->kind != IR_SCAN && n->kind != IR_GATHER && n->kind != IR_SCATTER)
    n->op = 0;
  int used = 1;
  if (n->kind == IR_INPUT || n->kind == IR_CONST || n->kind == IR_IOTA) used = 0;
  if (n->kind == IR_MATMUL) used = 2;
  if (n->kind == IR_GATHER || n->kind == IR_SCATTER) used = 3;
  if (n->kind == IR_ELEM) {
    const OpInfo *info = op_info((LoomOp)n->op);
    used = info ? info->arity : 3;
  }
  for (int i = used; i < 3; i++) n->src[i] = -1;
}

static void table_insert(IrGraph *g, int32_t idx) {
  uint32_t mask = (uint32_t)g->tcap - 1;
  uint32_t s = (uint32_t)g->nodes[idx].hash & mask;
  while (g->table[s] >= 0) s = (s + 1) & mask;
  g->table[s] = idx;
}

static void table_rebuild(IrGraph *g) {
  for (int32_t i = 0; i < g->tcap; i++) g->table[i] = -1;
  for (int32_t i = 0; i < g->nnodes; i++) table_insert(g, i);
}

/* Makes room for one more node (array and table) or fails without changing anything. */
static LoomStatus reserve_node(IrGraph *g, Diag *d) {
  if (g->nnodes >= INT32_MAX / 4)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "graph too large (%d nodes)", g->nnodes);
  if (g->nnodes + 1 > g->cap) {
    int32_t cap = g->cap ? g->cap * 2 : 64;
    IrNode *nodes = ctx_alloc(g->ctx, sizeof(IrNode) * (size_t)cap);
    if (!nodes)
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory growing a graph to %zu bytes",
                        sizeof(IrNode) * (size_t)cap);
    if (g->nnodes) memcpy(nodes, g->nodes, sizeof(IrNode) * (size_t)g->nnodes);
    ctx_free(g->ctx, g->nodes);
    g->nodes = nodes;
    g->cap = cap;
  }
  if ((int64_t)(g->nnodes + 1) * 2 > g->tcap) {
    int32_t tcap = g->tcap ? g->tcap * 2 : 128;
    int32_t *table = ctx_alloc(g->ctx, sizeof(int32_t) * (size_t)tcap);
    if (!table)
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory growing a graph table to %zu bytes",
                        sizeof(int32_t) * (size_t)tcap);
    ctx_free(g->ctx, g->table);
    g->table = table;
    g->tcap = tcap;
    table_rebuild(g);
  }
  return LOOM_OK;
}

/* Hash-conses a fully formed node (canonicalized here). */
LoomStatus ir_add_node(IrGraph *g, IrNode *n, int32_t *out, Diag *d) {
  node_canon(n);
  n->hash = node_hash(n);
  if (g->tcap > 0) {
    uint32_t mask = (uint32_t)g->tcap - 1;
    for (uint32_t s = (uint32_t)n->hash & mask; g->table[s] >= 0; s = (s + 1) & mask)
      if (node_equal(&g->nodes[g->table[s]], n)) {
        *out = g->table[s];
        return LOOM_OK;
      }
  }
  LoomStatus st = reserve_node(g, d);
  if (st) return st;
  int32_t idx = g->nnodes++;
  g->nodes[idx] = *n;
  node_canon_axes(&g->nodes[idx]); /* stored nodes are canonical throughout (verify, printers, passes) */
  table_insert(g, idx);
  *out = idx;
  return LOOM_OK;
}

/* Drops node idx from the table. Only valid for the newest node (nodes are inserted in index order
 * and dropped newest first, so no entry inserted earlier ever probed past its slot). */
static void table_remove_newest(IrGraph *g, int32_t idx) {
  uint32_t mask = (uint32_t)g->tcap - 1;
  for (uint32_t s = (uint32_t)g->nodes[idx].hash & mask; g->table[s] >= 0; s = (s + 1) & mask)
    if (g->table[s] == idx) {
      g->table[s] = -1;
      return;
    }
}

static void intable_remove(IrGraph *g, int32_t idx);

void ir_graph_rollback(IrGraph *g, int32_t nnodes, int32_t ninputs) {
  /* O(what is dropped), not O(graph): a failed builder call on a big graph stays cheap */
  while (nnodes >= 0 && nnodes < g->nnodes) table_remove_newest(g, --g->nnodes);
  for (int32_t i = 0; i < g->nbound;) /* a bound node is older than any builder's mark: none dropped */
    if (g->bound_at[i] >= g->nnodes) g->bound[i] = g->bound[g->nbound - 1], g->bound_at[i] = g->bound_at[--g->nbound];
    else i++;
  while (ninputs >= 0 && ninputs < g->ninputs) intable_remove(g, --g->ninputs);
}

LoomStatus ir_add_raw(IrGraph *g, const IrNode *n, int32_t *out, Diag *d) {
  if (!g || !n || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ir_add_raw: null argument");
  if (n->ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "node rank %d exceeds the maximum %d", n->ndim,
                      LOOM_MAX_RANK);
  IrNode copy = *n;
  node_canon_axes(&copy);
  return ir_add_node(g, &copy, out, d);
}

LoomStatus ir_check_node(const IrGraph *g, int32_t x, const char *what, Diag *d) {
  if (x < 0 || x >= g->nnodes)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: node %d is not a node of this graph (it has %d)",
                      what, x, g->nnodes);
  return LOOM_OK;
}

LoomStatus ir_check_shape(int ndim, const int64_t *shape, const char *what, Diag *d) {
  if (ndim < 0 || ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_SHAPE, "%s: rank %d is outside 0..%d", what, ndim, LOOM_MAX_RANK);
  if (ndim > 0 && !shape) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: shape is NULL", what);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return diag_error(d, LOOM_ERR_SHAPE, "%s: negative dimension %lld at axis %d", what,
                        (long long)shape[i], i);
  if (ir_numel(ndim, shape) < 0) return diag_error(d, LOOM_ERR_SHAPE, "%s: shape too large (overflows int64)", what);
  return LOOM_OK;
}

/* ---- inputs and constants ------------------------------------------------------------------------------ */
/* Inputs with equal descriptors are one input; g->intable finds them by a hash of the descriptor
 * (linear probing, load <= 1/2, deletion by backward shift), so adding n inputs is O(n). */
static uint64_t desc_hash(const LoomArray *a) {
  int nd = a->ndim >= 0 && a->ndim <= LOOM_MAX_RANK ? a->ndim : 0;
  uint64_t h = ir_hash_bytes(&a->data, sizeof a->data, (uint64_t)a->dtype);
  int32_t head[3] = {a->ndim, (int32_t)a->device, a->device_index};
  h = ir_hash_bytes(head, sizeof head, h);
  h = ir_hash_bytes(a->shape, (size_t)nd * sizeof(int64_t), h);
  return ir_hash_bytes(a->strides, (size_t)nd * sizeof(int64_t), h);
}

static void intable_insert(IrGraph *g, int32_t idx) {
  uint32_t mask = (uint32_t)g->intcap - 1;
  uint32_t s = (uint32_t)desc_hash(&g->inputs[idx]) & mask;
  while (g->intable[s] >= 0) s = (s + 1) & mask;
  g->intable[s] = idx;
}

static void intable_remove(IrGraph *g, int32_t idx) {
  if (g->intcap == 0) return;
  uint32_t mask = (uint32_t)g->intcap - 1;
  uint32_t i = (uint32_t)desc_hash(&g->inputs[idx]) & mask;
  while (g->intable[i] >= 0 && g->intable[i] != idx) i = (i + 1) & mask;
  if (g->intable[i] < 0) return;
  for (uint32_t j = (i + 1) & mask; g->intable[j] >= 0; j = (j + 1) & mask) { /* Knuth's algorithm R */
    uint32_t h = (uint32_t)desc_hash(&g->inputs[g->intable[j]]) & mask;
    bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
    if (movable) {
      g->intable[i] = g->intable[j];
      i = j;
    }
  }
  g->intable[i] = -1;
}

void ir_input_rebind(IrGraph *g, int32_t index, void *data, const int64_t *strides) {
  if (index < 0 || index >= g->ninputs) return;
  LoomArray *a = &g->inputs[index];
  /* the same array again (a @loom.fuse loop over the same arguments): nothing moves in the table */
  if (a->data == data && memcmp(a->strides, strides, sizeof(int64_t) * (size_t)a->ndim) == 0) return;
  intable_remove(g, index);
  a->data = data;
  for (int i = 0; i < a->ndim; i++) a->strides[i] = strides[i];
  if (g->intcap > 0) intable_insert(g, index);
}

LoomStatus ir_input_append(IrGraph *g, const LoomArray *a, int32_t *index, Diag *d) {
  if ((int64_t)(g->ninputs + 1) * 2 > g->intcap) {
    if (g->ninputs >= INT32_MAX / 4)
      return diag_error(d, LOOM_ERR_UNSUPPORTED, "graph has too many inputs (%d)", g->ninputs);
    int32_t cap = g->intcap ? g->intcap * 2 : 16;
    int32_t *t = ctx_alloc(g->ctx, sizeof(int32_t) * (size_t)cap);
    if (!t)
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory growing the graph's input table to %zu bytes",
                        sizeof(int32_t) * (size_t)cap);
    ctx_free(g->ctx, g->intable);
    g->intable = t;
    g->intcap = cap;
    for (int32_t i = 0; i < cap; i++) t[i] = -1;
    for (int32_t i = 0; i < g->ninputs; i++) intable_insert(g, i);
  }
  if (g->ninputs >= g->incap) {
    int32_t cap = g->incap ? g->incap * 2 : 8;
    LoomArray *in = ctx_alloc(g->ctx, sizeof(LoomArray) * (size_t)cap);
    if (!in)
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory growing graph inputs to %zu bytes",
                        sizeof(LoomArray) * (size_t)cap);
    if (g->ninputs) memcpy(in, g->inputs, sizeof(LoomArray) * (size_t)g->ninputs);
    ctx_free(g->ctx, g->inputs);
    g->inputs = in;
    g->incap = cap;
  }
  LoomArray c;
  memset(&c, 0, sizeof c);
  c.data = a->data;
  c.dtype = a->dtype;
  c.ndim = a->ndim;
  for (int i = 0; i < a->ndim; i++) {
    c.shape[i] = a->shape[i];
    c.strides[i] = a->strides[i];
  }
  c.device = a->device;
  c.device_index = a->device_index;
  g->inputs[g->ninputs] = c;
  *index = g->ninputs++;
  intable_insert(g, *index);
  return LOOM_OK;
}

static bool same_descriptor(const LoomArray *a, const LoomArray *b) {
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim || a->device != b->device ||
      a->device_index != b->device_index)
    return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i] || a->strides[i] != b->strides[i]) return false;
  return true;
}

LoomStatus ir_input(IrGraph *g, const LoomArray *a, int32_t *out, Diag *d) {
  if (!g || !a || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "input: null argument");
  if ((unsigned)a->dtype >= LOOM_DTYPE_COUNT)
    return diag_error(d, LOOM_ERR_DTYPE, "input: dtype %d is not a LoomDType", (int)a->dtype);
  LoomStatus st = ir_check_shape(a->ndim, a->shape, "input", d);
  if (st) return st;
  if (!ir_array_span_ok(a))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "input: shape and strides span more than 2^62 bytes; no array is that large (check the "
                      "strides: they count elements, not bytes)");
  int32_t idx = -1;
  if (g->intcap > 0) {
    uint32_t mask = (uint32_t)g->intcap - 1;
    for (uint32_t s = (uint32_t)desc_hash(a) & mask; g->intable[s] >= 0; s = (s + 1) & mask)
      if (g->intable[s] < g->ninputs && same_descriptor(&g->inputs[g->intable[s]], a)) {
        idx = g->intable[s];
        break;
      }
  }
  int32_t mark_in = g->ninputs;
  if (idx < 0 && (st = ir_input_append(g, a, &idx, d))) return st;
  IrNode n;
  ir_node_init(&n, IR_INPUT, a->dtype, a->ndim, a->shape);
  n.input = idx;
  st = ir_add_node(g, &n, out, d);
  if (st) ir_graph_rollback(g, g->nnodes, mark_in);
  return st;
}

/* Node idx becomes an input reading a (the node's value, computed: loom_node_bind). Nodes built on it keep
 * their edges and now read the array; the hash table keeps the node's old slot, where an equal expression
 * built later no longer matches (it becomes a new node). */
LoomStatus ir_node_bind(IrGraph *g, int32_t idx, const LoomArray *a, Diag *d) {
  if (!g || !a) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "node_bind: null argument");
  if (idx < 0 || idx >= g->nnodes)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "node_bind: node %d is not in this graph (it has %d nodes)", idx,
                      g->nnodes);
  IrNode *n = &g->nodes[idx];
  if (a->dtype != n->dtype || a->ndim != n->ndim ||
      memcmp(a->shape, n->shape, sizeof(int64_t) * (size_t)(n->ndim > 0 ? n->ndim : 0)) != 0) {
    char want[96], got[96];
    ir_format_shape(want, sizeof want, n->ndim, n->shape);
    ir_format_shape(got, sizeof got, a->ndim < 0 || a->ndim > LOOM_MAX_RANK ? 0 : a->ndim, a->shape);
    return diag_error(d, LOOM_ERR_SHAPE, "node_bind: the array is %s %s but node %d is %s %s; bind the node's own value",
                      loom_dtype_name(a->dtype) ? loom_dtype_name(a->dtype) : "?", got, idx,
                      loom_dtype_name((LoomDType)n->dtype), want);
  }
  if (n->kind == IR_INPUT && same_descriptor(&g->inputs[n->input], a)) return LOOM_OK;
  bool first = true; /* the node as it was before its first bind is kept for ir_node_unbind */
  for (int32_t i = 0; i < g->nbound; i++) first = first && g->bound_at[i] != idx;
  if (first && g->nbound >= g->boundcap) {
    int32_t cap = g->boundcap ? g->boundcap * 2 : 8;
    IrNode *keep = ctx_alloc(g->ctx, sizeof(IrNode) * (size_t)cap);
    int32_t *at = ctx_alloc(g->ctx, sizeof(int32_t) * (size_t)cap);
    if (!keep || !at) {
      ctx_free(g->ctx, keep);
      ctx_free(g->ctx, at);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "node_bind: out of memory keeping %d bound nodes", cap);
    }
    if (g->nbound) {
      memcpy(keep, g->bound, sizeof(IrNode) * (size_t)g->nbound);
      memcpy(at, g->bound_at, sizeof(int32_t) * (size_t)g->nbound);
    }
    ctx_free(g->ctx, g->bound);
    ctx_free(g->ctx, g->bound_at);
    g->bound = keep, g->bound_at = at, g->boundcap = cap;
  }
  int32_t in;
  LoomStatus st = ir_input(g, a, &in, d); /* validates a; finds or appends its input (and an input node) */
  if (st) return st;
  n = &g->nodes[idx]; /* ir_input may have grown the node array */
  if (first) {
    g->bound[g->nbound] = *n;
    g->bound_at[g->nbound++] = idx;
  }
  n->kind = IR_INPUT;
  n->input = g->nodes[in].input;
  n->flags = 0;
  node_canon(n);
  node_canon_axes(n);
  n->hash = node_hash(n);
  return LOOM_OK;
}

void ir_node_unbind(IrGraph *g, int32_t idx) {
  for (int32_t i = 0; g && i < g->nbound; i++)
    if (g->bound_at[i] == idx) {
      g->nodes[idx] = g->bound[i]; /* its hash-table slot never moved: equal expressions find it again */
      g->bound[i] = g->bound[g->nbound - 1];
      g->bound_at[i] = g->bound_at[--g->nbound];
      return;
    }
}

LoomStatus ir_node_reaches(const IrGraph *g, int32_t idx, int32_t n, const int32_t *users, int32_t *out, Diag *d) {
  *out = 0;
  int32_t top = -1;
  for (int32_t i = 0; i < n; i++) {
    if (users[i] == idx) {
      *out = 1;
      return LOOM_OK;
    }
    if (users[i] > top) top = users[i];
  }
  if (top <= idx) return LOOM_OK; /* a node is built only on earlier nodes */
  uint8_t *on = ctx_alloc(g->ctx, (size_t)(top - idx + 1));
  if (!on) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "node_reaches: out of memory for %d nodes", top - idx + 1);
  on[0] = 1;
  for (int32_t x = idx + 1; x <= top; x++) {
    const IrNode *nd = &g->nodes[x];
    on[x - idx] = 0;
    for (int s = 0; s < 3; s++)
      if (nd->src[s] >= idx && on[nd->src[s] - idx]) on[x - idx] = 1;
  }
  for (int32_t i = 0; i < n && !*out; i++) *out = users[i] > idx && on[users[i] - idx];
  ctx_free(g->ctx, on);
  return LOOM_OK;
}

static bool computes(IrKind k) { return k != IR_INPUT && k != IR_CONST && k != IR_IOTA && !ir_is_movement(k); }

/* Marks every node a is built on (bit 1; bit 4: a member of a) and every node b is built on through nodes
 * not in a (bit 2), in one backward scan from the largest (sources always come before their users). */
LoomStatus ir_nodes_share(const IrGraph *g, int32_t na, const int32_t *a, int32_t nb, const int32_t *b, int32_t *out,
                          Diag *d) {
  *out = 0;
  int32_t top = -1;
  for (int32_t i = 0; i < na; i++) top = a[i] > top ? a[i] : top;
  for (int32_t i = 0; i < nb; i++) top = b[i] > top ? b[i] : top;
  if (top < 0 || na == 0 || nb == 0) return LOOM_OK;
  uint8_t *mark = ctx_calloc(g->ctx, (size_t)top + 1, 1);
  if (!mark) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "nodes_share: out of memory for %d nodes", top + 1);
  for (int32_t i = 0; i < na; i++) mark[a[i]] |= 1 | 4;
  for (int32_t i = 0; i < nb; i++) mark[b[i]] |= 2;
  for (int32_t x = top; x >= 0 && !*out; x--) {
    if (!mark[x]) continue;
    const IrNode *nd = &g->nodes[x];
    uint8_t up = (uint8_t)(mark[x] & 4 ? 1 : mark[x] & 3); /* a's own values are there after evaluating a */
    if (up == 3 && computes(nd->kind)) *out = 1;
    for (int s = 0; s < ir_node_arity(nd); s++)
      if (nd->src[s] >= 0 && nd->src[s] < x) mark[nd->src[s]] |= up;
  }
  ctx_free(g->ctx, mark);
  return LOOM_OK;
}

LoomStatus ir_const(IrGraph *g, LoomDType dtype, Scalar v, bool weak, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "const: null argument");
  if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
    return diag_error(d, LOOM_ERR_DTYPE, "const: dtype %d is not a LoomDType", (int)dtype);
  if (weak && dtype != LOOM_BOOL && dtype != LOOM_INT64 && dtype != LOOM_UINT64 && dtype != LOOM_FLOAT64 &&
      dtype != LOOM_COMPLEX128)
    return diag_error(d, LOOM_ERR_DTYPE,
                      "const: a weak constant must be bool, int64, uint64, float64 or complex128, not %s",
                      loom_dtype_name(dtype));
  IrNode n;
  ir_node_init(&n, IR_CONST, dtype, 0, NULL);
  n.value = ir_scalar_canon(dtype, v);
  n.flags = weak ? IR_FLAG_WEAK : 0;
  return ir_add_node(g, &n, out, d);
}
