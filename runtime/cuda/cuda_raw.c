/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_raw.c: the CUDA device's raw modules (device.h's raw_* hooks; the generic RawModule / RawKernel
 * API is runtime/raw_kernel.c).
 *
 * Approach. Creating a module turns every format into PTX text (or keeps a cubin) and a list of
 * kernel entries with parameter lists, with no GPU involved:
 *   PTX        the text is kept; entries come from scanning ".entry name( .param ... )".
 *   LLVM IR    codegen/nvptx_raw.c parses it, reads the entries, links libdevice and emits PTX.
 *   CUDA C++   NVRTC (cuda_nvrtc.c) compiles it to PTX where clang-19 is not on PATH,
 *              LOOM_RAW_CUDA_COMPILER=nvrtc asks for it (=clang: clang-19 only) or the options carry
 *              name expressions (only NVRTC names template instances); else
 *              clang-19 (found on PATH) compiles it device-only to LLVM IR, then as above. clang 19's
 *              CUDA wrapper headers do not accept CUDA 13's headers, so the source is compiled with
 *              -nocudainc and a small prelude (below) giving __global__ & co, threadIdx & co, and the
 *              math functions of clang's own CUDA headers (they call libdevice's __nv_*).
 *   cubin      kept as is; entries are unknown until loaded (then cuFuncGetParamInfo, if present).
 * The driver is touched only at the first launch on a device: the module loads its own RtCuda
 * (rt_cuda_load; "no CUDA driver" without one), retains the device, links the PTX to a cubin
 * (cuLink) and loads it; kernels are looked up per function and device. The launch itself calls
 * cuLaunchKernel resolved from the already-loaded libcuda, so that any CUstream (a LoomStream's, the
 * current stream, a foreign one) can be used.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/cuda/cuda_driver.h" /* RtCuModule's CUmodule, for cuModuleGetGlobal */
#include "runtime/cuda/cuda_rt.h"

#define RAW_MAX_DEVICES 64
#define RAW_DEFAULT_SM 90

extern char **environ;

typedef int (*RawLaunchFn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, void *stream, void **params, void **extra);
typedef int (*RawParamInfoFn)(void *f, size_t index, size_t *offset, size_t *size);
typedef int (*RawErrorNameFn)(int r, const char **name);
typedef int (*RawGlobalFn)(unsigned long long *ptr, size_t *bytes, void *module, const char *name);
typedef int (*RawLinkAddFileFn)(void *state, int type, const char *path, unsigned nopts, void *opts, void **vals);

/* A CUDA raw module: the code as PTX (or a cubin), and per device the loaded module. */
struct RtRawModule {
  LoomRawFormat format;
  int sm;            /* the sm the PTX is for */
  bool arch_given;   /* by an option */
  char *ptx;         /* PTX text (every format but CUBIN) */
  void *image;       /* CUBIN: the bytes */
  size_t image_size;
  void *llvm;        /* LLVM IR formats: the code, to recompile for an older device */
  size_t llvm_size;
  RtCuda *cu;        /* the module's own driver instance, loaded at the first launch */
  void *libcuda;     /* dlopen handle (RTLD_NOLOAD) for the three calls below */
  RawLaunchFn launch;
  RawParamInfoFn param_info;
  RawErrorNameFn error_name;
  RawGlobalFn get_global;
  RawLinkAddFileFn link_add_file;
  bool rdc;          /* separate compilation (-dc, -rdc=true): linked with the device runtime (cudadevrt) */
  bool retained[RAW_MAX_DEVICES];
  RtCuModule *mods[RAW_MAX_DEVICES];
};

