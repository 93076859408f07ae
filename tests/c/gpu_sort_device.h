/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_sort_device.h (test_gpu_sort.c's GPU part): loom_sort and loom_take_rows on a real GPU (CUDA, or
 * HIP with LOOM_TEST_GPU=hip) against the host reference sort; then timings. */

static LoomDeviceKind dev_kind;

static LoomArray host_array(LoomDType t, int64_t rows, int64_t n, bool two_d) {
  int64_t s2[2] = {rows, n}, s1[1] = {rows * n};
  return two_d ? tc_new(t, 2, s2) : tc_new(t, 1, s1);
}
static LoomArray to_dev(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = dev_kind;
  d.device_index = 0;
  CHECK_OK(loom_array_alloc(tc_ctx, &d));
  CHECK_OK(loom_array_copy(tc_ctx, &d, h));
  return d;
}
static LoomArray to_host(const LoomArray *d) {
  LoomArray h = tc_new(d->dtype, d->ndim, d->shape);
  CHECK_OK(loom_array_copy(tc_ctx, &h, d));
  return h;
}

/* One device sort: argsort (flag INDEX), or with values vb (4 or 8 bytes: the position, as int32 /
 * int64 values made on the host), checked against the reference. */
static void device_one(LoomDType t, int64_t rows, int64_t n, int kind, bool desc, int vb) {
  bool two_d = rows > 1;
  LoomArray hk = host_array(t, rows, n, two_d);
  int64_t total = rows * n;
  fill_rows(t, hk.data, rows, n, kind);
  LoomArray dk = to_dev(&hk), hv = {0}, dv = {0};
  if (vb) {
    hv = host_array(vb == 4 ? LOOM_INT32 : LOOM_INT64, rows, n, two_d);
    for (int64_t i = 0; i < total; i++) {
      int64_t pos = i % (n ? n : 1);
      if (vb == 4) ((int32_t *)hv.data)[i] = (int32_t)pos;
      else ((int64_t *)hv.data)[i] = pos;
    }
    dv = to_dev(&hv);
  }
  LoomArray sk, sv;
  int32_t flags = (desc ? LOOM_SORT_DESCENDING : 0) | (vb ? 0 : LOOM_SORT_INDEX);
  char what[128];
  snprintf(what, sizeof what, "%s %lldx%lld kind %d%s %s", loom_dtype_name(t), (long long)rows, (long long)n, kind,
           desc ? " descending" : "", vb == 4 ? "int32 values" : vb == 8 ? "int64 values" : "argsort");
  if (CHECK(loom_sort(tc_ctx, &dk, vb ? &dv : NULL, flags, &sk, &sv) == LOOM_OK, "%s: %s", what, loom_last_error(tc_ctx))) {
    LoomArray gk = to_host(&sk), gv = to_host(&sv);
    int64_t *perm = malloc(sizeof *perm * (size_t)(total ? total : 1));
    ref_sort(t, hk.data, rows, n, desc, perm);
    int es = esize(t);
    int64_t bad = -1, got = 0;
    for (int64_t i = 0; i < total && bad < 0; i++) {
      got = vb == 4 ? ((int32_t *)gv.data)[i] : ((int64_t *)gv.data)[i];
      if (got != perm[i] || bits_at(gk.data, es, i) != bits_at(hk.data, es, (i / n) * n + perm[i])) bad = i;
    }
    CHECK(bad < 0, "%s: position %lld holds index %lld (key bits %llx), want %lld (%llx)", what, (long long)bad,
          (long long)got, (unsigned long long)(bad >= 0 ? bits_at(gk.data, es, bad) : 0),
          (long long)(bad >= 0 ? perm[bad] : 0),
          (unsigned long long)(bad >= 0 ? bits_at(hk.data, es, (bad / n) * n + perm[bad]) : 0));
    free(perm);
    tc_free(&gk);
    tc_free(&gv);
    loom_array_free(tc_ctx, &sk);
    loom_array_free(tc_ctx, &sv);
  }
  loom_array_free(tc_ctx, &dk);
  if (vb) {
    loom_array_free(tc_ctx, &dv);
    tc_free(&hv);
  }
  tc_free(&hk);
}

