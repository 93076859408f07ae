/* SPDX-License-Identifier: Apache-2.0 */
/* bundle_build.c: compiling a bundle (loom_bundle_builder_*, the engine of loomc and python -m loom.aot).
 *
 * Approach. Entries (a C name and a kernel IR) are collected first: from IR text (ir_parse_kernel) or by
 * capture (the kernels an evaluation runs, cloned). Writing turns them into kernel records, one per
 * distinct key and index width (an entry gets a 32-bit and a 64-bit record: the passes pick the width
 * from the sizes, so a bundle must have both), then into units of work:
 *   host:  (record, psABI level) -> codegen/host_object.c's image
 *   NVIDIA: (record, sm) -> PTX (the NVPTX CgTarget, every entry: CG_COMPILE_DEFAULTS), then a cubin by running the
 *          toolkit's ptxas on it when sm_XX is a target, and the PTX kept when ptx_sm_XX is one.
 *   AMD:   (record, gfx) -> an executable code object for that chip (the AMDGPU CgTarget: LLVM, then comgr or
 *          ld.lld as at run time; every entry), the binary HIP loads: no tool is needed beyond the target's.
 * Units run on `jobs` threads (each with its own GPU targets: one target serializes its compiles);
 * results go to fixed slots, so the file is the same whatever the thread count. The calling thread
 * draws the progress line (units done of total, ETA, what runs now) when stderr is a terminal, and the
 * summary table at the end. The file is written to a temporary name and renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/cg_aot.h"
#include "ir/clone.h"
#include "runtime/bundle_build.h"

extern char **environ;

enum { MAX_TARGETS = 32 };

typedef struct TargetSpec {
  uint32_t kind, arch; /* RB_TARGET_*; level / sm / gfx */
  char label[24];
} TargetSpec;

typedef struct Rec { /* a kernel record: one key (one index width) */
  KernelIr *ir;
  char *key;
  size_t keylen;
  const char *name;
  int32_t index; /* in the bundle */
} Rec;

typedef struct Unit {
  int32_t rec;
  uint32_t kind; /* RB_TARGET_HOST_X86_64 (level), RB_TARGET_CUDA_PTX (sm: PTX, then cubin/PTX outputs) or
                  * RB_TARGET_AMDGPU (gfx: a code object) */
  uint32_t arch;
  bool want_cubin, want_ptx;
  /* results */
  Diag err;
  uint8_t *host_blob, *cubin;
  size_t host_size, cubin_size;
  char *ptx;
  size_t ptx_size;
  uint8_t *co; /* AMD code object */
  size_t co_size;
  uint32_t facts[RB_FACTS];
  char names[RB_GPU_NENTRY][64];
  double ms;
} Unit;

typedef struct Build {
  LoomContext *ctx;
  const LoomBundleOptions *opt;
  TargetSpec targets[MAX_TARGETS];
  int ntarget;
  Rec *recs;
  int32_t nrec;
  Unit *units;
  int32_t nunit;
  CgHostAot *host;
  char ptxas[1024];
  char tmpdir[512];
  int jobs;
  /* progress */
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int32_t next, done, running;
  char now[160];
} Build;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

bool rt_bundle_c_identifier(const char *s) {
  if (!s || !s[0] || strlen(s) > 63 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return false;
  return true;
}

/* ---- entries -------------------------------------------------------------------------------------------- */
LoomStatus rt_bundle_builder_add(LoomBundleBuilder *b, const char *name, const KernelIr *k, Diag *d) {
  if (!rt_bundle_c_identifier(name))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle entry name '%.80s' is not a C identifier (letters, digits, _)", name);
  for (int32_t i = 0; i < k->ninstr; i++) /* index buffers (loom.random, iota) have no binding in libloomrt */
    if (k->instrs[i].kind == KI_OFFSET)
      return diag_error(d, LOOM_ERR_UNSUPPORTED,
                        "bundle entry '%.80s': kernels that generate random numbers or indices (an iota, "
                        "loom.random) cannot be bundled yet; pass them as input arrays", name);
  for (int32_t p = 0; p < k->nphase; p++) /* libloomrt's launcher does not know the scan entries' protocol */
    if (k->phases[p].kind == KP_SCAN)
      return diag_error(d, LOOM_ERR_UNSUPPORTED,
                        "bundle entry '%.80s': scans (cumsum, cumprod) cannot be bundled yet; run them through libloom",
                        name);
  for (int32_t i = 0; i < b->nentry; i++)
    if (!strcmp(b->entries[i].name, name))
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle entry name '%s' is used twice; give each kernel its own name",
                        name);
  if (b->nentry == b->capentry) {
    int32_t nc = b->capentry ? 2 * b->capentry : 16;
    BuildEntry *q = ctx_alloc(b->ctx, (size_t)nc * sizeof *q);
    if (!q) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle entries");
    if (b->nentry) memcpy(q, b->entries, (size_t)b->nentry * sizeof *q);
    ctx_free(b->ctx, b->entries);
    b->entries = q;
    b->capentry = nc;
  }
  KernelIr *c = ir_kernel_clone(&b->arena, k);
  if (!c) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: copy of kernel %s", k->name);
  BuildEntry *e = &b->entries[b->nentry++];
  snprintf(e->name, sizeof e->name, "%s", name);
  e->ir = c;
  return LOOM_OK;
}

