/* SPDX-License-Identifier: Apache-2.0 */
/* snippet.h: the front end of user-kernel snippets (CuPy's ElementwiseKernel / ReductionKernel C
 * subset): parameter lists, and snippet source -> typed snippet IR (ir/snippet.h) for one binding of
 * the type placeholders.
 *
 * Stages: frontend/snippet_lex.c (source -> tokens), frontend/snippet_parse.c and the files it uses
 * (snippet_nodes/types/expr/stmt.c, private header snippet_parser.h: tokens -> typed IR: name
 * resolution, C++ conversions and checks happen while parsing, as in chibicc).
 *
 * Errors: LOOM_ERR_INVALID_ARGUMENT (or LOOM_ERR_UNSUPPORTED for valid C that loom cannot do, e.g.
 * erf) with a message
 *   "<name>:<line>:<col>: error: <what>\n<source line>\n<caret under the token>"
 * where <name> is the kernel's name, followed by "(preamble)", "(in_params)", "(map_expr)" ... for
 * code that is not the operation itself. Nothing here aborts, recurses without bound or leaks: all
 * memory comes from the caller's Arena (freed in one call whatever happens).
 */
#ifndef LOOM_FRONTEND_SNIPPET_H
#define LOOM_FRONTEND_SNIPPET_H

#include "ir/ir.h"
#include "ir/snippet.h"

/* ---- snippet_lex.c --------------------------------------------------------------------------- */
typedef enum FeTokKind { FT_IDENT, FT_PUNCT, FT_NUM, FT_EOF } FeTokKind;

typedef struct FeToken {
  uint8_t kind;   /* FeTokKind */
  uint8_t dtype;  /* FT_NUM: LoomDType of the literal (C++ rules: int, long, unsigned ..., double, float) */
  int32_t len;
  const char *loc; /* into the source */
  int32_t line, col; /* 1-based */
  Scalar value;   /* FT_NUM */
} FeToken;

/* Where a piece of source came from, for messages. */
typedef struct FeSource {
  const char *kernel; /* kernel name */
  const char *part;   /* NULL for the operation, else "preamble", "map_expr", ... */
  const char *text;   /* NUL-terminated */
} FeSource;

/* Formats "<kernel>[(<part>)]:<line>:<col>: error: <msg>\n<line>\n<caret>" into d. */
LoomStatus fe_error_at(Diag *d, LoomStatus status, const FeSource *src, int32_t line, int32_t col,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Tokenizes src->text (at most FE_MAX_SOURCE bytes) into an FT_EOF-terminated array. */
enum { FE_MAX_SOURCE = 1 << 20 };
LoomStatus fe_tokenize(Arena *a, const FeSource *src, FeToken **out, int32_t *ntok, Diag *d);
bool fe_tok_is(const FeToken *t, const char *s);

/* ---- snippet_parse.c ------------------------------------------------------------------------- */
typedef struct FeParam {
  const char *name;
  const char *type_name; /* as written: "float32", "T" */
  bool raw;
  bool placeholder;      /* type_name is a placeholder letter; dtype unset */
  LoomDType dtype;       /* when !placeholder */
} FeParam;

typedef struct FeParamList {
  int32_t n;
  FeParam *params;
} FeParamList;

/* Parses a CuPy parameter list, "float32 x, raw T y, T z" (comma-separated "[raw] TYPE NAME").
 * TYPE is a NumPy dtype name as CuPy takes it (numpy.dtype(TYPE): float32, int64, float = float64,
 * int = int64 (long), double, half, bool, uint8, ...) or a one-letter placeholder (T, U, ...).
 * Empty or all-blank text gives 0 params. `part` names the list in messages ("in_params"). */
LoomStatus fe_parse_params(Arena *a, const char *kernel, const char *part, const char *text,
                           FeParamList *out, Diag *d);

/* One binding of the type placeholders: names[k] stands for dtypes[k]. */
typedef struct FeBinding {
  int32_t n;
  const char *const *names;
  const LoomDType *dtypes;
} FeBinding;

typedef struct FeElementwiseSpec {
  const char *name;      /* kernel name (C identifier) */
  FeParamList in, out;   /* from fe_parse_params */
  const char *operation; /* the body: statements, the last ';' optional */
  const char *preamble;  /* helper functions; NULL or "" for none */
  FeBinding binding;     /* must bind every placeholder used by in/out and the body */
} FeElementwiseSpec;

/* The module's kernel function has params: in params, out params, then the specials i and
 * _ind.size() (SV_SPECIAL). Out params must not repeat in params' names. */
LoomStatus fe_snippet_elementwise(Arena *a, const FeElementwiseSpec *s, SnModule **out, Diag *d);
/* The same with CuPy's loop_prep and after_loop (NULL or blank: none): statements run once per
 * worker before / after its points (ir/snippet.h: SF_PREP, SF_AFTER, SV_STATE). loop_prep's
 * top-level declarations are the worker state, visible in the operation and in after_loop; both
 * regions see the raw params, _ind.size() and n, never `i` or the per-point params (an error that
 * says so, with the part "loop_prep" / "after_loop", line, column and caret). */
LoomStatus fe_snippet_elementwise_ex(Arena *a, const FeElementwiseSpec *s, const char *loop_prep,
                                     const char *after_loop, SnModule **out, Diag *d);

typedef struct FeReductionSpec {
  const char *name;
  FeParamList in, out;
  const char *map_expr;      /* an expression of the (non-raw) in params */
  const char *reduce_expr;   /* an expression of a and b */
  const char *post_map_expr; /* statements of a and the out params */
  const char *identity;      /* an expression; NULL or "" for none (then module->identity == -1) */
  const char *reduce_type;   /* a type name (C, NumPy or placeholder); NULL: the first out param's */
  const char *preamble;
  FeBinding binding;         /* `_type_reduce` is bound to the reduce dtype automatically */
} FeReductionSpec;

/* Builds functions map (in params) -> reduce dtype, reduce (a, b) -> reduce dtype, post (a, out
 * params) -> void and identity () -> reduce dtype, after the preamble's helpers. */
LoomStatus fe_snippet_reduction(Arena *a, const FeReductionSpec *s, SnModule **out, Diag *d);

#endif /* LOOM_FRONTEND_SNIPPET_H */
