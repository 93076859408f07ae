/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_fuse.h: the FUSE section of a bundle (format 1.2): bundled @loom.fuse signatures in a size-free
 * form, so that libloom rebuilds a call's graph for any sizes without running the Python function.
 *
 * A record is one signature of one function: the function's identity (the Python side's text: module,
 * qualified name and a digest of its code and the globals it reads), its display name, per argument a
 * kind (array, or a Python bool / int / float / complex scalar) with an array's dtype and rank, and the
 * nodes of the graph its trace built, in topological order, reduced to what does not depend on sizes:
 * kind, op, result dtype and rank, flags, sources (earlier nodes of the record), an input's argument, a
 * constant's value or the scalar argument it stands for, reduced axes, a permutation, for a reshape
 * that only inserts or drops axes of size 1 (x[:, None], squeeze) which source axis each result axis is,
 * and for a slice that reads every element (x[:], x[::-1]) each axis's direction. Sizes come back from the
 * call's arrays through the graph constructors' own rules (broadcasting, reductions). Nodes whose sizes
 * are literal (broadcast_to, other reshapes and slices, iota) never appear: loom.aot does not bundle such
 * a graph (its trace depends on the sizes).
 *
 * This file (bundle_fuse.c) is LLVM-free and in both libraries: the section's bytes, written and read
 * (every count, index, string and reserved field checked; nothing is used before it is checked). The
 * rebuild into a graph is libloom's (bundle_fuse_graph.c).
 */
#ifndef LOOM_RUNTIME_BUNDLE_FUSE_H
#define LOOM_RUNTIME_BUNDLE_FUSE_H

#include "loom/loom_aot.h"
#include "runtime/bundle.h"

/* argument kinds (LoomFuseArg.kind in loom_aot.h uses the same numbers) */
enum { RF_ARRAY = 0, RF_BOOL = 1, RF_INT = 2, RF_FLOAT = 3, RF_COMPLEX = 4, RF_KIND_COUNT = 5 };
enum { RF_MAX_ARGS = 64, RF_MAX_NODES = 1 << 16, RF_MAX_OUTS = 256 };
enum { RF_FLAG_TUPLE = 1u }; /* the function returns a tuple */
enum { RF_NEW_AXIS = 0xff };  /* a RESHAPE node's result axis of size 1 that no source axis is */

typedef struct RtFuseArg {
  uint8_t kind, dtype, ndim; /* dtype, ndim: arrays only (0 for scalars) */
} RtFuseArg;

typedef struct RtFuseNode {
  uint8_t kind, dtype, flags, ndim; /* IrKind (INPUT CONST ELEM CAST PERMUTE REDUCE SCAN MATMUL), IR_FLAG_* */
  uint16_t op;                      /* LoomOp (ELEM) or LoomReduceOp (REDUCE, SCAN) */
  int32_t src[3];                   /* earlier nodes of the record, -1 where unused */
  int32_t bind;                     /* INPUT: the argument; CONST: the scalar argument it holds, or -1 */
  uint32_t axes;                    /* REDUCE, SCAN */
  uint8_t perm[LOOM_MAX_RANK];      /* PERMUTE: result axis i = source axis perm[i]; RESHAPE: result axis i is
                                     * source axis perm[i] (increasing) or a new axis of size 1 (RF_NEW_AXIS);
                                     * the source axes it does not name have size 1 and are dropped; SLICE:
                                     * axis i read whole, forward (0) or reversed (1) */
  Scalar value;                     /* CONST with bind -1 */
} RtFuseNode;

struct RtFuseRecord {
  const char *name, *identity; /* inside the section's string area */
  int32_t nargs, nnode, nout, nwrite;
  uint32_t flags;
  const RtFuseArg *args;
  const RtFuseNode *nodes;
  const int32_t *outs;       /* [nout]: results, then the nwrite arguments' new values */
  const int32_t *write_args; /* [nwrite]: the argument each of the last nwrite outputs is written into */
  uint64_t sig_hash;         /* of identity and arguments (rt_fuse_sig_hash) */
};

/* Hash of an identity and argument signature (what rt_bundle_find_fuse looks up). */
uint64_t rt_fuse_sig_hash(const char *identity, int32_t nargs, const RtFuseArg *args);
/* The record of b for identity and args (kinds, dtypes, ranks), or NULL. */
const RtFuseRecord *rt_bundle_find_fuse(const RtBundle *b, const char *identity, int32_t nargs, const RtFuseArg *args);

/* ---- the writer: records accumulate, then one section's bytes ------------------------------------- */
typedef struct RtFuseWriter RtFuseWriter;
LoomStatus rt_fuse_writer_create(LoomContext *ctx, RtFuseWriter **out, Diag *d);
void rt_fuse_writer_free(RtFuseWriter *w);
int32_t rt_fuse_writer_count(const RtFuseWriter *w);
/* Appends a record (copied). Returns LOOM_OK, or an error when it has the identity and arguments of a
 * record already added (then nothing is added) or memory runs out. */
LoomStatus rt_fuse_writer_add(RtFuseWriter *w, const char *name, const char *identity, int32_t nargs,
                              const RtFuseArg *args, int32_t nnode, const RtFuseNode *nodes, int32_t nout,
                              const int32_t *outs, int32_t nwrite, const int32_t *write_args, uint32_t flags,
                              bool *duplicate, Diag *d);
/* The section's bytes (owned by the writer; valid until the next add or free); *n = 0 without records. */
LoomStatus rt_fuse_writer_bytes(RtFuseWriter *w, const uint8_t **bytes, size_t *n, Diag *d);

/* ---- rebuilding (bundle_fuse_replay.c; libloom and the fuzzer) ---------------------------------------- */
/* Adds record r's nodes to g for the call's arguments args (arrays: args[j].node is the argument's input
 * node of g); map[i] (r->nnode entries) = the graph node of record node i. An error: the record does not
 * fit the call (nodes already added stay: the caller rolls back or drops g). */
LoomStatus rt_fuse_replay(IrGraph *g, const RtFuseRecord *r, const LoomFuseArg *args, int32_t *map, Diag *d);
/* Whether reshaping `from` (sn axes) to `to` (n axes) only inserts or drops axes of size 1; then map[i]
 * (n entries) is the source axis of result axis i, or RF_NEW_AXIS. */
bool rt_fuse_unit_reshape(int sn, const int64_t *from, int n, const int64_t *to, uint8_t *map);
/* Whether slice node n of source s reads every element of every axis; then dir[i] is 0 (forward) or 1
 * (reversed). */
bool rt_fuse_whole_slice(const IrNode *s, const IrNode *n, uint8_t *dir);
/* The node for scalar argument a where a record has constant n (weak, or converted by value to n's dtype). */
LoomStatus rt_fuse_scalar_node(IrGraph *g, const LoomFuseArg *a, const RtFuseNode *n, int32_t *out, Diag *d);

#endif /* LOOM_RUNTIME_BUNDLE_FUSE_H */