/* ---- targets -------------------------------------------------------------------------------------------- */
static bool find_ptxas(Build *B) {
  const char *given = B->opt->ptxas;
  if (given && *given) {
    snprintf(B->ptxas, sizeof B->ptxas, "%s", given);
    return access(B->ptxas, X_OK) == 0;
  }
  const char *envs[2] = {getenv("CUDA_HOME"), getenv("CUDA_PATH")};
  for (int i = 0; i < 2; i++)
    if (envs[i] && *envs[i]) {
      snprintf(B->ptxas, sizeof B->ptxas, "%s/bin/ptxas", envs[i]);
      if (access(B->ptxas, X_OK) == 0) return true;
    }
  snprintf(B->ptxas, sizeof B->ptxas, "/usr/local/cuda/bin/ptxas");
  if (access(B->ptxas, X_OK) == 0) return true;
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    snprintf(B->ptxas, sizeof B->ptxas, "%.*s/ptxas", (int)n, path);
    if (n && access(B->ptxas, X_OK) == 0) return true;
    path = end ? end + 1 : NULL;
  }
  B->ptxas[0] = 0;
  return false;
}

static LoomStatus add_target(Build *B, uint32_t kind, uint32_t arch, Diag *d) {
  for (int i = 0; i < B->ntarget; i++)
    if (B->targets[i].kind == kind && B->targets[i].arch == arch) return LOOM_OK;
  if (B->ntarget == MAX_TARGETS) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle: more than %d targets", MAX_TARGETS);
  TargetSpec *t = &B->targets[B->ntarget++];
  t->kind = kind;
  t->arch = arch;
  rt_bundle_target_label(kind, arch, t->label, sizeof t->label);
  return LOOM_OK;
}

static int target_order(const void *a, const void *b) {
  const TargetSpec *x = a, *y = b;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return x->arch < y->arch ? -1 : x->arch > y->arch;
}

/* "sm_90" -> 90 (LLVM 19's NVPTX knows sm_20 .. sm_90; ptxas decides what it accepts). */
static bool parse_sm(const char *s, uint32_t *sm) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < 20 || v > 129) return false;
  *sm = (uint32_t)v;
  return true;
}

