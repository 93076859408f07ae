/* SPDX-License-Identifier: Apache-2.0 */
/* passes.h: the passes between the graph IR and a schedule of kernels.
 *
 * A pass has the signature `LoomStatus pass_NAME(IrModule *m, Diag *d)`; analyses are compute_*,
 * transforms are verbs. passes/pipeline.c runs them in order from one {name, fn} table, verifies the
 * IR between passes in debug builds, and appends per-pass dumps when LOOM_DUMP asks for them.
 *
 * Pipeline: fold (constant folding) -> onehot (one-hot sums become gathers) -> push_views (movement ops moved onto leaves) -> fuse (kernel
 * grouping) -> lower (kernel IR + bindings, reduction strategy) -> collapse (merge contiguous dims).
 * Graph nodes are immutable and hash-consed, so rewrites add nodes and replace the roots.
 */
#ifndef LOOM_PASSES_H
#define LOOM_PASSES_H

#include "ir/ir.h"

struct FusionPlan; /* defined by passes/fuse.c's section below */

typedef struct IrModule {
  IrGraph *graph;
  Arena *arena;               /* everything a pass allocates lives here */
  int32_t nroots;
  int32_t *roots;             /* the requested nodes (arena copy; passes replace entries) */
  const LoomArray *outs;      /* nroots output descriptors: dtype, shape, strides (data unused) */
  struct FusionPlan *plan;    /* set by pass_fuse */
  Schedule *schedule;         /* set by pass_lower, refined by pass_collapse */
  StrBuf *dump;               /* non-NULL: per-pass dumps are appended */
  uint32_t dump_flags;        /* IR_DUMP_* */
  uint8_t *const_read;        /* per node below nconst_read (the graph's size at the start): Schedule.const_read */
  int32_t nconst_read;
} IrModule;

/* ---- shared by views.c, fuse.c and lower.c (internal) -------------------------------------------- */

/* A composed strided view of a leaf: element (j0, j1, ...) of the viewed node lives at
 * offset + sum j_i * strides[i] elements from the leaf's storage. Storage of a leaf: an IR_INPUT is
 * the input's LoomArray (its strides); any other leaf (IR_REDUCE, IR_COPY, a realized root) is a
 * C-contiguous temp of its shape; an IR_CONST has rank 0. */
typedef struct IrView {
  int32_t leaf; /* the first node below the chain that is not a movement op */
  int64_t offset;
  int64_t strides[LOOM_MAX_RANK]; /* per dim of the viewed node */
} IrView;

/* push_views bounds every movement chain it builds to this many ops (a longer one is cut by an
 * IR_COPY), so composing a view is cheap and never runs out of its fixed chain buffer (256). */
#define PASS_MAX_VIEW_CHAIN 64
/* The most points one kernel may run (collapse.c refuses more: 2^50 points is a day of host time). */
#define PASS_MAX_POINTS (INT64_C(1) << 50)

/* views.c: composes the movement ops from node down to its leaf. Returns false when a reshape in the
 * chain cannot be expressed with strides (NumPy's no-copy reshape rule); out is then unspecified. */
bool pass_compute_view(const IrGraph *g, int32_t node, IrView *out);
/* A node template (passes/views.c): kind, dtype, shape; no sources; every other field zero. */
void pass_init_node(IrNode *n, int kind, int dtype, int ndim, const int64_t *shape);
/* The IR_CONST below a BROADCAST(CONST) or the CONST itself, else -1 (passes/views.c). */
int32_t pass_const_of(const IrGraph *g, int32_t x);
/* Notes that a pass's result depends on the value of IR_CONST node c (a rule fired on it, or it is baked):
 * the schedule then holds only for that value (Schedule.const_read). A pass that reads a constant's value
 * and rewrites, matches or bakes on it must note it; a rule that looked and did not fire need not, since
 * the general form it left is right for every value (passes/views.c). */
void pass_note_const_read(IrModule *m, int32_t c);
/* Notes every IR_CONST reachable from top, not below node `stop` (-1: none): for rewrites that matched a
 * whole expression (onehot, call epilogues). */
