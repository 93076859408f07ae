/* test_gpu_diff.c: the GPU against the host, value for value (issue 10's GPU-only wrong answers).
 *
 * Each case evaluates one graph twice, on host arrays and on copies of them on CUDA device 0, and
 * compares the results: integers and exactly rounded float ops (casts, + - * /, fmod / remainder,
 * float16 rounding, reciprocal) bit for bit; graphs with transcendental functions within a few ulps
 * (SLEEF on the host, libdevice on the GPU). The fixed cases are the issue's: float32 and float64
 * remainder of operands of very different magnitudes (fmod must be exact), uint64 / int64 -> float64
 * conversions of values that float32 or a signed conversion would round differently (elementwise,
 * vector entries, mixed promotions, reductions). Then a seeded random-graph differential run:
 * LOOM_GPU_DIFF_GRAPHS (default 1500) graphs of up to 8 ops over 3 inputs of random dtypes and shapes,
 * LOOM_GPU_DIFF_SEED the first seed; a mismatch prints its seed and the graph.
 * Without a CUDA driver or device the test prints why and exits 77 (ctest: skipped).
 */
#include "test_common.h"

static int ndev;

static LoomArray to_device(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = LOOM_DEVICE_CUDA;
  d.device_index = 0;
  int64_t s = 1;
  for (int i = d.ndim - 1; i >= 0; i--) {
    d.strides[i] = s;
    s *= d.shape[i] > 1 ? d.shape[i] : 1;
  }
  if (loom_array_alloc(tc_ctx, &d) != LOOM_OK || loom_array_copy(tc_ctx, &d, h) != LOOM_OK)
    fprintf(stderr, "to_device: %s\n", loom_last_error(tc_ctx));
  return d;
}

static LoomArray to_host(const LoomArray *d) {
  LoomArray h = *d;
  h.device = LOOM_DEVICE_HOST;
  h.device_index = 0;
  h.data = NULL;
  if (loom_array_alloc(tc_ctx, &h) != LOOM_OK || loom_array_copy(tc_ctx, &h, d) != LOOM_OK)
    fprintf(stderr, "to_host: %s\n", loom_last_error(tc_ctx));
  return h;
}

typedef LoomStatus (*Build)(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out);

/* Evaluates build(inputs) on the host and on the GPU; the results, both on the host, in *hr, *gr. */
static bool run_both(int nin, const LoomArray *in, Build build, void *arg, LoomArray *hr, LoomArray *gr) {
  LoomGraph *gh = NULL, *gg = NULL;
  LoomNode nh[4], ng[4], yh = -1, yg = -1;
  LoomArray dev[4];
  bool ok = loom_graph_create(tc_ctx, &gh) == LOOM_OK && loom_graph_create(tc_ctx, &gg) == LOOM_OK;
  for (int i = 0; i < nin; i++) dev[i] = to_device(&in[i]);
  for (int i = 0; ok && i < nin; i++)
    ok = loom_input(gh, &in[i], &nh[i]) == LOOM_OK && loom_input(gg, &dev[i], &ng[i]) == LOOM_OK;
  LoomStatus sh = ok ? build(gh, nh, arg, &yh) : LOOM_ERR_INTERNAL;
  LoomStatus sg = ok ? build(gg, ng, arg, &yg) : LOOM_ERR_INTERNAL;
  ok = ok && sh == LOOM_OK && sg == LOOM_OK;
  LoomArray dr;
  memset(hr, 0, sizeof *hr);
  memset(&dr, 0, sizeof dr);
  if (ok) ok = CHECK_OK(loom_eval(gh, 1, &yh, hr));
  if (ok) ok = CHECK_OK(loom_eval(gg, 1, &yg, &dr));
  if (ok) {
    *gr = to_host(&dr);
    loom_array_free(tc_ctx, &dr);
  } else if (hr->data) {
    loom_array_free(tc_ctx, hr);
  }
  for (int i = 0; i < nin; i++) loom_array_free(tc_ctx, &dev[i]);
  loom_graph_destroy(gh);
  loom_graph_destroy(gg);
  return ok;
}

