/* mock_hip.c: a stand-in for libamdhip64 (built as libmock_hip.so) that lets test_hip_mock drive the AMD
 * device's runtime code (runtime/hip/) on a machine without an AMD GPU. It is a test double, not an
 * emulator: "device" memory is host memory (so copies are real), streams and events are small records, a
 * module is an AMDGPU code object checked like the real loader would (ELF, EM_AMDGPU) whose kernels are
 * found by name in its symbol table, and a launch runs nothing: it is recorded (kernel, grid, block, the
 * bytes of the first argument) for the test to inspect through mock_hip_launches(). The device is an
 * MI300X (gfx942, 304 CUs) unless MOCK_HIP_ARCH says otherwise; MOCK_HIP_DEVICES sets the count.
 *
 * Like tests/c/gpu_mock.h for the shared layer, it checks the driver contract as it goes, in HIP's terms:
 * the current device is per thread (hipSetDevice), every object (allocation, stream, event, module and
 * its functions) remembers the device current when it was made, and a call that uses an object while
 * another device is current counts in mock_hip_stats' not_current (a launch with a function of device 1
 * on device 0 fails on real HIP). Destroying calls are not checked: HIP destroys an object of any device,
 * and the layer calls them even after making the device current failed, so that nothing is left
 * behind. It counts the live objects, so a test sees that everything came back,
 * and mock_hip_fail_at(n) makes the n-th fallible call from then on fail with hipErrorMock (the calls
 * that destroy never fail: Loom's driver ignores their status, as it must).
 * Events time nothing (hipEventElapsedTime says 0.125 ms) unless a mock library loaded with RTLD_GLOBAL
 * exports double mock_hipblaslt_clock_ms(void), the virtual time its calls have taken: then an event
 * records that clock, and the elapsed time is the difference (test_hip_libs times hipBLASLt's candidate
 * algorithms with it).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <elf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

typedef int hipError_t;
enum { OK = 0, E_INVALID_VALUE = 1, E_OOM = 2, E_INVALID_IMAGE = 200, E_NOT_FOUND = 500, E_INVALID_DEVICE = 101,
       E_MOCK = 999 };

#define MOCK_HIP_LIBRARY 1
#include "tests/c/mock_hip.h" /* MockLaunch, MockHipStats */

#define MAX_LAUNCHES 4096
static MockLaunch launches[MAX_LAUNCHES];
static int nlaunch;
static __thread int current; /* HIP's current device is the calling thread's (0 at first) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static MockHipStats stats;
static long fail_at; /* the fail_at-th fallible call from mock_hip_fail_at fails (0: none) */

typedef struct Function {
  char name[128];
  int device;
  struct Function *next;
} Function;
typedef struct Module {
  unsigned char *image;
  size_t size;
  int device;
  Function *fns; /* looked up so far (freed with the module) */
} Module;
typedef struct Obj { /* a stream or an event */
  int device;
  double stamp; /* an event: the virtual clock when it was recorded */
} Obj;

/* The virtual clock of a mock library, if one exports it (NULL: none). */
static double (*virtual_clock(void))(void) {
  static double (*fn)(void);
  static bool looked;
  if (!looked) {
    fn = (double (*)(void))dlsym(RTLD_DEFAULT, "mock_hipblaslt_clock_ms");
    looked = true;
  }
  return fn;
}

/* allocations: address -> device (a small open list; tests allocate few at once) */
#define MAX_ALLOCS 4096
static void *alloc_ptr[MAX_ALLOCS];
static size_t alloc_size[MAX_ALLOCS];
static int alloc_dev[MAX_ALLOCS];

API int mock_hip_launch_count(void) { return nlaunch; }
API const MockLaunch *mock_hip_launches(void) { return launches; }
API void mock_hip_reset(void) { nlaunch = 0; }
API void mock_hip_stats(MockHipStats *out) {
  pthread_mutex_lock(&lock);
  *out = stats;
  pthread_mutex_unlock(&lock);
}
API void mock_hip_fail_at(long n) {
  pthread_mutex_lock(&lock);
  fail_at = n;
  stats.calls = 0;
  stats.not_current = 0;
  pthread_mutex_unlock(&lock);
}

/* Every fallible call starts here: counts it and fails the fail_at-th. */
static hipError_t enter(void) {
  pthread_mutex_lock(&lock);
  bool fail = ++stats.calls == fail_at && fail_at > 0;
  stats.failed += fail;
  pthread_mutex_unlock(&lock);
  return fail ? E_MOCK : OK;
}
#define ENTER()                   \
  do {                            \
    hipError_t e_ = enter();      \
    if (e_ != OK) return e_;      \
  } while (0)

