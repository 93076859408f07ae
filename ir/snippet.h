/* SPDX-License-Identifier: Apache-2.0 */
/* snippet.h: the typed snippet IR, what the snippet front end (frontend/snippet_*.c) produces from the
 * C-subset code of ElementwiseKernel / ReductionKernel snippets, and what codegen lowers.
 *
 * A SnModule holds, for one binding of the type placeholders, every function of one user kernel:
 * the preamble's helper functions first (in source order; a function only calls functions defined
 * before it, so there is no recursion and inlining in order is always possible), then the kernel's
 * own functions (SnModule.kernel / .map / .reduce / .post / .identity). All nodes live in arrays of
 * the module and refer to each other by int32 index (-1 = none); the module lives in an Arena.
 *
 * Semantics (every node is fully typed; the front end made each implicit conversion an SE_CAST):
 * - dtype of an expression is a LoomDType, or SN_VOID for a call of a void function (only as an
 *   SS_EXPR statement or the left of SE_COMMA).
 * - Arithmetic follows C++ as CUDA does, except: float16 ("half") values are promoted to float32 for
 *   arithmetic (it is a storage type, as everywhere in loom); integer overflow wraps; x / 0 and x % 0
 *   give 0 for integers and INT_MIN / -1 gives INT_MIN (loom cannot trap inside a kernel); shifts by
 *   >= the bit width or by a negative amount follow loom's LEFT_SHIFT/RIGHT_SHIFT; float -> int
 *   conversion saturates (NaN -> 0) as loom's casts do.
 * - SE_ELEM: op is a LoomOp; all operands have one dtype, the op's operand dtype, and the node's
 *   dtype is ir_elem_result_dtype(op, operands) (bool for comparisons and predicates).
 * - SE_DIV / SE_REM: C's / and % on two operands of the node's dtype: integers truncate toward 0;
 *   float SE_DIV is IEEE division, float SE_REM is C's fmod (LLVM's frem).
 * - SE_COND, SE_LAND, SE_LOR evaluate lazily, as C does (only the chosen arm; && and || short-circuit).
 * - Evaluation order of other operands is left to right.
 * - Variables (SnVar) belong to one function: its first nparam vars are its parameters in order.
 *   SV_IN: the element of a non-raw input at the current index (read-only). SV_OUT: the element of a
 *   non-raw output at the current index (read-write; codegen stores it back at the end of each
 *   iteration, and reads of it before any write read the output array's element, as CuPy's
 *   `T &z = _raw_z[_ind.get()]` does). SV_RAW_IN / SV_RAW_OUT: a whole array (only SE_LOAD, SE_STORE,
 *   SE_ARRAY_SIZE use them; indices are flat C-order int64 positions into the broadcast array, as
 *   CuPy's `x[i]` on a CArray). SV_SPECIAL: SN_SPECIAL_INDEX (`i`, int64, the current flat index) or
 *   SN_SPECIAL_SIZE (`_ind.size()` and `n`, int64, the number of points). SV_PARAM: a parameter of
 *   a helper / map / reduce / post function (a writable local). SV_LOCAL: a declared local.
 *   SV_STATE: a variable of the per-worker state (ElementwiseKernel's loop_prep): declared at the top
 *   level of the SF_PREP function, which owns it, and the only kind of variable that other functions
 *   use too: the SF_KERNEL and SF_AFTER functions of the module read and write it (SE_VAR,
 *   SE_ASSIGN) directly by its index.
 * - Per-worker regions (SnModule.prep / .after, ElementwiseKernel's loop_prep and after_loop): a
 *   worker is a GPU thread of the grid-stride loop or one host task (one call of the host kernel's
 *   run entry over a range of points). Codegen gives each worker one state block holding every
 *   SV_STATE variable, zeroed, then runs SF_PREP once, SF_KERNEL for each of the worker's points (in
 *   increasing index order; which points a worker gets is unspecified) and SF_AFTER once, all on that
 *   block, so state values persist from point to point. SF_PREP and SF_AFTER take the kernel's raw
 *   params (in their order) and then _ind.size() (SV_SPECIAL SN_SPECIAL_SIZE) as parameters; they see
 *   neither `i` nor the per-point params. A worker may get no point (prep and after still run).
 * - Codegen gives every SV_LOCAL of a function its slot at the function's entry, zero-initialized (the
 *   front end also uses locals without SS_DECL as temporaries, e.g. for `a[f(i)] += 1`).
 *   SS_DECL with init -1 zero-initializes (C leaves it undefined; loom makes it deterministic).
 * - Falling off the end of a non-void function returns 0 of its return type.
 * - SS_LOOP: `while (cond) body` with cond -1 meaning true; do_while runs body before the first
 *   test; step (an expression, -1 none) runs after body and on `continue` (a C `for` loop is an
 *   SS_BLOCK of its init statement and an SS_LOOP).
 *
 * Text form (ir_snippet_print): stable, one statement per line, expressions as S-expressions with
 * their dtype; it is part of the kernel cache key. Variables print as %N:name (N: the index within
 * their function), SV_STATE variables as $N:name (N: the index within the SF_PREP function).
 */
