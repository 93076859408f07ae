/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_map_flat.c: the MAP phase of a COL phase split run as row phases of every O point
 * (codegen/gpu_phases.c cg_gpu_map_flat: the grid's threads as P = gstride / nO row phases, item j * nO + o
 * mapping rows j, j + P, ... of O point o), on the emulated GPU (gpu_emulate.h: one lane a block).
 *
 * The kernel is column standardization, (x - mean) / var + bias per column (x: rows x cols, O = the
 * columns, contiguous; R = the rows, a row stride with padding): phase 0 sums x, phase 1 the squared
 * deviations (folded into phase 0's moments), phase 2 the map. The split runs `part` / `finish` per
 * REDUCE phase as the launcher does and the MAP step over grids of 1 block (one row phase, each thread
 * every column in turn) to more threads than points (idle ones), through grids that are not multiples
 * of the columns. Every point is checked against a long double reference, the row padding must stay
 * untouched, and the same runs repeat in child processes with LOOM_GPU_MAP_FLAT=1 (one row a step) and 0
 * (the (part, o) items). */
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/c/gpu_emulate.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static double normal(void) { /* a sum of four uniforms: spread ~0.58, enough for the check */
  double s = 0;
  for (int i = 0; i < 4; i++) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    s += (double)(g_rng >> 11) / 9007199254740992.0;
  }
  return s - 2.0;
}

typedef struct Std {
  KB kb;
  int bx, bb, bo;
} Std;

static void std_kernel(Std *s, LoomDType t) {
  KB *kb = &s->kb;
  kb_init(kb, 2, 1, 32);
  s->bx = kb_buf(kb, t, 0, "1a");
  s->bb = kb_buf(kb, t, 0, "10"); /* a per-column bias: broadcast along R */
  s->bo = kb_buf(kb, t, 1, "1a");
  int x = kb_load(kb, s->bx, t);
  int n = kb_cast(kb, kb_ins(kb, KI_REDSIZE, LOOM_INT64, 0, -1, -1), t);
  int mu = kb_bin(kb, LOOM_OP_TRUEDIV, t, kb_acc(kb, 0, t), n);
  int d = kb_bin(kb, LOOM_OP_SUB, t, x, mu);
  kb_reduce(kb, LOOM_REDUCE_SUM, t, x);
  kb_reduce(kb, LOOM_REDUCE_SUM, t, kb_bin(kb, LOOM_OP_MUL, t, d, d));
  int var = kb_bin(kb, LOOM_OP_TRUEDIV, t, kb_acc(kb, 1, t), n);
  kb_store(kb, KP_MAP, s->bo, kb_bin(kb, LOOM_OP_ADD, t, kb_bin(kb, LOOM_OP_TRUEDIV, t, d, var), kb_load(kb, s->bb, t)));
}

/* The phase split as rt_gpu_launch_policy runs it, the MAP steps over map_blocks blocks. */
static void run_split(Emu *e, const KernelIr *k, const int64_t *shape, void *const *bases, const int64_t *strides,
                      int nparts, int64_t map_blocks) {
  int nd = k->ndim, nb = k->nbuf;
  uint64_t words[64] = {0};
  int64_t no = shape[0];
  for (int d = 0; d < nd; d++) words[d] = (uint64_t)shape[d];
  for (int b = 0; b < nb; b++) words[nd + b] = (uint64_t)(uintptr_t)bases[b];
  for (int i = 0; i < nb * nd; i++) words[nd + nb + i] = (uint64_t)strides[i];
  uint64_t *extra = &words[nd + nb + nb * nd];
  uint32_t red = e->gk.split_reduce, map = e->gk.split_map;
  int nphase = 32 - __builtin_clz(red | map);
  int64_t nfin = 32 - __builtin_clz(red);
  size_t acc = (size_t)e->gk.acc_size, bytes = (size_t)(no * nparts + no * nfin) * acc;
  unsigned char *mem = malloc(bytes + 64);
  memset(mem, 0xA5, bytes); /* garbage: nothing may read what was not written */
  extra[0] = (uint64_t)nparts;
  extra[1] = (uint64_t)(uintptr_t)mem;
  extra[3] = (uint64_t)(uintptr_t)(mem + (size_t)(no * nparts) * acc);
  for (int p = 0; p < nphase; p++) {
    bool reduce = red >> p & 1u;
    if (!reduce && !(map >> p & 1u)) continue;
    extra[2] = (uint64_t)p;
    launch(e, e->part, reduce ? no * nparts : map_blocks, words);
    if (reduce) launch(e, e->finish, no, words);
  }
  free(mem);
}