/* The object's device must be the current one. */
#define need(device) need_((device), __func__)
static void need_(int device, const char *call) {
  if (device == current) return;
  __atomic_add_fetch(&stats.not_current, 1, __ATOMIC_RELAXED);
  if (getenv("MOCK_HIP_VERBOSE"))
    fprintf(stderr, "mock_hip: %s with an object of device %d while device %d is current (call %ld)\n", call, device,
            current, stats.calls);
}

static int alloc_find(const void *p) { /* the allocation holding p, or -1 */
  for (int i = 0; i < MAX_ALLOCS; i++)
    if (alloc_ptr[i] && (const char *)p >= (char *)alloc_ptr[i] && (const char *)p < (char *)alloc_ptr[i] + alloc_size[i])
      return i;
  return -1;
}
/* A device pointer's device must be current (host pointers are left alone). */
static void need_ptr(const void *p) {
  pthread_mutex_lock(&lock);
  int i = alloc_find(p);
  pthread_mutex_unlock(&lock);
  if (i >= 0) need(alloc_dev[i]);
}

static int ndevices(void) {
  const char *e = getenv("MOCK_HIP_DEVICES");
  return e ? atoi(e) : 1;
}

API hipError_t hipInit(unsigned flags) {
  (void)flags;
  ENTER();
  return ndevices() > 0 ? OK : E_INVALID_DEVICE;
}
API hipError_t hipRuntimeGetVersion(int *v) { return *v = 60300000, OK; }
API const char *hipGetErrorName(hipError_t e) { return e == OK ? "hipSuccess" : e == E_MOCK ? "hipErrorMock" : "hipErrorOther"; }
API const char *hipGetErrorString(hipError_t e) { return e == OK ? "no error" : e == E_MOCK ? "injected failure" : "mock error"; }
API hipError_t hipGetDeviceCount(int *n) {
  ENTER();
  return *n = ndevices(), OK;
}
API hipError_t hipSetDevice(int d) {
  ENTER();
  return d >= 0 && d < ndevices() ? (current = d, OK) : E_INVALID_DEVICE;
}
API hipError_t hipDeviceGetName(char *buf, int len, int d) {
  (void)d;
  ENTER();
  snprintf(buf, (size_t)len, "Mock AMD Instinct MI300X");
  return OK;
}
API hipError_t hipDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  ENTER();
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
  ENTER();
  const char *arch = getenv("MOCK_HIP_ARCH");
  snprintf(rec, 256, "Mock AMD Instinct MI300X");
  snprintf((char *)rec + 1160, 256, "%s", arch && *arch ? arch : "gfx942:sramecc+:xnack-");
  return OK;
}
API hipError_t hipDeviceSynchronize(void) {
  ENTER();
  return OK;
}
API hipError_t hipMemGetInfo(size_t *f, size_t *t) {
  ENTER();
  return *f = (size_t)190 << 30, *t = (size_t)192 << 30, OK;
}
API hipError_t hipMalloc(void **p, size_t n) {
  ENTER();
  size_t bytes = (n + 255) / 256 * 256;
  *p = aligned_alloc(256, bytes);
  if (!*p) return E_OOM;
  pthread_mutex_lock(&lock);
  int i = 0;
  while (i < MAX_ALLOCS && alloc_ptr[i]) i++;
  if (i < MAX_ALLOCS) {
    alloc_ptr[i] = *p;
    alloc_size[i] = bytes;
    alloc_dev[i] = current;
  }
  stats.live_allocs++;
  pthread_mutex_unlock(&lock);
  return OK;
}
API hipError_t hipFree(void *p) {
  if (!p) return OK;
  pthread_mutex_lock(&lock);
  int i = alloc_find(p);
  if (i >= 0) alloc_ptr[i] = NULL;
  stats.live_allocs--;
  pthread_mutex_unlock(&lock);
  free(p);
  return OK;
}
API hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind) {
  (void)kind;
  ENTER();
  need_ptr(dst);
  need_ptr(src);
  memmove(dst, src, n);
  return OK;
}
API hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *s) {
  if (s) need(((Obj *)s)->device);
  return hipMemcpy(dst, src, n, kind);
}
API hipError_t hipMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n) {
  (void)dd, (void)sd;
  ENTER();
  memmove(dst, src, n);
  return OK;
}
API hipError_t hipMemset(void *p, int v, size_t n) {
  ENTER();
  need_ptr(p);
  return memset(p, v, n), OK;
}
API hipError_t hipMemsetAsync(void *p, int v, size_t n, void *s) {
  if (s) need(((Obj *)s)->device);
  return hipMemset(p, v, n);
}
static hipError_t obj_create(void **out, int *live) {
  ENTER();
  Obj *o = calloc(1, sizeof *o);
  o->device = current;
  *out = o;
  __atomic_add_fetch(live, 1, __ATOMIC_RELAXED);
  return OK;
}
static hipError_t obj_destroy(void *o, int *live) {
  if (!o) return E_INVALID_VALUE;
  __atomic_sub_fetch(live, 1, __ATOMIC_RELAXED);
  free(o);
  return OK;
}
API hipError_t hipStreamCreateWithFlags(void **s, unsigned f) {
  (void)f;
  return obj_create(s, &stats.live_streams);
}
API hipError_t hipStreamDestroy(void *s) { return obj_destroy(s, &stats.live_streams); }
API hipError_t hipStreamSynchronize(void *s) {
  ENTER();
  if (s) need(((Obj *)s)->device);
  return OK;
}
API hipError_t hipEventCreate(void **e) { return obj_create(e, &stats.live_events); }
API hipError_t hipEventDestroy(void *e) { return obj_destroy(e, &stats.live_events); }
API hipError_t hipEventRecord(void *e, void *s) {
  ENTER();
  need(((Obj *)e)->device);
  if (s) need(((Obj *)s)->device);
  double (*clock)(void) = virtual_clock();
  ((Obj *)e)->stamp = clock ? clock() : 0;
  return OK;
}
API hipError_t hipEventSynchronize(void *e) {
  ENTER();
  need(((Obj *)e)->device);
  return OK;
}
API hipError_t hipEventElapsedTime(float *ms, void *a, void *b) {
  ENTER();
  need(((Obj *)a)->device);
  need(((Obj *)b)->device);
  return *ms = virtual_clock() ? (float)(((Obj *)b)->stamp - ((Obj *)a)->stamp) : 0.125f, OK;
}

