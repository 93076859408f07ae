/* SPDX-License-Identifier: Apache-2.0 */
/* test_gpu_complex.c: complex64, complex128 and bfloat16 on the CUDA backend against the host backend
 * (the same graphs over the same inputs), and the PTX of their kernels.
 *
 * --ptx (ctest test_gpu_complex_ptx, no GPU needed): every complex op and reduction, the cached ROW
 * entries and the bfloat16 casts compile to PTX for sm_90 (loom_dump, needs libdevice; skipped
 * without it), and when CUDA's ptxas is found ($CUDA_HOME/bin, /usr/local/cuda/bin) each kernel's PTX
 * is assembled by it. Without --ptx: the device part; without a GPU it exits 77 (ctest: skipped).
 * With a GPU: every complex op on a grid of special values (0, -0, +-1, tiny, huge, +-inf, NaN in both
 * parts) and on random values, the casts between complex, bfloat16 and the real dtypes, and the
 * reductions on each GPU strategy (ROW with the block reduction over complex128's two 64-bit parts,
 * COL, split PART + FINISH for a long full reduction, the cached ROW entry of a two-phase row
 * normalization, the complex64 16-byte vector entries at sizes with and without a scalar tail):
 * NaN, infinities and zeros must agree exactly; finite values within a few ulp relative to |value|
 * (the GPU's math library differs from the host's), sums within the usual reordering error;
 * integer and bool results (comparisons, argmin/argmax, casts to ints) exactly; bfloat16 bit for bit
 * for casts and exact ops.
 */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loom/loom.h"

static long passed, failed;
#define CHECK(c, ...)                                                  \
  do {                                                                 \
    if (c) passed++;                                                   \
    else {                                                             \
      failed++;                                                        \
      if (failed < 60) {                                               \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #c);   \
        fprintf(stderr, __VA_ARGS__);                                  \
        fprintf(stderr, "\n");                                         \
      }                                                                \
    }                                                                  \
  } while (0)

static LoomContext *ctx;

static const double parts[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-300, 1e300, INFINITY, -INFINITY, NAN, 3.0, 710.0, -710.0};
#define NPARTS ((int)(sizeof parts / sizeof parts[0]))

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static int64_t numel(const LoomArray *a) {
  int64_t n = 1;
  for (int i = 0; i < a->ndim; i++) n *= a->shape[i];
  return n;
}

static LoomArray host_new(LoomDType t, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
  a.data = calloc((size_t)(numel(&a) > 0 ? numel(&a) : 1), loom_dtype_size(t));
  return a;
}

static void set_c(LoomArray *a, int64_t i, double re, double im) {
  char *p = (char *)a->data + i * (int64_t)loom_dtype_size(a->dtype);
  if (a->dtype == LOOM_COMPLEX64) ((float *)p)[0] = (float)re, ((float *)p)[1] = (float)im;
  else if (a->dtype == LOOM_COMPLEX128) ((double *)p)[0] = re, ((double *)p)[1] = im;
  else if (a->dtype == LOOM_FLOAT32) *(float *)p = (float)re;
  else if (a->dtype == LOOM_FLOAT64) *(double *)p = re;
  else if (a->dtype == LOOM_BFLOAT16) { /* truncation is fine for inputs */
    float f = (float)re;
    uint32_t w;
    memcpy(&w, &f, 4);
    *(uint16_t *)p = (uint16_t)(w >> 16);
  }
}

/* Element i as (re, im) in double (real dtypes: im = 0; ints and bool as their value). */
static void get_c(const LoomArray *a, int64_t i, double *re, double *im) {
  const char *p = (const char *)a->data + i * (int64_t)loom_dtype_size(a->dtype);
  *im = 0;
  switch (a->dtype) {
  case LOOM_COMPLEX64: *re = ((const float *)p)[0], *im = ((const float *)p)[1]; break;
  case LOOM_COMPLEX128: *re = ((const double *)p)[0], *im = ((const double *)p)[1]; break;
  case LOOM_FLOAT32: *re = *(const float *)p; break;
  case LOOM_FLOAT64: *re = *(const double *)p; break;
  case LOOM_BFLOAT16: {
    uint32_t w = (uint32_t)*(const uint16_t *)p << 16;
    float f;
    memcpy(&f, &w, 4);
    *re = f;
    break;
  }
  case LOOM_FLOAT16: { _Float16 h; memcpy(&h, p, 2); *re = (double)h; break; }
  case LOOM_BOOL: *re = *(const uint8_t *)p; break;
  case LOOM_INT8: *re = *(const int8_t *)p; break;
  case LOOM_INT32: *re = *(const int32_t *)p; break;
  case LOOM_INT64: *re = (double)*(const int64_t *)p; break;
  default: *re = NAN; break;
  }
}

