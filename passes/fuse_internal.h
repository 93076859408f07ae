/* SPDX-License-Identifier: Apache-2.0 */
/* fuse_internal.h: private to pass_fuse (passes/fuse*.c): the bounds, the Fuser state, and the
 * functions one file of the pass calls in another. See fuse.c for the pass's contract and approach.
 *
 *   fuse.c        the pass: cone bounding, placement in node order, kernel order, temps
 *   fuse_cones.c  what a node reads: cone walks, leaves and producers; read resolution (lower.c too)
 *   fuse_join.c   the kernel table and join legality: cycle checks, node and buffer budgets
 *   fuse_place.c  grouping decisions: which kernel a reduction, scan or elementwise node joins
 *   fuse_calls.c  library calls (IR_MATMUL): operands read in place, epilogues, call kernels
 *
 * Every function returning LoomStatus reports out of memory in f->d; the others cannot fail.
 */
#ifndef LOOM_PASSES_FUSE_INTERNAL_H
#define LOOM_PASSES_FUSE_INTERNAL_H

#include "passes/passes.h"

enum {
  FUSE_MAX_NODES = 512, /* ELEM/CAST nodes (plus reductions) per kernel */
  FUSE_MAX_BUFS = 64,   /* buffers per kernel (reads and stores) */
  FUSE_GPU_WORDS = 500, /* 8-byte words of a GPU kernel's parameter block we allow (4 KB limit) */
  FUSE_MAX_TRIES = 32,  /* open elementwise kernels of a shape tried before starting a new one */
  FUSE_MAX_REACH = 1024, /* kernels one cycle check may visit before it refuses the join */
  FUSE_SIBLING_MIN_O = 512,  /* kept points from which a one-phase row reduction takes a sibling */
  FUSE_SIBLING_SPLIT_R = 8192 /* reduced points below which no target splits R (any kernel takes one) */
};

/* A set of (kernel, node, tag) keys: which read tops and cone nodes a kernel already has. */
typedef struct KeySet {
  uint64_t *slot; /* key + 1, 0 = empty */
  int64_t cap, n;
} KeySet;

/* Per shape: the elementwise kernels of that shape still open to joins, in creation order. */
typedef struct ShapeBucket {
  int32_t kernel0; /* a kernel of the shape (-1: empty slot) */
  int32_t *ks, n, cap, first;
} ShapeBucket;

typedef struct Fuser {
  IrModule *m;
  IrGraph *g;
  FusionPlan *p;
  Diag *d;
  int32_t *stamp, gen; /* per node: visited mark of the current cone walk */
  int32_t *reads, nreads, capreads;
  int32_t *cone, ncone, capcone; /* the ELEM/CAST nodes of the current cone walk */
  int32_t *stack, capstack;      /* explicit stack of the walks */
  int32_t *kstamp, kgen;         /* per kernel: visited mark of pass_fuse_reaches() */
  int32_t kstamp_cap;
  /* budgets */
  int32_t *knodes, *kbufs, *kusers; /* per kernel: nodes, buffers, kernels that depend on it */
  uint8_t *kfull;                   /* per kernel: refused a join for its budget */
  KeySet members;
  ShapeBucket *buckets; /* open addressing on the shape */
  int32_t nbucket_cap, nbucket_used;
  uint8_t *has_user; /* per node: read by another live node (a root that needs a temp too) */
  uint8_t *is_out;   /* per node: one of m->roots */
  int32_t *redks, nredk, capredk; /* the reduction kernels, in creation order (sibling joins) */
} Fuser;

/* ---- fuse_cones.c ------------------------------------------------------------------------------------- */
/* Appends v to the arena array *arr (*n used, *cap allocated), growing it. */
LoomStatus pass_fuse_push_i32(Fuser *f, int32_t **arr, int32_t *n, int32_t *cap, int32_t v);
int pass_fuse_elem_arity(const IrNode *n);                     /* operands of an ELEM/CAST node */
LoomStatus pass_fuse_walk_cone(Fuser *f, int32_t start);       /* start's cone: f->cone, f->reads */
int32_t pass_fuse_stored_value(const IrGraph *g, int32_t x);   /* the node realized node x stores */
LoomStatus pass_fuse_collect_reads(Fuser *f, int32_t x);       /* f->reads: the tops x's cone reads */
int32_t pass_fuse_leaf_of(const IrGraph *g, int32_t top);      /* the node under top's movement chain */
int32_t pass_fuse_call_leaf_of(const Fuser *f, int32_t top);   /* the node whose buffer a call reads */
int32_t pass_fuse_producer_of(const Fuser *f, int32_t top);    /* the kernel writing top's buffer, or -1 */

/* ---- fuse_join.c -------------------------------------------------------------------------------------- */
LoomStatus pass_fuse_reaches(Fuser *f, int32_t from, int32_t to, int32_t *budget, bool *out);
LoomStatus pass_fuse_no_cycle(Fuser *f, int32_t k, bool *ok); /* may x (f->reads) join k without a cycle */
LoomStatus pass_fuse_new_kernel(Fuser *f, int32_t *out);
int32_t pass_fuse_buf_cap(int nd);                             /* the buffer budget of a rank-nd kernel */
bool pass_fuse_keyset_has(const KeySet *s, uint64_t key);
uint64_t pass_fuse_member_key(int32_t k, int32_t node, int tag); /* key of (kernel, node, tag) */
bool pass_fuse_is_const_read(const IrGraph *g, int32_t top);
bool pass_fuse_fits_budget(Fuser *f, int32_t k, int32_t x);    /* x's cone and reads fit k's budgets */
LoomStatus pass_fuse_commit_join(Fuser *f, int32_t k, int32_t x); /* records x in k's budget */
LoomStatus pass_fuse_can_join(Fuser *f, int32_t k, bool final_space, int32_t x, bool *ok);
LoomStatus pass_fuse_add_deps(Fuser *f, int32_t k);            /* k depends on the producers of f->reads */

/* ---- fuse_place.c ------------------------------------------------------------------------------------- */
bool pass_fuse_same_dims(int na, const int64_t *a, int nb, const int64_t *b);
LoomStatus pass_fuse_place_reduce(Fuser *f, int32_t x); /* a reduction or scan x (reads in f->reads) */
LoomStatus pass_fuse_place_other(Fuser *f, int32_t x);  /* any other realized x (reads in f->reads) */

/* ---- fuse_gather.c ------------------------------------------------------------------------------------ */
bool pass_fuse_movement_kind(int kind);
LoomStatus pass_fuse_place_scatter(Fuser *f, int32_t x);      /* the base's kernel, then the scatter kernel */
LoomStatus pass_fuse_mark_scatter_temps(Fuser *f, int32_t k); /* the index's and values' producers' temps */

/* ---- fuse_calls.c ------------------------------------------------------------------------------------- */
LoomStatus pass_fuse_copy_call_roots(IrModule *m, Diag *d);
void pass_fuse_plan_operands(Fuser *f, int32_t x, uint8_t *realized);
LoomStatus pass_fuse_plan_epilogues(Fuser *f, const uint8_t *realized, int32_t *epi_root, CallEpilogue *epi);
LoomStatus pass_fuse_place_call(Fuser *f, int32_t x, int32_t store, const CallEpilogue *epi);
LoomStatus pass_fuse_place_epilogue(Fuser *f, int32_t x, int32_t mm);

#endif
