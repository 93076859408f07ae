/* SPDX-License-Identifier: Apache-2.0 */
/* graph.c: the graph IR: storage, hash-consing and the validating constructors.
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

#include "ir/ir.h"

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

uint64_t ir_hash_bytes(const void *p, size_t n, uint64_t seed) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33; /* final mix: spread the high bits into the low bits the table uses */
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
  return memcmp(a->shape, b->shape, k) == 0 && memcmp(a->arg, b->arg, k) == 0 &&
         memcmp(a->arg2, b->arg2, k) == 0;
}

/* Zeroes (or sets to -1) every field the node's kind does not use, so equal meaning = equal bits. */
static void node_canon(IrNode *n) {
  n->pad = 0;
  for (int i = n->ndim; i < LOOM_MAX_RANK; i++) n->shape[i] = n->arg[i] = n->arg2[i] = 0;
  if (n->kind != IR_PERMUTE && n->kind != IR_SLICE) memset(n->arg, 0, sizeof n->arg);
  if (n->kind != IR_SLICE) memset(n->arg2, 0, sizeof n->arg2);
  if (n->kind != IR_CONST) n->value.u = 0;
  if (n->kind != IR_CONST || !dtype_is_complex((LoomDType)n->dtype)) n->value.im = 0;
  if (n->kind != IR_INPUT) n->input = -1;
  if (n->kind != IR_REDUCE && n->kind != IR_SCAN) n->axes = 0;
  if (n->kind != IR_ELEM && n->kind != IR_REDUCE && n->kind != IR_SCAN) n->op = 0;
  int used = 1;
  if (n->kind == IR_INPUT || n->kind == IR_CONST || n->kind == IR_IOTA) used = 0;
  if (n->kind == IR_MATMUL) used = 2;
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
static LoomStatus add_node(IrGraph *g, IrNode n, int32_t *out, Diag *d) {
  node_canon(&n);
  n.hash = node_hash(&n);
  if (g->tcap > 0) {
    uint32_t mask = (uint32_t)g->tcap - 1;
    for (uint32_t s = (uint32_t)n.hash & mask; g->table[s] >= 0; s = (s + 1) & mask)
      if (node_equal(&g->nodes[g->table[s]], &n)) {
        *out = g->table[s];
        return LOOM_OK;
      }
  }
  LoomStatus st = reserve_node(g, d);
  if (st) return st;
  int32_t idx = g->nnodes++;
  g->nodes[idx] = n;
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
  while (ninputs >= 0 && ninputs < g->ninputs) intable_remove(g, --g->ninputs);
}

LoomStatus ir_add_raw(IrGraph *g, const IrNode *n, int32_t *out, Diag *d) {
  if (!g || !n || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ir_add_raw: null argument");
  if (n->ndim > LOOM_MAX_RANK)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "node rank %d exceeds the maximum %d", n->ndim,
                      LOOM_MAX_RANK);
  return add_node(g, *n, out, d);
}

static IrNode new_node(IrKind kind, LoomDType dtype, int ndim, const int64_t *shape) {
  IrNode n;
  memset(&n, 0, sizeof n);
  n.kind = (uint8_t)kind;
  n.dtype = (uint8_t)dtype;
  n.ndim = (uint8_t)ndim;
  n.src[0] = n.src[1] = n.src[2] = -1;
  n.input = -1;
  if (ndim > 0 && shape) memcpy(n.shape, shape, sizeof(int64_t) * (size_t)ndim);
  return n;
}

static LoomStatus check_node(const IrGraph *g, int32_t x, const char *what, Diag *d) {
  if (x < 0 || x >= g->nnodes)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: node %d is not a node of this graph (it has %d)",
                      what, x, g->nnodes);
  return LOOM_OK;
}

static LoomStatus check_shape(int ndim, const int64_t *shape, const char *what, Diag *d) {
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
  LoomStatus st = check_shape(a->ndim, a->shape, "input", d);
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
  IrNode n = new_node(IR_INPUT, a->dtype, a->ndim, a->shape);
  n.input = idx;
  st = add_node(g, n, out, d);
  if (st) ir_graph_rollback(g, g->nnodes, mark_in);
  return st;
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
  IrNode n = new_node(IR_CONST, dtype, 0, NULL);
  n.value = ir_scalar_canon(dtype, v);
  n.flags = weak ? IR_FLAG_WEAK : 0;
  return add_node(g, n, out, d);
}

