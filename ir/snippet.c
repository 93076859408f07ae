/* SPDX-License-Identifier: Apache-2.0 */
/* snippet.c: the typed snippet IR (ir/snippet.h): appenders, cast folding, the printer, the verifier.
 *
 * Approach: the module's arrays grow by doubling inside the module's Arena (the old block is simply
 * left in the arena, so at most half of the memory is dead; everything is freed with the arena).
 * The printer walks each function's statement tree and prints expressions as S-expressions, so the
 * text shows every conversion and every dtype. The verifier recomputes each node's typing rule.
 */
#include <math.h>
#include <string.h>

#include "ir/snippet.h"

static bool grow(SnModule *m, void **arr, int32_t *cap, int32_t n, size_t elem, Diag *d) {
  if (n < *cap) return true;
  if (n >= SN_MAX_NODES) {
    diag_error(d, LOOM_ERR_UNSUPPORTED, "snippet too large (more than %d IR nodes of one kind)",
               SN_MAX_NODES);
    return false;
  }
  int32_t nc = *cap ? *cap * 2 : 32;
  void *p = arena_alloc(m->arena, (size_t)nc * elem);
  if (!p) {
    diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory growing a snippet IR array to %zu bytes",
               (size_t)nc * elem);
    return false;
  }
  if (*arr && n) memcpy(p, *arr, (size_t)n * elem);
  *arr = p;
  *cap = nc;
  return true;
}

SnModule *ir_snippet_new(Arena *a, const char *name) {
  SnModule *m = arena_alloc(a, sizeof *m);
  if (!m) return NULL;
  m->arena = a;
  m->name = arena_strdup(a, name ? name : "kernel");
  if (!m->name) return NULL;
  m->kernel = m->map = m->reduce = m->post = m->identity = -1;
  m->prep = m->after = -1;
  return m;
}

#define SN_APPEND(arr, n, cap, item)                                                  \
  do {                                                                                \
    if (!grow(m, (void **)&m->arr, &m->cap, m->n, sizeof *m->arr, d)) return -1;      \
    m->arr[m->n] = *(item);                                                           \
    return m->n++;                                                                    \
  } while (0)

int32_t ir_snippet_add_func(SnModule *m, const SnFunc *f, Diag *d) { SN_APPEND(funcs, nfunc, capfunc, f); }
int32_t ir_snippet_add_var(SnModule *m, const SnVar *v, Diag *d) { SN_APPEND(vars, nvar, capvar, v); }
static int32_t add_expr_raw(SnModule *m, const SnExpr *e, Diag *d) { SN_APPEND(exprs, nexpr, capexpr, e); }

int32_t ir_snippet_add_expr(SnModule *m, const SnExpr *e, Diag *d) {
  SnExpr x = *e;
  int32_t h = 0;
  for (int k = 0; k < 3; k++)
    if (x.src[k] >= 0 && x.src[k] < m->nexpr && m->exprs[x.src[k]].height > h) h = m->exprs[x.src[k]].height;
  if (x.kind == SE_CALL)
    for (int32_t k = 0; k < x.nargs; k++) {
      int32_t li = x.args_begin + k;
      int32_t a = li >= 0 && li < m->nlist ? m->lists[li] : -1;
      if (a >= 0 && a < m->nexpr && m->exprs[a].height > h) h = m->exprs[a].height;
    }
  x.height = h + 1;
  if (x.height > SN_MAX_HEIGHT) {
    diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "expression too complex (nested more than %d levels deep)",
               SN_MAX_HEIGHT);
    return -1;
  }
  return add_expr_raw(m, &x, d);
}
int32_t ir_snippet_add_stmt(SnModule *m, const SnStmt *s, Diag *d) { SN_APPEND(stmts, nstmt, capstmt, s); }

int32_t ir_snippet_add_list(SnModule *m, const int32_t *items, int32_t n, Diag *d) {
  if (n < 0 || n > SN_MAX_NODES - m->nlist) {
    diag_error(d, LOOM_ERR_UNSUPPORTED, "snippet too large (lists)");
    return -1;
  }
  while (m->nlist + n > m->caplist)
    if (!grow(m, (void **)&m->lists, &m->caplist, m->caplist, sizeof *m->lists, d)) return -1;
  int32_t first = m->nlist;
  if (n) memcpy(m->lists + first, items, (size_t)n * sizeof *items);
  m->nlist += n;
  return first;
}

static bool dt_ok(int t) { return t >= 0 && t < LOOM_DTYPE_COUNT; }

