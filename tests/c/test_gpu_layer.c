/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_layer.c: the shared GPU device layer (runtime/gpu/) over a mock driver (gpu_mock.h), no GPU.
 *
 * Cases: pool reuse and trim; copies host <-> device, device <-> device and peer; streams and events (the
 * current stream per device and thread, settle); the kernel table and launch shapes (elementwise vector and
 * scalar entries, cached rows, split reductions, column splits) with waves 32 and 64; the disk cache storing
 * and loading the mock's binaries (no compile, no link on a hit; a tier-0 entry tiered up by the process
 * that loads it); and every fallible hook failing in turn (the N-th call fails): each step then returns
 * the injected status or succeeds, and nothing leaks (the mock's counts; ASan/LSan for host memory). Every
 * case also checks that the layer made the device current before each hook that names it.
 *
 * The mock borrows the HIP device kind's slot of its own contexts (no HIP device is opened there) and is
 * closed before each context is destroyed. Prints "N passed, N failed".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_mock.h"

static int passed, failed;
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (cond) passed++;                                       \
    else {                                                    \
      failed++;                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                           \
      fputc('\n', stderr);                                    \
    }                                                         \
  } while (0)
#define CHECK_OK(expr) CHECK((expr) == LOOM_OK, "%s: %s", #expr, d.msg)


/* ---- helpers ---------------------------------------------------------------------------------------------- */
static LoomContext *open_ctx(Mock *m) {
  mock_next = m;
  mock_current = -1;
  LoomContext *ctx = NULL;
  if (loom_context_create(&ctx) != LOOM_OK) {
    fprintf(stderr, "cannot create a context\n");
    exit(1);
  }
  return ctx;
}

/* Closes the layer's state (and the tier queue), destroys the context, and checks that the mock got
 * every object back. */
static void close_ctx(LoomContext *ctx, Mock *m, const char *what) {
  rt_gpu_close(D, ctx);
  loom_context_destroy(ctx);
  CHECK(m->live_allocs == 0 && m->live_streams == 0 && m->live_events == 0 && m->live_modules == 0 &&
            m->retained[0] == 0 && m->retained[1] == 0 && !m->loaded,
        "%s: left behind: %d allocations, %d streams, %d events, %d modules, retained %d/%d, loaded %d", what,
        m->live_allocs, m->live_streams, m->live_events, m->live_modules, m->retained[0], m->retained[1], m->loaded);
  CHECK(m->not_current == 0, "%s: %d hook calls without their device current", what, m->not_current);
  pthread_mutex_destroy(&m->lock);
}

static LoomNode input_at(LoomGraph *g, void *data, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = LOOM_FLOAT32;
  a.ndim = ndim;
  memcpy(a.shape, shape, (size_t)ndim * sizeof *shape);
  pass_contiguous_strides(ndim, shape, a.strides);
  LoomNode x = -1;
  if (loom_input(g, &a, &x) != LOOM_OK) fprintf(stderr, "loom_input failed\n");
  return x;
}

/* The schedule of root with a C-contiguous output (in arena). */
static Schedule *schedule_of(LoomGraph *g, LoomNode root, Arena *arena, Diag *d) {
  arena_init(arena, g->ctx);
  LoomArray *out = arena_alloc(arena, sizeof *out);
  int32_t *roots = arena_alloc(arena, sizeof *roots);
  if (!out || !roots) return NULL;
  memset(out, 0, sizeof *out);
  const IrNode *x = &g->ir.nodes[root];
  roots[0] = root;
  out->dtype = (LoomDType)x->dtype;
  out->ndim = x->ndim;
  memcpy(out->shape, x->shape, sizeof out->shape);
  pass_contiguous_strides(x->ndim, x->shape, out->strides);
  IrModule mod;
  memset(&mod, 0, sizeof mod);
  mod.graph = &g->ir;
  mod.arena = arena;
  mod.nroots = 1;
  mod.roots = roots;
  mod.outs = out;
  return pass_run_pipeline(&mod, d) == LOOM_OK && mod.schedule->nkernel == 1 ? mod.schedule : NULL;
}

/* Runs a one-kernel schedule on device 0 of the mock, logging its launches. */
static LoomStatus run_on(LoomContext *ctx, Mock *m, LoomGraph *g, const Schedule *s, void *out, Diag *d) {
  const KernelIr *ir = s->kernels[0].ir;
  int base = ir->ndim + ir->nbuf + ir->nbuf * ir->ndim;
  m->param_words = base + CG_GPU_EXTRA;
  m->partials_word = base + 1;
  m->nlaunch = 0;
  void *outs[1] = {out};
  RtRun r = {.graph = &g->ir, .schedule = s, .pinned = NULL, .out_data = outs, .nouts = 1};
  return rt_gpu_run_schedule(D, ctx, 0, &r, d);
}

