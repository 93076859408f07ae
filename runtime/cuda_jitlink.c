/* cuda_jitlink.c: PTX -> cubin through the CUDA toolkit's nvJitLink library (libnvJitLink.so.N),
 * loaded at run time with dlopen like the driver, as the faster alternative to the driver's cuLink.
 *
 * Both run NVIDIA's ptxas; nvJitLink runs it in the calling process without the driver's JIT
 * front end (bench/results/2026-11-30-jit-levels.md has the H200 figures). It is optional: machines
 * without the toolkit (or with an nvJitLink newer than the driver, whose cubins that driver may not
 * load) use cuLink. The library is looked up as libnvJitLink.so.<driver's major version>, then
 * .so.13 and .so.12, on the loader's path and under $CUDA_HOME, $CUDA_PATH and /usr/local/cuda
 * (lib64/). LOOM_CUDA_LINKER=driver turns it off.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda.h"

typedef void *NvJitLinkHandle;
typedef int (*JlCreate)(NvJitLinkHandle *, uint32_t, const char **);
typedef int (*JlDestroy)(NvJitLinkHandle *);
typedef int (*JlAddData)(NvJitLinkHandle, int, const void *, size_t, const char *);
typedef int (*JlComplete)(NvJitLinkHandle);
typedef int (*JlGetSize)(NvJitLinkHandle, size_t *);
typedef int (*JlGetBytes)(NvJitLinkHandle, void *);
typedef int (*JlGetLog)(NvJitLinkHandle, char *);
typedef int (*JlVersion)(unsigned *, unsigned *);
enum { NVJITLINK_INPUT_PTX = 1 };

struct RtJitLink {
  LoomContext *ctx;
  void *lib;
  JlCreate create;
  JlDestroy destroy;
  JlAddData add_data;
  JlComplete complete;
  JlGetSize cubin_size, error_log_size;
  JlGetBytes cubin;
  JlGetLog error_log;
  unsigned major, minor;
};

static void *open_lib(int major, char *path, size_t cap) {
  const char *roots[3] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  int majors[3] = {major, 13, 12};
  for (int m = 0; m < 3; m++) {
    if (m > 0 && majors[m] == major) continue;
    snprintf(path, cap, "libnvJitLink.so.%d", majors[m]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    for (int r = 0; !lib && r < 3; r++) {
      if (!roots[r] || !*roots[r]) continue;
      snprintf(path, cap, "%s/lib64/libnvJitLink.so.%d", roots[r], majors[m]);
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (lib) return lib;
  }
  return NULL;
}

LoomStatus rt_jitlink_open(LoomContext *ctx, int driver_version, RtJitLink **out, Diag *d) {
  *out = NULL;
  const char *want = getenv("LOOM_CUDA_LINKER");
  if (want && !strcmp(want, "driver")) return diag_error(d, LOOM_ERR_UNSUPPORTED, "nvJitLink: off (LOOM_CUDA_LINKER=driver)");
  char path[1100];
  void *lib = open_lib(driver_version / 1000, path, sizeof path);
  if (!lib)
    return diag_error(d, LOOM_ERR_UNSUPPORTED, "nvJitLink: libnvJitLink.so.%d/13/12 not found (the CUDA toolkit's; "
                                               "set CUDA_HOME) ", driver_version / 1000);
  RtJitLink *j = ctx_calloc(ctx, 1, sizeof *j);
  if (!j) {
    dlclose(lib);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory: nvJitLink state");
  }
  j->ctx = ctx;
  j->lib = lib;
  *(void **)&j->create = dlsym(lib, "nvJitLinkCreate");
  *(void **)&j->destroy = dlsym(lib, "nvJitLinkDestroy");
  *(void **)&j->add_data = dlsym(lib, "nvJitLinkAddData");
  *(void **)&j->complete = dlsym(lib, "nvJitLinkComplete");
  *(void **)&j->cubin_size = dlsym(lib, "nvJitLinkGetLinkedCubinSize");
  *(void **)&j->cubin = dlsym(lib, "nvJitLinkGetLinkedCubin");
  *(void **)&j->error_log_size = dlsym(lib, "nvJitLinkGetErrorLogSize");
  *(void **)&j->error_log = dlsym(lib, "nvJitLinkGetErrorLog");
  JlVersion version = NULL;
  *(void **)&version = dlsym(lib, "nvJitLinkVersion");
  LoomStatus st = LOOM_OK;
  if (!j->create || !j->destroy || !j->add_data || !j->complete || !j->cubin_size || !j->cubin || !j->error_log_size ||
      !j->error_log || !version || version(&j->major, &j->minor) != 0)
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "nvJitLink: %s lacks the expected entry points", path);
  else if ((int)(j->major * 1000 + j->minor * 10) > driver_version)
    st = diag_error(d, LOOM_ERR_UNSUPPORTED, "nvJitLink %u.%u is newer than the driver (CUDA %d.%d): its cubins may not load",
                    j->major, j->minor, driver_version / 1000, driver_version % 1000 / 10);
  if (st != LOOM_OK) {
    rt_jitlink_close(j);
    return st;
  }
  *out = j;
  return LOOM_OK;
}

void rt_jitlink_close(RtJitLink *j) {
  if (!j) return;
  if (j->lib) dlclose(j->lib);
  ctx_free(j->ctx, j);
}

LoomStatus rt_jitlink_ptx(RtJitLink *j, int sm, const char *ptx, const char *name, int opt_level, void **cubin,
                          size_t *cubin_size, Diag *d) {
  *cubin = NULL;
  *cubin_size = 0;
  if (!j || !ptx) return diag_error(d, LOOM_ERR_INVALID_ARGUMENT, "rt_jitlink_ptx: NULL argument");
  char arch[32], level[32];
  snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
  snprintf(level, sizeof level, "-Xptxas=-O%d", opt_level >= 0 && opt_level <= 4 ? opt_level : 3);
  const char *opts[2] = {arch, level};
  NvJitLinkHandle h = NULL;
  int r = j->create(&h, opt_level >= 0 ? 2 : 1, opts);
  if (r == 0) r = j->add_data(h, NVJITLINK_INPUT_PTX, ptx, strlen(ptx) + 1, name ? name : "loom.ptx");
  if (r == 0) r = j->complete(h);
  size_t n = 0;
  if (r == 0) r = j->cubin_size(h, &n);
  void *bin = r == 0 && n ? ctx_alloc(j->ctx, n) : NULL;
  if (r == 0 && n && !bin) {
    if (h) j->destroy(&h);
    return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of host memory for a %zu-byte cubin", n);
  }
  if (r == 0 && bin) r = j->cubin(h, bin);
  if (r != 0 || !bin) {
    char log[1024] = "";
    size_t ln = 0;
    if (h && j->error_log_size(h, &ln) == 0 && ln > 0 && ln < sizeof log) j->error_log(h, log);
    if (h) j->destroy(&h);
    ctx_free(j->ctx, bin);
    return diag_error(d, LOOM_ERR_BACKEND, "nvJitLink failed on %s for sm_%d (error %d): %s", name ? name : "PTX", sm, r,
                      log[0] ? log : "(no log)");
  }
  j->destroy(&h);
  *cubin = bin;
  *cubin_size = n;
  return LOOM_OK;
}
