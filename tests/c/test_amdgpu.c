/* test_amdgpu.c: the AMDGPU target without an AMD GPU: every kernel of the golden files
 * (tests/golden/NN_name.loom) and of the strategy cases below compiled for gfx90a, gfx942 (MI300) and gfx1100
 * (RDNA3, wave 32), and for NVIDIA (sm_90) beside them, then for each AMD code object:
 *  - the ELF file read here (EM_AMDGPU, HSA OS/ABI and ABI version of the code object version, e_flags
 *    mach of the chip, a FUNC and a 64-byte kernel descriptor "<name>.kd" per entry, no undefined
 *    symbol) and by llvm-readelf-19 (machine, flags, descriptors, the metadata note);
 *  - the metadata through comgr's API (one explicit by_value argument of the parameter block at offset
 *    0, kernarg size and alignment, wave size, 1024-thread workgroups allowed, no scratch), equal to
 *    llvm-readelf's reading of the same note;
 *  - registers and LDS within the chip's limits for a 1024-thread block (the largest launched), no VGPR
 *    spill, SGPR spills only into VGPR lanes (no scratch: the complex math's many exec masks);
 *  - the memory traffic from the machine code: every innermost loop of each entry with global loads or
 *    stores (llvm-objdump-19 for AMD, the PTX for NVIDIA) must move a whole number of points' worth of
 *    the bytes the kernel IR says one point reads and writes (the per-point model: each loaded buffer's
 *    element once, each stored one once), and the AMD entry must show the same per-point figures in
 *    loops as the NVIDIA entry, with accesses at least as wide (16-byte vectors where NVIDIA has them;
 *    wider where AMD's backend merges the two parts of a complex element that NVPTX loads one by one);
 *    reads of the module's own tables (an inlined libdevice sinf's Payne-Hanek loop over __cudart_i2opi_f,
 *    sin's coefficient table) are constants of the code, not traffic (amdgpu_check.h's ptx_traffic; checked
 *    on hand-written PTX here, both ways);
 *  - a digest of each target's optimized LLVM IR per entry (calling convention, parameter passing,
 *    intrinsics, loads and stores by address space and type, LDS globals) against the golden set
 *    tests/golden/gpu/<name>.txt (LOOM_UPDATE_GOLDEN=1 rewrites it; review the diff).
 * NVIDIA's libdevice inlining rule (codegen/nvptx.c) is checked on three kernels' PTX (sinf and float64 log
 * inlined, six sinf/cosf per point over the budget kept as calls).
 * Each line of the summary says which linker a code object took (comgr where it knows the chip, else
 * ld.lld); code object v4, forced linkers and raw modules are test_amdgpu_link.c's. Without libdevice (CI) the NVIDIA compile of
 * kernels with math functions is not possible: their NVIDIA digest and traffic come from the golden
 * file. Prints "N passed, N failed".
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/IRReader.h>

#include "amdgpu_check.h"
#include "codegen/cg_lower.h"
#include "codegen/codegen.h"
#include "ir/ir.h"
#include "passes/passes.h"

static int g_pass, g_fail;
#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, __VA_ARGS__)
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    g_pass++;
    return true;
  }
  g_fail++;
  if (g_fail > 200) return false;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

static LoomContext g_ctx;

/* ---- targets ---------------------------------------------------------------------------------------- */
enum { T_NV, T_90A, T_942, T_1100, NTARGET };
static const char *const tname[NTARGET] = {"nvptx", "gfx90a", "gfx942", "gfx1100"};
static CgTarget *g_t[NTARGET];
static CgAmdChip g_chip[NTARGET];

/* ---- the digest of a target's optimized LLVM IR -------------------------------------------------------- */

typedef struct Count {
  char key[160];
  int n;
} Count;

static void count_add(Count *c, int *n, int max, const char *key) {
  for (int i = 0; i < *n; i++)
    if (!strcmp(c[i].key, key)) {
      c[i].n++;
      return;
    }
  if (*n < max) {
    snprintf(c[*n].key, sizeof c[*n].key, "%s", key);
    c[(*n)++].n = 1;
  }
}

static int cmp_count(const void *a, const void *b) { return strcmp(((const Count *)a)->key, ((const Count *)b)->key); }

/* The entry's kind from its name: loom_k12_row -> row. */
static const char *entry_kind(const char *name) {
  const char *u = strrchr(name, '_');
  return u ? u + 1 : name;
}

static void type_str(LLVMTypeRef t, char *buf, size_t cap) {
  char *s = LLVMPrintTypeToString(t);
  snprintf(buf, cap, "%s", s);
  LLVMDisposeMessage(s);
}

/* Appends the digest of every defined external function (the entries) and LDS global of ir to out. */
static void digest_ir(const char *ir, char *out, size_t cap) {
  size_t len = strlen(out);
#define OUT(...) (len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, __VA_ARGS__), len = len < cap ? len : cap)
  LLVMContextRef c = LLVMContextCreate();
  LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, strlen(ir), "ir");
  LLVMModuleRef m = NULL;
  char *msg = NULL;
  if (LLVMParseIRInContext(c, mb, &m, &msg)) {
    OUT("  (IR does not parse: %s)\n", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    LLVMContextDispose(c);
    return;
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    unsigned as = LLVMGetPointerAddressSpace(LLVMTypeOf(g));
    if (as != 3) continue;
    char ts[64];
    type_str(LLVMGlobalGetValueType(g), ts, sizeof ts);
    LLVMValueRef init = LLVMGetInitializer(g);
    size_t n = 0;
    OUT("  shared %s %s %s\n", LLVMGetValueName2(g, &n), ts,
        !init ? "extern" : LLVMIsPoison(init) ? "poison" : LLVMIsUndef(init) ? "undef" : "initialized");
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || LLVMGetLinkage(f) != LLVMExternalLinkage) continue;
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    OUT("  entry %s: cc %u", entry_kind(name), LLVMGetFunctionCallConv(f));
    static const char *const keys[] = {"amdgpu-flat-work-group-size", "uniform-work-group-size"};
    for (int i = 0; i < 2; i++) {
      LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, keys[i], (unsigned)strlen(keys[i]));
      unsigned vl = 0;
      if (a) OUT(" %s=%s", keys[i], LLVMGetStringAttributeValue(a, &vl));
    }
    LLVMValueRef p = LLVMGetParam(f, 0);
    static const char *const pass[] = {"byval", "byref"};
    for (int i = 0; p && i < 2; i++) {
      LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(f, 1, LLVMGetEnumAttributeKindForName(pass[i], strlen(pass[i])));
      if (!a) continue;
      char ts[64];
      type_str(LLVMGetTypeAttributeValue(a), ts, sizeof ts);
      OUT(" param %s(%s) as%u", pass[i], ts, LLVMGetPointerAddressSpace(LLVMTypeOf(p)));
    }
    OUT("\n");
    Count cnt[256];
    int nc = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        char key[160], ts[64];
        LLVMOpcode op = LLVMGetInstructionOpcode(i);
        if (op == LLVMLoad || op == LLVMStore) {
          LLVMValueRef ptr = LLVMGetOperand(i, op == LLVMLoad ? 0 : 1);
          type_str(op == LLVMLoad ? LLVMTypeOf(i) : LLVMTypeOf(LLVMGetOperand(i, 0)), ts, sizeof ts);
          snprintf(key, sizeof key, "%s as%u %s", op == LLVMLoad ? "load" : "store",
                   LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)), ts);
          count_add(cnt, &nc, 256, key);
        } else if (op == LLVMCall) {
          LLVMValueRef callee = LLVMGetCalledValue(i);
          size_t cn = 0;
          const char *cname = callee ? LLVMGetValueName2(callee, &cn) : "";
          snprintf(key, sizeof key, "call %s", cn ? cname : "(indirect)");
          count_add(cnt, &nc, 256, key);
        } else if (op == LLVMFence || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
          count_add(cnt, &nc, 256, op == LLVMFence ? "fence" : "atomic");
        }
      }
    qsort(cnt, (size_t)nc, sizeof cnt[0], cmp_count);
    for (int k = 0; k < nc; k++) OUT("    %s x%d\n", cnt[k].key, cnt[k].n);
  }