/* ---- elementwise ----------------------------------------------------------------------------------------- */
/* NumPy's name for messages where it differs from Loom's op name. */
static const char *numpy_name(LoomOp op) {
  switch (op) {
  case LOOM_OP_NEG: return "negative";
  case LOOM_OP_SUB: return "subtract";
  case LOOM_OP_MUL: return "multiply";
  case LOOM_OP_TRUEDIV: return "true_divide";
  case LOOM_OP_FLOORDIV: return "floor_divide";
  case LOOM_OP_MOD: return "remainder";
  case LOOM_OP_POW: return "power";
  default: return loom_op_name(op);
  }
}

/* The result dtype of op on operand dtypes t[0..arity), or an error naming the op. */
LoomStatus ir_elem_result_dtype(LoomOp op, const LoomDType *t, LoomDType *out, Diag *d) {
  const OpInfo *info = op_info(op);
  if (!info || !t || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "op %d is not a LoomOp", (int)op);
  LoomDType a = t[0], p = info->arity >= 2 ? dtype_promote(t[0], t[1]) : t[0];
  const char *name = numpy_name(op);
  bool cx = info->rule == RULE_WHERE ? false : dtype_is_complex(p);
  switch (info->rule) {
  case RULE_INT:
  case RULE_BITWISE:
  case RULE_SHIFT:
  case RULE_PROMOTE_FLOAT:
  case RULE_FLOAT_REAL:
  case RULE_PROMOTE_NUM_REAL:
  case RULE_COMPLEX:
    if (cx)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s operands (NumPy has no complex loop)", name,
                        loom_dtype_name(p));
    break;
  default: break;
  }
  switch (info->rule) {
  case RULE_SAME: *out = a; return LOOM_OK;
  case RULE_SAME_NUM:
    if (a == LOOM_BOOL)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for bool operands; use %s", name,
                        op == LOOM_OP_NEG ? "logical_not" : "a cast to an integer dtype first");
    *out = a;
    return LOOM_OK;
  case RULE_FLOAT:
  case RULE_FLOAT_REAL: *out = dtype_float_of(a); return LOOM_OK;
  case RULE_REAL: *out = dtype_real_of(a); return LOOM_OK;
  case RULE_COMPLEX: *out = dtype_complex_of(p); return LOOM_OK;
  case RULE_PRED: *out = LOOM_BOOL; return LOOM_OK;
  case RULE_INT:
    if (dtype_is_float(a))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s operands; ints and bool only", name,
                        loom_dtype_name(a));
    *out = a;
    return LOOM_OK;
  case RULE_PROMOTE: *out = p; return LOOM_OK;
  case RULE_PROMOTE_NUM:
  case RULE_PROMOTE_NUM_REAL: *out = p == LOOM_BOOL ? LOOM_INT8 : p; return LOOM_OK;
  case RULE_PROMOTE_SUB:
    if (p == LOOM_BOOL)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for bool operands; use logical_xor", name);
    *out = p;
    return LOOM_OK;
  case RULE_PROMOTE_FLOAT: /* NumPy's first float loop every input casts to safely (int8, uint16 -> float32) */
    *out = info->arity >= 2 ? dtype_promote(dtype_float_of(t[0]), dtype_float_of(t[1])) : dtype_float_of(p);
    return LOOM_OK;
  case RULE_TRUEDIV: *out = dtype_is_float(p) || dtype_is_complex(p) ? p : LOOM_FLOAT64; return LOOM_OK;
  case RULE_COMPARE:
  case RULE_LOGICAL: *out = LOOM_BOOL; return LOOM_OK;
  case RULE_BITWISE:
    if (dtype_is_float(p))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s and %s operands; ints and bool only",
                        name, loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = p;
    return LOOM_OK;
  case RULE_SHIFT:
    if (dtype_is_float(p))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: not supported for %s and %s operands; ints only", name,
                        loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = p == LOOM_BOOL ? LOOM_INT8 : p;
    return LOOM_OK;
  case RULE_WHERE: *out = dtype_promote(t[1], t[2]); return LOOM_OK;
  case RULE_RANDOM:
    if (t[0] != LOOM_UINT64 || t[1] != LOOM_UINT64)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: key and counter must be uint64, not %s and %s", name,
                        loom_dtype_name(t[0]), loom_dtype_name(t[1]));
    *out = LOOM_UINT64;
    return LOOM_OK;
  case RULE_NUMERIC: *out = a == LOOM_BOOL ? LOOM_INT8 : a; return LOOM_OK;
  }
  return diag_error(d, LOOM_ERR_INTERNAL, "internal error: op %d has no dtype rule", (int)op);
}

