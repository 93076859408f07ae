/* SPDX-License-Identifier: Apache-2.0 */
/* test_bundle_loom: AOT bundles inside libloom.
 *
 * Kernels are captured while small host graphs evaluate (and from a user ElementwiseKernel), bundled for
 * the three x86-64 levels, and loaded into fresh contexts; the same computations at other sizes must
 * then run with 0 compilations and give the results of a reference written here in float64 (exactly
 * where the arithmetic is exact) and of the JIT (bit for bit where no vector math library is involved).
 * Then the production mode (jit = 0), the builder's errors (names, targets, IR text), where the CUDA
 * toolkit is installed, every PTX of a bundle through ptxas and every cubin's ELF header, and the AMD
 * code objects of a bundle for gfx90a, gfx942 and gfx1100, each checked as test_amdgpu checks the JIT's
 * (amdgpu_check.h: ELF, descriptors, metadata read by comgr and llvm-readelf, registers, LDS) with the
 * launch facts of its chip's wave. (Loading an AMD bundle and launching from it: test_hip_mock.)
 */
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "amdgpu_check.h"
#include "loom/loom_aot.h"
#include "runtime/bundle.h"
#include "runtime/bundle_build.h"
#include "test_common.h"

static char dir[256];

static LoomArray host_array(LoomDType t, int nd, const int64_t *shape, void *data) {
  LoomArray a = {0};
  a.data = data;
  a.dtype = t;
  a.ndim = nd;
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = s;
    s *= shape[i];
  }
  return a;
}

/* The computations: (0) y = (x * 1.5 + w) / 3, float32; (1) z = exp(x) - sqrt(w), float64;
 * (2) row sums of x * x, float64 (m, k); (3) softmax over rows, float32. Evaluated on ctx. */
typedef struct Data {
  int64_t n, m, k;
  float *x32, *w32, *y32, *sm32;
  double *x64, *w64, *z64, *rows64, *sq64;
} Data;

static Data make_data(int64_t n, int64_t m, int64_t k, unsigned seed) {
  Data d = {.n = n, .m = m, .k = k};
  d.x32 = malloc((size_t)n * 4), d.w32 = malloc((size_t)n * 4), d.y32 = malloc((size_t)n * 4);
  d.x64 = malloc((size_t)n * 8), d.w64 = malloc((size_t)n * 8), d.z64 = malloc((size_t)n * 8);
  d.sq64 = malloc((size_t)(m * k) * 8), d.rows64 = malloc((size_t)m * 8), d.sm32 = malloc((size_t)(m * k) * 4);
  srand(seed);
  for (int64_t i = 0; i < n; i++) {
    d.x32[i] = (float)rand() / RAND_MAX * 20 - 10, d.w32[i] = (float)rand() / RAND_MAX;
    d.x64[i] = (double)rand() / RAND_MAX * 10 - 5, d.w64[i] = (double)rand() / RAND_MAX * 4;
  }
  for (int64_t i = 0; i < m * k; i++) d.sq64[i] = (double)rand() / RAND_MAX - 0.5;
  return d;
}

static void free_data(Data *d) {
  free(d->x32), free(d->w32), free(d->y32), free(d->x64), free(d->w64), free(d->z64), free(d->sq64), free(d->rows64),
      free(d->sm32);
}

