/* SPDX-License-Identifier: Apache-2.0 */
/* bench_jit.c: what the CUDA driver's JIT costs for given PTX files, on the machine's GPU 0.
 * For each file and round it times, interleaved so that drift hits every method alike:
 *   link L : cuLinkCreate(level L) + cuLinkAddData(PTX) + cuLinkComplete, then cuModuleLoadData of
 *            the cubin and cuModuleGetFunction of the first entry (Loom's path), and the four
 *            phases of link1 separately;
 *   load L : cuModuleLoadDataEx(PTX, level L) + cuModuleGetFunction (the driver JITs, no cubin back);
 *   ...split: with CU_JIT_SPLIT_COMPILE 0 (the JIT's optimizations on every CPU).
 * With BENCH_JIT_BW=L it also runs each file's first entry, JIT-compiled at level L (0..4), as a Loom
 * elementwise kernel of two float32
 * inputs and one output (parameter block: n at 0, pointers at 8, 16, 24) on 2^26 points and reports
 * GB/s (12 bytes a point). Run it with CUDA_CACHE_DISABLE=1 so the driver's own JIT cache cannot
 * answer. Standalone (the driver is dlopen'ed; no Loom code):
 *   cc -O2 -o bench_jit bench/bench_jit.c -ldl && CUDA_CACHE_DISABLE=1 ./bench_jit a.ptx b.ptx ... */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUlinkState, *CUstream, *CUevent;
typedef int CUdevice;
enum { JIT_OPT_LEVEL = 7, JIT_ERR_BUF = 5, JIT_ERR_BUF_SIZE = 6, JIT_SPLIT_COMPILE = 34, JIT_INPUT_PTX = 1 };

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuLinkCreate)(unsigned, int *, void **, CUlinkState *);
static CUresult (*cuLinkAddData)(CUlinkState, int, void *, size_t, const char *, unsigned, int *, void **);
static CUresult (*cuLinkComplete)(CUlinkState, void **, size_t *);
static CUresult (*cuLinkDestroy)(CUlinkState);
static CUresult (*cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
static CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*cuModuleUnload)(CUmodule);
static CUresult (*cuMemAlloc)(uint64_t *, size_t);
static CUresult (*cuMemsetD32)(uint64_t, unsigned, size_t);
static CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
static CUresult (*cuEventCreate)(CUevent *, unsigned);
static CUresult (*cuEventRecord)(CUevent, CUstream);
static CUresult (*cuEventSynchronize)(CUevent);
static CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
static CUresult (*cuCtxSynchronize)(void);

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static void check(CUresult r, const char *what, const char *file) {
  if (r) {
    fprintf(stderr, "%s failed (%d) on %s\n", what, r, file);
    exit(1);
  }
}
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) exit(1);
  b[n] = 0;
  fclose(f);
  return b;
}
static void entry_name(const char *ptx, char *out, size_t cap) {
  const char *e = strstr(ptx, ".entry ");
  out[0] = 0;
  if (!e) return;
  e += 7;
  size_t i = 0;
  while (e[i] && e[i] != '(' && e[i] != ' ' && e[i] != '\n' && i + 1 < cap) {
    out[i] = e[i];
    i++;
  }
  out[i] = 0;
}

/* Phases of the last link: create, add, complete, load (ms). */
static double phase[4];
/* one JIT of ptx by method m (0 link, 1 load) at level, with option extra = value when extra >= 0;
 * returns ms; *fn gets the entry (module kept in *mod) */
static double jit_once(const char *ptx, const char *name, const char *file, int m, int level, int extra, int value,
                       CUmodule *mod, CUfunction *fn) {
  static char log[8192];
  int opts[4] = {JIT_ERR_BUF, JIT_ERR_BUF_SIZE, JIT_OPT_LEVEL, extra};
  void *vals[4] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)level, (void *)(uintptr_t)value};
  unsigned nopt = extra >= 0 ? 4 : 3;
  double t0 = now_ms();
  if (m == 0) {
    CUlinkState ls;
    check(cuLinkCreate(nopt, opts, vals, &ls), "cuLinkCreate", file);
    double t1 = now_ms();
    CUresult r = cuLinkAddData(ls, JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, file, 0, NULL, NULL);
    double t2 = now_ms();
    void *bin = NULL;
    size_t sz = 0;
    if (!r) r = cuLinkComplete(ls, &bin, &sz);
    double t3 = now_ms();
    if (r) fprintf(stderr, "%s\n", log);
    check(r, "cuLink", file);
    check(cuModuleLoadData(mod, bin), "cuModuleLoadData", file);
    cuLinkDestroy(ls);
    phase[0] = t1 - t0;
    phase[1] = t2 - t1;
    phase[2] = t3 - t2;
    phase[3] = now_ms() - t3;
  } else {
    CUresult r = cuModuleLoadDataEx(mod, ptx, nopt, opts, vals);
    if (r) fprintf(stderr, "%s\n", log);
    check(r, "cuModuleLoadDataEx", file);
  }
  check(cuModuleGetFunction(fn, *mod, name), "cuModuleGetFunction", file);
  return now_ms() - t0;
}