/* Host and GPU values agree: NaN, inf and zero exactly; finite within rtol of the magnitude. */
/* Set while comparing pow: where exp(b log a) overflows, the signs of its infinite parts are those of
 * cos / sin of an angle like 1e300 * log|a|, whose rounding (fma contraction or not) decides them: any
 * sign is an honest answer there, so only the infinities themselves must agree. */
static bool overflow_sign_free;

/* pow(a, b) = exp(b log a) has the angle th = Im(b log a). Once |th| is so large that one ulp of it
 * exceeds a radian (|th| > 2^53 in float64, where complex64's pow computes too), no rounding of log a
 * determines the phase: host and GPU may both be right with any phase, and only the magnitude
 * exp(Re(b log a)) is determined. True for element i of (a, b) when that holds. */
static bool pow_phase_free(const LoomArray *ab, int64_t i) {
  double ar, ai, br, bi;
  get_c(&ab[0], i, &ar, &ai);
  get_c(&ab[1], i, &br, &bi);
  double complex l = clog(ar + ai * I);
  double th = br * cimag(l) + bi * creal(l);
  return !isfinite(th) || fabs(th) > 0x1p53;
}

static bool agree(double hr, double hi, double gr, double gi, double rtol) {
  double h[2] = {hr, hi}, g[2] = {gr, gi};
  if (overflow_sign_free && (isinf(hr) || isinf(hi)))
    return isinf(hr) == isinf(gr) && isinf(hi) == isinf(gi) && isnan(hr) == isnan(gr) && isnan(hi) == isnan(gi);
  for (int k = 0; k < 2; k++) {
    if (isnan(h[k]) != isnan(g[k])) return false;
    if (isinf(h[k]) || isinf(g[k])) {
      if (h[k] != g[k]) return false;
    } else if ((h[k] == 0) != (g[k] == 0) && fabs(h[k] - g[k]) > 1e-300) {
      return false;
    }
  }
  double mag = hypot(isfinite(hr) ? hr : 0, isfinite(hi) ? hi : 0);
  double d = hypot(isfinite(hr) && isfinite(gr) ? hr - gr : 0, isfinite(hi) && isfinite(gi) ? hi - gi : 0);
  return d <= rtol * mag + 1e-300;
}

static LoomArray to_device(const LoomArray *h) {
  LoomArray d = *h;
  d.data = NULL;
  d.device = LOOM_DEVICE_CUDA;
  d.device_index = 0;
  if (loom_array_alloc(ctx, &d) != LOOM_OK) fprintf(stderr, "alloc: %s\n", loom_last_error(ctx));
  if (loom_array_copy(ctx, &d, h) != LOOM_OK) fprintf(stderr, "copy: %s\n", loom_last_error(ctx));
  return d;
}

typedef LoomStatus (*Build)(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out);

