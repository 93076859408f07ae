/* SPDX-License-Identifier: Apache-2.0 */
/* snippet_expr.c: the snippet parser's expression rules, from `expr` down to `primary`, and calls
 * (preamble functions and the C/CUDA math functions, round() desugared).
 *
 * Contract: each rule returns the index of an SnExpr whose dtype is final, or -1 after an error at
 * the offending token. Recursion is bounded: FE_MAX_DEPTH nested parentheses/unary rules (enter) and
 * SN_MAX_HEIGHT expression height (fe_add_expr).
 */
#include "frontend/snippet_parser.h"

/* ---- expressions ------------------------------------------------------------------------------ */
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
    {"erf", LOOM_OP_ERF, 1, MF_FLOAT}, {"erfc", LOOM_OP_ERFC, 1, MF_FLOAT}, {"erfinv", 0, 1, MF_NO}, {"erfcinv", 0, 1, MF_NO},
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
    LoomDType t = fe_dtype_of(p, args[k]);
    if (t != LOOM_FLOAT32 && t != LOOM_FLOAT16) return LOOM_FLOAT64;
  }
  return LOOM_FLOAT32;
}

/* The math functions of CuPy's complex<T> (complex.cuh) that loom computes on complex operands. */
static bool complex_math_op(LoomOp op) {
  switch (op) {
  case LOOM_OP_SQRT: case LOOM_OP_EXP: case LOOM_OP_LOG: case LOOM_OP_LOG10: case LOOM_OP_POW: case LOOM_OP_SIN:
  case LOOM_OP_COS: case LOOM_OP_TAN: case LOOM_OP_SINH: case LOOM_OP_COSH: case LOOM_OP_TANH: case LOOM_OP_ASIN:
  case LOOM_OP_ACOS: case LOOM_OP_ATAN: case LOOM_OP_ASINH: case LOOM_OP_ACOSH: case LOOM_OP_ATANH: return true;
  default: return false;
  }
}

/* A math function with a complex argument: abs (the part type), isnan / isinf / isfinite (bool) and the
 * functions of complex_math_op, computed in the common complex type of the arguments. */
static int32_t call_math_complex(Parser *p, const MathFn *mf, bool fsuffix, int32_t *args, int nargs, const FeToken *t) {
  LoomDType ct = fe_dtype_of(p, args[0]);
  if (nargs == 2) ct = fe_common_type(ct, fe_dtype_of(p, args[1]));
  if (!dtype_is_complex(ct)) ct = dtype_complex_of(ct);
  bool ok = !fsuffix && (mf->mode == MF_ABS || mf->mode == MF_PRED || (mf->mode == MF_FLOAT && complex_math_op((LoomOp)mf->op)));
  if (!ok) return ERR(t, "'%.*s' does not take a complex argument", t->len, t->loc);
  int32_t x = fe_convert(p, args[0], ct, t), y = -1;
  TRY(x);
  if (nargs == 2) TRY(y = fe_convert(p, args[1], ct, t));
  if (mf->mode == MF_ABS) return fe_mk_elem(p, LOOM_OP_ABS, dtype_real_of(ct), x, -1);
  if (mf->mode == MF_PRED) return fe_mk_elem(p, (LoomOp)mf->op, LOOM_BOOL, x, -1);
  return fe_mk_elem(p, (LoomOp)mf->op, ct, x, y);
}

