/* test_hip_mock.c: the AMD device's runtime code (runtime/hip/) end to end, without an AMD GPU, against
 * mock_hip.c (a test double of libamdhip64: host memory, code objects loaded and kernels found by name
 * as HIP would, launches recorded, nothing run). Usage: test_hip_mock <path of libmock_hip.so>.
 *
 * What it shows: the device table works through the public API (device count, memory and copies,
 * including between two devices, streams, events, pools); a fused kernel is compiled for the device's chip,
 * loaded, and launched with the entry and shape the shared layer (runtime/gpu/gpu_launch.c) picks, with
 * the chip's wave (gfx942: 64; gfx1100: 32): the vector entry for aligned arrays, the whole-vector one for a multiple of the lanes, the
 * scalar one (compiled on demand) for a misaligned view, one block per row, the cached row, the split
 * column, the vector part + block finish of a large 1-d sum; the parameter block (shape, the arrays'
 * device addresses with their offsets, strides) is what codegen.h lays out; a second context loads the
 * kernels from the disk cache (no compile); a raw kernel's arguments reach the launch; an AOT bundle's code
 * object for the device's gfx is loaded and launched with no compile, in production mode (no JIT).
 * Throughout, the mock checks the driver contract in HIP's terms (each object used only while its device
 * is current) and counts live objects: every context gives everything back. Then, as test_gpu_layer does
 * with its mock driver, a scenario over two devices (memory, copies incl. peer, streams, events, kernels
 * from the disk cache, a raw kernel) runs with each of its fallible HIP calls failing in turn: every
 * step then succeeds or returns a clean status whose message names the failed call, and nothing leaks. Kernel results
 * are not checked here (nothing runs): test_gpu_hip checks them on an AMD GPU.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loom/loom.h"
#include "loom/loom_aot.h"
#include "codegen/codegen.h"
#include "tests/c/mock_hip.h"

static LoomContext *ctx;

static LoomArray hip_array(LoomDType t, int ndim, const int64_t *shape, int32_t dev) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = t;
  a.ndim = ndim;
  a.device = LOOM_DEVICE_HIP;
  a.device_index = dev;
  for (int i = 0; i < ndim; i++) a.shape[i] = shape[i];
  if (!CHECK(loom_array_alloc(ctx, &a) == LOOM_OK, "alloc: %s", loom_last_error(ctx))) exit(1);
  return a;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

/* Evaluates node o of g into out; returns the launches it made (first at *first). */
static int eval_launches(LoomGraph *g, LoomNode o, LoomArray *out, int *first) {
  *first = launch_count();
  CHECK(loom_eval(g, 1, &o, out) == LOOM_OK, "eval: %s", loom_last_error(ctx));
  return launch_count() - *first;
}


static LoomNode input(LoomGraph *g, const LoomArray *a) {
  LoomNode n = -1;
  CHECK(loom_input(g, a, &n) == LOOM_OK, "input: %s", loom_last_error(ctx));
  return n;
}