/* ---- helpers ----------------------------------------------------------------------------------- */
static char *dup_n(LoomContext *ctx, const char *s, size_t n) {
  char *p = ctx_alloc(ctx, n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

static bool has_text(const char *s, size_t n, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= n; i++)
    if (!memcmp(s + i, needle, k)) return true;
  return false;
}

/* The format of code: the magic numbers of binaries, then text: PTX (".entry" with ".target" or
 * ".version"), LLVM IR ("define " with a target line, function metadata, or no "__global__"), else
 * CUDA C++. */
static LoomRawFormat sniff(const unsigned char *p, size_t n) {
  /* another device's code: an ELF of another machine than EM_CUDA (190), LLVM IR for amdgcn */
  if (n >= 20 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && (p[18] | p[19] << 8) != 190)
    return LOOM_RAW_AUTO;
  if (cg_llvm_targets_amdgcn(p, n)) return LOOM_RAW_AUTO;
  if (n >= 4 && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') return LOOM_RAW_CUBIN;
  if (n >= 4 && p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba) return LOOM_RAW_CUBIN; /* fatbin */
  if (n >= 4 && ((p[0] == 'B' && p[1] == 'C' && p[2] == 0xc0 && p[3] == 0xde) ||
                 (p[0] == 0xde && p[1] == 0xc0 && p[2] == 0x17 && p[3] == 0x0b)))
    return LOOM_RAW_LLVM_BITCODE;
  const char *s = (const char *)p;
  if (has_text(s, n, ".entry") && (has_text(s, n, ".target") || has_text(s, n, ".version"))) return LOOM_RAW_PTX;
  if (has_text(s, n, "define ") && (has_text(s, n, "target triple") || has_text(s, n, "target datalayout") ||
                                    has_text(s, n, "!{ptr @") || !has_text(s, n, "__global__")))
    return LOOM_RAW_LLVM_IR;
  return LOOM_RAW_CUDA;
}

LoomRawFormat rt_cu_raw_sniff(const void *code, size_t size) { return sniff(code, size); }

static const char *format_name(LoomRawFormat f) {
  switch (f) {
  case LOOM_RAW_PTX: return "PTX";
  case LOOM_RAW_LLVM_IR: return "LLVM IR";
  case LOOM_RAW_LLVM_BITCODE: return "LLVM bitcode";
  case LOOM_RAW_CUBIN: return "cubin";
  case LOOM_RAW_CUDA: return "CUDA C++";
  default: return "auto";
  }
}

/* ---- PTX entries --------------------------------------------------------------------------------
 * entry  = (".visible" | ".weak")? ".entry" name "(" (param ("," param)*)? ")"
 * param  = ".param" attr* type (".ptr" space? (".align" N)?)? name ("[" N "]")?
 * A .u64/.s64 is INT_OR_POINTER (PTX has no pointer type) unless it carries .ptr; .bN is ANY;
 * ".param .align A .b8 name[N]" (an aggregate by value) is ANY of N bytes. */
static const char *skip_ws(const char *s, const char *e) {
  while (s < e) {
    if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    else if (s + 1 < e && s[0] == '/' && s[1] == '/') {
      while (s < e && *s != '\n') s++;
    } else if (s + 1 < e && s[0] == '/' && s[1] == '*') {
      s += 2;
      while (s + 1 < e && !(s[0] == '*' && s[1] == '/')) s++;
      s = s + 2 <= e ? s + 2 : e;
    } else break;
  }
  return s;
}

static bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '.' || c == '%';
}

static const char *word(const char *s, const char *e, size_t *len) {
  s = skip_ws(s, e);
  const char *b = s;
  while (s < e && ident_char(*s)) s++;
  *len = (size_t)(s - b);
  return b;
}

static bool param_type(const char *w, size_t n, CgRawParam *p) {
  static const struct { const char *name; int kind, size; } types[] = {
      {".u8", CG_RAW_INT, 1},   {".s8", CG_RAW_INT, 1},   {".u16", CG_RAW_INT, 2}, {".s16", CG_RAW_INT, 2},
      {".u32", CG_RAW_INT, 4},  {".s32", CG_RAW_INT, 4},  {".u64", CG_RAW_INT_OR_POINTER, 8},
      {".s64", CG_RAW_INT_OR_POINTER, 8}, {".f16", CG_RAW_FLOAT, 2}, {".f32", CG_RAW_FLOAT, 4},
      {".f64", CG_RAW_FLOAT, 8}, {".b8", CG_RAW_ANY, 1}, {".b16", CG_RAW_ANY, 2}, {".b32", CG_RAW_ANY, 4},
      {".b64", CG_RAW_ANY, 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen(types[i].name) == n && !memcmp(types[i].name, w, n)) {
      p->kind = types[i].kind;
      p->size = types[i].size;
      return true;
    }
  return false;
}

static LoomStatus ptx_entries(LoomContext *ctx, const char *ptx, CgRawEntry **out, int32_t *nout, Diag *d) {
  size_t len = strlen(ptx);
  const char *end = ptx + len;
  int32_t cap = 0, n = 0;
  CgRawEntry *es = NULL;
  CgRawParam *tmp = ctx_calloc(ctx, CG_RAW_MAX_PARAMS, sizeof *tmp);
  LoomStatus st = tmp ? LOOM_OK : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  for (const char *s = ptx; st == LOOM_OK && s < end;) {
    const char *hit = NULL;
    for (const char *q = s; q + 6 <= end; q++)
      if (!memcmp(q, ".entry", 6) && (q == ptx || !ident_char(q[-1])) && (q + 6 == end || !ident_char(q[6]))) {
        hit = q;
        break;
      }
    if (!hit) break;
    size_t nl;
    const char *name = word(hit + 6, end, &nl);
    const char *q = skip_ws(name + nl, end);
    if (!nl || q >= end || *q != '(') {
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: malformed PTX .entry at byte %ld (expected "
                                                    "'.entry name(')", (long)(hit - ptx));
      break;
    }
    q++;
    int32_t np = 0;
    for (;;) {
      q = skip_ws(q, end);
      if (q < end && *q == ')') break;
      size_t wl;
      const char *w = word(q, end, &wl);
      if (wl != 6 || memcmp(w, ".param", 6)) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: malformed parameter list of PTX entry '%.*s' "
                                                      "(expected .param or ')')", (int)nl, name);
        break;
      }
      q = w + wl;
      CgRawParam p = {CG_RAW_ANY, 0};
      bool typed = false, ptr = false;
      long count = 0;
      for (;;) { /* attributes, type, .ptr qualifiers, then the name */
        w = word(q, end, &wl);
        if (!wl) break;
        q = w + wl;
        if (wl == 6 && !memcmp(w, ".align", 6)) {
          word(q, end, &wl); /* the alignment number */
          q = skip_ws(q, end) + wl;
          continue;
        }
        if (wl == 4 && !memcmp(w, ".ptr", 4)) {
          ptr = true;
          continue;
        }
        if (!typed && param_type(w, wl, &p)) {
          typed = true;
          continue;
        }
        if (w[0] == '.') continue; /* .global, .shared, ... after .ptr */
        q = skip_ws(q, end);       /* the name, maybe with [N] */
        if (q < end && *q == '[') {
          count = strtol(q + 1, NULL, 10);
          while (q < end && *q != ']') q++;
          if (q < end) q++;
        }
        break;
      }
      if (!typed) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: PTX entry '%.*s' parameter %d has no type I know",
                        (int)nl, name, (int)np);
        break;
      }
      if (ptr) p.kind = CG_RAW_POINTER;
      if (count > 0) {
        p.kind = CG_RAW_ANY;
        p.size *= (int32_t)(count > (1 << 20) ? (1 << 20) : count);
      }
      if (np >= CG_RAW_MAX_PARAMS) {
        st = diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: PTX entry '%.*s' has more than %d parameters", (int)nl,
                        name, CG_RAW_MAX_PARAMS);
        break;
      }
      tmp[np++] = p;
      q = skip_ws(q, end);
      if (q < end && *q == ',') q++;
      else if (!(q < end && *q == ')')) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: malformed parameter list of PTX entry '%.*s'",
                        (int)nl, name);
        break;
      }
    }
    if (st != LOOM_OK) break;
    if (n == cap) {
      int32_t nc = cap ? cap * 2 : 8;
      CgRawEntry *ne = ctx_calloc(ctx, (size_t)nc, sizeof *ne);
      if (!ne) {
        st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
        break;
      }
      if (es) memcpy(ne, es, (size_t)n * sizeof *es);
      ctx_free(ctx, es);
      es = ne;
      cap = nc;
    }
    CgRawEntry *e = &es[n++];
    e->name = dup_n(ctx, name, nl);
    e->nparams = np;
    e->params = np ? ctx_calloc(ctx, (size_t)np, sizeof *e->params) : NULL;
    if (!e->name || (np && !e->params)) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
      break;
    }
    if (np) memcpy(e->params, tmp, (size_t)np * sizeof *tmp);
    s = q + 1;
  }
  ctx_free(ctx, tmp);
  if (st == LOOM_OK && n == 0) st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: the PTX has no .entry");
  if (st != LOOM_OK) {
    cg_raw_entries_free(ctx, es, n);
    return st;
  }
  *out = es;
  *nout = n;
  return LOOM_OK;
}

