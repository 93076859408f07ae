/* test_hip.c: the HIP runtime layer (runtime/hip/hip.c) against the real libamdhip64 of the machine.
 *
 * Always (also with `--loader`, the CI test test_hip_loader): a missing library is a clear
 * LOOM_ERR_UNSUPPORTED ("no HIP runtime"); the installed runtime loads, and on a machine without an AMD
 * GPU reports "no AMD device" at once (HIP 5.2 returns hipErrorInvalidDevice from hipInit) without a
 * crash or a hang; loading twice gives the same answer.
 * With an AMD GPU (scripts/amd_all.sh on an MI300): every device's facts (its chip known to the AMD
 * target), memory, copies (host, device, peer), memset, streams and events, and a kernel: LLVM IR for
 * amdgcn compiled for the device's chip (codegen/amdgpu_raw.c), loaded with hipModuleLoadData, launched
 * with hipModuleLaunchKernel and checked against the host; kernel attributes and occupancy.
 * Without a device the full test exits 77 (skipped).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "codegen/codegen.h"
#include "runtime/hip/hip.h"

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

static LoomContext g_ctx;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Returns the loaded runtime, or NULL when this machine has no AMD device (checked to be said cleanly). */
static RtHip *test_loader(void) {
  Diag d = {.status = LOOM_OK};
  RtHip *h = NULL;
  const char *keep = getenv("LOOM_HIP_LIBRARY");
  char *saved = keep ? strdup(keep) : NULL;
  setenv("LOOM_HIP_LIBRARY", "/nonexistent/libamdhip64.so", 1);
  CHECK(rt_hip_load(&g_ctx, &h, &d) == LOOM_ERR_UNSUPPORTED && !h && strstr(d.msg, "no HIP runtime") &&
            strstr(d.msg, "/nonexistent/libamdhip64.so"),
        "a missing HIP runtime: %s", d.msg);
  if (saved) setenv("LOOM_HIP_LIBRARY", saved, 1);
  else unsetenv("LOOM_HIP_LIBRARY");
  free(saved);
  for (int round = 0; round < 2; round++) {
    d.status = LOOM_OK;
    d.msg[0] = 0;
    double t0 = now_ms();
    LoomStatus st = rt_hip_load(&g_ctx, &h, &d);
    double ms = now_ms() - t0;
    CHECK(ms < 30000, "loading the HIP runtime took %.0f ms", ms);
    if (st == LOOM_OK) {
      CHECK(rt_hip_device_count(h) >= 1, "a loaded runtime has devices");
      printf("HIP %d: %d AMD device(s) (%.1f ms)\n", rt_hip_runtime_version(h), rt_hip_device_count(h), ms);
      if (round == 1) return h;
      rt_hip_unload(h);
      continue;
    }
    /* with the HIP runtime installed (Debian's libamdhip64-5 in CI) but no GPU, the answer says so */
    CHECK(st == LOOM_ERR_UNSUPPORTED && !h &&
              ((strstr(d.msg, "no AMD device") && strstr(d.msg, "no AMD GPU")) || strstr(d.msg, "no HIP runtime")),
          "no AMD device here: status %d, %s", st, d.msg);
    printf("HIP runtime here: %s (%.1f ms)\n", d.msg, ms);
  }
  return NULL;
}

static const char vadd_ir[] =
    "target triple = \"amdgcn-amd-amdhsa\"\n"
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "declare i32 @llvm.amdgcn.workgroup.id.x()\n"
    "declare float @__ocml_sqrt_f32(float)\n"
    "define amdgpu_kernel void @vadd(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) "
    "\"amdgpu-flat-work-group-size\"=\"1,256\" {\n"
    "entry:\n  %t = call i32 @llvm.amdgcn.workitem.id.x()\n  %g = call i32 @llvm.amdgcn.workgroup.id.x()\n"
    "  %base = mul i32 %g, 256\n  %i = add i32 %base, %t\n  %c = icmp slt i32 %i, %n\n"
    "  br i1 %c, label %body, label %done\n"
    "body:\n  %pa = getelementptr float, ptr addrspace(1) %a, i32 %i\n  %va = load float, ptr addrspace(1) %pa\n"
    "  %pb = getelementptr float, ptr addrspace(1) %b, i32 %i\n  %vb = load float, ptr addrspace(1) %pb\n"
    "  %s = call float @__ocml_sqrt_f32(float %vb)\n  %r = fadd float %va, %s\n"
    "  %po = getelementptr float, ptr addrspace(1) %out, i32 %i\n  store float %r, ptr addrspace(1) %po\n"
    "  br label %done\ndone:\n  ret void\n}\n";

