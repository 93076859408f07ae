/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_parse.c: kernel snippets (CuPy's C subset) -> typed snippet IR, and CuPy parameter lists.
 *
 * Approach (chibicc's parse.c, with type.c folded in): a recursive-descent parser over the token
 * array of snippet_lex.c that builds typed IR nodes directly, because the placeholder binding is
 * known before parsing. Each expression rule returns the index of an SnExpr whose dtype is final;
 * C++'s integer promotion and usual arithmetic conversions are applied where the operator is parsed
 * and show up as explicit SE_CASTs. Names are resolved through a scope stack of (name, var) entries;
 * a block pops what it pushed. Compound assignments, ++/-- and round() are desugared with temporary
 * locals so the IR has only plain assignments and stores. Errors go through fe_error_at at the
 * offending token; every rule returns -1 after an error and callers unwind. Recursion is bounded by
 * FE_MAX_DEPTH nested rules and SN_MAX_HEIGHT expression height.
 * ElementwiseKernel's loop_prep / after_loop become functions of their own (SF_PREP before the
 * operation, SF_AFTER after it); loop_prep's top-level declarations are SV_STATE variables that stay
 * in scope for the operation and after_loop.
 */
#include <stdio.h>
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

static FeToken *cur(Parser *p) { return &p->tok[p->pos]; }
static FeToken *peek(Parser *p, int k) {
  int32_t i = p->pos + k;
  return &p->tok[i < p->ntok ? i : p->ntok - 1];
}
static void advance(Parser *p) {
  if (p->tok[p->pos].kind != FT_EOF) p->pos++;
}
static bool is(Parser *p, const char *s) { return fe_tok_is(cur(p), s); }
static bool consume(Parser *p, const char *s) {
  if (!is(p, s)) return false;
  advance(p);
  return true;
}
static const char *tok_desc(const FeToken *t) { return t->kind == FT_EOF ? "end of input" : NULL; }

static int expect(Parser *p, const char *s) {
  if (consume(p, s)) return 0;
  FeToken *t = cur(p);
  if (tok_desc(t)) return ERR(t, "expected '%s' before end of input", s);
  return ERR(t, "expected '%s' before '%.*s'", s, t->len, t->loc);
}

static int enter(Parser *p) {
  if (++p->depth > FE_MAX_DEPTH) return ERR(cur(p), "snippet nested too deeply (more than %d levels)", FE_MAX_DEPTH);
  return 0;
}

/* ---- node helpers --------------------------------------------------------------------------- */
static SnExpr blank_expr(int kind, int dtype) {
  SnExpr e;
  memset(&e, 0, sizeof e);
  e.kind = (uint8_t)kind;
  e.dtype = (uint8_t)dtype;
  e.src[0] = e.src[1] = e.src[2] = -1;
  e.var = e.func = -1;
  return e;
}

static int32_t add_expr(Parser *p, const SnExpr *e) {
  int32_t h = 0;
  for (int k = 0; k < 3; k++)
    if (e->src[k] >= 0 && p->m->exprs[e->src[k]].height > h) h = p->m->exprs[e->src[k]].height;
  if (h + 1 > SN_MAX_HEIGHT)
    return ERR(cur(p), "expression too complex (nested more than %d levels deep)", SN_MAX_HEIGHT);
  return ir_snippet_add_expr(p->m, e, p->d);
}

static int32_t mk2(Parser *p, int kind, int dtype, int32_t a, int32_t b) {
  SnExpr e = blank_expr(kind, dtype);
  e.src[0] = a;
  e.src[1] = b;
  return add_expr(p, &e);
}
static int32_t mk_elem(Parser *p, LoomOp op, int dtype, int32_t a, int32_t b) {
  SnExpr e = blank_expr(SE_ELEM, dtype);
  e.op = (uint16_t)op;
  e.src[0] = a;
  e.src[1] = b;
  return add_expr(p, &e);
}
static int32_t mk_var(Parser *p, int32_t var) {
  SnExpr e = blank_expr(SE_VAR, p->m->vars[var].dtype);
  e.var = var;
  return add_expr(p, &e);
}
static int32_t mk_const(Parser *p, LoomDType t, Scalar v) {
  SnExpr e = blank_expr(SE_CONST, t);
  e.value = ir_scalar_canon(t, v);
  return add_expr(p, &e);
}
static int32_t mk_assign(Parser *p, int32_t var, int32_t value) {
  SnExpr e = blank_expr(SE_ASSIGN, p->m->vars[var].dtype);
  e.var = var;
  e.src[0] = value;
  return add_expr(p, &e);
}
static int32_t mk_store(Parser *p, int32_t var, int32_t index, int32_t value) {
  SnExpr e = blank_expr(SE_STORE, p->m->vars[var].dtype);
  e.var = var;
  e.src[0] = index;
  e.src[1] = value;
  return add_expr(p, &e);
}
static int32_t mk_comma(Parser *p, int32_t a, int32_t b) { return mk2(p, SE_COMMA, p->m->exprs[b].dtype, a, b); }

static int32_t new_var(Parser *p, const char *name, int kind, int dtype, bool is_const) {
  SnVar v = {0};
  v.name = name;
  v.kind = (uint8_t)kind;
  v.dtype = (uint8_t)dtype;
  v.is_const = is_const;
  v.func = p->func;
  int32_t r = ir_snippet_add_var(p->m, &v, p->d);
  if (r >= 0) p->m->funcs[p->func].nvar++;
  return r;
}
static int32_t new_temp(Parser *p, int dtype) { return new_var(p, "tmp", SV_LOCAL, dtype, false); }

static int32_t new_stmt(Parser *p, int kind, int32_t expr) {
  SnStmt s;
  memset(&s, 0, sizeof s);
  s.kind = (uint8_t)kind;
  s.expr = expr;
  s.var = -1;
  s.body[0] = s.body[1] = -1;
  s.step = -1;
  return ir_snippet_add_stmt(p->m, &s, p->d);
}

static int push_name(Parser *p, const char *name, int32_t len, int32_t var) {
  if (p->nscope == p->capscope) {
    int32_t nc = p->capscope ? p->capscope * 2 : 32;
    if (nc > SN_MAX_NODES) return ERR(cur(p), "too many variables");
    ScopeEnt *ns = arena_alloc(p->a, (size_t)nc * sizeof *ns);
    if (!ns) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory (snippet scopes)"), -1;
    if (p->nscope) memcpy(ns, p->scope, (size_t)p->nscope * sizeof *ns);
    p->scope = ns;
    p->capscope = nc;
  }
  p->scope[p->nscope++] = (ScopeEnt){name, len, var};
  return 0;
}

static int32_t lookup(Parser *p, const FeToken *t, int32_t from) {
  for (int32_t k = p->nscope - 1; k >= from; k--)
    if (p->scope[k].len == t->len && memcmp(p->scope[k].name, t->loc, (size_t)t->len) == 0) return p->scope[k].var;
  return -1;
}

static char *tok_str(Parser *p, const FeToken *t) {
  char *s = arena_alloc(p->a, (size_t)t->len + 1);
  if (!s) {
    diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory (snippet names)");
    return NULL;
  }
  memcpy(s, t->loc, (size_t)t->len);
  return s;
}

/* ---- types ------------------------------------------------------------------------------------ */
typedef struct NamedType {
  const char *name;
  LoomDType dtype;
} NamedType;

/* One-word type names of the snippet language (C/CUDA names and NumPy-style aliases). */
static const NamedType named_types[] = {
    {"half", LOOM_FLOAT16}, {"__half", LOOM_FLOAT16}, {"float16", LOOM_FLOAT16},
    {"float32", LOOM_FLOAT32}, {"float64", LOOM_FLOAT64},
    {"int8_t", LOOM_INT8}, {"int16_t", LOOM_INT16}, {"int32_t", LOOM_INT32}, {"int64_t", LOOM_INT64},
    {"uint8_t", LOOM_UINT8}, {"uint16_t", LOOM_UINT16}, {"uint32_t", LOOM_UINT32}, {"uint64_t", LOOM_UINT64},
    {"int8", LOOM_INT8}, {"int16", LOOM_INT16}, {"int32", LOOM_INT32}, {"int64", LOOM_INT64},
    {"uint8", LOOM_UINT8}, {"uint16", LOOM_UINT16}, {"uint32", LOOM_UINT32}, {"uint64", LOOM_UINT64},
    {"size_t", LOOM_UINT64}, {"ptrdiff_t", LOOM_INT64}, {"ssize_t", LOOM_INT64},
    {"intptr_t", LOOM_INT64}, {"uintptr_t", LOOM_UINT64},
};
static const char *const spec_words[] = {"const", "volatile", "signed", "unsigned", "char", "short",
                                         "int", "long", "bool", "float", "double", "void"};

static const char *const keywords[] = {
    "if", "else", "for", "while", "do", "break", "continue", "return", "true", "false",
    "static_cast", "sizeof", "struct", "switch", "case", "goto", "typedef", "static", "inline",
    "__device__", "__forceinline__", "__host__", "__global__", "extern", "auto", "register"};

static bool named_type(Parser *p, const FeToken *t, LoomDType *dt) {
  if (t->kind != FT_IDENT) return false;
  for (int32_t k = p->bind.n - 1; k >= 0; k--)
    if (p->bind.names && p->bind.names[k] && fe_tok_is(t, p->bind.names[k])) {
      *dt = p->bind.dtypes[k];
      return true;
    }
  for (size_t k = 0; k < sizeof named_types / sizeof *named_types; k++)
    if (fe_tok_is(t, named_types[k].name)) {
      *dt = named_types[k].dtype;
      return true;
    }
  return false;
}

static bool is_spec_word(const FeToken *t) {
  for (size_t k = 0; k < sizeof spec_words / sizeof *spec_words; k++)
    if (fe_tok_is(t, spec_words[k])) return true;
  return false;
}

static bool is_type_start(Parser *p, const FeToken *t) {
  LoomDType dt = LOOM_INT32;
  return is_spec_word(t) || named_type(p, t, &dt);
}

static bool is_reserved(Parser *p, const FeToken *t) {
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (fe_tok_is(t, keywords[k])) return true;
  return is_type_start(p, t);
}

/* type = ("const" | "volatile" | "signed" | "unsigned" | "char" | "short" | "int" | "long" | "bool"
 *         | "float" | "double" | "void" | named-type)+
 * Returns 1 and the dtype (SN_VOID for void) when a type was parsed, 0 when not at a type, -1. */
static int parse_type(Parser *p, int *out) {
  FeToken *start = cur(p);
  int nsigned = 0, nunsigned = 0, nchar = 0, nshort = 0, nint = 0, nlong = 0, nbool = 0, nfloat = 0,
      ndouble = 0, nvoid = 0, nnamed = 0, any = 0;
  LoomDType named = LOOM_INT32;
  for (int guard = 0; guard < 64; guard++) {
    FeToken *t = cur(p);
    LoomDType dt = LOOM_INT32;
    if (fe_tok_is(t, "const") || fe_tok_is(t, "volatile")) {
    } else if (fe_tok_is(t, "signed")) nsigned++;
    else if (fe_tok_is(t, "unsigned")) nunsigned++;
    else if (fe_tok_is(t, "char")) nchar++;
    else if (fe_tok_is(t, "short")) nshort++;
    else if (fe_tok_is(t, "int")) nint++;
    else if (fe_tok_is(t, "long")) nlong++;
    else if (fe_tok_is(t, "bool")) nbool++;
    else if (fe_tok_is(t, "float")) nfloat++;
    else if (fe_tok_is(t, "double")) ndouble++;
    else if (fe_tok_is(t, "void")) nvoid++;
    else if (!nnamed && !(nsigned + nunsigned + nchar + nshort + nint + nlong + nbool + nfloat + ndouble + nvoid) &&
             named_type(p, t, &dt)) {
      nnamed++;
      named = dt;
    } else break;
    any++;
    advance(p);
  }
  if (!any) return 0;
  int kinds = (nchar > 0) + (nshort > 0) + (nbool > 0) + (nfloat > 0) + (ndouble > 0) + (nvoid > 0) + (nnamed > 0);
  bool sign = nsigned || nunsigned;
  if (kinds > 1 || nsigned + nunsigned > 1 || nlong > 2 || nint > 1 || nchar > 1 || nshort > 1 ||
      ((nbool || nfloat || nvoid || nnamed) && (sign || nlong || nint)) || (ndouble && (sign || nint || nlong > 1)) ||
      (nshort && nlong) || (nchar && (nint || nlong)))
    return ERR(start, "invalid combination of type specifiers");
  if (ndouble && nlong) return ERRU(start, "long double is not supported");
  int t;
  if (nnamed) t = named;
  else if (nvoid) t = SN_VOID;
  else if (nbool) t = LOOM_BOOL;
  else if (nfloat) t = LOOM_FLOAT32;
  else if (ndouble) t = LOOM_FLOAT64;
  else if (nchar) t = nunsigned ? LOOM_UINT8 : LOOM_INT8;
  else if (nshort) t = nunsigned ? LOOM_UINT16 : LOOM_INT16;
  else if (nlong) t = nunsigned ? LOOM_UINT64 : LOOM_INT64;
  else if (nint || sign) t = nunsigned ? LOOM_UINT32 : LOOM_INT32;
  else return ERR(start, "expected a type"); /* only const/volatile */
  if (is(p, "*")) return ERRU(cur(p), "pointers are not supported in snippets (use raw parameters)");
  if (is(p, "&")) return ERRU(cur(p), "references are not supported in snippets");
  *out = t;
  return 1;
}

/* ---- conversions ------------------------------------------------------------------------------ */
static LoomDType promote(LoomDType t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_UINT8: case LOOM_INT16: case LOOM_UINT16: return LOOM_INT32;
  case LOOM_FLOAT16: return LOOM_FLOAT32;
  default: return t;
  }
}