#undef OUT
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
}

/* ---- traffic per point ---------------------------------------------------------------------------------- */

typedef struct Model {
  long load, store; /* bytes per point (or, for the cached ROW entry, per O item of a thread) */
  bool licm;        /* loops over O, or over R loading only buffers that do not move along R: whether
                     * they exist depends on what LICM hoisted, so the targets may differ */
  long once;        /* bytes per loop iteration whatever its points (n-d vector entries: the buffers
                     * broadcast along the last dim, one load per vector) */
} Model;

/* The buffers (bits) the instructions root needs load. */
static uint64_t loads_of(const KernelIr *k, int32_t root) {
  uint8_t *need = calloc((size_t)k->ninstr + 1, 1);
  uint64_t mask = 0;
  if (root >= 0 && root < k->ninstr) need[root] = 1;
  for (int32_t i = root; i >= 0; i--) {
    if (!need[i]) continue;
    const KInstr *in = &k->instrs[i];
    if ((in->kind == KI_LOAD || in->kind == KI_GATHER) && in->buf < 64) mask |= 1ull << in->buf;
    if (in->kind == KI_ELEM || in->kind == KI_CAST || in->kind == KI_USER_OUT || in->kind == KI_GATHER)
      for (int j = 0; j < 3; j++)
        if (in->src[j] >= 0 && in->src[j] < i) need[in->src[j]] = 1;
  }
  free(need);
  return mask;
}

static long bytes_of(const KernelIr *k, uint64_t mask) {
  long n = 0;
  for (int b = 0; b < k->nbuf && b < 64; b++)
    if (mask & (1ull << b)) n += (long)loom_dtype_size((LoomDType)k->bufs[b].dtype);
  return n;
}