#ifndef LOOM_IR_SNIPPET_H
#define LOOM_IR_SNIPPET_H

#include "ir/ir.h"

enum { SN_VOID = 255 }; /* the dtype of a call to a void function */

typedef enum SnVarKind {
  SV_IN, SV_OUT, SV_RAW_IN, SV_RAW_OUT, SV_SPECIAL, SV_PARAM, SV_LOCAL, SV_STATE, SV_KIND_COUNT
} SnVarKind;

typedef enum SnSpecial { SN_SPECIAL_NONE = 0, SN_SPECIAL_INDEX, SN_SPECIAL_SIZE } SnSpecial;

typedef struct SnVar {
  const char *name;  /* source name (specials: "i", "_ind.size()") */
  uint8_t kind;      /* SnVarKind */
  uint8_t dtype;     /* LoomDType: the element dtype for raw arrays */
  uint8_t special;   /* SnSpecial */
  uint8_t is_const;  /* declared const (or an input): never assigned after its declaration */
  int32_t func;      /* the function it belongs to */
} SnVar;

typedef enum SnExprKind {
  SE_CONST,      /* value, in the kind of dtype (ir_scalar_canon form) */
  SE_VAR,        /* var: read a scalar variable */
  SE_LOAD,       /* var (raw array), src[0] (int64 index): one element */
  SE_ARRAY_SIZE, /* var (raw array): int64 number of elements (`x.size()`) */
  SE_ELEM,       /* op (LoomOp), src[0..arity) */
  SE_DIV,        /* src[0] / src[1], C semantics (see above) */
  SE_REM,        /* src[0] % src[1] (ints), fmod (floats) */
  SE_CAST,       /* src[0] converted to dtype */
  SE_COND,       /* src[0] (bool) ? src[1] : src[2], lazy */
  SE_LAND,       /* src[0] && src[1], bool, short-circuit */
  SE_LOR,        /* src[0] || src[1], bool, short-circuit */
  SE_ASSIGN,     /* var = src[0] (of var's dtype); the value is src[0] */
  SE_STORE,      /* var[src[0]] = src[1] (int64 index; value of the element dtype); the value */
  SE_COMMA,      /* src[0] for its effects, then src[1] (the value) */
  SE_CALL,       /* func with args lists[args_begin .. +nargs), each of the parameter's dtype */
  SE_KIND_COUNT
} SnExprKind;

typedef struct SnExpr {
  uint8_t kind;  /* SnExprKind */
  uint8_t dtype; /* LoomDType or SN_VOID */
  uint16_t op;   /* SE_ELEM */
  int32_t src[3];
  int32_t var;   /* SE_VAR, SE_LOAD, SE_ARRAY_SIZE, SE_ASSIGN, SE_STORE */
  int32_t func;  /* SE_CALL */
  int32_t args_begin, nargs;
  Scalar value;  /* SE_CONST */
  int32_t height;/* 1 + the largest height of its operands (set by ir_snippet_add_expr) */
} SnExpr;

typedef enum SnStmtKind {
  SS_EXPR,     /* expr */
  SS_DECL,     /* var = expr (-1: zero) */
  SS_IF,       /* expr (bool) ? body[0] : body[1] (-1: none) */
  SS_LOOP,     /* expr (bool cond, -1: true), body[0], step (expr, -1), do_while */
  SS_BREAK,
  SS_CONTINUE,
  SS_RETURN,   /* expr (-1 in void functions), of the function's return dtype */
  SS_BLOCK,    /* lists[list_begin .. +nlist) are statements */
  SS_KIND_COUNT
} SnStmtKind;

