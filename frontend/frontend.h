/* SPDX-License-Identifier: Apache-2.0 */
/* frontend.h: the graph builder behind the public loom_* graph API (frontend/graph.c).
 * Later: the kernel snippet lexer and parser (user kernels). */
#ifndef LOOM_FRONTEND_H
#define LOOM_FRONTEND_H

#include "ir/ir.h"

struct LoomGraph {
  LoomContext *ctx;
  IrGraph ir;
  /* Evaluation plans the runtime keeps for this graph (runtime/eval.c): the graph only grows and its
   * nodes change only through loom_node_bind, which drops them all; free_plans (set by the runtime)
   * releases them. */
  void *plans;
  void (*free_plans)(LoomGraph *g);
};

#endif /* LOOM_FRONTEND_H */