static LoomStatus parse_targets(Build *B, Diag *d) {
  const char *spec = B->opt->targets && *B->opt->targets ? B->opt->targets : "host-all";
  bool have_ptxas = find_ptxas(B), ptx_default = false;
  char word[64];
  for (const char *p = spec; *p;) {
    size_t n = strcspn(p, ",");
    if (n == 0 || n >= sizeof word) {
      if (n == 0 && p[n]) {
        p++;
        continue;
      }
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle targets: bad item in '%s'", spec);
    }
    memcpy(word, p, n);
    word[n] = 0;
    p += n + (p[n] == ',');
    uint32_t sm;
    LoomStatus st = LOOM_OK;
    if (!strcmp(word, "host")) st = add_target(B, RB_TARGET_HOST_X86_64, 1, d);
    else if (!strcmp(word, "host-avx2")) st = add_target(B, RB_TARGET_HOST_X86_64, 3, d);
    else if (!strcmp(word, "host-avx512")) st = add_target(B, RB_TARGET_HOST_X86_64, 4, d);
    else if (!strcmp(word, "host-all") || !strcmp(word, "all")) {
      for (uint32_t l = 1; l <= 4 && st == LOOM_OK; l += l == 1 ? 2 : 1) st = add_target(B, RB_TARGET_HOST_X86_64, l, d);
      if (!strcmp(word, "all")) {
        if (have_ptxas && st == LOOM_OK) st = add_target(B, RB_TARGET_CUDA_CUBIN, 80, d);
        if (have_ptxas && st == LOOM_OK) st = add_target(B, RB_TARGET_CUDA_CUBIN, 90, d);
        ptx_default = true;
        /* AMD's three chip families (MI200, MI300, RDNA3) when this build's LLVM has the AMDGPU target */
        CgTarget *probe = NULL;
        Diag pd = {.status = LOOM_OK};
        if (st == LOOM_OK && cg_amdgpu_target_create(B->ctx, "gfx942", 0, &probe, &pd) == LOOM_OK) {
          probe->destroy(probe);
          static const uint32_t gfx[] = {0x90a, 0x942, 0x1100};
          for (int i = 0; i < 3 && st == LOOM_OK; i++) st = add_target(B, RB_TARGET_AMDGPU, gfx[i], d);
        }
      }
    } else if (!strncmp(word, "sm_", 3) && parse_sm(word + 3, &sm)) {
      if (!have_ptxas)
        return diag_error(d, LOOM_ERR_UNSUPPORTED,
                          "bundle target %s: a cubin needs the CUDA toolkit's ptxas (not found in $CUDA_HOME/bin, "
                          "$CUDA_PATH/bin, /usr/local/cuda/bin or PATH; loomc --ptxas PATH), or ask for --target ptx_%s",
                          word, word);
      st = add_target(B, RB_TARGET_CUDA_CUBIN, sm, d);
    } else if (!strcmp(word, "ptx")) ptx_default = true;
    else if (!strncmp(word, "ptx_sm_", 7) && parse_sm(word + 7, &sm)) st = add_target(B, RB_TARGET_CUDA_PTX, sm, d);
    else if (!strncmp(word, "gfx", 3) && word[3]) { /* gfx90a -> 0x90a, gfx1100 -> 0x1100 */
      char *end;
      unsigned long g = strtoul(word + 3, &end, 16);
      if (*end || g == 0 || g > 0xffff) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle target '%s': not a gfx name", word);
      if (!cg_amdgpu_chip(word, NULL))
        return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle target %s: an AMD chip loom does not know (it knows %s)",
                          word, cg_amdgpu_chip_names());
      st = add_target(B, RB_TARGET_AMDGPU, (uint32_t)g, d);
    } else {
      return diag_error(d, LOOM_ERR_INVALID_ARGUMENT,
                        "bundle target '%s' is unknown; use host, host-avx2, host-avx512, host-all, sm_XX, ptx, ptx_sm_XX, "
                        "gfxNNN or all", word);
    }
    if (st) return st;
  }
  if (ptx_default) { /* PTX for the newest sm among the cubins (newer GPUs JIT it), else sm_90 */
    uint32_t best = 0;
    for (int i = 0; i < B->ntarget; i++)
      if (B->targets[i].kind == RB_TARGET_CUDA_CUBIN && B->targets[i].arch > best) best = B->targets[i].arch;
    LoomStatus st = add_target(B, RB_TARGET_CUDA_PTX, best ? (best > 90 ? 90 : best) : 90, d);
    if (st) return st;
  }
  if (B->ntarget == 0) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "bundle: no target in '%s'", spec);
  qsort(B->targets, (size_t)B->ntarget, sizeof *B->targets, target_order);
  return LOOM_OK;
}

/* ---- records and units ------------------------------------------------------------------------------------ */
static LoomStatus make_records(Build *B, LoomBundleBuilder *b, int32_t (*rec_of)[2], Diag *d) {
  int widths = B->opt->index_widths & 3 ? B->opt->index_widths & 3 : 3;
  B->recs = ctx_calloc(B->ctx, (size_t)b->nentry * 2 + 1, sizeof *B->recs);
  if (!B->recs) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle records");
  for (int32_t e = 0; e < b->nentry; e++)
    for (int w = 0; w < 2; w++) {
      rec_of[e][w] = -1;
      if (!(widths & (1 << w))) continue;
      KernelIr *k = arena_alloc(&b->arena, sizeof *k);
      if (!k) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle records");
      *k = *b->entries[e].ir; /* shares the arrays; only the index width differs */
      k->index_bits = w ? 64 : 32;
      StrBuf sb;
      sb_init(&sb, B->ctx);
      ir_print_kernel_key(k, &sb);
      size_t len = sb.len;
      char *key = sb_take(&sb);
      if (!key) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: kernel key");
      int32_t r = 0;
      while (r < B->nrec && (B->recs[r].keylen != len || memcmp(B->recs[r].key, key, len))) r++;
      if (r < B->nrec) {
        ctx_free(B->ctx, key);
      } else {
        B->recs[r] = (Rec){.ir = k, .key = key, .keylen = len, .name = b->entries[e].name, .index = r};
        B->nrec++;
      }
      rec_of[e][w] = r;
    }
  return LOOM_OK;
}

