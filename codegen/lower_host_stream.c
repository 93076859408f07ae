/* SPDX-License-Identifier: Apache-2.0 */
/* lower_host_stream.c: streaming (non-temporal) stores of large host elementwise outputs.
 *
 * An ordinary store first reads its cache line (read-for-ownership) and later writes it back, so
 * y = f(x) of N bytes moves ~3N bytes, and the output evicts the inputs from the L3: a kernel called
 * back to back on 16 MB arrays reads its input from DRAM every time. Streaming stores (movnt*) write
 * whole lines without reading them and do not allocate them in the cache (bench/nt_probe.c, this
 * 2-core Zen 4 box: y = 2x back to back, 1.5-1.7x faster from 12 MB per array up, slower below 8 MB,
 * where both arrays stay in the L3).
 *
 * Staging instead of streaming from the walk: LLVM's loop vectorizer refuses a loop whose store
 * carries !nontemporal unless the element store is aligned to twice its size, and the walks store
 * through run-time strides and offsets. So run() keeps its walk and ordinary stores, but aims each
 * streamed output at a small stack buffer (L1/L2-resident): it calls the implementation once per chunk
 * of C points (C * the streamed outputs' element bytes <= CG_STREAM_CHUNK_BYTES; chunk boundaries at
 * multiples of C points, so they fall on 64-byte lines of an aligned output), with the output's base
 * pointer replaced by `scratch - c * elem` (through an empty inline asm, so no analysis ties it to the
 * alloca; the walk's inbounds GEPs then address the scratch), then copies the chunk to the output:
 * bytes up to the first 64-byte boundary and after the last one by volatile byte stores (no memcpy
 * call, which a bundled object could not resolve), whole lines by 64-byte vector stores marked
 * !nontemporal (vmovntdq; two 32-byte ones on AVX2). An sfence ends the call, so the pool sees the
 * lines before the task is reported done. The values are computed by the same code: same bits.
 *
 * When (run time, per call): the bytes the launch moves (every buffer's elements, a broadcast dim counted
 * once) >= the threshold, every streamed output is contiguous (row-major over the iteration space;
 * size-1 dims any stride), none has the base of an input (in place: its lines are read anyway) and
 * the range is not empty. Which outputs (compile time): outputs the kernel never loads (an output that
 * is also an operand stays cached for its reads); elementwise kernels only, not snippets, tiled
 * transposes (their tiles span rows), scatter stores or kernels that call transcendentals (compute-
 * bound: computes_transcendental); x86 (+sse2) only.
 * The working set, not the outputs alone: a 16 MiB output written back to back with tiny inputs stays
 * in the 32 MiB L3 with ordinary stores (outer_add: streaming was slower), and so do int8_dequant's
 * 4 + 16 MiB on a quiet box (ordinary 0.40 ms, streamed 0.63); nt_probe's crossover under load lies
 * between 16 MiB (8 + 8: a tie) and 24 MiB (1.35x). LOOM_HOST_NT_STORES: 0 off; 1 (default) on from
 * 3/4 of the machine's L3 (24 MiB on this box; llc_threshold); a larger value is the threshold in bytes.
 *
 * The column split's MAP phase (x / x.sum(0): colpart maps its slab of rows, lower_host_outer_map.c) shares
 * the decision (cg_host_stream_map_outputs: outputs that only MAP phases store, never loaded; the run-time
 * bytes and in-place test, cg_host_stream_worth) and the copy (cg_host_stream_copy), and stages pieces of
 * each row instead of chunks of a linear range (LOOM_HOST_COL_MAP_NT=0: off).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg_lower.h"

enum {
  CG_STREAM_CHUNK_BYTES = 4096,        /* scratch per chunk, all streamed outputs together (nt_probe: 16 KiB
                                        * chunks lost the whole gain, 1-4 KiB kept it: reads and streamed
                                        * writes must interleave finely) */
  CG_STREAM_DEFAULT_BYTES = 24 << 20   /* bytes a launch moves from which it streams (knob 1), when the L3's
                                        * size is unknown */
};

/* 3/4 of this machine's last-level cache as Linux's sysfs tells it (cpu0's level-3 unified cache: what lscpu
 * shows; glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) said 320 MiB for this VM's 32 MiB), else
 * CG_STREAM_DEFAULT_BYTES. Host kernels are compiled for the machine they run on (as target-cpu is). */
