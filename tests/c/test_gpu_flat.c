/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_flat.c: the elementwise `flatv` entry (codegen.h: vectors over the flat index of a 2-d kernel,
 * crossing rows) and the launcher's choice of it, without a GPU.
 *
 *  - Which kernels have the entry (cg_gpu_flat_lanes): 2-d maps that store and read buffers contiguous
 *    along the last dim and not broadcast along the first.
 *  - Its values on the emulated GPU (gpu_emulate.h: the shared lowering JIT-compiled for the host, one lane a
 *    block, blocks in order): out[r, c] = float(x[r, c]) * m[c] + s[r] with x uint8 (a vector of the flat
 *    index), m a per-column operand (read lane by lane at (i + j) mod C), s a per-row one (at each lane's
 *    row), for row lengths 1 .. 9 (so that vectors cross rows at every phase, and several rows in one
 *    vector), 1 .. 40 rows and grids of 1 to 64 "threads" (every tail), against a loop written here; the
 *    point after the output is never written.
 *  - The launch policy (a recording launcher): flatv where the vector entries cannot run and every vector
 *    buffer is C-contiguous and aligned; the scalar entry for a padded row pitch or an unaligned base; the
 *    vector entry where rows are whole vectors.
 */
#include <math.h>
#include <stdint.h>

#include "codegen/cg_lower.h"
#include "runtime/gpu/gpu_launch_policy.h"
#include "tests/c/gpu_emulate.h"

/* out = float(x) * m + s: x uint8 "a1", m float32 "01", s float32 "a0", out float32 "a1" */
static void norm_kernel(KB *b) {
  kb_init(b, 2, 2, 32);
  int bx = kb_buf(b, LOOM_UINT8, 0, "a1"), bm = kb_buf(b, LOOM_FLOAT32, 0, "01"), bs = kb_buf(b, LOOM_FLOAT32, 0, "a0");
  int bo = kb_buf(b, LOOM_FLOAT32, 1, "a1");
  int x = kb_cast(b, kb_load(b, bx, LOOM_UINT8), LOOM_FLOAT32);
  int m = kb_load(b, bm, LOOM_FLOAT32), s = kb_load(b, bs, LOOM_FLOAT32);
  kb_store(b, KP_MAP, bo, kb_bin(b, LOOM_OP_ADD, LOOM_FLOAT32, kb_bin(b, LOOM_OP_MUL, LOOM_FLOAT32, x, m), s));
}

/* out[k, h, w] = a[k] * 1000 + b[h] * 10 + c[w] (+ x[k, h, w] when full): a "100", b "010", c "001" float32,
 * x and out "aa1" */
static void heat_kernel(KB *b, bool full) {
  kb_init(b, 3, 3, 32);
  int ba = kb_buf(b, LOOM_FLOAT32, 0, "a00"), bb = kb_buf(b, LOOM_FLOAT32, 0, "0a0"), bc = kb_buf(b, LOOM_FLOAT32, 0, "001");
  int bo = kb_buf(b, LOOM_FLOAT32, 1, "aa1");
  int bx = full ? kb_buf(b, LOOM_FLOAT32, 0, "aa1") : -1;
  int thousand = kb_ins(b, KI_CONST, LOOM_FLOAT32, 0, -1, -1), ten = kb_ins(b, KI_CONST, LOOM_FLOAT32, 0, -1, -1);
  b->ins[thousand].value.f = 1000.0, b->ins[ten].value.f = 10.0;
  int v = kb_bin(b, LOOM_OP_ADD, LOOM_FLOAT32, kb_bin(b, LOOM_OP_MUL, LOOM_FLOAT32, kb_load(b, ba, LOOM_FLOAT32), thousand),
                 kb_bin(b, LOOM_OP_MUL, LOOM_FLOAT32, kb_load(b, bb, LOOM_FLOAT32), ten));
  v = kb_bin(b, LOOM_OP_ADD, LOOM_FLOAT32, v, kb_load(b, bc, LOOM_FLOAT32));
  if (full) v = kb_bin(b, LOOM_OP_ADD, LOOM_FLOAT32, v, kb_load(b, bx, LOOM_FLOAT32));
  kb_store(b, KP_MAP, bo, v);
}

