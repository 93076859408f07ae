/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_elem_points.c: the GPU's scalar elementwise entry with several points a thread
 * (cg_gpu_elem_points, LOOM_GPU_ELEM_POINTS) without a GPU.
 *
 * The entry runs where the vector entries cannot (odd row lengths, unaligned or strided views, broadcasts):
 * a thread reads every loaded buffer at points i, i + G, i + 2G, i + 3G (G: the grid's threads) before it
 * computes any, a point past the end reading the last point instead and storing nothing. Here the shared
 * GPU lowering runs on the host (gpu_emulate.h: one lane a block, blocks in order) over grids of 1 to 64
 * "threads", so that every tail (n mod 4G) occurs, on 2-d views with a padded row stride, a broadcast row
 * and a contiguous operand, for float32 / float64 (NaN and inf in the data) / int32 and int8 (wrap-around),
 * with 32- and 64-bit indices. Each result is checked against a loop written here. The run is repeated in
 * a child process with LOOM_GPU_ELEM_POINTS=1 (one point at a time), which must give the same values.
 */
#include <math.h>
#include <stdint.h>

#include <sys/wait.h>
#include <unistd.h>

#include "codegen/cg_lower.h"
#include "tests/c/gpu_emulate.h"

/* out[r, c] = x[r, c] * y[c] + z[r, c]: x any strides, y broadcast over rows, z and out any strides */
typedef struct MapKernel {
  KB kb;
} MapKernel;

static void map_kernel(MapKernel *m, LoomDType t, int index_bits) {
  KB *b = &m->kb;
  kb_init(b, 2, 2, index_bits);
  int bx = kb_buf(b, t, 0, "aa"), by = kb_buf(b, t, 0, "0a"), bz = kb_buf(b, t, 0, "aa");
  int bo = kb_buf(b, t, 1, "aa");
  int x = kb_load(b, bx, t), y = kb_load(b, by, t), z = kb_load(b, bz, t);
  kb_store(b, KP_MAP, bo, kb_bin(b, LOOM_OP_ADD, t, kb_bin(b, LOOM_OP_MUL, t, x, y), z));
}

static size_t size_of(LoomDType t) {
  return t == LOOM_FLOAT64 ? 8 : t == LOOM_FLOAT32 || t == LOOM_INT32 ? 4 : 1;
}
static double get(LoomDType t, const void *p, int64_t i) {
  switch (t) {
  case LOOM_FLOAT64: return ((const double *)p)[i];
  case LOOM_FLOAT32: return ((const float *)p)[i];
  case LOOM_INT32: return ((const int32_t *)p)[i];
  default: return ((const int8_t *)p)[i];
  }
}
static void put(LoomDType t, void *p, int64_t i, double v) {
  switch (t) {
  case LOOM_FLOAT64: ((double *)p)[i] = v; break;
  case LOOM_FLOAT32: ((float *)p)[i] = (float)v; break;
  case LOOM_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
  default: ((int8_t *)p)[i] = (int8_t)v; break;
  }
}
/* the reference in the dtype's own arithmetic (float32 rounded twice; integers wrap) */
static double ref_point(LoomDType t, double x, double y, double z) {
  if (t == LOOM_FLOAT64) return x * y + z;
  if (t == LOOM_FLOAT32) return (double)((float)((float)x * (float)y) + (float)z);
  uint32_t w = (uint32_t)(int64_t)x * (uint32_t)(int64_t)y + (uint32_t)(int64_t)z;
  return t == LOOM_INT32 ? (double)(int32_t)w : (double)(int8_t)(uint8_t)w;
}
static bool same(LoomDType t, double got, double want) {
  if (isnan(want)) return isnan(got);
  return got == want || (t == LOOM_FLOAT32 && fabs(got - want) <= 1e-6 * fabs(want));
}

static int g_runs;

/* rows x cols over grids of several sizes; x's rows are padded by `pad` points, out's by 1 */
static void check_map(LoomDType t, int index_bits, int64_t rows, int64_t cols, int64_t pad) {
  MapKernel mk;
  map_kernel(&mk, t, index_bits);
  Emu e;
  if (!emu_build(&e, &mk.kb.k)) {
    emu_free(&e);
    return;
  }
  CHECK(e.gk.strategy == CG_GPU_ELEMENTWISE, "strategy %d, want elementwise", e.gk.strategy);
  size_t es = size_of(t);
  int64_t xs = cols + pad, os = cols + 1;
  int64_t nx = rows * xs + 1, no = rows * os + 1, nz = rows * cols + 1;
  void *x = calloc((size_t)nx, es), *y = calloc((size_t)cols + 1, es), *z = calloc((size_t)nz, es);
  void *o = calloc((size_t)no, es);
  bool fl = t == LOOM_FLOAT32 || t == LOOM_FLOAT64;
  uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(rows * 131 + cols);
  for (int64_t i = 0; i < nx; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double v = fl ? (double)(int64_t)(s >> 40) / 1048576.0 - 8.0 : (double)(int8_t)(s >> 56) * (t == LOOM_INT8 ? 1 : 1000003);
    put(t, x, i, v);
  }
  for (int64_t i = 0; i <= cols; i++) put(t, y, i, fl ? 0.5 + (double)(i % 7) : (double)(i % 13) - 6 + (t == LOOM_INT32 ? 7919 : 0));
  for (int64_t i = 0; i < nz; i++) put(t, z, i, fl ? (double)(i % 11) - 5.25 : (double)(i % 200) - 100);
  if (fl && rows * cols > 2) {
    put(t, x, 0, NAN);
    put(t, z, nz - 2, INFINITY);
  }
  int64_t shape[2] = {rows, cols};
  const int nb = 4, nd = 2;
  int64_t strides[8] = {xs, 1, 0, 1, cols, 1, os, 1};
  void *bases[4] = {x, y, z, o};
  int grids[6] = {1, 2, 3, 5, 7, 64};
  for (int gi = 0; gi < 6; gi++) {
    memset(o, 0x5A, (size_t)no * es); /* a point written twice or outside the view shows */
    uint64_t words[64] = {0};
    for (int d = 0; d < nd; d++) words[d] = (uint64_t)shape[d];
    for (int bi = 0; bi < nb; bi++) words[nd + bi] = (uint64_t)(uintptr_t)bases[bi];
    for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
    launch(&e, e.main, grids[gi], words);
    bool ok = true;
    for (int64_t r = 0; r < rows && ok; r++)
      for (int64_t c = 0; c < cols && ok; c++) {
        double want = ref_point(t, get(t, x, r * xs + c), get(t, y, c), get(t, z, r * cols + c));
        double got = get(t, o, r * os + c);
        ok = same(t, got, want);
        CHECK(ok, "dtype %d, %lld x %lld, grid %d, index bits %d: point (%lld, %lld) = %g, want %g", t,
              (long long)rows, (long long)cols, grids[gi], index_bits, (long long)r, (long long)c, got, want);
      }
    /* the pad point of every output row and the point after the last stay as they were */
    unsigned char *ob = o;
    for (int64_t r = 0; r < rows && ok; r++) {
      ok = ob[(size_t)(r * os + cols) * es] == 0x5A;
      CHECK(ok, "dtype %d, %lld x %lld, grid %d: the pad after row %lld was written", t, (long long)rows,
            (long long)cols, grids[gi], (long long)r);
    }
    ok = ok && ob[(size_t)(rows * os) * es] == 0x5A; /* the point after the view: no thread is past the end */
    CHECK(ok, "dtype %d, %lld x %lld, grid %d: a point past the end was written", t, (long long)rows,
          (long long)cols, grids[gi]);
    g_runs++;
  }
  free(x), free(y), free(z), free(o);
  emu_free(&e);
}

static void test_values(void) {
  LoomDType types[4] = {LOOM_FLOAT32, LOOM_FLOAT64, LOOM_INT32, LOOM_INT8};
  int64_t shapes[7][2] = {{1, 1}, {3, 7}, {5, 13}, {0, 5}, {4, 0}, {17, 1}, {9, 33}};
  for (int ti = 0; ti < 4; ti++)
    for (int si = 0; si < 7; si++) check_map(types[ti], 32, shapes[si][0], shapes[si][1], 3);
  check_map(LOOM_FLOAT32, 64, 7, 9, 5);
  check_map(LOOM_INT8, 64, 6, 11, 1);
  CHECK(g_runs == 4 * 7 * 6 + 2 * 6, "cases run: %d", g_runs);
}

/* the points a thread reads ahead: the knob (default 4) */
static void test_points_of(bool one) {
  MapKernel mk;
  map_kernel(&mk, LOOM_FLOAT32, 32);
  int want = one ? 1 : GPU_ELEM_POINTS_MAX;
  CHECK(cg_gpu_elem_points_of(&mk.kb.k) == want, "three loaded buffers: %d points, want %d",
        cg_gpu_elem_points_of(&mk.kb.k), want);
}

int main(void) {
  emu_init();
  const char *env = getenv("LOOM_GPU_ELEM_POINTS");
  bool one = env && strcmp(env, "1") == 0;
  test_points_of(one);
  test_values();
  printf("%s%d passed, %d failed\n", one ? "(LOOM_GPU_ELEM_POINTS=1) " : "", g_pass, g_fail);
  if (one) return g_fail ? 1 : 0;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("LOOM_GPU_ELEM_POINTS", "1", 1);
    execl("/proc/self/exe", "test_gpu_elem_points", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  bool child_ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!child_ok) printf("FAIL: the LOOM_GPU_ELEM_POINTS=1 run (status %d)\n", status);
  return g_fail || !child_ok ? 1 : 0;
}