/* The kernel table's entry of a schedule's kernel (pinned, then unpinned: the table keeps it). */
static const GpuFn *fn_of(LoomContext *ctx, const Schedule *s, Diag *d) {
  const RtKernel *k = NULL;
  if (rt_gpu_prepare(D, ctx, 0, s->kernels[0].ir, -1, &k, d) != LOOM_OK) return NULL;
  rt_gpu_unpin(D, ctx, 0, k);
  return (const GpuFn *)k;
}

/* The block finish's block for few O points of a one-phase kernel (gpu_launch_policy.c finishb_block):
 * 512 threads where the kernel's block is smaller and the entry can launch 512, else the kernel's block. */
static uint32_t wide_finish_block(const GpuFn *f) {
  if (!f) return 0;
  return f->meta.block < 512 && f->finishb_max_block >= 512 ? 512u : (uint32_t)f->meta.block;
}

/* Which entry of f a launched function is (-1: none). */
static int entry_of(const GpuFn *f, const Launch *l) {
  for (int i = 0; i < CG_NENTRY; i++)
    if (f->meta.names[i][0] && !strcmp(f->meta.names[i], l->fn->name)) return i;
  return -1;
}

static void *dev_alloc(LoomContext *ctx, int index, size_t n) {
  void *p = NULL;
  Diag d = {.status = LOOM_OK};
  if (rt_gpu_alloc(D, ctx, index, n, &p, &d) != LOOM_OK) fprintf(stderr, "alloc: %s\n", d.msg);
  return p;
}

static uint64_t stats_of(LoomContext *ctx, int which) {
  LoomStats st;
  loom_get_stats(ctx, &st);
  return which ? st.cache_hits : st.kernels_compiled;
}

