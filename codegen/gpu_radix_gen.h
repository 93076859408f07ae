/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_radix_gen.h: what the radix sort's kernel generators share (codegen/gpu_radix.c: histogram and
 * pass kernels; codegen/gpu_radix_rank.c: the pass's shared-memory ranking; codegen/gpu_radix_rows.c: the
 * block row sorts; codegen/gpu_radix_take.c: the grid-stride zero and gather kernels): the generator
 * state and small LLVM builders. Internal to those files. */
#ifndef LOOM_CG_GPU_RADIX_GEN_H
#define LOOM_CG_GPU_RADIX_GEN_H

#include <string.h>

#include <llvm-c/Core.h>

#include "codegen/gpu_radix.h"
#include "codegen/nvptx.h"

typedef struct Gen {
  CgMath m;
  CgGpuHooks h;
  CgRadixSpec spec;
  CgRadixShape sh;
  LLVMBuilderRef b;
  LLVMTypeRef i1, i8, i32, i64, kt, vt, mt, pg, ps; /* kt keys, vt values, mt wave masks; pointers */
  int kbits, nwarps;
  LLVMValueRef fn;
} Gen;

/* ---- small builders ------------------------------------------------------------------------------- */
static inline LLVMValueRef c32(Gen *g, uint64_t v) { return LLVMConstInt(g->i32, v, 0); }
static inline LLVMValueRef c64(Gen *g, uint64_t v) { return LLVMConstInt(g->i64, v, 0); }
static inline LLVMValueRef ck(Gen *g, uint64_t v) { return LLVMConstInt(g->kt, v, 0); }
static inline LLVMValueRef thread_id(Gen *g) { return g->h.index(&g->m, CG_GPU_THREAD_ID); }

static inline LLVMValueRef at(Gen *g, LLVMTypeRef t, LLVMValueRef base, LLVMValueRef i) {
  return LLVMBuildGEP2(g->b, t, base, &i, 1, "");
}
static inline LLVMValueRef load(Gen *g, LLVMTypeRef t, LLVMValueRef p, unsigned align) {
  LLVMValueRef v = LLVMBuildLoad2(g->b, t, p, "");
  LLVMSetAlignment(v, align);
  return v;
}
static inline void store(Gen *g, LLVMValueRef v, LLVMValueRef p, unsigned align) {
  LLVMSetAlignment(LLVMBuildStore(g->b, v, p), align);
}
static inline LLVMValueRef sel(Gen *g, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(g->b, c, a, b, "");
}
static inline LLVMValueRef ult(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildICmp(g->b, LLVMIntULT, a, b, ""); }
static inline LLVMValueRef eq(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildICmp(g->b, LLVMIntEQ, a, b, ""); }
static inline LLVMValueRef add(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildAdd(g->b, a, b, ""); }
static inline LLVMValueRef mul(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildMul(g->b, a, b, ""); }
static inline LLVMValueRef zext64(Gen *g, LLVMValueRef v) { return LLVMBuildZExt(g->b, v, g->i64, ""); }

/* Opens `if (cond)`: the builder moves into the then-block; close with if_end(g, returned block). */
static inline LLVMBasicBlockRef if_begin(Gen *g, LLVMValueRef cond) {
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "then");
  LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(g->m.c, g->fn, "after");
  LLVMBuildCondBr(g->b, cond, then, after);
  LLVMPositionBuilderAtEnd(g->b, then);
  return after;
}
static inline void if_end(Gen *g, LLVMBasicBlockRef after) {
  LLVMBuildBr(g->b, after);
  LLVMPositionBuilderAtEnd(g->b, after);
}

static inline LLVMValueRef atomic_add(Gen *g, LLVMValueRef p, LLVMValueRef v) {
  return LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, p, v, LLVMAtomicOrderingMonotonic, 0);
}

/* A shared-memory array of n elements of t (one per kernel that uses it). */
static inline LLVMValueRef shared_array(Gen *g, const char *name, LLVMTypeRef t, unsigned n, unsigned align) {
  LLVMTypeRef at_ = LLVMArrayType2(t, n);
  LLVMValueRef v = LLVMAddGlobalInAddressSpace(g->m.m, at_, name, g->h.as_shared);
  LLVMSetInitializer(v, g->h.shared_poison ? LLVMGetPoison(at_) : LLVMGetUndef(at_));
  LLVMSetLinkage(v, LLVMInternalLinkage);
  LLVMSetAlignment(v, align);
  return v;
}