/* ---- options ----------------------------------------------------------------------------------- */
static const char *option_arch(const char *o) {
  static const char *const prefixes[] = {"-arch=", "--gpu-architecture=", "--cuda-gpu-arch=", "-arch", "--gpu-name="};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t k = strlen(prefixes[i]);
    if (!strncmp(o, prefixes[i], k)) return o + k;
  }
  return NULL;
}

static bool is_arch_option(const char *o) { return option_arch(o) != NULL; }

static LoomStatus parse_sm(const char *a, int *sm, Diag *d) {
  const char *p = a;
  if (!strncmp(p, "sm_", 3) || !strncmp(p, "compute_", 8)) p = strchr(p, '_') + 1;
  char *endp = NULL;
  long v = strtol(p, &endp, 10);
  if (endp == p || v < 30 || v > 129 || (*endp && *endp != 'a' && *endp != 'f'))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: architecture '%s' is not sm_XX (e.g. sm_90)", a);
  *sm = (int)v;
  return LOOM_OK;
}

/* ---- CUDA C++ through clang-19 ------------------------------------------------------------------- */
extern const char rt_cuda_raw_types_prelude[]; /* cuda_texture.c: vector types, texture fetches */
static const char raw_prelude[] =
    "/* loom's CUDA prelude for clang -nocudainc */\n"
    "#define __host__ __attribute__((host))\n#define __device__ __attribute__((device))\n"
    "#define __global__ __attribute__((global))\n#define __shared__ __attribute__((shared))\n"
    "#define __constant__ __attribute__((constant))\n#define __managed__ __attribute__((managed))\n"
    "#define __forceinline__ __inline__ __attribute__((always_inline))\n"
    "#define __noinline__ __attribute__((noinline))\n"
    "#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))\n"
    "#ifndef CUDA_VERSION\n#define CUDA_VERSION 12000\n#endif\n"
    "#include <stddef.h>\n#include <stdint.h>\n#include <limits.h>\n"
    "#define HUGE_VAL __builtin_huge_val()\n#define HUGE_VALF __builtin_huge_valf()\n"
    "#define INFINITY __builtin_inff()\n#define NAN __builtin_nanf(\"\")\n"
    "#include <__clang_cuda_builtin_vars.h>\n#include <__clang_cuda_libdevice_declares.h>\n"
    "#undef __DEVICE__\n#define __DEVICE__ static __device__ __forceinline__\n"
    "#include <__clang_cuda_device_functions.h>\n#include <__clang_cuda_math.h>\n#undef __DEVICE__\n";

