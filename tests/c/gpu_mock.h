/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_mock.h: a mock GPU driver for the shared GPU layer's test (test_gpu_layer.c): RtGpuDriver filled
 * in-process, no GPU.
 *
 * Device memory is host memory (so copies can be checked byte for byte), streams and events are small
 * records (events read a counter clock), "linking" turns the PTX the real NVPTX target emits into a mock
 * binary kind ("MOCKBIN <level>" and the entry names), modules are parsed from it, and launches are
 * recorded with their parameter block. Its target wraps the NVPTX target and claims the mock's wave (32 or
 * 64). It checks the driver contract as it goes: a hook that names a device must find it current on the
 * calling thread (not_current counts violations), and it counts what it hands out so that a test can see
 * that everything came back. The fail_at-th fallible call (any hook) fails with "mock: injected failure".
 * One instance per context: load() takes mock_next. The layer's state sits in the HIP kind's slot.
 */
#ifndef LOOM_TESTS_GPU_MOCK_H
#define LOOM_TESTS_GPU_MOCK_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gpu/gpu_rt.h"

/* ---- the mock driver ------------------------------------------------------------------------------------ */
enum { MOCK_DEVICES = 2, MOCK_LOG = 64, MOCK_WORDS = 32, MOCK_ALLOCS = 256 };

typedef struct MockModule MockModule;
typedef struct MockFn {
  MockModule *m;
  char name[64];
} MockFn;
struct MockModule {
  int device, level, n;
  MockFn fns[CG_NENTRY];
};
typedef struct MockStream { int device; } MockStream;
typedef struct MockEvent { int device; long time; void *stream; } MockEvent;
typedef struct Launch {
  const MockFn *fn;
  int device;
  uint32_t grid, block;
  void *stream;
  uint64_t words[MOCK_WORDS];
  bool partials_live; /* words[partials] is a live allocation at launch time */
} Launch;

typedef struct Mock {
  LoomContext *ctx;                  /* given to load: link's binaries are ctx_alloc'ed with it */
  int wave, final_level, fail_level; /* fail_level: link at this level fails (-9: none) */
  bool tiers;
  long fail_at, calls;               /* the fail_at-th fallible call fails (0: none) */
  char failed_hooks[512];            /* names of hooks failed so far, " a b ..." */
  pthread_mutex_t lock;              /* the tier thread calls hooks too */
  /* what it holds */
  void *allocs[MOCK_ALLOCS];
  size_t alloc_size[MOCK_ALLOCS];
  int live_allocs, live_streams, live_events, live_modules, retained[MOCK_DEVICES];
  bool loaded;
  /* what it saw */
  int raw_allocs, links[6], module_loads, stream_syncs, peer_copies, not_current;
  long clock;
  void *last_copy_stream;
  int param_words, partials_word, nlaunch;
  Launch log[MOCK_LOG];
} Mock;

static Mock *mock_next; /* the instance the next load() hands out */
static __thread int mock_current = -1;

static void mock_init(Mock *m, int wave) {
  memset(m, 0, sizeof *m);
  pthread_mutex_init(&m->lock, NULL);
  m->wave = wave;
  m->final_level = 2;
  m->fail_level = -9;
  m->tiers = true;
  m->partials_word = -1;
}

/* Every fallible hook starts here: counts the call, fails the fail_at-th. */
static LoomStatus enter(Mock *m, const char *hook, int device, Diag *d) {
  pthread_mutex_lock(&m->lock);
  bool fail = m->fail_at && ++m->calls == m->fail_at;
  if (!m->fail_at) m->calls++;
  char needle[64];
  snprintf(needle, sizeof needle, " %s ", hook);
  if (fail && strlen(m->failed_hooks) + strlen(needle) < sizeof m->failed_hooks && !strstr(m->failed_hooks, needle))
    strcat(m->failed_hooks, needle);
  pthread_mutex_unlock(&m->lock);
  return fail ? diag_error(d, LOOM_ERR_BACKEND, "mock: injected failure of %s on device %d", hook, device) : LOOM_OK;
}

