/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_scan.c: scans (loom_scan) on a CUDA GPU against the host backend, and their PTX.
 *
 * `test_gpu_scan --ptx` (ctest test_gpu_scan_ptx, no GPU needed): the PTX (sm_90) of a row scan (block
 * scan entry with wave butterflies and barriers, and the two entries of a split long-row scan), a
 * column scan (a thread per column, and the two entries of its split) and scans of several dtypes; each module is assembled by the CUDA
 * toolkit's ptxas when one is installed ($CUDA_HOME/bin/ptxas or /usr/local/cuda/bin/ptxas), which
 * checks what LLVM emitted is valid PTX for sm_90.
 * `test_gpu_scan` (no argument; ctest test_gpu_scan, run by scripts/gpu_all.sh): on GPU 0, the same
 * graphs over device copies of the inputs, compared with the host's results: integers exactly, floats
 * within a bound scaled by the running sum of magnitudes (the GPU adds in a tree within blocks); rows
 * short and long (split into parts), columns, non-contiguous inputs, wrap-around, NaN, fusion (one
 * kernel); then the time of a 2^26-element float32 cumsum and of 2^26 elements as 2^16 rows of 1024,
 * printed as GB/s of the bytes a scan must move (read 4, write 4 per element). Exits 77 (skipped)
 * without a CUDA driver or GPU. The look-back scan of few long rows (codegen/lower_scan_lookback.c) has its
 * own cases (lookback_cases, back_to_back); with LOOM_GPU_SCAN_LOOKBACK=0 the same cases run the two-entry
 * split. LOOM_GPU_SCAN_DEVICE=host (ctest test_gpu_scan_host) runs the cases with the host standing in for
 * the GPU (the test's own references); `--emulate` (ctest test_gpu_scan_emulate) runs the look-back
 * protocol with host threads as blocks. LOOM_TEST_SCAN_PTX_DIR=dir keeps --ptx's modules there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/c/test_common.h"

/* The device the cases run on: CUDA, or the host standing in (LOOM_GPU_SCAN_DEVICE=host: the test's own
 * references and checks, on machines without a GPU). */
static LoomDeviceKind g_dev = LOOM_DEVICE_CUDA;

static LoomArray to_device(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = g_dev;
  d.device_index = 0;
  if (loom_array_alloc(tc_ctx, &d) != LOOM_OK) fprintf(stderr, "alloc: %s\n", loom_last_error(tc_ctx));
  if (loom_array_copy(tc_ctx, &d, h) != LOOM_OK) fprintf(stderr, "copy: %s\n", loom_last_error(tc_ctx));
  return d;
}

static uint64_t rng = 424242;

static void fill(LoomArray *a) {
  int64_t n = tc_numel(a->ndim, a->shape);
  for (int64_t i = 0; i < n; i++) {
    double u = tc_rand_unit(&rng);
    if (tc_is_float(a->dtype)) tc_set_f(a, i, u * 4 - 1);
    else if (a->dtype == LOOM_BOOL) tc_set_i(a, i, u < 0.5);
    else tc_set_i(a, i, (I128)(u * 250) - (tc_is_signed(a->dtype) ? 100 : 0));
  }
}

/* scan(op, x [* 2 + 1 when fused], axis, dtype) on host x and on its device copy (x given as a view
 * of `base` with x's shape/strides/offset relative to base's data). */
/* v wrapped to the integer dtype t (two's complement), as NumPy's fixed-width integers do. */
static I128 wrap_to(I128 v, LoomDType t) {
  int bits = (int)loom_dtype_size(t) * 8;
  if (t == LOOM_BOOL || bits >= 128) return v;
  unsigned __int128 m = ((unsigned __int128)1 << bits) - 1, u = (unsigned __int128)v & m;
  if (tc_is_signed(t) && (u >> (bits - 1)) & 1) return (I128)u - ((I128)1 << bits);
  return (I128)u;
}

/* scan(op, x[::step along axis] [* 2 + 1 when fused], axis, dtype) on host x and on its device copy;
 * step > 1 reads a non-contiguous view (a slice in the graph). Besides the host's result, integers are
 * checked against an independent wrapped prefix computed here (NumPy's fixed-width arithmetic). */
static void compare_view(const char *what, const LoomArray *x0, LoomReduceOp op, int axis, LoomDType dtype, bool fused,
                         int step) {
  int ax0 = axis < 0 ? axis + x0->ndim : axis;
  LoomArray xv = *x0; /* the view the scan reads, for the references */
  xv.shape[ax0] = (x0->shape[ax0] + step - 1) / step;
  xv.strides[ax0] *= step;
  const LoomArray *x = &xv;
  LoomArray hres, dres;
  memset(&hres, 0, sizeof hres);
  memset(&dres, 0, sizeof dres);
  for (int dev = 0; dev < 2; dev++) {
    LoomGraph *g;
    if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
    LoomArray in = *x0, dbase;
    if (dev) {
      dbase = to_device(x0);
      in = dbase;
    }
    LoomNode nx, y, two, one;
    CHECK_OK(loom_input(g, &in, &nx));
    if (step > 1) {
      int64_t st[8], sp[8], sk[8];
      for (int d = 0; d < x0->ndim; d++) st[d] = LOOM_SLICE_NONE, sp[d] = LOOM_SLICE_NONE, sk[d] = d == ax0 ? step : 1;
      CHECK_OK(loom_slice(g, nx, st, sp, sk, &nx));
    }
    if (fused) {
      CHECK_OK(loom_const_f64(g, 2.0, x->dtype, &two));
      CHECK_OK(loom_const_f64(g, 1.0, x->dtype, &one));
      CHECK_OK(loom_binary(g, LOOM_OP_MUL, nx, two, &nx));
      CHECK_OK(loom_binary(g, LOOM_OP_ADD, nx, one, &nx));
    }
    CHECK_OK(loom_scan(g, op, nx, axis, dtype, &y));
    LoomArray *r = dev ? &dres : &hres;
    CHECK(tc_eval1(g, y, r) == LOOM_OK, "%s (%s): eval: %s", what, dev ? "gpu" : "host", loom_last_error(tc_ctx));
    if (dev && fused) {
      LoomStats s;
      loom_get_stats(tc_ctx, &s);
      CHECK(s.last_eval_kernels >= 1 && s.last_eval_kernels <= 1, "%s: %llu kernels on the GPU, want 1", what,
            (unsigned long long)s.last_eval_kernels);
    }
    loom_graph_destroy(g);
    if (dev) loom_array_free(tc_ctx, &dbase);
  }
  if (!hres.data || !dres.data) return;
  LoomArray back = hres;
  back.data = malloc((size_t)tc_numel(hres.ndim, hres.shape) * loom_dtype_size(hres.dtype) + 1);
  CHECK_OK(loom_array_copy(tc_ctx, &back, &dres));
  int64_t n = tc_numel(hres.ndim, hres.shape), inner = 1;
  int ax = axis < 0 ? axis + x->ndim : axis;
  for (int d = ax + 1; d < x->ndim; d++) inner *= x->shape[d];
  double *mag = malloc(sizeof(double) * (size_t)(n ? n : 1)), *exact = malloc(sizeof(double) * (size_t)(n ? n : 1));
  /* float32/float64 sums: the host adds in sequence (NumPy's bits), the GPU in a tree; both are within a
   * rounding-error bound of the exact prefix sum, which grows with the position along the axis (a
   * random-walk bound, sqrt(k) units, with a margin), so the GPU is compared with the float64 prefix */
  double unit = hres.dtype == LOOM_FLOAT32 ? 0x1p-24 : 0x1p-53;
  bool vs_exact = op == LOOM_REDUCE_SUM && (hres.dtype == LOOM_FLOAT32 || hres.dtype == LOOM_FLOAT64);
  int bad = 0, badi = 0;
  /* the independent integer prefix (not fused: the fused map is in the input's dtype), per point */
  bool int_ref = !tc_is_float(hres.dtype) && !fused && x->dtype != LOOM_FLOAT16 && !tc_is_float(x->dtype);
  I128 *iref = int_ref ? malloc(sizeof(I128) * (size_t)(n ? n : 1)) : NULL;
  int_ref = int_ref && iref;
  double eps = hres.dtype == LOOM_FLOAT16 ? 2e-3 : hres.dtype == LOOM_FLOAT32 ? 2e-6 : 1e-14;
  for (int64_t i = 0; i < n; i++) {
    double ax_i = fabs(tc_get_f(x, i)) * (fused ? 2 : 1) + (fused ? 1 : 0);
    bool first = (i / inner) % x->shape[ax] == 0;
    mag[i] = first ? ax_i : mag[i - inner] + ax_i;
    double xi = tc_get_f(x, i) * (fused ? 2 : 1) + (fused ? 1 : 0);
    exact[i] = first ? xi : exact[i - inner] + xi;
    double h = tc_get_f(&hres, i), v = tc_get_f(&back, i);
    bool ok;
    if (!tc_is_float(hres.dtype)) ok = tc_get_i(&hres, i) == tc_get_i(&back, i);
    else if (vs_exact && !isnan(h) && !isinf(h))
      ok = h == v || fabs(v - exact[i]) <= (32 * sqrt((double)((i / inner) % x->shape[ax] + 1)) * unit + 16 * eps) *
                                               (mag[i] + 1);
    else if (op == LOOM_REDUCE_PROD) ok = (isnan(h) && isnan(v)) || fabs(h - v) <= 64 * eps * fabs(h) + 1e-300;
    else ok = (isnan(h) && isnan(v)) || h == v || fabs(h - v) <= 16 * eps * (mag[i] + 1);
    if (!ok && bad++ < 3) CHECK(false, "%s: [%lld] gpu %.17g, host %.17g", what, (long long)i, v, h);
    if (int_ref) {
      I128 xi_i = wrap_to(tc_get_i(x, i), hres.dtype), prev = first ? 0 : iref[i - inner], r = 0;
      if (op == LOOM_REDUCE_SUM) r = wrap_to(first ? xi_i : prev + xi_i, hres.dtype);
      else if (op == LOOM_REDUCE_PROD) r = wrap_to(first ? xi_i : (I128)((unsigned __int128)prev * (unsigned __int128)xi_i), hres.dtype);
      else if (op == LOOM_REDUCE_MAX) r = first || xi_i > prev ? xi_i : prev;
      else if (op == LOOM_REDUCE_MIN) r = first || xi_i < prev ? xi_i : prev;
      else int_ref = false;
      iref[i] = r;
      if (int_ref && tc_get_i(&back, i) != r && badi++ < 3)
        CHECK(false, "%s: [%lld] gpu %lld, the wrapped prefix %lld", what, (long long)i, (long long)tc_get_i(&back, i),
              (long long)r);
    }
  }
  CHECK(bad == 0 && badi == 0, "%s: %d of %lld elements differ from the host, %d from the wrapped prefix", what, bad,
        (long long)n, badi);
  free(mag);
  free(exact);
  free(iref);
  free(back.data);
  loom_array_free(tc_ctx, &hres);
  loom_array_free(tc_ctx, &dres);
}

static void compare(const char *what, const LoomArray *x, LoomReduceOp op, int axis, LoomDType dtype, bool fused) {
  compare_view(what, x, op, axis, dtype, fused, 1);
}

/* The single-pass look-back scan (codegen/lower_scan_lookback.c; tiles of LB_TILE points, half that for
 * complex128; the launcher takes it for fewer than 512 rows of at least two tiles): rows around tile
 * boundaries, every dtype, wrap-around against the wrapped prefix, NaN, strided views, fused producers,
 * several long rows. Float sums are checked against the float64 prefix: a point's value is reached
 * through at most 15 k / LB_TILE + 72 roundings (15 in the thread, 13 in the tile's tree, the look-back's
 * folds, 15 per earlier tile along the chain of inclusive prefixes, the aggregates' trees), each within a
 * unit of the running magnitude, which compare's 32 sqrt(k) units bound covers for k <= 8.7e7 (2^26 is
 * 6.7e7; tests/python/test_gpu_scan_lookback.py checks the linear bound itself). */
enum { LB_TILE = 256 * 16 }; /* codegen.h: CG_SCAN_LB_BLOCK threads x CG_SCAN_LB_ITEMS points */
static void lookback_cases(void) {
  struct { LoomDType t; int nd; int64_t shape[2]; LoomReduceOp op; LoomDType dt; bool fused; int step; int fill; const char *what; } cs[] = {
      {LOOM_FLOAT32, 1, {2 * LB_TILE - 1}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 2 tiles less a point"},
      {LOOM_FLOAT32, 1, {2 * LB_TILE}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 2 tiles"},
      {LOOM_FLOAT32, 1, {2 * LB_TILE + 1}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 2 tiles and a point"},
      {LOOM_FLOAT32, 1, {3 * LB_TILE + 1}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, true, 1, 0, "lb f32 3 tiles and a point, fused"},
      {LOOM_FLOAT32, 1, {(1 << 20) + 3}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 2^20+3"},
      {LOOM_FLOAT32, 1, {(int64_t)1 << 26}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 2^26"},
      {LOOM_FLOAT32, 1, {(1 << 20) + 3}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, true, 1, 0, "lb f32 cumsum(x*2+1)"},
      {LOOM_FLOAT32, 1, {(1 << 21) + 7}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 2, 0, "lb f32 x[::2]"},
      {LOOM_INT32, 1, {300001}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 3, 0, "lb i32 x[::3] -> i64"},
      {LOOM_FLOAT32, 1, {(1 << 20) + 3}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 1, "lb f32 cumsum with a NaN"},
      {LOOM_FLOAT32, 1, {(1 << 20) + 3}, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 cummax with a NaN"},
      {LOOM_FLOAT64, 2, {5, 100003}, LOOM_REDUCE_MIN, LOOM_DTYPE_COUNT, false, 1, 0, "lb f64 cummin rows"},
      {LOOM_FLOAT32, 1, {300007}, LOOM_REDUCE_PROD, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 cumprod"},
      {LOOM_FLOAT64, 1, {(1 << 20) + 5}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, true, 1, 0, "lb f64 fused"},
      {LOOM_INT32, 1, {(1 << 20) + 3}, LOOM_REDUCE_SUM, LOOM_INT32, false, 1, 2, "lb i32 dtype=int32 overflow wraps"},
      {LOOM_INT8, 1, {200003}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb i8 -> i64"},
      {LOOM_UINT8, 1, {200003}, LOOM_REDUCE_SUM, LOOM_UINT8, false, 1, 0, "lb u8 dtype=uint8 wraps"},
      {LOOM_INT16, 1, {100003}, LOOM_REDUCE_SUM, LOOM_INT16, false, 1, 0, "lb i16 dtype=int16 wraps"},
      {LOOM_UINT32, 1, {100003}, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, 1, 0, "lb u32 cummax"},
      {LOOM_INT64, 2, {2, 70000}, LOOM_REDUCE_PROD, LOOM_DTYPE_COUNT, false, 1, 0, "lb i64 cumprod wraps, 2 rows"},
      {LOOM_UINT64, 1, {100003}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb u64"},
      {LOOM_BOOL, 1, {200001}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb bool count"},
      {LOOM_BOOL, 1, {200001}, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, 1, 0, "lb bool cummax (any so far)"},
      {LOOM_FLOAT16, 1, {100003}, LOOM_REDUCE_SUM, LOOM_FLOAT32, false, 1, 0, "lb f16 dtype=f32"},
      {LOOM_FLOAT16, 1, {100003}, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, 1, 0, "lb f16 cummax"},
      {LOOM_BFLOAT16, 1, {100003}, LOOM_REDUCE_MIN, LOOM_DTYPE_COUNT, false, 1, 0, "lb bf16 cummin"},
      {LOOM_COMPLEX64, 1, {100003}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb complex64 (real parts)"},
      {LOOM_COMPLEX128, 1, {100003}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb complex128, half-size tiles"},
      {LOOM_FLOAT32, 2, {4, 1 << 20}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 4 rows of 2^20"},
      {LOOM_INT32, 2, {3, (1 << 20) + 1}, LOOM_REDUCE_SUM, LOOM_INT32, true, 1, 0, "lb i32 3 rows of 2^20+1, fused"},
      {LOOM_FLOAT32, 2, {511, 2 * LB_TILE + 4}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "lb f32 511 rows of 2 tiles+4"},
      {LOOM_FLOAT32, 1, {0}, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, 1, 0, "empty"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    if (g_dev == LOOM_DEVICE_HOST && tc_numel(cs[i].nd, cs[i].shape) > (1 << 22)) continue; /* host stand-in: < 1 GB */
    LoomArray h = tc_new(cs[i].t, cs[i].nd, cs[i].shape);
    fill(&h);
    int64_t n = tc_numel(h.ndim, h.shape);
    if (cs[i].op == LOOM_REDUCE_PROD && tc_is_float(cs[i].t))
      for (int64_t j = 0; j < n; j++) tc_set_f(&h, j, 0.99 + 0.02 * tc_rand_unit(&rng));
    if (cs[i].op == LOOM_REDUCE_PROD && !tc_is_float(cs[i].t)) /* odd factors: the wrapped product never turns 0 */
      for (int64_t j = 0; j < n; j++) tc_set_i(&h, j, 2 * (int64_t)(tc_rand_unit(&rng) * 1000) + 1);
    if ((cs[i].op == LOOM_REDUCE_MAX || cs[i].fill == 1) && tc_is_float(cs[i].t) && n > 5000) tc_set_f(&h, 4099, NAN);
    if (cs[i].fill == 2) /* near INT32_MAX: the int32 sum overflows every few points */
      for (int64_t j = 0; j < n; j++) tc_set_i(&h, j, (int64_t)((tc_rand_unit(&rng) * 2 - 1) * 2147483647.0));
    compare_view(cs[i].what, &h, cs[i].op, cs[i].nd - 1, cs[i].dt, cs[i].fused, cs[i].step);
    tc_free(&h);
  }
}

/* Two scans back to back on the stream, the second reading the first (each starts from a zeroed ticket
 * counter and status array: a stale one would hang or give wrong prefixes), and a fused consumer:
 * y1 = cumsum(x) * 2 + 1, y2 = cummax(cumsum(x)), against float64 references. */
static void back_to_back(void) {
  int64_t n = 3 * (1 << 20) + 5;
  LoomArray h = tc_new1(LOOM_FLOAT32, n);
  fill(&h);
  LoomArray x = to_device(&h);
  LoomGraph *g;
  if (!CHECK_OK(loom_graph_create(tc_ctx, &g))) return;
  LoomNode nx, s, two, one, y1, y2;
  CHECK_OK(loom_input(g, &x, &nx));
  CHECK_OK(loom_scan(g, LOOM_REDUCE_SUM, nx, 0, LOOM_DTYPE_COUNT, &s));
  CHECK_OK(loom_const_f64(g, 2.0, LOOM_FLOAT32, &two));
  CHECK_OK(loom_const_f64(g, 1.0, LOOM_FLOAT32, &one));
  CHECK_OK(loom_binary(g, LOOM_OP_MUL, s, two, &y1));
  CHECK_OK(loom_binary(g, LOOM_OP_ADD, y1, one, &y1));
  CHECK_OK(loom_scan(g, LOOM_REDUCE_MAX, s, 0, LOOM_DTYPE_COUNT, &y2));
  LoomNode outs[2] = {y1, y2};
  LoomArray r[2];
  memset(r, 0, sizeof r);
  for (int rep = 0; rep < 3; rep++) { /* replays of the same graph too */
    for (int k = 0; k < 2; k++) loom_array_free(tc_ctx, &r[k]);
    memset(r, 0, sizeof r);
    CHECK(loom_eval(g, 2, outs, r) == LOOM_OK, "back to back: eval: %s", loom_last_error(tc_ctx));
  }
  LoomArray b1 = h, b2 = h;
  b1.data = malloc((size_t)n * 4);
  b2.data = malloc((size_t)n * 4);
  CHECK_OK(loom_array_copy(tc_ctx, &b1, &r[0]));
  CHECK_OK(loom_array_copy(tc_ctx, &b2, &r[1]));
  double ex = 0, mag = 0, mx = -INFINITY;
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double xi = tc_get_f(&h, i);
    ex += xi;
    mag += fabs(xi);
    mx = ex > mx ? ex : mx;
    double tol = (32 * sqrt((double)i + 1) * 0x1p-24 + 32e-6) * (mag + 1);
    bool ok = fabs(tc_get_f(&b1, i) - (2 * ex + 1)) <= 2 * tol + 1e-6 * fabs(2 * ex + 1) && fabs(tc_get_f(&b2, i) - mx) <= tol;
    if (!ok && bad++ < 3)
      CHECK(false, "back to back: [%lld] 2*cumsum+1 %.9g (want %.9g), cummax(cumsum) %.9g (want %.9g)", (long long)i,
            tc_get_f(&b1, i), 2 * ex + 1, tc_get_f(&b2, i), mx);
  }
  CHECK(bad == 0, "back to back: %d of %lld points differ", bad, (long long)n);
  free(b1.data);
  free(b2.data);
  for (int k = 0; k < 2; k++) loom_array_free(tc_ctx, &r[k]);
  loom_graph_destroy(g);
  loom_array_free(tc_ctx, &x);
  tc_free(&h);
}

static void gpu_cases(void) {
  struct { LoomDType t; int nd; int64_t shape[3]; int axis; LoomReduceOp op; LoomDType dt; bool fused; const char *what; } cs[] = {
      {LOOM_FLOAT32, 1, {1003}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "f32 short row"},
      {LOOM_FLOAT32, 1, {3000017}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "f32 long row (split into parts)"},
      {LOOM_FLOAT64, 1, {1 << 22}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, true, "f64 long row, fused 2x+1"},
      {LOOM_INT32, 2, {4096, 1000}, 1, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "i32 rows -> i64"},
      {LOOM_INT32, 2, {1000, 4096}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "i32 columns (COL)"},
      {LOOM_INT8, 1, {100000}, 0, LOOM_REDUCE_SUM, LOOM_INT8, false, "i8 dtype=int8 wraps"},
      {LOOM_INT64, 2, {3, 70000}, 1, LOOM_REDUCE_PROD, LOOM_DTYPE_COUNT, false, "i64 prod wraps, split rows"},
      {LOOM_UINT16, 3, {5, 300, 7}, 1, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "u16 middle axis"},
      {LOOM_FLOAT16, 2, {64, 513}, 1, LOOM_REDUCE_SUM, LOOM_FLOAT32, false, "f16 rows, dtype=f32"},
      {LOOM_FLOAT32, 2, {200, 333}, 1, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, "f32 cummax rows"},
      {LOOM_FLOAT64, 2, {777, 300}, 0, LOOM_REDUCE_MIN, LOOM_DTYPE_COUNT, false, "f64 cummin columns"},
      {LOOM_FLOAT32, 2, {10, 4000}, 1, LOOM_REDUCE_PROD, LOOM_DTYPE_COUNT, false, "f32 prod rows"},
      {LOOM_BOOL, 1, {70001}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "bool count"},
      {LOOM_FLOAT32, 1, {1}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "length 1"},
      /* around the row scan's groups of 4 (LOOM_GPU_SCAN_CHUNKS: up to 8) chunks of a block of 256
       * (codegen/lower_scan.c row_group): whole groups, one point over, one short, several groups and a
       * partial one, rows of them, parts of split rows */
      {LOOM_FLOAT32, 1, {2048}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "f32 one group of chunks"},
      {LOOM_FLOAT32, 1, {2049}, 0, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "f32 a group and a point"},
      {LOOM_INT32, 1, {2047}, 0, LOOM_REDUCE_SUM, LOOM_INT32, false, "i32 a group less a point"},
      {LOOM_INT64, 2, {7, 6401}, 1, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, false, "i64 rows of 3 groups and 257 points"},
      {LOOM_FLOAT64, 2, {33, 1793}, 1, LOOM_REDUCE_SUM, LOOM_DTYPE_COUNT, true, "f64 rows of 7 chunks, fused"},
      {LOOM_INT32, 1, {196611}, 0, LOOM_REDUCE_SUM, LOOM_INT32, false, "i32 split row, parts not on groups"},
      {LOOM_FLOAT32, 2, {300, 4100}, 1, LOOM_REDUCE_MAX, LOOM_DTYPE_COUNT, false, "f32 cummax rows over groups"},
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    LoomArray h = tc_new(cs[i].t, cs[i].nd, cs[i].shape);
    fill(&h);
    if (cs[i].op == LOOM_REDUCE_PROD && tc_is_float(cs[i].t)) /* near 1 */
      for (int64_t j = 0; j < tc_numel(h.ndim, h.shape); j++) tc_set_f(&h, j, 0.99 + 0.02 * tc_rand_unit(&rng));
    if (cs[i].op == LOOM_REDUCE_MAX) tc_set_f(&h, 777, NAN);
    compare(cs[i].what, &h, cs[i].op, cs[i].axis, cs[i].dt, cs[i].fused);
    tc_free(&h);
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Times cumsum of a float32 device array of `shape` along the last axis into a preallocated output. */
static void bench(const char *what, int nd, const int64_t *shape) {
  LoomArray h = tc_new(LOOM_FLOAT32, nd, shape);
  fill(&h);
  LoomArray x = to_device(&h), out = h;
  out.data = NULL;
  out.device = LOOM_DEVICE_CUDA;
  loom_array_alloc(tc_ctx, &out);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode nx, y;
  loom_input(g, &x, &nx);
  loom_scan(g, LOOM_REDUCE_SUM, nx, -1, LOOM_DTYPE_COUNT, &y);
  CHECK_OK(loom_eval(g, 1, &y, &out)); /* compile */
  loom_device_synchronize(tc_ctx, LOOM_DEVICE_CUDA, 0);
  int reps = 20;
  double t0 = now_ms();
  for (int i = 0; i < reps; i++) loom_eval(g, 1, &y, &out);
  loom_device_synchronize(tc_ctx, LOOM_DEVICE_CUDA, 0);
  double ms = (now_ms() - t0) / reps;
  double bytes = 8.0 * (double)tc_numel(nd, shape);
  printf("test_gpu_scan: %s: %.3f ms, %.0f GB/s of the 8 bytes per element a scan moves (H200: 4800)\n", what, ms,
         bytes / ms / 1e6);
  loom_graph_destroy(g);
  loom_array_free(tc_ctx, &x);
  loom_array_free(tc_ctx, &out);
  tc_free(&h);
}

/* ---- PTX (no GPU) ------------------------------------------------------------------------------------ */
static const char *ptxas_path(void) {
  static char buf[512];
  const char *home = getenv("CUDA_HOME");
  snprintf(buf, sizeof buf, "%s/bin/ptxas", home && *home ? home : "/usr/local/cuda");
  return access(buf, X_OK) == 0 ? buf : NULL;
}

/* Dumps the PTX of scan(op, x, axis) for x of the given dtype/shape/strides, checks the entries it must
 * have, and assembles it with ptxas when there is one. */
static void ptx_case(const char *what, LoomDType t, int nd, const int64_t *shape, int axis, LoomReduceOp op,
                     const char *const *must, int nmust) {
  LoomArray h = tc_new(t, nd, shape);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode nx, y;
  CHECK_OK(loom_input(g, &h, &nx));
  CHECK_OK(loom_scan(g, op, nx, axis, LOOM_DTYPE_COUNT, &y));
  char *text = NULL;
  LoomStatus st = loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text);
  if (CHECK(st == LOOM_OK && text, "%s: PTX dump: %s", what, loom_last_error(tc_ctx))) {
    for (int i = 0; i < nmust; i++) CHECK(strstr(text, must[i]) != NULL, "%s: the PTX has no '%s'", what, must[i]);
    const char *px = ptxas_path();
    if (px) {
      /* the dump is one module per kernel, each from its ".version" line */
      const char *p = strstr(text, ".version");
      int mods = 0;
      while (p) {
        const char *next = strstr(p + 8, ".version");
        char path[] = "/tmp/loom_scan_ptx_XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0) {
          size_t len = next ? (size_t)(next - p) : strlen(p);
          CHECK(write(fd, p, len) == (ssize_t)len, "write");
          close(fd);
          char cmd[1200];
          const char *verbose = getenv("LOOM_TEST_PTXAS_VERBOSE"); /* set: ptxas -v (registers, spills) */
          snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90 %s-o /dev/null '%s' 2>&1", px, verbose && *verbose ? "-v " : "", path);
          int rc = system(cmd);
          CHECK(rc == 0, "%s: ptxas rejects module %d (exit %d)", what, mods, rc);
          const char *keep = getenv("LOOM_TEST_SCAN_PTX_DIR"); /* set: the modules are kept there */
          char kept[1024];
          snprintf(kept, sizeof kept, "%s/%s.%d.ptx", keep ? keep : "", what, mods);
          for (char *c = kept + (keep ? strlen(keep) + 1 : 0); *c; c++)
            if (*c == ' ' || *c == '/' || *c == '>' || *c == '(' || *c == ')') *c = '_';
          if (!keep || rename(path, kept) != 0) unlink(path);
        }
        mods++;
        p = next;
      }
      CHECK(mods >= 1, "%s: no module in the PTX dump", what);
    }
    loom_free_string(tc_ctx, text);
  }
  loom_graph_destroy(g);
  tc_free(&h);
}

/* A float16 row scan rounds every partial of its tree to float16 (butterfly levels, wave totals, the
 * value and the carry), not only the stored value: count the float32 -> float16 conversions of the row
 * entry's PTX (5 butterfly levels of 3 combines on a 32-lane wave, 2 wave-total folds, the value). */
static void f16_rounding_case(void) {
  int64_t s[2] = {100, 7};
  LoomArray h = tc_new(LOOM_FLOAT16, 2, s);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode nx, y;
  CHECK_OK(loom_input(g, &h, &nx));
  CHECK_OK(loom_scan(g, LOOM_REDUCE_SUM, nx, 1, LOOM_DTYPE_COUNT, &y));
  char *text = NULL;
  if (CHECK(loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text) == LOOM_OK && text, "f16 scan: PTX dump: %s", loom_last_error(tc_ctx))) {
    const char *row = strstr(text, "_row(");
    const char *end = row ? strstr(row, ".entry") : NULL; /* the next entry, if any */
    int n = 0;
    for (const char *p = row; p && (p = strstr(p, "cvt.rn.f16.f32")) && (!end || p < end); p++) n++;
    CHECK(row && n >= 18, "f16 row scan: %d float16 roundings in the row entry, want >= 18 (every partial)", n);
    loom_free_string(tc_ctx, text);
  }
  loom_graph_destroy(g);
  tc_free(&h);
}

/* A PTX dump that must not hold `absent` (the look-back scan kernel has no `part` entry). */
static void ptx_lacks(const char *what, LoomDType t, int64_t n, const char *absent) {
  LoomArray h = tc_new1(t, n);
  LoomGraph *g;
  loom_graph_create(tc_ctx, &g);
  LoomNode nx, y;
  CHECK_OK(loom_input(g, &h, &nx));
  CHECK_OK(loom_scan(g, LOOM_REDUCE_SUM, nx, 0, LOOM_DTYPE_COUNT, &y));
  char *text = NULL;
  if (CHECK(loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text) == LOOM_OK && text, "%s: PTX dump: %s", what, loom_last_error(tc_ctx))) {
    CHECK(strstr(text, absent) == NULL, "%s: the PTX has '%s'", what, absent);
    loom_free_string(tc_ctx, text);
  }
  loom_graph_destroy(g);
  tc_free(&h);
}

static void ptx_cases(void) {
  f16_rounding_case();
  /* LOOM_GPU_SCAN_LOOKBACK=0 (ctest test_gpu_scan_ptx_split): the two-entry split of long rows; else the
   * look-back `scanp` (a ticket counter, ballots over status words; wide values behind fences) */
  const char *lbenv = getenv("LOOM_GPU_SCAN_LOOKBACK");
  bool lookback = !(lbenv && !strcmp(lbenv, "0"));
  const char *split_row[] = {"_row(", "_part(", "_scanp(", "bar.sync", "shfl.sync.bfly"};
  const char *lb_row[] = {"_row(", "_scanp(", "bar.sync", "shfl.sync.bfly", "atom.global.add.u32", "vote.sync.ballot"};
  const char *const *row = lookback ? lb_row : split_row;
  if (lookback) {
    ptx_lacks("f32 look-back scan kernel", LOOM_FLOAT32, 1 << 20, "_part(");
    const char *wide[] = {"_scanp(", "fence.acq_rel.gpu", "ld.volatile.global.u32", "vote.sync.ballot"};
    int64_t sw[1] = {1 << 20};
    ptx_case("f64 look-back scan: value, fence, flag", LOOM_FLOAT64, 1, sw, 0, LOOM_REDUCE_SUM, wide, 4);
    const char *packed[] = {"_scanp(", "ld.volatile.global.u64", "st.volatile.global.u64"};
    ptx_case("f32 look-back scan: packed status words", LOOM_FLOAT32, 1, sw, 0, LOOM_REDUCE_MAX, packed, 3);
    int64_t s128[1] = {1 << 16};
    ptx_case("complex128 look-back scan (1024-point tiles)", LOOM_COMPLEX128, 1, s128, 0, LOOM_REDUCE_SUM, wide, 4);
  }
  const char *col[] = {"_col(", "_part(", "_scanp("}; /* few columns: the split (lower_scan.c) */
  int64_t s1[1] = {1 << 20}, s2[2] = {4096, 512}, s3[2] = {100, 7};
  ptx_case("f32 row scan", LOOM_FLOAT32, 1, s1, 0, LOOM_REDUCE_SUM, row, 5);
  ptx_case("f64 column scan", LOOM_FLOAT64, 2, s2, 0, LOOM_REDUCE_SUM, col, 3);
  ptx_case("i8 -> i64 row scan", LOOM_INT8, 2, s2, 1, LOOM_REDUCE_SUM, row, 5);
  ptx_case("f16 row scan (rounded partials)", LOOM_FLOAT16, 2, s3, 1, LOOM_REDUCE_SUM, row, 3);
  ptx_case("u32 cummax rows", LOOM_UINT32, 2, s3, 1, LOOM_REDUCE_MAX, row, 3);
  ptx_case("f32 cumprod columns", LOOM_FLOAT32, 2, s2, 0, LOOM_REDUCE_PROD, col, 3);
  LoomArray c = tc_new1(LOOM_COMPLEX64, 1000);
  tc_free(&c);
  int64_t sc[1] = {5000};
  ptx_case("complex64 row scan", LOOM_COMPLEX64, 1, sc, 0, LOOM_REDUCE_SUM, row, 3);
  if (!ptxas_path()) printf("test_gpu_scan --ptx: no ptxas found (CUDA_HOME, /usr/local/cuda): PTX not assembled\n");
}

/* ---- the look-back protocol emulated on the host (--emulate) ---------------------------------------------
 * codegen/lower_scan_lookback.c's protocol with host threads as blocks: tickets from an atomic counter,
 * tile (o, part) = ticket (part * no + o), packed 64-bit status words (flag << 32 | 32-bit value), the
 * aggregate published first (the inclusive prefix at once for a row's first tile), the look-back over
 * windows of 32 "lanes" (spin while any status is empty, the nearest inclusive one and the aggregates after
 * it folded, lanes before the row counting as inclusive identities), then the inclusive prefix. Random
 * yields shuffle the timing; uint32 sums (wrap-around) are checked against the sequential prefix. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

typedef struct Emu {
  int64_t no, nr, np, tile;
  const uint32_t *x;
  uint32_t *y;
  atomic_uint counter;
  _Atomic uint64_t *status;
  uint64_t seed;
} Emu;

static void emu_yield(uint64_t *r) {
  double u = tc_rand_unit(r);
  if (u < 0.02) usleep(200); /* a stalled block: later tiles look back over its aggregate-only window */
  else if (u < 0.3) sched_yield();
}

static void *emu_block(void *arg) {
  Emu *e = arg;
  uint64_t r = e->seed ^ (uint64_t)(uintptr_t)pthread_self();
  for (;;) {
    uint32_t t = atomic_fetch_add(&e->counter, 1);
    if ((int64_t)t >= e->no * e->np) break;
    int64_t o = t % e->no, part = t / e->no, lo = part * e->tile;
    int64_t len = e->nr - lo < e->tile ? e->nr - lo : e->tile;
    const uint32_t *x = e->x + o * e->nr + lo;
    uint32_t agg = 0;
    for (int64_t i = 0; i < len; i++) agg += x[i];
    emu_yield(&r);
    atomic_store_explicit(&e->status[t], (uint64_t)(part ? 1 : 2) << 32 | agg, memory_order_relaxed);
    emu_yield(&r);
    uint32_t ex = 0;
    for (int64_t hi = part; part > 0;) { /* the windows of wave 0 */
      uint64_t w[32];
      bool empty;
      do {
        empty = false;
        for (int l = 0; l < 32; l++) {
          int64_t q = hi - 32 + l;
          w[l] = q < 0 ? (uint64_t)2 << 32 : atomic_load_explicit(&e->status[q * e->no + o], memory_order_relaxed);
          empty |= (w[l] >> 32) == 0;
        }
        if (empty) emu_yield(&r);
      } while (empty);
      int h = -1;
      for (int l = 0; l < 32; l++)
        if ((w[l] >> 32) == 2) h = l;
      uint32_t fold = 0;
      for (int l = h < 0 ? 0 : h; l < 32; l++) fold += (uint32_t)w[l];
      ex = fold + ex;
      if (h >= 0) break;
      hi -= 32;
    }
    if (part) atomic_store_explicit(&e->status[t], (uint64_t)2 << 32 | (uint32_t)(ex + agg), memory_order_relaxed);
    uint32_t run = ex;
    for (int64_t i = 0; i < len; i++) e->y[o * e->nr + lo + i] = run += x[i];
  }
  return NULL;
}

static void emulate_cases(void) {
  const int64_t cases[][3] = {{1, 1, 64}, {1, 4095, 64}, {1, 4096, 64}, {1, 200003, 64}, {3, 100001, 64},
                              {5, 64 * 70 + 1, 64}, {2, 1 << 20, 2048}, {511, 4100, 2048}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Emu e = {.no = cases[c][0], .nr = cases[c][1], .tile = cases[c][2], .seed = 77 + c};
    e.np = (e.nr + e.tile - 1) / e.tile;
    int64_t n = e.no * e.nr;
    uint32_t *x = malloc((size_t)n * 4), *y = calloc((size_t)n, 4);
    e.status = calloc((size_t)(e.no * e.np), sizeof *e.status);
    for (int64_t i = 0; i < n; i++) x[i] = (uint32_t)(tc_rand_unit(&rng) * 4294967295.0);
    e.x = x;
    e.y = y;
    atomic_init(&e.counter, 0);
    pthread_t th[8];
    for (int i = 0; i < 8; i++) pthread_create(&th[i], NULL, emu_block, &e);
    for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
    int64_t bad = 0;
    for (int64_t o = 0; o < e.no; o++) {
      uint32_t run = 0;
      for (int64_t i = 0; i < e.nr; i++) bad += y[o * e.nr + i] != (run += x[o * e.nr + i]);
    }
    CHECK(bad == 0, "emulated look-back: %lld rows of %lld, tiles of %lld: %lld points differ", (long long)e.no,
          (long long)e.nr, (long long)e.tile, (long long)bad);
    free(x);
    free(y);
    free(e.status);
  }
}

int main(int argc, char **argv) {
  bool ptx_only = argc == 2 && !strcmp(argv[1], "--ptx");
  if (argc == 2 && !strcmp(argv[1], "--emulate")) {
    if (!tc_init()) return 1;
    emulate_cases();
    return tc_finish();
  }
  char dir[] = "/tmp/loom_test_gpu_scan_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("LOOM_CACHE_DIR", dir, 1);
  if (!tc_init()) return 1;
  if (ptx_only) {
    ptx_cases();
    int rc = tc_finish();
    rmdir(dir);
    return rc;
  }
  const char *devenv = getenv("LOOM_GPU_SCAN_DEVICE");
  if (devenv && !strcmp(devenv, "host")) { /* the cases with the host standing in for the GPU */
    g_dev = LOOM_DEVICE_HOST;
    gpu_cases();
    lookback_cases();
    back_to_back();
    int rc = tc_finish();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    return rc;
  }
  int32_t ndev = 0;
  if (loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev) != LOOM_OK || ndev == 0) {
    printf("test_gpu_scan: skipped (no CUDA driver or device: %s)\n", loom_last_error(tc_ctx));
    loom_context_destroy(tc_ctx);
    rmdir(dir);
    return 77;
  }
  gpu_cases();
  lookback_cases();
  back_to_back();
  int64_t one[1] = {INT64_C(1) << 26}, rows[2] = {1 << 16, 1024};
  bench("cumsum of 2^26 float32 (one row, split into parts)", 1, one);
  bench("cumsum of 2^16 rows of 1024 float32", 2, rows);
  int rc = tc_finish();
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) rc = rc ? rc : 1;
  return rc;
}
