/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_pool.c: the device pool's stream order (runtime/gpu/gpu_pool.h "Stream order") over a fake
 * device with a fake stream model; runs everywhere, no GPU.
 *
 * The fake: memory is address ranges (nothing is read or written); a stream is a queue whose work is
 * counted (enq: items enqueued, done: items finished; the test finishes work when it likes); an event
 * recorded on a stream is done once the stream's done count reaches its enq count at the record; a
 * device synchronize finishes every stream. The fake remembers each block's last use (stream, item) and
 * checks the property the pool exists for, independently of the pool's bookkeeping: a block handed out
 * to a request on stream T, or given back to the device, is never still in use by unfinished work of
 * another stream (same stream: the new work is queued after the old, which is fine). Cases: same-stream
 * reuse without any event or wait; a block of another stream taken only once its work is done (never
 * waiting for it: a new block is made meanwhile); events recorded at free once two streams are seen;
 * stream_gone; the waits on the out-of-memory, limit and free_all_blocks paths (only when something is
 * in flight); the current-stream hook; events recycled and all destroyed; a stream-blind pool as before;
 * a random mix of streams, uses, frees and completions against the safety property. Then the shared GPU
 * layer over the mock driver of test_gpu_layer.c (gpu_mock.h) with fence_create and event_query added:
 * its pools are stream-ordered, blocks follow the calling thread's current stream, settle and a run's
 * temporaries wait for nothing, a destroyed stream's blocks become idle, and no event is left behind.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_mock.h"
#include "runtime/gpu/gpu_pool.h"

