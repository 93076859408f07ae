/* SPDX-License-Identifier: Apache-2.0 */
/* graph_internal.h: private to the graph IR's constructors (ir/graph.c, graph_elementwise.c,
 * graph_nodes.c): the node template, the hash-consing insert and the argument checks they share.
 *
 *   graph.c             storage, hash-consing, rollback; inputs and constants; scalar helpers
 *   graph_elementwise.c elementwise nodes: NumPy 2 dtype rules, weak Python scalars, broadcasting
 *   graph_nodes.c       casts, movement (broadcast, reshape, permute, slice), reductions, scans,
 *                       copies, products and iotas
 */
#ifndef LOOM_IR_GRAPH_INTERNAL_H
#define LOOM_IR_GRAPH_INTERNAL_H

#include <string.h>

#include "ir/ir.h"

/* *n (the caller's scratch node): kind, dtype and shape, no operands (src[] = -1, input = -1), every scalar
 * field zero. Only what hash-consing reads is written: the scalar fields, shape[0, ndim) when shape is given, and arg /
 * arg2 (zeroed whole) of the kinds that use them (IR_PERMUTE, IR_SLICE); the per-axis entries past ndim are
 * left as they are (ir_add_node zeroes them in the copy it stores). In place and inline, writing ~50 bytes
 * where a returned zeroed node cost a ~440-byte memset and copy: a quarter of a hash-consed op. A
 * constructor that grows ndim afterwards (ir_reduce) writes each shape entry it adds. */
static inline void ir_node_init(IrNode *n, IrKind kind, LoomDType dtype, int ndim, const int64_t *shape) {
  n->kind = (uint8_t)kind;
  n->dtype = (uint8_t)dtype;
  n->ndim = (uint8_t)ndim;
  n->flags = 0;
  n->op = 0;
  n->pad = 0;
  n->src[0] = n->src[1] = n->src[2] = -1;
  n->input = -1;
  n->axes = 0;
  memset(&n->value, 0, sizeof n->value);
  n->hash = 0;
  if (ndim > 0 && shape) memcpy(n->shape, shape, sizeof(int64_t) * (size_t)ndim);
  if (kind == IR_PERMUTE || kind == IR_SLICE) {
    memset(n->arg, 0, sizeof n->arg);
    memset(n->arg2, 0, sizeof n->arg2);
  }
}
/* Canonicalizes *n (in place: the caller's scratch node) and returns the index of the equal node, adding a
 * copy of *n when there is none, its unused per-axis entries zeroed; on failure (out of memory, too many
 * nodes) the graph is unchanged. *n's entries below ndim must be set: shape always, arg and arg2 for
 * IR_PERMUTE / IR_SLICE (zero where unused, as ir_node_init leaves them); those past ndim are not read.
 * Taken by pointer: a node is ~440 bytes, and copying it by value was a fifth of an op. */
LoomStatus ir_add_node(IrGraph *g, IrNode *n, int32_t *out, Diag *d);
/* LOOM_ERR_INVALID_ARGUMENT unless x is a node of g; `what` names the constructor in the message. */
LoomStatus ir_check_node(const IrGraph *g, int32_t x, const char *what, Diag *d);
/* LOOM_ERR_SHAPE unless the rank is 0..LOOM_MAX_RANK and the extents are >= 0 with an int64 product. */
LoomStatus ir_check_shape(int ndim, const int64_t *shape, const char *what, Diag *d);

#endif