#define ENTER(m, hook, device, d)                                   \
  do {                                                              \
    LoomStatus e_ = enter((m), (hook), (device), (d));              \
    if (e_ != LOOM_OK) return e_;                                   \
  } while (0)
/* The contract: the layer made the device current on this thread first. */
static void need_current(Mock *m, int device) {
  if (mock_current != device) __atomic_add_fetch(&m->not_current, 1, __ATOMIC_RELAXED);
}

static LoomStatus m_load(LoomContext *ctx, void **drv, int *ndev, RtGpuJit *jit, Diag *d) {
  Mock *m = mock_next;
  ENTER(m, "load", -1, d);
  m->loaded = true;
  m->ctx = ctx;
  *drv = m;
  *ndev = MOCK_DEVICES;
  jit->final_level = m->final_level;
  jit->tiers = m->tiers;
  return LOOM_OK;
}
static void m_unload(void *drv) { ((Mock *)drv)->loaded = false; }
static LoomStatus m_device_info(void *drv, int device, RtGpuDeviceInfo *out, Diag *d) {
  Mock *m = drv;
  ENTER(m, "device_info", device, d);
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "mock %d", device);
  snprintf(out->arch, sizeof out->arch, "mock_wave%d", m->wave);
  out->sm_count = 4;
  out->max_threads_per_block = 1024;
  out->max_threads_per_sm = 2048;
  out->wave = m->wave;
  out->total_mem = 1 << 30;
  return LOOM_OK;
}
static LoomStatus m_retain(void *drv, int device, Diag *d) {
  Mock *m = drv;
  ENTER(m, "retain", device, d);
  m->retained[device]++;
  mock_current = device;
  return LOOM_OK;
}
static void m_release(void *drv, int device) { ((Mock *)drv)->retained[device]--; }
static LoomStatus m_set_current(void *drv, int device, Diag *d) {
  ENTER((Mock *)drv, "set_current", device, d);
  mock_current = device;
  return LOOM_OK;
}
static LoomStatus m_synchronize(void *drv, int device, Diag *d) {
  ENTER((Mock *)drv, "synchronize", device, d);
  need_current(drv, device);
  return LOOM_OK;
}