static int passed, failed;
#define CHECK(cond)                                                    \
  do {                                                                 \
    if (cond) {                                                        \
      passed++;                                                        \
    } else {                                                           \
      failed++;                                                        \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)
#define CHECK_OK(expr)                                                            \
  do {                                                                            \
    Diag d_ = {.status = LOOM_OK};                                                \
    LoomStatus st_ = (expr);                                                      \
    (void)d_;                                                                     \
    if (st_ == LOOM_OK) {                                                         \
      passed++;                                                                   \
    } else {                                                                      \
      failed++;                                                                   \
      fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #expr, d.msg); \
    }                                                                             \
  } while (0)

/* ---- the fake device and stream model ----------------------------------------------------------------- */
enum { NSTREAM = 4, NBLOCK = 1 << 17 /* hash slots for block records (open addressing) */ };
typedef struct FStream { long enq, done; } FStream;
typedef struct FEvent { FStream *s; long seq; } FEvent;
typedef struct FUse { uint64_t ptr; FStream *s; long seq; bool raw_live; } FUse;
typedef struct Fake {
  FStream dflt, st[NSTREAM]; /* dflt: the NULL stream */
  void *current;             /* what current_stream answers */
  uint64_t next, capacity, live;
  long raw_allocs, raw_frees, live_events, created_events, records, queries, syncs, fail_event_create;
  long unsafe; /* handed out or given back while another stream's work on it was unfinished */
  FUse uses[NBLOCK];
  int nuses;
} Fake;
static Fake fakes[7]; /* one per case (large: kept out of the stack) */

static FStream *S(Fake *f, void *h) { return h ? (FStream *)h : &f->dflt; }
static FUse *use_of(Fake *f, uint64_t ptr) {
  uint32_t i = (uint32_t)((ptr * 0x9E3779B97F4A7C15ull) >> 40) & (NBLOCK - 1);
  while (f->uses[i].ptr && f->uses[i].ptr != ptr) i = (i + 1) & (NBLOCK - 1);
  if (!f->uses[i].ptr) {
    if (f->nuses >= NBLOCK / 2) {
      fprintf(stderr, "test_gpu_pool: the fake's block table is full\n");
      exit(1);
    }
    f->nuses++;
    f->uses[i] = (FUse){.ptr = ptr};
  }
  return &f->uses[i];
}
/* Whether ptr may be used now by stream h (NULL h: by the host, e.g. given back to the device). */
static bool safe_for(Fake *f, uint64_t ptr, void *h, bool host) {
  FUse *u = use_of(f, ptr);
  if (!u->s) return true;
  if (!host && u->s == S(f, h)) return true;
  return u->s->done >= u->seq;
}

static LoomStatus f_alloc(void *user, int device, size_t size, uint64_t *out, Diag *d) {
  Fake *f = user;
  (void)device;
  (void)d;
  if (f->live + size > f->capacity) return LOOM_ERR_OUT_OF_MEMORY;
  *out = f->next;
  f->next += size + 512;
  f->live += size;
  f->raw_allocs++;
  FUse *u = use_of(f, *out);
  *u = (FUse){.ptr = *out, .raw_live = true};
  return LOOM_OK;
}
static void f_free(void *user, int device, uint64_t ptr) {
  Fake *f = user;
  (void)device;
  if (!safe_for(f, ptr, NULL, true)) f->unsafe++;
  use_of(f, ptr)->raw_live = false;
  f->raw_frees++; /* live is not lowered (sizes are not kept per block): the OOM case sets capacity */
}
static void *f_current(void *user, int device) {
  (void)device;
  return ((Fake *)user)->current;
}
static LoomStatus f_event_create(void *user, int device, void **out, Diag *d) {
  Fake *f = user;
  (void)device;
  if (f->fail_event_create) {
    f->fail_event_create--;
    return diag_error(d, LOOM_ERR_BACKEND, "fake: event creation refused");
  }
  *out = calloc(1, sizeof(FEvent));
  f->live_events++;
  f->created_events++;
  return LOOM_OK;
}
static void f_event_destroy(void *user, int device, void *e) {
  (void)device;
  ((Fake *)user)->live_events--;
  free(e);
}
static LoomStatus f_event_record(void *user, int device, void *e, void *stream, Diag *d) {
  Fake *f = user;
  (void)device;
  (void)d;
  FEvent *ev = e;
  ev->s = S(f, stream);
  ev->seq = ev->s->enq;
  f->records++;
  return LOOM_OK;
}
static int f_event_done(void *user, int device, void *e) {
  (void)device;
  FEvent *ev = e;
  ((Fake *)user)->queries++;
  return ev->s && ev->s->done >= ev->seq;
}
static LoomStatus f_sync(void *user, int device, Diag *d) {
  Fake *f = user;
  (void)device;
  (void)d;
  f->dflt.done = f->dflt.enq;
  for (int i = 0; i < NSTREAM; i++) f->st[i].done = f->st[i].enq;
  f->syncs++;
  return LOOM_OK;
}

static Fake *fake_init(int which) {
  Fake *f = &fakes[which];
  memset(f, 0, sizeof *f);
  f->next = 0x100000;
  f->capacity = 1ull << 40;
  return f;
}
static const RtPoolStreamHooks fake_hooks = {f_current, f_event_create, f_event_destroy, f_event_record, f_event_done,
                                             f_sync};
/* A stream-ordered pool over fake f. */
static RtGpuPool *ordered_pool(Fake *f, int device) {
  RtDevAllocator a = {f_alloc, f_free, f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, device, &a, &p, &d));
  if (p) CHECK_OK(rt_gpu_pool_order_streams(p, &fake_hooks, &d));
  if (!p) exit(1);
  return p;
}
/* Work on stream h that reads or writes ptr (enqueued, not finished). */
static void use(Fake *f, uint64_t ptr, void *h) {
  FStream *s = S(f, h);
  s->enq++;
  FUse *u = use_of(f, ptr);
  u->s = s;
  u->seq = s->enq;
}
static void finish(Fake *f, void *h) { S(f, h)->done = S(f, h)->enq; }
/* A block handed out on stream h: checked against the model, then it belongs to h. */
static uint64_t got(Fake *f, uint64_t ptr, void *h) {
  if (!safe_for(f, ptr, h, false)) f->unsafe++;
  return ptr;
}

/* ---- cases ------------------------------------------------------------------------------------------------ */
static void test_same_stream(void) {
  Fake *f = fake_init(0);
  RtGpuPool *p = ordered_pool(f, 0);
  Diag d = {0};
  CHECK(rt_gpu_pool_stream_ordered(p));
  void *A = &f->st[0];
  uint64_t x = 0, y = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 4096, A, &x, &d));
  use(f, x, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d)); /* its work still queued */
  CHECK_OK(rt_gpu_pool_alloc_on(p, 4000, A, &y, &d));
  CHECK(got(f, y, A) == x); /* at once, on its own stream */
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.reuses == 1 && s.raw_allocs == 1 && s.events_recorded == 0 && s.device_waits == 0);
  CHECK(f->queries == 0 && f->syncs == 0 && f->records == 0);
  /* the default stream (NULL) alike, and the current-stream hook names it */
  f->current = NULL;
  uint64_t z = 0, w = 0;
  CHECK_OK(rt_gpu_pool_alloc(p, 100, &z, &d));
  use(f, z, NULL);
  CHECK_OK(rt_gpu_pool_free(p, z, &d));
  CHECK_OK(rt_gpu_pool_alloc(p, 100, &w, &d));
  CHECK(got(f, w, NULL) == z && f->syncs == 0);
  CHECK_OK(rt_gpu_pool_free(p, w, &d));
  CHECK_OK(rt_gpu_pool_free(p, y, &d));
  CHECK(f->unsafe == 0);
  f_sync(f, 0, &d);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0 && f->raw_frees == f->raw_allocs);
}

