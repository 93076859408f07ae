/* SPDX-License-Identifier: Apache-2.0 */
/* test_cuda.c: the caching device pool (runtime/gpu/gpu_pool.h, with a fake allocator, runs everywhere) and the CUDA
 * driver layer (needs a GPU: skipped with "skipped: no CUDA driver" when rt_cuda_load fails).
 *
 * Driver tests: device info, alloc/copy/memset round trips (sync and on a stream), event timing,
 * a hand-written PTX kernel (c = a + b over float arrays) linked to a cubin with cuLink, loaded,
 * queried (attributes, occupancy), launched and checked; the pool over real device memory; every
 * device of the machine in one process. Prints "N passed, N failed, N skipped".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda.h"

static int passed, failed, skipped;
#define CHECK(cond)                                                    \
  do {                                                                 \
    if (cond) {                                                        \
      passed++;                                                        \
    } else {                                                           \
      failed++;                                                        \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)
#define CHECK_OK(expr)                                                                     \
  do {                                                                                     \
    LoomStatus st_ = (expr);                                                               \
    if (st_ == LOOM_OK) {                                                                  \
      passed++;                                                                            \
    } else {                                                                               \
      failed++;                                                                            \
      fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, d.msg);          \
    }                                                                                      \
  } while (0)

/* ---- a fake device allocator: hands out addresses from a counter within a capacity ----------- */
typedef struct FakeDev {
  pthread_mutex_t lock;
  uint64_t next, capacity, live;
  uint64_t nalloc, nfree, nfail;
  int fail_other; /* make the next alloc fail with a non-OOM error */
} FakeDev;

static LoomStatus fake_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  FakeDev *f = user;
  pthread_mutex_lock(&f->lock);
  LoomStatus st = LOOM_OK;
  if (f->fail_other) {
    f->fail_other = 0;
    st = diag_error(d, LOOM_ERR_BACKEND, "fake device %d is broken", device);
  } else if (f->live + size > f->capacity) {
    f->nfail++;
    st = LOOM_ERR_OUT_OF_MEMORY; /* d untouched, as the contract says */
  } else {
    *out = f->next;
    f->next += size + 256;
    f->live += size;
    f->nalloc++;
  }
  pthread_mutex_unlock(&f->lock);
  return st;
}

static void fake_free(void *user, int device, uint64_t ptr) {
  FakeDev *f = user;
  (void)device;
  (void)ptr;
  pthread_mutex_lock(&f->lock);
  f->nfree++;
  pthread_mutex_unlock(&f->lock);
}

/* This fake never takes memory back (free only counts); SizedDev below does. */
static void fake_init(FakeDev *f, uint64_t capacity) {
  memset(f, 0, sizeof *f);
  pthread_mutex_init(&f->lock, NULL);
  f->next = 0x10000;
  f->capacity = capacity;
}

static void test_pool_classes(void) {
  CHECK(rt_gpu_pool_class_size(0) == 0);
  CHECK(rt_gpu_pool_class_size(1) == 512);
  CHECK(rt_gpu_pool_class_size(512) == 512);
  CHECK(rt_gpu_pool_class_size(513) == 1024);
  CHECK(rt_gpu_pool_class_size(1000) == 1024);
  CHECK(rt_gpu_pool_class_size(65537) == 131072);
  CHECK(rt_gpu_pool_class_size(1 << 20) == 1 << 20);
  CHECK(rt_gpu_pool_class_size((1 << 20) + 1) == (1 << 20) + (1 << 18));
  CHECK(rt_gpu_pool_class_size(3u << 20) == 3u << 20);
  CHECK(rt_gpu_pool_class_size((3u << 20) + 1) == 7u << 19);
  CHECK(rt_gpu_pool_class_size(1ull << 48) == 1ull << 48);
  CHECK(rt_gpu_pool_class_size((1ull << 48) + 1) == 0);
  /* Every class is >= the request and wastes at most half (pow2 range) or a quarter (above). */
  for (uint64_t s = 1; s < (1ull << 40); s = s * 3 + 1) {
    uint64_t c = rt_gpu_pool_class_size(s);
    bool ok = c >= s && (s <= 512 || (s <= (1u << 20) ? c < 2 * s : c * 4 <= s * 5 + 4));
    if (!ok) fprintf(stderr, "class of %llu is %llu\n", (unsigned long long)s, (unsigned long long)c);
    CHECK(ok);
  }
}