/* C++'s usual arithmetic conversions (long long = 64 bits; half computes as float). */
static LoomDType common_type(LoomDType a, LoomDType b) {
  a = promote(a);
  b = promote(b);
  if (a == b) return a;
  if (dtype_is_float(a) || dtype_is_float(b))
    return (a == LOOM_FLOAT64 || b == LOOM_FLOAT64) ? LOOM_FLOAT64 : LOOM_FLOAT32;
  bool ua = dtype_kind(a) == DK_UINT, ub = dtype_kind(b) == DK_UINT;
  if (ua == ub) return dtype_bits(a) >= dtype_bits(b) ? a : b;
  LoomDType u = ua ? a : b, s = ua ? b : a;
  if (dtype_bits(u) >= dtype_bits(s)) return u;
  return s;
}

/* An rvalue check: e must have a value. */
static int32_t value_of(Parser *p, int32_t e, const FeToken *t) {
  if (e < 0) return -1;
  if (p->m->exprs[e].dtype == SN_VOID) return ERR(t, "void value used in an expression");
  return e;
}

static int32_t conv(Parser *p, int32_t e, int dtype, const FeToken *t) {
  TRY(value_of(p, e, t));
  return ir_snippet_cast(p->m, e, (LoomDType)dtype, p->d);
}
static int32_t to_bool(Parser *p, int32_t e, const FeToken *t) { return conv(p, e, LOOM_BOOL, t); }
static LoomDType dt_of(Parser *p, int32_t e) { return (LoomDType)p->m->exprs[e].dtype; }

static const char *tname(int dt) { return ir_snippet_c_type_name(dt); }

/* A binary operator by its spelling; a and b are values. */
static int32_t binop(Parser *p, const char *op, int32_t a, int32_t b, const FeToken *t) {
  TRY(value_of(p, a, t));
  TRY(value_of(p, b, t));
  LoomDType ta = dt_of(p, a), tb = dt_of(p, b);
  if (!strcmp(op, "&&") || !strcmp(op, "||")) {
    int32_t x = to_bool(p, a, t), y;
    TRY(x);
    TRY(y = to_bool(p, b, t));
    return mk2(p, op[0] == '&' ? SE_LAND : SE_LOR, LOOM_BOOL, x, y);
  }
  if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
    if (dtype_is_float(ta) || dtype_is_float(tb))
      return ERR(t, "invalid operands to '%s' (have '%s' and '%s'): shifts need integers", op, tname(ta), tname(tb));
    LoomDType r = promote(ta);
    int32_t x = conv(p, a, r, t), y;
    TRY(x);
    TRY(y = conv(p, b, r, t));
    return mk_elem(p, op[0] == '<' ? LOOM_OP_LEFT_SHIFT : LOOM_OP_RIGHT_SHIFT, r, x, y);
  }
  LoomDType ct = common_type(ta, tb);
  int32_t x = conv(p, a, ct, t), y;
  TRY(x);
  TRY(y = conv(p, b, ct, t));
  static const struct { const char *s; LoomOp op; } cmp[] = {
      {"==", LOOM_OP_EQ}, {"!=", LOOM_OP_NE}, {"<", LOOM_OP_LT},
      {"<=", LOOM_OP_LE}, {">", LOOM_OP_GT}, {">=", LOOM_OP_GE}};
  for (size_t k = 0; k < sizeof cmp / sizeof *cmp; k++)
    if (!strcmp(op, cmp[k].s)) return mk_elem(p, cmp[k].op, LOOM_BOOL, x, y);
  if (!strcmp(op, "+")) return mk_elem(p, LOOM_OP_ADD, ct, x, y);
  if (!strcmp(op, "-")) return mk_elem(p, LOOM_OP_SUB, ct, x, y);
  if (!strcmp(op, "*")) return mk_elem(p, LOOM_OP_MUL, ct, x, y);
  if (!strcmp(op, "/")) return mk2(p, SE_DIV, ct, x, y);
  if (!strcmp(op, "%")) {
    if (dtype_is_float(ct))
      return ERR(t, "invalid operands to '%%' (have '%s' and '%s'): use fmod for floating point", tname(ta), tname(tb));
    return mk2(p, SE_REM, ct, x, y);
  }
  LoomOp bop = op[0] == '&' ? LOOM_OP_BITWISE_AND : op[0] == '|' ? LOOM_OP_BITWISE_OR : LOOM_OP_BITWISE_XOR;
  if (dtype_is_float(ct))
    return ERR(t, "invalid operands to '%s' (have '%s' and '%s'): bitwise operators need integers", op, tname(ta), tname(tb));
  return mk_elem(p, bop, ct, x, y);
}

/* ---- lvalues ---------------------------------------------------------------------------------- */
/* Checks that e (an SE_VAR or SE_LOAD just parsed) may be written; returns 0 or -1. */
static int check_lvalue(Parser *p, int32_t e, const FeToken *t) {
  const SnExpr *x = &p->m->exprs[e];
  if (x->kind != SE_VAR && x->kind != SE_LOAD) return ERR(t, "expression is not assignable");
  const SnVar *v = &p->m->vars[x->var];
  switch (v->kind) {
  case SV_IN: return ERR(t, "cannot assign to input parameter '%s' (only output parameters are writable)", v->name);
  case SV_RAW_IN: return ERR(t, "cannot write to raw input parameter '%s' (only output parameters are writable)", v->name);
  case SV_SPECIAL: return ERR(t, "cannot assign to '%s'", v->name);
  default: break;
  }
  if (v->is_const) return ERR(t, "cannot assign to const variable '%s'", v->name);
  return 0;
}

/* Writes value (converted) to the lvalue lhs. */
static int32_t write_to(Parser *p, int32_t lhs, int32_t value, const FeToken *t) {
  const SnExpr x = p->m->exprs[lhs];
  int32_t v = conv(p, value, p->m->vars[x.var].dtype, t);
  TRY(v);
  if (x.kind == SE_VAR) return mk_assign(p, x.var, v);
  return mk_store(p, x.var, x.src[0], v);
}

/* Makes an lvalue's index side-effect free and single-evaluation: for a[idx] with idx not a
 * variable or constant, *pre = (tmp = idx) and the returned lvalue is a[tmp]. */
static int32_t stable_lvalue(Parser *p, int32_t lhs, int32_t *pre) {
  *pre = -1;
  const SnExpr x = p->m->exprs[lhs];
  if (x.kind != SE_LOAD) return lhs;
  int k = p->m->exprs[x.src[0]].kind;
  if (k == SE_CONST || k == SE_VAR) return lhs;
  int32_t tmp = new_temp(p, LOOM_INT64);
  TRY(tmp);
  TRY(*pre = mk_assign(p, tmp, x.src[0]));
  int32_t idx = mk_var(p, tmp);
  TRY(idx);
  SnExpr l = blank_expr(SE_LOAD, x.dtype);
  l.var = x.var;
  l.src[0] = idx;
  return add_expr(p, &l);
}