static void test_elementwise(int wave) {
  const int64_t n = 1000003;
  LoomArray x = hip_array(LOOM_FLOAT32, 1, &n, 0), y = hip_array(LOOM_FLOAT32, 1, &n, 0), o = hip_array(LOOM_FLOAT32, 1, &n, 0);
  /* host -> AMD -> host */
  float *h = malloc(n * sizeof *h), *back = malloc(n * sizeof *back);
  for (int64_t i = 0; i < n; i++) h[i] = (float)i;
  LoomArray hh = x;
  hh.device = LOOM_DEVICE_HOST;
  hh.data = h;
  hh.strides[0] = 1;
  LoomArray hb = hh;
  hb.data = back;
  LoomStats c0, c1;
  loom_get_stats(ctx, &c0);
  CHECK(loom_array_copy(ctx, &x, &hh) == LOOM_OK && loom_array_copy(ctx, &hb, &x) == LOOM_OK &&
            !memcmp(h, back, n * sizeof *h),
        "copies: %s", loom_last_error(ctx));
  loom_get_stats(ctx, &c1); /* one upload and one read-back, counted with their bytes */
  CHECK(c1.copies_to_device - c0.copies_to_device == 1 && c1.copies_to_host - c0.copies_to_host == 1 &&
            c1.bytes_to_device - c0.bytes_to_device == (uint64_t)n * sizeof *h &&
            c1.bytes_to_host - c0.bytes_to_host == (uint64_t)n * sizeof *h,
        "copy counters: %llu / %llu copies to the device / host",
        (unsigned long long)(c1.copies_to_device - c0.copies_to_device),
        (unsigned long long)(c1.copies_to_host - c0.copies_to_host));
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), yi = input(g, &y), c, m, e, s;
  loom_weak_float(g, 2.0, &c);
  loom_binary(g, LOOM_OP_MUL, c, xi, &m);
  loom_unary(g, LOOM_OP_EXP, yi, &e);
  loom_binary(g, LOOM_OP_ADD, m, e, &s);
  int first = 0;
  int k = eval_launches(g, s, &o, &first);
  const MockLaunch *l = &launches()[first];
  if (CHECK(k == 1, "2x + exp(y): %d launches", k)) {
    /* words: shape, three bases, three strides, then nparts / partials */
    CHECK(ends_with(l->name, "_vec") && l->block[0] % (unsigned)wave == 0 && l->block[0] <= 1024 && l->grid[0] >= 1,
          "the vector entry (n %% 4 != 0) in blocks of waves of %d: %s block %u grid %u", wave, l->name, l->block[0],
          l->grid[0]);
    CHECK(word(l, 0) == (uint64_t)n && word(l, 1) == (uint64_t)(uintptr_t)x.data &&
              word(l, 2) == (uint64_t)(uintptr_t)y.data && word(l, 3) == (uint64_t)(uintptr_t)o.data &&
              word(l, 4) == 1 && word(l, 5) == 1 && word(l, 6) == 1,
          "the parameter block: %llu %#llx %#llx %#llx", (unsigned long long)word(l, 0), (unsigned long long)word(l, 1),
          (unsigned long long)word(l, 2), (unsigned long long)word(l, 3));
  }
  /* a multiple of the lanes: the whole-vector entry; a view at offset 1: the scalar entry */
  const int64_t n4 = 1000000;
  LoomArray x4 = x, y4 = y, o4 = o;
  x4.shape[0] = y4.shape[0] = o4.shape[0] = n4;
  LoomGraph *g4;
  loom_graph_create(ctx, &g4);
  LoomNode a4 = input(g4, &x4), b4 = input(g4, &y4), s4;
  loom_binary(g4, LOOM_OP_ADD, a4, b4, &s4);
  k = eval_launches(g4, s4, &o4, &first);
  CHECK(k == 1 && ends_with(launches()[first].name, "_vecw"), "n %% 4 == 0: %s", k ? launches()[first].name : "-");
  LoomArray xo = x4;
  xo.data = (char *)x.data + 4;
  LoomGraph *go;
  loom_graph_create(ctx, &go);
  LoomNode ao = input(go, &xo), bo = input(go, &y4), so;
  loom_binary(go, LOOM_OP_ADD, ao, bo, &so);
  k = eval_launches(go, so, &o4, &first);
  CHECK(k == 1 && ends_with(launches()[first].name, "_elem") &&
            word(&launches()[first], 1) == (uint64_t)(uintptr_t)x.data + 4,
        "a misaligned view: %s", k ? launches()[first].name : "-");
  loom_graph_destroy(g);
  loom_graph_destroy(g4);
  loom_graph_destroy(go);
  loom_array_free(ctx, &x);
  loom_array_free(ctx, &y);
  loom_array_free(ctx, &o);
  free(h);
  free(back);
}

typedef struct RedCase {
  const char *what;
  int64_t shape[2];
  int ndim;
  int naxes;
  int32_t axis;
  const char *entries[2]; /* the entries launched, in order */
  int first_block;        /* the first launch's block: -1 any multiple of the wave */
} RedCase;