static bool run(LoomContext *ctx, Data *d, int which) {
  LoomGraph *g = NULL;
  if (!CHECK_OK(loom_graph_create(ctx, &g))) return false;
  LoomNode a, b, c, e, r;
  LoomStatus st = LOOM_OK;
  LoomArray out;
  int64_t mk[2] = {d->m, d->k};
  if (which == 0) {
    LoomArray X = host_array(LOOM_FLOAT32, 1, &d->n, d->x32), W = host_array(LOOM_FLOAT32, 1, &d->n, d->w32);
    out = host_array(LOOM_FLOAT32, 1, &d->n, d->y32);
    st = loom_input(g, &X, &a) ?: loom_input(g, &W, &b) ?: loom_weak_float(g, 1.5, &c) ?: loom_binary(g, LOOM_OP_MUL, a, c, &e) ?:
         loom_binary(g, LOOM_OP_ADD, e, b, &e) ?: loom_weak_float(g, 3.0, &c) ?: loom_binary(g, LOOM_OP_TRUEDIV, e, c, &r);
  } else if (which == 1) {
    LoomArray X = host_array(LOOM_FLOAT64, 1, &d->n, d->x64), W = host_array(LOOM_FLOAT64, 1, &d->n, d->w64);
    out = host_array(LOOM_FLOAT64, 1, &d->n, d->z64);
    st = loom_input(g, &X, &a) ?: loom_input(g, &W, &b) ?: loom_unary(g, LOOM_OP_EXP, a, &c) ?: loom_unary(g, LOOM_OP_SQRT, b, &e) ?:
         loom_binary(g, LOOM_OP_SUB, c, e, &r);
  } else if (which == 2) {
    LoomArray X = host_array(LOOM_FLOAT64, 2, mk, d->sq64);
    out = host_array(LOOM_FLOAT64, 1, &d->m, d->rows64);
    int32_t ax = 1;
    st = loom_input(g, &X, &a) ?: loom_binary(g, LOOM_OP_MUL, a, a, &b) ?: loom_reduce(g, LOOM_REDUCE_SUM, b, 1, &ax, 0, &r);
  } else {
    LoomArray X = host_array(LOOM_FLOAT32, 2, mk, d->x32);
    out = host_array(LOOM_FLOAT32, 2, mk, d->sm32);
    int32_t ax = 1;
    st = loom_input(g, &X, &a) ?: loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &ax, 1, &b) ?: loom_binary(g, LOOM_OP_SUB, a, b, &c) ?:
         loom_unary(g, LOOM_OP_EXP, c, &c) ?: loom_reduce(g, LOOM_REDUCE_SUM, c, 1, &ax, 1, &e) ?:
         loom_binary(g, LOOM_OP_TRUEDIV, c, e, &r);
  }
  if (st == LOOM_OK) st = loom_eval(g, 1, &r, &out);
  CHECK(st == LOOM_OK, "computation %d: %s", which, loom_last_error(ctx));
  loom_graph_destroy(g);
  return st == LOOM_OK;
}

static void check_reference(Data *d) {
  long bad = 0;
  for (int64_t i = 0; i < d->n; i++) {
    volatile float t = d->x32[i] * 1.5f;
    volatile float u = t + d->w32[i];
    float want = u / 3.0f;
    bad += d->y32[i] != want;
  }
  CHECK(bad == 0, "computation 0: %ld results differ from float32 (x*1.5+w)/3", bad);
  bad = 0;
  for (int64_t i = 0; i < d->n; i++) {
    double want = exp(d->x64[i]) - sqrt(d->w64[i]);
    bad += !(fabs(d->z64[i] - want) <= 4e-16 * (exp(d->x64[i]) + sqrt(d->w64[i])));
  }
  CHECK(bad == 0, "computation 1: %ld results off float64 exp(x) - sqrt(w)", bad);
  bad = 0;
  for (int64_t r = 0; r < d->m; r++) {
    double s = 0;
    for (int64_t j = 0; j < d->k; j++) s += d->sq64[r * d->k + j] * d->sq64[r * d->k + j];
    bad += !(fabs(d->rows64[r] - s) <= 1e-13 * s);
  }
  CHECK(bad == 0, "computation 2: %ld row sums off", bad);
  bad = 0;
  for (int64_t r = 0; r < d->m; r++) {
    float mx = -INFINITY;
    double s = 0;
    for (int64_t j = 0; j < d->k; j++) mx = d->x32[r * d->k + j] > mx ? d->x32[r * d->k + j] : mx;
    for (int64_t j = 0; j < d->k; j++) {
      volatile float dx = d->x32[r * d->k + j] - mx; /* rounded to float32 as the kernel does */
      s += exp((double)dx);
    }
    for (int64_t j = 0; j < d->k; j++) {
      volatile float dx = d->x32[r * d->k + j] - mx;
      double want = exp((double)dx) / s;
      bad += !(fabs(d->sm32[r * d->k + j] - want) <= 2e-5 * want);
    }
  }
  CHECK(bad == 0, "computation 3: %ld softmax values off float64", bad);
}

static LoomContext *fresh(void) {
  LoomContext *c = NULL;
  CHECK_OK(loom_context_create(&c));
  return c;
}

static uint64_t compiles(LoomContext *c) {
  LoomStats s;
  loom_get_stats(c, &s);
  return s.kernels_compiled;
}

static char bundle_path[512];