LoomStatus pass_note_consts_below(IrModule *m, int32_t top, int32_t stop, Diag *d);
/* C-contiguous strides of a shape (elements). */
void pass_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides);
/* Whether root i's output can stand in for its node's contiguous storage: C-contiguous and the first
 * root of that node (fuse_calls.c). Later kernels then read the node from that output, not a temp. */
bool pass_root_output_contiguous(const IrModule *m, int32_t i);

/* Kinds computed inside a kernel's cone (read from their operands at the point): elementwise ops, casts
 * and gathers (whose src[0], the data's view, is read as any view; src[1], the index, is an operand). */
static inline bool pass_cone_kind(int kind) { return kind == IR_ELEM || kind == IR_CAST || kind == IR_GATHER; }

/* calls.c: what the passes know about library-call nodes (IR_MATMUL). */
/* Whether a BLAS reads (or writes) the matrices of an array of shape [B..., R, C] with these element
 * strides in place: no negative stride, and per matrix one unit-stride dim (or size 1) whose partner
 * stride is at least its extent (a row- or column-major matrix with a leading dimension). */
bool pass_blas_matrix(int ndim, const int64_t *shape, const int64_t *strides);
/* An elementwise epilogue a call applies itself: out = act(alpha * P + bias + beta * c). */
typedef struct CallEpilogue {
  int32_t bias, c; /* tops read as the bias vector and the c matrix (-1: none) */
  double alpha, beta;
  uint8_t act;     /* KCallAct */
} CallEpilogue;
/* Whether the cone of `value` (an ELEM/CAST chain that reads the IR_MATMUL node mm, at mm's shape and
 * dtype) is such an epilogue; is_stop marks realized nodes (their values are read, not recomputed). */
bool pass_match_epilogue(const IrGraph *g, const uint8_t *is_stop, int32_t value, int32_t mm, CallEpilogue *out);

/* fuse.c: the kernel grouping. Kernel dims are kept axes of the space X (in order) then reduced axes
 * (in order); perm maps a kernel dim to its axis of X (-1: a virtual size-1 reduced dim, used when a
 * reduction reduces no axis). */
typedef struct FusedKernel {
  int32_t ndim, nkeep;
  int64_t shape[LOOM_MAX_RANK];
  int32_t perm[LOOM_MAX_RANK];
  int32_t xndim;                  /* the space X (source shape of the reductions, or the node shape) */
  int64_t xshape[LOOM_MAX_RANK];
  uint32_t axes;                  /* reduced axes of X (0 for elementwise kernels) */
  bool is_reduction;
  bool is_scan;                   /* reduces[0] is an IR_SCAN (the only one): one KP_SCAN phase whose
                                     stores are the scan and the maps (which read it at their point) */
  int32_t nreduce, nmap, nfinal, ndep;
  int32_t *reduces; /* IR_REDUCE nodes, in phase order (or the one IR_SCAN) */
  int32_t *maps;    /* realized nodes stored by the MAP phase (shape X) */
  int32_t *finals;  /* realized nodes stored by the FINAL phase (the reductions' output shape) */
  /* realized nodes (shape X) stored by the first REDUCE phase at each point it folds (its side stores,
   * ir.h): the roots of an elementwise kernel that a reduction reading them took over (fuse_place.c),
   * so the values are written and reduced in one pass; read at the point by the kernel's other phases */
  int32_t nside, cap_side;
  int32_t *sides;
  int32_t *deps;    /* kernels that must run first (indices into FusionPlan.kernels) */
  int32_t cap_reduce, cap_map, cap_final, cap_dep;
  /* a library-call kernel: the IR_MATMUL node it computes (its only member besides an epilogue root),
   * the realized node it stores (the product itself, or the root of the epilogue it applies) */
  bool is_call;
  int32_t call, call_store;
  CallEpilogue epi;
  /* the scatter kernel of an IR_SCATTER (maps = that node alone): over its index shape, it stores the
   * values at the computed positions of the node's buffer, which an earlier kernel filled with the base
   * (that kernel stores the node as an ordinary map whose value is the base: fuse_gather.c) */
  bool is_scatter;
} FusedKernel;