static void test_reductions(int wave) {
  RedCase cases[] = {
      /* rows of <= wave * 16 points: the cached entry's short-row mode (a group of lanes per row, blocks
       * of 256 threads holding many rows; runtime/gpu/gpu_launch_policy.c) */
      {"sum axis 1 of 64 x 300: short rows, a lane group per row", {64, 300}, 2, 1, 1, {"_rowcv", NULL}, 256},
      {"sum axis 0 of 300 x 64: split column", {300, 64}, 2, 1, 0, {"_part", "_finish"}, 256},
      {"full sum of 2^20: vector parts, block finish", {1 << 20, 0}, 1, 0, 0, {"_partv", "_finishb"}, 256},
      {"sum axis 1 of 8 x 100000: split rows", {8, 100000}, 2, 1, 1, {"_part", "_finish"}, 256},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    RedCase *c = &cases[i];
    LoomArray a = hip_array(LOOM_FLOAT32, c->ndim, c->shape, 0);
    LoomGraph *g;
    loom_graph_create(ctx, &g);
    LoomNode ai = input(g, &a), s;
    loom_reduce(g, LOOM_REDUCE_SUM, ai, c->naxes, c->naxes ? &c->axis : NULL, 0, &s); /* NULL: every axis */
    LoomArray r;
    memset(&r, 0, sizeof r);
    int first = 0, k = eval_launches(g, s, &r, &first);
    int want = c->entries[1] ? 2 : 1;
    if (CHECK(k == want, "%s: %d launches (%s)", c->what, k, k ? launches()[first].name : "-")) {
      for (int j = 0; j < want; j++) {
        const MockLaunch *l = &launches()[first + j];
        CHECK(ends_with(l->name, c->entries[j]) && l->block[0] % (unsigned)wave == 0, "%s: launch %d %s block %u",
              c->what, j, l->name, l->block[0]);
      }
      CHECK(c->first_block < 0 || launches()[first].block[0] == (unsigned)c->first_block, "%s: block %u", c->what,
            launches()[first].block[0]);
    }
    CHECK(r.device == LOOM_DEVICE_HIP, "%s: the result is on the AMD device", c->what);
    loom_array_free(ctx, &r);
    loom_graph_destroy(g);
    loom_array_free(ctx, &a);
  }
  /* softmax rows of 500: on a wave of 64 the cached row's short-row mode, groups of 64 lanes (a multi-phase
   * row takes at most 2 vectors a lane, up to the wave: runtime/gpu/gpu_launch_policy.c), 4 rows in a block
   * of 256, so 32 rows are 8 blocks; on a wave of 32 the row needs the whole wave (500 > 32 * 16 / 2): the
   * block mode, a block of one wave a row (32 blocks) */
  int64_t sm[2] = {32, 500};
  LoomArray a = hip_array(LOOM_FLOAT32, 2, sm, 0);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  int32_t last = -1;
  LoomNode ai = input(g, &a), mx, sh, ex, su, o;
  loom_reduce(g, LOOM_REDUCE_MAX, ai, 1, &last, 1, &mx);
  loom_binary(g, LOOM_OP_SUB, ai, mx, &sh);
  loom_unary(g, LOOM_OP_EXP, sh, &ex);
  loom_reduce(g, LOOM_REDUCE_SUM, ex, 1, &last, 1, &su);
  loom_binary(g, LOOM_OP_TRUEDIV, ex, su, &o);
  LoomArray r;
  memset(&r, 0, sizeof r);
  int first = 0, k = eval_launches(g, o, &r, &first);
  CHECK(k == 1 && (ends_with(launches()[first].name, "_rowc") || ends_with(launches()[first].name, "_rowcv")) &&
            launches()[first].block[0] == (wave == 64 ? 256u : 32u) && launches()[first].grid[0] == (wave == 64 ? 8u : 32u),
        "softmax: %d launches, %s block %u grid %u", k, k ? launches()[first].name : "-",
        k ? launches()[first].block[0] : 0, k ? launches()[first].grid[0] : 0);
  loom_array_free(ctx, &r);
  loom_graph_destroy(g);
  loom_array_free(ctx, &a);
}

static void test_streams_pool_raw(void) {
  LoomStream *s = NULL;
  LoomEvent *e0 = NULL, *e1 = NULL;
  CHECK(loom_stream_create(ctx, LOOM_DEVICE_HIP, 0, &s) == LOOM_OK && loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e0) == LOOM_OK &&
            loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e1) == LOOM_OK && loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, s) == LOOM_OK,
        "streams and events: %s", loom_last_error(ctx));
  int64_t n = 4096;
  LoomArray x = hip_array(LOOM_FLOAT32, 1, &n, 0);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), sq;
  loom_unary(g, LOOM_OP_SQRT, xi, &sq);
  LoomArray r;
  memset(&r, 0, sizeof r);
  loom_event_record(ctx, e0, NULL);
  int first = 0, k = eval_launches(g, sq, &r, &first);
  loom_event_record(ctx, e1, NULL);
  float ms = -1;
  CHECK(k == 1 && launches()[first].stream == loom_stream_handle(s) && loom_event_synchronize(ctx, e1) == LOOM_OK &&
            loom_event_elapsed_ms(ctx, e0, e1, &ms) == LOOM_OK && ms == 0.125f,
        "a kernel on the current stream: %d launches, elapsed %g", k, ms);
  loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, NULL);
  k = eval_launches(g, sq, &r, &first);
  CHECK(k == 1 && launches()[first].stream == NULL, "back on the null stream");
  loom_event_destroy(ctx, e0);
  loom_event_destroy(ctx, e1);
  loom_stream_destroy(ctx, s);
  loom_array_free(ctx, &r);
  loom_graph_destroy(g);
  /* the pool: a freed block is handed out again */
  LoomPoolStats p0, p1;
  loom_pool_stats(ctx, LOOM_DEVICE_HIP, 0, &p0);
  void *first_ptr = x.data;
  loom_array_free(ctx, &x);
  LoomArray x2 = hip_array(LOOM_FLOAT32, 1, &n, 0);
  loom_pool_stats(ctx, LOOM_DEVICE_HIP, 0, &p1);
  CHECK(x2.data == first_ptr && p1.total_bytes == p0.total_bytes, "the pool reuses a freed block");
  /* a raw kernel for amdgcn: its arguments reach the launch */
  static const char ir[] =
      "target triple = \"amdgcn-amd-amdhsa\"\n"
      "define amdgpu_kernel void @fill(ptr addrspace(1) %p, float %v) {\n"
      "  store float %v, ptr addrspace(1) %p\n  ret void\n}\n";
  LoomRawModule *m = NULL;
  LoomRawFunction *f = NULL;
  if (CHECK(loom_raw_module_create(ctx, ir, strlen(ir), LOOM_RAW_AUTO, NULL, 0, &m) == LOOM_OK &&
                loom_raw_module_get_function(m, "fill", &f) == LOOM_OK,
            "raw module: %s", loom_last_error(ctx))) {
    LoomRawArg args[2] = {{.kind = LOOM_RAW_ARG_ARRAY, .array = &x2},
                          {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_FLOAT32, .value.f = 1.5}};
    uint32_t grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};
    first = launch_count();
    CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 2, args) == LOOM_OK && launch_count() == first + 1 &&
              !strcmp(launches()[first].name, "fill") && launches()[first].grid[0] == 3 &&
              launches()[first].block[0] == 64 && word(&launches()[first], 0) == (uint64_t)(uintptr_t)x2.data,
          "raw launch: %s", loom_last_error(ctx));
    loom_raw_module_destroy(m);
  }
  loom_array_free(ctx, &x2);
}