static void test_pool_reuse(void) {
  FakeDev f;
  fake_init(&f, 1ull << 30);
  RtDevAllocator a = {fake_alloc, fake_free, &f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, 3, &a, &p, &d));
  if (!p) return;
  uint64_t x = 0, y = 0, z = 0, w = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 1000, &x, &d));
  CHECK_OK(rt_gpu_pool_alloc(p, 1024, &y, &d));
  CHECK(x && y && x != y && f.nalloc == 2);
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.used_bytes == 2048 && s.cached_bytes == 0 && s.total_bytes == 2048);
  CHECK(s.requested_bytes == 2024);
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  rt_gpu_pool_stats(p, &s);
  CHECK(s.used_bytes == 1024 && s.cached_bytes == 1024 && s.total_bytes == 2048);
  CHECK_OK(rt_gpu_pool_alloc(p, 600, &z, &d)); /* same class as x: reused, no new raw alloc */
  CHECK(z == x && f.nalloc == 2);
  CHECK_OK(rt_gpu_pool_alloc(p, 100, &w, &d)); /* a different class */
  CHECK(w != x && w != y && f.nalloc == 3);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.reuses == 1 && s.allocs == 4 && s.raw_allocs == 3);
  /* Zero-size and bad frees. */
  uint64_t zero = 123;
  CHECK_OK(rt_gpu_pool_alloc(p, 0, &zero, &d));
  CHECK(zero == 0);
  CHECK_OK(rt_gpu_pool_free(p, 0, &d));
  Diag bad = {0};
  CHECK(rt_gpu_pool_free(p, 0xdead, &bad) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(bad.msg, "0xdead") != NULL);
  CHECK_OK(rt_gpu_pool_free(p, w, &d));
  Diag twice = {0};
  CHECK(rt_gpu_pool_free(p, w, &twice) == LOOM_ERR_INVALID_ARGUMENT);
  /* Too large for any device. */
  Diag huge = {0};
  uint64_t h = 0;
  CHECK(rt_gpu_pool_alloc(p, SIZE_MAX, &h, &huge) == LOOM_ERR_OUT_OF_MEMORY && h == 0);
  /* free_all_blocks returns only the cached ones. */
  rt_gpu_pool_free_all_blocks(p);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.cached_bytes == 0 && s.used_bytes == 2048 && f.nfree == 1);
  /* Many blocks: the hash table grows, every pointer is found again. */
  enum { N = 1000 };
  static uint64_t ptrs[N];
  bool all = true;
  for (int i = 0; i < N; i++) all = all && rt_gpu_pool_alloc(p, 512 + (i % 7) * 1000, &ptrs[i], &d) == LOOM_OK;
  for (int i = 0; i < N; i += 2) all = all && rt_gpu_pool_free(p, ptrs[i], &d) == LOOM_OK;
  for (int i = 1; i < N; i += 2) all = all && rt_gpu_pool_free(p, ptrs[i], &d) == LOOM_OK;
  CHECK(all);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.used_bytes == 2048 && s.requested_bytes == 1624);
  rt_gpu_pool_destroy(p); /* frees the two blocks still in use and everything cached */
  CHECK(f.nfree == f.nalloc);
  pthread_mutex_destroy(&f.lock);
}

/* The pool's limit (MemoryPool.set_limit): a new block past it first frees the cached blocks, then fails with
 * out-of-memory naming the limit; reuse of a cached block is always allowed; 0 lifts the limit. */
