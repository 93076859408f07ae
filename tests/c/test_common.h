/* SPDX-License-Identifier: Apache-2.0 */
/* test_common.h: helpers shared by the public-API C tests (one translation unit per test program).
 *
 * Approach: each test program creates one LoomContext (tc_init), builds small graphs through the
 * public API only, evaluates them and compares with references computed in C right in the test.
 * CHECK counts passes and failures; tc_finish prints "N passed, N failed" and gives the exit code.
 * Arrays are owned by the test (malloc/free; ASan builds check that nothing leaks). Values are read
 * and written through tc_get_* / tc_set_* by flat row-major index, whatever the strides.
 * Float comparisons are in ulps of the result dtype (float16 included, converted here by code written
 * independently of Loom's), so a test states its tolerance in the dtype it checks.
 */
#ifndef LOOM_TEST_COMMON_H
#define LOOM_TEST_COMMON_H

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

typedef __int128 I128; /* exact integer references: holds every int64 and uint64 value */
typedef unsigned __int128 U128;

static LoomContext *tc_ctx;
static long tc_passed, tc_failed;
static long tc_printed; /* failure lines printed (capped so a broken op does not flood the log) */
#define TC_MAX_PRINTED 400

static inline void tc_fail_msg(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static inline void tc_fail_msg(const char *file, int line, const char *fmt, ...) {
  tc_failed++;
  if (tc_printed++ >= TC_MAX_PRINTED) {
    if (tc_printed == TC_MAX_PRINTED + 1) fprintf(stderr, "(further failures not printed)\n");
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* CHECK(cond, fmt, ...): counts a pass, or a failure with a message. Evaluates to cond. */
#define CHECK(cond, ...) tc_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
static inline bool tc_check(bool ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline bool tc_check(bool ok, const char *file, int line, const char *fmt, ...) {
  if (ok) {
    tc_passed++;
    return true;
  }
  tc_failed++;
  if (tc_printed++ >= TC_MAX_PRINTED) {
    if (tc_printed == TC_MAX_PRINTED + 1) fprintf(stderr, "(further failures not printed)\n");
    return false;
  }
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return false;
}

/* CHECK_OK(expr): expr must return LOOM_OK; prints the status and loom_last_error otherwise. */
#define CHECK_OK(expr) tc_check_status((expr), LOOM_OK, #expr, __FILE__, __LINE__)
/* CHECK_STATUS(expr, status): expr must fail with exactly status. */
#define CHECK_STATUS(expr, want) tc_check_status((expr), (want), #expr, __FILE__, __LINE__)

static inline bool tc_check_status(LoomStatus got, LoomStatus want, const char *what, const char *file,
                            int line) {
  if (got == want) {
    tc_passed++;
    return true;
  }
  tc_fail_msg(file, line, "%s returned %s (want %s): %s", what, loom_status_name(got),
              loom_status_name(want), tc_ctx ? loom_last_error(tc_ctx) : "");
  return false;
}

/* Creates the program's context (all threads). Returns false (after a message) on failure. */
static inline bool tc_init(void) {
  LoomStatus st = loom_context_create(&tc_ctx);
  if (st != LOOM_OK) {
    fprintf(stderr, "loom_context_create failed: %s\n", loom_status_name(st));
    tc_ctx = NULL;
    return false;
  }
  return true;
}

/* Destroys the context, prints the tally; returns the process exit code. */
static inline int tc_finish(void) {
  if (tc_ctx) loom_context_destroy(tc_ctx);
  tc_ctx = NULL;
  printf("%ld passed, %ld failed\n", tc_passed, tc_failed);
  return tc_failed == 0 && tc_passed > 0 ? 0 : 1;
}

/* ---- dtypes ------------------------------------------------------------------------------------ */
static const LoomDType tc_all_dtypes[] = {LOOM_BOOL,   LOOM_INT8,    LOOM_INT16,   LOOM_INT32,
                                          LOOM_INT64,  LOOM_UINT8,   LOOM_UINT16,  LOOM_UINT32,
                                          LOOM_UINT64, LOOM_FLOAT16, LOOM_FLOAT32, LOOM_FLOAT64};
#define TC_NDTYPES 12

static inline bool tc_is_float(LoomDType t) { return t == LOOM_FLOAT16 || t == LOOM_FLOAT32 || t == LOOM_FLOAT64; }
static inline bool tc_is_signed(LoomDType t) { return t >= LOOM_INT8 && t <= LOOM_INT64; }
static inline bool tc_is_unsigned(LoomDType t) { return t >= LOOM_UINT8 && t <= LOOM_UINT64; }
static inline bool tc_is_int(LoomDType t) { return tc_is_signed(t) || tc_is_unsigned(t); }
static inline int tc_bits(LoomDType t) {
  switch (t) {
  case LOOM_BOOL: case LOOM_INT8: case LOOM_UINT8: return 8;
  case LOOM_INT16: case LOOM_UINT16: case LOOM_FLOAT16: return 16;
  case LOOM_INT32: case LOOM_UINT32: case LOOM_FLOAT32: return 32;
  default: return 64;
  }
}
static inline I128 tc_int_min(LoomDType t) {
  return tc_is_signed(t) ? -((I128)1 << (tc_bits(t) - 1)) : 0;
}
static inline I128 tc_int_max(LoomDType t) {
  if (t == LOOM_BOOL) return 1;
  return tc_is_signed(t) ? ((I128)1 << (tc_bits(t) - 1)) - 1 : ((I128)1 << tc_bits(t)) - 1;
}
/* Two's complement wrap of v into integer dtype t (bool: v != 0). */
static inline I128 tc_wrap(LoomDType t, U128 v) {
  if (t == LOOM_BOOL) return v != 0;
  int w = tc_bits(t);
  uint64_t lo = (uint64_t)v;
  if (w < 64) lo &= (UINT64_C(1) << w) - 1;
  if (tc_is_signed(t) && ((lo >> (w - 1)) & 1)) return (I128)lo - ((I128)1 << w);
  return (I128)lo;
}

/* ---- float16, written independently of Loom ---------------------------------------------------- */
static inline double tc_f16_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
  double v;
  if (exp == 31) v = man ? NAN : INFINITY;
  else if (exp == 0) v = ldexp((double)man, -24);
  else v = ldexp((double)(man + 1024), exp - 25);
  return sign ? -v : v;
}
/* Round to nearest even; overflow to inf; NaN stays NaN. */
static inline uint16_t tc_double_to_f16(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) return 0x7e00;
  double a = fabs(x);
  if (isinf(a)) return sign | 0x7c00;
  if (a < ldexp(1.0, -14)) { /* subnormal range: multiples of 2^-24 */
    double q = nearbyint(ldexp(a, 24)); /* exact scaling; one rounding (half to even) */
    return sign | (uint16_t)q;          /* q == 1024 is the smallest normal: still right */
  }
  int e;
  frexp(a, &e);       /* a = f * 2^e, f in [0.5, 1) */
  int E = e - 1;      /* a = 1.m * 2^E */
  double s = nearbyint(ldexp(a, 10 - E)); /* in [1024, 2048] */
  if (s >= 2048) { s = 1024; E++; }
  if (E > 15) return sign | 0x7c00;
  return sign | (uint16_t)((E + 15) << 10) | (uint16_t)((int)s - 1024);
}
static inline double tc_round_f16(double x) { return tc_f16_to_double(tc_double_to_f16(x)); }

/* ---- bfloat16 (1 sign, 8 exponent, 7 mantissa bits), written independently of Loom ------------- */
static inline double tc_bf16_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 7) & 255, man = h & 127;
  double v;
  if (exp == 255) v = man ? NAN : INFINITY;
  else if (exp == 0) v = ldexp((double)man, -133);
  else v = ldexp((double)(man + 128), exp - 134);
  return sign ? -v : v;
}
/* Round to nearest even from the exact value x (a long double holds every int64 and double);
 * overflow to inf; NaN -> sign | 0x7fc0 (ml_dtypes' quiet NaN). */
