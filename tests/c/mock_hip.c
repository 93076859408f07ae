/* mock_hip.c: a stand-in for libamdhip64 (built as libmock_hip.so) that lets test_hip_mock drive the AMD
 * device's runtime code (runtime/hip/) on a machine without an AMD GPU. It is a test double, not an
 * emulator: "device" memory is host memory (so copies are real), streams and events are counters, a
 * module is an AMDGPU code object checked like the real loader would (ELF, EM_AMDGPU) whose kernels are
 * found by name in its symbol table, and a launch runs nothing: it is recorded (kernel, grid, block, the
 * bytes of the first argument) for the test to inspect through mock_hip_launches(). The device is an
 * MI300X (gfx942, 304 CUs) unless MOCK_HIP_ARCH says otherwise; MOCK_HIP_DEVICES sets the count.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int hipError_t;
enum { OK = 0, E_INVALID_VALUE = 1, E_OOM = 2, E_INVALID_IMAGE = 200, E_NOT_FOUND = 500, E_INVALID_DEVICE = 101 };

typedef struct MockLaunch {
  char name[128];
  unsigned grid[3], block[3];
  unsigned char arg0[512]; /* the first explicit argument's bytes (Loom's parameter block) */
  void *stream;
} MockLaunch;

#define MAX_LAUNCHES 4096
static MockLaunch launches[MAX_LAUNCHES];
static int nlaunch, current;

typedef struct Function {
  char name[128];
  struct Function *next;
} Function;
typedef struct Module {
  unsigned char *image;
  size_t size;
  Function *fns; /* looked up so far (freed with the module) */
} Module;

API int mock_hip_launch_count(void) { return nlaunch; }
API const MockLaunch *mock_hip_launches(void) { return launches; }
API void mock_hip_reset(void) { nlaunch = 0; }

static int ndevices(void) {
  const char *e = getenv("MOCK_HIP_DEVICES");
  return e ? atoi(e) : 1;
}

API hipError_t hipInit(unsigned flags) {
  (void)flags;
  return ndevices() > 0 ? OK : E_INVALID_DEVICE;
}
API hipError_t hipRuntimeGetVersion(int *v) { return *v = 60300000, OK; }
API const char *hipGetErrorName(hipError_t e) { return e == OK ? "hipSuccess" : "hipErrorMock"; }
API const char *hipGetErrorString(hipError_t e) { return e == OK ? "no error" : "mock error"; }
API hipError_t hipGetDeviceCount(int *n) { return *n = ndevices(), OK; }
API hipError_t hipSetDevice(int d) { return d >= 0 && d < ndevices() ? (current = d, OK) : E_INVALID_DEVICE; }
API hipError_t hipDeviceGetName(char *buf, int len, int d) {
  (void)d;
  snprintf(buf, (size_t)len, "Mock AMD Instinct MI300X");
  return OK;
}
API hipError_t hipDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 19: *v = 4 << 20; break;    /* L2 */
  case 56: *v = 1024; break;       /* max threads per block */
  case 57: *v = 2048; break;       /* max threads per CU */
  case 63: *v = 304; break;        /* CUs */
  case 74: *v = 65536; break;      /* LDS per block */
  default: return E_INVALID_VALUE;
  }
  return OK;
}
/* the HIP 6 properties record: its gcnArchName somewhere inside, as Loom finds it */
API hipError_t hipGetDevicePropertiesR0600(void *rec, int d) {
  (void)d;
  const char *arch = getenv("MOCK_HIP_ARCH");
  snprintf(rec, 256, "Mock AMD Instinct MI300X");
  snprintf((char *)rec + 1160, 256, "%s", arch && *arch ? arch : "gfx942:sramecc+:xnack-");
  return OK;
}
API hipError_t hipDeviceSynchronize(void) { return OK; }
API hipError_t hipMemGetInfo(size_t *f, size_t *t) { return *f = (size_t)190 << 30, *t = (size_t)192 << 30, OK; }
API hipError_t hipMalloc(void **p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? OK : E_OOM;
}
API hipError_t hipFree(void *p) { return free(p), OK; }
API hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind) {
  (void)kind;
  memmove(dst, src, n);
  return OK;
}
API hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *s) {
  (void)s;
  return hipMemcpy(dst, src, n, kind);
}
API hipError_t hipMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n) {
  (void)dd, (void)sd;
  memmove(dst, src, n);
  return OK;
}
API hipError_t hipMemset(void *p, int v, size_t n) { return memset(p, v, n), OK; }
API hipError_t hipMemsetAsync(void *p, int v, size_t n, void *s) { return (void)s, memset(p, v, n), OK; }
API hipError_t hipStreamCreateWithFlags(void **s, unsigned f) {
  (void)f;
  *s = malloc(16);
  return OK;
}
API hipError_t hipStreamDestroy(void *s) { return free(s), OK; }
API hipError_t hipStreamSynchronize(void *s) { return (void)s, OK; }
API hipError_t hipEventCreate(void **e) { return *e = malloc(16), OK; }
API hipError_t hipEventDestroy(void *e) { return free(e), OK; }
API hipError_t hipEventRecord(void *e, void *s) { return (void)e, (void)s, OK; }
API hipError_t hipEventSynchronize(void *e) { return (void)e, OK; }
API hipError_t hipEventElapsedTime(float *ms, void *a, void *b) { return (void)a, (void)b, *ms = 0.125f, OK; }

