/* SPDX-License-Identifier: Apache-2.0 */
/* cg_lower.h: private interface of the lowering files: the state of one lowering (Lower) and the
 * shared pieces that the host loop structure (lower_host.c) and the GPU one (gpu_lower.c,
 * gpu_strategies.c) build on (lower.c: kernel checks, the instruction evaluator, stores, phases,
 * worker regions, module set-up and verification).
 *
 * The evaluator (cg_eval_needed) emits the instructions a set of roots needs, in index order (the IR
 * is in dependency order, so no recursion), through math.c; loads and stores address
 * base[b] + off[b] where off is the element offset of the current point, kept by the loop code.
 */
#ifndef LOOM_CG_LOWER_H
#define LOOM_CG_LOWER_H

#include "codegen/cg_gpu.h"
#include "codegen/cg_llvm.h"
#include "codegen/cg_snippet.h"

#define CG_MAX_DEPTH 4
/* Outer strategy: O points per block (accumulators of one block live in stack arrays). */
#define CG_OUTER_BLOCK 1024
#define CG_OUTER_WIDE_BLOCK 2048 /* blocks of outer kernels with a phase that may stream whole rows (cg_outer_block_cap) */
#define CG_OUTER_MAP_BLOCK 4096  /* blocks of colpart's MAP phase: whole rows up to this (lower_host_outer.c col_map_cap) */
#define CG_OUTER_MAP_BLOCK_MAX 16384

/* One-pass variance (gpu_moments.c): REDUCE phases whose value is (h - c)^2, c uniform over R, whose
 * shifted moments of h are gathered in phase 0's walk over R (CG_MOM_MAX of them per kernel). */
#define CG_MOM_MAX 4
typedef struct CgMomPlan {
  int n;                         /* folded phases; 0: none */
  int phase[CG_MOM_MAX];         /* ascending, each > 0 */
  int32_t h[CG_MOM_MAX], c[CG_MOM_MAX]; /* instructions: the varying term and the uniform one */
  uint8_t t[CG_MOM_MAX];         /* acc dtype (float32 or float64) */
  uint32_t bits;                 /* bit p set for each folded phase p (plans exist for <= 32 phases) */
} CgMomPlan;

/* Whether phase p (any index: kernels may have more than 32 phases) is folded into phase 0's walk. */
static inline bool cg_mom_folded(const CgMomPlan *m, int p) { return p >= 0 && p < 32 && (m->bits >> p & 1u); }

/* GPU online max (gpu_online_max.c): a REDUCE sum phase p > 0 of f(h - c), f = exp or exp2 of k * (h - c)
 * (k > 0 constant), c phase 0's max of h: its (running max m, sum f(h - m)) gathered in phase 0's walk. */
typedef struct CgOnlPlan {
  int phase;        /* the folded phase; 0: none */
  int32_t h, c, v;  /* instructions: phase 0's value, its accumulator (c), phase's value f(h - c) */
  uint8_t t;        /* float32 or float64 */
} CgOnlPlan;

/* GPU joined phases (gpu_joint.c): REDUCE phases q > 0 whose value reads no accumulator, folded in phase
 * 0's walk; their values ride in phase 0's records after its own (at off[i]; record_size bytes in all). */
#define CG_JOIN_MAX 4
typedef struct CgJoinPlan {
  int n;                    /* joined phases; 0: none */
  int phase[CG_JOIN_MAX];   /* ascending, each > 0 */
  int off[CG_JOIN_MAX];     /* byte offsets in phase 0's record */
  uint32_t bits;            /* bit q set for each joined phase q */
  int record_size;          /* 0 without a plan */
} CgJoinPlan;

static inline bool cg_join_folded(const CgJoinPlan *j, int p) { return p >= 0 && p < 32 && (j->bits >> p & 1u); }

typedef struct Lower {
  CgMath m;
  LoomContext *ctx;
  const KernelIr *k;
  LLVMTypeRef i64, ptr;
  LLVMValueRef fn;
  LLVMBasicBlockRef alloca_bb;
  LLVMBuilderRef ab;      /* positioned in alloca_bb */
  LLVMValueRef *shape;    /* ndim */
  LLVMValueRef *base;     /* nbuf */
  LLVMValueRef *param;    /* nparam: each KI_PARAM's value, decoded in the entry's prologue (cg_param_value) */
  LLVMValueRef *stride;   /* nbuf * ndim */
  LLVMValueRef *levels;   /* CG_MAX_DEPTH * nbuf offsets */
  LLVMValueRef *off;      /* the current level's nbuf offsets */
  LLVMValueRef *ooff;     /* offsets at the O point (FINAL phases) */
  /* host row walks: per buffer the row's inbounds pointer, the point's offset from it, and the absolute
   * offset (L->off's value) they stand for; NULL outside a row walk (cg_point_ptr) */
  LLVMValueRef *rowptr, *rowrel, *rowabs;
  int depth;
  LLVMValueRef *acc, *accidx; /* nphase */
  LLVMValueRef *cache;    /* ninstr */
  uint8_t *need;          /* ninstr */
  uint8_t *varies;        /* ninstr: 1 where the value may differ between the points of one O point */
  LLVMValueRef lin;       /* linear index of the current point within the walked dims */
  LLVMValueRef rsize;
  bool final_phase;
  bool outer;                 /* run() uses the outer-axis strategy (lower_host.c's use_outer) */
  bool outer_col_const;       /* inside a column walk's copy for one small stride along the last O dim
                               * (lower_host_outer_loads.c): those strides are constants in L->stride */
  int outer_by_strides;       /* >= 0: run() picks the outer-axis or the per-O walk at run time by this
                               * buffer's strides (lower_host.c; the kernel is planned as outer) */
  LLVMValueRef *accarr, *idxarr; /* nphase: block accumulator arrays (outer strategy) */
  LLVMValueRef bj, bn;        /* index of the current point within the block; the block's size */
  LLVMValueRef sumarr[4], comparr[4]; /* outer strategy: compensated pairs of float sums, per dtype
                                        * (float32, float64, complex64, complex128), shared by phases */
  LLVMValueRef bo;            /* the block's first O point (column split) */
  LLVMValueRef colfin, colno; /* column split: finished accumulators of earlier phases, O points */
  const bool *col_streamed;   /* nbuf: colpart's MAP outputs that may stream (cg_host_stream_map_outputs), or NULL */
  LLVMValueRef col_nt_go, col_nt_scratch; /* colpart's MAP phase: i1 streaming this call, the scratch rows */
  int col_nt_piece;           /* ... columns staged per copy (a scratch row of each streamed output) */
  int col_acc_size;           /* column split: bytes per accumulator */
  LLVMValueRef partial_fn;    /* the exported partial entry, once built (run of a full reduction calls it) */
  LLVMTypeRef partial_ty;
  /* GPU lowering (cg_lower_gpu) */
  LLVMTypeRef ity;            /* index type: i32 or i64 (KernelIr.index_bits) */
  LLVMValueRef *vload;        /* nbuf: the current vector of each loaded buffer (vec entry), or NULL */
  unsigned lane;              /* lane read from vload */
  bool unroll_red;            /* ROW reductions: GPU_UNROLL accumulators per thread */
  /* i32-index GPU entries: per dim, the magic multiplier and shift of a division by shape[d] (gpu_lower.c:
   * gpu_divmod), computed once in the entry's prologue; NULL: plain udiv / urem */
  LLVMValueRef gpu_magic[LOOM_MAX_RANK], gpu_mshift[LOOM_MAX_RANK];
  int force_vf;               /* host: inner walk loops vectorized at this width (0: LLVM's choice) */
  int host_vec_bytes;         /* host: bytes of the widest vector the target prefers (prefer-vector-width;
                                 0: unknown, the arg-reductions then use 32) */
  CgSnippet *sn;              /* the kernel's lowered snippet functions (user kernels), or NULL */
  /* GPU one-pass variance (gpu_moments.c): the plan, whether the entry being built gathers moments in
   * phase 0's walk, the thread's shifted sums (allocas) and the (count, mean, M2) values */
  CgMomPlan mom;
  bool mom_on;
  bool arg_tree; /* GPU: cg_gpu_block_reduce folds an arg-reduction's waves by a tree in wave 0 */
  bool walk_nsw; /* GPU: cg_gpu_offsets_in's arithmetic is nsw (COL entries: gpu_lower.c build_gpu_entry) */
  LLVMValueRef mom_cnt, mom_a[CG_MOM_MAX], mom_q[CG_MOM_MAX], mom_K[CG_MOM_MAX];
  LLVMValueRef mom_n, mom_mean[CG_MOM_MAX], mom_m2[CG_MOM_MAX];
  int cache_k;            /* the cached ROW entry's points a thread (GPU_CACHE_K .. GPU_CACHE_K_MAX) */
  bool gpu_loops_rolled;  /* cg_gpu_for's loops are not unrolled by LLVM (gpu_stage.c) */
  /* lower_host_keep.c: value hkeep_v (-1: none) of REDUCE phase hkeep_p stored into buffer hkeep_buf and
   * read back by MAP phase hkeep_q, while hkeep_on (the full-row walks of body_o_point) */
  int hkeep_v, hkeep_p, hkeep_q, hkeep_buf;
  bool hkeep_on;
  struct CgFinalStash *fstash; /* lower_host_final_block.c: the block walk's stash (body_o_point stashes its FINAL) */
  /* GPU online max (gpu_online_max.c): the plan, whether the entry being built folds it into phase 0's
   * walk, the thread's running (max, sum) allocas and the values after a walk / merge */
  CgOnlPlan onl;
  bool onl_on;
  LLVMValueRef onl_ma, onl_sa, onl_m, onl_s;
  /* GPU joined phases (gpu_joint.c): the plan and whether the entry being built folds them in phase 0's walk */
  CgJoinPlan join;
  bool join_on;
} Lower;

