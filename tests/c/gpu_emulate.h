/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_emulate.h: the shared GPU lowering (cg_lower_gpu) run on the host, for tests without a GPU.
 * A kernel is built by hand (KB: buffers, instructions, phases, stores), lowered with hooks of a one-lane
 * wave whose launch indices are globals of the module, and JIT-compiled by LLVM; `launch` runs an entry
 * block after block as the launcher would. One lane a block: butterflies across lanes are not run here.
 * Included by one test file each (static functions; the includer calls emu_init first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Core.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>

#include "codegen/cg_gpu.h"
#include "codegen/codegen.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                          \
  do {                                            \
    if (cond) g_pass++;                           \
    else {                                        \
      g_fail++;                                   \
      printf("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                        \
      printf("\n");                               \
    }                                             \
  } while (0)

static inline void *t_alloc(void *u, size_t n) { (void)u; return aligned_alloc(64, (n + 63) / 64 * 64 + 64); }
static inline void t_free(void *u, void *p) { (void)u; free(p); }

/* ---- kernel builder ------------------------------------------------------------------------------------- */
typedef struct KB {
  KernelIr k;
  KBuffer bufs[8];
  KInstr ins[64];
  KPhase ph[6];
  KStore st[8];
} KB;

static inline void kb_init(KB *b, int ndim, int nkeep, int index_bits) {
  memset(b, 0, sizeof *b);
  snprintf(b->k.name, sizeof b->k.name, "t");
  b->k.ndim = ndim;
  b->k.nkeep = nkeep;
  b->k.index_bits = (uint8_t)index_bits;
  b->k.bufs = b->bufs;
  b->k.instrs = b->ins;
  b->k.phases = b->ph;
  b->k.stores = b->st;
}
static inline int kb_buf(KB *b, LoomDType t, int out, const char *lay) {
  KBuffer *x = &b->bufs[b->k.nbuf];
  x->dtype = (uint8_t)t;
  x->is_output = (uint8_t)out;
  for (int d = 0; lay[d]; d++) x->layout[d] = lay[d] == '1' ? KL_ONE : lay[d] == '0' ? KL_ZERO : KL_ANY;
  return b->k.nbuf++;
}
static inline int kb_ins(KB *b, KInstrKind kind, LoomDType t, int op, int s0, int s1) {
  KInstr *x = &b->ins[b->k.ninstr];
  x->kind = (uint8_t)kind;
  x->dtype = (uint8_t)t;
  x->op = (uint16_t)op;
  x->src[0] = s0, x->src[1] = s1, x->src[2] = -1;
  x->buf = -1;
  x->phase = -1;
  return b->k.ninstr++;
}
static inline int kb_load(KB *b, int buf, LoomDType t) {
  int i = kb_ins(b, KI_LOAD, t, 0, -1, -1);
  b->ins[i].buf = buf;
  return i;
}
static inline int kb_bin(KB *b, LoomOp op, LoomDType t, int a, int c) { return kb_ins(b, KI_ELEM, t, op, a, c); }
static inline int kb_cast(KB *b, int a, LoomDType t) { return kb_ins(b, KI_CAST, t, 0, a, -1); }
static inline int kb_acc(KB *b, int phase, LoomDType t) {
  int i = kb_ins(b, KI_ACC, t, 0, -1, -1);
  b->ins[i].phase = phase;
  return i;
}
static inline int kb_reduce(KB *b, LoomReduceOp op, LoomDType acc, int value) {
  KPhase *p = &b->ph[b->k.nphase];
  p->kind = KP_REDUCE;
  p->reduce_op = (uint8_t)op;
  p->acc_dtype = (uint8_t)acc;
  p->value = value;
  return b->k.nphase++;
}
static inline void kb_store(KB *b, KPhaseKind kind, int buf, int value) {
  KPhase *p = b->k.nphase ? &b->ph[b->k.nphase - 1] : NULL;
  if (!p || p->kind != kind) {
    p = &b->ph[b->k.nphase++];
    p->kind = (uint8_t)kind;
    p->store_begin = b->k.nstore;
    p->nstores = 0;
  }
  b->st[b->k.nstore].buf = buf;
  b->st[b->k.nstore].value = value;
  b->k.nstore++;
  p->nstores++;
}

/* ---- the emulated GPU: one lane per block, launch indices in module globals ------------------------------- */
static inline LLVMValueRef emu_index(CgMath *m, CgGpuIndex which) {
  static const char *const names[4] = {"emu_tid", "emu_ntid", "emu_bid", "emu_nbid"};
  LLVMTypeRef i32 = LLVMInt32TypeInContext(m->c);
  LLVMValueRef g = LLVMGetNamedGlobal(m->m, names[which]);
  if (!g) {
    g = LLVMAddGlobal(m->m, i32, names[which]);
    LLVMSetInitializer(g, LLVMConstInt(i32, 0, 0));
  }
  LLVMValueRef v = LLVMBuildLoad2(m->b, i32, g, "");
  LLVMSetVolatile(v, 1);
  return v;
}
static inline LLVMValueRef emu_shuffle(CgMath *m, LLVMValueRef v, int mask) { (void)m, (void)mask; return v; }
static inline void emu_barrier(CgMath *m) { (void)m; }
static inline void emu_wave_sync(CgMath *m) { (void)m; } /* one lane a wave */
static inline void emu_mark(CgMath *m, LLVMValueRef fn, int max_block, bool fit) { (void)m, (void)fn, (void)max_block, (void)fit; }
static inline void emu_math_name(char *buf, size_t cap, const char *base, LoomDType t) {
  snprintf(buf, cap, "%s%s", base, t == LOOM_FLOAT32 ? "f" : "");
}

typedef void (*EntryFn)(uint64_t *words);
typedef struct Emu {
  LLVMOrcLLJITRef jit;
  CgGpuKernel gk;
  int32_t *tid, *ntid, *bid, *nbid;
  EntryFn main, part, finish, finishb, cached, cachedv, vec, flatv, partv;
  bool ok;
} Emu;

static LoomContext g_ctx;

static inline void emu_init(void) {
  memset(&g_ctx, 0, sizeof g_ctx);
  g_ctx.alloc.alloc = t_alloc;
  g_ctx.alloc.free = t_free;
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
}

static inline void *lookup(Emu *e, const char *name) {
  LLVMOrcExecutorAddress a = 0;
  LLVMErrorRef err = LLVMOrcLLJITLookup(e->jit, &a, name);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    printf("  lookup %s: %s\n", name, msg);
    LLVMDisposeErrorMessage(msg);
    return NULL;
  }
  return (void *)(uintptr_t)a;
}

static inline bool emu_build(Emu *e, const KernelIr *k) {
  memset(e, 0, sizeof *e);
  CgGpuHooks h = {.wave = 1, .as_global = 0, .as_shared = 0, .as_param = 0, .as_private = 0, .param_attr = "byref",
                  .shared_poison = false, .index = emu_index, .shuffle_xor = emu_shuffle, .barrier = emu_barrier, .wave_sync = emu_wave_sync,
                  .mark_kernel = emu_mark, .math_name = emu_math_name};
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef c = LLVMOrcThreadSafeContextGetContext(tsc);
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("emu", c);
  Diag d = {0};
  LoomStatus st = cg_lower_gpu(&g_ctx, c, mod, k, "emu", &h, 1, &e->gk, &d);
  CHECK(st == LOOM_OK, "lowering for the emulated GPU: %s", d.msg);
  if (st != LOOM_OK) {
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    return false;
  }
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&e->jit, NULL);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    printf("  LLJIT: %s\n", msg);
    LLVMDisposeErrorMessage(msg);
    LLVMDisposeModule(mod);
    LLVMOrcDisposeThreadSafeContext(tsc);
    e->jit = NULL;
    return false;
  }
  LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(e->jit));
  LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(e->jit));
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  err = LLVMOrcLLJITAddLLVMIRModule(e->jit, LLVMOrcLLJITGetMainJITDylib(e->jit), tsm);
  CHECK(!err, "adding the module to the JIT");
  if (err) {
    LLVMConsumeError(err);
    return false;
  }
  e->tid = lookup(e, "emu_tid");
  e->ntid = lookup(e, "emu_ntid");
  e->bid = lookup(e, "emu_bid");
  e->nbid = lookup(e, "emu_nbid");
  e->main = (EntryFn)lookup(e, e->gk.main);
  if (e->gk.part[0]) e->part = (EntryFn)lookup(e, e->gk.part);
  if (e->gk.finish[0]) e->finish = (EntryFn)lookup(e, e->gk.finish);
  if (e->gk.finishb[0]) e->finishb = (EntryFn)lookup(e, e->gk.finishb);
  if (e->gk.cached[0]) e->cached = (EntryFn)lookup(e, e->gk.cached);
  if (e->gk.cachedv[0]) e->cachedv = (EntryFn)lookup(e, e->gk.cachedv);
  if (e->gk.vec[0]) e->vec = (EntryFn)lookup(e, e->gk.vec);
  if (e->gk.flatv[0]) e->flatv = (EntryFn)lookup(e, e->gk.flatv);
  if (e->gk.partv[0]) e->partv = (EntryFn)lookup(e, e->gk.partv);
  e->ok = e->tid && e->ntid && e->bid && e->nbid && e->main;
  return e->ok;
}