static int64_t llc_threshold(void) {
  static _Atomic int64_t cached = -1;
  int64_t v = cached;
  if (v >= 0) return v;
  v = CG_STREAM_DEFAULT_BYTES;
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  if (f) {
    long long kb = 0;
    char unit = 0;
    if (fscanf(f, "%lld%c", &kb, &unit) >= 1 && kb >= 1024 && kb <= (1ll << 30) && (unit == 'K' || unit == '\n'))
      v = kb * 1024 / 4 * 3;
    fclose(f);
  }
  cached = v;
  return v;
}

/* The threshold in bytes; 0: streaming off. */
static int64_t stream_threshold(void) {
  static int knob = -1;
  int v = cg_env_int_once(&knob, "LOOM_HOST_NT_STORES", 1);
  return v <= 0 ? 0 : v == 1 ? llc_threshold() : v;
}

static bool loads_buffer(const KernelIr *k, int bi) {
  for (int i = 0; i < k->ninstr; i++)
    if (k->instrs[i].kind == KI_LOAD && k->instrs[i].buf == bi) return true;
  return false;
}

/* Whether the kernel calls a transcendental (exp, log, tanh, sin, pow, erf, ...; not sqrt): such a
 * loop computes for longer than its bytes take to move, and the staged copy's burst of streamed lines at
 * the end of each chunk then stalls on the write-combining buffers where ordinary write-backs overlapped
 * the arithmetic (blocks A/B, this box: silu 0.87x, swiglu 0.90x; the memory-bound kernels 1.1-1.7x). */
static bool computes_transcendental(const KernelIr *k) {
  for (int i = 0; i < k->ninstr; i++) {
    const KInstr *in = &k->instrs[i];
    if (in->kind != KI_ELEM) continue;
    int op = in->op;
    if (op == LOOM_OP_SQRT || op == LOOM_OP_RSQRT) continue;
    if ((op >= LOOM_OP_EXP && op <= LOOM_OP_ATANH) || op == LOOM_OP_POW || op == LOOM_OP_ATAN2 ||
        op == LOOM_OP_HYPOT || op == LOOM_OP_ERF || op == LOOM_OP_ERFC)
      return true;
  }
  return false;
}

static bool features_have(const char *const *attrs, int nattrs, const char *f) {
  size_t n = strlen(f);
  for (int i = 0; i < nattrs; i++) {
    if (strcmp(attrs[2 * i], "target-features") != 0) continue;
    const char *s = attrs[2 * i + 1];
    for (const char *p = s; (p = strstr(p, f)) != NULL; p += n)
      if ((p == s || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return true;
  }
  return false;
}

/* Whether every store to buffer bi is a plain store of a MAP phase (not a FINAL phase's, no scatter). */
static bool map_stores_only(const KernelIr *k, int bi) {
  for (int p = 0; p < k->nphase; p++) {
    const KPhase *ph = &k->phases[p];
    for (int s = ph->store_begin; s < ph->store_begin + ph->nstores; s++)
      if (k->stores[s].buf == bi && (ph->kind != KP_MAP || k->stores[s].scatter)) return false;
  }
  return true;
}

/* The outputs that may stream (elementwise kernels, or the MAP phase of the column split: map) */
static int stream_candidates(const KernelIr *k, const char *const *attrs, int nattrs, bool *streamed, bool map) {
  int n = 0;
  for (int bi = 0; bi < k->nbuf; bi++) streamed[bi] = false;
  if ((!map && k->nkeep != k->ndim) || k->snippet || cg_host_tiled(k) || cg_kernel_addresses_by_value(k)) return 0;
  if (computes_transcendental(k)) return 0;
  if (stream_threshold() == 0 || !features_have(attrs, nattrs, "+sse2")) return 0;
  for (int bi = 0; bi < k->nbuf; bi++) {
    size_t es = loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    if (k->bufs[bi].is_output && es > 0 && !loads_buffer(k, bi) && (!map || map_stores_only(k, bi))) streamed[bi] = true, n++;
  }
  return n;
}

int cg_host_stream_outputs(const KernelIr *k, const char *const *attrs, int nattrs, bool *streamed) {
  return stream_candidates(k, attrs, nattrs, streamed, false);
}

/* LOOM_HOST_COL_MAP_NT=0: the column split's MAP phase stores as before (A/B). */
int cg_host_stream_map_outputs(const KernelIr *k, const char *const *attrs, int nattrs, bool *streamed) {
  static int knob = -1;
  if (!cg_env_int_once(&knob, "LOOM_HOST_COL_MAP_NT", 1)) {
    for (int bi = 0; bi < k->nbuf; bi++) streamed[bi] = false;
    return 0;
  }
  return stream_candidates(k, attrs, nattrs, streamed, true);
}

LLVMValueRef cg_host_stream_worth(Lower *L, const bool *streamed, const LLVMValueRef *dim, const LLVMValueRef *stride,
                                  const LLVMValueRef *base) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  int nb = k->nbuf;
  LLVMValueRef bytes = cg_i64(m, 0);
  for (int bi = 0; bi < nb; bi++) {
    LLVMValueRef n = cg_i64(m, (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype));
    for (int d = 0; d < k->ndim; d++) {
      LLVMValueRef s = stride[bi * k->ndim + d];
      n = LLVMBuildMul(b, n, LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, s, cg_i64(m, 0), ""), cg_i64(m, 1), dim[d], ""), "");
    }
    bytes = LLVMBuildAdd(b, bytes, n, "");
  }
  LLVMValueRef go = LLVMBuildICmp(b, LLVMIntSGE, bytes, cg_i64(m, stream_threshold()), "");
  /* an output that is also an operand (in place: the same base as a loaded buffer) is read anyway */
  for (int bi = 0; bi < nb; bi++) {
    if (!streamed[bi]) continue;
    for (int ai = 0; ai < nb; ai++)
      if (!k->bufs[ai].is_output || loads_buffer(k, ai))
        go = LLVMBuildAnd(b, go, LLVMBuildICmp(b, LLVMIntNE, base[bi], base[ai], ""), "");
  }
  return go;
}

