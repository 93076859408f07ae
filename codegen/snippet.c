/* SPDX-License-Identifier: Apache-2.0 */
/* snippet.c: a snippet module (ir/snippet.h) -> LLVM functions in the kernel's module.
 *
 * Approach: one LLVM function per snippet function, in module order (a function only calls earlier
 * ones). Every scalar variable gets an alloca in the entry block (mem2reg turns them into SSA
 * values once the function is inlined into the kernel loop); structured statements become basic
 * blocks with a stack of break/continue targets; lazy operators (?:, &&, ||) branch and join with a
 * phi. Scalar semantics come from codegen/math.c (cg_elem, cg_cast, cg_const ...) through the
 * kernel's own CgMath, so a snippet computes exactly what the same op computes in a fused kernel and
 * uses the same math library (libm + SLEEF, or the GPU target's device library). Inside a function
 * float16 values are LLVM `half` (cg_cast's convention); at the function boundary they travel as
 * float (see cg_snippet.h).
 * C's integer / and % are made total as ir/snippet.h says (x / 0 = x % 0 = 0, MIN / -1 = MIN), and
 * raw array accesses are bounds-checked against the element count (an out-of-range load reads 0, an
 * out-of-range store is dropped): a kernel cannot fault on any input.
 * Per-worker regions (loop_prep / after_loop): the worker state is one LLVM struct (a field per SV_STATE
 * variable) that the kernel's loop code allocates once per worker; SF_PREP, SF_KERNEL and SF_AFTER take
 * a pointer to it as their last parameter and reach a state variable through a GEP, so once they are
 * inlined SROA turns the struct back into registers carried around the point loop.
 * The combiner of a user reduction (SF_REDUCE) gets `reassoc` on its float adds and multiplies, as
 * the built-in float sum does, so that the loop vectorizer keeps several partial accumulators
 * (CuPy also assumes the reduction associative).
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_gpu.h"
#include "codegen/cg_snippet.h"

#define SN_MAX_STMT_DEPTH 512 /* nesting of statements codegen follows (the parser bounds it lower) */

struct CgSnippet {
  LoomContext *ctx;
  const KernelIr *k;
  const SnModule *mod;
  LLVMValueRef *fn;    /* nfunc */
  LLVMTypeRef *fty;    /* nfunc */
  /* per-worker regions */
  bool worker;         /* the module has loop_prep / after_loop */
  LLVMTypeRef state_ty;/* struct of the SV_STATE variables */
  int32_t *slot;       /* per module var: its field in state_ty (SV_STATE), else -1 */
  LLVMValueRef state;  /* the current worker's state block (set by cg_snippet_worker_begin) */
};

/* State of the lowering of one function. */
typedef struct SnLower {
  CgSnippet *s;
  CgMath *m;
  const SnFunc *f;
  LLVMValueRef fn;
  LLVMBuilderRef ab;       /* allocas */
  LLVMValueRef *slot;      /* per var of the function: its alloca (scalars) */
  LLVMValueRef *rawp, *raws; /* per var: base pointer and element count (raw arrays) */
  LLVMValueRef state;      /* the worker state block (functions with state), else NULL */
  LLVMBasicBlockRef brk[SN_MAX_STMT_DEPTH], cont[SN_MAX_STMT_DEPTH];
  int nloop;
  int depth;
} SnLower;

static bool is_raw(const SnVar *v) { return v->kind == SV_RAW_IN || v->kind == SV_RAW_OUT; }
static bool returns_outs(const SnFunc *f) { return f->role == SF_KERNEL || f->role == SF_POST; }

/* LLVM type of a value of dtype t inside a function: half for float16. */
static LLVMTypeRef val_type(CgMath *m, int t) {
  return t == LOOM_FLOAT16 ? LLVMHalfTypeInContext(m->c) : cg_reg_type(m, (LoomDType)t);
}
/* At the boundary: the compute register type. */
static LLVMTypeRef abi_type(CgMath *m, int t) { return cg_reg_type(m, (LoomDType)t); }
static LoomDType abi_dtype(int t) { return dtype_compute((LoomDType)t); }

static LLVMValueRef zero_of(CgMath *m, int t) {
  if (t == LOOM_FLOAT16) return LLVMConstReal(LLVMHalfTypeInContext(m->c), 0.0);
  Scalar z = {.u = 0};
  return cg_const(m, (LoomDType)t, z);
}

static LLVMValueRef fail(SnLower *L, int t, const char *what, int x) {
  diag_error(L->m->d, LOOM_ERR_INTERNAL, "codegen: snippet function '%s': %s %d", L->f->name, what, x);
  return LLVMGetUndef(t == SN_VOID ? LLVMInt1TypeInContext(L->m->c) : val_type(L->m, t));
}

static LLVMBasicBlockRef new_bb(SnLower *L, const char *name) {
  return LLVMAppendBasicBlockInContext(L->m->c, L->fn, name);
}

static LLVMValueRef expr(SnLower *L, int32_t e);