#define GPU_UNROLL 8     /* independent accumulators (loads in flight) per thread in ROW reductions */
#define GPU_CACHE_K 16   /* points per thread held in registers by the cached ROW entry (Lower.cache_k) */
#define GPU_CACHE_K_MAX 32 /* ... at most: rows of 2-byte values hold 32 (the same 64 bytes a thread) */
#define GPU_CACHE_BUFS 4 /* at most this many loaded buffers for the cached entry */
#define GPU_VEC_MAXBUF 8 /* vector reduction entries: at most this many buffers / stores */
#define GPU_TIE_MAXBUF GPU_VEC_MAXBUF /* load ties (gpu_strategies.c): buffers tied, the first ones */

static inline bool is_arg(int op) { return op == LOOM_REDUCE_ARGMIN || op == LOOM_REDUCE_ARGMAX; }
/* Whether some instruction of k loads buffer bi. */
static inline bool cg_kernel_loads(const KernelIr *k, int bi) {
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi) return true;
  return false;
}
static inline int cg_gcd(int a, int b) { return b ? cg_gcd(b, a % b) : a; }

/* Alignment of one element in memory: its size; a complex value's parts' size (NumPy's). */
static inline unsigned dtype_align(LoomDType t) {
  size_t s = loom_dtype_size(dtype_real_of(t));
  return s ? (unsigned)s : 1;
}

/* Vectors of `lanes` memory values of dtype st (16-byte loads and stores, registers of the cached
 * ROW entry): <lanes x T>, or for complex <2 lanes x part> with the parts interleaved as in memory
 * (an LLVM vector cannot hold structs). cg_vec_get / cg_vec_set read and write lane l. */
LLVMTypeRef cg_vec_type(CgMath *m, LoomDType st, unsigned lanes);
LLVMValueRef cg_vec_get(CgMath *m, LoomDType st, LLVMValueRef vec, unsigned lane);
LLVMValueRef cg_vec_set(CgMath *m, LoomDType st, LLVMValueRef vec, LLVMValueRef v, unsigned lane);

/* Partial accumulators (codegen.h): the value of dtype vt padded to a multiple of 8 bytes (complex128
 * takes 16), then for argmin/argmax the int64 index at that offset. */
static inline int cg_acc_index_offset(LoomDType vt) { return loom_dtype_size(vt) > 8 ? 16 : 8; }
static inline int cg_acc_size(LoomDType vt, int reduce_op) {
  return cg_acc_index_offset(vt) + (is_arg(reduce_op) ? 8 : 0);
}

/* Loop bodies: BodyFn at a point of a host walk (L->off set), IdxBody at index i of a GPU loop. */
typedef void (*BodyFn)(Lower *L, void *arg);
typedef void (*IdxBody)(Lower *L, LLVMValueRef i, void *arg);

/* ---- lower.c: shared --------------------------------------------------------------------------- */
/* Structural checks codegen relies on (ir_verify_kernel does the full job). */
LoomStatus cg_check_kernel(const KernelIr *k, Diag *d);
/* Zeroes L and allocates its per-kernel arrays and builders (freed by cg_lower_finish, also after a
 * failed allocation). Returns false when an allocation failed. */
bool cg_lower_init(Lower *L, LoomContext *ctx, LLVMContextRef c, LLVMModuleRef mod, const KernelIr *k, Diag *d);
/* Frees what a lowering allocated and verifies the module when st is LOOM_OK ("what": "GPU " or ""
 * in the message); returns the resulting status. */
LoomStatus cg_lower_finish(Lower *L, LoomContext *ctx, LLVMModuleRef mod, const char *what, LoomStatus st, Diag *d);
/* String attributes (key/value pairs) and nounwind on fn. */
void cg_add_fn_attrs(Lower *L, LLVMValueRef fn, const char *const *attrs, int nattrs);
LLVMValueRef cg_entry_alloca(Lower *L, LLVMTypeRef t, const char *name); /* in the function's entry block */
LLVMBasicBlockRef cg_new_bb(Lower *L, const char *name);
void cg_clear_cache(Lower *L); /* forgets every evaluated instruction (a new point or scope) */
LLVMValueRef cg_elem_ptr(Lower *L, int b, LLVMValueRef off);
/* The value of dtype t (a KI_PARAM's) held in an i64 launch word (ir_param_word's encoding). */
LLVMValueRef cg_param_value(Lower *L, LoomDType t, LLVMValueRef word);
/* Fills L->param from the launch words: word(p) is parameter p's i64 (the entry's prologue). */
void cg_load_params(Lower *L, LLVMValueRef (*word)(Lower *L, int p, void *arg), void *arg);
LLVMValueRef cg_npoints64(Lower *L); /* int64 product of the kernel's dims */
/* Emits (once per scope) the instructions that roots need, in index order, into L->cache. */
void cg_eval_needed(Lower *L, const int32_t *roots, int nroots);
/* Reductions: the built-in combiner and identity, or the snippet's for IR_REDUCE_USER. */
LLVMValueRef cg_red_identity(Lower *L, int op, LoomDType t);
LLVMValueRef cg_red_combine(Lower *L, int op, LoomDType t, LLVMValueRef a, LLVMValueRef v);
/* The value dtype a REDUCE phase accumulates (argmin/argmax: the compared value's). */
LoomDType cg_red_value_dtype(const KernelIr *k, const KPhase *ph);
void cg_emit_stores(Lower *L, const KPhase *ph); /* the phase's stores at the current point */
void cg_body_map(Lower *L, void *arg);           /* a MAP phase (arg) at the current point */
void cg_reduce_point(Lower *L, const KPhase *ph); /* a REDUCE phase's value, then its side stores */
int cg_instr_nsrc(const KInstr *in); /* lower.c: the operands (src) an instruction reads */
void cg_host_keep_plan(Lower *L);
/* lower_host_jam.c: rows per jammed iteration of an elementwise walk (0: none; *min_cols: the shortest
 * row jammed), and the jammed loop over rows iv[rd] .. + jam - 1 (returns its exit block, NULL on error) */