/* memory: host memory, remembered so that leaks and stale partials show */
static LoomStatus m_mem_alloc(void *drv, int device, size_t size, uint64_t *out, Diag *d) {
  Mock *m = drv;
  ENTER(m, "mem_alloc", device, d);
  need_current(m, device);
  pthread_mutex_lock(&m->lock);
  int slot = -1;
  for (int i = 0; i < MOCK_ALLOCS && slot < 0; i++)
    if (!m->allocs[i]) slot = i;
  void *p = slot >= 0 ? aligned_alloc(256, (size + 255) / 256 * 256) : NULL;
  if (p) {
    m->allocs[slot] = p;
    m->alloc_size[slot] = size;
    m->live_allocs++;
    m->raw_allocs++;
  }
  pthread_mutex_unlock(&m->lock);
  if (!p) return LOOM_ERR_OUT_OF_MEMORY; /* d untouched: the pool retries */
  *out = (uint64_t)(uintptr_t)p;
  return LOOM_OK;
}
static void m_mem_free(void *drv, int device, uint64_t ptr) {
  Mock *m = drv;
  pthread_mutex_lock(&m->lock);
  for (int i = 0; i < MOCK_ALLOCS; i++)
    if (m->allocs[i] == (void *)(uintptr_t)ptr) {
      free(m->allocs[i]);
      m->allocs[i] = NULL;
      m->live_allocs--;
    }
  pthread_mutex_unlock(&m->lock);
}
static bool m_live(Mock *m, uint64_t p) {
  for (int i = 0; i < MOCK_ALLOCS; i++)
    if (m->allocs[i] && (uint64_t)(uintptr_t)m->allocs[i] <= p &&
        p < (uint64_t)(uintptr_t)m->allocs[i] + m->alloc_size[i])
      return true;
  return false;
}
static LoomStatus m_copy_h2d(void *drv, int device, uint64_t dst, const void *src, size_t n, void *s, Diag *d) {
  Mock *m = drv;
  ENTER(m, "copy_h2d", device, d);
  need_current(m, device);
  m->last_copy_stream = s;
  memcpy((void *)(uintptr_t)dst, src, n);
  return LOOM_OK;
}
static LoomStatus m_copy_d2h(void *drv, int device, void *dst, uint64_t src, size_t n, void *s, Diag *d) {
  Mock *m = drv;
  ENTER(m, "copy_d2h", device, d);
  need_current(m, device);
  m->last_copy_stream = s;
  memcpy(dst, (void *)(uintptr_t)src, n);
  return LOOM_OK;
}
static LoomStatus m_copy_d2d(void *drv, int device, uint64_t dst, uint64_t src, size_t n, void *s, Diag *d) {
  Mock *m = drv;
  ENTER(m, "copy_d2d", device, d);
  need_current(m, device);
  m->last_copy_stream = s;
  memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
  return LOOM_OK;
}
static LoomStatus m_copy_peer(void *drv, int dd, uint64_t dst, int sd, uint64_t src, size_t n, Diag *d) {
  Mock *m = drv;
  ENTER(m, "copy_peer", dd, d);
  need_current(m, dd);
  m->peer_copies++;
  memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
  return LOOM_OK;
}

/* streams and events */
static LoomStatus m_stream_create(void *drv, int device, void **out, Diag *d) {
  Mock *m = drv;
  ENTER(m, "stream_create", device, d);
  need_current(m, device);
  MockStream *s = calloc(1, sizeof *s);
  s->device = device;
  m->live_streams++;
  *out = s;
  return LOOM_OK;
}
static void m_stream_destroy(void *drv, int device, void *s) {
  ((Mock *)drv)->live_streams--;
  free(s);
}
static LoomStatus m_stream_synchronize(void *drv, int device, void *s, Diag *d) {
  Mock *m = drv;
  ENTER(m, "stream_synchronize", device, d);
  need_current(m, device);
  if (((MockStream *)s)->device != device) m->not_current++;
  m->stream_syncs++;
  return LOOM_OK;
}
static LoomStatus m_event_create(void *drv, int device, void **out, Diag *d) {
  Mock *m = drv;
  ENTER(m, "event_create", device, d);
  need_current(m, device);
  MockEvent *e = calloc(1, sizeof *e);
  e->device = device;
  m->live_events++;
  *out = e;
  return LOOM_OK;
}
static void m_event_destroy(void *drv, int device, void *e) {
  ((Mock *)drv)->live_events--;
  free(e);
}
static LoomStatus m_event_record(void *drv, int device, void *e, void *s, Diag *d) {
  Mock *m = drv;
  ENTER(m, "event_record", device, d);
  need_current(m, device);
  ((MockEvent *)e)->time = ++m->clock;
  ((MockEvent *)e)->stream = s;
  return LOOM_OK;
}
static LoomStatus m_event_synchronize(void *drv, int device, void *e, Diag *d) {
  ENTER((Mock *)drv, "event_synchronize", device, d);
  need_current(drv, device);
  return LOOM_OK;
}
static LoomStatus m_event_elapsed(void *drv, int device, void *a, void *b, float *ms, Diag *d) {
  ENTER((Mock *)drv, "event_elapsed", device, d);
  need_current(drv, device);
  *ms = (float)(((MockEvent *)b)->time - ((MockEvent *)a)->time);
  return LOOM_OK;
}

