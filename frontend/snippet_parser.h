/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_parser.h: private to the snippet parser (frontend/snippet_*.c but snippet_lex.c): the parser
 * state, the error and unwinding macros, the token cursor, and the functions one parse file calls in
 * another. Nothing here is part of frontend/snippet.h's interface.
 *
 * The parser is split by concept, in pipeline order:
 *   snippet_nodes.c  IR node, variable and statement builders; the name scope
 *   snippet_types.c  type names, C++ promotions and conversions, operators, lvalues (the type checking)
 *   snippet_expr.c   expression rules (C precedence), calls of math and preamble functions
 *   snippet_stmt.c   statements, declarations, function bodies, the preamble; one source part parsed
 *   snippet_parse.c  the entry points: parameter lists, ElementwiseKernel and ReductionKernel
 * Conventions shared by all of them: every rule returns the index it built, or -1 after reporting an
 * error at the offending token through ERR/ERRU (fe_error_at); callers unwind with TRY.
 */
#ifndef LOOM_FRONTEND_SNIPPET_PARSER_H
#define LOOM_FRONTEND_SNIPPET_PARSER_H

#include <string.h>

#include "frontend/snippet.h"

enum { FE_MAX_DEPTH = 200 };

typedef struct ScopeEnt {
  const char *name;
  int32_t len;
  int32_t var;
} ScopeEnt;

typedef struct Parser {
  Arena *a;
  SnModule *m;
  Diag *d;
  const FeSource *src;
  FeToken *tok;
  int32_t pos, ntok;
  FeBinding bind;
  int32_t func;       /* the function being parsed */
  uint8_t ret_dtype;  /* its return dtype */
  bool returns_ok;    /* `return` allowed (helper functions) */
  bool lenient_end;   /* the last ';' before EOF may be omitted (the operation) */
  ScopeEnt *scope;
  int32_t nscope, capscope, block_start;
  int depth, loops;
  /* loop_prep / after_loop (per-worker regions): */
  bool state_decls;   /* top-level declarations make worker state variables (SV_STATE): loop_prep */
  bool top_decl;      /* the declaration being parsed is at the top level of the body */
  const char *region; /* "loop_prep" / "after_loop" while parsing one, else NULL */
  const FeParamList *hide_in, *hide_out; /* per-point params: named in errors in a region */
} Parser;

#define ERR(t, ...) (fe_error_at(p->d, LOOM_ERR_INVALID_ARGUMENT, p->src, (t)->line, (t)->col, __VA_ARGS__), -1)
#define ERRU(t, ...) (fe_error_at(p->d, LOOM_ERR_UNSUPPORTED, p->src, (t)->line, (t)->col, __VA_ARGS__), -1)
#define TRY(x)          \
  do {                  \
    if ((x) < 0) return -1; \
  } while (0)

static inline FeToken *cur(Parser *p) { return &p->tok[p->pos]; }
static inline FeToken *peek(Parser *p, int k) {
  int32_t i = p->pos + k;
  return &p->tok[i < p->ntok ? i : p->ntok - 1];
}
static inline void advance(Parser *p) {
  if (p->tok[p->pos].kind != FT_EOF) p->pos++;
}
static inline bool is(Parser *p, const char *s) { return fe_tok_is(cur(p), s); }
static inline bool consume(Parser *p, const char *s) {
  if (!is(p, s)) return false;
  advance(p);
  return true;
}
static inline const char *tok_desc(const FeToken *t) { return t->kind == FT_EOF ? "end of input" : NULL; }

static inline int expect(Parser *p, const char *s) {
  if (consume(p, s)) return 0;
  FeToken *t = cur(p);
  if (tok_desc(t)) return ERR(t, "expected '%s' before end of input", s);
  return ERR(t, "expected '%s' before '%.*s'", s, t->len, t->loc);
}

static inline int enter(Parser *p) {
  if (++p->depth > FE_MAX_DEPTH) return ERR(cur(p), "snippet nested too deeply (more than %d levels)", FE_MAX_DEPTH);
  return 0;
}