/* a code object: an ELF64 of machine EM_AMDGPU (224); its copy is kept (HIP copies it too) */
API hipError_t hipModuleLoadData(void **out, const void *image) {
  ENTER();
  Elf64_Ehdr eh; /* copied: HIP takes an image at any address (the disk cache's follow a header) */
  memcpy(&eh, image, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_machine != 224) return E_INVALID_IMAGE;
  size_t size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
  Module *m = calloc(1, sizeof *m);
  m->image = malloc(size);
  memcpy(m->image, image, size);
  m->size = size;
  m->device = current;
  *out = m;
  __atomic_add_fetch(&stats.live_modules, 1, __ATOMIC_RELAXED);
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
  __atomic_sub_fetch(&stats.live_modules, 1, __ATOMIC_RELAXED);
  return OK;
}
/* a FUNC symbol of that name and its "<name>.kd" descriptor in the symbol table */
API hipError_t hipModuleGetFunction(void **out, void *mod, const char *name) {
  ENTER();
  Module *m = mod;
  need(m->device);
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
  f->device = m->device;
  f->next = m->fns;
  m->fns = f;
  *out = f;
  return OK;
}
API hipError_t hipFuncGetAttribute(int *v, int attr, void *f) {
  ENTER();
  need(((Function *)f)->device);
  switch (attr) {
  case 0: *v = 1024; return OK; /* max threads per block */
  case 1: *v = 512; return OK;  /* static LDS */
  case 3: *v = 0; return OK;    /* scratch */
  case 4: *v = 32; return OK;   /* VGPRs */
  default: return E_INVALID_VALUE;
  }
}
API hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t shm) {
  (void)shm;
  ENTER();
  need(((Function *)f)->device);
  *n = block > 0 ? 2048 / block : 0;
  return OK;
}
API hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shm, void *stream, void **params, void **extra) {
  (void)shm, (void)extra;
  ENTER();
  if (!f || !gx || !gy || !gz || !bx || !by || !bz || bx * by * bz > 1024) return E_INVALID_VALUE;
  need(((Function *)f)->device);
  if (stream) need(((Obj *)stream)->device);
  if (nlaunch >= MAX_LAUNCHES) return OK;
  MockLaunch *l = &launches[nlaunch++];
  snprintf(l->name, sizeof l->name, "%s", ((Function *)f)->name);
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz, l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
  l->stream = stream;
  if (params && params[0]) memcpy(l->arg0, params[0], sizeof l->arg0);
  return OK;
}