/* What one point of entry `kind` of k moves: the candidates (a ROW entry's loops are one per phase). */
static int entry_models(const KernelIr *k, const char *kind, Model *m, int max) {
  int n = 0;
  uint64_t all = 0;
  for (int i = 0; i < k->ninstr; i++)
    if ((k->instrs[i].kind == KI_LOAD || k->instrs[i].kind == KI_GATHER) && k->instrs[i].buf < 64)
      all |= 1ull << k->instrs[i].buf;
  uint8_t tiled[64];
  if (!strcmp(kind, "elem") && cg_gpu_tile_dim(k, tiled) >= 0 && n + 2 <= max) {
    /* the tiled main entry (codegen/gpu_tile.c): one loop reads the tiled buffers into shared memory,
     * one reads the others and stores; the plain fallback loop moves whole points */
    uint64_t tm = 0;
    for (int b = 0; b < k->nbuf && b < 64; b++)
      if (tiled[b]) tm |= 1ull << b;
    long st = 0;
    for (int s = 0; s < k->nstore; s++) st += (long)loom_dtype_size((LoomDType)k->bufs[k->stores[s].buf].dtype);
    m[n++] = (Model){bytes_of(k, all), st, false, 0};
    m[n++] = (Model){bytes_of(k, tm), 0, false, 0};
    m[n++] = (Model){bytes_of(k, all & ~tm), st, false, 0};
    return n;
  }
  if (!strcmp(kind, "finish") || !strcmp(kind, "finishb")) { /* a loop over the parts per REDUCE phase */
    for (int p = 0; p < k->nphase && n < max; p++) {
      const KPhase *ph = &k->phases[p];
      if (ph->kind != KP_REDUCE) continue;
      bool arg = ph->reduce_op == LOOM_REDUCE_ARGMIN || ph->reduce_op == LOOM_REDUCE_ARGMAX;
      LoomDType vt = arg ? (LoomDType)k->instrs[ph->value].dtype : (LoomDType)ph->acc_dtype;
      m[n++] = (Model){(long)loom_dtype_size(vt) + (arg ? 8 : 0), 0, false, 0};
    }
    return n;
  }
  if ((!strcmp(kind, "vec") || !strcmp(kind, "vecw")) && k->ndim > 1 && n < max) {
    /* a vector of one row: buffers contiguous along the last dim per point, broadcast ones once */
    uint64_t bc = 0;
    for (int b = 0; b < k->nbuf && b < 64; b++)
      if ((all >> b & 1) && k->bufs[b].layout[k->ndim - 1] == KL_ZERO) bc |= 1ull << b;
    Model v = {.load = bytes_of(k, all & ~bc), .once = bytes_of(k, bc)};
    for (int s = 0; s < k->nstore; s++) v.store += (long)loom_dtype_size((LoomDType)k->bufs[k->stores[s].buf].dtype);
    m[n++] = v;
    if (bc && n < max) { /* an iteration of two vectors (cg_gpu_elemv_pair): the broadcast loads twice */
      v.once *= 2;
      m[n++] = v;
    }
  }
  bool cached = !strcmp(kind, "rowc") || !strcmp(kind, "rowcv");
  if (cached) { /* K points per thread and O item, loaded once; MAP stores K, FINAL stores 1. K: 64 bytes of
                 * the widest loaded dtype, 16 to 32 points, 16 when more than two buffers are loaded
                 * (codegen/gpu_lower.c) */
    long widest = 1;
    for (int b = 0; b < k->nbuf && b < 64; b++)
      if ((all >> b & 1) && (long)loom_dtype_size((LoomDType)k->bufs[b].dtype) > widest)
        widest = (long)loom_dtype_size((LoomDType)k->bufs[b].dtype);
    int nloaded = 0;
    for (int b = 0; b < k->nbuf && b < 64; b++) nloaded += (int)(all >> b & 1);
    long K = nloaded > 2 || 64 / widest < 16 ? 16 : 64 / widest > 32 ? 32 : 64 / widest;
    /* the vector entry's peel (codegen/gpu_cached.c, LOOM_GPU_ROWV_PEEL unset): one extra point a thread
     * (a row's head and tail) in entries of fewer than 32 points with a buffer contiguous along the one R dim */
    bool contig = false;
    for (int b = 0; b < k->nbuf; b++) contig = contig || k->bufs[b].layout[k->ndim - 1] == KL_ONE;
    if (!strcmp(kind, "rowcv") && K < 32 && contig && !k->snippet && k->ndim - k->nkeep == 1 && !getenv("LOOM_GPU_ROWV_PEEL"))
      K++;
    Model c = {K * bytes_of(k, all), 0, false, 0};
    for (int p = 0; p < k->nphase; p++)
      for (int s = 0; s < k->phases[p].nstores; s++) {
        const KStore *st = &k->stores[k->phases[p].store_begin + s];
        long sz = (long)loom_dtype_size((LoomDType)k->bufs[st->buf].dtype);
        c.store += k->phases[p].kind == KP_MAP ? K * sz : k->phases[p].kind == KP_FINAL ? sz : 0;
      }
    m[n++] = c;
    /* staged short rows (codegen/gpu_stage.c) in the scalar entry: each staged buffer's tile copied in
     * (loads) or out (stores) point by point or 16 bytes at a time, then each thread's serial walk of a
     * phase moves the buffers that are not staged only */
    int sizes[64];
    for (int b = 0; b < k->nbuf && b < 64; b++) sizes[b] = (int)loom_dtype_size((LoomDType)k->bufs[b].dtype);
    uint64_t staged = !strcmp(kind, "rowc") && !k->snippet && !cg_kernel_addresses_by_value(k) && k->nbuf <= 64
                          ? cg_gpu_stage_mask(k->bufs, sizes, k->nbuf, k->ndim, k->nkeep, (int)K) : 0;
    for (int b = 0; b < k->nbuf && staged && n + 2 <= max; b++)
      if (staged >> b & 1) {
        m[n++] = (Model){sizes[b], 0, true, 0}; /* (licm: loop shapes the targets' unrollers may differ on) */
        m[n++] = (Model){0, sizes[b], true, 0};
      }
    for (int p = 0; p < k->nphase && staged && n < max; p++) {
      const KPhase *ph = &k->phases[p];
      Model w = {0, 0, true, 0};
      uint64_t l = ph->kind == KP_REDUCE ? loads_of(k, ph->value) : 0;
      for (int s = 0; ph->kind == KP_MAP && s < ph->nstores; s++) {
        const KStore *st = &k->stores[ph->store_begin + s];
        l |= loads_of(k, st->value);
        if (!(staged >> st->buf & 1)) w.store += sizes[st->buf];
      }
      w.load = bytes_of(k, l & ~staged);
      if (w.load || w.store) m[n++] = w;
    }
    return n;
  }
  /* loops over O points (an R loop whose loads do not move along R: hoisted, LICM): the buffers loaded
   * with a zero stride along every R dim, and the FINAL stores (or a part's accumulator) */
  uint64_t inv = 0;
  for (int b = 0; b < k->nbuf && b < 64 && k->nkeep < k->ndim; b++) {
    bool flat = (all >> b) & 1;
    for (int dd = k->nkeep; dd < k->ndim && flat; dd++) flat = k->bufs[b].layout[dd] == KL_ZERO;
    if (flat) inv |= 1ull << b;
  }
  if (k->nkeep < k->ndim && n < max) {
    Model o = {bytes_of(k, inv), 0, true, 0};
    if (!strcmp(kind, "part") || !strcmp(kind, "partv")) {
      const KPhase *ph = &k->phases[0];
      bool arg = ph->reduce_op == LOOM_REDUCE_ARGMIN || ph->reduce_op == LOOM_REDUCE_ARGMAX;
      o.store = (long)loom_dtype_size(arg ? (LoomDType)k->instrs[ph->value].dtype : (LoomDType)ph->acc_dtype) + (arg ? 8 : 0);
    } else {
      for (int p = 0; p < k->nphase; p++)
        for (int s = 0; k->phases[p].kind == KP_FINAL && s < k->phases[p].nstores; s++)
          o.store += (long)loom_dtype_size((LoomDType)k->bufs[k->stores[k->phases[p].store_begin + s].buf].dtype);
    }
    if (o.load) m[n++] = o;
  }
  for (int p = 0; p < k->nphase && n < max; p++) {
    const KPhase *ph = &k->phases[p];
    if (ph->kind == KP_REDUCE) { /* with its side stores (ir.h): stored at every point it folds */
      uint64_t l = loads_of(k, ph->value);
      long st = 0;
      for (int s = 0; s < ph->nstores; s++) {
        l |= loads_of(k, k->stores[ph->store_begin + s].value);
        st += (long)loom_dtype_size((LoomDType)k->bufs[k->stores[ph->store_begin + s].buf].dtype);
      }
      m[n++] = (Model){bytes_of(k, l), st, (l & ~inv) == 0 && st == 0, 0};
    } else if (ph->kind == KP_MAP) {
      Model x = {0, 0, false, 0};
      uint64_t mask = 0;
      for (int s = 0; s < ph->nstores; s++) {
        const KStore *st = &k->stores[ph->store_begin + s];
        mask |= loads_of(k, st->value) | (st->scatter ? loads_of(k, st->index) : 0); /* a scatter's index too */
        x.store += (long)loom_dtype_size((LoomDType)k->bufs[st->buf].dtype);
      }
      x.load = bytes_of(k, mask);
      x.licm = (mask & ~inv) == 0 && k->nkeep < k->ndim;
      m[n++] = x;
    } else if (ph->kind == KP_SCAN) { /* codegen/lower_scan.c: a point folds the value and runs the stores */
      uint64_t lv = loads_of(k, ph->value), mask = lv;
      long st = 0;
      for (int s = 0; s < ph->nstores; s++) {
        const KStore *kst = &k->stores[ph->store_begin + s];
        mask |= loads_of(k, kst->value);
        st += (long)loom_dtype_size((LoomDType)k->bufs[kst->buf].dtype);
      }
      if (!strcmp(kind, "part")) m[n++] = (Model){bytes_of(k, lv), 0, false, 0}; /* a part's fold */
      else m[n++] = (Model){bytes_of(k, mask), st, false, 0};
      if (!strcmp(kind, "scanp") && n < max) /* the carry: the partials of the parts before */
        m[n++] = (Model){(long)loom_dtype_size((LoomDType)ph->acc_dtype), 0, false, 0};
    }
  }
  return n;
}

