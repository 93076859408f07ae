/* SPDX-License-Identifier: Apache-2.0 */
/* parse.c: readers for the text forms ir/print.c writes (see the grammar at the top of print.c).
 *
 * Approach: a hand-written cursor over the text that tracks line and column; one function per line
 * form, each with its grammar rule above it. Errors say "line L:C: expected X, found 'Y'". Parsed
 * graph nodes go through ir_add_raw (hash-consed, not inferred) and the result is checked with
 * ir_verify_graph; a failed parse rolls the graph back to where it was. Kernel arrays live in the
 * caller's arena (grown by doubling; the arena frees the old copies with everything else).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct Cursor {
  const char *p;
  const char *line_start;
  int line;
  Diag *d;
} Cursor;

static int col(const Cursor *c) { return (int)(c->p - c->line_start) + 1; }

static void skip_blank(Cursor *c) {
  while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r') c->p++;
}

static bool at_eol(Cursor *c) {
  skip_blank(c);
  return *c->p == '\n' || *c->p == '\0';
}

/* Moves past the end of the current line (and any blank lines). */
static void next_line(Cursor *c) {
  for (;;) {
    while (*c->p && *c->p != '\n') c->p++;
    if (*c->p == '\0') return;
    c->p++;
    c->line++;
    c->line_start = c->p;
    const char *q = c->p;
    while (*q == ' ' || *q == '\t' || *q == '\r') q++;
    if (*q != '\n') return;
  }
}

static LoomStatus fail(Cursor *c, const char *expected) {
  skip_blank(c);
  char found[24];
  size_t n = 0;
  while (n < sizeof found - 1 && c->p[n] && c->p[n] != '\n' && c->p[n] != ' ') {
    found[n] = c->p[n];
    n++;
  }
  found[n] = '\0';
  return diag_error(c->d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: expected %s, found '%s'", c->line, col(c),
                    expected, n ? found : (c->p[0] == '\0' ? "end of text" : "end of line"));
}

static bool is_word_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
         ch == '.' || ch == '-';
}

/* word = [A-Za-z0-9_.-]+ ; copies into buf (truncation is an error) */
static bool word(Cursor *c, char *buf, size_t n) {
  skip_blank(c);
  size_t k = 0;
  while (is_word_char(c->p[k])) k++;
  if (k == 0 || k >= n) return false;
  memcpy(buf, c->p, k);
  buf[k] = '\0';
  c->p += k;
  return true;
}

static bool accept(Cursor *c, const char *w) {
  skip_blank(c);
  size_t k = strlen(w);
  if (strncmp(c->p, w, k) != 0) return false;
  if (is_word_char(w[k - 1]) && is_word_char(c->p[k])) return false;
  c->p += k;
  return true;
}

static LoomStatus expect(Cursor *c, const char *w) {
  if (accept(c, w)) return LOOM_OK;
  char what[64];
  snprintf(what, sizeof what, "'%s'", w);
  return fail(c, what);
}

static LoomStatus parse_i64(Cursor *c, int64_t *out) {
  skip_blank(c);
  char *end;
  errno = 0;
  long long v = strtoll(c->p, &end, 10);
  if (end == c->p || errno) return fail(c, "an integer");
  c->p = end;
  *out = v;
  return LOOM_OK;
}

static LoomStatus parse_int(Cursor *c, int lo, int hi, int *out) {
  int64_t v = 0;
  LoomStatus st = parse_i64(c, &v);
  if (st) return st;
  if (v < lo || v > hi) {
    char what[64];
    snprintf(what, sizeof what, "an integer in %d..%d", lo, hi);
    return diag_error(c->d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: expected %s, found %lld", c->line, col(c),
                      what, (long long)v);
  }
  *out = (int)v;
  return LOOM_OK;
}