int cg_host_row_jam(const KernelIr *k, int64_t *min_cols);
LLVMBasicBlockRef cg_host_jam_rows(Lower *L, int rd, int last, int jam, LLVMValueRef *ro, LLVMValueRef p0,
                                   LLVMValueRef *inner, LLVMValueRef *outer, BodyFn body, void *arg);
bool cg_host_calls_library(LLVMBasicBlockRef first, LLVMBasicBlockRef last); /* lower_host.c: a non-intrinsic call */
int cg_host_inner_interleave(const Lower *L, LLVMBasicBlockRef first, LLVMBasicBlockRef last); /* lower_host.c */
void cg_costly_values(const KernelIr *k, uint8_t *costly); /* lower_host_keep.c: reads a math function */
void cg_host_keep_store(Lower *L, const KPhase *ph);
void cg_host_keep_map(Lower *L, void *arg); /* a BodyFn: the MAP phase (arg) at a point */
bool cg_has_side_stores(const KernelIr *k);        /* a REDUCE phase of k has side stores */
void cg_run_final_phase(Lower *L, const KPhase *ph); /* a FINAL phase at the O point (L->ooff) */
/* Whether the REDUCE phases' values load some buffer contiguously along the last O dim and none
 * contiguously along the innermost R dim (so a loop across O is the coalesced / vectorizable one).
 * With allow_map false a MAP phase rules it out. need: ninstr bytes of scratch. */
bool cg_reduce_reads_outer(const KernelIr *k, uint8_t *need, bool allow_map);
/* The same, and where it is false while no load is contiguous along R or O but one, *by_strides, strides
 * along both the last O dim and the innermost R dim by run-time amounts (x[:, ::2].sum(0), x.T[::2].sum(1)),
 * that buffer (else -1): which walk reads it in memory order is known only from its strides at run time. */
bool cg_reduce_walk(const KernelIr *k, uint8_t *need, bool allow_map, int *by_strides);
/* 1 where cg_reduce_walk finds no contiguous walk but a buffer strided along both (by_strides) and, at a launch
 * with these sizes and bindings, that buffer strides less along the last kept dim than along the innermost
 * reduced one: the column walk reads it in memory order (KernelIr.walk_cols); else 0. */
int cg_strides_pick_cols(const KernelIr *k, const int64_t *shape, const SchedBinding *bind, bool allow_map);
/* cg_reduce_walk with scratch of its own (launch-time queries; out of memory: false, *by_strides -1). */
bool cg_reduce_walk_scratch(const KernelIr *k, bool allow_map, int *by_strides);
/* A worker (a host run() over a range, a GPU thread): its state block and loop_prep; after_loop. */
void cg_worker_begin(Lower *L);
void cg_worker_end(Lower *L);

/* ---- lower_gather.c: data-dependent addressing (KI_GATHER, scatter stores) --------------------------- */
bool cg_kernel_addresses_by_value(const KernelIr *k); /* some KI_GATHER or scatter store */
LLVMValueRef cg_gather_load(Lower *L, int i);         /* KI_GATHER i at the current point */
void cg_scatter_store(Lower *L, const KStore *s);     /* a scatter store at the current point */

/* ---- lower_host.c, lower_host_arg.c: host loops ---------------------------------------------------- */
/* Visits linear points [lo, hi) of dims [d0, d1) row-major; at each point L->off holds the offsets
 * (outer offsets plus these dims' contribution) and L->lin the linear index. */
void cg_host_walk(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg);
/* Loop vectorizer hints on the loop whose back edge is br: vf lanes, ic interleaved bodies (0: LLVM's
 * choice); cg_host_force_width: L->force_vf lanes. */
void cg_host_loop_hints(Lower *L, LLVMValueRef br, int vf, int ic);
/* The llvm.loop ID (distinct: its first operand is itself) with properties props[0..n) on the loop whose
 * back edge is br (lower.c). */
void cg_loop_properties(Lower *L, LLVMValueRef br, const LLVMMetadataRef *props, unsigned n);
void cg_host_force_width(Lower *L, LLVMValueRef br);
/* lower_host_tile.c: whether an elementwise kernel reads a buffer across its rows (transposed) beside
 * one read along them, and the walk of linear points [lo, hi) in tiles for such kernels. */
bool cg_host_tiled(const KernelIr *k);
/* lower_host_final_block.c: run()'s per-O walk of row reductions whose FINAL phase computes a math function,
 * the FINAL phase run over blocks of O points from stashed results (a vectorized loop); the stash at a point. */
bool cg_host_final_block_ok(const Lower *L);
void cg_host_walk_final_blocks(Lower *L, LLVMValueRef lo, LLVMValueRef hi);
void cg_host_final_stash(Lower *L);
void cg_host_walk_tiled(Lower *L, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg);
/* lower_host_stream.c: the outputs of an elementwise kernel that run() may write by streaming stores
 * (streamed[nbuf]; returns their number, 0 where streaming is off or does not apply), and run()'s call of
 * its implementation av[nimpl] (wrapper position), in chunks through a scratch buffer and non-temporal
 * copies when the launch's streamed output bytes reach the threshold. */
int cg_host_stream_outputs(const KernelIr *k, const char *const *attrs, int nattrs, bool *streamed);
void cg_host_stream_call(Lower *L, const bool *streamed, LLVMTypeRef ity, LLVMValueRef impl, LLVMValueRef *av,
                         int nimpl);
/* The same for the column split's MAP phase (x / x.sum(0); outputs stored only by MAP phases; off with
 * LOOM_HOST_COL_MAP_NT=0), which stages pieces of each row of its block in scratch rows and streams them out
 * (lower_host_outer_map.c). The shared pieces: i1, the launch moves at least the threshold's bytes (every
 * buffer's elements over dims dim[ndim] and strides stride[nbuf * ndim], a broadcast dim once) and no
 * streamed output shares an input's base; the copy of `bytes` bytes to dst with whole 64-byte lines
 * streamed; an sfence where go; p through an empty inline asm (no analysis ties it to its object). */
int cg_host_stream_map_outputs(const KernelIr *k, const char *const *attrs, int nattrs, bool *streamed);
LLVMValueRef cg_host_stream_worth(Lower *L, const bool *streamed, const LLVMValueRef *dim, const LLVMValueRef *stride,
                                  const LLVMValueRef *base);
void cg_host_stream_copy(Lower *L, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef bytes);
void cg_host_sfence_if(Lower *L, LLVMValueRef go);
LLVMValueRef cg_host_opaque_ptr(Lower *L, LLVMValueRef p);
/* Blocked walks (cg_host_walk_blocked): the walk counts points into *count (an i64 alloca the walk
 * zeroes first) and calls flush(arg) each time a block of `points` points is complete, between two
 * points (the row's inner loop is split there, so each segment still vectorizes). The points of the
 * last, partial block are left for the caller to flush. */