static void test_capture_and_build(void) {
  LoomBundleBuilder *b = NULL;
  if (!CHECK_OK(loom_bundle_builder_create(tc_ctx, &b))) return;
  Data d = make_data(257, 5, 9, 1);
  const char *names[4] = {"scale_add", "exp_sqrt", "row_sq_sum", "softmax"};
  for (int w = 0; w < 4; w++) {
    CHECK_OK(loom_bundle_builder_capture_begin(b, names[w]));
    run(tc_ctx, &d, w);
    run(tc_ctx, &d, w); /* a second run adds nothing */
    int32_t nk = 0;
    CHECK_OK(loom_bundle_builder_capture_end(b, &nk));
    CHECK(nk == 1, "%s: %d kernels captured", names[w], nk);
  }
  CHECK(loom_bundle_builder_count(b) == 4, "4 entries");
  /* builder errors: a name used twice, not an identifier, a capture that ran nothing */
  CHECK_STATUS(loom_bundle_builder_capture_begin(b, "not an identifier"), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_OK(loom_bundle_builder_capture_begin(b, "softmax"));
  run(tc_ctx, &d, 3);
  CHECK_STATUS(loom_bundle_builder_capture_end(b, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "'softmax' is used twice"), "duplicate name: %s", loom_last_error(tc_ctx));
  CHECK_OK(loom_bundle_builder_capture_begin(b, "nothing"));
  CHECK_STATUS(loom_bundle_builder_capture_end(b, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "no kernel ran on the host"), "empty capture: %s", loom_last_error(tc_ctx));
  CHECK(loom_bundle_builder_count(b) == 4, "failed captures leave the entries as they were");
  /* targets */
  LoomBundleOptions bad = {.targets = "host,bogus", .progress = 0};
  CHECK_STATUS(loom_bundle_builder_write(b, &bad, "/tmp/x.lbun"), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "bundle target 'bogus' is unknown"), "bogus: %s", loom_last_error(tc_ctx));
  bad.targets = "host,gfx123";
  CHECK_STATUS(loom_bundle_builder_write(b, &bad, "/tmp/x.lbun"), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "an AMD chip loom does not know") && strstr(loom_last_error(tc_ctx), "gfx942"),
        "gfx123: %s", loom_last_error(tc_ctx));
  bad.targets = "gfxzz";
  CHECK_STATUS(loom_bundle_builder_write(b, &bad, "/tmp/x.lbun"), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "not a gfx name"), "gfxzz: %s", loom_last_error(tc_ctx));
  bad.targets = "sm_90";
  bad.ptxas = "/nonexistent/ptxas";
  CHECK_STATUS(loom_bundle_builder_write(b, &bad, "/tmp/x.lbun"), LOOM_ERR_UNSUPPORTED);
  CHECK(strstr(loom_last_error(tc_ctx), "needs the CUDA toolkit's ptxas"), "no ptxas: %s", loom_last_error(tc_ctx));
  snprintf(bundle_path, sizeof bundle_path, "%s/captured.lbun", dir);
  LoomBundleOptions opt = {.targets = "host-all", .jobs = 2, .progress = 0};
  CHECK_OK(loom_bundle_builder_write(b, &opt, bundle_path));
  char *text = NULL;
  if (CHECK_OK(loom_bundle_describe(tc_ctx, bundle_path, &text)))
    CHECK(strstr(text, "all checksums correct") && strstr(text, "softmax") && strstr(text, "host-avx512"), "describe:\n%s", text);
  loom_free_string(tc_ctx, text);
  loom_bundle_builder_destroy(b);
  free_data(&d);
}

/* Loads the bundle at each level and runs the computations at new sizes: no compile, right results,
 * the JIT's bits for the exact ones. */
