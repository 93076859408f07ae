/* SPDX-License-Identifier: Apache-2.0 */
/* test_bundle_fuse: bundled @loom.fuse signatures through the C API (loom_aot.h, bundle format 1.2).
 *
 * The "function" is f(x, y, a) = ((x - y) * a + 1, sum over axis 1 of x * x): two traces of it are built
 * by hand (graphs of sizes 5x7 with a = 1.4375 and 8x11 with a = 2.3125), the first also evaluated on host
 * arrays while the builder captures its kernels. loom_bundle_builder_add_fuse must keep it (the scalar
 * argument bound to its constant, the literal 1 kept), and refuse graphs whose sizes are literal (a reshape)
 * or whose constant comes from a size (x * (1 / 7)), or whose traces differ. The bundle is loaded into a
 * fresh context with jit = 0; loom_bundle_fuse_build rebuilds the call for 13x17 arrays and a = -0.75 and the
 * evaluation must match a float64 reference computed here (within float32 rounding), with 0 compiles; an
 * unknown identity is not found; arrays whose sizes do not broadcast fail the rebuild with the graph's own
 * message. With LOOM_FUSE_SEED_OUT set, the bundle is also written there (the fuzzer's seed with a FUSE
 * section: tests/fuzz/bundle_seeds_fuse/).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loom/loom_aot.h"
#include "runtime/bundle_fuse.h"
#include "test_common.h"

static LoomArray arr(LoomDType t, int64_t m, int64_t n, void *data) {
  LoomArray a = {0};
  a.data = data ? data : (void *)(uintptr_t)64; /* a trace's placeholder: never read */
  a.dtype = t;
  a.ndim = 2;
  a.shape[0] = m, a.shape[1] = n;
  a.strides[0] = n, a.strides[1] = 1;
  return a;
}

/* f's graph for x, y (m x n float32) and scalar a; args[3] and outs[2] describe it. kind: 0 f, 1 with a
 * reshape, 2 with a constant 1/n, 3 with x * x read through expand_dims and a reversed whole slice (size-free:
 * the second output is then sum over axis 2 of x[:, None, ::-1] ** 2, of shape m x 1). */
static bool build(LoomGraph *g, int64_t m, int64_t n, double a, float *xd, float *yd, LoomFuseArg *args, LoomNode *outs,
                  int kind) {
  LoomArray x = arr(LOOM_FLOAT32, m, n, xd), y = arr(LOOM_FLOAT32, m, n, yd);
  if (!xd) y.data = (void *)(uintptr_t)128;
  LoomNode nx, ny, d, ca, t, one, sq, s;
  int32_t ax = 1;
  bool ok = CHECK_OK(loom_input(g, &x, &nx)) && CHECK_OK(loom_input(g, &y, &ny)) &&
            CHECK_OK(loom_binary(g, LOOM_OP_SUB, nx, ny, &d)) && CHECK_OK(loom_weak_float(g, a, &ca)) &&
            CHECK_OK(loom_binary(g, LOOM_OP_MUL, d, ca, &t)) && CHECK_OK(loom_weak_int(g, 1, &one)) &&
            CHECK_OK(loom_binary(g, LOOM_OP_ADD, t, one, &outs[0])) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, nx, nx, &sq));
  if (ok && kind == 1) {
    int64_t flat = m * n;
    ok = CHECK_OK(loom_reshape(g, sq, 1, &flat, &sq));
    ax = 0;
  }
  if (ok && kind == 3) {
    int64_t start[3] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE, LOOM_SLICE_NONE}, stop[3] = {LOOM_SLICE_NONE, LOOM_SLICE_NONE,
                                                                                         LOOM_SLICE_NONE};
    int64_t step[3] = {1, 1, -1};
    ok = CHECK_OK(loom_expand_dims(g, sq, 1, &sq)) && CHECK_OK(loom_slice(g, sq, start, stop, step, &sq));
    ax = 2;
  }
  if (ok && kind == 2) {
    LoomNode inv;
    ok = CHECK_OK(loom_weak_float(g, 1.0 / (double)n, &inv)) && CHECK_OK(loom_binary(g, LOOM_OP_MUL, sq, inv, &sq));
  }
  ok = ok && CHECK_OK(loom_reduce(g, LOOM_REDUCE_SUM, sq, 1, &ax, 0, &s));
  outs[1] = s;
  args[0] = (LoomFuseArg){.kind = LOOM_FUSE_ARRAY, .dtype = LOOM_FLOAT32, .ndim = 2, .node = nx};
  args[1] = (LoomFuseArg){.kind = LOOM_FUSE_ARRAY, .dtype = LOOM_FLOAT32, .ndim = 2, .node = ny};
  args[2] = (LoomFuseArg){.kind = LOOM_FUSE_FLOAT, .re = a};
  return ok;
}