static void test_which_kernels(void) {
  KB b;
  norm_kernel(&b);
  CHECK(cg_gpu_flat_lanes(&b.k) == 4, "uint8 in, float32 out: flatv of 4 lanes (%d)", cg_gpu_flat_lanes(&b.k));
  CHECK(cg_gpu_flat_vec_buf(&b.k, 0) && !cg_gpu_flat_vec_buf(&b.k, 1) && !cg_gpu_flat_vec_buf(&b.k, 2) &&
            cg_gpu_flat_vec_buf(&b.k, 3),
        "vectors: x and out; m and s lane by lane");
  /* a store broadcast along the first dim cannot be a flat vector: no flatv */
  KB c;
  kb_init(&c, 2, 2, 32);
  int cx = kb_buf(&c, LOOM_FLOAT32, 0, "a1"), co = kb_buf(&c, LOOM_FLOAT32, 1, "01");
  kb_store(&c, KP_MAP, co, kb_load(&c, cx, LOOM_FLOAT32));
  CHECK(cg_gpu_flat_lanes(&c.k) == 0, "a store of layout 01: no flatv");
  /* reads only of broadcast operands: the scalar entry serves as well */
  KB e;
  kb_init(&e, 2, 2, 32);
  int em = kb_buf(&e, LOOM_FLOAT32, 0, "01"), eo = kb_buf(&e, LOOM_FLOAT32, 1, "a1");
  kb_store(&e, KP_MAP, eo, kb_load(&e, em, LOOM_FLOAT32));
  CHECK(cg_gpu_flat_lanes(&e.k) == 0, "no vector read: no flatv");
  /* 3-d kernels: flatv (LOOM_GPU_FLAT_ND=0: none), also where only the store is a flat vector */
  KB f;
  kb_init(&f, 3, 3, 32);
  int fx = kb_buf(&f, LOOM_FLOAT32, 0, "aa1"), fo = kb_buf(&f, LOOM_FLOAT32, 1, "aa1");
  kb_store(&f, KP_MAP, fo, kb_load(&f, fx, LOOM_FLOAT32));
  int want = cg_gpu_flat_nd() ? 4 : 0;
  CHECK(cg_gpu_flat_lanes(&f.k) == want, "3-d copy: flatv of %d lanes (%d)", want, cg_gpu_flat_lanes(&f.k));
  KB g;
  heat_kernel(&g, false);
  CHECK(cg_gpu_flat_lanes(&g.k) == want, "3-d outer product of per-axis operands: flatv of %d lanes", want);
  CHECK(!cg_gpu_flat_vec_buf(&g.k, 0) && !cg_gpu_flat_vec_buf(&g.k, 2) && cg_gpu_flat_vec_buf(&g.k, 3),
        "3-d: per-axis operands lane by lane, the output a vector");
}

static int g_runs;

