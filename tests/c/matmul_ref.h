/* matmul_ref.h: what test_matmul.c and test_matmul_fuse.c share: random fills, transposed layouts, and
 * NumPy's matmul computed here in float64 (exact 128-bit integers for integer dtypes), with the sum of
 * |a_ik b_kj| per element as the scale that rounding errors are measured against. */
#ifndef LOOM_TEST_MATMUL_REF_H
#define LOOM_TEST_MATMUL_REF_H

#include "tests/c/test_common.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
/* The dtypes a BLAS multiplies (test_common.h's tc_is_float leaves bfloat16 out). */
static inline bool mr_is_float(LoomDType t) { return tc_is_float(t) || t == LOOM_BFLOAT16; }
static double urand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / (double)(1ull << 52) - 1.0;
}

static void fill(LoomArray *a, bool ints) {
  int64_t n = tc_numel(a->ndim, a->shape);
  for (int64_t i = 0; i < n; i++) {
    if (ints || !mr_is_float(a->dtype)) tc_set_i(a, i, (I128)(urand() * 200));
    else tc_set_f(a, i, urand());
  }
}

/* An array of `shape` whose memory order is `order` (order[0] the slowest axis): transposed layouts. */
__attribute__((unused)) static LoomArray new_ordered(LoomDType t, int nd, const int64_t *shape, const int *order) {
  LoomArray a = tc_new(t, nd, shape);
  int64_t s = 1;
  for (int i = nd - 1; i >= 0; i--) {
    a.strides[order[i]] = s;
    s *= shape[order[i]] > 0 ? shape[order[i]] : 1;
  }
  return a;
}

/* NumPy's matmul in float64 (exact integers for integer dtypes) into want (shape wnd, wshape), and
 * the sum of |a_ik b_kj| per element into mag (the scale of rounding errors). */
typedef struct Ref {
  int nd;
  int64_t shape[LOOM_MAX_RANK];
  double *val, *mag;
  I128 *ival;
} Ref;

static Ref reference(const LoomArray *a, const LoomArray *b, LoomDType rt) {
  Ref r = {0};
  int64_t as[LOOM_MAX_RANK], bs[LOOM_MAX_RANK];
  int an = a->ndim, bn = b->ndim;
  memcpy(as, a->shape, sizeof as);
  memcpy(bs, b->shape, sizeof bs);
  if (an == 1) as[1] = as[0], as[0] = 1, an = 2;
  if (bn == 1) bs[1] = 1, bn = 2;
  int nb = (an > bn ? an : bn) - 2;
  int64_t m = as[an - 2], k = as[an - 1], n = bs[bn - 1], batch[LOOM_MAX_RANK];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (an - 2)), ib = i - (nb - (bn - 2));
    int64_t da = ia >= 0 ? as[ia] : 1, db = ib >= 0 ? bs[ib] : 1;
    batch[i] = da == 1 ? db : da;
    r.shape[r.nd++] = batch[i];
  }
  if (a->ndim > 1) r.shape[r.nd++] = m;
  if (b->ndim > 1) r.shape[r.nd++] = n;
  int64_t nbatch = tc_numel(nb, batch), total = nbatch * m * n;
  r.val = calloc((size_t)(total > 0 ? total : 1), sizeof *r.val);
  r.mag = calloc((size_t)(total > 0 ? total : 1), sizeof *r.mag);
  r.ival = calloc((size_t)(total > 0 ? total : 1), sizeof *r.ival);
  for (int64_t bi = 0; bi < nbatch; bi++) {
    int64_t ia = 0, ib = 0, rem = bi, sa = 1, sb = 1; /* flat batch offsets into a and b (broadcast) */
    for (int i = nb - 1; i >= 0; i--) {
      int64_t idx = rem % batch[i];
      rem /= batch[i];
      int xa = i - (nb - (an - 2)), xb = i - (nb - (bn - 2));
      if (xa >= 0) {
        ia += (as[xa] == 1 ? 0 : idx) * sa;
        sa *= as[xa];
      }
      if (xb >= 0) {
        ib += (bs[xb] == 1 ? 0 : idx) * sb;
        sb *= bs[xb];
      }
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double v = 0, g = 0;
        U128 iv = 0; /* integer products wrap: only the low bits the result dtype keeps matter */
        for (int64_t q = 0; q < k; q++) {
          int64_t pa = (ia * m + i) * k + q, pb = (ib * k + q) * n + j;
          double x = tc_get_f(a, pa), y = tc_get_f(b, pb);
          v += x * y;
          g += fabs(x * y);
          if (rt == LOOM_BOOL) iv |= (tc_get_i(a, pa) != 0) & (tc_get_i(b, pb) != 0);
          else iv += (U128)tc_get_i(a, pa) * (U128)tc_get_i(b, pb);
        }
        int64_t o = (bi * m + i) * n + j;
        r.val[o] = v, r.mag[o] = g, r.ival[o] = (I128)iv;
      }
  }
  return r;
}

static double tol_of(LoomDType t) {
  return t == LOOM_BFLOAT16 ? 1e-2 : t == LOOM_FLOAT16 ? 2e-3 : t == LOOM_FLOAT32 ? 2e-6 : 1e-14;
}

/* Checks out against the reference (rounding to the result dtype allowed). */
__attribute__((unused)) static void compare(const char *what, const LoomArray *out, const Ref *r, LoomDType rt) {
  CHECK(out->ndim == r->nd && memcmp(out->shape, r->shape, sizeof(int64_t) * (size_t)r->nd) == 0,
        "%s: result rank %d", what, out->ndim);
  CHECK(out->dtype == rt, "%s: dtype %s, want %s", what, loom_dtype_name(out->dtype), loom_dtype_name(rt));
  int64_t n = tc_numel(out->ndim, out->shape), bad = 0;
  for (int64_t i = 0; i < n && bad < 3; i++) {
    bool ok;
    if (mr_is_float(rt)) {
      double got = tc_get_f(out, i), want = r->val[i];
      ok = fabs(got - want) <= tol_of(rt) * (r->mag[i] + fabs(want)) + 1e-300;
    } else {
      ok = tc_get_i(out, i) == tc_wrap(rt, (U128)r->ival[i]);
    }
    if (!ok) bad++;
    CHECK(ok, "%s: element %lld is %.17g, want %.17g", what, (long long)i, tc_get_f(out, i), r->val[i]);
  }
}

static void free_ref(Ref *r) {
  free(r->val);
  free(r->mag);
  free(r->ival);
}

#endif /* LOOM_TEST_MATMUL_REF_H */