static LoomStatus make_units(Build *B, Diag *d) {
  int nhost = 0;
  uint32_t sms[MAX_TARGETS];
  int nsm = 0;
  for (int i = 0; i < B->ntarget; i++) {
    const TargetSpec *t = &B->targets[i];
    if (t->kind == RB_TARGET_HOST_X86_64) nhost++;
    if (t->kind == RB_TARGET_CUDA_CUBIN || t->kind == RB_TARGET_CUDA_PTX) {
      int j = 0;
      while (j < nsm && sms[j] != t->arch) j++;
      if (j == nsm) sms[nsm++] = t->arch;
    }
  }
  int namd = 0;
  for (int i = 0; i < B->ntarget; i++) namd += B->targets[i].kind == RB_TARGET_AMDGPU;
  B->units = ctx_calloc(B->ctx, (size_t)B->nrec * (size_t)(nhost + nsm + namd) + 1, sizeof *B->units);
  if (!B->units) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle work units");
  for (int32_t r = 0; r < B->nrec; r++) {
    for (int i = 0; i < B->ntarget; i++)
      if (B->targets[i].kind == RB_TARGET_HOST_X86_64)
        B->units[B->nunit++] = (Unit){.rec = r, .kind = RB_TARGET_HOST_X86_64, .arch = B->targets[i].arch};
    for (int j = 0; j < nsm; j++) {
      Unit u = {.rec = r, .kind = RB_TARGET_CUDA_PTX, .arch = sms[j]};
      for (int i = 0; i < B->ntarget; i++) {
        if (B->targets[i].arch != sms[j]) continue;
        if (B->targets[i].kind == RB_TARGET_CUDA_CUBIN) u.want_cubin = true;
        if (B->targets[i].kind == RB_TARGET_CUDA_PTX) u.want_ptx = true;
      }
      B->units[B->nunit++] = u;
    }
    for (int i = 0; i < B->ntarget; i++)
      if (B->targets[i].kind == RB_TARGET_AMDGPU)
        B->units[B->nunit++] = (Unit){.rec = r, .kind = RB_TARGET_AMDGPU, .arch = B->targets[i].arch};
  }
  for (int32_t i = 0; i < B->nunit; i++) B->units[i].err.status = LOOM_OK;
  return LOOM_OK;
}

/* ---- work ------------------------------------------------------------------------------------------------- */
static LoomStatus read_file(LoomContext *ctx, const char *path, uint8_t **out, size_t *size, Diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return diag_error(d, LOOM_ERR_BACKEND, "cannot open %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = n >= 0 ? ctx_alloc(ctx, (size_t)n + 1) : NULL;
  if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    ctx_free(ctx, p);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot read %s", path);
  }
  fclose(f);
  p[n] = 0;
  *out = p;
  *size = (size_t)n;
  return LOOM_OK;
}

/* ptxas -arch=sm_XX on the unit's PTX; the log goes into the error message on failure. */
static LoomStatus run_ptxas(Build *B, Unit *u, int32_t ui, Diag *d) {
  char in[600], outp[600], log[600], arch[32];
  snprintf(in, sizeof in, "%s/u%d.ptx", B->tmpdir, (int)ui);
  snprintf(outp, sizeof outp, "%s/u%d.cubin", B->tmpdir, (int)ui);
  snprintf(log, sizeof log, "%s/u%d.log", B->tmpdir, (int)ui);
  snprintf(arch, sizeof arch, "-arch=sm_%u", u->arch);
  FILE *f = fopen(in, "wb");
  if (!f || fwrite(u->ptx, 1, u->ptx_size - 1, f) != u->ptx_size - 1) { /* without its NUL */
    if (f) fclose(f);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot write %s", in);
  }
  fclose(f);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  char *argv[] = {B->ptxas, arch, "-O3", "-o", outp, in, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, B->ptxas, &fa, NULL, argv, environ), status = 0;
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return diag_error(d, LOOM_ERR_BACKEND, "cannot run %s: %s", B->ptxas, strerror(rc));
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    uint8_t *text = NULL;
    size_t n = 0;
    Diag ld = {.status = LOOM_OK};
    read_file(B->ctx, log, &text, &n, &ld);
    LoomStatus st = diag_error(d, LOOM_ERR_BACKEND, "ptxas %s failed: %.700s", arch, text ? (char *)text : "(no output)");
    ctx_free(B->ctx, text);
    return st;
  }
  LoomStatus st = read_file(B->ctx, outp, &u->cubin, &u->cubin_size, d);
  unlink(in);
  unlink(outp);
  unlink(log);
  return st;
}

typedef struct Worker {
  Build *B;
  int id;
  CgTarget *gpu[MAX_TARGETS]; /* per (kind, arch), this worker's */
  uint32_t gpu_kind[MAX_TARGETS], gpu_arch[MAX_TARGETS];
  int ngpu;
} Worker;