static void take_cases(void) {
  int64_t rows = 3, n = 1000;
  LoomArray hs = host_array(LOOM_FLOAT64, rows, n, true), hi = host_array(LOOM_INT64, rows, n, true);
  for (int64_t i = 0; i < rows * n; i++) {
    ((double *)hs.data)[i] = (double)i * 0.5;
    ((int64_t *)hi.data)[i] = (i * 7919) % n - (i % 5 == 0 ? n : 0); /* some negative */
  }
  LoomArray ds = to_dev(&hs), di = to_dev(&hi), out;
  if (CHECK_OK(loom_take_rows(tc_ctx, &ds, &di, &out))) {
    LoomArray g = to_host(&out);
    int64_t bad = -1;
    for (int64_t i = 0; i < rows * n && bad < 0; i++) {
      int64_t k = ((int64_t *)hi.data)[i];
      k = k < 0 ? k + n : k;
      if (((double *)g.data)[i] != ((double *)hs.data)[(i / n) * n + k]) bad = i;
    }
    CHECK(bad < 0, "take_rows: element %lld", (long long)bad);
    tc_free(&g);
    loom_array_free(tc_ctx, &out);
  }
  ((int64_t *)hi.data)[17] = n; /* out of bounds */
  LoomArray di2 = to_dev(&hi);
  CHECK_STATUS(loom_take_rows(tc_ctx, &ds, &di2, &out), LOOM_ERR_INVALID_ARGUMENT);
  CHECK(strstr(loom_last_error(tc_ctx), "out of bounds") != NULL, "take_rows bounds message: %s", loom_last_error(tc_ctx));
  loom_array_free(tc_ctx, &ds), loom_array_free(tc_ctx, &di), loom_array_free(tc_ctx, &di2);
  tc_free(&hs), tc_free(&hi);
}