/* The address of worker state variable var (module index), or NULL when var is not one this function
 * can reach. */
static LLVMValueRef state_ptr(SnLower *L, int32_t var) {
  const SnModule *mod = L->s->mod;
  if (var < 0 || var >= mod->nvar || mod->vars[var].kind != SV_STATE || !L->state || L->s->slot[var] < 0) return NULL;
  return LLVMBuildStructGEP2(L->m->b, L->s->state_ty, L->state, (unsigned)L->s->slot[var], "");
}

/* Whether a raw index is in range: 0 <= idx < size (one unsigned compare). */
static LLVMValueRef in_bounds(SnLower *L, int32_t var, LLVMValueRef idx) {
  return LLVMBuildICmp(L->m->b, LLVMIntULT, idx, L->raws[var - L->f->var_begin], "inb");
}

static LLVMValueRef raw_ptr(SnLower *L, int32_t var, int dt, LLVMValueRef idx) {
  return LLVMBuildGEP2(L->m->b, cg_mem_type(L->m, (LoomDType)dt), L->rawp[var - L->f->var_begin], &idx, 1, "");
}

/* C's integer / and % made total (ir/snippet.h); floats: cg_fdiv / frem; complex /: loom's complex division
 * (NumPy's, lower_complex.c: the same values as the array operation a / b). */
static LLVMValueRef div_rem(SnLower *L, int t, LLVMValueRef a, LLVMValueRef b, bool rem) {
  LLVMBuilderRef bd = L->m->b;
  if (dtype_is_complex((LoomDType)t) && !rem) {
    LLVMValueRef args[2] = {a, b};
    return cg_elem(L->m, LOOM_OP_TRUEDIV, (LoomDType)t, args);
  }
  if (dtype_is_float((LoomDType)t)) return rem ? LLVMBuildFRem(bd, a, b, "") : cg_fdiv(L->m, (LoomDType)t, a, b);
  LLVMTypeRef ty = LLVMTypeOf(a);
  LLVMValueRef zero = LLVMConstInt(ty, 0, 0), one = LLVMConstInt(ty, 1, 0);
  LLVMValueRef bz = LLVMBuildICmp(bd, LLVMIntEQ, b, zero, "");
  if (t == LOOM_BOOL || dtype_kind((LoomDType)t) == DK_UINT) {
    LLVMValueRef sb = LLVMBuildSelect(bd, bz, one, b, "");
    LLVMValueRef r = rem ? LLVMBuildURem(bd, a, sb, "") : LLVMBuildUDiv(bd, a, sb, "");
    return LLVMBuildSelect(bd, bz, zero, r, "");
  }
  LLVMValueRef bm1 = LLVMBuildICmp(bd, LLVMIntEQ, b, LLVMConstAllOnes(ty), "");
  LLVMValueRef bad = LLVMBuildOr(bd, bz, bm1, "");
  LLVMValueRef sb = LLVMBuildSelect(bd, bad, one, b, "");
  LLVMValueRef r = rem ? LLVMBuildSRem(bd, a, sb, "") : LLVMBuildSDiv(bd, a, sb, "");
  /* b == -1: a / -1 = -a (wraps for MIN), a % -1 = 0; b == 0: 0 */
  LLVMValueRef m1 = rem ? zero : LLVMBuildSub(bd, zero, a, "");
  r = LLVMBuildSelect(bd, bm1, m1, r, "");
  return LLVMBuildSelect(bd, bz, zero, r, "");
}

/* A lazy two-way join: cond ? then_e : else_e where the arms are expressions (or constants when the
 * expression index is -1 and konst is given). */
static LLVMValueRef lazy(SnLower *L, int t, LLVMValueRef cond, int32_t then_e, LLVMValueRef then_k, int32_t else_e,
                         LLVMValueRef else_k) {
  LLVMBuilderRef b = L->m->b;
  LLVMBasicBlockRef tb = new_bb(L, "sn.then"), eb = new_bb(L, "sn.else"), jb = new_bb(L, "sn.join");
  LLVMBuildCondBr(b, cond, tb, eb);
  LLVMPositionBuilderAtEnd(b, tb);
  LLVMValueRef tv = then_e >= 0 ? expr(L, then_e) : then_k;
  LLVMBasicBlockRef tend = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, jb);
  LLVMPositionBuilderAtEnd(b, eb);
  LLVMValueRef ev = else_e >= 0 ? expr(L, else_e) : else_k;
  LLVMBasicBlockRef eend = LLVMGetInsertBlock(b);
  LLVMBuildBr(b, jb);
  LLVMPositionBuilderAtEnd(b, jb);
  if (t == SN_VOID || !tv || !ev) return NULL;
  LLVMValueRef phi = LLVMBuildPhi(b, val_type(L->m, t), "");
  LLVMValueRef vals[2] = {tv, ev};
  LLVMBasicBlockRef from[2] = {tend, eend};
  LLVMAddIncoming(phi, vals, from, 2);
  return phi;
}