typedef struct CgWalkBlocks {
  int64_t points;
  BodyFn flush;
  void *arg;
  LLVMValueRef count;
} CgWalkBlocks;
void cg_host_walk_blocked(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg,
                          const CgWalkBlocks *blk);
/* ... whose first block is `first` points (<= blk->points: *count starts at points - first) */
void cg_host_walk_blocked_first(Lower *L, int d0, int d1, LLVMValueRef lo, LLVMValueRef hi, BodyFn body, void *arg,
                                const CgWalkBlocks *blk, int64_t first);
/* lower_host_sum.c: accurate float sums (blocked accumulation into a compensated pair). */
#define CG_SUM_BLOCK_VEC 2048   /* points per block when the innermost R dim has constant strides */
#define CG_SUM_BLOCK_SCALAR 128 /* ... and when it does not (the row loop stays scalar) */
#define CG_SUM_OUTER_BLOCK 64   /* R points per block of the outer strategy (a chain per column) */
/* Whether REDUCE phase ph is a float or complex sum (sum, mean) that accumulates in blocks. */
bool cg_sum_compensated(const KernelIr *k, const KPhase *ph);
int64_t cg_sum_block_points(const KernelIr *k); /* block size of a walk over the kernel's R dims */
/* (s, c) += x by Neumaier's step (values of dtype t, complex: per part); cg_sum_add on allocas. */
void cg_sum_add_values(Lower *L, LoomDType t, LLVMValueRef *s, LLVMValueRef *c, LLVMValueRef x);
void cg_sum_add(Lower *L, LoomDType t, LLVMValueRef sp, LLVMValueRef cp, LLVMValueRef x);
/* The compensated sum s + c (s itself where s is infinite or NaN). */
LLVMValueRef cg_sum_settle(Lower *L, LoomDType t, LLVMValueRef s, LLVMValueRef c);
/* A compensated phase over R points [lo, hi) of the current O point: body folds a point into accv
 * (the block's accumulator, holding the identity on entry); accv ends holding the whole sum. */
void cg_host_sum_walk(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv, BodyFn body,
                      void *arg);
/* Whether REDUCE phase ph sums bool or <= 16-bit integers widened to a 64-bit integer, and that walk
 * (int32 lanes within blocks of CG_SUM_BLOCK_VEC points; accv, holding 0 on entry, ends with the sum). */
bool cg_sum_narrow(const KernelIr *k, const KPhase *ph);
void cg_host_narrow_sum_walk(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv);
/* Vector arg-reductions: whether phase ph can take one (argmin/argmax of a real value), and the
 * reduction itself over R points [lo, hi) into the allocas accv / acci (initialized to the identity
 * and lo by the caller). Worth it from CG_HOST_ARG_MIN_POINTS points on (the scalar fold below). */
#define CG_HOST_ARG_MIN_POINTS 8
bool cg_host_arg_vectorizable(const KernelIr *k, const KPhase *ph);
/* Offsets of O point o (decomposed over dims [0, nkeep)) into L->off. */
void cg_host_set_o_offsets(Lower *L, LLVMValueRef o);
/* lower_host.c: the per-O walk's body (one O point: its R walk and FINAL phases; IdxBody-style arg unused) */
void cg_host_body_o_point(Lower *L, void *arg);
/* lower_host_by_strides.c: reductions whose walk the strides pick at run time (cg_reduce_walk's by_strides):
 * whether this kernel may (LOOM_HOST_WALK_BY_STRIDES), run()'s branch between the two walks over O range
 * [lo, hi), and colpart's answer to the launcher's query (codegen.h CG_COL_BY_STRIDES) */
bool cg_host_by_strides_ok(const KernelIr *k);
void cg_host_run_by_strides(Lower *L, LLVMValueRef lo, LLVMValueRef hi);
void cg_host_col_query(Lower *L, LLVMValueRef args);
/* lower_host_outer.c: run(lo, hi) of the outer strategy, and the bodies of the column split entries
 * (args: the entry's CgColSplit pointer). */
void cg_host_run_outer(Lower *L, LLVMValueRef lo, LLVMValueRef hi);
void cg_host_col_part(Lower *L, LLVMValueRef args);
void cg_host_col_finish(Lower *L, LLVMValueRef args);
/* Pieces of the outer strategy shared with its register folds (lower_host_outer_regs.c), inside a block
 * (L->bn columns, L->off at its first): `for (j = lo; j < n; j++) body(arg)` with L->bj = j and L->off at
 * column j; a block array's element at L->bj; L->acc / L->accidx of the REDUCE phases before np at L->bj;
 * the block loop's fold of one point (BodyFn, arg: the phase). */
void cg_outer_block_loop(Lower *L, LLVMValueRef lo, LLVMValueRef n, BodyFn body, void *arg);
LLVMValueRef cg_outer_slot(Lower *L, LLVMTypeRef et, LLVMValueRef arr);
void cg_outer_load_accs(Lower *L, int np);
void cg_outer_body_reduce(Lower *L, void *arg);
/* for (c = rlo; c < rhi; c += size) fn(arg, c, min(c + size, rhi)) */
typedef void (*ChunkFn)(Lower *L, const void *arg, LLVMValueRef c, LLVMValueRef c1);
void cg_outer_for_chunks(Lower *L, LLVMValueRef rlo, LLVMValueRef rhi, int64_t size, ChunkFn fn, const void *arg);
/* REDUCE phase ph over R points [rlo, rhi) for every column of the block, the accumulators in the block
 * arrays before and after (lower_host_outer_regs.c: register folds where they apply, else the block loop). */
void cg_outer_walk_columns(Lower *L, const KPhase *ph, LLVMValueRef rlo, LLVMValueRef rhi);
/* O points per block of the outer strategy's run() and colpart (lower_host_outer_regs.c): CG_OUTER_WIDE_BLOCK
 * where a phase may stream whole rows (a comparison fold, no MAP phase, LOOM_HOST_OUTER_STREAM on), else CG_OUTER_BLOCK. */
int cg_outer_block_cap(const KernelIr *k);
/* a op v in order: cg_red_combine's operation, a real float sum or product without its reassoc flag */
LLVMValueRef cg_outer_combine(Lower *L, int op, LoomDType vt, LLVMValueRef a, LLVMValueRef v);
/* lower_host_outer_loads.c: reads along a small run-time stride in column walks. cg_outer_by_col_stride
 * emits walk(arg) once per small stride s (2, 3, 4, -1) that every buffer loaded with a run-time stride
 * along the last O dim may have (a run-time branch; s a constant in L->stride there), then as is.
 * cg_outer_col_rows (a block loop at column j, offsets outer -> inner): in such a copy, points those
 * buffers' row walk (L->rowptr / rowrel / rowabs) at the block's first column, so that cg_point_ptr
 * addresses them as a non-wrapping sequence; false where nothing changed. cg_outer_col_rows_shift: the
 * same rows at index r of dim d (another R point: the row jam's offsets `row`).
 * cg_outer_col_rows_end restores the walk's rows (after either, true or false). */