static void test_cross_stream(void) {
  Fake *f = fake_init(1);
  RtGpuPool *p = ordered_pool(f, 1);
  Diag d = {0};
  void *A = &f->st[0], *B = &f->st[1];
  uint64_t x = 0, y = 0, z = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 1 << 20, A, &x, &d));
  use(f, x, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d)); /* one stream seen so far: no event */
  CHECK(f->records == 0);
  /* B may not take it while A's work is unfinished: a new block, and nobody waited */
  CHECK_OK(rt_gpu_pool_alloc_on(p, 1 << 20, B, &y, &d));
  CHECK(got(f, y, B) != x && f->syncs == 0);
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.passed_in_flight == 1 && s.cross_stream_reuses == 0 && s.raw_allocs == 2);
  /* once A is done, B takes it */
  finish(f, A);
  CHECK_OK(rt_gpu_pool_alloc_on(p, 1 << 20, B, &z, &d));
  CHECK(got(f, z, B) == x);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.cross_stream_reuses == 1 && s.raw_allocs == 2 && s.device_waits == 0);
  /* two streams seen: a free now records an event on the owner stream */
  use(f, z, B);
  long rec = f->records;
  CHECK_OK(rt_gpu_pool_free(p, z, &d));
  CHECK(f->records == rec + 1);
  uint64_t v = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 1 << 20, A, &v, &d)); /* B unfinished: not for A */
  CHECK(got(f, v, A) != z);
  CHECK_OK(rt_gpu_pool_alloc_on(p, 1 << 20, B, &v, &d));
  CHECK(got(f, v, B) == z); /* its own stream: at once, event or not */
  CHECK(f->unsafe == 0 && f->syncs == 0);
  f_sync(f, 1, &d);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0);
}

/* Giving blocks back to the device waits once when one may be in flight, never otherwise. */
static void test_waits_only_when_in_flight(void) {
  Fake *f = fake_init(2);
  RtGpuPool *p = ordered_pool(f, 0);
  Diag d = {0};
  void *A = &f->st[0];
  uint64_t x = 0, y = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 8192, A, &x, &d));
  use(f, x, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  rt_gpu_pool_free_all_blocks(p); /* x in flight: one wait, then given back safely */
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  CHECK(s.device_waits == 1 && f->syncs == 1 && s.cached_blocks == 0 && f->unsafe == 0);
  /* out of memory: the cached block (in flight) is given back after one wait, then the retry fits */
  CHECK_OK(rt_gpu_pool_alloc_on(p, 8192, A, &x, &d));
  use(f, x, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  f->capacity = f->live + 100; /* nothing new fits, even after the give-back (the fake never lowers live) */
  Diag oom = {0};
  LoomStatus st = rt_gpu_pool_alloc_on(p, 16384, A, &y, &oom); /* a different class: raw, out of memory */
  CHECK(st == LOOM_ERR_OUT_OF_MEMORY);
  rt_gpu_pool_stats(p, &s);
  CHECK(s.oom_retries == 1 && s.device_waits == 2 && s.cached_blocks == 0 && f->unsafe == 0);
  /* nothing in flight: no wait */
  f->capacity = 1ull << 40;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 512, A, &x, &d));
  use(f, x, A);
  finish(f, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  uint64_t z = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 512, &f->st[2], &z, &d)); /* another stream, A done: becomes idle there */
  CHECK(got(f, z, &f->st[2]) == x);
  finish(f, &f->st[2]);
  CHECK_OK(rt_gpu_pool_free(p, z, &d));
  long syncs = f->syncs;
  rt_gpu_pool_free_all_blocks(p); /* event recorded at the free, but the pool cannot know it is done: waits */
  CHECK(f->syncs <= syncs + 1 && f->unsafe == 0);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0);
}

/* stream_gone: the caller synchronized the stream; its free blocks go to any stream at once, its blocks in
 * use to the default stream. */
