/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_stmt.c: the snippet parser's statements and declarations, function bodies, the preamble's
 * helper functions, and the driver that tokenizes one source part and parses it.
 *
 * Contract: each statement rule returns an SnStmt index or -1 after an error. A block (compound,
 * the body of if/for/while) pops the names it declared; `int x = x;` sees the outer x. At the top
 * level of loop_prep (p->state_decls) declarations make SV_STATE variables, visible afterwards in the
 * operation and after_loop.
 */
#include "frontend/snippet_parser.h"

/* ---- statements ------------------------------------------------------------------------------- */
static int32_t stmt(Parser *p);

static int expect_semi(Parser *p) {
  if (consume(p, ";")) return 0;
  if (p->lenient_end && cur(p)->kind == FT_EOF && p->depth <= 1) return 0;
  return expect(p, ";");
}

int32_t fe_block_of(Parser *p, const int32_t *items, int32_t n) {
  int32_t first = ir_snippet_add_list(p->m, items, n, p->d);
  TRY(first);
  int32_t s = fe_new_stmt(p, SS_BLOCK, -1);
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
    if (!fe_is_spec_word(q)) break;
  }
  int dt;
  int r = fe_parse_type(p, &dt);
  TRY(r);
  if (dt == SN_VOID) return ERR(tt, "variable declared void");
  for (int guard = 0; guard < 100000; guard++) {
    FeToken *name = cur(p);
    if (name->kind != FT_IDENT || fe_is_reserved(p, name)) {
      if (name->kind == FT_EOF) return ERR(name, "expected a variable name before end of input");
      return ERR(name, "expected a variable name before '%.*s'", name->len, name->loc);
    }
    advance(p);
    if (is(p, "[")) return ERRU(cur(p), "local arrays are not supported in snippets");
    if (is(p, "(")) return ERRU(cur(p), "functions can only be defined in the preamble");
    if (fe_scope_lookup(p, name, p->block_start) >= 0) return ERR(name, "redefinition of '%.*s'", name->len, name->loc);
    int32_t init = -1;
    if (consume(p, "=")) {
      FeToken *it = cur(p);
      TRY(init = fe_parse_assign(p));
      TRY(init = fe_convert(p, init, dt, it));
    } else if (is_const) {
      return ERR(name, "const variable '%.*s' must be initialized", name->len, name->loc);
    }
    char *nm = fe_tok_str(p, name);
    if (!nm) return -1;
    /* loop_prep's top-level variables are the worker state (visible in operation and after_loop) */
    int32_t v = fe_new_var(p, nm, p->state_decls && p->top_decl ? SV_STATE : SV_LOCAL, dt, is_const);
    TRY(v);
    TRY(fe_scope_push(p, name->loc, name->len, v)); /* after the initializer: `int x = x;` sees the outer x */
    int32_t s = fe_new_stmt(p, SS_DECL, init);
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
    if (fe_is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
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
  return fe_block_of(p, l.v, l.n);
}

/* A statement in its own scope (the body of if/for/while): a declaration there is a block. */
static int32_t sub_stmt(Parser *p) {
  if (fe_is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
    int32_t save_n = p->nscope, save_start = p->block_start;
    p->block_start = p->nscope;
    StmtList l = {0};
    int r = declaration(p, &l);
    p->nscope = save_n;
    p->block_start = save_start;
    TRY(r);
    return fe_block_of(p, l.v, l.n);
  }
  return stmt(p);
}

static int32_t cond_expr(Parser *p) {
  TRY(expect(p, "("));
  FeToken *t = cur(p);
  int32_t c = fe_parse_expr(p);
  TRY(c);
  TRY(c = fe_to_bool(p, c, t));
  TRY(expect(p, ")"));
  return c;
}

/* stmt = "return" expr? ";" | "if" "(" expr ")" stmt ("else" stmt)? | "while" "(" expr ")" stmt
 *      | "do" stmt "while" "(" expr ")" ";" | "for" "(" (declaration | expr? ";") expr? ";" expr? ")" stmt
 *      | "break" ";" | "continue" ";" | "{" compound | ";" | expr ";" */
static int32_t stmt_inner(Parser *p) {
  FeToken *t = cur(p);
  if (consume(p, "{")) return compound(p);
  if (consume(p, ";")) return fe_block_of(p, NULL, 0);
  if (fe_tok_is(t, "return")) {
    advance(p);
    if (!p->returns_ok) return ERR(t, "return is not allowed here (only in preamble functions)");
    int32_t e = -1;
    if (!is(p, ";")) {
      FeToken *et = cur(p);
      TRY(e = fe_parse_expr(p));
      if (p->ret_dtype == SN_VOID) return ERR(et, "void function should not return a value");
      TRY(e = fe_convert(p, e, p->ret_dtype, et));
    } else if (p->ret_dtype != SN_VOID) {
      return ERR(t, "non-void function should return a value");
    }
    TRY(expect_semi(p));
    return fe_new_stmt(p, SS_RETURN, e);
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
    int32_t s = fe_new_stmt(p, SS_IF, c);
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
    int32_t s = fe_new_stmt(p, SS_LOOP, c);
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
    int32_t s = fe_new_stmt(p, SS_LOOP, c);
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
    if (fe_is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
      r = declaration(p, &l);
    } else if (!consume(p, ";")) {
      int32_t e = fe_parse_expr(p);
      if (e < 0 || (r = expect(p, ";")) < 0) r = -1;
      else {
        int32_t s = fe_new_stmt(p, SS_EXPR, e);
        r = s < 0 ? -1 : list_push(p, &l, s);
      }
    }
    if (r >= 0 && !is(p, ";")) {
      FeToken *ct = cur(p);
      c = fe_parse_expr(p);
      if (c >= 0) c = fe_to_bool(p, c, ct);
      if (c < 0) r = -1;
    }
    if (r >= 0) r = expect(p, ";");
    if (r >= 0 && !is(p, ")")) {
      step = fe_parse_expr(p);
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
    int32_t s = fe_new_stmt(p, SS_LOOP, c);
    TRY(s);
    p->m->stmts[s].body[0] = body;
    p->m->stmts[s].step = step;
    TRY(list_push(p, &l, s));
    return fe_block_of(p, l.v, l.n);
  }
  if (fe_tok_is(t, "break") || fe_tok_is(t, "continue")) {
    advance(p);
    if (!p->loops) return ERR(t, "'%.*s' outside a loop", t->len, t->loc);
    TRY(expect_semi(p));
    return fe_new_stmt(p, t->loc[0] == 'b' ? SS_BREAK : SS_CONTINUE, -1);
  }
  if (fe_tok_is(t, "else")) return ERR(t, "'else' without a previous 'if'");
  if (fe_tok_is(t, "switch") || fe_tok_is(t, "goto") || fe_tok_is(t, "case") || fe_tok_is(t, "struct") ||
      fe_tok_is(t, "typedef"))
    return ERRU(t, "'%.*s' is not supported in snippets", t->len, t->loc);
  int32_t e = fe_parse_expr(p);
  TRY(e);
  TRY(expect_semi(p));
  return fe_new_stmt(p, SS_EXPR, e);
}

static int32_t stmt(Parser *p) {
  TRY(enter(p));
  int32_t r = stmt_inner(p);
  p->depth--;
  return r;
}

/* ---- functions and the preamble ---------------------------------------------------------------- */
int32_t fe_begin_func(Parser *p, const char *name, int role, int ret) {
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
int fe_parse_body(Parser *p) {
  StmtList l = {0};
  while (cur(p)->kind != FT_EOF) {
    if (fe_is_type_start(p, cur(p)) && !fe_tok_is(peek(p, 1), "(")) {
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
  int32_t b = fe_block_of(p, l.v, l.n);
  TRY(b);
  p->m->funcs[p->func].body = b;
  return 0;
}

LoomStatus fe_lex_source(Parser *p, const FeSource *src) {
  p->src = src;
  p->pos = 0;
  return fe_tokenize(p->a, src, &p->tok, &p->ntok, p->d);
}

/* preamble = (qualifier* type ident "(" (type ident ("," type ident)*)? ")" "{" compound)* */
int fe_parse_preamble(Parser *p) {
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
    int r = fe_parse_type(p, &ret);
    TRY(r);
    if (r == 0) {
      if (tt->kind == FT_EOF) return ERR(tt, "expected a function definition");
      return ERR(tt, "expected a function definition (a return type) before '%.*s'", tt->len, tt->loc);
    }
    FeToken *name = cur(p);
    if (name->kind != FT_IDENT || fe_is_reserved(p, name)) return ERR(name, "expected a function name");
    advance(p);
    if (!is(p, "(")) return ERRU(cur(p), "only function definitions are supported in the preamble");
    advance(p);
    for (int32_t f = 0; f < p->m->nfunc; f++)
      if (fe_tok_is(name, p->m->funcs[f].name))
        return ERRU(name, "redefinition of '%.*s' (overloading is not supported)", name->len, name->loc);
    char *nm = fe_tok_str(p, name);
    if (!nm) return -1;
    TRY(fe_begin_func(p, nm, SF_HELPER, ret));
    p->returns_ok = true;
    p->lenient_end = false;
    int32_t nparam = 0;
    if (fe_tok_is(cur(p), "void") && fe_tok_is(peek(p, 1), ")")) advance(p);
    while (!consume(p, ")")) {
      if (nparam > 0) TRY(expect(p, ","));
      if (nparam >= FE_MAX_ARGS) return ERR(cur(p), "too many parameters (at most %d)", FE_MAX_ARGS);
      int pt;
      FeToken *ptok = cur(p);
      int pr = fe_parse_type(p, &pt);
      TRY(pr);
      if (pr == 0) return ERR(ptok, "expected a parameter type");
      if (pt == SN_VOID) return ERR(ptok, "parameter declared void");
      FeToken *pn = cur(p);
      if (pn->kind != FT_IDENT || fe_is_reserved(p, pn)) return ERR(pn, "expected a parameter name");
      advance(p);
      if (fe_scope_lookup(p, pn, 0) >= 0) return ERR(pn, "redefinition of parameter '%.*s'", pn->len, pn->loc);
      char *pnm = fe_tok_str(p, pn);
      if (!pnm) return -1;
      int32_t v = fe_new_var(p, pnm, SV_PARAM, pt, false);
      TRY(v);
      TRY(fe_scope_push(p, pn->loc, pn->len, v));
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

LoomStatus fe_parse_source(Parser *p, const char *kernel, const char *part, const char *text, int (*fn)(Parser *)) {
  FeSource *src = arena_alloc(p->a, sizeof *src);
  if (!src) return diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  src->kernel = kernel;
  src->part = part;
  src->text = text ? text : "";
  LoomStatus st = fe_lex_source(p, src);
  if (st) return st;
  if (fn(p) < 0) return p->d->status ? p->d->status : diag_error(p->d, LOOM_ERR_INTERNAL, "snippet parser failed without a message");
  return LOOM_OK;
}