static void fill(float *p, int64_t n, unsigned seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) % 20001) / 10000.0f - 1.0f;
  }
}

/* add_fuse of kind's two traces; returns its status. */
static LoomStatus record(LoomBundleBuilder *b, const char *ident, int kind) {
  LoomGraph *ga = NULL, *gb = NULL;
  LoomFuseArg aa[3], ab[3];
  LoomNode oa[2], ob[2];
  LoomStatus st = LOOM_ERR_INTERNAL;
  if (CHECK_OK(loom_graph_create(tc_ctx, &ga)) && CHECK_OK(loom_graph_create(tc_ctx, &gb)) &&
      build(ga, 5, 7, 1.4375, NULL, NULL, aa, oa, kind) && build(gb, 8, 11, 2.3125, NULL, NULL, ab, ob, kind))
    st = loom_bundle_builder_add_fuse(b, "f", ident, 3, ga, aa, oa, gb, ab, ob, 2, 0, NULL, 0);
  loom_graph_destroy(ga);
  loom_graph_destroy(gb);
  return st;
}

/* Every single-bit flip of the FUSE section, with the checksums recomputed (so that it reaches the
 * structural checks): the bundle is refused with a message naming the section, or it loads and its
 * records rebuild into a valid graph or fail cleanly. Counts each outcome. */
static void flip_sweep(const char *path) {
  FILE *f = fopen(path, "rb");
  static uint8_t buf[1 << 20];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  if (!CHECK(n > RB_HEADER_SIZE, "read %s", path)) return;
  uint64_t toff = rb_get64(buf + 24), off = 0, size = 0;
  uint32_t ns = rb_get32(buf + 32), si = 0;
  for (uint32_t i = 0; i < ns; i++)
    if (rb_get32(buf + toff + 32 * i) == RB_SEC_FUSE) off = rb_get64(buf + toff + 32 * i + 8), size = rb_get64(buf + toff + 32 * i + 16), si = i;
  if (!CHECK(size > 0, "the bundle has a FUSE section")) return;
  long refused = 0, loaded = 0, rebuilt = 0, badmsg = 0;
  for (uint64_t bit = 0; bit < 8 * size; bit++) {
    buf[off + bit / 8] ^= (uint8_t)(1u << (bit % 8));
    rb_put32(buf + toff + 32 * si + 24, rt_crc32c(0, buf + off, (size_t)size));
    rb_put32(buf + 36, rt_crc32c(0, buf + toff, (size_t)ns * RB_SECTION_ENTRY));
    rb_put32(buf + 60, rt_crc32c(0, buf, 60));
    RtBundle *b = NULL;
    Diag d = {.status = LOOM_OK};
    if (rt_bundle_parse(tc_ctx, buf, n, "flip", &b, &d) != LOOM_OK) {
      refused++;
      badmsg += strstr(d.msg, "section FUSE") == NULL;
    } else {
      loaded++;
      for (int32_t r = 0; r < b->nfuse; r++) {
        const RtFuseRecord *fr = &b->fuse[r];
        IrGraph g;
        Diag gd = {.status = LOOM_OK};
        if (ir_graph_init(&g, tc_ctx, &gd) != LOOM_OK) continue;
        LoomFuseArg a[RF_MAX_ARGS];
        bool ok = true;
        for (int32_t j = 0; j < fr->nargs && ok; j++) {
          a[j] = (LoomFuseArg){.kind = fr->args[j].kind, .dtype = fr->args[j].dtype, .ndim = fr->args[j].ndim, .i = 3, .re = 0.5};
          if (a[j].kind != LOOM_FUSE_ARRAY) continue;
          LoomArray x = {.data = (void *)(uintptr_t)(64 * (j + 1)), .dtype = (LoomDType)a[j].dtype, .ndim = a[j].ndim};
          for (int k = 0; k < a[j].ndim; k++) x.shape[k] = 4, x.strides[k] = 1;
          ok = ir_input(&g, &x, &a[j].node, &gd) == LOOM_OK;
        }
        int32_t map[64];
        if (ok && fr->nnode <= 64 && rt_fuse_replay(&g, fr, a, map, &gd) == LOOM_OK) rebuilt++;
        ir_graph_free(&g);
      }
      rt_bundle_free(b);
    }
    buf[off + bit / 8] ^= (uint8_t)(1u << (bit % 8));
  }
  CHECK(badmsg == 0, "%ld refusals do not name the FUSE section", badmsg);
  CHECK(refused > 0 && refused + loaded == (long)(8 * size), "flips: %ld refused, %ld loaded", refused, loaded);
  printf("FUSE section bit flips: %llu, refused %ld, loaded %ld (records rebuilt %ld)\n", (unsigned long long)(8 * size),
         refused, loaded, rebuilt);
}