/* lhs op= rhs (op "" for plain assignment). */
static int32_t assign_op(Parser *p, int32_t lhs, const char *op, int32_t rhs, const FeToken *t) {
  TRY(check_lvalue(p, lhs, t));
  if (!*op) return write_to(p, lhs, rhs, t);
  int32_t pre;
  TRY(lhs = stable_lvalue(p, lhs, &pre));
  int32_t v = binop(p, op, lhs, rhs, t);
  TRY(v);
  TRY(v = write_to(p, lhs, v, t));
  return pre >= 0 ? mk_comma(p, pre, v) : v;
}

/* ++x / --x (postfix: the old value). */
static int32_t incdec(Parser *p, int32_t lhs, bool inc, bool postfix, const FeToken *t) {
  TRY(check_lvalue(p, lhs, t));
  int32_t one = mk_const(p, LOOM_INT32, (Scalar){.i = 1});
  TRY(one);
  if (!postfix) return assign_op(p, lhs, inc ? "+" : "-", one, t);
  int32_t pre;
  TRY(lhs = stable_lvalue(p, lhs, &pre));
  LoomDType dt = dt_of(p, lhs);
  int32_t old = new_temp(p, dt), save, oldv, upd, r;
  TRY(old);
  TRY(save = mk_assign(p, old, lhs));
  TRY(oldv = mk_var(p, old));
  TRY(upd = binop(p, inc ? "+" : "-", oldv, one, t));
  TRY(upd = write_to(p, lhs, upd, t));
  TRY(oldv = mk_var(p, old));
  TRY(r = mk_comma(p, upd, oldv));
  TRY(r = mk_comma(p, save, r));
  return pre >= 0 ? mk_comma(p, pre, r) : r;
}

/* ---- expressions ------------------------------------------------------------------------------ */
static int32_t expr(Parser *p);
static int32_t assign(Parser *p);
static int32_t cast_expr(Parser *p);
static int32_t unary(Parser *p);

/* Math functions: C and CUDA spellings. A name with an 'f' suffix computes in float. */
typedef enum MathMode { MF_FLOAT, MF_PRED, MF_ABS, MF_MINMAX, MF_FMOD, MF_ROUND, MF_NO } MathMode;
typedef struct MathFn {
  const char *name;
  int op;
  int nargs;
  MathMode mode;
} MathFn;

static const MathFn math_fns[] = {
    {"sqrt", LOOM_OP_SQRT, 1, MF_FLOAT}, {"rsqrt", LOOM_OP_RSQRT, 1, MF_FLOAT}, {"cbrt", LOOM_OP_CBRT, 1, MF_FLOAT},
    {"exp", LOOM_OP_EXP, 1, MF_FLOAT}, {"exp2", LOOM_OP_EXP2, 1, MF_FLOAT}, {"expm1", LOOM_OP_EXPM1, 1, MF_FLOAT},
    {"log", LOOM_OP_LOG, 1, MF_FLOAT}, {"log2", LOOM_OP_LOG2, 1, MF_FLOAT}, {"log10", LOOM_OP_LOG10, 1, MF_FLOAT},
    {"log1p", LOOM_OP_LOG1P, 1, MF_FLOAT}, {"sin", LOOM_OP_SIN, 1, MF_FLOAT}, {"cos", LOOM_OP_COS, 1, MF_FLOAT},
    {"tan", LOOM_OP_TAN, 1, MF_FLOAT}, {"asin", LOOM_OP_ASIN, 1, MF_FLOAT}, {"acos", LOOM_OP_ACOS, 1, MF_FLOAT},
    {"atan", LOOM_OP_ATAN, 1, MF_FLOAT}, {"sinh", LOOM_OP_SINH, 1, MF_FLOAT}, {"cosh", LOOM_OP_COSH, 1, MF_FLOAT},
    {"tanh", LOOM_OP_TANH, 1, MF_FLOAT}, {"asinh", LOOM_OP_ASINH, 1, MF_FLOAT},
    {"acosh", LOOM_OP_ACOSH, 1, MF_FLOAT}, {"atanh", LOOM_OP_ATANH, 1, MF_FLOAT},
    {"floor", LOOM_OP_FLOOR, 1, MF_FLOAT}, {"ceil", LOOM_OP_CEIL, 1, MF_FLOAT},
    {"trunc", LOOM_OP_TRUNC, 1, MF_FLOAT}, {"rint", LOOM_OP_RINT, 1, MF_FLOAT},
    {"nearbyint", LOOM_OP_RINT, 1, MF_FLOAT}, {"fabs", LOOM_OP_ABS, 1, MF_FLOAT},
    {"round", LOOM_OP_TRUNC, 1, MF_ROUND},
    {"pow", LOOM_OP_POW, 2, MF_FLOAT}, {"atan2", LOOM_OP_ATAN2, 2, MF_FLOAT},
    {"hypot", LOOM_OP_HYPOT, 2, MF_FLOAT}, {"copysign", LOOM_OP_COPYSIGN, 2, MF_FLOAT},
    {"fmin", LOOM_OP_FMIN, 2, MF_FLOAT}, {"fmax", LOOM_OP_FMAX, 2, MF_FLOAT}, {"fmod", 0, 2, MF_FMOD},
    {"isnan", LOOM_OP_ISNAN, 1, MF_PRED}, {"isinf", LOOM_OP_ISINF, 1, MF_PRED},
    {"isfinite", LOOM_OP_ISFINITE, 1, MF_PRED},
    {"abs", LOOM_OP_ABS, 1, MF_ABS}, {"min", LOOM_OP_MINIMUM, 2, MF_MINMAX}, {"max", LOOM_OP_MAXIMUM, 2, MF_MINMAX},
    {"erf", 0, 1, MF_NO}, {"erfc", 0, 1, MF_NO}, {"erfinv", 0, 1, MF_NO}, {"erfcinv", 0, 1, MF_NO},
    {"erfcx", 0, 1, MF_NO}, {"lgamma", 0, 1, MF_NO}, {"tgamma", 0, 1, MF_NO}, {"fma", 0, 3, MF_NO},
    {"j0", 0, 1, MF_NO}, {"j1", 0, 1, MF_NO}, {"y0", 0, 1, MF_NO}, {"y1", 0, 1, MF_NO},
    {"exp10", 0, 1, MF_NO}, {"normcdf", 0, 1, MF_NO}, {"normcdfinv", 0, 1, MF_NO},
    {"remainder", 0, 2, MF_NO}, {"ldexp", 0, 2, MF_NO}, {"frexp", 0, 2, MF_NO}, {"modf", 0, 2, MF_NO},
    {"sincos", 0, 3, MF_NO}, {"signbit", 0, 1, MF_NO}, {"fdim", 0, 2, MF_NO}, {"logb", 0, 1, MF_NO},
    {"ilogb", 0, 1, MF_NO}, {"scalbn", 0, 2, MF_NO}, {"nextafter", 0, 2, MF_NO},
};

static const MathFn *find_math(const FeToken *t, bool *fsuffix) {
  *fsuffix = false;
  for (size_t k = 0; k < sizeof math_fns / sizeof *math_fns; k++)
    if (fe_tok_is(t, math_fns[k].name)) return &math_fns[k];
  if (t->len > 1 && t->loc[t->len - 1] == 'f') {
    FeToken u = *t;
    u.len--;
    for (size_t k = 0; k < sizeof math_fns / sizeof *math_fns; k++)
      if (fe_tok_is(&u, math_fns[k].name) && math_fns[k].mode != MF_ABS && math_fns[k].mode != MF_MINMAX &&
          math_fns[k].mode != MF_PRED) {
        *fsuffix = true;
        return &math_fns[k];
      }
  }
  return NULL;
}

/* The float type a C++ <cmath> overload computes in: float if every argument is float or half
 * (or the name has the 'f' suffix), else double. */
static LoomDType float_type(Parser *p, const int32_t *args, int n, bool fsuffix) {
  if (fsuffix) return LOOM_FLOAT32;
  for (int k = 0; k < n; k++) {
    LoomDType t = dt_of(p, args[k]);
    if (t != LOOM_FLOAT32 && t != LOOM_FLOAT16) return LOOM_FLOAT64;
  }
  return LOOM_FLOAT32;
}

static int32_t call_math(Parser *p, const MathFn *mf, bool fsuffix, int32_t *args, int nargs, const FeToken *t) {
  if (mf->mode == MF_NO)
    return ERRU(t, "'%.*s' is not supported: loom has no %s operation", t->len, t->loc, mf->name);
  if (nargs != mf->nargs)
    return ERR(t, "'%.*s' takes %d argument%s, %d given", t->len, t->loc, mf->nargs, mf->nargs == 1 ? "" : "s", nargs);
  for (int k = 0; k < nargs; k++) TRY(value_of(p, args[k], t));
  if (mf->mode == MF_ABS || mf->mode == MF_MINMAX) {
    LoomDType ct = nargs == 1 ? promote(dt_of(p, args[0])) : common_type(dt_of(p, args[0]), dt_of(p, args[1]));
    int32_t x = conv(p, args[0], ct, t), y = -1;
    TRY(x);
    if (nargs == 2) TRY(y = conv(p, args[1], ct, t));
    LoomOp op = (LoomOp)mf->op;
    if (mf->mode == MF_MINMAX && dtype_is_float(ct)) op = op == LOOM_OP_MINIMUM ? LOOM_OP_FMIN : LOOM_OP_FMAX;
    return mk_elem(p, op, ct, x, y);
  }
  LoomDType ft = float_type(p, args, nargs, fsuffix);
  int32_t x = conv(p, args[0], ft, t), y = -1;
  TRY(x);
  if (nargs == 2) TRY(y = conv(p, args[1], ft, t));
  if (mf->mode == MF_PRED) return mk_elem(p, (LoomOp)mf->op, LOOM_BOOL, x, -1);
  if (mf->mode == MF_FMOD) return mk2(p, SE_REM, ft, x, y);
  if (mf->mode == MF_ROUND) {
    /* round half away from zero: t = trunc(x); |x - t| >= 0.5 ? t + copysign(1, x) : t (exact) */
    int32_t v = new_temp(p, ft), set, xv, tr, d, ad, half, ge, one, sg, up, tr2, r;
    TRY(v);
    TRY(set = mk_assign(p, v, x));
    TRY(xv = mk_var(p, v));
    TRY(tr = mk_elem(p, LOOM_OP_TRUNC, ft, xv, -1));
    TRY(d = mk_elem(p, LOOM_OP_SUB, ft, xv, tr));
    TRY(ad = mk_elem(p, LOOM_OP_ABS, ft, d, -1));
    TRY(half = mk_const(p, ft, (Scalar){.f = 0.5}));
    TRY(ge = mk_elem(p, LOOM_OP_GE, LOOM_BOOL, ad, half));
    TRY(one = mk_const(p, ft, (Scalar){.f = 1.0}));
    TRY(sg = mk_elem(p, LOOM_OP_COPYSIGN, ft, one, xv));
    TRY(up = mk_elem(p, LOOM_OP_ADD, ft, tr, sg));
    TRY(tr2 = mk_elem(p, LOOM_OP_TRUNC, ft, xv, -1));
    SnExpr c = blank_expr(SE_COND, ft);
    c.src[0] = ge;
    c.src[1] = up;
    c.src[2] = tr2;
    TRY(r = add_expr(p, &c));
    return mk_comma(p, set, r);
  }
  return mk_elem(p, (LoomOp)mf->op, ft, x, y);
}

