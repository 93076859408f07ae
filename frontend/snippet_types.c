/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_types.c: the snippet parser's type checking: type names and specifier lists, C++'s integer
 * promotion and usual arithmetic conversions, binary operators on typed values, and lvalues
 * (assignment, compound assignment, ++/--).
 *
 * Contract: operands are typed expression indices; results carry their final dtype, conversions are
 * explicit SE_CASTs. Compound assignments and ++/-- are desugared with temporary locals so the IR has
 * only plain assignments and stores, and an lvalue's index is evaluated once. Errors (-1) are reported
 * at the operator's token.
 */
#include "frontend/snippet_parser.h"

/* ---- types ------------------------------------------------------------------------------------ */

/* One-word type names of the snippet language (C/CUDA names and NumPy-style aliases). */
static const NamedType named_types[] = {
    {"half", LOOM_FLOAT16}, {"__half", LOOM_FLOAT16}, {"float16", LOOM_FLOAT16},
    {"float32", LOOM_FLOAT32}, {"float64", LOOM_FLOAT64}, {"complex64", LOOM_COMPLEX64}, {"complex128", LOOM_COMPLEX128},
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

bool fe_is_spec_word(const FeToken *t) {
  for (size_t k = 0; k < sizeof spec_words / sizeof *spec_words; k++)
    if (fe_tok_is(t, spec_words[k])) return true;
  return false;
}

/* Whether t starts CuPy's complex<T> (also spelled thrust::complex<T>). */
static bool complex_template_at(Parser *p, const FeToken *t) {
  if (!p->tok || t < p->tok || t >= p->tok + p->ntok) return false; /* not a token of this parser's text */
  int32_t i = (int32_t)(t - p->tok), n = p->ntok;
  if (fe_tok_is(t, "thrust") && i + 2 < n && fe_tok_is(&p->tok[i + 1], "::")) i += 2;
  return i + 1 < n && fe_tok_is(&p->tok[i], "complex") && fe_tok_is(&p->tok[i + 1], "<");
}

bool fe_is_type_start(Parser *p, const FeToken *t) {
  LoomDType dt = LOOM_INT32;
  return fe_is_spec_word(t) || named_type(p, t, &dt) || complex_template_at(p, t);
}

/* complex<T> (thrust::complex<T>): T float (or half) -> complex64, double -> complex128, T a complex type
 * itself -> T. Returns 1 with *out, or -1. */
static int parse_complex_template(Parser *p, int *out) {
  FeToken *start = cur(p);
  if (fe_tok_is(start, "thrust")) p->pos += 2;
  p->pos += 2; /* complex < */
  int inner;
  int r = fe_parse_type(p, &inner);
  if (r < 0) return -1;
  if (r == 0) return ERR(cur(p), "expected a type in complex<...>");
  if (inner == LOOM_FLOAT32 || inner == LOOM_FLOAT16) *out = LOOM_COMPLEX64;
  else if (inner == LOOM_FLOAT64) *out = LOOM_COMPLEX128;
  else if (inner == LOOM_COMPLEX64 || inner == LOOM_COMPLEX128) *out = inner;
  else return ERR(start, "complex<%s>: the part type must be float or double", fe_c_type_name(inner));
  FeToken *t = cur(p);
  if (fe_tok_is(t, ">>")) { /* complex<float>> closing an outer template: split the token */
    t->loc++;
    t->len = 1;
    t->col++;
    return 1;
  }
  if (!consume(p, ">")) return ERR(t, "expected '>' after complex<%s", fe_c_type_name(inner));
  return 1;
}

bool fe_is_keyword(const FeToken *t) {
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (fe_tok_is(t, keywords[k])) return true;
  return false;
}

bool fe_is_reserved(Parser *p, const FeToken *t) { return fe_is_keyword(t) || fe_is_type_start(p, t); }

/* type = ("const" | "volatile" | "signed" | "unsigned" | "char" | "short" | "int" | "long" | "bool"
 *         | "float" | "double" | "void" | named-type)+
 * Returns 1 and the dtype (SN_VOID for void) when a type was parsed, 0 when not at a type, -1. */
int fe_parse_type(Parser *p, int *out) {
  FeToken *start = cur(p);
  int nsigned = 0, nunsigned = 0, nchar = 0, nshort = 0, nint = 0, nlong = 0, nbool = 0, nfloat = 0,
      ndouble = 0, nvoid = 0, nnamed = 0, any = 0;
  LoomDType named = LOOM_INT32;
  for (int guard = 0; guard < 64; guard++) {
    FeToken *t = cur(p);
    LoomDType dt = LOOM_INT32;
    if (!nnamed && !(nsigned + nunsigned + nchar + nshort + nint + nlong + nbool + nfloat + ndouble + nvoid) &&
        complex_template_at(p, t)) {
      int ct;
      TRY(parse_complex_template(p, &ct));
      nnamed++;
      named = (LoomDType)ct;
      any++;
      continue;
    }
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
LoomDType fe_promote(LoomDType t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_UINT8: case LOOM_INT16: case LOOM_UINT16: return LOOM_INT32;
  case LOOM_FLOAT16: return LOOM_FLOAT32;
  default: return t;
  }
}

/* C++'s usual arithmetic conversions (long long = 64 bits; half computes as float). With a complex operand
 * (CuPy's complex<T> operators): the complex type of the common type of the parts (complex<float> and
 * double -> complex<double>, complex<float> and int -> complex<float>). */
LoomDType fe_common_type(LoomDType a, LoomDType b) {
  a = fe_promote(a);
  b = fe_promote(b);
  if (a == b) return a;
  if (dtype_is_complex(a) || dtype_is_complex(b)) {
    LoomDType ra = dtype_is_complex(a) ? dtype_real_of(a) : a, rb = dtype_is_complex(b) ? dtype_real_of(b) : b;
    if (!dtype_is_float(ra)) ra = rb; /* the complex operand's part type decides against an integer */
    if (!dtype_is_float(rb)) rb = ra;
    return (ra == LOOM_FLOAT64 || rb == LOOM_FLOAT64) ? LOOM_COMPLEX128 : LOOM_COMPLEX64;
  }
  if (dtype_is_float(a) || dtype_is_float(b))
    return (a == LOOM_FLOAT64 || b == LOOM_FLOAT64) ? LOOM_FLOAT64 : LOOM_FLOAT32;
  bool ua = dtype_kind(a) == DK_UINT, ub = dtype_kind(b) == DK_UINT;
  if (ua == ub) return dtype_bits(a) >= dtype_bits(b) ? a : b;
  LoomDType u = ua ? a : b, s = ua ? b : a;
  if (dtype_bits(u) >= dtype_bits(s)) return u;
  return s;
}

/* An rvalue check: e must have a value. */
int32_t fe_value_of(Parser *p, int32_t e, const FeToken *t) {
  if (e < 0) return -1;
  if (p->m->exprs[e].dtype == SN_VOID) return ERR(t, "void value used in an expression");
  return e;
}

int32_t fe_convert(Parser *p, int32_t e, int dtype, const FeToken *t) {
  TRY(fe_value_of(p, e, t));
  int from = p->m->exprs[e].dtype;
  if (dtype_is_complex((LoomDType)from) && !dtype_is_complex((LoomDType)dtype))
    return ERR(t, "cannot convert '%s' to '%s' (take real(z), imag(z) or abs(z))", fe_c_type_name(from),
               fe_c_type_name(dtype));
  return ir_snippet_cast(p->m, e, (LoomDType)dtype, p->d);
}
int32_t fe_to_bool(Parser *p, int32_t e, const FeToken *t) { return fe_convert(p, e, LOOM_BOOL, t); }
LoomDType fe_dtype_of(Parser *p, int32_t e) { return (LoomDType)p->m->exprs[e].dtype; }

const char *fe_c_type_name(int dt) { return ir_snippet_c_type_name(dt); }

/* A binary operator by its spelling; a and b are values. */
int32_t fe_binop(Parser *p, const char *op, int32_t a, int32_t b, const FeToken *t) {
  TRY(fe_value_of(p, a, t));
  TRY(fe_value_of(p, b, t));
  LoomDType ta = fe_dtype_of(p, a), tb = fe_dtype_of(p, b);
  if (!strcmp(op, "&&") || !strcmp(op, "||")) {
    int32_t x = fe_to_bool(p, a, t), y;
    TRY(x);
    TRY(y = fe_to_bool(p, b, t));
    return fe_mk2(p, op[0] == '&' ? SE_LAND : SE_LOR, LOOM_BOOL, x, y);
  }
  if (!strcmp(op, "<<") || !strcmp(op, ">>")) {
    if (dtype_is_float(ta) || dtype_is_float(tb) || dtype_is_complex(ta) || dtype_is_complex(tb))
      return ERR(t, "invalid operands to '%s' (have '%s' and '%s'): shifts need integers", op, fe_c_type_name(ta), fe_c_type_name(tb));
    LoomDType r = fe_promote(ta);
    int32_t x = fe_convert(p, a, r, t), y;
    TRY(x);
    TRY(y = fe_convert(p, b, r, t));
    return fe_mk_elem(p, op[0] == '<' ? LOOM_OP_LEFT_SHIFT : LOOM_OP_RIGHT_SHIFT, r, x, y);
  }
  LoomDType ct = fe_common_type(ta, tb);
  int32_t x = fe_convert(p, a, ct, t), y;
  TRY(x);
  TRY(y = fe_convert(p, b, ct, t));
  static const struct { const char *s; LoomOp op; } cmp[] = {
      {"==", LOOM_OP_EQ}, {"!=", LOOM_OP_NE}, {"<", LOOM_OP_LT},
      {"<=", LOOM_OP_LE}, {">", LOOM_OP_GT}, {">=", LOOM_OP_GE}};
  for (size_t k = 0; k < sizeof cmp / sizeof *cmp; k++)
    if (!strcmp(op, cmp[k].s)) {
      if (dtype_is_complex(ct) && k >= 2)
        return ERR(t, "invalid operands to '%s' (have '%s' and '%s'): complex numbers are not ordered", op,
                   fe_c_type_name(ta), fe_c_type_name(tb));
      return fe_mk_elem(p, cmp[k].op, LOOM_BOOL, x, y);
    }
  if (!strcmp(op, "+")) return fe_mk_elem(p, LOOM_OP_ADD, ct, x, y);
  if (!strcmp(op, "-")) return fe_mk_elem(p, LOOM_OP_SUB, ct, x, y);
  if (!strcmp(op, "*")) return fe_mk_elem(p, LOOM_OP_MUL, ct, x, y);
  if (!strcmp(op, "/")) return fe_mk2(p, SE_DIV, ct, x, y);
  if (!strcmp(op, "%")) {
    if (dtype_is_complex(ct))
      return ERR(t, "invalid operands to '%%' (have '%s' and '%s')", fe_c_type_name(ta), fe_c_type_name(tb));
    if (dtype_is_float(ct))
      return ERR(t, "invalid operands to '%%' (have '%s' and '%s'): use fmod for floating point", fe_c_type_name(ta), fe_c_type_name(tb));
    return fe_mk2(p, SE_REM, ct, x, y);
  }
  LoomOp bop = op[0] == '&' ? LOOM_OP_BITWISE_AND : op[0] == '|' ? LOOM_OP_BITWISE_OR : LOOM_OP_BITWISE_XOR;
  if (dtype_is_float(ct) || dtype_is_complex(ct))
    return ERR(t, "invalid operands to '%s' (have '%s' and '%s'): bitwise operators need integers", op, fe_c_type_name(ta), fe_c_type_name(tb));
  return fe_mk_elem(p, bop, ct, x, y);
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
  int32_t v = fe_convert(p, value, p->m->vars[x.var].dtype, t);
  TRY(v);
  if (x.kind == SE_VAR) return fe_mk_assign(p, x.var, v);
  return fe_mk_store(p, x.var, x.src[0], v);
}

/* Makes an lvalue's index side-effect free and single-evaluation: for a[idx] with idx not a
 * variable or constant, *pre = (tmp = idx) and the returned lvalue is a[tmp]. */
static int32_t stable_lvalue(Parser *p, int32_t lhs, int32_t *pre) {
  *pre = -1;
  const SnExpr x = p->m->exprs[lhs];
  if (x.kind != SE_LOAD) return lhs;
  int k = p->m->exprs[x.src[0]].kind;
  if (k == SE_CONST || k == SE_VAR) return lhs;
  int32_t tmp = fe_new_temp(p, LOOM_INT64);
  TRY(tmp);
  TRY(*pre = fe_mk_assign(p, tmp, x.src[0]));
  int32_t idx = fe_mk_var(p, tmp);
  TRY(idx);
  SnExpr l = fe_blank_expr(SE_LOAD, x.dtype);
  l.var = x.var;
  l.src[0] = idx;
  return fe_add_expr(p, &l);
}

/* lhs op= rhs (op "" for plain assignment). */
int32_t fe_assign_op(Parser *p, int32_t lhs, const char *op, int32_t rhs, const FeToken *t) {
  TRY(check_lvalue(p, lhs, t));
  if (!*op) return write_to(p, lhs, rhs, t);
  int32_t pre;
  TRY(lhs = stable_lvalue(p, lhs, &pre));
  int32_t v = fe_binop(p, op, lhs, rhs, t);
  TRY(v);
  TRY(v = write_to(p, lhs, v, t));
  return pre >= 0 ? fe_mk_comma(p, pre, v) : v;
}

/* ++x / --x (postfix: the old value). */
int32_t fe_incdec(Parser *p, int32_t lhs, bool inc, bool postfix, const FeToken *t) {
  TRY(check_lvalue(p, lhs, t));
  int32_t one = fe_mk_const(p, LOOM_INT32, (Scalar){.i = 1});
  TRY(one);
  if (!postfix) return fe_assign_op(p, lhs, inc ? "+" : "-", one, t);
  int32_t pre;
  TRY(lhs = stable_lvalue(p, lhs, &pre));
  LoomDType dt = fe_dtype_of(p, lhs);
  int32_t old = fe_new_temp(p, dt), save, oldv, upd, r;
  TRY(old);
  TRY(save = fe_mk_assign(p, old, lhs));
  TRY(oldv = fe_mk_var(p, old));
  TRY(upd = fe_binop(p, inc ? "+" : "-", oldv, one, t));
  TRY(upd = write_to(p, lhs, upd, t));
  TRY(oldv = fe_mk_var(p, old));
  TRY(r = fe_mk_comma(p, upd, oldv));
  TRY(r = fe_mk_comma(p, save, r));
  return pre >= 0 ? fe_mk_comma(p, pre, r) : r;
}