static LLVMValueRef call_func(SnLower *L, const SnExpr *x) {
  const SnModule *mod = L->s->mod;
  CgMath *m = L->m;
  if (x->func < 0 || x->func >= mod->nfunc || !L->s->fn[x->func]) return fail(L, x->dtype, "calls function", x->func);
  const SnFunc *g = &mod->funcs[x->func];
  if (g->role != SF_HELPER || x->nargs != g->nparam || x->nargs > 64)
    return fail(L, x->dtype, "calls a non-helper or with a wrong argument count: function", x->func);
  LLVMValueRef args[64];
  for (int a = 0; a < x->nargs; a++) {
    int32_t ae = mod->lists[x->args_begin + a];
    int pt = mod->vars[g->var_begin + a].dtype;
    args[a] = cg_cast(m, (LoomDType)pt, abi_dtype(pt), expr(L, ae));
  }
  LLVMValueRef r = LLVMBuildCall2(m->b, L->s->fty[x->func], L->s->fn[x->func], args, (unsigned)x->nargs, "");
  if (g->ret_dtype == SN_VOID) return NULL;
  return cg_cast(m, abi_dtype(g->ret_dtype), (LoomDType)g->ret_dtype, r);
}

static LLVMValueRef expr(SnLower *L, int32_t e) {
  const SnModule *mod = L->s->mod;
  CgMath *m = L->m;
  LLVMBuilderRef b = m->b;
  if (e < 0 || e >= mod->nexpr) return fail(L, SN_VOID, "uses expression", e);
  const SnExpr *x = &mod->exprs[e];
  int t = x->dtype;
  int32_t lv = x->var - L->f->var_begin; /* local index of the var, when it has one */
  bool var_ok = x->var >= L->f->var_begin && lv < L->f->nvar;
  switch (x->kind) {
  case SE_CONST:
    if (t == LOOM_FLOAT16) return LLVMConstReal(LLVMHalfTypeInContext(m->c), x->value.f);
    return cg_const(m, (LoomDType)t, x->value);
  case SE_VAR: {
    LLVMValueRef sp = state_ptr(L, x->var);
    if (sp) return LLVMBuildLoad2(b, val_type(m, t), sp, "");
    if (!var_ok || !L->slot[lv]) return fail(L, t, "reads variable", x->var);
    return LLVMBuildLoad2(b, val_type(m, t), L->slot[lv], "");
  }
  case SE_ARRAY_SIZE:
    if (!var_ok || !L->raws[lv]) return fail(L, t, "sizes variable", x->var);
    return cg_cast(m, LOOM_INT64, (LoomDType)t, L->raws[lv]);
  case SE_LOAD: {
    if (!var_ok || !L->rawp[lv]) return fail(L, t, "loads variable", x->var);
    LLVMValueRef idx = expr(L, x->src[0]);
    LLVMBasicBlockRef lb = new_bb(L, "sn.load"), jb = new_bb(L, "sn.loaded");
    LLVMBasicBlockRef from0 = LLVMGetInsertBlock(b);
    LLVMBuildCondBr(b, in_bounds(L, x->var, idx), lb, jb);
    LLVMPositionBuilderAtEnd(b, lb);
    LLVMValueRef v = LLVMBuildLoad2(b, cg_mem_type(m, (LoomDType)t), raw_ptr(L, x->var, t, idx), "");
    if (t == LOOM_BOOL) v = cg_from_mem(m, LOOM_BOOL, LOOM_BOOL, v);
    LLVMBasicBlockRef from1 = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, jb);
    LLVMValueRef phi = LLVMBuildPhi(b, val_type(m, t), "");
    LLVMValueRef vals[2] = {zero_of(m, t), v};
    LLVMBasicBlockRef from[2] = {from0, from1};
    LLVMAddIncoming(phi, vals, from, 2);
    return phi;
  }
  case SE_STORE: {
    if (!var_ok || !L->rawp[lv]) return fail(L, t, "stores variable", x->var);
    LLVMValueRef idx = expr(L, x->src[0]);
    LLVMValueRef v = expr(L, x->src[1]);
    LLVMBasicBlockRef sb = new_bb(L, "sn.store"), jb = new_bb(L, "sn.stored");
    LLVMBuildCondBr(b, in_bounds(L, x->var, idx), sb, jb);
    LLVMPositionBuilderAtEnd(b, sb);
    LLVMBuildStore(b, cg_to_mem(m, (LoomDType)t, (LoomDType)t, v), raw_ptr(L, x->var, t, idx));
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, jb);
    return v;
  }
  case SE_ELEM: {
    const OpInfo *info = op_info((LoomOp)x->op);
    if (!info) return fail(L, t, "has op", x->op);
    LLVMValueRef args[3] = {NULL, NULL, NULL};
    for (int j = 0; j < info->arity; j++) args[j] = expr(L, x->src[j]);
    int od = mod->exprs[x->src[info->arity == 3 ? 1 : 0]].dtype;
    LLVMValueRef v = cg_elem(m, (LoomOp)x->op, (LoomDType)od, args);
    if (LLVMTypeOf(v) != val_type(m, t)) return fail(L, t, "has a mistyped op", x->op);
    return v;
  }
  case SE_DIV:
  case SE_REM: {
    LLVMValueRef a = expr(L, x->src[0]);
    LLVMValueRef c = expr(L, x->src[1]);
    return div_rem(L, t, a, c, x->kind == SE_REM);
  }
  case SE_CAST: {
    LLVMValueRef v = expr(L, x->src[0]);
    return cg_cast(m, (LoomDType)mod->exprs[x->src[0]].dtype, (LoomDType)t, v);
  }
  case SE_COND: return lazy(L, t, expr(L, x->src[0]), x->src[1], NULL, x->src[2], NULL);
  case SE_LAND:
    return lazy(L, LOOM_BOOL, expr(L, x->src[0]), x->src[1], NULL, -1, LLVMConstInt(LLVMInt1TypeInContext(m->c), 0, 0));
  case SE_LOR:
    return lazy(L, LOOM_BOOL, expr(L, x->src[0]), -1, LLVMConstInt(LLVMInt1TypeInContext(m->c), 1, 0), x->src[1], NULL);
  case SE_ASSIGN: {
    LLVMValueRef sp = state_ptr(L, x->var);
    if (!sp && (!var_ok || !L->slot[lv])) return fail(L, t, "assigns variable", x->var);
    LLVMValueRef v = expr(L, x->src[0]);
    LLVMBuildStore(b, v, sp ? sp : L->slot[lv]);
    return v;
  }
  case SE_COMMA:
    expr(L, x->src[0]);
    return expr(L, x->src[1]);
  case SE_CALL: return call_func(L, x);
  default: return fail(L, t, "has expression kind", x->kind);
  }
}

