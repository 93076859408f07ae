/* SPDX-License-Identifier: Apache-2.0 */
/* lower_scan_lookback.c: the single-pass GPU scan of few long rows (decoupled look-back), the `finishb`
 * entry of a ROW scan kernel when LOOM_GPU_SCAN_LOOKBACK is not "0" (codegen.h: the kernel then has no
 * `part` entry, which is how the launcher tells the two protocols apart). One read and one write of
 * the data, against two reads and a write for the two-entry split of lower_scan.c.
 *
 * Tiles: each row's R is cut into tiles of B * K points (B threads, K items each; codegen.h
 * cg_scan_lb_items_of; the defaults 256 and 16, LOOM_GPU_SCAN_LB_BLOCK / LOOM_GPU_SCAN_LB_ITEMS for A/B
 * timings, in the target description through cg_gpu_scan_tag and in the kernel's part_lanes); tile
 * (o, part) is item part * no + o, and a block takes its items in launch order from a ticket counter
 * (an atomic add at the head of every item of the grid-stride loop) rather than from blockIdx: a tile
 * waits only for tiles of smaller tickets, taken earlier by blocks that are running, so the wait always
 * ends whatever the scheduler does (no deadlock, any grid).
 * One tile: each wave owns a segment of wave * items points (wave w: from w * wave * items); lane l reads
 * its item j at point seg + j * wave + l (coalesced; the fused producer is computed in these loads) and
 * stages it in the segment's shared slots, which the wave reads back thread-contiguous (thread tid holds
 * points tid * items + j, inside its wave's segment: a wave sync, no block barrier). The thread folds its
 * items in order, the block scans the threads' totals (wave butterflies, wave totals through shared
 * slots), and wave 0 publishes the tile's aggregate, looks back over the row's earlier tiles for its
 * exclusive prefix E and publishes E op aggregate as inclusive. Each point's value is E op (threads
 * before) op (its own prefix), the prefixes folded again from the staged values (the same steps: the same
 * bits), back through the segment so that the stores (the fused consumers) run coalesced; the loads those
 * stores read are issued for all items before the first store (prefetch_store_loads). Block barriers a
 * tile: 3 (ticket, wave totals, E). Nothing but the thread's total and (threads before) lives in registers
 * across the look-back, and shared slots are addressed from one base and constant offsets: 32 registers
 * (ptxas -v, sm_90, float32, 256 x 8 and 256 x 16; also the compaction kernels), 8 blocks of 256 a
 * multiprocessor.
 * Look-back: the wave reads the status of the wave-many tiles before its window's end at once (one per
 * lane), spins (a uniform loop) while any is still empty, takes the nearest inclusive one (a ballot)
 * and the aggregates after it, folds them in order across the wave and moves the window down if none
 * was inclusive. Status words (scratch, zeroed by the same entry's clear mode launched first on the
 * stream: codegen.h):
 *  - values of at most 4 bytes: one 64-bit word, flag << 32 | value bits, written and read with single
 *    64-bit atomic accesses, so a reader sees flag and value together;
 *  - wider values (float64, int64, complex): the value in its own array (aggregates and inclusive
 *    prefixes apart: a reader that saw flag 1 reads the aggregate, which never changes), then a release
 *    fence, then the 32-bit flag; the reader's flag loads are followed by an acquire fence before it
 *    reads values (volatile loads), so it never sees a flag with a stale value.
 * Float sums and products: where the look-back stops depends on timing, so the association of the
 * tiles' aggregates, and the last bits of float results, may change from run to run (integers, min and
 * max do not). float16 / bfloat16 scans round every combine as lower_scan.c describes.
 * Knobs (read once per process; non-default values go into the target description, the cache key):
 *  LOOM_GPU_SCAN_LB_BLOCK   threads per block, 64..1024, a power of two (default 256);
 *  LOOM_GPU_SCAN_LB_ITEMS   points per thread for accumulators up to 8 bytes, 1..32, a power of two
 *                           (default 8; halved for complex128 and while the staged tile and the
 *                           thread slots exceed 44 KB: codegen.h cg_scan_lb_items_of);
 *  LOOM_GPU_SCAN_LB_BACKOFF nanoseconds a look-back wave sleeps before re-reading a window that still
 *                           had an empty status (NVIDIA sm_70+ `nanosleep`; default 0: spin).
 * The launcher's LOOM_GPU_SCAN_LB_GRID caps the grid (runtime/gpu/gpu_launch_policy.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_lower.h"

enum { FLAG_AGGREGATE = 1, FLAG_INCLUSIVE = 2 };

bool cg_gpu_scan_lookback_on(void) {
  static int on = -1; /* read once: the codegen and the launches of a process agree */
  int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
  if (v < 0) {
    const char *s = getenv("LOOM_GPU_SCAN_LOOKBACK");
    v = !(s && s[0] == '0' && s[1] == 0);
    __atomic_store_n(&on, v, __ATOMIC_RELAXED);
  }
  return v != 0;
}

typedef struct LbKnobs {
  int block, items, backoff;
  char tag[64];
} LbKnobs;