/* a code object: an ELF64 of machine EM_AMDGPU (224); its copy is kept (HIP copies it too) */
API hipError_t hipModuleLoadData(void **out, const void *image) {
  const Elf64_Ehdr *eh = image;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_machine != 224) return E_INVALID_IMAGE;
  size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
  Module *m = calloc(1, sizeof *m);
  m->image = malloc(size);
  memcpy(m->image, image, size);
  m->size = size;
  *out = m;
  return OK;
}
API hipError_t hipModuleUnload(void *p) {
  Module *m = p;
  for (Function *f = m->fns, *next; f; f = next) {
    next = f->next;
    free(f);
  }
  free(m->image);
  free(m);
  return OK;
}
/* a FUNC symbol of that name and its "<name>.kd" descriptor in the symbol table */
API hipError_t hipModuleGetFunction(void **out, void *mod, const char *name) {
  Module *m = mod;
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->image;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(m->image + eh->e_shoff);
  char kd[160];
  snprintf(kd, sizeof kd, "%s.kd", name);
  int found = 0;
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const char *strs = (const char *)m->image + sh[sh[i].sh_link].sh_offset;
    const Elf64_Sym *sym = (const Elf64_Sym *)(m->image + sh[i].sh_offset);
    for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++) {
      if (!strcmp(strs + sym[j].st_name, name) && ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC) found |= 1;
      if (!strcmp(strs + sym[j].st_name, kd) && ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT) found |= 2;
    }
  }
  if (found != 3) return E_NOT_FOUND;
  Function *f = calloc(1, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->next = m->fns;
  m->fns = f;
  *out = f;
  return OK;
}
API hipError_t hipFuncGetAttribute(int *v, int attr, void *f) {
  (void)f;
  switch (attr) {
  case 0: *v = 1024; return OK; /* max threads per block */
  case 1: *v = 512; return OK;  /* static LDS */
  case 3: *v = 0; return OK;    /* scratch */
  case 4: *v = 32; return OK;   /* VGPRs */
  default: return E_INVALID_VALUE;
  }
}
API hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shm) {
  (void)f, (void)shm;
  *n = block > 0 ? 2048 / block : 0;
  return OK;
}
API hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shm, void *stream, void **params, void **extra) {
  (void)shm, (void)extra;
  if (!f || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024) return E_INVALID_VALUE;
  if (nlaunch >= MAX_LAUNCHES) return OK;
  MockLaunch *l = &launches[nlaunch++];
  snprintf(l->name, sizeof l->name, "%s", ((Function *)f)->name);
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz, l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
  l->stream = stream;
  if (params && params[0]) memcpy(l->arg0, params[0], sizeof l->arg0);
  return OK;
}