static bool find_on_path(const char *prog, char *out, size_t n) {
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    if (len && (size_t)snprintf(out, n, "%.*s/%s", (int)len, path, prog) < n && access(out, X_OK) == 0) return true;
    path += len + (colon ? 1 : 0);
  }
  return false;
}

static LoomStatus write_file(const char *path, const void *data, size_t n, Diag *d) {
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  if (f && fclose(f) != 0) ok = false;
  return ok ? LOOM_OK : diag_error(d, LOOM_ERR_BACKEND, "RawModule: cannot write %s: %s", path, strerror(errno));
}

static char *read_file(LoomContext *ctx, const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
  char *b = len >= 0 && fseek(f, 0, SEEK_SET) == 0 ? ctx_alloc(ctx, (size_t)len + 1) : NULL;
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) {
    ctx_free(ctx, b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[len] = 0;
    *size = (size_t)len;
  }
  return b;
}

/* Runs clang-19 on the source; *ir is the LLVM IR text, *log clang's warnings or NULL (both ctx_alloc'ed). */
static LoomStatus clang_cuda(LoomContext *ctx, const char *src, size_t n, int sm, const char *const *options,
                             int32_t noptions, char **ir, size_t *ir_size, char **log, Diag *d) {
  *log = NULL;
  char clang[1024];
  if (!find_on_path("clang-19", clang, sizeof clang))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: CUDA C++ source needs clang-19 on PATH (Debian: apt-get "
                                               "install clang-19; scripts/setup.sh installs it), or give the kernel as "
                                               "PTX or LLVM IR");
  const char *tmpdir = getenv("TMPDIR");
  char dir[512];
  snprintf(dir, sizeof dir, "%s/loom_raw_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(dir)) return diag_error(d, LOOM_ERR_BACKEND, "RawModule: cannot make a temporary directory: %s", strerror(errno));
  char srcp[600], prep[600], outp[600], errp[600], arch[64];
  snprintf(srcp, sizeof srcp, "%s/kernel.cu", dir);
  snprintf(prep, sizeof prep, "%s/prelude.h", dir);
  snprintf(outp, sizeof outp, "%s/kernel.ll", dir);
  snprintf(errp, sizeof errp, "%s/clang.log", dir);
  snprintf(arch, sizeof arch, "--cuda-gpu-arch=sm_%d", sm > 90 ? 90 : sm);
  LoomStatus st = write_file(srcp, src, n, d);
  size_t np1 = sizeof raw_prelude - 1, np2 = strlen(rt_cuda_raw_types_prelude);
  char *prelude = st == LOOM_OK ? ctx_calloc(ctx, np1 + np2 + 1, 1) : NULL;
  if (st == LOOM_OK && !prelude) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  if (st == LOOM_OK) { /* loom's prelude, then the vector types and textures (cuda_texture.c) */
    memcpy(prelude, raw_prelude, np1);
    memcpy(prelude + np1, rt_cuda_raw_types_prelude, np2);
    st = write_file(prep, prelude, np1 + np2, d);
  }
  ctx_free(ctx, prelude);
  const char **argv = ctx_calloc(ctx, (size_t)noptions + 24, sizeof *argv);
  if (st == LOOM_OK && !argv) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  if (st == LOOM_OK) {
    int a = 0;
    const char *fixed[] = {clang, "-x", "cuda", "--cuda-device-only", arch, "-nocudainc", "-nocudalib",
                           "-Wno-unknown-cuda-version", "-Wunused-variable", "-Wunused-but-set-variable", "-O3",
                           "-S", "-emit-llvm", "-include", prep};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) argv[a++] = fixed[i];
    for (int32_t i = 0; i < noptions; i++) {
      const char *o = options[i];
      if (o && (!strncmp(o, "-D", 2) || !strncmp(o, "-U", 2) || !strncmp(o, "-I", 2) || !strncmp(o, "-std=", 5)))
        argv[a++] = o;
    }
    argv[a++] = srcp;
    argv[a++] = "-o";
    argv[a++] = outp;
    argv[a] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    char *const *av;
    memcpy(&av, &argv, sizeof av); /* posix_spawn's argv is not const-qualified; it does not write */
    int rc = posix_spawn(&pid, clang, &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    if (rc != 0) {
      st = diag_error(d, LOOM_ERR_BACKEND, "RawModule: cannot run %s: %s", clang, strerror(rc));
    } else {
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        size_t ln = 0;
        char *log = read_file(ctx, errp, &ln);
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: clang-19 could not compile the CUDA C++ source:\n%.900s",
                        log && *log ? log : "(no message)");
        ctx_free(ctx, log);
      } else if (!(*ir = read_file(ctx, outp, ir_size))) {
        st = diag_error(d, LOOM_ERR_BACKEND, "RawModule: clang-19 wrote no LLVM IR");
      } else {
        size_t ln = 0;
        *log = read_file(ctx, errp, &ln); /* warnings, for RawModule.compile(log_stream) */
      }
    }
  }
  ctx_free(ctx, argv);
  unlink(srcp);
  unlink(prep);
  unlink(outp);
  unlink(errp);
  rmdir(dir);
  return st;
}

