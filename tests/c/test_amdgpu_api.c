/* test_amdgpu_api.c: the AMD device through the public C API, without an AMD GPU (CI):
 *  - no device: loom_device_count(HIP) is 0; an AMD array, stream or event is a clean error naming the
 *    reason ("no AMD device ..." with Debian's HIP 5.2, "no HIP runtime ..." without it), the same each
 *    time; host evaluation is unaffected;
 *  - loom_dump(LOOM_DUMP_AMDGPU): the assembly of the fused kernels (float32; complex64 math and bfloat16
 *    row sums) for gfx942 and, through LOOM_DUMP_AMDGPU_CHIP, gfx90a and gfx1100, each kept code object
 *    checked structurally;
 *  - user kernels (ElementwiseKernel with loop_prep / after_loop, raw arrays and worker state; with math;
 *    ReductionKernel with a post-map; a custom combiner) dumped for gfx90a, gfx942 and gfx1100 with
 *    LOOM_DUMP_AMDGPU_DIR: every code object they leave passes amdgpu_check.h's structural checks (ELF,
 *    descriptors, comgr's metadata equal to llvm-readelf's, registers and LDS within the chip's limits);
 *  - RawModule on AMD: LLVM IR for amdgcn (sniffed, given as LLVM IR, with --offload-arch) and code
 *    objects (sniffed as HSACO; entries and argument sizes from the metadata), NVIDIA's IR still NVIDIA's,
 *    bad input refused, argument checks before any driver work, a launch without a device a clean error.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "amdgpu_check.h"
#include "loom/loom.h"

static int g_pass, g_fail;
#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, __VA_ARGS__)
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool check_(bool ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    g_pass++;
    return true;
  }
  g_fail++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

static LoomContext *ctx;

static LoomArray arr(void *data, LoomDType t, int ndim, const int64_t *shape, LoomDeviceKind dev) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  a.device = dev;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = s;
    s *= shape[i];
  }
  return a;
}

static bool no_device_message(const char *m) { return strstr(m, "no AMD device") || strstr(m, "no HIP runtime"); }

static void test_no_device(void) {
  int32_t n = -1;
  CHECK(loom_device_count(ctx, LOOM_DEVICE_HIP, &n) == LOOM_OK && n >= 0, "AMD devices here: %d", n);
  if (n > 0) { /* a machine with an AMD GPU (scripts/amd_all.sh): test_hip and test_gpu_hip test it */
    LoomArray a = arr(NULL, LOOM_FLOAT32, 1, (int64_t[]){16}, LOOM_DEVICE_HIP);
    CHECK(loom_array_alloc(ctx, &a) == LOOM_OK && a.data, "an AMD array: %s", loom_last_error(ctx));
    loom_array_free(ctx, &a);
    return;
  }
  char first[1024] = "";
  for (int round = 0; round < 2; round++) {
    LoomArray a = arr(NULL, LOOM_FLOAT32, 1, (int64_t[]){16}, LOOM_DEVICE_HIP);
    LoomStatus st = loom_array_alloc(ctx, &a);
    const char *m = loom_last_error(ctx);
    CHECK(st == LOOM_ERR_UNSUPPORTED && no_device_message(m), "an AMD array without a device: %d %s", st, m);
    if (round == 0) snprintf(first, sizeof first, "%s", m);
    else CHECK(!strcmp(first, m), "the same message again: '%s' then '%s'", first, m);
  }
  LoomStream *s = NULL;
  CHECK(loom_stream_create(ctx, LOOM_DEVICE_HIP, 0, &s) == LOOM_ERR_UNSUPPORTED && !s &&
            no_device_message(loom_last_error(ctx)),
        "an AMD stream: %s", loom_last_error(ctx));
  LoomEvent *e = NULL;
  CHECK(loom_event_create(ctx, LOOM_DEVICE_HIP, 0, &e) == LOOM_ERR_UNSUPPORTED && !e, "an AMD event: %s",
        loom_last_error(ctx));
  CHECK(loom_device_synchronize(ctx, LOOM_DEVICE_HIP, 0) == LOOM_ERR_UNSUPPORTED, "synchronize: %s",
        loom_last_error(ctx));
  /* the host still evaluates */
  float x[5] = {1, 4, 9, 16, 25}, y[5];
  LoomArray hx = arr(x, LOOM_FLOAT32, 1, (int64_t[]){5}, LOOM_DEVICE_HOST), hy = arr(y, LOOM_FLOAT32, 1, (int64_t[]){5}, LOOM_DEVICE_HOST);
  LoomGraph *g = NULL;
  LoomNode xi, r;
  CHECK(loom_graph_create(ctx, &g) == LOOM_OK && loom_input(g, &hx, &xi) == LOOM_OK &&
            loom_unary(g, LOOM_OP_SQRT, xi, &r) == LOOM_OK && loom_eval(g, 1, &r, &hy) == LOOM_OK &&
            y[0] == 1 && y[4] == 5,
        "host evaluation: %s", loom_last_error(ctx));
  loom_graph_destroy(g);
}