static inline void emu_free(Emu *e) {
  if (e->jit) LLVMOrcDisposeLLJIT(e->jit);
  e->jit = NULL;
}

static inline void launch(Emu *e, EntryFn fn, int64_t grid, uint64_t *words) {
  *e->ntid = 1;
  *e->tid = 0;
  *e->nbid = (int32_t)grid;
  for (int64_t g = 0; g < grid; g++) {
    *e->bid = (int32_t)g;
    fn(words);
  }
}

/* Runs kernel k built in e over shape (bases, strides as the launch words take them): `main` (nparts == 0) or
 * the phase split, each step over every (part, o) item, then the finish (finishb: the block one) of each REDUCE
 * step; the partials and finished accumulators start as garbage (nothing may read what was not written). */
static inline void emu_run(Emu *e, const KernelIr *k, const int64_t *shape, void *const *bases, const int64_t *strides,
                           int nparts, bool finishb) {
  int nd = k->ndim, nb = k->nbuf;
  uint64_t words[64] = {0};
  int64_t no = 1;
  for (int d = 0; d < nd; d++) {
    words[d] = (uint64_t)shape[d];
    if (d < k->nkeep) no *= shape[d];
  }
  for (int b = 0; b < nb; b++) words[nd + b] = (uint64_t)(uintptr_t)bases[b];
  for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
  uint64_t *extra = &words[nd + nb + nb * nd];
  if (nparts == 0) {
    launch(e, e->main, no, words);
    return;
  }
  uint32_t red = e->gk.split_reduce, map = e->gk.split_map;
  int nphase = 32 - __builtin_clz(red | map);
  int64_t nfin = 32 - __builtin_clz(red);
  size_t acc = (size_t)e->gk.acc_size, bytes = (size_t)(no * nparts + no * nfin) * acc;
  unsigned char *mem = malloc(bytes + 64);
  memset(mem, 0xA5, bytes);
  extra[0] = (uint64_t)nparts;
  extra[1] = (uint64_t)(uintptr_t)mem;
  extra[3] = (uint64_t)(uintptr_t)(mem + (size_t)(no * nparts) * acc);
  for (int p = 0; p < nphase; p++) {
    bool reduce = red >> p & 1u;
    if (!reduce && !(map >> p & 1u)) continue;
    extra[2] = (uint64_t)p;
    launch(e, e->part, no * nparts, words);
    if (reduce) launch(e, finishb ? e->finishb : e->finish, no, words);
  }
  free(mem);
}

/* Runs this test program again in a child with env=value (a switch turned off, say) and waits: whether the
 * child exited with 0; prints a FAIL line naming the setting otherwise. argv0: the child's argv[0]. */
static inline bool emu_rerun_with(const char *argv0, const char *env, const char *value) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv(env, value, 1);
    execl("/proc/self/exe", argv0, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  bool ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) printf("FAIL: the %s=%s run (status %d)\n", env, value, status);
  return ok;
}