bool ir_snippet_has_worker(const SnModule *m) { return m && (m->prep >= 0 || m->after >= 0); }

bool ir_snippet_func_has_state(const SnModule *m, int32_t f) {
  if (!ir_snippet_has_worker(m) || f < 0 || f >= m->nfunc) return false;
  int r = m->funcs[f].role;
  return r == SF_PREP || r == SF_KERNEL || r == SF_AFTER;
}

int32_t ir_snippet_cast(SnModule *m, int32_t e, LoomDType dtype, Diag *d) {
  if (e < 0 || e >= m->nexpr) return -1;
  const SnExpr *x = &m->exprs[e];
  if (x->dtype == dtype) return e;
  SnExpr c = {0};
  c.src[0] = c.src[1] = c.src[2] = -1;
  c.var = c.func = -1;
  c.dtype = (uint8_t)dtype;
  if (x->kind == SE_CONST && dt_ok(x->dtype)) {
    DKind from = dtype_kind((LoomDType)x->dtype), to = dtype_kind(dtype);
    Scalar v = x->value, r = {0};
    bool fold = true;
    if (from == DK_COMPLEX && to != DK_COMPLEX) {
      fold = false; /* the front end never converts complex to real implicitly; left to codegen */
    } else if (to == DK_COMPLEX) {
      r.f = from == DK_FLOAT || from == DK_COMPLEX ? v.f : from == DK_INT ? (double)v.i : (double)v.u;
      r.im = from == DK_COMPLEX ? v.im : 0.0;
    } else if (to == DK_BOOL) {
      r.u = from == DK_FLOAT ? (v.f != 0) : (v.u != 0);
    } else if (to == DK_FLOAT) {
      r.f = from == DK_FLOAT ? v.f : from == DK_INT ? (double)v.i : (double)v.u;
    } else if (from != DK_FLOAT) {
      r.u = v.u; /* int/bool -> int: wrap (ir_scalar_canon truncates to the width) */
    } else {
      fold = false; /* float -> int saturates: left to codegen */
    }
    if (fold) {
      c.kind = SE_CONST;
      c.value = ir_scalar_canon(dtype, r);
      return ir_snippet_add_expr(m, &c, d);
    }
  }
  c.kind = SE_CAST;
  c.src[0] = e;
  return ir_snippet_add_expr(m, &c, d);
}

const char *ir_snippet_c_type_name(int dtype) {
  static const char *const names[LOOM_DTYPE_COUNT] = {
      "bool", "signed char", "short", "int", "long long", "unsigned char", "unsigned short",
      "unsigned int", "unsigned long long", "half", "float", "double", "__nv_bfloat16",
      "complex<float>", "complex<double>"};
  if (dtype == SN_VOID) return "void";
  return dt_ok(dtype) ? names[dtype] : "?";
}

/* ---- printer ---------------------------------------------------------------------------------- */
static const char *const var_kind_names[SV_KIND_COUNT] = {"in", "out", "raw_in", "raw_out",
                                                          "special", "param", "local", "state"};
static const char *const role_names[] = {"helper", "kernel", "map", "reduce", "post", "identity", "prep", "after"};

static const char *dt_name(int t) { return t == SN_VOID ? "void" : dt_ok(t) ? dtype_short_name((LoomDType)t) : "?"; }

static void print_var(const SnModule *m, int32_t v, StrBuf *out) {
  if (v < 0 || v >= m->nvar || m->vars[v].func < 0 || m->vars[v].func >= m->nfunc) {
    sb_printf(out, "%%?");
    return;
  }
  sb_printf(out, "%s%d:%s", m->vars[v].kind == SV_STATE ? "$" : "%", v - m->funcs[m->vars[v].func].var_begin,
            m->vars[v].name);
}

static void print_const(LoomDType t, Scalar v, StrBuf *out) {
  switch (dtype_kind(t)) {
  case DK_BOOL: sb_printf(out, "%s", v.u ? "true" : "false"); break;
  case DK_INT: sb_printf(out, "%lld", (long long)v.i); break;
  case DK_UINT: sb_printf(out, "%llu", (unsigned long long)v.u); break;
  case DK_COMPLEX: sb_printf(out, "(%.17g%+.17gj)", v.f, v.im); break;
  case DK_FLOAT:
    if (isnan(v.f)) sb_printf(out, "nan");
    else if (isinf(v.f)) sb_printf(out, "%sinf", v.f < 0 ? "-" : "");
    else sb_printf(out, "%.17g", v.f);
    break;
  }
}