/* NVRTC compiles CUDA C++ when LOOM_RAW_CUDA_COMPILER=nvrtc, or when it is unset (or "auto") and clang-19 is not
 * on PATH; LOOM_RAW_CUDA_COMPILER=clang keeps clang-19 (its error when missing). */
static bool use_nvrtc(void) {
  const char *c = getenv("LOOM_RAW_CUDA_COMPILER");
  if (c && !strcmp(c, "nvrtc")) return true;
  if (c && !strcmp(c, "clang")) return false;
  char path[1024];
  return !find_on_path("clang-19", path, sizeof path);
}

/* ---- modules ----------------------------------------------------------------------------------- */
void rt_cu_raw_destroy(LoomContext *ctx, RtRawModule *m) {
  if (!m) return;
  if (m->cu) {
    for (int i = 0; i < RAW_MAX_DEVICES; i++) {
      rt_cuda_module_unload(m->cu, m->mods[i]);
      if (m->retained[i]) rt_cuda_device_release(m->cu, i);
    }
    rt_cuda_unload(m->cu);
  }
  if (m->libcuda) dlclose(m->libcuda);
  ctx_free(ctx, m->ptx);
  ctx_free(ctx, m->image);
  ctx_free(ctx, m->llvm);
  ctx_free(ctx, m);
}

