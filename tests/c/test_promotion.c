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
       F16 = LOOM_FLOAT16, F32 = LOOM_FLOAT32, F64 = LOOM_FLOAT64, BF16 = LOOM_BFLOAT16,
       C64 = LOOM_COMPLEX64, C128 = LOOM_COMPLEX128 };
#define NDT 15

/* np.promote_types(row, column) in LoomDType order, generated once with NumPy 2.4.6 and ml_dtypes
 * 0.7.0 (bfloat16 = ml_dtypes.bfloat16, whose NumPy promotion is JAX's and PyTorch's lattice):
 *   for a in names: print([np.promote_types(a, b).name for b in names]) */
static const int promote_table[NDT][NDT] = {
    {B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, C64, C128},
    {I8, I8, I16, I32, I64, I16, I32, I64, F64, F16, F32, F64, BF16, C64, C128},
    {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F32, F64, F32, C64, C128},
    {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, F64, F64, C128, C128},
    {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64, F64, C128, C128},
    {U8, I16, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, BF16, C64, C128},
    {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F32, F64, F32, C64, C128},
    {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, F64, F64, C128, C128},
    {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, F64, F64, C128, C128},
    {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64, F32, C64, C128},
    {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F32, F64, F32, C64, C128},
    {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, C128, C128},
    {BF16, BF16, F32, F64, F64, BF16, F32, F64, F64, F32, F32, F64, BF16, C64, C128},
    {C64, C64, C64, C128, C128, C64, C64, C128, C128, C64, C64, C128, C64, C64, C128},
    {C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128},
};