/* Where a weak integer (v of kind kw: DK_INT as int64, DK_UINT as uint64) lies against integer dtype
 * t's range: -1 below it, 0 inside, 1 above. */
static int weak_int_range(DKind kw, Scalar v, LoomDType t) {
  int bits = dtype_bits(t);
  if (dtype_kind(t) == DK_UINT) {
    if (kw == DK_INT && v.i < 0) return -1;
    uint64_t u = kw == DK_INT ? (uint64_t)v.i : v.u, max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    return u > max ? 1 : 0;
  }
  if (kw == DK_UINT && v.u > (uint64_t)INT64_MAX) return 1;
  int64_t x = kw == DK_INT ? v.i : (int64_t)v.u;
  int64_t lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1)), hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
  return x < lo ? -1 : x > hi ? 1 : 0;
}

/* A weak value (bool, int64, uint64, float64 or complex128) converted to dtype t (in t's kind; the
 * target of a weak complex is complex or, for logical ops, bool). */
static Scalar weak_value_as(LoomDType from, Scalar v, LoomDType t) {
  Scalar r = {0};
  DKind kf = dtype_kind(from), kt = dtype_kind(t);
  if (kt == DK_COMPLEX) {
    r.f = kf == DK_FLOAT || kf == DK_COMPLEX ? v.f : kf == DK_INT ? (double)v.i : (double)v.u;
    r.im = kf == DK_COMPLEX ? v.im : 0.0;
  } else if (kt == DK_FLOAT) r.f = kf == DK_FLOAT ? v.f : kf == DK_INT ? (double)v.i : (double)v.u;
  else if (kt == DK_INT) r.i = kf == DK_INT ? v.i : (int64_t)v.u;
  else if (kt == DK_UINT) r.u = kf == DK_INT ? (uint64_t)v.i : v.u;
  else r.u = kf == DK_FLOAT ? v.f != 0 : kf == DK_COMPLEX ? v.f != 0 || v.im != 0 : kf == DK_INT ? v.i != 0 : v.u != 0;
  return r;
}

LoomStatus ir_weak_to(IrGraph *g, int32_t x, LoomDType t, int *range, int32_t *out, Diag *d) {
  const IrNode *n = &g->nodes[x];
  LoomDType wt = (LoomDType)n->dtype;
  DKind kw = dtype_kind(wt);
  *range = 0;
  if (n->kind != IR_CONST) return ir_cast(g, x, t, out, d);
  Scalar v = n->value;
  if ((kw == DK_INT || kw == DK_UINT) && dtype_is_int(t) && (*range = weak_int_range(kw, v, t)) != 0) return LOOM_OK;
  return ir_const(g, t, weak_value_as(wt, v, t), false, out, d);
}

LoomStatus ir_weak_range_error(const IrGraph *g, int32_t x, LoomDType t, Diag *d) {
  const IrNode *n = &g->nodes[x];
  char num[32];
  if (dtype_kind((LoomDType)n->dtype) == DK_INT) snprintf(num, sizeof num, "%lld", (long long)n->value.i);
  else snprintf(num, sizeof num, "%llu", (unsigned long long)n->value.u);
  return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "Python integer %s out of bounds for %s", num, loom_dtype_name(t));
}

/* NEP 50: the strong node that weak node x becomes next to a strong operand of dtype partner.
 * Logical ops (and, or, xor) take a weak scalar's own truth value, as NumPy does (logical_or(f16 0,
 * 5e-324) is true; logical_and(u8, 300) is defined). A weak int outside the integer target's range is
 * an error, except for comparisons, whose result it decides: *range is then -1 (below every value of
 * the target) or 1 (above), and *out is not set. */
