/* SPDX-License-Identifier: Apache-2.0 */
/* test_promotion.c: NumPy 2 dtype promotion, the per-op dtype rules, NEP 50 weak scalars and the
 * reduction result dtypes. Links loom_internal; the context is built by hand (no runtime needed). */
#include <stdio.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/ir.h"

static int passed, failed;
#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond) passed++;                                                                            \
    else {                                                                                         \
      failed++;                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

enum { B = LOOM_BOOL, I8 = LOOM_INT8, I16 = LOOM_INT16, I32 = LOOM_INT32, I64 = LOOM_INT64,
       U8 = LOOM_UINT8, U16 = LOOM_UINT16, U32 = LOOM_UINT32, U64 = LOOM_UINT64,
       F16 = LOOM_FLOAT16, F32 = LOOM_FLOAT32, F64 = LOOM_FLOAT64 };

/* np.promote_types(row, column) in LoomDType order, generated once with NumPy 2.4.6:
 *   for a in names: print([np.promote_types(a, b).name for b in names]) */
static const int promote_table[12][12] = {
    {B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64},
    {I8, I8, I16, I32, I64, I16, I32, I64, F64, F16, F32, F64},
    {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F32, F64},
    {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, F64},
    {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64},
    {U8, I16, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64},
    {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F32, F64},
    {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, F64},
    {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, F64},
    {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64},
    {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F32, F64},
    {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64},
};

/* np.exp(np.zeros(1, t)).dtype for each t (same NumPy run) */
static const int float_of_table[12] = {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64};

static LoomContext ctx;
static LoomGraph *g;
static char buf[64];

static LoomNode input(LoomDType t) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = buf;
  a.dtype = t;
  a.ndim = 1;
  a.shape[0] = 3;
  a.strides[0] = 1;
  LoomNode x = -1;
  loom_input(g, &a, &x);
  return x;
}

static LoomDType dtype_of(LoomNode x) {
  LoomDType t = LOOM_DTYPE_COUNT;
  if (loom_node_info(g, x, &t, NULL, NULL) != LOOM_OK) return LOOM_DTYPE_COUNT;
  return t;
}

/* The dtype of a op b, or LOOM_DTYPE_COUNT on error. */
static LoomDType binary(LoomOp op, LoomNode a, LoomNode b) {
  LoomNode r;
  if (loom_binary(g, op, a, b, &r) != LOOM_OK) return LOOM_DTYPE_COUNT;
  return dtype_of(r);
}

static bool is_weak(LoomNode x) { return (g->ir.nodes[x].flags & IR_FLAG_WEAK) != 0; }

static void test_tables(void) {
  for (int a = 0; a < 12; a++) {
    for (int b = 0; b < 12; b++) {
      CHECK(dtype_promote((LoomDType)a, (LoomDType)b) == (LoomDType)promote_table[a][b]);
      if (dtype_promote((LoomDType)a, (LoomDType)b) != (LoomDType)promote_table[a][b])
        fprintf(stderr, "  promote(%s, %s)\n", loom_dtype_name((LoomDType)a), loom_dtype_name((LoomDType)b));
      /* through the graph: add of two arrays */
      CHECK(binary(LOOM_OP_ADD, input((LoomDType)a), input((LoomDType)b)) == (LoomDType)promote_table[a][b]);
    }
    CHECK(dtype_float_of((LoomDType)a) == (LoomDType)float_of_table[a]);
    LoomNode r;
    CHECK(loom_unary(g, LOOM_OP_EXP, input((LoomDType)a), &r) == LOOM_OK && dtype_of(r) == (LoomDType)float_of_table[a]);
    LoomDType back;
    CHECK(dtype_from_short_name(dtype_short_name((LoomDType)a), &back) && back == (LoomDType)a);
  }
  CHECK(strcmp(loom_dtype_name(LOOM_FLOAT32), "float32") == 0 && loom_dtype_name(LOOM_DTYPE_COUNT) == NULL);
  CHECK(loom_dtype_size(LOOM_INT16) == 2 && loom_dtype_size(LOOM_BOOL) == 1 && loom_dtype_size((LoomDType)99) == 0);
  CHECK(strcmp(loom_op_name(LOOM_OP_LOGICAL_NOT), "logical_not") == 0);
  CHECK(strcmp(op_info(LOOM_OP_ADD)->name, "add") == 0 && op_info(LOOM_OP_WHERE)->arity == 3);
  LoomOp op;
  CHECK(op_from_name("right_shift", &op) && op == LOOM_OP_RIGHT_SHIFT && !op_from_name("ADD", &op));
  LoomReduceOp rop;
  CHECK(reduce_op_from_name("argmax", &rop) && rop == LOOM_REDUCE_ARGMAX);
  CHECK(strcmp(loom_status_name(LOOM_ERR_AXIS), "LOOM_ERR_AXIS") == 0);
}