/* Copies `bytes` bytes from src to dst: whole 64-byte lines of dst by non-temporal stores, the bytes
 * before the first and after the last line boundary one at a time (volatile: never a memcpy call). */
void cg_host_stream_copy(Lower *L, LLVMValueRef dst, LLVMValueRef src, LLVMValueRef bytes) {
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMContextRef c = m->c;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(c), line = LLVMVectorType(LLVMInt64TypeInContext(c), 8);
  LLVMValueRef zero = cg_i64(m, 0), one = cg_i64(m, 1), sixty4 = cg_i64(m, 64);
  /* head = min(bytes, (-dst) & 63); lines = (bytes - head) / 64; tail from head + 64 * lines */
  LLVMValueRef addr = LLVMBuildPtrToInt(b, dst, L->i64, "");
  LLVMValueRef head = LLVMBuildAnd(b, LLVMBuildSub(b, zero, addr, ""), cg_i64(m, 63), "");
  head = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, bytes, head, ""), bytes, head, "nt.head");
  LLVMValueRef body_end = LLVMBuildAdd(b, head, LLVMBuildAnd(b, LLVMBuildSub(b, bytes, head, ""), cg_i64(m, ~(int64_t)63), ""), "nt.end");
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
  LLVMValueRef fn = LLVMGetBasicBlockParent(pre);
  /* three loops over i: [0, head) bytes, [head, body_end) lines, [body_end, bytes) bytes */
  LLVMValueRef bounds[4] = {zero, head, body_end, bytes};
  for (int part = 0; part < 3; part++) {
    LLVMBasicBlockRef hd = LLVMAppendBasicBlockInContext(c, fn, "nt.loop");
    LLVMBasicBlockRef bd = LLVMAppendBasicBlockInContext(c, fn, "nt.body");
    LLVMBasicBlockRef dn = LLVMAppendBasicBlockInContext(c, fn, "nt.done");
    LLVMBuildBr(b, hd);
    LLVMPositionBuilderAtEnd(b, hd);
    LLVMValueRef i = LLVMBuildPhi(b, L->i64, "nt.i");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, i, bounds[part + 1], ""), bd, dn);
    LLVMPositionBuilderAtEnd(b, bd);
    LLVMValueRef s = LLVMBuildGEP2(b, i8, src, &i, 1, ""), d = LLVMBuildGEP2(b, i8, dst, &i, 1, "");
    LLVMValueRef next;
    if (part == 1) {
      LLVMValueRef v = LLVMBuildLoad2(b, line, s, "");
      LLVMSetAlignment(v, 1);
      LLVMValueRef st = LLVMBuildStore(b, v, d);
      LLVMSetAlignment(st, 64);
      LLVMMetadataRef nt1 = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c), 1, 0));
      LLVMSetMetadata(st, LLVMGetMDKindIDInContext(c, "nontemporal", 11),
                      LLVMMetadataAsValue(c, LLVMMDNodeInContext2(c, &nt1, 1)));
      next = LLVMBuildAdd(b, i, sixty4, "");
    } else {
      LLVMValueRef st = LLVMBuildStore(b, LLVMBuildLoad2(b, i8, s, ""), d);
      LLVMSetVolatile(st, 1);
      next = LLVMBuildAdd(b, i, one, "");
    }
    LLVMBasicBlockRef from = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, hd);
    LLVMValueRef in_v[2] = {bounds[part], next};
    LLVMBasicBlockRef in_b[2] = {pre, from};
    LLVMAddIncoming(i, in_v, in_b, 2);
    LLVMPositionBuilderAtEnd(b, dn);
    pre = dn;
  }
}