/* The function's return: its value, or the struct of its out params. */
static void emit_return(SnLower *L, LLVMValueRef v) {
  CgMath *m = L->m;
  const SnFunc *f = L->f;
  const SnModule *mod = L->s->mod;
  if (returns_outs(f)) {
    LLVMTypeRef rt = LLVMGetReturnType(L->s->fty[f - mod->funcs]);
    LLVMValueRef agg = LLVMGetUndef(rt);
    unsigned k = 0;
    for (int p = 0; p < f->nparam; p++) {
      const SnVar *var = &mod->vars[f->var_begin + p];
      if (var->kind != SV_OUT) continue;
      LLVMValueRef x = LLVMBuildLoad2(m->b, val_type(m, var->dtype), L->slot[p], "");
      agg = LLVMBuildInsertValue(m->b, agg, cg_cast(m, (LoomDType)var->dtype, abi_dtype(var->dtype), x), k++, "");
    }
    LLVMBuildRet(m->b, agg);
  } else if (f->ret_dtype == SN_VOID) {
    LLVMBuildRetVoid(m->b);
  } else {
    if (!v) v = zero_of(m, f->ret_dtype);
    LLVMBuildRet(m->b, cg_cast(m, (LoomDType)f->ret_dtype, abi_dtype(f->ret_dtype), v));
  }
  /* whatever follows a return is dead: give it a block of its own */
  LLVMPositionBuilderAtEnd(m->b, new_bb(L, "sn.dead"));
}