/* A power of two in [lo, hi] from environment variable name, else def (a warning when set otherwise). */
static int knob_pow2(const char *name, int def, int lo, int hi) {
  const char *s = getenv(name);
  if (!s || !*s) return def;
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (*end || v < lo || v > hi || (v & (v - 1))) {
    fprintf(stderr, "loom: %s=%s ignored: give a power of two from %d to %d (default %d)\n", name, s, lo, hi, def);
    return def;
  }
  return (int)v;
}

static LbKnobs knobs;
static pthread_once_t knobs_once = PTHREAD_ONCE_INIT;

static void read_knobs(void) {
  LbKnobs n = {.block = knob_pow2("LOOM_GPU_SCAN_LB_BLOCK", CG_SCAN_LB_BLOCK, 64, 1024),
               .items = knob_pow2("LOOM_GPU_SCAN_LB_ITEMS", CG_SCAN_LB_ITEMS, 1, CG_SCAN_LB_ITEMS_MAX)};
  const char *b = getenv("LOOM_GPU_SCAN_LB_BACKOFF");
  long ns = b && *b ? strtol(b, NULL, 10) : 0;
  n.backoff = ns < 0 ? 0 : ns > 100000 ? 100000 : (int)ns;
  if (n.block != CG_SCAN_LB_BLOCK || n.items != CG_SCAN_LB_ITEMS)
    snprintf(n.tag, sizeof n.tag, " scanlb%dx%d", n.block, n.items);
  if (n.backoff) snprintf(n.tag + strlen(n.tag), sizeof n.tag - strlen(n.tag), " lbsleep%d", n.backoff);
  knobs = n;
}

/* Read once per process: the codegen and the target description agree. */
static const LbKnobs *lb_knobs(void) {
  pthread_once(&knobs_once, read_knobs);
  return &knobs;
}

const char *cg_gpu_scan_tag(void) { return !cg_gpu_scan_lookback_on() ? " scan2" : lb_knobs()->tag; }

bool cg_gpu_scan_lookback_kernel(const KernelIr *k, const CgGpuKernel *gk) {
  return cg_gpu_scan_lookback_on() && k->nphase == 1 && k->phases[0].kind == KP_SCAN && gk->strategy == CG_GPU_ROW &&
         gk->finishb[0];
}

typedef struct Lb {
  Lower *L;
  const KPhase *ph;
  LoomDType at;
  LLVMTypeRef t, st;       /* register type of the scanned values; their type in shared memory */
  int block, items, wave, nwave; /* threads per block, items per thread, threads per wave, waves per block */
  bool packed;             /* value and flag in one 64-bit status word */
  bool nvptx;              /* the module's target (the nanosleep backoff, the maxntid bound) */
  int backoff;             /* ns a look-back wave sleeps before re-reading an incomplete window */
  LLVMValueRef tid, lane, warp;
  LLVMValueRef tile_sm, thr_sm, wave_sm, misc_sm, ticket_sm, rlo_sm; /* shared arrays */
  LLVMValueRef scratch;    /* i8 pointer (global) */
  LLVMValueRef ntiles;     /* no * nparts (i64) */
  int acc_size;
} Lb;

static LLVMValueRef i32c(Lb *s, uint64_t v) { return LLVMConstInt(LLVMInt32TypeInContext(s->L->m.c), v, 0); }

static LLVMValueRef shared_array(Lb *s, const char *name, LLVMTypeRef elem, unsigned n) {
  return cg_gpu_shared_array(s->L, name, elem, n, 16);
}

static LLVMValueRef sm_ptr(Lb *s, LLVMValueRef arr, LLVMValueRef i) {
  LLVMValueRef ix[2] = {cg_iconst_i(s->L, 0), i};
  return LLVMBuildGEP2(s->L->m.b, LLVMGlobalGetValueType(arr), arr, ix, 2, "");
}

static void sm_store(Lb *s, LLVMValueRef arr, LLVMValueRef i, LLVMValueRef v) {
  LLVMBuilderRef b = s->L->m.b;
  if (s->st != s->t) v = LLVMBuildZExt(b, v, s->st, "");
  LLVMBuildStore(b, v, sm_ptr(s, arr, i));
}

static LLVMValueRef sm_load(Lb *s, LLVMValueRef arr, LLVMValueRef i) {
  LLVMBuilderRef b = s->L->m.b;
  LLVMValueRef v = LLVMBuildLoad2(b, s->st, sm_ptr(s, arr, i), "");
  return s->st != s->t ? LLVMBuildTrunc(b, v, s->t, "") : v;
}

/* Index i of the staged tile with one pad slot per 32 (thread-contiguous reads hit distinct banks). */
static LLVMValueRef pad(Lb *s, LLVMValueRef i) {
  return LLVMBuildAdd(s->L->m.b, i, LLVMBuildLShr(s->L->m.b, i, cg_iconst_i(s->L, 5), ""), "");
}

/* The slot of item j of a lane whose item 0 is at slot base (see scan_item). */
static LLVMValueRef wave_slot(Lb *s, LLVMValueRef base, int j) {
  return LLVMBuildAdd(s->L->m.b, base, cg_iconst_i(s->L, (int64_t)j * (s->wave + s->wave / 32)), "");
}

