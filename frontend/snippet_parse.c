/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_parse.c: kernel snippets (CuPy's C subset) -> typed snippet IR, and CuPy parameter lists:
 * the front end's entry points (fe_parse_params, fe_snippet_elementwise[_ex], fe_snippet_reduction).
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
 *
 * The rules live in snippet_nodes.c, snippet_types.c, snippet_expr.c and snippet_stmt.c (see
 * snippet_parser.h); this file binds the parameters, sets up each part's function and parses it.
 */
#include <stdio.h>
#include <string.h>

#include "frontend/snippet_parser.h"

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
    {"float_", LOOM_FLOAT64}, {"longdouble", LOOM_FLOAT64}, {"complex64", LOOM_COMPLEX64},
    {"complex128", LOOM_COMPLEX128}, {"csingle", LOOM_COMPLEX64}, {"cdouble", LOOM_COMPLEX128},
    {"complex_", LOOM_COMPLEX128}, {"clongdouble", LOOM_COMPLEX128},
};

static int parse_param_list(Parser *p, FeParamList *out) {
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
    if (fe_is_reserved(p, t2) || fe_tok_is(t2, "i") || fe_tok_is(t2, "_ind") || fe_tok_is(t2, "raw"))
      return ERR(t2, "'%.*s' cannot be used as a parameter name", t2->len, t2->loc);
    for (int32_t k = 0; k < out->n; k++)
      if (fe_tok_is(t2, out->params[k].name)) return ERR(t2, "duplicate parameter name '%.*s'", t2->len, t2->loc);
    if (!(prm.type_name = fe_tok_str(p, t1)) || !(prm.name = fe_tok_str(p, t2))) return -1;
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
  LoomStatus st = fe_lex_source(p, src);
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
      if (p->bind.dtypes[k] == LOOM_BFLOAT16)
        return diag_error(p->d, LOOM_ERR_UNSUPPORTED,
                          "%s: type placeholder '%s' bound to %s: kernel snippets do not support bfloat16 "
                          "yet (use loom's array operations for it)",
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
    int32_t v = fe_new_var(p, prm->name, kind, dt, !is_out);
    if (v < 0 || fe_scope_push(p, prm->name, (int32_t)strlen(prm->name), v) < 0) return p->d->status;
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
  int32_t e = fe_parse_expr(p);
  TRY(e);
  if (cur(p)->kind != FT_EOF) return ERR(cur(p), "expected the end of the expression");
  TRY(e = fe_convert(p, e, p->ret_dtype, t));
  int32_t s = fe_new_stmt(p, SS_RETURN, e);
  TRY(s);
  int32_t b = fe_block_of(p, &s, 1);
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
  if (fe_begin_func(p, fname, role, SN_VOID) < 0) return p->d->status;
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
      int32_t v = fe_new_var(p, prm->name, k ? SV_RAW_OUT : SV_RAW_IN, dt, k == 0);
      if (v < 0) return p->d->status;
      raw[nraw++] = (ScopeEnt){prm->name, (int32_t)strlen(prm->name), v};
      nparam++;
    }
  int32_t vn = fe_new_var(p, "_ind.size()", SV_SPECIAL, LOOM_INT64, true);
  if (vn < 0) return p->d->status;
  p->m->vars[vn].special = SN_SPECIAL_SIZE;
  p->m->funcs[p->func].nparam = nparam + 1;
  if (fe_scope_push(p, "n", 1, vn) < 0 || fe_scope_push(p, "_ind", 4, vn) < 0) return p->d->status;
  p->block_start = 2; /* `int n = ...;` may shadow the special n; a raw param or state name may not be redeclared */
  for (int32_t k = 0; k < nstate; k++) {
    const char *nm = p->m->vars[state[k]].name;
    if (fe_scope_push(p, nm, (int32_t)strlen(nm), state[k]) < 0) return p->d->status;
  }
  for (int32_t k = 0; k < nraw; k++)
    if (fe_scope_push(p, raw[k].name, raw[k].len, raw[k].var) < 0) return p->d->status;
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
  if (s->preamble && (st = fe_parse_source(p, s->name, "preamble", s->preamble, fe_parse_preamble))) return st;
  /* loop_prep first: its top-level variables (the worker state) are in scope in the operation */
  int32_t *state = NULL, nstate = 0;
  if (region_given(loop_prep)) {
    if ((st = begin_region(p, s, "loop_prep", SF_PREP, NULL, 0))) return st;
    p->m->prep = p->func;
    if ((st = fe_parse_source(p, s->name, "loop_prep", loop_prep, fe_parse_body))) return st;
    end_region(p);
    const SnFunc *pf = &p->m->funcs[p->m->prep];
    state = arena_alloc(a, sizeof(int32_t) * (size_t)(pf->nvar + 1));
    if (!state) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t k = 0; k < pf->nvar; k++)
      if (p->m->vars[pf->var_begin + k].kind == SV_STATE) state[nstate++] = pf->var_begin + k;
  }
  if (fe_begin_func(p, s->name, SF_KERNEL, SN_VOID) < 0) return d->status;
  p->m->kernel = p->func;
  /* specials first in the scope so parameters shadow them; their vars come after the params */
  if ((st = add_params(p, s->name, &s->in, false, true)) || (st = add_params(p, s->name, &s->out, true, true))) return st;
  int32_t vi = fe_new_var(p, "i", SV_SPECIAL, LOOM_INT64, true);
  int32_t vn = vi < 0 ? -1 : fe_new_var(p, "_ind.size()", SV_SPECIAL, LOOM_INT64, true);
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
    if (fe_scope_push(p, nm, (int32_t)strlen(nm), state[k]) < 0) return d->status;
  }
  if (fe_scope_push(p, "i", 1, vi) < 0 || fe_scope_push(p, "n", 1, vn) < 0 || fe_scope_push(p, "_ind", 4, vn) < 0) return d->status;
  for (int32_t k = 0; k < nparams; k++)
    if (fe_scope_push(p, saved[k].name, saved[k].len, saved[k].var) < 0) return d->status;
  p->block_start = nstate + 3; /* parameters share the body's top-level scope: `float x = 1;` redefines x */
  p->returns_ok = false;
  p->lenient_end = true;
  if ((st = fe_parse_source(p, s->name, NULL, s->operation, fe_parse_body))) return st;
  if (region_given(after_loop)) {
    if ((st = begin_region(p, s, "after_loop", SF_AFTER, state, nstate))) return st;
    p->m->after = p->func;
    if ((st = fe_parse_source(p, s->name, "after_loop", after_loop, fe_parse_body))) return st;
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
  LoomStatus st = fe_lex_source(p, src);
  if (st) return st;
  FeToken *t = cur(p);
  for (size_t k = 0; k < sizeof numpy_types / sizeof *numpy_types; k++)
    if (fe_tok_is(t, numpy_types[k].name) && peek(p, 1)->kind == FT_EOF) {
      *dt = numpy_types[k].dtype;
      return LOOM_OK;
    }
  int r = fe_parse_type(p, dt);
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
  if (s->preamble && (st = fe_parse_source(p, s->name, "preamble", s->preamble, fe_parse_preamble))) return st;
  p->returns_ok = false;
  p->lenient_end = false;
  /* map */
  if (fe_begin_func(p, "map", SF_MAP, rt) < 0) return d->status;
  p->m->map = p->func;
  if ((st = add_params(p, s->name, &s->in, false, false))) return st;
  p->m->funcs[p->func].nparam = s->in.n;
  if ((st = fe_parse_source(p, s->name, "map_expr", s->map_expr, parse_expr_part))) return st;
  /* reduce */
  if (fe_begin_func(p, "reduce", SF_REDUCE, rt) < 0) return d->status;
  p->m->reduce = p->func;
  int32_t va = fe_new_var(p, "a", SV_PARAM, rt, false), vb = va < 0 ? -1 : fe_new_var(p, "b", SV_PARAM, rt, false);
  if (vb < 0 || fe_scope_push(p, "a", 1, va) < 0 || fe_scope_push(p, "b", 1, vb) < 0) return d->status;
  p->m->funcs[p->func].nparam = 2;
  if ((st = fe_parse_source(p, s->name, "reduce_expr", s->reduce_expr, parse_expr_part))) return st;
  /* post */
  if (fe_begin_func(p, "post", SF_POST, SN_VOID) < 0) return d->status;
  p->m->post = p->func;
  va = fe_new_var(p, "a", SV_PARAM, rt, false);
  if (va < 0 || fe_scope_push(p, "a", 1, va) < 0) return d->status;
  if ((st = add_params(p, s->name, &s->out, true, false))) return st;
  p->m->funcs[p->func].nparam = 1 + s->out.n;
  p->block_start = 0;
  p->lenient_end = true;
  if ((st = fe_parse_source(p, s->name, "post_map_expr", s->post_map_expr, fe_parse_body))) return st;
  p->lenient_end = false;
  /* identity */
  if (s->identity && *s->identity) {
    if (fe_begin_func(p, "identity", SF_IDENTITY, rt) < 0) return d->status;
    p->m->identity = p->func;
    if ((st = fe_parse_source(p, s->name, "identity", s->identity, parse_expr_part))) return st;
  }
  if ((st = ir_snippet_verify(p->m, d))) return st;
  *out = p->m;
  return LOOM_OK;
}