/* args = "(" (assign ("," assign)*)? ")" */
static int parse_args(Parser *p, int32_t *args, int max, int *nargs) {
  TRY(expect(p, "("));
  *nargs = 0;
  if (consume(p, ")")) return 0;
  for (;;) {
    if (*nargs >= max) return ERR(cur(p), "too many arguments (at most %d)", max);
    int32_t a = assign(p);
    TRY(a);
    args[(*nargs)++] = a;
    if (consume(p, ")")) return 0;
    TRY(expect(p, ","));
  }
}

enum { FE_MAX_ARGS = 32 };

/* call = ident args, of a preamble function or a math function */
static int32_t call(Parser *p, FeToken *name) {
  int32_t args[FE_MAX_ARGS];
  int nargs;
  TRY(parse_args(p, args, FE_MAX_ARGS, &nargs));
  for (int32_t f = 0; f < p->func; f++) {
    const SnFunc *fn = &p->m->funcs[f];
    if (fn->role != SF_HELPER || !fe_tok_is(name, fn->name)) continue;
    if (nargs != fn->nparam)
      return ERR(name, "'%s' takes %d argument%s, %d given", fn->name, fn->nparam, fn->nparam == 1 ? "" : "s", nargs);
    int32_t conv_args[FE_MAX_ARGS];
    for (int k = 0; k < nargs; k++) TRY(conv_args[k] = conv(p, args[k], p->m->vars[fn->var_begin + k].dtype, name));
    int32_t first = ir_snippet_add_list(p->m, conv_args, nargs, p->d);
    TRY(first);
    SnExpr e = blank_expr(SE_CALL, fn->ret_dtype);
    e.func = f;
    e.args_begin = first;
    e.nargs = nargs;
    int32_t h = 0;
    for (int k = 0; k < nargs; k++)
      if (p->m->exprs[conv_args[k]].height > h) h = p->m->exprs[conv_args[k]].height;
    if (h + 1 > SN_MAX_HEIGHT) return ERR(name, "expression too complex");
    return ir_snippet_add_expr(p->m, &e, p->d);
  }
  if (p->func < p->m->nfunc && p->m->funcs[p->func].role == SF_HELPER && fe_tok_is(name, p->m->funcs[p->func].name))
    return ERRU(name, "recursive calls are not supported ('%s' calls itself)", p->m->funcs[p->func].name);
  bool fsuffix;
  const MathFn *mf = find_math(name, &fsuffix);
  if (mf) return call_math(p, mf, fsuffix, args, nargs, name);
  return ERR(name, "undeclared function '%.*s'", name->len, name->loc);
}

/* A raw parameter: raw = ident ("[" expr "]" | "." "size" "(" ")") */
static int32_t raw_access(Parser *p, int32_t var, FeToken *name) {
  const SnVar *v = &p->m->vars[var];
  if (consume(p, "[")) {
    FeToken *t = cur(p);
    int32_t idx = expr(p);
    TRY(idx);
    TRY(value_of(p, idx, t));
    if (dtype_is_float(dt_of(p, idx)))
      return ERR(t, "array subscript is not an integer (it has type '%s')", tname(dt_of(p, idx)));
    TRY(idx = conv(p, idx, LOOM_INT64, t));
    TRY(expect(p, "]"));
    if (is(p, "[")) return ERR(cur(p), "raw parameter '%s' is indexed by one flat index only", v->name);
    SnExpr e = blank_expr(SE_LOAD, v->dtype);
    e.var = var;
    e.src[0] = idx;
    return add_expr(p, &e);
  }
  if (is(p, ".") && fe_tok_is(peek(p, 1), "size") && fe_tok_is(peek(p, 2), "(") && fe_tok_is(peek(p, 3), ")")) {
    p->pos += 4;
    SnExpr e = blank_expr(SE_ARRAY_SIZE, LOOM_INT64);
    e.var = var;
    return add_expr(p, &e);
  }
  return ERR(name, "raw parameter '%s' must be indexed, as in %s[i]", v->name, v->name);
}

/* An unknown name inside loop_prep / after_loop: the index `i` and the per-point params exist only
 * in the operation (CuPy's loop body); say so rather than "undeclared". */
static int32_t unavailable(Parser *p, const FeToken *t) {
  if (fe_tok_is(t, "i"))
    return ERR(t, "'i' (the index of the current point) is not available in %s; use it in the operation",
               p->region);
  const FeParamList *ls[2] = {p->hide_in, p->hide_out};
  for (int k = 0; k < 2; k++)
    for (int32_t j = 0; ls[k] && j < ls[k]->n; j++)
      if (!ls[k]->params[j].raw && fe_tok_is(t, ls[k]->params[j].name))
        return ERR(t,
                   "parameter '%.*s' is not available in %s: it is one element per point, used in the operation "
                   "(%s sees raw parameters, _ind.size() and the variables loop_prep declares)",
                   t->len, t->loc, p->region, p->region);
  return ERR(t, "undeclared identifier '%.*s'", t->len, t->loc);
}

/* primary = "(" expr ")" | number | "true" | "false"
 *         | "static_cast" "<" type ">" "(" expr ")" | simple-type "(" expr ")"
 *         | "_ind" "." "size" "(" ")" | ident args | ident raw-access | ident */
static int32_t primary(Parser *p) {
  FeToken *t = cur(p);
  if (consume(p, "(")) {
    TRY(enter(p));
    int32_t e = expr(p);
    p->depth--;
    TRY(e);
    TRY(expect(p, ")"));
    return e;
  }
  if (t->kind == FT_NUM) {
    advance(p);
    return mk_const(p, (LoomDType)t->dtype, t->value);
  }
  if (t->kind == FT_EOF) return ERR(t, "expected an expression before end of input");
  if (t->kind != FT_IDENT) return ERR(t, "expected an expression before '%.*s'", t->len, t->loc);
  if (fe_tok_is(t, "true") || fe_tok_is(t, "false")) {
    advance(p);
    return mk_const(p, LOOM_BOOL, (Scalar){.u = fe_tok_is(t, "true")});
  }
  if (fe_tok_is(t, "static_cast")) {
    advance(p);
    TRY(expect(p, "<"));
    int dt;
    int r = parse_type(p, &dt);
    TRY(r);
    if (r == 0) return ERR(cur(p), "expected a type in static_cast<...>");
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    TRY(expect(p, ">"));
    TRY(expect(p, "("));
    FeToken *et = cur(p);
    int32_t e = expr(p);
    TRY(e);
    TRY(expect(p, ")"));
    return conv(p, e, dt, et);
  }
  if (fe_tok_is(t, "reinterpret_cast") || fe_tok_is(t, "const_cast") || fe_tok_is(t, "dynamic_cast"))
    return ERRU(t, "'%.*s' is not supported", t->len, t->loc);
  if (is_type_start(p, t)) {
    /* functional cast: float(x), T(x) */
    int dt;
    int r = parse_type(p, &dt);
    TRY(r);
    if (!is(p, "(")) return ERR(cur(p), "expected '(' after a type in an expression (a cast is written float(x) or (float)x)");
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    advance(p);
    FeToken *et = cur(p);
    int32_t e = expr(p);
    TRY(e);
    TRY(expect(p, ")"));
    return conv(p, e, dt, et);
  }
  if (fe_tok_is(t, "_ind")) {
    if (fe_tok_is(peek(p, 1), ".") && fe_tok_is(peek(p, 2), "size") && fe_tok_is(peek(p, 3), "(") &&
        fe_tok_is(peek(p, 4), ")")) {
      int32_t v = lookup(p, t, 0);
      if (v < 0) return ERR(t, "_ind.size() is only available in the operation of an ElementwiseKernel");
      p->pos += 5;
      return mk_var(p, v);
    }
    return ERRU(t, "only _ind.size() is supported on _ind");
  }
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (fe_tok_is(t, keywords[k])) return ERR(t, "expected an expression before '%.*s'", t->len, t->loc);
  advance(p);
  if (is(p, "(")) return call(p, t);
  int32_t v = lookup(p, t, 0);
  if (v < 0 && p->region) return unavailable(p, t);
  if (v < 0) return ERR(t, "undeclared identifier '%.*s'", t->len, t->loc);
  int k = p->m->vars[v].kind;
  if (k == SV_RAW_IN || k == SV_RAW_OUT) return raw_access(p, v, t);
  if (is(p, "[")) return ERR(cur(p), "'%s' is not a raw parameter and cannot be indexed; declare it 'raw %s %s'",
                            p->m->vars[v].name, tname(p->m->vars[v].dtype), p->m->vars[v].name);
  return mk_var(p, v);
}

/* postfix = primary ("++" | "--")* */
static int32_t postfix(Parser *p) {
  int32_t e = primary(p);
  TRY(e);
  for (int guard = 0; guard < 1000; guard++) {
    FeToken *t = cur(p);
    if (consume(p, "++")) TRY(e = incdec(p, e, true, true, t));
    else if (consume(p, "--")) TRY(e = incdec(p, e, false, true, t));
    else if (is(p, "[")) return ERR(t, "only raw parameters can be indexed");
    else if (is(p, ".") || is(p, "->")) return ERRU(t, "member access is not supported here");
    else return e;
  }
  return ERR(cur(p), "too many postfix operators");
}