static LLVMValueRef step(Lb *s, LLVMValueRef a, LLVMValueRef v) { return cg_scan_step(s->L, s->ph, a, v); }
static LLVMValueRef ident(Lb *s) { return cg_red_identity(s->L, s->ph->reduce_op, s->at); }

/* if (cond) { ... }: returns the block after; the builder is in the then-block. */
static LLVMBasicBlockRef if_begin(Lower *L, LLVMValueRef cond, const char *name) {
  LLVMBasicBlockRef then = cg_new_bb(L, name), after = cg_new_bb(L, "lb.after");
  LLVMBuildCondBr(L->m.b, cond, then, after);
  LLVMPositionBuilderAtEnd(L->m.b, then);
  return after;
}

static void if_end(Lower *L, LLVMBasicBlockRef after) {
  LLVMBuildBr(L->m.b, after);
  LLVMPositionBuilderAtEnd(L->m.b, after);
}

/* The fold of x over the wave's lanes in lane order, in every lane (butterfly, lower half first). */
static LLVMValueRef wave_fold(Lb *s, LLVMValueRef x) {
  LLVMBuilderRef b = s->L->m.b;
  LLVMValueRef tot = x;
  for (int off = 1; off < s->wave; off *= 2) {
    LLVMValueRef o = cg_gpu_shfl_xor(s->L, tot, off);
    LLVMValueRef bit = LLVMBuildAnd(b, s->lane, cg_iconst_i(s->L, off), "");
    LLVMValueRef upper = LLVMBuildICmp(b, LLVMIntNE, bit, cg_iconst_i(s->L, 0), "");
    tot = LLVMBuildSelect(b, upper, step(s, o, tot), step(s, tot, o), "");
  }
  return tot;
}

/* ---- status words (scratch layout: codegen.h cg_scan_lb_*) ------------------------------------------- */

static LLVMValueRef byte_ptr(Lb *s, LLVMValueRef off64) {
  LLVMTypeRef i8 = LLVMInt8TypeInContext(s->L->m.c);
  return LLVMBuildGEP2(s->L->m.b, i8, s->scratch, &off64, 1, "");
}

static LLVMValueRef status_ptr(Lb *s, LLVMValueRef idx) {
  Lower *L = s->L;
  LLVMValueRef off = LLVMBuildMul(L->m.b, cg_to_i64(L, idx), cg_i64(&L->m, 8), "");
  return byte_ptr(s, LLVMBuildAdd(L->m.b, cg_i64(&L->m, CG_SCAN_LB_STATUS), off, ""));
}

/* The aggregate (which 0) or inclusive (1) value slot of tile idx (wide layout). */
static LLVMValueRef value_ptr(Lb *s, LLVMValueRef idx, LLVMValueRef which) {
  Lower *L = s->L;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef end = LLVMBuildAdd(b, LLVMBuildMul(b, s->ntiles, cg_i64(&L->m, 8), ""), cg_i64(&L->m, CG_SCAN_LB_STATUS + 15), "");
  LLVMValueRef values = LLVMBuildAnd(b, end, cg_i64(&L->m, ~(uint64_t)15), ""); /* codegen.h cg_scan_lb_bytes */
  LLVMValueRef array = LLVMBuildMul(b, s->ntiles, cg_i64(&L->m, s->acc_size), "");
  LLVMValueRef base = LLVMBuildAdd(b, values, LLVMBuildMul(b, LLVMBuildZExt(b, which, L->i64, ""), array, ""), "");
  return byte_ptr(s, LLVMBuildAdd(b, base, LLVMBuildMul(b, cg_to_i64(L, idx), cg_i64(&L->m, s->acc_size), ""), ""));
}

static LLVMTypeRef bits_type(Lb *s) { return LLVMIntTypeInContext(s->L->m.c, 8u * (unsigned)loom_dtype_size(s->at)); }

static void publish(Lb *s, LLVMValueRef idx, int flag, LLVMValueRef v) {
  Lower *L = s->L;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  if (s->packed) {
    LLVMValueRef bits = LLVMBuildBitCast(b, cg_to_mem(m, s->at, s->at, v), bits_type(s), "");
    LLVMValueRef w = LLVMBuildOr(b, LLVMBuildZExt(b, bits, L->i64, ""), cg_i64(m, (uint64_t)flag << 32), "");
    LLVMValueRef st = LLVMBuildStore(b, w, status_ptr(s, idx));
    LLVMSetAlignment(st, 8);
    LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
    return;
  }
  LLVMValueRef which = LLVMConstInt(LLVMInt1TypeInContext(m->c), flag == FLAG_INCLUSIVE, 0);
  LLVMValueRef vs = LLVMBuildStore(b, cg_to_mem(m, s->at, s->at, v), value_ptr(s, idx, which));
  LLVMSetVolatile(vs, 1);
  m->gpu->fence_device(m); /* the value before the flag */
  LLVMValueRef st = LLVMBuildStore(b, i32c(s, (uint64_t)flag), status_ptr(s, idx));
  LLVMSetAlignment(st, 4);
  LLVMSetOrdering(st, LLVMAtomicOrderingMonotonic);
}