LoomStatus rt_cu_raw_create(LoomContext *ctx, const void *code, size_t size, LoomRawFormat format,
                            const char *const *options, int32_t noptions, RtRawModule **out, CgRawEntry **entries,
                            int32_t *nentries, Diag *d) {
  *out = NULL;
  *entries = NULL;
  *nentries = 0;
  RtRawModule *m = ctx_calloc(ctx, 1, sizeof *m);
  if (!m) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "loom_raw_module_create: out of memory");
  m->format = format;
  m->sm = RAW_DEFAULT_SM;
  LoomStatus st = LOOM_OK;
  for (int32_t i = 0; i < noptions && st == LOOM_OK; i++) {
    static const char *const rdc[] = {"-dc", "--device-c", "-rdc=true", "--relocatable-device-code=true"};
    for (size_t k = 0; options[i] && k < sizeof rdc / sizeof rdc[0]; k++) m->rdc |= !strcmp(options[i], rdc[k]);
    const char *a = options[i] ? option_arch(options[i]) : NULL;
    if (a && *a) {
      st = parse_sm(a, &m->sm, d);
      m->arch_given = true;
    }
  }
  const char *text = code;
  if (st == LOOM_OK && (format == LOOM_RAW_PTX || format == LOOM_RAW_LLVM_IR || format == LOOM_RAW_CUDA) &&
      memchr(text, 0, size)) {
    size_t len = strnlen(text, size); /* a trailing NUL is fine, one inside the text is not */
    for (size_t i = len; i < size; i++)
      if (text[i]) {
        st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: %s text contains a NUL byte at offset %zu",
                        format_name(format), len);
        break;
      }
    size = len;
  }
  if (st == LOOM_OK) {
    switch (format) {
    case LOOM_RAW_PTX:
      m->ptx = dup_n(ctx, text, size);
      st = m->ptx ? ptx_entries(ctx, m->ptx, entries, nentries, d)
                  : diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
      break;
    case LOOM_RAW_CUBIN:
      m->image = ctx_alloc(ctx, size);
      if (!m->image) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
      else memcpy(m->image, code, size);
      m->image_size = size;
      *nentries = -1; /* known once loaded */
      break;
    case LOOM_RAW_CUDA: {
      bool names = false; /* name expressions: only NVRTC instantiates and names them */
      for (int32_t i = 0; i < noptions; i++) names |= rt_cu_is_name_expression_option(options[i]);
      if (names && !rt_cu_nvrtc_available()) {
        st = diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: name_expressions need NVRTC (libnvrtc.so of a CUDA "
                                                 "toolkit; set CUDA_HOME): clang-19 cannot name template instances");
        break;
      }
      if (names || use_nvrtc()) {
        st = rt_cu_nvrtc_compile(ctx, text, size, m->sm, options, noptions, is_arch_option, &m->ptx, d);
        if (st == LOOM_OK) st = ptx_entries(ctx, m->ptx, entries, nentries, d);
        break;
      }
      char *ir = NULL, *log = NULL;
      size_t irn = 0;
      st = clang_cuda(ctx, text, size, m->sm, options, noptions, &ir, &irn, &log, d);
      if (st == LOOM_OK) st = cg_nvptx_compile_llvm(ctx, ir, irn, false, m->sm, &m->ptx, entries, nentries, d);
      if (st == LOOM_OK) st = rt_cu_prepend_log(ctx, log, &m->ptx, d);
      ctx_free(ctx, ir);
      ctx_free(ctx, log);
      break;
    }
    default: /* LLVM IR, text or bitcode */
      m->llvm = ctx_alloc(ctx, size);
      if (!m->llvm) {
        st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
        break;
      }
      memcpy(m->llvm, code, size);
      m->llvm_size = size;
      st = cg_nvptx_compile_llvm(ctx, m->llvm, size, format == LOOM_RAW_LLVM_BITCODE, m->sm, &m->ptx, entries,
                                 nentries, d);
      break;
    }
  }
  if (st != LOOM_OK) {
    if (*nentries > 0) cg_raw_entries_free(ctx, *entries, *nentries);
    *entries = NULL;
    *nentries = 0;
    rt_cu_raw_destroy(ctx, m);
    return st;
  }
  *out = m;
  return LOOM_OK;
}

const char *rt_cu_raw_text(const RtRawModule *m) { return m->ptx; }

/* libcudadevrt.a of the CUDA toolkit ($CUDA_HOME, else /usr/local/cuda) into path; false when missing. */
static bool find_cudadevrt(char *path, size_t n) {
  const char *home = getenv("CUDA_HOME");
  const char *homes[] = {home && *home ? home : NULL, "/usr/local/cuda"};
  for (size_t i = 0; i < 2; i++)
    if (homes[i] && (size_t)snprintf(path, n, "%s/lib64/libcudadevrt.a", homes[i]) < n && access(path, R_OK) == 0)
      return true;
  return false;
}

/* Links PTX of separate compilation (kernels that launch kernels: dynamic parallelism) with the device
 * runtime library into a cubin (ctx_alloc'ed); the driver's JIT log is the error. */
