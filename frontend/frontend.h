/* SPDX-License-Identifier: Apache-2.0 */
/* frontend.h: the graph builder behind the public loom_* graph API (frontend/graph.c) and its call memo
 * (frontend/op_memo.c). Later: the kernel snippet lexer and parser (user kernels). */
#ifndef LOOM_FRONTEND_H
#define LOOM_FRONTEND_H

#include "ir/ir.h"

typedef struct OpMemo OpMemo;
enum { OP_MEMO_SIZE = 512, OP_MEMO_MAX = 1 << 16 /* entries: the first table, the largest (powers of two) */ };

struct LoomGraph {
  LoomContext *ctx;
  IrGraph ir;
  /* Evaluation plans the runtime keeps for this graph (runtime/eval.c): the graph only grows and its
   * nodes change only through loom_node_bind, which drops them all; free_plans (set by the runtime)
   * releases them. */
  void *plans;
  void (*free_plans)(LoomGraph *g);
  /* The builder's call memo (op_memo.c): the node an earlier successful call with the same arguments
   * returned; NULL until first used. */
  OpMemo *memo;
};

/* ---- op_memo.c: (call kind and arguments, two words) -> the node it returned ----------------------------
 * Keys: memo_key_elem / memo_key_weak below. Looked up and filled only while op_memo_usable. */
bool op_memo_find(const LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode *out);
void op_memo_put(LoomGraph *g, uint64_t k0, uint64_t k1, LoomNode out); /* silently nothing without memory */
void op_memo_free(LoomGraph *g);
/* While a node is bound (loom_node_bind) the builder answers differently (a bound node is no longer
 * found by hash-consing, a bound weak constant is a strong input): the memo is not used then. Its
 * entries, all made while nothing was bound, hold again once everything is unbound. */
static inline bool op_memo_usable(const LoomGraph *g) { return g->ir.nbound == 0; }

enum { MEMO_ELEM = 1, MEMO_WEAK = 2 };
/* An elementwise op on up to three operand nodes (-1 where absent). */
static inline void memo_key_elem(LoomOp op, LoomNode a, LoomNode b, LoomNode c, uint64_t *k0, uint64_t *k1) {
  *k0 = (uint64_t)(uint32_t)a | (uint64_t)(uint32_t)b << 32;
  *k1 = (uint64_t)(uint32_t)c | (uint64_t)(uint16_t)op << 32 | (uint64_t)MEMO_ELEM << 56;
}
/* A weak constant of dtype whose value has the bit pattern bits (a double's, an int64's, a bool's). */
static inline void memo_key_weak(LoomDType dtype, uint64_t bits, uint64_t *k0, uint64_t *k1) {
  *k0 = bits;
  *k1 = (uint64_t)(uint8_t)dtype << 32 | (uint64_t)MEMO_WEAK << 56;
}

#endif /* LOOM_FRONTEND_H */
