/* SPDX-License-Identifier: Apache-2.0 */
/* lower_internal.h: private to pass_lower (passes/lower*.c): the Lower state and the functions one
 * file of the pass calls in another. See lower.c for the pass's contract.
 *
 *   lower.c       the pass: buffers and bindings, reads and constants, the cone walk, phases, scans
 *   lower_emit.c  instruction emission (CSE within a kernel) and float16/bfloat16 storage rounding
 *   lower_call.c  library-call kernels (IR_MATMUL): a KernelIr with a KCall
 *
 * Every function returning LoomStatus reports out of memory (pass_lower_oom) in l->d.
 */
#ifndef LOOM_PASSES_LOWER_INTERNAL_H
#define LOOM_PASSES_LOWER_INTERNAL_H

#include "passes/passes.h"

typedef struct Lower {
  IrModule *m;
  IrGraph *g;
  FusionPlan *p;
  Diag *d;
  int32_t *temp_of;
  int32_t *out_of; /* a root a call stores: the output (C-contiguous) that also serves as its temp; else -1 */
  Schedule *s;
  /* the kernel being built */
  const FusedKernel *K;
  uint64_t *param_word; /* per parameter of the kernel being built: its launch word (ir_param_word) */
  int32_t *param_node;  /* ... and the IR_CONST it holds (-1: none; SchedKernel.param_node) */
  int32_t nparam, capparam;
  int32_t *memo; /* node * 2 + space -> instruction; -1 unknown (reset between kernels) */
  int32_t *touched, ntouched, captouched; /* memo entries set for the current kernel */
  int32_t *frames, capframes;  /* value(): the explicit stack (node, space, start, next operand) */
  KInstr *ins;
  uint8_t *exact;              /* per instruction: EXACT_F16 / EXACT_BF16 bits (see pass_lower_round_to) */
  int32_t nins, capins;
  int32_t *itab, itcap;        /* hash table of ins (CSE), -1 empty */
  KBuffer *bufs;
  SchedBinding *bind;
  int32_t nbuf, capbuf;
  KStore *stores;
  int32_t nstore, capstore;
  KPhase *phases;
  int32_t nphase;
  int space; /* the phase space of the node value() is emitting (0: (o, r); 1: o) */
} Lower;

enum { EXACT_F16 = 1, EXACT_BF16 = 2 }; /* Lower.exact bits: the value is a float16 / bfloat16 value */

/* ---- lower_emit.c ------------------------------------------------------------------------------------- */
/* arr (n used, *cap allocated, elements of elem bytes) with room for one more: arr itself, a larger
 * arena copy (*cap updated), or NULL when out of memory. */
void *pass_lower_grow(Lower *l, void *arr, int32_t n, int32_t *cap, size_t elem);
LoomStatus pass_lower_oom(Lower *l);
uint8_t pass_lower_exact_bit(LoomDType s); /* EXACT_F16 / EXACT_BF16 of a storage dtype, else 0 */
void pass_lower_init_instr(KInstr *in, int kind, LoomDType dtype); /* zeroed, no operands */
/* Appends *in, or gives the equal instruction already emitted (*out). */
LoomStatus pass_lower_emit(Lower *l, const KInstr *in, int32_t *out);
LoomStatus pass_lower_cast_to(Lower *l, int32_t x, LoomDType dt, int32_t *out); /* x itself when of dt */
LoomStatus pass_lower_round_to(Lower *l, int32_t x, LoomDType s, int32_t *out);   /* f32 x rounded to s */
LoomStatus pass_lower_round16_f64(Lower *l, int32_t x, int32_t *out);             /* f64 x to f16, once */
/* x (of any dtype) rounded once to storage dtype s, as float32; with for_store the store rounds. */
LoomStatus pass_lower_round_once(Lower *l, int32_t x, LoomDType s, bool for_store, int32_t *out);

/* ---- lower.c ------------------------------------------------------------------------------------------ */
/* The buffer for a binding (reads are shared; every store gets its own). */
LoomStatus pass_lower_buffer(Lower *l, LoomDType dtype, bool is_output, SchedBufKind kind, int32_t index,
                             int64_t offset, const int64_t *strides, int32_t *out);

/* A scalar parameter of compute dtype ct (KI_PARAM, its launch word and its IR_CONST `node` recorded; -1
 * for a value not from a constant), or a KI_CONST when bake is set, the value is complex, or the kernel
 * has too many parameters (the constant is then noted as read: pass_note_const_read). */
LoomStatus pass_lower_param(Lower *l, LoomDType ct, Scalar value, bool bake, int32_t node, int32_t *out);
/* The buffer a resolved read binds (an input, a temp, an output; an iota's index buffer). */
LoomStatus pass_lower_bind_read(Lower *l, const ReadInfo *r, int32_t *out);
/* The value of read top x (a view of a leaf: a constant, an accumulator or a load), not walking a cone:
 * safe inside value()'s walk (pass_lower_value is not: it runs a walk of its own). */
LoomStatus pass_lower_read(Lower *l, int32_t x, int space, int32_t *out);
/* The instruction of node x (its cone) in phase space `space`; a realized x is read. Not reentrant. */
LoomStatus pass_lower_value(Lower *l, int32_t x, int space, int32_t *out);

/* ---- lower_gather.c ----------------------------------------------------------------------------------- */
/* The value of IR_GATHER x at the point from its index's instruction: the index made an element of the
 * axis by the mode, times the data's axis stride, read by KI_GATHER (or a constant, or an iota's offset). */
LoomStatus pass_lower_gather(Lower *l, int32_t x, int32_t idx, int space, int32_t *out);
/* The scatter kernel's store of IR_SCATTER x (values at their indices into x's buffer). */
LoomStatus pass_lower_scatter_store(Lower *l, int32_t x);

/* ---- lower_call.c ------------------------------------------------------------------------------------- */
LoomStatus pass_lower_call(Lower *l, int32_t kidx); /* the call kernel kidx of the plan */

#endif