/* The model loop l handles a whole number of points of (-1: none). */
static int match_model(const AmdTraffic *l, const Model *m, int nm, long *points) {
  for (int i = 0; i < nm; i++) {
    long load = l->load - m[i].once;
    long u = m[i].load ? load / m[i].load : m[i].store ? l->store / m[i].store : 0;
    if (u >= 1 && load == u * m[i].load && l->store == u * m[i].store) {
      *points = u;
      return i;
    }
  }
  return -1;
}

typedef struct EntryLoops {
  char kind[16];
  AmdLoops l;
} EntryLoops;

/* The lines "  loops <entry> L/S/W ..." of a digest section (figures recorded in a golden file). */
static int parse_loops(const char *sec, EntryLoops *out, int max) {
  int n = 0;
  for (const char *p = sec; p && *p && n < max;) {
    if (!strncmp(p, "  loops ", 8)) {
      EntryLoops e;
      memset(&e, 0, sizeof e);
      int used = 0;
      if (sscanf(p + 8, "%15s%n", e.kind, &used) == 1) {
        const char *q = p + 8 + used;
        AmdTraffic t;
        int u2 = 0;
        while (e.l.n < AMD_MAXLOOPS && sscanf(q, " %ld/%ld/%d%n", &t.load, &t.store, &t.widest, &u2) == 3) {
          e.l.loop[e.l.n++] = t;
          q += u2;
        }
        out[n++] = e;
      }
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}

static int cmp_loops(const void *a, const void *b) { return strcmp(((const EntryLoops *)a)->kind, ((const EntryLoops *)b)->kind); }

/* Checks every innermost memory loop of one entry against the kernel's per-point models; fills the
 * figures per point (per model: widest access, whether a loop matched). */
typedef struct PerPoint {
  bool seen[16];
  int widest[16];
  char text[256]; /* "8/0 B x8 (w4), 8/0 B x1 (w4)": per loop, bytes per point x points per iteration */
} PerPoint;
static void per_point(const char *what, const char *target, const KernelIr *k, const EntryLoops *e, PerPoint *pp) {
  Model m[16];
  int nm = entry_models(k, e->kind, m, 16);
  memset(pp, 0, sizeof *pp);
  size_t tl = 0;
  for (int i = 0; i < e->l.n; i++) {
    long u = 0;
    int j = match_model(&e->l.loop[i], m, nm, &u);
    if (j >= 0 && tl < sizeof pp->text)
      tl += (size_t)snprintf(pp->text + tl, sizeof pp->text - tl, "%s%ld/%ld x%ld (w%d)", tl ? ", " : "", m[j].load,
                             m[j].store, u, e->l.loop[i].widest);
    if (!CHECK(j >= 0, "%s %s entry %s: a loop moves %ld/%ld bytes per iteration, not a whole number of points (%ld/%ld "
               "bytes per point%s)", what, target, e->kind, e->l.loop[i].load, e->l.loop[i].store, nm ? m[0].load : -1,
               nm ? m[0].store : -1, nm > 1 ? ", or another phase's" : ""))
      continue;
    pp->seen[j] = true;
    if (e->l.loop[i].widest > pp->widest[j]) pp->widest[j] = e->l.loop[i].widest;
  }
}

/* ---- the PTX traffic reader on hand-written PTX ----------------------------------------------------------- */

/* A grid-stride loop over points (4 bytes loaded, 4 stored through the parameter's pointer) holding an
 * inner loop of 6 reads: from the module's table `tab` (an inlined sinf's Payne-Hanek loop: no data, so
 * the point loop is the innermost memory loop) or, with `data`, through the parameter's pointer (a
 * loop of 4-byte data reads of its own). %s: the inner loop's base pointer. */
static const char g_ptx_tables[] =
    ".version 7.8\n.target sm_90\n.address_size 64\n"
    ".global .align 4 .b8 tab[24] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};\n"
    ".visible .entry k_elem(\n\t.param .u64 k_elem_param_0\n)\n{\n"
    "\tld.param.u64 \t%%rd1, [k_elem_param_0];\n\tcvta.to.global.u64 \t%%rd2, %%rd1;\n\tmov.u64 \t%%rd3, tab;\n"
    "$L__BB0_1:\n\tld.global.f32 \t%%f1, [%%rd2];\n\tld.global.u32 \t%%r9, [tab+8];\n\tmov.u32 \t%%r1, 0;\n"
    "\tmov.u64 \t%%rd4, %s;\n"
    "$L__BB0_2:\n\tld.global.u32 \t%%r2, [%%rd4];\n\tadd.s64 \t%%rd4, %%rd4, 4;\n\tadd.s32 \t%%r1, %%r1, 1;\n"
    "\tsetp.lt.u32 \t%%p1, %%r1, 6;\n\t@%%p1 bra \t$L__BB0_2;\n"
    "\tst.global.f32 \t[%%rd2+4], %%f1;\n\tadd.s64 \t%%rd2, %%rd2, 8;\n\tsetp.ne.s64 \t%%p2, %%rd2, 0;\n"
    "\t@%%p2 bra \t$L__BB0_1;\n\tret;\n\n}\n";

static void check_ptx_table_loops(void) {
  char ptx[2048];
  snprintf(ptx, sizeof ptx, g_ptx_tables, "%rd3"); /* the table loop */
  AmdLoops t = ptx_traffic(ptx, "k_elem");
  CHECK(t.n == 1 && t.loop[0].load == 4 && t.loop[0].store == 4 && t.loop[0].widest == 4,
        "PTX with a table loop inside the point loop: %d innermost memory loops, the first %ld/%ld/%d (want one, "
        "4/4/4: table reads are no traffic)", t.n, t.n ? t.loop[0].load : -1, t.n ? t.loop[0].store : -1,
        t.n ? t.loop[0].widest : -1);
  snprintf(ptx, sizeof ptx, g_ptx_tables, "%rd2"); /* the same loop over the parameter's data */
  t = ptx_traffic(ptx, "k_elem");
  CHECK(t.n == 1 && t.loop[0].load == 4 && t.loop[0].store == 0,
        "PTX with a data loop inside the point loop: %d innermost memory loops, the first %ld/%ld (want one, 4/0)", t.n,
        t.n ? t.loop[0].load : -1, t.n ? t.loop[0].store : -1);
}

/* ---- one kernel on every target ------------------------------------------------------------------------ */

static bool env_on(const char *name) {
  const char *v = getenv(name);
  return v && !strcmp(v, "1");
}

/* Structural checks of one AMD code object of gk (target ti); fills the entries' loops. */
static void check_code_object(const char *what, int ti, const CgGpuKernel *gk, int cov, EntryLoops *tr, int *ntr) {
  const CgAmdChip *chip = &g_chip[ti];
  const char *linker = cg_amdgpu_linker(g_t[ti], NULL);
  /* the ELF file, read here */
  AmdElfFacts f;
  if (!CHECK(amd_elf_read(gk->code, gk->code_size, &f), "%s %s: not an ELF64 file", what, chip->name)) return;
  CHECK(f.machine == EM_AMDGPU && f.osabi == AMD_OSABI_HSA && f.abiversion == (unsigned)(cov == 4 ? 2 : 3) &&
            f.type == ET_DYN && (f.flags & 0xffu) == chip->mach,
        "%s %s: ELF machine %u osabi %u abi %u type %u flags 0x%x (want %u, 64, %d, %d, mach 0x%x)", what, chip->name,
        f.machine, f.osabi, f.abiversion, f.type, f.flags, EM_AMDGPU, cov == 4 ? 2 : 3, ET_DYN, chip->mach);
  CHECK(f.nundef == 0, "%s %s: %d undefined symbols (%s)", what, chip->name, f.nundef, f.undef);
  int nentries = 0;
  for (int i = 0; i < CG_NENTRY; i++) {
    const char *e = cg_gpu_entry_name((CgGpuKernel *)gk, i);
    if (!e[0]) continue;
    nentries++;
    CHECK(amd_elf_has_kernel(gk->code, gk->code_size, e), "%s %s: no FUNC %s or 64-byte %s.kd", what, chip->name, e, e);
  }
  CHECK(f.nkd == nentries && f.nfunc == nentries, "%s %s: %d descriptors, %d functions for %d entries", what,
        chip->name, f.nkd, f.nfunc, nentries);
  /* comgr's metadata */
  CgAmdMeta meta;
  Diag d = {.status = LOOM_OK};
  if (!CHECK(cg_amdgpu_read_metadata(&g_ctx, gk->code, gk->code_size, &meta, &d) == LOOM_OK, "%s %s: metadata: %s",
             what, chip->name, d.msg))
    return;
  char target[64];
  snprintf(target, sizeof target, "amdgcn-amd-amdhsa--%.40s", chip->name);
  CHECK(meta.version[0] == 1 && meta.version[1] == (cov == 4 ? 1 : 2) && !strncmp(meta.target, target, strlen(target)),
        "%s %s: metadata version %d.%d target %s", what, chip->name, meta.version[0], meta.version[1], meta.target);
  CHECK(meta.nkernels == nentries, "%s %s: %d kernels in the metadata, %d entries", what, chip->name, meta.nkernels,
        nentries);
  /* llvm-readelf, the independent reader */
  char path[256];
  AmdReadelf re;
  memset(&re, 0, sizeof re);
  bool wrote = amd_write_temp(gk->code, gk->code_size, ".co", path, sizeof path);
  if (wrote) amd_readelf(path, &re);
  if (CHECK(re.ok, "%s %s: llvm-readelf-19 did not run", what, chip->name)) {
    CHECK(!strcmp(re.machine, "EM_AMDGPU") && strstr(re.flags, chip->name) && re.nkd == nentries &&
              re.nk == meta.nkernels && !strcmp(re.target, meta.target) && re.version[0] == meta.version[0] &&
              re.version[1] == meta.version[1],
          "%s %s: llvm-readelf: machine %s flags %s, %d descriptors, %d kernels, target %s, version %d.%d", what,
          chip->name, re.machine, re.flags, re.nkd, re.nk, re.target, re.version[0], re.version[1]);
  }
  /* every kernel: argument layout, limits, the same facts from both readers */
  const int block = 1024; /* the largest block the launcher uses */
  int waves = (block + chip->wave - 1) / chip->wave, per_simd = (waves + chip->simds - 1) / chip->simds;
  for (int i = 0; i < meta.nkernels; i++) {
    const CgAmdKernelMeta *k = &meta.kernels[i];
    const CgAmdArg *a = k->nargs > 0 ? &k->args[0] : NULL;
    int nexplicit = 0;
    for (int j = 0; j < k->nargs; j++) nexplicit += strncmp(k->args[j].kind, "hidden_", 7) != 0;
    CHECK(a && nexplicit == 1 && !strcmp(a->kind, "by_value") && a->offset == 0 && a->size == (uint32_t)gk->nwords * 8 &&
              k->kernarg_size >= a->size && k->kernarg_align >= 8,
          "%s %s %s: arguments: %d explicit, first %s @%u size %u (want by_value @0 size %d), kernarg %u align %u", what,
          chip->name, k->name, nexplicit, a ? a->kind : "-", a ? a->offset : 0, a ? a->size : 0, gk->nwords * 8,
          k->kernarg_size, k->kernarg_align);
    for (int j = 1; a && j < k->nargs; j++)
      CHECK(k->args[j].offset >= a->offset + a->size && k->args[j].offset + k->args[j].size <= k->kernarg_size,
            "%s %s %s: argument %d (%s) @%u+%u outside the kernarg segment (%u)", what, chip->name, k->name, j,
            k->args[j].kind, k->args[j].offset, k->args[j].size, k->kernarg_size);
    int vg = (k->vgprs + 7) / 8 * 8;
    CHECK(k->wave == (uint32_t)chip->wave && k->max_flat_workgroup >= (uint32_t)block && k->vgprs > 0 &&
              k->vgprs <= chip->max_vgprs && vg * per_simd <= chip->vgpr_file && k->sgprs > 0 &&
              k->sgprs <= chip->max_sgprs && k->group_segment <= (uint32_t)chip->lds_bytes && k->private_segment == 0 &&
              k->vgpr_spills <= 0,
          "%s %s %s: wave %u, max workgroup %u, %d VGPRs (x %d waves per SIMD of %d), %d SGPRs (max %d), LDS %u, "
          "scratch %u, spills %d/%d", what, chip->name, k->name, k->wave, k->max_flat_workgroup, k->vgprs, per_simd,
          chip->vgpr_file, k->sgprs, chip->max_sgprs, k->group_segment, k->private_segment, k->vgpr_spills,
          k->sgpr_spills);
    const AmdReadelfKernel *rk = NULL;
    for (int j = 0; j < re.nk && !rk; j++)
      if (!strcmp(re.k[j].name, k->name)) rk = &re.k[j];
    if (re.ok)
      CHECK(rk && rk->kernarg == k->kernarg_size && rk->vgprs == k->vgprs && rk->sgprs == k->sgprs &&
                rk->lds == k->group_segment && rk->priv == k->private_segment && rk->maxwg == k->max_flat_workgroup &&
                rk->wave == k->wave,
            "%s %s %s: llvm-readelf and comgr disagree (kernarg %ld/%u, vgpr %ld/%d, sgpr %ld/%d, lds %ld/%u)", what,
            chip->name, k->name, rk ? rk->kernarg : -1, k->kernarg_size, rk ? rk->vgprs : -1, k->vgprs,
            rk ? rk->sgprs : -1, k->sgprs, rk ? rk->lds : -1, k->group_segment);
    printf("  %-7s %-8s %-5s vgpr %3d sgpr %3d lds %5u kernarg %4u (%d hidden args) %s\n", chip->name,
           entry_kind(k->name), cov == 4 ? "cov4" : "cov5", k->vgprs, k->sgprs, k->group_segment, k->kernarg_size,
           k->nargs - nexplicit, linker);
  }
  /* loops from the disassembly */
  if (wrote && tr) {
    char names[32][128];
    AmdLoops t[32];
    int n = amd_objdump_traffic(path, chip->name, names, t, 32);
    CHECK(n == nentries, "%s %s: llvm-objdump-19 listed %d functions for %d entries", what, chip->name, n, nentries);
    for (int i = 0; i < n && *ntr < 32; i++) {
      snprintf(tr[*ntr].kind, sizeof tr[*ntr].kind, "%.15s", entry_kind(names[i]));
      tr[(*ntr)++].l = t[i];
    }
  }
  if (wrote) unlink(path);
  cg_amdgpu_meta_free(&g_ctx, &meta);
}

/* Compiles kernel k for every target, checks each code object, compares the traffic per point with
 * NVIDIA's and appends the digest to dig (when non-NULL). golden: this kernel's recorded section. */
static void run_kernel(const char *what, const KernelIr *k, char *dig, size_t cap, const char *golden) {
  EntryLoops nv[32];
  int nnv = 0;
  bool nv_known = false;
  for (int ti = 0; ti < NTARGET; ti++) {
    size_t len = dig ? strlen(dig) : 0;
    if (dig) snprintf(dig + len, cap - len, " target %s\n", tname[ti]);
    CgCompileOptions o = CG_COMPILE_DEFAULTS;
    o.want_llvm_ir = true;
    CgCompiled cc;
    Diag d = {.status = LOOM_OK};
    LoomStatus st = g_t[ti]->compile(g_t[ti], k, &o, &cc, &d);
    if (ti == T_NV && st == LOOM_ERR_UNSUPPORTED) { /* no libdevice here: the golden file's section */
      const char *sec = golden ? strstr(golden, " target nvptx\n") : NULL;
      const char *end = sec ? strstr(sec + 1, " target ") : NULL;
      printf("  nvptx: %s: %s\n", d.msg, sec ? "the recorded figures" : "no recorded figures");
      if (sec && dig) {
        size_t n = end ? (size_t)(end - sec) : strlen(sec);
        size_t h = strlen(" target nvptx\n");
        len = strlen(dig);
        snprintf(dig + len, cap - len, "%.*s", (int)(n - h), sec + h);
        char *copy = strndup(sec, n);
        nnv = parse_loops(copy, nv, 32);
        free(copy);
        nv_known = true;
      }
      continue;
    }
    if (!CHECK(st == LOOM_OK, "%s: compile for %s: %s", what, tname[ti], d.msg)) continue;
    const CgGpuKernel *gk = cc.gpu;
    EntryLoops tr[32];
    int ntr = 0;
    if (ti == T_NV) {
      for (int i = 0; i < CG_NENTRY && ntr < 32; i++) {
        const char *e = cg_gpu_entry_name((CgGpuKernel *)gk, i);
        if (!e[0]) continue;
        snprintf(tr[ntr].kind, sizeof tr[ntr].kind, "%.15s", entry_kind(e));
        tr[ntr++].l = ptx_traffic(gk->code, e);
      }
      memcpy(nv, tr, sizeof tr);
      nnv = ntr;
      nv_known = true;
    } else {
      CHECK(gk->kind == CG_BINARY_AMDGPU && gk->wave == g_chip[ti].wave, "%s %s: binary kind %d wave %d", what,
            tname[ti], gk->kind, gk->wave);
      check_code_object(what, ti, gk, 5, tr, &ntr);
    }
    qsort(tr, (size_t)ntr, sizeof tr[0], cmp_loops);
    for (int i = 0; i < ntr && !k->snippet; i++) { /* per point: this target's figures, and NVIDIA's */
      /* the look-back scan entry (codegen/lower_scan_lookback.c): its loops wait on status words per tile,
       * not points, and NVPTX prints those accesses volatile (not parsed); test_gpu_scan checks it */
      if (cg_gpu_scan_lookback_on() && !strcmp(tr[i].kind, "scanp")) continue;
      PerPoint mine, ref;
      per_point(what, tname[ti], k, &tr[i], &mine);
      const EntryLoops *n = NULL;
      for (int j = 0; ti != T_NV && nv_known && j < nnv && !n; j++)
        if (!strcmp(nv[j].kind, tr[i].kind)) n = &nv[j];
      if (ti != T_NV && nv_known && CHECK(n, "%s %s: entry %s has no NVIDIA twin", what, tname[ti], tr[i].kind)) {
        per_point(what, "nvptx", k, n, &ref);
        Model m[16];
        int nm = entry_models(k, tr[i].kind, m, 16);
        printf("  %-7s %-8s bytes per point loaded/stored x points per loop iteration (widest access): %s; nvptx %s\n",
               tname[ti], tr[i].kind, mine.text[0] ? mine.text : "no loop", ref.text[0] ? ref.text : "no loop");
        bool by_value = cg_kernel_addresses_by_value(k); /* gathers, scatters: a branch around each scatter
                                                            store, loops the targets shape differently */
        for (int j = 0; j < nm; j++)
          if (!m[j].licm && !by_value)
            CHECK(mine.seen[j] == ref.seen[j] && mine.widest[j] >= ref.widest[j],
                "%s %s entry %s: %ld/%ld bytes per point %s (widest access %d), nvptx %s (widest %d)", what, tname[ti],
                tr[i].kind, m[j].load, m[j].store, mine.seen[j] ? "in a loop" : "in no loop", mine.widest[j],
                ref.seen[j] ? "in a loop" : "in no loop", ref.widest[j]);
      }
    }
    if (dig) {
      for (int i = 0; i < ntr; i++) {
        len = strlen(dig);
        len += (size_t)snprintf(dig + len, cap - len, "  loops %s", tr[i].kind);
        for (int j = 0; j < tr[i].l.n; j++)
          len += (size_t)snprintf(dig + len, cap - len, " %ld/%ld/%d", tr[i].l.loop[j].load, tr[i].l.loop[j].store,
                                  tr[i].l.loop[j].widest);
        snprintf(dig + len, cap - len, "\n");
      }
      if (cc.llvm_ir) digest_ir(cc.llvm_ir, dig, cap);
    }
    g_t[ti]->release(g_t[ti], &cc);
  }
}

/* ---- cases: graph text -> the pipeline's kernels --------------------------------------------------------- */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

/* ---- libdevice inlining on NVIDIA (codegen/nvptx.c limit_inlining) ------------------------------------ */

/* The PTX of the first kernel of one-output graph text (all entries); NULL (and a note) without libdevice. */
static char *nvptx_of(const char *what, const char *graph_text) {
  IrGraph g;
  Diag d = {.status = LOOM_OK};
  Arena arena;
  arena_init(&arena, &g_ctx);
  int32_t roots[4], nroots = 0;
  LoomArray outs[4];
  memset(outs, 0, sizeof outs);
  char *ptx = NULL;
  if (!CHECK(ir_graph_init(&g, &g_ctx, &d) == LOOM_OK, "%s: %s", what, d.msg)) return NULL;
  IrModule m;
  memset(&m, 0, sizeof m);
  if (CHECK(ir_parse_graph(&g, graph_text, &nroots, roots, 4, &d) == LOOM_OK, "%s: parse: %s", what, d.msg)) {
    for (int32_t i = 0; i < nroots; i++) {
      const IrNode *n = &g.nodes[roots[i]];
      outs[i].dtype = (LoomDType)n->dtype;
      outs[i].ndim = n->ndim;
      memcpy(outs[i].shape, n->shape, sizeof outs[i].shape);
      pass_contiguous_strides(n->ndim, n->shape, outs[i].strides);
    }
    m.graph = &g, m.arena = &arena, m.nroots = nroots, m.roots = roots, m.outs = outs;
    if (CHECK(pass_run_pipeline(&m, &d) == LOOM_OK, "%s: pipeline: %s", what, d.msg) &&
        CHECK(m.schedule->nkernel >= 1, "%s: no kernel", what)) {
      CgCompileOptions o = CG_COMPILE_DEFAULTS;
      CgCompiled cc;
      LoomStatus st = g_t[T_NV]->compile(g_t[T_NV], m.schedule->kernels[0].ir, &o, &cc, &d);
      if (st == LOOM_ERR_UNSUPPORTED) printf("  %s: %s: not checked\n", what, d.msg);
      else if (CHECK(st == LOOM_OK, "%s: nvptx compile: %s", what, d.msg)) {
        ptx = strndup(cc.gpu->code, cc.gpu->code_size);
        g_t[T_NV]->release(g_t[T_NV], &cc);
      }
    }
  }
  ir_graph_free(&g);
  arena_free_all(&arena);
  return ptx;
}

/* Whether PTX text defines libdevice function `fn` out of line (".func ... fn(" with a body). */
static bool ptx_has_func(const char *ptx, const char *fn) {
  char pat[96];
  snprintf(pat, sizeof pat, " %s(\n", fn);
  for (const char *p = strstr(ptx, pat); p; p = strstr(p + 1, pat)) {
    const char *line = p;
    while (line > ptx && line[-1] != '\n') line--;
    if (!strncmp(line, ".func", 5) || !strncmp(line, ".visible .func", 14)) return true;
  }
  return false;
}

/* The rule: functions up to 200 instructions inlined while the module's copies of those above 64 stay
 * within 4096 instructions, the smallest first. Checked in the PTX: an out-of-line function is a .func. */
static void check_inline_rule(void) {
  if (getenv("LOOM_NV_INLINE_MAX") || getenv("LOOM_NV_INLINE_BUDGET")) return; /* another rule asked for */
  /* float32 sin (sinf: ~130 instructions with its Payne-Hanek loop; 1 call per point): inlined, the table
   * read in the entries */
  char *ptx = nvptx_of("inline: float32 sin", "%0 = input 0 f32 [1000] strides [1]\n%1 = sin f32 [1000] %0\n"
                                              "output %1\n");
  if (ptx) {
    CHECK(!ptx_has_func(ptx, "__nv_sinf") && strstr(ptx, "__cudart_i2opi_f"),
          "inline: float32 sin: __nv_sinf %s, the reduction table %s (want inlined, read by the entries)",
          ptx_has_func(ptx, "__nv_sinf") ? "out of line" : "inlined", strstr(ptx, "__cudart_i2opi_f") ? "read" : "absent");
    free(ptx);
  }
  /* float64 log (81) and exp (57): inlined; black_scholes' shape */
  ptx = nvptx_of("inline: float64 log, exp", "%0 = input 0 f64 [1000] strides [1]\n%1 = log f64 [1000] %0\n"
                                             "%2 = exp f64 [1000] %1\noutput %2\n");
  if (ptx) {
    CHECK(!ptx_has_func(ptx, "__nv_log") && !ptx_has_func(ptx, "__nv_exp"), "inline: float64 log %s, exp %s",
          ptx_has_func(ptx, "__nv_log") ? "out of line" : "inlined", ptx_has_func(ptx, "__nv_exp") ? "out of line" : "inlined");
    free(ptx);
  }
  /* three sinf and three cosf per point in three entries (dozens of copies of ~130 instructions): over the
   * budget, so both stay calls, one .func each; tanhf (small) stays inlined */
  ptx = nvptx_of("inline: budget", "%0 = input 0 f32 [1000] strides [1]\n%1 = sin f32 [1000] %0\n%2 = cos f32 [1000] %1\n"
                                   "%3 = sin f32 [1000] %2\n%4 = cos f32 [1000] %3\n%5 = sin f32 [1000] %4\n"
                                   "%6 = cos f32 [1000] %5\n%7 = tanh f32 [1000] %6\noutput %7\n");
  if (ptx) {
    CHECK(ptx_has_func(ptx, "__nv_sinf") && ptx_has_func(ptx, "__nv_cosf") && !ptx_has_func(ptx, "__nv_tanhf"),
          "inline: budget: __nv_sinf %s, __nv_cosf %s, __nv_tanhf %s (want out of line, out of line, inlined)",
          ptx_has_func(ptx, "__nv_sinf") ? "out of line" : "inlined", ptx_has_func(ptx, "__nv_cosf") ? "out of line" : "inlined",
          ptx_has_func(ptx, "__nv_tanhf") ? "out of line" : "inlined");
    free(ptx);
  }
}

/* Runs every kernel of graph text `graph` (comment lines allowed; anything from "# expect" on ignored)
 * through run_kernel; with golden_path, compares (or rewrites) the digest file. */
static void run_graph(const char *what, const char *graph_text, const char *golden_path, const char *suffix) {
  char *graph = strdup(graph_text);
  char *cut = strstr(graph, "# expect");
  if (cut) *cut = 0;
  for (char *line = graph; line && *line;) {
    char *nl = strchr(line, '\n');
    if (*line == '#')
      for (char *c = line; c < (nl ? nl : line + strlen(line)); c++) *c = ' ';
    line = nl ? nl + 1 : NULL;
  }
  IrGraph g;
  Diag d = {.status = LOOM_OK};
  Arena arena;
  arena_init(&arena, &g_ctx);
  int32_t roots[64], nroots = 0;
  LoomArray outs[64];
  memset(outs, 0, sizeof outs);
  if (ir_graph_init(&g, &g_ctx, &d) != LOOM_OK) {
    CHECK(false, "%s: %s", what, d.msg);
    free(graph);
    return;
  }
  IrModule m;
  memset(&m, 0, sizeof m);
  if (!CHECK(ir_parse_graph(&g, graph, &nroots, roots, 64, &d) == LOOM_OK, "%s: parse: %s", what, d.msg)) goto done;
  for (int32_t i = 0; i < nroots; i++) {
    const IrNode *n = &g.nodes[roots[i]];
    outs[i].dtype = (LoomDType)n->dtype;
    outs[i].ndim = n->ndim;
    memcpy(outs[i].shape, n->shape, sizeof outs[i].shape);
    pass_contiguous_strides(n->ndim, n->shape, outs[i].strides);
  }
  m.graph = &g;
  m.arena = &arena;
  m.nroots = nroots;
  m.roots = roots;
  m.outs = outs;
  if (!CHECK(pass_run_pipeline(&m, &d) == LOOM_OK, "%s: pipeline: %s", what, d.msg)) goto done;
  size_t cap = 1 << 20;
  char *dig = golden_path ? calloc(1, cap) : NULL;
  char *golden = golden_path ? read_text(golden_path) : NULL;
  if (dig)
    snprintf(dig, cap, "# GPU LLVM IR digest of %s%s: per kernel and target (nvptx sm_90, AMD chips), each entry's "
             "innermost memory loops from the machine code (global bytes loaded/stored per iteration/widest access), "
             "then per entry of the optimized LLVM IR its calls, fences, loads and stores by address space and type "
             "(tests/c/test_amdgpu.c; LOOM_UPDATE_GOLDEN=1 rewrites this file)\n", what, suffix);
  for (int32_t i = 0; i < m.schedule->nkernel; i++) {
    const KernelIr *k = m.schedule->kernels[i].ir;
    printf("%s: kernel %s\n", what, k->name);
    char head[160];
    snprintf(head, sizeof head, "kernel %d %s\n", i, k->name);
    const char *gk = golden ? strstr(golden, head) : NULL;
    char *gsec = NULL;
    if (gk) { /* this kernel's recorded section */
      const char *next = strstr(gk + 1, "\nkernel ");
      gsec = strndup(gk, next ? (size_t)(next + 1 - gk) : strlen(gk));
    }
    if (dig) strncat(dig, head, cap - strlen(dig) - 1);
    char what_k[256];
    snprintf(what_k, sizeof what_k, "%s %s", what, k->name);
    run_kernel(what_k, k, dig, cap, gsec);
    free(gsec);
  }
  if (golden_path) {
    if (env_on("LOOM_UPDATE_GOLDEN")) {
      FILE *f = fopen(golden_path, "wb");
      if (CHECK(f != NULL, "cannot write %s", golden_path)) {
        fputs(dig, f);
        fclose(f);
      }
    } else if (!golden) {
      printf("note: %s has no GPU digest %s (LOOM_UPDATE_GOLDEN=1 writes it)\n", what, golden_path);
    } else if (!CHECK(!strcmp(golden, dig), "%s: the GPU LLVM IR digest differs from %s", what, golden_path)) {
      char got[600];
      snprintf(got, sizeof got, "%s.got", golden_path);
      FILE *f = fopen(got, "wb");
      if (f) {
        fputs(dig, f);
        fclose(f);
        fprintf(stderr, "  (written to %s: diff it against the golden file)\n", got);
      }
    }
  }
  free(golden);
  free(dig);
done:
  ir_graph_free(&g);
  arena_free_all(&arena);
  free(graph);
}

#include "amdgpu_cases.h" /* the strategy, complex and bfloat16 cases beyond the golden files */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  g_ctx.alloc = *ir_default_allocator();
  Diag d = {.status = LOOM_OK};
  if (cg_nvptx_target_create(&g_ctx, 9, 0, &g_t[T_NV], &d) != LOOM_OK) {
    printf("test_amdgpu: no NVPTX target (%s): skipped\n", d.msg);
    return 77;
  }
  char why[2048];
  if (!cg_amdgpu_toolchain_available(&g_ctx, why, sizeof why)) { /* a machine without ROCm's device libraries */
    printf("test_amdgpu: %s: skipped\n", why);
    return 77;
  }
  for (int ti = T_90A; ti < NTARGET; ti++) {
    cg_amdgpu_chip(tname[ti], &g_chip[ti]);
    if (cg_amdgpu_target_create(&g_ctx, tname[ti], 5, &g_t[ti], &d) != LOOM_OK) {
      printf("test_amdgpu: %s: skipped\n", d.msg);
      return 77;
    }
  }
  check_ptx_table_loops();
  check_inline_rule();
  /* the golden files: tests/golden next to this file's folder, or argv[1] */
  char dir[1024];
  if (argc > 1) snprintf(dir, sizeof dir, "%s", argv[1]);
  else {
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    strncat(dir, "/../golden", sizeof dir - strlen(dir) - 1);
  }
  DIR *dd = opendir(dir);
  CHECK(dd != NULL, "cannot open the golden folder %s", dir);
  char *names[256];
  int nn = 0;
  for (struct dirent *e; dd && (e = readdir(dd)) && nn < 256;) {
    size_t len = strlen(e->d_name);
    if (len > 5 && !strcmp(e->d_name + len - 5, ".loom")) names[nn++] = strdup(e->d_name);
  }
  if (dd) closedir(dd);
  qsort(names, (size_t)nn, sizeof names[0], cmp_str);
  const char *only = getenv("LOOM_TEST_ONLY"); /* a substring of the case names to run */
  for (int i = 0; i < nn; i++) {
    char path[2048], gpath[2048], base[256];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    snprintf(base, sizeof base, "%.*s", (int)(strlen(names[i]) - 5), names[i]);
    snprintf(gpath, sizeof gpath, "%s/gpu/%s.txt", dir, base);
    if (!only || strstr(base, only)) {
      char *text = read_text(path);
      if (CHECK(text != NULL, "cannot read %s", path)) run_graph(base, text, gpath, ".loom");
      free(text);
    }
    free(names[i]);
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char gpath[2048];
    snprintf(gpath, sizeof gpath, "%s/gpu/%s.txt", dir, cases[i].digest ? cases[i].digest : "");
    if (!only || strstr(cases[i].name, only))
      run_graph(cases[i].name, cases[i].graph, cases[i].digest ? gpath : NULL, " (tests/c/amdgpu_cases.h)");
  }
  for (int ti = 0; ti < NTARGET; ti++) g_t[ti]->destroy(g_t[ti]);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