static void test_device(RtHip *h, int dev) {
  Diag d = {.status = LOOM_OK};
  RtGpuDeviceInfo info;
  if (!CHECK(rt_hip_device_info(h, dev, &info, &d) == LOOM_OK, "device %d info: %s", dev, d.msg)) return;
  printf("device %d: %s (%s, gfx %d.%d), %d CUs, wave %d, %d threads per block, %.1f GiB\n", dev, info.name, info.arch,
         info.arch_major, info.arch_minor, info.sm_count, info.wave, info.max_threads_per_block,
         info.total_mem / 1073741824.0);
  CHECK(info.sm_count > 0 && info.max_threads_per_block >= 256 && (info.wave == 32 || info.wave == 64) &&
            info.arch_major >= 9,
        "device %d facts", dev);
  const int n = 100003;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *o = calloc(n, sizeof *o);
  for (int i = 0; i < n; i++) a[i] = (float)i * 0.5f, b[i] = (float)(i % 1000);
  uint64_t da = 0, db = 0, dout = 0;
  CHECK(rt_hip_set_device(h, dev, &d) == LOOM_OK && rt_hip_mem_alloc(h, dev, n * sizeof(float), &da, &d) == LOOM_OK &&
            rt_hip_mem_alloc(h, dev, n * sizeof(float), &db, &d) == LOOM_OK &&
            rt_hip_mem_alloc(h, dev, n * sizeof(float), &dout, &d) == LOOM_OK && da && db && dout,
        "alloc: %s", d.msg);
  CHECK(rt_hip_copy_h2d(h, dev, da, a, n * sizeof(float), NULL, &d) == LOOM_OK &&
            rt_hip_copy_h2d(h, dev, db, b, n * sizeof(float), NULL, &d) == LOOM_OK &&
            rt_hip_memset(h, dev, dout, 0xff, n * sizeof(float), NULL, &d) == LOOM_OK,
        "copies in: %s", d.msg);
  /* the kernel, compiled for this device's chip */
  char *co = NULL;
  size_t size = 0;
  CgRawEntry *es = NULL;
  int32_t ne = 0;
  void *m = NULL, *k = NULL;
  if (CHECK(cg_amdgpu_compile_llvm(&g_ctx, vadd_ir, strlen(vadd_ir), false, info.arch, &co, &size, &es, &ne, &d) ==
                    LOOM_OK &&
                rt_hip_module_load(h, dev, co, size, &m, &d) == LOOM_OK &&
                rt_hip_module_function(h, dev, m, "vadd", &k, &d) == LOOM_OK,
            "vadd for %s: %s", info.arch, d.msg)) {
    RtGpuFuncAttrs at;
    int occ = 0;
    CHECK(rt_hip_func_attrs(h, dev, k, &at, &d) == LOOM_OK && at.max_threads_per_block >= 256 &&
              rt_hip_occupancy(h, dev, k, 256, 0, &occ, &d) == LOOM_OK && occ >= 1,
          "attributes and occupancy: %s", d.msg);
    void *s = NULL, *e0 = NULL, *e1 = NULL;
    CHECK(rt_hip_stream_create(h, dev, &s, &d) == LOOM_OK && rt_hip_event_create(h, dev, &e0, &d) == LOOM_OK &&
              rt_hip_event_create(h, dev, &e1, &d) == LOOM_OK,
          "stream and events: %s", d.msg);
    int32_t nn = n;
    void *params[4] = {&dout, &da, &db, &nn};
    uint32_t grid[3] = {(uint32_t)(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
    float ms = -1;
    CHECK(rt_hip_event_record(h, dev, e0, s, &d) == LOOM_OK &&
              rt_hip_launch(h, dev, k, grid, block, 0, s, params, &d) == LOOM_OK &&
              rt_hip_event_record(h, dev, e1, s, &d) == LOOM_OK && rt_hip_stream_synchronize(h, dev, s, &d) == LOOM_OK &&
              rt_hip_event_elapsed(h, dev, e0, e1, &ms, &d) == LOOM_OK && ms >= 0,
          "launch: %s", d.msg);
    CHECK(rt_hip_copy_d2h(h, dev, o, dout, n * sizeof(float), NULL, &d) == LOOM_OK, "copy out: %s", d.msg);
    long bad = 0;
    for (int i = 0; i < n; i++) bad += o[i] != a[i] + sqrtf(b[i]);
    CHECK(bad == 0, "vadd on %s: %ld of %d wrong (o[1] = %g)", info.arch, bad, n, o[1]);
    rt_hip_event_destroy(h, dev, e0);
    rt_hip_event_destroy(h, dev, e1);
    rt_hip_stream_destroy(h, dev, s);
  }
  rt_hip_module_unload(h, dev, m);
  cg_raw_entries_free(&g_ctx, es, ne);
  ctx_free(&g_ctx, co);
  /* device to device, and to the next device */
  CHECK(rt_hip_copy_d2d(h, dev, dout, da, n * sizeof(float), NULL, &d) == LOOM_OK &&
            rt_hip_device_synchronize(h, dev, &d) == LOOM_OK &&
            rt_hip_copy_d2h(h, dev, o, dout, n * sizeof(float), NULL, &d) == LOOM_OK && !memcmp(o, a, n * sizeof(float)),
        "device to device: %s", d.msg);
  int peer = (dev + 1) % rt_hip_device_count(h);
  if (peer != dev) {
    uint64_t dp = 0;
    memset(o, 0, n * sizeof(float));
    CHECK(rt_hip_set_device(h, peer, &d) == LOOM_OK && rt_hip_mem_alloc(h, peer, n * sizeof(float), &dp, &d) == LOOM_OK &&
              rt_hip_copy_peer(h, peer, dp, dev, db, n * sizeof(float), &d) == LOOM_OK &&
              rt_hip_copy_d2h(h, peer, o, dp, n * sizeof(float), NULL, &d) == LOOM_OK && !memcmp(o, b, n * sizeof(float)),
          "peer copy %d -> %d: %s", dev, peer, d.msg);
    rt_hip_mem_free(h, peer, dp);
    CHECK(rt_hip_set_device(h, dev, &d) == LOOM_OK, "back to device %d: %s", dev, d.msg);
  }
  uint64_t fr = 0, total = 0;
  CHECK(rt_hip_mem_info(h, dev, &fr, &total, &d) == LOOM_OK && total == info.total_mem && fr > 0 && fr <= total,
        "memory info: %s", d.msg);
  rt_hip_mem_free(h, dev, da);
  rt_hip_mem_free(h, dev, db);
  rt_hip_mem_free(h, dev, dout);
  d.status = LOOM_OK;
  CHECK(rt_hip_set_device(h, rt_hip_device_count(h), &d) == LOOM_ERR_INVALID_ARGUMENT, "a device out of range: %s",
        d.msg);
  free(a);
  free(b);
  free(o);
}

int main(int argc, char **argv) {
  g_ctx.alloc = *ir_default_allocator();
  bool loader_only = argc > 1 && !strcmp(argv[1], "--loader");
  RtHip *h = test_loader();
  if (h && !loader_only)
    for (int dev = 0; dev < rt_hip_device_count(h); dev++) test_device(h, dev);
  rt_hip_unload(h);
  printf("%d passed, %d failed\n", g_pass, g_fail);
  if (g_fail) return 1;
  if (!h && !loader_only) {
    printf("test_hip: no AMD device: the device tests are skipped\n");
    return 77;
  }
  return 0;
}