/* build over the host inputs and over device copies; compares (see agree). */
static void compare(const char *what, int nin, LoomArray *hin, Build build, void *arg, double rtol) {
  LoomGraph *gh = NULL, *gd = NULL;
  loom_graph_create(ctx, &gh);
  loom_graph_create(ctx, &gd);
  LoomNode ih[4], id[4], oh, od;
  LoomArray din[4];
  for (int i = 0; i < nin; i++) {
    loom_input(gh, &hin[i], &ih[i]);
    din[i] = to_device(&hin[i]);
    loom_input(gd, &din[i], &id[i]);
  }
  if (build(gh, ih, arg, &oh) == LOOM_OK) {
    CHECK(build(gd, id, arg, &od) == LOOM_OK, "%s", what);
    LoomArray rh, rd;
    memset(&rh, 0, sizeof rh);
    memset(&rd, 0, sizeof rd);
    CHECK(loom_eval(gh, 1, &oh, &rh) == LOOM_OK, "%s host: %s", what, loom_last_error(ctx));
    LoomStatus st = loom_eval(gd, 1, &od, &rd);
    CHECK(st == LOOM_OK, "%s gpu: %s", what, loom_last_error(ctx));
    if (st == LOOM_OK && rh.data) {
      LoomArray back = rd;
      back.device = LOOM_DEVICE_HOST;
      int64_t n = numel(&rd);
      back.data = malloc((size_t)(n > 0 ? n : 1) * loom_dtype_size(rd.dtype));
      CHECK(loom_array_copy(ctx, &back, &rd) == LOOM_OK, "%s copy back: %s", what, loom_last_error(ctx));
      int bad = 0;
      for (int64_t i = 0; i < n; i++) {
        double hr, hi, gr, gi;
        get_c(&rh, i, &hr, &hi);
        get_c(&back, i, &gr, &gi);
        bool ok = agree(hr, hi, gr, gi, rtol);
        if (!ok && overflow_sign_free && nin == 2 && pow_phase_free(hin, i)) /* the magnitudes agree */
          ok = agree(hypot(hr, hi), 0, hypot(gr, gi), 0, rtol);
        if (!ok && bad++ < 3)
          fprintf(stderr, "  %s [%lld]: host %.17g%+.17gj gpu %.17g%+.17gj\n", what, (long long)i, hr, hi, gr, gi);
      }
      CHECK(bad == 0, "%s: %d of %lld values differ", what, bad, (long long)n);
      free(back.data);
      loom_array_free(ctx, &rd);
    }
    loom_array_free(ctx, &rh);
  }
  for (int i = 0; i < nin; i++) loom_array_free(ctx, &din[i]);
  loom_graph_destroy(gh);
  loom_graph_destroy(gd);
}

static LoomStatus b_unary(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  return loom_unary(g, (LoomOp)(intptr_t)arg, in[0], out);
}
static LoomStatus b_binary(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  return loom_binary(g, (LoomOp)(intptr_t)arg, in[0], in[1], out);
}
static LoomStatus b_cast(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  return loom_cast(g, in[0], (LoomDType)(intptr_t)arg, out);
}
typedef struct RedArg { LoomReduceOp op; int naxes; int32_t axes[2]; } RedArg;
static LoomStatus b_reduce(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  RedArg *r = arg;
  return loom_reduce(g, r->op, in[0], r->naxes, r->naxes ? r->axes : NULL, 0, out);
}
/* x - mean(x, axis=-1) divided by max|x|: two reductions over each row (the cached ROW entry) */
static LoomStatus b_rownorm(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  int32_t ax = -1;
  LoomNode m, d, a, mx;
  LoomStatus st = loom_reduce(g, LOOM_REDUCE_MEAN, in[0], 1, &ax, 1, &m);
  if (!st) st = loom_binary(g, LOOM_OP_SUB, in[0], m, &d);
  if (!st) st = loom_unary(g, LOOM_OP_ABS, in[0], &a);
  if (!st) st = loom_reduce(g, LOOM_REDUCE_MAX, a, 1, &ax, 1, &mx);
  if (!st) st = loom_binary(g, LOOM_OP_TRUEDIV, d, mx, out);
  return st;
}

/* x - mean(x, axis=-1): one input read twice per row (the cached ROW entry, and for complex64 its
 * 16-byte vector form) */
static LoomStatus b_center(LoomGraph *g, const LoomNode *in, void *arg, LoomNode *out) {
  int32_t ax = -1;
  LoomNode m;
  LoomStatus st = loom_reduce(g, LOOM_REDUCE_MEAN, in[0], 1, &ax, 1, &m);
  if (!st) st = loom_binary(g, LOOM_OP_SUB, in[0], m, out);
  return st;
}