static LoomStatus gpu_unit(Worker *w, Unit *u, int32_t ui, Diag *d) {
  Build *B = w->B;
  bool amd = u->kind == RB_TARGET_AMDGPU;
  CgTarget *t = NULL;
  for (int i = 0; i < w->ngpu; i++)
    if (w->gpu_kind[i] == u->kind && w->gpu_arch[i] == u->arch) t = w->gpu[i];
  if (!t) {
    char gfx[16];
    snprintf(gfx, sizeof gfx, "gfx%x", u->arch);
    LoomStatus st = amd ? cg_amdgpu_target_create(B->ctx, gfx, 0, &t, d)
                        : cg_nvptx_target_create(B->ctx, (int)u->arch / 10, (int)u->arch % 10, &t, d);
    if (st) return st;
    w->gpu[w->ngpu] = t;
    w->gpu_kind[w->ngpu] = u->kind;
    w->gpu_arch[w->ngpu++] = u->arch;
  }
  CgCompiled c;
  CgCompileOptions opt = CG_COMPILE_DEFAULTS; /* every entry the lowering makes */
  LoomStatus st = t->compile(t, B->recs[u->rec].ir, &opt, &c, d);
  if (st) return st;
  const CgGpuKernel *g = c.gpu;
  if (!g || g->kind != (amd ? CG_BINARY_AMDGPU : CG_BINARY_PTX) || !g->code) {
    t->release(t, &c);
    return diag_error(d, LOOM_ERR_INTERNAL, "internal error: the %s target returned no %s", t->name,
                      amd ? "code object" : "PTX");
  }
  uint32_t f[RB_FACTS] = {0};
  f[RB_GPU_STRATEGY] = (uint32_t)g->strategy;
  f[RB_GPU_BLOCK] = (uint32_t)g->block;
  f[RB_GPU_VEC_LANES] = (uint32_t)g->vec_lanes;
  f[RB_GPU_VEC_ALIGN] = (uint32_t)g->vec_align;
  f[RB_GPU_ACC_SIZE] = (uint32_t)g->acc_size;
  f[RB_GPU_NWORDS] = (uint32_t)g->nwords;
  f[RB_GPU_CACHE_K] = (uint32_t)g->cache_k;
  f[RB_GPU_PART_LANES] = (uint32_t)g->part_lanes;
  f[RB_GPU_CACHE_LANES] = (uint32_t)g->cache_lanes;
  f[RB_GPU_ENTRIES_ALL] = g->entries_all;
  f[RB_GPU_ENTRIES] = g->entries;
  f[RB_GPU_WAVE] = (uint32_t)g->wave;
  f[RB_GPU_SPLIT_REDUCE] = g->split_reduce;
  f[RB_GPU_SPLIT_MAP] = g->split_map;
  memcpy(u->facts, f, sizeof f);
  for (int i = 0; i < RB_GPU_NENTRY; i++) snprintf(u->names[i], 64, "%s", cg_gpu_entry_name(c.gpu, i));
  if (amd) { /* the code object is the binary */
    u->co = ctx_alloc(B->ctx, g->code_size);
    if (!u->co) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: code object copy");
    else memcpy(u->co, g->code, g->code_size);
    u->co_size = g->code_size;
    t->release(t, &c);
    return st;
  }
  u->ptx = ctx_alloc(B->ctx, g->code_size + 1);
  if (!u->ptx) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: PTX copy");
  else {
    memcpy(u->ptx, g->code, g->code_size);
    u->ptx[g->code_size] = 0;
    u->ptx_size = g->code_size + 1; /* with its NUL: the driver loads it as a string */
  }
  t->release(t, &c);
  if (st == LOOM_OK && u->want_cubin) st = run_ptxas(B, u, ui, d);
  return st;
}

static LoomStatus host_unit(Build *B, Unit *u, Diag *d) {
  CgHostImage im;
  LoomStatus st = cg_host_aot_compile(B->host, B->recs[u->rec].ir, (int)u->arch, &im, d);
  if (st) return st;
  u->host_blob = im.bytes;
  u->host_size = im.size;
  u->facts[RB_HOST_RUN] = im.run;
  u->facts[RB_HOST_PARTIAL] = im.partial;
  u->facts[RB_HOST_FINISH] = im.finish;
  u->facts[RB_HOST_ACC_SIZE] = (uint32_t)im.acc_size;
  u->facts[RB_HOST_COLPART] = im.col_phases ? im.colpart : RB_NO_SYMBOL;
  u->facts[RB_HOST_COLFINISH] = im.col_phases ? im.colfinish : RB_NO_SYMBOL;
  u->facts[RB_HOST_COL_PHASES] = im.col_phases;
  return LOOM_OK;
}

static void unit_label(Build *B, const Unit *u, char *buf, size_t cap) {
  char t[24];
  const Rec *r = &B->recs[u->rec];
  rt_bundle_target_label(u->kind != RB_TARGET_CUDA_PTX ? u->kind : u->want_cubin ? RB_TARGET_CUDA_CUBIN : RB_TARGET_CUDA_PTX,
                         u->arch, t, sizeof t);
  snprintf(buf, cap, "%s (index %d) for %s", r->name, r->ir->index_bits, t);
}