static void test_values(void) {
  KB b;
  norm_kernel(&b);
  Emu e;
  if (!emu_build(&e, &b.k) || !e.flatv) {
    CHECK(e.flatv != NULL, "the flatv entry exists");
    emu_free(&e);
    return;
  }
  const int grids[5] = {1, 2, 3, 7, 64};
  for (int C = 1; C <= 9; C++)
    for (int R = 1; R <= 40; R += (R < 6 ? 1 : 17)) {
      int n = R * C;
      uint8_t *x = aligned_alloc(64, 512);
      float *m = aligned_alloc(64, 64), *s = aligned_alloc(64, 256), *o = aligned_alloc(64, 2048);
      for (int i = 0; i < n; i++) x[i] = (uint8_t)(i * 37 + 11);
      for (int c = 0; c < C; c++) m[c] = 0.5f + (float)c;
      for (int r = 0; r < R; r++) s[r] = (float)r * 1000.0f;
      for (int gi = 0; gi < 5; gi++) {
        for (int i = 0; i < n + 8; i++) o[i] = -1.0f;
        uint64_t words[32] = {0};
        words[0] = (uint64_t)R, words[1] = (uint64_t)C;
        void *bases[4] = {x, m, s, o};
        for (int bi = 0; bi < 4; bi++) words[2 + bi] = (uint64_t)(uintptr_t)bases[bi];
        int64_t strides[8] = {C, 1, 0, 1, 1, 0, C, 1};
        for (int i = 0; i < 8; i++) words[6 + i] = (uint64_t)strides[i];
        words[14] = 1; /* extra word 0; word 1 (the load ties' zero) stays 0 */
        launch(&e, e.flatv, grids[gi], words);
        bool ok = true;
        for (int r = 0; r < R && ok; r++)
          for (int c = 0; c < C && ok; c++) {
            float want = (float)x[r * C + c] * m[c] + s[r], got = o[r * C + c];
            ok = fabsf(got - want) <= 1e-6f * fabsf(want);
            CHECK(ok, "%d x %d, grid %d: (%d, %d) = %g, want %g", R, C, grids[gi], r, c, got, want);
          }
        CHECK(o[n] == -1.0f, "%d x %d, grid %d: the point after the end was written", R, C, grids[gi]);
        g_runs++;
      }
      free(x), free(m), free(s), free(o);
    }
  CHECK(g_runs == 9 * 8 * 5, "cases run: %d", g_runs);
  emu_free(&e);
}

/* flatv of a 3-d kernel on the emulated GPU: K x H x W for W = 4 .. 9 (a row holds a vector; vectors cross
 * row ends at every phase, and plane ends), against a loop; the point after the output is never written. */
static void test_values_3d(void) {
  if (!cg_gpu_flat_nd()) return;
  for (int full = 0; full < 2; full++) {
    KB b;
    heat_kernel(&b, full);
    Emu e;
    if (!emu_build(&e, &b.k) || !e.flatv) {
      CHECK(e.flatv != NULL, "the 3-d flatv entry exists");
      emu_free(&e);
      continue;
    }
    const int grids[3] = {1, 3, 64};
    int runs = 0;
    for (int W = 4; W <= 9; W++)
      for (int H = 1; H <= 5; H += 2)
        for (int K = 1; K <= 3; K++) {
          int n = K * H * W;
          float *a = aligned_alloc(64, 64), *bh = aligned_alloc(64, 64), *c = aligned_alloc(64, 64);
          float *x = aligned_alloc(64, 1024), *o = aligned_alloc(64, 1024);
          for (int i = 0; i < 16; i++) a[i] = (float)i, bh[i] = (float)(i + 1), c[i] = 0.25f * (float)i;
          for (int i = 0; i < n; i++) x[i] = 0.5f * (float)(i % 7);
          for (int gi = 0; gi < 3; gi++) {
            for (int i = 0; i < n + 8; i++) o[i] = -1.0f;
            uint64_t words[48] = {0};
            int nb = full ? 5 : 4;
            words[0] = (uint64_t)K, words[1] = (uint64_t)H, words[2] = (uint64_t)W;
            void *bases[5] = {a, bh, c, o, x};
            for (int bi = 0; bi < nb; bi++) words[3 + bi] = (uint64_t)(uintptr_t)bases[bi];
            int64_t strides[15] = {1, 0, 0, 0, 1, 0, 0, 0, 1, H * W, W, 1, H * W, W, 1};
            for (int i = 0; i < 3 * nb; i++) words[3 + nb + i] = (uint64_t)strides[i];
            words[3 + nb + 3 * nb] = 1; /* extra word 0 */
            launch(&e, e.flatv, grids[gi], words);
            bool ok = true;
            for (int i = 0; i < n && ok; i++) { /* the vectors, then the tail point by point */
              int k = i / (H * W), h = i / W % H, w = i % W;
              float want = a[k] * 1000.0f + bh[h] * 10.0f + c[w] + (full ? x[i] : 0.0f);
              ok = fabsf(o[i] - want) <= 1e-6f * fabsf(want);
              CHECK(ok, "3-d %d x %d x %d (full %d), grid %d: point %d = %g, want %g", K, H, W, full, grids[gi], i, o[i], want);
            }
            CHECK(o[n] == -1.0f, "3-d %d x %d x %d, grid %d: the point after the end was written", K, H, W, grids[gi]);
            runs++;
          }
          free(a), free(bh), free(c), free(x), free(o);
        }
    CHECK(runs == 6 * 3 * 3 * 3, "3-d cases run: %d", runs);
    emu_free(&e);
  }
}