static int32_t call_math(Parser *p, const MathFn *mf, bool fsuffix, int32_t *args, int nargs, const FeToken *t) {
  if (mf->mode == MF_NO)
    return ERRU(t, "'%.*s' is not supported: loom has no %s operation", t->len, t->loc, mf->name);
  if (nargs != mf->nargs)
    return ERR(t, "'%.*s' takes %d argument%s, %d given", t->len, t->loc, mf->nargs, mf->nargs == 1 ? "" : "s", nargs);
  for (int k = 0; k < nargs; k++) TRY(fe_value_of(p, args[k], t));
  for (int k = 0; k < nargs; k++)
    if (dtype_is_complex(fe_dtype_of(p, args[k]))) return call_math_complex(p, mf, fsuffix, args, nargs, t);
  if (mf->mode == MF_ABS || mf->mode == MF_MINMAX) {
    LoomDType ct = nargs == 1 ? fe_promote(fe_dtype_of(p, args[0])) : fe_common_type(fe_dtype_of(p, args[0]), fe_dtype_of(p, args[1]));
    int32_t x = fe_convert(p, args[0], ct, t), y = -1;
    TRY(x);
    if (nargs == 2) TRY(y = fe_convert(p, args[1], ct, t));
    LoomOp op = (LoomOp)mf->op;
    if (mf->mode == MF_MINMAX && dtype_is_float(ct)) op = op == LOOM_OP_MINIMUM ? LOOM_OP_FMIN : LOOM_OP_FMAX;
    return fe_mk_elem(p, op, ct, x, y);
  }
  LoomDType ft = float_type(p, args, nargs, fsuffix);
  int32_t x = fe_convert(p, args[0], ft, t), y = -1;
  TRY(x);
  if (nargs == 2) TRY(y = fe_convert(p, args[1], ft, t));
  if (mf->mode == MF_PRED) return fe_mk_elem(p, (LoomOp)mf->op, LOOM_BOOL, x, -1);
  if (mf->mode == MF_FMOD) return fe_mk2(p, SE_REM, ft, x, y);
  if (mf->mode == MF_ROUND) {
    /* round half away from zero: t = trunc(x); |x - t| >= 0.5 ? t + copysign(1, x) : t (exact) */
    int32_t v = fe_new_temp(p, ft), set, xv, tr, d, ad, half, ge, one, sg, up, tr2, r;
    TRY(v);
    TRY(set = fe_mk_assign(p, v, x));
    TRY(xv = fe_mk_var(p, v));
    TRY(tr = fe_mk_elem(p, LOOM_OP_TRUNC, ft, xv, -1));
    TRY(d = fe_mk_elem(p, LOOM_OP_SUB, ft, xv, tr));
    TRY(ad = fe_mk_elem(p, LOOM_OP_ABS, ft, d, -1));
    TRY(half = fe_mk_const(p, ft, (Scalar){.f = 0.5}));
    TRY(ge = fe_mk_elem(p, LOOM_OP_GE, LOOM_BOOL, ad, half));
    TRY(one = fe_mk_const(p, ft, (Scalar){.f = 1.0}));
    TRY(sg = fe_mk_elem(p, LOOM_OP_COPYSIGN, ft, one, xv));
    TRY(up = fe_mk_elem(p, LOOM_OP_ADD, ft, tr, sg));
    TRY(tr2 = fe_mk_elem(p, LOOM_OP_TRUNC, ft, xv, -1));
    SnExpr c = fe_blank_expr(SE_COND, ft);
    c.src[0] = ge;
    c.src[1] = up;
    c.src[2] = tr2;
    TRY(r = fe_add_expr(p, &c));
    return fe_mk_comma(p, set, r);
  }
  return fe_mk_elem(p, (LoomOp)mf->op, ft, x, y);
}

/* CuPy's complex<T> functions real, imag, conj, arg, norm, polar (complex.cuh); a real argument counts as
 * complex<float> for float / half, else complex<double> (real(x) of a real x is x in that precision).
 * Returns -2 when name is none of them. */