/* unary = ("+" | "-" | "!" | "~") cast | ("++" | "--") unary | postfix */
static int32_t unary(Parser *p) {
  FeToken *t = cur(p);
  TRY(enter(p));
  int32_t r;
  if (consume(p, "+") || consume(p, "-") || consume(p, "~")) {
    int32_t e = cast_expr(p);
    if (e >= 0 && value_of(p, e, t) >= 0) {
      LoomDType pt = promote(dt_of(p, e));
      e = conv(p, e, pt, t);
      if (e < 0) r = -1;
      else if (t->loc[0] == '+') r = e;
      else if (t->loc[0] == '-') r = mk_elem(p, LOOM_OP_NEG, pt, e, -1);
      else if (dtype_is_float(pt)) r = ERR(t, "invalid operand to '~' (have '%s')", tname(pt));
      else r = mk_elem(p, LOOM_OP_BITWISE_NOT, pt, e, -1);
    } else {
      r = -1;
    }
  } else if (consume(p, "!")) {
    int32_t e = cast_expr(p);
    r = e < 0 ? -1 : to_bool(p, e, t);
    if (r >= 0) r = mk_elem(p, LOOM_OP_LOGICAL_NOT, LOOM_BOOL, r, -1);
  } else if (consume(p, "++") || consume(p, "--")) {
    int32_t e = unary(p);
    r = e < 0 ? -1 : incdec(p, e, t->loc[0] == '+', false, t);
  } else if (fe_tok_is(t, "sizeof")) {
    r = ERRU(t, "sizeof is not supported");
  } else if (is(p, "*") || is(p, "&")) {
    r = ERRU(t, "pointers are not supported in snippets (use raw parameters)");
  } else {
    r = postfix(p);
  }
  p->depth--;
  return r;
}

/* cast = "(" type ")" cast | unary */
static int32_t cast_expr(Parser *p) {
  if (is(p, "(") && is_type_start(p, peek(p, 1))) {
    FeToken *t = cur(p);
    advance(p);
    int dt;
    int r = parse_type(p, &dt);
    TRY(r);
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    TRY(expect(p, ")"));
    TRY(enter(p));
    FeToken *et = cur(p);
    int32_t e = cast_expr(p);
    p->depth--;
    TRY(e);
    return conv(p, e, dt, et);
  }
  return unary(p);
}

/* Binary operator levels, lowest first (C precedence); each level is left-associative:
 * level = next (op next)*. */