static void stmt(SnLower *L, int32_t s) {
  const SnModule *mod = L->s->mod;
  CgMath *m = L->m;
  LLVMBuilderRef b = m->b;
  if (s < 0 || s >= mod->nstmt) {
    fail(L, SN_VOID, "has statement", s);
    return;
  }
  if (++L->depth >= SN_MAX_STMT_DEPTH) {
    diag_error(m->d, LOOM_ERR_UNSUPPORTED, "snippet '%s': statements nested deeper than %d", mod->name,
               SN_MAX_STMT_DEPTH);
    L->depth--;
    return;
  }
  const SnStmt *st = &mod->stmts[s];
  switch (st->kind) {
  case SS_EXPR: expr(L, st->expr); break;
  case SS_DECL: {
    int32_t lv = st->var - L->f->var_begin;
    LLVMValueRef sp = lv >= 0 && lv < L->f->nvar ? state_ptr(L, st->var) : NULL;
    if (lv < 0 || lv >= L->f->nvar || (!sp && !L->slot[lv])) {
      fail(L, SN_VOID, "declares variable", st->var);
      break;
    }
    LLVMValueRef v = st->expr >= 0 ? expr(L, st->expr) : zero_of(m, mod->vars[st->var].dtype);
    LLVMBuildStore(b, v, sp ? sp : L->slot[lv]);
    break;
  }
  case SS_IF: {
    LLVMValueRef c = expr(L, st->expr);
    LLVMBasicBlockRef tb = new_bb(L, "if.then"), eb = new_bb(L, "if.else"), jb = new_bb(L, "if.end");
    LLVMBuildCondBr(b, c, tb, eb);
    LLVMPositionBuilderAtEnd(b, tb);
    if (st->body[0] >= 0) stmt(L, st->body[0]);
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, eb);
    if (st->body[1] >= 0) stmt(L, st->body[1]);
    LLVMBuildBr(b, jb);
    LLVMPositionBuilderAtEnd(b, jb);
    break;
  }
  case SS_LOOP: {
    LLVMBasicBlockRef head = new_bb(L, "loop.head"), body = new_bb(L, "loop.body"), step = new_bb(L, "loop.step"),
                      exit = new_bb(L, "loop.exit");
    LLVMBuildBr(b, st->do_while ? body : head);
    LLVMPositionBuilderAtEnd(b, head);
    if (st->expr >= 0) LLVMBuildCondBr(b, expr(L, st->expr), body, exit);
    else LLVMBuildBr(b, body);
    LLVMPositionBuilderAtEnd(b, body);
    L->brk[L->nloop] = exit;
    L->cont[L->nloop] = step;
    L->nloop++;
    if (st->body[0] >= 0) stmt(L, st->body[0]);
    L->nloop--;
    LLVMBuildBr(b, step);
    LLVMPositionBuilderAtEnd(b, step);
    if (st->step >= 0) expr(L, st->step);
    LLVMBuildBr(b, head);
    LLVMPositionBuilderAtEnd(b, exit);
    break;
  }
  case SS_BREAK:
  case SS_CONTINUE:
    if (L->nloop <= 0) {
      fail(L, SN_VOID, "breaks or continues outside a loop: statement", s);
      break;
    }
    LLVMBuildBr(b, st->kind == SS_BREAK ? L->brk[L->nloop - 1] : L->cont[L->nloop - 1]);
    LLVMPositionBuilderAtEnd(b, new_bb(L, "sn.dead"));
    break;
  case SS_RETURN: emit_return(L, st->expr >= 0 ? expr(L, st->expr) : NULL); break;
  case SS_BLOCK:
    for (int32_t j = 0; j < st->nlist && !m->d->status; j++) stmt(L, mod->lists[st->list_begin + j]);
    break;
  default: fail(L, SN_VOID, "has statement kind", st->kind); break;
  }
  L->depth--;
}

static void set_reassoc(LLVMValueRef fn) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      if (op == LLVMFAdd || op == LLVMFMul) LLVMSetFastMathFlags(in, LLVMFastMathAllowReassoc);
    }
}

static void add_attr(CgMath *m, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(m->c, kind, 0));
}

/* Declares function fi (its type and LLVM function). */
static LoomStatus declare_func(CgSnippet *s, CgMath *m, int32_t fi, const char *prefix, Diag *d) {
  const SnModule *mod = s->mod;
  const SnFunc *f = &mod->funcs[fi];
  if (f->var_begin < 0 || f->nvar < 0 || f->nparam < 0 || f->nparam > f->nvar || f->var_begin + f->nvar > mod->nvar)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: snippet function %d has bad variables", fi);
  LLVMTypeRef pt[2 * 64 + 2], ot[64];
  int np = 0, no = 0;
  if (f->nparam > 64) return diag_error(d, LOOM_ERR_UNSUPPORTED, "snippet function '%s' has more than 64 parameters", f->name);
  for (int p = 0; p < f->nparam; p++) {
    const SnVar *v = &mod->vars[f->var_begin + p];
    if (v->dtype >= LOOM_DTYPE_COUNT) return diag_error(d, LOOM_ERR_INTERNAL, "codegen: snippet variable '%s' has dtype %d", v->name, v->dtype);
    if (is_raw(v)) {
      pt[np++] = LLVMPointerTypeInContext(m->c, m->gpu ? m->gpu->as_global : 0); /* GPU buffers: global space */
      pt[np++] = LLVMInt64TypeInContext(m->c);
    } else {
      pt[np++] = abi_type(m, v->dtype);
    }
    if (v->kind == SV_OUT) ot[no++] = abi_type(m, v->dtype);
  }
  if (ir_snippet_func_has_state(mod, fi)) /* the worker state (an alloca) */
    pt[np++] = LLVMPointerTypeInContext(m->c, m->gpu ? m->gpu->as_private : 0);
  LLVMTypeRef rt;
  if (returns_outs(f)) rt = LLVMStructTypeInContext(m->c, ot, (unsigned)no, 0);
  else if (f->ret_dtype == SN_VOID) rt = LLVMVoidTypeInContext(m->c);
  else if (f->ret_dtype < LOOM_DTYPE_COUNT) rt = abi_type(m, f->ret_dtype);
  else return diag_error(d, LOOM_ERR_INTERNAL, "codegen: snippet function '%s' returns dtype %d", f->name, f->ret_dtype);
  char name[160];
  snprintf(name, sizeof name, "%s.sn.%d.%s", prefix, (int)fi, f->name ? f->name : "f");
  s->fty[fi] = LLVMFunctionType(rt, pt, (unsigned)np, 0);
  s->fn[fi] = LLVMAddFunction(m->m, name, s->fty[fi]);
  LLVMSetLinkage(s->fn[fi], LLVMInternalLinkage);
  add_attr(m, s->fn[fi], "alwaysinline");
  add_attr(m, s->fn[fi], "nounwind");
  return LOOM_OK;
}