/* np.exp(np.zeros(1, t)).dtype for each t (same NumPy run) */
static const int float_of_table[NDT] = {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64, BF16, C64, C128};

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
  for (int a = 0; a < NDT; a++) {
    for (int b = 0; b < NDT; b++) {
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
  /* the appended dtypes: numbering, names and sizes are part of the public API */
  CHECK(LOOM_BFLOAT16 == 12 && LOOM_COMPLEX64 == 13 && LOOM_COMPLEX128 == 14 && LOOM_DTYPE_COUNT == 15);
  CHECK(strcmp(loom_dtype_name(LOOM_BFLOAT16), "bfloat16") == 0 && loom_dtype_size(LOOM_BFLOAT16) == 2);
  CHECK(strcmp(loom_dtype_name(LOOM_COMPLEX64), "complex64") == 0 && loom_dtype_size(LOOM_COMPLEX64) == 8);
  CHECK(strcmp(loom_dtype_name(LOOM_COMPLEX128), "complex128") == 0 && loom_dtype_size(LOOM_COMPLEX128) == 16);
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
  CHECK(binary(LOOM_OP_ATAN2, i8, u8) == LOOM_FLOAT16); /* NumPy's first float loop both cast to safely */
  CHECK(binary(LOOM_OP_HYPOT, i8, input(LOOM_UINT16)) == LOOM_FLOAT32);
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
  CHECK(dtype_compute(LOOM_BFLOAT16) == LOOM_FLOAT32 && dtype_compute(LOOM_COMPLEX64) == LOOM_COMPLEX64);
}

/* The complex rules: NumPy's complex loops (absolute of complex is real, floor and fmod have none). */
static void test_complex_rules(void) {
  LoomNode c64 = input(LOOM_COMPLEX64), c128 = input(LOOM_COMPLEX128), f32 = input(LOOM_FLOAT32);
  LoomNode i8 = input(LOOM_INT8), b = input(LOOM_BOOL), bf = input(LOOM_BFLOAT16), f16 = input(LOOM_FLOAT16), r;
  CHECK(loom_unary(g, LOOM_OP_ABS, c64, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT32);
  CHECK(loom_unary(g, LOOM_OP_ABS, c128, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT64);
  CHECK(loom_unary(g, LOOM_OP_REAL, c64, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT32);
  CHECK(loom_unary(g, LOOM_OP_IMAG, c128, &r) == LOOM_OK && dtype_of(r) == LOOM_FLOAT64);
  CHECK(loom_unary(g, LOOM_OP_REAL, i8, &r) == LOOM_OK && dtype_of(r) == LOOM_INT8);
  CHECK(loom_unary(g, LOOM_OP_CONJ, c64, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX64);
  CHECK(loom_unary(g, LOOM_OP_CONJ, b, &r) == LOOM_OK && dtype_of(r) == LOOM_INT8); /* NumPy: no bool loop */
  CHECK(loom_unary(g, LOOM_OP_EXP, c64, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX64);
  CHECK(loom_unary(g, LOOM_OP_SIGN, c128, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX128);
  CHECK(loom_unary(g, LOOM_OP_ISNAN, c64, &r) == LOOM_OK && dtype_of(r) == LOOM_BOOL);
  CHECK(loom_unary(g, LOOM_OP_FLOOR, c64, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_unary(g, LOOM_OP_CBRT, c128, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_unary(g, LOOM_OP_BITWISE_NOT, c64, &r) == LOOM_ERR_DTYPE);
  CHECK(binary(LOOM_OP_FLOORDIV, c64, c64) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_MOD, f32, c64) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_ATAN2, c64, f32) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_BITWISE_AND, c64, i8) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_TRUEDIV, c64, i8) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_POW, c64, f32) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_LT, c64, c128) == LOOM_BOOL);
  CHECK(binary(LOOM_OP_MAXIMUM, c64, bf) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_COMPLEX, f32, f32) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_COMPLEX, i8, i8) == LOOM_COMPLEX64); /* float16 parts widen to complex64 */
  CHECK(binary(LOOM_OP_COMPLEX, c64, f32) == LOOM_DTYPE_COUNT);
  CHECK(binary(LOOM_OP_ADD, bf, f16) == LOOM_FLOAT32);
  CHECK(binary(LOOM_OP_ADD, bf, i8) == LOOM_BFLOAT16);
  CHECK(loom_where(g, b, c64, f32, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX64);
  /* kernel typing: abs/real/imag read the complex value and give its parts' dtype */
  CHECK(ir_elem_operand_dtype(LOOM_OP_ABS, LOOM_FLOAT32, LOOM_COMPLEX64, LOOM_COMPLEX64) == LOOM_COMPLEX64);
  CHECK(ir_elem_value_dtype(LOOM_OP_ABS, LOOM_COMPLEX128) == LOOM_FLOAT64);
  CHECK(ir_elem_operand_dtype(LOOM_OP_COMPLEX, LOOM_COMPLEX64, LOOM_FLOAT32, LOOM_FLOAT32) == LOOM_FLOAT32);
  CHECK(ir_elem_value_dtype(LOOM_OP_COMPLEX, LOOM_FLOAT64) == LOOM_COMPLEX128);
  CHECK(ir_elem_value_dtype(LOOM_OP_LT, LOOM_COMPLEX64) == LOOM_BOOL);
  CHECK(dtype_real_of(LOOM_COMPLEX64) == LOOM_FLOAT32 && dtype_complex_of(LOOM_BFLOAT16) == LOOM_COMPLEX64 &&
        dtype_complex_of(LOOM_INT32) == LOOM_COMPLEX128 && dtype_complex_of(LOOM_FLOAT64) == LOOM_COMPLEX128);
  /* strong complex constants */
  CHECK(loom_const_complex(g, 1.5, -2.0, LOOM_COMPLEX64, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX64 &&
        g->ir.nodes[r].value.f == 1.5 && g->ir.nodes[r].value.im == -2.0);
  CHECK(loom_const_complex(g, 1.5, -2.0, LOOM_FLOAT32, &r) == LOOM_ERR_DTYPE);
  CHECK(loom_const_f64(g, 2.0, LOOM_COMPLEX128, &r) == LOOM_OK && g->ir.nodes[r].value.f == 2.0 &&
        g->ir.nodes[r].value.im == 0.0);
  /* complex64 constants round each part to float32; distinct constants stay distinct nodes */
  LoomNode k1, k2;
  CHECK(loom_const_complex(g, 0.1, 0.2, LOOM_COMPLEX64, &k1) == LOOM_OK &&
        g->ir.nodes[k1].value.f == (double)0.1f && g->ir.nodes[k1].value.im == (double)0.2f);
  CHECK(loom_const_complex(g, 0.1, 0.3, LOOM_COMPLEX64, &k2) == LOOM_OK && k1 != k2);
  CHECK(loom_const_f64(g, 1.0 + 0x1p-8 + 0x1p-30, LOOM_BFLOAT16, &r) == LOOM_OK &&
        g->ir.nodes[r].value.f == 1.0 + 0x1p-7); /* one rounding from the double, ties to even */
  /* mean of complex stays complex */
  CHECK(loom_reduce(g, LOOM_REDUCE_MEAN, c64, 0, NULL, 0, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX64);
  CHECK(loom_reduce(g, LOOM_REDUCE_SUM, bf, 0, NULL, 0, &r) == LOOM_OK && dtype_of(r) == LOOM_BFLOAT16);
  CHECK(loom_reduce(g, LOOM_REDUCE_ARGMAX, c128, 0, NULL, 0, &r) == LOOM_OK && dtype_of(r) == LOOM_INT64);
  CHECK(loom_reduce_dtype(g, LOOM_REDUCE_MEAN, i8, 0, NULL, 0, LOOM_COMPLEX64, &r) == LOOM_OK &&
        dtype_of(r) == LOOM_COMPLEX64);
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
  /* NEP 50 weak complex (a Python complex): the array's precision, complex128 by default */
  LoomNode wc, c64 = input(LOOM_COMPLEX64), f64 = input(LOOM_FLOAT64), bf = input(LOOM_BFLOAT16);
  CHECK(loom_weak_complex(g, 0.0, 1.0, &wc) == LOOM_OK && is_weak(wc) && dtype_of(wc) == LOOM_COMPLEX128);
  CHECK(binary(LOOM_OP_MUL, f32, wc) == LOOM_COMPLEX64); /* float32 array * 1j -> complex64 */
  CHECK(binary(LOOM_OP_MUL, f16, wc) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_MUL, bf, wc) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_MUL, f64, wc) == LOOM_COMPLEX128);
  CHECK(binary(LOOM_OP_MUL, i8, wc) == LOOM_COMPLEX128);
  CHECK(binary(LOOM_OP_MUL, b, wc) == LOOM_COMPLEX128);
  CHECK(binary(LOOM_OP_ADD, c64, wc) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_ADD, c64, wf) == LOOM_COMPLEX64); /* a Python float with complex64 */
  CHECK(binary(LOOM_OP_ADD, c64, wi) == LOOM_COMPLEX64);
  CHECK(binary(LOOM_OP_ADD, bf, wf) == LOOM_BFLOAT16);
  CHECK(binary(LOOM_OP_LT, i8, wc) == LOOM_BOOL);
  CHECK(loom_binary(g, LOOM_OP_ADD, wc, wf, &r) == LOOM_OK && dtype_of(r) == LOOM_COMPLEX128 && is_weak(r));
  CHECK(loom_binary(g, LOOM_OP_ADD, f32, wc, &r) == LOOM_OK);
  c = &g->ir.nodes[g->ir.nodes[r].src[1]];
  CHECK(c->kind == IR_CONST && c->dtype == LOOM_COMPLEX64 && c->value.f == 0.0 && c->value.im == 1.0);
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
  test_complex_rules();
  loom_graph_destroy(g);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