/* ---- pools, copies, streams, events -------------------------------------------------------------------- */
static void test_memory_streams(void) {
  Mock m;
  mock_init(&m, 32);
  LoomContext *ctx = open_ctx(&m);
  Diag d = {.status = LOOM_OK};
  CHECK_OK(rt_gpu_open(D, ctx, &d));
  CHECK(rt_gpu_count(D, ctx) == MOCK_DEVICES, "count %d", rt_gpu_count(D, ctx));

  /* the pool: a block freed is handed out again for its size class; trim gives cached blocks back */
  void *a = dev_alloc(ctx, 0, 1000);
  CHECK_OK(rt_gpu_free(D, ctx, 0, a, 1000, &d));
  void *b = dev_alloc(ctx, 0, 600);
  CHECK(a && b == a && m.raw_allocs == 1, "reuse: %p %p, %d raw allocations", a, b, m.raw_allocs);
  void *c = dev_alloc(ctx, 0, 3000);
  CHECK(c && c != b && m.raw_allocs == 2, "a new class: %d raw allocations", m.raw_allocs);
  RtPoolStats ps;
  CHECK_OK(rt_gpu_device_pool_stats(D, ctx, 0, &ps, &d));
  CHECK(ps.used_bytes == 1024 + 4096 && ps.cached_bytes == 0 && ps.reuses == 1 && ps.allocs == 3,
        "stats: used %llu cached %llu reuses %llu allocs %llu", (unsigned long long)ps.used_bytes,
        (unsigned long long)ps.cached_bytes, (unsigned long long)ps.reuses, (unsigned long long)ps.allocs);
  CHECK_OK(rt_gpu_free(D, ctx, 0, c, 3000, &d));
  Diag bad = {.status = LOOM_OK};
  CHECK(rt_gpu_free(D, ctx, 0, (char *)b + 8, 8, &bad) == LOOM_ERR_INVALID_ARGUMENT, "a foreign pointer freed");
  CHECK_OK(rt_gpu_device_pool_trim(D, ctx, 0, &d));
  CHECK(m.live_allocs == 1, "trim: %d blocks live", m.live_allocs);

  /* copies: host -> device, device -> device, device -> device of another GPU (peer), device -> host */
  enum { N = 1000 };
  float host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (float)i * 0.5f - 7.0f;
  void *x = dev_alloc(ctx, 0, sizeof host), *y = dev_alloc(ctx, 0, sizeof host), *z = dev_alloc(ctx, 1, sizeof host);
  const LoomDeviceKind K = LOOM_DEVICE_HIP, H = LOOM_DEVICE_HOST;
  CHECK_OK(rt_gpu_copy(D, ctx, x, K, 0, host, H, 0, sizeof host, &d));
  CHECK_OK(rt_gpu_copy(D, ctx, y, K, 0, x, K, 0, sizeof host, &d));
  CHECK_OK(rt_gpu_copy(D, ctx, z, K, 1, y, K, 0, sizeof host, &d));
  memset(back, 0, sizeof back);
  CHECK_OK(rt_gpu_copy(D, ctx, back, H, 0, z, K, 1, sizeof host, &d));
  CHECK(!memcmp(back, host, sizeof host) && m.peer_copies == 1, "copies: data differs or %d peer copies",
        m.peer_copies);
  CHECK(rt_gpu_copy(D, ctx, x, K, 0, NULL, H, 0, 4, &d) == LOOM_ERR_INVALID_ARGUMENT, "NULL source accepted");
  d.status = LOOM_OK;

  /* streams: the current stream per device and thread; copies use it and wait for it */
  RtStream *s0 = NULL, *s1 = NULL;
  CHECK_OK(rt_gpu_stream_create(D, ctx, 0, &s0, &d));
  CHECK_OK(rt_gpu_stream_create(D, ctx, 1, &s1, &d));
  CHECK(rt_gpu_current_stream(D, ctx, 0) == NULL, "a current stream before stream_use");
  CHECK_OK(rt_gpu_stream_use(D, ctx, 0, s0, &d));
  Diag wrong = {.status = LOOM_OK};
  CHECK(rt_gpu_stream_use(D, ctx, 0, s1, &wrong) == LOOM_ERR_INVALID_ARGUMENT && strstr(wrong.msg, "device 1"),
        "a stream of device 1 used on device 0: %s", wrong.msg);
  CHECK(rt_gpu_current_stream(D, ctx, 0) == s0 && rt_gpu_current_stream(D, ctx, 1) == NULL, "current streams");
  int syncs = m.stream_syncs;
  CHECK_OK(rt_gpu_copy(D, ctx, x, K, 0, host, H, 0, sizeof host, &d));
  CHECK(m.last_copy_stream == rt_gpu_stream_handle(s0) && m.last_copy_stream && m.stream_syncs == syncs + 1,
        "the copy ran on the current stream and waited for it");
  rt_gpu_settle(D, ctx, 0);
  CHECK(m.stream_syncs == syncs + 2, "settle synchronizes the current stream");

  /* events: recorded on the current stream; elapsed within one device only */
  RtEvent *e0 = NULL, *e1 = NULL, *e2 = NULL;
  float ms = 0;
  CHECK_OK(rt_gpu_event_create(D, ctx, 0, &e0, &d));
  CHECK_OK(rt_gpu_event_create(D, ctx, 0, &e1, &d));
  CHECK_OK(rt_gpu_event_create(D, ctx, 1, &e2, &d));
  CHECK_OK(rt_gpu_event_record(D, ctx, 0, e0, NULL, &d));
  CHECK_OK(rt_gpu_event_record(D, ctx, 0, e1, s0, &d));
  CHECK_OK(rt_gpu_event_synchronize(D, ctx, e1, &d));
  CHECK_OK(rt_gpu_event_elapsed(D, ctx, e0, e1, &ms, &d));
  CHECK(ms == 1.0f && ((MockEvent *)((GpuEvent *)e0)->h)->stream == rt_gpu_stream_handle(s0),
        "events: %g ms, recorded on the current stream", ms);
  CHECK(rt_gpu_event_elapsed(D, ctx, e0, e2, &ms, &wrong) == LOOM_ERR_INVALID_ARGUMENT, "events of two devices");
  CHECK(rt_gpu_event_record(D, ctx, 1, e2, s0, &wrong) == LOOM_ERR_INVALID_ARGUMENT, "a stream of another device");
  rt_gpu_event_destroy(D, ctx, e0);
  rt_gpu_event_destroy(D, ctx, e1);
  rt_gpu_event_destroy(D, ctx, e2);

  /* destroying the current stream unsets it */
  rt_gpu_stream_destroy(D, ctx, s0);
  rt_gpu_stream_destroy(D, ctx, s1);
  CHECK(rt_gpu_current_stream(D, ctx, 0) == NULL && m.live_streams == 0, "a destroyed stream stays current");
  CHECK_OK(rt_gpu_synchronize(D, ctx, 1, &d));
  Diag none = {.status = LOOM_OK};
  CHECK(rt_gpu_synchronize(D, ctx, 2, &none) == LOOM_ERR_INVALID_ARGUMENT && strstr(none.msg, "Mock device 2"),
        "device 2: %s", none.msg);
  rt_gpu_free(D, ctx, 0, b, 600, &d);
  rt_gpu_free(D, ctx, 0, x, sizeof host, &d);
  rt_gpu_free(D, ctx, 0, y, sizeof host, &d);
  rt_gpu_free(D, ctx, 1, z, sizeof host, &d);
  close_ctx(ctx, &m, "memory and streams");

  /* a load that failed with a driver error (not "no driver"/"no device", which is remembered) is tried
   * again by the next call, which then works */
  mock_init(&m, 32);
  m.fail_at = 1;
  ctx = open_ctx(&m);
  Diag f1 = {.status = LOOM_OK}, f2 = {.status = LOOM_OK};
  a = NULL;
  CHECK(rt_gpu_open(D, ctx, &f1) == LOOM_ERR_BACKEND && strstr(f1.msg, "injected failure of load") &&
            rt_gpu_count(D, ctx) == MOCK_DEVICES && rt_gpu_alloc(D, ctx, 0, 8, &a, &f2) == LOOM_OK,
        "a failed load, then a working one: '%s' then '%s'", f1.msg, f2.msg);
  if (a) rt_gpu_free(D, ctx, 0, a, 8, &f2);
  close_ctx(ctx, &m, "failed load");
}