static void test_stream_gone(void) {
  Fake *f = fake_init(3);
  RtGpuPool *p = ordered_pool(f, 0);
  Diag d = {0};
  void *A = &f->st[0], *B = &f->st[1];
  uint64_t x = 0, held = 0, y = 0, w = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 2048, A, &x, &d));
  CHECK_OK(rt_gpu_pool_alloc_on(p, 2048, A, &held, &d));
  use(f, x, A);
  use(f, held, A);
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  finish(f, A); /* the layer's stream_synchronize */
  rt_gpu_pool_stream_gone(p, A);
  long q = f->queries;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 2048, B, &y, &d));
  CHECK(got(f, y, B) == x && f->queries == q); /* idle: no query */
  /* the held block now belongs to the default stream: freed, the default stream takes it at once */
  use(f, held, NULL);
  CHECK_OK(rt_gpu_pool_free(p, held, &d));
  CHECK_OK(rt_gpu_pool_alloc_on(p, 2048, NULL, &w, &d));
  CHECK(got(f, w, NULL) == held && f->unsafe == 0);
  f_sync(f, 0, &d);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0);
}

/* An event that cannot be made: the block stays with its own stream (never handed to another early). */
static void test_event_failure(void) {
  Fake *f = fake_init(4);
  RtGpuPool *p = ordered_pool(f, 0);
  Diag d = {0};
  void *A = &f->st[0], *B = &f->st[1];
  uint64_t x = 0, y = 0, z = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 600, A, &x, &d));
  CHECK_OK(rt_gpu_pool_alloc_on(p, 600, B, &y, &d)); /* two streams seen */
  use(f, x, A);
  f->fail_event_create = 100;
  CHECK_OK(rt_gpu_pool_free(p, x, &d)); /* the free itself succeeds */
  finish(f, A);
  CHECK_OK(rt_gpu_pool_alloc_on(p, 600, B, &z, &d)); /* no event to prove A is done: a new block */
  CHECK(got(f, z, B) != x);
  f->fail_event_create = 0;
  uint64_t v = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 600, &f->st[2], &v, &d)); /* an event recorded now on A, done: taken */
  CHECK(got(f, v, &f->st[2]) == x && f->unsafe == 0);
  f_sync(f, 0, &d);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0);
}

/* Without the stream hooks the pool is stream-blind, as before: any request takes the last freed block. */
static void test_stream_blind(void) {
  Fake *f = fake_init(5);
  RtDevAllocator a = {f_alloc, f_free, f};
  RtGpuPool *p = NULL;
  Diag d = {0};
  CHECK_OK(rt_gpu_pool_create(NULL, 0, &a, &p, &d));
  CHECK(!rt_gpu_pool_stream_ordered(p));
  uint64_t x = 0, y = 0;
  CHECK_OK(rt_gpu_pool_alloc_on(p, 700, &f->st[0], &x, &d));
  CHECK_OK(rt_gpu_pool_free(p, x, &d));
  CHECK_OK(rt_gpu_pool_alloc_on(p, 700, &f->st[1], &y, &d));
  CHECK(y == x && f->records == 0 && f->queries == 0);
  rt_gpu_pool_stream_gone(p, &f->st[0]); /* a no-op */
  /* ordering is set before the first block, with every hook */
  Diag late = {0}, missing = {0};
  CHECK(rt_gpu_pool_order_streams(p, &fake_hooks, &late) == LOOM_ERR_INVALID_ARGUMENT && strstr(late.msg, "already"));
  RtPoolStreamHooks partial = fake_hooks;
  partial.event_done = NULL;
  CHECK(rt_gpu_pool_order_streams(p, &partial, &missing) == LOOM_ERR_INVALID_ARGUMENT);
  CHECK(!rt_gpu_pool_stream_ordered(p));
  CHECK_OK(rt_gpu_pool_free(p, y, &d));
  rt_gpu_pool_destroy(p);
}

/* Random streams, sizes, uses, frees and completions: no block is ever handed to another stream (or given
 * back) while unfinished work of its last stream uses it; nothing waits except the give-back paths; events
 * are bounded by the cached blocks and all destroyed at the end. */