/* scalar = integer | unsigned | float (by the dtype's kind) */
static LoomStatus parse_scalar(Cursor *c, LoomDType t, Scalar *out) {
  skip_blank(c);
  char *end;
  errno = 0;
  out->u = 0;
  out->im = 0;
  switch (dtype_kind(t)) {
  case DK_FLOAT: out->f = strtod(c->p, &end); break;
  case DK_COMPLEX: /* re+imj, as print.c writes it */
    out->f = strtod(c->p, &end);
    if (end == c->p || (*end != '+' && *end != '-')) return fail(c, "a complex constant re+imj");
    c->p = end;
    out->im = strtod(c->p, &end);
    if (end == c->p || *end != 'j') return fail(c, "a complex constant re+imj");
    end++;
    break;
  case DK_INT: out->i = strtoll(c->p, &end, 10); break;
  default:
    if (*c->p == '-') return fail(c, "an unsigned integer");
    out->u = strtoull(c->p, &end, 10);
    break;
  }
  if (end == c->p || (errno && dtype_kind(t) != DK_FLOAT && dtype_kind(t) != DK_COMPLEX))
    return fail(c, "a constant value");
  c->p = end;
  return LOOM_OK;
}

static LoomStatus parse_dtype(Cursor *c, LoomDType *out) {
  char w[16];
  Cursor save = *c;
  if (word(c, w, sizeof w) && dtype_from_short_name(w, out)) return LOOM_OK;
  *c = save;
  return fail(c, "a dtype (b1 i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64 bf16 c64 c128)");
}

/* dims = "[" [int ("," int)*] "]" */
static LoomStatus parse_dims(Cursor *c, int *n, int64_t *v) {
  LoomStatus st = expect(c, "[");
  if (st) return st;
  *n = 0;
  if (accept(c, "]")) return LOOM_OK;
  for (;;) {
    if (*n >= LOOM_MAX_RANK) return fail(c, "at most 16 entries");
    if ((st = parse_i64(c, &v[(*n)++]))) return st;
    if (accept(c, "]")) return LOOM_OK;
    if ((st = expect(c, ","))) return st;
  }
}

/* ref = "%" int */
static LoomStatus parse_ref(Cursor *c, int32_t *out) {
  skip_blank(c);
  if (*c->p != '%') return fail(c, "'%N'");
  c->p++;
  int v;
  LoomStatus st = parse_int(c, 0, INT32_MAX, &v);
  *out = v;
  return st;
}

/* ---- graph ------------------------------------------------------------------------------------------- */
typedef struct IdMap {
  LoomContext *ctx;
  int32_t *v;
  int32_t n, cap;
} IdMap;

static bool idmap_push(IdMap *m, int32_t x) {
  if (m->n == m->cap) {
    int32_t cap = m->cap ? m->cap * 2 : 64;
    int32_t *v = ctx_alloc(m->ctx, sizeof(int32_t) * (size_t)cap);
    if (!v) return false;
    if (m->n) memcpy(v, m->v, sizeof(int32_t) * (size_t)m->n);
    ctx_free(m->ctx, m->v);
    m->v = v;
    m->cap = cap;
  }
  m->v[m->n++] = x;
  return true;
}

static LoomStatus map_ref(Cursor *c, const IdMap *m, int32_t *x) {
  int32_t r = 0;
  LoomStatus st = parse_ref(c, &r);
  if (st) return st;
  if (r >= m->n)
    return diag_error(c->d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: %%%d is used before it is defined", c->line,
                      col(c), r);
  *x = m->v[r];
  return LOOM_OK;
}

/* node = "%" N "=" kind ["weak"] dtype dims ref* extras
 * kind = "input" N | "const" | "reduce" redop | opname | "cast" | "broadcast" | "reshape" | "permute"
 *      | "slice" | "copy" | "matmul"
 * extras = "strides" dims | scalar | "perm" dims | "start" dims "step" dims | "axes" dims ["keepdims"] */