/* A one-word type name and the dtype it stands for. */
typedef struct NamedType {
  const char *name;
  LoomDType dtype;
} NamedType;

enum { FE_MAX_ARGS = 32 }; /* arguments of a call, parameters of a preamble function */

/* ---- snippet_nodes.c --------------------------------------------------------------------------- */
SnExpr fe_blank_expr(int kind, int dtype);
int32_t fe_add_expr(Parser *p, const SnExpr *e); /* checks SN_MAX_HEIGHT */
int32_t fe_mk2(Parser *p, int kind, int dtype, int32_t a, int32_t b);
int32_t fe_mk_elem(Parser *p, LoomOp op, int dtype, int32_t a, int32_t b);
int32_t fe_mk_var(Parser *p, int32_t var);
int32_t fe_mk_const(Parser *p, LoomDType t, Scalar v);
int32_t fe_mk_assign(Parser *p, int32_t var, int32_t value);
int32_t fe_mk_store(Parser *p, int32_t var, int32_t index, int32_t value);
int32_t fe_mk_comma(Parser *p, int32_t a, int32_t b);
int32_t fe_new_var(Parser *p, const char *name, int kind, int dtype, bool is_const);
int32_t fe_new_temp(Parser *p, int dtype);
int32_t fe_new_stmt(Parser *p, int kind, int32_t expr);
int fe_scope_push(Parser *p, const char *name, int32_t len, int32_t var);
int32_t fe_scope_lookup(Parser *p, const FeToken *t, int32_t from); /* innermost first, down to scope[from] */
char *fe_tok_str(Parser *p, const FeToken *t);                      /* the token's text, NUL-terminated */

/* ---- snippet_types.c --------------------------------------------------------------------------- */
bool fe_is_spec_word(const FeToken *t);
bool fe_is_type_start(Parser *p, const FeToken *t);
bool fe_is_keyword(const FeToken *t);                /* a C/CUDA keyword the snippets reserve */
bool fe_is_reserved(Parser *p, const FeToken *t);   /* a keyword or a type name */
int fe_parse_type(Parser *p, int *out);
LoomDType fe_promote(LoomDType t);
LoomDType fe_common_type(LoomDType a, LoomDType b);
int32_t fe_value_of(Parser *p, int32_t e, const FeToken *t);
int32_t fe_convert(Parser *p, int32_t e, int dtype, const FeToken *t);
int32_t fe_to_bool(Parser *p, int32_t e, const FeToken *t);
LoomDType fe_dtype_of(Parser *p, int32_t e);
const char *fe_c_type_name(int dt);
int32_t fe_binop(Parser *p, const char *op, int32_t a, int32_t b, const FeToken *t);
int32_t fe_assign_op(Parser *p, int32_t lhs, const char *op, int32_t rhs, const FeToken *t);
int32_t fe_incdec(Parser *p, int32_t lhs, bool inc, bool postfix, const FeToken *t);

/* ---- snippet_expr.c ---------------------------------------------------------------------------- */
int32_t fe_parse_expr(Parser *p);   /* expr = assign ("," assign)* */
int32_t fe_parse_assign(Parser *p); /* assign = conditional (assign-op assign)? */

/* ---- snippet_stmt.c ---------------------------------------------------------------------------- */
int32_t fe_block_of(Parser *p, const int32_t *items, int32_t n);
int32_t fe_begin_func(Parser *p, const char *name, int role, int ret);
int fe_parse_body(Parser *p);
int fe_parse_preamble(Parser *p);
LoomStatus fe_lex_source(Parser *p, const FeSource *src);
/* Tokenizes text as the part `part` of kernel `kernel` and runs fn (fe_parse_body, fe_parse_preamble...)
 * over it; returns the status of the error fn reported. */
LoomStatus fe_parse_source(Parser *p, const char *kernel, const char *part, const char *text,
                           int (*fn)(Parser *));

#endif