static LoomDType weak_target(LoomDType wt, LoomDType partner, OpRule rule) {
  DKind kw = dtype_kind(wt), kp = dtype_kind(partner);
  if (rule == RULE_LOGICAL) return LOOM_BOOL;
  if (kw == DK_BOOL) return partner;
  if ((kw == DK_INT || kw == DK_UINT) && (rule == RULE_PROMOTE_FLOAT || rule == RULE_TRUEDIV) && kp != DK_FLOAT &&
      kp != DK_COMPLEX) /* float loops only: the int is taken as that float, never range-checked (NumPy) */
    return rule == RULE_TRUEDIV ? LOOM_FLOAT64 : dtype_float_of(kp == DK_BOOL ? LOOM_INT64 : partner);
  if (kw == DK_INT || kw == DK_UINT) return kp == DK_BOOL ? LOOM_INT64 : partner;
  if (kw == DK_FLOAT) return kp == DK_FLOAT || kp == DK_COMPLEX ? partner : LOOM_FLOAT64;
  return kp == DK_FLOAT || kp == DK_COMPLEX ? dtype_complex_of(partner) : LOOM_COMPLEX128;
}

static LoomStatus resolve_weak(IrGraph *g, int32_t x, LoomDType partner, OpRule rule, int32_t *out, int *range,
                               Diag *d) {
  const IrNode *n = &g->nodes[x];
  *range = 0;
  /* NumPy converts a Python int for a logical op to a C long first: past int64 it raises */
  if (rule == RULE_LOGICAL && n->kind == IR_CONST && dtype_kind((LoomDType)n->dtype) == DK_UINT &&
      n->value.u > (uint64_t)INT64_MAX)
    return ir_weak_range_error(g, x, LOOM_INT64, d);
  LoomDType target = weak_target((LoomDType)n->dtype, partner, rule);
  LoomStatus st = ir_weak_to(g, x, target, range, out, d);
  if (st != LOOM_OK || *range == 0) return st;
  if (rule == RULE_COMPARE && dtype_is_int(partner)) return LOOM_OK;
  *range = 0;
  return ir_weak_range_error(g, x, target, d);
}

/* Broadcast shape of n operand shapes, or the NumPy error naming every shape. */
static LoomStatus broadcast_shapes(const IrGraph *g, int n, const int32_t *src, int *ndim, int64_t *shape,
                                   Diag *d) {
  int nd = 0;
  for (int k = 0; k < n; k++)
    if (g->nodes[src[k]].ndim > nd) nd = g->nodes[src[k]].ndim;
  for (int i = 0; i < nd; i++) shape[i] = 1;
  for (int k = 0; k < n; k++) {
    const IrNode *s = &g->nodes[src[k]];
    int off = nd - s->ndim;
    for (int i = 0; i < s->ndim; i++) {
      int64_t a = shape[off + i], b = s->shape[i];
      if (a == b || b == 1) continue;
      if (a == 1) {
        shape[off + i] = b;
        continue;
      }
      char msg[800] = "";
      size_t len = 0;
      for (int j = 0; j < n && len < sizeof msg; j++) {
        const IrNode *sj = &g->nodes[src[j]];
        if (j) msg[len++] = ' ';
        ir_format_shape(msg + len, sizeof msg - len, sj->ndim, sj->shape);
        len = strlen(msg);
      }
      return diag_error(d, LOOM_ERR_SHAPE, "operands could not be broadcast together with shapes %s", msg);
    }
  }
  *ndim = nd;
  return LOOM_OK;
}

/* x OP k for an integer array x and a Python int k outside x's dtype: every element compares the same
 * way. side: 1 when k is above every value of x (x < k), -1 when below. The result is that constant
 * broadcast to x's shape (NumPy 2 answers these comparisons instead of raising). */
static LoomStatus compare_out_of_range(IrGraph *g, LoomOp op, int32_t x, int side, int32_t *out, Diag *d) {
  bool lt = side > 0; /* x < k */
  bool v;
  switch (op) {
  case LOOM_OP_EQ: v = false; break;
  case LOOM_OP_NE: v = true; break;
  case LOOM_OP_LT: case LOOM_OP_LE: v = lt; break;
  default: v = !lt; break; /* GT, GE */
  }
  int32_t c;
  LoomStatus st = ir_const(g, LOOM_BOOL, (Scalar){.u = v}, false, &c, d);
  const IrNode *xn = &g->nodes[x];
  if (st || xn->ndim == 0) {
    if (!st) *out = c;
    return st;
  }
  int64_t shape[LOOM_MAX_RANK];
  memcpy(shape, xn->shape, sizeof shape);
  return ir_broadcast(g, c, xn->ndim, shape, out, d);
}