static const char *const bin_levels[][7] = {
    {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<", "<=", ">", ">="},
    {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
};
enum { NLEVELS = sizeof bin_levels / sizeof *bin_levels };

static int32_t binary(Parser *p, int level) {
  if (level == NLEVELS) return cast_expr(p);
  int32_t e = binary(p, level + 1);
  TRY(e);
  for (;;) {
    FeToken *t = cur(p);
    const char *op = NULL;
    for (int k = 0; k < 7 && bin_levels[level][k]; k++)
      if (fe_tok_is(t, bin_levels[level][k])) op = bin_levels[level][k];
    if (!op) return e;
    advance(p);
    int32_t r = binary(p, level + 1);
    TRY(r);
    TRY(e = binop(p, op, e, r, t));
  }
}

/* conditional = logor ("?" expr ":" conditional)? */
static int32_t conditional(Parser *p) {
  int32_t c = binary(p, 0);
  TRY(c);
  FeToken *t = cur(p);
  if (!consume(p, "?")) return c;
  TRY(enter(p));
  int32_t a = expr(p), b;
  if (a >= 0 && expect(p, ":") >= 0) b = conditional(p);
  else b = -1;
  p->depth--;
  TRY(a);
  TRY(b);
  TRY(c = to_bool(p, c, t));
  TRY(value_of(p, a, t));
  TRY(value_of(p, b, t));
  LoomDType ta = dt_of(p, a), tb = dt_of(p, b);
  LoomDType ct = ta == tb ? ta : common_type(ta, tb);
  TRY(a = conv(p, a, ct, t));
  TRY(b = conv(p, b, ct, t));
  SnExpr e = blank_expr(SE_COND, ct);
  e.src[0] = c;
  e.src[1] = a;
  e.src[2] = b;
  return add_expr(p, &e);
}

/* assign = conditional (("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=")
 *          assign)? */
static int32_t assign(Parser *p) {
  int32_t lhs = conditional(p);
  TRY(lhs);
  FeToken *t = cur(p);
  static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    if (!fe_tok_is(t, ops[k])) continue;
    advance(p);
    TRY(enter(p));
    int32_t rhs = assign(p);
    p->depth--;
    TRY(rhs);
    char op[4] = {0};
    memcpy(op, ops[k], strlen(ops[k]) - 1);
    return assign_op(p, lhs, op, rhs, t);
  }
  return lhs;
}

/* expr = assign ("," assign)* */
static int32_t expr(Parser *p) {
  int32_t e = assign(p);
  TRY(e);
  while (consume(p, ",")) {
    int32_t r = assign(p);
    TRY(r);
    TRY(e = mk_comma(p, e, r));
  }
  return e;
}

/* ---- statements ------------------------------------------------------------------------------- */
static int32_t stmt(Parser *p);

static int expect_semi(Parser *p) {
  if (consume(p, ";")) return 0;
  if (p->lenient_end && cur(p)->kind == FT_EOF && p->depth <= 1) return 0;
  return expect(p, ";");
}

static int32_t block_of(Parser *p, const int32_t *items, int32_t n) {
  int32_t first = ir_snippet_add_list(p->m, items, n, p->d);
  TRY(first);
  int32_t s = new_stmt(p, SS_BLOCK, -1);
  TRY(s);
  p->m->stmts[s].list_begin = first;
  p->m->stmts[s].nlist = n;
  return s;
}

/* A growable list of statement indices in the arena. */
typedef struct StmtList {
  int32_t *v;
  int32_t n, cap;
} StmtList;

static int list_push(Parser *p, StmtList *l, int32_t s) {
  if (l->n == l->cap) {
    int32_t nc = l->cap ? l->cap * 2 : 16;
    if (nc > SN_MAX_NODES) return ERR(cur(p), "too many statements");
    int32_t *nv = arena_alloc(p->a, (size_t)nc * sizeof *nv);
    if (!nv) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory (snippet statements)"), -1;
    if (l->n) memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
    l->v = nv;
    l->cap = nc;
  }
  l->v[l->n++] = s;
  return 0;
}

/* declaration = type declarator ("," declarator)* ";"
 * declarator = ident ("=" assign)?
 * Appends one SS_DECL per declarator to l. */
static int declaration(Parser *p, StmtList *l) {
  FeToken *tt = cur(p);
  bool is_const = false;
  for (int k = 0; k < 8 && p->pos + k < p->ntok; k++) {
    const FeToken *q = peek(p, k);
    if (fe_tok_is(q, "const")) is_const = true;
    if (!is_spec_word(q)) break;
  }
  int dt;
  int r = parse_type(p, &dt);
  TRY(r);
  if (dt == SN_VOID) return ERR(tt, "variable declared void");
  for (int guard = 0; guard < 100000; guard++) {
    FeToken *name = cur(p);
    if (name->kind != FT_IDENT || is_reserved(p, name)) {
      if (name->kind == FT_EOF) return ERR(name, "expected a variable name before end of input");
      return ERR(name, "expected a variable name before '%.*s'", name->len, name->loc);
    }
    advance(p);
    if (is(p, "[")) return ERRU(cur(p), "local arrays are not supported in snippets");
    if (is(p, "(")) return ERRU(cur(p), "functions can only be defined in the preamble");
    if (lookup(p, name, p->block_start) >= 0) return ERR(name, "redefinition of '%.*s'", name->len, name->loc);
    int32_t init = -1;
    if (consume(p, "=")) {
      FeToken *it = cur(p);
      TRY(init = assign(p));
      TRY(init = conv(p, init, dt, it));
    } else if (is_const) {
      return ERR(name, "const variable '%.*s' must be initialized", name->len, name->loc);
    }
    char *nm = tok_str(p, name);
    if (!nm) return -1;
    /* loop_prep's top-level variables are the worker state (visible in operation and after_loop) */
    int32_t v = new_var(p, nm, p->state_decls && p->top_decl ? SV_STATE : SV_LOCAL, dt, is_const);
    TRY(v);
    TRY(push_name(p, name->loc, name->len, v)); /* after the initializer: `int x = x;` sees the outer x */
    int32_t s = new_stmt(p, SS_DECL, init);
    TRY(s);
    p->m->stmts[s].var = v;
    TRY(list_push(p, l, s));
    if (consume(p, ",")) continue;
    return expect_semi(p);
  }
  return ERR(cur(p), "too many declarators");
}

/* compound = stmt* "}" (the "{" already consumed); its own scope */
static int32_t compound(Parser *p) {
  int32_t save_n = p->nscope, save_start = p->block_start;
  p->block_start = p->nscope;
  StmtList l = {0};
  int32_t r = 0;
  while (!is(p, "}")) {
    if (cur(p)->kind == FT_EOF) {
      r = ERR(cur(p), "expected '}' before end of input");
      break;
    }
    if (is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
      if ((r = declaration(p, &l)) < 0) break;
      continue;
    }
    int32_t s = stmt(p);
    if (s < 0 || (r = list_push(p, &l, s)) < 0) {
      r = -1;
      break;
    }
  }
  p->nscope = save_n;
  p->block_start = save_start;
  TRY(r);
  advance(p); /* "}" */
  return block_of(p, l.v, l.n);
}

/* A statement in its own scope (the body of if/for/while): a declaration there is a block. */
static int32_t sub_stmt(Parser *p) {
  if (is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
    int32_t save_n = p->nscope, save_start = p->block_start;
    p->block_start = p->nscope;
    StmtList l = {0};
    int r = declaration(p, &l);
    p->nscope = save_n;
    p->block_start = save_start;
    TRY(r);
    return block_of(p, l.v, l.n);
  }
  return stmt(p);
}

static int32_t cond_expr(Parser *p) {
  TRY(expect(p, "("));
  FeToken *t = cur(p);
  int32_t c = expr(p);
  TRY(c);
  TRY(c = to_bool(p, c, t));
  TRY(expect(p, ")"));
  return c;
}

/* stmt = "return" expr? ";" | "if" "(" expr ")" stmt ("else" stmt)? | "while" "(" expr ")" stmt
 *      | "do" stmt "while" "(" expr ")" ";" | "for" "(" (declaration | expr? ";") expr? ";" expr? ")" stmt
 *      | "break" ";" | "continue" ";" | "{" compound | ";" | expr ";" */
static int32_t stmt_inner(Parser *p) {
  FeToken *t = cur(p);
  if (consume(p, "{")) return compound(p);
  if (consume(p, ";")) return block_of(p, NULL, 0);
  if (fe_tok_is(t, "return")) {
    advance(p);
    if (!p->returns_ok) return ERR(t, "return is not allowed here (only in preamble functions)");
    int32_t e = -1;
    if (!is(p, ";")) {
      FeToken *et = cur(p);
      TRY(e = expr(p));
      if (p->ret_dtype == SN_VOID) return ERR(et, "void function should not return a value");
      TRY(e = conv(p, e, p->ret_dtype, et));
    } else if (p->ret_dtype != SN_VOID) {
      return ERR(t, "non-void function should return a value");
    }
    TRY(expect_semi(p));
    return new_stmt(p, SS_RETURN, e);
  }
  if (fe_tok_is(t, "if")) {
    advance(p);
    int32_t c = cond_expr(p), a, b = -1;
    TRY(c);
    TRY(a = sub_stmt(p));
    if (fe_tok_is(cur(p), "else")) {
      advance(p);
      TRY(b = sub_stmt(p));
    }
    int32_t s = new_stmt(p, SS_IF, c);
    TRY(s);
    p->m->stmts[s].body[0] = a;
    p->m->stmts[s].body[1] = b;
    return s;
  }
  if (fe_tok_is(t, "while")) {
    advance(p);
    int32_t c = cond_expr(p), b;
    TRY(c);
    p->loops++;
    b = sub_stmt(p);
    p->loops--;
    TRY(b);
    int32_t s = new_stmt(p, SS_LOOP, c);
    TRY(s);
    p->m->stmts[s].body[0] = b;
    return s;
  }
  if (fe_tok_is(t, "do")) {
    advance(p);
    p->loops++;
    int32_t b = sub_stmt(p);
    p->loops--;
    TRY(b);
    if (!fe_tok_is(cur(p), "while")) return ERR(cur(p), "expected 'while' after the body of 'do'");
    advance(p);
    int32_t c = cond_expr(p);
    TRY(c);
    TRY(expect_semi(p));
    int32_t s = new_stmt(p, SS_LOOP, c);
    TRY(s);
    p->m->stmts[s].body[0] = b;
    p->m->stmts[s].do_while = 1;
    return s;
  }
  if (fe_tok_is(t, "for")) {
    advance(p);
    TRY(expect(p, "("));
    int32_t save_n = p->nscope, save_start = p->block_start;
    p->block_start = p->nscope;
    StmtList l = {0};
    int32_t r = 0, c = -1, step = -1, body = -1;
    if (is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
      r = declaration(p, &l);
    } else if (!consume(p, ";")) {
      int32_t e = expr(p);
      if (e < 0 || (r = expect(p, ";")) < 0) r = -1;
      else {
        int32_t s = new_stmt(p, SS_EXPR, e);
        r = s < 0 ? -1 : list_push(p, &l, s);
      }
    }
    if (r >= 0 && !is(p, ";")) {
      FeToken *ct = cur(p);
      c = expr(p);
      if (c >= 0) c = to_bool(p, c, ct);
      if (c < 0) r = -1;
    }
    if (r >= 0) r = expect(p, ";");
    if (r >= 0 && !is(p, ")")) {
      step = expr(p);
      if (step < 0) r = -1;
    }
    if (r >= 0) r = expect(p, ")");
    if (r >= 0) {
      p->loops++;
      body = sub_stmt(p);
      p->loops--;
      if (body < 0) r = -1;
    }
    p->nscope = save_n;
    p->block_start = save_start;
    TRY(r);
    int32_t s = new_stmt(p, SS_LOOP, c);
    TRY(s);
    p->m->stmts[s].body[0] = body;
    p->m->stmts[s].step = step;
    TRY(list_push(p, &l, s));
    return block_of(p, l.v, l.n);
  }
  if (fe_tok_is(t, "break") || fe_tok_is(t, "continue")) {
    advance(p);
    if (!p->loops) return ERR(t, "'%.*s' outside a loop", t->len, t->loc);
    TRY(expect_semi(p));
    return new_stmt(p, t->loc[0] == 'b' ? SS_BREAK : SS_CONTINUE, -1);
  }
  if (fe_tok_is(t, "else")) return ERR(t, "'else' without a previous 'if'");
  if (fe_tok_is(t, "switch") || fe_tok_is(t, "goto") || fe_tok_is(t, "case") || fe_tok_is(t, "struct") ||
      fe_tok_is(t, "typedef"))
    return ERRU(t, "'%.*s' is not supported in snippets", t->len, t->loc);
  int32_t e = expr(p);
  TRY(e);
  TRY(expect_semi(p));
  return new_stmt(p, SS_EXPR, e);
}

static int32_t stmt(Parser *p) {
  TRY(enter(p));
  int32_t r = stmt_inner(p);
  p->depth--;
  return r;
}

/* ---- functions and entry points ---------------------------------------------------------------- */
static int32_t begin_func(Parser *p, const char *name, int role, int ret) {
  SnFunc f = {0};
  f.name = name;
  f.role = (uint8_t)role;
  f.ret_dtype = (uint8_t)ret;
  f.var_begin = p->m->nvar;
  f.body = -1;
  int32_t r = ir_snippet_add_func(p->m, &f, p->d);
  TRY(r);
  p->func = r;
  p->ret_dtype = (uint8_t)ret;
  p->nscope = 0;
  p->block_start = 0;
  p->loops = 0;
  p->depth = 0;
  return r;
}

/* Parses statements until EOF into the current function's body (the top level shares the
 * parameters' scope, as the operation shares the loop body with CuPy's element variables). */
static int parse_body(Parser *p) {
  StmtList l = {0};
  while (cur(p)->kind != FT_EOF) {
    if (is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
      p->depth = 1;
      p->top_decl = true;
      int r = declaration(p, &l);
      p->top_decl = false;
      TRY(r);
      p->depth = 0;
      continue;
    }
    if (is(p, "}")) return ERR(cur(p), "unexpected '}'");
    int32_t s = stmt(p);
    TRY(s);
    TRY(list_push(p, &l, s));
  }
  int32_t b = block_of(p, l.v, l.n);
  TRY(b);
  p->m->funcs[p->func].body = b;
  return 0;
}

static LoomStatus lex(Parser *p, const FeSource *src) {
  p->src = src;
  p->pos = 0;
  return fe_tokenize(p->a, src, &p->tok, &p->ntok, p->d);
}

/* preamble = (qualifier* type ident "(" (type ident ("," type ident)*)? ")" "{" compound)* */
static int parse_preamble(Parser *p) {
  while (cur(p)->kind != FT_EOF) {
    for (int guard = 0; guard < 16; guard++) {
      const FeToken *q = cur(p);
      if (fe_tok_is(q, "__device__") || fe_tok_is(q, "__forceinline__") || fe_tok_is(q, "inline") ||
          fe_tok_is(q, "static") || fe_tok_is(q, "__host__") || fe_tok_is(q, "__inline__") ||
          fe_tok_is(q, "__noinline__"))
        advance(p);
      else break;
    }
    FeToken *tt = cur(p);
    if (fe_tok_is(tt, "template")) return ERRU(tt, "templates are not supported in the preamble");
    if (fe_tok_is(tt, "__global__")) return ERRU(tt, "__global__ functions are not supported in the preamble (use RawKernel)");
    int ret;
    int r = parse_type(p, &ret);
    TRY(r);
    if (r == 0) {
      if (tt->kind == FT_EOF) return ERR(tt, "expected a function definition");
      return ERR(tt, "expected a function definition (a return type) before '%.*s'", tt->len, tt->loc);
    }
    FeToken *name = cur(p);
    if (name->kind != FT_IDENT || is_reserved(p, name)) return ERR(name, "expected a function name");
    advance(p);
    if (!is(p, "(")) return ERRU(cur(p), "only function definitions are supported in the preamble");
    advance(p);
    for (int32_t f = 0; f < p->m->nfunc; f++)
      if (fe_tok_is(name, p->m->funcs[f].name))
        return ERRU(name, "redefinition of '%.*s' (overloading is not supported)", name->len, name->loc);
    char *nm = tok_str(p, name);
    if (!nm) return -1;
    TRY(begin_func(p, nm, SF_HELPER, ret));
    p->returns_ok = true;
    p->lenient_end = false;
    int32_t nparam = 0;
    if (fe_tok_is(cur(p), "void") && fe_tok_is(peek(p, 1), ")")) advance(p);
    while (!consume(p, ")")) {
      if (nparam > 0) TRY(expect(p, ","));
      if (nparam >= FE_MAX_ARGS) return ERR(cur(p), "too many parameters (at most %d)", FE_MAX_ARGS);
      int pt;
      FeToken *ptok = cur(p);
      int pr = parse_type(p, &pt);
      TRY(pr);
      if (pr == 0) return ERR(ptok, "expected a parameter type");
      if (pt == SN_VOID) return ERR(ptok, "parameter declared void");
      FeToken *pn = cur(p);
      if (pn->kind != FT_IDENT || is_reserved(p, pn)) return ERR(pn, "expected a parameter name");
      advance(p);
      if (lookup(p, pn, 0) >= 0) return ERR(pn, "redefinition of parameter '%.*s'", pn->len, pn->loc);
      char *pnm = tok_str(p, pn);
      if (!pnm) return -1;
      int32_t v = new_var(p, pnm, SV_PARAM, pt, false);
      TRY(v);
      TRY(push_name(p, pn->loc, pn->len, v));
      nparam++;
    }
    p->m->funcs[p->func].nparam = nparam;
    if (is(p, ";")) return ERRU(cur(p), "function declarations without a body are not supported");
    TRY(expect(p, "{"));
    int32_t body = compound(p); /* its own scope: a local may shadow a parameter */
    TRY(body);
    p->m->funcs[p->func].body = body;
    p->func = p->m->nfunc; /* no function is being defined */
  }
  return 0;
}

static LoomStatus parse_source(Parser *p, const char *kernel, const char *part, const char *text, int (*fn)(Parser *)) {
  FeSource *src = arena_alloc(p->a, sizeof *src);
  if (!src) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  src->kernel = kernel;
  src->part = part;
  src->text = text ? text : "";
  LoomStatus st = lex(p, src);
  if (st) return st;
  if (fn(p) < 0) return p->d->status ? p->d->status : diag_error(p->d, LOOM_ERR_INTERNAL, "snippet parser failed without a message");
  return LOOM_OK;
}

/* ---- parameter lists --------------------------------------------------------------------------- */
/* NumPy dtype names as numpy.dtype() takes them (CuPy resolves parameter types that way). */
static const NamedType numpy_types[] = {
    {"bool", LOOM_BOOL}, {"bool_", LOOM_BOOL}, {"int8", LOOM_INT8}, {"int16", LOOM_INT16},
    {"int32", LOOM_INT32}, {"int64", LOOM_INT64}, {"uint8", LOOM_UINT8}, {"uint16", LOOM_UINT16},
    {"uint32", LOOM_UINT32}, {"uint64", LOOM_UINT64}, {"float16", LOOM_FLOAT16}, {"float32", LOOM_FLOAT32},
    {"float64", LOOM_FLOAT64}, {"half", LOOM_FLOAT16}, {"single", LOOM_FLOAT32}, {"double", LOOM_FLOAT64},
    {"float", LOOM_FLOAT64}, {"int", LOOM_INT64}, {"long", LOOM_INT64}, {"longlong", LOOM_INT64},
    {"short", LOOM_INT16}, {"byte", LOOM_INT8}, {"ubyte", LOOM_UINT8}, {"ushort", LOOM_UINT16},
    {"uint", LOOM_UINT64}, {"ulong", LOOM_UINT64}, {"ulonglong", LOOM_UINT64}, {"intc", LOOM_INT32},
    {"uintc", LOOM_UINT32}, {"intp", LOOM_INT64}, {"uintp", LOOM_UINT64}, {"int_", LOOM_INT64},
    {"float_", LOOM_FLOAT64}, {"longdouble", LOOM_FLOAT64},
};

static int parse_param_list(Parser *p, FeParamList *out) {
  StmtList dummy = {0};
  (void)dummy;
  int32_t cap = 0;
  out->n = 0;
  out->params = NULL;
  if (cur(p)->kind == FT_EOF) return 0;
  for (;;) {
    FeToken *t1 = cur(p);
    bool raw = false;
    if (fe_tok_is(t1, "raw") && peek(p, 1)->kind == FT_IDENT && peek(p, 2)->kind == FT_IDENT) {
      raw = true;
      advance(p);
      t1 = cur(p);
    }
    FeToken *t2 = peek(p, 1);
    if (t1->kind != FT_IDENT) return ERR(t1, "expected a parameter type (as in 'float32 x')");
    if (t2->kind != FT_IDENT) return ERR(t2, "expected a parameter name after the type '%.*s'", t1->len, t1->loc);
    FeParam prm = {0};
    prm.raw = raw;
    prm.dtype = LOOM_INT32;
    bool found = false;
    for (size_t k = 0; k < sizeof numpy_types / sizeof *numpy_types; k++)
      if (fe_tok_is(t1, numpy_types[k].name)) {
        prm.dtype = numpy_types[k].dtype;
        found = true;
      }
    if (!found) {
      if (t1->len != 1) return ERR(t1, "unknown type '%.*s' (a NumPy dtype name like float32, or a one-letter type placeholder like T)", t1->len, t1->loc);
      prm.placeholder = true;
    }
    if (is_reserved(p, t2) || fe_tok_is(t2, "i") || fe_tok_is(t2, "_ind") || fe_tok_is(t2, "raw"))
      return ERR(t2, "'%.*s' cannot be used as a parameter name", t2->len, t2->loc);
    for (int32_t k = 0; k < out->n; k++)
      if (fe_tok_is(t2, out->params[k].name)) return ERR(t2, "duplicate parameter name '%.*s'", t2->len, t2->loc);
    if (!(prm.type_name = tok_str(p, t1)) || !(prm.name = tok_str(p, t2))) return -1;
    p->pos += 2;
    if (out->n == cap) {
      int32_t nc = cap ? cap * 2 : 8;
      if (nc > 4096) return ERR(t2, "too many parameters");
      FeParam *np = arena_alloc(p->a, (size_t)nc * sizeof *np);
      if (!np) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory (parameters)"), -1;
      if (out->n) memcpy(np, out->params, (size_t)out->n * sizeof *np);
      out->params = np;
      cap = nc;
    }
    out->params[out->n++] = prm;
    if (cur(p)->kind == FT_EOF) return 0;
    if (!consume(p, ",")) return ERR(cur(p), "expected ',' between parameters (as in 'float32 x, float32 y')");
  }
}

LoomStatus fe_parse_params(Arena *a, const char *kernel, const char *part, const char *text, FeParamList *out,
                           Diag *d) {
  if (!a || !out || !d) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fe_parse_params: null argument");
  out->n = 0;
  out->params = NULL;
  Parser pv = {0}, *p = &pv;
  p->a = a;
  p->d = d;
  FeSource *src = arena_alloc(a, sizeof *src);
  if (!src) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  src->kernel = kernel ? kernel : "kernel";
  src->part = part ? part : "params";
  src->text = text ? text : "";
  LoomStatus st = lex(p, src);
  if (st) return st;
  if (parse_param_list(p, out) < 0) {
    out->n = 0;
    out->params = NULL;
    return d->status ? d->status : LOOM_ERR_INVALID_ARGUMENT;
  }
  return LOOM_OK;
}

/* ---- kernels ----------------------------------------------------------------------------------- */
static bool valid_name(const char *s) {
  if (!s || !*s) return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (c != s && *c >= '0' && *c <= '9')))
      return false;
  return true;
}