static LoomStatus lower_func(CgSnippet *s, CgMath *m, int32_t fi, Diag *d) {
  const SnModule *mod = s->mod;
  const SnFunc *f = &mod->funcs[fi];
  SnLower L;
  memset(&L, 0, sizeof L);
  L.s = s;
  L.m = m;
  L.f = f;
  L.fn = s->fn[fi];
  size_t nv = (size_t)f->nvar + 1;
  L.slot = ctx_calloc(s->ctx, nv, sizeof(LLVMValueRef));
  L.rawp = ctx_calloc(s->ctx, nv, sizeof(LLVMValueRef));
  L.raws = ctx_calloc(s->ctx, nv, sizeof(LLVMValueRef));
  LLVMBuilderRef saved = m->b;
  m->b = LLVMCreateBuilderInContext(m->c);
  L.ab = LLVMCreateBuilderInContext(m->c);
  if (!L.slot || !L.rawp || !L.raws) {
    diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering snippet function '%s'", f->name);
  } else {
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(m->c, L.fn, "allocas");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(m->c, L.fn, "start");
    LLVMPositionBuilderAtEnd(L.ab, entry);
    LLVMPositionBuilderAtEnd(m->b, start);
    unsigned pi = 0;
    for (int v = 0; v < f->nvar; v++) {
      const SnVar *var = &mod->vars[f->var_begin + v];
      if (v < f->nparam && is_raw(var)) {
        L.rawp[v] = LLVMGetParam(L.fn, pi++);
        L.raws[v] = LLVMGetParam(L.fn, pi++);
        continue;
      }
      if (var->kind == SV_STATE && v >= f->nparam) continue; /* lives in the worker state block */
      if (is_raw(var) || var->dtype >= LOOM_DTYPE_COUNT) {
        diag_error(d, LOOM_ERR_INTERNAL, "codegen: snippet variable '%s' is a raw array or badly typed", var->name);
        break;
      }
      L.slot[v] = LLVMBuildAlloca(L.ab, val_type(m, var->dtype), var->name ? var->name : "");
      LLVMValueRef init = v < f->nparam ? cg_cast(m, abi_dtype(var->dtype), (LoomDType)var->dtype, LLVMGetParam(L.fn, pi++))
                                        : zero_of(m, var->dtype);
      LLVMBuildStore(m->b, init, L.slot[v]);
    }
    if (ir_snippet_func_has_state(mod, fi)) L.state = LLVMGetParam(L.fn, pi++);
    if (!d->status) {
      stmt(&L, f->body);
      emit_return(&L, NULL); /* falling off the end */
      LLVMBuildUnreachable(m->b);
    }
    LLVMBuildBr(L.ab, start);
    if (f->role == SF_REDUCE) set_reassoc(L.fn);
  }
  LLVMDisposeBuilder(m->b);
  LLVMDisposeBuilder(L.ab);
  m->b = saved;
  ctx_free(s->ctx, L.slot);
  ctx_free(s->ctx, L.rawp);
  ctx_free(s->ctx, L.raws);
  return d->status;
}

/* Checks KI_USER / KI_USER_OUT instruction i against the module. */
static LoomStatus check_user(const KernelIr *k, int32_t i, Diag *d) {
  const KInstr *in = &k->instrs[i];
  const SnModule *mod = k->snippet;
  if (in->kind == KI_USER_OUT) {
    if (in->src[0] < 0 || in->src[0] >= i || k->instrs[in->src[0]].kind != KI_USER)
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user_out %%%d does not read an earlier user call", i);
    const SnFunc *f = &mod->funcs[k->instrs[in->src[0]].op];
    int n = 0;
    for (int p = 0; p < f->nparam; p++) {
      const SnVar *v = &mod->vars[f->var_begin + p];
      if (v->kind != SV_OUT) continue;
      if (n++ == in->op) {
        if (in->dtype != abi_dtype(v->dtype))
          return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user_out %%%d has the wrong dtype", i);
        return LOOM_OK;
      }
    }
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user_out %%%d reads out %d of %d", i, in->op, n);
  }
  if (in->op >= mod->nfunc) return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user %%%d calls function %d", i, in->op);
  const SnFunc *f = &mod->funcs[in->op];
  if (f->role == SF_HELPER || in->phase != f->nparam || in->buf < 0 || in->buf > k->nuser_arg - in->phase)
    return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user %%%d has a bad argument list", i);
  for (int p = 0; p < f->nparam; p++) {
    const SnVar *v = &mod->vars[f->var_begin + p];
    int32_t a = k->user_args[in->buf + p];
    if (is_raw(v)) {
      if (a >= 0 || -a - 1 >= k->nbuf || k->bufs[-a - 1].dtype != v->dtype)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user %%%d passes %d for raw array '%s'", i, a, v->name);
    } else if (a < 0 || a >= i || k->instrs[a].dtype != abi_dtype(v->dtype)) {
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: user %%%d passes %d for '%s'", i, a, v->name);
    }
  }
  return LOOM_OK;
}