/* The status word of tile idx: its flag (i32) and, packed, the word (for the value). */
static LLVMValueRef load_status(Lb *s, LLVMValueRef idx, LLVMValueRef *word) {
  Lower *L = s->L;
  LLVMBuilderRef b = L->m.b;
  LLVMTypeRef ty = s->packed ? L->i64 : LLVMInt32TypeInContext(L->m.c);
  LLVMValueRef w = LLVMBuildLoad2(b, ty, status_ptr(s, idx), "");
  LLVMSetAlignment(w, s->packed ? 8 : 4);
  LLVMSetOrdering(w, LLVMAtomicOrderingMonotonic);
  LLVMSetVolatile(w, 1);
  *word = w;
  return s->packed ? LLVMBuildTrunc(b, LLVMBuildLShr(b, w, cg_i64(&L->m, 32), ""), LLVMInt32TypeInContext(L->m.c), "") : w;
}

/* Wave 0 (every lane): the exclusive prefix of tile (o, part), part > 0, over the row's earlier tiles. */
static LLVMValueRef look_back(Lb *s, LLVMValueRef o, LLVMValueRef part, LLVMValueRef no) {
  Lower *L = s->L;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMValueRef hiv = cg_entry_alloca(L, L->ity, "lb.hi"), ev = cg_entry_alloca(L, s->t, "lb.e");
  LLVMBuildStore(b, part, hiv);
  LLVMBuildStore(b, ident(s), ev);
  LLVMBasicBlockRef head = cg_new_bb(L, "lb.window"), spin = cg_new_bb(L, "lb.spin"), ready = cg_new_bb(L, "lb.ready"),
                    done = cg_new_bb(L, "lb.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef hi = LLVMBuildLoad2(b, L->ity, hiv, "");
  LLVMValueRef q = LLVMBuildAdd(b, LLVMBuildSub(b, hi, cg_iconst_i(L, s->wave), ""), s->lane, "");
  LLVMValueRef valid = LLVMBuildICmp(b, LLVMIntSGE, q, cg_iconst_i(L, 0), "");
  LLVMValueRef idx = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildSelect(b, valid, q, cg_iconst_i(L, 0), ""), no, ""), o, "");
  LLVMBuildBr(b, spin);
  /* every lane reloads until no lane of the window sees an empty status (a uniform loop) */
  LLVMPositionBuilderAtEnd(b, spin);
  LLVMValueRef word;
  LLVMValueRef flag = LLVMBuildSelect(b, valid, load_status(s, idx, &word), i32c(s, FLAG_INCLUSIVE), "");
  LLVMValueRef empty = m->gpu->ballot(m, LLVMBuildICmp(b, LLVMIntEQ, flag, i32c(s, 0), ""));
  LLVMValueRef again = LLVMBuildICmp(b, LLVMIntNE, empty, LLVMConstInt(LLVMTypeOf(empty), 0, 0), "");
  if (s->backoff > 0 && s->nvptx) { /* sleep, then re-read (sm_70+) */
    LLVMBasicBlockRef wait = cg_new_bb(L, "lb.backoff");
    LLVMBuildCondBr(b, again, wait, ready);
    LLVMPositionBuilderAtEnd(b, wait);
    char text[48];
    int n = snprintf(text, sizeof text, "nanosleep.u32 %d;", s->backoff);
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(m->c), NULL, 0, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, text, (size_t)n, "~{memory}", 9, 1, 0, LLVMInlineAsmDialectATT, 0);
    LLVMBuildCall2(b, fty, fn, NULL, 0, "");
    LLVMBuildBr(b, spin);
  } else {
    LLVMBuildCondBr(b, again, spin, ready);
  }
  LLVMPositionBuilderAtEnd(b, ready);
  LLVMValueRef incl = LLVMBuildICmp(b, LLVMIntEQ, flag, i32c(s, FLAG_INCLUSIVE), "");
  LLVMValueRef v;
  if (s->packed) {
    LLVMValueRef bits = LLVMBuildTrunc(b, word, bits_type(s), "");
    v = cg_from_mem(m, s->at, s->at, LLVMBuildBitCast(b, bits, cg_mem_type(m, s->at), ""));
  } else {
    m->gpu->fence_device(m); /* the flags before the values */
    LLVMValueRef ld = LLVMBuildLoad2(b, cg_mem_type(m, s->at), value_ptr(s, idx, incl), "");
    LLVMSetVolatile(ld, 1);
    v = cg_from_mem(m, s->at, s->at, ld);
  }
  v = LLVMBuildSelect(b, valid, v, ident(s), "");
  /* the nearest inclusive tile of the window (the highest lane; lanes before the row count as one) */
  LLVMValueRef pm = m->gpu->ballot(m, incl);
  LLVMTypeRef mt = LLVMTypeOf(pm);
  LLVMValueRef zargs[2] = {pm, LLVMConstInt(LLVMInt1TypeInContext(m->c), 0, 0)};
  LLVMValueRef lz = cg_intrinsic(m, "llvm.ctlz", &mt, 1, zargs, 2);
  LLVMValueRef h = LLVMBuildSub(b, LLVMConstInt(mt, (uint64_t)s->wave - 1, 0), lz, ""); /* -1 when none */
  LLVMValueRef lane32 = LLVMBuildTrunc(b, cg_to_i64(L, s->lane), LLVMInt32TypeInContext(m->c), "");
  LLVMValueRef lane_m = LLVMBuildZExtOrBitCast(b, lane32, mt, "");
  LLVMValueRef take = LLVMBuildICmp(b, LLVMIntSGE, lane_m, h, "");
  LLVMValueRef w = wave_fold(s, LLVMBuildSelect(b, take, v, ident(s), ""));
  LLVMBuildStore(b, step(s, w, LLVMBuildLoad2(b, s->t, ev, "")), ev);
  LLVMBuildStore(b, LLVMBuildSub(b, hi, cg_iconst_i(L, s->wave), ""), hiv);
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, pm, LLVMConstInt(mt, 0, 0), ""), done, head);
  LLVMPositionBuilderAtEnd(b, done);
  return LLVMBuildLoad2(b, s->t, ev, "");
}

