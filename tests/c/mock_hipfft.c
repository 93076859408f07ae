/* mock_hipfft.c: a stand-in for libhipfft (built as libmock_hipfft.so) for test_hip_libs, next to
 * mock_hip.c (host memory as device memory). Plans are basic-layout batches of rank 1-3 transforms
 * (hipfftMakePlanMany64 with NULL embeds); executing one computes the unnormalized DFT by its definition
 * in double precision, one axis at a time (C2C / Z2Z both directions; R2C / D2Z keep n/2 + 1 outputs on
 * the last axis; C2R / Z2D rebuild the Hermitian spectrum and keep the real part). Like rocFFT it may
 * overwrite a C2R input: this mock fills it with NaN afterwards, so a binding that passes the user's
 * array shows it. Counts executions (mock_hipfft_execs) and live plans (mock_hipfft_live_plans). */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hip/hip_libs.h"

#define API __attribute__((visibility("default")))

typedef struct Plan {
  int rank, type;
  long long n[3], batch;
  void *stream;
} Plan;
static int execs, plans;
API int mock_hipfft_execs(void) { return execs; }
API int mock_hipfft_live_plans(void) { return plans; }

API int hipfftCreate(Plan **p) {
  *p = calloc(1, sizeof **p);
  plans++;
  return 0;
}
API int hipfftDestroy(Plan *p) {
  free(p);
  plans--;
  return 0;
}
API int hipfftGetVersion(int *v) { return *v = 10000, 0; }
API int hipfftSetStream(Plan *p, void *s) { return p->stream = s, 0; }
API int hipfftMakePlanMany64(Plan *p, int rank, long long *n, long long *inembed, long long istride, long long idist,
                             long long *onembed, long long ostride, long long odist, int type, long long batch,
                             size_t *work) {
  (void)istride, (void)idist, (void)ostride, (void)odist;
  if (rank < 1 || rank > 3 || inembed || onembed || batch < 1) return 4; /* HIPFFT_INVALID_VALUE */
  p->rank = rank, p->type = type, p->batch = batch;
  for (int i = 0; i < rank; i++) p->n[i] = n[i];
  if (work) *work = 0;
  return 0;
}

/* In-place unnormalized DFT of x (dims n[0..rank), C order) along every axis; sign -1 forward. */
static void dft(double complex *x, const long long *n, int rank, int sign) {
  long long total = 1;
  for (int i = 0; i < rank; i++) total *= n[i];
  for (int ax = 0; ax < rank; ax++) {
    long long len = n[ax], inner = 1;
    for (int i = ax + 1; i < rank; i++) inner *= n[i];
    double complex *tmp = malloc(sizeof *tmp * (size_t)len);
    for (long long base = 0; base < total; base++) {
      if ((base / inner) % len != 0) continue; /* base: the first element of a line along ax */
      for (long long k = 0; k < len; k++) {
        double complex s = 0;
        for (long long j = 0; j < len; j++) s += x[base + j * inner] * cexp(sign * 2 * 3.14159265358979323846 * I * (double)(j * k % len) / (double)len);
        tmp[k] = s;
      }
      for (long long k = 0; k < len; k++) x[base + k * inner] = tmp[k];
    }
    free(tmp);
  }
}

static int exec(Plan *p, void *in, void *out, int dir, int kind /* 0 c2c, 1 r2c, 2 c2r */, int dbl) {
  execs++;
  long long total = 1;
  for (int i = 0; i < p->rank; i++) total *= p->n[i];
  long long last = p->n[p->rank - 1], half = last / 2 + 1, htotal = total / last * half;
  double complex *x = malloc(sizeof *x * (size_t)total);
  for (long long b = 0; b < p->batch; b++) {
    if (kind == 0) {
      for (long long i = 0; i < total; i++)
        x[i] = dbl ? ((double complex *)in)[b * total + i] : (double complex)((float complex *)in)[b * total + i];
    } else if (kind == 1) {
      for (long long i = 0; i < total; i++) x[i] = dbl ? ((double *)in)[b * total + i] : (double)((float *)in)[b * total + i];
    } else { /* the full spectrum from its Hermitian half: X[k] = conj(X[-k]) */
      for (long long i = 0; i < total; i++) {
        long long idx[3] = {0, 0, 0}, r = i, src = 0;
        for (int a = p->rank - 1; a >= 0; a--) idx[a] = r % p->n[a], r /= p->n[a];
        bool conjugate = idx[p->rank - 1] >= half;
        for (int a = 0; a < p->rank; a++) {
          long long v = conjugate ? (p->n[a] - idx[a]) % p->n[a] : idx[a];
          src = src * (a == p->rank - 1 ? half : p->n[a]) + v;
        }
        double complex v = dbl ? ((double complex *)in)[b * htotal + src] : (double complex)((float complex *)in)[b * htotal + src];
        x[i] = conjugate ? conj(v) : v;
      }
    }
    dft(x, p->n, p->rank, kind == 2 ? 1 : dir);
    for (long long i = 0; i < (kind == 1 ? htotal : total); i++) {
      long long src = i;
      if (kind == 1) { /* keep the first half + 1 of the last axis */
        long long row = i / half, col = i % half;
        src = row * last + col;
      }
      if (kind == 2) {
        if (dbl) ((double *)out)[b * total + i] = creal(x[i]);
        else ((float *)out)[b * total + i] = (float)creal(x[i]);
      } else if (dbl) ((double complex *)out)[b * (kind == 1 ? htotal : total) + i] = x[src];
      else ((float complex *)out)[b * (kind == 1 ? htotal : total) + i] = (float complex)x[src];
    }
  }
  if (kind == 2) /* rocFFT may overwrite a C2R input */
    for (long long i = 0; i < p->batch * htotal * 2; i++) {
      if (dbl) ((double *)in)[i] = NAN;
      else ((float *)in)[i] = NAN;
    }
  free(x);
  return 0;
}

API int hipfftExecC2C(Plan *p, void *in, void *out, int dir) { return p->type == HF_C2C ? exec(p, in, out, dir, 0, 0) : 4; }
API int hipfftExecZ2Z(Plan *p, void *in, void *out, int dir) { return p->type == HF_Z2Z ? exec(p, in, out, dir, 0, 1) : 4; }
API int hipfftExecR2C(Plan *p, void *in, void *out) { return p->type == HF_R2C ? exec(p, in, out, -1, 1, 0) : 4; }
API int hipfftExecD2Z(Plan *p, void *in, void *out) { return p->type == HF_D2Z ? exec(p, in, out, -1, 1, 1) : 4; }
API int hipfftExecC2R(Plan *p, void *in, void *out) { return p->type == HF_C2R ? exec(p, in, out, 1, 2, 0) : 4; }
API int hipfftExecZ2D(Plan *p, void *in, void *out) { return p->type == HF_Z2D ? exec(p, in, out, 1, 2, 1) : 4; }