/* code: "MOCKBIN <level>\n" then the PTX's .entry names, one a line */
static LoomStatus m_link(void *drv, int device, const char *code, size_t size, const char *name, int level,
                         void **binary, size_t *binary_size, Diag *d) {
  Mock *m = drv;
  ENTER(m, "link", device, d);
  need_current(m, device);
  if (code[size] != 0 || strlen(code) != size) return diag_error(d, LOOM_ERR_INTERNAL, "mock: code not NUL-ended");
  if (level == m->fail_level) return diag_error(d, LOOM_ERR_BACKEND, "mock: level %d refused", level);
  pthread_mutex_lock(&m->lock);
  m->links[level + 1]++;
  pthread_mutex_unlock(&m->lock);
  char *out = ctx_alloc(m->ctx, 4096);
  if (!out) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "mock: out of memory");
  int n = snprintf(out, 4096, "MOCKBIN %d\n", level);
  for (const char *p = code; (p = strstr(p, ".entry ")) != NULL;) {
    p += 7;
    size_t len = strcspn(p, "( \n");
    n += snprintf(out + n, 4096 - (size_t)n, "%.*s\n", (int)len, p);
  }
  *binary = out;
  *binary_size = (size_t)n + 1;
  return LOOM_OK;
}
static LoomStatus m_module_load(void *drv, int device, const void *binary, size_t size, void **out, Diag *d) {
  Mock *m = drv;
  ENTER(m, "module_load", device, d);
  need_current(m, device);
  const char *b = binary;
  if (size < 9 || memcmp(b, "MOCKBIN ", 8) || b[size - 1] != 0)
    return diag_error(d, LOOM_ERR_BACKEND, "mock: not a mock binary");
  MockModule *mod = calloc(1, sizeof *mod);
  mod->device = device;
  mod->level = atoi(b + 8);
  for (const char *p = strchr(b, '\n') + 1; *p && mod->n < CG_NENTRY; p = strchr(p, '\n') + 1) {
    MockFn *f = &mod->fns[mod->n++];
    f->m = mod;
    snprintf(f->name, sizeof f->name, "%.*s", (int)strcspn(p, "\n"), p);
  }
  pthread_mutex_lock(&m->lock);
  m->live_modules++;
  m->module_loads++;
  pthread_mutex_unlock(&m->lock);
  *out = mod;
  return LOOM_OK;
}
static void m_module_unload(void *drv, int device, void *mod) {
  Mock *m = drv;
  pthread_mutex_lock(&m->lock);
  m->live_modules--;
  pthread_mutex_unlock(&m->lock);
  free(mod);
}
static LoomStatus m_module_function(void *drv, int device, void *module, const char *name, void **fn, Diag *d) {
  ENTER((Mock *)drv, "module_function", device, d);
  need_current(drv, device);
  MockModule *mod = module;
  for (int i = 0; i < mod->n; i++)
    if (!strcmp(mod->fns[i].name, name)) {
      *fn = &mod->fns[i];
      return LOOM_OK;
    }
  return diag_error(d, LOOM_ERR_BACKEND, "mock: no function %s", name);
}
static LoomStatus m_func_attrs(void *drv, int device, void *fn, RtGpuFuncAttrs *out, Diag *d) {
  ENTER((Mock *)drv, "func_attrs", device, d);
  need_current(drv, device);
  out->max_threads_per_block = 1024;
  out->num_regs = 32;
  return LOOM_OK;
}
/* At most 16 resident blocks and 2048 threads per multiprocessor. */
static int mock_blocks_per_sm(int block) { return 2048 / block < 16 ? 2048 / block : 16; }
static LoomStatus m_occupancy(void *drv, int device, void *fn, int block, size_t shared, int *out, Diag *d) {
  ENTER((Mock *)drv, "occupancy", device, d);
  need_current(drv, device);
  *out = mock_blocks_per_sm(block);
  return LOOM_OK;
}
static LoomStatus m_launch(void *drv, int device, void *fn, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared, void *stream, void **params, Diag *d) {
  Mock *m = drv;
  ENTER(m, "launch", device, d);
  need_current(m, device);
  if (m->nlaunch < MOCK_LOG) {
    Launch *l = &m->log[m->nlaunch++];
    l->fn = fn;
    l->device = device;
    l->grid = grid[0];
    l->block = block[0];
    l->stream = stream;
    memcpy(l->words, params[0], (size_t)m->param_words * 8);
    l->partials_live = m->partials_word >= 0 && m_live(m, l->words[m->partials_word]);
  }
  return LOOM_OK;
}