static void test_op_rules(void) {
  LoomNode b = input(LOOM_BOOL), i8 = input(LOOM_INT8), u8 = input(LOOM_UINT8), i32 = input(LOOM_INT32);
  LoomNode f16 = input(LOOM_FLOAT16), f32 = input(LOOM_FLOAT32), r;
  CHECK(binary(LOOM_OP_TRUEDIV, i8, i8) == LOOM_FLOAT64);
  CHECK(binary(LOOM_OP_TRUEDIV, b, b) == LOOM_FLOAT64);
  CHECK(binary(LOOM_OP_TRUEDIV, f16, f16) == LOOM_FLOAT16);
  CHECK(binary(LOOM_OP_TRUEDIV, i8, f16) == LOOM_FLOAT16);
  CHECK(binary(LOOM_OP_FLOORDIV, b, b) == LOOM_INT8);
  CHECK(binary(LOOM_OP_LEFT_SHIFT, b, b) == LOOM_INT8);
  CHECK(binary(LOOM_OP_BITWISE_AND, b, b) == LOOM_BOOL);
  CHECK(binary(LOOM_OP_BITWISE_AND, i8, u8) == LOOM_INT16);
  CHECK(binary(LOOM_OP_BITWISE_AND, i8, f32) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_LT, i8, f32) == LOOM_BOOL);
  CHECK(binary(LOOM_OP_LOGICAL_AND, i32, f32) == LOOM_BOOL);
  CHECK(binary(LOOM_OP_ATAN2, i8, u8) == LOOM_FLOAT32); /* promote -> int16 -> float32 */
  CHECK(binary(LOOM_OP_SUB, b, b) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_SUB, b, i8) == LOOM_INT8);
  CHECK(binary(LOOM_OP_ADD, b, b) == LOOM_BOOL);
  CHECK(loom_unary(g, LOOM_OP_ISNAN, f32, &r) == LOOM_OK && dtype_of(r) == LOOM_BOOL);
  CHECK(loom_unary(g, LOOM_OP_ABS, b, &r) == LOOM_OK && dtype_of(r) == LOOM_BOOL);
  CHECK(loom_unary(g, LOOM_OP_SIGN, b, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_unary(g, LOOM_OP_BITWISE_NOT, b, &r) == LOOM_OK && dtype_of(r) == LOOM_BOOL);
  CHECK(loom_where(g, i32, i8, u8, &r) == LOOM_OK && dtype_of(r) == LOOM_INT16);
  /* operand dtypes of the kernel typing rules */
  CHECK(ir_elem_operand_dtype(LOOM_OP_LT, LOOM_BOOL, LOOM_INT8, LOOM_FLOAT32) == LOOM_FLOAT32);
  CHECK(ir_elem_operand_dtype(LOOM_OP_EXP, LOOM_FLOAT32, LOOM_INT16, LOOM_INT16) == LOOM_FLOAT32);
  CHECK(ir_elem_operand_dtype(LOOM_OP_LOGICAL_AND, LOOM_BOOL, LOOM_INT8, LOOM_FLOAT32) == LOOM_BOOL);
  CHECK(ir_elem_operand_dtype(LOOM_OP_ISNAN, LOOM_BOOL, LOOM_FLOAT16, LOOM_FLOAT16) == LOOM_FLOAT16);
  CHECK(dtype_compute(LOOM_FLOAT16) == LOOM_FLOAT32 && dtype_compute(LOOM_INT8) == LOOM_INT8);
}