LoomStatus cg_snippet_lower(LoomContext *ctx, CgMath *m, const KernelIr *k, CgSnippet **out, Diag *d) {
  *out = NULL;
  if (!k->snippet) {
    for (int32_t i = 0; i < k->ninstr; i++)
      if (k->instrs[i].kind == KI_USER || k->instrs[i].kind == KI_USER_OUT)
        return diag_error(d, LOOM_ERR_INTERNAL, "codegen: kernel '%s' calls a snippet it does not have", k->name);
    return LOOM_OK;
  }
  const SnModule *mod = k->snippet;
  LoomStatus vst = ir_snippet_verify(mod, d);
  if (vst) return vst;
  for (int32_t i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_USER || k->instrs[i].kind == KI_USER_OUT) {
      LoomStatus st = check_user(k, i, d);
      if (st) return st;
    }
  CgSnippet *s = ctx_calloc(ctx, 1, sizeof *s);
  if (!s) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering a snippet");
  s->ctx = ctx;
  s->k = k;
  s->mod = mod;
  size_t nf = (size_t)mod->nfunc + 1;
  s->fn = ctx_calloc(ctx, nf, sizeof(LLVMValueRef));
  s->fty = ctx_calloc(ctx, nf, sizeof(LLVMTypeRef));
  if (!s->fn || !s->fty) {
    cg_snippet_free(s);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering a snippet");
  }
  if ((s->worker = ir_snippet_has_worker(mod))) {
    if (k->nkeep != k->ndim) {
      cg_snippet_free(s);
      return diag_error(d, LOOM_ERR_INTERNAL, "codegen: loop_prep / after_loop in the non-elementwise kernel '%s'", k->name);
    }
    s->slot = ctx_calloc(ctx, (size_t)mod->nvar + 1, sizeof(int32_t));
    LLVMTypeRef *ft = ctx_calloc(ctx, (size_t)mod->nvar + 1, sizeof(LLVMTypeRef));
    unsigned nf = 0;
    if (s->slot && ft)
      for (int32_t v = 0; v < mod->nvar; v++) {
        s->slot[v] = -1;
        if (mod->vars[v].kind != SV_STATE) continue;
        s->slot[v] = (int32_t)nf;
        ft[nf++] = val_type(m, mod->vars[v].dtype);
      }
    if (s->slot && ft) s->state_ty = LLVMStructTypeInContext(m->c, ft, nf, 0);
    ctx_free(ctx, ft);
    if (!s->state_ty) {
      cg_snippet_free(s);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory lowering a snippet");
    }
  }
  char prefix[64];
  snprintf(prefix, sizeof prefix, "%s", mod->name ? mod->name : "snippet");
  LoomStatus st = LOOM_OK;
  for (int32_t fi = 0; fi < mod->nfunc && !st; fi++) st = declare_func(s, m, fi, prefix, d);
  for (int32_t fi = 0; fi < mod->nfunc && !st; fi++) st = lower_func(s, m, fi, d);
  if (st) {
    cg_snippet_free(s);
    return st;
  }
  *out = s;
  return LOOM_OK;
}

void cg_snippet_free(CgSnippet *s) {
  if (!s) return;
  ctx_free(s->ctx, s->fn);
  ctx_free(s->ctx, s->fty);
  ctx_free(s->ctx, s->slot);
  ctx_free(s->ctx, s);
}

LLVMValueRef cg_snippet_call(CgSnippet *s, CgMath *m, int32_t i, const LLVMValueRef *cache,
                             const LLVMValueRef *base, const LLVMValueRef *stride) {
  const KernelIr *k = s ? s->k : NULL;
  if (!k || i < 0 || i >= k->ninstr || k->instrs[i].kind != KI_USER) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: user call %d without a lowered snippet", i);
    return LLVMGetUndef(LLVMInt1TypeInContext(m->c));
  }
  const KInstr *in = &k->instrs[i];
  const SnFunc *f = &s->mod->funcs[in->op];
  LLVMValueRef args[2 * 64 + 2];
  unsigned n = 0;
  for (int p = 0; p < f->nparam; p++) {
    const SnVar *v = &s->mod->vars[f->var_begin + p];
    int32_t a = k->user_args[in->buf + p];
    if (is_raw(v)) {
      int b = -a - 1;
      LLVMValueRef sz = stride[(size_t)b * (size_t)k->ndim];
      if (LLVMGetIntTypeWidth(LLVMTypeOf(sz)) < 64) sz = LLVMBuildSExt(m->b, sz, LLVMInt64TypeInContext(m->c), "");
      args[n++] = base[b];
      args[n++] = sz;
    } else {
      if (!cache[a]) {
        diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: user call %%%d uses %%%d before it is computed", i, a);
        return LLVMGetUndef(LLVMInt1TypeInContext(m->c));
      }
      args[n++] = cache[a];
    }
  }
  if (ir_snippet_func_has_state(s->mod, in->op)) {
    if (!s->state) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: user call %%%d outside a worker (no loop_prep state)", i);
      return LLVMGetUndef(LLVMInt1TypeInContext(m->c));
    }
    args[n++] = s->state;
  }
  return LLVMBuildCall2(m->b, s->fty[in->op], s->fn[in->op], args, n, "");
}