static inline uint16_t tc_ld_to_bf16(long double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) return sign | 0x7fc0;
  long double a = fabsl(x);
  if (isinf(a)) return sign | 0x7f80;
  if (a < ldexpl(1.0L, -126)) return sign | (uint16_t)nearbyintl(ldexpl(a, 133)); /* multiples of 2^-133 */
  int e;
  frexpl(a, &e);
  int E = e - 1;
  long double s = nearbyintl(ldexpl(a, 7 - E)); /* in [128, 256] */
  if (s >= 256) { s = 128; E++; }
  if (E > 127) return sign | 0x7f80;
  return sign | (uint16_t)((E + 127) << 7) | (uint16_t)((int)s - 128);
}
static inline uint16_t tc_double_to_bf16(double x) { return tc_ld_to_bf16((long double)x); }
static inline double tc_round_bf16(double x) { return tc_bf16_to_double(tc_double_to_bf16(x)); }

/* x rounded to float dtype t (float16/32/64, bfloat16). */
static inline double tc_round_to(LoomDType t, double x) {
  if (t == LOOM_BFLOAT16) return tc_round_bf16(x);
  if (t == LOOM_FLOAT16) return tc_round_f16(x);
  if (t == LOOM_FLOAT32) return (double)(float)x;
  return x;
}

