/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_nvrtc.c: CUDA C++ -> PTX through NVRTC, the CUDA toolkit's runtime compiler (a raw module's CUDA C++
 * source, cuda_raw.c, where clang-19 is not on PATH, or LOOM_RAW_CUDA_COMPILER=nvrtc asks for it).
 *
 * Approach. libnvrtc is dlopen'ed on first use (libnvrtc.so.13, .12, .so, then $CUDA_HOME/lib64 and
 * /usr/local/cuda/lib64) and kept for the process; nothing links against it, so a machine without the
 * toolkit only loses this path. The program is compiled for compute_<sm> with the toolkit's headers on the
 * include path ($CUDA_HOME/include, else /usr/local/cuda/include) and the caller's options passed through
 * unchanged (NVRTC's own options are CuPy's RawModule options; an unknown one is NVRTC's error), except the
 * architecture options cuda_raw.c already parsed into sm. NVRTC's log is the error message.
 *
 * Name expressions (CuPy's RawModule(name_expressions=[...]): template instances such as "my_sqrt<int>") come
 * as options "-loom-name-expression=EXPR" (RT_CU_NAME_EXPRESSION_OPTION; never passed to NVRTC): each is
 * added with nvrtcAddNameExpression, which makes NVRTC instantiate it, and its lowered (mangled) name is read
 * with nvrtcGetLoweredName after the compile. The PTX kept for the module starts with a header of comment
 * lines, so that the mapping and the compiler's messages travel with the PTX (PTX comments; the driver
 * ignores them):
 *   // loom-compile-log: <a line of NVRTC's log>          (warnings of a successful compile)
 *   // loom-name-expression: <lowered name> <expression>  (one per name expression)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/cuda/cuda_rt.h"

typedef int (*NvrtcCreateFn)(void **prog, const char *src, const char *name, int nheaders, const char *const *headers,
                             const char *const *include_names);
typedef int (*NvrtcCompileFn)(void *prog, int noptions, const char *const *options);
typedef int (*NvrtcSizeFn)(void *prog, size_t *size);
typedef int (*NvrtcTextFn)(void *prog, char *out);
typedef int (*NvrtcDestroyFn)(void **prog);
typedef const char *(*NvrtcErrorFn)(int result);
typedef int (*NvrtcAddNameFn)(void *prog, const char *expr);
typedef int (*NvrtcLoweredFn)(void *prog, const char *expr, const char **lowered);
typedef int (*NvrtcVersionFn)(int *major, int *minor);

static struct {
  void *lib;
  NvrtcCreateFn create;
  NvrtcCompileFn compile;
  NvrtcSizeFn ptx_size, log_size;
  NvrtcTextFn ptx, log;
  NvrtcDestroyFn destroy;
  NvrtcErrorFn error;
  NvrtcAddNameFn add_name;  /* optional: name expressions need them */
  NvrtcLoweredFn lowered;
  NvrtcVersionFn version;
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void nv_load(void) {
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  const char *home = getenv("CUDA_HOME");
  const char *homes[] = {home && *home ? home : NULL, "/usr/local/cuda"};
  for (size_t i = 0; i < 2 && !lib; i++) {
    char path[1024];
    if (homes[i] && (size_t)snprintf(path, sizeof path, "%s/lib64/libnvrtc.so", homes[i]) < sizeof path)
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  }
  if (!lib) return;
  nv.create = (NvrtcCreateFn)dlsym(lib, "nvrtcCreateProgram");
  nv.compile = (NvrtcCompileFn)dlsym(lib, "nvrtcCompileProgram");
  nv.ptx_size = (NvrtcSizeFn)dlsym(lib, "nvrtcGetPTXSize");
  nv.ptx = (NvrtcTextFn)dlsym(lib, "nvrtcGetPTX");
  nv.log_size = (NvrtcSizeFn)dlsym(lib, "nvrtcGetProgramLogSize");
  nv.log = (NvrtcTextFn)dlsym(lib, "nvrtcGetProgramLog");
  nv.destroy = (NvrtcDestroyFn)dlsym(lib, "nvrtcDestroyProgram");
  nv.error = (NvrtcErrorFn)dlsym(lib, "nvrtcGetErrorString");
  nv.add_name = (NvrtcAddNameFn)dlsym(lib, "nvrtcAddNameExpression");
  nv.lowered = (NvrtcLoweredFn)dlsym(lib, "nvrtcGetLoweredName");
  nv.version = (NvrtcVersionFn)dlsym(lib, "nvrtcVersion");
  if (nv.create && nv.compile && nv.ptx_size && nv.ptx && nv.log_size && nv.log && nv.destroy && nv.error) nv.lib = lib;
  else dlclose(lib);
}

bool rt_cu_nvrtc_available(void) {
  pthread_once(&nv_once, nv_load);
  return nv.lib != NULL;
}

bool rt_cu_nvrtc_version(int *major, int *minor) {
  *major = *minor = 0;
  return rt_cu_nvrtc_available() && nv.version && nv.version(major, minor) == 0;
}

bool rt_cu_is_name_expression_option(const char *o) {
  return o && !strncmp(o, RT_CU_NAME_EXPRESSION_OPTION, sizeof RT_CU_NAME_EXPRESSION_OPTION - 1);
}

/* Appends "// <tag>: <text>\n" per line of text to the growing buffer *b (length *n, capacity *cap). */
static bool append_comment_lines(LoomContext *ctx, char **b, size_t *n, size_t *cap, const char *tag, const char *text) {
  for (const char *s = text; *s;) {
    const char *e = strchr(s, '\n');
    size_t ln = e ? (size_t)(e - s) : strlen(s);
    if (ln) {
      size_t need = *n + strlen(tag) + ln + 8;
      if (need > *cap) {
        size_t nc = need * 2;
        char *nb = ctx_alloc(ctx, nc);
        if (!nb) return false;
        if (*b) memcpy(nb, *b, *n);
        ctx_free(ctx, *b);
        *b = nb;
        *cap = nc;
      }
      *n += (size_t)sprintf(*b + *n, "// %s: %.*s\n", tag, (int)ln, s);
    }
    s += ln;
    if (*s == '\n') s++;
  }
  return true;
}

LoomStatus rt_cu_prepend_log(LoomContext *ctx, const char *log, char **ptx, Diag *d) {
  if (!log || !*log || !*ptx) return LOOM_OK;
  char *b = NULL;
  size_t n = 0, cap = 0, pn = strlen(*ptx);
  char *out = append_comment_lines(ctx, &b, &n, &cap, "loom-compile-log", log) ? ctx_alloc(ctx, n + pn + 1) : NULL;
  if (!out) {
    ctx_free(ctx, b);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  }
  memcpy(out, b, n);
  memcpy(out + n, *ptx, pn + 1);
  ctx_free(ctx, b);
  ctx_free(ctx, *ptx);
  *ptx = out;
  return LOOM_OK;
}

/* The folder of the toolkit's headers (cuComplex.h, cuda_fp16.h ...), or NULL. */
static const char *cuda_include(char *buf, size_t n) {
  const char *home = getenv("CUDA_HOME");
  const char *homes[] = {home && *home ? home : NULL, "/usr/local/cuda"};
  for (size_t i = 0; i < 2; i++) {
    if (!homes[i] || (size_t)snprintf(buf, n, "%s/include/cuda_runtime_api.h", homes[i]) >= n) continue;
    if (access(buf, R_OK) == 0) {
      snprintf(buf, n, "-I%s/include", homes[i]);
      return buf;
    }
  }
  return NULL;
}

/* The compiled program's PTX behind its header (the file comment above): the log, then the lowered names. */
static LoomStatus nvrtc_result(LoomContext *ctx, void *prog, const char *const *options, int32_t noptions, char **ptx,
                               Diag *d) {
  char *b = NULL, *log = NULL, *code = NULL;
  size_t n = 0, cap = 0, ln = 0, pn = 0;
  LoomStatus st = LOOM_OK;
  if (nv.log_size(prog, &ln) == 0 && ln > 1 && (log = ctx_alloc(ctx, ln + 1))) {
    if (nv.log(prog, log) != 0) log[0] = 0;
    log[ln] = 0;
    if (!append_comment_lines(ctx, &b, &n, &cap, "loom-compile-log", log))
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  }
  for (int32_t i = 0; st == LOOM_OK && i < noptions; i++) {
    if (!rt_cu_is_name_expression_option(options[i])) continue;
    const char *expr = options[i] + sizeof RT_CU_NAME_EXPRESSION_OPTION - 1;
    const char *low = NULL;
    int r = nv.lowered(prog, expr, &low);
    if (r != 0 || !low) {
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: NVRTC has no lowered name for name expression "
                                                    "'%.200s': %s", expr, r ? nv.error(r) : "(none)");
      break;
    }
    char *line = ctx_alloc(ctx, strlen(low) + strlen(expr) + 2);
    if (!line) {
      st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
      break;
    }
    sprintf(line, "%s %s", low, expr);
    bool ok = append_comment_lines(ctx, &b, &n, &cap, "loom-name-expression", line);
    ctx_free(ctx, line);
    if (!ok) st = diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  }
  if (st == LOOM_OK &&
      (nv.ptx_size(prog, &pn) != 0 || !pn || !(code = ctx_alloc(ctx, n + pn + 1)) || nv.ptx(prog, code + n) != 0))
    st = diag_error(d, LOOM_ERR_BACKEND, "RawModule: NVRTC gave no PTX");
  if (st == LOOM_OK) {
    if (n) memcpy(code, b, n);
    code[n + pn] = 0;
    *ptx = code;
    code = NULL;
  }
  ctx_free(ctx, code);
  ctx_free(ctx, b);
  ctx_free(ctx, log);
  return st;
}

LoomStatus rt_cu_nvrtc_compile(LoomContext *ctx, const char *src, size_t n, int sm, const char *const *options,
                               int32_t noptions, bool (*is_arch)(const char *), char **ptx, Diag *d) {
  *ptx = NULL;
  if (!rt_cu_nvrtc_available())
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: CUDA C++ source needs NVRTC (libnvrtc.so of a CUDA toolkit; "
                                               "set CUDA_HOME) or clang-19 on PATH, or give the kernel as PTX or LLVM IR");
  char *text = ctx_alloc(ctx, n + 1); /* NVRTC reads a NUL-terminated string */
  const char **argv = ctx_calloc(ctx, (size_t)noptions + 4, sizeof *argv);
  if (!text || !argv) {
    ctx_free(ctx, text);
    ctx_free(ctx, argv);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "RawModule: out of memory");
  }
  memcpy(text, src, n);
  text[n] = 0;
  char arch[64], inc[1100];
  snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d", sm);
  int a = 0;
  argv[a++] = arch;
  if (cuda_include(inc, sizeof inc)) argv[a++] = inc;
  int32_t nexpr = 0;
  for (int32_t i = 0; i < noptions; i++) {
    if (rt_cu_is_name_expression_option(options[i])) nexpr++;
    else if (options[i] && !is_arch(options[i])) argv[a++] = options[i];
  }
  void *prog = NULL;
  LoomStatus st = LOOM_OK;
  if (nexpr && (!nv.add_name || !nv.lowered))
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "RawModule: this libnvrtc has no nvrtcAddNameExpression: name_expressions "
                                             "need NVRTC of CUDA 10 or newer");
  int r = st == LOOM_OK ? nv.create(&prog, text, "kernel.cu", 0, NULL, NULL) : 0;
  for (int32_t i = 0; st == LOOM_OK && r == 0 && i < noptions; i++) {
    if (!rt_cu_is_name_expression_option(options[i])) continue;
    const char *expr = options[i] + sizeof RT_CU_NAME_EXPRESSION_OPTION - 1;
    if (!*expr || strchr(expr, '\n'))
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: name expression '%.200s' is empty or spans lines",
                      expr);
    else if ((r = nv.add_name(prog, expr)) != 0)
      st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: nvrtcAddNameExpression('%.200s') failed: %s", expr,
                      nv.error(r));
  }
  if (st != LOOM_OK) {
    /* reported above */
  } else if (r != 0) {
    st = diag_error(d, LOOM_ERR_BACKEND, "RawModule: nvrtcCreateProgram failed: %s", nv.error(r));
  } else if ((r = nv.compile(prog, a, argv)) != 0) {
    size_t ln = 0;
    char *log = nv.log_size(prog, &ln) == 0 && ln ? ctx_alloc(ctx, ln + 1) : NULL;
    if (log && nv.log(prog, log) != 0) log[0] = 0;
    if (log) log[ln] = 0;
    st = diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "RawModule: NVRTC could not compile the CUDA C++ source (%s):\n%.900s",
                    nv.error(r), log && *log ? log : "(no message)");
    ctx_free(ctx, log);
  } else {
    st = nvrtc_result(ctx, prog, options, noptions, ptx, d);
  }
  if (prog) nv.destroy(&prog);
  ctx_free(ctx, text);
  ctx_free(ctx, argv);
  return st;
}