static void print_expr(const SnModule *m, int32_t e, StrBuf *out, int depth) {
  if (e < 0 || e >= m->nexpr || depth > 10000) {
    sb_printf(out, "?");
    return;
  }
  const SnExpr *x = &m->exprs[e];
  const char *t = dt_name(x->dtype);
  switch (x->kind) {
  case SE_CONST: sb_printf(out, "(const %s ", t); print_const((LoomDType)x->dtype, x->value, out); sb_printf(out, ")"); return;
  case SE_VAR: print_var(m, x->var, out); return;
  case SE_ARRAY_SIZE: sb_printf(out, "(size "); print_var(m, x->var, out); sb_printf(out, ")"); return;
  case SE_CALL: {
    const char *fn = x->func >= 0 && x->func < m->nfunc ? m->funcs[x->func].name : "?";
    sb_printf(out, "(call %s @%s", t, fn);
    for (int32_t k = 0; k < x->nargs; k++) {
      sb_printf(out, " ");
      int32_t li = x->args_begin + k;
      print_expr(m, li >= 0 && li < m->nlist ? m->lists[li] : -1, out, depth + 1);
    }
    sb_printf(out, ")");
    return;
  }
  default: break;
  }
  static const char *const kind_names[SE_KIND_COUNT] = {
      "const", "var", "load", "size", "elem", "div", "rem", "cast", "cond", "and", "or",
      "assign", "store", "comma", "call"};
  int nsrc = 0;
  switch (x->kind) {
  case SE_LOAD: case SE_CAST: case SE_ASSIGN: nsrc = 1; break;
  case SE_DIV: case SE_REM: case SE_LAND: case SE_LOR: case SE_STORE: case SE_COMMA: nsrc = 2; break;
  case SE_COND: nsrc = 3; break;
  case SE_ELEM: {
    const OpInfo *oi = op_info((LoomOp)x->op);
    nsrc = oi ? oi->arity : 0;
    break;
  }
  default: break;
  }
  if (x->kind == SE_ELEM) {
    const OpInfo *oi = op_info((LoomOp)x->op);
    sb_printf(out, "(%s %s", oi ? oi->name : "?", t);
  } else {
    sb_printf(out, "(%s %s", x->kind < SE_KIND_COUNT ? kind_names[x->kind] : "?", t);
  }
  if (x->kind == SE_LOAD || x->kind == SE_ASSIGN || x->kind == SE_STORE) {
    sb_printf(out, " ");
    print_var(m, x->var, out);
  }
  for (int k = 0; k < nsrc; k++) {
    sb_printf(out, " ");
    print_expr(m, x->src[k], out, depth + 1);
  }
  sb_printf(out, ")");
}

static void print_stmt(const SnModule *m, int32_t s, int indent, StrBuf *out, int depth) {
  if (s < 0 || s >= m->nstmt || depth > 10000) {
    sb_printf(out, "%*s?\n", indent, "");
    return;
  }
  const SnStmt *st = &m->stmts[s];
  switch (st->kind) {
  case SS_EXPR:
    sb_printf(out, "%*s", indent, "");
    print_expr(m, st->expr, out, 0);
    sb_printf(out, "\n");
    break;
  case SS_DECL:
    sb_printf(out, "%*sdecl ", indent, "");
    print_var(m, st->var, out);
    sb_printf(out, " %s", st->var >= 0 && st->var < m->nvar ? dt_name(m->vars[st->var].dtype) : "?");
    if (st->var >= 0 && st->var < m->nvar && m->vars[st->var].is_const) sb_printf(out, " const");
    if (st->expr >= 0) {
      sb_printf(out, " = ");
      print_expr(m, st->expr, out, 0);
    }
    sb_printf(out, "\n");
    break;
  case SS_IF:
    sb_printf(out, "%*sif ", indent, "");
    print_expr(m, st->expr, out, 0);
    sb_printf(out, "\n");
    print_stmt(m, st->body[0], indent + 2, out, depth + 1);
    if (st->body[1] >= 0) {
      sb_printf(out, "%*selse\n", indent, "");
      print_stmt(m, st->body[1], indent + 2, out, depth + 1);
    }
    break;
  case SS_LOOP:
    sb_printf(out, "%*s%s ", indent, "", st->do_while ? "do_while" : "while");
    if (st->expr >= 0) print_expr(m, st->expr, out, 0);
    else sb_printf(out, "true");
    if (st->step >= 0) {
      sb_printf(out, " step ");
      print_expr(m, st->step, out, 0);
    }
    sb_printf(out, "\n");
    print_stmt(m, st->body[0], indent + 2, out, depth + 1);
    break;
  case SS_BREAK: sb_printf(out, "%*sbreak\n", indent, ""); break;
  case SS_CONTINUE: sb_printf(out, "%*scontinue\n", indent, ""); break;
  case SS_RETURN:
    sb_printf(out, "%*sreturn", indent, "");
    if (st->expr >= 0) {
      sb_printf(out, " ");
      print_expr(m, st->expr, out, 0);
    }
    sb_printf(out, "\n");
    break;
  case SS_BLOCK:
    sb_printf(out, "%*s{\n", indent, "");
    for (int32_t k = 0; k < st->nlist; k++) {
      int32_t li = st->list_begin + k;
      print_stmt(m, li >= 0 && li < m->nlist ? m->lists[li] : -1, indent + 2, out, depth + 1);
    }
    sb_printf(out, "%*s}\n", indent, "");
    break;
  default: sb_printf(out, "%*s?\n", indent, ""); break;
  }
}