/* A borrowed stream (loom_stream_wrap: CuPy's ExternalStream) carries loom's kernels and copies and is never
 * destroyed by loom; loom_memcpy copies bytes both ways, synchronously and on a stream, loom_memset fills them; the pool's limit
 * refuses a new block past it with a message naming the limit, and 0 lifts it. */
static void test_borrowed_stream_memcpy_limit(void) {
  LoomStream *own = NULL, *w = NULL;
  MockHipStats st0, st1;
  CHECK(loom_stream_create(ctx, LOOM_DEVICE_HIP, 0, &own) == LOOM_OK, "stream: %s", loom_last_error(ctx));
  void *h = loom_stream_handle(own);
  CHECK(loom_stream_wrap(ctx, LOOM_DEVICE_HIP, 0, h, &w) == LOOM_OK && loom_stream_handle(w) == h,
        "wrap: %s", loom_last_error(ctx));
  CHECK(loom_stream_wrap(ctx, LOOM_DEVICE_HIP, 0, h, NULL) == LOOM_ERR_INVALID_ARGUMENT, "wrap without out");
  int64_t n = 1024;
  LoomArray x = hip_array(LOOM_FLOAT32, 1, &n, 0);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), sq;
  loom_unary(g, LOOM_OP_SQRT, xi, &sq);
  LoomArray r;
  memset(&r, 0, sizeof r);
  CHECK(loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, w) == LOOM_OK, "use: %s", loom_last_error(ctx));
  int first = 0, k = eval_launches(g, sq, &r, &first);
  CHECK(k == 1 && launches()[first].stream == h, "a kernel on the borrowed stream");
  /* bytes in and out: on the borrowed stream (async), then synchronous */
  float src[256], back[256];
  for (int i = 0; i < 256; i++) src[i] = (float)i * 0.5f;
  memset(back, 0, sizeof back);
  CHECK(loom_memcpy(ctx, x.data, LOOM_DEVICE_HIP, 0, src, LOOM_DEVICE_HOST, 0, sizeof src, w, 1) == LOOM_OK &&
            loom_stream_synchronize(ctx, w) == LOOM_OK &&
            loom_memcpy(ctx, (char *)r.data + 16, LOOM_DEVICE_HIP, 0, x.data, LOOM_DEVICE_HIP, 0, 64, NULL, 0) ==
                LOOM_OK &&
            loom_memcpy(ctx, back, LOOM_DEVICE_HOST, 0, r.data, LOOM_DEVICE_HIP, 0, 128, w, 0) == LOOM_OK,
        "memcpy: %s", loom_last_error(ctx));
  CHECK(!memcmp(back + 4, src, 64), "bytes round trip through device memory");
  CHECK(loom_memcpy(ctx, back, LOOM_DEVICE_HOST, 0, NULL, LOOM_DEVICE_HIP, 0, 8, NULL, 0) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(ctx), "NULL source") != NULL,
        "a NULL source is refused: %s", loom_last_error(ctx));
  CHECK(loom_memcpy(ctx, back, LOOM_DEVICE_HOST, 0, src, LOOM_DEVICE_HOST, 0, 0, NULL, 1) == LOOM_OK, "0 bytes");
  /* loom_memset: bytes of device memory on the borrowed stream, then read back (zeros() clears arrays so) */
  unsigned char bytes[64];
  CHECK(loom_memset(ctx, (char *)r.data + 8, LOOM_DEVICE_HIP, 0, 0xAB, 32, w) == LOOM_OK &&
            loom_memcpy(ctx, bytes, LOOM_DEVICE_HOST, 0, r.data, LOOM_DEVICE_HIP, 0, sizeof bytes, w, 0) == LOOM_OK,
        "memset: %s", loom_last_error(ctx));
  int filled = 1;
  for (int i = 0; i < 64; i++) filled &= (bytes[i] == 0xAB) == (i >= 8 && i < 40);
  CHECK(filled, "memset writes exactly its 32 bytes");
  CHECK(loom_memset(ctx, NULL, LOOM_DEVICE_HIP, 0, 0, 8, NULL) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(ctx), "NULL destination") != NULL,
        "memset to NULL is refused: %s", loom_last_error(ctx));
  CHECK(loom_memset(ctx, r.data, LOOM_DEVICE_HIP, 0, 256, 8, NULL) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loom_last_error(ctx), "not a byte") != NULL,
        "memset of a value past a byte is refused: %s", loom_last_error(ctx));
  CHECK(loom_memset(ctx, r.data, LOOM_DEVICE_HIP, 0, 1, 0, NULL) == LOOM_OK, "memset of 0 bytes");
  memset(back, 0, sizeof back);
  CHECK(loom_memset(ctx, back, LOOM_DEVICE_HOST, 0, 7, 8, NULL) == LOOM_OK && ((unsigned char *)back)[7] == 7 &&
            ((unsigned char *)back)[8] != 7,
        "host memset: %s", loom_last_error(ctx));
  loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, NULL);
  mock_stats(&st0);
  loom_stream_destroy(ctx, w); /* loom's record only */
  mock_stats(&st1);
  CHECK(st1.live_streams == st0.live_streams, "the borrowed handle outlives its wrapper");
  CHECK(loom_stream_synchronize(ctx, own) == LOOM_OK, "the owner's stream still works");
  loom_stream_destroy(ctx, own);
  mock_stats(&st1);
  CHECK(st1.live_streams == st0.live_streams - 1, "the owner destroys it");
  /* the limit */
  LoomPoolStats ps;
  uint64_t limit = 1;
  loom_pool_free_all_blocks(ctx, LOOM_DEVICE_HIP, 0); /* a cached block of the size asked would be reused */
  loom_pool_stats(ctx, LOOM_DEVICE_HIP, 0, &ps);
  CHECK(loom_pool_get_limit(ctx, LOOM_DEVICE_HIP, 0, &limit) == LOOM_OK && limit == 0, "no limit by default");
  CHECK(loom_pool_set_limit(ctx, LOOM_DEVICE_HIP, 0, ps.total_bytes + 8192) == LOOM_OK &&
            loom_pool_get_limit(ctx, LOOM_DEVICE_HIP, 0, &limit) == LOOM_OK && limit == ps.total_bytes + 8192,
        "set_limit: %s", loom_last_error(ctx));
  LoomArray big;
  memset(&big, 0, sizeof big);
  big.dtype = LOOM_FLOAT32;
  big.ndim = 1;
  big.shape[0] = 1 << 20;
  big.device = LOOM_DEVICE_HIP;
  CHECK(loom_array_alloc(ctx, &big) == LOOM_ERR_OUT_OF_MEMORY && strstr(loom_last_error(ctx), "limit") != NULL,
        "past the limit: %s", loom_last_error(ctx));
  loom_pool_set_limit(ctx, LOOM_DEVICE_HIP, 0, 0);
  CHECK(loom_array_alloc(ctx, &big) == LOOM_OK, "no limit again: %s", loom_last_error(ctx));
  loom_array_free(ctx, &big);
  loom_array_free(ctx, &r);
  loom_array_free(ctx, &x);
  loom_graph_destroy(g);
}

