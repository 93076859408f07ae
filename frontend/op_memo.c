/* SPDX-License-Identifier: Apache-2.0 */
/* op_memo.c: the builder's call memo (frontend.h). A loop that builds the same expression on the same arrays
 * every step (`loom.eval(f(x))` with constant scalars) repeats calls whose answer hash-consing already
 * knows: the same elementwise op on the same operand nodes returns the same node, the same weak Python
 * scalar the same constant. The memo maps such a call, by its arguments, to the node it returned, so the
 * repeat costs one table probe instead of the dtype and broadcast rules, the weak scalar's typed copy and
 * the node hashes (three hash-consed nodes for `x * 2`).
 *
 * Why a hit is the answer the builder would give: a builder call is a function of its arguments and the
 * nodes they name; nodes change only through loom_node_bind, and the memo is used only while no node is
 * bound (frontend.h's op_memo_usable: entries are made and read with every node as it was built, and
 * loom_node_unbind restores a node exactly); a rollback drops only nodes made after the failing call
 * began, never a node an earlier successful call returned or read, so an entry's nodes stay what they were. Only successful calls are kept
 * (errors are raised again by the full path). One direct-mapped table per graph, allocated on its first
 * use and grown with the graph (a graph that never repeats a call pays one probe per call and the insert). */
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

typedef struct OpMemoEntry {
  uint64_t k0, k1;
  int32_t out;
  uint32_t used; /* 0: an empty slot */
} OpMemoEntry;

struct OpMemo {
  uint32_t mask; /* entries - 1, a power of two minus one */
  OpMemoEntry e[];
};

static inline uint32_t memo_slot(const OpMemo *m, uint64_t k0, uint64_t k1) {
  uint64_t h = k0 * 0x9e3779b97f4a7c15ull ^ (k1 + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h >> 32) & m->mask;
}

bool op_memo_find(const LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode *out) {
  const OpMemo *m = g->memo;
  if (!m) return false;
  const OpMemoEntry *e = &m->e[memo_slot(m, k0, k1)];
  if (!e->used || e->k0 != k0 || e->k1 != k1) return false;
  *out = e->out;
  return true;
}

/* A table of at least twice the graph's nodes (OP_MEMO_SIZE .. OP_MEMO_MAX entries), so that a loop
 * rebuilding a large expression finds most of its calls; a new table starts empty. */
static OpMemo *memo_sized(LoomGraph *g) {
  uint32_t want = OP_MEMO_SIZE;
  while (want < OP_MEMO_MAX && (int64_t)want < 2 * (int64_t)g->ir.nnodes) want *= 2;
  if (g->memo && g->memo->mask + 1 >= want) return g->memo;
  OpMemo *m = ctx_calloc(g->ctx, 1, sizeof *m + (size_t)want * sizeof(OpMemoEntry));
  if (!m) return g->memo; /* the memo is an optimization: no memory, no growth (or no memo) */
  m->mask = want - 1;
  ctx_free(g->ctx, g->memo);
  g->memo = m;
  return m;
}

void op_memo_put(LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode out) {
  OpMemo *m = g->memo && (int64_t)g->memo->mask + 1 >= 2 * (int64_t)g->ir.nnodes ? g->memo : memo_sized(g);
  if (!m) return;
  OpMemoEntry *e = &m->e[memo_slot(m, k0, k1)];
  e->k0 = k0;
  e->k1 = k1;
  e->out = out;
  e->used = 1;
}

void op_memo_free(LoomGraph *g) {
  ctx_free(g->ctx, g->memo);
  g->memo = NULL;
}