typedef void (*OuterWalkFn)(Lower *L, const void *arg);
typedef struct CgRowSave {
  LLVMValueRef *ptr, *rel, *abs, *mine;
} CgRowSave;
void cg_outer_by_col_stride(Lower *L, OuterWalkFn walk, const void *arg);
bool cg_outer_col_rows(Lower *L, const LLVMValueRef *outer, const LLVMValueRef *inner, LLVMValueRef j, CgRowSave *save);
bool cg_outer_col_rows_shift(Lower *L, const LLVMValueRef *row, LLVMValueRef r, int d, CgRowSave *save);
void cg_outer_col_rows_end(Lower *L, CgRowSave *save);
/* lower_host_outer_map.c: whether a kernel with a MAP phase may take the outer strategy (its extra
 * conditions; cg_reduce_reads_outer decides the rest), whether a kernel has a MAP phase, and the MAP
 * phase p of a block of n <= cap columns over R points [rlo, rhi) (run()'s block_run: all of R; colpart: a
 * slab, the REDUCE results from the finished accumulators). */
bool cg_outer_map_ok(const KernelIr *k);
bool cg_outer_has_map(const KernelIr *k);
void cg_outer_map_phase(Lower *L, int p, LLVMValueRef n, int cap, LLVMValueRef rlo, LLVMValueRef rhi);
/* The R split of inner reductions with several REDUCE phases (lower_host_outer.c): colpart's body for
 * kernels that are not outer; whether a kernel qualifies (REDUCE and FINAL phases only, two REDUCE or
 * more, at most 31 phases: col_phases' bit 31 is CG_COL_ROWS). */
void cg_host_row_part(Lower *L, LLVMValueRef args);
bool cg_host_row_splittable(const KernelIr *k);
/* lower_host_rows.c: kernels specialized on a short last dim (KernelIr.row_extent): whether this lowering
 * uses them; an elementwise run() over linear points [lo, hi) by rows; every phase at one O point
 * (L->off and L->ooff set) with the R row unrolled. */
bool cg_host_rows_on(const Lower *L);
void cg_host_rows_map(Lower *L, LLVMValueRef lo, LLVMValueRef hi, const KPhase *ph);
void cg_host_rows_o_point(Lower *L);
/* lower_host_strided.c: the address of buffer b at the current point of a row walk (rowptr[b] set and
 * standing for L->off[b]); a constant stride of 2 or more is addressed in bytes (nsw survives). */
LLVMValueRef cg_host_row_point_ptr(Lower *L, int b);
/* Whether walk() (lower_host.c) puts buffer b's row pointer at the segment's first point and counts the
 * in-row offset from the inner loop's own index: a blocked walk's, for a constant stride of 2 or more
 * along the kernel's last dim (the walked dim `last`). */
bool cg_host_strided_from_segment(const Lower *L, int b, int last, bool blocked);
/* REDUCE phase p over linear R points [lo, hi) of the current O point (L->off): sets L->acc[p] /
 * L->accidx[p] (lower_host.c). */
void cg_host_reduce_phase(Lower *L, int p, LLVMValueRef lo, LLVMValueRef hi);
void cg_host_arg_reduce(Lower *L, const KPhase *ph, LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef accv,
                        LLVMValueRef acci);

/* ---- gpu_lower.c: GPU building blocks --------------------------------------------------------- */
#define GPU_EMPTY_INDEX INT64_MAX /* accumulator index of an empty argmin/argmax part */
LLVMValueRef cg_iconst_i(Lower *L, int64_t v); /* a constant of the index type */
LLVMValueRef cg_gpu_index(Lower *L, CgGpuIndex which); /* a launch index in the index type (gpu_lower.c) */
LLVMValueRef cg_to_i64(Lower *L, LLVMValueRef v);
/* for (i = start; i < end; i += step) body(i)  (signed compare in the index type) */
void cg_gpu_for(Lower *L, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step, IdxBody body, void *arg);
/* out[b] = base[b] + sum over dims [d0, d1) of index(lin)[d] * stride[b][d] (lin row-major). */
void cg_gpu_offsets(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out);
/* The same for a point lin known to lie in the launch (and base its O point's): nsw arithmetic (gpu_lower.c). */
void cg_gpu_offsets_in(Lower *L, LLVMValueRef lin, int d0, int d1, const LLVMValueRef *base, LLVMValueRef *out);
bool cg_gpu_walk_nsw(void); /* LOOM_GPU_WALK_NSW (default 1): COL walks' nsw offsets (Lower.walk_nsw) */
/* Combines two accumulators (a, ai) and (v, vi) of a REDUCE phase (see gpu_lower.c). */
void cg_gpu_combine(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef *a, LLVMValueRef *ai, LLVMValueRef v,
                    LLVMValueRef vi, bool ordered);
void cg_gpu_map_point(Lower *L, LLVMValueRef r, void *arg); /* IdxBody: MAP phase arg at R point r */
/* Folds REDUCE phase p over R points start, start + step, ... < end into L->acc[p] / L->accidx[p]
 * (this thread's part only). */
void cg_gpu_reduce_range(Lower *L, int p, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step);
/* ROW main: phase p over the O point's R points with 16-byte loads (tid, tid + bdim, ... vectors), when
 * every loaded buffer is contiguous along the one R dim; at run time the row must be whole vectors and
 * aligned, else the scalar loop (cg_gpu_reduce_range) runs. false (nothing emitted): not applicable. */
bool cg_gpu_reduce_row_vec(Lower *L, int p, LLVMValueRef tid, LLVMValueRef bdim, LLVMValueRef nr);
/* An arg-reduction's block reduction as packed (key, index) words when its value and index fit (gpu_rowvec.c);
 * false: not applicable, nothing emitted. */
bool cg_gpu_arg_block_reduce_packed(Lower *L, int p);
/* Block reduction of phase p's per-thread accumulators: every thread ends with the block's. */
void cg_gpu_block_reduce(Lower *L, int p);
/* The value of lane (lane ^ lanemask) of the wave, any register type; the block's 32 shared slots of 8
 * bytes ("loom.red.v", "loom.red.i") or 16 (a name ending in ".16"), one per wave. */
LLVMValueRef cg_gpu_shfl_xor(Lower *L, LLVMValueRef v, int lanemask);
LLVMValueRef cg_gpu_shared_slots(Lower *L, const char *name);
/* The module's shared-memory array `name` of count elem values (align bytes), made on first use. */
LLVMValueRef cg_gpu_shared_array(Lower *L, const char *name, LLVMTypeRef elem, uint64_t count, unsigned align);
LLVMValueRef cg_partial_ptr(Lower *L, LLVMValueRef partials, LLVMValueRef item, int acc_size);
/* The address of buffer b at the current point (a load or store of KI_LOAD / a phase's store). */
LLVMValueRef cg_point_ptr(Lower *L, int b);
void cg_store_partial(Lower *L, LLVMValueRef ptr); /* phase 0's accumulator in codegen.h's layout */

/* ---- lower_scan.c: KP_SCAN phases (ir.h) ------------------------------------------------------------ */
/* Host: phase p over the R points of the current O point (L->ooff set); run(lo, hi) of a scan kernel
 * whose values read along O (L->outer): blocks of O points, one pass over R each. */
void cg_host_scan_row(Lower *L, int p);
void cg_host_scan_outer(Lower *L, LLVMValueRef lo, LLVMValueRef hi);
/* lower_scan_compact.c: phase p as a vector stream compaction where its shape and the host allow (else
 * false, nothing emitted) */
bool cg_host_scan_compact(Lower *L, int p);
/* GPU: phase p of the current O point (L->ooff set) by the whole block (ROW: every thread calls it), or
 * by one thread (COL). nr: R points (index type). */