static void *worker_main(void *arg) {
  Worker *w = arg;
  Build *B = w->B;
  /* LLVM puts its own alternate signal stack in the thread that first registers its crash handlers
   * (comgr does, linking an AMD code object); the thread's own is put back before it ends, so that
   * whoever set that one up (ASan does, for each thread) finds it */
  stack_t own;
  bool have_own = sigaltstack(NULL, &own) == 0;
  for (;;) {
    pthread_mutex_lock(&B->lock);
    int32_t ui = B->next < B->nunit ? B->next++ : -1;
    if (ui >= 0) {
      B->running++;
      unit_label(B, &B->units[ui], B->now, sizeof B->now);
    }
    pthread_mutex_unlock(&B->lock);
    if (ui < 0) break;
    Unit *u = &B->units[ui];
    double t0 = now_ms();
    if (u->kind == RB_TARGET_HOST_X86_64) host_unit(B, u, &u->err);
    else gpu_unit(w, u, ui, &u->err);
    u->ms = now_ms() - t0;
    pthread_mutex_lock(&B->lock);
    B->running--;
    B->done++;
    if (u->err.status != LOOM_OK) B->next = B->nunit; /* stop handing out work */
    pthread_cond_broadcast(&B->cv);
    pthread_mutex_unlock(&B->lock);
  }
  for (int i = 0; i < w->ngpu; i++) w->gpu[i]->destroy(w->gpu[i]);
  if (have_own) sigaltstack(&own, NULL);
  return NULL;
}

static void draw_progress(Build *B, double t0, bool final) {
  double el = (now_ms() - t0) / 1e3;
  int32_t done = B->done, total = B->nunit;
  char eta[32] = "";
  if (done > 0 && done < total) snprintf(eta, sizeof eta, " ETA %.1fs", el / done * (total - done));
  char more[24] = "";
  if (!final && B->running > 1) snprintf(more, sizeof more, " (+%d more)", (int)B->running - 1);
  fprintf(stderr, "\r\033[K[%d/%d] %3d%% %.1fs%s %s%.90s%s", done, total, total ? 100 * done / total : 100, el, eta,
          final ? "" : "compiling ", final ? "done" : B->now, more);
  if (final) fputc('\n', stderr);
  fflush(stderr);
}

static LoomStatus run_units(Build *B, Diag *d) {
  int jobs = B->jobs;
  Worker *ws = ctx_calloc(B->ctx, (size_t)jobs, sizeof *ws);
  pthread_t *th = ctx_calloc(B->ctx, (size_t)jobs, sizeof *th);
  if (!ws || !th) {
    ctx_free(B->ctx, ws);
    ctx_free(B->ctx, th);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle workers");
  }
  bool progress = B->opt->progress > 0 || (B->opt->progress < 0 && isatty(2));
  double t0 = now_ms();
  int started = 0;
  for (int i = 0; i < jobs; i++) {
    ws[i] = (Worker){.B = B, .id = i};
    if (pthread_create(&th[i], NULL, worker_main, &ws[i]) != 0) break;
    started++;
  }
  if (started == 0) { /* no thread could start: all the work on this one */
    worker_main(&ws[0]);
  } else { /* this thread draws the progress while the workers run */
    pthread_mutex_lock(&B->lock);
    while (!(B->next >= B->nunit && B->running == 0)) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 100 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&B->cv, &B->lock, &ts);
      if (progress) draw_progress(B, t0, false);
    }
    pthread_mutex_unlock(&B->lock);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  }
  if (progress) draw_progress(B, t0, true);
  ctx_free(B->ctx, ws);
  ctx_free(B->ctx, th);
  for (int32_t i = 0; i < B->nunit; i++)
    if (B->units[i].err.status != LOOM_OK) {
      char label[200];
      unit_label(B, &B->units[i], label, sizeof label);
      return diag_error(d, B->units[i].err.status, "bundle: compiling %s failed: %s", label, B->units[i].err.msg);
    }
  return LOOM_OK;
}

/* ---- writing -------------------------------------------------------------------------------------------- */
static int32_t target_index(Build *B, uint32_t kind, uint32_t arch) {
  for (int i = 0; i < B->ntarget; i++)
    if (B->targets[i].kind == kind && B->targets[i].arch == arch) return i;
  return -1;
}