static void test_load_and_run(void) {
  Data jit = make_data(100003, 37, 1001, 7);
  LoomContext *jc = fresh();
  for (int w = 0; w < 4; w++) run(jc, &jit, w);
  check_reference(&jit);
  loom_context_destroy(jc);
  const char *levels[3] = {"1", "3", "4"};
  for (int l = 0; l < 3; l++) {
    setenv("LOOM_AOT_HOST_LEVEL", levels[l], 1);
    LoomContext *c = fresh();
    if (!c) continue;
    CHECK_OK(loom_bundle_load(c, bundle_path, 1));
    Data d = make_data(100003, 37, 1001, 7);
    for (int w = 0; w < 4; w++) run(c, &d, w);
    CHECK(compiles(c) == 0, "level %s: %llu kernels compiled with the bundle loaded", levels[l], (unsigned long long)compiles(c));
    int32_t nb = 0;
    int64_t used = 0;
    CHECK(loom_bundle_stats(c, &nb, &used) == LOOM_OK && nb == 1 && used == 4, "level %s: %d bundles, %lld kernels used",
          levels[l], nb, (long long)used);
    check_reference(&d);
    CHECK(!memcmp(d.y32, jit.y32, (size_t)d.n * 4), "level %s: computation 0 differs from the JIT's bits", levels[l]);
    long far = 0;
    /* exp comes from SLEEF's vector variants of the level (1 ulp each): the difference may cancel, so the
     * bound is in ulps of the operands */
    for (int64_t i = 0; i < d.n; i++)
      far += !(fabs(d.z64[i] - jit.z64[i]) <= 4.5e-16 * (exp(d.x64[i]) + sqrt(d.w64[i])));
    CHECK(far == 0, "level %s: %ld of exp(x) - sqrt(w) more than 2 ulp of the operands from the JIT's", levels[l], far);
    /* the row sums of softmax are reassociated into as many partial sums as the vector width holds, so
     * their rounding (a few ulp of float32 over 1001 terms) depends on the level */
    far = 0;
    for (int64_t i = 0; i < d.m * d.k; i++) far += tc_ulp_diff(LOOM_FLOAT32, d.sm32[i], jit.sm32[i]) > 64;
    CHECK(far == 0, "level %s: softmax off the JIT's by more than 64 ulp in %ld places", levels[l], far);
    /* production mode: a computation outside the bundle is refused, naming it, until JIT is back on */
    CHECK_OK(loom_bundle_set_jit(c, 0));
    LoomGraph *g = NULL;
    LoomNode a, r;
    LoomArray X = host_array(LOOM_FLOAT32, 1, &d.n, d.x32), Y = host_array(LOOM_FLOAT32, 1, &d.n, d.y32);
    if (CHECK_OK(loom_graph_create(c, &g)) && CHECK_OK(loom_input(g, &X, &a)) && CHECK_OK(loom_unary(g, LOOM_OP_TANH, a, &r))) {
      CHECK_STATUS(loom_eval(g, 1, &r, &Y), LOOM_ERR_UNSUPPORTED);
      CHECK(strstr(loom_last_error(c), "is not in the loaded bundles") && strstr(loom_last_error(c), "JIT compilation is off"),
            "no-JIT message: %s", loom_last_error(c));
      run(c, &d, 0); /* bundled: still runs */
      CHECK_OK(loom_bundle_set_jit(c, 1));
      CHECK_OK(loom_eval(g, 1, &r, &Y));
      CHECK(compiles(c) == 1, "JIT back on: %llu compiles, want 1", (unsigned long long)compiles(c));
    }
    loom_graph_destroy(g);
    free_data(&d);
    loom_context_destroy(c);
  }
  unsetenv("LOOM_AOT_HOST_LEVEL");
  free_data(&jit);
  LoomContext *c = fresh();
  CHECK_STATUS(loom_bundle_load(c, "/nonexistent.lbun", 1), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(c), "cannot open bundle /nonexistent.lbun"), "%s", loom_last_error(c));
  loom_context_destroy(c);
}