static const LoomOp unary_ops[] = {
    LOOM_OP_NEG, LOOM_OP_CONJ, LOOM_OP_ABS, LOOM_OP_REAL, LOOM_OP_IMAG, LOOM_OP_SIGN, LOOM_OP_EXP, LOOM_OP_EXP2,
    LOOM_OP_EXPM1, LOOM_OP_LOG, LOOM_OP_LOG2, LOOM_OP_LOG10, LOOM_OP_LOG1P, LOOM_OP_SQRT, LOOM_OP_RSQRT, LOOM_OP_SIN,
    LOOM_OP_COS, LOOM_OP_TAN, LOOM_OP_SINH, LOOM_OP_COSH, LOOM_OP_TANH, LOOM_OP_ASIN, LOOM_OP_ACOS, LOOM_OP_ATAN,
    LOOM_OP_ASINH, LOOM_OP_ACOSH, LOOM_OP_ATANH, LOOM_OP_RINT, LOOM_OP_ISNAN, LOOM_OP_ISINF, LOOM_OP_ISFINITE,
    LOOM_OP_LOGICAL_NOT};
static const LoomOp binary_ops[] = {
    LOOM_OP_ADD, LOOM_OP_SUB, LOOM_OP_MUL, LOOM_OP_TRUEDIV, LOOM_OP_POW, LOOM_OP_MAXIMUM, LOOM_OP_MINIMUM, LOOM_OP_FMAX,
    LOOM_OP_FMIN, LOOM_OP_EQ, LOOM_OP_NE, LOOM_OP_LT, LOOM_OP_LE, LOOM_OP_GT, LOOM_OP_GE, LOOM_OP_LOGICAL_AND};

static void test_ops(LoomDType t) {
  double rtol = t == LOOM_COMPLEX64 ? 8 * 1.2e-7 : 16 * 2.2e-16;
  /* the special-values grid, and as many random values of moderate size */
  int64_t ng = NPARTS * NPARTS, n = 2 * ng;
  LoomArray x = host_new(t, 1, &n);
  for (int i = 0; i < NPARTS; i++)
    for (int j = 0; j < NPARTS; j++) set_c(&x, i * NPARTS + j, parts[i], parts[j]);
  for (int64_t k = ng; k < n; k++) set_c(&x, k, (urand() - 0.5) * 20, (urand() - 0.5) * 20);
  char what[96];
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++) {
    snprintf(what, sizeof what, "%s(%s)", loom_op_name(unary_ops[i]), loom_dtype_name(t));
    compare(what, 1, &x, b_unary, (void *)(intptr_t)unary_ops[i], rtol);
  }
  /* binary: the grid against a rotation of itself, and random pairs */
  LoomArray ab[2] = {x, host_new(t, 1, &n)};
  for (int64_t k = 0; k < n; k++) {
    double re, im;
    get_c(&x, (k * 37 + 11) % n, &re, &im);
    set_c(&ab[1], k, re, im);
  }
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++) {
    snprintf(what, sizeof what, "%s(%s, %s)", loom_op_name(binary_ops[i]), loom_dtype_name(t), loom_dtype_name(t));
    /* power of special values: the general path exp(b log a) amplifies the math library's last bits */
    overflow_sign_free = binary_ops[i] == LOOM_OP_POW;
    compare(what, 2, ab, b_binary, (void *)(intptr_t)binary_ops[i], binary_ops[i] == LOOM_OP_POW ? rtol * 1e3 : rtol);
    overflow_sign_free = false;
  }
  /* casts to and from the other dtypes */
  const LoomDType others[] = {LOOM_BOOL, LOOM_INT32, LOOM_INT64, LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64, LOOM_BFLOAT16,
                              LOOM_COMPLEX64, LOOM_COMPLEX128};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
    snprintf(what, sizeof what, "cast(%s -> %s)", loom_dtype_name(t), loom_dtype_name(others[i]));
    compare(what, 1, &x, b_cast, (void *)(intptr_t)others[i], 0);
  }
  free(ab[1].data);
  free(x.data);
}

