/* test_gpu_diff.c: the GPU against the host, value for value (issue 10's GPU-only wrong answers).
 *
 * Each case evaluates one graph twice, on host arrays and on copies of them on CUDA device 0, and
 * compares the results: integers and exactly rounded float ops (casts, + - * /, fmod / remainder,
 * float16 rounding, reciprocal) bit for bit; transcendental functions (SLEEF on the host, libdevice on
 * the GPU) within a few ulps of a libm reference. The fixed cases are the issue's: float32 and float64
 * remainder of operands of very different magnitudes (fmod must be exact), uint64 / int64 -> float64
 * conversions of values that float32 or a signed conversion would round differently (elementwise,
 * vector entries, mixed promotions, reductions). Then a seeded random-graph differential run:
 * LOOM_GPU_DIFF_GRAPHS (default 1500) graphs of up to 8 ops over 3 inputs of random dtypes and shapes,
 * LOOM_GPU_DIFF_SEED the first seed; a mismatch prints its seed and the graph.
 *
 * The tolerance rule. An ulp of difference in a transcendental result is not a bug, but later ops can
 * amplify it without bound (floor, remainder, comparisons, a cancelling subtraction: remainder(x, cos x)
 * with |x| ~ 1e30 changes completely when cos x moves by one ulp). So a graph is not compared end to
 * end within a tolerance: every op's GPU result is read back, each transcendental result is checked
 * against libm (double precision, rounded to the op's dtype) within TRANSC_ULPS, and the graph is then
 * replayed on the host with the GPU's transcendental results as inputs: every other op must then give
 * the GPU's bits exactly, integers and floats alike.
 * Without a CUDA driver or device the test prints why and exits 77 (ctest: skipped).
 */
#include "test_common.h"

static int ndev;
/* The device under test: CUDA device 0; LOOM_GPU_DIFF_DEVICE=host runs the whole test with the host in
 * the GPU's place (a check of the test itself, and of SLEEF against libm, on a machine without a GPU). */
static LoomDeviceKind dev_kind = LOOM_DEVICE_CUDA;