/* Distance in units in the last place of dtype t between two values of t (NaN == NaN; +-0 equal).
 * UINT64_MAX when exactly one is NaN. */
static inline uint64_t tc_ulp_diff(LoomDType t, double a, double b) {
  if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : UINT64_MAX;
  int64_t ia, ib;
  if (t == LOOM_FLOAT64) {
    memcpy(&ia, &a, 8);
    memcpy(&ib, &b, 8);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
  } else if (t == LOOM_FLOAT32) {
    float fa = (float)a, fb = (float)b;
    int32_t ja, jb;
    memcpy(&ja, &fa, 4);
    memcpy(&jb, &fb, 4);
    ia = ja < 0 ? (int64_t)INT32_MIN - ja : ja;
    ib = jb < 0 ? (int64_t)INT32_MIN - jb : jb;
  } else if (t == LOOM_BFLOAT16) {
    uint16_t ha = tc_double_to_bf16(a), hb = tc_double_to_bf16(b);
    ia = (ha & 0x8000) ? -(int64_t)(ha & 0x7fff) : (int64_t)ha;
    ib = (hb & 0x8000) ? -(int64_t)(hb & 0x7fff) : (int64_t)hb;
  } else {
    uint16_t ha = tc_double_to_f16(a), hb = tc_double_to_f16(b);
    ia = (ha & 0x8000) ? -(int64_t)(ha & 0x7fff) : (int64_t)ha;
    ib = (hb & 0x8000) ? -(int64_t)(hb & 0x7fff) : (int64_t)hb;
  }
  I128 d = (I128)ia - (I128)ib;
  if (d < 0) d = -d;
  return d > (I128)UINT64_MAX ? UINT64_MAX : (uint64_t)d;
}
static inline bool tc_close_ulp(LoomDType t, double got, double want, uint64_t ulps) {
  return tc_ulp_diff(t, got, want) <= ulps;
}
/* |got - want| <= rel * |want| + abs_tol (NaN == NaN, inf == inf of the same sign). */
static inline bool tc_close_rel(double got, double want, double rel, double abs_tol) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (isinf(got) || isinf(want)) return got == want;
  return fabs(got - want) <= rel * fabs(want) + abs_tol;
}