/* Buffer bi's stride (elements) along dim d: a compile-time constant of its layout, else strides[bi][d]. */
static LLVMValueRef buffer_stride(Lower *L, LLVMValueRef strides, int bi, int d) {
  int64_t cs;
  if (ir_layout_const(L->k->bufs[bi].layout[d], &cs)) return cg_i64(&L->m, cs);
  LLVMValueRef ix = cg_i64(&L->m, (int64_t)bi * L->k->ndim + d);
  return LLVMBuildLoad2(L->m.b, L->i64, LLVMBuildGEP2(L->m.b, L->i64, strides, &ix, 1, ""), "");
}

void cg_host_sfence_if(Lower *L, LLVMValueRef go) {
  LLVMBuilderRef b = L->m.b;
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(b));
  LLVMBasicBlockRef sf = LLVMAppendBasicBlockInContext(L->m.c, fn, "nt.sfence");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(L->m.c, fn, "nt.fenced");
  LLVMBuildCondBr(b, go, sf, done);
  LLVMPositionBuilderAtEnd(b, sf);
  cg_intrinsic(&L->m, "llvm.x86.sse.sfence", NULL, 0, NULL, 0);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
}

LLVMValueRef cg_host_opaque_ptr(Lower *L, LLVMValueRef p) {
  LLVMTypeRef fty = LLVMFunctionType(L->ptr, &L->ptr, 1, 0);
  LLVMValueRef asm_ = LLVMGetInlineAsm(fty, "", 0, "=r,0", 4, 0, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(L->m.b, fty, asm_, &p, 1, "scratch");
}

void cg_host_stream_call(Lower *L, const bool *streamed, LLVMTypeRef ity, LLVMValueRef impl, LLVMValueRef *av,
                         int nimpl) {
  const KernelIr *k = L->k;
  CgMath *m = &L->m;
  LLVMBuilderRef b = m->b;
  LLVMContextRef c = m->c;
  LLVMTypeRef i8 = LLVMInt8TypeInContext(c);
  int nb = k->nbuf;
  LLVMValueRef shp = av[0], str = av[1], lo = av[2 + nb], hi = av[3 + nb];
  int64_t elem_sum = 0;
  for (int bi = 0; bi < nb; bi++)
    if (streamed[bi]) elem_sum += (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
  int64_t chunk = 64; /* points: a power of two, so chunk * elem is a whole number of 64-byte lines */
  while (chunk * 2 * elem_sum <= CG_STREAM_CHUNK_BYTES) chunk *= 2;

  /* the decision: the launch's bytes (every buffer's elements, broadcast dims once) >= threshold, not in
   * place (cg_host_stream_worth), lo < hi, streamed outputs contiguous */
  LLVMValueRef dim[LOOM_MAX_RANK];
  for (int d = 0; d < k->ndim; d++) {
    LLVMValueRef ix = cg_i64(m, d);
    dim[d] = LLVMBuildLoad2(b, L->i64, LLVMBuildGEP2(b, L->i64, shp, &ix, 1, ""), "");
  }
  LLVMValueRef *strides = ctx_calloc(L->ctx, (size_t)nb * (size_t)k->ndim + 1, sizeof(LLVMValueRef));
  if (!strides) {
    diag_error(m->d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory building the streamed run of '%s'", k->name);
    return;
  }
  for (int bi = 0; bi < nb; bi++)
    for (int d = 0; d < k->ndim; d++) strides[bi * k->ndim + d] = buffer_stride(L, str, bi, d);
  LLVMValueRef go = cg_host_stream_worth(L, streamed, dim, strides, av + 2);
  go = LLVMBuildAnd(b, go, LLVMBuildICmp(b, LLVMIntSLT, lo, hi, ""), "");
  for (int bi = 0; bi < nb; bi++) {
    if (!streamed[bi]) continue;
    LLVMValueRef want = cg_i64(m, 1);
    for (int d = k->ndim - 1; d >= 0; d--) {
      LLVMValueRef s = strides[bi * k->ndim + d];
      LLVMValueRef ok = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntEQ, s, want, ""),
                                    LLVMBuildICmp(b, LLVMIntEQ, dim[d], cg_i64(m, 1), ""), "");
      go = LLVMBuildAnd(b, go, ok, "");
      want = LLVMBuildMul(b, want, dim[d], "");
    }
  }
  ctx_free(L->ctx, strides);
  LLVMValueRef scratch = LLVMBuildAlloca(b, LLVMArrayType(i8, (unsigned)(chunk * elem_sum)), "nt.scratch");
  LLVMSetAlignment(scratch, 64);
  scratch = cg_host_opaque_ptr(L, scratch);

  /* for (c = lo; ; c = e) { e = go ? min(hi, (c / chunk + 1) * chunk) : hi; impl(.., c, e); copy; if (!go || e >= hi) break; } */
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(b));
  LLVMBasicBlockRef entry = LLVMGetInsertBlock(b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(c, fn, "nt.chunk");
  LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(c, fn, "nt.copy");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(c, fn, "nt.next");
  LLVMBasicBlockRef fence = LLVMAppendBasicBlockInContext(c, fn, "nt.fence");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(c, fn, "nt.done");
  LLVMBuildBr(b, head);
  LLVMPositionBuilderAtEnd(b, head);
  LLVMValueRef cur = LLVMBuildPhi(b, L->i64, "nt.c");
  LLVMValueRef ce = LLVMBuildMul(b, LLVMBuildAdd(b, LLVMBuildSDiv(b, cur, cg_i64(m, chunk), ""), cg_i64(m, 1), ""),
                                 cg_i64(m, chunk), "");
  ce = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, ce, hi, ""), ce, hi, "");
  LLVMValueRef end = LLVMBuildSelect(b, go, ce, hi, "nt.e");
  LLVMValueRef *args = ctx_calloc(L->ctx, (size_t)nimpl, sizeof(LLVMValueRef));
  LLVMValueRef *dst = ctx_calloc(L->ctx, (size_t)nb, sizeof(LLVMValueRef));
  if (!args || !dst) {
    ctx_free(L->ctx, args);
    ctx_free(L->ctx, dst);
    diag_error(m->d, LOOM_ERR_OUT_OF_MEMORY, "codegen: out of memory building the streamed run of '%s'", k->name);
    return;
  }
  memcpy(args, av, sizeof(LLVMValueRef) * (size_t)nimpl);
  int64_t at = 0;
  for (int bi = 0; bi < nb; bi++) {
    if (!streamed[bi]) continue;
    int64_t es = (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    LLVMValueRef start = cg_i64(m, at);
    LLVMValueRef mine = LLVMBuildGEP2(b, i8, scratch, &start, 1, "");
    dst[bi] = mine;
    /* base such that point cur lands at `mine` (a plain GEP: it lies before the scratch) */
    LLVMValueRef back = LLVMBuildMul(b, cur, cg_i64(m, -es), "");
    args[2 + bi] = LLVMBuildSelect(b, go, LLVMBuildGEP2(b, i8, mine, &back, 1, ""), av[2 + bi], "");
    at += chunk * es;
  }
  args[2 + nb] = cur;
  args[3 + nb] = end;
  LLVMBuildCall2(b, ity, impl, args, (unsigned)nimpl, "");
  LLVMBuildCondBr(b, go, copy, next);
  LLVMPositionBuilderAtEnd(b, copy);
  LLVMValueRef count = LLVMBuildSub(b, end, cur, "");
  for (int bi = 0; bi < nb; bi++) {
    if (!streamed[bi]) continue;
    int64_t es = (int64_t)loom_dtype_size((LoomDType)k->bufs[bi].dtype);
    LLVMValueRef off = LLVMBuildMul(b, cur, cg_i64(m, es), "");
    cg_host_stream_copy(L, LLVMBuildGEP2(b, i8, av[2 + bi], &off, 1, "nt.dst"), dst[bi],
                LLVMBuildMul(b, count, cg_i64(m, es), ""));
  }
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  LLVMBuildCondBr(b, LLVMBuildAnd(b, go, LLVMBuildICmp(b, LLVMIntSLT, end, hi, ""), ""), head, fence);
  LLVMValueRef in_v[2] = {lo, end};
  LLVMBasicBlockRef in_b[2] = {entry, next};
  LLVMAddIncoming(cur, in_v, in_b, 2);
  LLVMPositionBuilderAtEnd(b, fence);
  cg_host_sfence_if(L, go);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
  ctx_free(L->ctx, args);
  ctx_free(L->ctx, dst);
}