static int32_t call_complex_fn(Parser *p, const FeToken *t, int32_t *args, int nargs) {
  static const char *const names[] = {"real", "imag", "conj", "arg", "norm", "polar"};
  int which = -1;
  for (int k = 0; k < 6; k++)
    if (fe_tok_is(t, names[k])) which = k;
  if (which < 0) return -2;
  if (nargs < 1 || nargs > (which == 5 ? 2 : 1))
    return ERR(t, "'%s' takes %s argument%s, %d given", names[which], which == 5 ? "1 or 2" : "1", which == 5 ? "s" : "",
               nargs);
  for (int k = 0; k < nargs; k++) TRY(fe_value_of(p, args[k], t));
  if (which == 5) { /* polar(r, theta = 0) = (r cos theta, r sin theta) */
    LoomDType ft = float_type(p, args, nargs, false);
    for (int k = 0; k < nargs; k++)
      if (dtype_is_complex(fe_dtype_of(p, args[k]))) return ERR(t, "'polar' takes real arguments");
    int32_t r, th, c, sn, re, im, rv, set;
    TRY(r = fe_convert(p, args[0], ft, t));
    if (nargs == 1) {
      int32_t zero;
      TRY(zero = fe_mk_const(p, ft, (Scalar){.f = 0.0}));
      return fe_mk_elem(p, LOOM_OP_COMPLEX, dtype_complex_of(ft), r, zero);
    }
    TRY(th = fe_convert(p, args[1], ft, t));
    int32_t v = fe_new_temp(p, ft); /* r once */
    TRY(v);
    TRY(set = fe_mk_assign(p, v, r));
    TRY(c = fe_mk_elem(p, LOOM_OP_COS, ft, th, -1));
    TRY(sn = fe_mk_elem(p, LOOM_OP_SIN, ft, th, -1));
    TRY(rv = fe_mk_var(p, v));
    TRY(re = fe_mk_elem(p, LOOM_OP_MUL, ft, rv, c));
    TRY(rv = fe_mk_var(p, v));
    TRY(im = fe_mk_elem(p, LOOM_OP_MUL, ft, rv, sn));
    TRY(re = fe_mk_elem(p, LOOM_OP_COMPLEX, dtype_complex_of(ft), re, im));
    return fe_mk_comma(p, set, re);
  }
  LoomDType ct = fe_dtype_of(p, args[0]);
  if (!dtype_is_complex(ct)) ct = dtype_complex_of(float_type(p, args, 1, false));
  int32_t z = fe_convert(p, args[0], ct, t);
  TRY(z);
  LoomDType rt = dtype_real_of(ct);
  switch (which) {
  case 0: return fe_mk_elem(p, LOOM_OP_REAL, rt, z, -1);
  case 1: return fe_mk_elem(p, LOOM_OP_IMAG, rt, z, -1);
  case 2: return fe_mk_elem(p, LOOM_OP_CONJ, ct, z, -1);
  default: break;
  }
  /* arg = atan2(imag, real), norm = real^2 + imag^2: z evaluated once */
  int32_t v = fe_new_temp(p, ct), set, re, im, zv;
  TRY(v);
  TRY(set = fe_mk_assign(p, v, z));
  TRY(zv = fe_mk_var(p, v));
  TRY(re = fe_mk_elem(p, LOOM_OP_REAL, rt, zv, -1));
  TRY(zv = fe_mk_var(p, v));
  TRY(im = fe_mk_elem(p, LOOM_OP_IMAG, rt, zv, -1));
  int32_t r;
  if (which == 3) {
    TRY(r = fe_mk_elem(p, LOOM_OP_ATAN2, rt, im, re));
  } else {
    int32_t re2, im2;
    TRY(zv = fe_mk_var(p, v));
    TRY(re2 = fe_mk_elem(p, LOOM_OP_REAL, rt, zv, -1));
    TRY(zv = fe_mk_var(p, v));
    TRY(im2 = fe_mk_elem(p, LOOM_OP_IMAG, rt, zv, -1));
    TRY(re = fe_mk_elem(p, LOOM_OP_MUL, rt, re, re2));
    TRY(im = fe_mk_elem(p, LOOM_OP_MUL, rt, im, im2));
    TRY(r = fe_mk_elem(p, LOOM_OP_ADD, rt, re, im));
  }
  return fe_mk_comma(p, set, r);
}