/* Compares host and GPU results: exact (ulps 0) or within ulps; prints up to 5 differences. */
static int compare(const char *what, const LoomArray *hr, const LoomArray *gr, uint64_t ulps) {
  int64_t n = tc_numel(hr->ndim, hr->shape);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    bool same;
    if (tc_is_float(hr->dtype)) same = tc_close_ulp(hr->dtype, tc_get_f(gr, i), tc_get_f(hr, i), ulps);
    else same = tc_get_i(gr, i) == tc_get_i(hr, i);
    if (!same && bad++ < 5)
      fprintf(stderr, "%s [%lld]: host %.17g gpu %.17g\n", what, (long long)i, tc_get_f(hr, i), tc_get_f(gr, i));
  }
  return bad;
}

/* ---- fixed cases ------------------------------------------------------------------------------------- */
static LoomStatus b_binary(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  return loom_binary(g, (LoomOp)(intptr_t)arg, in[0], in[1], out);
}
static LoomStatus b_cast_f64(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  (void)arg;
  return loom_cast(g, in[0], LOOM_FLOAT64, out);
}
static LoomStatus b_mean(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  (void)arg;
  return loom_reduce(g, LOOM_REDUCE_MEAN, in[0], 0, NULL, 0, out);
}
static LoomStatus b_sum_f64(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  (void)arg;
  LoomNode c;
  LoomStatus st = loom_cast(g, in[0], LOOM_FLOAT64, &c);
  return st ? st : loom_reduce(g, LOOM_REDUCE_MAX, c, 0, NULL, 0, out);
}
static LoomStatus b_rem_cos(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) { /* x % cos(x) */
  (void)arg;
  LoomNode c;
  LoomStatus st = loom_unary(g, LOOM_OP_COS, in[0], &c);
  return st ? st : loom_binary(g, LOOM_OP_MOD, in[0], c, out);
}
static LoomStatus b_weak_div(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) { /* u64 / 300 */
  (void)arg;
  LoomNode k;
  LoomStatus st = loom_weak_int(g, 300, &k);
  return st ? st : loom_binary(g, LOOM_OP_TRUEDIV, in[0], k, out);
}
static LoomStatus b_f16_chain(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  (void)arg;
  LoomNode h, k, m, s;
  LoomStatus st = loom_cast(g, in[0], LOOM_FLOAT16, &h);
  if (!st) st = loom_weak_float(g, 300.0, &k);
  if (!st) st = loom_binary(g, LOOM_OP_MUL, h, k, &m);
  if (!st) st = loom_binary(g, LOOM_OP_SUB, m, h, &s);
  return st ? st : loom_cast(g, s, LOOM_FLOAT64, out);
}
static LoomStatus b_unary(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  return loom_unary(g, (LoomOp)(intptr_t)arg, in[0], out);
}