/* ---- arrays ----------------------------------------------------------------------------------------- */
static inline int64_t tc_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  return n;
}
/* A C-contiguous array with zeroed malloc'ed data (never NULL, even when empty). */
static inline LoomArray tc_new(LoomDType t, int ndim, const int64_t *shape) {
  LoomArray a;
  memset(&a, 0, sizeof a);
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    a.shape[i] = shape[i];
    a.strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  int64_t n = tc_numel(ndim, shape);
  a.data = calloc((size_t)(n > 0 ? n : 1), loom_dtype_size(t) ? loom_dtype_size(t) : 8);
  a.device = LOOM_DEVICE_HOST;
  return a;
}
static inline LoomArray tc_new1(LoomDType t, int64_t n) { return tc_new(t, 1, &n); }
static inline LoomArray tc_new2(LoomDType t, int64_t r, int64_t c) {
  int64_t s[2] = {r, c};
  return tc_new(t, 2, s);
}
static inline void tc_free(LoomArray *a) {
  free(a->data);
  a->data = NULL;
}
/* Element offset (in elements) of flat row-major index i. */
static inline int64_t tc_offset(const LoomArray *a, int64_t i) {
  int64_t off = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    int64_t n = a->shape[d] > 0 ? a->shape[d] : 1;
    off += (i % n) * a->strides[d];
    i /= n;
  }
  return off;
}
static inline void *tc_ptr(const LoomArray *a, int64_t i) {
  return (char *)a->data + tc_offset(a, i) * (int64_t)loom_dtype_size(a->dtype);
}
static inline double tc_get_f(const LoomArray *a, int64_t i) {
  void *p = tc_ptr(a, i);
  switch (a->dtype) {
  case LOOM_BOOL: return *(uint8_t *)p != 0;
  case LOOM_INT8: return *(int8_t *)p;
  case LOOM_INT16: return *(int16_t *)p;
  case LOOM_INT32: return *(int32_t *)p;
  case LOOM_INT64: return (double)*(int64_t *)p;
  case LOOM_UINT8: return *(uint8_t *)p;
  case LOOM_UINT16: return *(uint16_t *)p;
  case LOOM_UINT32: return *(uint32_t *)p;
  case LOOM_UINT64: return (double)*(uint64_t *)p;
  case LOOM_FLOAT16: return tc_f16_to_double(*(uint16_t *)p);
  case LOOM_FLOAT32: return *(float *)p;
  case LOOM_FLOAT64: return *(double *)p;
  case LOOM_BFLOAT16: return tc_bf16_to_double(*(uint16_t *)p);
  case LOOM_COMPLEX64: return *(float *)p; /* the real part */
  case LOOM_COMPLEX128: return *(double *)p;
  default: return NAN;
  }
}
/* Integer (or bool) element, exact. For float arrays: the value truncated (only if finite). */
static inline I128 tc_get_i(const LoomArray *a, int64_t i) {
  void *p = tc_ptr(a, i);
  switch (a->dtype) {
  case LOOM_BOOL: return *(uint8_t *)p;
  case LOOM_INT8: return *(int8_t *)p;
  case LOOM_INT16: return *(int16_t *)p;
  case LOOM_INT32: return *(int32_t *)p;
  case LOOM_INT64: return *(int64_t *)p;
  case LOOM_UINT8: return *(uint8_t *)p;
  case LOOM_UINT16: return *(uint16_t *)p;
  case LOOM_UINT32: return *(uint32_t *)p;
  case LOOM_UINT64: return *(uint64_t *)p;
  default: {
    double v = tc_get_f(a, i);
    return isfinite(v) && fabs(v) < 1e30 ? (I128)v : 0;
  }
  }
}
/* Stores v (already in range for integer dtypes; float dtypes round; bool: v != 0). */
static inline void tc_set_f(LoomArray *a, int64_t i, double v) {
  void *p = tc_ptr(a, i);
  switch (a->dtype) {
  case LOOM_BOOL: *(uint8_t *)p = v != 0; break;
  case LOOM_INT8: *(int8_t *)p = (int8_t)v; break;
  case LOOM_INT16: *(int16_t *)p = (int16_t)v; break;
  case LOOM_INT32: *(int32_t *)p = (int32_t)v; break;
  case LOOM_INT64: *(int64_t *)p = (int64_t)v; break;
  case LOOM_UINT8: *(uint8_t *)p = (uint8_t)v; break;
  case LOOM_UINT16: *(uint16_t *)p = (uint16_t)v; break;
  case LOOM_UINT32: *(uint32_t *)p = (uint32_t)v; break;
  case LOOM_UINT64: *(uint64_t *)p = (uint64_t)v; break;
  case LOOM_FLOAT16: *(uint16_t *)p = tc_double_to_f16(v); break;
  case LOOM_FLOAT32: *(float *)p = (float)v; break;
  case LOOM_FLOAT64: *(double *)p = v; break;
  case LOOM_BFLOAT16: *(uint16_t *)p = tc_double_to_bf16(v); break;
  case LOOM_COMPLEX64: ((float *)p)[0] = (float)v, ((float *)p)[1] = 0; break;
  case LOOM_COMPLEX128: ((double *)p)[0] = v, ((double *)p)[1] = 0; break;
  default: break;
  }
}
/* Complex elements (any dtype: real ones have imaginary part 0). */
static inline void tc_get_c(const LoomArray *a, int64_t i, double *re, double *im) {
  void *p = tc_ptr(a, i);
  if (a->dtype == LOOM_COMPLEX64) *re = ((float *)p)[0], *im = ((float *)p)[1];
  else if (a->dtype == LOOM_COMPLEX128) *re = ((double *)p)[0], *im = ((double *)p)[1];
  else *re = tc_get_f(a, i), *im = 0;
}
static inline void tc_set_c(LoomArray *a, int64_t i, double re, double im) {
  void *p = tc_ptr(a, i);
  if (a->dtype == LOOM_COMPLEX64) ((float *)p)[0] = (float)re, ((float *)p)[1] = (float)im;
  else if (a->dtype == LOOM_COMPLEX128) ((double *)p)[0] = re, ((double *)p)[1] = im;
}
/* Stores an integer value, wrapped to the dtype (floats: converted with rounding). */
static inline void tc_set_i(LoomArray *a, int64_t i, I128 v) {
  if (tc_is_float(a->dtype) || a->dtype == LOOM_BFLOAT16 || a->dtype == LOOM_COMPLEX64 || a->dtype == LOOM_COMPLEX128) {
    tc_set_f(a, i, (double)v);
    return;
  }
  I128 w = tc_wrap(a->dtype, (U128)v);
  void *p = tc_ptr(a, i);
  switch (a->dtype) {
  case LOOM_BOOL: *(uint8_t *)p = w != 0; break;
  case LOOM_INT8: *(int8_t *)p = (int8_t)w; break;
  case LOOM_INT16: *(int16_t *)p = (int16_t)w; break;
  case LOOM_INT32: *(int32_t *)p = (int32_t)w; break;
  case LOOM_INT64: *(int64_t *)p = (int64_t)w; break;
  case LOOM_UINT8: *(uint8_t *)p = (uint8_t)w; break;
  case LOOM_UINT16: *(uint16_t *)p = (uint16_t)w; break;
  case LOOM_UINT32: *(uint32_t *)p = (uint32_t)w; break;
  case LOOM_UINT64: *(uint64_t *)p = (uint64_t)w; break;
  default: break;
  }
}