static LoomStatus parse_node_line(Cursor *c, IrGraph *g, IdMap *nodes, IdMap *inputs, Diag *d) {
  int32_t id = -1;
  LoomStatus st = parse_ref(c, &id);
  if (st) return st;
  if (id != nodes->n)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: expected node %%%d next, found %%%d", c->line,
                      col(c), nodes->n, id);
  if ((st = expect(c, "="))) return st;
  char kw[32];
  if (!word(c, kw, sizeof kw)) return fail(c, "a node kind or op name");
  IrNode n;
  memset(&n, 0, sizeof n);
  n.src[0] = n.src[1] = n.src[2] = -1;
  n.input = -1;
  int nsrc = 1;
  LoomOp op;
  LoomReduceOp rop;
  int input_text = -1;
  if (strcmp(kw, "input") == 0) {
    n.kind = IR_INPUT;
    nsrc = 0;
    if ((st = parse_int(c, 0, INT32_MAX, &input_text))) return st;
    if (input_text != inputs->n)
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: expected input %d next, found input %d",
                        c->line, col(c), inputs->n, input_text);
  } else if (strcmp(kw, "const") == 0) {
    n.kind = IR_CONST;
    nsrc = 0;
  } else if (strcmp(kw, "reduce") == 0 || strcmp(kw, "scan") == 0) {
    n.kind = kw[0] == 'r' ? IR_REDUCE : IR_SCAN;
    char rn[16];
    if (!word(c, rn, sizeof rn) || !reduce_op_from_name(rn, &rop)) return fail(c, "a reduction (sum prod ...)");
    n.op = (uint16_t)rop;
  } else if (strcmp(kw, "cast") == 0) n.kind = IR_CAST;
  else if (strcmp(kw, "broadcast") == 0) n.kind = IR_BROADCAST;
  else if (strcmp(kw, "reshape") == 0) n.kind = IR_RESHAPE;
  else if (strcmp(kw, "permute") == 0) n.kind = IR_PERMUTE;
  else if (strcmp(kw, "slice") == 0) n.kind = IR_SLICE;
  else if (strcmp(kw, "copy") == 0) n.kind = IR_COPY;
  else if (strcmp(kw, "matmul") == 0) {
    n.kind = IR_MATMUL;
    nsrc = 2;
  } else if (strcmp(kw, "iota") == 0) {
    n.kind = IR_IOTA;
    nsrc = 0;
  } else if (strcmp(kw, "gather") == 0 || strcmp(kw, "scatter") == 0) {
    n.kind = kw[1] == 'a' ? IR_GATHER : IR_SCATTER;
    nsrc = 3;
    char mn[16];
    int mode = -1;
    if (!word(c, mn, sizeof mn)) return fail(c, "a gather mode or scatter op");
    for (int i = 0; i < IR_GATHER_MODE_COUNT && n.kind == IR_GATHER; i++)
      if (strcmp(mn, ir_gather_mode_name(i)) == 0) mode = i;
    if (n.kind == IR_SCATTER)
      mode = strcmp(mn, "set") == 0   ? IR_SCATTER_SET
             : strcmp(mn, "add") == 0 ? IR_SCATTER_ADD
             : strcmp(mn, "put") == 0 ? IR_SCATTER_PUT
                                      : -1;
    if (mode < 0) return fail(c, n.kind == IR_GATHER ? "raise, wrap or clip" : "set, add or put");
    n.op = (uint16_t)mode;
  } else if (op_from_name(kw, &op)) {
    n.kind = IR_ELEM;
    n.op = (uint16_t)op;
    nsrc = op_info(op)->arity;
  } else {
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: unknown node kind or op '%s'", c->line,
                      col(c) - (int)strlen(kw), kw);
  }
  if (accept(c, "weak")) n.flags |= IR_FLAG_WEAK;
  LoomDType t;
  if ((st = parse_dtype(c, &t))) return st;
  n.dtype = (uint8_t)t;
  int nd;
  if ((st = parse_dims(c, &nd, n.shape))) return st;
  n.ndim = (uint8_t)nd;
  for (int k = 0; k < nsrc; k++)
    if ((st = map_ref(c, nodes, &n.src[k]))) return st;
  int m;
  int64_t tmp[LOOM_MAX_RANK];
  switch (n.kind) {
  case IR_INPUT: {
    if ((st = expect(c, "strides")) || (st = parse_dims(c, &m, tmp))) return st;
    if (m != nd) return fail(c, "as many strides as dims");
    LoomArray a;
    memset(&a, 0, sizeof a);
    a.dtype = t;
    a.ndim = nd;
    for (int i = 0; i < nd; i++) {
      a.shape[i] = n.shape[i];
      a.strides[i] = tmp[i];
    }
    int32_t idx;
    if ((st = ir_input_append(g, &a, &idx, d))) return st;
    if (!idmap_push(inputs, idx))
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory while parsing a graph");
    n.input = idx;
    break;
  }
  case IR_CONST:
    if ((st = parse_scalar(c, t, &n.value))) return st;
    n.value = ir_scalar_canon(t, n.value);
    break;
  case IR_PERMUTE:
    if ((st = expect(c, "perm")) || (st = parse_dims(c, &m, n.arg))) return st;
    if (m != nd) return fail(c, "one perm entry per dim");
    break;
  case IR_SLICE:
    if ((st = expect(c, "start")) || (st = parse_dims(c, &m, n.arg))) return st;
    if (m != nd) return fail(c, "one start per dim");
    if ((st = expect(c, "step")) || (st = parse_dims(c, &m, n.arg2))) return st;
    if (m != nd) return fail(c, "one step per dim");
    break;
  case IR_SCAN:
  case IR_GATHER:
  case IR_REDUCE:
    if ((st = expect(c, "axes")) || (st = parse_dims(c, &m, tmp))) return st;
    for (int i = 0; i < m; i++) {
      if (tmp[i] < 0 || tmp[i] >= LOOM_MAX_RANK) return fail(c, "axes in 0..15");
      n.axes |= 1u << tmp[i];
    }
    if (n.kind == IR_REDUCE && accept(c, "keepdims")) n.flags |= IR_FLAG_KEEPDIMS;
    break;
  default: break;
  }
  if (!at_eol(c)) return fail(c, "end of line");
  int32_t x;
  if ((st = ir_add_raw(g, &n, &x, d))) return st;
  if (!idmap_push(nodes, x)) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory while parsing a graph");
  return LOOM_OK;
}