static void fixed_cases(void) {
  uint64_t rng = 99;
  enum { N = 4099 }; /* odd: scalar tails of the vector entries too */
  /* remainder: the operands, random bit patterns, mixed magnitudes */
  for (int k = 0; k < 2; k++) {
    LoomDType t = k ? LOOM_FLOAT64 : LOOM_FLOAT32;
    LoomArray in[2] = {tc_new1(t, N), tc_new1(t, N)};
    for (int i = 0; i < N; i++) {
      double a = ldexp(tc_rand_unit(&rng) - 0.5, (int)(tc_rand_u64(&rng) % 200) - 100);
      double b = ldexp(tc_rand_unit(&rng) - 0.5, (int)(tc_rand_u64(&rng) % 200) - 100);
      if (i == 0) a = -9223372036854775808.0, b = -4.8e29;
      tc_set_f(&in[0], i, a);
      tc_set_f(&in[1], i, b);
    }
    LoomArray hr, gr;
    char what[64];
    snprintf(what, sizeof what, "remainder(%s)", loom_dtype_name(t));
    if (run_both(2, in, b_binary, (void *)(intptr_t)LOOM_OP_MOD, &hr, &gr)) {
      CHECK(compare(what, &hr, &gr, 0) == 0, "%s: GPU differs from the host (fmod must be exact)", what);
      CHECK(tc_get_f(&gr, 0) == tc_get_f(&hr, 0), "%s of the issue's operands: gpu %.9g host %.9g", what, tc_get_f(&gr, 0),
            tc_get_f(&hr, 0));
      loom_array_free(tc_ctx, &hr);
      loom_array_free(tc_ctx, &gr);
    }
    snprintf(what, sizeof what, "remainder(x, cos(x)) %s", loom_dtype_name(t));
    if (run_both(1, in, b_rem_cos, NULL, &hr, &gr)) { /* cos differs by ulps: compare loosely */
      CHECK(compare(what, &hr, &gr, 64) == 0, "%s: GPU differs from the host", what);
      loom_array_free(tc_ctx, &hr);
      loom_array_free(tc_ctx, &gr);
    }
    tc_free(&in[0]);
    tc_free(&in[1]);
  }
  /* 64-bit integers -> float64: values around every power of two from 2^24 to 2^64 */
  for (int k = 0; k < 2; k++) {
    LoomDType t = k ? LOOM_INT64 : LOOM_UINT64;
    LoomArray x = tc_new1(t, N);
    for (int i = 0; i < N; i++) {
      int e = 24 + i % 40;
      uint64_t v = (i % 3 == 0) ? tc_rand_u64(&rng) >> (i % 64) : ((uint64_t)1 << e) + (tc_rand_u64(&rng) >> (64 - e + 1));
      if (i == 1) v = 3709551616u + 1023;
      if (i == 2) v = ((uint64_t)1 << 63) + 2047;
      if (i == 3) v = UINT64_MAX;
      tc_set_i(&x, i, k ? (I128)(int64_t)v : (I128)v);
    }
    Build builds[4] = {b_cast_f64, b_weak_div, b_mean, b_sum_f64};
    const char *names[4] = {"astype(float64)", "/ 300", "mean", "max of astype(float64)"};
    for (int b = 0; b < 4; b++) {
      LoomArray hr, gr;
      char what[64];
      snprintf(what, sizeof what, "%s %s", loom_dtype_name(t), names[b]);
      if (run_both(1, &x, builds[b], NULL, &hr, &gr)) {
        CHECK(compare(what, &hr, &gr, b == 2 ? 1 : 0) == 0, "%s: GPU differs from the host", what);
        loom_array_free(tc_ctx, &hr);
        loom_array_free(tc_ctx, &gr);
      }
    }
    /* mixed int64 + uint64 promotes to float64 */
    LoomArray y = tc_new1(k ? LOOM_UINT64 : LOOM_INT64, N);
    for (int i = 0; i < N; i++) tc_set_i(&y, i, (I128)(tc_rand_u64(&rng) >> 1) - (k ? 0 : (I128)1 << 61));
    LoomArray in2[2] = {x, y}, hr, gr;
    if (run_both(2, in2, b_binary, (void *)(intptr_t)LOOM_OP_ADD, &hr, &gr)) {
      CHECK(compare("int64 + uint64", &hr, &gr, 0) == 0, "int64 + uint64 -> float64: GPU differs");
      loom_array_free(tc_ctx, &hr);
      loom_array_free(tc_ctx, &gr);
    }
    tc_free(&y);
    tc_free(&x);
  }
  /* float16 rounding inside kernels, reciprocal of ints */
  LoomArray f = tc_new1(LOOM_FLOAT32, N);
  for (int i = 0; i < N; i++) tc_set_f(&f, i, (tc_rand_unit(&rng) - 0.5) * 1000.0);
  LoomArray hr, gr;
  if (run_both(1, &f, b_f16_chain, NULL, &hr, &gr)) {
    CHECK(compare("float16 chain", &hr, &gr, 0) == 0, "float16 rounding: GPU differs from the host");
    loom_array_free(tc_ctx, &hr);
    loom_array_free(tc_ctx, &gr);
  }
  tc_free(&f);
  LoomArray iv = tc_new1(LOOM_INT32, N);
  for (int i = 0; i < N; i++) tc_set_i(&iv, i, (I128)(i % 7) - 3);
  if (run_both(1, &iv, b_unary, (void *)(intptr_t)LOOM_OP_RECIPROCAL, &hr, &gr)) {
    CHECK(compare("reciprocal(int32)", &hr, &gr, 0) == 0, "reciprocal: GPU differs from the host");
    loom_array_free(tc_ctx, &hr);
    loom_array_free(tc_ctx, &gr);
  }
  tc_free(&iv);
}