static void test_two_devices(void) {
  int64_t n = 1000;
  LoomArray a = hip_array(LOOM_INT32, 1, &n, 0), b = hip_array(LOOM_INT32, 1, &n, 1);
  for (int i = 0; i < n; i++) ((int32_t *)a.data)[i] = i * 3; /* mock device memory is host memory */
  CHECK(loom_array_copy(ctx, &b, &a) == LOOM_OK && ((int32_t *)b.data)[999] == 2997, "a copy between two AMD devices: %s",
        loom_last_error(ctx));
  LoomArray bad = a;
  bad.device_index = 5;
  bad.data = NULL;
  CHECK(loom_array_alloc(ctx, &bad) == LOOM_ERR_INVALID_ARGUMENT && strstr(loom_last_error(ctx), "5"),
        "a missing device: %s", loom_last_error(ctx));
  loom_array_free(ctx, &a);
  loom_array_free(ctx, &b);
}

/* A fresh context over the same disk cache: the elementwise kernel again, loaded, not compiled. */
static void test_disk_cache(void) {
  LoomContext *keep = ctx;
  CHECK(loom_context_create(&ctx) == LOOM_OK, "second context");
  int64_t n = 1000003;
  LoomArray x = hip_array(LOOM_FLOAT32, 1, &n, 0), y = hip_array(LOOM_FLOAT32, 1, &n, 0), o = hip_array(LOOM_FLOAT32, 1, &n, 0);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), yi = input(g, &y), c, m, e, s;
  loom_weak_float(g, 2.0, &c);
  loom_binary(g, LOOM_OP_MUL, c, xi, &m);
  loom_unary(g, LOOM_OP_EXP, yi, &e);
  loom_binary(g, LOOM_OP_ADD, m, e, &s);
  LoomStats s0, s1;
  loom_get_stats(ctx, &s0);
  int first = 0, k = eval_launches(g, s, &o, &first);
  loom_get_stats(ctx, &s1);
  CHECK(k == 1 && s1.kernels_compiled == s0.kernels_compiled && s1.cache_hits > s0.cache_hits,
        "from the disk cache: %llu compiles, %llu hits", (unsigned long long)(s1.kernels_compiled - s0.kernels_compiled),
        (unsigned long long)(s1.cache_hits - s0.cache_hits));
  loom_graph_destroy(g);
  loom_array_free(ctx, &x);
  loom_array_free(ctx, &y);
  loom_array_free(ctx, &o);
  loom_context_destroy(ctx);
  ctx = keep;
}

