/* SPDX-License-Identifier: Apache-2.0 */
/* op_memo.c: the builder's call memo (frontend.h). A loop that builds the same expression on the same arrays
 * every step (`loom.eval(f(x))` with constant scalars) repeats calls whose answer hash-consing already
 * knows: the same elementwise op on the same operand nodes returns the same node, the same weak Python
 * scalar the same constant. The memo maps such a call, by its arguments, to the node it returned, so the
 * repeat costs one table probe instead of the dtype and broadcast rules, the weak scalar's typed copy and
 * the node hashes (three hash-consed nodes for `x * 2`).
 *
 * Why a hit is the answer the builder would give: a builder call is a function of its arguments and the
 * nodes they name; nodes are immutable except through loom_node_bind / loom_node_unbind, which drop every
 * entry (the epoch); a rollback drops only nodes made after the failing call began, never a node an earlier
 * successful call returned or read, so an entry's nodes stay what they were. Only successful calls are kept
 * (errors are raised again by the full path). One direct-mapped table of OP_MEMO_SIZE entries per graph,
 * allocated on its first use (a graph that never repeats a call pays one probe per call and the insert). */
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"

typedef struct OpMemoEntry {
  uint64_t k0, k1;
  int32_t out;
  uint32_t epoch; /* 0: empty; else valid while equal to the memo's */
} OpMemoEntry;

struct OpMemo {
  uint32_t epoch;
  OpMemoEntry e[OP_MEMO_SIZE];
};

static inline uint32_t memo_slot(uint64_t k0, uint64_t k1) {
  uint64_t h = k0 * 0x9e3779b97f4a7c15ull ^ (k1 + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h >> 32) & (OP_MEMO_SIZE - 1);
}

bool op_memo_find(const LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode *out) {
  const OpMemo *m = g->memo;
  if (!m) return false;
  const OpMemoEntry *e = &m->e[memo_slot(k0, k1)];
  if (e->epoch != m->epoch || e->k0 != k0 || e->k1 != k1) return false;
  *out = e->out;
  return true;
}

void op_memo_put(LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode out) {
  if (!g->memo) {
    g->memo = ctx_calloc(g->ctx, 1, sizeof *g->memo);
    if (!g->memo) return; /* the memo is an optimization: no memory, no memo */
    g->memo->epoch = 1;
  }
  OpMemoEntry *e = &g->memo->e[memo_slot(k0, k1)];
  e->k0 = k0;
  e->k1 = k1;
  e->out = out;
  e->epoch = g->memo->epoch;
}

void op_memo_forget(LoomGraph *g) {
  OpMemo *m = g->memo;
  if (!m) return;
  if (++m->epoch == 0) { /* wrapped: entries of epoch 1.. could match again */
    memset(m->e, 0, sizeof m->e);
    m->epoch = 1;
  }
}

void op_memo_free(LoomGraph *g) {
  ctx_free(g->ctx, g->memo);
  g->memo = NULL;
}
