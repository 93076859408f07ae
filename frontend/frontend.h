/* frontend.h: the graph builder behind the public loom_* graph API (frontend/graph.c).
 * Later: the kernel snippet lexer and parser (user kernels). */
#ifndef LOOM_FRONTEND_H
#define LOOM_FRONTEND_H

#include "ir/ir.h"

struct LoomGraph {
  LoomContext *ctx;
  IrGraph ir;
};

#endif /* LOOM_FRONTEND_H */