/* ---- the kernel table and launch shapes ------------------------------------------------------------------ */
/* The mock's occupancy (at most 16 blocks and 2048 threads per multiprocessor, 4 multiprocessors) makes
 * 128 threads the elementwise block of any wave dividing 128 (16 x 128 = 2048 resident threads; ties go to
 * the smaller block) and caps the grid at 4 x 16 = 64 blocks. */
static void test_launch_shapes(int wave) {
  Mock m;
  mock_init(&m, wave);
  m.tiers = false; /* the tier thread would swap handles under the checks */
  LoomContext *ctx = open_ctx(&m);
  setenv("LOOM_CACHE_DIR", "", 1);
  Diag d = {.status = LOOM_OK};
  LoomGraph *g = NULL;
  loom_graph_create(ctx, &g);
  enum { N = 4098, R = 64, C = 100, NS = 1 << 20 };
  float *x = dev_alloc(ctx, 0, (size_t)NS * 4), *y = dev_alloc(ctx, 0, N * 4), *out = dev_alloc(ctx, 0, (size_t)NS * 4);
  Arena ar;

  /* elementwise x * y + x: the whole-vector entry first (4096 is a multiple of the 4 lanes), the vector
   * entry with its tail loop for 4098 points, the scalar entry for an unaligned base: each compiled and
   * linked when a launch first needs it */
  for (int variant = 0; variant < 3; variant++) {
    int64_t n = variant == 0 ? 4096 : N;
    float *xv = variant == 2 ? x + 1 : x;
    LoomNode a = input_at(g, xv, 1, &n), b = input_at(g, y, 1, &n), t, u;
    loom_binary(g, LOOM_OP_MUL, a, b, &t);
    loom_binary(g, LOOM_OP_ADD, t, a, &u);
    Schedule *s = schedule_of(g, u, &ar, &d);
    CHECK(s != NULL, "elementwise schedule: %s", d.msg);
    if (!s) continue;
    int links = m.links[3]; /* tiers off: linked at the final level, 2 */
    CHECK_OK(run_on(ctx, &m, g, s, out, &d));
    const GpuFn *f = fn_of(ctx, s, &d);
    int want = variant == 0 ? E_VECW : variant == 1 ? E_VEC : E_MAIN;
    int64_t lanes = f ? f->meta.vec_lanes : 0, steps = variant == 2 ? n : n / (lanes ? lanes : 1);
    /* an uncapped grid: the vector entries 16 points (at least 2 vectors) a thread, the scalar entry 16
     * points a thread (runtime/gpu/gpu_launch_policy.c) */
    int64_t per = variant == 2 ? 16 : lanes && 16 / lanes > 2 ? 16 / lanes : 2;
    int64_t grid = (steps + 128 * per - 1) / (128 * per);
    CHECK(f && m.nlaunch == 1 && entry_of(f, &m.log[0]) == want && m.log[0].block == 128 && m.log[0].grid == grid &&
              m.links[3] == links + 1 && lanes == 4,
          "wave %d elementwise %d: %d launches, entry %d (want %d), block %u grid %u (want %lld), %d links, %lld lanes",
          wave, variant, m.nlaunch, f ? entry_of(f, &m.log[0]) : -9, want, m.log[0].block, m.log[0].grid,
          (long long)grid, m.links[3] - links, (long long)lanes);
    const uint64_t *w = m.log[0].words; /* shape, 3 bases in some order, strides, nparts 1, no partials */
    if (f && f->meta.nwords == 1 + 3 + 3 + CG_GPU_EXTRA) {
      bool bases = true;
      for (int i = 1; i <= 3; i++)
        bases = bases && (w[i] == (uint64_t)(uintptr_t)xv || w[i] == (uint64_t)(uintptr_t)y ||
                          w[i] == (uint64_t)(uintptr_t)out);
      CHECK(w[0] == (uint64_t)n && bases && w[4] == 1 && w[5] == 1 && w[6] == 1 && w[7] == 1 && w[8] == 0,
            "elementwise parameter block");
    } else {
      CHECK(false, "elementwise: %d parameter words, expected 3 buffers", f ? f->meta.nwords : -1);
    }
    arena_free_all(&ar);
  }

  /* a row kept in registers: x - max(x, 1, keepdims) over rows of 100 (<= wave * cache_k): the short-row mode,
   * g lanes per row (the least power of two with g * cache_k >= 100; a multi-phase row on the vector entry:
   * with at most 2 vectors a lane), 256 / g rows per block of 256, g in extra word 2
   * (runtime/gpu/gpu_launch_policy.c) */
  {
    int64_t shape[2] = {R, C};
    int32_t ax = 1;
    LoomNode a = input_at(g, x, 2, shape), t, u;
    loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &ax, 1, &t);
    loom_binary(g, LOOM_OP_SUB, a, t, &u);
    Schedule *s = schedule_of(g, u, &ar, &d);
    CHECK_OK(s ? run_on(ctx, &m, g, s, out, &d) : LOOM_ERR_INTERNAL);
    const GpuFn *f = s ? fn_of(ctx, s, &d) : NULL;
    int k = f ? f->meta.cache_k : 0, e = f && m.nlaunch ? entry_of(f, &m.log[0]) : -1;
    int64_t grp = 1;
    while (k && grp * k < C) grp *= 2;
    /* a multi-phase row (max, then the map) on the vector entry: at most 2 vectors a lane */
    int64_t cl = f ? f->meta.cache_lanes : 0;
    if (e == E_CACHEDV && cl > 0)
      while (grp < wave && grp * cl * 2 < C) grp *= 2;
    uint32_t bl = m.nlaunch ? m.log[0].block : 0;
    int64_t rows_per_block = bl ? bl / grp : 1;
    CHECK(f && m.nlaunch == 1 && (e == E_CACHEDV || e == E_CACHED) && bl == 256 && m.partials_word > 0 &&
              m.log[0].words[m.partials_word + 1] == (uint64_t)grp &&
              m.log[0].grid == (uint32_t)((R + rows_per_block - 1) / rows_per_block),
          "wave %d cached row: entry %d, block %u for rows of %d at %d per thread (%lld lanes a row), grid %u", wave, e,
          bl, C, k, (long long)grp, m.log[0].grid);
    printf("wave %d: cached row entry %s, block %u\n", wave, e == E_CACHEDV ? "cachedv" : "cached", bl);
    arena_free_all(&ar);
  }

  /* a full sum of 2^20 points: the vector part entry on a persistent grid (64 parts of 16K points), the block
   * finish (512 threads for few O points where the entry can launch them); the partials come from the pool
   * and go back to it */
  {
    int64_t n = NS;
    LoomNode a = input_at(g, x, 1, &n), t;
    loom_reduce(g, LOOM_REDUCE_SUM, a, 0, NULL, 0, &t);
    Schedule *s = schedule_of(g, t, &ar, &d);
    RtPoolStats before, after;
    rt_gpu_device_pool_stats(D, ctx, 0, &before, &d);
    CHECK_OK(s ? run_on(ctx, &m, g, s, out, &d) : LOOM_ERR_INTERNAL);
    rt_gpu_device_pool_stats(D, ctx, 0, &after, &d);
    const GpuFn *f = s ? fn_of(ctx, s, &d) : NULL;
    int blk = f ? f->meta.block : 0, resident = 4 * mock_blocks_per_sm(blk > 0 ? blk : 1);
    CHECK(f && m.nlaunch == 2 && entry_of(f, &m.log[0]) == E_PARTV && entry_of(f, &m.log[1]) == E_FINISHB &&
              m.log[0].grid == (uint32_t)(64 < resident ? 64 : resident) && m.log[0].block == (uint32_t)blk &&
              blk % wave == 0 && m.log[1].grid == 1 && m.log[1].block == wide_finish_block(f) &&
              m.log[0].words[m.partials_word - 1] == 64 && m.log[0].partials_live && m.log[1].partials_live,
          "wave %d full sum: %d launches, entries %d %d, grids %u %u, blocks %u %u (kernel block %d), nparts %llu",
          wave, m.nlaunch, f ? entry_of(f, &m.log[0]) : -9, f ? entry_of(f, &m.log[1]) : -9, m.log[0].grid,
          m.log[1].grid, m.log[0].block, m.log[1].block, blk, (unsigned long long)m.log[0].words[m.partials_word - 1]);
    CHECK(after.used_bytes == before.used_bytes && after.cached_bytes > before.cached_bytes,
          "the partials went back to the pool");
    arena_free_all(&ar);
  }

  /* a column sum (4096 x 64 -> 64): 128 parts of R, folded 8 a block of 512 threads (codegen/gpu_colfold.c:
   * extra word 2 = 8 << 8) into 16 records a column, then the thread finish over those 16 */
  {
    int64_t shape[2] = {4096, 64};
    int32_t ax = 0;
    LoomNode a = input_at(g, x, 2, shape), t;
    loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax, 0, &t);
    Schedule *s = schedule_of(g, t, &ar, &d);
    CHECK_OK(s ? run_on(ctx, &m, g, s, out, &d) : LOOM_ERR_INTERNAL);
    const GpuFn *f = s ? fn_of(ctx, s, &d) : NULL;
    CHECK(f && f->meta.strategy == CG_GPU_COL && m.nlaunch == 2 && entry_of(f, &m.log[0]) == E_PART &&
              m.log[0].grid == 16 && m.log[0].block == 512 && m.log[0].words[m.partials_word - 1] == 128 &&
              m.log[0].words[m.partials_word + 1] == 8u << 8 && entry_of(f, &m.log[1]) == E_FINISH &&
              m.log[1].words[m.partials_word - 1] == 16 && m.log[1].grid == 1u && m.log[1].block == 256u,
          "wave %d column sum: %d launches, grid %u block %u nparts %llu", wave, m.nlaunch, m.log[0].grid,
          m.log[0].block, (unsigned long long)m.log[0].words[m.partials_word - 1]);
    arena_free_all(&ar);
  }
  CHECK(stats_of(ctx, 0) == 6 && m.module_loads == 6, "wave %d: %llu compiles, %d modules", wave,
        (unsigned long long)stats_of(ctx, 0), m.module_loads);

  /* column variance (4096 x 64 -> 64: the mean, then the squared deviations from it): the phase split
   * (codegen/gpu_phases.c) over all 64 x 128 items, 8 parts folded a block (16 records a column), then its
   * thread finish; the phase in extra word 2 (the part's: | 8 << 8), the
   * finished accumulators after the partials in word 3. The squared deviations are folded into phase 0's
   * pass (codegen/gpu_moments.c): ONE read of x, phase 0 only (two with LOOM_GPU_ONEPASS_VAR=0) */
  {
    int64_t shape[2] = {4096, 64};
    int32_t ax = 0;
    LoomNode a = input_at(g, x, 2, shape), sum, inv, mu, dev, sq, v;
    loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax, 1, &sum);
    loom_weak_float(g, 1.0 / 4096, &inv);
    loom_binary(g, LOOM_OP_MUL, sum, inv, &mu);
    loom_binary(g, LOOM_OP_SUB, a, mu, &dev);
    loom_binary(g, LOOM_OP_MUL, dev, dev, &sq);
    loom_reduce(g, LOOM_REDUCE_SUM, sq, 1, &ax, 0, &v);
    Schedule *s = schedule_of(g, v, &ar, &d);
    CHECK_OK(s ? run_on(ctx, &m, g, s, out, &d) : LOOM_ERR_INTERNAL);
    const GpuFn *f = s ? fn_of(ctx, s, &d) : NULL;
    const KernelIr *ir = s ? s->kernels[0].ir : NULL;
    bool ok = f && ir && ir->nphase >= 2 && f->meta.strategy == CG_GPU_COL && m.nlaunch == 2;
    int pw = m.partials_word;
    for (int i = 0; ok && i < 2; i++) {
      const Launch *l = &m.log[i];
      int want = i % 2 ? E_FINISH : E_PART;
      uint64_t fin = l->words[pw] + (uint64_t)64 * 16 * (uint64_t)f->meta.acc_size;
      ok = entry_of(f, l) == want && l->words[pw - 1] == (i % 2 ? 16u : 128u) &&
           l->words[pw + 1] == (i % 2 ? 0u : 8u << 8) && l->words[pw + 2] == fin && l->partials_live &&
           (i % 2 ? l->grid == 1 : l->grid == 16 && l->block == 512);
    }
    CHECK(ok, "wave %d column variance: %d launches (want part, finish of phase 0: one pass)", wave, m.nlaunch);
    arena_free_all(&ar);
  }
  loom_graph_destroy(g);
  rt_gpu_free(D, ctx, 0, x, (size_t)NS * 4, &d);
  rt_gpu_free(D, ctx, 0, y, N * 4, &d);
  rt_gpu_free(D, ctx, 0, out, (size_t)NS * 4, &d);
  close_ctx(ctx, &m, "launch shapes");
}