static void test_reductions(LoomDType t) {
  double rtol = t == LOOM_COMPLEX64 ? 2e-5 : 1e-12;
  struct { int ndim; int64_t shape[2]; } shapes[] = {{2, {64, 1000}}, {2, {1000, 64}}, {1, {1 << 20}}, {2, {3, 7}}};
  const LoomReduceOp ops[] = {LOOM_REDUCE_SUM, LOOM_REDUCE_MEAN, LOOM_REDUCE_PROD, LOOM_REDUCE_MAX, LOOM_REDUCE_MIN,
                              LOOM_REDUCE_ARGMAX, LOOM_REDUCE_ARGMIN, LOOM_REDUCE_ANY, LOOM_REDUCE_ALL};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    LoomArray x = host_new(t, shapes[s].ndim, shapes[s].shape);
    int64_t n = numel(&x);
    for (int64_t k = 0; k < n; k++) {
      double m = 0.9 + 0.2 * urand(), ph = (urand() - 0.5) * 6.283; /* |x| ~ 1: products stay finite */
      set_c(&x, k, m * cos(ph), m * sin(ph));
    }
    if (n > 100) set_c(&x, n / 3, NAN, 1.0); /* a NaN in one row / column */
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
      for (int axis = -1; axis < shapes[s].ndim; axis++) {
        RedArg r = {ops[o], axis < 0 ? 0 : 1, {axis, 0}};
        char what[96];
        snprintf(what, sizeof what, "reduce %d of %s %lldx%lld axis %d", (int)ops[o], loom_dtype_name(t),
                 (long long)shapes[s].shape[0], (long long)(shapes[s].ndim > 1 ? shapes[s].shape[1] : 1), axis);
        double tol = ops[o] == LOOM_REDUCE_PROD ? rtol * 50 : rtol;
        compare(what, 1, &x, b_reduce, &r, tol);
      }
    if (shapes[s].ndim == 2) {
      char what[96];
      snprintf(what, sizeof what, "row normalization (two phases) of %s %lldx%lld", loom_dtype_name(t),
               (long long)shapes[s].shape[0], (long long)shapes[s].shape[1]);
      compare(what, 1, &x, b_rownorm, NULL, rtol * 4);
      snprintf(what, sizeof what, "x - mean(x, -1) of %s %lldx%lld", loom_dtype_name(t), (long long)shapes[s].shape[0],
               (long long)shapes[s].shape[1]);
      compare(what, 1, &x, b_center, NULL, rtol * 4);
    }
    free(x.data);
  }
}

static void test_vectors_and_bfloat16(void) {
  /* complex64 vector entries: sizes that are and are not multiples of the lanes */
  int64_t sizes[] = {4096, 4099, 1};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    LoomArray ab[2] = {host_new(LOOM_COMPLEX64, 1, &sizes[i]), host_new(LOOM_COMPLEX64, 1, &sizes[i])};
    for (int64_t k = 0; k < sizes[i]; k++) {
      set_c(&ab[0], k, urand() - 0.5, urand() - 0.5);
      set_c(&ab[1], k, urand() - 0.5, urand() + 0.5);
    }
    char what[64];
    snprintf(what, sizeof what, "complex64 a * b, %lld points", (long long)sizes[i]);
    compare(what, 2, ab, b_binary, (void *)(intptr_t)LOOM_OP_MUL, 4e-7);
    snprintf(what, sizeof what, "complex64 a / b, %lld points", (long long)sizes[i]);
    compare(what, 2, ab, b_binary, (void *)(intptr_t)LOOM_OP_TRUEDIV, 4e-7);
    free(ab[0].data);
    free(ab[1].data);
  }
  /* bfloat16: casts from float32 / float64 (bit for bit), exact ops, a sum */
  int64_t n = 70000;
  LoomArray f64 = host_new(LOOM_FLOAT64, 1, &n), f32 = host_new(LOOM_FLOAT32, 1, &n), bf = host_new(LOOM_BFLOAT16, 1, &n);
  for (int64_t k = 0; k < n; k++) {
    double v = (urand() - 0.5) * pow(10.0, (urand() - 0.5) * 80);
    if (k % 1000 == 0) v = k % 3000 == 0 ? NAN : k % 2000 == 0 ? INFINITY : 1.0 + 0x1p-8 + 0x1p-30;
    set_c(&f64, k, v, 0);
    set_c(&f32, k, v, 0);
    set_c(&bf, k, v, 0);
  }
  compare("cast(float64 -> bfloat16)", 1, &f64, b_cast, (void *)(intptr_t)LOOM_BFLOAT16, 0);
  compare("cast(float32 -> bfloat16)", 1, &f32, b_cast, (void *)(intptr_t)LOOM_BFLOAT16, 0);
  compare("cast(bfloat16 -> float16)", 1, &bf, b_cast, (void *)(intptr_t)LOOM_FLOAT16, 0);
  LoomArray bb[2] = {bf, bf};
  compare("bfloat16 a * a", 2, bb, b_binary, (void *)(intptr_t)LOOM_OP_MUL, 0);
  compare("bfloat16 exp", 1, &bf, b_unary, (void *)(intptr_t)LOOM_OP_EXP, 0x1p-7);
  RedArg r = {LOOM_REDUCE_MAX, 0, {0, 0}};
  compare("bfloat16 max", 1, &bf, b_reduce, &r, 0);
  free(f64.data);
  free(f32.data);
  free(bf.data);
}