/* A deterministic generator (splitmix64), so failures reproduce. */
static inline uint64_t tc_rand_u64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}
static inline double tc_rand_unit(uint64_t *state) { /* [0, 1) */
  return (double)(tc_rand_u64(state) >> 11) * 0x1.0p-53;
}

/* Renders an I128 in decimal into buf (40+ bytes). */
static inline const char *tc_i128_str(I128 v, char *buf) {
  char tmp[48];
  int n = 0;
  bool neg = v < 0;
  U128 u = neg ? (U128)0 - (U128)v : (U128)v;
  do {
    tmp[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  int k = 0;
  if (neg) buf[k++] = '-';
  while (n) buf[k++] = tmp[--n];
  buf[k] = 0;
  return buf;
}

/* Shape as "(2,3)". */
static inline const char *tc_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < ndim && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ",%" PRId64 : "%" PRId64, shape[i]);
  if (k < cap) snprintf(buf + k, cap - k, ndim == 1 ? ",)" : ")");
  return buf;
}

/* Evaluates one node into a newly allocated array; the caller frees it with loom_array_free. */
static inline LoomStatus tc_eval1(LoomGraph *g, LoomNode n, LoomArray *out) {
  memset(out, 0, sizeof *out);
  return loom_eval(g, 1, &n, out);
}

/* Checks a node's dtype and shape (via loom_node_info). */
static inline bool tc_check_info(LoomGraph *g, LoomNode n, LoomDType dtype, int ndim, const int64_t *shape,
                          const char *what) {
  LoomDType t = LOOM_DTYPE_COUNT;
  int32_t nd = -1;
  int64_t sh[LOOM_MAX_RANK];
  if (!CHECK(loom_node_info(g, n, &t, &nd, sh) == LOOM_OK, "%s: loom_node_info failed", what))
    return false;
  bool ok = CHECK(t == dtype, "%s: dtype %s, want %s", what, loom_dtype_name(t) ? loom_dtype_name(t) : "?",
                  loom_dtype_name(dtype));
  if (shape) {
    bool same = nd == ndim;
    for (int i = 0; same && i < ndim; i++) same = sh[i] == shape[i];
    char b1[128], b2[128];
    ok &= CHECK(same, "%s: shape %s, want %s", what, tc_shape_str(nd < 0 ? 0 : nd, sh, b1, sizeof b1),
                tc_shape_str(ndim, shape, b2, sizeof b2));
  }
  return ok;
}

#endif /* LOOM_TEST_COMMON_H */