static LoomStatus elem_build(IrGraph *g, LoomOp op, int n, const int32_t *src_in, int32_t *out, Diag *d) {
  const OpInfo *info = op_info(op);
  int32_t src[3] = {-1, -1, -1};
  bool weak[3] = {false, false, false}, all_weak = true;
  for (int k = 0; k < n; k++) {
    src[k] = src_in[k];
    weak[k] = (g->nodes[src[k]].flags & IR_FLAG_WEAK) != 0;
    all_weak = all_weak && weak[k];
  }
  /* NumPy's order of errors: dtypes (TypeError), then shapes (ValueError), then a Python int out of
   * its dtype's range (OverflowError, found when the value is converted). np.where (NumPy 2.5) converts
   * its Python scalars before it broadcasts: the range error comes first there. */
  LoomStatus st;
  int w = -1, sp = -1;
  if (!all_weak) {
    int first = 0;
    if (info->rule == RULE_WHERE) first = 1; /* a condition is a truth value: any dtype will do */
    if (n - first == 2 && weak[first] != weak[first + 1]) {
      w = weak[first] ? first : first + 1;
      sp = w == first ? first + 1 : first;
    }
  }
  LoomDType t[3] = {LOOM_BOOL, LOOM_BOOL, LOOM_BOOL}, rt;
  for (int k = 0; k < n; k++) t[k] = (LoomDType)g->nodes[src[k]].dtype;
  if (w >= 0) t[w] = weak_target(t[w], t[sp], info->rule);
  if ((st = ir_elem_result_dtype(op, t, &rt, d))) return st;
  bool range_first = w >= 0 && info->rule == RULE_WHERE; /* where's range errors are errors (no compare) */
  if (range_first) {
    int range;
    if ((st = resolve_weak(g, src[w], (LoomDType)g->nodes[src[sp]].dtype, info->rule, &src[w], &range, d))) return st;
  }
  int ndim = 0;
  int64_t shape[LOOM_MAX_RANK];
  if ((st = broadcast_shapes(g, n, src, &ndim, shape, d))) return st;
  if (w >= 0 && !range_first) {
    int range;
    if ((st = resolve_weak(g, src[w], (LoomDType)g->nodes[src[sp]].dtype, info->rule, &src[w], &range, d))) return st;
    if (range != 0) return compare_out_of_range(g, op, src[sp], w > sp ? range : -range, out, d);
  }
  if (ir_numel(ndim, shape) < 0) {
    char b[400];
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "%s: the broadcast shape %s has more than 2^63-1 elements",
                      numpy_name(op), b);
  }
  IrNode node = new_node(IR_ELEM, rt, ndim, shape);
  node.op = (uint16_t)op;
  for (int k = 0; k < n; k++) node.src[k] = src[k];
  if (all_weak && (rt == LOOM_BOOL || rt == LOOM_INT64 || rt == LOOM_UINT64 || rt == LOOM_FLOAT64 ||
                   rt == LOOM_COMPLEX128))
    node.flags = IR_FLAG_WEAK;
  return add_node(g, node, out, d);
}

LoomStatus ir_elem(IrGraph *g, LoomOp op, int n, const int32_t *src, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "elementwise op: null argument");
  const OpInfo *info = op_info(op);
  if (!info) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "op %d is not a LoomOp", (int)op);
  if (n != info->arity || !src)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s takes %d operand%s, got %d", info->name, info->arity,
                      info->arity == 1 ? "" : "s", n);
  for (int k = 0; k < n; k++) {
    LoomStatus st = check_node(g, src[k], info->name, d);
    if (st) return st;
  }
  int32_t mark = g->nnodes;
  LoomStatus st = elem_build(g, op, n, src, out, d);
  if (st) ir_graph_rollback(g, mark, -1);
  return st;
}