static void test_pool_limit(void) {
  FakeDev f;
  fake_init(&f, 1ull << 30);
  RtDevAllocator a = {fake_alloc, fake_free, &f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, 0, &a, &p, &d));
  if (!p) return;
  CHECK(rt_gpu_pool_limit(p) == 0);
  rt_gpu_pool_set_limit(p, 4096);
  CHECK(rt_gpu_pool_limit(p) == 4096);
  uint64_t x = 0, y = 0, z = 0, w = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 2048, &x, &d));
  CHECK_OK(rt_gpu_pool_alloc(p, 1500, &y, &d)); /* 2048 with rounding: total 4096, at the limit */
  Diag over = {0};
  CHECK(rt_gpu_pool_alloc(p, 1, &z, &over) == LOOM_ERR_OUT_OF_MEMORY && z == 0);
  CHECK(strstr(over.msg, "limit is 4096 bytes") != NULL && strstr(over.msg, "set_limit") != NULL);
  CHECK(f.nalloc == 2);
  /* a freed block is cached: the same class is reused under the limit, no raw allocation */
  CHECK_OK(rt_gpu_pool_free(p, y, &d));
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.cached_blocks == 1 && s.cached_bytes == 2048);
  CHECK_OK(rt_gpu_pool_alloc(p, 2000, &z, &d));
  CHECK(z == y && f.nalloc == 2);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.cached_blocks == 0);
  /* a different class: the cached 2048 block (freed again) goes back to the device, then it fits */
  CHECK_OK(rt_gpu_pool_free(p, z, &d));
  CHECK_OK(rt_gpu_pool_alloc(p, 1024, &w, &d));
  rt_gpu_pool_stats(p, &s);
  CHECK(f.nfree == 1 && s.cached_bytes == 0 && s.cached_blocks == 0 && s.total_bytes == 3072 && s.used_bytes == 3072);
  /* a request larger than the limit alone fails even with nothing held */
  Diag big = {0};
  uint64_t b = 0;
  CHECK(rt_gpu_pool_alloc(p, 8192, &b, &big) == LOOM_ERR_OUT_OF_MEMORY && b == 0);
  /* lifting the limit */
  rt_gpu_pool_set_limit(p, 0);
  CHECK_OK(rt_gpu_pool_alloc(p, 8192, &b, &d));
  CHECK(b != 0);
  rt_gpu_pool_destroy(p);
  CHECK(f.nfree == f.nalloc);
  pthread_mutex_destroy(&f.lock);
}

/* A fake whose frees give memory back (it remembers sizes by address), for the OOM-retry path. */
typedef struct SizedDev {
  uint64_t next, capacity, live;
  uint64_t addr[64], size[64];
  int n;
  int nfail, nalloc, nfree;
} SizedDev;

static LoomStatus sized_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  SizedDev *f = user;
  (void)device;
  (void)d;
  if (f->live + size > f->capacity || f->n == 64) {
    f->nfail++;
    return LOOM_ERR_OUT_OF_MEMORY;
  }
  *out = f->next;
  f->addr[f->n] = f->next;
  f->size[f->n++] = size;
  f->next += size;
  f->live += size;
  f->nalloc++;
  return LOOM_OK;
}

static void sized_free(void *user, int device, uint64_t ptr) {
  SizedDev *f = user;
  (void)device;
  for (int i = 0; i < f->n; i++) {
    if (f->addr[i] == ptr) {
      f->live -= f->size[i];
      f->addr[i] = f->addr[f->n - 1];
      f->size[i] = f->size[--f->n];
      f->nfree++;
      return;
    }
  }
}