/* The code objects in dir (they are removed): every one checked for chip; returns how many. */
static int check_dumped(const char *dir, const char *chipname, const char *what, bool explicit_args) {
  CgAmdChip chip;
  cg_amdgpu_chip(chipname, &chip);
  DIR *dd = opendir(dir);
  int count = 0;
  for (struct dirent *e; dd && (e = readdir(dd));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".co")) continue;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    char *co = NULL;
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
      co = malloc((size_t)n);
      if (co && fread(co, 1, (size_t)n, f) != (size_t)n) {
        free(co);
        co = NULL;
      }
    }
    if (f) fclose(f);
    char why[512] = "";
    int nk = 0;
    LoomContext *ictx = ctx; /* cg_amdgpu_read_metadata takes the context's allocator */
    CHECK(co && strstr(e->d_name, chipname) &&
              amd_check_code_object(ictx, co, (size_t)n, &chip, 5, explicit_args, &nk, why, sizeof why),
          "%s (%s): %s: %s", what, chipname, e->d_name, why);
    free(co);
    unlink(path);
    count++;
  }
  if (dd) closedir(dd);
  return count;
}

static const char *const chips[3] = {"gfx90a", "gfx942", "gfx1100"};

static void test_dumps(char *dir) {
  /* a fused graph: softmax (cached row), a full sum (split) */
  float x[6] = {1, 2, 3, 4, 5, 6};
  LoomArray hx = arr(x, LOOM_FLOAT32, 2, (int64_t[]){2, 3}, LOOM_DEVICE_HOST);
  LoomGraph *g = NULL;
  LoomNode xi, m, b, sub, ex, s, bs, sm, tot;
  loom_graph_create(ctx, &g);
  loom_input(g, &hx, &xi);
  int32_t ax = 1;
  loom_reduce(g, LOOM_REDUCE_MAX, xi, 1, &ax, 1, &m);
  loom_broadcast_to(g, m, 2, (int64_t[]){2, 3}, &b);
  loom_binary(g, LOOM_OP_SUB, xi, b, &sub);
  loom_unary(g, LOOM_OP_EXP, sub, &ex);
  loom_reduce(g, LOOM_REDUCE_SUM, ex, 1, &ax, 1, &s);
  loom_broadcast_to(g, s, 2, (int64_t[]){2, 3}, &bs);
  loom_binary(g, LOOM_OP_TRUEDIV, ex, bs, &sm);
  loom_reduce(g, LOOM_REDUCE_SUM, xi, 0, NULL, 0, &tot);
  LoomNode roots[2] = {sm, tot};
  for (int c = 0; c < 3; c++) {
    setenv("LOOM_DUMP_AMDGPU_CHIP", chips[c], 1);
    setenv("LOOM_DUMP_AMDGPU_DIR", dir, 1);
    char *text = NULL;
    LoomStatus st = loom_dump(g, LOOM_DUMP_AMDGPU, 2, roots, &text);
    CHECK(st == LOOM_OK && text && strstr(text, "; kernel ") && strstr(text, chips[c]) && strstr(text, ".amdhsa_kernel ") &&
              strstr(text, "amdhsa.kernels") && strstr(text, "linked by"),
          "loom_dump AMDGPU for %s: %s", chips[c], st ? loom_last_error(ctx) : "(text lacks the kernels)");
    if (text && c == 2) CHECK(strstr(text, ".amdhsa_wavefront_size32 1") != NULL, "gfx1100 code runs waves of 32");
    if (text) printf("loom_dump AMDGPU %s: %zu bytes of assembly\n", chips[c], strlen(text));
    loom_free_string(ctx, text);
    int n = check_dumped(dir, chips[c], "softmax + sum", true);
    CHECK(n >= 2, "%s: %d code objects kept for 2+ kernels", chips[c], n);
  }
  loom_graph_destroy(g);
  /* complex and bfloat16 through the public API: exp(z) * conj(z), the row sums of |z| and their bfloat16 */
  float z[2 * 6] = {1, -1, 0.5f, 2, -3, 0, 0, 0, 1e-3f, 7, -2, -2};
  LoomArray hz = arr(z, LOOM_COMPLEX64, 2, (int64_t[]){2, 3}, LOOM_DEVICE_HOST);
  LoomNode zi, ez, cz, prod, az, rs, bf;
  loom_graph_create(ctx, &g);
  LoomStatus st = loom_input(g, &hz, &zi);
  if (!st) st = loom_unary(g, LOOM_OP_EXP, zi, &ez);
  if (!st) st = loom_unary(g, LOOM_OP_CONJ, zi, &cz);
  if (!st) st = loom_binary(g, LOOM_OP_MUL, ez, cz, &prod);
  if (!st) st = loom_unary(g, LOOM_OP_ABS, zi, &az);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_SUM, az, 1, &ax, 0, &rs);
  if (!st) st = loom_cast(g, rs, LOOM_BFLOAT16, &bf);
  CHECK(st == LOOM_OK, "complex graph: %s", loom_last_error(ctx));
  LoomNode croots[2] = {prod, bf};
  for (int c = 0; c < 3 && !st; c++) {
    setenv("LOOM_DUMP_AMDGPU_CHIP", chips[c], 1);
    setenv("LOOM_DUMP_AMDGPU_DIR", dir, 1);
    char *text = NULL;
    LoomStatus ds = loom_dump(g, LOOM_DUMP_AMDGPU, 2, croots, &text);
    CHECK(ds == LOOM_OK && text && strstr(text, ".amdhsa_kernel "), "loom_dump AMDGPU of complex64 and bfloat16 "
          "for %s: %s", chips[c], ds ? loom_last_error(ctx) : "(no kernels in the text)");
    loom_free_string(ctx, text);
    int n = check_dumped(dir, chips[c], "complex64 exp * conj, bfloat16 row sums of |z|", true);
    CHECK(n >= 2, "%s: %d code objects kept for the complex graph's 2+ kernels", chips[c], n);
  }
  loom_graph_destroy(g);
  /* user kernels */
  struct {
    const char *what, *in, *out, *op, *prep, *after;
    bool reduction;
    const char *map, *reduce, *post, *identity;
    LoomDType tin;
    int nout;
  } uk[] = {
      {"loop_prep + after_loop, raw arrays", "int64 x", "int64 cnt, raw int64 counts, raw int64 sums",
       "if (c == 0) first = i; c++; s += x; cnt = c;", "long long c = 0; long long s; long long first = -1;",
       "if (c > 0) { counts[first] = c; sums[first] = s; }", false, NULL, NULL, NULL, NULL, LOOM_INT64, 3},
      {"loop_prep state, float32 (vector entry)", "float32 x", "float32 y", "acc += x; y = acc * k;",
       "float acc; const float k = 2;", NULL, false, NULL, NULL, NULL, NULL, LOOM_FLOAT32, 1},
      {"math in a snippet", "float64 x", "float64 y", "y = exp(x) + sqrt(x) / (1 + x * x)", NULL, NULL, false, NULL,
       NULL, NULL, NULL, LOOM_FLOAT64, 1},
      {"ReductionKernel l2norm", "float32 x", "float32 y", NULL, NULL, NULL, true, "x * x", "a + b", "y = sqrt(a)", "0",
       LOOM_FLOAT32, 1},
      {"ReductionKernel max of |x|", "int32 x", "float64 y", NULL, NULL, NULL, true, "x < 0 ? -x : x", "max(a, b)",
       "y = a + 0.5", "0", LOOM_INT32, 1},
  };
  for (size_t u = 0; u < sizeof uk / sizeof uk[0]; u++) {
    LoomUserKernel *k = NULL;
    LoomStatus st = uk[u].reduction
                        ? loom_reduction_kernel_create(ctx, uk[u].in, uk[u].out, uk[u].map, uk[u].reduce, uk[u].post,
                                                       uk[u].identity, "amd_red", NULL, NULL, 1, &k)
                        : loom_elementwise_kernel_create_ex(ctx, uk[u].in, uk[u].out, uk[u].op, "amd_ew", NULL,
                                                            uk[u].prep, uk[u].after, 1, &k);
    if (!CHECK(st == LOOM_OK, "%s: create: %s", uk[u].what, loom_last_error(ctx))) continue;
    int64_t n = 100003;
    LoomArray in[1] = {arr(NULL, uk[u].tin, 1, &n, LOOM_DEVICE_HOST)};
    LoomArray out[3];
    memset(out, 0, sizeof out);
    if (uk[u].nout == 3) {
      out[1] = arr((void *)in, LOOM_INT64, 1, &n, LOOM_DEVICE_HOST);
      out[2] = arr((void *)in, LOOM_INT64, 1, &n, LOOM_DEVICE_HOST);
    }
    for (int c = 0; c < 3; c++) {
      setenv("LOOM_DUMP_AMDGPU_CHIP", chips[c], 1);
      setenv("LOOM_DUMP_AMDGPU_DIR", dir, 1);
      char *text = NULL;
      st = loom_user_kernel_dump(k, LOOM_DUMP_AMDGPU, 1, in, uk[u].nout, out, -1, 0, NULL, 0, &text);
      CHECK(st == LOOM_OK && text && strstr(text, ".amdhsa_kernel "), "%s for %s: %s", uk[u].what, chips[c],
            st ? loom_last_error(ctx) : "no kernel in the text");
      loom_free_string(ctx, text);
      int nco = check_dumped(dir, chips[c], uk[u].what, true);
      CHECK(nco == 1, "%s for %s: %d code objects", uk[u].what, chips[c], nco);
    }
    loom_user_kernel_destroy(k);
  }
  unsetenv("LOOM_DUMP_AMDGPU_CHIP");
  unsetenv("LOOM_DUMP_AMDGPU_DIR");
}