/* ---- casts and movement ---------------------------------------------------------------------------------- */
LoomStatus ir_cast(IrGraph *g, int32_t x, LoomDType dtype, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "cast: null argument");
  LoomStatus st = check_node(g, x, "cast", d);
  if (st) return st;
  if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
    return diag_error(d, LOOM_ERR_DTYPE, "cast: target dtype %d is not a LoomDType", (int)dtype);
  const IrNode *s = &g->nodes[x];
  IrNode n = new_node(IR_CAST, dtype, s->ndim, s->shape);
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_broadcast(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "broadcast_to: null argument");
  LoomStatus st = check_node(g, x, "broadcast_to", d);
  if (st || (st = check_shape(ndim, shape, "broadcast_to", d))) return st;
  const IrNode *s = &g->nodes[x];
  bool ok = s->ndim <= ndim;
  for (int i = 0; ok && i < s->ndim; i++) {
    int64_t a = s->shape[i], b = shape[ndim - s->ndim + i];
    ok = a == b || a == 1;
  }
  if (!ok) {
    char a[400], b[400];
    ir_format_shape(a, sizeof a, s->ndim, s->shape);
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "cannot broadcast an array of shape %s to shape %s", a, b);
  }
  IrNode n = new_node(IR_BROADCAST, (LoomDType)s->dtype, ndim, shape);
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_reshape(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reshape: null argument");
  LoomStatus st = check_node(g, x, "reshape", d);
  if (st || (st = check_shape(ndim, shape, "reshape", d))) return st;
  const IrNode *s = &g->nodes[x];
  int64_t n0 = ir_numel(s->ndim, s->shape), n1 = ir_numel(ndim, shape);
  if (n0 != n1) {
    char b[400];
    ir_format_shape(b, sizeof b, ndim, shape);
    return diag_error(d, LOOM_ERR_SHAPE, "cannot reshape array of size %lld into shape %s", (long long)n0, b);
  }
  IrNode n = new_node(IR_RESHAPE, (LoomDType)s->dtype, ndim, shape);
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_permute(IrGraph *g, int32_t x, const int32_t *perm, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "permute: null argument");
  LoomStatus st = check_node(g, x, "permute", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  if (s->ndim > 0 && !perm) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "permute: perm is NULL");
  bool seen[LOOM_MAX_RANK] = {false};
  IrNode n = new_node(IR_PERMUTE, (LoomDType)s->dtype, s->ndim, NULL);
  for (int i = 0; i < s->ndim; i++) {
    int32_t p = perm[i];
    if (p < 0 || p >= s->ndim || seen[p])
      return diag_error(d, LOOM_ERR_AXIS, "permute: axes are not a permutation of 0..%d (entry %d is %d)",
                        s->ndim - 1, i, p);
    seen[p] = true;
    n.arg[i] = p;
    n.shape[i] = s->shape[p];
  }
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_slice(IrGraph *g, int32_t x, const int64_t *start, const int64_t *step, const int64_t *len,
                    int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: null argument");
  LoomStatus st = check_node(g, x, "slice", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  if (s->ndim > 0 && (!start || !step || !len))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: start, step and len must not be NULL");
  IrNode n = new_node(IR_SLICE, (LoomDType)s->dtype, s->ndim, NULL);
  for (int i = 0; i < s->ndim; i++) {
    int64_t dim = s->shape[i], b = start[i], k = step[i], l = len[i];
    if (k == 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "slice: step of axis %d is 0", i);
    if (l < 0 || l > dim)
      return diag_error(d, LOOM_ERR_SHAPE, "slice: length %lld of axis %d is outside 0..%lld", (long long)l, i,
                        (long long)dim);
    if (l == 0) {
      b = 0; /* every empty slice of an axis is the same slice */
      k = 1;
    } else if (l == 1) {
      if (b < 0 || b >= dim)
        return diag_error(d, LOOM_ERR_SHAPE, "slice: start %lld of axis %d is outside 0..%lld", (long long)b, i,
                          (long long)dim - 1);
      k = 1; /* one element: its step is irrelevant (and a huge one must not reach stride math) */
    } else {
      __int128 last = (__int128)b + (__int128)(l - 1) * k;
      if (b < 0 || b >= dim || last < 0 || last >= dim)
        return diag_error(d, LOOM_ERR_SHAPE,
                          "slice: axis %d of size %lld cannot read %lld elements from %lld by step %lld", i,
                          (long long)dim, (long long)l, (long long)b, (long long)k);
    }
    n.arg[i] = b;
    n.arg2[i] = k;
    n.shape[i] = l;
  }
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_reduce(IrGraph *g, LoomReduceOp op, int32_t x, uint32_t axes, bool keepdims, LoomDType dtype,
                     int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reduce: null argument");
  LoomStatus st = check_node(g, x, "reduce", d);
  if (st) return st;
  const char *name = reduce_op_name(op);
  if (!name) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "reduce: %d is not a LoomReduceOp", (int)op);
  const IrNode *s = &g->nodes[x];
  if (s->ndim < 32 && (axes >> s->ndim) != 0)
    return diag_error(d, LOOM_ERR_AXIS, "%s: axis mask 0x%x names axes beyond dimension %d", name, axes, s->ndim);
  LoomDType src = (LoomDType)s->dtype, rt;
  DKind k = dtype_kind(src);
  switch (op) {
  case LOOM_REDUCE_SUM:
  case LOOM_REDUCE_PROD:
    rt = k == DK_FLOAT || k == DK_COMPLEX ? src : k == DK_UINT ? LOOM_UINT64 : LOOM_INT64;
    break;
  case LOOM_REDUCE_MEAN: rt = k == DK_FLOAT || k == DK_COMPLEX ? src : LOOM_FLOAT64; break;
  case LOOM_REDUCE_ANY:
  case LOOM_REDUCE_ALL: rt = LOOM_BOOL; break;
  case LOOM_REDUCE_ARGMIN:
  case LOOM_REDUCE_ARGMAX: rt = LOOM_INT64; break;
  default: rt = src; break;
  }
  if (dtype != LOOM_DTYPE_COUNT) {
    if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
      return diag_error(d, LOOM_ERR_DTYPE, "%s: dtype %d is not a LoomDType", name, (int)dtype);
    if (rt != dtype && (op == LOOM_REDUCE_ANY || op == LOOM_REDUCE_ALL || op == LOOM_REDUCE_ARGMIN ||
                        op == LOOM_REDUCE_ARGMAX))
      return diag_error(d, LOOM_ERR_DTYPE, "%s: the result dtype is always %s; pass LOOM_DTYPE_COUNT", name,
                        loom_dtype_name(rt));
    rt = dtype;
  }
  IrNode n = new_node(IR_REDUCE, rt, 0, NULL);
  int64_t rcount = 1;
  for (int i = 0; i < s->ndim; i++) {
    if (axes & (1u << i)) {
      rcount *= s->shape[i] ? 1 : 0;
      if (keepdims) n.shape[n.ndim++] = 1;
    } else {
      n.shape[n.ndim++] = s->shape[i];
    }
  }
  if (rcount == 0 && /* NumPy: also when the result is empty (max over axes (0, 1) of a (0, 0, 4) array) */
      (op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX || op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX)) {
    const char *np = op == LOOM_REDUCE_MIN ? "minimum" : op == LOOM_REDUCE_MAX ? "maximum" : name;
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                      "zero-size array to reduction operation %s which has no identity", np);
  }
  n.op = (uint16_t)op;
  n.axes = axes;
  n.flags = keepdims ? IR_FLAG_KEEPDIMS : 0;
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_scan(IrGraph *g, LoomReduceOp op, int32_t x, int axis, LoomDType dtype, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scan: null argument");
  LoomStatus st = check_node(g, x, "scan", d);
  if (st) return st;
  if (op != LOOM_REDUCE_SUM && op != LOOM_REDUCE_PROD && op != LOOM_REDUCE_MIN && op != LOOM_REDUCE_MAX)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "scan: op %d is not sum, prod, min or max", (int)op);
  const char *name = reduce_op_name(op);
  const IrNode *s = &g->nodes[x];
  if (s->ndim < 1) return diag_error(d, LOOM_ERR_AXIS, "cumulative %s: the array must be at least 1-d", name);
  if (axis < 0 || axis >= s->ndim)
    return diag_error(d, LOOM_ERR_AXIS, "axis %d is out of bounds for array of dimension %d", axis, s->ndim);
  LoomDType src = (LoomDType)s->dtype, rt = src;
  DKind k = dtype_kind(src);
  if (op == LOOM_REDUCE_SUM || op == LOOM_REDUCE_PROD)
    rt = k == DK_FLOAT || k == DK_COMPLEX ? src : k == DK_UINT ? LOOM_UINT64 : LOOM_INT64;
  if (dtype != LOOM_DTYPE_COUNT) {
    if ((unsigned)dtype >= LOOM_DTYPE_COUNT)
      return diag_error(d, LOOM_ERR_DTYPE, "cumulative %s: dtype %d is not a LoomDType", name, (int)dtype);
    rt = dtype;
  }
  if ((op == LOOM_REDUCE_MIN || op == LOOM_REDUCE_MAX) && dtype_is_complex(rt))
    return diag_error(d, LOOM_ERR_DTYPE, "cumulative %s: complex values have no order here", name);
  IrNode n = new_node(IR_SCAN, rt, s->ndim, s->shape);
  n.op = (uint16_t)op;
  n.axes = 1u << axis;
  n.src[0] = x;
  return add_node(g, n, out, d);
}

LoomStatus ir_copy(IrGraph *g, int32_t x, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "copy: null argument");
  LoomStatus st = check_node(g, x, "copy", d);
  if (st) return st;
  const IrNode *s = &g->nodes[x];
  IrNode n = new_node(IR_COPY, (LoomDType)s->dtype, s->ndim, s->shape);
  n.src[0] = x;
  return add_node(g, n, out, d);
}

