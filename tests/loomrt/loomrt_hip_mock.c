/* SPDX-License-Identifier: Apache-2.0 */
/* loomrt_hip_mock: libloomrt's AMD (HIP) launch path against the test double of libamdhip64
 * (tests/c/mock_hip.c, built as libmock_hip.so): a program linked ONLY against libloomrt opens a bundle
 * loomc made with AMD code objects, and everything short of running a kernel is checked: the driver is
 * found through LOOM_HIP_LIBRARY (a missing one is a clean "no HIP runtime" and 0 devices), device
 * memory and copies round-trip, each launch loads the code object of the device's chip (MOCK_HIP_ARCH),
 * looks up the entry functions the bundle names, and passes the parameter block the kernel's signature
 * says (sizes, bases, strides in elements, the split-reduction words, then the scalar parameters) with
 * blocks that are multiples of the chip's wave (64 on gfx9, 32 on gfx10+) and grids that cover the work.
 * A chip the bundle has no code for is a clear LOOM_ERR_UNSUPPORTED naming what it has. At the end every
 * HIP object is given back (the mock counts them) and no object was used while another device was
 * current. No GPU is needed (no AMD GPU exists on the CI machines).
 *   loomrt_hip_mock BUNDLE LIBMOCK_HIP   (MOCK_HIP_ARCH picks the chip, gfx942 by default)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loomrt.h"
#include "tests/c/mock_hip.h"


static LoomrtRuntime *rt;

static void *dev_alloc(size_t bytes) {
  void *p = NULL;
  LoomStatus st = loomrt_alloc(rt, LOOM_DEVICE_HIP, 0, bytes, &p);
  CHECK(st == LOOM_OK && p, "loomrt_alloc(%zu): %s", bytes, loomrt_last_error(rt));
  return p;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: loomrt_hip_mock BUNDLE LIBMOCK_HIP\n");
    return 2;
  }
  void *mock = dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL);
  if (!mock) {
    fprintf(stderr, "loomrt_hip_mock: %s\n", dlerror());
    return 1;
  }
  if (!mock_hip_bind(mock)) {
    fprintf(stderr, "loomrt_hip_mock: %s is not the mock HIP library\n", argv[2]);
    return 1;
  }
  const char *arch = getenv("MOCK_HIP_ARCH");
  if (!arch || !*arch) arch = "gfx942";
  int wave = !strncmp(arch, "gfx9", 4) ? 64 : 32;

  /* no HIP runtime: 0 devices and a message that says so; nothing else breaks */
  setenv("LOOM_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  if (loomrt_create(NULL, &rt) != LOOM_OK) return 1;
  CHECK(loomrt_device_count(rt, LOOM_DEVICE_HIP) == 0, "devices without a HIP runtime");
  CHECK(strstr(loomrt_last_error(rt), "HIP") != NULL, "no-runtime message: '%s'", loomrt_last_error(rt));
  LoomrtStream *s = NULL;
  CHECK(loomrt_stream_create(rt, LOOM_DEVICE_HIP, 0, &s) == LOOM_ERR_UNSUPPORTED && !s, "stream without a HIP runtime");
  CHECK(loomrt_stream_create(rt, (LoomDeviceKind)7, 0, &s) == LOOM_ERR_INVALID_ARGUMENT, "stream of device kind 7");
  loomrt_destroy(rt);

  setenv("LOOM_HIP_LIBRARY", argv[2], 1);
  if (loomrt_create(NULL, &rt) != LOOM_OK) return 1;
  CHECK(loomrt_device_count(rt, LOOM_DEVICE_HIP) == 1, "one mock device: %s", loomrt_last_error(rt));
  CHECK(loomrt_stream_create(rt, LOOM_DEVICE_HIP, 1, &s) == LOOM_ERR_INVALID_ARGUMENT &&
            strstr(loomrt_last_error(rt), "device 1 does not exist"), "device 1: %s", loomrt_last_error(rt));
  if (loomrt_stream_create(rt, LOOM_DEVICE_HIP, 0, &s) != LOOM_OK) {
    fprintf(stderr, "loomrt_hip_mock: stream: %s\n", loomrt_last_error(rt));
    return 1;
  }
  CHECK(loomrt_stream_kind(s) == LOOM_DEVICE_HIP && loomrt_stream_handle(s) != NULL, "the stream's kind and handle");

  /* memory: the pool's blocks, copies both ways */
  float host[1000], back[1000];
  for (int i = 0; i < 1000; i++) host[i] = (float)i * 0.5f - 7;
  float *d = dev_alloc(sizeof host);
  CHECK(loomrt_copy(rt, LOOM_DEVICE_HIP, 0, d, host, sizeof host, 0) == LOOM_OK, "copy to: %s", loomrt_last_error(rt));
  memset(back, 0, sizeof back);
  CHECK(loomrt_copy(rt, LOOM_DEVICE_HIP, 0, back, d, sizeof back, 1) == LOOM_OK, "copy back: %s", loomrt_last_error(rt));
  CHECK(!memcmp(host, back, sizeof host), "the copies do not round-trip");
  CHECK(loomrt_copy(rt, LOOM_DEVICE_HIP, 0, back, d, 4, 2) == LOOM_ERR_INVALID_ARGUMENT, "copy direction 2");

  LoomrtBundle *b = NULL;
  if (loomrt_bundle_open(rt, argv[1], &b) != LOOM_OK) {
    fprintf(stderr, "loomrt_hip_mock: %s\n", loomrt_last_error(rt));
    return 1;
  }
  int64_t n = 1000003;
  void *x = dev_alloc((size_t)n * 4), *y = dev_alloc((size_t)n * 4), *o = dev_alloc((size_t)n * 4);
  int64_t s3[3] = {1, 1, 1};
  int before = launch_count();
  LoomStatus st = loomrt_launch(b, "axpb_f32", s, 1, &n, 3, (void *[]){x, y, o}, s3);
  if (st == LOOM_ERR_UNSUPPORTED) {
    /* a chip the bundle was not built for: the message names what it has */
    CHECK(strstr(loomrt_last_error(rt), "no code for AMD device 0") && strstr(loomrt_last_error(rt), "gfx"),
          "%s: '%s'", arch, loomrt_last_error(rt));
    printf("loomrt_hip_mock: %s: %s\n", arch, loomrt_last_error(rt));
  } else {
    CHECK(st == LOOM_OK, "axpb_f32 on %s: %s", arch, loomrt_last_error(rt));
    CHECK(launch_count() == before + 1, "axpb_f32: %d launches", launch_count() - before);
    const MockLaunch *l = &launches()[before];
    /* words: n, 3 bases, 3 strides, the 4 extra words (nparts, partials, 2 unused: codegen.h) */
    CHECK(word(l, 0) == (uint64_t)n, "axpb_f32: size word %llu", (unsigned long long)word(l, 0));
    CHECK(word(l, 1) == (uint64_t)(uintptr_t)x && word(l, 2) == (uint64_t)(uintptr_t)y && word(l, 3) == (uint64_t)(uintptr_t)o,
          "axpb_f32: base words");
    CHECK(word(l, 4) == 1 && word(l, 5) == 1 && word(l, 6) == 1, "axpb_f32: stride words");
    CHECK(word(l, 7) == 1 && word(l, 8) == 0, "axpb_f32: split words %llu %llu", (unsigned long long)word(l, 7),
          (unsigned long long)word(l, 8));
    CHECK(l->block[0] % (unsigned)wave == 0 && l->block[0] <= 1024 && l->grid[0] >= 1, "axpb_f32: grid %u block %u (wave %d)",
          l->grid[0], l->block[0], wave);
    CHECK(l->stream == loomrt_stream_handle(s), "axpb_f32: launched on another stream");

    /* scalar parameters after the extra words, as the kernel's dtypes (float32 bits) */
    float a = -1.75f, c = 0.5f;
    int64_t s2[2] = {1, 1};
    before = launch_count();
    st = loomrt_launch_params(b, "scale_shift_f32", s, 1, &n, 2, (void *[]){x, o}, s2, 2, (const void *[]){&a, &c});
    CHECK(st == LOOM_OK && launch_count() == before + 1, "scale_shift_f32: %s", loomrt_last_error(rt));
    if (st == LOOM_OK) {
      l = &launches()[before];
      uint32_t wa = (uint32_t)word(l, 9), wc = (uint32_t)word(l, 10); /* after the 4 extra words (codegen.h) */
      float fa, fc;
      memcpy(&fa, &wa, 4);
      memcpy(&fc, &wc, 4);
      CHECK(word(l, 5) == 1 && word(l, 6) == 0 && fa == a && fc == c, "scale_shift_f32: parameter words %g %g", fa, fc);
    }

    /* a row reduction over few long rows: split into parts (sizes only: 5 parts of 70000 / 300 rows),
     * a part launch and a finish launch, the partials from the pool */
    int64_t shape[2] = {300, 70000}, st4[4] = {70000, 1, 1, 0};
    void *big = dev_alloc((size_t)300 * 70000 * 4), *rs = dev_alloc(300 * 4);
    before = launch_count();
    st = loomrt_launch(b, "rowsum_f32", s, 2, shape, 2, (void *[]){big, rs}, st4);
    CHECK(st == LOOM_OK && launch_count() == before + 2, "rowsum_f32 (split): %s, %d launches", loomrt_last_error(rt),
          launch_count() - before);
    if (st == LOOM_OK && launch_count() == before + 2) {
      const MockLaunch *p = &launches()[before], *f = &launches()[before + 1];
      CHECK(word(p, 0) == 300 && word(p, 1) == 70000, "rowsum_f32: shape words");
      CHECK(word(p, 8) == 5 && word(p, 9) != 0 && word(f, 8) == 5 && word(f, 9) == word(p, 9),
            "rowsum_f32: parts %llu, partials %llx / %llx", (unsigned long long)word(p, 8), (unsigned long long)word(p, 9),
            (unsigned long long)word(f, 9));
      CHECK(strcmp(p->name, f->name) != 0, "rowsum_f32: part and finish are one function (%s)", p->name);
      CHECK(p->grid[0] == 300 * 5 && p->block[0] % (unsigned)wave == 0, "rowsum_f32: part grid %u block %u", p->grid[0],
            p->block[0]);
    }
    /* short rows (50 <= wave * cache_k): the cached entry's short-row mode, 4 lanes a row (4 * 16 >= 50) in
     * extra word 2, 64 rows per block of 256 (rows of 50 float32 start on every phase mod 4: the vector
     * entry's peel would want 8 lanes for up to 6 extra points, more than the scalar entry's 4) */
    int64_t shape2[2] = {1000, 50}, st5[4] = {50, 1, 1, 0};
    before = launch_count();
    st = loomrt_launch(b, "rowsum_f32", s, 2, shape2, 2, (void *[]){big, rs}, st5);
    CHECK(st == LOOM_OK && launch_count() == before + 1, "rowsum_f32 (short rows): %s", loomrt_last_error(rt));
    if (st == LOOM_OK && launch_count() == before + 1) {
      const MockLaunch *p = &launches()[before];
      CHECK(p->grid[0] == 16 && p->block[0] == 256 && word(p, 10) == 4,
            "rowsum_f32 (short rows): grid %u block %u, %llu lanes a row", p->grid[0], p->block[0],
            (unsigned long long)word(p, 10));
    }
    /* short rows of 130 float32 (starts on every phase mod 4): the vector entry's peel (gpu_cached.c; up to 6
     * extra points a row, fewer than the 16 lanes a row that 16 * 16 >= 130 takes), 16 rows per block */
    int64_t shape3[2] = {1000, 130}, st6[4] = {130, 1, 1, 0};
    before = launch_count();
    st = loomrt_launch(b, "rowsum_f32", s, 2, shape3, 2, (void *[]){big, rs}, st6);
    CHECK(st == LOOM_OK && launch_count() == before + 1, "rowsum_f32 (odd short rows): %s", loomrt_last_error(rt));
    if (st == LOOM_OK && launch_count() == before + 1) {
      const MockLaunch *p = &launches()[before];
      size_t nl = strlen(p->name);
      CHECK(nl > 6 && !strcmp(p->name + nl - 6, "_rowcv") && p->grid[0] == 63 && p->block[0] == 256 && word(p, 10) == 16,
            "rowsum_f32 (odd short rows): %s grid %u block %u, %llu lanes a row", p->name, p->grid[0], p->block[0],
            (unsigned long long)word(p, 10));
    }
    /* a full reduction of float64 with integer and float parameters */
    int16_t k = 3;
    double sc = 0.25;
    int64_t s2b[2] = {1, 0};
    before = launch_count();
    st = loomrt_launch_params(b, "sumk_i16", s, 1, &n, 2, (void *[]){x, rs}, s2b, 2, (const void *[]){&k, &sc});
    CHECK(st == LOOM_OK && launch_count() > before, "sumk_i16: %s", loomrt_last_error(rt));
    if (st == LOOM_OK && launch_count() > before) {
      const MockLaunch *p = &launches()[before];
      double w;
      uint64_t bits = word(p, 10); /* n, 2 bases, 2 strides, 4 extra words, then k and s */
      memcpy(&w, &bits, 8);
      CHECK((int64_t)word(p, 9) == 3 && w == 0.25, "sumk_i16: parameter words %lld %g", (long long)word(p, 9), w);
    }
    /* strides that contradict the code's layout are refused before anything runs */
    int64_t bad[3] = {2, 1, 1};
    before = launch_count();
    CHECK(loomrt_launch(b, "axpb_f32", s, 1, &n, 3, (void *[]){x, y, o}, bad) == LOOM_ERR_INVALID_ARGUMENT &&
              launch_count() == before, "axpb_f32 with stride 2");
    loomrt_free(rt, LOOM_DEVICE_HIP, 0, big);
    loomrt_free(rt, LOOM_DEVICE_HIP, 0, rs);
    CHECK(loomrt_stream_synchronize(s) == LOOM_OK, "synchronize: %s", loomrt_last_error(rt));
    printf("loomrt_hip_mock: %s: %d launches checked (wave %d)\n", arch, launch_count(), wave);
  }
  loomrt_free(rt, LOOM_DEVICE_HIP, 0, x);
  loomrt_free(rt, LOOM_DEVICE_HIP, 0, y);
  loomrt_free(rt, LOOM_DEVICE_HIP, 0, o);
  loomrt_free(rt, LOOM_DEVICE_HIP, 0, d);
  loomrt_bundle_close(b);
  loomrt_stream_destroy(s);
  loomrt_destroy(rt);
  MockHipStats ms;
  mock_stats(&ms);
  CHECK(ms.live_allocs == 0 && ms.live_streams == 0 && ms.live_events == 0 && ms.live_modules == 0,
        "HIP objects left: %d allocations, %d streams, %d events, %d modules", ms.live_allocs, ms.live_streams,
        ms.live_events, ms.live_modules);
  CHECK(ms.not_current == 0, "%d uses of an object while another device was current", ms.not_current);
  if (check_failed) {
    fprintf(stderr, "loomrt_hip_mock: %d failure(s)\n", check_failed);
    return 1;
  }
  printf("loomrt_hip_mock: ok\n");
  return 0;
}