/* graph = (node | "output" ref)* */
LoomStatus ir_parse_graph(IrGraph *g, const char *text, int32_t *nroots, int32_t *roots, int maxroots, Diag *d) {
  if (!g || !text) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ir_parse_graph: null argument");
  Cursor c = {text, text, 1, d};
  IdMap nodes = {g->ctx, NULL, 0, 0}, inputs = {g->ctx, NULL, 0, 0};
  int32_t mark = g->nnodes, mark_in = g->ninputs, nr = 0;
  LoomStatus st = LOOM_OK;
  const char *q = c.p;
  while (*q == ' ' || *q == '\t' || *q == '\r') q++;
  if (*q == '\n') next_line(&c);
  while (!st && *c.p) {
    if (at_eol(&c)) {
      next_line(&c);
      continue;
    }
    if (accept(&c, "output")) {
      int32_t x = -1;
      if (!(st = map_ref(&c, &nodes, &x))) {
        if (nr >= maxroots || !roots)
          st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "line %d: more than %d output lines", c.line, maxroots);
        else
          roots[nr++] = x;
        if (!st && !at_eol(&c)) st = fail(&c, "end of line");
      }
    } else {
      st = parse_node_line(&c, g, &nodes, &inputs, d);
    }
    if (!st) next_line(&c);
  }
  if (!st) st = ir_verify_graph(g, d);
  ctx_free(g->ctx, nodes.v);
  ctx_free(g->ctx, inputs.v);
  if (st) {
    ir_graph_rollback(g, mark, mark_in);
    return st;
  }
  if (nroots) *nroots = nr;
  return LOOM_OK;
}

/* ---- kernel ------------------------------------------------------------------------------------------- */
/* Grows an arena array of elem-byte items to hold n + 1; false on out of memory. */
static bool grow(Arena *a, void **arr, int32_t n, int32_t *cap, size_t elem) {
  if (n < *cap) return true;
  int32_t nc = *cap ? *cap * 2 : 16;
  void *p = arena_alloc(a, elem * (size_t)nc);
  if (!p) return false;
  if (n) memcpy(p, *arr, elem * (size_t)n);
  *arr = p;
  *cap = nc;
  return true;
}