/* An AOT bundle with code objects for gfx942 (captured on the host, as loomc does): a fresh context that
 * loads it with the JIT off launches the bundle's kernel on the AMD device (wave 64 blocks), compiling
 * nothing; a kernel the bundle lacks is refused by name. */
static void test_bundle(const char *dir) {
  int64_t n = 4099;
  float *hx = calloc((size_t)n, sizeof *hx), *hy = calloc((size_t)n, sizeof *hy), *ho = calloc((size_t)n, sizeof *ho);
  LoomArray x = {.data = hx, .dtype = LOOM_FLOAT32, .ndim = 1, .shape = {n}, .strides = {1}}, y = x, o = x;
  y.data = hy;
  o.data = ho;
  LoomBundleBuilder *b = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s/amd.lbun", dir);
  LoomGraph *g;
  loom_graph_create(ctx, &g);
  LoomNode xi = input(g, &x), yi = input(g, &y), c, m, e, s;
  loom_weak_float(g, 2.0, &c);
  loom_binary(g, LOOM_OP_MUL, c, xi, &m);
  loom_unary(g, LOOM_OP_EXP, yi, &e);
  loom_binary(g, LOOM_OP_ADD, m, e, &s);
  LoomBundleOptions opt = {.targets = "gfx942", .jobs = 1, .progress = 0};
  bool built = CHECK(loom_bundle_builder_create(ctx, &b) == LOOM_OK && loom_bundle_builder_capture_begin(b, "axpe") == LOOM_OK &&
                         loom_eval(g, 1, &s, &o) == LOOM_OK && loom_bundle_builder_capture_end(b, NULL) == LOOM_OK &&
                         loom_bundle_builder_write(b, &opt, path) == LOOM_OK,
                     "AMD bundle: %s", loom_last_error(ctx));
  loom_bundle_builder_destroy(b);
  loom_graph_destroy(g);
  free(hx);
  free(hy);
  free(ho);
  if (!built) return;
  LoomContext *keep = ctx;
  CHECK(loom_context_create(&ctx) == LOOM_OK && loom_bundle_load(ctx, path, 0) == LOOM_OK, "load: %s",
        loom_last_error(ctx));
  LoomArray dx = hip_array(LOOM_FLOAT32, 1, &n, 0), dy = hip_array(LOOM_FLOAT32, 1, &n, 0), dout = hip_array(LOOM_FLOAT32, 1, &n, 0);
  loom_graph_create(ctx, &g);
  xi = input(g, &dx);
  yi = input(g, &dy);
  loom_weak_float(g, 2.0, &c);
  loom_binary(g, LOOM_OP_MUL, c, xi, &m);
  loom_unary(g, LOOM_OP_EXP, yi, &e);
  loom_binary(g, LOOM_OP_ADD, m, e, &s);
  LoomStats s0, s1;
  loom_get_stats(ctx, &s0);
  int first = 0, k = eval_launches(g, s, &dout, &first);
  loom_get_stats(ctx, &s1);
  int64_t used = 0;
  loom_bundle_stats(ctx, NULL, &used);
  CHECK(k == 1 && s1.kernels_compiled == s0.kernels_compiled && used >= 1 && launches()[first].block[0] % 64 == 0 &&
            word(&launches()[first], 0) == (uint64_t)n,
        "from the bundle: %d launches (%s, block %u), %llu compiles, %lld bundle kernels used", k,
        k ? launches()[first].name : "-", k ? launches()[first].block[0] : 0,
        (unsigned long long)(s1.kernels_compiled - s0.kernels_compiled), (long long)used);
  LoomNode q;
  loom_unary(g, LOOM_OP_SQRT, xi, &q);
  CHECK(loom_eval(g, 1, &q, &dout) == LOOM_ERR_UNSUPPORTED && strstr(loom_last_error(ctx), "bundle"),
        "a kernel outside the bundle with the JIT off: %s", loom_last_error(ctx));
  loom_graph_destroy(g);
  loom_array_free(ctx, &dx);
  loom_array_free(ctx, &dy);
  loom_array_free(ctx, &dout);
  loom_context_destroy(ctx);
  ctx = keep;
}

