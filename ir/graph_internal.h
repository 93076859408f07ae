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

#include "ir/ir.h"

/* A zeroed node of the given kind, dtype and shape (no operands: src[] = -1, input = -1). */
IrNode ir_new_node(IrKind kind, LoomDType dtype, int ndim, const int64_t *shape);
/* Canonicalizes *n (in place: the caller's scratch node) and returns the index of the equal node, adding a
 * copy of *n when there is none; on failure (out of memory, too many nodes) the graph is unchanged. *n's
 * per-axis entries must be zero where unused (past ndim; arg, arg2 of kinds without them), as ir_new_node
 * leaves them. Taken by pointer: a node is ~440 bytes, and copying it by value was a fifth of an op. */
LoomStatus ir_add_node(IrGraph *g, IrNode *n, int32_t *out, Diag *d);
/* LOOM_ERR_INVALID_ARGUMENT unless x is a node of g; `what` names the constructor in the message. */
LoomStatus ir_check_node(const IrGraph *g, int32_t x, const char *what, Diag *d);
/* LOOM_ERR_SHAPE unless the rank is 0..LOOM_MAX_RANK and the extents are >= 0 with an int64 product. */
LoomStatus ir_check_shape(int ndim, const int64_t *shape, const char *what, Diag *d);

#endif