/* Resolves a parameter's dtype through the binding. */
static LoomStatus param_dtype(Parser *p, const char *kernel, const FeParam *prm, LoomDType *dt) {
  if (!prm->placeholder) {
    *dt = prm->dtype;
    return LOOM_OK;
  }
  for (int32_t k = 0; k < p->bind.n; k++)
    if (p->bind.names && p->bind.names[k] && !strcmp(p->bind.names[k], prm->type_name)) {
      if ((unsigned)p->bind.dtypes[k] >= LOOM_DTYPE_COUNT)
        return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "%s: type placeholder '%s' bound to an invalid dtype",
                          kernel, prm->type_name);
      if (dtype_is_complex(p->bind.dtypes[k]) || p->bind.dtypes[k] == LOOM_BFLOAT16)
        return diag_error(p->d, LOOM_ERR_UNSUPPORTED,
                          "%s: type placeholder '%s' bound to %s: kernel snippets do not support bfloat16 or complex "
                          "dtypes yet (use loom's array operations for them)",
                          kernel, prm->type_name, loom_dtype_name(p->bind.dtypes[k]));
      *dt = p->bind.dtypes[k];
      return LOOM_OK;
    }
  return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT,
                    "%s: type placeholder '%s' of parameter '%s' is not bound (pass an argument that fixes it)",
                    kernel, prm->type_name, prm->name);
}

static LoomStatus check_spec_common(Parser *p, const char *name, const FeParamList *in, const FeParamList *out) {
  if (!valid_name(name))
    return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "kernel name '%s' is not a C identifier", name ? name : "(null)");
  if ((in->n && !in->params) || (out->n && !out->params) || in->n < 0 || out->n < 0)
    return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "%s: bad parameter list", name);
  for (int32_t k = 0; k < p->bind.n; k++)
    if (!p->bind.names || !p->bind.dtypes || !valid_name(p->bind.names[k]))
      return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "%s: bad type binding", name);
  for (int32_t k = 0; k < out->n; k++)
    for (int32_t j = 0; j < in->n; j++)
      if (!strcmp(out->params[k].name, in->params[j].name))
        return diag_error(p->d, LOOM_ERR_INVALID_ARGUMENT, "%s: parameter '%s' is both an input and an output", name,
                          in->params[j].name);
  return LOOM_OK;
}

/* Adds params as variables of the current function and to the scope. */
static LoomStatus add_params(Parser *p, const char *kernel, const FeParamList *l, bool is_out, bool allow_raw) {
  for (int32_t k = 0; k < l->n; k++) {
    const FeParam *prm = &l->params[k];
    LoomDType dt = LOOM_INT32;
    LoomStatus st = param_dtype(p, kernel, prm, &dt);
    if (st) return st;
    if (prm->raw && !allow_raw)
      return diag_error(p->d, LOOM_ERR_UNSUPPORTED, "%s: raw parameter '%s' is not supported in a ReductionKernel",
                        kernel, prm->name);
    int kind = prm->raw ? (is_out ? SV_RAW_OUT : SV_RAW_IN) : (is_out ? SV_OUT : SV_IN);
    int32_t v = new_var(p, prm->name, kind, dt, !is_out);
    if (v < 0 || push_name(p, prm->name, (int32_t)strlen(prm->name), v) < 0) return p->d->status;
  }
  return LOOM_OK;
}

static LoomStatus start(Parser *p, Arena *a, const char *name, FeBinding bind, SnModule **out, Diag *d) {
  memset(p, 0, sizeof *p);
  p->a = a;
  p->d = d;
  p->bind = bind;
  p->m = ir_snippet_new(a, name);
  if (!p->m) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory creating a snippet module");
  *out = NULL;
  return LOOM_OK;
}

static int parse_expr_part(Parser *p) {
  FeToken *t = cur(p);
  int32_t e = expr(p);
  TRY(e);
  if (cur(p)->kind != FT_EOF) return ERR(cur(p), "expected the end of the expression");
  TRY(e = conv(p, e, p->ret_dtype, t));
  int32_t s = new_stmt(p, SS_RETURN, e);
  TRY(s);
  int32_t b = block_of(p, &s, 1);
  TRY(b);
  p->m->funcs[p->func].body = b;
  return 0;
}

/* Whether a region's text has something to parse (NULL, "" and blanks mean none). */
static bool region_given(const char *text) {
  for (const char *c = text; c && *c; c++)
    if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r' && *c != '\f' && *c != '\v') return true;
  return false;
}

/* A per-worker region function (loop_prep or after_loop): params = the raw params of in and out (in
 * order), then _ind.size(). Scope, bottom up: n and _ind (which a declaration may shadow), the state
 * variables (after_loop), the raw params. */