/* NVPTX launch bounds: at most `block` threads, and as many blocks a multiprocessor as its 2048 threads
 * and 228 KB of shared memory hold (1 KB reserved a block), so that ptxas keeps the registers within
 * what that many blocks can have (float64 / int64 accumulators: 47 registers unbounded, 32 with 8
 * blocks of 256 asked for, no spill; ptxas -v, sm_90; complex128 asks for half as many). n: the staged
 * tile's points. */
static void launch_bounds(Lb *s, unsigned n) {
  LLVMContextRef c = s->L->m.c;
  int64_t smem = (int64_t)loom_dtype_size(s->at == LOOM_BOOL ? LOOM_INT8 : s->at) * (n + n / 32 + (unsigned)s->block + 33) + 32;
  int64_t by_smem = (228 * 1024) / (smem + 1024), by_threads = 2048 / s->block;
  if (loom_dtype_size(s->at) > 8) by_threads /= 2; /* complex128: 32 registers would spill (ptxas -v) */
  int blocks = (int)(by_smem < by_threads ? by_smem : by_threads);
  static const char *const keys[2] = {"maxntidx", "minctasm"};
  unsigned vals[2] = {(unsigned)s->block, (unsigned)(blocks < 1 ? 1 : blocks)};
  for (int i = 0; i < 2; i++) {
    LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(s->L->fn), LLVMMDStringInContext2(c, keys[i], strlen(keys[i])),
                              LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), vals[i], 0))};
    LLVMAddNamedMetadataOperand(s->L->m.m, "nvvm.annotations", LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, ops, 3)));
  }
}

/* ---- one item ------------------------------------------------------------------------------------- */

enum { PREFETCH_MAX = 8 }; /* buffers whose loads the store phase issues ahead (more: loaded in place) */

/* The loads the phase's stores read at item j's point, issued for every item before any store (the
 * store loop is a chain of guarded blocks, so its loads would otherwise wait one after another: a
 * compaction reads x again for its mask and value). The store cones are evaluated at the clamped point
 * with a stand-in running value; only their KI_LOAD values are kept (the rest is dead code), in
 * vals[j][q] for instruction ids[q]. Returns how many ids (0 for snippet kernels). */
static int prefetch_store_loads(Lb *s, const LLVMValueRef *wpt, LLVMValueRef rlo, LLVMValueRef len,
                                int32_t ids[PREFETCH_MAX], LLVMValueRef vals[][PREFETCH_MAX]) {
  Lower *L = s->L;
  const KernelIr *k = L->k;
  const KPhase *ph = s->ph;
  LLVMBuilderRef b = L->m.b;
  if (k->snippet) return 0;
  int32_t roots[3 * 64];
  int nr = 0;
  for (int q = ph->store_begin; q < ph->store_begin + ph->nstores && nr + 3 <= 3 * 64; q++) {
    const KStore *st = &k->stores[q];
    roots[nr++] = st->value;
    if (st->scatter) {
      roots[nr++] = st->index;
      roots[nr++] = st->limit;
    }
  }
  int n = 0;
  LLVMValueRef last = LLVMBuildSub(b, len, cg_iconst_i(L, 1), "");
  for (int j = 0; j < s->items && nr; j++) {
    LLVMValueRef valid = LLVMBuildICmp(b, LLVMIntSLT, wpt[j], len, "");
    LLVMValueRef r = LLVMBuildAdd(b, rlo, LLVMBuildSelect(b, valid, wpt[j], last, ""), "");
    cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
    cg_clear_cache(L);
    L->acc[0] = ident(s);
    L->accidx[0] = cg_i64(&L->m, 0);
    cg_eval_needed(L, roots, nr);
    if (j == 0)
      for (int32_t i = 0; i < k->ninstr && n < PREFETCH_MAX; i++)
        if (k->instrs[i].kind == KI_LOAD && L->cache[i]) ids[n++] = i;
    for (int q = 0; q < n; q++) vals[j][q] = L->cache[ids[q]];
    cg_clear_cache(L);
  }
  L->acc[0] = L->accidx[0] = NULL;
  return n;
}

