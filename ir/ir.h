/* SPDX-License-Identifier: Apache-2.0 */
/* ir.h: Loom's two IR levels, the diagnostics, the arena and the context every layer shares.
 *
 * Semantics (what every backend must compute; NumPy 2 is the reference):
 * - Broadcasting: shapes are aligned at the right; a dimension of size 1 stretches; anything else
 *   that differs is an error naming both shapes.
 * - Promotion: NumPy 2's result_type, including NEP 50: a weak constant (a Python int, float or bool)
 *   takes the dtype of the array it meets when the kinds allow (int with int array, float with float
 *   array), else the default of its kind (int64, float64). An out-of-range weak int is an error.
 *   The rule of each op is in include/loom/ops_public.def.
 * - float16 and bfloat16 are storage types: loaded, widened to float32, computed, and every
 *   float16/bfloat16 result (an op's, a cast's, a reduction's) rounded back to nearest even (overflow
 *   gives inf, NaN stays NaN), as NumPy / ml_dtypes do, also inside fused kernels; sum/prod/mean
 *   accumulate in float32 and round once at the end (NumPy's pairwise float16 sum also accumulates
 *   in float32).
 * - Complex values (complex64, complex128) are (real, imag) pairs; promotion takes the wider of the
 *   parts' float precision (complex64 + float64 -> complex128, int16 + complex64 -> complex64).
 *   Arithmetic follows NumPy's loops (Smith's division as NumPy's), functions C99 Annex G (NumPy
 *   calls the C library); order comparisons are lexicographic (real part, then imaginary part); a
 *   cast to a real dtype takes the real part.
 * - Integer overflow wraps (two's complement), as in NumPy. Integer x // 0 and x % 0 give 0;
 *   INT_MIN // -1 gives INT_MIN; shifts by >= the bit width (or negative) give 0 (or -1 for a
 *   negative value shifted right). Integer power with a negative exponent gives 1 for base 1,
 *   +-1 for base -1 and 0 otherwise (NumPy raises; Loom cannot raise from inside a kernel).
 * - Float division by zero gives +-inf or NaN (IEEE). Float floordiv/mod follow NumPy's npy_divmod.
 * - Casts: float to int saturates (NaN -> 0, out of range -> the nearest limit) on every backend;
 *   NumPy leaves it undefined. Any value to bool is value != 0 (NaN is true). Int to int wraps.
 * - Reductions: sum/prod accumulate in the result dtype (float16 in float32); min/max propagate NaN;
 *   argmin/argmax return the first index of the extreme value, or of the first NaN; min, max,
 *   argmin and argmax of an empty set are errors at build time; sum of an empty set is 0, prod 1,
 *   mean NaN, any false, all true.
 *
 * Graph IR: the array-level expression, hash-consed (equal structure = same node index), with eager
 * shape and dtype inference. Nodes live in one growable array of the IrGraph and refer to each other
 * by int32 index.
 *
 * Kernel IR: one fused kernel. An iteration space of ndim dims (sizes are run-time parameters):
 * the first nkeep dims are kept ("outer", O), the remaining ndim - nkeep are reduced (R). A kernel
 * runs phases in order for each point o of O: a REDUCE phase folds a value over all r of R into an
 * accumulator; a MAP phase stores values at every (o, r); a FINAL phase stores values at o. An
 * elementwise kernel has nkeep == ndim and one MAP phase. Instructions are typed SSA values in one
 * array, in dependency order; a phase evaluates the instructions its roots need.
 */
#ifndef LOOM_IR_H
#define LOOM_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

#define LOOM_HIDDEN __attribute__((visibility("hidden")))

/* ---- diagnostics --------------------------------------------------------------------------------- */
typedef struct Diag {
  LoomStatus status;
  char msg[1024];
} Diag;

