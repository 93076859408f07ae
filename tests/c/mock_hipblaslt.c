/* mock_hipblaslt.c: a stand-in for libhipblaslt (built as libmock_hipblaslt.so) for test_hip_libs, next to
 * mock_hip.c, whose "device" memory is host memory. It computes what hipBLASLt's documentation says a call
 * computes, in float64 loops over column-major layouts (rows, cols, ld, batch count and stride), for
 * float32, float64, complex64 and complex128 (HIP_C_32F / C_64F, whose scales must then be of the same
 * complex type, as the library's type table has it): D = epilogue(alpha op(A) op(B) + beta C), the epilogue's bias a vector of D's rows
 * (added before ReLU / tanh-GELU). It checks what a real library would refuse (unknown attribute, a
 * layout too small for its ld, mismatched shapes) with HIPBLAS_STATUS_INVALID_VALUE, and counts calls
 * (mock_hipblaslt_calls) and the workspace it was given.
 *
 * Candidate algorithms, for loom's selection by timing: the heuristic returns one algorithm (number 0)
 * unless mock_hipblaslt_set_algos(n, ms) gave n (up to the number asked for), algorithm i taking ms[i]
 * of a virtual clock per call (mock_hipblaslt_clock_ms, which mock_hip.c's events record), or failing
 * with HIPBLAS_STATUS_NOT_SUPPORTED when ms[i] < 0. It counts heuristic queries and the candidates asked
 * for, and keeps the algorithm of the last successful call and the calls per algorithm;
 * mock_hipblaslt_set_salt(x) marks the candidates (a stale stored algorithm no longer matches). */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_libs.h"

#define API __attribute__((visibility("default")))

typedef struct Desc {
  int compute, scale, transa, transb, epilogue;
  const void *bias;
} Desc;
typedef struct Layout {
  int type;
  uint64_t rows, cols;
  int64_t ld, stride;
  int32_t batch;
} Layout;
typedef struct Algo {
  uint8_t data[16];
  size_t max_workspace_bytes;
} Algo;
typedef struct Heuristic {
  Algo algo;
  size_t workspace;
  int state;
  float waves;
  int reserved[4];
} Heuristic;

static int calls, handles;
static size_t last_workspace;
#define MOCK_ALGOS 16
static int nalgo, heuristics, last_want, last_algo, algo_calls[MOCK_ALGOS];
static double algo_ms[MOCK_ALGOS], clock_ms;
API int mock_hipblaslt_calls(void) { return calls; }
API double mock_hipblaslt_clock_ms(void) { return clock_ms; }
API void mock_hipblaslt_set_algos(int n, const double *ms) {
  nalgo = n < 0 ? 0 : n > MOCK_ALGOS ? MOCK_ALGOS : n;
  for (int i = 0; i < nalgo; i++) algo_ms[i] = ms[i];
  memset(algo_calls, 0, sizeof algo_calls);
}
static int salt;
/* A second byte in every algorithm the heuristic returns from now on (another library build's candidates). */
API void mock_hipblaslt_set_salt(int x) { salt = x; }
API int mock_hipblaslt_heuristics(void) { return heuristics; }
API int mock_hipblaslt_last_want(void) { return last_want; }
API int mock_hipblaslt_last_algo(void) { return last_algo; }
API int mock_hipblaslt_algo_calls(int i) { return i >= 0 && i < MOCK_ALGOS ? algo_calls[i] : 0; }
API int mock_hipblaslt_live_handles(void) { return handles; }