/* Clear mode (extra word 2 = tiles + 1): thread item * bdim + tid zeroes that status word (and the first
 * one the ticket counter). */
static void clear_item(Lb *s, LLVMValueRef item, const GpuEntry *e, LLVMValueRef mode) {
  Lower *L = s->L;
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef i = LLVMBuildAdd(b, LLVMBuildMul(b, cg_to_i64(L, item), cg_to_i64(L, e->bdim), ""), cg_to_i64(L, e->tid), "");
  LLVMValueRef ntiles = LLVMBuildSub(b, mode, cg_i64(&L->m, 1), "");
  LLVMBasicBlockRef after = if_begin(L, LLVMBuildICmp(b, LLVMIntSLT, i, ntiles, ""), "lb.clear");
  LLVMSetAlignment(LLVMBuildStore(b, cg_i64(&L->m, 0), status_ptr(s, i)), 8);
  if_end(L, after);
  after = if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, i, cg_i64(&L->m, 0), ""), "lb.clearc");
  LLVMSetAlignment(LLVMBuildStore(b, i32c(s, 0), byte_ptr(s, cg_i64(&L->m, 0))), 4);
  if_end(L, after);
}

static void scan_item(Lb *s, const GpuEntry *e) {
  Lower *L = s->L;
  const KernelIr *k = L->k;
  const KPhase *ph = s->ph;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  const int K = s->items, B = s->block;
  LLVMValueRef zero = cg_iconst_i(L, 0);
  /* the ticket */
  LLVMBasicBlockRef after = if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, s->tid, zero, ""), "lb.ticket");
  LLVMValueRef tk = LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpAdd, byte_ptr(s, cg_i64(m, 0)), i32c(s, 1),
                                       LLVMAtomicOrderingMonotonic, 0);
  LLVMBuildStore(b, tk, sm_ptr(s, s->ticket_sm, zero));
  if_end(L, after);
  m->gpu->barrier(m);
  LLVMValueRef t = LLVMBuildLoad2(b, LLVMInt32TypeInContext(m->c), sm_ptr(s, s->ticket_sm, zero), "");
  t = LLVMBuildZExtOrBitCast(b, t, L->ity, "ticket");
  LLVMValueRef o = LLVMBuildURem(b, t, e->no, ""), part = LLVMBuildUDiv(b, t, e->no, "");
  /* points [rlo, rlo + len) of the row, len = min(tile, nr - rlo) >= 1 (no sum past nr: no overflow) */
  LLVMValueRef ts = cg_iconst_i(L, (int64_t)B * K);
  LLVMValueRef rlo = LLVMBuildMul(b, part, ts, ""), left = LLVMBuildSub(b, e->nr, rlo, "");
  LLVMValueRef len = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, ts, ""), left, ts, "len");
  cg_gpu_offsets(L, o, 0, k->nkeep, NULL, L->ooff);
  /* the tile's values (the producer computed here), staged in the wave's own segment of shared memory:
   * item j of a lane is point seg + j * wave + lane (seg: the wave's first point, wave * K each) */
  LLVMValueRef last = LLVMBuildSub(b, len, cg_iconst_i(L, 1), "");
  LLVMValueRef seg = LLVMBuildMul(b, s->warp, cg_iconst_i(L, (int64_t)s->wave * K), "");
  LLVMValueRef wpt[CG_SCAN_LB_ITEMS_MAX]; /* the tile points of the lane's items */
  /* their slots: pad(seg + lane) + j * (wave + wave / 32), seg and wave being multiples of 32 (one base
   * register and constant offsets, not a 64-bit address per item held across the item loop) */
  LLVMValueRef wslot = pad(s, LLVMBuildAdd(b, seg, s->lane, ""));
  for (int j = 0; j < K; j++) {
    LLVMValueRef i = wpt[j] = LLVMBuildAdd(b, seg, LLVMBuildAdd(b, s->lane, cg_iconst_i(L, (int64_t)j * s->wave), ""), "");
    LLVMValueRef valid = LLVMBuildICmp(b, LLVMIntSLT, i, len, "");
    LLVMValueRef r = LLVMBuildAdd(b, rlo, LLVMBuildSelect(b, valid, i, last, ""), "");
    cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
    cg_clear_cache(L);
    cg_eval_needed(L, &ph->value, 1);
    LLVMValueRef x = LLVMBuildSelect(b, valid, L->cache[ph->value], ident(s), "");
    cg_clear_cache(L);
    sm_store(s, s->tile_sm, wave_slot(s, wslot, j), x);
  }
  m->gpu->wave_sync(m); /* the wave's segment holds its lanes' points: no block barrier */
  /* the thread's items, in order (points tid * K + j: inside its wave's segment; slots pad(tid * K) + j,
   * K dividing 32 or a multiple of it) */
  LLVMValueRef first = pad(s, LLVMBuildMul(b, s->tid, cg_iconst_i(L, K), ""));
  LLVMValueRef run = NULL;
  for (int j = 0; j < K; j++) {
    LLVMValueRef y = sm_load(s, s->tile_sm, LLVMBuildAdd(b, first, cg_iconst_i(L, j), ""));
    run = j ? step(s, run, y) : y;
  }
  /* the threads' totals across the block: inclusive in the wave, then the waves before */
  LLVMValueRef pre = run, tot = run;
  for (int off = 1; off < s->wave; off *= 2) {
    LLVMValueRef ov = cg_gpu_shfl_xor(L, tot, off);
    LLVMValueRef upper = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, s->lane, cg_iconst_i(L, off), ""), zero, "");
    pre = LLVMBuildSelect(b, upper, step(s, ov, pre), pre, "");
    tot = LLVMBuildSelect(b, upper, step(s, ov, tot), step(s, tot, ov), "");
  }
  after = if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, s->lane, cg_iconst_i(L, s->wave - 1), ""), "lb.wtot");
  sm_store(s, s->wave_sm, s->warp, tot);
  if_end(L, after);
  sm_store(s, s->thr_sm, s->tid, pre);
  m->gpu->barrier(m);
  LLVMValueRef before = ident(s), agg = ident(s);
  for (int w = 0; w < s->nwave; w++) {
    LLVMValueRef wt = sm_load(s, s->wave_sm, cg_iconst_i(L, w));
    agg = step(s, agg, wt);
    before = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, s->warp, cg_iconst_i(L, w), ""), step(s, before, wt), before, "");
  }
  LLVMValueRef lane0 = LLVMBuildICmp(b, LLVMIntEQ, s->lane, zero, "");
  LLVMValueRef tprev = LLVMBuildSelect(b, lane0, s->tid, LLVMBuildSub(b, s->tid, cg_iconst_i(L, 1), ""), "");
  LLVMValueRef prev = sm_load(s, s->thr_sm, tprev);
  LLVMValueRef xthr = LLVMBuildSelect(b, lane0, before, step(s, before, prev), ""); /* threads before, in the tile */
  /* wave 0: publish, look back, publish; E to the block */
  after = if_begin(L, LLVMBuildICmp(b, LLVMIntEQ, s->warp, zero, ""), "lb.wave0");
  LLVMValueRef ep = cg_entry_alloca(L, s->t, "lb.excl");
  LLVMValueRef head = LLVMBuildICmp(b, LLVMIntEQ, part, zero, "");
  LLVMBasicBlockRef h0 = cg_new_bb(L, "lb.first"), hn = cg_new_bb(L, "lb.later"), hd = cg_new_bb(L, "lb.published");
  LLVMBuildCondBr(b, head, h0, hn);
  LLVMPositionBuilderAtEnd(b, h0);
  LLVMBasicBlockRef a0 = if_begin(L, lane0, "lb.pub0");
  publish(s, t, FLAG_INCLUSIVE, agg);
  if_end(L, a0);
  LLVMBuildStore(b, ident(s), ep);
  LLVMBuildBr(b, hd);
  LLVMPositionBuilderAtEnd(b, hn);
  LLVMBasicBlockRef a1 = if_begin(L, lane0, "lb.pubagg");
  publish(s, t, FLAG_AGGREGATE, agg);
  if_end(L, a1);
  LLVMValueRef ex = look_back(s, o, part, e->no);
  LLVMBasicBlockRef a2 = if_begin(L, lane0, "lb.pubincl");
  publish(s, t, FLAG_INCLUSIVE, step(s, ex, agg));
  if_end(L, a2);
  LLVMBuildStore(b, ex, ep);
  LLVMBuildBr(b, hd);
  LLVMPositionBuilderAtEnd(b, hd);
  LLVMBasicBlockRef a3 = if_begin(L, lane0, "lb.bcast");
  sm_store(s, s->misc_sm, zero, LLVMBuildLoad2(b, s->t, ep, ""));
  LLVMBuildStore(b, rlo, sm_ptr(s, s->rlo_sm, zero));
  if_end(L, a3);
  if_end(L, after);
  m->gpu->barrier(m);
  /* each point: E op (threads before) op (its prefix), the prefixes folded again from the staged values
   * (the same steps in the same order: the same bits; no registers held across the look-back), back into
   * the thread's slots, then stored coalesced from the wave's segment */
  LLVMValueRef c = step(s, sm_load(s, s->misc_sm, zero), xthr);
  /* the tile's first point again, read back from shared memory (written with E, rewritten only after the
   * next ticket's barrier): the store phase's addresses are computed from it here, not kept in registers
   * across the look-back */
  rlo = LLVMBuildLoad2(b, L->ity, sm_ptr(s, s->rlo_sm, zero), "lb.rlo");
  left = LLVMBuildSub(b, e->nr, rlo, "");
  len = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, ts, ""), left, ts, "len");
  int32_t pids[PREFETCH_MAX];
  LLVMValueRef pvals[CG_SCAN_LB_ITEMS_MAX][PREFETCH_MAX];
  int npre = prefetch_store_loads(s, wpt, rlo, len, pids, pvals);
  run = NULL;
  for (int j = 0; j < K; j++) {
    LLVMValueRef slot = LLVMBuildAdd(b, first, cg_iconst_i(L, j), "");
    LLVMValueRef y = sm_load(s, s->tile_sm, slot);
    run = j ? step(s, run, y) : y;
    sm_store(s, s->tile_sm, slot, step(s, c, run));
  }
  m->gpu->wave_sync(m);
  for (int j = 0; j < K; j++) {
    LLVMValueRef i = wpt[j];
    LLVMBasicBlockRef sa = if_begin(L, LLVMBuildICmp(b, LLVMIntSLT, i, len, ""), "lb.store");
    LLVMValueRef r = LLVMBuildAdd(b, rlo, i, "");
    LLVMValueRef v = sm_load(s, s->tile_sm, wave_slot(s, wslot, j));
    cg_gpu_offsets(L, r, k->nkeep, k->ndim, L->ooff, L->off);
    cg_clear_cache(L);
    for (int q = 0; q < npre; q++) L->cache[pids[q]] = pvals[j][q]; /* loaded ahead at this point */
    L->acc[0] = v;
    L->accidx[0] = cg_i64(m, 0);
    cg_emit_stores(L, ph);
    cg_clear_cache(L);
    if_end(L, sa);
  }
  /* no barrier needed here: the next item writes shared memory only after its ticket's barrier */
}