static LoomStatus begin_region(Parser *p, const FeElementwiseSpec *s, const char *fname, int role,
                               const int32_t *state, int32_t nstate) {
  if (begin_func(p, fname, role, SN_VOID) < 0) return p->d->status;
  int32_t nparam = 0;
  ScopeEnt *raw = arena_alloc(p->a, sizeof(ScopeEnt) * (size_t)(s->in.n + s->out.n + 1));
  int32_t nraw = 0;
  if (!raw) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  const FeParamList *ls[2] = {&s->in, &s->out};
  for (int k = 0; k < 2; k++)
    for (int32_t j = 0; j < ls[k]->n; j++) {
      const FeParam *prm = &ls[k]->params[j];
      if (!prm->raw) continue;
      LoomDType dt = LOOM_INT32;
      LoomStatus st = param_dtype(p, s->name, prm, &dt);
      if (st) return st;
      int32_t v = new_var(p, prm->name, k ? SV_RAW_OUT : SV_RAW_IN, dt, k == 0);
      if (v < 0) return p->d->status;
      raw[nraw++] = (ScopeEnt){prm->name, (int32_t)strlen(prm->name), v};
      nparam++;
    }
  int32_t vn = new_var(p, "_ind.size()", SV_SPECIAL, LOOM_INT64, true);
  if (vn < 0) return p->d->status;
  p->m->vars[vn].special = SN_SPECIAL_SIZE;
  p->m->funcs[p->func].nparam = nparam + 1;
  if (push_name(p, "n", 1, vn) < 0 || push_name(p, "_ind", 4, vn) < 0) return p->d->status;
  p->block_start = 2; /* `int n = ...;` may shadow the special n; a raw param or state name may not be redeclared */
  for (int32_t k = 0; k < nstate; k++) {
    const char *nm = p->m->vars[state[k]].name;
    if (push_name(p, nm, (int32_t)strlen(nm), state[k]) < 0) return p->d->status;
  }
  for (int32_t k = 0; k < nraw; k++)
    if (push_name(p, raw[k].name, raw[k].len, raw[k].var) < 0) return p->d->status;
  p->returns_ok = false;
  p->lenient_end = true;
  p->region = role == SF_PREP ? "loop_prep" : "after_loop";
  p->hide_in = &s->in;
  p->hide_out = &s->out;
  p->state_decls = role == SF_PREP;
  return LOOM_OK;
}

static void end_region(Parser *p) {
  p->region = NULL;
  p->hide_in = p->hide_out = NULL;
  p->state_decls = false;
}

LoomStatus fe_snippet_elementwise(Arena *a, const FeElementwiseSpec *s, SnModule **out, Diag *d) {
  return fe_snippet_elementwise_ex(a, s, NULL, NULL, out, d);
}

LoomStatus fe_snippet_elementwise_ex(Arena *a, const FeElementwiseSpec *s, const char *loop_prep,
                                     const char *after_loop, SnModule **out, Diag *d) {
  if (!a || !s || !out || !d) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fe_snippet_elementwise: null argument");
  Parser pv, *p = &pv;
  LoomStatus st = start(p, a, s->name, s->binding, out, d);
  if (st || (st = check_spec_common(p, s->name, &s->in, &s->out))) return st;
  if (s->preamble && (st = parse_source(p, s->name, "preamble", s->preamble, parse_preamble))) return st;
  /* loop_prep first: its top-level variables (the worker state) are in scope in the operation */
  int32_t *state = NULL, nstate = 0;
  if (region_given(loop_prep)) {
    if ((st = begin_region(p, s, "loop_prep", SF_PREP, NULL, 0))) return st;
    p->m->prep = p->func;
    if ((st = parse_source(p, s->name, "loop_prep", loop_prep, parse_body))) return st;
    end_region(p);
    const SnFunc *pf = &p->m->funcs[p->m->prep];
    state = arena_alloc(a, sizeof(int32_t) * (size_t)(pf->nvar + 1));
    if (!state) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t k = 0; k < pf->nvar; k++)
      if (p->m->vars[pf->var_begin + k].kind == SV_STATE) state[nstate++] = pf->var_begin + k;
  }
  if (begin_func(p, s->name, SF_KERNEL, SN_VOID) < 0) return d->status;
  p->m->kernel = p->func;
  /* specials first in the scope so parameters shadow them; their vars come after the params */
  if ((st = add_params(p, s->name, &s->in, false, true)) || (st = add_params(p, s->name, &s->out, true, true))) return st;
  int32_t vi = new_var(p, "i", SV_SPECIAL, LOOM_INT64, true);
  int32_t vn = vi < 0 ? -1 : new_var(p, "_ind.size()", SV_SPECIAL, LOOM_INT64, true);
  if (vn < 0) return d->status;
  p->m->vars[vi].special = SN_SPECIAL_INDEX;
  p->m->vars[vn].special = SN_SPECIAL_SIZE;
  p->m->funcs[p->func].nparam = s->in.n + s->out.n + 2;
  /* scope: the state, then i, n, _ind below the params (a parameter named n shadows the special n;
   * the operation is CuPy's loop body, so a param or a declaration there shadows a state variable) */
  int32_t nparams = p->nscope;
  ScopeEnt *saved = arena_alloc(a, (size_t)(nparams + 1) * sizeof *saved);
  if (!saved) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  if (nparams) memcpy(saved, p->scope, (size_t)nparams * sizeof *saved);
  p->nscope = 0;
  for (int32_t k = 0; k < nstate; k++) {
    const char *nm = p->m->vars[state[k]].name;
    if (push_name(p, nm, (int32_t)strlen(nm), state[k]) < 0) return d->status;
  }
  if (push_name(p, "i", 1, vi) < 0 || push_name(p, "n", 1, vn) < 0 || push_name(p, "_ind", 4, vn) < 0) return d->status;
  for (int32_t k = 0; k < nparams; k++)
    if (push_name(p, saved[k].name, saved[k].len, saved[k].var) < 0) return d->status;
  p->block_start = nstate + 3; /* parameters share the body's top-level scope: `float x = 1;` redefines x */
  p->returns_ok = false;
  p->lenient_end = true;
  if ((st = parse_source(p, s->name, NULL, s->operation, parse_body))) return st;
  if (region_given(after_loop)) {
    if ((st = begin_region(p, s, "after_loop", SF_AFTER, state, nstate))) return st;
    p->m->after = p->func;
    if ((st = parse_source(p, s->name, "after_loop", after_loop, parse_body))) return st;
    end_region(p);
  }
  if ((st = ir_snippet_verify(p->m, d))) return st;
  *out = p->m;
  return LOOM_OK;
}

static LoomStatus resolve_type_name(Parser *p, const char *kernel, const char *text, int *dt) {
  FeSource *src = arena_alloc(p->a, sizeof *src);
  if (!src) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  src->kernel = kernel;
  src->part = "reduce_type";
  src->text = text;
  LoomStatus st = lex(p, src);
  if (st) return st;
  FeToken *t = cur(p);
  for (size_t k = 0; k < sizeof numpy_types / sizeof *numpy_types; k++)
    if (fe_tok_is(t, numpy_types[k].name) && peek(p, 1)->kind == FT_EOF) {
      *dt = numpy_types[k].dtype;
      return LOOM_OK;
    }
  int r = parse_type(p, dt);
  if (r < 0) return p->d->status;
  if (r == 0 || *dt == SN_VOID || cur(p)->kind != FT_EOF)
    return fe_error_at(p->d, LOOM_ERR_INVALID_ARGUMENT, src, t->line, t->col, "unknown reduce type '%s'", text);
  return LOOM_OK;
}

LoomStatus fe_snippet_reduction(Arena *a, const FeReductionSpec *s, SnModule **out, Diag *d) {
  if (!a || !s || !out || !d) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "fe_snippet_reduction: null argument");
  Parser pv, *p = &pv;
  LoomStatus st = start(p, a, s->name, s->binding, out, d);
  if (st || (st = check_spec_common(p, s->name, &s->in, &s->out))) return st;
  /* the reduce type */
  int rt = LOOM_FLOAT64;
  if (s->reduce_type && *s->reduce_type) {
    if ((st = resolve_type_name(p, s->name, s->reduce_type, &rt))) return st;
  } else {
    if (s->out.n < 1) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "%s: a ReductionKernel needs an output parameter", s->name);
    LoomDType t = LOOM_FLOAT32;
    if ((st = param_dtype(p, s->name, &s->out.params[0], &t))) return st;
    rt = t;
  }
  p->m->reduce_dtype = (uint8_t)rt;
  /* bind _type_reduce on top of the user's binding */
  int32_t nb = s->binding.n;
  const char **names = arena_alloc(a, (size_t)(nb + 1) * sizeof *names);
  LoomDType *dts = arena_alloc(a, (size_t)(nb + 1) * sizeof *dts);
  if (!names || !dts) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  for (int32_t k = 0; k < nb; k++) {
    names[k] = s->binding.names[k];
    dts[k] = s->binding.dtypes[k];
  }
  names[nb] = "_type_reduce";
  dts[nb] = (LoomDType)rt;
  p->bind.n = nb + 1;
  p->bind.names = names;
  p->bind.dtypes = dts;
  if (s->preamble && (st = parse_source(p, s->name, "preamble", s->preamble, parse_preamble))) return st;
  p->returns_ok = false;
  p->lenient_end = false;
  /* map */
  if (begin_func(p, "map", SF_MAP, rt) < 0) return d->status;
  p->m->map = p->func;
  if ((st = add_params(p, s->name, &s->in, false, false))) return st;
  p->m->funcs[p->func].nparam = s->in.n;
  if ((st = parse_source(p, s->name, "map_expr", s->map_expr, parse_expr_part))) return st;
  /* reduce */
  if (begin_func(p, "reduce", SF_REDUCE, rt) < 0) return d->status;
  p->m->reduce = p->func;
  int32_t va = new_var(p, "a", SV_PARAM, rt, false), vb = va < 0 ? -1 : new_var(p, "b", SV_PARAM, rt, false);
  if (vb < 0 || push_name(p, "a", 1, va) < 0 || push_name(p, "b", 1, vb) < 0) return d->status;
  p->m->funcs[p->func].nparam = 2;
  if ((st = parse_source(p, s->name, "reduce_expr", s->reduce_expr, parse_expr_part))) return st;
  /* post */
  if (begin_func(p, "post", SF_POST, SN_VOID) < 0) return d->status;
  p->m->post = p->func;
  va = new_var(p, "a", SV_PARAM, rt, false);
  if (va < 0 || push_name(p, "a", 1, va) < 0) return d->status;
  if ((st = add_params(p, s->name, &s->out, true, false))) return st;
  p->m->funcs[p->func].nparam = 1 + s->out.n;
  p->block_start = 0;
  p->lenient_end = true;
  if ((st = parse_source(p, s->name, "post_map_expr", s->post_map_expr, parse_body))) return st;
  p->lenient_end = false;
  /* identity */
  if (s->identity && *s->identity) {
    if (begin_func(p, "identity", SF_IDENTITY, rt) < 0) return d->status;
    p->m->identity = p->func;
    if ((st = parse_source(p, s->name, "identity", s->identity, parse_expr_part))) return st;
  }
  if ((st = ir_snippet_verify(p->m, d))) return st;
  *out = p->m;
  return LOOM_OK;
}