/* A kernel entry named `name` with the given parameters; the builder at its entry block. */
static inline void begin_kernel(Gen *g, const char *name, LLVMTypeRef *params, unsigned n) {
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(g->m.c), params, n, 0);
  g->fn = LLVMAddFunction(g->m.m, name, fty);
  g->h.mark_kernel(&g->m, g->fn, g->sh.block, false);
  if (g->spec.amdgpu && g->spec.wave == 64) /* gfx10+ run these kernels in wave64 mode, as gfx9 does */
    LLVMAddTargetDependentFunctionAttr(g->fn, "target-features", "+wavefrontsize64");
  LLVMPositionBuilderAtEnd(g->b, LLVMAppendBasicBlockInContext(g->m.c, g->fn, "entry"));
}

/* v (i32) made here: a register copy the optimizer cannot move, so that LLVM does not sink the rank's
 * arithmetic into the staging after the barriers (that keeps 3 words per item live instead of one). */
static inline LLVMValueRef pin(Gen *g, LLVMValueRef v) {
  if (g->spec.amdgpu) return v; /* its code-object writer takes no inline assembly (no asm parser linked) */
  LLVMTypeRef fty = LLVMFunctionType(g->i32, &g->i32, 1, 0);
  static const char code[] = "mov.b32 $0, $1;", cons[] = "=r,r";
  LLVMValueRef asm_ = LLVMGetInlineAsm(fty, (char *)code, sizeof code - 1, (char *)cons, sizeof cons - 1, 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(g->b, fty, asm_, &v, 1, "");
}

/* NVPTX launch bounds of the kernel being built: at most `threads` per block and at least `blocks`
 * resident per multiprocessor (ptxas then keeps the registers within 64K / (threads x blocks)). */
static inline void launch_bounds(Gen *g, int threads, int blocks) {
  if (g->spec.amdgpu) return;
  static const char *const keys[2] = {"maxntidx", "minctasm"};
  int vals[2] = {threads, blocks};
  for (int i = 0; i < 2; i++) {
    LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->m.c, keys[i], strlen(keys[i])),
                              LLVMValueAsMetadata(c32(g, (unsigned)vals[i]))};
    LLVMAddNamedMetadataOperand(g->m.m, "nvvm.annotations", LLVMMetadataAsValue(g->m.c, LLVMMDNodeInContext2(g->m.c, ops, 3)));
  }
}

/* The pieces the row sort shares (gpu_radix_rank.c, gpu_radix.c): the order-preserving image of a key
 * (xor desc), its 8-bit digit at bit `shift` (a kt value) as i32, desc (i64 0 / -1) as a kt mask, the
 * block's exclusive scan of one i32 a thread (wsum: nwarps shared words; ends with a barrier), and one
 * item's stable rank in its wave (wc: the wave's 256 shared digit counters). */
LLVMValueRef cg_radix_key_image(Gen *g, LLVMValueRef k, LLVMValueRef desc);
LLVMValueRef cg_radix_digit(Gen *g, LLVMValueRef u, LLVMValueRef shift);
LLVMValueRef cg_radix_desc_of(Gen *g, LLVMValueRef desc64);
LLVMValueRef cg_radix_block_scan(Gen *g, LLVMValueRef v, LLVMValueRef tid, LLVMValueRef wsum);
LLVMValueRef cg_radix_wave_rank(Gen *g, LLVMValueRef ok, LLVMValueRef dig, LLVMValueRef lane, LLVMValueRef wc);

/* ---- the pass kernel's state (gpu_radix.c; the shared-memory ranking of gpu_radix_rank.c) ---------------- */
/* The tile's row, its first key's index in the row and its key count (i64), from tile number t (i32). */
typedef struct Tile {
  LLVMValueRef row, start, valid, row_base; /* row_base: row * n */
  LLVMValueRef valid32;                     /* valid as i32 (at most a tile) */
  LLVMValueRef in_row;                      /* the tile's index within its row (i32) */
} Tile;