void ir_snippet_print(const SnModule *m, StrBuf *out) {
  if (!m) return;
  sb_printf(out, "snippet %s\n", m->name);
  for (int32_t f = 0; f < m->nfunc; f++) {
    const SnFunc *fn = &m->funcs[f];
    sb_printf(out, "func @%s %s(", fn->name, fn->role <= SF_AFTER ? role_names[fn->role] : "?");
    for (int32_t k = 0; k < fn->nparam; k++) {
      int32_t v = fn->var_begin + k;
      if (v < 0 || v >= m->nvar) break;
      sb_printf(out, "%s", k ? ", " : "");
      print_var(m, v, out);
      sb_printf(out, " %s %s", var_kind_names[m->vars[v].kind < SV_KIND_COUNT ? m->vars[v].kind : 0],
                dt_name(m->vars[v].dtype));
    }
    sb_printf(out, ") -> %s\n", dt_name(fn->ret_dtype));
    print_stmt(m, fn->body, 0, out, 0);
  }
}

/* ---- verifier --------------------------------------------------------------------------------- */
typedef struct Verifier {
  const SnModule *m;
  Diag *d;
  int32_t func;
  int loops;
} Verifier;

#define VFAIL(...) diag_error(v->d, LOOM_ERR_INTERNAL, "snippet IR: " __VA_ARGS__)

/* A variable the current function may use: its own, or a worker state variable (SV_STATE of the
 * SF_PREP function) in a function that has the state. */
static bool var_of_func(Verifier *v, int32_t var) {
  if (var < 0 || var >= v->m->nvar) return false;
  const SnVar *x = &v->m->vars[var];
  if (x->kind == SV_STATE) return x->func == v->m->prep && ir_snippet_func_has_state(v->m, v->func);
  return x->func == v->func;
}

static LoomStatus verify_expr(Verifier *v, int32_t e, int depth);

/* Out of line: its 1 KiB Diag must not sit in every frame of the recursive verify_expr (expressions
 * are SN_MAX_HEIGHT deep; threads may have small stacks). */
static __attribute__((noinline)) bool result_dtype_is(LoomOp op, const LoomDType *t, LoomDType want) {
  Diag tmp = {0};
  LoomDType r;
  return ir_elem_result_dtype(op, t, &r, &tmp) == LOOM_OK && r == want;
}

static LoomStatus want(Verifier *v, int32_t e, int dtype, int depth, const char *what) {
  LoomStatus st = verify_expr(v, e, depth + 1);
  if (st) return st;
  if (v->m->exprs[e].dtype != dtype)
    return VFAIL("%s of node %d has dtype %s, expected %s", what, e, dt_name(v->m->exprs[e].dtype),
                 dt_name(dtype));
  return LOOM_OK;
}