int main(void) {
  if (!tc_init()) return 1;
  char dir[] = "/tmp/loom_bundle_fuse_XXXXXX", path[300];
  if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp")) return tc_finish();
  snprintf(path, sizeof path, "%s/f.lbun", dir);

  /* capture f's kernels on real 5x7 arrays, then record its graph */
  LoomBundleBuilder *b = NULL;
  CHECK_OK(loom_bundle_builder_create(tc_ctx, &b));
  float xd[35], yd[35];
  fill(xd, 35, 1), fill(yd, 35, 2);
  LoomGraph *g = NULL;
  LoomFuseArg args[3];
  LoomNode outs[2];
  LoomArray res[2];
  memset(res, 0, sizeof res);
  CHECK_OK(loom_bundle_builder_capture_begin(b, "f"));
  CHECK_OK(loom_graph_create(tc_ctx, &g));
  if (build(g, 5, 7, 1.4375, xd, yd, args, outs, 0)) CHECK_OK(loom_eval(g, 2, outs, res));
  int32_t nk = 0;
  CHECK_OK(loom_bundle_builder_capture_end(b, &nk));
  CHECK(nk >= 1, "captured %d kernels", (int)nk);
  loom_array_free(tc_ctx, &res[0]);
  loom_array_free(tc_ctx, &res[1]);
  loom_graph_destroy(g);
  CHECK_OK(record(b, "test:f:1", 0));
  CHECK_OK(record(b, "test:f:1", 0)); /* the same signature again: ignored */
  CHECK_OK(record(b, "test:f:unit", 3)); /* a unit reshape and a whole reversed slice: kept */
  CHECK_STATUS(record(b, "test:f:reshape", 1), LOOM_ERR_UNSUPPORTED);
  CHECK(strstr(loom_last_error(tc_ctx), "reshape") != NULL, "reshape refused: %s", loom_last_error(tc_ctx));
  CHECK_STATUS(record(b, "test:f:inv", 2), LOOM_ERR_UNSUPPORTED);
  CHECK(strstr(loom_last_error(tc_ctx), "computed from the sizes") != NULL, "1/n refused: %s", loom_last_error(tc_ctx));
  { /* two traces of different functions */
    LoomGraph *ga = NULL, *gb = NULL;
    LoomFuseArg aa[3], ab[3];
    LoomNode oa[2], ob[2];
    CHECK_OK(loom_graph_create(tc_ctx, &ga));
    CHECK_OK(loom_graph_create(tc_ctx, &gb));
    if (build(ga, 5, 7, 1.4375, NULL, NULL, aa, oa, 0) && build(gb, 8, 11, 2.3125, NULL, NULL, ab, ob, 0)) {
      LoomNode swapped[2] = {ob[1], ob[0]};
      CHECK_STATUS(loom_bundle_builder_add_fuse(b, "f", "test:f:2", 3, ga, aa, oa, gb, ab, swapped, 2, 0, NULL, 0),
                   LOOM_ERR_UNSUPPORTED);
      CHECK_STATUS(loom_bundle_builder_add_fuse(b, "f", "test:f:2", 3, ga, aa, oa, gb, ab, ob, 2, 1, (int32_t[]){2}, 0),
                   LOOM_ERR_INVALID_ARGUMENT); /* a scalar cannot be written */
    }
    loom_graph_destroy(ga);
    loom_graph_destroy(gb);
  }
  LoomBundleOptions opt = {.targets = "host", .progress = 0, .index_widths = 3};
  CHECK_OK(loom_bundle_builder_write(b, &opt, path));
  loom_bundle_builder_destroy(b);
  const char *seed = getenv("LOOM_FUSE_SEED_OUT");
  if (seed && *seed) {
    FILE *in = fopen(path, "rb"), *out = fopen(seed, "wb");
    char buf[65536];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
    if (in) fclose(in);
    if (out) fclose(out);
  }
  char *text = NULL;
  if (CHECK_OK(loom_bundle_describe(tc_ctx, path, &text))) {
    CHECK(strstr(text, "format 1.2") && strstr(text, "f(float32 2-d, float32 2-d, float)") && strstr(text, "test:f:1"),
          "describe: %s", text);
    CHECK(!strstr(text, "test:f:reshape") && !strstr(text, "test:f:2"), "refused records absent: %s", text);
    loom_free_string(tc_ctx, text);
  }

  flip_sweep(path);

  /* a fresh context, jit off: the call for 13x17 arrays and a = -0.75 is rebuilt, not traced */
  LoomContext *ctx = NULL;
  CHECK_OK(loom_context_create(&ctx));
  CHECK_OK(loom_bundle_load(ctx, path, 0));
  CHECK(loom_bundle_fuse_count(ctx) == 2, "two records loaded: %d", (int)loom_bundle_fuse_count(ctx));
  enum { M = 13, N = 17 };
  float *x = malloc(sizeof(float) * M * N), *y = malloc(sizeof(float) * M * N);
  fill(x, M * N, 3), fill(y, M * N, 4);
  LoomGraph *h = NULL;
  CHECK_OK(loom_graph_create(ctx, &h));
  LoomArray ax = arr(LOOM_FLOAT32, M, N, x), ay = arr(LOOM_FLOAT32, M, N, y);
  LoomFuseArg ca[3] = {{.kind = LOOM_FUSE_ARRAY, .dtype = LOOM_FLOAT32, .ndim = 2},
                       {.kind = LOOM_FUSE_ARRAY, .dtype = LOOM_FLOAT32, .ndim = 2},
                       {.kind = LOOM_FUSE_FLOAT, .re = -0.75}};
  CHECK_OK(loom_input(h, &ax, &ca[0].node));
  CHECK_OK(loom_input(h, &ay, &ca[1].node));
  LoomNode ro[256];
  int32_t nout = 0, nwrite = -1, wr[256];
  int tup = -1, found = 0;
  CHECK(loom_bundle_fuse_find(ctx, "test:f:1", 3, ca) == 1 && loom_bundle_fuse_find(ctx, "test:f:other", 3, ca) == 0,
        "find by identity");
  ca[2].kind = LOOM_FUSE_INT;
  CHECK(loom_bundle_fuse_find(ctx, "test:f:1", 3, ca) == 0, "find by argument kinds");
  ca[2].kind = LOOM_FUSE_FLOAT;
  CHECK_OK(loom_bundle_fuse_build(h, "test:f:other", 3, ca, ro, 256, &nout, &nwrite, wr, &tup, &found));
  CHECK(found == 0, "an unknown identity is not found");
  CHECK_OK(loom_bundle_fuse_build(h, "test:f:1", 3, ca, ro, 256, &nout, &nwrite, wr, &tup, &found));
  CHECK(found == 1 && nout == 2 && nwrite == 0 && tup == 0, "found %d, %d outputs, %d written, tuple %d", found, (int)nout,
        (int)nwrite, tup);
  if (found && nout == 2) {
    LoomArray r[2];
    memset(r, 0, sizeof r);
    if (CHECK_OK(loom_eval(h, 2, ro, r))) {
      CHECK(r[0].ndim == 2 && r[0].shape[0] == M && r[0].shape[1] == N && r[0].dtype == LOOM_FLOAT32, "first result's shape");
      CHECK(r[1].ndim == 1 && r[1].shape[0] == M && r[1].dtype == LOOM_FLOAT32, "second result's shape");
      double e0 = 0, e1 = 0;
      for (int i = 0; i < M; i++) {
        double s = 0;
        for (int j = 0; j < N; j++) {
          double xv = x[i * N + j], want = (xv - (double)y[i * N + j]) * -0.75 + 1;
          e0 = fmax(e0, fabs(((float *)r[0].data)[r[0].strides[0] * i + r[0].strides[1] * j] - want));
          s += xv * xv;
        }
        e1 = fmax(e1, fabs(((float *)r[1].data)[r[1].strides[0] * i] - s) / s);
      }
      CHECK(e0 <= 4e-7, "(x - y) * a + 1 off by %g", e0);
      CHECK(e1 <= 2e-6, "row sums of x * x off by %g (relative)", e1);
      loom_array_free(ctx, &r[0]);
      loom_array_free(ctx, &r[1]);
    }
  }
  LoomStats stats;
  CHECK_OK(loom_get_stats(ctx, &stats));
  CHECK(stats.kernels_compiled == 0, "%llu kernels compiled", (unsigned long long)stats.kernels_compiled);
  { /* the unit-reshape record rebuilt for 13 x 17: the second output is m x 1 (its kernels were not
     * captured: the JIT compiles them) */
    int32_t n2 = 0;
    CHECK_OK(loom_bundle_set_jit(ctx, 1));
    if (CHECK_OK(loom_bundle_fuse_build(h, "test:f:unit", 3, ca, ro, 256, &n2, &nwrite, wr, &tup, &found)) && found && n2 == 2) {
      LoomArray r[2];
      memset(r, 0, sizeof r);
      if (CHECK_OK(loom_eval(h, 1, &ro[1], &r[1]))) {
        CHECK(r[1].ndim == 2 && r[1].shape[0] == M && r[1].shape[1] == 1, "expand_dims + slice + sum: shape");
        double e1 = 0;
        for (int i = 0; i < M; i++) {
          double s = 0;
          for (int j = 0; j < N; j++) s += (double)x[i * N + j] * x[i * N + j];
          e1 = fmax(e1, fabs(((float *)r[1].data)[r[1].strides[0] * i] - s) / s);
        }
        CHECK(e1 <= 2e-6, "row sums through the unit reshape off by %g", e1);
        loom_array_free(ctx, &r[1]);
      }
    }
  }
  /* sizes that do not broadcast: the rebuild fails with the graph's message (a caller then traces) */
  LoomArray bad = arr(LOOM_FLOAT32, M, N - 1, y);
  bad.strides[0] = N;
  CHECK_OK(loom_input(h, &bad, &ca[1].node));
  found = 1;
  CHECK_STATUS(loom_bundle_fuse_build(h, "test:f:1", 3, ca, ro, 256, &nout, &nwrite, wr, &tup, &found), LOOM_ERR_SHAPE);
  CHECK(found == 0 && strstr(loom_last_error(ctx), "broadcast"), "broadcast error: %s", loom_last_error(ctx));
  loom_graph_destroy(h);
  loom_context_destroy(ctx);
  free(x);
  free(y);
  unlink(path);
  rmdir(dir);
  return tc_finish();
}