static LoomStatus link_rdc(LoomContext *ctx, RtRawModule *m, int device, const char *ptx, void **cubin, size_t *size,
                           Diag *d) {
  char lib[1024];
  if (!find_cudadevrt(lib, sizeof lib))
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: separate compilation (-dc / -rdc=true) links the CUDA "
                                               "device runtime, libcudadevrt.a of a CUDA toolkit: none found (set CUDA_HOME)");
  if (!m->link_add_file) return diag_error(d, LOOM_ERR_BACKEND, "the CUDA driver has no cuLinkAddFile_v2");
  LoomStatus st = rt_cuda_set_current(m->cu, device, d);
  if (st != LOOM_OK) return st;
  RtCuda *cu = m->cu;
  enum { LOG_BYTES = 8192 };
  char *errlog = ctx_calloc(ctx, 1, LOG_BYTES);
  if (!errlog) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {errlog, (void *)(uintptr_t)LOG_BYTES};
  CUlinkState ls = NULL;
  void *data, *bin = NULL;
  size_t bin_size = 0;
  memcpy(&data, &ptx, sizeof data); /* cuLinkAddData does not write through its pointer */
  CUresult r = cu->fn.LinkCreate(2, opts, vals, &ls);
  if (r == CUDA_SUCCESS) r = cu->fn.LinkAddData(ls, CU_JIT_INPUT_PTX, data, strlen(ptx) + 1, "raw_module.ptx", 0, NULL, NULL);
  if (r == CUDA_SUCCESS) r = (CUresult)m->link_add_file(ls, CU_JIT_INPUT_LIBRARY, lib, 0, NULL, NULL);
  if (r == CUDA_SUCCESS) r = cu->fn.LinkComplete(ls, &bin, &bin_size);
  if (r != CUDA_SUCCESS) {
    const char *en = NULL;
    if (m->error_name) m->error_name(r, &en);
    errlog[LOG_BYTES - 1] = 0;
    st = diag_error(d, LOOM_ERR_BACKEND, "RawModule: linking the separately compiled module with %s for CUDA device %d "
                                         "failed: %s: %s", lib, device, en ? en : "unknown CUDA error",
                    errlog[0] ? errlog : "(no JIT log)");
  } else if (!(*cubin = ctx_alloc(ctx, bin_size ? bin_size : 1))) {
    st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory copying a %zu-byte cubin", bin_size);
  } else {
    memcpy(*cubin, bin, bin_size);
    *size = bin_size;
  }
  if (ls) cu->fn.LinkDestroy(ls);
  ctx_free(ctx, errlog);
  return st;
}

/* The driver and the module loaded on device (once). */
static LoomStatus load_on(LoomContext *ctx, RtRawModule *m, int device, Diag *d) {
  if (device < 0 || device >= RAW_MAX_DEVICES)
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "CUDA device %d is out of range", device);
  if (!m->cu) {
    LoomStatus st = rt_cuda_load(ctx, &m->cu, d);
    if (st != LOOM_OK) {
      m->cu = NULL;
      return st;
    }
    m->libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (m->libcuda) {
      m->launch = (RawLaunchFn)dlsym(m->libcuda, "cuLaunchKernel");
      m->param_info = (RawParamInfoFn)dlsym(m->libcuda, "cuFuncGetParamInfo");
      m->error_name = (RawErrorNameFn)dlsym(m->libcuda, "cuGetErrorName");
    }
    if (!m->launch) return diag_error(d, LOOM_ERR_BACKEND, "the CUDA driver has no cuLaunchKernel");
    if (m->libcuda) m->get_global = (RawGlobalFn)dlsym(m->libcuda, "cuModuleGetGlobal_v2");
    if (m->libcuda) m->link_add_file = (RawLinkAddFileFn)dlsym(m->libcuda, "cuLinkAddFile_v2");
  }
  if (device >= rt_cuda_device_count(m->cu))
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "CUDA device %d does not exist (this machine has %d)", device,
                      rt_cuda_device_count(m->cu));
  if (!m->retained[device]) {
    LoomStatus st = rt_cuda_device_retain(m->cu, device, d);
    if (st != LOOM_OK) return st;
    m->retained[device] = true;
  }
  if (!m->mods[device]) {
    LoomStatus st = LOOM_OK;
    if (m->format == LOOM_RAW_CUBIN) {
      st = rt_cuda_module_load(m->cu, device, m->image, m->image_size, &m->mods[device], d);
    } else {
      RtCuDeviceInfo info;
      st = rt_cuda_device_info(m->cu, device, &info, d);
      char *ptx = m->ptx, *own = NULL;
      int dev_sm = info.cc_major * 10 + info.cc_minor;
      if (st == LOOM_OK && m->llvm && !m->arch_given && dev_sm < m->sm) { /* an older GPU: recompile for it */
        CgRawEntry *es = NULL;
        int32_t n = 0;
        st = cg_nvptx_compile_llvm(ctx, m->llvm, m->llvm_size, m->format == LOOM_RAW_LLVM_BITCODE, dev_sm, &own, &es, &n, d);
        cg_raw_entries_free(ctx, es, n);
        ptx = own;
      }
      void *cubin = NULL;
      size_t cubin_size = 0;
      if (st == LOOM_OK)
        st = m->rdc ? link_rdc(ctx, m, device, ptx, &cubin, &cubin_size, d)
                    : rt_cuda_link_ptx(m->cu, device, ptx, "raw_module.ptx", -1, &cubin, &cubin_size, d);
      if (st == LOOM_OK) st = rt_cuda_module_load(m->cu, device, cubin, cubin_size, &m->mods[device], d);
      ctx_free(ctx, cubin);
      ctx_free(ctx, own);
    }
    if (st != LOOM_OK) {
      m->mods[device] = NULL;
      return st;
    }
  }
  return LOOM_OK;
}