static const char amd_ir[] =
    "target triple = \"amdgcn-amd-amdhsa\"\n"
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare float @__ocml_exp_f32(float)\n"
    "define amdgpu_kernel void @scale(ptr addrspace(1) %out, ptr addrspace(1) %in, float %s, i32 %n) {\n"
    "entry:\n  %i = call i32 @llvm.amdgcn.workitem.id.x()\n  %c = icmp slt i32 %i, %n\n"
    "  br i1 %c, label %body, label %done\n"
    "body:\n  %p = getelementptr float, ptr addrspace(1) %in, i32 %i\n  %v = load float, ptr addrspace(1) %p\n"
    "  %e = call float @__ocml_exp_f32(float %v)\n  %r = fmul float %e, %s\n"
    "  %q = getelementptr float, ptr addrspace(1) %out, i32 %i\n  store float %r, ptr addrspace(1) %q\n"
    "  br label %done\ndone:\n  ret void\n}\n";

/* Counter-based random bits (Philox4x32-10 over an iota of counters: codegen/lower_random.c, one lowering
 * for every target) fused into an elementwise kernel and a row reduction, dumped for each chip: every
 * code object valid, and the rounds' 32 x 32 -> 64-bit products on the vector ALU (v_mul_hi_u32). */
static void test_random_dumps(char *dir) {
  LoomGraph *g = NULL;
  loom_graph_create(ctx, &g);
  uint64_t key = 42;
  LoomArray ka = arr(&key, LOOM_UINT64, 0, NULL, LOOM_DEVICE_HOST);
  float dummy = 0;
  LoomArray xa = arr(&dummy, LOOM_FLOAT32, 2, (int64_t[]){64, 1024}, LOOM_DEVICE_HOST);
  LoomNode k, x, io, cu, ctr, bits, f, y, r;
  int32_t ax = 1;
  bool built = loom_input(g, &ka, &k) == LOOM_OK && loom_input(g, &xa, &x) == LOOM_OK &&
               loom_iota(g, 2, xa.shape, &io) == LOOM_OK && loom_cast(g, io, LOOM_UINT64, &cu) == LOOM_OK &&
               loom_binary(g, LOOM_OP_ADD, cu, k, &ctr) == LOOM_OK &&
               loom_binary(g, LOOM_OP_RANDOM_BITS, k, ctr, &bits) == LOOM_OK &&
               loom_cast(g, bits, LOOM_FLOAT32, &f) == LOOM_OK && loom_binary(g, LOOM_OP_MUL, f, x, &y) == LOOM_OK &&
               loom_reduce(g, LOOM_REDUCE_SUM, y, 1, &ax, 0, &r) == LOOM_OK;
  if (!CHECK(built, "random graph: %s", loom_last_error(ctx))) {
    loom_graph_destroy(g);
    return;
  }
  LoomNode roots[2] = {y, r};
  for (int c = 0; c < 3; c++) {
    setenv("LOOM_DUMP_AMDGPU_CHIP", chips[c], 1);
    setenv("LOOM_DUMP_AMDGPU_DIR", dir, 1);
    for (int i = 0; i < 2; i++) {
      char *text = NULL;
      LoomStatus st = loom_dump(g, LOOM_DUMP_AMDGPU, 1, &roots[i], &text);
      CHECK(st == LOOM_OK && text && strstr(text, ".amdhsa_kernel ") && strstr(text, "v_mul_hi_u32"),
            "random %s for %s: %s", i ? "row sums" : "elementwise", chips[c],
            st ? loom_last_error(ctx) : "(no kernel or no v_mul_hi_u32 in the assembly)");
      loom_free_string(ctx, text);
      int n = check_dumped(dir, chips[c], i ? "random row sums" : "random elementwise", true);
      CHECK(n >= 1, "random (%s): %d code objects", chips[c], n);
    }
  }
  loom_graph_destroy(g);
}