/* A user ElementwiseKernel (its snippet is cloned into the builder) through a bundle. */
static void test_user_kernel(void) {
  LoomUserKernel *k = NULL;
  if (!CHECK_OK(loom_elementwise_kernel_create(tc_ctx, "float64 x, float64 y", "float64 z",
                                               "z = x > y ? x * x - y : (y - x) / 2;", "sqdiff", NULL, 1, &k)))
    return;
  int64_t n = 1000;
  double *x = malloc(8 * (size_t)n), *y = malloc(8 * (size_t)n), *z = malloc(8 * (size_t)n);
  for (int64_t i = 0; i < n; i++) x[i] = (double)(i % 37) - 18, y[i] = (double)(i % 11) * 0.5;
  LoomArray in[2] = {host_array(LOOM_FLOAT64, 1, &n, x), host_array(LOOM_FLOAT64, 1, &n, y)}, out = host_array(LOOM_FLOAT64, 1, &n, z);
  LoomBundleBuilder *b = NULL;
  char path[600];
  snprintf(path, sizeof path, "%s/user.lbun", dir);
  LoomBundleOptions opt = {.targets = "host", .progress = 0};
  if (CHECK_OK(loom_bundle_builder_create(tc_ctx, &b)) && CHECK_OK(loom_bundle_builder_capture_begin(b, "sqdiff"))) {
    CHECK_OK(loom_elementwise_kernel_call(k, 2, in, 1, &out, -1));
    CHECK_OK(loom_bundle_builder_capture_end(b, NULL));
    CHECK_OK(loom_bundle_builder_write(b, &opt, path));
  }
  loom_bundle_builder_destroy(b);
  loom_user_kernel_destroy(k);
  LoomContext *c = fresh();
  LoomUserKernel *k2 = NULL;
  if (c && CHECK_OK(loom_bundle_load(c, path, 0)) &&
      CHECK_OK(loom_elementwise_kernel_create(c, "float64 x, float64 y", "float64 z", "z = x > y ? x * x - y : (y - x) / 2;",
                                              "sqdiff", NULL, 1, &k2))) {
    memset(z, 0, 8 * (size_t)n);
    CHECK_OK(loom_elementwise_kernel_call(k2, 2, in, 1, &out, -1));
    long bad = 0;
    for (int64_t i = 0; i < n; i++) bad += z[i] != (x[i] > y[i] ? x[i] * x[i] - y[i] : (y[i] - x[i]) / 2);
    CHECK(bad == 0 && compiles(c) == 0, "user kernel from the bundle: %ld wrong, %llu compiles", bad,
          (unsigned long long)compiles(c));
  }
  loom_user_kernel_destroy(k2);
  loom_context_destroy(c);
  free(x), free(y), free(z);
}

static void test_ir_text_errors(void) {
  LoomBundleBuilder *b = NULL;
  if (!CHECK_OK(loom_bundle_builder_create(tc_ctx, &b))) return;
  CHECK_STATUS(loom_bundle_builder_add_ir(b, "# nothing here\n", NULL, "empty.loom"), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "empty.loom: no \"kernel\" block"), "%s", loom_last_error(tc_ctx));
  CHECK_STATUS(loom_bundle_builder_add_ir(b, "kernel k ndim 1 keep 1 index 32\n  buf 0 out f32 [1]\n  %0 = frobnicate f32\n", NULL,
                                          "bad.loom"),
               LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "bad.loom: kernel at line 1: line 3"), "%s", loom_last_error(tc_ctx));
  CHECK(loom_bundle_builder_count(b) == 0, "a bad text adds nothing");
  loom_bundle_builder_destroy(b);
}

/* ptxas on every PTX of a GPU bundle; every cubin an sm_XX ELF (when the toolkit is installed). */
static void test_gpu_code(void) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK) != 0 || access("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc", R_OK) != 0) {
    printf("test_bundle_loom: GPU code checks skipped (no CUDA toolkit at /usr/local/cuda)\n");
    return;
  }
  LoomBundleBuilder *b = NULL;
  char path[600];
  snprintf(path, sizeof path, "%s/gpu.lbun", dir);
  Data d = make_data(64, 4, 16, 3);
  LoomBundleOptions opt = {.targets = "sm_80,sm_90,ptx", .jobs = 2, .progress = 0};
  if (CHECK_OK(loom_bundle_builder_create(tc_ctx, &b))) {
    const char *names[4] = {"scale_add", "exp_sqrt", "row_sq_sum", "softmax"};
    for (int w = 0; w < 4; w++) {
      CHECK_OK(loom_bundle_builder_capture_begin(b, names[w]));
      run(tc_ctx, &d, w);
      CHECK_OK(loom_bundle_builder_capture_end(b, NULL));
    }
    CHECK_OK(loom_bundle_builder_write(b, &opt, path));
    loom_bundle_builder_destroy(b);
  }
  free_data(&d);
  FILE *f = fopen(path, "rb");
  if (!CHECK(f != NULL, "gpu bundle")) return;
  fseek(f, 0, SEEK_END);
  size_t n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(n);
  CHECK(fread(p, 1, n, f) == n, "read");
  fclose(f);
  RtBundle *rb = NULL;
  Diag dg = {.status = LOOM_OK};
  if (CHECK(rt_bundle_parse(tc_ctx, p, n, path, &rb, &dg) == LOOM_OK, "%s", dg.msg)) {
    int nptx = 0, ncubin = 0;
    for (int32_t i = 0; i < rb->ncode; i++) {
      const RtBundleCode *c = &rb->codes[i];
      const RtBundleTarget *t = &rb->targets[c->target];
      if (t->kind == RB_TARGET_CUDA_CUBIN) { /* ELF, EM_CUDA, its sm in the flags' low byte */
        ncubin++;
        uint32_t flags = c->blob_size > 64 ? rb_get32(c->blob + 48) : 0; /* sm: bits 8-15 (ELF ABI 8), else 0-7 */
        CHECK(c->blob_size > 64 && !memcmp(c->blob, "\177ELF", 4) && rb_get16(c->blob + 18) == 190 &&
                  (c->blob[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff) == t->arch,
              "cubin of %s for %s: not an sm_%u CUDA ELF", rb->kernels[c->kernel].name, t->name, t->arch);
      } else if (t->kind == RB_TARGET_CUDA_PTX) {
        nptx++;
        char in[700], cmd[1600];
        snprintf(in, sizeof in, "%s/k%d.ptx", dir, (int)i);
        FILE *o = fopen(in, "wb");
        fwrite(c->blob, 1, (size_t)c->blob_size - 1, o);
        fclose(o);
        snprintf(cmd, sizeof cmd, "%s -arch=sm_%u -o %s/k%d.cubin %s", ptxas, t->arch, dir, (int)i, in);
        CHECK(system(cmd) == 0, "ptxas rejects the PTX of %s: %s", rb->kernels[c->kernel].name, cmd);
      }
    }
    CHECK(ncubin == 2 * 8 && nptx == 8, "%d cubins, %d PTX (4 entries x 2 index widths)", ncubin, nptx);
    rt_bundle_free(rb);
  }
  free(p);
}