/* ---- the disk cache of binaries and the tiers ------------------------------------------------------------- */
/* Prepares x * 3 + y (4096 points) in a fresh context of a fresh mock; *level: the JIT level of the module
 * its whole-vector entry runs (the mock binary says). */
static void prepare_once(Mock *m, int wave, int fail_level, uint64_t *compiled, uint64_t *hits, int *level) {
  mock_init(m, wave);
  m->fail_level = fail_level;
  LoomContext *ctx = open_ctx(m);
  Diag d = {.status = LOOM_OK};
  LoomGraph *g = NULL;
  loom_graph_create(ctx, &g);
  float *x = dev_alloc(ctx, 0, 4096 * 4);
  int64_t n = 4096;
  LoomNode a = input_at(g, x, 1, &n), b = input_at(g, x, 1, &n), three, t, u;
  loom_weak_float(g, 3.0, &three);
  loom_binary(g, LOOM_OP_MUL, a, three, &t);
  loom_binary(g, LOOM_OP_ADD, t, b, &u);
  Arena ar;
  Schedule *s = schedule_of(g, u, &ar, &d);
  const RtKernel *k = NULL;
  CHECK_OK(s ? rt_gpu_prepare(D, ctx, 0, s->kernels[0].ir, n, &k, &d) : LOOM_ERR_INTERNAL);
  const GpuFn *f = (const GpuFn *)k;
  *compiled = stats_of(ctx, 0);
  *hits = stats_of(ctx, 1);
  void *fn = f ? __atomic_load_n(&f->fn[E_VECW], __ATOMIC_ACQUIRE) : NULL;
  *level = fn ? ((MockFn *)fn)->m->level : -9;
  if (k) rt_gpu_unpin(D, ctx, 0, k);
  arena_free_all(&ar);
  loom_graph_destroy(g);
  rt_gpu_free(D, ctx, 0, x, 4096 * 4, &d);
  close_ctx(ctx, m, "disk cache"); /* finishes the tier-up queue */
}