/* Records the first error (later ones are ignored) and returns its status. printf-style. */
LoomStatus diag_error(Diag *d, LoomStatus status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Internal invariant: reports LOOM_ERR_INTERNAL with file:line; never aborts. */
#define LOOM_ASSERT(d, cond)                                                                   \
  do {                                                                                         \
    if (!(cond))                                                                               \
      return diag_error((d), LOOM_ERR_INTERNAL, "internal error: %s:%d: assertion '%s' failed", \
                        __FILE__, __LINE__, #cond);                                            \
  } while (0)

/* ---- the context (shared root object; the runtime owns rt) --------------------------------------- */
struct RtState; /* runtime/runtime.h */
struct LoomContext {
  LoomAllocator alloc;
  int32_t num_threads;
  uint32_t dump_flags; /* IR_DUMP_* from LOOM_DUMP */
  struct RtState *rt;
};
enum { IR_DUMP_GRAPH = 1u, IR_DUMP_KERNELS = 2u, IR_DUMP_LLVM = 4u, IR_DUMP_TIME = 8u };

void *ctx_alloc(LoomContext *ctx, size_t size);             /* 64-byte aligned, NULL on failure */
void *ctx_calloc(LoomContext *ctx, size_t n, size_t size);  /* zeroed; overflow-checked */
void ctx_free(LoomContext *ctx, void *p);
/* Copies d's message into the calling thread's last-error slot for ctx; returns d->status. */
LoomStatus ctx_report(LoomContext *ctx, const Diag *d);
/* The calling thread's last error message if it was reported on ctx, else "". */
const char *ctx_last_error(LoomContext *ctx);
/* The default allocator (64-byte aligned_alloc, sizes rounded up to 64); lives forever. */
const LoomAllocator *ir_default_allocator(void);

/* ---- arena: one per compile, freed in one call --------------------------------------------------- */
typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
  LoomContext *ctx;
  ArenaChunk *head;
  size_t next_chunk; /* bytes of the next chunk (doubling up to 64 KB); 0: 64 KB */
} Arena;
void arena_init(Arena *a, LoomContext *ctx);
/* An arena whose first chunk holds `first` bytes, for one that stays small: a 64 KB chunk made and freed
 * per call (a shared plan per evaluation) makes malloc return the heap's top to the system and take it
 * back each time (page faults: 4.1 -> 9.1 us a host call). */
void arena_init_small(Arena *a, LoomContext *ctx, size_t first);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned; NULL on failure */
char *arena_strdup(Arena *a, const char *s);
void arena_free_all(Arena *a);

/* ---- dtypes ---------------------------------------------------------------------------------------- */
typedef enum DKind { DK_BOOL, DK_INT, DK_UINT, DK_FLOAT, DK_COMPLEX } DKind;
DKind dtype_kind(LoomDType t);
int dtype_bits(LoomDType t);                       /* storage bits: 8 for bool, 128 for complex128 */
bool dtype_is_int(LoomDType t);                    /* signed or unsigned integer, not bool */
bool dtype_is_float(LoomDType t);                  /* real floating point (float16 ... bfloat16) */
bool dtype_is_complex(LoomDType t);
/* The dtype of a complex dtype's parts (complex64 -> float32); any other dtype unchanged. */
LoomDType dtype_real_of(LoomDType t);
/* The complex dtype holding a float's values (float16, bfloat16, float32 -> complex64; float64 ->
 * complex128); complex dtypes unchanged; ints and bool as their FLOAT rule dtype. */
LoomDType dtype_complex_of(LoomDType t);
LoomDType dtype_promote(LoomDType a, LoomDType b); /* NumPy's promote_types */
LoomDType dtype_float_of(LoomDType t);             /* the FLOAT rule of ops_public.def */
LoomDType dtype_compute(LoomDType t);              /* float16, bfloat16 -> float32, others unchanged */
/* The dtype an op computes in, given its (already promoted/inferred) result dtype and the operand
 * dtypes (b is ignored for unary ops): e.g. LT(int8, float32) -> float32, EXP(int16) -> float32,
 * LOGICAL_AND -> bool. Not yet passed through dtype_compute. */
LoomDType ir_elem_operand_dtype(LoomOp op, LoomDType result, LoomDType a, LoomDType b);
/* The dtype of a KI_ELEM of op computing in (compute) dtype od: bool for the PRED, COMPARE and
 * LOGICAL rules, the parts' dtype for REAL (abs, real, imag of complex), complex for COMPLEX, else od. */
LoomDType ir_elem_value_dtype(LoomOp op, LoomDType od);
/* The result dtype of op on (already NEP 50-resolved) operand dtypes t[0..arity), or LOOM_ERR_DTYPE
 * when the op's rule rejects them (e.g. "subtract: not supported for bool operands; ..."). */
LoomStatus ir_elem_result_dtype(LoomOp op, const LoomDType *t, LoomDType *out, Diag *d);
const char *dtype_short_name(LoomDType t);         /* "b1 i8 i16 i32 i64 u8 ... f16 f32 f64" */
bool dtype_from_short_name(const char *s, LoomDType *out);

typedef enum OpKind { OPK_UNARY, OPK_BINARY, OPK_TERNARY } OpKind;
typedef enum OpRule {
  RULE_SAME, RULE_SAME_NUM, RULE_FLOAT, RULE_PRED, RULE_INT, RULE_PROMOTE, RULE_PROMOTE_NUM,
  RULE_PROMOTE_SUB, RULE_PROMOTE_FLOAT, RULE_TRUEDIV, RULE_COMPARE, RULE_LOGICAL, RULE_BITWISE,
  RULE_SHIFT, RULE_WHERE, RULE_FLOAT_REAL, RULE_PROMOTE_NUM_REAL, RULE_REAL, RULE_COMPLEX, RULE_RANDOM,
  RULE_NUMERIC
} OpRule;
typedef struct OpInfo {
  const char *name; /* lower case: "add", "exp", ... */
  OpKind kind;
  int arity;
  OpRule rule;
  const char *doc;
} OpInfo;
const OpInfo *op_info(LoomOp op); /* NULL if out of range */
bool op_from_name(const char *name, LoomOp *out);
const char *reduce_op_name(LoomReduceOp op); /* "sum", ... */
bool reduce_op_from_name(const char *name, LoomReduceOp *out);

/* A scalar value of any dtype: the field used is chosen by dtype_kind (bool and uint use u; complex
 * uses f for the real part and im for the imaginary part, which is 0 for every other dtype). */
typedef struct Scalar {
  union {
    double f;
    int64_t i;
    uint64_t u;
  };
  double im;
} Scalar;

/* ---- graph IR --------------------------------------------------------------------------------------- */
typedef enum IrKind {
  IR_INPUT,     /* input = index into IrGraph.inputs */
  IR_CONST,     /* 0-d constant; value; IR_FLAG_WEAK for NEP 50 Python scalars */
  IR_ELEM,      /* op = LoomOp; src[0..arity) broadcast to shape; dtype = result dtype */
  IR_CAST,      /* src[0] converted to dtype */
  IR_BROADCAST, /* src[0] broadcast to shape (src rank <= rank, numpy rules) */
  IR_RESHAPE,   /* src[0] reshaped to shape (same size) */
  IR_PERMUTE,   /* result axis i = source axis arg[i] */
  IR_SLICE,     /* result index j on axis i reads source index arg[i] + j * arg2[i] */
  IR_REDUCE,    /* op = LoomReduceOp; axes = bit mask of reduced source axes; IR_FLAG_KEEPDIMS */
  IR_COPY,      /* a contiguous copy of src[0] (inserted by passes where a view is impossible) */
  IR_MATMUL,    /* matrix product: src[0] of shape [B..., M, K] times src[1] of shape [B..., K, N] gives
                   [B..., M, N] (the same batch dims B on both: frontend/matmul.c broadcasts them);
                   operands and result share one float or complex dtype (float16 accumulates in float32); K >= 1.
                   Realized by a library call (KernelIr.call), never computed inside a fused kernel. */
  IR_IOTA,      /* leaf, int64: each element's row-major linear index within shape (0 .. n-1). No memory:
                   a kernel computes a read of it (any strided view of it) from the point's coordinates,
                   as it computes a buffer's element offset (KI_OFFSET); counters of loom.random */
  IR_SCAN,      /* inclusive scan along one axis: op = LoomReduceOp among SUM PROD MIN MAX; axes = the bit of
                   the scanned axis; shape = src[0]'s; element i along the axis is op over source elements
                   0..i, accumulated in the result dtype (NumPy's cumsum/cumprod rules: bool and ints
                   narrower than 64 bits accumulate in int64 / uint64 unless a dtype is given; overflow
                   wraps; float16/bfloat16 round every partial result, as NumPy's accumulate; min/max
                   propagate NaN). Realized by a kernel of its own (a KP_SCAN phase, passes/fuse.c) */
  IR_GATHER,    /* result[p] = data[p with p[axis] replaced by index(p)] (ir/graph_gather.c): src[2] = data (the
                   result's rank and extents except on axis), src[1] = idx (int64, the result's shape), src[0] =
                   data seen at the result's shape (axis sliced 0:1 and broadcast back: the view kernels bind,
                   stride 0 on axis; the axis stride comes from src[2]'s view); axes = the bit of axis; op = an
                   IrGatherMode making idx[p] an element of axis (extent n >= 1 when the result is non-empty):
                   RAISE: idx < 0 counts from the end, then clamped to [0, n-1] (the caller checks the range:
                   loom_gather); WRAP: idx modulo n (floor); CLIP: clamped to [0, n-1]. Computed inside fused
                   kernels (KI_GATHER): producers of idx and consumers fuse with it; data is read in memory */
  IR_SCATTER,   /* src[0] = base, src[1] = idx (int64, any shape P), src[2] = values (base's dtype, shape P): the
                   result (base's shape S and dtype) is base with result.flat[idx[p]] = values[p] (row-major flat
                   index) for every p with 0 <= idx[p] < size(S); other indices write nothing (the caller
                   applies modes; -1 is "no write", how masked scatters skip points). op = IrScatterOp. Where
                   idx repeats, SET keeps the value of the last such p in row-major order on the host and one
                   of them on GPUs; ADD adds every value (numpy.add.at); PUT sets as SET into an unspecified
                   base (its shape and dtype only: elements no index writes are undefined). Realized by two
                   kernels: one writes base into the result's buffer (none for PUT), the next (a scatter kernel
                   over P, KStore.index) the values */
  IR_KIND_COUNT
} IrKind;

enum { IR_FLAG_WEAK = 1u, IR_FLAG_KEEPDIMS = 2u };
typedef enum IrGatherMode { IR_GATHER_RAISE = 0, IR_GATHER_WRAP = 1, IR_GATHER_CLIP = 2, IR_GATHER_MODE_COUNT } IrGatherMode;
typedef enum IrScatterOp { IR_SCATTER_SET = 0, IR_SCATTER_ADD = 1, IR_SCATTER_PUT = 2, IR_SCATTER_OP_COUNT } IrScatterOp;
const char *ir_gather_mode_name(int mode); /* "raise", "wrap", "clip" (NULL out of range) */

typedef struct IrNode {
  uint8_t kind;  /* IrKind */
  uint8_t dtype; /* LoomDType of the result */
  uint8_t ndim;
  uint8_t flags;
  uint16_t op;   /* LoomOp (IR_ELEM) or LoomReduceOp (IR_REDUCE, IR_SCAN) */
  uint16_t pad;
  int32_t src[3]; /* -1 where unused */
  int32_t input;  /* IR_INPUT */
  uint32_t axes;  /* IR_REDUCE, IR_SCAN */
  Scalar value;   /* IR_CONST, in the dtype's kind */
  int64_t shape[LOOM_MAX_RANK];
  int64_t arg[LOOM_MAX_RANK];  /* IR_PERMUTE: perm; IR_SLICE: start per source axis */
  int64_t arg2[LOOM_MAX_RANK]; /* IR_SLICE: step per source axis */
  uint64_t hash;
} IrNode;

typedef struct IrGraph {
  LoomContext *ctx;
  IrNode *nodes;
  int32_t nnodes, cap;
  int32_t *table; /* open-addressing hash table of node indices (-1 empty), size tcap */
  int32_t tcap;
  LoomArray *inputs;
  int32_t ninputs, incap;
  int32_t *intable; /* open-addressing hash table of input indices by descriptor (-1 empty) */
  int32_t intcap;
  IrNode *bound;    /* the nodes ir_node_bind turned into inputs, as they were (bound[i].hash: unused) */
  int32_t *bound_at; /* their indices */
  int32_t nbound, boundcap;
} IrGraph;

LoomStatus ir_graph_init(IrGraph *g, LoomContext *ctx, Diag *d);
void ir_graph_free(IrGraph *g);
int64_t ir_numel(int ndim, const int64_t *shape);
/* Whether an array descriptor's elements lie within 2^62 bytes of its first one (sum over axes of
 * (shape - 1) * |stride| * itemsize): every real array does, and then no offset or stride computed
 * from it (views, kernels, byte addresses) can overflow int64. Empty arrays always pass. */
bool ir_array_span_ok(const LoomArray *a);
/* Drops every node >= nnodes and input >= ninputs (a mark taken earlier): how a failed multi-node
 * builder leaves the graph unchanged. Never fails. */
void ir_graph_rollback(IrGraph *g, int32_t nnodes, int32_t ninputs);
/* Appends an input descriptor without deduplication (the parser's inputs all have NULL data). */
LoomStatus ir_input_append(IrGraph *g, const LoomArray *a, int32_t *index, Diag *d);
/* Points input `index` at new data and strides (loom_input_rebind); keeps the descriptor table. */
void ir_input_rebind(IrGraph *g, int32_t index, void *data, const int64_t *strides);
/* Writes a shape as Python prints a tuple: "()", "(4,)", "(2,3)". Always NUL-terminates. */
void ir_format_shape(char *buf, size_t n, int ndim, const int64_t *shape);
/* The canonical form of a value of dtype (given in the dtype's kind): bool -> 0/1, integers wrapped
 * to their width, floats rounded to their precision, every NaN the same NaN. */
Scalar ir_scalar_canon(LoomDType dtype, Scalar v);

/* Constructors validate their inputs, infer shape and dtype (resolving weak constants against their
 * partner by NEP 50), and return the index of an existing equal node when there is one. On error
 * the graph is unchanged and d says what to change. Folding is passes/fold.c's job. */
LoomStatus ir_input(IrGraph *g, const LoomArray *a, int32_t *out, Diag *d);
LoomStatus ir_const(IrGraph *g, LoomDType dtype, Scalar v, bool weak, int32_t *out, Diag *d);
/* Node idx (any kind) becomes an input reading a, an array of its dtype and shape: loom_node_bind. */
LoomStatus ir_node_bind(IrGraph *g, int32_t idx, const LoomArray *a, Diag *d);
/* Node idx computes what it did before its first ir_node_bind again (no-op if it is not bound). */
void ir_node_unbind(IrGraph *g, int32_t idx);
/* *out = 1 when a user is idx or reads it through its sources (loom_node_reaches); users are valid nodes. */
LoomStatus ir_node_reaches(const IrGraph *g, int32_t idx, int32_t n, const int32_t *users, int32_t *out, Diag *d);
/* *out = 1 when a node that computes something (not a leaf, not a view: IR_ELEM, IR_CAST, IR_REDUCE,
 * IR_COPY, IR_MATMUL, IR_GATHER, IR_SCATTER, IR_SCAN), not itself one of a[0..na), is read by a member of
 * a and by a member of b through nodes not in a (loom_nodes_share); the nodes are valid. */
LoomStatus ir_nodes_share(const IrGraph *g, int32_t na, const int32_t *a, int32_t nb, const int32_t *b, int32_t *out,
                          Diag *d);
LoomStatus ir_elem(IrGraph *g, LoomOp op, int n, const int32_t *src, int32_t *out, Diag *d);
LoomStatus ir_cast(IrGraph *g, int32_t x, LoomDType dtype, int32_t *out, Diag *d);
LoomStatus ir_broadcast(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d);
LoomStatus ir_reshape(IrGraph *g, int32_t x, int ndim, const int64_t *shape, int32_t *out, Diag *d);
LoomStatus ir_permute(IrGraph *g, int32_t x, const int32_t *perm, int32_t *out, Diag *d);
/* start/step already normalized per axis (0 <= start < dim or empty), len = result length per axis */
LoomStatus ir_slice(IrGraph *g, int32_t x, const int64_t *start, const int64_t *step,
                    const int64_t *len, int32_t *out, Diag *d);
LoomStatus ir_reduce(IrGraph *g, LoomReduceOp op, int32_t x, uint32_t axes, bool keepdims,
                     LoomDType dtype, int32_t *out, Diag *d);
LoomStatus ir_copy(IrGraph *g, int32_t x, int32_t *out, Diag *d);
/* Inclusive scan of x along axis (0 <= axis < rank; rank >= 1) with op SUM, PROD, MIN or MAX; dtype
 * LOOM_DTYPE_COUNT: NumPy's default (as ir_reduce's for sum/prod; min/max keep x's dtype). */
LoomStatus ir_scan(IrGraph *g, LoomReduceOp op, int32_t x, int axis, LoomDType dtype, int32_t *out, Diag *d);
/* a [B..., M, K] @ b [B..., K, N]: same rank >= 2, same batch dims, same float dtype, K >= 1. */
LoomStatus ir_matmul(IrGraph *g, int32_t a, int32_t b, int32_t *out, Diag *d);
/* result[p] = data[..., idx[p], ...] along axis (IR_GATHER, numpy.take_along_axis): data of rank >= 1,
 * idx an integer or bool array of data's rank that broadcasts with data off the axis (the result's
 * extent along the axis is idx's); idx is converted to int64. An empty result is a broadcast zero; a
 * non-empty one from an empty axis is LOOM_ERR_SHAPE ("cannot do a non-empty take from an empty axis").
 * Data that is not a view of a leaf (an elementwise expression, a gather) is read through an IR_COPY. */
LoomStatus ir_gather(IrGraph *g, int32_t data, int32_t idx, int axis, IrGatherMode mode, int32_t *out, Diag *d);
/* base with base.flat[idx[p]] = values[p] (IR_SCATTER): idx an integer array (converted to int64), values
 * broadcast to idx's shape and cast to base's dtype (NumPy's unsafe setitem cast); op SET, ADD or PUT. */
LoomStatus ir_scatter(IrGraph *g, int32_t base, int32_t idx, int32_t values, IrScatterOp op, int32_t *out, Diag *d);
/* Number of sources a node reads (src[0..n)): 0 for inputs and constants, the op's arity for ELEM,
 * 2 for MATMUL, 3 for GATHER and SCATTER, else 1. */
int ir_node_arity(const IrNode *n);
/* A view of its source (broadcast, reshape, permute, slice): moves no values of its own. */
static inline bool ir_is_movement(int kind) {
  return kind == IR_BROADCAST || kind == IR_RESHAPE || kind == IR_PERMUTE || kind == IR_SLICE;
}
LoomStatus ir_iota(IrGraph *g, int ndim, const int64_t *shape, int32_t *out, Diag *d);
/* A weak node (a Python scalar) converted to dtype t by value (NEP 50): a constant of t, or a cast of
 * a weak expression. A weak int constant outside integer t's range sets *range (-1 below, 1 above),
 * leaves *out unset and returns LOOM_OK; ir_weak_range_error then gives NumPy's message. */
LoomStatus ir_weak_to(IrGraph *g, int32_t x, LoomDType t, int *range, int32_t *out, Diag *d);
LoomStatus ir_weak_range_error(const IrGraph *g, int32_t x, LoomDType t, Diag *d);
/* Appends a node as given (used by the parser and passes): computes its hash and hash-conses it.
 * Does not infer anything; ir_verify() checks it. */
LoomStatus ir_add_raw(IrGraph *g, const IrNode *n, int32_t *out, Diag *d);

/* Text form, one node per line, stable (tests compare dumps):
 *   %3 = add f32 [4,5] %1 %2
 * print -> parse -> print is identical. ir_print appends to a growable string. */
typedef struct StrBuf {
  LoomContext *ctx;
  char *s;
  size_t len, cap;
  bool oom;
} StrBuf;
void sb_init(StrBuf *b, LoomContext *ctx);
void sb_printf(StrBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_take(StrBuf *b); /* the string (ctx-allocated) or NULL if an allocation failed */
void sb_free(StrBuf *b);

/* Prints the nodes reachable from roots (all nodes when nroots == 0) then "output %i" lines. */
void ir_print_graph(const IrGraph *g, int nroots, const int32_t *roots, StrBuf *out);
/* Parses the text of ir_print_graph into g (inputs are declared by "%0 = input f32 [2,3]
 * strides [3,1]" lines and get NULL data); fills roots from "output" lines. Errors give line:col. */
LoomStatus ir_parse_graph(IrGraph *g, const char *text, int32_t *nroots, int32_t *roots,
                          int maxroots, Diag *d);
LoomStatus ir_verify_graph(const IrGraph *g, Diag *d);

/* ---- kernel IR ---------------------------------------------------------------------------------------- */
/* Stride class of one buffer along one iteration dim, known at compile time (part of the key): any
 * stride (a run-time value), 0 or 1, and on the innermost dim only (where loops vectorize; outer dims
 * stay ANY, so arrays of 2-4 columns do not compile once per width) the small constant strides -1 (a
 * reversed view), 2, 3, 4 (interleaved pairs, RGB, complex and strided views), which the code then
 * uses as constants: the host's loop vectorizer widens them (interleaved groups, reversed vectors). */
typedef enum KLayout { KL_ANY = 0, KL_ZERO = 1, KL_ONE = 2, KL_NEG1 = 3, KL_TWO = 4, KL_THREE = 5, KL_FOUR = 6,
                       KL_COUNT } KLayout;
/* The class of a stride along an innermost dim (inner) or another one, and the constant stride of a
 * class (false for KL_ANY). */
static inline KLayout ir_layout_of_stride(int64_t s, bool inner) {
  if (!inner && s != 0 && s != 1) return KL_ANY;
  switch (s) {
  case 0: return KL_ZERO;
  case 1: return KL_ONE;
  case -1: return KL_NEG1;
  case 2: return KL_TWO;
  case 3: return KL_THREE;
  case 4: return KL_FOUR;
  default: return KL_ANY;
  }
}
static inline bool ir_layout_const(uint8_t lay, int64_t *stride) {
  static const int64_t s[KL_COUNT] = {0, 0, 1, -1, 2, 3, 4};
  if (lay == KL_ANY || lay >= KL_COUNT) return false;
  *stride = s[lay];
  return true;
}

typedef struct KBuffer {
  uint8_t dtype;       /* storage dtype */
  uint8_t is_output;
  uint8_t layout[LOOM_MAX_RANK]; /* KLayout per iteration dim */
} KBuffer;

/* Typing of kernel instructions (the lowering inserts KI_CASTs so codegen never guesses):
 * - every instruction's dtype is a compute dtype (dtype_compute: never float16 or bfloat16), except
 *   a KI_CAST of a float32 or float64 value (or an integer one, to bfloat16) to a storage dtype
 *   (float16, bfloat16): a rounding (the value stays a half / bfloat16 bits in codegen), used only by
 *   a KI_CAST (back to float32) and by stores. passes/lower.c rounds every float16 and bfloat16
 *   result this way (NumPy and ml_dtypes round each op result);
 * - KI_LOAD of a float16 or bfloat16 buffer yields float32; of a bool buffer yields bool (byte != 0);
 * - KI_ELEM: for WHERE, src[0] is bool and src[1], src[2] have the result dtype; for every other op
 *   all operands share one dtype, the op's operand dtype (ir_elem_operand_dtype), and the result
 *   has that dtype, or bool for the PRED, COMPARE and LOGICAL rules;
 * - a store converts the value to the buffer's dtype with KI_CAST semantics (float32 -> float16
 *   rounds to nearest even);
 * - KI_ACC has the phase's acc_dtype (int64 for ARGMIN/ARGMAX: the linear index into R, row-major
 *   over the R dims, which the lowering keeps in the source's axis order so that the index is
 *   NumPy's flat index); a REDUCE phase's value has the acc dtype (bool for ANY/ALL; the compared
 *   value's dtype for ARGMIN/ARGMAX).
 * Dims: after passes/collapse.c every kernel has ndim >= 1; a reduction kernel has at least one R
 * dim and may have no O dim (a full reduction: O is one point). */
typedef enum KInstrKind {
  KI_LOAD,   /* buf: load buffer at the current point (o, r) or o (FINAL phase) */
  KI_CONST,  /* value */
  KI_ELEM,   /* op = LoomOp applied to src (already cast to the op's input dtype by KI_CAST) */
  KI_CAST,   /* src[0] converted to dtype */
  KI_ACC,    /* phase: the result of REDUCE phase `phase` at the current o (dtype = its acc dtype;
                int64 index for argmin/argmax), or of SCAN phase `phase` at the current (o, r) */
  KI_REDSIZE,/* int64: number of points of R (product of reduced dims) */
  /* user kernels (KernelIr.snippet, ir/snippet.h): */
  KI_USER,   /* calls function `op` of the kernel's snippet module once per point; its arguments are
                user_args[buf .. buf + phase) (src unused, -1), one per parameter of the function in order:
                >= 0 an earlier instruction (the parameter's value, of its compute dtype), < 0 a raw
                buffer -(b + 1) passed whole (base pointer, and its element count in the binding's
                stride of dim 0; its layout is KL_ANY on every dim, and nothing loads it by point).
                dtype: the function's return dtype (compute), or bool for functions that return
                their out params (kernel, post): those are read through KI_USER_OUT. In an
                elementwise kernel every KI_USER is a root of the MAP phase (run even when no store
                needs it: a kernel may write only raw arrays). */
  KI_USER_OUT,/* src[0] (a KI_USER): the final value of its function's out param number op (in the
                order of its SV_OUT params), converted to dtype (the param's compute dtype) */
  KI_INDEX,  /* int64: the linear index of the current point in the whole iteration space (row-major;
                elementwise kernels only) */
  KI_NPOINTS,/* int64: the number of points of the whole iteration space */
  KI_PARAM,  /* a scalar kernel parameter: parameter number op (0 .. KernelIr.nparam - 1, each exactly once),
                of the instruction's dtype (a compute dtype, never complex). Its value is bound at launch
                (SchedKernel.params; codegen.h says where it travels), so the key (ir_print_kernel_key)
                names its dtype, never its value: a Python scalar that changes reuses the compiled kernel */
  KI_OFFSET, /* int64: buffer buf's element offset at the current point (o, r), or o (FINAL phase): the
                binding's offset plus the sum of coordinate * stride; buf is an index buffer (a view of
                an IR_IOTA: no memory, bound as SB_INDEX, never loaded or stored) */
  KI_GATHER, /* load buffer buf at its element offset at the current point (as KI_LOAD) plus src[0] (int64
                elements, computed: an IR_GATHER's index times the data's axis stride, a KI_PARAM); the
                buffer's stride along the gathered dim is 0 (ir.h IR_GATHER), so dims still collapse */
  KI_KIND_COUNT
} KInstrKind;

typedef struct KInstr {
  uint8_t kind;  /* KInstrKind */
  uint8_t dtype; /* compute dtype of the result (float16 only for a rounding KI_CAST, see above;
                    float16 loads produce float32; stores round) */
  uint16_t op;
  int32_t src[3];
  int32_t buf;   /* KI_LOAD */
  int32_t phase; /* KI_ACC */
  Scalar value;  /* KI_CONST */
} KInstr;

/* A parameter's value as its launch word (codegen.h): the bits of the value in the parameter's dtype,
 * zero-extended (float32: the float's 32 bits; float64: the double's; bool: 0 or 1; signed ints
 * sign-extended to 64 bits, unsigned zero-extended). */
uint64_t ir_param_word(LoomDType dtype, Scalar v);

/* KP_SCAN (kernels of one R dim whose only phase it is): for each o, for r = 0, 1, ... in order, folds
 * `value` at (o, r) into the accumulator (acc_dtype, starting at the op's identity; a float16 /
 * bfloat16 scan_round rounds it to that dtype after every step, as NumPy's accumulate) and then runs
 * the phase's stores at (o, r), where KI_ACC of the phase is the running (inclusive) value. */
typedef enum KPhaseKind { KP_REDUCE, KP_MAP, KP_FINAL, KP_SCAN } KPhaseKind;

typedef struct KStore {
  int32_t buf;
  int32_t value; /* instruction; converted to the buffer's dtype when stored */
  /* scatter == 0 (zero-initialized stores are plain): store at the point's offset. scatter == 1 (an
   * IR_SCATTER's store): at element `index` (an int64 instruction) past the buffer's offset at the point
   * (its strides are 0) when 0 <= index < `limit` (an int64 instruction), nothing otherwise; op is an
   * IrScatterOp (ADD: an atomic add on GPUs) */
  uint8_t scatter, op;
  int32_t index, limit;
} KStore;

typedef struct KPhase {
  uint8_t kind;      /* KPhaseKind */
  uint8_t reduce_op; /* KP_REDUCE: LoomReduceOp among SUM PROD MIN MAX ANY ALL ARGMIN ARGMAX; KP_SCAN: SUM PROD MIN MAX */
  uint8_t acc_dtype; /* KP_REDUCE, KP_SCAN: accumulator dtype (compute dtype) */
  int32_t value;     /* KP_REDUCE, KP_SCAN: the instruction folded */
  int32_t store_begin, nstores; /* KP_MAP, KP_FINAL, KP_SCAN: range of KernelIr.stores; KP_REDUCE: its side
                                    stores (plain), run at every point (o, r) the phase folds, from values
                                    of that point (a map fused into the reduction that reads it) */
  uint8_t scan_round;            /* KP_SCAN: LOOM_FLOAT16 / LOOM_BFLOAT16 to round each partial to, else 0 */
} KPhase;

/* A library-call kernel (KernelIr.call set): the kernel is one call of a vendor library (device.h's
 * RtLinalg) instead of generated code; it has no instructions, phases or stores. For KC_MATMUL the
 * iteration space is [B..., M, N, K] (nkeep = ndim - 1: K is reduced) and the buffers' layouts and
 * bindings are per dim of that space as for any kernel: a reads [B..., M, 0, K], b [B..., 0, N, K],
 * out writes [B..., M, N, 0]. The call computes, per point of [B..., M, N],
 *   out = act(alpha * sum_K a * b + bias + beta * c)
 * in the compute dtype of out (float32 for float16); bias (a vector along N or M: zero strides
 * elsewhere) and c (any matrix of out's shape) are optional (-1). passes/fuse.c chooses operand and
 * output layouts a BLAS takes: per matrix one unit-stride dim and non-negative strides. */
typedef enum KCallOp { KC_MATMUL = 0, KC_COUNT } KCallOp;
typedef enum KCallAct { KACT_NONE = 0, KACT_RELU, KACT_GELU_TANH, KACT_COUNT } KCallAct;
typedef struct KCall {
  uint8_t op;  /* KCallOp */
  uint8_t act; /* KCallAct */
  int32_t a, b, out, bias, c; /* buffer indices; bias and c -1 when absent */
  double alpha, beta;         /* beta is used only with c */
} KCall;
const char *ir_call_act_name(KCallAct act); /* "none", "relu", "gelu_tanh" */

struct SnModule; /* ir/snippet.h */
/* KPhase.reduce_op of a user reduction: the combiner and identity are the functions SF_REDUCE and
 * SF_IDENTITY of KernelIr.snippet (associative, as CuPy assumes; the acc dtype is the reduce dtype). */
#define IR_REDUCE_USER ((int)LOOM_REDUCE_COUNT)

typedef struct KernelIr {
  char name[48];
  int32_t ndim, nkeep;
  uint8_t index_bits; /* 32 or 64 */
  int32_t nbuf;
  KBuffer *bufs;
  int32_t ninstr;
  KInstr *instrs;
  int32_t nphase;
  KPhase *phases;
  int32_t nstore;
  KStore *stores;
  /* user kernels: the snippet module KI_USER calls (NULL otherwise; printed with the kernel, so it
   * is part of the cache key) and the argument lists of the KI_USER instructions */
  const struct SnModule *snippet;
  int32_t nuser_arg;
  int32_t *user_args;
  int32_t nparam; /* scalar parameters (KI_PARAM), launched after the buffers (codegen.h) */
  /* a library-call kernel (see KCall): NULL for generated kernels */
  const KCall *call;
  /* 0, or E >= 2: the kernel runs only where its last dim's extent is E (a host specialization made at
   * launch, codegen/lower_host_rows.c; printed " rows E" on the kernel line, so part of the key). Then
   * every buffer's layout on the last dim is a constant stride c, and a buffer whose layout on dim
   * ndim - 2 is KL_ANY has the stride E * c there (packed rows); a reduction reduces the last dim only. */
  int32_t row_extent;
  /* 0, or 1: a reduction walked by columns (the GPU's COL: a thread a kept point; the host's outer walk)
   * although no buffer is contiguous along its last kept dim: its big operand strides by run-time amounts along
   * both that dim and the innermost reduced one, and at launch the kept stride was the smaller
   * (x[:, ::2].sum(0)); a specialization made at launch by the device (codegen.h cg_gpu_walk_cols,
   * cg_host_walk_cols), printed " cols" on the kernel line, so part of the key. */
  uint8_t walk_cols;
  /* 0, or a host specialization made at launch (codegen/lower_host_outer_loads.c cg_host_col_stride): every
   * buffer the kernel loads with a run-time stride along its last kept dim strides there by col_stride at
   * launch, 2, 3, 4 or -1, which the column walks then read as a constant (one walk, where the generic kernel
   * branches at run time over a copy per small stride), or by none of those: IR_COL_STRIDE_OTHER (the one
   * walk, no copies). Printed " colstride S" / " colstride other", so part of the key. */
  int8_t col_stride;
} KernelIr;
#define IR_COL_STRIDE_OTHER 1 /* KernelIr.col_stride: no small constant (a stride of 1 is never run-time) */

/* Stable text form; it is also the cache key's source (it names every dtype, layout and op). */
void ir_print_kernel(const KernelIr *k, StrBuf *out);
/* The same text with the name printed as "-": the cache key (two kernels print the same key iff
 * they compute the same thing). */
void ir_print_kernel_key(const KernelIr *k, StrBuf *out);
LoomStatus ir_parse_kernel(Arena *a, const char *text, KernelIr **out, Diag *d);
LoomStatus ir_verify_kernel(const KernelIr *k, Diag *d);
uint64_t ir_hash_bytes(const void *p, size_t n, uint64_t seed); /* 8 bytes a step; in memory only, never stored */

/* ---- schedule: the kernels of one evaluation, in order, with their concrete arguments ------------- */
/* SB_INDEX: an index buffer (KI_OFFSET) has no memory: its base word is its binding offset * 8, index -1. */
typedef enum SchedBufKind { SB_INPUT, SB_TEMP, SB_OUTPUT, SB_INDEX } SchedBufKind;

typedef struct SchedBinding {
  uint8_t kind;  /* SchedBufKind */
  int32_t index; /* into IrGraph.inputs, Schedule.temps, or the eval's outputs */
  int64_t offset;                /* elements from the base pointer */
  int64_t strides[LOOM_MAX_RANK];/* elements, per kernel iteration dim (0 where KL_ZERO) */
} SchedBinding;

typedef struct SchedKernel {
  KernelIr *ir;
  int64_t shape[LOOM_MAX_RANK]; /* per iteration dim */
  SchedBinding *bind;           /* ir->nbuf entries */
  uint64_t *params;             /* ir->nparam launch words (ir_param_word), NULL when none */
  int32_t *param_node;          /* per launch word: the graph's IR_CONST it holds (-1: none); NULL when none */
} SchedKernel;

typedef struct SchedTemp {
  uint8_t dtype;
  int64_t nelem; /* C-contiguous */
} SchedTemp;

typedef struct Schedule {
  int32_t nkernel;
  SchedKernel *kernels;
  int32_t ntemp;
  SchedTemp *temps;
  /* per graph node below nconst_read: 1 when a pass read that IR_CONST's value (folded, matched or baked
   * it), so the schedule holds only for that value. Every other constant reaches the kernels only as
   * launch words (param_node), which runtime/plan_cache.c rewrites for another graph's values. */
  const uint8_t *const_read;
  int32_t nconst_read;
} Schedule;

#endif /* LOOM_IR_H */