void cg_gpu_scan_row(Lower *L, int p, LLVMValueRef tid, LLVMValueRef bdim, LLVMValueRef rlo, LLVMValueRef rhi,
                     LLVMValueRef carry); /* R points [rlo, rhi); carry: the value before rlo (NULL: identity) */
void cg_gpu_scan_serial(Lower *L, int p, LLVMValueRef nr);
/* acc op v of scan phase ph, rounded to its storage dtype when it asks (ph->scan_round). */
LLVMValueRef cg_scan_step(Lower *L, const KPhase *ph, LLVMValueRef acc, LLVMValueRef v);
/* The `finishb` entry of a split scan (codegen.h): item = part * no + o scans its part of R from the
 * fold of the partials (acc_size bytes each, o-minor) of the parts before it. */
void cg_gpu_scan_part(Lower *L, LLVMValueRef item, LLVMValueRef no, LLVMValueRef nr, LLVMValueRef nparts,
                      LLVMValueRef partials, int acc_size, LLVMValueRef tid, LLVMValueRef bdim);

/* ---- gpu_strategies.c: one item of each entry kind (IdxBody, arg a GpuEntry) ------------------ */
enum { GPU_ELEM, GPU_ELEMV, GPU_ELEMVW, GPU_MAIN, GPU_PART, GPU_FINISH, GPU_CACHED, GPU_PARTV, GPU_FINISHB, GPU_ELEMF, GPU_ROWF };

typedef struct GpuEntry {
  int which;
  bool row;
  int acc_size;
  int lanes; /* GPU_PARTV, GPU_CACHED: points per 16-byte vector load (0 or 1: scalar loads) */
  LLVMValueRef no, nr, nparts, partials; /* index type; partials: a pointer in the global address space */
  LLVMValueRef tid, bdim;
  bool phased;             /* PART / FINISH / FINISHB of a phase split (gpu_phases.c) */
  LLVMValueRef phase, fin; /* extra words 2 and 3: the phase to run (i64), finished accumulators (global) */
  /* CACHED in short-row mode (extra word 2 = g > 0, codegen.h): tid and bdim are the thread's lane in
   * its row's group of g lanes and g; group is g (index type) and rowok whether the thread's row
   * exists (its stores and FINAL phases are skipped otherwise). NULL in block mode. */
  LLVMValueRef group, rowok;
} GpuEntry;

void cg_gpu_elem_point(Lower *L, LLVMValueRef i, void *arg);  /* elementwise: point i */
/* elementwise: points i + j * stride (j < count) below n, every point's loads issued before any is computed */
#define GPU_ELEM_POINTS_MAX 4 /* ELEM_POINTS_AHEAD_MAX in runtime/gpu/gpu_launch_policy.c: the same */
typedef struct CgElemPoints {
  int count;
  LLVMValueRef stride, n;
} CgElemPoints;
void cg_gpu_elem_points(Lower *L, LLVMValueRef i, void *arg);
/* Buffer bi's point at element offset off, loaded ahead of its use (a vector of one point, as L->vload
 * holds: KI_LOAD reads it as lane 0), frozen so that it is not sunk to a guarded use. */
LLVMValueRef cg_gpu_load_point(Lower *L, int bi, LLVMValueRef off);
int cg_gpu_elem_points_of(const KernelIr *k); /* points a thread reads ahead (LOOM_GPU_ELEM_POINTS) */
/* elementwise: vectors v and v + stride (< nvec), both loaded before either is computed */
typedef struct CgElemPair {
  unsigned lanes;
  LLVMValueRef stride, nvec;
  LLVMValueRef zero; /* an i64 that is 0 at run time but not to the compilers (NULL: no load ties) */
  bool flat;         /* the `flatv` entry's vectors over the flat index of a 2-d kernel (codegen.h) */
} CgElemPair;
bool cg_gpu_flat_vec_buf(const KernelIr *k, int bi); /* flatv: buffer bi read / written as vectors */
int cg_gpu_flat_lanes(const KernelIr *k);            /* flatv's lanes (0: no such entry) */
bool cg_gpu_flat_nd(void);                           /* LOOM_GPU_FLAT_ND: flatv for kernels of 3+ dims */
/* gpu_flat_hoist.c: a flatv vector's row-invariant values, once per row it touches (lane 0's row; the next
 * one where the vector crosses into it). cg_gpu_flat_hoist (row: NULL for none) sets L->off and evaluates;
 * then, per lane after cg_clear_cache, cg_gpu_flat_hoist_lane seeds L->cache with the values of the lane's
 * row (past: whether the lane lies in the next row; NULL for lane 0). */
#define CG_FLAT_HOIST_MAX 16
typedef struct CgFlatHoist {
  int n;
  int32_t id[CG_FLAT_HOIST_MAX];
  LLVMValueRef v0[CG_FLAT_HOIST_MAX], v1[CG_FLAT_HOIST_MAX];
} CgFlatHoist;
void cg_gpu_flat_hoist(Lower *L, unsigned lanes, LLVMValueRef row, LLVMValueRef col, const LLVMValueRef *boff,
                       CgFlatHoist *h);
void cg_gpu_flat_hoist_lane(Lower *L, const CgFlatHoist *h, LLVMValueRef past);
bool cg_gpu_flat_hoist_on(void);  /* LOOM_GPU_FLAT_HOIST=0 turns it off */
bool cg_gpu_magic_by_double(void); /* gpu_lower.c: LOOM_GPU_MAGIC_DIV=2 turns it off */
int cg_gpu_tile_w(void);                             /* the tiled form's columns along the last dim (gpu_tile.c) */
void cg_gpu_elemv_pair(Lower *L, LLVMValueRef v, void *arg);
bool cg_gpu_elemv_tie(void);                     /* LOOM_GPU_ELEM_TIE != 0 (PARTV with side stores) */
bool cg_gpu_rowc_fit(const Lower *L);            /* a cached-row vector entry fits 1024 threads (gpu_strategies.c) */
bool cg_gpu_narrow_words(const Lower *L);        /* cached rows keep narrow values as words across block reductions */
/* a REDUCE phase computes a costly float16 / bfloat16 value that a later phase reads (gpu_cached.c's Kept) */
bool cg_gpu_cached_keeps_narrow(LoomContext *ctx, const KernelIr *k);
bool cg_gpu_cached_keeps_wide(LoomContext *ctx, const KernelIr *k); /* a kept value of >= 8 bytes */
bool cg_gpu_elemv_tie_kernel(const KernelIr *k, unsigned lanes); /* elementwise: the rule (gpu_strategies.c) */
void cg_gpu_red_item(Lower *L, LLVMValueRef item, void *arg); /* MAIN / PART / FINISH / FINISHB */
/* ---- lower_scan_lookback.c: the single-pass look-back scan of few long rows ----------------------- */
/* Whether gk (lowered from k) is a ROW scan whose `finishb` is the look-back entry. */
bool cg_gpu_scan_lookback_kernel(const KernelIr *k, const CgGpuKernel *gk);
/* One item of the look-back `finishb` entry (codegen.h: clear mode or a tile taken by ticket). */
void cg_gpu_scan_lookback(Lower *L, LLVMValueRef item, const GpuEntry *e);
/* Deletes the `part` entry of a look-back scan kernel from mod and gk (the launcher's sign of it). */
void cg_gpu_scan_lookback_trim(LLVMModuleRef mod, const KernelIr *k, CgGpuKernel *gk);
void cg_gpu_cached_item(Lower *L, LLVMValueRef o, void *arg); /* CACHED: O point o, row in registers */
/* The cached entry's loop over rows (e: the entry's; group: extra word 2's g, 0: block mode; staged: its
 * CG_GPU_STAGE bit): a block per row, groups of g lanes a row, or staged tiles (gpu_stage.c). */