/* args = "(" (fe_parse_assign ("," assign)*)? ")" */
static int parse_args(Parser *p, int32_t *args, int max, int *nargs) {
  TRY(expect(p, "("));
  *nargs = 0;
  if (consume(p, ")")) return 0;
  for (;;) {
    if (*nargs >= max) return ERR(cur(p), "too many arguments (at most %d)", max);
    int32_t a = fe_parse_assign(p);
    TRY(a);
    args[(*nargs)++] = a;
    if (consume(p, ")")) return 0;
    TRY(expect(p, ","));
  }
}


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
    for (int k = 0; k < nargs; k++) TRY(conv_args[k] = fe_convert(p, args[k], p->m->vars[fn->var_begin + k].dtype, name));
    int32_t first = ir_snippet_add_list(p->m, conv_args, nargs, p->d);
    TRY(first);
    SnExpr e = fe_blank_expr(SE_CALL, fn->ret_dtype);
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
  int32_t cr = call_complex_fn(p, name, args, nargs);
  if (cr != -2) return cr;
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
    int32_t idx = fe_parse_expr(p);
    TRY(idx);
    TRY(fe_value_of(p, idx, t));
    if (dtype_is_float(fe_dtype_of(p, idx)))
      return ERR(t, "array subscript is not an integer (it has type '%s')", fe_c_type_name(fe_dtype_of(p, idx)));
    TRY(idx = fe_convert(p, idx, LOOM_INT64, t));
    TRY(expect(p, "]"));
    if (is(p, "[")) return ERR(cur(p), "raw parameter '%s' is indexed by one flat index only", v->name);
    SnExpr e = fe_blank_expr(SE_LOAD, v->dtype);
    e.var = var;
    e.src[0] = idx;
    return fe_add_expr(p, &e);
  }
  if (is(p, ".") && fe_tok_is(peek(p, 1), "size") && fe_tok_is(peek(p, 2), "(") && fe_tok_is(peek(p, 3), ")")) {
    p->pos += 4;
    SnExpr e = fe_blank_expr(SE_ARRAY_SIZE, LOOM_INT64);
    e.var = var;
    return fe_add_expr(p, &e);
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

/* complex<T>(re, im), complex<T>(x), complex<T>() after the "(": re and im are real values converted to T. */
static int32_t complex_ctor(Parser *p, LoomDType ct) {
  LoomDType rt = dtype_real_of(ct);
  int32_t v[2] = {-1, -1};
  int n = 0;
  if (!consume(p, ")")) {
    for (;;) {
      if (n == 2) return ERR(cur(p), "%s takes at most 2 arguments", fe_c_type_name(ct));
      FeToken *at = cur(p);
      TRY(v[n] = fe_parse_assign(p));
      TRY(fe_value_of(p, v[n], at));
      if (n == 0 && dtype_is_complex(fe_dtype_of(p, v[0])) && is(p, ")")) {
        advance(p);
        return fe_convert(p, v[0], ct, at); /* complex<T>(z): a conversion */
      }
      TRY(v[n] = fe_convert(p, v[n], rt, at));
      n++;
      if (consume(p, ")")) break;
      TRY(expect(p, ","));
    }
  }
  for (int k = n; k < 2; k++) TRY(v[k] = fe_mk_const(p, rt, (Scalar){.f = 0.0}));
  return fe_mk_elem(p, LOOM_OP_COMPLEX, ct, v[0], v[1]);
}

/* primary = "(" expr ")" | number | "true" | "false"
 *         | "static_cast" "<" type ">" "(" expr ")" | simple-type "(" expr ")"
 *         | "_ind" "." "size" "(" ")" | ident args | ident raw-access | ident */
static int32_t primary(Parser *p) {
  FeToken *t = cur(p);
  if (consume(p, "(")) {
    TRY(enter(p));
    int32_t e = fe_parse_expr(p);
    p->depth--;
    TRY(e);
    TRY(expect(p, ")"));
    return e;
  }
  if (t->kind == FT_NUM) {
    advance(p);
    return fe_mk_const(p, (LoomDType)t->dtype, t->value);
  }
  if (t->kind == FT_EOF) return ERR(t, "expected an expression before end of input");
  if (t->kind != FT_IDENT) return ERR(t, "expected an expression before '%.*s'", t->len, t->loc);
  if (fe_tok_is(t, "true") || fe_tok_is(t, "false")) {
    advance(p);
    return fe_mk_const(p, LOOM_BOOL, (Scalar){.u = fe_tok_is(t, "true")});
  }
  if (fe_tok_is(t, "static_cast")) {
    advance(p);
    TRY(expect(p, "<"));
    int dt;
    int r = fe_parse_type(p, &dt);
    TRY(r);
    if (r == 0) return ERR(cur(p), "expected a type in static_cast<...>");
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    TRY(expect(p, ">"));
    TRY(expect(p, "("));
    FeToken *et = cur(p);
    int32_t e = fe_parse_expr(p);
    TRY(e);
    TRY(expect(p, ")"));
    return fe_convert(p, e, dt, et);
  }
  if (fe_tok_is(t, "reinterpret_cast") || fe_tok_is(t, "const_cast") || fe_tok_is(t, "dynamic_cast"))
    return ERRU(t, "'%.*s' is not supported", t->len, t->loc);
  if (fe_is_type_start(p, t)) {
    /* functional cast: float(x), T(x) */
    int dt;
    int r = fe_parse_type(p, &dt);
    TRY(r);
    if (!is(p, "(")) return ERR(cur(p), "expected '(' after a type in an expression (a cast is written float(x) or (float)x)");
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    advance(p);
    FeToken *et = cur(p);
    if (dtype_is_complex((LoomDType)dt)) return complex_ctor(p, (LoomDType)dt);
    int32_t e = fe_parse_expr(p);
    TRY(e);
    TRY(expect(p, ")"));
    return fe_convert(p, e, dt, et);
  }
  if (fe_tok_is(t, "_ind")) {
    if (fe_tok_is(peek(p, 1), ".") && fe_tok_is(peek(p, 2), "size") && fe_tok_is(peek(p, 3), "(") &&
        fe_tok_is(peek(p, 4), ")")) {
      int32_t v = fe_scope_lookup(p, t, 0);
      if (v < 0) return ERR(t, "_ind.size() is only available in the operation of an ElementwiseKernel");
      p->pos += 5;
      return fe_mk_var(p, v);
    }
    return ERRU(t, "only _ind.size() is supported on _ind");
  }
  if (fe_is_keyword(t)) return ERR(t, "expected an expression before '%.*s'", t->len, t->loc);
  advance(p);
  if (is(p, "(")) return call(p, t);
  int32_t v = fe_scope_lookup(p, t, 0);
  if (v < 0 && p->region) return unavailable(p, t);
  if (v < 0) return ERR(t, "undeclared identifier '%.*s'", t->len, t->loc);
  int k = p->m->vars[v].kind;
  if (k == SV_RAW_IN || k == SV_RAW_OUT) return raw_access(p, v, t);
  if (is(p, "[")) return ERR(cur(p), "'%s' is not a raw parameter and cannot be indexed; declare it 'raw %s %s'",
                            p->m->vars[v].name, fe_c_type_name(p->m->vars[v].dtype), p->m->vars[v].name);
  return fe_mk_var(p, v);
}

/* postfix = primary ("++" | "--")* */
static int32_t postfix(Parser *p) {
  int32_t e = primary(p);
  TRY(e);
  for (int guard = 0; guard < 1000; guard++) {
    FeToken *t = cur(p);
    if (consume(p, "++")) TRY(e = fe_incdec(p, e, true, true, t));
    else if (consume(p, "--")) TRY(e = fe_incdec(p, e, false, true, t));
    else if (is(p, "[")) return ERR(t, "only raw parameters can be indexed");
    else if (is(p, ".") && (fe_tok_is(peek(p, 1), "real") || fe_tok_is(peek(p, 1), "imag")) &&
             fe_tok_is(peek(p, 2), "(") && fe_tok_is(peek(p, 3), ")")) {
      /* complex<T>'s z.real() / z.imag() (the setters z.real(v) are not supported) */
      TRY(fe_value_of(p, e, t));
      LoomDType ct = fe_dtype_of(p, e);
      if (!dtype_is_complex(ct))
        return ERR(t, "'.%.*s()' needs a complex value (have '%s')", peek(p, 1)->len, peek(p, 1)->loc, fe_c_type_name(ct));
      LoomOp op = fe_tok_is(peek(p, 1), "real") ? LOOM_OP_REAL : LOOM_OP_IMAG;
      p->pos += 4;
      TRY(e = fe_mk_elem(p, op, dtype_real_of(ct), e, -1));
    } else if (is(p, ".") || is(p, "->")) return ERRU(t, "member access is not supported here");
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
    if (e >= 0 && fe_value_of(p, e, t) >= 0) {
      LoomDType pt = fe_promote(fe_dtype_of(p, e));
      e = fe_convert(p, e, pt, t);
      if (e < 0) r = -1;
      else if (t->loc[0] == '+') r = e;
      else if (t->loc[0] == '-') r = fe_mk_elem(p, LOOM_OP_NEG, pt, e, -1);
      else if (dtype_is_float(pt) || dtype_is_complex(pt)) r = ERR(t, "invalid operand to '~' (have '%s')", fe_c_type_name(pt));
      else r = fe_mk_elem(p, LOOM_OP_BITWISE_NOT, pt, e, -1);
    } else {
      r = -1;
    }
  } else if (consume(p, "!")) {
    int32_t e = cast_expr(p);
    r = e < 0 ? -1 : fe_to_bool(p, e, t);
    if (r >= 0) r = fe_mk_elem(p, LOOM_OP_LOGICAL_NOT, LOOM_BOOL, r, -1);
  } else if (consume(p, "++") || consume(p, "--")) {
    int32_t e = unary(p);
    r = e < 0 ? -1 : fe_incdec(p, e, t->loc[0] == '+', false, t);
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
  if (is(p, "(") && fe_is_type_start(p, peek(p, 1))) {
    FeToken *t = cur(p);
    advance(p);
    int dt;
    int r = fe_parse_type(p, &dt);
    TRY(r);
    if (dt == SN_VOID) return ERR(t, "cast to void is not supported");
    TRY(expect(p, ")"));
    TRY(enter(p));
    FeToken *et = cur(p);
    int32_t e = cast_expr(p);
    p->depth--;
    TRY(e);
    return fe_convert(p, e, dt, et);
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
    TRY(e = fe_binop(p, op, e, r, t));
  }
}

/* conditional = logor ("?" expr ":" conditional)? */
static int32_t conditional(Parser *p) {
  int32_t c = binary(p, 0);
  TRY(c);
  FeToken *t = cur(p);
  if (!consume(p, "?")) return c;
  TRY(enter(p));
  int32_t a = fe_parse_expr(p), b;
  if (a >= 0 && expect(p, ":") >= 0) b = conditional(p);
  else b = -1;
  p->depth--;
  TRY(a);
  TRY(b);
  TRY(c = fe_to_bool(p, c, t));
  TRY(fe_value_of(p, a, t));
  TRY(fe_value_of(p, b, t));
  LoomDType ta = fe_dtype_of(p, a), tb = fe_dtype_of(p, b);
  LoomDType ct = ta == tb ? ta : fe_common_type(ta, tb);
  TRY(a = fe_convert(p, a, ct, t));
  TRY(b = fe_convert(p, b, ct, t));
  SnExpr e = fe_blank_expr(SE_COND, ct);
  e.src[0] = c;
  e.src[1] = a;
  e.src[2] = b;
  return fe_add_expr(p, &e);
}

/* assign = conditional (("=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=" | "<<=" | ">>=")
 *          assign)? */
int32_t fe_parse_assign(Parser *p) {
  int32_t lhs = conditional(p);
  TRY(lhs);
  FeToken *t = cur(p);
  static const char *const ops[] = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
    if (!fe_tok_is(t, ops[k])) continue;
    advance(p);
    TRY(enter(p));
    int32_t rhs = fe_parse_assign(p);
    p->depth--;
    TRY(rhs);
    char op[4] = {0};
    memcpy(op, ops[k], strlen(ops[k]) - 1);
    return fe_assign_op(p, lhs, op, rhs, t);
  }
  return lhs;
}

/* expr = fe_parse_assign ("," assign)* */
int32_t fe_parse_expr(Parser *p) {
  int32_t e = fe_parse_assign(p);
  TRY(e);
  while (consume(p, ",")) {
    int32_t r = fe_parse_assign(p);
    TRY(r);
    TRY(e = fe_mk_comma(p, e, r));
  }
  return e;
}