/* The driver, the device's module and kernel name there. */
LoomStatus rt_cu_raw_load(LoomContext *ctx, RtRawModule *m, int device, const char *name, void **fn,
                          CgRawParam **params, int32_t *nparams, Diag *d) {
  LoomStatus lst = load_on(ctx, m, device, d);
  if (lst != LOOM_OK) return lst;
  RtCuKernel k;
  LoomStatus st = rt_cuda_module_kernel(m->cu, m->mods[device], name, &k, d);
  if (st != LOOM_OK) return st;
  *fn = k.handle;
  if (*nparams < 0 && m->param_info) { /* a cubin: the driver knows the sizes (CUDA 12.4+) */
    CgRawParam *ps = ctx_calloc(ctx, CG_RAW_MAX_PARAMS, sizeof *ps);
    int32_t n = 0;
    size_t off = 0, size = 0;
    while (ps && n < CG_RAW_MAX_PARAMS && m->param_info(k.handle, (size_t)n, &off, &size) == 0) {
      ps[n].kind = CG_RAW_ANY;
      ps[n].size = (int32_t)size;
      n++;
    }
    if (ps && n < CG_RAW_MAX_PARAMS) {
      *params = ps;
      *nparams = n;
    } else {
      ctx_free(ctx, ps);
    }
  }
  return LOOM_OK;
}

LoomStatus rt_cu_raw_launch(LoomContext *ctx, RtRawModule *m, void *fn, int dev, const uint32_t grid[3],
                            const uint32_t block[3], uint32_t shared_mem, void *stream, void **params, const char *name,
                            Diag *d) {
  LoomStatus st = rt_cuda_set_current(m->cu, dev, d);
  if (st != LOOM_OK) return st;
  int r = m->launch(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem, stream, params, NULL);
  if (r != 0) {
    const char *en = NULL;
    if (m->error_name) m->error_name(r, &en);
    return diag_error(d, r == 2 ? LOOM_ERR_OUT_OF_MEMORY : LOOM_ERR_BACKEND,
                      "cuLaunchKernel of '%s' on CUDA device %d failed: %s (grid %u,%u,%u block %u,%u,%u, %u bytes "
                      "of dynamic shared memory)", name, dev, en ? en : "unknown CUDA error", grid[0], grid[1],
                      grid[2], block[0], block[1], block[2], shared_mem);
  }
  return LOOM_OK;
}

LoomStatus rt_cu_raw_global(LoomContext *ctx, RtRawModule *m, int device, const char *name, void **ptr, size_t *bytes,
                            Diag *d) {
  LoomStatus st = load_on(ctx, m, device, d);
  if (st == LOOM_OK) st = rt_cuda_set_current(m->cu, device, d);
  if (st != LOOM_OK) return st;
  if (!m->get_global) return diag_error(d, LOOM_ERR_BACKEND, "the CUDA driver has no cuModuleGetGlobal_v2");
  unsigned long long p = 0;
  size_t n = 0;
  int r = m->get_global(&p, &n, m->mods[device]->h, name);
  if (r != 0) {
    const char *en = NULL;
    if (m->error_name) m->error_name(r, &en);
    return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: no global variable named '%s' on CUDA device %d "
                                                    "(cuModuleGetGlobal: %s)", name, device, en ? en : "unknown error");
  }
  *ptr = (void *)(uintptr_t)p;
  *bytes = n;
  return LOOM_OK;
}