static LoomArray to_device(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = dev_kind;
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
/* NumPy's float remainder (npy_divmod's mod) of a and b in dtype t (float32 or float64), from C's
 * exact fmod: the independent reference. */
static double np_remainder(LoomDType t, double a, double b) {
  if (b == 0) return NAN;
  double m = t == LOOM_FLOAT32 ? (double)fmodf((float)a, (float)b) : fmod(a, b);
  if (m != 0) {
    if ((b < 0) != (m < 0)) m = t == LOOM_FLOAT32 ? (double)((float)m + (float)b) : m + b;
  } else {
    m = copysign(0.0, b);
  }
  return m;
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
    /* remainder(x, cos(x)) in one fused GPU kernel: cos within a few ulps of libm, the remainder exact
     * for the GPU's own cos values (the host's cos may differ by an ulp, which changes the remainder
     * of a large x completely: comparing the two would test the rounding of cos, not fmod) */
    snprintf(what, sizeof what, "remainder(x, cos(x)) %s", loom_dtype_name(t));
    LoomArray dx = to_device(&in[0]);
    LoomGraph *g = NULL;
    LoomNode x, c, r, outs[2];
    LoomArray res[2];
    memset(res, 0, sizeof res);
    if (CHECK_OK(loom_graph_create(tc_ctx, &g)) && CHECK_OK(loom_input(g, &dx, &x)) &&
        CHECK_OK(loom_unary(g, LOOM_OP_COS, x, &c)) && CHECK_OK(loom_binary(g, LOOM_OP_MOD, x, c, &r))) {
      outs[0] = c, outs[1] = r;
      if (CHECK_OK(loom_eval(g, 2, outs, res))) {
        LoomArray hc = to_host(&res[0]), hm = to_host(&res[1]);
        int bad_cos = 0, bad_rem = 0;
        for (int i = 0; i < N; i++) {
          double xv = tc_get_f(&in[0], i), cv = tc_get_f(&hc, i), mv = tc_get_f(&hm, i);
          if (!tc_close_ulp(t, cv, tc_round_to(t, cos(xv)), 4) && bad_cos++ < 3)
            fprintf(stderr, "%s: cos(%.17g): gpu %.17g libm %.17g\n", what, xv, cv, cos(xv));
          double want = np_remainder(t, xv, cv);
          if (!tc_close_ulp(t, mv, want, 0) && bad_rem++ < 3)
            fprintf(stderr, "%s: remainder(%.17g, %.17g): gpu %.17g exact %.17g\n", what, xv, cv, mv, want);
        }
        CHECK(bad_cos == 0, "%s: %d GPU cos values beyond 4 ulps of libm", what, bad_cos);
        CHECK(bad_rem == 0, "%s: %d GPU remainders differ from the exact remainder of its own cos", what, bad_rem);
        loom_array_free(tc_ctx, &hc);
        loom_array_free(tc_ctx, &hm);
        loom_array_free(tc_ctx, &res[0]);
        loom_array_free(tc_ctx, &res[1]);
      }
    }
    if (g) loom_graph_destroy(g);
    loom_array_free(tc_ctx, &dx);
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
} Rg;

static const LoomOp rg_ops[] = {LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_TRUEDIV, LOOM_OP_FLOORDIV, LOOM_OP_MOD,
                                LOOM_OP_MAXIMUM, LOOM_OP_MINIMUM, LOOM_OP_NEG, LOOM_OP_ABS, LOOM_OP_EXP, LOOM_OP_SIN,
                                LOOM_OP_COS, LOOM_OP_SQRT, LOOM_OP_LOG, LOOM_OP_FLOOR, LOOM_OP_RECIPROCAL,
                                LOOM_OP_BITWISE_AND, LOOM_OP_LT, LOOM_OP_HYPOT, LOOM_OP_COPYSIGN, LOOM_OP_POW};
#define RG_NOPS (int)(sizeof rg_ops / sizeof rg_ops[0])
/* ulps of a float16/32/64 transcendental result from libm's double result rounded to the dtype: the
 * device library's documented bounds (libdevice: expf, sinf, cosf 2; logf 1; hypotf 3; powf 4; f64 2 at
 * most) plus the reference's own rounding; float16 is computed in float32 and rounded (1 ulp). */
#define TRANSC_ULPS 6

static bool rg_unary(LoomOp op) { return op <= LOOM_OP_BITWISE_NOT || op == LOOM_OP_RECIPROCAL; }
/* Also copysign: its result takes the sign of a NaN when y is one, and IEEE 754 leaves the sign of a NaN
 * made by an invalid operation (0/0, inf - inf) to the platform (x86: negative, NVIDIA: positive), so
 * it is checked against libm by itself (sign ignored where y is NaN) and the replay reads the GPU's. */
static bool rg_transcendental(LoomOp op, LoomDType t) {
  return tc_is_float(t) && (op == LOOM_OP_EXP || op == LOOM_OP_SIN || op == LOOM_OP_COS || op == LOOM_OP_LOG ||
                            op == LOOM_OP_HYPOT || op == LOOM_OP_POW || op == LOOM_OP_COPYSIGN);
}
/* libm's value of a transcendental op, operands given as doubles already rounded to the op's dtype. */
static double rg_libm(LoomOp op, double a, double b) {
  switch (op) {
  case LOOM_OP_EXP: return exp(a);
  case LOOM_OP_SIN: return sin(a);
  case LOOM_OP_COS: return cos(a);
  case LOOM_OP_LOG: return log(a);
  case LOOM_OP_HYPOT: return hypot(a, b);
  case LOOM_OP_COPYSIGN: return isnan(b) ? fabs(a) : copysign(a, b);
  default: return pow(a, b);
  }
}

/* Builds the graph of r over v[0..2] (inputs); node k of the graph goes to v[3 + k] (an op whose dtypes
 * are refused aliases its first operand, the same on both devices). With subst (the replay), an op k
 * with subst[k] >= 0 is instead the input node subst[k]. ok[k]: the op was built. */
static void rg_build(LoomGraph *g, const Rg *r, LoomNode *v, const LoomNode *subst, bool *ok) {
  for (int k = 0; k < r->nops; k++) {
    LoomOp op = r->ops[k];
    LoomNode a = v[r->src[k][0]], b = v[r->src[k][1]];
    LoomStatus st = rg_unary(op) ? loom_unary(g, op, a, &v[3 + k]) : loom_binary(g, op, a, b, &v[3 + k]);
    ok[k] = st == LOOM_OK;
    if (!ok[k]) v[3 + k] = a;
    else if (subst && subst[k] >= 0) v[3 + k] = subst[k];
  }
}

/* The array holding operand s (< 3: input s; else op s - 3, an aliased op followed to what it stands
 * for) as the GPU computed it. */
static const LoomArray *rg_operand(const Rg *r, const bool *ok, const int *idx, int nout, const LoomArray *back,
                                   const LoomArray *in, int s) {
  while (s >= 3 && !ok[s - 3]) s = r->src[s - 3][0];
  if (s < 3) return &in[s];
  for (int j = 0; j < nout; j++)
    if (idx[j] == s - 3) return &back[j];
  return NULL;
}

/* One random graph: GPU results of every op, the transcendental ones against libm, the rest against a
 * host replay fed with the GPU's transcendental results. Returns the number of differing values. */
static int rg_check(uint64_t seed, const Rg *r, const LoomArray *in) {
  LoomGraph *gg = NULL, *gh = NULL;
  LoomArray dev[3], gres[8], back[8], hres[8];
  LoomNode v[11], outs[8], subst[8], houts[8];
  bool ok[8], okh[8], transc[8];
  int nout = 0, nh = 0, bad = 0, idx[8], hidx[8];
  memset(gres, 0, sizeof gres);
  memset(back, 0, sizeof back);
  memset(hres, 0, sizeof hres);
  for (int i = 0; i < 3; i++) dev[i] = to_device(&in[i]);
  bool fine = CHECK_OK(loom_graph_create(tc_ctx, &gg));
  for (int i = 0; fine && i < 3; i++) fine = CHECK_OK(loom_input(gg, &dev[i], &v[i]));
  if (fine) {
    rg_build(gg, r, v, NULL, ok);
    for (int k = 0; k < r->nops; k++)
      if (ok[k]) idx[nout] = k, outs[nout++] = v[3 + k];
    fine = nout == 0 || CHECK_OK(loom_eval(gg, nout, outs, gres));
  }
  for (int j = 0; fine && j < nout; j++) {
    back[j] = to_host(&gres[j]);
    transc[j] = rg_transcendental(r->ops[idx[j]], back[j].dtype);
  }
  /* the replay: transcendental ops are inputs holding the GPU's results; the others are computed */
  if (fine && nout) {
    fine = CHECK_OK(loom_graph_create(tc_ctx, &gh));
    for (int i = 0; fine && i < 3; i++) fine = CHECK_OK(loom_input(gh, &in[i], &v[i]));
    for (int k = 0; k < 8; k++) subst[k] = -1;
    for (int j = 0; fine && j < nout; j++)
      if (transc[j]) fine = CHECK_OK(loom_input(gh, &back[j], &subst[idx[j]]));
    if (fine) {
      rg_build(gh, r, v, subst, okh);
      CHECK(!memcmp(ok, okh, sizeof(bool) * (size_t)r->nops), "graph seed %llu: the host refuses other ops",
            (unsigned long long)seed);
      for (int j = 0; j < nout; j++)
        if (!transc[j]) hidx[nh] = j, houts[nh++] = v[3 + idx[j]];
      fine = nh == 0 || CHECK_OK(loom_eval(gh, nh, houts, hres));
    }
  }
  for (int j = 0, h = 0; fine && j < nout; j++) {
    int k = idx[j];
    LoomOp op = r->ops[k];
    const LoomArray *g = &back[j], *hv = NULL, *a = NULL, *b = NULL;
    if (transc[j]) {
      a = rg_operand(r, ok, idx, nout, back, in, r->src[k][0]);
      b = rg_unary(op) ? NULL : rg_operand(r, ok, idx, nout, back, in, r->src[k][1]);
    } else {
      hv = &hres[h];
      if (!CHECK(hidx[h++] == j, "replay order")) break;
    }
    int64_t n = tc_numel(g->ndim, g->shape);
    for (int64_t i = 0; i < n; i++) {
      double got = tc_get_f(g, i), want;
      bool same;
      if (transc[j]) { /* libm on the values the GPU's op read, as the op's dtype */
        double x = tc_round_to(g->dtype, tc_get_f(a, i)), y = b ? tc_round_to(g->dtype, tc_get_f(b, i)) : 0;
        want = tc_round_to(g->dtype, rg_libm(op, x, y));
        if (op == LOOM_OP_COPYSIGN) same = isnan(y) ? fabs(got) == want || (isnan(got) && isnan(want))
                                                    : tc_close_ulp(g->dtype, got, want, 0);
        else same = tc_close_ulp(g->dtype, got, want, TRANSC_ULPS);
      } else if (tc_is_float(g->dtype)) {
        want = tc_get_f(hv, i);
        same = tc_close_ulp(g->dtype, got, want, 0);
      } else {
        want = tc_get_f(hv, i);
        same = tc_get_i(g, i) == tc_get_i(hv, i);
      }
      if (!same && bad++ < 3)
        fprintf(stderr, "graph seed %llu op %d %s -> %s [%lld]: gpu %.17g, %s %.17g\n", (unsigned long long)seed, k,
                loom_op_name(op), loom_dtype_name(g->dtype), (long long)i, got, transc[j] ? "libm" : "host replay",
                want);
    }
  }
  for (int j = 0; j < 8; j++) {
    if (back[j].data) loom_array_free(tc_ctx, &back[j]);
    if (gres[j].data) loom_array_free(tc_ctx, &gres[j]);
    if (hres[j].data) loom_array_free(tc_ctx, &hres[j]);
  }
  for (int i = 0; i < 3; i++) loom_array_free(tc_ctx, &dev[i]);
  if (gg) loom_graph_destroy(gg);
  if (gh) loom_graph_destroy(gh);
  return fine ? bad : 1;
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
    }
    uint64_t seed = seed0 + (uint64_t)gi;
    if (rg_check(seed, &r, in)) {
      mism++;
      fprintf(stderr, "graph seed %llu: %d ops:", (unsigned long long)seed, r.nops);
      for (int k = 0; k < r.nops; k++) fprintf(stderr, " %s(%d,%d)", loom_op_name(r.ops[k]), r.src[k][0], r.src[k][1]);
      fprintf(stderr, " inputs %s %s %s\n", loom_dtype_name(in[0].dtype), loom_dtype_name(in[1].dtype),
              loom_dtype_name(in[2].dtype));
    }
    for (int i = 0; i < 3; i++) tc_free(&in[i]);
  }
  CHECK(mism == 0, "random graphs: %ld of %ld differ between the GPU and the host replay / libm (seeds %llu..)", mism,
        n, (unsigned long long)seed0);
  printf("test_gpu_diff: %ld random graphs compared\n", n);
}

int main(void) {
  if (!tc_init()) return 1;
  const char *self = getenv("LOOM_GPU_DIFF_DEVICE");
  if (self && !strcmp(self, "host")) {
    dev_kind = LOOM_DEVICE_HOST;
    printf("test_gpu_diff: LOOM_GPU_DIFF_DEVICE=host: the host stands in for the GPU\n");
  } else if (loom_device_count(tc_ctx, LOOM_DEVICE_CUDA, &ndev) != LOOM_OK || ndev == 0) {
    printf("test_gpu_diff: skipped (no CUDA driver or device)\n");
    loom_context_destroy(tc_ctx);
    return 77;
  }
  fixed_cases();
  random_graphs();
  return tc_finish();
}