/* What the mock holds after a context is gone: nothing; and no object was used off its device. */
static void check_clean(const char *what) {
  MockHipStats st;
  mock_stats(&st);
  CHECK(st.live_allocs == 0 && st.live_streams == 0 && st.live_events == 0 && st.live_modules == 0,
        "%s: left behind %d allocations, %d streams, %d events, %d modules", what, st.live_allocs, st.live_streams,
        st.live_events, st.live_modules);
  CHECK(st.not_current == 0, "%s: %d uses of an object while another device was current", what, st.not_current);
}

/* One status of the fault scenario: OK, or a clean failure that says what failed. */
static bool step_ok(LoomStatus st, int *bad, const char *step) {
  if (st == LOOM_OK) return true;
  const char *m = loom_last_error(ctx);
  bool clean = (st == LOOM_ERR_BACKEND || st == LOOM_ERR_UNSUPPORTED || st == LOOM_ERR_OUT_OF_MEMORY) && m &&
               (strstr(m, "hipErrorMock") || strstr(m, "injected failure"));
  if (!clean) {
    (*bad)++;
    fprintf(stderr, "fault scenario, %s: status %d, '%s'\n", step, st, m ? m : "");
  }
  return false;
}

/* Two devices: arrays, copies host <-> device and between the devices, a stream and events, an
 * elementwise kernel and a reduction (from the disk cache after the first run), a raw kernel. Returns
 * the statuses that were not clean. */
static int scenario(void) {
  int bad = 0;
  if (!step_ok(loom_context_create(&ctx), &bad, "context")) return bad + 1;
  int32_t n = 0;
  int64_t len = 1000;
  LoomArray a = {.dtype = LOOM_FLOAT32, .ndim = 1, .shape = {len}, .device = LOOM_DEVICE_HIP}, b = a, r = {0};
  b.device_index = 1;
  float h[1000], back[1000];
  for (int i = 0; i < 1000; i++) h[i] = (float)i;
  LoomArray hh = {.data = h, .dtype = LOOM_FLOAT32, .ndim = 1, .shape = {len}, .strides = {1}}, hb = hh;
  hb.data = back;
  LoomStream *s = NULL;
  LoomEvent *e0 = NULL, *e1 = NULL;
  LoomGraph *g = NULL;
  LoomRawModule *m = NULL;
  bool ok = step_ok(loom_device_count(ctx, LOOM_DEVICE_HIP, &n), &bad, "device count") && n == 2 &&
            step_ok(loom_array_alloc(ctx, &a), &bad, "alloc 0") && step_ok(loom_array_alloc(ctx, &b), &bad, "alloc 1") &&
            step_ok(loom_array_copy(ctx, &a, &hh), &bad, "copy in") && step_ok(loom_array_copy(ctx, &b, &a), &bad, "peer") &&
            step_ok(loom_array_copy(ctx, &hb, &b), &bad, "copy out");
  if (ok && memcmp(h, back, sizeof h)) bad++, fprintf(stderr, "fault scenario: the copies changed the data\n");
  ok = ok && step_ok(loom_stream_create(ctx, LOOM_DEVICE_HIP, 0, &s), &bad, "stream") &&
       step_ok(loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e0), &bad, "event 0") &&
       step_ok(loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e1), &bad, "event 1") &&
       step_ok(loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, s), &bad, "stream use") &&
       step_ok(loom_event_record(ctx, e0, NULL), &bad, "record 0");
  if (ok && step_ok(loom_graph_create(ctx, &g), &bad, "graph")) {
    LoomNode ai = -1, c, p, e, sum;
    int32_t axis = 0;
    ok = step_ok(loom_input(g, &a, &ai), &bad, "input") && step_ok(loom_weak_float(g, 2.0, &c), &bad, "const") &&
         step_ok(loom_binary(g, LOOM_OP_MUL, c, ai, &p), &bad, "mul") && step_ok(loom_unary(g, LOOM_OP_EXP, p, &e), &bad, "exp") &&
         step_ok(loom_reduce(g, LOOM_REDUCE_SUM, e, 1, &axis, 0, &sum), &bad, "sum") &&
         step_ok(loom_eval(g, 1, &e, &r), &bad, "eval map");
    LoomArray rs = {0};
    ok = ok && step_ok(loom_eval(g, 1, &sum, &rs), &bad, "eval sum");
    loom_array_free(ctx, &rs);
  }
  ok = ok && step_ok(loom_event_record(ctx, e1, NULL), &bad, "record 1") &&
       step_ok(loom_event_synchronize(ctx, e1), &bad, "event sync");
  float ms = 0;
  ok = ok && step_ok(loom_event_elapsed_ms(ctx, e0, e1, &ms), &bad, "elapsed") &&
       step_ok(loom_stream_synchronize(ctx, s), &bad, "stream sync");
  static const char ir[] = "target triple = \"amdgcn-amd-amdhsa\"\n"
                           "define amdgpu_kernel void @fill(ptr addrspace(1) %p, float %v) {\n"
                           "  store float %v, ptr addrspace(1) %p\n  ret void\n}\n";
  LoomRawFunction *f = NULL;
  if (ok && step_ok(loom_raw_module_create(ctx, ir, strlen(ir), LOOM_RAW_AUTO, NULL, 0, &m), &bad, "raw module") &&
      step_ok(loom_raw_module_get_function(m, "fill", &f), &bad, "raw function")) {
    LoomRawArg args[2] = {{.kind = LOOM_RAW_ARG_ARRAY, .array = &b},
                          {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_FLOAT32, .value.f = 1.5}};
    uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
    step_ok(loom_raw_function_launch(f, grid, block, 0, NULL, 2, args), &bad, "raw launch");
  }
  if (s) loom_stream_use(ctx, LOOM_DEVICE_HIP, 0, NULL);
  loom_raw_module_destroy(m);
  loom_graph_destroy(g);
  loom_event_destroy(ctx, e0);
  loom_event_destroy(ctx, e1);
  loom_stream_destroy(ctx, s);
  loom_array_free(ctx, &r);
  loom_array_free(ctx, &a);
  loom_array_free(ctx, &b);
  loom_context_destroy(ctx);
  ctx = NULL;
  return bad;
}