typedef struct SnStmt {
  uint8_t kind;
  uint8_t do_while;
  int32_t expr;
  int32_t var;
  int32_t body[2];
  int32_t step;
  int32_t list_begin, nlist;
} SnStmt;

typedef enum SnFuncRole {
  SF_HELPER,   /* a preamble function */
  SF_KERNEL,   /* ElementwiseKernel operation: params = in params, out params, i, _ind.size(); void */
  SF_MAP,      /* ReductionKernel map_expr: params = in params (SV_IN); returns the reduce dtype */
  SF_REDUCE,   /* reduce_expr: params a, b (reduce dtype); returns the reduce dtype */
  SF_POST,     /* post_map_expr: params a (reduce dtype), out params; void */
  SF_IDENTITY, /* identity: no params; returns the reduce dtype */
  SF_PREP,     /* ElementwiseKernel loop_prep: params = raw params, _ind.size(); declares SV_STATE; void */
  SF_AFTER     /* ElementwiseKernel after_loop: params = raw params, _ind.size(); void */
} SnFuncRole;

typedef struct SnFunc {
  const char *name;
  uint8_t role;      /* SnFuncRole */
  uint8_t ret_dtype; /* LoomDType or SN_VOID */
  int32_t var_begin, nvar, nparam; /* vars [var_begin, var_begin + nvar); params first */
  int32_t body;      /* an SS_BLOCK */
} SnFunc;

typedef struct SnModule {
  Arena *arena;
  const char *name;
  int32_t kernel, map, reduce, post, identity; /* function indices, -1 where absent */
  uint8_t reduce_dtype;                        /* reductions: the dtype of a and b */
  SnFunc *funcs;   int32_t nfunc, capfunc;
  SnVar *vars;     int32_t nvar, capvar;
  SnExpr *exprs;   int32_t nexpr, capexpr;
  SnStmt *stmts;   int32_t nstmt, capstmt;
  int32_t *lists;  int32_t nlist, caplist;
  int32_t prep, after; /* SF_PREP / SF_AFTER function indices (elementwise kernels), -1 where absent */
} SnModule;

/* Limits that keep every input bounded (the front end reports them as errors). */
enum { SN_MAX_NODES = 1 << 20, SN_MAX_HEIGHT = 256 };

/* A new empty module in arena a (NULL if out of memory). */
SnModule *ir_snippet_new(Arena *a, const char *name);
/* Appenders: return the new index, or -1 when out of memory or past SN_MAX_NODES (then d is set).
 * ir_snippet_add_expr also rejects (LOOM_ERR_INVALID_ARGUMENT) an expression of height > SN_MAX_HEIGHT
 * (so every walk of the IR has bounded recursion). */
int32_t ir_snippet_add_func(SnModule *m, const SnFunc *f, Diag *d);
int32_t ir_snippet_add_var(SnModule *m, const SnVar *v, Diag *d);
int32_t ir_snippet_add_expr(SnModule *m, const SnExpr *e, Diag *d);
int32_t ir_snippet_add_stmt(SnModule *m, const SnStmt *s, Diag *d);
/* Appends n entries to lists; returns the index of the first (n may be 0). */
int32_t ir_snippet_add_list(SnModule *m, const int32_t *items, int32_t n, Diag *d);
/* SE_CAST of e to dtype; e itself when it already has dtype; a folded SE_CONST when e is a constant
 * and the conversion is exact to compute here (bool/int/float sources, except float -> int). */
int32_t ir_snippet_cast(SnModule *m, int32_t e, LoomDType dtype, Diag *d);

/* Whether the module has per-worker regions (a loop_prep or an after_loop function). */
bool ir_snippet_has_worker(const SnModule *m);
/* Whether function f uses the worker state (SF_PREP, SF_KERNEL, SF_AFTER of a module with regions). */
bool ir_snippet_func_has_state(const SnModule *m, int32_t f);

/* The C name of a dtype as the printer and error messages use it ("float", "long long", "half"). */
const char *ir_snippet_c_type_name(int dtype);

/* Appends the stable text form of the module to out. */
void ir_snippet_print(const SnModule *m, StrBuf *out);
/* Checks indices, dtypes of every node against the rules above, lvalues, break/continue inside loops
 * and returns of the right dtype. Errors are LOOM_ERR_INTERNAL (the front end never makes them). */
LoomStatus ir_snippet_verify(const SnModule *m, Diag *d);

#endif /* LOOM_IR_SNIPPET_H */