static LoomStatus write_bundle(Build *B, LoomBundleBuilder *b, int32_t (*rec_of)[2], const char *path, Diag *d) {
  RtBundleWriter *w = NULL;
  LoomStatus st = rt_bundle_writer_create(B->ctx, &w, d);
  if (st) return st;
  char llvm[32], desc[128];
  cg_llvm_version(llvm, sizeof llvm);
  rt_bw_meta(w, B->opt->producer ? B->opt->producer : "libloom", LOOM_VERSION_STRING, llvm);
  for (int i = 0; i < B->ntarget; i++) {
    const TargetSpec *t = &B->targets[i];
    if (t->kind == RB_TARGET_HOST_X86_64) cg_host_aot_describe(B->host, (int)t->arch, desc, sizeof desc);
    else if (t->kind == RB_TARGET_AMDGPU) snprintf(desc, sizeof desc, "LLVM %s amdgcn-amd-amdhsa %s", llvm, t->label);
    else snprintf(desc, sizeof desc, "LLVM %s nvptx sm_%u", llvm, t->arch);
    rt_bw_target(w, t->kind, t->arch, t->kind == RB_TARGET_HOST_X86_64 ? RB_HOST_ABI : RB_GPU_ABI, t->label, desc);
  }
  for (int32_t r = 0; r < B->nrec; r++) {
    const Rec *rc = &B->recs[r];
    const KernelIr *k = rc->ir;
    uint8_t *pdt = ctx_calloc(B->ctx, (size_t)k->nparam + 1, 1); /* the parameters' dtypes (verified kernels) */
    if (!pdt) {
      rt_bundle_writer_free(w);
      return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle kernel records");
    }
    for (int32_t i = 0; i < k->ninstr; i++)
      if (k->instrs[i].kind == KI_PARAM && k->instrs[i].op < k->nparam) pdt[k->instrs[i].op] = k->instrs[i].dtype;
    rt_bw_kernel(w, rc->name, rc->key, rc->keylen, k->ndim, k->nkeep, k->index_bits, k->nbuf, k->bufs, k->nparam, pdt);
    ctx_free(B->ctx, pdt);
  }
  for (int32_t i = 0; i < B->nunit; i++) {
    const Unit *u = &B->units[i];
    if (u->kind == RB_TARGET_HOST_X86_64) {
      rt_bw_code(w, u->rec, target_index(B, u->kind, u->arch), u->host_blob, u->host_size, u->facts, NULL);
      continue;
    }
    const char *names[RB_GPU_NENTRY];
    for (int j = 0; j < RB_GPU_NENTRY; j++) names[j] = u->names[j];
    if (u->kind == RB_TARGET_AMDGPU)
      rt_bw_code(w, u->rec, target_index(B, RB_TARGET_AMDGPU, u->arch), u->co, u->co_size, u->facts, names);
    if (u->want_cubin)
      rt_bw_code(w, u->rec, target_index(B, RB_TARGET_CUDA_CUBIN, u->arch), u->cubin, u->cubin_size, u->facts, names);
    if (u->want_ptx)
      rt_bw_code(w, u->rec, target_index(B, RB_TARGET_CUDA_PTX, u->arch), u->ptx, u->ptx_size, u->facts, names);
  }
  for (int32_t e = 0; e < b->nentry; e++) rt_bw_entry(w, b->entries[e].name, rec_of[e][0], rec_of[e][1]);
  const uint8_t *fuse = NULL; /* bundled @loom.fuse signatures (bundle_fuse_graph.c), when there are any */
  size_t fuse_size = 0;
  if (b->fuse && (st = rt_fuse_writer_bytes(b->fuse, &fuse, &fuse_size, d))) {
    rt_bundle_writer_free(w);
    return st;
  }
  rt_bw_fuse_section(w, fuse, fuse_size);
  uint8_t *bytes = NULL;
  size_t size = 0;
  st = rt_bundle_writer_finish(w, &bytes, &size, d);
  rt_bundle_writer_free(w);
  if (st) return st;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(bytes, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = false;
  ctx_free(B->ctx, bytes);
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return diag_error(d, LOOM_ERR_BACKEND, "cannot write bundle %s: %s", path, strerror(e));
  }
  return LOOM_OK;
}