static void test_faults(void) {
  LoomContext *keep = ctx;
  mock_fail_at(0);
  int bad = scenario(); /* compiles (or loads) the kernels; the next runs find them on disk */
  mock_fail_at(0);
  int l0 = launch_count();
  bad += scenario();
  int nl = launch_count() - l0;
  MockHipStats st;
  mock_stats(&st);
  long ncalls = st.calls;
  CHECK(bad == 0 && ncalls > 20 && nl >= 3, "the scenario without faults: %d bad statuses, %ld HIP calls, %d launches",
        bad, ncalls, nl);
  check_clean("the scenario");
  int failed_runs = 0;
  for (long i = 1; i <= ncalls; i++) {
    mock_fail_at(i);
    int b = scenario();
    mock_stats(&st);
    failed_runs += st.failed > 0;
    char what[64];
    snprintf(what, sizeof what, "HIP call %ld of %ld failing", i, ncalls);
    CHECK(b == 0, "%s: %d statuses not clean", what, b);
    check_clean(what);
  }
  mock_fail_at(0);
  CHECK(failed_runs == ncalls, "the injected failure happened in %d of %ld runs", failed_runs, ncalls);
  printf("fault injection: %ld HIP calls, each failing in turn\n", ncalls);
  ctx = keep;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <path of libmock_hip.so>\n", argv[0]);
    return 2;
  }
  void *mock = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!mock) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  if (!mock_hip_bind(mock)) {
    fprintf(stderr, "%s lacks the mock's entry points\n", argv[1]);
    return 1;
  }
  /* kernels are compiled for real (no GPU needed), which takes ROCm's device libraries and a linker */
  LoomContext *probe = NULL;
  char why[2048];
  if (loom_context_create(&probe) != LOOM_OK) return 1;
  bool amd = cg_amdgpu_toolchain_available(probe, why, sizeof why);
  loom_context_destroy(probe);
  if (!amd) {
    printf("test_hip_mock: %s: skipped\n", why);
    return 77;
  }
  setenv("LOOM_HIP_LIBRARY", argv[1], 1);
  setenv("MOCK_HIP_DEVICES", "2", 1);
  char dir[] = "/tmp/loom_hip_mock_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  static const char *const arch[2] = {"gfx942:sramecc+:xnack-", "gfx1100"};
  for (int a = 0; a < 2; a++) {
    setenv("MOCK_HIP_ARCH", arch[a], 1);
    int wave = a == 0 ? 64 : 32;
    if (loom_context_create(&ctx) != LOOM_OK) return 1;
    int32_t n = 0;
    CHECK(loom_device_count(ctx, LOOM_DEVICE_HIP, &n) == LOOM_OK && n == 2, "mock devices: %d", n);
    printf("mock %s (wave %d)\n", arch[a], wave);
    test_elementwise(wave);
    test_reductions(wave);
    if (a == 0) {
      test_streams_pool_raw();
      test_borrowed_stream_memcpy_limit();
      test_two_devices();
      test_disk_cache();
      test_bundle(dir);
    }
    loom_context_destroy(ctx);
    check_clean(arch[a]);
  }
  setenv("MOCK_HIP_ARCH", arch[0], 1);
  test_faults();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  printf("%d passed, %d failed\n", check_passed, check_failed);
  return check_failed ? 1 : 0;
}