/* ---- random graphs --------------------------------------------------------------------------------- */
typedef struct Rg {
  uint64_t rng;
  int nops;
  LoomOp ops[8];
  int src[8][2]; /* operand indices: < 3 inputs, else 3 + op index */
  bool transcendental;
} Rg;

static const LoomOp rg_ops[] = {LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_TRUEDIV, LOOM_OP_FLOORDIV, LOOM_OP_MOD,
                                LOOM_OP_MAXIMUM, LOOM_OP_MINIMUM, LOOM_OP_NEG, LOOM_OP_ABS, LOOM_OP_EXP, LOOM_OP_SIN,
                                LOOM_OP_COS, LOOM_OP_SQRT, LOOM_OP_LOG, LOOM_OP_FLOOR, LOOM_OP_RECIPROCAL,
                                LOOM_OP_BITWISE_AND, LOOM_OP_LT, LOOM_OP_HYPOT, LOOM_OP_COPYSIGN, LOOM_OP_POW};
#define RG_NOPS (int)(sizeof rg_ops / sizeof rg_ops[0])

static LoomStatus b_random(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  const Rg *r = arg;
  LoomNode v[11] = {in[0], in[1], in[2]};
  int nv = 3;
  for (int k = 0; k < r->nops; k++) {
    LoomOp op = r->ops[k];
    LoomStatus st;
    bool unary = op <= LOOM_OP_BITWISE_NOT || op == LOOM_OP_RECIPROCAL;
    if (unary) st = loom_unary(g, op, v[r->src[k][0]], &v[nv]);
    else st = loom_binary(g, op, v[r->src[k][0]], v[r->src[k][1]], &v[nv]);
    if (st != LOOM_OK) v[nv] = v[r->src[k][0]]; /* a dtype error: skip the op, the same on both */
    nv++;
  }
  *out = v[nv - 1];
  return LOOM_OK;
}