void cg_gpu_scan_lookback(Lower *L, LLVMValueRef item, const GpuEntry *e) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  Lb s = {.L = L, .ph = &k->phases[0], .wave = m->gpu->wave, .acc_size = e->acc_size};
  s.at = (LoomDType)s.ph->acc_dtype;
  s.t = cg_reg_type(m, s.at);
  s.st = s.at == LOOM_BOOL ? LLVMInt8TypeInContext(m->c) : s.t;
  const LbKnobs *kn = lb_knobs();
  s.block = kn->block < s.wave ? s.wave : kn->block;
  s.items = cg_scan_lb_items_of(s.block, kn->items, e->acc_size, (int)loom_dtype_size(s.at));
  s.backoff = kn->backoff;
  s.nvptx = !strncmp(LLVMGetTarget(m->m), "nvptx", 5);
  s.nwave = s.block / s.wave;
  s.packed = loom_dtype_size(s.at) <= 4 && s.at != LOOM_COMPLEX64 && s.at != LOOM_COMPLEX128;
  s.tid = e->tid;
  s.lane = LLVMBuildAnd(b, e->tid, cg_iconst_i(L, s.wave - 1), "");
  s.warp = LLVMBuildLShr(b, e->tid, cg_iconst_i(L, s.wave == 64 ? 6 : 5), "");
  s.scratch = e->partials;
  s.ntiles = cg_to_i64(L, LLVMBuildMul(b, e->no, e->nparts, ""));
  unsigned n = (unsigned)(s.block * s.items);
  s.tile_sm = shared_array(&s, "loom.scanlb.tile", s.st, n + n / 32);
  s.thr_sm = shared_array(&s, "loom.scanlb.thr", s.st, (unsigned)s.block);
  s.wave_sm = shared_array(&s, "loom.scanlb.wave", s.st, 32);
  s.misc_sm = shared_array(&s, "loom.scanlb.e", s.st, 1);
  s.ticket_sm = shared_array(&s, "loom.scanlb.ticket", LLVMInt32TypeInContext(m->c), 1);
  s.rlo_sm = shared_array(&s, "loom.scanlb.rlo", L->ity, 1);
  if (s.nvptx) launch_bounds(&s, n);
  /* extra word 2: the mode (codegen.h) */
  LLVMValueRef args = LLVMGetParam(L->fn, 0);
  LLVMValueRef wi = cg_i64(m, k->ndim + k->nbuf + k->nbuf * k->ndim + 2);
  LLVMValueRef mode = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, args, &wi, 1, ""), "lb.mode");
  LLVMBasicBlockRef clear = cg_new_bb(L, "lb.clearmode"), scan = cg_new_bb(L, "lb.scan"), done = cg_new_bb(L, "lb.item");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, mode, cg_i64(m, 0), ""), clear, scan);
  LLVMPositionBuilderAtEnd(b, clear);
  clear_item(&s, item, e, mode);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, scan);
  scan_item(&s, e);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
  L->acc[0] = L->accidx[0] = NULL;
}

void cg_gpu_scan_lookback_trim(LLVMModuleRef mod, const KernelIr *k, CgGpuKernel *gk) {
  if (!cg_gpu_scan_lookback_kernel(k, gk)) return;
  const LbKnobs *kn = lb_knobs(); /* a tile shape other than the default travels in part_lanes (codegen.h) */
  int block = kn->block < gk->wave ? gk->wave : kn->block;
  int items = cg_scan_lb_items_of(block, kn->items, gk->acc_size, (int)loom_dtype_size((LoomDType)k->phases[0].acc_dtype));
  if (block != CG_SCAN_LB_BLOCK || items != cg_scan_lb_items(gk->acc_size)) gk->part_lanes = cg_scan_lb_pack(block, items);
  if (!gk->part[0]) return;
  LLVMValueRef f = LLVMGetNamedFunction(mod, gk->part);
  if (f) LLVMDeleteFunction(f);
  gk->part[0] = 0;
}