/* ---- the launch policy ----------------------------------------------------------------------------- */
typedef struct Rec {
  int entry, calls;
} Rec;
static uint32_t rec_loaded(void *u) { (void)u; return CG_ENTRY_ALL; }
static LoomStatus rec_need(void *u, uint32_t mask, Diag *d) { (void)u, (void)mask, (void)d; return LOOM_OK; }
static int rec_limit(void *u, int what, int entry) { (void)u, (void)what, (void)entry; return 256; }
static LoomStatus rec_launch(void *u, int entry, uint32_t grid, uint32_t block, uint64_t *words, Diag *d) {
  (void)grid, (void)block, (void)words, (void)d;
  Rec *r = u;
  r->entry = entry, r->calls++;
  return LOOM_OK;
}
static LoomStatus rec_settle(void *u, Diag *d) { (void)u, (void)d; return LOOM_OK; }
enum { P_MAIN = 0, P_VEC = 1, P_VECW = 8, P_FLATV = 9 }; /* gpu_rt.h's E_* */

static int policy_entry(int64_t R, int64_t C, int64_t x_pitch, uint64_t x_skew) {
  KB b;
  norm_kernel(&b);
  Rec r = {.entry = -1};
  RtGpuLauncher L = {.ndim = 2, .nkeep = 2, .nbuf = 4, .bufs = b.bufs, .strategy = CG_GPU_ELEMENTWISE, .block = 256,
                     .entries = CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW | CG_ENTRY_FLATV, .vec_lanes = 4,
                     .vec_align = 16, .wave = 32, .vecw_when_vec_loaded = true, .user = &r, .loaded = rec_loaded,
                     .need = rec_need, .limit = rec_limit, .launch = rec_launch, .settle = rec_settle};
  uint64_t words[32] = {0};
  words[0] = (uint64_t)R, words[1] = (uint64_t)C;
  words[2] = 4096 + x_skew, words[3] = 8192, words[4] = 12288, words[5] = 16384;
  int64_t strides[8] = {x_pitch, 1, 0, 1, 1, 0, C, 1};
  for (int i = 0; i < 8; i++) words[6 + i] = (uint64_t)strides[i];
  Diag d = {0};
  LoomStatus st = rt_gpu_launch_policy(&L, words, R * C, 1, &d);
  CHECK(st == LOOM_OK && r.calls == 1, "one launch (%s)", d.msg);
  return r.entry;
}

static void test_policy(void) {
  const char *knob = getenv("LOOM_GPU_ELEM_FLAT");
  if (knob && *knob) return; /* (the launcher reads the knob) */
  int e = policy_entry(1000, 3, 3, 0);
  CHECK(e == P_FLATV, "rows of 3, C-contiguous: flatv (entry %d)", e);
  e = policy_entry(1000, 3, 4, 0);
  CHECK(e == P_MAIN, "rows of 3 at a pitch of 4: the scalar entry (entry %d)", e);
  e = policy_entry(1000, 3, 3, 2);
  CHECK(e == P_MAIN, "x's base 2 bytes past 16: the scalar entry (entry %d)", e);
  e = policy_entry(1000, 8, 8, 0);
  CHECK(e == P_VECW, "rows of 8: the vector entry (entry %d)", e);
  e = policy_entry(1, 9, 9, 0);
  CHECK(e == P_FLATV, "one row of 9 points: flatv (entry %d)", e);
  e = policy_entry(1, 5, 5, 0);
  CHECK(e == P_MAIN, "5 points, fewer than two vectors: the scalar entry (entry %d)", e);
}