static void print_summary(Build *B, LoomBundleBuilder *b, int32_t (*rec_of)[2]) {
  fprintf(stderr, "%-28s %-28s", "entry", "kernel");
  for (int i = 0; i < B->ntarget; i++) fprintf(stderr, " %11s", B->targets[i].label);
  fprintf(stderr, " %10s\n", "bytes");
  size_t total = 0;
  for (int32_t e = 0; e < b->nentry; e++) {
    const KernelIr *k = b->entries[e].ir;
    char kdesc[64];
    snprintf(kdesc, sizeof kdesc, "%s ndim %d keep %d, %d bufs", k->nkeep == k->ndim ? "map" : "reduce", k->ndim, k->nkeep,
             k->nbuf);
    fprintf(stderr, "%-28s %-28s", b->entries[e].name, kdesc);
    size_t bytes = 0;
    for (int i = 0; i < B->ntarget; i++) {
      const TargetSpec *t = &B->targets[i];
      size_t tb = 0; /* both index widths */
      for (int32_t u = 0; u < B->nunit; u++) {
        const Unit *un = &B->units[u];
        if ((un->rec != rec_of[e][0] && un->rec != rec_of[e][1]) || un->arch != t->arch) continue;
        if (t->kind == RB_TARGET_HOST_X86_64 && un->kind == RB_TARGET_HOST_X86_64) tb += un->host_size;
        if (t->kind == RB_TARGET_CUDA_CUBIN && un->kind == RB_TARGET_CUDA_PTX && un->want_cubin) tb += un->cubin_size;
        if (t->kind == RB_TARGET_CUDA_PTX && un->kind == RB_TARGET_CUDA_PTX && un->want_ptx) tb += un->ptx_size;
        if (t->kind == RB_TARGET_AMDGPU && un->kind == RB_TARGET_AMDGPU) tb += un->co_size;
      }
      fprintf(stderr, " %11zu", tb);
      bytes += tb;
    }
    total += bytes;
    fprintf(stderr, " %10zu\n", bytes);
  }
  fprintf(stderr, "%d entries, %d kernels (32- and 64-bit indexing), %d targets, %zu bytes of code\n", b->nentry, B->nrec,
          B->ntarget, total);
}

static void free_build(Build *B) {
  for (int32_t i = 0; i < B->nunit; i++) {
    ctx_free(B->ctx, B->units[i].host_blob);
    ctx_free(B->ctx, B->units[i].cubin);
    ctx_free(B->ctx, B->units[i].ptx);
    ctx_free(B->ctx, B->units[i].co);
  }
  for (int32_t r = 0; r < B->nrec; r++) ctx_free(B->ctx, B->recs[r].key);
  ctx_free(B->ctx, B->units);
  ctx_free(B->ctx, B->recs);
  if (B->host) cg_host_aot_destroy(B->host);
  if (B->tmpdir[0]) rmdir(B->tmpdir);
  pthread_cond_destroy(&B->cv);
  pthread_mutex_destroy(&B->lock);
}

LOOM_API LoomStatus loom_bundle_builder_write(LoomBundleBuilder *b, const LoomBundleOptions *options, const char *path) {
  if (!b) return LOOM_ERR_INVALID_ARGUMENT;
  Diag d = {.status = LOOM_OK};
  LoomBundleOptions dflt = {.progress = -1};
  Build B = {.ctx = b->ctx, .opt = options ? options : &dflt};
  pthread_mutex_init(&B.lock, NULL);
  pthread_cond_init(&B.cv, NULL);
  int32_t (*rec_of)[2] = NULL;
  LoomStatus st = LOOM_OK;
  if (!path || !*path) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_builder_write: path is empty");
  else if (b->capturing) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "loom_bundle_builder_write: a capture is running");
  else if (b->nentry == 0) st = diag_error(&d, LOOM_ERR_INVALID_ARGUMENT, "bundle %s: no kernels to bundle", path);
  if (st == LOOM_OK) st = parse_targets(&B, &d);
  if (st == LOOM_OK) {
    rec_of = ctx_calloc(b->ctx, (size_t)b->nentry, sizeof *rec_of);
    if (!rec_of) st = diag_error(&d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: bundle entries");
  }
  if (st == LOOM_OK) st = make_records(&B, b, rec_of, &d);
  if (st == LOOM_OK) st = make_units(&B, &d);
  if (st == LOOM_OK && target_index(&B, RB_TARGET_HOST_X86_64, 1) + target_index(&B, RB_TARGET_HOST_X86_64, 3) +
                               target_index(&B, RB_TARGET_HOST_X86_64, 4) > -3)
    st = cg_host_aot_create(b->ctx, !B.opt->no_sleef, &B.host, &d);
  if (st == LOOM_OK && B.ptxas[0]) {
    const char *tmp = getenv("TMPDIR");
    snprintf(B.tmpdir, sizeof B.tmpdir, "%s/loomc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(B.tmpdir)) {
      st = diag_error(&d, LOOM_ERR_BACKEND, "cannot make a temporary directory %s: %s", B.tmpdir, strerror(errno));
      B.tmpdir[0] = 0;
    }
  }
  if (st == LOOM_OK) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    B.jobs = B.opt->jobs > 0 ? B.opt->jobs : (int)(ncpu > 0 ? ncpu : 1);
    if (B.jobs > 256) B.jobs = 256;
    if (B.jobs > B.nunit) B.jobs = B.nunit > 0 ? B.nunit : 1;
    st = run_units(&B, &d);
  }
  if (st == LOOM_OK) st = write_bundle(&B, b, rec_of, path, &d);
  if (st == LOOM_OK && B.opt->summary) print_summary(&B, b, rec_of);
  free_build(&B);
  ctx_free(b->ctx, rec_of);
  return st == LOOM_OK ? LOOM_OK : ctx_report(b->ctx, &d);
}