/* The mock's target: NVPTX's code and facts, the mock's wave. */
typedef struct MockTarget {
  CgTarget t;
  CgTarget *inner;
  Mock *m;
  char desc[256];
} MockTarget;
static const char *mt_describe(CgTarget *t) { return ((MockTarget *)t)->desc; }
static LoomStatus mt_compile(CgTarget *t, const KernelIr *k, const CgCompileOptions *opt, CgCompiled *out, Diag *d) {
  MockTarget *mt = (MockTarget *)t;
  LoomStatus st = mt->inner->compile(mt->inner, k, opt, out, d);
  if (st == LOOM_OK && out->gpu) out->gpu->wave = mt->m->wave;
  return st;
}
static void mt_release(CgTarget *t, CgCompiled *c) { ((MockTarget *)t)->inner->release(((MockTarget *)t)->inner, c); }
static void mt_destroy(CgTarget *t) {
  MockTarget *mt = (MockTarget *)t;
  mt->inner->destroy(mt->inner);
  ctx_free(t->ctx, mt);
}
static LoomStatus m_target_create(LoomContext *ctx, const RtGpuDeviceInfo *info, CgTarget **out, Diag *d) {
  Mock *m = mock_next;
  ENTER(m, "target_create", -1, d);
  MockTarget *mt = ctx_calloc(ctx, 1, sizeof *mt);
  if (!mt) return diag_error(d, LOOM_ERR_OUT_OF_MEMORY, "out of memory");
  LoomStatus st = cg_nvptx_target_create(ctx, 9, 0, &mt->inner, d);
  if (st != LOOM_OK) {
    ctx_free(ctx, mt);
    return st;
  }
  mt->m = m;
  mt->t = (CgTarget){.name = "mock", .binary = CG_BINARY_PTX, .describe = mt_describe, .compile = mt_compile,
                     .release = mt_release, .destroy = mt_destroy, .ctx = ctx};
  snprintf(mt->desc, sizeof mt->desc, "%s %s", mt->inner->describe(mt->inner), info->arch);
  *out = &mt->t;
  return LOOM_OK;
}

static const RtGpuDriver mock_driver = {
    .name = "Mock", .kind = LOOM_DEVICE_HIP, .binary = CG_BINARY_PTX,
    .load = m_load, .unload = m_unload, .device_info = m_device_info, .retain = m_retain, .release = m_release,
    .set_current = m_set_current, .synchronize = m_synchronize, .target_create = m_target_create,
    .mem_alloc = m_mem_alloc, .mem_free = m_mem_free, .copy_h2d = m_copy_h2d, .copy_d2h = m_copy_d2h,
    .copy_d2d = m_copy_d2d, .copy_peer = m_copy_peer, .stream_create = m_stream_create,
    .stream_destroy = m_stream_destroy, .stream_synchronize = m_stream_synchronize, .event_create = m_event_create,
    .event_destroy = m_event_destroy, .event_record = m_event_record, .event_synchronize = m_event_synchronize,
    .event_elapsed = m_event_elapsed, .link = m_link, .module_load = m_module_load,
    .module_unload = m_module_unload, .module_function = m_module_function, .func_attrs = m_func_attrs,
    .occupancy = m_occupancy, .launch = m_launch,
};
static const RtGpuDriver *const D = &mock_driver;

#endif /* LOOM_TESTS_GPU_MOCK_H */