/* A bundle's AMD code objects: one per kernel record and chip, each a valid code object of its chip
 * holding the entries the facts name, with the chip's wave. */
static void test_amd_code(void) {
  LoomBundleBuilder *b = NULL;
  char path[600];
  snprintf(path, sizeof path, "%s/amd.lbun", dir);
  Data d = make_data(64, 4, 16, 3);
  LoomBundleOptions opt = {.targets = "gfx90a,gfx942,gfx1100", .jobs = 2, .progress = 0};
  char why[2048];
  if (!cg_amdgpu_toolchain_available(tc_ctx, why, sizeof why)) { /* a machine without ROCm's device libraries */
    printf("test_bundle_loom: AMD code checks skipped: %s\n", why);
    return;
  }
  LoomStatus wst = LOOM_ERR_INTERNAL;
  if (CHECK_OK(loom_bundle_builder_create(tc_ctx, &b))) {
    const char *names[4] = {"scale_add", "exp_sqrt", "row_sq_sum", "softmax"};
    for (int w = 0; w < 4; w++) {
      CHECK_OK(loom_bundle_builder_capture_begin(b, names[w]));
      run(tc_ctx, &d, w);
      CHECK_OK(loom_bundle_builder_capture_end(b, NULL));
    }
    wst = loom_bundle_builder_write(b, &opt, path);
    loom_bundle_builder_destroy(b);
  }
  free_data(&d);
  if (wst == LOOM_ERR_UNSUPPORTED && strstr(loom_last_error(tc_ctx), "AMDGPU")) { /* an LLVM without AMDGPU */
    printf("test_bundle_loom: AMD code checks skipped: %s\n", loom_last_error(tc_ctx));
    return;
  }
  if (!CHECK(wst == LOOM_OK, "AMD bundle: %s", loom_last_error(tc_ctx))) return;
  char *text = NULL;
  if (CHECK_OK(loom_bundle_describe(tc_ctx, path, &text)))
    CHECK(strstr(text, "all checksums correct") && strstr(text, "gfx90a") && strstr(text, "gfx942") &&
              strstr(text, "gfx1100") && strstr(text, "AMDGPU code object"),
          "describe:\n%s", text);
  loom_free_string(tc_ctx, text);
  FILE *f = fopen(path, "rb");
  if (!CHECK(f != NULL, "amd bundle")) return;
  fseek(f, 0, SEEK_END);
  size_t n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *p = malloc(n);
  CHECK(fread(p, 1, n, f) == n, "read");
  fclose(f);
  RtBundle *rb = NULL;
  Diag dg = {.status = LOOM_OK};
  if (CHECK(rt_bundle_parse(tc_ctx, p, n, path, &rb, &dg) == LOOM_OK, "%s", dg.msg)) {
    int per_chip[3] = {0, 0, 0};
    static const char *const chips[3] = {"gfx90a", "gfx942", "gfx1100"};
    for (int32_t i = 0; i < rb->ncode; i++) {
      const RtBundleCode *c = &rb->codes[i];
      const RtBundleTarget *t = &rb->targets[c->target];
      char label[24];
      rt_bundle_target_label(t->kind, t->arch, label, sizeof label);
      int ci = 0;
      while (ci < 3 && strcmp(chips[ci], label)) ci++;
      CgAmdChip chip;
      if (!CHECK(t->kind == RB_TARGET_AMDGPU && ci < 3 && cg_amdgpu_chip(label, &chip), "code %d: target %s", (int)i,
                 label))
        continue;
      per_chip[ci]++;
      char why[512] = "";
      int nk = 0;
      CHECK(rt_bundle_code_check(rb, c, &dg) == LOOM_OK &&
                amd_check_code_object(tc_ctx, c->blob, (size_t)c->blob_size, &chip, 5, true, &nk, why, sizeof why),
            "code object of %s for %s: %s %s", rb->kernels[c->kernel].name, label, why, dg.msg);
      int named = 0, found = 0;
      for (int e = 0; e < RB_GPU_NENTRY; e++) {
        if (!(c->facts[RB_GPU_ENTRIES] & (1u << e))) continue;
        named++;
        found += amd_elf_has_kernel(c->blob, (size_t)c->blob_size, c->names[e]);
      }
      CHECK(c->facts[RB_GPU_WAVE] == (uint32_t)chip.wave && named > 0 && found == named && nk == named,
            "%s for %s: wave %u (chip %d), %d entries named, %d found, %d kernels", rb->kernels[c->kernel].name, label,
            c->facts[RB_GPU_WAVE], chip.wave, named, found, nk);
    }
    CHECK(per_chip[0] == 8 && per_chip[1] == 8 && per_chip[2] == 8,
          "code objects per chip %d %d %d (4 entries x 2 index widths)", per_chip[0], per_chip[1], per_chip[2]);
    rt_bundle_free(rb);
  }
  free(p);
}