static void test_pool_oom_retry(void) {
  SizedDev f = {.next = 0x100000, .capacity = 16384};
  RtDevAllocator a = {sized_alloc, sized_free, &f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, 2, &a, &p, &d));
  if (!p) return;
  uint64_t x = 0, y = 0, z = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 4096, &x, &d));
  CHECK_OK(rt_gpu_pool_alloc(p, 2048, &y, &d));
  CHECK_OK(rt_gpu_pool_free(p, x, &d)); /* cached 4096; device holds 6144 */
  /* 12000 rounds to 16384, which fails next to 6144 live; the pool frees the cached 4096 and
   * retries, which fails again (2048 + 16384 > 16384): OOM, with the figures before the flush. */
  Diag oom = {0};
  CHECK(rt_gpu_pool_alloc(p, 12000, &z, &oom) == LOOM_ERR_OUT_OF_MEMORY && z == 0);
  CHECK(strstr(oom.msg, "out of device memory allocating 12000 bytes on device 2 (used 2048, "
                        "cached 4096)") != NULL);
  if (!strstr(oom.msg, "used 2048")) fprintf(stderr, "message: %s\n", oom.msg);
  CHECK(f.nfail == 2 && f.nfree == 1 && f.live == 2048);
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.cached_bytes == 0 && s.used_bytes == 2048 && s.oom_retries == 1);
  /* Now a request that fits only once the cache is freed: the retry succeeds. */
  CHECK_OK(rt_gpu_pool_free(p, y, &d));
  uint64_t b8 = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 8192, &b8, &d));
  CHECK_OK(rt_gpu_pool_free(p, b8, &d)); /* cached: 2048 + 8192 on the device */
  f.nfail = 0;
  uint64_t big = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 16384, &big, &d)); /* fits only once the cache is freed */
  CHECK(big != 0 && f.nfail == 1 && f.live == 16384);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.used_bytes == 16384 && s.cached_bytes == 0 && s.total_bytes == 16384 && s.oom_retries == 2);
  CHECK(s.peak_bytes >= 16384);
  CHECK_OK(rt_gpu_pool_free(p, big, &d));
  rt_gpu_pool_destroy(p);
  CHECK(f.live == 0 && f.n == 0);

  /* A non-OOM failure of the raw allocator passes its message through, without a retry. */
  FakeDev g;
  fake_init(&g, 1 << 20);
  g.fail_other = 1;
  RtDevAllocator ga = {fake_alloc, fake_free, &g};
  CHECK_OK(rt_gpu_pool_create(NULL, 5, &ga, &p, &d));
  Diag broken = {0};
  uint64_t q = 0;
  CHECK(rt_gpu_pool_alloc(p, 100, &q, &broken) == LOOM_ERR_BACKEND);
  CHECK(strstr(broken.msg, "fake device 5 is broken") != NULL);
  CHECK_OK(rt_gpu_pool_alloc(p, 100, &q, &d));
  CHECK_OK(rt_gpu_pool_free(p, q, &d));
  rt_gpu_pool_destroy(p);
  pthread_mutex_destroy(&g.lock);
}

/* Host allocation failure: the pool's bookkeeping allocation fails cleanly, nothing leaks. */
typedef struct CountingAlloc {
  int budget; /* allocations allowed before failing */
} CountingAlloc;
static void *counting_alloc(void *user, size_t size) {
  CountingAlloc *c = user;
  if (c->budget <= 0) return NULL;
  c->budget--;
  return aligned_alloc(64, (size + 63) & ~(size_t)63);
}
static void counting_free(void *user, void *p) {
  (void)user;
  free(p);
}

static void test_pool_host_oom(void) {
  for (int budget = 0; budget < 6; budget++) {
    CountingAlloc ca = {budget};
    LoomContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.alloc = (LoomAllocator){counting_alloc, counting_free, &ca};
    FakeDev f;
    fake_init(&f, 1 << 20);
    RtDevAllocator a = {fake_alloc, fake_free, &f};
    RtGpuPool *p = NULL;
    Diag d = {0};
    LoomStatus st = rt_gpu_pool_create(&ctx, 0, &a, &p, &d);
    if (st == LOOM_OK) {
      uint64_t x = 0;
      Diag d2 = {0};
      st = rt_gpu_pool_alloc(p, 1000, &x, &d2);
      CHECK(st == LOOM_OK || (st == LOOM_ERR_OUT_OF_MEMORY && x == 0 && f.nalloc == 0));
      if (st == LOOM_OK) CHECK(rt_gpu_pool_free(p, x, &d2) == LOOM_OK);
      rt_gpu_pool_destroy(p);
      CHECK(f.nfree == f.nalloc);
    } else {
      CHECK(st == LOOM_ERR_OUT_OF_MEMORY && p == NULL);
    }
    pthread_mutex_destroy(&f.lock);
  }
}