typedef struct FusionPlan {
  int32_t nkernel, cap;
  FusedKernel *kernels; /* in run order once pass_fuse returns */
  int32_t nnodes;       /* graph size when fused; the per-node arrays have this many entries */
  int32_t *kernel_of;   /* realized node -> kernel that computes it, else -1 */
  uint8_t *is_root;     /* node is one of the roots */
  uint8_t *needs_temp;  /* realized node read by another kernel: stored into a temp */
  uint8_t *is_stop;     /* realized ELEM/CAST node whose value other cones read (roots, call operands,
                           and the "cuts" that bound kernels, see fuse.c) */
  uint8_t *call_operand;/* node materialized into its own temp for a call (the call reads that temp) */
} FusionPlan;

/* How a phase of kernel k reads `top` (a movement chain over a leaf, a leaf, or a realized root).
 * final_space: the read happens in a FINAL phase, where top's shape is the reductions' output shape
 * (keepdims or not); otherwise top's shape is X. */
typedef struct ReadInfo {
  int32_t leaf;
  bool is_const;  /* the value is the IR_CONST leaf */
  bool is_acc;    /* a reduction of k read at the kept coordinates, or k's scan read at the point itself:
                     KI_ACC of phase acc_phase */
  int32_t acc_phase;
  bool is_local;  /* another root of k's one elementwise phase, read at the point (pass_local_map): its
                     value is computed in k and used from there, no buffer */
  int64_t offset;
  int64_t strides[LOOM_MAX_RANK]; /* per kernel dim; 0 on size-1 dims */
} ReadInfo;
/* Whether `top` is an ELEM/CAST root that kernel k computes at the point being computed (one of an
 * elementwise kernel's maps, or of a reduction kernel's sides, read outside a FINAL phase) read there
 * (top is the node itself, no view): a root of k that reads it uses its value, as a cone does (Adam's m
 * and v feed the parameter update in the kernel that stores them; amp's any(~isfinite(g32)) folds the
 * g32 it stores). Not for float16 / bfloat16 nodes (a store skips their rounding) nor scans, calls or
 * scatters. */
bool pass_local_map(const IrGraph *g, const FusedKernel *k, bool final_space, int32_t top);
LoomStatus pass_resolve_read(const IrGraph *g, const FusedKernel *k, bool final_space, int32_t top,
                             ReadInfo *out, Diag *d);
/* Maps strides given per dim of a node of shape (ndim, shape) to kernel dims (see ReadInfo). */
bool pass_map_strides(const FusedKernel *k, bool final_space, int ndim, const int64_t *shape,
                      const int64_t *in, int64_t *out);

/* Runs the whole pipeline: on success m->schedule holds the kernels to run in order. */
LoomStatus pass_run_pipeline(IrModule *m, Diag *d);

LoomStatus pass_fold(IrModule *m, Diag *d);
LoomStatus pass_push_views(IrModule *m, Diag *d);
/* onehot.c: sum(where(L == index along k, v, 0), axis=k) becomes a gather of v at L's position. */
LoomStatus pass_onehot(IrModule *m, Diag *d);
LoomStatus pass_fuse(IrModule *m, Diag *d);
LoomStatus pass_lower(IrModule *m, Diag *d);
LoomStatus pass_collapse(IrModule *m, Diag *d);
/* flip_dims.c (a step of pass_collapse, before layouts): dims that memory runs through backwards are
 * walked from their last point where the kernel's result does not depend on the order of its points. */
void pass_flip_dims(SchedKernel *sk);
/* complex_parts.c: a complex input read only through .real (or only .imag) is read as a float view of its
 * parts (offset 2o (+1), strides doubled): a stride-2 float load instead of a complex one. */
LoomStatus pass_complex_parts(IrModule *m, Diag *d);

/* Prints the schedule (each kernel's IR plus its shape and bindings) in the golden-file format. */
void ir_print_schedule(const Schedule *s, StrBuf *out);

#endif /* LOOM_PASSES_H */