/* A plan made before a capture holds kernels specialized on their sizes (rows of 3: KernelIr.row_extent,
 * codegen/lower_host_rows.c); evaluated again while capturing, the bundle receives their generic form,
 * which runs at any size. */
static void test_capture_of_specialized_plan(void) {
  LoomContext *c = fresh();
  LoomGraph *g = NULL;
  LoomBundleBuilder *b = NULL;
  if (c && CHECK_OK(loom_graph_create(c, &g)) && CHECK_OK(loom_bundle_builder_create(c, &b))) {
    float x[12], y[4] = {0};
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    int64_t sh[2] = {4, 3}, n = 4;
    LoomArray X = host_array(LOOM_FLOAT32, 2, sh, x), Y = host_array(LOOM_FLOAT32, 1, &n, y);
    LoomNode a, r;
    int32_t ax = 1, nk = 0;
    CHECK_OK(loom_input(g, &X, &a) ?: loom_reduce(g, LOOM_REDUCE_SUM, a, 1, &ax, 0, &r));
    CHECK_OK(loom_eval(g, 1, &r, &Y)); /* the plan, its kernel specialized on rows of 3 */
    CHECK_OK(loom_bundle_builder_capture_begin(b, "rowsum3"));
    CHECK_OK(loom_eval(g, 1, &r, &Y)); /* the same plan, captured */
    CHECK_OK(loom_bundle_builder_capture_end(b, &nk));
    CHECK(nk == 1 && b->nentry == 1 && b->entries[0].ir->row_extent == 0, "%d kernels captured, the first with rows %d",
          nk, b->nentry > 0 ? b->entries[0].ir->row_extent : -1);
    for (int i = 0; i < 4; i++) CHECK(y[i] == (float)(9 * i + 3), "row %d: sum %g", i, (double)y[i]);
  }
  if (b) loom_bundle_builder_destroy(b);
  if (g) loom_graph_destroy(g);
  if (c) loom_context_destroy(c);
}

int main(void) {
  if (!tc_init()) return 1;
  snprintf(dir, sizeof dir, "%s/loom-test-bundle-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) return 1;
  test_capture_and_build();
  test_capture_of_specialized_plan();
  test_load_and_run();
  test_user_kernel();
  test_ir_text_errors();
  test_gpu_code();
  test_amd_code();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return tc_finish();
}