static void test_raw(void) {
  LoomRawModule *m = NULL;
  /* LLVM IR for amdgcn: sniffed, entries from the IR */
  if (CHECK(loom_raw_module_create(ctx, amd_ir, strlen(amd_ir), LOOM_RAW_AUTO, NULL, 0, &m) == LOOM_OK,
            "amdgcn IR: %s", loom_last_error(ctx))) {
    CHECK(loom_raw_module_format(m) == LOOM_RAW_LLVM_IR, "format %d", loom_raw_module_format(m));
    char *names = NULL;
    CHECK(loom_raw_module_kernels(m, &names) == LOOM_OK && names && strstr(names, "scale"), "kernels: %s",
          names ? names : loom_last_error(ctx));
    loom_free_string(ctx, names);
    LoomRawFunction *f = NULL;
    int32_t np = 0;
    LoomRawParamKind kinds[8];
    int32_t sizes[8];
    CHECK(loom_raw_module_get_function(m, "scale", &f) == LOOM_OK &&
              loom_raw_function_params(f, &np, kinds, sizes, 8) == LOOM_OK && np == 4 &&
              kinds[0] == LOOM_RAW_PARAM_POINTER && kinds[2] == LOOM_RAW_PARAM_FLOAT && sizes[2] == 4 &&
              kinds[3] == LOOM_RAW_PARAM_INT && sizes[3] == 4,
          "scale's parameters: %d", np);
    if (f) {
      /* arguments are checked before any driver work; then no device is a clean error */
      float hbuf[4] = {0};
      LoomArray ha = arr(hbuf, LOOM_FLOAT32, 1, (int64_t[]){4}, LOOM_DEVICE_HOST);
      LoomArray da = arr((void *)(uintptr_t)0x1000, LOOM_FLOAT32, 1, (int64_t[]){4}, LOOM_DEVICE_HIP);
      LoomRawArg bad[4] = {{.kind = LOOM_RAW_ARG_ARRAY, .array = &ha}, {.kind = LOOM_RAW_ARG_ARRAY, .array = &ha},
                           {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_FLOAT32, .value.f = 2},
                           {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_INT32, .value.i = 4}};
      uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
      CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 4, bad) == LOOM_ERR_INVALID_ARGUMENT,
            "host arrays to an AMD kernel: %s", loom_last_error(ctx));
      LoomRawArg ok[4] = {{.kind = LOOM_RAW_ARG_ARRAY, .array = &da}, {.kind = LOOM_RAW_ARG_ARRAY, .array = &da},
                          {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_FLOAT32, .value.f = 2},
                          {.kind = LOOM_RAW_ARG_SCALAR, .dtype = LOOM_INT64, .value.i = 4}};
      CHECK(loom_raw_function_launch(f, grid, block, 0, NULL, 4, ok) == LOOM_ERR_INVALID_ARGUMENT,
            "an int64 for an i32 parameter: %s", loom_last_error(ctx));
      ok[3].dtype = LOOM_INT32;
      int32_t ndev = 0;
      loom_device_count(ctx, LOOM_DEVICE_HIP, &ndev);
      if (ndev == 0) { /* (a made-up address: never launched where there is a device) */
        LoomStatus st = loom_raw_function_launch(f, grid, block, 0, NULL, 4, ok);
        CHECK(st == LOOM_ERR_UNSUPPORTED && no_device_message(loom_last_error(ctx)), "launch without a device: %d %s", st,
              loom_last_error(ctx));
      }
    }
    loom_raw_module_destroy(m);
  }
  /* given as LLVM IR explicitly, for another chip */
  const char *opt[1] = {"--offload-arch=gfx1100"};
  m = NULL;
  CHECK(loom_raw_module_create(ctx, amd_ir, strlen(amd_ir), LOOM_RAW_LLVM_IR, opt, 1, &m) == LOOM_OK &&
            loom_raw_module_format(m) == LOOM_RAW_LLVM_IR,
        "amdgcn IR given as LLVM IR for gfx1100: %s", loom_last_error(ctx));
  char *ptx = NULL;
  CHECK(m && loom_raw_module_ptx(m, &ptx) != LOOM_OK && !ptx, "an AMD module has no PTX");
  loom_raw_module_destroy(m);
  const char *badopt[1] = {"-arch=gfx9999"};
  m = NULL;
  CHECK(loom_raw_module_create(ctx, amd_ir, strlen(amd_ir), LOOM_RAW_AUTO, badopt, 1, &m) == LOOM_ERR_INVALID_ARGUMENT &&
            !m && strstr(loom_last_error(ctx), "gfx9999"),
        "an unknown chip: %s", loom_last_error(ctx));
  /* a code object: sniffed, entries and argument sizes from its metadata */
  char *co = NULL;
  size_t size = 0;
  CgRawEntry *es = NULL;
  int32_t ne = 0;
  Diag d = {.status = LOOM_OK};
  if (CHECK(cg_amdgpu_compile_llvm(ctx, amd_ir, strlen(amd_ir), false, "gfx942", &co, &size, &es, &ne, &d) == LOOM_OK,
            "compile: %s", d.msg)) {
    m = NULL;
    if (CHECK(loom_raw_module_create(ctx, co, size, LOOM_RAW_AUTO, NULL, 0, &m) == LOOM_OK &&
                  loom_raw_module_format(m) == LOOM_RAW_HSACO,
              "code object: %s", loom_last_error(ctx))) {
      LoomRawFunction *f = NULL;
      int32_t np = 0;
      int32_t sizes[8];
      CHECK(loom_raw_module_get_function(m, "scale", &f) == LOOM_OK &&
                loom_raw_function_params(f, &np, NULL, sizes, 8) == LOOM_OK && np == 4 && sizes[0] == 8 &&
                sizes[2] == 4 && sizes[3] == 4,
            "the code object's parameters: %d", np);
      LoomRawFunction *nf = NULL;
      CHECK(loom_raw_module_get_function(m, "nope", &nf) == LOOM_ERR_INVALID_ARGUMENT && strstr(loom_last_error(ctx), "scale"),
            "an unknown kernel lists the kernels: %s", loom_last_error(ctx));
      loom_raw_module_destroy(m);
    }
    ctx_free(ctx, co);
    cg_raw_entries_free(ctx, es, ne);
  }
  unsigned char junk[128] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64};
  junk[18] = 224;
  m = NULL;
  CHECK(loom_raw_module_create(ctx, junk, sizeof junk, LOOM_RAW_AUTO, NULL, 0, &m) == LOOM_ERR_INVALID_ARGUMENT && !m,
        "a broken code object: %s", loom_last_error(ctx));
  /* NVIDIA's IR stays NVIDIA's */
  const char nv_ir[] = "target triple = \"nvptx64-nvidia-cuda\"\ndefine ptx_kernel void @k(ptr %p) {\n  ret void\n}\n";
  m = NULL;
  LoomStatus st = loom_raw_module_create(ctx, nv_ir, strlen(nv_ir), LOOM_RAW_AUTO, NULL, 0, &m);
  CHECK(st == LOOM_OK && loom_raw_module_format(m) == LOOM_RAW_LLVM_IR && loom_raw_module_ptx(m, &ptx) == LOOM_OK && ptx &&
            strstr(ptx, ".entry k"),
        "nvptx IR: %d %s", st, loom_last_error(ctx));
  loom_free_string(ctx, ptx);
  loom_raw_module_destroy(m);
}

int main(void) {
  if (loom_context_create(&ctx) != LOOM_OK) return 1;
  char version[32], why[512];
  if (!cg_amdgpu_comgr_available(version, sizeof version, why, sizeof why)) {
    printf("test_amdgpu_api: %s: skipped\n", why);
    loom_context_destroy(ctx);
    return 77;
  }
  if (!cg_amdgpu_toolchain_available(ctx, why, sizeof why)) { /* a machine without ROCm's device libraries */
    printf("test_amdgpu_api: %s: skipped\n", why);
    loom_context_destroy(ctx);
    return 77;
  }
  char dir[] = "/tmp/loom_amd_api_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  test_no_device();
  test_dumps(dir);
  test_random_dumps(dir);
  test_raw();
  rmdir(dir);
  loom_context_destroy(ctx);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