static LoomStatus oom(Diag *d) { return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory while parsing a kernel"); }

/* instr = "%" N "=" ("load" dt "buf" N | "const" dt scalar | opname dt ref* | "cast" dt ref
 *         | "acc" dt "phase" N | "redsize" dt | "offset" dt "buf" N) */
static LoomStatus parse_instr(Cursor *c, KInstr *in, int32_t expect_id) {
  int32_t id = -1;
  LoomStatus st = parse_ref(c, &id);
  if (st) return st;
  if (id != expect_id)
    return diag_error(c->d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: expected instruction %%%d next, found %%%d",
                      c->line, col(c), expect_id, id);
  if ((st = expect(c, "="))) return st;
  char kw[32];
  if (!word(c, kw, sizeof kw)) return fail(c, "an instruction");
  memset(in, 0, sizeof *in);
  in->src[0] = in->src[1] = in->src[2] = -1;
  in->buf = in->phase = -1;
  LoomDType t;
  LoomOp op;
  if ((st = parse_dtype(c, &t))) return st;
  in->dtype = (uint8_t)t;
  int v;
  if (strcmp(kw, "load") == 0) {
    in->kind = KI_LOAD;
    if ((st = expect(c, "buf")) || (st = parse_int(c, 0, INT32_MAX, &v))) return st;
    in->buf = v;
  } else if (strcmp(kw, "const") == 0) {
    in->kind = KI_CONST;
    if ((st = parse_scalar(c, t, &in->value))) return st;
  } else if (strcmp(kw, "cast") == 0) {
    in->kind = KI_CAST;
    if ((st = parse_ref(c, &in->src[0]))) return st;
  } else if (strcmp(kw, "acc") == 0) {
    in->kind = KI_ACC;
    if ((st = expect(c, "phase")) || (st = parse_int(c, 0, INT32_MAX, &v))) return st;
    in->phase = v;
  } else if (strcmp(kw, "redsize") == 0) {
    in->kind = KI_REDSIZE;
  } else if (strcmp(kw, "param") == 0) {
    in->kind = KI_PARAM;
    if ((st = parse_int(c, 0, UINT16_MAX, &v))) return st;
    in->op = (uint16_t)v;
  } else if (strcmp(kw, "offset") == 0) {
    in->kind = KI_OFFSET;
    if ((st = expect(c, "buf")) || (st = parse_int(c, 0, INT32_MAX, &v))) return st;
    in->buf = v;
  } else if (strcmp(kw, "gather") == 0) {
    in->kind = KI_GATHER;
    if ((st = expect(c, "buf")) || (st = parse_int(c, 0, INT32_MAX, &v))) return st;
    in->buf = v;
    if ((st = parse_ref(c, &in->src[0]))) return st;
  } else if (op_from_name(kw, &op)) {
    in->kind = KI_ELEM;
    in->op = (uint16_t)op;
    for (int k = 0; k < op_info(op)->arity; k++)
      if ((st = parse_ref(c, &in->src[k]))) return st;
  } else {
    return diag_error(c->d, LOOM_ERR_INVALID_ARGUMENT, "line %d:%d: unknown instruction '%s'", c->line, col(c), kw);
  }
  if (!at_eol(c)) return fail(c, "end of line");
  return LOOM_OK;
}

/* call = "call" "matmul" "a" N "b" N "out" N "alpha" float ["bias" N] ["c" N "beta" float] ["act" name] */
static LoomStatus parse_call(Cursor *c, Arena *a, KernelIr *k) {
  KCall *call = arena_alloc(a, sizeof *call);
  if (!call) return oom(c->d);
  call->bias = call->c = -1;
  LoomStatus st;
  Scalar v;
  if ((st = expect(c, "matmul"))) return st;
  call->op = KC_MATMUL;
  if ((st = expect(c, "a")) || (st = parse_int(c, 0, INT32_MAX, &call->a))) return st;
  if ((st = expect(c, "b")) || (st = parse_int(c, 0, INT32_MAX, &call->b))) return st;
  if ((st = expect(c, "out")) || (st = parse_int(c, 0, INT32_MAX, &call->out))) return st;
  if ((st = expect(c, "alpha")) || (st = parse_scalar(c, LOOM_FLOAT64, &v))) return st;
  call->alpha = v.f;
  if (accept(c, "bias") && (st = parse_int(c, 0, INT32_MAX, &call->bias))) return st;
  if (accept(c, "c")) {
    if ((st = parse_int(c, 0, INT32_MAX, &call->c)) || (st = expect(c, "beta")) ||
        (st = parse_scalar(c, LOOM_FLOAT64, &v)))
      return st;
    call->beta = v.f;
  }
  if (accept(c, "act")) {
    char an[24];
    bool found = false;
    if (!word(c, an, sizeof an)) return fail(c, "an activation name");
    for (int i = 0; i < KACT_COUNT; i++)
      if (strcmp(an, ir_call_act_name((KCallAct)i)) == 0) {
        call->act = (uint8_t)i;
        found = true;
      }
    if (!found) return fail(c, "an activation (relu, gelu_tanh)");
  }
  k->call = call;
  return LOOM_OK;
}

/* kernel = "kernel" name "ndim" N "keep" N "index" N ["rows" N] ["cols"] ["colstride" (N | "other")]
 *          ("buf" N ("in"|"out") dt "[" layout ("," layout)* "]")*
 *          instr*
 *          ("phase" ("reduce" redop dt ref
 *                   | ("map" | "final" | "scan" redop dt ref ["round" dt]) ("store" "buf" N ref)*))*
 *          [call] */
LoomStatus ir_parse_kernel(Arena *a, const char *text, KernelIr **out, Diag *d) {
  if (!a || !text || !out) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "ir_parse_kernel: null argument");
  Cursor c = {text, text, 1, d};
  KernelIr *k = arena_alloc(a, sizeof *k);
  if (!k) return oom(d);
  int32_t capb = 0, capi = 0, capp = 0, caps = 0;
  LoomStatus st;
  while (at_eol(&c) && *c.p) next_line(&c);
  char name[64];
  int v;
  if ((st = expect(&c, "kernel"))) return st;
  if (!word(&c, name, sizeof name) || strlen(name) >= sizeof k->name) return fail(&c, "a kernel name");
  if (strcmp(name, "-") != 0) memcpy(k->name, name, strlen(name) + 1);
  if ((st = expect(&c, "ndim")) || (st = parse_int(&c, 0, LOOM_MAX_RANK, &v))) return st;
  k->ndim = v;
  if ((st = expect(&c, "keep")) || (st = parse_int(&c, 0, k->ndim, &v))) return st;
  k->nkeep = v;
  if ((st = expect(&c, "index")) || (st = parse_int(&c, 0, 64, &v))) return st;
  k->index_bits = (uint8_t)v;
  if (accept(&c, "rows")) {
    if ((st = parse_int(&c, 2, 1 << 20, &v))) return st;
    k->row_extent = v;
  }
  if (accept(&c, "cols")) k->walk_cols = 1;
  if (accept(&c, "colstride")) {
    if (accept(&c, "other")) k->col_stride = IR_COL_STRIDE_OTHER;
    else if ((st = parse_int(&c, -1, 4, &v))) return st;
    else if (v == 0 || v == 1) return fail(&c, "a column stride of 2, 3, 4, -1 or 'other'");
    else k->col_stride = (int8_t)v;
  }
  if (!at_eol(&c)) return fail(&c, "end of line");
  next_line(&c);
  while (*c.p) {
    if (at_eol(&c)) {
      next_line(&c);
      continue;
    }
    if (accept(&c, "buf")) {
      if ((st = parse_int(&c, k->nbuf, k->nbuf, &v))) return st;
      if (!grow(a, (void **)&k->bufs, k->nbuf, &capb, sizeof(KBuffer))) return oom(d);
      KBuffer *b = &k->bufs[k->nbuf];
      memset(b, 0, sizeof *b);
      if (accept(&c, "out")) b->is_output = 1;
      else if ((st = expect(&c, "in"))) return st;
      LoomDType t;
      if ((st = parse_dtype(&c, &t)) || (st = expect(&c, "["))) return st;
      b->dtype = (uint8_t)t;
      for (int i = 0; i < k->ndim; i++) {
        if (i && (st = expect(&c, ","))) return st;
        skip_blank(&c);
        char ch = *c.p;
        if (ch == 's') b->layout[i] = KL_ANY;
        else if (ch == '0') b->layout[i] = KL_ZERO;
        else if (ch == '1') b->layout[i] = KL_ONE;
        else if (ch == 'r') b->layout[i] = KL_NEG1;
        else if (ch >= '2' && ch <= '4') b->layout[i] = (uint8_t)(KL_TWO + (ch - '2'));
        else return fail(&c, "a layout letter (s, 0, 1, r, 2, 3 or 4)");
        c.p++;
      }
      if ((st = expect(&c, "]"))) return st;
      k->nbuf++;
    } else if (accept(&c, "phase")) {
      if (!grow(a, (void **)&k->phases, k->nphase, &capp, sizeof(KPhase))) return oom(d);
      KPhase *p = &k->phases[k->nphase];
      memset(p, 0, sizeof *p);
      p->value = -1;
      if (accept(&c, "reduce")) {
        char rn[16];
        LoomReduceOp rop;
        LoomDType t;
        if (!word(&c, rn, sizeof rn) || !reduce_op_from_name(rn, &rop)) return fail(&c, "a reduction");
        if ((st = parse_dtype(&c, &t)) || (st = parse_ref(&c, &p->value))) return st;
        p->kind = KP_REDUCE;
        p->reduce_op = (uint8_t)rop;
        p->acc_dtype = (uint8_t)t;
      } else {
        if (accept(&c, "map")) p->kind = KP_MAP;
        else if (accept(&c, "final")) p->kind = KP_FINAL;
        else if (accept(&c, "scan")) {
          char rn[16];
          LoomReduceOp rop;
          LoomDType t;
          if (!word(&c, rn, sizeof rn) || !reduce_op_from_name(rn, &rop)) return fail(&c, "a scan op");
          if ((st = parse_dtype(&c, &t)) || (st = parse_ref(&c, &p->value))) return st;
          p->kind = KP_SCAN;
          p->reduce_op = (uint8_t)rop;
          p->acc_dtype = (uint8_t)t;
          if (accept(&c, "round")) {
            if ((st = parse_dtype(&c, &t))) return st;
            p->scan_round = (uint8_t)t;
          }
        } else return fail(&c, "'reduce', 'map', 'final' or 'scan'");
      }
      { /* stores: a reduce phase's are side stores, run at each point it folds (ir.h) */
        p->store_begin = k->nstore;
        while (accept(&c, "store")) {
          if (!grow(a, (void **)&k->stores, k->nstore, &caps, sizeof(KStore))) return oom(d);
          KStore *s = &k->stores[k->nstore];
          if ((st = expect(&c, "buf")) || (st = parse_int(&c, 0, INT32_MAX, &v))) return st;
          s->buf = v;
          if ((st = parse_ref(&c, &s->value))) return st;
          s->scatter = 0;
          s->op = 0;
          s->index = s->limit = -1;
          if (accept(&c, "at")) {
            s->scatter = 1;
            if ((st = parse_ref(&c, &s->index)) || (st = expect(&c, "limit")) || (st = parse_ref(&c, &s->limit))) return st;
            if (accept(&c, "add")) s->op = IR_SCATTER_ADD;
            else if ((st = expect(&c, "set"))) return st;
          }
          k->nstore++;
          p->nstores++;
        }
      }
      k->nphase++;
    } else if (accept(&c, "call")) {
      if (k->call) return fail(&c, "one call per kernel");
      if ((st = parse_call(&c, a, k))) return st;
    } else {
      if (!grow(a, (void **)&k->instrs, k->ninstr, &capi, sizeof(KInstr))) return oom(d);
      if ((st = parse_instr(&c, &k->instrs[k->ninstr], k->ninstr))) return st;
      if (k->instrs[k->ninstr].kind == KI_PARAM) k->nparam++;
      k->ninstr++;
    }
    if (!at_eol(&c)) return fail(&c, "end of line");
    next_line(&c);
  }
  if ((st = ir_verify_kernel(k, d))) return st;
  *out = k;
  return LOOM_OK;
}