static LoomStatus verify_expr(Verifier *v, int32_t e, int depth) {
  const SnModule *m = v->m;
  if (e < 0 || e >= m->nexpr) return VFAIL("expression index %d out of range", e);
  if (depth > 100000) return VFAIL("expression too deep");
  const SnExpr *x = &m->exprs[e];
  if (!dt_ok(x->dtype) && !(x->dtype == SN_VOID && (x->kind == SE_CALL || x->kind == SE_COMMA)))
    return VFAIL("node %d has a bad dtype %d", e, x->dtype);
  LoomStatus st;
  const SnVar *var = x->var >= 0 && x->var < m->nvar ? &m->vars[x->var] : NULL;
  bool raw = var && (var->kind == SV_RAW_IN || var->kind == SV_RAW_OUT);
  switch (x->kind) {
  case SE_CONST: return LOOM_OK;
  case SE_VAR:
    if (!var_of_func(v, x->var) || raw) return VFAIL("node %d reads a bad variable", e);
    if (var->dtype != x->dtype) return VFAIL("node %d: variable dtype mismatch", e);
    return LOOM_OK;
  case SE_LOAD: case SE_STORE: case SE_ARRAY_SIZE:
    if (!var_of_func(v, x->var) || !raw) return VFAIL("node %d indexes a non-raw variable", e);
    if (x->kind == SE_ARRAY_SIZE) return x->dtype == LOOM_INT64 ? LOOM_OK : VFAIL("size not int64");
    if ((st = want(v, x->src[0], LOOM_INT64, depth, "index"))) return st;
    if (x->dtype != var->dtype) return VFAIL("node %d: element dtype mismatch", e);
    if (x->kind == SE_STORE) {
      if (var->kind != SV_RAW_OUT) return VFAIL("node %d stores to a raw input", e);
      return want(v, x->src[1], var->dtype, depth, "stored value");
    }
    return LOOM_OK;
  case SE_ELEM: {
    const OpInfo *oi = op_info((LoomOp)x->op);
    if (!oi) return VFAIL("node %d: bad op %d", e, x->op);
    LoomDType t[3];
    for (int k = 0; k < oi->arity; k++) {
      if ((st = verify_expr(v, x->src[k], depth + 1))) return st;
      if (!dt_ok(m->exprs[x->src[k]].dtype)) return VFAIL("node %d: void operand", e);
      t[k] = (LoomDType)m->exprs[x->src[k]].dtype;
      if (k && t[k] != t[0]) return VFAIL("node %d (%s): operands of different dtypes", e, oi->name);
    }
    if (!result_dtype_is((LoomOp)x->op, t, (LoomDType)x->dtype))
      return VFAIL("node %d (%s %s): bad result dtype", e, oi->name, dt_name(x->dtype));
    return LOOM_OK;
  }
  case SE_DIV: case SE_REM:
    if (x->dtype == LOOM_BOOL || x->dtype == LOOM_FLOAT16) return VFAIL("node %d: div/rem of %s", e, dt_name(x->dtype));
    if ((st = want(v, x->src[0], x->dtype, depth, "operand"))) return st;
    return want(v, x->src[1], x->dtype, depth, "operand");
  case SE_CAST:
    if ((st = verify_expr(v, x->src[0], depth + 1))) return st;
    return dt_ok(m->exprs[x->src[0]].dtype) ? LOOM_OK : VFAIL("node %d casts void", e);
  case SE_COND:
    if ((st = want(v, x->src[0], LOOM_BOOL, depth, "condition"))) return st;
    if ((st = want(v, x->src[1], x->dtype, depth, "arm"))) return st;
    return want(v, x->src[2], x->dtype, depth, "arm");
  case SE_LAND: case SE_LOR:
    if (x->dtype != LOOM_BOOL) return VFAIL("node %d: logical op not bool", e);
    if ((st = want(v, x->src[0], LOOM_BOOL, depth, "operand"))) return st;
    return want(v, x->src[1], LOOM_BOOL, depth, "operand");
  case SE_ASSIGN:
    if (!var_of_func(v, x->var) || raw || var->kind == SV_IN || var->kind == SV_SPECIAL)
      return VFAIL("node %d assigns a read-only variable", e);
    return want(v, x->src[0], var->dtype, depth, "assigned value");
  case SE_COMMA:
    if ((st = verify_expr(v, x->src[0], depth + 1))) return st;
    return want(v, x->src[1], x->dtype, depth, "comma value");
  case SE_CALL: {
    if (x->func < 0 || x->func >= v->func) return VFAIL("node %d calls a function not defined before", e);
    const SnFunc *f = &m->funcs[x->func];
    if (f->role != SF_HELPER || x->nargs != f->nparam || f->ret_dtype != x->dtype)
      return VFAIL("node %d: call does not match @%s", e, f->name);
    if (x->args_begin < 0 || x->nargs < 0 || x->args_begin > m->nlist - x->nargs) return VFAIL("node %d: bad args", e);
    for (int32_t k = 0; k < x->nargs; k++)
      if ((st = want(v, m->lists[x->args_begin + k], m->vars[f->var_begin + k].dtype, depth, "argument"))) return st;
    return LOOM_OK;
  }
  default: return VFAIL("node %d: bad kind %d", e, x->kind);
  }
}