static void test_disk_cache_and_tiers(void) {
  char dir[] = "/tmp/loom_gpu_layer_XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(false, "mkdtemp failed");
    return;
  }
  setenv("LOOM_CACHE_DIR", dir, 1);
  Mock m;
  uint64_t compiled, hits;
  int level;
  /* a miss: compiled, linked at level 0 and run; the background tier-up links level 2 (stored). (The
   * tier-up may swap the handle before level is read when this thread is descheduled for 50 ms.) */
  prepare_once(&m, 32, -9, &compiled, &hits, &level);
  CHECK(compiled == 1 && hits == 0 && (level == 0 || level == 2) && m.links[0 + 1] == 1 && m.links[2 + 1] == 1 &&
            m.module_loads == 2,
        "miss: %llu compiles, %llu hits, level %d, links at 0: %d, at 2: %d, %d modules", (unsigned long long)compiled,
        (unsigned long long)hits, level, m.links[1], m.links[3], m.module_loads);
  /* a hit in a new context: the final binary from the disk, nothing compiled or linked */
  prepare_once(&m, 32, -9, &compiled, &hits, &level);
  CHECK(compiled == 0 && hits == 1 && level == 2 && m.links[1] + m.links[3] == 0 && m.module_loads == 1,
        "hit: %llu compiles, %llu hits, level %d, %d links", (unsigned long long)compiled, (unsigned long long)hits,
        level, m.links[1] + m.links[3]);
  /* another wave is another target: a miss; its tier-up fails, so the disk keeps the tier-0 binary and code */
  prepare_once(&m, 64, 2, &compiled, &hits, &level);
  CHECK(compiled == 1 && level == 0 && m.links[1] == 1 && m.links[3] == 0, "wave 64: %llu compiles, level %d",
        (unsigned long long)compiled, level);
  /* the next process loads the tier-0 entry and tiers it up from the stored code */
  prepare_once(&m, 64, -9, &compiled, &hits, &level);
  CHECK(compiled == 0 && hits == 1 && (level == 0 || level == 2) && m.links[1] == 0 && m.links[3] == 1 &&
            m.module_loads == 2,
        "tier 0 from the disk: %llu compiles, %llu hits, level %d, links at 0: %d, at 2: %d",
        (unsigned long long)compiled, (unsigned long long)hits, level, m.links[1], m.links[3]);
  prepare_once(&m, 64, -9, &compiled, &hits, &level);
  CHECK(compiled == 0 && hits == 1 && level == 2 && m.links[1] + m.links[3] == 0, "tiered-up entry: level %d", level);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
}