static void check_std(LoomDType t, int64_t rows, int64_t cols) {
  Std s;
  std_kernel(&s, t);
  uint32_t red = 0, map = 0;
  CHECK(cg_gpu_phase_split(&s.kb.k, &red, &map) && map == 4u, "the phase split: reduce %#x map %#x", red, map);
  int pts = cg_gpu_map_flat_points();
  CHECK(cg_gpu_map_flat_bits(&s.kb.k) == (pts ? 4u : 0u), "flat MAP phases %#x at %d points a step",
        cg_gpu_map_flat_bits(&s.kb.k), pts);
  Emu e;
  if (!emu_build(&e, &s.kb.k)) {
    emu_free(&e);
    return;
  }
  CHECK(e.gk.strategy == CG_GPU_COL, "strategy %d", e.gk.strategy);
  size_t es = t == LOOM_FLOAT32 ? 4 : 8;
  int64_t ld = cols + 3; /* padded rows */
  double *xs = malloc((size_t)(rows * ld) * sizeof *xs), *bias = malloc((size_t)cols * sizeof *bias);
  void *xb = malloc((size_t)(rows * ld) * es), *bb = malloc((size_t)cols * es), *ob = malloc((size_t)(rows * ld) * es);
  for (int64_t i = 0; i < rows * ld; i++) {
    double v = 100.0 + normal();
    xs[i] = t == LOOM_FLOAT32 ? (double)(float)v : v;
    if (t == LOOM_FLOAT32) ((float *)xb)[i] = (float)xs[i];
    else ((double *)xb)[i] = xs[i];
  }
  if (rows > 2 && cols > 5) {
    xs[1 * ld + 5] = NAN; /* column 5: NaN everywhere in its output */
    if (t == LOOM_FLOAT32) ((float *)xb)[1 * ld + 5] = NAN;
    else ((double *)xb)[1 * ld + 5] = NAN;
  }
  for (int64_t c = 0; c < cols; c++) {
    bias[c] = (double)c - 0.5;
    if (t == LOOM_FLOAT32) ((float *)bb)[c] = (float)bias[c];
    else ((double *)bb)[c] = bias[c];
  }
  int64_t shape[2] = {cols, rows}, strides[6] = {1, ld, 1, 0, 1, ld};
  void *bases[3] = {xb, bb, ob};
  int64_t npts = rows * cols;
  int64_t grids[] = {1, 2, 5, cols - 1, cols, cols + 1, 2 * cols + 3, npts - 1, npts, npts + 7};
  int nparts[] = {1, 3};
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++)
    for (int pi = 0; pi < 2; pi++) {
      if (grids[gi] < 1 || rows < nparts[pi]) continue;
      memset(ob, 0x5A, (size_t)(rows * ld) * es);
      run_split(&e, &s.kb.k, shape, bases, strides, nparts[pi], grids[gi]);
      int bad = 0;
      for (int64_t c = 0; c < cols && bad < 3; c++) {
        long double sum = 0, q = 0;
        for (int64_t r = 0; r < rows; r++) sum += xs[r * ld + c];
        long double m = sum / rows;
        for (int64_t r = 0; r < rows; r++) q += (xs[r * ld + c] - m) * (xs[r * ld + c] - m);
        long double var = q / rows;
        for (int64_t r = 0; r < rows && bad < 3; r++) {
          long double want = (xs[r * ld + c] - m) / var + bias[c];
          double got = t == LOOM_FLOAT32 ? (double)((float *)ob)[r * ld + c] : ((double *)ob)[r * ld + c];
          double tol = t == LOOM_FLOAT32 ? 2e-3 : 1e-9; /* the deviation's rounding over var ~ 1 */
          bool ok = isnan((double)want) ? isnan(got) : fabsl((long double)got - want) <= tol * (1 + fabsl(want));
          if (!ok) bad++;
          CHECK(ok, "%s %lldx%lld grid %lld parts %d (%lld, %lld): %.17g want %.17Lg", t == LOOM_FLOAT32 ? "f32" : "f64",
                (long long)rows, (long long)cols, (long long)grids[gi], nparts[pi], (long long)r, (long long)c, got, want);
        }
      }
      bool pad = true; /* the padding after each row is never written */
      for (int64_t r = 0; r < rows; r++)
        for (int64_t c = cols; c < ld; c++) pad = pad && ((unsigned char *)ob)[(size_t)(r * ld + c) * es] == 0x5A;
      CHECK(pad, "row padding untouched, grid %lld parts %d", (long long)grids[gi], nparts[pi]);
    }
  free(xs);
  free(bias);
  free(xb);
  free(bb);
  free(ob);
  emu_free(&e);
}

int main(int argc, char **argv) {
  (void)argc;
  emu_init();
  check_std(LOOM_FLOAT64, 41, 37);
  check_std(LOOM_FLOAT32, 29, 64);
  check_std(LOOM_FLOAT64, 1, 9); /* one row */
  check_std(LOOM_FLOAT32, 50, 1); /* one column: every step wraps */
  const char *env = getenv("LOOM_GPU_MAP_FLAT");
  printf("%s%s%d passed, %d failed\n", env ? env : "", env ? ": " : "", g_pass, g_fail);
  if (env) return g_fail ? 1 : 0;
  const char *runs[] = {"1", "0"}; /* one point a step; the (part, o) items */
  for (int i = 0; i < 2; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      setenv("LOOM_GPU_MAP_FLAT", runs[i], 1);
      execl("/proc/self/exe", argv[0], (char *)NULL);
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) g_fail++;
  }
  return g_fail ? 1 : 0;
}