static void random_graphs(void) {
  const char *e = getenv("LOOM_GPU_DIFF_GRAPHS"), *s = getenv("LOOM_GPU_DIFF_SEED");
  long n = e && atol(e) > 0 ? atol(e) : 1500;
  uint64_t seed0 = s ? strtoull(s, NULL, 10) : 1;
  static const LoomDType dts[] = {LOOM_BOOL, LOOM_INT8, LOOM_INT32, LOOM_INT64, LOOM_UINT8, LOOM_UINT64,
                                  LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64};
  long mism = 0;
  for (long gi = 0; gi < n; gi++) {
    Rg r;
    memset(&r, 0, sizeof r);
    r.rng = seed0 + (uint64_t)gi;
    tc_rand_u64(&r.rng);
    int64_t len = 1 + (int64_t)(tc_rand_u64(&r.rng) % 3000);
    LoomArray in[3];
    for (int i = 0; i < 3; i++) {
      in[i] = tc_new1(dts[tc_rand_u64(&r.rng) % (sizeof dts / sizeof dts[0])], len);
      for (int64_t j = 0; j < len; j++) {
        double u = tc_rand_unit(&r.rng);
        if (tc_is_float(in[i].dtype)) tc_set_f(&in[i], j, (u - 0.5) * (tc_rand_u64(&r.rng) % 2 ? 10.0 : 1e6));
        else tc_set_i(&in[i], j, (I128)(tc_rand_u64(&r.rng) >> (tc_rand_u64(&r.rng) % 64)) - (I128)(u < 0.5) * 1000);
      }
    }
    r.nops = 1 + (int)(tc_rand_u64(&r.rng) % 8);
    for (int k = 0; k < r.nops; k++) {
      r.ops[k] = rg_ops[tc_rand_u64(&r.rng) % RG_NOPS];
      r.src[k][0] = (int)(tc_rand_u64(&r.rng) % (uint64_t)(3 + k));
      r.src[k][1] = (int)(tc_rand_u64(&r.rng) % (uint64_t)(3 + k));
      LoomOp o = r.ops[k];
      if (o == LOOM_OP_EXP || o == LOOM_OP_SIN || o == LOOM_OP_COS || o == LOOM_OP_LOG || o == LOOM_OP_HYPOT ||
          o == LOOM_OP_POW)
        r.transcendental = true;
    }
    LoomArray hr, gr;
    if (run_both(3, in, b_random, &r, &hr, &gr)) {
      /* exact ops: 0 ulp; with transcendentals, an ulp difference can grow through later ops: the
       * compare then allows a relative 1e-3 of float16/float32 and 1e-9 of float64 */
      int bad = 0;
      int64_t nn = tc_numel(hr.ndim, hr.shape);
      for (int64_t i = 0; i < nn; i++) {
        bool same;
        if (!tc_is_float(hr.dtype)) same = tc_get_i(&hr, i) == tc_get_i(&gr, i) || r.transcendental;
        else if (!r.transcendental) same = tc_close_ulp(hr.dtype, tc_get_f(&gr, i), tc_get_f(&hr, i), 0);
        else same = tc_close_rel(tc_get_f(&gr, i), tc_get_f(&hr, i), hr.dtype == LOOM_FLOAT64 ? 1e-9 : 1e-3, 1e-6);
        if (!same && bad++ < 3)
          fprintf(stderr, "graph seed %llu [%lld]: host %.17g gpu %.17g\n", (unsigned long long)(seed0 + (uint64_t)gi),
                  (long long)i, tc_get_f(&hr, i), tc_get_f(&gr, i));
      }
      if (bad) {
        mism++;
        fprintf(stderr, "graph seed %llu: %d ops:", (unsigned long long)(seed0 + (uint64_t)gi), r.nops);
        for (int k = 0; k < r.nops; k++) fprintf(stderr, " %s(%d,%d)", loom_op_name(r.ops[k]), r.src[k][0], r.src[k][1]);
        fprintf(stderr, " inputs %s %s %s\n", loom_dtype_name(in[0].dtype), loom_dtype_name(in[1].dtype),
                loom_dtype_name(in[2].dtype));
      }
      loom_array_free(tc_ctx, &hr);
      loom_array_free(tc_ctx, &gr);
    }
    for (int i = 0; i < 3; i++) tc_free(&in[i]);
  }
  CHECK(mism == 0, "random graphs: %ld of %ld differ between the GPU and the host (seeds %llu..)", mism, n,
        (unsigned long long)seed0);
  printf("test_gpu_diff: %ld random graphs compared\n", n);
}

int main(void) {
  if (!tc_init()) return 1;
  if (loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev) != LOOM_OK || ndev == 0) {
    printf("test_gpu_diff: skipped (no CUDA driver or device)\n");
    loom_context_destroy(tc_ctx);
    return 77;
  }
  fixed_cases();
  random_graphs();
  return tc_finish();
}