static void test_weak(void) {
  LoomNode b = input(LOOM_BOOL), i8 = input(LOOM_INT8), u8 = input(LOOM_UINT8), i64 = input(LOOM_INT64);
  LoomNode f16 = input(LOOM_FLOAT16), f32 = input(LOOM_FLOAT32), u64 = input(LOOM_UINT64);
  LoomNode wi, wf, wb, wbig, wneg, r;
  CHECK(loom_weak_int(g, 3, &wi) == LOOM_OK && is_weak(wi) && dtype_of(wi) == LOOM_INT64);
  CHECK(loom_weak_float(g, 2.5, &wf) == LOOM_OK && dtype_of(wf) == LOOM_FLOAT64);
  CHECK(loom_weak_bool(g, 5, &wb) == LOOM_OK && dtype_of(wb) == LOOM_BOOL);
  CHECK(g->ir.nodes[wb].value.u == 1);
  CHECK(loom_weak_int(g, 300, &wbig) == LOOM_OK);
  CHECK(loom_weak_int(g, -1, &wneg) == LOOM_OK);
  CHECK(binary(LOOM_OP_ADD, u8, wi) == LOOM_UINT8);
  CHECK(binary(LOOM_OP_ADD, wi, i8) == LOOM_INT8);
  CHECK(binary(LOOM_OP_ADD, f16, wi) == LOOM_FLOAT16);
  CHECK(binary(LOOM_OP_ADD, b, wi) == LOOM_INT64);
  CHECK(binary(LOOM_OP_ADD, f32, wf) == LOOM_FLOAT32);
  CHECK(binary(LOOM_OP_ADD, f16, wf) == LOOM_FLOAT16);
  CHECK(binary(LOOM_OP_ADD, i8, wf) == LOOM_FLOAT64);
  CHECK(binary(LOOM_OP_ADD, b, wf) == LOOM_FLOAT64);
  CHECK(binary(LOOM_OP_ADD, i8, wb) == LOOM_INT8);
  CHECK(binary(LOOM_OP_ADD, f16, wb) == LOOM_FLOAT16);
  CHECK(binary(LOOM_OP_ADD, u64, wi) == LOOM_UINT64);
  CHECK(binary(LOOM_OP_TRUEDIV, i8, wi) == LOOM_FLOAT64);
  CHECK(binary(LOOM_OP_MUL, i64, wi) == LOOM_INT64);
  /* out of range for the array's dtype */
  int32_t n = g->ir.nnodes;
  CHECK(loom_binary(g, LOOM_OP_ADD, u8, wbig, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(ctx_last_error(&ctx), "Python integer 300 out of bounds for uint8") == 0);
  CHECK(loom_binary(g, LOOM_OP_ADD, u8, wneg, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(loom_binary(g, LOOM_OP_ADD, i8, wbig, &r) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(g->ir.nnodes == n);
  /* comparisons with an out-of-range Python int are defined (NumPy 2): u8 < 300 is all true */
  CHECK(binary(LOOM_OP_LT, u8, wbig) == LOOM_BOOL);
  /* weak with weak stays weak, of the larger kind */
  CHECK(loom_binary(g, LOOM_OP_ADD, wi, wf, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT64 && is_weak(r));
  CHECK(loom_binary(g, LOOM_OP_ADD, wi, wb, &r) == LOOM_OK && dtype_of(r) == LOOM_INT64 && is_weak(r));
  CHECK(loom_binary(g, LOOM_OP_ADD, wb, wb, &r) == LOOM_OK && dtype_of(r) == LOOM_BOOL && is_weak(r));
  LoomNode ww;
  CHECK(loom_binary(g, LOOM_OP_MUL, wi, wi, &ww) == LOOM_OK && is_weak(ww));
  /* a weak expression (not a constant) next to an array becomes a cast */
  CHECK(loom_binary(g, LOOM_OP_ADD, i8, ww, &r) == LOOM_OK && dtype_of(r) == LOOM_INT8);
  CHECK(g->ir.nodes[g->ir.nodes[r].src[1]].kind == IR_CAST);
  /* the resolved constant carries the array's dtype and the value */
  CHECK(loom_binary(g, LOOM_OP_ADD, f32, wf, &r) == LOOM_OK);
  const IrNode *c = &g->ir.nodes[g->ir.nodes[r].src[1]];
  CHECK(c->kind == IR_CONST && c->dtype == LOOM_FLOAT32 && c->value.f == 2.5 && !(c->flags & IR_FLAG_WEAK));
  /* where: weak values resolve against each other's partner */
  CHECK(loom_where(g, b, f16, wf, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT16);
  CHECK(loom_where(g, b, wi, wf, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT64 && !is_weak(r));
}

static void test_reduce_dtypes(void) {
  struct {
    LoomReduceOp op;
    LoomDType in, out;
  } cases[] = {
      {LOOM_REDUCE_SUM, LOOM_BOOL, LOOM_INT64},     {LOOM_REDUCE_SUM, LOOM_INT8, LOOM_INT64},
      {LOOM_REDUCE_SUM, LOOM_UINT8, LOOM_UINT64},   {LOOM_REDUCE_SUM, LOOM_FLOAT16, LOOM_FLOAT16},
      {LOOM_REDUCE_PROD, LOOM_UINT32, LOOM_UINT64}, {LOOM_REDUCE_MEAN, LOOM_INT8, LOOM_FLOAT64},
      {LOOM_REDUCE_MEAN, LOOM_BOOL, LOOM_FLOAT64},  {LOOM_REDUCE_MEAN, LOOM_FLOAT32, LOOM_FLOAT32},
      {LOOM_REDUCE_MIN, LOOM_INT8, LOOM_INT8},      {LOOM_REDUCE_MAX, LOOM_BOOL, LOOM_BOOL},
      {LOOM_REDUCE_ANY, LOOM_FLOAT32, LOOM_BOOL},   {LOOM_REDUCE_ALL, LOOM_INT16, LOOM_BOOL},
      {LOOM_REDUCE_ARGMIN, LOOM_FLOAT16, LOOM_INT64}, {LOOM_REDUCE_ARGMAX, LOOM_UINT8, LOOM_INT64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    LoomNode r;
    CHECK(loom_reduce(g, cases[i].op, input(cases[i].in), 0, NULL, 0, &r) == LOOM_OK &&
          dtype_of(r) == cases[i].out);
  }
  LoomNode r;
  CHECK(loom_reduce_dtype(g, LOOM_REDUCE_SUM, input(LOOM_INT8), 0, NULL, 0, LOOM_INT16, &r) == LOOM_OK &&
        dtype_of(r) == LOOM_INT16);
  CHECK(loom_reduce_dtype(g, LOOM_REDUCE_ANY, input(LOOM_INT8), 0, NULL, 0, LOOM_INT16, &r) == LOOM_ERR_DTYPE);
}

int main(void) {
  ctx.alloc = *ir_default_allocator();
  if (loom_graph_create(&ctx, &g) != LOOM_OK) {
    printf("0 passed, 1 failed\n");
    return 1;
  }
  test_tables();
  test_op_rules();
  test_weak();
  test_reduce_dtypes();
  loom_graph_destroy(g);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
