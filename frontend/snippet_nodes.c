/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_nodes.c: the snippet parser's builders of IR nodes (expressions, variables, statements)
 * and its name scope.
 *
 * Contract: every builder returns the new index, or -1 with the error in p->d (out of memory, or an
 * expression higher than SN_MAX_HEIGHT, reported at the current token). The scope is a stack of
 * (name, var) entries in the arena; a block restores p->nscope to pop what it pushed.
 */
#include "frontend/snippet_parser.h"

/* ---- node helpers --------------------------------------------------------------------------- */
SnExpr fe_blank_expr(int kind, int dtype) {
  SnExpr e;
  memset(&e, 0, sizeof e);
  e.kind = (uint8_t)kind;
  e.dtype = (uint8_t)dtype;
  e.src[0] = e.src[1] = e.src[2] = -1;
  e.var = e.func = -1;
  return e;
}

int32_t fe_add_expr(Parser *p, const SnExpr *e) {
  int32_t h = 0;
  for (int k = 0; k < 3; k++)
    if (e->src[k] >= 0 && p->m->exprs[e->src[k]].height > h) h = p->m->exprs[e->src[k]].height;
  if (h + 1 > SN_MAX_HEIGHT)
    return ERR(cur(p), "expression too complex (nested more than %d levels deep)", SN_MAX_HEIGHT);
  return ir_snippet_add_expr(p->m, e, p->d);
}

int32_t fe_mk2(Parser *p, int kind, int dtype, int32_t a, int32_t b) {
  SnExpr e = fe_blank_expr(kind, dtype);
  e.src[0] = a;
  e.src[1] = b;
  return fe_add_expr(p, &e);
}
int32_t fe_mk_elem(Parser *p, LoomOp op, int dtype, int32_t a, int32_t b) {
  SnExpr e = fe_blank_expr(SE_ELEM, dtype);
  e.op = (uint16_t)op;
  e.src[0] = a;
  e.src[1] = b;
  return fe_add_expr(p, &e);
}
int32_t fe_mk_var(Parser *p, int32_t var) {
  SnExpr e = fe_blank_expr(SE_VAR, p->m->vars[var].dtype);
  e.var = var;
  return fe_add_expr(p, &e);
}
int32_t fe_mk_const(Parser *p, LoomDType t, Scalar v) {
  SnExpr e = fe_blank_expr(SE_CONST, t);
  e.value = ir_scalar_canon(t, v);
  return fe_add_expr(p, &e);
}
int32_t fe_mk_assign(Parser *p, int32_t var, int32_t value) {
  SnExpr e = fe_blank_expr(SE_ASSIGN, p->m->vars[var].dtype);
  e.var = var;
  e.src[0] = value;
  return fe_add_expr(p, &e);
}
int32_t fe_mk_store(Parser *p, int32_t var, int32_t index, int32_t value) {
  SnExpr e = fe_blank_expr(SE_STORE, p->m->vars[var].dtype);
  e.var = var;
  e.src[0] = index;
  e.src[1] = value;
  return fe_add_expr(p, &e);
}
int32_t fe_mk_comma(Parser *p, int32_t a, int32_t b) { return fe_mk2(p, SE_COMMA, p->m->exprs[b].dtype, a, b); }

int32_t fe_new_var(Parser *p, const char *name, int kind, int dtype, bool is_const) {
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
int32_t fe_new_temp(Parser *p, int dtype) { return fe_new_var(p, "tmp", SV_LOCAL, dtype, false); }

int32_t fe_new_stmt(Parser *p, int kind, int32_t expr) {
  SnStmt s;
  memset(&s, 0, sizeof s);
  s.kind = (uint8_t)kind;
  s.expr = expr;
  s.var = -1;
  s.body[0] = s.body[1] = -1;
  s.step = -1;
  return ir_snippet_add_stmt(p->m, &s, p->d);
}

int fe_scope_push(Parser *p, const char *name, int32_t len, int32_t var) {
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

int32_t fe_scope_lookup(Parser *p, const FeToken *t, int32_t from) {
  for (int32_t k = p->nscope - 1; k >= from; k--)
    if (p->scope[k].len == t->len && memcmp(p->scope[k].name, t->loc, (size_t)t->len) == 0) return p->scope[k].var;
  return -1;
}

char *fe_tok_str(Parser *p, const FeToken *t) {
  char *s = arena_alloc(p->a, (size_t)t->len + 1);
  if (!s) {
    diag_error(p->d, LOOM_ERR_OUT_OF_MEMORY, "out of memory (snippet names)");
    return NULL;
  }
  memcpy(s, t->loc, (size_t)t->len);
  return s;
}