/* The policy for the 3-d kernel (heat_kernel, not full): flatv where rows hold a vector and the output is
 * C-contiguous (out_pitch: its stride along dim 1). */
static int policy_entry_3d(int64_t K, int64_t H, int64_t W, int64_t out_pitch) {
  KB b;
  heat_kernel(&b, false);
  Rec r = {.entry = -1};
  RtGpuLauncher L = {.ndim = 3, .nkeep = 3, .nbuf = 4, .bufs = b.bufs, .strategy = CG_GPU_ELEMENTWISE, .block = 256,
                     .entries = CG_ENTRY_MAIN | CG_ENTRY_VEC | CG_ENTRY_VECW | CG_ENTRY_FLATV, .vec_lanes = 4,
                     .vec_align = 16, .wave = 32, .vecw_when_vec_loaded = true, .user = &r, .loaded = rec_loaded,
                     .need = rec_need, .limit = rec_limit, .launch = rec_launch, .settle = rec_settle};
  uint64_t words[48] = {0};
  words[0] = (uint64_t)K, words[1] = (uint64_t)H, words[2] = (uint64_t)W;
  words[3] = 4096, words[4] = 8192, words[5] = 12288, words[6] = 16384;
  int64_t strides[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, H * out_pitch, out_pitch, 1};
  for (int i = 0; i < 12; i++) words[7 + i] = (uint64_t)strides[i];
  Diag d = {0};
  LoomStatus st = rt_gpu_launch_policy(&L, words, K * H * W, 1, &d);
  CHECK(st == LOOM_OK && r.calls == 1, "one launch (%s)", d.msg);
  return r.entry;
}

static void test_policy_3d(void) {
  const char *knob = getenv("LOOM_GPU_ELEM_FLAT");
  if (knob && *knob) return;
  int e = policy_entry_3d(64, 100, 513, 513);
  CHECK(e == P_FLATV, "3-d, rows of 513, C-contiguous: flatv (entry %d)", e);
  e = policy_entry_3d(64, 100, 513, 516);
  CHECK(e == P_MAIN, "3-d, rows of 513 at a pitch of 516: the scalar entry (entry %d)", e);
  e = policy_entry_3d(64, 100, 3, 3);
  CHECK(e == P_MAIN, "3-d, rows of 3 (shorter than a vector): the scalar entry (entry %d)", e);
  e = policy_entry_3d(64, 100, 512, 512);
  CHECK(e == P_VECW, "3-d, rows of 512: the vector entry (entry %d)", e);
}

int main(void) {
  emu_init();
  test_which_kernels();
  test_values();
  test_values_3d();
  test_policy();
  if (cg_gpu_flat_nd()) test_policy_3d();
  /* the row hoist's switch names itself in the target's description (kernels cached apart) */
  bool hoist = cg_gpu_flat_hoist_on();
  CHECK(hoist == !(getenv("LOOM_GPU_FLAT_HOIST") && strcmp(getenv("LOOM_GPU_FLAT_HOIST"), "0") == 0), "hoist switch");
  CHECK((strstr(cg_gpu_elem_tag(), " hoist0") != NULL) == !hoist, "elem tag '%s'", cg_gpu_elem_tag());
  printf("%s%d passed, %d failed\n", hoist ? "" : "(LOOM_GPU_FLAT_HOIST=0) ", g_pass, g_fail);
  if (!hoist) return g_fail ? 1 : 0;
  bool child_ok = emu_rerun_with("test_gpu_flat", "LOOM_GPU_FLAT_HOIST", "0"); /* the 3-d values lane by lane */
  return g_fail || !child_ok ? 1 : 0;
}