API int hipblasLtCreate(void **h) {
  *h = malloc(1);
  handles++;
  return 0;
}
API int hipblasLtDestroy(void *h) {
  free(h);
  handles--;
  return 0;
}
API int hipblasLtMatmulDescCreate(Desc **d, int compute, int scale) {
  *d = calloc(1, sizeof **d);
  (*d)->compute = compute, (*d)->scale = scale, (*d)->transa = (*d)->transb = HL_OP_N;
  (*d)->epilogue = HL_EPILOGUE_DEFAULT;
  return 0;
}
API int hipblasLtMatmulDescDestroy(Desc *d) {
  free(d);
  return 0;
}
API int hipblasLtMatmulDescSetAttribute(Desc *d, int attr, const void *buf, size_t size) {
  switch (attr) {
  case HL_DESC_TRANSA: if (size != 4) return HL_STATUS_INVALID_VALUE; memcpy(&d->transa, buf, 4); return 0;
  case HL_DESC_TRANSB: if (size != 4) return HL_STATUS_INVALID_VALUE; memcpy(&d->transb, buf, 4); return 0;
  case HL_DESC_EPILOGUE: if (size != 4) return HL_STATUS_INVALID_VALUE; memcpy(&d->epilogue, buf, 4); return 0;
  case HL_DESC_BIAS_POINTER: if (size != sizeof(void *)) return HL_STATUS_INVALID_VALUE; memcpy(&d->bias, buf, size); return 0;
  default: return HL_STATUS_INVALID_VALUE;
  }
}
API int hipblasLtMatrixLayoutCreate(Layout **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if ((uint64_t)ld < rows || (type != HL_R_32F && type != HL_R_64F && type != HL_C_32F && type != HL_C_64F))
    return HL_STATUS_INVALID_VALUE;
  *l = calloc(1, sizeof **l);
  **l = (Layout){type, rows, cols, ld, 0, 1};
  return 0;
}
API int hipblasLtMatrixLayoutDestroy(Layout *l) {
  free(l);
  return 0;
}
API int hipblasLtMatrixLayoutSetAttribute(Layout *l, int attr, const void *buf, size_t size) {
  if (attr == HL_LAYOUT_BATCH_COUNT && size == 4) return memcpy(&l->batch, buf, 4), 0;
  if (attr == HL_LAYOUT_STRIDED_BATCH_OFFSET && size == 8) return memcpy(&l->stride, buf, 8), 0;
  return HL_STATUS_INVALID_VALUE;
}
API int hipblasLtMatmulPreferenceCreate(void **p) {
  *p = malloc(8);
  return 0;
}
API int hipblasLtMatmulPreferenceDestroy(void *p) {
  free(p);
  return 0;
}
API int hipblasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t size) {
  (void)p, (void)buf;
  return attr == HL_PREF_MAX_WORKSPACE_BYTES && size == 8 ? 0 : HL_STATUS_INVALID_VALUE;
}
API int hipblasLtMatmulAlgoGetHeuristic(void *h, Desc *d, Layout *a, Layout *b, Layout *c, Layout *dl, void *pref,
                                        int want, Heuristic *out, int *n) {
  (void)h, (void)d, (void)a, (void)b, (void)c, (void)dl, (void)pref;
  if (want < 1) return HL_STATUS_INVALID_VALUE;
  heuristics++, last_want = want;
  int have = nalgo > 0 ? nalgo : 1;
  *n = have < want ? have : want;
  for (int i = 0; i < *n; i++) {
    memset(&out[i], 0, sizeof out[i]);
    out[i].algo.data[0] = (uint8_t)i, out[i].algo.data[1] = (uint8_t)salt;
    out[i].workspace = 4096 * (size_t)(i + 1); /* so that the binding's workspace path runs */
  }
  return 0;
}

static double complex get(const Layout *l, const void *p, int64_t b, uint64_t i, uint64_t j) {
  int64_t at = b * l->stride + (int64_t)i + (int64_t)j * l->ld;
  switch (l->type) {
  case HL_R_32F: return (double)((const float *)p)[at];
  case HL_C_32F: return (double)((const float *)p)[2 * at] + I * (double)((const float *)p)[2 * at + 1];
  case HL_C_64F: return ((const double *)p)[2 * at] + I * ((const double *)p)[2 * at + 1];
  default: return ((const double *)p)[at];
  }
}

/* A scale of type t: a real float / double, or a complex one (re, im). */
static double complex scale_of(int t, const void *p) {
  const float *f = p;
  const double *d = p;
  return t == HL_R_32F ? f[0] : t == HL_R_64F ? d[0] : t == HL_C_32F ? f[0] + I * f[1] : d[0] + I * d[1];
}