int ir_node_arity(const IrNode *n) {
  if (n->kind == IR_INPUT || n->kind == IR_CONST || n->kind == IR_IOTA) return 0;
  if (n->kind == IR_MATMUL) return 2;
  if (n->kind == IR_ELEM) {
    const OpInfo *info = op_info((LoomOp)n->op);
    return info ? info->arity : 0;
  }
  return 1;
}

LoomStatus ir_matmul(IrGraph *g, int32_t a, int32_t b, int32_t *out, Diag *d) {
  if (!g || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "matmul: null argument");
  LoomStatus st = check_node(g, a, "matmul", d);
  if (!st) st = check_node(g, b, "matmul", d);
  if (st) return st;
  const IrNode *x = &g->nodes[a], *y = &g->nodes[b];
  char s1[160], s2[160];
  ir_format_shape(s1, sizeof s1, x->ndim, x->shape);
  ir_format_shape(s2, sizeof s2, y->ndim, y->shape);
  if (x->ndim < 2 || x->ndim != y->ndim)
    return diag_error(d, LOOM_ERR_SHAPE, "matmul: operands of shapes %s and %s must have one rank >= 2", s1, s2);
  int nd = x->ndim;
  for (int i = 0; i < nd - 2; i++)
    if (x->shape[i] != y->shape[i])
      return diag_error(d, LOOM_ERR_SHAPE, "matmul: batch dims of %s and %s differ (broadcast them first)", s1, s2);
  if (x->shape[nd - 1] != y->shape[nd - 2] || x->shape[nd - 1] < 1)
    return diag_error(d, LOOM_ERR_SHAPE, "matmul: %s @ %s: the contracted dims must be equal and >= 1", s1, s2);
  if (x->dtype != y->dtype || !dtype_is_float((LoomDType)x->dtype))
    return diag_error(d, LOOM_ERR_DTYPE, "matmul: operands must share one float dtype, not %s and %s",
                      loom_dtype_name((LoomDType)x->dtype), loom_dtype_name((LoomDType)y->dtype));
  IrNode n = new_node(IR_MATMUL, (LoomDType)x->dtype, nd, x->shape);
  n.shape[nd - 1] = y->shape[nd - 1];
  n.src[0] = a;
  n.src[1] = b;
  return add_node(g, n, out, d);
}

LoomStatus ir_iota(IrGraph *g, int ndim, const int64_t *shape, int32_t *out, Diag *d) {
  if (!g || !out || (ndim > 0 && !shape)) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "iota: null argument");
  LoomStatus st = check_shape(ndim, shape, "iota", d);
  if (st) return st;
  IrNode n = new_node(IR_IOTA, LOOM_INT64, ndim, shape);
  return add_node(g, n, out, d);
}