static void test_random(void) {
  Fake *f = fake_init(6);
  RtGpuPool *p = ordered_pool(f, 0);
  Diag d = {0};
  enum { SLOTS = 64 };
  uint64_t held[SLOTS] = {0};
  void *owner[SLOTS] = {0};
  uint64_t r = 12345;
  long ops = 0;
  for (int i = 0; i < 40000; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    int slot = (int)((r >> 33) % SLOTS), what = (int)((r >> 20) % 10);
    int si = (int)((r >> 40) % (NSTREAM + 1));
    void *h = si == NSTREAM ? NULL : &f->st[si];
    if (what < 4 && !held[slot]) {
      size_t size = 1 + (size_t)((r >> 8) % 5000);
      CHECK_OK(rt_gpu_pool_alloc_on(p, size, h, &held[slot], &d));
      got(f, held[slot], h);
      owner[slot] = h;
      use(f, held[slot], h);
    } else if (what < 6 && held[slot]) {
      use(f, held[slot], owner[slot]); /* more work on its owner stream */
    } else if (what < 8 && held[slot]) {
      CHECK_OK(rt_gpu_pool_free(p, held[slot], &d));
      held[slot] = 0;
    } else if (what == 8) {
      FStream *s = S(f, h);
      if (s->done < s->enq) s->done += 1 + (long)((r >> 50) % (uint64_t)(s->enq - s->done)); /* some finishes */
    } else if (what == 9 && (r >> 60) == 0) {
      rt_gpu_pool_free_all_blocks(p);
    }
    ops++;
  }
  RtGpuPoolStats s;
  rt_gpu_pool_stats(p, &s);
  printf("random: %ld ops, %llu reuses (%llu across streams, %llu passed in flight), %llu raw, %llu events "
         "recorded, %ld created, %llu waits\n",
         ops, (unsigned long long)s.reuses, (unsigned long long)s.cross_stream_reuses,
         (unsigned long long)s.passed_in_flight, (unsigned long long)s.raw_allocs,
         (unsigned long long)s.events_recorded, f->created_events, (unsigned long long)s.device_waits);
  CHECK(f->unsafe == 0);
  CHECK(s.reuses > 1000 && s.cross_stream_reuses > 0 && s.passed_in_flight > 0);
  CHECK(f->syncs == (long)s.device_waits);
  CHECK(f->live_events <= (long)s.cached_blocks + 64 + 16); /* events held by cached blocks, plus spares */
  for (int i = 0; i < SLOTS; i++)
    if (held[i]) CHECK_OK(rt_gpu_pool_free(p, held[i], &d));
  f_sync(f, 0, &d);
  rt_gpu_pool_destroy(p);
  CHECK(f->live_events == 0 && f->raw_frees == f->raw_allocs);
}

/* ---- the layer (runtime/gpu/gpu_device.c) with a driver that has the two hooks ---------------------------- */
static int fence_done = 0; /* what the mock's event_query answers */
static int m_event_query(void *drv, int device, void *e) {
  (void)e;
  need_current(drv, device);
  return fence_done;
}
static RtGpuDriver ordered_driver;

static void *layer_alloc(LoomContext *ctx, size_t n) {
  void *p = NULL;
  Diag d = {.status = LOOM_OK};
  if (rt_gpu_alloc(&ordered_driver, ctx, 0, n, &p, &d) != LOOM_OK) fprintf(stderr, "alloc: %s\n", d.msg);
  return p;
}