void cg_gpu_cached_rows(Lower *L, const GpuEntry *e, LLVMValueRef group, LLVMValueRef staged, LLVMValueRef bid,
                        LLVMValueRef nbk);
/* gpu_stage.c: the staged buffers of the scalar cached entry's thread-per-row mode (codegen.h:
 * cg_gpu_stage_mask, of those the kernel loads or stores; 0: no staged path), and that mode's loop over
 * the block's tiles of rows (e: the block-level entry; bid, nbk: the block and the grid). */
uint64_t cg_gpu_stage_bufs(const Lower *L);
void cg_gpu_stage_rows(Lower *L, const GpuEntry *e, uint64_t mask, LLVMValueRef bid, LLVMValueRef nbk);
/* Reduction of phase p's accumulators over aligned groups of g lanes of a wave (g: a power of two,
 * 1 <= g <= wave, the same on every lane): a butterfly over the lane masks below g, no shared memory
 * or barrier; every lane ends with its group's value. */
void cg_gpu_group_reduce(Lower *L, int p, LLVMValueRef g);
/* n / shape[d] (0 <= n < 2^31 for an i32 index), and n % shape[d] into *rem when rem != NULL: a
 * multiply-high by the entry's magic number where it has one (no division instruction per point). */
LLVMValueRef cg_gpu_divmod(Lower *L, LLVMValueRef n, int d, LLVMValueRef *rem);
void cg_gpu_partv_item(Lower *L, LLVMValueRef part, void *arg); /* PARTV: one part, vector loads */
/* gpu_colv.c: COL reductions over packed rows of S = 2..4 columns (every loaded buffer [1, S]): S, or 0 where
 * the vector part does not apply (LOOM_GPU_COLV=0: never); the PARTV item of such a kernel. */
/* Folds one point's value v (point pt: an arg-reduction's index) into (*acc, *acci): arg-reductions take it when
 * strictly better or a first NaN (points in increasing order per accumulator), others combine (gpu_strategies.c). */
void cg_gpu_fold_point(Lower *L, const KPhase *ph, LoomDType vt, LLVMValueRef *acc, LLVMValueRef *acci, LLVMValueRef v,
                       LLVMValueRef pt);
int cg_gpu_colv_stride(const KernelIr *k);
bool cg_gpu_colv_on(void); /* LOOM_GPU_COLV (default 1; " colv0" in the target's description when 0) */
void cg_gpu_colv_item(Lower *L, LLVMValueRef part, void *arg);
/* gpu_rowflat.c: ROW reductions of short packed rows specialized on their extent (KernelIr.row_extent): the
 * lanes of their `flatv` entry (0: none), and that entry's body (e->lanes: those lanes). */
int cg_gpu_rowflat_lanes(const KernelIr *k);
int cg_gpu_rowflat_knob(void);       /* LOOM_GPU_ROWF (1; " rowf<k>" in the target's description otherwise) */
int cg_gpu_rowflat_stage_knob(void); /* LOOM_GPU_ROWF_STAGE (0; " rowfs<k>" otherwise) */
void cg_gpu_rowflat(Lower *L, const GpuEntry *e, LLVMValueRef bid, LLVMValueRef nbk);
void cg_gpu_phase_item(Lower *L, LLVMValueRef item, void *arg); /* gpu_phases.c: PART / FINISH(B) of a phase split */
int cg_gpu_phase_acc_size(const KernelIr *k); /* the largest accumulator of the REDUCE phases */
/* A REDUCE phase's accumulator record (codegen.h's layout) at p: loaded into (v, vi) / stored */
void cg_gpu_load_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef *v, LLVMValueRef *vi);
void cg_gpu_store_acc(Lower *L, const KPhase *ph, LLVMValueRef p, LLVMValueRef v, LLVMValueRef vi);
/* The COL part's block fold (gpu_colfold.c, codegen.h): a thread's tile place. slot: its record in shared
 * memory; folder: it writes the tile's record of O point o (its slot and the next g - 1 parts', cw apart) */
typedef struct CgColFold {
  LLVMValueRef slot, stride;   /* shared pointer; bytes between a thread's slot and the next part's */
  LLVMValueRef folder, nfold;  /* i1; the tile's parts (<= g) */
  LLVMValueRef dst;            /* partials[pb * nO + o] */
} CgColFold;
/* `part` of a COL split: the grid-stride loop over items, or over tiles when extra word 2 asks for the fold */
void cg_gpu_col_part(Lower *L, GpuEntry *e, LLVMValueRef word2, LLVMValueRef gtid, LLVMValueRef gstride,
                     LLVMValueRef bid, LLVMValueRef nbk);
void cg_gpu_col_fold(Lower *L, const GpuEntry *e, int p, const CgColFold *f); /* barrier, fold, barrier */
void cg_gpu_part_range(Lower *L, const GpuEntry *e, LLVMValueRef part, LLVMValueRef *rlo, LLVMValueRef *rhi);
/* lower_scan.c: the `finishb` entry of a COL split scan: item = part * nO + o scans its part of R (one
 * thread) from the fold of the partials of the parts before it */
void cg_gpu_scan_col_part(Lower *L, LLVMValueRef item, const GpuEntry *e);
/* gpu_phases.c: a phase split's PART in the fold: O point o, part `part` (computed when ok) */
void cg_gpu_phase_tile(Lower *L, GpuEntry *e, LLVMValueRef o, LLVMValueRef part, LLVMValueRef ok, const CgColFold *f);
/* A COL split's `part`: its MAP phases run the grid's threads as P = gstride / nO row phases of every O
 * point (rows j, j + P, ... of O point o), so the grid walks R in order, cnt rows read ahead a step
 * (gpu_phases.c). Emits `if (phase is such a MAP phase) walk` and returns the join block (the builder
 * is left where the other phases go; branch there to the join), or NULL when no phase walks so. */
LLVMBasicBlockRef cg_gpu_map_flat(Lower *L, GpuEntry *e, LLVMValueRef gtid, LLVMValueRef gstride);

/* ---- gpu_moments.c: one-pass variance (shifted moments, Chan's merge) ------------------------------ */
/* The phases of k that phase 0's walk can gather (plan->n == 0: none, or LOOM_GPU_ONEPASS_VAR=0). */
void cg_gpu_onepass_plan(const KernelIr *k, CgMomPlan *plan);
int cg_mom_index(const CgMomPlan *plan, int p); /* p's index in the plan, or -1 */
/* Bytes of phase 0's partial record with the moments (count, then mean and M2 per folded phase, 8
 * bytes each after phase 0's accumulator); a folded phase's finished value sits in fin's phase-0
 * record at cg_mom_fin_offset. 0 without a plan. */
int cg_mom_record_size(const KernelIr *k, const CgMomPlan *plan);
int cg_mom_fin_offset(const KernelIr *k, int i);
/* Thread walk: begin (shifts from the O point's and the thread's first points), one point (the h
 * values evaluated in L->cache), end (-> L->mom_n / mom_mean (relative to the O point's first h) /
 * mom_m2). */