/* ---- every fallible hook failing in turn ------------------------------------------------------------------- */
#define STEP(expr)                     \
  do {                                 \
    if ((st = (expr)) != LOOM_OK) goto out; \
  } while (0)

/* Everything a program does with a device, stopping at the first failure and undoing what it made. */
static LoomStatus scenario(LoomContext *ctx, Mock *m, Diag *d) {
  enum { N = 1 << 16 };
  const LoomDeviceKind K = LOOM_DEVICE_HIP, H = LOOM_DEVICE_HOST;
  static float host[N];
  void *a = NULL, *b = NULL, *c = NULL;
  RtStream *s = NULL;
  RtEvent *e0 = NULL, *e1 = NULL;
  LoomGraph *g = NULL;
  Arena ar1, ar2;
  bool ars = false;
  float ms = 0;
  LoomStatus st;
  STEP(rt_gpu_open(D, ctx, d));
  STEP(rt_gpu_alloc(D, ctx, 0, N * 4, &a, d));
  STEP(rt_gpu_alloc(D, ctx, 0, N * 4, &b, d));
  STEP(rt_gpu_alloc(D, ctx, 1, N * 4, &c, d));
  STEP(rt_gpu_copy(D, ctx, a, K, 0, host, H, 0, N * 4, d));
  STEP(rt_gpu_stream_create(D, ctx, 0, &s, d));
  STEP(rt_gpu_stream_use(D, ctx, 0, s, d));
  STEP(rt_gpu_event_create(D, ctx, 0, &e0, d));
  STEP(rt_gpu_event_create(D, ctx, 0, &e1, d));
  STEP(rt_gpu_event_record(D, ctx, 0, e0, NULL, d));
  loom_graph_create(ctx, &g);
  int64_t n = N;
  LoomNode x = input_at(g, a, 1, &n), t, u, v;
  loom_binary(g, LOOM_OP_MUL, x, x, &t);
  loom_binary(g, LOOM_OP_ADD, t, x, &u);
  loom_reduce(g, LOOM_REDUCE_SUM, x, 0, NULL, 0, &v);
  Schedule *s1 = schedule_of(g, u, &ar1, d), *s2 = schedule_of(g, v, &ar2, d);
  ars = true;
  if (!s1 || !s2) {
    st = LOOM_ERR_INTERNAL;
    goto out;
  }
  STEP(run_on(ctx, m, g, s1, b, d));
  STEP(run_on(ctx, m, g, s2, b, d));
  STEP(rt_gpu_event_record(D, ctx, 0, e1, NULL, d));
  STEP(rt_gpu_event_synchronize(D, ctx, e1, d));
  STEP(rt_gpu_event_elapsed(D, ctx, e0, e1, &ms, d));
  STEP(rt_gpu_stream_synchronize(D, ctx, s, d));
  STEP(rt_gpu_copy(D, ctx, c, K, 1, b, K, 0, N * 4, d));
  STEP(rt_gpu_copy(D, ctx, a, K, 0, b, K, 0, N * 4, d));
  STEP(rt_gpu_copy(D, ctx, host, H, 0, c, K, 1, N * 4, d));
  STEP(rt_gpu_stream_use(D, ctx, 0, NULL, d));
  STEP(rt_gpu_synchronize(D, ctx, 0, d));
  STEP(rt_gpu_device_pool_trim(D, ctx, 1, d));
out:;
  Diag dd = {.status = LOOM_OK};
  if (ars) {
    arena_free_all(&ar1);
    arena_free_all(&ar2);
  }
  if (g) loom_graph_destroy(g);
  rt_gpu_event_destroy(D, ctx, e0);
  rt_gpu_event_destroy(D, ctx, e1);
  rt_gpu_stream_destroy(D, ctx, s);
  rt_gpu_free(D, ctx, 0, a, N * 4, &dd);
  rt_gpu_free(D, ctx, 0, b, N * 4, &dd);
  rt_gpu_free(D, ctx, 1, c, N * 4, &dd);
  return st;
}