/* ---- PTX (no GPU needed) ------------------------------------------------------------------------------------- */

static const char *find_ptxas(char *buf, size_t cap) {
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = 0; i < 3; i++) {
    if (!homes[i] || !*homes[i]) continue;
    snprintf(buf, cap, "%s/bin/ptxas", homes[i]);
    if (access(buf, X_OK) == 0) return buf;
  }
  return NULL;
}

/* Dumps the PTX of y's kernels; assembles it with ptxas when there is one. */
static void check_ptx(LoomGraph *g, LoomNode y, const char *what, const char *ptxas, int *ndone) {
  char *text = NULL;
  LoomStatus st = loom_dump(g, LOOM_DUMP_PTX, 1, &y, &text);
  if (st == LOOM_ERR_UNSUPPORTED) return; /* no NVPTX backend or no libdevice here */
  CHECK(st == LOOM_OK && text && strstr(text, ".entry"), "%s: PTX: %s", what, loom_last_error(ctx));
  if (st != LOOM_OK) return;
  (*ndone)++;
  /* one module per kernel, each starting with a "// kernel <name>" line: ptxas takes one at a time */
  for (char *k = ptxas ? strstr(text, "// kernel ") : NULL; k;) {
    char *next = strstr(k + 1, "\n// kernel ");
    size_t len = next ? (size_t)(next + 1 - k) : strlen(k);
    char path[] = "/tmp/loom_ptx_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) break;
    FILE *f = fdopen(fd, "w");
    fwrite(k, 1, len, f);
    fclose(f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -O3 %s -o /dev/null 2>&1", ptxas, path);
    int rc = system(cmd);
    CHECK(rc == 0, "%s: ptxas rejects the PTX (%s)", what, path);
    if (rc == 0) unlink(path);
    k = next ? next + 1 : NULL;
  }
  loom_free_string(ctx, text);
}

static void test_ptx(void) {
  char buf[512];
  const char *ptxas = find_ptxas(buf, sizeof buf);
  int ndone = 0;
  const LoomDType ts[] = {LOOM_COMPLEX64, LOOM_COMPLEX128};
  for (int ti = 0; ti < 2; ti++) {
    for (int op = 0; op < LOOM_OP_COUNT; op++) {
      LoomGraph *g = NULL;
      loom_graph_create(ctx, &g);
      LoomArray a = {.data = (void *)64, .dtype = ts[ti], .ndim = 1, .shape = {4096}, .strides = {1}};
      LoomNode an, y, c;
      loom_input(g, &a, &an);
      LoomStatus st = op == LOOM_OP_WHERE ? loom_binary(g, LOOM_OP_LT, an, an, &c) : LOOM_OK;
      if (!st) st = op == LOOM_OP_WHERE ? loom_where(g, c, an, an, &y) : loom_unary(g, (LoomOp)op, an, &y);
      if (st) st = loom_binary(g, (LoomOp)op, an, an, &y);
      if (!st) {
        char what[80];
        snprintf(what, sizeof what, "PTX of %s(%s)", loom_op_name((LoomOp)op), loom_dtype_name(ts[ti]));
        check_ptx(g, y, what, ptxas, &ndone);
      }
      loom_graph_destroy(g);
    }
    for (int r = 0; r < LOOM_REDUCE_COUNT; r++)
      for (int axis = 0; axis < 2; axis++) {
        LoomGraph *g = NULL;
        loom_graph_create(ctx, &g);
        LoomArray a = {.data = (void *)64, .dtype = ts[ti], .ndim = 2, .shape = {100, 1000}, .strides = {1000, 1}};
        LoomNode an, y;
        int32_t ax = axis;
        loom_input(g, &a, &an);
        if (loom_reduce(g, (LoomReduceOp)r, an, 1, &ax, 0, &y) == LOOM_OK) {
          char what[80];
          snprintf(what, sizeof what, "PTX of reduce %d of %s axis %d", r, loom_dtype_name(ts[ti]), axis);
          check_ptx(g, y, what, ptxas, &ndone);
        }
        loom_graph_destroy(g);
      }
  }
  /* the two-phase row normalization: the cached ROW entries (registers, and 16-byte vectors for complex64) */
  for (int ti = 0; ti < 2; ti++) {
    LoomGraph *g = NULL;
    loom_graph_create(ctx, &g);
    LoomArray a = {.data = (void *)64, .dtype = ts[ti], .ndim = 2, .shape = {64, 1024}, .strides = {1024, 1}};
    LoomNode an, y;
    loom_input(g, &a, &an);
    if (b_rownorm(g, &an, NULL, &y) == LOOM_OK) {
      char what[80];
      snprintf(what, sizeof what, "PTX of a row normalization of %s", loom_dtype_name(ts[ti]));
      check_ptx(g, y, what, ptxas, &ndone);
    }
    if (b_center(g, &an, NULL, &y) == LOOM_OK) {
      char what[80];
      snprintf(what, sizeof what, "PTX of x - mean(x, -1) of %s", loom_dtype_name(ts[ti]));
      check_ptx(g, y, what, ptxas, &ndone);
    }
    loom_graph_destroy(g);
  }
  const LoomDType bts[] = {LOOM_FLOAT64, LOOM_INT64, LOOM_FLOAT32};
  for (int ti = 0; ti < 3; ti++) {
    LoomGraph *g = NULL;
    loom_graph_create(ctx, &g);
    LoomArray a = {.data = (void *)64, .dtype = bts[ti], .ndim = 1, .shape = {4096}, .strides = {1}};
    LoomNode an, y;
    loom_input(g, &a, &an);
    if (loom_cast(g, an, LOOM_BFLOAT16, &y) == LOOM_OK) check_ptx(g, y, "PTX of a bfloat16 cast", ptxas, &ndone);
    loom_graph_destroy(g);
  }
  printf("test_gpu_complex: %d kernels' PTX %s\n", ndone,
         ndone == 0 ? "not checked (no NVPTX backend or libdevice)" : ptxas ? "emitted and assembled by ptxas" : "emitted (no ptxas found)");
}

int main(int argc, char **argv) {
  if (loom_context_create(&ctx) != LOOM_OK) return 1;
  if (argc == 2 && !strcmp(argv[1], "--ptx")) {
    test_ptx();
    printf("test_gpu_complex --ptx: %ld passed, %ld failed\n", passed, failed);
    loom_context_destroy(ctx);
    return failed ? 1 : 0;
  }
  int32_t ndev = 0;
  CHECK(loom_device_count(ctx, LOOM_DEVICE_CUDA, &ndev) == LOOM_OK, "count");
  if (ndev == 0) {
    printf("test_gpu_complex: skipped (no CUDA driver or device)\n");
    loom_context_destroy(ctx);
    return failed ? 1 : 77;
  }
  test_ops(LOOM_COMPLEX64);
  test_ops(LOOM_COMPLEX128);
  test_reductions(LOOM_COMPLEX64);
  test_reductions(LOOM_COMPLEX128);
  test_vectors_and_bfloat16();
  printf("test_gpu_complex: %ld passed, %ld failed\n", passed, failed);
  loom_context_destroy(ctx);
  return failed ? 1 : 0;
}