typedef struct ThreadArg {
  RtGpuPool *pool;
  int seed;
  bool ok;
} ThreadArg;

static void *pool_thread(void *arg) {
  ThreadArg *t = arg;
  uint64_t held[16] = {0};
  unsigned r = (unsigned)t->seed;
  t->ok = true;
  for (int i = 0; i < 20000 && t->ok; i++) {
    r = r * 1103515245u + 12345u;
    int slot = (int)((r >> 16) % 16);
    Diag d = {0};
    if (held[slot]) {
      t->ok = rt_gpu_pool_free(t->pool, held[slot], &d) == LOOM_OK;
      held[slot] = 0;
    } else {
      t->ok = rt_gpu_pool_alloc(t->pool, 1 + (r >> 8) % 100000, &held[slot], &d) == LOOM_OK;
    }
  }
  for (int s = 0; s < 16; s++) {
    Diag d = {0};
    if (held[s] && rt_gpu_pool_free(t->pool, held[s], &d) != LOOM_OK) t->ok = false;
  }
  return NULL;
}

static void test_pool_threads(void) {
  FakeDev f;
  fake_init(&f, 1ull << 40);
  RtDevAllocator a = {fake_alloc, fake_free, &f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, 0, &a, &p, &d));
  if (!p) return;
  enum { T = 4 };
  pthread_t th[T];
  ThreadArg args[T];
  for (int i = 0; i < T; i++) {
    args[i] = (ThreadArg){p, i + 1, false};
    pthread_create(&th[i], NULL, pool_thread, &args[i]);
  }
  for (int i = 0; i < T; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < T; i++) CHECK(args[i].ok);
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.used_bytes == 0 && s.requested_bytes == 0 && s.cached_bytes == s.total_bytes);
  CHECK(s.reuses > 0 && s.allocs == s.reuses + s.raw_allocs);
  rt_gpu_pool_destroy(p);
  CHECK(f.nfree == f.nalloc);
  pthread_mutex_destroy(&f.lock);
}