static void test_faults(void) {
  setenv("LOOM_CACHE_DIR", "", 1); /* every run compiles: the same calls in the same order */
  Mock m;
  mock_init(&m, 32);
  m.tiers = false;
  LoomContext *ctx = open_ctx(&m);
  Diag d = {.status = LOOM_OK};
  CHECK_OK(scenario(ctx, &m, &d));
  close_ctx(ctx, &m, "the scenario");
  long total = m.calls;
  char failed_hooks[1024] = "";
  int clean = 0, swallowed = 0;
  for (long n = 1; n <= total; n++) {
    mock_init(&m, 32);
    m.tiers = false;
    m.fail_at = n;
    ctx = open_ctx(&m);
    Diag fd = {.status = LOOM_OK};
    LoomStatus st = scenario(ctx, &m, &fd);
    if (st == LOOM_OK) swallowed++;
    else clean++;
    CHECK(st == LOOM_OK || (st == LOOM_ERR_BACKEND && strstr(fd.msg, "mock: injected failure")),
          "call %ld failing (%s): status %s, '%s'", n, m.failed_hooks, loom_status_name(st), fd.msg);
    char what[600];
    snprintf(what, sizeof what, "call %ld failing (%s)", n, m.failed_hooks);
    close_ctx(ctx, &m, what);
    if (strlen(failed_hooks) + strlen(m.failed_hooks) < sizeof failed_hooks - 1 && !strstr(failed_hooks, m.failed_hooks))
      strcat(failed_hooks, m.failed_hooks);
  }
  static const char *const fallible[] = {
      "load", "device_info", "retain", "set_current", "synchronize", "target_create", "mem_alloc", "copy_h2d",
      "copy_d2h", "copy_d2d", "copy_peer", "stream_create", "stream_synchronize", "event_create", "event_record",
      "event_synchronize", "event_elapsed", "link", "module_load", "module_function", "func_attrs", "occupancy",
      "launch"};
  for (size_t i = 0; i < sizeof fallible / sizeof fallible[0]; i++) {
    char needle[64];
    snprintf(needle, sizeof needle, " %s ", fallible[i]);
    CHECK(strstr(failed_hooks, needle), "the hook %s never failed in the scenario", fallible[i]);
  }
  printf("faults: %ld calls failed in turn: %d failed cleanly, %d were absorbed (cleanup paths, warnings)\n", total,
         clean, swallowed);
}

int main(void) {
  test_memory_streams();
  test_launch_shapes(32);
  test_launch_shapes(64);
  test_disk_cache_and_tiers();
  test_faults();
  printf("test_gpu_layer: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