typedef struct PassState {
  LLVMValueRef keys_in, keys_out, vals_in, vals_out, scratch, n, tpr, rows, pass, desc, mode;
  LLVMValueRef keys_alt, vals_alt0, vals_alt1; /* the planned kernel's other buffers (NULL: all_passes) */
  LLVMValueRef plan_or, plan_uniform;          /* the pass's summary word and whether rows agree (i1) */
  LLVMValueRef plan;                           /* the tile's row's plan word (i32), or NULL: every pass runs */
  LLVMValueRef plan_slot;                      /* shared i32: the word, read again where used after the loads */
  bool plan_kept;                              /* past the loads: the word is read from plan_slot (no register) */
  LLVMValueRef tid, lane, warp, shift;
  LLVMValueRef stage, wc, ts, sb, wsum;
  LLVMValueRef stage_d; /* the staged slots' digits (i8; cg_radix_stages_digits) or NULL */
  Tile x;
  LLVMValueRef key[CG_RADIX_MAX_ITEMS], val[CG_RADIX_MAX_ITEMS], dig[CG_RADIX_MAX_ITEMS], rank[CG_RADIX_MAX_ITEMS];
  LLVMValueRef ok[CG_RADIX_MAX_ITEMS], dest[CG_RADIX_MAX_ITEMS];
  bool packed; /* rank_items leaves rank[j] = rank | digit << 16 (digit 256: no key), dig and ok unset */
} PassState;

/* The wave's lanes whose item has digit dig (i32; ok: it is a key) as a wave mask (mt): one match-any
 * (NVPTX unless CgRadixSpec.ballot_rank) or 8 ballots. Every lane of the wave takes part. */
LLVMValueRef cg_radix_wave_peers(Gen *g, LLVMValueRef ok, LLVMValueRef dig);
/* An item's rank among its wave's items of its digit from its peers (gpu_radix_rank.c: the highest peer
 * takes the peers' slots from the wave's counter wc[dig] by one returning atomic, CgRadixSpec.atomic_rank;
 * in smem_rank's step 3 the counters hold tile slots). Every lane of the wave takes part. */
LLVMValueRef cg_radix_wave_take(Gen *g, LLVMValueRef ok, LLVMValueRef dig, LLVMValueRef peers, LLVMValueRef lane,
                                LLVMValueRef wc);
/* Thread d publishes the tile's count of digit d (flag 1; flag 2 for a row's first tile). */
void cg_radix_publish_count(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef count);
/* Stages the values of the thread's items (ok[j]) at tile slots pos[j] (i32) of stage_v. */
void cg_radix_stage_values(Gen *g, PassState *s, LLVMValueRef stage_v, LLVMValueRef *ok, LLVMValueRef *pos);
/* The shared-memory ranking (gpu_radix_rank.c, CgRadixSpec.smem_rank), after the keys are loaded (s->key,
 * s->ok): the tile's digit counts per wave by shared atomics, published (thread d: digit d) and scanned
 * (*tstart: the tile's keys of smaller digits; *rstart: the row's, from hcount), then every item ranked
 * to its tile slot and staged with its value; ends before the look-back (no barrier after staging). */
void cg_radix_smem_rank(Gen *g, PassState *s, LLVMValueRef tile, LLVMValueRef hcount, LLVMValueRef stage_v,
                        LLVMValueRef *run, LLVMValueRef *tstart, LLVMValueRef *rstart);

/* ---- trivial passes (gpu_radix_plan.c) ---- */
/* loom_radix_plan and loom_radix_copy (gpu_radix.h). */
void cg_radix_gen_plan(Gen *g);
void cg_radix_gen_copy(Gen *g);
/* The planned pass kernel's entry, before the tile is taken: the pass's summary words; every thread
 * returns when the pass is trivial for every row. */
void cg_radix_plan_early(Gen *g, PassState *s);
/* After the tile (s->x) is known: s->plan, the row's word; every thread returns when it is trivial.
 * Thread 0 keeps it in shared memory (s->plan_slot: visible after the block's next barrier); once
 * s->plan_kept is set the helpers below read it from there rather than hold it in a register. */
void cg_radix_plan_tile(Gen *g, PassState *s);
/* Where the pass reads and writes (the parameters when s->plan is NULL), made at the point of use so
 * that no pointer stays live in a register: keys' source and destination, values' source and
 * destination, and the values' mode (vals_mode & 3 and the widening bit 4) for this row's pass. */
LLVMValueRef cg_radix_keys_src(Gen *g, PassState *s);
LLVMValueRef cg_radix_keys_dst(Gen *g, PassState *s);
LLVMValueRef cg_radix_vals_src(Gen *g, PassState *s);
LLVMValueRef cg_radix_vals_dst(Gen *g, PassState *s);
LLVMValueRef cg_radix_vals_mode(Gen *g, PassState *s);

/* The grid-stride kernels (gpu_radix_take.c). */
void cg_radix_gen_zero(Gen *g);
void cg_radix_gen_take(Gen *g, int bytes);
/* The block row sort of `items` keys a thread (gpu_radix_rows.c): loom_radix_rows<items>. */
void cg_radix_gen_rows(Gen *g, int items);

#endif /* LOOM_CG_GPU_RADIX_GEN_H */