static void error_cases(void) {
  LoomArray h = tc_new1(LOOM_FLOAT32, 10), sk, sv;
  CHECK_STATUS(loom_sort(tc_ctx, &h, NULL, 0, &sk, NULL), LOOM_ERR_UNSUPPORTED); /* a host array */
  LoomArray c = tc_new1(LOOM_COMPLEX64, 10), dc = to_dev(&c);
  CHECK_STATUS(loom_sort(tc_ctx, &dc, NULL, 0, &sk, NULL), LOOM_ERR_DTYPE);
  LoomArray d = to_dev(&h);
  CHECK_STATUS(loom_sort(tc_ctx, &d, NULL, 64, &sk, NULL), LOOM_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(loom_sort(tc_ctx, &d, NULL, LOOM_SORT_INDEX, &sk, NULL), LOOM_ERR_INVALID_ARGUMENT);
  LoomArray hb = tc_new1(LOOM_INT16, 10), db = to_dev(&hb);
  CHECK_STATUS(loom_sort(tc_ctx, &d, &db, 0, &sk, &sv), LOOM_ERR_DTYPE); /* 2-byte values */
  LoomArray strided = d;
  strided.shape[0] = 5;
  strided.strides[0] = 2;
  CHECK_STATUS(loom_sort(tc_ctx, &strided, NULL, 0, &sk, NULL), LOOM_ERR_INVALID_ARGUMENT);
  loom_array_free(tc_ctx, &d), loom_array_free(tc_ctx, &dc), loom_array_free(tc_ctx, &db);
  tc_free(&h), tc_free(&c), tc_free(&hb);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void bench_kind(LoomDType t, int64_t n, bool index, int kind) {
  LoomArray h = tc_new1(t, n);
  fill_keys(t, h.data, n, kind);
  LoomArray d = to_dev(&h), sk, sv;
  int32_t flags = index ? LOOM_SORT_INDEX : 0;
  CHECK_OK(loom_sort(tc_ctx, &d, NULL, flags, &sk, index ? &sv : NULL)); /* compile, warm the pool */
  loom_array_free(tc_ctx, &sk);
  if (index) loom_array_free(tc_ctx, &sv);
  loom_device_synchronize(tc_ctx, dev_kind, 0);
  int reps = 10;
  double t0 = now_ms();
  for (int r = 0; r < reps; r++) {
    loom_sort(tc_ctx, &d, NULL, flags, &sk, index ? &sv : NULL);
    loom_array_free(tc_ctx, &sk);
    if (index) loom_array_free(tc_ctx, &sv);
  }
  loom_device_synchronize(tc_ctx, dev_kind, 0);
  double ms = (now_ms() - t0) / reps;
  const char *skip = getenv("LOOM_GPU_RADIX_SKIP");
  printf("radix %s of %lld %s%s%s: %.3f ms (%.2f Gkeys/s)\n", index ? "argsort" : "sort", (long long)n, loom_dtype_name(t),
         kind == KIND_SMALL ? " in [0, 1000)" : kind == KIND_EQUAL ? " all equal" : "",
         kind && skip && !strcmp(skip, "0") ? " (LOOM_GPU_RADIX_SKIP=0)" : "", ms, (double)n / ms / 1e6);
  loom_array_free(tc_ctx, &d);
  tc_free(&h);
}
static void bench(LoomDType t, int64_t n, bool index) { bench_kind(t, n, index, 0); }

/* Trivial passes (gpu_radix_plan.c) against the reference: keys of small ranges (all passes but one
 * trivial, all trivial, none), argsort and values with a trivial first pass, a common exponent byte,
 * rows of different ranges (plans that differ per row, rows with no non-trivial pass beside others),
 * below one tile (the tile sweep forced by LOOM_GPU_RADIX_ROWS=0) and above, ascending and descending,
 * and short rows in the block row sort (its own skip, gpu_radix_rows.c); then some with
 * LOOM_GPU_RADIX_SKIP=0 (every pass run: the A/B). */
static void plan_cases(void) {
  static const LoomDType types[] = {LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_INT16, LOOM_FLOAT32, LOOM_FLOAT64,
                                    LOOM_UINT16, LOOM_FLOAT16, LOOM_BOOL};
  static const int kinds[] = {KIND_SMALL, KIND_EQUAL, KIND_LOW_ZERO, KIND_EXPONENT, 1, KIND_MIXED_ROWS};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
      LoomDType t = types[i];
      int kind = kinds[k];
      bool mixed = kind == KIND_MIXED_ROWS;
      device_one(t, mixed ? 7 : 1, 100003, kind, false, 0); /* argsort */
      device_one(t, mixed ? 6 : 1, 30000, kind, true, 0);
      device_one(t, mixed ? 13 : 1, 50000, kind, k % 2 == 0, 4);
      device_one(t, mixed ? 6 : 2, 20000, kind, k % 2 == 1, 8);
      setenv("LOOM_GPU_RADIX_ROWS", "0", 1); /* below one tile and just above, through the sweep */
      device_one(t, mixed ? 12 : 1, 1000, kind, false, 0);
      device_one(t, mixed ? 6 : 3, 4097, kind, true, 0);
      device_one(t, mixed ? 6 : 1, 3000, kind, false, 4);
      unsetenv("LOOM_GPU_RADIX_ROWS");
      /* the block row sort skips a row's trivial passes itself (gpu_radix_rows.c) */
      device_one(t, mixed ? 12 : 3, 1000, kind, k % 2 == 0, 0);
      device_one(t, mixed ? 600 : 100, 40, kind, true, 4);
      device_one(t, mixed ? 7 : 2, 2048, kind, false, 8);
    }
  device_one(LOOM_INT32, 1, INT64_C(1) << 26, KIND_SMALL, false, 0); /* unique's case */
  device_one(LOOM_INT32, 1, INT64_C(1) << 24, KIND_EQUAL, false, 0);
  device_one(LOOM_FLOAT32, 1, INT64_C(1) << 24, KIND_EXPONENT, true, 0);
  device_one(LOOM_INT64, 5, INT64_C(1) << 20, KIND_MIXED_ROWS, false, 8);
  setenv("LOOM_GPU_RADIX_SKIP", "0", 1);
  device_one(LOOM_INT32, 1, 100003, KIND_SMALL, false, 0);
  device_one(LOOM_FLOAT64, 7, 20000, KIND_MIXED_ROWS, true, 8);
  device_one(LOOM_INT16, 1, 50000, KIND_EQUAL, false, 4);
  device_one(LOOM_INT32, 12, 1000, KIND_MIXED_ROWS, false, 0); /* the block row sort, every pass */
  unsetenv("LOOM_GPU_RADIX_SKIP");
}

static int device_main(void) {
  const char *which = getenv("LOOM_TEST_GPU");
  dev_kind = which && !strcmp(which, "hip") ? LOOM_DEVICE_HIP : LOOM_DEVICE_CUDA;
  int32_t ndev = 0;
  LoomStatus st = loom_device_count(tc_ctx, dev_kind, &ndev);
  if (st != LOOM_OK || ndev == 0) {
    printf("test_gpu_sort: skipped (no %s driver or device%s%s)\n", dev_kind == LOOM_DEVICE_HIP ? "HIP" : "CUDA",
           st != LOOM_OK ? ": " : "", st != LOOM_OK ? loom_last_error(tc_ctx) : "");
    loom_context_destroy(tc_ctx);
    return 77;
  }
  static const int64_t sizes[] = {0, 1, 2, 3, 31, 255, 4095, 4096, 4097, 12345, 65536, (1 << 20) + 7};
  for (int i = 0; i < NKEY_TYPES; i++) {
    LoomDType t = key_types[i];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) device_one(t, 1, sizes[s], (int)(s % 5), s & 1, 0);
    device_one(t, 1, 100000, 2, false, 0);
    device_one(t, 1, 100000, 2, true, 0);
    device_one(t, 1, 50000, 1, false, 4);
    device_one(t, 1, 50000, 1, true, 8);
    device_one(t, 37, 5000, 2, false, 0);
    device_one(t, 1000, 100, 0, true, 0);
    device_one(t, 1, 30000, 3, false, 0);
    device_one(t, 1, 30000, 4, false, 0);
  }
  device_one(LOOM_FLOAT32, 1, INT64_C(1) << 26, 2, false, 0);
  device_one(LOOM_FLOAT32, 1, INT64_C(1) << 24, 0, true, 4);
  device_one(LOOM_FLOAT64, 4, INT64_C(1) << 22, 2, true, 8);
  device_one(LOOM_UINT8, 3, 3000000, 1, false, 8);
  device_one(LOOM_INT16, 1, 1 << 22, 4, true, 0);
  /* the block row sort (gpu_radix_rows.c: a row of up to its capacity in one block) at its edges -- the
   * capacity, one key more (the tile sweep), many short rows -- and the same short rows by the tile sweep
   * (LOOM_GPU_RADIX_ROWS=0) and under the tuning switches bench/sort_sweep.py times */
  static const struct { LoomDType t; int vb; } edges[] = {{LOOM_FLOAT32, 0}, {LOOM_FLOAT32, 8}, {LOOM_FLOAT64, 0},
                                                         {LOOM_UINT8, 4},   {LOOM_INT16, 0},   {LOOM_INT64, 8}};
  for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
    CgRadixSpec spec = {.key = edges[e].t, .value_bytes = edges[e].vb ? edges[e].vb : 4,
                        .wave = dev_kind == LOOM_DEVICE_HIP ? 64 : 32};
    int items[CG_RADIX_ROW_VARIANTS], nv = cg_radix_row_items(&spec, items);
    int64_t cap = nv ? (int64_t)CG_RADIX_BLOCK * items[nv - 1] : 0;
    CHECK(cap >= 2048, "%s: block row capacity %lld", loom_dtype_name(edges[e].t), (long long)cap);
    device_one(edges[e].t, 3, cap, 2, false, edges[e].vb);
    device_one(edges[e].t, 2, cap + 1, 1, true, edges[e].vb);
    device_one(edges[e].t, 3, cap - 1, 3, true, edges[e].vb);
    device_one(edges[e].t, 1000, 1000, 0, false, edges[e].vb);
    device_one(edges[e].t, 2000, 33, 4, true, edges[e].vb);
  }
  static const char *const tunings[][2] = {{"LOOM_GPU_RADIX_ROWS", "0"}, {"LOOM_GPU_RADIX_ITEMS4", "24"},
                                           {"LOOM_GPU_RADIX_BLOCKS_PER_SM", "2"}, {"LOOM_GPU_RADIX_RANK", "ballot"},
                                           {"LOOM_GPU_RADIX_RANK", "early"}, {"LOOM_GPU_RADIX_ITEMS8", "12"},
                                           {"LOOM_GPU_RADIX_HIST_TILES", "3"}, {"LOOM_GPU_RADIX_RANK", "smem"},
                                           {"LOOM_GPU_RADIX_RANK", "atomic,chain"}};
  for (size_t k = 0; k < sizeof tunings / sizeof tunings[0]; k++) {
    setenv(tunings[k][0], tunings[k][1], 1);
    device_one(LOOM_FLOAT32, 1, 100000, 2, false, 0);
    device_one(LOOM_FLOAT32, 1000, 1000, 2, true, 4);
    device_one(LOOM_FLOAT64, 1, 50000, 1, true, 8);
    device_one(LOOM_INT8, 37, 5000, 3, false, 0);
    unsetenv(tunings[k][0]);
  }
  /* the first pass design (LOOM_RADIX_LEGACY=1, kept for A/B timing) must sort the same */
  setenv("LOOM_RADIX_LEGACY", "1", 1);
  device_one(LOOM_FLOAT32, 1, 100000, 2, false, 0);
  device_one(LOOM_FLOAT32, 1, 50000, 1, true, 4);
  device_one(LOOM_FLOAT64, 37, 5000, 2, true, 8);
  device_one(LOOM_INT8, 1, 12345, 3, false, 0);
  device_one(LOOM_FLOAT32, 1, INT64_C(1) << 22, 0, false, 0);
  unsetenv("LOOM_RADIX_LEGACY");
  plan_cases();
  take_cases();
  error_cases();
  for (int legacy = 0; legacy < 2; legacy++) { /* the pass designs side by side */
    if (legacy) setenv("LOOM_RADIX_LEGACY", "1", 1);
    printf("%s pass design:\n", legacy ? "legacy (LOOM_RADIX_LEGACY=1)" : "single-sweep (default)");
    for (int64_t n = INT64_C(1) << 20; n <= INT64_C(1) << 26; n <<= 2) {
      bench(LOOM_FLOAT32, n, false);
      bench(LOOM_FLOAT32, n, true);
    }
    bench(LOOM_FLOAT64, INT64_C(1) << 26, false);
    bench(LOOM_INT32, INT64_C(1) << 26, false);
    bench(LOOM_UINT8, INT64_C(1) << 26, false);
  }
  for (int skip = 1; skip >= 0; skip--) { /* trivial passes skipped (default) and run (LOOM_GPU_RADIX_SKIP=0) */
    if (!skip) setenv("LOOM_GPU_RADIX_SKIP", "0", 1);
    bench_kind(LOOM_INT32, INT64_C(1) << 26, false, KIND_SMALL);
    bench_kind(LOOM_INT32, INT64_C(1) << 26, true, KIND_SMALL);
    bench_kind(LOOM_INT32, INT64_C(1) << 26, false, KIND_EQUAL);
    bench_kind(LOOM_INT64, INT64_C(1) << 25, false, KIND_SMALL);
    bench_kind(LOOM_INT32, INT64_C(1) << 26, false, 0);
    bench_kind(LOOM_FLOAT32, INT64_C(1) << 26, false, 0);
  }
  unsetenv("LOOM_GPU_RADIX_SKIP");
  unsetenv("LOOM_RADIX_LEGACY");
  return tc_finish();
}