static void test_layer(void) {
  (void)D;
  ordered_driver = mock_driver;
  ordered_driver.fence_create = m_event_create;
  ordered_driver.event_query = m_event_query;
  const RtGpuDriver *OD = &ordered_driver;
  Mock m;
  mock_init(&m, 32);
  mock_next = &m;
  mock_current = -1;
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) exit(1);
  Diag d = {.status = LOOM_OK};
  CHECK_OK(rt_gpu_open(OD, ctx, &d));
  RtStream *s0 = NULL, *s1 = NULL;
  CHECK_OK(rt_gpu_stream_create(OD, ctx, 0, &s0, &d));
  CHECK_OK(rt_gpu_stream_create(OD, ctx, 0, &s1, &d));
  /* on s0: a freed block comes back at once, no event, no wait */
  CHECK_OK(rt_gpu_stream_use(OD, ctx, 0, s0, &d));
  void *a = layer_alloc(ctx, 1000);
  CHECK_OK(rt_gpu_free(OD, ctx, 0, a, 1000, &d));
  void *b = layer_alloc(ctx, 900);
  CHECK(a && b == a && m.raw_allocs == 1);
  int syncs = m.stream_syncs;
  rt_gpu_settle(OD, ctx, 0); /* stream-ordered: nothing to wait for */
  CHECK(m.stream_syncs == syncs);
  CHECK_OK(rt_gpu_free(OD, ctx, 0, b, 900, &d));
  /* on s1: s0's block is taken only once its event is done */
  CHECK_OK(rt_gpu_stream_use(OD, ctx, 0, s1, &d));
  fence_done = 0;
  void *c = layer_alloc(ctx, 1000);
  CHECK(c && c != a && m.raw_allocs == 2);
  fence_done = 1;
  void *e = layer_alloc(ctx, 1000);
  CHECK(e == a && m.raw_allocs == 2);
  CHECK(m.stream_syncs == syncs && m.live_events >= 1);
  /* the default stream: s1's freed block, after its event */
  CHECK_OK(rt_gpu_free(OD, ctx, 0, c, 1000, &d));
  CHECK_OK(rt_gpu_stream_use(OD, ctx, 0, NULL, &d));
  void *f = layer_alloc(ctx, 1000);
  CHECK(f == c);
  /* destroying s0: synchronized once; its blocks (e is s1's now) untouched, the free ones idle */
  CHECK_OK(rt_gpu_free(OD, ctx, 0, e, 1000, &d));
  syncs = m.stream_syncs;
  rt_gpu_stream_destroy(OD, ctx, s0);
  CHECK(m.stream_syncs == syncs + 1);
  fence_done = 0;
  void *g = layer_alloc(ctx, 1000); /* e is s1's with an event not done: a new block on the default stream */
  CHECK(g && g != e);
  rt_gpu_stream_destroy(OD, ctx, s1);
  void *h = layer_alloc(ctx, 1000); /* s1 gone (synchronized): e is idle, anyone's */
  CHECK(h == e);
  /* a borrowed stream (loom_stream_wrap: CuPy's ExternalStream) whose owner destroys the handle while loom
   * still holds the wrapper and a block used on it (found on the H200: test_cuda_memory's foreign stream
   * crashed). The pool never records on a borrowed handle: the block counts as the default stream's (taken
   * back at once there, even with events pending), work on the stream is settled while it is current, and
   * after the owner is done loom makes no call on the handle (a dead handle's calls count in not_current). */
  void *bh = NULL;
  RtStream *w = NULL;
  CHECK_OK(OD->set_current(&m, 0, &d));
  CHECK_OK(OD->stream_create(&m, 0, &bh, &d));
  CHECK_OK(rt_gpu_stream_wrap(OD, ctx, 0, bh, &w, &d));
  CHECK_OK(rt_gpu_stream_use(OD, ctx, 0, w, &d));
  void *bw = layer_alloc(ctx, 5000);
  syncs = m.stream_syncs;
  rt_gpu_settle(OD, ctx, 0); /* a borrowed stream is settled like a stream-blind pool's */
  CHECK(bw && m.stream_syncs == syncs + 1);
  CHECK_OK(rt_gpu_stream_use(OD, ctx, 0, NULL, &d));
  ((MockStream *)bh)->device = 77; /* the owner destroyed it */
  int dead_calls = m.not_current;
  syncs = m.stream_syncs;
  rt_gpu_stream_destroy(OD, ctx, w);
  CHECK_OK(rt_gpu_free(OD, ctx, 0, bw, 5000, &d));
  fence_done = 0;
  void *bw2 = layer_alloc(ctx, 5000);
  CHECK(bw2 == bw && m.stream_syncs == syncs && m.not_current == dead_calls);
  rt_gpu_free(OD, ctx, 0, bw2, 5000, &d);
  ((MockStream *)bh)->device = 0;
  OD->stream_destroy(&m, 0, bh);
  RtPoolStats ps;
  CHECK_OK(rt_gpu_device_pool_stats(OD, ctx, 0, &ps, &d));
  CHECK(ps.used_bytes == 3 * 1024);
  rt_gpu_free(OD, ctx, 0, f, 1000, &d);
  rt_gpu_free(OD, ctx, 0, g, 1000, &d);
  rt_gpu_free(OD, ctx, 0, h, 1000, &d);
  CHECK_OK(rt_gpu_device_pool_trim(OD, ctx, 0, &d));
  rt_gpu_close(OD, ctx);
  loom_context_destroy(ctx);
  CHECK(m.live_allocs == 0 && m.live_events == 0 && m.live_streams == 0 && m.not_current == 0);
  if (m.live_events || m.not_current)
    fprintf(stderr, "layer: %d events left, %d calls without the device current\n", m.live_events, m.not_current);
  pthread_mutex_destroy(&m.lock);
}

int main(void) {
  test_same_stream();
  test_cross_stream();
  test_waits_only_when_in_flight();
  test_stream_gone();
  test_event_failure();
  test_stream_blind();
  test_random();
  test_layer();
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