bool cg_snippet_has_worker(const CgSnippet *s) { return s && s->worker; }

LLVMTypeRef cg_snippet_state_type(const CgSnippet *s) { return s ? s->state_ty : NULL; }

/* Calls region function fi (SF_PREP / SF_AFTER) with the kernel's raw buffers (found through the
 * KI_USER call of the kernel function: the region's raw params are the kernel function's, in order)
 * and npoints for _ind.size(). */
static void call_region(CgSnippet *s, CgMath *m, int32_t fi, const LLVMValueRef *base, const LLVMValueRef *stride,
                        LLVMValueRef npoints) {
  const KernelIr *k = s->k;
  const SnModule *mod = s->mod;
  int32_t call = -1;
  for (int32_t i = 0; i < k->ninstr && call < 0; i++)
    if (k->instrs[i].kind == KI_USER && k->instrs[i].op == mod->kernel) call = i;
  if (call < 0 || fi < 0 || fi >= mod->nfunc || !s->fn[fi] || !s->state) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: kernel '%s' has loop_prep / after_loop but no kernel call", k->name);
    return;
  }
  const SnFunc *kf = &mod->funcs[mod->kernel], *f = &mod->funcs[fi];
  const KInstr *in = &k->instrs[call];
  LLVMValueRef args[2 * 64 + 2];
  unsigned n = 0;
  int32_t kp = 0; /* next kernel param to match a raw param */
  for (int32_t p = 0; p < f->nparam && p < 64; p++) {
    const SnVar *v = &mod->vars[f->var_begin + p];
    if (v->kind == SV_SPECIAL && v->special == SN_SPECIAL_SIZE) {
      args[n++] = npoints;
      continue;
    }
    while (kp < kf->nparam && !is_raw(&mod->vars[kf->var_begin + kp])) kp++;
    if (!is_raw(v) || kp >= kf->nparam || mod->vars[kf->var_begin + kp].dtype != v->dtype) {
      diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: %s param %d does not match the kernel's raw params", f->name, p);
      return;
    }
    int b = -k->user_args[in->buf + kp] - 1;
    kp++;
    LLVMValueRef sz = stride[(size_t)b * (size_t)k->ndim];
    if (LLVMGetIntTypeWidth(LLVMTypeOf(sz)) < 64) sz = LLVMBuildSExt(m->b, sz, LLVMInt64TypeInContext(m->c), "");
    args[n++] = base[b];
    args[n++] = sz;
  }
  args[n++] = s->state;
  LLVMBuildCall2(m->b, s->fty[fi], s->fn[fi], args, n, "");
}

void cg_snippet_worker_begin(CgSnippet *s, CgMath *m, LLVMValueRef state, const LLVMValueRef *base,
                             const LLVMValueRef *stride, LLVMValueRef npoints) {
  if (!s || !s->worker) return;
  s->state = state;
  LLVMBuildStore(m->b, LLVMConstNull(s->state_ty), state);
  if (s->mod->prep >= 0) call_region(s, m, s->mod->prep, base, stride, npoints);
}

void cg_snippet_worker_end(CgSnippet *s, CgMath *m, const LLVMValueRef *base, const LLVMValueRef *stride,
                           LLVMValueRef npoints) {
  if (!s || !s->worker) return;
  if (s->mod->after >= 0) call_region(s, m, s->mod->after, base, stride, npoints);
  s->state = NULL;
}

LLVMValueRef cg_snippet_user_out(CgSnippet *s, CgMath *m, int32_t i, LLVMValueRef agg) {
  return LLVMBuildExtractValue(m->b, agg, s->k->instrs[i].op, "");
}

LLVMValueRef cg_snippet_identity(CgSnippet *s, CgMath *m) {
  if (!s || s->mod->identity < 0) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: a user reduction without an identity function");
    return LLVMGetUndef(LLVMInt1TypeInContext(m->c));
  }
  int32_t f = s->mod->identity;
  return LLVMBuildCall2(m->b, s->fty[f], s->fn[f], NULL, 0, "");
}

LLVMValueRef cg_snippet_combine(CgSnippet *s, CgMath *m, LLVMValueRef a, LLVMValueRef v) {
  if (!s || s->mod->reduce < 0) {
    diag_error(m->d, LOOM_ERR_INTERNAL, "codegen: a user reduction without a reduce function");
    return a;
  }
  int32_t f = s->mod->reduce;
  LLVMValueRef args[2] = {a, v};
  return LLVMBuildCall2(m->b, s->fty[f], s->fn[f], args, 2, "");
}