/* ---- the driver --------------------------------------------------------------------------------- */
static const char vadd_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    "// c[i] = a[i] + b[i] for i < n\n"
    ".visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pn)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [pa];\n"
    "  ld.param.u64 %rd2, [pb];\n"
    "  ld.param.u64 %rd3, [pc];\n"
    "  ld.param.u32 %r1, [pn];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.u32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mul.wide.u32 %rd4, %r5, 4;\n"
    "  add.s64 %rd5, %rd1, %rd4;\n"
    "  add.s64 %rd6, %rd2, %rd4;\n"
    "  add.s64 %rd7, %rd3, %rd4;\n"
    "  ld.global.f32 %f1, [%rd5];\n"
    "  ld.global.f32 %f2, [%rd6];\n"
    "  add.f32 %f3, %f1, %f2;\n"
    "  st.global.f32 [%rd7], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static void test_device(RtCuda *cu, int dev) {
  Diag d = {0};
  RtCuDeviceInfo info;
  CHECK_OK(rt_cuda_device_info(cu, dev, &info, &d));
  printf("device %d: %s, compute %d.%d, %d SMs, %.1f GiB, warp %d, max block %d, smem optin %d\n", dev,
         info.name, info.cc_major, info.cc_minor, info.sm_count, (double)info.total_mem / (1 << 30),
         info.warp_size, info.max_threads_per_block, info.shared_per_block_optin);
  CHECK(info.name[0] && info.sm_count > 0 && info.total_mem > 0 && info.warp_size == 32);
  CHECK_OK(rt_cuda_device_retain(cu, dev, &d));
  uint64_t fr = 0, tot = 0;
  CHECK_OK(rt_cuda_mem_info(cu, dev, &fr, &tot, &d));
  CHECK(tot > 0 && fr <= tot);

  /* Copies: H2D, D2D, memset, D2H, synchronous. */
  enum { N = 1 << 20 };
  size_t bytes = N * sizeof(float);
  float *ha = malloc(bytes), *hb = malloc(bytes), *hc = malloc(bytes);
  uint64_t da = 0, db = 0, dc = 0;
  CHECK_OK(rt_cuda_mem_alloc(cu, dev, bytes, &da, &d));
  CHECK_OK(rt_cuda_mem_alloc(cu, dev, bytes, &db, &d));
  CHECK_OK(rt_cuda_mem_alloc(cu, dev, bytes, &dc, &d));
  if (!ha || !hb || !hc || !da || !db || !dc) goto out;
  for (int i = 0; i < N; i++) {
    ha[i] = (float)i;
    hb[i] = 0.5f * (float)i;
  }
  CHECK_OK(rt_cuda_memcpy_h2d(cu, dev, da, ha, bytes, NULL, &d));
  CHECK_OK(rt_cuda_memcpy_d2d(cu, dev, db, da, bytes, NULL, &d));
  memset(hc, 0, bytes);
  CHECK_OK(rt_cuda_memcpy_d2h(cu, dev, hc, db, bytes, NULL, &d));
  CHECK(memcmp(hc, ha, bytes) == 0);
  CHECK_OK(rt_cuda_memset(cu, dev, dc, 0x3f, bytes, NULL, &d));
  CHECK_OK(rt_cuda_memcpy_d2h(cu, dev, hc, dc, bytes, NULL, &d));
  bool set = true;
  for (size_t i = 0; i < bytes; i++) set = set && ((unsigned char *)hc)[i] == 0x3f;
  CHECK(set);

  /* The same on a stream, timed with events. */
  RtCuStream *s = NULL;
  RtCuEvent *e0 = NULL, *e1 = NULL;
  CHECK_OK(rt_cuda_stream_create(cu, dev, &s, &d));
  CHECK_OK(rt_cuda_event_create(cu, dev, &e0, &d));
  CHECK_OK(rt_cuda_event_create(cu, dev, &e1, &d));
  CHECK(rt_cuda_stream_device(s) == dev);
  CHECK_OK(rt_cuda_event_record(cu, e0, s, &d));
  CHECK_OK(rt_cuda_memcpy_h2d(cu, dev, db, hb, bytes, s, &d));
  CHECK_OK(rt_cuda_memset(cu, dev, dc, 0, bytes, s, &d));
  CHECK_OK(rt_cuda_event_record(cu, e1, s, &d));
  CHECK_OK(rt_cuda_event_synchronize(cu, e1, &d));
  float ms = -1;
  CHECK_OK(rt_cuda_event_elapsed(cu, e0, e1, &ms, &d));
  CHECK(ms >= 0 && ms < 10000);
  printf("device %d: 4 MiB H2D + memset on a stream: %.3f ms\n", dev, ms);

  /* PTX -> cubin -> module -> kernel. */
  void *cubin = NULL;
  size_t cubin_size = 0;
  CHECK_OK(rt_cuda_link_ptx(cu, dev, vadd_ptx, "vadd.ptx", -1, &cubin, &cubin_size, &d));
  CHECK(cubin && cubin_size > 4 && memcmp(cubin, "\177ELF", 4) == 0);
  RtCuModule *m = NULL;
  RtCuKernel k = {0};
  if (cubin) CHECK_OK(rt_cuda_module_load(cu, dev, cubin, cubin_size, &m, &d));
  if (m) CHECK_OK(rt_cuda_module_kernel(cu, m, "vadd", &k, &d));
  Diag nf = {0};
  RtCuKernel k2;
  CHECK(m && rt_cuda_module_kernel(cu, m, "nope", &k2, &nf) == LOOM_ERR_BACKEND &&
        strstr(nf.msg, "nope") != NULL);
  if (k.handle) {
    RtCuKernelAttrs at;
    CHECK_OK(rt_cuda_kernel_attrs(cu, &k, &at, &d));
    CHECK(at.max_threads_per_block >= 256 && at.num_regs > 0 && at.num_regs < 64);
    CHECK(at.binary_version == info.cc_major * 10 + info.cc_minor);
    int blocks = 0, best = 0;
    CHECK_OK(rt_cuda_occupancy(cu, &k, 256, 0, &blocks, &d));
    CHECK(blocks >= 1);
    CHECK_OK(rt_cuda_best_block_size(cu, &k, 0, &best, &d));
    CHECK(best >= 32 && best % 32 == 0 && best <= at.max_threads_per_block);
    printf("device %d: vadd %d regs, ptx %d, sm %d, %d blocks/SM at 256, best block %d\n", dev,
           at.num_regs, at.ptx_version, at.binary_version, blocks, best);
    uint32_t n = N;
    void *params[] = {&da, &db, &dc, &n};
    uint32_t grid[3] = {(N + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    CHECK_OK(rt_cuda_launch(cu, &k, grid, block, 0, s, params, &d));
    memset(hc, 0, bytes);
    CHECK_OK(rt_cuda_memcpy_d2h(cu, dev, hc, dc, bytes, s, &d));
    CHECK_OK(rt_cuda_stream_synchronize(cu, s, &d));
    bool right = true;
    for (int i = 0; i < N; i++) right = right && hc[i] == ha[i] + hb[i];
    CHECK(right);
    /* A zero grid is refused before the driver sees it. */
    Diag zg = {0};
    uint32_t g0[3] = {0, 1, 1};
    CHECK(rt_cuda_launch(cu, &k, g0, block, 0, s, params, &zg) == LOOM_ERR_INVALID_ARGUMENT);
  }
  /* A PTX error comes back with the JIT log. */
  Diag pe = {0};
  void *bad = NULL;
  size_t bad_size = 0;
  CHECK(rt_cuda_link_ptx(cu, dev, ".version 7.0\n.target sm_75\n.address_size 64\nnot ptx;\n",
                         "bad.ptx", -1, &bad, &bad_size, &pe) == LOOM_ERR_BACKEND &&
        bad == NULL);
  CHECK(strstr(pe.msg, "bad.ptx") != NULL);
  printf("device %d: bad PTX message: %.200s\n", dev, pe.msg);
  rt_cuda_module_unload(cu, m);
  rt_cuda_free_host(cu, cubin);
  rt_cuda_event_destroy(cu, e0);
  rt_cuda_event_destroy(cu, e1);
  rt_cuda_stream_destroy(cu, s);

  /* The pool over real device memory, and its OOM message for an impossible request. */
  {
    RtDevAllocator ra = rt_cuda_device_allocator(cu);
    RtGpuPool *p = NULL;
    CHECK_OK(rt_gpu_pool_create(NULL, dev, &ra, &p, &d));
    uint64_t x = 0, y = 0;
    CHECK_OK(rt_gpu_pool_alloc(p, 1000, &x, &d));
    CHECK_OK(rt_cuda_memcpy_h2d(cu, dev, x, ha, 1000, NULL, &d));
    CHECK_OK(rt_gpu_pool_free(p, x, &d));
    CHECK_OK(rt_gpu_pool_alloc(p, 700, &y, &d));
    CHECK(x == y);
    Diag oom = {0};
    uint64_t z = 0;
    CHECK(rt_gpu_pool_alloc(p, (size_t)tot * 2, &z, &oom) == LOOM_ERR_OUT_OF_MEMORY && z == 0);
    CHECK(strstr(oom.msg, "out of device memory allocating") != NULL);
    printf("device %d: %s\n", dev, oom.msg);
    CHECK_OK(rt_gpu_pool_free(p, y, &d));
    rt_gpu_pool_destroy(p);
  }
out:
  CHECK_OK(rt_cuda_mem_free(cu, dev, da, &d));
  CHECK_OK(rt_cuda_mem_free(cu, dev, db, &d));
  CHECK_OK(rt_cuda_mem_free(cu, dev, dc, &d));
  free(ha);
  free(hb);
  free(hc);
  CHECK_OK(rt_cuda_device_synchronize(cu, dev, &d));
  rt_cuda_device_release(cu, dev);
}

static void test_driver(void) {
  RtCuda *cu = NULL;
  Diag d = {0};
  LoomStatus st = rt_cuda_load(NULL, &cu, &d);
  if (st == LOOM_ERR_UNSUPPORTED) { /* no driver or no device: skip */
    CHECK(cu == NULL && strstr(d.msg, "no CUDA") != NULL);
    printf("skipped: %s\n", strstr(d.msg, "no CUDA device") ? d.msg : "no CUDA driver");
    skipped++;
    return;
  }
  if (st != LOOM_OK) { /* a driver that is there but fails is a failure */
    CHECK(cu == NULL);
    failed++;
    fprintf(stderr, "FAIL: rt_cuda_load: %s\n", d.msg);
    return;
  }
  int n = rt_cuda_device_count(cu);
  printf("CUDA driver %d, %d device(s)\n", rt_cuda_driver_version(cu), n);
  CHECK(n >= 1 && rt_cuda_driver_version(cu) >= 11000);
  Diag bad = {0};
  RtCuDeviceInfo info;
  CHECK(rt_cuda_device_info(cu, n, &info, &bad) == LOOM_ERR_INVALID_ARGUMENT);
  Diag nr = {0};
  uint64_t p = 0;
  CHECK(rt_cuda_mem_alloc(cu, 0, 16, &p, &nr) == LOOM_ERR_INVALID_ARGUMENT &&
        strstr(nr.msg, "rt_cuda_device_retain") != NULL);
  for (int dev = 0; dev < n; dev++) test_device(cu, dev);
  /* Retain every device at once; leave them retained: unload releases them. */
  for (int dev = 0; dev < n; dev++) CHECK_OK(rt_cuda_device_retain(cu, dev, &d));
  if (n >= 2) { /* a stream belongs to its device; buffers of two devices in one thread */
    RtCuStream *s0 = NULL;
    uint64_t b0 = 0, b1 = 0;
    int v = 0x12345678, w = 0;
    CHECK_OK(rt_cuda_stream_create(cu, 0, &s0, &d));
    CHECK_OK(rt_cuda_mem_alloc(cu, 0, 64, &b0, &d));
    CHECK_OK(rt_cuda_mem_alloc(cu, 1, 64, &b1, &d));
    Diag xd = {0};
    CHECK(rt_cuda_memcpy_h2d(cu, 1, b1, &v, sizeof v, s0, &xd) == LOOM_ERR_INVALID_ARGUMENT);
    CHECK_OK(rt_cuda_memcpy_h2d(cu, 0, b0, &v, sizeof v, s0, &d));
    CHECK_OK(rt_cuda_stream_synchronize(cu, s0, &d));
    CHECK_OK(rt_cuda_memcpy_h2d(cu, 1, b1, &v, sizeof v, NULL, &d));
    CHECK_OK(rt_cuda_memcpy_d2h(cu, 1, &w, b1, sizeof w, NULL, &d));
    CHECK(w == v);
    CHECK_OK(rt_cuda_mem_free(cu, 0, b0, &d));
    CHECK_OK(rt_cuda_mem_free(cu, 1, b1, &d));
    rt_cuda_stream_destroy(cu, s0);
  }
  rt_cuda_unload(cu);
}

/* --pool: the pool tests, which need no GPU (a fake allocator; ctest test_cuda_pool); no argument: the
 * driver tests, skipped without a driver or device (exit 77: ctest reports them as skipped). */
int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--pool")) {
    test_pool_classes();
    test_pool_reuse();
    test_pool_limit();
    test_pool_oom_retry();
    test_pool_host_oom();
    test_pool_threads();
  } else {
    test_driver();
  }
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : skipped ? 77 : 0;
}