void cg_gpu_mom_begin(Lower *L, LLVMValueRef start, LLVMValueRef end);
void cg_gpu_mom_points(Lower *L, LLVMValueRef (*hv)[CG_MOM_MAX], int npts); /* a block of npts points */
void cg_gpu_mom_end(Lower *L);
void cg_gpu_mom_identity(Lower *L);                /* count 0 */
void cg_gpu_mom_block_reduce(Lower *L);            /* every thread ends with the block's moments */
void cg_gpu_mom_merge(Lower *L, LLVMValueRef nb, const LLVMValueRef *meanb, const LLVMValueRef *m2b);
void cg_gpu_mom_store(Lower *L, LLVMValueRef rec); /* into a partial record (phase 0's) */
/* L->mom_n, mom_mean, mom_m2 from a fold's allocas: n (i64), mean[i] and m2[i] (L->mom.t[i]) */
void cg_gpu_mom_take(Lower *L, LLVMValueRef n, const LLVMValueRef *mean, const LLVMValueRef *m2);
void cg_gpu_mom_load(Lower *L, LLVMValueRef rec, LLVMValueRef *n, LLVMValueRef *mean, LLVMValueRef *m2);
/* L->acc[p] of every folded phase from the moments and its c (L->acc[0] set). */
void cg_gpu_mom_results(Lower *L);

/* moments_plan.c: the phases of k that phase 0's walk can gather, for any target (no switch read). */
void cg_onepass_plan(const KernelIr *k, CgMomPlan *plan);

/* ---- host_moments.c: one-pass variance on the host (the GPU's moments, gpu_moments.c) -------------- */
/* L->mom: the phases phase 0's host walks fold (none under LOOM_HOST_ONEPASS_VAR=0, for the outer
 * strategy, short rows, a phase 0 other than a real float sum); after cg_host_keep_plan. */
void cg_host_onepass_plan(Lower *L);
const char *cg_host_switch_tag(void); /* " onepass0" under LOOM_HOST_ONEPASS_VAR=0: the target's describe */
/* Phase 0 over R points [lo, hi) of the current O point (L->off at it) gathering the moments: sets
 * L->acc[0], L->mom_K and L->mom_n / mom_mean / mom_m2 (means relative to K). */
void cg_host_mom_phase0(Lower *L, LLVMValueRef lo, LLVMValueRef hi);
/* L->mom_n / mom_mean / mom_m2: Chan's merge, in part order, of the nparts records (rec_size bytes apart,
 * the moments where cg_gpu_mom_store puts them) from first. */
void cg_host_mom_merge_parts(Lower *L, LLVMValueRef first, LLVMValueRef nparts, int rec_size);
/* L->acc[p] of every folded phase p from the moments (L->acc[0] set); need_K: K read again (L->off at the
 * O point), else L->mom_K from cg_host_mom_phase0. */
void cg_host_mom_results(Lower *L, bool need_K);
/* run()'s phase 0 and folded phases at one O point (L->off at it): one pass for long rows, else two. */
void cg_host_mom_o_point(Lower *L);

/* ---- gpu_online_max.c: online softmax sums (Milakov & Gimelshein): phase p's sum of exp(h - max) in
 * phase 0's walk. `main` (ROW and COL) and the phase split fold it under LOOM_GPU_ONLINE_MAX=1 (off by
 * default); the cached row (reads once) keeps a walk per phase. */
void cg_gpu_online_plan(const KernelIr *k, CgOnlPlan *plan); /* plan->phase == 0: none */
bool cg_gpu_online_on(void);                                  /* LOOM_GPU_ONLINE_MAX=1 (read once) */
void cg_gpu_onl_begin(Lower *L);                              /* the thread's (m, s) = (-inf, 0) */
void cg_gpu_onl_points(Lower *L, const LLVMValueRef *y, int npts); /* a block of npts values of h */
void cg_gpu_onl_end(Lower *L);                                /* -> L->onl_m, L->onl_s */
void cg_gpu_onl_block_reduce(Lower *L);                       /* every thread ends with the block's (m, s) */
void cg_gpu_onl_result(Lower *L);                             /* L->acc[phase] from (m, s) and L->acc[0] */
/* The phase split's records: phase 0's partial record carries (m, s) after its accumulator (8 bytes each),
 * phase 0's fin record the folded phase's finished value at cg_onl_fin_offset. 0 without a plan. */
int cg_onl_record_size(const KernelIr *k, const CgOnlPlan *plan);
int cg_onl_fin_offset(const KernelIr *k);

/* ---- gpu_joint.c: independent REDUCE phases in phase 0's walk -------------------------------------- */
bool cg_gpu_join_on(void); /* on unless LOOM_GPU_JOINT=0 */
void cg_gpu_join_plan(const KernelIr *k, CgJoinPlan *plan);
void cg_gpu_join_store(Lower *L, LLVMValueRef rec);              /* L->acc of the joined phases -> a record */
void cg_gpu_join_load(Lower *L, LLVMValueRef rec, LLVMValueRef *v); /* a record's joined values, v[i] */
void cg_gpu_join_fin(Lower *L, LLVMValueRef rec0, int q);        /* L->acc[q] from phase 0's fin record */
typedef struct CgJoinFold { LLVMValueRef a[CG_JOIN_MAX]; } CgJoinFold; /* allocas of an ordered fold of records */
void cg_gpu_join_fold_begin(Lower *L, CgJoinFold *f);
void cg_gpu_join_fold_add(Lower *L, CgJoinFold *f, const LLVMValueRef *v, LLVMValueRef ok); /* ok NULL: always */
void cg_gpu_join_fold_end(Lower *L, const CgJoinFold *f);       /* -> L->acc */
/* a thread's walk: `copies` accumulators per joined phase (GPU_UNROLL, or 1), the values at the current point
 * (after phase 0's, loads shared), copy j += them, then the copies folded in order into L->acc */
typedef struct CgJoinWalk { LLVMValueRef a[CG_JOIN_MAX][GPU_UNROLL]; int copies; } CgJoinWalk;
void cg_gpu_join_walk_begin(Lower *L, CgJoinWalk *w, int copies);
void cg_gpu_join_values(Lower *L, LLVMValueRef *v);
void cg_gpu_join_walk_add(Lower *L, CgJoinWalk *w, int j, const LLVMValueRef *v);
void cg_gpu_join_walk_end(Lower *L, const CgJoinWalk *w);void cg_gpu_onl_store(Lower *L, LLVMValueRef rec);                             /* L->onl_m, onl_s into rec */
void cg_gpu_onl_load(Lower *L, LLVMValueRef rec, LLVMValueRef *m, LLVMValueRef *s);
void cg_gpu_onl_identity(Lower *L);                                            /* (-inf, 0) */
void cg_gpu_onl_merge(Lower *L, LLVMValueRef mb, LLVMValueRef sb);             /* L's (m, s), then (mb, sb) */

/* ---- gpu_tile.c: the tiled elementwise `main` (buffers contiguous along different dims) ----------- */
/* The dim d < last whose 32 x 32 tiles with the last dim the elementwise main entry walks, tiled[b]
 * (nbuf bytes) set for the loaded buffers read through shared memory; -1 when the rule does not hold
 * (gpu_tile.c). */
int cg_gpu_tile_dim(const KernelIr *k, uint8_t *tiled);
/* The body of the tiled main entry (after the prologue: e's no, nr, tid, bdim set), with the plain
 * grid-stride loop (gtid, gstride) for launches too small along d or the last dim. */
void cg_gpu_elem_tiled(Lower *L, GpuEntry *e, int d, const uint8_t *tiled, LLVMValueRef bid, LLVMValueRef nbk,
                       LLVMValueRef gtid, LLVMValueRef gstride);

#endif /* LOOM_CG_LOWER_H */