static LoomStatus verify_stmt(Verifier *v, int32_t s, int depth) {
  const SnModule *m = v->m;
  if (s < 0 || s >= m->nstmt) return VFAIL("statement index %d out of range", s);
  if (depth > 100000) return VFAIL("statements too deep");
  const SnStmt *st = &m->stmts[s];
  const SnFunc *f = &m->funcs[v->func];
  LoomStatus r;
  switch (st->kind) {
  case SS_EXPR: return verify_expr(v, st->expr, 0);
  case SS_DECL:
    if (!var_of_func(v, st->var) || m->vars[st->var].func != v->func ||
        (m->vars[st->var].kind != SV_LOCAL && m->vars[st->var].kind != SV_STATE))
      return VFAIL("decl of a bad variable");
    return st->expr < 0 ? LOOM_OK : want(v, st->expr, m->vars[st->var].dtype, 0, "initializer");
  case SS_IF:
    if ((r = want(v, st->expr, LOOM_BOOL, 0, "if condition"))) return r;
    if ((r = verify_stmt(v, st->body[0], depth + 1))) return r;
    return st->body[1] < 0 ? LOOM_OK : verify_stmt(v, st->body[1], depth + 1);
  case SS_LOOP:
    if (st->expr >= 0 && (r = want(v, st->expr, LOOM_BOOL, 0, "loop condition"))) return r;
    if (st->step >= 0 && (r = verify_expr(v, st->step, 0))) return r;
    v->loops++;
    r = verify_stmt(v, st->body[0], depth + 1);
    v->loops--;
    return r;
  case SS_BREAK: case SS_CONTINUE:
    return v->loops > 0 ? LOOM_OK : VFAIL("break/continue outside a loop");
  case SS_RETURN:
    if (f->ret_dtype == SN_VOID) return st->expr < 0 ? LOOM_OK : VFAIL("value returned from a void function");
    if (st->expr < 0) return VFAIL("return without a value in @%s", f->name);
    return want(v, st->expr, f->ret_dtype, 0, "returned value");
  case SS_BLOCK:
    if (st->list_begin < 0 || st->nlist < 0 || st->list_begin > m->nlist - st->nlist) return VFAIL("bad block");
    for (int32_t k = 0; k < st->nlist; k++)
      if ((r = verify_stmt(v, m->lists[st->list_begin + k], depth + 1))) return r;
    return LOOM_OK;
  default: return VFAIL("bad statement kind %d", st->kind);
  }
}

LoomStatus ir_snippet_verify(const SnModule *m, Diag *d) {
  if (!m) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ir_snippet_verify: null module");
  Verifier vv = {m, d, 0, 0}, *v = &vv;
  if ((m->prep >= 0 && (m->prep >= m->nfunc || m->funcs[m->prep].role != SF_PREP)) ||
      (m->after >= 0 && (m->after >= m->nfunc || m->funcs[m->after].role != SF_AFTER)) ||
      (ir_snippet_has_worker(m) && m->kernel < 0))
    return VFAIL("bad loop_prep / after_loop functions");
  for (int32_t k = 0; k < m->nvar; k++)
    if (m->vars[k].kind == SV_STATE && (m->prep < 0 || m->vars[k].func != m->prep))
      return VFAIL("state variable %d outside loop_prep", k);
  for (int32_t f = 0; f < m->nfunc; f++) {
    const SnFunc *fn = &m->funcs[f];
    if (fn->var_begin < 0 || fn->nvar < fn->nparam || fn->nparam < 0 || fn->var_begin > m->nvar - fn->nvar)
      return VFAIL("function @%s has a bad variable range", fn->name);
    if (fn->ret_dtype != SN_VOID && !dt_ok(fn->ret_dtype)) return VFAIL("function @%s: bad return dtype", fn->name);
    for (int32_t k = 0; k < fn->nvar; k++)
      if (m->vars[fn->var_begin + k].func != f || !dt_ok(m->vars[fn->var_begin + k].dtype))
        return VFAIL("function @%s: variable %d is broken", fn->name, k);
    v->func = f;
    v->loops = 0;
    if (fn->body < 0 || fn->body >= m->nstmt || m->stmts[fn->body].kind != SS_BLOCK)
      return VFAIL("function @%s: body is not a block", fn->name);
    LoomStatus st = verify_stmt(v, fn->body, 0);
    if (st) return st;
  }
  return LOOM_OK;
}