API int hipblasLtMatmul(void *h, Desc *d, const void *alpha, const void *A, Layout *la, const void *B, Layout *lb,
                        const void *beta, const void *C, Layout *lc, void *D, Layout *ld, const Algo *algo, void *work,
                        size_t wsize, void *stream) {
  (void)h, (void)stream;
  int ai = algo->data[0];
  if (ai < nalgo && algo_ms[ai] < 0) return HL_STATUS_NOT_SUPPORTED;
  if (wsize && !work) return HL_STATUS_INVALID_VALUE;
  if (wsize < 4096 * (size_t)(ai + 1)) return HL_STATUS_INVALID_VALUE; /* less than the heuristic said */
  calls++;
  last_workspace = wsize;
  if (ai < MOCK_ALGOS) algo_calls[ai]++;
  last_algo = ai;
  clock_ms += ai < nalgo ? algo_ms[ai] : 0.01;
  bool cplx = ld->type == HL_C_32F || ld->type == HL_C_64F;
  if (cplx && (d->scale != ld->type || d->compute != (ld->type == HL_C_32F ? HL_COMPUTE_32F : HL_COMPUTE_64F) ||
               d->epilogue != HL_EPILOGUE_DEFAULT || la->type != ld->type || lb->type != ld->type || lc->type != ld->type))
    return HL_STATUS_NOT_SUPPORTED; /* complex: scales of D's type, its compute type, no epilogue */
  double complex al = scale_of(d->scale, alpha), be = scale_of(d->scale, beta);
  uint64_t m = ld->rows, n = ld->cols, k = d->transa == HL_OP_N ? la->cols : la->rows;
  uint64_t am = d->transa == HL_OP_N ? la->rows : la->cols, bk = d->transb == HL_OP_N ? lb->rows : lb->cols,
           bn = d->transb == HL_OP_N ? lb->cols : lb->rows;
  if (am != m || bk != k || bn != n || lc->rows != m || lc->cols != n) return HL_STATUS_INVALID_VALUE;
  int32_t batch = ld->batch;
  if (la->batch != batch || lb->batch != batch || lc->batch != batch) return HL_STATUS_INVALID_VALUE;
  int epi = d->epilogue;
  if ((epi & HL_EPILOGUE_BIAS) && !d->bias) return HL_STATUS_INVALID_VALUE;
  for (int32_t b = 0; b < batch; b++)
    for (uint64_t i = 0; i < m; i++)
      for (uint64_t j = 0; j < n; j++) {
        double complex s = 0;
        for (uint64_t l = 0; l < k; l++)
          s += (d->transa == HL_OP_N ? get(la, A, b, i, l) : get(la, A, b, l, i)) *
               (d->transb == HL_OP_N ? get(lb, B, b, l, j) : get(lb, B, b, j, l));
        double complex z = al * s + (be != 0 ? be * get(lc, C, b, i, j) : 0);
        int64_t at = b * ld->stride + (int64_t)i + (int64_t)j * ld->ld;
        if (ld->type == HL_C_32F || ld->type == HL_C_64F) {
          if (ld->type == HL_C_32F) ((float *)D)[2 * at] = (float)creal(z), ((float *)D)[2 * at + 1] = (float)cimag(z);
          else ((double *)D)[2 * at] = creal(z), ((double *)D)[2 * at + 1] = cimag(z);
          continue;
        }
        double x = creal(z);
        if (epi & HL_EPILOGUE_BIAS) x += ld->type == HL_R_32F ? (double)((const float *)d->bias)[i] : ((const double *)d->bias)[i];
        int act = epi & ~HL_EPILOGUE_BIAS;
        if (act == HL_EPILOGUE_RELU) x = x > 0 ? x : 0;
        if (act == HL_EPILOGUE_GELU) x = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
        if (ld->type == HL_R_32F) ((float *)D)[at] = (float)x;
        else ((double *)D)[at] = x;
      }
  return 0;
}