#define LOAD(sym, name)                                                   \
  do {                                                                    \
    *(void **)&sym = dlsym(lib, name);                                    \
    if (!sym) {                                                           \
      fprintf(stderr, "no %s in libcuda\n", name);                        \
      return 1;                                                           \
    }                                                                     \
  } while (0)

int main(int argc, char **argv) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "no CUDA driver: %s\n", dlerror());
    return 1;
  }
  LOAD(cuInit, "cuInit");
  LOAD(cuDeviceGet, "cuDeviceGet");
  LOAD(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  LOAD(cuCtxSetCurrent, "cuCtxSetCurrent");
  LOAD(cuLinkCreate, "cuLinkCreate_v2");
  LOAD(cuLinkAddData, "cuLinkAddData_v2");
  LOAD(cuLinkComplete, "cuLinkComplete");
  LOAD(cuLinkDestroy, "cuLinkDestroy");
  LOAD(cuModuleLoadData, "cuModuleLoadData");
  LOAD(cuModuleLoadDataEx, "cuModuleLoadDataEx");
  LOAD(cuModuleGetFunction, "cuModuleGetFunction");
  LOAD(cuModuleUnload, "cuModuleUnload");
  LOAD(cuMemAlloc, "cuMemAlloc_v2");
  LOAD(cuMemsetD32, "cuMemsetD32_v2");
  LOAD(cuLaunchKernel, "cuLaunchKernel");
  LOAD(cuEventCreate, "cuEventCreate");
  LOAD(cuEventRecord, "cuEventRecord");
  LOAD(cuEventSynchronize, "cuEventSynchronize");
  LOAD(cuEventElapsedTime, "cuEventElapsedTime_v2");
  LOAD(cuCtxSynchronize, "cuCtxSynchronize");
  CUdevice dev;
  CUcontext ctx;
  check(cuInit(0), "cuInit", "-");
  check(cuDeviceGet(&dev, 0), "cuDeviceGet", "-");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain", "-");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent", "-");
  if (getenv("BENCH_JIT_CHECK")) { /* a check kernel check(u64 *counters) over a grid-stride range:
                                     * [0] mismatches, [1] the last input, [2] NaN disagreements, then
                                     * [3], [4] (two 32-bit inputs), [5] for a second operation */
    const char *file = getenv("BENCH_JIT_CHECK");
    char *src = read_file(file);
    CUmodule m;
    CUfunction f;
    jit_once(src, "check", file, 0, 4, -1, 0, &m, &f);
    uint64_t cnt = 0, host[6] = {0, 0, 0, 0, 0, 0};
    check(cuMemAlloc(&cnt, sizeof host), "cuMemAlloc", file);
    check(cuMemsetD32(cnt, 0, 12), "cuMemsetD32", file);
    void *args[1] = {&cnt};
    double t0 = now_ms();
    check(cuLaunchKernel(f, 132 * 32, 1, 1, 256, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel", file);
    check(cuCtxSynchronize(), "cuCtxSynchronize", file);
    CUresult (*dtoh)(void *, uint64_t, size_t);
    *(void **)&dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    check(dtoh(host, cnt, sizeof host), "cuMemcpyDtoH", file);
    printf("check %s (%.1f ms): op 1: %llu mismatches (last input %#010x), %llu NaN disagreements; op 2: %llu "
           "mismatches (last inputs %#010x %#010x), %llu NaN disagreements\n", file, now_ms() - t0,
           (unsigned long long)host[0], (unsigned)host[1], (unsigned long long)host[2], (unsigned long long)host[3],
           (unsigned)host[4], (unsigned)(host[4] >> 32), (unsigned long long)host[5]);
    return host[0] || host[2] || host[3] || host[5] ? 2 : 0;
  }
  int rounds = getenv("BENCH_JIT_ROUNDS") ? atoi(getenv("BENCH_JIT_ROUNDS")) : 7;
  if (rounds < 1 || rounds > 64) rounds = 7;
  int bw = getenv("BENCH_JIT_BW") != NULL, bw_level = bw ? atoi(getenv("BENCH_JIT_BW")) : 1;
  enum { NM = 5 };
  static const int method[NM] = {0, 1, 0, 0, 0}, level[NM] = {1, 1, 0, 1, 0};
  static const int extra[NM] = {-1, -1, -1, JIT_SPLIT_COMPILE, JIT_SPLIT_COMPILE}, value[NM] = {0, 0, 0, 0, 0};
  static const char *label[NM] = {"link1", "load1", "link0", "link1split", "link0split"};
  int nf = argc - 1;
  char **ptx = calloc((size_t)nf + 1, sizeof *ptx);
  double *t = calloc((size_t)nf * NM * rounds + 1, sizeof *t);
  double *ph = calloc((size_t)nf * 4 * rounds + 1, sizeof *ph); /* link1's phases */
  char name[256];
  { /* warm the driver's JIT once (first use loads the compiler) */
    CUmodule m;
    CUfunction f;
    if (nf > 0) {
      ptx[0] = read_file(argv[1]);
      entry_name(ptx[0], name, sizeof name);
      jit_once(ptx[0], name, argv[1], 0, 1, -1, 0, &m, &f);
      cuModuleUnload(m);
    }
  }
  for (int i = 0; i < nf; i++)
    if (!ptx[i]) ptx[i] = read_file(argv[i + 1]);
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < nf; i++) {
      entry_name(ptx[i], name, sizeof name);
      for (int k = 0; k < NM; k++) {
        int mm = (k + r) % NM; /* rotate the order */
        CUmodule m;
        CUfunction f;
        t[((size_t)i * NM + mm) * rounds + r] =
            jit_once(ptx[i], name, argv[i + 1], method[mm], level[mm], extra[mm], value[mm], &m, &f);
        if (mm == 0)
          for (int p = 0; p < 4; p++) ph[((size_t)i * 4 + p) * rounds + r] = phase[p];
        cuModuleUnload(m);
      }
    }
  printf("# bench_jit: median ms of %d rounds (CUDA_CACHE_DISABLE=%s)\n# file", rounds,
         getenv("CUDA_CACHE_DISABLE") ? getenv("CUDA_CACHE_DISABLE") : "unset");
  for (int k = 0; k < NM; k++) printf(" %s", label[k]);
  printf(" | link1: create add complete load%s\n", bw ? " | GBps" : "");
  uint64_t x = 0, y = 0, o = 0;
  const size_t n = (size_t)1 << 26;
  if (bw) {
    check(cuMemAlloc(&x, n * 4), "cuMemAlloc", "-");
    check(cuMemAlloc(&y, n * 4), "cuMemAlloc", "-");
    check(cuMemAlloc(&o, n * 4), "cuMemAlloc", "-");
    cuMemsetD32(x, 0x3f800000u, n);
    cuMemsetD32(y, 0x40000000u, n);
  }
  for (int i = 0; i < nf; i++) {
    const char *base = strrchr(argv[i + 1], '/');
    printf("%s", base ? base + 1 : argv[i + 1]);
    for (int k = 0; k < NM; k++) {
      double *v = &t[((size_t)i * NM + k) * rounds];
      qsort(v, (size_t)rounds, sizeof *v, cmpd);
      printf(" %.2f", rounds % 2 ? v[rounds / 2] : (v[rounds / 2 - 1] + v[rounds / 2]) / 2);
    }
    printf(" |");
    for (int p = 0; p < 4; p++) {
      double *v = &ph[((size_t)i * 4 + p) * rounds];
      qsort(v, (size_t)rounds, sizeof *v, cmpd);
      printf(" %.2f", rounds % 2 ? v[rounds / 2] : (v[rounds / 2 - 1] + v[rounds / 2]) / 2);
    }
    if (bw) {
      CUmodule m;
      CUfunction f;
      entry_name(ptx[i], name, sizeof name);
      jit_once(ptx[i], name, argv[i + 1], 0, bw_level, -1, 0, &m, &f);
      unsigned char params[256];
      memset(params, 0, sizeof params);
      uint32_t nn = (uint32_t)n;
      memcpy(params, &nn, 4);
      memcpy(params + 8, &x, 8);
      memcpy(params + 16, &y, 8);
      memcpy(params + 24, &o, 8);
      void *args[1] = {params};
      CUevent e0, e1;
      cuEventCreate(&e0, 0);
      cuEventCreate(&e1, 0);
      double ms[20];
      for (int r = 0; r < 23; r++) {
        cuEventRecord(e0, NULL);
        check(cuLaunchKernel(f, 132 * 8, 1, 1, 256, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel", argv[i + 1]);
        cuEventRecord(e1, NULL);
        cuEventSynchronize(e1);
        float v = 0;
        cuEventElapsedTime(&v, e0, e1);
        if (r >= 3) ms[r - 3] = v;
      }
      qsort(ms, 20, sizeof ms[0], cmpd);
      printf(" | %.0f", 12.0 * n / ((ms[9] + ms[10]) / 2) / 1e6);
      cuModuleUnload(m);
    }
    printf("\n");
    fflush(stdout);
  }
  return 0;
}
